/*
 * preview_linear_attention.c
 *	  LinearAttention (opset 27): the recurrent form of linear attention with
 *	  the four update rules of the spec (linear, gated, delta, gated_delta),
 *	  grouped-query heads and a carried state.
 *
 * For every (batch, kv head) the state S is a d_k x d_v matrix, updated
 * token by token:
 *
 *	 gated rules:  S = exp(g_t) * S			(g_t per head or per key row)
 *	 delta rules:  u = beta_t * (v_t - S^T k_t), else u = v_t
 *				   S = S + k_t u^T
 *	 read:		   o_t = scale * S^T q_t	for each query head of the group
 *
 * which is the sequential recurrence the spec defines; the chunk-parallel
 * form (chunk_size) is only a tuning hint for other implementations.  The
 * (batch, kv head) pairs are independent and are split across the intra-op
 * threads.  Everything computes in float32; float16 and bfloat16 tensors are
 * converted on the way in and out, and present_state takes past_state's type
 * (the query's when there is no past_state), as the reference does.
 */
#include "kernels/cpu/preview.h"

#include <stdlib.h>
#include <string.h>

typedef struct la_state
{
	bool		gating;
	bool		delta;
	int64_t		q_heads;
	int64_t		kv_heads;
	float		scale;			/* 0 = 1 / sqrt(d_k) */
} la_state;

typedef struct la_job
{
	const la_state *as;
	const float *q;				/* [B, T, Hq, dk] */
	const float *k;				/* [B, T, Hkv, dk] */
	const float *v;				/* [B, T, Hkv, dv] */
	const float *decay;			/* [B, T, Hkv, decay_width] or NULL */
	const float *beta;			/* [B, T, beta_width] or NULL */
	float	   *state;			/* [B, Hkv, dk, dv], holds past_state on entry */
	float	   *y;				/* [B, T, Hq, dv] */
	float	   *scratch;		/* [B, Hkv, dv] */
	int64_t		len;			/* T */
	int64_t		dk;
	int64_t		dv;
	int64_t		decay_width;	/* 1 or dk */
	int64_t		beta_width;		/* 1 or Hkv */
	float		scale;
} la_job;

ox_code
preview_linear_attention_prepare(ox_prepare_ctx *pc)
{
	const ox_node *n = pc->node;
	const ox_attr *qh = ox_node_attr(n, "q_num_heads");
	const ox_attr *kvh = ox_node_attr(n, "kv_num_heads");
	const char *rule = ox_attr_string(n, "update_rule", "gated_delta");
	float		scale = ox_attr_float(n, "scale", 0.0f);
	int64_t		chunk = ox_attr_int(n, "chunk_size", 64);
	la_state   *s;
	bool		gating,
				delta;

	if (!qh || !kvh || qh->type != OX_ATTR_INT || kvh->type != OX_ATTR_INT)
		return ox_fail(pc->st, OX_INVALID_MODEL,
					   "LinearAttention: the integer attributes q_num_heads and kv_num_heads are required");
	if (qh->i <= 0 || kvh->i <= 0 || qh->i > INT32_MAX || qh->i % kvh->i != 0)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT,
					   "LinearAttention: q_num_heads %lld must be a positive multiple of kv_num_heads %lld",
					   (long long) qh->i, (long long) kvh->i);
	if (strcmp(rule, "linear") == 0)
		gating = false, delta = false;
	else if (strcmp(rule, "gated") == 0)
		gating = true, delta = false;
	else if (strcmp(rule, "delta") == 0)
		gating = false, delta = true;
	else if (strcmp(rule, "gated_delta") == 0)
		gating = true, delta = true;
	else
		return ox_fail(pc->st, OX_UNSUPPORTED,
					   "LinearAttention: update_rule must be \"linear\", \"gated\", \"delta\" or \"gated_delta\", got \"%s\"",
					   rule);
	if (!isfinite(scale))
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "LinearAttention: scale must be finite, got %g",
					   (double) scale);
	if (chunk <= 0)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "LinearAttention: chunk_size must be positive, got %lld",
					   (long long) chunk);
	s = malloc(sizeof(*s));
	if (!s)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "LinearAttention: could not allocate kernel state");
	s->gating = gating;
	s->delta = delta;
	s->q_heads = qh->i;
	s->kv_heads = kvh->i;
	s->scale = scale;
	pc->state = s;
	return OX_OK;
}

