/*
 * conv.c
 *	  Conv and ConvTranspose for float32, double and float16 (computed in
 *	  float32), and the conv family table (ConvInteger and QLinearConv live
 *	  in conv_int.c, window geometry in conv_geom.c).
 *
 * float32 Conv and FusedConv run on the fast paths of conv_fast.h where
 * the machine has AVX2 or AVX-512 (conv_gemm.c: implicit GEMM with the
 * bias, residual and activation applied in registers; conv_depthwise.c).
 * The portable path here defines the semantics and serves double, and
 * float elsewhere; per image and group it takes one of three routes:
 *	 - depthwise (one input channel per group): a direct loop per kernel tap
 *	   whose inner loop runs over a contiguous output row;
 *	 - pointwise (1x1 kernel, stride 1, no padding): the input already is
 *	   the column matrix, so a single GEMM;
 *	 - otherwise im2col into a [C/group * prod(k), prod(out)] buffer and a
 *	   GEMM with the [M/group, C/group * prod(k)] weights.
 * ConvTranspose is the adjoint: a GEMM with the transposed weights into a
 * column buffer, then col2im scatters it into the output.
 *
 * Windows are handled as 3-D (1-D and 2-D get size-1 leading axes), so one
 * loop nest serves every rank.  The loops compute, per kernel tap, the range
 * of output columns whose input is inside the image, so inner loops carry
 * no bounds checks and vectorize.
 */
#include "kernels/cpu/nn.h"
#include "kernels/cpu/fused_act.h"
#include "kernels/cpu/conv_fast.h"

#include <string.h>

/* ---- window loops, for float and double -------------------------------- */

/* col[(c, kd, kh, kw), (od, oh, ow)] = x[c, od*s - p + kd*d, ...] or 0 */
#define DEFINE_IM2COL(NAME, T) \
static void \
NAME(const nn_geom *g, int64_t channels, const T *x, T *col) \
{ \
	T		   *dst = col; \
	for (int64_t c = 0; c < channels; c++) \
	{ \
		const T    *xc = x + c * g->in_size; \
		for (int64_t kd = 0; kd < g->k[0]; kd++) \
		for (int64_t kh = 0; kh < g->k[1]; kh++) \
		for (int64_t kw = 0; kw < g->k[2]; kw++, dst += g->out_size) \
		{ \
			int64_t		woff = kw * g->d[2] - g->pb[2], lo, hi; \
			nn_valid_range(g->out[2], g->s[2], woff, g->in[2], &lo, &hi); \
			for (int64_t od = 0; od < g->out[0]; od++) \
			{ \
				int64_t		id = od * g->s[0] - g->pb[0] + kd * g->d[0]; \
				for (int64_t oh = 0; oh < g->out[1]; oh++) \
				{ \
					int64_t		ih = oh * g->s[1] - g->pb[1] + kh * g->d[1]; \
					T		   *d = dst + (od * g->out[1] + oh) * g->out[2]; \
					const T    *xr; \
					if (id < 0 || id >= g->in[0] || ih < 0 || ih >= g->in[1]) \
					{ \
						memset(d, 0, sizeof(T) * g->out[2]); \
						continue; \
					} \
					xr = xc + (id * g->in[1] + ih) * g->in[2] + woff; \
					for (int64_t ow = 0; ow < lo; ow++) \
						d[ow] = 0; \
					if (g->s[2] == 1) \
						memcpy(d + lo, xr + lo, sizeof(T) * (hi - lo)); \
					else \
						for (int64_t ow = lo; ow < hi; ow++) \
							d[ow] = xr[ow * g->s[2]]; \
					for (int64_t ow = hi; ow < g->out[2]; ow++) \
						d[ow] = 0; \
				} \
			} \
		} \
	} \
}

/* the adjoint of im2col: y[c, ...] += col[(c, k...), (o...)] */
#define DEFINE_COL2IM(NAME, T) \
static void \
NAME(const nn_geom *g, int64_t channels, const T *col, T *y) \
{ \
	const T    *src = col; \
	for (int64_t c = 0; c < channels; c++) \
	{ \
		T		   *yc = y + c * g->in_size; \
		for (int64_t kd = 0; kd < g->k[0]; kd++) \
		for (int64_t kh = 0; kh < g->k[1]; kh++) \
		for (int64_t kw = 0; kw < g->k[2]; kw++, src += g->out_size) \
		{ \
			int64_t		woff = kw * g->d[2] - g->pb[2], lo, hi; \
			nn_valid_range(g->out[2], g->s[2], woff, g->in[2], &lo, &hi); \
			for (int64_t od = 0; od < g->out[0]; od++) \
			{ \
				int64_t		id = od * g->s[0] - g->pb[0] + kd * g->d[0]; \
				if (id < 0 || id >= g->in[0]) \
					continue; \
				for (int64_t oh = 0; oh < g->out[1]; oh++) \
				{ \
					int64_t		ih = oh * g->s[1] - g->pb[1] + kh * g->d[1]; \
					const T    *s = src + (od * g->out[1] + oh) * g->out[2]; \
					T		   *yr; \
					if (ih < 0 || ih >= g->in[1]) \
						continue; \
					yr = yc + (id * g->in[1] + ih) * g->in[2] + woff; \
					for (int64_t ow = lo; ow < hi; ow++) \
						yr[ow * g->s[2]] += s[ow]; \
				} \
			} \
		} \
	} \
}

