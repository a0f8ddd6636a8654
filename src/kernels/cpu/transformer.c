/*
 * transformer.c
 *	  Attention (opset 23, plus the nonpad_kv_seqlen input of opset 24) and
 *	  the transformer family table; RotaryEmbedding lives in
 *	  transformer_rotary.c.
 *
 * Attention runs head by head: S = scale * Q K^T with our SGEMM, then the
 * softcap, the additive bias (attn_mask, causal mask, padding mask), a
 * numerically stable softmax (the row maximum is subtracted before
 * exponentiating) and Y = S V, again with SGEMM.  The spec scales Q and K by
 * sqrt(scale) each before the product; folding both into the GEMM's alpha is
 * the same number up to rounding.
 *
 * K and V are first gathered into [batch, kv_heads, total_len, width] with
 * past_key/past_value in front.  For float32 that buffer is the
 * present_key/present_value output itself, so the cache costs no extra copy.
 * 3-D inputs [batch, seq, heads * width] are read in place through the
 * GEMM's leading dimension.  Grouped-query attention maps query head h to kv
 * head h / (q_heads / kv_heads), which is what the spec's interleaved repeat
 * of the kv heads amounts to.
 *
 * Everything computes in float32: float16, bfloat16 and double tensors are
 * converted on the way in and out (softmax_precision is therefore always
 * met or exceeded for the half types).  A row whose every position is
 * masked has no defined softmax; like the ONNX reference it comes out NaN.
 */
#include "kernels/cpu/sgemm.h"
#include "kernels/cpu/transformer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ATTN_SHAPE_LEN 192

typedef struct attn_state
{
	bool		is_causal;
	bool		has_scale;
	float		scale;
	float		softcap;		/* 0 = off */
	int64_t		q_num_heads;	/* 0 when the attribute is absent */
	int64_t		kv_num_heads;
	int			qk_mode;		/* qk_matmul_output_mode, 0..3 */
} attn_state;

typedef struct attn_shape
{
	bool		three_d;
	int64_t		batch;
	int64_t		q_heads;
	int64_t		kv_heads;
	int64_t		q_len;
	int64_t		kv_len;
	int64_t		past_len;
	int64_t		total_len;		/* past_len + kv_len */
	int64_t		head;			/* Q/K head size */
	int64_t		v_head;			/* V head size */
} attn_shape;

/* attn_mask converted to float32 with broadcast strides */
typedef struct attn_mask
{
	float	   *data;			/* NULL when there is no mask */
	int64_t		stride[3];		/* batch, head, query row; 0 = broadcast */
	int64_t		len;			/* columns given; later columns are masked */
} attn_mask;

typedef struct attn_job
{
	const attn_state *as;
	const attn_shape *s;
	const float *q;				/* Q in its input layout */
	const float *k;				/* [batch, kv_heads, total_len, head] */
	const float *v;				/* [batch, kv_heads, total_len, v_head] */
	const attn_mask *mask;
	const int64_t *nonpad;		/* [batch] valid kv positions, or NULL */
	float	   *y;				/* Y in its output layout */
	float	   *qk;				/* [batch, q_heads, q_len, total_len] or NULL */
	float	   *scores;			/* scratch [q_len, total_len] */
	float		scale;
} attn_job;

static const char *
attn_shape_str(const ox_tensor *t, char *buf)
{
	return ox_shape_str(t->rank, t->dims, buf, ATTN_SHAPE_LEN);
}

static bool
attn_is_float_type(ox_dtype dt)
{
	return dt == OX_FLOAT || dt == OX_FLOAT16 || dt == OX_BFLOAT16 || dt == OX_DOUBLE;
}

/* ---- attributes ---------------------------------------------------------- */

