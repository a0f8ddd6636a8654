/*
 * norm.c
 *	  BatchNormalization, LayerNormalization, RMSNormalization,
 *	  InstanceNormalization and GroupNormalization, the float16 staging
 *	  helpers of the norm family, and the norm family table
 *	  (LpNormalization, MeanVarianceNormalization and LRN live in
 *	  norm_misc.c; com.microsoft SkipLayerNormalization in
 *	  attention_contrib.c).
 *
 * All of them are "statistics over a contiguous row, then an affine map":
 * rows are normalized with two passes (mean, then squared deviations) whose
 * float32 sums use eight partial accumulators (nn_sum_f32), and the final
 * map is folded to y = x * a + b per channel where the parameters allow, a
 * loop the compiler vectorizes.  float32 and double compute in their own
 * type; float16/bfloat16 are staged through float32.  Statistics outputs
 * (LayerNormalization Mean/InvStdDev) are float32 as the spec's stash type.
 *
 * float32 rows of LayerNormalization and RMSNormalization go through
 * nn_layer_norm_row_f32 (attention_contrib.c), vectorized with AVX-512
 * where the machine has it.
 */
#include "kernels/cpu/attention_contrib.h"
#include "kernels/cpu/nn.h"

#include <string.h>

/* ---- staging helpers ---------------------------------------------------- */

ox_code
nn_work_begin(const char *op, const ox_tensor *x, ox_tensor *y, nn_work *w, ox_status *st)
{
	memset(w, 0, sizeof(*w));
	w->ny = ox_tensor_numel(y);
	if (x->dtype == OX_FLOAT || x->dtype == OX_DOUBLE)
	{
		w->dbl = x->dtype == OX_DOUBLE;
		w->x = x->data;
		w->y = y->data;
		return OX_OK;
	}
	if (!nn_is_half(x->dtype))
		return ox_fail(st, OX_UNSUPPORTED, "%s: type %s is not supported (float, double, float16, bfloat16)",
					   op, ox_dtype_name(x->dtype));
	if (!(w->staged_x = nn_to_float(x, st)))
		return st->code;
	if (!(w->staged_y = nn_scratch(w->ny, sizeof(float), st, op)))
	{
		ox_aligned_free(w->staged_x);
		w->staged_x = NULL;
		return st->code;
	}
	w->x = w->staged_x;
	w->y = w->staged_y;
	return OX_OK;
}

ox_code
nn_work_end(nn_work *w, ox_tensor *y, ox_status *st)
{
	ox_code		rc = OX_OK;

	if (w->staged_y && st->code == OX_OK)
		rc = nn_store_float(y, w->staged_y, w->ny, st);
	ox_aligned_free(w->staged_x);
	ox_aligned_free(w->staged_y);
	w->staged_x = w->staged_y = NULL;
	return rc != OX_OK ? rc : st->code;
}

void *
nn_work_param(const nn_work *w, const ox_tensor *t, ox_status *st)
{
	int64_t		n = ox_tensor_numel(t);
	void	   *p = nn_scratch(n, w->dbl ? sizeof(double) : sizeof(float), st, "parameter");

	if (p && ox_convert_elements(p, w->dbl ? OX_DOUBLE : OX_FLOAT, t->data, t->dtype, n, st) != OX_OK)
	{
		ox_aligned_free(p);
		return NULL;
	}
	return p;
}

/* ---- row statistics ------------------------------------------------------ */

static void
stats_f32(const float *x, int64_t n, bool rms, double eps, float *mean, float *inv)
{
	float		m = 0,
				v;

	if (n == 0)
	{
		*mean = 0;
		*inv = (float) (1.0 / sqrt(eps));
		return;
	}
	if (!rms)
		m = nn_sum_f32(x, n) / (float) n;
	v = nn_sqdev_f32(x, n, m) / (float) n;
	*mean = m;
	*inv = (float) (1.0 / sqrt((double) v + eps));
}