/* y[out] = sum over taps of w[tap] * x[window(out, tap)] for one channel */
#define DEFINE_DEPTHWISE(NAME, T) \
static void \
NAME(const nn_geom *g, const T *x, const T *w, T *y) \
{ \
	const T    *wt = w; \
	memset(y, 0, sizeof(T) * g->out_size); \
	for (int64_t kd = 0; kd < g->k[0]; kd++) \
	for (int64_t kh = 0; kh < g->k[1]; kh++) \
	for (int64_t kw = 0; kw < g->k[2]; kw++, wt++) \
	{ \
		T			wv = *wt; \
		int64_t		woff = kw * g->d[2] - g->pb[2], lo, hi; \
		nn_valid_range(g->out[2], g->s[2], woff, g->in[2], &lo, &hi); \
		for (int64_t od = 0; od < g->out[0]; od++) \
		{ \
			int64_t		id = od * g->s[0] - g->pb[0] + kd * g->d[0]; \
			if (id < 0 || id >= g->in[0]) \
				continue; \
			for (int64_t oh = 0; oh < g->out[1]; oh++) \
			{ \
				int64_t		ih = oh * g->s[1] - g->pb[1] + kh * g->d[1]; \
				T		   *yr = y + (od * g->out[1] + oh) * g->out[2]; \
				const T    *xr; \
				if (ih < 0 || ih >= g->in[1]) \
					continue; \
				xr = x + (id * g->in[1] + ih) * g->in[2] + woff; \
				if (g->s[2] == 1) \
					for (int64_t ow = lo; ow < hi; ow++) \
						yr[ow] += wv * xr[ow]; \
				else \
					for (int64_t ow = lo; ow < hi; ow++) \
						yr[ow] += wv * xr[ow * g->s[2]]; \
			} \
		} \
	} \
}

#define DEFINE_ADD_BIAS(NAME, T) \
static void \
NAME(T *y, const T *b, int64_t n, int64_t m, int64_t size) \
{ \
	for (int64_t i = 0; i < n; i++) \
		for (int64_t c = 0; c < m; c++) \
		{ \
			T		   *yc = y + (i * m + c) * size; \
			T			bv = b[c]; \
			for (int64_t j = 0; j < size; j++) \
				yc[j] += bv; \
		} \
}

DEFINE_IM2COL(im2col_f32, float)
DEFINE_IM2COL(im2col_f64, double)
DEFINE_COL2IM(col2im_f32, float)
DEFINE_COL2IM(col2im_f64, double)
DEFINE_DEPTHWISE(depthwise_f32, float)
DEFINE_DEPTHWISE(depthwise_f64, double)
DEFINE_ADD_BIAS(add_bias_f32, float)
DEFINE_ADD_BIAS(add_bias_f64, double)

/* ---- Conv --------------------------------------------------------------- */

ox_code
nn_conv_check(const nn_window *w, int64_t group, const char *op, const ox_tensor *x,
			  const ox_tensor *wt, const ox_tensor *b, nn_conv_shape *cs, ox_status *st)
{
	char		sx[NN_SHAPE_LEN],
				sw[NN_SHAPE_LEN],
				sb[NN_SHAPE_LEN];
	int			nsp;

	if (!x || !wt)
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: inputs X and W are required", op);
	if (x->rank < 3 || wt->rank != x->rank)
		return ox_fail(st, OX_INVALID_ARGUMENT,
					   "%s: X has shape %s and W has shape %s, expected equal ranks of at least 3",
					   op, nn_shape(x, sx), nn_shape(wt, sw));
	nsp = x->rank - 2;
	cs->n = x->dims[0];
	cs->wpack = NULL;
	cs->c = x->dims[1];
	cs->m = wt->dims[0];
	cs->group = group;
	if (group < 1 || cs->c % group != 0 || cs->m % group != 0)
		return ox_fail(st, OX_INVALID_ARGUMENT,
					   "%s: group %lld does not divide the %lld input and %lld output channels (X %s, W %s)",
					   op, (long long) group, (long long) cs->c, (long long) cs->m,
					   nn_shape(x, sx), nn_shape(wt, sw));
	if (wt->dims[1] * group != cs->c)
		return ox_fail(st, OX_INVALID_ARGUMENT,
					   "%s: W has shape %s with %lld channels per group, times group %lld is not the %lld channels of X %s",
					   op, nn_shape(wt, sw), (long long) wt->dims[1], (long long) group,
					   (long long) cs->c, nn_shape(x, sx));
	if (b && (b->rank != 1 || b->dims[0] != cs->m))
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: B has shape %s, expected [%lld]",
					   op, nn_shape(b, sb), (long long) cs->m);
	OX_TRY(nn_window_resolve(w, op, nsp, x->dims + 2, wt->dims + 2, &cs->g, st));
	cs->y_rank = x->rank;
	cs->y_dims[0] = cs->n;
	cs->y_dims[1] = cs->m;
	for (int i = 0; i < nsp; i++)
		cs->y_dims[2 + i] = cs->g.out[NN_MAX_SPATIAL - nsp + i];
	if (ox_shape_numel(cs->y_rank, cs->y_dims) < 0 ||
		ox_shape_numel(2, (int64_t[]) {wt->dims[1], cs->g.k_size}) < 0)
		return ox_fail(st, OX_LIMIT_EXCEEDED, "%s: output of X %s and W %s is too large",
					   op, nn_shape(x, sx), nn_shape(wt, sw));
	return OX_OK;
}

