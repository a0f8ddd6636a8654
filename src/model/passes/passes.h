/*
 * passes.h
 *	  Graph optimizer: passes over the IR grouped in levels like
 *	  onnxruntime's (disable / basic / extended / all).  Every pass keeps
 *	  the graph's outputs unchanged for every input.
 *
 * Constant folding needs to execute kernels, which live above the model
 * layer; the runtime hands the pass manager an evaluator callback instead
 * of the model layer calling upward.
 */
#ifndef OX_PASSES_H
#define OX_PASSES_H

#include "model/ir.h"
#include "model/uses.h"

#include <string.h>

/*
 * Evaluate node (all of whose inputs are constants) and store its outputs
 * into outs[0..node->n_outputs-1] (tensors owned by the callee's caller).
 * Returns OX_UNSUPPORTED when the node cannot be evaluated (the pass then
 * leaves it alone).
 */
typedef ox_code (*ox_eval_node_fn) (void *arg, const ox_graph *g, const ox_node *node,
									ox_value *outs, ox_status *st);

typedef struct ox_pass_ctx
{
	ox_model   *model;
	ox_eval_node_fn eval;
	void	   *eval_arg;
	int			changes;		/* passes count their rewrites here */
	/* the session's abort callback (NULL: none): polled between passes */
	bool		(*should_abort) (void *arg);
	void	   *abort_arg;
	/* every node runs on the CPU: layout passes may use CPU-only kernels */
	bool		cpu_layout;
	/*
	 * The session executes the graph itself (it is not saved) on a machine
	 * with the onnx_pg.nchwc kernels: layout_nchwc may use them, in blocks
	 * of this many channels (8 or 16); 0 when it may not.
	 */
	int			nchwc_block;
	/*
	 * The session executes the graph on the CPU (it is not saved): fusions
	 * may use the engine-private operators of OX_PRIVATE_FUSED_DOMAIN.
	 */
	bool		private_ops;
} ox_pass_ctx;

/* true, with st set to OX_CANCELED, when the optimization is to stop */
bool		ox_pass_canceled(ox_pass_ctx *pc, ox_status *st);

typedef ox_code (*ox_pass_fn) (ox_pass_ctx *pc, ox_graph *g, ox_status *st);

typedef struct ox_pass
{
	const char *name;
	int			level;			/* lowest optimization level that runs it */
	ox_pass_fn	run;
} ox_pass;

/* run every pass up to level, to a fixed point (bounded), on every graph */
ox_code		ox_optimize(ox_pass_ctx *pc, int level, ox_status *st);

/* individual passes, for tests */
ox_code		ox_pass_eliminate_identity(ox_pass_ctx *pc, ox_graph *g, ox_status *st);
ox_code		ox_pass_constant_fold(ox_pass_ctx *pc, ox_graph *g, ox_status *st);

/*
 * Folding must not turn a small model into a huge one (ConstantOfShape,
 * Tile): outputs past OX_FOLD_MAX_BYTES stay computed at run time, and the
 * evaluator gives a folded node at most OX_FOLD_EVAL_MAX_BYTES of outputs
 * and workspace, so that a node whose result would be dropped anyway fails
 * before it allocates (a 1 GB ConstantOfShape in a 200-byte model).
 */
