/*
 * test_reduce.c
 *	  Unit tests of the reduce family: Reduce* and ArgMax/ArgMin.
 *
 * Hand-written cases cover attributes vs inputs across opsets, large
 * shapes against naive sums, and errors; reference_cases holds expected
 * values computed with onnx.reference.
 */
#include "kernel_test.h"

#include <stdint.h>

#define REDUCE ox_kernels_reduce, ox_kernels_reduce_count
#define D(...) ((const int64_t[]){__VA_ARGS__})
#define I64(...) ((const int64_t[]){__VA_ARGS__})
#define F(...) ((const float[]){__VA_ARGS__})

/* sum over every axis subset of a 4-D tensor against a naive loop */
static void
check_sum_subsets(void)
{
	int64_t		dims[4] = {3, 5, 4, 6};
	int64_t		n = 3 * 5 * 4 * 6;
	float	   *x = malloc(sizeof(float) * n);

	for (int64_t i = 0; i < n; i++)
		x[i] = (float) ((i * 7) % 13) - 6.0f;
	for (int mask = 1; mask < 16; mask++)
	{
		int64_t		axes[4];
		int			na = 0;
		int64_t		od[4];
		double		want[360] = {0};
		float		wantf[360];
		int64_t		idx[4] = {0};
		int64_t		nout = 1;

		for (int k = 0; k < 4; k++)
		{
			if (mask & (1 << k))
				axes[na++] = k;
			od[k] = (mask & (1 << k)) ? 1 : dims[k];
			nout *= od[k];
		}
		for (int64_t i = 0; i < n; i++)
		{
			int64_t		o = 0;

			for (int k = 0; k < 4; k++)
				o = o * od[k] + ((mask & (1 << k)) ? 0 : idx[k]);
			want[o] += x[i];
			for (int k = 3; k >= 0; k--)
			{
				if (++idx[k] < dims[k])
					break;
				idx[k] = 0;
			}
		}
		for (int64_t i = 0; i < nout; i++)
			wantf[i] = (float) want[i];
		kt_begin("ReduceSum", "", 13);
		kt_input_f32(4, dims, x);
		kt_input_i64(1, D(na), axes);
		kt_run(REDUCE, 1);
		kt_expect_f32(0, 4, od, wantf, 1e-5);
		kt_end();
	}
	free(x);
}

