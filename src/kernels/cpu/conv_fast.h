/*
 * conv_fast.h
 *	  Private header of the fast float32 convolution paths, used by conv.c:
 *	   - conv_gemm.c: implicit GEMM (im2col unrolled a sliver at a time),
 *		 output pixels in vector lanes; the general path (AVX-512, AVX2);
 *	   - conv_pixels.c: output channels in vector lanes, pixels broadcast,
 *		 for planes of at most 64 outputs (AVX-512);
 *	   - conv_winograd.c: Winograd F(4x4, 3x3) for 3x3 stride-1 layers on
 *		 large planes (AVX-512);
 *	   - conv_winograd2.c: Winograd F(2x2, 3x3) on the pixel-broadcast
 *		 kernel for mid-sized planes (AVX-512);
 *	   - conv_depthwise_lanes.c: depthwise, channels in vector lanes
 *		 (AVX-512, no channel multiplier, 2-D);
 *	   - conv_depthwise_lanes8.c: the same with eight lanes (AVX2);
 *		 both compile conv_depthwise_lanes_kernels.h;
 *	   - conv_depthwise.c: the other depthwise layers, one input channel
 *		 per group (AVX-512, AVX2).
 *
 * Every path finishes each output element while it is still in registers
 * (or, for Winograd, in the output transform): the bias, an optional
 * residual Z (com.microsoft FusedConv's fourth input) and the fused
 * activation are applied there, instead of in extra passes over the output.
 *
 * They need AVX2+FMA or AVX-512 (chosen once by cpuid); on other machines
 * nn_conv_fast_isa() returns NN_ISA_NONE and conv.c keeps its portable
 * im2col + GEMM path, which defines the semantics.  With AVX2 only, the
 * AVX-512 paths fall back to the GEMM path.
 */
#ifndef OX_KERNELS_CPU_CONV_FAST_H
#define OX_KERNELS_CPU_CONV_FAST_H

#include "kernels/cpu/nn.h"
#include "kernels/cpu/fused_act.h"

#include <immintrin.h>
#include <math.h>

typedef enum nn_isa
{
	NN_ISA_NONE = 0,
	NN_ISA_AVX2,				/* AVX2 + FMA */
	NN_ISA_AVX512				/* AVX-512F + FMA */
} nn_isa;

/* the instruction set the fast paths use on this machine */
nn_isa		nn_conv_fast_isa(void);

/*
 * Tests only: run the fast paths with a lower instruction set than cpuid
 * allows (NN_ISA_NONE disables them), so that every variant can be checked
 * on one machine.  Returns the previous choice.  Not thread-safe: call it
 * before any session runs.
 */
nn_isa		nn_conv_fast_force_isa(nn_isa isa);

/* what is applied to each output element: y = act(conv + bias[m] + z) */
typedef struct nn_conv_epi
{
	const float *bias;			/* [M], or NULL */
	const float *z;				/* the shape of Y, or NULL */
	nn_activation act;
} nn_conv_epi;

/*
 * Constant weights are packed once per session, in the layout of the path
 * that will run them (chosen from the shapes shape inference knows; other
 * shapes at run time pack for this call):
 *	 - GEMM (conv_gemm.c): W [M, C/group, k...] per group in tiles of
 *	   NN_CONV_MR output channels, each K-major ([K][MR], zero rows past
 *	   M/group): data [group][tiles][kk][MR];
 *	 - WINOGRAD (conv_winograd.c): the same layout for the transformed
 *	   filters, 36 "groups" (points of the 6 x 6 transform domain) of an
 *	   M x C matrix;
 *	 - PIXELS (conv_pixels.c): blocks of NN_CONV_CB output channels, each
 *	   K-major: data [ceil(M / CB)][kk][CB], zeros past M;
 *	 - WINOGRAD2 (conv_winograd2.c): F(2x2, 3x3) transformed filters in the
 *	   PIXELS layout, one per point of the 4 x 4 transform domain:
 *	   data [16][ceil(M / CB)][C][CB];
 *	 - ROWS (conv_gemm.c, nn_conv_rows_applies): a 1x1 kernel over a 1x1
 *	   input plane, unpadded, group 1 (a squeeze-and-excitation block's
 *	   layers after its global pooling): Y [N, M] = X [N, C] W^T, W^T packed
 *	   as the GEMM's B (ox_sgemm_pack_b), so that a batch of 1 is the GEMM's
 *	   matrix-vector product.  data is NULL.
 */
