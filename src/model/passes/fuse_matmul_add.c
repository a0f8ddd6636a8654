/*
 * fuse_matmul_add.c
 *	  MatMul(A, B) -> Add(bias) becomes Gemm(A, B, bias) when A and B are
 *	  matrices and the bias is a constant row: the GEMM adds the bias in its
 *	  epilogue while the output tile is in registers instead of in a second
 *	  pass over memory, and fuse_activation can then fold a following Relu
 *	  (or another activation FusedGemm takes) into the same epilogue.
 *	  scikit-learn's MLPClassifier/MLPRegressor and Keras' Dense layers
 *	  export this pattern (PyTorch's Linear exports Gemm itself); an MLP of
 *	  two hidden layers at batch 1000 spent a third of its run in the
 *	  separate Add and Relu passes.
 *
 *	  Conditions, so that Gemm computes exactly what the two nodes did:
 *	  A has rank 2 (MatMul on higher ranks broadcasts batches, which Gemm
 *	  does not); B has rank 2; the MatMul output feeds only the Add and is
 *	  not a graph output; the other addend is a float32 constant of shape
 *	  [N] or [1, N] (a row Gemm's C broadcasts over the rows as Add did),
 *	  with N the column count of B when B's shape is known; everything is
 *	  float32; opset 7 or later (Gemm's unidirectional broadcast of C).
 *	  The sum is the same: Gemm adds C to the finished product, as Add did.
 */
#include "model/passes/passes.h"

#include <stdlib.h>
#include <string.h>

static bool
is_op(const ox_node *n, const char *op)
{
	return !n->dead && n->domain[0] == '\0' && strcmp(n->op_type, op) == 0;
}

static bool
float_matrix(const ox_value_def *v)
{
	return v->type.kind == OX_TYPE_TENSOR && v->type.elem == OX_FLOAT && v->type.rank == 2;
}

/* B's column count, or -1 when not known */
static int64_t
columns_of(const ox_graph *g, int b)
{
	const ox_value_def *v = &g->values[b];

	if (v->init && !v->is_input && v->init->rank == 2)
		return v->init->dims[1];
	return v->type.dims[1].value;
}

/* a constant float32 row of n values ([n] or [1, n]; n < 0: any length) */
static bool
bias_row(const ox_graph *g, int c, int64_t n)
{
	const ox_value_def *v = &g->values[c];
	const ox_tensor *t = v->init;
	int64_t		len;

	if (!t || v->is_input || t->dtype != OX_FLOAT)
		return false;
	if (t->rank == 1)
		len = t->dims[0];
	else if (t->rank == 2 && t->dims[0] == 1)
		len = t->dims[1];
	else
		return false;
	return len >= 1 && (n < 0 || len == n);
}

ox_code
ox_pass_fuse_matmul_add(ox_pass_ctx *pc, ox_graph *g, ox_status *st)
{
	for (int k = 0; k < g->n_nodes; k++)
	{
		ox_node    *mm = &g->nodes[k];
		ox_node    *add;
		int			a,
					bias;
		int		   *in;

		if (!is_op(mm, "MatMul") || mm->opset < 7 || mm->n_inputs != 2 || mm->n_outputs != 1 ||
			mm->outputs[0] < 0 || mm->inputs[0] < 0 || mm->inputs[1] < 0)
			continue;
		if (g->values[mm->outputs[0]].is_output ||
			!float_matrix(&g->values[mm->inputs[0]]) || !float_matrix(&g->values[mm->inputs[1]]))
			continue;
		a = ox_graph_sole_consumer(g, mm->outputs[0]);
		if (a < 0)
			continue;
		add = &g->nodes[a];
		if (!is_op(add, "Add") || add->n_inputs != 2 || add->n_outputs != 1 || add->outputs[0] < 0)
			continue;
		if (add->inputs[0] == mm->outputs[0] && add->inputs[1] != mm->outputs[0])
			bias = add->inputs[1];
		else if (add->inputs[1] == mm->outputs[0] && add->inputs[0] != mm->outputs[0])
			bias = add->inputs[0];
		else
			continue;
		if (bias < 0 || !bias_row(g, bias, columns_of(g, mm->inputs[1])))
			continue;
		if (!(in = malloc(sizeof(int) * 3)))
			return ox_fail(st, OX_OUT_OF_MEMORY, "could not grow a node");
		in[0] = mm->inputs[0];
		in[1] = mm->inputs[1];
		in[2] = bias;
		free(mm->inputs);
		mm->inputs = in;
		mm->n_inputs = 3;
		mm->op_type = "Gemm";
		mm->fused_from = "MatMul+Add";
		mm->outputs[0] = add->outputs[0];
		add->dead = true;
		pc->changes++;
	}
	return OX_OK;
}