/* run the recurrence for (batch, kv head) pairs [begin, end) */
static void
la_range(void *arg, int64_t begin, int64_t end)
{
	const la_job *j = arg;
	const la_state *as = j->as;
	const int64_t hq = as->q_heads,
				hkv = as->kv_heads,
				group = hq / hkv,
				dk = j->dk,
				dv = j->dv;

	for (int64_t task = begin; task < end; task++)
	{
		const int64_t b = task / hkv,
					h = task % hkv;
		float	   *S = j->state + task * dk * dv;
		float	   *u = j->scratch + task * dv;

		for (int64_t t = 0; t < j->len; t++)
		{
			const int64_t bt = b * j->len + t;
			const float *kt = j->k + (bt * hkv + h) * dk;
			const float *vt = j->v + (bt * hkv + h) * dv;

			if (as->gating)
			{
				const float *g = j->decay + (bt * hkv + h) * j->decay_width;

				for (int64_t d = 0; d < dk; d++)
				{
					const float e = expf(g[j->decay_width == 1 ? 0 : d]);
					float	   *row = S + d * dv;

					for (int64_t m = 0; m < dv; m++)
						row[m] *= e;
				}
			}
			memcpy(u, vt, (size_t) dv * sizeof(float));
			if (as->delta)
			{
				const float beta = j->beta[bt * j->beta_width + (j->beta_width == 1 ? 0 : h)];

				/* u = beta * (v - S^T k) */
				for (int64_t d = 0; d < dk; d++)
				{
					const float *row = S + d * dv;
					const float kd = kt[d];

					for (int64_t m = 0; m < dv; m++)
						u[m] -= row[m] * kd;
				}
				for (int64_t m = 0; m < dv; m++)
					u[m] *= beta;
			}
			/* S += k u^T */
			for (int64_t d = 0; d < dk; d++)
			{
				float	   *row = S + d * dv;
				const float kd = kt[d];

				for (int64_t m = 0; m < dv; m++)
					row[m] += kd * u[m];
			}
			/* o = scale * S^T q for every query head that shares this state */
			for (int64_t g = 0; g < group; g++)
			{
				const int64_t qh = h * group + g;
				const float *qt = j->q + (bt * hq + qh) * dk;
				float	   *o = j->y + (bt * hq + qh) * dv;

				memset(o, 0, (size_t) dv * sizeof(float));
				for (int64_t d = 0; d < dk; d++)
				{
					const float *row = S + d * dv;
					const float qd = qt[d];

					for (int64_t m = 0; m < dv; m++)
						o[m] += qd * row[m];
				}
				for (int64_t m = 0; m < dv; m++)
					o[m] *= j->scale;
			}
		}
	}
}

static bool
la_type_ok(ox_dtype dt)
{
	return dt == OX_FLOAT || dt == OX_FLOAT16 || dt == OX_BFLOAT16;
}

