/*
 * elementwise.h
 *	  Private to the elementwise and activation kernel families: the
 *	  multidirectional (numpy-style) broadcast iterator, the one-input map
 *	  runner, the run functions of both family tables, and branch-free float
 *	  helpers (exp, sigmoid, tanh, erf) written so that the compiler can
 *	  vectorize the loops that call them.
 *
 * Dispatch happens once per kernel call: a kernel picks a row function for
 * the element type, and the iterators call it once per contiguous run of
 * output elements (a "row"; short rows are grouped into blocks), never once
 * per element.
 *
 * Include this header first in every file of the two families: the pragma
 * below must precede every function of the file (GCC refuses to inline
 * across differing optimization options).
 */
#ifndef OX_KERNELS_CPU_ELEMENTWISE_H
#define OX_KERNELS_CPU_ELEMENTWISE_H

/*
 * -fno-trapping-math lets GCC if-convert the clamps and selects of the float
 * helpers below; without it the exp/tanh/sigmoid loops stay scalar.  O3 is
 * what the Makefile gives kernels anyway, repeated for builds that compile
 * these files at -O2 (where GCC 12 vectorizes almost no loop of unknown
 * length).  Neither changes results: no reassociation, no fast-math, IEEE
 * semantics kept.  No contraction either (see OX_SIMD_CLONES).  Clang vectorizes these loops as they are and ignores
 * this pragma.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "no-trapping-math", "fp-contract=off")
#endif

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernel.h"

/*
 * OX_SIMD_CLONES: also compile a compute-bound float loop for AVX2 and for
 * AVX-512, picked once when the library loads (an ifunc, resolved by
 * cpuid).  AVX2 without FMA performs the same IEEE operations as the
 * baseline SSE2 code, and so does AVX-512F with contraction off (the pragma
 * above, for every file that includes this one; hand-written intrinsics
 * such as softmax's and GELU's still fuse where they say so), so results do
 * not depend on the machine.  The clang builds (the sanitizer builds) take
 * AVX2 only: the pragma is GCC's.  Not a per-function optimize attribute:
 * GCC then no longer inlines the ox_fast_* helpers into the clones.
 * Functions carrying it need names unique in the engine (clang makes the
 * resolver a global symbol).
 */
#if defined(__x86_64__) && defined(__linux__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#if defined(__clang__)
#define OX_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define OX_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#endif
#ifndef OX_SIMD_CLONES
#define OX_SIMD_CLONES
#endif

/* ---- broadcasting ----------------------------------------------------- */

/* inputs one broadcast iterator walks together (Where needs 3; variadic
 * ops with more inputs fold them in groups) */
#define OX_EW_BCAST_MAX_IN 16

/*
 * A broadcast plan: the output shape, and the same iteration space with
 * size-1 axes dropped and adjacent axes merged wherever every input is
 * contiguous across them, so that "same shape" is one axis, "row + matrix"
 * two, "channel bias on NCHW" three.  Strides are in elements, 0 along axes
 * an input is broadcast over.  The innermost stride of every input is 0 or 1.
 */
typedef struct ox_ew_bcast
{
	int			n_in;
	int			out_rank;
	int64_t		out_dims[OX_MAX_RANK];
	int64_t		numel;
	int			rank;			/* iteration rank, >= 1 */
	int64_t		dims[OX_MAX_RANK];
	int64_t		strides[OX_EW_BCAST_MAX_IN][OX_MAX_RANK];
} ox_ew_bcast;

/*
 * Row function: write n contiguous output elements at out, reading input k
 * from in[k], stepping step[k] (0 = the same element throughout, 1 =
 * contiguous).  arg is the caller's.
 */
typedef void (*ox_ew_row_fn) (void *arg, int64_t n, void *out,
							  const void *const *in, const int *step);

/* Plan the broadcast of n shapes; OX_INVALID_ARGUMENT when they do not
 * broadcast.  op names the operator in the message. */
ox_code		ox_ew_bcast_plan(ox_ew_bcast *b, int n, const int *ranks,
							 const int64_t *const *dims, const char *op, ox_status *st);
ox_code		ox_ew_bcast_plan_tensors(ox_ew_bcast *b, int n, const ox_tensor *const *t,
									 const char *op, ox_status *st);

/*
 * Walk the plan, calling fn for every row.  esize[0] is the output element
 * size, esize[1 + k] that of input k.  With ctx the output range is split
 * across ctx's threads (fn must then be pure computation); with ctx NULL it
 * runs on the calling thread.
 */
