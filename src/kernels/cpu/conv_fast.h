/*
 * conv_fast.h
 *	  Private header of the fast float32 convolution paths (conv_gemm.c,
 *	  conv_depthwise.c), used by conv.c.
 *
 * Both paths finish every output element while it is still in registers:
 * the bias, an optional residual Z (com.microsoft FusedConv's fourth input)
 * and the fused activation are applied right after the last reduction step,
 * instead of in extra passes over the output.
 *
 * They need AVX2+FMA or AVX-512 (chosen once by cpuid); on other machines
 * nn_conv_fast_isa() returns NN_ISA_NONE and conv.c keeps its portable
 * im2col + GEMM path, which defines the semantics.
 */
#ifndef OX_KERNELS_CPU_CONV_FAST_H
#define OX_KERNELS_CPU_CONV_FAST_H

#include "kernels/cpu/nn.h"
#include "kernels/cpu/fused_act.h"

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
 * Weights [M, C/group, k...] of a grouped convolution packed for the GEMM
 * path: per group, tiles of NN_CONV_MR output channels, each K-major
 * ([K][MR], zero rows past M/group).
 *
 * The Winograd path (conv_winograd.c) keeps its transformed weights in the
 * same layout: 36 "groups" (one per point of the 6 x 6 transform domain)
 * of an M x C matrix.
 */
#define NN_CONV_MR 8

typedef struct nn_convw
{
	bool		winograd;		/* F(4x4, 3x3) transformed weights */
	int64_t		group;
	int64_t		mg;				/* output channels per group */
	int64_t		kk;				/* reduction length: C/group * prod(k) */
	int64_t		tiles;			/* ceil(mg / NN_CONV_MR) */
	const void *src;			/* the weights it was packed from */
	float	   *data;			/* [group][tiles][kk][MR] */
	size_t		bytes;
} nn_convw;

/* pack W (float, [m, kk/... ] as described above); NULL + status on failure */
nn_convw   *nn_convw_pack(int64_t group, int64_t m, int64_t kk, const float *w, ox_status *st);
void		nn_convw_free(nn_convw *p);

/*
 * One tile of the AVX-512 GEMM without epilogue, for the Winograd path:
 * C[rows x cols] = (C +) A[kc][MR] * B[kc][48], cols <= 48, rows <= MR.
 */
void		nn_conv_tile_avx512(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
								int rows, int cols, bool accumulate);

/* ---- Winograd F(4x4, 3x3) (conv_winograd.c) ---- */

/*
 * Whether the Winograd path takes this convolution: 2-D, 3x3, stride 1,
 * dilation 1, one group, AVX-512, and large enough that the transforms pay
 * (x_h, x_w: the input's spatial size, c and m its channels).
 */
bool		nn_winograd_fits(int64_t c, int64_t m, int64_t x_h, int64_t x_w);
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
 * Winograd-transformed pw select the Winograd path (when it applies to the
 * shape; otherwise W is packed for the GEMM path for this call).
 * Threads come from ctx (NULL: one thread).
 */
ox_code		nn_conv_fast_f32(ox_kernel_ctx *ctx, const nn_conv_shape *cs, const nn_convw *pw,
							 const float *x, const float *w, const nn_conv_epi *epi, float *y,
							 ox_status *st);

/* depthwise path (conv_depthwise.c): one input channel per group */
ox_code		nn_conv_depthwise_f32(ox_kernel_ctx *ctx, const nn_conv_shape *cs, const float *x,
								  const float *w, const nn_conv_epi *epi, float *y, ox_status *st);

#endif							/* OX_KERNELS_CPU_CONV_FAST_H */
