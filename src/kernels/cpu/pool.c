/*
 * pool.c
 *	  MaxPool (with Indices), AveragePool, LpPool, their Global forms,
 *	  MaxRoiPool and MaxUnpool; the pool family table.
 *
 * Windows are 3-D (1-D and 2-D get size-1 leading axes, see conv_geom.c).
 * For every output index along each axis a small table gives the range of
 * kernel taps that land inside the input and how many land inside the
 * padded extent (the AveragePool divisor with count_include_pad), so the
 * window loops carry no bounds checks.  Planes (one image, one channel) are
 * independent and go through ox_parallel_for.
 *
 * float16 is computed in float32; MaxPool also takes int8 and uint8.
 */
#include "kernels/cpu/nn.h"
#include "kernels/cpu/conv_fast.h"

#include <float.h>
#include <string.h>

typedef enum pool_kind
{
	POOL_MAX,
	POOL_AVG,
	POOL_LP
} pool_kind;

typedef struct pool_state
{
	pool_kind	kind;
	nn_window	win;
	bool		count_include_pad;
	bool		col_major;		/* MaxPool storage_order = 1 */
	int64_t		p;				/* LpPool */
} pool_state;

/* taps [lo, hi) land in the input; taps [0, npad) land in the padded extent */
typedef struct pool_tab
{
	int64_t		lo,
				hi,
				npad;
} pool_tab;

static ox_code
pool_prepare_common(ox_prepare_ctx *pc, pool_kind kind)
{
	const ox_node *node = pc->node;
	pool_state *s;
	int64_t		cip = ox_attr_int(node, "count_include_pad", 0);
	int64_t		so = ox_attr_int(node, "storage_order", 0);
	int64_t		p = ox_attr_int(node, "p", 2);
	ox_code		rc;

	if (cip != 0 && cip != 1)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "%s: count_include_pad is %lld, expected 0 or 1",
					   node->op_type, (long long) cip);
	if (so != 0 && so != 1)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "%s: storage_order is %lld, expected 0 or 1",
					   node->op_type, (long long) so);
	if (p < 1 || p > 64)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "%s: p is %lld, expected 1 to 64",
					   node->op_type, (long long) p);
	if (!(s = calloc(1, sizeof(*s))))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s: could not allocate state", node->op_type);
	if ((rc = nn_window_parse(node, &s->win, true, pc->st)) != OX_OK)
	{
		free(s);
		return rc;
	}
	s->kind = kind;
	s->count_include_pad = cip == 1;
	s->col_major = so == 1;
	s->p = p;
	pc->state = s;
	return OX_OK;
}

static ox_code
max_pool_prepare(ox_prepare_ctx *pc)
{
	return pool_prepare_common(pc, POOL_MAX);
}

static ox_code
avg_pool_prepare(ox_prepare_ctx *pc)
{
	return pool_prepare_common(pc, POOL_AVG);
}

static ox_code
lp_pool_prepare(ox_prepare_ctx *pc)
{
	return pool_prepare_common(pc, POOL_LP);
}

static void
pool_free(void *state)
{
	free(state);
}

/* ---- window loops ------------------------------------------------------- */

typedef struct pool_job
{
	const nn_geom *g;
	const pool_tab *tab[NN_MAX_SPATIAL];
	const pool_state *s;
	const void *x;
	void	   *y;
	int64_t    *ind;			/* MaxPool Indices, or NULL */
	int64_t		channels;		/* C, for the Indices base */
	/* max_pool_f32_avx512: per vector of a row and kernel column, the taps inside the row */
	const uint32_t *vmask;		/* [vectors][k columns] */
	int64_t		vectors;		/* per output row */
} pool_job;

/* the base pool_run gives the loops for an empty X (never read) */
static const double pool_no_data[1];

#define TAP_IN(g, ax, o, k) ((o) * (g)->s[ax] - (g)->pb[ax] + (k) * (g)->d[ax])

/*
 * Max over each window; Indices are flat offsets into X, row-major or (for
 * storage_order 1) column-major within the spatial block.
 */
