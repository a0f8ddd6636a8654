/*
 * test_session_shapes.c
 *	  A session's input shape signatures (ox_session_shape_count) and the
 *	  buffer bytes it holds between runs (ox_session_buffer_bytes): what
 *	  onnx_cache_stats reports as shapes and pool_bytes.  And the per-shape
 *	  choice of one thread or all (ox_thread_mode_threads/_note) over run
 *	  times given here, so that no check depends on this machine's speed.
 */
#include "runtime/exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int	failures;

#define CHECK(cond) do { if (!(cond)) { printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); failures++; } } while (0)

/*
 * X [N, C] -> ops[0] -> ... -> Y, one or two unary float ops, any N and C:
 * the value between two ops is T
 */
static ox_model *
chain_model(const char *const *ops_of, int n_ops, ox_status *st)
{
	ox_model   *m = ox_model_new(st);
	ox_graph   *g = ox_graph_new(m, NULL, st);
	ox_opset   *ops = ox_arena_alloc(&m->arena, sizeof(ox_opset));
	static const char *const names[] = {"X", "T", "Y"};

	if (n_ops < 1 || n_ops > 2)
		return NULL;
	ops->domain = "";
	ops->version = 13;
	m->opsets = ops;
	m->n_opsets = 1;
	m->ir_version = 8;
	m->graph = g;
	g->name = "main";
	for (int v = 0; v <= n_ops; v++)
	{
		ox_graph_add_value(g, v == n_ops ? "Y" : names[v], st);
		g->values[v].type.kind = OX_TYPE_TENSOR;
		g->values[v].type.elem = OX_FLOAT;
		g->values[v].type.rank = -1;
	}
	g->values[0].is_input = true;
	g->values[n_ops].is_output = true;
	g->inputs = malloc(sizeof(int));
	g->inputs[0] = 0;
	g->n_inputs = 1;
	g->outputs = malloc(sizeof(int));
	g->outputs[0] = n_ops;
	g->n_outputs = 1;
	for (int k = 0; k < n_ops; k++)
	{
		ox_node    *n = ox_graph_add_node(g, st);

		n->name = ops_of[k];
		n->op_type = ops_of[k];
		n->domain = "";
		n->doc = "";
		n->opset = 13;
		n->n_inputs = 1;
		n->inputs = malloc(sizeof(int));
		n->inputs[0] = k;
		n->n_outputs = 1;
		n->outputs = malloc(sizeof(int));
		n->outputs[0] = k + 1;
	}
	if (ox_graph_analyze(g, st) != OX_OK)
		return NULL;
	return m;
}

/* the input rows of run() */
static float *
run_data(void)
{
	static float data[4096];

	return data;
}

static ox_code
run(ox_session *s, bool tensor_path, int64_t rows, int64_t cols, ox_status *st)
{
	float	   *data = run_data();
	ox_value	in;

	memset(&in, 0, sizeof(in));
	in.kind = OX_VALUE_TENSOR;
	in.tensor.dtype = OX_FLOAT;
	in.tensor.rank = 2;
	in.tensor.dims[0] = rows;
	in.tensor.dims[1] = cols;
	in.tensor.data = data;
	ox_status_clear(st);
	if (tensor_path)
		return ox_session_run_tensor(s, &in.tensor, NULL, 0, st);
	return ox_session_run(s, &in, st);
}

/*
 * A shape whose runs on several threads are tiny goes on one thread, until
 * one of its runs there is long; shapes are independent, and a shape that
 * takes another's slot in the table starts on every thread
 */
