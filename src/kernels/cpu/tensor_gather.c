/*
 * tensor_gather.c
 *	  Index-driven data movement: Gather, GatherElements, GatherND,
 *	  ScatterElements (and its deprecated alias Scatter), ScatterND, OneHot
 *	  and NonZero.
 *
 * Every index is range-checked (negative indices count from the end) before
 * any element is moved, so a bad index is an error, never a stray access.
 */
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/tensor_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static ox_code
check_index_type(ox_kernel_ctx *ctx, const ox_tensor *t)
{
	if (t->dtype != OX_INT64 && t->dtype != OX_INT32)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: indices must be int64 or int32, got %s",
					   ctx->node->op_type, ox_dtype_name(t->dtype));
	if (oxt_numel(ctx, t, "indices") < 0)
		return ctx->st->code;
	return OX_OK;
}

static inline int64_t
index_at(const ox_tensor *t, int64_t i)
{
	return t->dtype == OX_INT64 ? OX_DATA(t, int64_t)[i] : OX_DATA(t, int32_t)[i];
}

/* normalize a possibly negative index against dim, or fail */
static inline ox_code
fix_index(ox_kernel_ctx *ctx, int64_t *v, int64_t dim, int axis)
{
	int64_t		raw = *v;

	if (raw < 0)
		*v += dim;
	if (*v < 0 || *v >= dim)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "%s: index %lld is out of range for axis %d of size %lld",
					   ctx->node->op_type, (long long) raw, axis, (long long) dim);
	return OX_OK;
}

/* ---------------------------------------------------------------------
 * Gather
 * --------------------------------------------------------------------- */

ox_code
oxt_gather_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "data");
	const ox_tensor *ind = oxt_input(ctx, 1, "indices");
	const oxt_attr_cache *c = oxt_cache(ctx);
	int			axis;
	int64_t		dims[OX_MAX_RANK];
	int			r = 0;
	int64_t		outer = 1,
				inner = 1,
				dim,
				n;
	ox_tensor  *out;
	size_t		es;
	char	   *d;

	if (!x || !ind || !c)
		return ctx->st->code;
	if (oxt_numel(ctx, x, "data") < 0)
		return ctx->st->code;
	OX_TRY(check_index_type(ctx, ind));
	OX_TRY(oxt_axis(ctx, c->axis, x->rank, &axis, "axis"));
	if (x->rank - 1 + ind->rank > OX_MAX_RANK)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Gather: output rank %d exceeds the limit of %d",
					   x->rank - 1 + ind->rank, OX_MAX_RANK);
	dim = x->dims[axis];
	n = ox_tensor_numel(ind);
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		v = index_at(ind, i);

		OX_TRY(fix_index(ctx, &v, dim, axis));
	}
	for (int i = 0; i < axis; i++)
	{
		dims[r++] = x->dims[i];
		outer *= x->dims[i];
	}
	for (int i = 0; i < ind->rank; i++)
		dims[r++] = ind->dims[i];
	for (int i = axis + 1; i < x->rank; i++)
	{
		dims[r++] = x->dims[i];
		inner *= x->dims[i];
	}
	if (ox_shape_numel(r, dims) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "Gather: output has too many elements");
	if (!(out = ox_out_tensor(ctx, 0, x->dtype, r, dims)))
		return ctx->st->code;
	/* an empty output (X or the indices empty) has no data to offset from */
	if (ox_tensor_numel(out) == 0)
		return OX_OK;
	es = ox_dtype_size(x->dtype);
	d = out->data;
	if (x->dtype != OX_STRING && inner == 1 && es == 4)
	{
		/* embedding-style lookups of single 4-byte elements */
		for (int64_t o = 0; o < outer; o++)
		{
			const uint32_t *s = (const uint32_t *) x->data + o * dim;
			uint32_t   *dd = (uint32_t *) d + o * n;

			for (int64_t i = 0; i < n; i++)
			{
				int64_t		v = index_at(ind, i);

				dd[i] = s[v < 0 ? v + dim : v];
			}
			if (ox_kernel_poll(ctx, n))
				return ctx->st->code;
		}
		return OX_OK;
	}
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < n; i++)
		{
			int64_t		v = index_at(ind, i);
			const char *s;

			/* the output can be far bigger than both inputs */
			if (ox_kernel_poll(ctx, inner))
				return ctx->st->code;
			if (v < 0)
				v += dim;
			s = (const char *) x->data + (size_t) ((o * dim + v) * inner) * es;
			if (x->dtype == OX_STRING)
				OX_TRY(oxt_copy_elems(ctx, OX_STRING, d, s, inner));
			else
				memcpy(d, s, (size_t) inner * es);
			d += (size_t) inner * es;
		}
	return OX_OK;
}

