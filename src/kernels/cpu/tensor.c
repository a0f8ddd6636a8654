/*
 * tensor.c
 *	  Shape and data movement kernels (the "tensor" family): shared helpers,
 *	  the ops that only reinterpret a shape (Reshape, Flatten, Squeeze,
 *	  Unsqueeze, Identity), shape queries, constants, Dropout, Range and
 *	  EyeLike, and the family table.
 *
 * Outputs never alias inputs, so even a pure reshape copies its data: one
 * memcpy for numeric types, a per-element duplicate for strings.
 */
#include "kernels/cpu/tensor_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------
 * shared helpers
 * --------------------------------------------------------------------- */

int64_t
oxt_numel(ox_kernel_ctx *ctx, const ox_tensor *t, const char *what)
{
	int64_t		n = ox_tensor_numel(t);

	if (n < 0)
		ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "%s: %s has a negative dimension or too many elements",
				ctx->node->op_type, what);
	return n;
}

ox_code
oxt_axis(ox_kernel_ctx *ctx, int64_t axis, int rank, int *out, const char *what)
{
	if (axis < -rank || axis >= rank || rank == 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: %s %lld is out of range for rank %d",
					   ctx->node->op_type, what, (long long) axis, rank);
	*out = (int) (axis < 0 ? axis + rank : axis);
	return OX_OK;
}

const ox_tensor *
oxt_input(ox_kernel_ctx *ctx, int i, const char *what)
{
	const ox_tensor *t = ox_in_tensor(ctx, i);

	if (!t)
		ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: required input %d (%s) is missing or not a tensor",
				ctx->node->op_type, i, what);
	return t;
}

ox_code
oxt_read_ints(ox_kernel_ctx *ctx, const ox_tensor *t, int64_t *out, int max, int *n,
			  const char *what)
{
	int64_t		cnt;

	if (t->dtype != OX_INT64 && t->dtype != OX_INT32)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: %s must be int64 or int32, got %s",
					   ctx->node->op_type, what, ox_dtype_name(t->dtype));
	if (t->rank > 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: %s must be 1-D, got rank %d",
					   ctx->node->op_type, what, t->rank);
	cnt = ox_tensor_numel(t);
	if (cnt < 0 || cnt > max)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: %s has %lld elements, at most %d allowed",
					   ctx->node->op_type, what, (long long) cnt, max);
	for (int64_t i = 0; i < cnt; i++)
		out[i] = t->dtype == OX_INT64 ? OX_DATA(t, int64_t)[i] : OX_DATA(t, int32_t)[i];
	*n = (int) cnt;
	return OX_OK;
}

static ox_code
scalar_check(ox_kernel_ctx *ctx, const ox_tensor *t, const char *what)
{
	if (ox_tensor_numel(t) != 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: %s must hold exactly one element, got %lld",
					   ctx->node->op_type, what, (long long) ox_tensor_numel(t));
	if (t->dtype == OX_STRING || ox_dtype_size(t->dtype) == 0 ||
		t->dtype == OX_COMPLEX64 || t->dtype == OX_COMPLEX128)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: %s must be numeric, got %s",
					   ctx->node->op_type, what, ox_dtype_name(t->dtype));
	return OX_OK;
}

ox_code
oxt_scalar_int(ox_kernel_ctx *ctx, const ox_tensor *t, int64_t *out, const char *what)
{
	OX_TRY(scalar_check(ctx, t, what));
	*out = ox_tensor_get_int64(t, 0);
	return OX_OK;
}

ox_code
oxt_scalar_double(ox_kernel_ctx *ctx, const ox_tensor *t, double *out, const char *what)
{
	OX_TRY(scalar_check(ctx, t, what));
	*out = ox_tensor_get_double(t, 0);
	return OX_OK;
}

ox_code
oxt_string_set(ox_kernel_ctx *ctx, ox_string *dst, const char *data, size_t len)
{
	return ox_string_set(dst, data, len, ctx->st);
}

/*
 * The copy and fill helpers are the inner loops of most shape kernels (Pad,
 * Concat, Gather, Slice...), whose outputs a few bytes of input can make
 * huge: they poll for cancellation as they go.  A canceled copy returns
 * OX_CANCELED with what it did complete; the kernel's output is discarded.
 */
