/*
 * activation.c
 *	  The activation kernel family table and the pointwise activations:
 *	  Relu, LeakyRelu, PRelu, Elu, Selu, Celu, Sigmoid, HardSigmoid,
 *	  HardSwish, Tanh, Softplus, Softsign, ThresholdedRelu, Mish, Gelu,
 *	  Shrink.  Softmax, LogSoftmax and Hardmax are in activation_softmax.c.
 *
 * Float types only, except where the operator allows integers (Relu from
 * opset 14, PRelu from 9, Shrink).  float16/bfloat16 run through the float
 * functions; float Sigmoid, Tanh and Gelu use the vectorizable approximations
 * of elementwise.h (a few ulp), double uses libm.
 */
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/fused_act.h"
#include "kernels/cpu/vmath_avx512.h"

/* a map op with float, double and the given extra functions */
#define ACT_OP(NAME, ...) \
	static const ox_map_op NAME##_op = {.fn = {[OX_FLOAT] = NAME##_f32, \
	[OX_DOUBLE] = NAME##_f64, __VA_ARGS__}}

/* Relu: floats (NaN stays NaN, as max(0, x)) and signed integers */
OX_MAP_FN(relu_f32, float, float, x < 0.0f ? 0.0f : x)
OX_MAP_FN(relu_f64, double, double, x < 0.0 ? 0.0 : x)
OX_MAP_FN(relu_i8, int8_t, int8_t, x > 0 ? x : 0)
OX_MAP_FN(relu_i16, int16_t, int16_t, x > 0 ? x : 0)
OX_MAP_FN(relu_i32, int32_t, int32_t, x > 0 ? x : 0)
OX_MAP_FN(relu_i64, int64_t, int64_t, x > 0 ? x : 0)
ACT_OP(relu, [OX_INT8] = relu_i8, [OX_INT16] = relu_i16, [OX_INT32] = relu_i32,
	   [OX_INT64] = relu_i64);

ox_code
ox_act_relu(ox_kernel_ctx *ctx)
{
	return ox_ew_map(ctx, &relu_op, NULL);
}

/* the float ops: ACT_FLOAT(NAME, float expr, double expr); p holds attributes.
 * The float loops get an AVX2 variant: most are compute-bound. */
