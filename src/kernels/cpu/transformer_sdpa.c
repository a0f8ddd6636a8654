/*
 * transformer_sdpa.c
 *	  onnx_pg.fused ScaledDotProductAttention, the engine-private operator
 *	  that passes/fuse_attention.c makes of attention's MatMul -> Softmax ->
 *	  MatMul together with the Transposes around it:
 *
 *		Y = transpose(softmax(alpha * Q' K' + M, last axis) V', perm_y)
 *		Q' = transpose(Q, perm_q)	[..., Tq, d]
 *		K' = transpose(K, perm_k)	[..., d, Tk]
 *		V' = transpose(V, perm_v)	[..., Tk, dv]
 *
 *	  with the leading (batch) axes broadcast as MatMul broadcasts them.  An
 *	  absent perm is the identity.  M, the optional fourth input (an
 *	  attention mask added to the scores), broadcasts into the scores
 *	  [..., Tq, Tk] as Add does; its batch axes join the others'.  float32
 *	  only: the pass fuses nothing else.
 *
 * Why: unfused, the scores [..., Tq, Tk] of every head are written by the
 * first product, read and written by the Softmax and read by the second,
 * megabytes that go to L3 and back three times once batch * heads is large,
 * and each Transpose is one more copy of Q, K, V or Y.  Here a group (one
 * batch index) packs its K' and V' into contiguous tiles, then four query
 * rows at a time go through scores, softmax and the product with V' while
 * they are in L1; the transposes are only strides.  Softmax's division is
 * applied to the four output rows rather than to the scores (the product
 * is linear), so the score rows are written once.
 */
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/transformer.h"
#include "kernels/cpu/vmath_avx512.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SDPA_MAX_RANK 8
#define SDPA_ROWS 8				/* query rows per step */
#define SDPA_LANES 16			/* packed tiles' rows are padded to this */
#define SDPA_TASK_WORK 134217728.0	/* multiply-adds a task: a few ms */

typedef struct sdpa_state
{
	float		alpha;
	int			rank;			/* the perms' length; 0 when no perm is given */
	bool		has_perm[4];	/* q, k, v, y */
	int			perm[4][SDPA_MAX_RANK];
} sdpa_state;

/* a transposed operand: dims and element strides of the logical tensor */
typedef struct sdpa_view
{
	const float *data;
	int64_t		dims[SDPA_MAX_RANK];
	int64_t		strides[SDPA_MAX_RANK];
} sdpa_view;

typedef struct sdpa_job
{
	ox_kernel_ctx *ctx;
	sdpa_view	q,
				k,
				v,
				m,				/* the mask, dims padded to the rank; m.data NULL: none */
				y;				/* y: the logical [..., Tq, dv] result in Y's memory */
	int			rank;
	int64_t		bdims[SDPA_MAX_RANK];	/* broadcast batch axes */
	int64_t		groups;
	int64_t		tq,
				d,
				tk,
				dv;
	int64_t		ldk,			/* packed K' rows: tk padded */
				ldv;			/* packed V' rows: dv padded */
	int64_t		row_chunk;		/* query rows per task */
	int64_t		chunks;			/* tasks per group */
	int64_t		tasks;
	int64_t		slots;
	int64_t		slot_floats;
	int64_t		poll_work;		/* a task's multiply-adds / 64, at most OX_POLL_WORK */
	float		alpha;
	bool		avx512;
	const struct sdpa_isa *isa;
	float	   *scratch;
} sdpa_job;

/* tests: the portable products and exponentials even where AVX-512 runs */
static int	sdpa_portable_forced;

int
transformer_sdpa_force_portable(int on)
{
	int			before = sdpa_portable_forced;

	if (on >= 0)
		sdpa_portable_forced = on != 0;
	return before;
}

static const char *const sdpa_perm_names[4] = {"perm_q", "perm_k", "perm_v", "perm_y"};