ox_code
oxt_copy_elems(ox_kernel_ctx *ctx, ox_dtype dt, void *dst, const void *src, int64_t n)
{
	if (n <= 0)
		return OX_OK;
	if (dt == OX_STRING)
	{
		const ox_string *s = src;
		ox_string  *d = dst;

		for (int64_t i = 0; i < n; i++)
		{
			OX_TRY(oxt_string_set(ctx, &d[i], s[i].data, s[i].len));
			if (ox_kernel_poll(ctx, 1))
				return ctx->st->code;
		}
		return OX_OK;
	}
	/* Reshape or Identity of a huge tensor: blocks, polled in between */
	for (int64_t b = 0; b < n; b += OX_POLL_BLOCK)
	{
		int64_t		m = n - b > OX_POLL_BLOCK ? OX_POLL_BLOCK : n - b;
		size_t		es = ox_dtype_size(dt);

		memcpy((char *) dst + (size_t) b * es, (const char *) src + (size_t) b * es, (size_t) m * es);
		if (ox_kernel_poll(ctx, m))
			return ctx->st->code;
	}
	return OX_OK;
}

static void fill_block(size_t es, void *dst, const void *src, int64_t n);

ox_code
oxt_fill(ox_kernel_ctx *ctx, ox_dtype dt, void *dst, const void *src, int64_t n)
{
	size_t		es = ox_dtype_size(dt);

	if (n <= 0)
		return OX_OK;
	if (dt == OX_STRING)
	{
		const ox_string *s = src;

		for (int64_t i = 0; i < n; i++)
		{
			OX_TRY(oxt_string_set(ctx, &((ox_string *) dst)[i], s->data, s->len));
			if (ox_kernel_poll(ctx, 1))
				return ctx->st->code;
		}
		return OX_OK;
	}
	/* ConstantOfShape of billions of elements: blocks, polled in between */
	for (int64_t b = 0; b < n; b += OX_POLL_BLOCK)
	{
		int64_t		m = n - b > OX_POLL_BLOCK ? OX_POLL_BLOCK : n - b;

		fill_block(es, (char *) dst + (size_t) b * es, src, m);
		if (ox_kernel_poll(ctx, m))
			return ctx->st->code;
	}
	return OX_OK;
}

static void
fill_block(size_t es, void *dst, const void *src, int64_t n)
{
	switch (es)
	{
		case 1:
			memset(dst, *(const uint8_t *) src, (size_t) n);
			break;
		case 2:
			for (int64_t i = 0; i < n; i++)
				((uint16_t *) dst)[i] = *(const uint16_t *) src;
			break;
		case 4:
			for (int64_t i = 0; i < n; i++)
				((uint32_t *) dst)[i] = *(const uint32_t *) src;
			break;
		case 8:
			for (int64_t i = 0; i < n; i++)
				((uint64_t *) dst)[i] = *(const uint64_t *) src;
			break;
		default:
			for (int64_t i = 0; i < n; i++)
				memcpy((char *) dst + (size_t) i * es, src, es);
			break;
	}
}

ox_code
oxt_output_copy(ox_kernel_ctx *ctx, int i, const ox_tensor *src, int rank, const int64_t *dims)
{
	ox_tensor  *out;

	/* src is an input the executor releases after this node: take its buffer */
	if (ox_take_input_buffer(ctx, src, i, rank, dims))
		return OX_OK;
	out = ox_out_tensor(ctx, i, src->dtype, rank, dims);
	if (!out)
		return ctx->st->code;
	return oxt_copy_elems(ctx, src->dtype, out->data, src->data, ox_tensor_numel(src));
}

void
oxt_strides(int rank, const int64_t *dims, int64_t *strides)
{
	int64_t		s = 1;

	for (int i = rank - 1; i >= 0; i--)
	{
		strides[i] = s;
		s *= dims[i] > 0 ? dims[i] : 1;
	}
}

#define CMP3(a, b) ((a) < (b) ? -1 : (a) > (b) ? 1 : 0)

static int
cmp_double(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) ? (isnan(b) ? 0 : 1) : -1;
	return CMP3(a, b);
}