#define ACT_FLOAT(NAME, EXPRF, EXPRD) \
	OX_MAP_FN_A(OX_SIMD_CLONES, ox_act_##NAME##_f32, float, float, EXPRF) \
	OX_MAP_FN(NAME##_f64, double, double, EXPRD) \
	static const ox_map_op NAME##_op = {.fn = {[OX_FLOAT] = ox_act_##NAME##_f32, \
	[OX_DOUBLE] = NAME##_f64}};

static inline double
softplus_d(double x)
{
	return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

static inline float
softplus_f(float x)
{
	return x > 0 ? x + log1pf(expf(-x)) : log1pf(expf(x));
}

static inline double
hard_sigmoid_d(double v)
{
	return v < 0 ? 0 : (v > 1 ? 1 : v);
}

#define SQRT_2_OVER_PI 0.7978845608028654
#define SQRT_HALF 0.7071067811865476

ACT_FLOAT(leaky, x < 0 ? p->alpha * x : x, x < 0 ? p->alpha * x : x)
ACT_FLOAT(elu, x < 0 ? p->alpha * expm1f(x) : x, x < 0 ? p->alpha * expm1(x) : x)
ACT_FLOAT(selu, x <= 0 ? p->gamma * (p->alpha * expm1f(x)) : p->gamma * x,
		  x <= 0 ? p->gamma * (p->alpha * expm1(x)) : p->gamma * x)
ACT_FLOAT(celu, (x > 0 ? x : 0.0f) + (x < 0 ? p->alpha * expm1f(x / p->alpha) : 0.0f),
		  (x > 0 ? x : 0.0) + (x < 0 ? p->alpha * expm1(x / p->alpha) : 0.0))
ACT_FLOAT(hard_sigmoid, ox_clampf(p->alpha * x + p->beta, 0.0f, 1.0f),
		  hard_sigmoid_d((double) p->alpha * x + p->beta))
ACT_FLOAT(hard_swish, x * ox_clampf(x * (1.0f / 6.0f) + 0.5f, 0.0f, 1.0f),
		  x * hard_sigmoid_d(x / 6.0 + 0.5))
ACT_FLOAT(softplus, softplus_f(x), softplus_d(x))

/*
 * Sigmoid and Tanh: float through vmath_avx512.h where the machine has
 * AVX-512 (half the instructions: fused multiply-adds), else through the
 * portable helpers, which the AVX2 and baseline builds compute alike.  The
 * same functions serve other families in place (the gates of rnn.c, where
 * libm's expf and tanhf per value were once two thirds of an LSTM's run;
 * fused activations), so a Sigmoid node and a gate agree on a machine.
 */
OX_SIMD_CLONES static void
act_sigmoid_rows_f32(float *y, const float *x, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = ox_fast_sigmoidf(x[i]);
}

OX_SIMD_CLONES static void
act_tanh_rows_f32(float *y, const float *x, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = ox_fast_tanhf(x[i]);
}

__attribute__((target("avx512f,fma")))
static void
sigmoid_rows_f32_avx512(float *y, const float *x, int64_t n)
{
	OX_VMATH16_LOOP(ox_sigmoid16, y, x, n);
}

__attribute__((target("avx512f,fma")))
static void
tanh_rows_f32_avx512(float *y, const float *x, int64_t n)
{
	OX_VMATH16_LOOP(ox_tanh16, y, x, n);
}

static void
sigmoid_rows_f32(float *y, const float *x, int64_t n)
{
	if (ox_have_avx512_fma())
		sigmoid_rows_f32_avx512(y, x, n);
	else
		act_sigmoid_rows_f32(y, x, n);
}

static void
tanh_rows_f32(float *y, const float *x, int64_t n)
{
	if (ox_have_avx512_fma())
		tanh_rows_f32_avx512(y, x, n);
	else
		act_tanh_rows_f32(y, x, n);
}

/*
 * The exported names are plain functions: clang 14 (the fuzz and sanitizer
 * builds) emits no symbol under a target_clones function's own name
 */
void
ox_sigmoid_inplace_f32(float *x, int64_t n)
{
	sigmoid_rows_f32(x, x, n);
}

void
ox_tanh_inplace_f32(float *x, int64_t n)
{
	tanh_rows_f32(x, x, n);
}

static void
sigmoid_map_f32(const ox_map_params *p, void *out, const void *in, int64_t n)
{
	(void) p;
	sigmoid_rows_f32(out, in, n);
}

static void
tanh_map_f32(const ox_map_params *p, void *out, const void *in, int64_t n)
{
	(void) p;
	tanh_rows_f32(out, in, n);
}

OX_MAP_FN(sigmoid_f64, double, double, x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x)))
OX_MAP_FN(tanh_f64, double, double, tanh(x))
static const ox_map_op sigmoid_op = {.fn = {[OX_FLOAT] = sigmoid_map_f32, [OX_DOUBLE] = sigmoid_f64}};
static const ox_map_op tanh_op = {.fn = {[OX_FLOAT] = tanh_map_f32, [OX_DOUBLE] = tanh_f64}};
ACT_FLOAT(softsign, x / (1.0f + fabsf(x)), x / (1.0 + fabs(x)))
ACT_FLOAT(thresholded, x > p->alpha ? x : 0.0f, x > p->alpha ? x : 0.0)
ACT_FLOAT(mish, x * tanhf(softplus_f(x)), x * tanh(softplus_d(x)))
ACT_FLOAT(gelu, 0.5f * x * (1.0f + ox_fast_erff(x * (float) SQRT_HALF)),
		  0.5 * x * (1.0 + erf(x * SQRT_HALF)))
ACT_FLOAT(gelu_tanh,
		  0.5f * x * (1.0f + ox_fast_tanhf((float) SQRT_2_OVER_PI * (x + 0.044715f * x * x * x))),
		  0.5 * x * (1.0 + tanh(SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))))

static inline ox_map_params
attrs(const ox_kernel_ctx *ctx, float alpha, float beta, float gamma)
{
	ox_map_params p = {0};

	p.alpha = ox_attr_float(ctx->node, "alpha", alpha);
	p.beta = ox_attr_float(ctx->node, "beta", beta);
	p.gamma = ox_attr_float(ctx->node, "gamma", gamma);
	return p;
}

ox_code
ox_act_leaky_relu(ox_kernel_ctx *ctx)
{
	ox_map_params p = attrs(ctx, 0.01f, 0, 0);

	return ox_ew_map(ctx, &leaky_op, &p);
}

ox_code
ox_act_elu(ox_kernel_ctx *ctx)
{
	ox_map_params p = attrs(ctx, 1.0f, 0, 0);

	return ox_ew_map(ctx, &elu_op, &p);
}

ox_code
ox_act_selu(ox_kernel_ctx *ctx)
{
	ox_map_params p = attrs(ctx, 1.67326319217681884765625f, 0, 1.05070102214813232421875f);

	return ox_ew_map(ctx, &selu_op, &p);
}

ox_code
ox_act_celu(ox_kernel_ctx *ctx)
{
	ox_map_params p = attrs(ctx, 1.0f, 0, 0);

	if (p.alpha == 0)
		return ox_fail(ctx->st, OX_INVALID_MODEL, "Celu alpha must not be 0");
	return ox_ew_map(ctx, &celu_op, &p);
}

