/*
 * conv_nchwc_group_kernels.h
 *	  onnx_pg.nchwc GroupConv: a 2-D convolution whose groups are at most
 *	  a block, cg = C / group channels in and out (M = C) with cg dividing
 *	  the block (ResNeXt's 3x3 layers of 4, 8 and 16 channels a group,
 *	  RegNet's of 8), on channel-blocked tensors [N, C/BLK, H, W, BLK].  A
 *	  template like conv_nchwc_dw_kernels.h, whose job, epilogue and state it
 *	  shares (included after it).
 *
 * A block holds BLK / cg whole groups in its lanes, in and out, so output
 * lane l of a block is the sum over taps and over j < cg of input lane
 * (l / cg) cg + j times W[o, j, tap].  Per tap that is cg FMAs on full
 * vectors: the input vector with lane (l / cg) cg + j moved into lane l
 * (nv_group_lane: one shuffle) times the weights of input j of every
 * lane's group.  Every lane's product is one the convolution needs.
 * Before, the layout pass left these layers in NCHW with a reorder on each
 * side (a group is narrower than a block, which the blocked Conv needs),
 * and their GEMM per group had 4 or 8 rows against an 8-row micro-kernel:
 * ResNeXt-50's three 3x3 layers at 56x56 ran at 1.3x onnxruntime's time,
 * RegNetY-400MF's grouped layers at 1.1x-1.3x, plus 65 reorders.
 *
 * A row's outputs go GC_PX at a time.  With a kernel 3 wide, dilation 1 and
 * horizontal stride 1 or 2 (the layers the pass converts), gc_pixels loads
 * each input pixel of the group's span once, shuffles it once per j and
 * feeds every output and tap that reads it: at stride 1, 10 shuffles for 24
 * FMAs of a row of taps.  Its taps outside the row are skipped by a test
 * per input pixel, so the row's ends take the same path.  Groups of a
 * whole block (16 channels with AVX-512: ResNeXt's 14x14 stage; 8 with
 * AVX2: RegNet's) broadcast each channel from memory instead of a shuffle.
 * Other kernels go an output at a time, tap by tap (gc_pixel).  Both add
 * an output's products in the same order, so its bits do not depend on
 * the path.
 */
#define GC_PX 8

typedef nn_nchwc_dw_state gc_state;

/* s (window and activation parsed) for W [C, cg, kh, kw]: the weights packed as [cb][kh][kw][cg][BLK] */
ox_code
NCHWC_FN(group_prepare) (ox_prepare_ctx *pc, gc_state *s, const ox_tensor *w)
{
	const float *src = w->data;
	int64_t		taps;

	s->blk = BLK;
	s->c = w->dims[0];
	s->cg = w->dims[1];
	s->cb = (s->c + BLK - 1) / BLK;
	s->kh = w->dims[2];
	s->kw = w->dims[3];
	s->w_data = w->data;
	taps = s->kh * s->kw;
	OX_TRY(nn_nchwc_prepare_bias(pc, "GroupConv", s->c, s->cb * BLK, &s->bias));
	if (!(s->w = ox_aligned_alloc(sizeof(float) * (size_t) (s->cb * taps * s->cg * BLK))))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "onnx_pg.nchwc GroupConv: could not allocate packed weights");
	for (int64_t b = 0; b < s->cb; b++)
		for (int64_t t = 0; t < taps; t++)
			for (int64_t j = 0; j < s->cg; j++)
				for (int64_t l = 0; l < BLK; l++)
				{
					int64_t		o = b * BLK + l;

					s->w[((b * taps + t) * s->cg + j) * BLK + l] =
						o < s->c ? src[(o * s->cg + j) * taps + t] : 0.0f;
				}
	ox_prepare_releasable(pc, 1);
	return OX_OK;
}

/*
 * np (at most GC_PX) outputs of a row from ox, a kernel kw wide (at most
 * 3) at horizontal stride sw and dilation 1: for each of rows [ky0, ky1),
 * the span of input pixels they read, each loaded, shuffled cg ways and
 * multiplied into the sums of the outputs and taps that read it; pixels
 * outside the row are skipped (the padding's products are zero).  Groups
 * of a whole block go channel by channel instead, each channel's kw weight
 * vectors held in registers and each pixel's value of it broadcast from
 * memory: a weight vector loaded for every multiply-add (the shuffles'
 * order) kept the loads, not the multiply-adds, busy, and ResNeXt's 14x14
 * stage took 1.2x onnxruntime's time.  Always inlined with constant np,
 * kw, sw and cg, so that the loops unroll into straight code with np
 * independent sums.
 */
