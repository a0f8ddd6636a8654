/*
 * conv_nchwc_dw_kernels.h
 *	  onnx_pg.nchwc DepthwiseConv: a 2-D convolution with group = C = M on
 *	  channel-blocked tensors [N, C/BLK, H, W, BLK] (MobileNet's 3x3 layers
 *	  between blocked pointwise ones).  A template like conv_nchwc_kernels.h,
 *	  compiled for blocks of 16 and of 8.
 *
 * A block's plane already holds BLK channels in the lanes of every pixel,
 * which is the layout conv_depthwise_lanes.c transposes NCHW planes into
 * and back out of: here every tap of every output is one FMA on a full
 * vector, with no transposes at all.  Outputs go 8 pixels of a row at a
 * time (8 accumulators, each tap's weight vector loaded once for the 8);
 * groups with pixels whose taps leave the row skip those taps pixel by
 * pixel.  Bias, Z and the activation are applied before the store,
 * and lanes past C are stored as zeros.
 */
#define DW_PX 8

typedef nn_nchwc_dw_state dw_state;

/* s (window and activation parsed) for W [C, 1, kh, kw]: the weights packed in blocks of BLK */
ox_code
NCHWC_FN(depthwise_prepare) (ox_prepare_ctx *pc, dw_state *s, const ox_tensor *w)
{
	const float *src;

	s->blk = BLK;
	s->c = w->dims[0];
	s->cb = (s->c + BLK - 1) / BLK;
	s->kh = w->dims[2];
	s->kw = w->dims[3];
	s->w_data = w->data;
	OX_TRY(nn_nchwc_prepare_bias(pc, "DepthwiseConv", s->c, s->cb * BLK, &s->bias));
	if (!(s->w = ox_aligned_alloc(sizeof(float) * (size_t) (s->cb * s->kh * s->kw * BLK))))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "onnx_pg.nchwc DepthwiseConv: could not allocate packed weights");
	src = w->data;
	for (int64_t b = 0; b < s->cb; b++)
		for (int64_t t = 0; t < s->kh * s->kw; t++)
			for (int64_t l = 0; l < BLK; l++)
			{
				int64_t		c = b * BLK + l;

				s->w[(b * s->kh * s->kw + t) * BLK + l] = c < s->c ? src[c * s->kh * s->kw + t] : 0.0f;
			}
	ox_prepare_releasable(pc, 1);
	return OX_OK;
}

typedef struct dw_job
{
	const dw_state *s;
	const float *x;
	const float *z;
	const float *bias;			/* cb x BLK, zero past C */
	float	   *y;
	const nn_geom *g;
	int64_t		ow_lo,
				ow_hi;			/* outputs whose every horizontal tap is inside */
} dw_job;

/*
 * What a row's outputs get before the store: the block's bias, Z when
 * there is one, and the activation.  None, Relu and Clip (MobileNet's
 * Relu6) are one max and one min against bounds made once per row
 * (nn_act_as_clamp).
 */
typedef struct dw_epilogue
{
	nv_t		bias,
				lo,
				hi;
	bool		clamp;			/* the activation is the max/min pair */
	nv_keep_t	keep;			/* lanes inside C */
} dw_epilogue;

__attribute__((target(NCHWC_TARGET)))
static inline void
dw_epilogue_init(dw_epilogue *e, const dw_job *j, int64_t b)
{
	int64_t		left = j->s->c - b * BLK;
	float		lo,
				hi;

	e->bias = nv_load(j->bias + b * BLK);
	e->clamp = nn_act_as_clamp(&j->s->act, &lo, &hi);
	e->lo = nv_set1(lo);
	e->hi = nv_set1(hi);
	e->keep = nv_keep_first(left);
}

/* output pixel off (flat over [N * CB, OH, OW]) from its sum v */
__attribute__((target(NCHWC_TARGET)))
static inline void
dw_finish(const dw_job *j, const dw_epilogue *e, nv_t v, int64_t off)
{
	v = nv_add(v, e->bias);
	if (j->z)
		v = nv_add(v, nv_load(j->z + off * BLK));
	if (e->clamp)
		v = nv_min(e->hi, nv_max(e->lo, v));
	else
		v = nv_act(&j->s->act, v);
	nv_store(j->y + off * BLK, nv_keep_apply(e->keep, v));
}

/*
 * Groups of DW_PX outputs from ox, every tap of rows [ky0, ky1) inside:
 * each tap's weight vector loaded once per group, 8 FMAs on it.  Inlined
 * with kw = 3 for the 3x3 layers, whose taps then unroll and whose 9
 * weight vectors stay in registers over the row.
 */