/* ---------------------------------------------------------------------
 * onnx_pg.fused GatherReduce (passes/fuse_gather_reduce.c): Gather of
 * rows of a float32 [V, E] table by indices [..., L], then ReduceSum or
 * ReduceMean (mean = 1) over the L axis (kept as 1 with keepdims = 1):
 * an embedding bag.  Unfused, the [..., L, E] gathered rows are written
 * out and read back; here each output row sums its L table rows as they
 * are read.  The sums run in index order, as the unfused reduction's.
 * --------------------------------------------------------------------- */

typedef struct gather_reduce_job
{
	const float *table;
	const ox_tensor *ind;
	int64_t		rows,
				len,			/* L */
				width,			/* E */
				vocab;			/* V */
	bool		mean;
	float	   *out;
} gather_reduce_job;

/* one output row: y = the sum of the L table rows idx[0..L) (y already zero) */
OX_SIMD_CLONES static void
gather_reduce_row(float *restrict y, const float *restrict table, const ox_tensor *ind, int64_t first,
				  int64_t len, int64_t width, int64_t vocab)
{
	for (int64_t l = 0; l < len; l++)
	{
		int64_t		v = index_at(ind, first + l);
		const float *restrict x = table + (v < 0 ? v + vocab : v) * width;

		for (int64_t e = 0; e < width; e++)
			y[e] += x[e];
	}
}

static void
gather_reduce_rows(void *arg, int64_t begin, int64_t end)
{
	const gather_reduce_job *j = arg;
	const int64_t width = j->width,
				len = j->len;

	for (int64_t b = begin; b < end; b++)
	{
		float	   *y = j->out + b * width;

		memset(y, 0, (size_t) width * sizeof(float));
		gather_reduce_row(y, j->table, j->ind, b * len, len, width, j->vocab);
		if (j->mean)
		{
			/* an empty bag is 0 / 0, NaN, as ReduceMean of nothing */
			const float f = len ? 1.0f / (float) len : NAN;

			for (int64_t e = 0; e < width; e++)
				y[e] *= f;
		}
	}
}

ox_code
oxt_gather_reduce_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "data");
	const ox_tensor *ind = oxt_input(ctx, 1, "indices");
	bool		keep = ox_attr_int(ctx->node, "keepdims", 1) != 0;
	gather_reduce_job j;
	int64_t		dims[OX_MAX_RANK];
	int			r = 0;
	ox_tensor  *out;

	if (!x || !ind)
		return ctx->st->code;
	OX_TRY(check_index_type(ctx, ind));
	if (x->dtype != OX_FLOAT || x->rank != 2 || ind->rank < 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "GatherReduce: needs a float32 table of rank 2 and indices of rank 1 or more");
	j.table = x->data;
	j.ind = ind;
	j.vocab = x->dims[0];
	j.width = x->dims[1];
	j.len = ind->dims[ind->rank - 1];
	j.mean = ox_attr_int(ctx->node, "mean", 0) != 0;
	j.rows = 1;
	for (int i = 0; i < ind->rank - 1; i++)
	{
		dims[r++] = ind->dims[i];
		j.rows *= ind->dims[i];
	}
	if (keep)
		dims[r++] = 1;
	dims[r++] = j.width;
	for (int64_t i = 0, n = ox_tensor_numel(ind); i < n; i++)
	{
		int64_t		v = index_at(ind, i);

		OX_TRY(fix_index(ctx, &v, j.vocab, 0));
	}
	if (!(out = ox_out_tensor(ctx, 0, OX_FLOAT, r, dims)))
		return ctx->st->code;
	if (ox_tensor_numel(out) == 0)
		return OX_OK;
	j.out = out->data;
	ox_parallel_for(ctx, j.rows, 1 + 4096 / (1 + j.len * j.width), gather_reduce_rows, &j);
	return ctx->st->code;
}

/* ---------------------------------------------------------------------
 * GatherElements
 * --------------------------------------------------------------------- */