static bool
conv_is_pointwise(const nn_geom *g)
{
	for (int i = 0; i < NN_MAX_SPATIAL; i++)
		if (g->k[i] != 1 || g->s[i] != 1 || g->pb[i] != 0 || g->pe[i] != 0)
			return false;
	return true;
}

typedef struct depthwise_job
{
	const nn_conv_shape *cs;
	const void *x;
	const void *w;
	void	   *y;
	bool		dbl;
} depthwise_job;

/* channels [begin, end) of all images: output channel oc reads input channel oc / (M / C) */
static void
depthwise_range(void *arg, int64_t begin, int64_t end)
{
	const depthwise_job *j = arg;
	const nn_geom *g = &j->cs->g;
	int64_t		mg = j->cs->m / j->cs->group;

	for (int64_t t = begin; t < end; t++)
	{
		int64_t		n = t / j->cs->m,
					oc = t % j->cs->m,
					ic = oc / mg;

		if (j->dbl)
			depthwise_f64(g, (const double *) j->x + (n * j->cs->c + ic) * g->in_size,
						  (const double *) j->w + oc * g->k_size, (double *) j->y + t * g->out_size);
		else
			depthwise_f32(g, (const float *) j->x + (n * j->cs->c + ic) * g->in_size,
						  (const float *) j->w + oc * g->k_size, (float *) j->y + t * g->out_size);
	}
}

#define DEFINE_CONV(NAME, T, GEMM, IM2COL, BIAS, DBL) \
static ox_code \
NAME(const nn_conv_shape *cs, const T *x, const T *w, const T *b, T *y, ox_status *st) \
{ \
	const nn_geom *g = &cs->g; \
	int64_t		cg = cs->c / cs->group, \
				mg = cs->m / cs->group, \
				kk = cg * g->k_size; \
	bool		pointwise = conv_is_pointwise(g); \
	T		   *col = NULL; \
	if (cs->n * cs->m * g->out_size == 0) \
		return OX_OK; \
	if (!nn_blas_fits(mg, g->out_size, kk)) \
		return ox_fail(st, OX_LIMIT_EXCEEDED, "Conv: a group GEMM of %lld x %lld x %lld is too large", \
					   (long long) mg, (long long) g->out_size, (long long) kk); \
	if (cg == 1 && cs->group > 1) \
	{ \
		depthwise_job job = {cs, x, w, y, DBL}; \
		depthwise_range(&job, 0, cs->n * cs->m); \
	} \
	else \
	{ \
		if (!pointwise && !(col = nn_scratch(ox_shape_numel(2, (int64_t[]) {kk, g->out_size}), \
											 sizeof(T), st, "Conv im2col"))) \
			return st->code; \
		for (int64_t n = 0; n < cs->n; n++) \
			for (int64_t gi = 0; gi < cs->group; gi++) \
			{ \
				const T    *xg = x + (n * cs->c + gi * cg) * g->in_size; \
				const T    *wg = w + gi * mg * kk; \
				T		   *yg = y + (n * cs->m + gi * mg) * g->out_size; \
				if (!pointwise) \
					IM2COL(g, cg, xg, col); \
				GEMM(false, false, mg, g->out_size, kk, 1, wg, kk, pointwise ? xg : col, \
					 g->out_size, 0, yg, g->out_size); \
			} \
		ox_aligned_free(col); \
	} \
	if (b) \
		BIAS(y, b, cs->n, cs->m, g->out_size); \
	return OX_OK; \
}

