/*
 * tensor_sort.c
 *	  Ordering kernels: TopK, Unique, CumSum and CumProd.
 *
 * Unique (and TopK for the exotic types without an order key) sorts index
 * arrays with a stable merge sort, so equal values keep their input order:
 * TopK's ties go to the lower index, and Unique's first occurrence of
 * every value leads its group.  TopK otherwise selects by key, below.
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
 *
 * Every element maps to a uint64 key whose unsigned order is the order of
 * oxt_compare_elems (NaN above everything and all NaNs equal, -0 == +0);
 * largest=1 complements the key.  A slice's answer is then its k smallest
 * (key, index) pairs, which are all distinct, so the result is unique and
 * the ties go to the lower index as the spec asks.  Scanning in index
 * order, a new element beats a kept one only on a strictly smaller key.
 * Small k keeps a sorted array (most elements fail one compare against
 * the worst kept key), larger k a bounded max-heap: O(n log k) in the
 * worst case instead of the O(n log n) indirect sort of the whole slice.
 * The winners always come out sorted, sorted=0 included (any order is
 * allowed there, and this one is deterministic).
 * --------------------------------------------------------------------- */

typedef struct topk_ent
{
	uint64_t	key;
	int64_t		idx;
} topk_ent;

/* up to this k the winners stay in a sorted array on the stack */
#define TOPK_SMALL_K 16

static inline uint64_t
topk_key_f32(float v)
{
	uint32_t	u;

	if (v != v)
		return UINT64_MAX;
	if (v == 0.0f)
		v = 0.0f;				/* -0 ties with +0 */
	memcpy(&u, &v, sizeof(u));
	return (u & 0x80000000u) ? (uint64_t) (uint32_t) ~u : (uint64_t) (u | 0x80000000u);
}

static inline uint64_t
topk_key_f64(double v)
{
	uint64_t	u;

	if (v != v)
		return UINT64_MAX;
	if (v == 0.0)
		v = 0.0;
	memcpy(&u, &v, sizeof(u));
	return (u & UINT64_C(0x8000000000000000)) ? ~u : u | UINT64_C(0x8000000000000000);
}

#define TOPK_SIGNED(v) ((uint64_t) (int64_t) (v) ^ UINT64_C(0x8000000000000000))
#define TOPK_UNSIGNED(v) ((uint64_t) (v))
#define TOPK_HALF(v) topk_key_f32(ox_half_to_float(v))
#define TOPK_BF16(v) topk_key_f32(ox_bf16_to_float(v))

/* is the dtype one the key functions cover (the rest keep the merge sort) */
static bool
topk_keyed(ox_dtype dt)
{
	switch (dt)
	{
		case OX_FLOAT:
		case OX_DOUBLE:
		case OX_FLOAT16:
		case OX_BFLOAT16:
		case OX_INT8:
		case OX_INT16:
		case OX_INT32:
		case OX_INT64:
		case OX_UINT8:
		case OX_BOOL:
		case OX_UINT16:
		case OX_UINT32:
		case OX_UINT64:
			return true;
		default:
			return false;
	}
}

/* max-heap on (key, idx): the root is the worst winner kept */
static inline bool
topk_worse(const topk_ent *a, const topk_ent *b)
{
	return a->key > b->key || (a->key == b->key && a->idx > b->idx);
}