/* checks shared by GatherElements and ScatterElements */
static ox_code
elements_shapes(ox_kernel_ctx *ctx, const ox_tensor *x, const ox_tensor *ind, int axis)
{
	char		b1[128],
				b2[128];

	if (ind->rank != x->rank)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: indices have rank %d but data has rank %d",
					   ctx->node->op_type, ind->rank, x->rank);
	for (int k = 0; k < x->rank; k++)
		if (k != axis && ind->dims[k] > x->dims[k])
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "%s: indices %s do not fit data %s on axis %d",
						   ctx->node->op_type, OXT_SHAPE(ind, b1), OXT_SHAPE(x, b2), k);
	return OX_OK;
}

ox_code
oxt_gather_elements_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "data");
	const ox_tensor *ind = oxt_input(ctx, 1, "indices");
	int			axis;
	int64_t		xs[OX_MAX_RANK];
	int64_t		idx[OX_MAX_RANK] = {0};
	int64_t		n;
	ox_tensor  *out;
	size_t		es;

	if (!x || !ind)
		return ctx->st->code;
	if (oxt_numel(ctx, x, "data") < 0)
		return ctx->st->code;
	OX_TRY(check_index_type(ctx, ind));
	OX_TRY(oxt_axis(ctx, ox_attr_int(ctx->node, "axis", 0), x->rank, &axis, "axis"));
	OX_TRY(elements_shapes(ctx, x, ind, axis));
	n = ox_tensor_numel(ind);
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		v = index_at(ind, i);

		OX_TRY(fix_index(ctx, &v, x->dims[axis], axis));
	}
	if (!(out = ox_out_tensor(ctx, 0, x->dtype, ind->rank, ind->dims)))
		return ctx->st->code;
	oxt_strides(x->rank, x->dims, xs);
	es = ox_dtype_size(x->dtype);
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		off = 0;
		int64_t		v = index_at(ind, i);

		if (v < 0)
			v += x->dims[axis];
		for (int k = 0; k < x->rank; k++)
			off += (k == axis ? v : idx[k]) * xs[k];
		OX_TRY(oxt_copy_elems(ctx, x->dtype, (char *) out->data + (size_t) i * es,
							  (const char *) x->data + (size_t) off * es, 1));
		for (int k = x->rank - 1; k >= 0; k--)
		{
			if (++idx[k] < ind->dims[k])
				break;
			idx[k] = 0;
		}
	}
	return OX_OK;
}

/* ---------------------------------------------------------------------
 * GatherND
 * --------------------------------------------------------------------- */

