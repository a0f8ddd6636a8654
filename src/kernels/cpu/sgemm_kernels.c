/*
 * sgemm_kernels.c
 *	  The instruction-set specific parts of our SGEMM (sgemm.c): the
 *	  register-blocked micro-kernels for AVX-512 (12 x 32) and AVX2 (6 x 16),
 *	  instantiated for every tile height and one or two vectors of columns,
 *	  the AVX-512 transposing packer of A, and the dot-product kernels of the
 *	  matrix-vector path.  Each function carries its target attribute; which
 *	  set runs is chosen once by cpuid in sgemm.c.
 */
#include "kernels/cpu/sgemm_isa.h"
#include "kernels/cpu/simd_avx2.h"

#include <immintrin.h>

/* ---- micro-kernels ---------------------------------------------------- */

#define UK_AVX512_MR 12
#define UK_AVX512_NR 32

/*
 * The depth loop of a tile: per depth, row r's value of A (A_AT(r, depth))
 * broadcast times one or two vectors of the B sliver, then ADVANCE (a
 * packed A moves on by a sliver's width); a line of the next B sliver is
 * fetched into L2 per four depths.
 */
#define UK512_DEPTHS(A_AT, ADVANCE) \
	for (int64_t p = 0; p < k; p += 4) \
	{ \
		int			steps = k - p < 4 ? (int) (k - p) : 4; \
		\
		_mm_prefetch(pf, _MM_HINT_T1); \
		pf += 64; \
		_Pragma("GCC unroll 4") \
		for (int u = 0; u < 4; u++) \
		{ \
			__m512		b0, \
						b1; \
			\
			if (u > 0 && u >= steps) \
				break; \
			b0 = _mm512_load_ps(b); \
			b1 = NV > 1 ? _mm512_load_ps(b + 16) : b0; \
			_Pragma("GCC unroll 12") \
			for (int r = 0; r < R; r++) \
			{ \
				__m512		av = _mm512_set1_ps(A_AT(r, p + u)); \
				\
				acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]); \
				if (NV > 1) \
					acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]); \
			} \
			ADVANCE; \
			b += UK_AVX512_NR; \
		} \
	}
#define UK512_A_PACKED(r, d) a[r]
#define UK512_A_IN_PLACE(r, d) ((r) < 4 ? a : ((r) < 8 ? a4 : a8))[((r) & 3) * lda + (d)]

/*
 * R rows by NV vectors of 16 columns.  The packed slivers are always MR
 * and NR wide; R and NV only choose which of them are computed and
 * stored.  Inlined into one function per (R, NV), where the loops unroll
 * and the accumulators live in registers.
 */
static inline __attribute__((always_inline, target("avx512f,fma"))) void
uk512_body(const int R, const int NV, int64_t k, const float *a, const float *b, float *c,
		   int64_t ldc, const ox_sgemm_uk_epi *e)
{
	__m512		acc[UK_AVX512_MR][2];
	__mmask16	m0,
				m1;
	__m512		bias0 = _mm512_setzero_ps(),
				bias1 = _mm512_setzero_ps();
	const char *pf = e->prefetch;

#pragma GCC unroll 12
	for (int r = 0; r < R; r++)
	{
		acc[r][0] = _mm512_setzero_ps();
		acc[r][1] = _mm512_setzero_ps();
	}
	if (e->lda)
	{
		/*
		 * A read in place, row r at a + r * lda (e->lda): three row
		 * pointers four rows apart, so that every row is a base plus a
		 * scaled index register.
		 */
		const float *a4 = a + 4 * e->lda,
				   *a8 = a + 8 * e->lda;
		const int64_t lda = e->lda;

		UK512_DEPTHS(UK512_A_IN_PLACE, (void) 0);
	}
	else
		UK512_DEPTHS(UK512_A_PACKED, a += UK_AVX512_MR);

	m0 = e->cols >= 16 ? (__mmask16) 0xFFFF : (__mmask16) ((1u << e->cols) - 1);
	m1 = e->cols >= 32 ? (__mmask16) 0xFFFF :
		(e->cols > 16 ? (__mmask16) ((1u << (e->cols - 16)) - 1) : 0);
	if (e->bias)
	{
		bias0 = _mm512_maskz_loadu_ps(m0, e->bias);
		if (NV > 1)
			bias1 = _mm512_maskz_loadu_ps(m1, e->bias + 16);
	}
#pragma GCC unroll 12
	for (int r = 0; r < R; r++)
	{
		float	   *cr = c + r * ldc;
		__m512		r0 = acc[r][0],
					r1 = acc[r][1];

		if (e->alpha != 1.0f)
		{
			r0 = _mm512_mul_ps(r0, _mm512_set1_ps(e->alpha));
			r1 = _mm512_mul_ps(r1, _mm512_set1_ps(e->alpha));
		}
		if (e->bias)
		{
			r0 = _mm512_add_ps(r0, bias0);
			r1 = _mm512_add_ps(r1, bias1);
		}
		if (e->beta == 1.0f)
		{
			r0 = _mm512_add_ps(r0, _mm512_maskz_loadu_ps(m0, cr));
			if (NV > 1)
				r1 = _mm512_add_ps(r1, _mm512_maskz_loadu_ps(m1, cr + 16));
		}
		else if (e->beta != 0.0f)
		{
			r0 = _mm512_fmadd_ps(_mm512_set1_ps(e->beta), _mm512_maskz_loadu_ps(m0, cr), r0);
			if (NV > 1)
				r1 = _mm512_fmadd_ps(_mm512_set1_ps(e->beta), _mm512_maskz_loadu_ps(m1, cr + 16), r1);
		}
		if (e->clamp)
		{
			/* max and min return their second operand when either is NaN */
			r0 = _mm512_min_ps(_mm512_set1_ps(e->hi), _mm512_max_ps(_mm512_set1_ps(e->lo), r0));
			r1 = _mm512_min_ps(_mm512_set1_ps(e->hi), _mm512_max_ps(_mm512_set1_ps(e->lo), r1));
		}
		_mm512_mask_storeu_ps(cr, m0, r0);
		if (NV > 1)
			_mm512_mask_storeu_ps(cr + 16, m1, r1);
	}
}

