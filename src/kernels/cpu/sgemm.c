/*
 * sgemm.c
 *	  Blocked SGEMM (BLIS-style loop nest): B is packed into KC x NR
 *	  slivers, A into MR x KC slivers, and a register-blocked micro-kernel
 *	  computes MR x NR tiles of C.  Edge tiles go through a small buffer so
 *	  the micro-kernel never reads or writes outside C.
 *
 *	  Threading: the loop over MC blocks of rows (each thread packs its own
 *	  A block) when there are enough of them, else the loop over NR slivers
 *	  of the packed B.  Pack buffers are thread-local and kept between calls,
 *	  so steady-state calls allocate nothing.
 */
#include "kernels/cpu/sgemm.h"

#include <cblas.h>
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

/* depth of a packed panel: a KC x NR sliver of B (32 KiB) stays in L1 */
#define KC 256

typedef void (*ukernel_fn) (int64_t k, const float *a, const float *b, float *c, int64_t ldc,
							float alpha, float beta);

typedef struct isa_desc
{
	const char *name;
	int			mr;
	int			nr;
	int			mc;
	int			nc;
	ukernel_fn	kernel;
} isa_desc;

/* ---- micro-kernels ---------------------------------------------------- */

#define UK_AVX512_MR 12
#define UK_AVX512_NR 32

__attribute__((target("avx512f,fma")))
static void
ukernel_avx512(int64_t k, const float *a, const float *b, float *c, int64_t ldc, float alpha, float beta)
{
	__m512		acc0[UK_AVX512_MR];
	__m512		acc1[UK_AVX512_MR];

#pragma GCC unroll 12
	for (int r = 0; r < UK_AVX512_MR; r++)
	{
		acc0[r] = _mm512_setzero_ps();
		acc1[r] = _mm512_setzero_ps();
	}
	for (int64_t p = 0; p < k; p++)
	{
		__m512		b0 = _mm512_load_ps(b);
		__m512		b1 = _mm512_load_ps(b + 16);

#pragma GCC unroll 12
		for (int r = 0; r < UK_AVX512_MR; r++)
		{
			__m512		av = _mm512_set1_ps(a[r]);

			acc0[r] = _mm512_fmadd_ps(av, b0, acc0[r]);
			acc1[r] = _mm512_fmadd_ps(av, b1, acc1[r]);
		}
		a += UK_AVX512_MR;
		b += UK_AVX512_NR;
	}
	{
		__m512		va = _mm512_set1_ps(alpha);

#pragma GCC unroll 12
		for (int r = 0; r < UK_AVX512_MR; r++)
		{
			float	   *cr = c + r * ldc;
			__m512		r0 = _mm512_mul_ps(acc0[r], va);
			__m512		r1 = _mm512_mul_ps(acc1[r], va);

			if (beta != 0.0f)
			{
				__m512		vb = _mm512_set1_ps(beta);

				r0 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(cr), r0);
				r1 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(cr + 16), r1);
			}
			_mm512_storeu_ps(cr, r0);
			_mm512_storeu_ps(cr + 16, r1);
		}
	}
}

#define UK_AVX2_MR 6
#define UK_AVX2_NR 16

__attribute__((target("avx2,fma")))
static void
ukernel_avx2(int64_t k, const float *a, const float *b, float *c, int64_t ldc, float alpha, float beta)
{
	__m256		acc0[UK_AVX2_MR];
	__m256		acc1[UK_AVX2_MR];

#pragma GCC unroll 6
	for (int r = 0; r < UK_AVX2_MR; r++)
	{
		acc0[r] = _mm256_setzero_ps();
		acc1[r] = _mm256_setzero_ps();
	}
	for (int64_t p = 0; p < k; p++)
	{
		__m256		b0 = _mm256_load_ps(b);
		__m256		b1 = _mm256_load_ps(b + 8);

#pragma GCC unroll 6
		for (int r = 0; r < UK_AVX2_MR; r++)
		{
			__m256		av = _mm256_broadcast_ss(a + r);

			acc0[r] = _mm256_fmadd_ps(av, b0, acc0[r]);
			acc1[r] = _mm256_fmadd_ps(av, b1, acc1[r]);
		}
		a += UK_AVX2_MR;
		b += UK_AVX2_NR;
	}
	{
		__m256		va = _mm256_set1_ps(alpha);

#pragma GCC unroll 6
		for (int r = 0; r < UK_AVX2_MR; r++)
		{
			float	   *cr = c + r * ldc;
			__m256		r0 = _mm256_mul_ps(acc0[r], va);
			__m256		r1 = _mm256_mul_ps(acc1[r], va);

			if (beta != 0.0f)
			{
				__m256		vb = _mm256_set1_ps(beta);

				r0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(cr), r0);
				r1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(cr + 8), r1);
			}
			_mm256_storeu_ps(cr, r0);
			_mm256_storeu_ps(cr + 8, r1);
		}
	}
}

