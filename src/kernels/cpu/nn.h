/*
 * nn.h
 *	  Private header shared by the gemm, conv, pool and norm kernel families:
 *	  sliding-window geometry (Conv, ConvTranspose, pools), float16 staging
 *	  buffers, and the GEMM entry points the other families reuse.
 *
 * Nothing here is part of the engine API; symbols that leave a file carry
 * the nn_ prefix so that they cannot clash with other families.
 */
#ifndef OX_KERNELS_CPU_NN_H
#define OX_KERNELS_CPU_NN_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "kernels/kernel.h"

/* buffer size for a formatted shape, "[1, 3, 224, 224]" */
#define NN_SHAPE_LEN 192

static inline const char *
nn_shape(const ox_tensor *t, char *buf)
{
	return ox_shape_str(t->rank, t->dims, buf, NN_SHAPE_LEN);
}

/* bytes for n elements of size esize, or 0 on overflow / negative n */
static inline size_t
nn_bytes(int64_t n, size_t esize)
{
	if (n < 0 || n > OX_MAX_ELEMENTS)
		return 0;
	return (size_t) n * esize;
}

/* 64-byte aligned scratch of n elements, NULL + status on failure or overflow */
void	   *nn_scratch(int64_t n, size_t esize, ox_status *st, const char *what);

/*
 * float16 staging: kernels compute float16 in float32.  nn_to_float returns
 * a newly allocated float copy of t (free with ox_aligned_free); for n == 0
 * it returns a non-NULL dummy so callers need not special-case it.
 */
float	   *nn_to_float(const ox_tensor *t, ox_status *st);
void		nn_float_to_half(uint16_t *dst, const float *src, int64_t n);

/* float16 and bfloat16 are computed in float32 */
static inline bool
nn_is_half(ox_dtype dt)
{
	return dt == OX_FLOAT16 || dt == OX_BFLOAT16;
}

/* write n float values into a float16/bfloat16/float tensor */
static inline ox_code
nn_store_float(ox_tensor *y, const float *src, int64_t n, ox_status *st)
{
	return ox_convert_elements(y->data, y->dtype, src, OX_FLOAT, n, st);
}

/* BLAS takes int dimensions; larger problems are refused */
static inline bool
nn_blas_fits(int64_t m, int64_t n, int64_t k)
{
	return m >= 0 && n >= 0 && k >= 0 && m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX;
}

/*
 * Sums written with eight independent partial sums: without -ffast-math the
 * compiler may not reorder a single accumulator, and this form both
 * vectorizes and loses less precision on long rows.
 */
static inline float
nn_sum_f32(const float *x, int64_t n)
{
	float		acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
	int64_t		i = 0;
	float		total = 0;

	for (; i + 8 <= n; i += 8)
		for (int j = 0; j < 8; j++)
			acc[j] += x[i + j];
	for (; i < n; i++)
		acc[0] += x[i];
	for (int j = 0; j < 8; j++)
		total += acc[j];
	return total;
}

/* sum of (x[i] - mean)^2, same scheme */
static inline float
nn_sqdev_f32(const float *x, int64_t n, float mean)
{
	float		acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
	int64_t		i = 0;
	float		total = 0;

	for (; i + 8 <= n; i += 8)
		for (int j = 0; j < 8; j++)
		{
			float		d = x[i + j] - mean;

			acc[j] += d * d;
		}
	for (; i < n; i++)
		acc[0] += (x[i] - mean) * (x[i] - mean);
	for (int j = 0; j < 8; j++)
		total += acc[j];
	return total;
}

/* ---- quantization -------------------------------------------------------- */

static inline bool
nn_is_quant8(ox_dtype dt)
{
	return dt == OX_UINT8 || dt == OX_INT8;
}

