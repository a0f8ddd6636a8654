/*
 * conv_nchwc.c
 *	  Float32 CNN layers in a channel-blocked layout (NCHWc): the
 *	  onnx_pg.nchwc operators that passes/layout_nchwc.c puts in place of
 *	  chains of 2-D convolutions, as onnxruntime's NCHWc transformer does.
 *	  This file checks what every operator shares and hands each call to
 *	  the kernels of its block size: 16 channels with AVX-512
 *	  (conv_nchwc_avx512.c), 8 with AVX2 (conv_nchwc_avx2.c), both made from
 *	  the templates conv_nchwc_kernels.h, conv_nchwc_dw_kernels.h and
 *	  conv_nchwc_group_kernels.h.
 *
 * A blocked tensor holds [N, C, H, W] as [N, ceil(C / B), H, W, B], B the
 * block: the B channels of a block are contiguous at every pixel, and the
 * channels past C are zero.
 *
 * Operators (domain onnx_pg.nchwc, engine-private: the pass adds them only
 * to sessions that run, never to graphs that are saved):
 *	 ReorderInput		X [N, C, H, W] -> [N, ceil(C/B), H, W, B]; attribute
 *						block (8 or 16; default this CPU's: 16 with AVX-512)
 *	 ReorderOutput		channels = C: the inverse
 *	 Conv				FusedConv's inputs and attributes (groups of whole
 *						blocks in and out, constant
 *						W in the original [M, C, kh, kw] layout, packed at
 *						prepare); X, Z and Y blocked, or with nchw_input = 1
 *						X plain NCHW (an RGB stem, which then needs no
 *						reorder of its large output); winograd = 0 runs
 *						a 3x3 stride-1 layer directly in blocks of 16
 *						(default 1: by Winograd's F(4x4, 3x3))
 *	 DepthwiseConv		the same with group = C = M (conv_nchwc_dw_kernels.h)
 *	 GroupConv			the same with groups of cg = C / group channels in and
 *						out (M = C), cg from 2 to B dividing B
 *						(conv_nchwc_group_kernels.h)
 *	 MaxPool			MaxPool's attributes, blocked in and out
 *	 AveragePool		AveragePool's, blocked in and out
 *	 GlobalAveragePool	blocked in and out ([N, CB, 1, 1, B])
 *	 Mul				two blocked inputs of the same shape, or one of them
 *						[N, CB, 1, 1, B] scaling the other's every pixel
 *	 Concat				axis = 1: blocked inputs' channel blocks, in order
 *
 * Every kernel checks its input against the blocked shape it needs: a model
 * may contain these operators itself.  Blocks of 16 need AVX-512, of 8 AVX2
 * and FMA (the pass uses the CPU's own block); without them they fail with
 * a clear error.
 */
#include "kernels/cpu/conv_nchwc.h"
#include "util/cpu_vendor.h"

#include <stdio.h>
#include <string.h>

/*
 * What every blocked convolution's prepare reads: the constant float W
 * [.., .., kh, kw] of input 1, the window, and an activation that runs in
 * registers.
 */
ox_code
nn_nchwc_prepare_begin(ox_prepare_ctx *pc, const char *op, const ox_tensor **w, nn_window *win,
					   nn_activation *act)
{
	const ox_node *node = pc->node;
	const ox_value_def *wd = (pc->graph && node->n_inputs > 1 && node->inputs[1] >= 0 &&
							  node->inputs[1] < pc->graph->n_values)
		? ox_node_input_def(pc->graph, node, 1) : NULL;

	*w = wd ? wd->init : NULL;
	if (!*w || (*w)->dtype != OX_FLOAT || (*w)->rank != 4 || ox_tensor_numel(*w) <= 0)
		return ox_fail(pc->st, OX_INVALID_MODEL, "onnx_pg.nchwc %s: W must be a constant float tensor of rank 4", op);
	OX_TRY(nn_window_parse(node, win, false, pc->st));
	OX_TRY(nn_activation_parse(node, act, pc->st));
	if (!nn_act_in_nchwc_registers(act))
		return ox_fail(pc->st, OX_INVALID_MODEL, "onnx_pg.nchwc %s: activation not supported", op);
	return OX_OK;
}

