/*
 * preview_training.c
 *	  The ai.onnx.preview.training optimizers Momentum, Adam and Adagrad
 *	  (opset 1): one update step computed from the learning rate R, the
 *	  update count T and, per optimized tensor, X, its gradient G and its
 *	  accumulators (V for Momentum, V and H for Adam, H for Adagrad).
 *
 * The operators are variadic: inputs are R, T, then all X, then all G, then
 * each accumulator kind in turn; outputs are all new X, then each new
 * accumulator kind.  Every tensor is updated independently, element by
 * element, in double precision whatever the tensor type (float or double).
 * The spec words the update with numpy broadcasting, but an optimizer state
 * that does not match its tensor is a model bug: G, V and H must have X's
 * shape here.
 */
#include "kernels/cpu/preview.h"

#include <stdlib.h>
#include <string.h>

typedef enum optim_kind
{
	OPTIM_MOMENTUM,
	OPTIM_ADAM,
	OPTIM_ADAGRAD
} optim_kind;

typedef struct optim_state
{
	optim_kind	kind;
	const char *op;
	int			per_tensor;		/* inputs per optimized tensor: X, G and accumulators */
	bool		nesterov;
	double		alpha;
	double		beta;
	double		norm_coefficient;
	double		norm_coefficient_post;
	double		epsilon;
	double		decay_factor;
} optim_state;

/* scalar hyper-parameters of one run, derived from R and T */
typedef struct optim_step
{
	double		r;
	int64_t		t;
	double		beta_adjusted;	/* Momentum */
	double		r_adjusted;		/* Adam, Adagrad */
} optim_step;

/* a float attribute, required or with a default; fails on other types and non-finite values */
static ox_code
optim_float_attr(ox_prepare_ctx *pc, const char *op, const char *name, bool required, double def,
				 double *out)
{
	const ox_attr *a = ox_node_attr(pc->node, name);

	if (!a)
	{
		if (required)
			return ox_fail(pc->st, OX_INVALID_MODEL, "%s: the float attribute \"%s\" is required", op, name);
		*out = def;
		return OX_OK;
	}
	if (a->type != OX_ATTR_FLOAT)
		return ox_fail(pc->st, OX_INVALID_MODEL, "%s: attribute \"%s\" must be a float, got %s", op, name,
					   ox_attr_type_name(a->type));
	if (!isfinite(a->f))
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "%s: attribute \"%s\" must be finite, got %g", op, name,
					   (double) a->f);
	*out = a->f;
	return OX_OK;
}

static ox_code
optim_new_state(ox_prepare_ctx *pc, optim_kind kind, const char *op, int per_tensor, optim_state **out)
{
	optim_state *s = calloc(1, sizeof(*s));

	if (!s)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s: could not allocate kernel state", op);
	s->kind = kind;
	s->op = op;
	s->per_tensor = per_tensor;
	*out = s;
	return OX_OK;
}

static ox_code
optim_finish(ox_prepare_ctx *pc, optim_state *s, ox_code rc)
{
	if (rc != OX_OK)
	{
		free(s);
		return rc;
	}
	pc->state = s;
	return OX_OK;
}

ox_code
preview_momentum_prepare(ox_prepare_ctx *pc)
{
	const ox_attr *mode = ox_node_attr(pc->node, "mode");
	optim_state *s = NULL;
	ox_code		rc;

	OX_TRY(optim_new_state(pc, OPTIM_MOMENTUM, "Momentum", 3, &s));
	if ((rc = optim_float_attr(pc, "Momentum", "alpha", true, 0, &s->alpha)) != OX_OK ||
		(rc = optim_float_attr(pc, "Momentum", "beta", true, 0, &s->beta)) != OX_OK ||
		(rc = optim_float_attr(pc, "Momentum", "norm_coefficient", true, 0, &s->norm_coefficient)) != OX_OK)
		return optim_finish(pc, s, rc);
	if (!mode || mode->type != OX_ATTR_STRING)
		rc = ox_fail(pc->st, OX_INVALID_MODEL, "Momentum: the string attribute \"mode\" is required");
	else if (strcmp(mode->s, "nesterov") == 0)
		s->nesterov = true;
	else if (strcmp(mode->s, "standard") != 0)
		rc = ox_fail(pc->st, OX_UNSUPPORTED, "Momentum: mode must be \"standard\" or \"nesterov\", got \"%s\"",
					 mode->s);
	return optim_finish(pc, s, rc);
}

