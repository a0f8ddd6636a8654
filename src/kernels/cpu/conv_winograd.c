/*
 * conv_winograd.c
 *	  Float32 3x3 stride-1 convolution by Winograd's minimal filtering
 *	  F(4x4, 3x3) (Lavin & Gray, 2016), AVX-512 only: the fast path of
 *	  conv_fast.h for the 3x3 layers of ResNet-style networks.
 *
 * Every 4x4 output tile is computed from the 6x6 input patch d that covers
 * it as Y = A^T [ U (.) V ] A with V = B^T d B and U = G g G^T (the 3x3
 * filter g transformed once per session): per tile, channel and filter 36
 * multiplications instead of 144.  The interpolation points are 0, 1, -1,
 * 2, -1/2 and infinity rather than the usual 0, +-1, +-2: the same cost,
 * and in float32 about 2.5 times smaller errors (measured over candidate
 * point sets; Barabasz et al., "Error analysis and improving the accuracy
 * of Winograd convolution for deep neural networks", 2020, study the
 * choice).  G and B^T are scaled as the Toom-Cook construction gives them.  Summed over input channels, the
 * elementwise products become 36 independent GEMMs, M[xi] = U[xi] V[xi]
 * (output channels x input channels times input channels x tiles), which
 * run on conv_gemm.c's micro-kernel with U packed like ordinary weights
 * (36 groups of M x C).
 *
 * Work goes in blocks of tiles that fit L2 with their transforms:
 *   1. input transform: for each channel and each tile row, the 6 input
 *      rows are combined vertically with B^T (vectors along the row), then
 *      each combined row is split into its four column phases (tile t's
 *      column j is at 4t + j: an in-register 4 x 16 transpose) and combined
 *      horizontally, which gives 36 vectors of 16 tiles, stored in the
 *      micro-kernel's sliver layout;
 *   2. the 36 GEMMs;
 *   3. output transform: A^T horizontally and vertically, the four column
 *      phases interleaved back into output rows, then bias, Z and the
 *      activation, and one store.
 *
 * Accuracy: the transforms' coefficients (up to 2.5 in B, 16/15 in G, 8
 * in A) cost a few bits against a direct float32 sum: errors stay near
 * 3e-6 of the output's largest magnitude (the engine tests allow 1e-5).
 */
#include "kernels/cpu/conv_fast.h"
#include "kernels/cpu/winograd_f43.h"

#include <immintrin.h>
#include <string.h>

#define WT NN_WINO_T
#define WN NN_WINO_N
#define SLIVER 48				/* the micro-kernel's B width */
#define WKC 160					/* reduction block (input channels) */
/* V and M of one block together stay under this */
#define BLOCK_BYTES (1536 * 1024)

bool
nn_winograd_applies(const nn_conv_shape *cs)
{
	const nn_geom *g = &cs->g;

	/*
	 * Few channels: the transforms cost more than the products they save.
	 * Small planes (ResNet's 14x14 and 7x7): few tiles share each
	 * transformed filter, which is 4x the size of the filter and comes from
	 * memory for little work; measured slower than the GEMM path there.
	 */
	return nn_conv_fast_isa() == NN_ISA_AVX512 && g->nsp == 2 && g->k[1] == 3 && g->k[2] == 3 &&
		g->s[1] == 1 && g->s[2] == 1 && g->d[1] == 1 && g->d[2] == 1 && cs->group == 1 &&
		cs->c >= 16 && cs->m >= 16 && g->in[1] >= 8 && g->in[2] >= 8 && g->in[1] * g->in[2] >= 400;
}

nn_convw *
nn_winograd_pack(int64_t m, int64_t c, const float *w, ox_status *st)
{
	float	   *u = nn_scratch(ox_shape_numel(3, (int64_t[]) {WN, m, c}), sizeof(float), st, "Conv Winograd weights");
	nn_convw   *p;

	if (!u)
		return NULL;
	for (int64_t mi = 0; mi < m; mi++)
		for (int64_t ci = 0; ci < c; ci++)
		{
			float		t[WN];

			nn_wino_filter(w + (mi * c + ci) * 9, t);
			for (int xi = 0; xi < WN; xi++)
				u[(xi * m + mi) * c + ci] = t[xi];
		}
	p = nn_convw_pack(WN, WN * m, c, u, st);
	ox_aligned_free(u);
	if (p)
	{
		p->kind = NN_CONVW_WINOGRAD;
		p->src = w;
	}
	return p;
}

/* ---- transforms ----------------------------------------------------------- */

