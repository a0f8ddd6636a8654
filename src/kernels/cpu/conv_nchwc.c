/*
 * conv_nchwc.c
 *	  Float32 CNN layers in a channel-blocked layout (NCHW16c), AVX-512: the
 *	  onnx_pg.nchwc operators that passes/layout_nchwc.c puts in place of
 *	  chains of 2-D convolutions, as onnxruntime's NCHWc transformer does.
 *
 * A blocked tensor holds [N, C, H, W] as [N, ceil(C / 16), H, W, 16]: the 16
 * channels of a block are contiguous at every pixel, and the channels past
 * C are zero.  That is what the convolution below wants: it keeps a tile of
 * up to 4 output blocks (64 channels) by 6 pixels of a row in 24 registers
 * and, per input channel, loads the 4 weight vectors of that channel and
 * broadcasts its value at the 6 pixels straight from the input: no im2col,
 * no panel to pack, whatever the kernel size or stride.  The NCHW GEMM path
 * (conv_gemm.c) must copy its input into slivers for every layer and read
 * them from L2; chains of ResNet-50's 1x1 layers ran 2-11% faster here
 * (interleaved A/B), and whole networks 5-10% (passes/layout_nchwc.c).
 *
 * Operators (domain onnx_pg.nchwc, engine-private: the pass adds them only
 * to sessions that run, never to graphs that are saved):
 *	 ReorderInput		X [N, C, H, W] -> [N, ceil(C/16), H, W, 16]
 *	 ReorderOutput		channels = C: the inverse
 *	 Conv				FusedConv's inputs and attributes (group 1, constant
 *						W in the original [M, C, kh, kw] layout, packed at
 *						prepare); X, Z and Y blocked, or with nchw_input = 1
 *						X plain NCHW (an RGB stem, which then needs no
 *						reorder of its large output)
 *	 DepthwiseConv		the same with group = C = M (conv_nchwc_depthwise.c)
 *	 MaxPool			MaxPool's attributes, blocked in and out
 *	 GlobalAveragePool	blocked in and out ([N, CB, 1, 1, 16])
 *
 * Every kernel checks its input against the blocked shape it needs: a model
 * may contain these operators itself.  They need AVX-512 (the pass adds
 * them only then); without it they fail with a clear error.
 */
#include "kernels/cpu/conv_nchwc.h"
#include "kernels/cpu/simd_bcast.h"

#include <float.h>
#include <immintrin.h>
#include <stdio.h>
#include <string.h>

#define TILE_PX 6				/* output pixels per register tile */
#define MAX_NOB 4				/* output blocks per register tile */
#define ROW_CHUNK 96			/* output pixels per task along a row */
#define TASK_PX 256				/* the same, over rows, when weights are read in chunks */
#define L1_WEIGHTS_MAX (128 << 10)	/* a group's weights past which input blocks are chunked */
/* ... and past which they are on planes of LARGE_PLANE pixels and more */
#define L1_WEIGHTS_LARGE_PLANE (48 << 10)
#define LARGE_PLANE 784
#define L1_WEIGHTS (32 << 10)	/* a chunk's weights */

/* ---- reorders ----------------------------------------------------------- */

typedef struct reorder_job
{
	const float *x;
	float	   *y;
	int64_t		c;
	int64_t		cb;
	int64_t		hw;
	bool		to_blocked;		/* NCHW -> blocked, else the inverse */
} reorder_job;

/*
 * Blocks (n, cb) in [begin, end): 16 channel rows of hw pixels to hw x 16
 * (the padding channels zero), or back (the padding dropped), 16 pixels at
 * a time through a register transpose.
 */
__attribute__((target("avx512f")))
static void
reorder_task(void *arg, int64_t begin, int64_t end)
{
	const reorder_job *j = arg;

	for (int64_t t = begin; t < end; t++)
	{
		int64_t		n = t / j->cb,
					c0 = (t % j->cb) * BLK;
		int64_t		rows_at = (n * j->c + c0) * j->hw,
					blocks_at = t * j->hw * BLK;
		int			rows = (int) (j->c - c0 < BLK ? j->c - c0 : BLK);

		for (int64_t p = 0; p < j->hw; p += BLK)
		{
			int			np = (int) (j->hw - p < BLK ? j->hw - p : BLK);
			__mmask16	m = np == BLK ? (__mmask16) 0xFFFF : (__mmask16) ((1u << np) - 1);
			__m512		r[BLK];

			if (j->to_blocked)
			{
				for (int i = 0; i < BLK; i++)
					r[i] = i < rows ? _mm512_maskz_loadu_ps(m, j->x + rows_at + i * j->hw + p) : _mm512_setzero_ps();
				nn_transpose16(r);
				for (int i = 0; i < np; i++)
					_mm512_storeu_ps(j->y + blocks_at + (p + i) * BLK, r[i]);
			}
			else
			{
				for (int i = 0; i < BLK; i++)
					r[i] = i < np ? _mm512_loadu_ps(j->x + blocks_at + (p + i) * BLK) : _mm512_setzero_ps();
				nn_transpose16(r);
				for (int i = 0; i < rows; i++)
					_mm512_mask_storeu_ps(j->y + rows_at + i * j->hw + p, m, r[i]);
			}
		}
	}
}

