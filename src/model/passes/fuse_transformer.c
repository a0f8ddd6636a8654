/*
 * fuse_transformer.c
 *	  Fusions for transformer encoders exported from PyTorch, into the
 *	  com.microsoft contrib operators onnxruntime's own fusions produce
 *	  (same names, inputs, attributes and semantics), so a model saved
 *	  after this pass still loads there:
 *
 *	  - GELU written out with Erf: x * 0.5 * (1 + erf(x / sqrt(2))), in the
 *	    orders exporters produce, becomes Gelu(x);
 *	  - Add(x, bias) -> Gelu, bias a constant vector, becomes BiasGelu(x, bias);
 *	  - Add(input, skip) -> LayerNormalization over the last axis becomes
 *	    SkipLayerNormalization(input, skip, gamma, beta), taking as its bias
 *	    input a constant vector added to skip just before (the bias of the
 *	    projection that produced it);
 *	  - MatMul -> Div or Mul by a constant scalar (attention's 1/sqrt(d)),
 *	    or MatMul of an operand so scaled, becomes FusedMatMul with the
 *	    factors as alpha.
 *
 *	  Each fused kernel makes one pass over memory where the pattern made
 *	  two to five.  Shapes need not be known: the fused kernels accept every
 *	  shape the original nodes did (they broadcast the same way), so the
 *	  rewrite never turns a working model into a failing one.  Only float32
 *	  patterns are fused, recognized by their float32 constants where
 *	  shape inference left the intermediate types unknown.
 */
#include "model/passes/passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * v may be float32: shape inference does not type every intermediate, so
 * an unknown type passes; the patterns' float32 constants (an operand of
 * the same Div, Mul or Add, or LayerNormalization's gamma) then settle it.
 */
static bool
maybe_float(const ox_graph *g, int v)
{
	const ox_type *t;

	if (v < 0)
		return false;
	t = &g->values[v].type;
	return t->kind == OX_TYPE_UNKNOWN ||
		(t->kind == OX_TYPE_TENSOR && (t->elem == OX_FLOAT || t->elem == OX_UNDEFINED));
}

/* a constant float32 scalar (any rank, one element) behind input i */
static bool
const_scalar(const ox_graph *g, const ox_node *n, int i, double *out, int *rank)
{
	const ox_tensor *t = ox_node_const_input(g, n, i);

	if (!t || ox_tensor_numel(t) != 1 || t->dtype != OX_FLOAT)
		return false;
	*out = ox_tensor_get_double(t, 0);
	if (rank)
		*rank = t->rank;
	return true;
}

/* the constant float 1-D tensor behind input i, or NULL */
static const ox_tensor *
const_vector(const ox_graph *g, const ox_node *n, int i)
{
	const ox_tensor *t = ox_node_const_input(g, n, i);

	return t && t->dtype == OX_FLOAT && t->rank == 1 && t->dims[0] > 0 ? t : NULL;
}

/* the node producing v, when v is an intermediate read by node `user` alone */
static ox_node *
private_producer(ox_graph *g, int v, int user)
{
	const ox_value_def *d;

	if (v < 0)
		return NULL;
	d = &g->values[v];
	if (d->producer < 0 || d->is_output || d->init || ox_graph_sole_consumer(g, v) != user)
		return NULL;
	return g->nodes[d->producer].dead ? NULL : &g->nodes[d->producer];
}

/* the node reading v, when it is the only one and v is not a graph output */
static int
only_reader(const ox_graph *g, int v)
{
	if (v < 0 || g->values[v].is_output)
		return -1;
	return ox_graph_sole_consumer(g, v);
}

/* the other operand of a binary node one operand of which is v, or -1 */
static int
other_operand(const ox_node *n, int v)
{
	if (n->n_inputs != 2)
		return -1;
	if (n->inputs[0] == v && n->inputs[1] != v)
		return n->inputs[1];
	if (n->inputs[1] == v && n->inputs[0] != v)
		return n->inputs[0];
	return -1;
}

/* binary node n is (v op constant c) with c within tol of want */
static bool
with_constant(const ox_graph *g, const ox_node *n, int v, double want, double tol)
{
	double		c;

	if (n->n_inputs != 2 || n->n_outputs != 1 || n->outputs[0] < 0)
		return false;
	if (n->inputs[0] == v && const_scalar(g, n, 1, &c, NULL))
		return fabs(c - want) <= tol;
	if (n->inputs[1] == v && const_scalar(g, n, 0, &c, NULL) && !ox_pass_is_op(n, "Div"))
		return fabs(c - want) <= tol;
	return false;
}