/* out[j] lane t = p[4t + j] for 16 tiles (64 floats), j < 4 */
__attribute__((target("avx512f")))
static inline void
deinterleave4(const float *p, __m512 *out)
{
	__m512		a0 = _mm512_loadu_ps(p),
				a1 = _mm512_loadu_ps(p + 16),
				a2 = _mm512_loadu_ps(p + 32),
				a3 = _mm512_loadu_ps(p + 48);
	__m512		x0 = _mm512_shuffle_f32x4(a0, a1, 0x44),
				x1 = _mm512_shuffle_f32x4(a0, a1, 0xEE),
				x2 = _mm512_shuffle_f32x4(a2, a3, 0x44),
				x3 = _mm512_shuffle_f32x4(a2, a3, 0xEE);
	/* t_q's 128-bit lane b: the four phases of tile 4b + q */
	__m512		t0 = _mm512_shuffle_f32x4(x0, x2, 0x88),
				t1 = _mm512_shuffle_f32x4(x0, x2, 0xDD),
				t2 = _mm512_shuffle_f32x4(x1, x3, 0x88),
				t3 = _mm512_shuffle_f32x4(x1, x3, 0xDD);
	__m512d		u0 = _mm512_castps_pd(_mm512_unpacklo_ps(t0, t1)),
				u1 = _mm512_castps_pd(_mm512_unpackhi_ps(t0, t1)),
				u2 = _mm512_castps_pd(_mm512_unpacklo_ps(t2, t3)),
				u3 = _mm512_castps_pd(_mm512_unpackhi_ps(t2, t3));

	out[0] = _mm512_castpd_ps(_mm512_unpacklo_pd(u0, u2));
	out[1] = _mm512_castpd_ps(_mm512_unpackhi_pd(u0, u2));
	out[2] = _mm512_castpd_ps(_mm512_unpacklo_pd(u1, u3));
	out[3] = _mm512_castpd_ps(_mm512_unpackhi_pd(u1, u3));
}

/* the inverse: o[k] lane 4q + j = y[j] lane 4k + q */
__attribute__((target("avx512f")))
static inline void
interleave4(const __m512 *y, __m512 *o)
{
	__m512		u0 = _mm512_unpacklo_ps(y[0], y[1]),
				u1 = _mm512_unpackhi_ps(y[0], y[1]),
				u2 = _mm512_unpacklo_ps(y[2], y[3]),
				u3 = _mm512_unpackhi_ps(y[2], y[3]);
	__m512		t0 = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(u0), _mm512_castps_pd(u2))),
				t1 = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(u0), _mm512_castps_pd(u2))),
				t2 = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(u1), _mm512_castps_pd(u3))),
				t3 = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(u1), _mm512_castps_pd(u3)));
	__m512		x0 = _mm512_shuffle_f32x4(t0, t1, 0x44),
				x1 = _mm512_shuffle_f32x4(t0, t1, 0xEE),
				x2 = _mm512_shuffle_f32x4(t2, t3, 0x44),
				x3 = _mm512_shuffle_f32x4(t2, t3, 0xEE);

	o[0] = _mm512_shuffle_f32x4(x0, x2, 0x88);
	o[1] = _mm512_shuffle_f32x4(x0, x2, 0xDD);
	o[2] = _mm512_shuffle_f32x4(x1, x3, 0x88);
	o[3] = _mm512_shuffle_f32x4(x1, x3, 0xDD);
}

static inline __mmask16
lanes(int64_t n)
{
	return n >= 16 ? (__mmask16) 0xFFFF : n <= 0 ? (__mmask16) 0 : (__mmask16) ((1u << n) - 1);
}

/* ---- the job ---------------------------------------------------------------- */

typedef struct wino_job
{
	const nn_conv_shape *cs;
	const nn_convw *pw;
	const float *x;
	float	   *y;
	const nn_conv_epi *epi;
	int64_t		th,
				tw;				/* tile rows and columns per image */
	int64_t		tiles;			/* all tiles of all images */
	int64_t		per_block;		/* tiles per block (the last may have up to a third more) */
	int64_t		blocks;
	int64_t		max_block;		/* tiles of the largest block */
	int64_t		mparts;
	int64_t		tiles_per_part;	/* 8-channel tiles of the weights per part */
	int64_t		rw;				/* padded row length */
	bool		oom;
} wino_job;

/* V, M and the row buffers of each thread, kept between calls */
static __thread float *tls_buf;
static __thread size_t tls_len;

/*
 * Input transform of channel c for the block's tiles [t0, t1) (global tile
 * numbers) into V [WN][nsl][C][SLIVER].
 */