/* dst[0, len): the first m floats of b (none without b), then zeros */
static void
pad_bias(float *dst, const ox_tensor *b, int64_t m, int64_t len)
{
	int64_t		n = b ? (m < len ? m : len) : 0;

	if (n > 0)
		memcpy(dst, b->data, sizeof(float) * (size_t) n);
	memset(dst + n, 0, sizeof(float) * (size_t) (len - n));
}

/* pb->padded: B (input 2, a constant float [m]) or zeros without B, padded to len floats */
ox_code
nn_nchwc_prepare_bias(ox_prepare_ctx *pc, const char *op, int64_t m, int64_t len, nn_nchwc_bias *pb)
{
	const ox_node *node = pc->node;
	const ox_tensor *b = NULL;

	pb->len = len;
	pb->padded = NULL;
	pb->src = NULL;
	if (node->n_inputs > 2 && node->inputs[2] >= 0)
	{
		const ox_value_def *bd = pc->graph && node->inputs[2] < pc->graph->n_values
			? ox_node_input_def(pc->graph, node, 2) : NULL;

		b = bd ? bd->init : NULL;
		/* not a constant, or not what the run will accept: each run checks and pads it */
		if (!b || b->dtype != OX_FLOAT || b->rank != 1 || b->dims[0] != m || m > len || !b->data)
			return OX_OK;
	}
	if (!(pb->padded = ox_aligned_alloc(sizeof(float) * (size_t) len)))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "onnx_pg.nchwc %s: could not allocate the bias", op);
	pad_bias(pb->padded, b, m, len);
	pb->src = b ? b->data : NULL;
	return OX_OK;
}

void
nn_nchwc_bias_free(nn_nchwc_bias *pb)
{
	ox_aligned_free(pb->padded);
	pb->padded = NULL;
}

/* a run's bias from nn_nchwc_conv_begin, finished with */
void
nn_nchwc_bias_done(const nn_nchwc_bias *pb, float *bias)
{
	if (bias != pb->padded)
		free(bias);
}

/* ---- reorders ----------------------------------------------------------- */

static ox_code
reorder_input_run(ox_kernel_ctx *ctx)
{
	int64_t		blk = ox_attr_int(ctx->node, "block", nn_nchwc_block());

	if (blk != 8 && blk != 16)
	{
		if (blk == 0)
			return ox_fail(ctx->st, OX_UNSUPPORTED, "onnx_pg.nchwc ReorderInput needs AVX2 or AVX-512");
		return ox_fail(ctx->st, OX_INVALID_MODEL, "onnx_pg.nchwc ReorderInput: block must be 8 or 16, not %lld",
					   (long long) blk);
	}
	if (!nn_nchwc_have((int) blk, "ReorderInput", ctx->st))
		return ctx->st->code;
	return blk == 16 ? nn_nchwc16_reorder_input_run(ctx) : nn_nchwc8_reorder_input_run(ctx);
}

static ox_code
reorder_output_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = ox_in_tensor(ctx, 0);

	OX_TRY(nn_nchwc_check_blocked("ReorderOutput", "X", x, 0, ctx->st));
	return x->dims[4] == 16 ? nn_nchwc16_reorder_output_run(ctx) : nn_nchwc8_reorder_output_run(ctx);
}

/* ---- convolution -------------------------------------------------------- */

static void
nchwc_conv_free(void *state)
{
	nn_nchwc_conv_state *s = state;

	if (s)
	{
		ox_aligned_free(s->w);
		nn_nchwc_winograd_free(s->wino);
		nn_nchwc_bias_free(&s->bias);
	}
	free(s);
}