ox_code
transformer_sdpa_prepare(ox_prepare_ctx *pc)
{
	sdpa_state *s = calloc(1, sizeof(sdpa_state));

	if (!s)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "ScaledDotProductAttention: out of memory");
	pc->state = s;
	s->alpha = ox_attr_float(pc->node, "alpha", 1.0f);
	for (int p = 0; p < 4; p++)
	{
		const int64_t *perm;
		int			n = ox_attr_ints(pc->node, sdpa_perm_names[p], &perm);
		bool		seen[SDPA_MAX_RANK] = {false};

		if (n <= 0)
			continue;
		if (n < 2 || n > SDPA_MAX_RANK || (s->rank && n != s->rank))
			return ox_fail(pc->st, OX_INVALID_MODEL,
						   "ScaledDotProductAttention \"%s\": %s has %d axes (2 to %d, the same for every perm)",
						   pc->node->name, sdpa_perm_names[p], n, SDPA_MAX_RANK);
		for (int i = 0; i < n; i++)
		{
			if (perm[i] < 0 || perm[i] >= n || seen[perm[i]])
				return ox_fail(pc->st, OX_INVALID_MODEL,
							   "ScaledDotProductAttention \"%s\": %s is not a permutation",
							   pc->node->name, sdpa_perm_names[p]);
			seen[perm[i]] = true;
			s->perm[p][i] = (int) perm[i];
		}
		s->rank = n;
		s->has_perm[p] = true;
	}
	return OX_OK;
}

void
transformer_sdpa_free(void *state)
{
	free(state);
}

/* the logical tensor transpose(t, perm) as strides over t's data */
static void
sdpa_view_of(sdpa_view *v, const ox_tensor *t, const int *perm, int rank)
{
	int64_t		cs[SDPA_MAX_RANK];
	int64_t		s = 1;

	for (int i = rank - 1; i >= 0; i--)
	{
		cs[i] = s;
		s *= t->dims[i];
	}
	v->data = t->data;
	for (int i = 0; i < rank; i++)
	{
		int			a = perm ? perm[i] : i;

		v->dims[i] = t->dims[a];
		v->strides[i] = cs[a];
	}
}

/* view v of rank r as one of rank to, with leading axes of 1 */
static void
sdpa_view_pad(sdpa_view *v, int r, int to)
{
	int			shift = to - r;

	for (int i = to - 1; i >= 0; i--)
	{
		v->dims[i] = i >= shift ? v->dims[i - shift] : 1;
		v->strides[i] = i >= shift ? v->strides[i - shift] : 0;
	}
}

/* MatMul's broadcast of one batch axis into *out; false when they clash */
static bool
sdpa_broadcast(int64_t *out, int64_t dim)
{
	if (*out == dim || dim == 1)
		return true;
	if (*out == 1)
	{
		*out = dim;
		return true;
	}
	return false;
}

/* ---- the two products ----------------------------------------------------- */

/*
 * C[R x N] = A[R x K] B[K x N], row r of the result scaled by scale[r], N a
 * multiple of 16.  With max (the scores' product), max[r] is the largest of
 * row r's first `valid` columns (NaN never wins, as in Softmax).
 */
OX_SIMD_CLONES static void
sdpa_product_portable(int rows, const float *a, int64_t lda, const float *b, int64_t ldb, int64_t kk,
					  int64_t n, float *c, int64_t ldc, const float *scale, float *max, int64_t valid)
{
	for (int r = 0; r < rows; r++)
	{
		const float *ar = a + r * lda;
		float	   *restrict cr = c + r * ldc;

		for (int64_t j = 0; j < n; j++)
			cr[j] = 0.0f;
		for (int64_t k = 0; k < kk; k++)
		{
			const float av = ar[k];
			const float *restrict bk = b + k * ldb;

			for (int64_t j = 0; j < n; j++)
				cr[j] += av * bk[j];
		}
		for (int64_t j = 0; j < n; j++)
			cr[j] *= scale[r];
		if (max)
		{
			float		m = -INFINITY;

			for (int64_t j = 0; j < valid; j++)
				m = cr[j] > m ? cr[j] : m;
			max[r] = m;
		}
	}
}

