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
 * Threads split the (image, block of sixteen channels) pairs.
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
/* output pixels computed together along a row (FMA latency) */
#define LANES_PX 8

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

static inline __mmask16
first_lanes(int64_t n)
{
	return n >= 16 ? (__mmask16) 0xFFFF : (__mmask16) ((1u << n) - 1);
}

/* output pixels computed, then transposed and stored, per chunk (16 KiB in L1) */
#define LANES_CHUNK 256

typedef struct lanes_job
{
	const nn_conv_shape *cs;
	const float *x;
	const float *w;
	const nn_conv_epi *epi;
	float	   *y;
	int64_t		blocks;			/* blocks of 16 channels per image */
	nn_dw_lanes_plan pl;		/* padded plane, window and tap offsets */
	bool		oom;
} lanes_job;

/*
 * buf[h + pb][w + pb][i] = X[c0 + i][h][w] for the block's nc channels (zero
 * lanes past).  A channel's plane is contiguous, so sixteen consecutive
 * pixels are transposed at a time whatever the row width (a 7 x 7 plane
 * takes 4 transposes, not 7 half-empty ones).
 */
__attribute__((target("avx512f")))
static void
fill_block(const lanes_job *j, const float *xb, int nc, float *buf)
{
	const nn_geom *g = &j->cs->g;
	int64_t		h = 0,
				w = 0;

	for (int64_t p0 = 0; p0 < g->in_size; p0 += 16)
	{
		int64_t		cnt = g->in_size - p0 < 16 ? g->in_size - p0 : 16;
		__mmask16	m = first_lanes(cnt);
		__m512		r[16];

		for (int i = 0; i < 16; i++)
			r[i] = i < nc ? _mm512_maskz_loadu_ps(m, xb + i * g->in_size + p0) : _mm512_setzero_ps();
		nn_transpose16(r);
		for (int64_t q = 0; q < cnt; q++)
		{
			_mm512_store_ps(buf + ((h + g->pb[1]) * j->pl.pw + w + g->pb[2]) * 16, r[q]);
			if (++w == g->in[2])
			{
				w = 0;
				h++;
			}
		}
	}
}

/* obuf[p - p0][i] for outputs p in [p0, p0 + cnt): the bias plus every tap */
__attribute__((target("avx512f,fma")))
static void
compute_chunk(const lanes_job *j, const float *buf, const float *wv, const float *bias16, int64_t p0,
			  int64_t cnt, float *obuf)
{
	const int64_t *io = j->pl.in_off + p0,
			   *to = j->pl.tap_off;
	int64_t		taps = j->cs->g.k_size,
				p = 0;
	__m512		bias = _mm512_load_ps(bias16);

	for (; p + LANES_PX <= cnt; p += LANES_PX)
	{
		__m512		acc[LANES_PX];

#pragma GCC unroll 8
		for (int q = 0; q < LANES_PX; q++)
			acc[q] = bias;
		for (int64_t t = 0; t < taps; t++)
		{
			__m512		wt = _mm512_load_ps(wv + t * 16);
			const float *bt = buf + to[t];

#pragma GCC unroll 8
			for (int q = 0; q < LANES_PX; q++)
				acc[q] = _mm512_fmadd_ps(wt, _mm512_load_ps(bt + io[p + q]), acc[q]);
		}
#pragma GCC unroll 8
		for (int q = 0; q < LANES_PX; q++)
			_mm512_store_ps(obuf + (p + q) * 16, acc[q]);
	}
	for (; p < cnt; p++)
	{
		__m512		acc = bias;

		for (int64_t t = 0; t < taps; t++)
			acc = _mm512_fmadd_ps(_mm512_load_ps(wv + t * 16), _mm512_load_ps(buf + to[t] + io[p]), acc);
		_mm512_store_ps(obuf + p * 16, acc);
	}
}

