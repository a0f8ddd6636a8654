/*
 * sgemm_isa.h
 *	  Private header between sgemm.c (blocking, packing, threading) and
 *	  sgemm_kernels.c (the instruction-set specific kernels).  Not part of
 *	  the engine API: use sgemm.h.
 */
#ifndef OX_SGEMM_ISA_H
#define OX_SGEMM_ISA_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "kernels/cpu/sgemm.h"

/* what the micro-kernel does with its accumulators */
typedef struct ox_sgemm_uk_epi
{
	float		alpha;
	float		beta;			/* 0: C is not read */
	const float *bias;			/* per column, at the tile's first column, or NULL */
	int			cols;			/* columns of the tile that exist */
	bool		clamp;			/* last K block: C = min(max(C, lo), hi), NaN kept */
	float		lo,
				hi;
	const char *prefetch;		/* 64 bytes per 4 depths of it are fetched into L2 */
	int64_t		lda;			/* AVX-512: A read in place, rows lda apart (0: packed) */
} ox_sgemm_uk_epi;

typedef void (*ox_sgemm_ukernel_fn) (int64_t k, const float *a, const float *b, float *c, int64_t ldc,
							const ox_sgemm_uk_epi *e);

typedef struct ox_sgemm_isa_desc
{
	const char *name;
	int			mr;
	int			nr;
	int			mc;				/* most rows of a row block */
	/* kernel[rows][vectors]: rows 1..mr, vectors of columns 1..2 */
	ox_sgemm_ukernel_fn	kernel[13][3];
} ox_sgemm_isa_desc;

/* the kernel families; mr x nr tiles */
extern const ox_sgemm_isa_desc ox_sgemm_isa_avx512;
extern const ox_sgemm_isa_desc ox_sgemm_isa_avx2;

/*
 * Up to twelve rows of A (lda apart) into the packed [depth][12] layout,
 * sixteen depths at a time (AVX-512 only); returns the depths packed, a
 * multiple of 16 (the caller packs the rest).
 */
int64_t		ox_sgemm_pack_a12_avx512(const float *A, int64_t lda, int64_t rows, int64_t kc, float *dst);

/*
 * out[n - n0] = dot(x, row n of B) for n in [n0, n1); rows ldb apart, length K.
 * one_stream: one row at a time (for a B that comes from memory, see there).
 */
void		ox_sgemm_dots_avx512(const float *x, const float *B, int64_t ldb, int64_t K, int64_t n0,
								 int64_t n1, bool one_stream, float *out);
void		ox_sgemm_dots_avx2(const float *x, const float *B, int64_t ldb, int64_t K, int64_t n0,
							   int64_t n1, float *out);
/*
 * What a GEMV kernel may finish in registers before it stores: out = (sum +
 * 0.0f) + bias[n - n0], then min(max(out, lo), hi) -- the arithmetic of the
 * separate passes (sgemm.c, gemv_scale_bias and clamp_row) with alpha 1
 * and beta 0, so the results are the same bits.
 */
typedef struct ox_gemv_finish
{
	const float *bias;			/* or NULL */
	bool		clamp;
	float		lo,
				hi;
} ox_gemv_finish;

/*
 * out[n - n0] = sum_k x[k] * B[k * ldb + n] for n in [n0, n1), over k in
 * [0, nk) or, when ks is not NULL, over the nk ascending indices ks[] (the
 * nonzero entries of x, ox_sgemm_nonzero_indices, padded as it pads them),
 * those rows prefetched ahead when prefetch (ox_sgemm_list_prefetch);
 * finished by fin (NULL: the plain sums).
 */
void		ox_sgemm_axpy_rows_avx512(const float *x, const float *B, int64_t ldb, const int32_t *ks,
									  int64_t nk, bool prefetch, int64_t n0, int64_t n1,
									  const ox_gemv_finish *fin, float *out);
void		ox_sgemm_axpy_rows_avx2(const float *x, const float *B, int64_t ldb, const int32_t *ks,
									int64_t nk, bool prefetch, int64_t n0, int64_t n1,
									const ox_gemv_finish *fin, float *out);

/*
 * The indices k in [0, K) with x[k] != 0 (NaN included), ascending, into
 * ks, which has room for K + 16; returns how many.  The three entries after
 * them repeat the last (0 when none): the AXPY kernels prefetch the rows of
 * entries ahead of the one they sum.
 */