/* R rows by NC sixteen-float columns: R * NC accumulators in registers */
__attribute__((target("avx512f,fma"), always_inline))
static inline void
sdpa_tile_avx512(const int R, const int NC, const float *a, int64_t lda, const float *b, int64_t ldb,
				 int64_t kk, float *c, int64_t ldc, const float *scale, __m512 *vmax, int64_t valid)
{
	__m512		acc[SDPA_ROWS][2];

	for (int r = 0; r < R; r++)
		for (int j = 0; j < NC; j++)
			acc[r][j] = _mm512_setzero_ps();
	for (int64_t k = 0; k < kk; k++)
	{
		__m512		bk[2];

		for (int j = 0; j < NC; j++)
			bk[j] = _mm512_loadu_ps(b + k * ldb + 16 * j);
		for (int r = 0; r < R; r++)
		{
			__m512		ar = _mm512_set1_ps(a[r * lda + k]);

			for (int j = 0; j < NC; j++)
				acc[r][j] = _mm512_fmadd_ps(ar, bk[j], acc[r][j]);
		}
	}
	for (int r = 0; r < R; r++)
	{
		__m512		f = _mm512_set1_ps(scale[r]);

		for (int j = 0; j < NC; j++)
		{
			__m512		v = _mm512_mul_ps(acc[r][j], f);
			int64_t		lanes = valid - 16 * j;

			_mm512_storeu_ps(c + r * ldc + 16 * j, v);
			if (!vmax || lanes <= 0)
				continue;
			if (lanes >= 16)
				vmax[r] = _mm512_max_ps(v, vmax[r]);
			else
				vmax[r] = _mm512_mask_max_ps(vmax[r], (__mmask16) ((1u << lanes) - 1), v, vmax[r]);
		}
	}
}

#define SDPA_CASE(R, NC) \
	case ((R) - 1) * 2 + (NC) - 1: \
		sdpa_tile_avx512(R, NC, a, lda, b + n0, ldb, kk, c + n0, ldc, scale, vm, valid - n0); \
		break

__attribute__((target("avx512f,fma")))
static void
sdpa_product_avx512(int rows, const float *a, int64_t lda, const float *b, int64_t ldb, int64_t kk,
					int64_t n, float *c, int64_t ldc, const float *scale, float *max, int64_t valid)
{
	__m512		vmax[SDPA_ROWS];
	__m512	   *vm = max ? vmax : NULL;

	for (int r = 0; r < rows; r++)
		vmax[r] = _mm512_set1_ps(-INFINITY);
	for (int64_t n0 = 0; n0 < n; n0 += 32)
	{
		const int	nc = n - n0 >= 32 ? 2 : 1;

		switch ((rows - 1) * 2 + nc - 1)
		{
				SDPA_CASE(1, 1);
				SDPA_CASE(1, 2);
				SDPA_CASE(2, 1);
				SDPA_CASE(2, 2);
				SDPA_CASE(3, 1);
				SDPA_CASE(3, 2);
				SDPA_CASE(4, 1);
				SDPA_CASE(4, 2);
				SDPA_CASE(5, 1);
				SDPA_CASE(5, 2);
				SDPA_CASE(6, 1);
				SDPA_CASE(6, 2);
				SDPA_CASE(7, 1);
				SDPA_CASE(7, 2);
				SDPA_CASE(8, 1);
			default:
				sdpa_tile_avx512(8, 2, a, lda, b + n0, ldb, kk, c + n0, ldc, scale, vm, valid - n0);
				break;
		}
	}
	if (max)
		for (int r = 0; r < rows; r++)
			max[r] = _mm512_reduce_max_ps(vmax[r]);
}

/* ---- the mask ------------------------------------------------------------- */

/* x[i] += b[i * bs] over n > 0 floats (bs 0: one value for the row); returns the max */
static float
sdpa_mask_row_portable(float *x, const float *b, int64_t bs, int64_t n)
{
	float		m = -INFINITY;

	for (int64_t i = 0; i < n; i++)
	{
		x[i] += b[i * bs];
		m = x[i] > m ? x[i] : m;
	}
	return m;
}

