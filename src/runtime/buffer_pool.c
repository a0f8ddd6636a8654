/*
 * buffer_pool.c
 *	  The session's pool of released run buffers: a tensor whose shape is
 *	  not planned ahead takes a pooled buffer that fits instead of calling
 *	  malloc, so a run with repeating shapes allocates nothing.
 *
 * Buffers are binned by capacity (exact bins below 16 bytes, then eight
 * per power of two, as in a two-level segregated-fit allocator), so taking
 * one looks at one bin and the few non-empty bins above it, however many
 * buffers the pool holds.  A single list searched from end to end made a
 * 2,700-node IsolationForest export spend a third of a batch-1 run in the
 * search (thousands of small buffers, one search per node).
 *
 * Which buffer fits is ox_tensor_alloc's rule for keeping a buffer: at
 * least the bytes asked for and at most four times that plus 4 KiB.  Any
 * buffer inside that range is found when one is pooled (a run never
 * mallocs while a fitting buffer waits here, or the pool would grow with
 * every run); among them the smallest bin wins.
 */
#include "runtime/exec.h"

#include <stdlib.h>
#include <string.h>

static int
bin_of(size_t cap)
{
	int			log2;

	if (cap < 16)
		return (int) cap;
	log2 = 63 - __builtin_clzll((unsigned long long) cap);
	return 16 + (log2 - 4) * 8 + (int) ((cap >> (log2 - 3)) & 7);
}

/* the smallest capacity bin b holds */
static size_t
bin_floor(int b)
{
	int			log2;

	if (b < 16)
		return (size_t) b;
	log2 = 4 + (b - 16) / 8;
	return ((size_t) 8 + (size_t) ((b - 16) % 8)) << (log2 - 3);
}

void
ox_pool_put(ox_pool *pool, ox_tensor *t)
{
	ox_pool_bin *bin;

	if (!t->owns || !t->data || t->dtype == OX_STRING)
	{
		ox_tensor_release(t);
		return;
	}
	if (!pool->bins)
	{
		pool->bins = calloc(OX_POOL_BINS, sizeof(ox_pool_bin));
		if (!pool->bins)
		{
			ox_tensor_release(t);
			return;
		}
	}
	bin = &pool->bins[bin_of(t->capacity)];
	if (bin->n == bin->cap)
	{
		int			cap = bin->cap ? bin->cap * 2 : 8;
		ox_buffer  *b = realloc(bin->bufs, sizeof(ox_buffer) * cap);

		if (!b)
		{
			ox_tensor_release(t);
			return;
		}
		bin->bufs = b;
		bin->cap = cap;
	}
	bin->bufs[bin->n].ptr = t->data;
	bin->bufs[bin->n].cap = t->capacity;
	bin->n++;
	pool->n++;
	pool->bytes += t->capacity;
	t->data = NULL;
	t->capacity = 0;
	t->owns = false;
}

static void
take_at(ox_pool *pool, ox_pool_bin *bin, int i, ox_buffer *out)
{
	*out = bin->bufs[i];
	bin->bufs[i] = bin->bufs[--bin->n];
	pool->n--;
	pool->bytes -= out->cap;
}

/*
 * Take a pooled buffer of at least bytes and at most 4 * bytes + 4 KiB into
 * *out; false when none fits.
 */
bool
ox_pool_take(ox_pool *pool, size_t bytes, ox_buffer *out)
{
	size_t		most = bytes > (SIZE_MAX - 4096) / 4 ? SIZE_MAX : 4 * bytes + 4096;
	int			first;

	if (pool->n == 0 || bytes == 0)
		return false;
	first = bin_of(bytes);
	for (int b = first; b < OX_POOL_BINS && bin_floor(b) <= most; b++)
	{
		ox_pool_bin *bin = &pool->bins[b];

		/*
		 * The first bin may hold buffers a little smaller than asked for, and
		 * the last one looked at may hold some too big; every other bin's
		 * buffers all fit.  Newest first: the one most likely still in cache.
		 */
		for (int i = bin->n - 1; i >= 0; i--)
			if (bin->bufs[i].cap >= bytes && bin->bufs[i].cap <= most)
			{
				take_at(pool, bin, i, out);
				return true;
			}
	}
	return false;
}

void
ox_pool_free(ox_pool *pool)
{
	if (pool->bins)
		for (int b = 0; b < OX_POOL_BINS; b++)
		{
			for (int i = 0; i < pool->bins[b].n; i++)
				ox_aligned_free(pool->bins[b].bufs[i].ptr);
			free(pool->bins[b].bufs);
		}
	free(pool->bins);
	memset(pool, 0, sizeof(*pool));
}
