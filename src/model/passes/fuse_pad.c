/*
 * fuse_pad.c
 *	  A constant zero Pad of the spatial axes in front of a Conv or an
 *	  AveragePool becomes that node's own padding (level 1, as
 *	  onnxruntime's PadFusion): Pad(X, pads) -> Conv(pads_c) is
 *	  Conv(X, pads + pads_c), and Pad(X, pads) -> AveragePool(pads_a) is
 *	  AveragePool(X, pads + pads_a, count_include_pad = 1), the zeros of the
 *	  explicit Pad being the taps that count_include_pad counts.
 *
 * PyTorch exports every 3 x 3 stride-1 average pool of Inception-v3
 * (count_include_pad=True, its default) as Pad then AveragePool with no
 * padding; TensorFlow converters write "SAME" convolutions as an explicit
 * Pad.  The Pad copies the whole activation once more, and the pool or
 * convolution then reads the copy: Inception-v3 spent 3.4 ms of its 79 in
 * the Pads.
 *
 * The sums are the same: a padded tap adds an exact zero (x + 0 == x), which
 * the folded node skips.  Conditions: Pad in mode "constant" with a
 * constant value of zero (absent, or all bytes zero: -0.0 is left alone),
 * constant non-negative pads, none on the batch and channel axes; its output
 * read by that one node as X and not a graph output; the node's auto_pad
 * NOTSET; for AveragePool, ceil_mode 0 (a ceiling window past the padded
 * extent would count differently), either no padding of its own or
 * count_include_pad already 1, and each side's padding in all less than the
 * kernel (onnxruntime refuses a pool padded more, and a saved graph must
 * load there).
 */
#include "model/passes/passes.h"

#include <stdlib.h>
#include <string.h>

/* padding past this stays a Pad: the kernels' own checks then see it */
#define MAX_FOLDED_PAD ((int64_t) 1 << 30)

/* whether every byte of t is zero (t's data present) */
static bool
all_zero_bytes(const ox_tensor *t)
{
	size_t		n = (size_t) ox_tensor_numel(t) * ox_dtype_size(t->dtype);
	const unsigned char *p = t->data;

	if (t->released || (n > 0 && !p))
		return false;
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0)
			return false;
	return true;
}

/*
 * The Pad's padding per axis of a rank-r input into begin[r] and end[r];
 * false when it is not a constant zero padding this pass folds.
 */
static bool
constant_zero_pads(const ox_graph *g, const ox_node *pad, int r, int64_t *begin, int64_t *end)
{
	const ox_tensor *pads,
			   *value,
			   *axes;
	const int64_t *ints;
	int			n_axes = r;
	int64_t		axis_of[OX_MAX_RANK];

	if (strcmp(ox_attr_string(pad, "mode", "constant"), "constant") != 0 || r < 1 || r > OX_MAX_RANK)
		return false;
	for (int i = 0; i < r; i++)
	{
		axis_of[i] = i;
		begin[i] = end[i] = 0;
	}
	if (pad->opset < 11)
	{
		/* Pad-2: pads and value are attributes (Pad-1's "paddings" is left alone) */
		if (pad->opset < 2 || ox_attr_float(pad, "value", 0.0f) != 0.0f || ox_attr_ints(pad, "pads", &ints) != 2 * r)
			return false;
		for (int i = 0; i < r; i++)
		{
			begin[i] = ints[i];
			end[i] = ints[r + i];
		}
		return true;
	}
	if (pad->n_inputs < 2 || !(pads = ox_node_const_input(g, pad, 1)) || pads->dtype != OX_INT64 || pads->released)
		return false;
	if (pad->n_inputs > 2 && pad->inputs[2] >= 0 &&
		(!(value = ox_node_const_input(g, pad, 2)) || ox_tensor_numel(value) != 1 || !all_zero_bytes(value)))
		return false;
	if (pad->n_inputs > 3 && pad->inputs[3] >= 0)
	{
		/* Pad-18's axes: which axes the pads are for */
		if (!(axes = ox_node_const_input(g, pad, 3)) || axes->released || !axes->data || axes->rank != 1 ||
			axes->dims[0] < 1 || axes->dims[0] > r || (axes->dtype != OX_INT64 && axes->dtype != OX_INT32))
			return false;
		n_axes = (int) axes->dims[0];
		for (int i = 0; i < n_axes; i++)
		{
			int64_t		a = ox_tensor_get_int64(axes, i);

			if (a < -r || a >= r)
				return false;
			axis_of[i] = a < 0 ? a + r : a;
			for (int k = 0; k < i; k++)
				if (axis_of[k] == axis_of[i])
					return false;
		}
	}
	if (ox_tensor_numel(pads) != 2 * n_axes || (n_axes > 0 && !pads->data))
		return false;
	ints = pads->data;
	for (int i = 0; i < n_axes; i++)
	{
		begin[axis_of[i]] = ints[i];
		end[axis_of[i]] = ints[n_axes + i];
	}
	return true;
}

/*
 * node's attributes without "pads" (and without "count_include_pad" when
 * average), then pads[2 * nsp] and count_include_pad = 1 when average
 */