static const isa_desc isa_avx512 = {"avx512", UK_AVX512_MR, UK_AVX512_NR, UK_AVX512_MR * 16, UK_AVX512_NR * 64, ukernel_avx512};
static const isa_desc isa_avx2 = {"avx2", UK_AVX2_MR, UK_AVX2_NR, UK_AVX2_MR * 24, UK_AVX2_NR * 128, ukernel_avx2};

static const isa_desc *
pick_isa(void)
{
	static const isa_desc *chosen;
	static bool done;

	if (!done)
	{
		__builtin_cpu_init();
		if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma"))
			chosen = &isa_avx512;
		else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
			chosen = &isa_avx2;
		else
			chosen = NULL;
		done = true;
	}
	return chosen;
}

const char *
ox_sgemm_isa(void)
{
	const isa_desc *isa = pick_isa();

	return isa ? isa->name : "blas";
}

/* ---- packing ---------------------------------------------------------- */

/* A block rows [i0, i0+mc), depth [p0, p0+kc) into MR-row slivers, zero padded */
static void
pack_a(const isa_desc *isa, bool trans_a, const float *A, int64_t lda, int64_t i0, int64_t mc,
	   int64_t p0, int64_t kc, float *dst)
{
	int			mr = isa->mr;

	for (int64_t i = 0; i < mc; i += mr)
	{
		int64_t		rows = mc - i < mr ? mc - i : mr;

		for (int64_t p = 0; p < kc; p++)
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

/* B block depth [p0, p0+kc), columns [j0, j0+nc) into NR-column slivers */
static void
pack_b(const isa_desc *isa, bool trans_b, const float *B, int64_t ldb, int64_t p0, int64_t kc,
	   int64_t j0, int64_t nc, float *dst)
{
	int			nr = isa->nr;

	for (int64_t j = 0; j < nc; j += nr)
	{
		int64_t		cols = nc - j < nr ? nc - j : nr;

		for (int64_t p = 0; p < kc; p++)
		{
			int64_t		c = 0;

			if (!trans_b)
			{
				memcpy(dst, B + (p0 + p) * ldb + j0 + j, sizeof(float) * cols);
				c = cols;
			}
			else
			{
				const float *src = B + (j0 + j) * ldb + p0 + p;

				for (; c < cols; c++)
					dst[c] = src[c * ldb];
			}
			for (; c < nr; c++)
				dst[c] = 0.0f;
			dst += nr;
		}
	}
}

/* thread-local pack buffers, grown on demand and kept */
static __thread float *tls_abuf;
static __thread size_t tls_abuf_len;

static float *
thread_abuf(size_t floats)
{
	if (tls_abuf_len < floats)
	{
		ox_aligned_free(tls_abuf);
		tls_abuf = ox_aligned_alloc(floats * sizeof(float));
		tls_abuf_len = tls_abuf ? floats : 0;
	}
	return tls_abuf;
}

/* per calling thread: a GEMM called inside a parallel loop of another kernel
 * must not share it */
static __thread float *shared_bbuf;
static __thread size_t shared_bbuf_len;

/* ---- the loop nest ---------------------------------------------------- */

typedef struct gemm_job
{
	const isa_desc *isa;
	bool		trans_a;
	const float *A;
	int64_t		lda;
	float	   *C;
	int64_t		ldc;
	int64_t		M;
	int64_t		jc,
				nc,
				pc,
				kc;
	float		alpha,
				beta;
	const float *bpack;
	const float *apack;			/* shared packed A (sliver-parallel mode) */
	int64_t		ic,
				mc;				/* the block apack holds */
	const ox_sgemm_packed *pa;	/* A packed ahead of time, or NULL */
	int64_t		pb_index;		/* K block index, to find pa's panels */
	bool		oom;
} gemm_job;

struct ox_sgemm_packed
{
	const isa_desc *isa;
	bool		is_a;
	int64_t		rows;			/* M for A, K for B */
	int64_t		cols;			/* K for A, N for B */
	int64_t		n_outer;		/* A: K blocks; B: N blocks */
	int64_t		n_inner;		/* A: M blocks; B: K blocks */
	size_t	   *off;			/* panel offsets, [outer * n_inner + inner] */
	float	   *data;
	size_t		bytes;
};

static const float *
packed_a_panel(const ox_sgemm_packed *pa, int64_t pb, int64_t ib)
{
	return pa->data + pa->off[pb * pa->n_inner + ib];
}

static void
macro_tile(const gemm_job *j, const float *ap, int64_t ic, int64_t mc, int64_t jr_begin, int64_t jr_end)
{
	const isa_desc *isa = j->isa;
	int			mr = isa->mr,
				nr = isa->nr;
	_Alignas(64) float edge[UK_AVX512_MR * UK_AVX512_NR];

	for (int64_t jr = jr_begin; jr < jr_end; jr++)
	{
		int64_t		col = jr * nr;
		int64_t		cols = j->nc - col < nr ? j->nc - col : nr;
		const float *bp = j->bpack + jr * nr * j->kc;

		for (int64_t ir = 0; ir < mc; ir += mr)
		{
			int64_t		rows = mc - ir < mr ? mc - ir : mr;
			const float *a = ap + ir * j->kc;
			float	   *c = j->C + (ic + ir) * j->ldc + j->jc + col;

			if (rows == mr && cols == nr)
				isa->kernel(j->kc, a, bp, c, j->ldc, j->alpha, j->beta);
			else
			{
				isa->kernel(j->kc, a, bp, edge, nr, j->alpha, 0.0f);
				for (int64_t r = 0; r < rows; r++)
					for (int64_t q = 0; q < cols; q++)
						c[r * j->ldc + q] = edge[r * nr + q] +
							(j->beta != 0.0f ? j->beta * c[r * j->ldc + q] : 0.0f);
			}
		}
	}
}

static void
row_block_task(void *arg, int64_t begin, int64_t end)
{
	gemm_job   *j = arg;
	const isa_desc *isa = j->isa;
	float	   *ap = j->pa ? NULL : thread_abuf((size_t) isa->mc * KC);

	if (!j->pa && !ap)
	{
		j->oom = true;
		return;
	}
	for (int64_t b = begin; b < end; b++)
	{
		int64_t		ic = b * isa->mc;
		int64_t		mc = j->M - ic < isa->mc ? j->M - ic : isa->mc;

		if (j->pa)
			macro_tile(j, packed_a_panel(j->pa, j->pb_index, b), ic, mc, 0,
					   (j->nc + isa->nr - 1) / isa->nr);
		else
		{
			pack_a(isa, j->trans_a, j->A, j->lda, ic, mc, j->pc, j->kc, ap);
			macro_tile(j, ap, ic, mc, 0, (j->nc + isa->nr - 1) / isa->nr);
		}
	}
}

static void
sliver_task(void *arg, int64_t begin, int64_t end)
{
	gemm_job   *j = arg;

	macro_tile(j, j->apack, j->ic, j->mc, begin, end);
}

/*
 * Dot products of one row x (length K, contiguous) with rows of B (each
 * contiguous, ldb apart): the small-M case of op(B) = B^T, which is how
 * Linear layers store weights.  Four rows at a time share the loads of x;
 * several accumulators keep the FMA pipes busy (a plain loop would be
 * scalar: the compiler may not reorder a float reduction).
 */
__attribute__((target("avx512f,fma")))
static void
dots_avx512(const float *x, const float *B, int64_t ldb, int64_t K, int64_t n0, int64_t n1,
			float *out)
{
	int64_t		n = n0;

	for (; n + 4 <= n1; n += 4)
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
	{
		const float *b = B + n * ldb;
		__m512		s0 = _mm512_setzero_ps();
		int64_t		k = 0;

		for (; k + 16 <= K; k += 16)
			s0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + k), _mm512_loadu_ps(b + k), s0);
		if (k < K)
		{
			__mmask16	m = (__mmask16) ((1u << (K - k)) - 1);

			s0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x + k), _mm512_maskz_loadu_ps(m, b + k), s0);
		}
		out[n - n0] = _mm512_reduce_add_ps(s0);
	}
}

