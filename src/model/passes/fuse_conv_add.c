/*
 * fuse_conv_add.c
 *	  Conv -> Add [-> activation] becomes com.microsoft FusedConv with the
 *	  other addend as its fourth input Z: Y = act(Conv(X, W, B) + Z), which
 *	  is how onnxruntime defines FusedConv (its own Conv + Add + activation
 *	  fusion makes the same node), so a model saved after this pass still
 *	  loads there.  The convolution kernel then adds Z and applies the
 *	  activation while each output tile is in registers: the residual
 *	  blocks of ResNet and MobileNet lose two passes over memory each.
 *
 *	  Conditions: a plain float32 Conv whose output feeds only the Add and
 *	  is not a graph output; Z has the same shape as the output (known
 *	  dims equal, symbolic dims with the same name), so the Add does not
 *	  broadcast; the activation, when there is one, is the Add's only
 *	  consumer and one that FusedConv takes.  Z may be produced after the
 *	  Conv: the graph is sorted again after the pass, which moves the fused
 *	  node behind Z's producer.
 */
#include "model/passes/passes.h"

#include <stdlib.h>
#include <string.h>

/* same dims: known and equal, or symbolic with the same name */
static bool
same_shape(const ox_type *a, const ox_type *b)
{
	if (a->kind != OX_TYPE_TENSOR || b->kind != OX_TYPE_TENSOR || a->rank < 0 || a->rank != b->rank)
		return false;
	for (int i = 0; i < a->rank; i++)
	{
		const ox_dim *x = &a->dims[i],
				   *y = &b->dims[i];

		if (x->value >= 0 || y->value >= 0)
		{
			if (x->value != y->value)
				return false;
		}
		else if (!x->param || !y->param || strcmp(x->param, y->param) != 0)
			return false;
	}
	return true;
}

ox_code
ox_pass_fuse_conv_add(ox_pass_ctx *pc, ox_graph *g, ox_status *st)
{
	for (int k = 0; k < g->n_nodes; k++)
	{
		ox_node    *conv = &g->nodes[k];
		ox_node    *add,
				   *act = NULL;
		const ox_value_def *out;
		const char *act_name = NULL;
		float		params[2];
		int			np = 0,
					a,
					z,
					y;
		int		   *in;

		if (!ox_pass_is_op(conv, "Conv") || conv->n_outputs != 1 || conv->outputs[0] < 0 ||
			conv->n_inputs < 2 || conv->n_inputs > 3)
			continue;
		out = &g->values[conv->outputs[0]];
		if (out->is_output || out->type.kind != OX_TYPE_TENSOR || out->type.elem != OX_FLOAT)
			continue;
		a = ox_graph_sole_consumer(g, conv->outputs[0]);
		if (a < 0)
			continue;
		add = &g->nodes[a];
		if (!ox_pass_is_op(add, "Add") || add->n_inputs != 2 || add->n_outputs != 1 || add->outputs[0] < 0)
			continue;
		if (add->inputs[0] == conv->outputs[0] && add->inputs[1] != conv->outputs[0])
			z = add->inputs[1];
		else if (add->inputs[1] == conv->outputs[0] && add->inputs[0] != conv->outputs[0])
			z = add->inputs[0];
		else
			continue;
		if (z < 0 || !same_shape(&g->values[z].type, &out->type) || g->values[z].type.elem != OX_FLOAT)
			continue;
		y = add->outputs[0];
		if (!g->values[y].is_output)
		{
			int			c = ox_graph_sole_consumer(g, y);

			if (c >= 0 && g->nodes[c].n_inputs >= 1 && g->nodes[c].inputs[0] == y &&
				g->nodes[c].n_outputs == 1 && g->nodes[c].outputs[0] >= 0 &&
				ox_pass_activation_of(g, &g->nodes[c], &act_name, params, &np))
				act = &g->nodes[c];
		}
		/* what can fail first, so that a failure leaks nothing */
		OX_TRY(ox_pass_import_domain(pc->model, OX_FUSED_DOMAIN, st));
		if (act)
			OX_TRY(ox_pass_add_activation_attrs(pc->model, conv, act_name, params, np, false, st));
		if (!(in = malloc(sizeof(int) * 4)))
			return ox_fail(st, OX_OUT_OF_MEMORY, "could not grow a node");
		in[0] = conv->inputs[0];
		in[1] = conv->inputs[1];
		in[2] = conv->n_inputs > 2 ? conv->inputs[2] : -1;
		in[3] = z;
		free(conv->inputs);
		conv->inputs = in;
		conv->n_inputs = 4;
		ox_uses_node_changed(g, k);
		conv->op_type = "FusedConv";
		conv->domain = OX_FUSED_DOMAIN;
		conv->opset = 1;
		conv->fused_from = act ? "Conv+Add+activation" : "Conv+Add";
		conv->outputs[0] = act ? act->outputs[0] : y;
		add->dead = true;
		if (act)
			act->dead = true;
		pc->changes++;
	}
	return OX_OK;
}