__attribute__((target("avx512f,fma")))
static float
sdpa_mask_row_avx512(float *x, const float *b, int64_t bs, int64_t n)
{
	const int64_t body = n - n % 16;
	const __mmask16 tail = (__mmask16) ((1u << (n % 16)) - 1);
	__m512		vm = _mm512_set1_ps(-INFINITY);
	int64_t		i;

	if (bs != 1)
		return sdpa_mask_row_portable(x, b, bs, n);
	for (i = 0; i < body; i += 16)
	{
		__m512		y = _mm512_add_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(b + i));

		_mm512_storeu_ps(x + i, y);
		vm = _mm512_max_ps(y, vm);
	}
	if (tail)
	{
		__m512		y = _mm512_add_ps(_mm512_maskz_loadu_ps(tail, x + i), _mm512_maskz_loadu_ps(tail, b + i));

		_mm512_mask_storeu_ps(x + i, tail, y);
		vm = _mm512_mask_max_ps(vm, tail, y, vm);
	}
	return _mm512_reduce_max_ps(vm);
}

/* ---- softmax's exponentials ------------------------------------------------ */

/* x := exp(x - m) over n > 0 floats; returns 1 / their sum */
static float
sdpa_exp_row_portable(float *x, int64_t n, float m)
{
	double		sum = 0;

	for (int64_t i = 0; i < n; i++)
	{
		x[i] = ox_fast_expf(x[i] - m);
		sum += x[i];
	}
	return (float) (1.0 / sum);
}

__attribute__((target("avx512f,fma")))
static float
sdpa_exp_row_avx512(float *x, int64_t n, float m)
{
	const __m512 vm = _mm512_set1_ps(m);
	const int64_t body = n - n % 16;
	const __mmask16 tail = (__mmask16) ((1u << (n % 16)) - 1);
	__m512		vs = _mm512_setzero_ps();
	int64_t		i;

	for (i = 0; i < body; i += 16)
	{
		__m512		e = ox_exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), vm));

		_mm512_storeu_ps(x + i, e);
		vs = _mm512_add_ps(vs, e);
	}
	if (tail)
	{
		__m512		e = _mm512_maskz_mov_ps(tail, ox_exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + i), vm)));

		_mm512_mask_storeu_ps(x + i, tail, e);
		vs = _mm512_add_ps(vs, e);
	}
	return 1.0f / _mm512_reduce_add_ps(vs);
}

/* the code a run takes: AVX-512 where the CPU has it, else the portable C */
typedef struct sdpa_isa
{
	void		(*product) (int rows, const float *a, int64_t lda, const float *b, int64_t ldb, int64_t kk,
							int64_t n, float *c, int64_t ldc, const float *scale, float *max, int64_t valid);
	float		(*mask_row) (float *x, const float *b, int64_t bs, int64_t n);
	float		(*exp_row) (float *x, int64_t n, float m);
} sdpa_isa;

static const sdpa_isa sdpa_isa_avx512 = {sdpa_product_avx512, sdpa_mask_row_avx512, sdpa_exp_row_avx512};
static const sdpa_isa sdpa_isa_portable = {sdpa_product_portable, sdpa_mask_row_portable, sdpa_exp_row_portable};

/* ---- one task: a group's packed K' (and V'), then its rows [t0, t1) -------- */

/*
 * dst[r * ld + c] = src[r * rs + c * cs] for r < rows, c < cols, and zeros
 * in columns [cols, ld): K' is mostly a transpose (keys stored row by row),
 * so that case reads its source in order
 */
__attribute__((target("avx512f")))
static void
sdpa_pack_gather_avx512(float *dst, int64_t ld, const float *src, int64_t rows, int64_t cols, int64_t cs)
{
	const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
										   _mm512_set1_epi32((int) cs));
	int64_t		c = 0;

	for (; c + 16 <= cols; c += 16)
		for (int64_t r = 0; r < rows; r++)
			_mm512_storeu_ps(dst + r * ld + c, _mm512_i32gather_ps(idx, src + c * cs + r, 4));
	for (; c < cols; c++)
		for (int64_t r = 0; r < rows; r++)
			dst[r * ld + c] = src[c * cs + r];
}