static ox_code
nchwc_conv_prepare(ox_prepare_ctx *pc)
{
	nn_nchwc_conv_state *s;
	const ox_tensor *w;
	int			blk = nn_nchwc_block();
	ox_code		rc;

	if (!nn_nchwc_have(blk, "Conv", pc->st))
		return pc->st->code;
	if (ox_attr_int(pc->node, "group", 1) < 1)
		return ox_fail(pc->st, OX_INVALID_MODEL, "onnx_pg.nchwc Conv: group must be at least 1");
	if (!(s = calloc(1, sizeof(*s))))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "onnx_pg.nchwc Conv: could not allocate state");
	if (nn_nchwc_prepare_begin(pc, "Conv", &w, &s->win, &s->act) != OX_OK)
	{
		free(s);
		return pc->st->code;
	}
	s->nchw_input = ox_attr_int(pc->node, "nchw_input", 0) != 0;
	s->winograd = ox_attr_int(pc->node, "winograd", 1) != 0;
	s->groups = ox_attr_int(pc->node, "group", 1);
	rc = blk == 16 ? nn_nchwc16_conv_prepare(pc, s, w) : nn_nchwc8_conv_prepare(pc, s, w);
	if (rc != OX_OK)
	{
		nchwc_conv_free(s);
		return rc;
	}
	pc->state = s;
	return OX_OK;
}

static ox_code
nchwc_conv_run(ox_kernel_ctx *ctx)
{
	const nn_nchwc_conv_state *s = ctx->state;

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "onnx_pg.nchwc Conv: not prepared");
	if (!nn_nchwc_have(s->blk, "Conv", ctx->st))
		return ctx->st->code;
	return s->blk == 16 ? nn_nchwc16_conv_run(ctx) : nn_nchwc8_conv_run(ctx);
}

/*
 * What every blocked convolution checks and allocates before it runs (the
 * op's inputs X, W, B, Z): X blocked in cb blocks (nchw_input: plain
 * [N, c, H, W]), W the constant its
 * weights were packed from (w_data), B [m]; *cs the geometry of the NCHW
 * shape the blocks stand for; Y [N, ceil(m/blk), OH, OW, blk] allocated and
 * Z checked against it (blk channels a block, which the caller has
 * checked this CPU runs); *z_data Z's data or NULL, and Y in Z's own
 * buffer where Z is read by this node alone and released after it (a
 * residual block's shortcut, added in place as onnxruntime's fused Sum
 * is): every kernel here reads a pixel's Z before it stores that pixel's
 * Y, and stores it once; *bias B padded with zeros to pb->len floats (pb's
 * own when prepared, else made here; the caller hands it to
 * nn_nchwc_bias_done), or NULL when Y is empty and there is nothing to do.
 *
 * In place, the output needs no fresh lines of its own: a separate Y had
 * each of its cache lines read for ownership before the store, beside the
 * stream of Z (ResNet-50's 64 -> 256 layers at 56x56 with their shortcut
 * took 1.3x onnxruntime's time within the network, 1.04x alone).
 */
