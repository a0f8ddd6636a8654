/*
 * layout_nchwc.c
 *	  Channel-blocked chains of float convolutions (level 3, "all"), as
 *	  onnxruntime's NCHWc transformer makes them.
 *
 * The onnx_pg.nchwc operators (kernels/cpu/conv_nchwc.c) keep activations
 * as [N, C/B, H, W, B] between convolutions, where a convolution needs no
 * im2col; B is 16 with AVX-512 and 8 with AVX2 (pc->nchwc_block).  This
 * pass, in one sweep over the topologically sorted nodes:
 *
 *	1. turns every 2-D float Conv or FusedConv with constant weights, group
 *	   1 and a multiple of 8 input channels, at least 16 (MobileNet's 24 are
 *	   padded to 32, which costs less than reordering around those layers),
 *	   into onnx_pg.nchwc Conv; an RGB stem (fewer than 8 channels) into one
 *	   that reads its NCHW input as it is (nchw_input: padding 3 channels
 *	   to 16 would multiply its work, and its output is the largest to
 *	   reorder); and
 *	   every depthwise one (group = C = M) into onnx_pg.nchwc
 *	   DepthwiseConv, and one in groups of at most a block that a block
 *	   holds whole into onnx_pg.nchwc GroupConv (small_groups), between a
 *	   ReorderInput of its input (and of FusedConv's Z) and a ReorderOutput
 *	   of its output; an activation the kernels cannot apply in registers
 *	   leaves the node alone, and so do other grouped convolutions;
 *	2. moves MaxPool, AveragePool and GlobalAveragePool of such an output
 *	   behind its ReorderOutput (onnx_pg.nchwc MaxPool, AveragePool,
 *	   GlobalAveragePool), a Mul of two such outputs (onnx_pg.nchwc Mul: a
 *	   channel gate) and a Concat of such outputs along the channels
 *	   (onnx_pg.nchwc Concat: Inception's modules);
 *	3. reads a blocked value directly wherever a ReorderInput would undo a
 *	   ReorderOutput, so that a chain of residual blocks is reordered only
 *	   where it meets the other operators (the network's input, its head,
 *	   the grouped convolutions left alone).
 *
 * Interleaved A/B in one process against the NCHW graph: ResNet-50 0.92-0.95x
 * the time at 1 thread (0.95x at 2, batch 8 0.94x), MobileNet-v2 0.91-0.95x
 * (0.90x at 2 threads), in blocks of 16 (AVX-512); in blocks of 8 (AVX2, an
 * AMD EPYC Zen 3) MobileNet-v2 0.90x at 1 thread and 0.93x at 2, ResNet-50
 * 1.0x and 0.93x.
 *
 * The rewritten graph is not an ONNX graph other runtimes run: the session
 * asks for it only when it will execute the graph itself (pc->nchwc_block,
 * never for onnx_optimize or quantization, which save their graphs), on the
 * CPU, on machines with AVX2 or AVX-512.
 */
#include "model/passes/passes.h"

#include <math.h>
#include <string.h>

/* a live node of op in domain */
static bool
is_op(const ox_node *n, const char *domain, const char *op)
{
	return !n->dead && strcmp(n->op_type, op) == 0 && strcmp(n->domain, domain) == 0;
}

/* the ReorderOutput producing v, or -1 */
static int
reorder_output_of(const ox_graph *g, int v)
{
	int			k;

	if (v < 0 || v >= g->n_values || g->values[v].init || g->values[v].is_input)
		return -1;
	k = g->values[v].producer;
	if (k < 0 || k >= g->n_nodes || !is_op(&g->nodes[k], OX_NCHWC_DOMAIN, "ReorderOutput") ||
		g->nodes[k].n_inputs != 1 || g->nodes[k].inputs[0] < 0)
		return -1;
	return k;
}

/* a new float value of unknown shape named from prefix */
static int
new_value(ox_pass_ctx *pc, ox_graph *g, const char *prefix, int rank, ox_status *st)
{
	int			id = ox_graph_add_value(g, ox_model_unique_name(pc->model, prefix), st);
	ox_dim	   *d;

	if (id < 0)
		return -1;
	g->values[id].type.kind = OX_TYPE_TENSOR;
	g->values[id].type.elem = OX_FLOAT;
	d = ox_arena_alloc(&pc->model->arena, sizeof(ox_dim) * rank);
	if (!d)
	{
		ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate a shape");
		return -1;
	}
	for (int i = 0; i < rank; i++)
	{
		d[i].value = -1;
		d[i].param = NULL;
	}
	g->values[id].type.rank = rank;
	g->values[id].type.dims = d;
	return id;
}

