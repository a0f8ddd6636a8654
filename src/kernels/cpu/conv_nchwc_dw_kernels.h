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
#define DW_MASKED_KW 7		/* kernel widths whose edge masks dw_pixels_masked makes once */

typedef nn_nchwc_dw_state dw_state;

/* s (window and activation parsed) for W [C, 1, kh, kw]: the weights packed in blocks of BLK */
ox_code
NCHWC_FN(depthwise_prepare) (ox_prepare_ctx *pc, dw_state *s, const ox_tensor *w)
{
	const float *src;

	s->blk = BLK;
	s->c = w->dims[0];
	s->cg = 1;
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
	int64_t		span_lo,
				span_hi;		/* outputs the groups cover: [ow_lo, ow_hi) and the cut ends */
	nv_keep_t	keep_first,		/* none: output span_lo lacks its first tap (3x3) */
				keep_last;		/* none: output span_hi - 1 lacks its last tap (3x3) */
	bool		rows_first;		/* tasks (image, row, block), else (image, block, row) */
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
 * np (at most DW_PX) outputs from ox, every tap of rows [ky0, ky1) inside
 * but, with cuts, the first output's first tap of each row unless
 * keep_first and the last output's last one unless keep_last (a row's
 * ends under a padding of one: keep none or all lanes): each tap's weight
 * vector loaded once, np FMAs on it.  A cut tap is a masked FMA that
 * leaves its sum as it is and reads nothing.  Always inlined with
 * constant np and cuts (and kw = 3 for the 3x3 layers), so that the pixel
 * loop unrolls into np independent accumulators.  The taps of an output go
 * in the same order on every path (dw_pixels_masked's too), so its bits do not
 * depend on the path.  With rows (dw_row_padded's ring, xp unused), input
 * row iy + ky dh is rows[ky], from its padding's start.
 */
__attribute__((target(NCHWC_TARGET)))
static inline __attribute__((always_inline)) void
dw_pixels(const dw_job *j, const dw_epilogue *e, const float *xp, const float *const *rows, const float *wb,
		  int64_t iy, int64_t ky0, int64_t ky1, const int64_t kw, const int64_t sw, const int64_t dw, int64_t ox,
		  const int np, const bool cuts, nv_keep_t keep_first, nv_keep_t keep_last, int64_t off)
{
	const nn_geom *g = j->g;
	int64_t		w = g->in[AW],
				dh = g->d[AH],
				ix = ox * sw - g->pb[AW];
	nv_t		acc[DW_PX];

	for (int p = 0; p < np; p++)
		acc[p] = nv_zero();
	for (int64_t ky = ky0; ky < ky1; ky++)
	{
		const float *xr = rows ? rows[ky] + ox * sw * BLK : xp + ((iy + ky * dh) * w + ix) * BLK;

#pragma GCC unroll 5
		for (int64_t kx = 0; kx < kw; kx++)
		{
			nv_t		wv = nv_load_aligned(wb + (ky * kw + kx) * BLK);
			const float *xq = xr + kx * dw * BLK;

#pragma GCC unroll 8
			for (int p = 0; p < np; p++)
			{
				bool		first = cuts && p == 0 && kx == 0,
							last = cuts && p == np - 1 && kx == kw - 1;

				/* (cuts only with kw = 3: no tap is both an output's first and its last) */
				if (first || last)
					acc[p] = nv_fmadd_kept(first ? keep_first : keep_last, xq + p * sw * BLK, wv, acc[p]);
				else
					acc[p] = nv_fmadd(nv_load(xq + p * sw * BLK), wv, acc[p]);
			}
		}
	}
	for (int p = 0; p < np; p++)
		dw_finish(j, e, acc[p], off + p);
}

#define DW_GROUP_CASE(N) \
	case N: \
		dw_pixels(j, e, xp, NULL, wb, iy, ky0, ky1, kw, sw, dw, ox, N, cuts, keep_first, keep_last, off); \
		break

/* one group of n (1 to DW_PX) outputs from ox: dw_pixels with n made a constant */
__attribute__((target(NCHWC_TARGET)))
static inline __attribute__((always_inline)) void
dw_group(const dw_job *j, const dw_epilogue *e, const float *xp, const float *wb, int64_t iy, int64_t ky0,
		 int64_t ky1, const int64_t kw, const int64_t sw, const int64_t dw, int64_t ox, int64_t n,
		 const bool cuts, nv_keep_t keep_first, nv_keep_t keep_last, int64_t off)
{
	switch (n)
	{
			NCHWC_SIZE_CASES(DW_GROUP_CASE);
		default:
			break;
	}
}

/*
 * The n outputs of a row from ox that the groups take, in groups of DW_PX
 * and a shorter last one; with cuts, the span's first and last outputs as
 * dw_pixels says (the masks of the groups between keep every tap).  One
 * call of dw_group for all: the switch on a group's size is predicted, and
 * each size is compiled once per call of dw_span.  Before, only whole
 * groups of outputs with every tap inside went so, and a group holding an
 * edge output went pixel by pixel under a test per tap with its sums in
 * memory: every output of a row of 14 or 7 (MobileNet-v2's last ten 3x3
 * layers) and 16 of every 56, about half of the depthwise layers' time.
 */
__attribute__((target(NCHWC_TARGET)))
static inline __attribute__((always_inline)) void
dw_span(const dw_job *j, const dw_epilogue *e, const float *xp, const float *wb, int64_t iy, int64_t ky0,
		int64_t ky1, const int64_t kw, const int64_t sw, const int64_t dw, int64_t ox, int64_t n,
		const bool cuts, int64_t off)
{
	nv_keep_t	keep_first = j->keep_first;

	while (n > 0)
	{
		int64_t		np = n < DW_PX ? n : DW_PX;

		dw_group(j, e, xp, wb, iy, ky0, ky1, kw, sw, dw, ox, np, cuts, keep_first,
				 np == n ? j->keep_last : nv_keep_all(), off);
		keep_first = nv_keep_all();
		ox += np;
		off += np;
		n -= np;
	}
}

/*
 * dw_pixels for np outputs from ox some of which have taps outside the
 * row (a kernel wider than 3, a padding over one: MNASNet's 5x5 layers,
 * 4 such outputs in rows of 7 and 14): every tap a masked FMA that reads
 * nothing and leaves its sum as it is where the tap is outside, the taps
 * in dw_pixels' order (so the same bits), np independent sums.  One output
 * at a time, its taps made one chain of dependent FMAs: MNASNet's 5x5
 * layers at 7x7 took 1.25x onnxruntime's time.
 */
__attribute__((target(NCHWC_TARGET)))
static inline __attribute__((always_inline)) void
dw_pixels_masked(const dw_job *j, const dw_epilogue *e, const float *xp, const float *wb, int64_t iy,
				 int64_t ky0, int64_t ky1, const int64_t kw, const int64_t sw, const int64_t dw, int64_t ox,
				 const int np, int64_t off)
{
	const nn_geom *g = j->g;
	int64_t		w = g->in[AW],
				dh = g->d[AH],
				ix = ox * sw - g->pb[AW];
	nv_t		acc[DW_PX];
	/* which taps are inside, the same on every row: made once */
	nv_keep_t	inside[DW_MASKED_KW][DW_PX];

	for (int64_t kx = 0; kx < kw && kx < DW_MASKED_KW; kx++)
#pragma GCC unroll 8
		for (int p = 0; p < np; p++)
			inside[kx][p] = (uint64_t) (ix + p * sw + kx * dw) < (uint64_t) w ? nv_keep_all() : nv_keep_none();
	for (int p = 0; p < np; p++)
		acc[p] = nv_zero();
	for (int64_t ky = ky0; ky < ky1; ky++)
	{
		const float *xr = xp + ((iy + ky * dh) * w + ix) * BLK;

#pragma GCC unroll 5
		for (int64_t kx = 0; kx < kw; kx++)
		{
			nv_t		wv = nv_load_aligned(wb + (ky * kw + kx) * BLK);

#pragma GCC unroll 8
			for (int p = 0; p < np; p++)
			{
				int64_t		at = p * sw + kx * dw;
				nv_keep_t	k = kx < DW_MASKED_KW ? inside[kx][p]
					: (uint64_t) (ix + at) < (uint64_t) w ? nv_keep_all() : nv_keep_none();

				acc[p] = nv_fmadd_kept(k, xr + at * BLK, wv, acc[p]);
			}
		}
	}
	for (int p = 0; p < np; p++)
		dw_finish(j, e, acc[p], off + p);
}

#define DW_MASKED_CASE(N) \
	case N: \
		dw_pixels_masked(j, e, xp, wb, iy, ky0, ky1, kw, sw, dw, ox, N, off); \
		break

/*
 * A row whose ends the groups' span leaves out: all its outputs in groups
 * of DW_PX from the first, those holding an output with a tap outside the
 * row masked (dw_pixels_masked; a span's cut end among them), the others
 * as dw_group runs them.
 */
__attribute__((target(NCHWC_TARGET)))
static inline __attribute__((always_inline)) void
dw_row_masked(const dw_job *j, const dw_epilogue *e, const float *xp, const float *wb, int64_t iy, int64_t ky0,
			  int64_t ky1, const int64_t kw, const int64_t sw, const int64_t dw, int64_t ow, int64_t off)
{
	for (int64_t ox = 0; ox < ow; ox += DW_PX, off += DW_PX)
	{
		int64_t		np = ow - ox < DW_PX ? ow - ox : DW_PX;

		if (ox >= j->ow_lo && ox + np <= j->ow_hi)
		{
			dw_group(j, e, xp, wb, iy, ky0, ky1, kw, sw, dw, ox, np, false, nv_keep_all(), nv_keep_all(), off);
			continue;
		}
		switch (np)
		{
				NCHWC_SIZE_CASES(DW_MASKED_CASE);
			default:
				break;
		}
	}
}

/*
 * The rows of dw_row_masked read from copies padded with zeros instead:
 * every output of the row in unmasked groups, as dw_group runs the inside
 * ones.  Masked, a 5x5 layer's row of 14 needed 5 x 8 tap masks a group,
 * more than the mask registers, and a third of its instructions moved
 * masks (MNASNet's 5x5 layers at 14x14 and 7x7: 1.4x onnxruntime's time,
 * and 1.9x at stride 2).  The copies are a ring of the last
 * (kh - 1) dh + 1 input rows of the plane, each row pl + w + pr pixels, so
 * that consecutive output rows of a plane copy each input row once.  A tap
 * in the padding adds 0 x w, which leaves a sum as it is (up to the sign
 * of a zero sum, and a NaN where w is infinite, as the padding of the
 * operator's definition gives).  Without room for the ring (a kernel
 * taller than DW_PAD_MAX_KH, rows past DW_PAD_MAX_BYTES, no memory) the
 * rows stay masked.
 */
#define DW_PAD_MAX_KH 16
#define DW_PAD_MAX_BYTES (256 * 1024)

typedef struct dw_pad_ring
{
	float	   *rows;			/* nslots rows of pwid pixels */
	int64_t		nslots,
				pwid,
				pl,				/* zero pixels before a row's first */
				plane,			/* the plane whose rows [lo, hi) are in their slots, -1 none */
				lo,
				hi;
} dw_pad_ring;

static __thread float *tls_dw_ring;
static __thread size_t tls_dw_ring_len;

static bool
dw_pad_ring_init(const dw_job *j, dw_pad_ring *r)
{
	const nn_geom *g = j->g;
	int64_t		w = g->in[AW],
				pl = g->pb[AW],
				last = (g->out[AW] - 1) * g->s[AW] - pl + (j->s->kw - 1) * g->d[AW],
				pr = last >= w ? last - (w - 1) : 0;
	double		bytes;

	r->rows = NULL;
	if (j->s->kh > DW_PAD_MAX_KH || pl < 0 || g->d[AH] < 1)
		return false;
	r->nslots = (j->s->kh - 1) * g->d[AH] + 1;
	r->pwid = pl + w + pr;
	r->pl = pl;
	bytes = (double) r->nslots * (double) r->pwid * BLK * sizeof(float);
	if (bytes > DW_PAD_MAX_BYTES)
		return false;
	r->rows = ox_aligned_grow(&tls_dw_ring, &tls_dw_ring_len, (size_t) (r->nslots * r->pwid * BLK));
	r->plane = -1;
	r->lo = r->hi = 0;
	return r->rows != NULL;
}

/* input rows [a, b) of plane (its data at xp) in their slots of the ring */
static void
dw_pad_fill(dw_pad_ring *r, const dw_job *j, int64_t plane, const float *xp, int64_t a, int64_t b)
{
	int64_t		w = j->g->in[AW];

	if (r->plane != plane || a < r->lo || a > r->hi)
	{
		r->plane = plane;
		r->lo = r->hi = a;
	}
	for (int64_t row = r->hi > a ? r->hi : a; row < b; row++)
	{
		float	   *dst = r->rows + row % r->nslots * r->pwid * BLK;

		memset(dst, 0, sizeof(float) * (size_t) (r->pl * BLK));
		memcpy(dst + r->pl * BLK, xp + row * w * BLK, sizeof(float) * (size_t) (w * BLK));
		memset(dst + (r->pl + w) * BLK, 0, sizeof(float) * (size_t) ((r->pwid - r->pl - w) * BLK));
	}
	if (b > r->hi)
		r->hi = b;
	if (r->lo < r->hi - r->nslots)
		r->lo = r->hi - r->nslots;
}

#define DW_PADDED_CASE(N) \
	case N: \
		dw_pixels(j, e, NULL, rows, wb, 0, ky0, ky1, kw, sw, dw, ox, N, false, nv_keep_all(), nv_keep_all(), off); \
		break

/* a row's outputs over padded rows, in groups of DW_PX and a shorter last one */
__attribute__((target(NCHWC_TARGET)))
static inline __attribute__((always_inline)) void
dw_row_padded(const dw_job *j, const dw_epilogue *e, const float *wb, const float *const *rows, int64_t ky0,
			  int64_t ky1, const int64_t kw, const int64_t sw, const int64_t dw, int64_t ow, int64_t off)
{
	for (int64_t ox = 0; ox < ow; ox += DW_PX, off += DW_PX)
	{
		switch (ow - ox < DW_PX ? ow - ox : DW_PX)
		{
				NCHWC_SIZE_CASES(DW_PADDED_CASE);
			default:
				break;
		}
	}
}

/*
 * One output row (from input row iy, taps [ky0, ky1)) over the ring: its
 * input rows copied in, then dw_row_padded.  Not inlined into dw_task, so
 * that the 3x3 rows' code there is compiled as it was (MobileNet-v2 ran
 * 1.02x the time with this inlined).
 */
__attribute__((target(NCHWC_TARGET), noinline))
static void
dw_row_from_ring(const dw_job *j, const dw_epilogue *e, dw_pad_ring *ring, int64_t plane, const float *xp,
				 const float *wb, int64_t iy, int64_t ky0, int64_t ky1, int64_t row)
{
	const dw_state *s = j->s;
	const nn_geom *g = j->g;
	int64_t		sw = g->s[AW],
				dw = g->d[AW],
				dh = g->d[AH],
				ow = g->out[AW];
	const float *rows[DW_PAD_MAX_KH];
	bool		full5x5 = s->kh == 5 && s->kw == 5 && ky0 == 0 && ky1 == 5 && dw == 1;

	if (ky0 < ky1)
		dw_pad_fill(ring, j, plane, xp, iy + ky0 * dh, iy + (ky1 - 1) * dh + 1);
	for (int64_t ky = ky0; ky < ky1; ky++)
		rows[ky] = ring->rows + (iy + ky * dh) % ring->nslots * ring->pwid * BLK;
	/* MNASNet's 5x5 layers with constant offsets */
	if (full5x5 && sw == 1)
		dw_row_padded(j, e, wb, rows, 0, 5, 5, 1, 1, ow, row);
	else if (full5x5 && sw == 2)
		dw_row_padded(j, e, wb, rows, 0, 5, 5, 2, 1, ow, row);
	else
		dw_row_padded(j, e, wb, rows, ky0, ky1, s->kw, sw, dw, ow, row);
}

/* rows (image, block, output row), or (image, output row, block), in [begin, end) */
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
				ow = g->out[AW],
				sw = g->s[AW],
				dw = g->d[AW];

	/*
	 * the row's place kept from one row to the next (divisions and the
	 * epilogue's set-up once per task and plane: a row of 7 outputs is
	 * about 60 multiply-adds)
	 */
	int64_t		oy = j->rows_first ? begin / s->cb % oh : begin % oh,
				plane = j->rows_first ? begin / (s->cb * oh) * s->cb + begin % s->cb : begin / oh,
				b = plane % s->cb;
	dw_epilogue e;
	dw_pad_ring ring = {0};
	/* rows with outputs whose taps leave them (the groups' span leaves out their ends) */
	bool		edges = j->span_lo > 0 || j->span_hi < ow,
				padded = edges && dw_pad_ring_init(j, &ring);

	dw_epilogue_init(&e, j, b);
	for (int64_t t = begin; t < end; t++)
	{
		const float *xp = j->x + plane * h * w * BLK;
		const float *wb = s->w + b * s->kh * s->kw * BLK;
		int64_t		iy = oy * g->s[AH] - g->pb[AH],
					row = (plane * oh + oy) * ow;
		int64_t		ky0,
					ky1;

		nn_nchwc_tap_range(iy, g->d[AH], s->kh, h, &ky0, &ky1);

		if (padded)
			dw_row_from_ring(j, &e, &ring, plane, xp, wb, iy, ky0, ky1, row);
		else if (edges)
		{
			/* MNASNet's 5x5 layers with constant offsets */
			if (s->kh == 5 && s->kw == 5 && ky0 == 0 && ky1 == 5 && sw == 1 && dw == 1)
				dw_row_masked(j, &e, xp, wb, iy, 0, 5, 5, 1, 1, ow, row);
			else if (s->kh == 5 && s->kw == 5 && ky0 == 0 && ky1 == 5 && sw == 2 && dw == 1)
				dw_row_masked(j, &e, xp, wb, iy, 0, 5, 5, 2, 1, ow, row);
			else
				dw_row_masked(j, &e, xp, wb, iy, ky0, ky1, s->kw, sw, dw, ow, row);
		}
		else
		{
			int64_t		ox = j->span_lo,
						n = j->span_hi - j->span_lo;
			bool		full3x3 = s->kh == 3 && s->kw == 3 && ky0 == 0 && ky1 == 3;

			/* MobileNet's rows (strides 1 and 2) with constant offsets */
			if (full3x3 && sw == 1 && dw == 1)
				dw_span(j, &e, xp, wb, iy, 0, 3, 3, 1, 1, ox, n, true, row + ox);
			else if (full3x3 && sw == 2 && dw == 1)
				dw_span(j, &e, xp, wb, iy, 0, 3, 3, 2, 1, ox, n, true, row + ox);
			else if (s->kw == 3)
				dw_span(j, &e, xp, wb, iy, ky0, ky1, 3, sw, dw, ox, n, true, row + ox);
			else
				dw_span(j, &e, xp, wb, iy, ky0, ky1, s->kw, sw, dw, ox, n, false, row + ox);
		}
		if (j->rows_first)
		{
			/* the next block of the row, or the first of the next row */
			plane++;
			if (++b == s->cb)
			{
				b = 0;
				plane -= s->cb;
				if (++oy == oh)
				{
					oy = 0;
					plane += s->cb;
				}
			}
			dw_epilogue_init(&e, j, b);
		}
		else if (++oy == oh)
		{
			oy = 0;
			plane++;
			if (++b == s->cb)
				b = 0;
			dw_epilogue_init(&e, j, b);
		}
	}
}

/*
 * The outputs the groups take (dw_span): those with every tap inside and,
 * for a kernel 3 wide, a row's first output when it lacks only its first
 * tap and its last when it lacks only its last (a padding of one), which
 * dw_pixels cuts by mask.  A row with others goes to dw_row_masked.
 */
__attribute__((target(NCHWC_TARGET)))
static void
dw_span_ends(dw_job *j, int64_t kw, const nn_geom *g)
{
	int64_t		ow = g->out[AW],
				lo,
				hi;

	j->span_lo = j->ow_lo;
	j->span_hi = j->ow_hi;
	j->keep_first = nv_keep_all();
	j->keep_last = nv_keep_all();
	if (kw != 3)
		return;
	nn_nchwc_tap_range(-g->pb[AW], g->d[AW], kw, g->in[AW], &lo, &hi);
	if (j->ow_lo == 1 && lo == 1 && hi == kw)
	{
		j->span_lo = 0;
		j->keep_first = nv_keep_none();
	}
	nn_nchwc_tap_range((ow - 1) * g->s[AW] - g->pb[AW], g->d[AW], kw, g->in[AW], &lo, &hi);
	if (j->ow_hi == ow - 1 && lo == 0 && hi == kw - 1)
	{
		j->span_hi = ow;
		j->keep_last = nv_keep_none();
	}
}

/*
 * Planes (image and block) [begin, end) of a 1x1 stride-1 unpadded
 * DepthwiseConv, a per-channel affine map (a BatchNormalization the layout
 * pass turned into one: DenseNet's): its pixels one after the other, with
 * dw_pixels' product and dw_finish's epilogue, so the bits of the general
 * path's, without its row and edge machinery (a pixel's single multiply-add
 * is all the work there is).
 */
__attribute__((target(NCHWC_TARGET)))
static void
dw_pointwise_task(void *arg, int64_t begin, int64_t end)
{
	const dw_job *j = arg;
	int64_t		hw = j->g->out[AH] * j->g->out[AW];

	for (int64_t plane = begin; plane < end; plane++)
	{
		int64_t		b = plane % j->s->cb;
		const float *xp = j->x + plane * hw * BLK;
		nv_t		w = nv_load(j->s->w + b * BLK);
		dw_epilogue e;

		dw_epilogue_init(&e, j, b);
		for (int64_t p = 0; p < hw; p++)
			dw_finish(j, &e, nv_fmadd(nv_load(xp + p * BLK), w, nv_zero()), plane * hw + p);
	}
}

/*
 * The start of a DepthwiseConv's or GroupConv's run (state s of ctx, op
 * its name): X, B and Z checked and Y allocated (nn_nchwc_conv_begin, in
 * groups of s->cg channels), *cs the geometry, *j the job over them with
 * the task order of the convolutions around (rows first on large planes
 * with threads, as conv_run); *bias the padded bias for nn_nchwc_bias_done,
 * or NULL when Y is empty and there is nothing to do
 */
static ox_code
dw_job_begin(ox_kernel_ctx *ctx, const char *op, dw_job *j, nn_conv_shape *cs, float **bias)
{
	const dw_state *s = ctx->state;
	ox_tensor  *y;
	const float *z;

	memset(j, 0, sizeof(*j));
	OX_TRY(nn_nchwc_conv_begin(ctx, op, BLK, &s->win, s->c / s->cg, s->c, s->cb, s->c, s->w_data, false,
							   &s->bias, cs, &y, &z, bias));
	if (!*bias)
		return OX_OK;
	j->s = s;
	j->x = ox_in_tensor(ctx, 0)->data;
	j->z = z;
	j->bias = *bias;
	j->y = y->data;
	j->g = &cs->g;
	j->rows_first = ctx->nthreads > 1 && cs->g.out[AH] * cs->g.out[AW] >= LARGE_PLANE;
	return OX_OK;
}

/* the blocked depthwise convolution of state s (prepared in this block size: the caller checked) */
ox_code
NCHWC_FN(depthwise_run) (ox_kernel_ctx *ctx)
{
	const dw_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	nn_conv_shape cs;
	dw_job		j;
	float	   *bias;

	OX_TRY(dw_job_begin(ctx, "DepthwiseConv", &j, &cs, &bias));
	if (!bias)
		return OX_OK;
	nn_valid_range(cs.g.out[AW], cs.g.s[AW], -cs.g.pb[AW], cs.g.in[AW] - (s->kw - 1) * cs.g.d[AW],
				   &j.ow_lo, &j.ow_hi);
	dw_span_ends(&j, s->kw, &cs.g);
	if (s->kh == 1 && s->kw == 1 && cs.g.s[AH] == 1 && cs.g.s[AW] == 1 && cs.g.pb[AH] == 0 && cs.g.pb[AW] == 0 &&
		cs.g.pe[AH] == 0 && cs.g.pe[AW] == 0)
	{
		int64_t		hw = cs.g.out[AH] * cs.g.out[AW];

		/* a few thousand pixels a task */
		ox_parallel_for(ctx, x->dims[0] * s->cb, hw > 0 && hw < 2048 ? 2048 / hw : 1, dw_pointwise_task, &j);
		nn_nchwc_bias_done(&s->bias, bias);
		return OX_OK;
	}
	ox_parallel_for(ctx, x->dims[0] * s->cb * cs.g.out[AH], 1, dw_task, &j);
	nn_nchwc_bias_done(&s->bias, bias);
	return OX_OK;
}