ox_code
nn_nchwc_conv_begin(ox_kernel_ctx *ctx, const char *op, int blk, const nn_window *win, int64_t group,
					int64_t c, int64_t cb, int64_t m, const void *w_data, bool nchw_input,
					const nn_nchwc_bias *pb, nn_conv_shape *cs, ox_tensor **y, const float **z_data,
					float **bias)
{
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *w = ox_in_tensor(ctx, 1);
	const ox_tensor *b = ox_in_tensor(ctx, 2);
	const ox_tensor *z = ox_in_tensor(ctx, 3);
	ox_tensor	fx;
	int64_t		dims[5];

	*y = NULL;
	*z_data = NULL;
	*bias = NULL;
	/* released: the session freed it, this node's packed copy being the only one needed */
	if (!w || (w->data != w_data && !w->released))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "onnx_pg.nchwc %s: W must be the constant it was prepared with", op);
	if (nchw_input)
	{
		/*
		 * A plain input is checked as the Conv this node replaced would
		 * check it, with the same messages (a model's own mistakes read
		 * the same at every optimization level).
		 */
		if (!x || x->dtype != OX_FLOAT || x->rank != 4)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: X must be a float tensor [N, C, H, W]", op);
		OX_TRY(nn_conv_check(win, group, op, x, w, b, cs, ctx->st));
	}
	else
	{
		char		full[64];

		/* the checks' messages name the blocked op; formatted here, where they need it */
		snprintf(full, sizeof(full), "onnx_pg.nchwc %s", op);
		OX_TRY(nn_nchwc_check_blocked(op, "X", x, blk, ctx->st));
		if (x->dims[1] != cb)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "onnx_pg.nchwc %s: X has %lld channel blocks, W needs %lld",
						   op, (long long) x->dims[1], (long long) cb);
		if (b && (b->dtype != OX_FLOAT || b->rank != 1 || b->dims[0] != m))
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "onnx_pg.nchwc %s: B must be a float tensor [%lld]",
						   op, (long long) m);
		/* the window, from the NCHW shape the blocks stand for */
		memset(&fx, 0, sizeof(fx));
		fx.dtype = OX_FLOAT;
		fx.rank = 4;
		fx.dims[0] = x->dims[0];
		fx.dims[1] = c;
		fx.dims[2] = x->dims[2];
		fx.dims[3] = x->dims[3];
		OX_TRY(nn_conv_check(win, group, full, &fx, w, NULL, cs, ctx->st));
	}
	dims[0] = x->dims[0];
	dims[1] = (m + blk - 1) / blk;
	dims[2] = cs->g.out[AH];
	dims[3] = cs->g.out[AW];
	dims[4] = blk;
	if (ox_shape_numel(5, dims) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "onnx_pg.nchwc %s: the output is too large", op);
	if (z && (z->dtype != OX_FLOAT || z->rank != 5 || memcmp(z->dims, dims, sizeof(int64_t) * 5) != 0))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "onnx_pg.nchwc %s: Z must have the blocked shape of Y", op);
	/* Z's data before its buffer may become Y's (the take hands Z Y's old one) */
	if (z)
	{
		*z_data = z->data;
		(void) ox_take_input_buffer(ctx, z, 0, 5, dims);
	}
	if (!(*y = ox_out_tensor(ctx, 0, OX_FLOAT, 5, dims)))
		return ctx->st->code != OX_OK ? ctx->st->code : OX_OUT_OF_MEMORY;
	if (ox_tensor_numel(*y) == 0)
		return OX_OK;
	/* the one padded at prepare, when B is still the constant it came from */
	if (pb->padded && (b ? b->data : NULL) == pb->src)
	{
		*bias = pb->padded;
		return OX_OK;
	}
	if (!(*bias = ox_workspace_alloc(sizeof(float) * (size_t) pb->len, ctx->st, op)))
		return ctx->st->code;
	pad_bias(*bias, b, m, pb->len);
	return OX_OK;
}

/* ---- depthwise and narrow-group convolution ------------------------------ */

static void
nchwc_depthwise_free(void *state)
{
	nn_nchwc_dw_state *s = state;

	if (s)
	{
		ox_aligned_free(s->w);
		nn_nchwc_bias_free(&s->bias);
	}
	free(s);
}

/*
 * DepthwiseConv (one channel a group) and GroupConv (groups of cg = C /
 * group channels in and out, cg from 2 to the block and dividing it, so
 * that every block holds whole groups): the state they share, W
 * [C, cg, kh, kw] packed by their kernels
 */
static ox_code
nchwc_channel_groups_prepare(ox_prepare_ctx *pc, bool depthwise)
{
	const char *op = depthwise ? "DepthwiseConv" : "GroupConv";
	nn_nchwc_dw_state *s;
	const ox_tensor *w;
	int			blk = nn_nchwc_block();
	int64_t		group = ox_attr_int(pc->node, "group", 1),
				cg;
	ox_code		rc;

	if (!nn_nchwc_have(blk, op, pc->st))
		return pc->st->code;
	if (!(s = calloc(1, sizeof(*s))))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "onnx_pg.nchwc %s: could not allocate state", op);
	if (nn_nchwc_prepare_begin(pc, op, &w, &s->win, &s->act) != OX_OK)
	{
		free(s);
		return pc->st->code;
	}
	cg = w->dims[1];
	if (depthwise ? cg != 1 || group != w->dims[0]
		: cg < 2 || cg > blk || blk % cg != 0 || group * cg != w->dims[0])
	{
		free(s);
		if (depthwise)
			return ox_fail(pc->st, OX_INVALID_MODEL,
						   "onnx_pg.nchwc DepthwiseConv: W must be [C, 1, kh, kw] with group C");
		return ox_fail(pc->st, OX_INVALID_MODEL,
					   "onnx_pg.nchwc GroupConv: W must be [C, C / group, kh, kw] with C / group from 2 to %d, dividing it",
					   blk);
	}
	if (depthwise)
		rc = blk == 16 ? nn_nchwc16_depthwise_prepare(pc, s, w) : nn_nchwc8_depthwise_prepare(pc, s, w);
	else
		rc = blk == 16 ? nn_nchwc16_group_prepare(pc, s, w) : nn_nchwc8_group_prepare(pc, s, w);
	if (rc != OX_OK)
	{
		nchwc_depthwise_free(s);
		return rc;
	}
	pc->state = s;
	return OX_OK;
}

