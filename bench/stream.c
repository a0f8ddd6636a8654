/*
 * stream.c
 *	  How fast one core reads a buffer of BYTES again and again, the way a
 *	  batch-1 call of a small dense network reads its weights: each pass
 *	  sums the whole buffer with AVX-512 (else AVX2) loads in four independent chains,
 *	  and the best of 20 blocks of 50 passes (by this thread's CPU time) is
 *	  reported.  bench/run.py runs it with a model's weight bytes to state
 *	  the floor a call that streams them cannot beat on this machine.
 *
 *	  gcc -O2 -mavx512f -mfma bench/stream.c -o stream && ./stream BYTES
 *	  (-mavx2 -mfma on a machine without AVX-512)
 *	  prints: bytes seconds_per_pass gb_per_second
 */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* noinline and a returned sum: no pass can be merged with another or dropped */
__attribute__((noinline)) static float
pass(const float *w, size_t n)
{
#ifdef __AVX512F__
	__m512		a0 = _mm512_setzero_ps(),
				a1 = a0,
				a2 = a0,
				a3 = a0;

	for (size_t i = 0; i + 64 <= n; i += 64)
	{
		a0 = _mm512_add_ps(a0, _mm512_load_ps(w + i));
		a1 = _mm512_add_ps(a1, _mm512_load_ps(w + i + 16));
		a2 = _mm512_add_ps(a2, _mm512_load_ps(w + i + 32));
		a3 = _mm512_add_ps(a3, _mm512_load_ps(w + i + 48));
	}
	return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
#else
	/* two loads of a cache line, as the 512-bit loop's one */
	__m256		a[8];
	float		out[8];

	for (int j = 0; j < 8; j++)
		a[j] = _mm256_setzero_ps();
	for (size_t i = 0; i + 64 <= n; i += 64)
		for (int j = 0; j < 8; j++)
			a[j] = _mm256_add_ps(a[j], _mm256_load_ps(w + i + 8 * j));
	for (int j = 1; j < 8; j++)
		a[0] = _mm256_add_ps(a[0], a[j]);
	_mm256_storeu_ps(out, a[0]);
	return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
#endif
}

int
main(int argc, char **argv)
{
	size_t		bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : 0;
	size_t		n = (bytes / sizeof(float) + 63) / 64 * 64;
	float	   *w;
	double		best = 1e30;
	volatile float sink = 0;

	if (n == 0)
	{
		fprintf(stderr, "usage: stream BYTES\n");
		return 2;
	}
	w = aligned_alloc(64, n * sizeof(float));
	if (!w)
		return 1;
	for (size_t i = 0; i < n; i++)
		w[i] = (float) (i % 97) * 1e-3f;
	for (int i = 0; i < 50; i++)
		sink += pass(w, n);
	for (int b = 0; b < 20; b++)
	{
		double		t0 = now(),
					t;

		for (int i = 0; i < 50; i++)
		{
			__asm__ volatile("":::"memory");
			sink += pass(w, n);
		}
		t = (now() - t0) / 50;
		if (t < best)
			best = t;
	}
	printf("%zu %.9f %.1f\n", n * sizeof(float), best, n * sizeof(float) / best / 1e9);
	free(w);
	return sink == 12345.0f ? 3 : 0;
}
