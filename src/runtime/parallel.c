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
 * The pool keeps the most workers any loop asked for; a loop on fewer
 * threads names how many may claim its chunks (job.workers), and the
 * others, spare for it, sleep without being woken by each loop until a
 * loop wants them.  Before, every worker claimed: a backend that once ran
 * on 4 threads ran its 2-thread loops on 4.
 *
 * A fork() child must not use a pool inherited from its parent (its
 * threads did not survive); an atfork handler forgets it in the child,
 * which simply builds its own.
 *
 * Cancellation: a loop is often most of a kernel's time (a big GEMM or
 * convolution, an elementwise op over a huge tensor), so the calling thread
 * polls the abort callback between the chunks it runs and, when the run is
 * canceled, lets nobody claim another chunk.  Only the caller polls: worker
 * threads never call into the caller's environment (a poll inside a
 * worker's chunk answers what the caller was told).  To keep the wait for
 * a cancel short, a polled loop is cut into at least OX_POLL_CHUNKS chunks,
 * and its chunks, like a single-threaded one's slices, take about
 * OX_SLICE_MIN_NS to OX_SLICE_MAX_NS each: a loop starts with claims of
 * min_chunk indices (their cost is not known), and the caller times its
 * own chunks and halves or doubles the claims (one clock read a chunk
 * costs nothing measurable).  Counting chunks alone was not enough: a
 * MatMul of 10^11 multiply-adds in 64 chunks has chunks of 25 ms on this
 * machine's cores, longer on slower or busier ones, and a cancel waits for
 * the caller's chunk and then for the workers' (CI once measured 121 ms).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* sched_getcpu, CPU sets */
#endif

#include "kernels/kernel.h"

#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define OX_MAX_THREADS 64
#define OX_POLL_CHUNKS 64
#define OX_SLICE_MIN_NS 1000000
#define OX_SLICE_MAX_NS 10000000
/* how long a worker spins for the next loop of a run before it sleeps */
#define OX_SPIN_NS 2000000
/* spin turns between two looks at whether a waited-for thread shares this CPU */
#define OX_SPIN_CPU_TURNS 64

/*
 * A loop handed to the workers.  Its indices are cut into one share per
 * claiming thread, in order: the caller's first, then worker 0's, and so
 * on.  Chunks are claimed without a lock: each share's ticket holds the
 * job's generation (high 32 bits) and the share's next unclaimed index
 * (low 32 bits; jobs of more indices than that run in the caller), and a
 * claim is a compare-and-swap on it.  The caller writes fn, arg, n, chunk
 * and the shares' tickets before it publishes a new generation in share
 * 0's ticket, and only after every chunk of the previous job is done, so
 * a claim that succeeds proves that the fields its thread read after
 * seeing that generation are the job's.  Finished chunks add their
 * indices to `done`; the caller waits for it to reach what was claimed.
 *
 * A thread claims from its own share first, then from the others' (in
 * turn from the next one), so that uneven work still ends together.  Why
 * shares: when consecutive layers order their tasks alike, the thread that
 * reads a part of a tensor is the one that wrote it, and reads it from its
 * own L2 (the blocked convolutions choose their order for that:
 * conv_nchwc_kernels.h).  With one ticket for all, chunks fell to the
 * threads by chance and about half of each layer's input came from the
 * other core: MobileNet-v2's depthwise layers at 14x14 ran 1.19x faster on
 * two threads than on one, against onnxruntime's 1.61x (1.72x with
 * shares).  Two threads, interleaved A/B on the Intel host: MobileNet-v2
 * 0.97x the time, ResNet-50 0.99x, the encoder and the MLP unchanged.  A
 * share's ticket is on a line its owner alone uses until another thread
 * comes to help.
 *
 * Claims were made under the pool's mutex before: with two threads and
 * loops of short chunks the mutex was contended, and a contended mutex
 * sleeps in the kernel.  A 64-index loop of 2 us took 7 us on two threads,
 * MobileNet-v2's small layers at 2 threads ran 1.5x faster instead of 2x.
 */
