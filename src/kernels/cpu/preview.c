/*
 * preview.c
 *	  BitCast (opset 26) and Swish (opset 24), the helpers the preview
 *	  family shares, and the family table.
 *
 * BitCast copies bit patterns: the engine stores every tensor
 * little-endian, so reinterpreting is a memcpy once the two element types
 * are known to have the same ONNX width.  The narrow types (float8, float4,
 * int4, int2, ...) live one element per byte; ox_bitcast_elements keeps
 * their low bits and re-extends narrow integers for the target's
 * signedness, and makes bool 0/1.
 *
 * Swish computes x * sigmoid(alpha * x) in float32 for float32, float16 and
 * bfloat16 and in double for double, with a sigmoid that never overflows.
 */
#include "kernels/cpu/preview.h"

#include <stdlib.h>

/* elements per parallel chunk for cheap elementwise loops */
#define PREVIEW_EW_CHUNK 16384

float *
preview_to_float(ox_kernel_ctx *ctx, const char *op, const ox_tensor *t)
{
	int64_t		n = ox_tensor_numel(t);
	float	   *f;

	if (n < 0)
	{
		ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "%s: tensor size overflows", op);
		return NULL;
	}
	f = ox_workspace_aligned((size_t) (n > 0 ? n : 1) * sizeof(float), ctx->st, "preview");
	if (!f)
	{
		ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: could not allocate %lld floats", op, (long long) n);
		return NULL;
	}
	if (n > 0 && ox_convert_elements(f, OX_FLOAT, t->data, t->dtype, n, ctx->st) != OX_OK)
	{
		ox_aligned_free(f);
		return NULL;
	}
	return f;
}

void
preview_free_state(void *state)
{
	free(state);
}

/* ---- BitCast ------------------------------------------------------------- */

typedef struct bitcast_state
{
	ox_dtype	to;
} bitcast_state;

static ox_code
bitcast_prepare(ox_prepare_ctx *pc)
{
	const ox_attr *to = ox_node_attr(pc->node, "to");
	bitcast_state *s;

	if (!to || to->type != OX_ATTR_INT)
		return ox_fail(pc->st, OX_INVALID_MODEL, "BitCast: the integer attribute \"to\" is required");
	if (to->i <= OX_UNDEFINED || to->i >= OX_DTYPE_COUNT)
		return ox_fail(pc->st, OX_UNSUPPORTED, "BitCast: target element type %lld is not supported",
					   (long long) to->i);
	if (to->i == OX_STRING)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "BitCast: the target type cannot be string");
	if (ox_dtype_bits((ox_dtype) to->i) == 0)
		return ox_fail(pc->st, OX_UNSUPPORTED, "BitCast: target type %s is not supported",
					   ox_dtype_name((ox_dtype) to->i));
	s = malloc(sizeof(*s));
	if (!s)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "BitCast: could not allocate kernel state");
	s->to = (ox_dtype) to->i;
	pc->state = s;
	return OX_OK;
}

static ox_code
bitcast_run(ox_kernel_ctx *ctx)
{
	const bitcast_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	ox_tensor  *y;
	int64_t		n;

	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "BitCast: the input is required");
	if (x->dtype == OX_STRING || ox_dtype_bits(x->dtype) == 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "BitCast: input of type %s cannot be reinterpreted",
					   ox_dtype_name(x->dtype));
	if (ox_dtype_bits(x->dtype) != ox_dtype_bits(s->to) ||
		ox_dtype_size(x->dtype) != ox_dtype_size(s->to))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "BitCast: input type %s is %d bits wide but target type %s is %d bits wide",
					   ox_dtype_name(x->dtype), ox_dtype_bits(x->dtype),
					   ox_dtype_name(s->to), ox_dtype_bits(s->to));
	n = ox_tensor_numel(x);
	if (n < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "BitCast: input size overflows");
	if (!(y = ox_out_tensor(ctx, 0, s->to, x->rank, x->dims)))
		return ctx->st->code;
	ox_bitcast_elements(y->data, s->to, x->data, x->dtype, n);
	return OX_OK;
}

/* ---- Swish --------------------------------------------------------------- */

typedef struct swish_state
{
	float		alpha;
} swish_state;

typedef struct swish_job
{
	const void *x;
	void	   *y;
	ox_dtype	dt;
	float		alpha;
} swish_job;