static void
stats_f64(const double *x, int64_t n, bool rms, double eps, double *mean, double *inv)
{
	double		m = 0,
				v = 0;

	if (n > 0 && !rms)
	{
		for (int64_t i = 0; i < n; i++)
			m += x[i];
		m /= (double) n;
	}
	for (int64_t i = 0; i < n; i++)
		v += (x[i] - m) * (x[i] - m);
	v = n > 0 ? v / (double) n : 0;
	*mean = m;
	*inv = 1.0 / sqrt(v + eps);
}

/* y = x * a + b over n elements */
#define DEFINE_AFFINE(NAME, T) \
static inline void \
NAME(const T *x, T *y, int64_t n, T a, T b) \
{ \
	for (int64_t i = 0; i < n; i++) \
		y[i] = x[i] * a + b; \
}
DEFINE_AFFINE(affine_f32, float)
DEFINE_AFFINE(affine_f64, double)

static ox_code
check_vector(const char *op, const char *name, const ox_tensor *t, int64_t n, ox_status *st)
{
	char		buf[NN_SHAPE_LEN];

	if (!t)
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: input %s is required", op, name);
	if (t->rank != 1 || t->dims[0] != n)
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: %s has shape %s, expected [%lld]",
					   op, name, nn_shape(t, buf), (long long) n);
	if (!ox_dtype_is_float(t->dtype))
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: %s has type %s, expected a float type",
					   op, name, ox_dtype_name(t->dtype));
	return OX_OK;
}

static void
free_params(void **p, int n)
{
	for (int i = 0; i < n; i++)
		ox_aligned_free(p[i]);
}

/* ---- BatchNormalization ------------------------------------------------- */