/* op(in) -> out in the nchwc domain; returns the node index or -1 */
static int
add_reorder(ox_pass_ctx *pc, ox_graph *g, const char *op, int in, int out, int64_t channels,
			ox_status *st)
{
	int			k = ox_pass_add_node(pc, g, op, OX_NCHWC_DOMAIN, ox_model_unique_name(pc->model, "nchwc_reorder"),
									 &in, 1, &out, 1, "layout_nchwc", st);

	if (k < 0 || (channels > 0 && ox_pass_add_int_attr(pc, g, k, "channels", channels, st) != OX_OK))
		return -1;
	/* the block the session's kernels use, not whatever the CPU says at run time */
	if (strcmp(op, "ReorderInput") == 0 &&
		ox_pass_add_int_attr(pc, g, k, "block", pc->nchwc_block, st) != OX_OK)
		return -1;
	g->values[out].producer = k;
	g->values[out].producer_slot = 0;
	return k;
}

/* node k is a ReorderInput of v (arg) */
static bool
reorders_input(const ox_graph *g, int k, const void *arg)
{
	return is_op(&g->nodes[k], OX_NCHWC_DOMAIN, "ReorderInput") && g->nodes[k].n_inputs >= 1 &&
		g->nodes[k].n_outputs >= 1 && g->nodes[k].inputs[0] == *(const int *) arg;
}

/*
 * v blocked: the input of the ReorderOutput that made v, an existing
 * ReorderInput of v, or a new one.
 */
static int
blocked_of(ox_pass_ctx *pc, ox_graph *g, int v, ox_status *st)
{
	int			k = reorder_output_of(g, v);
	int			b;

	if (k >= 0)
		return g->nodes[k].inputs[0];
	if ((k = ox_graph_next_reader(g, v, -1, reorders_input, &v)) >= 0)
		return g->nodes[k].outputs[0];
	if ((b = new_value(pc, g, "nchwc", 5, st)) < 0 || add_reorder(pc, g, "ReorderInput", v, b, 0, st) < 0)
		return -1;
	return b;
}

/* node k now writes a blocked value; its old output comes from a ReorderOutput of it */
static ox_code
retarget_output(ox_pass_ctx *pc, ox_graph *g, int k, int64_t channels, ox_status *st)
{
	int			out = g->nodes[k].outputs[0];
	int			b;

	if ((b = new_value(pc, g, "nchwc", 5, st)) < 0)
		return st->code;
	g->nodes[k].outputs[0] = b;
	g->values[b].producer = k;
	g->values[b].producer_slot = 0;
	if (add_reorder(pc, g, "ReorderOutput", b, out, channels, st) < 0)
		return st->code;
	pc->changes++;
	return OX_OK;
}

/* FusedConv's activations the blocked kernel applies in registers */
static bool
activation_supported(const ox_node *n)
{
	const char *act = ox_attr_string(n, "activation", NULL);

	return act == NULL || strcmp(act, "Relu") == 0 || strcmp(act, "LeakyRelu") == 0 ||
		strcmp(act, "Clip") == 0 || strcmp(act, "HardSigmoid") == 0 || strcmp(act, "Sigmoid") == 0;
}

/* all values of an ints attribute are 1 (or it is absent) */
static bool
all_ones(const ox_node *n, const char *name)
{
	const int64_t *v;
	int			k = ox_attr_ints(n, name, &v);

	for (int i = 0; i < k; i++)
		if (v[i] != 1)
			return false;
	return true;
}

/*
 * Whether dense Conv n (weights w), blocked, is to run directly (attribute
 * winograd = 0) rather than by Winograd's F(4x4, 3x3)
 * (conv_nchwc_winograd.c), which blocks of 16 use for 3x3 stride-1 layers:
 * on output planes under WINOGRAD_MIN_PLANE pixels.  A 7x7 plane is 4
 * tiles an image, which cover 64 pixels for 49, while the transformed
 * weights are 4x the direct ones (37.7 MB for ResNet-50's 512-channel
 * layers), read for those few tiles.  Planes of unknown size get Winograd
 * (images larger than a network's last stage are the common case).  Every
 * 3x3 layer runs blocked: ResNet-50's 14x14 and 7x7 ones used to stay NCHW
 * (conv_winograd2.c's F(2x2, 3x3) and conv_pixels.c), reordered around; on
 * an AMD EPYC Zen 5, blocked (Winograd at 14x14, direct at 7x7) ran the
 * model in 0.97x the time at batch 1 and 0.87-0.91x at batch 8, 1 and 2
 * threads (interleaved A/B); Winograd at 7x7 too was 1.1x at batch 1 and 2
 * threads.  In blocks of 8 there is no blocked Winograd: every 3x3 layer
 * runs directly (ResNet-50's four 3x3 stride-1 shapes 0.78-0.97x the time
 * of the NCHW kernels on an AMD EPYC Zen 3, reorders included).
 */