static void
hand_cases(void)
{
	float		x6[6] = {1, 2, 3, 4, 5, 6};

	check_sum_subsets();

	/* a long contiguous mean: the 8-lane path */
	{
		static float big[3 * 1001];
		float		want[3];

		for (int r = 0; r < 3; r++)
		{
			double		s = 0;

			for (int i = 0; i < 1001; i++)
			{
				big[r * 1001 + i] = (float) ((i % 17) * 0.25 - r);
				s += big[r * 1001 + i];
			}
			want[r] = (float) (s / 1001);
		}
		kt_begin("ReduceMean", "", 13);
		kt_attr_ints("axes", 1, I64(1));
		kt_attr_int("keepdims", 0);
		kt_input_f32(2, D(3, 1001), big);
		kt_run(REDUCE, 1);
		kt_expect_f32(0, 1, D(3), want, 1e-5);
		kt_end();
	}

	/* opset 18 ReduceMean without axes reduces everything */
	kt_begin("ReduceMean", "", 18);
	kt_input_f32(2, D(2, 3), x6);
	kt_run(REDUCE, 1);
	kt_expect_f32(0, 2, D(1, 1), F(3.5f), 1e-6);
	kt_end();

	/* int64 extremes survive max/min; uint64 order is unsigned */
	kt_begin("ReduceMax", "", 18);
	kt_input(OX_UINT64, 1, D(3), ((const uint64_t[]){1, UINT64_MAX - 1, 5}));
	kt_run(REDUCE, 1);
	kt_expect_ok();
	if (kt.rc == OX_OK && OX_DATA(kt_output(0), uint64_t)[0] != UINT64_MAX - 1)
		kt_fail("uint64 max is wrong%s%.0f%.0f", "", 0, 0);
	kt_end();

	kt_begin("ReduceMin", "", 18);
	kt_input_i64(1, D(3), I64(INT64_MAX, INT64_MIN, 0));
	kt_input_i64(1, D(1), I64(0));
	kt_run(REDUCE, 1);
	kt_expect_ok();
	if (kt.rc == OX_OK && OX_DATA(kt_output(0), int64_t)[0] != INT64_MIN)
		kt_fail("int64 min is wrong%s%.0f%.0f", "", 0, 0);
	kt_end();

	/* empty max of an integer type is its lowest value */
	kt_begin("ReduceMax", "", 18);
	kt_input(OX_INT32, 2, D(2, 0), NULL);
	kt_input_i64(1, D(1), I64(1));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_INT32, 2, D(2, 1), ((const int32_t[]){INT32_MIN, INT32_MIN}), 0);
	kt_end();

	/* errors */
	kt_begin("ReduceSum", "", 13);
	kt_input_f32(2, D(2, 3), x6);
	kt_input_i64(1, D(1), I64(2));
	kt_run(REDUCE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("ReduceSum", "", 13);
	kt_input_f32(2, D(2, 3), x6);
	kt_input_f32(1, D(1), F(1));
	kt_run(REDUCE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("ReduceSum", "", 13);
	kt_input(OX_BOOL, 1, D(2), ((const uint8_t[]){1, 0}));
	kt_run(REDUCE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("ReduceMean", "", 13);
	kt_attr_ints("axes", 1, I64(-3));
	kt_input_f32(2, D(2, 3), x6);
	kt_run(REDUCE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("ArgMax", "", 13);
	kt_input_f32(2, D(0, 3), NULL);
	kt_run(REDUCE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("ArgMin", "", 13);
	kt_attr_int("axis", 2);
	kt_input_f32(2, D(2, 3), x6);
	kt_run(REDUCE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();
}

/* expected values from onnx.reference */
static void
reference_cases(void)
{
	/* ReduceSum last axis */
	kt_begin("ReduceSum", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){-1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 3), ((const float[]){-1.5600001f, 1.371f, -1.8790001f, 3.578f, 1.799f, 0.6079999f}), 1e-05);
	kt_end();

	/* ReduceSum middle axis keepdims */
	kt_begin("ReduceSum", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 1, 4), ((const float[]){-0.05399996f, -1.072f, -3.259f, 2.317f, -1.1029999f, 4.1f, -1.2030001f, 4.191f}), 1e-05);
	kt_end();

	/* ReduceSum first and last axes (transposed path) */
	kt_begin("ReduceSum", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){0, 2}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 1, D(3), ((const float[]){2.0180001f, 3.17f, -1.2710001f}), 1e-05);
	kt_end();

	/* ReduceSum all axes */
	kt_begin("ReduceSum", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(1, 1, 1), ((const float[]){3.917f}), 1e-05);
	kt_end();

	/* ReduceMean last axis */
	kt_begin("ReduceMean", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){-1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 3), ((const float[]){-0.39000002f, 0.34275f, -0.46975002f, 0.8945f, 0.44975f, 0.15199998f}), 1e-05);
	kt_end();

	/* ReduceMean middle axis keepdims */
	kt_begin("ReduceMean", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 1, 4), ((const float[]){
		-0.017999986f, -0.35733333f, -1.0863334f, 0.7723333f, -0.36766663f, 1.3666667f,
		-0.40100002f, 1.397f}), 1e-05);
	kt_end();

	/* ReduceMean first and last axes (transposed path) */
	kt_begin("ReduceMean", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){0, 2}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 1, D(3), ((const float[]){0.25225002f, 0.39625f, -0.15887502f}), 1e-05);
	kt_end();

	/* ReduceMean all axes */
	kt_begin("ReduceMean", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(1, 1, 1), ((const float[]){0.16320834f}), 1e-05);
	kt_end();

	/* ReduceMax last axis */
	kt_begin("ReduceMax", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){-1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 3), ((const float[]){0.656f, 1.143f, 1.41f, 2.522f, 1.57f, 2.343f}), 1e-05);
	kt_end();

	/* ReduceMax middle axis keepdims */
	kt_begin("ReduceMax", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 1, 4), ((const float[]){1.143f, 0.243f, 0.43f, 1.41f, -0.048f, 2.522f, 0.826f, 2.343f}), 1e-05);
	kt_end();

	/* ReduceMax first and last axes (transposed path) */
	kt_begin("ReduceMax", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){0, 2}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 1, D(3), ((const float[]){2.522f, 1.57f, 2.343f}), 1e-05);
	kt_end();

	/* ReduceMax all axes */
	kt_begin("ReduceMax", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(1, 1, 1), ((const float[]){2.522f}), 1e-05);
	kt_end();

	/* ReduceMin last axis */
	kt_begin("ReduceMin", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){-1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 3), ((const float[]){-1.656f, -0.453f, -2.033f, -0.048f, -0.657f, -1.523f}), 1e-05);
	kt_end();

	/* ReduceMin middle axis keepdims */
	kt_begin("ReduceMin", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 1, 4), ((const float[]){-0.803f, -0.862f, -2.033f, 0.251f, -0.657f, 0.186f, -1.523f, 0.278f}), 1e-05);
	kt_end();

	/* ReduceMin first and last axes (transposed path) */
	kt_begin("ReduceMin", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){0, 2}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 1, D(3), ((const float[]){-1.656f, -0.657f, -2.033f}), 1e-05);
	kt_end();

	/* ReduceMin all axes */
	kt_begin("ReduceMin", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(1, 1, 1), ((const float[]){-2.033f}), 1e-05);
	kt_end();

	/* ReduceProd last axis */
	kt_begin("ReduceProd", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){-1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 3), ((const float[]){0.21197566f, -0.055883884f, -0.9735537f, -0.027797848f, 0.726532f, 0.2641607f}), 1e-05);
	kt_end();

	/* ReduceProd middle axis keepdims */
	kt_begin("ReduceProd", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 1, 4), ((const float[]){
		0.3616246f, 0.0948881f, 1.4476587f, 0.23216495f, -0.012551329f, 0.6529761f, 0.6365469f,
		1.0226258f}), 1e-05);
	kt_end();

	/* ReduceProd first and last axes (transposed path) */
	kt_begin("ReduceProd", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){0, 2}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 1, D(3), ((const float[]){-0.005892467f, -0.040601432f, -0.25717464f}), 1e-05);
	kt_end();

	/* ReduceProd all axes */
	kt_begin("ReduceProd", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(1, 1, 1), ((const float[]){-6.152714e-05f}), 1e-05);
	kt_end();

	/* ReduceL1 last axis */
	kt_begin("ReduceL1", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){-1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 3), ((const float[]){3.3580003f, 2.277f, 4.699f, 3.6740003f, 4.125f, 4.45f}), 1e-05);
	kt_end();

	/* ReduceL1 middle axis keepdims */
	kt_begin("ReduceL1", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 1, 4), ((const float[]){2.34f, 1.558f, 4.119f, 2.317f, 1.1029999f, 4.1f, 2.855f, 4.191f}), 1e-05);
	kt_end();

	/* ReduceL1 first and last axes (transposed path) */
	kt_begin("ReduceL1", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){0, 2}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 1, D(3), ((const float[]){7.0320005f, 6.402f, 9.149f}), 1e-05);
	kt_end();

	/* ReduceL1 all axes */
	kt_begin("ReduceL1", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(1, 1, 1), ((const float[]){22.583f}), 1e-05);
	kt_end();

	/* ReduceL2 last axis */
	kt_begin("ReduceL2", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){-1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 3), ((const float[]){1.9688905f, 1.3264837f, 2.6494281f, 2.6687727f, 2.256158f, 2.8288121f}), 1e-05);
	kt_end();

	/* ReduceL2 middle axis keepdims */
	kt_begin("ReduceL2", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 1, 4), ((const float[]){
		1.4513766f, 1.0036443f, 2.6571271f, 1.5752578f, 0.7696473f, 2.8866494f, 1.804949f,
		2.834049f}), 1e-05);
	kt_end();

	/* ReduceL2 first and last axes (transposed path) */
	kt_begin("ReduceL2", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){0, 2}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 1, D(3), ((const float[]){3.3164556f, 2.6172137f, 3.875777f}), 1e-05);
	kt_end();

	/* ReduceL2 all axes */
	kt_begin("ReduceL2", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(1, 1, 1), ((const float[]){5.7332654f}), 1e-05);
	kt_end();

	/* ReduceLogSum last axis */
	kt_begin("ReduceLogSum", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		1.303f, 0.74300003f, 2.1560001f, 1.156f, 1.643f, 0.953f, 0.93f, 0.751f, 0.894f, 1.362f,
		2.533f, 1.91f, 0.548f, 3.022f, 1.326f, 0.778f, 1.1570001f, 1.892f, 1.006f, 2.0700002f,
		0.898f, 0.686f, 2.023f, 2.843f}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){-1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 3), ((const float[]){1.6785908f, 1.4532518f, 1.9019582f, 1.7358943f, 1.8123789f, 1.8640801f}), 1e-05);
	kt_end();

	/* ReduceLogSum middle axis keepdims */
	kt_begin("ReduceLogSum", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		1.303f, 0.74300003f, 2.1560001f, 1.156f, 1.643f, 0.953f, 0.93f, 0.751f, 0.894f, 1.362f,
		2.533f, 1.91f, 0.548f, 3.022f, 1.326f, 0.778f, 1.1570001f, 1.892f, 1.006f, 2.0700002f,
		0.898f, 0.686f, 2.023f, 2.843f}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 1, 4), ((const float[]){
		1.3454725f, 1.1177611f, 1.7261539f, 1.3394648f, 0.9566647f, 1.7227666f, 1.4713247f,
		1.738886f}), 1e-05);
	kt_end();

	/* ReduceLogSum first and last axes (transposed path) */
	kt_begin("ReduceLogSum", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		1.303f, 0.74300003f, 2.1560001f, 1.156f, 1.643f, 0.953f, 0.93f, 0.751f, 0.894f, 1.362f,
		2.533f, 1.91f, 0.548f, 3.022f, 1.326f, 0.778f, 1.1570001f, 1.892f, 1.006f, 2.0700002f,
		0.898f, 0.686f, 2.023f, 2.843f}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){0, 2}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 1, D(3), ((const float[]){2.4008002f, 2.341998f, 2.5763457f}), 1e-05);
	kt_end();

	/* ReduceLogSum all axes */
	kt_begin("ReduceLogSum", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		1.303f, 0.74300003f, 2.1560001f, 1.156f, 1.643f, 0.953f, 0.93f, 0.751f, 0.894f, 1.362f,
		2.533f, 1.91f, 0.548f, 3.022f, 1.326f, 0.778f, 1.1570001f, 1.892f, 1.006f, 2.0700002f,
		0.898f, 0.686f, 2.023f, 2.843f}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(1, 1, 1), ((const float[]){3.5433621f}), 1e-05);
	kt_end();

	/* ReduceLogSumExp last axis */
	kt_begin("ReduceLogSumExp", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){-1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 3), ((const float[]){1.3457384f, 1.8862281f, 1.6721438f, 2.833876f, 2.2976573f, 2.526254f}), 1e-05);
	kt_end();

	/* ReduceLogSumExp middle axis keepdims */
	kt_begin("ReduceLogSumExp", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 1, 4), ((const float[]){
		1.4489169f, 0.8471993f, 0.620093f, 1.9890153f, 0.7623001f, 2.8724787f, 1.1330533f,
		2.8057551f}), 1e-05);
	kt_end();

	/* ReduceLogSumExp first and last axes (transposed path) */
	kt_begin("ReduceLogSumExp", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){0, 2}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 1, D(3), ((const float[]){3.0374637f, 2.8061013f, 2.88089f}), 1e-05);
	kt_end();

	/* ReduceLogSumExp all axes */
	kt_begin("ReduceLogSumExp", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(1, 1, 1), ((const float[]){4.011465f}), 1e-05);
	kt_end();

	/* ReduceSumSquare last axis */
	kt_begin("ReduceSumSquare", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){-1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 3), ((const float[]){3.87653f, 1.7595592f, 7.0194693f, 7.1223483f, 5.090249f, 8.002178f}), 1e-05);
	kt_end();

	/* ReduceSumSquare middle axis keepdims */
	kt_begin("ReduceSumSquare", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 1, 4), ((const float[]){
		2.106494f, 1.0073019f, 7.060325f, 2.481437f, 0.592357f, 8.332745f, 3.257841f, 8.031834f}), 1e-05);
	kt_end();

	/* ReduceSumSquare first and last axes (transposed path) */
	kt_begin("ReduceSumSquare", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){0, 2}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 1, D(3), ((const float[]){10.9988785f, 6.849808f, 15.021647f}), 1e-05);
	kt_end();

	/* ReduceSumSquare all axes */
	kt_begin("ReduceSumSquare", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(1, 1, 1), ((const float[]){32.870335f}), 1e-05);
	kt_end();

	/* ReduceMean opset 13 axes attribute */
	kt_begin("ReduceMean", "", 13);
	kt_attr_ints("axes", 2, I64(0, 1));
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(1, 1, 4), ((const float[]){-0.19283332f, 0.5046667f, -0.74366665f, 1.0846666f}), 1e-05);
	kt_end();

	/* ReduceMax opset 13 axes attribute */
	kt_begin("ReduceMax", "", 13);
	kt_attr_ints("axes", 2, I64(0, 1));
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(1, 1, 4), ((const float[]){1.143f, 2.522f, 0.826f, 2.343f}), 1e-05);
	kt_end();

	/* ReduceMin opset 13 axes attribute */
	kt_begin("ReduceMin", "", 13);
	kt_attr_ints("axes", 2, I64(0, 1));
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(1, 1, 4), ((const float[]){-0.803f, -0.862f, -2.033f, 0.251f}), 1e-05);
	kt_end();

	/* ReduceProd opset 13 axes attribute */
	kt_begin("ReduceProd", "", 13);
	kt_attr_ints("axes", 2, I64(0, 1));
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(1, 1, 4), ((const float[]){-0.004538869f, 0.061959658f, 0.92150265f, 0.23741785f}), 1e-05);
	kt_end();

	/* ReduceL1 opset 13 axes attribute */
	kt_begin("ReduceL1", "", 13);
	kt_attr_ints("axes", 2, I64(0, 1));
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(1, 1, 4), ((const float[]){3.443f, 5.658f, 6.974f, 6.508f}), 1e-05);
	kt_end();

	/* ReduceL2 opset 13 axes attribute */
	kt_begin("ReduceL2", "", 13);
	kt_attr_ints("axes", 2, I64(0, 1));
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(1, 1, 4), ((const float[]){1.6428181f, 3.056149f, 3.2121902f, 3.2424173f}), 1e-05);
	kt_end();

	/* ReduceLogSum opset 13 axes attribute */
	kt_begin("ReduceLogSum", "", 13);
	kt_attr_ints("axes", 2, I64(0, 1));
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		1.303f, 0.74300003f, 2.1560001f, 1.156f, 1.643f, 0.953f, 0.93f, 0.751f, 0.894f, 1.362f,
		2.533f, 1.91f, 0.548f, 3.022f, 1.326f, 0.778f, 1.1570001f, 1.892f, 1.006f, 2.0700002f,
		0.898f, 0.686f, 2.023f, 2.843f}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(1, 1, 4), ((const float[]){1.8629942f, 2.1584837f, 2.2999818f, 2.2521336f}), 1e-05);
	kt_end();

	/* ReduceLogSumExp opset 13 axes attribute */
	kt_begin("ReduceLogSumExp", "", 13);
	kt_attr_ints("axes", 2, I64(0, 1));
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(1, 1, 4), ((const float[]){1.8565636f, 2.9964266f, 1.6022568f, 3.171696f}), 1e-05);
	kt_end();

	/* ReduceSumSquare opset 13 axes attribute */
	kt_begin("ReduceSumSquare", "", 13);
	kt_attr_ints("axes", 2, I64(0, 1));
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(1, 1, 4), ((const float[]){2.698851f, 9.340047f, 10.318166f, 10.51327f}), 1e-05);
	kt_end();

	/* ReduceSum opset 11 axes attribute */
	kt_begin("ReduceSum", "", 11);
	kt_attr_ints("axes", 1, I64(1));
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 4), ((const float[]){-0.05399996f, -1.072f, -3.259f, 2.317f, -1.1029999f, 4.1f, -1.2030001f, 4.191f}), 1e-05);
	kt_end();

	/* ReduceSum long last axis */
	kt_begin("ReduceSum", "", 13);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 2, D(3, 37), ((const float[]){
		-1.142f, -1.069f, -0.757f, 0.769f, -1.038f, -1.026f, -0.393f, 1.388f, -0.917f, -0.697f,
		0.193f, 0.145f, 0.386f, -0.571f, -0.936f, -1.336f, 0.33f, -0.208f, 0.427f, 0.045f,
		1.39f, 0.583f, 0.165f, 0.044f, -0.51f, -0.387f, -0.32f, 1.522f, -0.189f, -0.597f,
		0.242f, 0.722f, -1.128f, -2.331f, -0.271f, 1.025f, -0.692f, 0.629f, 0.329f, 0.691f,
		-0.639f, -0.352f, 1.608f, 0.691f, -2.503f, 1.259f, 2.012f, -0.268f, 0.819f, -0.852f,
		0.051f, 0.085f, -0.625f, 0.908f, 0.546f, 0.641f, 0.904f, -2.177f, 0.348f, -1.598f,
		-0.42f, -0.041f, -1.09f, 0.117f, -1.35f, -0.463f, 0.865f, -0.993f, 0.166f, -1.543f,
		0.283f, -1.754f, -1.012f, -1.71f, 0.227f, -1.023f, -0.565f, 0.237f, 0.898f, 0.562f,
		-0.24f, 1.449f, 0.864f, -0.165f, 1.88f, -0.959f, -0.137f, 1.298f, 0.722f, 0.49f,
		-0.324f, -0.965f, -0.36f, 0.534f, -0.47f, -1.369f, -0.33f, 2.202f, 1.027f, 2.203f,
		0.147f, -0.037f, -0.395f, 1.936f, -0.684f, 0.063f, 0.828f, -1.241f, -0.412f, -0.701f,
		-0.042f}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 1, D(3), ((const float[]){-7.139f, -6.4380007f, 7.148f}), 0.0001);
	kt_end();

	/* ReduceMean long last axis */
	kt_begin("ReduceMean", "", 18);
	kt_attr_int("keepdims", 1);
	kt_input(OX_FLOAT, 3, D(2, 2, 50), ((const float[]){
		-0.971f, -0.197f, 1.245f, 1.749f, -0.516f, 1.295f, -0.567f, 0.054f, 1.073f, -0.329f,
		2.373f, -2.535f, -0.298f, -0.811f, -0.234f, 0.074f, -1.607f, 1.132f, -1.235f, 0.574f,
		0.979f, -1.133f, 1.126f, 0.25f, -0.341f, 0.818f, 1.597f, 1.376f, 0.342f, -0.326f,
		-0.577f, 0.763f, 0.086f, -0.549f, -0.696f, -0.993f, -0.768f, 0.38f, -0.912f, -1.138f,
		-0.726f, -1.025f, -1.031f, 0.892f, 1.863f, -0.006f, 0.353f, -0.227f, 0.528f, -1.175f,
		0.137f, 1.443f, -1.02f, -0.285f, -0.276f, -0.947f, 0.688f, -0.334f, 1.388f, -0.07f,
		-0.612f, -0.881f, -1.196f, 0.689f, -0.226f, 1.616f, 0.031f, 0.498f, 0.493f, -1.323f,
		0.707f, 0.252f, -0.737f, -0.153f, 0.447f, 0.408f, 0.553f, 0.467f, 1.219f, -0.16f,
		-0.381f, -0.329f, 0.362f, -0.624f, -1.242f, -1.218f, 1.24f, 0.137f, 1.271f, 0.463f,
		0.001f, 1.558f, 1.253f, 2.089f, -1.215f, -0.657f, 0.273f, -2.037f, 0.335f, -1.014f,
		-0.76f, -1.283f, 0.982f, 0.372f, -1.495f, -1.836f, 0.935f, 0.909f, -0.347f, 1.739f,
		0.13f, 0.009f, 0.701f, -0.536f, -1.006f, 0.881f, -0.29f, -0.274f, 1.144f, 0.171f,
		-1.25f, 0.675f, -0.279f, -0.031f, -0.364f, 1.388f, 0.017f, 1.847f, 0.894f, -0.107f,
		1.589f, 1.578f, 0.085f, -0.595f, 0.391f, 0.096f, -1.27f, 2.585f, -1.122f, 1.142f,
		0.224f, 0.079f, -0.025f, 0.046f, -1.618f, -1.536f, 1.285f, -0.159f, 1.599f, 0.227f,
		-0.107f, -0.183f, -0.122f, -1.216f, -0.099f, 0.837f, 0.722f, -0.561f, 0.965f, 0.141f,
		0.164f, -3.056f, -0.575f, -0.342f, -0.842f, 0.75f, -2.027f, -0.076f, -0.098f, 1.12f,
		-0.874f, -0.032f, -0.728f, -0.158f, 0.208f, -0.504f, -0.05f, 0.111f, 1.229f, -1.321f,
		0.616f, -1.326f, -0.824f, -1.071f, 0.818f, -0.893f, 2.023f, 0.081f, 0.774f, -0.28f,
		0.916f, -1.185f, 0.422f, -0.027f, 2.186f, -1.018f, -3.312f, 1.651f, -0.174f, -0.777f}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){-1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 2, 1), ((const float[]){-2.0010471e-05f, 0.061619997f, 0.15074001f, -0.16247997f}), 1e-05);
	kt_end();

	/* ReduceSum noop with empty axes */
	kt_begin("ReduceSum", "", 13);
	kt_attr_int("noop_with_empty_axes", 1);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(0), NULL);
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}), 1e-05);
	kt_end();

	/* ReduceSum empty axes reduces all */
	kt_begin("ReduceSum", "", 13);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input(OX_INT64, 1, D(0), NULL);
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 0, NULL, ((const float[]){3.917f}), 1e-05);
	kt_end();

	/* ReduceSum int32 */
	kt_begin("ReduceSum", "", 13);
	kt_input(OX_INT32, 2, D(3, 4), ((const int32_t[]){-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){0}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_INT32, 2, D(1, 4), ((const int32_t[]){-3, 0, 3, 6}), 0);
	kt_end();

	/* ReduceProd int64 */
	kt_begin("ReduceProd", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_INT64, 2, D(2, 3), ((const int64_t[]){1, 2, 3, 4, 5, 6}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_INT64, 1, D(2), ((const int64_t[]){6, 120}), 0);
	kt_end();

	/* ReduceMax uint8 */
	kt_begin("ReduceMax", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_UINT8, 2, D(2, 3), ((const uint8_t[]){1, 250, 3, 200, 5, 6}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_UINT8, 1, D(2), ((const uint8_t[]){250, 200}), 0);
	kt_end();

	/* ReduceMin int8 */
	kt_begin("ReduceMin", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_INT8, 2, D(2, 3), ((const int8_t[]){1, -128, 3, -2, 5, 6}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){0}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_INT8, 1, D(3), ((const int8_t[]){-2, -128, 3}), 0);
	kt_end();

	/* ReduceMax bool */
	kt_begin("ReduceMax", "", 20);
	kt_attr_int("keepdims", 0);
	kt_input(OX_BOOL, 2, D(2, 2), ((const uint8_t[]){1, 0, 0, 0}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_BOOL, 1, D(2), ((const uint8_t[]){1, 0}), 0);
	kt_end();

	/* ReduceMin bool */
	kt_begin("ReduceMin", "", 20);
	kt_attr_int("keepdims", 0);
	kt_input(OX_BOOL, 2, D(2, 2), ((const uint8_t[]){1, 0, 1, 1}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_BOOL, 1, D(2), ((const uint8_t[]){0, 1}), 0);
	kt_end();

	/* ReduceMean double */
	kt_begin("ReduceMean", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_DOUBLE, 3, D(2, 3, 4), ((const double[]){
		-0.8029999732971191, 0.24300000071525574, -1.656000018119812, 0.656000018119812,
		1.1430000066757202, -0.453000009059906, 0.4300000071525574, 0.25099998712539673,
		-0.39399999380111694, -0.8619999885559082, -2.0329999923706055, 1.409999966621399,
		-0.04800000041723251, 2.5220000743865967, 0.8259999752044678, 0.27799999713897705,
		-0.6570000052452087, 1.3919999599456787, -0.5059999823570251, 1.5700000524520874,
		-0.39800000190734863, 0.1860000044107437, -1.5230000019073486, 2.3429999351501465}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){0, 1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_DOUBLE, 1, D(4), ((const double[]){
		-0.19283332799871764, 0.5046666736404101, -0.7436666687329611, 1.0846666594346364}), 1e-05);
	kt_end();

	/* ReduceSum float16 */
	kt_begin("ReduceSum", "", 13);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT16, 3, D(2, 3, 4), ((const uint16_t[]){
		47725, 13255, 48800, 14655, 15506, 46911, 14049, 13316, 46670, 47845, 49169, 15780,
		43557, 16651, 15004, 13427, 47426, 15761, 47116, 15944, 46686, 12788, 48664, 16560}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT16, 2, D(2, 4), ((const uint16_t[]){43776, 48201, 49797, 16546, 48234, 17434, 48336, 17457}), 0.002);
	kt_end();

	/* ReduceL2 float16 */
	kt_begin("ReduceL2", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT16, 3, D(2, 3, 4), ((const uint16_t[]){
		47725, 13255, 48800, 14655, 15506, 46911, 14049, 13316, 46670, 47845, 49169, 15780,
		43557, 16651, 15004, 13427, 47426, 15761, 47116, 15944, 46686, 12788, 48664, 16560}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){2}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT16, 2, D(2, 3), ((const uint16_t[]){16352, 15694, 16717, 16726, 16515, 16809}), 0.002);
	kt_end();

	/* ReduceMean int32 */
	kt_begin("ReduceMean", "", 18);
	kt_attr_int("keepdims", 0);
	kt_input(OX_INT32, 2, D(2, 2), ((const int32_t[]){1, 2, 3, 5}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_INT32, 1, D(2), ((const int32_t[]){1, 4}), 0);
	kt_end();

	/* ReduceSum empty set */
	kt_begin("ReduceSum", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 0, 4), NULL);
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 1, 4), ((const float[]){0, 0, 0, 0, 0, 0, 0, 0}), 1e-05);
	kt_end();

	/* ReduceProd empty set */
	kt_begin("ReduceProd", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 0, 4), NULL);
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 1, 4), ((const float[]){1, 1, 1, 1, 1, 1, 1, 1}), 1e-05);
	kt_end();

	/* ReduceMax empty set */
	kt_begin("ReduceMax", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 0, 4), NULL);
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 1, 4), ((const float[]){
		-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY}), 1e-05);
	kt_end();

	/* ReduceMin empty set */
	kt_begin("ReduceMin", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 0, 4), NULL);
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 1, 4), ((const float[]){INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY}), 1e-05);
	kt_end();

	/* ReduceLogSumExp empty set */
	kt_begin("ReduceLogSumExp", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 0, 4), NULL);
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 1, 4), ((const float[]){
		-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY}), 1e-05);
	kt_end();

	/* ReduceL2 empty set */
	kt_begin("ReduceL2", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 0, 4), NULL);
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 1, 4), ((const float[]){0, 0, 0, 0, 0, 0, 0, 0}), 1e-05);
	kt_end();

	/* ReduceLogSum empty set */
	kt_begin("ReduceLogSum", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 0, 4), NULL);
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 1, 4), ((const float[]){
		-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY}), 1e-05);
	kt_end();

	/* ReduceSumSquare empty set */
	kt_begin("ReduceSumSquare", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 0, 4), NULL);
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 1, 4), ((const float[]){0, 0, 0, 0, 0, 0, 0, 0}), 1e-05);
	kt_end();

	/* ReduceL1 empty set */
	kt_begin("ReduceL1", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 0, 4), NULL);
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 1, 4), ((const float[]){0, 0, 0, 0, 0, 0, 0, 0}), 1e-05);
	kt_end();

	/* ReduceSum empty non-reduced axis */
	kt_begin("ReduceSum", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 0, 4), NULL);
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){2}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 0, 1), NULL, 1e-05);
	kt_end();

	/* ArgMax default axis */
	kt_begin("ArgMax", "", 13);
	kt_input(OX_FLOAT, 2, D(3, 3), ((const float[]){2, 1, 2, 0, 3, 3, 1, 1, 0}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_INT64, 2, D(1, 3), ((const int64_t[]){0, 1, 1}), 0);
	kt_end();

	/* ArgMax axis 1 no keepdims */
	kt_begin("ArgMax", "", 13);
	kt_attr_int("axis", 1);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 2, D(3, 3), ((const float[]){2, 1, 2, 0, 3, 3, 1, 1, 0}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_INT64, 1, D(3), ((const int64_t[]){0, 1, 0}), 0);
	kt_end();

	/* ArgMax select_last_index */
	kt_begin("ArgMax", "", 13);
	kt_attr_int("axis", -1);
	kt_attr_int("select_last_index", 1);
	kt_input(OX_FLOAT, 2, D(3, 3), ((const float[]){2, 1, 2, 0, 3, 3, 1, 1, 0}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_INT64, 2, D(3, 1), ((const int64_t[]){2, 2, 1}), 0);
	kt_end();

	/* ArgMax int32 3-D middle axis */
	kt_begin("ArgMax", "", 13);
	kt_attr_int("axis", 1);
	kt_input(OX_INT32, 3, D(1, 3, 2), ((const int32_t[]){1, 5, 4, 4, 4, 0}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_INT64, 3, D(1, 1, 2), ((const int64_t[]){1, 0}), 0);
	kt_end();

	/* ArgMax int32 3-D select last */
	kt_begin("ArgMax", "", 13);
	kt_attr_int("axis", 1);
	kt_attr_int("select_last_index", 1);
	kt_input(OX_INT32, 3, D(1, 3, 2), ((const int32_t[]){1, 5, 4, 4, 4, 0}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_INT64, 3, D(1, 1, 2), ((const int64_t[]){2, 0}), 0);
	kt_end();

	/* ArgMin default axis */
	kt_begin("ArgMin", "", 13);
	kt_input(OX_FLOAT, 2, D(3, 3), ((const float[]){2, 1, 2, 0, 3, 3, 1, 1, 0}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_INT64, 2, D(1, 3), ((const int64_t[]){1, 0, 2}), 0);
	kt_end();

	/* ArgMin axis 1 no keepdims */
	kt_begin("ArgMin", "", 13);
	kt_attr_int("axis", 1);
	kt_attr_int("keepdims", 0);
	kt_input(OX_FLOAT, 2, D(3, 3), ((const float[]){2, 1, 2, 0, 3, 3, 1, 1, 0}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_INT64, 1, D(3), ((const int64_t[]){1, 0, 2}), 0);
	kt_end();

	/* ArgMin select_last_index */
	kt_begin("ArgMin", "", 13);
	kt_attr_int("axis", -1);
	kt_attr_int("select_last_index", 1);
	kt_input(OX_FLOAT, 2, D(3, 3), ((const float[]){2, 1, 2, 0, 3, 3, 1, 1, 0}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_INT64, 2, D(3, 1), ((const int64_t[]){1, 0, 2}), 0);
	kt_end();

	/* ArgMin int32 3-D middle axis */
	kt_begin("ArgMin", "", 13);
	kt_attr_int("axis", 1);
	kt_input(OX_INT32, 3, D(1, 3, 2), ((const int32_t[]){1, 5, 4, 4, 4, 0}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_INT64, 3, D(1, 1, 2), ((const int64_t[]){0, 2}), 0);
	kt_end();

	/* ArgMin int32 3-D select last */
	kt_begin("ArgMin", "", 13);
	kt_attr_int("axis", 1);
	kt_attr_int("select_last_index", 1);
	kt_input(OX_INT32, 3, D(1, 3, 2), ((const int32_t[]){1, 5, 4, 4, 4, 0}));
	kt_run(REDUCE, 1);
	kt_expect_values(0, OX_INT64, 3, D(1, 1, 2), ((const int64_t[]){0, 2}), 0);
	kt_end();
}

/*
 * Reductions of short rows (the last axis, R < 8, and a little past the
 * short path) against a plain float left fold, bit for bit: small
 * integers and halves keep sums and products exact in any order, NaNs
 * and signed zeros check max/min propagation and the 0 + -0 start.
 */
static void
check_short_rows(void)
{
	static const char *ops[] = {"ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin", "ReduceL1",
	"ReduceSumSquare", "ReduceMean", "ReduceL2", "ReduceLogSum"};
	static const int64_t rows[] = {1, 3, 1000};
	static const float pool[] = {1, 2, -1, -2, 0.5f, -0.5f, 0, -0.0f, 3, NAN};
	unsigned	seed = 7;

	for (int op = 0; op < (int) (sizeof(ops) / sizeof(ops[0])); op++)
		for (int ro = 0; ro < 3; ro++)
			for (int64_t R = 1; R <= 9; R++)
				for (int keep = 0; keep < 2; keep++)
				{
					int64_t		O = rows[ro];
					float	   *x = malloc(sizeof(float) * O * R);
					float	   *want = malloc(sizeof(float) * O);
					char		label[64];

					srand(seed++);
					for (int64_t i = 0; i < O * R; i++)
						x[i] = pool[rand() % (op < 2 ? 9 : 10)];
					for (int64_t o = 0; o < O; o++)
					{
						float		acc = op == 1 ? 1 : op == 2 ? -INFINITY : op == 3 ? INFINITY : 0;

						for (int64_t r = 0; r < R; r++)
						{
							float		v = x[o * R + r];

							if (op == 1)
								acc *= v;
							else if (op == 2)
								acc = (v > acc || v != v) ? v : acc;
							else if (op == 3)
								acc = (v < acc || v != v) ? v : acc;
							else if (op == 4)
								acc += v < 0 ? -v : v;
							else if (op == 5 || op == 7)
								acc += v * v;
							else
								acc += v;
						}
						want[o] = op == 6 ? acc / (float) R : op == 7 ? sqrtf(acc) :
							op == 8 ? logf(acc) : acc;
					}
					snprintf(label, sizeof(label), "%s [%lld, %lld] keepdims %d", ops[op],
							 (long long) O, (long long) R, keep);
					kt_begin(ops[op], "", 18);
					kt.label = label;
					kt_attr_int("keepdims", keep);
					kt_input_f32(2, D(O, R), x);
					kt_input_i64(1, D(1), I64(-1));
					kt_run(REDUCE, 1);
					if (kt_check_shape(0, OX_FLOAT, keep ? 2 : 1, D(O, 1)) &&
						memcmp(kt_output(0)->data, want, sizeof(float) * O) != 0)
						kt_fail("values differ%s%.0f%.0f", "", 0, 0);
					kt_end();
					/* the same rows as [O, 1, R, 1]: unit axes around them */
					kt_begin(ops[op], "", 18);
					kt.label = label;
					kt_attr_int("keepdims", 0);
					kt_input_f32(4, D(O, 1, R, 1), x);
					kt_input_i64(1, D(2), I64(2, 3));
					kt_run(REDUCE, 1);
					if (kt_check_shape(0, OX_FLOAT, 2, D(O, 1)) &&
						memcmp(kt_output(0)->data, want, sizeof(float) * O) != 0)
						kt_fail("values differ (4-D)%s%.0f%.0f", "", 0, 0);
					kt_end();
					free(x);
					free(want);
				}
}

int
main(void)
{
	hand_cases();
	reference_cases();
	check_short_rows();
	return kt_summary();
}