/* check shapes and types; fills the dimensions of job */
static ox_code
la_check(ox_kernel_ctx *ctx, const la_state *as, const ox_tensor *const *in, la_job *job)
{
	const ox_tensor *q = in[0],
			   *k = in[1],
			   *v = in[2],
			   *past = in[3],
			   *decay = in[4],
			   *beta = in[5];
	const int64_t hq = as->q_heads,
				hkv = as->kv_heads;
	char		a[128],
				b[128],
				c[128];
	int64_t		batch,
				len;

	if (!q || !k || !v)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "LinearAttention: query, key and value are required");
	if (!la_type_ok(q->dtype))
		return ox_fail(ctx->st, OX_UNSUPPORTED,
					   "LinearAttention: query type %s is not supported (float, float16, bfloat16)",
					   ox_dtype_name(q->dtype));
	if (k->dtype != q->dtype || v->dtype != q->dtype || (decay && decay->dtype != q->dtype) ||
		(beta && beta->dtype != q->dtype))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "LinearAttention: key, value, decay and beta must have the query's type %s",
					   ox_dtype_name(q->dtype));
	if (past && !la_type_ok(past->dtype))
		return ox_fail(ctx->st, OX_UNSUPPORTED,
					   "LinearAttention: past_state type %s is not supported (float, float16, bfloat16)",
					   ox_dtype_name(past->dtype));
	if (q->rank != 3 || k->rank != 3 || v->rank != 3)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "LinearAttention: query, key and value must be rank 3 (B, T, H*D), got %s, %s and %s",
					   ox_shape_str(q->rank, q->dims, a, sizeof(a)), ox_shape_str(k->rank, k->dims, b, sizeof(b)),
					   ox_shape_str(v->rank, v->dims, c, sizeof(c)));
	batch = q->dims[0];
	len = q->dims[1];
	if (k->dims[0] != batch || v->dims[0] != batch || k->dims[1] != len || v->dims[1] != len)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "LinearAttention: query %s, key %s and value %s differ in batch or sequence length",
					   ox_shape_str(q->rank, q->dims, a, sizeof(a)), ox_shape_str(k->rank, k->dims, b, sizeof(b)),
					   ox_shape_str(v->rank, v->dims, c, sizeof(c)));
	if (q->dims[2] % hq != 0 || v->dims[2] % hkv != 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "LinearAttention: query width %lld must be a multiple of q_num_heads %lld and value width %lld of kv_num_heads %lld",
					   (long long) q->dims[2], (long long) hq, (long long) v->dims[2], (long long) hkv);
	job->dk = q->dims[2] / hq;
	job->dv = v->dims[2] / hkv;
	job->len = len;
	if (k->dims[2] != hkv * job->dk)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "LinearAttention: key width is %lld but kv_num_heads * d_k is %lld",
					   (long long) k->dims[2], (long long) (hkv * job->dk));
	if (as->gating != (decay != NULL))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "LinearAttention: this update_rule %s the decay input",
					   as->gating ? "requires" : "does not take");
	if (as->delta != (beta != NULL))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "LinearAttention: this update_rule %s the beta input",
					   as->delta ? "requires" : "does not take");
	if (decay)
	{
		if (decay->rank != 3 || decay->dims[0] != batch || decay->dims[1] != len ||
			(decay->dims[2] != hkv && decay->dims[2] != hkv * job->dk))
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "LinearAttention: decay has shape %s, expected [%lld, %lld, %lld] or [%lld, %lld, %lld]",
						   ox_shape_str(decay->rank, decay->dims, a, sizeof(a)), (long long) batch,
						   (long long) len, (long long) hkv, (long long) batch, (long long) len,
						   (long long) (hkv * job->dk));
		job->decay_width = decay->dims[2] == hkv ? 1 : job->dk;
	}
	if (beta)
	{
		if (beta->rank != 3 || beta->dims[0] != batch || beta->dims[1] != len ||
			(beta->dims[2] != hkv && beta->dims[2] != 1))
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "LinearAttention: beta has shape %s, expected [%lld, %lld, %lld] or [%lld, %lld, 1]",
						   ox_shape_str(beta->rank, beta->dims, a, sizeof(a)), (long long) batch,
						   (long long) len, (long long) hkv, (long long) batch, (long long) len);
		job->beta_width = beta->dims[2];
	}
	{
		int64_t		sd[4] = {batch, hkv, job->dk, job->dv};
		int64_t		yd[4] = {batch, len, hq, job->dv};

		if (past && !ox_shape_equal(past->rank, past->dims, 4, sd))
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "LinearAttention: past_state has shape %s, expected %s",
						   ox_shape_str(past->rank, past->dims, a, sizeof(a)), ox_shape_str(4, sd, b, sizeof(b)));
		if (ox_shape_numel(4, sd) < 0 || ox_shape_numel(4, yd) < 0 || ox_tensor_numel(q) < 0 ||
			ox_tensor_numel(k) < 0 || ox_tensor_numel(v) < 0)
			return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "LinearAttention: tensor sizes overflow");
	}
	return OX_OK;
}

/* a float32 view of an input: its data when it is float32, else a converted copy */
static const float *
la_input(ox_kernel_ctx *ctx, const ox_tensor *t, float **owned)
{
	*owned = NULL;
	if (!t)
		return NULL;
	if (t->dtype == OX_FLOAT)
		return t->data;
	*owned = preview_to_float(ctx, "LinearAttention", t);
	return *owned;
}

