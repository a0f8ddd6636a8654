/*
 * eliminate.c
 *	  Identity/Dropout removal and dead-node elimination.
 */
#include "model/passes/passes.h"

#include <string.h>

static bool
is_passthrough(const ox_graph *g, const ox_node *n)
{
	if (n->domain[0] != '\0' || n->n_inputs < 1 || n->inputs[0] < 0)
		return false;
	if (strcmp(n->op_type, "Identity") == 0)
		return n->n_outputs == 1;
	if (strcmp(n->op_type, "Cast") == 0)
	{
		/* a cast to the type its input already has (skl2onnx's label Cast) */
		const ox_value_def *in = &g->values[n->inputs[0]];

		return n->n_outputs == 1 && in->type.kind == OX_TYPE_TENSOR &&
			in->type.elem != OX_UNDEFINED && ox_attr_int(n, "to", -1) == (int64_t) in->type.elem;
	}
	if (strcmp(n->op_type, "Dropout") == 0)
	{
		/* inference Dropout is the identity when its mask is not used and
		 * training_mode is absent or a constant false */
		if (n->n_outputs > 1 && n->outputs[1] >= 0 &&
			(g->values[n->outputs[1]].n_consumers > 0 || g->values[n->outputs[1]].is_output))
			return false;
		if (n->n_inputs >= 3 && n->inputs[2] >= 0)
		{
			const ox_tensor *t = ox_node_const_input(g, n, 2);

			if (!t || t->dtype != OX_BOOL || ox_tensor_numel(t) != 1 || ((uint8_t *) t->data)[0])
				return false;
		}
		if (n->opset < 7 && ox_attr_int(n, "is_test", 0) == 0)
			return false;
		return true;
	}
	return false;
}

ox_code
ox_pass_eliminate_identity(ox_pass_ctx *pc, ox_graph *g, ox_status *st)
{
	(void) st;
	for (int k = 0; k < g->n_nodes; k++)
	{
		ox_node    *n = &g->nodes[k];
		int			out;

		if (n->dead || !is_passthrough(g, n))
			continue;
		out = n->outputs[0];
		if (out < 0)
			continue;
		/*
		 * Graph outputs keep their names: the node goes only when its input
		 * is another node's output that nothing else reads, which then
		 * writes the graph output directly (a run saves a kernel call and
		 * a copy; row-wise SQL calls pay those once per row).
		 */
		if (g->values[out].is_output)
		{
			int			in = n->inputs[0];
			const ox_value_def *iv = &g->values[in];
			ox_node    *p;

			if (iv->producer < 0 || iv->is_output || iv->is_input || iv->init)
				continue;
			p = &g->nodes[iv->producer];
			if (p->dead || iv->producer_slot >= p->n_outputs || p->outputs[iv->producer_slot] != in ||
				ox_graph_sole_consumer(g, in) != k)
				continue;
			p->outputs[iv->producer_slot] = out;
			n->dead = true;
			pc->changes++;
			continue;
		}
		ox_graph_replace_uses(g, out, n->inputs[0]);
		n->dead = true;
		pc->changes++;
	}
	return OX_OK;
}

/* ops whose removal is observable even when nothing reads their outputs */
static bool
has_side_effects(const ox_node *n)
{
	return n->domain[0] == '\0' &&
		(strncmp(n->op_type, "Random", 6) == 0 || strcmp(n->op_type, "Multinomial") == 0);
}

ox_code
ox_pass_eliminate_dead(ox_pass_ctx *pc, ox_graph *g, ox_status *st)
{
	bool		changed = true;

	while (changed)
	{
		changed = false;
		OX_TRY(ox_graph_analyze(g, st));
		for (int k = g->n_nodes - 1; k >= 0; k--)
		{
			ox_node    *n = &g->nodes[k];
			bool		used = false;

			if (n->dead || has_side_effects(n))
				continue;
			for (int o = 0; o < n->n_outputs && !used; o++)
			{
				int			v = n->outputs[o];

				if (v >= 0 && (g->values[v].n_consumers > 0 || g->values[v].is_output))
					used = true;
			}
			if (!used)
			{
				n->dead = true;
				changed = true;
				pc->changes++;
				/*
				 * Its inputs lose a reader now, not at the next analyze: the
				 * sweep runs from the graph's end, so the nodes that produced
				 * them come later in it and a dead chain goes in one sweep
				 * (one sweep per link made a 20,000-node chain take 10 s)
				 */
				for (int i = 0; i < ox_node_n_reads(n); i++)
				{
					int			v = ox_node_read(n, i);

					if (v >= 0)
						g->values[v].n_consumers--;
				}
			}
		}
	}
	return OX_OK;
}
