/*
 * elementwise_logic.c
 *	  Comparisons (Equal, Greater, Less, GreaterOrEqual, LessOrEqual: bool
 *	  outputs, strings allowed for Equal), logical And/Or/Xor on bool,
 *	  BitShift, BitwiseAnd/Or/Xor, all with multidirectional broadcasting.
 */
#include "kernels/cpu/elementwise.h"

/* comparison rows for every numeric type and bool; output bool */
#define CMP_ROWS(NAME, EXPR) \
	OX_BIN_ROW(NAME##_f32, float, uint8_t, float, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_f64, double, uint8_t, double, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_f16, uint16_t, uint8_t, float, OX_H2F, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_bf16, uint16_t, uint8_t, float, OX_B2F, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_i8, int8_t, uint8_t, int8_t, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_u8, uint8_t, uint8_t, uint8_t, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_i16, int16_t, uint8_t, int16_t, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_u16, uint16_t, uint8_t, uint16_t, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_i32, int32_t, uint8_t, int32_t, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_u32, uint32_t, uint8_t, uint32_t, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_i64, int64_t, uint8_t, int64_t, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_u64, uint64_t, uint8_t, uint64_t, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_bool, uint8_t, uint8_t, uint8_t, OX_BOOLV, OX_ID, EXPR)

#define OX_BOOLV(v) ((uint8_t) ((v) != 0))

#define CMP_TABLE(NAME) { \
	[OX_FLOAT] = NAME##_f32, [OX_DOUBLE] = NAME##_f64, \
	[OX_FLOAT16] = NAME##_f16, [OX_BFLOAT16] = NAME##_bf16, \
	[OX_INT8] = NAME##_i8, [OX_UINT8] = NAME##_u8, \
	[OX_INT16] = NAME##_i16, [OX_UINT16] = NAME##_u16, \
	[OX_INT32] = NAME##_i32, [OX_UINT32] = NAME##_u32, \
	[OX_INT64] = NAME##_i64, [OX_UINT64] = NAME##_u64, \
	[OX_BOOL] = NAME##_bool }

CMP_ROWS(eq, a == b)
CMP_ROWS(gt, a > b)
CMP_ROWS(lt, a < b)
CMP_ROWS(ge, a >= b)
CMP_ROWS(le, a <= b)

static inline bool
string_equal(const ox_string *a, const ox_string *b)
{
	return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

static void
eq_string(void *arg, int64_t n, void *out_, const void *const *in, const int *step)
{
	uint8_t    *o = out_;
	const ox_string *x = in[0];
	const ox_string *y = in[1];

	(void) arg;
	for (int64_t i = 0; i < n; i++)
		o[i] = string_equal(&x[step[0] ? i : 0], &y[step[1] ? i : 0]);
}

static const ox_ew_row_table eq_fns = CMP_TABLE(eq);
static const ox_ew_row_table gt_fns = CMP_TABLE(gt);
static const ox_ew_row_table lt_fns = CMP_TABLE(lt);
static const ox_ew_row_table ge_fns = CMP_TABLE(ge);
static const ox_ew_row_table le_fns = CMP_TABLE(le);

ox_code
ox_ew_equal(ox_kernel_ctx *ctx)
{
	const ox_tensor *a = ox_in_tensor(ctx, 0);

	if (a && a->dtype == OX_STRING)
	{
		const ox_tensor *b = ox_ew_input(ctx, 1);

		if (!b)
			return ctx->st->code;
		if (b->dtype != OX_STRING)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Equal inputs have different types %s and %s",
						   ox_dtype_name(a->dtype), ox_dtype_name(b->dtype));
		return ox_ew_binary_tensors(ctx, a, b, eq_string, OX_BOOL, NULL);
	}
	return ox_ew_binary(ctx, eq_fns, OX_BOOL, NULL);
}

ox_code
ox_ew_greater(ox_kernel_ctx *ctx)
{
	return ox_ew_binary(ctx, gt_fns, OX_BOOL, NULL);
}

ox_code
ox_ew_less(ox_kernel_ctx *ctx)
{
	return ox_ew_binary(ctx, lt_fns, OX_BOOL, NULL);
}

ox_code
ox_ew_greater_or_equal(ox_kernel_ctx *ctx)
{
	return ox_ew_binary(ctx, ge_fns, OX_BOOL, NULL);
}

ox_code
ox_ew_less_or_equal(ox_kernel_ctx *ctx)
{
	return ox_ew_binary(ctx, le_fns, OX_BOOL, NULL);
}

/* ---- logical (bool) ------------------------------------------------------ */

OX_BIN_ROW(and_bool, uint8_t, uint8_t, uint8_t, OX_BOOLV, OX_ID, a & b)
OX_BIN_ROW(or_bool, uint8_t, uint8_t, uint8_t, OX_BOOLV, OX_ID, a | b)
OX_BIN_ROW(xor_bool, uint8_t, uint8_t, uint8_t, OX_BOOLV, OX_ID, a ^ b)

static const ox_ew_row_table and_fns = {[OX_BOOL] = and_bool};
static const ox_ew_row_table or_fns = {[OX_BOOL] = or_bool};
static const ox_ew_row_table xor_fns = {[OX_BOOL] = xor_bool};

ox_code
ox_ew_and(ox_kernel_ctx *ctx)
{
	return ox_ew_binary(ctx, and_fns, OX_BOOL, NULL);
}

ox_code
ox_ew_or(ox_kernel_ctx *ctx)
{
	return ox_ew_binary(ctx, or_fns, OX_BOOL, NULL);
}

ox_code
ox_ew_xor(ox_kernel_ctx *ctx)
{
	return ox_ew_binary(ctx, xor_fns, OX_BOOL, NULL);
}

/* ---- bitwise (integers) -------------------------------------------------- */

#define BIT_ROWS(NAME, EXPR) \
	OX_BIN_ROW(NAME##_i8, int8_t, int8_t, int8_t, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_u8, uint8_t, uint8_t, uint8_t, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_i16, int16_t, int16_t, int16_t, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_u16, uint16_t, uint16_t, uint16_t, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_i32, int32_t, int32_t, int32_t, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_u32, uint32_t, uint32_t, uint32_t, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_i64, int64_t, int64_t, int64_t, OX_ID, OX_ID, EXPR) \
	OX_BIN_ROW(NAME##_u64, uint64_t, uint64_t, uint64_t, OX_ID, OX_ID, EXPR)

#define BIT_TABLE(NAME) { \
	[OX_INT8] = NAME##_i8, [OX_UINT8] = NAME##_u8, \
	[OX_INT16] = NAME##_i16, [OX_UINT16] = NAME##_u16, \
	[OX_INT32] = NAME##_i32, [OX_UINT32] = NAME##_u32, \
	[OX_INT64] = NAME##_i64, [OX_UINT64] = NAME##_u64 }

BIT_ROWS(band, a & b)
BIT_ROWS(bor, a | b)
BIT_ROWS(bxor, a ^ b)

static const ox_ew_row_table band_fns = BIT_TABLE(band);
static const ox_ew_row_table bor_fns = BIT_TABLE(bor);
static const ox_ew_row_table bxor_fns = BIT_TABLE(bxor);

ox_code
ox_ew_bitwise_and(ox_kernel_ctx *ctx)
{
	return ox_ew_binary(ctx, band_fns, OX_UNDEFINED, NULL);
}

ox_code
ox_ew_bitwise_or(ox_kernel_ctx *ctx)
{
	return ox_ew_binary(ctx, bor_fns, OX_UNDEFINED, NULL);
}

ox_code
ox_ew_bitwise_xor(ox_kernel_ctx *ctx)
{
	return ox_ew_binary(ctx, bxor_fns, OX_UNDEFINED, NULL);
}

/* BitShift: unsigned integers; shifting by the width or more gives 0 */
#define SHIFT_ROWS(SFX, T, BITS) \
	OX_BIN_ROW(shl_##SFX, T, T, T, OX_ID, OX_ID, (b >= BITS ? (T) 0 : (T) (a << b))) \
	OX_BIN_ROW(shr_##SFX, T, T, T, OX_ID, OX_ID, (b >= BITS ? (T) 0 : (T) (a >> b)))

SHIFT_ROWS(u8, uint8_t, 8)
SHIFT_ROWS(u16, uint16_t, 16)
SHIFT_ROWS(u32, uint32_t, 32)
SHIFT_ROWS(u64, uint64_t, 64)

static const ox_ew_row_table shl_fns = {[OX_UINT8] = shl_u8, [OX_UINT16] = shl_u16,
[OX_UINT32] = shl_u32, [OX_UINT64] = shl_u64};
static const ox_ew_row_table shr_fns = {[OX_UINT8] = shr_u8, [OX_UINT16] = shr_u16,
[OX_UINT32] = shr_u32, [OX_UINT64] = shr_u64};

/* state: 1 for LEFT, 0 for RIGHT */
ox_code
ox_ew_bitshift_prepare(ox_prepare_ctx *pc)
{
	const char *dir = ox_attr_string(pc->node, "direction", NULL);

	if (!dir)
		return ox_fail(pc->st, OX_INVALID_MODEL, "BitShift needs the attribute direction");
	if (strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0)
		return ox_fail(pc->st, OX_UNSUPPORTED,
					   "BitShift direction must be \"LEFT\" or \"RIGHT\", not \"%s\"", dir);
	return ox_ew_state_int(pc, strcmp(dir, "LEFT") == 0);
}

ox_code
ox_ew_bitshift(ox_kernel_ctx *ctx)
{
	if (!ctx->state)
		return ox_fail(ctx->st, OX_INTERNAL, "BitShift ran without prepare");
	return ox_ew_binary(ctx, ox_ew_state_get(ctx, 0) ? shl_fns : shr_fns, OX_UNDEFINED, NULL);
}