#define WINOGRAD_MIN_PLANE 100

/*
 * Nor with more than WINOGRAD_MAX_CHANNELS input channels, whatever the
 * plane.  The Winograd kernel reads the group's transformed weights (36 x C
 * x 64 floats per 64 output channels) once per block of tiles, and a block
 * holds as many tiles as their transformed inputs (36 x C floats each)
 * leave room for in L2: from about 540 channels on that is its least, 6
 * tiles, so every 6 tiles read all the weights again, 4x the direct ones,
 * from L3 or memory.  Interleaved with onnxruntime at 1 thread, a 3x3 layer
 * C -> C at 14x14 took 1.55x its time at C = 768 and 2.17x at 1024 by
 * Winograd, 0.97x and 0.95x directly; 1024 -> 512 and 2048 -> 512 at 28x28
 * (FCN-ResNet50's head) 1.30x and 2.03x, directly 1.06x and 1.08x; up to
 * 512 channels Winograd won or tied (0.52-0.75x at 28x28, 128 to 512
 * channels; 1.01x against 1.02x at 512 and 14x14).
 */
#define WINOGRAD_MAX_CHANNELS 512

/*
 * Nor where an image's tiles are few for the transformed weights (36 x C x
 * M floats, read at least once per image): past WINOGRAD_MAX_TILE_BYTES of
 * them per 4x4 tile of the output plane, when the plane is known.  Within
 * a whole network the transformed weights of all its layers no longer fit
 * in L3 where each is read for few tiles: Wide ResNet-50-2's 512 -> 512
 * layers at 14x14 (37.7 MB for 16 tiles, 2.4 MB a tile; six of them) took
 * 7.8 ms each by Winograd against onnxruntime's 4.9, direct ones 4.9
 * (alone, with its weights in L3, such a layer tied).  ResNet-50's 256 ->
 * 256 at 14x14 (0.6 MB a tile) and VGG's 512 -> 512 at 28x28 (0.8 MB)
 * stay Winograd.
 */
#define WINOGRAD_MAX_TILE_BYTES ((int64_t) 1 << 20)

static bool
runs_direct(const ox_pass_ctx *pc, const ox_graph *g, const ox_node *n, const ox_tensor *w)
{
	const ox_type *yt = &g->values[n->outputs[0]].type;
	bool		known = yt->kind == OX_TYPE_TENSOR && yt->rank == 4 && yt->dims &&
		yt->dims[2].value > 0 && yt->dims[3].value > 0;
	bool		small_plane = known && yt->dims[2].value * yt->dims[3].value < WINOGRAD_MIN_PLANE;
	bool		few_tiles = false;

	if (known && w->dims[0] <= (int64_t) 1 << 20 && w->dims[1] <= (int64_t) 1 << 20)
	{
		int64_t		tiles = ((yt->dims[2].value + 3) / 4) * ((yt->dims[3].value + 3) / 4);
		int64_t		bytes = 36 * 4 * w->dims[0] * w->dims[1];

		few_tiles = tiles <= INT64_MAX / WINOGRAD_MAX_TILE_BYTES && bytes > tiles * WINOGRAD_MAX_TILE_BYTES;
	}
	return pc->nchwc_block == 16 && w->dims[2] == 3 && w->dims[3] == 3 && all_ones(n, "strides") &&
		all_ones(n, "dilations") && (small_plane || few_tiles || w->dims[1] > WINOGRAD_MAX_CHANNELS);
}

/* a value that is (or can be) 4-D float: as declared, or coming out of a chain */
static bool
float_4d(const ox_graph *g, int v)
{
	const ox_type *t = &g->values[v].type;

	if (reorder_output_of(g, v) >= 0)
		return true;
	return t->kind == OX_TYPE_TENSOR && t->elem == OX_FLOAT && t->rank == 4;
}

