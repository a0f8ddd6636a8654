/*
 * layout_nhwc.c
 *	  Channels-last chains of int8 convolutions (level 3, "all").
 *
 * Our QLinearConv computes channels-last: it transposes its NCHW input
 * into a padded NHWC buffer and its NHWC product back into the NCHW
 * output, for every convolution.  In a quantized CNN those transposes are
 * a tenth of the run.  This pass keeps the activations channels-last
 * between convolutions, as onnxruntime's NHWC transformer does:
 *
 *	1. every 2-D, group-1 QLinearConv with a rank-4 input becomes
 *	   com.microsoft QLinearConv with channels_last=1, between a Transpose
 *	   to NHWC of its input and a Transpose back to NCHW of its output;
 *	2. QLinearAdd (elementwise, per-tensor parameters) and MaxPool on
 *	   8-bit data move behind those Transposes: Add(T(a), T(b)) is
 *	   T(Add(a, b)) for the same permutation of two rank-4 tensors
 *	   (broadcasting included), and MaxPool(T(x)) is T(NhwcMaxPool(x));
 *	   an Add with only one transposed input gets the other transposed to
 *	   NHWC (shared between consumers);
 *	3. a Transpose to NHWC of a Transpose to NCHW is the identity: its uses
 *	   read the inner input, and the dead Transposes go with
 *	   eliminate_dead.
 *
 * What is left are the Transposes where the chain meets the float world
 * (after the input's QuantizeLinear, before the pooling head), each a
 * single transpose instead of one per convolution.
 *
 * Only for sessions whose every node runs on the CPU (pc->cpu_layout):
 * the CUDA provider has no channels-last kernels, and Transposes placed on
 * the GPU between CPU convolutions would add copies.  The pass works in
 * one sweep over the topologically sorted nodes, keeping value producers
 * up to date itself, so that a chain of residual blocks is converted in
 * one round of the pass manager.
 */
#include "model/passes/passes.h"

#include <string.h>

#define MS_DOMAIN "com.microsoft"

static const int64_t to_nhwc[4] = {0, 2, 3, 1};
static const int64_t to_nchw[4] = {0, 3, 1, 2};

/* a live ai.onnx Transpose of one 4-D input with exactly this perm */
static bool
is_transpose(const ox_node *n, const int64_t *perm)
{
	const int64_t *p;

	if (n->dead || strcmp(n->op_type, "Transpose") != 0 || n->domain[0] != '\0' ||
		n->n_inputs != 1 || n->n_outputs != 1 || n->inputs[0] < 0 || n->outputs[0] < 0)
		return false;
	return ox_attr_ints(n, "perm", &p) == 4 && memcmp(p, perm, sizeof(int64_t) * 4) == 0;
}

/* the node producing value v, when it is a Transpose with this perm; else -1 */
static int
transpose_of(const ox_graph *g, int v, const int64_t *perm)
{
	int			k;

	if (v < 0 || v >= g->n_values || g->values[v].init || g->values[v].is_input)
		return -1;
	k = g->values[v].producer;
	if (k < 0 || k >= g->n_nodes || !is_transpose(&g->nodes[k], perm))
		return -1;
	return k;
}

/* a rank-4 8-bit tensor type (as declared or inferred) */
static bool
is_q8_4d(const ox_type *t)
{
	return t->kind == OX_TYPE_TENSOR && t->rank == 4 &&
		(t->elem == OX_UINT8 || t->elem == OX_INT8);
}

static bool
is_q8_elem(const ox_type *t)
{
	return t->kind == OX_TYPE_TENSOR && (t->elem == OX_UINT8 || t->elem == OX_INT8);
}

/*
 * v is a 4-D 8-bit tensor: as its type says, or as the Transpose to NCHW
 * that makes it implies (a 4-element perm) with an 8-bit type on either
 * side of it.
 */
static bool
known_q8_4d(const ox_graph *g, int v)
{
	int			t;

	if (is_q8_4d(&g->values[v].type))
		return true;
	if ((t = transpose_of(g, v, to_nchw)) < 0)
		return false;
	return is_q8_elem(&g->values[v].type) || is_q8_elem(&g->values[g->nodes[t].inputs[0]].type);
}

