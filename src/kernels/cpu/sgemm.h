/*
 * sgemm.h
 *	  Single-precision GEMM of our own: C = alpha * op(A) * op(B) + beta * C,
 *	  row-major, with AVX-512 and AVX2 micro-kernels chosen at start-up by
 *	  cpuid, matrix-vector paths for small M, and the intra-op thread pool.
 *	  Machines without AVX2 fall back to the system BLAS.
 *
 * Why not only OpenBLAS: the distribution's OpenBLAS picks its kernels from
 * a CPU model table, and on processors newer than its table it silently
 * falls back to a generic SSE3 core several times slower; our kernels key
 * on instruction-set features instead.
 */
#ifndef OX_SGEMM_H
#define OX_SGEMM_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/kernel.h"

/*
 * op(A) is M x K: A itself (lda >= K) or, with trans_a, the transpose of a
 * K x M matrix (lda >= M).  op(B) is K x N likewise.  C is M x N (ldc >= N).
 * beta == 0 means C is not read (it may hold garbage, even NaN).
 * ctx supplies the thread count (NULL = one thread) and the status that an
 * out-of-memory failure (packing buffers) is reported in; C is then garbage.
 */
ox_code		ox_sgemm(ox_kernel_ctx *ctx, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
					 float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
					 float beta, float *C, int64_t ldc);

/*
 * What to do to C besides the product, while it is in cache:
 * C = alpha * op(A) * op(B) + beta * C + bias (bias[N] added to every row),
 * then post(post_arg, ...) on each block of C as soon as it is final:
 * rows [row0, row0 + rows) and columns [col0, col0 + cols) of C, at c with
 * leading dimension ldc.  post runs on the intra-op threads (pure
 * computation only), on disjoint blocks that together cover C once.
 */
typedef void (*ox_sgemm_post_fn) (void *arg, int64_t row0, int64_t col0, int64_t rows, int64_t cols,
								  float *c, int64_t ldc);

typedef struct ox_sgemm_epilogue
{
	const float *bias;			/* or NULL */
	/*
	 * clamp: C = min(max(C, clamp_lo), clamp_hi) once C is final, before
	 * post, in the micro-kernel's registers (Relu: 0 and +inf; Clip).  NaN
	 * stays NaN, as in the standalone Relu and Clip.
	 */
	bool		clamp;
	float		clamp_lo,
				clamp_hi;
	ox_sgemm_post_fn post;		/* or NULL */
	void	   *post_arg;
	/*
	 * B holds no infinity or NaN (a constant the caller checked): a GEMV
	 * that sums x[k] * B[k, :] may skip the rows of B where x[k] is 0, the
	 * ReLU zeros before a layer (0 * inf would be NaN).  Results are the
	 * same but for the sign of an exact zero.
	 */
	bool		b_finite;
} ox_sgemm_epilogue;

/* ox_sgemm with an epilogue (NULL: none) */
ox_code		ox_sgemm_ex(ox_kernel_ctx *ctx, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
						float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
						float beta, float *C, int64_t ldc, const ox_sgemm_epilogue *epi);

/*
 * C's only row = x B, B [K, N] with rows ldb apart, bias and clamp from epi
 * (alpha 1, beta 0), as the GEMV inside ox_sgemm_ex computes it, bit for
 * bit, on the calling thread.  false, with nothing done, when that GEMV
 * would not run this way (post function, long rows, columns worth
 * threads, no kernels for this CPU): then call ox_sgemm_ex.
 */
bool		ox_sgemm_row_sums(ox_kernel_ctx *ctx, int64_t N, int64_t K, const float *x, const float *B,
							  int64_t ldb, const ox_sgemm_epilogue *epi, float *y);

/* how many of x's n floats equal 0.0f (-0.0f too; NaN not) */
int64_t		ox_sgemm_zero_count(const float *x, int64_t n);

/*
 * Constant weights packed once (at session creation) in the layout the
 * micro-kernel reads, so runs skip packing them.  ox_sgemm_pack_* return
 * NULL on machines without our kernels (callers keep using ox_sgemm) or on
 * out-of-memory (status set).
 */
typedef struct ox_sgemm_packed ox_sgemm_packed;

/* op(B) is K x N */
ox_sgemm_packed *ox_sgemm_pack_b(bool trans_b, int64_t K, int64_t N, const float *B, int64_t ldb,
								 ox_status *st);
/*
 * The same for a B packed anew at every run (an RNN's recurrent weights fed
 * as inputs): ordinary heap memory, which the C library reuses from run to
 * run, where the session-long copies above get mappings of their own
 * (ox_aligned_alloc_huge)
 */
ox_sgemm_packed *ox_sgemm_pack_b_transient(bool trans_b, int64_t K, int64_t N, const float *B, int64_t ldb,
										   ox_status *st);
/* op(A) is M x K */
ox_sgemm_packed *ox_sgemm_pack_a(bool trans_a, int64_t M, int64_t K, const float *A, int64_t lda,
								 ox_status *st);
void		ox_sgemm_packed_free(ox_sgemm_packed *p);
size_t		ox_sgemm_packed_bytes(const ox_sgemm_packed *p);
/* C = alpha * op(A) * B + beta * C, B packed (its K and N) */
ox_code		ox_sgemm_packed_b(ox_kernel_ctx *ctx, bool trans_a, int64_t M, float alpha, const float *A,
							  int64_t lda, const ox_sgemm_packed *pb, float beta, float *C, int64_t ldc);
/* the same with an epilogue (NULL: none) */
ox_code		ox_sgemm_packed_b_ex(ox_kernel_ctx *ctx, bool trans_a, int64_t M, float alpha, const float *A,
								 int64_t lda, const ox_sgemm_packed *pb, float beta, float *C, int64_t ldc,
								 const ox_sgemm_epilogue *epi);
/* C = alpha * A * op(B) + beta * C, A packed (its M and K) */
ox_code		ox_sgemm_packed_a(ox_kernel_ctx *ctx, const ox_sgemm_packed *pa, int64_t N, float alpha,
							  bool trans_b, const float *B, int64_t ldb, float beta, float *C, int64_t ldc);

/* which kernel family ox_sgemm uses here: "avx512", "avx2" or "blas" */
const char *ox_sgemm_isa(void);

/*
 * Tests only: use the named kernel family ("avx512", "avx2", "blas") from
 * now on, if this machine has it; returns the previous one, or NULL (and
 * changes nothing) when it cannot.  Matrices packed before keep working.
 * Not thread-safe: call it before any session runs.
 */
const char *ox_sgemm_force_isa(const char *name);

/*
 * Whether the AXPY kernels prefetch the rows of a list of x's nonzero
 * entries ahead (by the CPU's maker, sgemm.c); the same sums either way.
 * Tests force it: 1 or 0, or -1 to detect again; returns the choice before.
 */
bool		ox_sgemm_list_prefetch(void);
int			ox_sgemm_force_list_prefetch(int on);

#endif							/* OX_SGEMM_H */