#define DEFINE_MAX_POOL(NAME, T, LOWEST) \
static void \
NAME(void *arg, int64_t begin, int64_t end) \
{ \
	const pool_job *j = arg; \
	const nn_geom *g = j->g; \
	for (int64_t plane = begin; plane < end; plane++) \
	{ \
		const T    *x = (const T *) j->x + plane * g->in_size; \
		T		   *y = (T *) j->y + plane * g->out_size; \
		int64_t    *ind = j->ind ? j->ind + plane * g->out_size : NULL; \
		for (int64_t od = 0; od < g->out[0]; od++) \
		for (int64_t oh = 0; oh < g->out[1]; oh++) \
		for (int64_t ow = 0; ow < g->out[2]; ow++, y++) \
		{ \
			const pool_tab *td = &j->tab[0][od], *th = &j->tab[1][oh], *tw = &j->tab[2][ow]; \
			T			best = LOWEST; \
			int64_t		bd = -1, bh = 0, bw = 0; \
			for (int64_t kd = td->lo; kd < td->hi; kd++) \
			{ \
				int64_t		id = TAP_IN(g, 0, od, kd); \
				for (int64_t kh = th->lo; kh < th->hi; kh++) \
				{ \
					int64_t		ih = TAP_IN(g, 1, oh, kh); \
					const T    *row = x + (id * g->in[1] + ih) * g->in[2]; \
					for (int64_t kw = tw->lo; kw < tw->hi; kw++) \
					{ \
						int64_t		iw = TAP_IN(g, 2, ow, kw); \
						if (row[iw] > best || bd < 0) \
						{ \
							best = row[iw]; \
							bd = id, bh = ih, bw = iw; \
						} \
					} \
				} \
			} \
			*y = best; \
			if (ind) \
			{ \
				int64_t		local = bd < 0 ? 0 : j->s->col_major \
					? (bw * g->in[1] + bh) * g->in[0] + bd \
					: (bd * g->in[1] + bh) * g->in[2] + bw; \
				*ind++ = plane * g->in_size + local; \
			} \
		} \
	} \
}

DEFINE_MAX_POOL(max_pool_f32, float, -FLT_MAX)
DEFINE_MAX_POOL(max_pool_f64, double, -DBL_MAX)
DEFINE_MAX_POOL(max_pool_i8, int8_t, INT8_MIN)
DEFINE_MAX_POOL(max_pool_u8, uint8_t, 0)

/* |v|^p for the small p values LpPool uses, without pow() where avoidable */
#define LP_TERM(v, p) ((p) == 1 ? fabs(v) : (p) == 2 ? (v) * (v) : pow(fabs(v), (double) (p)))

/* AveragePool and LpPool share the window walk */
#define DEFINE_SUM_POOL(NAME, T, ACC) \
static void \
NAME(void *arg, int64_t begin, int64_t end) \
{ \
	const pool_job *j = arg; \
	const nn_geom *g = j->g; \
	bool		lp = j->s->kind == POOL_LP; \
	int64_t		p = j->s->p; \
	for (int64_t plane = begin; plane < end; plane++) \
	{ \
		const T    *x = (const T *) j->x + plane * g->in_size; \
		T		   *y = (T *) j->y + plane * g->out_size; \
		for (int64_t od = 0; od < g->out[0]; od++) \
		for (int64_t oh = 0; oh < g->out[1]; oh++) \
		for (int64_t ow = 0; ow < g->out[2]; ow++, y++) \
		{ \
			const pool_tab *td = &j->tab[0][od], *th = &j->tab[1][oh], *tw = &j->tab[2][ow]; \
			ACC			sum = 0; \
			int64_t		count; \
			for (int64_t kd = td->lo; kd < td->hi; kd++) \
			{ \
				int64_t		id = TAP_IN(g, 0, od, kd); \
				for (int64_t kh = th->lo; kh < th->hi; kh++) \
				{ \
					int64_t		ih = TAP_IN(g, 1, oh, kh); \
					const T    *row = x + (id * g->in[1] + ih) * g->in[2]; \
					if (lp) \
						for (int64_t kw = tw->lo; kw < tw->hi; kw++) \
						{ \
							ACC			v = row[TAP_IN(g, 2, ow, kw)]; \
							sum += (ACC) LP_TERM(v, p); \
						} \
					else \
						for (int64_t kw = tw->lo; kw < tw->hi; kw++) \
							sum += row[TAP_IN(g, 2, ow, kw)]; \
				} \
			} \
			if (lp) \
			{ \
				*y = (T) (p == 1 ? sum : p == 2 ? sqrt(sum) : pow(sum, 1.0 / (double) p)); \
				continue; \
			} \
			count = j->s->count_include_pad \
				? td->npad * th->npad * tw->npad \
				: (td->hi - td->lo) * (th->hi - th->lo) * (tw->hi - tw->lo); \
			*y = count > 0 ? (T) (sum / (ACC) count) : (T) 0; \
		} \
	} \
}

DEFINE_SUM_POOL(sum_pool_f32, float, float)
DEFINE_SUM_POOL(sum_pool_f64, double, double)

/*
 * MaxPool without Indices and AveragePool, row by row: each output row is
 * combined with whole input rows, one kernel column at a time, over the
 * output columns whose input lies inside the image.  The inner loop has no
 * branches and (for stride 1) reads contiguously, so it vectorizes.
 */
#define POOL_MAX_LOOP(LO, HI, SRC, ST) \
	for (int64_t ow = (LO); ow < (HI); ow++) \
	{ \
		__typeof__(*yr) v = (SRC)[ow * (ST)]; \
		yr[ow] = v > yr[ow] ? v : yr[ow]; \
	}
#define POOL_SUM_LOOP(LO, HI, SRC, ST) \
	for (int64_t ow = (LO); ow < (HI); ow++) \
		yr[ow] += (SRC)[ow * (ST)];

