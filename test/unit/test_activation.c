/*
 * test_activation.c
 *	  Unit tests of the activation kernel family.
 */
#include "kernel_test.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/vmath_avx512.h"

#define ACT ox_kernels_activation, ox_kernels_activation_count
#define D(...) ((const int64_t[]) {__VA_ARGS__})

/* start a case of op with a label of its own */
static void
begin(const char *op, int opset, const char *label)
{
	kt_begin(op, "", opset);
	kt.label = label;
}

/* ---- pointwise ---------------------------------------------------------- */

typedef double (*ref_fn) (double x);

static double ref_relu(double x) { return x < 0 ? 0 : x; }
static double ref_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double ref_elu(double x) { return x < 0 ? exp(x) - 1 : x; }
/* attributes are float: the references use the float values of the defaults */
static double ref_selu(double x) { return 1.05070102214813232421875 * (x <= 0 ? 1.67326319217681884765625 * (exp(x) - 1) : x); }
static double ref_celu(double x) { return fmax(0, x) + fmin(0, exp(x) - 1); }
static double ref_hard_sigmoid(double x) { return fmax(0, fmin(1, (double) 0.2f * x + 0.5)); }
static double ref_hard_swish(double x) { return x * fmax(0, fmin(1, x / 6 + 0.5)); }
static double ref_softplus(double x) { return log1p(exp(-fabs(x))) + fmax(x, 0); }
static double ref_softsign(double x) { return x / (1 + fabs(x)); }
static double ref_thresholded(double x) { return x > 1 ? x : 0; }
static double ref_mish(double x) { return x * tanh(ref_softplus(x)); }
static double ref_gelu(double x) { return 0.5 * x * (1 + erf(x / sqrt(2))); }
static double ref_leaky(double x) { return x < 0 ? (double) 0.01f * x : x; }

/* run op over a float sweep of [-lim, lim] and compare with ref */
static void
sweep(const char *op, int opset, ref_fn ref, double lim, double tol)
{
	enum
	{
		N = 4001
	};
	static float x[N];
	static float want[N];
	static double xd[N];
	static double wd[N];

	for (int i = 0; i < N; i++)
	{
		x[i] = (float) (-lim + 2 * lim * i / (N - 1));
		want[i] = (float) ref(x[i]);
		xd[i] = x[i];
		wd[i] = ref(x[i]);
	}
	begin(op, opset, op);
	kt_input_f32(1, D(N), x);
	kt_run(ACT, 1);
	kt_expect_f32(0, 1, D(N), want, tol);
	kt_end();

	begin(op, opset, "double");
	kt_input(OX_DOUBLE, 1, D(N), xd);
	kt_run(ACT, 1);
	kt_expect_values(0, OX_DOUBLE, 1, D(N), wd, 1e-13);
	kt_end();
}