static ox_code
attn_prepare(ox_prepare_ctx *pc)
{
	const ox_node *n = pc->node;
	const ox_attr *scale = ox_node_attr(n, "scale");
	int64_t		causal = ox_attr_int(n, "is_causal", 0);
	int64_t		mode = ox_attr_int(n, "qk_matmul_output_mode", 0);
	int64_t		precision = ox_attr_int(n, "softmax_precision", OX_FLOAT);
	int64_t		q_heads = ox_attr_int(n, "q_num_heads", 0);
	int64_t		kv_heads = ox_attr_int(n, "kv_num_heads", 0);
	float		softcap = ox_attr_float(n, "softcap", 0.0f);
	attn_state *s;

	if (causal != 0 && causal != 1)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "Attention: is_causal must be 0 or 1, got %lld",
					   (long long) causal);
	if (mode < 0 || mode > 3)
		return ox_fail(pc->st, OX_UNSUPPORTED, "Attention: qk_matmul_output_mode must be 0 to 3, got %lld",
					   (long long) mode);
	if (precision != OX_FLOAT && precision != OX_FLOAT16 && precision != OX_BFLOAT16 &&
		precision != OX_DOUBLE)
		return ox_fail(pc->st, OX_UNSUPPORTED,
					   "Attention: softmax_precision %lld is not a floating-point type", (long long) precision);
	if (!(softcap >= 0.0f) || isinf(softcap))
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "Attention: softcap must be finite and >= 0, got %g",
					   (double) softcap);
	if (q_heads < 0 || kv_heads < 0 || q_heads > INT32_MAX || kv_heads > INT32_MAX)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT,
					   "Attention: q_num_heads %lld and kv_num_heads %lld must be positive",
					   (long long) q_heads, (long long) kv_heads);
	if (scale && (scale->type != OX_ATTR_FLOAT || !isfinite(scale->f)))
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "Attention: scale must be a finite float");
	s = calloc(1, sizeof(*s));
	if (!s)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "Attention: could not allocate kernel state");
	s->is_causal = causal == 1;
	s->has_scale = scale != NULL;
	s->scale = scale ? scale->f : 0.0f;
	s->softcap = softcap;
	s->q_num_heads = q_heads;
	s->kv_num_heads = kv_heads;
	s->qk_mode = (int) mode;
	pc->state = s;
	return OX_OK;
}

static void
attn_free(void *state)
{
	free(state);
}

/* ---- shapes -------------------------------------------------------------- */

