/*
 * tensor_sort.c
 *	  Ordering kernels: TopK, Unique and CumSum.
 *
 * TopK and Unique sort index arrays with a stable merge sort, so equal
 * values keep their input order: TopK's ties go to the lower index, and
 * Unique's first occurrence of every value leads its group.
 */
#include "kernels/cpu/tensor_ops.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------
 * stable merge sort of int64 indices
 * --------------------------------------------------------------------- */

typedef int (*index_cmp) (const void *arg, int64_t a, int64_t b);

static void
merge_sort(int64_t *v, int64_t *tmp, int64_t n, index_cmp cmp, const void *arg)
{
	int64_t		mid;
	int64_t		i,
				j,
				k;

	if (n < 2)
		return;
	if (n <= 16)
	{
		/* insertion sort is stable and quicker on short runs */
		for (i = 1; i < n; i++)
		{
			int64_t		x = v[i];

			for (j = i; j > 0 && cmp(arg, v[j - 1], x) > 0; j--)
				v[j] = v[j - 1];
			v[j] = x;
		}
		return;
	}
	mid = n / 2;
	merge_sort(v, tmp, mid, cmp, arg);
	merge_sort(v + mid, tmp, n - mid, cmp, arg);
	if (cmp(arg, v[mid - 1], v[mid]) <= 0)
		return;
	memcpy(tmp, v, sizeof(int64_t) * mid);
	for (i = 0, j = mid, k = 0; i < mid && j < n;)
		v[k++] = cmp(arg, v[j], tmp[i]) < 0 ? v[j++] : tmp[i++];
	while (i < mid)
		v[k++] = tmp[i++];
}

/* ---------------------------------------------------------------------
 * TopK
 * --------------------------------------------------------------------- */

typedef struct topk_arg
{
	const char *base;			/* first element of the slice */
	int64_t		stride;			/* bytes between consecutive elements */
	ox_dtype	dt;
	bool		largest;
} topk_arg;

static int
topk_cmp(const void *arg, int64_t a, int64_t b)
{
	const topk_arg *t = arg;
	int			c = oxt_compare_elems(t->dt, t->base + a * t->stride, t->base + b * t->stride);

	return t->largest ? -c : c;
}

ox_code
oxt_topk_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "X");
	int64_t		k;
	int			axis;
	bool		largest = ctx->node->opset < 11 || ox_attr_int(ctx->node, "largest", 1) != 0;
	int64_t		outer = 1,
				inner = 1,
				n;
	int64_t		dims[OX_MAX_RANK];
	ox_tensor  *vals,
			   *inds;
	int64_t    *order = NULL;
	size_t		es;
	ox_code		rc = OX_OK;

	if (!x)
		return ctx->st->code;
	if (oxt_numel(ctx, x, "X") < 0)
		return ctx->st->code;
	if (x->dtype == OX_STRING || x->dtype == OX_COMPLEX64 || x->dtype == OX_COMPLEX128 ||
		ox_dtype_size(x->dtype) == 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "TopK: unsupported type %s", ox_dtype_name(x->dtype));
	if (ctx->node->opset < 10)
		k = ox_attr_int(ctx->node, "k", -1);
	else
	{
		const ox_tensor *kt = oxt_input(ctx, 1, "K");

		if (!kt)
			return ctx->st->code;
		if (kt->dtype != OX_INT64)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "TopK: K must be int64, got %s",
						   ox_dtype_name(kt->dtype));
		OX_TRY(oxt_scalar_int(ctx, kt, &k, "K"));
	}
	OX_TRY(oxt_axis(ctx, ox_attr_int(ctx->node, "axis", -1), x->rank, &axis, "axis"));
	n = x->dims[axis];
	if (k < 0 || k > n)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "TopK: k = %lld is outside [0, %lld]",
					   (long long) k, (long long) n);
	for (int i = 0; i < x->rank; i++)
	{
		dims[i] = i == axis ? k : x->dims[i];
		if (i < axis)
			outer *= x->dims[i];
		else if (i > axis)
			inner *= x->dims[i];
	}
	if (!(vals = ox_out_tensor(ctx, 0, x->dtype, x->rank, dims)))
		return ctx->st->code;
	if (!(inds = ox_out_tensor(ctx, 1, OX_INT64, x->rank, dims)))
		return ctx->st->code;
	if (k == 0 || outer * inner == 0)
		return OX_OK;
	if (!(order = malloc(sizeof(int64_t) * 2 * n)))
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "TopK: could not allocate %lld indices", (long long) n);
	es = ox_dtype_size(x->dtype);
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++)
		{
			topk_arg	arg;

			arg.base = (const char *) x->data + (size_t) (o * n * inner + i) * es;
			arg.stride = inner * (int64_t) es;
			arg.dt = x->dtype;
			arg.largest = largest;
			for (int64_t j = 0; j < n; j++)
				order[j] = j;
			merge_sort(order, order + n, n, topk_cmp, &arg);
			for (int64_t j = 0; j < k; j++)
			{
				int64_t		dst = (o * k + j) * inner + i;

				memcpy((char *) vals->data + (size_t) dst * es, arg.base + order[j] * arg.stride, es);
				OX_DATA(inds, int64_t)[dst] = order[j];
			}
		}
	free(order);
	return rc;
}