#define UK512(R, NV) \
__attribute__((target("avx512f,fma"))) static void \
uk512_##R##_##NV(int64_t k, const float *a, const float *b, float *c, int64_t ldc, const ox_sgemm_uk_epi *e) \
{ \
	uk512_body(R, NV, k, a, b, c, ldc, e); \
}
#define UK512_ROWS(R) UK512(R, 1) UK512(R, 2)
UK512_ROWS(1) UK512_ROWS(2) UK512_ROWS(3) UK512_ROWS(4) UK512_ROWS(5) UK512_ROWS(6)
UK512_ROWS(7) UK512_ROWS(8) UK512_ROWS(9) UK512_ROWS(10) UK512_ROWS(11) UK512_ROWS(12)

#define UK_AVX2_MR 6
#define UK_AVX2_NR 16

/* lane masks for AVX2 masked loads/stores: row n enables the first n lanes */
static const int32_t avx2_lane_masks[9][8] = {
	{0, 0, 0, 0, 0, 0, 0, 0}, {-1, 0, 0, 0, 0, 0, 0, 0}, {-1, -1, 0, 0, 0, 0, 0, 0},
	{-1, -1, -1, 0, 0, 0, 0, 0}, {-1, -1, -1, -1, 0, 0, 0, 0}, {-1, -1, -1, -1, -1, 0, 0, 0},
	{-1, -1, -1, -1, -1, -1, 0, 0}, {-1, -1, -1, -1, -1, -1, -1, 0}, {-1, -1, -1, -1, -1, -1, -1, -1}
};

static inline __attribute__((always_inline, target("avx2,fma"))) void
uk256_body(const int R, const int NV, int64_t k, const float *a, const float *b, float *c,
		   int64_t ldc, const ox_sgemm_uk_epi *e)
{
	__m256		acc[UK_AVX2_MR][2];
	__m256i		m0,
				m1;
	bool		full0,
				full1;
	__m256		bias0 = _mm256_setzero_ps(),
				bias1 = _mm256_setzero_ps();
	const char *pf = e->prefetch;

#pragma GCC unroll 6
	for (int r = 0; r < R; r++)
	{
		acc[r][0] = _mm256_setzero_ps();
		acc[r][1] = _mm256_setzero_ps();
	}
	/*
	 * Four depths a step with no test between them, then the rest one at a
	 * time: a test after each depth (for a last step of fewer) cost 3-6%
	 * of a large product (EPYC, Zen 3).  The same multiply-adds in the same
	 * order either way.
	 */
#define UK256_DEPTH() \
	do { \
		__m256		b0 = _mm256_load_ps(b), \
					b1 = NV > 1 ? _mm256_load_ps(b + 8) : b0; \
		_Pragma("GCC unroll 6") \
		for (int r = 0; r < R; r++) \
		{ \
			__m256		av = _mm256_broadcast_ss(a + r); \
			acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]); \
			if (NV > 1) \
				acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]); \
		} \
		a += UK_AVX2_MR; \
		b += UK_AVX2_NR; \
	} while (0)
	int64_t		p = 0;

	for (; p + 4 <= k; p += 4)
	{
		_mm_prefetch(pf, _MM_HINT_T1);
		pf += 64;
		UK256_DEPTH();
		UK256_DEPTH();
		UK256_DEPTH();
		UK256_DEPTH();
	}
	if (p < k)
		_mm_prefetch(pf, _MM_HINT_T1);
	for (; p < k; p++)
		UK256_DEPTH();
#undef UK256_DEPTH

	m0 = _mm256_loadu_si256((const __m256i *) avx2_lane_masks[e->cols >= 8 ? 8 : e->cols]);
	m1 = _mm256_loadu_si256((const __m256i *) avx2_lane_masks[e->cols >= 16 ? 8 :
															  (e->cols > 8 ? e->cols - 8 : 0)]);
	full0 = e->cols >= 8;
	full1 = e->cols >= 16;
	if (e->bias)
	{
		bias0 = nn_load8_part(e->bias, full0, m0);
		if (NV > 1)
			bias1 = nn_load8_part(e->bias + 8, full1, m1);
	}
#pragma GCC unroll 6
	for (int r = 0; r < R; r++)
	{
		float	   *cr = c + r * ldc;
		__m256		r0 = acc[r][0],
					r1 = acc[r][1];

		if (e->alpha != 1.0f)
		{
			r0 = _mm256_mul_ps(r0, _mm256_set1_ps(e->alpha));
			r1 = _mm256_mul_ps(r1, _mm256_set1_ps(e->alpha));
		}
		if (e->bias)
		{
			r0 = _mm256_add_ps(r0, bias0);
			r1 = _mm256_add_ps(r1, bias1);
		}
		if (e->beta == 1.0f)
		{
			r0 = _mm256_add_ps(r0, nn_load8_part(cr, full0, m0));
			if (NV > 1)
				r1 = _mm256_add_ps(r1, nn_load8_part(cr + 8, full1, m1));
		}
		else if (e->beta != 0.0f)
		{
			r0 = _mm256_fmadd_ps(_mm256_set1_ps(e->beta), nn_load8_part(cr, full0, m0), r0);
			if (NV > 1)
				r1 = _mm256_fmadd_ps(_mm256_set1_ps(e->beta), nn_load8_part(cr + 8, full1, m1), r1);
		}
		if (e->clamp)
		{
			r0 = _mm256_min_ps(_mm256_set1_ps(e->hi), _mm256_max_ps(_mm256_set1_ps(e->lo), r0));
			r1 = _mm256_min_ps(_mm256_set1_ps(e->hi), _mm256_max_ps(_mm256_set1_ps(e->lo), r1));
		}
		nn_store8_part(cr, full0, m0, r0);
		if (NV > 1)
			nn_store8_part(cr + 8, full1, m1, r1);
	}
}