__attribute__((target(NCHWC_TARGET)))
static inline __attribute__((always_inline)) void
gc_pixels(const dw_job *j, const dw_epilogue *e, const float *xp, const float *wb, int64_t iy, int64_t ky0,
		  int64_t ky1, const int kw, const int sw, const int cg, int64_t ox, const int np, int64_t off)
{
	const nn_geom *g = j->g;
	int64_t		w = g->in[AW],
				dh = g->d[AH],
				ix = ox * sw - g->pb[AW];
	const int	span = (np - 1) * sw + kw;
	nv_t		acc[GC_PX];

	for (int p = 0; p < np; p++)
		acc[p] = nv_zero();
	for (int64_t ky = ky0; ky < ky1; ky++)
	{
		const float *xr = xp + ((iy + ky * dh) * w + ix) * BLK;
		const float *wr = wb + ky * kw * cg * BLK;

		if (cg == BLK)
		{
			/* each channel's kw weight vectors in registers, its broadcasts fed to them */
#pragma GCC unroll 16
			for (int c = 0; c < cg; c++)
			{
				nv_t		wv[3];

#pragma GCC unroll 3
				for (int kx = 0; kx < kw; kx++)
					wv[kx] = nv_load_aligned(wr + (kx * cg + c) * BLK);
#pragma GCC unroll 17
				for (int q = 0; q < span; q++)
				{
					nv_t		v;

					if ((uint64_t) (ix + q) >= (uint64_t) w)
						continue;
					v = nv_set1(xr[q * BLK + c]);
#pragma GCC unroll 3
					for (int kx = 0; kx < kw; kx++)
					{
						int			d = q - kx;

						if (d >= 0 && d % sw == 0 && d / sw < np)
							acc[d / sw] = nv_fmadd(v, wv[kx], acc[d / sw]);
					}
				}
			}
			continue;
		}
#pragma GCC unroll 17
		for (int q = 0; q < span; q++)
		{
			nv_t		x;

			if ((uint64_t) (ix + q) >= (uint64_t) w)
				continue;
			x = nv_load(xr + q * BLK);
#pragma GCC unroll 16
			for (int c = 0; c < cg; c++)
			{
				nv_t		v = nv_group_lane(x, cg, c);

#pragma GCC unroll 3
				for (int kx = 0; kx < kw; kx++)
				{
					int			d = q - kx;

					if (d >= 0 && d % sw == 0 && d / sw < np)
						acc[d / sw] = nv_fmadd(v, nv_load_aligned(wr + (kx * cg + c) * BLK), acc[d / sw]);
				}
			}
		}
	}
	for (int p = 0; p < np; p++)
		dw_finish(j, e, acc[p], off + p);
}

#define GC_CASE(N) \
	case N: \
		gc_pixels(j, e, xp, wb, iy, ky0, ky1, kw, sw, cg, ox, N, off); \
		break

/* a row's ow outputs in groups of GC_PX and a shorter last one, gc_pixels' constants fixed */
__attribute__((target(NCHWC_TARGET)))
static inline __attribute__((always_inline)) void
gc_row(const dw_job *j, const dw_epilogue *e, const float *xp, const float *wb, int64_t iy, int64_t ky0,
	   int64_t ky1, const int kw, const int sw, const int cg, int64_t ow, int64_t off)
{
	for (int64_t ox = 0; ox < ow; ox += GC_PX, off += GC_PX)
	{
		switch (ow - ox < GC_PX ? ow - ox : GC_PX)
		{
				NCHWC_SIZE_CASES(GC_CASE);
			default:
				break;
		}
	}
}

/*
 * Output ox of a row, any kernel, stride and dilation: tap by tap over
 * those inside the input, in gc_pixels' order (ky, kx, j; for whole
 * blocks ky, j, kx)
 */
