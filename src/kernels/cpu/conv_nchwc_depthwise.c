/*
 * conv_nchwc_depthwise.c
 *	  onnx_pg.nchwc DepthwiseConv: a 2-D convolution with group = C = M on
 *	  channel-blocked tensors [N, C/16, H, W, 16] (MobileNet's 3x3 layers
 *	  between blocked pointwise ones).
 *
 * A block's plane already holds 16 channels in the lanes of every pixel,
 * which is the layout conv_depthwise_lanes.c transposes NCHW planes into
 * and back out of: here every tap of every output is one FMA on a full
 * vector, with no transposes at all.  Outputs go 8 pixels of a row at a
 * time (8 accumulators, each tap's weight vector loaded once for the 8);
 * pixels whose taps leave the row are done one by one with the taps that
 * are inside.  Bias, Z and the activation are applied before the store,
 * and lanes past C are stored as zeros.
 */
#include "kernels/cpu/conv_nchwc.h"

#include <string.h>

#define DW_PX 8

typedef struct dw_state
{
	nn_window	win;
	nn_activation act;
	int64_t		c,
				cb,
				kh,
				kw;
	float	   *w;				/* [cb][kh][kw][16], zero past C */
	const void *w_data;			/* the constant the packing came from */
} dw_state;

void
nn_nchwc_depthwise_free(void *state)
{
	dw_state   *s = state;

	if (s)
		ox_aligned_free(s->w);
	free(s);
}

ox_code
nn_nchwc_depthwise_prepare(ox_prepare_ctx *pc)
{
	dw_state   *s;
	const ox_tensor *w;
	const float *src;

	if (!(s = calloc(1, sizeof(*s))))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "onnx_pg.nchwc DepthwiseConv: could not allocate state");
	if (nn_nchwc_prepare_begin(pc, "DepthwiseConv", &w, &s->win, &s->act) != OX_OK)
	{
		free(s);
		return pc->st->code;
	}
	if (w->dims[1] != 1 || ox_attr_int(pc->node, "group", 1) != w->dims[0])
	{
		free(s);
		return ox_fail(pc->st, OX_INVALID_MODEL,
					   "onnx_pg.nchwc DepthwiseConv: W must be [C, 1, kh, kw] with group C");
	}
	s->c = w->dims[0];
	s->cb = (s->c + BLK - 1) / BLK;
	s->kh = w->dims[2];
	s->kw = w->dims[3];
	s->w_data = w->data;
	if (!(s->w = ox_aligned_alloc(sizeof(float) * (size_t) (s->cb * s->kh * s->kw * BLK))))
	{
		free(s);
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "onnx_pg.nchwc DepthwiseConv: could not allocate packed weights");
	}
	src = w->data;
	for (int64_t b = 0; b < s->cb; b++)
		for (int64_t t = 0; t < s->kh * s->kw; t++)
			for (int64_t l = 0; l < BLK; l++)
			{
				int64_t		c = b * BLK + l;

				s->w[(b * s->kh * s->kw + t) * BLK + l] = c < s->c ? src[c * s->kh * s->kw + t] : 0.0f;
			}
	pc->state = s;
	return OX_OK;
}

typedef struct dw_job
{
	const dw_state *s;
	const float *x;
	const float *z;
	const float *bias;			/* cb x 16, zero past C */
	float	   *y;
	const nn_geom *g;
	int64_t		ow_lo,
				ow_hi;			/* outputs whose every horizontal tap is inside */
} dw_job;

/* one output pixel (or DW_PX of them from ox) of row oy, block b */
__attribute__((target("avx512f,fma")))
static inline void
dw_finish(const dw_job *j, __m512 v, int64_t b, int64_t off, __mmask16 keep)
{
	v = _mm512_add_ps(v, _mm512_loadu_ps(j->bias + b * BLK));
	if (j->z)
		v = _mm512_add_ps(v, _mm512_loadu_ps(j->z + off * BLK));
	_mm512_storeu_ps(j->y + off * BLK, _mm512_maskz_mov_ps(keep, nn_act_avx512(&j->s->act, v)));
}

