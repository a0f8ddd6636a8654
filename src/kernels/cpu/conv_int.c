/*
 * conv_int.c
 *	  ConvInteger and QLinearConv on our int8 GEMM (qgemm.c).
 *
 * Per image and group the input is unrolled (im2col) straight into the
 * GEMM's packed column layout, four reduction rows at a time; padding
 * takes the input's zero point, which stands for the real value 0.  The
 * weights (signed, or uint8 shifted down by 128) are packed once at
 * session creation when they are constants, so that a run only unrolls
 * the input and multiplies.  Each output channel's row is written by the
 * GEMM's epilogue: int32 for ConvInteger; for QLinearConv the int32 bias
 * is added and the sum requantized with x_scale * w_scale[c] / y_scale,
 * rounding half to even and saturating.
 *
 * com.microsoft QLinearConv with channels_last=1 (what the layout pass
 * makes of 2-D, group-1 convolutions, see passes/layout_nhwc.c) takes X as
 * [N, H, W, C] and writes Y as [N, OH, OW, M]: the gathered path computes
 * channels-last anyway, so both transposes around it disappear.
 *
 * The sums are exact int32 arithmetic; only QLinearConv's requantization
 * is float (like onnxruntime's), which can differ from a double reference
 * by one unit when a product lands within float rounding of a .5 tie.
 */
#include "kernels/cpu/nn.h"
#include "kernels/cpu/qgemm.h"

#include <string.h>

typedef struct conv_int_state
{
	nn_window	win;
	int64_t		group;
	/* constant weights packed per group, or NULL */
	ox_qgemm_weights *packed;
	int64_t		n_packed;
	const void *packed_src;		/* W data the packing came from */
	const void *packed_zp_src;	/* W zero point data, or NULL */
	ox_qgemm_cols cols;			/* unrolled input, reused between runs */
	/* group 1: weights with the reduction in (tap, channel) order, for the gathered path */
	ox_qgemm_weights nhwc;
	bool		have_nhwc;
	bool		kxq;			/* its reduction order: kernel-row quads */
	bool		channels_last;	/* X [N, H, W, C] and Y [N, OH, OW, M] */
} conv_int_state;

static bool
is_qlinear(const ox_node *node)
{
	return strcmp(node->op_type, "QLinearConv") == 0;
}

static void
free_packed(conv_int_state *s)
{
	for (int64_t g = 0; g < s->n_packed; g++)
		ox_qgemm_weights_free(&s->packed[g]);
	free(s->packed);
	s->packed = NULL;
	s->n_packed = 0;
}

/* pack W [M, C/group, k...] per group; zp: NULL, one value or M values */
static ox_code
pack_weights(const ox_tensor *w, const ox_tensor *wzp, int64_t group, ox_qgemm_weights **out,
			 ox_status *st)
{
	int64_t		m = w->dims[0];
	int64_t		mg = m / group;
	int64_t		kg = m > 0 ? ox_tensor_numel(w) / m : 0;
	int64_t		nzp = wzp ? ox_tensor_numel(wzp) : 0;
	ox_qgemm_weights *p = calloc((size_t) group, sizeof(ox_qgemm_weights));

	if (!p)
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate packed weights");
	for (int64_t g = 0; g < group; g++)
	{
		const void *zp = NULL;

		if (nzp == 1)
			zp = wzp->data;
		else if (nzp > 1)
			zp = (const uint8_t *) wzp->data + g * mg;
		if (ox_qgemm_pack(&p[g], OX_QG_BCAST, mg, kg, (const uint8_t *) w->data + g * mg * kg,
						  w->dtype, kg, 1, zp, nzp == 0 ? 0 : (nzp == 1 ? 1 : mg), st) != OX_OK)
		{
			for (int64_t i = 0; i < g; i++)
				ox_qgemm_weights_free(&p[i]);
			free(p);
			return st->code;
		}
	}
	*out = p;
	return OX_OK;
}

/*
 * The gathered path's two reduction orders.  Channels-last (tap, channel):
 * quads of 4 channels of one pixel, channels padded to a multiple of 4.
 * For few channels that are not a multiple of 4 (an RGB image) and
 * undilated rows, kernel-row order (channel, ky, kx): quads of 4
 * neighbouring kx of one input row, kx padded to a multiple of 4, straight
 * from the (padded) NCHW planes.  Whichever pads less is used.
 */
static bool
use_kx_quads(int64_t c, int64_t kw, int64_t dil_w)
{
	int64_t		c4 = (c + 3) / 4 * 4,
				kx4 = (kw + 3) / 4 * 4;

	return c % 4 != 0 && dil_w == 1 && (kx4 - kw) * c4 < (c4 - c) * kx4;
}

