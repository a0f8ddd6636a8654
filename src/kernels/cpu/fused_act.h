/*
 * fused_act.h
 *	  Activations applied in place to a kernel's output, for the fused
 *	  operators the optimizer produces (com.microsoft FusedConv, FusedGemm:
 *	  the same names and attributes onnxruntime uses, so an optimized model
 *	  saved by onnx_optimize still loads there).
 */
#ifndef OX_FUSED_ACT_H
#define OX_FUSED_ACT_H

#include "kernels/kernel.h"

typedef enum nn_act_kind
{
	NN_ACT_NONE = 0,
	NN_ACT_RELU,
	NN_ACT_LEAKY_RELU,			/* alpha */
	NN_ACT_CLIP,				/* min, max */
	NN_ACT_SIGMOID,
	NN_ACT_TANH,
	NN_ACT_HARD_SIGMOID,		/* alpha, beta */
	/*
	 * x * HardSigmoid(x) with alpha 1/6, beta 1/2: only on the engine's
	 * own blocked convolutions (layout_nchwc.c absorbs a HardSwish there),
	 * since onnxruntime's FusedConv does not know it and saved models
	 * must load there
	 */
	NN_ACT_HARD_SWISH,
	/*
	 * x * Sigmoid(x) (SiLU, Swish): the same, for EfficientNet's
	 * Sigmoid-then-Mul activations (layout_nchwc.c absorbs the pair)
	 */
	NN_ACT_SILU
} nn_act_kind;

typedef struct nn_activation
{
	nn_act_kind kind;
	float		p0;
	float		p1;
} nn_activation;

/* parse the node's activation / activation_params attributes (none: identity) */
ox_code		nn_activation_parse(const ox_node *node, nn_activation *act, ox_status *st);
/* apply to n floats in place (split across the intra-op threads) */
void		nn_activation_apply_f32(ox_kernel_ctx *ctx, const nn_activation *act, float *y, int64_t n);
/* the same on one thread, for kernels that apply it to a row they just wrote */
void		nn_activation_apply_row_f32(const nn_activation *act, float *y, int64_t n);
void		nn_activation_apply_f64(const nn_activation *act, double *y, int64_t n);

/* the Sigmoid and Tanh ops' float math in place (activation.c) */
void		ox_sigmoid_inplace_f32(float *x, int64_t n);
void		ox_tanh_inplace_f32(float *x, int64_t n);

#endif							/* OX_FUSED_ACT_H */