/* the portable paths: they define the semantics the fast paths must match */
DEFINE_CONV(conv_portable_f32, float, nn_sgemm, im2col_f32, add_bias_f32, false)
DEFINE_CONV(conv_portable_f64, double, nn_dgemm, im2col_f64, add_bias_f64, true)

ox_code
nn_conv_f32(const nn_conv_shape *cs, const float *x, const float *w, const float *b, float *y,
			ox_status *st)
{
	if (nn_conv_fast_isa() != NN_ISA_NONE)
	{
		nn_conv_epi epi;

		memset(&epi, 0, sizeof(epi));
		epi.bias = b;
		return nn_conv_fast_f32(ox_kernel_current(), cs, cs->wpack, x, w, &epi, y, st);
	}
	return conv_portable_f32(cs, x, w, b, y, st);
}

ox_code
nn_conv_f64(const nn_conv_shape *cs, const double *x, const double *w, const double *b, double *y,
			ox_status *st)
{
	return conv_portable_f64(cs, x, w, b, y, st);
}

typedef struct conv_state
{
	nn_window	win;
	int64_t		group;
	/* Conv with constant float weights: packed for the fast GEMM path */
	nn_convw   *wpack;
	nn_activation act;			/* FusedConv only */
	/* ConvTranspose only */
	int			n_output_padding;
	int64_t		output_padding[OX_MAX_RANK];
	int			n_output_shape;
	int64_t		output_shape[OX_MAX_RANK + 2];
} conv_state;

static void
conv_free(void *state)
{
	conv_state *s = state;

	if (s)
		nn_convw_free(s->wpack);
	free(s);
}

/*
 * A constant float W is packed once, in the layout of the path that will
 * run it (conv_fast.h), chosen from the input shape shape inference gives
 * (the batch size does not matter; without a known spatial size the GEMM
 * path's layout).  Depthwise convolutions read W as it is.
 */
static ox_code
pack_conv_weights(ox_prepare_ctx *pc, conv_state *s)
{
	const ox_value_def *def = (pc->graph && pc->node->n_inputs > 1 &&
							   pc->node->inputs[1] >= 0 &&
							   pc->node->inputs[1] < pc->graph->n_values)
		? ox_node_input_def(pc->graph, pc->node, 1) : NULL;
	const ox_value_def *xd = (def && pc->node->inputs[0] >= 0 && pc->node->inputs[0] < pc->graph->n_values)
		? ox_node_input_def(pc->graph, pc->node, 0) : NULL;
	const ox_tensor *w = def ? def->init : NULL;
	ox_tensor	x;
	nn_conv_shape cs;
	ox_status	ignore;

	if (!w || w->dtype != OX_FLOAT || w->rank < 3 || ox_tensor_numel(w) <= 0 ||
		w->dims[0] % s->group != 0 || nn_conv_fast_isa() == NN_ISA_NONE)
		return OX_OK;
	if (w->dims[1] == 1 && s->group > 1)
		return OX_OK;
	/* a stand-in X of the inferred shape (batch 1, no data) to resolve the window */
	memset(&x, 0, sizeof(x));
	x.dtype = OX_FLOAT;
	x.rank = w->rank;
	x.dims[0] = 1;
	x.dims[1] = w->dims[1] * s->group;
	for (int i = 2; xd && xd->type.kind == OX_TYPE_TENSOR && xd->type.rank == w->rank && i < w->rank; i++)
		x.dims[i] = xd->type.dims[i].value;
	ox_status_clear(&ignore);
	if (xd && xd->type.kind == OX_TYPE_TENSOR && xd->type.rank == w->rank &&
		ox_shape_numel(w->rank, x.dims) > 0 &&
		nn_conv_check(&s->win, s->group, "Conv", &x, w, NULL, &cs, &ignore) == OX_OK)
		s->wpack = nn_convw_pack_for(&cs, w->data, pc->st);
	else
		s->wpack = nn_convw_pack(s->group, w->dims[0], ox_tensor_numel(w) / w->dims[0], w->data, pc->st);
	return s->wpack ? OX_OK : pc->st->code;
}

