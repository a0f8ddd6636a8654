/*
 * vision.c
 *	  The vision kernel family table, and its small tensor ops:
 *	  CenterCropPad and TensorScatter.  The sampling and box ops
 *	  live in vision_grid.c, vision_roi.c and vision_deform.c.
 *
 * MaxRoiPool belongs to the pool family and Col2Im to the tensor family.
 */
#include "kernels/cpu/vision.h"
#include "kernels/cpu/tensor_ops.h"

#include <stdlib.h>
#include <string.h>

void
ox_vision_free_state(void *state)
{
	free(state);
}

static bool
vision_dtype_ok(ox_dtype dt)
{
	return dt > OX_UNDEFINED && dt < OX_DTYPE_COUNT && ox_dtype_size(dt) > 0;
}

/* ---------- CenterCropPad ---------- */

static ox_code
center_crop_pad_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *shape = ox_in_tensor(ctx, 1);
	const int64_t *axes_attr = NULL;
	bool		has_axes = ox_node_attr(ctx->node, "axes") != NULL;
	int			n_axes;
	int			axes[OX_MAX_RANK];
	bool		seen[OX_MAX_RANK];
	int64_t		out_dims[OX_MAX_RANK],
				crop_start[OX_MAX_RANK],
				pad_start[OX_MAX_RANK],
				len[OX_MAX_RANK],
				in_strides[OX_MAX_RANK],
				out_strides[OX_MAX_RANK],
				cnt[OX_MAX_RANK];
	size_t		es;
	int			rank;
	int64_t		rows = 1;
	ox_tensor  *y;

	if (!x || !shape)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "CenterCropPad: input_data and shape are required");
	if (!vision_dtype_ok(x->dtype))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "CenterCropPad: unsupported type %s",
					   ox_dtype_name(x->dtype));
	if (ox_tensor_numel(x) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "CenterCropPad: input too large");
	rank = x->rank;
	n_axes = has_axes ? ox_attr_ints(ctx->node, "axes", &axes_attr) : rank;
	if (n_axes > rank)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "CenterCropPad: %d axes for an input of rank %d",
					   n_axes, rank);
	memset(seen, 0, sizeof(seen));
	for (int i = 0; i < n_axes; i++)
	{
		int64_t		a = has_axes ? axes_attr[i] : i;

		if (a < -rank || a >= rank)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "CenterCropPad: axis %lld is out of range for rank %d",
						   (long long) a, rank);
		axes[i] = (int) (a < 0 ? a + rank : a);
		if (seen[axes[i]])
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "CenterCropPad: axis %d is repeated", axes[i]);
		seen[axes[i]] = true;
	}
	if ((shape->dtype != OX_INT64 && shape->dtype != OX_INT32) || shape->rank != 1 ||
		shape->dims[0] != n_axes)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "CenterCropPad: shape must be a 1-D int32/int64 tensor of %d elements, got %s with %lld",
					   n_axes, ox_dtype_name(shape->dtype),
					   (long long) (shape->rank == 1 ? shape->dims[0] : -1));
	for (int d = 0; d < rank; d++)
	{
		out_dims[d] = x->dims[d];
		crop_start[d] = 0;
		pad_start[d] = 0;
		len[d] = x->dims[d];
	}
	for (int i = 0; i < n_axes; i++)
	{
		int			a = axes[i];
		int64_t		sh = ox_tensor_get_int64(shape, i);
		int64_t		dim = x->dims[a];

		if (sh < 0 || sh > OX_MAX_ELEMENTS)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "CenterCropPad: shape[%d] = %lld is out of range",
						   i, (long long) sh);
		out_dims[a] = sh;
		if (sh < dim)
		{
			crop_start[a] = (dim - sh) / 2;
			len[a] = sh;
		}
		else if (sh > dim)
			pad_start[a] = (sh - dim) / 2;
	}
	if (ox_shape_numel(rank, out_dims) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "CenterCropPad: output too large");
	if (!(y = ox_out_tensor(ctx, 0, x->dtype, rank, out_dims)))
		return ctx->st->code;
	es = ox_dtype_size(x->dtype);
	/* string outputs come zeroed (empty strings); numbers must be cleared */
	if (x->dtype != OX_STRING && ox_tensor_numel(y) > 0)
		memset(y->data, 0, (size_t) ox_tensor_numel(y) * es);
	if (ox_tensor_numel(y) == 0 || ox_tensor_numel(x) == 0)
		return OX_OK;
	if (rank == 0)
		return oxt_copy_elems(ctx, x->dtype, y->data, x->data, 1);
	in_strides[rank - 1] = 1;
	out_strides[rank - 1] = 1;
	for (int d = rank - 2; d >= 0; d--)
	{
		in_strides[d] = in_strides[d + 1] * x->dims[d + 1];
		out_strides[d] = out_strides[d + 1] * out_dims[d + 1];
	}
	for (int d = 0; d < rank - 1; d++)
		rows *= len[d];
	memset(cnt, 0, sizeof(cnt));
	for (int64_t r = 0; r < rows; r++)
	{
		int64_t		src = crop_start[rank - 1],
					dst = pad_start[rank - 1];

		for (int d = 0; d < rank - 1; d++)
		{
			src += (crop_start[d] + cnt[d]) * in_strides[d];
			dst += (pad_start[d] + cnt[d]) * out_strides[d];
		}
		OX_TRY(oxt_copy_elems(ctx, x->dtype, (char *) y->data + dst * es,
								 (const char *) x->data + src * es, len[rank - 1]));
		for (int d = rank - 2; d >= 0; d--)
		{
			if (++cnt[d] < len[d])
				break;
			cnt[d] = 0;
		}
	}
	return OX_OK;
}

