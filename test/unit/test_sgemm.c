/*
 * test_sgemm.c
 *	  ox_sgemm against a double-precision reference for shapes that hit
 *	  every edge (tiles, K blocks, N blocks, small-M paths), all transpose
 *	  combinations, alpha/beta, an epilogue (bias row and post function),
 *	  1 to 3 threads, with A or B packed
 *	  ahead, A of mostly zeros (the sparse path), and for every kernel family this machine has (AVX-512, AVX2, the
 *	  system BLAS fallback).
 */
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/sgemm.h"
#include "kernels/cpu/sgemm_isa.h"

static float
frand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return ((*s >> 9) & 0xffff) / 32768.0f - 1.0f;
}

/* n values in [-1, 1) */
static void
fill(float *v, int64_t n, unsigned *s)
{
	for (int64_t i = 0; i < n; i++)
		v[i] = frand(s);
}

/* n values, about a share of them zeros (0.0 and -0.0 in turn), the others in [-1, 1) */
static void
fill_zeros(float *v, int64_t n, double share, unsigned *s)
{
	for (int64_t i = 0; i < n; i++)
	{
		float		u = frand(s);

		v[i] = (u + 1.0f) / 2.0f < share ? ((i & 1) ? -0.0f : 0.0f) : frand(s);
	}
}

/* post function of the tests: y = 2 * y - 1, counting the visits of each element */
typedef struct post_arg
{
	int64_t		N;
	float	   *C;
	int64_t		ldc;
	unsigned char *visits;
} post_arg;

static void
post_double(void *arg, int64_t row0, int64_t col0, int64_t rows, int64_t cols, float *c, int64_t ldc)
{
	post_arg   *p = arg;

	for (int64_t r = 0; r < rows; r++)
		for (int64_t q = 0; q < cols; q++)
		{
			/* c is the block's corner: check it against C itself */
			if (&c[r * ldc + q] != &p->C[(row0 + r) * p->ldc + col0 + q])
				p->visits[0] = 100;
			c[r * ldc + q] = 2.0f * c[r * ldc + q] - 1.0f;
			p->visits[(row0 + r) * p->N + col0 + q]++;
		}
}

static void
post_nothing(void *arg, int64_t row0, int64_t col0, int64_t rows, int64_t cols, float *c, int64_t ldc)
{
}

/* the epilogue's clamp in the tests (ox_sgemm_epilogue.clamp) */
#define CLAMP_LO -1.0f
#define CLAMP_HI 2.0f

static double
clamp(double v)
{
	return v < CLAMP_LO ? CLAMP_LO : (v > CLAMP_HI ? CLAMP_HI : v);
}