static ox_code
batch_norm_run(ox_kernel_ctx *ctx)
{
	const char *op = "BatchNormalization";
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *in[4] = {ox_in_tensor(ctx, 1), ox_in_tensor(ctx, 2),
	ox_in_tensor(ctx, 3), ox_in_tensor(ctx, 4)};
	static const char *const names[4] = {"scale", "B", "input_mean", "input_var"};
	double		eps = ox_attr_float(ctx->node, "epsilon", 1e-5f);
	double		momentum = ox_attr_float(ctx->node, "momentum", 0.9f);
	int64_t		training = ctx->node->opset >= 14 ? ox_attr_int(ctx->node, "training_mode", 0) : 0;
	int64_t		spatial = ox_attr_int(ctx->node, "spatial", 1);
	int64_t		n,
				c,
				plane;
	void	   *p[4] = {0};
	nn_work		w;
	ox_tensor  *y;
	char		buf[NN_SHAPE_LEN];

	if (!x || x->rank < 2)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: X has shape %s, expected [N, C, ...]",
					   op, x ? nn_shape(x, buf) : "none");
	if (training != 0 && training != 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: training_mode is %lld, expected 0 or 1",
					   op, (long long) training);
	if (spatial != 1 && x->rank > 2)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: spatial=0 is not supported", op);
	if (ctx->node->opset < 14 && ctx->node->n_outputs > 1)
	{
		for (int i = 1; i < ctx->node->n_outputs; i++)
			if (ox_has_output(ctx, i))
				return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: training outputs before opset 14 are not supported", op);
	}
	n = x->dims[0];
	c = x->dims[1];
	plane = ox_shape_numel(x->rank - 2, x->dims + 2);
	for (int i = 0; i < 4; i++)
		OX_TRY(check_vector(op, names[i], in[i], c, ctx->st));
	if (!(y = ox_out_tensor(ctx, 0, x->dtype, x->rank, x->dims)))
		return ctx->st->code;
	OX_TRY(nn_work_begin(op, x, y, &w, ctx->st));
	for (int i = 0; i < 4; i++)
		if (!(p[i] = nn_work_param(&w, in[i], ctx->st)))
		{
			free_params(p, 4);
			return nn_work_end(&w, y, ctx->st);
		}

	if (training)
	{
		/* batch statistics per channel, population variance, then running averages */
		double	   *stat = nn_scratch(2 * c, sizeof(double), ctx->st, op);
		ox_tensor  *rm,
				   *rv;

		if (!stat)
		{
			free_params(p, 4);
			return nn_work_end(&w, y, ctx->st);
		}
		for (int64_t ch = 0; ch < c; ch++)
		{
			double		sum = 0,
						sq = 0,
						cnt = (double) (n * plane),
						mean;

			for (int64_t b = 0; b < n; b++)
				for (int64_t i = 0; i < plane; i++)
					sum += w.dbl ? ((const double *) w.x)[(b * c + ch) * plane + i]
						: ((const float *) w.x)[(b * c + ch) * plane + i];
			mean = cnt > 0 ? sum / cnt : 0;
			for (int64_t b = 0; b < n; b++)
				for (int64_t i = 0; i < plane; i++)
				{
					double		d = (w.dbl ? ((const double *) w.x)[(b * c + ch) * plane + i]
									 : ((const float *) w.x)[(b * c + ch) * plane + i]) - mean;

					sq += d * d;
				}
			stat[ch] = mean;
			stat[c + ch] = cnt > 0 ? sq / cnt : 0;
			if (w.dbl)
			{
				((double *) p[2])[ch] = mean;
				((double *) p[3])[ch] = stat[c + ch];
			}
			else
			{
				((float *) p[2])[ch] = (float) mean;
				((float *) p[3])[ch] = (float) stat[c + ch];
			}
		}
		rm = ox_out_tensor(ctx, 1, in[2]->dtype, 1, &c);
		rv = rm ? ox_out_tensor(ctx, 2, in[3]->dtype, 1, &c) : NULL;
		if (rv)
		{
			for (int64_t ch = 0; ch < c; ch++)
			{
				stat[ch] = ox_tensor_get_double(in[2], ch) * momentum + stat[ch] * (1 - momentum);
				stat[c + ch] = ox_tensor_get_double(in[3], ch) * momentum + stat[c + ch] * (1 - momentum);
			}
			if (ox_convert_elements(rm->data, rm->dtype, stat, OX_DOUBLE, c, ctx->st) == OX_OK)
				ox_convert_elements(rv->data, rv->dtype, stat + c, OX_DOUBLE, c, ctx->st);
		}
		ox_aligned_free(stat);
		if (ctx->st->code != OX_OK)
		{
			free_params(p, 4);
			return nn_work_end(&w, y, ctx->st);
		}
	}

	for (int64_t ch = 0; ch < c; ch++)
	{
		if (w.dbl)
		{
			const double *s = p[0], *b = p[1], *m = p[2], *v = p[3];
			double		a = s[ch] / sqrt(v[ch] + eps);

			for (int64_t i = 0; i < n; i++)
				affine_f64((const double *) w.x + (i * c + ch) * plane, (double *) w.y + (i * c + ch) * plane,
						   plane, a, b[ch] - m[ch] * a);
		}
		else
		{
			const float *s = p[0], *b = p[1], *m = p[2], *v = p[3];
			float		a = (float) (s[ch] / sqrt((double) v[ch] + eps));

			for (int64_t i = 0; i < n; i++)
				affine_f32((const float *) w.x + (i * c + ch) * plane, (float *) w.y + (i * c + ch) * plane,
						   plane, a, b[ch] - m[ch] * a);
		}
	}
	free_params(p, 4);
	return nn_work_end(&w, y, ctx->st);
}

/* ---- LayerNormalization / RMSNormalization ------------------------------ */

typedef struct ln_state
{
	int64_t		axis;
	double		eps;
	bool		rms;
} ln_state;

static ox_code
ln_prepare_common(ox_prepare_ctx *pc, bool rms)
{
	ln_state   *s;
	int64_t		stash = ox_attr_int(pc->node, "stash_type", 1);

	if (stash != 1)
		return ox_fail(pc->st, OX_UNSUPPORTED, "%s: stash_type %lld is not supported (1, float)",
					   pc->node->op_type, (long long) stash);
	if (!(s = calloc(1, sizeof(*s))))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s: could not allocate state", pc->node->op_type);
	s->axis = ox_attr_int(pc->node, "axis", -1);
	s->eps = ox_attr_float(pc->node, "epsilon", 1e-5f);
	s->rms = rms;
	pc->state = s;
	return OX_OK;
}

static ox_code
layer_norm_prepare(ox_prepare_ctx *pc)
{
	return ln_prepare_common(pc, false);
}