static ox_code
attn_resolve_shape(ox_kernel_ctx *ctx, const attn_state *as, const ox_tensor *q, const ox_tensor *k,
				   const ox_tensor *v, const ox_tensor *pk, const ox_tensor *pv, attn_shape *s)
{
	char		a[ATTN_SHAPE_LEN],
				b[ATTN_SHAPE_LEN],
				c[ATTN_SHAPE_LEN];

	memset(s, 0, sizeof(*s));
	if (q->rank != k->rank || q->rank != v->rank || (q->rank != 3 && q->rank != 4))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "Attention: Q, K and V must all be 3-D or all 4-D, got %s, %s and %s",
					   attn_shape_str(q, a), attn_shape_str(k, b), attn_shape_str(v, c));
	s->three_d = q->rank == 3;
	s->batch = q->dims[0];
	if (k->dims[0] != s->batch || v->dims[0] != s->batch)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "Attention: batch sizes of Q %s, K %s and V %s differ",
					   attn_shape_str(q, a), attn_shape_str(k, b), attn_shape_str(v, c));
	if (s->three_d)
	{
		if (as->q_num_heads <= 0 || as->kv_num_heads <= 0)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "Attention: 3-D inputs need the q_num_heads and kv_num_heads attributes");
		s->q_heads = as->q_num_heads;
		s->kv_heads = as->kv_num_heads;
		s->q_len = q->dims[1];
		s->kv_len = k->dims[1];
		if (v->dims[1] != s->kv_len)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "Attention: K %s and V %s have different sequence lengths",
						   attn_shape_str(k, a), attn_shape_str(v, b));
		if (q->dims[2] % s->q_heads != 0)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "Attention: Q hidden size %lld is not a multiple of q_num_heads %lld",
						   (long long) q->dims[2], (long long) s->q_heads);
		s->head = q->dims[2] / s->q_heads;
		if (k->dims[2] != s->kv_heads * s->head)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "Attention: K hidden size is %lld but kv_num_heads * head_size is %lld",
						   (long long) k->dims[2], (long long) (s->kv_heads * s->head));
		if (v->dims[2] % s->kv_heads != 0)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "Attention: V hidden size %lld is not a multiple of kv_num_heads %lld",
						   (long long) v->dims[2], (long long) s->kv_heads);
		s->v_head = v->dims[2] / s->kv_heads;
	}
	else
	{
		s->q_heads = q->dims[1];
		s->kv_heads = k->dims[1];
		s->q_len = q->dims[2];
		s->kv_len = k->dims[2];
		s->head = q->dims[3];
		if (k->dims[3] != s->head || v->dims[1] != s->kv_heads || v->dims[2] != s->kv_len)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "Attention: Q %s, K %s and V %s do not agree on heads, sequence length and head size",
						   attn_shape_str(q, a), attn_shape_str(k, b), attn_shape_str(v, c));
		s->v_head = v->dims[3];
		if ((as->q_num_heads && as->q_num_heads != s->q_heads) ||
			(as->kv_num_heads && as->kv_num_heads != s->kv_heads))
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "Attention: q_num_heads %lld / kv_num_heads %lld disagree with Q %s and K %s",
						   (long long) as->q_num_heads, (long long) as->kv_num_heads,
						   attn_shape_str(q, a), attn_shape_str(k, b));
	}
	if (s->kv_heads <= 0 || s->q_heads % s->kv_heads != 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "Attention: %lld query heads are not a multiple of %lld kv heads",
					   (long long) s->q_heads, (long long) s->kv_heads);
	if ((pk == NULL) != (pv == NULL))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "Attention: past_key and past_value must be given together");
	if (pk)
	{
		if (pk->rank != 4 || pk->dims[0] != s->batch || pk->dims[1] != s->kv_heads || pk->dims[3] != s->head)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "Attention: past_key has shape %s, expected [%lld, %lld, past_len, %lld]",
						   attn_shape_str(pk, a), (long long) s->batch, (long long) s->kv_heads,
						   (long long) s->head);
		if (pv->rank != 4 || pv->dims[0] != s->batch || pv->dims[1] != s->kv_heads ||
			pv->dims[2] != pk->dims[2] || pv->dims[3] != s->v_head)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "Attention: past_value has shape %s, expected [%lld, %lld, %lld, %lld]",
						   attn_shape_str(pv, a), (long long) s->batch, (long long) s->kv_heads,
						   (long long) pk->dims[2], (long long) s->v_head);
		s->past_len = pk->dims[2];
	}
	s->total_len = s->past_len + s->kv_len;

	/* every buffer the kernel touches must have a representable size */
	{
		int64_t		sizes[5][4] = {
			{s->batch, s->q_heads, s->q_len, s->total_len},
			{s->batch, s->kv_heads, s->total_len, s->head},
			{s->batch, s->kv_heads, s->total_len, s->v_head},
			{s->batch, s->q_heads, s->q_len, s->v_head},
			{s->batch, s->q_heads, s->q_len, s->head},
		};

		for (int i = 0; i < 5; i++)
			if (ox_shape_numel(4, sizes[i]) < 0 || s->total_len > OX_MAX_ELEMENTS)
				return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "Attention: tensor sizes overflow");
	}
	return OX_OK;
}

/*
 * Convert attn_mask to float32 (bool: true -> 0, false -> -inf) and work out
 * how it broadcasts against [batch, q_heads, q_len, total_len].  The last
 * dimension may be shorter than total_len: missing columns are masked.
 */