#define UK256(R, NV) \
__attribute__((target("avx2,fma"))) static void \
uk256_##R##_##NV(int64_t k, const float *a, const float *b, float *c, int64_t ldc, const ox_sgemm_uk_epi *e) \
{ \
	uk256_body(R, NV, k, a, b, c, ldc, e); \
}
#define UK256_ROWS(R) UK256(R, 1) UK256(R, 2)
UK256_ROWS(1) UK256_ROWS(2) UK256_ROWS(3) UK256_ROWS(4) UK256_ROWS(5) UK256_ROWS(6)

#define KROW(P, R) {NULL, P##_##R##_1, P##_##R##_2}

const ox_sgemm_isa_desc ox_sgemm_isa_avx512 = {
	"avx512", UK_AVX512_MR, UK_AVX512_NR, UK_AVX512_MR * 16,
	{{NULL, NULL, NULL}, KROW(uk512, 1), KROW(uk512, 2), KROW(uk512, 3), KROW(uk512, 4),
		KROW(uk512, 5), KROW(uk512, 6), KROW(uk512, 7), KROW(uk512, 8), KROW(uk512, 9),
	KROW(uk512, 10), KROW(uk512, 11), KROW(uk512, 12)}
};
const ox_sgemm_isa_desc ox_sgemm_isa_avx2 = {
	"avx2", UK_AVX2_MR, UK_AVX2_NR, UK_AVX2_MR * 24,
	{{NULL, NULL, NULL}, KROW(uk256, 1), KROW(uk256, 2), KROW(uk256, 3), KROW(uk256, 4),
	KROW(uk256, 5), KROW(uk256, 6)}
};

/*
 * Up to twelve rows of A (lda apart), sixteen depths at a time, transposed
 * in registers into the packed [depth][12] layout: a 16 x 16 transpose of
 * the rows (the missing ones zero), of which each output row's first twelve
 * lanes are stored.  Returns how many depths it packed (a multiple of 16).
 */
__attribute__((target("avx512f")))
int64_t
ox_sgemm_pack_a12_avx512(const float *A, int64_t lda, int64_t rows, int64_t kc, float *dst)
{
	int64_t		p = 0;

	for (; p + 16 <= kc; p += 16)
	{
		__m512		r[16],
					t[16];

#pragma GCC unroll 16
		for (int i = 0; i < 16; i++)
			r[i] = i < rows ? _mm512_loadu_ps(A + i * lda + p) : _mm512_setzero_ps();
		/* pairs of rows interleaved, then pairs of pairs, then 128-bit lanes */
#pragma GCC unroll 16
		for (int i = 0; i < 16; i += 2)
		{
			t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
			t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
		}
#pragma GCC unroll 16
		for (int i = 0; i < 16; i += 4)
		{
			r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
			r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
			r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
			r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
		}
#pragma GCC unroll 16
		for (int i = 0; i < 4; i++)
		{
			t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
			t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xdd);
			t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
			t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xdd);
		}
#pragma GCC unroll 16
		for (int i = 0; i < 8; i++)
		{
			r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
			r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
		}
		/* r[j]: depth p + j of rows 0..15 */
#pragma GCC unroll 16
		for (int j = 0; j < 16; j++)
			_mm512_mask_storeu_ps(dst + (p + j) * 12, 0x0FFF, r[j]);
	}
	return p;
}

/*
 * How far ahead of its loads dot_row_avx512 prefetches b into L1: 4 KB.
 * Its rows are read one after another (a B larger than L2, or a column's
 * rows of A: one address sequence), from L3 or memory, which the hardware
 * prefetchers alone left partly exposed: MobileNet-v2's 1280 -> 1000 Gemm
 * at batch 1 (5 MB) ran in 43 us instead of 49 with B in L3, [1000, 2048]
 * 68 instead of 80, [1000, 512] 17.3 instead of 18.6.  Into L2 (T1) it was
 * 5-15% slower, as were distances of 10 and 16 KB.  Past the end of b a
 * prefetch reads nothing that matters and never faults.
 */
#define DOT_PREFETCH_FLOATS 1024