static ox_code
rms_norm_prepare(ox_prepare_ctx *pc)
{
	return ln_prepare_common(pc, true);
}

static void
norm_free(void *state)
{
	free(state);
}

/*
 * Broadcast parameter t (right-aligned, dims 1 or equal) over the
 * normalized shape dims[nr] into a full array of the compute type.
 */
static void *
broadcast_param(const char *op, const char *name, const nn_work *w, const ox_tensor *t, int nr,
				const int64_t *dims, int64_t inner, ox_status *st)
{
	char		sa[NN_SHAPE_LEN],
				sb[NN_SHAPE_LEN];
	void	   *full,
			   *src;
	int64_t		tstr[OX_MAX_RANK];
	size_t		es = w->dbl ? sizeof(double) : sizeof(float);
	int64_t		s = 1;

	if (!ox_dtype_is_float(t->dtype) || t->rank > nr)
		goto bad;
	for (int i = t->rank - 1; i >= 0; i--)
	{
		int64_t		d = dims[nr - t->rank + i];

		if (t->dims[i] != 1 && t->dims[i] != d)
			goto bad;
	}
	if (!(src = nn_work_param(w, t, st)))
		return NULL;
	if (ox_tensor_numel(t) == inner)
		return src;
	/* strides of t over the normalized axes, 0 where broadcast */
	for (int i = nr - 1; i >= 0; i--)
	{
		int			ti = i - (nr - t->rank);

		tstr[i] = (ti >= 0 && t->dims[ti] != 1) ? s : 0;
		if (ti >= 0)
			s *= t->dims[ti];
	}
	if (!(full = nn_scratch(inner, es, st, op)))
	{
		ox_aligned_free(src);
		return NULL;
	}
	for (int64_t j = 0; j < inner; j++)
	{
		int64_t		rem = j,
					off = 0;

		for (int i = nr - 1; i >= 0; i--)
		{
			off += (rem % dims[i]) * tstr[i];
			rem /= dims[i];
		}
		memcpy((char *) full + j * es, (char *) src + off * es, es);
	}
	ox_aligned_free(src);
	return full;
bad:
	ox_fail(st, OX_INVALID_ARGUMENT, "%s: %s has %s %s, which does not broadcast to the normalized shape %s",
			op, name, ox_dtype_name(t->dtype), nn_shape(t, sa), ox_shape_str(nr, dims, sb, sizeof(sb)));
	return NULL;
}

typedef struct ln_job
{
	const ln_state *s;
	const nn_work *w;
	int64_t		inner;
	const void *scale;
	const void *bias;			/* NULL: none */
	float	   *mean;			/* per row, or NULL */
	float	   *inv;
} ln_job;

static void
ln_rows(void *arg, int64_t begin, int64_t end)
{
	const ln_job *j = arg;
	int64_t		n = j->inner;

	for (int64_t r = begin; r < end; r++)
	{
		if (j->w->dbl)
		{
			const double *x = (const double *) j->w->x + r * n;
			double	   *y = (double *) j->w->y + r * n;
			const double *sc = j->scale,
					   *bi = j->bias;
			double		m,
						iv;

			stats_f64(x, n, j->s->rms, j->s->eps, &m, &iv);
			if (bi)
				for (int64_t i = 0; i < n; i++)
					y[i] = (x[i] - m) * iv * sc[i] + bi[i];
			else
				for (int64_t i = 0; i < n; i++)
					y[i] = (x[i] - m) * iv * sc[i];
			if (j->mean)
				j->mean[r] = (float) m;
			if (j->inv)
				j->inv[r] = (float) iv;
		}
		else
		{
			nn_ln_row	row;
			float		m,
						iv;

			memset(&row, 0, sizeof(row));
			row.x = (const float *) j->w->x + r * n;
			row.y = (float *) j->w->y + r * n;
			row.scale = j->scale;
			row.shift = j->bias;
			row.n = n;
			row.eps = j->s->eps;
			row.rms = j->s->rms;
			nn_layer_norm_row_f32(&row, &m, &iv);
			if (j->mean)
				j->mean[r] = m;
			if (j->inv)
				j->inv[r] = iv;
		}
	}
}

