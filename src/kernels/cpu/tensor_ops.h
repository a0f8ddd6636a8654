/*
 * tensor_ops.h
 *	  Private header of the tensor (shape and data movement) and reduce
 *	  kernel families: shared helpers and the run/prepare functions that the
 *	  family tables in tensor.c and reduce.c list.
 *
 * Data movement works for every element type.  Numeric elements move as
 * bytes; strings (ox_string) own their bytes, so copying one duplicates it.
 * Output tensors of type string come zeroed from ox_out_tensor (NULL data,
 * length 0 = the empty string), and a partially filled string tensor is
 * still safe to release, so a failed copy needs no cleanup.
 */
#ifndef OX_TENSOR_OPS_H
#define OX_TENSOR_OPS_H

#include "kernels/kernel.h"

/* largest rank a strided view may have (Tile doubles the rank) */
#define OXT_MAX_VIEW_RANK (2 * OX_MAX_RANK)

/* element count of a tensor checked against overflow; -1 with st set */
int64_t		oxt_numel(ox_kernel_ctx *ctx, const ox_tensor *t, const char *what);

/* normalize axis in [-rank, rank) to [0, rank), or fail */
ox_code		oxt_axis(ox_kernel_ctx *ctx, int64_t axis, int rank, int *out, const char *what);

/*
 * Read a 1-D (or scalar) int32/int64 tensor into out[0..max); *n gets the
 * element count.  Fails when the tensor is of another type or too long.
 */
ox_code		oxt_read_ints(ox_kernel_ctx *ctx, const ox_tensor *t, int64_t *out, int max,
						  int *n, const char *what);
/* read a one-element numeric tensor as int64 / double */
ox_code		oxt_scalar_int(ox_kernel_ctx *ctx, const ox_tensor *t, int64_t *out, const char *what);
ox_code		oxt_scalar_double(ox_kernel_ctx *ctx, const ox_tensor *t, double *out,
							  const char *what);

/* fetch a required input tensor, failing when it is missing */
const ox_tensor *oxt_input(ox_kernel_ctx *ctx, int i, const char *what);

/* copy n elements of type dt (strings are duplicated) */
ox_code		oxt_copy_elems(ox_kernel_ctx *ctx, ox_dtype dt, void *dst, const void *src, int64_t n);
ox_code		oxt_string_set(ox_kernel_ctx *ctx, ox_string *dst, const char *data, size_t len);

/*
 * d[a * B + b] = s[a + b * sb] for a < A, b < B: a float matrix of B rows
 * (stride sb) transposed into A rows of B, in AVX2 register blocks where
 * the machine has them.
 */
void		oxt_transpose_f32(float *d, const float *s, int64_t A, int64_t B, int64_t sb);

/*
 * Copy the whole of src into a fresh output i with the given shape; when
 * src is an input the executor releases after this node, output i takes
 * its buffer instead (ox_take_input_buffer).  Either way callers must not
 * read src's data afterwards (its shape stays).
 */
ox_code		oxt_output_copy(ox_kernel_ctx *ctx, int i, const ox_tensor *src, int rank,
							const int64_t *dims);

/* row-major strides of a shape, in elements */
void		oxt_strides(int rank, const int64_t *dims, int64_t *strides);

/*
 * Strided gather: dst (contiguous, numel = prod(dims)) receives
 * src[offset + sum(i_k * strides[k])] in row-major order of i.  Strides are
 * in elements and may be zero or negative.  rank <= OXT_MAX_VIEW_RANK.
 * Transposes of the last two dims take a cache-blocked path.
 */
ox_code		oxt_strided_copy(ox_kernel_ctx *ctx, void *dst, const ox_tensor *src, int64_t offset,
							 int rank, const int64_t *dims, const int64_t *strides);

/* fill n elements of dst with copies of the element at src */
ox_code		oxt_fill(ox_kernel_ctx *ctx, ox_dtype dt, void *dst, const void *src, int64_t n);

/* three-way comparison of two elements of type dt (NaN sorts last) */
int			oxt_compare_elems(ox_dtype dt, const void *a, const void *b);

/* format a shape for messages into a caller buffer */
#define OXT_SHAPE(t, buf) ox_shape_str((t)->rank, (t)->dims, (buf), sizeof(buf))

