/*
 * conv_winograd2.c
 *	  Float32 3x3 stride-1 convolution by Winograd's F(2x2, 3x3) on the
 *	  pixel-broadcast kernel of conv_pixels.c, AVX-512: for the mid-sized
 *	  planes (ResNet's 14x14) where F(4x4, 3x3) (conv_winograd.c) loses.
 *
 * Each 2x2 output tile comes from a 4x4 input patch: Y = A^T [U (.) V] A
 * with V = B^T d B and U = G g G^T, 16 multiplications per tile, channel
 * and filter instead of 36, with transforms whose coefficients are 0, +-1
 * and 1/2: as accurate as a direct sum.  On a 14x14 plane there are 7x7
 * tiles, and F(4x4, 3x3) would have 4x4 tiles for transformed filters four
 * times the filter's size, read from memory for 16 tiles each; here they
 * are 16/9 of it for 49 tiles.
 *
 * The 16 GEMMs M[xi] = V[xi] U[xi] (tiles x input channels times input
 * channels x output channels) run with the roles of conv_pixels.c: seven
 * tiles broadcast (a tile row of a 14x14 plane is seven tiles), 48 output
 * channels in three vectors.  So:
 *   1. input transform, per image and input channel, one tile row at a
 *      time: the four input rows combined vertically along the row, then
 *      split into even and odd columns (one permute each) and combined
 *      horizontally, which gives 16 vectors over the row's tiles, stored
 *      seven tiles per group: V [16][groups][C][7];
 *   2. per block of 48 output channels (one thread each): the 16 GEMMs
 *      into a staging area [16][tiles][48];
 *   3. output transform of that staging area, vectors over the 48
 *      channels: A^T M A per tile, bias, Z, activation, and four scattered
 *      stores (one per output pixel of the tile, 16 channels each).
 */
#include "kernels/cpu/conv_fast.h"

#include <immintrin.h>
#include <string.h>

#define WN2 16					/* points of the 4 x 4 transform domain */
#define PX NN_CONV_PX
#define CB NN_CONV_CB
#define W2KC 128				/* reduction block: a 24 KiB slice of U */
#define TW_MAX 14				/* tiles per row: two groups of seven, one vector */

bool
nn_winograd2_applies(const nn_conv_shape *cs)
{
	const nn_geom *g = &cs->g;
	int64_t		tw = (g->out[2] + 1) / 2;

	/*
	 * 7 to 28 output columns, at least 8 output rows; larger planes go to
	 * F(4x4, 3x3).  The scatters address channels with 32-bit offsets.
	 */
	return nn_conv_fast_isa() == NN_ISA_AVX512 && g->nsp == 2 && g->k[1] == 3 && g->k[2] == 3 &&
		g->s[1] == 1 && g->s[2] == 1 && g->d[1] == 1 && g->d[2] == 1 && cs->group == 1 &&
		cs->c >= 16 && cs->m >= 16 && tw >= 4 && tw <= TW_MAX && g->out[1] >= 8 &&
		g->out_size <= INT32_MAX / 16 && !nn_winograd_applies(cs);
}

nn_convw *
nn_winograd2_pack(int64_t m, int64_t c, const float *w, ox_status *st)
{
	static const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
	nn_convw   *p = calloc(1, sizeof(*p));
	int64_t		nb = (m + CB - 1) / CB,
				n;

	if (!p)
	{
		ox_fail(st, OX_OUT_OF_MEMORY, "Conv: could not allocate packed weights");
		return NULL;
	}
	p->kind = NN_CONVW_WINOGRAD2;
	p->group = 1;
	p->mg = m;
	p->kk = c;
	p->tiles = nb;
	p->src = w;
	n = ox_shape_numel(4, (int64_t[]) {WN2, nb, c, CB});
	if (!(p->data = nn_scratch(n, sizeof(float), st, "Conv Winograd weights")))
	{
		free(p);
		return NULL;
	}
	p->bytes = (size_t) n * sizeof(float);
	memset(p->data, 0, p->bytes);
	for (int64_t mi = 0; mi < m; mi++)
		for (int64_t ci = 0; ci < c; ci++)
		{
			const float *g = w + (mi * c + ci) * 9;
			double		t[4][3];

			for (int i = 0; i < 4; i++)
				for (int b = 0; b < 3; b++)
					t[i][b] = G[i][0] * g[b] + G[i][1] * g[3 + b] + G[i][2] * g[6 + b];
			for (int i = 0; i < 4; i++)
				for (int l = 0; l < 4; l++)
					p->data[(((i * 4 + l) * nb + mi / CB) * c + ci) * CB + mi % CB] =
						(float) (t[i][0] * G[l][0] + t[i][1] * G[l][1] + t[i][2] * G[l][2]);
		}
	return p;
}

