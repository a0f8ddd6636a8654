/*
 * huge_alloc.c
 *	  Long-lived large buffers (a model's weights as loaded, and as each
 *	  kernel packs them) on transparent huge pages where the kernel allows.
 *
 * A session's weights are written once, at creation, into fresh memory:
 * with 4 KB pages that is a page fault per 4 KB, and the faults, not the
 * packing, were most of creating a session for a large model (ResNet-50,
 * about 280 MB between the parsed model and the packed copies: 129 ms of
 * which about 70 in the kernel's fault path on this host).  A buffer from
 * HUGE_MIN bytes on is mapped here on its own, 2 MB-aligned, and its pages
 * are made at once (MADV_POPULATE_WRITE: a system call per step, no fault
 * per page), on transparent huge pages where the kernel allows, each 2 MB
 * one page: fewer faults, and fewer TLB misses for the kernels that read
 * the weights at every run (ResNet-50 at one thread ran 8% slower on 4 KB
 * pages).
 *
 * But a huge page is cheap to make only when a free one is at hand.  When
 * none is (memory the virtual machine gave back to its host, or a database
 * server's memory full of page cache, which the kernel must compact to
 * free 2 MB), making one is slow, and with all the pages advised at once,
 * as before, the first session a process created paid for it: a new
 * backend's first ResNet-50 session took 1.25 s against 0.14 s in the same
 * process after, and VGG-16 (553 MB) 6 s against 0.6.  So the pages are
 * made in steps of HUGE_STEP, timed: a step slower than HUGE_SLOW_NS a
 * huge page leaves the rest of the buffer, and every buffer for the next
 * HUGE_RETRY_NS, on 4 KB pages, advised MADV_HUGEPAGE only once they are
 * made, so that the kernel's background collapse (khugepaged) may turn
 * them into huge pages later instead of the backend waiting for them now.
 * The worst wait is one slow step (16 MB: about 0.1 s).  Whether huge pages
 * are used at all is the system's choice (/sys/kernel/mm/transparent_hugepage).
 * Only long-lived buffers come here: a mapping per call would put a system
 * call and its faults on every run, where the C library's heap reuses
 * freed memory.
 *
 * ox_aligned_free frees both kinds: the mappings made here are in a list
 * (a session holds tens of them; 2 MB-aligned pointers only are looked
 * up), the rest came from posix_memalign.
 */
#include "util/tensor.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#define HUGE_PAGE ((size_t) 2 << 20)
#define HUGE_MIN HUGE_PAGE
/* pages made per timed step */
#define HUGE_STEP (8 * HUGE_PAGE)
/*
 * A huge page slower than this to make: 4 KB pages instead.  A free one
 * took 0.3 ms here, 4 KB pages 1 ms per 2 MB, a huge page that had to be
 * found 8 to 15 ms.
 */
#define HUGE_SLOW_NS 2000000
/* how long 4 KB pages are made after a slow step, before huge ones are tried again */
#define HUGE_RETRY_NS INT64_C(10000000000)

typedef struct huge_block
{
	void	   *p;
	size_t		len;			/* bytes mapped from p */
	struct huge_block *next;
} huge_block;

static pthread_mutex_t huge_lock = PTHREAD_MUTEX_INITIALIZER;
static huge_block *huge_blocks;

static int64_t
monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* the time until which buffers get 4 KB pages (a huge page was slow to make) */
static int64_t huge_slow_until;

/*
 * Make the pages of [p, p + len), on huge pages while they come fast (see
 * the file's header); where the kernel cannot populate (before 5.14) the
 * buffer is left to fault as it is written, on the pages the system's
 * policy gives.
 */
static void
make_pages(char *p, size_t len)
{
#if defined(MADV_POPULATE_WRITE) && defined(MADV_HUGEPAGE)
	char	   *end = p + len;

	if (monotonic_ns() >= __atomic_load_n(&huge_slow_until, __ATOMIC_RELAXED) &&
		madvise(p, len, MADV_HUGEPAGE) == 0)
	{
		while (p < end)
		{
			size_t		step = (size_t) (end - p) < HUGE_STEP ? (size_t) (end - p) : HUGE_STEP;
			int64_t		t0 = monotonic_ns();
			int64_t		t1;

			if (madvise(p, step, MADV_POPULATE_WRITE) != 0)
				return;			/* EINVAL: not supported; ENOMEM: the writes will tell */
			p += step;
			t1 = monotonic_ns();
			if (t1 - t0 > HUGE_SLOW_NS * (int64_t) ((step + HUGE_PAGE - 1) / HUGE_PAGE))
			{
				__atomic_store_n(&huge_slow_until, t1 + HUGE_RETRY_NS, __ATOMIC_RELAXED);
				break;
			}
		}
		if (p >= end)
			return;
		(void) madvise(p, (size_t) (end - p), MADV_NOHUGEPAGE);
	}
	/* 4 KB pages now, huge ones in the background later */
	if (madvise(p, (size_t) (end - p), MADV_POPULATE_WRITE) == 0)
		(void) madvise(p, (size_t) (end - p), MADV_HUGEPAGE);
#else
	(void) p;
	(void) len;
#endif
}

void *
ox_aligned_alloc_huge(size_t bytes)
{
	size_t		len,
				span;
	char	   *raw,
			   *p;
	huge_block *b;

	if (bytes < HUGE_MIN || bytes > SIZE_MAX - 2 * HUGE_PAGE)
		return ox_aligned_alloc(bytes);
	len = (bytes + 4095) & ~(size_t) 4095;
	span = len + HUGE_PAGE;
	if (!(b = malloc(sizeof(*b))))
		return NULL;
	raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
	{
		free(b);
		return NULL;
	}
	/* the 2 MB-aligned part, the rest unmapped */
	p = (char *) (((uintptr_t) raw + HUGE_PAGE - 1) & ~(uintptr_t) (HUGE_PAGE - 1));
	if (p > raw)
		munmap(raw, (size_t) (p - raw));
	if (raw + span > p + len)
		munmap(p + len, (size_t) (raw + span - (p + len)));
	make_pages(p, len);
	b->p = p;
	b->len = len;
	pthread_mutex_lock(&huge_lock);
	b->next = huge_blocks;
	huge_blocks = b;
	pthread_mutex_unlock(&huge_lock);
	return p;
}

/* true when p was mapped by ox_aligned_alloc_huge, and is now unmapped */
bool
ox_huge_free(void *p)
{
	huge_block **link,
			   *b = NULL;

	if (((uintptr_t) p & (HUGE_PAGE - 1)) != 0)
		return false;
	pthread_mutex_lock(&huge_lock);
	for (link = &huge_blocks; *link; link = &(*link)->next)
		if ((*link)->p == p)
		{
			b = *link;
			*link = b->next;
			break;
		}
	pthread_mutex_unlock(&huge_lock);
	if (!b)
		return false;
	munmap(b->p, b->len);
	free(b);
	return true;
}
