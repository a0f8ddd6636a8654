/*
 * conv_gemm.c
 *	  Float32 convolution as an implicit GEMM with a fused epilogue: the
 *	  GEMM path of conv_fast.h.
 *
 * Per group, Y[m, p] = sum_k W[m, k] * X~[k, p] where k runs over (input
 * channel, kernel tap) and p over output pixels; X~ is the im2col matrix.
 * It is never built: each thread unrolls only the slice of X~ the
 * micro-kernel needs next (a sliver of NR pixels by up to KC reduction
 * rows, a few tens of KiB that stay in L1) straight from the NCHW input,
 * and multiplies it by every tile of NN_CONV_MR output channels of the
 * weights, which are packed once per session (nn_convw_pack).  A 1x1
 * convolution with stride 1 and no padding unrolls into plain row copies.
 *
 * The micro-kernel keeps an MR x NR tile of Y in registers (AVX-512:
 * 8 x 48, AVX2: 4 x 24); after the last reduction block it adds the bias
 * and the residual Z, applies the activation and stores the tile, so the
 * output is written once.  Pixel tails are masked vector lanes (no edge
 * buffers); channel tails are zero rows of the packed weights that are
 * never stored.
 *
 * Loop order, per thread task (an image, a group, a range of up to
 * PANEL_SLIVERS slivers): per reduction block, the range's slivers are
 * unrolled into a panel that stays in L2; then a couple of channel tiles
 * at a time sweep the slivers, so that each tile's output rows (and Z's)
 * are written as a few sequential streams the prefetchers follow, and the
 * weights (and Winograd's transformed weights) are read once per range.
 * Threads split those tasks; when there are too few (a small image), the
 * channel tiles are split as well, each part unrolling the same slivers.
 *
 * This file also holds what the fast paths share: the instruction set
 * choice, weight packing, the unroller, the AVX-512 tile for the Winograd
 * GEMMs, and nn_conv_fast_f32, which dispatches to the path the packed
 * weights were made for.
 */
#include "kernels/cpu/conv_fast.h"
#include "kernels/cpu/sgemm.h"
#include "kernels/cpu/simd_avx2.h"

#include <immintrin.h>
#include <string.h>

/* reduction rows per unrolled block: a 48-pixel sliver of 160 rows is 30 KiB */
#define KC_MAX 160
#define NR_MAX 48

/* ---- instruction set ---------------------------------------------------- */

static nn_isa forced_isa = (nn_isa) -1;

static nn_isa
detect_isa(void)
{
	static nn_isa detected = (nn_isa) -1;

	if (detected == (nn_isa) -1)
	{
		__builtin_cpu_init();
		if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma"))
			detected = NN_ISA_AVX512;
		else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
			detected = NN_ISA_AVX2;
		else
			detected = NN_ISA_NONE;
	}
	return detected;
}

nn_isa
nn_conv_fast_isa(void)
{
	nn_isa		hw = detect_isa();

	if (forced_isa != (nn_isa) -1 && forced_isa < hw)
		return forced_isa;
	return hw;
}

nn_isa
nn_conv_fast_force_isa(nn_isa isa)
{
	nn_isa		prev = nn_conv_fast_isa();

	forced_isa = isa;
	return prev;
}

/* ---- packed weights ----------------------------------------------------- */

nn_convw *
nn_convw_pack(int64_t group, int64_t m, int64_t kk, const float *w, ox_status *st)
{
	nn_convw   *p;
	int64_t		n;

	if (group < 1 || m % group != 0 || kk < 1)
	{
		ox_fail(st, OX_INTERNAL, "Conv: cannot pack weights of %lld channels in %lld groups",
				(long long) m, (long long) group);
		return NULL;
	}
	if (!(p = calloc(1, sizeof(*p))))
	{
		ox_fail(st, OX_OUT_OF_MEMORY, "Conv: could not allocate packed weights");
		return NULL;
	}
	p->group = group;
	p->mg = m / group;
	p->kk = kk;
	p->tiles = (p->mg + NN_CONV_MR - 1) / NN_CONV_MR;
	p->src = w;
	n = ox_shape_numel(4, (int64_t[]) {group, p->tiles, kk, NN_CONV_MR});
	if (!(p->data = nn_scratch(n, sizeof(float), st, "Conv packed weights")))
	{
		free(p);
		return NULL;
	}
	p->bytes = (size_t) n * sizeof(float);
	for (int64_t gi = 0; gi < group; gi++)
		for (int64_t t = 0; t < p->tiles; t++)
		{
			float	   *dst = p->data + (gi * p->tiles + t) * kk * NN_CONV_MR;

			for (int r = 0; r < NN_CONV_MR; r++)
			{
				int64_t		row = t * NN_CONV_MR + r;
				const float *src = w + (gi * p->mg + row) * kk;

				for (int64_t k = 0; k < kk; k++)
					dst[k * NN_CONV_MR + r] = row < p->mg ? src[k] : 0.0f;
			}
		}
	return p;
}

void
nn_convw_free(nn_convw *p)
{
	if (p)
	{
		ox_aligned_free(p->data);
		ox_sgemm_packed_free(p->rows);
		free(p);
	}
}