/* Y[c0 + i][p] = act(obuf[p - p0][i] + Z) for the chunk's outputs, nc channels */
__attribute__((target("avx512f")))
static void
store_chunk(const lanes_job *j, const float *obuf, int nc, int64_t p0, int64_t cnt, float *yb,
			const float *zb)
{
	const nn_geom *g = &j->cs->g;
	const nn_activation *act = &j->epi->act;

	for (int64_t q0 = 0; q0 < cnt; q0 += 16)
	{
		__mmask16	m = first_lanes(cnt - q0);
		__m512		r[16];

		/* rows past cnt hold stale values; their lanes are not stored */
		for (int q = 0; q < 16; q++)
			r[q] = _mm512_load_ps(obuf + (q0 + q) * 16);
		nn_transpose16(r);
		for (int i = 0; i < nc; i++)
		{
			int64_t		off = i * g->out_size + p0 + q0;
			__m512		v = r[i];

			if (zb)
				v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, zb + off));
			_mm512_mask_storeu_ps(yb + off, m, nn_act_avx512(act, v));
		}
	}
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

static void
lanes_task(void *arg, int64_t begin, int64_t end)
{
	lanes_job  *j = arg;
	const nn_conv_shape *cs = j->cs;
	const nn_geom *g = &cs->g;
	const nn_activation *act = &j->epi->act;
	size_t		buf_floats = (size_t) (j->pl.ph * j->pl.pw * 16),
				obuf_floats = LANES_CHUNK * 16;
	float	   *buf = nn_dw_lanes_buffers(buf_floats + obuf_floats + (size_t) g->k_size * 16),
			   *obuf = buf + buf_floats,
			   *wv = obuf + obuf_floats;
	bool		act_later = !nn_act_in_registers(act);

	if (!buf)
	{
		j->oom = true;
		return;
	}
	nn_dw_lanes_zero_borders(&j->pl, buf);
	for (int64_t t = begin; t < end; t++)
	{
		int64_t		n = t / j->blocks,
					c0 = (t % j->blocks) * 16;
		int			nc = (int) (cs->c - c0 < 16 ? cs->c - c0 : 16);
		float		bias[16] __attribute__((aligned(64))) = {0};
		const float *zb = j->epi->z ? j->epi->z + (n * cs->m + c0) * g->out_size : NULL;
		float	   *yb = j->y + (n * cs->m + c0) * g->out_size;

		for (int64_t tap = 0; tap < g->k_size; tap++)
			for (int i = 0; i < 16; i++)
				wv[tap * 16 + i] = i < nc ? j->w[(c0 + i) * g->k_size + tap] : 0.0f;
		for (int i = 0; i < nc && j->epi->bias; i++)
			bias[i] = j->epi->bias[c0 + i];
		fill_block(j, j->x + (n * cs->c + c0) * g->in_size, nc, buf);
		for (int64_t p0 = 0; p0 < g->out_size; p0 += LANES_CHUNK)
		{
			int64_t		cnt = g->out_size - p0 < LANES_CHUNK ? g->out_size - p0 : LANES_CHUNK;

			compute_chunk(j, buf, wv, bias, p0, cnt, obuf);
			store_chunk(j, obuf, nc, p0, cnt, yb, zb);
		}
		if (act_later)
			for (int i = 0; i < nc; i++)
				nn_activation_apply_row_f32(act, yb + i * g->out_size, g->out_size);
	}
}

ox_code
nn_conv_dw_lanes_f32(ox_kernel_ctx *ctx, const nn_conv_shape *cs, const float *x, const float *w,
					 const nn_conv_epi *epi, float *y, ox_status *st)
{
	lanes_job	job;

	memset(&job, 0, sizeof(job));
	job.cs = cs;
	job.x = x;
	job.w = w;
	job.epi = epi;
	job.y = y;
	job.blocks = (cs->c + 15) / 16;
	if (nn_dw_lanes_plan_make(cs, 16, &job.pl, st) != OX_OK)
		return st->code;
	ox_parallel_for(ctx, cs->n * job.blocks, 1, lanes_task, &job);
	nn_dw_lanes_plan_free(&job.pl);
	if (job.oom)
		return ox_fail(st, OX_OUT_OF_MEMORY, "Conv: could not allocate a depthwise block buffer");
	return OX_OK;
}