static int
check(int mode, int threads, bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, float beta,
	  bool use_bias)
{
	int64_t		lda = ta ? M + 3 : K + 1,
				ldb = tb ? K + 2 : N + 5,
				ldc = N + 7;
	float	   *A = malloc(sizeof(float) * (ta ? K : M) * lda);
	float	   *B = malloc(sizeof(float) * (tb ? N : K) * ldb);
	float	   *C = malloc(sizeof(float) * M * ldc);
	float	   *C0 = malloc(sizeof(float) * M * ldc);
	float	   *bias = malloc(sizeof(float) * N);
	unsigned char *visits = calloc(M * N + 1, 1);
	post_arg	pa_arg = {N, C, ldc, visits};
	/* with the bias: a clamp (on the final sums only), then the post function */
	ox_sgemm_epilogue epi = {.bias = use_bias ? bias : NULL, .clamp = use_bias, .clamp_lo = CLAMP_LO,
		.clamp_hi = CLAMP_HI, .post = use_bias ? post_double : NULL, .post_arg = &pa_arg};
	unsigned	seed = (unsigned) (M * 131 + N * 7 + K);
	ox_kernel_ctx ctx;
	ox_status	st;
	int			bad = 0;

	fill(A, (ta ? K : M) * lda, &seed);
	fill(B, (tb ? N : K) * ldb, &seed);
	for (int64_t i = 0; i < M * ldc; i++)
		C0[i] = C[i] = beta == 0.0f ? NAN : frand(&seed);	/* beta 0 must not read C */
	fill(bias, N, &seed);
	memset(&ctx, 0, sizeof(ctx));
	ox_status_clear(&st);
	ctx.nthreads = threads;
	ctx.st = &st;
	if (mode == 0 && !use_bias && ox_sgemm(&ctx, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc) != OX_OK)
		bad = 1;
	if (mode == 0 && use_bias &&
		ox_sgemm_ex(&ctx, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, &epi) != OX_OK)
		bad = 1;
	if (mode == 1)
	{
		/* B packed ahead of time, as Gemm/MatMul do for constant weights */
		ox_sgemm_packed *pb = ox_sgemm_pack_b(tb, K, N, B, ldb, &st);

		/* machines without our kernels have nothing packed: callers use ox_sgemm */
		if (!pb && strcmp(ox_sgemm_isa(), "blas") == 0)
			bad = ox_sgemm_ex(&ctx, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, &epi) != OX_OK;
		else if (!pb || ox_sgemm_packed_b_ex(&ctx, ta, M, alpha, A, lda, pb, beta, C, ldc, &epi) != OX_OK)
			bad = 1;
		ox_sgemm_packed_free(pb);
	}
	if (mode == 2)
	{
		/* A packed ahead of time, as Conv does for its weights */
		ox_sgemm_packed *pa = ox_sgemm_pack_a(ta, M, K, A, lda, &st);

		if (!pa && strcmp(ox_sgemm_isa(), "blas") == 0)
			bad = ox_sgemm(&ctx, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc) != OX_OK;
		else if (!pa || ox_sgemm_packed_a(&ctx, pa, N, alpha, tb, B, ldb, beta, C, ldc) != OX_OK)
			bad = 1;
		ox_sgemm_packed_free(pa);
	}
	for (int64_t m = 0; m < M && !bad; m++)
		for (int64_t n = 0; n < N; n++)
		{
			double		s = 0;

			for (int64_t k = 0; k < K; k++)
				s += (double) (ta ? A[k * lda + m] : A[m * lda + k]) * (tb ? B[n * ldb + k] : B[k * ldb + n]);
			s = alpha * s + (beta != 0.0f ? beta * C0[m * ldc + n] : 0.0) + (use_bias ? bias[n] : 0.0);
			if (use_bias && mode != 2)
			{
				/* the post function ran exactly once on every element */
				if (visits[m * N + n] != 1 || visits[0] > 1)
				{
					printf("FAIL sgemm %s mode=%d M=%lld N=%lld K=%lld: post function ran %d times at (%lld,%lld)\n",
						   ox_sgemm_isa(), mode, (long long) M, (long long) N, (long long) K,
						   (int) visits[m * N + n], (long long) m, (long long) n);
					bad = 1;
					break;
				}
				s = 2.0 * clamp(s) - 1.0;
			}
			if (!(fabs(C[m * ldc + n] - s) <= 1e-4 * (1 + fabs(s)) * sqrt((double) K + 1)))
			{
				printf("FAIL sgemm %s mode=%d t=%d ta=%d tb=%d bias=%d M=%lld N=%lld K=%lld at (%lld,%lld): %g vs %g\n",
					   ox_sgemm_isa(), mode, threads, ta, tb, use_bias, (long long) M, (long long) N,
					   (long long) K, (long long) m, (long long) n, C[m * ldc + n], s);
				bad = 1;
				break;
			}
		}
	/* C's padding columns (ldc > N) must be untouched */
	for (int64_t m = 0; m < M && !bad; m++)
		for (int64_t n = N; n < ldc; n++)
			if (memcmp(&C[m * ldc + n], &C0[m * ldc + n], sizeof(float)) != 0)
			{
				printf("FAIL sgemm %s mode=%d M=%lld N=%lld K=%lld wrote outside C at (%lld,%lld)\n",
					   ox_sgemm_isa(), mode, (long long) M, (long long) N, (long long) K,
					   (long long) m, (long long) n);
				bad = 1;
				break;
			}
	free(A);
	free(B);
	free(C);
	free(C0);
	free(bias);
	free(visits);
	return bad;
}

/*
 * One- and two-row products alternate the direction in which they stream B
 * from one call to the next on the same B (sgemm.c, zigzag_next) when B is
 * smaller than L2, and op(B) = B^T up to several MB (531 x 784 here, larger
 * than L2: its columns in slices of 16 from the top down, the dot products
 * four rows at a time and the tail's one row at a time at the same columns
 * in both directions); a row of A that is not 64-byte aligned (a_off floats
 * past an aligned address) is copied first.  Repeated calls must give bit-identical results, each element
 * finished once per call, and match check()'s reference on the first.
 */
static int
check_gemv_directions(int threads, bool tb, int64_t M, int64_t N, int64_t K, int a_off)
{
	int64_t		ldb = tb ? K : N;
	float	   *A_mem = aligned_alloc(64, sizeof(float) * ((M * K + 16 + 64 + 15) / 16 * 16));
	float	   *A = A_mem + a_off;
	float	   *B = malloc(sizeof(float) * N * K);
	float	   *C = malloc(sizeof(float) * M * N);
	float	   *first = malloc(sizeof(float) * M * N);
	float	   *bias = malloc(sizeof(float) * N);
	unsigned char *visits = calloc(M * N + 1, 1);
	post_arg	pa_arg = {N, C, N, visits};
	ox_sgemm_epilogue epi = {.bias = bias, .clamp = true, .clamp_lo = CLAMP_LO, .clamp_hi = CLAMP_HI,
		.post = post_double, .post_arg = &pa_arg};
	unsigned	seed = (unsigned) (N * 3 + K);
	ox_kernel_ctx ctx;
	ox_status	st;
	int			bad = 0;

	fill(A, M * K, &seed);
	fill(B, N * K, &seed);
	fill(bias, N, &seed);
	memset(&ctx, 0, sizeof(ctx));
	ctx.nthreads = threads;
	ox_status_clear(&st);
	ctx.st = &st;
	for (int call = 0; call < 4 && !bad; call++)
	{
		memset(visits, 0, M * N + 1);
		if (ox_sgemm_ex(&ctx, false, tb, M, N, K, 1.0f, A, K, B, ldb, 0.0f, C, N, &epi) != OX_OK)
			bad = 1;
		for (int64_t i = 0; i < M * N && !bad; i++)
			if (visits[i] != 1)
				bad = 1;
		if (call == 0)
		{
			memcpy(first, C, sizeof(float) * M * N);
			for (int64_t m = 0; m < M && !bad; m++)
				for (int64_t n = 0; n < N && !bad; n++)
				{
					double		want = bias[n];

					for (int64_t k = 0; k < K; k++)
						want += (double) A[m * K + k] * (tb ? B[n * K + k] : B[k * N + n]);
					want = 2.0 * clamp(want) - 1.0;
					if (!(fabs(C[m * N + n] - want) <= 1e-4 * (1 + fabs(want)) * sqrt((double) K + 1)))
						bad = 1;
				}
		}
		else if (memcmp(first, C, sizeof(float) * M * N) != 0)
			bad = 1;
		if (bad)
			printf("FAIL sgemm %s gemv call %d t=%d tb=%d M=%lld N=%lld K=%lld\n", ox_sgemm_isa(), call,
				   threads, tb, (long long) M, (long long) N, (long long) K);
	}
	free(A_mem);
	free(B);
	free(C);
	free(first);
	free(bias);
	free(visits);
	return bad;
}

