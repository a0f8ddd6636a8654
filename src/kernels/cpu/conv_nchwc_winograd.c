/*
 * conv_nchwc_winograd.c
 *	  Float32 3x3 stride-1 convolution by Winograd's F(4x4, 3x3) on
 *	  channel-blocked tensors in blocks of 16 (NCHW16c), AVX-512: what the
 *	  onnx_pg.nchwc Conv runs for such layers, so that ResNet's 3x3 layers
 *	  need no reorders between the blocked 1x1 layers around them.
 *
 * The same arithmetic as conv_winograd.c (the transforms of
 * winograd_f43.h), turned to the blocked layout: there a vector holds 16
 * tiles of one channel, here 16 channels of one tile, which is how the
 * blocked tensor stores them, so the transforms need no transposes:
 *   1. input transform, per tile and input block: the 6x6 patch is 36
 *      vector loads, V = B^T d B is computed lane by lane and stored as
 *      V[xi][tile][channel] (a block of tiles at a time);
 *   2. per group of 4 output blocks (64 channels) and per point xi of the
 *      transform domain, M[xi][tile][64] = V[xi][tile][:] U[xi][:][64]: the
 *      register tile of the blocked convolution (4 output blocks x 6
 *      tiles, the 4 weight vectors of an input channel loaded once and its
 *      value broadcast at the 6 tiles), U[xi] of the group (C x 64 floats)
 *      staying in L1 across the block's tiles;
 *   3. output transform, per tile and output block: Y = A^T M A, then bias,
 *      Z and the activation, and the 16 pixels stored.
 * A block's V and M stay in L2 (WINO_BLOCK_BYTES).  Outputs that come out
 * non-finite (an infinity or NaN in a 6x6 patch spreads over the whole
 * tile through the transforms) are computed again directly, as
 * conv_winograd.c does.
 */
#include "kernels/cpu/conv_nchwc.h"
#include "kernels/cpu/winograd_f43.h"

#include <string.h>

#define BLK 16					/* AVX-512 only: blocks of 16 channels */
#define WT NN_WINO_T
#define WN NN_WINO_N
#define NOB 4					/* output blocks per group */
#define NS (NOB * BLK)			/* output channels per group */
#define TPX 6					/* tiles per register tile */
/* V and M of one block of tiles together stay under this */
#define WINO_BLOCK_BYTES (1024 * 1024)

struct nn_nchwc_wino
{
	int64_t		m,
				c,
				mb,
				cb,
				og;				/* groups of NOB output blocks */
	float	   *u;				/* [og][WN][cb * 16][NS], zero past C and M */
	const float *w;				/* the original [M, C, 3, 3] (direct recomputation) */
};

/*
 * nn_wino_filter for 8 filters at once, in the lanes of double vectors:
 * the filters at g, g + stride, ... (lanes past n are zero filters), their
 * 36 points stored as 8 floats each at out + xi * ostride.  The same
 * products and sums in the same order as nn_wino_filter, not contracted
 * into fused multiply-adds, so the same bits; the scalar one, filter
 * after filter, was most of ResNet-50's Winograd packing (a million
 * filters).
 */
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
__attribute__((target("avx512f,avx2")))
static void
wino_filter8(const float *g, int64_t stride, int n, float *out, int64_t ostride)
{
	/* 64-bit offsets: a filter's stride is 9 C floats, whatever C is */
	const __m512i idx = _mm512_setr_epi64(0, stride, 2 * stride, 3 * stride, 4 * stride, 5 * stride,
										  6 * stride, 7 * stride);
	const __mmask8 lanes = (__mmask8) ((1u << n) - 1);
	const __m256i live = _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
	__m512d		gv[9],
				t[NN_WINO_T][3];

	for (int k = 0; k < 9; k++)
		gv[k] = _mm512_cvtps_pd(_mm512_mask_i64gather_ps(_mm256_setzero_ps(), lanes, idx, g + k, 4));
	for (int i = 0; i < NN_WINO_T; i++)
		for (int b = 0; b < 3; b++)
			t[i][b] = _mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(_mm512_set1_pd(NN_WINO_G[i][0]), gv[b]),
												  _mm512_mul_pd(_mm512_set1_pd(NN_WINO_G[i][1]), gv[3 + b])),
									_mm512_mul_pd(_mm512_set1_pd(NN_WINO_G[i][2]), gv[6 + b]));
	for (int i = 0; i < NN_WINO_T; i++)
		for (int l = 0; l < NN_WINO_T; l++)
		{
			__m512d		v = _mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(t[i][0], _mm512_set1_pd(NN_WINO_G[l][0])),
														_mm512_mul_pd(t[i][1], _mm512_set1_pd(NN_WINO_G[l][1]))),
										  _mm512_mul_pd(t[i][2], _mm512_set1_pd(NN_WINO_G[l][2])));

			/* dead lanes +0.0, as a zero filter packs (G's negative entries make -0.0 of them) */
			_mm256_storeu_ps(out + (i * NN_WINO_T + l) * ostride,
							 _mm256_and_ps(_mm512_cvtpd_ps(v), _mm256_castsi256_ps(live)));
		}
}
#pragma GCC pop_options