ox_code
preview_adam_prepare(ox_prepare_ctx *pc)
{
	optim_state *s = NULL;
	ox_code		rc;

	OX_TRY(optim_new_state(pc, OPTIM_ADAM, "Adam", 4, &s));
	if ((rc = optim_float_attr(pc, "Adam", "alpha", false, 0.9f, &s->alpha)) != OX_OK ||
		(rc = optim_float_attr(pc, "Adam", "beta", false, 0.999f, &s->beta)) != OX_OK ||
		(rc = optim_float_attr(pc, "Adam", "epsilon", false, 1e-6f, &s->epsilon)) != OX_OK ||
		(rc = optim_float_attr(pc, "Adam", "norm_coefficient", false, 0.0, &s->norm_coefficient)) != OX_OK ||
		(rc = optim_float_attr(pc, "Adam", "norm_coefficient_post", false, 0.0,
							   &s->norm_coefficient_post)) != OX_OK)
		return optim_finish(pc, s, rc);
	return optim_finish(pc, s, OX_OK);
}

ox_code
preview_adagrad_prepare(ox_prepare_ctx *pc)
{
	optim_state *s = NULL;
	ox_code		rc;

	OX_TRY(optim_new_state(pc, OPTIM_ADAGRAD, "Adagrad", 3, &s));
	if ((rc = optim_float_attr(pc, "Adagrad", "decay_factor", false, 0.0, &s->decay_factor)) != OX_OK ||
		(rc = optim_float_attr(pc, "Adagrad", "epsilon", false, 1e-6f, &s->epsilon)) != OX_OK ||
		(rc = optim_float_attr(pc, "Adagrad", "norm_coefficient", false, 0.0, &s->norm_coefficient)) != OX_OK)
		return optim_finish(pc, s, rc);
	return optim_finish(pc, s, OX_OK);
}

/* ---- run ----------------------------------------------------------------- */

static inline double
optim_load(const void *p, bool dbl, int64_t i)
{
	return dbl ? ((const double *) p)[i] : (double) ((const float *) p)[i];
}

static inline void
optim_store(void *p, bool dbl, int64_t i, double v)
{
	if (dbl)
		((double *) p)[i] = v;
	else
		((float *) p)[i] = (float) v;
}

/*
 * Update one tensor: in[] holds X, G and the accumulators, out[] the new X
 * and the new accumulators, all of n elements of one type.
 */
static void
optim_update(const optim_state *s, const optim_step *step, const void *const *in, void *const *out,
			 int64_t n, bool dbl)
{
	for (int64_t i = 0; i < n; i++)
	{
		double		x = optim_load(in[0], dbl, i);
		double		g = s->norm_coefficient * x + optim_load(in[1], dbl, i);

		switch (s->kind)
		{
			case OPTIM_MOMENTUM:
				{
					double		v = s->alpha * optim_load(in[2], dbl, i) + step->beta_adjusted * g;

					optim_store(out[1], dbl, i, v);
					optim_store(out[0], dbl, i,
								s->nesterov ? x - step->r * (g + s->alpha * v) : x - step->r * v);
					break;
				}
			case OPTIM_ADAM:
				{
					double		v = s->alpha * optim_load(in[2], dbl, i) + (1.0 - s->alpha) * g;
					double		h = s->beta * optim_load(in[3], dbl, i) + (1.0 - s->beta) * g * g;
					double		xn = x - step->r_adjusted * (v / (sqrt(h) + s->epsilon));

					optim_store(out[1], dbl, i, v);
					optim_store(out[2], dbl, i, h);
					optim_store(out[0], dbl, i, (1.0 - s->norm_coefficient_post) * xn);
					break;
				}
			case OPTIM_ADAGRAD:
				{
					double		h = optim_load(in[2], dbl, i) + g * g;

					optim_store(out[1], dbl, i, h);
					optim_store(out[0], dbl, i, x - step->r_adjusted * g / (sqrt(h) + s->epsilon));
					break;
				}
		}
	}
}

static const char *const optim_input_names[4] = {"X", "G", "V", "H"};

/* name of the j-th per-tensor input kind for this optimizer */
static const char *
optim_input_name(const optim_state *s, int j)
{
	if (s->kind == OPTIM_ADAGRAD && j == 2)
		return "H";
	return optim_input_names[j];
}

