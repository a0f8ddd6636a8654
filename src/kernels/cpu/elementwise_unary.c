/*
 * elementwise_unary.c
 *	  One-input elementwise math: Abs, Neg, Sign, Ceil, Floor, Round, Sqrt,
 *	  Reciprocal, Exp, Log, the trigonometric and hyperbolic functions, Erf,
 *	  IsNaN, IsInf, Not, BitwiseNot.
 *
 * float16 and bfloat16 go through the float functions (ox_ew_map converts).
 */
#include "kernels/cpu/elementwise.h"

/* a float-only map op: float and double functions from two expressions of x */
#define FLOAT_MAP(NAME, EXPRF, EXPRD) \
	OX_MAP_FN(NAME##_f32, float, float, EXPRF) \
	OX_MAP_FN(NAME##_f64, double, double, EXPRD) \
	static const ox_map_op NAME##_op = { \
		.fn = {[OX_FLOAT] = NAME##_f32, [OX_DOUBLE] = NAME##_f64}}; \
	ox_code \
	ox_ew_##NAME(ox_kernel_ctx *ctx) \
	{ \
		return ox_ew_map(ctx, &NAME##_op, NULL); \
	}

/* map functions for every integer type: SEXPR(T, U) for signed, UEXPR for unsigned */
#define SIGNED_MAPS(NAME, SEXPR) \
	OX_MAP_FN(NAME##_i8, int8_t, int8_t, SEXPR(int8_t, uint8_t)) \
	OX_MAP_FN(NAME##_i16, int16_t, int16_t, SEXPR(int16_t, uint16_t)) \
	OX_MAP_FN(NAME##_i32, int32_t, int32_t, SEXPR(int32_t, uint32_t)) \
	OX_MAP_FN(NAME##_i64, int64_t, int64_t, SEXPR(int64_t, uint64_t))
#define INT_MAPS(NAME, SEXPR, UEXPR) \
	SIGNED_MAPS(NAME, SEXPR) \
	OX_MAP_FN(NAME##_u8, uint8_t, uint8_t, UEXPR) \
	OX_MAP_FN(NAME##_u16, uint16_t, uint16_t, UEXPR) \
	OX_MAP_FN(NAME##_u32, uint32_t, uint32_t, UEXPR) \
	OX_MAP_FN(NAME##_u64, uint64_t, uint64_t, UEXPR)

#define SIGNED_FNS(NAME) \
	[OX_INT8] = NAME##_i8, [OX_INT16] = NAME##_i16, \
	[OX_INT32] = NAME##_i32, [OX_INT64] = NAME##_i64
#define UNSIGNED_FNS(NAME) \
	[OX_UINT8] = NAME##_u8, [OX_UINT16] = NAME##_u16, \
	[OX_UINT32] = NAME##_u32, [OX_UINT64] = NAME##_u64

/* negation in unsigned arithmetic: INT_MIN stays INT_MIN, no overflow */
#define NEG(T, U) ((T) (0 - (U) x))
#define ABS(T, U) (x < 0 ? NEG(T, U) : x)
#define SIGN(T, U) ((T) ((x > 0) - (x < 0)))

/* Abs: all numeric types */
OX_MAP_FN(abs_f32, float, float, fabsf(x))
OX_MAP_FN(abs_f64, double, double, fabs(x))
INT_MAPS(abs, ABS, x)
static const ox_map_op abs_op = {.fn = {[OX_FLOAT] = abs_f32, [OX_DOUBLE] = abs_f64,
SIGNED_FNS(abs), UNSIGNED_FNS(abs)}};

ox_code
ox_ew_abs(ox_kernel_ctx *ctx)
{
	return ox_ew_map(ctx, &abs_op, NULL);
}

/* Neg: signed integers and floats */
OX_MAP_FN(neg_f32, float, float, -x)
OX_MAP_FN(neg_f64, double, double, -x)
SIGNED_MAPS(neg, NEG)
static const ox_map_op neg_op = {.fn = {[OX_FLOAT] = neg_f32, [OX_DOUBLE] = neg_f64,
SIGNED_FNS(neg)}};

ox_code
ox_ew_neg(ox_kernel_ctx *ctx)
{
	return ox_ew_map(ctx, &neg_op, NULL);
}

/* Sign: all numeric types; NaN stays NaN */
OX_MAP_FN(sign_f32, float, float, x > 0 ? 1.0f : (x < 0 ? -1.0f : (x == 0 ? 0.0f : x)))
OX_MAP_FN(sign_f64, double, double, x > 0 ? 1.0 : (x < 0 ? -1.0 : (x == 0 ? 0.0 : x)))
INT_MAPS(sign, SIGN, (x > 0))
static const ox_map_op sign_op = {.fn = {[OX_FLOAT] = sign_f32, [OX_DOUBLE] = sign_f64,
SIGNED_FNS(sign), UNSIGNED_FNS(sign)}};

ox_code
ox_ew_sign(ox_kernel_ctx *ctx)
{
	return ox_ew_map(ctx, &sign_op, NULL);
}

/* float-only math; Round is half to even (nearbyint in the default mode) */
FLOAT_MAP(ceil, ceilf(x), ceil(x))
FLOAT_MAP(floor, floorf(x), floor(x))
FLOAT_MAP(round, nearbyintf(x), nearbyint(x))
FLOAT_MAP(sqrt, sqrtf(x), sqrt(x))
FLOAT_MAP(reciprocal, 1.0f / x, 1.0 / x)
FLOAT_MAP(exp, expf(x), exp(x))
FLOAT_MAP(log, logf(x), log(x))
FLOAT_MAP(sin, sinf(x), sin(x))
FLOAT_MAP(cos, cosf(x), cos(x))
FLOAT_MAP(tan, tanf(x), tan(x))
FLOAT_MAP(asin, asinf(x), asin(x))
FLOAT_MAP(acos, acosf(x), acos(x))
FLOAT_MAP(atan, atanf(x), atan(x))
FLOAT_MAP(sinh, sinhf(x), sinh(x))
FLOAT_MAP(cosh, coshf(x), cosh(x))
FLOAT_MAP(asinh, asinhf(x), asinh(x))
FLOAT_MAP(acosh, acoshf(x), acosh(x))
FLOAT_MAP(atanh, atanhf(x), atanh(x))

/* Erf: the float loop is a vectorizable approximation (see ox_fast_erff) */
OX_MAP_FN_A(OX_SIMD_CLONES, ox_ew_erf_f32, float, float, ox_fast_erff(x))
OX_MAP_FN(erf_f64, double, double, erf(x))
static const ox_map_op erf_op = {.fn = {[OX_FLOAT] = ox_ew_erf_f32, [OX_DOUBLE] = erf_f64}};

ox_code
ox_ew_erf(ox_kernel_ctx *ctx)
{
	return ox_ew_map(ctx, &erf_op, NULL);
}

/* IsNaN, IsInf: float types to bool */
OX_MAP_FN(isnan_f32, float, uint8_t, x != x)
OX_MAP_FN(isnan_f64, double, uint8_t, x != x)
static const ox_map_op isnan_op = {.fn = {[OX_FLOAT] = isnan_f32, [OX_DOUBLE] = isnan_f64},
.out_dt = OX_BOOL};

ox_code
ox_ew_isnan(ox_kernel_ctx *ctx)
{
	return ox_ew_map(ctx, &isnan_op, NULL);
}

OX_MAP_FN(isinf_f32, float, uint8_t,
		  (p->flag_a && x == INFINITY) || (p->flag_b && x == -INFINITY))
OX_MAP_FN(isinf_f64, double, uint8_t,
		  (p->flag_a && x == INFINITY) || (p->flag_b && x == -INFINITY))
static const ox_map_op isinf_op = {.fn = {[OX_FLOAT] = isinf_f32, [OX_DOUBLE] = isinf_f64},
.out_dt = OX_BOOL};

ox_code
ox_ew_isinf(ox_kernel_ctx *ctx)
{
	ox_map_params p = {0};

	p.flag_a = ox_attr_int(ctx->node, "detect_positive", 1) != 0;
	p.flag_b = ox_attr_int(ctx->node, "detect_negative", 1) != 0;
	return ox_ew_map(ctx, &isinf_op, &p);
}

/* Not: bool; BitwiseNot: integers */
OX_MAP_FN(not_bool, uint8_t, uint8_t, x == 0)
static const ox_map_op not_op = {.fn = {[OX_BOOL] = not_bool}};

ox_code
ox_ew_not(ox_kernel_ctx *ctx)
{
	return ox_ew_map(ctx, &not_op, NULL);
}

#define BNOT(T, U) (~x)
INT_MAPS(bnot, BNOT, ~x)
static const ox_map_op bnot_op = {.fn = {SIGNED_FNS(bnot), UNSIGNED_FNS(bnot)}};

ox_code
ox_ew_bitwise_not(ox_kernel_ctx *ctx)
{
	return ox_ew_map(ctx, &bnot_op, NULL);
}