#define OX_FOLD_MAX_BYTES ((size_t) 64 * 1024 * 1024)
#define OX_FOLD_EVAL_MAX_BYTES ((size_t) 256 * 1024 * 1024)
ox_code		ox_pass_fold_conv_bn(ox_pass_ctx *pc, ox_graph *g, ox_status *st);
ox_code		ox_pass_eliminate_dead(ox_pass_ctx *pc, ox_graph *g, ox_status *st);
ox_code		ox_pass_qdq_fuse(ox_pass_ctx *pc, ox_graph *g, ox_status *st);
ox_code		ox_pass_fuse_matmul_add(ox_pass_ctx *pc, ox_graph *g, ox_status *st);
ox_code		ox_pass_fuse_activation(ox_pass_ctx *pc, ox_graph *g, ox_status *st);
ox_code		ox_pass_fuse_transformer(ox_pass_ctx *pc, ox_graph *g, ox_status *st);
ox_code		ox_pass_fuse_attention(ox_pass_ctx *pc, ox_graph *g, ox_status *st);
ox_code		ox_pass_fuse_gather_reduce(ox_pass_ctx *pc, ox_graph *g, ox_status *st);
ox_code		ox_pass_fuse_conv_add(ox_pass_ctx *pc, ox_graph *g, ox_status *st);
ox_code		ox_pass_fuse_pad(ox_pass_ctx *pc, ox_graph *g, ox_status *st);
ox_code		ox_pass_layout_nhwc(ox_pass_ctx *pc, ox_graph *g, ox_status *st);
ox_code		ox_pass_layout_nchwc(ox_pass_ctx *pc, ox_graph *g, ox_status *st);

/* helpers shared by passes */
/*
 * A new node (op in domain, "" for ai.onnx; a domain is added to the
 * model's opset imports at version 1); returns its index, or -1 with st
 * set.  Node pointers taken before are invalid afterwards.
 */
int			ox_pass_add_node(ox_pass_ctx *pc, ox_graph *g, const char *op, const char *domain,
							 const char *name, const int *in, int n_in, const int *out, int n_out,
							 const char *fused_from, ox_status *st);
/*
 * A new constant (initializer) of dt and shape, zeroed, named prefix plus a
 * number; returns its value id with *data its bytes to fill, or -1 with st
 * set
 */
int			ox_pass_new_init(ox_pass_ctx *pc, ox_graph *g, const char *prefix, ox_dtype dt, int rank,
							 const int64_t *dims, void **data, ox_status *st);
/* make sure the model imports domain (at version 1 when it does not), so that a saved model says so */
ox_code		ox_pass_import_domain(ox_model *m, const char *domain, ox_status *st);

/* onnxruntime's contrib domain, where FusedConv, FusedGemm and the transformer fusions live */
#define OX_FUSED_DOMAIN "com.microsoft"

/*
 * act as one of the activations FusedConv and FusedGemm take: its name and
 * up to two float parameters (*np of them); false for anything else,
 * including a Clip whose bounds are not constant scalars (fused_attrs.c)
 */
bool		ox_pass_activation_of(const ox_graph *g, const ox_node *act, const char **name, float *params,
								  int *np);

/*
 * n's attributes plus "activation" and its parameters, in the model's arena:
 * as FusedGemm's activation_alpha / activation_beta when gemm, else as
 * FusedConv's activation_params (onnxruntime's two schemas differ)
 */
ox_code		ox_pass_add_activation_attrs(ox_model *m, ox_node *n, const char *act, const float *params,
										 int np, bool gemm, ox_status *st);
/* node's attributes := copy[0..n_copy) then extra[0..n_extra), in the model's arena */
ox_code		ox_pass_set_attrs(ox_pass_ctx *pc, ox_graph *g, int node, const ox_attr *copy, int n_copy,
							  const ox_attr *extra, int n_extra, ox_status *st);
/* node's attributes plus one int attribute */
ox_code		ox_pass_add_int_attr(ox_pass_ctx *pc, ox_graph *g, int node, const char *name, int64_t value,
								 ox_status *st);
/* whether n is a live node of the default (ai.onnx) domain whose op_type is op */
static inline bool
ox_pass_is_op(const ox_node *n, const char *op)
{
	return !n->dead && n->domain[0] == '\0' && strcmp(n->op_type, op) == 0;
}

/* constant tensor behind node input i, or NULL */
const ox_tensor *ox_node_const_input(const ox_graph *g, const ox_node *n, int i);

#endif							/* OX_PASSES_H */
