/*
 * conv_depthwise_lanes.c
 *	  Depthwise float32 convolution with channels in vector lanes (AVX-512),
 *	  the path of every 2-D depthwise layer without a channel multiplier.
 *
 * conv_depthwise.c puts sixteen output pixels of one channel in a vector.
 * With stride 2 each tap then needs two loads and a permute, a plane of 7 or
 * 14 columns fills a fraction of the lanes, and the per-plane setup (the
 * padded copy, row by row) costs more than the arithmetic of a small plane.
 * Here a vector holds one pixel of sixteen channels instead: every tap of
 * every output is one FMA on a full vector, whatever the stride or width,
 * as in onnxruntime's NCHWc layout.  The data stays NCHW between layers, so
 * each block of sixteen channels is transposed on the way in (into a
 * zero-bordered [padded H][padded W][16] buffer that holds the padding) and
 * on the way out (a chunk of outputs at a time, while Z and the activation
 * are applied), sixteen by sixteen in registers.  A channel's plane is
 * contiguous in NCHW, so both transposes take sixteen consecutive pixels of
 * the plane, across row ends.  Measured against the pixels-in-lanes loops
 * on MobileNet-v2's layers (one thread): 0.45 (576 channels, 14x14,
 * stride 2) to 0.96 (32 channels, 112x112, stride 1); the whole network
 * 0.90.
 *
 * Threads split the (image, block of sixteen channels) pairs.  The kernels
 * are conv_depthwise_lanes_kernels.h's, compiled here for sixteen lanes and
 * in conv_depthwise_lanes8.c for eight; the plan and buffers below serve
 * both.
 */
#include "kernels/cpu/conv_fast.h"

#include <immintrin.h>
#include <string.h>

/*
 * The padded block buffer (kept by each thread between calls) stays under
 * this many floats, 4 MiB: a padded plane of 64K pixels (256 x 256); larger
 * planes take the pixels-in-lanes loops of conv_depthwise.c.
 */
#define LANES_MAX_BUFFER (1024 * 1024)

bool
nn_dw_lanes_applies(const nn_conv_shape *cs)
{
	const nn_geom *g = &cs->g;
	int64_t		ph = g->in[1] + g->pb[1] + g->pe[1],
				pw = g->in[2] + g->pb[2] + g->pe[2];

	if (nn_conv_fast_isa() != NN_ISA_AVX512 || cs->group != cs->c || cs->m != cs->c)
		return false;
	/* 2-D (or 1-D): one plane along the first spatial axis */
	if (g->in[0] != 1 || g->k[0] != 1 || g->pb[0] != 0 || g->pe[0] != 0)
		return false;
	/* the padded block buffer of one thread */
	return ph <= LANES_MAX_BUFFER / 16 && pw <= LANES_MAX_BUFFER / 16 && ph * pw * 16 <= LANES_MAX_BUFFER;
}

/* each thread's buffers (padded block, output chunk, weight vectors), kept between calls */
static __thread float *tls_lanes;
static __thread size_t tls_lanes_len;

float *
nn_dw_lanes_buffers(size_t floats)
{
	size_t		had = tls_lanes_len;
	float	   *buf = ox_aligned_grow(&tls_lanes, &tls_lanes_len, floats);

	/* stale output rows are transposed (and never stored): keep them defined */
	if (buf && tls_lanes_len != had)
		memset(buf, 0, floats * sizeof(float));
	return buf;
}

void
nn_dw_lanes_zero_borders(const nn_dw_lanes_plan *pl, float *buf)
{
	const nn_geom *g = pl->g;
	size_t		rowb = (size_t) pl->pw * pl->lanes * sizeof(float);

	memset(buf, 0, (size_t) g->pb[1] * rowb);
	memset(buf + (g->pb[1] + g->in[1]) * pl->pw * pl->lanes, 0, (size_t) g->pe[1] * rowb);
	for (int64_t h = g->pb[1]; h < g->pb[1] + g->in[1]; h++)
	{
		float	   *row = buf + h * pl->pw * pl->lanes;

		memset(row, 0, (size_t) g->pb[2] * pl->lanes * sizeof(float));
		memset(row + (g->pb[2] + g->in[2]) * pl->lanes, 0, (size_t) g->pe[2] * pl->lanes * sizeof(float));
	}
}

ox_code
nn_dw_lanes_plan_make(const nn_conv_shape *cs, int lanes, nn_dw_lanes_plan *pl, ox_status *st)
{
	const nn_geom *g = &cs->g;

	memset(pl, 0, sizeof(*pl));
	pl->g = g;
	pl->lanes = lanes;
	pl->ph = g->in[1] + g->pb[1] + g->pe[1];
	pl->pw = g->in[2] + g->pb[2] + g->pe[2];
	if (!(pl->in_off = nn_scratch(g->out_size, sizeof(int64_t), st, "Conv")))
		return st->code;
	if (!(pl->tap_off = nn_scratch(g->k_size, sizeof(int64_t), st, "Conv")))
	{
		nn_dw_lanes_plan_free(pl);
		return st->code;
	}
	for (int64_t oh = 0, p = 0; oh < g->out[1]; oh++)
		for (int64_t ow = 0; ow < g->out[2]; ow++, p++)
			pl->in_off[p] = (oh * g->s[1] * pl->pw + ow * g->s[2]) * lanes;
	for (int64_t kh = 0, t = 0; kh < g->k[1]; kh++)
		for (int64_t kw = 0; kw < g->k[2]; kw++, t++)
			pl->tap_off[t] = (kh * g->d[1] * pl->pw + kw * g->d[2]) * lanes;
	return OX_OK;
}

void
nn_dw_lanes_plan_free(nn_dw_lanes_plan *pl)
{
	ox_aligned_free(pl->in_off);
	ox_aligned_free(pl->tap_off);
	pl->in_off = pl->tap_off = NULL;
}

#define DW_W 16
#include "kernels/cpu/conv_depthwise_lanes_kernels.h"
#undef DW_W