/*
 * W [M, C, kh, kw] reordered for the gathered path, padding entries equal
 * to each output channel's zero point (so that they add (w - zw) * x = 0
 * whatever x is), packed for the rows product.
 */
static ox_code
pack_nhwc(const ox_tensor *w, const ox_tensor *wzp, bool kxq, ox_qgemm_weights *out, ox_status *st)
{
	int64_t		m = w->dims[0],
				c = w->dims[1];
	int64_t		kw = w->rank >= 4 ? w->dims[3] : (w->rank == 3 ? w->dims[2] : 1);
	int64_t		taps = m > 0 && c > 0 ? ox_tensor_numel(w) / (m * c) : 0;
	int64_t		kh = kw > 0 ? taps / kw : 0;
	int64_t		c4 = (c + 3) / 4 * 4,
				kx4 = (kw + 3) / 4 * 4;
	int64_t		k = kxq ? c * kh * kx4 : taps * c4;
	int64_t		nzp = wzp ? ox_tensor_numel(wzp) : 0;
	const uint8_t *src = w->data;
	uint8_t    *r = malloc((size_t) (m * k + 1));
	ox_code		rc;

	if (!r)
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate reordered weights");
	for (int64_t o = 0; o < m; o++)
	{
		uint8_t		z = nzp ? ((const uint8_t *) wzp->data)[nzp == 1 ? 0 : o] : 0;
		uint8_t    *ro = r + o * k;

		if (kxq)
			for (int64_t ci = 0; ci < c; ci++)
				for (int64_t ky = 0; ky < kh; ky++)
					for (int64_t kx = 0; kx < kx4; kx++)
						ro[(ci * kh + ky) * kx4 + kx] = kx < kw ? src[((o * c + ci) * kh + ky) * kw + kx] : z;
		else
			for (int64_t t = 0; t < taps; t++)
				for (int64_t ci = 0; ci < c4; ci++)
					ro[t * c4 + ci] = ci < c ? src[(o * c + ci) * taps + t] : z;
	}
	rc = ox_qgemm_pack(out, OX_QG_VEC, m, k, r, w->dtype, k, 1, wzp ? wzp->data : NULL, nzp, st);
	free(r);
	return rc;
}

ox_code
nn_conv_int_prepare(ox_prepare_ctx *pc)
{
	conv_int_state *s = calloc(1, sizeof(*s));
	bool		ql = is_qlinear(pc->node);
	int			wi = ql ? 3 : 1;
	int			zi = ql ? 5 : 3;
	const ox_value_def *wdef;
	const ox_value_def *zdef;
	const ox_tensor *w;
	const ox_tensor *wzp = NULL;
	ox_code		rc;

	if (!s)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s: could not allocate state", pc->node->op_type);
	pc->state = s;
	rc = nn_window_parse(pc->node, &s->win, false, pc->st);
	s->group = ox_attr_int(pc->node, "group", 1);
	s->channels_last = ql && ox_attr_int(pc->node, "channels_last", 0) != 0;
	if (rc == OX_OK && s->channels_last && s->group != 1)
		rc = ox_fail(pc->st, OX_UNSUPPORTED, "%s: channels_last needs group 1, not %lld",
					 pc->node->op_type, (long long) s->group);
	if (rc == OX_OK && s->group < 1)
		rc = ox_fail(pc->st, OX_INVALID_ARGUMENT, "%s: group is %lld, expected at least 1",
					 pc->node->op_type, (long long) s->group);
	if (rc != OX_OK || !pc->graph)
		return rc;

	/* constant weights (and weight zero point): pack them now */
	wdef = pc->node->n_inputs > wi && pc->node->inputs[wi] >= 0 &&
		pc->node->inputs[wi] < pc->graph->n_values ? ox_node_input_def(pc->graph, pc->node, wi) : NULL;
	zdef = pc->node->n_inputs > zi && pc->node->inputs[zi] >= 0 &&
		pc->node->inputs[zi] < pc->graph->n_values ? ox_node_input_def(pc->graph, pc->node, zi) : NULL;
	w = wdef ? wdef->init : NULL;
	if (zdef)
	{
		if (!zdef->init)
			return OX_OK;		/* a computed zero point: pack at run time */
		wzp = zdef->init;
	}
	if (!w || !nn_is_quant8(w->dtype) || w->rank < 3 || w->dims[0] % s->group != 0 ||
		ox_tensor_numel(w) <= 0)
		return OX_OK;
	if (wzp && (wzp->dtype != w->dtype ||
				(ox_tensor_numel(wzp) != 1 && ox_tensor_numel(wzp) != w->dims[0])))
		return OX_OK;			/* the run reports it */
	OX_TRY(pack_weights(w, wzp, s->group, &s->packed, pc->st));
	if (s->group == 1 && w->rank <= 4)
	{
		int64_t		dw = s->win.n_dilations > 0 ? s->win.dilations[s->win.n_dilations - 1] : 1;

		s->kxq = use_kx_quads(w->dims[1], w->dims[w->rank - 1], dw);
		OX_TRY(pack_nhwc(w, wzp, s->kxq, &s->nhwc, pc->st));
		s->have_nhwc = true;
	}
	s->n_packed = s->group;
	s->packed_src = w->data;
	s->packed_zp_src = wzp ? wzp->data : NULL;
	return OX_OK;
}