static ox_code
nchwc_depthwise_prepare(ox_prepare_ctx *pc)
{
	return nchwc_channel_groups_prepare(pc, true);
}

static ox_code
nchwc_group_prepare(ox_prepare_ctx *pc)
{
	return nchwc_channel_groups_prepare(pc, false);
}

/* either, by the state's groups */
static ox_code
nchwc_channel_groups_run(ox_kernel_ctx *ctx)
{
	const nn_nchwc_dw_state *s = ctx->state;

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "onnx_pg.nchwc %s: not prepared", ctx->node->op_type);
	if (!nn_nchwc_have(s->blk, ctx->node->op_type, ctx->st))
		return ctx->st->code;
	if (s->cg > 1)
		return s->blk == 16 ? nn_nchwc16_group_run(ctx) : nn_nchwc8_group_run(ctx);
	return s->blk == 16 ? nn_nchwc16_depthwise_run(ctx) : nn_nchwc8_depthwise_run(ctx);
}

/* ---- pooling ------------------------------------------------------------ */

typedef struct nchwc_pool_state
{
	nn_window	win;
	bool		average;
	bool		count_include_pad;
} nchwc_pool_state;

/* MaxPool's or AveragePool's attributes, as pool.c reads them */
static ox_code
nchwc_pool_prepare(ox_prepare_ctx *pc, bool average)
{
	const char *op = average ? "AveragePool" : "MaxPool";
	nchwc_pool_state *s;
	int64_t		cip = ox_attr_int(pc->node, "count_include_pad", 0);

	if (!average && pc->node->n_outputs > 1)
		return ox_fail(pc->st, OX_INVALID_MODEL, "onnx_pg.nchwc MaxPool: the Indices output is not supported");
	if (average && cip != 0 && cip != 1)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "onnx_pg.nchwc AveragePool: count_include_pad is %lld, expected 0 or 1",
					   (long long) cip);
	if (!(s = calloc(1, sizeof(*s))))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "onnx_pg.nchwc %s: could not allocate state", op);
	if (nn_window_parse(pc->node, &s->win, true, pc->st) != OX_OK)
	{
		free(s);
		return pc->st->code;
	}
	s->average = average;
	s->count_include_pad = cip == 1;
	pc->state = s;
	return OX_OK;
}

static ox_code
nchwc_max_pool_prepare(ox_prepare_ctx *pc)
{
	return nchwc_pool_prepare(pc, false);
}

static ox_code
nchwc_average_pool_prepare(ox_prepare_ctx *pc)
{
	return nchwc_pool_prepare(pc, true);
}

static void
nchwc_pool_free(void *state)
{
	free(state);
}

static ox_code
nchwc_pool_run(ox_kernel_ctx *ctx)
{
	const nchwc_pool_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "onnx_pg.nchwc pooling: not prepared");
	OX_TRY(nn_nchwc_check_blocked(s->average ? "AveragePool" : "MaxPool", "X", x, 0, ctx->st));
	return x->dims[4] == 16 ? nn_nchwc16_pool_run(ctx, &s->win, s->average, s->count_include_pad)
		: nn_nchwc8_pool_run(ctx, &s->win, s->average, s->count_include_pad);
}

static ox_code
nchwc_global_average_pool_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = ox_in_tensor(ctx, 0);

	OX_TRY(nn_nchwc_check_blocked("GlobalAveragePool", "X", x, 0, ctx->st));
	return x->dims[4] == 16 ? nn_nchwc16_global_average_pool_run(ctx) : nn_nchwc8_global_average_pool_run(ctx);
}