/*
 * An activation that alone reads blocked convolution k's output becomes k's
 * (the kernels apply it in registers, nn_nchwc_act16), when k has none:
 * a HardSwish (MobileNetV3's layers otherwise left the blocked chain for
 * it, a reorder out and one back in around every HardSwish; LR-ASPP: 20 of
 * them, 0.92x the model's time without; only here: onnxruntime's FusedConv
 * has no HardSwish, and the blocked graph is never saved), and the ones the
 * activation fusion takes (fused_attrs.c) but Tanh, which the level-2 pass
 * could not give k: a Relu after a BatchNormalization that became a blocked
 * DepthwiseConv (DenseNet's), or after a residual Add's FusedConv.
 */
static ox_code
absorb_activation(ox_pass_ctx *pc, ox_graph *g, int k, ox_status *st)
{
	ox_node    *n = &g->nodes[k];
	int			v = n->outputs[0];
	int			a = v >= 0 && !g->values[v].is_output ? ox_graph_sole_consumer(g, v) : -1;
	ox_node    *act = a >= 0 ? &g->nodes[a] : NULL;
	const char *name = NULL;
	float		params[2];
	int			np = 0;

	if (!act || act->n_inputs < 1 || act->inputs[0] != v || act->n_outputs != 1 || act->outputs[0] < 0 ||
		ox_attr_string(n, "activation", NULL) != NULL)
		return OX_OK;
	if (ox_pass_is_op(act, "HardSwish") && act->n_inputs == 1)
		name = "HardSwish";
	else if (!ox_pass_activation_of(g, act, &name, params, &np) || strcmp(name, "Tanh") == 0)
		return OX_OK;
	OX_TRY(ox_pass_add_activation_attrs(pc->model, n, name, params, np, false, st));
	n = &g->nodes[k];
	n->outputs[0] = act->outputs[0];
	act->dead = true;
	pc->changes++;
	return OX_OK;
}

/* the first two nodes reading value v, into k[]; returns how many read it, 3 for any more */
static int
readers_of(const ox_graph *g, int v, int k[2])
{
	int			found = 0,
				last = -1;

	while (found < 3 && (last = ox_graph_next_reader(g, v, last, NULL, NULL)) >= 0)
	{
		if (found < 2)
			k[found] = last;
		found++;
	}
	return found;
}

/*
 * SiLU, x * Sigmoid(x), as PyTorch exports it: a Sigmoid of blocked
 * convolution k's output and a Mul of the two, which alone read that output,
 * become k's activation "SiLU" (nn_nchwc_act16), when k has none.
 * EfficientNet's every layer but the projections ends so, and each left the
 * blocked chain for its Sigmoid and Mul.  Engine-only, as HardSwish.
 */
static ox_code
absorb_silu(ox_pass_ctx *pc, ox_graph *g, int k, ox_status *st)
{
	int			v = g->nodes[k].outputs[0];
	int			r[2],
				sig,
				mul,
				s;

	if (v < 0 || g->values[v].is_output || ox_attr_string(&g->nodes[k], "activation", NULL) != NULL ||
		readers_of(g, v, r) != 2)
		return OX_OK;
	sig = ox_pass_is_op(&g->nodes[r[0]], "Sigmoid") ? r[0] : r[1];
	mul = sig == r[0] ? r[1] : r[0];
	if (!ox_pass_is_op(&g->nodes[sig], "Sigmoid") || !ox_pass_is_op(&g->nodes[mul], "Mul") ||
		g->nodes[sig].n_inputs != 1 || g->nodes[sig].n_outputs != 1 || (s = g->nodes[sig].outputs[0]) < 0 ||
		g->values[s].is_output || ox_graph_sole_consumer(g, s) != mul ||
		g->nodes[mul].n_inputs != 2 || g->nodes[mul].n_outputs != 1 || g->nodes[mul].outputs[0] < 0 ||
		!((g->nodes[mul].inputs[0] == v && g->nodes[mul].inputs[1] == s) ||
		  (g->nodes[mul].inputs[0] == s && g->nodes[mul].inputs[1] == v)))
		return OX_OK;
	OX_TRY(ox_pass_add_activation_attrs(pc->model, &g->nodes[k], "SiLU", NULL, 0, false, st));
	g->nodes[k].outputs[0] = g->nodes[mul].outputs[0];
	g->nodes[sig].dead = true;
	g->nodes[mul].dead = true;
	pc->changes++;
	return OX_OK;
}