int64_t		ox_sgemm_nonzero_indices_avx512(const float *x, int64_t K, int32_t *ks);
int64_t		ox_sgemm_nonzero_indices(const float *x, int64_t K, int32_t *ks);

/*
 * B as ox_sgemm_pack_b packs it: K blocks of nearly equal depth, block b
 * holding depths [ox_sgemm_kb_start(K, nkb, b), ... (b + 1)), and in each
 * block every sliver of nr columns (zero padded to npad), depth after
 * depth: sliver j of the block that starts at depth k0 is at
 * data + k0 * npad + j * nr * kc, its depth k0 + p at + p * nr.
 */
typedef struct ox_sgemm_packed_view
{
	const float *data;
	int64_t		K;
	int64_t		nkb;			/* K blocks */
	int64_t		npad;			/* N rounded up to whole slivers */
} ox_sgemm_packed_view;

static inline int64_t
ox_sgemm_kb_start(int64_t K, int64_t nkb, int64_t b)
{
	return b * K / nkb;
}

/* the greatest common divisor (the task grids: ranges that divide evenly among threads) */
static inline int64_t
ox_sgemm_gcd(int64_t a, int64_t b)
{
	while (b)
	{
		int64_t		t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * out[n - n0] = sum over the rows k of ks (NULL: all K) of x[k] B[k, n],
 * for n in [n0, n1), n0 on a sliver's first column, B packed (the AVX-512
 * slivers of 32 columns, the AVX2 ones of 16); finished by fin (NULL: the
 * plain sums).  Each column sums its rows in ascending order from zero, as
 * ox_sgemm_axpy_rows_* do over B in rows: the same bits from one copy of B
 * that also serves the GEMM.
 */
void		ox_sgemm_packed_gemv_avx512(const float *x, const ox_sgemm_packed_view *b, const int32_t *ks,
										int64_t nk, int64_t n0, int64_t n1, const ox_gemv_finish *fin,
										float *out);
void		ox_sgemm_packed_gemv_avx2(const float *x, const ox_sgemm_packed_view *b, const int32_t *ks,
									  int64_t nk, int64_t n0, int64_t n1, const ox_gemv_finish *fin,
									  float *out);

/* dst[i] = src[i] finished by fin (its bias from bias[0]), i in [0, n) */
void		ox_sgemm_finish_row_avx512(const ox_gemv_finish *fin, const float *src, int64_t n, float *dst);

/* how many of x's n floats equal 0.0f (-0.0f too; NaN not) */
int64_t		ox_sgemm_zero_count_avx512(const float *x, int64_t n);

/*
 * C = alpha A B (+ beta C), B packed (ox_sgemm_pack_b's layout), skipping
 * the zeros of A (sgemm_sparse.c): the micro-kernels' bits, B finite.
 */
typedef struct ox_sgemm_sparse_job
{
	int64_t		M,
				N,
				K;
	int64_t		nkb;			/* B's K blocks */
	int64_t		npad;			/* N in whole slivers */
	const float *A;
	int64_t		lda;
	const float *B;
	float		alpha,
				beta;
	const ox_sgemm_epilogue *epi;	/* bias, clamp and post */
	int64_t		col0;			/* the column epi's post is told for column 0 */
	float	   *C;
	int64_t		ldc;
	bool		avx512;			/* B packed for the AVX-512 kernels, else AVX2 */
	int64_t		task_rows;		/* rows a task */
	int64_t		col_ranges;		/* ranges of slivers a row block is split into */
	bool		oom;
} ox_sgemm_sparse_job;

/*
 * rows [row0, row0 + rows) of the job's C, its slivers [s0, s1); false
 * when out of memory
 */
bool		ox_sgemm_sparse_rows_avx512(const ox_sgemm_sparse_job *j, int64_t row0, int64_t rows, int64_t s0,
										int64_t s1);
bool		ox_sgemm_sparse_rows_avx2(const ox_sgemm_sparse_job *j, int64_t row0, int64_t rows, int64_t s0,
									  int64_t s1);
/* whether A has zeros enough for it (avx512: with those kernels, else AVX2's) */
bool		ox_sgemm_sparse_worth(bool avx512, const float *A, int64_t lda, int64_t M, int64_t K, int64_t N);
/* the whole job, its rows split among the threads */
ox_code		ox_sgemm_sparse_run(ox_kernel_ctx *ctx, ox_sgemm_sparse_job *j);

#endif							/* OX_SGEMM_ISA_H */
