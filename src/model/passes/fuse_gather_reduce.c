/*
 * fuse_gather_reduce.c
 *	  An embedding bag, Gather of rows of a [V, E] table by indices
 *	  [..., L] followed by ReduceSum or ReduceMean over the L axis (PyTorch's
 *	  Embedding then .sum(1) or .mean(1)), becomes one onnx_pg.fused
 *	  GatherReduce (kernels/cpu/tensor_gather.c): the [..., L, E] gathered
 *	  rows, L times the output, are never written.
 *
 *	  Only for sessions that run the graph on the CPU (pc->private_ops), a
 *	  float32 table of known rank 2, indices of known rank, Gather on axis
 *	  0, and the reduction over exactly the indices' last axis with constant
 *	  axes; the kernel checks every index as Gather does.
 */
#include "model/passes/passes.h"

#include <stdlib.h>
#include <string.h>

static const ox_type *
tensor_type(const ox_graph *g, int v)
{
	return v >= 0 && g->values[v].type.kind == OX_TYPE_TENSOR ? &g->values[v].type : NULL;
}

/* the reduction's axes: the attribute, or from opset 13 (Sum) / 18 (Mean) a constant input */
static int
reduce_axes(const ox_graph *g, const ox_node *n, int64_t *axes, int max)
{
	bool		from_input = n->opset >= (strcmp(n->op_type, "ReduceSum") == 0 ? 13 : 18);

	if (from_input)
	{
		const ox_tensor *t = n->n_inputs > 1 ? ox_node_const_input(g, n, 1) : NULL;
		int64_t		cnt = t ? ox_tensor_numel(t) : -1;

		if (!t || t->dtype != OX_INT64 || cnt < 1 || cnt > max)
			return -1;
		for (int64_t i = 0; i < cnt; i++)
			axes[i] = ox_tensor_get_int64(t, i);
		return (int) cnt;
	}
	else
	{
		const int64_t *a;
		int			cnt = ox_attr_ints(n, "axes", &a);

		if (n->n_inputs != 1 || cnt < 1 || cnt > max)
			return -1;
		memcpy(axes, a, sizeof(int64_t) * (size_t) cnt);
		return cnt;
	}
}

static ox_code
fuse_at_reduce(ox_pass_ctx *pc, ox_graph *g, int k, ox_status *st)
{
	ox_node    *red = &g->nodes[k];
	ox_node    *ga;
	const ox_type *data,
			   *ind;
	int64_t		axes[2];
	int			gi,
				g_out;
	int		   *inputs;
	ox_attr		attrs[2];

	if (red->n_inputs < 1 || red->n_outputs != 1 || (g_out = red->inputs[0]) < 0 || red->outputs[0] < 0)
		return OX_OK;
	if ((gi = g->values[g_out].producer) < 0 || g->values[g_out].is_output ||
		ox_graph_sole_consumer(g, g_out) != k)
		return OX_OK;
	ga = &g->nodes[gi];
	if (!ox_pass_is_op(ga, "Gather") || ga->n_inputs != 2 || ga->n_outputs != 1 || ga->inputs[0] < 0 ||
		ga->inputs[1] < 0 || ox_attr_int(ga, "axis", 0) != 0)
		return OX_OK;
	data = tensor_type(g, ga->inputs[0]);
	ind = tensor_type(g, ga->inputs[1]);
	if (!data || data->elem != OX_FLOAT || data->rank != 2 || !ind || ind->rank < 1 ||
		(ind->elem != OX_INT64 && ind->elem != OX_INT32))
		return OX_OK;
	/* the gathered tensor is [..., L, E]: the L axis is ind->rank - 1, or -2 */
	if (reduce_axes(g, red, axes, 2) != 1 || (axes[0] != ind->rank - 1 && axes[0] != -2))
		return OX_OK;

	memset(attrs, 0, sizeof(attrs));
	attrs[0].name = "mean";
	attrs[0].type = OX_ATTR_INT;
	attrs[0].i = strcmp(red->op_type, "ReduceMean") == 0;
	attrs[1].name = "keepdims";
	attrs[1].type = OX_ATTR_INT;
	attrs[1].i = ox_attr_int(red, "keepdims", 1) != 0;
	OX_TRY(ox_pass_import_domain(pc->model, OX_PRIVATE_FUSED_DOMAIN, st));
	/* the reduction, after the Gather, becomes the fused node: its inputs come before it */
	OX_TRY(ox_pass_set_attrs(pc, g, k, NULL, 0, attrs, 2, st));
	red = &g->nodes[k];
	ga = &g->nodes[gi];
	inputs = malloc(sizeof(int) * 2);
	if (!inputs)
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not rewrite node \"%s\"", red->name);
	inputs[0] = ga->inputs[0];
	inputs[1] = ga->inputs[1];
	free(red->inputs);
	red->inputs = inputs;
	red->n_inputs = 2;
	ox_uses_node_changed(g, k);
	red->fused_from = strcmp(red->op_type, "ReduceMean") == 0 ? "Gather+ReduceMean" : "Gather+ReduceSum";
	red->op_type = "GatherReduce";
	red->domain = OX_PRIVATE_FUSED_DOMAIN;
	red->opset = 1;
	g->nodes[gi].dead = true;
	pc->changes++;
	return OX_OK;
}

ox_code
ox_pass_fuse_gather_reduce(ox_pass_ctx *pc, ox_graph *g, ox_status *st)
{
	if (!pc->private_ops)
		return OX_OK;
	for (int k = 0; k < g->n_nodes; k++)
	{
		if ((k & 63) == 63 && ox_pass_canceled(pc, st))
			return st->code;
		if (ox_pass_is_op(&g->nodes[k], "ReduceSum") || ox_pass_is_op(&g->nodes[k], "ReduceMean"))
			OX_TRY(fuse_at_reduce(pc, g, k, st));
	}
	return OX_OK;
}
