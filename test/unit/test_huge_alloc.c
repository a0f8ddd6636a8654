/*
 * test_huge_alloc.c
 *	  Long-lived buffers on their own 2 MB-aligned mappings
 *	  (src/util/huge_alloc.c): a buffer of 2 MB or more is one, writable end
 *	  to end, and ox_aligned_free unmaps it; a smaller one comes from the
 *	  heap as ox_aligned_alloc's do, and ox_aligned_free frees either kind,
 *	  also from several threads at once.  A mapping's pages are all made
 *	  before it is handed out, where the kernel can (MADV_POPULATE_WRITE,
 *	  Linux 5.14).  Whether the system backs the mappings with huge pages
 *	  is its choice and not checked, only printed.
 */
#include "util/tensor.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int	failures;
static int	checks;

#define CHECK(cond) do { checks++; if (!(cond)) { printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); failures++; } } while (0)

#define MB ((size_t) 1 << 20)

/* whether [p, p + len) is mapped in this process (mincore fails with ENOMEM where it is not) */
static int
mapped(void *p, size_t len)
{
	long		page = sysconf(_SC_PAGESIZE);
	unsigned char *vec = malloc(len / (size_t) page + 2);
	int			rc;

	rc = mincore(p, len, vec);
	free(vec);
	if (rc == 0)
		return 1;
	return errno == ENOMEM ? 0 : -1;
}

static void
check_sizes(void)
{
	size_t		sizes[] = {64, 4096, 2 * MB - 64, 2 * MB, 2 * MB + 1, 5 * MB + 12345, 33 * MB};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
	{
		size_t		n = sizes[i];
		unsigned char *p = ox_aligned_alloc_huge(n);
		int			big = n >= 2 * MB;
		int			ok = 1;

		CHECK(p != NULL);
		if (!p)
			continue;
		CHECK(((uintptr_t) p & 63) == 0);
		if (big)
			CHECK(((uintptr_t) p & (2 * MB - 1)) == 0);
		/* every byte writable, and what was written reads back */
		for (size_t k = 0; k < n; k++)
			p[k] = (unsigned char) (k * 7 + i);
		for (size_t k = 0; k < n && ok; k++)
			ok = p[k] == (unsigned char) (k * 7 + i);
		CHECK(ok);
		if (big)
			CHECK(mapped(p, n) == 1);
		ox_aligned_free(p);
		/* a mapping is gone once freed; a heap block stays the heap's */
		if (big)
			CHECK(mapped(p, n) == 0);
		/* freed or from the heap: not one of the mappings (any more) */
		CHECK(!ox_huge_free(p));
	}
	/* NULL is freed as free(NULL) is */
	ox_aligned_free(NULL);
	CHECK(!ox_huge_free(NULL));
}

/* how many of the pages of [p, p + len) are resident, or -1 */
static long
resident_pages(void *p, size_t len, long *pages)
{
	long		page = sysconf(_SC_PAGESIZE);
	size_t		n = (len + (size_t) page - 1) / (size_t) page;
	unsigned char *vec = malloc(n);
	long		r = 0;

	*pages = (long) n;
	if (!vec || mincore(p, len, vec) != 0)
	{
		free(vec);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		r += vec[i] & 1;
	free(vec);
	return r;
}

/*
 * A mapping comes with its pages made (the session's creation writes them
 * all; made at once, they cost no fault each), where the kernel populates
 */
static void
check_populated(void)
{
#ifdef MADV_POPULATE_WRITE
	size_t		n = 9 * MB + 4096;
	void	   *probe = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bool		can = probe != MAP_FAILED && madvise(probe, 4096, MADV_POPULATE_WRITE) == 0;
	unsigned char *p;
	long		pages,
				res;

	if (probe != MAP_FAILED)
		munmap(probe, 4096);
	if (!can)
	{
		printf("skipped: this kernel cannot populate a mapping (MADV_POPULATE_WRITE)\n");
		return;
	}
	p = ox_aligned_alloc_huge(n);
	CHECK(p != NULL);
	if (!p)
		return;
	res = resident_pages(p, n, &pages);
	CHECK(res == pages);
	/* and zeroed, as fresh anonymous memory is */
	CHECK(p[0] == 0 && p[n / 2] == 0 && p[n - 1] == 0);
	ox_aligned_free(p);
#endif
}

/* a heap buffer that happens to be 2 MB-aligned is still freed by free() */
static void
check_heap_aligned(void)
{
	void	   *p = NULL;

	CHECK(posix_memalign(&p, 2 * MB, 64) == 0);
	CHECK(!ox_huge_free(p));
	ox_aligned_free(p);
}

/* tensors of a model's constants: the same buffers, released by ox_tensor_release */
static void
check_tensor(void)
{
	ox_tensor	t;
	ox_status	st;
	int64_t		dims[2] = {1024, 1024};

	memset(&t, 0, sizeof(t));
	memset(&st, 0, sizeof(st));
	CHECK(ox_tensor_alloc_lasting(&t, OX_FLOAT, 2, dims, &st) == OX_OK);
	CHECK(t.data && ((uintptr_t) t.data & (2 * MB - 1)) == 0);
	if (t.data)
		memset(t.data, 1, 4 * MB);
	ox_tensor_release(&t);
	CHECK(t.data == NULL);
}

#define THREADS 4
#define ROUNDS 40

static void *
churn(void *arg)
{
	int			id = (int) (intptr_t) arg;
	void	   *held[8] = {0};
	int			bad = 0;

	for (int r = 0; r < ROUNDS; r++)
	{
		int			slot = (r * 5 + id) % 8;
		size_t		n = 2 * MB + (size_t) ((r + id) % 3) * MB;

		ox_aligned_free(held[slot]);
		held[slot] = ox_aligned_alloc_huge(n);
		if (!held[slot])
			bad++;
		else
			memset(held[slot], id, n);
	}
	for (int s = 0; s < 8; s++)
		ox_aligned_free(held[s]);
	return (void *) (intptr_t) bad;
}

static void
check_threads(void)
{
	pthread_t	th[THREADS];

	for (int i = 0; i < THREADS; i++)
		CHECK(pthread_create(&th[i], NULL, churn, (void *) (intptr_t) i) == 0);
	for (int i = 0; i < THREADS; i++)
	{
		void	   *bad = NULL;

		pthread_join(th[i], &bad);
		CHECK(bad == NULL);
	}
}

/* the kernel's AnonHugePages for this process, for the log */
static void
print_huge_pages(void)
{
	unsigned char *p = ox_aligned_alloc_huge(8 * MB);
	FILE	   *f = fopen("/proc/self/smaps_rollup", "r");
	char		line[256];

	if (p)
		memset(p, 1, 8 * MB);
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "AnonHugePages:", 14) == 0)
			printf("test_huge_alloc: with 8 MB written, %s", line);
	if (f)
		fclose(f);
	ox_aligned_free(p);
}

int
main(void)
{
	check_sizes();
	check_heap_aligned();
	check_populated();
	check_tensor();
	check_threads();
	print_huge_pages();
	printf("test_huge_alloc: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
