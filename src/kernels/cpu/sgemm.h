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

/* which kernel family ox_sgemm uses here: "avx512", "avx2" or "blas" */
const char *ox_sgemm_isa(void);

#endif							/* OX_SGEMM_H */