/* ---------------------------------------------------------------------
 * Unique
 * --------------------------------------------------------------------- */

typedef struct unique_arg
{
	const char *data;
	ox_dtype	dt;
	size_t		es;
	int64_t		outer;
	int64_t		n;				/* slices along the axis */
	int64_t		inner;
} unique_arg;

/* lexicographic comparison of slices a and b along the axis */
static int
slice_cmp(const void *arg, int64_t a, int64_t b)
{
	const unique_arg *u = arg;

	for (int64_t o = 0; o < u->outer; o++)
	{
		const char *pa = u->data + (size_t) ((o * u->n + a) * u->inner) * u->es;
		const char *pb = u->data + (size_t) ((o * u->n + b) * u->inner) * u->es;

		for (int64_t j = 0; j < u->inner; j++)
		{
			int			c = oxt_compare_elems(u->dt, pa + j * u->es, pb + j * u->es);

			if (c)
				return c;
		}
	}
	return 0;
}

static int
first_cmp(const void *arg, int64_t a, int64_t b)
{
	const int64_t *first = arg;

	return first[a] < first[b] ? -1 : first[a] > first[b];
}

ox_code
oxt_unique_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "X");
	bool		sorted = ox_attr_int(ctx->node, "sorted", 1) != 0;
	const ox_attr *axis_attr = ox_node_attr(ctx->node, "axis");
	int			axis = 0;
	unique_arg	u;
	int64_t    *buf = NULL;
	int64_t    *order,
			   *tmp,
			   *group_of,
			   *first,
			   *count,
			   *rank_of;
	int64_t		groups = 0;
	int64_t		dims[OX_MAX_RANK];
	int			r;
	ox_tensor  *y,
			   *t_idx,
			   *t_inv,
			   *t_cnt;
	ox_code		rc = OX_OK;

	if (!x)
		return ctx->st->code;
	if (oxt_numel(ctx, x, "X") < 0)
		return ctx->st->code;
	memset(&u, 0, sizeof(u));
	u.data = x->data;
	u.dt = x->dtype;
	u.es = ox_dtype_size(x->dtype);
	if (axis_attr)
	{
		OX_TRY(oxt_axis(ctx, ox_attr_int(ctx->node, "axis", 0), x->rank, &axis, "axis"));
		u.outer = 1;
		u.inner = 1;
		for (int i = 0; i < axis; i++)
			u.outer *= x->dims[i];
		for (int i = axis + 1; i < x->rank; i++)
			u.inner *= x->dims[i];
		u.n = x->dims[axis];
		r = x->rank;
		memcpy(dims, x->dims, sizeof(int64_t) * r);
	}
	else
	{
		u.outer = 1;
		u.inner = 1;
		u.n = ox_tensor_numel(x);
		r = 1;
	}
	/* (never NULL, even for an empty X: the work arrays are offsets into it) */
	if (!(buf = malloc(sizeof(int64_t) * 6 * (u.n > 0 ? u.n : 1))))
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Unique: could not allocate work space");
	order = buf;
	tmp = buf + u.n;
	group_of = buf + 2 * u.n;
	first = buf + 3 * u.n;
	count = buf + 4 * u.n;
	rank_of = buf + 5 * u.n;
	for (int64_t i = 0; i < u.n; i++)
		order[i] = i;
	if (u.outer * u.inner > 0)
		merge_sort(order, tmp, u.n, slice_cmp, &u);
	/* groups of equal slices, in sorted order; the stable sort puts the first occurrence first */
	for (int64_t i = 0; i < u.n; i++)
	{
		/* empty slices (a zero dimension elsewhere) are all equal */
		bool		is_new = i == 0 ||
			(u.outer * u.inner > 0 && slice_cmp(&u, order[i - 1], order[i]) != 0);

		if (is_new)
		{
			first[groups] = order[i];
			count[groups] = 0;
			groups++;
		}
		group_of[order[i]] = groups - 1;
		count[groups - 1]++;
	}
	/* rank_of[g] = output position of group g */
	for (int64_t g = 0; g < groups; g++)
		rank_of[g] = g;
	if (!sorted)
	{
		/* order groups by first occurrence; reuse order[] as the group list */
		for (int64_t g = 0; g < groups; g++)
			order[g] = g;
		merge_sort(order, tmp, groups, first_cmp, first);
		for (int64_t p = 0; p < groups; p++)
			rank_of[order[p]] = p;
	}
	else
	{
		for (int64_t g = 0; g < groups; g++)
			order[g] = g;
	}
	/* order[p] is now the group at output position p */
	dims[axis_attr ? axis : 0] = groups;
	if (!(y = ox_out_tensor(ctx, 0, x->dtype, r, dims)) ||
		!(t_idx = ox_out_tensor(ctx, 1, OX_INT64, 1, &groups)) ||
		!(t_inv = ox_out_tensor(ctx, 2, OX_INT64, 1, &u.n)) ||
		!(t_cnt = ox_out_tensor(ctx, 3, OX_INT64, 1, &groups)))
	{
		rc = ctx->st->code;
		goto done;
	}
	for (int64_t p = 0; p < groups && rc == OX_OK; p++)
	{
		int64_t		g = order[p];

		OX_DATA(t_idx, int64_t)[p] = first[g];
		OX_DATA(t_cnt, int64_t)[p] = count[g];
		/* empty slices (inner 0): Y is empty and X has no data to offset from */
		for (int64_t o = 0; o < u.outer && u.inner > 0 && rc == OX_OK; o++)
			rc = oxt_copy_elems(ctx, x->dtype,
								(char *) y->data + (size_t) ((o * groups + p) * u.inner) * u.es,
								u.data + (size_t) ((o * u.n + first[g]) * u.inner) * u.es, u.inner);
	}
	for (int64_t i = 0; i < u.n; i++)
		OX_DATA(t_inv, int64_t)[i] = rank_of[group_of[i]];