static ox_code
conv_prepare(ox_prepare_ctx *pc)
{
	conv_state *s = calloc(1, sizeof(*s));
	const int64_t *v;
	int			n;
	ox_code		rc;

	if (!s)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s: could not allocate state", pc->node->op_type);
	rc = nn_window_parse(pc->node, &s->win, false, pc->st);
	s->group = ox_attr_int(pc->node, "group", 1);
	if (rc == OX_OK && s->group < 1)
		rc = ox_fail(pc->st, OX_INVALID_ARGUMENT, "%s: group is %lld, expected at least 1",
					 pc->node->op_type, (long long) s->group);
	n = ox_attr_ints(pc->node, "output_padding", &v);
	if (rc == OX_OK && n > OX_MAX_RANK)
		rc = ox_fail(pc->st, OX_INVALID_ARGUMENT, "%s: output_padding has %d values", pc->node->op_type, n);
	for (int i = 0; rc == OX_OK && i < n; i++)
	{
		if (v[i] < 0 || v[i] > ((int64_t) 1 << 31))
			rc = ox_fail(pc->st, OX_INVALID_ARGUMENT, "%s: output_padding value %lld is invalid",
						 pc->node->op_type, (long long) v[i]);
		s->output_padding[i] = v[i];
	}
	s->n_output_padding = n;
	n = ox_attr_ints(pc->node, "output_shape", &v);
	if (rc == OX_OK && n > OX_MAX_RANK + 2)
		rc = ox_fail(pc->st, OX_INVALID_ARGUMENT, "%s: output_shape has %d values", pc->node->op_type, n);
	for (int i = 0; rc == OX_OK && i < n; i++)
	{
		if (v[i] < 0 || v[i] > OX_MAX_ELEMENTS)
			rc = ox_fail(pc->st, OX_INVALID_ARGUMENT, "%s: output_shape value %lld is invalid",
						 pc->node->op_type, (long long) v[i]);
		s->output_shape[i] = v[i];
	}
	s->n_output_shape = n;
	if (rc == OX_OK && strcmp(pc->node->op_type, "FusedConv") == 0)
		rc = nn_activation_parse(pc->node, &s->act, pc->st);
	if (rc == OX_OK && (strcmp(pc->node->op_type, "Conv") == 0 || strcmp(pc->node->op_type, "FusedConv") == 0))
		rc = pack_conv_weights(pc, s);
	if (rc != OX_OK)
	{
		conv_free(s);
		return rc;
	}
	pc->state = s;
	return OX_OK;
}


static ox_code
check_float_types(const char *op, const ox_tensor *x, const ox_tensor *w, const ox_tensor *b,
				  ox_status *st)
{
	if (!x || !w)
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: inputs X and W are required", op);
	if (!(x->dtype == OX_FLOAT || x->dtype == OX_DOUBLE || x->dtype == OX_FLOAT16))
		return ox_fail(st, OX_UNSUPPORTED, "%s: type %s is not supported (float, double, float16)",
					   op, ox_dtype_name(x->dtype));
	if (w->dtype != x->dtype || (b && b->dtype != x->dtype))
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: X is %s but W is %s%s%s", op,
					   ox_dtype_name(x->dtype), ox_dtype_name(w->dtype),
					   b ? " and B is " : "", b ? ox_dtype_name(b->dtype) : "");
	return OX_OK;
}

/*
 * float16: stage X, W, B through float32 and compute with fn, which writes
 * a float32 result of ny elements.
 */
typedef ox_code (*staged_fn) (const void *shape, const float *x, const float *w, const float *b,
							  float *y, ox_status *st);

static ox_code
run_staged(const void *shape, staged_fn fn, const ox_tensor *x, const ox_tensor *w,
		   const ox_tensor *b, ox_tensor *y, ox_status *st)
{
	int64_t		ny = ox_tensor_numel(y);
	float	   *fx = nn_to_float(x, st),
			   *fw = fx ? nn_to_float(w, st) : NULL,
			   *fb = (fw && b) ? nn_to_float(b, st) : NULL,
			   *fy = (fw && (!b || fb)) ? nn_scratch(ny, sizeof(float), st, "float16 staging") : NULL;
	ox_code		rc = st->code;

	if (fy && (rc = fn(shape, fx, fw, fb, fy, st)) == OX_OK)
		rc = nn_store_float(y, fy, ny, st);
	ox_aligned_free(fx);
	ox_aligned_free(fw);
	ox_aligned_free(fb);
	ox_aligned_free(fy);
	return rc;
}

static ox_code
conv_staged(const void *shape, const float *x, const float *w, const float *b, float *y,
			ox_status *st)
{
	return nn_conv_f32(shape, x, w, b, y, st);
}

/*
 * Conv and FusedConv: Y = act(conv(X, W) + B + Z); Z and act only for
 * FusedConv (act NULL: none).
 */