/* dot(x, b) over K floats, in four accumulators (FMA latency) */
__attribute__((target("avx512f,fma")))
static inline float
dot_row_avx512(const float *x, const float *b, int64_t K)
{
	__m512		s0 = _mm512_setzero_ps(),
				s1 = _mm512_setzero_ps(),
				s2 = _mm512_setzero_ps(),
				s3 = _mm512_setzero_ps();
	int64_t		k = 0;

	for (; k + 64 <= K; k += 64)
	{
		const char *ahead = (const char *) (b + k + DOT_PREFETCH_FLOATS);

		_mm_prefetch(ahead, _MM_HINT_T0);
		_mm_prefetch(ahead + 64, _MM_HINT_T0);
		_mm_prefetch(ahead + 128, _MM_HINT_T0);
		_mm_prefetch(ahead + 192, _MM_HINT_T0);
		s0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + k), _mm512_loadu_ps(b + k), s0);
		s1 = _mm512_fmadd_ps(_mm512_loadu_ps(x + k + 16), _mm512_loadu_ps(b + k + 16), s1);
		s2 = _mm512_fmadd_ps(_mm512_loadu_ps(x + k + 32), _mm512_loadu_ps(b + k + 32), s2);
		s3 = _mm512_fmadd_ps(_mm512_loadu_ps(x + k + 48), _mm512_loadu_ps(b + k + 48), s3);
	}
	for (; k + 16 <= K; k += 16)
		s0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + k), _mm512_loadu_ps(b + k), s0);
	if (k < K)
	{
		__mmask16	m = (__mmask16) ((1u << (K - k)) - 1);

		s1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x + k), _mm512_maskz_loadu_ps(m, b + k), s1);
	}
	return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

/*
 * Dot products of one row x (length K, contiguous) with rows of B (each
 * contiguous, ldb apart): the small-M case of op(B) = B^T, which is how
 * Linear layers store weights.  Four rows at a time share the loads of x;
 * several accumulators keep the FMA pipes busy (a plain loop would be
 * scalar: the compiler may not reorder a float reduction).
 *
 * one_stream reads one row at a time instead: a B coming from memory
 * streams faster as one sequence of addresses than as four rows a few KB
 * apart (a 5 MB B from DRAM: 200 us against 273 us, on an AMD EPYC Zen 4);
 * from L3 and L2 four rows are faster (sgemm.c's ONE_STREAM_MIN_FLOATS).
 */
__attribute__((target("avx512f,fma")))
void
ox_sgemm_dots_avx512(const float *x, const float *B, int64_t ldb, int64_t K, int64_t n0, int64_t n1,
					 bool one_stream, float *out)
{
	int64_t		n = n0;

	for (; !one_stream && n + 4 <= n1; n += 4)
	{
		const float *b0 = B + n * ldb,
				   *b1 = b0 + ldb,
				   *b2 = b1 + ldb,
				   *b3 = b2 + ldb;
		__m512		s0 = _mm512_setzero_ps(),
					s1 = _mm512_setzero_ps(),
					s2 = _mm512_setzero_ps(),
					s3 = _mm512_setzero_ps();
		int64_t		k = 0;

		for (; k + 16 <= K; k += 16)
		{
			__m512		xv = _mm512_loadu_ps(x + k);

			s0 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(b0 + k), s0);
			s1 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(b1 + k), s1);
			s2 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(b2 + k), s2);
			s3 = _mm512_fmadd_ps(xv, _mm512_loadu_ps(b3 + k), s3);
		}
		if (k < K)
		{
			__mmask16	m = (__mmask16) ((1u << (K - k)) - 1);
			__m512		xv = _mm512_maskz_loadu_ps(m, x + k);

			s0 = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(m, b0 + k), s0);
			s1 = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(m, b1 + k), s1);
			s2 = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(m, b2 + k), s2);
			s3 = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(m, b3 + k), s3);
		}
		out[n - n0] = _mm512_reduce_add_ps(s0);
		out[n - n0 + 1] = _mm512_reduce_add_ps(s1);
		out[n - n0 + 2] = _mm512_reduce_add_ps(s2);
		out[n - n0 + 3] = _mm512_reduce_add_ps(s3);
	}
	for (; n < n1; n++)
		out[n - n0] = dot_row_avx512(x, B + n * ldb, K);
}

__attribute__((target("avx2,fma")))
void
ox_sgemm_dots_avx2(const float *x, const float *B, int64_t ldb, int64_t K, int64_t n0, int64_t n1, float *out)
{
	int64_t		n = n0;

	/*
	 * Four rows at a time, each summed exactly as a row alone below (two
	 * chains of eight lanes, then the lanes and the scalar tail in order),
	 * so results do not depend on the grouping: one row's two chains left
	 * the multiply-adds waiting on each other, and the MLP's batch-1 Gemm
	 * read its weights at two thirds of the rate of four rows (EPYC, Zen 3).
	 */
	for (; n + 4 <= n1; n += 4)
	{
		const float *b[4] = {B + n * ldb, B + (n + 1) * ldb, B + (n + 2) * ldb, B + (n + 3) * ldb};
		__m256		s0[4],
					s1[4];
		int64_t		k = 0;

		for (int r = 0; r < 4; r++)
			s0[r] = s1[r] = _mm256_setzero_ps();
		for (; k + 16 <= K; k += 16)
		{
			__m256		x0 = _mm256_loadu_ps(x + k),
						x1 = _mm256_loadu_ps(x + k + 8);

#pragma GCC unroll 4
			for (int r = 0; r < 4; r++)
			{
				s0[r] = _mm256_fmadd_ps(x0, _mm256_loadu_ps(b[r] + k), s0[r]);
				s1[r] = _mm256_fmadd_ps(x1, _mm256_loadu_ps(b[r] + k + 8), s1[r]);
			}
		}
		for (int r = 0; r < 4; r++)
		{
			float		lanes[8],
						tail = 0.0f;

			for (int64_t t = k; t < K; t++)
				tail += x[t] * b[r][t];
			_mm256_storeu_ps(lanes, _mm256_add_ps(s0[r], s1[r]));
			out[n + r - n0] = lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7] +
				tail;
		}
	}
	for (; n < n1; n++)
	{
		const float *b = B + n * ldb;
		__m256		s0 = _mm256_setzero_ps(),
					s1 = _mm256_setzero_ps();
		float		tail = 0.0f;
		float		lanes[8];
		int64_t		k = 0;

		for (; k + 16 <= K; k += 16)
		{
			s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + k), _mm256_loadu_ps(b + k), s0);
			s1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + k + 8), _mm256_loadu_ps(b + k + 8), s1);
		}
		for (; k < K; k++)
			tail += x[k] * b[k];
		_mm256_storeu_ps(lanes, _mm256_add_ps(s0, s1));
		out[n - n0] = lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7] + tail;
	}
}