__attribute__((target(NCHWC_TARGET)))
static inline __attribute__((always_inline)) void
dw_groups(const dw_job *j, const dw_epilogue *e, const float *xp, const float *wb, int64_t iy, int64_t ky0,
		  int64_t ky1, const int64_t kw, int64_t ox, int64_t groups, int64_t off)
{
	const nn_geom *g = j->g;
	int64_t		w = g->in[AW],
				sw = g->s[AW],
				dh = g->d[AH],
				dw = g->d[AW];

	for (int64_t q = 0; q < groups; q++, ox += DW_PX, off += DW_PX)
	{
		int64_t		ix = ox * sw - g->pb[AW];
		nv_t		acc[DW_PX];

		for (int p = 0; p < DW_PX; p++)
			acc[p] = nv_zero();
		for (int64_t ky = ky0; ky < ky1; ky++)
		{
			const float *xr = xp + ((iy + ky * dh) * w + ix) * BLK;

#pragma GCC unroll 4
			for (int64_t kx = 0; kx < kw; kx++)
			{
				nv_t		wv = nv_load_aligned(wb + (ky * kw + kx) * BLK);
				const float *xq = xr + kx * dw * BLK;

#pragma GCC unroll 8
				for (int p = 0; p < DW_PX; p++)
					acc[p] = nv_fmadd(nv_load(xq + p * sw * BLK), wv, acc[p]);
			}
		}
		for (int p = 0; p < DW_PX; p++)
			dw_finish(j, e, acc[p], off + p);
	}
}

/*
 * The n <= DW_PX outputs from ox where some taps leave the row (its ends,
 * or a row shorter than DW_PX): the same accumulators, each pixel skipping
 * the taps outside.  Done one pixel at a time with one accumulator, these
 * waited on each FMA's latency: the 7 pixels of a 7x7 plane, and 8 of
 * every 56, ran 3-4x slower than the full groups.
 */
__attribute__((target(NCHWC_TARGET)))
static void
dw_edge(const dw_job *j, const dw_epilogue *e, const float *xp, const float *wb, int64_t iy, int64_t ky0,
		int64_t ky1, int64_t ox, int64_t n, int64_t off)
{
	const nn_geom *g = j->g;
	int64_t		w = g->in[AW],
				sw = g->s[AW],
				dh = g->d[AH],
				dw = g->d[AW],
				kw = j->s->kw,
				ix = ox * sw - g->pb[AW];
	nv_t		acc[DW_PX];

	for (int p = 0; p < DW_PX; p++)
		acc[p] = nv_zero();
	for (int64_t ky = ky0; ky < ky1; ky++)
	{
		const float *xr = xp + (iy + ky * dh) * w * BLK;

		for (int64_t kx = 0; kx < kw; kx++)
		{
			nv_t		wv = nv_load_aligned(wb + (ky * kw + kx) * BLK);
			int64_t		at = ix + kx * dw;

#pragma GCC unroll 8
			for (int p = 0; p < DW_PX; p++)
				if (p < n && (uint64_t) (at + p * sw) < (uint64_t) w)
					acc[p] = nv_fmadd(nv_load(xr + (at + p * sw) * BLK), wv, acc[p]);
		}
	}
	for (int p = 0; p < n; p++)
		dw_finish(j, e, acc[p], off + p);
}

/* rows (image, block, output row) in [begin, end) */
__attribute__((target(NCHWC_TARGET)))
static void
dw_task(void *arg, int64_t begin, int64_t end)
{
	const dw_job *j = arg;
	const dw_state *s = j->s;
	const nn_geom *g = j->g;
	int64_t		h = g->in[AH],
				w = g->in[AW],
				oh = g->out[AH],
				ow = g->out[AW];

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
		dw_epilogue e;

		dw_epilogue_init(&e, j, b);
		nn_nchwc_tap_range(iy, g->d[AH], s->kh, h, &ky0, &ky1);
		for (int64_t ox = 0; ox < ow;)
		{
			int64_t		off = (plane * oh + oy) * ow + ox;

			if (ox >= j->ow_lo && ox + DW_PX <= j->ow_hi)
			{
				int64_t		groups = (j->ow_hi - ox) / DW_PX;

				if (s->kh == 3 && s->kw == 3 && ky0 == 0 && ky1 == 3)
					dw_groups(j, &e, xp, wb, iy, 0, 3, 3, ox, groups, off);
				else
					dw_groups(j, &e, xp, wb, iy, ky0, ky1, s->kw, ox, groups, off);
				ox += groups * DW_PX;
			}
			else
			{
				int64_t		n = ow - ox < DW_PX ? ow - ox : DW_PX;

				dw_edge(j, &e, xp, wb, iy, ky0, ky1, ox, n, off);
				ox += n;
			}
		}
	}
}

/* the blocked depthwise convolution of state s (prepared in this block size: the caller checked) */
ox_code
NCHWC_FN(depthwise_run) (ox_kernel_ctx *ctx)
{
	const dw_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *z = ox_in_tensor(ctx, 3);
	nn_conv_shape cs;
	dw_job		j;
	ox_tensor  *y;
	float	   *bias;

	OX_TRY(nn_nchwc_conv_begin(ctx, "DepthwiseConv", BLK, &s->win, s->c, s->c, s->cb, s->c, s->w_data, false,
							   &s->bias, &cs, &y, &bias));
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
	nn_nchwc_bias_done(&s->bias, bias);
	return OX_OK;
}
