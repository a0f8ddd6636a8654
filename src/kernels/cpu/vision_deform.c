/*
 * vision_deform.c
 *	  DeformConv (opset 19+): N-D deformable convolution with offset groups,
 *	  an optional modulation mask and grouped weights.
 *
 * Each kernel tap samples the input at its regular position plus a learned
 * offset, by N-linear interpolation with zero outside the image (the ONNX
 * reference samples with GridSample, align_corners=1 and zero padding,
 * which is the same thing).  The sampled values, scaled by the mask, form
 * an im2col matrix [C * K, out_size]; each group is then one matrix
 * product with its weights.  The taps depend on the offset group, not on
 * the channel, so they are computed once per (offset group, tap, output
 * position) and applied to every channel of that offset group.
 */
#include "kernels/cpu/vision.h"
#include "kernels/cpu/sgemm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 2^D corner taps are built per sample; deeper inputs are refused */
#define DC_MAX_SPATIAL 6

typedef struct dc_geom
{
	int			nd;				/* spatial dims */
	int64_t		N,
				C,
				OC,
				group,
				ogroup;
	int64_t		in[OX_MAX_RANK];
	int64_t		k[OX_MAX_RANK];
	int64_t		out[OX_MAX_RANK];
	int64_t		stride[OX_MAX_RANK];
	int64_t		dil[OX_MAX_RANK];
	int64_t		pad_begin[OX_MAX_RANK];
	int64_t		K;				/* prod(k) */
	int64_t		S;				/* prod(out) */
	int64_t		in_size;		/* prod(in) */
} dc_geom;

/* read an optional per-axis ints attribute of length nd (or 2*nd for pads) */
static ox_code
dc_ints(ox_kernel_ctx *ctx, const char *name, int want, int64_t def, int64_t min, int64_t *out)
{
	const int64_t *v;
	int			n = ox_attr_ints(ctx->node, name, &v);

	if (n == 0)
	{
		for (int i = 0; i < want; i++)
			out[i] = def;
		return OX_OK;
	}
	if (n != want)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "DeformConv: %s has %d values, expected %d",
					   name, n, want);
	for (int i = 0; i < n; i++)
	{
		if (v[i] < min || v[i] > ((int64_t) 1 << 32))
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "DeformConv: %s[%d] = %lld is out of range",
						   name, i, (long long) v[i]);
		out[i] = v[i];
	}
	return OX_OK;
}