/*
 * Turn n, a node of g, into the contrib operator op with the given inputs (-1 = omitted)
 * and one float attribute (attr NULL: none), replacing its attributes:
 * the contrib schemas do not have the ai.onnx ones.
 */
static ox_code
become(ox_pass_ctx *pc, ox_graph *g, ox_node *n, const char *op, const char *fused_from,
	   const int *in, int n_in, const char *attr, float value, ox_status *st)
{
	int		   *inputs;

	/* before the allocation: a failure then leaks nothing */
	OX_TRY(ox_pass_import_domain(pc->model, OX_FUSED_DOMAIN, st));
	if (!(inputs = malloc(sizeof(int) * n_in)))
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not rewrite node \"%s\"", n->name);
	if (attr)
	{
		ox_attr    *a = ox_arena_alloc(&pc->model->arena, sizeof(ox_attr));

		if (!a)
		{
			free(inputs);
			return ox_fail(st, OX_OUT_OF_MEMORY, "could not rewrite node \"%s\"", n->name);
		}
		memset(a, 0, sizeof(*a));
		a->name = attr;
		a->type = OX_ATTR_FLOAT;
		a->f = value;
		n->attrs = a;
		n->n_attrs = 1;
	}
	else
		n->n_attrs = 0;
	memcpy(inputs, in, sizeof(int) * n_in);
	free(n->inputs);
	n->inputs = inputs;
	n->n_inputs = n_in;
	ox_uses_node_changed(g, (int) (n - g->nodes));
	n->op_type = op;
	n->domain = OX_FUSED_DOMAIN;
	n->opset = 1;
	n->fused_from = fused_from;
	pc->changes++;
	return OX_OK;
}

/* ---- GELU ---------------------------------------------------------------- */

#define SQRT2 1.4142135623730951
#define SQRT1_2 0.7071067811865476

/*
 * Erf at the centre: t = x / sqrt(2) (or x * (1 / sqrt(2))), e = erf(t),
 * a = e + 1, then the three orders of multiplying by x and 0.5:
 *   (x * a) * 0.5,   x * (a * 0.5),   (x * 0.5) * a
 */
static ox_code
fuse_gelu(ox_pass_ctx *pc, ox_graph *g, int k, ox_status *st)
{
	ox_node    *erf = &g->nodes[k];
	ox_node    *scale,
			   *add,
			   *m1,
			   *m2,
			   *half = NULL;
	int			x,
				a,
				i1,
				i2;
	const double tol = 1e-4;

	if (erf->n_inputs != 1 || erf->n_outputs != 1 || !maybe_float(g, erf->outputs[0]))
		return OX_OK;
	scale = private_producer(g, erf->inputs[0], k);
	if (!scale || scale->n_inputs != 2)
		return OX_OK;
	x = scale->inputs[0];
	if (!maybe_float(g, x) ||
		!((ox_pass_is_op(scale, "Div") && with_constant(g, scale, x, SQRT2, tol)) ||
		  (ox_pass_is_op(scale, "Mul") && with_constant(g, scale, x, SQRT1_2, tol))))
	{
		x = scale->inputs[1];
		if (!ox_pass_is_op(scale, "Mul") || !maybe_float(g, x) || !with_constant(g, scale, x, SQRT1_2, tol))
			return OX_OK;
	}
	if ((i1 = only_reader(g, erf->outputs[0])) < 0)
		return OX_OK;
	add = &g->nodes[i1];
	if (!ox_pass_is_op(add, "Add") || !with_constant(g, add, erf->outputs[0], 1.0, 1e-6))
		return OX_OK;
	a = add->outputs[0];
	if ((i1 = only_reader(g, a)) < 0 || !ox_pass_is_op(&g->nodes[i1], "Mul"))
		return OX_OK;
	m1 = &g->nodes[i1];
	if (m1->n_outputs != 1 || m1->outputs[0] < 0)
		return OX_OK;
	if (other_operand(m1, a) == x)
	{
		/* (x * a) * 0.5 */
		if ((i2 = only_reader(g, m1->outputs[0])) < 0)
			return OX_OK;
		m2 = &g->nodes[i2];
		if (!ox_pass_is_op(m2, "Mul") || !with_constant(g, m2, m1->outputs[0], 0.5, 1e-6))
			return OX_OK;
	}
	else if (with_constant(g, m1, a, 0.5, 1e-6))
	{
		/* x * (a * 0.5) */
		if ((i2 = only_reader(g, m1->outputs[0])) < 0)
			return OX_OK;
		m2 = &g->nodes[i2];
		if (!ox_pass_is_op(m2, "Mul") || m2->n_outputs != 1 || other_operand(m2, m1->outputs[0]) != x)
			return OX_OK;
	}
	else
	{
		/* (x * 0.5) * a: m1 is the last node, its other operand x * 0.5 */
		int			h = other_operand(m1, a);

		half = private_producer(g, h, i1);
		if (!half || !ox_pass_is_op(half, "Mul") || !with_constant(g, half, x, 0.5, 1e-6))
			return OX_OK;
		m2 = m1;
		m1 = NULL;
	}
	if (m2->outputs[0] < 0 || !maybe_float(g, m2->outputs[0]))
		return OX_OK;
	OX_TRY(become(pc, g, m2, "Gelu", "Erf GELU", &x, 1, NULL, 0.0f, st));
	scale->dead = true;
	erf->dead = true;
	add->dead = true;
	if (m1)
		m1->dead = true;
	if (half)
		half->dead = true;
	return OX_OK;
}