void
nn_conv_int_free(void *state)
{
	conv_int_state *s = state;

	if (!s)
		return;
	free_packed(s);
	ox_qgemm_weights_free(&s->nhwc);
	ox_qgemm_cols_free(&s->cols);
	free(s);
}

/* a zero point or scale: one value, or (per_channel) one per output channel */
static ox_code
check_param(const char *op, const char *name, const ox_tensor *p, int64_t channels,
			bool per_channel, ox_dtype want, bool want_float, ox_status *st)
{
	char		buf[NN_SHAPE_LEN];
	int64_t		n;

	if (!p)
		return OX_OK;
	if (want_float ? !ox_dtype_is_float(p->dtype) : p->dtype != want)
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: %s has type %s, expected %s", op, name,
					   ox_dtype_name(p->dtype), want_float ? "a float type" : ox_dtype_name(want));
	n = ox_tensor_numel(p);
	if (n == 1 || (per_channel && p->rank == 1 && n == channels))
		return OX_OK;
	return ox_fail(st, OX_INVALID_ARGUMENT, "%s: %s has shape %s, expected a scalar%s",
				   op, name, nn_shape(p, buf),
				   per_channel ? " or one value per output channel" : "");
}

static ox_code
check_quant_inputs(const char *op, const ox_tensor *x, const ox_tensor *w, ox_status *st)
{
	if (!x || !w)
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: inputs x and w are required", op);
	if (!nn_is_quant8(x->dtype) || !nn_is_quant8(w->dtype))
		return ox_fail(st, OX_UNSUPPORTED, "%s: x is %s and w is %s, expected uint8 or int8",
					   op, ox_dtype_name(x->dtype), ox_dtype_name(w->dtype));
	return OX_OK;
}

/*
 * One im2col row: input channel plane xc at kernel tap (kd, kh, kw), for
 * every output position; positions in the padding get pad.
 */
static void
im2col_row(const uint8_t *xc, const nn_geom *g, int64_t kd, int64_t kh, int64_t kw, uint8_t pad,
		   uint8_t *row)
{
	int64_t		off2 = kw * g->d[2] - g->pb[2];
	int64_t		lo,
				hi;

	nn_valid_range(g->out[2], g->s[2], off2, g->in[2], &lo, &hi);
	for (int64_t od = 0; od < g->out[0]; od++)
	{
		int64_t		id = od * g->s[0] + kd * g->d[0] - g->pb[0];

		for (int64_t oh = 0; oh < g->out[1]; oh++)
		{
			int64_t		ih = oh * g->s[1] + kh * g->d[1] - g->pb[1];
			uint8_t    *dst = row + (od * g->out[1] + oh) * g->out[2];
			const uint8_t *src;

			if (id < 0 || id >= g->in[0] || ih < 0 || ih >= g->in[1])
			{
				memset(dst, pad, (size_t) g->out[2]);
				continue;
			}
			src = xc + (id * g->in[1] + ih) * g->in[2] + off2;
			memset(dst, pad, (size_t) lo);
			if (g->s[2] == 1)
				memcpy(dst + lo, src + lo, (size_t) (hi - lo));
			else
				for (int64_t ow = lo; ow < hi; ow++)
					dst[ow] = src[ow * g->s[2]];
			memset(dst + hi, pad, (size_t) (g->out[2] - hi));
		}
	}
}

static bool
is_pointwise(const nn_geom *g)
{
	for (int i = 0; i < NN_MAX_SPATIAL; i++)
		if (g->k[i] != 1 || g->s[i] != 1 || g->pb[i] != 0 || g->pe[i] != 0)
			return false;
	return true;
}