/* ---- unrolling the input ------------------------------------------------ */

/* a stretch of a sliver's pixels along one output row */
typedef struct pix_run
{
	int			j;				/* first column in the sliver */
	int			len;
	int64_t		od,
				oh,
				ow;				/* output position of column j */
} pix_run;

/* split the sliver's pixels [p0, p0 + cols) into runs along output rows */
static int
sliver_runs(const nn_geom *g, int64_t p0, int cols, pix_run *runs)
{
	int			nr = 0;
	int			j = 0;
	int64_t		p = p0;

	while (j < cols)
	{
		int64_t		ow = p % g->out[2],
					t = p / g->out[2];
		int			len = (int) (g->out[2] - ow < cols - j ? g->out[2] - ow : cols - j);

		runs[nr].j = j;
		runs[nr].len = len;
		runs[nr].ow = ow;
		runs[nr].oh = t % g->out[1];
		runs[nr].od = t / g->out[1];
		nr++;
		j += len;
		p += len;
	}
	return nr;
}

typedef nn_unroll unroll_geom;

/*
 * d[i] = x[2 * i] for i < n: the rows of a stride-2 convolution.  A scalar
 * loop here costs about as much as the products for layers with few output
 * channels (ResNet's first layer, the stride-2 3x3 and 1x1 layers); two
 * loads and one permute make sixteen.  Loads are masked to the elements the
 * row needs, so nothing past the input is read.
 */
__attribute__((target("avx512f")))
static inline void
gather2_avx512(float *d, const float *x, int64_t n)
{
	const __m512i idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
	int64_t		i = 0;

	for (; i + 16 <= n; i += 16)
	{
		__m512		lo = _mm512_loadu_ps(x + 2 * i),
					hi = _mm512_maskz_loadu_ps((__mmask16) 0x7FFF, x + 2 * i + 16);

		_mm512_storeu_ps(d + i, _mm512_permutex2var_ps(lo, idx, hi));
	}
	if (i < n)
	{
		int64_t		rem = n - i,
					need = 2 * rem - 1;	/* inputs read: 1 to 29 */
		__mmask16	m0 = need >= 16 ? (__mmask16) 0xFFFF : (__mmask16) ((1u << need) - 1),
					m1 = need > 16 ? (__mmask16) ((1u << (need - 16)) - 1) : 0;
		__m512		lo = _mm512_maskz_loadu_ps(m0, x + 2 * i),
					hi = _mm512_maskz_loadu_ps(m1, x + 2 * i + 16);

		_mm512_mask_storeu_ps(d + i, (__mmask16) ((1u << rem) - 1), _mm512_permutex2var_ps(lo, idx, hi));
	}
}

/* the AVX-512 unroller's row copy */
static inline void
copy_memcpy(float *d, const float *x, int64_t n)
{
	memcpy(d, x, sizeof(float) * n);
}

/*
 * The AVX2 unroller's copies.  Its runs are short (at most a sliver of 24
 * pixels), so a call to memcpy and a scalar stride-2 loop cost a quarter of
 * a 3x3 layer's time on an EPYC (Zen 3); nn_copy_avx2 (simd_avx2.h) and
 * gather2_avx2 copy whole vectors.
 */
/* the even elements of x[0..16): shuffle within the 128-bit lanes, then order the 64-bit pairs */
__attribute__((target("avx2")))
static inline __m256
even8_avx2(__m256 lo, __m256 hi)
{
	__m256		ev = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));

	return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), _MM_SHUFFLE(3, 1, 2, 0)));
}

/*
 * d[i] = x[2 * i] for i < n (the rows of a stride-2 convolution), as
 * nn_copy_avx2: the vector at i reads x[2i .. 2i + 16), one past the last
 * element it keeps, so the last vector's final element comes from a masked
 * load.
 */
__attribute__((target("avx2")))
static inline void
gather2_avx2(float *d, const float *x, int64_t n)
{
	int64_t		i = 0;

	if (n < 8)
	{
		for (; i < n; i++)
			d[i] = x[2 * i];
		return;
	}
	for (; i + 8 < n; i += 8)
		_mm256_storeu_ps(d + i, even8_avx2(_mm256_loadu_ps(x + 2 * i), _mm256_loadu_ps(x + 2 * i + 8)));
	i = n - 8;
	_mm256_storeu_ps(d + i, even8_avx2(_mm256_loadu_ps(x + 2 * i),
									   _mm256_maskload_ps(x + 2 * i + 8,
														  _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, -1, 0))));
}

/* how one run of a sliver reads one kernel tap: zeros, a copy, zeros */
typedef struct run_plan
{
	int			j;				/* first column in the sliver */
	int			zeros_before;
	int			len;			/* copied (0: the run is all zeros) */
	int			zeros_after;
	int64_t		src;			/* offset in the channel's plane of the first copied input */
} run_plan;

/*
 * Where each run of the sliver reads tap (kd, kh, kw): the same for every
 * input channel, so it is worked out once per tap rather than per row.
 */
