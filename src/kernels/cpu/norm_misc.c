/*
 * norm_misc.c
 *	  LpNormalization, MeanVarianceNormalization and LRN.
 *
 * These compute in double (statistics) over float32/double data, with
 * float16/bfloat16 staged through float32 by nn_work_begin.  Loops keep
 * the innermost axis contiguous so that they vectorize.
 */
#include "kernels/cpu/nn.h"

#include <string.h>

/* element i of the work input as double */
static inline double
work_x(const nn_work *w, int64_t i)
{
	return w->dbl ? ((const double *) w->x)[i] : (double) ((const float *) w->x)[i];
}

static inline void
work_set_y(const nn_work *w, int64_t i, double v)
{
	if (w->dbl)
		((double *) w->y)[i] = v;
	else
		((float *) w->y)[i] = (float) v;
}

/* ---- LpNormalization ---------------------------------------------------- */

ox_code
nn_lp_normalization_run(ox_kernel_ctx *ctx)
{
	const char *op = "LpNormalization";
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	int64_t		axis = ox_attr_int(ctx->node, "axis", -1);
	int64_t		p = ox_attr_int(ctx->node, "p", 2);
	int64_t		outer,
				len,
				inner;
	double	   *acc;
	ox_tensor  *y;
	nn_work		w;

	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input is required", op);
	if (p != 1 && p != 2)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: p is %lld, expected 1 or 2", op, (long long) p);
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis >= x->rank)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: axis %lld is out of range for rank %d",
					   op, (long long) ox_attr_int(ctx->node, "axis", -1), x->rank);
	outer = ox_shape_numel((int) axis, x->dims);
	len = x->dims[axis];
	inner = ox_shape_numel(x->rank - (int) axis - 1, x->dims + axis + 1);
	if (!(y = ox_out_tensor(ctx, 0, x->dtype, x->rank, x->dims)))
		return ctx->st->code;
	OX_TRY(nn_work_begin(op, x, y, &w, ctx->st));
	if (!(acc = nn_scratch(inner, sizeof(double), ctx->st, op)))
		return nn_work_end(&w, y, ctx->st);
	for (int64_t o = 0; o < outer; o++)
	{
		int64_t		base = o * len * inner;

		memset(acc, 0, sizeof(double) * inner);
		for (int64_t l = 0; l < len; l++)
			for (int64_t i = 0; i < inner; i++)
			{
				double		v = work_x(&w, base + l * inner + i);

				acc[i] += p == 1 ? fabs(v) : v * v;
			}
		for (int64_t i = 0; i < inner; i++)
			acc[i] = p == 2 ? sqrt(acc[i]) : acc[i];
		/* a zero norm means a zero vector, which stays zero */
		for (int64_t l = 0; l < len; l++)
			for (int64_t i = 0; i < inner; i++)
			{
				int64_t		k = base + l * inner + i;

				work_set_y(&w, k, acc[i] != 0 ? work_x(&w, k) / acc[i] : 0);
			}
	}
	ox_aligned_free(acc);
	return nn_work_end(&w, y, ctx->st);
}

/* ---- MeanVarianceNormalization ------------------------------------------ */

/*
 * Statistics over the axes listed in "axes" (default [0, 2, 3]) for every
 * combination of the other axes; y = (x - mean) / (sqrt(var) + 1e-9), as the
 * ONNX function body defines it.  Elements are visited in row-major order
 * with an odometer that tracks each one's statistics slot.
 */
static void
mvn_pass(const nn_work *w, int rank, const int64_t *dims, const int64_t *gstr, int64_t n,
		 int pass, double *mean, double *var)
{
	int64_t		idx[OX_MAX_RANK] = {0};
	int64_t		goff = 0;

	for (int64_t i = 0; i < n; i++)
	{
		double		v = work_x(w, i);

		if (pass == 0)
			mean[goff] += v;
		else if (pass == 1)
			var[goff] += (v - mean[goff]) * (v - mean[goff]);
		else
			work_set_y(w, i, (v - mean[goff]) / (sqrt(var[goff]) + 1e-9));
		for (int a = rank - 1; a >= 0; a--)
		{
			goff += gstr[a];
			if (++idx[a] < dims[a])
				break;
			goff -= gstr[a] * dims[a];
			idx[a] = 0;
		}
	}
}