/* axis / perm of the hot ops, parsed once by oxt_axis_prepare */
typedef struct oxt_attr_cache
{
	int64_t		axis;			/* INT64_MIN when a required axis is missing */
	int			n_perm;
	int64_t		perm[OX_MAX_RANK];
} oxt_attr_cache;

ox_code		oxt_axis_prepare(ox_prepare_ctx *pc);
void		oxt_free_state(void *state);
/* the run's cache, or NULL with st set when prepare did not run */
const oxt_attr_cache *oxt_cache(ox_kernel_ctx *ctx);

/* tensor.c */
ox_code		oxt_reshape_run(ox_kernel_ctx *ctx);
ox_code		oxt_flatten_run(ox_kernel_ctx *ctx);
ox_code		oxt_squeeze_run(ox_kernel_ctx *ctx);
ox_code		oxt_unsqueeze_run(ox_kernel_ctx *ctx);
ox_code		oxt_identity_run(ox_kernel_ctx *ctx);
ox_code		oxt_shape_run(ox_kernel_ctx *ctx);
ox_code		oxt_size_run(ox_kernel_ctx *ctx);

/* tensor_generate.c */
ox_code		oxt_constant_run(ox_kernel_ctx *ctx);
ox_code		oxt_constant_of_shape_run(ox_kernel_ctx *ctx);
ox_code		oxt_dropout_run(ox_kernel_ctx *ctx);
ox_code		oxt_range_run(ox_kernel_ctx *ctx);
ox_code		oxt_eye_like_run(ox_kernel_ctx *ctx);

/* tensor_transpose.c */
ox_code		oxt_transpose_run(ox_kernel_ctx *ctx);
/* blocksize and mode, wrong whatever the input: refused at load */
ox_code		oxt_block_prepare(ox_prepare_ctx *pc);
ox_code		oxt_depth_to_space_run(ox_kernel_ctx *ctx);
ox_code		oxt_space_to_depth_run(ox_kernel_ctx *ctx);
ox_code		oxt_expand_run(ox_kernel_ctx *ctx);
ox_code		oxt_tile_run(ox_kernel_ctx *ctx);
ox_code		oxt_slice_run(ox_kernel_ctx *ctx);

/* tensor_concat.c */
ox_code		oxt_concat_run(ox_kernel_ctx *ctx);
ox_code		oxt_split_run(ox_kernel_ctx *ctx);
/* an unknown mode, wrong whatever the input: refused at load */
ox_code		oxt_pad_prepare(ox_prepare_ctx *pc);
ox_code		oxt_pad_run(ox_kernel_ctx *ctx);
ox_code		oxt_compress_run(ox_kernel_ctx *ctx);
ox_code		oxt_trilu_run(ox_kernel_ctx *ctx);
ox_code		oxt_reverse_sequence_run(ox_kernel_ctx *ctx);

/* tensor_gather.c */
ox_code		oxt_gather_run(ox_kernel_ctx *ctx);
/* onnx_pg.fused GatherReduce: Gather then ReduceSum/ReduceMean over the indices' last axis */
ox_code		oxt_gather_reduce_run(ox_kernel_ctx *ctx);
ox_code		oxt_gather_elements_run(ox_kernel_ctx *ctx);
ox_code		oxt_gather_nd_run(ox_kernel_ctx *ctx);
ox_code		oxt_scatter_elements_run(ox_kernel_ctx *ctx);
ox_code		oxt_scatter_nd_run(ox_kernel_ctx *ctx);
ox_code		oxt_one_hot_run(ox_kernel_ctx *ctx);
ox_code		oxt_non_zero_run(ox_kernel_ctx *ctx);

/* tensor_sort.c */
ox_code		oxt_topk_run(ox_kernel_ctx *ctx);
ox_code		oxt_unique_run(ox_kernel_ctx *ctx);
ox_code		oxt_cumsum_run(ox_kernel_ctx *ctx);
ox_code		oxt_cumprod_run(ox_kernel_ctx *ctx);

/* tensor_resize.c */
ox_code		oxt_resize_prepare(ox_prepare_ctx *pc);
ox_code		oxt_resize_run(ox_kernel_ctx *ctx);
void		oxt_resize_free(void *state);
ox_code		oxt_col2im_run(ox_kernel_ctx *ctx);

#endif							/* OX_TENSOR_OPS_H */
