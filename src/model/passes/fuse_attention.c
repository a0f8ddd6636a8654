/*
 * fuse_attention.c
 *	  Attention's MatMul -> Softmax -> MatMul, as PyTorch exports it (its
 *	  MultiheadAttention and hand-written heads alike), becomes one
 *	  onnx_pg.fused ScaledDotProductAttention (kernels/cpu/transformer_sdpa.c):
 *
 *		S = MatMul(Q', K'), or FusedMatMul(Q', K') with alpha
 *		S = Add(S, M), optionally: an attention mask
 *		P = Softmax(S) over the last axis
 *		O = MatMul(P, V')
 *
 *	  A Transpose that makes Q', K' or V' for the pattern alone, and one
 *	  that alone reads O, become the operator's perms: strides in the fused
 *	  kernel instead of copies.  The 1/sqrt(d) that exporters put on Q or on
 *	  the scores is FusedMatMul's alpha by then (fuse_transformer runs
 *	  first).
 *
 *	  Only for sessions that run the graph on the CPU (pc->private_ops: no
 *	  other runtime has the operator), only float32, and only when Q', K'
 *	  and V' have one known rank from 2 to 8: the fused kernel then takes
 *	  every shape the nodes took, broadcasting included (a mask may widen
 *	  the scores, as Add would), and fails where they fail.
 */
#include "model/passes/passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SDPA_PASS_MAX_RANK 8

static int
rank_of(const ox_graph *g, int v)
{
	return v >= 0 && g->values[v].type.kind == OX_TYPE_TENSOR ? g->values[v].type.rank : -1;
}

static bool
known_float(const ox_graph *g, int v)
{
	return v >= 0 && g->values[v].type.kind == OX_TYPE_TENSOR && g->values[v].type.elem == OX_FLOAT;
}

/*
 * n is the scores' product: a MatMul (alpha 1) or a FusedMatMul that
 * transposes nothing (its alpha); false for anything else
 */
static bool
product_alpha(const ox_node *n, float *alpha)
{
	*alpha = 1.0f;
	if (n->n_inputs != 2 || n->n_outputs != 1 || n->inputs[0] < 0 || n->inputs[1] < 0)
		return false;
	if (ox_pass_is_op(n, "MatMul"))
		return true;
	if (n->dead || strcmp(n->domain, OX_FUSED_DOMAIN) != 0 || strcmp(n->op_type, "FusedMatMul") != 0)
		return false;
	for (int i = 0; i < n->n_attrs; i++)
	{
		const ox_attr *a = &n->attrs[i];

		if (strcmp(a->name, "alpha") == 0 && a->type == OX_ATTR_FLOAT)
			*alpha = a->f;
		else if (strncmp(a->name, "trans", 5) != 0 || a->type != OX_ATTR_INT || a->i != 0)
			return false;
	}
	return isfinite(*alpha);
}

/* Softmax n normalizes its rank-r input (r -1: unknown) over the last axis alone */
static bool
softmax_last_axis(const ox_node *n, int r)
{
	/* before opset 13 the input is coerced to 2-D at axis: the same only at r - 1 */
	int64_t		axis = ox_attr_int(n, "axis", n->opset >= 13 ? -1 : 1);

	return axis == -1 || (r >= 0 && axis == r - 1);
}

/*
 * m may be the mask: anything the scores can be added to, as the kernel
 * broadcasts it with the scores and Q', K', V' exactly as Add and the
 * second MatMul do; only a type that is known and not float32 (a model
 * that fails anyway) or a rank the kernel does not take is left alone
 */
static bool
mask_fits(const ox_graph *g, int m)
{
	const ox_type *t = &g->values[m].type;

	if (t->kind == OX_TYPE_UNKNOWN)
		return true;
	return t->kind == OX_TYPE_TENSOR && (t->elem == OX_FLOAT || t->elem == OX_UNDEFINED) &&
		t->rank <= SDPA_PASS_MAX_RANK;
}