/*
 * The other GEMV orientation: out[n - n0] = sum_k x[k] * B[k, n] for n in
 * [n0, n1), B row-major with rows ldb apart.  Sixteen (AVX-512) or eight
 * (AVX2) vectors of columns stay in registers for the whole reduction, so
 * the only memory traffic is B itself, read once row after row.  Given ks,
 * the nonzero entries of x (the ReLU before most such products zeros about
 * half), only their rows of B are read.  The list is made once per row of
 * x, not a test per k in every chunk of columns: which entries are zero
 * changes from row to row, and a branch on it was mispredicted about half
 * the time (the in-query MLP run by the engine alone on its table's rows:
 * 4.5 us a row, 3.2 with the list).
 *
 * The rows of such a list are not in sequence.  On a Zen 4 the hardware's
 * prefetch of the next lines fetches rows that are skipped and none of the
 * next row read, so with prefetch the row AXPY_PREFETCH_AHEAD entries on
 * is prefetched, every other line (the core fetches lines in pairs).  The
 * in-query MLP's second layer from L2 (256 x 256, half its rows read), in
 * a microbenchmark: 0.82 us against 0.91 without, 0.78 for as many rows in
 * sequence; the whole network row by row, the engine alone on its table's
 * rows: 1.41 us a row against 1.52.  The list is padded past its end for
 * it (ox_sgemm_nonzero_indices).  A Sapphire Rapids core is the other way
 * round: its own prefetch keeps up, the software's only takes load slots
 * (the same layer 1.19 TSC ticks a line read with it, 1.10 without, 0.97
 * for a plain read of those rows), and what is left is the loop: two rows
 * a turn, their index loads and broadcasts ahead of the multiply-adds, 1.05
 * (each column still sums its rows in order: the same bits).  The whole
 * network, engine alone: 597,000 rows a second against 571,000 with the
 * one-row loop and its prefetch.  Callers choose (ox_sgemm_list_prefetch).
 * Rows in sequence (no list) need no prefetch, and get their own loop: one
 * loop testing for the list at every row made the same engine run 1.17x
 * the time (GCC does not split it).
 */
#define AXPY_PREFETCH_AHEAD 3

static inline void
axpy_prefetch_row(const float *row, int floats)
{
	for (int f = 0; f < floats; f += 32)
		_mm_prefetch((const char *) (row + f), _MM_HINT_T0);
}

/*
 * Sums r of the columns at offset o, finished as fin says: the bias of the
 * lanes in m added, then the clamp (in this order, no fused multiply-add:
 * the same bits as the separate passes).
 */
__attribute__((target("avx512f")))
static inline __m512
finish_avx512(const ox_gemv_finish *fin, __m512 r, __mmask16 m, int64_t o)
{
	r = _mm512_add_ps(r, _mm512_setzero_ps());
	if (fin->bias)
		r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(m, fin->bias + o));
	if (fin->clamp)
		r = _mm512_min_ps(_mm512_set1_ps(fin->hi), _mm512_max_ps(_mm512_set1_ps(fin->lo), r));
	return r;
}

__attribute__((target("avx2,fma")))
static inline __m256
finish_avx2(const ox_gemv_finish *fin, __m256 r, __m256i m, int64_t o)
{
	r = _mm256_add_ps(r, _mm256_setzero_ps());
	if (fin->bias)
		r = _mm256_add_ps(r, _mm256_maskload_ps(fin->bias + o, m));
	if (fin->clamp)
		r = _mm256_min_ps(_mm256_set1_ps(fin->hi), _mm256_max_ps(_mm256_set1_ps(fin->lo), r));
	return r;
}

/* a last vector's columns, fewer than a vector, in the lanes of mask m (the AVX2 form's argument order) */
#define LOAD_TAIL_AVX512(p, m) _mm512_maskz_loadu_ps((m), (p))
#define STORE_TAIL_AVX512(p, m, v) _mm512_mask_storeu_ps((p), (m), (v))
#define LOAD_TAIL_AVX2(p, m) _mm256_maskload_ps((p), (m))
#define STORE_TAIL_AVX2(p, m, v) _mm256_maskstore_ps((p), (m), (v))
/* the mask of a last vector's first lanes (fewer than a vector) */
#define TAILMASK_AVX512(lanes) ((__mmask16) ((1u << (lanes)) - 1))
#define TAILMASK_AVX2(lanes) \
	_mm256_cmpgt_epi32(_mm256_set1_epi32((int) (lanes)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))

/*
 * Inside AXPY_ROWS_CHUNK_: its acc += xv times the row at b (NV vectors of
 * W columns, and the tail's in the lanes of tm)
 */
#define AXPY_ROW_(FMA, LOAD, MLOAD, NV, W, TAIL, b, xv) \
	do { \
		const float *row_ = (b); \
		const __typeof__(acc[0]) xv_ = (xv); \
		_Pragma("GCC unroll 16") for (int v = 0; v < (NV); v++) \
			acc[v] = FMA(xv_, LOAD(row_ + v * (W)), acc[v]); \
		if (TAIL) \
			acc[LAST] = FMA(xv_, MLOAD(row_ + (NV) * (W), tm), acc[LAST]); \
	} while (0)

