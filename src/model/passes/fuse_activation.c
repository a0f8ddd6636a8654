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

#include <string.h>

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

		if (!(ox_pass_is_op(n, "Conv") || ox_pass_is_op(n, "Gemm")) || n->n_outputs != 1 || n->outputs[0] < 0)
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
			act->outputs[0] < 0 || !ox_pass_activation_of(g, act, &name, params, &np))
			continue;
		/* onnxruntime's FusedGemm has no Clip */
		if (ox_pass_is_op(n, "Gemm") && strcmp(name, "Clip") == 0)
			continue;
		OX_TRY(ox_pass_import_domain(pc->model, OX_FUSED_DOMAIN, st));
		OX_TRY(ox_pass_add_activation_attrs(pc->model, n, name, params, np, ox_pass_is_op(n, "Gemm"), st));
		n->fused_from = strcmp(n->op_type, "Conv") == 0 ? "Conv+activation" : "Gemm+activation";
		n->op_type = strcmp(n->op_type, "Conv") == 0 ? "FusedConv" : "FusedGemm";
		n->domain = OX_FUSED_DOMAIN;
		n->opset = 1;
		n->outputs[0] = act->outputs[0];
		act->dead = true;
		pc->changes++;
	}
	return OX_OK;
}
