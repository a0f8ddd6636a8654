/*
 * preview_gradient.c
 *	  ai.onnx.preview.training Gradient: the derivative of the graph value y
 *	  with respect to the node's inputs xs, by reverse-mode differentiation
 *	  of the nodes that lead from xs to y (seeded with ones).
 *
 *	  The forward chain is found in the graph at prepare time and re-run here
 *	  on the node's own inputs, in double precision.  Supported chains are
 *	  elementwise: Add, Sub, Mul, Div, Neg, Identity, Relu, Sigmoid, Tanh,
 *	  Exp, Log, over tensors of one shape or scalars; anything else is
 *	  reported as unsupported rather than differentiated wrongly.
 */
#include "kernels/cpu/preview.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GRAD_MAX_NODES 256

typedef enum grad_op
{
	G_ADD, G_SUB, G_MUL, G_DIV, G_NEG, G_IDENTITY, G_RELU, G_SIGMOID, G_TANH, G_EXP, G_LOG
} grad_op;

typedef struct grad_state
{
	int			n_nodes;
	int			nodes[GRAD_MAX_NODES];	/* graph node indices, topological */
	grad_op		ops[GRAD_MAX_NODES];
	int			y;				/* value id of y */
	int			n_xs;
	int			xs[64];			/* value ids the inputs bind to (xs then zs) */
} grad_state;

static bool
op_of(const ox_node *n, grad_op *op)
{
	static const struct
	{
		const char *name;
		grad_op		op;
	}			table[] = {
		{"Add", G_ADD}, {"Sub", G_SUB}, {"Mul", G_MUL}, {"Div", G_DIV}, {"Neg", G_NEG},
		{"Identity", G_IDENTITY}, {"Relu", G_RELU}, {"Sigmoid", G_SIGMOID}, {"Tanh", G_TANH},
		{"Exp", G_EXP}, {"Log", G_LOG},
	};

	if (n->domain[0] != '\0')
		return false;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(n->op_type, table[i].name) == 0)
		{
			*op = table[i].op;
			return true;
		}
	return false;
}

static ox_code
gradient_prepare(ox_prepare_ctx *pc)
{
	const ox_graph *g = pc->graph;
	const ox_node *node = pc->node;
	const char *const *xs;
	const char *const *zs;
	int			nx = ox_attr_strings(node, "xs", &xs);
	int			nz = ox_attr_strings(node, "zs", &zs);
	const char *yname = ox_attr_string(node, "y", NULL);
	grad_state *s;
	bool	   *needed;

	if (!g || !yname || nx <= 0 || nx + nz > 64 || node->n_inputs != nx + nz || node->n_outputs != nx)
		return ox_fail(pc->st, OX_INVALID_MODEL, "Gradient: xs, zs and y do not match the node's inputs and outputs");
	s = calloc(1, sizeof(*s));
	needed = calloc(g->n_nodes + 1, sizeof(bool));
	if (!s || !needed)
	{
		free(s);
		free(needed);
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "Gradient: out of memory");
	}
	pc->state = s;
	s->y = ox_graph_find_value(g, yname);
	s->n_xs = nx + nz;
	for (int i = 0; i < nx + nz; i++)
	{
		s->xs[i] = ox_graph_find_value(g, i < nx ? xs[i] : zs[i - nx]);
		if (s->xs[i] < 0)
		{
			free(needed);
			return ox_fail(pc->st, OX_INVALID_MODEL, "Gradient: unknown value \"%s\"", i < nx ? xs[i] : zs[i - nx]);
		}
	}
	if (s->y < 0)
	{
		free(needed);
		return ox_fail(pc->st, OX_INVALID_MODEL, "Gradient: unknown value \"%s\"", yname);
	}
	/* walk back from y to the bound inputs and constants, marking nodes */
	{
		int			stack[GRAD_MAX_NODES * 4];
		int			top = 0;

		stack[top++] = s->y;
		while (top > 0)
		{
			int			v = stack[--top];
			int			p = g->values[v].producer;
			bool		bound = false;

			for (int i = 0; i < s->n_xs; i++)
				if (s->xs[i] == v)
					bound = true;
			if (bound || g->values[v].init || p < 0 || needed[p])
				continue;
			if (&g->nodes[p] == node)
			{
				free(needed);
				return ox_fail(pc->st, OX_INVALID_MODEL, "Gradient: y depends on the Gradient node itself");
			}
			needed[p] = true;
			for (int i = 0; i < g->nodes[p].n_inputs; i++)
				if (g->nodes[p].inputs[i] >= 0 && top < GRAD_MAX_NODES * 4)
					stack[top++] = g->nodes[p].inputs[i];
		}
	}
	for (int k = 0; k < g->n_nodes; k++)
	{
		if (!needed[k])
			continue;
		if (s->n_nodes == GRAD_MAX_NODES || !op_of(&g->nodes[k], &s->ops[s->n_nodes]) ||
			g->nodes[k].n_outputs != 1)
		{
			ox_code		rc = ox_fail(pc->st, OX_UNSUPPORTED,
									 "Gradient: differentiating through %s is not supported",
									 g->nodes[k].op_type);

			free(needed);
			return rc;
		}
		s->nodes[s->n_nodes++] = k;
	}
	free(needed);
	return OX_OK;
}