/*
 * Columns n ... of out summed over the rows (ks's, or all nk): NV vectors
 * of W columns, and with TAIL one more of the columns left (fewer than W)
 * in the lanes of mask tm, each vector in its own accumulator.  The ISA's
 * operations come first (AXPY_OPS_AVX512, AXPY_OPS_AVX2).  Every loop over
 * the accumulators is unrolled whole: with one left as a loop, the array
 * lived in memory and each row stored all of it (a layer of 100 columns
 * took 1.13x the time of separate passes).
 */
#define AXPY_ROWS_CHUNK_(VEC, ZERO, SET1, LOAD, FMA, STORE, FINISH, FULL, MLOAD, MSTORE, NV, W, TAIL) \
	do { \
		enum { LAST = (NV) + (TAIL) - 1 };	/* the tail's accumulator (read only with TAIL) */ \
		VEC			acc[(NV) + (TAIL)]; \
		_Pragma("GCC unroll 16") for (int v = 0; v < (NV) + (TAIL); v++) \
			acc[v] = ZERO(); \
		if (ks && prefetch) \
			for (int64_t i = 0; i < nk; i++) \
			{ \
				axpy_prefetch_row(B + ks[i + AXPY_PREFETCH_AHEAD] * ldb + n, (NV) * (W) + (TAIL) * (W)); \
				AXPY_ROW_(FMA, LOAD, MLOAD, NV, W, TAIL, B + ks[i] * ldb + n, SET1(x[ks[i]])); \
			} \
		else if (ks) \
		{ \
			int64_t		i = 0; \
			for (; i + 2 <= nk; i += 2) \
			{ \
				const float *b = B + ks[i] * ldb + n; \
				const float *c = B + ks[i + 1] * ldb + n; \
				VEC			xv = SET1(x[ks[i]]); \
				VEC			yv = SET1(x[ks[i + 1]]); \
				AXPY_ROW_(FMA, LOAD, MLOAD, NV, W, TAIL, b, xv); \
				AXPY_ROW_(FMA, LOAD, MLOAD, NV, W, TAIL, c, yv); \
			} \
			if (i < nk) \
				AXPY_ROW_(FMA, LOAD, MLOAD, NV, W, TAIL, B + ks[i] * ldb + n, SET1(x[ks[i]])); \
		} \
		else \
			for (int64_t k = 0; k < nk; k++) \
				AXPY_ROW_(FMA, LOAD, MLOAD, NV, W, TAIL, B + k * ldb + n, SET1(x[k])); \
		_Pragma("GCC unroll 16") for (int v = 0; v < (NV); v++) \
			STORE(out + (n - n0) + v * (W), fin ? FINISH(fin, acc[v], FULL, n - n0 + v * (W)) : acc[v]); \
		if (TAIL) \
			MSTORE(out + (n - n0) + (NV) * (W), tm, \
				   fin ? FINISH(fin, acc[LAST], tm, n - n0 + (NV) * (W)) : acc[LAST]); \
	} while (0)
/* one more level, so that an AXPY_OPS_* argument becomes the operations it names */
#define AXPY_ROWS_CHUNK(...) AXPY_ROWS_CHUNK_(__VA_ARGS__)

#define AXPY_OPS_AVX512 \
	__m512, _mm512_setzero_ps, _mm512_set1_ps, _mm512_loadu_ps, _mm512_fmadd_ps, _mm512_storeu_ps, \
	finish_avx512, full, LOAD_TAIL_AVX512, STORE_TAIL_AVX512
#define AXPY_OPS_AVX2 \
	__m256, _mm256_setzero_ps, _mm256_set1_ps, _mm256_loadu_ps, _mm256_fmadd_ps, _mm256_storeu_ps, \
	finish_avx2, full, LOAD_TAIL_AVX2, STORE_TAIL_AVX2

/*
 * The columns left after the wide chunks (fewer than eight vectors) in one
 * pass over the rows, the last few in masked lanes.  One vector a pass made
 * each row's multiply-add wait for the previous row's (four cycles): a
 * layer of 100 columns over 100 rows took seven chains of 100 where one
 * pass has each row's seven multiply-adds side by side.  Every column still
 * sums its rows in order: the same bits.
 */
#define AXPY_REST_CASE(NV, W, ...) \
	case 2 * (NV): \
		AXPY_ROWS_CHUNK(__VA_ARGS__, NV, W, 0); \
		break; \
	case 2 * (NV) + 1: \
		AXPY_ROWS_CHUNK(__VA_ARGS__, NV, W, 1); \
		break
/* W the lanes of a vector, then the ISA's operations */
#define AXPY_ROWS_REST(W, ...) \
	switch ((n1 - n) / (W) * 2 + ((n1 - n) % (W) != 0)) \
	{ \
		AXPY_REST_CASE(7, W, __VA_ARGS__); \
		AXPY_REST_CASE(6, W, __VA_ARGS__); \
		AXPY_REST_CASE(5, W, __VA_ARGS__); \
		AXPY_REST_CASE(4, W, __VA_ARGS__); \
		AXPY_REST_CASE(3, W, __VA_ARGS__); \
		AXPY_REST_CASE(2, W, __VA_ARGS__); \
		AXPY_REST_CASE(1, W, __VA_ARGS__); \
		case 1: \
			AXPY_ROWS_CHUNK(__VA_ARGS__, 0, W, 1); \
			break; \
		default: \
			break; \
	}

