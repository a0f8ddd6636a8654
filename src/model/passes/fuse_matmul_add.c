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
 *	  A has rank 2, or 3 and more (or unknown) through Reshapes to rows and back
 *	  (rewrite_batched: B being a matrix, A's batches are only more rows);
 *	  B has rank 2; the MatMul output feeds only the Add and is
 *	  not a graph output; the other addend is a float32 constant of shape
 *	  [N] or [1, N] (a row Gemm's C broadcasts over the rows as Add did),
 *	  with N the column count of B when B's shape is known; everything is
 *	  float32; opset 7 or later (Gemm's unidirectional broadcast of C).
 *	  The sum is the same: Gemm adds C to the finished product, as Add did.
 */
#include "model/passes/passes.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- A of rank 3 and more ------------------------------------------------ */

/*
 * A float32 A of rank r >= 3 whose rows are what Gemm can take: its last
 * dimension k known, and of the others (lead, r - 1 of them) at most one
 * unknown (-1 in lead), none 0.  *m: their product, or -1 when one is
 * unknown.
 */
static bool
batched_rows(const ox_value_def *v, int64_t *lead, int *n_lead, int64_t *k, int64_t *m)
{
	const ox_type *t = &v->type;
	int			unknown = 0;

	if (t->kind != OX_TYPE_TENSOR || t->elem != OX_FLOAT || t->rank < 3 || t->rank > OX_MAX_RANK || !t->dims)
		return false;
	*m = 1;
	for (int i = 0; i < t->rank - 1; i++)
	{
		lead[i] = t->dims[i].value;
		if (lead[i] == 0)
			return false;
		if (lead[i] < 0)
		{
			lead[i] = -1;
			unknown++;
		}
		else if (*m >= 0)
			*m = *m > INT64_MAX / lead[i] ? -1 : *m * lead[i];	/* a hostile declared shape */
	}
	*n_lead = t->rank - 1;
	*k = t->dims[t->rank - 1].value;
	if (unknown)
		*m = -1;
	return unknown <= 1 && *k > 0;
}

/*
 * An A whose shape shape inference did not find (after a Reshape to a
 * computed shape, say), or of rank >= 3 with several dimensions unknown:
 * float32 or unknown.  The shape after the Gemm then comes from Shape(A)
 * at run time.
 */
static bool
unknown_rows(const ox_value_def *v)
{
	const ox_type *t = &v->type;

	if (t->kind == OX_TYPE_UNKNOWN)
		return true;
	return t->kind == OX_TYPE_TENSOR && t->elem == OX_FLOAT && (t->rank < 0 || t->rank >= 3);
}

/* a new value of a tensor type: elem [dims[0], ..., dims[rank - 1]] (-1: unknown) */
static int
new_typed_value(ox_pass_ctx *pc, ox_graph *g, ox_dtype elem, int rank, const int64_t *dims, ox_status *st)
{
	int			v = ox_graph_add_value(g, ox_model_unique_name(pc->model, "matmul_rows"), st);
	ox_dim	   *d;

	if (v < 0)
		return -1;
	d = ox_arena_alloc(&pc->model->arena, sizeof(ox_dim) * (size_t) rank);
	if (!d)
	{
		ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate a value's type");
		return -1;
	}
	for (int i = 0; i < rank; i++)
	{
		d[i].value = dims[i];
		d[i].param = NULL;
	}
	g->values[v].type.kind = OX_TYPE_TENSOR;
	g->values[v].type.elem = elem;
	g->values[v].type.rank = rank;
	g->values[v].type.dims = d;
	return v;
}

/* a new value of type float32 [rows, cols] (-1: unknown) */
static int
new_matrix_value(ox_pass_ctx *pc, ox_graph *g, int64_t rows, int64_t cols, ox_status *st)
{
	return new_typed_value(pc, g, OX_FLOAT, 2, (int64_t[]) {rows, cols}, st);
}

/* a new value of type int64 [n] (n < 0: unknown) */
static int
new_vector_value(ox_pass_ctx *pc, ox_graph *g, int64_t n, ox_status *st)
{
	return new_typed_value(pc, g, OX_INT64, 1, &n, st);
}

/* a new int64 constant [n] holding vals (a Reshape's shape) */
static int
new_shape(ox_pass_ctx *pc, ox_graph *g, const int64_t *vals, int n, ox_status *st)
{
	int64_t		dims[1] = {n};
	void	   *data;
	int			v = ox_pass_new_init(pc, g, "matmul_rows_shape", OX_INT64, 1, dims, &data, st);

	if (v >= 0)
		memcpy(data, vals, sizeof(int64_t) * (size_t) n);
	return v;
}

/*
 * MatMul(A, B) + bias with A of rank r >= 3 and B a matrix (PyTorch's
 * Linear on [batch, tokens, features] exports this; onnxruntime's
 * MatMulAddFusion does the same): Reshape(A, [-1, K]) -> Gemm(., B, bias)
 * -> Reshape(., A's leading dimensions + [N]); an activation that alone
 * consumes the sum runs on the rows before that Reshape, where
 * fuse_activation folds it into the Gemm as for any other.  The rows of A are
 * the rows of the 2-D product either way, so the sums are the ones MatMul
 * and Add made.  A Reshape takes its input's buffer when that input dies
 * there (the one after the Gemm always does), else copies it: one pass over
 * A in place of one over the wider sum, and the bias and the activation
 * then cost nothing.  act: the activation node to fold, or -1.
 */
static ox_code
rewrite_batched(ox_pass_ctx *pc, ox_graph *g, int k, int add, int act, int bias, const int64_t *lead,
				int n_lead, int64_t kk, int64_t m, int64_t n, ox_status *st)
{
	int64_t		shape1[2] = {-1, kk};
	int64_t		shape2[OX_MAX_RANK];
	int			a = g->nodes[k].inputs[0];
	int			out = act >= 0 ? g->nodes[act].outputs[0] : g->nodes[add].outputs[0];
	int			gemm_out;
	int			s1,
				s2,
				rows_in,
				rows_out,
				r1,
				r2;
	int		   *in;

	if ((s1 = new_shape(pc, g, shape1, 2, st)) < 0 || (rows_in = new_matrix_value(pc, g, m, kk, st)) < 0 ||
		(rows_out = new_matrix_value(pc, g, m, n, st)) < 0)
		return st->code;
	/* with an activation: Gemm -> activation -> Reshape, the activation on rows */
	gemm_out = rows_out;
	if (act >= 0 && (gemm_out = new_matrix_value(pc, g, m, n, st)) < 0)
		return st->code;
	if (n_lead >= 0)
	{
		memcpy(shape2, lead, sizeof(int64_t) * (size_t) n_lead);
		shape2[n_lead] = n;
		if ((s2 = new_shape(pc, g, shape2, n_lead + 1, st)) < 0)
			return st->code;
	}
	else
	{
		/* Concat(Shape(A)[0:-1], [N]): A's leading dimensions, whatever its rank */
		int64_t		zero = 0,
					minus1 = -1;
		int			full,
					lead_v,
					c0,
					c1,
					cn,
					node;

		if ((full = new_vector_value(pc, g, -1, st)) < 0 || (lead_v = new_vector_value(pc, g, -1, st)) < 0 ||
			(s2 = new_vector_value(pc, g, -1, st)) < 0 || (c0 = new_shape(pc, g, &zero, 1, st)) < 0 ||
			(c1 = new_shape(pc, g, &minus1, 1, st)) < 0 || (cn = new_shape(pc, g, &n, 1, st)) < 0)
			return st->code;
		if (ox_pass_add_node(pc, g, "Shape", "", ox_model_unique_name(pc->model, "MatMulAdd_shape"),
							 &a, 1, &full, 1, "MatMul+Add", st) < 0 ||
			ox_pass_add_node(pc, g, "Slice", "", ox_model_unique_name(pc->model, "MatMulAdd_lead"),
							 (int[]) {full, c0, c1, c0}, 4, &lead_v, 1, "MatMul+Add", st) < 0 ||
			(node = ox_pass_add_node(pc, g, "Concat", "", ox_model_unique_name(pc->model, "MatMulAdd_outshape"),
									 (int[]) {lead_v, cn}, 2, &s2, 1, "MatMul+Add", st)) < 0)
			return st->code;
		OX_TRY(ox_pass_add_int_attr(pc, g, node, "axis", 0, st));
	}
	r1 = ox_pass_add_node(pc, g, "Reshape", "", ox_model_unique_name(pc->model, "MatMulAdd_rows"),
						  (int[]) {a, s1}, 2, &rows_in, 1, "MatMul+Add", st);
	if (r1 < 0)
		return st->code;
	r2 = ox_pass_add_node(pc, g, "Reshape", "", ox_model_unique_name(pc->model, "MatMulAdd_unrows"),
						  (int[]) {rows_out, s2}, 2, &out, 1, "MatMul+Add", st);
	if (r2 < 0)
		return st->code;
	if (!(in = malloc(sizeof(int) * 3)))
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not grow a node");
	in[0] = rows_in;
	in[1] = g->nodes[k].inputs[1];
	in[2] = bias;
	free(g->nodes[k].inputs);
	g->nodes[k].inputs = in;
	g->nodes[k].n_inputs = 3;
	ox_uses_node_changed(g, k);
	g->nodes[k].op_type = "Gemm";
	g->nodes[k].fused_from = "MatMul+Add";
	g->nodes[k].outputs[0] = gemm_out;
	g->nodes[add].dead = true;
	if (act >= 0)
	{
		g->nodes[act].inputs[0] = gemm_out;
		ox_uses_node_changed(g, act);
		g->nodes[act].outputs[0] = rows_out;
	}
	pc->changes++;
	return OX_OK;
}

/* the activation node (as FusedGemm takes) that alone consumes v (not an output), or -1 */
static int
fusable_activation(const ox_graph *g, int v)
{
	int			c;
	const ox_node *act;
	const char *name;
	float		params[2];
	int			np;

	if (g->values[v].is_output || (c = ox_graph_sole_consumer(g, v)) < 0)
		return -1;
	act = &g->nodes[c];
	if (act->n_inputs < 1 || act->inputs[0] != v || act->n_outputs != 1 || act->outputs[0] < 0 ||
		!ox_pass_activation_of(g, act, &name, params, &np) || strcmp(name, "Clip") == 0)
		return -1;
	return c;
}

/* node k reads v (arg) as a plain input and does more than move data */
static bool
reads_and_computes(const ox_graph *g, int k, const void *arg)
{
	static const char *const movers[] = {"Reshape", "Transpose", "Slice", "Split", "Squeeze", "Unsqueeze",
	"Shape", "Size", NULL};
	const ox_node *n = &g->nodes[k];
	int			v = *(const int *) arg;
	bool		reads = false;

	for (int i = 0; i < n->n_inputs; i++)
		reads |= n->inputs[i] == v;
	if (!reads)
		return false;
	for (const char *const *m = movers; *m && n->domain[0] == '\0'; m++)
		if (strcmp(n->op_type, *m) == 0)
			return false;
	return true;
}

/*
 * Whether the sum v of a batched MatMul + Add is better left alone: unless
 * its one consumer is an activation FusedGemm takes or every consumer only
 * moves data, a transformer fusion may want the Add (a residual Add
 * becomes SkipLayerNormalization with the bias inside, a Gelu BiasGelu),
 * and the rewrite would take it from them for nothing.
 */
static bool
sum_wanted_elsewhere(const ox_graph *g, int v)
{
	if (fusable_activation(g, v) >= 0)
		return false;
	return ox_graph_next_reader(g, v, -1, reads_and_computes, &v) >= 0;
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
		int64_t		lead[OX_MAX_RANK];
		int			n_lead = 0;
		int64_t		kk = 0,
					m = 0;
		bool		batched;

		if (!ox_pass_is_op(mm, "MatMul") || mm->opset < 7 || mm->n_inputs != 2 || mm->n_outputs != 1 ||
			mm->outputs[0] < 0 || mm->inputs[0] < 0 || mm->inputs[1] < 0)
			continue;
		if (g->values[mm->outputs[0]].is_output || !float_matrix(&g->values[mm->inputs[1]]))
			continue;
		if (float_matrix(&g->values[mm->inputs[0]]))
			batched = false;
		else if (batched_rows(&g->values[mm->inputs[0]], lead, &n_lead, &kk, &m))
			batched = true;
		else if (unknown_rows(&g->values[mm->inputs[0]]) && ox_model_opset(pc->model, "") >= 13)
		{
			/* the shapes at run time: Slice and Concat as opset 13 defines them */
			batched = true;
			n_lead = -1;
			kk = -1;
			m = -1;
		}
		else
			continue;
		a = ox_graph_sole_consumer(g, mm->outputs[0]);
		if (a < 0)
			continue;
		add = &g->nodes[a];
		if (!ox_pass_is_op(add, "Add") || add->n_inputs != 2 || add->n_outputs != 1 || add->outputs[0] < 0)
			continue;
		if (add->inputs[0] == mm->outputs[0] && add->inputs[1] != mm->outputs[0])
			bias = add->inputs[1];
		else if (add->inputs[1] == mm->outputs[0] && add->inputs[0] != mm->outputs[0])
			bias = add->inputs[0];
		else
			continue;
		if (bias < 0 || !bias_row(g, bias, columns_of(g, mm->inputs[1])))
			continue;
		if (batched)
		{
			/* B's shape must be known and agree with A's last dimension where that is known */
			int64_t		n = columns_of(g, mm->inputs[1]);
			const ox_value_def *bv = &g->values[mm->inputs[1]];
			int64_t		bk = bv->init && !bv->is_input ? bv->init->dims[0] : bv->type.dims[0].value;

			if (n <= 0 || bk <= 0 || (kk >= 0 && bk != kk) || sum_wanted_elsewhere(g, add->outputs[0]))
				continue;
			kk = bk;
			OX_TRY(rewrite_batched(pc, g, k, a, fusable_activation(g, add->outputs[0]), bias, lead, n_lead,
								   kk, m, n, st));
			continue;
		}
		if (!(in = malloc(sizeof(int) * 3)))
			return ox_fail(st, OX_OUT_OF_MEMORY, "could not grow a node");
		in[0] = mm->inputs[0];
		in[1] = mm->inputs[1];
		in[2] = bias;
		free(mm->inputs);
		mm->inputs = in;
		mm->n_inputs = 3;
		ox_uses_node_changed(g, k);
		mm->op_type = "Gemm";
		mm->fused_from = "MatMul+Add";
		mm->outputs[0] = add->outputs[0];
		add->dead = true;
		pc->changes++;
	}
	return OX_OK;
}