__attribute__((target("avx2,fma")))
static void
dots_avx2(const float *x, const float *B, int64_t ldb, int64_t K, int64_t n0, int64_t n1, float *out)
{
	for (int64_t n = n0; n < n1; n++)
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

typedef struct gemv_job
{
	bool		trans_a;
	bool		trans_b;
	int64_t		K;
	float		alpha,
				beta;
	const float *x;				/* the row of op(A), contiguous */
	const float *B;
	int64_t		ldb;
	float	   *c;
	bool		avx512;
} gemv_job;

static void
gemv_task(void *arg, int64_t n0, int64_t n1)
{
	gemv_job   *j = arg;
	float		buf[256];

	for (int64_t s = n0; s < n1; s += 256)
	{
		int64_t		e = s + 256 < n1 ? s + 256 : n1;

		if (j->trans_b)
		{
			if (j->avx512)
				dots_avx512(j->x, j->B, j->ldb, j->K, s, e, buf);
			else
				dots_avx2(j->x, j->B, j->ldb, j->K, s, e, buf);
			for (int64_t n = s; n < e; n++)
				j->c[n] = j->alpha * buf[n - s] + (j->beta != 0.0f ? j->beta * j->c[n] : 0.0f);
		}
		else
		{
			/* c = beta*c + sum_k x[k] * B[k, :]: vectorizes over n as written */
			float	   *c = j->c;

			for (int64_t n = s; n < e; n++)
				c[n] = j->beta == 0.0f ? 0.0f : j->beta * c[n];
			for (int64_t k = 0; k < j->K; k++)
			{
				float		a = j->alpha * j->x[k];
				const float *b = j->B + k * j->ldb;

				if (a == 0.0f)
					continue;
				for (int64_t n = s; n < e; n++)
					c[n] += a * b[n];
			}
		}
	}
}

/*
 * One or two rows of C: packing would cost as much as the arithmetic, so
 * stream B once per row, splitting the columns across threads.
 */
static ox_code
gemv_rows(ox_kernel_ctx *ctx, const isa_desc *isa, bool trans_a, bool trans_b, int64_t M, int64_t N,
		  int64_t K, float alpha, const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
		  float *C, int64_t ldc)
{
	float	   *xrow = NULL;

	if (trans_a && K > 0)
	{
		/* gather the strided row of op(A) once */
		xrow = thread_abuf((size_t) K);
		if (!xrow)
			return ox_fail(ctx ? ctx->st : NULL, OX_OUT_OF_MEMORY, "could not allocate a GEMV buffer");
	}
	for (int64_t m = 0; m < M; m++)
	{
		gemv_job	j;

		if (trans_a)
			for (int64_t k = 0; k < K; k++)
				xrow[k] = A[k * lda + m];
		j.trans_a = trans_a;
		j.trans_b = trans_b;
		j.K = K;
		j.alpha = alpha;
		j.beta = beta;
		j.x = trans_a ? xrow : A + m * lda;
		j.B = B;
		j.ldb = ldb;
		j.c = C + m * ldc;
		j.avx512 = isa == &isa_avx512;
		/* enough columns per chunk that a thread streams a useful share of B */
		ox_parallel_for(ctx, N, (int64_t) (65536 / (K + 1)) + 16, gemv_task, &j);
	}
	return OX_OK;
}

/*
 * The loop nest.  pa / pb, when given, hold A / B packed ahead of time
 * (constant weights); the matching A / B arguments are then unused.
 */
static ox_code
gemm_driver(ox_kernel_ctx *ctx, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
			float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
			float beta, float *C, int64_t ldc, const ox_sgemm_packed *pa, const ox_sgemm_packed *pb)
{
	const isa_desc *isa = pick_isa();
	int			threads = ctx ? ctx->nthreads : 1;

	if (M <= 0 || N <= 0)
		return OX_OK;
	if (K <= 0 || alpha == 0.0f)
	{
		for (int64_t m = 0; m < M; m++)
			for (int64_t n = 0; n < N; n++)
				C[m * ldc + n] = beta == 0.0f ? 0.0f : beta * C[m * ldc + n];
		return OX_OK;
	}
	if (!isa)
	{
		cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
					(int) M, (int) N, (int) K, alpha, A, (int) lda, B, (int) ldb, beta, C, (int) ldc);
		return OX_OK;
	}
	/* one or two rows: packing would cost as much as the arithmetic */
	if (M <= 2 && !pa && !pb)
		return gemv_rows(ctx, isa, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);

	for (int64_t jc = 0; jc < N; jc += isa->nc)
	{
		int64_t		nc = N - jc < isa->nc ? N - jc : isa->nc;
		int64_t		slivers = (nc + isa->nr - 1) / isa->nr;
		size_t		bneed = (size_t) slivers * isa->nr * KC;

		for (int64_t pc = 0; pc < K; pc += KC)
		{
			int64_t		kc = K - pc < KC ? K - pc : KC;
			gemm_job	job;
			int64_t		row_blocks = (M + isa->mc - 1) / isa->mc;
			const float *bpanel;

			if (pb)
				bpanel = pb->data + pb->off[(jc / isa->nc) * pb->n_inner + pc / KC];
			else if (shared_bbuf_len < bneed)
			{
				ox_aligned_free(shared_bbuf);
				shared_bbuf = ox_aligned_alloc(bneed * sizeof(float));
				shared_bbuf_len = shared_bbuf ? bneed : 0;
				if (!shared_bbuf)
					return ox_fail(ctx ? ctx->st : NULL, OX_OUT_OF_MEMORY,
								   "could not allocate %zu bytes for matrix packing", bneed * sizeof(float));
			}
			if (!pb)
			{
				pack_b(isa, trans_b, B, ldb, pc, kc, jc, nc, shared_bbuf);
				bpanel = shared_bbuf;
			}
			memset(&job, 0, sizeof(job));
			job.isa = isa;
			job.trans_a = trans_a;
			job.A = A;
			job.lda = lda;
			job.C = C;
			job.ldc = ldc;
			job.M = M;
			job.jc = jc;
			job.nc = nc;
			job.pc = pc;
			job.kc = kc;
			job.alpha = alpha;
			job.beta = pc == 0 ? beta : 1.0f;
			job.bpack = bpanel;
			job.pa = pa;
			job.pb_index = pc / KC;
			if (row_blocks >= threads || slivers < 2)
				ox_parallel_for(ctx, row_blocks, 1, row_block_task, &job);
			else
			{
				float	   *ap = pa ? NULL : thread_abuf((size_t) isa->mc * KC);

				for (int64_t ic = 0; (pa || ap) && ic < M; ic += isa->mc)
				{
					job.ic = ic;
					job.mc = M - ic < isa->mc ? M - ic : isa->mc;
					if (pa)
						job.apack = packed_a_panel(pa, pc / KC, ic / isa->mc);
					else
					{
						pack_a(isa, trans_a, A, lda, ic, job.mc, pc, kc, ap);
						job.apack = ap;
					}
					ox_parallel_for(ctx, slivers, 1, sliver_task, &job);
				}
				if (!pa && !ap)
					job.oom = true;
			}
			/* a thread could not get its pack buffer: C is incomplete */
			if (job.oom)
				return ox_fail(ctx ? ctx->st : NULL, OX_OUT_OF_MEMORY,
							   "could not allocate a matrix packing buffer");
		}
	}
	return OX_OK;
}