static ox_code
dc_check(ox_kernel_ctx *ctx, const ox_tensor *x, const ox_tensor *w, const ox_tensor *off,
		 const ox_tensor *bias, const ox_tensor *mask, dc_geom *g)
{
	char		b1[OX_VISION_SHAPE_LEN],
				b2[OX_VISION_SHAPE_LEN];
	int64_t		pads[2 * OX_MAX_RANK];
	const int64_t *ks;
	int			nks;

	memset(g, 0, sizeof(*g));
	if (!ox_dtype_is_float(x->dtype) || w->dtype != x->dtype || off->dtype != x->dtype ||
		(bias && bias->dtype != x->dtype) || (mask && mask->dtype != x->dtype))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "DeformConv: inputs must share one floating type, X is %s and W %s",
					   ox_dtype_name(x->dtype), ox_dtype_name(w->dtype));
	if (x->rank < 3 || x->rank - 2 > DC_MAX_SPATIAL || w->rank != x->rank || off->rank != x->rank)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "DeformConv: X %s, W %s must have the same rank, 3 to %d",
					   ox_shape_str(x->rank, x->dims, b1, sizeof(b1)),
					   ox_shape_str(w->rank, w->dims, b2, sizeof(b2)), DC_MAX_SPATIAL + 2);
	if (ox_tensor_numel(x) < 0 || ox_tensor_numel(w) < 0 || ox_tensor_numel(off) < 0 ||
		(mask && ox_tensor_numel(mask) < 0))
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "DeformConv: input too large");
	g->nd = x->rank - 2;
	g->N = x->dims[0];
	g->C = x->dims[1];
	g->OC = w->dims[0];
	g->group = ox_attr_int(ctx->node, "group", 1);
	g->ogroup = ox_attr_int(ctx->node, "offset_group", 1);
	if (g->group < 1 || g->ogroup < 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "DeformConv: group (%lld) and offset_group (%lld) must be positive",
					   (long long) g->group, (long long) g->ogroup);
	if (g->C % g->group != 0 || w->dims[1] * g->group != g->C || g->OC % g->group != 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "DeformConv: X has shape %s and W %s, inconsistent with group %lld",
					   ox_shape_str(x->rank, x->dims, b1, sizeof(b1)),
					   ox_shape_str(w->rank, w->dims, b2, sizeof(b2)), (long long) g->group);
	if (g->C % g->ogroup != 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "DeformConv: %lld input channels are not divisible by offset_group %lld",
					   (long long) g->C, (long long) g->ogroup);
	nks = ox_attr_ints(ctx->node, "kernel_shape", &ks);
	if (nks != 0 && nks != g->nd)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "DeformConv: kernel_shape has %d values, expected %d",
					   nks, g->nd);
	OX_TRY(dc_ints(ctx, "strides", g->nd, 1, 1, g->stride));
	OX_TRY(dc_ints(ctx, "dilations", g->nd, 1, 1, g->dil));
	OX_TRY(dc_ints(ctx, "pads", 2 * g->nd, 0, 0, pads));
	g->K = 1;
	g->S = 1;
	g->in_size = 1;
	for (int i = 0; i < g->nd; i++)
	{
		int64_t		span,
					expect;

		g->in[i] = x->dims[2 + i];
		g->k[i] = w->dims[2 + i];
		if (g->k[i] < 1)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "DeformConv: W has an empty kernel, shape %s",
						   ox_shape_str(w->rank, w->dims, b1, sizeof(b1)));
		if (nks && ks[i] != g->k[i])
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "DeformConv: kernel_shape[%d] = %lld but W has shape %s",
						   i, (long long) ks[i], ox_shape_str(w->rank, w->dims, b1, sizeof(b1)));
		g->out[i] = off->dims[2 + i];
		g->pad_begin[i] = pads[i];
		span = (g->k[i] - 1) * g->dil[i] + 1;
		expect = (g->in[i] + pads[i] + pads[g->nd + i] - span) / g->stride[i] + 1;
		if (g->in[i] + pads[i] + pads[g->nd + i] < span || expect != g->out[i])
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "DeformConv: offset has shape %s but the convolution output has %lld positions on axis %d",
						   ox_shape_str(off->rank, off->dims, b1, sizeof(b1)),
						   (long long) (g->in[i] + pads[i] + pads[g->nd + i] < span ? 0 : expect), 2 + i);
		g->K *= g->k[i];
		g->S *= g->out[i];
		g->in_size *= g->in[i];
	}
	if (off->dims[0] != g->N || off->dims[1] != g->ogroup * g->K * g->nd)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "DeformConv: offset has shape %s, expected [%lld, %lld, ...]",
					   ox_shape_str(off->rank, off->dims, b1, sizeof(b1)), (long long) g->N,
					   (long long) (g->ogroup * g->K * g->nd));
	if (mask)
	{
		bool		ok = mask->rank == x->rank && mask->dims[0] == g->N &&
			mask->dims[1] == g->ogroup * g->K;

		for (int i = 0; ok && i < g->nd; i++)
			ok = mask->dims[2 + i] == g->out[i];
		if (!ok)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "DeformConv: mask has shape %s, expected [%lld, %lld, <offset spatial dims>]",
						   ox_shape_str(mask->rank, mask->dims, b1, sizeof(b1)), (long long) g->N,
						   (long long) (g->ogroup * g->K));
	}
	if (bias && (bias->rank != 1 || bias->dims[0] != g->OC))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "DeformConv: B has shape %s, expected [%lld]",
					   ox_shape_str(bias->rank, bias->dims, b1, sizeof(b1)), (long long) g->OC);
	return OX_OK;
}

/*
 * Build the im2col matrix of batch item n into cols_f (float) or cols_d
 * (double): row (c * K + kidx), column s.
 */
