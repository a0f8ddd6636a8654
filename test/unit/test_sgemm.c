/*
 * test_sgemm.c
 *	  ox_sgemm against a double-precision reference for shapes that hit
 *	  every edge (tiles, K blocks, N blocks, small-M paths), all transpose
 *	  combinations, alpha/beta, 1 and 2 threads, and with A or B packed ahead.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/sgemm.h"

static float
frand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return ((*s >> 9) & 0xffff) / 32768.0f - 1.0f;
}

static int
check(int mode, int threads, bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, float beta)
{
	int64_t		lda = ta ? M + 3 : K + 1,
				ldb = tb ? K + 2 : N + 5,
				ldc = N + 7;
	float	   *A = malloc(sizeof(float) * (ta ? K : M) * lda);
	float	   *B = malloc(sizeof(float) * (tb ? N : K) * ldb);
	float	   *C = malloc(sizeof(float) * M * ldc);
	float	   *C0 = malloc(sizeof(float) * M * ldc);
	unsigned	seed = (unsigned) (M * 131 + N * 7 + K);
	ox_kernel_ctx ctx;
	ox_status	st;
	int			bad = 0;

	for (int64_t i = 0; i < (ta ? K : M) * lda; i++)
		A[i] = frand(&seed);
	for (int64_t i = 0; i < (tb ? N : K) * ldb; i++)
		B[i] = frand(&seed);
	for (int64_t i = 0; i < M * ldc; i++)
		C0[i] = C[i] = beta == 0.0f ? NAN : frand(&seed);	/* beta 0 must not read C */
	memset(&ctx, 0, sizeof(ctx));
	ox_status_clear(&st);
	ctx.nthreads = threads;
	ctx.st = &st;
	if (mode == 0 && ox_sgemm(&ctx, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc) != OX_OK)
		bad = 1;
	if (mode == 1)
	{
		/* B packed ahead of time, as Gemm/MatMul do for constant weights */
		ox_sgemm_packed *pb = ox_sgemm_pack_b(tb, K, N, B, ldb, &st);

		if (!pb || ox_sgemm_packed_b(&ctx, ta, M, alpha, A, lda, pb, beta, C, ldc) != OX_OK)
			bad = 1;
		ox_sgemm_packed_free(pb);
	}
	if (mode == 2)
	{
		/* A packed ahead of time, as Conv does for its weights */
		ox_sgemm_packed *pa = ox_sgemm_pack_a(ta, M, K, A, lda, &st);

		if (!pa || ox_sgemm_packed_a(&ctx, pa, N, alpha, tb, B, ldb, beta, C, ldc) != OX_OK)
			bad = 1;
		ox_sgemm_packed_free(pa);
	}
	for (int64_t m = 0; m < M && !bad; m++)
		for (int64_t n = 0; n < N; n++)
		{
			double		s = 0;

			for (int64_t k = 0; k < K; k++)
				s += (double) (ta ? A[k * lda + m] : A[m * lda + k]) * (tb ? B[n * ldb + k] : B[k * ldb + n]);
			s = alpha * s + (beta != 0.0f ? beta * C0[m * ldc + n] : 0.0);
			if (!(fabs(C[m * ldc + n] - s) <= 1e-4 * (1 + fabs(s)) * sqrt((double) K + 1)))
			{
				printf("FAIL sgemm mode=%d t=%d ta=%d tb=%d M=%lld N=%lld K=%lld at (%lld,%lld): %g vs %g\n",
					   mode, threads, ta, tb, (long long) M, (long long) N, (long long) K,
					   (long long) m, (long long) n, C[m * ldc + n], s);
				bad = 1;
				break;
			}
		}
	free(A);
	free(B);
	free(C);
	free(C0);
	return bad;
}

int
main(void)
{
	static const int64_t sizes[][3] = {
		{1, 1, 1}, {1, 10, 784}, {2, 33, 17}, {3, 5, 7}, {12, 32, 16}, {13, 33, 385},
		{25, 70, 800}, {200, 50, 64}, {64, 3136, 147}, {7, 2100, 9}, {300, 300, 300},
	};
	int			passed = 0,
				failed = 0;

	printf("sgemm kernels: %s\n", ox_sgemm_isa());
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (int t = 1; t <= 2; t++)
			for (int ta = 0; ta < 2; ta++)
				for (int tb = 0; tb < 2; tb++)
				{
					float		beta = (i % 3 == 0) ? 0.0f : (i % 3 == 1 ? 1.0f : 0.5f);

					for (int mode = 0; mode < 3; mode++)
						if (check(mode, t, ta, tb, sizes[i][0], sizes[i][1], sizes[i][2],
								  i % 2 ? 1.0f : 0.75f, beta))
							failed++;
						else
							passed++;
				}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
