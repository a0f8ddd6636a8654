/*
 * preview_conv.c
 *	  CausalConvWithState (opset 27): a causal depthwise 1-D convolution
 *	  that carries its last k - 1 input positions from one call to the next
 *	  (Mamba, Gated DeltaNet), with an optional fused SiLU.
 *
 * Each (batch, channel) row is laid out once in float32 as
 * [past_state (or zeros), input], of length k - 1 + L; output position t is
 * the dot product of the row's window [t, t + k) with the channel's kernel,
 * and present_state is the last k - 1 positions of that row.  Rows are
 * independent and are split across the intra-op threads.  float16 and
 * bfloat16 compute in float32; the convolution result is rounded to the
 * tensor type before the activation, as the reference does.
 */
#include "kernels/cpu/preview.h"

#include <stdlib.h>
#include <string.h>

typedef struct causal_conv_state
{
	bool		silu;
} causal_conv_state;

typedef struct causal_conv_job
{
	const float *padded;		/* [rows, k - 1 + L] */
	const float *weight;		/* [channels, k] */
	const float *bias;			/* [channels] or NULL */
	float	   *out;			/* [rows, L] */
	int64_t		channels;
	int64_t		len;
	int64_t		k;
	ox_dtype	dt;
	bool		silu;
} causal_conv_job;

ox_code
preview_causal_conv_prepare(ox_prepare_ctx *pc)
{
	const char *act = ox_attr_string(pc->node, "activation", "none");
	causal_conv_state *s;
	bool		silu;

	if (strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0)
		silu = true;
	else if (strcmp(act, "none") == 0)
		silu = false;
	else
		return ox_fail(pc->st, OX_UNSUPPORTED,
					   "CausalConvWithState: activation must be \"none\", \"silu\" or \"swish\", got \"%s\"", act);
	s = malloc(sizeof(*s));
	if (!s)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "CausalConvWithState: could not allocate kernel state");
	s->silu = silu;
	pc->state = s;
	return OX_OK;
}

/* round a float32 to the precision of dt (float16/bfloat16), else keep it */
static inline float
causal_conv_round(float v, ox_dtype dt)
{
	if (dt == OX_FLOAT16)
		return ox_half_to_float(ox_float_to_half(v));
	if (dt == OX_BFLOAT16)
		return ox_bf16_to_float(ox_float_to_bf16(v));
	return v;
}

static void
causal_conv_range(void *arg, int64_t begin, int64_t end)
{
	const causal_conv_job *j = arg;
	const int64_t width = j->k - 1 + j->len;

	for (int64_t r = begin; r < end; r++)
	{
		const int64_t c = r % j->channels;
		const float *row = j->padded + r * width;
		const float *w = j->weight + c * j->k;
		const float b = j->bias ? j->bias[c] : 0.0f;
		float	   *y = j->out + r * j->len;

		for (int64_t t = 0; t < j->len; t++)
		{
			float		acc = 0.0f;

			for (int64_t i = 0; i < j->k; i++)
				acc += w[i] * row[t + i];
			acc = causal_conv_round(acc + b, j->dt);
			y[t] = j->silu ? acc * preview_sigmoidf(acc) : acc;
		}
	}
}

static bool
causal_conv_type_ok(ox_dtype dt)
{
	return dt == OX_FLOAT || dt == OX_FLOAT16 || dt == OX_BFLOAT16;
}

static ox_code
causal_conv_check(ox_kernel_ctx *ctx, const ox_tensor *x, const ox_tensor *w, const ox_tensor *bias,
				  const ox_tensor *past)
{
	char		a[128],
				b[128];

	if (!x || !w)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "CausalConvWithState: input and weight are required");
	if (!causal_conv_type_ok(x->dtype))
		return ox_fail(ctx->st, OX_UNSUPPORTED,
					   "CausalConvWithState: input type %s is not supported (float, float16, bfloat16)",
					   ox_dtype_name(x->dtype));
	if (w->dtype != x->dtype || (bias && bias->dtype != x->dtype) || (past && past->dtype != x->dtype))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "CausalConvWithState: weight, bias and past_state must have the input's type %s",
					   ox_dtype_name(x->dtype));
	if (x->rank != 3)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "CausalConvWithState: input must be rank 3 (batch, channels, length), got %s",
					   ox_shape_str(x->rank, x->dims, a, sizeof(a)));
	if (w->rank != 3 || w->dims[0] != x->dims[1] || w->dims[1] != 1 || w->dims[2] < 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "CausalConvWithState: weight has shape %s, expected [%lld, 1, k] with k >= 1",
					   ox_shape_str(w->rank, w->dims, a, sizeof(a)), (long long) x->dims[1]);
	if (bias && (bias->rank != 1 || bias->dims[0] != x->dims[1]))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "CausalConvWithState: bias has shape %s, expected [%lld]",
					   ox_shape_str(bias->rank, bias->dims, a, sizeof(a)), (long long) x->dims[1]);
	if (past)
	{
		int64_t		want[3] = {x->dims[0], x->dims[1], w->dims[2] - 1};

		if (!ox_shape_equal(past->rank, past->dims, 3, want))
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "CausalConvWithState: past_state has shape %s, expected %s",
						   ox_shape_str(past->rank, past->dims, a, sizeof(a)),
						   ox_shape_str(3, want, b, sizeof(b)));
	}
	{
		int64_t		padded[3] = {x->dims[0], x->dims[1], x->dims[2] + w->dims[2] - 1};

		if (ox_tensor_numel(x) < 0 || ox_tensor_numel(w) < 0 || x->dims[2] > OX_MAX_ELEMENTS ||
			w->dims[2] > OX_MAX_ELEMENTS || ox_shape_numel(3, padded) < 0)
			return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "CausalConvWithState: tensor sizes overflow");
	}
	return OX_OK;
}

