/*
 * preview.h
 *	  Private header of the preview kernel family: the newest ai.onnx
 *	  operators (BitCast, Swish, CausalConvWithState, LinearAttention),
 *	  ai.onnx.preview FlexAttention and the ai.onnx.preview.training
 *	  optimizers (Momentum, Adam, Adagrad).  The family table in preview.c
 *	  collects the entry points that the other preview_*.c files export.
 *
 * Symbols that leave a file carry the preview_ prefix so that they cannot
 * clash with other families.
 */
#ifndef OX_KERNELS_CPU_PREVIEW_H
#define OX_KERNELS_CPU_PREVIEW_H

#include <math.h>

#include "kernels/kernel.h"

/* sigmoid without overflow: exp() only ever sees a non-positive argument */
static inline float
preview_sigmoidf(float x)
{
	if (x >= 0.0f)
		return 1.0f / (1.0f + expf(-x));
	else
	{
		float		e = expf(x);

		return e / (1.0f + e);
	}
}

static inline double
preview_sigmoid(double x)
{
	if (x >= 0.0)
		return 1.0 / (1.0 + exp(-x));
	else
	{
		double		e = exp(x);

		return e / (1.0 + e);
	}
}

/* float32 copy of a float16/bfloat16/float32 tensor's elements; NULL + status on failure */
float	   *preview_to_float(ox_kernel_ctx *ctx, const char *op, const ox_tensor *t);

/* preview_conv.c */
ox_code		preview_causal_conv_prepare(ox_prepare_ctx *pc);
ox_code		preview_causal_conv_run(ox_kernel_ctx *ctx);

/* preview_linear_attention.c */
ox_code		preview_linear_attention_prepare(ox_prepare_ctx *pc);
ox_code		preview_linear_attention_run(ox_kernel_ctx *ctx);

/* preview_flex_attention.c */
ox_code		preview_flex_attention_prepare(ox_prepare_ctx *pc);
ox_code		preview_flex_attention_run(ox_kernel_ctx *ctx);

/* preview_training.c */
ox_code		preview_momentum_prepare(ox_prepare_ctx *pc);
ox_code		preview_adam_prepare(ox_prepare_ctx *pc);
ox_code		preview_adagrad_prepare(ox_prepare_ctx *pc);
ox_code		preview_optimizer_run(ox_kernel_ctx *ctx);

/* every prepare above allocates its state with malloc */
/* ai.onnx.preview.training Gradient (preview_gradient.c) */
ox_code		preview_gradient_prepare(ox_prepare_ctx *pc);
ox_code		preview_gradient_run(ox_kernel_ctx *ctx);

void		preview_free_state(void *state);

#endif							/* OX_KERNELS_CPU_PREVIEW_H */