#define NN_CONV_MR 8
#define NN_CONV_CB 48

typedef enum nn_convw_kind
{
	NN_CONVW_GEMM = 0,
	NN_CONVW_WINOGRAD,
	NN_CONVW_PIXELS,
	NN_CONVW_WINOGRAD2,
	NN_CONVW_ROWS
} nn_convw_kind;

struct ox_sgemm_packed;

typedef struct nn_convw
{
	nn_convw_kind kind;
	int64_t		group;
	int64_t		mg;				/* output channels per group */
	int64_t		kk;				/* reduction length: C/group * prod(k) */
	int64_t		tiles;			/* ceil(mg / NN_CONV_MR) (PIXELS: ceil(mg / CB)) */
	const void *src;			/* the weights it was packed from */
	float	   *data;
	size_t		bytes;
	struct ox_sgemm_packed *rows;	/* ROWS: W^T packed for the GEMM */
	bool		rows_finite;	/* ROWS: W holds no infinity or NaN */
} nn_convw;

/* pack W for the GEMM path (float, [m, kk] per group); NULL + status on failure */
nn_convw   *nn_convw_pack(int64_t group, int64_t m, int64_t kk, const float *w, ox_status *st);
/* pack W for whichever path runs shape cs (depthwise: NULL, no status) */
nn_convw   *nn_convw_pack_for(const nn_conv_shape *cs, const float *w, ox_status *st);
void		nn_convw_free(nn_convw *p);

/*
 * One tile of the AVX-512 GEMM without epilogue, for the Winograd path:
 * C[rows x cols] = (C +) A[kc][MR] * B[kc][48], cols <= 48, rows <= MR.
 */
void		nn_conv_tile_avx512(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
								int rows, int cols, bool accumulate);

/*
 * The im2col matrix of one image and group, unrolled a block at a time
 * (conv_gemm.c): row k = (input channel, kernel tap), column p = output
 * pixel.  nn_unroll_block writes rows [k0, k0 + kc) of columns
 * [p0, p0 + cols) to dst[k - k0][nr] (zeros past cols; cols <= 48).
 */
typedef struct nn_unroll
{
	const nn_geom *g;
	bool		pointwise;		/* 1x1, stride 1, no padding: rows are copies */
	const int64_t *lo;			/* per kernel column: output columns whose input */
	const int64_t *hi;			/* lies inside the row */
} nn_unroll;

ox_code		nn_unroll_init(nn_unroll *u, const nn_geom *g, ox_status *st);
void		nn_unroll_free(nn_unroll *u);
void		nn_unroll_block(const nn_unroll *u, const float *x, int64_t p0, int cols, int64_t k0,
							int64_t kc, int nr, float *dst);

/* ---- small outputs (conv_pixels.c) ---- */

/* pixels per group of the pixel-broadcast kernel */
#define NN_CONV_PX 7

/*
 * The pixel-broadcast micro-kernel (AVX-512): acc[PX][CB] (+)= b[kc][PX] x
 * w[kc][CB]; w, b and acc 64-byte aligned.  pf: NULL, or kc x CB floats
 * (the next weight slice) to prefetch into L2 along the way.
 */
void		nn_conv_px_tile(int64_t kc, const float *w, const float *b, float *acc, bool accumulate,
							const float *pf);