/*
 * Mul of two blocked tensors of the same block and channel blocks, with
 * ONNX's broadcast where the blocks allow it: the same plane, element by
 * element, or one of them [.., CB, 1, 1, B] (a squeeze-and-excitation
 * gate: MobileNetV3's, EfficientNet's) scaling every pixel of the other's
 * channels; batches equal or one of them 1.  The pass (layout_nchwc.c)
 * puts it where such a Mul read two reordered chains, which otherwise both
 * left the blocks for it.  A channel past C is 0 in both, so it stays 0.
 */
typedef struct scale_job
{
	const float *x;				/* the input with the larger plane */
	const float *s;
	float	   *y;
	int64_t		cb;				/* channel blocks */
	int64_t		plane;			/* H x W of X and Y */
	int64_t		s_plane;		/* S's: plane or 1 */
	bool		x_one,			/* batch of 1, broadcast */
				s_one;
	int			blk;
} scale_job;

/*
 * y = x * s over plane pixels of 16 channels (s_step 0: s one block for
 * every pixel; 16: s a plane too), in registers: the portable loops ran
 * 1.5x onnxruntime's time on RegNet's gates.  y may be x.
 */
__attribute__((target("avx512f")))
static void
scale_plane16(const float *x, const float *s, int64_t s_step, float *y, int64_t plane)
{
	for (int64_t p = 0; p < plane; p++)
		_mm512_storeu_ps(y + p * 16, _mm512_mul_ps(_mm512_loadu_ps(x + p * 16), _mm512_loadu_ps(s + p * s_step)));
}

/* the same for blocks of 8 */
__attribute__((target("avx2")))
static void
scale_plane8(const float *x, const float *s, int64_t s_step, float *y, int64_t plane)
{
	for (int64_t p = 0; p < plane; p++)
		_mm256_storeu_ps(y + p * 8, _mm256_mul_ps(_mm256_loadu_ps(x + p * 8), _mm256_loadu_ps(s + p * s_step)));
}

/* output blocks [b0, b1): batch b / cb, channel block b % cb */
static void
scale_blocks(void *arg, int64_t b0, int64_t b1)
{
	const scale_job *j = arg;
	int64_t		span = j->plane * j->blk,
				s_step = j->s_plane != 1 ? j->blk : 0;

	for (int64_t b = b0; b < b1; b++)
	{
		int64_t		n = b / j->cb,
					c = b % j->cb;
		const float *x = j->x + ((j->x_one ? 0 : n) * j->cb + c) * span;
		const float *s = j->s + ((j->s_one ? 0 : n) * j->cb + c) * j->s_plane * j->blk;
		float	   *y = j->y + b * span;

		if (j->blk == 16)
			scale_plane16(x, s, s_step, y, j->plane);
		else
			scale_plane8(x, s, s_step, y, j->plane);
	}
}

static ox_code
nchwc_mul_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *a = ox_in_tensor(ctx, 0);
	const ox_tensor *b = ox_in_tensor(ctx, 1);
	const ox_tensor *x,
			   *s;
	ox_tensor  *y;
	int64_t		dims[5];
	scale_job	j;

	OX_TRY(nn_nchwc_check_blocked("Mul", "A", a, 0, ctx->st));
	OX_TRY(nn_nchwc_check_blocked("Mul", "B", b, (int) a->dims[4], ctx->st));
	/* x: the one with the larger plane (either, when they are equal) */
	x = b->dims[2] * b->dims[3] > a->dims[2] * a->dims[3] ? b : a;
	s = x == a ? b : a;
	if (a->dims[1] != b->dims[1] ||
		(a->dims[0] != b->dims[0] && a->dims[0] != 1 && b->dims[0] != 1) ||
		!((s->dims[2] == x->dims[2] && s->dims[3] == x->dims[3]) || (s->dims[2] == 1 && s->dims[3] == 1)))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "onnx_pg.nchwc Mul: A [%lld, %lld, %lld, %lld, %lld] and B [%lld, %lld, %lld, %lld, %lld] "
					   "do not broadcast: the same blocks, batches equal or 1, and the same plane or one of 1 x 1",
					   (long long) a->dims[0], (long long) a->dims[1], (long long) a->dims[2],
					   (long long) a->dims[3], (long long) a->dims[4], (long long) b->dims[0],
					   (long long) b->dims[1], (long long) b->dims[2], (long long) b->dims[3],
					   (long long) b->dims[4]);
	memcpy(dims, x->dims, sizeof(dims));
	dims[0] = a->dims[0] == 1 ? b->dims[0] : a->dims[0];
	/* in X's own buffer where nothing else reads X (each element read before it is written) */
	j.x = x->data;
	j.s = s->data;
	if (x->dims[0] == dims[0])
		(void) ox_take_input_buffer(ctx, x, 0, 5, dims);
	if (!(y = ox_out_tensor(ctx, 0, OX_FLOAT, 5, dims)))
		return ctx->st->code;
	if (ox_tensor_numel(y) == 0)
		return OX_OK;
	j.y = y->data;
	j.cb = dims[1];
	j.plane = dims[2] * dims[3];
	j.s_plane = s->dims[2] * s->dims[3];
	j.x_one = x->dims[0] == 1;
	j.s_one = s->dims[0] == 1;
	j.blk = (int) dims[4];
	/* blocks of a few thousand floats per chunk */
	ox_parallel_for(ctx, dims[0] * dims[1], 4096 / (j.plane * j.blk) + 1, scale_blocks, &j);
	return ctx->st->code;
}