done:
	free(buf);
	return rc;
}

/* ---------------------------------------------------------------------
 * CumSum
 * --------------------------------------------------------------------- */

#define CUMSUM_TYPED(T, ACC, LOAD, STORE) \
	do { \
		const T    *xs_ = x->data; \
		T		   *ys_ = out->data; \
		for (int64_t o = 0; o < outer; o++) \
			for (int64_t i = 0; i < inner; i++) \
			{ \
				ACC			acc = 0; \
				for (int64_t s = 0; s < n; s++) \
				{ \
					int64_t		t = reverse ? n - 1 - s : s; \
					int64_t		p = (o * n + t) * inner + i; \
					ACC			v = LOAD(xs_[p]); \
					if (exclusive) \
					{ \
						ys_[p] = STORE(acc); \
						acc += v; \
					} \
					else \
					{ \
						acc += v; \
						ys_[p] = STORE(acc); \
					} \
				} \
			} \
	} while (0)

#define CS_ID(v) (v)

ox_code
oxt_cumsum_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "x");
	const ox_tensor *at = oxt_input(ctx, 1, "axis");
	bool		exclusive = ox_attr_int(ctx->node, "exclusive", 0) != 0;
	bool		reverse = ox_attr_int(ctx->node, "reverse", 0) != 0;
	int64_t		axis_v;
	int			axis;
	int64_t		outer = 1,
				inner = 1,
				n;
	ox_tensor  *out;

	if (!x || !at)
		return ctx->st->code;
	if (oxt_numel(ctx, x, "x") < 0)
		return ctx->st->code;
	if (at->dtype != OX_INT64 && at->dtype != OX_INT32)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "CumSum: axis must be int32 or int64, got %s",
					   ox_dtype_name(at->dtype));
	OX_TRY(oxt_scalar_int(ctx, at, &axis_v, "axis"));
	OX_TRY(oxt_axis(ctx, axis_v, x->rank, &axis, "axis"));
	n = x->dims[axis];
	for (int i = 0; i < x->rank; i++)
	{
		if (i < axis)
			outer *= x->dims[i];
		else if (i > axis)
			inner *= x->dims[i];
	}
	if (!(out = ox_out_tensor(ctx, 0, x->dtype, x->rank, x->dims)))
		return ctx->st->code;
	switch (x->dtype)
	{
		case OX_FLOAT:
			CUMSUM_TYPED(float, float, CS_ID, CS_ID);
			break;
		case OX_DOUBLE:
			CUMSUM_TYPED(double, double, CS_ID, CS_ID);
			break;
		case OX_FLOAT16:
			CUMSUM_TYPED(uint16_t, float, ox_half_to_float, ox_float_to_half);
			break;
		case OX_BFLOAT16:
			CUMSUM_TYPED(uint16_t, float, ox_bf16_to_float, ox_float_to_bf16);
			break;
		case OX_INT32:
			CUMSUM_TYPED(int32_t, uint32_t, CS_ID, (int32_t));
			break;
		case OX_INT64:
			CUMSUM_TYPED(int64_t, uint64_t, CS_ID, (int64_t));
			break;
		case OX_UINT32:
			CUMSUM_TYPED(uint32_t, uint32_t, CS_ID, CS_ID);
			break;
		case OX_UINT64:
			CUMSUM_TYPED(uint64_t, uint64_t, CS_ID, CS_ID);
			break;
		default:
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "CumSum: unsupported type %s",
						   ox_dtype_name(x->dtype));
	}
	return OX_OK;
}