void		ox_ew_bcast_run(ox_kernel_ctx *ctx, const ox_ew_bcast *b, ox_ew_row_fn fn,
							void *arg, void *out, const void *const *in,
							const size_t *esize);

/* the same for output elements [begin, end) only, on the calling thread */
void		ox_ew_bcast_run_range(const ox_ew_bcast *b, ox_ew_row_fn fn, void *arg,
								  void *out, const void *const *in, const size_t *esize,
								  int64_t begin, int64_t end);

/* per-dtype row functions of one operator; NULL = dtype not supported */
typedef ox_ew_row_fn ox_ew_row_table[OX_DTYPE_COUNT];

/*
 * The common binary operator: inputs 0 and 1 of one dtype, broadcast, output
 * 0 of out_dt (OX_UNDEFINED: the input dtype).  Handles the opset < 7
 * "broadcast"/"axis" attributes.
 */
ox_code		ox_ew_binary(ox_kernel_ctx *ctx, const ox_ew_row_table fns, ox_dtype out_dt,
						 void *arg);

/* the same for given tensors and one row function (b may have its own
 * dtype, e.g. Pow's exponent) */
ox_code		ox_ew_binary_tensors(ox_kernel_ctx *ctx, const ox_tensor *a,
								 const ox_tensor *b, ox_ew_row_fn fn,
								 ox_dtype out_dt, void *arg);

/*
 * Define a binary row function.  Inputs are TI, loaded into CT with LD, the
 * result EXPR (of a and b) stored as TO through ST.  One loop per step
 * pattern keeps each loop free of stride arithmetic so it vectorizes.
 */
#define OX_BIN_ROW(NAME, TI, TO, CT, LD, ST, EXPR) \
	static void \
	NAME(void *arg_, int64_t n, void *out_, const void *const *in_, const int *step) \
	{ \
		TO		   *restrict o = (TO *) out_; \
		const TI   *restrict x = (const TI *) in_[0]; \
		const TI   *restrict y = (const TI *) in_[1]; \
		(void) arg_; \
		if (step[0] && step[1]) \
			for (int64_t i = 0; i < n; i++) \
			{ \
				const CT	a = LD(x[i]); \
				const CT	b = LD(y[i]); \
				o[i] = (TO) ST(EXPR); \
			} \
		else if (step[0]) \
		{ \
			const CT	b = LD(y[0]); \
			for (int64_t i = 0; i < n; i++) \
			{ \
				const CT	a = LD(x[i]); \
				o[i] = (TO) ST(EXPR); \
			} \
		} \
		else if (step[1]) \
		{ \
			const CT	a = LD(x[0]); \
			for (int64_t i = 0; i < n; i++) \
			{ \
				const CT	b = LD(y[i]); \
				o[i] = (TO) ST(EXPR); \
			} \
		} \
		else \
		{ \
			const CT	a = LD(x[0]); \
			const CT	b = LD(y[0]); \
			const TO	v = (TO) ST(EXPR); \
			for (int64_t i = 0; i < n; i++) \
				o[i] = v; \
		} \
	}

/* loaders and storers for OX_BIN_ROW */
#define OX_ID(v) (v)
#define OX_H2F(v) ox_half_to_float(v)
#define OX_F2H(v) ox_float_to_half(v)
#define OX_B2F(v) ox_bf16_to_float(v)
#define OX_F2B(v) ox_float_to_bf16(v)

/* input i as a tensor, failing with a message when it is missing */
const ox_tensor *ox_ew_input(ox_kernel_ctx *ctx, int i);

/* ---- one input, one output, same shape (unary math, activations) ------ */

/* parameters of map functions: attributes parsed once per call */
typedef struct ox_map_params
{
	float		alpha;
	float		beta;
	float		gamma;
	int			flag_a;
	int			flag_b;
} ox_map_params;

typedef void (*ox_map_fn) (const ox_map_params *p, void *out, const void *in, int64_t n);

typedef struct ox_map_op
{
	ox_map_fn	fn[OX_DTYPE_COUNT];
	ox_dtype	out_dt;			/* OX_UNDEFINED: same as the input */
} ox_map_op;

/*
 * Apply op to input 0 into output 0 (same shape), in parallel.  float16 and
 * bfloat16 inputs without their own function go through fn[OX_FLOAT] in
 * chunks converted on the fly.
 */
ox_code		ox_ew_map(ox_kernel_ctx *ctx, const ox_map_op *op, const ox_map_params *p);

/* whether op has a function for dt (directly or through float) */
static inline bool
ox_map_supports(const ox_map_op *op, ox_dtype dt)
{
	if ((int) dt <= 0 || dt >= OX_DTYPE_COUNT)
		return false;
	if (op->fn[dt])
		return true;
	return (dt == OX_FLOAT16 || dt == OX_BFLOAT16) && op->fn[OX_FLOAT];
}

