/*
 * test_parallel.c
 *	  ox_parallel_for's contract: every index of [0, n) is handed to exactly
 *	  one call, in ranges of at least min_chunk indices (all but the last of
 *	  the loop), whatever the thread count; with guided claims (parallel.c,
 *	  claim) the ranges shrink towards the end of a loop but never below
 *	  that.  Also inside a hot run (ox_parallel_run_begin/end), where the
 *	  workers spin between loops; and in a fork() child of a process whose
 *	  pool has its workers (the child's loops get workers of their own).
 *	  No more threads run a loop's chunks than the loop asked for, also
 *	  after loops on more (the pool keeps its workers), and workers block
 *	  every signal (a server's handlers run in its own thread).  A run's
 *	  start wakes the sleeping workers.  A canceled loop
 *	  of long tasks stops after a bounded amount of work, whatever the
 *	  loop's length (parallel.c: the caller times its chunks).  Each
 *	  thread starts on its own share of the loop.  A worker that leaves its
 *	  caller's CPU has all of the process's CPUs allowed again.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* sched_getcpu, CPU sets */
#endif

#include "kernels/kernel.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct visit_job
{
	int64_t		n;
	int64_t		min_chunk;
	unsigned char *seen;		/* per index: how many calls covered it */
	int			short_ranges;	/* ranges under min_chunk that do not end the loop */
	int			bad_ranges;		/* empty or out of [0, n) */
} visit_job;

static void
visit(void *arg, int64_t begin, int64_t end)
{
	visit_job  *j = arg;

	if (begin < 0 || end > j->n || begin >= end)
	{
		__atomic_add_fetch(&j->bad_ranges, 1, __ATOMIC_RELAXED);
		return;
	}
	if (end - begin < j->min_chunk && end != j->n)
		__atomic_add_fetch(&j->short_ranges, 1, __ATOMIC_RELAXED);
	for (int64_t i = begin; i < end; i++)
		__atomic_add_fetch(&j->seen[i], 1, __ATOMIC_RELAXED);
	/* a little work per index, so that both threads claim */
	for (volatile int64_t k = 0; k < (end - begin) * 50; k++)
		;
}

static int
check(int threads, int64_t n, int64_t min_chunk, bool hot)
{
	ox_kernel_ctx ctx;
	visit_job	j;
	int			bad = 0;

	memset(&ctx, 0, sizeof(ctx));
	ctx.nthreads = threads;
	memset(&j, 0, sizeof(j));
	j.n = n;
	j.min_chunk = min_chunk;
	j.seen = calloc((size_t) n + 1, 1);
	if (hot)
		ox_parallel_run_begin();
	for (int rep = 0; rep < 3 && !bad; rep++)
	{
		memset(j.seen, 0, (size_t) n + 1);
		ox_parallel_for(&ctx, n, min_chunk, visit, &j);
		for (int64_t i = 0; i < n; i++)
			if (j.seen[i] != 1)
				bad = 1;
		if (j.short_ranges || j.bad_ranges)
			bad = 1;
	}
	if (hot)
		ox_parallel_run_end();
	if (bad)
		printf("FAIL parallel_for threads=%d n=%lld min_chunk=%lld hot=%d (short ranges %d, bad ranges %d)\n",
			   threads, (long long) n, (long long) min_chunk, hot, j.short_ranges, j.bad_ranges);
	free(j.seen);
	return bad;
}

