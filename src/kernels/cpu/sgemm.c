/*
 * sgemm.c
 *	  Blocked SGEMM (BLIS-style): B is packed into KC x NR slivers, A into
 *	  MR x KC slivers, and a register-blocked micro-kernel computes MR x NR
 *	  tiles of C.
 *
 *	  Loop nest, outermost first: row block (a share of M, its A packed for
 *	  the whole depth once), column block (NC columns: the B panel a row
 *	  block sweeps stays in L2), K block (KC deep), B sliver (stays in L1;
 *	  the next one is prefetched into L2 while this one is used), A sliver.
 *	  K and M are cut into blocks of equal size, not a remainder block:
 *	  K = 784 runs as four blocks of 196 rather than three of 256 and one of
 *	  16, whose pass over C would cost as much as its arithmetic.
 *
 *	  Edge tiles: the micro-kernel is instantiated for every row count up to
 *	  MR and for one or two vectors of columns; partial column vectors are
 *	  read and written through masks, so C is never touched outside the
 *	  matrix and no staging buffer is needed.  Packed slivers are zero
 *	  padded, so the arithmetic itself needs no masks.
 *
 *	  Threading: one parallel loop per call over a grid of tasks (row block
 *	  x column range) sized so that every thread gets the same amount of
 *	  work; tasks share nothing but the packed B, so there is no barrier
 *	  inside a call.  B that is not packed ahead of time is packed first
 *	  (in parallel) into a buffer of the calling thread; A is packed by each
 *	  task into a buffer of the thread running it.  Buffers are kept between
 *	  calls, so steady-state calls allocate nothing.
 *
 *	  The instruction-set specific kernels (micro-kernels, the AVX-512 packer
 *	  of A, the dot products of the matrix-vector path) are in
 *	  sgemm_kernels.c; this file chooses among them once, by cpuid.
 */
#include "kernels/cpu/sgemm.h"
#include "kernels/cpu/sgemm_isa.h"
#include "util/cpu_vendor.h"

#include <cblas.h>
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* nominal depth of a K block: a KC x 32 sliver of B (32 KiB) stays in L1 */
#define KC 256

/* columns of B one row block sweeps per K block: the panel stays in L2 */
#define NC_SLIVERS 32

/*
 * B of at most this many slivers (512 columns): the AVX-512 micro-kernels
 * read A in place rather than from a packed copy.  A block of A is packed
 * once and read once per sliver, so with few slivers the packing is a
 * large share of the work (a [4096, 256] x [256, 128] product: 15% of the
 * kernels' time; 4-8% faster in place, interleaved A/B, bench/ab.py).  At
 * 16 slivers rather than 8: the MLP 784-512-512-10 at batch 256 1.4%
 * faster, [4096, 256] x [256, 512] 2.4%, [1024, 512] x [512, 512] 1%;
 * 24 to 96 slivers (the encoder's) unchanged at 32.
 */
#define A_IN_PLACE_SLIVERS 16

/* above this many floats, B that is not packed ahead is packed in column chunks */
#define BPACK_MAX_FLOATS (8 << 20)

static const ox_sgemm_isa_desc *chosen_isa;
static bool isa_chosen;

static const ox_sgemm_isa_desc *
pick_isa(void)
{
	if (!isa_chosen)
	{
		__builtin_cpu_init();
		if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma"))
			chosen_isa = &ox_sgemm_isa_avx512;
		else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
			chosen_isa = &ox_sgemm_isa_avx2;
		else
			chosen_isa = NULL;
		isa_chosen = true;
	}
	return chosen_isa;
}