/* Add(x, bias) -> Gelu becomes BiasGelu(x, bias) */
static ox_code
fuse_bias_gelu(ox_pass_ctx *pc, ox_graph *g, int k, ox_status *st)
{
	ox_node    *gelu = &g->nodes[k];
	ox_node    *add;
	int			in[2];

	if (gelu->n_inputs != 1 || gelu->n_attrs != 0)
		return OX_OK;
	add = private_producer(g, gelu->inputs[0], k);
	if (!add || !ox_pass_is_op(add, "Add") || add->n_inputs != 2)
		return OX_OK;
	if (const_vector(g, add, 1) && !ox_node_const_input(g, add, 0))
	{
		in[0] = add->inputs[0];
		in[1] = add->inputs[1];
	}
	else if (const_vector(g, add, 0) && !ox_node_const_input(g, add, 1))
	{
		in[0] = add->inputs[1];
		in[1] = add->inputs[0];
	}
	else
		return OX_OK;
	if (!maybe_float(g, in[0]))
		return OX_OK;
	OX_TRY(become(pc, g, gelu, "BiasGelu", "Add+Gelu", in, 2, NULL, 0.0f, st));
	add->dead = true;
	return OX_OK;
}

/* ---- SkipLayerNormalization ---------------------------------------------- */

/* the declared rank of v, or -1 */
static int
rank_of(const ox_graph *g, int v)
{
	return g->values[v].type.kind == OX_TYPE_TENSOR ? g->values[v].type.rank : -1;
}

/* a known last dimension of v that differs from h */
static bool
last_dim_differs(const ox_graph *g, int v, int64_t h)
{
	const ox_type *t = &g->values[v].type;

	return t->kind == OX_TYPE_TENSOR && t->rank >= 1 && t->dims[t->rank - 1].value >= 0 &&
		t->dims[t->rank - 1].value != h;
}

