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
 *	   DepthwiseConv, between a ReorderInput of its input (and of
 *	   FusedConv's Z) and a ReorderOutput of its output; an activation the
 *	   kernels cannot apply in registers leaves the node alone, and so do
 *	   other grouped convolutions;
 *	2. moves MaxPool and GlobalAveragePool of such an output behind its
 *	   ReorderOutput (onnx_pg.nchwc MaxPool, GlobalAveragePool), and a Mul
 *	   of two such outputs (onnx_pg.nchwc Mul: a channel gate);
 *	3. reads a blocked value directly wherever a ReorderInput would undo a
 *	   ReorderOutput, so that a chain of residual blocks is reordered only
 *	   where it meets the other operators (the network's input, its head,
 *	   grouped convolutions).
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
	for (int j = 0; j < g->n_nodes; j++)
		if (is_op(&g->nodes[j], OX_NCHWC_DOMAIN, "ReorderInput") && g->nodes[j].inputs[0] == v)
			return g->nodes[j].outputs[0];
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
		strcmp(act, "Clip") == 0 || strcmp(act, "HardSigmoid") == 0;
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

static bool
runs_direct(const ox_pass_ctx *pc, const ox_graph *g, const ox_node *n, const ox_tensor *w)
{
	const ox_type *yt = &g->values[n->outputs[0]].type;
	bool		small_plane = yt->kind == OX_TYPE_TENSOR && yt->rank == 4 && yt->dims &&
		yt->dims[2].value > 0 && yt->dims[3].value > 0 &&
		yt->dims[2].value * yt->dims[3].value < WINOGRAD_MIN_PLANE;

	return pc->nchwc_block == 16 && w->dims[2] == 3 && w->dims[3] == 3 && all_ones(n, "strides") &&
		all_ones(n, "dilations") && (small_plane || w->dims[1] > WINOGRAD_MAX_CHANNELS);
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
 * A HardSwish that alone reads blocked convolution k's output becomes k's
 * activation (the kernels apply it in registers, nn_act_avx512), when k
 * has none: MobileNetV3's layers otherwise left the blocked chain for it,
 * a reorder out and one back in around every HardSwish (LR-ASPP: 20 of
 * them; 0.92x the model's time without).  Only here: onnxruntime's
 * FusedConv has no HardSwish, and the blocked graph is never saved.
 */
static ox_code
absorb_hard_swish(ox_pass_ctx *pc, ox_graph *g, int k, ox_status *st)
{
	ox_node    *n = &g->nodes[k];
	int			v = n->outputs[0];
	int			a = v >= 0 && !g->values[v].is_output ? ox_graph_sole_consumer(g, v) : -1;
	ox_node    *hs = a >= 0 ? &g->nodes[a] : NULL;

	if (!hs || !ox_pass_is_op(hs, "HardSwish") || hs->n_inputs != 1 || hs->inputs[0] != v ||
		hs->n_outputs != 1 || hs->outputs[0] < 0 || ox_attr_string(n, "activation", NULL) != NULL)
		return OX_OK;
	OX_TRY(ox_pass_add_activation_attrs(pc->model, n, "HardSwish", NULL, 0, false, st));
	n = &g->nodes[k];
	n->outputs[0] = hs->outputs[0];
	hs->dead = true;
	pc->changes++;
	return OX_OK;
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
				stem;

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
	if (!depthwise && !stem && (group != 1 || w->dims[1] % 8 != 0 || w->dims[1] < 16))
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
	n->op_type = depthwise ? "DepthwiseConv" : "Conv";
	n->domain = OX_NCHWC_DOMAIN;
	n->opset = 1;
	if (stem)
		OX_TRY(ox_pass_add_int_attr(pc, g, k, "nchw_input", 1, st));
	else if (!depthwise && runs_direct(pc, g, n, w))
		OX_TRY(ox_pass_add_int_attr(pc, g, k, "winograd", 0, st));
	OX_TRY(absorb_hard_swish(pc, g, k, st));
	return retarget_output(pc, g, k, m, st);
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
	n->inputs[0] = g->nodes[r].inputs[0];
	n->domain = OX_NCHWC_DOMAIN;
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
 * does.  LR-ASPP's nine gates each left the blocks for their Mul.
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
		(ra = reorder_output_of(g, n->inputs[0])) < 0 || (rb = reorder_output_of(g, n->inputs[1])) < 0)
		return OX_OK;
	a = n->inputs[0];
	b = n->inputs[1];
	channels = ox_attr_int(&g->nodes[ra], "channels", 0);
	if (channels <= 0 || channels != ox_attr_int(&g->nodes[rb], "channels", 0) ||
		!same_dim(g, a, b, 1) || g->values[a].type.dims[1].value != channels ||
		!((same_dim(g, a, b, 2) && same_dim(g, a, b, 3)) || unit_plane(g, a) || unit_plane(g, b)))
		return OX_OK;
	n->inputs[0] = g->nodes[ra].inputs[0];
	n->inputs[1] = g->nodes[rb].inputs[0];
	n->domain = OX_NCHWC_DOMAIN;
	n->opset = 1;
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
		OX_TRY(sink_pool(pc, g, k, "MaxPool", st));
		OX_TRY(sink_pool(pc, g, k, "GlobalAveragePool", st));
		OX_TRY(sink_mul(pc, g, k, st));
	}
	cancel_pairs(pc, g);
	return OX_OK;
}