ox_code
preview_linear_attention_run(ox_kernel_ctx *ctx)
{
	const la_state *as = ctx->state;
	const ox_tensor *in[6];
	float	   *owned[6] = {0};
	float	   *state_buf = NULL,
			   *y_buf = NULL,
			   *scratch = NULL;
	ox_tensor  *y,
			   *present;
	la_job		job;
	int64_t		batch,
				tasks,
				state_n,
				y_n;
	ox_code		rc = OX_OK;

	for (int i = 0; i < 6; i++)
		in[i] = ox_in_tensor(ctx, i);
	memset(&job, 0, sizeof(job));
	OX_TRY(la_check(ctx, as, in, &job));
	batch = in[0]->dims[0];
	tasks = batch * as->kv_heads;
	{
		int64_t		yd[3] = {batch, job.len, as->q_heads * job.dv};
		int64_t		sd[4] = {batch, as->kv_heads, job.dk, job.dv};

		if (!(y = ox_out_tensor(ctx, 0, in[0]->dtype, 3, yd)) ||
			!(present = ox_out_tensor(ctx, 1, in[3] ? in[3]->dtype : in[0]->dtype, 4, sd)))
			return ctx->st->code;
	}
	state_n = ox_tensor_numel(present);
	y_n = ox_tensor_numel(y);

	/* float32 state, starting from past_state or zeros */
	if (present->dtype == OX_FLOAT)
		state_buf = present->data;
	else if (!(state_buf = ox_workspace_aligned((size_t) (state_n > 0 ? state_n : 1) * sizeof(float), ctx->st, "LinearAttention")))
		goto oom;
	if (state_n > 0)
	{
		if (in[3])
		{
			if ((rc = ox_convert_elements(state_buf, OX_FLOAT, in[3]->data, in[3]->dtype, state_n,
										  ctx->st)) != OX_OK)
				goto done;
		}
		else
			memset(state_buf, 0, (size_t) state_n * sizeof(float));
	}
	if (y->dtype == OX_FLOAT)
		y_buf = y->data;
	else if (!(y_buf = ox_workspace_aligned((size_t) (y_n > 0 ? y_n : 1) * sizeof(float), ctx->st, "LinearAttention")))
		goto oom;
	if (!(scratch = ox_workspace_aligned((size_t) (tasks * job.dv > 0 ? tasks * job.dv : 1) * sizeof(float), ctx->st, "LinearAttention")))
		goto oom;

	job.as = as;
	job.q = la_input(ctx, in[0], &owned[0]);
	job.k = la_input(ctx, in[1], &owned[1]);
	job.v = la_input(ctx, in[2], &owned[2]);
	job.decay = la_input(ctx, in[4], &owned[4]);
	job.beta = la_input(ctx, in[5], &owned[5]);
	if (!job.q || !job.k || !job.v || (in[4] && !job.decay) || (in[5] && !job.beta))
		goto fail;
	job.state = state_buf;
	job.y = y_buf;
	job.scratch = scratch;
	job.scale = as->scale != 0.0f ? as->scale :
		(float) (1.0 / sqrt((double) (job.dk > 0 ? job.dk : 1)));
	if (tasks > 0 && job.len > 0)
		ox_parallel_for(ctx, tasks, 1, la_range, &job);

	if (y_buf != y->data && y_n > 0 &&
		(rc = ox_convert_elements(y->data, y->dtype, y_buf, OX_FLOAT, y_n, ctx->st)) != OX_OK)
		goto done;
	if (state_buf != present->data && state_n > 0 &&
		(rc = ox_convert_elements(present->data, present->dtype, state_buf, OX_FLOAT, state_n,
								  ctx->st)) != OX_OK)
		goto done;
	goto done;

oom:
	ox_fail(ctx->st, OX_OUT_OF_MEMORY, "LinearAttention: could not allocate working buffers");
fail:
	rc = ctx->st->code != OX_OK ? ctx->st->code : OX_INTERNAL;
done:
	for (int i = 0; i < 6; i++)
		ox_aligned_free(owned[i]);
	if (state_buf && state_buf != present->data)
		ox_aligned_free(state_buf);
	if (y_buf && y_buf != y->data)
		ox_aligned_free(y_buf);
	ox_aligned_free(scratch);
	return rc;
}
