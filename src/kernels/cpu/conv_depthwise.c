/*
 * conv_depthwise.c
 *	  Depthwise float32 convolution (one input channel per group, any
 *	  channel multiplier) for the fast paths of conv_fast.h.
 *
 * Each input plane is first copied into a zero-bordered buffer that holds
 * the padding, so the loops have no bounds checks: an output element is
 * the dot product of the kernel taps with a window of the padded plane.
 * Outputs are computed sixteen (AVX-512) or eight (AVX2) at a time along
 * an output row, four such vectors at once (from one row or from several
 * short rows) so that the FMA latency is hidden; each vector starts from
 * the bias, takes every tap from registers and broadcasts, adds Z, applies
 * the activation and is stored once.  Stride 2 along the row: with AVX2 the
 * padded rows are stored split into even and odd columns (split_row_avx2),
 * with AVX-512 each tap deinterleaves two loaded vectors with one permute;
 * other strides gather.
 *
 * Narrow planes with stride 1 (MobileNet's 28x28, 14x14 and 7x7) would leave
 * many lanes of a one-row vector idle.  With AVX-512 they run on a grid instead:
 * the padded rows are only as far apart as the input row plus the wider of
 * the two paddings (one row's right padding is the next row's left), and
 * the output positions are laid out with the same pitch, so each tap reads
 * sixteen consecutive grid positions that span several output rows; the
 * lanes past each row's end are dropped by a compress before the store (a
 * 7x7 plane takes 4 vectors of 14 outputs instead of 7 of 7).
 *
 * With AVX-512, 2-D layers without a channel multiplier take the
 * channels-in-lanes path instead (conv_depthwise_lanes.c, faster on every
 * MobileNet layer); these loops keep the rest: AVX2, channel multipliers,
 * 3-D, and planes too large for its per-thread buffer.
 *
 * Threads split the (image, input channel) planes.
 */
#include "kernels/cpu/conv_fast.h"
#include "kernels/cpu/simd_avx2.h"

#include <immintrin.h>
#include <string.h>

/* output vectors computed together */
#define DW_UNITS 4

/* where an output vector starts in the output plane and in the padded input */
typedef struct dw_unit
{
	int64_t		out_off;
	int64_t		in_off;
	int			count;			/* outputs stored */
	uint32_t	lanes;			/* the lanes holding them (a prefix, except on the grid) */
} dw_unit;

typedef struct dw_job
{
	const nn_conv_shape *cs;
	const float *x;
	const float *w;
	const nn_conv_epi *epi;
	float	   *y;
	nn_isa		isa;
	int			lanes;			/* 16 or 8 */
	int64_t		mult;			/* output channels per input channel */
	int64_t		pd,
				ph,
				pw;				/* padded plane extents */
	bool		grid;			/* narrow planes: vectors span rows (above) */
	bool		split;			/* AVX2, stride 2: rows stored as even columns, then odd */
	int64_t		chunks;			/* vectors per output row (not on the grid) */
	int64_t		units;			/* vectors per output plane */
	int64_t	   *tap_off;		/* [k_size] offsets of the taps in the padded plane */
	dw_unit    *unit;			/* [units], the same for every plane */
	bool		oom;
} dw_job;

/*
 * Stride 2 along the row, AVX2: a padded row r of pw columns (pw even) is
 * stored as its even columns and then its odd ones, so that tap kw of the
 * outputs [ow, ow + 8) is one load: r[2 ow + kw] is the even half's
 * element ow + kw / 2 or the odd half's.  Deinterleaving once per row
 * replaces the shuffle and lane permute that each tap of each vector took
 * (MobileNet-v2's stride-2 layers at 112 and 56: 0.77 of the time, EPYC Zen 3).
 *
 * ev[i] = x[2i] for i < ceil(n / 2), od[i] = x[2i + 1] for i < n / 2,
 * straight from the input row (a copy into a padded row first made each
 * of these loads wait for the copy's stores).
 */