/* whether the pixel-broadcast path takes this convolution */
bool		nn_conv_pixels_applies(const nn_conv_shape *cs);
/* a 1x1 kernel over a 1x1 input plane, unpadded, group 1: the ROWS path (conv_gemm.c) */
bool		nn_conv_rows_applies(const nn_conv_shape *cs);
nn_convw   *nn_conv_pixels_pack(int64_t m, int64_t kk, const float *w, ox_status *st);
ox_code		nn_conv_pixels_f32(ox_kernel_ctx *ctx, const nn_conv_shape *cs, const nn_convw *pw,
							   const float *x, const nn_conv_epi *epi, float *y, ox_status *st);

/* ---- Winograd F(2x2, 3x3) on the pixel-broadcast kernel (conv_winograd2.c) ---- */

bool		nn_winograd2_applies(const nn_conv_shape *cs);
nn_convw   *nn_winograd2_pack(int64_t m, int64_t c, const float *w, ox_status *st);
ox_code		nn_conv_winograd2_f32(ox_kernel_ctx *ctx, const nn_conv_shape *cs, const nn_convw *pw,
								  const float *x, const nn_conv_epi *epi, float *y, ox_status *st);

/* ---- Winograd F(4x4, 3x3) (conv_winograd.c) ---- */

/*
 * Whether the Winograd path takes this convolution: 2-D, 3x3, stride 1,
 * dilation 1, one group, AVX-512, and large enough that the transforms pay.
 */
bool		nn_winograd_applies(const nn_conv_shape *cs);
/* transform W [M, C, 3, 3] for the Winograd path */
nn_convw   *nn_winograd_pack(int64_t m, int64_t c, const float *w, ox_status *st);
/* Y = act(conv(X, W) + B + Z) through F(4x4, 3x3); pw from nn_winograd_pack */
ox_code		nn_conv_winograd_f32(ox_kernel_ctx *ctx, const nn_conv_shape *cs, const nn_convw *pw,
								 const float *x, const nn_conv_epi *epi, float *y, ox_status *st);

/* whether the depthwise path handles this shape (else the GEMM path does) */
bool		nn_conv_is_depthwise(const nn_conv_shape *cs);

/*
 * Y = act(conv(X, W) + B + Z) in float32 through the fast paths.  Requires
 * nn_conv_fast_isa() != NN_ISA_NONE.  pw may be NULL (W is then packed for
 * this call); it is ignored by the depthwise path, which reads W directly.
 * The path is the one pw was packed for when it still applies to the shape
 * (else W is packed again for this call).
 * Threads come from ctx (NULL: one thread).
 */
ox_code		nn_conv_fast_f32(ox_kernel_ctx *ctx, const nn_conv_shape *cs, const nn_convw *pw,
							 const float *x, const float *w, const nn_conv_epi *epi, float *y,
							 ox_status *st);

/*
 * Depthwise with channels in vector lanes (conv_depthwise_lanes.c, AVX-512):
 * one output channel per input channel, 2-D (or 1-D), a padded plane of at
 * most 64K pixels.  nn_conv_depthwise_f32 hands such layers to it.
 */
bool		nn_dw_lanes_applies(const nn_conv_shape *cs);

/*
 * What the two channels-in-lanes paths (16 and 8 lanes) share: the padded
 * block's extents and where each output's window and each tap lie in it,
 * the zeroing of its borders, and each thread's buffers (kept between
 * calls, zeroed when they grow).
 */
typedef struct nn_dw_lanes_plan
{
	const nn_geom *g;
	int			lanes;
	int64_t		ph,
				pw;				/* padded plane */
	int64_t    *in_off;			/* [out_size] window origin of each output in the buffer */
	int64_t    *tap_off;		/* [k_size] offset of each tap from the window origin */
} nn_dw_lanes_plan;