__attribute__((target("avx512f")))
void
ox_sgemm_axpy_rows_avx512(const float *x, const float *B, int64_t ldb, const int32_t *ks, int64_t nk,
						  bool prefetch, int64_t n0, int64_t n1, const ox_gemv_finish *fin, float *out)
{
	const __mmask16 full = 0xFFFF;
	__mmask16	tm;
	int64_t		n = n0;

	for (; n + 256 <= n1; n += 256)
		AXPY_ROWS_CHUNK(AXPY_OPS_AVX512, 16, 16, 0);
	for (; n + 128 <= n1; n += 128)
		AXPY_ROWS_CHUNK(AXPY_OPS_AVX512, 8, 16, 0);
	tm = TAILMASK_AVX512((n1 - n) % 16);
	AXPY_ROWS_REST(16, AXPY_OPS_AVX512);
}

__attribute__((target("avx2,fma")))
void
ox_sgemm_axpy_rows_avx2(const float *x, const float *B, int64_t ldb, const int32_t *ks, int64_t nk,
						bool prefetch, int64_t n0, int64_t n1, const ox_gemv_finish *fin, float *out)
{
	const __m256i full = _mm256_set1_epi32(-1);
	__m256i		tm;
	int64_t		n = n0;

	for (; n + 64 <= n1; n += 64)
		AXPY_ROWS_CHUNK(AXPY_OPS_AVX2, 8, 8, 0);
	/* the last columns in masked lanes: the same fused multiply-adds as the full vectors */
	tm = TAILMASK_AVX2((n1 - n) % 8);
	AXPY_ROWS_REST(8, AXPY_OPS_AVX2);
}

/*
 * Sums of rows over packed B (ox_sgemm_packed_gemv_*): G slivers side by
 * side, each two vectors of W columns in its own accumulators, so that 2G
 * multiply-adds of a depth are independent (one sliver alone would wait on
 * the previous depth's every time), and G sequential streams, one per
 * sliver, for the prefetchers.  A depth of a sliver is nr = 2W floats; the
 * slivers of a K block are nr * kc floats apart.  With a nonzero list, the
 * depth AXPY_PREFETCH_AHEAD entries on is prefetched (the rows read are not
 * in sequence), as the AXPY kernels do.  TAILMASK is TAILMASK_AVX512 or
 * TAILMASK_AVX2.  PACKED_GEMV_DEPTH: depth k of the G slivers from base,
 * x[k] times its two vectors of each, into their accumulators.
 */
#define PACKED_GEMV_DEPTH(VEC, SET1, LOAD, FMA, W, G) \
	do { \
		VEC			xv = SET1(x[k]); \
		_Pragma("GCC unroll 8") for (int g = 0; g < (G); g++) \
		{ \
			const float *r = base + g * (2 * (W)) * kc + k * (2 * (W)); \
			acc[2 * g] = FMA(xv, LOAD(r), acc[2 * g]); \
			acc[2 * g + 1] = FMA(xv, LOAD(r + (W)), acc[2 * g + 1]); \
		} \
	} while (0)

#define PACKED_GEMV_GROUP_(VEC, ZERO, SET1, LOAD, FMA, STORE, FINISH, FULL, MSTORE, TAILMASK, W, G) \
	do { \
		VEC			acc[2 * (G)]; \
		int64_t		i = 0; \
		_Pragma("GCC unroll 8") for (int v = 0; v < 2 * (G); v++) \
			acc[v] = ZERO(); \
		for (int64_t kb = 0; kb < b->nkb; kb++) \
		{ \
			const int64_t k0 = ox_sgemm_kb_start(b->K, b->nkb, kb); \
			const int64_t k1 = ox_sgemm_kb_start(b->K, b->nkb, kb + 1); \
			const int64_t kc = k1 - k0; \
			/* depth k of the group's first sliver at base + k * 2W */ \
			const float *base = b->data + k0 * b->npad + s * (2 * (W)) * kc - k0 * (2 * (W)); \
			if (ks) \
				for (; i < nk && ks[i] < k1; i++) \
				{ \
					const int64_t k = ks[i]; \
					const int64_t ka = ks[i + AXPY_PREFETCH_AHEAD]; \
					if (ka < k1) \
						_Pragma("GCC unroll 8") for (int g = 0; g < (G); g++) \
							_mm_prefetch((const char *) (base + g * (2 * (W)) * kc + ka * (2 * (W))), \
										 _MM_HINT_T0); \
					PACKED_GEMV_DEPTH(VEC, SET1, LOAD, FMA, W, G); \
				} \
			else \
				for (int64_t k = k0; k < k1; k++) \
					PACKED_GEMV_DEPTH(VEC, SET1, LOAD, FMA, W, G); \
		} \
		_Pragma("GCC unroll 8") for (int v = 0; v < 2 * (G); v++) \
		{ \
			const int64_t c = (s + v / 2) * (2 * (W)) + (v % 2) * (W); \
			if (c + (W) <= n1) \
				STORE(out + (c - n0), fin ? FINISH(fin, acc[v], FULL, c - n0) : acc[v]); \
			else if (c < n1) \
			{ \
				tm = TAILMASK(n1 - c); \
				MSTORE(out + (c - n0), tm, fin ? FINISH(fin, acc[v], tm, c - n0) : acc[v]); \
			} \
		} \
	} while (0)
#define PACKED_GEMV_GROUP(...) PACKED_GEMV_GROUP_(__VA_ARGS__)