__attribute__((target("avx2")))
static void
split_row_avx2(const float *x, int64_t n, float *ev, float *od)
{
	int64_t		i = 0;

	for (; 2 * i + 16 <= n; i += 8)
	{
		__m256		lo = _mm256_loadu_ps(x + 2 * i),
					hi = _mm256_loadu_ps(x + 2 * i + 8),
					e = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)),
					o = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));

		_mm256_storeu_ps(ev + i, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0))));
		_mm256_storeu_ps(od + i, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), _MM_SHUFFLE(3, 1, 2, 0))));
	}
	for (; 2 * i < n; i++)
	{
		ev[i] = x[2 * i];
		if (2 * i + 1 < n)
			od[i] = x[2 * i + 1];
	}
}

/* copy plane xc into the padded buffer (whose borders stay zero) */
__attribute__((target("avx2")))
static void
fill_padded(const dw_job *j, const float *xc, float *buf)
{
	const nn_geom *g = &j->cs->g;
	int64_t		half = j->pw / 2,
				pb = g->pb[2];
	__m256i		narrow = _mm256_cmpgt_epi32(_mm256_set1_epi32((int) (g->in[2] < 8 ? g->in[2] : 8)),
											_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));

	for (int64_t d = 0; d < g->in[0]; d++)
		for (int64_t h = 0; h < g->in[1]; h++)
		{
			float	   *dst = buf + ((d + g->pb[0]) * j->ph + h + g->pb[1]) * j->pw;
			const float *src = xc + (d * g->in[1] + h) * g->in[2];

			if (j->isa == NN_ISA_AVX2 && !j->split && g->in[2] < 8 && pb + 8 <= j->pw)
				/* a narrow row and zeros after it, into the row's right padding */
				_mm256_storeu_ps(dst + pb, _mm256_maskload_ps(src, narrow));
			else if (j->isa == NN_ISA_AVX2 && !j->split)
				nn_copy_avx2(dst + pb, src, g->in[2]);
			else if (!j->split)
				memcpy(dst + pb, src, sizeof(float) * g->in[2]);
			else if (pb % 2 == 0)
				/* padded column pb + 2i is even: x[2i] to the even half */
				split_row_avx2(src, g->in[2], dst + pb / 2, dst + half + pb / 2);
			else
				/* pb odd: x[2i] sits at an odd column, x[2i + 1] at the next even one */
				split_row_avx2(src, g->in[2], dst + half + pb / 2, dst + pb / 2 + 1);
		}
}

static void
unit_pos(const dw_job *j, int64_t u, dw_unit *d)
{
	const nn_geom *g = &j->cs->g;
	int64_t		row = u / j->chunks,
				ch = u % j->chunks,
				oh = row % g->out[1],
				od = row / g->out[1],
				ow = ch * j->lanes;

	d->out_off = row * g->out[2] + ow;
	d->in_off = (od * g->s[0] * j->ph + oh * g->s[1]) * j->pw + (j->split ? ow : ow * g->s[2]);
	d->count = (int) (g->out[2] - ow < j->lanes ? g->out[2] - ow : j->lanes);
	d->lanes = (uint32_t) ((1ull << d->count) - 1);
}

/*
 * The grid (narrow stride-1 planes, AVX-512): 2-D (or 1-D) only, and only
 * where the lanes a one-row vector would leave idle are many.
 */
static bool
grid_applies(const nn_geom *g, nn_isa isa)
{
	return isa == NN_ISA_AVX512 && g->in[0] == 1 && g->k[0] == 1 && g->s[1] == 1 && g->s[2] == 1 &&
		g->out[2] < 32 && g->out[2] % 16 != 0;
}

/*
 * The vector of grid positions [p0, p0 + 16): output (oh, ow) sits at
 * oh * pw + ow, its window at the same offset in the padded plane; lanes
 * with ow >= out[2] (or past the last row) hold nothing.  Returns false for
 * a vector with no outputs.
 */
static bool
grid_unit(const dw_job *j, int64_t p0, dw_unit *d)
{
	const nn_geom *g = &j->cs->g;
	int64_t		row = p0 / j->pw,
				col = p0 % j->pw;

	d->lanes = 0;
	for (int i = 0; i < 16; i++)
		if (p0 + i < g->out[1] * j->pw && (p0 + i) % j->pw < g->out[2])
			d->lanes |= 1u << i;
	d->count = __builtin_popcount(d->lanes);
	d->out_off = row * g->out[2] + (col < g->out[2] ? col : g->out[2]);
	d->in_off = p0;
	return d->count > 0;
}