static ox_code
reorder_input_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	reorder_job j;
	int64_t		dims[5];
	ox_tensor  *y;

	if (!nn_nchwc_have_avx512("ReorderInput", ctx->st))
		return ctx->st->code;
	if (!x || x->dtype != OX_FLOAT || x->rank != 4)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "onnx_pg.nchwc ReorderInput: X must be a float tensor [N, C, H, W]");
	dims[0] = x->dims[0];
	dims[1] = (x->dims[1] + BLK - 1) / BLK;
	dims[2] = x->dims[2];
	dims[3] = x->dims[3];
	dims[4] = BLK;
	if (!(y = ox_out_tensor(ctx, 0, OX_FLOAT, 5, dims)))
		return ctx->st->code != OX_OK ? ctx->st->code : OX_OUT_OF_MEMORY;
	j.x = x->data;
	j.y = y->data;
	j.c = x->dims[1];
	j.cb = dims[1];
	j.hw = x->dims[2] * x->dims[3];
	j.to_blocked = true;
	if (j.hw > 0)
		ox_parallel_for(ctx, dims[0] * j.cb, 1, reorder_task, &j);
	return OX_OK;
}

static ox_code
reorder_output_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	int64_t		c = ox_attr_int(ctx->node, "channels", -1);
	reorder_job j;
	int64_t		dims[4];
	ox_tensor  *y;

	if (!nn_nchwc_have_avx512("ReorderOutput", ctx->st))
		return ctx->st->code;
	OX_TRY(nn_nchwc_check_blocked("ReorderOutput", "X", x, ctx->st));
	if (c < 1 || (c + BLK - 1) / BLK != x->dims[1])
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "onnx_pg.nchwc ReorderOutput: channels %lld do not fill the %lld blocks of X",
					   (long long) c, (long long) x->dims[1]);
	dims[0] = x->dims[0];
	dims[1] = c;
	dims[2] = x->dims[2];
	dims[3] = x->dims[3];
	if (!(y = ox_out_tensor(ctx, 0, OX_FLOAT, 4, dims)))
		return ctx->st->code != OX_OK ? ctx->st->code : OX_OUT_OF_MEMORY;
	j.x = x->data;
	j.y = y->data;
	j.c = c;
	j.cb = x->dims[1];
	j.hw = x->dims[2] * x->dims[3];
	j.to_blocked = false;
	if (j.hw > 0)
		ox_parallel_for(ctx, dims[0] * j.cb, 1, reorder_task, &j);
	return OX_OK;
}

/* ---- convolution -------------------------------------------------------- */

typedef struct nchwc_conv_state
{
	nn_window	win;
	nn_activation act;
	int64_t		m,
				c,
				kh,
				kw;
	int64_t		mb,				/* output blocks */
				cb,				/* input blocks */
				og;				/* groups of up to MAX_NOB output blocks */
	size_t		og_floats;		/* packed floats per group (room for MAX_NOB blocks) */
	float	   *w;				/* [og][cb][kh][kw][16 ic][nob x 16 oc] */
	const void *w_data;			/* the constant's data the packing came from */
	bool		nchw_input;		/* X is plain [N, C, H, W] (an RGB stem's input) */
	int64_t		group_bytes;	/* a group's packed weights */
	int64_t		ic_chunk;		/* input blocks per pass over a task's pixels, when chunked */
	nn_nchwc_wino *wino;		/* 3x3 stride 1: Winograd's weights, and w is NULL */
	nn_nchwc_bias bias;			/* padded to og * MAX_NOB * BLK */
} nchwc_conv_state;

static void
nchwc_conv_free(void *state)
{
	nchwc_conv_state *s = state;

	if (s)
	{
		ox_aligned_free(s->w);
		nn_nchwc_winograd_free(s->wino);
		nn_nchwc_bias_free(&s->bias);
	}
	free(s);
}

static bool
all_ones(const int64_t *v, int n)
{
	for (int i = 0; i < n; i++)
		if (v[i] != 1)
			return false;
	return true;
}

static int64_t
group_blocks(const nchwc_conv_state *s, int64_t g)
{
	int64_t		left = s->mb - g * MAX_NOB;

	return left < MAX_NOB ? left : MAX_NOB;
}

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
	if (!nn_act_in_registers(act))
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

