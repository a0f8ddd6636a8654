/*
 * conv_pixels.c
 *	  Float32 convolution for small output planes (ResNet's and MobileNet's
 *	  7x7 layers), AVX-512: the GEMM with the roles of the operands turned
 *	  around.
 *
 * conv_gemm.c puts 16 output pixels in each vector, which wastes lanes
 * when a plane has few pixels: 49 take four vectors, 64 lanes.  Here the
 * vectors hold output channels instead (48 per tile, three vectors) and
 * each of the tile's seven pixels is broadcast; channel counts are
 * multiples of 16 in practice, and the pixel groups of seven divide 7x7
 * and 14x14 planes exactly.  The batch is folded into the pixel groups,
 * so the weights are read once per call, not once per image.
 *
 * The im2col matrix of all images is unrolled once per call (in parallel,
 * seven pixels per group, K-major), then each thread takes blocks of 48
 * output channels, whose weights are packed K-major ([K][48], once per
 * session): per reduction block, a 48 KiB slice of them stays in L1 while
 * it runs against every pixel group, accumulating into a [pixels][48]
 * staging tile.  The
 * epilogue reads that tile back transposed (gathers), adds bias and Z,
 * applies the activation and stores each output row once.
 */
#include "kernels/cpu/conv_fast.h"

#include <immintrin.h>
#include <string.h>

#define PX NN_CONV_PX			/* pixels per group */
#define CB NN_CONV_CB			/* output channels per block */
#define PKC 128				/* reduction block: a 24 KiB weight slice, in L1 with the panel */
/* planes with more outputs go to conv_gemm.c */
#define PIXELS_MAX_OUT 64

bool
nn_conv_pixels_applies(const nn_conv_shape *cs)
{
	return nn_conv_fast_isa() == NN_ISA_AVX512 && cs->group == 1 && cs->g.out_size <= PIXELS_MAX_OUT &&
		cs->m >= 16;
}

nn_convw *
nn_conv_pixels_pack(int64_t m, int64_t kk, const float *w, ox_status *st)
{
	nn_convw   *p = calloc(1, sizeof(*p));
	int64_t		n;

	if (!p)
	{
		ox_fail(st, OX_OUT_OF_MEMORY, "Conv: could not allocate packed weights");
		return NULL;
	}
	p->kind = NN_CONVW_PIXELS;
	p->group = 1;
	p->mg = m;
	p->kk = kk;
	p->tiles = (m + CB - 1) / CB;
	p->src = w;
	n = ox_shape_numel(3, (int64_t[]) {p->tiles, kk, CB});
	if (!(p->data = nn_scratch(n, sizeof(float), st, "Conv packed weights")))
	{
		free(p);
		return NULL;
	}
	p->bytes = (size_t) n * sizeof(float);
	/* a transpose in chunks of 64 reduction rows: W is read a row segment at a time */
	for (int64_t b = 0; b < p->tiles; b++)
		for (int64_t k0 = 0; k0 < kk; k0 += 64)
			for (int c = 0; c < CB; c++)
			{
				int64_t		row = b * CB + c;

				for (int64_t k = k0; k < kk && k < k0 + 64; k++)
					p->data[(b * kk + k) * CB + c] = row < m ? w[row * kk + k] : 0.0f;
			}
	return p;
}

typedef struct px_job
{
	const nn_conv_shape *cs;
	const nn_convw *pw;
	const float *x;
	float	   *y;
	const nn_conv_epi *epi;
	nn_unroll	ur;
	float	   *panel;			/* [groups][K][PX] */
	int64_t		per_img;		/* pixel groups per image */
	int64_t		groups;
	bool		oom;
} px_job;

/* each thread's staging tile, kept between calls */
static __thread float *tls_work;
static __thread size_t tls_work_len;
/* the calling thread's unrolled input, shared read-only with the workers */
static __thread float *tls_panel;
static __thread size_t tls_panel_len;

static void
unroll_task(void *arg, int64_t begin, int64_t end)
{
	px_job	   *j = arg;
	const nn_conv_shape *cs = j->cs;
	int64_t		kk = j->pw->kk;

	for (int64_t gi = begin; gi < end; gi++)
	{
		int64_t		n = gi / j->per_img,
					p0 = (gi % j->per_img) * PX;
		int			cols = (int) (cs->g.out_size - p0 < PX ? cs->g.out_size - p0 : PX);

		nn_unroll_block(&j->ur, j->x + n * cs->c * cs->g.in_size, p0, cols, 0, kk, PX,
						j->panel + gi * kk * PX);
	}
}

/*
 * acc[7][48] (+)= b[kc][7] x w[kc][48], prefetching pf[kc][48] into L2
 * when pf is not NULL.  The weights of a layer with a 7x7 plane come from
 * memory once per call (ResNet's last stage: 9 MiB for 24 multiply-adds
 * each), in slices the hardware prefetchers follow only a 4 KiB page at a
 * time; the first pixel group of each slice fetches the next slice while
 * it computes, so the transfer overlaps the products.
 */