/* ---- AVX-512 ------------------------------------------------------------ */

__attribute__((target("avx512f,fma")))
static inline __m512
dw_load512(const float *p, int64_t s, __m512i idx_even, __m512i idx_gather)
{
	if (s == 1)
		return _mm512_loadu_ps(p);
	if (s == 2)
		return _mm512_permutex2var_ps(_mm512_loadu_ps(p), idx_even, _mm512_loadu_ps(p + 16));
	return _mm512_i32gather_ps(idx_gather, p, 4);
}

__attribute__((target("avx512f,fma")))
static void
dw_channel_avx512(const dw_job *j, const float *xp, const float *wc, float bias, const float *zc,
				  float *yc)
{
	const nn_geom *g = &j->cs->g;
	const nn_activation *act = &j->epi->act;
	int64_t		s = g->s[2],
				taps = g->k_size;
	__m512i		idx_even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
	__m512i		idx_gather = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
												_mm512_set1_epi32((int) s));
	int64_t		u = 0;

	for (; u < j->units; u += DW_UNITS)
	{
		int			nu = j->units - u < DW_UNITS ? (int) (j->units - u) : DW_UNITS;
		int64_t		oo[DW_UNITS],
					io[DW_UNITS];
		int			cnt[DW_UNITS];
		uint32_t	lanes[DW_UNITS];
		__m512		acc[DW_UNITS];

		for (int q = 0; q < DW_UNITS; q++)
		{
			/* a short group repeats its last unit: same stores, same values */
			const dw_unit *d = &j->unit[u + (q < nu ? q : nu - 1)];

			oo[q] = d->out_off;
			io[q] = d->in_off;
			cnt[q] = d->count;
			lanes[q] = d->lanes;
			acc[q] = _mm512_set1_ps(bias);
		}
		for (int64_t t = 0; t < taps; t++)
		{
			__m512		wv = _mm512_set1_ps(wc[t]);
			const float *p = xp + j->tap_off[t];

#pragma GCC unroll 4
			for (int q = 0; q < DW_UNITS; q++)
				acc[q] = _mm512_fmadd_ps(wv, dw_load512(p + io[q], s, idx_even, idx_gather), acc[q]);
		}
#pragma GCC unroll 4
		for (int q = 0; q < DW_UNITS; q++)
		{
			__mmask16	m = cnt[q] >= 16 ? (__mmask16) 0xFFFF : (__mmask16) ((1u << cnt[q]) - 1);
			__m512		v = acc[q];

			/* on the grid: the lanes of each row's outputs, packed together */
			if (lanes[q] != m)
				v = _mm512_maskz_compress_ps((__mmask16) lanes[q], v);
			if (zc)
				v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, zc + oo[q]));
			_mm512_mask_storeu_ps(yc + oo[q], m, nn_act_avx512(act, v));
		}
	}
}

/* ---- AVX2 --------------------------------------------------------------- */

__attribute__((target("avx2,fma")))
static inline __m256
dw_load256(const float *p, int64_t s, __m256i idx_gather)
{
	if (s == 1)
		return _mm256_loadu_ps(p);
	if (s == 2)
	{
		/* even elements of p[0..15]: shuffle within lanes, then fix the lane order */
		__m256		lo = _mm256_loadu_ps(p),
					hi = _mm256_loadu_ps(p + 8),
					ev = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));

		return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), _MM_SHUFFLE(3, 1, 2, 0)));
	}
	return _mm256_i32gather_ps(p, idx_gather, 4);
}


