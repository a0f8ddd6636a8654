/*
 * parallel.c
 *	  The intra-op thread pool behind ox_parallel_for.
 *
 * One pool per process, created lazily by the first parallel loop that
 * asks for more than one thread (never at library load, so a PostgreSQL
 * postmaster that preloads the library has no threads to lose at fork).
 * Workers sleep on a condition variable between runs: nothing spins while
 * a backend idles.  Within a run (ox_parallel_run_begin/end, called by the
 * executor) a worker that finishes a loop spins for the next one, for up to
 * OX_SPIN_NS, and the caller spins for the workers' last chunks, since a
 * run is a sequence of loops often shorter than a sleeping thread takes to
 * wake (a futex wake-up, and in a VM an idle virtual CPU's).  Workers run
 * pure computation handed to them by kernels; they never call back into
 * the caller's environment.
 *
 * A fork() child must not use a pool inherited from its parent (its
 * threads did not survive); the pool records its owner pid and a child
 * simply builds its own.
 *
 * Cancellation: a loop is often most of a kernel's time (a big GEMM or
 * convolution, an elementwise op over a huge tensor), so the calling thread
 * polls the abort callback between the chunks it runs and, when the run is
 * canceled, lets nobody claim another chunk.  Only the caller polls: worker
 * threads never call into the caller's environment.  To keep the wait for
 * a cancel short, a polled loop is cut into at least OX_POLL_CHUNKS chunks,
 * and a single-threaded one into slices of about OX_SLICE_MIN_NS to
 * OX_SLICE_MAX_NS each (one call per slice costs nothing measurable).
 */
#include "kernels/kernel.h"

#include <immintrin.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define OX_MAX_THREADS 64
#define OX_POLL_CHUNKS 64
#define OX_SLICE_MIN_NS 2000000
#define OX_SLICE_MAX_NS 20000000
/* how long a worker spins for the next loop of a run before it sleeps */
#define OX_SPIN_NS 2000000

typedef struct pool_job
{
	ox_range_fn fn;
	void	   *arg;
	int64_t		n;
	int64_t		chunk;
	int64_t		next;			/* next unclaimed index, under lock */
	int			active;			/* workers still inside the job */
	uint64_t	generation;
} pool_job;

typedef struct thread_pool
{
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_cond_t done;
	pthread_t	threads[OX_MAX_THREADS];
	int			n_threads;		/* workers, not counting the caller */
	pool_job	job;
	pid_t		owner;
} thread_pool;

static thread_pool *pool;

/* runs in progress that keep the workers spinning between loops */
static int	hot_runs;

void
ox_parallel_run_begin(void)
{
	__atomic_add_fetch(&hot_runs, 1, __ATOMIC_RELAXED);
}

void
ox_parallel_run_end(void)
{
	__atomic_sub_fetch(&hot_runs, 1, __ATOMIC_RELAXED);
}

static int64_t now_ns(void);

/* whether a spin that began at `start` has had its OX_SPIN_NS (checked every 1024 turns) */
static inline bool
spin_expired(unsigned turn, int64_t start)
{
	return (turn & 1023) == 0 && now_ns() - start > OX_SPIN_NS;
}

/*
 * Without the lock: wait for a job newer than `seen` while a run is hot,
 * for at most OX_SPIN_NS.  Returns whether one came.
 */
static bool
spin_for_job(thread_pool *p, uint64_t seen)
{
	int64_t		start = now_ns();

	for (unsigned i = 1;; i++)
	{
		if (__atomic_load_n(&p->job.generation, __ATOMIC_ACQUIRE) != seen)
			return true;
		if (__atomic_load_n(&hot_runs, __ATOMIC_RELAXED) <= 0)
			return false;
		if (spin_expired(i, start))
			return false;
		_mm_pause();
	}
}

/* Without the lock: wait for the job's chunks to be done, briefly */
static void
spin_for_done(thread_pool *p)
{
	int64_t		start = now_ns();

	for (unsigned i = 1;; i++)
	{
		if (__atomic_load_n(&p->job.active, __ATOMIC_ACQUIRE) <= 0 &&
			__atomic_load_n(&p->job.next, __ATOMIC_ACQUIRE) >= p->job.n)
			return;
		if (spin_expired(i, start))
			return;
		_mm_pause();
	}
}

static bool
claim(pool_job *job, int64_t *begin, int64_t *end)
{
	if (job->next >= job->n)
		return false;
	*begin = job->next;
	*end = job->next + job->chunk < job->n ? job->next + job->chunk : job->n;
	__atomic_store_n(&job->next, *end, __ATOMIC_RELEASE);
	return true;
}

static void *
worker_main(void *arg)
{
	thread_pool *p = arg;
	uint64_t	seen = 0;

	pthread_mutex_lock(&p->lock);
	for (;;)
	{
		int64_t		b,
					e;

		while (p->job.generation == seen)
		{
			bool		came = false;

			if (__atomic_load_n(&hot_runs, __ATOMIC_RELAXED) > 0)
			{
				pthread_mutex_unlock(&p->lock);
				came = spin_for_job(p, seen);
				pthread_mutex_lock(&p->lock);
			}
			if (!came && p->job.generation == seen)
				pthread_cond_wait(&p->wake, &p->lock);
		}
		seen = p->job.generation;
		__atomic_store_n(&p->job.active, p->job.active + 1, __ATOMIC_RELEASE);
		while (claim(&p->job, &b, &e))
		{
			pthread_mutex_unlock(&p->lock);
			p->job.fn(p->job.arg, b, e);
			pthread_mutex_lock(&p->lock);
		}
		__atomic_store_n(&p->job.active, p->job.active - 1, __ATOMIC_RELEASE);
		if (p->job.active == 0)
			pthread_cond_signal(&p->done);
	}
	return NULL;
}