/* slivers [s, last) in groups of four, then two, then one */
#define PACKED_GEMV_SLIVERS(W, ...) \
	do { \
		const int64_t last = (n1 + 2 * (W) - 1) / (2 * (W)); \
		int64_t		s = n0 / (2 * (W)); \
		for (; s + 4 <= last; s += 4) \
			PACKED_GEMV_GROUP(__VA_ARGS__, W, 4); \
		for (; s + 2 <= last; s += 2) \
			PACKED_GEMV_GROUP(__VA_ARGS__, W, 2); \
		for (; s < last; s++) \
			PACKED_GEMV_GROUP(__VA_ARGS__, W, 1); \
	} while (0)

#define PACKED_GEMV_OPS_AVX512 \
	__m512, _mm512_setzero_ps, _mm512_set1_ps, _mm512_loadu_ps, _mm512_fmadd_ps, _mm512_storeu_ps, \
	finish_avx512, full, STORE_TAIL_AVX512, TAILMASK_AVX512
#define PACKED_GEMV_OPS_AVX2 \
	__m256, _mm256_setzero_ps, _mm256_set1_ps, _mm256_loadu_ps, _mm256_fmadd_ps, _mm256_storeu_ps, \
	finish_avx2, full, STORE_TAIL_AVX2, TAILMASK_AVX2

__attribute__((target("avx512f")))
void
ox_sgemm_packed_gemv_avx512(const float *x, const ox_sgemm_packed_view *b, const int32_t *ks, int64_t nk,
							int64_t n0, int64_t n1, const ox_gemv_finish *fin, float *out)
{
	const __mmask16 full = 0xFFFF;
	__mmask16	tm;

	PACKED_GEMV_SLIVERS(16, PACKED_GEMV_OPS_AVX512);
}

__attribute__((target("avx2,fma")))
void
ox_sgemm_packed_gemv_avx2(const float *x, const ox_sgemm_packed_view *b, const int32_t *ks, int64_t nk,
						  int64_t n0, int64_t n1, const ox_gemv_finish *fin, float *out)
{
	const __m256i full = _mm256_set1_epi32(-1);
	__m256i		tm;

	PACKED_GEMV_SLIVERS(8, PACKED_GEMV_OPS_AVX2);
}

/*
 * The entries past the n listed that the AXPY kernels prefetch from: a row
 * of B that exists (the last listed, or row 0), so that the address is
 * inside B.
 */
static inline void
pad_nonzero_list(int32_t *ks, int64_t n)
{
	int32_t		last = n > 0 ? ks[n - 1] : 0;

	for (int i = 0; i < AXPY_PREFETCH_AHEAD; i++)
		ks[n + i] = last;
}

/*
 * Branch-free: a count that grows by the comparison's result, so that the
 * pattern of zeros (different for every row) costs no mispredictions.
 */
int64_t
ox_sgemm_nonzero_indices(const float *x, int64_t K, int32_t *ks)
{
	int64_t		n = 0;

	for (int64_t k = 0; k < K; k++)
	{
		ks[n] = (int32_t) k;
		n += x[k] != 0.0f;
	}
	pad_nonzero_list(ks, n);
	return n;
}

/*
 * Sixteen at a time: the indices of the nonzero lanes compressed in a
 * register and stored whole (ks has room for 16 past K); a compressing
 * store to memory is microcoded and slow on AMD's cores.
 */
__attribute__((target("avx512f")))
int64_t
ox_sgemm_nonzero_indices_avx512(const float *x, int64_t K, int32_t *ks)
{
	const __m512i step = _mm512_set1_epi32(16);
	__m512i		lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	int64_t		n = 0,
				k = 0;

	for (; k + 16 <= K; k += 16)
	{
		/* NEQ_UQ: NaN counts as nonzero, as it must (NaN * B is NaN) */
		__mmask16	nz = _mm512_cmp_ps_mask(_mm512_loadu_ps(x + k), _mm512_setzero_ps(), _CMP_NEQ_UQ);

		_mm512_storeu_si512((void *) (ks + n), _mm512_maskz_compress_epi32(nz, lane));
		n += __builtin_popcount(nz);
		lane = _mm512_add_epi32(lane, step);
	}
	for (; k < K; k++)
	{
		ks[n] = (int32_t) k;
		n += x[k] != 0.0f;
	}
	pad_nonzero_list(ks, n);
	return n;
}

/*
 * The finish of the AXPY kernels for the dot products, which make one sum
 * per column and store them before any can be finished: sixteen columns a
 * step, where the separate passes (sgemm.c, gemv_scale_bias and clamp_row)
 * run at this file's SSE baseline.
 */
__attribute__((target("avx512f")))
void
ox_sgemm_finish_row_avx512(const ox_gemv_finish *fin, const float *src, int64_t n, float *dst)
{
	int64_t		i = 0;

	for (; i + 16 <= n; i += 16)
		_mm512_storeu_ps(dst + i, finish_avx512(fin, _mm512_loadu_ps(src + i), 0xFFFF, i));
	if (i < n)
	{
		__mmask16	m = (__mmask16) ((1u << (n - i)) - 1);

		_mm512_mask_storeu_ps(dst + i, m, finish_avx512(fin, _mm512_maskz_loadu_ps(m, src + i), m, i));
	}
}

/* EQ_OQ: the scalar x == 0.0f, NaN unequal */
__attribute__((target("avx512f,popcnt")))
int64_t
ox_sgemm_zero_count_avx512(const float *x, int64_t n)
{
	int64_t		zeros = 0,
				i = 0;

	for (; i + 16 <= n; i += 16)
		zeros += __builtin_popcount(_mm512_cmp_ps_mask(_mm512_loadu_ps(x + i), _mm512_setzero_ps(), _CMP_EQ_OQ));
	for (; i < n; i++)
		zeros += x[i] == 0.0f;
	return zeros;
}