static void
topk_sift_down(topk_ent *h, int64_t n, int64_t i)
{
	topk_ent	x = h[i];

	for (;;)
	{
		int64_t		c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && topk_worse(&h[c + 1], &h[c]))
			c++;
		if (!topk_worse(&h[c], &x))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

/*
 * Elements [j0, j1) of one slice: element j is T at base + j * stride;
 * flip is 0 for the smallest, all ones for the largest.  *cnt winners are
 * kept in win so far (the scan resumes across calls, so that the caller
 * can poll between pieces of a huge slice).  Up to TOPK_SMALL_K they stay
 * sorted; above, win becomes a max-heap once k are kept.
 */
#define TOPK_SELECT(T, KEY) \
	do { \
		const char *p_ = base + j0 * stride; \
		int64_t		j = j0; \
		if (k <= TOPK_SMALL_K) \
		{ \
			for (; j < j1; j++, p_ += stride) \
			{ \
				uint64_t	key_ = KEY(*(const T *) p_) ^ flip; \
				int64_t		pos_; \
				if (*cnt == k) \
				{ \
					if (key_ >= win[k - 1].key) \
						continue; \
					pos_ = k - 1; \
				} \
				else \
					pos_ = (*cnt)++; \
				/* earlier indices stay ahead of an equal key */ \
				while (pos_ > 0 && win[pos_ - 1].key > key_) \
				{ \
					win[pos_] = win[pos_ - 1]; \
					pos_--; \
				} \
				win[pos_].key = key_; \
				win[pos_].idx = j; \
			} \
			break; \
		} \
		for (; j < j1 && *cnt < k; j++, p_ += stride) \
		{ \
			win[*cnt].key = KEY(*(const T *) p_) ^ flip; \
			win[*cnt].idx = j; \
			if (++(*cnt) == k) \
				for (int64_t h_ = k / 2 - 1; h_ >= 0; h_--) \
					topk_sift_down(win, k, h_); \
		} \
		for (; j < j1; j++, p_ += stride) \
		{ \
			uint64_t	key_ = KEY(*(const T *) p_) ^ flip; \
			if (key_ < win[0].key) \
			{ \
				win[0].key = key_; \
				win[0].idx = j; \
				topk_sift_down(win, k, 0); \
			} \
		} \
	} while (0)

/*
 * Contiguous float, small k: the common case (nearest neighbours).  Once k
 * winners are kept, blocks of TOPK_BLOCK elements are first tested in the
 * float domain against the worst kept value, a loop GCC vectorizes; the
 * test only has to let through every element that could win (NaNs and a
 * NaN threshold always pass), and the exact keyed step decides.
 */
#define TOPK_BLOCK 16

static void
topk_select_f32_small(const float *x, int64_t j0, int64_t j1, int64_t k, bool largest,
					  topk_ent *win, int64_t *cnt)
{
	uint64_t	flip = largest ? UINT64_MAX : 0;
	int64_t		j = j0;

	while (j < j1)
	{
		int64_t		end;

		if (*cnt == k)
		{
			float		w = x[win[k - 1].idx];
			int			pass = 0;

			if (j + TOPK_BLOCK > j1)
				end = j1;
			else
			{
				end = j + TOPK_BLOCK;
				/* !(v >= w) rather than v < w: NaN on either side passes */
				if (largest)
					for (int t = 0; t < TOPK_BLOCK; t++)
						pass |= !(x[j + t] <= w);
				else
					for (int t = 0; t < TOPK_BLOCK; t++)
						pass |= !(x[j + t] >= w);
				if (!pass)
				{
					j = end;
					continue;
				}
			}
		}
		else
			end = j + (k - *cnt) < j1 ? j + (k - *cnt) : j1;
		for (; j < end; j++)
		{
			uint64_t	key = topk_key_f32(x[j]) ^ flip;
			int64_t		pos;

			if (*cnt == k)
			{
				if (key >= win[k - 1].key)
					continue;
				pos = k - 1;
			}
			else
				pos = (*cnt)++;
			while (pos > 0 && win[pos - 1].key > key)
			{
				win[pos] = win[pos - 1];
				pos--;
			}
			win[pos].key = key;
			win[pos].idx = j;
		}
	}
}

static void
topk_select(ox_dtype dt, const char *base, int64_t stride, int64_t j0, int64_t j1, int64_t k,
			uint64_t flip, topk_ent *win, int64_t *cnt)
{
	switch (dt)
	{
		case OX_FLOAT:
			if (k <= TOPK_SMALL_K && stride == (int64_t) sizeof(float))
				topk_select_f32_small((const float *) base, j0, j1, k, flip != 0, win, cnt);
			else
				TOPK_SELECT(float, topk_key_f32);
			break;
		case OX_DOUBLE:
			TOPK_SELECT(double, topk_key_f64);
			break;
		case OX_FLOAT16:
			TOPK_SELECT(uint16_t, TOPK_HALF);
			break;
		case OX_BFLOAT16:
			TOPK_SELECT(uint16_t, TOPK_BF16);
			break;
		case OX_INT8:
			TOPK_SELECT(int8_t, TOPK_SIGNED);
			break;
		case OX_INT16:
			TOPK_SELECT(int16_t, TOPK_SIGNED);
			break;
		case OX_INT32:
			TOPK_SELECT(int32_t, TOPK_SIGNED);
			break;
		case OX_INT64:
			TOPK_SELECT(int64_t, TOPK_SIGNED);
			break;
		case OX_UINT8:
		case OX_BOOL:
			TOPK_SELECT(uint8_t, TOPK_UNSIGNED);
			break;
		case OX_UINT16:
			TOPK_SELECT(uint16_t, TOPK_UNSIGNED);
			break;
		case OX_UINT32:
			TOPK_SELECT(uint32_t, TOPK_UNSIGNED);
			break;
		case OX_UINT64:
			TOPK_SELECT(uint64_t, TOPK_UNSIGNED);
			break;
		default:
			break;				/* topk_keyed() keeps other types away */
	}
}

/*
 * One keyed slice into win[0..k), sorted, polling between pieces: the scan
 * and the final heap sort (k > TOPK_SMALL_K: the worst goes to the end)
 * each cost about log k per element.  false when the run was canceled.
 */
static bool
topk_slice(ox_kernel_ctx *ctx, ox_dtype dt, const char *base, int64_t stride, int64_t n,
		   int64_t k, uint64_t flip, topk_ent *win)
{
	int64_t		cnt = 0;

	for (int64_t j = 0; j < n; j += OX_POLL_WORK)
	{
		int64_t		end = n - j < OX_POLL_WORK ? n : j + OX_POLL_WORK;

		topk_select(dt, base, stride, j, end, k, flip, win, &cnt);
		if (ox_kernel_poll(ctx, end - j))
			return false;
	}
	if (k <= TOPK_SMALL_K)
		return true;
	for (int64_t m = k - 1; m > 0; m--)
	{
		topk_ent	t = win[0];

		win[0] = win[m];
		win[m] = t;
		topk_sift_down(win, m, 0);
		if ((m & (OX_POLL_WORK - 1)) == 0 && ox_kernel_poll(ctx, OX_POLL_WORK))
			return false;
	}
	return true;
}

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
	topk_ent	small[TOPK_SMALL_K];
	topk_ent   *win = small;
	int64_t    *order = NULL;
	bool		keyed;
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
	keyed = topk_keyed(x->dtype);
	if (!keyed)
	{
		if (!(order = ox_workspace_alloc(sizeof(int64_t) * 2 * (size_t) n, ctx->st, "TopK")))
			return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "TopK: could not allocate %lld indices",
						   (long long) n);
	}
	else if (k > TOPK_SMALL_K &&
			 !(win = ox_workspace_alloc(sizeof(topk_ent) * (size_t) k, ctx->st, "TopK")))
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "TopK: could not allocate %lld winners",
					   (long long) k);
	es = ox_dtype_size(x->dtype);
	for (int64_t o = 0; o < outer && rc == OX_OK; o++)
		for (int64_t i = 0; i < inner; i++)
		{
			const char *base = (const char *) x->data + (size_t) (o * n * inner + i) * es;
			int64_t		stride = inner * (int64_t) es;
			char	   *vdst = (char *) vals->data + (size_t) (o * k * inner + i) * es;
			int64_t    *idst = OX_DATA(inds, int64_t) + o * k * inner + i;

			if (keyed)
			{
				if (!topk_slice(ctx, x->dtype, base, stride, n, k, largest ? UINT64_MAX : 0, win))
				{
					rc = ctx->st->code;
					break;
				}
				for (int64_t j = 0; j < k; j++)
				{
					memcpy(vdst + (size_t) (j * inner) * es, base + win[j].idx * stride, es);
					idst[j * inner] = win[j].idx;
				}
			}
			else
			{
				topk_arg	arg;

				arg.base = base;
				arg.stride = stride;
				arg.dt = x->dtype;
				arg.largest = largest;
				for (int64_t j = 0; j < n; j++)
					order[j] = j;
				merge_sort(order, order + n, n, topk_cmp, &arg);
				for (int64_t j = 0; j < k; j++)
				{
					memcpy(vdst + (size_t) (j * inner) * es, base + order[j] * stride, es);
					idst[j * inner] = order[j];
				}
			}
			/* the merge sort costs about n log n element steps (keyed slices poll inside) */
			if (!keyed && ox_kernel_poll(ctx, n))
			{
				rc = ctx->st->code;
				break;
			}
		}
	if (win != small)
		free(win);
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
 * CumSum and CumProd
 * --------------------------------------------------------------------- */

