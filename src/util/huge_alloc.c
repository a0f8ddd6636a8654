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
 * HUGE_MIN bytes on is mapped here on its own, aligned to 2 MB, and
 * advised MADV_HUGEPAGE: each 2 MB then costs one fault.  Whether the
 * advice is taken is the system's choice
 * (/sys/kernel/mm/transparent_hugepage/enabled: "never" leaves 4 KB
 * pages, at the old speed).  Only long-lived buffers come here: a mapping
 * per call would put a system call and its faults on every run, where the
 * C library's heap reuses freed memory.
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

#define HUGE_PAGE ((size_t) 2 << 20)
#define HUGE_MIN HUGE_PAGE

typedef struct huge_block
{
	void	   *p;
	size_t		len;			/* bytes mapped from p */
	struct huge_block *next;
} huge_block;

static pthread_mutex_t huge_lock = PTHREAD_MUTEX_INITIALIZER;
static huge_block *huge_blocks;

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
	/* advice only: where it is not taken the buffer has ordinary pages */
#ifdef MADV_HUGEPAGE
	(void) madvise(p, len, MADV_HUGEPAGE);
#endif
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
