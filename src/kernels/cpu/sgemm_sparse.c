/*
 * sgemm_sparse.c
 *	  C = alpha A B (+ beta C) over a packed B, skipping the zeros of A: the
 *	  product of a layer whose input is a ReLU's output, about half zeros
 *	  with random weights and often more in trained networks.
 *
 *	  The micro-kernel of sgemm.c multiplies every depth of a tile of rows
 *	  of A with a sliver of B; a zero of one row saves nothing there, as the
 *	  other rows of the tile still need that depth.  Here each row of A
 *	  goes alone: the nonzero entries of a row's share of a K block are
 *	  listed (value and depth), and for each of them one broadcast times
 *	  the group of slivers of B at that depth, summed into the row's
 *	  accumulators.  One load of B per multiply-add, where the tile reuses
 *	  each load for many rows: the loads must hit L1.  So B is walked in
 *	  sub-blocks of a few depths of a group of slivers (16 KiB), each swept
 *	  by every row of the task while it is in L1; a row's partial sums wait
 *	  between sub-blocks in a scratch buffer.  Even so the loads bound it:
 *	  a Zen 4 takes about 11 cycles for the eight multiply-adds of a depth
 *	  (every depth listed), against 8 for the tile's, so skipping pays from
 *	  about a third of zeros on (below).  The MLP 784-512-512-10 at batch
 *	  256, one thread: its second layer 1.20 ms -> 0.90, the run 3.07 ms ->
 *	  2.83 (onnxruntime 3.08).
 *
 *	  The same bits as sgemm.c's micro-kernel: per K block each column sums
 *	  its depths in ascending order from zero, then alpha, the bias (first
 *	  K block), C (beta, or 1 after the first K block) and the clamp (last
 *	  K block) in the same order.  A skipped term adds x * 0 with B finite
 *	  (the caller's ox_sgemm_epilogue.b_finite: 0 * inf would be NaN), which
 *	  changes nothing but the sign of an exact zero sum.
 *
 *	  AVX-512 only: sgemm.c uses it when its kernels are the AVX-512 ones.
 */
#include "kernels/cpu/sgemm_isa.h"
#include "util/tensor.h"

#include <immintrin.h>
#include <string.h>

/* 32 columns a sliver (the AVX-512 micro-kernels' nr) */
#define SLIVER 32

/* floats of B a sub-block holds: 16 KiB, half of L1 */
#define SUB_BLOCK_FLOATS 4096

/*
 * The share of zeros in A from which skipping them pays (a Zen 4, one
 * thread, against the micro-kernel; ratios of the times): at 128 columns
 * and more, groups of four slivers, break-even at 0.3 (256 x 512 x 512:
 * 1.01 at 0.3, 0.77 at 0.5, 0.53 at 0.7; 256 x 1000 x 440: 1.01, 0.77);
 * below, groups of two or one, whose every depth costs a broadcast and a
 * listed depth for fewer multiply-adds, at about 0.45 (256 x 64 x 256:
 * 1.03 at 0.4, 0.89 at 0.5).
 */
#define SPARSE_MIN_ZERO_SHARE 0.35
#define SPARSE_MIN_ZERO_SHARE_NARROW 0.5
#define SPARSE_WIDE_COLUMNS 128
#define SPARSE_MIN_COLUMNS 64
#define SPARSE_MIN_ROWS 8

/* most rows a task: its lists and partial sums stay in L2 */
#define SPARSE_TASK_ROWS 256

static __thread float *tls_values;
static __thread size_t tls_values_len;
static __thread float *tls_depths;	/* int32 depths, in a float buffer */
static __thread size_t tls_depths_len;
static __thread float *tls_partial;
static __thread size_t tls_partial_len;

/*
 * The nonzero entries of x[0, n): their values into vals and their
 * indices into ks, in ascending order, then INT32_MAX; returns how many.
 * Both have room for n + 16 (a whole vector is stored past the last).  NaN counts as
 * nonzero (compared unordered); -0.0f as zero.
 */
__attribute__((target("avx512f")))
static int64_t
list_nonzeros(const float *x, int64_t n, float *vals, int32_t *ks)
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

/* what every row of a group finishes with (the micro-kernel's epilogue) */
typedef struct sparse_finish
{
	float		alpha,
				beta;			/* 1 after the first K block */
	const float *bias;			/* at the group's first column, or NULL */
	bool		clamp;
	float		lo,
				hi;
	int64_t		cols;			/* of the group, that exist */
} sparse_finish;

/*
 * One row of A over a sub-block: its nonzeros from *pos on with depth
 * below d1 (vals / ks, which ends in INT32_MAX), times G slivers of B (sliver g at sl[g], depth p at
 * + p * SLIVER), added to the partial sums at part (or from zero when
 * fresh).  last: the K block ends here, so finish the sums into c instead.
 */