/* round half to even and saturate to uint8 / int8, then store at y[i] */
static inline void
nn_store_quant8(void *y, ox_dtype dt, int64_t i, double v)
{
	double		lo = dt == OX_INT8 ? -128.0 : 0.0;
	double		hi = dt == OX_INT8 ? 127.0 : 255.0;

	v = nearbyint(v);
	if (!(v >= lo))				/* also maps NaN to the low end */
		v = lo;
	if (v > hi)
		v = hi;
	if (dt == OX_INT8)
		((int8_t *) y)[i] = (int8_t) v;
	else
		((uint8_t *) y)[i] = (uint8_t) v;
}

/* element i of a uint8/int8 tensor */
static inline double
nn_quant8_at(const void *x, ox_dtype dt, int64_t i)
{
	return dt == OX_INT8 ? (double) ((const int8_t *) x)[i] : (double) ((const uint8_t *) x)[i];
}

/*
 * A float tensor computed in float32 or double: float and double are used
 * in place, float16/bfloat16 are staged through float32 buffers that
 * nn_work_end converts back and frees (norm.c).
 */
typedef struct nn_work
{
	bool		dbl;			/* compute in double */
	const void *x;
	void	   *y;
	float	   *staged_x;
	float	   *staged_y;
	int64_t		ny;
} nn_work;

ox_code		nn_work_begin(const char *op, const ox_tensor *x, ox_tensor *y, nn_work *w,
						  ox_status *st);
ox_code		nn_work_end(nn_work *w, ox_tensor *y, ox_status *st);
/* a parameter tensor converted to the compute type (scratch, caller frees) */
void	   *nn_work_param(const nn_work *w, const ox_tensor *t, ox_status *st);

/* ---- sliding windows ---------------------------------------------------- */

/* Conv and the pools run 1-D, 2-D and 3-D windows (the common ONNX cases). */
#define NN_MAX_SPATIAL 3

typedef enum nn_auto_pad
{
	NN_PAD_NOTSET = 0,
	NN_PAD_SAME_UPPER,
	NN_PAD_SAME_LOWER,
	NN_PAD_VALID
} nn_auto_pad;

/* window attributes as written in the node, validated once in prepare */
typedef struct nn_window
{
	int			n_kernel;		/* 0 when absent (Conv: taken from W) */
	int64_t		kernel[OX_MAX_RANK];
	int			n_strides;
	int64_t		strides[OX_MAX_RANK];
	int			n_dilations;
	int64_t		dilations[OX_MAX_RANK];
	int			n_pads;
	int64_t		pads[2 * OX_MAX_RANK];
	nn_auto_pad auto_pad;
	bool		ceil_mode;
} nn_window;

/*
 * The window resolved for one input shape.  Always three spatial axes: a
 * 1-D or 2-D window is stored in the trailing axes with size-1 leading axes
 * so that one loop nest serves every rank.
 */
typedef struct nn_geom
{
	int			nsp;			/* real number of spatial axes */
	int64_t		in[NN_MAX_SPATIAL];
	int64_t		out[NN_MAX_SPATIAL];
	int64_t		k[NN_MAX_SPATIAL];
	int64_t		s[NN_MAX_SPATIAL];
	int64_t		d[NN_MAX_SPATIAL];
	int64_t		pb[NN_MAX_SPATIAL];	/* padding at the beginning */
	int64_t		pe[NN_MAX_SPATIAL];	/* padding at the end */
	int64_t		in_size;		/* product of in[] */
	int64_t		out_size;		/* product of out[] */
	int64_t		k_size;			/* product of k[] */
} nn_geom;

/*
 * Output positions o in [0, n_out) whose input position o * s + off lies in
 * [0, n_in) form one range [*lo, *hi): computing it once per kernel tap
 * leaves branch-free inner loops.
 */
static inline void
nn_valid_range(int64_t n_out, int64_t s, int64_t off, int64_t n_in, int64_t *lo, int64_t *hi)
{
	int64_t		l = off >= 0 ? 0 : (-off + s - 1) / s;
	int64_t		h = n_in - off <= 0 ? 0 : (n_in - off - 1) / s + 1;

	if (h > n_out)
		h = n_out;
	if (l > h)
		l = h;
	*lo = l;
	*hi = h;
}

