/*
 * manager.c
 *	  The pass manager and helpers shared by passes.
 */
#include "model/passes/passes.h"

#include <stdlib.h>
#include <string.h>

static const ox_pass passes[] = {
	{"qdq_fuse", 1, ox_pass_qdq_fuse},	/* before folding turns DQ(weights) into floats */
	{"constant_fold", 1, ox_pass_constant_fold},
	{"eliminate_identity", 1, ox_pass_eliminate_identity},
	{"fold_conv_bn", 1, ox_pass_fold_conv_bn},
	{"fuse_pad", 1, ox_pass_fuse_pad},
	{"eliminate_dead", 1, ox_pass_eliminate_dead},
	{"fuse_matmul_add", 2, ox_pass_fuse_matmul_add},	/* before fuse_activation: Gemm takes the Relu */
	{"fuse_activation", 2, ox_pass_fuse_activation},
	{"fuse_transformer", 2, ox_pass_fuse_transformer},
	{"fuse_attention", 2, ox_pass_fuse_attention},	/* after fuse_transformer: its FusedMatMul */
	{"fuse_gather_reduce", 2, ox_pass_fuse_gather_reduce},
	{"fuse_conv_add", 2, ox_pass_fuse_conv_add},
	{"layout_nhwc", 3, ox_pass_layout_nhwc},
	{"layout_nchwc", 3, ox_pass_layout_nchwc},
};

/* a few rounds reach the fixed point on real models; more would only hide a bug */
#define MAX_ROUNDS 4

/* the passes up to level, once, on g, with g's use index on */
static ox_code
optimize_graph_once(ox_pass_ctx *pc, ox_graph *g, int level, ox_status *st)
{
	for (size_t p = 0; p < sizeof(passes) / sizeof(passes[0]); p++)
	{
		if (passes[p].level > level)
			continue;
		/* a query cancel must not wait for the whole optimizer */
		if (ox_pass_canceled(pc, st))
			return st->code;
		OX_TRY(passes[p].run(pc, g, st));
		OX_TRY(ox_uses_check(g, passes[p].name, st));
		OX_TRY(ox_graph_analyze(g, st));
	}
	return OX_OK;
}

ox_code
ox_optimize(ox_pass_ctx *pc, int level, ox_status *st)
{
	ox_model   *m = pc->model;

	for (int round = 0; round < MAX_ROUNDS; round++)
	{
		int			before = pc->changes;

		/* graphs are never added by passes, so the list is stable */
		for (int gi = 0; gi < m->n_graphs; gi++)
		{
			ox_graph   *g = m->graphs[gi];
			ox_code		rc;

			OX_TRY(ox_uses_begin(g, st));
			rc = optimize_graph_once(pc, g, level, st);
			/* the index is for the passes only: off whatever happened */
			(void) ox_uses_end(g, "", NULL);
			if (rc != OX_OK)
				return rc;
		}
		if (pc->changes == before)
			break;
	}
	return OX_OK;
}

bool
ox_pass_canceled(ox_pass_ctx *pc, ox_status *st)
{
	if (!pc->should_abort || !pc->should_abort(pc->abort_arg))
		return false;
	ox_fail(st, OX_CANCELED, "session creation was canceled");
	return true;
}

ox_code
ox_pass_import_domain(ox_model *m, const char *domain, ox_status *st)
{
	ox_opset   *o;

	if (ox_model_opset(m, domain) >= 0)
		return OX_OK;
	o = ox_arena_alloc(&m->arena, sizeof(ox_opset) * (size_t) (m->n_opsets + 1));
	if (!o)
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not add an opset import");
	if (m->n_opsets)
		memcpy(o, m->opsets, sizeof(ox_opset) * (size_t) m->n_opsets);
	o[m->n_opsets].domain = domain;
	o[m->n_opsets].version = 1;
	m->opsets = o;
	m->n_opsets++;
	return OX_OK;
}

int
ox_pass_add_node(ox_pass_ctx *pc, ox_graph *g, const char *op, const char *domain,
				 const char *name, const int *in, int n_in, const int *out, int n_out,
				 const char *fused_from, ox_status *st)
{
	ox_node    *n;

	if (domain[0] != '\0' && ox_pass_import_domain(pc->model, domain, st) != OX_OK)
		return -1;
	n = ox_graph_add_node(g, st);
	if (!n)
		return -1;
	n->op_type = op;
	n->domain = domain;
	n->name = name;
	n->opset = domain[0] ? 1 : (int) ox_model_opset(pc->model, "");
	n->fused_from = fused_from;
	n->inputs = malloc(sizeof(int) * (size_t) (n_in + 1));
	n->outputs = malloc(sizeof(int) * (size_t) (n_out + 1));
	if (!n->inputs || !n->outputs)
	{
		ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate a node");
		return -1;
	}
	memcpy(n->inputs, in, sizeof(int) * (size_t) n_in);
	n->n_inputs = n_in;
	memcpy(n->outputs, out, sizeof(int) * (size_t) n_out);
	n->n_outputs = n_out;
	return (int) (n - g->nodes);
}

int
ox_pass_new_init(ox_pass_ctx *pc, ox_graph *g, const char *prefix, ox_dtype dt, int rank,
				 const int64_t *dims, void **data, ox_status *st)
{
	ox_tensor  *t = ox_model_new_tensor(pc->model, st);
	int			id;

	if (!t || ox_tensor_alloc_zero(t, dt, rank, dims, st) != OX_OK)
		return -1;
	id = ox_graph_add_value(g, ox_model_unique_name(pc->model, prefix), st);
	if (id < 0)
		return -1;
	g->values[id].init = t;
	ox_type_from_tensor(pc->model, &g->values[id].type, t);
	*data = t->data;
	return id;
}

ox_code
ox_pass_set_attrs(ox_pass_ctx *pc, ox_graph *g, int node, const ox_attr *copy, int n_copy,
				  const ox_attr *extra, int n_extra, ox_status *st)
{
	ox_attr    *a = ox_arena_alloc(&pc->model->arena, sizeof(ox_attr) * (size_t) (n_copy + n_extra + 1));

	if (!a)
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate attributes");
	if (n_copy)
		memcpy(a, copy, sizeof(ox_attr) * (size_t) n_copy);
	if (n_extra)
		memcpy(a + n_copy, extra, sizeof(ox_attr) * (size_t) n_extra);
	g->nodes[node].attrs = a;
	g->nodes[node].n_attrs = n_copy + n_extra;
	return OX_OK;
}

ox_code
ox_pass_add_int_attr(ox_pass_ctx *pc, ox_graph *g, int node, const char *name, int64_t value, ox_status *st)
{
	ox_attr		a;

	memset(&a, 0, sizeof(a));
	a.name = name;
	a.type = OX_ATTR_INT;
	a.i = value;
	return ox_pass_set_attrs(pc, g, node, g->nodes[node].attrs, g->nodes[node].n_attrs, &a, 1, st);
}

const ox_tensor *
ox_node_const_input(const ox_graph *g, const ox_node *n, int i)
{
	if (i < 0 || i >= n->n_inputs || n->inputs[i] < 0)
		return NULL;
	/* an initializer that is also a graph input can be overridden: not constant */
	if (g->values[n->inputs[i]].is_input)
		return NULL;
	return g->values[n->inputs[i]].init;
}
