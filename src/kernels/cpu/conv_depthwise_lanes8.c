/*
 * conv_depthwise_lanes8.c
 *	  Depthwise float32 convolution with eight channels in the lanes of an
 *	  AVX2 vector: conv_depthwise_lanes.c's layout for machines without
 *	  AVX-512, on the layers where it wins.
 *
 * The pixels-in-lanes loops of conv_depthwise.c spend most of a small
 * plane's time on per-plane work (the padded copy, the units' setup, the
 * stores of short rows) rather than on multiply-adds: a 7x7 plane is 49
 * outputs, 63 vector multiply-adds for a 3x3 kernel, and took about 280
 * cycles (EPYC, Zen 3).  Here a vector holds one pixel of eight channels,
 * so every tap of every output is one multiply-add on a full vector,
 * whatever the width or stride.  The data stays NCHW between layers, so
 * each block of eight channels is transposed on the way in (eight
 * consecutive pixels of the plane at a time, across row ends, into a
 * zero-bordered [padded H][padded W][8] buffer) and on the way out (a
 * chunk of outputs at a time, while Z and the activation are applied).
 * Strided layers with large planes keep the pixels-in-lanes loops, where
 * the transposes cost more than they save.
 *
 * Threads split the (image, block of eight channels) pairs.  The kernels
 * are conv_depthwise_lanes_kernels.h's, compiled here for eight lanes.
 */
#include "kernels/cpu/conv_fast.h"
#include "kernels/cpu/simd_avx2.h"

#include <immintrin.h>
#include <string.h>

/*
 * Which layers take this path, measured against the pixels-in-lanes loops
 * on MobileNet-v2's layers (one thread, EPYC Zen 3): with stride 1, every
 * plane (0.59 at 7x7, 0.73 at 14x14, 0.76 at 28x28, 0.83 at 56x56, 0.92 at
 * 112x112); with stride 2 along the row only output planes up to 28x28
 * (the same time at 28x28; at 56x56, 1.19: the split rows of
 * conv_depthwise.c transpose nothing).
 */
#define LANES8_MAX_STRIDED_OUT 784

bool
nn_dw_lanes8_applies(const nn_conv_shape *cs)
{
	const nn_geom *g = &cs->g;
	int64_t		ph = g->in[1] + g->pb[1] + g->pe[1],
				pw = g->in[2] + g->pb[2] + g->pe[2];

	if (nn_conv_fast_isa() != NN_ISA_AVX2 || cs->group != cs->c || cs->m != cs->c)
		return false;
	/* 2-D (or 1-D): one plane along the first spatial axis */
	if (g->in[0] != 1 || g->k[0] != 1 || g->pb[0] != 0 || g->pe[0] != 0)
		return false;
	if (g->s[2] != 1 && g->out_size > LANES8_MAX_STRIDED_OUT)
		return false;
	/* the padded block buffer of one thread (pads come from the model): at most 1M floats */
	return ph <= (1 << 20) / 8 && pw <= (1 << 20) / 8 && ph * pw * 8 <= (1 << 20);
}

#define DW_W 8
#include "kernels/cpu/conv_depthwise_lanes_kernels.h"
#undef DW_W