/*
 * A GEMV over a finite B (ox_sgemm_epilogue.b_finite) reads only the rows
 * of B that x's nonzero entries multiply (sgemm.c, the list of nonzero
 * entries): it must give the same numbers as the full sum, whatever share
 * of x is zero, with x's NaN still reaching every output and -0.0 skipped
 * like 0; rows of one call (M = 2) with different zeros each.  A bias and
 * clamp finished in the kernel's registers must match the separate passes.
 */
static int
check_gemv_skip(int threads, int64_t M, int64_t N, int64_t K, double zero_share, bool nan)
{
	float	   *A = malloc(sizeof(float) * M * K);
	float	   *B = malloc(sizeof(float) * N * K);
	float	   *skip = malloc(sizeof(float) * M * N);
	float	   *full = malloc(sizeof(float) * M * N);
	ox_sgemm_epilogue epi = {.b_finite = true};
	ox_sgemm_epilogue dense = {.b_finite = false};
	unsigned	seed = (unsigned) (N * 7 + K + M);
	ox_kernel_ctx ctx;
	ox_status	st;
	int			bad = 0;

	fill_zeros(A, M * K, zero_share, &seed);
	if (nan)
		A[K / 3] = NAN;
	fill(B, N * K, &seed);
	memset(&ctx, 0, sizeof(ctx));
	ctx.nthreads = threads;
	ox_status_clear(&st);
	ctx.st = &st;
	if (ox_sgemm_ex(&ctx, false, false, M, N, K, 1.0f, A, K, B, N, 0.0f, skip, N, &epi) != OX_OK ||
		ox_sgemm_ex(&ctx, false, false, M, N, K, 1.0f, A, K, B, N, 0.0f, full, N, &dense) != OX_OK)
		bad = 1;
	for (int64_t i = 0; i < M * N && !bad; i++)
		if (nan && i < N ? !isnan(skip[i]) : !(skip[i] == full[i]))
			bad = 1;
	/*
	 * bias and clamp (Relu) finished in the kernel's registers, against the
	 * separate passes that a post function (here one that changes nothing)
	 * still takes: the same bits
	 */
	if (!bad)
	{
		float	   *bias = malloc(sizeof(float) * N);
		ox_sgemm_epilogue fused = {.bias = bias, .clamp = true, .clamp_lo = 0.0f, .clamp_hi = INFINITY,
			.b_finite = true};
		ox_sgemm_epilogue passes = fused;

		passes.post = post_nothing;
		for (int64_t i = 0; i < N; i++)
			bias[i] = frand(&seed);
		if (ox_sgemm_ex(&ctx, false, false, M, N, K, 1.0f, A, K, B, N, 0.0f, skip, N, &fused) != OX_OK ||
			ox_sgemm_ex(&ctx, false, false, M, N, K, 1.0f, A, K, B, N, 0.0f, full, N, &passes) != OX_OK ||
			memcmp(skip, full, sizeof(float) * M * N) != 0)
			bad = 1;
		free(bias);
	}
	if (bad)
		printf("FAIL sgemm %s gemv skipping zeros t=%d M=%lld N=%lld K=%lld zeros=%.2f nan=%d\n",
			   ox_sgemm_isa(), threads, (long long) M, (long long) N, (long long) K, zero_share, nan);
	free(A);
	free(B);
	free(skip);
	free(full);
	return bad;
}

/*
 * The list prefetch's default follows the CPU's maker as the CPU reports it
 * to programs (cpuid's vendor string): on for AMD, off for the rest.  Not
 * /proc/cpuinfo's vendor_id: under valgrind on an AMD host, cpuid names the
 * CPU valgrind emulates (Intel's), and the kernels see that one.  Off x86
 * the check passes.
 */