static ox_code
nchwc_conv_prepare(ox_prepare_ctx *pc)
{
	nchwc_conv_state *s;
	const ox_tensor *w;
	const float *src;

	if (ox_attr_int(pc->node, "group", 1) != 1)
		return ox_fail(pc->st, OX_INVALID_MODEL, "onnx_pg.nchwc Conv: group must be 1");
	if (!(s = calloc(1, sizeof(*s))))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "onnx_pg.nchwc Conv: could not allocate state");
	if (nn_nchwc_prepare_begin(pc, "Conv", &w, &s->win, &s->act) != OX_OK)
	{
		free(s);
		return pc->st->code;
	}
	s->nchw_input = ox_attr_int(pc->node, "nchw_input", 0) != 0;
	s->m = w->dims[0];
	s->c = w->dims[1];
	s->kh = w->dims[2];
	s->kw = w->dims[3];
	s->mb = (s->m + BLK - 1) / BLK;
	s->cb = (s->c + BLK - 1) / BLK;
	s->og = (s->mb + MAX_NOB - 1) / MAX_NOB;
	s->w_data = w->data;
	if (ox_shape_numel(5, (int64_t[]) {s->og * MAX_NOB * BLK, s->cb * BLK, s->kh, s->kw, 1}) < 0)
	{
		free(s);
		return ox_fail(pc->st, OX_LIMIT_EXCEEDED, "onnx_pg.nchwc Conv: W is too large");
	}
	s->og_floats = (size_t) (s->cb * s->kh * s->kw * BLK) * MAX_NOB * BLK;
	if (nn_nchwc_prepare_bias(pc, "Conv", s->m, s->og * MAX_NOB * BLK, &s->bias) != OX_OK)
	{
		free(s);
		return pc->st->code;
	}
	/* 3x3 stride 1 (ResNet's): a third of the multiplies by Winograd's F(4x4, 3x3) */
	if (s->kh == 3 && s->kw == 3 && !s->nchw_input && all_ones(s->win.strides, s->win.n_strides) &&
		all_ones(s->win.dilations, s->win.n_dilations))
	{
		if (!(s->wino = nn_nchwc_winograd_pack(s->m, s->c, w->data, pc->st)))
		{
			nchwc_conv_free(s);
			return pc->st->code;
		}
		pc->state = s;
		return OX_OK;
	}
	/*
	 * A group's weights are read once per tile of 6 pixels; past
	 * L1_WEIGHTS_MAX bytes (ResNet's 1x1 layers from 1024 channels, its 3x3
	 * ones from 64) they come from L2 or further every time, so the input
	 * blocks go in chunks whose weights stay in L1 across a task's pixels,
	 * the partial sums kept in Y: ResNet-50's 1024->256 layers at 14x14 ran
	 * 0.85x the time.  Past L1_WEIGHTS_LARGE_PLANE on planes of
	 * LARGE_PLANE pixels and more (chosen at run time): ResNet-50 0.97x,
	 * its 1x1 layers from 256 and 512 channels at 56x56 and 28x28; on
	 * smaller planes (MobileNet's 14x14) storing and reloading the partial
	 * sums cost what the chunks saved.
	 */
	{
		int64_t		per_block = (int64_t) (s->og_floats / (size_t) s->cb * sizeof(float));

		s->group_bytes = s->cb * per_block;
		s->ic_chunk = L1_WEIGHTS / per_block;
		if (s->ic_chunk < 1)
			s->ic_chunk = 1;
	}
	if (!(s->w = ox_aligned_alloc(sizeof(float) * s->og_floats * (size_t) s->og)))
	{
		nchwc_conv_free(s);
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "onnx_pg.nchwc Conv: could not allocate packed weights");
	}
	/* Winograd's direct recomputation reads the original: released only here */
	ox_prepare_releasable(pc, 1);
	src = w->data;
	for (int64_t g = 0; g < s->og; g++)
	{
		int64_t		ns = group_blocks(s, g) * BLK;
		float	   *d = s->w + g * s->og_floats;

		for (int64_t icb = 0; icb < s->cb; icb++)
			for (int64_t y = 0; y < s->kh; y++)
				for (int64_t x = 0; x < s->kw; x++)
					for (int64_t ic = 0; ic < BLK; ic++)
						for (int64_t o = 0; o < ns; o++)
						{
							int64_t		oc = g * MAX_NOB * BLK + o,
										c = icb * BLK + ic;

							*d++ = oc < s->m && c < s->c
								? src[((oc * s->c + c) * s->kh + y) * s->kw + x] : 0.0f;
						}
	}
	pc->state = s;
	return OX_OK;
}

/* which tiles a layer runs (tiles[kind]) */
typedef enum tile_kind
{
	TILE_BLOCKED,				/* blocked input, any stride */
	TILE_NCHW,					/* plain NCHW input (nchw_input) */
	TILE_BLOCKED_S1				/* blocked input, stride 1: the pixels' offsets constant */
} tile_kind;

typedef struct conv_job
{
	const nchwc_conv_state *s;
	const float *x;
	const float *z;
	const float *bias;			/* og x 64, zero past M */
	float	   *y;
	int64_t		h,
				w,
				oh,
				ow,
				sh,
				sw,
				dh,
				dw,
				ph,
				pw;
	int64_t		ic_chunk;		/* input blocks per pass over a task's pixels */
	int64_t		rows,			/* output rows per task */
				row_groups,		/* tasks down the plane */
				chunk_px,		/* output pixels per task along a row */
				chunks;			/* tasks along a row */
	int64_t		ow_lo,
				ow_hi;			/* outputs whose every horizontal tap is inside */
	tile_kind	tile_kind;		/* the input's layout and stride */
	/* tasks from split_from on: the last groups, each in split_parts columns of split_px */
	int64_t		split_from,
				split_parts,
				split_px;
} conv_job;

/* the tile's arguments */
typedef struct tile_args
{
	const float *x;				/* the image's first block */
	int64_t		iy,
				ix;				/* input position of tap (0, 0) of the first pixel */
	const float *w;				/* the group's packed weights */
	int64_t		icb0,
				icb1;			/* input blocks to add this time */
	bool		first,			/* start from zero, else from Y's partial sums */
				last;			/* finish (bias, Z, activation), else store the partial sums */
	int64_t		ky0,
				ky1,
				kx0,
				kx1;			/* taps to read */
	const float *bias;
	const float *z;				/* or NULL */
	float	   *y;
	__mmask16	last_mask;		/* lanes of the group's last block that are channels */
} tile_args;

