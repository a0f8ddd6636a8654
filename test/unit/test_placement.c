/*
 * test_placement.c
 *	  The provider placement pass with a fake device (a supports() that
 *	  accepts a few ops), and the CUDA fallback path of the session API,
 *	  which runs without a GPU: a session asking for cuda runs on the CPU
 *	  with a reason, provider_no_fallback makes that an error, and a
 *	  session that does not ask for cuda makes no CUDA call at all.
 */
#include "runtime/onnx_engine.h"
#include "runtime/placement.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* defined only when the engine is built with CUDA */
extern int64_t ox_cuda_runtime_calls(void) __attribute__((weak));

static int	failures;

#define CHECK(cond) do { if (!(cond)) { printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); failures++; } } while (0)

static int
value(ox_graph *g, const char *name, ox_status *st)
{
	int			v = ox_graph_add_value(g, name, st);

	g->values[v].type.kind = OX_TYPE_TENSOR;
	g->values[v].type.elem = OX_FLOAT;
	g->values[v].type.rank = -1;
	return v;
}

static void
node(ox_model *m, ox_graph *g, const char *op, const char *name, int n_in, const int *in, int n_out,
	 const int *out, ox_status *st)
{
	ox_node    *n = ox_graph_add_node(g, st);

	n->name = name;
	n->op_type = op;
	n->domain = "";
	n->doc = "";
	n->opset = 13;
	n->n_inputs = n_in;
	n->inputs = malloc(sizeof(int) * n_in);
	memcpy(n->inputs, in, sizeof(int) * n_in);
	n->n_outputs = n_out;
	n->outputs = malloc(sizeof(int) * n_out);
	memcpy(n->outputs, out, sizeof(int) * n_out);
}

/*
 *   X -> MatMul(W) -> a -> Relu -> b -> Shape -> s
 *                                  b, s -> Reshape -> c;  c + b -> d -> Sigmoid -> y
 * outputs y and b.  The fake device takes MatMul, Relu, Reshape and Add.
 */
static ox_model *
build_model(ox_status *st)
{
	static const float wdata[9] = {1, 0, 0, 0, 2, 0, 0, 0, -1};
	ox_model   *m = ox_model_new(st);
	ox_graph   *g = ox_graph_new(m, NULL, st);
	ox_tensor  *w = ox_model_new_tensor(m, st);
	int64_t		wd[2] = {3, 3};
	int			X, W, a, b, s, c, d, y;
	ox_opset   *ops = ox_arena_alloc(&m->arena, sizeof(ox_opset));

	ops->domain = "";
	ops->version = 13;
	m->opsets = ops;
	m->n_opsets = 1;
	m->ir_version = 8;
	m->graph = g;
	g->name = "main";
	X = value(g, "X", st);
	W = value(g, "W", st);
	a = value(g, "a", st);
	b = value(g, "b", st);
	s = value(g, "s", st);
	g->values[s].type.elem = OX_INT64;
	c = value(g, "c", st);
	d = value(g, "d", st);
	y = value(g, "y", st);
	ox_tensor_alloc(w, OX_FLOAT, 2, wd, st);
	memcpy(w->data, wdata, sizeof(wdata));
	g->values[W].init = w;
	g->values[X].is_input = true;
	g->values[y].is_output = true;
	g->values[b].is_output = true;
	g->inputs = malloc(sizeof(int));
	g->inputs[0] = X;
	g->n_inputs = 1;
	g->outputs = malloc(sizeof(int) * 2);
	g->outputs[0] = y;
	g->outputs[1] = b;
	g->n_outputs = 2;
	node(m, g, "MatMul", "mm", 2, (int[]) {X, W}, 1, (int[]) {a}, st);
	node(m, g, "Relu", "relu", 1, (int[]) {a}, 1, (int[]) {b}, st);
	node(m, g, "Shape", "shape", 1, (int[]) {b}, 1, (int[]) {s}, st);
	node(m, g, "Reshape", "reshape", 2, (int[]) {b, s}, 1, (int[]) {c}, st);
	node(m, g, "Add", "add", 2, (int[]) {c, b}, 1, (int[]) {d}, st);
	node(m, g, "Sigmoid", "sigmoid", 1, (int[]) {d}, 1, (int[]) {y}, st);
	if (ox_graph_analyze(g, st) != OX_OK)
		return NULL;
	return m;
}