static int
check_list_prefetch_default(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned	a,
				b,
				c,
				d;
	char		vendor[13];
	bool		amd;

	if (!__get_cpuid(0, &a, &b, &c, &d))
		return 0;
	/* the vendor string is EBX, EDX, ECX in that order */
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	vendor[12] = '\0';
	amd = strcmp(vendor, "AuthenticAMD") == 0;
	if (ox_sgemm_list_prefetch() != amd)
	{
		printf("FAIL sgemm list prefetch %d on a CPU that calls itself %s\n", (int) ox_sgemm_list_prefetch(),
			   vendor);
		return 1;
	}
#endif
	return 0;
}

/*
 * The nonzero lists the AXPY kernels read: ascending indices of the nonzero
 * entries (NaN included, -0.0 not), then three entries that repeat the last
 * (0 when none), which the kernels prefetch rows from.  Both versions, on
 * lengths around their sixteen-lane steps; the AVX-512 one only where the
 * CPU has it.
 */
static int
check_nonzero_lists(bool avx512)
{
	static const int64_t lengths[] = {0, 1, 5, 16, 17, 100, 256};
	unsigned	seed = 11;
	int			bad = 0;

	for (size_t l = 0; l < sizeof(lengths) / sizeof(lengths[0]); l++)
		for (int pattern = 0; pattern < 3; pattern++)
		{
			int64_t		K = lengths[l],
						n,
						expect = 0;
			float		x[256];
			int32_t		ks[256 + 16],
						want[256 + 3];

			for (int64_t k = 0; k < K; k++)
			{
				float		v = frand(&seed);

				/* all zero, half zero (some -0.0, one NaN), none zero */
				x[k] = pattern == 0 ? 0.0f : pattern == 2 ? v + 2.0f :
					v < 0 ? ((k & 1) ? -0.0f : 0.0f) : k == K / 2 ? NAN : v;
				if (x[k] != 0.0f || isnan(x[k]))
					want[expect++] = (int32_t) k;
			}
			for (int i = 0; i < 3; i++)
				want[expect + i] = expect > 0 ? want[expect - 1] : 0;
			n = avx512 ? ox_sgemm_nonzero_indices_avx512(x, K, ks) : ox_sgemm_nonzero_indices(x, K, ks);
			if (n != expect || memcmp(ks, want, sizeof(int32_t) * (size_t) (n + 3)) != 0)
			{
				printf("FAIL sgemm nonzero list %s K=%lld pattern %d: %lld listed, %lld expected\n",
					   avx512 ? "avx512" : "portable", (long long) K, pattern, (long long) n,
					   (long long) expect);
				bad = 1;
			}
		}
	return bad;
}

/*
 * The finish of the dot products (ox_sgemm_finish_row_avx512) against the
 * scalar passes it replaces, (sum + 0) + bias then the clamp as clamp_row
 * writes it, bit for bit: -0.0, NaN, values past both bounds, every tail
 * length; and the zero count, -0.0 counted and NaN not, against x == 0.
 */
static int
check_finish_and_zero_count(void)
{
	unsigned	seed = 5;
	int			bad = 0;

	for (int64_t n = 0; n <= 40; n++)
		for (int variant = 0; variant < 4; variant++)
		{
			float		src[40],
						bias[40],
						got[40],
						want[40];
			int64_t		zeros = 0;
			ox_gemv_finish f = {.bias = variant & 1 ? bias : NULL, .clamp = variant & 2, .lo = -0.5f, .hi = 0.75f};

			for (int64_t i = 0; i < n; i++)
			{
				src[i] = i % 7 == 3 ? -0.0f : i % 11 == 5 ? NAN : i % 5 == 1 ? 0.0f : 3.0f * frand(&seed);
				bias[i] = i % 13 == 2 ? -0.0f : frand(&seed);
				zeros += src[i] == 0.0f;
				want[i] = f.bias ? (src[i] + 0.0f) + bias[i] : src[i] + 0.0f;
				if (f.clamp)
				{
					float		v = want[i] < f.lo ? f.lo : want[i];

					want[i] = v > f.hi ? f.hi : v;
				}
			}
			if (__builtin_cpu_supports("avx512f"))
			{
				ox_sgemm_finish_row_avx512(&f, src, n, got);
				if (memcmp(got, want, sizeof(float) * (size_t) n) != 0)
				{
					printf("FAIL sgemm finish row n=%lld variant %d\n", (long long) n, variant);
					bad = 1;
				}
				if (ox_sgemm_zero_count_avx512(src, n) != zeros)
				{
					printf("FAIL sgemm zero count avx512 n=%lld\n", (long long) n);
					bad = 1;
				}
			}
			if (ox_sgemm_zero_count(src, n) != zeros)
			{
				printf("FAIL sgemm zero count n=%lld\n", (long long) n);
				bad = 1;
			}
		}
	return bad;
}

/*
 * ox_sgemm_row_sums, the direct path of a row-wise call's layers, against
 * ox_sgemm_ex on the same single row: the same bits, with and without
 * zeros skipped, bias and clamp; and false (nothing written) where it does
 * not apply.
 */