static thread_pool *
get_pool(int want_workers)
{
	if (pool && pool->owner != getpid())
		pool = NULL;			/* inherited across fork: its threads are gone */
	if (want_workers > OX_MAX_THREADS)
		want_workers = OX_MAX_THREADS;
	if (!pool)
	{
		pool = calloc(1, sizeof(thread_pool));
		if (!pool)
			return NULL;
		pthread_mutex_init(&pool->lock, NULL);
		pthread_cond_init(&pool->wake, NULL);
		pthread_cond_init(&pool->done, NULL);
		pool->owner = getpid();
	}
	pthread_mutex_lock(&pool->lock);
	while (pool->n_threads < want_workers)
	{
		if (pthread_create(&pool->threads[pool->n_threads], NULL, worker_main, pool) != 0)
			break;
		pool->n_threads++;
	}
	pthread_mutex_unlock(&pool->lock);
	return pool;
}

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * One thread, polled: slices whose size adapts so that each takes a few
 * milliseconds, whatever fn costs per index.
 */
static void
serial_polled(ox_kernel_ctx *ctx, int64_t n, int64_t min_chunk, ox_range_fn fn, void *arg)
{
	int64_t		step = n / (OX_POLL_CHUNKS * 4);

	if (step < min_chunk)
		step = min_chunk;
	for (int64_t b = 0; b < n;)
	{
		int64_t		e = n - b > step ? b + step : n;
		int64_t		t0 = now_ns(),
					dt;

		fn(arg, b, e);
		b = e;
		if (b < n && ox_kernel_should_abort(ctx))
			return;
		dt = now_ns() - t0;
		if (dt < OX_SLICE_MIN_NS && step < n / 2)
			step *= 2;
		else if (dt > OX_SLICE_MAX_NS && step / 2 >= min_chunk)
			step /= 2;
	}
}

void
ox_parallel_for(ox_kernel_ctx *ctx, int64_t n, int64_t min_chunk, ox_range_fn fn, void *arg)
{
	int			threads = ctx ? ctx->nthreads : 1;
	/* only the thread running the kernel may ask the abort callback */
	bool		polled = ctx && ctx->should_abort && ox_kernel_current() == ctx;
	thread_pool *p;
	int64_t		b,
				e;

	if (n <= 0)
		return;
	/* an earlier loop of this kernel was canceled: no point in this one */
	if (polled && ctx->st && ctx->st->code == OX_CANCELED)
		return;
	if (min_chunk < 1)
		min_chunk = 1;
	if (threads <= 1 || n <= min_chunk || !(p = get_pool(threads - 1)) || p->n_threads == 0)
	{
		if (polled && n > min_chunk)
			serial_polled(ctx, n, min_chunk, fn, arg);
		else
			fn(arg, 0, n);
		return;
	}
	pthread_mutex_lock(&p->lock);
	p->job.fn = fn;
	p->job.arg = arg;
	p->job.n = n;
	/* a few chunks per thread balance uneven work without much locking */
	p->job.chunk = (n + threads * 4 - 1) / (threads * 4);
	/* ... and a polled loop has enough of them that a cancel waits little */
	if (polled && p->job.chunk > (n + OX_POLL_CHUNKS - 1) / OX_POLL_CHUNKS)
		p->job.chunk = (n + OX_POLL_CHUNKS - 1) / OX_POLL_CHUNKS;
	if (p->job.chunk < min_chunk)
		p->job.chunk = min_chunk;
	p->job.next = 0;
	p->job.active = 1;			/* the caller */
	/* spinning workers read the generation without the lock */
	__atomic_store_n(&p->job.generation, p->job.generation + 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&p->wake);
	while (claim(&p->job, &b, &e))
	{
		bool		stop;

		pthread_mutex_unlock(&p->lock);
		fn(arg, b, e);
		stop = polled && ox_kernel_should_abort(ctx);
		pthread_mutex_lock(&p->lock);
		if (stop)
		{
			/* nobody claims another chunk; running ones finish */
			__atomic_store_n(&p->job.next, p->job.n, __ATOMIC_RELEASE);
			break;
		}
	}
	__atomic_store_n(&p->job.active, p->job.active - 1, __ATOMIC_RELEASE);
	if ((p->job.active > 0 || p->job.next < p->job.n) &&
		__atomic_load_n(&hot_runs, __ATOMIC_RELAXED) > 0)
	{
		pthread_mutex_unlock(&p->lock);
		spin_for_done(p);
		pthread_mutex_lock(&p->lock);
	}
	while (p->job.active > 0 || p->job.next < p->job.n)
		pthread_cond_wait(&p->done, &p->lock);
	pthread_mutex_unlock(&p->lock);
}