static void
plan_tap(const unroll_geom *ug, const pix_run *runs, int nruns, int64_t kd, int64_t kh, int64_t kw,
		 run_plan *plan)
{
	const nn_geom *g = ug->g;

	for (int r = 0; r < nruns; r++)
	{
		const pix_run *run = &runs[r];
		run_plan   *pl = &plan[r];
		int64_t		id = run->od * g->s[0] - g->pb[0] + kd * g->d[0],
					ih = run->oh * g->s[1] - g->pb[1] + kh * g->d[1],
					a = run->ow,
					e = run->ow + run->len,
					lo = ug->lo[kw] > a ? ug->lo[kw] : a,
					hi = ug->hi[kw] < e ? ug->hi[kw] : e;

		pl->j = run->j;
		if (id < 0 || id >= g->in[0] || ih < 0 || ih >= g->in[1] || lo >= hi)
		{
			pl->zeros_before = run->len;
			pl->len = 0;
			pl->zeros_after = 0;
			pl->src = 0;
			continue;
		}
		pl->zeros_before = (int) (lo - a);
		pl->len = (int) (hi - lo);
		pl->zeros_after = (int) (e - hi);
		pl->src = (id * g->in[1] + ih) * g->in[2] + kw * g->d[2] - g->pb[2] + lo * g->s[2];
	}
}

/*
 * dst[k - k0][j] = X~[k, p0 + j] for k in [k0, k0 + kc), j < nr (zero past
 * the sliver's cols).  Rows are k = (c, kd, kh, kw); they are filled a tap
 * at a time, every channel of the block for one plan.  Written once,
 * included twice with a target attribute so that the copies vectorize for
 * each instruction set.
 */
#define DEFINE_UNROLL(NAME, TARGET, COPY, GATHER2) \
TARGET static void \
NAME(const unroll_geom *ug, const float *x, int64_t p0, int cols, const pix_run *runs, int nruns, \
	 int64_t k0, int64_t kc, int nr, float *dst) \
{ \
	const nn_geom *g = ug->g; \
	int64_t		taps = g->k_size, \
				s2 = g->s[2], \
				c_first = k0 / taps, \
				c_last = (k0 + kc - 1) / taps; \
	run_plan	plan[NR_MAX + 1]; \
	if (ug->pointwise) \
	{ \
		for (int64_t k = 0; k < kc; k++, dst += nr) \
		{ \
			COPY(dst, x + (k0 + k) * g->in_size + p0, cols); \
			for (int j = cols; j < nr; j++) \
				dst[j] = 0.0f; \
		} \
		return; \
	} \
	for (int64_t k = 0; k < kc; k++) \
		for (int j = cols; j < nr; j++) \
			dst[k * nr + j] = 0.0f; \
	for (int64_t t = 0; t < taps; t++) \
	{ \
		int64_t		kw = t % g->k[2], \
					kh = (t / g->k[2]) % g->k[1], \
					kd = t / (g->k[2] * g->k[1]); \
		plan_tap(ug, runs, nruns, kd, kh, kw, plan); \
		for (int64_t c = c_first; c <= c_last; c++) \
		{ \
			int64_t		k = c * taps + t; \
			const float *xc = x + c * g->in_size; \
			float	   *row = dst + (k - k0) * nr; \
			if (k < k0 || k >= k0 + kc) \
				continue; \
			for (int r = 0; r < nruns; r++) \
			{ \
				const run_plan *pl = &plan[r]; \
				float	   *d = row + pl->j; \
				const float *xr = xc + pl->src; \
				for (int i = 0; i < pl->zeros_before; i++) \
					*d++ = 0.0f; \
				if (s2 == 1) \
					COPY(d, xr, pl->len); \
				else if (s2 == 2) \
					GATHER2(d, xr, pl->len); \
				else \
					for (int i = 0; i < pl->len; i++) \
						d[i] = xr[i * s2]; \
				d += pl->len; \
				for (int i = 0; i < pl->zeros_after; i++) \
					d[i] = 0.0f; \
			} \
		} \
	} \
}

DEFINE_UNROLL(unroll_avx512, __attribute__((target("avx512f,fma"))), copy_memcpy, gather2_avx512)
DEFINE_UNROLL(unroll_avx2, __attribute__((target("avx2,fma"))), nn_copy_avx2, gather2_avx2)

ox_code
nn_unroll_init(nn_unroll *u, const nn_geom *g, ox_status *st)
{
	int64_t    *lohi;

	u->g = g;
	u->pointwise = true;
	for (int i = 0; i < NN_MAX_SPATIAL; i++)
		if (g->k[i] != 1 || g->s[i] != 1 || g->pb[i] != 0 || g->pe[i] != 0)
			u->pointwise = false;
	if (!(lohi = nn_scratch(2 * g->k[2], sizeof(int64_t), st, "Conv")))
		return st->code;
	for (int64_t kw = 0; kw < g->k[2]; kw++)
		nn_valid_range(g->out[2], g->s[2], kw * g->d[2] - g->pb[2], g->in[2], &lohi[kw], &lohi[g->k[2] + kw]);
	u->lo = lohi;
	u->hi = lohi + g->k[2];
	return OX_OK;
}