/*
 * Concat of blocked tensors along the channel blocks: the inputs' blocks one
 * after the other, per image.  The pass (layout_nchwc.c) puts it where
 * every input but the last has a whole number of blocks (a multiple of B
 * channels), so that the blocks stand for the channels of ONNX's Concat in
 * order, and the last input's zero channels past its C end the output as
 * the blocked layout wants.  Inception's modules end in such a Concat of
 * their branches, and the next module's convolutions and pools read it:
 * blocked, no branch leaves the layout.
 */
typedef struct concat_job
{
	const ox_kernel_ctx *ctx;
	float	   *y;
	int64_t		span;			/* floats of one channel block: H x W x B */
	int64_t		total_cb;		/* the output's channel blocks */
} concat_job;

/* (image, input) pairs [t0, t1): t / n_in the image, t % n_in the input */
static void
concat_blocks(void *arg, int64_t t0, int64_t t1)
{
	const concat_job *j = arg;
	int			n_in = j->ctx->n_in;
	int64_t		before = 0;		/* the output blocks before input t % n_in's */

	for (int k = 0; k < t0 % n_in; k++)
		before += ox_in_tensor(j->ctx, k)->dims[1];
	for (int64_t t = t0; t < t1; t++)
	{
		int64_t		n = t / n_in;
		int			i = (int) (t % n_in);
		const ox_tensor *x = ox_in_tensor(j->ctx, i);

		if (i == 0)
			before = 0;
		else if (t > t0)
			before += ox_in_tensor(j->ctx, i - 1)->dims[1];
		if (x->dims[1] > 0)
			memcpy(j->y + (n * j->total_cb + before) * j->span, (const float *) x->data + n * x->dims[1] * j->span,
				   sizeof(float) * (size_t) (x->dims[1] * j->span));
	}
}