static ox_code
fuse_skip_layer_norm(ox_pass_ctx *pc, ox_graph *g, int k, ox_status *st)
{
	ox_node    *ln = &g->nodes[k];
	ox_node    *add,
			   *bias_add = NULL;
	const ox_tensor *gamma,
			   *beta = NULL,
			   *bias = NULL;
	int64_t		axis = ox_attr_int(ln, "axis", -1);
	int64_t		h;
	int			in[5],
				n_in;
	int			p,
				q;

	if (ln->opset < 17 || ln->n_inputs < 2 || ln->n_outputs < 1 || !maybe_float(g, ln->outputs[0]) ||
		ox_attr_int(ln, "stash_type", 1) != 1)
		return OX_OK;
	/* the statistics outputs: SkipLayerNormalization's have other shapes */
	for (int o = 1; o < ln->n_outputs; o++)
		if (ln->outputs[o] >= 0 &&
			(g->values[ln->outputs[o]].is_output || g->values[ln->outputs[o]].n_consumers > 0))
			return OX_OK;
	if (!(gamma = const_vector(g, ln, 1)))
		return OX_OK;
	h = gamma->dims[0];
	if (ln->n_inputs > 2 && ln->inputs[2] >= 0)
	{
		beta = const_vector(g, ln, 2);
		if (!beta || beta->dims[0] != h)
			return OX_OK;
	}
	add = private_producer(g, ln->inputs[0], k);
	if (!add || !ox_pass_is_op(add, "Add") || add->n_inputs != 2 || add->n_outputs != 1)
		return OX_OK;
	/* normalized over the last axis only */
	if (axis != -1 && !(axis >= 0 && rank_of(g, add->outputs[0]) == axis + 1))
		return OX_OK;
	p = add->inputs[0];
	q = add->inputs[1];
	if (p < 0 || q < 0 || p == q || !maybe_float(g, p) || !maybe_float(g, q) ||
		last_dim_differs(g, p, h) || last_dim_differs(g, q, h))
		return OX_OK;
	/* a constant operand (position embeddings) is the skip, and a matrix */
	if (ox_node_const_input(g, add, 0))
	{
		p = add->inputs[1];
		q = add->inputs[0];
	}
	if (ox_node_const_input(g, add, 0) && ox_node_const_input(g, add, 1))
		return OX_OK;
	if (g->values[q].init && (g->values[q].init->rank < 2 || g->values[q].init->dtype != OX_FLOAT))
		return OX_OK;
	/* a bias added to one operand (the projection's): that one is the skip */
	for (int side = 0; side < 2 && !bias; side++)
	{
		int			v = side == 0 ? q : p;
		ox_node    *b = private_producer(g, v, (int) (add - g->nodes));
		const ox_tensor *t;
		int			other;

		if (!b || !ox_pass_is_op(b, "Add") || b->n_inputs != 2 || b->n_outputs != 1)
			continue;
		if ((t = const_vector(g, b, 1)) && !ox_node_const_input(g, b, 0))
			other = b->inputs[0];
		else if ((t = const_vector(g, b, 0)) && !ox_node_const_input(g, b, 1))
			other = b->inputs[1];
		else
			continue;
		if (t->dims[0] != h || !maybe_float(g, other) || last_dim_differs(g, other, h))
			continue;
		bias = t;
		bias_add = b;
		if (side == 0)
			q = other;
		else
		{
			q = other;
			p = add->inputs[0] == v ? add->inputs[1] : add->inputs[0];
		}
	}
	/* onnxruntime broadcasts the skip, not the input: the higher rank is the input */
	if (!bias && !g->values[q].init && rank_of(g, q) > rank_of(g, p) && rank_of(g, p) >= 0)
	{
		int			t = p;

		p = q;
		q = t;
	}
	in[0] = p;
	in[1] = q;
	in[2] = ln->inputs[1];
	in[3] = beta ? ln->inputs[2] : -1;
	n_in = 4;
	if (bias)
	{
		in[4] = bias_add->inputs[0] == q ? bias_add->inputs[1] : bias_add->inputs[0];
		n_in = 5;
	}
	{
		float		eps = ox_attr_float(ln, "epsilon", 1e-5f);

		OX_TRY(become(pc, g, ln, "SkipLayerNormalization", bias ? "Add+Add+LayerNormalization" :
					  "Add+LayerNormalization", in, n_in, "epsilon", eps, st));
	}
	ln->n_outputs = 1;
	add->dead = true;
	if (bias_add)
		bias_add->dead = true;
	return OX_OK;
}

/* ---- FusedMatMul ----------------------------------------------------------- */

/*
 * Binary node s is (v / c) or (v * c) or (c * v), c a constant float32
 * scalar: its factor (1 / c for Div), v's value id in *v.  A factor of rank
 * 1 must not add an axis: v's rank is then at least min_rank.
 */