/*
 * U of one group (NS output channels from m0) and one block of BLK input
 * channels from c0, zero past M and C: the block's filters transformed
 * into t[xi][ci][o], then each point's BLK x NS floats, contiguous in U,
 * copied out whole.  Transforming filter after filter straight into U
 * wrote each float to a different cache line (the points are C x NS floats
 * apart), each line 16 times at far-apart moments.
 */
static void
pack_block(nn_nchwc_wino *p, int64_t g, int64_t c0, float *t)
{
	int64_t		cp = p->cb * BLK,
				m0 = g * NS;

	for (int64_t ci = 0; ci < BLK; ci++)
		for (int64_t o = 0; o < NS; o += 8)
		{
			int64_t		n = c0 + ci < p->c ? p->m - (m0 + o) : 0;

			n = n < 0 ? 0 : n > 8 ? 8 : n;
			wino_filter8(p->w + ((m0 + o) * p->c + c0 + ci) * 9 * (n > 0), p->c * 9, (int) n,
						 t + ci * NS + o, BLK * NS);
		}
	for (int xi = 0; xi < WN; xi++)
		memcpy(p->u + ((g * WN + xi) * cp + c0) * NS, t + xi * BLK * NS, sizeof(float) * BLK * NS);
}

typedef struct pack_job
{
	nn_nchwc_wino *p;
	bool		oom;
} pack_job;

/* blocks [begin, end) of (group, input block), with a scratch block of their own */
static void
pack_blocks(void *arg, int64_t begin, int64_t end)
{
	pack_job   *pj = arg;
	float	   *t = ox_aligned_alloc(sizeof(float) * WN * BLK * NS);

	if (!t)
	{
		__atomic_store_n(&pj->oom, true, __ATOMIC_RELAXED);
		return;
	}
	for (int64_t b = begin; b < end; b++)
		pack_block(pj->p, b / pj->p->cb, b % pj->p->cb * BLK, t);
	ox_aligned_free(t);
}

nn_nchwc_wino *
nn_nchwc_winograd_pack(const ox_prepare_ctx *pc, int64_t m, int64_t c, const float *w)
{
	nn_nchwc_wino *p = calloc(1, sizeof(*p));
	pack_job	pj;
	int64_t		cp;

	if (!p)
	{
		ox_fail(pc->st, OX_OUT_OF_MEMORY, "onnx_pg.nchwc Conv: could not allocate Winograd weights");
		return NULL;
	}
	p->m = m;
	p->c = c;
	p->mb = (m + BLK - 1) / BLK;
	p->cb = (c + BLK - 1) / BLK;
	p->og = (p->mb + NOB - 1) / NOB;
	p->w = w;
	cp = p->cb * BLK;
	if (ox_shape_numel(4, (int64_t[]) {p->og, WN, cp, NS}) < 0 ||
		!(p->u = ox_aligned_alloc_huge(sizeof(float) * (size_t) (p->og * WN * cp * NS))))
	{
		free(p);
		ox_fail(pc->st, OX_OUT_OF_MEMORY, "onnx_pg.nchwc Conv: could not allocate Winograd weights");
		return NULL;
	}
	/* every float of U written once, the padding past M and C as zeros */
	pj.p = p;
	pj.oom = false;
	ox_prepare_parallel_for(pc, p->og * p->cb, 1, pack_blocks, &pj);
	if (pj.oom)
	{
		nn_nchwc_winograd_free(p);
		ox_fail(pc->st, OX_OUT_OF_MEMORY, "onnx_pg.nchwc Conv: could not allocate Winograd weights");
		return NULL;
	}
	return p;
}