const char *
ox_sgemm_force_isa(const char *name)
{
	const char *prev = ox_sgemm_isa();

	__builtin_cpu_init();
	if (strcmp(name, "avx512") == 0 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma"))
		chosen_isa = &ox_sgemm_isa_avx512;
	else if (strcmp(name, "avx2") == 0 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		chosen_isa = &ox_sgemm_isa_avx2;
	else if (strcmp(name, "blas") == 0)
		chosen_isa = NULL;
	else
		return NULL;
	isa_chosen = true;
	return prev;
}

const char *
ox_sgemm_isa(void)
{
	const ox_sgemm_isa_desc *isa = pick_isa();

	return isa ? isa->name : "blas";
}

/* ---- blocking ----------------------------------------------------------- */

/*
 * K blocks of equal depth (within one): block b starts at kb_start(K, b).
 * M is cut likewise, in whole slivers of MR rows.
 */
static inline int64_t
kb_count(int64_t K)
{
	return (K + KC - 1) / KC;
}

static inline int64_t
kb_start(int64_t K, int64_t nkb, int64_t b)
{
	return ox_sgemm_kb_start(K, nkb, b);
}

/* row blocks: slivers [rb_sliver(rb), rb_sliver(rb + 1)) of MR rows */
typedef struct row_plan
{
	int64_t		slivers;		/* ceil(M / MR) */
	int64_t		blocks;
} row_plan;

static row_plan
plan_rows(const ox_sgemm_isa_desc *isa, int64_t M)
{
	row_plan	rp;
	int64_t		per = isa->mc / isa->mr;

	rp.slivers = (M + isa->mr - 1) / isa->mr;
	rp.blocks = (rp.slivers + per - 1) / per;
	return rp;
}

static inline int64_t
rb_sliver(const row_plan *rp, int64_t rb)
{
	return rb * rp->slivers / rp->blocks;
}

/* ---- packing ---------------------------------------------------------- */

/*
 * A rows [i0, i0 + rows), depth [p0, p0 + kc) into MR-row slivers, zero
 * padded to whole slivers.  Rows of A (not transposed) are read four at a
 * time and transposed in registers, four depths at a time (sixteen rows by
 * sixteen with AVX-512).
 */
static void
pack_a(const ox_sgemm_isa_desc *isa, bool trans_a, const float *A, int64_t lda, int64_t i0, int64_t rows_total,
	   int64_t p0, int64_t kc, float *dst)
{
	int			mr = isa->mr;

	for (int64_t i = 0; i < rows_total; i += mr)
	{
		int64_t		rows = rows_total - i < mr ? rows_total - i : mr;
		int64_t		p = 0;

		if (!trans_a && mr == 12 && isa == &ox_sgemm_isa_avx512)
		{
			p = ox_sgemm_pack_a12_avx512(A + (i0 + i) * lda + p0, lda, rows, kc, dst);
			dst += p * mr;
		}
		if (!trans_a && rows == mr && mr % 4 == 0)
		{
			for (; p + 4 <= kc; p += 4)
			{
				for (int g = 0; g < mr; g += 4)
				{
					const float *src = A + (i0 + i + g) * lda + p0 + p;
					__m128		r0 = _mm_loadu_ps(src),
								r1 = _mm_loadu_ps(src + lda),
								r2 = _mm_loadu_ps(src + 2 * lda),
								r3 = _mm_loadu_ps(src + 3 * lda);

					_MM_TRANSPOSE4_PS(r0, r1, r2, r3);
					_mm_storeu_ps(dst + g, r0);
					_mm_storeu_ps(dst + mr + g, r1);
					_mm_storeu_ps(dst + 2 * mr + g, r2);
					_mm_storeu_ps(dst + 3 * mr + g, r3);
				}
				dst += 4 * mr;
			}
		}
		for (; p < kc; p++)
		{
			int64_t		r = 0;

			if (trans_a)
			{
				const float *src = A + (p0 + p) * lda + i0 + i;

				for (; r < rows; r++)
					dst[r] = src[r];
			}
			else
			{
				const float *src = A + (i0 + i) * lda + p0 + p;

				for (; r < rows; r++)
					dst[r] = src[r * lda];
			}
			for (; r < mr; r++)
				dst[r] = 0.0f;
			dst += mr;
		}
	}
}

/*
 * B depth [p0, p0 + kc), columns [j0, j0 + cols_total) into NR-column
 * slivers, zero padded.  Transposed B is read along its rows (contiguous)
 * and written down the sliver's columns.
 */
static void
pack_b(const ox_sgemm_isa_desc *isa, bool trans_b, const float *B, int64_t ldb, int64_t p0, int64_t kc,
	   int64_t j0, int64_t cols_total, float *dst)
{
	int			nr = isa->nr;

	for (int64_t j = 0; j < cols_total; j += nr)
	{
		int64_t		cols = cols_total - j < nr ? cols_total - j : nr;

		if (!trans_b)
		{
			for (int64_t p = 0; p < kc; p++)
			{
				memcpy(dst + p * nr, B + (p0 + p) * ldb + j0 + j, sizeof(float) * cols);
				if (cols < nr)
					memset(dst + p * nr + cols, 0, sizeof(float) * (nr - cols));
			}
		}
		else
		{
			for (int64_t c = 0; c < cols; c++)
			{
				const float *src = B + (j0 + j + c) * ldb + p0;

				for (int64_t p = 0; p < kc; p++)
					dst[p * nr + c] = src[p];
			}
			if (cols < nr)
				for (int64_t p = 0; p < kc; p++)
					memset(dst + p * nr + cols, 0, sizeof(float) * (nr - cols));
		}
		dst += nr * kc;
	}
}

/* thread-local pack buffers, grown on demand and kept */
static __thread float *tls_abuf;
static __thread size_t tls_abuf_len;
/* a GEMV's list of nonzero entries (int32_t indices in float-sized slots) */
static __thread float *tls_nonzero;
static __thread size_t tls_nonzero_len;
static __thread float *tls_bbuf;
static __thread size_t tls_bbuf_len;

/* ---- packed matrices ---------------------------------------------------- */

/*
 * Layouts.  B (K x N): K block kb holds every sliver of N, at
 * kb_start * npad floats, sliver j at + j * NR * kc.  A (M x K): row block
 * rb at MR * rb_sliver(rb) * K, in it K block kb at + kb_start * rows_pad,
 * sliver i at + i * MR * kc.  Both follow from the dimensions alone.
 */
struct ox_sgemm_packed
{
	const ox_sgemm_isa_desc *isa;
	bool		is_a;
	int64_t		rows;			/* M for A, K for B */
	int64_t		cols;			/* K for A, N for B */
	float	   *data;
	size_t		bytes;
};

/* a view of packed B: its K blocks, from sliver j0 on */
typedef struct bview
{
	const float *data;			/* K block 0, sliver j0 */
	int64_t		npad;			/* floats per depth row of the whole packed B */
} bview;

static inline const float *
bview_panel(const bview *v, int64_t K, int64_t nkb, int64_t kb)
{
	return v->data + kb_start(K, nkb, kb) * v->npad;
}

/*
 * The caller's epilogue (its bias at the part's first column), with the
 * column offset of the part of C at hand (B packed in column chunks runs
 * the loop nest once per chunk).
 */
typedef struct epilogue
{
	ox_sgemm_epilogue u;
	int64_t		col0;
} epilogue;

/* c[i] = min(max(c[i], lo), hi), NaN kept (the micro-kernels' clamp) */
static void
clamp_row(float *c, int64_t n, float lo, float hi)
{
	for (int64_t i = 0; i < n; i++)
	{
		float		v = c[i] < lo ? lo : c[i];

		c[i] = v > hi ? hi : v;
	}
}

/* ---- the loop nest ---------------------------------------------------- */

typedef struct gemm_job
{
	const ox_sgemm_isa_desc *isa;
	int64_t		M,
				N,
				K;
	int64_t		nkb;
	row_plan	rp;
	int64_t		col_groups;		/* column ranges per row block */
	int64_t		nslivers;		/* ceil(N / NR) */
	bool		trans_a;
	const float *A;
	int64_t		lda;
	const ox_sgemm_packed *pa;	/* A packed ahead of time, or NULL */
	bool		a_in_place;		/* the micro-kernels read A where it is (A_IN_PLACE_SLIVERS) */
	bview		b;
	float	   *C;
	int64_t		ldc;
	float		alpha,
				beta;
	const epilogue *epi;
	bool		oom;
} gemm_job;

/*
 * Rows [row0, row0 + rows) of C (their A panel for K block kb at ap, or
 * NULL: A read in place, depths [k0, k0 + kc)), slivers [j0, j1) of B, K
 * block kb.
 */
static void
macro_tile(const gemm_job *j, const float *ap, int64_t row0, int64_t rows, int64_t kb,
		   int64_t k0, int64_t kc, int64_t j0, int64_t j1)
{
	const ox_sgemm_isa_desc *isa = j->isa;
	int			mr = isa->mr,
				nr = isa->nr;
	const float *panel = bview_panel(&j->b, j->K, j->nkb, kb);
	int64_t		mt = (rows + mr - 1) / mr;
	size_t		sliver_bytes = (size_t) nr * kc * sizeof(float);
	size_t		pf_step = (size_t) (kc + 3) / 4 * 64;
	ox_sgemm_uk_epi		e;

	e.alpha = j->alpha;
	e.beta = kb == 0 ? j->beta : 1.0f;
	e.lda = ap ? 0 : j->lda;
	for (int64_t jr = j0; jr < j1; jr++)
	{
		int64_t		col = jr * nr;
		int64_t		cols = j->N - col < nr ? j->N - col : nr;
		const float *bp = panel + jr * nr * kc;
		const char *next = (const char *) (jr + 1 < j1 ? bp + nr * kc : bp);
		ox_sgemm_ukernel_fn	full = isa->kernel[mr][cols > nr / 2 ? 2 : 1];

		e.cols = (int) cols;
		e.bias = kb == 0 && j->epi->u.bias ? j->epi->u.bias + col : NULL;
		e.clamp = j->epi->u.clamp && kb == j->nkb - 1;
		e.lo = j->epi->u.clamp_lo;
		e.hi = j->epi->u.clamp_hi;
		for (int64_t it = 0; it < mt; it++)
		{
			int64_t		r = it * mr;
			int64_t		rr = rows - r < mr ? rows - r : mr;
			float	   *c = j->C + (row0 + r) * j->ldc + col;
			const float *a = ap ? ap + r * kc : j->A + (row0 + r) * j->lda + k0;

			/* the next B sliver into L2, a share per tile (the kernel
			 * fetches a line per four depths) */
			e.prefetch = next + (size_t) (it * pf_step) % sliver_bytes;
			if (rr == mr)
				full(kc, a, bp, c, j->ldc, &e);
			else
				isa->kernel[rr][cols > nr / 2 ? 2 : 1] (kc, a, bp, c, j->ldc, &e);
		}
		/* this sliver's columns are final: the caller's epilogue, while in cache */
		if (j->epi->u.post && kb == j->nkb - 1)
			j->epi->u.post(j->epi->u.post_arg, row0, j->epi->col0 + col, rows, cols, j->C + row0 * j->ldc + col,
						   j->ldc);
	}
}

/* task t: row block t / col_groups, column range t % col_groups */
static void
gemm_task(void *arg, int64_t begin, int64_t end)
{
	gemm_job   *j = arg;
	const ox_sgemm_isa_desc *isa = j->isa;
	int			mr = isa->mr;

	for (int64_t t = begin; t < end; t++)
	{
		int64_t		rb = t / j->col_groups,
					g = t % j->col_groups;
		int64_t		s0 = rb_sliver(&j->rp, rb),
					s1 = rb_sliver(&j->rp, rb + 1);
		int64_t		row0 = s0 * mr;
		int64_t		rows = (s1 * mr < j->M ? s1 * mr : j->M) - row0;
		int64_t		rows_pad = (s1 - s0) * mr;
		int64_t		j0 = g * j->nslivers / j->col_groups,
					j1 = (g + 1) * j->nslivers / j->col_groups;
		const float *ablock;

		if (j0 >= j1)
			continue;
		if (j->pa)
			ablock = j->pa->data + row0 * j->K;
		else if (j->a_in_place)
			ablock = NULL;
		else
		{
			float	   *buf = ox_aligned_grow(&tls_abuf, &tls_abuf_len, (size_t) rows_pad * j->K);

			if (!buf)
			{
				j->oom = true;
				return;
			}
			for (int64_t kb = 0; kb < j->nkb; kb++)
			{
				int64_t		k0 = kb_start(j->K, j->nkb, kb);

				pack_a(isa, j->trans_a, j->A, j->lda, row0, rows, k0,
					   kb_start(j->K, j->nkb, kb + 1) - k0, buf + k0 * rows_pad);
			}
			ablock = buf;
		}
		for (int64_t jc = j0; jc < j1; jc += NC_SLIVERS)
		{
			int64_t		jce = jc + NC_SLIVERS < j1 ? jc + NC_SLIVERS : j1;

			for (int64_t kb = 0; kb < j->nkb; kb++)
			{
				int64_t		k0 = kb_start(j->K, j->nkb, kb);

				macro_tile(j, ablock ? ablock + k0 * rows_pad : NULL, row0, rows, kb, k0,
						   kb_start(j->K, j->nkb, kb + 1) - k0, jc, jce);
			}
		}
	}
}

/* the grid over packed B (its view bv: N columns from its sliver 0) */
static ox_code
run_packed(ox_kernel_ctx *ctx, const ox_sgemm_isa_desc *isa, bool trans_a, int64_t M, int64_t N, int64_t K,
		   float alpha, const float *A, int64_t lda, const ox_sgemm_packed *pa, const bview *bv,
		   float beta, const epilogue *epi, float *C, int64_t ldc)
{
	int			threads = ctx ? ctx->nthreads : 1;
	gemm_job	job;

	/* a ReLU's output times constant weights: its zeros skipped (sgemm_sparse.c) */
	if ((isa == &ox_sgemm_isa_avx512 || isa == &ox_sgemm_isa_avx2) && !trans_a && !pa && epi->u.b_finite &&
		alpha != 0.0f && ox_sgemm_sparse_worth(isa == &ox_sgemm_isa_avx512, A, lda, M, K, N))
	{
		ox_sgemm_sparse_job sj = {
			.M = M, .N = N, .K = K, .nkb = kb_count(K), .npad = bv->npad,
			.A = A, .lda = lda, .B = bv->data, .alpha = alpha, .beta = beta,
			.epi = &epi->u, .col0 = epi->col0,
			.C = C, .ldc = ldc, .avx512 = isa == &ox_sgemm_isa_avx512,
		};

		return ox_sgemm_sparse_run(ctx, &sj);
	}
	memset(&job, 0, sizeof(job));
	job.isa = isa;
	job.M = M;
	job.N = N;
	job.K = K;
	job.nkb = kb_count(K);
	job.rp = plan_rows(isa, M);
	job.nslivers = (N + isa->nr - 1) / isa->nr;
	job.trans_a = trans_a;
	job.A = A;
	job.lda = lda;
	job.pa = pa;
	job.a_in_place = !pa && !trans_a && isa == &ox_sgemm_isa_avx512 && job.nslivers <= A_IN_PLACE_SLIVERS;
	job.b = *bv;
	job.C = C;
	job.ldc = ldc;
	job.alpha = alpha;
	job.beta = beta;
	job.epi = epi;
	/* enough column ranges that the tasks divide evenly among the threads */
	job.col_groups = 1;
	if (threads > 1)
	{
		job.col_groups = threads / ox_sgemm_gcd(job.rp.blocks, threads);
		if (job.col_groups > job.nslivers)
			job.col_groups = job.nslivers;
	}
	/*
	 * ox_parallel_for polls for cancellation between tasks: with an abort
	 * callback, split columns further until a task is at most 2^25
	 * multiply-adds (a few milliseconds), so a cancel waits little.
	 */
	if (ctx && ctx->should_abort)
		while (job.col_groups * 2 <= job.nslivers &&
			   isa->mc * N * K / job.col_groups > ((int64_t) 1 << 25))
			job.col_groups *= 2;
	ox_parallel_for(ctx, job.rp.blocks * job.col_groups, 1, gemm_task, &job);
	/* a thread could not get its pack buffer: C is incomplete */
	if (job.oom)
		return ox_fail(ctx ? ctx->st : NULL, OX_OUT_OF_MEMORY, "could not allocate a matrix packing buffer");
	return OX_OK;
}

/* packing B in parallel: task t is K block t / slivers, sliver t % slivers */
typedef struct bpack_job
{
	const ox_sgemm_isa_desc *isa;
	bool		trans_b;
	const float *B;
	int64_t		ldb;
	int64_t		K,
				nkb,
				j0,
				N;				/* the columns packed: [j0, j0 + N) */
	int64_t		nslivers;
	float	   *dst;
} bpack_job;

static void
bpack_task(void *arg, int64_t begin, int64_t end)
{
	bpack_job  *j = arg;
	int			nr = j->isa->nr;

	for (int64_t t = begin; t < end; t++)
	{
		int64_t		kb = t / j->nslivers,
					s = t % j->nslivers;
		int64_t		k0 = kb_start(j->K, j->nkb, kb),
					kc = kb_start(j->K, j->nkb, kb + 1) - k0;
		int64_t		cols = j->N - s * nr < nr ? j->N - s * nr : nr;

		pack_b(j->isa, j->trans_b, j->B, j->ldb, k0, kc, j->j0 + s * nr, cols,
			   j->dst + k0 * j->nslivers * nr + s * nr * kc);
	}
}

/* ---- GEMV: one or two rows ---------------------------------------------- */

typedef struct gemv_job
{
	bool		trans_b;
	int64_t		K;
	float		alpha,
				beta;
	const float *x;				/* the row of op(A), contiguous */
	const float *B;
	int64_t		ldb;
	const epilogue *epi;
	int64_t		row;
	float	   *c;
	bool		avx512;
	bool		reverse;		/* columns from the last block down (zigzag_next) */
	bool		one_stream;		/* B past L3's share: a row at a time */
	const int32_t *ks;			/* B finite: x's nonzero entries, whose rows of B are read */
	int64_t		nk;				/* how many (K without ks) */
	const ox_sgemm_packed_view *packed;	/* B packed (then B is NULL), its slivers summed */
	int64_t		unit;			/* columns per index of the parallel loop (gemv_task) */
	int64_t		c_cols;			/* N */
} gemv_job;

/*
 * A GEMV streams all of B once, and B of a small model's layer (the 784-512
 * and 512-512 weights of issue 4's MLP: 1.6 MB and 1 MB) is about the size
 * of L2.  Read in the same order at every call, each line is evicted just
 * before it is needed again, so every call reads all of B from L3.  Read in
 * the opposite order at every other call, a call starts on the lines the
 * previous one read last, still in L2 (an earlier host measured 86 us in
 * one direction and 41 us alternating for 2.7 MB).
 *
 * So B from ZIGZAG_MIN_FLOATS up to L2's size alternates, and so does a
 * larger op(B) = B^T (the dot products, a Linear layer's weights) until
 * ONE_STREAM_MIN_FLOATS: what is left of it in L2 is the previous call's
 * last rows, which a reversed call reads first.  The Zen 4 host (1 MB L2),
 * interleaved A/B of the engine alone, quiet machine, one thread: the MLP's
 * call 1.05x the rate of reading its 784-512 layer forward every time, a
 * [600, 784] layer 1.10x, [1280, 1000] 1.06x, [2000, 800] 1.03x; at two
 * threads 1.00-1.05x.  (A session before had judged alternation a loss
 * above L2's size, from a comparison with a row at a time in one direction
 * that changed two things at once.)  The sums of rows (B as [K, N]) keep
 * to L2's size: reversed they went in slices of 16 columns, a cache line
 * of each row, which from L3 was slower than the forward blocks ([784, 600]
 * and [1000, 1280] alternating: 0.79x and 0.77x the rate); they now go in
 * slices of 128 (gemv_columns).  It goes four
 * rows at a time while it fits in L3: four rows made the MLP's call
 * 0.85-0.87x the time of one (interleaved A/B, 1 and 2 threads), and a
 * microbenchmark of B in L3 [512, 784] 17.5 us against 22, [1000, 1280]
 * 58 against 68.  From ONE_STREAM_MIN_FLOATS on it goes one row at a time,
 * forward: one address sequence, which memory feeds faster than four rows
 * a few KB apart (a 5 MB B from DRAM 200 us against 273; a 64 MB one the
 * same on the later host).  The direction is kept per B, in a small table
 * of the calling thread keyed by B's address; a stale entry only flips a
 * direction, which is correct either way.  Smaller B always goes forward,
 * in the larger blocks.
 */
#define ZIGZAG_SLOTS 16
/* the columns of a reversed or threaded slice of the sums of rows (gemv_columns, gemv_task) */
#define AXPY_SLICE 128
#define ZIGZAG_MIN_FLOATS (128 * 1024)	/* 512 KB */
#define ONE_STREAM_MIN_FLOATS (2 * 1024 * 1024)	/* 8 MB: more than a model's share of L3 */

/* L2's size in floats, from the C library (1 MB when it does not say) */
static int64_t
l2_floats(void)
{
	static int64_t cached;		/* every thread that asks stores the same value */
	int64_t		v = __atomic_load_n(&cached, __ATOMIC_RELAXED);

	if (v == 0)
	{
		long		bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);

		v = (bytes > 0 ? bytes : 1024 * 1024) / (long) sizeof(float);
		__atomic_store_n(&cached, v, __ATOMIC_RELAXED);
	}
	return v;
}

static __thread struct
{
	const float *b;
	bool		reverse;
}			tls_zigzag[ZIGZAG_SLOTS];
static __thread unsigned tls_zigzag_next_slot;

/*
 * B's direction for this call, flipped from its last one.  The table is
 * searched whole: two weights that shared a slot of a hashed table (their
 * addresses alike modulo a page, as mmap gives them) reset each other on
 * every call, and neither ever went backwards.  A B not there takes the
 * slots in turn.
 */
static bool
zigzag_next(const float *B)
{
	unsigned	h;

	for (int i = 0; i < ZIGZAG_SLOTS; i++)
		if (tls_zigzag[i].b == B)
			return tls_zigzag[i].reverse = !tls_zigzag[i].reverse;
	h = tls_zigzag_next_slot++ % ZIGZAG_SLOTS;
	tls_zigzag[h].b = B;
	tls_zigzag[h].reverse = false;
	return false;
}

/* the nonzero entries of x's K floats into ks (room for K + 16), their count returned */
static int64_t
nonzero_list(bool avx512, const float *x, int64_t K, int32_t *ks)
{
	return avx512 ? ox_sgemm_nonzero_indices_avx512(x, K, ks) : ox_sgemm_nonzero_indices(x, K, ks);
}

/* what a kernel finishing columns from n0 on applies of u: its bias from there, its clamp */
static ox_gemv_finish
gemv_finish_from(const ox_sgemm_epilogue *u, int64_t n0)
{
	return (ox_gemv_finish) {.bias = u->bias ? u->bias + n0 : NULL, .clamp = u->clamp,
	.lo = u->clamp_lo, .hi = u->clamp_hi};
}

static int	forced_list_prefetch = -1;

/*
 * Whether the AXPY kernels prefetch the rows of a nonzero list ahead: on
 * AMD's cores, whose prefetchers fetch the lines after the rows read (a
 * Zen 4: the in-query MLP 1.41 us a row against 1.52), not on Intel's,
 * which keep up with such rows on their own (a Sapphire Rapids: 1.05x the
 * time with it).  The kernel's comment has the measurements.
 */
bool
ox_sgemm_list_prefetch(void)
{
	if (forced_list_prefetch >= 0)
		return forced_list_prefetch;
	return ox_cpu_amd_family() != 0;
}

int
ox_sgemm_force_list_prefetch(int on)
{
	int			prev = ox_sgemm_list_prefetch();

	forced_list_prefetch = on < 0 ? -1 : on != 0;
	return prev;
}

/*
 * out[n - n0] = sum over the nk rows k of ks (NULL: 0..nk-1) of x[k] B[k, n],
 * for n in [n0, n1), then u's bias (from column n0 on) and clamp when
 * finish: the AXPY kernel of the ISA
 */
static void
axpy_rows(bool avx512, const float *x, const float *B, int64_t ldb, const int32_t *ks, int64_t nk,
		  int64_t n0, int64_t n1, const ox_sgemm_epilogue *u, bool finish, float *out)
{
	ox_gemv_finish f = gemv_finish_from(u, n0);
	bool		prefetch = ks && ox_sgemm_list_prefetch();

	if (avx512)
		ox_sgemm_axpy_rows_avx512(x, B, ldb, ks, nk, prefetch, n0, n1, finish ? &f : NULL, out);
	else
		ox_sgemm_axpy_rows_avx2(x, B, ldb, ks, nk, prefetch, n0, n1, finish ? &f : NULL, out);
}

/*
 * out[n - s] = the product of x with column n of op(B), n in [s, e); with
 * finish (AXPY kernels only), the epilogue's bias and clamp applied too
 */
static void
gemv_products(const gemv_job *j, int64_t s, int64_t e, bool finish, float *out)
{
	if (j->packed)
	{
		ox_gemv_finish f = gemv_finish_from(&j->epi->u, s);

		if (j->avx512)
			ox_sgemm_packed_gemv_avx512(j->x, j->packed, j->ks, j->nk, s, e, finish ? &f : NULL, out);
		else
			ox_sgemm_packed_gemv_avx2(j->x, j->packed, j->ks, j->nk, s, e, finish ? &f : NULL, out);
	}
	else if (j->trans_b)
	{
		if (j->avx512)
			ox_sgemm_dots_avx512(j->x, j->B, j->ldb, j->K, s, e, j->one_stream, out);
		else
			ox_sgemm_dots_avx2(j->x, j->B, j->ldb, j->K, s, e, out);
	}
	else
	{
		/* sum_k x[k] * B[k, :], the column sums held in registers */
		axpy_rows(j->avx512, j->x, j->B, j->ldb, j->ks, j->nk, s, e, &j->epi->u, finish, out);
	}
}

/*
 * c[n] = alpha buf[n - s] + beta c[n] (+ 0 when beta is 0) + bias[n], in one
 * pass with the conditions out of the loop, so that it vectorizes.
 */
static void
gemv_scale_bias(float alpha, float beta, const float *bias, const float *buf, int64_t s, int64_t e,
				float *c)
{
	const float *b = buf - s;

	if (beta == 0.0f && bias)
		for (int64_t n = s; n < e; n++)
			c[n] = (alpha * b[n] + 0.0f) + bias[n];
	else if (beta == 0.0f)
		for (int64_t n = s; n < e; n++)
			c[n] = alpha * b[n] + 0.0f;
	else if (bias)
		for (int64_t n = s; n < e; n++)
			c[n] = (alpha * b[n] + beta * c[n]) + bias[n];
	else
		for (int64_t n = s; n < e; n++)
			c[n] = alpha * b[n] + beta * c[n];
}

static void
gemv_columns(const gemv_job *j, int64_t n0, int64_t n1)
{
	const ox_sgemm_epilogue *u = &j->epi->u;
	float		buf[256];
	int64_t		nblocks = (n1 - n0 + 255) / 256;

	/*
	 * With alpha 1, beta 0 and no post function, the AXPY kernels add the
	 * bias and clamp in registers and store C once: the two passes below
	 * over the row (SSE, this file's baseline) cost 0.2 us of a 3 us run of
	 * the in-query MLP.
	 */
	bool		plain = j->alpha == 1.0f && j->beta == 0.0f && !u->post;
	bool		finish = !j->trans_b && plain;

	/*
	 * The dot products' sums, finished sixteen at a time after them (the
	 * cost measured at ox_sgemm_zero_count)
	 */
	bool		finish_after = j->trans_b && j->avx512 && plain;

	for (int64_t b = 0; b < nblocks; b++)
	{
		int64_t		s = n0 + (j->reverse ? nblocks - 1 - b : b) * 256,
					e = s + 256 < n1 ? s + 256 : n1;
		float	   *c = j->c;
		float	   *dst = finish ? c + s : buf;

		if (j->reverse)
		{
			/*
			 * from the top down: the dot products in slices of 16 columns (16
			 * rows of B^T, a few KB each), the sums of rows in slices of 128
			 * (each row's multiply-add waits for the row before's in the same
			 * accumulator, so a slice needs several vectors side by side:
			 * the issue 4 MLP's second layer, 512 x 512 in L2, its 267 rows
			 * of a benchmark input, 8.7 us in slices of 16, 3.7 in slices of
			 * 128 as forward in blocks of 256, 4.0 in slices of 64)
			 */
			int64_t		w = j->trans_b ? 16 : AXPY_SLICE;

			for (int64_t q = (e - s - 1) / w; q >= 0; q--)
				gemv_products(j, s + w * q, s + w * q + w < e ? s + w * q + w : e, finish, dst + w * q);
		}
		else
			gemv_products(j, s, e, finish, dst);
		if (finish)
			continue;
		if (finish_after)
		{
			ox_gemv_finish f = gemv_finish_from(u, s);

			ox_sgemm_finish_row_avx512(&f, buf, e - s, c + s);
			continue;
		}
		gemv_scale_bias(j->alpha, j->beta, u->bias, buf, s, e, c);
		if (u->clamp)
			clamp_row(c + s, e - s, u->clamp_lo, u->clamp_hi);
		if (u->post)
			u->post(u->post_arg, j->row, s, 1, e - s, c + s, 0);
	}
}

/*
 * Units [u0, u1) of a GEMV's row (ox_parallel_for's task), each unit
 * j->unit columns: one for the dot products, a sliver over packed B, and
 * a slice of AXPY_SLICE for the sums of rows, whose chunks must not end in
 * a few lone vectors (a chunk's last vectors share each row's multiply-adds
 * among fewer accumulators, and a lone vector waits four cycles a row for
 * the row before: issue 4's MLP at two threads had its 512 x 512 layer cut
 * at 143 columns, every chunk ending in a 15-column tail).
 */
static void
gemv_task(void *arg, int64_t u0, int64_t u1)
{
	gemv_job   *j = arg;
	int64_t		N = j->c_cols;

	gemv_columns(j, u0 * j->unit, u1 * j->unit < N ? u1 * j->unit : N);
}

static __thread float *tls_column;
static __thread size_t tls_column_len;

/*
 * *col = op(B)'s only column as K adjacent floats: B itself when they are
 * (stride 1), else a copy in a buffer of the calling thread
 */
static ox_code
column_of(const float *B, int64_t K, int64_t stride, ox_status *st, const float **col)
{
	float	   *copy;

	*col = B;
	if (stride == 1)
		return OX_OK;
	copy = ox_aligned_grow(&tls_column, &tls_column_len, (size_t) (K > 0 ? K : 1));
	if (!copy)
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate a GEMV buffer");
	for (int64_t k = 0; k < K; k++)
		copy[k] = B[k * stride];
	*col = copy;
	return OX_OK;
}

/*
 * One or two rows of C: packing would cost as much as the arithmetic, so
 * stream B once per row, splitting the columns across threads.  B is
 * either in place or, pb, packed ahead (then B is NULL and trans_b false):
 * a session keeps only the packed copy of a large weight (gemm.c), whose
 * slivers the packed GEMV sums like rows.
 */
static ox_code
gemv_rows(ox_kernel_ctx *ctx, const ox_sgemm_isa_desc *isa, bool trans_a, bool trans_b, int64_t M, int64_t N,
		  int64_t K, float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
		  const ox_sgemm_packed *pb, float beta, const epilogue *epi, float *C, int64_t ldc)
{
	float	   *xrow = NULL;
	int32_t    *ks = NULL;
	bool		realign;
	int64_t		grain;
	ox_sgemm_packed_view pv;

	if (pb)
	{
		pv.data = pb->data;
		pv.K = K;
		pv.nkb = kb_count(K);
		pv.npad = (N + isa->nr - 1) / isa->nr * isa->nr;
	}

	/*
	 * One column of B (a regression head [K, 1], gathered when strided) is
	 * a dot product: as a sum of rows it would be K dependent multiply-adds
	 * of one masked lane (0.31 us of a 2.9 us call of the in-query MLP).
	 */
	if (!pb && !trans_b && N == 1)
	{
		OX_TRY(column_of(B, K, ldb, ctx ? ctx->st : NULL, &B));
		trans_b = true;
		ldb = K;
	}

	/*
	 * The dot products read the row once per column of op(B): unaligned,
	 * every one of its vector loads spans two cache lines.  A feed bound in
	 * place (an array from SQL, a caller's buffer) often is; one copy costs
	 * less than that (the 784 x 512 and 512 x 512 layers of issue 4's MLP,
	 * one row at a time: 32.7 us with the row 16 bytes off, 27.0 aligned).
	 * The sums of rows read each entry of the row once, as a broadcast: a
	 * copy would only add to them.
	 */
	realign = trans_b && !trans_a && N >= 16 && K >= 64 &&
		(((uintptr_t) A & 63) != 0 || ((size_t) lda * sizeof(float)) % 64 != 0);
	if ((trans_a || realign) && K > 0)
	{
		/* gather the strided row of op(A) once */
		xrow = ox_aligned_grow(&tls_abuf, &tls_abuf_len, (size_t) K);
		if (!xrow)
			return ox_fail(ctx ? ctx->st : NULL, OX_OUT_OF_MEMORY, "could not allocate a GEMV buffer");
	}
	if (!trans_b && epi && epi->u.b_finite && K < INT32_MAX - 16)
	{
		/* room for the nonzero entries' indices, and a vector's store past them */
		ks = (int32_t *) ox_aligned_grow(&tls_nonzero, &tls_nonzero_len, (size_t) K + 16);
		if (!ks)
			return ox_fail(ctx ? ctx->st : NULL, OX_OUT_OF_MEMORY, "could not allocate a GEMV buffer");
	}
	/*
	 * enough columns per chunk that a thread streams a useful share of B
	 * (a 64-bit division is a few percent of a small model's run: only
	 * when there are threads to share it)
	 */
	grain = ctx && ctx->nthreads > 1 ? 65536 / (K + 1) + 16 : N;
	for (int64_t m = 0; m < M; m++)
	{
		gemv_job	j;

		if (trans_a)
			for (int64_t k = 0; k < K; k++)
				xrow[k] = A[k * lda + m];
		else if (realign)
			memcpy(xrow, A + m * lda, sizeof(float) * (size_t) K);
		j.trans_b = trans_b;
		j.K = K;
		j.alpha = alpha;
		j.beta = beta;
		j.x = trans_a || realign ? xrow : A + m * lda;
		j.B = B;
		j.ldb = ldb;
		j.epi = epi;
		j.row = m;
		j.c = C + m * ldc;
		j.avx512 = isa == &ox_sgemm_isa_avx512;
		/*
		 * a B well inside L2 stays there whatever the order (packed B, a
		 * large weight, always goes forward: the blocks of its slivers
		 * have no reverse loop)
		 */
		j.reverse = !pb && N * K >= ZIGZAG_MIN_FLOATS &&
			(N * K < l2_floats() || (trans_b && N * K < ONE_STREAM_MIN_FLOATS)) && zigzag_next(B);
		j.one_stream = !pb && N * K >= ONE_STREAM_MIN_FLOATS;
		j.ks = NULL;
		j.nk = K;
		if (ks)
		{
			j.ks = ks;
			j.nk = nonzero_list(j.avx512, j.x, K, ks);
		}
		j.packed = pb ? &pv : NULL;
		j.unit = pb ? isa->nr : !trans_b ? AXPY_SLICE : 1;
		j.c_cols = N;
		ox_parallel_for(ctx, (N + j.unit - 1) / j.unit, (grain + j.unit - 1) / j.unit, gemv_task, &j);
	}
	return OX_OK;
}

/*
 * A row of B's rows summed straight into C, for the GEMV a row-wise call
 * runs most: one row of A, alpha 1, no C to accumulate onto, no post
 * function, the columns on one thread.  The same kernel call and epilogue
 * as gemv_rows and gemv_task, so the same bits, without the dispatch in
 * between: after each kernel call, which streams B through L1, every
 * structure the dispatch touches is an L2 miss (the in-query MLP, run by
 * the engine alone on its table's rows: 1.69 us a row, 1.61 with this
 * path for all three of its layers).
 * The nonzero list lives on the stack, hence the bound on K.
 */
#define ROW_SUMS_MAX_K 512

/*
 * AVX-512 counts sixteen floats a compare.  Elsewhere 32-bit counts within
 * a block vectorize to a compare and a subtract per four floats; a 64-bit
 * count widened every lane first (0.5 us of a 30 us call of issue 4's MLP
 * at batch 1, over its three layers).  With AVX-512 this count and the
 * finish of the dot products (gemv_task) took 1.8% of that call instead of
 * 2.8% (perf, a Zen 4 host).
 */
int64_t
ox_sgemm_zero_count(const float *x, int64_t n)
{
	int64_t		zeros = 0;

	if (pick_isa() == &ox_sgemm_isa_avx512)
		return ox_sgemm_zero_count_avx512(x, n);
	for (int64_t i = 0; i < n;)
	{
		int64_t		e = n - i > 65536 ? i + 65536 : n;
		int32_t		z = 0;

		for (; i < e; i++)
			z += x[i] == 0.0f;
		zeros += z;
	}
	return zeros;
}

bool
ox_sgemm_row_sums(ox_kernel_ctx *ctx, int64_t N, int64_t K, const float *x, const float *B, int64_t ldb,
				  const ox_sgemm_epilogue *epi, float *y)
{
	const ox_sgemm_isa_desc *isa = pick_isa();
	int32_t		ks[ROW_SUMS_MAX_K + 16];
	int64_t		nk = K;
	bool		avx512;

	/* many columns go to threads */
	if (!isa || N < 1 || K < 1 || K > ROW_SUMS_MAX_K || epi->post || (N == 1 && ldb != 1) ||
		(ctx && ctx->nthreads > 1 && N > 65536 / (K + 1) + 16))
		return false;
	avx512 = isa == &ox_sgemm_isa_avx512;
	if (N == 1)
	{
		/* one column, a regression head: gemv_rows' dot product, then gemv_task's finish */
		float		d;

		if (avx512)
			ox_sgemm_dots_avx512(x, B, K, K, 0, 1, false, &d);
		else
			ox_sgemm_dots_avx2(x, B, K, K, 0, 1, &d);
		gemv_scale_bias(1.0f, 0.0f, epi->bias, &d, 0, 1, y);
		if (epi->clamp)
			clamp_row(y, 1, epi->clamp_lo, epi->clamp_hi);
		return true;
	}
	if (epi->b_finite)
		nk = nonzero_list(avx512, x, K, ks);
	/* a row without zeros (a first layer's input) sums every row, no list to read */
	axpy_rows(avx512, x, B, ldb, nk < K ? ks : NULL, nk, 0, N, epi, true, y);
	return true;
}

/* ---- one column of C ---------------------------------------------------- */

typedef struct column_job
{
	bool		avx512;
	const float *A;
	int64_t		lda;
	const float *b;				/* op(B)'s column, contiguous */
	int64_t		K;
	float		alpha,
				beta;
	const epilogue *epi;
	float	   *C;
	int64_t		ldc;
} column_job;

#define COLUMN_BLOCK 64

static void
column_task(void *arg, int64_t m0, int64_t m1)
{
	const column_job *j = arg;
	const ox_sgemm_epilogue *u = &j->epi->u;
	float		buf[COLUMN_BLOCK];

	for (int64_t s = m0; s < m1; s += COLUMN_BLOCK)
	{
		int64_t		e = s + COLUMN_BLOCK < m1 ? s + COLUMN_BLOCK : m1;

		/* one row at a time (one_stream): the sums of gemv_rows' dot products */
		if (j->avx512)
			ox_sgemm_dots_avx512(j->b, j->A, j->lda, j->K, s, e, true, buf);
		else
			ox_sgemm_dots_avx2(j->b, j->A, j->lda, j->K, s, e, buf);
		for (int64_t m = s; m < e; m++)
		{
			float	   *c = j->C + m * j->ldc;

			/* gemv_scale_bias and clamp_row for one column, in their order */
			gemv_scale_bias(j->alpha, j->beta, u->bias, buf + (m - s), 0, 1, c);
			if (u->clamp)
				clamp_row(c, 1, u->clamp_lo, u->clamp_hi);
		}
		if (u->post)
			u->post(u->post_arg, s, 0, e - s, 1, j->C + s * j->ldc, j->ldc);
	}
}

/*
 * C with one column (a regression or binary head, B [K, 1]): a dot product
 * per row of A.  Packed, the column would be padded to a sliver of 16 and
 * computed sixteen times over: 5% of the in-query MLP's batches of 1024
 * rows, for 0.3% of its arithmetic.  The dot products are gemv_rows', so
 * a batch agrees bit for bit with its rows run one at a time.
 */
static ox_code
column_dots(ox_kernel_ctx *ctx, const ox_sgemm_isa_desc *isa, int64_t M, int64_t K, float alpha,
			const float *A, int64_t lda, const float *B, int64_t stride, float beta,
			const epilogue *epi, float *C, int64_t ldc)
{
	column_job	j;
	const float *b;

	OX_TRY(column_of(B, K, stride, ctx ? ctx->st : NULL, &b));
	j.avx512 = isa == &ox_sgemm_isa_avx512;
	j.A = A;
	j.lda = lda;
	j.b = b;
	j.K = K;
	j.alpha = alpha;
	j.beta = beta;
	j.epi = epi;
	j.C = C;
	j.ldc = ldc;
	/* enough rows per chunk that a thread reads a useful share of A */
	ox_parallel_for(ctx, M, (int64_t) (65536 / (K + 1)) + COLUMN_BLOCK, column_task, &j);
	return OX_OK;
}

/* C = beta * C (+ bias): the product is empty, scaled away, or made by BLAS after */
static void
scale_c(int64_t M, int64_t N, float beta, const float *bias, float *C, int64_t ldc)
{
	for (int64_t m = 0; m < M; m++)
		for (int64_t n = 0; n < N; n++)
			C[m * ldc + n] = (beta == 0.0f ? 0.0f : beta * C[m * ldc + n]) + (bias ? bias[n] : 0.0f);
}

/* the caller's clamp and post function over all of C, a row at a time */
static void
post_all(const epilogue *epi, int64_t M, int64_t N, float *C, int64_t ldc)
{
	const ox_sgemm_epilogue *u = &epi->u;

	if (u->clamp)
		for (int64_t m = 0; m < M; m++)
			clamp_row(C + m * ldc, N, u->clamp_lo, u->clamp_hi);
	if (u->post)
		for (int64_t m = 0; m < M; m++)
			u->post(u->post_arg, m, 0, 1, N, C + m * ldc, ldc);
}

/*
 * The entry point of every form.  pa / pb, when given, hold A / B packed
 * ahead of time (constant weights); the matching A / B arguments are then
 * unused.  bias, when given, is added to every row of C.
 */
static ox_code
gemm_driver(ox_kernel_ctx *ctx, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
			float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
			float beta, float *C, int64_t ldc, const ox_sgemm_packed *pa, const ox_sgemm_packed *pb,
			const ox_sgemm_epilogue *user)
{
	/* packed operands are in the layout of the kernels they were packed for */
	const ox_sgemm_isa_desc *isa = pb ? pb->isa : (pa ? pa->isa : pick_isa());
	int			threads = ctx ? ctx->nthreads : 1;
	epilogue	epi;

	memset(&epi, 0, sizeof(epi));
	if (user)
	{
		epi.u = *user;
	}
	if (M <= 0 || N <= 0)
		return OX_OK;
	if (K <= 0 || alpha == 0.0f)
	{
		scale_c(M, N, beta, epi.u.bias, C, ldc);
		post_all(&epi, M, N, C, ldc);
		return OX_OK;
	}
	if (!isa)
	{
		if (epi.u.bias)
		{
			scale_c(M, N, beta, epi.u.bias, C, ldc);
			beta = 1.0f;
		}
		cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
					(int) M, (int) N, (int) K, alpha, A, (int) lda, B, (int) ldb, beta, C, (int) ldc);
		post_all(&epi, M, N, C, ldc);
		return OX_OK;
	}
	if (N == 1 && M > 2 && !trans_a && !pa && !pb)
		return column_dots(ctx, isa, M, K, alpha, A, lda, B, trans_b ? 1 : ldb, beta, &epi, C, ldc);
	/* one or two rows: packing would cost as much as the arithmetic */
	if (M <= 2 && !pa)
		return gemv_rows(ctx, isa, trans_a, pb ? false : trans_b, M, N, K, alpha, A, lda, pb ? NULL : B, ldb,
						 pb, beta, &epi, C, ldc);

	if (pb)
	{
		bview		bv;

		bv.data = pb->data;
		bv.npad = (N + isa->nr - 1) / isa->nr * isa->nr;
		return run_packed(ctx, isa, trans_a, M, N, K, alpha, A, lda, pa, &bv, beta, &epi, C, ldc);
	}

	/*
	 * B packed now, in column chunks small enough for a buffer of the
	 * calling thread (one chunk for everything but huge B).
	 */
	{
		int64_t		nkb = kb_count(K);
		int64_t		chunk = BPACK_MAX_FLOATS / K / isa->nr * isa->nr;

		if (chunk < isa->nr * NC_SLIVERS)
			chunk = isa->nr * NC_SLIVERS;
		for (int64_t j0 = 0; j0 < N; j0 += chunk)
		{
			int64_t		n = N - j0 < chunk ? N - j0 : chunk;
			int64_t		nslivers = (n + isa->nr - 1) / isa->nr;
			float	   *buf = ox_aligned_grow(&tls_bbuf, &tls_bbuf_len, (size_t) nslivers * isa->nr * K);
			bpack_job	bj;
			bview		bv;

			if (!buf)
				return ox_fail(ctx ? ctx->st : NULL, OX_OUT_OF_MEMORY,
							   "could not allocate %zu bytes for matrix packing",
							   (size_t) nslivers * isa->nr * K * sizeof(float));
			bj.isa = isa;
			bj.trans_b = trans_b;
			bj.B = B;
			bj.ldb = ldb;
			bj.K = K;
			bj.nkb = nkb;
			bj.j0 = j0;
			bj.N = n;
			bj.nslivers = nslivers;
			bj.dst = buf;
			/*
			 * packing is cheap next to the product: only split big ones;
			 * but a big B is packed in polled slices on one thread too (a
			 * 32 MB chunk took 23 ms unpolled, its buffer first touched)
			 */
			if ((threads > 1 && M * n * K >= (int64_t) 1 << 22) ||
				(ctx && ctx->should_abort && n * K >= (int64_t) 1 << 20))
				ox_parallel_for(ctx, nkb * nslivers, 4, bpack_task, &bj);
			else
				bpack_task(&bj, 0, nkb * nslivers);
			bv.data = buf;
			bv.npad = nslivers * isa->nr;
			{
				epilogue	part = epi;

				part.u.bias = epi.u.bias ? epi.u.bias + j0 : NULL;
				part.col0 = j0;
				OX_TRY(run_packed(ctx, isa, trans_a, M, n, K, alpha, A, lda, pa, &bv, beta, &part,
								  C + j0, ldc));
			}
		}
	}
	return OX_OK;
}

