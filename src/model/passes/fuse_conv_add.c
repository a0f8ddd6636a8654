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

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FUSED_DOMAIN "com.microsoft"

static bool
is_op(const ox_node *n, const char *op)
{
	return !n->dead && n->domain[0] == '\0' && strcmp(n->op_type, op) == 0;
}

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

/* scalar float constant behind input i, or def when absent */
static bool
const_scalar(const ox_graph *g, const ox_node *n, int i, float def, float *out)
{
	const ox_tensor *t;

	if (i >= n->n_inputs || n->inputs[i] < 0)
	{
		*out = def;
		return true;
	}
	t = ox_node_const_input(g, n, i);
	if (!t || ox_tensor_numel(t) != 1 || (t->dtype != OX_FLOAT && t->dtype != OX_DOUBLE))
		return false;
	*out = (float) ox_tensor_get_double(t, 0);
	return true;
}

/*
 * The activations FusedConv takes, as (name, params); false for anything
 * else.  (fuse_activation.c recognizes the same set.)
 */
static bool
activation_of(const ox_graph *g, const ox_node *act, const char **name, float *params, int *np)
{
	*np = 0;
	if (is_op(act, "Relu") || is_op(act, "Sigmoid") || is_op(act, "Tanh"))
	{
		*name = act->op_type;
		return true;
	}
	if (is_op(act, "LeakyRelu"))
	{
		*name = "LeakyRelu";
		params[(*np)++] = ox_attr_float(act, "alpha", 0.01f);
		return true;
	}
	if (is_op(act, "HardSigmoid"))
	{
		*name = "HardSigmoid";
		params[(*np)++] = ox_attr_float(act, "alpha", 0.2f);
		params[(*np)++] = ox_attr_float(act, "beta", 0.5f);
		return true;
	}
	if (is_op(act, "Clip"))
	{
		*name = "Clip";
		if (act->opset < 11)
		{
			params[0] = ox_attr_float(act, "min", -INFINITY);
			params[1] = ox_attr_float(act, "max", INFINITY);
		}
		else if (!const_scalar(g, act, 1, -INFINITY, &params[0]) ||
				 !const_scalar(g, act, 2, INFINITY, &params[1]))
			return false;
		*np = 2;
		return true;
	}
	return false;
}

static ox_code
import_fused_domain(ox_model *m, ox_status *st)
{
	ox_opset   *ops;

	if (ox_model_opset(m, FUSED_DOMAIN) >= 0)
		return OX_OK;
	ops = ox_arena_alloc(&m->arena, sizeof(ox_opset) * (m->n_opsets + 1));
	if (!ops)
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not extend the opset imports");
	memcpy(ops, m->opsets, sizeof(ox_opset) * m->n_opsets);
	ops[m->n_opsets].domain = FUSED_DOMAIN;
	ops[m->n_opsets].version = 1;
	m->opsets = ops;
	m->n_opsets++;
	return OX_OK;
}

/* FusedConv's activation and activation_params attributes */
static ox_code
add_activation_attrs(ox_model *m, ox_node *n, const char *act, const float *params, int np,
					 ox_status *st)
{
	ox_attr    *attrs = ox_arena_alloc(&m->arena, sizeof(ox_attr) * (n->n_attrs + 2));
	float	   *p = np ? ox_arena_alloc(&m->arena, sizeof(float) * np) : NULL;

	if (!attrs || (np && !p))
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not add fused attributes");
	if (n->n_attrs)
		memcpy(attrs, n->attrs, sizeof(ox_attr) * n->n_attrs);
	memset(attrs + n->n_attrs, 0, sizeof(ox_attr) * 2);
	attrs[n->n_attrs].name = "activation";
	attrs[n->n_attrs].type = OX_ATTR_STRING;
	attrs[n->n_attrs].s = act;
	attrs[n->n_attrs].s_len = strlen(act);
	n->n_attrs++;
	if (np)
	{
		memcpy(p, params, sizeof(float) * np);
		attrs[n->n_attrs].name = "activation_params";
		attrs[n->n_attrs].type = OX_ATTR_FLOATS;
		attrs[n->n_attrs].floats = p;
		attrs[n->n_attrs].n = np;
		n->n_attrs++;
	}
	n->attrs = attrs;
	return OX_OK;
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

		if (!is_op(conv, "Conv") || conv->n_outputs != 1 || conv->outputs[0] < 0 ||
			conv->n_inputs < 2 || conv->n_inputs > 3)
			continue;
		out = &g->values[conv->outputs[0]];
		if (out->is_output || out->type.kind != OX_TYPE_TENSOR || out->type.elem != OX_FLOAT)
			continue;
		a = ox_graph_sole_consumer(g, conv->outputs[0]);
		if (a < 0)
			continue;
		add = &g->nodes[a];
		if (!is_op(add, "Add") || add->n_inputs != 2 || add->n_outputs != 1 || add->outputs[0] < 0)
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
				activation_of(g, &g->nodes[c], &act_name, params, &np))
				act = &g->nodes[c];
		}
		if (!(in = malloc(sizeof(int) * 4)))
			return ox_fail(st, OX_OUT_OF_MEMORY, "could not grow a node");
		in[0] = conv->inputs[0];
		in[1] = conv->inputs[1];
		in[2] = conv->n_inputs > 2 ? conv->inputs[2] : -1;
		in[3] = z;
		OX_TRY(import_fused_domain(pc->model, st));
		if (act)
			OX_TRY(add_activation_attrs(pc->model, conv, act_name, params, np, st));
		free(conv->inputs);
		conv->inputs = in;
		conv->n_inputs = 4;
		conv->op_type = "FusedConv";
		conv->domain = FUSED_DOMAIN;
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