#define DEFINE_ROW_POOL(NAME, T, LOWEST, TARGET) \
TARGET static void \
NAME(void *arg, int64_t begin, int64_t end) \
{ \
	const pool_job *j = arg; \
	const nn_geom *g = j->g; \
	bool		is_max = j->s->kind == POOL_MAX; \
	/* output columns each kernel column reaches inside the row (short kernels) */ \
	int64_t		klo[16], khi[16]; \
	for (int64_t kw = 0; kw < g->k[2] && kw < 16; kw++) \
		nn_valid_range(g->out[2], g->s[2], kw * g->d[2] - g->pb[2], g->in[2], &klo[kw], &khi[kw]); \
	for (int64_t plane = begin; plane < end; plane++) \
	{ \
		const T    *x = (const T *) j->x + plane * g->in_size; \
		T		   *y = (T *) j->y + plane * g->out_size; \
		for (int64_t od = 0; od < g->out[0]; od++) \
		for (int64_t oh = 0; oh < g->out[1]; oh++) \
		{ \
			const pool_tab *td = &j->tab[0][od], *th = &j->tab[1][oh]; \
			T		   *yr = y + (od * g->out[1] + oh) * g->out[2]; \
			for (int64_t ow = 0; ow < g->out[2]; ow++) \
				yr[ow] = is_max ? LOWEST : 0; \
			for (int64_t kd = td->lo; kd < td->hi; kd++) \
			{ \
				int64_t		id = TAP_IN(g, 0, od, kd); \
				for (int64_t kh = th->lo; kh < th->hi; kh++) \
				{ \
					int64_t		ih = TAP_IN(g, 1, oh, kh); \
					const T    *xr = x + (id * g->in[1] + ih) * g->in[2]; \
					for (int64_t kw = 0; kw < g->k[2]; kw++) \
					{ \
						int64_t		off = kw * g->d[2] - g->pb[2], lo, hi, st = g->s[2]; \
						if (kw < 16) \
						{ \
							lo = klo[kw]; \
							hi = khi[kw]; \
						} \
						else \
							nn_valid_range(g->out[2], st, off, g->in[2], &lo, &hi); \
						/* constant strides, so that the compiler vectorizes them */ \
						if (is_max && st == 1) \
							POOL_MAX_LOOP(lo, hi, xr + off, 1) \
						else if (is_max && st == 2) \
							POOL_MAX_LOOP(lo, hi, xr + off, 2) \
						else if (is_max) \
							POOL_MAX_LOOP(lo, hi, xr + off, st) \
						else if (st == 1) \
							POOL_SUM_LOOP(lo, hi, xr + off, 1) \
						else if (st == 2) \
							POOL_SUM_LOOP(lo, hi, xr + off, 2) \
						else \
							POOL_SUM_LOOP(lo, hi, xr + off, st) \
					} \
				} \
			} \
			if (!is_max) \
				for (int64_t ow = 0; ow < g->out[2]; ow++) \
				{ \
					const pool_tab *tw = &j->tab[2][ow]; \
					int64_t		count = j->s->count_include_pad \
						? td->npad * th->npad * tw->npad \
						: (td->hi - td->lo) * (th->hi - th->lo) * (tw->hi - tw->lo); \
					yr[ow] = count > 0 ? yr[ow] / (T) count : (T) 0; \
				} \
		} \
	} \
}