void
nn_nchwc_winograd_free(nn_nchwc_wino *p)
{
	if (p)
		ox_aligned_free(p->u);
	free(p);
}

typedef struct wino_job
{
	const nn_nchwc_wino *p;
	const nn_conv_shape *cs;
	const float *x;
	const float *z;
	const float *bias;			/* og x NS, zero past M */
	const nn_activation *act;
	float	   *y;
	int64_t		h,
				w,
				oh,
				ow,
				pt,
				pl;
	int64_t		th,
				tw,				/* tile rows and columns per image */
				tiles,			/* of all images */
				per_block,		/* tiles per block */
				gsplit;			/* tasks per block, each for a share of the groups */
	bool		oom;
} wino_job;

/* V and M of each thread, kept between calls */
static __thread float *tls_buf;
static __thread size_t tls_len;

/* image, top-left input position of tile t's patch, its output position */
static inline void
tile_place(const wino_job *j, int64_t t, int64_t *n, int64_t *oy, int64_t *ox)
{
	int64_t		per_image = j->th * j->tw,
				r = t % per_image;

	*n = t / per_image;
	*oy = 4 * (r / j->tw);
	*ox = 4 * (r % j->tw);
}

/* V[xi][tl][cp] of tiles [t0, t0 + nt) */
__attribute__((target("avx512f,fma")))
static void
input_transform(const wino_job *j, int64_t t0, int64_t nt, float *v)
{
	const nn_nchwc_wino *p = j->p;
	int64_t		cp = p->cb * BLK,
				plane = j->h * j->w * BLK;

	for (int64_t tl = 0; tl < nt; tl++)
	{
		int64_t		n,
					oy,
					ox,
					iy,
					ix;
		bool		row_in[WT],
					col_in[WT];

		tile_place(j, t0 + tl, &n, &oy, &ox);
		iy = oy - j->pt;
		ix = ox - j->pl;
		for (int i = 0; i < WT; i++)
		{
			row_in[i] = iy + i >= 0 && iy + i < j->h;
			col_in[i] = ix + i >= 0 && ix + i < j->w;
		}
		for (int64_t cb = 0; cb < p->cb; cb++)
		{
			const float *xb = j->x + (n * p->cb + cb) * plane;
			__m512		h[WT][WT];

			/* horizontal: each patch row through B^T */
			for (int i = 0; i < WT; i++)
			{
				__m512		d[WT];

				for (int l = 0; l < WT; l++)
					d[l] = row_in[i] && col_in[l]
						? _mm512_loadu_ps(xb + ((iy + i) * j->w + ix + l) * BLK) : _mm512_setzero_ps();
				nn_wino_input_1d(d, h[i]);
			}
			/* vertical, and the 36 points stored */
			for (int l = 0; l < WT; l++)
			{
				__m512		col[WT],
							o[WT];

				for (int i = 0; i < WT; i++)
					col[i] = h[i][l];
				nn_wino_input_1d(col, o);
				for (int i = 0; i < WT; i++)
					_mm512_storeu_ps(v + ((i * WT + l) * nt + tl) * cp + cb * BLK, o[i]);
			}
		}
	}
}

/*
 * m[tl][NS] for PX tiles from tl0 = sum over channels of v[tl][c] u[c][NS],
 * for NB of the group's output blocks.  Along the way pf_lines lines from
 * pf (the next point's weights) are prefetched into L2, pf_per_block of
 * them per input block of BLK channels (wino_task says why not at once).
 */