/* columns [0, cols) of the packed tile; sdpa_pack zeroes the padding */
static void
sdpa_pack_cells(float *dst, int64_t ld, const float *src, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
				bool avx512)
{
	if (rs == 1 && cs != 1 && avx512 && cs <= INT32_MAX / 16)
		sdpa_pack_gather_avx512(dst, ld, src, rows, cols, cs);
	else if (cs == 1)
		for (int64_t r = 0; r < rows; r++)
		{
			float	   *restrict d = dst + r * ld;
			const float *restrict sr = src + r * rs;

			for (int64_t c = 0; c < cols; c++)
				d[c] = sr[c];
		}
	else if (rs == 1)
		for (int64_t c = 0; c < cols; c++)
		{
			const float *restrict sc = src + c * cs;

			for (int64_t r = 0; r < rows; r++)
				dst[r * ld + c] = sc[r];
		}
	else
		for (int64_t r = 0; r < rows; r++)
		{
			float	   *restrict d = dst + r * ld;
			const float *restrict sr = src + r * rs;

			for (int64_t c = 0; c < cols; c++)
				d[c] = sr[c * cs];
		}
}

/*
 * The whole tile in pieces of about OX_POLL_BLOCK elements, the cancel
 * polled between them (false: canceled, the tile incomplete).  A group's K'
 * and V' are written before its first row is computed, into fresh pages:
 * 30000 keys of 256 are 30 MB, 15 ms here and far longer on a host whose
 * page faults are slow.  The longer side is split, K' (d x keys) by
 * columns, in multiples of 16 (the gather's width), V' (keys x dv) by rows.
 */
static bool
sdpa_pack(const sdpa_job *j, float *dst, int64_t ld, const float *src, int64_t rows, int64_t cols, int64_t rs,
		  int64_t cs)
{
	if (cols >= rows)
	{
		int64_t		step = OX_POLL_BLOCK / (rows > 0 ? rows : 1) / 16 * 16;

		if (step < 16)
			step = 16;
		for (int64_t c = 0; c < cols; c += step)
		{
			int64_t		n = cols - c < step ? cols - c : step;

			sdpa_pack_cells(dst + c, ld, src + c * cs, rows, n, rs, cs, j->avx512);
			if (ox_kernel_poll(j->ctx, rows * n))
				return false;
		}
	}
	else
	{
		int64_t		step = OX_POLL_BLOCK / (cols > 0 ? cols : 1);

		if (step < 1)
			step = 1;
		for (int64_t r = 0; r < rows; r += step)
		{
			int64_t		n = rows - r < step ? rows - r : step;

			sdpa_pack_cells(dst + r * ld, ld, src + r * rs, n, cols, rs, cs, j->avx512);
			if (ox_kernel_poll(j->ctx, n * cols))
				return false;
		}
	}
	for (int64_t r = 0; r < rows; r++)
		for (int64_t c = cols; c < ld; c++)
			dst[r * ld + c] = 0.0f;
	return true;
}

/* element offset of group g's batch index in view x (broadcast axes stride 0) */
static int64_t
sdpa_group_offset(const sdpa_job *j, const sdpa_view *x, int64_t g)
{
	int64_t		off = 0;

	for (int i = j->rank - 3; i >= 0; i--)
	{
		int64_t		c = g % j->bdims[i];

		g /= j->bdims[i];
		if (x->dims[i] != 1)
			off += c * x->strides[i];
	}
	return off;
}

