/*
 * conv_nchwc_kernels.h
 *	  The channel-blocked kernels of one block size (a template: included by
 *	  conv_nchwc_avx512.c for blocks of 16 and conv_nchwc_avx2.c for blocks of
 *	  8, after conv_nchwc_vec.h): reorders, convolution, pooling.  What the
 *	  operators check and how a call reaches these is in conv_nchwc.c.
 *
 * A blocked tensor holds [N, C, H, W] as [N, ceil(C / BLK), H, W, BLK]: the
 * BLK channels of a block are contiguous at every pixel, and the channels
 * past C are zero.  That is what the convolution below wants: it keeps a
 * tile of up to 4 output blocks by TILE_PX pixels of a row in registers
 * and, per input channel, loads the 4 weight vectors of that channel and
 * broadcasts its value at the pixels straight from the input: no im2col,
 * no panel to pack, whatever the kernel size or stride.  The NCHW GEMM path
 * (conv_gemm.c) must copy its input into slivers for every layer and read
 * them from L2; chains of ResNet-50's 1x1 layers ran 2-11% faster here
 * (interleaved A/B, AVX-512), and whole networks 5-10% (passes/layout_nchwc.c).
 */
#define ROW_CHUNK 96			/* output pixels per task along a row */
#define TASK_PX 256				/* the same, over rows, when weights are read in chunks */
#define L1_WEIGHTS_MAX (128 << 10)	/* a group's weights past which input blocks are chunked (chunk_past) */
/* ... and past which they are on planes of LARGE_PLANE pixels and more */
#define L1_WEIGHTS_LARGE_PLANE (48 << 10)
#define L1_WEIGHTS (32 << 10)	/* a chunk's weights */
/* AVX2's pointwise layers read this many input channels a pass (see prepare) */
#define POINTWISE_CHUNK_IC 128
#define LARGE_PLANE 784
#define TAPS_MAX 49			/* kernels of up to 7x7 taps: conv_job.tap_off */
/* whether the tiles run whole kernel rows from the table (AVX2's, see DEFINE_TILE) */
#define TAP_TABLE (BLK == 8)

typedef nn_nchwc_conv_state nchwc_conv_state;

/* ---- reorders ----------------------------------------------------------- */

typedef struct reorder_job
{
	const float *x;
	float	   *y;
	int64_t		c;
	int64_t		cb;
	int64_t		hw;
	bool		to_blocked;		/* NCHW -> blocked, else the inverse */
} reorder_job;

/*
 * Blocks (n, cb) in [begin, end): BLK channel rows of hw pixels to hw x BLK
 * (the padding channels zero), or back (the padding dropped), BLK pixels at
 * a time through a register transpose.  A row's last pixels (fewer than
 * BLK) go through a mask.
 */
__attribute__((target(NCHWC_TARGET)))
static void
reorder_task(void *arg, int64_t begin, int64_t end)
{
	const reorder_job *j = arg;

	for (int64_t t = begin; t < end; t++)
	{
		int64_t		n = t / j->cb,
					c0 = (t % j->cb) * BLK;
		int64_t		rows_at = (n * j->c + c0) * j->hw,
					blocks_at = t * j->hw * BLK;
		int			rows = (int) (j->c - c0 < BLK ? j->c - c0 : BLK);

		for (int64_t p = 0; p < j->hw; p += BLK)
		{
			int			np = (int) (j->hw - p < BLK ? j->hw - p : BLK);
			nv_t		r[BLK];
#if BLK == 16
			__mmask16	m = np == BLK ? (__mmask16) 0xFFFF : (__mmask16) ((1u << np) - 1);
#define LOAD_ROW(at) _mm512_maskz_loadu_ps(m, (at))
#define STORE_ROW(at, v) _mm512_mask_storeu_ps((at), m, (v))
#define TRANSPOSE(r) nn_transpose16(r)
#else
			bool		full = np == BLK;
			__m256i		m = _mm256_castps_si256(nv_keep_first(np));
#define LOAD_ROW(at) nn_load8_part((at), full, m)
#define STORE_ROW(at, v) nn_store8_part((at), full, m, (v))
#define TRANSPOSE(r) nn_transpose8(r)
#endif

			if (j->to_blocked)
			{
				for (int i = 0; i < BLK; i++)
					r[i] = i < rows ? LOAD_ROW(j->x + rows_at + i * j->hw + p) : nv_zero();
				TRANSPOSE(r);
				for (int i = 0; i < np; i++)
					nv_store(j->y + blocks_at + (p + i) * BLK, r[i]);
			}
			else
			{
				for (int i = 0; i < BLK; i++)
					r[i] = i < np ? nv_load(j->x + blocks_at + (p + i) * BLK) : nv_zero();
				TRANSPOSE(r);
				for (int i = 0; i < rows; i++)
					STORE_ROW(j->y + rows_at + i * j->hw + p, r[i]);
			}
#undef LOAD_ROW
#undef STORE_ROW
#undef TRANSPOSE
		}
	}
}

/* X [N, C, H, W] to blocks of BLK (the caller checked that this CPU runs them) */
ox_code
NCHWC_FN(reorder_input_run) (ox_kernel_ctx *ctx)
{
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	reorder_job j;
	int64_t		dims[5];
	ox_tensor  *y;

	if (!x || x->dtype != OX_FLOAT || x->rank != 4)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "onnx_pg.nchwc ReorderInput: X must be a float tensor [N, C, H, W]");
	dims[0] = x->dims[0];
	dims[1] = (x->dims[1] + BLK - 1) / BLK;
	dims[2] = x->dims[2];
	dims[3] = x->dims[3];
	dims[4] = BLK;
	if (!(y = ox_out_tensor(ctx, 0, OX_FLOAT, 5, dims)))
		return ctx->st->code != OX_OK ? ctx->st->code : OX_OUT_OF_MEMORY;
	j.x = x->data;
	j.y = y->data;
	j.c = x->dims[1];
	j.cb = dims[1];
	j.hw = x->dims[2] * x->dims[3];
	j.to_blocked = true;
	if (j.hw > 0)
		ox_parallel_for(ctx, dims[0] * j.cb, 1, reorder_task, &j);
	return OX_OK;
}

/* blocks of BLK (X checked by the caller, which chose this block from it) back to [N, C, H, W] */
ox_code
NCHWC_FN(reorder_output_run) (ox_kernel_ctx *ctx)
{
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	int64_t		c = ox_attr_int(ctx->node, "channels", -1);
	reorder_job j;
	int64_t		dims[4];
	ox_tensor  *y;

	if (c < 1 || (c + BLK - 1) / BLK != x->dims[1])
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "onnx_pg.nchwc ReorderOutput: channels %lld do not fill the %lld blocks of X",
					   (long long) c, (long long) x->dims[1]);
	dims[0] = x->dims[0];
	dims[1] = c;
	dims[2] = x->dims[2];
	dims[3] = x->dims[3];
	if (!(y = ox_out_tensor(ctx, 0, OX_FLOAT, 4, dims)))
		return ctx->st->code != OX_OK ? ctx->st->code : OX_OUT_OF_MEMORY;
	j.x = x->data;
	j.y = y->data;
	j.c = c;
	j.cb = x->dims[1];
	j.hw = x->dims[2] * x->dims[3];
	j.to_blocked = false;
	if (j.hw > 0)
		ox_parallel_for(ctx, dims[0] * j.cb, 1, reorder_task, &j);
	return OX_OK;
}

/* ---- convolution -------------------------------------------------------- */