ox_code
ox_sgemm(ox_kernel_ctx *ctx, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
		 float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
		 float beta, float *C, int64_t ldc)
{
	return gemm_driver(ctx, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
					   NULL, NULL, NULL);
}

ox_code
ox_sgemm_ex(ox_kernel_ctx *ctx, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
			float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
			float beta, float *C, int64_t ldc, const ox_sgemm_epilogue *epi)
{
	return gemm_driver(ctx, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
					   NULL, NULL, epi);
}

/* ---- packing ahead of time -------------------------------------------- */

/* lasting: kept for the session (ox_aligned_alloc_huge), else for a run */
static ox_sgemm_packed *
packed_new(const ox_sgemm_isa_desc *isa, bool is_a, int64_t rows, int64_t cols, bool lasting, ox_status *st)
{
	ox_sgemm_packed *p = calloc(1, sizeof(*p));
	int64_t		unit = is_a ? isa->mr : isa->nr;
	int64_t		other = is_a ? rows : cols;
	int64_t		kdim = is_a ? cols : rows;

	if (!p)
		goto oom;
	p->isa = isa;
	p->is_a = is_a;
	p->rows = rows;
	p->cols = cols;
	p->bytes = (size_t) ((other + unit - 1) / unit) * unit * kdim * sizeof(float);
	p->data = lasting ? ox_aligned_alloc_huge(p->bytes) : ox_aligned_alloc(p->bytes);
	if (!p->data)
		goto oom;
	return p;
oom:
	ox_sgemm_packed_free(p);
	ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate a packed weight matrix");
	return NULL;
}