#define DEFINE_PRODUCT(NAME, NB, PX) \
__attribute__((target("avx512f,fma"))) \
static void \
NAME(const float *v, const float *u, int64_t cp, float *m, const float *pf, int64_t pf_lines, \
	 int64_t pf_per_block) \
{ \
	__m512		acc[NB][PX]; \
	_Pragma("GCC unroll 4") \
	for (int o = 0; o < NB; o++) \
		_Pragma("GCC unroll 6") \
		for (int q = 0; q < PX; q++) \
			acc[o][q] = _mm512_setzero_ps(); \
	for (int64_t c = 0; c < cp; c++) \
	{ \
		__m512		wv[NB]; \
		if (c % BLK == 0) \
			nn_nchwc_prefetch_l2(&pf, &pf_lines, pf_per_block); \
		_Pragma("GCC unroll 4") \
		for (int o = 0; o < NB; o++) \
			wv[o] = _mm512_load_ps(u + c * NS + o * BLK); \
		_Pragma("GCC unroll 6") \
		for (int q = 0; q < PX; q++) \
		{ \
			__m512		xv = _mm512_set1_ps(v[q * cp + c]); \
			_Pragma("GCC unroll 4") \
			for (int o = 0; o < NB; o++) \
				acc[o][q] = _mm512_fmadd_ps(xv, wv[o], acc[o][q]); \
		} \
	} \
	_Pragma("GCC unroll 4") \
	for (int o = 0; o < NB; o++) \
		_Pragma("GCC unroll 6") \
		for (int q = 0; q < PX; q++) \
			_mm512_storeu_ps(m + q * NS + o * BLK, acc[o][q]); \
}