static ox_code
conv_compute(ox_kernel_ctx *ctx, const char *op, const nn_activation *act)
{
	const conv_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *w = ox_in_tensor(ctx, 1);
	const ox_tensor *b = ox_in_tensor(ctx, 2);
	const ox_tensor *z = act ? ox_in_tensor(ctx, 3) : NULL;
	nn_conv_shape cs;
	ox_tensor  *y;
	int64_t		ny;

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "%s: not prepared", op);
	if (act && ox_has_input(ctx, 3) && !z)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: Z is not a tensor", op);
	OX_TRY(check_float_types(op, x, w, b, ctx->st));
	OX_TRY(nn_conv_check(&s->win, s->group, op, x, w, b, &cs, ctx->st));
	if (z)
	{
		char		sz[NN_SHAPE_LEN],
					sy[NN_SHAPE_LEN];

		if (z->dtype != x->dtype)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: Z is %s but X is %s", op,
						   ox_dtype_name(z->dtype), ox_dtype_name(x->dtype));
		if (z->rank != cs.y_rank || memcmp(z->dims, cs.y_dims, sizeof(int64_t) * cs.y_rank) != 0)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: Z has shape %s but the output has shape %s",
						   op, nn_shape(z, sz), ox_shape_str(cs.y_rank, cs.y_dims, sy, sizeof(sy)));
	}
	if (act && x->dtype == OX_FLOAT16)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: type %s is not supported", op, ox_dtype_name(x->dtype));
	if (!(y = ox_out_tensor(ctx, 0, x->dtype, cs.y_rank, cs.y_dims)))
		return ctx->st->code;
	ny = ox_tensor_numel(y);
	if (x->dtype == OX_FLOAT && nn_conv_fast_isa() != NN_ISA_NONE)
	{
		nn_conv_epi epi;

		memset(&epi, 0, sizeof(epi));
		epi.bias = b ? b->data : NULL;
		epi.z = z ? z->data : NULL;
		if (act)
			epi.act = *act;
		return nn_conv_fast_f32(ctx, &cs, s->wpack, x->data, w->data, &epi, y->data, ctx->st);
	}
	if (x->dtype == OX_FLOAT)
	{
		float	   *yd = y->data;

		OX_TRY(conv_portable_f32(&cs, x->data, w->data, b ? b->data : NULL, yd, ctx->st));
		if (z)
			for (int64_t i = 0; i < ny; i++)
				yd[i] += ((const float *) z->data)[i];
		if (act)
			nn_activation_apply_f32(ctx, act, yd, ny);
		return OX_OK;
	}
	if (x->dtype == OX_DOUBLE)
	{
		double	   *yd = y->data;

		OX_TRY(conv_portable_f64(&cs, x->data, w->data, b ? b->data : NULL, yd, ctx->st));
		if (z)
			for (int64_t i = 0; i < ny; i++)
				yd[i] += ((const double *) z->data)[i];
		if (act)
			nn_activation_apply_f64(act, yd, ny);
		return OX_OK;
	}
	return run_staged(&cs, conv_staged, x, w, b, y, ctx->st);
}

static ox_code
conv_run(ox_kernel_ctx *ctx)
{
	return conv_compute(ctx, "Conv", NULL);
}

/*
 * com.microsoft FusedConv: act(Conv(X, W, B) + Z), as onnxruntime defines
 * it.  The optimizer makes it from Conv -> activation (fuse_activation.c)
 * and from Conv -> Add [-> activation] (fuse_conv_add.c, Z the other
 * addend, of the output's shape).
 */
static ox_code
fused_conv_run(ox_kernel_ctx *ctx)
{
	const conv_state *s = ctx->state;

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "FusedConv: not prepared");
	return conv_compute(ctx, "FusedConv", &s->act);
}

/* ---- ConvTranspose ------------------------------------------------------ */

/*
 * The col2im geometry g runs "backwards": g->in is the ConvTranspose
 * output (what col2im writes) and g->out its input, with the same kernel,
 * strides, dilations and pads.
 */
typedef struct convt_shape
{
	nn_geom		g;
	int64_t		n,
				c,
				m,
				group;
	int			y_rank;
	int64_t		y_dims[2 + NN_MAX_SPATIAL];
} convt_shape;