__attribute__((target("avx512f,fma")))
static void
input_transform(const wino_job *j, int64_t c, int64_t t0, int64_t t1, float *v, int64_t nsl,
				float *rows)
{
	const nn_conv_shape *cs = j->cs;
	const nn_geom *g = &cs->g;
	int64_t		H = g->in[1],
				W = g->in[2],
				pt = g->pb[1],
				pl = g->pb[2],
				rw = j->rw;
	float	   *in = rows,			/* six padded input rows */
			   *u = rows + WT * rw; /* six vertically combined rows */

	for (int64_t r = t0 / j->tw; r * j->tw < t1; r++)
	{
		int64_t		n = r / j->th,
					th = r % j->th,
					twa = t0 > r * j->tw ? t0 - r * j->tw : 0,
					twb = t1 < (r + 1) * j->tw ? t1 - r * j->tw : j->tw;
		const float *xc = j->x + (n * cs->c + c) * g->in_size;

		for (int i = 0; i < WT; i++)
		{
			int64_t		ih = 4 * th - pt + i;
			float	   *row = in + i * rw;

			memset(row, 0, sizeof(float) * rw);
			if (ih >= 0 && ih < H)
				memcpy(row + pl, xc + ih * W, sizeof(float) * W);
		}
		/* vertical: u_i = sum_k B^T[i][k] in_k, as far as the transposes read */
		for (int64_t col = 4 * twa; col < 4 * (twa + (twb - twa - 1) / 16 * 16) + 68; col += 16)
		{
			__m512		d[WT],
						o[WT];

			for (int i = 0; i < WT; i++)
				d[i] = _mm512_loadu_ps(in + i * rw + col);
			nn_wino_input_1d(d, o);
			for (int i = 0; i < WT; i++)
				_mm512_storeu_ps(u + i * rw + col, o[i]);
		}
		/* horizontal, sixteen tiles at a time */
		for (int64_t tw0 = twa; tw0 < twb; tw0 += 16)
		{
			int64_t		cnt = twb - tw0 < 16 ? twb - tw0 : 16,
						tb = r * j->tw + tw0 - t0,	/* first tile's place in the block */
						s = tb / SLIVER,
						col = tb % SLIVER;
			__mmask16	m = lanes(cnt),
						m1 = lanes(cnt < SLIVER - col ? cnt : SLIVER - col),
						m2 = (__mmask16) (m & ~m1);

			for (int i = 0; i < WT; i++)
			{
				__m512		d[8],
							o[WT];

				deinterleave4(u + i * rw + 4 * tw0, d);
				deinterleave4(u + i * rw + 4 * tw0 + 4, d + 4);
				/* phases 4 and 5 are the next tile's 0 and 1 */
				nn_wino_input_1d(d, o);
				for (int l = 0; l < WT; l++)
				{
					float	   *dst = v + (((i * WT + l) * nsl + s) * cs->c + c) * SLIVER + col;

					_mm512_mask_storeu_ps(dst, m1, o[l]);
					if (m2)
						/* lanes past the sliver go to the next one, from its column 0 */
						_mm512_mask_storeu_ps(dst + (int64_t) cs->c * SLIVER - SLIVER, m2, o[l]);
				}
			}
		}
	}
}

/*
 * An infinity or NaN in a 6x6 input patch spreads over the whole output
 * tile through the transforms (and large finite inputs can overflow the
 * transformed sums): outputs that come out non-finite are computed again
 * directly, so that they are what a direct convolution gives -- finite
 * wherever their own 3x3 window is.  Rare, and only those lanes.
 */
__attribute__((target("avx512f")))
static __m512
direct_lanes(const wino_job *j, int64_t n, int64_t mch, int64_t oh, int64_t ow0, __mmask16 bad, __m512 v)
{
	const nn_conv_shape *cs = j->cs;
	const float *x = j->x + n * cs->c * cs->g.in_size;
	const float *w = (const float *) j->pw->src + mch * cs->c * 9;
	float		bias = j->epi->bias ? j->epi->bias[mch] : 0.0f;
	_Alignas(64) float out[16];

	_mm512_store_ps(out, v);
	for (int lane = 0; lane < 16; lane++)
		if (bad & (1u << lane))
			out[lane] = nn_conv3x3_direct(cs, x, w, bias, oh, ow0 + lane);
	return _mm512_load_ps(out);
}

/*
 * Output transform of channel m (row mrow of the block's M) for tiles
 * [t0, t1): Y = act(A^T M A + bias + Z).
 */