/*
 * Unroll one image's group of input channels into s->cols: reduction row
 * k = (ci, kd, kh, kw), column = output position.  rowbuf holds 4 rows.
 */
static ox_code
unroll_input(conv_int_state *s, const nn_conv_shape *cs, const ox_tensor *x, int64_t n,
			 int64_t g, uint8_t pad, uint8_t *rowbuf, ox_status *st)
{
	const nn_geom *geo = &cs->g;
	int64_t		cg = cs->c / cs->group;
	int64_t		k = cg * geo->k_size;
	int64_t		p = geo->out_size;
	bool		direct = is_pointwise(geo);
	uint8_t		flip = x->dtype == OX_INT8 ? 0x80 : 0;
	const uint8_t *base = (const uint8_t *) x->data + (n * cs->c + g * cg) * geo->in_size;

	for (int64_t q = 0; q * 4 < k; q++)
	{
		const uint8_t *rows[4];

		for (int t = 0; t < 4; t++)
		{
			int64_t		kk = q * 4 + t;
			int64_t		ci,
						tap;

			if (kk >= k)
			{
				rows[t] = NULL;
				continue;
			}
			ci = kk / geo->k_size;
			tap = kk % geo->k_size;
			if (direct)
				rows[t] = base + ci * geo->in_size;
			else
			{
				uint8_t    *r = rowbuf + t * p;

				im2col_row(base + ci * geo->in_size, geo, tap / (geo->k[1] * geo->k[2]),
						   (tap / geo->k[2]) % geo->k[1], tap % geo->k[2], pad, r);
				rows[t] = r;
			}
		}
		ox_qgemm_cols_put(&s->cols, q, rows, flip);
	}
	(void) st;
	return OX_OK;
}

/* a 1-D or 2-D window: the leading spatial axis of the geometry is unused */
static bool
is_2d(const nn_geom *g)
{
	return g->in[0] == 1 && g->out[0] == 1 && g->k[0] == 1;
}

static bool
has_padding(const nn_geom *g)
{
	return g->pb[1] || g->pe[1] || g->pb[2] || g->pe[2];
}

/*
 * Unroll a 1-D/2-D convolution's input without an im2col copy: the rows of
 * the reduction are windows of the input planes (padded once into padbuf
 * when the convolution pads), handed to the packer with their strides.
 */
static void
unroll_2d(conv_int_state *s, const nn_conv_shape *cs, const ox_tensor *x, int64_t n, int64_t g,
		  uint8_t pad, uint8_t *padbuf)
{
	const nn_geom *geo = &cs->g;
	int64_t		cg = cs->c / cs->group;
	int64_t		k = cg * geo->k_size;
	int64_t		hp = geo->in[1] + geo->pb[1] + geo->pe[1];
	int64_t		wp = geo->in[2] + geo->pb[2] + geo->pe[2];
	uint8_t		flip = x->dtype == OX_INT8 ? 0x80 : 0;
	const uint8_t *base = (const uint8_t *) x->data + (n * cs->c + g * cg) * geo->in_size;
	const uint8_t *planes = base;
	int64_t		plane = geo->in_size;

	if (padbuf)
	{
		memset(padbuf, pad, (size_t) (cg * hp * wp));
		for (int64_t ci = 0; ci < cg; ci++)
			for (int64_t ih = 0; ih < geo->in[1]; ih++)
				memcpy(padbuf + ci * hp * wp + (ih + geo->pb[1]) * wp + geo->pb[2],
					   base + ci * geo->in_size + ih * geo->in[2], (size_t) geo->in[2]);
		planes = padbuf;
		plane = hp * wp;
	}
	for (int64_t q = 0; q * 4 < k; q++)
	{
		const uint8_t *rows[4];

		for (int t = 0; t < 4; t++)
		{
			int64_t		kk = q * 4 + t;
			int64_t		tap = kk % geo->k_size;

			rows[t] = kk >= k ? NULL :
				planes + (kk / geo->k_size) * plane + (tap / geo->k[2]) * geo->d[1] * wp +
				(tap % geo->k[2]) * geo->d[2];
		}
		ox_qgemm_cols_put2d(&s->cols, q, rows, geo->out[2], geo->s[1] * wp, geo->s[2], flip);
	}
}

/*
 * One channels-last image [H, W, C] into the padded buffer of the gathered
 * path: pixels of c4 bytes (c4 > 0), or, for kernel-row quads (c4 == 0),
 * planes [C, hp, wp].  The borders keep the caller's padding value.
 */
