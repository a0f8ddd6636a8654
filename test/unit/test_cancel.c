/*
 * test_cancel.c
 *	  Cancellation at every point the engine polls the abort callback.
 *
 * PostgreSQL's query cancel stays pending once raised, so the callback here
 * answers "stop" from its k-th call on, for several k up to the number of
 * polls an uncanceled run makes.  Once the callback has said stop, the run
 * (or the session creation) must end with OX_CANCELED: a run that still
 * succeeds would hand back incomplete outputs.  After every canceled run
 * the same session must run again and give the reference result bit for bit
 * (nothing half-done stays behind), and under valgrind (scripts/test.sh) no
 * canceled path may leak or touch memory it should not.
 *
 * Models: test/t/data (test/t/make_models.py), found from argv[0]
 * (build/unit/test_cancel -> the repository root).  Each big_*.onnx is one
 * long kernel sized by an int64 input S, followed by two ReduceSums;
 * cancel_chain.onnx is a MatMul chain whose session creation folds
 * constants and packs weights; heavy_loop.onnx a Loop.
 */
#include "kernels/kernel.h"			/* ox_now_ns */
#include "runtime/exec.h"			/* OX_SERIAL_MAX_NS */
#include "runtime/onnx_engine.h"

#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int	failures;
static int	checks;

#define CHECK(cond, ...) \
	do { \
		checks++; \
		if (!(cond)) \
		{ \
			printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			printf(__VA_ARGS__); \
			printf("\n"); \
			failures++; \
		} \
	} while (0)

static char data_dir[PATH_MAX];

/* the callback: count polls; from poll number cancel_at on, answer stop */
static int64_t polls;
static int64_t cancel_at;		/* 0: never */

static bool
abort_cb(void *arg)
{
	(void) arg;
	polls++;
	return cancel_at > 0 && polls >= cancel_at;
}

/* the sessions' intra-op threads: the big models run on 1, then on 2 */
static int	create_threads = 1;

