/*
 * preview_flex_attention.c
 *	  FlexAttention (ai.onnx.preview, opset 1): scaled dot-product attention
 *	  over rank-4 tensors whose scores and probabilities may be rewritten by
 *	  the score_mod and prob_mod subgraphs.
 *
 * The subgraphs see the whole [B, Hq, L, S] tensor at once, so the kernel
 * works in stages over full buffers: scores for every head, score_mod,
 * softmax by rows, prob_mod, then Y = P V for every head.  Query head h
 * reads kv head h / (Hq / Hkv).
 *
 * Precision follows the reference: scores are formed in the input's
 * precision (Q and K are each multiplied by sqrt(scale) rounded to the
 * input type; for float16/bfloat16 those products and the scores are
 * rounded to the input type as well), and softmax and P V run in
 * softmax_precision.  Here that is float32 (SGEMM) unless the input or
 * softmax_precision is double, in which case everything runs in double;
 * a float16/bfloat16 softmax_precision is computed in float32 and the
 * subgraphs are handed (and give back) tensors of that type.
 */
#include "kernels/cpu/preview.h"
#include "kernels/cpu/sgemm.h"

#include <stdlib.h>
#include <string.h>

typedef struct flex_state
{
	bool		has_scale;
	float		scale;
	ox_dtype	precision;		/* softmax_precision, OX_UNDEFINED = default */
	const ox_graph *score_mod;
	const ox_graph *prob_mod;
} flex_state;

typedef struct flex_shape
{
	int64_t		batch;
	int64_t		q_heads;
	int64_t		kv_heads;
	int64_t		q_len;			/* L */
	int64_t		kv_len;			/* S */
	int64_t		head;			/* E */
	int64_t		v_head;			/* Ev */
} flex_shape;

static ox_code
flex_check_graph(ox_prepare_ctx *pc, const char *name, const ox_graph **out)
{
	const ox_attr *a = ox_node_attr(pc->node, name);

	*out = NULL;
	if (!a)
		return OX_OK;
	if (a->type != OX_ATTR_GRAPH || !a->g)
		return ox_fail(pc->st, OX_INVALID_MODEL, "FlexAttention: attribute \"%s\" must be a graph", name);
	if (a->g->n_inputs != 1 || a->g->n_outputs != 1)
		return ox_fail(pc->st, OX_INVALID_MODEL,
					   "FlexAttention: %s must have 1 input and 1 output, got %d and %d",
					   name, a->g->n_inputs, a->g->n_outputs);
	*out = a->g;
	return OX_OK;
}

ox_code
preview_flex_attention_prepare(ox_prepare_ctx *pc)
{
	const ox_attr *scale = ox_node_attr(pc->node, "scale");
	const ox_attr *prec = ox_node_attr(pc->node, "softmax_precision");
	flex_state	tmp;
	flex_state *s;

	memset(&tmp, 0, sizeof(tmp));
	if (scale && (scale->type != OX_ATTR_FLOAT || !isfinite(scale->f)))
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "FlexAttention: scale must be a finite float");
	if (prec)
	{
		if (prec->type != OX_ATTR_INT ||
			(prec->i != OX_FLOAT && prec->i != OX_FLOAT16 && prec->i != OX_BFLOAT16 && prec->i != OX_DOUBLE))
			return ox_fail(pc->st, OX_UNSUPPORTED,
						   "FlexAttention: softmax_precision %lld is not float, float16, bfloat16 or double",
						   (long long) prec->i);
		tmp.precision = (ox_dtype) prec->i;
	}
	OX_TRY(flex_check_graph(pc, "score_mod", &tmp.score_mod));
	OX_TRY(flex_check_graph(pc, "prob_mod", &tmp.prob_mod));
	tmp.has_scale = scale != NULL;
	tmp.scale = scale ? scale->f : 0.0f;
	s = malloc(sizeof(*s));
	if (!s)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "FlexAttention: could not allocate kernel state");
	*s = tmp;
	pc->state = s;
	return OX_OK;
}

