/*
 * attention_contrib.h
 *	  Private header of the com.microsoft operators that transformer
 *	  fusions produce (attention_contrib.c): SkipLayerNormalization is
 *	  registered in the norm family table, the others in the gemm family
 *	  table next to the products they follow.
 */
#ifndef OX_KERNELS_CPU_ATTENTION_CONTRIB_H
#define OX_KERNELS_CPU_ATTENTION_CONTRIB_H

#include "kernels/kernel.h"

/*
 * One float32 row normalized over its n elements: s = x (+ skip) (+ add),
 * y = (s - mean) * inv * scale (+ shift), inv = 1 / sqrt(variance + eps).
 * s is stored at sum when given (otherwise at y, which then serves as the
 * scratch row).  rms: the mean is taken as 0 (RMSNormalization).
 */
typedef struct nn_ln_row
{
	const float *x;
	const float *skip;			/* NULL: none */
	const float *add;			/* NULL: none */
	const float *scale;
	const float *shift;			/* NULL: none */
	float	   *sum;			/* NULL: not wanted */
	float	   *y;
	int64_t		n;
	double		eps;
	bool		rms;
} nn_ln_row;

void		nn_layer_norm_row_f32(const nn_ln_row *r, float *mean, float *inv);

/* com.microsoft SkipLayerNormalization */
ox_code		nn_skip_layer_norm_prepare(ox_prepare_ctx *pc);
ox_code		nn_skip_layer_norm_run(ox_kernel_ctx *ctx);

/* com.microsoft Gelu: x * 0.5 * (1 + erf(x / sqrt(2))) */
ox_code		nn_contrib_gelu_run(ox_kernel_ctx *ctx);
/* com.microsoft BiasGelu: Gelu(A + B), B a vector over A's last axis */
ox_code		nn_contrib_bias_gelu_run(ox_kernel_ctx *ctx);

/*
 * y[i] = gelu(x[i] + bias[i]) for n floats (bias NULL: none), vectorized;
 * y may be x.  The float32 GELU every fused kernel uses.
 */
void		nn_gelu_f32(const float *x, const float *bias, float *y, int64_t n);

#endif							/* OX_KERNELS_CPU_ATTENTION_CONTRIB_H */