/* a new value whose type is from's permuted by perm (unknown when from is not 4-D) */
static int
new_value(ox_pass_ctx *pc, ox_graph *g, const char *prefix, int from, const int64_t *perm,
		  ox_status *st)
{
	int			id = ox_graph_add_value(g, ox_model_unique_name(pc->model, prefix), st);
	const ox_type *src;
	ox_dim	   *d;

	if (id < 0)
		return -1;
	src = &g->values[from].type;
	if (src->kind != OX_TYPE_TENSOR)
		return id;
	g->values[id].type.kind = OX_TYPE_TENSOR;
	g->values[id].type.elem = src->elem;
	if (src->rank != 4 || !src->dims)
		return id;
	d = ox_arena_alloc(&pc->model->arena, sizeof(ox_dim) * 4);
	if (!d)
	{
		ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate a shape");
		return -1;
	}
	for (int i = 0; i < 4; i++)
		d[i] = src->dims[perm[i]];
	g->values[id].type.rank = 4;
	g->values[id].type.dims = d;
	return id;
}

/* Transpose(in) -> out with perm; returns the node index or -1 */
static int
add_transpose(ox_pass_ctx *pc, ox_graph *g, int in, int out, const int64_t *perm, ox_status *st)
{
	int64_t    *p = ox_arena_alloc(&pc->model->arena, sizeof(int64_t) * 4);
	ox_attr		a;
	int			k;

	if (!p)
	{
		ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate an attribute");
		return -1;
	}
	memcpy(p, perm, sizeof(int64_t) * 4);
	memset(&a, 0, sizeof(a));
	a.name = "perm";
	a.type = OX_ATTR_INTS;
	a.n = 4;
	a.ints = p;
	k = ox_pass_add_node(pc, g, "Transpose", "", ox_model_unique_name(pc->model, "layout_transpose"),
						 &in, 1, &out, 1, "layout_nhwc", st);
	if (k < 0 || ox_pass_set_attrs(pc, g, k, NULL, 0, &a, 1, st) != OX_OK)
		return -1;
	g->values[out].producer = k;
	g->values[out].producer_slot = 0;
	return k;
}

/* node k is the Transpose of v (arg) to channels-last */
static bool
transposes_to_nhwc(const ox_graph *g, int k, const void *arg)
{
	return is_transpose(&g->nodes[k], to_nhwc) && g->nodes[k].inputs[0] == *(const int *) arg;
}

/*
 * A value holding v transposed to NHWC: the input of the Transpose to NCHW
 * that made v, an existing Transpose of v to NHWC, or a new one.
 */
static int
nhwc_of(ox_pass_ctx *pc, ox_graph *g, int v, ox_status *st)
{
	int			k = transpose_of(g, v, to_nchw);
	int			t;

	if (k >= 0)
		return g->nodes[k].inputs[0];
	if ((k = ox_graph_next_reader(g, v, -1, transposes_to_nhwc, &v)) >= 0)
		return g->nodes[k].outputs[0];
	if ((t = new_value(pc, g, "layout_nhwc", v, to_nhwc, st)) < 0 ||
		add_transpose(pc, g, v, t, to_nhwc, st) < 0)
		return -1;
	return t;
}

/*
 * Node k now reads NHWC values and writes out_nhwc in NHWC; its old output
 * `out` becomes the Transpose of that back to NCHW.
 */
static ox_code
retarget_output(ox_pass_ctx *pc, ox_graph *g, int k, int elem_from, ox_status *st)
{
	int			out = g->nodes[k].outputs[0];
	ox_type    *t = &g->values[out].type;
	int			y;

	/*
	 * Without shape inference for the node, say what the rewrite knows of
	 * its output (4-D, the type of elem_from) so that later nodes of the
	 * chain can be moved too.
	 */
	if ((t->kind != OX_TYPE_TENSOR || t->rank < 0) && is_q8_elem(&g->values[elem_from].type))
	{
		ox_dim	   *d = ox_arena_alloc(&pc->model->arena, sizeof(ox_dim) * 4);

		if (!d)
			return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate a shape");
		for (int i = 0; i < 4; i++)
		{
			d[i].value = -1;
			d[i].param = NULL;
		}
		t->kind = OX_TYPE_TENSOR;
		t->elem = g->values[elem_from].type.elem;
		t->rank = 4;
		t->dims = d;
	}
	if ((y = new_value(pc, g, "layout_nhwc", out, to_nhwc, st)) < 0)
		return st->code;
	g->nodes[k].outputs[0] = y;
	g->values[y].producer = k;
	g->values[y].producer_slot = 0;
	if (add_transpose(pc, g, y, out, to_nchw, st) < 0)
		return st->code;
	pc->changes++;
	return OX_OK;
}