/* parse kernel_shape/strides/dilations/pads/auto_pad/ceil_mode of a node */
ox_code		nn_window_parse(const ox_node *node, nn_window *w, bool allow_ceil,
							ox_status *st);

/*
 * Resolve the window for spatial input dims in_sp[nsp]; kernel overrides the
 * kernel_shape attribute when non-NULL (Conv takes it from W, and checks
 * that an explicit kernel_shape agrees).
 */
ox_code		nn_window_resolve(const nn_window *w, const char *op, int nsp,
							  const int64_t *in_sp, const int64_t *kernel,
							  nn_geom *g, ox_status *st);

/* ---- GEMM helpers (gemm.c) ---------------------------------------------- */

/*
 * Row-major C[m, n] = alpha * op(A) op(B) + beta * C with leading
 * dimensions; thin wrappers over cblas so that callers stay readable.
 */
void		nn_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
					 const float *a, int64_t lda, const float *b, int64_t ldb,
					 float beta, float *c, int64_t ldc);
void		nn_dgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
					 const double *a, int64_t lda, const double *b, int64_t ldb,
					 double beta, double *c, int64_t ldc);

/*
 * numpy-style batched product in double for the quantized MatMuls: plans
 * the shapes of A and B (y_dims needs OX_MAX_RANK + 2 slots) and returns
 * a newly allocated double result in *yd.
 */
ox_code		nn_matmul_f64(const char *op, const ox_tensor *a, const ox_tensor *b,
						  const double *ad, const double *bd, double **yd, int *y_rank,
						  int64_t *y_dims, ox_status *st);

/* run functions of the families that live in more than one file */
ox_code		nn_matmul_integer_run(ox_kernel_ctx *ctx);
ox_code		nn_qlinear_matmul_run(ox_kernel_ctx *ctx);
ox_code		nn_einsum_prepare(ox_prepare_ctx *pc);
ox_code		nn_einsum_run(ox_kernel_ctx *ctx);
void		nn_einsum_free(void *state);

ox_code		nn_lp_normalization_run(ox_kernel_ctx *ctx);
ox_code		nn_mvn_run(ox_kernel_ctx *ctx);
ox_code		nn_lrn_run(ox_kernel_ctx *ctx);

ox_code		nn_conv_integer_run(ox_kernel_ctx *ctx);
ox_code		nn_qlinear_conv_run(ox_kernel_ctx *ctx);
ox_code		nn_conv_int_prepare(ox_prepare_ctx *pc);
void		nn_conv_int_free(void *state);

/* a convolution resolved for one pair of input shapes (conv.c) */
typedef struct nn_conv_shape
{
	nn_geom		g;
	int64_t		n;				/* batch */
	int64_t		c;				/* input channels */
	int64_t		m;				/* output channels */
	int64_t		group;
	int			y_rank;
	int64_t		y_dims[2 + NN_MAX_SPATIAL];
	/* float Conv only: weights packed for the fast GEMM path (conv_fast.h), or NULL */
	const struct nn_convw *wpack;
} nn_conv_shape;

/* check X [N, C, ...], W [M, C/group, k...] and optional B [M] */
ox_code		nn_conv_check(const nn_window *w, int64_t group, const char *op,
						  const ox_tensor *x, const ox_tensor *wt, const ox_tensor *b,
						  nn_conv_shape *cs, ox_status *st);

/*
 * Compute Y = conv(X, W) + B for a checked shape; b may be NULL.  The
 * quantized convolutions use the double version on zero-point-corrected
 * data: integer sums stay exact in double for any realistic reduction.
 */
ox_code		nn_conv_f32(const nn_conv_shape *cs, const float *x, const float *w,
						const float *b, float *y, ox_status *st);
ox_code		nn_conv_f64(const nn_conv_shape *cs, const double *x, const double *w,
						const double *b, double *y, ox_status *st);

#endif							/* OX_KERNELS_CPU_NN_H */
