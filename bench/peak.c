/*
 * peak.c
 *	  Measures, on `threads` cores at once, (1) the core clock, from a chain of
 *	  dependent integer multiplies (three cycles each), and (2) the AVX-512 fp32 FMA
 *	  throughput, from 12 independent vfmadd231ps chains per core.
 *	  bench/run.py compiles and runs it to state the machine's peak:
 *	  peak = cores x clock x FLOPs/cycle.
 *
 *	  gcc -O2 -mavx512f -mfma -pthread bench/peak.c -o peak && ./peak THREADS
 *	  prints: threads ghz_per_core fma_gflops_total
 */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);	/* time on the CPU: other processes do not count */
	return t.tv_sec + t.tv_nsec * 1e-9;
}

typedef struct
{
	double		ghz;
	double		gflops;
	float		sink;
} result;

static void *
work(void *arg)
{
	result	   *r = arg;
	long		n = 50000000;
	unsigned long x = 0;
	double		t0 = now();

	/*
	 * imul, whose 3-cycle latency is the same on every x86-64 core since
	 * Sandy Bridge; a chain of "add $1" would overstate the clock on cores
	 * whose renamer folds small immediate adds (Golden Cove and later).
	 */
	x = 1;
	for (long i = 0; i < n; i++)
		__asm__ volatile("imul %0, %0\n\timul %0, %0\n\timul %0, %0\n\timul %0, %0":"+r"(x));
	r->ghz = 4.0 * 3 * n / (now() - t0) / 1e9;
	r->sink = 1.0f;

	long		m = 20000000;

	/* 12 independent accumulators (zmm0-11), 2 FMA ports x 4 cycles latency needs 8 */
	__asm__ volatile("vbroadcastss %0, %%zmm12\n\tvbroadcastss %1, %%zmm13\n\t"
					 "vmovaps %%zmm12, %%zmm0\n\tvmovaps %%zmm12, %%zmm1\n\tvmovaps %%zmm12, %%zmm2\n\t"
					 "vmovaps %%zmm12, %%zmm3\n\tvmovaps %%zmm12, %%zmm4\n\tvmovaps %%zmm12, %%zmm5\n\t"
					 "vmovaps %%zmm12, %%zmm6\n\tvmovaps %%zmm12, %%zmm7\n\tvmovaps %%zmm12, %%zmm8\n\t"
					 "vmovaps %%zmm12, %%zmm9\n\tvmovaps %%zmm12, %%zmm10\n\tvmovaps %%zmm12, %%zmm11"
					 ::"m"(r->sink), "m"(r->ghz):"xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6",
					 "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13");
	t0 = now();
	for (long i = 0; i < m; i++)
		__asm__ volatile("vfmadd231ps %%zmm12, %%zmm13, %%zmm0\n\tvfmadd231ps %%zmm12, %%zmm13, %%zmm1\n\t"
						 "vfmadd231ps %%zmm12, %%zmm13, %%zmm2\n\tvfmadd231ps %%zmm12, %%zmm13, %%zmm3\n\t"
						 "vfmadd231ps %%zmm12, %%zmm13, %%zmm4\n\tvfmadd231ps %%zmm12, %%zmm13, %%zmm5\n\t"
						 "vfmadd231ps %%zmm12, %%zmm13, %%zmm6\n\tvfmadd231ps %%zmm12, %%zmm13, %%zmm7\n\t"
						 "vfmadd231ps %%zmm12, %%zmm13, %%zmm8\n\tvfmadd231ps %%zmm12, %%zmm13, %%zmm9\n\t"
						 "vfmadd231ps %%zmm12, %%zmm13, %%zmm10\n\tvfmadd231ps %%zmm12, %%zmm13, %%zmm11"
						 :::"xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
						 "xmm9", "xmm10", "xmm11");
	r->gflops = (double) m * 12 * 16 * 2 / (now() - t0) / 1e9;
	__asm__ volatile("vzeroupper":::"memory");
	return NULL;
}
int
main(int argc, char **argv)
{
	int			threads = argc > 1 ? atoi(argv[1]) : 1;
	pthread_t	t[64];
	result		r[64];
	double		ghz = 0, gflops = 0;

	if (threads < 1 || threads > 64)
		threads = 1;
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, work, &r[i]);
	for (int i = 0; i < threads; i++)
	{
		pthread_join(t[i], NULL);
		ghz += r[i].ghz / threads;
		gflops += r[i].gflops;
	}
	printf("%d %.3f %.1f\n", threads, ghz, gflops);
	return 0;
}
