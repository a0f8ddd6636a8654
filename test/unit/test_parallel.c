/*
 * test_parallel.c
 *	  ox_parallel_for's contract: every index of [0, n) is handed to exactly
 *	  one call, in ranges of at least min_chunk indices (all but the last of
 *	  the loop), whatever the thread count; with guided claims (parallel.c,
 *	  claim) the ranges shrink towards the end of a loop but never below
 *	  that.  Also inside a hot run (ox_parallel_run_begin/end), where the
 *	  workers spin between loops; and in a fork() child of a process whose
 *	  pool has its workers (the child's loops get workers of their own).
 */
#include "kernels/kernel.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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
	if (check_fork())
		failed++;
	else
		passed++;
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