static ox_code
flex_resolve_shape(ox_kernel_ctx *ctx, const ox_tensor *q, const ox_tensor *k, const ox_tensor *v,
				   flex_shape *s)
{
	char		a[128],
				b[128],
				c[128];

	memset(s, 0, sizeof(*s));
	if (!q || !k || !v)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "FlexAttention: Q, K and V are required");
	if (!ox_dtype_is_float(q->dtype))
		return ox_fail(ctx->st, OX_UNSUPPORTED,
					   "FlexAttention: type %s is not supported (float, double, float16, bfloat16)",
					   ox_dtype_name(q->dtype));
	if (k->dtype != q->dtype || v->dtype != q->dtype)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "FlexAttention: Q, K and V must share one type, got %s, %s and %s",
					   ox_dtype_name(q->dtype), ox_dtype_name(k->dtype), ox_dtype_name(v->dtype));
	ox_shape_str(q->rank, q->dims, a, sizeof(a));
	ox_shape_str(k->rank, k->dims, b, sizeof(b));
	ox_shape_str(v->rank, v->dims, c, sizeof(c));
	if (q->rank != 4 || k->rank != 4 || v->rank != 4)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "FlexAttention: Q, K and V must be rank 4, got %s, %s and %s", a, b, c);
	s->batch = q->dims[0];
	s->q_heads = q->dims[1];
	s->q_len = q->dims[2];
	s->head = q->dims[3];
	s->kv_heads = k->dims[1];
	s->kv_len = k->dims[2];
	s->v_head = v->dims[3];
	if (k->dims[0] != s->batch || v->dims[0] != s->batch || v->dims[1] != s->kv_heads ||
		v->dims[2] != s->kv_len || k->dims[3] != s->head)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "FlexAttention: Q %s, K %s and V %s do not agree on batch, heads, sequence length and head size",
					   a, b, c);
	if (s->kv_heads <= 0 || s->q_heads % s->kv_heads != 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "FlexAttention: %lld query heads are not a multiple of %lld kv heads",
					   (long long) s->q_heads, (long long) s->kv_heads);
	{
		int64_t		sd[4] = {s->batch, s->q_heads, s->q_len, s->kv_len};
		int64_t		yd[4] = {s->batch, s->q_heads, s->q_len, s->v_head};

		if (ox_shape_numel(4, sd) < 0 || ox_shape_numel(4, yd) < 0 || ox_tensor_numel(q) < 0 ||
			ox_tensor_numel(k) < 0 || ox_tensor_numel(v) < 0)
			return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "FlexAttention: tensor sizes overflow");
	}
	return OX_OK;
}

/* ---- scores -------------------------------------------------------------- */

static inline float
flex_round(float v, ox_dtype dt)
{
	if (dt == OX_FLOAT16)
		return ox_half_to_float(ox_float_to_half(v));
	if (dt == OX_BFLOAT16)
		return ox_bf16_to_float(ox_float_to_bf16(v));
	return v;
}

/*
 * float32 copy of t multiplied by mul, each product rounded to t's type
 * (float16/bfloat16), as the reference computes Q * sqrt(scale) in Q's type.
 */
static float *
flex_scaled_copy(ox_kernel_ctx *ctx, const ox_tensor *t, float mul)
{
	float	   *f = preview_to_float(ctx, "FlexAttention", t);
	int64_t		n = ox_tensor_numel(t);

	if (f)
		for (int64_t i = 0; i < n; i++)
			f[i] = flex_round(f[i] * mul, t->dtype);
	return f;
}

/* float32 scores S[b, h] = alpha * Q[b, h] K[b, h / group]^T */
static ox_code
flex_scores_float(ox_kernel_ctx *ctx, const flex_shape *s, const float *q, const float *k, float alpha,
				  ox_dtype round_to, float *scores)
{
	const int64_t group = s->q_heads / s->kv_heads;
	const int64_t n = s->q_len * s->kv_len;

	for (int64_t b = 0; b < s->batch; b++)
		for (int64_t h = 0; h < s->q_heads; h++)
		{
			const float *qh = q + (b * s->q_heads + h) * s->q_len * s->head;
			const float *kh = k + (b * s->kv_heads + h / group) * s->kv_len * s->head;
			float	   *sh = scores + (b * s->q_heads + h) * n;

			if (ox_kernel_should_abort(ctx))
				return ox_fail(ctx->st, OX_CANCELED, "FlexAttention: canceled");
			if (s->head == 0)
			{
				memset(sh, 0, (size_t) n * sizeof(float));
				continue;
			}
			OX_TRY(ox_sgemm(ctx, false, true, s->q_len, s->kv_len, s->head, alpha, qh, s->head, kh, s->head,
							0.0f, sh, s->kv_len));
			if (round_to != OX_FLOAT)
				for (int64_t i = 0; i < n; i++)
					sh[i] = flex_round(sh[i], round_to);
		}
	return OX_OK;
}

