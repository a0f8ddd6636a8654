/*
 * constant_fold.c
 *	  Evaluate nodes whose inputs are all constants once, at session
 *	  creation, and replace them by initializers.
 */
#include "model/passes/passes.h"

#include <string.h>

static bool
foldable(const ox_graph *g, const ox_node *n)
{
	if (n->n_implicit > 0)
		return false;
	for (int a = 0; a < n->n_attrs; a++)
		if (n->attrs[a].type == OX_ATTR_GRAPH || n->attrs[a].type == OX_ATTR_GRAPHS)
			return false;
	/* inference Dropout is removed elsewhere; a Dropout left may be in training mode */
	if (ox_node_is_random(n))
		return false;
	for (int i = 0; i < n->n_inputs; i++)
		if (n->inputs[i] >= 0 && !ox_node_const_input(g, n, i))
			return false;
	return true;
}

ox_code
ox_pass_constant_fold(ox_pass_ctx *pc, ox_graph *g, ox_status *st)
{
	if (!pc->eval)
		return OX_OK;
	for (int k = 0; k < g->n_nodes; k++)
	{
		ox_node    *n = &g->nodes[k];
		ox_value	outs[16];
		ox_status	local;
		bool		ok = true;

		if (n->dead || n->n_outputs > 16 || !foldable(g, n))
			continue;
		/* folding runs kernels: a big constant can take long */
		if (ox_pass_canceled(pc, st))
			return st->code;
		for (int o = 0; o < n->n_outputs; o++)
			ox_value_init_tensor(&outs[o]);
		ox_status_clear(&local);
		/* a failure here is reported when the node runs, with its inputs */
		if (pc->eval(pc->eval_arg, g, n, outs, &local) != OX_OK)
			ok = false;
		for (int o = 0; ok && o < n->n_outputs; o++)
		{
			if (n->outputs[o] < 0)
				continue;
			if (outs[o].kind != OX_VALUE_TENSOR ||
				ox_tensor_numel(&outs[o].tensor) * (int64_t) ox_dtype_size(outs[o].tensor.dtype) > (int64_t) OX_FOLD_MAX_BYTES)
				ok = false;
		}
		if (ok)
		{
			for (int o = 0; o < n->n_outputs; o++)
			{
				ox_tensor  *t;

				if (n->outputs[o] < 0)
					continue;
				t = ox_model_new_tensor(pc->model, st);
				if (!t)
				{
					ok = false;
					break;
				}
				*t = outs[o].tensor;		/* move */
				memset(&outs[o].tensor, 0, sizeof(ox_tensor));
				g->values[n->outputs[o]].init = t;
				g->values[n->outputs[o]].producer = -1;
				if (g->values[n->outputs[o]].type.kind == OX_TYPE_UNKNOWN ||
					g->values[n->outputs[o]].type.rank < 0)
					ox_type_from_tensor(pc->model, &g->values[n->outputs[o]].type, t);
			}
			n->dead = true;
			pc->changes++;
		}
		for (int o = 0; o < n->n_outputs; o++)
			ox_value_release(&outs[o]);
		if (st->code != OX_OK)
			return st->code;
	}
	return OX_OK;
}