static void
fill_from_nhwc(uint8_t *img, const uint8_t *x, const nn_geom *g, int64_t c, int64_t c4,
			   int64_t hp, int64_t wp, uint8_t flip)
{
	for (int64_t ih = 0; ih < g->in[1]; ih++)
	{
		const uint8_t *sr = x + ih * g->in[2] * c;

		if (c4 == 0)
		{
			for (int64_t iw = 0; iw < g->in[2]; iw++)
				for (int64_t ci = 0; ci < c; ci++)
					img[(ci * hp + ih + g->pb[1]) * wp + g->pb[2] + iw] = sr[iw * c + ci] ^ flip;
			continue;
		}
		{
			uint8_t    *dr = img + ((ih + g->pb[1]) * wp + g->pb[2]) * c4;

			if (c4 == c && !flip)
				memcpy(dr, sr, (size_t) (g->in[2] * c));
			else
				for (int64_t iw = 0; iw < g->in[2]; iw++)
					for (int64_t ci = 0; ci < c; ci++)
						dr[iw * c4 + ci] = sr[iw * c + ci] ^ flip;
		}
	}
}

/*
 * One image (NCHW, or NHWC when channels_last) into the gathered path's
 * padded buffer: pixels of c4 bytes, or planes for kernel-row quads (kxq).
 * Padding takes the zero point (flipped like the data), and meets zero
 * weights.
 */
static void
fill_image(uint8_t *img, const uint8_t *xi, const nn_geom *g, int64_t c, int64_t c4, int64_t kx4,
		   int64_t hp, int64_t wp, uint8_t pad, uint8_t flip, bool kxq, bool channels_last)
{
	memset(img, pad, (size_t) (hp * wp * (kxq ? c : c4) + kx4));
	if (channels_last)
		fill_from_nhwc(img, xi, g, c, kxq ? 0 : c4, hp, wp, flip);
	else if (kxq)
		for (int64_t ci = 0; ci < c; ci++)
			for (int64_t ih = 0; ih < g->in[1]; ih++)
			{
				const uint8_t *sr = xi + ci * g->in_size + ih * g->in[2];
				uint8_t    *dr = img + (ci * hp + ih + g->pb[1]) * wp + g->pb[2];

				for (int64_t iw = 0; iw < g->in[2]; iw++)
					dr[iw] = sr[iw] ^ flip;
			}
	else
		for (int64_t ih = 0; ih < g->in[1]; ih++)
			ox_qgemm_transpose_u8(xi + ih * g->in[2], c, g->in[2], g->in_size,
								  img + ((ih + g->pb[1]) * wp + g->pb[2]) * c4, c4, flip);
}

/*
 * Group-1 1-D/2-D convolutions as a rows product without im2col: the image
 * is transposed once into a padded channels-last buffer (channels padded to
 * a multiple of 4), every output position then reads its window straight
 * from there (ox_qgemm_rows_gather), and the channels-last result is
 * transposed back into the NCHW output.
 */