/* the Transpose (an explicit perm over r axes) making v for node user alone, or NULL */
static ox_node *
own_transpose(ox_graph *g, int v, int user, int r)
{
	const ox_value_def *d = &g->values[v];
	const int64_t *perm;
	ox_node    *p;

	if (d->producer < 0 || d->is_output || d->init)
		return NULL;
	p = &g->nodes[d->producer];
	if (!ox_pass_is_op(p, "Transpose") || p->n_inputs != 1 || p->inputs[0] < 0 ||
		ox_attr_ints(p, "perm", &perm) != r || rank_of(g, p->inputs[0]) != r ||
		ox_graph_sole_consumer(g, v) != user)
		return NULL;
	return p;
}

/* the Transpose (an explicit perm over r axes) that alone reads v, or NULL */
static ox_node *
reading_transpose(ox_graph *g, int v, int r)
{
	const int64_t *perm;
	ox_node    *c;
	int			k;

	if (g->values[v].is_output || (k = ox_graph_sole_consumer(g, v)) < 0)
		return NULL;
	c = &g->nodes[k];
	if (!ox_pass_is_op(c, "Transpose") || c->n_inputs != 1 || c->n_outputs != 1 || c->outputs[0] < 0 ||
		ox_attr_ints(c, "perm", &perm) != r)
		return NULL;
	return c;
}

static ox_code
perm_attr(ox_pass_ctx *pc, ox_attr *a, const char *name, const ox_node *t, ox_status *st)
{
	const int64_t *perm;
	int			n = ox_attr_ints(t, "perm", &perm);

	memset(a, 0, sizeof(*a));
	a->name = name;
	a->type = OX_ATTR_INTS;
	a->n = n;
	a->ints = ox_arena_alloc(&pc->model->arena, sizeof(int64_t) * (size_t) n);
	if (!a->ints)
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate attributes");
	memcpy(a->ints, perm, sizeof(int64_t) * (size_t) n);
	return OX_OK;
}