static void
test_pointwise(void)
{
	sweep("Relu", 14, ref_relu, 10, 0);
	sweep("LeakyRelu", 16, ref_leaky, 10, 1e-7);
	sweep("Sigmoid", 13, ref_sigmoid, 110, 1e-6);
	sweep("Tanh", 13, tanh, 20, 1e-6);
	sweep("Elu", 6, ref_elu, 10, 1e-6);
	sweep("Selu", 6, ref_selu, 10, 1e-6);
	sweep("Celu", 12, ref_celu, 10, 1e-6);
	sweep("HardSigmoid", 6, ref_hard_sigmoid, 10, 1e-6);
	sweep("HardSwish", 14, ref_hard_swish, 10, 1e-6);
	sweep("Softplus", 1, ref_softplus, 120, 1e-6);
	sweep("Softsign", 1, ref_softsign, 100, 1e-6);
	sweep("ThresholdedRelu", 10, ref_thresholded, 3, 0);
	sweep("Mish", 18, ref_mish, 30, 1e-6);
	sweep("Gelu", 20, ref_gelu, 10, 1e-6);

	begin("Sigmoid", 13, "Sigmoid extremes");
	kt_input_f32(1, D(5), (float[]) {INFINITY, -INFINITY, NAN, -200, 200});
	kt_run(ACT, 1);
	kt_expect_f32(0, 1, D(5), (float[]) {1, 0, NAN, 0, 1}, 0);
	kt_end();

	begin("Tanh", 13, "Tanh extremes");
	kt_input_f32(1, D(5), (float[]) {INFINITY, -INFINITY, NAN, 1e-20f, -1e-6f});
	kt_run(ACT, 1);
	kt_expect_f32(0, 1, D(5), (float[]) {1, -1, NAN, 1e-20f, -1e-6f}, 1e-7);
	kt_end();

	begin("Relu", 14, "Relu NaN and int32");
	kt_input_f32(1, D(2), (float[]) {NAN, -1});
	kt_run(ACT, 1);
	kt_expect_f32(0, 1, D(2), (float[]) {NAN, 0}, 0);
	kt_end();

	begin("Relu", 14, "Relu int32");
	kt_input(OX_INT32, 1, D(3), (int32_t[]) {-3, 0, 7});
	kt_run(ACT, 1);
	kt_expect_values(0, OX_INT32, 1, D(3), (int32_t[]) {0, 0, 7}, 0);
	kt_end();

	begin("Sigmoid", 13, "Sigmoid int refused");
	kt_input_i64(1, D(1), (int64_t[]) {1});
	kt_run(ACT, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	begin("Sigmoid", 13, "Sigmoid float16");
	kt_input(OX_FLOAT16, 1, D(2), (uint16_t[]) {0x0000, 0x7c00});	/* 0, inf */
	kt_run(ACT, 1);
	kt_expect_values(0, OX_FLOAT16, 1, D(2), (uint16_t[]) {0x3800, 0x3c00}, 0);
	kt_end();

	begin("LeakyRelu", 16, "LeakyRelu alpha");
	kt_attr_float("alpha", 0.5f);
	kt_input_f32(1, D(2), (float[]) {-4, 4});
	kt_run(ACT, 1);
	kt_expect_f32(0, 1, D(2), (float[]) {-2, 4}, 0);
	kt_end();

	begin("Elu", 6, "Elu alpha");
	kt_attr_float("alpha", 2);
	kt_input_f32(1, D(2), (float[]) {-1, 1});
	kt_run(ACT, 1);
	kt_expect_f32(0, 1, D(2), (float[]) {(float) (2 * (exp(-1.0) - 1)), 1}, 1e-7);
	kt_end();

	begin("HardSigmoid", 6, "HardSigmoid alpha beta");
	kt_attr_float("alpha", 0.5f);
	kt_attr_float("beta", 0.6f);
	kt_input_f32(1, D(3), (float[]) {-1, 0, 1});
	kt_run(ACT, 1);
	kt_expect_f32(0, 1, D(3), (float[]) {0.1f, 0.6f, 1}, 1e-7);
	kt_end();

	begin("ThresholdedRelu", 10, "ThresholdedRelu alpha");
	kt_attr_float("alpha", 2);
	kt_input_f32(1, D(3), (float[]) {1, 2, 3});
	kt_run(ACT, 1);
	kt_expect_f32(0, 1, D(3), (float[]) {0, 0, 3}, 0);
	kt_end();

	begin("Gelu", 20, "Gelu tanh");
	kt_attr_string("approximate", "tanh");
	kt_input_f32(1, D(3), (float[]) {-1, 0, 2});
	kt_run(ACT, 1);
	kt_expect_f32(0, 1, D(3), (float[]) {-0.158808f, 0, 1.954598f}, 1e-6);
	kt_end();

	begin("Gelu", 20, "Gelu bad approximate");
	kt_attr_string("approximate", "fast");
	kt_input_f32(1, D(1), (float[]) {1});
	kt_run(ACT, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	begin("Shrink", 9, "Shrink float");
	kt_attr_float("lambd", 1.5f);
	kt_attr_float("bias", 0.5f);
	kt_input_f32(1, D(5), (float[]) {-2, -1, 0, 1, 2});
	kt_run(ACT, 1);
	kt_expect_f32(0, 1, D(5), (float[]) {-1.5f, 0, 0, 0, 1.5f}, 0);
	kt_end();

	begin("Shrink", 9, "Shrink int8");
	kt_attr_float("lambd", 1.5f);
	kt_attr_float("bias", 1.5f);
	kt_input(OX_INT8, 1, D(5), (int8_t[]) {-128, -1, 0, 1, 127});
	kt_run(ACT, 1);
	kt_expect_values(0, OX_INT8, 1, D(5), (int8_t[]) {-126, 0, 0, 0, 125}, 0);
	kt_end();

	begin("PRelu", 16, "PRelu channel slope");
	kt_input_f32(3, D(2, 2, 2), (float[]) {-1, 1, -2, 2, -3, 3, -4, 4});
	kt_input_f32(2, D(2, 1), (float[]) {0.5f, 0.25f});
	kt_run(ACT, 1);
	kt_expect_f32(0, 3, D(2, 2, 2), (float[]) {-0.5f, 1, -0.5f, 2, -1.5f, 3, -1, 4}, 0);
	kt_end();

	begin("PRelu", 16, "PRelu scalar slope int64");
	kt_input_i64(1, D(2), (int64_t[]) {-3, 3});
	kt_input_i64(0, NULL, (int64_t[]) {2});
	kt_run(ACT, 1);
	kt_expect_i64(0, 1, D(2), (int64_t[]) {-6, 3});
	kt_end();

	begin("PRelu", 16, "PRelu slope must not grow X");
	kt_input_f32(1, D(2), (float[]) {-1, 1});
	kt_input_f32(2, D(3, 2), (float[]) {1, 1, 1, 1, 1, 1});
	kt_run(ACT, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	begin("PRelu", 6, "PRelu opset 6 per-channel slope");
	kt_input_f32(3, D(1, 2, 3), (float[]) {-1, -1, -1, -1, -1, -1});
	kt_input_f32(1, D(2), (float[]) {0.5f, 2});
	kt_run(ACT, 1);
	kt_expect_f32(0, 3, D(1, 2, 3), (float[]) {-0.5f, -0.5f, -0.5f, -2, -2, -2}, 0);
	kt_end();
}

/* ---- Softmax family ------------------------------------------------------- */

/* reference softmax / log-softmax / hardmax of x viewed as [outer, n, inner] */
static void
ref_softmax(const char *op, const float *x, float *y, int64_t outer, int64_t n, int64_t inner)
{
	for (int64_t o = 0; o < outer; o++)
		for (int64_t c = 0; c < inner; c++)
		{
			const float *xp = x + o * n * inner + c;
			float	   *yp = y + o * n * inner + c;
			double		m = xp[0];
			double		s = 0;
			int64_t		best = 0;

			for (int64_t k = 1; k < n; k++)
				if (xp[k * inner] > m)
				{
					m = xp[k * inner];
					best = k;
				}
			for (int64_t k = 0; k < n; k++)
				s += exp(xp[k * inner] - m);
			for (int64_t k = 0; k < n; k++)
			{
				if (strcmp(op, "Softmax") == 0)
					yp[k * inner] = (float) (exp(xp[k * inner] - m) / s);
				else if (strcmp(op, "LogSoftmax") == 0)
					yp[k * inner] = (float) (xp[k * inner] - m - log(s));
				else
					yp[k * inner] = k == best;
			}
		}
}

static void
softmax_case(const char *op, int opset, int64_t axis, int rank, const int64_t *dims,
			 int64_t outer, int64_t n, int64_t inner, const char *label)
{
	int64_t		numel = ox_shape_numel(rank, dims);
	size_t		bytes = sizeof(float) * (size_t) (numel > 0 ? numel : 1);
	float	   *x = malloc(bytes);
	float	   *want = malloc(bytes);
	uint32_t	seed = 12345;

	for (int64_t i = 0; i < numel; i++)
	{
		seed = seed * 1103515245 + 12345;
		x[i] = (float) ((seed >> 8) % 2000) / 50.0f - 20.0f;
	}
	ref_softmax(op, x, want, outer, n, inner);
	begin(op, opset, label);
	kt_attr_int("axis", axis);
	kt_input_f32(rank, dims, x);
	kt_run(ACT, 1);
	kt_expect_f32(0, rank, dims, want, 2e-6);
	kt_end();
	free(x);
	free(want);
}

static void
test_softmax(void)
{
	static const char *ops[] = {"Softmax", "LogSoftmax", "Hardmax"};

	for (int i = 0; i < 3; i++)
	{
		/* opset 13: along one axis; rows, then columns (inner > one tile) */
		softmax_case(ops[i], 13, -1, 3, D(2, 3, 50), 6, 50, 1, "opset 13 last axis");
		softmax_case(ops[i], 13, 1, 3, D(2, 3, 100), 2, 3, 100, "opset 13 middle axis");
		softmax_case(ops[i], 13, 0, 2, D(7, 130), 1, 7, 130, "opset 13 axis 0");
		/* opset 11: coerced to 2-D at axis */
		softmax_case(ops[i], 11, 1, 3, D(2, 3, 50), 2, 150, 1, "opset 11 axis 1");
		softmax_case(ops[i], 11, 0, 3, D(2, 3, 5), 1, 30, 1, "opset 11 axis 0");
		softmax_case(ops[i], 1, -1, 3, D(4, 3, 5), 12, 5, 1, "opset 1 axis -1");
	}

	/* default axes differ: 1 before 13, -1 from 13 */
	begin("Softmax", 11, "Softmax opset 11 default axis");
	kt_input_f32(3, D(1, 2, 2), (float[]) {0, 0, 0, 0});
	kt_run(ACT, 1);
	kt_expect_f32(0, 3, D(1, 2, 2), (float[]) {0.25f, 0.25f, 0.25f, 0.25f}, 1e-7);
	kt_end();

	begin("Softmax", 13, "Softmax opset 13 default axis");
	kt_input_f32(3, D(1, 2, 2), (float[]) {0, 0, 0, 0});
	kt_run(ACT, 1);
	kt_expect_f32(0, 3, D(1, 2, 2), (float[]) {0.5f, 0.5f, 0.5f, 0.5f}, 1e-7);
	kt_end();

	begin("Softmax", 13, "Softmax large inputs");
	kt_input_f32(2, D(2, 3), (float[]) {1000, 1001, 1002, -1000, -1000, -3e38f});
	kt_run(ACT, 1);
	kt_expect_f32(0, 2, D(2, 3), (float[]) {0.09003057f, 0.24472847f, 0.66524096f, 0.5f, 0.5f, 0},
				  1e-6);
	kt_end();

	begin("LogSoftmax", 13, "LogSoftmax large inputs");
	kt_input_f32(1, D(2), (float[]) {1000, 0});
	kt_run(ACT, 1);
	kt_expect_f32(0, 1, D(2), (float[]) {0, -1000}, 1e-7);
	kt_end();

	begin("Hardmax", 13, "Hardmax ties pick the first");
	kt_input_f32(2, D(2, 3), (float[]) {3, 1, 3, 0, 2, 2});
	kt_run(ACT, 1);
	kt_expect_f32(0, 2, D(2, 3), (float[]) {1, 0, 0, 0, 1, 0}, 0);
	kt_end();

	begin("Softmax", 13, "Softmax double");
	kt_input(OX_DOUBLE, 1, D(2), (double[]) {0, log(3.0)});
	kt_run(ACT, 1);
	kt_expect_values(0, OX_DOUBLE, 1, D(2), (double[]) {0.25, 0.75}, 1e-15);
	kt_end();

	begin("Softmax", 13, "Softmax float16");
	kt_input(OX_FLOAT16, 1, D(2), (uint16_t[]) {0x3c00, 0x3c00});
	kt_run(ACT, 1);
	kt_expect_values(0, OX_FLOAT16, 1, D(2), (uint16_t[]) {0x3800, 0x3800}, 0);
	kt_end();

	begin("Softmax", 13, "Softmax axis out of range");
	kt_attr_int("axis", 2);
	kt_input_f32(2, D(1, 2), (float[]) {0, 0});
	kt_run(ACT, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	begin("Softmax", 13, "Softmax int refused");
	kt_input_i64(1, D(2), (int64_t[]) {0, 0});
	kt_run(ACT, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	begin("Softmax", 13, "Softmax empty");
	kt_input_f32(2, D(0, 4), NULL);
	kt_run(ACT, 1);
	kt_expect_f32(0, 2, D(0, 4), NULL, 0);
	kt_end();

	begin("Softmax", 13, "Softmax scalar");
	kt_input_f32(0, NULL, (float[]) {5});
	kt_run(ACT, 1);
	kt_expect_f32(0, 0, D(0), (float[]) {1}, 0);	/* dims unused at rank 0 */
	kt_end();
}

/* ---- the float helpers against double precision ------------------------ */

/* |got - want| in units in the last place of the float nearest want */
static double
ulps(float got, double want)
{
	double		a = fabs(want);

	/* before ilogb, which answers INT_MIN for NaN */
	if (isnan(want) || isinf(want))
		return (isnan(got) && isnan(want)) || got == want ? 0 : INFINITY;
	return fabs(got - want) / (a < 0x1p-126 ? 0x1p-149 : ldexp(1.0, ilogb(a) - 23));
}

typedef float (*fast_fn) (float x);

static float fast_sigmoid(float x) { return ox_fast_sigmoidf(x); }
static float fast_tanh(float x) { return ox_fast_tanhf(x); }
static float fast_exp(float x) { return ox_fast_expf(x); }

__attribute__((target("avx512f,fma")))
static void
lanes16(int which, float *y, const float *x, int64_t n)
{
	if (which == 0)
		OX_VMATH16_LOOP(ox_sigmoid16, y, x, n);
	else if (which == 1)
		OX_VMATH16_LOOP(ox_tanh16, y, x, n);
	else
		OX_VMATH16_LOOP(ox_exp16, y, x, n);
}

/*
 * Every 4099th float bit pattern (a million values over every exponent and
 * both signs, NaNs and infinities included) through the portable helper and,
 * where the machine has AVX-512, the sixteen-lane one: both within max_ulp
 * of double precision.  exp is checked where its result is a normal float
 * (below, it flushes to 0 under -104; above, it overflows at 88.72).  The
 * bounds are the exhaustive maxima over all 2^32 inputs, rounded up: sigmoid
 * 2.83 ulp in both, tanh 6.88 portable and 4.90 in lanes.
 */
static void
check_ulps(const char *name, int which, fast_fn fast, double (*ref) (double),
		   double lo, double hi, double max_ulp)
{
	enum
	{
		N = 1024
	};
	float		x[N];
	float		y[N];
	double		worst[2] = {0, 0};
	float		worst_x[2] = {0, 0};
	bool		lanes = ox_have_avx512_fma();
	int			n = 0;

	begin(name, 0, name);
	for (uint64_t bits = 0; bits < ((uint64_t) 1 << 32); bits += 4099)
	{
		float		v = ox_f32_from_bits((int32_t) (uint32_t) bits);

		if (!(v >= lo && v <= hi) && !isnan(v))
			continue;
		x[n++] = v;
		if (n < N && bits + 4099 < ((uint64_t) 1 << 32))
			continue;
		if (lanes)
			lanes16(which, y, x, n);
		for (int i = 0; i < n; i++)
		{
			double		want = ref(x[i]);
			double		e = ulps(fast(x[i]), want);

			if (e > worst[0])
				worst[0] = e, worst_x[0] = x[i];
			e = lanes ? ulps(y[i], want) : 0;
			if (e > worst[1])
				worst[1] = e, worst_x[1] = x[i];
		}
		n = 0;
	}
	if (worst[0] > max_ulp)
		kt_fail("%s portable: %.2f ulp at x = %g", name, worst[0], worst_x[0]);
	if (worst[1] > max_ulp)
		kt_fail("%s in lanes: %.2f ulp at x = %g", name, worst[1], worst_x[1]);
	kt_end();
}

static double ref_exp(double x) { return exp(x); }

static void
test_fast_math(void)
{
	static const float special[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-30f, -1e-30f,
	104.5f, -104.5f, 1e30f, -1e30f, 0x1p-149f, 3.0e-4f, -3.9e-4f, 8.0f, -8.0f};
	enum
	{
		NS = sizeof(special) / sizeof(special[0])
	};
	float		y[NS];

	check_ulps("sigmoid helpers", 0, fast_sigmoid, ref_sigmoid, -INFINITY, INFINITY, 3.0);
	check_ulps("tanh helpers", 1, fast_tanh, tanh, -INFINITY, INFINITY, 7.0);
	check_ulps("exp helpers", 2, fast_exp, ref_exp, -87.3f, 88.7f, 2.0);

	/* the lanes agree with the portable helpers on the edge cases */
	if (!ox_have_avx512_fma())
		return;
	begin("lanes edge cases", 0, "lanes edge cases");
	for (int which = 0; which < 3; which++)
	{
		fast_fn		fast = which == 0 ? fast_sigmoid : which == 1 ? fast_tanh : fast_exp;

		lanes16(which, y, special, NS);
		for (int i = 0; i < NS; i++)
		{
			float		want = fast(special[i]);

			if (isnan(want) != isnan(y[i]) || (!isnan(want) && ulps(y[i], want) > 7))
				kt_fail("function %s: %g at x = %g", which == 0 ? "sigmoid" : which == 1 ? "tanh" : "exp",
						y[i], special[i]);
		}
	}
	kt_end();
}

int
main(void)
{
	test_pointwise();
	test_fast_math();
	test_softmax();
	return kt_summary();
}