/* ---------- TensorScatter ---------- */

typedef struct scatter_state
{
	bool		circular;
	int64_t		axis;
} scatter_state;

static ox_code
tensor_scatter_prepare(ox_prepare_ctx *pc)
{
	const char *mode = ox_attr_string(pc->node, "mode", "linear");
	scatter_state *s;

	if (strcmp(mode, "linear") != 0 && strcmp(mode, "circular") != 0)
		return ox_fail(pc->st, OX_UNSUPPORTED, "TensorScatter: unsupported mode \"%s\"", mode);
	if (!(s = malloc(sizeof(*s))))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "TensorScatter: out of memory");
	s->circular = strcmp(mode, "circular") == 0;
	s->axis = ox_attr_int(pc->node, "axis", -2);
	pc->state = s;
	return OX_OK;
}

static ox_code
tensor_scatter_run(ox_kernel_ctx *ctx)
{
	const scatter_state *s = ctx->state;
	const ox_tensor *past = ox_in_tensor(ctx, 0);
	const ox_tensor *upd = ox_in_tensor(ctx, 1);
	const ox_tensor *wi = ox_in_tensor(ctx, 2);
	char		b1[OX_VISION_SHAPE_LEN],
				b2[OX_VISION_SHAPE_LEN];
	int64_t		axis,
				B,
				prefix = 1,
				per_batch = 1,
				inner = 1,
				max_len,
				seq;
	size_t		es;
	ox_tensor  *y;

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "TensorScatter: prepare did not run");
	if (!past || !upd)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "TensorScatter: past_cache and update are required");
	if (!vision_dtype_ok(past->dtype) || upd->dtype != past->dtype)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "TensorScatter: past_cache is %s and update %s, expected one supported type",
					   ox_dtype_name(past->dtype), ox_dtype_name(upd->dtype));
	axis = s->axis;
	if (past->rank < 2 || axis < -past->rank || axis >= past->rank)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "TensorScatter: axis %lld is invalid for rank %d",
					   (long long) axis, past->rank);
	if (axis < 0)
		axis += past->rank;
	if (axis == 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "TensorScatter: axis cannot be the batch dimension");
	if (ox_tensor_numel(past) < 0 || ox_tensor_numel(upd) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "TensorScatter: input too large");
	if (upd->rank != past->rank)
		goto bad_shape;
	for (int i = 0; i < past->rank; i++)
	{
		if (i == axis ? upd->dims[i] > past->dims[i] : upd->dims[i] != past->dims[i])
			goto bad_shape;
		if (i < axis)
			prefix *= past->dims[i];
		if (i > 0 && i < axis)
			per_batch *= past->dims[i];
		if (i > axis)
			inner *= past->dims[i];
	}
	B = past->dims[0];
	max_len = past->dims[axis];
	seq = upd->dims[axis];
	if (wi)
	{
		if (wi->dtype != OX_INT64 || wi->rank != 1 || wi->dims[0] != B)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "TensorScatter: write_indices must be int64 of shape [%lld], got %s %s",
						   (long long) B, ox_dtype_name(wi->dtype),
						   ox_shape_str(wi->rank, wi->dims, b1, sizeof(b1)));
		if (!s->circular)
			for (int64_t b = 0; b < B; b++)
			{
				int64_t		w = OX_DATA(wi, int64_t)[b];

				if (w < 0 || w > max_len - seq)
					return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
								   "TensorScatter: write_indices[%lld] = %lld plus %lld updates exceeds %lld",
								   (long long) b, (long long) w, (long long) seq, (long long) max_len);
			}
	}
	if (!(y = ox_out_tensor(ctx, 0, past->dtype, past->rank, past->dims)))
		return ctx->st->code;
	OX_TRY(oxt_copy_elems(ctx, past->dtype, y->data, past->data, ox_tensor_numel(past)));
	if (seq == 0 || inner == 0)
		return OX_OK;
	es = ox_dtype_size(past->dtype);
	for (int64_t p = 0; p < prefix; p++)
	{
		int64_t		b = p / per_batch;
		int64_t		w = wi ? OX_DATA(wi, int64_t)[b] : 0;

		for (int64_t k = 0; k < seq; k++)
		{
			int64_t		t;

			if (s->circular)
			{
				/* reduce first so that w + k cannot overflow */
				t = w % max_len;
				if (t < 0)
					t += max_len;
				t = (t + k) % max_len;
			}
			else
				t = w + k;
			OX_TRY(oxt_copy_elems(ctx, past->dtype,
									 (char *) y->data + ((p * max_len + t) * inner) * es,
									 (const char *) upd->data + ((p * seq + k) * inner) * es, inner));
		}
	}
	return OX_OK;

bad_shape:
	return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
				   "TensorScatter: update has shape %s but past_cache %s (axis %lld)",
				   ox_shape_str(upd->rank, upd->dims, b1, sizeof(b1)),
				   ox_shape_str(past->rank, past->dims, b2, sizeof(b2)), (long long) axis);
}

const ox_kernel_def ox_kernels_vision[] = {
	{"", "GridSample", 16, ox_vision_grid_sample_prepare, ox_vision_grid_sample_run, ox_vision_free_state},
	{"", "AffineGrid", 20, NULL, ox_vision_affine_grid_run, NULL},
	{"", "NonMaxSuppression", 10, NULL, ox_vision_nms_run, NULL},
	{"", "RoiAlign", 10, ox_vision_roi_align_prepare, ox_vision_roi_align_run, ox_vision_free_state},
	{"", "DeformConv", 19, NULL, ox_vision_deform_conv_run, NULL},
	{"", "CenterCropPad", 18, NULL, center_crop_pad_run, NULL},
	{"", "TensorScatter", 24, tensor_scatter_prepare, tensor_scatter_run, ox_vision_free_state},
};
const int	ox_kernels_vision_count = OX_KERNEL_COUNT(ox_kernels_vision);