#define DEFINE_PRODUCTS(NB) \
	DEFINE_PRODUCT(product_##NB##_1, NB, 1) DEFINE_PRODUCT(product_##NB##_2, NB, 2) \
	DEFINE_PRODUCT(product_##NB##_3, NB, 3) DEFINE_PRODUCT(product_##NB##_4, NB, 4) \
	DEFINE_PRODUCT(product_##NB##_5, NB, 5) DEFINE_PRODUCT(product_##NB##_6, NB, 6)
DEFINE_PRODUCTS(1)
DEFINE_PRODUCTS(2)
DEFINE_PRODUCTS(3)
DEFINE_PRODUCTS(4)

typedef void (*product_fn) (const float *v, const float *u, int64_t cp, float *m, const float *pf,
							 int64_t pf_lines, int64_t pf_per_block);

/* [NB - 1][PX - 1] */
static const product_fn products[NOB][TPX] = {
	{product_1_1, product_1_2, product_1_3, product_1_4, product_1_5, product_1_6},
	{product_2_1, product_2_2, product_2_3, product_2_4, product_2_5, product_2_6},
	{product_3_1, product_3_2, product_3_3, product_3_4, product_3_5, product_3_6},
	{product_4_1, product_4_2, product_4_3, product_4_4, product_4_5, product_4_6},
};

/* the 16 channels of output block mb at (n, oy, ox), directly, for the lanes in bad */
__attribute__((target("avx512f")))
static __m512
direct_lanes(const wino_job *j, int64_t n, int64_t mb, int64_t oy, int64_t ox, __mmask16 bad, __m512 v)
{
	const nn_nchwc_wino *p = j->p;
	_Alignas(64) float out[BLK];

	_mm512_store_ps(out, v);
	for (int lane = 0; lane < BLK; lane++)
	{
		int64_t		mch = mb * BLK + lane;
		float		sum;

		if (!(bad & (1u << lane)) || mch >= p->m)
			continue;
		sum = j->bias[mch];
		for (int64_t c = 0; c < p->c; c++)
		{
			const float *xc = j->x + (n * p->cb + c / BLK) * j->h * j->w * BLK + c % BLK;
			const float *wc = p->w + (mch * p->c + c) * 9;

			for (int kh = 0; kh < 3; kh++)
			{
				int64_t		iy = oy - j->pt + kh;

				if (iy < 0 || iy >= j->h)
					continue;
				for (int kw = 0; kw < 3; kw++)
				{
					int64_t		ix = ox - j->pl + kw;

					if (ix >= 0 && ix < j->w)
						sum += wc[kh * 3 + kw] * xc[(iy * j->w + ix) * BLK];
				}
			}
		}
		out[lane] = sum;
	}
	return _mm512_load_ps(out);
}

/* Y of output blocks [mb0, mb0 + nb) from m[xi][tl][NS], tiles [t0, t0 + nt) */
__attribute__((target("avx512f,fma")))
static void
output_transform(const wino_job *j, int64_t t0, int64_t nt, int64_t mb0, int64_t nb, const float *m)
{
	const nn_nchwc_wino *p = j->p;
	int64_t		plane = j->oh * j->ow * BLK;
	const float *z = j->z;
	float	   *y = j->y;
	float		lo_,
				hi_;
	/* decided here, not per vector (conv_nchwc_kernels.h's TILE_FINISH) */
	const bool	clamp = nn_act_as_clamp(j->act, &lo_, &hi_);
	const __m512 lo = _mm512_set1_ps(lo_),
				hi = _mm512_set1_ps(hi_);

	for (int64_t tl = 0; tl < nt; tl++)
	{
		int64_t		n,
					oy,
					ox;

		tile_place(j, t0 + tl, &n, &oy, &ox);
		for (int64_t o = 0; o < nb; o++)
		{
			int64_t		mb = mb0 + o,
						m_left = p->m - mb * BLK;
			__mmask16	keep = m_left >= BLK ? (__mmask16) 0xFFFF : (__mmask16) ((1u << m_left) - 1);
			__m512		bias = _mm512_loadu_ps(j->bias + mb * BLK),
						r[WT][4];
			int64_t		yb = (n * p->mb + mb) * plane;

			/* horizontal: each row of M through A^T */
			for (int i = 0; i < WT; i++)
			{
				__m512		mv[WT];

				for (int l = 0; l < WT; l++)
					mv[l] = _mm512_loadu_ps(m + ((i * WT + l) * nt + tl) * NS + o * BLK);
				nn_wino_output_1d(mv, r[i]);
			}
			/* vertical, then the epilogue per pixel */
			for (int c4 = 0; c4 < 4 && ox + c4 < j->ow; c4++)
			{
				__m512		col[WT],
							out[4];

				for (int i = 0; i < WT; i++)
					col[i] = r[i][c4];
				nn_wino_output_1d(col, out);
				for (int rr = 0; rr < 4 && oy + rr < j->oh; rr++)
				{
					int64_t		at = yb + ((oy + rr) * j->ow + ox + c4) * BLK;
					__m512		v = _mm512_add_ps(out[rr], bias);
					/* v - v is 0 unless v is infinite or NaN */
					__mmask16	bad = _mm512_mask_cmp_ps_mask(keep, _mm512_sub_ps(out[rr], out[rr]),
															  _mm512_setzero_ps(), _CMP_NEQ_UQ);

					if (bad)
						v = direct_lanes(j, n, mb, oy + rr, ox + c4, bad, v);
					if (z)
						v = _mm512_add_ps(v, _mm512_loadu_ps(z + at));
					v = clamp ? _mm512_min_ps(hi, _mm512_max_ps(lo, v)) : nn_nchwc_act16(j->act, v);
					/* channels past M stay zero whatever act(0) is */
					_mm512_storeu_ps(y + at, _mm512_maskz_mov_ps(keep, v));
				}
			}
		}
	}
}

/* blocks of tiles [begin, end) */
static void
wino_task(void *arg, int64_t begin, int64_t end)
{
	wino_job   *j = arg;
	const nn_nchwc_wino *p = j->p;
	int64_t		cp = p->cb * BLK;
	size_t		v_len = (size_t) (WN * j->per_block * cp),
				m_len = (size_t) (WN * j->per_block * NS);
	float	   *v = ox_aligned_grow(&tls_buf, &tls_len, v_len + m_len),
			   *m = v + v_len;

	if (!v)
	{
		j->oom = true;
		return;
	}
	for (int64_t task = begin; task < end; task++)
	{
		int64_t		b = task / j->gsplit,
					part = task % j->gsplit,
					t0 = b * j->per_block,
					nt = j->tiles - t0 < j->per_block ? j->tiles - t0 : j->per_block,
					g0 = part * p->og / j->gsplit,
					g1 = (part + 1) * p->og / j->gsplit;

		input_transform(j, t0, nt, v);
		for (int64_t g = g0; g < g1; g++)
		{
			int64_t		nb = p->mb - g * NOB < NOB ? p->mb - g * NOB : NOB;

			for (int xi = 0; xi < WN; xi++)
			{
				const float *u = p->u + (g * WN + xi) * cp * NS;
				const float *vx = v + xi * nt * cp;
				float	   *mx = m + xi * nt * NS;
				/*
				 * the next point's weights (they follow these) into L2 over
				 * these tiles, pf_step lines a register tile spread over its
				 * input blocks: all at a tile's start (hundreds of lines
				 * where a block has few tiles) they filled the core's miss
				 * buffers and stalled the tile behind them, as in the direct
				 * kernels (conv_nchwc_kernels.h, TILE_PREFETCH_SOME).  Spread,
				 * ResNet-50's 3x3 layers at 14x14 took 0.78x the time, at
				 * 28x28 0.87x, at 56x56 (weights in L2 anyway) 1.02x; the
				 * whole model 0.97-0.98x at 1 and 2 threads.
				 */
				const float *pf = u + cp * NS;
				int64_t		pf_lines = g * WN + xi + 1 < g1 * WN ? cp * NS / 16 : 0,
							pf_step = (pf_lines + (nt + TPX - 1) / TPX - 1) / ((nt + TPX - 1) / TPX),
							pf_per_block = (pf_step + cp / BLK - 1) / (cp / BLK);

				for (int64_t tl = 0; tl < nt; tl += TPX)
				{
					int			px = (int) (nt - tl < TPX ? nt - tl : TPX);
					int64_t		lines = pf_step < pf_lines ? pf_step : pf_lines;

					products[nb - 1][px - 1] (vx + tl * cp, u, cp, mx + tl * NS, pf, lines, pf_per_block);
					pf += 16 * lines;
					pf_lines -= lines;
				}
			}
			output_transform(j, t0, nt, g * NOB, nb, m);
		}
	}
}

ox_code
nn_nchwc_winograd_run(ox_kernel_ctx *ctx, const nn_nchwc_wino *p, const nn_conv_shape *cs, const float *x,
					  const float *z, const float *bias, const nn_activation *act, float *y)
{
	const nn_geom *g = &cs->g;
	int			threads = ctx->nthreads;
	int64_t		max_block,
				blocks;
	wino_job	j;

	memset(&j, 0, sizeof(j));
	j.p = p;
	j.cs = cs;
	j.x = x;
	j.z = z;
	j.bias = bias;
	j.act = act;
	j.y = y;
	j.h = g->in[AH];
	j.w = g->in[AW];
	j.oh = g->out[AH];
	j.ow = g->out[AW];
	j.pt = g->pb[AH];
	j.pl = g->pb[AW];
	j.th = (j.oh + 3) / 4;
	j.tw = (j.ow + 3) / 4;
	j.tiles = cs->n * j.th * j.tw;
	if (j.tiles == 0)
		return OX_OK;
	/*
	 * Blocks of tiles whose V and M stay in L2, a multiple of the register
	 * tile; at least one block per thread while tiles last.
	 */
	max_block = WINO_BLOCK_BYTES / ((int64_t) sizeof(float) * WN * (p->cb * BLK + NS)) / TPX * TPX;
	if (max_block < TPX)
		max_block = TPX;
	blocks = (j.tiles + max_block - 1) / max_block;
	/*
	 * Fewer blocks than threads: each block's groups are shared out
	 * instead (every task transforms its block's input, a small part of
	 * the work), so that each thread reads only its groups' share of U.
	 * Cut into blocks of fewer tiles, every thread read all of U, 36/9 of
	 * the direct weights: ResNet-50's 3x3 layers at 14x14 (16 tiles, 9.4 MB
	 * of U) ran 1.5-1.6x faster on two threads than on one, the two
	 * threads streaming U from memory at once.
	 */
	j.gsplit = 1;
	if (blocks < threads && p->og > 1)
	{
		j.gsplit = (threads + blocks - 1) / blocks;
		if (j.gsplit > p->og)
			j.gsplit = p->og;
	}
	if (blocks * j.gsplit < threads)
		blocks = threads < (j.tiles + TPX - 1) / TPX ? threads : (j.tiles + TPX - 1) / TPX;
	j.per_block = (j.tiles + blocks - 1) / blocks;
	j.per_block = (j.per_block + TPX - 1) / TPX * TPX;
	blocks = (j.tiles + j.per_block - 1) / j.per_block;
	ox_parallel_for(ctx, blocks * j.gsplit, 1, wino_task, &j);
	if (j.oom)
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "onnx_pg.nchwc Conv: could not allocate Winograd buffers");
	return OX_OK;
}