static ox_model *
load(const char *name)
{
	char		path[PATH_MAX + 64];
	FILE	   *f;
	long		n;
	char	   *b;
	ox_status	st;
	ox_model   *m;

	snprintf(path, sizeof(path), "%s/%s", data_dir, name);
	f = fopen(path, "rb");
	if (!f)
	{
		printf("FAIL: cannot open %s\n", path);
		failures++;
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	b = malloc(n);
	if (fread(b, 1, n, f) != (size_t) n)
		n = 0;
	fclose(f);
	ox_status_clear(&st);
	m = ox_model_load(b, n, NULL, &st);
	free(b);
	CHECK(m != NULL, "%s: %s", name, st.msg);
	return m;
}

static ox_session *
create(const char *name, int64_t at, ox_status *st)
{
	ox_model   *m = load(name);
	ox_session_options o;

	if (!m)
		return NULL;
	memset(&o, 0, sizeof(o));
	o.opt_level = OX_OPT_ALL;
	o.intra_op_threads = create_threads;
	o.should_abort = abort_cb;
	polls = 0;
	cancel_at = at;
	ox_status_clear(st);
	return ox_session_create(m, &o, st);
}

/* run with the given inputs; the first output as a float, or NAN */
static ox_code
run(ox_session *s, ox_value *in, int64_t at, float *y, ox_status *st)
{
	ox_code		rc;

	polls = 0;
	cancel_at = at;
	ox_status_clear(st);
	rc = ox_session_run(s, in, st);
	*y = NAN;
	if (rc == OX_OK)
	{
		const ox_value *v = ox_session_result(s, 0);

		if (v && v->kind == OX_VALUE_TENSOR && v->tensor.dtype == OX_FLOAT && ox_tensor_numel(&v->tensor) >= 1)
			*y = ((const float *) v->tensor.data)[0];
	}
	return rc;
}

/* poll numbers to cancel at: the first few, some in the middle, the last */
static int
cancel_points(int64_t total, int64_t *at, int max)
{
	int			n = 0;

	for (int64_t k = 1; k <= total && k <= 3 && n < max; k++)
		at[n++] = k;
	for (int q = 1; q < 4 && n < max; q++)
		if (total * q / 4 > 3)
			at[n++] = total * q / 4;
	if (total > 3 && n < max)
		at[n++] = total;
	return n;
}

static void
run_tensor_input(ox_value *in, ox_dtype dt, int rank, const int64_t *dims, const void *data)
{
	ox_status	st;

	ox_status_clear(&st);
	ox_value_init_tensor(in);
	ox_tensor_alloc(&in->tensor, dt, rank, dims, &st);
	memcpy(in->tensor.data, data, (size_t) ox_shape_numel(rank, dims) * ox_dtype_size(dt));
}

/* every cancel point of one model's run, then an uncanceled rerun */
static void
check_runs(const char *name, ox_value *inputs, double expect)
{
	ox_status	st;
	ox_session *s = create(name, 0, &st);
	float		ref,
				y;
	int64_t		total,
				at[8];
	int			n;

	CHECK(s != NULL, "%s: %s", name, st.msg);
	if (!s)
		return;
	CHECK(run(s, inputs, 0, &ref, &st) == OX_OK, "%s: %s", name, st.msg);
	total = polls;
	CHECK(fabs(ref - expect) <= 1e-3 * fabs(expect) + 1e-6, "%s: %g, expected %g", name, ref, expect);
	CHECK(total >= 2, "%s: only %lld polls", name, (long long) total);
	n = cancel_points(total, at, 8);
	for (int i = 0; i < n; i++)
	{
		ox_code		rc = run(s, inputs, at[i], &y, &st);

		/*
		 * Single-threaded loops poll between slices sized by time, so a run
		 * may poll fewer times than the reference did: completing is right
		 * only when the callback never said stop.
		 */
		CHECK(rc == OX_CANCELED || (rc == OX_OK && polls < at[i]),
			  "%s: canceled at poll %lld of %lld: %s (%s), %lld polls", name,
			  (long long) at[i], (long long) total, ox_code_name(rc), st.msg, (long long) polls);
		/* a stop is pending: a few more polls may see it, no more work */
		CHECK(polls <= at[i] + 3, "%s: went on after poll %lld (%lld polls)", name,
			  (long long) at[i], (long long) polls);
		rc = run(s, inputs, 0, &y, &st);
		CHECK(rc == OX_OK && memcmp(&y, &ref, sizeof(float)) == 0,
			  "%s: after a cancel at poll %lld: %s, %g instead of %g", name, (long long) at[i],
			  ox_code_name(rc), y, ref);
	}
	printf("%-20s %3lld polls, canceled at %d of them%s\n", name, (long long) total, n,
		   create_threads > 1 ? " (2 threads)" : "");
	ox_session_free(s);
}

static void
check_big(const char *name, int64_t a, int64_t b, double expect)
{
	ox_value	in;
	int64_t		two = 2;
	int64_t		shape[2] = {a, b};

	run_tensor_input(&in, OX_INT64, 1, &two, shape);
	check_runs(name, &in, expect);
	ox_value_release(&in);
}

/* session creation (constant folding, weight packing) canceled at each poll */
static void
check_create(const char *name)
{
	ox_status	st;
	ox_session *s = create(name, 0, &st);
	int64_t		total = polls,
				at[8];
	int			n;

	CHECK(s != NULL, "%s: %s", name, st.msg);
	if (!s)
		return;
	ox_session_free(s);
	CHECK(total >= 10, "%s: session creation polled only %lld times", name, (long long) total);
	n = cancel_points(total, at, 8);
	for (int i = 0; i < n; i++)
	{
		s = create(name, at[i], &st);
		CHECK(s == NULL && st.code == OX_CANCELED, "%s: creation canceled at poll %lld of %lld: %s", name,
			  (long long) at[i], (long long) total, s ? "created" : st.msg);
		CHECK(polls <= at[i] + 3, "%s: creation went on after poll %lld (%lld polls)", name,
			  (long long) at[i], (long long) polls);
		if (s)
			ox_session_free(s);
	}
	printf("%-20s %3lld polls in session creation, canceled at %d of them\n", name, (long long) total, n);
}

static int64_t
single_thread_runs(const ox_session *s)
{
	ox_session_stats stats;

	ox_session_get_stats(s, &stats);
	return stats.single_thread_runs;
}

/*
 * A session on two threads runs an input shape whose run was short on one
 * thread from then on (session.c, run_plan_timed), until such a run takes
 * long; a run canceled after that long on one thread says so too.  The
 * attention model's work depends on S's values, not its shape: a short
 * S = [2, 3], then S = [3000, 256] canceled tens of ms into its serial
 * run; the next S = [2, 3] is back on two threads.
 */
static void
check_thread_mode_after_cancel(void)
{
	ox_model   *m = load("big_attention.onnx");
	ox_session_options o;
	ox_session *s;
	ox_status	st;
	ox_value	small,
				big;
	int64_t		dims[1] = {2},
				s_small[2] = {2, 3},
				s_big[2] = {3000, 256};
	float		y;
	ox_code		rc;
	bool		serial = false;

	if (!m)
		return;
	memset(&o, 0, sizeof(o));
	o.opt_level = OX_OPT_ALL;
	o.intra_op_threads = 2;
	o.should_abort = abort_cb;
	cancel_at = 0;
	ox_status_clear(&st);
	s = ox_session_create(m, &o, &st);
	CHECK(s != NULL, "attention on 2 threads: %s", st.msg);
	if (!s)
		return;
	run_tensor_input(&small, OX_INT64, 1, dims, s_small);
	run_tensor_input(&big, OX_INT64, 1, dims, s_big);
	/*
	 * Short runs until one is made on one thread in under OX_SERIAL_MAX_NS
	 * (then the next one of the shape is on one thread too).  The first, on both,
	 * creates the pool; under valgrind no run may be that short.
	 */
	for (int i = 0; i < 50 && !serial; i++)
	{
		int64_t		before = single_thread_runs(s),
					t0 = ox_now_ns();

		CHECK(run(s, &small, 0, &y, &st) == OX_OK && y == 6.0f, "S = [2, 3]: %s, %g", st.msg, y);
		serial = single_thread_runs(s) > before && ox_now_ns() - t0 < OX_SERIAL_MAX_NS;
	}
	if (!serial)
		printf("%-20s no run of S = [2, 3] took under 50 us on 2 threads and then under 200 us on one: "
			   "thread mode not checked\n", "big_attention.onnx");
	else
	{
		int64_t		n = single_thread_runs(s);

		/* the big S has the same shape: one thread, canceled at its 100th poll (milliseconds in) */
		rc = run(s, &big, 100, &y, &st);
		CHECK(rc == OX_CANCELED && single_thread_runs(s) == n + 1,
			  "S = [3000, 256]: %s, %lld single-thread runs (%lld before)", ox_code_name(rc),
			  (long long) single_thread_runs(s), (long long) n);
		CHECK(run(s, &small, 0, &y, &st) == OX_OK && y == 6.0f && single_thread_runs(s) == n + 1,
			  "S = [2, 3] after the canceled long run: %s, %lld single-thread runs (%lld: on both threads)",
			  st.msg, (long long) single_thread_runs(s), (long long) n + 1);
		printf("%-20s a canceled long serial run puts its shape back on 2 threads\n", "big_attention.onnx");
	}
	ox_value_release(&small);
	ox_value_release(&big);
	ox_session_free(s);
}

int
main(int argc, char **argv)
{
	char		self[PATH_MAX];
	int64_t		a = 256,
				b = 1024;
	double		ab = (double) a * b;

	/*
	 * build/unit/test_cancel (or fuzz/build/unit/test_cancel, the sanitized
	 * build) -> <root>/test/t/data: the nearest one up from the binary
	 */
	if (!realpath(argv[0], self))
	{
		printf("FAIL: cannot resolve %s\n", argv[0]);
		return 1;
	}
	{
		char		up[PATH_MAX] = "";
		char	   *dir = dirname(self);

		for (int i = 0; i < 4; i++)
		{
			char		probe[2 * PATH_MAX];

			strcat(up, "/..");
			snprintf(data_dir, sizeof(data_dir), "%s%s/test/t/data", dir, up);
			snprintf(probe, sizeof(probe), "%s/cancel_chain.onnx", data_dir);
			if (access(probe, R_OK) == 0)
				break;
		}
	}
	(void) argc;

	check_create("cancel_chain.onnx");
	{
		ox_value	in;
		int64_t		dims[2] = {1, 64};
		float		x[64];

		for (int i = 0; i < 64; i++)
			x[i] = 1.0f;
		run_tensor_input(&in, OX_FLOAT, 2, dims, x);
		check_runs("cancel_chain.onnx", &in, 64.0 * 64.0);
		ox_value_release(&in);
	}
	{
		ox_value	in[2];
		int64_t		dims[1] = {1};
		int64_t		m = 20000;
		float		x = 0;

		run_tensor_input(&in[0], OX_INT64, 0, dims, &m);
		run_tensor_input(&in[1], OX_FLOAT, 1, dims, &x);
		check_runs("heavy_loop.onnx", in, 20000.0);
		ox_value_release(&in[0]);
		ox_value_release(&in[1]);
	}
	/*
	 * On 2 threads too: the workers' polls inside their chunks answer what
	 * the caller was told (fused attention's slots of tasks end early),
	 * and what they leave half done must not matter either.  Four times
	 * the rows there: runs of the small size can take under 50 us, which
	 * makes the session run them on one thread.
	 */
	for (create_threads = 1; create_threads <= 2; create_threads++, a *= 4, ab *= 4)
	{
		check_big("big_constant.onnx", a, b, ab);
		check_big("big_range.onnx", a, b, ab * (ab - 1) / 2);
		check_big("big_expand.onnx", a, b, ab);
		check_big("big_tile.onnx", a, b, ab);
		check_big("big_gather.onnx", a, b, ab);
		check_big("big_concat.onnx", a, b, 2 * ab);
		check_big("big_resize.onnx", a, b, ab);
		check_big("big_add.onnx", a, b, 2 * ab);
		check_big("big_matmul.onnx", a, 256, (double) a * 256 * 256);
		check_big("big_softmax.onnx", a, b, (double) a);
		check_big("big_transpose.onnx", a, b, ab);
		/* softmax(Q Q^T) Q of ones is Q: the fused kernel polls between its tasks of query rows */
		check_big("big_attention.onnx", 600, 64, 600.0 * 64);
	}
	create_threads = 1;
	check_thread_mode_after_cancel();

	printf("%d passed, %d failed\n", checks - failures, failures);
	return failures ? 1 : 0;
}
