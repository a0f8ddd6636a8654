/*
 * conv_bn.c
 *	  Fold an inference BatchNormalization into the Conv that feeds it:
 *	  W' = W * s, B' = (B - mean) * s + beta with s = gamma / sqrt(var + eps)
 *	  per output channel.
 */
#include "model/passes/passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool
const_f32_vector(const ox_tensor *t, int64_t len)
{
	return t && t->dtype == OX_FLOAT && t->rank == 1 && t->dims[0] == len;
}

static int
add_initializer(ox_pass_ctx *pc, ox_graph *g, const char *prefix, ox_tensor *t, ox_status *st)
{
	int			id = ox_graph_add_value(g, ox_model_unique_name(pc->model, prefix), st);

	if (id < 0)
		return -1;
	g->values[id].init = t;
	ox_type_from_tensor(pc->model, &g->values[id].type, t);
	return id;
}

ox_code
ox_pass_fold_conv_bn(ox_pass_ctx *pc, ox_graph *g, ox_status *st)
{
	for (int k = 0; k < g->n_nodes; k++)
	{
		ox_node    *conv = &g->nodes[k];
		ox_node    *bn;
		int			b;
		const ox_tensor *w,
				   *bias,
				   *gamma,
				   *beta,
				   *mean,
				   *var;
		int64_t		cout;
		int64_t		per;
		float		eps;
		ox_tensor  *nw,
				   *nb;
		int			wid,
					bid;
		bool		in_place;

		if (!ox_pass_is_op(conv, "Conv") || conv->n_outputs != 1 || conv->outputs[0] < 0 || conv->n_inputs < 2)
			continue;
		if (g->values[conv->outputs[0]].is_output)
			continue;
		b = ox_graph_sole_consumer(g, conv->outputs[0]);
		if (b < 0)
			continue;
		bn = &g->nodes[b];
		if (!ox_pass_is_op(bn, "BatchNormalization") || bn->n_inputs != 5 || bn->inputs[0] != conv->outputs[0])
			continue;
		if (ox_attr_int(bn, "training_mode", 0) != 0)
			continue;
		/* only the Y output may be used */
		if (bn->n_outputs < 1 || bn->outputs[0] < 0)
			continue;
		{
			bool		extra = false;

			for (int o = 1; o < bn->n_outputs; o++)
				if (bn->outputs[o] >= 0 && (g->values[bn->outputs[o]].n_consumers ||
											g->values[bn->outputs[o]].is_output))
					extra = true;
			if (extra)
				continue;
		}
		w = ox_node_const_input(g, conv, 1);
		bias = conv->n_inputs >= 3 && conv->inputs[2] >= 0 ? ox_node_const_input(g, conv, 2) : NULL;
		if (!w || w->dtype != OX_FLOAT || w->rank < 3)
			continue;
		if (conv->n_inputs >= 3 && conv->inputs[2] >= 0 && !bias)
			continue;
		cout = w->dims[0];
		gamma = ox_node_const_input(g, bn, 1);
		beta = ox_node_const_input(g, bn, 2);
		mean = ox_node_const_input(g, bn, 3);
		var = ox_node_const_input(g, bn, 4);
		if (!const_f32_vector(gamma, cout) || !const_f32_vector(beta, cout) ||
			!const_f32_vector(mean, cout) || !const_f32_vector(var, cout) ||
			(bias && !const_f32_vector(bias, cout)))
			continue;
		eps = ox_attr_float(bn, "epsilon", 1e-5f);
		per = cout > 0 ? ox_tensor_numel(w) / cout : 0;

		/*
		 * W read by this Conv alone, and the model's own buffer: scaled in
		 * place.  A new tensor would be a second copy of every such weight
		 * (ResNet-50's 100 MB) to allocate, fault in and fill while the
		 * session is created.
		 */
		{
			const ox_value_def *wv = &g->values[conv->inputs[1]];

			in_place = wv->init == w && wv->n_consumers == 1 && !wv->is_output && !wv->is_input &&
				!wv->is_outer && w->owns && w->data;
		}
		nw = in_place ? (ox_tensor *) w : ox_model_new_tensor(pc->model, st);
		nb = nw ? ox_model_new_tensor(pc->model, st) : NULL;
		if (!nb)
			return st->code;
		if (!in_place)
			OX_TRY(ox_tensor_alloc_lasting(nw, OX_FLOAT, w->rank, w->dims, st));
		OX_TRY(ox_tensor_alloc(nb, OX_FLOAT, 1, &cout, st));
		for (int64_t c = 0; c < cout; c++)
		{
			float		s = ((float *) gamma->data)[c] / sqrtf(((float *) var->data)[c] + eps);
			float		b0 = bias ? ((float *) bias->data)[c] : 0.0f;

			for (int64_t i = 0; i < per; i++)
				((float *) nw->data)[c * per + i] = ((float *) w->data)[c * per + i] * s;
			((float *) nb->data)[c] = (b0 - ((float *) mean->data)[c]) * s + ((float *) beta->data)[c];
		}
		/* add_initializer may move g->values; node pointers stay valid */
		wid = in_place ? conv->inputs[1] : add_initializer(pc, g, "conv_bn_w", nw, st);
		if (wid < 0)
			return st->code;
		bid = add_initializer(pc, g, "conv_bn_b", nb, st);
		if (bid < 0)
			return st->code;
		if (conv->n_inputs < 3)
		{
			int		   *in = realloc(conv->inputs, sizeof(int) * 3);

			if (!in)
				return ox_fail(st, OX_OUT_OF_MEMORY, "could not grow a node");
			conv->inputs = in;
			conv->n_inputs = 3;
		}
		conv->inputs[1] = wid;
		conv->inputs[2] = bid;
		ox_uses_node_changed(g, k);
		conv->outputs[0] = bn->outputs[0];
		conv->fused_from = "Conv+BatchNormalization";
		bn->dead = true;
		pc->changes++;
	}
	return OX_OK;
}