static ox_code
optim_read_scalars(ox_kernel_ctx *ctx, const optim_state *s, optim_step *step)
{
	const ox_tensor *r = ox_in_tensor(ctx, 0);
	const ox_tensor *t = ox_in_tensor(ctx, 1);
	char		buf[128];

	if (!r || !t)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: inputs R and T are required", s->op);
	if ((r->dtype != OX_FLOAT && r->dtype != OX_DOUBLE) || ox_tensor_numel(r) != 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "%s: R must be one float or double, got %s %s", s->op, ox_dtype_name(r->dtype),
					   ox_shape_str(r->rank, r->dims, buf, sizeof(buf)));
	if (t->dtype != OX_INT64 || ox_tensor_numel(t) != 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "%s: T must be one int64, got %s %s", s->op, ox_dtype_name(t->dtype),
					   ox_shape_str(t->rank, t->dims, buf, sizeof(buf)));
	memset(step, 0, sizeof(*step));
	step->r = ox_tensor_get_double(r, 0);
	step->t = ((const int64_t *) t->data)[0];
	switch (s->kind)
	{
		case OPTIM_MOMENTUM:
			/* the first iteration takes the whole gradient */
			step->beta_adjusted = step->t > 0 ? s->beta : 1.0;
			break;
		case OPTIM_ADAM:
			/* bias correction of both running averages */
			step->r_adjusted = step->t > 0 ?
				step->r * sqrt(1.0 - pow(s->beta, (double) step->t)) / (1.0 - pow(s->alpha, (double) step->t)) :
				step->r;
			break;
		case OPTIM_ADAGRAD:
			step->r_adjusted = step->r / (1.0 + (double) step->t * s->decay_factor);
			break;
	}
	return OX_OK;
}

ox_code
preview_optimizer_run(ox_kernel_ctx *ctx)
{
	const optim_state *s = ctx->state;
	const int	k = s->per_tensor;
	optim_step	step;
	int			n;

	OX_TRY(optim_read_scalars(ctx, s, &step));
	if (ctx->n_in < 2 + k || (ctx->n_in - 2) % k != 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "%s: expected R, T and %d inputs per optimized tensor, got %d inputs",
					   s->op, k, ctx->n_in);
	n = (ctx->n_in - 2) / k;
	if (ctx->n_out != (k - 1) * n)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "%s: %d optimized tensors need %d outputs, got %d", s->op, n, (k - 1) * n, ctx->n_out);

	for (int i = 0; i < n; i++)
	{
		const ox_tensor *x = ox_in_tensor(ctx, 2 + i);
		const void *in[4];
		void	   *out[3];
		int64_t		numel;
		char		a[128],
					b[128];

		if (!x)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input X_%d is missing", s->op, i + 1);
		if (x->dtype != OX_FLOAT && x->dtype != OX_DOUBLE)
			return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: X_%d has type %s, expected float or double",
						   s->op, i + 1, ox_dtype_name(x->dtype));
		numel = ox_tensor_numel(x);
		if (numel < 0)
			return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "%s: X_%d size overflows", s->op, i + 1);
		for (int j = 0; j < k; j++)
		{
			const ox_tensor *t = ox_in_tensor(ctx, 2 + j * n + i);

			if (!t)
				return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input %s_%d is missing", s->op,
							   optim_input_name(s, j), i + 1);
			if (t->dtype != x->dtype)
				return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: %s_%d has type %s but X_%d has type %s",
							   s->op, optim_input_name(s, j), i + 1, ox_dtype_name(t->dtype), i + 1,
							   ox_dtype_name(x->dtype));
			if (!ox_shape_equal(t->rank, t->dims, x->rank, x->dims))
				return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: %s_%d has shape %s but X_%d has shape %s",
							   s->op, optim_input_name(s, j), i + 1,
							   ox_shape_str(t->rank, t->dims, a, sizeof(a)), i + 1,
							   ox_shape_str(x->rank, x->dims, b, sizeof(b)));
			in[j] = t->data;
		}
		for (int j = 0; j < k - 1; j++)
		{
			ox_tensor  *o = ox_out_tensor(ctx, j * n + i, x->dtype, x->rank, x->dims);

			if (!o)
				return ctx->st->code;
			out[j] = o->data;
		}
		if (numel > 0)
			optim_update(s, &step, in, out, numel, x->dtype == OX_DOUBLE);
	}
	return OX_OK;
}