/*
 * The output blocks in og groups of equal size (give or take one), each a
 * register tile's: 9 blocks (144 channels) as 3 + 3 + 3, not 4 + 4 + 1,
 * whose 1-block tile keeps too few multiply-adds in flight for a core with
 * two 512-bit FMA pipes (6 chains of 4-cycle latency).  MobileNet-v2 (24,
 * 96, 144 and 160 channels), 1 thread: 0.966x the time on an AMD EPYC Zen
 * 5, 0.991x in blocks of 8 (interleaved A/B).
 */
static int64_t
group_first(const nchwc_conv_state *s, int64_t g)
{
	int64_t		lg = g % s->ogg,
				base = s->mbg / s->ogg,
				extra = s->mbg % s->ogg;

	return g / s->ogg * s->mbg + lg * base + (lg < extra ? lg : extra);
}

static int64_t
group_blocks(const nchwc_conv_state *s, int64_t g)
{
	return s->mbg / s->ogg + (g % s->ogg < s->mbg % s->ogg ? 1 : 0);
}

static bool
all_ones(const int64_t *v, int n)
{
	for (int i = 0; i < n; i++)
		if (v[i] != 1)
			return false;
	return true;
}

typedef struct pack_job
{
	nchwc_conv_state *s;
	const float *src;			/* W [m, c, kh, kw] */
} pack_job;

/*
 * Groups [begin, end) of the packed weights, d[icb][y][x][ic][o] each: one
 * (icb, y, x) slab of BLK x ns floats at a time (4 KB, in L1), filled
 * output channel by output channel from the BLK filters' taps that channel
 * has there, which are kh x kw floats apart in W (adjacent for 1x1).
 * Filling d in its own order instead read W a float per output channel,
 * ns of them c x kh x kw floats apart: a quarter of ResNet-50's session
 * creation.
 */
static void
pack_groups(void *arg, int64_t begin, int64_t end)
{
	const pack_job *pj = arg;
	nchwc_conv_state *s = pj->s;

	for (int64_t g = begin; g < end; g++)
	{
		int64_t		ns = group_blocks(s, g) * BLK,
					oc0 = group_first(s, g) * BLK,
					taps = s->kh * s->kw;
		float	   *d = s->w + g * s->og_floats;

		for (int64_t icb = 0; icb < s->cb; icb++)
			for (int64_t t = 0; t < taps; t++, d += BLK * ns)
			{
				int64_t		live_ic = s->c - icb * BLK < BLK ? s->c - icb * BLK : BLK;

				for (int64_t o = 0; o < ns; o++)
				{
					int64_t		ic = 0;

					if (oc0 + o < s->m)
					{
						const float *f = pj->src + ((oc0 + o) * s->c + icb * BLK) * taps + t;

						for (; ic < live_ic; ic++)
							d[ic * ns + o] = f[ic * taps];
					}
					for (; ic < BLK; ic++)
						d[ic * ns + o] = 0.0f;
				}
			}
	}
}

/*
 * s (its window, activation and nchw_input parsed) for W [m, c, kh, kw]:
 * the weights packed in this block size; the caller frees s on failure.
 */
ox_code
NCHWC_FN(conv_prepare) (ox_prepare_ctx *pc, nchwc_conv_state *s, const ox_tensor *w)
{
	s->blk = BLK;
	s->m = w->dims[0];
	s->c = w->dims[1];
	s->kh = w->dims[2];
	s->kw = w->dims[3];
	s->mb = (s->m + BLK - 1) / BLK;
	s->cb = (s->c + BLK - 1) / BLK;
	if (s->groups > 1 && (s->nchw_input || s->c % BLK != 0 || s->m % s->groups != 0 || s->m / s->groups % BLK != 0))
		return ox_fail(pc->st, OX_INVALID_MODEL,
					   "onnx_pg.nchwc Conv: with group %lld, W [%lld, %lld, ..] must have whole blocks of %d channels "
					   "per group in and out", (long long) s->groups, (long long) s->m, (long long) s->c, BLK);
	s->mbg = s->mb / s->groups;
	s->ogg = (s->mbg + MAX_NOB - 1) / MAX_NOB;
	s->og = s->groups * s->ogg;
	s->x_cb = s->groups * s->cb;
	s->w_data = w->data;
	if (ox_shape_numel(5, (int64_t[]) {s->og * MAX_NOB * BLK, s->cb * BLK, s->kh, s->kw, 1}) < 0)
		return ox_fail(pc->st, OX_LIMIT_EXCEEDED, "onnx_pg.nchwc Conv: W is too large");
	s->og_floats = (size_t) (s->cb * s->kh * s->kw * BLK) * MAX_NOB * BLK;
	OX_TRY(nn_nchwc_prepare_bias(pc, "Conv", s->m, s->og * MAX_NOB * BLK, &s->bias));
#if BLK == 16
	/* 3x3 stride 1 (ResNet's): a third of the multiplies by Winograd's F(4x4, 3x3) */
	if (s->winograd && s->groups == 1 && s->kh == 3 && s->kw == 3 && !s->nchw_input &&
		all_ones(s->win.strides, s->win.n_strides) && all_ones(s->win.dilations, s->win.n_dilations))
	{
		if (!(s->wino = nn_nchwc_winograd_pack(pc, s->m, s->c, w->data)))
			return pc->st->code;
		return OX_OK;
	}
#else
	(void) all_ones;
#endif

	/*
	 * A group's weights are read once per tile of TILE_PX pixels; past
	 * L1_WEIGHTS_MAX bytes (ResNet's 1x1 layers from 1024 channels, its 3x3
	 * ones from 64) they come from L2 or further every time, so the input
	 * blocks go in chunks whose weights stay in L1 across a task's pixels,
	 * the partial sums kept in Y: ResNet-50's 1024->256 layers at 14x14 ran
	 * 0.85x the time.  Past L1_WEIGHTS_LARGE_PLANE on planes of
	 * LARGE_PLANE pixels and more (chosen at run time): ResNet-50 0.97x,
	 * its 1x1 layers from 256 and 512 channels at 56x56 and 28x28; on
	 * smaller planes (MobileNet's 14x14) storing and reloading the partial
	 * sums cost what the chunks saved.  (Measured with AVX-512's blocks.)
	 */
	{
		int64_t		per_block = (int64_t) (s->og_floats / (size_t) s->cb * sizeof(float));

		s->group_bytes = s->cb * per_block;
		s->ic_chunk = L1_WEIGHTS / per_block;
		s->chunk_past = L1_WEIGHTS_MAX;
		/*
		 * AVX2's pointwise layers of blocked input: chunks of 128 input
		 * channels (16 KB of a group's weights), as soon as there is more
		 * than one, as onnxruntime's MLAS blocks them.  The thresholds above
		 * were measured with AVX-512's 64 output channels a group: with 32
		 * a group, a 1024-channel layer's 128 KB of weights was never
		 * chunked and came from L2 at every tile, 21 bytes a cycle at two
		 * multiply-adds a cycle.  On an Intel core with 48 KB of L1 and
		 * AVX-512 hidden, ResNet-50's 1x1 layers took 0.98-1.03x the time
		 * and the network 0.99x (0.98x on two threads); on the AMD EPYC of
		 * docs/performance_avx2.md (32 KB of L1, which a 32 KB chunk fills,
		 * and half the L2-to-L1 bandwidth) those layers were where onnx_pg
		 * lost most to onnxruntime (1.28-1.56x).
		 */
		if (BLK == 8 && s->kh == 1 && s->kw == 1 && !s->nchw_input)
		{
			s->ic_chunk = POINTWISE_CHUNK_IC / BLK;
			s->chunk_past = s->ic_chunk * per_block;
		}
		if (s->ic_chunk < 1)
			s->ic_chunk = 1;
	}
	if (!(s->w = ox_aligned_alloc_huge(sizeof(float) * s->og_floats * (size_t) s->og)))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "onnx_pg.nchwc Conv: could not allocate packed weights");
	/* Winograd's direct recomputation reads the original: released only here */
	ox_prepare_releasable(pc, 1);
	{
		pack_job	pj = {s, w->data};

		ox_prepare_parallel_for(pc, s->og, 1, pack_groups, &pj);
	}
	return OX_OK;
}

