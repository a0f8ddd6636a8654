/*
 * sgemm_sparse_kernels.h
 *	  The kernels of sgemm_sparse.c, compiled there once per instruction
 *	  set: define SP_W, the floats of a vector (16: AVX-512, 8: AVX2 and
 *	  FMA), before including.  A sliver of packed B is two vectors wide
 *	  (the micro-kernels' nr), so SP_SLIVER = 2 SP_W columns; the entry
 *	  point is SP_FN(ox_sgemm_sparse_rows), ox_sgemm_sparse_rows_avx512 or
 *	  ox_sgemm_sparse_rows_avx2.
 */
#if SP_W == 16

#define SP_FN(name) name##_avx512
#define SP_TARGET "avx512f,fma"
#define sp_vec __m512
#define sp_mask __mmask16
#define sp_zero() _mm512_setzero_ps()
#define sp_load(p) _mm512_load_ps(p)
#define sp_loadu(p) _mm512_loadu_ps(p)
#define sp_storeu(p, v) _mm512_storeu_ps((p), (v))
#define sp_set1(x) _mm512_set1_ps(x)
#define sp_fmadd(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define sp_mul(a, b) _mm512_mul_ps((a), (b))
#define sp_add(a, b) _mm512_add_ps((a), (b))
#define sp_min(a, b) _mm512_min_ps((a), (b))
#define sp_max(a, b) _mm512_max_ps((a), (b))
/* the first n lanes, n in 1 .. 16 */
#define sp_first(n) ((n) >= 16 ? (__mmask16) 0xFFFF : (__mmask16) ((1u << (n)) - 1))
#define sp_mloadu(m, p) _mm512_maskz_loadu_ps((m), (p))
#define sp_mstoreu(p, m, v) _mm512_mask_storeu_ps((p), (m), (v))

#elif SP_W == 8

#define SP_FN(name) name##_avx2
#define SP_TARGET "avx2,fma"
#define sp_vec __m256
#define sp_mask __m256i
#define sp_zero() _mm256_setzero_ps()
#define sp_load(p) _mm256_load_ps(p)
#define sp_loadu(p) _mm256_loadu_ps(p)
#define sp_storeu(p, v) _mm256_storeu_ps((p), (v))
#define sp_set1(x) _mm256_set1_ps(x)
#define sp_fmadd(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define sp_mul(a, b) _mm256_mul_ps((a), (b))
#define sp_add(a, b) _mm256_add_ps((a), (b))
#define sp_min(a, b) _mm256_min_ps((a), (b))
#define sp_max(a, b) _mm256_max_ps((a), (b))
#define sp_first(n) _mm256_cmpgt_epi32(_mm256_set1_epi32((int) (n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
#define sp_mloadu(m, p) _mm256_maskload_ps((p), (m))
#define sp_mstoreu(p, m, v) _mm256_maskstore_ps((p), (m), (v))

#else
#error "define SP_W as 16 or 8 before including sgemm_sparse_kernels.h"
#endif

#define SP_SLIVER (2 * SP_W)

/*
 * The nonzero entries of x[0, n): their values into vals and their
 * indices into ks, in ascending order, then INT32_MAX; returns how many.
 * Both have room for n + 17.  NaN counts as nonzero (compared unordered);
 * -0.0f as zero.
 */
#if SP_W == 16
__attribute__((target("avx512f")))
static int64_t
SP_FN(list_nonzeros) (const float *x, int64_t n, float *vals, int32_t *ks)
{
	const __m512i step = _mm512_set1_epi32(16);
	__m512i		idx = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	int64_t		count = 0;

	for (int64_t i = 0; i < n; i += 16)
	{
		__mmask16	live = n - i >= 16 ? (__mmask16) 0xFFFF : (__mmask16) ((1u << (n - i)) - 1);
		__m512		v = _mm512_maskz_loadu_ps(live, x + i);
		__mmask16	nz = _mm512_mask_cmp_ps_mask(live, v, _mm512_setzero_ps(), _CMP_NEQ_UQ);

		/* compress in registers and store whole vectors: the compressing store is slow on AMD */
		_mm512_storeu_ps(vals + count, _mm512_maskz_compress_ps(nz, v));
		_mm512_storeu_si512((void *) (ks + count), _mm512_maskz_compress_epi32(nz, idx));
		count += __builtin_popcount((unsigned) nz);
		idx = _mm512_add_epi32(idx, step);
	}
	/* past the last, a depth no sub-block reaches: the sums' loops need no count */
	ks[count] = INT32_MAX;
	return count;
}
#else
/* no compress instruction: every entry stored, the count advanced by whether it is nonzero (no branch) */
static int64_t
SP_FN(list_nonzeros) (const float *x, int64_t n, float *vals, int32_t *ks)
{
	int64_t		count = 0;

	for (int64_t i = 0; i < n; i++)
	{
		float		v = x[i];

		vals[count] = v;
		ks[count] = (int32_t) i;
		count += !(v == 0.0f);
	}
	ks[count] = INT32_MAX;
	return count;
}
#endif