/*
 * Grouped, each group whole blocks in and out (ResNeXt's 3x3 layers of 32
 * channels a group; those small_groups leaves, such as a group of one
 * block with M != C): the blocked Conv runs each group's output blocks
 * from that group's input blocks, as onnxruntime's NCHWc convolution does.
 * ResNeXt-50 kept them in NCHW with reorders around each, at 2.5x
 * onnxruntime's time for those layers.
 */
static bool
whole_block_groups(const ox_pass_ctx *pc, int64_t group, const ox_tensor *w)
{
	int64_t		blk = pc->nchwc_block;

	return group > 1 && w->dims[1] % blk == 0 && w->dims[0] % group == 0 && w->dims[0] / group % blk == 0;
}

/*
 * Grouped with groups of at most a block that a block holds whole, in and
 * out (cg = C / group = M / group channels, cg dividing the block):
 * onnx_pg.nchwc GroupConv, for the kernels it runs fast, 3 wide at
 * horizontal stride 1 or 2 and dilation 1 (ResNeXt's 3x3 layers of 4, 8
 * and 16 channels a group, RegNet's of 8).  Narrower groups stayed in
 * NCHW with a reorder on each side: ResNeXt-50's at 56x56 at 1.3x
 * onnxruntime's time, plus 15 reorders; RegNetY-400MF's 65.  A group of a
 * whole block went to the blocked Conv (whole_block_groups), whose tiles
 * of one output block hold six sums: ResNeXt's 14x14 stage at 1.2x
 * onnxruntime's time, 0.95x as a GroupConv; in blocks of 8 (AVX2) RegNet
 * 0.90x the time as a whole.
 */
static bool
small_groups(const ox_pass_ctx *pc, const ox_node *n, int64_t group, const ox_tensor *w)
{
	int64_t		blk = pc->nchwc_block,
				cg = w->dims[1];
	const int64_t *strides;
	int			ns = ox_attr_ints(n, "strides", &strides);

	return group > 1 && cg >= 2 && cg <= blk && blk % cg == 0 && w->dims[0] == group * cg &&
		w->dims[3] == 3 && all_ones(n, "dilations") && (ns < 2 || strides[1] == 1 || strides[1] == 2);
}

/* step 1 */
static ox_code
convert_conv(ox_pass_ctx *pc, ox_graph *g, int k, ox_status *st)
{
	ox_node    *n = &g->nodes[k];
	bool		fused = is_op(n, "com.microsoft", "FusedConv");
	const ox_tensor *w;
	int			x,
				z = -1;
	int64_t		m,
				group;
	bool		depthwise,
				stem,
				narrow;

	if (!(fused || is_op(n, "", "Conv")) || n->n_outputs != 1 || n->outputs[0] < 0 ||
		n->n_inputs < 2 || n->inputs[0] < 0)
		return OX_OK;
	w = ox_node_const_input(g, n, 1);
	if (!w || w->dtype != OX_FLOAT || w->rank != 4 || w->dims[0] < 1)
		return OX_OK;
	/*
	 * Dense with 8k input channels (at least 16), depthwise (group = C =
	 * M), or an RGB stem (fewer than 8 channels of a plain NCHW input),
	 * which reads its input as it is.
	 */
	group = ox_attr_int(n, "group", 1);
	depthwise = group > 1 && w->dims[1] == 1 && group == w->dims[0];
	stem = group == 1 && w->dims[1] < 8 && reorder_output_of(g, n->inputs[0]) < 0;
	narrow = small_groups(pc, n, group, w);
	if (!depthwise && !stem && !narrow && (group != 1 || w->dims[1] % 8 != 0 || w->dims[1] < 16) &&
		!whole_block_groups(pc, group, w))
		return OX_OK;
	if (fused && (!activation_supported(n) || n->n_inputs > 4))
		return OX_OK;
	if (!float_4d(g, n->inputs[0]))
		return OX_OK;
	if (fused && n->n_inputs > 3 && n->inputs[3] >= 0)
	{
		z = n->inputs[3];
		if (!float_4d(g, z))
			return OX_OK;
	}
	m = w->dims[0];
	x = g->nodes[k].inputs[0];
	if (!stem && (x = blocked_of(pc, g, x, st)) < 0)
		return st->code;
	if (z >= 0 && (z = blocked_of(pc, g, z, st)) < 0)
		return st->code;
	n = &g->nodes[k];
	n->inputs[0] = x;
	if (z >= 0)
		n->inputs[3] = z;
	ox_uses_node_changed(g, k);
	n->op_type = depthwise ? "DepthwiseConv" : narrow ? "GroupConv" : "Conv";
	n->domain = OX_NCHWC_DOMAIN;
	n->opset = 1;
	if (stem)
		OX_TRY(ox_pass_add_int_attr(pc, g, k, "nchw_input", 1, st));
	else if (!depthwise && !narrow && runs_direct(pc, g, n, w))
		OX_TRY(ox_pass_add_int_attr(pc, g, k, "winograd", 0, st));
	OX_TRY(absorb_activation(pc, g, k, st));
	OX_TRY(absorb_silu(pc, g, k, st));
	return retarget_output(pc, g, k, m, st);
}