/* which tiles a layer runs (tiles[kind]) */
typedef enum tile_kind
{
	TILE_BLOCKED,				/* blocked input, any stride */
	TILE_NCHW,					/* plain NCHW input (nchw_input) */
	TILE_BLOCKED_S1,			/* blocked input, stride 1: the pixels' offsets constant */
	TILE_POINTWISE,				/* blocked input, 1x1 stride 1 unpadded (one long row) */
	TILE_POINTWISE_S2,			/* blocked input, 1x1 stride 2 unpadded */
	TILE_NCHW_S2				/* plain NCHW input, stride 2: the pixels' offsets constant */
} tile_kind;

typedef struct conv_job
{
	const nchwc_conv_state *s;
	const float *x;
	const float *z;
	const float *bias;			/* og x 64, zero past M */
	float	   *y;
	int64_t		h,
				w,
				oh,
				ow,
				sh,
				sw,
				dh,
				dw,
				ph,
				pw;
	int64_t		ic_chunk;		/* input blocks per pass over a task's pixels */
	int64_t		rows,			/* output rows per task */
				row_groups,		/* tasks down the plane */
				chunk_px,		/* output pixels per task along a row */
				chunks;			/* tasks along a row */
	int64_t		ow_lo,
				ow_hi;			/* outputs whose every horizontal tap is inside */
	int			ntaps;			/* kh x kw when tap_off holds them, else 0 */
	int64_t		tap_off[TAPS_MAX];	/* tap ky * kw + kx's input offset from tap (0, 0), floats */
	tile_kind	tile_kind;		/* the input's layout and stride */
	bool		pixels_first;	/* tasks a chunk of pixels after another, each in every group */
	bool		fma_bcast;		/* 2-block tiles: nn_nchwc_fma_bcast() */
	/* tasks from split_from on: the last groups, each in split_parts columns of split_px */
	int64_t		split_from,
				split_parts,
				split_px;
} conv_job;

/* the tile's arguments */
typedef struct tile_args
{
	const float *x;				/* the image's first block */
	int64_t		iy,
				ix;				/* input position of tap (0, 0) of the first pixel */
	const float *w;				/* the group's packed weights */
	int64_t		icb0,
				icb1;			/* input blocks to add this time */
	bool		first,			/* start from zero, else from Y's partial sums */
				last;			/* finish (bias, Z, activation), else store the partial sums */
	int64_t		ky0,
				ky1,
				kx0,
				kx1;			/* taps to read */
	const float *bias;
	const float *z;				/* or NULL */
	float	   *y;
	nv_keep_t	last_mask;		/* lanes of the group's last block that are channels */
	int64_t		ntiles;			/* tiles along the row from ix (each PX pixels) */
	const float *pf;			/* next weights to prefetch, pf_step lines a tile */
	int64_t		pf_lines,
				pf_step;
} tile_args;

/* the tile's products with input channel ic at one tap (inside DEFINE_TILE) */
#if BLK == 16
#define TILE_CHANNEL(NOB, PX, ic, EB) \
	do { \
		__m512		wv[NOB]; \
		_Pragma("GCC unroll 4") \
		for (int o = 0; o < NOB; o++) \
			wv[o] = _mm512_load_ps(wp + (ic) * ns + o * BLK); \
		_Pragma("GCC unroll 6") \
		for (int p = 0; p < PX; p++) \
		{ \
			const float *xc = xp + p * xps + (ic) * xch; \
			if (EB) \
			{ \
				_Pragma("GCC unroll 4") \
				for (int o = 0; o < NOB; o++) \
					acc[o][p] = nn_fmadd_bcast512(wv[o], xc, acc[o][p]); \
			} \
			else \
			{ \
				__m512		xv = _mm512_set1_ps(*xc); \
				_Pragma("GCC unroll 4") \
				for (int o = 0; o < NOB; o++) \
					acc[o][p] = _mm512_fmadd_ps(xv, wv[o], acc[o][p]); \
			} \
		} \
	} while (0)
#else
/*
 * AVX2's 16 registers: the PX (up to 3) broadcasts first, then each
 * output block's weight vector once for them, 12 accumulators + 3 + 1
 * (onnxruntime's FMA3 tile).  Tiles of 2 blocks by 6 pixels (the weight
 * vectors first) ran the same on an AMD EPYC (Zen 3).
 */
#define TILE_CHANNEL(NOB, PX, ic, EB) \
	do { \
		__m256		xv[PX]; \
		_Pragma("GCC unroll 3") \
		for (int p = 0; p < PX; p++) \
			xv[p] = _mm256_broadcast_ss(xp + p * xps + (ic) * xch); \
		_Pragma("GCC unroll 4") \
		for (int o = 0; o < NOB; o++) \
		{ \
			__m256		wv = _mm256_load_ps(wp + (ic) * ns + o * BLK); \
			_Pragma("GCC unroll 3") \
			for (int p = 0; p < PX; p++) \
				acc[o][p] = _mm256_fmadd_ps(xv[p], wv, acc[o][p]); \
		} \
	} while (0)
#endif

/*
 * The parts DEFINE_TILE and DEFINE_PW_TILE share (both define s, t, j, acc,
 * ty, tz and ystep, Y's plane of a block).  TILE_FLAGS: what the epilogue
 * decides once per tile call.  TILE_START: the sums from zero, from Z (a
 * first pass that is not the last: Y may be Z's buffer, which the partial
 * sums overwrite) or from Y's partial sums; Z's lines fetched early when
 * the epilogue adds them.  TILE_END: the partial sums stored, or the epilogue.
 */
#define TILE_FLAGS \
	float		lo_, \
				hi_; \
	const bool	first = t->first, \
				last = t->last, \
				clamp = nn_act_as_clamp(&s->act, &lo_, &hi_), \
				add_z = t->z && first; \
	const nv_t	lo = nv_set1(lo_), \
				hi = nv_set1(hi_)

/*
 * The next pass's weights, pf_step lines a tile, are prefetched into L2 a
 * few lines per input block of the tile (TILE_PREFETCH_SOME) rather than
 * all at the tile's start: a burst of 50-odd prefetches from L3 filled the
 * core's miss buffers and stalled the tile behind them (perf: 11.5% of a
 * 320 -> 1280 1x1 layer at 7x7 on the instruction after the prefetch; that
 * layer 0.92x the time spread out, ResNet-50 0.95x, MobileNet-v2 0.95x,
 * MNASNet 0.93x).  The place reached is kept in the tile call's locals and
 * stored back once (TILE_PREFETCH_SAVE).
 */
#define TILE_PREFETCH_STATE \
	const int64_t pf_per_block = (t->pf_step + (t->icb1 - t->icb0) - 1) / (t->icb1 > t->icb0 ? t->icb1 - t->icb0 : 1); \
	const float *pf = t->pf; \
	int64_t		pf_left = t->pf_lines

#define TILE_PREFETCH_SOME() nn_nchwc_prefetch_l2(&pf, &pf_left, pf_per_block)

#define TILE_PREFETCH_SAVE() \
	do { \
		t->pf = pf; \
		t->pf_lines = pf_left; \
	} while (0)