__attribute__((target("avx512f,fma")))
static void
output_transform(const wino_job *j, int64_t mch, int64_t mrow, int64_t mrows, int64_t t0, int64_t t1,
				 const float *mo, int64_t ldm)
{
	const nn_conv_shape *cs = j->cs;
	const nn_geom *g = &cs->g;
	const nn_activation *act = &j->epi->act;
	bool		act_after = !nn_act_in_registers(act);
	int64_t		OH = g->out[1],
				OW = g->out[2];
	__m512		bias = _mm512_set1_ps(j->epi->bias ? j->epi->bias[mch] : 0.0f);

	for (int64_t r = t0 / j->tw; r * j->tw < t1; r++)
	{
		int64_t		n = r / j->th,
					th = r % j->th,
					twa = t0 > r * j->tw ? t0 - r * j->tw : 0,
					twb = t1 < (r + 1) * j->tw ? t1 - r * j->tw : j->tw;
		int64_t		yoff = (n * cs->m + mch) * g->out_size;
		float	   *yc = j->y + yoff;
		const float *zc = j->epi->z ? j->epi->z + yoff : NULL;

		for (int64_t tw0 = twa; tw0 < twb; tw0 += 16)
		{
			int64_t		cnt = twb - tw0 < 16 ? twb - tw0 : 16,
						tb = r * j->tw + tw0 - t0;
			__mmask16	m = lanes(cnt);
			__m512		p[WT][4],
						q[4][4];

			for (int i = 0; i < WT; i++)
			{
				__m512		mv[WT];

				for (int l = 0; l < WT; l++)
					mv[l] = _mm512_maskz_loadu_ps(m, mo + ((i * WT + l) * mrows + mrow) * ldm + tb);
				nn_wino_output_1d(mv, p[i]);
			}
			for (int c4 = 0; c4 < 4; c4++)
			{
				__m512		col[WT],
							o[4];

				for (int i = 0; i < WT; i++)
					col[i] = p[i][c4];
				nn_wino_output_1d(col, o);
				for (int rr = 0; rr < 4; rr++)
					q[rr][c4] = o[rr];
			}
			for (int rr = 0; rr < 4; rr++)
			{
				int64_t		oh = 4 * th + rr,
							ow0 = 4 * tw0,
							valid = OW - ow0 < 4 * cnt ? OW - ow0 : 4 * cnt;
				__m512		o[4];

				if (oh >= OH)
					break;
				interleave4(q[rr], o);
				for (int k = 0; k < 4; k++)
				{
					__mmask16	mk = lanes(valid - 16 * k),
								bad;
					float	   *dst = yc + oh * OW + ow0 + 16 * k;
					__m512		v = _mm512_add_ps(o[k], bias);

					if (!mk)
						break;
					/* v - v is 0 unless v is infinite or NaN */
					bad = _mm512_mask_cmp_ps_mask(mk, _mm512_sub_ps(o[k], o[k]), _mm512_setzero_ps(), _CMP_NEQ_UQ);
					if (bad)
						v = direct_lanes(j, n, mch, oh, ow0 + 16 * k, bad, v);
					if (zc)
						v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mk, zc + oh * OW + ow0 + 16 * k));
					_mm512_mask_storeu_ps(dst, mk, nn_act_avx512(act, v));
				}
				if (act_after)
					nn_activation_apply_row_f32(act, yc + oh * OW + ow0, valid);
			}
		}
	}
}

