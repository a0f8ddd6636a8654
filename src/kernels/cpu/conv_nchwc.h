/*
 * conv_nchwc.h
 *	  What the channel-blocked (NCHWc) kernels share: conv_nchwc.c (the
 *	  operators' common checks, and each call handed to the kernels of its
 *	  block size) and the templates conv_nchwc_kernels.h (reorders,
 *	  convolution, pooling) and conv_nchwc_dw_kernels.h (depthwise), compiled
 *	  for blocks of 16 channels (conv_nchwc_avx512.c) and of 8
 *	  (conv_nchwc_avx2.c).
 */
#ifndef OX_KERNELS_CPU_CONV_NCHWC_H
#define OX_KERNELS_CPU_CONV_NCHWC_H

#include "kernels/cpu/conv_fast.h"
#include "kernels/cpu/simd_avx2.h"
#include "kernels/cpu/vmath_avx2.h"
#include "kernels/cpu/vmath_avx512.h"

/*
 * Up to n of the *left lines from *pf (a pass's next weights) prefetched
 * into L2, both moved past them.  The kernels spread a tile's share over
 * its input blocks, a few lines each: all at the tile's start, a burst of
 * them from L3 filled the core's miss buffers and stalled the tile behind
 * them (conv_nchwc_kernels.h, TILE_PREFETCH_SOME; conv_nchwc_winograd.c).
 */
static inline void
nn_nchwc_prefetch_l2(const float **pf, int64_t *left, int64_t n)
{
	for (int64_t i = 0; i < n && *left > 0; i++, (*left)--, *pf += 16)
		_mm_prefetch((const char *) *pf, _MM_HINT_T1);
}

/*
 * The blocked kernels' activation on one vector (nn_act_in_nchwc_registers):
 * the shared epilogues' (nn_act_avx512, nn_act_avx2), and Sigmoid and SiLU
 * through vmath.  With AVX-512 these are the standalone Sigmoid's own
 * vectors (ox_sigmoid16) and Mul's product, so absorbing EfficientNet's
 * Sigmoid-then-Mul changes no bit.
 */
__attribute__((target("avx512f,fma")))
static inline __m512
nn_nchwc_act16(const nn_activation *act, __m512 v)
{
	if (act->kind == NN_ACT_SIGMOID)
		return ox_sigmoid16(v);
	if (act->kind == NN_ACT_SILU)
		return _mm512_mul_ps(v, ox_sigmoid16(v));
	return nn_act_avx512(act, v);
}

__attribute__((target("avx2,fma")))
static inline __m256
nn_nchwc_act8(const nn_activation *act, __m256 v)
{
	if (act->kind == NN_ACT_SIGMOID)
		return ox_sigmoid8(v);
	if (act->kind == NN_ACT_SILU)
		return _mm256_mul_ps(v, ox_sigmoid8(v));
	return nn_act_avx2(act, v);
}

/* the spatial axes of a 2-D nn_geom (right-aligned in NN_MAX_SPATIAL) */
#define AH (NN_MAX_SPATIAL - 2)
#define AW (NN_MAX_SPATIAL - 1)

/*
 * The channels per block this machine's kernels use: 16 with AVX-512, 8
 * with AVX2 and FMA (onnxruntime's NCHWc block on each), 0 without: the
 * layout pass then leaves graphs alone.
 */
static inline int
nn_nchwc_block(void)
{
	nn_isa		isa = nn_conv_fast_isa();

	return isa == NN_ISA_AVX512 ? 16 : isa == NN_ISA_AVX2 ? 8 : 0;
}

/* true when this CPU runs blocks of blk channels; else false with st saying that op needs it */
static inline bool
nn_nchwc_have(int blk, const char *op, ox_status *st)
{
	int			have = nn_nchwc_block();

	if (have != 0 && (blk == 8 || (blk == 16 && have == 16)))
		return true;
	if (blk == 16)
		ox_fail(st, OX_UNSUPPORTED, "onnx_pg.nchwc %s needs AVX-512 for blocks of 16 channels", op);
	else
		ox_fail(st, OX_UNSUPPORTED, "onnx_pg.nchwc %s needs AVX2 or AVX-512", op);
	return false;
}