ox_code		nn_dw_lanes_plan_make(const nn_conv_shape *cs, int lanes, nn_dw_lanes_plan *pl, ox_status *st);
void		nn_dw_lanes_plan_free(nn_dw_lanes_plan *pl);
void		nn_dw_lanes_zero_borders(const nn_dw_lanes_plan *pl, float *buf);
float	   *nn_dw_lanes_buffers(size_t floats);
ox_code		nn_conv_dw_lanes_f32(ox_kernel_ctx *ctx, const nn_conv_shape *cs, const float *x,
								 const float *w, const nn_conv_epi *epi, float *y, ox_status *st);

/*
 * The same with eight channels in the lanes of an AVX2 vector
 * (conv_depthwise_lanes8.c): machines without AVX-512, 2-D layers with
 * stride 1 along the row or an output plane of at most 28 x 28.
 */
bool		nn_dw_lanes8_applies(const nn_conv_shape *cs);
ox_code		nn_conv_dw_lanes8_f32(ox_kernel_ctx *ctx, const nn_conv_shape *cs, const float *x,
								  const float *w, const nn_conv_epi *epi, float *y, ox_status *st);

/* depthwise path (conv_depthwise.c): one input channel per group */
ox_code		nn_conv_depthwise_f32(ox_kernel_ctx *ctx, const nn_conv_shape *cs, const float *x,
								  const float *w, const nn_conv_epi *epi, float *y, ox_status *st);

/*
 * Whether the paths' epilogues compute the activation in vector registers
 * (nn_act_avx512 below, and conv_gemm.c's and conv_depthwise.c's AVX2
 * twins); the others run nn_activation_apply_row_f32 on the stored output.
 */
static inline bool
nn_act_in_registers(const nn_activation *act)
{
	return act->kind == NN_ACT_NONE || act->kind == NN_ACT_RELU || act->kind == NN_ACT_LEAKY_RELU ||
		act->kind == NN_ACT_CLIP || act->kind == NN_ACT_HARD_SIGMOID || act->kind == NN_ACT_HARD_SWISH;
}

/*
 * The activations of the blocked convolutions (conv_nchwc_vec.h's nv_act):
 * those above, and Sigmoid and SiLU through vmath's exp.
 */
static inline bool
nn_act_in_nchwc_registers(const nn_activation *act)
{
	return nn_act_in_registers(act) || act->kind == NN_ACT_SIGMOID || act->kind == NN_ACT_SILU;
}

/*
 * Transpose sixteen vectors in place: r[i] lane j becomes r[j] lane i.
 * Pairs of rows interleave by 32 bits, then by 64 bits, then the 128-bit
 * lanes are exchanged twice.
 */