#define TILE_START(NOB, PX) \
	do { \
		_Pragma("GCC unroll 4") \
		for (int o = 0; o < NOB; o++) \
			_Pragma("GCC unroll 6") \
			for (int p = 0; p < PX; p++) \
				acc[o][p] = !first ? nv_load(ty + o * ystep + p * BLK) \
					: add_z && !last ? nv_load(tz + o * ystep + p * BLK) : nv_zero(); \
		if (add_z && last) \
			_Pragma("GCC unroll 4") \
			for (int o = 0; o < NOB; o++) \
				_Pragma("GCC unroll 6") \
				for (int p = 0; p < PX; p++) \
					_mm_prefetch((const char *) (tz + o * ystep + p * BLK), _MM_HINT_T0); \
	} while (0)

#define TILE_END(NOB, PX) \
	do { \
		if (!last) \
			_Pragma("GCC unroll 4") \
			for (int o = 0; o < NOB; o++) \
				_Pragma("GCC unroll 6") \
				for (int p = 0; p < PX; p++) \
					nv_store(ty + o * ystep + p * BLK, acc[o][p]); \
		else if (clamp) \
			TILE_FINISH(NOB, PX, nv_min(hi, nv_max(lo, v))); \
		else \
			TILE_FINISH(NOB, PX, nv_act(&s->act, v)); \
	} while (0)

/*
 * The last pass's epilogue (inside DEFINE_TILE): bias, Z when this pass
 * started from zero, the activation ACT of v, stored.  Everything it
 * decides is decided once per tile call (clamp, add_z): tested per vector,
 * the flags were reloaded from memory after every store, and the
 * activation's switch taken, 24 times a tile: 10% of a 1x1 layer from 64
 * channels at 56x56.
 */
#define TILE_FINISH(NOB, PX, ACT) \
	do { \
		_Pragma("GCC unroll 4") \
		for (int o = 0; o < NOB; o++) \
		{ \
			const nv_t	b = nv_load(t->bias + o * BLK); \
			const nv_keep_t keep = o == NOB - 1 ? t->last_mask : nv_keep_all(); \
			_Pragma("GCC unroll 6") \
			for (int p = 0; p < PX; p++) \
			{ \
				nv_t		v = nv_add(acc[o][p], b); \
				if (add_z) \
					v = nv_add(v, nv_load(tz + o * ystep + p * BLK)); \
				v = ACT; \
				/* channels past M stay zero whatever act(0) is */ \
				nv_store(ty + o * ystep + p * BLK, nv_keep_apply(keep, v)); \
			} \
		} \
	} while (0)

/*
 * acc[ob][p] = Z (when given) plus the sum over input channels and taps
 * of x * w, then the epilogue, stored (Z first: Y may be Z's own buffer,
 * which the partial sums of chunked passes overwrite), for t->ntiles
 * tiles along the row (one call for a run of them: AVX2's tiles of 3
 * pixels spent a fifth of their time in the call, its set-up and its
 * spills).  NOB and PX are constants in each instantiation, and so are
 * NCHW: a blocked input (a channel's value at stride 1 in its pixel's 16),
 * or a plain NCHW one (nchw_input: an RGB stem's 3 channels, a plane
 * apart, unrolled); and SC: the stride when constant (0: the job's), so
 * that the pixels' offsets are immediates.  Only the channels that exist
 * are read: the last block of MobileNet-v2's 24 channels holds 8 (its
 * 24 -> 144 layers ran 0.82x the time reading 8 instead of 16).
 *
 * A tile whose taps are whole kernel rows (every tile but those at a
 * row's ends) runs them as one loop over the job's table of tap offsets,
 * a whole block of channels (or the stem's 3) unrolled at each: with a
 * loop per axis, bounds from memory and the offsets multiplied out at
 * every tap, AVX2's 3x3 tiles ran at 72-75% of its multiply-add peak
 * (onnxruntime's 90-96%), short of registers (16), on an Intel core with
 * AVX-512 hidden from both engines (bench/hide_avx512.c): ResNet-50's 3x3
 * layers took 1.20-1.29x onnxruntime's time, its 7x7 stem 1.35x; with
 * the table 1.05-1.09x and 1.05x, the network 0.91x the time.  AVX-512's
 * tiles, with 32 registers, ran the same either way (its stem 1.02x the
 * time with the table): they keep the loops per axis (TAP_TABLE).  The
 * table and the weights are walked by pointer: indexed by tap, their
 * addresses were recomputed at every tap from values spilled to the stack
 * (AVX2's 3x3 layers 0.985-0.992x the time by pointer; unrolling the
 * channels whole as well made them 1.02-1.035x).
 */
#define DEFINE_TILE(NAME, NOB, PX, NCHW, SC, EB) \
__attribute__((target(NCHWC_TARGET))) \
static void \
NAME(const conv_job *j, tile_args *t) \
{ \
	const nchwc_conv_state *s = j->s; \
	const int64_t ns = NOB * BLK, \
				xpix = NCHW ? 1 : BLK, \
				xch = NCHW ? j->h * j->w : 1, \
				xps = (SC) ? (SC) * xpix : j->sw * xpix, \
				xrow = j->w * xpix, \
				xblk = j->h * j->w * BLK, \
				ystep = j->oh * j->ow * BLK; \
	TILE_FLAGS; \
	TILE_PREFETCH_STATE; \
	/* (TAP_TABLE first: without it the compiler drops the table's loop) */ \
	const bool	whole_rows = TAP_TABLE && j->ntaps > 0 && t->kx0 == 0 && t->kx1 == s->kw; \
	const int	tap0 = whole_rows ? (int) (t->ky0 * s->kw) : 0, \
				tap1 = whole_rows ? (int) (t->ky1 * s->kw) : 0; \
  for (int64_t q = 0; q < t->ntiles; q++) \
  { \
	nv_t		acc[NOB][PX]; \
	const int64_t tix = t->ix + q * PX * j->sw; \
	float	   *ty = t->y + q * PX * BLK; \
	const float *tz = t->z ? t->z + q * PX * BLK : NULL; \
	TILE_START(NOB, PX); \
	for (int64_t icb = t->icb0; icb < t->icb1; icb++) \
	{ \
		const float *xb = t->x + icb * xblk; \
		TILE_PREFETCH_SOME(); \
		const float *wb = t->w + icb * s->kh * s->kw * BLK * ns; \
		if (whole_rows && (NCHW ? s->c - icb * BLK == 3 : s->c - icb * BLK >= BLK)) \
		{ \
			const float *xt = xb + t->iy * xrow + tix * xpix; \
			const int64_t *off = j->tap_off + tap0, \
					   *off_end = j->tap_off + tap1; \
			const float *wp = wb + tap0 * BLK * ns; \
			for (; off < off_end; off++, wp += BLK * ns) \
			{ \
				const float *xp = xt + *off; \
				_Pragma("GCC unroll 2") \
				for (int ic = 0; ic < (NCHW ? 3 : BLK); ic++) \
					TILE_CHANNEL(NOB, PX, ic, EB); \
			} \
			continue; \
		} \
		for (int64_t ky = t->ky0; ky < t->ky1; ky++) \
			for (int64_t kx = t->kx0; kx < t->kx1; kx++) \
			{ \
				const float *xp = xb + (t->iy + ky * j->dh) * xrow + (tix + kx * j->dw) * xpix; \
				const float *wp = wb + (ky * s->kw + kx) * BLK * ns; \
				const int	nic = (int) (s->c - icb * BLK < BLK ? s->c - icb * BLK : BLK); \
				if (NCHW && nic == 3) \
				{ \
					TILE_CHANNEL(NOB, PX, 0, EB); \
					TILE_CHANNEL(NOB, PX, 1, EB); \
					TILE_CHANNEL(NOB, PX, 2, EB); \
				} \
				else \
				{ \
					_Pragma("GCC unroll 2") \
					for (int ic = 0; ic < nic; ic++) \
						TILE_CHANNEL(NOB, PX, ic, EB); \
				} \
			} \
	} \
	TILE_END(NOB, PX); \
  } \
	TILE_PREFETCH_SAVE(); \
}