/* step 1: a QLinearConv the channels-last kernel serves */
static ox_code
convert_conv(ox_pass_ctx *pc, ox_graph *g, int k, ox_status *st)
{
	ox_node    *n = &g->nodes[k];
	int			x,
				xt;

	if (strcmp(n->op_type, "QLinearConv") != 0 || n->domain[0] != '\0' || n->n_inputs < 8 ||
		n->n_outputs != 1 || n->outputs[0] < 0 || n->inputs[0] < 0 || n->inputs[3] < 0 ||
		ox_attr_int(n, "group", 1) != 1)
		return OX_OK;
	x = n->inputs[0];
	/* 2-D: a rank-4 input and 4-D weights */
	if (!is_q8_4d(&g->values[x].type) || g->values[n->inputs[3]].type.rank != 4)
		return OX_OK;
	if ((xt = nhwc_of(pc, g, x, st)) < 0)
		return st->code;
	n = &g->nodes[k];
	n->inputs[0] = xt;
	ox_uses_node_changed(g, k);
	n->domain = MS_DOMAIN;
	n->opset = 1;
	OX_TRY(ox_pass_add_int_attr(pc, g, k, "channels_last", 1, st));
	/* y has the type of y_zero_point */
	return retarget_output(pc, g, k, g->nodes[k].inputs[7] >= 0 ? g->nodes[k].inputs[7] : x, st);
}

/* step 2: QLinearAdd with at least one input coming out of a channels-last chain */
static ox_code
sink_add(ox_pass_ctx *pc, ox_graph *g, int k, ox_status *st)
{
	ox_node    *n = &g->nodes[k];
	int			a,
				b;

	if (strcmp(n->op_type, "QLinearAdd") != 0 || strcmp(n->domain, MS_DOMAIN) != 0 ||
		n->n_inputs < 8 || n->n_outputs != 1 || n->outputs[0] < 0 ||
		n->inputs[0] < 0 || n->inputs[3] < 0)
		return OX_OK;
	a = n->inputs[0];
	b = n->inputs[3];
	if (transpose_of(g, a, to_nchw) < 0 && transpose_of(g, b, to_nchw) < 0)
		return OX_OK;
	/* both rank 4, so that one permutation of both keeps the broadcasting */
	if (!known_q8_4d(g, a) || !known_q8_4d(g, b))
		return OX_OK;
	if ((a = nhwc_of(pc, g, a, st)) < 0 || (b = nhwc_of(pc, g, b, st)) < 0)
		return st->code;
	g->nodes[k].inputs[0] = a;
	g->nodes[k].inputs[3] = b;
	ox_uses_node_changed(g, k);
	/* C has the type of A */
	return retarget_output(pc, g, k, a, st);
}

/* step 2: MaxPool of 8-bit data coming out of a channels-last chain */
static ox_code
sink_max_pool(ox_pass_ctx *pc, ox_graph *g, int k, ox_status *st)
{
	ox_node    *n = &g->nodes[k];
	int			t;

	if (strcmp(n->op_type, "MaxPool") != 0 || n->domain[0] != '\0' || n->n_inputs != 1 ||
		n->n_outputs != 1 || n->outputs[0] < 0 || n->inputs[0] < 0 ||
		!known_q8_4d(g, n->inputs[0]) || (t = transpose_of(g, n->inputs[0], to_nchw)) < 0)
		return OX_OK;
	n->inputs[0] = g->nodes[t].inputs[0];
	n->op_type = "NhwcMaxPool";
	ox_uses_node_changed(g, k);
	n->domain = MS_DOMAIN;
	n->opset = 1;
	return retarget_output(pc, g, k, n->inputs[0], st);
}

/* step 3: NHWC(NCHW(v)) is v */
static void
cancel_pairs(ox_pass_ctx *pc, ox_graph *g)
{
	for (int k = 0; k < g->n_nodes; k++)
	{
		ox_node    *n = &g->nodes[k];
		int			inner;

		if (!is_transpose(n, to_nhwc) || g->values[n->outputs[0]].is_output ||
			(inner = transpose_of(g, n->inputs[0], to_nchw)) < 0)
			continue;
		ox_graph_replace_uses(g, n->outputs[0], g->nodes[inner].inputs[0]);
		n->dead = true;
		pc->changes++;
	}
}

ox_code
ox_pass_layout_nhwc(ox_pass_ctx *pc, ox_graph *g, ox_status *st)
{
	int			n_nodes = g->n_nodes;

	if (!pc->cpu_layout)
		return OX_OK;
	/* nodes appended by the steps come after n_nodes and need no visit */
	for (int k = 0; k < n_nodes; k++)
	{
		if (g->nodes[k].dead)
			continue;
		OX_TRY(convert_conv(pc, g, k, st));
		OX_TRY(sink_add(pc, g, k, st));
		OX_TRY(sink_max_pool(pc, g, k, st));
	}
	cancel_pairs(pc, g);
	return OX_OK;
}