static ox_sgemm_packed *
pack_b_for(bool trans_b, int64_t K, int64_t N, const float *B, int64_t ldb, bool lasting, ox_status *st)
{
	const ox_sgemm_isa_desc *isa = pick_isa();
	ox_sgemm_packed *p;
	bpack_job	bj;

	if (!isa || K <= 0 || N <= 0)
		return NULL;
	if (!(p = packed_new(isa, false, K, N, lasting, st)))
		return NULL;
	bj.isa = isa;
	bj.trans_b = trans_b;
	bj.B = B;
	bj.ldb = ldb;
	bj.K = K;
	bj.nkb = kb_count(K);
	bj.j0 = 0;
	bj.N = N;
	bj.nslivers = (N + isa->nr - 1) / isa->nr;
	bj.dst = p->data;
	bpack_task(&bj, 0, bj.nkb * bj.nslivers);
	return p;
}

ox_sgemm_packed *
ox_sgemm_pack_b(bool trans_b, int64_t K, int64_t N, const float *B, int64_t ldb, ox_status *st)
{
	return pack_b_for(trans_b, K, N, B, ldb, true, st);
}

ox_sgemm_packed *
ox_sgemm_pack_b_transient(bool trans_b, int64_t K, int64_t N, const float *B, int64_t ldb, ox_status *st)
{
	return pack_b_for(trans_b, K, N, B, ldb, false, st);
}