static ox_code
convt_check(const conv_state *s, const ox_tensor *x, const ox_tensor *w, const ox_tensor *b,
			convt_shape *ts, ox_status *st)
{
	const char *op = "ConvTranspose";
	const nn_window *win = &s->win;
	char		sx[NN_SHAPE_LEN],
				sw[NN_SHAPE_LEN],
				sb[NN_SHAPE_LEN];
	int			nsp,
				off;
	nn_geom    *g = &ts->g;

	if (x->rank < 3 || w->rank != x->rank)
		return ox_fail(st, OX_INVALID_ARGUMENT,
					   "%s: X has shape %s and W has shape %s, expected equal ranks of at least 3",
					   op, nn_shape(x, sx), nn_shape(w, sw));
	nsp = x->rank - 2;
	if (nsp > NN_MAX_SPATIAL)
		return ox_fail(st, OX_UNSUPPORTED, "%s: %d spatial dimensions are not supported (1 to %d)",
					   op, nsp, NN_MAX_SPATIAL);
	off = NN_MAX_SPATIAL - nsp;
	ts->n = x->dims[0];
	ts->c = x->dims[1];
	ts->group = s->group;
	if (w->dims[0] != ts->c || ts->c % s->group != 0)
		return ox_fail(st, OX_INVALID_ARGUMENT,
					   "%s: W has shape %s but X has shape %s: W needs %lld input channels divisible by group %lld",
					   op, nn_shape(w, sw), nn_shape(x, sx), (long long) ts->c, (long long) s->group);
	ts->m = w->dims[1] * s->group;
	if (b && (b->rank != 1 || b->dims[0] != ts->m))
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: B has shape %s, expected [%lld]",
					   op, nn_shape(b, sb), (long long) ts->m);
	if (win->n_kernel && (win->n_kernel != nsp || memcmp(win->kernel, w->dims + 2, sizeof(int64_t) * nsp) != 0))
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: kernel_shape does not match W %s", op, nn_shape(w, sw));
	if ((win->n_strides && win->n_strides != nsp) || (win->n_dilations && win->n_dilations != nsp) ||
		(win->n_pads && win->n_pads != 2 * nsp) ||
		(s->n_output_padding && s->n_output_padding != nsp) ||
		(s->n_output_shape && s->n_output_shape != nsp && s->n_output_shape != nsp + 2))
		return ox_fail(st, OX_INVALID_ARGUMENT,
					   "%s: strides, dilations, pads, output_padding or output_shape do not fit %d spatial dimensions",
					   op, nsp);

	for (int c = 0; c < NN_MAX_SPATIAL; c++)
	{
		g->in[c] = g->out[c] = g->k[c] = g->s[c] = g->d[c] = 1;
		g->pb[c] = g->pe[c] = 0;
	}
	g->nsp = nsp;
	for (int i = 0; i < nsp; i++)
	{
		int			c = off + i;
		int64_t		in = x->dims[2 + i],
					k = w->dims[2 + i],
					st_ = win->n_strides ? win->strides[i] : 1,
					d = win->n_dilations ? win->dilations[i] : 1,
					adj = s->n_output_padding ? s->output_padding[i] : 0,
					dk,
					full,
					pb = 0,
					pe = 0,
					out;

		if (k < 1 || k > ((int64_t) 1 << 31) || in < 1 || in > OX_MAX_ELEMENTS)
			return ox_fail(st, OX_INVALID_ARGUMENT, "%s: X %s and W %s have an invalid spatial size",
						   op, nn_shape(x, sx), nn_shape(w, sw));
		/* strides and dilations are at most 2^31 (nn_window_parse), sizes 2^40 */
		if (in - 1 > OX_MAX_ELEMENTS / st_ || (s->n_output_shape == 0 && in > OX_MAX_ELEMENTS / st_))
			return ox_fail(st, OX_LIMIT_EXCEEDED, "%s: X %s with stride %lld gives a too large output",
						   op, nn_shape(x, sx), (long long) st_);
		dk = (k - 1) * d + 1;
		full = st_ * (in - 1) + adj + dk;
		if (s->n_output_shape || win->auto_pad == NN_PAD_SAME_UPPER || win->auto_pad == NN_PAD_SAME_LOWER)
		{
			int64_t		total;

			out = s->n_output_shape ? s->output_shape[s->n_output_shape - nsp + i] : in * st_;
			total = full - out;
			if (out < 1)
				return ox_fail(st, OX_INVALID_ARGUMENT,
							   "%s: output size %lld on spatial axis %d is invalid", op, (long long) out, i);
			if (total < 0)
			{
				/*
				 * a larger output than the input covers: the tail gets only
				 * the bias, as TensorFlow's SAME transposed convolution
				 * (stride above the kernel's extent) does.  onnxruntime
				 * rejects such an output_shape and shortens a SAME output;
				 * the ONNX reference splits the negative padding over both
				 * ends
				 */
				pb = 0;
				pe = total;
			}
			else
			{
				pb = win->auto_pad == NN_PAD_SAME_UPPER ? total / 2 : total - total / 2;
				pe = total - pb;
			}
		}
		else
		{
			if (win->auto_pad == NN_PAD_NOTSET && win->n_pads)
			{
				pb = win->pads[i];
				pe = win->pads[nsp + i];
			}
			out = full - pb - pe;
			if (out < 1)
				return ox_fail(st, OX_INVALID_ARGUMENT,
							   "%s: pads %lld + %lld on spatial axis %d leave no output (unpadded size %lld)",
							   op, (long long) pb, (long long) pe, i, (long long) full);
		}
		g->in[c] = out;
		g->out[c] = in;
		g->k[c] = k;
		g->s[c] = st_;
		g->d[c] = d;
		g->pb[c] = pb;
		g->pe[c] = pe;
		ts->y_dims[2 + i] = out;
	}
	g->in_size = ox_shape_numel(NN_MAX_SPATIAL, g->in);
	g->out_size = ox_shape_numel(NN_MAX_SPATIAL, g->out);
	g->k_size = ox_shape_numel(NN_MAX_SPATIAL, g->k);
	ts->y_rank = x->rank;
	ts->y_dims[0] = ts->n;
	ts->y_dims[1] = ts->m;
	if (g->in_size < 0 || g->out_size < 0 || g->k_size < 0 ||
		ox_shape_numel(ts->y_rank, ts->y_dims) < 0 ||
		ox_shape_numel(3, (int64_t[]) {w->dims[1], g->k_size, g->out_size}) < 0)
		return ox_fail(st, OX_LIMIT_EXCEEDED, "%s: sizes of X %s and W %s overflow", op,
					   nn_shape(x, sx), nn_shape(w, sw));
	return OX_OK;
}