typedef struct pool_job
{
	ox_range_fn fn;
	void	   *arg;
	int64_t		n;
	int64_t		chunk;			/* the largest claim (a polled loop's caller changes it) */
	int64_t		min_chunk;		/* the smallest (but a share's last) */
	int			workers;		/* workers 0 .. workers - 1 claim, the others are spare */
	/*
	 * done and each share's ticket on a cache line of their own: workers
	 * spin reading share 0's ticket, and the caller's stores to the fields
	 * above should not each have to take back a line a spinning core holds.
	 */
	_Alignas(64) int64_t done;	/* indices whose chunks have finished */
	struct
	{
		_Alignas(64) uint64_t ticket;	/* generation << 32 | the share's next unclaimed index */
	}			share[OX_MAX_THREADS + 1];	/* the caller's, then worker i's at i + 1 */
} pool_job;

/*
 * Fields that one side writes on every loop are on lines the other side
 * does not read: the call mutex (the caller's, taken per loop) is kept off
 * the line of caller_waits, which a worker reads after each chunk.
 */
typedef struct thread_pool
{
	pool_job	job;
	_Alignas(64) pthread_mutex_t call;	/* held by the thread whose loop the pool runs */
	_Alignas(64) pthread_mutex_t lock;	/* for sleeping, waking and adding workers */
	pthread_cond_t wake;		/* workers: a new job */
	pthread_cond_t done;		/* the caller: the job's chunks are done */
	int			sleepers;		/* workers waiting on wake for any new job */
	unsigned	run_starts;		/* runs begun while workers slept (ox_parallel_run_begin) */
	int64_t		run_start_wakeups;	/* workers those woke */
	int			spares;			/* workers waiting on wake for a job that wants more workers */
	int			started;		/* workers that took their number */
	int			caller_waits;	/* the caller waits on done */
	int			n_threads;		/* workers, not counting the caller */
	pthread_t	threads[OX_MAX_THREADS];
	/*
	 * The CPU each thread last ran on (note_cpu), for shares_cpu: the
	 * caller's, noted at a run's start and at each loop, and the workers',
	 * noted when one takes a job.
	 */
	_Alignas(64) int caller_cpu;
	_Alignas(64) int worker_cpu[OX_MAX_THREADS];
} thread_pool;

static thread_pool *pool;

/* set in the pool's workers: a loop inside a chunk runs in that thread */
static __thread bool in_worker;

/* runs in progress that keep the workers spinning between loops */
static int	hot_runs;

/* a thread's slot of the pool's CPUs (shares_cpu): written only when it changed */
static inline void
note_cpu(int *slot)
{
	int			cpu = sched_getcpu();

	if (__atomic_load_n(slot, __ATOMIC_RELAXED) != cpu)
		__atomic_store_n(slot, cpu, __ATOMIC_RELAXED);
}

/*
 * A run begins: its loops keep the workers spinning, and workers that slept
 * since the last run are woken now rather than by the run's first loop.
 * Woken by that loop, they came tens of microseconds after it (a futex
 * wake-up, and in a VM an idle virtual CPU's), and the caller ran most of
 * it alone; woken here, they spin through the run's set-up and claim from
 * its first loop on (MobileNet-v2's first convolution alone, run after run
 * at 2 threads: 5-10% faster, interleaved A/B).  A worker that goes to
 * sleep just as the run begins (it saw no run, and the run saw no sleeper)
 * is woken by the first loop, as before.
 */
void
ox_parallel_run_begin(void)
{
	thread_pool *p = __atomic_load_n(&pool, __ATOMIC_ACQUIRE);

	__atomic_add_fetch(&hot_runs, 1, __ATOMIC_SEQ_CST);
	if (p && __atomic_load_n(&p->sleepers, __ATOMIC_SEQ_CST) > 0)
	{
		note_cpu(&p->caller_cpu);
		pthread_mutex_lock(&p->lock);
		p->run_starts++;
		pthread_cond_broadcast(&p->wake);
		pthread_mutex_unlock(&p->lock);
	}
}

void
ox_parallel_run_end(void)
{
	__atomic_sub_fetch(&hot_runs, 1, __ATOMIC_RELAXED);
}

/* whether a spin that began at `start` has had its OX_SPIN_NS (checked every 1024 turns) */
static inline bool
spin_expired(unsigned turn, int64_t start)
{
	return (turn & 1023) == 0 && ox_now_ns() - start > OX_SPIN_NS;
}