__attribute__((target(NCHWC_TARGET)))
static inline __attribute__((always_inline)) void
gc_pixel(const dw_job *j, const dw_epilogue *e, const float *xp, const float *wb, int64_t iy, int64_t ky0,
		 int64_t ky1, const int cg, int64_t ox, int64_t off)
{
	const gc_state *s = j->s;
	const nn_geom *g = j->g;
	int64_t		w = g->in[AW],
				ix = ox * g->s[AW] - g->pb[AW],
				kx0,
				kx1;
	nv_t		acc = nv_zero();

	nn_nchwc_tap_range(ix, g->d[AW], s->kw, w, &kx0, &kx1);
	for (int64_t ky = ky0; ky < ky1; ky++)
	{
		const float *xr = xp + ((iy + ky * g->d[AH]) * w + ix) * BLK;

		if (cg == BLK)
		{
			/* gc_pixels' order for whole blocks: channel, then tap */
			for (int c = 0; c < cg; c++)
				for (int64_t kx = kx0; kx < kx1; kx++)
					acc = nv_fmadd(nv_set1(xr[kx * g->d[AW] * BLK + c]),
								   nv_load_aligned(wb + ((ky * s->kw + kx) * cg + c) * BLK), acc);
			continue;
		}
		for (int64_t kx = kx0; kx < kx1; kx++)
		{
			nv_t		x = nv_load(xr + kx * g->d[AW] * BLK);
			const float *wt = wb + (ky * s->kw + kx) * cg * BLK;

#pragma GCC unroll 16
			for (int c = 0; c < cg; c++)
				acc = nv_fmadd(nv_group_lane(x, cg, c), nv_load_aligned(wt + c * BLK), acc);
		}
	}
	dw_finish(j, e, acc, off);
}

/* one output row of plane (image, block b), from input row iy, taps [ky0, ky1), with cg a constant */
__attribute__((target(NCHWC_TARGET)))
static inline __attribute__((always_inline)) void
gc_one_row(const dw_job *j, const dw_epilogue *e, const float *xp, const float *wb, int64_t iy, int64_t ky0,
		   int64_t ky1, const int cg, int64_t off)
{
	const nn_geom *g = j->g;
	int64_t		ow = g->out[AW];

	if (j->s->kw == 3 && g->d[AW] == 1 && g->s[AW] == 1)
		gc_row(j, e, xp, wb, iy, ky0, ky1, 3, 1, cg, ow, off);
	else if (j->s->kw == 3 && g->d[AW] == 1 && g->s[AW] == 2)
		gc_row(j, e, xp, wb, iy, ky0, ky1, 3, 2, cg, ow, off);
	else
		for (int64_t ox = 0; ox < ow; ox++)
			gc_pixel(j, e, xp, wb, iy, ky0, ky1, cg, ox, off + ox);
}

/* output rows (image, block, row) in [begin, end), or (image, row, block) with rows_first */
__attribute__((target(NCHWC_TARGET)))
static void
gc_task(void *arg, int64_t begin, int64_t end)
{
	const dw_job *j = arg;
	const gc_state *s = j->s;
	const nn_geom *g = j->g;
	int64_t		h = g->in[AH],
				w = g->in[AW],
				oh = g->out[AH],
				ow = g->out[AW],
				taps = s->kh * s->kw;
	dw_epilogue e;
	int64_t		b_init = -1;

	for (int64_t t = begin; t < end; t++)
	{
		int64_t		oy = j->rows_first ? t / s->cb % oh : t % oh,
					plane = j->rows_first ? t / (s->cb * oh) * s->cb + t % s->cb : t / oh,
					b = plane % s->cb,
					iy = oy * g->s[AH] - g->pb[AH],
					off = (plane * oh + oy) * ow,
					ky0,
					ky1;
		const float *xp = j->x + plane * h * w * BLK;
		const float *wb = s->w + b * taps * s->cg * BLK;

		if (b != b_init)
		{
			dw_epilogue_init(&e, j, b);
			b_init = b;
		}
		nn_nchwc_tap_range(iy, g->d[AH], s->kh, h, &ky0, &ky1);
		switch (s->cg)
		{
			case 2:
				gc_one_row(j, &e, xp, wb, iy, ky0, ky1, 2, off);
				break;
			case 4:
				gc_one_row(j, &e, xp, wb, iy, ky0, ky1, 4, off);
				break;
			case 8:
				gc_one_row(j, &e, xp, wb, iy, ky0, ky1, 8, off);
				break;
#if BLK == 16
			case 16:
				gc_one_row(j, &e, xp, wb, iy, ky0, ky1, 16, off);
				break;
#endif
			default:
				break;
		}
	}
}

/* the blocked small-group convolution of state s (prepared in this block size: the caller checked) */
ox_code
NCHWC_FN(group_run) (ox_kernel_ctx *ctx)
{
	const gc_state *s = ctx->state;
	nn_conv_shape cs;
	dw_job		j;
	float	   *bias;

	OX_TRY(dw_job_begin(ctx, "GroupConv", &j, &cs, &bias));
	if (!bias)
		return OX_OK;
	ox_parallel_for(ctx, cs.n * s->cb * cs.g.out[AH], 1, gc_task, &j);
	nn_nchwc_bias_done(&s->bias, bias);
	return OX_OK;
}
