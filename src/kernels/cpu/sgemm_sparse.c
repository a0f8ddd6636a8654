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
 *	  The kernels are in sgemm_sparse_kernels.h, compiled here for AVX-512
 *	  and for AVX2, the two families of sgemm.c's micro-kernels (the BLAS
 *	  fallback packs nothing).
 */
#include "kernels/cpu/sgemm_isa.h"
#include "util/tensor.h"

#include <immintrin.h>
#include <string.h>

/* floats of B a sub-block holds: 16 KiB, half of L1 */
#define SUB_BLOCK_FLOATS 4096

/*
 * When skipping A's zeros pays.  A row's nonzero costs, per sliver of B,
 * about this many times what a depth of a row costs the micro-kernel's
 * tile (a Zen 4, one thread, 256 rows, fitted to the times of N = 64 to
 * 512 at half zeros, where the sparse time over the tile's is half these):
 * with AVX-512 1.55 a sliver in groups of four (256 x 512 x 512: 0.78x the
 * time at half zeros, 0.65x at 60%, 0.89x at 40%), 2.15 in a group of two
 * (N = 64: 1.07x at half zeros, 0.79x at 60%), 2.25 alone; with AVX2
 * (forced on the same machine) 1.9 in groups of four (0.90x at half
 * zeros, 0.79x at 60%), 2.1 and 2.3.  A group of fewer slivers pays a
 * broadcast and a listed depth for fewer multiply-adds; sub-blocks with
 * few depths (a short K block's last) cost more than the fit says.  Taken
 * when the nonzeros' share times the mix's cost is at most 0.95.
 */
static const double sparse_cost_avx512[3] = {2.25, 2.15, 1.55};	/* groups of 1, 2, 4 */
static const double sparse_cost_avx2[3] = {2.3, 2.1, 1.9};

#define SPARSE_MAX_COST 0.95
#define SPARSE_MIN_COLUMNS 64
#define SPARSE_MIN_ROWS 8

/* rows of A whose zeros are counted to decide */
#define SPARSE_SAMPLE_ROWS 32

/* most rows a task: its lists and partial sums stay in L2 */
#define SPARSE_TASK_ROWS 256