typedef struct w2_job
{
	const nn_conv_shape *cs;
	const nn_convw *pw;
	const float *x;
	float	   *y;
	const nn_conv_epi *epi;
	int64_t		th,
				tw;				/* tile rows and columns per image */
	int64_t		gr;				/* groups of seven tiles per tile row */
	int64_t		groups;			/* all groups of all images */
	float	   *v;				/* [WN2][groups][C][PX] */
	bool		oom;
} w2_job;

/* the caller's transformed input, shared read-only with the workers */
static __thread float *tls_v;
static __thread size_t tls_v_len;
/* each thread's staging area */
static __thread float *tls_s;
static __thread size_t tls_s_len;

/* input transform of planes [begin, end) (image * C + channel) */
__attribute__((target("avx512f,fma")))
static void
input_task(void *arg, int64_t begin, int64_t end)
{
	w2_job	   *j = arg;
	const nn_conv_shape *cs = j->cs;
	const nn_geom *g = &cs->g;
	int64_t		H = g->in[1],
				W = g->in[2],
				C = cs->c;
	/* four padded input rows and their vertical combinations; 2 * 14 + 2 columns used */
	_Alignas(64) float in[4][64];
	_Alignas(64) float u[4][64];
	__m512i		even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30),
				odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
	__mmask16	valid = (__mmask16) ((1u << j->tw) - 1);

	for (int64_t t = begin; t < end; t++)
	{
		int64_t		n = t / C,
					c = t % C;
		const float *xc = j->x + t * g->in_size;

		for (int64_t th = 0; th < j->th; th++)
		{
			int64_t		g0 = (n * j->th + th) * j->gr;

			for (int i = 0; i < 4; i++)
			{
				int64_t		ih = 2 * th - g->pb[1] + i;

				memset(in[i], 0, sizeof(in[i]));
				if (ih >= 0 && ih < H)
					memcpy(in[i] + g->pb[2], xc + ih * W, sizeof(float) * W);
			}
			/* vertical B^T: u0 = r0 - r2, u1 = r1 + r2, u2 = r2 - r1, u3 = r1 - r3 */
			for (int col = 0; col < 48; col += 16)
			{
				__m512		r0 = _mm512_load_ps(in[0] + col),
							r1 = _mm512_load_ps(in[1] + col),
							r2 = _mm512_load_ps(in[2] + col),
							r3 = _mm512_load_ps(in[3] + col);

				_mm512_store_ps(u[0] + col, _mm512_sub_ps(r0, r2));
				_mm512_store_ps(u[1] + col, _mm512_add_ps(r1, r2));
				_mm512_store_ps(u[2] + col, _mm512_sub_ps(r2, r1));
				_mm512_store_ps(u[3] + col, _mm512_sub_ps(r1, r3));
			}
			for (int i = 0; i < 4; i++)
			{
				/* tile t's columns are 2t .. 2t + 3: even, odd, and both shifted by one tile */
				__m512		e0 = _mm512_permutex2var_ps(_mm512_load_ps(u[i]), even, _mm512_load_ps(u[i] + 16)),
							o0 = _mm512_permutex2var_ps(_mm512_load_ps(u[i]), odd, _mm512_load_ps(u[i] + 16)),
							e1 = _mm512_permutex2var_ps(_mm512_loadu_ps(u[i] + 2), even, _mm512_loadu_ps(u[i] + 18)),
							o1 = _mm512_permutex2var_ps(_mm512_loadu_ps(u[i] + 2), odd, _mm512_loadu_ps(u[i] + 18));
				__m512		v[4];

				/* tiles past the row are zeros in their group, not stale values */
				v[0] = _mm512_maskz_sub_ps(valid, e0, e1);
				v[1] = _mm512_maskz_add_ps(valid, o0, e1);
				v[2] = _mm512_maskz_sub_ps(valid, e1, o0);
				v[3] = _mm512_maskz_sub_ps(valid, o0, o1);
				for (int l = 0; l < 4; l++)
					for (int64_t gg = 0; gg < j->gr; gg++)
					{
						float	   *dst = j->v + (((int64_t) (i * 4 + l) * j->groups + g0 + gg) * C + c) * PX;

						/* lanes 7 gg .. 7 gg + 6 to dst[0 .. 6] */
						_mm512_mask_storeu_ps(dst - PX * gg, (__mmask16) (0x7Fu << (PX * gg)), v[l]);
					}
			}
		}
	}
}

