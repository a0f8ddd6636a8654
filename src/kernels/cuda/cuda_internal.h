/*
 * cuda_internal.h
 *	  Private to src/kernels/cuda: the per-session device context, device
 *	  values, the device-op table and the launchers of the device kernels
 *	  (*.cu, C linkage).  Compiles as C (gcc, the host side of each operator
 *	  family in ops_*.c) and as C++ (nvcc, the *.cu files).
 *
 * Memory: all device memory of a session comes from its arena (context.c):
 * blocks are cached after use and handed out again by best fit, so runs
 * with repeating shapes allocate nothing; the bytes held (in use + cached)
 * never exceed the session's cuda_memory_limit.  Everything runs on the
 * session's one stream, so a block released after its last reader was
 * enqueued can be reused by the next kernel without synchronizing.
 */
#ifndef OX_CUDA_INTERNAL_H
#define OX_CUDA_INTERNAL_H

#include <cuda_runtime_api.h>
#include <cublas_v2.h>
#include <cudnn.h>
#ifndef __CUDACC__
/* the host C calls cuBLAS and cuDNN through the pointers loaded at first use */
#include "kernels/cuda/cuda_libs.h"
#endif

#ifdef __cplusplus
extern "C"
{
#endif

#include "kernels/cuda/cuda_provider.h"

typedef struct ox_cuda_block
{
	void	   *ptr;
	size_t		cap;
} ox_cuda_block;

struct ox_cuda_ctx
{
	int			device;
	cudaStream_t stream;
	cublasHandle_t cublas;
	cudnnHandle_t cudnn;		/* created on first use */
	bool		fp16;
	size_t		limit;			/* 0 = none */
	size_t		held;			/* bytes from cudaMalloc not yet freed */
	ox_cuda_block *cache;		/* free blocks */
	int			n_cache;
	int			cap_cache;
	void	   *workspace;		/* cuDNN workspace (arena block) */
	size_t		workspace_cap;
	int64_t		upload_bytes;	/* statistics */
};

/* a value inside a partition run */
typedef struct ox_dval
{
	ox_dtype	dtype;
	int			rank;
	int64_t		dims[OX_MAX_RANK];
	void	   *d;				/* device data, or NULL until needed */
	size_t		cap;			/* arena block size when the block is ours */
	bool		persistent;		/* a constant uploaded at prepare */
	bool		alias;			/* d is a view of another value's block */
	const void *h;				/* host data when known (inputs, constants) */
	bool		live;
} ox_dval;

typedef struct ox_cuda_op_ctx
{
	ox_cuda_ctx *cx;
	const ox_node *node;
	ox_dval   **in;				/* NULL for omitted inputs */
	int			n_in;
	ox_dval   **out;			/* never NULL (scratch for omitted outputs) */
	int			n_out;
	void	  **state;			/* the op's per-node state slot */
	ox_status  *st;
} ox_cuda_op_ctx;

typedef struct ox_cuda_op
{
	const char *domain;
	const char *op_type;
	int			since_version;
	bool		(*supports) (const ox_graph *g, const ox_node *n);
	ox_code		(*run) (ox_cuda_op_ctx *oc);
	void		(*free_state) (ox_cuda_ctx *cx, void *state);
	unsigned	host_inputs;	/* bit i: input i is read on the host */
} ox_cuda_op;

/* op tables of the families (ops_*.c) */
extern const ox_cuda_op ox_cuda_ops_elementwise[];
extern const int ox_cuda_ops_elementwise_count;
extern const ox_cuda_op ox_cuda_ops_gemm[];
extern const int ox_cuda_ops_gemm_count;
extern const ox_cuda_op ox_cuda_ops_nn[];
extern const int ox_cuda_ops_nn_count;
extern const ox_cuda_op ox_cuda_ops_conv[];
extern const int ox_cuda_ops_conv_count;
extern const ox_cuda_op ox_cuda_ops_tensor[];
extern const int ox_cuda_ops_tensor_count;

const ox_cuda_op *ox_cuda_find_op(const ox_node *n);

/* ---- context.c -------------------------------------------------------- */
void		oxc_count_call(void);
ox_code		oxc_cuda_check(cudaError_t e, const char *what, ox_status *st);
ox_code		oxc_blas_check(cublasStatus_t e, const char *what, ox_status *st);
ox_code		oxc_dnn_check(cudnnStatus_t e, const char *what, ox_status *st);
ox_code		oxc_alloc(ox_cuda_ctx *cx, size_t bytes, void **ptr, size_t *cap, ox_status *st);
void		oxc_release(ox_cuda_ctx *cx, void *ptr, size_t cap);
ox_code		oxc_workspace(ox_cuda_ctx *cx, size_t bytes, ox_status *st);
ox_code		oxc_cudnn(ox_cuda_ctx *cx, ox_status *st);
/* give a value a device block for its dtype/shape (reusing its block) */
ox_code		oxc_dval_alloc(ox_cuda_ctx *cx, ox_dval *v, ox_dtype dt, int rank, const int64_t *dims,
						   ox_status *st);
void		oxc_dval_release(ox_cuda_ctx *cx, ox_dval *v);
/* device data of a value, uploading host data on first use */
ox_code		oxc_dval_device(ox_cuda_ctx *cx, ox_dval *v, ox_status *st);

static inline int64_t
oxc_numel(const ox_dval *v)
{
	return ox_shape_numel(v->rank, v->dims);
}

/* input i of an op, checked: present, float32 (or dt), on the device */
ox_code		oxc_in(ox_cuda_op_ctx *oc, int i, ox_dtype dt, ox_dval **out);
/* output i with the given shape */
ox_code		oxc_out(ox_cuda_op_ctx *oc, int i, ox_dtype dt, int rank, const int64_t *dims,
					ox_dval **out);
/* host int64 values of input i (a constant or a partition input) */
ox_code		oxc_host_ints(ox_cuda_op_ctx *oc, int i, const int64_t **vals, int64_t *n);

/* whether every declared type of n's inputs/outputs is float32 (omitted ok) */
bool		oxc_all_float(const ox_graph *g, const ox_node *n, int n_inputs_checked);
/* declared element type of input i, OX_UNDEFINED when unknown */
ox_dtype	oxc_input_type(const ox_graph *g, const ox_node *n, int i);
/* input i is a constant initializer */
const ox_tensor *oxc_const(const ox_graph *g, const ox_node *n, int i);

/* ---- ops_gemm.c -------------------------------------------------------- */
ox_code		oxc_gemm(ox_cuda_ctx *cx, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
					 const float *a, int64_t stride_a, const float *b, int64_t stride_b, float beta,
					 float *c, int64_t stride_c, int64_t batch, ox_status *st);

/* ---- device launchers (*.cu) ------------------------------------------ */
#define OXC_MAX_DIMS 8

typedef enum oxc_unary
{
	OXC_U_IDENTITY = 0, OXC_U_RELU, OXC_U_LEAKY_RELU, OXC_U_SIGMOID, OXC_U_TANH, OXC_U_EXP,
	OXC_U_LOG, OXC_U_SQRT, OXC_U_NEG, OXC_U_ABS, OXC_U_ERF, OXC_U_GELU, OXC_U_GELU_TANH,
	OXC_U_HARD_SIGMOID, OXC_U_HARD_SWISH, OXC_U_CLIP, OXC_U_ELU, OXC_U_SOFTPLUS, OXC_U_RECIPROCAL,
	OXC_U_FLOOR, OXC_U_CEIL, OXC_U_SELU, OXC_U_SIN, OXC_U_COS, OXC_U_SILU, OXC_U_SCALE
} oxc_unary;

typedef enum oxc_binary
{
	OXC_B_ADD = 0, OXC_B_SUB, OXC_B_MUL, OXC_B_DIV, OXC_B_POW, OXC_B_MAX, OXC_B_MIN, OXC_B_PRELU
} oxc_binary;

/* coalesced broadcast geometry: out[i] = a[ia(i)] op b[ib(i)] */
typedef struct oxc_bcast
{
	int			rank;
	int64_t		dims[OXC_MAX_DIMS];
	int64_t		sa[OXC_MAX_DIMS];
	int64_t		sb[OXC_MAX_DIMS];
	int64_t		n;
} oxc_bcast;

cudaError_t oxc_launch_unary(cudaStream_t s, oxc_unary op, float p0, float p1, const float *x,
							 float *y, int64_t n);
cudaError_t oxc_launch_binary(cudaStream_t s, oxc_binary op, const oxc_bcast *g, const float *a,
							  const float *b, float *y);
/* y[i] = act(y[i] + bias[(i / inner) % c] + (z ? z[i] : 0)) */
cudaError_t oxc_launch_bias_act(cudaStream_t s, float *y, const float *bias, const float *z,
								int64_t n, int64_t c, int64_t inner, oxc_unary act, float p0, float p1);
/* generic strided copy (transpose, slice, expand, concat pieces) */
typedef struct oxc_strided
{
	int			rank;
	int64_t		dims[OXC_MAX_DIMS];	/* output dims */
	int64_t		src_strides[OXC_MAX_DIMS];	/* element strides into the source */
	int64_t		src_offset;
	int64_t		dst_strides[OXC_MAX_DIMS];	/* into the destination */
	int64_t		dst_offset;
	int64_t		n;
} oxc_strided;
cudaError_t oxc_launch_strided_copy(cudaStream_t s, const oxc_strided *g, const void *src, void *dst,
									int elem_size);
cudaError_t oxc_launch_gather(cudaStream_t s, const float *x, const int64_t *idx, float *y,
							  int64_t outer, int64_t axis_len, int64_t n_idx, int64_t inner);
/* softmax over the middle axis of [outer, len, inner] */
cudaError_t oxc_launch_softmax(cudaStream_t s, const float *x, float *y, int64_t outer, int64_t len,
							   int64_t inner, bool log);
cudaError_t oxc_launch_layernorm(cudaStream_t s, const float *x, const float *skip, const float *bias,
								 const float *gamma, const float *beta, float *y, float *sum_out,
								 int64_t rows, int64_t cols, int64_t skip_rows, float eps,
								 bool simplified);
/* reduce the middle axis of [outer, len, inner]: 0 sum, 1 mean, 2 max, 3 min, 4 prod, 5 sumsq, 6 l1, 7 l2, 8 logsumexp */
cudaError_t oxc_launch_reduce(cudaStream_t s, const float *x, float *y, int64_t outer, int64_t len,
							  int64_t inner, int op);
/* NCHW pooling over 2-D windows; kind 0 max, 1 average (count_include_pad) */
typedef struct oxc_pool2d
{
	int64_t		n, c, h, w, oh, ow;
	int			kh, kw, sh, sw, ph, pw, dh, dw;
	int			ph_end, pw_end;
	int			kind;
	int			count_include_pad;
} oxc_pool2d;
cudaError_t oxc_launch_pool2d(cudaStream_t s, const oxc_pool2d *p, const float *x, float *y);
/* BatchNormalization (inference) / per-channel affine over [N, C, inner] */
cudaError_t oxc_launch_channel_affine(cudaStream_t s, const float *x, float *y, const float *scale,
									  const float *shift, int64_t n, int64_t c, int64_t inner);
/* Resize on the last two axes of [outer, h, w] */
typedef struct oxc_resize
{
	int64_t		outer, ih, iw, oh, ow;
	float		scale_h, scale_w;	/* output / input */
	int			linear;			/* 0 nearest, 1 linear */
	int			coord;			/* 0 half_pixel, 1 asymmetric, 2 align_corners, 3 pytorch_half_pixel */
	int			nearest;		/* 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil */
} oxc_resize;
cudaError_t oxc_launch_resize(cudaStream_t s, const oxc_resize *r, const float *x, float *y);

/* FusedConv / FusedGemm "activation" attributes; false when not supported */
bool		oxc_fused_activation(const ox_node *n, oxc_unary *op, float *p0, float *p1);

#ifdef __cplusplus
}
#endif

#endif							/* OX_CUDA_INTERNAL_H */
