/*
 * elementwise_arith.c
 *	  Add, Sub, Mul, Div, Mod, Pow with multidirectional broadcasting.
 *
 * Integer arithmetic wraps (computed in unsigned types, never signed
 * overflow).  Integer Div truncates toward zero like C; integer Div and Mod
 * by zero are errors, found by scanning the divisor before computing.
 */
#include "kernels/cpu/elementwise.h"

/* one row function per numeric dtype; integers in unsigned CT so they wrap */
#define ARITH_ROWS(NAME, EXPR) \
	OX_BIN_ROW(NAME##_f32, float, float, float, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_f64, double, double, double, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_f16, uint16_t, uint16_t, float, OX_H2F, OX_F2H, EXPR) \
	OX_BIN_ROW(NAME##_bf16, uint16_t, uint16_t, float, OX_B2F, OX_F2B, EXPR) \
	OX_BIN_ROW(NAME##_i8, int8_t, int8_t, uint32_t, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_u8, uint8_t, uint8_t, uint32_t, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_i16, int16_t, int16_t, uint32_t, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_u16, uint16_t, uint16_t, uint32_t, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_i32, int32_t, int32_t, uint32_t, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_u32, uint32_t, uint32_t, uint32_t, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_i64, int64_t, int64_t, uint64_t, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_u64, uint64_t, uint64_t, uint64_t, OX_ID, OX_ID, EXPR)

#define NUMERIC_TABLE(NAME) { \
	[OX_FLOAT] = NAME##_f32, [OX_DOUBLE] = NAME##_f64, \
	[OX_FLOAT16] = NAME##_f16, [OX_BFLOAT16] = NAME##_bf16, \
	[OX_INT8] = NAME##_i8, [OX_UINT8] = NAME##_u8, \
	[OX_INT16] = NAME##_i16, [OX_UINT16] = NAME##_u16, \
	[OX_INT32] = NAME##_i32, [OX_UINT32] = NAME##_u32, \
	[OX_INT64] = NAME##_i64, [OX_UINT64] = NAME##_u64 }

ARITH_ROWS(add, a + b)
ARITH_ROWS(sub, a - b)
ARITH_ROWS(mul, a * b)

static const ox_ew_row_table add_fns = NUMERIC_TABLE(add);
static const ox_ew_row_table sub_fns = NUMERIC_TABLE(sub);
static const ox_ew_row_table mul_fns = NUMERIC_TABLE(mul);

ox_code
ox_ew_add(ox_kernel_ctx *ctx)
{
	return ox_ew_binary(ctx, add_fns, OX_UNDEFINED, NULL);
}

ox_code
ox_ew_sub(ox_kernel_ctx *ctx)
{
	return ox_ew_binary(ctx, sub_fns, OX_UNDEFINED, NULL);
}

ox_code
ox_ew_mul(ox_kernel_ctx *ctx)
{
	return ox_ew_binary(ctx, mul_fns, OX_UNDEFINED, NULL);
}

/* ---- Div and Mod --------------------------------------------------------- */

/* true when an integer tensor holds a zero */
static bool
has_zero(const ox_tensor *t)
{
	int64_t		n = ox_tensor_numel(t);
	size_t		es = ox_dtype_size(t->dtype);
	const uint8_t *p = t->data;

	/* integers are zero exactly when all their bytes are */
	for (int64_t i = 0; i < n; i++)
	{
		uint8_t		any = 0;

		for (size_t k = 0; k < es; k++)
			any |= p[i * es + k];
		if (!any)
			return true;
	}
	return false;
}

/* signed division: -1 negates in unsigned arithmetic (INT_MIN / -1 wraps) */
#define SDIV(T, U) (b == -1 ? (T) (0 - (U) a) : (T) (a / b))

/* Python/numpy remainder: the sign follows the divisor */
static inline int64_t
mod_floor_i64(int64_t a, int64_t b)
{
	int64_t		r = b == -1 ? 0 : a % b;

	if (r != 0 && ((r < 0) != (b < 0)))
		r += b;
	return r;
}

static inline double
mod_floor_f64(double a, double b)
{
	double		r = fmod(a, b);

	if (r != 0 && ((r < 0) != (b < 0)))
		r += b;
	else if (r == 0)
		r = copysign(0.0, b);
	return r;
}

static inline float
mod_floor_f32(float a, float b)
{
	float		r = fmodf(a, b);

	if (r != 0 && ((r < 0) != (b < 0)))
		r += b;
	else if (r == 0)
		r = copysignf(0.0f, b);
	return r;
}

#define INT_ROWS(NAME, SEXPR, UEXPR) \
	OX_BIN_ROW(NAME##_i8, int8_t, int8_t, int8_t, OX_ID, OX_ID, SEXPR(int8_t, uint8_t)) \
	OX_BIN_ROW(NAME##_u8, uint8_t, uint8_t, uint8_t, OX_ID, OX_ID, UEXPR) \
	OX_BIN_ROW(NAME##_i16, int16_t, int16_t, int16_t, OX_ID, OX_ID, SEXPR(int16_t, uint16_t)) \
	OX_BIN_ROW(NAME##_u16, uint16_t, uint16_t, uint16_t, OX_ID, OX_ID, UEXPR) \
	OX_BIN_ROW(NAME##_i32, int32_t, int32_t, int32_t, OX_ID, OX_ID, SEXPR(int32_t, uint32_t)) \
	OX_BIN_ROW(NAME##_u32, uint32_t, uint32_t, uint32_t, OX_ID, OX_ID, UEXPR) \
	OX_BIN_ROW(NAME##_i64, int64_t, int64_t, int64_t, OX_ID, OX_ID, SEXPR(int64_t, uint64_t)) \
	OX_BIN_ROW(NAME##_u64, uint64_t, uint64_t, uint64_t, OX_ID, OX_ID, UEXPR)

#define FLOAT_ROWS(NAME, EXPRF, EXPRD) \
	OX_BIN_ROW(NAME##_f32, float, float, float, OX_ID, OX_ID, EXPRF) \
	OX_BIN_ROW(NAME##_f64, double, double, double, OX_ID, OX_ID, EXPRD) \
	OX_BIN_ROW(NAME##_f16, uint16_t, uint16_t, float, OX_H2F, OX_F2H, EXPRF) \
	OX_BIN_ROW(NAME##_bf16, uint16_t, uint16_t, float, OX_B2F, OX_F2B, EXPRF)

#define MOD_TRUNC(T, U) (b == -1 ? (T) 0 : (T) (a % b))
#define MOD_FLOOR(T, U) ((T) mod_floor_i64(a, b))

FLOAT_ROWS(div, a / b, a / b)
INT_ROWS(div, SDIV, a / b)
FLOAT_ROWS(fmod, fmodf(a, b), fmod(a, b))
INT_ROWS(fmod, MOD_TRUNC, a % b)
FLOAT_ROWS(mod, mod_floor_f32(a, b), mod_floor_f64(a, b))
INT_ROWS(mod, MOD_FLOOR, a % b)

static const ox_ew_row_table div_fns = NUMERIC_TABLE(div);
static const ox_ew_row_table fmod_fns = NUMERIC_TABLE(fmod);
static const ox_ew_row_table mod_fns = NUMERIC_TABLE(mod);

static ox_code
check_int_divisor(ox_kernel_ctx *ctx)
{
	const ox_tensor *a = ox_in_tensor(ctx, 0);
	const ox_tensor *b = ox_in_tensor(ctx, 1);

	/* an empty broadcast result divides nothing; the runner checks shapes */
	if (a && b && ox_dtype_is_int(b->dtype) && ox_tensor_numel(a) != 0 && has_zero(b))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: integer division by zero",
					   ctx->node->op_type);
	return OX_OK;
}

ox_code
ox_ew_div(ox_kernel_ctx *ctx)
{
	OX_TRY(check_int_divisor(ctx));
	return ox_ew_binary(ctx, div_fns, OX_UNDEFINED, NULL);
}

/* Mod (opset 10): fmod=0 is the integer remainder whose sign follows the
 * divisor (numpy's mod, also applied to floats); fmod=1 is C's fmod / %. */
ox_code
ox_ew_mod(ox_kernel_ctx *ctx)
{
	int64_t		fmod_attr = ox_attr_int(ctx->node, "fmod", 0);

	if (fmod_attr != 0 && fmod_attr != 1)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "Mod attribute fmod must be 0 or 1, not %lld",
					   (long long) fmod_attr);
	OX_TRY(check_int_divisor(ctx));
	return ox_ew_binary(ctx, fmod_attr ? fmod_fns : mod_fns, OX_UNDEFINED, NULL);
}

/* ---- Pow --------------------------------------------------------------------
 *
 * The exponent may have its own type (opset 12+); the result has the base's.
 * It is converted once to the type the base computes in: float for
 * float/float16/bfloat16 bases, double for double, int64 for an integer
 * base with an integer exponent (exact, wrapping), double for an integer
 * base with a float exponent (then truncated, saturating).
 */

static inline float
powf_sq(float a, float b)
{
	return b == 2.0f ? a * a : powf(a, b);
}

static inline uint64_t
ipow_u64(uint64_t base, int64_t e)
{
	uint64_t	r = 1;

	if (e < 0)
	{
		/* 1/base^|e| truncated: only +-1 survive */
		if (base == 1)
			return 1;
		if (base == (uint64_t) -1)
			return (e & 1) ? base : 1;
		return 0;
	}
	while (e)
	{
		if (e & 1)
			r *= base;
		base *= base;
		e >>= 1;
	}
	return r;
}

static inline int64_t
sat_trunc(double v, double lo, double hi)
{
	if (isnan(v))
		return 0;
	if (v <= lo)
		return (int64_t) lo;
	if (v >= hi)
		return (int64_t) hi;
	return (int64_t) v;
}

#define POW_IROW(SFX, T, LO, HI) \
	static void \
	pow_##SFX##_ii(void *arg_, int64_t n, void *out_, const void *const *in_, const int *step) \
	{ \
		T		   *o = out_; \
		const T    *x = in_[0]; \
		const int64_t *y = in_[1]; \
		(void) arg_; \
		for (int64_t i = 0; i < n; i++) \
			o[i] = (T) ipow_u64((uint64_t) (int64_t) x[step[0] ? i : 0], y[step[1] ? i : 0]); \
	} \
	static void \
	pow_##SFX##_id(void *arg_, int64_t n, void *out_, const void *const *in_, const int *step) \
	{ \
		T		   *o = out_; \
		const T    *x = in_[0]; \
		const double *y = in_[1]; \
		(void) arg_; \
		for (int64_t i = 0; i < n; i++) \
			o[i] = (T) sat_trunc(pow((double) x[step[0] ? i : 0], y[step[1] ? i : 0]), LO, HI); \
	}

/* base float types: exponent in float (double for double) */
#define POW_FROW(NAME, TI, TE, LD, ST, EXPR) \
	static void \
	NAME(void *arg_, int64_t n, void *out_, const void *const *in_, const int *step) \
	{ \
		TI		   *restrict o = out_; \
		const TI   *restrict x = in_[0]; \
		const TE   *restrict y = in_[1]; \
		(void) arg_; \
		if (step[0] && !step[1] && y[0] == 2) \
			for (int64_t i = 0; i < n; i++) \
			{ \
				TE			a = LD(x[i]); \
				o[i] = ST(a * a); \
			} \
		else \
			for (int64_t i = 0; i < n; i++) \
			{ \
				TE			a = LD(x[step[0] ? i : 0]); \
				TE			b = y[step[1] ? i : 0]; \
				o[i] = ST(EXPR); \
			} \
	}

POW_FROW(pow_f32, float, float, OX_ID, OX_ID, powf_sq(a, b))
POW_FROW(pow_f64, double, double, OX_ID, OX_ID, pow(a, b))
POW_FROW(pow_f16, uint16_t, float, OX_H2F, OX_F2H, powf_sq(a, b))
POW_FROW(pow_bf16, uint16_t, float, OX_B2F, OX_F2B, powf_sq(a, b))
POW_IROW(i8, int8_t, INT8_MIN, INT8_MAX)
POW_IROW(u8, uint8_t, 0, UINT8_MAX)
POW_IROW(i16, int16_t, INT16_MIN, INT16_MAX)
POW_IROW(u16, uint16_t, 0, UINT16_MAX)
POW_IROW(i32, int32_t, INT32_MIN, INT32_MAX)
POW_IROW(u32, uint32_t, 0, UINT32_MAX)
POW_IROW(i64, int64_t, -9223372036854775808.0, 9223372036854774784.0)
POW_IROW(u64, uint64_t, 0, 18446744073709549568.0)

/* row functions by base dtype: [0] integer exponent, [1] float exponent */
static const ox_ew_row_fn pow_int_fns[OX_DTYPE_COUNT][2] = {
	[OX_INT8] = {pow_i8_ii, pow_i8_id}, [OX_UINT8] = {pow_u8_ii, pow_u8_id},
	[OX_INT16] = {pow_i16_ii, pow_i16_id}, [OX_UINT16] = {pow_u16_ii, pow_u16_id},
	[OX_INT32] = {pow_i32_ii, pow_i32_id}, [OX_UINT32] = {pow_u32_ii, pow_u32_id},
	[OX_INT64] = {pow_i64_ii, pow_i64_id}, [OX_UINT64] = {pow_u64_ii, pow_u64_id},
};

ox_code
ox_ew_pow(ox_kernel_ctx *ctx)
{
	const ox_tensor *a = ox_ew_input(ctx, 0);
	const ox_tensor *b = ox_ew_input(ctx, 1);
	ox_ew_row_fn fn = NULL;
	ox_dtype	exp_dt = OX_UNDEFINED;
	ox_tensor	conv;
	ox_code		rc;

	if (!a || !b)
		return ctx->st->code;
	if (!ox_dtype_is_float(b->dtype) && !ox_dtype_is_int(b->dtype))
		return ox_fail(ctx->st, OX_UNSUPPORTED, "Pow does not support exponent type %s",
					   ox_dtype_name(b->dtype));
	switch (a->dtype)
	{
		case OX_FLOAT:
			fn = pow_f32;
			exp_dt = OX_FLOAT;
			break;
		case OX_DOUBLE:
			fn = pow_f64;
			exp_dt = OX_DOUBLE;
			break;
		case OX_FLOAT16:
			fn = pow_f16;
			exp_dt = OX_FLOAT;
			break;
		case OX_BFLOAT16:
			fn = pow_bf16;
			exp_dt = OX_FLOAT;
			break;
		default:
			if (ox_dtype_is_int(a->dtype))
			{
				bool		int_exp = ox_dtype_is_int(b->dtype);

				fn = pow_int_fns[a->dtype][int_exp ? 0 : 1];
				exp_dt = int_exp ? OX_INT64 : OX_DOUBLE;
			}
			break;
	}
	if (!fn)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "Pow does not support base type %s",
					   ox_dtype_name(a->dtype));
	if (b->dtype == exp_dt)
		return ox_ew_binary_tensors(ctx, a, b, fn, a->dtype, NULL);

	memset(&conv, 0, sizeof(conv));
	rc = ox_tensor_alloc(&conv, exp_dt, b->rank, b->dims, ctx->st);
	if (rc == OX_OK)
		rc = ox_convert_elements(conv.data, exp_dt, b->data, b->dtype,
								 ox_tensor_numel(b), ctx->st);
	if (rc == OX_OK)
		rc = ox_ew_binary_tensors(ctx, a, &conv, fn, a->dtype, NULL);
	ox_tensor_release(&conv);
	return rc;
}