ox_code
oxt_gather_nd_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "data");
	const ox_tensor *ind = oxt_input(ctx, 1, "indices");
	int64_t		b = ctx->node->opset >= 12 ? ox_attr_int(ctx->node, "batch_dims", 0) : 0;
	int64_t		k,
				batches = 1,
				per_batch = 1,
				slice = 1,
				batch_stride = 1;
	int64_t		dims[OX_MAX_RANK];
	int64_t		xs[OX_MAX_RANK];
	int			r = 0;
	ox_tensor  *out;
	size_t		es;

	if (!x || !ind)
		return ctx->st->code;
	if (oxt_numel(ctx, x, "data") < 0)
		return ctx->st->code;
	if (ind->dtype != OX_INT64)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "GatherND: indices must be int64, got %s",
					   ox_dtype_name(ind->dtype));
	OX_TRY(check_index_type(ctx, ind));
	if (x->rank < 1 || ind->rank < 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "GatherND: data and indices must have rank >= 1");
	if (b < 0 || b >= ind->rank || b >= x->rank)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "GatherND: batch_dims %lld must be below both ranks (%d, %d)",
					   (long long) b, x->rank, ind->rank);
	k = ind->dims[ind->rank - 1];
	if (k < 1 || k > x->rank - b)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "GatherND: last indices dimension is %lld, must be in [1, %lld]",
					   (long long) k, (long long) (x->rank - b));
	for (int i = 0; i < b; i++)
	{
		if (ind->dims[i] != x->dims[i])
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "GatherND: batch dimension %d differs: data %lld, indices %lld",
						   i, (long long) x->dims[i], (long long) ind->dims[i]);
		batches *= x->dims[i];
	}
	for (int i = 0; i < ind->rank - 1; i++)
		dims[r++] = ind->dims[i];
	for (int i = (int) (b + k); i < x->rank; i++)
	{
		if (r >= OX_MAX_RANK)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "GatherND: output rank exceeds the limit");
		dims[r++] = x->dims[i];
		slice *= x->dims[i];
	}
	for (int i = (int) b; i < ind->rank - 1; i++)
		per_batch *= ind->dims[i];
	for (int i = (int) b; i < x->rank; i++)
		batch_stride *= x->dims[i];
	oxt_strides(x->rank, x->dims, xs);
	/* validate every index tuple first */
	for (int64_t t = 0; t < batches * per_batch; t++)
		for (int64_t j = 0; j < k; j++)
		{
			int64_t		v = OX_DATA(ind, int64_t)[t * k + j];

			OX_TRY(fix_index(ctx, &v, x->dims[b + j], (int) (b + j)));
		}
	if (ox_shape_numel(r, dims) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "GatherND: output has too many elements");
	if (!(out = ox_out_tensor(ctx, 0, x->dtype, r, dims)))
		return ctx->st->code;
	/* an empty output (no tuples, or empty slices) has no data to offset from */
	if (ox_tensor_numel(out) == 0)
		return OX_OK;
	es = ox_dtype_size(x->dtype);
	for (int64_t bi = 0; bi < batches; bi++)
		for (int64_t j = 0; j < per_batch; j++)
		{
			int64_t		t = bi * per_batch + j;
			int64_t		off = bi * batch_stride;

			for (int64_t q = 0; q < k; q++)
			{
				int64_t		v = OX_DATA(ind, int64_t)[t * k + q];

				off += (v < 0 ? v + x->dims[b + q] : v) * xs[b + q];
			}
			OX_TRY(oxt_copy_elems(ctx, x->dtype, (char *) out->data + (size_t) (t * slice) * es,
								  (const char *) x->data + (size_t) off * es, slice));
		}
	return OX_OK;
}

/* ---------------------------------------------------------------------
 * scatter reductions
 * --------------------------------------------------------------------- */

typedef enum scatter_op
{
	SCATTER_NONE,
	SCATTER_ADD,
	SCATTER_MUL,
	SCATTER_MAX,
	SCATTER_MIN
} scatter_op;

static ox_code
scatter_reduction(ox_kernel_ctx *ctx, ox_dtype dt, scatter_op *op)
{
	const char *s = ctx->node->opset >= 16 ? ox_attr_string(ctx->node, "reduction", "none") : "none";

	if (strcmp(s, "none") == 0)
		*op = SCATTER_NONE;
	else if (strcmp(s, "add") == 0)
		*op = SCATTER_ADD;
	else if (strcmp(s, "mul") == 0)
		*op = SCATTER_MUL;
	else if (strcmp(s, "max") == 0 && ctx->node->opset >= 18)
		*op = SCATTER_MAX;
	else if (strcmp(s, "min") == 0 && ctx->node->opset >= 18)
		*op = SCATTER_MIN;
	else
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: unsupported reduction \"%s\"", ctx->node->op_type, s);
	if (*op != SCATTER_NONE && (dt == OX_STRING || dt == OX_COMPLEX64 || dt == OX_COMPLEX128))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: reduction \"%s\" is not defined for %s",
					   ctx->node->op_type, s, ox_dtype_name(dt));
	return OX_OK;
}

#define REDUCE_LOOP(T, EXPR) \
	do { \
		T		   *d_ = dst; \
		const T    *s_ = src; \
		for (int64_t i_ = 0; i_ < n; i_++) \
		{ \
			T			a = d_[i_], b = s_[i_]; \
			d_[i_] = (EXPR); \
		} \
	} while (0)

#define REDUCE_TYPED(T) \
	do { \
		switch (op) \
		{ \
			case SCATTER_ADD: REDUCE_LOOP(T, (T) (a + b)); break; \
			case SCATTER_MUL: REDUCE_LOOP(T, (T) (a * b)); break; \
			case SCATTER_MAX: REDUCE_LOOP(T, a > b ? a : b); break; \
			case SCATTER_MIN: REDUCE_LOOP(T, a < b ? a : b); break; \
			default: break; \
		} \
	} while (0)