static inline __attribute__((always_inline, target("avx512f,fma"))) void
sparse_row(const int G, const float *vals, const int32_t *ks, int64_t *pos, int64_t d1,
		   const float *const *sl, bool fresh, bool last, float *part, const sparse_finish *f, float *c)
{
	__m512		acc[8];
	int64_t		i = *pos;

#pragma GCC unroll 8
	for (int v = 0; v < 2 * G; v++)
		acc[v] = fresh ? _mm512_setzero_ps() : _mm512_loadu_ps(part + 16 * v);
	for (; ks[i] < d1; i++)
	{
		__m512		xv = _mm512_set1_ps(vals[i]);
		int64_t		off = (int64_t) ks[i] * SLIVER;

#pragma GCC unroll 4
		for (int g = 0; g < G; g++)
		{
			acc[2 * g] = _mm512_fmadd_ps(xv, _mm512_load_ps(sl[g] + off), acc[2 * g]);
			acc[2 * g + 1] = _mm512_fmadd_ps(xv, _mm512_load_ps(sl[g] + off + 16), acc[2 * g + 1]);
		}
	}
	*pos = i;
	if (!last)
	{
#pragma GCC unroll 8
		for (int v = 0; v < 2 * G; v++)
			_mm512_storeu_ps(part + 16 * v, acc[v]);
		return;
	}
#pragma GCC unroll 8
	for (int v = 0; v < 2 * G; v++)
	{
		int64_t		c0 = 16 * v;
		__mmask16	m;
		__m512		r = acc[v];

		if (c0 >= f->cols)
			break;
		m = f->cols - c0 >= 16 ? (__mmask16) 0xFFFF : (__mmask16) ((1u << (f->cols - c0)) - 1);
		if (f->alpha != 1.0f)
			r = _mm512_mul_ps(r, _mm512_set1_ps(f->alpha));
		if (f->bias)
			r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(m, f->bias + c0));
		if (f->beta == 1.0f)
			r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(m, c + c0));
		else if (f->beta != 0.0f)
			r = _mm512_fmadd_ps(_mm512_set1_ps(f->beta), _mm512_maskz_loadu_ps(m, c + c0), r);
		if (f->clamp)
			r = _mm512_min_ps(_mm512_set1_ps(f->hi), _mm512_max_ps(_mm512_set1_ps(f->lo), r));
		_mm512_mask_storeu_ps(c + c0, m, r);
	}
}

/*
 * Depths [d0, d1) of the G slivers at sl into L2.  The rows read a
 * sub-block at their nonzero depths, in no order that the hardware
 * prefetchers follow: for a B from memory each row waited on its misses
 * (8 rows of a 4096 x 4096 B, half zeros: 1.58x the micro-kernels' time).
 * Each row of a sub-block fetches its share of the next one, the first
 * sub-block of a group all at once: 0.95x (16 rows 0.91x, 64 rows 0.76x;
 * all of the next sub-block fetched at once: 1.46x).
 */
static inline __attribute__((always_inline)) void
prefetch_depths(const int G, const float *const *sl, int64_t d0, int64_t d1)
{
	for (int g = 0; g < G; g++)
		for (const char *p = (const char *) (sl[g] + d0 * SLIVER); p < (const char *) (sl[g] + d1 * SLIVER); p += 64)
			_mm_prefetch(p, _MM_HINT_T1);
}

/*
 * Rows [0, rows) of the task over G slivers of one K block (kc deep, its
 * sliver s0 at blk + s0 * SLIVER * kc), in sub-blocks of depths.
 */
static inline __attribute__((always_inline, target("avx512f,fma"))) void
sparse_group(const int G, const ox_sgemm_sparse_job *j, int64_t rows, const float *blk, int64_t kc,
			 int64_t s0, const float *vals, const int32_t *ks, int64_t stride,
			 int64_t *pos, float *part, const sparse_finish *f, float *c)
{
	const float *sl[4];
	const int64_t sub = SUB_BLOCK_FLOATS / (G * SLIVER);

	for (int g = 0; g < G; g++)
		sl[g] = blk + (s0 + g) * SLIVER * kc;
	for (int64_t r = 0; r < rows; r++)
		pos[r] = 0;
	for (int64_t d0 = 0; d0 < kc; d0 += sub)
	{
		int64_t		d1 = d0 + sub < kc ? d0 + sub : kc;

		int64_t		n0 = d1,
					n1 = d1 + sub < kc ? d1 + sub : kc;	/* the next sub-block */

		if (d0 == 0)
			prefetch_depths(G, sl, 0, d1);
		for (int64_t r = 0; r < rows; r++)
		{
			if (n0 < n1)
				prefetch_depths(G, sl, n0 + (n1 - n0) * r / rows, n0 + (n1 - n0) * (r + 1) / rows);
			sparse_row(G, vals + r * stride, ks + r * stride, &pos[r], d1, sl, d0 == 0,
					   d1 == kc, part + r * 2 * G * 16, f, c + r * j->ldc);
		}
	}
}