/*
 * One row of A over a sub-block: its nonzeros from *pos on with depth
 * below d1 (vals / ks, which ends in INT32_MAX), times G slivers of B
 * (sliver g at sl[g], depth p at + p * SP_SLIVER), added to the partial
 * sums at part (or from zero when fresh).  last: the K block ends here, so
 * finish the sums into c instead.
 */
static inline __attribute__((always_inline, target(SP_TARGET))) void
SP_FN(sparse_row) (const int G, const float *vals, const int32_t *ks, int64_t *pos, int64_t d1,
				   const float *const *sl, bool fresh, bool last, float *part, const sparse_finish *f, float *c)
{
	sp_vec		acc[8];
	int64_t		i = *pos;

#pragma GCC unroll 8
	for (int v = 0; v < 2 * G; v++)
		acc[v] = fresh ? sp_zero() : sp_loadu(part + SP_W * v);
	for (; ks[i] < d1; i++)
	{
		sp_vec		xv = sp_set1(vals[i]);
		int64_t		off = (int64_t) ks[i] * SP_SLIVER;

#pragma GCC unroll 4
		for (int g = 0; g < G; g++)
		{
			acc[2 * g] = sp_fmadd(xv, sp_load(sl[g] + off), acc[2 * g]);
			acc[2 * g + 1] = sp_fmadd(xv, sp_load(sl[g] + off + SP_W), acc[2 * g + 1]);
		}
	}
	*pos = i;
	if (!last)
	{
#pragma GCC unroll 8
		for (int v = 0; v < 2 * G; v++)
			sp_storeu(part + SP_W * v, acc[v]);
		return;
	}
#pragma GCC unroll 8
	for (int v = 0; v < 2 * G; v++)
	{
		int64_t		c0 = SP_W * v;
		sp_mask		m;
		sp_vec		r = acc[v];

		if (c0 >= f->cols)
			break;
		m = sp_first(f->cols - c0);
		if (f->alpha != 1.0f)
			r = sp_mul(r, sp_set1(f->alpha));
		if (f->bias)
			r = sp_add(r, sp_mloadu(m, f->bias + c0));
		if (f->beta == 1.0f)
			r = sp_add(r, sp_mloadu(m, c + c0));
		else if (f->beta != 0.0f)
			r = sp_fmadd(sp_set1(f->beta), sp_mloadu(m, c + c0), r);
		if (f->clamp)
			r = sp_min(sp_set1(f->hi), sp_max(sp_set1(f->lo), r));
		sp_mstoreu(c + c0, m, r);
	}
}

/*
 * Rows [0, rows) of the task over G slivers of one K block (kc deep, its
 * sliver s0 at blk + s0 * SP_SLIVER * kc), in sub-blocks of depths.
 */
static inline __attribute__((always_inline, target(SP_TARGET))) void
SP_FN(sparse_group) (const int G, const ox_sgemm_sparse_job *j, int64_t rows, const float *blk, int64_t kc,
					 int64_t s0, const float *vals, const int32_t *ks, int64_t stride,
					 int64_t *pos, float *part, const sparse_finish *f, float *c)
{
	const float *sl[4];
	const int64_t sub = SUB_BLOCK_FLOATS / (G * SP_SLIVER);

	for (int g = 0; g < G; g++)
		sl[g] = blk + (s0 + g) * SP_SLIVER * kc;
	for (int64_t r = 0; r < rows; r++)
		pos[r] = 0;
	for (int64_t d0 = 0; d0 < kc; d0 += sub)
	{
		int64_t		d1 = d0 + sub < kc ? d0 + sub : kc;
		int64_t		n1 = d1 + sub < kc ? d1 + sub : kc;	/* the next sub-block ends */
		/* each row's share of the next sub-block's depths, none past it (no division per row) */
		int64_t		share = (n1 - d1 + rows - 1) / rows,
					next = d1;

		if (d0 == 0)
			prefetch_depths(G, sl, SP_SLIVER, 0, d1);
		for (int64_t r = 0; r < rows; r++)
		{
			if (next < n1)
			{
				prefetch_depths(G, sl, SP_SLIVER, next, next + share < n1 ? next + share : n1);
				next += share;
			}
			SP_FN(sparse_row) (G, vals + r * stride, ks + r * stride, &pos[r], d1, sl, d0 == 0,
							   d1 == kc, part + r * 2 * G * SP_W, f, c + r * j->ldc);
		}
	}
}

