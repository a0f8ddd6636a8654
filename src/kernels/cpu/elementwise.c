/*
 * elementwise.c
 *	  The elementwise kernel family table.  Kernels live by kind in
 *	  elementwise_arith.c (Add .. Pow), elementwise_unary.c (one-input math),
 *	  elementwise_logic.c (comparisons, logical, bitwise), elementwise_select.c
 *	  (Max/Min/Sum/Mean, Where, Clip) and elementwise_cast.c; the broadcast
 *	  iterator they share is in elementwise_bcast.c.
 *
 * Each entry carries the first opset of the operator; kernels read
 * node->opset where behaviour changed later (legacy broadcast attributes
 * before 7, Clip bounds as attributes before 11, Cast's string "to" in 1).
 */
#include "kernels/cpu/elementwise.h"

#define K(op, since, fn) {"", op, since, NULL, fn, NULL}
#define KP(op, since, prep, fn) {"", op, since, prep, fn, free}

const ox_kernel_def ox_kernels_elementwise[] = {
	K("Add", 1, ox_ew_add),
	K("Sub", 1, ox_ew_sub),
	K("Mul", 1, ox_ew_mul),
	K("Div", 1, ox_ew_div),
	K("Mod", 10, ox_ew_mod),
	K("Pow", 1, ox_ew_pow),
	K("Abs", 1, ox_ew_abs),
	K("Neg", 1, ox_ew_neg),
	K("Sign", 9, ox_ew_sign),
	K("Ceil", 1, ox_ew_ceil),
	K("Floor", 1, ox_ew_floor),
	K("Round", 11, ox_ew_round),
	K("Sqrt", 1, ox_ew_sqrt),
	K("Reciprocal", 1, ox_ew_reciprocal),
	K("Exp", 1, ox_ew_exp),
	K("Log", 1, ox_ew_log),
	K("Sin", 7, ox_ew_sin),
	K("Cos", 7, ox_ew_cos),
	K("Tan", 7, ox_ew_tan),
	K("Asin", 7, ox_ew_asin),
	K("Acos", 7, ox_ew_acos),
	K("Atan", 7, ox_ew_atan),
	K("Sinh", 9, ox_ew_sinh),
	K("Cosh", 9, ox_ew_cosh),
	K("Asinh", 9, ox_ew_asinh),
	K("Acosh", 9, ox_ew_acosh),
	K("Atanh", 9, ox_ew_atanh),
	K("Erf", 9, ox_ew_erf),
	K("IsNaN", 9, ox_ew_isnan),
	K("IsInf", 10, ox_ew_isinf),
	K("Not", 1, ox_ew_not),
	K("And", 1, ox_ew_and),
	K("Or", 1, ox_ew_or),
	K("Xor", 1, ox_ew_xor),
	KP("BitShift", 11, ox_ew_bitshift_prepare, ox_ew_bitshift),
	K("BitwiseAnd", 18, ox_ew_bitwise_and),
	K("BitwiseOr", 18, ox_ew_bitwise_or),
	K("BitwiseXor", 18, ox_ew_bitwise_xor),
	K("BitwiseNot", 18, ox_ew_bitwise_not),
	K("Equal", 1, ox_ew_equal),
	K("Greater", 1, ox_ew_greater),
	K("Less", 1, ox_ew_less),
	K("GreaterOrEqual", 12, ox_ew_greater_or_equal),
	K("LessOrEqual", 12, ox_ew_less_or_equal),
	K("Max", 1, ox_ew_max),
	K("Min", 1, ox_ew_min),
	K("Sum", 1, ox_ew_sum),
	K("Mean", 1, ox_ew_mean),
	K("Where", 9, ox_ew_where),
	K("Clip", 1, ox_ew_clip),
	KP("Cast", 1, ox_ew_cast_prepare, ox_ew_cast),
	KP("CastLike", 15, ox_ew_cast_prepare, ox_ew_cast_like),
};

const int	ox_kernels_elementwise_count = OX_KERNEL_COUNT(ox_kernels_elementwise);