static int
check_row_sums(int64_t N, int64_t K, double zero_share)
{
	float	   *x = malloc(sizeof(float) * K);
	float	   *B = malloc(sizeof(float) * K * N);
	float	   *bias = malloc(sizeof(float) * N);
	float	   *direct = malloc(sizeof(float) * N);
	float	   *general = malloc(sizeof(float) * N);
	unsigned	seed = (unsigned) (N * 13 + K);
	ox_kernel_ctx ctx;
	ox_status	st;
	int			bad = 0;

	for (int64_t i = 0; i < K; i++)
	{
		float		v = frand(&seed);

		x[i] = (v + 1.0f) / 2.0f < zero_share ? 0.0f : frand(&seed);
	}
	fill(B, K * N, &seed);
	fill(bias, N, &seed);
	memset(&ctx, 0, sizeof(ctx));
	ctx.nthreads = 1;
	ox_status_clear(&st);
	ctx.st = &st;
	for (int variant = 0; variant < 4 && !bad; variant++)
	{
		ox_sgemm_epilogue epi = {.bias = variant & 1 ? bias : NULL, .clamp = variant >= 2,
			.clamp_lo = variant == 3 ? -0.25f : 0.0f, .clamp_hi = variant == 3 ? 0.25f : INFINITY,
		.b_finite = variant != 2};

		memset(direct, 0x7f, sizeof(float) * N);
		if (!ox_sgemm_row_sums(&ctx, N, K, x, B, N, &epi, direct) ||
			ox_sgemm_ex(&ctx, false, false, 1, N, K, 1.0f, x, K, B, N, 0.0f, general, N, &epi) != OX_OK ||
			memcmp(direct, general, sizeof(float) * N) != 0)
			bad = 1;
	}
	/* a post function, rows longer than the stack's list: the general path's */
	if (!bad)
	{
		ox_sgemm_epilogue post = {.post = post_nothing};
		ox_sgemm_epilogue plain = {.b_finite = true};
		float		canary = direct[0];

		if (ox_sgemm_row_sums(&ctx, N, K, x, B, N, &post, direct) ||
			(K <= 512 && N == 1 && ox_sgemm_row_sums(&ctx, N, K, x, B, 2, &plain, direct)) ||
			direct[0] != canary)
			bad = 1;
	}
	if (bad)
		printf("FAIL sgemm %s row sums N=%lld K=%lld zeros=%.2f\n", ox_sgemm_isa(), (long long) N,
			   (long long) K, zero_share);
	free(x);
	free(B);
	free(bias);
	free(direct);
	free(general);
	return bad;
}

/*
 * One column of C from many rows (a regression head over a batch): the
 * column path's dot products, bias, clamp, alpha and beta must give the
 * same bits as the rows one at a time, so that a batch agrees with its
 * rows scored singly.  B as [K, 1] (gathered when ldb is not 1) and as
 * [1, K].
 */
static int
check_column(int threads, int64_t M, int64_t K, bool tb, int64_t ldb, float alpha, float beta)
{
	int64_t		lda = K + 3,
				ldc = 5;
	float	   *A = malloc(sizeof(float) * M * lda);
	float	   *B = malloc(sizeof(float) * K * ldb);
	float	   *C = malloc(sizeof(float) * M * ldc);
	float	   *R = malloc(sizeof(float) * M * ldc);
	float		bias = 0.25f;
	/* a clamp that some of the sums pass and some do not */
	ox_sgemm_epilogue epi = {.bias = &bias, .clamp = true, .clamp_lo = -2.0f, .clamp_hi = 2.0f};
	unsigned	seed = (unsigned) (M * 3 + K);
	ox_kernel_ctx ctx;
	ox_status	st;
	int			bad = 0;

	fill(A, M * lda, &seed);
	fill(B, K * ldb, &seed);
	for (int64_t i = 0; i < M * ldc; i++)
		C[i] = R[i] = frand(&seed);
	memset(&ctx, 0, sizeof(ctx));
	ctx.nthreads = threads;
	ox_status_clear(&st);
	ctx.st = &st;
	if (ox_sgemm_ex(&ctx, false, tb, M, 1, K, alpha, A, lda, B, tb ? K : ldb, beta, C, ldc, &epi) != OX_OK)
		bad = 1;
	for (int64_t m = 0; m < M && !bad; m++)
		if (ox_sgemm_ex(&ctx, false, tb, 1, 1, K, alpha, A + m * lda, lda, B, tb ? K : ldb, beta,
						R + m * ldc, ldc, &epi) != OX_OK)
			bad = 1;
	/* the column only: the rest of each row of C untouched */
	if (!bad && memcmp(C, R, sizeof(float) * M * ldc) != 0)
		bad = 1;
	if (bad)
		printf("FAIL sgemm %s one column t=%d M=%lld K=%lld tb=%d ldb=%lld alpha=%g beta=%g\n",
			   ox_sgemm_isa(), threads, (long long) M, (long long) K, tb, (long long) ldb, alpha, beta);
	free(A);
	free(B);
	free(C);
	free(R);
	return bad;
}

/*
 * One or two rows by a packed B (what a session keeps of a large weight):
 * the packed GEMV sums each column's rows in the order the sums of rows
 * over B in place do, so every epilogue must give the same bits as that
 * path, with and without A's zeros skipped (B finite), on 1 and 2 threads;
 * slivers in groups of four, two and one, a last one partly past N, K
 * blocks of unequal depth.  B with an infinity and A with zeros: no skip,
 * 0 * inf is NaN in both.
 */