/* rows (image, block, output row) in [begin, end) */
__attribute__((target("avx512f,fma")))
static void
dw_task(void *arg, int64_t begin, int64_t end)
{
	const dw_job *j = arg;
	const dw_state *s = j->s;
	const nn_geom *g = j->g;
	int64_t		h = g->in[AH],
				w = g->in[AW],
				oh = g->out[AH],
				ow = g->out[AW],
				sw = g->s[AW],
				dh = g->d[AH],
				dw = g->d[AW];

	for (int64_t t = begin; t < end; t++)
	{
		int64_t		oy = t % oh,
					plane = t / oh,
					b = plane % s->cb;
		const float *xp = j->x + plane * h * w * BLK;
		const float *wb = s->w + b * s->kh * s->kw * BLK;
		int64_t		iy = oy * g->s[AH] - g->pb[AH];
		int64_t		ky0,
					ky1;
		int64_t		left = s->c - b * BLK;
		__mmask16	keep = left >= BLK ? (__mmask16) 0xFFFF : (__mmask16) ((1u << left) - 1);

		nn_nchwc_tap_range(iy, dh, s->kh, h, &ky0, &ky1);
		for (int64_t ox = 0; ox < ow;)
		{
			int64_t		ix = ox * sw - g->pb[AW];
			int64_t		off = (plane * oh + oy) * ow + ox;

			if (ox >= j->ow_lo && ox + DW_PX <= j->ow_hi)
			{
				__m512		acc[DW_PX];

				for (int p = 0; p < DW_PX; p++)
					acc[p] = _mm512_setzero_ps();
				for (int64_t ky = ky0; ky < ky1; ky++)
				{
					const float *xr = xp + ((iy + ky * dh) * w + ix) * BLK;

					for (int64_t kx = 0; kx < s->kw; kx++)
					{
						__m512		wv = _mm512_load_ps(wb + (ky * s->kw + kx) * BLK);
						const float *xq = xr + kx * dw * BLK;

#pragma GCC unroll 8
						for (int p = 0; p < DW_PX; p++)
							acc[p] = _mm512_fmadd_ps(_mm512_loadu_ps(xq + p * sw * BLK), wv, acc[p]);
					}
				}
				for (int p = 0; p < DW_PX; p++)
					dw_finish(j, acc[p], b, off + p, keep);
				ox += DW_PX;
			}
			else
			{
				int64_t		kx0,
							kx1;
				__m512		acc = _mm512_setzero_ps();

				nn_nchwc_tap_range(ix, dw, s->kw, w, &kx0, &kx1);
				for (int64_t ky = ky0; ky < ky1; ky++)
					for (int64_t kx = kx0; kx < kx1; kx++)
						acc = _mm512_fmadd_ps(_mm512_loadu_ps(xp + ((iy + ky * dh) * w + ix + kx * dw) * BLK),
											  _mm512_load_ps(wb + (ky * s->kw + kx) * BLK), acc);
				dw_finish(j, acc, b, off, keep);
				ox++;
			}
		}
	}
}

ox_code
nn_nchwc_depthwise_run(ox_kernel_ctx *ctx)
{
	const dw_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *z = ox_in_tensor(ctx, 3);
	nn_conv_shape cs;
	dw_job		j;
	ox_tensor  *y;
	float	   *bias;

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "onnx_pg.nchwc DepthwiseConv: not prepared");
	OX_TRY(nn_nchwc_conv_begin(ctx, "DepthwiseConv", &s->win, s->c, s->c, s->cb, s->c, s->w_data, false,
							   s->cb * BLK, &cs, &y, &bias));
	if (!bias)
		return OX_OK;
	memset(&j, 0, sizeof(j));
	j.s = s;
	j.x = x->data;
	j.z = z ? z->data : NULL;
	j.bias = bias;
	j.y = y->data;
	j.g = &cs.g;
	nn_valid_range(cs.g.out[AW], cs.g.s[AW], -cs.g.pb[AW], cs.g.in[AW] - (s->kw - 1) * cs.g.d[AW],
				   &j.ow_lo, &j.ow_hi);
	ox_parallel_for(ctx, x->dims[0] * s->cb * cs.g.out[AH], 1, dw_task, &j);
	free(bias);
	return OX_OK;
}