/*
 * step 2, BatchNormalization of a chain's output (inference, constant
 * statistics): onnx_pg.nchwc DepthwiseConv 1x1 with W = scale / sqrt(var +
 * eps) and B = bias - mean * W, the affine map norm.c computes, on the
 * blocks; a Relu after it becomes its activation.  DenseNet normalizes
 * every Concat of its features before the next convolution (which the
 * Conv+BatchNormalization fold cannot reach), so each of its layers left
 * the blocks for a BatchNormalization and a Relu and came back.
 */
static ox_code
convert_batch_norm(ox_pass_ctx *pc, ox_graph *g, int k, ox_status *st)
{
	ox_node    *n = &g->nodes[k];
	const ox_tensor *p[4];
	int64_t		channels,
				wdims[4],
				one[2] = {1, 1};
	double		eps;
	float	   *w,
			   *b;
	int			r,
				wv,
				bv,
				x;
	ox_attr		attrs[2];
	int64_t    *ks;

	if (!is_op(n, "", "BatchNormalization") || n->n_inputs != 5 || n->n_outputs != 1 || n->outputs[0] < 0 ||
		ox_attr_int(n, "training_mode", 0) != 0 || (r = reorder_output_of(g, n->inputs[0])) < 0 ||
		(channels = ox_attr_int(&g->nodes[r], "channels", 0)) <= 0)
		return OX_OK;
	for (int i = 0; i < 4; i++)
		if (!(p[i] = ox_node_const_input(g, n, i + 1)) || p[i]->released || p[i]->dtype != OX_FLOAT ||
			p[i]->rank != 1 || p[i]->dims[0] != channels || !p[i]->data)
			return OX_OK;
	eps = (double) ox_attr_float(n, "epsilon", 1e-5f);
	wdims[0] = channels;
	wdims[1] = wdims[2] = wdims[3] = 1;
	if ((wv = ox_pass_new_init(pc, g, "nchwc_bn_scale", OX_FLOAT, 4, wdims, (void **) &w, st)) < 0 ||
		(bv = ox_pass_new_init(pc, g, "nchwc_bn_shift", OX_FLOAT, 1, wdims, (void **) &b, st)) < 0)
		return st->code;
	for (int64_t c = 0; c < channels; c++)
	{
		const float *scale = p[0]->data,
				   *bias = p[1]->data,
				   *mean = p[2]->data,
				   *var = p[3]->data;

		w[c] = (float) (scale[c] / sqrt((double) var[c] + eps));
		b[c] = bias[c] - mean[c] * w[c];
	}
	if (!(ks = ox_arena_alloc(&pc->model->arena, sizeof(one))))
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate attributes");
	memcpy(ks, one, sizeof(one));
	memset(attrs, 0, sizeof(attrs));
	attrs[0].name = "kernel_shape";
	attrs[0].type = OX_ATTR_INTS;
	attrs[0].ints = ks;
	attrs[0].n = 2;
	attrs[1].name = "group";
	attrs[1].type = OX_ATTR_INT;
	attrs[1].i = channels;
	OX_TRY(ox_pass_set_attrs(pc, g, k, NULL, 0, attrs, 2, st));
	x = g->nodes[r].inputs[0];
	n = &g->nodes[k];
	/* the inputs array held five */
	n->inputs[0] = x;
	n->inputs[1] = wv;
	n->inputs[2] = bv;
	n->n_inputs = 3;
	ox_uses_node_changed(g, k);
	n->op_type = "DepthwiseConv";
	n->domain = OX_NCHWC_DOMAIN;
	n->opset = 1;
	n->fused_from = "BatchNormalization";
	OX_TRY(absorb_activation(pc, g, k, st));
	return retarget_output(pc, g, k, channels, st);
}