#define NO_TARGET
DEFINE_ROW_POOL(row_pool_f32, float, -FLT_MAX, NO_TARGET)
DEFINE_ROW_POOL(row_pool_f64, double, -DBL_MAX, NO_TARGET)
DEFINE_ROW_POOL(row_pool_i8, int8_t, INT8_MIN, NO_TARGET)
DEFINE_ROW_POOL(row_pool_u8, uint8_t, 0, NO_TARGET)
/* the same loops compiled for wider vectors (strided reads become permutes) */
DEFINE_ROW_POOL(row_pool_f32_avx2, float, -FLT_MAX, __attribute__((target("avx2,fma"))))
DEFINE_ROW_POOL(row_pool_f32_avx512, float, -FLT_MAX, __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma"))))

/*
 * Float MaxPool without Indices over 2-D (or 1-D) planes with a row stride
 * of 1 or 2, with AVX-512: sixteen outputs of a row at a time, each the max
 * over its window taken in registers and stored once (the row loops above
 * read and write the output row once per tap, which made ResNet's stem
 * MaxPool about 3x slower than onnxruntime's).  Taps in the padding are
 * masked off and load -FLT_MAX, the row loops' starting value, and the
 * comparison is theirs (v > max ? v : max, in tap order), so the results are
 * the same, NaN included.  A masked-off lane reads nothing, so the address
 * of a vector may start before its row.
 */
static bool
max_pool_vector_applies(const nn_geom *g)
{
	return g->in[0] == 1 && g->k[0] == 1 && g->out[0] == 1 && (g->s[2] == 1 || g->s[2] == 2) &&
		nn_conv_fast_isa() == NN_ISA_AVX512;
}

/* job->vmask for max_pool_f32_avx512; NULL + status on failure */
static uint32_t *
max_pool_vector_masks(const nn_geom *g, int64_t *vectors, ox_status *st)
{
	int64_t		nv = (g->out[2] + 15) / 16;
	uint32_t   *m = nn_scratch(nv * g->k[2], sizeof(uint32_t), st, "MaxPool");

	if (!m)
		return NULL;
	for (int64_t v = 0; v < nv; v++)
	{
		int64_t		count = g->out[2] - v * 16 < 16 ? g->out[2] - v * 16 : 16;

		for (int64_t kw = 0; kw < g->k[2]; kw++)
		{
			int64_t		base = v * 16 * g->s[2] + kw * g->d[2] - g->pb[2];
			uint32_t	bits = 0;

			/* the elements loaded: count * stride (stride 2 keeps the even ones) */
			for (int64_t e = 0; e < count * g->s[2]; e++)
				if (base + e >= 0 && base + e < g->in[2])
					bits |= (uint32_t) 1 << e;
			m[v * g->k[2] + kw] = bits;
		}
	}
	*vectors = nv;
	return m;
}

__attribute__((target("avx512f")))
static void
max_pool_f32_avx512(void *arg, int64_t begin, int64_t end)
{
	const pool_job *j = arg;
	const nn_geom *g = j->g;
	int64_t		s = g->s[2],
				kn = g->k[2];
	__m512		lowest = _mm512_set1_ps(-FLT_MAX);
	__m512i		even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);

	for (int64_t plane = begin; plane < end; plane++)
	{
		const float *x = (const float *) j->x + plane * g->in_size;
		float	   *y = (float *) j->y + plane * g->out_size;

		for (int64_t oh = 0; oh < g->out[1]; oh++)
		{
			const pool_tab *th = &j->tab[1][oh];
			float	   *yr = y + oh * g->out[2];

			for (int64_t v = 0; v < j->vectors; v++)
			{
				const uint32_t *m = j->vmask + v * kn;
				int64_t		count = g->out[2] - v * 16 < 16 ? g->out[2] - v * 16 : 16;
				__m512		acc = lowest;

				for (int64_t kh = th->lo; kh < th->hi; kh++)
				{
					const float *xr = x + TAP_IN(g, 1, oh, kh) * g->in[2];

					for (int64_t kw = 0; kw < kn; kw++)
					{
						int64_t		col = v * 16 * s + kw * g->d[2] - g->pb[2];
						const float *p = (const float *) ((uintptr_t) xr + (uintptr_t) (col * (int64_t) sizeof(float)));
						__m512		t;

						if (s == 1)
							t = _mm512_mask_loadu_ps(lowest, (__mmask16) m[kw], p);
						else
							t = _mm512_permutex2var_ps(_mm512_mask_loadu_ps(lowest, (__mmask16) m[kw], p), even,
													   _mm512_mask_loadu_ps(lowest, (__mmask16) (m[kw] >> 16), p + 16));
						acc = _mm512_max_ps(t, acc);
					}
				}
				_mm512_mask_storeu_ps(yr + v * 16, (__mmask16) ((1u << count) - 1), acc);
			}
		}
	}
}

/* row_pool_f32 for this machine's instruction set, chosen once by cpuid */
static ox_range_fn
row_pool_f32_best(void)
{
	static ox_range_fn best;

	if (!best)
	{
		__builtin_cpu_init();
		if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
			__builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
			best = row_pool_f32_avx512;
		else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
			best = row_pool_f32_avx2;
		else
			best = row_pool_f32;
	}
	return best;
}

/* per-axis tap tables; one allocation for the three axes */
static pool_tab *
pool_tables(const nn_geom *g, const pool_tab **tab, ox_status *st)
{
	pool_tab   *all = nn_scratch(g->out[0] + g->out[1] + g->out[2], sizeof(pool_tab), st, "pool tables");
	pool_tab   *t = all;

	if (!all)
		return NULL;
	for (int ax = 0; ax < NN_MAX_SPATIAL; ax++)
	{
		tab[ax] = t;
		for (int64_t o = 0; o < g->out[ax]; o++, t++)
		{
			int64_t		start = o * g->s[ax] - g->pb[ax];
			int64_t		lo,
						hi,
						npad;

			/* taps k with 0 <= start + k*d < in: reuse the range helper with roles swapped */
			nn_valid_range(g->k[ax], g->d[ax], start, g->in[ax], &lo, &hi);
			npad = g->in[ax] + g->pe[ax] - start <= 0 ? 0 : (g->in[ax] + g->pe[ax] - start - 1) / g->d[ax] + 1;
			if (npad > g->k[ax])
				npad = g->k[ax];
			t->lo = lo;
			t->hi = hi;
			t->npad = npad;
		}
	}
	return all;
}