static ox_code
conv_gathered(ox_kernel_ctx *ctx, const char *op, const nn_conv_shape *cs, const ox_tensor *x,
			  int32_t zx, uint8_t pad, const ox_qgemm_weights *w, bool kxq,
			  const ox_qgemm_epi *ep, bool channels_last, ox_tensor *y)
{
	const nn_geom *g = &cs->g;
	int64_t		c = cs->c,
				m = cs->m;
	int64_t		c4 = (c + 3) / 4 * 4;
	int64_t		kx4 = (g->k[2] + 3) / 4 * 4;
	int64_t		hp = g->in[1] + g->pb[1] + g->pe[1];
	int64_t		wp = g->in[2] + g->pb[2] + g->pe[2];
	int64_t		p = g->out_size;
	int			taps = (int) (kxq ? c * g->k[1] : g->k[1] * g->k[2]);
	size_t		esize = ep->kind == OX_QG_OUT_Q8 ? 1 : 4;
	uint8_t		flip = x->dtype == OX_INT8 ? 0x80 : 0;
	/*
	 * A channels-last image without padding whose pixels are whole quads is
	 * read where it is (the gather reads 4 bytes at a time, never past a
	 * pixel); otherwise it is copied into a padded buffer, where kernel-row
	 * quads may read up to kx4 bytes past a row: slack at the end.
	 */
	bool		direct = channels_last && !kxq && c4 == c && !flip && hp == g->in[1] && wp == g->in[2];
	uint8_t    *img = direct ? NULL : nn_scratch(hp * wp * (kxq ? c : c4) + kx4 + 64, 1, ctx->st, op);
	bool		have_img = direct || img;
	/* channels-last output: the product is written in place */
	uint8_t    *res = !have_img ? NULL : channels_last ? NULL : nn_scratch(p * m, esize, ctx->st, op);
	int64_t    *row_off = have_img && (channels_last || res) ?
		ox_workspace_alloc(sizeof(int64_t) * (size_t) (p + taps), ctx->st, "ConvInteger") : NULL;
	int64_t    *tap_off = row_off ? row_off + p : NULL;
	ox_code		rc = OX_OK;

	if (!row_off)
	{
		ox_aligned_free(img);
		ox_aligned_free(res);
		return ctx->st->code != OX_OK ? ctx->st->code : ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: out of memory", op);
	}
	for (int64_t oy = 0, i = 0; oy < g->out[1]; oy++)
		for (int64_t ox = 0; ox < g->out[2]; ox++, i++)
			row_off[i] = (oy * g->s[1] * wp + ox * g->s[2]) * (kxq ? 1 : c4);
	for (int t = 0; t < taps; t++)
		tap_off[t] = kxq ? (t / g->k[1]) * hp * wp + (t % g->k[1]) * g->d[1] * wp :
			((t / g->k[2]) * g->d[1] * wp + (t % g->k[2]) * g->d[2]) * c4;
	for (int64_t n = 0; rc == OX_OK && n < cs->n; n++)
	{
		const uint8_t *xi = (const uint8_t *) x->data + n * c * g->in_size;
		char	   *yi = (char *) y->data + n * m * p * esize;

		if (ox_kernel_should_abort(ctx))
		{
			rc = ox_fail(ctx->st, OX_CANCELED, "%s: canceled", op);
			break;
		}
		if (!direct)
			fill_image(img, xi, g, c, c4, kx4, hp, wp, pad ^ flip, flip, kxq, channels_last);
		rc = ox_qgemm_rows_gather(ctx, p, direct ? xi : img, row_off, tap_off, taps, kxq ? kx4 / 4 : c4 / 4,
								  x->dtype == OX_INT8 ? zx + 128 : zx, w, ep,
								  channels_last ? (void *) yi : (void *) res, m, ctx->st);
		if (rc != OX_OK || channels_last)
			continue;
		if (esize == 1)
			ox_qgemm_transpose_u8(res, p, m, m, (uint8_t *) yi, p, 0);
		else
			for (int64_t i = 0; i < p; i++)
				for (int64_t o = 0; o < m; o++)
					((int32_t *) yi)[o * p + i] = ((const int32_t *) res)[i * m + o];
	}
	free(row_off);
	ox_aligned_free(img);
	ox_aligned_free(res);
	return rc;
}

/*
 * The shared body: y = epilogue(conv(x - xzp, w - wzp)) per image and group.
 * mult and ibias are per output channel (NULL for ConvInteger).
 */