__attribute__((target("avx512f,fma"), always_inline))
static inline void
px_tile(int64_t kc, const float *w, const float *b, float *acc, bool accumulate, const float *pf,
		bool prefetch)
{
	__m512		a[PX][3];

#pragma GCC unroll 7
	for (int p = 0; p < PX; p++)
#pragma GCC unroll 3
		for (int v = 0; v < 3; v++)
			a[p][v] = accumulate ? _mm512_load_ps(acc + p * CB + 16 * v) : _mm512_setzero_ps();
	for (int64_t k = 0; k < kc; k++)
	{
		__m512		w0 = _mm512_load_ps(w),
					w1 = _mm512_load_ps(w + 16),
					w2 = _mm512_load_ps(w + 32);

		if (prefetch)
		{
			_mm_prefetch((const char *) pf, _MM_HINT_T1);
			_mm_prefetch((const char *) (pf + 16), _MM_HINT_T1);
			_mm_prefetch((const char *) (pf + 32), _MM_HINT_T1);
			pf += CB;
		}
#pragma GCC unroll 7
		for (int p = 0; p < PX; p++)
		{
			__m512		bp = _mm512_set1_ps(b[p]);

			a[p][0] = _mm512_fmadd_ps(bp, w0, a[p][0]);
			a[p][1] = _mm512_fmadd_ps(bp, w1, a[p][1]);
			a[p][2] = _mm512_fmadd_ps(bp, w2, a[p][2]);
		}
		w += CB;
		b += PX;
	}
#pragma GCC unroll 7
	for (int p = 0; p < PX; p++)
#pragma GCC unroll 3
		for (int v = 0; v < 3; v++)
			_mm512_store_ps(acc + p * CB + 16 * v, a[p][v]);
}

__attribute__((target("avx512f,fma")))
void
nn_conv_px_tile(int64_t kc, const float *w, const float *b, float *acc, bool accumulate, const float *pf)
{
	if (pf)
		px_tile(kc, w, b, acc, accumulate, pf, true);
	else
		px_tile(kc, w, b, acc, accumulate, NULL, false);
}

/* y rows of channels [m0, m0 + nch) from the staging tile (pixel-major, CB wide) */
__attribute__((target("avx512f")))
static void
px_epilogue(const px_job *j, int64_t m0, int64_t nch, const float *acc)
{
	const nn_conv_shape *cs = j->cs;
	const nn_activation *act = &j->epi->act;
	int64_t		npix = cs->g.out_size;
	bool		act_after = !nn_act_in_registers(act);
	__m512i		idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
										 _mm512_set1_epi32(CB));

	for (int64_t n = 0; n < cs->n; n++)
	{
		const float *an = acc + n * j->per_img * PX * CB;

		for (int64_t c = 0; c < nch; c++)
		{
			int64_t		off = (n * cs->m + m0 + c) * npix;
			float	   *yr = j->y + off;
			const float *zr = j->epi->z ? j->epi->z + off : NULL;
			__m512		bias = _mm512_set1_ps(j->epi->bias ? j->epi->bias[m0 + c] : 0.0f);

			for (int64_t p = 0; p < npix; p += 16)
			{
				__mmask16	m = npix - p >= 16 ? (__mmask16) 0xFFFF : (__mmask16) ((1u << (npix - p)) - 1);
				__m512		v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, an + p * CB + c, 4);

				v = _mm512_add_ps(v, bias);
				if (zr)
					v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, zr + p));
				_mm512_mask_storeu_ps(yr + p, m, nn_act_avx512(act, v));
			}
			if (act_after)
				nn_activation_apply_row_f32(act, yr, npix);
		}
	}
}

static void
block_task(void *arg, int64_t begin, int64_t end)
{
	px_job	   *j = arg;
	const nn_convw *pw = j->pw;
	int64_t		kk = pw->kk,
				rows = j->groups * PX;
	float	   *acc = ox_aligned_grow(&tls_work, &tls_work_len, (size_t) rows * CB);

	if (!acc)
	{
		j->oom = true;
		return;
	}
	for (int64_t b = begin; b < end; b++)
	{
		int64_t		m0 = b * CB,
					nch = j->cs->m - m0 < CB ? j->cs->m - m0 : CB;
		const float *wb = pw->data + b * kk * CB;

		for (int64_t k0 = 0; k0 < kk; k0 += PKC)
		{
			int64_t		kc = kk - k0 < PKC ? kk - k0 : PKC;

			/* the next slice: this block's next k0, else the next block's first */
			const float *next = k0 + kc < kk ? wb + (k0 + kc) * CB : b + 1 < end ? wb + kk * CB : NULL;

			for (int64_t gi = 0; gi < j->groups; gi++)
				nn_conv_px_tile(kc, wb + k0 * CB, j->panel + (gi * kk + k0) * PX, acc + gi * PX * CB, k0 > 0,
								gi == 0 ? next : NULL);
		}
		px_epilogue(j, m0, nch, acc);
	}
}

ox_code
nn_conv_pixels_f32(ox_kernel_ctx *ctx, const nn_conv_shape *cs, const nn_convw *pw, const float *x,
				   const nn_conv_epi *epi, float *y, ox_status *st)
{
	px_job		job;
	size_t		panel_len;

	memset(&job, 0, sizeof(job));
	job.cs = cs;
	job.pw = pw;
	job.x = x;
	job.y = y;
	job.epi = epi;
	job.per_img = (cs->g.out_size + PX - 1) / PX;
	job.groups = cs->n * job.per_img;
	panel_len = (size_t) job.groups * pw->kk * PX;
	if (ox_shape_numel(3, (int64_t[]) {job.groups, pw->kk, PX}) < 0 ||
		!(job.panel = ox_aligned_grow(&tls_panel, &tls_panel_len, panel_len)))
		return ox_fail(st, OX_OUT_OF_MEMORY, "Conv: could not allocate %zu bytes to unroll the input",
					   panel_len * sizeof(float));
	OX_TRY(nn_unroll_init(&job.ur, &cs->g, st));
	ox_parallel_for(ctx, job.groups, 1, unroll_task, &job);
	ox_parallel_for(ctx, (cs->m + CB - 1) / CB, 1, block_task, &job);
	nn_unroll_free(&job.ur);
	if (job.oom)
		return ox_fail(st, OX_OUT_OF_MEMORY, "Conv: could not allocate a weight panel");
	return OX_OK;
}