static __thread float *tls_values;
static __thread size_t tls_values_len;
static __thread float *tls_depths;	/* int32 depths, in a float buffer */
static __thread size_t tls_depths_len;
static __thread float *tls_partial;
static __thread size_t tls_partial_len;

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
 * Depths [d0, d1) of the G slivers at sl (sliver floats a depth) into L2.  The rows read a
 * sub-block at their nonzero depths, in no order that the hardware
 * prefetchers follow: for a B from memory each row waited on its misses
 * (8 rows of a 4096 x 4096 B, half zeros: 1.58x the micro-kernels' time).
 * Each row of a sub-block fetches its share of the next one, the first
 * sub-block of a group all at once: 0.95x (16 rows 0.91x, 64 rows 0.76x;
 * all of the next sub-block fetched at once: 1.46x).
 */
static inline __attribute__((always_inline)) void
prefetch_depths(const int G, const float *const *sl, int64_t sliver, int64_t d0, int64_t d1)
{
	for (int g = 0; g < G; g++)
		for (const char *p = (const char *) (sl[g] + d0 * sliver); p < (const char *) (sl[g] + d1 * sliver); p += 64)
			_mm_prefetch(p, _MM_HINT_T1);
}

#define SP_W 16
#include "kernels/cpu/sgemm_sparse_kernels.h"
#undef SP_W

#define SP_W 8
#include "kernels/cpu/sgemm_sparse_kernels.h"
#undef SP_W

/* columns a sliver of packed B: the micro-kernels' nr (two vectors) */
static inline int64_t
sparse_sliver(bool avx512)
{
	return avx512 ? ox_sgemm_isa_avx512.nr : ox_sgemm_isa_avx2.nr;
}

/* task t: row block t / col_ranges, its range t % col_ranges of slivers, in whole groups of four */
static void
sparse_task(void *arg, int64_t t0, int64_t t1)
{
	ox_sgemm_sparse_job *j = arg;
	int64_t		nsl = j->npad / sparse_sliver(j->avx512);
	int64_t		groups = (nsl + 3) / 4;

	for (int64_t t = t0; t < t1; t++)
	{
		int64_t		rb = t / j->col_ranges,
					g = t % j->col_ranges;
		int64_t		row0 = rb * j->task_rows;
		int64_t		rows = j->M - row0 < j->task_rows ? j->M - row0 : j->task_rows;
		int64_t		s0 = g * groups / j->col_ranges * 4,
					s1 = (g + 1) * groups / j->col_ranges * 4;

		if (s1 > nsl)
			s1 = nsl;
		if (s0 >= s1)
			continue;
		if (!(j->avx512 ? ox_sgemm_sparse_rows_avx512(j, row0, rows, s0, s1) :
			  ox_sgemm_sparse_rows_avx2(j, row0, rows, s0, s1)))
		{
			j->oom = true;
			return;
		}
	}
}

/*
 * Whether A (M x K, rows lda apart) has enough zeros that skipping them
 * beats the micro-kernel, which takes no notice of them: a guess from
 * SPARSE_SAMPLE_ROWS of its rows (the same numbers either way).
 */
bool
ox_sgemm_sparse_worth(bool avx512, const float *A, int64_t lda, int64_t M, int64_t K, int64_t N)
{
	const double *cost = avx512 ? sparse_cost_avx512 : sparse_cost_avx2;
	int64_t		sliver = sparse_sliver(avx512);
	int64_t		nsl = (N + sliver - 1) / sliver;
	int64_t		in4 = nsl / 4 * 4,
				in2 = (nsl - in4) / 2 * 2,
				alone = nsl - in4 - in2;
	double		mix = (in4 * cost[2] + in2 * cost[1] + alone * cost[0]) / (double) nsl;
	int64_t		rows = M < SPARSE_SAMPLE_ROWS ? M : SPARSE_SAMPLE_ROWS;
	int64_t		zeros = 0;

	if (N < SPARSE_MIN_COLUMNS || M < SPARSE_MIN_ROWS)
		return false;
	/*
	 * rows spread over A, not all of them: a count per row cost more than
	 * the product saved on small layers (scikit-learn's MLPClassifier
	 * (64, 64) at 1000 rows: 1.08x the time of not looking)
	 */
	for (int64_t i = 0; i < rows; i++)
		zeros += ox_sgemm_zero_count(A + (i * M / rows) * lda, K);
	/* (1 - zeros / (rows K)) mix <= SPARSE_MAX_COST */
	return (double) zeros >= (1.0 - SPARSE_MAX_COST / mix) * (double) rows * (double) K;
}

ox_code
ox_sgemm_sparse_run(ox_kernel_ctx *ctx, ox_sgemm_sparse_job *j)
{
	int			threads = ctx ? ctx->nthreads : 1;
	int64_t		groups = (j->npad / sparse_sliver(j->avx512) + 3) / 4;	/* of four slivers */
	int64_t		tasks;

	/*
	 * Row blocks of equal size, at most SPARSE_TASK_ROWS rows: each reads
	 * all of B.  With fewer blocks than threads the threads share a block's
	 * columns rather than each reading all of B for fewer rows (8 rows of a
	 * 4096 x 4096 B at 2 threads, half zeros: 0.99x the micro-kernels'
	 * time, 1.55x in two blocks of 4), in ranges of whole groups of four
	 * slivers, enough of them that the tasks divide evenly (as sgemm.c's
	 * grid).
	 */
	tasks = (j->M + SPARSE_TASK_ROWS - 1) / SPARSE_TASK_ROWS;
	/*
	 * ox_parallel_for polls for cancellation between tasks: with an abort
	 * callback, at most about 2^25 multiply-adds a task (as sgemm.c's grid)
	 */
	if (ctx && ctx->should_abort)
		while (j->M / tasks > SPARSE_MIN_ROWS && (j->M / tasks) * j->N * j->K > ((int64_t) 1 << 26))
			tasks *= 2;
	j->task_rows = (j->M + tasks - 1) / tasks;
	tasks = (j->M + j->task_rows - 1) / j->task_rows;
	j->col_ranges = threads / ox_sgemm_gcd(tasks, threads);
	if (j->col_ranges > groups)
	{
		/* too few groups of slivers to share: more, smaller row blocks */
		j->col_ranges = 1;
		if (tasks < threads)
		{
			j->task_rows = (j->M + threads - 1) / threads;
			tasks = (j->M + j->task_rows - 1) / j->task_rows;
		}
	}
	j->oom = false;
	ox_parallel_for(ctx, tasks * j->col_ranges, 1, sparse_task, j);
	if (j->oom)
		return ox_fail(ctx ? ctx->st : NULL, OX_OUT_OF_MEMORY, "could not allocate a sparse product's buffers");
	return OX_OK;
}