/*
 * A spinning thread may keep the thread it waits for off the CPU.  The
 * scheduler often wakes a worker onto the CPU of the thread that woke it,
 * the caller (seen here with two virtual CPUs, the other one idle), where
 * the worker preempts it and spins for the run's first loop, which the
 * caller cannot publish until the spin expires (OX_SPIN_NS).  The worker
 * slept again at the run's end and was woken onto the same CPU by the next
 * run.  Measured, two threads, a run every millisecond: with one loop of
 * 2 x 3 us chunks a run, ox_parallel_run_begin took 10 us at the median
 * and 2.0 ms from the 90th percentile on; issue 4's MLP at batch 32 (0.3 ms
 * a run) took 2.2 ms longer in 8-10% of its runs (p99 2.5-2.7 ms).
 *
 * So every OX_SPIN_CPU_TURNS turns, a spinning thread looks whether a thread
 * it waits for last ran on its CPU (3 ns: sched_getcpu reads the vDSO's
 * cache).  A worker waiting for the caller then moves to another CPU it is
 * allowed (spin_leave_cpu); the caller, a thread of the application (a
 * PostgreSQL backend) whose placement is not ours, only yields (0.2 us),
 * letting a preempted worker finish its chunk.  The
 * same MLP: p99 0.5-0.7 ms, no run 0.5 ms over the median; yielding
 * alone in the worker also removed the stalls, but the two threads stayed
 * on one CPU and ran at one thread's speed (median 0.37-0.50 ms against
 * 0.29-0.42 before, 0.35-0.39 now).
 */
static inline bool
shares_cpu(unsigned turn, const int *cpus, int n)
{
	int			me;

	if (turn % OX_SPIN_CPU_TURNS != 0 || (me = sched_getcpu()) < 0)
		return false;
	for (int i = 0; i < n; i++)
		if (__atomic_load_n(&cpus[i], __ATOMIC_RELAXED) == me)
			return true;
	return false;
}

/*
 * A worker leaves its CPU: it is excluded from the allowed set for a moment,
 * which migrates the thread at once, and the set is restored (that does not
 * move it back).  With no other CPU allowed it yields.
 */
static void
spin_leave_cpu(void)
{
	cpu_set_t	allowed,
				away;
	int			me = sched_getcpu();

	if (me >= 0 && me < CPU_SETSIZE && sched_getaffinity(0, sizeof(allowed), &allowed) == 0 &&
		CPU_COUNT(&allowed) >= 2 && CPU_ISSET(me, &allowed))
	{
		away = allowed;
		CPU_CLR(me, &away);
		if (sched_setaffinity(0, sizeof(away), &away) == 0)
		{
			(void) sched_setaffinity(0, sizeof(allowed), &allowed);
			return;
		}
	}
	sched_yield();
}

static inline uint32_t
ticket_generation(uint64_t t)
{
	return (uint32_t) (t >> 32);
}

/*
 * Where share k of `shares` begins in a loop of n indices: k n / shares,
 * down to a multiple of min_chunk (n for k = shares)
 */
static int64_t
share_start(int64_t n, int shares, int64_t min_chunk, int k)
{
	int64_t		at;

	if (k >= shares)
		return n;
	at = n * k / shares;		/* n < 2^32 */
	return min_chunk > 1 ? at - at % min_chunk : at;
}

/*
 * Claim the next chunk of generation gen from share k, which ends at
 * `stop_at`: [*begin, *end), or false when the job is another one or the
 * share has no chunk left.  A claim takes half of what is left in the
 * share (guided scheduling), between min_chunk and chunk indices: early
 * claims are large, the last ones small, so that a thread that comes to
 * help finds work and the threads finish together.  With fixed chunks of
 * an eighth of the loop, a thread could wait most of a chunk for
 * another's last one (MobileNet-v2's first layer on two threads: 224
 * tasks in chunks of 28).
 */
