/*
 * fuse_activation.c
 *	  Conv -> activation and Gemm -> activation become com.microsoft
 *	  FusedConv / FusedGemm: the activation runs on the output while it is
 *	  still in cache instead of in a second pass over memory.  The fused ops
 *	  are onnxruntime's own contrib operators (same names, attributes and
 *	  semantics), so a model saved after this pass still loads there.
 *
 *	  Only float32 and double outputs are fused (the fused kernels compute
 *	  activations in the output type).
 */
#include "model/passes/passes.h"

#include <math.h>
#include <string.h>

#define FUSED_DOMAIN "com.microsoft"

static bool
is_op(const ox_node *n, const char *op)
{
	return !n->dead && n->domain[0] == '\0' && strcmp(n->op_type, op) == 0;
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

/* describe act as (name, params); false when it cannot be fused */
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

/* make sure the model imports the contrib domain the fused ops live in */
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

/*
 * FusedConv takes activation_params (floats); FusedGemm takes
 * activation_alpha / activation_beta: onnxruntime's two schemas differ.
 */
static ox_code
add_fused_attrs(ox_model *m, ox_node *n, const char *act, const float *params, int np, bool gemm,
				ox_status *st)
{
	ox_attr    *attrs = ox_arena_alloc(&m->arena, sizeof(ox_attr) * (n->n_attrs + 2));
	float	   *p = np ? ox_arena_alloc(&m->arena, sizeof(float) * np) : NULL;

	if (!attrs || (np && !p))
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not add fused attributes");
	if (n->n_attrs)
		memcpy(attrs, n->attrs, sizeof(ox_attr) * n->n_attrs);
	attrs[n->n_attrs].name = "activation";
	attrs[n->n_attrs].type = OX_ATTR_STRING;
	attrs[n->n_attrs].s = act;
	attrs[n->n_attrs].s_len = strlen(act);
	n->n_attrs++;
	if (np && gemm)
	{
		static const char *const names[] = {"activation_alpha", "activation_beta"};

		for (int i = 0; i < np && i < 2; i++)
		{
			attrs[n->n_attrs].name = names[i];
			attrs[n->n_attrs].type = OX_ATTR_FLOAT;
			attrs[n->n_attrs].f = params[i];
			n->n_attrs++;
		}
	}
	else if (np)
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
ox_pass_fuse_activation(ox_pass_ctx *pc, ox_graph *g, ox_status *st)
{
	for (int k = 0; k < g->n_nodes; k++)
	{
		ox_node    *n = &g->nodes[k];
		ox_node    *act;
		const ox_value_def *out;
		const char *name;
		float		params[2];
		int			np;
		int			a;

		if (!(is_op(n, "Conv") || is_op(n, "Gemm")) || n->n_outputs != 1 || n->outputs[0] < 0)
			continue;
		out = &g->values[n->outputs[0]];
		if (out->is_output || out->type.kind != OX_TYPE_TENSOR ||
			(out->type.elem != OX_FLOAT && out->type.elem != OX_DOUBLE))
			continue;
		a = ox_graph_sole_consumer(g, n->outputs[0]);
		if (a < 0)
			continue;
		act = &g->nodes[a];
		if (act->n_inputs < 1 || act->inputs[0] != n->outputs[0] || act->n_outputs != 1 ||
			act->outputs[0] < 0 || !activation_of(g, act, &name, params, &np))
			continue;
		/* onnxruntime's FusedGemm has no Clip */
		if (is_op(n, "Gemm") && strcmp(name, "Clip") == 0)
			continue;
		OX_TRY(import_fused_domain(pc->model, st));
		OX_TRY(add_fused_attrs(pc->model, n, name, params, np, is_op(n, "Gemm"), st));
		n->fused_from = strcmp(n->op_type, "Conv") == 0 ? "Conv+activation" : "Gemm+activation";
		n->op_type = strcmp(n->op_type, "Conv") == 0 ? "FusedConv" : "FusedGemm";
		n->domain = FUSED_DOMAIN;
		n->opset = 1;
		n->outputs[0] = act->outputs[0];
		act->dead = true;
		pc->changes++;
	}
	return OX_OK;
}