static ox_code
fuse_at_softmax(ox_pass_ctx *pc, ox_graph *g, int k, ox_status *st)
{
	static const char *const perm_names[4] = {"perm_q", "perm_k", "perm_v", "perm_y"};
	ox_node    *sm = &g->nodes[k];
	ox_node    *qk,
			   *pv,
			   *add = NULL,
			   *tp[4] = {NULL, NULL, NULL, NULL};
	ox_attr		attrs[5];
	int			n_attrs = 0;
	int			ops[3],
				scores,			/* Softmax's input, read by it alone */
				mask = -1,
				qk_i,
				pv_i,
				r;
	int		   *inputs;
	float		alpha;

	if (sm->n_inputs != 1 || sm->n_outputs != 1 || sm->inputs[0] < 0 || sm->outputs[0] < 0)
		return OX_OK;
	scores = sm->inputs[0];
	qk_i = g->values[scores].producer;
	if (qk_i < 0 || g->values[scores].is_output || ox_graph_sole_consumer(g, scores) != k)
		return OX_OK;
	if (ox_pass_is_op(&g->nodes[qk_i], "Add") && g->nodes[qk_i].n_inputs == 2 && g->nodes[qk_i].n_outputs == 1)
	{
		/* Add(S, M) or Add(M, S), S the product's and read by the Add alone */
		add = &g->nodes[qk_i];
		for (int i = 0; i < 2 && mask < 0; i++)
		{
			int			p,
						sv = add->inputs[i];

			if (sv < 0 || add->inputs[1 - i] < 0 || add->inputs[1 - i] == sv ||
				(p = g->values[sv].producer) < 0 || g->values[sv].is_output ||
				ox_graph_sole_consumer(g, sv) != qk_i)
				continue;
			if (!product_alpha(&g->nodes[p], &alpha))
				continue;
			mask = add->inputs[1 - i];
			qk_i = p;
		}
		if (mask < 0)
			return OX_OK;
	}
	qk = &g->nodes[qk_i];
	if (!product_alpha(qk, &alpha) || g->values[sm->outputs[0]].is_output ||
		(pv_i = ox_graph_sole_consumer(g, sm->outputs[0])) < 0)
		return OX_OK;
	pv = &g->nodes[pv_i];
	if (!ox_pass_is_op(pv, "MatMul") || pv->n_inputs != 2 || pv->n_outputs != 1 || pv->outputs[0] < 0 ||
		pv->inputs[0] != sm->outputs[0] || pv->inputs[1] < 0 || pv->inputs[1] == sm->outputs[0])
		return OX_OK;
	ops[0] = qk->inputs[0];
	ops[1] = qk->inputs[1];
	ops[2] = pv->inputs[1];
	r = rank_of(g, ops[0]);
	if (r < 2 || r > SDPA_PASS_MAX_RANK)
		return OX_OK;
	/* the scores' rank: a mask of unknown or higher rank may raise it (then only axis -1 is the last) */
	if (!softmax_last_axis(sm, mask < 0 ? r : rank_of(g, mask) < 0 ? -1 :
						   rank_of(g, mask) > r ? rank_of(g, mask) : r))
		return OX_OK;
	for (int i = 0; i < 3; i++)
		if (rank_of(g, ops[i]) != r || !known_float(g, ops[i]))
			return OX_OK;
	if (mask >= 0 && !mask_fits(g, mask))
		return OX_OK;

	for (int i = 0; i < 3; i++)
		tp[i] = own_transpose(g, ops[i], i < 2 ? qk_i : pv_i, r);
	tp[3] = reading_transpose(g, pv->outputs[0], r);
	memset(&attrs[0], 0, sizeof(attrs[0]));
	attrs[0].name = "alpha";
	attrs[0].type = OX_ATTR_FLOAT;
	attrs[0].f = alpha;
	n_attrs = 1;
	for (int i = 0; i < 4; i++)
		if (tp[i])
			OX_TRY(perm_attr(pc, &attrs[n_attrs++], perm_names[i], tp[i], st));
	OX_TRY(ox_pass_import_domain(pc->model, OX_PRIVATE_FUSED_DOMAIN, st));
	/* pv, the last of the three in order, becomes the fused node: its inputs all come before it */
	OX_TRY(ox_pass_set_attrs(pc, g, pv_i, NULL, 0, attrs, n_attrs, st));
	pv = &g->nodes[pv_i];
	inputs = malloc(sizeof(int) * 4);
	if (!inputs)
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not rewrite node \"%s\"", pv->name);
	for (int i = 0; i < 3; i++)
		inputs[i] = tp[i] ? tp[i]->inputs[0] : ops[i];
	inputs[3] = mask;
	free(pv->inputs);
	pv->inputs = inputs;
	pv->n_inputs = mask >= 0 ? 4 : 3;
	ox_uses_node_changed(g, pv_i);
	pv->op_type = "ScaledDotProductAttention";
	pv->domain = OX_PRIVATE_FUSED_DOMAIN;
	pv->opset = 1;
	pv->fused_from = tp[0] || tp[1] || tp[2] || tp[3] ? "Transpose+MatMul+Softmax+MatMul+Transpose" :
		"MatMul+Softmax+MatMul";
	if (tp[3])
	{
		pv->outputs[0] = tp[3]->outputs[0];
		tp[3]->dead = true;
	}
	for (int i = 0; i < 3; i++)
		if (tp[i])
			tp[i]->dead = true;
	g->nodes[qk_i].dead = true;
	if (add)
		add->dead = true;
	g->nodes[k].dead = true;
	pc->changes++;
	return OX_OK;
}

ox_code
ox_pass_fuse_attention(ox_pass_ctx *pc, ox_graph *g, ox_status *st)
{
	if (!pc->private_ops)
		return OX_OK;
	for (int k = 0; k < g->n_nodes; k++)
	{
		if ((k & 63) == 63 && ox_pass_canceled(pc, st))
			return st->code;
		if (ox_pass_is_op(&g->nodes[k], "Softmax"))
			OX_TRY(fuse_at_softmax(pc, g, k, st));
	}
	return OX_OK;
}