__attribute__((target("avx512f")))
static inline void
nn_transpose16(__m512 r[16])
{
	__m512		u[16];

	for (int gr = 0; gr < 4; gr++)
	{
		__m512		t0 = _mm512_unpacklo_ps(r[4 * gr], r[4 * gr + 1]),
					t1 = _mm512_unpackhi_ps(r[4 * gr], r[4 * gr + 1]),
					t2 = _mm512_unpacklo_ps(r[4 * gr + 2], r[4 * gr + 3]),
					t3 = _mm512_unpackhi_ps(r[4 * gr + 2], r[4 * gr + 3]);

		/* u[4 gr + e], 128-bit lane L: rows 4 gr .. 4 gr + 3 of column 4 L + e */
		u[4 * gr] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
		u[4 * gr + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
		u[4 * gr + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
		u[4 * gr + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
	}
	for (int e = 0; e < 4; e++)
	{
		__m512		v0 = _mm512_shuffle_f32x4(u[e], u[4 + e], 0x88),
					v1 = _mm512_shuffle_f32x4(u[e], u[4 + e], 0xDD),
					v2 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0x88),
					v3 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0xDD);

		r[e] = _mm512_shuffle_f32x4(v0, v2, 0x88);
		r[4 + e] = _mm512_shuffle_f32x4(v1, v3, 0x88);
		r[8 + e] = _mm512_shuffle_f32x4(v0, v2, 0xDD);
		r[12 + e] = _mm512_shuffle_f32x4(v1, v3, 0xDD);
	}
}

/*
 * Whether the activation is a clamp to [*lo, *hi] (None: -inf..+inf, Relu:
 * 0..+inf, Clip), which an epilogue can apply as max(lo, v) then min(hi, v)
 * with bounds made once: the same results as nn_act_avx512, NaN included
 * (max(lo, NaN) and min(hi, NaN) return the NaN).
 */
static inline bool
nn_act_as_clamp(const nn_activation *act, float *lo, float *hi)
{
	*lo = act->kind == NN_ACT_RELU ? 0.0f : act->kind == NN_ACT_CLIP ? act->p0 : -INFINITY;
	*hi = act->kind == NN_ACT_CLIP ? act->p1 : INFINITY;
	return act->kind == NN_ACT_NONE || act->kind == NN_ACT_RELU || act->kind == NN_ACT_CLIP;
}

/*
 * The fused activation on 16 floats, for the AVX-512 paths' epilogues.  The
 * comparisons keep the scalar definitions' NaN behaviour (fused_act.c):
 * max(a, b) returns b unless a > b.
 */
__attribute__((target("avx512f")))
static inline __m512
nn_act_avx512(const nn_activation *act, __m512 v)
{
	switch (act->kind)
	{
		case NN_ACT_RELU:
			return _mm512_max_ps(_mm512_setzero_ps(), v);
		case NN_ACT_LEAKY_RELU:
			return _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_NGE_UQ),
									  v, _mm512_set1_ps(act->p0));
		case NN_ACT_CLIP:
			return _mm512_min_ps(_mm512_set1_ps(act->p1), _mm512_max_ps(_mm512_set1_ps(act->p0), v));
		case NN_ACT_HARD_SIGMOID:
			v = _mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(act->p0), v), _mm512_set1_ps(act->p1));
			return _mm512_min_ps(_mm512_set1_ps(1.0f), _mm512_max_ps(_mm512_setzero_ps(), v));
		case NN_ACT_HARD_SWISH:
			{
				/* fused, as the standalone HardSwish's AVX-512 build computes it */
				__m512		h = _mm512_fmadd_ps(v, _mm512_set1_ps(1.0f / 6.0f), _mm512_set1_ps(0.5f));

				h = _mm512_min_ps(_mm512_set1_ps(1.0f), _mm512_max_ps(_mm512_setzero_ps(), h));
				return _mm512_mul_ps(v, h);
			}
		default:
			return v;
	}
}

/*
 * One output of a 3x3 convolution, directly: bias plus x * w over the
 * channels and the taps inside the plane, in that order.  The Winograd
 * paths (conv_winograd.c, conv_winograd2.c) compute again this way the
 * outputs their transforms made non-finite.  x: the image's first channel;
 * w: the output channel's [C, 3, 3] weights.  Always inlined, so that it
 * is compiled for its caller's instruction set (the same contractions into
 * fused multiply-adds as the loops it replaced).
 */
static inline __attribute__((always_inline)) float
nn_conv3x3_direct(const nn_conv_shape *cs, const float *x, const float *w, float bias, int64_t oh, int64_t ow)
{
	const nn_geom *g = &cs->g;
	float		sum = bias;

	for (int64_t c = 0; c < cs->c; c++)
	{
		const float *xc = x + c * g->in_size;

		for (int kh = 0; kh < 3; kh++)
		{
			int64_t		ih = oh - g->pb[1] + kh;

			if (ih < 0 || ih >= g->in[1])
				continue;
			for (int kw = 0; kw < 3; kw++)
			{
				int64_t		iw = ow - g->pb[2] + kw;

				if (iw >= 0 && iw < g->in[2])
					sum += w[c * 9 + kh * 3 + kw] * xc[ih * g->in[2] + iw];
			}
		}
	}
	return sum;
}

#endif							/* OX_KERNELS_CPU_CONV_FAST_H */