/* double scores, same layout; the double path is rare enough for plain loops */
static ox_code
flex_scores_double(ox_kernel_ctx *ctx, const flex_shape *s, const double *q, const double *k, double alpha,
				   double *scores)
{
	const int64_t group = s->q_heads / s->kv_heads;

	for (int64_t b = 0; b < s->batch; b++)
		for (int64_t h = 0; h < s->q_heads; h++)
		{
			const double *qh = q + (b * s->q_heads + h) * s->q_len * s->head;
			const double *kh = k + (b * s->kv_heads + h / group) * s->kv_len * s->head;
			double	   *sh = scores + (b * s->q_heads + h) * s->q_len * s->kv_len;

			if (ox_kernel_should_abort(ctx))
				return ox_fail(ctx->st, OX_CANCELED, "FlexAttention: canceled");
			for (int64_t i = 0; i < s->q_len; i++)
				for (int64_t j = 0; j < s->kv_len; j++)
				{
					double		acc = 0;

					for (int64_t e = 0; e < s->head; e++)
						acc += qh[i * s->head + e] * kh[j * s->head + e];
					sh[i * s->kv_len + j] = alpha * acc;
				}
		}
	return OX_OK;
}

/* ---- softmax and P V ----------------------------------------------------- */

/* rows whose every score is -inf come out NaN, as in the reference */
static void
flex_softmax_float(float *x, int64_t rows, int64_t n)
{
	for (int64_t r = 0; r < rows; r++, x += n)
	{
		float		m = -INFINITY;
		double		sum = 0;

		for (int64_t i = 0; i < n; i++)
			m = x[i] > m ? x[i] : m;
		for (int64_t i = 0; i < n; i++)
		{
			x[i] = expf(x[i] - m);
			sum += x[i];
		}
		for (int64_t i = 0; i < n; i++)
			x[i] = (float) (x[i] / sum);
	}
}

static void
flex_softmax_double(double *x, int64_t rows, int64_t n)
{
	for (int64_t r = 0; r < rows; r++, x += n)
	{
		double		m = -INFINITY;
		double		sum = 0;

		for (int64_t i = 0; i < n; i++)
			m = x[i] > m ? x[i] : m;
		for (int64_t i = 0; i < n; i++)
		{
			x[i] = exp(x[i] - m);
			sum += x[i];
		}
		for (int64_t i = 0; i < n; i++)
			x[i] /= sum;
	}
}

static ox_code
flex_output_float(ox_kernel_ctx *ctx, const flex_shape *s, const float *p, const float *v, float *y)
{
	const int64_t group = s->q_heads / s->kv_heads;

	for (int64_t b = 0; b < s->batch; b++)
		for (int64_t h = 0; h < s->q_heads; h++)
		{
			const float *ph = p + (b * s->q_heads + h) * s->q_len * s->kv_len;
			const float *vh = v + (b * s->kv_heads + h / group) * s->kv_len * s->v_head;
			float	   *yh = y + (b * s->q_heads + h) * s->q_len * s->v_head;

			if (s->kv_len == 0)
			{
				memset(yh, 0, (size_t) (s->q_len * s->v_head) * sizeof(float));
				continue;
			}
			OX_TRY(ox_sgemm(ctx, false, false, s->q_len, s->v_head, s->kv_len, 1.0f, ph, s->kv_len, vh,
							s->v_head, 0.0f, yh, s->v_head));
		}
	return OX_OK;
}

static void
flex_output_double(const flex_shape *s, const double *p, const double *v, double *y)
{
	const int64_t group = s->q_heads / s->kv_heads;

	for (int64_t b = 0; b < s->batch; b++)
		for (int64_t h = 0; h < s->q_heads; h++)
		{
			const double *ph = p + (b * s->q_heads + h) * s->q_len * s->kv_len;
			const double *vh = v + (b * s->kv_heads + h / group) * s->kv_len * s->v_head;
			double	   *yh = y + (b * s->q_heads + h) * s->q_len * s->v_head;

			memset(yh, 0, (size_t) (s->q_len * s->v_head) * sizeof(double));
			for (int64_t i = 0; i < s->q_len; i++)
				for (int64_t j = 0; j < s->kv_len; j++)
				{
					const double pij = ph[i * s->kv_len + j];

					for (int64_t e = 0; e < s->v_head; e++)
						yh[i * s->v_head + e] += pij * vh[j * s->v_head + e];
				}
		}
}