static ox_code
attn_load_mask(ox_kernel_ctx *ctx, const ox_tensor *m, const attn_shape *s, attn_mask *out)
{
	const int64_t target[3] = {s->batch, s->q_heads, s->q_len};
	char		a[ATTN_SHAPE_LEN];
	int64_t		stride;
	int64_t		n;

	memset(out, 0, sizeof(*out));
	if (!m)
		return OX_OK;
	if (m->rank < 1 || m->rank > 4)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Attention: attn_mask must have rank 1 to 4, got %s",
					   attn_shape_str(m, a));
	if (m->dtype != OX_BOOL && !attn_is_float_type(m->dtype) && !ox_dtype_is_int(m->dtype))
		return ox_fail(ctx->st, OX_UNSUPPORTED, "Attention: attn_mask of type %s is not supported",
					   ox_dtype_name(m->dtype));
	out->len = m->dims[m->rank - 1];
	if (out->len > s->total_len)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "Attention: attn_mask %s has more columns than the total sequence length %lld",
					   attn_shape_str(m, a), (long long) s->total_len);
	stride = out->len;
	for (int d = 2; d >= 0; d--)
	{
		int			md = m->rank - 4 + d;
		int64_t		dim;

		out->stride[d] = 0;
		if (md < 0)
			continue;
		dim = m->dims[md];
		if (dim != 1 && dim != target[d])
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "Attention: attn_mask %s does not broadcast to [%lld, %lld, %lld, %lld]",
						   attn_shape_str(m, a), (long long) s->batch, (long long) s->q_heads,
						   (long long) s->q_len, (long long) s->total_len);
		out->stride[d] = dim == 1 ? 0 : stride;
		stride *= dim;
	}
	n = ox_tensor_numel(m);
	if (n < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "Attention: attn_mask size overflows");
	out->data = ox_workspace_aligned((size_t) n * sizeof(float), ctx->st, "Attention");
	if (!out->data)
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Attention: could not allocate the mask");
	if (m->dtype == OX_BOOL)
	{
		const uint8_t *src = m->data;

		for (int64_t i = 0; i < n; i++)
			out->data[i] = src[i] ? 0.0f : -INFINITY;
		return OX_OK;
	}
	if (n == 0)
		return OX_OK;
	return ox_convert_elements(out->data, OX_FLOAT, m->data, m->dtype, n, ctx->st);
}

/*
 * Fill dst [batch, kv_heads, total_len, width] (float32) from the past cache
 * [batch, kv_heads, past_len, width] and the current K or V, 3-D
 * [batch, kv_len, kv_heads * width] or 4-D [batch, kv_heads, kv_len, width].
 */
static ox_code
attn_gather_kv(ox_kernel_ctx *ctx, float *dst, const ox_tensor *past, const ox_tensor *cur,
			   const attn_shape *s, int64_t width)
{
	size_t		esize = ox_dtype_size(cur->dtype);
	const char *cur_data = cur->data;

	for (int64_t b = 0; b < s->batch; b++)
		for (int64_t h = 0; h < s->kv_heads; h++)
		{
			int64_t		bh = b * s->kv_heads + h;
			float	   *d = dst + bh * s->total_len * width;

			if (past && s->past_len * width > 0)
				OX_TRY(ox_convert_elements(d, OX_FLOAT,
										   (const char *) past->data + (size_t) (bh * s->past_len * width) * esize,
										   past->dtype, s->past_len * width, ctx->st));
			d += s->past_len * width;
			if (width == 0 || s->kv_len == 0)
				continue;
			if (s->three_d)
			{
				for (int64_t t = 0; t < s->kv_len; t++)
					OX_TRY(ox_convert_elements(d + t * width, OX_FLOAT,
											   cur_data + (size_t) (((b * s->kv_len + t) * s->kv_heads + h) * width) * esize,
											   cur->dtype, width, ctx->st));
			}
			else
				OX_TRY(ox_convert_elements(d, OX_FLOAT, cur_data + (size_t) (bh * s->kv_len * width) * esize,
										   cur->dtype, s->kv_len * width, ctx->st));
		}
	return OX_OK;
}

/* ---- compute ------------------------------------------------------------- */

/* add the mask, the causal mask and the padding mask of head (b, h) to S */
static void
attn_add_bias(const attn_job *j, int64_t b, int64_t h, float *S)
{
	const attn_shape *s = j->s;
	const int64_t T = s->total_len;
	int64_t		valid = T;

	if (j->nonpad)
		valid = j->nonpad[b] < 0 ? 0 : (j->nonpad[b] < T ? j->nonpad[b] : T);
	for (int64_t i = 0; i < s->q_len; i++)
	{
		float	   *row = S + i * T;

		if (j->mask->data)
		{
			const float *m = j->mask->data + b * j->mask->stride[0] + h * j->mask->stride[1] +
				i * j->mask->stride[2];

			for (int64_t c = 0; c < j->mask->len; c++)
				row[c] += m[c];
			for (int64_t c = j->mask->len; c < T; c++)
				row[c] = -INFINITY;
		}
		if (j->as->is_causal)
			for (int64_t c = i + s->past_len + 1; c < T; c++)
				row[c] = -INFINITY;
		for (int64_t c = valid; c < T; c++)
			row[c] = -INFINITY;
	}
}