static ox_code
layer_norm_run(ox_kernel_ctx *ctx)
{
	const ln_state *s = ctx->state;
	const char *op = ctx->node->op_type;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *scale = ox_in_tensor(ctx, 1);
	const ox_tensor *bias = s && !s->rms ? ox_in_tensor(ctx, 2) : NULL;
	int64_t		axis,
				outer,
				inner,
				sdims[OX_MAX_RANK];
	ox_tensor  *y,
			   *mt = NULL,
			   *it = NULL;
	nn_work		w;
	ln_job		job;
	void	   *p[2] = {0};

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "%s: not prepared", op);
	if (!x || !scale)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: inputs X and Scale are required", op);
	axis = s->axis < 0 ? s->axis + x->rank : s->axis;
	if (axis < 0 || axis >= x->rank)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: axis %lld is out of range for rank %d",
					   op, (long long) s->axis, x->rank);
	outer = ox_shape_numel((int) axis, x->dims);
	inner = ox_shape_numel(x->rank - (int) axis, x->dims + axis);
	if (!(y = ox_out_tensor(ctx, 0, x->dtype, x->rank, x->dims)))
		return ctx->st->code;
	for (int i = 0; i < x->rank; i++)
		sdims[i] = i < axis ? x->dims[i] : 1;
	if (!s->rms && ox_has_output(ctx, 1) && !(mt = ox_out_tensor(ctx, 1, OX_FLOAT, x->rank, sdims)))
		return ctx->st->code;
	if (!s->rms && ox_has_output(ctx, 2) && !(it = ox_out_tensor(ctx, 2, OX_FLOAT, x->rank, sdims)))
		return ctx->st->code;
	OX_TRY(nn_work_begin(op, x, y, &w, ctx->st));
	p[0] = broadcast_param(op, "Scale", &w, scale, x->rank - (int) axis, x->dims + axis, inner, ctx->st);
	if (p[0] && bias)
		p[1] = broadcast_param(op, "B", &w, bias, x->rank - (int) axis, x->dims + axis, inner, ctx->st);
	if (p[0] && (!bias || p[1]))
	{
		job.s = s;
		job.w = &w;
		job.inner = inner;
		job.scale = p[0];
		job.bias = p[1];
		job.mean = mt ? mt->data : NULL;
		job.inv = it ? it->data : NULL;
		ox_parallel_for(ctx, outer, 1, ln_rows, &job);
	}
	free_params(p, 2);
	return nn_work_end(&w, y, ctx->st);
}

/* ---- InstanceNormalization / GroupNormalization ------------------------- */

/*
 * Rows of row_len elements (one per image and group) are normalized; a row
 * holds ch_per_row channels of plane elements each, and channel k of row r
 * takes scale/bias index (r % rows_per_image) * ch_per_row + k, or the
 * group index when per_group.
 */
typedef struct group_job
{
	const nn_work *w;
	double		eps;
	int64_t		rows_per_image;
	int64_t		ch_per_row;
	int64_t		plane;
	bool		per_group;
	const void *scale;
	const void *bias;
} group_job;

static void
group_rows(void *arg, int64_t begin, int64_t end)
{
	const group_job *j = arg;
	int64_t		len = j->ch_per_row * j->plane;

	for (int64_t r = begin; r < end; r++)
	{
		int64_t		g = r % j->rows_per_image;

		if (j->w->dbl)
		{
			const double *x = (const double *) j->w->x + r * len;
			double	   *y = (double *) j->w->y + r * len;
			double		m,
						iv;

			stats_f64(x, len, false, j->eps, &m, &iv);
			for (int64_t k = 0; k < j->ch_per_row; k++)
			{
				int64_t		pi = j->per_group ? g : g * j->ch_per_row + k;
				double		a = iv * ((const double *) j->scale)[pi];

				affine_f64(x + k * j->plane, y + k * j->plane, j->plane, a,
						   ((const double *) j->bias)[pi] - m * a);
			}
		}
		else
		{
			const float *x = (const float *) j->w->x + r * len;
			float	   *y = (float *) j->w->y + r * len;
			float		m,
						iv;

			stats_f32(x, len, false, j->eps, &m, &iv);
			for (int64_t k = 0; k < j->ch_per_row; k++)
			{
				int64_t		pi = j->per_group ? g : g * j->ch_per_row + k;
				float		a = iv * ((const float *) j->scale)[pi];

				affine_f32(x + k * j->plane, y + k * j->plane, j->plane, a,
						   ((const float *) j->bias)[pi] - m * a);
			}
		}
	}
}