/* step 2: op of a chain's output, with its attributes, behind the ReorderOutput */
static ox_code
sink_pool(ox_pass_ctx *pc, ox_graph *g, int k, const char *op, ox_status *st)
{
	ox_node    *n = &g->nodes[k];
	const int64_t *ks;
	int			r;

	if (!is_op(n, "", op) || n->n_inputs != 1 || n->n_outputs != 1 || n->outputs[0] < 0 ||
		(r = reorder_output_of(g, n->inputs[0])) < 0)
		return OX_OK;
	/* 2-D MaxPool with the default storage order (the Indices output is excluded above) */
	if (strcmp(op, "MaxPool") == 0 &&
		(ox_attr_ints(n, "kernel_shape", &ks) != 2 || ox_attr_int(n, "storage_order", 0) != 0))
		return OX_OK;
	/* 2-D AveragePool (the blocked kernel divides as pool.c does) */
	if (strcmp(op, "AveragePool") == 0 && ox_attr_ints(n, "kernel_shape", &ks) != 2)
		return OX_OK;
	n->inputs[0] = g->nodes[r].inputs[0];
	n->domain = OX_NCHWC_DOMAIN;
	ox_uses_node_changed(g, k);
	n->opset = 1;
	return retarget_output(pc, g, k, ox_attr_int(&g->nodes[r], "channels", 0), st);
}

/* whether values a and b are declared rank 4 with dimension i the same known size or the same name */
static bool
same_dim(const ox_graph *g, int a, int b, int i)
{
	const ox_type *ta = &g->values[a].type,
			   *tb = &g->values[b].type;
	const ox_dim *da,
			   *db;

	if (ta->kind != OX_TYPE_TENSOR || tb->kind != OX_TYPE_TENSOR || ta->rank != 4 || tb->rank != 4 ||
		!ta->dims || !tb->dims)
		return false;
	da = &ta->dims[i];
	db = &tb->dims[i];
	return (da->value >= 0 && da->value == db->value) ||
		(da->value < 0 && db->value < 0 && da->param && db->param && strcmp(da->param, db->param) == 0);
}

/* whether value v is declared [.., .., 1, 1] */
static bool
unit_plane(const ox_graph *g, int v)
{
	const ox_type *t = &g->values[v].type;

	return t->kind == OX_TYPE_TENSOR && t->rank == 4 && t->dims && t->dims[2].value == 1 && t->dims[3].value == 1;
}

/*
 * step 2, Mul: of two chains' outputs, as onnx_pg.nchwc Mul on their
 * blocks, when their declared shapes say that the blocked kernel's
 * broadcasts are the only ones: the same channels, and the same plane or
 * one of them 1 x 1 (a squeeze-and-excitation gate; any other broadcast of
 * the plane stays in NCHW).  Batches may broadcast as in ONNX: the kernel
 * does.  LR-ASPP's nine gates each left the blocks for their Mul.  A gate
 * of a chain's output that is not blocked itself (EfficientNet's: its 1 x 1
 * convolutions have too few channels) is reordered into blocks, a pixel
 * per image, rather than the chain out of them.
 */
static ox_code
sink_mul(ox_pass_ctx *pc, ox_graph *g, int k, ox_status *st)
{
	ox_node    *n = &g->nodes[k];
	int			ra,
				rb,
				a,
				b;
	int64_t		channels;

	if (!is_op(n, "", "Mul") || n->n_inputs != 2 || n->n_outputs != 1 || n->outputs[0] < 0 ||
		n->inputs[0] < 0 || n->inputs[1] < 0)
		return OX_OK;
	a = n->inputs[0];
	b = n->inputs[1];
	ra = reorder_output_of(g, a);
	rb = reorder_output_of(g, b);
	if (ra < 0 && rb < 0)
		return OX_OK;
	channels = ox_attr_int(&g->nodes[ra >= 0 ? ra : rb], "channels", 0);
	if (channels <= 0 || !same_dim(g, a, b, 1) || g->values[a].type.dims[1].value != channels ||
		!((same_dim(g, a, b, 2) && same_dim(g, a, b, 3)) || unit_plane(g, a) || unit_plane(g, b)))
		return OX_OK;
	/* one of them not blocked: only a float gate */
	if ((ra < 0 && !(unit_plane(g, a) && g->values[a].type.elem == OX_FLOAT)) ||
		(rb < 0 && !(unit_plane(g, b) && g->values[b].type.elem == OX_FLOAT)) ||
		(rb >= 0 && channels != ox_attr_int(&g->nodes[rb], "channels", 0)))
		return OX_OK;
	if ((a = blocked_of(pc, g, a, st)) < 0 || (b = blocked_of(pc, g, b, st)) < 0)
		return st->code;
	n = &g->nodes[k];
	n->inputs[0] = a;
	n->inputs[1] = b;
	ox_uses_node_changed(g, k);
	n->domain = OX_NCHWC_DOMAIN;
	n->opset = 1;
	return retarget_output(pc, g, k, channels, st);
}