static void
dc_im2col(const dc_geom *g, const ox_tensor *x, const ox_tensor *off, const ox_tensor *mask,
		  int64_t n, float *cols_f, double *cols_d)
{
	int			nd = g->nd;
	int			ncorner = 1 << nd;
	int64_t		in_strides[DC_MAX_SPATIAL];
	int64_t		c_per_og = g->C / g->ogroup;

	in_strides[nd - 1] = 1;
	for (int i = nd - 2; i >= 0; i--)
		in_strides[i] = in_strides[i + 1] * g->in[i + 1];

	for (int64_t og = 0; og < g->ogroup; og++)
	{
		for (int64_t kidx = 0; kidx < g->K; kidx++)
		{
			int64_t		kpos[DC_MAX_SPATIAL];
			int64_t		rem = kidx;

			for (int i = nd - 1; i >= 0; i--)
			{
				kpos[i] = rem % g->k[i];
				rem /= g->k[i];
			}
			for (int64_t s = 0; s < g->S; s++)
			{
				int64_t		opos[DC_MAX_SPATIAL];
				int64_t		lo[DC_MAX_SPATIAL];
				double		frac[DC_MAX_SPATIAL];
				int64_t		coff[1 << DC_MAX_SPATIAL];
				double		cw[1 << DC_MAX_SPATIAL];
				int			nc = 0;
				double		m = 1.0;
				bool		outside = false;

				rem = s;
				for (int i = nd - 1; i >= 0; i--)
				{
					opos[i] = rem % g->out[i];
					rem /= g->out[i];
				}
				if (mask)
					m = ox_load_real(mask->data, mask->dtype,
									 ((n * g->ogroup + og) * g->K + kidx) * g->S + s);
				for (int i = 0; i < nd && !outside; i++)
				{
					double		o = ox_load_real(off->data, off->dtype,
												 (((n * g->ogroup + og) * g->K + kidx) * nd + i) * g->S + s);
					double		p = (double) (opos[i] * g->stride[i] - g->pad_begin[i] + kpos[i] * g->dil[i]) + o;
					double		f;

					/* every tap out of the image (or NaN): a zero sample */
					if (!(p > -1.0 && p < (double) g->in[i]))
					{
						outside = true;
						break;
					}
					f = floor(p);
					lo[i] = (int64_t) f;
					frac[i] = p - f;
				}
				if (!outside)
				{
					for (int corner = 0; corner < ncorner; corner++)
					{
						int64_t		o = 0;
						double		w = m;
						bool		zero = false;

						for (int i = 0; i < nd; i++)
						{
							int			hi = (corner >> (nd - 1 - i)) & 1;
							int64_t		ix = lo[i] + hi;

							if (ix < 0 || ix >= g->in[i])
							{
								zero = true;
								break;
							}
							o += ix * in_strides[i];
							w *= hi ? frac[i] : 1.0 - frac[i];
						}
						if (!zero)
						{
							coff[nc] = o;
							cw[nc] = w;
							nc++;
						}
					}
				}
				for (int64_t c = og * c_per_og; c < (og + 1) * c_per_og; c++)
				{
					int64_t		xbase = (n * g->C + c) * g->in_size;
					double		v = 0;

					for (int q = 0; q < nc; q++)
						v += cw[q] * ox_load_real(x->data, x->dtype, xbase + coff[q]);
					if (cols_f)
						cols_f[(c * g->K + kidx) * g->S + s] = (float) v;
					else
						cols_d[(c * g->K + kidx) * g->S + s] = v;
				}
			}
		}
	}
}