void
nn_unroll_free(nn_unroll *u)
{
	ox_aligned_free((void *) u->lo);
	u->lo = u->hi = NULL;
}

void
nn_unroll_block(const nn_unroll *u, const float *x, int64_t p0, int cols, int64_t k0, int64_t kc,
				int nr, float *dst)
{
	pix_run		runs[NR_MAX + 1];
	int			nruns = u->pointwise ? 0 : sliver_runs(u->g, p0, cols, runs);

	if (nn_conv_fast_isa() == NN_ISA_AVX512)
		unroll_avx512(u, x, p0, cols, runs, nruns, k0, kc, nr, dst);
	else
		unroll_avx2(u, x, p0, cols, runs, nruns, k0, kc, nr, dst);
}

/* ---- micro-kernels ------------------------------------------------------ */

/* the epilogue of one tile, at the tile's origin */
typedef struct tile_epi
{
	const float *bias;			/* bias of the tile's first row, or NULL */
	const float *z;				/* residual at the tile's origin, or NULL */
	int64_t		ldz;
	const nn_activation *act;
} tile_epi;

typedef struct uk_args
{
	int64_t		kc;
	const float *a;				/* [kc][NN_CONV_MR], at the tile's first row */
	const float *b;				/* [kc][ldb] */
	int64_t		ldb;			/* AVX2: always the sliver width */
	float	   *c;
	int64_t		ldc;
	int			rows;			/* rows to store */
	int			cols;			/* columns to store */
	bool		accumulate;		/* add to what C holds (not the first block) */
	const tile_epi *e;			/* last block: bias, Z, activation; else NULL */
} uk_args;

/* the activations computed after the store */
static void
finish_rows(const uk_args *u)
{
	if (u->e && !nn_act_in_registers(u->e->act))
		for (int r = 0; r < u->rows; r++)
			nn_activation_apply_row_f32(u->e->act, u->c + r * u->ldc, u->cols);
}

/* AVX-512: 8 rows x NV vectors of 16 pixels, sliver width 48 */
#define UK512_NR 48
#define DEFINE_UK512(NV) \
__attribute__((target("avx512f,fma"))) \
static void \
uk512_##NV(const uk_args *u) \
{ \
	__m512		acc[NN_CONV_MR][NV]; \
	const float *a = u->a, \
			   *b = u->b; \
	int			tail = u->cols - 16 * (NV - 1); \
	__mmask16	mlast = tail >= 16 ? (__mmask16) 0xFFFF : (__mmask16) ((1u << tail) - 1); \
	_Pragma("GCC unroll 8") \
	for (int r = 0; r < NN_CONV_MR; r++) \
		_Pragma("GCC unroll 3") \
		for (int v = 0; v < NV; v++) \
			acc[r][v] = _mm512_setzero_ps(); \
	for (int64_t p = 0; p < u->kc; p++) \
	{ \
		__m512		bv[NV]; \
		/* B is a packed panel: 64-byte aligned rows, zeros past cols */ \
		_Pragma("GCC unroll 3") \
		for (int v = 0; v < NV; v++) \
			bv[v] = _mm512_load_ps(b + 16 * v); \
		_Pragma("GCC unroll 8") \
		for (int r = 0; r < NN_CONV_MR; r++) \
		{ \
			__m512		av = _mm512_set1_ps(a[r]); \
			_Pragma("GCC unroll 3") \
			for (int v = 0; v < NV; v++) \
				acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]); \
		} \
		a += NN_CONV_MR; \
		b += u->ldb; \
	} \
	_Pragma("GCC unroll 8") \
	for (int r = 0; r < NN_CONV_MR; r++) \
	{ \
		float	   *cr = u->c + r * u->ldc; \
		if (r >= u->rows) \
			break; \
		_Pragma("GCC unroll 3") \
		for (int v = 0; v < NV; v++) \
		{ \
			__mmask16	m = v == NV - 1 ? mlast : (__mmask16) 0xFFFF; \
			__m512		t = acc[r][v]; \
			if (u->accumulate) \
				t = _mm512_add_ps(t, _mm512_maskz_loadu_ps(m, cr + 16 * v)); \
			if (u->e) \
			{ \
				if (u->e->z) \
					t = _mm512_add_ps(t, _mm512_maskz_loadu_ps(m, u->e->z + r * u->e->ldz + 16 * v)); \
				if (u->e->bias) \
					t = _mm512_add_ps(t, _mm512_set1_ps(u->e->bias[r])); \
				t = nn_act_avx512(u->e->act, t); \
			} \
			_mm512_mask_storeu_ps(cr + 16 * v, m, t); \
		} \
	} \
	finish_rows(u); \
}

DEFINE_UK512(1)
DEFINE_UK512(2)
DEFINE_UK512(3)

/*
 * AVX2: 4 rows x NV vectors of 8 pixels, sliver width 24; a tile of 8
 * packed rows takes two calls.  A sliver of one vector (a plane's last few
 * pixels: 7x7 is 24 + 24 + 1) takes all 8 rows in one call instead: with 4
 * accumulators each multiply-add waited on the one before, and that last
 * pixel took a quarter of a 7x7 layer's time (EPYC, Zen 3).
 */