int
oxt_compare_elems(ox_dtype dt, const void *a, const void *b)
{
	switch (dt)
	{
		case OX_FLOAT:
			return cmp_double(*(const float *) a, *(const float *) b);
		case OX_DOUBLE:
			return cmp_double(*(const double *) a, *(const double *) b);
		case OX_FLOAT16:
			return cmp_double(ox_half_to_float(*(const uint16_t *) a),
							  ox_half_to_float(*(const uint16_t *) b));
		case OX_BFLOAT16:
			return cmp_double(ox_bf16_to_float(*(const uint16_t *) a),
							  ox_bf16_to_float(*(const uint16_t *) b));
		case OX_INT8:
			return CMP3(*(const int8_t *) a, *(const int8_t *) b);
		case OX_UINT8:
		case OX_BOOL:
			return CMP3(*(const uint8_t *) a, *(const uint8_t *) b);
		case OX_INT16:
			return CMP3(*(const int16_t *) a, *(const int16_t *) b);
		case OX_UINT16:
			return CMP3(*(const uint16_t *) a, *(const uint16_t *) b);
		case OX_INT32:
			return CMP3(*(const int32_t *) a, *(const int32_t *) b);
		case OX_UINT32:
			return CMP3(*(const uint32_t *) a, *(const uint32_t *) b);
		case OX_INT64:
			return CMP3(*(const int64_t *) a, *(const int64_t *) b);
		case OX_UINT64:
			return CMP3(*(const uint64_t *) a, *(const uint64_t *) b);
		case OX_STRING:
			{
				const ox_string *x = a;
				const ox_string *y = b;
				size_t		n = x->len < y->len ? x->len : y->len;
				int			c = n ? memcmp(x->data, y->data, n) : 0;

				if (c)
					return c < 0 ? -1 : 1;
				return CMP3(x->len, y->len);
			}
		default:
			return memcmp(a, b, ox_dtype_size(dt));
	}
}

/*
 * prepare() of the hot ops: read axis / perm once per session instead of
 * scanning the attribute list on every run.
 */
ox_code
oxt_axis_prepare(ox_prepare_ctx *pc)
{
	const ox_node *node = pc->node;
	oxt_attr_cache *c = calloc(1, sizeof(oxt_attr_cache));
	int64_t		def = 0;

	if (!c)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s: could not allocate state", node->op_type);
	if (strcmp(node->op_type, "Flatten") == 0)
		def = 1;
	else if (strcmp(node->op_type, "Concat") == 0)
		def = node->opset < 4 ? 1 : INT64_MIN;	/* required from opset 4 */
	c->axis = ox_attr_int(node, "axis", def);
	if (strcmp(node->op_type, "Transpose") == 0)
	{
		const int64_t *perm;

		c->n_perm = ox_attr_ints(node, "perm", &perm);
		if (c->n_perm > OX_MAX_RANK)
		{
			free(c);
			return ox_fail(pc->st, OX_INVALID_MODEL, "Transpose: perm has more than %d entries",
						   OX_MAX_RANK);
		}
		/* perm is NULL when the attribute is absent (n_perm 0) */
		if (c->n_perm > 0)
			memcpy(c->perm, perm, sizeof(int64_t) * c->n_perm);
		/* a permutation whatever the input: refused at load, not at the first run */
		for (int i = 0, seen = 0; i < c->n_perm; i++)
		{
			int64_t		p = c->perm[i];

			if (p < 0 || p >= c->n_perm || (seen & (1 << p)))
			{
				int			n = c->n_perm;

				free(c);
				return ox_fail(pc->st, OX_INVALID_MODEL,
							   "Transpose: perm is not a permutation of 0..%d (entry %d is %lld)",
							   n - 1, i, (long long) p);
			}
			seen |= 1 << p;
		}
	}
	pc->state = c;
	return OX_OK;
}

void
oxt_free_state(void *state)
{
	free(state);
}

const oxt_attr_cache *
oxt_cache(ox_kernel_ctx *ctx)
{
	if (!ctx->state)
		ox_fail(ctx->st, OX_INTERNAL, "%s: kernel state is missing", ctx->node->op_type);
	return ctx->state;
}

/* ---------------------------------------------------------------------
 * Reshape, Flatten, Squeeze, Unsqueeze, Identity
 * --------------------------------------------------------------------- */