static bool
scalar_factor(const ox_graph *g, const ox_node *s, int min_rank, int *v, double *factor)
{
	double		c;
	int			crank,
				x;

	if (!(ox_pass_is_op(s, "Div") || ox_pass_is_op(s, "Mul")) || s->n_inputs != 2 || s->n_outputs != 1 ||
		s->outputs[0] < 0)
		return false;
	if (const_scalar(g, s, 1, &c, &crank))
		x = s->inputs[0];
	else if (ox_pass_is_op(s, "Mul") && const_scalar(g, s, 0, &c, &crank))
		x = s->inputs[1];
	else
		return false;
	if (x < 0 || crank > 1 || (crank == 1 && rank_of(g, x) < min_rank))
		return false;
	if (ox_pass_is_op(s, "Div"))
	{
		if (c == 0.0 || !isfinite(c))
			return false;
		c = 1.0 / c;
	}
	if (!isfinite(c))
		return false;
	*v = x;
	*factor = c;
	return true;
}

/*
 * MatMul whose product is divided or multiplied by a constant scalar, or
 * whose operands are (attention's 1/sqrt(d) applied to the queries, as
 * PyTorch's MultiheadAttention exports it): the factors become FusedMatMul's
 * alpha and the scaling passes over memory go.  A scaled operand must be
 * read by the MatMul alone.
 */
static ox_code
fuse_matmul_scale(ox_pass_ctx *pc, ox_graph *g, int k, ox_status *st)
{
	ox_node    *mm = &g->nodes[k];
	ox_node    *out_scale = NULL;
	ox_node    *in_scale[2] = {NULL, NULL};
	double		alpha = 1.0,
				f;
	int			in[2],
				r,
				v;

	if (mm->n_inputs != 2 || mm->n_outputs != 1 || !maybe_float(g, mm->outputs[0]))
		return OX_OK;
	in[0] = mm->inputs[0];
	in[1] = mm->inputs[1];
	if ((r = only_reader(g, mm->outputs[0])) >= 0 &&
		scalar_factor(g, &g->nodes[r], 2, &v, &f) && v == mm->outputs[0] &&
		rank_of(g, mm->inputs[0]) >= 2 && rank_of(g, mm->inputs[1]) >= 2)
	{
		/* a [1] factor could add an axis to a product of two vectors: both operands matrices */
		out_scale = &g->nodes[r];
		alpha *= f;
	}
	for (int i = 0; i < 2; i++)
	{
		ox_node    *p = private_producer(g, mm->inputs[i], k);

		if (p && mm->inputs[0] != mm->inputs[1] && scalar_factor(g, p, 1, &v, &f) &&
			maybe_float(g, v))
		{
			in_scale[i] = p;
			in[i] = v;
			alpha *= f;
		}
	}
	if (!out_scale && !in_scale[0] && !in_scale[1])
		return OX_OK;
	if (!isfinite(alpha) || !isfinite((float) alpha))
		return OX_OK;
	OX_TRY(become(pc, g, mm, "FusedMatMul",
				  in_scale[0] || in_scale[1] ? "MatMul+scaled operand" :
				  ox_pass_is_op(out_scale, "Div") ? "MatMul+Div" : "MatMul+Mul", in, 2,
				  "alpha", (float) alpha, st));
	if (out_scale)
	{
		mm->outputs[0] = out_scale->outputs[0];
		out_scale->dead = true;
	}
	for (int i = 0; i < 2; i++)
		if (in_scale[i])
			in_scale[i]->dead = true;
	return OX_OK;
}

ox_code
ox_pass_fuse_transformer(ox_pass_ctx *pc, ox_graph *g, ox_status *st)
{
	/* GELU first, so that its bias can fuse in the same round */
	for (int k = 0; k < g->n_nodes; k++)
		if (ox_pass_is_op(&g->nodes[k], "Erf"))
			OX_TRY(fuse_gelu(pc, g, k, st));
	for (int k = 0; k < g->n_nodes; k++)
	{
		ox_node    *n = &g->nodes[k];

		/* each match scans the graph for consumers: big graphs take long */
		if ((k & 63) == 63 && ox_pass_canceled(pc, st))
			return st->code;
		if (n->dead)
			continue;
		if (strcmp(n->domain, OX_FUSED_DOMAIN) == 0 && strcmp(n->op_type, "Gelu") == 0)
			OX_TRY(fuse_bias_gelu(pc, g, k, st));
		else if (ox_pass_is_op(n, "LayerNormalization"))
			OX_TRY(fuse_skip_layer_norm(pc, g, k, st));
		else if (ox_pass_is_op(n, "MatMul"))
			OX_TRY(fuse_matmul_scale(pc, g, k, st));
	}
	return OX_OK;
}