#define DEFINE_CONVT(NAME, T, GEMM, COL2IM, BIAS) \
static ox_code \
NAME(const convt_shape *ts, const T *x, const T *w, const T *b, T *y, ox_status *st) \
{ \
	const nn_geom *g = &ts->g; \
	int64_t		cg = ts->c / ts->group, \
				mg = ts->m / ts->group, \
				rows = mg * g->k_size; \
	T		   *col; \
	int64_t		ny = ts->n * ts->m * g->in_size; \
	if (ny == 0) \
		return OX_OK; \
	memset(y, 0, sizeof(T) * ny); \
	if (!nn_blas_fits(rows, g->out_size, cg)) \
		return ox_fail(st, OX_LIMIT_EXCEEDED, "ConvTranspose: a group GEMM of %lld x %lld x %lld is too large", \
					   (long long) rows, (long long) g->out_size, (long long) cg); \
	if (!(col = nn_scratch(rows * g->out_size, sizeof(T), st, "ConvTranspose col2im"))) \
		return st->code; \
	for (int64_t n = 0; n < ts->n; n++) \
		for (int64_t gi = 0; gi < ts->group; gi++) \
		{ \
			const T    *xg = x + (n * ts->c + gi * cg) * g->out_size; \
			const T    *wg = w + gi * cg * rows; \
			T		   *yg = y + (n * ts->m + gi * mg) * g->in_size; \
			GEMM(true, false, rows, g->out_size, cg, 1, wg, rows, xg, g->out_size, 0, col, g->out_size); \
			COL2IM(g, mg, col, yg); \
		} \
	ox_aligned_free(col); \
	if (b) \
		BIAS(y, b, ts->n, ts->m, g->in_size); \
	return OX_OK; \
}

DEFINE_CONVT(convt_f32, float, nn_sgemm, col2im_f32, add_bias_f32)
DEFINE_CONVT(convt_f64, double, nn_dgemm, col2im_f64, add_bias_f64)

static ox_code
convt_staged(const void *shape, const float *x, const float *w, const float *b, float *y,
			 ox_status *st)
{
	return convt_f32(shape, x, w, b, y, st);
}

static ox_code
conv_transpose_run(ox_kernel_ctx *ctx)
{
	const conv_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *w = ox_in_tensor(ctx, 1);
	const ox_tensor *b = ox_in_tensor(ctx, 2);
	convt_shape ts;
	ox_tensor  *y;

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "ConvTranspose: not prepared");
	OX_TRY(check_float_types("ConvTranspose", x, w, b, ctx->st));
	OX_TRY(convt_check(s, x, w, b, &ts, ctx->st));
	if (!(y = ox_out_tensor(ctx, 0, x->dtype, ts.y_rank, ts.y_dims)))
		return ctx->st->code;
	if (x->dtype == OX_FLOAT)
		return convt_f32(&ts, x->data, w->data, b ? b->data : NULL, y->data, ctx->st);
	if (x->dtype == OX_DOUBLE)
		return convt_f64(&ts, x->data, w->data, b ? b->data : NULL, y->data, ctx->st);
	return run_staged(&ts, convt_staged, x, w, b, y, ctx->st);
}

/* ---- family table ------------------------------------------------------- */

const ox_kernel_def ox_kernels_conv[] = {
	{"", "Conv", 1, conv_prepare, conv_run, conv_free},
	{"com.microsoft", "FusedConv", 1, conv_prepare, fused_conv_run, conv_free},
	{"", "ConvTranspose", 1, conv_prepare, conv_transpose_run, conv_free},
	{"", "ConvInteger", 10, nn_conv_int_prepare, nn_conv_integer_run, nn_conv_int_free},
	{"", "QLinearConv", 10, nn_conv_int_prepare, nn_qlinear_conv_run, nn_conv_int_free},
	/* onnxruntime's contrib form, with the channels_last attribute */
	{"com.microsoft", "QLinearConv", 1, nn_conv_int_prepare, nn_qlinear_conv_run, nn_conv_int_free},
};
const int	ox_kernels_conv_count = OX_KERNEL_COUNT(ox_kernels_conv);
