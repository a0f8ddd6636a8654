/*
 * peak.c
 *	  Measures, on `threads` cores at once, (1) the core clock, from a chain of
 *	  dependent integer multiplies (three cycles each), and (2) the fp32 FMA
 *	  throughput of the widest vectors it is compiled for (AVX-512, else AVX2),
 *	  from 12 independent vfmadd231ps chains per core.
 *	  bench/run.py compiles and runs it to state the machine's peak:
 *	  peak = cores x clock x FLOPs/cycle.
 *
 *	  gcc -O2 -mavx512f -mfma -pthread bench/peak.c -o peak && ./peak THREADS
 *	  (-mavx2 -mfma on a machine without AVX-512)
 *	  prints: threads ghz_per_core fma_gflops_total
 */
#include <immintrin.h>
#include <pthread.h>

/* the widest vectors the compiler was told of: 512 bits with -mavx512f, else 256 (-mavx2) */
#ifdef __AVX512F__
#define VREG "zmm"
#define LANES 16
#else
#define VREG "ymm"
#define LANES 8
#endif
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

	/* 12 independent accumulators (registers 0-11), 2 FMA ports x 4 cycles latency needs 8 */
	__asm__ volatile("vbroadcastss %0, %%" VREG "12\n\tvbroadcastss %1, %%" VREG "13\n\t"
					 "vmovaps %%" VREG "12, %%" VREG "0\n\tvmovaps %%" VREG "12, %%" VREG "1\n\tvmovaps %%" VREG "12, %%" VREG "2\n\t"
					 "vmovaps %%" VREG "12, %%" VREG "3\n\tvmovaps %%" VREG "12, %%" VREG "4\n\tvmovaps %%" VREG "12, %%" VREG "5\n\t"
					 "vmovaps %%" VREG "12, %%" VREG "6\n\tvmovaps %%" VREG "12, %%" VREG "7\n\tvmovaps %%" VREG "12, %%" VREG "8\n\t"
					 "vmovaps %%" VREG "12, %%" VREG "9\n\tvmovaps %%" VREG "12, %%" VREG "10\n\tvmovaps %%" VREG "12, %%" VREG "11"
					 ::"m"(r->sink), "m"(r->ghz):"xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6",
					 "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13");
	t0 = now();
	for (long i = 0; i < m; i++)
		__asm__ volatile("vfmadd231ps %%" VREG "12, %%" VREG "13, %%" VREG "0\n\tvfmadd231ps %%" VREG "12, %%" VREG "13, %%" VREG "1\n\t"
						 "vfmadd231ps %%" VREG "12, %%" VREG "13, %%" VREG "2\n\tvfmadd231ps %%" VREG "12, %%" VREG "13, %%" VREG "3\n\t"
						 "vfmadd231ps %%" VREG "12, %%" VREG "13, %%" VREG "4\n\tvfmadd231ps %%" VREG "12, %%" VREG "13, %%" VREG "5\n\t"
						 "vfmadd231ps %%" VREG "12, %%" VREG "13, %%" VREG "6\n\tvfmadd231ps %%" VREG "12, %%" VREG "13, %%" VREG "7\n\t"
						 "vfmadd231ps %%" VREG "12, %%" VREG "13, %%" VREG "8\n\tvfmadd231ps %%" VREG "12, %%" VREG "13, %%" VREG "9\n\t"
						 "vfmadd231ps %%" VREG "12, %%" VREG "13, %%" VREG "10\n\tvfmadd231ps %%" VREG "12, %%" VREG "13, %%" VREG "11"
						 :::"xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
						 "xmm9", "xmm10", "xmm11");
	r->gflops = (double) m * 12 * LANES * 2 / (now() - t0) / 1e9;
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
