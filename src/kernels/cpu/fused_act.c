/*
 * fused_act.c
 *	  In-place activations for fused operators.
 */
#include "kernels/cpu/fused_act.h"

#include <math.h>
#include <string.h>

ox_code
nn_activation_parse(const ox_node *node, nn_activation *act, ox_status *st)
{
	const char *name = ox_attr_string(node, "activation", NULL);
	const float *p;
	int			np = ox_attr_floats(node, "activation_params", &p);
	float		ab[2];

	/* FusedConv passes parameters as activation_params; FusedGemm as
	 * activation_alpha / activation_beta (onnxruntime's schemas differ) */
	if (np == 0 && ox_node_attr(node, "activation_alpha"))
	{
		ab[0] = ox_attr_float(node, "activation_alpha", 0.0f);
		ab[1] = ox_attr_float(node, "activation_beta", 0.0f);
		p = ab;
		np = ox_node_attr(node, "activation_beta") ? 2 : 1;
	}

	memset(act, 0, sizeof(*act));
	/* onnxruntime treats a missing activation as the identity (FusedConv
	 * with only a residual Z, from Conv + Add) */
	if (!name)
		act->kind = NN_ACT_NONE;
	else if (strcmp(name, "Relu") == 0)
		act->kind = NN_ACT_RELU;
	else if (strcmp(name, "LeakyRelu") == 0)
	{
		act->kind = NN_ACT_LEAKY_RELU;
		act->p0 = np >= 1 ? p[0] : 0.01f;
	}
	else if (strcmp(name, "Clip") == 0)
	{
		act->kind = NN_ACT_CLIP;
		act->p0 = np >= 1 ? p[0] : -INFINITY;
		act->p1 = np >= 2 ? p[1] : INFINITY;
	}
	else if (strcmp(name, "Sigmoid") == 0)
		act->kind = NN_ACT_SIGMOID;
	else if (strcmp(name, "Tanh") == 0)
		act->kind = NN_ACT_TANH;
	else if (strcmp(name, "HardSigmoid") == 0)
	{
		act->kind = NN_ACT_HARD_SIGMOID;
		act->p0 = np >= 1 ? p[0] : 0.2f;
		act->p1 = np >= 2 ? p[1] : 0.5f;
	}
	else if (strcmp(name, "HardSwish") == 0 && strcmp(node->domain, OX_NCHWC_DOMAIN) == 0)
		act->kind = NN_ACT_HARD_SWISH;
	else if (strcmp(name, "SiLU") == 0 && strcmp(node->domain, OX_NCHWC_DOMAIN) == 0)
		act->kind = NN_ACT_SILU;
	else
		return ox_fail(st, OX_UNSUPPORTED, "%s: activation \"%s\" is not supported", node->op_type, name);
	return OX_OK;
}

#define APPLY_BODY(T, SIGMOID_ROWS, TANH_ROWS) \
	switch (act->kind) \
	{ \
		case NN_ACT_NONE: \
			break; \
		case NN_ACT_RELU: \
			/* written so that NaN stays NaN, as in the standalone Relu */ \
			for (int64_t i = 0; i < n; i++) \
				y[i] = y[i] < 0 ? (T) 0 : y[i]; \
			break; \
		case NN_ACT_LEAKY_RELU: \
			for (int64_t i = 0; i < n; i++) \
				y[i] = y[i] >= 0 ? y[i] : (T) act->p0 * y[i]; \
			break; \
		case NN_ACT_CLIP: \
			for (int64_t i = 0; i < n; i++) \
			{ \
				T			v = y[i] < (T) act->p0 ? (T) act->p0 : y[i]; \
				y[i] = v > (T) act->p1 ? (T) act->p1 : v; \
			} \
			break; \
		case NN_ACT_SIGMOID: \
			SIGMOID_ROWS(y, n); \
			break; \
		case NN_ACT_TANH: \
			TANH_ROWS(y, n); \
			break; \
		case NN_ACT_HARD_SIGMOID: \
			for (int64_t i = 0; i < n; i++) \
			{ \
				T			v = (T) act->p0 * y[i] + (T) act->p1; \
				y[i] = v < 0 ? (T) 0 : (v > 1 ? (T) 1 : v); \
			} \
			break; \
		case NN_ACT_HARD_SWISH: \
			/* the standalone HardSwish's expression (activation.c) */ \
			for (int64_t i = 0; i < n; i++) \
			{ \
				T			v = y[i] * (T) (1.0 / 6.0) + (T) 0.5; \
				y[i] *= v < 0 ? (T) 0 : (v > 1 ? (T) 1 : v); \
			} \
			break; \
		case NN_ACT_SILU: \
			/* Sigmoid then Mul, as the unfused graph computes it */ \
			for (int64_t i = 0; i < n; i += 256) \
			{ \
				T			s[256]; \
				int64_t		len = n - i < 256 ? n - i : 256; \
				memcpy(s, y + i, sizeof(T) * (size_t) len); \
				SIGMOID_ROWS(s, len); \
				for (int64_t e = 0; e < len; e++) \
					y[i + e] *= s[e]; \
			} \
			break; \
	}

/*
 * float: the standalone Sigmoid and Tanh ops' vectorized math (activation.c),
 * so that a fused Conv/Gemm gives what the unfused graph gives; double: libm
 */
static void
sigmoid_rows_f64(double *y, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = 1 / (1 + exp(-y[i]));
}

static void
tanh_rows_f64(double *y, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = tanh(y[i]);
}

typedef struct act_job
{
	const nn_activation *act;
	float	   *y;
} act_job;

static void
apply_range_f32(void *arg, int64_t begin, int64_t end)
{
	act_job    *j = arg;
	const nn_activation *act = j->act;
	float	   *y = j->y + begin;
	int64_t		n = end - begin;

	APPLY_BODY(float, ox_sigmoid_inplace_f32, ox_tanh_inplace_f32)
}

void
nn_activation_apply_row_f32(const nn_activation *act, float *y, int64_t n)
{
	APPLY_BODY(float, ox_sigmoid_inplace_f32, ox_tanh_inplace_f32)
}

void
nn_activation_apply_f32(ox_kernel_ctx *ctx, const nn_activation *act, float *y, int64_t n)
{
	act_job		j = {act, y};

	if (act->kind == NN_ACT_NONE || n <= 0)
		return;
	ox_parallel_for(ctx, n, 16384, apply_range_f32, &j);
}

void
nn_activation_apply_f64(const nn_activation *act, double *y, int64_t n)
{
	APPLY_BODY(double, sigmoid_rows_f64, tanh_rows_f64)
}