static void
check_thread_modes(void)
{
	ox_thread_mode modes[OX_THREAD_MODES];
	uint64_t	a = 0x1234,
				b = 0x5678,
				a_twin = a + OX_THREAD_MODES;	/* a's slot */

	memset(modes, 0, sizeof(modes));
	CHECK(ox_thread_mode_threads(modes, a, 4) == 4);
	CHECK(ox_thread_mode_threads(modes, 0, 4) == 4);	/* an empty slot's signature */
	CHECK(ox_thread_mode_threads(modes, a, 1) == 1);

	/* a long run keeps every thread; a tiny one moves the shape to one */
	ox_thread_mode_note(modes, a, 4, OX_TINY_RUN_NS);
	CHECK(ox_thread_mode_threads(modes, a, 4) == 4);
	ox_thread_mode_note(modes, a, 4, OX_TINY_RUN_NS - 1);
	CHECK(ox_thread_mode_threads(modes, a, 4) == 1);
	CHECK(ox_thread_mode_threads(modes, b, 4) == 4);
	CHECK(ox_thread_mode_threads(modes, a_twin, 4) == 4);

	/* on one thread, runs up to OX_SERIAL_MAX_NS stay there */
	ox_thread_mode_note(modes, a, 1, OX_SERIAL_MAX_NS);
	CHECK(ox_thread_mode_threads(modes, a, 4) == 1);
	ox_thread_mode_note(modes, b, 2, 10);
	CHECK(ox_thread_mode_threads(modes, b, 2) == 1);
	CHECK(ox_thread_mode_threads(modes, a, 4) == 1);
	ox_thread_mode_note(modes, a, 1, OX_SERIAL_MAX_NS + 1);
	CHECK(ox_thread_mode_threads(modes, a, 4) == 4);
	CHECK(ox_thread_mode_threads(modes, b, 2) == 1);

	/* a twin's run takes the slot: a starts on every thread again */
	ox_thread_mode_note(modes, a, 4, 10);
	CHECK(ox_thread_mode_threads(modes, a, 4) == 1);
	ox_thread_mode_note(modes, a_twin, 4, 10);
	CHECK(ox_thread_mode_threads(modes, a_twin, 4) == 1);
	CHECK(ox_thread_mode_threads(modes, a, 4) == 4);
}