ox_code
ox_act_sigmoid(ox_kernel_ctx *ctx)
{
	return ox_ew_map(ctx, &sigmoid_op, NULL);
}

ox_code
ox_act_hard_sigmoid(ox_kernel_ctx *ctx)
{
	ox_map_params p = attrs(ctx, 0.2f, 0.5f, 0);

	return ox_ew_map(ctx, &hard_sigmoid_op, &p);
}

ox_code
ox_act_hard_swish(ox_kernel_ctx *ctx)
{
	return ox_ew_map(ctx, &hard_swish_op, NULL);
}

ox_code
ox_act_tanh(ox_kernel_ctx *ctx)
{
	return ox_ew_map(ctx, &tanh_op, NULL);
}

ox_code
ox_act_softplus(ox_kernel_ctx *ctx)
{
	return ox_ew_map(ctx, &softplus_op, NULL);
}

ox_code
ox_act_softsign(ox_kernel_ctx *ctx)
{
	return ox_ew_map(ctx, &softsign_op, NULL);
}

ox_code
ox_act_thresholded_relu(ox_kernel_ctx *ctx)
{
	ox_map_params p = attrs(ctx, 1.0f, 0, 0);

	return ox_ew_map(ctx, &thresholded_op, &p);
}

ox_code
ox_act_mish(ox_kernel_ctx *ctx)
{
	return ox_ew_map(ctx, &mish_op, NULL);
}

/* Gelu (opset 20): approximate = "none" (erf) or "tanh"; state 1 for tanh */
ox_code
ox_act_gelu_prepare(ox_prepare_ctx *pc)
{
	const char *approx = ox_attr_string(pc->node, "approximate", "none");

	if (strcmp(approx, "none") != 0 && strcmp(approx, "tanh") != 0)
		return ox_fail(pc->st, OX_UNSUPPORTED,
					   "Gelu approximate must be \"none\" or \"tanh\", not \"%s\"", approx);
	return ox_ew_state_int(pc, strcmp(approx, "tanh") == 0);
}

ox_code
ox_act_gelu(ox_kernel_ctx *ctx)
{
	return ox_ew_map(ctx, ox_ew_state_get(ctx, 0) ? &gelu_tanh_op : &gelu_op, NULL);
}

/* Shrink: every numeric type; integers computed in double, truncated and
 * saturated to the type */
static inline double
clamp_d(double v, double lo, double hi)
{
	return v < lo ? lo : (v > hi ? hi : v);
}

#define SHRINK(T, LO, HI) \
	OX_MAP_FN(shrink_##T, T, T, \
			  clamp_d(x < -p->beta ? (double) x + p->alpha : \
					  (x > p->beta ? (double) x - p->alpha : 0), LO, HI))
SHRINK(int8_t, INT8_MIN, INT8_MAX)
SHRINK(uint8_t, 0, UINT8_MAX)
SHRINK(int16_t, INT16_MIN, INT16_MAX)
SHRINK(uint16_t, 0, UINT16_MAX)
SHRINK(int32_t, INT32_MIN, INT32_MAX)
SHRINK(uint32_t, 0, UINT32_MAX)
SHRINK(int64_t, -9223372036854775808.0, 9223372036854774784.0)
SHRINK(uint64_t, 0, 18446744073709549568.0)
OX_MAP_FN(shrink_f32, float, float,
		  x < -p->beta ? x + p->alpha : (x > p->beta ? x - p->alpha : 0.0f))
OX_MAP_FN(shrink_f64, double, double,
		  x < -p->beta ? x + p->alpha : (x > p->beta ? x - p->alpha : 0.0))
ACT_OP(shrink, [OX_INT8] = shrink_int8_t, [OX_UINT8] = shrink_uint8_t,
	   [OX_INT16] = shrink_int16_t, [OX_UINT16] = shrink_uint16_t,
	   [OX_INT32] = shrink_int32_t, [OX_UINT32] = shrink_uint32_t,
	   [OX_INT64] = shrink_int64_t, [OX_UINT64] = shrink_uint64_t);

ox_code
ox_act_shrink(ox_kernel_ctx *ctx)
{
	ox_map_params p = {0};

	/* alpha carries bias, beta lambd */
	p.alpha = ox_attr_float(ctx->node, "bias", 0.0f);
	p.beta = ox_attr_float(ctx->node, "lambd", 0.5f);
	return ox_ew_map(ctx, &shrink_op, &p);
}

/* ---- PRelu: slope broadcast onto X (unidirectionally) --------------------- */

