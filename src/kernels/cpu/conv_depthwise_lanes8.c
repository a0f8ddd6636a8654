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
 * Threads split the (image, block of eight channels) pairs.
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
/* output pixels computed together (8 chains of multiply-adds) */
#define LANES8_PX 8
/* output pixels computed, then transposed and stored, per chunk (8 KiB) */
#define LANES8_CHUNK 256

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

typedef struct lanes8_job
{
	const nn_conv_shape *cs;
	const float *x;
	const float *w;
	const nn_conv_epi *epi;
	float	   *y;
	int64_t		blocks;			/* blocks of 8 channels per image */
	nn_dw_lanes_plan pl;		/* padded plane, window and tap offsets */
	bool		oom;
} lanes8_job;

__attribute__((target("avx2"), always_inline))
static inline __m256i
first_lanes8(int64_t n)
{
	return _mm256_cmpgt_epi32(_mm256_set1_epi32((int) (n < 8 ? n : 8)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* buf[h + pb][w + pb][i] = X[c0 + i][h][w] for the block's nc channels (zero lanes past) */
__attribute__((target("avx2")))
static void
fill_block8(const lanes8_job *j, const float *xb, int nc, float *buf)
{
	const nn_geom *g = &j->cs->g;
	int64_t		h = 0,
				w = 0;

	for (int64_t p0 = 0; p0 < g->in_size; p0 += 8)
	{
		int64_t		cnt = g->in_size - p0 < 8 ? g->in_size - p0 : 8;
		__m256i		m = first_lanes8(cnt);
		__m256		r[8];

		for (int i = 0; i < 8; i++)
			r[i] = i >= nc ? _mm256_setzero_ps() : nn_load8_part(xb + i * g->in_size + p0, cnt == 8, m);
		nn_transpose8(r);
		for (int64_t q = 0; q < cnt; q++)
		{
			_mm256_store_ps(buf + ((h + g->pb[1]) * j->pl.pw + w + g->pb[2]) * 8, r[q]);
			if (++w == g->in[2])
			{
				w = 0;
				h++;
			}
		}
	}
}

/* obuf[p - p0][i] for outputs p in [p0, p0 + cnt): the bias plus every tap */
__attribute__((target("avx2,fma")))
static void
compute_chunk8(const lanes8_job *j, const float *buf, const float *wv, __m256 bias, int64_t p0,
			   int64_t cnt, float *obuf)
{
	const int64_t *io = j->pl.in_off + p0,
			   *to = j->pl.tap_off;
	int64_t		taps = j->cs->g.k_size,
				p = 0;

	for (; p + LANES8_PX <= cnt; p += LANES8_PX)
	{
		__m256		acc[LANES8_PX];

#pragma GCC unroll 8
		for (int q = 0; q < LANES8_PX; q++)
			acc[q] = bias;
		for (int64_t t = 0; t < taps; t++)
		{
			__m256		wt = _mm256_load_ps(wv + t * 8);
			const float *bt = buf + to[t];

#pragma GCC unroll 8
			for (int q = 0; q < LANES8_PX; q++)
				acc[q] = _mm256_fmadd_ps(wt, _mm256_load_ps(bt + io[p + q]), acc[q]);
		}
#pragma GCC unroll 8
		for (int q = 0; q < LANES8_PX; q++)
			_mm256_store_ps(obuf + (p + q) * 8, acc[q]);
	}
	for (; p < cnt; p++)
	{
		__m256		acc = bias;

		for (int64_t t = 0; t < taps; t++)
			acc = _mm256_fmadd_ps(_mm256_load_ps(wv + t * 8), _mm256_load_ps(buf + to[t] + io[p]), acc);
		_mm256_store_ps(obuf + p * 8, acc);
	}
}

/*
 * Y[c0 + i][p] = act(obuf[p - p0][i] + Z) for the chunk's outputs, nc
 * channels.  A group of fewer than eight outputs (the plane's last) is
 * stored through a mask.
 */
__attribute__((target("avx2,fma")))
static void
store_chunk8(const lanes8_job *j, const float *obuf, int nc, int64_t p0, int64_t cnt, float *yb,
			 const float *zb)
{
	const nn_geom *g = &j->cs->g;
	const nn_activation *act = &j->epi->act;

	for (int64_t q0 = 0; q0 < cnt; q0 += 8)
	{
		bool		full = cnt - q0 >= 8;
		__m256i		m = first_lanes8(cnt - q0);
		__m256		r[8];

		/* rows past cnt hold stale values; their lanes are not stored */
		for (int q = 0; q < 8; q++)
			r[q] = _mm256_load_ps(obuf + (q0 + q) * 8);
		nn_transpose8(r);
		for (int i = 0; i < nc; i++)
		{
			int64_t		off = i * g->out_size + p0 + q0;
			__m256		v = r[i];

			if (zb)
				v = _mm256_add_ps(v, nn_load8_part(zb + off, full, m));
			nn_store8_part(yb + off, full, m, nn_act_avx2(act, v));
		}
	}
}

/* the buffers (padded block, output chunk, weight vectors): nn_dw_lanes_buffers, shared with the AVX-512 path */
__attribute__((target("avx2")))
static void
lanes8_task(void *arg, int64_t begin, int64_t end)
{
	lanes8_job *j = arg;
	const nn_conv_shape *cs = j->cs;
	const nn_geom *g = &cs->g;
	const nn_activation *act = &j->epi->act;
	size_t		buf_floats = (size_t) (j->pl.ph * j->pl.pw * 8),
				obuf_floats = LANES8_CHUNK * 8;
	float	   *buf = nn_dw_lanes_buffers(buf_floats + obuf_floats + (size_t) g->k_size * 8),
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
					c0 = (t % j->blocks) * 8;
		int			nc = (int) (cs->c - c0 < 8 ? cs->c - c0 : 8);
		float		bias[8] __attribute__((aligned(32))) = {0};
		const float *zb = j->epi->z ? j->epi->z + (n * cs->m + c0) * g->out_size : NULL;
		float	   *yb = j->y + (n * cs->m + c0) * g->out_size;

		for (int64_t tap = 0; tap < g->k_size; tap++)
			for (int i = 0; i < 8; i++)
				wv[tap * 8 + i] = i < nc ? j->w[(c0 + i) * g->k_size + tap] : 0.0f;
		for (int i = 0; i < nc && j->epi->bias; i++)
			bias[i] = j->epi->bias[c0 + i];
		fill_block8(j, j->x + (n * cs->c + c0) * g->in_size, nc, buf);
		for (int64_t p0 = 0; p0 < g->out_size; p0 += LANES8_CHUNK)
		{
			int64_t		cnt = g->out_size - p0 < LANES8_CHUNK ? g->out_size - p0 : LANES8_CHUNK;

			compute_chunk8(j, buf, wv, _mm256_load_ps(bias), p0, cnt, obuf);
			store_chunk8(j, obuf, nc, p0, cnt, yb, zb);
		}
		if (act_later)
			for (int i = 0; i < nc; i++)
				nn_activation_apply_row_f32(act, yb + i * g->out_size, g->out_size);
	}
}

ox_code
nn_conv_dw_lanes8_f32(ox_kernel_ctx *ctx, const nn_conv_shape *cs, const float *x, const float *w,
					  const nn_conv_epi *epi, float *y, ox_status *st)
{
	lanes8_job	job;

	memset(&job, 0, sizeof(job));
	job.cs = cs;
	job.x = x;
	job.w = w;
	job.epi = epi;
	job.y = y;
	job.blocks = (cs->c + 7) / 8;
	if (nn_dw_lanes_plan_make(cs, 8, &job.pl, st) != OX_OK)
		return st->code;
	ox_parallel_for(ctx, cs->n * job.blocks, 1, lanes8_task, &job);
	nn_dw_lanes_plan_free(&job.pl);
	if (job.oom)
		return ox_fail(st, OX_OUT_OF_MEMORY, "Conv: could not allocate a depthwise block buffer");
	return OX_OK;
}