ox_code
ox_vision_deform_conv_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *w = ox_in_tensor(ctx, 1);
	const ox_tensor *off = ox_in_tensor(ctx, 2);
	const ox_tensor *bias = ox_in_tensor(ctx, 3);
	const ox_tensor *mask = ox_in_tensor(ctx, 4);
	dc_geom		g;
	int64_t		dims[OX_MAX_RANK];
	int64_t		cols_n,
				icg,
				ocg,
				wrow;
	bool		dbl;
	float	   *cols_f = NULL,
			   *w_f = NULL,
			   *y_f = NULL;
	double	   *cols_d = NULL;
	ox_tensor  *y;
	ox_code		rc = OX_OK;

	if (!x || !w || !off)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "DeformConv: X, W and offset are required");
	OX_TRY(dc_check(ctx, x, w, off, bias, mask, &g));
	dims[0] = g.N;
	dims[1] = g.OC;
	for (int i = 0; i < g.nd; i++)
		dims[2 + i] = g.out[i];
	if (ox_shape_numel(x->rank, dims) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "DeformConv: output too large");
	if (!(y = ox_out_tensor(ctx, 0, x->dtype, x->rank, dims)))
		return ctx->st->code;
	if (ox_tensor_numel(y) == 0)
		return OX_OK;
	/* C, K and S are each below OX_MAX_ELEMENTS, so the checks cannot overflow */
	if (g.C > 0 && (g.K > OX_MAX_ELEMENTS / g.C || g.C * g.K > OX_MAX_ELEMENTS / g.S))
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "DeformConv: im2col buffer too large");
	cols_n = g.C * g.K * g.S;
	icg = g.C / g.group;
	ocg = g.OC / g.group;
	wrow = icg * g.K;
	dbl = x->dtype == OX_DOUBLE;
	if (dbl)
		cols_d = ox_workspace_alloc(sizeof(double) * (cols_n > 0 ? cols_n : 1), ctx->st, "DeformConv");
	else
	{
		cols_f = ox_workspace_alloc(sizeof(float) * (cols_n > 0 ? cols_n : 1), ctx->st, "DeformConv");
		if (x->dtype != OX_FLOAT)
		{
			int64_t		nw = ox_tensor_numel(w);

			w_f = ox_workspace_alloc(sizeof(float) * (nw > 0 ? nw : 1), ctx->st, "DeformConv");
			y_f = ox_workspace_alloc(sizeof(float) * g.OC * g.S, ctx->st, "DeformConv");
			if (w_f)
				for (int64_t i = 0; i < nw; i++)
					w_f[i] = (float) ox_load_real(w->data, w->dtype, i);
		}
	}
	if ((dbl && !cols_d) || (!dbl && !cols_f) || (!dbl && x->dtype != OX_FLOAT && (!w_f || !y_f)))
	{
		rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "DeformConv: out of memory");
		goto done;
	}
	for (int64_t n = 0; n < g.N; n++)
	{
		dc_im2col(&g, x, off, mask, n, cols_f, cols_d);
		if (dbl)
		{
			const double *wd = OX_DATA(w, double);
			double	   *yd = OX_DATA(y, double) + n * g.OC * g.S;

			for (int64_t oc = 0; oc < g.OC; oc++)
			{
				int64_t		gi = oc / ocg;
				double		b = bias ? OX_DATA(bias, double)[oc] : 0.0;

				for (int64_t s = 0; s < g.S; s++)
					yd[oc * g.S + s] = b;
				for (int64_t r = 0; r < wrow; r++)
				{
					double		wv = wd[oc * wrow + r];
					const double *col = cols_d + (gi * wrow + r) * g.S;

					for (int64_t s = 0; s < g.S; s++)
						yd[oc * g.S + s] += wv * col[s];
				}
			}
		}
		else
		{
			const float *wf = w_f ? w_f : OX_DATA(w, float);
			float	   *yf = y_f ? y_f : OX_DATA(y, float) + n * g.OC * g.S;

			for (int64_t gi = 0; gi < g.group; gi++)
			{
				if (wrow == 0)
				{
					memset(yf + gi * ocg * g.S, 0, sizeof(float) * ocg * g.S);
					continue;
				}
				rc = ox_sgemm(ctx, false, false, ocg, g.S, wrow, 1.0f,
							  wf + gi * ocg * wrow, wrow,
							  cols_f + gi * wrow * g.S, g.S,
							  0.0f, yf + gi * ocg * g.S, g.S);
				if (rc != OX_OK)
					goto done;
			}
			for (int64_t oc = 0; oc < g.OC; oc++)
			{
				double		b = bias ? ox_load_real(bias->data, bias->dtype, oc) : 0.0;

				for (int64_t s = 0; s < g.S; s++)
				{
					if (y_f)
						ox_store_real(y->data, y->dtype, (n * g.OC + oc) * g.S + s,
									  (double) yf[oc * g.S + s] + b);
					else
						yf[oc * g.S + s] += (float) b;
				}
			}
		}
		if (ox_kernel_should_abort(ctx))
		{
			rc = ox_fail(ctx->st, OX_CANCELED, "DeformConv: canceled");
			goto done;
		}
	}
done:
	free(cols_f);
	free(cols_d);
	free(w_f);
	free(y_f);
	return rc;
}