static bool
fake_supports(const ox_graph *g, const ox_node *n, void *arg)
{
	(void) g;
	(void) arg;
	return strcmp(n->op_type, "MatMul") == 0 || strcmp(n->op_type, "Relu") == 0 ||
		strcmp(n->op_type, "Reshape") == 0 || strcmp(n->op_type, "Add") == 0;
}

static bool
fake_host_input(const ox_node *n, int i, void *arg)
{
	(void) arg;
	return strcmp(n->op_type, "Reshape") == 0 && i == 1;
}

static void
test_partitions(void)
{
	ox_status	st;
	ox_model   *m;
	ox_placement_rules rules = {"FakePartition", fake_supports, fake_host_input, NULL};
	int			np = -1;
	const ox_graph *g;
	const char *order[4];

	ox_status_clear(&st);
	m = build_model(&st);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(ox_place_partitions(m, &rules, &np, &st) == OX_OK);
	CHECK(np == 2);
	g = m->graph;
	CHECK(g->n_nodes == 4);
	for (int k = 0; k < g->n_nodes && k < 4; k++)
		order[k] = g->nodes[k].op_type;
	/* P0 {MatMul, Relu}; Shape needs b; P1 {Reshape, Add} needs s; Sigmoid */
	CHECK(g->n_nodes == 4 && strcmp(order[0], "FakePartition") == 0 && strcmp(order[1], "Shape") == 0 &&
		  strcmp(order[2], "FakePartition") == 0 && strcmp(order[3], "Sigmoid") == 0);
	if (g->n_nodes == 4)
	{
		const ox_node *p0 = &g->nodes[0],
				   *p1 = &g->nodes[2];
		const ox_graph *b0 = ox_attr_graph(p0, "body"),
				   *b1 = ox_attr_graph(p1, "body");

		CHECK(ox_node_is_partition(p0) && ox_node_is_partition(p1));
		CHECK(b0 && b0->n_nodes == 2 && b1 && b1->n_nodes == 2);
		CHECK(ox_graph_is_partition_body(b0) && !ox_graph_is_partition_body(g));
		/* P0: input X only (W is a constant inside), output b (graph output, read by P1 and Shape) */
		CHECK(p0->n_inputs == 1 && strcmp(g->values[p0->inputs[0]].name, "X") == 0);
		CHECK(p0->n_outputs == 1 && strcmp(g->values[p0->outputs[0]].name, "b") == 0);
		CHECK(b0 && b0->n_inputs == 1 && b0->n_outputs == 1);
		CHECK(b0 && ox_graph_find_value(b0, "W") >= 0 && b0->values[ox_graph_find_value(b0, "W")].init);
		/* P1: inputs b and s, output d */
		CHECK(p1->n_inputs == 2 && p1->n_outputs == 1 && strcmp(g->values[p1->outputs[0]].name, "d") == 0);
	}
	if (g->n_nodes == 4)
	{
		/* what onnx_profile reports per executed node */
		int			inner = -1;
		const char *first = "x",
				   *last = "x";

		CHECK(strcmp(ox_node_provider(&g->nodes[0], &inner, &first, &last), "cuda") == 0);
		CHECK(inner == 2 && first && strcmp(first, "mm") == 0 && last && strcmp(last, "relu") == 0);
		CHECK(strcmp(ox_node_provider(&g->nodes[2], &inner, &first, &last), "cuda") == 0);
		CHECK(inner == 2 && first && strcmp(first, "reshape") == 0 && last && strcmp(last, "add") == 0);
		CHECK(strcmp(ox_node_provider(&g->nodes[1], &inner, &first, &last), "cpu") == 0);
		CHECK(inner == 0 && first == NULL && last == NULL);
		CHECK(strcmp(ox_node_provider(&g->nodes[3], &inner, &first, &last), "cpu") == 0 && inner == 0);
	}
	ox_model_free(m);
}