static ox_code
conv_int_compute(ox_kernel_ctx *ctx, const char *op, conv_int_state *s, const nn_conv_shape *cs,
				 const ox_tensor *x, const ox_tensor *xzp, const ox_tensor *w,
				 const ox_tensor *wzp, ox_qg_out kind, ox_dtype ydt, const float *mult,
				 const int32_t *ibias, int32_t yzp, ox_tensor *y)
{
	ox_qgemm_weights *packed = NULL;
	bool		own = false;
	int64_t		mg = cs->m / cs->group;
	int64_t		p = cs->g.out_size;
	int64_t		k = (cs->c / cs->group) * cs->g.k_size;
	int32_t		zx = xzp ? (int32_t) nn_quant8_at(xzp->data, xzp->dtype, 0) : 0;
	uint8_t		pad = xzp ? ((const uint8_t *) xzp->data)[0] : 0;
	uint8_t    *rowbuf = NULL;
	uint8_t    *padbuf = NULL;
	size_t		esize = kind == OX_QG_OUT_Q8 ? 1 : 4;
	ox_code		rc = OX_OK;

	if (ox_tensor_numel(y) == 0)
		return OX_OK;
	if (cs->group == 1 && is_2d(&cs->g))
	{
		ox_qgemm_weights tmp;
		const ox_qgemm_weights *wn = NULL;
		ox_qgemm_epi ep;

		bool		kxq;

		if (s->have_nhwc && w->data == s->packed_src && (wzp ? wzp->data : NULL) == s->packed_zp_src)
		{
			wn = &s->nhwc;
			kxq = s->kxq;
		}
		else
		{
			kxq = use_kx_quads(cs->c, cs->g.k[2], cs->g.d[2]);
			OX_TRY(pack_nhwc(w, wzp, kxq, &tmp, ctx->st));
			wn = &tmp;
		}
		memset(&ep, 0, sizeof(ep));
		ep.kind = kind;
		ep.q_dtype = ydt;
		ep.mult = mult;
		ep.ibias = ibias;
		ep.y_zp = yzp;
		rc = conv_gathered(ctx, op, cs, x, zx, pad, wn, kxq, &ep, s->channels_last, y);
		if (wn == &tmp)
			ox_qgemm_weights_free(&tmp);
		return rc;
	}
	if (s->channels_last)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: channels_last needs a 2-D convolution of group 1", op);
	if (s->packed && w->data == s->packed_src && s->n_packed == cs->group &&
		(wzp ? wzp->data : NULL) == s->packed_zp_src)
		packed = s->packed;
	else
	{
		OX_TRY(pack_weights(w, wzp, cs->group, &packed, ctx->st));
		own = true;
	}
	if (is_2d(&cs->g))
	{
		if (has_padding(&cs->g))
		{
			int64_t		cg = cs->c / cs->group;
			int64_t		hp = cs->g.in[1] + cs->g.pb[1] + cs->g.pe[1];
			int64_t		wp = cs->g.in[2] + cs->g.pb[2] + cs->g.pe[2];

			padbuf = nn_scratch(cg * hp * wp, 1, ctx->st, op);
			if (!padbuf)
				rc = ctx->st->code;
		}
	}
	else if (!is_pointwise(&cs->g))
	{
		rowbuf = nn_scratch(4 * p, 1, ctx->st, op);
		if (!rowbuf)
			rc = ctx->st->code;
	}
	for (int64_t n = 0; rc == OX_OK && n < cs->n; n++)
		for (int64_t g = 0; rc == OX_OK && g < cs->group; g++)
		{
			ox_qgemm_epi ep;

			if (ox_kernel_should_abort(ctx))
			{
				rc = ox_fail(ctx->st, OX_CANCELED, "%s: canceled", op);
				break;
			}
			/* int8 inputs are packed shifted into the unsigned domain */
			rc = ox_qgemm_cols_reset(&s->cols, p, k, x->dtype == OX_INT8 ? zx + 128 : zx, ctx->st);
			if (rc == OX_OK && is_2d(&cs->g))
				unroll_2d(s, cs, x, n, g, pad, padbuf);
			else if (rc == OX_OK)
				rc = unroll_input(s, cs, x, n, g, pad, rowbuf, ctx->st);
			if (rc == OX_OK && packed[g].has_zp)
				rc = ox_qgemm_cols_sums(&s->cols, ctx->st);
			if (rc != OX_OK)
				break;
			memset(&ep, 0, sizeof(ep));
			ep.kind = kind;
			ep.q_dtype = ydt;
			ep.mult = mult ? mult + g * mg : NULL;
			ep.ibias = ibias ? ibias + g * mg : NULL;
			ep.y_zp = yzp;
			rc = ox_qgemm_cols_run(ctx, &packed[g], &s->cols, &ep,
								   (char *) y->data + (n * cs->m + g * mg) * p * esize, p, ctx->st);
		}
	ox_aligned_free(rowbuf);
	ox_aligned_free(padbuf);
	if (own)
	{
		for (int64_t g = 0; g < cs->group; g++)
			ox_qgemm_weights_free(&packed[g]);
		free(packed);
	}
	return rc;
}

ox_code
nn_conv_integer_run(ox_kernel_ctx *ctx)
{
	const char *op = "ConvInteger";
	conv_int_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *w = ox_in_tensor(ctx, 1);
	const ox_tensor *xzp = ox_in_tensor(ctx, 2);
	const ox_tensor *wzp = ox_in_tensor(ctx, 3);
	nn_conv_shape cs;
	ox_tensor  *y;

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "%s: not prepared", op);
	OX_TRY(check_quant_inputs(op, x, w, ctx->st));
	OX_TRY(nn_conv_check(&s->win, s->group, op, x, w, NULL, &cs, ctx->st));
	OX_TRY(check_param(op, "x_zero_point", xzp, cs.m, false, x->dtype, false, ctx->st));
	OX_TRY(check_param(op, "w_zero_point", wzp, cs.m, true, w->dtype, false, ctx->st));
	if (!(y = ox_out_tensor(ctx, 0, OX_INT32, cs.y_rank, cs.y_dims)))
		return ctx->st->code;
	return conv_int_compute(ctx, op, s, &cs, x, xzp, w, wzp, OX_QG_OUT_I32, OX_INT32, NULL, NULL,
							0, y);
}