static int
check_packed_gemv(int threads, int64_t M, int64_t N, int64_t K, double zero_share, int variant)
{
	int64_t		lda = K + 1;
	float	   *A = malloc(sizeof(float) * M * lda);
	float	   *B = malloc(sizeof(float) * K * N);
	float	   *bias = malloc(sizeof(float) * N);
	float	   *C = malloc(sizeof(float) * M * N);
	float	   *R = malloc(sizeof(float) * M * N);
	unsigned	seed = (unsigned) (N * 7 + K * 3 + M);
	float		alpha = variant == 2 ? 0.5f : 1.0f,
				beta = variant == 2 ? -1.0f : 0.0f;
	ox_sgemm_epilogue epi = {.bias = variant >= 1 ? bias : NULL, .clamp = variant == 1,
		.clamp_lo = -0.5f, .clamp_hi = 0.5f, .b_finite = variant != 3,
	.post = variant == 2 ? post_nothing : NULL};
	ox_sgemm_packed *pb;
	ox_kernel_ctx ctx;
	ox_status	st;
	int			bad = 0;

	for (int64_t i = 0; i < M * lda; i++)
	{
		float		v = frand(&seed);

		A[i] = (v + 1.0f) / 2.0f < zero_share ? 0.0f : frand(&seed);
	}
	fill(B, K * N, &seed);
	if (variant == 3)
		B[(K / 2) * N + N / 2] = INFINITY;
	fill(bias, N, &seed);
	for (int64_t i = 0; i < M * N; i++)
		C[i] = R[i] = frand(&seed);
	memset(&ctx, 0, sizeof(ctx));
	ctx.nthreads = threads;
	ox_status_clear(&st);
	ctx.st = &st;
	pb = ox_sgemm_pack_b(false, K, N, B, N, &st);
	if (!pb || ox_sgemm_packed_b_ex(&ctx, false, M, alpha, A, lda, pb, beta, C, N, &epi) != OX_OK ||
		ox_sgemm_ex(&ctx, false, false, M, N, K, alpha, A, lda, B, N, beta, R, N, &epi) != OX_OK ||
		memcmp(C, R, sizeof(float) * M * N) != 0)
		bad = 1;
	if (bad)
		printf("FAIL sgemm %s packed GEMV t=%d M=%lld N=%lld K=%lld zeros=%.2f variant=%d\n", ox_sgemm_isa(),
			   threads, (long long) M, (long long) N, (long long) K, zero_share, variant);
	ox_sgemm_packed_free(pb);
	free(A);
	free(B);
	free(bias);
	free(C);
	free(R);
	return bad;
}

/*
 * Products whose A is mostly zeros, over a finite B (sgemm_sparse.c, with
 * the AVX-512 and the AVX2 kernels: each row's nonzeros listed per K block,
 * summed over sub-blocks of B): the same numbers as the micro-kernels, which are told
 * B may hold infinities (b_finite false) and so skip nothing.  A holds
 * -0.0 among its zeros, infinities, and NaN in one row when nan; B packed
 * ahead (packed) or at the call; alpha, beta, bias, clamp and a post
 * function that must visit every element once.  A share of 0.8 and more
 * must take the sparse path and one of 0.1 must not (checked, so that the
 * test cannot pass without it); 0.5 takes it with AVX-512 for N >= 128.
 */