static ox_code
check_pool_input(const char *op, const ox_tensor *x, bool allow_int8, ox_status *st)
{
	char		buf[NN_SHAPE_LEN];

	if (!x)
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: input X is required", op);
	if (x->rank < 3)
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: X has shape %s, expected [N, C, spatial...]",
					   op, nn_shape(x, buf));
	if (!(x->dtype == OX_FLOAT || x->dtype == OX_DOUBLE || x->dtype == OX_FLOAT16 ||
		  (allow_int8 && nn_is_quant8(x->dtype))))
		return ox_fail(st, OX_UNSUPPORTED, "%s: type %s is not supported", op, ox_dtype_name(x->dtype));
	return OX_OK;
}

static ox_code
pool_run(ox_kernel_ctx *ctx)
{
	const pool_state *s = ctx->state;
	const char *op = ctx->node->op_type;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	nn_geom		g;
	pool_job	job;
	pool_tab   *tabs;
	int64_t		y_dims[2 + NN_MAX_SPATIAL],
				planes;
	int			nsp;
	ox_tensor  *y,
			   *ind = NULL;
	float	   *fx = NULL,
			   *fy = NULL;
	ox_range_fn fn;
	bool		rows;

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "%s: not prepared", op);
	OX_TRY(check_pool_input(op, x, s->kind == POOL_MAX, ctx->st));
	nsp = x->rank - 2;
	OX_TRY(nn_window_resolve(&s->win, op, nsp, x->dims + 2, NULL, &g, ctx->st));
	y_dims[0] = x->dims[0];
	y_dims[1] = x->dims[1];
	for (int i = 0; i < nsp; i++)
		y_dims[2 + i] = g.out[NN_MAX_SPATIAL - nsp + i];
	planes = x->dims[0] * x->dims[1];
	if (ox_shape_numel(x->rank, y_dims) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "%s: output is too large", op);
	if (!(y = ox_out_tensor(ctx, 0, x->dtype, x->rank, y_dims)))
		return ctx->st->code;
	if (s->kind == POOL_MAX && ox_has_output(ctx, 1) &&
		!(ind = ox_out_tensor(ctx, 1, OX_INT64, x->rank, y_dims)))
		return ctx->st->code;
	if (ox_tensor_numel(y) == 0)
		return OX_OK;
	if (!(tabs = pool_tables(&g, job.tab, ctx->st)))
		return ctx->st->code;
	job.g = &g;
	job.s = s;
	/*
	 * An empty X (a spatial extent of 0, padded to a non-empty output) has
	 * no data pointer: no window has a tap inside it, so nothing is read,
	 * but the per-plane offsets (all 0) need a non-NULL base.
	 */
	job.x = x->data ? x->data : (const void *) pool_no_data;
	job.y = y->data;
	job.ind = ind ? ind->data : NULL;
	job.channels = x->dims[1];
	job.vmask = NULL;
	job.vectors = 0;
	/* the row-wise loops serve everything but Indices and LpPool */
	rows = s->kind == POOL_AVG || (s->kind == POOL_MAX && !ind);
	switch (x->dtype)
	{
		case OX_DOUBLE:
			fn = rows ? row_pool_f64 : s->kind == POOL_MAX ? max_pool_f64 : sum_pool_f64;
			break;
		case OX_INT8:
			fn = rows ? row_pool_i8 : max_pool_i8;
			break;
		case OX_UINT8:
			fn = rows ? row_pool_u8 : max_pool_u8;
			break;
		case OX_FLOAT16:
			fx = nn_to_float(x, ctx->st);
			fy = fx ? nn_scratch(ox_tensor_numel(y), sizeof(float), ctx->st, op) : NULL;
			if (!fy)
			{
				ox_aligned_free(fx);
				ox_aligned_free(tabs);
				return ctx->st->code;
			}
			job.x = fx;
			job.y = fy;
			/* FALLTHROUGH */
		default:
			fn = rows ? row_pool_f32_best() : s->kind == POOL_MAX ? max_pool_f32 : sum_pool_f32;
			if (s->kind == POOL_MAX && !ind && max_pool_vector_applies(&g))
			{
				uint32_t   *vmask = max_pool_vector_masks(&g, &job.vectors, ctx->st);

				if (!vmask)
				{
					ox_aligned_free(fx);
					ox_aligned_free(fy);
					ox_aligned_free(tabs);
					return ctx->st->code;
				}
				job.vmask = vmask;
				fn = max_pool_f32_avx512;
			}
			break;
	}
	ox_parallel_for(ctx, planes, 1, fn, &job);
	ox_aligned_free((void *) job.vmask);
	ox_aligned_free(tabs);
	if (fy)
	{
		ox_code		rc = nn_store_float(y, fy, ox_tensor_numel(y), ctx->st);

		ox_aligned_free(fx);
		ox_aligned_free(fy);
		return rc;
	}
	return OX_OK;
}