ox_code
ox_sgemm(ox_kernel_ctx *ctx, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
		 float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
		 float beta, float *C, int64_t ldc)
{
	return gemm_driver(ctx, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, NULL, NULL);
}

/* ---- packing ahead of time -------------------------------------------- */

static ox_sgemm_packed *
packed_new(const isa_desc *isa, bool is_a, int64_t rows, int64_t cols, ox_status *st)
{
	ox_sgemm_packed *p = calloc(1, sizeof(*p));
	int64_t		kdim = is_a ? cols : rows;
	int64_t		other = is_a ? rows : cols;
	int64_t		blk = is_a ? isa->mc : isa->nc;
	int64_t		unit = is_a ? isa->mr : isa->nr;
	size_t		total = 0;

	if (!p)
		goto oom;
	p->isa = isa;
	p->is_a = is_a;
	p->rows = rows;
	p->cols = cols;
	if (is_a)
	{
		p->n_outer = (kdim + KC - 1) / KC;
		p->n_inner = (other + blk - 1) / blk;
	}
	else
	{
		p->n_outer = (other + blk - 1) / blk;
		p->n_inner = (kdim + KC - 1) / KC;
	}
	p->off = calloc((size_t) (p->n_outer * p->n_inner + 1), sizeof(size_t));
	if (!p->off)
		goto oom;
	for (int64_t o = 0; o < p->n_outer; o++)
		for (int64_t i = 0; i < p->n_inner; i++)
		{
			int64_t		kb = is_a ? o : i;
			int64_t		ob = is_a ? i : o;
			int64_t		kc = kdim - kb * KC < KC ? kdim - kb * KC : KC;
			int64_t		len = other - ob * blk < blk ? other - ob * blk : blk;

			p->off[o * p->n_inner + i] = total;
			total += (size_t) ((len + unit - 1) / unit) * unit * kc;
		}
	p->bytes = total * sizeof(float);
	p->data = ox_aligned_alloc(p->bytes);
	if (!p->data)
		goto oom;
	return p;
oom:
	ox_sgemm_packed_free(p);
	ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate a packed weight matrix");
	return NULL;
}