static bool
claim(pool_job *job, int k, uint32_t gen, int64_t stop_at, int64_t min_chunk, int64_t *begin, int64_t *end)
{
	uint64_t	t = __atomic_load_n(&job->share[k].ticket, __ATOMIC_ACQUIRE);

	for (;;)
	{
		int64_t		next = (int64_t) (uint32_t) t;
		/* any value is safe here: it only sizes the claim */
		int64_t		chunk = __atomic_load_n(&job->chunk, __ATOMIC_RELAXED);
		int64_t		size,
					stop;

		if (ticket_generation(t) != gen || next >= stop_at)
			return false;
		size = (stop_at - next) / 2;
		if (size > chunk)
			size = chunk;
		if (size < min_chunk)
			size = min_chunk;
		/* no piece under min_chunk left behind: only the loop's last chunk may be short */
		stop = stop_at - (next + size) >= min_chunk ? next + size : stop_at;
		if (__atomic_compare_exchange_n(&job->share[k].ticket, &t, ((uint64_t) gen << 32) | (uint64_t) stop, true,
										__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		{
			*begin = next;
			*end = stop;
			return true;
		}
	}
}

/*
 * Chunk [b, e) finished: wake a caller that sleeps on the job (it counts
 * itself, then looks at done; this adds to done, then looks for it).
 */
static void
chunk_done(thread_pool *p, int64_t b, int64_t e)
{
	__atomic_add_fetch(&p->job.done, e - b, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&p->caller_waits, __ATOMIC_SEQ_CST))
	{
		pthread_mutex_lock(&p->lock);
		pthread_cond_signal(&p->done);
		pthread_mutex_unlock(&p->lock);
	}
}

/*
 * A worker's wait for a generation other than `seen`: spinning while a run
 * is hot, for at most OX_SPIN_NS, then asleep.  A spare worker (`seen` had
 * no use for it) sleeps at once, counted apart: callers wake it only for a
 * loop that wants more workers than the one before, and it may sleep
 * through generations that do not.  Returns the ticket it saw.
 */
static uint64_t
wait_for_job(thread_pool *p, uint32_t seen, bool spare)
{
	int		   *count = spare ? &p->spares : &p->sleepers;
	uint64_t	t;

	for (;;)
	{
		int64_t		start = ox_now_ns();
		unsigned	starts;

		for (unsigned i = 1;; i++)
		{
			t = __atomic_load_n(&p->job.share[0].ticket, __ATOMIC_ACQUIRE);
			if (ticket_generation(t) != seen)
				return t;
			if (spare || __atomic_load_n(&hot_runs, __ATOMIC_RELAXED) <= 0 || spin_expired(i, start))
				break;
			if (shares_cpu(i, &p->caller_cpu, 1))
				spin_leave_cpu();
			_mm_pause();
		}
		pthread_mutex_lock(&p->lock);
		/* the caller publishes, then looks for sleepers; this one counts itself, then looks */
		__atomic_add_fetch(count, 1, __ATOMIC_SEQ_CST);
		starts = p->run_starts;
		while (ticket_generation(t = __atomic_load_n(&p->job.share[0].ticket, __ATOMIC_SEQ_CST)) == seen &&
			   (spare || p->run_starts == starts))
			pthread_cond_wait(&p->wake, &p->lock);
		__atomic_sub_fetch(count, 1, __ATOMIC_SEQ_CST);
		if (ticket_generation(t) != seen)
		{
			pthread_mutex_unlock(&p->lock);
			return t;
		}
		/* woken by a run's start (ox_parallel_run_begin): spin for its first loop */
		p->run_start_wakeups++;
		pthread_mutex_unlock(&p->lock);
	}
}

void
ox_parallel_stats(int *sleeping, int64_t *run_start_wakeups)
{
	thread_pool *p = __atomic_load_n(&pool, __ATOMIC_ACQUIRE);

	*sleeping = 0;
	*run_start_wakeups = 0;
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	*sleeping = p->sleepers;
	*run_start_wakeups = p->run_start_wakeups;
	pthread_mutex_unlock(&p->lock);
}

/* a polled loop's caller: its kernel, and the claim sizes it adapts (adapt_chunk) */
typedef struct caller_poll
{
	ox_kernel_ctx *ctx;
	int64_t		chunk,
				max_chunk;
} caller_poll;

static int64_t adapt_chunk(int64_t chunk, int64_t size, int64_t dt_ns, int64_t min_chunk, int64_t max_chunk);

/*
 * Thread `own`'s part of generation gen (n indices in `shares` shares):
 * chunks of its own share, then of the others' from the next one on.  The
 * caller of a polled loop passes poll: it times its chunks and asks the
 * abort callback after each (false: the loop was canceled, the tickets
 * left for the caller to close).
 */
static bool
claim_shares(thread_pool *p, int own, int shares, uint32_t gen, int64_t n, int64_t min_chunk,
			 ox_range_fn fn, void *fa, caller_poll *poll)
{
	int64_t		b,
				e;

	/* a later job's count, read too late: any share in range will do */
	if (shares < 1 || shares > OX_MAX_THREADS + 1)
		return true;
	if (own >= shares)
		own = 0;
	for (int i = 0, k = own; i < shares; i++, k = k + 1 < shares ? k + 1 : 0)
	{
		int64_t		stop_at = share_start(n, shares, min_chunk, k + 1);

		while (claim(&p->job, k, gen, stop_at, min_chunk, &b, &e))
		{
			int64_t		t0 = poll ? ox_now_ns() : 0;

			fn(fa, b, e);
			chunk_done(p, b, e);
			if (!poll)
				continue;
			if (ox_kernel_should_abort(poll->ctx))
				return false;
			poll->chunk = adapt_chunk(poll->chunk, e - b, ox_now_ns() - t0, min_chunk, poll->max_chunk);
			__atomic_store_n(&p->job.chunk, poll->chunk, __ATOMIC_RELAXED);
		}
	}
	return true;
}

static void *
worker_main(void *arg)
{
	thread_pool *p = arg;
	int			me = __atomic_fetch_add(&p->started, 1, __ATOMIC_RELAXED);
	uint32_t	seen = 0;
	bool		spare = false;

	in_worker = true;
	for (;;)
	{
		uint64_t	t = wait_for_job(p, seen, spare);
		uint32_t	gen = ticket_generation(t);
		/*
		 * read after the generation was seen; a successful claim vouches
		 * for them (a later job's worker count, read too late, is that of
		 * a job this worker then waits for: right either way)
		 */
		ox_range_fn fn = __atomic_load_n(&p->job.fn, __ATOMIC_RELAXED);
		void	   *fa = __atomic_load_n(&p->job.arg, __ATOMIC_RELAXED);
		int64_t		n = __atomic_load_n(&p->job.n, __ATOMIC_RELAXED),
					min_chunk = __atomic_load_n(&p->job.min_chunk, __ATOMIC_RELAXED);
		int			workers = __atomic_load_n(&p->job.workers, __ATOMIC_RELAXED);

		seen = gen;
		spare = me >= workers;
		if (spare)
			continue;
		note_cpu(&p->worker_cpu[me]);
		claim_shares(p, me + 1, workers + 1, gen, n, min_chunk, fn, fa, NULL);
	}
	return NULL;
}

/*
 * In a fork() child: the pool's threads did not survive, the child builds
 * its own.  The old one's memory is freed (glibc's malloc is usable in an
 * atfork child handler); its mutexes and conditions are never used again.
 */
static void
forget_pool_in_child(void)
{
	thread_pool *old = pool;

	pool = NULL;
	free(old);
}

static thread_pool *
get_pool(int want_workers)
{
	static bool atfork_set;
	sigset_t	old_mask;

	if (want_workers > OX_MAX_THREADS)
		want_workers = OX_MAX_THREADS;
	/*
	 * Every loop comes here: no lock and no system call when the pool has
	 * its workers.  A getpid() for the fork check and the pool's mutex took
	 * 0.4 us a loop (0.07 now), with the other thread waiting for the loop;
	 * the atfork handler sees a fork instead.
	 */
	if (pool && __atomic_load_n(&pool->n_threads, __ATOMIC_ACQUIRE) >= want_workers)
		return pool;
	if (!atfork_set)
	{
		if (pthread_atfork(NULL, NULL, forget_pool_in_child) != 0)
			return NULL;
		atfork_set = true;
	}
	if (!pool)
	{
		/* aligned for the job's cache lines (its size is a multiple of them) */
		pool = aligned_alloc(_Alignof(thread_pool), sizeof(thread_pool));
		if (!pool)
			return NULL;
		memset(pool, 0, sizeof(thread_pool));
		pool->caller_cpu = -1;
		for (int i = 0; i < OX_MAX_THREADS; i++)
			pool->worker_cpu[i] = -1;
		pthread_mutex_init(&pool->lock, NULL);
		pthread_cond_init(&pool->wake, NULL);
		pthread_cond_init(&pool->done, NULL);
		pthread_mutex_init(&pool->call, NULL);
	}
	/* workers start with every signal blocked (ox_signals_block_all) */
	ox_signals_block_all(&old_mask);
	pthread_mutex_lock(&pool->lock);
	while (pool->n_threads < want_workers)
	{
		if (pthread_create(&pool->threads[pool->n_threads], NULL, worker_main, pool) != 0)
			break;
		__atomic_store_n(&pool->n_threads, pool->n_threads + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&pool->lock);
	ox_signals_restore(&old_mask);
	return pool;
}

void
ox_signals_block_all(sigset_t *old)
{
	sigset_t	all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
}

void
ox_signals_restore(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

int64_t
ox_now_ns(void)
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
	int64_t		step = min_chunk;

	for (int64_t b = 0; b < n;)
	{
		int64_t		e = n - b > step ? b + step : n;
		int64_t		t0 = ox_now_ns(),
					dt;

		fn(arg, b, e);
		b = e;
		if (b < n && ox_kernel_should_abort(ctx))
			return;
		dt = ox_now_ns() - t0;
		if (dt < OX_SLICE_MIN_NS && step < n / 2)
			step *= 2;
		else if (dt > OX_SLICE_MAX_NS && step / 2 >= min_chunk)
			step /= 2;
	}
}

/*
 * A polled loop's claim size after the caller's chunk of `size` indices
 * took dt_ns: half when over OX_SLICE_MAX_NS, twice when under
 * OX_SLICE_MIN_NS and the chunk was a full one (a guided claim near the
 * end is smaller and says little), within [min_chunk, max_chunk].
 */
static int64_t
adapt_chunk(int64_t chunk, int64_t size, int64_t dt_ns, int64_t min_chunk, int64_t max_chunk)
{
	if (dt_ns > OX_SLICE_MAX_NS && chunk / 2 >= min_chunk)
		return chunk / 2;
	if (dt_ns < OX_SLICE_MIN_NS && size >= chunk)
		return chunk * 2 < max_chunk ? chunk * 2 : max_chunk;
	return chunk;
}

void
ox_parallel_for(ox_kernel_ctx *ctx, int64_t n, int64_t min_chunk, ox_range_fn fn, void *arg)
{
	int			threads = ctx ? ctx->nthreads : 1;
	/* only the thread running the kernel may ask the abort callback */
	bool		polled = ctx && ctx->should_abort && ox_kernel_current() == ctx;
	thread_pool *p;
	int64_t		chunk,
				max_chunk,
				claimed;
	uint32_t	gen;
	bool		more_workers;
	caller_poll poll;

	if (n <= 0)
		return;
	/* an earlier loop of this kernel was canceled: no point in this one */
	if (polled && ctx->st && ctx->st->code == OX_CANCELED)
		return;
	if (min_chunk < 1)
		min_chunk = 1;
	/*
	 * One thread: asked for, too little work, no pool, a loop inside a
	 * worker's chunk, more indices than a ticket holds, or another thread's
	 * loop in the pool (two sessions run from two threads).
	 */
	if (threads <= 1 || n <= min_chunk || in_worker || n > (int64_t) UINT32_MAX - 1 ||
		!(p = get_pool(threads - 1)) || p->n_threads == 0 || pthread_mutex_trylock(&p->call) != 0)
	{
		if (polled && n > min_chunk)
			serial_polled(ctx, n, min_chunk, fn, arg);
		else
			fn(arg, 0, n);
		return;
	}
	/* a share for each thread there is (the pool may have fewer workers than asked) */
	{
		int			have = __atomic_load_n(&p->n_threads, __ATOMIC_ACQUIRE) + 1;

		if (threads > have)
			threads = have;
	}
	/* a few chunks per thread balance uneven work */
	max_chunk = (n + threads * 4 - 1) / (threads * 4);
	/* ... and a polled loop has enough of them that a cancel waits little */
	if (polled && max_chunk > (n + OX_POLL_CHUNKS - 1) / OX_POLL_CHUNKS)
		max_chunk = (n + OX_POLL_CHUNKS - 1) / OX_POLL_CHUNKS;
	if (max_chunk < min_chunk)
		max_chunk = min_chunk;
	/* ... growing from min_chunk as the caller's chunks show their cost */
	chunk = polled ? min_chunk : max_chunk;
	gen = ticket_generation(__atomic_load_n(&p->job.share[0].ticket, __ATOMIC_RELAXED)) + 1;
	more_workers = threads - 1 > __atomic_load_n(&p->job.workers, __ATOMIC_RELAXED);
	__atomic_store_n(&p->job.fn, fn, __ATOMIC_RELAXED);
	__atomic_store_n(&p->job.arg, arg, __ATOMIC_RELAXED);
	__atomic_store_n(&p->job.n, n, __ATOMIC_RELAXED);
	__atomic_store_n(&p->job.chunk, chunk, __ATOMIC_RELAXED);
	__atomic_store_n(&p->job.min_chunk, min_chunk, __ATOMIC_RELAXED);
	__atomic_store_n(&p->job.workers, threads - 1, __ATOMIC_RELAXED);
	__atomic_store_n(&p->job.done, 0, __ATOMIC_RELAXED);
	for (int k = 1; k < threads; k++)
		__atomic_store_n(&p->job.share[k].ticket,
						 ((uint64_t) gen << 32) | (uint64_t) share_start(n, threads, min_chunk, k), __ATOMIC_RELAXED);
	note_cpu(&p->caller_cpu);
	/* publish; then wake the workers that sleep (wait_for_job's other half) */
	__atomic_store_n(&p->job.share[0].ticket, (uint64_t) gen << 32, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&p->sleepers, __ATOMIC_SEQ_CST) > 0 ||
		(more_workers && __atomic_load_n(&p->spares, __ATOMIC_SEQ_CST) > 0))
	{
		pthread_mutex_lock(&p->lock);
		pthread_cond_broadcast(&p->wake);
		pthread_mutex_unlock(&p->lock);
	}
	claimed = n;
	poll.ctx = ctx;
	poll.chunk = chunk;
	poll.max_chunk = max_chunk;
	if (!claim_shares(p, 0, threads, gen, n, min_chunk, fn, arg, polled ? &poll : NULL))
	{
		/* canceled: nobody claims another chunk, running ones finish */
		int64_t		start = 0;

		claimed = 0;
		for (int k = 0; k < threads; k++)
		{
			int64_t		stop = share_start(n, threads, min_chunk, k + 1);
			uint64_t	t = __atomic_exchange_n(&p->job.share[k].ticket, ((uint64_t) gen << 32) | (uint64_t) stop,
												__ATOMIC_ACQ_REL);
			int64_t		next = (int64_t) (uint32_t) t;

			claimed += (next < stop ? next : stop) - start;
			start = stop;
		}
	}
	/* the workers' last chunks: spin while a run is hot, for a while, then sleep */
	{
		int64_t		start = ox_now_ns();
		bool		hot = __atomic_load_n(&hot_runs, __ATOMIC_RELAXED) > 0;

		for (unsigned i = 1; __atomic_load_n(&p->job.done, __ATOMIC_ACQUIRE) < claimed; i++)
		{
			if (!hot || spin_expired(i, start))
			{
				pthread_mutex_lock(&p->lock);
				__atomic_store_n(&p->caller_waits, 1, __ATOMIC_SEQ_CST);
				while (__atomic_load_n(&p->job.done, __ATOMIC_SEQ_CST) < claimed)
					pthread_cond_wait(&p->done, &p->lock);
				__atomic_store_n(&p->caller_waits, 0, __ATOMIC_SEQ_CST);
				pthread_mutex_unlock(&p->lock);
				break;
			}
			if (shares_cpu(i, p->worker_cpu, threads - 1))
				sched_yield();
			_mm_pause();
		}
	}
	pthread_mutex_unlock(&p->call);
}