/* the tile's products with input channel ic at one tap (inside DEFINE_TILE) */
#define TILE_CHANNEL(NOB, PX, ic) \
	do { \
		__m512		wv[NOB]; \
		_Pragma("GCC unroll 4") \
		for (int o = 0; o < NOB; o++) \
			wv[o] = _mm512_load_ps(wp + (ic) * ns + o * BLK); \
		_Pragma("GCC unroll 6") \
		for (int p = 0; p < PX; p++) \
		{ \
			const float *xc = xp + p * xps + (ic) * xch; \
			if (NOB == 2) \
			{ \
				acc[0][p] = nn_fmadd_bcast512(wv[0], xc, acc[0][p]); \
				acc[1][p] = nn_fmadd_bcast512(wv[NOB - 1], xc, acc[NOB - 1][p]); \
			} \
			else \
			{ \
				__m512		xv = _mm512_set1_ps(*xc); \
				_Pragma("GCC unroll 4") \
				for (int o = 0; o < NOB; o++) \
					acc[o][p] = _mm512_fmadd_ps(xv, wv[o], acc[o][p]); \
			} \
		} \
	} while (0)

/*
 * acc[ob][p] = sum over input channels and taps of x * w, then the
 * epilogue, stored.  NOB and PX are constants in each instantiation, and
 * so is NCHW: a blocked input (a channel's value at stride 1 in its
 * pixel's 16), or a plain NCHW one (nchw_input: an RGB stem's 3 channels,
 * a plane apart, unrolled).  Only the channels that exist are read: the
 * last block of MobileNet-v2's 24 channels holds 8 (its 24 -> 144 layers
 * ran 0.82x the time reading 8 instead of 16).
 */
#define DEFINE_TILE(NAME, NOB, PX, NCHW, S1) \
__attribute__((target("avx512f,fma"))) \
static void \
NAME(const conv_job *j, const tile_args *t) \
{ \
	const nchwc_conv_state *s = j->s; \
	__m512		acc[NOB][PX]; \
	const int64_t ns = NOB * BLK, \
				xpix = NCHW ? 1 : BLK, \
				xch = NCHW ? j->h * j->w : 1, \
				xps = S1 ? BLK : j->sw * xpix, \
				xrow = j->w * xpix, \
				xblk = j->h * j->w * BLK; \
	_Pragma("GCC unroll 4") \
	for (int o = 0; o < NOB; o++) \
		_Pragma("GCC unroll 6") \
		for (int p = 0; p < PX; p++) \
			acc[o][p] = t->first ? _mm512_setzero_ps() \
				: _mm512_loadu_ps(t->y + o * j->oh * j->ow * BLK + p * BLK); \
	for (int64_t icb = t->icb0; icb < t->icb1; icb++) \
	{ \
		const float *xb = t->x + icb * xblk; \
		const float *wb = t->w + icb * s->kh * s->kw * BLK * ns; \
		for (int64_t ky = t->ky0; ky < t->ky1; ky++) \
			for (int64_t kx = t->kx0; kx < t->kx1; kx++) \
			{ \
				const float *xp = xb + (t->iy + ky * j->dh) * xrow + (t->ix + kx * j->dw) * xpix; \
				const float *wp = wb + (ky * s->kw + kx) * BLK * ns; \
				const int	nic = (int) (s->c - icb * BLK < BLK ? s->c - icb * BLK : BLK); \
				if (NCHW && nic == 3) \
				{ \
					TILE_CHANNEL(NOB, PX, 0); \
					TILE_CHANNEL(NOB, PX, 1); \
					TILE_CHANNEL(NOB, PX, 2); \
				} \
				else \
				{ \
					_Pragma("GCC unroll 2") \
					for (int ic = 0; ic < nic; ic++) \
						TILE_CHANNEL(NOB, PX, ic); \
				} \
			} \
	} \
	_Pragma("GCC unroll 4") \
	for (int o = 0; o < NOB; o++) \
	{ \
		const int64_t ystep = j->oh * j->ow * BLK; \
		__m512		b = _mm512_loadu_ps(t->bias + o * BLK); \
		__mmask16	keep = o == NOB - 1 ? t->last_mask : (__mmask16) 0xFFFF; \
		_Pragma("GCC unroll 6") \
		for (int p = 0; p < PX; p++) \
		{ \
			__m512		v; \
			if (!t->last) \
			{ \
				_mm512_storeu_ps(t->y + o * ystep + p * BLK, acc[o][p]); \
				continue; \
			} \
			v = _mm512_add_ps(acc[o][p], b); \
			if (t->z) \
				v = _mm512_add_ps(v, _mm512_loadu_ps(t->z + o * ystep + p * BLK)); \
			/* channels past M stay zero whatever act(0) is */ \
			_mm512_storeu_ps(t->y + o * ystep + p * BLK, _mm512_maskz_mov_ps(keep, nn_act_avx512(&s->act, v))); \
		} \
	} \
}