ox_code
oxt_reshape_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "data");
	int64_t		shape[OX_MAX_RANK];
	int64_t		dims[OX_MAX_RANK];
	int			n = 0;
	int			infer = -1;
	int64_t		known = 1;
	int64_t		total;
	bool		allowzero = ctx->node->opset >= 14 && ox_attr_int(ctx->node, "allowzero", 0) != 0;
	char		b1[128];

	if (!x)
		return ctx->st->code;
	if ((total = oxt_numel(ctx, x, "data")) < 0)
		return ctx->st->code;
	if (ctx->node->opset < 5)
	{
		const int64_t *a;
		int			na = ox_attr_ints(ctx->node, "shape", &a);

		if (na > OX_MAX_RANK)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Reshape: shape has %d entries, at most %d allowed",
						   na, OX_MAX_RANK);
		if (na > 0)
			memcpy(shape, a, sizeof(int64_t) * na);
		n = na;
	}
	else
	{
		const ox_tensor *s = oxt_input(ctx, 1, "shape");

		if (!s)
			return ctx->st->code;
		OX_TRY(oxt_read_ints(ctx, s, shape, OX_MAX_RANK, &n, "shape"));
	}
	for (int i = 0; i < n; i++)
	{
		int64_t		d = shape[i];

		if (d == -1)
		{
			if (infer >= 0)
				return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Reshape: shape has more than one -1");
			infer = i;
			continue;
		}
		if (d < -1)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Reshape: shape entry %d is %lld, must be >= -1",
						   i, (long long) d);
		if (d == 0 && !allowzero)
		{
			if (i >= x->rank)
				return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
							   "Reshape: shape entry %d is 0 but the input %s has no dimension %d",
							   i, OXT_SHAPE(x, b1), i);
			d = x->dims[i];
		}
		dims[i] = d;
		if (d > 0 && known > OX_MAX_ELEMENTS / d)
			return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "Reshape: requested shape has too many elements");
		known *= d;
	}
	if (infer >= 0)
	{
		if (known == 0 || total % known != 0)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "Reshape: cannot infer the -1 dimension: input %s has %lld elements, the other dimensions multiply to %lld",
						   OXT_SHAPE(x, b1), (long long) total, (long long) known);
		dims[infer] = total / known;
	}
	else if (known != total)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "Reshape: input %s has %lld elements but the requested shape holds %lld",
					   OXT_SHAPE(x, b1), (long long) total, (long long) known);
	return oxt_output_copy(ctx, 0, x, n, dims);
}

ox_code
oxt_flatten_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "input");
	const oxt_attr_cache *c = oxt_cache(ctx);
	int64_t		axis;
	int64_t		dims[2] = {1, 1};

	if (!x || !c)
		return ctx->st->code;
	axis = c->axis;
	if (oxt_numel(ctx, x, "input") < 0)
		return ctx->st->code;
	if (axis < -x->rank || axis > x->rank)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Flatten: axis %lld is out of range for rank %d",
					   (long long) axis, x->rank);
	if (axis < 0)
		axis += x->rank;
	for (int i = 0; i < x->rank; i++)
		dims[i < axis ? 0 : 1] *= x->dims[i];
	return oxt_output_copy(ctx, 0, x, 2, dims);
}

/* read the axes of Squeeze/Unsqueeze from the attribute or the input */
static ox_code
read_axes(ox_kernel_ctx *ctx, int64_t *axes, int *n, bool *given)
{
	*n = 0;
	*given = false;
	if (ctx->node->opset < 13)
	{
		const int64_t *a;
		int			na = ox_attr_ints(ctx->node, "axes", &a);

		*given = ox_node_attr(ctx->node, "axes") != NULL;
		if (na > OXT_MAX_VIEW_RANK)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: too many axes (%d)", ctx->node->op_type, na);
		if (na > 0)
			memcpy(axes, a, sizeof(int64_t) * na);
		*n = na;
		return OX_OK;
	}
	if (ox_in_tensor(ctx, 1))
	{
		*given = true;
		return oxt_read_ints(ctx, ox_in_tensor(ctx, 1), axes, OXT_MAX_VIEW_RANK, n, "axes");
	}
	return OX_OK;
}