/* false: canceled (packing, or between the rows' two products) */
static bool
sdpa_task(const sdpa_job *j, int64_t task, float *ws, int64_t *packed_group)
{
	const int	r = j->rank;
	const int64_t g = task / j->chunks;
	const int64_t t0 = task % j->chunks * j->row_chunk;
	const int64_t t1 = t0 + j->row_chunk < j->tq ? t0 + j->row_chunk : j->tq;
	const int64_t d = j->d,
				tk = j->tk,
				dv = j->dv;
	const float *q = j->q.data + sdpa_group_offset(j, &j->q, g);
	float	   *y = (float *) j->y.data + sdpa_group_offset(j, &j->y, g);
	/* a single query row or key column broadcast against the mask's: stride 0 */
	const int64_t qs_t = j->q.dims[r - 2] == 1 ? 0 : j->q.strides[r - 2],
				qs_d = j->q.strides[r - 1],
				ys_t = j->y.strides[r - 2],
				ys_e = j->y.strides[r - 1];
	/*
	 * V' is read in place only when it is contiguous: its rows are read once
	 * per eight queries, and rows a power of two apart (heads interleaved in
	 * the tensor) share one L1 set and evict each other.  Y's rows, written
	 * once, go in place whenever they are whole vectors.
	 */
	const bool	v_direct = j->v.strides[r - 1] == 1 && j->v.strides[r - 2] == dv && dv % SDPA_LANES == 0;
	const bool	y_direct = ys_e == 1 && dv % SDPA_LANES == 0;
	float	   *kp = ws;
	float	   *vp = kp + d * j->ldk;
	float	   *qb = vp + (v_direct ? 0 : tk * j->ldv);
	float	   *sb = qb + SDPA_ROWS * d;
	float	   *ob = sb + SDPA_ROWS * j->ldk;
	const float *v;
	int64_t		ldv;
	float		alpha[SDPA_ROWS];
	const float *mask = j->m.data ? j->m.data + sdpa_group_offset(j, &j->m, g) : NULL;
	const int64_t ms_t = j->m.dims[r - 2] == 1 ? 0 : j->m.strides[r - 2],
				ms_s = j->m.dims[r - 1] == 1 ? 0 : j->m.strides[r - 1];

	if (tk == 0)
	{
		/* no keys: each output row is an empty sum */
		for (int64_t t = t0; t < t1; t++)
			for (int64_t e = 0; e < dv; e++)
				y[t * ys_t + e * ys_e] = 0.0f;
		return true;
	}
	if (v_direct)
	{
		v = j->v.data + sdpa_group_offset(j, &j->v, g);
		ldv = j->v.strides[r - 2];
	}
	else
	{
		v = vp;
		ldv = j->ldv;
	}
	if (*packed_group != g)
	{
		*packed_group = -1;
		if (!sdpa_pack(j, kp, j->ldk, j->k.data + sdpa_group_offset(j, &j->k, g), d, tk,
					   j->k.strides[r - 2], j->k.dims[r - 1] == 1 ? 0 : j->k.strides[r - 1]))
			return false;
		if (!v_direct &&
			!sdpa_pack(j, vp, j->ldv, j->v.data + sdpa_group_offset(j, &j->v, g), tk, dv,
					   j->v.strides[r - 2], j->v.strides[r - 1]))
			return false;
		*packed_group = g;
	}
	for (int i = 0; i < SDPA_ROWS; i++)
		alpha[i] = j->alpha;
	for (int64_t t = t0; t < t1; t += SDPA_ROWS)
	{
		const int	rows = (int) (t1 - t < SDPA_ROWS ? t1 - t : SDPA_ROWS);
		const float *qa = q + t * qs_t;
		int64_t		lda = qs_t;
		float	   *out = y_direct ? y + t * ys_t : ob;
		int64_t		ldo = y_direct ? ys_t : j->ldv;
		float		max[SDPA_ROWS],
					inv[SDPA_ROWS];

		if (qs_d != 1)
		{
			for (int i = 0; i < rows; i++)
				for (int64_t c = 0; c < d; c++)
					qb[i * d + c] = qa[i * qs_t + c * qs_d];
			qa = qb;
			lda = d;
		}
		j->isa->product(rows, qa, lda, kp, j->ldk, d, j->ldk, sb, j->ldk, alpha, mask ? NULL : max, tk);
		/* halfway through the rows' work (long sequences: a step is milliseconds); units as sdpa_slots' */
		if (ox_kernel_poll(j->ctx, rows * tk * d / 64))
			return false;
		for (int i = 0; mask && i < rows; i++)
			max[i] = j->isa->mask_row(sb + i * j->ldk, mask + (t + i) * ms_t, ms_s, tk);
		for (int i = 0; i < rows; i++)
			inv[i] = j->isa->exp_row(sb + i * j->ldk, tk, max[i]);
		j->isa->product(rows, sb, j->ldk, v, ldv, tk, y_direct ? dv : j->ldv, out, ldo, inv, NULL, 0);
		if (!y_direct)
			for (int i = 0; i < rows; i++)
			{
				float	   *yr = y + (t + i) * ys_t;
				const float *o = ob + i * j->ldv;

				for (int64_t e = 0; e < dv; e++)
					yr[e * ys_e] = o[e];
			}
	}
	return true;
}