#define DEFINE_TILES(NOB) \
	DEFINE_TILE(tile_##NOB##_1, NOB, 1, 0, 0) DEFINE_TILE(tile_##NOB##_2, NOB, 2, 0, 0) \
	DEFINE_TILE(tile_##NOB##_3, NOB, 3, 0, 0) DEFINE_TILE(tile_##NOB##_4, NOB, 4, 0, 0) \
	DEFINE_TILE(tile_##NOB##_5, NOB, 5, 0, 0) DEFINE_TILE(tile_##NOB##_6, NOB, 6, 0, 0) \
	DEFINE_TILE(ntile_##NOB##_1, NOB, 1, 1, 0) DEFINE_TILE(ntile_##NOB##_2, NOB, 2, 1, 0) \
	DEFINE_TILE(ntile_##NOB##_3, NOB, 3, 1, 0) DEFINE_TILE(ntile_##NOB##_4, NOB, 4, 1, 0) \
	DEFINE_TILE(ntile_##NOB##_5, NOB, 5, 1, 0) DEFINE_TILE(ntile_##NOB##_6, NOB, 6, 1, 0) \
	DEFINE_TILE(stile_##NOB##_1, NOB, 1, 0, 1) DEFINE_TILE(stile_##NOB##_2, NOB, 2, 0, 1) \
	DEFINE_TILE(stile_##NOB##_3, NOB, 3, 0, 1) DEFINE_TILE(stile_##NOB##_4, NOB, 4, 0, 1) \
	DEFINE_TILE(stile_##NOB##_5, NOB, 5, 0, 1) DEFINE_TILE(stile_##NOB##_6, NOB, 6, 0, 1)
DEFINE_TILES(1)
DEFINE_TILES(2)
DEFINE_TILES(3)
DEFINE_TILES(4)

typedef void (*tile_fn) (const conv_job *j, const tile_args *t);

/* [tile_kind][NOB - 1][PX - 1] */
static const tile_fn tiles[3][MAX_NOB][TILE_PX] = {
	{
		{tile_1_1, tile_1_2, tile_1_3, tile_1_4, tile_1_5, tile_1_6},
		{tile_2_1, tile_2_2, tile_2_3, tile_2_4, tile_2_5, tile_2_6},
		{tile_3_1, tile_3_2, tile_3_3, tile_3_4, tile_3_5, tile_3_6},
		{tile_4_1, tile_4_2, tile_4_3, tile_4_4, tile_4_5, tile_4_6},
	},
	{
		{ntile_1_1, ntile_1_2, ntile_1_3, ntile_1_4, ntile_1_5, ntile_1_6},
		{ntile_2_1, ntile_2_2, ntile_2_3, ntile_2_4, ntile_2_5, ntile_2_6},
		{ntile_3_1, ntile_3_2, ntile_3_3, ntile_3_4, ntile_3_5, ntile_3_6},
		{ntile_4_1, ntile_4_2, ntile_4_3, ntile_4_4, ntile_4_5, ntile_4_6},
	},
	{
		{stile_1_1, stile_1_2, stile_1_3, stile_1_4, stile_1_5, stile_1_6},
		{stile_2_1, stile_2_2, stile_2_3, stile_2_4, stile_2_5, stile_2_6},
		{stile_3_1, stile_3_2, stile_3_3, stile_3_4, stile_3_5, stile_3_6},
		{stile_4_1, stile_4_2, stile_4_3, stile_4_4, stile_4_5, stile_4_6},
	},
};

/*
 * The weights the pass after this one reads first (the task's next chunk
 * of input blocks, or the first of the next task's group when that is
 * another group or they are chunked): *lines cache lines from *at, or 0.
 * A pass brings them into L2 over its tiles; without that, the first tile
 * of each pass stalls on them (ResNet-50's 1x1 layers from 1024 channels
 * ran 16% slower with cold weights than with warm ones).
 */
static void
next_weights(const conv_job *j, int64_t t, int64_t end, int64_t g, int64_t icb1, const float **at,
			 int64_t *lines)
{
	const nchwc_conv_state *s = j->s;
	int64_t		ng = g,
				from = icb1,
				to;
	int64_t		per_block;

	*at = NULL;
	*lines = 0;
	if (icb1 >= s->cb)
	{
		if (t + 1 >= end)
			return;
		ng = ((t + 1) / (j->chunks * j->row_groups)) % s->og;
		if (ng == g && j->ic_chunk >= s->cb)
			return;				/* the same weights, still in cache */
		from = 0;
	}
	to = from + j->ic_chunk < s->cb ? from + j->ic_chunk : s->cb;
	per_block = s->kh * s->kw * BLK * group_blocks(s, ng) * BLK;
	*at = s->w + ng * s->og_floats + from * per_block;
	*lines = (to - from) * per_block / 16;
}

/* tasks (image, group, group of output rows, chunk of the rows) in [begin, end) */
static void
conv_task(void *arg, int64_t begin, int64_t end)
{
	const conv_job *j = arg;
	const nchwc_conv_state *s = j->s;

	for (int64_t t = begin; t < end; t++)
	{
		bool		split = t >= j->split_from;
		int64_t		chunk = split ? (t - j->split_from) % j->split_parts : t % j->chunks,
					rg = split ? 0 : (t / j->chunks) % j->row_groups,
					g = split ? j->split_from + (t - j->split_from) / j->split_parts
			: (t / (j->chunks * j->row_groups)) % s->og,
					n = split ? 0 : t / (j->chunks * j->row_groups * s->og),
					cpx = split ? j->split_px : j->chunk_px;
		int64_t		nob = group_blocks(s, g),
					ob0 = g * MAX_NOB;
		int64_t		x0 = chunk * cpx,
					x1 = x0 + cpx < j->ow ? x0 + cpx : j->ow,
					oy0 = rg * j->rows,
					oy1 = oy0 + j->rows < j->oh ? oy0 + j->rows : j->oh;
		int64_t		m_last = s->m - (ob0 + nob - 1) * BLK,
					pass_tiles = (oy1 - oy0) * ((x1 - x0 + TILE_PX - 1) / TILE_PX);
		tile_args	ta;

		if (pass_tiles <= 0)
			continue;			/* no pixels (never planned so; the prefetch step divides by it) */
		ta.w = s->w + g * s->og_floats;
		ta.bias = j->bias + ob0 * BLK;
		ta.last_mask = m_last >= BLK ? (__mmask16) 0xFFFF : (__mmask16) ((1u << m_last) - 1);
		ta.x = j->x + n * (s->nchw_input ? s->c : s->cb * BLK) * j->h * j->w;
		/* each chunk of input blocks over all the task's pixels while its weights are in L1 */
		for (ta.icb0 = 0; ta.icb0 < s->cb; ta.icb0 += j->ic_chunk)
		{
			const float *pf;
			int64_t		pf_lines,
						pf_step;

			ta.icb1 = ta.icb0 + j->ic_chunk < s->cb ? ta.icb0 + j->ic_chunk : s->cb;
			ta.first = ta.icb0 == 0;
			ta.last = ta.icb1 == s->cb;
			next_weights(j, t, end, g, ta.icb1, &pf, &pf_lines);
			pf_step = (pf_lines + pass_tiles - 1) / pass_tiles;
			for (int64_t oy = oy0; oy < oy1; oy++)
			{
				ta.iy = oy * j->sh - j->ph;
				nn_nchwc_tap_range(ta.iy, j->dh, s->kh, j->h, &ta.ky0, &ta.ky1);
				for (int64_t ox = x0; ox < x1;)
				{
					int64_t		px;
					int64_t		off = ((n * s->mb + ob0) * j->oh + oy) * j->ow + ox;

					ta.ix = ox * j->sw - j->pw;
					if (ox >= j->ow_lo && ox < j->ow_hi)
					{
						int64_t		stop = x1 < j->ow_hi ? x1 : j->ow_hi;

						px = stop - ox < TILE_PX ? stop - ox : TILE_PX;
						ta.kx0 = 0;
						ta.kx1 = s->kw;
					}
					else
					{
						px = 1;
						nn_nchwc_tap_range(ta.ix, j->dw, s->kw, j->w, &ta.kx0, &ta.kx1);
					}
					ta.y = j->y + off * BLK;
					ta.z = j->z ? j->z + off * BLK : NULL;
					for (int64_t i = 0; i < pf_step && pf_lines > 0; i++, pf_lines--, pf += 16)
						_mm_prefetch((const char *) pf, _MM_HINT_T1);
					tiles[j->tile_kind][nob - 1][px - 1] (j, &ta);
					ox += px;
				}
			}
		}
	}
}

/*
 * What every blocked convolution checks and allocates before it runs (the
 * op's inputs X, W, B, Z): X blocked in cb blocks (nchw_input: plain
 * [N, c, H, W]), W the constant its
 * weights were packed from (w_data), B [m]; *cs the geometry of the NCHW
 * shape the blocks stand for; Y [N, ceil(m/16), OH, OW, 16] allocated and
 * Z checked against it; *bias B padded with zeros to pb->len floats (pb's
 * own when prepared, else made here; the caller hands it to
 * nn_nchwc_bias_done), or NULL when Y is empty and there is nothing to do.
 */
ox_code
nn_nchwc_conv_begin(ox_kernel_ctx *ctx, const char *op, const nn_window *win, int64_t group, int64_t c,
					int64_t cb, int64_t m, const void *w_data, bool nchw_input, const nn_nchwc_bias *pb,
					nn_conv_shape *cs, ox_tensor **y, float **bias)
{
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *w = ox_in_tensor(ctx, 1);
	const ox_tensor *b = ox_in_tensor(ctx, 2);
	const ox_tensor *z = ox_in_tensor(ctx, 3);
	ox_tensor	fx;
	int64_t		dims[5];

	*y = NULL;
	*bias = NULL;
	if (!nn_nchwc_have_avx512(op, ctx->st))
		return ctx->st->code;
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
		OX_TRY(nn_nchwc_check_blocked(op, "X", x, ctx->st));
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
	dims[1] = (m + BLK - 1) / BLK;
	dims[2] = cs->g.out[AH];
	dims[3] = cs->g.out[AW];
	dims[4] = BLK;
	if (ox_shape_numel(5, dims) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "onnx_pg.nchwc %s: the output is too large", op);
	if (z && (z->dtype != OX_FLOAT || z->rank != 5 || memcmp(z->dims, dims, sizeof(int64_t) * 5) != 0))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "onnx_pg.nchwc %s: Z must have the blocked shape of Y", op);
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

static ox_code
nchwc_conv_run(ox_kernel_ctx *ctx)
{
	const nchwc_conv_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *z = ox_in_tensor(ctx, 3);
	nn_conv_shape cs;
	conv_job	j;
	ox_tensor  *y;
	float	   *bias;
	const nn_geom *g = &cs.g;

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "onnx_pg.nchwc Conv: not prepared");
	OX_TRY(nn_nchwc_conv_begin(ctx, "Conv", &s->win, 1, s->c, s->cb, s->m, s->w_data, s->nchw_input,
							   &s->bias, &cs, &y, &bias));
	if (!bias)
		return OX_OK;
	if (s->wino)
	{
		ox_code		rc = nn_nchwc_winograd_run(ctx, s->wino, &cs, x->data, z ? z->data : NULL, bias,
											   &s->act, y->data);

		nn_nchwc_bias_done(&s->bias, bias);
		return rc;
	}

	memset(&j, 0, sizeof(j));
	j.s = s;
	j.x = x->data;
	j.z = z ? z->data : NULL;
	j.bias = bias;
	j.y = y->data;
	j.h = g->in[AH];
	j.w = g->in[AW];
	j.oh = g->out[AH];
	j.ow = g->out[AW];
	j.sh = g->s[AH];
	j.sw = g->s[AW];
	j.dh = g->d[AH];
	j.dw = g->d[AW];
	j.ph = g->pb[AH];
	j.pw = g->pb[AW];
	/* a pointwise layer is one long row: full tiles across the plane's row ends */
	if (s->kh == 1 && s->kw == 1 && j.sh == 1 && j.sw == 1 && j.ph == 0 && j.pw == 0 &&
		g->pe[AH] == 0 && g->pe[AW] == 0)
	{
		j.w = j.ow = j.h * j.w;
		j.h = j.oh = 1;
	}
	/*
	 * Tasks of rows cut in equal chunks (a short last one would read all
	 * the weights for a few pixels).  Weights read in chunks of input
	 * blocks (past L1_WEIGHTS_MAX) come from L2 or further once per task:
	 * tasks then take longer rows and several of them, up to TASK_PX
	 * pixels (ResNet-50's 1x1 layers from 1024 channels at 14x14: one task
	 * per group instead of three; its 3x3 stride-2 layer into 7x7: one
	 * instead of seven).
	 */
	{
		bool		chunked = s->group_bytes > L1_WEIGHTS_MAX ||
			(s->group_bytes > L1_WEIGHTS_LARGE_PLANE && j.oh * j.ow >= LARGE_PLANE);
		int64_t		target = chunked ? TASK_PX : ROW_CHUNK,
					units = x->dims[0] * s->og,
					want = 2 * (int64_t) ctx->nthreads;

		/* but two tasks per thread where the pixels allow */
		if (units * ((j.oh * j.ow + target - 1) / target) < want)
		{
			target = units * j.oh * j.ow / want;
			if (target < TILE_PX)
				target = TILE_PX;
		}

		j.chunks = (j.ow + target - 1) / target;
		j.chunk_px = (j.ow + j.chunks - 1) / j.chunks;
		j.chunk_px = (j.chunk_px + TILE_PX - 1) / TILE_PX * TILE_PX;
		j.chunks = (j.ow + j.chunk_px - 1) / j.chunk_px;
		j.rows = chunked && j.chunks == 1 ? target / j.ow : 1;
		if (j.rows < 1)
			j.rows = 1;
		if (j.rows > j.oh)
			j.rows = j.oh;
		j.row_groups = (j.oh + j.rows - 1) / j.rows;
		j.rows = (j.oh + j.row_groups - 1) / j.row_groups;
		j.ic_chunk = chunked ? s->ic_chunk : s->cb;
	}
	/*
	 * One task a group (one image, all its pixels), more groups than
	 * threads but not a multiple of them: the groups left over once each
	 * thread has had as many are cut along the columns, one part a thread.
	 * MobileNet-v2's 960 -> 320 layer at 7x7 made 5 tasks, 3 for one thread
	 * and 2 for the other (its time 1.64x shorter on two threads, against
	 * onnxruntime's 1.9x); cutting every group instead reads all the weights
	 * twice, which cost what it balanced.
	 */
	j.tile_kind = s->nchw_input ? TILE_NCHW : j.sw == 1 ? TILE_BLOCKED_S1 : TILE_BLOCKED;
	j.split_from = INT64_MAX;
	{
		int			nt = ctx->nthreads;
		int64_t		tasks = x->dims[0] * s->og * j.row_groups * j.chunks;

		if (nt > 1 && tasks == s->og && s->og > nt && s->og < 4 * nt && s->og % nt != 0 &&
			j.ow >= 2 * TILE_PX * nt)
		{
			j.split_from = s->og - s->og % nt;
			j.split_px = ((j.ow + nt - 1) / nt + TILE_PX - 1) / TILE_PX * TILE_PX;
			/* whole tiles a part: 49 columns in 4 parts are 3 of 18 */
			j.split_parts = (j.ow + j.split_px - 1) / j.split_px;
			tasks = j.split_from + (s->og % nt) * j.split_parts;
		}
		/* outputs whose taps 0 .. kw-1 all land inside the row */
		nn_valid_range(j.ow, j.sw, -j.pw, j.w - (s->kw - 1) * j.dw, &j.ow_lo, &j.ow_hi);
		ox_parallel_for(ctx, tasks, 1, conv_task, &j);
	}
	nn_nchwc_bias_done(&s->bias, bias);
	return OX_OK;
}

/* ---- pooling ------------------------------------------------------------ */

typedef struct nchwc_pool_state
{
	nn_window	win;
} nchwc_pool_state;

static ox_code
nchwc_max_pool_prepare(ox_prepare_ctx *pc)
{
	nchwc_pool_state *s = calloc(1, sizeof(*s));

	if (!s)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "onnx_pg.nchwc MaxPool: could not allocate state");
	if (nn_window_parse(pc->node, &s->win, true, pc->st) != OX_OK)
	{
		free(s);
		return pc->st->code;
	}
	if (pc->node->n_outputs > 1)
	{
		free(s);
		return ox_fail(pc->st, OX_INVALID_MODEL, "onnx_pg.nchwc MaxPool: the Indices output is not supported");
	}
	pc->state = s;
	return OX_OK;
}

static void
nchwc_pool_free(void *state)
{
	free(state);
}

typedef struct pool_job
{
	const nn_geom *g;
	const float *x;
	float	   *y;
} pool_job;

/* rows (image and block, output row) in [begin, end) */
__attribute__((target("avx512f")))
static void
max_pool_task(void *arg, int64_t begin, int64_t end)
{
	const pool_job *j = arg;
	const nn_geom *g = j->g;
	int64_t		h = g->in[AH],
				w = g->in[AW],
				oh = g->out[AH],
				ow = g->out[AW];

	for (int64_t t = begin; t < end; t++)
	{
		int64_t		oy = t % oh,
					plane = t / oh;
		const float *xp = j->x + plane * h * w * BLK;
		float	   *yp = j->y + (plane * oh + oy) * ow * BLK;
		int64_t		ky0,
					ky1,
					iy = oy * g->s[AH] - g->pb[AH];

		nn_nchwc_tap_range(iy, g->d[AH], g->k[AH], h, &ky0, &ky1);
		for (int64_t ox = 0; ox < ow; ox++)
		{
			int64_t		kx0,
						kx1,
						ix = ox * g->s[AW] - g->pb[AW];
			__m512		v = _mm512_set1_ps(-FLT_MAX);

			nn_nchwc_tap_range(ix, g->d[AW], g->k[AW], w, &kx0, &kx1);
			for (int64_t ky = ky0; ky < ky1; ky++)
				for (int64_t kx = kx0; kx < kx1; kx++)
				{
					__m512		u = _mm512_loadu_ps(xp + ((iy + ky * g->d[AH]) * w + ix + kx * g->d[AW]) * BLK);

					/* MaxPool's comparison (pool.c): u > v ? u : v in tap order, from -FLT_MAX */
					v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(u, v, _CMP_GT_OQ), u);
				}
			_mm512_storeu_ps(yp + ox * BLK, v);
		}
	}
}

static ox_code
nchwc_max_pool_run(ox_kernel_ctx *ctx)
{
	const nchwc_pool_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	nn_geom		g;
	pool_job	j;
	int64_t		dims[5];
	ox_tensor  *y;

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "onnx_pg.nchwc MaxPool: not prepared");
	if (!nn_nchwc_have_avx512("MaxPool", ctx->st))
		return ctx->st->code;
	OX_TRY(nn_nchwc_check_blocked("MaxPool", "X", x, ctx->st));
	OX_TRY(nn_window_resolve(&s->win, "onnx_pg.nchwc MaxPool", 2, x->dims + 2, NULL, &g, ctx->st));
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	dims[2] = g.out[AH];
	dims[3] = g.out[AW];
	dims[4] = BLK;
	if (!(y = ox_out_tensor(ctx, 0, OX_FLOAT, 5, dims)))
		return ctx->st->code != OX_OK ? ctx->st->code : OX_OUT_OF_MEMORY;
	j.g = &g;
	j.x = x->data;
	j.y = y->data;
	if (ox_tensor_numel(y) > 0)
		ox_parallel_for(ctx, dims[0] * dims[1] * dims[2], 1, max_pool_task, &j);
	return OX_OK;
}

typedef struct gap_job
{
	const float *x;
	float	   *y;
	int64_t		hw;
} gap_job;

__attribute__((target("avx512f")))
static void
gap_task(void *arg, int64_t begin, int64_t end)
{
	const gap_job *j = arg;

	for (int64_t t = begin; t < end; t++)
	{
		const float *xp = j->x + t * j->hw * BLK;
		__m512		sum = _mm512_setzero_ps();

		for (int64_t p = 0; p < j->hw; p++)
			sum = _mm512_add_ps(sum, _mm512_loadu_ps(xp + p * BLK));
		_mm512_storeu_ps(j->y + t * BLK, _mm512_div_ps(sum, _mm512_set1_ps((float) j->hw)));
	}
}

static ox_code
nchwc_global_average_pool_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	gap_job		j;
	int64_t		dims[5];
	ox_tensor  *y;

	if (!nn_nchwc_have_avx512("GlobalAveragePool", ctx->st))
		return ctx->st->code;
	OX_TRY(nn_nchwc_check_blocked("GlobalAveragePool", "X", x, ctx->st));
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	dims[2] = 1;
	dims[3] = 1;
	dims[4] = BLK;
	if (!(y = ox_out_tensor(ctx, 0, OX_FLOAT, 5, dims)))
		return ctx->st->code != OX_OK ? ctx->st->code : OX_OUT_OF_MEMORY;
	j.x = x->data;
	j.y = y->data;
	j.hw = x->dims[2] * x->dims[3];
	if (j.hw == 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "onnx_pg.nchwc GlobalAveragePool: X has no pixels");
	ox_parallel_for(ctx, dims[0] * dims[1], 1, gap_task, &j);
	return OX_OK;
}

bool
ox_kernels_nchwc_available(void)
{
	return nn_conv_fast_isa() == NN_ISA_AVX512;
}

const ox_kernel_def ox_kernels_nchwc[] = {
	{OX_NCHWC_DOMAIN, "ReorderInput", 1, NULL, reorder_input_run, NULL},
	{OX_NCHWC_DOMAIN, "ReorderOutput", 1, NULL, reorder_output_run, NULL},
	{OX_NCHWC_DOMAIN, "Conv", 1, nchwc_conv_prepare, nchwc_conv_run, nchwc_conv_free},
	{OX_NCHWC_DOMAIN, "DepthwiseConv", 1, nn_nchwc_depthwise_prepare, nn_nchwc_depthwise_run, nn_nchwc_depthwise_free},
	{OX_NCHWC_DOMAIN, "MaxPool", 1, nchwc_max_pool_prepare, nchwc_max_pool_run, nchwc_pool_free},
	{OX_NCHWC_DOMAIN, "GlobalAveragePool", 1, NULL, nchwc_global_average_pool_run, NULL},
};
const int	ox_kernels_nchwc_count = OX_KERNEL_COUNT(ox_kernels_nchwc);