ox_code
oxt_squeeze_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "data");
	int64_t		axes[OXT_MAX_VIEW_RANK];
	bool		drop[OX_MAX_RANK] = {false};
	int64_t		dims[OX_MAX_RANK];
	int			n;
	int			r = 0;
	bool		given;

	if (!x)
		return ctx->st->code;
	if (oxt_numel(ctx, x, "data") < 0)
		return ctx->st->code;
	OX_TRY(read_axes(ctx, axes, &n, &given));
	if (n == 0)
	{
		for (int i = 0; i < x->rank; i++)
			drop[i] = x->dims[i] == 1;
	}
	for (int k = 0; k < n; k++)
	{
		int			a;

		OX_TRY(oxt_axis(ctx, axes[k], x->rank, &a, "axis"));
		if (drop[a])
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Squeeze: axis %d is listed twice", a);
		if (x->dims[a] != 1)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "Squeeze: cannot squeeze axis %d of size %lld, it must be 1",
						   a, (long long) x->dims[a]);
		drop[a] = true;
	}
	for (int i = 0; i < x->rank; i++)
		if (!drop[i])
			dims[r++] = x->dims[i];
	return oxt_output_copy(ctx, 0, x, r, dims);
}

ox_code
oxt_unsqueeze_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "data");
	int64_t		axes[OXT_MAX_VIEW_RANK];
	bool		ins[OXT_MAX_VIEW_RANK] = {false};
	int64_t		dims[OX_MAX_RANK];
	int			n;
	int			r;
	int			src = 0;
	bool		given;

	if (!x)
		return ctx->st->code;
	if (oxt_numel(ctx, x, "data") < 0)
		return ctx->st->code;
	OX_TRY(read_axes(ctx, axes, &n, &given));
	if (!given)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Unsqueeze: axes are required");
	r = x->rank + n;
	if (r > OX_MAX_RANK)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Unsqueeze: output rank %d exceeds the limit of %d",
					   r, OX_MAX_RANK);
	for (int k = 0; k < n; k++)
	{
		int			a;

		OX_TRY(oxt_axis(ctx, axes[k], r, &a, "axis"));
		if (ins[a])
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Unsqueeze: axis %d is listed twice", a);
		ins[a] = true;
	}
	for (int i = 0; i < r; i++)
		dims[i] = ins[i] ? 1 : x->dims[src++];
	return oxt_output_copy(ctx, 0, x, r, dims);
}

ox_code
oxt_identity_run(ox_kernel_ctx *ctx)
{
	ox_value   *out;

	if (ctx->n_in < 1 || !ctx->in[0])
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Identity: input is missing");
	if (ctx->in[0]->kind == OX_VALUE_TENSOR)
	{
		const ox_tensor *x = &ctx->in[0]->tensor;

		if (oxt_numel(ctx, x, "input") < 0)
			return ctx->st->code;
		return oxt_output_copy(ctx, 0, x, x->rank, x->dims);
	}
	/* sequences, maps and empty optionals are copied whole */
	if (!(out = ox_out_value(ctx, 0)))
		return ctx->st->code;
	return ox_value_copy(out, ctx->in[0], ctx->st);
}

/* ---------------------------------------------------------------------
 * Shape, Size
 * --------------------------------------------------------------------- */

ox_code
oxt_shape_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "data");
	int64_t		start = 0;
	int64_t		end;
	int64_t		n;
	ox_tensor  *out;

	if (!x)
		return ctx->st->code;
	end = x->rank;
	if (ctx->node->opset >= 15)
	{
		start = ox_attr_int(ctx->node, "start", 0);
		end = ox_attr_int(ctx->node, "end", x->rank);
		if (start < 0)
			start += x->rank;
		if (end < 0)
			end += x->rank;
		start = start < 0 ? 0 : start > x->rank ? x->rank : start;
		end = end < 0 ? 0 : end > x->rank ? x->rank : end;
	}
	n = end > start ? end - start : 0;
	if (!(out = ox_out_tensor(ctx, 0, OX_INT64, 1, &n)))
		return ctx->st->code;
	for (int64_t i = 0; i < n; i++)
		OX_DATA(out, int64_t)[i] = x->dims[start + i];
	return OX_OK;
}