/* slot s runs tasks [s * tasks / slots, (s + 1) * tasks / slots) in its scratch */
static void
sdpa_slots(void *arg, int64_t begin, int64_t end)
{
	const sdpa_job *j = arg;

	for (int64_t s = begin; s < end; s++)
	{
		float	   *ws = j->scratch + s * j->slot_floats;
		int64_t		packed = -1;
		int64_t		first = s * j->tasks / j->slots,
					last = (s + 1) * j->tasks / j->slots;

		for (int64_t t = first; t < last; t++)
		{
			/* the run's thread asks the cancel callback, workers what it answered */
			if (ox_kernel_poll(j->ctx, j->poll_work) || !sdpa_task(j, t, ws, &packed))
				return;
		}
	}
}

static int64_t
sdpa_pad(int64_t n)
{
	return (n + SDPA_LANES - 1) / SDPA_LANES * SDPA_LANES;
}

ox_code
transformer_sdpa_run(ox_kernel_ctx *ctx)
{
	const sdpa_state *s = ctx->state;
	const char *name = ctx->node->name;
	const ox_tensor *in[3];
	sdpa_view  *views[3];
	sdpa_job	j;
	int64_t		ldims[SDPA_MAX_RANK],
				ydims[SDPA_MAX_RANK];
	int			r;
	ox_tensor  *yt;
	int64_t		ys,
				threads;

	memset(&j, 0, sizeof(j));
	views[0] = &j.q;
	views[1] = &j.k;
	views[2] = &j.v;
	for (int i = 0; i < 3; i++)
	{
		in[i] = ox_in_tensor(ctx, i);
		if (!in[i] || in[i]->dtype != OX_FLOAT)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "ScaledDotProductAttention \"%s\": input %d must be a float32 tensor", name, i);
	}
	r = s->rank ? s->rank : in[0]->rank;
	if (r < 2 || r > SDPA_MAX_RANK)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "ScaledDotProductAttention \"%s\": inputs of rank %d (2 to %d)", name, r, SDPA_MAX_RANK);
	for (int i = 0; i < 3; i++)
	{
		if (in[i]->rank != r)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "ScaledDotProductAttention \"%s\": input %d has rank %d, not %d",
						   name, i, in[i]->rank, r);
		sdpa_view_of(views[i], in[i], s->has_perm[i] ? s->perm[i] : NULL, r);
	}
	if (ox_has_input(ctx, 3))
	{
		/* a mask of higher rank adds batch axes, as the Add it stands for does */
		const ox_tensor *mt = ox_in_tensor(ctx, 3);
		int			rr = mt && mt->rank > r ? mt->rank : r;

		if (!mt || mt->dtype != OX_FLOAT || rr > SDPA_MAX_RANK)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "ScaledDotProductAttention \"%s\": the mask must be a float32 tensor of rank at most %d",
						   name, SDPA_MAX_RANK);
		if (rr > r && s->has_perm[3])
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "ScaledDotProductAttention \"%s\": a mask of rank %d makes a result of rank %d, "
						   "which perm_y (%d axes) does not transpose", name, mt->rank, rr, r);
		for (int i = 0; i < 3; i++)
			sdpa_view_pad(views[i], r, rr);
		sdpa_view_of(&j.m, mt, NULL, mt->rank);
		sdpa_view_pad(&j.m, mt->rank, rr);
		r = rr;
	}
	else
		for (int i = 0; i < r; i++)
			j.m.dims[i] = 1;
	j.rank = r;
	/* the scores [..., tq, tk] are Q' K' broadcast with the mask's last two axes */
	j.tq = j.q.dims[r - 2];
	j.d = j.q.dims[r - 1];
	j.tk = j.k.dims[r - 1];
	j.dv = j.v.dims[r - 1];
	if (!sdpa_broadcast(&j.tq, j.m.dims[r - 2]) || !sdpa_broadcast(&j.tk, j.m.dims[r - 1]))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "ScaledDotProductAttention \"%s\": a mask of [%lld, %lld] does not broadcast with scores of "
					   "[%lld, %lld]", name, (long long) j.m.dims[r - 2], (long long) j.m.dims[r - 1],
					   (long long) j.q.dims[r - 2], (long long) j.k.dims[r - 1]);
	if (j.k.dims[r - 2] != j.d || j.v.dims[r - 2] != j.tk)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "ScaledDotProductAttention \"%s\": queries of width %lld, keys [%lld, %lld] and values "
					   "of %lld rows do not multiply", name, (long long) j.d, (long long) j.k.dims[r - 2],
					   (long long) j.tk, (long long) j.v.dims[r - 2]);
	j.groups = 1;
	for (int i = 0; i < r - 2; i++)
	{
		j.bdims[i] = j.q.dims[i];
		if (!sdpa_broadcast(&j.bdims[i], j.k.dims[i]) || !sdpa_broadcast(&j.bdims[i], j.v.dims[i]) ||
			!sdpa_broadcast(&j.bdims[i], j.m.dims[i]))
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "ScaledDotProductAttention \"%s\": batch axis %d does not broadcast "
						   "(%lld, %lld, %lld, mask %lld)", name, i, (long long) j.q.dims[i],
						   (long long) j.k.dims[i], (long long) j.v.dims[i], (long long) j.m.dims[i]);
		ldims[i] = j.bdims[i];
		j.groups *= j.bdims[i];
	}
	ldims[r - 2] = j.tq;
	ldims[r - 1] = j.dv;
	for (int i = 0; i < r; i++)
		ydims[i] = ldims[s->has_perm[3] ? s->perm[3][i] : i];
	yt = ox_out_tensor(ctx, 0, OX_FLOAT, r, ydims);
	if (!yt)
		return ctx->st->code;
	if (ox_tensor_numel(yt) == 0)
		return OX_OK;
	/* the logical result's axis perm_y[i] is Y's axis i */
	ys = 1;
	j.y.data = yt->data;
	for (int i = r - 1; i >= 0; i--)
	{
		int			a = s->has_perm[3] ? s->perm[3][i] : i;

		j.y.dims[a] = ldims[a];
		j.y.strides[a] = ys;
		ys *= ydims[i];
	}
	j.ctx = ctx;
	j.alpha = s->alpha;
	j.avx512 = ox_have_avx512_fma() && !sdpa_portable_forced;
	j.isa = j.avx512 ? &sdpa_isa_avx512 : &sdpa_isa_portable;
	j.ldk = sdpa_pad(j.tk);
	j.ldv = sdpa_pad(j.dv);
	threads = ctx->nthreads > 1 ? ctx->nthreads : 1;
	/* few groups on many threads: split each group's rows, at least 64 a task */
	j.chunks = 1;
	if (j.groups < 2 * threads && j.tq >= 128)
	{
		int64_t		want = (2 * threads + j.groups - 1) / j.groups;

		j.chunks = want < j.tq / 64 ? want : j.tq / 64;
	}
	j.row_chunk = (j.tq + j.chunks - 1) / j.chunks;
	{
		/* and at most SDPA_TASK_WORK multiply-adds a task: cancels are polled between tasks */
		double		per_row = (double) j.tk * (double) (j.d + j.dv) + 1;
		int64_t		cap = per_row * SDPA_ROWS >= SDPA_TASK_WORK ? SDPA_ROWS :
			(int64_t) (SDPA_TASK_WORK / per_row) / SDPA_ROWS * SDPA_ROWS;

		if (j.row_chunk > cap)
			j.row_chunk = cap;
	}
	j.chunks = (j.tq + j.row_chunk - 1) / j.row_chunk;
	j.tasks = j.groups * j.chunks;
	j.slots = threads > 1 ? (2 * threads < j.tasks ? 2 * threads : j.tasks) : 1;
	{
		double		work = (double) j.row_chunk * (double) j.tk * (double) (j.d + j.dv) / 64 + 1;

		j.poll_work = work < OX_POLL_WORK ? (int64_t) work : OX_POLL_WORK;
	}
	j.slot_floats = j.d * j.ldk + j.tk * j.ldv + SDPA_ROWS * (j.d + j.ldk + j.ldv);	/* V' packed or not */
	j.scratch = ox_workspace_aligned((size_t) (j.slots * j.slot_floats) * sizeof(float), ctx->st,
									 "ScaledDotProductAttention");
	if (!j.scratch)
		return ctx->st->code;
	ox_parallel_for(ctx, j.slots, 1, sdpa_slots, &j);
	ox_aligned_free(j.scratch);
	return ctx->st->code;
}