/* ---- modifier subgraphs -------------------------------------------------- */

/*
 * Run a modifier subgraph on buf (float32 or double, [B, Hq, L, S]) and
 * store its result back into buf.  The subgraph sees a tensor of type
 * precision.
 */
static ox_code
flex_apply_mod(ox_kernel_ctx *ctx, const ox_graph *g, const char *name, void *buf, ox_dtype buf_dt,
			   ox_dtype precision, const int64_t *dims)
{
	const int64_t n = ox_shape_numel(4, dims);
	ox_value	arg,
				res;
	ox_value   *argp = &arg;
	void	   *tmp = NULL;
	ox_code		rc;
	char		a[128],
				b[128];

	if (!ctx->run_subgraph)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "FlexAttention: %s needs a subgraph runner", name);
	if (precision != buf_dt)
	{
		tmp = ox_workspace_aligned((size_t) (n > 0 ? n : 1) * ox_dtype_size(precision), ctx->st, "FlexAttention");
		if (!tmp)
			return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "FlexAttention: could not allocate the %s input", name);
		if (n > 0 && (rc = ox_convert_elements(tmp, precision, buf, buf_dt, n, ctx->st)) != OX_OK)
		{
			ox_aligned_free(tmp);
			return rc;
		}
	}
	ox_value_init_tensor(&arg);
	arg.tensor.dtype = precision;
	arg.tensor.rank = 4;
	memcpy(arg.tensor.dims, dims, 4 * sizeof(int64_t));
	arg.tensor.data = tmp ? tmp : buf;
	arg.tensor.owns = false;
	ox_value_init_tensor(&res);
	rc = ctx->run_subgraph(ctx, g, &argp, 1, &res, ctx->st);
	ox_aligned_free(tmp);
	if (rc != OX_OK)
	{
		ox_value_release(&res);
		return rc;
	}
	if (res.kind != OX_VALUE_TENSOR || !ox_dtype_is_float(res.tensor.dtype) ||
		!ox_shape_equal(res.tensor.rank, res.tensor.dims, 4, dims))
	{
		rc = ox_fail(ctx->st, OX_INVALID_MODEL,
					 "FlexAttention: %s returned %s %s, expected a floating-point tensor of shape %s", name,
					 res.kind == OX_VALUE_TENSOR ? ox_dtype_name(res.tensor.dtype) : "a non-tensor",
					 res.kind == OX_VALUE_TENSOR ? ox_shape_str(res.tensor.rank, res.tensor.dims, a, sizeof(a)) : "",
					 ox_shape_str(4, dims, b, sizeof(b)));
		ox_value_release(&res);
		return rc;
	}
	if (n > 0)
		rc = ox_convert_elements(buf, buf_dt, res.tensor.data, res.tensor.dtype, n, ctx->st);
	ox_value_release(&res);
	return rc;
}

/* ---- run ----------------------------------------------------------------- */