OX_BIN_ROW(prelu_f32, float, float, float, OX_ID, OX_ID, a < 0 ? a * b : a)
OX_BIN_ROW(prelu_f64, double, double, double, OX_ID, OX_ID, a < 0 ? a * b : a)
OX_BIN_ROW(prelu_f16, uint16_t, uint16_t, float, OX_H2F, OX_F2H, a < 0 ? a * b : a)
OX_BIN_ROW(prelu_bf16, uint16_t, uint16_t, float, OX_B2F, OX_F2B, a < 0 ? a * b : a)
OX_BIN_ROW(prelu_i32, int32_t, int32_t, int32_t, OX_ID, OX_ID,
		   a < 0 ? (int32_t) ((uint32_t) a * (uint32_t) b) : a)
OX_BIN_ROW(prelu_i64, int64_t, int64_t, int64_t, OX_ID, OX_ID,
		   a < 0 ? (int64_t) ((uint64_t) a * (uint64_t) b) : a)
OX_BIN_ROW(prelu_u32, uint32_t, uint32_t, uint32_t, OX_ID, OX_ID, ((void) b, a))
OX_BIN_ROW(prelu_u64, uint64_t, uint64_t, uint64_t, OX_ID, OX_ID, ((void) b, a))

static const ox_ew_row_table prelu_fns = {
	[OX_FLOAT] = prelu_f32, [OX_DOUBLE] = prelu_f64, [OX_FLOAT16] = prelu_f16,
	[OX_BFLOAT16] = prelu_bf16, [OX_INT32] = prelu_i32, [OX_INT64] = prelu_i64,
	[OX_UINT32] = prelu_u32, [OX_UINT64] = prelu_u64,
};

ox_code
ox_act_prelu(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = ox_ew_input(ctx, 0);
	const ox_tensor *slope = ox_ew_input(ctx, 1);
	ox_tensor	view;

	if (!x || !slope)
		return ctx->st->code;
	if (x->dtype != slope->dtype)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "PRelu inputs have different types %s and %s",
					   ox_dtype_name(x->dtype), ox_dtype_name(slope->dtype));
	if ((int) x->dtype <= 0 || x->dtype >= OX_DTYPE_COUNT || !prelu_fns[x->dtype])
		return ox_fail(ctx->st, OX_UNSUPPORTED, "PRelu does not support type %s",
					   ox_dtype_name(x->dtype));
	ox_tensor_view(&view, slope);

	/* before opset 7 a 1-D slope of C values applies per channel (axis 1) */
	if (ctx->node->opset < 7 && slope->rank == 1 && x->rank > 2 &&
		slope->dims[0] == x->dims[1] && slope->dims[0] != x->dims[x->rank - 1])
	{
		view.rank = x->rank - 1;
		for (int d = 1; d < view.rank; d++)
			view.dims[d] = 1;
	}

	/* unidirectional: the slope broadcasts to X, X keeps its shape */
	bool		ok = view.rank <= x->rank;

	for (int d = 0; ok && d < view.rank; d++)
	{
		int64_t		s = view.dims[view.rank - 1 - d];

		ok = s == 1 || s == x->dims[x->rank - 1 - d];
	}
	if (!ok)
	{
		char		a[128];
		char		b[128];

		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "PRelu slope shape %s does not broadcast to input shape %s",
					   ox_shape_str(slope->rank, slope->dims, b, sizeof(b)),
					   ox_shape_str(x->rank, x->dims, a, sizeof(a)));
	}
	return ox_ew_binary_tensors(ctx, x, &view, prelu_fns[x->dtype], x->dtype, NULL);
}

/* ---- the family table ---------------------------------------------------- */

#define K(op, since, fn) {"", op, since, NULL, fn, NULL}
#define KP(op, since, prep, fn) {"", op, since, prep, fn, free}

const ox_kernel_def ox_kernels_activation[] = {
	K("Relu", 1, ox_act_relu),
	K("LeakyRelu", 1, ox_act_leaky_relu),
	K("PRelu", 1, ox_act_prelu),
	K("Elu", 1, ox_act_elu),
	K("Selu", 1, ox_act_selu),
	K("Celu", 12, ox_act_celu),
	K("Sigmoid", 1, ox_act_sigmoid),
	K("HardSigmoid", 1, ox_act_hard_sigmoid),
	K("HardSwish", 14, ox_act_hard_swish),
	K("Tanh", 1, ox_act_tanh),
	K("Softplus", 1, ox_act_softplus),
	K("Softsign", 1, ox_act_softsign),
	K("ThresholdedRelu", 10, ox_act_thresholded_relu),
	K("Mish", 18, ox_act_mish),
	KP("Gelu", 20, ox_act_gelu_prepare, ox_act_gelu),
	K("Shrink", 9, ox_act_shrink),
	K("Softmax", 1, ox_act_softmax),
	K("LogSoftmax", 1, ox_act_log_softmax),
	K("Hardmax", 1, ox_act_hardmax),
};

const int	ox_kernels_activation_count = OX_KERNEL_COUNT(ox_kernels_activation);