__attribute__((target("avx512f,fma")))
bool
ox_sgemm_sparse_rows_avx512(const ox_sgemm_sparse_job *j, int64_t row0, int64_t rows)
{
	const int64_t nsl = j->npad / SLIVER;
	/* a row's lists: a K block's depths and a vector's store past them, in whole lines */
	int64_t		stride = ((j->K + j->nkb - 1) / j->nkb + 1 + 16 + 15) / 16 * 16;
	float	   *vals = ox_aligned_grow(&tls_values, &tls_values_len, (size_t) (rows * stride));
	float	   *kbuf = ox_aligned_grow(&tls_depths, &tls_depths_len, (size_t) (rows * stride + 2 * rows));
	float	   *part = ox_aligned_grow(&tls_partial, &tls_partial_len, (size_t) (rows * 8 * 16));
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
			(void) list_nonzeros(j->A + (row0 + r) * j->lda + k0, kc, vals + r * stride, ks + r * stride);
		f.alpha = j->alpha;
		f.beta = kb == 0 ? j->beta : 1.0f;
		f.clamp = j->clamp && kb == j->nkb - 1;
		f.lo = j->clamp_lo;
		f.hi = j->clamp_hi;
		for (int64_t s = 0; s < nsl;)
		{
			int			G = nsl - s >= 4 ? 4 : (nsl - s >= 2 ? 2 : 1);
			int64_t		col = s * SLIVER;
			float	   *c = j->C + row0 * j->ldc + col;

			f.cols = j->N - col < G * SLIVER ? j->N - col : G * SLIVER;
			f.bias = kb == 0 && j->bias ? j->bias + col : NULL;
			if (G == 4)
				sparse_group(4, j, rows, blk, kc, s, vals, ks, stride, pos, part, &f, c);
			else if (G == 2)
				sparse_group(2, j, rows, blk, kc, s, vals, ks, stride, pos, part, &f, c);
			else
				sparse_group(1, j, rows, blk, kc, s, vals, ks, stride, pos, part, &f, c);
			if (j->post && kb == j->nkb - 1)
				j->post(j->post_arg, row0, j->col0 + col, rows, f.cols, c, j->ldc);
			s += G;
		}
	}
	return true;
}

static void
sparse_task(void *arg, int64_t t0, int64_t t1)
{
	ox_sgemm_sparse_job *j = arg;

	for (int64_t t = t0; t < t1; t++)
	{
		int64_t		row0 = t * j->task_rows;
		int64_t		rows = j->M - row0 < j->task_rows ? j->M - row0 : j->task_rows;

		if (!ox_sgemm_sparse_rows_avx512(j, row0, rows))
		{
			j->oom = true;
			return;
		}
	}
}

/*
 * Whether A (M x K, rows lda apart) has enough zeros that skipping them
 * beats the micro-kernel, which takes no notice of them.
 */
bool
ox_sgemm_sparse_worth(const float *A, int64_t lda, int64_t M, int64_t K, int64_t N)
{
	int64_t		zeros = 0;

	if (N < SPARSE_MIN_COLUMNS || M < SPARSE_MIN_ROWS)
		return false;
	for (int64_t m = 0; m < M; m++)
		zeros += ox_sgemm_zero_count(A + m * lda, K);
	return zeros >= (int64_t) ((N >= SPARSE_WIDE_COLUMNS ? SPARSE_MIN_ZERO_SHARE : SPARSE_MIN_ZERO_SHARE_NARROW) *
							   (double) M * (double) K);
}

ox_code
ox_sgemm_sparse_run(ox_kernel_ctx *ctx, ox_sgemm_sparse_job *j)
{
	int			threads = ctx ? ctx->nthreads : 1;
	int64_t		tasks;

	/* as many rows a task as keep every thread busy, at most SPARSE_TASK_ROWS */
	j->task_rows = (j->M + threads - 1) / threads;
	if (j->task_rows > SPARSE_TASK_ROWS)
		j->task_rows = SPARSE_TASK_ROWS;
	/*
	 * ox_parallel_for polls for cancellation between tasks: with an abort
	 * callback, at most about 2^25 multiply-adds a task (as sgemm.c's grid)
	 */
	if (ctx && ctx->should_abort)
		while (j->task_rows > SPARSE_MIN_ROWS && j->task_rows * j->N * j->K > ((int64_t) 1 << 26))
			j->task_rows /= 2;
	tasks = (j->M + j->task_rows - 1) / j->task_rows;
	j->oom = false;
	ox_parallel_for(ctx, tasks, 1, sparse_task, j);
	if (j->oom)
		return ox_fail(ctx ? ctx->st : NULL, OX_OUT_OF_MEMORY, "could not allocate a sparse product's buffers");
	return OX_OK;
}