/*
 * Define a map function: for each element x of type TI, o[i] = EXPR of
 * type TO; p points to the ox_map_params (a local copy, so that its fields
 * stay in registers).  OX_MAP_FN_A puts ATTR in front (e.g. OX_SIMD_CLONES).
 */
#define OX_MAP_FN_A(ATTR, NAME, TI, TO, EXPR) \
	ATTR static void \
	NAME(const ox_map_params *p_arg_, void *out_, const void *in_, int64_t n) \
	{ \
		TO		   *restrict o_ = (TO *) out_; \
		const TI   *restrict in_p_ = (const TI *) in_; \
		const ox_map_params p_copy_ = *p_arg_; \
		const ox_map_params *const p = &p_copy_; \
		(void) p; \
		for (int64_t i_ = 0; i_ < n; i_++) \
		{ \
			const TI	x = in_p_[i_]; \
			o_[i_] = (TO) (EXPR); \
		} \
	}
#define OX_MAP_FN(NAME, TI, TO, EXPR) OX_MAP_FN_A(, NAME, TI, TO, EXPR)

/* elements per parallel chunk of simple elementwise work */
#define OX_EW_MIN_CHUNK ((int64_t) 16384)

/* ---- scalar helpers ---------------------------------------------------- */

/* Bits of a float and back, without aliasing problems (compiles to moves). */
static inline int32_t
ox_f32_bits(float f)
{
	int32_t		i;

	memcpy(&i, &f, sizeof(i));
	return i;
}

static inline float
ox_f32_from_bits(int32_t i)
{
	float		f;

	memcpy(&f, &i, sizeof(f));
	return f;
}

static inline float
ox_clampf(float x, float lo, float hi)
{
	float		y = x < lo ? lo : x;

	return y > hi ? hi : y;
}

/* 1.5 * 2^23: added to a float below 2^22 in magnitude, rounds it to an integer */
#define OX_EXP_MAGIC 12582912.0f

/*
 * ox_fast_expf's core for xc in [-104, 88.75]: e^xc = p * 2^n, with p the
 * polynomial of the reduced argument, returned, and n in the bits of *t
 * (ox_f32_bits(*t) - ox_f32_bits(OX_EXP_MAGIC)).
 */
static inline float
ox_exp_reduced(float xc, float *t)
{
	float		k;
	float		r;
	float		p;

	*t = xc * 1.44269504088896341f + OX_EXP_MAGIC;
	k = *t - OX_EXP_MAGIC;
	r = xc - k * 0.693359375f;
	r = r - k * -2.12194440e-4f;
	p = 1.9875691500e-4f;
	p = p * r + 1.3981999507e-3f;
	p = p * r + 8.3334519073e-3f;
	p = p * r + 4.1665795894e-2f;
	p = p * r + 1.6666665459e-1f;
	p = p * r + 5.0000001201e-1f;
	return p * r * r + r + 1.0f;
}

/*
 * exp(x) for float, branch-free: Cody-Waite reduction by ln 2 and a degree
 * 6 polynomial (Cephes expf), about 1 ulp on the normal range.  2^n is
 * applied in two halves so results down to the subnormal range stay
 * right; below that it returns 0, above ~88.72 +inf.  NaN propagates.
 */
static inline float
ox_fast_expf(float x)
{
	float		t;
	float		p = ox_exp_reduced(ox_clampf(x, -104.0f, 88.75f), &t);
	int32_t		n = ox_f32_bits(t) - ox_f32_bits(OX_EXP_MAGIC);
	int32_t		n1;

	/* exponent fields built in unsigned arithmetic: for a NaN x, n is junk */
	n1 = n >> 1;
	p = p * ox_f32_from_bits((int32_t) ((uint32_t) (n1 + 127) << 23))
		* ox_f32_from_bits((int32_t) ((uint32_t) (n - n1 + 127) << 23));
	p = x < -104.0f ? 0.0f : p;
	p = x > 88.75f ? INFINITY : p;
	return x != x ? x : p;
}

/*
 * 1 / (1 + exp(-x)), via the side where exp does not overflow: e =
 * exp(-|x|), in (0, 1].  ox_fast_expf's steps specialized to an argument
 * that is never positive, which drops its overflow clamp and tests, and
 * applies 2^n as 2^(n+64) (exact: n >= -150) and then 2^-64 (the one
 * rounding), two multiplies where the general function needs the halves of
 * n.  Below -104 the clamped value's e already rounds to 0.  Same bits as
 * ox_fast_expf(-fabsf(x)) in the formula for every float (checked over all
 * 2^32 of them), in about 0.8 of the time: an LSTM's gates spend a fifth of
 * its run here.  NaN propagates through the arithmetic.
 */
