/*
 * test_buffer_pool.c
 *	  The session's buffer pool (src/runtime/buffer_pool.c): a buffer taken
 *	  always fits (at least the bytes asked for, at most 4x + 4 KiB, the
 *	  rule ox_tensor_alloc keeps buffers by), one is found whenever one
 *	  fits (else a run would malloc beside a waiting buffer and the pool
 *	  would grow with every run), and the counts and bytes add up.
 */
#include "runtime/exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int	failures;
static int	checks;

#define CHECK(cond) do { checks++; if (!(cond)) { printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); failures++; } } while (0)

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t
next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* a capacity spread over every scale the bins cover, small ones often */
static size_t
random_capacity(void)
{
	int			log2 = (int) (next_random() % 22);
	size_t		base = (size_t) 1 << log2;

	return base + next_random() % base;
}

static void
put_buffer(ox_pool *pool, size_t cap)
{
	ox_tensor	t;

	memset(&t, 0, sizeof(t));
	t.dtype = OX_UINT8;
	t.data = ox_aligned_alloc(cap);
	t.capacity = cap;
	t.owns = true;
	ox_pool_put(pool, &t);
	CHECK(t.data == NULL && !t.owns);
}

static bool
fits(size_t cap, size_t bytes)
{
	return cap >= bytes && cap <= 4 * bytes + 4096;
}

/* every buffer in the pool, by a plain walk over the bins */
static int
pooled_caps(const ox_pool *pool, size_t *caps, int max)
{
	int			n = 0;

	if (!pool->bins)
		return 0;
	for (int b = 0; b < OX_POOL_BINS; b++)
		for (int i = 0; i < pool->bins[b].n && n < max; i++)
			caps[n++] = pool->bins[b].bufs[i].cap;
	return n;
}

/* random puts and takes, each take checked against a scan of what is pooled */
static void
check_against_scan(void)
{
	enum
	{
		MAXBUF = 4000
	};
	size_t	   *caps = malloc(sizeof(size_t) * MAXBUF);
	ox_pool		pool;
	int			taken = 0,
				refused = 0;

	memset(&pool, 0, sizeof(pool));
	for (int step = 0; step < 20000; step++)
	{
		if (pool.n < MAXBUF - 1 && next_random() % 2 != 0)
		{
			put_buffer(&pool, random_capacity());
			continue;
		}
		{
			size_t		bytes = random_capacity();
			int			n = pooled_caps(&pool, caps, MAXBUF);
			size_t		sum = 0;
			bool		any = false;
			ox_buffer	b;
			bool		got;

			for (int i = 0; i < n; i++)
			{
				any |= fits(caps[i], bytes);
				sum += caps[i];
			}
			CHECK(n == pool.n);
			CHECK(sum == pool.bytes);
			got = ox_pool_take(&pool, bytes, &b);
			CHECK(got == any);
			if (got)
			{
				CHECK(fits(b.cap, bytes));
				CHECK(pool.n == n - 1);
				CHECK(pool.bytes == sum - b.cap);
				/* the buffer is the caller's now, all of it writable */
				memset(b.ptr, 0x5a, b.cap);
				ox_aligned_free(b.ptr);
				taken++;
			}
			else
			{
				CHECK(pool.n == n);
				refused++;
			}
		}
	}
	if (!(taken > 1000 && refused > 100))
		printf("taken %d, refused %d\n", taken, refused);
	CHECK(taken > 1000 && refused > 100);
	ox_pool_free(&pool);
	CHECK(pool.n == 0 && pool.bytes == 0 && pool.bins == NULL);
	free(caps);
}

/* the smallest fitting bin wins; exact sizes and the edges of the range */
static void
check_choices(void)
{
	ox_pool		pool;
	ox_buffer	b;

	memset(&pool, 0, sizeof(pool));
	CHECK(!ox_pool_take(&pool, 8, &b));
	put_buffer(&pool, 100000);
	put_buffer(&pool, 8);
	put_buffer(&pool, 24);
	put_buffer(&pool, 4096 + 4 * 10);
	CHECK(pool.n == 4);

	/* 8 bytes: the 8-byte buffer, not the 24 */
	CHECK(ox_pool_take(&pool, 8, &b) && b.cap == 8);
	ox_aligned_free(b.ptr);
	/* 7 bytes: 24 fits (7 * 4 + 4096 allows it) */
	CHECK(ox_pool_take(&pool, 7, &b) && b.cap == 24);
	ox_aligned_free(b.ptr);
	/* 9 bytes: 4136 is 4 * 9 + 4096 + 4, one byte more than allowed */
	CHECK(!ox_pool_take(&pool, 9, &b));
	/* 10 bytes: exactly the limit */
	CHECK(ox_pool_take(&pool, 10, &b) && b.cap == 4136);
	ox_aligned_free(b.ptr);
	/* bigger than anything pooled */
	CHECK(!ox_pool_take(&pool, 100001, &b));
	/* a request whose limit would overflow size_t */
	CHECK(!ox_pool_take(&pool, SIZE_MAX / 2, &b));
	CHECK(ox_pool_take(&pool, 30000, &b) && b.cap == 100000);
	ox_aligned_free(b.ptr);
	CHECK(pool.n == 0 && pool.bytes == 0);
	/* zero bytes never takes (ox_tensor_alloc allocates anew for it) */
	put_buffer(&pool, 64);
	CHECK(!ox_pool_take(&pool, 0, &b));
	ox_pool_free(&pool);
}

/* a string tensor or a view is released, not pooled */
static void
check_not_pooled(void)
{
	ox_pool		pool;
	ox_tensor	t;
	char		local[16];

	memset(&pool, 0, sizeof(pool));
	memset(&t, 0, sizeof(t));
	t.dtype = OX_FLOAT;
	t.data = local;
	t.capacity = sizeof(local);
	t.owns = false;
	ox_pool_put(&pool, &t);
	CHECK(pool.n == 0 && pool.bytes == 0);
	ox_pool_free(&pool);
}

int
main(void)
{
	check_choices();
	check_not_pooled();
	check_against_scan();
	printf("test_buffer_pool: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