/*
 * DEFINE_TILE for an unpadded 1x1 layer of stride S (TILE_POINTWISE: stride
 * 1, the plane one long row; TILE_POINTWISE_S2: stride 2 both ways, row by
 * row): no taps to loop over, no tap ranges, the input S tiles' pixels
 * apart from one tile to the next, whole blocks of channels in a loop of
 * constant length.  The general tile's address arithmetic and the
 * registers it held (spilled around the multiply-adds) made a layer from
 * 16 channels at 112x112 take 1.38x onnxruntime's time.
 */
#define DEFINE_PW_TILE(NAME, NOB, PX, EB, S) \
__attribute__((target(NCHWC_TARGET))) \
static void \
NAME(const conv_job *j, tile_args *t) \
{ \
	const nchwc_conv_state *s = j->s; \
	const int64_t ns = NOB * BLK, \
				xps = S * BLK, \
				xch = 1, \
				xblk = j->h * j->w * BLK, \
				ystep = j->oh * j->ow * BLK; \
	const int	last_nic = (int) (s->c - (s->cb - 1) * BLK); \
	TILE_FLAGS; \
	const int64_t icb0 = t->icb0, \
				icb1 = t->icb1; \
	TILE_PREFETCH_STATE; \
  for (int64_t q = 0; q < t->ntiles; q++) \
  { \
	nv_t		acc[NOB][PX]; \
	const float *xq = t->x + (t->iy * j->w + t->ix + q * PX * S) * BLK; \
	float	   *ty = t->y + q * PX * BLK; \
	const float *tz = t->z ? t->z + q * PX * BLK : NULL; \
	TILE_START(NOB, PX); \
	for (int64_t icb = icb0; icb < icb1; icb++) \
	{ \
		const float *xp = xq + icb * xblk; \
		const float *wp = t->w + icb * BLK * ns; \
		TILE_PREFETCH_SOME(); \
		if (icb < s->cb - 1 || last_nic == BLK) \
		{ \
			_Pragma("GCC unroll 2") \
			for (int ic = 0; ic < BLK; ic++) \
				TILE_CHANNEL(NOB, PX, ic, EB); \
		} \
		else \
		{ \
			_Pragma("GCC unroll 2") \
			for (int ic = 0; ic < last_nic; ic++) \
				TILE_CHANNEL(NOB, PX, ic, EB); \
		} \
	} \
	TILE_END(NOB, PX); \
  } \
	TILE_PREFETCH_SAVE(); \
}