/* dst[i] = dst[i] op src[i] for n elements */
static ox_code
scatter_apply(ox_kernel_ctx *ctx, ox_dtype dt, scatter_op op, void *dst, const void *src, int64_t n)
{
	if (op == SCATTER_NONE)
		return oxt_copy_elems(ctx, dt, dst, src, n);
	switch (dt)
	{
		case OX_FLOAT:
			REDUCE_TYPED(float);
			break;
		case OX_DOUBLE:
			REDUCE_TYPED(double);
			break;
		case OX_INT8:
			REDUCE_TYPED(int8_t);
			break;
		case OX_UINT8:
			REDUCE_TYPED(uint8_t);
			break;
		case OX_INT16:
			REDUCE_TYPED(int16_t);
			break;
		case OX_UINT16:
			REDUCE_TYPED(uint16_t);
			break;
		case OX_INT32:
			REDUCE_TYPED(int32_t);
			break;
		case OX_UINT32:
			REDUCE_TYPED(uint32_t);
			break;
		case OX_INT64:
			REDUCE_TYPED(int64_t);
			break;
		case OX_UINT64:
			REDUCE_TYPED(uint64_t);
			break;
		case OX_BOOL:
			/* add = or, mul = and, max = or, min = and */
			{
				uint8_t    *d = dst;
				const uint8_t *s = src;

				for (int64_t i = 0; i < n; i++)
					d[i] = (op == SCATTER_ADD || op == SCATTER_MAX) ? (d[i] || s[i]) : (d[i] && s[i]);
			}
			break;
		case OX_FLOAT16:
		case OX_BFLOAT16:
			{
				uint16_t   *d = dst;
				const uint16_t *s = src;
				bool		h = dt == OX_FLOAT16;

				for (int64_t i = 0; i < n; i++)
				{
					float		a = h ? ox_half_to_float(d[i]) : ox_bf16_to_float(d[i]);
					float		b = h ? ox_half_to_float(s[i]) : ox_bf16_to_float(s[i]);
					float		v = op == SCATTER_ADD ? a + b : op == SCATTER_MUL ? a * b :
						op == SCATTER_MAX ? (a > b ? a : b) : (a < b ? a : b);

					d[i] = h ? ox_float_to_half(v) : ox_float_to_bf16(v);
				}
			}
			break;
		default:
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: reduction is not defined for %s",
						   ctx->node->op_type, ox_dtype_name(dt));
	}
	return OX_OK;
}

/* ---------------------------------------------------------------------
 * ScatterElements, Scatter
 * --------------------------------------------------------------------- */

ox_code
oxt_scatter_elements_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "data");
	const ox_tensor *ind = oxt_input(ctx, 1, "indices");
	const ox_tensor *upd = oxt_input(ctx, 2, "updates");
	int			axis;
	scatter_op	op;
	int64_t		xs[OX_MAX_RANK];
	int64_t		idx[OX_MAX_RANK] = {0};
	int64_t		n;
	ox_tensor  *out;
	size_t		es;
	char		b1[128],
				b2[128];

	if (!x || !ind || !upd)
		return ctx->st->code;
	if (oxt_numel(ctx, x, "data") < 0)
		return ctx->st->code;
	OX_TRY(check_index_type(ctx, ind));
	OX_TRY(oxt_axis(ctx, ox_attr_int(ctx->node, "axis", 0), x->rank, &axis, "axis"));
	OX_TRY(elements_shapes(ctx, x, ind, axis));
	OX_TRY(scatter_reduction(ctx, x->dtype, &op));
	if (upd->dtype != x->dtype || !ox_shape_equal(upd->rank, upd->dims, ind->rank, ind->dims))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "%s: updates %s %s must match the indices shape %s and the data type %s",
					   ctx->node->op_type, ox_dtype_name(upd->dtype), OXT_SHAPE(upd, b1),
					   OXT_SHAPE(ind, b2), ox_dtype_name(x->dtype));
	n = ox_tensor_numel(ind);
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		v = index_at(ind, i);

		OX_TRY(fix_index(ctx, &v, x->dims[axis], axis));
	}
	OX_TRY(oxt_output_copy(ctx, 0, x, x->rank, x->dims));
	out = &ctx->out[0]->tensor;
	oxt_strides(x->rank, x->dims, xs);
	es = ox_dtype_size(x->dtype);
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		off = 0;
		int64_t		v = index_at(ind, i);

		if (v < 0)
			v += x->dims[axis];
		for (int k = 0; k < x->rank; k++)
			off += (k == axis ? v : idx[k]) * xs[k];
		OX_TRY(scatter_apply(ctx, x->dtype, op, (char *) out->data + (size_t) off * es,
							 (const char *) upd->data + (size_t) i * es, 1));
		for (int k = x->rank - 1; k >= 0; k--)
		{
			if (++idx[k] < ind->dims[k])
				break;
			idx[k] = 0;
		}
	}
	return OX_OK;
}

