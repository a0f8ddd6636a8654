/*
 * test_random.c
 *	  Unit tests of the random family: RandomUniform, RandomNormal,
 *	  RandomUniformLike, RandomNormalLike, Bernoulli, Multinomial.
 *
 * Values are random, so the cases check shapes, types, ranges, seeded
 * repeatability and coarse statistics (bounds wide enough that a correct
 * generator fails them with negligible probability).
 */
#include "kernel_test.h"

#define D(...) ((const int64_t[]) {__VA_ARGS__})
#define RUN(n) kt_run(ox_kernels_random, ox_kernels_random_count, (n))

static double
out_at(int64_t i)
{
	return ox_tensor_get_double(kt_output(0), i);
}

static void
check_range(int64_t n, double lo, double hi)
{
	for (int64_t i = 0; i < n; i++)
		if (!(out_at(i) >= lo && out_at(i) <= hi))
		{
			kt_fail("value %s%g outside the range, element %g", "", out_at(i), (double) i);
			return;
		}
}

static void
check_mean_std(int64_t n, double mean, double std, double tol)
{
	double		s = 0,
				s2 = 0;

	for (int64_t i = 0; i < n; i++)
	{
		s += out_at(i);
		s2 += out_at(i) * out_at(i);
	}
	s /= (double) n;
	s2 = sqrt(s2 / (double) n - s * s);
	if (fabs(s - mean) > tol || fabs(s2 - std) > tol)
		kt_fail("mean %s%g std %g off", "", s, s2);
}

/* run the current node twice; report whether the two outputs are equal */
static bool
same_twice(int n_bytes)
{
	unsigned char first[4096];
	bool		same;

	RUN(1);
	kt_expect_ok();
	memcpy(first, kt_output(0)->data, n_bytes);
	RUN(1);
	kt_expect_ok();
	same = memcmp(first, kt_output(0)->data, n_bytes) == 0;
	return same;
}