/*
 * step 2, Concat: of chains' outputs along the channels, as onnx_pg.nchwc
 * Concat of their blocks, when every input but the last has a whole number
 * of blocks (the last one's zero channels past its C then end the output).
 * Inception's modules concatenate their branches, all convolutions or
 * pools, and the next module reads the result with convolutions and pools
 * again: blocked, nothing is reordered between modules.
 */
static ox_code
sink_concat(ox_pass_ctx *pc, ox_graph *g, int k, ox_status *st)
{
	ox_node    *n = &g->nodes[k];
	int64_t		axis,
				channels = 0;
	int			r;

	if (!is_op(n, "", "Concat") || n->n_inputs < 1 || n->n_outputs != 1 || n->outputs[0] < 0)
		return OX_OK;
	/* the inputs are 2-D convolutions' outputs: rank 4 */
	axis = ox_attr_int(n, "axis", 1);
	if (axis != 1 && axis != -3)
		return OX_OK;
	for (int i = 0; i < n->n_inputs; i++)
	{
		int64_t		c;

		/* a model's own ReorderOutput may say anything: no sum past int64 */
		if ((r = reorder_output_of(g, n->inputs[i])) < 0 || (c = ox_attr_int(&g->nodes[r], "channels", 0)) <= 0 ||
			(i < n->n_inputs - 1 && c % pc->nchwc_block != 0) || c > INT64_MAX - channels)
			return OX_OK;
		channels += c;
	}
	for (int i = 0; i < n->n_inputs; i++)
		n->inputs[i] = g->nodes[reorder_output_of(g, n->inputs[i])].inputs[0];
	ox_uses_node_changed(g, k);
	n->domain = OX_NCHWC_DOMAIN;
	n->opset = 1;
	/* the blocked kernel's axis is the channel blocks' (axis is Concat's one attribute) */
	if (axis != 1)
	{
		ox_attr		a;

		memset(&a, 0, sizeof(a));
		a.name = "axis";
		a.type = OX_ATTR_INT;
		a.i = 1;
		OX_TRY(ox_pass_set_attrs(pc, g, k, NULL, 0, &a, 1, st));
	}
	return retarget_output(pc, g, k, channels, st);
}

/* step 3: ReorderInput(ReorderOutput(b)) is b */
static void
cancel_pairs(ox_pass_ctx *pc, ox_graph *g)
{
	for (int k = 0; k < g->n_nodes; k++)
	{
		ox_node    *n = &g->nodes[k];
		int			inner;

		if (!is_op(n, OX_NCHWC_DOMAIN, "ReorderInput") || n->n_inputs != 1 || n->n_outputs != 1 ||
			n->outputs[0] < 0 || g->values[n->outputs[0]].is_output ||
			(inner = reorder_output_of(g, n->inputs[0])) < 0)
			continue;
		ox_graph_replace_uses(g, n->outputs[0], g->nodes[inner].inputs[0]);
		n->dead = true;
		pc->changes++;
	}
}

ox_code
ox_pass_layout_nchwc(ox_pass_ctx *pc, ox_graph *g, ox_status *st)
{
	int			n_nodes = g->n_nodes;

	if (!pc->cpu_layout || pc->nchwc_block == 0)
		return OX_OK;
	/* nodes appended by the steps come after n_nodes and need no visit */
	for (int k = 0; k < n_nodes; k++)
	{
		if (g->nodes[k].dead)
			continue;
		OX_TRY(convert_conv(pc, g, k, st));
		OX_TRY(convert_batch_norm(pc, g, k, st));
		OX_TRY(sink_pool(pc, g, k, "MaxPool", st));
		OX_TRY(sink_pool(pc, g, k, "AveragePool", st));
		OX_TRY(sink_pool(pc, g, k, "GlobalAveragePool", st));
		OX_TRY(sink_mul(pc, g, k, st));
		OX_TRY(sink_concat(pc, g, k, st));
	}
	cancel_pairs(pc, g);
	return OX_OK;
}
