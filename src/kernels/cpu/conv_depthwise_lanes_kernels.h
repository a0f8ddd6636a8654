/*
 * conv_depthwise_lanes_kernels.h
 *	  The channels-in-lanes depthwise convolution, compiled once per
 *	  instruction set: conv_depthwise_lanes.c defines DW_W 16 (AVX-512),
 *	  conv_depthwise_lanes8.c DW_W 8 (AVX2 and FMA), then includes this.
 *	  The entry point is DW_ENTRY, nn_conv_dw_lanes_f32 or
 *	  nn_conv_dw_lanes8_f32; which layers each takes is its file's
 *	  business (nn_dw_lanes_applies, nn_dw_lanes8_applies).
 *
 * A vector holds one pixel of DW_W channels, so every tap of every output
 * is one multiply-add on a full vector whatever the stride or width.  The
 * data stays NCHW between layers: each block of DW_W channels is transposed
 * on the way in, into a zero-bordered [padded H][padded W][DW_W] buffer that
 * holds the padding (nn_dw_lanes_plan), and on the way out, a chunk of
 * outputs at a time while Z and the activation are applied.  Threads split
 * the (image, block of channels) pairs.
 */
#if DW_W == 16

#define DW_ENTRY nn_conv_dw_lanes_f32
#define DW_TARGET "avx512f,fma"
#define dw_vec __m512
#define dw_mask __mmask16
#define dw_zero() _mm512_setzero_ps()
#define dw_load(p) _mm512_load_ps(p)
#define dw_store(p, v) _mm512_store_ps((p), (v))
#define dw_fmadd(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define dw_add(a, b) _mm512_add_ps((a), (b))
/* the first n lanes, n >= 1 (all of them from 16 on) */
#define dw_first(n) ((n) >= 16 ? (__mmask16) 0xFFFF : (__mmask16) ((1u << (n)) - 1))
/* the lanes of m at p, the others zero (full, all of them, needs no other form here) */
#define dw_load_part(p, full, m) ((void) (full), _mm512_maskz_loadu_ps((m), (p)))
#define dw_store_part(p, full, m, v) ((void) (full), _mm512_mask_storeu_ps((p), (m), (v)))
#define dw_transpose(r) nn_transpose16(r)
#define dw_act(act, v) nn_act_avx512((act), (v))

#elif DW_W == 8