static void
uniform_cases(void)
{
	kt_begin("RandomUniform", "", 1);
	kt.label = "RandomUniform float range and shape";
	kt_attr_ints("shape", 2, D(100, 50));
	kt_attr_float("low", -2.0f);
	kt_attr_float("high", 3.0f);
	RUN(1);
	if (kt_check_shape(0, OX_FLOAT, 2, D(100, 50)))
	{
		check_range(5000, -2.0, 3.0);
		check_mean_std(5000, 0.5, 5.0 / sqrt(12.0), 0.15);
	}
	kt_end();

	kt_begin("RandomUniform", "", 1);
	kt.label = "RandomUniform seeded runs repeat";
	kt_attr_ints("shape", 1, D(64));
	kt_attr_float("seed", 7.0f);
	if (!same_twice(64 * sizeof(float)))
		kt_fail("seeded outputs differ%s%g%g", "", 0, 0);
	kt_end();

	kt_begin("RandomUniform", "", 1);
	kt.label = "RandomUniform unseeded runs differ";
	kt_attr_ints("shape", 1, D(64));
	if (same_twice(64 * sizeof(float)))
		kt_fail("unseeded outputs repeat%s%g%g", "", 0, 0);
	kt_end();

	kt_begin("RandomUniform", "", 1);
	kt.label = "RandomUniform double, scalar shape";
	kt_attr_ints("shape", 0, D(0));
	kt_attr_int("dtype", OX_DOUBLE);
	RUN(1);
	if (kt_check_shape(0, OX_DOUBLE, 0, D(0)))
		check_range(1, 0.0, 1.0);
	kt_end();

	kt_begin("RandomUniform", "", 1);
	kt.label = "RandomUniform shape missing";
	RUN(1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("RandomUniform", "", 1);
	kt.label = "RandomUniform negative shape";
	kt_attr_ints("shape", 2, D(2, -1));
	RUN(1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("RandomUniform", "", 1);
	kt.label = "RandomUniform int dtype refused";
	kt_attr_ints("shape", 1, D(2));
	kt_attr_int("dtype", OX_INT32);
	RUN(1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("RandomUniform", "", 1);
	kt.label = "RandomUniform huge shape";
	kt_attr_ints("shape", 3, D(1 << 20, 1 << 20, 1 << 20));
	RUN(1);
	kt_expect_error(OX_LIMIT_EXCEEDED);
	kt_end();
}

static void
normal_cases(void)
{
	kt_begin("RandomNormal", "", 1);
	kt.label = "RandomNormal double statistics";
	kt_attr_ints("shape", 1, D(20001));
	kt_attr_int("dtype", OX_DOUBLE);
	kt_attr_float("mean", 3.0f);
	kt_attr_float("scale", 0.5f);
	RUN(1);
	if (kt_check_shape(0, OX_DOUBLE, 1, D(20001)))
		check_mean_std(20001, 3.0, 0.5, 0.05);
	kt_end();

	kt_begin("RandomNormal", "", 1);
	kt.label = "RandomNormal seeded float16 repeats";
	kt_attr_ints("shape", 2, D(3, 5));
	kt_attr_int("dtype", OX_FLOAT16);
	kt_attr_float("seed", 1.5f);
	if (!same_twice(15 * 2))
		kt_fail("seeded outputs differ%s%g%g", "", 0, 0);
	kt_check_shape(0, OX_FLOAT16, 2, D(3, 5));
	kt_end();

	kt_begin("RandomNormalLike", "", 1);
	kt.label = "RandomNormalLike shape and type from input";
	kt_input(OX_DOUBLE, 3, D(2, 1, 3), NULL);
	RUN(1);
	kt_check_shape(0, OX_DOUBLE, 3, D(2, 1, 3));
	kt_end();

	kt_begin("RandomNormalLike", "", 1);
	kt.label = "RandomNormalLike int input without dtype refused";
	kt_input_i64(1, D(2), (const int64_t[]) {1, 2});
	RUN(1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("RandomUniformLike", "", 1);
	kt.label = "RandomUniformLike int input with dtype";
	kt_attr_int("dtype", OX_FLOAT);
	kt_attr_float("low", 5.0f);
	kt_attr_float("high", 6.0f);
	kt_input_i64(2, D(4, 4), NULL);
	RUN(1);
	if (kt_check_shape(0, OX_FLOAT, 2, D(4, 4)))
		check_range(16, 5.0, 6.0);
	kt_end();

	kt_begin("RandomUniformLike", "", 1);
	kt.label = "RandomUniformLike missing input";
	kt_input_none();
	RUN(1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();
}

static void
bernoulli_cases(void)
{
	kt_begin("Bernoulli", "", 15);
	kt.label = "Bernoulli p 0 and 1, float";
	kt_input_f32(1, D(4), (const float[]) {0, 1, 0, 1});
	RUN(1);
	kt_expect_f32(0, 1, D(4), (const float[]) {0, 1, 0, 1}, 0);
	kt_end();

	kt_begin("Bernoulli", "", 15);
	kt.label = "Bernoulli bool output";
	kt_attr_int("dtype", OX_BOOL);
	kt_input(OX_DOUBLE, 2, D(1, 2), (const double[]) {1, 0});
	RUN(1);
	kt_expect_values(0, OX_BOOL, 2, D(1, 2), (const bool[]) {true, false}, 0);
	kt_end();

	{
		static float p[10000];

		for (int i = 0; i < 10000; i++)
			p[i] = 0.3f;
		kt_begin("Bernoulli", "", 15);
		kt.label = "Bernoulli int32 statistics";
		kt_attr_int("dtype", OX_INT32);
		kt_input_f32(1, D(10000), p);
		RUN(1);
		if (kt_check_shape(0, OX_INT32, 1, D(10000)))
		{
			check_range(10000, 0, 1);
			check_mean_std(10000, 0.3, sqrt(0.21), 0.03);
		}
		kt_end();
	}

	kt_begin("Bernoulli", "", 15);
	kt.label = "Bernoulli seeded repeats";
	kt_attr_float("seed", 0.0f);
	kt_input_f32(1, D(64), (const float[64]) {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f,
	0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f,
	0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f,
	0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f,
	0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f});
	if (!same_twice(64 * sizeof(float)))
		kt_fail("seeded outputs differ%s%g%g", "", 0, 0);
	kt_end();

	kt_begin("Bernoulli", "", 15);
	kt.label = "Bernoulli probability out of range";
	kt_input_f32(1, D(2), (const float[]) {0.5f, 1.5f});
	RUN(1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Bernoulli", "", 15);
	kt.label = "Bernoulli int input refused";
	kt_input_i64(1, D(1), (const int64_t[]) {1});
	RUN(1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Bernoulli", "", 15);
	kt.label = "Bernoulli string dtype refused";
	kt_attr_int("dtype", OX_STRING);
	kt_input_f32(1, D(1), (const float[]) {0.5f});
	RUN(1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();
}

static void
multinomial_cases(void)
{
	kt_begin("Multinomial", "", 7);
	kt.label = "Multinomial impossible classes never drawn";
	kt_attr_int("sample_size", 1000);
	kt_input_f32(2, D(2, 3), (const float[]) {-INFINITY, 0, -INFINITY, 1, -INFINITY, -INFINITY});
	RUN(1);
	if (kt_check_shape(0, OX_INT32, 2, D(2, 1000)))
		for (int i = 0; i < 2000; i++)
			if (out_at(i) != (i < 1000 ? 1 : 0))
			{
				kt_fail("sample %s%g is %g", "", i, out_at(i));
				break;
			}
	kt_end();

	kt_begin("Multinomial", "", 7);
	kt.label = "Multinomial int64 statistics";
	kt_attr_int("sample_size", 20000);
	kt_attr_int("dtype", OX_INT64);
	kt_input(OX_DOUBLE, 2, D(1, 2), (const double[]) {log(0.25), log(0.75)});
	RUN(1);
	if (kt_check_shape(0, OX_INT64, 2, D(1, 20000)))
	{
		check_range(20000, 0, 1);
		check_mean_std(20000, 0.75, sqrt(0.75 * 0.25), 0.03);
	}
	kt_end();

	kt_begin("Multinomial", "", 7);
	kt.label = "Multinomial seeded repeats";
	kt_attr_float("seed", 3.0f);
	kt_attr_int("sample_size", 32);
	kt_input_f32(2, D(1, 4), (const float[]) {0, 0, 0, 0});
	if (!same_twice(32 * sizeof(int32_t)))
		kt_fail("seeded outputs differ%s%g%g", "", 0, 0);
	check_range(32, 0, 3);
	kt_end();

	kt_begin("Multinomial", "", 7);
	kt.label = "Multinomial rank 1 refused";
	kt_input_f32(1, D(3), (const float[]) {0, 0, 0});
	RUN(1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Multinomial", "", 7);
	kt.label = "Multinomial float dtype refused";
	kt_attr_int("dtype", OX_FLOAT);
	kt_input_f32(2, D(1, 3), (const float[]) {0, 0, 0});
	RUN(1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Multinomial", "", 7);
	kt.label = "Multinomial all impossible";
	kt_input_f32(2, D(1, 2), (const float[]) {-INFINITY, -INFINITY});
	RUN(1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Multinomial", "", 7);
	kt.label = "Multinomial NaN";
	kt_input_f32(2, D(1, 2), (const float[]) {NAN, 0});
	RUN(1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();
}

int
main(void)
{
	uniform_cases();
	normal_cases();
	bernoulli_cases();
	multinomial_cases();
	return kt_summary();
}