/* ---- global pools ------------------------------------------------------- */

typedef struct global_job
{
	pool_kind	kind;
	int64_t		p;
	int64_t		size;
	const void *x;
	void	   *y;
	bool		dbl;
} global_job;

static void
global_range(void *arg, int64_t begin, int64_t end)
{
	const global_job *j = arg;

	for (int64_t plane = begin; plane < end; plane++)
	{
		double		r = 0;

		if (j->dbl)
		{
			const double *x = (const double *) j->x + plane * j->size;

			if (j->kind == POOL_MAX)
			{
				r = j->size ? x[0] : 0;
				for (int64_t i = 1; i < j->size; i++)
					r = x[i] > r ? x[i] : r;
			}
			else
			{
				for (int64_t i = 0; i < j->size; i++)
					r += j->kind == POOL_LP ? LP_TERM(x[i], j->p) : x[i];
			}
		}
		else
		{
			const float *x = (const float *) j->x + plane * j->size;

			if (j->kind == POOL_MAX)
			{
				float		m = j->size ? x[0] : 0;

				for (int64_t i = 1; i < j->size; i++)
					m = x[i] > m ? x[i] : m;
				r = m;
			}
			else if (j->kind == POOL_AVG)
				r = nn_sum_f32(x, j->size);
			else
				for (int64_t i = 0; i < j->size; i++)
					r += LP_TERM((double) x[i], j->p);
		}
		if (j->kind == POOL_AVG)
			r = j->size ? r / (double) j->size : 0;
		else if (j->kind == POOL_LP)
			r = j->p == 1 ? r : j->p == 2 ? sqrt(r) : pow(r, 1.0 / (double) j->p);
		if (j->dbl)
			((double *) j->y)[plane] = r;
		else
			((float *) j->y)[plane] = (float) r;
	}
}

static ox_code
global_pool_common(ox_kernel_ctx *ctx, pool_kind kind)
{
	const char *op = ctx->node->op_type;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	int64_t		y_dims[OX_MAX_RANK],
				planes,
				p = ox_attr_int(ctx->node, "p", 2);
	global_job	job;
	ox_tensor  *y;
	float	   *fx = NULL,
			   *fy = NULL;
	ox_code		rc = OX_OK;
	char		buf[NN_SHAPE_LEN];

	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input X is required", op);
	if (x->rank < 2)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: X has shape %s, expected [N, C, ...]",
					   op, nn_shape(x, buf));
	if (!(x->dtype == OX_FLOAT || x->dtype == OX_DOUBLE || x->dtype == OX_FLOAT16))
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: type %s is not supported", op, ox_dtype_name(x->dtype));
	if (kind == POOL_LP && (p < 1 || p > 64))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: p is %lld, expected 1 to 64", op, (long long) p);
	y_dims[0] = x->dims[0];
	y_dims[1] = x->dims[1];
	for (int i = 2; i < x->rank; i++)
		y_dims[i] = 1;
	planes = x->dims[0] * x->dims[1];
	if (!(y = ox_out_tensor(ctx, 0, x->dtype, x->rank, y_dims)))
		return ctx->st->code;
	job.kind = kind;
	job.p = p;
	job.size = ox_shape_numel(x->rank - 2, x->dims + 2);
	job.x = x->data;
	job.y = y->data;
	job.dbl = x->dtype == OX_DOUBLE;
	if (kind == POOL_MAX && job.size == 0 && planes > 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: X has shape %s, an empty spatial extent",
					   op, nn_shape(x, buf));
	if (planes == 0)
		return OX_OK;			/* empty output */
	if (job.size == 0)
	{
		/* an empty spatial extent (X has no data): the mean and Lp norm of nothing are 0 */
		memset(y->data, 0, (size_t) planes * ox_dtype_size(y->dtype));
		return OX_OK;
	}
	if (x->dtype == OX_FLOAT16)
	{
		fx = nn_to_float(x, ctx->st);
		fy = fx ? nn_scratch(planes, sizeof(float), ctx->st, op) : NULL;
		if (!fy)
		{
			ox_aligned_free(fx);
			return ctx->st->code;
		}
		job.x = fx;
		job.y = fy;
	}
	ox_parallel_for(ctx, planes, 1, global_range, &job);
	if (fy)
		rc = nn_store_float(y, fy, planes, ctx->st);
	ox_aligned_free(fx);
	ox_aligned_free(fy);
	return rc;
}

static ox_code
global_average_pool_run(ox_kernel_ctx *ctx)
{
	return global_pool_common(ctx, POOL_AVG);
}

static ox_code
global_max_pool_run(ox_kernel_ctx *ctx)
{
	return global_pool_common(ctx, POOL_MAX);
}

static ox_code
global_lp_pool_run(ox_kernel_ctx *ctx)
{
	return global_pool_common(ctx, POOL_LP);
}

/* ---- MaxRoiPool --------------------------------------------------------- */