#define DW_ENTRY nn_conv_dw_lanes8_f32
#define DW_TARGET "avx2,fma"
#define dw_vec __m256
#define dw_mask __m256i
#define dw_zero() _mm256_setzero_ps()
#define dw_load(p) _mm256_load_ps(p)
#define dw_store(p, v) _mm256_store_ps((p), (v))
#define dw_fmadd(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define dw_add(a, b) _mm256_add_ps((a), (b))
#define dw_first(n) \
	_mm256_cmpgt_epi32(_mm256_set1_epi32((int) ((n) < 8 ? (n) : 8)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
/* a masked load or store only for a part (the masked forms cost more) */
#define dw_load_part(p, full, m) nn_load8_part((p), (full), (m))
#define dw_store_part(p, full, m, v) nn_store8_part((p), (full), (m), (v))
#define dw_transpose(r) nn_transpose8(r)
#define dw_act(act, v) nn_act_avx2((act), (v))

#else
#error "define DW_W as 16 or 8 before including conv_depthwise_lanes_kernels.h"
#endif

/* output pixels computed together (as many chains of multiply-adds) */
#define DW_PX 8
/* output pixels computed, then transposed and stored, per chunk (DW_W KiB, in L1) */
#define DW_CHUNK 256

typedef struct lanes_job
{
	const nn_conv_shape *cs;
	const float *x;
	const float *w;
	const nn_conv_epi *epi;
	float	   *y;
	int64_t		blocks;			/* blocks of DW_W channels per image */
	nn_dw_lanes_plan pl;		/* padded plane, window and tap offsets */
	bool		oom;
} lanes_job;

/*
 * buf[h + pb][w + pb][i] = X[c0 + i][h][w] for the block's nc channels (zero
 * lanes past).  A channel's plane is contiguous, so DW_W consecutive pixels
 * are transposed at a time whatever the row width (a 7 x 7 plane takes 4
 * transposes of 16, not 7 half-empty ones).
 */
__attribute__((target(DW_TARGET)))
static void
fill_block(const lanes_job *j, const float *xb, int nc, float *buf)
{
	const nn_geom *g = &j->cs->g;
	int64_t		h = 0,
				w = 0;

	for (int64_t p0 = 0; p0 < g->in_size; p0 += DW_W)
	{
		int64_t		cnt = g->in_size - p0 < DW_W ? g->in_size - p0 : DW_W;
		dw_mask		m = dw_first(cnt);
		dw_vec		r[DW_W];

		for (int i = 0; i < DW_W; i++)
			r[i] = i < nc ? dw_load_part(xb + i * g->in_size + p0, cnt == DW_W, m) : dw_zero();
		dw_transpose(r);
		for (int64_t q = 0; q < cnt; q++)
		{
			dw_store(buf + ((h + g->pb[1]) * j->pl.pw + w + g->pb[2]) * DW_W, r[q]);
			if (++w == g->in[2])
			{
				w = 0;
				h++;
			}
		}
	}
}

/* obuf[p - p0][i] for outputs p in [p0, p0 + cnt): the bias plus every tap */
__attribute__((target(DW_TARGET)))
static void
compute_chunk(const lanes_job *j, const float *buf, const float *wv, const float *bias_lanes, int64_t p0,
			  int64_t cnt, float *obuf)
{
	const int64_t *io = j->pl.in_off + p0,
			   *to = j->pl.tap_off;
	int64_t		taps = j->cs->g.k_size,
				p = 0;
	dw_vec		bias = dw_load(bias_lanes);

	for (; p + DW_PX <= cnt; p += DW_PX)
	{
		dw_vec		acc[DW_PX];

#pragma GCC unroll 8
		for (int q = 0; q < DW_PX; q++)
			acc[q] = bias;
		for (int64_t t = 0; t < taps; t++)
		{
			dw_vec		wt = dw_load(wv + t * DW_W);
			const float *bt = buf + to[t];

#pragma GCC unroll 8
			for (int q = 0; q < DW_PX; q++)
				acc[q] = dw_fmadd(wt, dw_load(bt + io[p + q]), acc[q]);
		}
#pragma GCC unroll 8
		for (int q = 0; q < DW_PX; q++)
			dw_store(obuf + (p + q) * DW_W, acc[q]);
	}
	for (; p < cnt; p++)
	{
		dw_vec		acc = bias;

		for (int64_t t = 0; t < taps; t++)
			acc = dw_fmadd(dw_load(wv + t * DW_W), dw_load(buf + to[t] + io[p]), acc);
		dw_store(obuf + p * DW_W, acc);
	}
}

/*
 * Y[c0 + i][p] = act(obuf[p - p0][i] + Z) for the chunk's outputs, nc
 * channels; a group of fewer than DW_W outputs (the plane's last) through
 * a mask
 */
__attribute__((target(DW_TARGET)))
static void
store_chunk(const lanes_job *j, const float *obuf, int nc, int64_t p0, int64_t cnt, float *yb,
			const float *zb)
{
	const nn_geom *g = &j->cs->g;
	const nn_activation *act = &j->epi->act;

	for (int64_t q0 = 0; q0 < cnt; q0 += DW_W)
	{
		bool		full = cnt - q0 >= DW_W;
		dw_mask		m = dw_first(cnt - q0);
		dw_vec		r[DW_W];

		/* rows past cnt hold stale values; their lanes are not stored */
		for (int q = 0; q < DW_W; q++)
			r[q] = dw_load(obuf + (q0 + q) * DW_W);
		dw_transpose(r);
		for (int i = 0; i < nc; i++)
		{
			int64_t		off = i * g->out_size + p0 + q0;
			dw_vec		v = r[i];

			if (zb)
				v = dw_add(v, dw_load_part(zb + off, full, m));
			dw_store_part(yb + off, full, m, dw_act(act, v));
		}
	}
}

/* each thread's buffers (padded block, output chunk, weight vectors): nn_dw_lanes_buffers */
__attribute__((target(DW_TARGET)))
static void
lanes_task(void *arg, int64_t begin, int64_t end)
{
	lanes_job  *j = arg;
	const nn_conv_shape *cs = j->cs;
	const nn_geom *g = &cs->g;
	const nn_activation *act = &j->epi->act;
	size_t		buf_floats = (size_t) (j->pl.ph * j->pl.pw * DW_W),
				obuf_floats = DW_CHUNK * DW_W;
	float	   *buf = nn_dw_lanes_buffers(buf_floats + obuf_floats + (size_t) g->k_size * DW_W),
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
					c0 = (t % j->blocks) * DW_W;
		int			nc = (int) (cs->c - c0 < DW_W ? cs->c - c0 : DW_W);
		float		bias[DW_W] __attribute__((aligned(64))) = {0};
		const float *zb = j->epi->z ? j->epi->z + (n * cs->m + c0) * g->out_size : NULL;
		float	   *yb = j->y + (n * cs->m + c0) * g->out_size;

		for (int64_t tap = 0; tap < g->k_size; tap++)
			for (int i = 0; i < DW_W; i++)
				wv[tap * DW_W + i] = i < nc ? j->w[(c0 + i) * g->k_size + tap] : 0.0f;
		for (int i = 0; i < nc && j->epi->bias; i++)
			bias[i] = j->epi->bias[c0 + i];
		fill_block(j, j->x + (n * cs->c + c0) * g->in_size, nc, buf);
		for (int64_t p0 = 0; p0 < g->out_size; p0 += DW_CHUNK)
		{
			int64_t		cnt = g->out_size - p0 < DW_CHUNK ? g->out_size - p0 : DW_CHUNK;

			compute_chunk(j, buf, wv, bias, p0, cnt, obuf);
			store_chunk(j, obuf, nc, p0, cnt, yb, zb);
		}
		if (act_later)
			for (int i = 0; i < nc; i++)
				nn_activation_apply_row_f32(act, yb + i * g->out_size, g->out_size);
	}
}

ox_code
DW_ENTRY(ox_kernel_ctx *ctx, const nn_conv_shape *cs, const float *x, const float *w,
		 const nn_conv_epi *epi, float *y, ox_status *st)
{
	lanes_job	job;

	memset(&job, 0, sizeof(job));
	job.cs = cs;
	job.x = x;
	job.w = w;
	job.epi = epi;
	job.y = y;
	job.blocks = (cs->c + DW_W - 1) / DW_W;
	if (nn_dw_lanes_plan_make(cs, DW_W, &job.pl, st) != OX_OK)
		return st->code;
	ox_parallel_for(ctx, cs->n * job.blocks, 1, lanes_task, &job);
	nn_dw_lanes_plan_free(&job.pl);
	if (job.oom)
		return ox_fail(st, OX_OUT_OF_MEMORY, "Conv: could not allocate a depthwise block buffer");
	return OX_OK;
}

#undef DW_ENTRY
#undef DW_TARGET
#undef DW_PX
#undef DW_CHUNK
#undef dw_vec
#undef dw_mask
#undef dw_zero
#undef dw_load
#undef dw_store
#undef dw_fmadd
#undef dw_add
#undef dw_first
#undef dw_load_part
#undef dw_store_part
#undef dw_transpose
#undef dw_act