/* the kinds of tile (tile_kind's order) of NOB blocks by PX pixels */
#define DEFINE_TILE_KINDS(NOB, PX, E, EB) \
	DEFINE_TILE(E##tile_##NOB##_##PX, NOB, PX, 0, 0, EB) \
	DEFINE_TILE(E##ntile_##NOB##_##PX, NOB, PX, 1, 0, EB) \
	DEFINE_TILE(E##stile_##NOB##_##PX, NOB, PX, 0, 1, EB)
#define DEFINE_TILES_3(NOB, E, EB) \
	DEFINE_TILE_KINDS(NOB, 1, E, EB) DEFINE_TILE_KINDS(NOB, 2, E, EB) DEFINE_TILE_KINDS(NOB, 3, E, EB)
/*
 * The kinds of constant offsets only in full tiles (the pointwise ones and
 * the stride-2 NCHW one): a row's last few pixels go to the general tiles
 * of the same input (FULL_ROW), which compute the same way.  Sixty more
 * unrolled functions per block size made clang's sanitized build of this
 * file (CI's fuzz stage) take about ten minutes.
 */
#define DEFINE_FULL_TILES(NOB, PX, E, EB) \
	DEFINE_PW_TILE(E##ptile_##NOB##_##PX, NOB, PX, EB, 1) \
	DEFINE_PW_TILE(E##p2tile_##NOB##_##PX, NOB, PX, EB, 2) \
	DEFINE_TILE(E##n2tile_##NOB##_##PX, NOB, PX, 1, 2, EB)
#if TILE_PX == 6
#define DEFINE_TILES(NOB, E, EB) DEFINE_TILES_3(NOB, E, EB) \
	DEFINE_TILE_KINDS(NOB, 4, E, EB) DEFINE_TILE_KINDS(NOB, 5, E, EB) DEFINE_TILE_KINDS(NOB, 6, E, EB) \
	DEFINE_FULL_TILES(NOB, 6, E, EB)
#define TILE_ROW(P, NOB) {P##NOB##_1, P##NOB##_2, P##NOB##_3, P##NOB##_4, P##NOB##_5, P##NOB##_6}
/* full tiles of kind P, the rest of kind G */
#define FULL_ROW(P, G, NOB) {G##NOB##_1, G##NOB##_2, G##NOB##_3, G##NOB##_4, G##NOB##_5, P##NOB##_6}
#elif TILE_PX == 3
#define DEFINE_TILES(NOB, E, EB) DEFINE_TILES_3(NOB, E, EB) DEFINE_FULL_TILES(NOB, 3, E, EB)
#define TILE_ROW(P, NOB) {P##NOB##_1, P##NOB##_2, P##NOB##_3}
#define FULL_ROW(P, G, NOB) {G##NOB##_1, G##NOB##_2, P##NOB##_3}
#else
#error "TILE_PX must be 6 or 3"
#endif
DEFINE_TILES(1, , 0)
DEFINE_TILES(2, , 0)
DEFINE_TILES(3, , 0)
DEFINE_TILES(4, , 0)
#if BLK == 16
/* 2 blocks with the broadcasts in the multiply-adds (nn_nchwc_fma_bcast) */
DEFINE_TILES(2, e, 1)
#endif
#define TILE_KIND(P) {TILE_ROW(P, 1), TILE_ROW(P, 2), TILE_ROW(P, 3), TILE_ROW(P, 4)}
#define FULL_KIND(P, G) {FULL_ROW(P, G, 1), FULL_ROW(P, G, 2), FULL_ROW(P, G, 3), FULL_ROW(P, G, 4)}

typedef void (*tile_fn) (const conv_job *j, tile_args *t);

/* [tile_kind][NOB - 1][PX - 1] */
static const tile_fn tiles[6][MAX_NOB][TILE_PX] = {TILE_KIND(tile_), TILE_KIND(ntile_), TILE_KIND(stile_),
	FULL_KIND(ptile_, stile_), FULL_KIND(p2tile_, tile_), FULL_KIND(n2tile_, ntile_)};

#if BLK == 16
/* [tile_kind][PX - 1], 2 blocks */
static const tile_fn tiles_fma_bcast[6][TILE_PX] = {TILE_ROW(etile_, 2), TILE_ROW(entile_, 2), TILE_ROW(estile_, 2),
	FULL_ROW(eptile_, estile_, 2), FULL_ROW(ep2tile_, etile_, 2), FULL_ROW(en2tile_, entile_, 2)};
#endif

/* the group of unsplit task t, in the job's order of tasks (pixels_first or by groups) */
static inline int64_t
task_group(const conv_job *j, int64_t t)
{
	return j->pixels_first ? t % j->s->og : (t / (j->chunks * j->row_groups)) % j->s->og;
}

/*
 * The weights the pass after this one reads first (the task's next chunk
 * of input blocks, or the first of the next task's group when that is
 * another group or they are chunked): *lines cache lines from *at, or 0.
 * A pass brings them into L2 over its tiles; without that, the first tile
 * of each pass stalls on them (ResNet-50's 1x1 layers from 1024 channels
 * ran 16% slower with cold weights than with warm ones).
 */
static void
next_weights(const conv_job *j, int64_t t, int64_t end, int64_t g, int64_t icb1, const float **at,
			 int64_t *lines)
{
	const nchwc_conv_state *s = j->s;
	int64_t		ng = g,
				from = icb1,
				to;
	int64_t		per_block;

	*at = NULL;
	*lines = 0;
	if (icb1 >= s->cb)
	{
		if (t + 1 >= end)
			return;
		ng = task_group(j, t + 1);
		if (ng == g && j->ic_chunk >= s->cb)
			return;				/* the same weights, still in cache */
		from = 0;
	}
	to = from + j->ic_chunk < s->cb ? from + j->ic_chunk : s->cb;
	per_block = s->kh * s->kw * BLK * group_blocks(s, ng) * BLK;
	*at = s->w + ng * s->og_floats + from * per_block;
	*lines = (to - from) * per_block / 16;
}

/* tasks (image, group, group of output rows, chunk of the rows) in [begin, end) */
__attribute__((target(NCHWC_TARGET)))
static void
conv_task(void *arg, int64_t begin, int64_t end)
{
	const conv_job *j = arg;
	const nchwc_conv_state *s = j->s;

	for (int64_t t = begin; t < end; t++)
	{
		bool		split = t >= j->split_from;
		int64_t		chunk,
					rg,
					g,
					n,
					cpx = split ? j->split_px : j->chunk_px;
		int64_t		nob,
					ob0,
					x0,
					x1,
					oy0,
					oy1,
					m_last,
					pass_tiles;
		tile_args	ta;
		const tile_fn *fns;

		if (split)
		{
			chunk = (t - j->split_from) % j->split_parts;
			rg = 0;
			g = j->split_from + (t - j->split_from) / j->split_parts;
			n = 0;
		}
		else if (j->pixels_first)
		{
			g = task_group(j, t);
			chunk = (t / s->og) % j->chunks;
			rg = (t / (s->og * j->chunks)) % j->row_groups;
			n = t / (s->og * j->chunks * j->row_groups);
		}
		else
		{
			g = task_group(j, t);
			chunk = t % j->chunks;
			rg = (t / j->chunks) % j->row_groups;
			n = t / (j->chunks * j->row_groups * s->og);
		}
		nob = group_blocks(s, g);
		ob0 = group_first(s, g);
		x0 = chunk * cpx;
		x1 = x0 + cpx < j->ow ? x0 + cpx : j->ow;
		oy0 = rg * j->rows;
		oy1 = oy0 + j->rows < j->oh ? oy0 + j->rows : j->oh;
		m_last = s->m - (ob0 + nob - 1) * BLK;
		pass_tiles = (oy1 - oy0) * ((x1 - x0 + TILE_PX - 1) / TILE_PX);
		/* this group's tiles by width: [PX - 1] */
		fns = tiles[j->tile_kind][nob - 1];
#if BLK == 16
		if (nob == 2 && j->fma_bcast)
			fns = tiles_fma_bcast[j->tile_kind];
#endif
		if (pass_tiles <= 0)
			continue;			/* no pixels (never planned so; the prefetch step divides by it) */
		ta.w = s->w + g * s->og_floats;
		ta.bias = j->bias + ob0 * BLK;
		ta.last_mask = nv_keep_first(m_last);
		/* the image, and in it the blocks of g's convolution group */
		ta.x = j->x + (n * (s->nchw_input ? s->c : s->x_cb * BLK) + g / s->ogg * s->cb * BLK) * j->h * j->w;
		/* each chunk of input blocks over all the task's pixels while its weights are in L1 */
		for (ta.icb0 = 0; ta.icb0 < s->cb; ta.icb0 += j->ic_chunk)
		{
			ta.icb1 = ta.icb0 + j->ic_chunk < s->cb ? ta.icb0 + j->ic_chunk : s->cb;
			ta.first = ta.icb0 == 0;
			ta.last = ta.icb1 == s->cb;
			next_weights(j, t, end, g, ta.icb1, &ta.pf, &ta.pf_lines);
			ta.pf_step = (ta.pf_lines + pass_tiles - 1) / pass_tiles;
			for (int64_t oy = oy0; oy < oy1; oy++)
			{
				ta.iy = oy * j->sh - j->ph;
				nn_nchwc_tap_range(ta.iy, j->dh, s->kh, j->h, &ta.ky0, &ta.ky1);
				for (int64_t ox = x0; ox < x1;)
				{
					int64_t		px;
					int64_t		off = ((n * s->mb + ob0) * j->oh + oy) * j->ow + ox;

					ta.ix = ox * j->sw - j->pw;
					if (ox >= j->ow_lo && ox < j->ow_hi)
					{
						int64_t		stop = x1 < j->ow_hi ? x1 : j->ow_hi;

						/* every whole tile to stop in one call, else the few pixels left */
						ta.ntiles = (stop - ox) / TILE_PX;
						px = ta.ntiles > 0 ? TILE_PX : stop - ox;
						if (ta.ntiles == 0)
							ta.ntiles = 1;
						ta.kx0 = 0;
						ta.kx1 = s->kw;
					}
					else
					{
						int64_t		kx0,
									kx1;

						/*
						 * With the pixels after it whose taps in the row are
						 * the same, up to a tile: a dilated layer whose
						 * taps pass the plane (DeepLabV3's at 12 to 36 over
						 * 14x14) has no interior, and one pixel a call ran
						 * at a fraction of the tile's rate.
						 */
						nn_nchwc_tap_range(ta.ix, j->dw, s->kw, j->w, &ta.kx0, &ta.kx1);
						for (px = 1; px < TILE_PX && ox + px < x1; px++)
						{
							nn_nchwc_tap_range((ox + px) * j->sw - j->pw, j->dw, s->kw, j->w, &kx0, &kx1);
							if (kx0 != ta.kx0 || kx1 != ta.kx1)
								break;
						}
						ta.ntiles = 1;
					}
					ta.y = j->y + off * BLK;
					ta.z = j->z ? j->z + off * BLK : NULL;
					fns[px - 1] (j, &ta);
					ox += px * ta.ntiles;
				}
			}
		}
	}
}

/* the blocked convolution of state s (prepared in this block size: the caller checked) */
ox_code
NCHWC_FN(conv_run) (ox_kernel_ctx *ctx)
{
	const nchwc_conv_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	nn_conv_shape cs;
	conv_job	j;
	ox_tensor  *y;
	const float *z;
	float	   *bias;
	const nn_geom *g = &cs.g;

	OX_TRY(nn_nchwc_conv_begin(ctx, "Conv", BLK, &s->win, s->groups, s->groups * s->c, s->x_cb, s->m, s->w_data,
							   s->nchw_input, &s->bias, &cs, &y, &z, &bias));
	if (!bias)
		return OX_OK;
#if BLK == 16
	if (s->wino)
	{
		ox_code		rc = nn_nchwc_winograd_run(ctx, s->wino, &cs, x->data, z, bias,
											   &s->act, y->data);

		nn_nchwc_bias_done(&s->bias, bias);
		return rc;
	}
#endif

	memset(&j, 0, sizeof(j));
	j.s = s;
	j.x = x->data;
	j.z = z;
	j.bias = bias;
	j.y = y->data;
	j.h = g->in[AH];
	j.w = g->in[AW];
	j.oh = g->out[AH];
	j.ow = g->out[AW];
	j.sh = g->s[AH];
	j.sw = g->s[AW];
	j.dh = g->d[AH];
	j.dw = g->d[AW];
	j.ph = g->pb[AH];
	j.pw = g->pb[AW];
	/* a pointwise layer is one long row: full tiles across the plane's row ends */
	j.tile_kind = s->nchw_input ? (j.sw == 2 ? TILE_NCHW_S2 : TILE_NCHW) : j.sw == 1 ? TILE_BLOCKED_S1 : TILE_BLOCKED;
	if (s->kh == 1 && s->kw == 1 && j.sh == 1 && j.sw == 1 && j.ph == 0 && j.pw == 0 &&
		g->pe[AH] == 0 && g->pe[AW] == 0)
	{
		j.w = j.ow = j.h * j.w;
		j.h = j.oh = 1;
		if (!s->nchw_input)
			j.tile_kind = TILE_POINTWISE;
	}
	else if (s->kh == 1 && s->kw == 1 && j.sh == 2 && j.sw == 2 && j.ph == 0 && j.pw == 0 && !s->nchw_input)
		j.tile_kind = TILE_POINTWISE_S2;
	/*
	 * Tasks of rows cut in equal chunks (a short last one would read all
	 * the weights for a few pixels).  Weights read in chunks of input
	 * blocks (past chunk_past) come from L2 or further once per task:
	 * tasks then take longer rows and several of them, up to TASK_PX
	 * pixels (ResNet-50's 1x1 layers from 1024 channels at 14x14: one task
	 * per group instead of three; its 3x3 stride-2 layer into 7x7: one
	 * instead of seven).
	 */
	{
		bool		chunked = s->group_bytes > s->chunk_past ||
			(s->group_bytes > L1_WEIGHTS_LARGE_PLANE && j.oh * j.ow >= LARGE_PLANE);
		int64_t		target = chunked ? TASK_PX : ROW_CHUNK,
					units = x->dims[0] * s->og,
					want = 2 * (int64_t) ctx->nthreads;

		/* but two tasks per thread where the pixels allow */
		if (units * ((j.oh * j.ow + target - 1) / target) < want)
		{
			target = units * j.oh * j.ow / want;
			if (target < TILE_PX)
				target = TILE_PX;
		}

		j.chunks = (j.ow + target - 1) / target;
		j.chunk_px = (j.ow + j.chunks - 1) / j.chunks;
		j.chunk_px = (j.chunk_px + TILE_PX - 1) / TILE_PX * TILE_PX;
		j.chunks = (j.ow + j.chunk_px - 1) / j.chunk_px;
		j.rows = chunked && j.chunks == 1 ? target / j.ow : 1;
		if (j.rows < 1)
			j.rows = 1;
		if (j.rows > j.oh)
			j.rows = j.oh;
		j.row_groups = (j.oh + j.rows - 1) / j.rows;
		j.rows = (j.oh + j.row_groups - 1) / j.row_groups;
		j.ic_chunk = chunked ? s->ic_chunk : s->cb;
	}
	/*
	 * One task a group (one image, all its pixels), more groups than
	 * threads but not a multiple of them: the groups left over once each
	 * thread has had as many are cut along the columns, one part a thread.
	 * MobileNet-v2's 960 -> 320 layer at 7x7 made 5 tasks, 3 for one thread
	 * and 2 for the other (its time 1.64x shorter on two threads, against
	 * onnxruntime's 1.9x); cutting every group instead reads all the weights
	 * twice, which cost what it balanced.
	 */
	/*
	 * Which thread computes what: the pool gives each thread a contiguous
	 * share of the tasks first (ox_parallel_for), so the order of the
	 * tasks decides it.  On a large plane, by pixels: a thread reads its
	 * part of the input for every group (from its L2 after the first),
	 * which is the part it wrote in the layer before; by groups each
	 * thread read all of the input (ResNet-50's 1x1 layers at 28x28 and
	 * 56x56 took 1.13x and 1.05x the time of chunks handed out by chance,
	 * two threads).  On a small plane, by groups, as the depthwise layer
	 * after it goes (depthwise_run's rows_first), which then reads the
	 * channels its thread wrote: MobileNet-v2's layers from 14x14 down.
	 */
	j.pixels_first = ctx->nthreads > 1 && s->og > 1 && j.chunks * j.row_groups > 1 && j.oh * j.ow >= LARGE_PLANE;
	j.fma_bcast = nn_nchwc_fma_bcast();
	j.split_from = INT64_MAX;
	{
		int			nt = ctx->nthreads;
		int64_t		tasks = x->dims[0] * s->og * j.row_groups * j.chunks;

		if (nt > 1 && tasks == s->og && s->og > nt && s->og < 4 * nt && s->og % nt != 0 &&
			j.ow >= 2 * TILE_PX * nt)
		{
			j.split_from = s->og - s->og % nt;
			j.split_px = ((j.ow + nt - 1) / nt + TILE_PX - 1) / TILE_PX * TILE_PX;
			/* whole tiles a part: 49 columns in 4 parts are 3 of 18 */
			j.split_parts = (j.ow + j.split_px - 1) / j.split_px;
			tasks = j.split_from + (s->og % nt) * j.split_parts;
		}
		/* outputs whose taps 0 .. kw-1 all land inside the row */
		nn_valid_range(j.ow, j.sw, -j.pw, j.w - (s->kw - 1) * j.dw, &j.ow_lo, &j.ow_hi);
		/* the tiles' table of tap offsets (DEFINE_TILE), the taps in the weights' order */
		j.ntaps = 0;
		if (TAP_TABLE && s->kh <= TAPS_MAX && s->kw <= TAPS_MAX && s->kh * s->kw <= TAPS_MAX)
		{
			for (int64_t ky = 0; ky < s->kh; ky++)
				for (int64_t kx = 0; kx < s->kw; kx++)
					j.tap_off[ky * s->kw + kx] = (ky * j.dh * j.w + kx * j.dw) * (s->nchw_input ? 1 : BLK);
			j.ntaps = (int) (s->kh * s->kw);
		}
		ox_parallel_for(ctx, tasks, 1, conv_task, &j);
	}
	nn_nchwc_bias_done(&s->bias, bias);
	return OX_OK;
}

/* ---- pooling ------------------------------------------------------------ */

typedef struct pool_job
{
	const nn_geom *g;
	const float *x;
	float	   *y;
	int64_t		ow_lo,
				ow_hi;			/* outputs whose every horizontal tap is inside */
	bool		average;		/* AveragePool, else MaxPool */
	bool		count_include_pad;
} pool_job;

#define POOL_PX 4

/*
 * AveragePool's divisor along one axis for the output whose first tap is
 * at start, taps [lo, hi) inside: pool.c's (pool_tables), so that the
 * quotients are the same.  With count_include_pad the taps inside the
 * padded extent, which ends at in + pe.
 */
static inline int64_t
pool_axis_count(const nn_geom *g, int ax, int64_t start, int64_t lo, int64_t hi, bool count_include_pad)
{
	int64_t		npad;

	if (!count_include_pad)
		return hi - lo;
	npad = g->in[ax] + g->pe[ax] - start <= 0 ? 0 : (g->in[ax] + g->pe[ax] - start - 1) / g->d[ax] + 1;
	return npad > g->k[ax] ? g->k[ax] : npad;
}

/*
 * Outputs [ox, ox + n) of one row, n <= POOL_PX, every horizontal tap
 * inside (inside: the taps' range computed once, n = POOL_PX, a tap of
 * each pixel after the other's, so that the operations of POOL_PX pixels
 * overlap instead of waiting on each other; 2.4x onnxruntime's time on
 * ResNet-50's 3x3/2 pool at batch 8 the one-pixel way, 1.9x with each
 * pixel's taps in a loop of their own, 1.25x now) or not (taps clipped
 * per pixel).  Each pixel takes its taps in the same order as
 * pool.c: MaxPool's comparison, u > v ? u : v in tap order from -FLT_MAX;
 * AveragePool's sum, in tap order from 0, over the taps inside, divided by
 * the count pool.c divides by (rows: rows_count taps, computed by the
 * caller), so that both layouts give the same bits.
 */
__attribute__((target(NCHWC_TARGET)))
static inline __attribute__((always_inline)) void
pool_pixels(const pool_job *j, const float *xp, float *yp, int64_t iy, int64_t ky0, int64_t ky1,
			int64_t ox, int n, bool inside, bool average, int64_t rows_count)
{
	const nn_geom *g = j->g;
	int64_t		w = g->in[AW],
				sw = g->s[AW],
				dw = g->d[AW];
	nv_t		v[POOL_PX];

	for (int p = 0; p < POOL_PX; p++)
		v[p] = average ? nv_zero() : nv_set1(-FLT_MAX);
	for (int64_t ky = ky0; ky < ky1; ky++)
	{
		const float *xr = xp + (iy + ky * g->d[AH]) * w * BLK;

		if (inside)
		{
			/* a tap of every pixel side by side (the pixels' chains overlap), taps in order */
			for (int64_t kx = 0; kx < g->k[AW]; kx++)
#pragma GCC unroll 4
				for (int p = 0; p < POOL_PX; p++)
				{
					const float *at = xr + ((ox + p) * sw - g->pb[AW] + kx * dw) * BLK;

					v[p] = average ? nv_add(v[p], nv_load(at)) : nv_take_greater(nv_load(at), v[p]);
				}
			continue;
		}
		for (int p = 0; p < n; p++)
		{
			int64_t		ix = (ox + p) * sw - g->pb[AW],
						kx0 = 0,
						kx1 = g->k[AW];

			if (!inside)
				nn_nchwc_tap_range(ix, dw, g->k[AW], w, &kx0, &kx1);
			for (int64_t kx = kx0; kx < kx1; kx++)
				v[p] = average ? nv_add(v[p], nv_load(xr + (ix + kx * dw) * BLK))
					: nv_take_greater(nv_load(xr + (ix + kx * dw) * BLK), v[p]);
		}
	}
	for (int p = 0; p < n; p++)
	{
		if (average)
		{
			int64_t		ix = (ox + p) * sw - g->pb[AW],
						kx0 = 0,
						kx1 = g->k[AW],
						count;

			if (!inside)
				nn_nchwc_tap_range(ix, dw, g->k[AW], w, &kx0, &kx1);
			count = rows_count * pool_axis_count(g, AW, ix, kx0, kx1, j->count_include_pad);
			v[p] = count > 0 ? nv_div(v[p], nv_set1((float) count)) : nv_zero();
		}
		nv_store(yp + (ox + p) * BLK, v[p]);
	}
}

/* one output row of MaxPool (average false) or AveragePool */
__attribute__((target(NCHWC_TARGET)))
static inline __attribute__((always_inline)) void
pool_row(const pool_job *j, const float *xp, float *yp, int64_t iy, int64_t ky0, int64_t ky1, bool average,
		 int64_t rows_count)
{
	int64_t		ow = j->g->out[AW];

	for (int64_t ox = 0; ox < ow;)
	{
		if (ox >= j->ow_lo && ox + POOL_PX <= j->ow_hi)
		{
			pool_pixels(j, xp, yp, iy, ky0, ky1, ox, POOL_PX, true, average, rows_count);
			ox += POOL_PX;
		}
		else
		{
			/* up to the next group of inside pixels, at most POOL_PX */
			int64_t		n = ow - ox < POOL_PX ? ow - ox : POOL_PX;

			if (ox < j->ow_lo && j->ow_lo - ox < n)
				n = j->ow_lo - ox;
			pool_pixels(j, xp, yp, iy, ky0, ky1, ox, (int) n, false, average, rows_count);
			ox += n;
		}
	}
}

/* rows (image and block, output row) in [begin, end) */
__attribute__((target(NCHWC_TARGET)))
static void
pool_task(void *arg, int64_t begin, int64_t end)
{
	const pool_job *j = arg;
	const nn_geom *g = j->g;
	int64_t		h = g->in[AH],
				w = g->in[AW],
				oh = g->out[AH],
				ow = g->out[AW];

	for (int64_t t = begin; t < end; t++)
	{
		int64_t		oy = t % oh,
					plane = t / oh;
		const float *xp = j->x + plane * h * w * BLK;
		float	   *yp = j->y + (plane * oh + oy) * ow * BLK;
		int64_t		ky0,
					ky1,
					iy = oy * g->s[AH] - g->pb[AH];

		nn_nchwc_tap_range(iy, g->d[AH], g->k[AH], h, &ky0, &ky1);
		/* two copies of the row loop, each with its operation fixed */
		if (j->average)
			pool_row(j, xp, yp, iy, ky0, ky1, true, pool_axis_count(g, AH, iy, ky0, ky1, j->count_include_pad));
		else
			pool_row(j, xp, yp, iy, ky0, ky1, false, 0);
	}
}

/*
 * MaxPool (average false) or AveragePool of the window win on X in blocks
 * of BLK (the caller checked X)
 */
ox_code
NCHWC_FN(pool_run) (ox_kernel_ctx *ctx, const nn_window *win, bool average, bool count_include_pad)
{
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const char *op = average ? "onnx_pg.nchwc AveragePool" : "onnx_pg.nchwc MaxPool";
	nn_geom		g;
	pool_job	j;
	int64_t		dims[5];
	ox_tensor  *y;

	OX_TRY(nn_window_resolve(win, op, 2, x->dims + 2, NULL, &g, ctx->st));
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	dims[2] = g.out[AH];
	dims[3] = g.out[AW];
	dims[4] = BLK;
	if (!(y = ox_out_tensor(ctx, 0, OX_FLOAT, 5, dims)))
		return ctx->st->code != OX_OK ? ctx->st->code : OX_OUT_OF_MEMORY;
	j.g = &g;
	j.x = x->data;
	j.y = y->data;
	j.average = average;
	j.count_include_pad = count_include_pad;
	nn_valid_range(g.out[AW], g.s[AW], -g.pb[AW], g.in[AW] - (g.k[AW] - 1) * g.d[AW], &j.ow_lo, &j.ow_hi);
	if (ox_tensor_numel(y) > 0)
		ox_parallel_for(ctx, dims[0] * dims[1] * dims[2], 1, pool_task, &j);
	return OX_OK;
}

typedef struct gap_job
{
	const float *x;
	float	   *y;
	int64_t		hw;
} gap_job;

__attribute__((target(NCHWC_TARGET)))
static void
gap_task(void *arg, int64_t begin, int64_t end)
{
	const gap_job *j = arg;

	for (int64_t t = begin; t < end; t++)
	{
		const float *xp = j->x + t * j->hw * BLK;
		nv_t		sum = nv_zero();

		for (int64_t p = 0; p < j->hw; p++)
			sum = nv_add(sum, nv_load(xp + p * BLK));
		nv_store(j->y + t * BLK, nv_div(sum, nv_set1((float) j->hw)));
	}
}

/* GlobalAveragePool on X in blocks of BLK (the caller checked X) */
ox_code
NCHWC_FN(global_average_pool_run) (ox_kernel_ctx *ctx)
{
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	gap_job		j;
	int64_t		dims[5];
	ox_tensor  *y;

	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	dims[2] = 1;
	dims[3] = 1;
	dims[4] = BLK;
	if (!(y = ox_out_tensor(ctx, 0, OX_FLOAT, 5, dims)))
		return ctx->st->code != OX_OK ? ctx->st->code : OX_OUT_OF_MEMORY;
	j.x = x->data;
	j.y = y->data;
	j.hw = x->dims[2] * x->dims[3];
	if (j.hw == 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "onnx_pg.nchwc GlobalAveragePool: X has no pixels");
	ox_parallel_for(ctx, dims[0] * dims[1], 1, gap_task, &j);
	return OX_OK;
}