ox_code
nn_mvn_run(ox_kernel_ctx *ctx)
{
	const char *op = "MeanVarianceNormalization";
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	static const int64_t default_axes[] = {0, 2, 3};
	const int64_t *axes;
	int			naxes = ox_attr_ints(ctx->node, "axes", &axes);
	bool		reduce[OX_MAX_RANK] = {0};
	int64_t		gstr[OX_MAX_RANK],
				groups = 1,
				count = 1,
				n;
	double	   *mean,
			   *var;
	ox_tensor  *y;
	nn_work		w;

	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input is required", op);
	if (!ox_node_attr(ctx->node, "axes"))
	{
		axes = default_axes;
		naxes = 3;
	}
	for (int i = 0; i < naxes; i++)
	{
		int64_t		a = axes[i] < 0 ? axes[i] + x->rank : axes[i];

		if (a < 0 || a >= x->rank || reduce[a])
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: axis %lld is out of range or repeated for rank %d",
						   op, (long long) axes[i], x->rank);
		reduce[a] = true;
	}
	for (int a = x->rank - 1; a >= 0; a--)
	{
		if (reduce[a])
		{
			gstr[a] = 0;
			count *= x->dims[a];
		}
		else
		{
			gstr[a] = groups;
			groups *= x->dims[a];
		}
	}
	n = ox_tensor_numel(x);
	if (!(y = ox_out_tensor(ctx, 0, x->dtype, x->rank, x->dims)))
		return ctx->st->code;
	OX_TRY(nn_work_begin(op, x, y, &w, ctx->st));
	mean = nn_scratch(2 * groups, sizeof(double), ctx->st, op);
	if (mean && n > 0)
	{
		var = mean + groups;
		memset(mean, 0, sizeof(double) * 2 * groups);
		mvn_pass(&w, x->rank, x->dims, gstr, n, 0, mean, var);
		for (int64_t g = 0; g < groups; g++)
			mean[g] /= (double) count;
		mvn_pass(&w, x->rank, x->dims, gstr, n, 1, mean, var);
		for (int64_t g = 0; g < groups; g++)
			var[g] /= (double) count;
		mvn_pass(&w, x->rank, x->dims, gstr, n, 2, mean, var);
	}
	ox_aligned_free(mean);
	return nn_work_end(&w, y, ctx->st);
}

/* ---- LRN ---------------------------------------------------------------- */

/*
 * y = x / (bias + alpha / size * sum of x^2 over the channel window
 * [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)]) ^ beta
 */
ox_code
nn_lrn_run(ox_kernel_ctx *ctx)
{
	const char *op = "LRN";
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	int64_t		size = ox_attr_int(ctx->node, "size", 0);
	double		alpha = ox_attr_float(ctx->node, "alpha", 1e-4f);
	double		beta = ox_attr_float(ctx->node, "beta", 0.75f);
	double		bias = ox_attr_float(ctx->node, "bias", 1.0f);
	int64_t		n,
				c,
				plane,
				lo,
				hi;
	double	   *acc;
	ox_tensor  *y;
	nn_work		w;
	char		buf[NN_SHAPE_LEN];

	if (!x || x->rank < 2)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: X has shape %s, expected [N, C, ...]",
					   op, x ? nn_shape(x, buf) : "none");
	if (!ox_node_attr(ctx->node, "size") || size < 1 || size > ((int64_t) 1 << 30))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: size is %lld, expected a positive value",
					   op, (long long) size);
	n = x->dims[0];
	c = x->dims[1];
	plane = ox_shape_numel(x->rank - 2, x->dims + 2);
	lo = (size - 1) / 2;
	hi = size - 1 - lo;
	if (!(y = ox_out_tensor(ctx, 0, x->dtype, x->rank, x->dims)))
		return ctx->st->code;
	OX_TRY(nn_work_begin(op, x, y, &w, ctx->st));
	if (!(acc = nn_scratch(plane, sizeof(double), ctx->st, op)))
		return nn_work_end(&w, y, ctx->st);
	for (int64_t b = 0; b < n; b++)
		for (int64_t ch = 0; ch < c; ch++)
		{
			int64_t		first = ch - lo < 0 ? 0 : ch - lo;
			int64_t		last = ch + hi >= c ? c - 1 : ch + hi;
			int64_t		base = (b * c + ch) * plane;

			memset(acc, 0, sizeof(double) * plane);
			for (int64_t k = first; k <= last; k++)
				for (int64_t i = 0; i < plane; i++)
				{
					double		v = work_x(&w, (b * c + k) * plane + i);

					acc[i] += v * v;
				}
			for (int64_t i = 0; i < plane; i++)
				work_set_y(&w, base + i,
						   work_x(&w, base + i) / pow(bias + alpha / (double) size * acc[i], beta));
		}
	ox_aligned_free(acc);
	return nn_work_end(&w, y, ctx->st);
}