/*
 * Infinities and NaN spread over a whole tile through the transforms:
 * outputs (lanes = channels mc + lane) that come out non-finite are
 * computed again directly, so that they are what a direct convolution
 * gives.  Rare, and only those lanes.
 */
__attribute__((target("avx512f")))
static __m512
direct_lanes(const w2_job *j, int64_t n, int64_t mc, int64_t oh, int64_t ow, __mmask16 bad, __m512 v)
{
	const nn_conv_shape *cs = j->cs;
	const float *x = j->x + n * cs->c * cs->g.in_size;
	_Alignas(64) float out[16];

	_mm512_store_ps(out, v);
	for (int lane = 0; lane < 16; lane++)
		if (bad & (1u << lane))
			out[lane] = nn_conv3x3_direct(cs, x, (const float *) j->pw->src + (mc + lane) * cs->c * 9,
										  j->epi->bias ? j->epi->bias[mc + lane] : 0.0f, oh, ow);
	return _mm512_load_ps(out);
}

/* output transform of channels [m0, m0 + nch) from staging s [WN2][groups * PX][CB] */
__attribute__((target("avx512f,fma")))
static void
output_block(const w2_job *j, int64_t m0, int64_t nch, const float *s)
{
	const nn_conv_shape *cs = j->cs;
	const nn_geom *g = &cs->g;
	const nn_activation *act = &j->epi->act;
	int64_t		OH = g->out[1],
				OW = g->out[2],
				rows = j->groups * PX;
	bool		simple_act = nn_act_in_registers(act);
	__m512i		chan = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
										  _mm512_set1_epi32((int) g->out_size));

	for (int v = 0; v < 3 && 16 * v < nch; v++)
	{
		__mmask16	cm = nch - 16 * v >= 16 ? (__mmask16) 0xFFFF : (__mmask16) ((1u << (nch - 16 * v)) - 1);
		__m512		bias = j->epi->bias ? _mm512_maskz_loadu_ps(cm, j->epi->bias + m0 + 16 * v) : _mm512_setzero_ps();

		for (int64_t n = 0; n < cs->n; n++)
			for (int64_t th = 0; th < j->th; th++)
				for (int64_t tw = 0; tw < j->tw; tw++)
				{
					int64_t		r = ((n * j->th + th) * j->gr + tw / PX) * PX + tw % PX;
					__m512		m[WN2],
								t[2][4],
								o[2][2];
					int64_t		base = (n * cs->m + m0 + 16 * v) * g->out_size;

					for (int xi = 0; xi < WN2; xi++)
						m[xi] = _mm512_load_ps(s + (xi * rows + r) * CB + 16 * v);
					/* A^T over columns: o0 = m0 + m1 + m2, o1 = m1 - m2 - m3 */
					for (int i = 0; i < 4; i++)
					{
						t[0][i] = _mm512_add_ps(_mm512_add_ps(m[i * 4], m[i * 4 + 1]), m[i * 4 + 2]);
						t[1][i] = _mm512_sub_ps(_mm512_sub_ps(m[i * 4 + 1], m[i * 4 + 2]), m[i * 4 + 3]);
					}
					for (int b = 0; b < 2; b++)
					{
						o[0][b] = _mm512_add_ps(_mm512_add_ps(t[b][0], t[b][1]), t[b][2]);
						o[1][b] = _mm512_sub_ps(_mm512_sub_ps(t[b][1], t[b][2]), t[b][3]);
					}
					for (int a = 0; a < 2; a++)
						for (int b = 0; b < 2; b++)
						{
							int64_t		oh = 2 * th + a,
										ow = 2 * tw + b;
							__m512		val;
							__mmask16	bad;

							if (oh >= OH || ow >= OW)
								continue;
							val = _mm512_add_ps(o[a][b], bias);
							/* v - v is 0 unless v is infinite or NaN */
							bad = _mm512_mask_cmp_ps_mask(cm, _mm512_sub_ps(o[a][b], o[a][b]),
														  _mm512_setzero_ps(), _CMP_NEQ_UQ);
							if (bad)
								val = direct_lanes(j, n, m0 + 16 * v, oh, ow, bad, val);
							if (j->epi->z)
								val = _mm512_add_ps(val, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), cm, chan,
																				  j->epi->z + base + oh * OW + ow, 4));
							_mm512_mask_i32scatter_ps(j->y + base + oh * OW + ow, cm, chan, nn_act_avx512(act, val), 4);
						}
				}
	}
	if (!simple_act)
		for (int64_t n = 0; n < cs->n; n++)
			for (int64_t c = 0; c < nch; c++)
				nn_activation_apply_row_f32(act, j->y + (n * cs->m + m0 + c) * g->out_size, g->out_size);
}