__attribute__((target("avx2,fma")))
static void
dw_channel_avx2(const dw_job *j, const float *xp, const float *wc, float bias, const float *zc,
				float *yc)
{
	const nn_geom *g = &j->cs->g;
	const nn_activation *act = &j->epi->act;
	int64_t		s = j->split ? 1 : g->s[2],
				taps = g->k_size,
				out_size = g->out_size;
	/*
	 * A row's last vector (a 7x7 plane's only one) may store all eight
	 * lanes, the extra ones into the outputs after it, which the units that
	 * follow (in order, the rest of the plane) store again: a masked store
	 * is microcode on AMD Zen 2 and 3 (simd_avx2.h), and 7x7 and 14x14
	 * planes took one or two per row.  Not past the plane, and not where Z
	 * shares Y's memory (the extra lanes would overwrite Z the later units
	 * still read).
	 */
	uintptr_t	y0 = (uintptr_t) yc,
				z0 = (uintptr_t) zc;
	bool		spill = !zc || z0 + out_size * sizeof(float) <= y0 || y0 + out_size * sizeof(float) <= z0;
	__m256i		idx_gather = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
												_mm256_set1_epi32((int) s));
	int64_t		u = 0;

	for (; u < j->units; u += DW_UNITS)
	{
		int			nu = j->units - u < DW_UNITS ? (int) (j->units - u) : DW_UNITS;
		int64_t		oo[DW_UNITS],
					io[DW_UNITS];
		int			cnt[DW_UNITS];
		__m256		acc[DW_UNITS];

		for (int q = 0; q < DW_UNITS; q++)
		{
			const dw_unit *d = &j->unit[u + (q < nu ? q : nu - 1)];

			oo[q] = d->out_off;
			io[q] = d->in_off;
			cnt[q] = d->count;
			acc[q] = _mm256_set1_ps(bias);
		}
		for (int64_t t = 0; t < taps; t++)
		{
			__m256		wv = _mm256_set1_ps(wc[t]);
			const float *p = xp + j->tap_off[t];

#pragma GCC unroll 4
			for (int q = 0; q < DW_UNITS; q++)
				acc[q] = _mm256_fmadd_ps(wv, dw_load256(p + io[q], s, idx_gather), acc[q]);
		}
#pragma GCC unroll 4
		for (int q = 0; q < DW_UNITS; q++)
		{
			__m256i		m = _mm256_cmpgt_epi32(_mm256_set1_epi32(cnt[q]), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
			__m256		v = acc[q];

			if (zc)
				v = _mm256_add_ps(v, nn_load8_part(zc + oo[q], cnt[q] >= 8, m));
			nn_store8_part(yc + oo[q], cnt[q] >= 8 || (spill && oo[q] + 8 <= out_size), m, nn_act_avx2(act, v));
		}
	}
}

/* ---- driver ------------------------------------------------------------- */

static void
dw_task(void *arg, int64_t begin, int64_t end)
{
	dw_job	   *j = arg;
	const nn_conv_shape *cs = j->cs;
	const nn_geom *g = &cs->g;
	/* slack past the last row: vector loads of the last units may run over */
	size_t		plane = (size_t) (j->pd * j->ph * j->pw + 2 * j->lanes * g->s[2] + (g->k[2] - 1) * g->d[2] + 64);
	float	   *buf = ox_aligned_alloc(plane * sizeof(float));

	if (!buf)
	{
		j->oom = true;
		return;
	}
	memset(buf, 0, plane * sizeof(float));
	for (int64_t t = begin; t < end; t++)
	{
		int64_t		n = t / cs->c,
					ic = t % cs->c;

		fill_padded(j, j->x + t * g->in_size, buf);
		for (int64_t oc = ic * j->mult; oc < (ic + 1) * j->mult; oc++)
		{
			int64_t		yo = (n * cs->m + oc) * g->out_size;
			const float *wc = j->w + oc * g->k_size;
			float		bias = j->epi->bias ? j->epi->bias[oc] : 0.0f;
			const float *zc = j->epi->z ? j->epi->z + yo : NULL;
			float	   *yc = j->y + yo;

			if (j->isa == NN_ISA_AVX512)
				dw_channel_avx512(j, buf, wc, bias, zc, yc);
			else
				dw_channel_avx2(j, buf, wc, bias, zc, yc);
			if (!nn_act_in_registers(&j->epi->act))
				nn_activation_apply_row_f32(&j->epi->act, yc, g->out_size);
		}
	}
	ox_aligned_free(buf);
}