__attribute__((target(SP_TARGET)))
bool
SP_FN(ox_sgemm_sparse_rows) (const ox_sgemm_sparse_job *j, int64_t row0, int64_t rows, int64_t s0, int64_t s1)
{
	/* a row's lists: a K block's depths and a vector's store past them, in whole lines */
	int64_t		stride = ((j->K + j->nkb - 1) / j->nkb + 1 + 17 + 15) / 16 * 16;
	float	   *vals = ox_aligned_grow(&tls_values, &tls_values_len, (size_t) (rows * stride));
	float	   *kbuf = ox_aligned_grow(&tls_depths, &tls_depths_len, (size_t) (rows * stride + 2 * rows));
	float	   *part = ox_aligned_grow(&tls_partial, &tls_partial_len, (size_t) (rows * 8 * SP_W));
	int32_t    *ks;
	int64_t    *pos;

	if (!vals || !kbuf || !part)
		return false;
	ks = (int32_t *) kbuf;
	/* the rows' cursors after the lists (64-byte aligned: stride is whole lines) */
	pos = (int64_t *) (ks + rows * stride);
	for (int64_t kb = 0; kb < j->nkb; kb++)
	{
		const int64_t k0 = ox_sgemm_kb_start(j->K, j->nkb, kb);
		const int64_t kc = ox_sgemm_kb_start(j->K, j->nkb, kb + 1) - k0;
		const float *blk = j->B + k0 * j->npad;
		sparse_finish f;

		for (int64_t r = 0; r < rows; r++)
			(void) SP_FN(list_nonzeros) (j->A + (row0 + r) * j->lda + k0, kc, vals + r * stride, ks + r * stride);
		f.alpha = j->alpha;
		f.beta = kb == 0 ? j->beta : 1.0f;
		f.clamp = j->epi->clamp && kb == j->nkb - 1;
		f.lo = j->epi->clamp_lo;
		f.hi = j->epi->clamp_hi;
		for (int64_t s = s0; s < s1;)
		{
			int			G = s1 - s >= 4 ? 4 : (s1 - s >= 2 ? 2 : 1);
			int64_t		col = s * SP_SLIVER;
			float	   *c = j->C + row0 * j->ldc + col;

			f.cols = j->N - col < G * SP_SLIVER ? j->N - col : G * SP_SLIVER;
			f.bias = kb == 0 && j->epi->bias ? j->epi->bias + col : NULL;
			if (G == 4)
				SP_FN(sparse_group) (4, j, rows, blk, kc, s, vals, ks, stride, pos, part, &f, c);
			else if (G == 2)
				SP_FN(sparse_group) (2, j, rows, blk, kc, s, vals, ks, stride, pos, part, &f, c);
			else
				SP_FN(sparse_group) (1, j, rows, blk, kc, s, vals, ks, stride, pos, part, &f, c);
			if (j->epi->post && kb == j->nkb - 1)
				j->epi->post(j->epi->post_arg, row0, j->col0 + col, rows, f.cols, c, j->ldc);
			s += G;
		}
	}
	return true;
}

#undef SP_FN
#undef SP_TARGET
#undef SP_SLIVER
#undef sp_vec
#undef sp_mask
#undef sp_zero
#undef sp_load
#undef sp_loadu
#undef sp_storeu
#undef sp_set1
#undef sp_fmadd
#undef sp_mul
#undef sp_add
#undef sp_min
#undef sp_max
#undef sp_first
#undef sp_mloadu
#undef sp_mstoreu