static ox_code
max_roi_pool_run(ox_kernel_ctx *ctx)
{
	const char *op = "MaxRoiPool";
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *rois = ox_in_tensor(ctx, 1);
	const int64_t *ps;
	int			nps = ox_attr_ints(ctx->node, "pooled_shape", &ps);
	double		scale = ox_attr_float(ctx->node, "spatial_scale", 1.0f);
	int64_t		y_dims[4],
				n,
				c,
				h,
				w,
				nroi;
	ox_tensor  *y;
	char		sx[NN_SHAPE_LEN],
				sr[NN_SHAPE_LEN];

	if (!x || !rois)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: inputs X and rois are required", op);
	if (x->rank != 4 || rois->rank != 2 || rois->dims[1] != 5)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: X has shape %s and rois %s, expected [N, C, H, W] and [num_rois, 5]",
					   op, nn_shape(x, sx), nn_shape(rois, sr));
	if (x->dtype != OX_FLOAT || rois->dtype != OX_FLOAT)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: X is %s and rois is %s, only float is supported",
					   op, ox_dtype_name(x->dtype), ox_dtype_name(rois->dtype));
	if (nps != 2 || ps[0] < 1 || ps[1] < 1 || ps[0] > ((int64_t) 1 << 20) || ps[1] > ((int64_t) 1 << 20))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: pooled_shape must be two positive values", op);
	n = x->dims[0];
	c = x->dims[1];
	h = x->dims[2];
	w = x->dims[3];
	nroi = rois->dims[0];
	y_dims[0] = nroi;
	y_dims[1] = c;
	y_dims[2] = ps[0];
	y_dims[3] = ps[1];
	if (ox_shape_numel(4, y_dims) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "%s: output is too large", op);
	for (int64_t r = 0; r < nroi; r++)
	{
		float		b = ((const float *) rois->data)[r * 5];

		if (!(b >= 0 && b < (float) n) || b != floorf(b))
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: roi %lld has batch index %g, expected 0 to %lld",
						   op, (long long) r, b, (long long) (n - 1));
	}
	if (!(y = ox_out_tensor(ctx, 0, OX_FLOAT, 4, y_dims)))
		return ctx->st->code;
	if (ox_tensor_numel(y) == 0)
		return OX_OK;
	if (ox_tensor_numel(x) == 0)
	{
		/* H or W is 0 (N is checked above): every bin is empty, so 0 */
		memset(y->data, 0, sizeof(float) * (size_t) ox_tensor_numel(y));
		return OX_OK;
	}
	for (int64_t r = 0; r < nroi; r++)
	{
		const float *roi = (const float *) rois->data + r * 5;
		int64_t		bi = (int64_t) roi[0];
		double		x1 = round(roi[1] * scale),
					y1 = round(roi[2] * scale),
					x2 = round(roi[3] * scale),
					y2 = round(roi[4] * scale);
		double		rh = fmax(y2 - y1 + 1, 1),
					rw = fmax(x2 - x1 + 1, 1);
		double		bh = rh / (double) ps[0],
					bw = rw / (double) ps[1];

		for (int64_t ch = 0; ch < c; ch++)
		{
			const float *plane = (const float *) x->data + (bi * c + ch) * h * w;
			float	   *out = (float *) y->data + (r * c + ch) * ps[0] * ps[1];

			for (int64_t py = 0; py < ps[0]; py++)
				for (int64_t px = 0; px < ps[1]; px++)
				{
					double		hs = fmin(fmax(floor(py * bh) + y1, 0), (double) h),
								he = fmin(fmax(ceil((py + 1) * bh) + y1, 0), (double) h),
								ws = fmin(fmax(floor(px * bw) + x1, 0), (double) w),
								we = fmin(fmax(ceil((px + 1) * bw) + x1, 0), (double) w);
					float		m = -FLT_MAX;

					if (he <= hs || we <= ws)
						m = 0;
					for (int64_t yy = (int64_t) hs; yy < (int64_t) he; yy++)
						for (int64_t xx = (int64_t) ws; xx < (int64_t) we; xx++)
							m = plane[yy * w + xx] > m ? plane[yy * w + xx] : m;
					out[py * ps[1] + px] = m;
				}
		}
	}
	return OX_OK;
}

/* ---- MaxUnpool ---------------------------------------------------------- */

/*
 * Indices address the "inferred" output, (in - 1) * stride + kernel - pads
 * per axis, as MaxPool produced them; an explicit output_shape (which may
 * only be larger) gets that block in its leading corner, as onnx.reference
 * defines it.
 */