/* this process's threads, from /proc/self/status; -1 when it cannot say */
static int
thread_count(void)
{
	FILE	   *f = fopen("/proc/self/status", "r");
	char		line[256];
	int			n = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

/*
 * A child forked after the pool has its workers inherits the pool's memory
 * but none of its threads: its loops must still be right, and run on
 * workers of its own (a pool that believed its workers alive would run
 * every loop in the caller alone).
 */
static int
check_fork(void)
{
	pid_t		pid;
	int			status;

	if (check(2, 1000, 1, 0))	/* the parent's pool, with its worker */
		return 1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
	{
		printf("FAIL fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0)
	{
		int			bad = check(2, 1000, 1, 0) + check(3, 20000, 1, 1);
		int			threads = thread_count();

		if (threads >= 0 && threads != 3)
		{
			printf("FAIL fork child: %d threads after loops on 3 (the caller and 2 workers expected)\n", threads);
			bad++;
		}
		fflush(stdout);
		_exit(bad ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
	{
		printf("FAIL fork child: exit status %d\n", status);
		return 1;
	}
	return 0;
}

/* ---- threads that take part ---- */

typedef struct who_job
{
	pthread_t	caller;
	pthread_t	threads[8];		/* the threads that ran tasks (the first 8) */
	int			n_threads;
	int			unblocked;		/* tasks run by a worker that takes SIGALRM or SIGINT */
} who_job;

/* each task sleeps 100 us: every thread that may claim gets its turn */
static void
note_thread(void *arg, int64_t begin, int64_t end)
{
	who_job    *j = arg;
	pthread_t	me = pthread_self();
	struct timespec nap = {0, 100 * 1000};
	sigset_t	mask;

	if (!pthread_equal(me, j->caller) &&
		(pthread_sigmask(SIG_BLOCK, NULL, &mask) != 0 ||
		 !sigismember(&mask, SIGALRM) || !sigismember(&mask, SIGINT)))
		__atomic_add_fetch(&j->unblocked, 1, __ATOMIC_RELAXED);

	for (int i = 0; i < 8; i++)
	{
		pthread_t	seen = 0;

		if (__atomic_compare_exchange_n(&j->threads[i], &seen, me, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		{
			__atomic_add_fetch(&j->n_threads, 1, __ATOMIC_RELAXED);
			break;
		}
		if (pthread_equal(seen, me))
			break;
	}
	for (int64_t i = begin; i < end; i++)
		nanosleep(&nap, NULL);
}

/* how many threads ran a loop of 200 sleeping tasks on `threads` */
static int
threads_taking_part(int threads, bool hot)
{
	ox_kernel_ctx ctx;
	who_job		j;

	memset(&ctx, 0, sizeof(ctx));
	ctx.nthreads = threads;
	memset(&j, 0, sizeof(j));
	j.caller = pthread_self();
	if (hot)
		ox_parallel_run_begin();
	ox_parallel_for(&ctx, 200, 1, note_thread, &j);
	if (hot)
		ox_parallel_run_end();
	if (j.unblocked)
	{
		printf("FAIL %d tasks ran in a worker that takes SIGALRM or SIGINT\n", j.unblocked);
		return 99;
	}
	return j.n_threads;
}

/*
 * After a loop on 4 threads the pool has 3 workers; loops on 2 and 3 must
 * still run on 2 and 3 (every worker claimed before, 4 threads each), and
 * a loop on 4 again gets all of them back.
 */
static int
check_spares(void)
{
	static const int order[] = {4, 2, 3, 2, 4, 3};
	int			bad = 0;

	for (int hot = 0; hot < 2; hot++)
		for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		{
			int			ran = threads_taking_part(order[i], hot);

			if (ran > order[i] || (order[i] == 4 && ran < 2))
			{
				printf("FAIL a loop on %d threads (hot=%d) ran on %d\n", order[i], hot, ran);
				bad = 1;
			}
		}
	return bad;
}

/*
 * A run's start wakes the workers that sleep (ox_parallel_run_begin), so
 * that its first loop finds them spinning rather than paying their wake-up;
 * and once the run ends they sleep again.
 * Polled with naps: under valgrind a woken thread may wait long for its turn.
 * A worker counted asleep may still have a wake-up on its way (a loop's
 * broadcast it has not yet run after), and would then be up without the
 * run's start: the test waits until the count has stayed up for 50 polls.
 */
static bool
wait_for_workers(bool (*ready) (int sleeping, int64_t wakeups, int64_t before), int64_t before,
				 int polls_in_a_row)
{
	struct timespec nap = {0, 1000000};
	int			row = 0;

	for (int i = 0; i < 5000; i++)
	{
		int			sleeping;
		int64_t		wakeups;

		ox_parallel_stats(&sleeping, &wakeups);
		row = ready(sleeping, wakeups, before) ? row + 1 : 0;
		if (row >= polls_in_a_row)
			return true;
		nanosleep(&nap, NULL);
	}
	return false;
}

static bool
some_asleep(int sleeping, int64_t wakeups, int64_t before)
{
	(void) wakeups;
	(void) before;
	return sleeping > 0;
}

static bool
woken_since(int sleeping, int64_t wakeups, int64_t before)
{
	(void) sleeping;
	return wakeups > before;
}

static int
check_run_start_wakes(void)
{
	int			sleeping;
	int64_t		before;

	if (check(2, 1000, 1, false))
		return 1;
	if (!wait_for_workers(some_asleep, 0, 50))
	{
		printf("FAIL no worker went to sleep after a loop outside a run\n");
		return 1;
	}
	ox_parallel_stats(&sleeping, &before);
	ox_parallel_run_begin();
	if (!wait_for_workers(woken_since, before, 1))
	{
		ox_parallel_run_end();
		printf("FAIL a run's start woke none of the %d sleeping workers\n", sleeping);
		return 1;
	}
	ox_parallel_run_end();
	if (!wait_for_workers(some_asleep, 0, 1))
	{
		printf("FAIL the workers a run's start woke did not sleep again after the run\n");
		return 1;
	}
	return check(2, 1000, 1, false);
}

/* ---- a worker on its caller's CPU ---- */

typedef struct placement_job
{
	pthread_t	caller;
	int			caller_cpu;
	cpu_set_t	allowed;		/* the process's CPUs */
	int			worker_chunks;
	int			worker_on_caller_cpu;
	int			narrowed;		/* worker chunks that ran with fewer CPUs allowed */
} placement_job;

static void
note_placement(void *arg, int64_t begin, int64_t end)
{
	placement_job *j = arg;
	cpu_set_t	now;
	int64_t		stop = ox_now_ns() + 20000;

	(void) begin;
	(void) end;
	if (!pthread_equal(pthread_self(), j->caller))
	{
		__atomic_add_fetch(&j->worker_chunks, 1, __ATOMIC_RELAXED);
		if (sched_getcpu() == j->caller_cpu)
			__atomic_add_fetch(&j->worker_on_caller_cpu, 1, __ATOMIC_RELAXED);
		if (sched_getaffinity(0, sizeof(now), &now) != 0 || !CPU_EQUAL(&now, &j->allowed))
			__atomic_add_fetch(&j->narrowed, 1, __ATOMIC_RELAXED);
	}
	while (ox_now_ns() < stop)
		;
}

/*
 * Runs a millisecond apart, the caller held on one CPU: a worker the
 * scheduler wakes onto that CPU leaves it (parallel.c, spin_leave_cpu) by
 * narrowing its allowed CPUs for a moment.  Whatever the scheduler did,
 * every chunk a worker runs must see all of the process's CPUs allowed
 * again, and the runs must end.
 */
static int
check_worker_placement(void)
{
	ox_kernel_ctx ctx;
	placement_job j;
	cpu_set_t	one;
	int			rc = 0;

	memset(&j, 0, sizeof(j));
	if (sched_getaffinity(0, sizeof(j.allowed), &j.allowed) != 0 || CPU_COUNT(&j.allowed) < 2)
	{
		printf("skip worker placement: fewer than 2 CPUs allowed\n");
		return 0;
	}
	/* the pool's workers exist before the caller is held (they inherit its CPUs) */
	if (check(2, 1000, 1, false))
		return 1;
	j.caller = pthread_self();
	j.caller_cpu = sched_getcpu();
	CPU_ZERO(&one);
	CPU_SET(j.caller_cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one) != 0)
	{
		printf("skip worker placement: sched_setaffinity: %s\n", strerror(errno));
		return 0;
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.nthreads = 2;
	for (int r = 0; r < 200; r++)
	{
		usleep(1000);
		ox_parallel_run_begin();
		ox_parallel_for(&ctx, 4, 1, note_placement, &j);
		ox_parallel_run_end();
	}
	sched_setaffinity(0, sizeof(j.allowed), &j.allowed);
	if (j.narrowed)
	{
		printf("FAIL %d of %d worker chunks ran with fewer CPUs allowed than the process has\n",
			   j.narrowed, j.worker_chunks);
		rc = 1;
	}
	printf("worker placement: %d worker chunks, %d of them on the caller's CPU\n", j.worker_chunks,
		   j.worker_on_caller_cpu);
	return rc;
}

/* ---- shares ---- */

typedef struct first_job
{
	pthread_t	caller;
	int64_t		caller_first;	/* the first index of the caller's first range, or -1 */
	int64_t		worker_first;	/* the same for the workers */
} first_job;

static void
note_first(void *arg, int64_t begin, int64_t end)
{
	first_job  *j = arg;
	int64_t    *first = pthread_equal(pthread_self(), j->caller) ? &j->caller_first : &j->worker_first;
	int64_t		none = -1;
	struct timespec nap = {0, 20 * 1000};

	__atomic_compare_exchange_n(first, &none, begin, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	for (int64_t i = begin; i < end; i++)
		nanosleep(&nap, NULL);
}

/*
 * Each thread claims from its own share of the loop first (parallel.c):
 * the caller from index 0, the worker of a 2-thread loop from the middle,
 * so that consecutive loops cut alike give a thread the same part of the
 * data.  Guided claims from one ticket gave the worker its first range
 * just past the caller's (an eighth of the loop).  A thread that is late
 * (descheduled) finds its share begun by the other: one try of several
 * must show it.
 */
static int
check_shares(void)
{
	ox_kernel_ctx ctx;
	first_job	j;
	bool		caller_ok = false,
				worker_ok = false;

	memset(&ctx, 0, sizeof(ctx));
	ctx.nthreads = 2;
	ox_parallel_run_begin();
	for (int try = 0; try < 10 && !(caller_ok && worker_ok); try++)
	{
		j.caller = pthread_self();
		j.caller_first = j.worker_first = -1;
		ox_parallel_for(&ctx, 200, 1, note_first, &j);
		caller_ok |= j.caller_first == 0;
		worker_ok |= j.worker_first == 100;
	}
	ox_parallel_run_end();
	if (!caller_ok || !worker_ok)
	{
		printf("FAIL shares: the caller's first range began at %lld (0 expected), a worker's at %lld (100)\n",
			   (long long) j.caller_first, (long long) j.worker_first);
		return 1;
	}
	return 0;
}

/* ---- cancellation ---- */

/*
 * A loop of a million tasks of 20 us each (20 s of work) on two threads,
 * whose abort callback says yes from 30 ms on.  What runs after that is
 * the chunks in progress: claims start at one task and the caller's timed
 * chunks keep them under OX_SLICE_MAX_NS (10 ms, 500 tasks), so about
 * 1000 tasks at most (4000 allowed); fixed chunks of a 64th of the loop (the rule
 * before) ran about 60,000.  Tasks are timed by the clock, so a slower
 * machine runs fewer of them, not more.  Not under valgrind: its
 * scheduler (not fair by default) can leave the caller unscheduled for
 * seconds while a worker spins through tasks (test_cancel covers the
 * canceled paths there).
 */
typedef struct cancel_job
{
	int64_t		abort_at;		/* ox_now_ns() from which the callback says yes */
	int64_t		after;			/* tasks begun after that */
} cancel_job;

static bool
abort_after(void *arg)
{
	return ox_now_ns() >= ((cancel_job *) arg)->abort_at;
}

static void
timed_tasks(void *arg, int64_t begin, int64_t end)
{
	cancel_job *j = arg;

	for (int64_t i = begin; i < end; i++)
	{
		int64_t		t0 = ox_now_ns();

		if (t0 >= j->abort_at)
			__atomic_add_fetch(&j->after, 1, __ATOMIC_RELAXED);
		while (ox_now_ns() - t0 < 20000)
			;
	}
}

/* valgrind preloads its own libraries into the programs it runs */
static bool
under_valgrind(void)
{
	const char *preload = getenv("LD_PRELOAD");

	return preload && strstr(preload, "vgpreload") != NULL;
}

/* ox_parallel_for(ctx, n, 1, fn, arg) on two threads, c's callback saying yes from 30 ms on */
static void
run_canceled_at_30ms(ox_kernel_ctx *ctx, ox_status *st, cancel_job *c, int64_t n, ox_range_fn fn, void *arg)
{
	memset(ctx, 0, sizeof(*ctx));
	memset(st, 0, sizeof(*st));
	ctx->nthreads = 2;
	ctx->st = st;
	ctx->should_abort = abort_after;
	ctx->abort_arg = c;
	c->after = 0;
	c->abort_at = ox_now_ns() + 30 * 1000000;
	ox_kernel_set_current(ctx);
	ox_parallel_for(ctx, n, 1, fn, arg);
	ox_kernel_set_current(NULL);
}

static int
check_cancel(void)
{
	ox_kernel_ctx ctx;
	ox_status	st;
	cancel_job	j;

	if (under_valgrind())
	{
		printf("skipped under valgrind: the canceled loop's bound\n");
		return 0;
	}
	run_canceled_at_30ms(&ctx, &st, &j, 1000000, timed_tasks, &j);
	if (st.code != OX_CANCELED || j.after > 4000)
	{
		printf("FAIL canceled loop: status %d, %lld tasks begun after the abort (4000 at most)\n",
			   (int) st.code, (long long) j.after);
		return 1;
	}
	return 0;
}

/*
 * A kernel's own long chunks: two of them (fused attention's slots of
 * tasks), each 100,000 tasks of 20 us that poll before every task, on two
 * threads, the callback saying yes from 30 ms on.  The caller's poll calls
 * the callback, the worker's answers what the caller was told: each stops
 * within a task of the caller's next poll.  Before workers saw it the
 * worker's chunk ran on, 2 s (98,538 tasks).  The bound leaves room for a
 * caller the machine deschedules while the worker runs (CI once counted
 * 121 tasks with another program busy on both cores): 20,000 tasks, 400 ms.
 */
typedef struct long_chunks_job
{
	ox_kernel_ctx *ctx;
	cancel_job	cancel;
} long_chunks_job;

static void
polled_tasks(void *arg, int64_t begin, int64_t end)
{
	long_chunks_job *j = arg;

	for (int64_t c = begin; c < end; c++)
		for (int64_t i = 0; i < 100000; i++)
		{
			if (ox_kernel_poll(j->ctx, OX_POLL_WORK))
				return;
			timed_tasks(&j->cancel, 0, 1);
		}
}

static int
check_cancel_long_chunks(void)
{
	ox_kernel_ctx ctx;
	ox_status	st;
	long_chunks_job j;

	if (under_valgrind())
	{
		printf("skipped under valgrind: the canceled chunks' bound\n");
		return 0;
	}
	j.ctx = &ctx;
	run_canceled_at_30ms(&ctx, &st, &j.cancel, 2, polled_tasks, &j);
	if (st.code != OX_CANCELED || j.cancel.after > 20000)
	{
		printf("FAIL canceled long chunks: status %d, %lld tasks begun after the abort (20000 at most)\n",
			   (int) st.code, (long long) j.cancel.after);
		return 1;
	}
	return 0;
}

int
main(void)
{
	static const int64_t sizes[][2] = {
		{1, 1}, {2, 1}, {7, 1}, {8, 3}, {100, 1}, {224, 1}, {1000, 67}, {1001, 16}, {4096, 5}, {20000, 1},
	};
	int			passed = 0,
				failed = 0;

	for (int t = 1; t <= 4; t++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			for (int hot = 0; hot < 2; hot++)
			{
				if (check(t, sizes[i][0], sizes[i][1], hot))
					failed++;
				else
					passed++;
			}
	if (check_spares())
		failed++;
	else
		passed++;
	if (check_shares())
		failed++;
	else
		passed++;
	if (check_run_start_wakes())
		failed++;
	else
		passed++;
	if (check_worker_placement())
		failed++;
	else
		passed++;
	if (check_fork())
		failed++;
	else
		passed++;
	if (check_cancel())
		failed++;
	else
		passed++;
	if (check_cancel_long_chunks())
		failed++;
	else
		passed++;
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