ox_code
oxt_size_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "data");
	ox_tensor  *out;
	int64_t		n;

	if (!x)
		return ctx->st->code;
	if ((n = oxt_numel(ctx, x, "data")) < 0)
		return ctx->st->code;
	if (!(out = ox_out_tensor(ctx, 0, OX_INT64, 0, NULL)))
		return ctx->st->code;
	OX_DATA(out, int64_t)[0] = n;
	return OX_OK;
}

/* ---------------------------------------------------------------------
 * the family table
 * --------------------------------------------------------------------- */

const ox_kernel_def ox_kernels_tensor[] = {
	{"", "Reshape", 1, NULL, oxt_reshape_run, NULL},
	{"", "Flatten", 1, oxt_axis_prepare, oxt_flatten_run, oxt_free_state},
	{"", "Squeeze", 1, NULL, oxt_squeeze_run, NULL},
	{"", "Unsqueeze", 1, NULL, oxt_unsqueeze_run, NULL},
	{"", "Identity", 1, NULL, oxt_identity_run, NULL},
	{"", "Shape", 1, NULL, oxt_shape_run, NULL},
	{"", "Size", 1, NULL, oxt_size_run, NULL},
	{"", "Constant", 1, NULL, oxt_constant_run, NULL},
	{"", "ConstantOfShape", 9, NULL, oxt_constant_of_shape_run, NULL},
	{"", "Dropout", 1, NULL, oxt_dropout_run, NULL},
	{"", "Range", 11, NULL, oxt_range_run, NULL},
	{"", "EyeLike", 9, NULL, oxt_eye_like_run, NULL},
	{"", "Transpose", 1, oxt_axis_prepare, oxt_transpose_run, oxt_free_state},
	{"", "DepthToSpace", 1, oxt_block_prepare, oxt_depth_to_space_run, NULL},
	{"", "SpaceToDepth", 1, oxt_block_prepare, oxt_space_to_depth_run, NULL},
	{"", "Expand", 8, NULL, oxt_expand_run, NULL},
	{"", "Tile", 1, NULL, oxt_tile_run, NULL},
	{"", "Slice", 1, NULL, oxt_slice_run, NULL},
	{"", "Concat", 1, oxt_axis_prepare, oxt_concat_run, oxt_free_state},
	{"", "Split", 1, NULL, oxt_split_run, NULL},
	{"", "Pad", 1, oxt_pad_prepare, oxt_pad_run, NULL},
	{"", "Compress", 9, NULL, oxt_compress_run, NULL},
	{"", "Trilu", 14, NULL, oxt_trilu_run, NULL},
	{"", "ReverseSequence", 10, NULL, oxt_reverse_sequence_run, NULL},
	{"", "Gather", 1, oxt_axis_prepare, oxt_gather_run, oxt_free_state},
	{OX_PRIVATE_FUSED_DOMAIN, "GatherReduce", 1, NULL, oxt_gather_reduce_run, NULL, .tensor_outputs = true},
	{"", "GatherElements", 11, NULL, oxt_gather_elements_run, NULL},
	{"", "GatherND", 11, NULL, oxt_gather_nd_run, NULL},
	{"", "Scatter", 9, NULL, oxt_scatter_elements_run, NULL},
	{"", "ScatterElements", 11, NULL, oxt_scatter_elements_run, NULL},
	{"", "ScatterND", 11, NULL, oxt_scatter_nd_run, NULL},
	{"", "OneHot", 9, NULL, oxt_one_hot_run, NULL},
	{"", "NonZero", 9, NULL, oxt_non_zero_run, NULL},
	{"", "TopK", 1, NULL, oxt_topk_run, NULL},
	{"", "Unique", 11, NULL, oxt_unique_run, NULL},
	{"", "CumSum", 11, NULL, oxt_cumsum_run, NULL},
	{"", "CumProd", 26, NULL, oxt_cumprod_run, NULL},
	{"", "Resize", 10, oxt_resize_prepare, oxt_resize_run, oxt_resize_free},
	{"", "Upsample", 7, oxt_resize_prepare, oxt_resize_run, oxt_resize_free},
	{"", "Col2Im", 18, NULL, oxt_col2im_run, NULL},
};

const int	ox_kernels_tensor_count = OX_KERNEL_COUNT(ox_kernels_tensor);