static inline float
ox_fast_sigmoidf(float x)
{
	float		a = -fabsf(x);
	float		t;
	float		p = ox_exp_reduced(a < -104.0f ? -104.0f : a, &t);
	float		e;
	float		s;

	/* the bits of 2^(n+64): n + 64 + 127 in the exponent field */
	e = p * ox_f32_from_bits((int32_t) (((uint32_t) ox_f32_bits(t) - (uint32_t) ox_f32_bits(OX_EXP_MAGIC) + 191u)
										<< 23)) * 0x1p-64f;
	s = 1.0f / (1.0f + e);
	return x >= 0.0f ? s : e * s;
}

/*
 * tanh(x) for float: a [13/6] rational approximation on [-7.9, 7.9]
 * (Eigen's generic_fast_tanh_float), exact +-1 beyond, x itself near 0.
 */
static inline float
ox_fast_tanhf(float x)
{
	float		c = ox_clampf(x, -7.90531110763549805f, 7.90531110763549805f);
	float		c2 = c * c;
	float		p;
	float		q;
	float		r;

	p = -2.76076847742355e-16f;
	p = p * c2 + 2.00018790482477e-13f;
	p = p * c2 + -8.60467152213735e-11f;
	p = p * c2 + 5.12229709037114e-08f;
	p = p * c2 + 1.48572235717979e-05f;
	p = p * c2 + 6.37261928875436e-04f;
	p = p * c2 + 4.89352455891786e-03f;
	p = p * c;
	q = 1.19825839466702e-06f;
	q = q * c2 + 1.18534705686654e-04f;
	q = q * c2 + 2.26843463243900e-03f;
	q = q * c2 + 4.89352518554385e-03f;
	r = p / q;
	return fabsf(x) < 0.0004f ? x : r;
}

/*
 * erf(x) for float: an odd [13/8] rational approximation on [-4, 4]
 * (Eigen's generic_fast_erf_float), within 7 ulp (4.2e-7 relative); +-1
 * beyond.  NaN propagates.
 */
static inline float
ox_fast_erff(float x)
{
	float		c = ox_clampf(x, -4.0f, 4.0f);
	float		c2 = c * c;
	float		p;
	float		q;

	p = -2.72614225801306e-10f;
	p = p * c2 + 2.77068142495902e-08f;
	p = p * c2 + -2.10102402082508e-06f;
	p = p * c2 + -5.69250639462346e-05f;
	p = p * c2 + -7.34990630326855e-04f;
	p = p * c2 + -2.95459980854025e-03f;
	p = p * c2 + -1.60960333262415e-02f;
	p = p * c;
	q = -1.45660718464996e-05f;
	q = q * c2 + -2.13374055278905e-04f;
	q = q * c2 + -1.68282697438203e-03f;
	q = q * c2 + -7.37332916720468e-03f;
	q = q * c2 + -1.42647390514189e-02f;
	return p / q;
}

/* float16/bfloat16 <-> float for n elements */
void		ox_ew_half_to_float(float *dst, const uint16_t *src, ox_dtype dt, int64_t n);
void		ox_ew_float_to_half(uint16_t *dst, const float *src, ox_dtype dt, int64_t n);

/*
 * prepare() helper for kernels whose attributes reduce to one int (a mode,
 * a target type): stores v as the kernel state, released with free().
 */
static inline ox_code
ox_ew_state_int(ox_prepare_ctx *pc, int v)
{
	int		   *s = malloc(sizeof(int));

	if (!s)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s could not allocate its state",
					   pc->node->op_type);
	*s = v;
	pc->state = s;
	return OX_OK;
}

/* the int stored by ox_ew_state_int, or def when the kernel was not prepared */
static inline int
ox_ew_state_get(const ox_kernel_ctx *ctx, int def)
{
	return ctx->state ? *(const int *) ctx->state : def;
}

/* normalise an axis attribute against rank; false when out of range */
static inline bool
ox_ew_axis(int64_t axis, int rank, int *out)
{
	if (axis < -rank || axis >= (rank > 0 ? rank : 1))
		return false;
	*out = (int) (axis < 0 ? axis + rank : axis);
	return true;
}

/* ---- kernels (run functions) of the two family tables ----------------- */

#define OX_EW_KERNEL(name) ox_code name(ox_kernel_ctx *ctx)