ox_sgemm_packed *
ox_sgemm_pack_a(bool trans_a, int64_t M, int64_t K, const float *A, int64_t lda, ox_status *st)
{
	const ox_sgemm_isa_desc *isa = pick_isa();
	ox_sgemm_packed *p;
	row_plan	rp;
	int64_t		nkb = kb_count(K);

	if (!isa || K <= 0 || M <= 0)
		return NULL;
	if (!(p = packed_new(isa, true, M, K, true, st)))
		return NULL;
	rp = plan_rows(isa, M);
	for (int64_t rb = 0; rb < rp.blocks; rb++)
	{
		int64_t		s0 = rb_sliver(&rp, rb),
					s1 = rb_sliver(&rp, rb + 1);
		int64_t		row0 = s0 * isa->mr;
		int64_t		rows = (s1 * isa->mr < M ? s1 * isa->mr : M) - row0;
		float	   *block = p->data + row0 * K;

		for (int64_t kb = 0; kb < nkb; kb++)
		{
			int64_t		k0 = kb_start(K, nkb, kb);

			pack_a(isa, trans_a, A, lda, row0, rows, k0, kb_start(K, nkb, kb + 1) - k0,
				   block + k0 * (s1 - s0) * isa->mr);
		}
	}
	return p;
}

void
ox_sgemm_packed_free(ox_sgemm_packed *p)
{
	if (!p)
		return;
	ox_aligned_free(p->data);
	free(p);
}