/* ---------------------------------------------------------------------
 * ScatterND
 * --------------------------------------------------------------------- */

ox_code
oxt_scatter_nd_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "data");
	const ox_tensor *ind = oxt_input(ctx, 1, "indices");
	const ox_tensor *upd = oxt_input(ctx, 2, "updates");
	scatter_op	op;
	int64_t		k,
				tuples = 1,
				slice = 1;
	int64_t		want[OX_MAX_RANK];
	int			wr = 0;
	int64_t		xs[OX_MAX_RANK];
	ox_tensor  *out;
	size_t		es;
	char		b1[128],
				b2[128];

	if (!x || !ind || !upd)
		return ctx->st->code;
	if (oxt_numel(ctx, x, "data") < 0 || oxt_numel(ctx, upd, "updates") < 0)
		return ctx->st->code;
	if (ind->dtype != OX_INT64)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "ScatterND: indices must be int64, got %s",
					   ox_dtype_name(ind->dtype));
	OX_TRY(check_index_type(ctx, ind));
	OX_TRY(scatter_reduction(ctx, x->dtype, &op));
	if (ind->rank < 1 || x->rank < 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "ScatterND: data and indices must have rank >= 1");
	k = ind->dims[ind->rank - 1];
	if (k < 1 || k > x->rank)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "ScatterND: last indices dimension %lld must be in [1, %d]",
					   (long long) k, x->rank);
	for (int i = 0; i < ind->rank - 1; i++)
	{
		want[wr++] = ind->dims[i];
		tuples *= ind->dims[i];
	}
	for (int i = (int) k; i < x->rank; i++)
	{
		if (wr >= OX_MAX_RANK)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "ScatterND: updates rank exceeds the limit");
		want[wr++] = x->dims[i];
		slice *= x->dims[i];
	}
	if (upd->dtype != x->dtype || !ox_shape_equal(upd->rank, upd->dims, wr, want))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "ScatterND: updates are %s %s, expected %s %s", ox_dtype_name(upd->dtype),
					   OXT_SHAPE(upd, b1), ox_dtype_name(x->dtype), ox_shape_str(wr, want, b2, sizeof(b2)));
	for (int64_t t = 0; t < tuples; t++)
		for (int64_t j = 0; j < k; j++)
		{
			int64_t		v = OX_DATA(ind, int64_t)[t * k + j];

			OX_TRY(fix_index(ctx, &v, x->dims[j], (int) j));
		}
	OX_TRY(oxt_output_copy(ctx, 0, x, x->rank, x->dims));
	out = &ctx->out[0]->tensor;
	/* empty slices: nothing to scatter, and no data to offset from */
	if (ox_tensor_numel(out) == 0 || slice == 0)
		return OX_OK;
	oxt_strides(x->rank, x->dims, xs);
	es = ox_dtype_size(x->dtype);
	for (int64_t t = 0; t < tuples; t++)
	{
		int64_t		off = 0;

		for (int64_t j = 0; j < k; j++)
		{
			int64_t		v = OX_DATA(ind, int64_t)[t * k + j];

			off += (v < 0 ? v + x->dims[j] : v) * xs[j];
		}
		OX_TRY(scatter_apply(ctx, x->dtype, op, (char *) out->data + (size_t) off * es,
							 (const char *) upd->data + (size_t) (t * slice) * es, slice));
	}
	return OX_OK;
}

/* ---------------------------------------------------------------------
 * OneHot
 * --------------------------------------------------------------------- */

