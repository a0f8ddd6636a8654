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
	char	   *p = malloc(len + 1);

	if (!p)
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: could not copy a string of %zu bytes",
					   ctx->node->op_type, len);
	if (len)
		memcpy(p, data, len);
	p[len] = '\0';
	free(dst->data);
	dst->data = p;
	dst->len = len;
	return OX_OK;
}

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
			OX_TRY(oxt_string_set(ctx, &d[i], s[i].data, s[i].len));
		return OX_OK;
	}
	memcpy(dst, src, (size_t) n * ox_dtype_size(dt));
	return OX_OK;
}

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
			OX_TRY(oxt_string_set(ctx, &((ox_string *) dst)[i], s->data, s->len));
		return OX_OK;
	}
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
	return OX_OK;
}

ox_code
oxt_output_copy(ox_kernel_ctx *ctx, int i, const ox_tensor *src, int rank, const int64_t *dims)
{
	ox_tensor  *out = ox_out_tensor(ctx, i, src->dtype, rank, dims);

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
	int64_t		axis = ox_attr_int(ctx->node, "axis", 1);
	int64_t		dims[2] = {1, 1};

	if (!x)
		return ctx->st->code;
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
 * Constant, ConstantOfShape
 * --------------------------------------------------------------------- */

ox_code
oxt_constant_run(ox_kernel_ctx *ctx)
{
	const ox_node *node = ctx->node;
	const ox_attr *a = NULL;
	int			found = 0;
	static const char *const names[] = {
		"value", "value_float", "value_floats", "value_int", "value_ints",
		"value_string", "value_strings", "sparse_value"
	};
	ox_tensor  *out;
	int64_t		n;

	for (int i = 0; i < (int) (sizeof(names) / sizeof(names[0])); i++)
	{
		const ox_attr *c = ox_node_attr(node, names[i]);

		if (c)
		{
			a = c;
			found++;
		}
	}
	if (found != 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "Constant: exactly one value attribute must be set, found %d", found);
	if (strcmp(a->name, "sparse_value") == 0)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "Constant: sparse_value is not supported");
	if (strcmp(a->name, "value") == 0)
	{
		if (a->type != OX_ATTR_TENSOR || !a->t)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Constant: attribute value is not a tensor");
		if (oxt_numel(ctx, a->t, "value") < 0)
			return ctx->st->code;
		return oxt_output_copy(ctx, 0, a->t, a->t->rank, a->t->dims);
	}
	if (strcmp(a->name, "value_float") == 0)
	{
		if (!(out = ox_out_tensor(ctx, 0, OX_FLOAT, 0, NULL)))
			return ctx->st->code;
		OX_DATA(out, float)[0] = a->f;
		return OX_OK;
	}
	if (strcmp(a->name, "value_int") == 0)
	{
		if (!(out = ox_out_tensor(ctx, 0, OX_INT64, 0, NULL)))
			return ctx->st->code;
		OX_DATA(out, int64_t)[0] = a->i;
		return OX_OK;
	}
	if (strcmp(a->name, "value_string") == 0)
	{
		if (!(out = ox_out_tensor(ctx, 0, OX_STRING, 0, NULL)))
			return ctx->st->code;
		return oxt_string_set(ctx, OX_DATA(out, ox_string), a->s ? a->s : "",
							  a->s ? a->s_len : 0);
	}
	n = a->n;
	if (strcmp(a->name, "value_floats") == 0)
	{
		if (!(out = ox_out_tensor(ctx, 0, OX_FLOAT, 1, &n)))
			return ctx->st->code;
		if (n)
			memcpy(out->data, a->floats, sizeof(float) * n);
		return OX_OK;
	}
	if (strcmp(a->name, "value_ints") == 0)
	{
		if (!(out = ox_out_tensor(ctx, 0, OX_INT64, 1, &n)))
			return ctx->st->code;
		if (n)
			memcpy(out->data, a->ints, sizeof(int64_t) * n);
		return OX_OK;
	}
	/* value_strings */
	if (!(out = ox_out_tensor(ctx, 0, OX_STRING, 1, &n)))
		return ctx->st->code;
	for (int64_t i = 0; i < n; i++)
	{
		const char *s = a->strings[i] ? a->strings[i] : "";
		size_t		len = a->string_lens ? a->string_lens[i] : strlen(s);

		OX_TRY(oxt_string_set(ctx, &OX_DATA(out, ox_string)[i], s, len));
	}
	return OX_OK;
}