/*
 * x (input `what` of op) is a float tensor [N, CB, H, W, B], B the block:
 * blk (which the caller has checked this CPU runs), or, when blk is 0 (a
 * kernel that runs either), 8 or 16 and one this CPU runs
 */
static inline ox_code
nn_nchwc_check_blocked(const char *op, const char *what, const ox_tensor *x, int blk, ox_status *st)
{
	if (!x)
		return ox_fail(st, OX_INVALID_ARGUMENT, "onnx_pg.nchwc %s: input %s is required", op, what);
	if (x->dtype != OX_FLOAT || x->rank != 5 ||
		(blk ? x->dims[4] != blk : x->dims[4] != 8 && x->dims[4] != 16))
	{
		if (blk)
			return ox_fail(st, OX_INVALID_ARGUMENT,
						   "onnx_pg.nchwc %s: %s must be a float tensor [N, C/%d, H, W, %d]", op, what, blk, blk);
		return ox_fail(st, OX_INVALID_ARGUMENT,
					   "onnx_pg.nchwc %s: %s must be a float tensor [N, C/B, H, W, B] with B 8 or 16", op, what);
	}
	return blk || nn_nchwc_have((int) x->dims[4], op, st) ? OX_OK : st->code;
}

/* taps k in [lo, hi) with 0 <= base + k * step < n */
static inline void
nn_nchwc_tap_range(int64_t base, int64_t step, int64_t taps, int64_t n, int64_t *lo, int64_t *hi)
{
	int64_t		l = 0,
				h = taps;

	while (l < h && base + l * step < 0)
		l++;
	while (h > l && base + (h - 1) * step >= n)
		h--;
	*lo = l;
	*hi = h;
}

/*
 * A blocked convolution's bias, B [m] padded with zeros to the lanes of its
 * output blocks: made once at prepare when B is a constant or absent (a
 * copy per run cost MobileNet-v2 half a microsecond a node, with the other
 * thread waiting for the loop), else per run.
 */
typedef struct nn_nchwc_bias
{
	int64_t		len;			/* floats: the lanes of the output blocks */
	float	   *padded;			/* the padded bias, or NULL: made per run */
	const void *src;			/* the constant's data it came from; NULL without B */
} nn_nchwc_bias;

/* conv_nchwc.c: the shared beginnings of a blocked convolution's prepare and run */
ox_code		nn_nchwc_prepare_begin(ox_prepare_ctx *pc, const char *op, const ox_tensor **w, nn_window *win,
								   nn_activation *act);
ox_code		nn_nchwc_prepare_bias(ox_prepare_ctx *pc, const char *op, int64_t m, int64_t len,
								  nn_nchwc_bias *pb);
void		nn_nchwc_bias_free(nn_nchwc_bias *pb);
ox_code		nn_nchwc_conv_begin(ox_kernel_ctx *ctx, const char *op, int blk, const nn_window *win,
								int64_t group, int64_t c, int64_t cb, int64_t m, const void *w_data,
								bool nchw_input, const nn_nchwc_bias *pb, nn_conv_shape *cs, ox_tensor **y,
								const float **z_data, float **bias);
void		nn_nchwc_bias_done(const nn_nchwc_bias *pb, float *bias);
bool		nn_nchwc_fma_bcast(void);
int			nn_nchwc_force_fma_bcast(int on);

/*
 * conv_nchwc_winograd.c: 3x3 stride-1 convolutions by F(4x4, 3x3), the
 * transformed weights packed once per session from W [m, c, 3, 3] (which
 * must outlive them: non-finite outputs are recomputed from it)
 */
typedef struct nn_nchwc_wino nn_nchwc_wino;
nn_nchwc_wino *nn_nchwc_winograd_pack(const ox_prepare_ctx *pc, int64_t m, int64_t c, const float *w);
void		nn_nchwc_winograd_free(nn_nchwc_wino *p);
ox_code		nn_nchwc_winograd_run(ox_kernel_ctx *ctx, const nn_nchwc_wino *p, const nn_conv_shape *cs,
								  const float *x, const float *z, const float *bias,
								  const nn_activation *act, float *y);