static int
check_sparse(int threads, int64_t M, int64_t N, int64_t K, double zero_share, bool tb, bool packed, int variant)
{
	int64_t		lda = K + (variant & 1),
				ldb = tb ? K : N,
				ldc = N + 3;
	float	   *A = malloc(sizeof(float) * M * lda);
	float	   *B = malloc(sizeof(float) * K * N);
	float	   *bias = malloc(sizeof(float) * N);
	float	   *C[2];
	unsigned char *visits[2];
	float		alpha = variant == 2 ? 0.5f : 1.0f;
	float		beta = variant == 1 ? 1.0f : (variant == 3 ? -0.5f : 0.0f);
	bool		nan = variant == 3;
	unsigned	seed = (unsigned) (M * 31 + N * 7 + K + variant);
	ox_sgemm_packed *pb = NULL;
	ox_kernel_ctx ctx;
	ox_status	st;
	int			bad = 0;

	fill_zeros(A, M * lda, zero_share, &seed);
	A[(M / 2) * lda + K / 2] = INFINITY;
	A[(M - 1) * lda] = zero_share < 1.0 ? -INFINITY : 0.0f;
	if (nan)
		A[(M / 3) * lda + K - 1] = NAN;
	fill(B, K * N, &seed);
	fill(bias, N, &seed);
	memset(&ctx, 0, sizeof(ctx));
	ctx.nthreads = threads;
	ox_status_clear(&st);
	ctx.st = &st;
	if (packed && !(pb = ox_sgemm_pack_b(tb, K, N, B, ldb, &st)))
		bad = 1;
	if (!bad && strcmp(ox_sgemm_isa(), "blas") != 0 && (zero_share <= 0.1 || zero_share >= 0.8) &&
		ox_sgemm_sparse_worth(strcmp(ox_sgemm_isa(), "avx512") == 0, A, lda, M, K, N) != (zero_share >= 0.8))
	{
		printf("FAIL sgemm sparse: zeros %.2f of A [%lld, %lld] judged %s\n", zero_share, (long long) M,
			   (long long) K, zero_share >= 0.8 ? "not worth it" : "worth it");
		bad = 1;
	}
	for (int f = 0; f < 2; f++)
	{
		post_arg	pa_arg;
		ox_sgemm_epilogue epi = {.bias = variant != 2 ? bias : NULL, .clamp = variant >= 2,
			.clamp_lo = CLAMP_LO, .clamp_hi = CLAMP_HI, .post = variant == 1 ? post_double : NULL,
			.post_arg = &pa_arg, .b_finite = f == 1};

		C[f] = malloc(sizeof(float) * M * ldc);
		visits[f] = calloc(M * N + 1, 1);
		pa_arg = (post_arg) {N, C[f], ldc, visits[f]};
		for (int64_t i = 0; i < M * ldc; i++)
			C[f][i] = beta == 0.0f ? NAN : (float) ((i * 37) % 101) / 50.0f - 1.0f;
		if (bad)
			continue;
		if (packed ? ox_sgemm_packed_b_ex(&ctx, false, M, alpha, A, lda, pb, beta, C[f], ldc, &epi) != OX_OK :
			ox_sgemm_ex(&ctx, false, tb, M, N, K, alpha, A, lda, B, ldb, beta, C[f], ldc, &epi) != OX_OK)
			bad = 1;
	}
	for (int64_t m = 0; m < M && !bad; m++)
		for (int64_t n = 0; n < ldc; n++)
		{
			float		d = C[0][m * ldc + n],
						sp = C[1][m * ldc + n];

			if (!(d == sp || (isnan(d) && isnan(sp))) ||
				(n < N && variant == 1 && visits[1][m * N + n] != 1) || (nan && m == M / 3 && n < N && !isnan(sp)))
			{
				printf("FAIL sgemm %s sparse A t=%d M=%lld N=%lld K=%lld zeros=%.2f tb=%d packed=%d variant=%d at "
					   "(%lld,%lld): %g vs %g\n", ox_sgemm_isa(), threads, (long long) M, (long long) N,
					   (long long) K, zero_share, tb, packed, variant, (long long) m, (long long) n, sp, d);
				bad = 1;
				break;
			}
		}
	ox_sgemm_packed_free(pb);
	for (int f = 0; f < 2; f++)
	{
		free(C[f]);
		free(visits[f]);
	}
	free(A);
	free(B);
	free(bias);
	return bad;
}