static ox_code
max_unpool_run(ox_kernel_ctx *ctx)
{
	const char *op = "MaxUnpool";
	const pool_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *ind = ox_in_tensor(ctx, 1);
	const ox_tensor *shape = ox_in_tensor(ctx, 2);
	const nn_window *w;
	int64_t		inf_dims[OX_MAX_RANK],
				y_dims[OX_MAX_RANK],
				nx,
				ninf,
				ny;
	int			nsp;
	ox_tensor  *y;
	size_t		es;
	char		sx[NN_SHAPE_LEN],
				si[NN_SHAPE_LEN];

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "%s: not prepared", op);
	w = &s->win;
	OX_TRY(check_pool_input(op, x, true, ctx->st));
	if (!ind || ind->dtype != OX_INT64 || !ox_shape_equal(ind->rank, ind->dims, x->rank, x->dims))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: I has shape %s, expected int64 with the shape of X %s",
					   op, ind ? nn_shape(ind, si) : "[]", nn_shape(x, sx));
	nsp = x->rank - 2;
	if (w->n_kernel != nsp || (w->n_strides && w->n_strides != nsp) ||
		(w->n_pads && w->n_pads != 2 * nsp))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "%s: kernel_shape, strides or pads do not fit X %s", op, nn_shape(x, sx));
	inf_dims[0] = x->dims[0];
	inf_dims[1] = x->dims[1];
	for (int i = 0; i < nsp; i++)
	{
		int64_t		st = w->n_strides ? w->strides[i] : 1;
		int64_t		pads = w->n_pads ? w->pads[i] + w->pads[nsp + i] : 0;

		if (x->dims[2 + i] > OX_MAX_ELEMENTS / st)
			return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "%s: X %s with stride %lld gives a too large output",
						   op, nn_shape(x, sx), (long long) st);
		inf_dims[2 + i] = (x->dims[2 + i] - 1) * st + w->kernel[i] - pads;
		if (x->dims[2 + i] < 1 || inf_dims[2 + i] < 1)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: X %s and the window give no output",
						   op, nn_shape(x, sx));
	}
	memcpy(y_dims, inf_dims, sizeof(int64_t) * x->rank);
	if (shape)
	{
		if (shape->dtype != OX_INT64 || shape->rank != 1 || shape->dims[0] != x->rank)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: output_shape must be int64 with %d values",
						   op, x->rank);
		for (int i = 0; i < x->rank; i++)
		{
			y_dims[i] = ((const int64_t *) shape->data)[i];
			if (y_dims[i] < inf_dims[i] || y_dims[i] > OX_MAX_ELEMENTS || (i < 2 && y_dims[i] != inf_dims[i]))
				return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
							   "%s: output_shape %s is smaller than %s, the shape X %s unpools to",
							   op, ox_shape_str(x->rank, y_dims, si, sizeof(si)),
							   ox_shape_str(x->rank, inf_dims, sx, sizeof(sx)), nn_shape(x, sx));
		}
	}
	ninf = ox_shape_numel(x->rank, inf_dims);
	ny = ox_shape_numel(x->rank, y_dims);
	if (ny < 0 || ninf < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "%s: output is too large", op);
	nx = ox_tensor_numel(x);
	for (int64_t i = 0; i < nx; i++)
	{
		int64_t		v = ((const int64_t *) ind->data)[i];

		if (v < 0 || v >= ninf)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "%s: index %lld at position %lld is outside the unpooled tensor of %lld elements",
						   op, (long long) v, (long long) i, (long long) ninf);
	}
	if (!(y = ox_out_tensor(ctx, 0, x->dtype, x->rank, y_dims)))
		return ctx->st->code;
	es = ox_dtype_size(x->dtype);
	if (ny > 0)
		memset(y->data, 0, (size_t) ny * es);
	for (int64_t i = 0; i < nx; i++)
	{
		int64_t		v = ((const int64_t *) ind->data)[i],
					off = 0,
					mul = 1;

		/* re-address from the inferred shape into the (possibly larger) output */
		for (int a = x->rank - 1; a >= 0; a--)
		{
			off += (v % inf_dims[a]) * mul;
			v /= inf_dims[a];
			mul *= y_dims[a];
		}
		memcpy((char *) y->data + off * es, (const char *) x->data + i * es, es);
	}
	return OX_OK;
}

static ox_code
max_unpool_prepare(ox_prepare_ctx *pc)
{
	return pool_prepare_common(pc, POOL_MAX);
}

/* ---- family table ------------------------------------------------------- */

const ox_kernel_def ox_kernels_pool[] = {
	{"", "MaxPool", 1, max_pool_prepare, pool_run, pool_free},
	{"", "AveragePool", 1, avg_pool_prepare, pool_run, pool_free},
	{"", "LpPool", 1, lp_pool_prepare, pool_run, pool_free},
	{"", "GlobalAveragePool", 1, NULL, global_average_pool_run, NULL},
	{"", "GlobalMaxPool", 1, NULL, global_max_pool_run, NULL},
	{"", "GlobalLpPool", 1, NULL, global_lp_pool_run, NULL},
	{"", "MaxRoiPool", 1, NULL, max_roi_pool_run, NULL},
	{"", "MaxUnpool", 9, max_unpool_prepare, max_unpool_run, pool_free},
};
const int	ox_kernels_pool_count = OX_KERNEL_COUNT(ox_kernels_pool);
