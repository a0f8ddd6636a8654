/*
 * conv_int.c
 *	  ConvInteger and QLinearConv.
 *
 * Both widen the 8-bit operands to double with their zero points removed
 * and run the double convolution of conv.c: integer sums are exact in
 * double (|x - zx| * |w - zw| <= 65025 per term, so exact for any reduction
 * shorter than 2^37 terms), so the int32 accumulations equal an integer
 * implementation's.  QLinearConv then adds the int32 bias and requantizes
 * per output channel, rounding half to even and saturating.
 */
#include "kernels/cpu/nn.h"

typedef struct conv_int_state
{
	nn_window	win;
	int64_t		group;
} conv_int_state;

ox_code
nn_conv_int_prepare(ox_prepare_ctx *pc)
{
	conv_int_state *s = calloc(1, sizeof(*s));
	ox_code		rc;

	if (!s)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s: could not allocate state", pc->node->op_type);
	rc = nn_window_parse(pc->node, &s->win, false, pc->st);
	s->group = ox_attr_int(pc->node, "group", 1);
	if (rc == OX_OK && s->group < 1)
		rc = ox_fail(pc->st, OX_INVALID_ARGUMENT, "%s: group is %lld, expected at least 1",
					 pc->node->op_type, (long long) s->group);
	if (rc != OX_OK)
	{
		free(s);
		return rc;
	}
	pc->state = s;
	return OX_OK;
}

void
nn_conv_int_free(void *state)
{
	free(state);
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

/* widen X (scalar zero point) and W (per-tensor or per-channel zero point) */
static ox_code
widen_inputs(const char *op, const nn_conv_shape *cs, const ox_tensor *x, const ox_tensor *xzp,
			 const ox_tensor *w, const ox_tensor *wzp, double **xd, double **wd, ox_status *st)
{
	int64_t		nx = ox_tensor_numel(x),
				nw = ox_tensor_numel(w),
				per = cs->m > 0 ? nw / cs->m : 0;
	double		zx = xzp ? nn_quant8_at(xzp->data, xzp->dtype, 0) : 0;
	bool		wvec = wzp && ox_tensor_numel(wzp) > 1;

	*xd = nn_scratch(nx, sizeof(double), st, op);
	*wd = *xd ? nn_scratch(nw, sizeof(double), st, op) : NULL;
	if (!*wd)
	{
		ox_aligned_free(*xd);
		*xd = NULL;
		return st->code;
	}
	for (int64_t i = 0; i < nx; i++)
		(*xd)[i] = nn_quant8_at(x->data, x->dtype, i) - zx;
	for (int64_t i = 0; i < nw; i++)
	{
		double		zw = wzp ? nn_quant8_at(wzp->data, wzp->dtype, wvec ? i / per : 0) : 0;

		(*wd)[i] = nn_quant8_at(w->data, w->dtype, i) - zw;
	}
	return OX_OK;
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

ox_code
nn_conv_integer_run(ox_kernel_ctx *ctx)
{
	const char *op = "ConvInteger";
	const conv_int_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *w = ox_in_tensor(ctx, 1);
	const ox_tensor *xzp = ox_in_tensor(ctx, 2);
	const ox_tensor *wzp = ox_in_tensor(ctx, 3);
	nn_conv_shape cs;
	double	   *xd,
			   *wd,
			   *yd;
	ox_tensor  *y;
	int64_t		ny;
	ox_code		rc;

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "%s: not prepared", op);
	OX_TRY(check_quant_inputs(op, x, w, ctx->st));
	OX_TRY(nn_conv_check(&s->win, s->group, op, x, w, NULL, &cs, ctx->st));
	OX_TRY(check_param(op, "x_zero_point", xzp, cs.m, false, x->dtype, false, ctx->st));
	OX_TRY(check_param(op, "w_zero_point", wzp, cs.m, true, w->dtype, false, ctx->st));
	if (!(y = ox_out_tensor(ctx, 0, OX_INT32, cs.y_rank, cs.y_dims)))
		return ctx->st->code;
	ny = ox_tensor_numel(y);
	OX_TRY(widen_inputs(op, &cs, x, xzp, w, wzp, &xd, &wd, ctx->st));
	if ((yd = nn_scratch(ny, sizeof(double), ctx->st, op)) != NULL &&
		(rc = nn_conv_f64(&cs, xd, wd, NULL, yd, ctx->st)) == OX_OK)
	{
		int32_t    *yo = y->data;

		for (int64_t i = 0; i < ny; i++)
			yo[i] = (int32_t) (uint32_t) (int64_t) yd[i];
	}
	rc = ctx->st->code;
	ox_aligned_free(xd);
	ox_aligned_free(wd);
	ox_aligned_free(yd);
	return rc;
}

ox_code
nn_qlinear_conv_run(ox_kernel_ctx *ctx)
{
	const char *op = "QLinearConv";
	const conv_int_state *s = ctx->state;
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
	double	   *xd,
			   *wd,
			   *yd;
	double		xscale,
				yscale,
				yzero;
	ox_dtype	ydt;
	ox_tensor  *y;
	int64_t		ny,
				plane;
	char		buf[NN_SHAPE_LEN];

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "%s: not prepared", op);
	OX_TRY(check_quant_inputs(op, x, w, ctx->st));
	OX_TRY(nn_conv_check(&s->win, s->group, op, x, w, NULL, &cs, ctx->st));
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
	xscale = ox_tensor_get_double(xs, 0);
	yscale = ox_tensor_get_double(ys, 0);
	if (!(yscale != 0) || !isfinite(yscale))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: y_scale is %g, expected a finite non-zero value",
					   op, yscale);
	yzero = yzp ? nn_quant8_at(yzp->data, yzp->dtype, 0) : 0;
	if (!(y = ox_out_tensor(ctx, 0, ydt, cs.y_rank, cs.y_dims)))
		return ctx->st->code;
	ny = ox_tensor_numel(y);
	plane = cs.g.out_size;
	OX_TRY(widen_inputs(op, &cs, x, xzp, w, wzp, &xd, &wd, ctx->st));
	if ((yd = nn_scratch(ny, sizeof(double), ctx->st, op)) != NULL &&
		nn_conv_f64(&cs, xd, wd, NULL, yd, ctx->st) == OX_OK)
	{
		bool		wvec = ox_tensor_numel(ws) > 1;

		for (int64_t i = 0; i < ny; i++)
		{
			int64_t		ch = (i / plane) % cs.m;
			double		acc = yd[i] + (b ? (double) ((const int32_t *) b->data)[ch] : 0);
			double		mult = xscale * ox_tensor_get_double(ws, wvec ? ch : 0) / yscale;

			nn_store_quant8(y->data, ydt, i, acc * mult + yzero);
		}
	}
	ox_aligned_free(xd);
	ox_aligned_free(wd);
	ox_aligned_free(yd);
	return ctx->st->code;
}