ox_code
preview_causal_conv_run(ox_kernel_ctx *ctx)
{
	const causal_conv_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *w = ox_in_tensor(ctx, 1);
	const ox_tensor *bias = ox_in_tensor(ctx, 2);
	const ox_tensor *past = ox_in_tensor(ctx, 3);
	ox_tensor  *y,
			   *present;
	int64_t		batch,
				channels,
				len,
				k,
				rows,
				width;
	size_t		es;
	float	   *padded = NULL,
			   *wf = NULL,
			   *bf = NULL,
			   *yf = NULL;
	causal_conv_job job;
	ox_code		rc = OX_OK;

	OX_TRY(causal_conv_check(ctx, x, w, bias, past));
	batch = x->dims[0];
	channels = x->dims[1];
	len = x->dims[2];
	k = w->dims[2];
	rows = batch * channels;
	width = k - 1 + len;
	es = ox_dtype_size(x->dtype);
	{
		int64_t		pd[3] = {batch, channels, k - 1};

		if (!(y = ox_out_tensor(ctx, 0, x->dtype, 3, x->dims)) ||
			!(present = ox_out_tensor(ctx, 1, x->dtype, 3, pd)))
			return ctx->st->code;
	}
	if (rows == 0)
		return OX_OK;

	padded = ox_workspace_aligned((size_t) (rows * width > 0 ? rows * width : 1) * sizeof(float), ctx->st, "CausalConv");
	if (!padded)
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "CausalConvWithState: could not allocate %lld floats",
					   (long long) (rows * width));
	for (int64_t r = 0; r < rows; r++)
	{
		float	   *row = padded + r * width;

		if (k > 1 && past)
			rc = ox_convert_elements(row, OX_FLOAT, (const char *) past->data + (size_t) (r * (k - 1)) * es,
									 x->dtype, k - 1, ctx->st);
		else if (k > 1)
			memset(row, 0, (size_t) (k - 1) * sizeof(float));
		if (rc == OX_OK && len > 0)
			rc = ox_convert_elements(row + k - 1, OX_FLOAT, (const char *) x->data + (size_t) (r * len) * es,
									 x->dtype, len, ctx->st);
		if (rc != OX_OK)
			goto done;
	}
	if (!(wf = preview_to_float(ctx, "CausalConvWithState", w)) ||
		(bias && !(bf = preview_to_float(ctx, "CausalConvWithState", bias))))
		goto fail;
	if (x->dtype == OX_FLOAT)
		yf = y->data;
	else if (!(yf = ox_workspace_aligned((size_t) (rows * len > 0 ? rows * len : 1) * sizeof(float), ctx->st, "CausalConv")))
	{
		ox_fail(ctx->st, OX_OUT_OF_MEMORY, "CausalConvWithState: could not allocate the output buffer");
		goto fail;
	}

	job.padded = padded;
	job.weight = wf;
	job.bias = bf;
	job.out = yf;
	job.channels = channels;
	job.len = len;
	job.k = k;
	job.dt = x->dtype;
	job.silu = s->silu;
	if (len > 0)
		ox_parallel_for(ctx, rows, (int64_t) (1 + 65536 / (len * k + 1)), causal_conv_range, &job);

	if (yf != y->data && rows * len > 0 &&
		(rc = ox_convert_elements(y->data, x->dtype, yf, OX_FLOAT, rows * len, ctx->st)) != OX_OK)
		goto done;
	/* present_state: the last k - 1 positions of every padded row */
	if (k > 1)
		for (int64_t r = 0; r < rows; r++)
			if ((rc = ox_convert_elements((char *) present->data + (size_t) (r * (k - 1)) * es, x->dtype,
										  padded + r * width + len, OX_FLOAT, k - 1, ctx->st)) != OX_OK)
				goto done;
	goto done;

fail:
	rc = ctx->st->code != OX_OK ? ctx->st->code : OX_INTERNAL;
done:
	ox_aligned_free(padded);
	ox_aligned_free(wf);
	ox_aligned_free(bf);
	if (yf && yf != y->data)
		ox_aligned_free(yf);
	return rc;
}