static ox_code
swish_prepare(ox_prepare_ctx *pc)
{
	const ox_attr *a = ox_node_attr(pc->node, "alpha");
	swish_state *s;

	if (a && a->type != OX_ATTR_FLOAT)
		return ox_fail(pc->st, OX_INVALID_MODEL, "Swish: alpha must be a float attribute, got %s",
					   ox_attr_type_name(a->type));
	if (a && !isfinite(a->f))
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "Swish: alpha must be finite, got %g", (double) a->f);
	s = malloc(sizeof(*s));
	if (!s)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "Swish: could not allocate kernel state");
	s->alpha = a ? a->f : 1.0f;
	pc->state = s;
	return OX_OK;
}

static void
swish_range(void *arg, int64_t begin, int64_t end)
{
	const swish_job *j = arg;
	const float alpha = j->alpha;

	switch (j->dt)
	{
		case OX_FLOAT:
			{
				const float *x = j->x;
				float	   *y = j->y;

				for (int64_t i = begin; i < end; i++)
					y[i] = x[i] * preview_sigmoidf(alpha * x[i]);
				break;
			}
		case OX_DOUBLE:
			{
				const double *x = j->x;
				double	   *y = j->y;

				for (int64_t i = begin; i < end; i++)
					y[i] = x[i] * preview_sigmoid((double) alpha * x[i]);
				break;
			}
		case OX_FLOAT16:
			{
				const uint16_t *x = j->x;
				uint16_t   *y = j->y;

				for (int64_t i = begin; i < end; i++)
				{
					float		v = ox_half_to_float(x[i]);

					y[i] = ox_float_to_half(v * preview_sigmoidf(alpha * v));
				}
				break;
			}
		case OX_BFLOAT16:
			{
				const uint16_t *x = j->x;
				uint16_t   *y = j->y;

				for (int64_t i = begin; i < end; i++)
				{
					float		v = ox_bf16_to_float(x[i]);

					y[i] = ox_float_to_bf16(v * preview_sigmoidf(alpha * v));
				}
				break;
			}
		default:
			break;
	}
}

static ox_code
swish_run(ox_kernel_ctx *ctx)
{
	const swish_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	ox_tensor  *y;
	swish_job	job;
	int64_t		n;

	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Swish: the input is required");
	if (x->dtype != OX_FLOAT && x->dtype != OX_DOUBLE && x->dtype != OX_FLOAT16 && x->dtype != OX_BFLOAT16)
		return ox_fail(ctx->st, OX_UNSUPPORTED,
					   "Swish: input type %s is not supported (float, double, float16, bfloat16)",
					   ox_dtype_name(x->dtype));
	n = ox_tensor_numel(x);
	if (n < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "Swish: input size overflows");
	if (!(y = ox_out_tensor(ctx, 0, x->dtype, x->rank, x->dims)))
		return ctx->st->code;
	job.x = x->data;
	job.y = y->data;
	job.dt = x->dtype;
	job.alpha = s->alpha;
	if (n > 0)
		ox_parallel_for(ctx, n, PREVIEW_EW_CHUNK, swish_range, &job);
	return OX_OK;
}

/* ---- family table -------------------------------------------------------- */

const ox_kernel_def ox_kernels_preview[] = {
	{"", "BitCast", 26, bitcast_prepare, bitcast_run, preview_free_state},
	{"", "Swish", 24, swish_prepare, swish_run, preview_free_state},
	{"", "CausalConvWithState", 27, preview_causal_conv_prepare, preview_causal_conv_run,
	preview_free_state},
	{"", "LinearAttention", 27, preview_linear_attention_prepare, preview_linear_attention_run,
	preview_free_state},
	{"ai.onnx.preview", "FlexAttention", 1, preview_flex_attention_prepare,
	preview_flex_attention_run, preview_free_state},
	{"ai.onnx.preview.training", "Momentum", 1, preview_momentum_prepare, preview_optimizer_run,
	preview_free_state},
	{"ai.onnx.preview.training", "Adam", 1, preview_adam_prepare, preview_optimizer_run,
	preview_free_state},
	{"ai.onnx.preview.training", "Adagrad", 1, preview_adagrad_prepare, preview_optimizer_run,
	preview_free_state},
	{"ai.onnx.preview.training", "Gradient", 1, preview_gradient_prepare, preview_gradient_run,
	preview_free_state},
};
const int	ox_kernels_preview_count = OX_KERNEL_COUNT(ox_kernels_preview);