static void
attn_softmax_row(float *x, int64_t n)
{
	float		m = -INFINITY;
	double		sum = 0;
	float		inv;

	for (int64_t i = 0; i < n; i++)
		m = x[i] > m ? x[i] : m;
	for (int64_t i = 0; i < n; i++)
	{
		x[i] = expf(x[i] - m);
		sum += x[i];
	}
	inv = (float) (1.0 / sum);
	for (int64_t i = 0; i < n; i++)
		x[i] *= inv;
}

static ox_code
attn_compute(ox_kernel_ctx *ctx, const attn_job *j)
{
	const attn_shape *s = j->s;
	const int64_t T = s->total_len;
	const int64_t group = s->q_heads / s->kv_heads;
	const int64_t n = s->q_len * T;
	const float softcap = j->as->softcap;
	const int	mode = j->as->qk_mode;
	float	   *S = j->scores;

	for (int64_t b = 0; b < s->batch; b++)
		for (int64_t h = 0; h < s->q_heads; h++)
		{
			const int64_t kvh = b * s->kv_heads + h / group;
			const float *k = j->k + kvh * T * s->head;
			const float *v = j->v + kvh * T * s->v_head;
			float	   *qk = j->qk ? j->qk + (b * s->q_heads + h) * n : NULL;
			const float *q;
			float	   *y;
			int64_t		ldq,
						ldy;

			if (ox_kernel_should_abort(ctx))
				return ox_fail(ctx->st, OX_CANCELED, "Attention: canceled");
			if (s->three_d)
			{
				q = j->q + b * s->q_len * s->q_heads * s->head + h * s->head;
				ldq = s->q_heads * s->head;
				y = j->y + b * s->q_len * s->q_heads * s->v_head + h * s->v_head;
				ldy = s->q_heads * s->v_head;
			}
			else
			{
				q = j->q + (b * s->q_heads + h) * s->q_len * s->head;
				ldq = s->head;
				y = j->y + (b * s->q_heads + h) * s->q_len * s->v_head;
				ldy = s->v_head;
			}
			if (n == 0)
			{
				/* no keys: an empty sum; no queries: nothing to write */
				for (int64_t i = 0; i < s->q_len; i++)
					memset(y + i * ldy, 0, (size_t) s->v_head * sizeof(float));
				continue;
			}
			OX_TRY(ox_sgemm(ctx, false, true, s->q_len, T, s->head, j->scale, q, ldq, k, s->head,
							0.0f, S, T));
			if (qk && mode == 0)
				memcpy(qk, S, (size_t) n * sizeof(float));
			if (softcap > 0.0f)
				for (int64_t i = 0; i < n; i++)
					S[i] = softcap * tanhf(S[i] / softcap);
			if (qk && mode == 1)
				memcpy(qk, S, (size_t) n * sizeof(float));
			attn_add_bias(j, b, h, S);
			if (qk && mode == 2)
				memcpy(qk, S, (size_t) n * sizeof(float));
			for (int64_t i = 0; i < s->q_len; i++)
				attn_softmax_row(S + i * T, T);
			if (qk && mode == 3)
				memcpy(qk, S, (size_t) n * sizeof(float));
			OX_TRY(ox_sgemm(ctx, false, false, s->q_len, s->v_head, T, 1.0f, S, T, v, s->v_head,
							0.0f, y, ldy));
		}
	return OX_OK;
}

/* a float32 view of t: its own data when it is float32, else a converted copy */
static float *
attn_as_float(ox_kernel_ctx *ctx, const ox_tensor *t, bool *owned)
{
	int64_t		n = ox_tensor_numel(t);
	float	   *f;

	*owned = false;
	if (t->dtype == OX_FLOAT)
		return t->data;
	f = ox_workspace_aligned((size_t) n * sizeof(float), ctx->st, "Attention");
	if (!f)
	{
		ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Attention: could not allocate %lld floats", (long long) n);
		return NULL;
	}
	*owned = true;
	if (n > 0 && ox_convert_elements(f, OX_FLOAT, t->data, t->dtype, n, ctx->st) != OX_OK)
	{
		ox_aligned_free(f);
		*owned = false;
		return NULL;
	}
	return f;
}