static void
block_task(void *arg, int64_t begin, int64_t end)
{
	w2_job	   *j = arg;
	const nn_convw *pw = j->pw;
	int64_t		C = pw->kk,
				rows = j->groups * PX;
	float	   *s = ox_aligned_grow(&tls_s, &tls_s_len, (size_t) WN2 * rows * CB);

	if (!s)
	{
		j->oom = true;
		return;
	}
	for (int64_t b = begin; b < end; b++)
	{
		int64_t		m0 = b * CB,
					nch = j->cs->m - m0 < CB ? j->cs->m - m0 : CB;

		for (int xi = 0; xi < WN2; xi++)
			for (int64_t k0 = 0; k0 < C; k0 += W2KC)
			{
				int64_t		kc = C - k0 < W2KC ? C - k0 : W2KC;
				const float *u = pw->data + ((xi * pw->tiles + b) * C + k0) * CB;
				/* the next slice of U, fetched while this one runs (see conv_pixels.c) */
				const float *next = k0 + kc < C ? u + kc * CB :
					xi + 1 < WN2 ? pw->data + ((xi + 1) * pw->tiles + b) * C * CB : NULL;

				for (int64_t gi = 0; gi < j->groups; gi++)
					nn_conv_px_tile(kc, u, j->v + ((xi * j->groups + gi) * C + k0) * PX,
									s + (xi * rows + gi * PX) * CB, k0 > 0, gi == 0 ? next : NULL);
			}
		output_block(j, m0, nch, s);
	}
}

ox_code
nn_conv_winograd2_f32(ox_kernel_ctx *ctx, const nn_conv_shape *cs, const nn_convw *pw, const float *x,
					  const nn_conv_epi *epi, float *y, ox_status *st)
{
	const nn_geom *g = &cs->g;
	w2_job		job;
	int64_t		vlen;

	memset(&job, 0, sizeof(job));
	job.cs = cs;
	job.pw = pw;
	job.x = x;
	job.y = y;
	job.epi = epi;
	job.th = (g->out[1] + 1) / 2;
	job.tw = (g->out[2] + 1) / 2;
	job.gr = (job.tw + PX - 1) / PX;
	job.groups = cs->n * job.th * job.gr;
	vlen = ox_shape_numel(4, (int64_t[]) {WN2, job.groups, cs->c, PX});
	if (vlen < 0 || !(job.v = ox_aligned_grow(&tls_v, &tls_v_len, (size_t) vlen)))
		return ox_fail(st, OX_OUT_OF_MEMORY, "Conv: could not allocate the Winograd input transform");
	ox_parallel_for(ctx, cs->n * cs->c, 1, input_task, &job);
	ox_parallel_for(ctx, pw->tiles, 1, block_task, &job);
	if (job.oom)
		return ox_fail(st, OX_OUT_OF_MEMORY, "Conv: could not allocate Winograd buffers");
	return OX_OK;
}