ox_code
preview_flex_attention_run(ox_kernel_ctx *ctx)
{
	const flex_state *fs = ctx->state;
	const ox_tensor *q = ox_in_tensor(ctx, 0);
	const ox_tensor *k = ox_in_tensor(ctx, 1);
	const ox_tensor *v = ox_in_tensor(ctx, 2);
	flex_shape	s;
	ox_tensor  *y;
	ox_dtype	dt,
				precision,
				work;
	int64_t		sd[4],
				n_scores,
				n_y;
	float		scale,
				sqrt_scale;
	size_t		ws;
	void	   *scores = NULL,
			   *qw = NULL,
			   *kw = NULL,
			   *vw = NULL,
			   *yw = NULL;
	ox_code		rc = OX_OK;

	OX_TRY(flex_resolve_shape(ctx, q, k, v, &s));
	dt = q->dtype;
	{
		int64_t		yd[4] = {s.batch, s.q_heads, s.q_len, s.v_head};

		if (!(y = ox_out_tensor(ctx, 0, dt, 4, yd)))
			return ctx->st->code;
	}
	sd[0] = s.batch;
	sd[1] = s.q_heads;
	sd[2] = s.q_len;
	sd[3] = s.kv_len;
	n_scores = ox_shape_numel(4, sd);
	n_y = ox_tensor_numel(y);
	precision = fs->precision != OX_UNDEFINED ? fs->precision : (dt == OX_DOUBLE ? OX_DOUBLE : OX_FLOAT);
	work = (dt == OX_DOUBLE || precision == OX_DOUBLE) ? OX_DOUBLE : OX_FLOAT;
	ws = ox_dtype_size(work);
	scale = fs->has_scale ? fs->scale : (float) (1.0 / sqrt((double) (s.head > 0 ? s.head : 1)));
	sqrt_scale = sqrtf(scale);

	if (!(scores = ox_workspace_aligned((size_t) (n_scores > 0 ? n_scores : 1) * ws, ctx->st, "FlexAttention")) ||
		!(yw = ox_workspace_aligned((size_t) (n_y > 0 ? n_y : 1) * ws, ctx->st, "FlexAttention")))
		goto oom;

	/* Q, K and V in the working type */
	if (work == OX_FLOAT)
	{
		if (dt == OX_FLOAT)
		{
			qw = q->data;
			kw = k->data;
			vw = v->data;
		}
		else if (!(qw = flex_scaled_copy(ctx, q, flex_round(sqrt_scale, dt))) ||
				 !(kw = flex_scaled_copy(ctx, k, flex_round(sqrt_scale, dt))) ||
				 !(vw = preview_to_float(ctx, "FlexAttention", v)))
			goto fail;
		rc = flex_scores_float(ctx, &s, qw, kw, dt == OX_FLOAT ? sqrt_scale * sqrt_scale : 1.0f, dt, scores);
	}
	else
	{
		int64_t		nq = ox_tensor_numel(q),
					nk = ox_tensor_numel(k),
					nv = ox_tensor_numel(v);

		if (!(qw = ox_workspace_aligned((size_t) (nq > 0 ? nq : 1) * ws, ctx->st, "FlexAttention")) ||
			!(kw = ox_workspace_aligned((size_t) (nk > 0 ? nk : 1) * ws, ctx->st, "FlexAttention")) ||
			!(vw = ox_workspace_aligned((size_t) (nv > 0 ? nv : 1) * ws, ctx->st, "FlexAttention")))
			goto oom;
		if ((nq > 0 && ox_convert_elements(qw, OX_DOUBLE, q->data, dt, nq, ctx->st) != OX_OK) ||
			(nk > 0 && ox_convert_elements(kw, OX_DOUBLE, k->data, dt, nk, ctx->st) != OX_OK) ||
			(nv > 0 && ox_convert_elements(vw, OX_DOUBLE, v->data, dt, nv, ctx->st) != OX_OK))
			goto fail;
		rc = flex_scores_double(ctx, &s, qw, kw, (double) sqrt_scale * (double) sqrt_scale, scores);
	}
	if (rc != OX_OK)
		goto fail;

	if (fs->score_mod && (rc = flex_apply_mod(ctx, fs->score_mod, "score_mod", scores, work, precision, sd)) != OX_OK)
		goto fail;
	if (work == OX_FLOAT)
		flex_softmax_float(scores, n_scores / (s.kv_len > 0 ? s.kv_len : 1), s.kv_len);
	else
		flex_softmax_double(scores, n_scores / (s.kv_len > 0 ? s.kv_len : 1), s.kv_len);
	if (fs->prob_mod && (rc = flex_apply_mod(ctx, fs->prob_mod, "prob_mod", scores, work, precision, sd)) != OX_OK)
		goto fail;

	if (work == OX_FLOAT)
	{
		if ((rc = flex_output_float(ctx, &s, scores, vw, yw)) != OX_OK)
			goto fail;
	}
	else
		flex_output_double(&s, scores, vw, yw);
	if (n_y > 0 && (rc = ox_convert_elements(y->data, dt, yw, work, n_y, ctx->st)) != OX_OK)
		goto fail;
	goto done;

oom:
	ox_fail(ctx->st, OX_OUT_OF_MEMORY, "FlexAttention: could not allocate working buffers");
fail:
	rc = ctx->st->code != OX_OK ? ctx->st->code : OX_INTERNAL;
done:
	ox_aligned_free(scores);
	ox_aligned_free(yw);
	if (qw != q->data)
		ox_aligned_free(qw);
	if (kw != k->data)
		ox_aligned_free(kw);
	if (vw != v->data)
		ox_aligned_free(vw);
	return rc;
}