typedef struct nn_nchwc_conv_state
{
	int			blk;			/* channels per block: the kernels that prepared it */
	nn_window	win;
	nn_activation act;
	int64_t		m,
				c,
				kh,
				kw;
	int64_t		mb,				/* output blocks */
				cb,				/* input blocks (of one convolution group) */
				og;				/* groups of the output blocks of one register tile */
	/*
	 * The convolution's groups (group attribute), each of whole blocks in
	 * and out: mbg output blocks, ogg register-tile groups of them (og =
	 * groups x ogg; none straddles two convolution groups), and X's blocks
	 * x_cb = groups x cb.  1, mb, og and cb for a dense layer.
	 */
	int64_t		groups,
				mbg,
				ogg,
				x_cb;
	size_t		og_floats;		/* packed floats per group (room for a full group) */
	float	   *w;				/* [og][cb][kh][kw][blk ic][nob x blk oc] */
	const void *w_data;			/* the constant's data the packing came from */
	bool		nchw_input;		/* X is plain [N, C, H, W] (an RGB stem's input) */
	bool		winograd;		/* 3x3 stride 1 in blocks of 16 may run by Winograd */
	int64_t		group_bytes;	/* a group's packed weights */
	int64_t		ic_chunk;		/* input blocks per pass over a task's pixels, when chunked */
	int64_t		chunk_past;		/* group_bytes past which input blocks are chunked, whatever the plane */
	nn_nchwc_wino *wino;		/* 3x3 stride 1 in blocks of 16: Winograd's weights, and w is NULL */
	nn_nchwc_bias bias;			/* padded to whole groups of blocks */
} nn_nchwc_conv_state;

typedef struct nn_nchwc_dw_state
{
	int			blk;
	nn_window	win;
	nn_activation act;
	int64_t		c,
				cb,
				kh,
				kw,
				cg;				/* channels a group in and out: 1, or GroupConv's (2 to blk) */
	/* [cb][kh][kw][blk], zero past C; GroupConv's [cb][kh][kw][cg][blk] */
	float	   *w;
	const void *w_data;			/* the constant the packing came from */
	nn_nchwc_bias bias;			/* padded to cb * blk */
} nn_nchwc_dw_state;

/*
 * The kernels of one block size (conv_nchwc_kernels.h and
 * conv_nchwc_dw_kernels.h, compiled as nn_nchwc16_* and nn_nchwc8_*).
 * ReorderInput's block is blk; the others' come from their input or state.
 */
#define NN_NCHWC_DECLARE(B) \
	ox_code		nn_nchwc##B##_reorder_input_run(ox_kernel_ctx *ctx); \
	ox_code		nn_nchwc##B##_reorder_output_run(ox_kernel_ctx *ctx); \
	ox_code		nn_nchwc##B##_conv_prepare(ox_prepare_ctx *pc, nn_nchwc_conv_state *s, const ox_tensor *w); \
	ox_code		nn_nchwc##B##_conv_run(ox_kernel_ctx *ctx); \
	ox_code		nn_nchwc##B##_pool_run(ox_kernel_ctx *ctx, const nn_window *win, bool average, \
										   bool count_include_pad); \
	ox_code		nn_nchwc##B##_global_average_pool_run(ox_kernel_ctx *ctx); \
	ox_code		nn_nchwc##B##_depthwise_prepare(ox_prepare_ctx *pc, nn_nchwc_dw_state *s, const ox_tensor *w); \
	ox_code		nn_nchwc##B##_depthwise_run(ox_kernel_ctx *ctx); \
	ox_code		nn_nchwc##B##_group_prepare(ox_prepare_ctx *pc, nn_nchwc_dw_state *s, const ox_tensor *w); \
	ox_code		nn_nchwc##B##_group_run(ox_kernel_ctx *ctx);
NN_NCHWC_DECLARE(16)
NN_NCHWC_DECLARE(8)

#endif							/* OX_KERNELS_CPU_CONV_NCHWC_H */