/* elementwise_arith.c */
OX_EW_KERNEL(ox_ew_add);
OX_EW_KERNEL(ox_ew_sub);
OX_EW_KERNEL(ox_ew_mul);
OX_EW_KERNEL(ox_ew_div);
OX_EW_KERNEL(ox_ew_mod);
OX_EW_KERNEL(ox_ew_pow);
/* elementwise_unary.c */
OX_EW_KERNEL(ox_ew_abs);
OX_EW_KERNEL(ox_ew_neg);
OX_EW_KERNEL(ox_ew_sign);
OX_EW_KERNEL(ox_ew_ceil);
OX_EW_KERNEL(ox_ew_floor);
OX_EW_KERNEL(ox_ew_round);
OX_EW_KERNEL(ox_ew_sqrt);
OX_EW_KERNEL(ox_ew_reciprocal);
OX_EW_KERNEL(ox_ew_exp);
OX_EW_KERNEL(ox_ew_log);
OX_EW_KERNEL(ox_ew_sin);
OX_EW_KERNEL(ox_ew_cos);
OX_EW_KERNEL(ox_ew_tan);
OX_EW_KERNEL(ox_ew_asin);
OX_EW_KERNEL(ox_ew_acos);
OX_EW_KERNEL(ox_ew_atan);
OX_EW_KERNEL(ox_ew_sinh);
OX_EW_KERNEL(ox_ew_cosh);
OX_EW_KERNEL(ox_ew_asinh);
OX_EW_KERNEL(ox_ew_acosh);
OX_EW_KERNEL(ox_ew_atanh);
OX_EW_KERNEL(ox_ew_erf);
OX_EW_KERNEL(ox_ew_isnan);
OX_EW_KERNEL(ox_ew_isinf);
OX_EW_KERNEL(ox_ew_not);
OX_EW_KERNEL(ox_ew_bitwise_not);
/* elementwise_logic.c */
OX_EW_KERNEL(ox_ew_equal);
OX_EW_KERNEL(ox_ew_greater);
OX_EW_KERNEL(ox_ew_less);
OX_EW_KERNEL(ox_ew_greater_or_equal);
OX_EW_KERNEL(ox_ew_less_or_equal);
OX_EW_KERNEL(ox_ew_and);
OX_EW_KERNEL(ox_ew_or);
OX_EW_KERNEL(ox_ew_xor);
OX_EW_KERNEL(ox_ew_bitwise_and);
OX_EW_KERNEL(ox_ew_bitwise_or);
OX_EW_KERNEL(ox_ew_bitwise_xor);
OX_EW_KERNEL(ox_ew_bitshift);
ox_code		ox_ew_bitshift_prepare(ox_prepare_ctx *pc);
/* elementwise_select.c */
OX_EW_KERNEL(ox_ew_max);
OX_EW_KERNEL(ox_ew_min);
OX_EW_KERNEL(ox_ew_sum);
OX_EW_KERNEL(ox_ew_mean);
OX_EW_KERNEL(ox_ew_where);
OX_EW_KERNEL(ox_ew_clip);
/* elementwise_cast.c */
OX_EW_KERNEL(ox_ew_cast);
OX_EW_KERNEL(ox_ew_cast_like);
ox_code		ox_ew_cast_prepare(ox_prepare_ctx *pc);
/* activation.c */
OX_EW_KERNEL(ox_act_relu);
OX_EW_KERNEL(ox_act_leaky_relu);
OX_EW_KERNEL(ox_act_prelu);
OX_EW_KERNEL(ox_act_elu);
OX_EW_KERNEL(ox_act_selu);
OX_EW_KERNEL(ox_act_celu);
OX_EW_KERNEL(ox_act_sigmoid);
OX_EW_KERNEL(ox_act_hard_sigmoid);
OX_EW_KERNEL(ox_act_hard_swish);
OX_EW_KERNEL(ox_act_tanh);
OX_EW_KERNEL(ox_act_softplus);
OX_EW_KERNEL(ox_act_softsign);
OX_EW_KERNEL(ox_act_thresholded_relu);
OX_EW_KERNEL(ox_act_mish);
OX_EW_KERNEL(ox_act_gelu);
ox_code		ox_act_gelu_prepare(ox_prepare_ctx *pc);
OX_EW_KERNEL(ox_act_shrink);
/* activation_softmax.c */
OX_EW_KERNEL(ox_act_softmax);
OX_EW_KERNEL(ox_act_log_softmax);
OX_EW_KERNEL(ox_act_hardmax);

#endif							/* OX_KERNELS_CPU_ELEMENTWISE_H */