ox_code
oxt_constant_of_shape_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *s = oxt_input(ctx, 0, "input");
	const ox_tensor *value = ox_attr_tensor(ctx->node, "value");
	int64_t		dims[OX_MAX_RANK];
	int			n;
	float		zero = 0.0f;
	ox_tensor  *out;
	int64_t		total;

	if (!s)
		return ctx->st->code;
	if (s->dtype != OX_INT64)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "ConstantOfShape: input must be int64, got %s",
					   ox_dtype_name(s->dtype));
	OX_TRY(oxt_read_ints(ctx, s, dims, OX_MAX_RANK, &n, "input"));
	for (int i = 0; i < n; i++)
		if (dims[i] < 0)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "ConstantOfShape: dimension %d is negative (%lld)",
						   i, (long long) dims[i]);
	if ((total = ox_shape_numel(n, dims)) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "ConstantOfShape: shape has too many elements");
	if (value && ox_tensor_numel(value) != 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "ConstantOfShape: value must hold one element, got %lld",
					   (long long) ox_tensor_numel(value));
	if (!(out = ox_out_tensor(ctx, 0, value ? value->dtype : OX_FLOAT, n, dims)))
		return ctx->st->code;
	return oxt_fill(ctx, out->dtype, out->data, value ? value->data : &zero, total);
}

/* ---------------------------------------------------------------------
 * Dropout
 *
 * Inference is the identity with an all-true mask.  Training mode with a
 * ratio above zero draws the keep mask from MT19937 seeded like numpy's
 * RandomState(seed), which is what the ONNX reference uses, so a given seed
 * produces the same mask as the reference.
 * --------------------------------------------------------------------- */

typedef struct mt19937
{
	uint32_t	mt[624];
	int			pos;
} mt19937;

static void
mt_seed(mt19937 *m, uint32_t seed)
{
	m->mt[0] = seed;
	for (int i = 1; i < 624; i++)
		m->mt[i] = 1812433253u * (m->mt[i - 1] ^ (m->mt[i - 1] >> 30)) + (uint32_t) i;
	m->pos = 624;
}

static uint32_t
mt_next(mt19937 *m)
{
	uint32_t	y;

	if (m->pos >= 624)
	{
		for (int i = 0; i < 624; i++)
		{
			y = (m->mt[i] & 0x80000000u) | (m->mt[(i + 1) % 624] & 0x7fffffffu);
			m->mt[i] = m->mt[(i + 397) % 624] ^ (y >> 1) ^ ((y & 1) ? 0x9908b0dfu : 0);
		}
		m->pos = 0;
	}
	y = m->mt[m->pos++];
	y ^= y >> 11;
	y ^= (y << 7) & 0x9d2c5680u;
	y ^= (y << 15) & 0xefc60000u;
	y ^= y >> 18;
	return y;
}

/* numpy's random_double: 53 random bits in [0, 1) */
static double
mt_double(mt19937 *m)
{
	uint32_t	a = mt_next(m) >> 5;
	uint32_t	b = mt_next(m) >> 6;

	return (a * 67108864.0 + b) / 9007199254740992.0;
}