/*
 * T: element type, ACC: accumulator type (unsigned for integers, so that an
 * overflow wraps instead of being undefined), LOAD/STORE: conversions, OP
 * the running operation and ID its identity, where the running value starts.
 */
#define CUMULATIVE_LOOP(T, ACC, LOAD, STORE, OP, ID) \
	do { \
		const T    *xs_ = x->data; \
		T		   *ys_ = out->data; \
		for (int64_t o = 0; o < outer; o++) \
			for (int64_t i = 0; i < inner; i++) \
			{ \
				ACC			acc = (ACC) (ID); \
				for (int64_t s = 0; s < n; s++) \
				{ \
					int64_t		t = reverse ? n - 1 - s : s; \
					int64_t		p = (o * n + t) * inner + i; \
					ACC			v = LOAD(xs_[p]); \
					if (exclusive) \
						ys_[p] = STORE(acc); \
					acc = (ACC) (acc OP v); \
					if (!exclusive) \
						ys_[p] = STORE(acc); \
				} \
			} \
	} while (0)

/* the operation chosen once, outside the loops */
#define CUMULATIVE_TYPED(T, ACC, LOAD, STORE) \
	do { \
		if (product) \
			CUMULATIVE_LOOP(T, ACC, LOAD, STORE, *, 1); \
		else \
			CUMULATIVE_LOOP(T, ACC, LOAD, STORE, +, 0); \
	} while (0)