ox_code
nn_conv_depthwise_f32(ox_kernel_ctx *ctx, const nn_conv_shape *cs, const float *x, const float *w,
					  const nn_conv_epi *epi, float *y, ox_status *st)
{
	const nn_geom *g = &cs->g;
	dw_job		job;
	int64_t		t = 0;

	if (nn_dw_lanes_applies(cs))
		return nn_conv_dw_lanes_f32(ctx, cs, x, w, epi, y, st);
	if (nn_dw_lanes8_applies(cs))
		return nn_conv_dw_lanes8_f32(ctx, cs, x, w, epi, y, st);
	memset(&job, 0, sizeof(job));
	job.cs = cs;
	job.x = x;
	job.w = w;
	job.epi = epi;
	job.y = y;
	job.isa = nn_conv_fast_isa();
	job.lanes = job.isa == NN_ISA_AVX512 ? 16 : 8;
	job.mult = cs->m / cs->group;
	job.grid = grid_applies(g, job.isa);
	job.chunks = (g->out[2] + job.lanes - 1) / job.lanes;
	job.units = g->out[0] * g->out[1] * job.chunks;
	job.pd = g->in[0] + g->pb[0] + g->pe[0];
	job.ph = g->in[1] + g->pb[1] + g->pe[1];
	if (job.grid)
	{
		/*
		 * Rows share their padding: a window that runs past its row's end
		 * reads the next row's left padding, which is zero
		 */
		job.pw = g->in[2] + (g->pb[2] > g->pe[2] ? g->pb[2] : g->pe[2]);
		if (job.pw < g->out[2])
			job.pw = g->out[2];
		job.units = (g->out[1] * job.pw + 15) / 16;
	}
	else
	{
		/* the padded extents cover every window and the last vector's overrun */
		int64_t		need = job.chunks * job.lanes * g->s[2] + (g->k[2] - 1) * g->d[2] + job.lanes;

		job.pw = g->in[2] + g->pb[2] + g->pe[2];
		if (job.pw < need)
			job.pw = need;
		job.split = job.isa == NN_ISA_AVX2 && g->s[2] == 2;
		/* split rows: two halves of pw / 2, each covering its loads as above */
		job.pw += job.split && job.pw % 2;
	}
	if (ox_shape_numel(3, (int64_t[]) {job.pd, job.ph, job.pw}) < 0 || job.pd * job.ph * job.pw > OX_MAX_ELEMENTS / 2)
		return ox_fail(st, OX_LIMIT_EXCEEDED, "Conv: padded input plane is too large");
	if (!(job.tap_off = nn_scratch(g->k_size, sizeof(int64_t), st, "Conv")))
		return st->code;
	for (int64_t kd = 0; kd < g->k[0]; kd++)
		for (int64_t kh = 0; kh < g->k[1]; kh++)
			for (int64_t kw = 0; kw < g->k[2]; kw++)
			{
				int64_t		col = kw * g->d[2];

				/* split: column 2 ow + col is the even or odd half's element ow + col / 2 */
				if (job.split)
					col = col / 2 + (col % 2 ? job.pw / 2 : 0);
				job.tap_off[t++] = (kd * g->d[0] * job.ph + kh * g->d[1]) * job.pw + col;
			}
	if (!(job.unit = nn_scratch(job.units, sizeof(dw_unit), st, "Conv")))
	{
		ox_aligned_free(job.tap_off);
		return st->code;
	}
	if (job.grid)
	{
		int64_t		n = 0;

		for (int64_t u = 0; u < job.units; u++)
			n += grid_unit(&job, u * 16, &job.unit[n]);
		job.units = n;
	}
	else
		for (int64_t u = 0; u < job.units; u++)
			unit_pos(&job, u, &job.unit[u]);
	ox_parallel_for(ctx, cs->n * cs->c, 1, dw_task, &job);
	ox_aligned_free(job.tap_off);
	ox_aligned_free(job.unit);
	if (job.oom)
		return ox_fail(st, OX_OUT_OF_MEMORY, "Conv: could not allocate a padded input plane");
	return OX_OK;
}