int
main(void)
{
	static const int64_t sizes[][3] = {
		{1, 1, 1}, {1, 10, 784}, {2, 33, 17}, {3, 5, 7}, {12, 32, 16}, {13, 33, 385},
		{25, 70, 800}, {200, 50, 64}, {64, 3136, 147}, {7, 2100, 9}, {300, 300, 300}, {50, 1, 200},
	};
	/* every tile height and width class, K blocks of unequal depth */
	static const int64_t edges[][3] = {
		{4, 1, 3}, {5, 15, 8}, {6, 16, 5}, {7, 17, 9}, {8, 31, 4}, {9, 48, 2}, {10, 47, 1},
		{11, 64, 6}, {14, 8, 11}, {23, 9, 257}, {24, 40, 784}, {37, 100, 513}, {128, 96, 64},
		{385, 20, 30},
	};
	static const char *const isas[] = {"avx512", "avx2", "blas"};
	int			passed = 0,
				failed = 0;

	printf("sgemm kernels: %s\n", ox_sgemm_isa());
	for (size_t f = 0; f < sizeof(isas) / sizeof(isas[0]); f++)
	{
		if (!ox_sgemm_force_isa(isas[f]))
		{
			printf("(no %s kernels on this machine)\n", isas[f]);
			continue;
		}
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			for (int t = 1; t <= 2; t++)
				for (int ta = 0; ta < 2; ta++)
					for (int tb = 0; tb < 2; tb++)
					{
						float		beta = (i % 3 == 0) ? 0.0f : (i % 3 == 1 ? 1.0f : 0.5f);

						for (int mode = 0; mode < 3; mode++)
							if (check(mode, t, ta, tb, sizes[i][0], sizes[i][1], sizes[i][2],
									  i % 2 ? 1.0f : 0.75f, beta, mode != 2 && (i + ta) % 2))
								failed++;
							else
								passed++;
					}
		for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
			for (int t = 1; t <= 3; t += 2)
				for (int mode = 0; mode < 3; mode++)
				{
					float		beta = (i % 3 == 0) ? 0.0f : (i % 3 == 1 ? 1.0f : -0.5f);

					if (check(mode, t, false, i % 4 == 1, edges[i][0], edges[i][1], edges[i][2],
							  i % 2 ? 1.0f : 1.5f, beta, mode != 2 && i % 2 == 0))
						failed++;
					else
						passed++;
				}
		/* B too big for one packing buffer: packed in column chunks */
		if (check(0, 2, false, false, 3, 4200, 2048, 1.0f, 0.0f, true) ||
			check(0, 1, false, true, 20, 4100, 2100, 1.0f, 1.0f, false))
			failed++;
		else
			passed++;
		/*
		 * GEMV: B from 512 KB to L2's size alternates (blocks of 256 columns,
		 * tails), larger B one row at a time (1.6 MB: larger than the L2 of
		 * the machines this runs on), small B neither; rows of A aligned and not
		 */
		for (int t = 1; t <= 2; t++)
			for (int tb = 0; tb < 2; tb++)
			{
				if (check_gemv_directions(t, tb, 1, 600, 250, 4) || check_gemv_directions(t, tb, 2, 531, 784, 1) ||
					check_gemv_directions(t, tb, 1, 531, 784, 0) || check_gemv_directions(t, tb, 1, 5, 9, 3))
					failed++;
				else
					passed++;
			}
		/* the nonzero lists' rows read with and without their prefetch (one AMD's choice, one Intel's) */
		for (int pf = 0; pf < 2; pf++)
		{
			(void) ox_sgemm_force_list_prefetch(pf);
			for (int t = 1; t <= 2; t++)
				for (int z = 0; z < 4; z++)
				{
					static const double shares[] = {0.0, 0.5, 0.95, 1.0};

					if (check_gemv_skip(t, 1, 531, 300, shares[z], false) ||
						check_gemv_skip(t, 2, 256, 256, shares[z], z == 1) ||
						check_gemv_skip(t, 1, 7, 33, shares[z], z == 2) ||
						check_gemv_skip(t, 1, 100, 45, shares[z], false))
						failed++;
					else
						passed++;
				}
			(void) ox_sgemm_force_list_prefetch(-1);
		}
	}
	if (check_nonzero_lists(false))
		failed++;
	else
		passed++;
	if (check_finish_and_zero_count())
		failed++;
	else
		passed++;
	if (check_list_prefetch_default())
		failed++;
	else
		passed++;
	if (__builtin_cpu_supports("avx512f"))
	{
		if (check_nonzero_lists(true))
			failed++;
		else
			passed++;
	}
	for (size_t f = 0; f < 2; f++)
	{
		/* N: within one sliver, one sliver and a bit, 3, 4 + 2 + 1 and 8 (AVX-512) slivers */
		static const int64_t packed[][2] = {{5, 1}, {33, 256}, {96, 257}, {229, 784}, {250, 100}, {600, 513}};

		if (!ox_sgemm_force_isa(isas[f]))
			continue;
		for (size_t i = 0; i < sizeof(packed) / sizeof(packed[0]); i++)
			for (int z = 0; z < 3; z++)
				for (int variant = 0; variant < 4; variant++)
					if (check_packed_gemv(1 + (int) (i + variant) % 2, 1 + (int) (i + z) % 2, packed[i][0],
										  packed[i][1], z * 0.5, variant))
						failed++;
					else
						passed++;
	}
	for (size_t f = 0; f < 2; f++)
	{
		/* N past the wide chunks: 1 to 7 vectors of 16 (of 8 with AVX2) in one pass, and a tail */
		static const int64_t row_sums[][2] = {{1, 1}, {1, 256}, {7, 33}, {16, 100}, {33, 512}, {256, 100},
		{300, 256}, {531, 17}, {60, 100}, {64, 37}, {80, 100}, {100, 100}, {112, 70}, {200, 256}};

		if (!ox_sgemm_force_isa(isas[f]))
			continue;
		for (size_t i = 0; i < sizeof(row_sums) / sizeof(row_sums[0]); i++)
			for (int z = 0; z < 3; z++)
				if (check_row_sums(row_sums[i][0], row_sums[i][1], z * 0.5))
					failed++;
				else
					passed++;
		/* rows longer than the list on the stack: not taken */
		{
			float		x[513] = {0},
					   *B = calloc(513 * 4, sizeof(float)),
						y[4] = {0};
			ox_sgemm_epilogue plain = {.b_finite = true};

			if (ox_sgemm_row_sums(NULL, 4, 513, x, B, 4, &plain, y))
				failed++;
			else
				passed++;
			free(B);
		}
		for (int t = 1; t <= 2; t++)
			if (check_column(t, 3, 7, false, 1, 1.0f, 0.0f) ||
				check_column(t, 1030, 256, false, 1, 1.0f, 0.0f) ||
				check_column(t, 200, 100, false, 4, 0.5f, 1.0f) ||
				check_column(t, 77, 301, true, 1, 2.0f, -0.5f))
				failed++;
			else
				passed++;
	}
	for (size_t f = 0; f < 2; f++)
	{
		/*
		 * A with zeros: N in groups of four slivers, two and one, with
		 * tails; K in one to three blocks; rows past a task's 256
		 */
		static const int64_t shapes[][3] = {{8, 64, 16}, {13, 100, 33}, {40, 128, 256}, {100, 225, 300},
		{260, 161, 520}, {9, 1000, 17}, {270, 96, 130}};
		static const double shares[] = {0.1, 0.5, 0.8, 1.0};

		if (!ox_sgemm_force_isa(isas[f]))
			continue;
		for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
			for (int z = 0; z < 4; z++)
				for (int variant = 0; variant < 4; variant++)
					if (check_sparse(1 + (int) (i + variant + z) % 3, shapes[i][0], shapes[i][1], shapes[i][2],
									 shares[z], (i + z) % 2, (variant + z) % 2 == 0, variant))
						failed++;
					else
						passed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