static ox_code
set_padding(ox_pass_ctx *pc, ox_graph *g, int k, const int64_t *pads, int nsp, bool average, ox_status *st)
{
	const ox_node *n = &g->nodes[k];
	ox_attr    *kept = ox_arena_alloc(&pc->model->arena, sizeof(ox_attr) * (size_t) (n->n_attrs + 1));
	ox_attr		extra[2];
	int64_t    *copy = ox_arena_alloc(&pc->model->arena, sizeof(int64_t) * (size_t) (2 * nsp));
	int			n_kept = 0;

	if (!kept || !copy)
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate attributes");
	for (int i = 0; i < n->n_attrs; i++)
		if (strcmp(n->attrs[i].name, "pads") != 0 &&
			!(average && strcmp(n->attrs[i].name, "count_include_pad") == 0))
			kept[n_kept++] = n->attrs[i];
	memcpy(copy, pads, sizeof(int64_t) * (size_t) (2 * nsp));
	memset(extra, 0, sizeof(extra));
	extra[0].name = "pads";
	extra[0].type = OX_ATTR_INTS;
	extra[0].ints = copy;
	extra[0].n = 2 * nsp;
	extra[1].name = "count_include_pad";
	extra[1].type = OX_ATTR_INT;
	extra[1].i = 1;
	return ox_pass_set_attrs(pc, g, k, kept, n_kept, extra, average ? 2 : 1, st);
}

/* fold Pad node p into its one consumer when the conditions above hold */
static ox_code
fold_pad(ox_pass_ctx *pc, ox_graph *g, int p, ox_status *st)
{
	const ox_node *pad = &g->nodes[p];
	const ox_node *n;
	const ox_type *xt;
	int64_t		begin[OX_MAX_RANK],
				end[OX_MAX_RANK],
				pads[2 * OX_MAX_RANK];
	const int64_t *own = NULL,
			   *kernel = NULL;
	int			k,
				r,
				nsp,
				n_own;
	bool		average;

	if (!ox_pass_is_op(pad, "Pad") || pad->n_inputs < 1 || pad->inputs[0] < 0 || pad->n_outputs != 1 ||
		pad->outputs[0] < 0 || g->values[pad->outputs[0]].is_output)
		return OX_OK;
	if ((k = ox_graph_sole_consumer(g, pad->outputs[0])) < 0)
		return OX_OK;
	n = &g->nodes[k];
	average = ox_pass_is_op(n, "AveragePool");
	if (!(average || ox_pass_is_op(n, "Conv")) || n->n_inputs < 1 || n->inputs[0] != pad->outputs[0])
		return OX_OK;
	for (int i = 1; i < n->n_inputs; i++)
		if (n->inputs[i] == pad->outputs[0])
			return OX_OK;
	if (strcmp(ox_attr_string(n, "auto_pad", "NOTSET"), "NOTSET") != 0)
		return OX_OK;
	/* the rank: Pad's input as declared, else the pads' length */
	xt = &g->values[pad->inputs[0]].type;
	if (xt->kind != OX_TYPE_TENSOR || xt->rank < 3 || xt->rank > OX_MAX_RANK)
		return OX_OK;
	r = xt->rank;
	nsp = r - 2;
	if (!constant_zero_pads(g, pad, r, begin, end) || begin[0] || end[0] || begin[1] || end[1])
		return OX_OK;
	n_own = ox_attr_ints(n, "pads", &own);
	if (n_own != 0 && n_own != 2 * nsp)
		return OX_OK;
	if (average)
	{
		/* count_include_pad appeared in AveragePool-7 */
		bool		own_pads = false;

		for (int i = 0; i < n_own; i++)
			own_pads |= own[i] != 0;
		if (n->opset < 7 || ox_attr_int(n, "ceil_mode", 0) != 0 ||
			(own_pads && ox_attr_int(n, "count_include_pad", 0) != 1) ||
			ox_attr_ints(n, "kernel_shape", &kernel) != nsp)
			return OX_OK;
	}
	for (int i = 0; i < nsp; i++)
	{
		int64_t		b = begin[2 + i],
					e = end[2 + i],
					ob = n_own ? own[i] : 0,
					oe = n_own ? own[nsp + i] : 0;

		if (b < 0 || e < 0 || b > MAX_FOLDED_PAD || e > MAX_FOLDED_PAD || ob < 0 || oe < 0 ||
			ob > MAX_FOLDED_PAD || oe > MAX_FOLDED_PAD)
			return OX_OK;
		pads[i] = b + ob;
		pads[nsp + i] = e + oe;
		if (kernel && (pads[i] >= kernel[i] || pads[nsp + i] >= kernel[i]))
			return OX_OK;
	}
	OX_TRY(set_padding(pc, g, k, pads, nsp, average, st));
	g->nodes[k].inputs[0] = g->nodes[p].inputs[0];
	ox_uses_node_changed(g, k);
	g->nodes[p].dead = true;
	pc->changes++;
	return OX_OK;
}

ox_code
ox_pass_fuse_pad(ox_pass_ctx *pc, ox_graph *g, ox_status *st)
{
	for (int p = 0; p < g->n_nodes; p++)
		OX_TRY(fold_pad(pc, g, p, st));
	return OX_OK;
}