static float *
attn_scratch(ox_kernel_ctx *ctx, int64_t n)
{
	float	   *f = ox_workspace_aligned((size_t) n * sizeof(float), ctx->st, "Attention");

	if (!f)
		ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Attention: could not allocate %lld floats", (long long) n);
	return f;
}

/* store a float32 buffer into an output of the model's type */
static ox_code
attn_store(ox_kernel_ctx *ctx, ox_tensor *t, const float *src)
{
	int64_t		n;

	if (!t || (const void *) src == t->data || (n = ox_tensor_numel(t)) == 0)
		return OX_OK;
	return ox_convert_elements(t->data, t->dtype, src, OX_FLOAT, n, ctx->st);
}

static ox_code
attn_run(ox_kernel_ctx *ctx)
{
	const attn_state *as = ctx->state;
	const ox_tensor *q = ox_in_tensor(ctx, 0);
	const ox_tensor *k = ox_in_tensor(ctx, 1);
	const ox_tensor *v = ox_in_tensor(ctx, 2);
	const ox_tensor *mask_in = ox_in_tensor(ctx, 3);
	const ox_tensor *pk = ox_in_tensor(ctx, 4);
	const ox_tensor *pv = ox_in_tensor(ctx, 5);
	const ox_tensor *nonpad = ox_in_tensor(ctx, 6);
	ox_dtype	dt;
	attn_shape	s;
	attn_mask	mask;
	attn_job	job;
	ox_tensor  *y_out,
			   *pk_out = NULL,
			   *pv_out = NULL,
			   *qk_out = NULL;
	float	   *qf = NULL,
			   *kf = NULL,
			   *vf = NULL,
			   *yf = NULL,
			   *qkf = NULL,
			   *scores = NULL;
	bool		own_q = false,
				own_k = false,
				own_v = false,
				own_y = false,
				own_qk = false;
	ox_code		rc = OX_OK;

	if (!q || !k || !v)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Attention: Q, K and V are required");
	dt = q->dtype;
	if (!attn_is_float_type(dt))
		return ox_fail(ctx->st, OX_UNSUPPORTED, "Attention: type %s is not supported", ox_dtype_name(dt));
	if (k->dtype != dt || v->dtype != dt || (pk && pk->dtype != dt) || (pv && pv->dtype != dt))
		return ox_fail(ctx->st, OX_UNSUPPORTED,
					   "Attention: Q, K, V, past_key and past_value must share one type (Q is %s)",
					   ox_dtype_name(dt));
	OX_TRY(attn_resolve_shape(ctx, as, q, k, v, pk, pv, &s));
	if (nonpad && (nonpad->dtype != OX_INT64 || nonpad->rank != 1 || nonpad->dims[0] != s.batch))
	{
		char		a[ATTN_SHAPE_LEN];

		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "Attention: nonpad_kv_seqlen must be int64 of shape [%lld], got %s %s",
					   (long long) s.batch, ox_dtype_name(nonpad->dtype), attn_shape_str(nonpad, a));
	}

	/* outputs */
	{
		int64_t		y3[3] = {s.batch, s.q_len, s.q_heads * s.v_head};
		int64_t		y4[4] = {s.batch, s.q_heads, s.q_len, s.v_head};
		int64_t		kd[4] = {s.batch, s.kv_heads, s.total_len, s.head};
		int64_t		vd[4] = {s.batch, s.kv_heads, s.total_len, s.v_head};
		int64_t		qd[4] = {s.batch, s.q_heads, s.q_len, s.total_len};

		y_out = s.three_d ? ox_out_tensor(ctx, 0, dt, 3, y3) : ox_out_tensor(ctx, 0, dt, 4, y4);
		if (!y_out)
			return ctx->st->code;
		if (ox_has_output(ctx, 1) && !(pk_out = ox_out_tensor(ctx, 1, dt, 4, kd)))
			return ctx->st->code;
		if (ox_has_output(ctx, 2) && !(pv_out = ox_out_tensor(ctx, 2, dt, 4, vd)))
			return ctx->st->code;
		if (ox_has_output(ctx, 3) && !(qk_out = ox_out_tensor(ctx, 3, dt, 4, qd)))
			return ctx->st->code;
	}
	OX_TRY(attn_load_mask(ctx, mask_in, &s, &mask));

	/* float32 working buffers, aliasing inputs/outputs where the type allows */
	if (!(qf = attn_as_float(ctx, q, &own_q)))
		goto fail;
	if (dt == OX_FLOAT && pk_out)
		kf = pk_out->data;
	else if (dt == OX_FLOAT && !pk && !s.three_d)
		kf = k->data;
	else if (!(kf = attn_scratch(ctx, s.batch * s.kv_heads * s.total_len * s.head)))
		goto fail;
	else
		own_k = true;
	if (kf != k->data && attn_gather_kv(ctx, kf, pk, k, &s, s.head) != OX_OK)
		goto fail;
	if (dt == OX_FLOAT && pv_out)
		vf = pv_out->data;
	else if (dt == OX_FLOAT && !pv && !s.three_d)
		vf = v->data;
	else if (!(vf = attn_scratch(ctx, s.batch * s.kv_heads * s.total_len * s.v_head)))
		goto fail;
	else
		own_v = true;
	if (vf != v->data && attn_gather_kv(ctx, vf, pv, v, &s, s.v_head) != OX_OK)
		goto fail;
	if (dt == OX_FLOAT)
		yf = y_out->data;
	else if (!(yf = attn_scratch(ctx, ox_tensor_numel(y_out))))
		goto fail;
	else
		own_y = true;
	if (qk_out)
	{
		if (dt == OX_FLOAT)
			qkf = qk_out->data;
		else if (!(qkf = attn_scratch(ctx, ox_tensor_numel(qk_out))))
			goto fail;
		else
			own_qk = true;
	}
	if (!(scores = attn_scratch(ctx, s.q_len * s.total_len)))
		goto fail;

	memset(&job, 0, sizeof(job));
	job.as = as;
	job.s = &s;
	job.q = qf;
	job.k = kf;
	job.v = vf;
	job.mask = &mask;
	job.nonpad = nonpad ? nonpad->data : NULL;
	job.y = yf;
	job.qk = qkf;
	job.scores = scores;
	job.scale = as->has_scale ? as->scale : (float) (1.0 / sqrt((double) (s.head > 0 ? s.head : 1)));
	if (attn_compute(ctx, &job) != OX_OK)
		goto fail;
	if (attn_store(ctx, y_out, yf) != OX_OK || attn_store(ctx, pk_out, kf) != OX_OK ||
		attn_store(ctx, pv_out, vf) != OX_OK || attn_store(ctx, qk_out, qkf) != OX_OK)
		goto fail;
	goto done;

fail:
	rc = ctx->st->code != OX_OK ? ctx->st->code : OX_INTERNAL;
done:
	ox_aligned_free(mask.data);
	if (own_q)
		ox_aligned_free(qf);
	if (own_k)
		ox_aligned_free(kf);
	if (own_v)
		ox_aligned_free(vf);
	if (own_y)
		ox_aligned_free(yf);
	if (own_qk)
		ox_aligned_free(qkf);
	ox_aligned_free(scores);
	return rc;
}

/* ---- family table -------------------------------------------------------- */

const ox_kernel_def ox_kernels_transformer[] = {
	{"", "Attention", 23, attn_prepare, attn_run, attn_free},
	{"", "RotaryEmbedding", 23, transformer_rotary_prepare, transformer_rotary_run, transformer_rotary_free},
	{OX_PRIVATE_FUSED_DOMAIN, "ScaledDotProductAttention", 1, transformer_sdpa_prepare, transformer_sdpa_run,
	transformer_sdpa_free, .tensor_outputs = true},
};
const int	ox_kernels_transformer_count = OX_KERNEL_COUNT(ox_kernels_transformer);