static ox_code
nchwc_concat_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *first = ox_in_tensor(ctx, 0);
	int64_t		axis = ox_attr_int(ctx->node, "axis", 1);
	int64_t		dims[5];
	ox_tensor  *y;
	concat_job	j;

	if (axis != 1)
		return ox_fail(ctx->st, OX_INVALID_MODEL, "onnx_pg.nchwc Concat: axis is %lld, expected 1 (the channel blocks)",
					   (long long) axis);
	if (ctx->n_in < 1)
		return ox_fail(ctx->st, OX_INVALID_MODEL, "onnx_pg.nchwc Concat: no inputs");
	OX_TRY(nn_nchwc_check_blocked("Concat", "inputs[0]", first, 0, ctx->st));
	memcpy(dims, first->dims, sizeof(dims));
	dims[1] = 0;
	for (int i = 0; i < ctx->n_in; i++)
	{
		const ox_tensor *x = ox_in_tensor(ctx, i);
		char		what[32];

		snprintf(what, sizeof(what), "inputs[%d]", i);
		OX_TRY(nn_nchwc_check_blocked("Concat", what, x, (int) first->dims[4], ctx->st));
		if (x->dims[0] != first->dims[0] || x->dims[2] != first->dims[2] || x->dims[3] != first->dims[3])
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "onnx_pg.nchwc Concat: input %d is [%lld, .., %lld, %lld], input 0 [%lld, .., %lld, %lld]",
						   i, (long long) x->dims[0], (long long) x->dims[2], (long long) x->dims[3],
						   (long long) first->dims[0], (long long) first->dims[2], (long long) first->dims[3]);
		dims[1] += x->dims[1];
	}
	if (!(y = ox_out_tensor(ctx, 0, OX_FLOAT, 5, dims)))
		return ctx->st->code;
	if (ox_tensor_numel(y) == 0)
		return OX_OK;
	j.ctx = ctx;
	j.y = y->data;
	j.span = dims[2] * dims[3] * dims[4];
	j.total_cb = dims[1];
	ox_parallel_for(ctx, dims[0] * ctx->n_in, 1, concat_blocks, &j);
	return ctx->st->code;
}

/*
 * Whether the 2-block convolution tiles (AVX-512) read each pixel's scalar
 * inside each of its two multiply-adds ("{1to16}", simd_bcast.h) instead of
 * broadcasting it once into a register.  A 1x1 layer into 2 blocks (192 ->
 * 32 channels at 28x28, 96 -> 24 at 56x56): on an AMD EPYC Zen 4, which
 * splits a 512-bit multiply-add in two, 93% of the FMA peak in the
 * multiply-adds against 75% in a register; on a Zen 5, with two whole
 * 512-bit FMA pipes, the register 1.25x faster (interleaved A/B), so
 * MobileNet-v2 0.96x the time.  Zen 4 is the only AMD family 0x19 with
 * AVX-512 (Zen 3 has none); elsewhere (Zen 5, and Intel, not measured) the
 * register.  Tests force either (nn_nchwc_force_fma_bcast).
 */
static int forced_fma_bcast = -1;

bool
nn_nchwc_fma_bcast(void)
{
	if (forced_fma_bcast >= 0)
		return forced_fma_bcast;
	return ox_cpu_amd_family() == 0x19;
}

/* on: 1 or 0 forces the choice, -1 detects again; returns the choice before */
int
nn_nchwc_force_fma_bcast(int on)
{
	int			prev = nn_nchwc_fma_bcast();

	forced_fma_bcast = on < 0 ? -1 : on != 0;
	return prev;
}

int
ox_kernels_nchwc_block(void)
{
	return nn_nchwc_block();
}

const ox_kernel_def ox_kernels_nchwc[] = {
	{OX_NCHWC_DOMAIN, "ReorderInput", 1, NULL, reorder_input_run, NULL},
	{OX_NCHWC_DOMAIN, "ReorderOutput", 1, NULL, reorder_output_run, NULL},
	{OX_NCHWC_DOMAIN, "Conv", 1, nchwc_conv_prepare, nchwc_conv_run, nchwc_conv_free},
	{OX_NCHWC_DOMAIN, "DepthwiseConv", 1, nchwc_depthwise_prepare, nchwc_channel_groups_run, nchwc_depthwise_free},
	{OX_NCHWC_DOMAIN, "GroupConv", 1, nchwc_group_prepare, nchwc_channel_groups_run, nchwc_depthwise_free},
	{OX_NCHWC_DOMAIN, "MaxPool", 1, nchwc_max_pool_prepare, nchwc_pool_run, nchwc_pool_free},
	{OX_NCHWC_DOMAIN, "AveragePool", 1, nchwc_average_pool_prepare, nchwc_pool_run, nchwc_pool_free},
	{OX_NCHWC_DOMAIN, "GlobalAveragePool", 1, NULL, nchwc_global_average_pool_run, NULL},
	{OX_NCHWC_DOMAIN, "Mul", 1, NULL, nchwc_mul_run, NULL},
	{OX_NCHWC_DOMAIN, "Concat", 1, NULL, nchwc_concat_run, NULL},
};
const int	ox_kernels_nchwc_count = OX_KERNEL_COUNT(ox_kernels_nchwc);