/* the double buffer of value v, or NULL: a scalar broadcasts (stride 0) */
typedef struct grad_buf
{
	double	   *val;
	double	   *grad;
	int64_t		n;
} grad_buf;

static ox_code
gradient_run(ox_kernel_ctx *ctx)
{
	const grad_state *s = ctx->state;
	const ox_graph *g = ctx->graph;
	grad_buf   *b = calloc(g->n_values + 1, sizeof(grad_buf));
	int64_t		n = 1;
	const ox_tensor *first = ox_in_tensor(ctx, 0);
	ox_code		rc = OX_OK;

	if (!b)
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Gradient: out of memory");
	if (!first)
	{
		free(b);
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Gradient: x inputs must be tensors");
	}
	n = ox_tensor_numel(first);

#define LOAD(v, t) \
	do { \
		int64_t		cnt_ = ox_tensor_numel(t); \
		if ((t)->dtype != OX_FLOAT && (t)->dtype != OX_DOUBLE) \
		{ rc = ox_fail(ctx->st, OX_UNSUPPORTED, "Gradient: only float and double values are supported"); goto done; } \
		if (cnt_ != n && cnt_ != 1) \
		{ rc = ox_fail(ctx->st, OX_UNSUPPORTED, "Gradient: values of different shapes are not supported"); goto done; } \
		b[v].n = cnt_; \
		b[v].val = ox_workspace_calloc(cnt_ + 1, sizeof(double), ctx->st, "Gradient"); \
		b[v].grad = ox_workspace_calloc(n + 1, sizeof(double), ctx->st, "Gradient"); \
		if (!b[v].val || !b[v].grad) \
		{ rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Gradient: out of memory"); goto done; } \
		for (int64_t i_ = 0; i_ < cnt_; i_++) \
			b[v].val[i_] = ox_tensor_get_double(t, i_); \
	} while (0)

	for (int i = 0; i < s->n_xs; i++)
	{
		const ox_tensor *t = ox_in_tensor(ctx, i);

		if (!t)
		{
			rc = ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Gradient: input %d must be a tensor", i);
			goto done;
		}
		LOAD(s->xs[i], t);
	}
	/* forward */
	for (int k = 0; k < s->n_nodes; k++)
	{
		const ox_node *nd = &g->nodes[s->nodes[k]];
		int			out = nd->outputs[0];
		grad_buf   *in[2] = {NULL, NULL};

		for (int i = 0; i < nd->n_inputs && i < 2; i++)
		{
			int			v = nd->inputs[i];

			if (v >= 0 && !b[v].val && g->values[v].init)
				LOAD(v, g->values[v].init);
			if (v < 0 || !b[v].val)
			{
				rc = ox_fail(ctx->st, OX_UNSUPPORTED, "Gradient: value \"%s\" is not available", g->values[v].name);
				goto done;
			}
			in[i] = &b[v];
		}
		b[out].n = n;
		b[out].val = ox_workspace_calloc(n + 1, sizeof(double), ctx->st, "Gradient");
		b[out].grad = ox_workspace_calloc(n + 1, sizeof(double), ctx->st, "Gradient");
		if (!b[out].val || !b[out].grad)
		{
			rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Gradient: out of memory");
			goto done;
		}
		for (int64_t e = 0; e < n; e++)
		{
			double		x = in[0]->val[in[0]->n == 1 ? 0 : e];
			double		y = in[1] ? in[1]->val[in[1]->n == 1 ? 0 : e] : 0;
			double		r = 0;

			switch (s->ops[k])
			{
				case G_ADD: r = x + y; break;
				case G_SUB: r = x - y; break;
				case G_MUL: r = x * y; break;
				case G_DIV: r = x / y; break;
				case G_NEG: r = -x; break;
				case G_IDENTITY: r = x; break;
				case G_RELU: r = x > 0 ? x : 0; break;
				case G_SIGMOID: r = 1 / (1 + exp(-x)); break;
				case G_TANH: r = tanh(x); break;
				case G_EXP: r = exp(x); break;
				case G_LOG: r = log(x); break;
			}
			b[out].val[e] = r;
		}
	}
	if (!b[s->y].grad)
	{
		rc = ox_fail(ctx->st, OX_INVALID_MODEL, "Gradient: y is not computed from xs");
		goto done;
	}
	/* backward, seeded with ones; a scalar operand's gradient sums over elements */
	for (int64_t e = 0; e < n; e++)
		b[s->y].grad[e] = 1.0;
	for (int k = s->n_nodes - 1; k >= 0; k--)
	{
		const ox_node *nd = &g->nodes[s->nodes[k]];
		const grad_buf *o = &b[nd->outputs[0]];
		grad_buf   *a = &b[nd->inputs[0]];
		grad_buf   *c = nd->n_inputs > 1 ? &b[nd->inputs[1]] : NULL;

		for (int64_t e = 0; e < n; e++)
		{
			double		go = o->grad[e];
			double		x = a->val[a->n == 1 ? 0 : e];
			double		y = c ? c->val[c->n == 1 ? 0 : e] : 0;
			double		da = 0,
						db = 0;

			switch (s->ops[k])
			{
				case G_ADD: da = go; db = go; break;
				case G_SUB: da = go; db = -go; break;
				case G_MUL: da = go * y; db = go * x; break;
				case G_DIV: da = go / y; db = -go * x / (y * y); break;
				case G_NEG: da = -go; break;
				case G_IDENTITY: da = go; break;
				case G_RELU: da = x > 0 ? go : 0; break;
				case G_SIGMOID: da = go * o->val[e] * (1 - o->val[e]); break;
				case G_TANH: da = go * (1 - o->val[e] * o->val[e]); break;
				case G_EXP: da = go * o->val[e]; break;
				case G_LOG: da = go / x; break;
			}
			a->grad[a->n == 1 ? 0 : e] += da;
			if (c)
				c->grad[c->n == 1 ? 0 : e] += db;
		}
	}
	for (int i = 0; i < ctx->n_out; i++)
	{
		const ox_tensor *x = ox_in_tensor(ctx, i);
		ox_tensor  *out = ox_out_tensor(ctx, i, x->dtype, x->rank, x->dims);

		if (!out)
		{
			rc = ctx->st->code;
			goto done;
		}
		for (int64_t e = 0; e < ox_tensor_numel(x); e++)
			ox_store_real(out->data, x->dtype, e, b[s->xs[i]].grad[e]);
	}
#undef LOAD
done:
	for (int v = 0; v < g->n_values; v++)
	{
		free(b[v].val);
		free(b[v].grad);
	}
	free(b);
	return rc;
}

ox_code
preview_gradient_prepare(ox_prepare_ctx *pc)
{
	return gradient_prepare(pc);
}

ox_code
preview_gradient_run(ox_kernel_ctx *ctx)
{
	return gradient_run(ctx);
}
