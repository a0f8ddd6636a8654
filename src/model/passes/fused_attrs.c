/*
 * fused_attrs.c
 *	  What fuse_activation and fuse_conv_add share when they turn a node and
 *	  the activation after it into onnxruntime's FusedConv or FusedGemm:
 *	  recognizing the activation and writing its attributes.
 */
#include "model/passes/passes.h"

#include <math.h>
#include <string.h>

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

bool
ox_pass_activation_of(const ox_graph *g, const ox_node *act, const char **name, float *params, int *np)
{
	*np = 0;
	if (ox_pass_is_op(act, "Relu") || ox_pass_is_op(act, "Sigmoid") || ox_pass_is_op(act, "Tanh"))
	{
		*name = act->op_type;
		return true;
	}
	if (ox_pass_is_op(act, "LeakyRelu"))
	{
		*name = "LeakyRelu";
		params[(*np)++] = ox_attr_float(act, "alpha", 0.01f);
		return true;
	}
	if (ox_pass_is_op(act, "HardSigmoid"))
	{
		*name = "HardSigmoid";
		params[(*np)++] = ox_attr_float(act, "alpha", 0.2f);
		params[(*np)++] = ox_attr_float(act, "beta", 0.5f);
		return true;
	}
	if (ox_pass_is_op(act, "Clip"))
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

ox_code
ox_pass_add_activation_attrs(ox_model *m, ox_node *n, const char *act, const float *params, int np,
							 bool gemm, ox_status *st)
{
	/* "activation" and up to two parameters (the arena zeroes them) */
	ox_attr    *attrs = ox_arena_alloc(&m->arena, sizeof(ox_attr) * (n->n_attrs + 3));
	float	   *p = np && !gemm ? ox_arena_alloc(&m->arena, sizeof(float) * np) : NULL;

	if (!attrs || (np && !gemm && !p))
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