ox_code
oxt_dropout_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "data");
	double		ratio = 0.5;
	bool		training = false;
	int64_t		n;
	ox_tensor  *out;
	ox_tensor  *mask;
	ox_dtype	mask_dt;
	mt19937    *rng;

	if (!x)
		return ctx->st->code;
	if ((n = oxt_numel(ctx, x, "data")) < 0)
		return ctx->st->code;
	if (ctx->node->opset >= 12)
	{
		if (ox_in_tensor(ctx, 1))
			OX_TRY(oxt_scalar_double(ctx, ox_in_tensor(ctx, 1), &ratio, "ratio"));
		if (ox_in_tensor(ctx, 2))
		{
			int64_t		t;

			OX_TRY(oxt_scalar_int(ctx, ox_in_tensor(ctx, 2), &t, "training_mode"));
			training = t != 0;
		}
	}
	else
	{
		/*
		 * Before opset 7, is_test=0 asked for training behaviour; like other
		 * inference engines we always run these old forms as inference.
		 */
		ratio = ox_attr_float(ctx->node, "ratio", 0.5f);
	}
	if (training && (ratio < 0 || ratio >= 1 || isnan(ratio)))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Dropout: ratio %g must be in [0, 1)", ratio);
	mask_dt = ctx->node->opset >= 10 ? OX_BOOL : x->dtype;
	if (!training || ratio == 0)
	{
		OX_TRY(oxt_output_copy(ctx, 0, x, x->rank, x->dims));
		if (ctx->n_out > 1)
		{
			double		one = 1.0;
			uint8_t		buf[16];

			if (!(mask = ox_out_tensor(ctx, 1, mask_dt, x->rank, x->dims)))
				return ctx->st->code;
			if (mask_dt == OX_STRING)
				return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Dropout: string input is not supported");
			OX_TRY(ox_convert_elements(buf, mask_dt, &one, OX_DOUBLE, 1, ctx->st));
			OX_TRY(oxt_fill(ctx, mask_dt, mask->data, buf, n));
		}
		return OX_OK;
	}
	if (!ox_dtype_is_float(x->dtype))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Dropout: input must be a float type, got %s",
					   ox_dtype_name(x->dtype));
	if (!(out = ox_out_tensor(ctx, 0, x->dtype, x->rank, x->dims)))
		return ctx->st->code;
	mask = NULL;
	if (ctx->n_out > 1 && !(mask = ox_out_tensor(ctx, 1, OX_BOOL, x->rank, x->dims)))
		return ctx->st->code;
	if (!(rng = malloc(sizeof(mt19937))))
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Dropout: could not allocate the generator");
	mt_seed(rng, (uint32_t) ox_attr_int(ctx->node, "seed", 0));
	for (int64_t i = 0; i < n; i++)
	{
		bool		keep = mt_double(rng) >= ratio;
		double		v = keep ? ox_tensor_get_double(x, i) / (1.0 - ratio) : 0.0;

		OX_TRY(ox_convert_elements((char *) out->data + i * ox_dtype_size(x->dtype), x->dtype,
								   &v, OX_DOUBLE, 1, ctx->st));
		if (mask)
			OX_DATA(mask, uint8_t)[i] = keep;
	}
	free(rng);
	return OX_OK;
}

/* ---------------------------------------------------------------------
 * Range, EyeLike
 * --------------------------------------------------------------------- */

ox_code
oxt_range_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *ts = oxt_input(ctx, 0, "start");
	const ox_tensor *tl = oxt_input(ctx, 1, "limit");
	const ox_tensor *td = oxt_input(ctx, 2, "delta");
	ox_dtype	dt;
	int64_t		n;
	ox_tensor  *out;

	if (!ts || !tl || !td)
		return ctx->st->code;
	dt = ts->dtype;
	if (tl->dtype != dt || td->dtype != dt)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Range: start, limit and delta types differ (%s, %s, %s)",
					   ox_dtype_name(dt), ox_dtype_name(tl->dtype), ox_dtype_name(td->dtype));
	if (ox_dtype_is_int(dt))
	{
		int64_t		s,
					l,
					d;
		__int128	span;

		OX_TRY(oxt_scalar_int(ctx, ts, &s, "start"));
		OX_TRY(oxt_scalar_int(ctx, tl, &l, "limit"));
		OX_TRY(oxt_scalar_int(ctx, td, &d, "delta"));
		if (d == 0)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Range: delta must not be zero");
		span = (__int128) l - s;
		/* ceil(span / d), clamped at zero */
		if ((span > 0) != (d > 0) || span == 0)
			n = 0;
		else
		{
			__int128	q = span / d + (span % d != 0);

			if (q > OX_MAX_ELEMENTS)
				return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "Range: %lld elements exceed the limit",
							   (long long) (q > INT64_MAX ? INT64_MAX : q));
			n = (int64_t) q;
		}
		if (!(out = ox_out_tensor(ctx, 0, dt, 1, &n)))
			return ctx->st->code;
		for (int64_t i = 0; i < n; i++)
		{
			int64_t		v = s + i * d;

			OX_TRY(ox_convert_elements((char *) out->data + i * ox_dtype_size(dt), dt, &v,
									   OX_INT64, 1, ctx->st));
		}
		return OX_OK;
	}
	if (ox_dtype_is_float(dt))
	{
		double		s,
					l,
					d,
					q;

		OX_TRY(oxt_scalar_double(ctx, ts, &s, "start"));
		OX_TRY(oxt_scalar_double(ctx, tl, &l, "limit"));
		OX_TRY(oxt_scalar_double(ctx, td, &d, "delta"));
		if (d == 0 || isnan(d) || isnan(s) || isnan(l))
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Range: delta must be non-zero and values not NaN");
		q = ceil((l - s) / d);
		if (!(q <= (double) OX_MAX_ELEMENTS))
			return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "Range: %g elements exceed the limit", q);
		n = q > 0 ? (int64_t) q : 0;
		if (!(out = ox_out_tensor(ctx, 0, dt, 1, &n)))
			return ctx->st->code;
		if (dt == OX_FLOAT)
		{
			/* accumulate like the reference (start + i * delta in the element type) */
			float		fs = (float) s,
						fd = (float) d;

			for (int64_t i = 0; i < n; i++)
				OX_DATA(out, float)[i] = fs + (float) i * fd;
			return OX_OK;
		}
		for (int64_t i = 0; i < n; i++)
		{
			double		v = s + (double) i * d;

			OX_TRY(ox_convert_elements((char *) out->data + i * ox_dtype_size(dt), dt, &v,
									   OX_DOUBLE, 1, ctx->st));
		}
		return OX_OK;
	}
	return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Range: unsupported type %s", ox_dtype_name(dt));
}