#define CUM_ID(v) (v)

/* running sums (CumSum) or products (CumProd) along the axis input */
static ox_code
cumulative_run(ox_kernel_ctx *ctx, bool product)
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
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: axis must be int32 or int64, got %s",
					   ctx->node->op_type, ox_dtype_name(at->dtype));
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
	switch (x->dtype)
	{
		case OX_FLOAT:
		case OX_DOUBLE:
		case OX_FLOAT16:
		case OX_BFLOAT16:
		case OX_INT32:
		case OX_INT64:
		case OX_UINT32:
		case OX_UINT64:
			break;
		default:
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: unsupported type %s",
						   ctx->node->op_type, ox_dtype_name(x->dtype));
	}
	if (!(out = ox_out_tensor(ctx, 0, x->dtype, x->rank, x->dims)))
		return ctx->st->code;
	switch (x->dtype)
	{
		case OX_FLOAT:
			CUMULATIVE_TYPED(float, float, CUM_ID, CUM_ID);
			break;
		case OX_DOUBLE:
			CUMULATIVE_TYPED(double, double, CUM_ID, CUM_ID);
			break;
		case OX_FLOAT16:
			CUMULATIVE_TYPED(uint16_t, float, ox_half_to_float, ox_float_to_half);
			break;
		case OX_BFLOAT16:
			CUMULATIVE_TYPED(uint16_t, float, ox_bf16_to_float, ox_float_to_bf16);
			break;
		case OX_INT32:
			CUMULATIVE_TYPED(int32_t, uint32_t, CUM_ID, (int32_t));
			break;
		case OX_INT64:
			CUMULATIVE_TYPED(int64_t, uint64_t, CUM_ID, (int64_t));
			break;
		case OX_UINT32:
			CUMULATIVE_TYPED(uint32_t, uint32_t, CUM_ID, CUM_ID);
			break;
		case OX_UINT64:
			CUMULATIVE_TYPED(uint64_t, uint64_t, CUM_ID, CUM_ID);
			break;
		default:
			break;
	}
	return OX_OK;
}

ox_code
oxt_cumsum_run(ox_kernel_ctx *ctx)
{
	return cumulative_run(ctx, false);
}

ox_code
oxt_cumprod_run(ox_kernel_ctx *ctx)
{
	return cumulative_run(ctx, true);
}