static void
wino_task(void *arg, int64_t begin, int64_t end)
{
	wino_job   *j = arg;
	const nn_conv_shape *cs = j->cs;
	const nn_convw *pw = j->pw;
	int64_t		C = cs->c,
				nsl = (j->max_block + SLIVER - 1) / SLIVER,
				ldm = nsl * SLIVER,
				mrows_max = j->tiles_per_part * NN_CONV_MR;
	size_t		v_len = (size_t) WN * nsl * C * SLIVER,
				m_len = (size_t) WN * mrows_max * ldm;
	float	   *buf = ox_aligned_grow(&tls_buf, &tls_len, v_len + m_len + 2 * WT * j->rw);
	float	   *v = buf,
			   *mo = buf + v_len,
			   *rows = mo + m_len;

	if (!buf)
	{
		j->oom = true;
		return;
	}
	for (int64_t t = begin; t < end; t++)
	{
		int64_t		blk = t / j->mparts,
					mp = t % j->mparts,
					t0 = blk * j->per_block,
					t1 = blk == j->blocks - 1 ? j->tiles : t0 + j->per_block,
					ntb = t1 - t0,
					bsl = (ntb + SLIVER - 1) / SLIVER,
					mt0 = mp * j->tiles_per_part,
					mt1 = mt0 + j->tiles_per_part < pw->tiles ? mt0 + j->tiles_per_part : pw->tiles,
					m0 = mt0 * NN_CONV_MR,
					m1 = mt1 * NN_CONV_MR < cs->m ? mt1 * NN_CONV_MR : cs->m,
					mrows = (mt1 - mt0) * NN_CONV_MR;

		if (mt0 >= mt1)
			continue;
		for (int64_t c = 0; c < C; c++)
			input_transform(j, c, t0, t1, v, bsl, rows);
		/* the last sliver's columns past the block: zeros, not stale values */
		if (ntb % SLIVER)
			for (int xi = 0; xi < WN; xi++)
				for (int64_t c = 0; c < C; c++)
					memset(v + ((xi * bsl + bsl - 1) * C + c) * SLIVER + ntb % SLIVER, 0,
						   sizeof(float) * (SLIVER - ntb % SLIVER));
		for (int xi = 0; xi < WN; xi++)
			for (int64_t k0 = 0; k0 < C; k0 += WKC)
			{
				int64_t		kc = C - k0 < WKC ? C - k0 : WKC;

				for (int64_t s = 0; s < bsl; s++)
				{
					const float *b = v + ((xi * bsl + s) * C + k0) * SLIVER;
					int			cols = (int) (ntb - s * SLIVER < SLIVER ? ntb - s * SLIVER : SLIVER);

					for (int64_t mt = mt0; mt < mt1; mt++)
					{
						int64_t		r0 = mt * NN_CONV_MR;
						int			rows_ = (int) (cs->m - r0 < NN_CONV_MR ? cs->m - r0 : NN_CONV_MR);

						nn_conv_tile_avx512(kc, pw->data + ((xi * pw->tiles + mt) * C + k0) * NN_CONV_MR, b,
											mo + (xi * mrows + r0 - m0) * ldm + s * SLIVER, ldm,
											rows_, cols, k0 > 0);
					}
				}
			}
		for (int64_t mch = m0; mch < m1; mch++)
			output_transform(j, mch, mch - m0, mrows, t0, t1, mo, ldm);
	}
}

ox_code
nn_conv_winograd_f32(ox_kernel_ctx *ctx, const nn_conv_shape *cs, const nn_convw *pw, const float *x,
					 const nn_conv_epi *epi, float *y, ox_status *st)
{
	const nn_geom *g = &cs->g;
	wino_job	job;
	int			threads = ctx ? ctx->nthreads : 1;
	int64_t		max_block,
				twp;

	memset(&job, 0, sizeof(job));
	job.cs = cs;
	job.pw = pw;
	job.x = x;
	job.y = y;
	job.epi = epi;
	job.th = (g->out[1] + 3) / 4;
	job.tw = (g->out[2] + 3) / 4;
	job.tiles = cs->n * job.th * job.tw;
	/* rows hold every tile's patch and the transposes' 64-float reads */
	twp = (job.tw + 15) / 16 * 16;
	job.rw = 4 * twp + 80;
	if (job.rw < g->in[2] + g->pb[2])
		job.rw = g->in[2] + g->pb[2];
	/*
	 * Blocks of whole slivers that keep V and M under BLOCK_BYTES; a
	 * remainder under a third of a block joins the last one rather than
	 * paying for a pass over the transformed weights on its own.
	 */
	max_block = BLOCK_BYTES / (WN * sizeof(float) * (cs->c + cs->m) * SLIVER) * SLIVER;
	if (max_block < SLIVER)
		max_block = SLIVER;
	job.per_block = max_block;
	job.blocks = job.tiles / max_block;
	if (job.blocks == 0 || job.tiles - job.blocks * max_block >= max_block / 3)
		job.blocks++;
	job.max_block = job.tiles - (job.blocks - 1) * max_block;
	if (job.max_block < max_block)
		job.max_block = max_block;
	/*
	 * Fewer blocks than threads: split the output channels too, into one
	 * part per thread (each part transforms the block's input again; two
	 * per thread left ResNet-50's 3x3 layers at 28x28 no faster at 2
	 * threads than at 1).
	 */
	job.mparts = 1;
	if (threads > 1 && job.blocks < threads)
	{
		job.mparts = (threads + job.blocks - 1) / job.blocks;
		if (job.mparts > pw->tiles)
			job.mparts = pw->tiles;
	}
	job.tiles_per_part = (pw->tiles + job.mparts - 1) / job.mparts;
	job.mparts = (pw->tiles + job.tiles_per_part - 1) / job.tiles_per_part;
	ox_parallel_for(ctx, job.blocks * job.mparts, 1, wino_task, &job);
	if (job.oom)
		return ox_fail(st, OX_OUT_OF_MEMORY, "Conv: could not allocate Winograd buffers");
	return OX_OK;
}