size_t
ox_sgemm_packed_bytes(const ox_sgemm_packed *p)
{
	return p ? p->bytes : 0;
}

ox_code
ox_sgemm_packed_b(ox_kernel_ctx *ctx, bool trans_a, int64_t M, float alpha, const float *A, int64_t lda,
				  const ox_sgemm_packed *pb, float beta, float *C, int64_t ldc)
{
	return gemm_driver(ctx, trans_a, false, M, pb->cols, pb->rows, alpha, A, lda, NULL, 0,
					   beta, C, ldc, NULL, pb, NULL);
}

ox_code
ox_sgemm_packed_b_ex(ox_kernel_ctx *ctx, bool trans_a, int64_t M, float alpha, const float *A,
					 int64_t lda, const ox_sgemm_packed *pb, float beta, float *C, int64_t ldc,
					 const ox_sgemm_epilogue *epi)
{
	return gemm_driver(ctx, trans_a, false, M, pb->cols, pb->rows, alpha, A, lda, NULL, 0,
					   beta, C, ldc, NULL, pb, epi);
}

ox_code
ox_sgemm_packed_a(ox_kernel_ctx *ctx, const ox_sgemm_packed *pa, int64_t N, float alpha, bool trans_b,
				  const float *B, int64_t ldb, float beta, float *C, int64_t ldc)
{
	return gemm_driver(ctx, false, trans_b, pa->rows, N, pa->cols, alpha, NULL, 0, B, ldb,
					   beta, C, ldc, pa, NULL, NULL);
}