int
main(void)
{
	ox_status	st;
	ox_model   *m;
	ox_session *s;
	ox_session_options opts;
	ox_session_stats stats;

	check_thread_modes();

	ox_status_clear(&st);
	m = chain_model((const char *const[]) {"Relu"}, 1, &st);
	CHECK(m != NULL);
	if (!m)
		return 1;
	memset(&opts, 0, sizeof(opts));
	opts.opt_level = OX_OPT_ALL;
	s = ox_session_create(m, &opts, &st);
	CHECK(s != NULL);
	if (!s)
	{
		printf("session: %s\n", st.msg);
		return 1;
	}
	CHECK(ox_session_shape_count(s) == 0);
	CHECK(ox_session_buffer_bytes(s) == 0);

	/* the same shape through both run paths is one signature */
	CHECK(run(s, true, 1, 4, &st) == OX_OK);
	CHECK(run(s, false, 1, 4, &st) == OX_OK);
	CHECK(run(s, true, 1, 4, &st) == OX_OK);
	CHECK(ox_session_shape_count(s) == 1);
	/* the output buffer stays with the session: 4 floats at least */
	CHECK(ox_session_buffer_bytes(s) >= 4 * sizeof(float));
	ox_session_get_stats(s, &stats);
	CHECK(stats.tensor_bytes == ox_session_buffer_bytes(s));

	/* a new batch size, a new width, and back: three */
	CHECK(run(s, true, 8, 4, &st) == OX_OK);
	CHECK(run(s, false, 1, 8, &st) == OX_OK);
	CHECK(run(s, true, 1, 4, &st) == OX_OK);
	CHECK(run(s, true, 8, 4, &st) == OX_OK);
	CHECK(ox_session_shape_count(s) == 3);
	CHECK(ox_session_buffer_bytes(s) >= 32 * sizeof(float));

	/* dims [4, 1] and [1, 4] differ */
	CHECK(run(s, true, 4, 1, &st) == OX_OK);
	CHECK(ox_session_shape_count(s) == 4);

	/* a failed run counts nothing: rank 3 is fine for Relu, so feed a bad dtype */
	{
		ox_tensor	bad;
		static int64_t idata[4];

		memset(&bad, 0, sizeof(bad));
		bad.dtype = OX_INT64;
		bad.rank = 2;
		bad.dims[0] = 2;
		bad.dims[1] = 2;
		bad.data = idata;
		ox_status_clear(&st);
		CHECK(ox_session_run_tensor(s, &bad, NULL, 0, &st) != OX_OK);
		CHECK(ox_session_shape_count(s) == 4);
	}

	/* bounded: counts stop at OX_MAX_SHAPE_SIGNATURES */
	for (int64_t r = 1; r <= 100; r++)
		CHECK(run(s, r % 2 == 0, r, 2, &st) == OX_OK);
	CHECK(ox_session_shape_count(s) == OX_MAX_SHAPE_SIGNATURES);
	ox_session_free(s);

	/*
	 * A small value between two nodes keeps its buffer from run to run
	 * (ox_env_release_slot): repeated runs of one shape allocate nothing,
	 * the buffer counts in the session's bytes, and a value too big to
	 * keep, and the small one again, still give the right results.
	 */
	m = chain_model((const char *const[]) {"Neg", "Relu"}, 2, &st);
	CHECK(m != NULL);
	if (!m)
		return 1;
	opts.opt_level = OX_OPT_DISABLE;
	s = ox_session_create(m, &opts, &st);
	CHECK(s != NULL);
	if (!s)
	{
		printf("session: %s\n", st.msg);
		return 1;
	}
	{
		static const int64_t widths[] = {4, 4, 4, 2048, 2048, 4, 4, 4};
		int64_t		allocs = 0;
		int			y = ox_session_value_id(s, "Y"),
					t = ox_session_value_id(s, "T");

		for (size_t r = 0; r < sizeof(widths) / sizeof(widths[0]); r++)
		{
			const ox_value *out,
					   *tslot;
			int64_t		w = widths[r];

			for (int64_t i = 0; i < w; i++)
				run_data()[i] = (float) ((i * 7 + (int64_t) r) % 11) - 5.0f;
			CHECK(run(s, true, 1, w, &st) == OX_OK);
			out = ox_session_value(s, y);
			tslot = ox_session_value(s, t);
			CHECK(out && out->tensor.dims[1] == w);
			for (int64_t i = 0; out && i < w; i++)
			{
				float		x = run_data()[i];

				if (((const float *) out->tensor.data)[i] != (x < 0 ? -x : 0.0f))
				{
					CHECK(!"Y = Relu(Neg(X))");
					break;
				}
			}
			ox_session_get_stats(s, &stats);
			/*
			 * The third run of a width: nothing allocated, and T, used up,
			 * still holds its small buffer.  Relu hands its input's buffer to
			 * Y and Y's old one to T (in place): after the first big run T
			 * holds Y's small one, after the first small one again Y's big
			 * one, which goes to the pool; the run after that allocates a
			 * small buffer once, and the last allocates nothing.
			 */
			if (r == 2 || r == 7)
				CHECK(stats.alloc_events == allocs);
			allocs = stats.alloc_events;
			if (r == 2 || r == 3 || r == 7)
				CHECK(tslot && tslot->tensor.data && tslot->tensor.capacity >= 4 * sizeof(float));
			if (r == 5)
				CHECK(tslot && !tslot->tensor.data);
			/* Y's buffer at least (the first run had one buffer, shared in place) */
			CHECK(ox_session_buffer_bytes(s) >= (size_t) w * sizeof(float));
		}
	}
	ox_session_free(s);

	if (failures)
	{
		printf("test_session_shapes: %d failures\n", failures);
		return 1;
	}
	printf("test_session_shapes: ok\n");
	return 0;
}