#define UK2_NR 24
#define UK2_MR 4

__attribute__((target("avx2,fma")))
static inline __m256i
mask_avx2(int n)
{
	return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

#define DEFINE_UK2(NV, MR) \
__attribute__((target("avx2,fma"))) \
static void \
uk2_##NV(const uk_args *u) \
{ \
	__m256		acc[MR][NV]; \
	const float *a = u->a, \
			   *b = u->b; \
	int			tail = u->cols - 8 * (NV - 1); \
	__m256i		mfull = _mm256_set1_epi32(-1), \
				mlast = mask_avx2(tail); \
	const int64_t kc = u->kc; \
	_Pragma("GCC unroll 8") \
	for (int r = 0; r < MR; r++) \
		_Pragma("GCC unroll 3") \
		for (int v = 0; v < NV; v++) \
			acc[r][v] = _mm256_setzero_ps(); \
	/* unrolled: the loop's own instructions cost 4-5% of a 1x1 or 3x3 layer (EPYC, Zen 3) */ \
	_Pragma("GCC unroll 2") \
	for (int64_t p = 0; p < kc; p++) \
	{ \
		__m256		bv[NV]; \
		_Pragma("GCC unroll 3") \
		for (int v = 0; v < NV; v++) \
			bv[v] = _mm256_load_ps(b + 8 * v); \
		_Pragma("GCC unroll 8") \
		for (int r = 0; r < MR; r++) \
		{ \
			__m256		av = _mm256_broadcast_ss(a + r); \
			_Pragma("GCC unroll 3") \
			for (int v = 0; v < NV; v++) \
				acc[r][v] = _mm256_fmadd_ps(av, bv[v], acc[r][v]); \
		} \
		a += NN_CONV_MR; \
		b += UK2_NR; \
	} \
	{ \
		/* \
		 * the epilogue's arguments in locals: the build does not assume \
		 * strict aliasing, so each store would otherwise reload them \
		 */ \
		const bool	accumulate = u->accumulate; \
		const float *z = u->e ? u->e->z : NULL, \
				   *bias = u->e ? u->e->bias : NULL; \
		const int64_t ldz = u->e ? u->e->ldz : 0, \
					ldc = u->ldc; \
		const nn_activation act = u->e ? *u->e->act : (nn_activation) {NN_ACT_NONE, 0.0f, 0.0f}; \
		const int	rows = u->rows; \
		float	   *c = u->c; \
		_Pragma("GCC unroll 8") \
		for (int r = 0; r < MR; r++) \
		{ \
			float	   *cr = c + r * ldc; \
			if (r >= rows) \
				break; \
			_Pragma("GCC unroll 3") \
			for (int v = 0; v < NV; v++) \
			{ \
				__m256i		m = v == NV - 1 ? mlast : mfull; \
				bool		full = v < NV - 1 || tail >= 8; \
				__m256		t = acc[r][v]; \
				if (accumulate) \
					t = _mm256_add_ps(t, nn_load8_part(cr + 8 * v, full, m)); \
				if (z) \
					t = _mm256_add_ps(t, nn_load8_part(z + r * ldz + 8 * v, full, m)); \
				if (bias) \
					t = _mm256_add_ps(t, _mm256_set1_ps(bias[r])); \
				t = nn_act_avx2(&act, t); \
				nn_store8_part(cr + 8 * v, full, m, t); \
			} \
		} \
	} \
	finish_rows(u); \
}

DEFINE_UK2(1, NN_CONV_MR)
DEFINE_UK2(2, UK2_MR)
DEFINE_UK2(3, UK2_MR)

typedef void (*uk_fn) (const uk_args *u);

static const uk_fn uk512[3] = {uk512_1, uk512_2, uk512_3};
static const uk_fn uk2[3] = {uk2_1, uk2_2, uk2_3};

#define SLIVER_NR UK512_NR

void
nn_conv_tile_avx512(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, int rows,
					int cols, bool accumulate)
{
	uk_args		u;

	u.kc = kc;
	u.a = a;
	u.b = b;
	u.ldb = SLIVER_NR;
	u.c = c;
	u.ldc = ldc;
	u.rows = rows;
	u.cols = cols;
	u.accumulate = accumulate;
	u.e = NULL;
	uk512[(cols + 15) / 16 - 1] (&u);
}

/* ---- the driver --------------------------------------------------------- */

/* unrolled slivers one thread keeps at once: 16 x 160 rows x 48 = 480 KiB, in L2 */
#define PANEL_SLIVERS 16
/* channel tiles that sweep the slivers together (1 to 4 measured alike) */
#define TILE_CHUNK 2

/* the unrolled panel of each thread, kept between calls */
static __thread float *tls_panel;
static __thread size_t tls_panel_len;

typedef struct gemm_job
{
	const nn_conv_shape *cs;
	const nn_convw *pw;
	const float *x;
	float	   *y;
	const nn_conv_epi *epi;
	unroll_geom ug;
	nn_isa		isa;
	int			nr;				/* sliver width */
	int64_t		slivers;		/* per image and group */
	int64_t		per_range;		/* slivers unrolled together */
	int64_t		ranges;			/* per image and group */
	int64_t		mparts;			/* channel-tile ranges per sliver range */
	int64_t		tiles_per_part;
	int64_t		kc;				/* reduction block */
	bool		oom;
} gemm_job;

/* one micro-kernel call (AVX2, 2 or 3 vectors: two, one per half of the 8-row tile) */
static inline void
run_tile(const gemm_job *j, uk_args *u, tile_epi *e, int nv)
{
	if (j->isa == NN_ISA_AVX512 || nv == 1)
		(j->isa == NN_ISA_AVX512 ? uk512 : uk2)[nv - 1] (u);
	else
	{
		int			rows = u->rows;

		u->rows = rows < UK2_MR ? rows : UK2_MR;
		uk2[nv - 1] (u);
		if (rows > UK2_MR)
		{
			u->a += UK2_MR;
			u->c += UK2_MR * u->ldc;
			u->rows = rows - UK2_MR;
			if (u->e)
			{
				e->bias = e->bias ? e->bias + UK2_MR : NULL;
				e->z = e->z ? e->z + UK2_MR * e->ldz : NULL;
			}
			uk2[nv - 1] (u);
		}
	}
}

static void
gemm_task(void *arg, int64_t begin, int64_t end)
{
	gemm_job   *j = arg;
	const nn_conv_shape *cs = j->cs;
	const nn_geom *g = &cs->g;
	const nn_convw *pw = j->pw;
	int64_t		cg = cs->c / cs->group,
				mg = cs->m / cs->group,
				kk = pw->kk;
	size_t		sliver_floats = (size_t) j->kc * j->nr;
	float	   *panel = ox_aligned_grow(&tls_panel, &tls_panel_len, sliver_floats * j->per_range);
	pix_run		runs[NR_MAX + 1];

	if (!panel)
	{
		j->oom = true;
		return;
	}
	for (int64_t t = begin; t < end; t++)
	{
		int64_t		mp = t % j->mparts,
					rg = (t / j->mparts) % j->ranges,
					gi = (t / (j->mparts * j->ranges)) % cs->group,
					n = t / (j->mparts * j->ranges * cs->group);
		int64_t		s0 = rg * j->per_range,
					s1 = s0 + j->per_range < j->slivers ? s0 + j->per_range : j->slivers;
		int64_t		t0 = mp * j->tiles_per_part,
					t1 = t0 + j->tiles_per_part < pw->tiles ? t0 + j->tiles_per_part : pw->tiles;
		const float *xg = j->x + (n * cs->c + gi * cg) * g->in_size;
		float	   *yg = j->y + (n * cs->m + gi * mg) * g->out_size;
		const float *zg = j->epi->z ? j->epi->z + (n * cs->m + gi * mg) * g->out_size : NULL;
		const float *bg = j->epi->bias ? j->epi->bias + gi * mg : NULL;

		for (int64_t k0 = 0; k0 < kk; k0 += j->kc)
		{
			int64_t		kc = kk - k0 < j->kc ? kk - k0 : j->kc;
			bool		last = k0 + kc >= kk;

			for (int64_t s = s0; s < s1; s++)
			{
				int64_t		p0 = s * j->nr;
				int			cols = (int) (g->out_size - p0 < j->nr ? g->out_size - p0 : j->nr);
				int			nruns = j->ug.pointwise ? 0 : sliver_runs(g, p0, cols, runs);
				float	   *dst = panel + (s - s0) * sliver_floats;

				if (j->isa == NN_ISA_AVX512)
					unroll_avx512(&j->ug, xg, p0, cols, runs, nruns, k0, kc, j->nr, dst);
				else
					unroll_avx2(&j->ug, xg, p0, cols, runs, nruns, k0, kc, j->nr, dst);
			}
			/*
			 * A few channel tiles at a time across the slivers: each reuses
			 * a sliver from L1, and their output rows (and Z's) are read and
			 * written as a few sequential streams the prefetchers follow.
			 */
			for (int64_t tc = t0; tc < t1; tc += TILE_CHUNK)
			for (int64_t s = s0; s < s1; s++)
			{
				int64_t		p0 = s * j->nr;
				int			cols = (int) (g->out_size - p0 < j->nr ? g->out_size - p0 : j->nr);
				int			nv = j->isa == NN_ISA_AVX512 ? (cols + 15) / 16 : (cols + 7) / 8;

				for (int64_t ti = tc; ti < t1 && ti < tc + TILE_CHUNK; ti++)
				{
					int64_t		m0 = ti * NN_CONV_MR;
					tile_epi	e;
					uk_args		u;

					u.kc = kc;
					u.a = pw->data + ((gi * pw->tiles + ti) * kk + k0) * NN_CONV_MR;
					u.b = panel + (s - s0) * sliver_floats;
					u.ldb = j->nr;
					u.c = yg + m0 * g->out_size + p0;
					u.ldc = g->out_size;
					u.rows = (int) (mg - m0 < NN_CONV_MR ? mg - m0 : NN_CONV_MR);
					u.cols = cols;
					u.accumulate = k0 > 0;
					u.e = NULL;
					if (last)
					{
						e.bias = bg ? bg + m0 : NULL;
						e.z = zg ? zg + m0 * g->out_size + p0 : NULL;
						e.ldz = g->out_size;
						e.act = &j->epi->act;
						u.e = &e;
					}
					run_tile(j, &u, &e, nv);
				}
			}
		}
	}
}

static ox_code
conv_gemm(ox_kernel_ctx *ctx, const nn_conv_shape *cs, const nn_convw *pw, const float *x,
		  const nn_conv_epi *epi, float *y, ox_status *st)
{
	const nn_geom *g = &cs->g;
	gemm_job	job;
	int64_t		tasks,
				nkb;
	int			threads = ctx ? ctx->nthreads : 1;

	memset(&job, 0, sizeof(job));
	OX_TRY(nn_unroll_init(&job.ug, g, st));
	job.cs = cs;
	job.pw = pw;
	job.x = x;
	job.y = y;
	job.epi = epi;
	job.isa = nn_conv_fast_isa();
	job.nr = job.isa == NN_ISA_AVX512 ? UK512_NR : UK2_NR;
	job.slivers = (g->out_size + job.nr - 1) / job.nr;
	/* equal reduction blocks of at most KC_MAX rows */
	nkb = (pw->kk + KC_MAX - 1) / KC_MAX;
	job.kc = (pw->kk + nkb - 1) / nkb;
	/* equal sliver ranges of at most PANEL_SLIVERS */
	job.ranges = (job.slivers + PANEL_SLIVERS - 1) / PANEL_SLIVERS;
	job.per_range = (job.slivers + job.ranges - 1) / job.ranges;
	tasks = cs->n * cs->group * job.ranges;
	/*
	 * Too few tasks for the threads (a small plane): split the channel
	 * tiles too, into as few parts as give each thread one, since every
	 * part unrolls the same slivers again (two per thread cost MobileNet-v2
	 * and ResNet-50 about 6% of their CPU time at 2 threads).
	 */
	job.mparts = 1;
	if (threads > 1 && tasks < threads)
	{
		job.mparts = (threads + tasks - 1) / tasks;
		if (job.mparts > pw->tiles)
			job.mparts = pw->tiles;
	}
	job.tiles_per_part = (pw->tiles + job.mparts - 1) / job.mparts;
	job.mparts = (pw->tiles + job.tiles_per_part - 1) / job.tiles_per_part;
	ox_parallel_for(ctx, tasks * job.mparts, 1, gemm_task, &job);
	nn_unroll_free(&job.ug);
	if (job.oom)
		return ox_fail(st, OX_OUT_OF_MEMORY, "Conv: could not allocate an unrolling buffer");
	return OX_OK;
}

bool
nn_conv_is_depthwise(const nn_conv_shape *cs)
{
	const nn_geom *g = &cs->g;

	/* conv_depthwise.c keeps a padded copy of one plane and gathers with
	 * 32-bit offsets for strides other than 1 and 2: odd geometries take
	 * the GEMM path instead */
	int64_t		plane;

	if (cs->group <= 1 || cs->c != cs->group || g->s[2] > 64)
		return false;
	plane = ox_shape_numel(3, (int64_t[]) {g->in[0] + g->pb[0] + g->pe[0], g->in[1] + g->pb[1] + g->pe[1],
										   g->in[2] + g->pb[2] + g->pe[2] + 64 * g->s[2]});
	return plane >= 0 && plane <= ((int64_t) 1 << 26);
}

/* ---- 1x1 over a 1x1 plane: rows of a GEMM -------------------------------- */

/*
 * A 1x1 kernel over a 1x1 input plane, unpadded, group 1: each image's
 * output is its C inputs times W^T, one row of a GEMM.  RegNet's and
 * EfficientNet's squeeze-and-excitation layers (after a global pooling)
 * went to the PIXELS path, whose tiles hold 7 pixels: at 1x1 six of them
 * empty, with the unrolling and the transposing epilogue per call (RegNet's
 * 52 -> 440 layer took 18 us, onnxruntime 3).
 */
bool
nn_conv_rows_applies(const nn_conv_shape *cs)
{
	for (int i = 0; i < NN_MAX_SPATIAL; i++)
		if (cs->g.pb[i] != 0 || cs->g.pe[i] != 0)
			return false;
	return cs->group == 1 && cs->g.in_size == 1 && cs->g.k_size == 1 && cs->g.out_size == 1;
}

/* W [m, c, 1...] packed as the GEMM's B = W^T; NULL without the GEMM's kernels (no status) or on error */
static nn_convw *
conv_rows_pack(int64_t m, int64_t c, const float *w, ox_status *st)
{
	nn_convw   *p = calloc(1, sizeof(*p));
	int64_t		n = m * c;

	if (!p)
	{
		ox_fail(st, OX_OUT_OF_MEMORY, "Conv: could not allocate packed weights");
		return NULL;
	}
	p->kind = NN_CONVW_ROWS;
	p->group = 1;
	p->mg = m;
	p->kk = c;
	p->src = w;
	if (!(p->rows = ox_sgemm_pack_b(true, c, m, w, c, st)))
	{
		free(p);
		return NULL;
	}
	p->bytes = ox_sgemm_packed_bytes(p->rows);
	p->rows_finite = true;
	for (int64_t i = 0; i < n && p->rows_finite; i++)
		p->rows_finite = isfinite(w[i]);
	return p;
}

/* Y = act(X W^T + B + Z) for pw of kind ROWS */
static ox_code
conv_rows_f32(ox_kernel_ctx *ctx, const nn_conv_shape *cs, const nn_convw *pw, const float *x,
			  const nn_conv_epi *epi, float *y, ox_status *st)
{
	ox_sgemm_epilogue se;
	int64_t		ny = cs->n * cs->m;

	memset(&se, 0, sizeof(se));
	se.bias = epi->bias;
	/* the GEMV may skip the inputs that are 0 (a ReLU's zeros before the layer) */
	se.b_finite = pw->rows_finite;
	OX_TRY(ox_sgemm_packed_b_ex(ctx, false, cs->n, 1.0f, x, cs->c, pw->rows, 0.0f, y, cs->m, &se));
	if (epi->z)
		for (int64_t i = 0; i < ny; i++)
			y[i] += epi->z[i];
	if (epi->act.kind != NN_ACT_NONE)
		nn_activation_apply_f32(ctx, &epi->act, y, ny);
	return OX_OK;
}

nn_convw *
nn_convw_pack_for(const nn_conv_shape *cs, const float *w, ox_status *st)
{
	int64_t		kk = cs->c / cs->group * cs->g.k_size;

	if (nn_conv_is_depthwise(cs))
		return NULL;
	if (nn_conv_rows_applies(cs))
	{
		nn_convw   *p = conv_rows_pack(cs->m, cs->c, w, st);

		if (p || st->code != OX_OK)
			return p;
	}
	if (nn_winograd_applies(cs))
		return nn_winograd_pack(cs->m, cs->c, w, st);
	if (nn_winograd2_applies(cs))
		return nn_winograd2_pack(cs->m, cs->c, w, st);
	if (nn_conv_pixels_applies(cs))
		return nn_conv_pixels_pack(cs->m, kk, w, st);
	return nn_convw_pack(cs->group, cs->m, kk, w, st);
}

/* whether pw holds W in the layout of the path that runs shape cs */
static bool
pack_fits(const nn_convw *pw, const nn_conv_shape *cs, const float *w)
{
	int64_t		kk = cs->c / cs->group * cs->g.k_size;

	if (!pw || pw->src != (const void *) w)
		return false;
	switch (pw->kind)
	{
		case NN_CONVW_WINOGRAD:
			return pw->mg == cs->m && pw->kk == cs->c && nn_winograd_applies(cs);
		case NN_CONVW_WINOGRAD2:
			return pw->mg == cs->m && pw->kk == cs->c && !nn_winograd_applies(cs) && nn_winograd2_applies(cs);
		case NN_CONVW_PIXELS:
			return pw->mg == cs->m && pw->kk == kk && !nn_winograd_applies(cs) && !nn_winograd2_applies(cs) &&
				nn_conv_pixels_applies(cs);
		case NN_CONVW_GEMM:
			return pw->group == cs->group && pw->kk == kk && pw->mg * pw->group == cs->m;
		case NN_CONVW_ROWS:
			return pw->mg == cs->m && pw->kk == cs->c && nn_conv_rows_applies(cs);
	}
	return false;
}

ox_code
nn_conv_fast_f32(ox_kernel_ctx *ctx, const nn_conv_shape *cs, const nn_convw *pw, const float *x,
				 const float *w, const nn_conv_epi *epi, float *y, ox_status *st)
{
	const nn_geom *g = &cs->g;
	nn_convw   *own = NULL;
	ox_code		rc;

	if (nn_conv_fast_isa() == NN_ISA_NONE)
		return ox_fail(st, OX_INTERNAL, "Conv: no fast path on this machine");
	if (cs->n * cs->m * g->out_size == 0)
		return OX_OK;
	if (nn_conv_is_depthwise(cs))
		return nn_conv_depthwise_f32(ctx, cs, x, w, epi, y, st);
	if (!pack_fits(pw, cs, w))
	{
		/* weights that are not constants, or a shape prepare did not foresee */
		if (!(own = nn_convw_pack_for(cs, w, st)))
			return st->code;
		pw = own;
	}
	switch (pw->kind)
	{
		case NN_CONVW_WINOGRAD:
			rc = nn_conv_winograd_f32(ctx, cs, pw, x, epi, y, st);
			break;
		case NN_CONVW_PIXELS:
			rc = nn_conv_pixels_f32(ctx, cs, pw, x, epi, y, st);
			break;
		case NN_CONVW_WINOGRAD2:
			rc = nn_conv_winograd2_f32(ctx, cs, pw, x, epi, y, st);
			break;
		case NN_CONVW_ROWS:
			rc = conv_rows_f32(ctx, cs, pw, x, epi, y, st);
			break;
		default:
			rc = conv_gemm(ctx, cs, pw, x, epi, y, st);
			break;
	}
	nn_convw_free(own);
	return rc;
}