ox_code
oxt_one_hot_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *ind = oxt_input(ctx, 0, "indices");
	const ox_tensor *dt = oxt_input(ctx, 1, "depth");
	const ox_tensor *vals = oxt_input(ctx, 2, "values");
	int64_t		axis = ox_attr_int(ctx->node, "axis", -1);
	double		depth_d;
	int64_t		depth,
				n,
				inner = 1;
	int64_t		dims[OX_MAX_RANK];
	int			r;
	ox_tensor  *out;
	size_t		es;

	if (!ind || !dt || !vals)
		return ctx->st->code;
	if ((n = oxt_numel(ctx, ind, "indices")) < 0)
		return ctx->st->code;
	if (ind->dtype == OX_STRING || ox_dtype_size(ind->dtype) == 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "OneHot: indices must be numeric");
	OX_TRY(oxt_scalar_double(ctx, dt, &depth_d, "depth"));
	if (!(depth_d >= 1 && depth_d <= (double) OX_MAX_ELEMENTS))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "OneHot: depth must be positive, got %g", depth_d);
	depth = (int64_t) depth_d;
	if (ox_tensor_numel(vals) != 2)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "OneHot: values must hold two elements, got %lld",
					   (long long) ox_tensor_numel(vals));
	r = ind->rank + 1;
	if (r > OX_MAX_RANK)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "OneHot: output rank %d exceeds the limit", r);
	if (axis < -r || axis >= r)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "OneHot: axis %lld is out of range for output rank %d",
					   (long long) axis, r);
	if (axis < 0)
		axis += r;
	for (int i = 0, s = 0; i < r; i++)
	{
		if (i == axis)
			dims[i] = depth;
		else
		{
			dims[i] = ind->dims[s];
			if (i > axis)
				inner *= ind->dims[s];
			s++;
		}
	}
	if (ox_shape_numel(r, dims) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "OneHot: output has too many elements");
	if (!(out = ox_out_tensor(ctx, 0, vals->dtype, r, dims)))
		return ctx->st->code;
	es = ox_dtype_size(vals->dtype);
	OX_TRY(oxt_fill(ctx, vals->dtype, out->data, vals->data, ox_tensor_numel(out)));
	for (int64_t p = 0; p < n; p++)
	{
		int64_t		v = ox_tensor_get_int64(ind, p);
		int64_t		o = p / inner,
					i = p % inner;

		if (v < 0)
			v += depth;
		/* out-of-range indices leave an all-off row */
		if (v < 0 || v >= depth)
			continue;
		OX_TRY(oxt_copy_elems(ctx, vals->dtype,
							  (char *) out->data + (size_t) ((o * depth + v) * inner + i) * es,
							  (const char *) vals->data + es, 1));
	}
	return OX_OK;
}

/* ---------------------------------------------------------------------
 * NonZero
 * --------------------------------------------------------------------- */

static bool
elem_nonzero(const ox_tensor *t, int64_t i)
{
	switch (t->dtype)
	{
		case OX_STRING:
			return OX_DATA(t, ox_string)[i].len > 0;
		case OX_FLOAT:
		case OX_DOUBLE:
		case OX_FLOAT16:
		case OX_BFLOAT16:
			return ox_tensor_get_double(t, i) != 0.0;
		default:
			return ox_tensor_get_int64(t, i) != 0;
	}
}

ox_code
oxt_non_zero_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "X");
	int64_t		n,
				nnz = 0,
				col = 0;
	int64_t		dims[2];
	int64_t		idx[OX_MAX_RANK] = {0};
	int			r;
	ox_tensor  *out;

	if (!x)
		return ctx->st->code;
	if ((n = oxt_numel(ctx, x, "X")) < 0)
		return ctx->st->code;
	if (x->dtype == OX_COMPLEX64 || x->dtype == OX_COMPLEX128 || ox_dtype_size(x->dtype) == 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "NonZero: unsupported type %s", ox_dtype_name(x->dtype));
	for (int64_t i = 0; i < n; i++)
		nnz += elem_nonzero(x, i);
	/* a scalar is treated as a 1-element vector, like onnxruntime */
	r = x->rank ? x->rank : 1;
	dims[0] = r;
	dims[1] = nnz;
	if (!(out = ox_out_tensor(ctx, 0, OX_INT64, 2, dims)))
		return ctx->st->code;
	for (int64_t i = 0; i < n; i++)
	{
		if (elem_nonzero(x, i))
		{
			for (int k = 0; k < r; k++)
				OX_DATA(out, int64_t)[k * nnz + col] = idx[k];
			col++;
		}
		for (int k = x->rank - 1; k >= 0; k--)
		{
			if (++idx[k] < x->dims[k])
				break;
			idx[k] = 0;
		}
	}
	return OX_OK;
}