ox_code
oxt_eye_like_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "input");
	int64_t		k = ox_attr_int(ctx->node, "k", 0);
	int64_t		dt_attr = ox_attr_int(ctx->node, "dtype", -1);
	ox_dtype	dt;
	ox_tensor  *out;
	double		one = 1.0;
	size_t		es;

	if (!x)
		return ctx->st->code;
	dt = dt_attr >= 0 ? (ox_dtype) dt_attr : x->dtype;
	if (x->rank != 2)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "EyeLike: input must be 2-D, got rank %d", x->rank);
	if (dt_attr >= OX_DTYPE_COUNT || dt == OX_STRING || dt == OX_UNDEFINED ||
		dt == OX_COMPLEX64 || dt == OX_COMPLEX128)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "EyeLike: unsupported output type %lld",
					   (long long) dt);
	if (oxt_numel(ctx, x, "input") < 0)
		return ctx->st->code;
	if (!(out = ox_out_tensor(ctx, 0, dt, 2, x->dims)))
		return ctx->st->code;
	es = ox_dtype_size(dt);
	memset(out->data, 0, (size_t) ox_tensor_numel(out) * es);
	for (int64_t i = 0; i < x->dims[0]; i++)
	{
		int64_t		j = i + k;

		if (j >= 0 && j < x->dims[1])
			OX_TRY(ox_convert_elements((char *) out->data + (i * x->dims[1] + j) * es, dt,
									   &one, OX_DOUBLE, 1, ctx->st));
	}
	return OX_OK;
}

/* ---------------------------------------------------------------------
 * the family table
 * --------------------------------------------------------------------- */

const ox_kernel_def ox_kernels_tensor[] = {
	{"", "Reshape", 1, NULL, oxt_reshape_run, NULL},
	{"", "Flatten", 1, NULL, oxt_flatten_run, NULL},
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
	{"", "Transpose", 1, NULL, oxt_transpose_run, NULL},
	{"", "DepthToSpace", 1, NULL, oxt_depth_to_space_run, NULL},
	{"", "SpaceToDepth", 1, NULL, oxt_space_to_depth_run, NULL},
	{"", "Expand", 8, NULL, oxt_expand_run, NULL},
	{"", "Tile", 1, NULL, oxt_tile_run, NULL},
	{"", "Slice", 1, NULL, oxt_slice_run, NULL},
	{"", "Concat", 1, NULL, oxt_concat_run, NULL},
	{"", "Split", 1, NULL, oxt_split_run, NULL},
	{"", "Pad", 1, NULL, oxt_pad_run, NULL},
	{"", "Compress", 9, NULL, oxt_compress_run, NULL},
	{"", "Trilu", 14, NULL, oxt_trilu_run, NULL},
	{"", "ReverseSequence", 10, NULL, oxt_reverse_sequence_run, NULL},
	{"", "Gather", 1, NULL, oxt_gather_run, NULL},
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
	{"", "Resize", 10, oxt_resize_prepare, oxt_resize_run, oxt_resize_free},
	{"", "Upsample", 7, oxt_resize_prepare, oxt_resize_run, oxt_resize_free},
	{"", "Col2Im", 18, NULL, oxt_col2im_run, NULL},
};

const int	ox_kernels_tensor_count = OX_KERNEL_COUNT(ox_kernels_tensor);