/* the CUDA provider's own rules, through the no-device test hook */
static void
test_cuda_rules(void)
{
	ox_status	st;
	ox_model   *m;
	int			np = -1;
	ox_code		rc;

	ox_status_clear(&st);
	m = build_model(&st);
	rc = ox_cuda_place_dry(m, OX_OPT_ALL, &np, &st);
	if (rc == OX_UNSUPPORTED && strstr(st.msg, "without CUDA"))
	{
		printf("cuda rules: skipped (%s)\n", st.msg);
		ox_model_free(m);
		return;
	}
	CHECK(rc == OX_OK);
	/* {MatMul, Relu}, Shape on the CPU (int64), {Reshape, Add, Sigmoid} */
	CHECK(np == 2);
	CHECK(m->graph->n_nodes == 3);
	if (m->graph->n_nodes == 3)
		CHECK(strcmp(m->graph->nodes[1].op_type, "Shape") == 0 && ox_node_is_partition(&m->graph->nodes[2]) &&
			  ox_attr_graph(&m->graph->nodes[2], "body")->n_nodes == 3);
	ox_model_free(m);
}

/* the session API without a usable device: CPU with a reason, or an error */
static void
test_fallback(void)
{
	ox_status	st;
	ox_session_options opts;
	ox_session *s;
	float		x[6] = {1, -2, 3, -4, 5, 6};
	ox_value	in;
	char		why[256];
	bool		usable = ox_cuda_device_usable(0, why, sizeof(why));
	int64_t		calls0 = ox_cuda_runtime_calls ? ox_cuda_runtime_calls() : 0;

	ox_status_clear(&st);
	memset(&opts, 0, sizeof(opts));
	opts.opt_level = OX_OPT_ALL;
	CHECK(usable || why[0] != '\0');
	printf("cuda usable: %s%s%s\n", usable ? "yes" : "no", usable ? "" : ": ", usable ? "" : why);

	/* cpu only: no reason, no CUDA call */
	s = ox_session_create(build_model(&st), &opts, &st);
	CHECK(s != NULL);
	if (s)
	{
		CHECK(ox_session_fallback_reason(s) == NULL);
		CHECK(strcmp(ox_session_effective_providers(s), "cpu") == 0);
		CHECK(ox_session_node_count(s) == 6);
		ox_session_free(s);
	}
	if (ox_cuda_runtime_calls)
		CHECK(ox_cuda_runtime_calls() == calls0);
	if (usable)
		return;					/* the rest is about machines without a device */

	/* cuda,cpu without a device: runs on the CPU, says why */
	opts.providers = "cuda,cpu";
	s = ox_session_create(build_model(&st), &opts, &st);
	CHECK(s != NULL);
	if (s)
	{
		const char *name,
				   *op,
				   *prov;

		CHECK(ox_session_fallback_reason(s) != NULL);
		if (ox_session_fallback_reason(s))
			printf("fallback reason: %s\n", ox_session_fallback_reason(s));
		CHECK(strcmp(ox_session_effective_providers(s), "cpu") == 0);
		CHECK(ox_session_node_info(s, 0, &name, &op, &prov, &st) == OX_OK && strcmp(prov, "cpu") == 0);
		CHECK(ox_session_node_info(s, 99, &name, &op, &prov, &st) == OX_NOT_FOUND);
		ox_status_clear(&st);
		memset(&in, 0, sizeof(in));
		in.kind = OX_VALUE_TENSOR;
		in.tensor.dtype = OX_FLOAT;
		in.tensor.rank = 2;
		in.tensor.dims[0] = 2;
		in.tensor.dims[1] = 3;
		in.tensor.data = x;
		CHECK(ox_session_run(s, &in, &st) == OX_OK);
		ox_session_free(s);
	}
	/* no fallback: a clear error */
	opts.provider_no_fallback = true;
	ox_status_clear(&st);
	s = ox_session_create(build_model(&st), &opts, &st);
	CHECK(s == NULL);
	CHECK(st.code == OX_UNSUPPORTED && strstr(st.msg, "CUDA") != NULL);
	printf("no-fallback error: %s\n", st.msg);
	ox_session_free(s);
	/* a bad device id falls back too */
	opts.provider_no_fallback = false;
	opts.cuda_device_id = 7;
	ox_status_clear(&st);
	s = ox_session_create(build_model(&st), &opts, &st);
	CHECK(s != NULL && ox_session_fallback_reason(s) != NULL);
	ox_session_free(s);
}

int
main(void)
{
	/* loading the library and building graphs touched no CUDA entry point */
	if (ox_cuda_runtime_calls)
		CHECK(ox_cuda_runtime_calls() == 0);
	test_partitions();
	test_cuda_rules();
	test_fallback();
	if (failures)
	{
		printf("test_placement: %d failure(s)\n", failures);
		return 1;
	}
	printf("test_placement: ok\n");
	return 0;
}