ox_sgemm_packed *
ox_sgemm_pack_b(bool trans_b, int64_t K, int64_t N, const float *B, int64_t ldb, ox_status *st)
{
	const isa_desc *isa = pick_isa();
	ox_sgemm_packed *p;

	if (!isa || K <= 0 || N <= 0)
		return NULL;
	if (!(p = packed_new(isa, false, K, N, st)))
		return NULL;
	for (int64_t o = 0; o < p->n_outer; o++)
		for (int64_t i = 0; i < p->n_inner; i++)
		{
			int64_t		jc = o * isa->nc,
						pc = i * KC;

			pack_b(isa, trans_b, B, ldb, pc, K - pc < KC ? K - pc : KC, jc,
				   N - jc < isa->nc ? N - jc : isa->nc, p->data + p->off[o * p->n_inner + i]);
		}
	return p;
}

ox_sgemm_packed *
ox_sgemm_pack_a(bool trans_a, int64_t M, int64_t K, const float *A, int64_t lda, ox_status *st)
{
	const isa_desc *isa = pick_isa();
	ox_sgemm_packed *p;

	if (!isa || K <= 0 || M <= 0)
		return NULL;
	if (!(p = packed_new(isa, true, M, K, st)))
		return NULL;
	for (int64_t o = 0; o < p->n_outer; o++)
		for (int64_t i = 0; i < p->n_inner; i++)
		{
			int64_t		pc = o * KC,
						ic = i * isa->mc;

			pack_a(isa, trans_a, A, lda, ic, M - ic < isa->mc ? M - ic : isa->mc, pc,
				   K - pc < KC ? K - pc : KC, p->data + p->off[o * p->n_inner + i]);
		}
	return p;
}

void
ox_sgemm_packed_free(ox_sgemm_packed *p)
{
	if (!p)
		return;
	free(p->off);
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
					   beta, C, ldc, NULL, pb);
}

ox_code
ox_sgemm_packed_a(ox_kernel_ctx *ctx, const ox_sgemm_packed *pa, int64_t N, float alpha, bool trans_b,
				  const float *B, int64_t ldb, float beta, float *C, int64_t ldc)
{
	return gemm_driver(ctx, false, trans_b, pa->rows, N, pa->cols, alpha, NULL, 0, B, ldb,
					   beta, C, ldc, pa, NULL);
}