static ox_code
group_norm_common(ox_kernel_ctx *ctx, int64_t groups, bool instance)
{
	const char *op = ctx->node->op_type;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *scale = ox_in_tensor(ctx, 1);
	const ox_tensor *bias = ox_in_tensor(ctx, 2);
	double		eps = ox_attr_float(ctx->node, "epsilon", 1e-5f);
	int64_t		c,
				nparam;
	bool		per_group;
	ox_tensor  *y;
	nn_work		w;
	group_job	job;
	void	   *p[2] = {0};
	char		buf[NN_SHAPE_LEN];

	if (!x || x->rank < 2)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: X has shape %s, expected [N, C, ...]",
					   op, x ? nn_shape(x, buf) : "none");
	c = x->dims[1];
	if (instance)
		groups = c;
	if (groups < 1 || c % groups != 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: num_groups %lld does not divide the %lld channels of X %s",
					   op, (long long) groups, (long long) c, nn_shape(x, buf));
	/* GroupNormalization-18 has one scale/bias per group, -21 one per channel */
	per_group = !instance && ctx->node->opset < 21;
	nparam = per_group ? groups : c;
	OX_TRY(check_vector(op, "scale", scale, nparam, ctx->st));
	OX_TRY(check_vector(op, "bias", bias, nparam, ctx->st));
	if (!(y = ox_out_tensor(ctx, 0, x->dtype, x->rank, x->dims)))
		return ctx->st->code;
	OX_TRY(nn_work_begin(op, x, y, &w, ctx->st));
	if ((p[0] = nn_work_param(&w, scale, ctx->st)) && (p[1] = nn_work_param(&w, bias, ctx->st)))
	{
		job.w = &w;
		job.eps = eps;
		job.rows_per_image = groups;
		job.ch_per_row = c / groups;
		job.plane = ox_shape_numel(x->rank - 2, x->dims + 2);
		job.per_group = per_group;
		job.scale = p[0];
		job.bias = p[1];
		ox_parallel_for(ctx, x->dims[0] * groups, 1, group_rows, &job);
	}
	free_params(p, 2);
	return nn_work_end(&w, y, ctx->st);
}

static ox_code
instance_norm_run(ox_kernel_ctx *ctx)
{
	return group_norm_common(ctx, 0, true);
}

static ox_code
group_norm_run(ox_kernel_ctx *ctx)
{
	const ox_attr *a = ox_node_attr(ctx->node, "num_groups");

	if (!a)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "GroupNormalization: attribute num_groups is required");
	return group_norm_common(ctx, ox_attr_int(ctx->node, "num_groups", 0), false);
}

/* ---- family table ------------------------------------------------------- */

const ox_kernel_def ox_kernels_norm[] = {
	{"", "BatchNormalization", 1, NULL, batch_norm_run, NULL},
	{"", "LayerNormalization", 17, layer_norm_prepare, layer_norm_run, norm_free},
	{"", "RMSNormalization", 23, rms_norm_prepare, layer_norm_run, norm_free},
	{"", "InstanceNormalization", 1, NULL, instance_norm_run, NULL},
	{"", "GroupNormalization", 18, NULL, group_norm_run, NULL},
	{"", "LpNormalization", 1, NULL, nn_lp_normalization_run, NULL},
	{"", "MeanVarianceNormalization", 1, NULL, nn_mvn_run, NULL},
	{"", "LRN", 1, NULL, nn_lrn_run, NULL},
	{"com.microsoft", "SkipLayerNormalization", 1, nn_skip_layer_norm_prepare, nn_skip_layer_norm_run, free},
};
const int	ox_kernels_norm_count = OX_KERNEL_COUNT(ox_kernels_norm);