ox_code
nn_qlinear_conv_run(ox_kernel_ctx *ctx)
{
	const char *op = "QLinearConv";
	conv_int_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *xs = ox_in_tensor(ctx, 1);
	const ox_tensor *xzp = ox_in_tensor(ctx, 2);
	const ox_tensor *w = ox_in_tensor(ctx, 3);
	const ox_tensor *ws = ox_in_tensor(ctx, 4);
	const ox_tensor *wzp = ox_in_tensor(ctx, 5);
	const ox_tensor *ys = ox_in_tensor(ctx, 6);
	const ox_tensor *yzp = ox_in_tensor(ctx, 7);
	const ox_tensor *b = ox_in_tensor(ctx, 8);
	nn_conv_shape cs;
	ox_tensor	xv;
	const ox_tensor *x_nchw = x;
	double		xscale,
				yscale;
	ox_dtype	ydt;
	ox_tensor  *y;
	float	   *mult;
	bool		wvec;
	ox_code		rc;
	char		buf[NN_SHAPE_LEN];

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "%s: not prepared", op);
	OX_TRY(check_quant_inputs(op, x, w, ctx->st));
	if (s->channels_last)
	{
		/* check the shapes as NCHW: only the dims are read */
		if (x->rank != 4)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: channels_last X has shape %s, expected [N, H, W, C]",
						   op, nn_shape(x, buf));
		xv = *x;
		xv.dims[1] = x->dims[3];
		xv.dims[2] = x->dims[1];
		xv.dims[3] = x->dims[2];
		x_nchw = &xv;
	}
	OX_TRY(nn_conv_check(&s->win, s->group, op, x_nchw, w, NULL, &cs, ctx->st));
	if (s->channels_last)
	{
		int64_t		m = cs.y_dims[1];

		cs.y_dims[1] = cs.y_dims[2];
		cs.y_dims[2] = cs.y_dims[3];
		cs.y_dims[3] = m;
	}
	if (!xs || !ws || !ys)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: x_scale, w_scale and y_scale are required", op);
	OX_TRY(check_param(op, "x_scale", xs, cs.m, false, OX_FLOAT, true, ctx->st));
	OX_TRY(check_param(op, "w_scale", ws, cs.m, true, OX_FLOAT, true, ctx->st));
	OX_TRY(check_param(op, "y_scale", ys, cs.m, false, OX_FLOAT, true, ctx->st));
	OX_TRY(check_param(op, "x_zero_point", xzp, cs.m, false, x->dtype, false, ctx->st));
	OX_TRY(check_param(op, "w_zero_point", wzp, cs.m, true, w->dtype, false, ctx->st));
	ydt = yzp ? yzp->dtype : x->dtype;
	OX_TRY(check_param(op, "y_zero_point", yzp, cs.m, false, ydt, false, ctx->st));
	if (!nn_is_quant8(ydt))
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: y_zero_point is %s, expected uint8 or int8",
					   op, ox_dtype_name(ydt));
	if (b && (b->dtype != OX_INT32 || b->rank != 1 || b->dims[0] != cs.m))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: B is %s with shape %s, expected int32 [%lld]",
					   op, ox_dtype_name(b->dtype), nn_shape(b, buf), (long long) cs.m);
	OX_TRY(ox_quant_check_scale_tensor(ctx->st, op, "x_scale", xs, false));
	OX_TRY(ox_quant_check_scale_tensor(ctx->st, op, "w_scale", ws, false));
	OX_TRY(ox_quant_check_scale_tensor(ctx->st, op, "y_scale", ys, true));
	xscale = ox_tensor_get_double(xs, 0);
	yscale = ox_tensor_get_double(ys, 0);
	if (!(y = ox_out_tensor(ctx, 0, ydt, cs.y_rank, cs.y_dims)))
		return ctx->st->code;
	mult = malloc(sizeof(float) * (size_t) (cs.m + 1));
	if (!mult)
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: out of memory", op);
	wvec = ox_tensor_numel(ws) > 1;
	for (int64_t c = 0; c < cs.m; c++)
		mult[c] = (float) (xscale * ox_tensor_get_double(ws, wvec ? c : 0) / yscale);
	if (ox_quant_check_factors(ctx->st, op, mult, cs.m) != OX_OK)
	{
		free(mult);
		return ctx->st->code;
	}
	rc = conv_int_compute(ctx, op, s, &cs, x, xzp, w, wzp, OX_QG_OUT_Q8, ydt, mult,
						  b ? (const int32_t *) b->data : NULL,
						  yzp ? (int32_t) nn_quant8_at(yzp->data, yzp->dtype, 0) : 0, y);
	free(mult);
	return rc;
}
