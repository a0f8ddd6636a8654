/*
 * test_tensor.c
 *	  Unit tests of the tensor family (shape and data movement kernels): the
 *	  hand-written cases.
 *
 * Shapes, strings, opset differences, fast paths checked against naive
 * loops, and error cases.  The expected values computed with
 * onnx.reference, the ONNX Python reference implementation, are in
 * test_tensor_reference.c.
 */
#include "kernel_test.h"

#include <stdint.h>

#define TENSOR ox_kernels_tensor, ox_kernels_tensor_count
#define D(...) ((const int64_t[]){__VA_ARGS__})
#define I64(...) ((const int64_t[]){__VA_ARGS__})
#define F(...) ((const float[]){__VA_ARGS__})
#define S(...) ((const char *[]){__VA_ARGS__})

/* compare output i with a string tensor */
static void
expect_strings(int i, int rank, const int64_t *dims, const char **want)
{
	const ox_tensor *t = kt_output(i);

	if (!kt_check_shape(i, OX_STRING, rank, dims))
		return;
	for (int64_t k = 0; k < ox_tensor_numel(t); k++)
	{
		const ox_string *s = &OX_DATA(t, ox_string)[k];
		const char *got = s->data ? s->data : "";

		if (s->len != strlen(want[k]) || strcmp(got, want[k]) != 0)
		{
			kt_fail("string %s: got \"%s\" want \"%s\"", got, 0, 0);
			printf("  (element %lld, want %s)\n", (long long) k, want[k]);
			return;
		}
	}
}

/* run a Transpose of an iota tensor and check it against a naive loop */
static void
check_transpose(ox_dtype dt, int rank, const int64_t *dims, const int64_t *perm)
{
	int64_t		n = ox_shape_numel(rank, dims);
	double	   *src = malloc(sizeof(double) * n);
	double	   *want = malloc(sizeof(double) * n);
	int64_t		xs[OX_MAX_RANK],
				od[OX_MAX_RANK],
				idx[OX_MAX_RANK] = {0};
	void	   *typed = malloc(n * ox_dtype_size(dt));
	void	   *typed_want = malloc(n * ox_dtype_size(dt));

	/* distinct values where the type holds them: a misplaced element shows */
	for (int64_t i = 0; i < n; i++)
		src[i] = (double) (ox_dtype_size(dt) >= 4 ? i : i % 100);
	xs[rank - 1] = 1;
	for (int k = rank - 2; k >= 0; k--)
		xs[k] = xs[k + 1] * dims[k + 1];
	for (int k = 0; k < rank; k++)
		od[k] = dims[perm[k]];
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		off = 0;

		for (int k = 0; k < rank; k++)
			off += idx[k] * xs[perm[k]];
		want[i] = src[off];
		for (int k = rank - 1; k >= 0; k--)
		{
			if (++idx[k] < od[k])
				break;
			idx[k] = 0;
		}
	}
	ox_convert_elements(typed, dt, src, OX_DOUBLE, n, NULL);
	ox_convert_elements(typed_want, dt, want, OX_DOUBLE, n, NULL);
	kt_begin("Transpose", "", 13);
	kt_attr_ints("perm", rank, perm);
	kt_input(dt, rank, dims, typed);
	kt_run(TENSOR, 1);
	kt_expect_values(0, dt, rank, od, typed_want, 0);
	kt_end();
	free(src);
	free(want);
	free(typed);
	free(typed_want);
}

static void
shape_ops(void)
{
	float		x24[24];

	for (int i = 0; i < 24; i++)
		x24[i] = (float) i;

	/* Reshape: 0 copies a dim, -1 infers */
	kt_begin("Reshape", "", 14);
	kt_input_f32(3, D(2, 3, 4), x24);
	kt_input_i64(1, D(2), I64(0, -1));
	kt_run(TENSOR, 1);
	kt_expect_f32(0, 2, D(2, 12), x24, 0);
	kt_end();

	/* Reshape allowzero keeps a literal 0 */
	kt_begin("Reshape", "", 14);
	kt_attr_int("allowzero", 1);
	kt_input_f32(2, D(0, 3), NULL);
	kt_input_i64(1, D(3), I64(3, 0, 5));
	kt_run(TENSOR, 1);
	kt_expect_f32(0, 3, D(3, 0, 5), NULL, 0);
	kt_end();

	/* Reshape opset 1 reads the shape attribute */
	kt_begin("Reshape", "", 1);
	kt_attr_ints("shape", 2, I64(4, -1));
	kt_input_f32(3, D(2, 3, 4), x24);
	kt_run(TENSOR, 1);
	kt_expect_f32(0, 2, D(4, 6), x24, 0);
	kt_end();

	/* Reshape of strings duplicates them */
	kt_begin("Reshape", "", 14);
	kt_input_strings(1, D(4), S("a", "bb", "", "dddd"));
	kt_input_i64(1, D(2), I64(2, 2));
	kt_run(TENSOR, 1);
	expect_strings(0, 2, D(2, 2), S("a", "bb", "", "dddd"));
	kt_end();

	kt_begin("Reshape", "", 14);
	kt_input_f32(3, D(2, 3, 4), x24);
	kt_input_i64(1, D(2), I64(-1, -1));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Reshape", "", 14);
	kt_input_f32(3, D(2, 3, 4), x24);
	kt_input_i64(1, D(2), I64(5, 5));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Reshape", "", 14);
	kt_input_f32(1, D(24), x24);
	kt_input_i64(1, D(3), I64(2, 0, -1));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Reshape", "", 14);
	kt_input_f32(1, D(24), x24);
	kt_input_i64(1, D(2), I64(-7, 2));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	/* Flatten */
	kt_begin("Flatten", "", 13);
	kt_attr_int("axis", 0);
	kt_input_f32(3, D(2, 3, 4), x24);
	kt_run(TENSOR, 1);
	kt_expect_f32(0, 2, D(1, 24), x24, 0);
	kt_end();

	kt_begin("Flatten", "", 13);
	kt_attr_int("axis", -1);
	kt_input_f32(3, D(2, 3, 4), x24);
	kt_run(TENSOR, 1);
	kt_expect_f32(0, 2, D(6, 4), x24, 0);
	kt_end();

	kt_begin("Flatten", "", 13);
	kt_attr_int("axis", 3);
	kt_input_f32(3, D(2, 3, 4), x24);
	kt_run(TENSOR, 1);
	kt_expect_f32(0, 2, D(24, 1), x24, 0);
	kt_end();

	kt_begin("Flatten", "", 13);
	kt_attr_int("axis", 4);
	kt_input_f32(3, D(2, 3, 4), x24);
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	/* Squeeze: attribute before 13, input from 13, all unit dims without axes */
	kt_begin("Squeeze", "", 11);
	kt_attr_ints("axes", 1, I64(0));
	kt_input_f32(3, D(1, 6, 1), x24);
	kt_run(TENSOR, 1);
	kt_expect_f32(0, 2, D(6, 1), x24, 0);
	kt_end();

	kt_begin("Squeeze", "", 13);
	kt_input_f32(3, D(1, 6, 1), x24);
	kt_input_i64(1, D(1), I64(-1));
	kt_run(TENSOR, 1);
	kt_expect_f32(0, 2, D(1, 6), x24, 0);
	kt_end();

	kt_begin("Squeeze", "", 13);
	kt_input_f32(4, D(1, 6, 1, 1), x24);
	kt_run(TENSOR, 1);
	kt_expect_f32(0, 1, D(6), x24, 0);
	kt_end();

	kt_begin("Squeeze", "", 13);
	kt_input_f32(3, D(1, 6, 1), x24);
	kt_input_i64(1, D(1), I64(1));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	/* Unsqueeze */
	kt_begin("Unsqueeze", "", 11);
	kt_attr_ints("axes", 2, I64(0, 3));
	kt_input_f32(2, D(2, 3), x24);
	kt_run(TENSOR, 1);
	kt_expect_f32(0, 4, D(1, 2, 3, 1), x24, 0);
	kt_end();

	kt_begin("Unsqueeze", "", 13);
	kt_input_f32(2, D(2, 3), x24);
	kt_input_i64(1, D(2), I64(-1, 1));
	kt_run(TENSOR, 1);
	kt_expect_f32(0, 4, D(2, 1, 3, 1), x24, 0);
	kt_end();

	kt_begin("Unsqueeze", "", 13);
	kt_input_f32(2, D(2, 3), x24);
	kt_input_i64(1, D(2), I64(1, -3));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Unsqueeze", "", 13);
	kt_input_f32(2, D(2, 3), x24);
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	/* Identity of a tensor and of a sequence */
	kt_begin("Identity", "", 16);
	kt_input_strings(1, D(2), S("x", "yz"));
	kt_run(TENSOR, 1);
	expect_strings(0, 1, D(2), S("x", "yz"));
	kt_end();

	kt_begin("Identity", "", 16);
	{
		ox_value   *seq = kt_input_value();
		ox_value	item;

		ox_value_init_tensor(&item);
		ox_tensor_alloc(&item.tensor, OX_FLOAT, 1, D(3), NULL);
		memcpy(item.tensor.data, x24, 3 * sizeof(float));
		seq->kind = OX_VALUE_SEQUENCE;
		ox_value_seq_append(seq, &item, NULL);
		ox_value_seq_append(seq, &item, NULL);
		ox_value_release(&item);
	}
	kt_run(TENSOR, 1);
	kt_expect_ok();
	if (kt.outputs[0].kind != OX_VALUE_SEQUENCE || kt.outputs[0].seq_len != 2 ||
		OX_DATA(&kt.outputs[0].seq_items[1].tensor, float)[2] != 2.0f)
		kt_fail("sequence identity is wrong%s%.0f%.0f", "", 0, 0);
	kt_end();

	/* Shape, Size */
	kt_begin("Shape", "", 13);
	kt_input_f32(3, D(2, 3, 4), x24);
	kt_run(TENSOR, 1);
	kt_expect_i64(0, 1, D(3), I64(2, 3, 4));
	kt_end();

	kt_begin("Shape", "", 15);
	kt_attr_int("start", 1);
	kt_attr_int("end", -1);
	kt_input_f32(3, D(2, 3, 4), x24);
	kt_run(TENSOR, 1);
	kt_expect_i64(0, 1, D(1), I64(3));
	kt_end();

	kt_begin("Shape", "", 15);
	kt_attr_int("start", 2);
	kt_attr_int("end", 1);
	kt_input_f32(3, D(2, 3, 4), x24);
	kt_run(TENSOR, 1);
	kt_expect_i64(0, 1, D(0), NULL);
	kt_end();

	kt_begin("Size", "", 13);
	kt_input_strings(2, D(1, 2), S("a", "b"));
	kt_run(TENSOR, 1);
	kt_expect_i64(0, 0, NULL, I64(2));
	kt_end();
}

static void
constant_ops(void)
{
	kt_begin("Constant", "", 13);
	kt_attr_tensor("value", kt_make_tensor(OX_INT32, 2, D(2, 2), ((const int32_t[]){1, -2, 3, -4})));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_INT32, 2, D(2, 2), ((const int32_t[]){1, -2, 3, -4}), 0);
	kt_end();

	kt_begin("Constant", "", 13);
	kt_attr_floats("value_floats", 3, F(1.5f, 2.5f, -1));
	kt_run(TENSOR, 1);
	kt_expect_f32(0, 1, D(3), F(1.5f, 2.5f, -1), 0);
	kt_end();

	kt_begin("Constant", "", 13);
	kt_attr_int("value_int", 42);
	kt_run(TENSOR, 1);
	kt_expect_i64(0, 0, NULL, I64(42));
	kt_end();

	kt_begin("Constant", "", 13);
	kt_attr_strings("value_strings", 2, S("hello", "world"));
	kt_run(TENSOR, 1);
	expect_strings(0, 1, D(2), S("hello", "world"));
	kt_end();

	kt_begin("Constant", "", 13);
	kt_attr_string("value_string", "one");
	kt_run(TENSOR, 1);
	expect_strings(0, 0, NULL, S("one"));
	kt_end();

	kt_begin("Constant", "", 13);
	kt_new_attr("sparse_value", OX_ATTR_SPARSE_TENSOR);
	kt_run(TENSOR, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	kt_begin("Constant", "", 13);
	kt_attr_int("value_int", 1);
	kt_attr_float("value_float", 1);
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	/* ConstantOfShape */
	kt_begin("ConstantOfShape", "", 20);
	kt_attr_tensor("value", kt_make_tensor(OX_INT32, 1, D(1), ((const int32_t[]){7})));
	kt_input_i64(1, D(2), I64(2, 3));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_INT32, 2, D(2, 3), ((const int32_t[]){7, 7, 7, 7, 7, 7}), 0);
	kt_end();

	kt_begin("ConstantOfShape", "", 20);
	kt_input_i64(1, D(0), NULL);
	kt_run(TENSOR, 1);
	kt_expect_f32(0, 0, NULL, F(0), 0);
	kt_end();

	kt_begin("ConstantOfShape", "", 20);
	kt_input_i64(1, D(2), I64(2, -3));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	/* Range */
	kt_begin("Range", "", 11);
	kt_input(OX_INT32, 0, NULL, ((const int32_t[]){10}));
	kt_input(OX_INT32, 0, NULL, ((const int32_t[]){4}));
	kt_input(OX_INT32, 0, NULL, ((const int32_t[]){-3}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_INT32, 1, D(2), ((const int32_t[]){10, 7}), 0);
	kt_end();

	kt_begin("Range", "", 11);
	kt_input_f32(0, NULL, F(1));
	kt_input_f32(0, NULL, F(2));
	kt_input_f32(0, NULL, F(0.25f));
	kt_run(TENSOR, 1);
	kt_expect_f32(0, 1, D(4), F(1, 1.25f, 1.5f, 1.75f), 1e-6);
	kt_end();

	kt_begin("Range", "", 11);
	kt_input_i64(0, NULL, I64(5));
	kt_input_i64(0, NULL, I64(1));
	kt_input_i64(0, NULL, I64(2));
	kt_run(TENSOR, 1);
	kt_expect_i64(0, 1, D(0), NULL);
	kt_end();

	kt_begin("Range", "", 11);
	kt_input_i64(0, NULL, I64(5));
	kt_input_i64(0, NULL, I64(1));
	kt_input_i64(0, NULL, I64(0));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	/* EyeLike */
	kt_begin("EyeLike", "", 9);
	kt_attr_int("k", 1);
	kt_attr_int("dtype", OX_INT32);
	kt_input_f32(2, D(3, 4), NULL);
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_INT32, 2, D(3, 4), ((const int32_t[]){0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}), 0);
	kt_end();

	kt_begin("EyeLike", "", 9);
	kt_input_f32(1, D(3), NULL);
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	/* Dropout before opset 10 gives a mask of the input type */
	kt_begin("Dropout", "", 7);
	kt_input_f32(1, D(2), F(1, 2));
	kt_run(TENSOR, 2);
	kt_expect_f32(0, 1, D(2), F(1, 2), 0);
	kt_expect_f32(1, 1, D(2), F(1, 1), 0);
	kt_end();

	/* training mode with ratio 0 is the identity */
	kt_begin("Dropout", "", 13);
	kt_input_f32(1, D(2), F(1, 2));
	kt_input_f32(0, NULL, F(0));
	kt_input(OX_BOOL, 0, NULL, ((const uint8_t[]){1}));
	kt_run(TENSOR, 1);
	kt_expect_f32(0, 1, D(2), F(1, 2), 0);
	kt_end();
}

static void
movement_ops(void)
{
	/* fast paths against naive loops: blocked 2-D, NCHW <-> NHWC, generic */
	check_transpose(OX_FLOAT, 2, D(37, 45), I64(1, 0));
	check_transpose(OX_FLOAT, 2, D(100, 3), I64(1, 0));
	check_transpose(OX_FLOAT, 4, D(2, 3, 5, 7), I64(0, 2, 3, 1));
	check_transpose(OX_FLOAT, 4, D(2, 5, 7, 3), I64(0, 3, 1, 2));
	check_transpose(OX_UINT8, 4, D(2, 33, 6, 40), I64(0, 2, 3, 1));
	check_transpose(OX_INT16, 3, D(40, 5, 36), I64(2, 1, 0));
	check_transpose(OX_DOUBLE, 5, D(2, 3, 2, 3, 2), I64(4, 2, 0, 3, 1));
	check_transpose(OX_INT64, 3, D(4, 1, 5), I64(1, 2, 0));
	/* 4-byte elements take 8 x 8 register blocks (AVX2): whole blocks, edges, 4 KiB strides */
	check_transpose(OX_FLOAT, 3, D(64, 64, 16), I64(1, 2, 0));
	check_transpose(OX_FLOAT, 3, D(21, 13, 9), I64(1, 2, 0));
	check_transpose(OX_INT32, 2, D(17, 33), I64(1, 0));
	check_transpose(OX_FLOAT, 4, D(2, 8, 8, 8), I64(0, 3, 1, 2));
	check_transpose(OX_FLOAT, 2, D(40, 7), I64(1, 0));
	/* short contiguous rows go in runs along the next axis, carried across the outer ones */
	check_transpose(OX_FLOAT, 3, D(64, 32, 16), I64(1, 0, 2));
	check_transpose(OX_FLOAT, 4, D(3, 5, 7, 4), I64(2, 0, 1, 3));
	check_transpose(OX_INT64, 4, D(2, 3, 5, 6), I64(1, 2, 0, 3));
	check_transpose(OX_UINT8, 4, D(4, 3, 2, 9), I64(2, 1, 0, 3));

	kt_begin("Transpose", "", 13);
	kt_input_strings(2, D(2, 3), S("a", "b", "c", "d", "e", "f"));
	kt_run(TENSOR, 1);
	expect_strings(0, 2, D(3, 2), S("a", "d", "b", "e", "c", "f"));
	kt_end();

	kt_begin("Transpose", "", 13);
	kt_attr_ints("perm", 2, I64(0, 0));
	kt_input_f32(2, D(2, 2), F(1, 2, 3, 4));
	kt_run(TENSOR, 1);
	/* not a permutation whatever the input: the prepare refuses it, as a bad model */
	kt_expect_error(OX_INVALID_MODEL);
	kt_end();

	kt_begin("Transpose", "", 13);
	kt_attr_ints("perm", 3, I64(0, 1, 2));
	kt_input_f32(2, D(2, 2), F(1, 2, 3, 4));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	/* Concat of strings and its errors */
	kt_begin("Concat", "", 13);
	kt_attr_int("axis", 0);
	kt_input_strings(1, D(1), S("a"));
	kt_input_strings(1, D(2), S("b", "c"));
	kt_run(TENSOR, 1);
	expect_strings(0, 1, D(3), S("a", "b", "c"));
	kt_end();

	kt_begin("Concat", "", 13);
	kt_attr_int("axis", 0);
	kt_input_f32(2, D(1, 2), F(1, 2));
	kt_input_f32(2, D(1, 3), F(1, 2, 3));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Concat", "", 13);
	kt_input_f32(1, D(2), F(1, 2));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	/* Split errors */
	kt_begin("Split", "", 13);
	kt_input_f32(1, D(5), F(1, 2, 3, 4, 5));
	kt_input_i64(1, D(2), I64(2, 2));
	kt_run(TENSOR, 2);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Split", "", 13);
	kt_input_f32(1, D(5), F(1, 2, 3, 4, 5));
	kt_run(TENSOR, 2);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	/* Slice errors and strings */
	kt_begin("Slice", "", 13);
	kt_input_strings(1, D(4), S("a", "b", "c", "d"));
	kt_input_i64(1, D(1), I64(-1));
	kt_input_i64(1, D(1), I64(INT64_MIN));
	kt_input_i64(1, D(1), I64(0));
	kt_input_i64(1, D(1), I64(-2));
	kt_run(TENSOR, 1);
	expect_strings(0, 1, D(2), S("d", "b"));
	kt_end();

	kt_begin("Slice", "", 13);
	kt_input_f32(1, D(4), F(1, 2, 3, 4));
	kt_input_i64(1, D(1), I64(0));
	kt_input_i64(1, D(1), I64(4));
	kt_input_i64(1, D(1), I64(0));
	kt_input_i64(1, D(1), I64(0));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Slice", "", 13);
	kt_input_f32(1, D(4), F(1, 2, 3, 4));
	kt_input_i64(1, D(1), I64(0));
	kt_input_i64(1, D(1), I64(4));
	kt_input_i64(1, D(1), I64(1));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	/* Expand / Tile / Pad errors */
	kt_begin("Expand", "", 13);
	kt_input_f32(1, D(3), F(1, 2, 3));
	kt_input_i64(1, D(1), I64(4));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Expand", "", 13);
	kt_input_strings(2, D(2, 1), S("p", "q"));
	kt_input_i64(1, D(2), I64(2, 2));
	kt_run(TENSOR, 1);
	expect_strings(0, 2, D(2, 2), S("p", "p", "q", "q"));
	kt_end();

	kt_begin("Tile", "", 13);
	kt_input_f32(1, D(3), F(1, 2, 3));
	kt_input_i64(1, D(1), I64(-1));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Tile", "", 13);
	kt_input_f32(1, D(3), F(1, 2, 3));
	kt_input_i64(1, D(2), I64(1, 1));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Pad", "", 13);
	kt_input_strings(1, D(2), S("a", "b"));
	kt_input_i64(1, D(2), I64(1, 2));
	kt_run(TENSOR, 1);
	expect_strings(0, 1, D(5), S("", "a", "b", "", ""));
	kt_end();

	kt_begin("Pad", "", 13);
	kt_input_f32(2, D(2, 3), F(1, 2, 3, 4, 5, 6));
	kt_input_i64(1, D(4), I64(0, -1, 0, -1));
	kt_run(TENSOR, 1);
	kt_expect_f32(0, 2, D(2, 1), F(2, 5), 0);
	kt_end();

	kt_begin("Pad", "", 13);
	kt_attr_string("mode", "mirror");
	kt_input_f32(1, D(2), F(1, 2));
	kt_input_i64(1, D(2), I64(1, 1));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	kt_begin("Pad", "", 13);
	kt_attr_string("mode", "edge");
	kt_input_f32(1, D(0), NULL);
	kt_input_i64(1, D(2), I64(1, 1));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Pad", "", 13);
	kt_input_f32(1, D(2), F(1, 2));
	kt_input_i64(1, D(2), I64(-2, -1));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	/* Compress / Trilu / ReverseSequence errors and strings */
	kt_begin("Compress", "", 11);
	kt_attr_int("axis", 0);
	kt_input_strings(1, D(3), S("a", "b", "c"));
	kt_input(OX_BOOL, 1, D(3), ((const uint8_t[]){1, 0, 1}));
	kt_run(TENSOR, 1);
	expect_strings(0, 1, D(2), S("a", "c"));
	kt_end();

	kt_begin("Compress", "", 11);
	kt_attr_int("axis", 0);
	kt_input_f32(1, D(2), F(1, 2));
	kt_input(OX_BOOL, 1, D(3), ((const uint8_t[]){1, 0, 1}));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Trilu", "", 14);
	kt_input_strings(2, D(2, 2), S("a", "b", "c", "d"));
	kt_run(TENSOR, 1);
	expect_strings(0, 2, D(2, 2), S("a", "b", "", "d"));
	kt_end();

	kt_begin("Trilu", "", 14);
	kt_input_f32(2, D(2, 2), F(1, 2, 3, 4));
	kt_input_i64(0, NULL, I64(INT64_MIN));
	kt_run(TENSOR, 1);
	kt_expect_f32(0, 2, D(2, 2), F(1, 2, 3, 4), 0);
	kt_end();

	kt_begin("Trilu", "", 14);
	kt_input_f32(1, D(2), F(1, 2));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("ReverseSequence", "", 10);
	kt_input_f32(2, D(2, 2), F(1, 2, 3, 4));
	kt_input_i64(1, D(2), I64(3, 1));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	/* DepthToSpace / SpaceToDepth errors */
	kt_begin("DepthToSpace", "", 13);
	kt_attr_int("blocksize", 2);
	kt_input_f32(4, D(1, 3, 1, 1), F(1, 2, 3));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("SpaceToDepth", "", 13);
	kt_attr_int("blocksize", 2);
	kt_input_f32(4, D(1, 1, 3, 2), F(1, 2, 3, 4, 5, 6));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();
}

static void
index_ops(void)
{
	float		x6[6] = {0, 1, 2, 3, 4, 5};

	/* out-of-range indices are errors */
	kt_begin("Gather", "", 13);
	kt_input_f32(2, D(3, 2), x6);
	kt_input_i64(1, D(2), I64(0, 3));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Gather", "", 13);
	kt_input_f32(2, D(3, 2), x6);
	kt_input_i64(1, D(1), I64(-4));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Gather", "", 13);
	kt_input_f32(2, D(3, 2), x6);
	kt_input_f32(1, D(1), F(0));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Gather", "", 13);
	kt_input_strings(1, D(3), S("a", "b", "c"));
	kt_input_i64(1, D(3), I64(2, -3, 2));
	kt_run(TENSOR, 1);
	expect_strings(0, 1, D(3), S("c", "a", "c"));
	kt_end();

	/* Gather axis 0 rows of float32 (the embedding path) */
	kt_begin("Gather", "", 13);
	kt_input_f32(2, D(3, 2), x6);
	kt_input(OX_INT32, 2, D(2, 2), ((const int32_t[]){2, 0, 1, 2}));
	kt_run(TENSOR, 1);
	kt_expect_f32(0, 3, D(2, 2, 2), F(4, 5, 0, 1, 2, 3, 4, 5), 0);
	kt_end();

	kt_begin("GatherElements", "", 13);
	kt_input_f32(2, D(3, 2), x6);
	kt_input_i64(2, D(1, 2), I64(0, 3));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("GatherND", "", 13);
	kt_input_f32(2, D(3, 2), x6);
	kt_input_i64(2, D(1, 2), I64(3, 0));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("GatherND", "", 13);
	kt_input_f32(2, D(3, 2), x6);
	kt_input_i64(2, D(1, 3), I64(0, 0, 0));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("ScatterElements", "", 13);
	kt_input_f32(1, D(3), F(1, 2, 3));
	kt_input_i64(1, D(1), I64(5));
	kt_input_f32(1, D(1), F(9));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("ScatterElements", "", 18);
	kt_attr_string("reduction", "mean");
	kt_input_f32(1, D(3), F(1, 2, 3));
	kt_input_i64(1, D(1), I64(0));
	kt_input_f32(1, D(1), F(9));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	kt_begin("ScatterND", "", 18);
	kt_attr_string("reduction", "add");
	kt_input_strings(1, D(2), S("a", "b"));
	kt_input_i64(2, D(1, 1), I64(0));
	kt_input_strings(1, D(1), S("c"));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("ScatterND", "", 13);
	kt_input_strings(1, D(2), S("a", "b"));
	kt_input_i64(2, D(1, 1), I64(-1));
	kt_input_strings(1, D(1), S("c"));
	kt_run(TENSOR, 1);
	expect_strings(0, 1, D(2), S("a", "c"));
	kt_end();

	kt_begin("ScatterND", "", 13);
	kt_input_f32(2, D(3, 2), x6);
	kt_input_i64(2, D(1, 1), I64(0));
	kt_input_f32(1, D(3), F(1, 2, 3));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	/* Scatter (opset 9 alias of ScatterElements) */
	kt_begin("Scatter", "", 9);
	kt_attr_int("axis", 1);
	kt_input_f32(2, D(2, 3), x6);
	kt_input_i64(2, D(2, 1), I64(2, 0));
	kt_input_f32(2, D(2, 1), F(7, 8));
	kt_run(TENSOR, 1);
	kt_expect_f32(0, 2, D(2, 3), F(0, 1, 7, 8, 4, 5), 0);
	kt_end();

	/* OneHot with float indices, axis 0 and int32 values */
	kt_begin("OneHot", "", 11);
	kt_attr_int("axis", 0);
	kt_input_f32(2, D(2, 2), F(1, 0, 2, 1));
	kt_input_f32(0, NULL, F(3));
	kt_input(OX_INT32, 1, D(2), ((const int32_t[]){-1, 7}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_INT32, 3, D(3, 2, 2),
					 ((const int32_t[]){-1, 7, -1, -1, 7, -1, -1, 7, -1, -1, 7, -1}), 0);
	kt_end();

	/* indices outside [-depth, depth) give an all-off row (the spec; the
	 * Python reference wraps them instead) */
	kt_begin("OneHot", "", 11);
	kt_input_i64(1, D(2), I64(4, -5));
	kt_input_i64(0, NULL, I64(4));
	kt_input_f32(1, D(2), F(0, 1));
	kt_run(TENSOR, 1);
	kt_expect_f32(0, 2, D(2, 4), F(0, 0, 0, 0, 0, 0, 0, 0), 0);
	kt_end();

	kt_begin("OneHot", "", 11);
	kt_input_i64(1, D(1), I64(0));
	kt_input_i64(0, NULL, I64(0));
	kt_input_f32(1, D(2), F(0, 1));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	/* NonZero of strings and of a scalar */
	kt_begin("NonZero", "", 13);
	kt_input_strings(1, D(3), S("", "x", "y"));
	kt_run(TENSOR, 1);
	kt_expect_i64(0, 2, D(1, 2), I64(1, 2));
	kt_end();

	kt_begin("NonZero", "", 13);
	kt_input_f32(0, NULL, F(3));
	kt_run(TENSOR, 1);
	kt_expect_i64(0, 2, D(1, 1), I64(0));
	kt_end();

	/* TopK / Unique / CumSum */
	kt_begin("TopK", "", 11);
	kt_input_f32(1, D(3), F(1, 2, 3));
	kt_input_i64(1, D(1), I64(4));
	kt_run(TENSOR, 2);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("TopK", "", 1);
	kt_attr_int("k", 2);
	kt_input_f32(1, D(4), F(1, 4, 4, 3));
	kt_run(TENSOR, 2);
	kt_expect_f32(0, 1, D(2), F(4, 4), 0);
	kt_expect_i64(1, 1, D(2), I64(1, 2));
	kt_end();

	kt_begin("Unique", "", 11);
	kt_input_strings(1, D(4), S("b", "a", "b", "c"));
	kt_run(TENSOR, 4);
	expect_strings(0, 1, D(3), S("a", "b", "c"));
	kt_expect_i64(1, 1, D(3), I64(1, 0, 3));
	kt_expect_i64(2, 1, D(4), I64(1, 0, 1, 2));
	kt_expect_i64(3, 1, D(3), I64(1, 2, 1));
	kt_end();

	kt_begin("CumSum", "", 14);
	kt_input_f32(1, D(3), F(1, 2, 3));
	kt_input_i64(0, NULL, I64(1));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();
}

static void
cumprod_cases(void)
{
	kt_begin("CumProd", "", 26);
	kt.label = "CumProd float axis 1";
	kt_input_f32(2, D(2, 3), (const float[]) {1, 2, 3, 4, 5, 6});
	kt_input(OX_INT32, 0, D(0), (const int32_t[]) {1});
	kt_run(TENSOR, 1);
	kt_expect_f32(0, 2, D(2, 3), (const float[]) {1, 2, 6, 4, 20, 120}, 1e-6);
	kt_end();

	kt_begin("CumProd", "", 26);
	kt.label = "CumProd int64 axis 0 exclusive reverse";
	kt_attr_int("exclusive", 1);
	kt_attr_int("reverse", 1);
	kt_input_i64(2, D(3, 2), (const int64_t[]) {1, 2, 3, 4, 5, 6});
	kt_input_i64(1, D(1), (const int64_t[]) {-2});
	kt_run(TENSOR, 1);
	kt_expect_i64(0, 2, D(3, 2), (const int64_t[]) {15, 24, 5, 6, 1, 1});
	kt_end();

	kt_begin("CumProd", "", 26);
	kt.label = "CumProd float16 reverse";
	kt_attr_int("reverse", 1);
	kt_input(OX_FLOAT16, 1, D(3), (const uint16_t[]) {0x4000, 0x4200, 0x4400});	/* 2 3 4 */
	kt_input_i64(0, D(0), (const int64_t[]) {0});
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT16, 1, D(3), (const uint16_t[]) {0x4e00, 0x4a00, 0x4400}, 0);	/* 24 12 4 */
	kt_end();

	kt_begin("CumProd", "", 26);
	kt.label = "CumProd int32 wraps";
	kt_input(OX_INT32, 1, D(3), (const int32_t[]) {65536, 65536, 3});
	kt_input_i64(0, D(0), (const int64_t[]) {0});
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_INT32, 1, D(3), (const int32_t[]) {65536, 0, 0}, 0);
	kt_end();

	kt_begin("CumProd", "", 26);
	kt.label = "CumProd axis out of range";
	kt_input_f32(1, D(3), (const float[]) {1, 2, 3});
	kt_input_i64(0, D(0), (const int64_t[]) {1});
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("CumProd", "", 26);
	kt.label = "CumProd string refused";
	kt_input_strings(1, D(1), (const char *[]) {"x"});
	kt_input_i64(0, D(0), (const int64_t[]) {0});
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();
}

static void
resize_ops(void)
{
	/* Resize-10: asymmetric coordinates, nearest rounds down */
	kt_begin("Resize", "", 10);
	kt_attr_string("mode", "nearest");
	kt_input_f32(4, D(1, 1, 2, 2), F(0, 1, 2, 3));
	kt_input_f32(1, D(4), F(1, 1, 2, 3));
	kt_run(TENSOR, 1);
	kt_expect_f32(0, 4, D(1, 1, 4, 6),
				  F(0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 2, 2, 2, 3, 3, 3), 0);
	kt_end();

	/* Upsample-7 takes scales as an attribute */
	kt_begin("Upsample", "", 7);
	kt_attr_string("mode", "nearest");
	kt_attr_floats("scales", 2, F(1, 2));
	kt_input_f32(2, D(2, 2), F(0, 1, 2, 3));
	kt_run(TENSOR, 1);
	kt_expect_f32(0, 2, D(2, 4), F(0, 0, 1, 1, 2, 2, 3, 3), 0);
	kt_end();

	/* nearest gathers strings too */
	kt_begin("Resize", "", 13);
	kt_attr_string("mode", "nearest");
	kt_input_strings(1, D(2), S("a", "b"));
	kt_input_none();
	kt_input_f32(1, D(1), F(2));
	kt_run(TENSOR, 1);
	expect_strings(0, 1, D(4), S("a", "a", "b", "b"));
	kt_end();

	kt_begin("Resize", "", 13);
	kt_attr_string("mode", "linear");
	kt_input_strings(1, D(2), S("a", "b"));
	kt_input_none();
	kt_input_f32(1, D(1), F(2));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Resize", "", 13);
	kt_attr_string("mode", "area");
	kt_input_f32(1, D(2), F(0, 1));
	kt_input_none();
	kt_input_f32(1, D(1), F(2));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	kt_begin("Resize", "", 13);
	kt_input_f32(1, D(2), F(0, 1));
	kt_input_none();
	kt_input_f32(1, D(1), F(2));
	kt_input_i64(1, D(1), I64(4));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Resize", "", 13);
	kt_input_f32(1, D(2), F(0, 1));
	kt_input_none();
	kt_input_f32(1, D(2), F(2, 2));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Resize", "", 13);
	kt_input_f32(1, D(2), F(0, 1));
	kt_input_none();
	kt_input_f32(1, D(1), F(-2));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Col2Im", "", 18);
	kt_input_f32(3, D(1, 4, 5), NULL);
	kt_input_i64(1, D(2), I64(3, 4));
	kt_input_i64(1, D(2), I64(2, 2));
	kt_run(TENSOR, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();
}

/* reference order of TopK: NaN above everything, ties to the lower index */
typedef struct topk_ref
{
	double		v;
	int64_t		idx;
} topk_ref;

static bool topk_ref_largest;

static int
topk_ref_cmp(const void *pa, const void *pb)
{
	const topk_ref *a = pa;
	const topk_ref *b = pb;
	int			c;

	if (isnan(a->v) || isnan(b->v))
		c = isnan(a->v) ? (isnan(b->v) ? 0 : 1) : -1;
	else
		c = a->v < b->v ? -1 : a->v > b->v;
	if (topk_ref_largest)
		c = -c;
	return c ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

/*
 * Run TopK on random small integers (many ties), with NaNs and signed
 * zeros for the float types, and check both outputs bit for bit against
 * a sort of every slice by (value, index).
 */
static void
check_topk(ox_dtype dt, int rank, const int64_t *dims, int axis_attr, int64_t k,
		   bool largest, bool sorted, unsigned seed)
{
	int64_t		numel = ox_shape_numel(rank, dims);
	int			axis = axis_attr < 0 ? axis_attr + rank : axis_attr;
	int64_t		n = dims[axis],
				outer = 1,
				inner = 1;
	int64_t		odims[OX_MAX_RANK];
	size_t		es = ox_dtype_size(dt);
	bool		isfloat = ox_dtype_is_float(dt);
	double	   *src = malloc(sizeof(double) * (numel > 0 ? numel : 1));
	double	   *back = malloc(sizeof(double) * (numel > 0 ? numel : 1));
	char	   *typed = malloc(es * (numel > 0 ? numel : 1));
	topk_ref   *order = malloc(sizeof(topk_ref) * (n > 0 ? n : 1));
	int64_t		onum;
	char	   *want_v;
	int64_t    *want_i;
	char		label[96];

	for (int i = 0; i < rank; i++)
	{
		odims[i] = i == axis ? k : dims[i];
		if (i < axis)
			outer *= dims[i];
		else if (i > axis)
			inner *= dims[i];
	}
	onum = ox_shape_numel(rank, odims);
	want_v = malloc(es * (onum > 0 ? onum : 1));
	want_i = malloc(sizeof(int64_t) * (onum > 0 ? onum : 1));
	srand(seed);
	for (int64_t i = 0; i < numel; i++)
	{
		int			r = rand() % 20;

		src[i] = (double) (rand() % 9) - (dt == OX_UINT8 || dt == OX_UINT64 || dt == OX_BOOL ? 0 : 4);
		if (dt == OX_BOOL)
			src[i] = rand() % 2;
		if (isfloat && r == 0)
			src[i] = NAN;
		else if (isfloat && r == 1)
			src[i] = -0.0;
	}
	ox_convert_elements(typed, dt, src, OX_DOUBLE, numel, NULL);
	/* the reference orders what the tensor holds */
	ox_convert_elements(back, OX_DOUBLE, typed, dt, numel, NULL);
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++)
		{
			for (int64_t j = 0; j < n; j++)
			{
				order[j].v = back[(o * n + j) * inner + i];
				order[j].idx = j;
			}
			topk_ref_largest = largest;
			qsort(order, n, sizeof(topk_ref), topk_ref_cmp);
			for (int64_t j = 0; j < k; j++)
			{
				int64_t		dst = (o * k + j) * inner + i;

				memcpy(want_v + dst * es, typed + ((o * n + order[j].idx) * inner + i) * es, es);
				want_i[dst] = order[j].idx;
			}
		}
	snprintf(label, sizeof(label), "TopK %s n=%lld k=%lld axis=%d largest=%d",
			 ox_dtype_name(dt), (long long) n, (long long) k, axis_attr, (int) largest);
	kt_begin("TopK", "", 11);
	kt.label = label;
	kt_attr_int("axis", axis_attr);
	kt_attr_int("largest", largest);
	kt_attr_int("sorted", sorted);
	kt_input(dt, rank, dims, typed);
	kt_input_i64(1, D(1), &k);
	kt_run(TENSOR, 2);
	if (kt_check_shape(0, dt, rank, odims) && kt_check_shape(1, OX_INT64, rank, odims))
	{
		if (memcmp(kt_output(0)->data, want_v, es * onum) != 0)
			kt_fail("values differ%s%.0f%.0f", "", 0, 0);
		else if (memcmp(kt_output(1)->data, want_i, sizeof(int64_t) * onum) != 0)
			kt_fail("indices differ%s%.0f%.0f", "", 0, 0);
	}
	kt_end();
	free(src);
	free(back);
	free(typed);
	free(order);
	free(want_v);
	free(want_i);
}

static void
topk_ops(void)
{
	static const ox_dtype types[] = {OX_FLOAT, OX_DOUBLE, OX_FLOAT16, OX_BFLOAT16, OX_INT8,
		OX_INT16, OX_INT32, OX_INT64, OX_UINT8, OX_BOOL, OX_UINT16, OX_UINT32, OX_UINT64};
	unsigned	seed = 1;

	/* every type, both directions, small and heap paths, last and first axis */
	for (int t = 0; t < (int) (sizeof(types) / sizeof(types[0])); t++)
		for (int largest = 0; largest < 2; largest++)
		{
			check_topk(types[t], 2, D(7, 40), -1, 5, largest, true, seed++);
			check_topk(types[t], 2, D(7, 40), 1, 23, largest, true, seed++);
			check_topk(types[t], 2, D(40, 6), 0, 3, largest, true, seed++);
			check_topk(types[t], 2, D(40, 6), -2, 40, largest, false, seed++);
		}
	/* the float fast path: blocks, tails, k at the small / heap boundary */
	for (int largest = 0; largest < 2; largest++)
	{
		static const int64_t ns[] = {1, 2, 15, 16, 17, 31, 33, 100, 257};
		static const int64_t ks[] = {0, 1, 2, 5, 15, 16, 17, 32};

		for (int a = 0; a < 9; a++)
			for (int b = 0; b < 8; b++)
			{
				if (ks[b] > ns[a])
					continue;
				check_topk(OX_FLOAT, 2, D(3, ns[a]), -1, ks[b], largest, true, seed++);
				check_topk(OX_FLOAT, 1, D(ns[a]), 0, ks[b], largest, false, seed++);
			}
		check_topk(OX_FLOAT, 2, D(1, 2000), -1, 5, largest, true, seed++);
		check_topk(OX_FLOAT, 2, D(200, 300), -1, 5, largest, true, seed++);
		check_topk(OX_FLOAT, 2, D(50, 300), -1, 150, largest, true, seed++);
		check_topk(OX_FLOAT, 2, D(20, 300), -1, 300, largest, true, seed++);
		check_topk(OX_DOUBLE, 2, D(50, 300), 1, 7, largest, true, seed++);
		check_topk(OX_INT32, 3, D(3, 50, 4), 1, 50, largest, true, seed++);
		check_topk(OX_FLOAT, 4, D(2, 3, 33, 5), -2, 17, largest, true, seed++);
		check_topk(OX_FLOAT, 4, D(2, 3, 33, 5), 2, 4, largest, true, seed++);
		check_topk(OX_FLOAT, 3, D(2, 0, 5), -1, 3, largest, true, seed++);
		check_topk(OX_FLOAT, 3, D(2, 5, 0), 1, 0, largest, true, seed++);
		/* slices longer than one poll piece: the scan resumes across pieces */
		check_topk(OX_FLOAT, 2, D(2, 70001), 1, 5, largest, true, seed++);
		check_topk(OX_FLOAT, 2, D(70001, 2), 0, 16, largest, true, seed++);
		check_topk(OX_INT32, 1, D(70001), 0, 40, largest, true, seed++);
		check_topk(OX_FLOAT, 1, D(70001), 0, 66000, largest, true, seed++);
	}
}

/*
 * Concat of n inputs whose extents along the axis vary (zero included),
 * random bytes, against a per-element copy; covers the one-move blocks
 * (1, 2, 4, 8, 16 bytes), the memcpy blocks, partial row tiles and the
 * input table past 64 entries.
 */
static void
check_concat(ox_dtype dt, int rank, const int64_t *dims, int axis, int n, int maxw, unsigned seed)
{
	size_t		es = ox_dtype_size(dt);
	int64_t		outer = 1,
				inner = 1,
				total = 0,
				off = 0;
	int64_t		w[KT_MAX_IO];
	unsigned char *in[KT_MAX_IO];
	int64_t		idims[OX_MAX_RANK],
				odims[OX_MAX_RANK];
	unsigned char *want;
	char		label[96];

	srand(seed);
	for (int k = 0; k < rank; k++)
	{
		if (k < axis)
			outer *= dims[k];
		else if (k > axis)
			inner *= dims[k];
	}
	for (int i = 0; i < n; i++)
	{
		w[i] = rand() % (maxw + 1);
		if (i == 0 && w[i] == 0)
			w[i] = 1;
		total += w[i];
	}
	memcpy(odims, dims, sizeof(int64_t) * rank);
	odims[axis] = total;
	want = malloc(es * (size_t) (outer * total * inner) + 1);
	kt_begin("Concat", "", 13);
	snprintf(label, sizeof(label), "Concat %s of %d inputs axis %d outer %lld inner %lld",
			 ox_dtype_name(dt), n, axis, (long long) outer, (long long) inner);
	kt.label = label;
	kt_attr_int("axis", axis - rank);
	for (int i = 0; i < n; i++)
	{
		size_t		bytes = es * (size_t) (outer * w[i] * inner);

		in[i] = malloc(bytes + 1);
		for (size_t b = 0; b < bytes; b++)
			in[i][b] = (unsigned char) rand();
		memcpy(idims, dims, sizeof(int64_t) * rank);
		idims[axis] = w[i];
		kt_input(dt, rank, idims, in[i]);
	}
	for (int i = 0; i < n; i++)
	{
		for (int64_t o = 0; o < outer; o++)
			for (int64_t e = 0; e < w[i] * inner; e++)
				memcpy(want + ((o * total + off) * inner + e) * es, in[i] + ((o * w[i]) * inner + e) * es, es);
		off += w[i];
	}
	kt_run(TENSOR, 1);
	if (kt_check_shape(0, dt, rank, odims) &&
		memcmp(kt_output(0)->data, want, es * (size_t) (outer * total * inner)) != 0)
		kt_fail("values differ%s%.0f%.0f", "", 0, 0);
	kt_end();
	for (int i = 0; i < n; i++)
		free(in[i]);
	free(want);
}

static void
concat_ops(void)
{
	static const ox_dtype types[] = {OX_UINT8, OX_FLOAT16, OX_FLOAT, OX_DOUBLE, OX_COMPLEX128};
	unsigned	seed = 11;

	for (int t = 0; t < 5; t++)
	{
		/* many narrow columns: [N, 1] and [N, 2] inputs along the last axis */
		check_concat(types[t], 2, D(1000, 1), 1, 70, 1, seed++);
		check_concat(types[t], 2, D(1001, 1), 1, 64, 2, seed++);
		check_concat(types[t], 2, D(1, 1), 1, 65, 3, seed++);
		check_concat(types[t], 2, D(37, 1), 1, 9, 5, seed++);
		/* few wide inputs, rows past one tile */
		check_concat(types[t], 2, D(9, 1), 1, 3, 3000, seed++);
		check_concat(types[t], 3, D(3, 1, 5), 1, 6, 4, seed++);
		check_concat(types[t], 3, D(3, 1, 5), 0, 6, 4, seed++);
		check_concat(types[t], 3, D(200, 7, 1), 2, 12, 3, seed++);
	}
}

/*
 * The shape-only kernels take the buffer of an input the executor releases
 * after them (ctx->movable) instead of copying it, and copy otherwise: a
 * movable input that does not own its buffer (a constant's or a feed's
 * view) or a string tensor is still copied.
 */
static void
check_take(const char *op, int opset, bool movable, bool owned, bool strings)
{
	float		x24[24];
	const char *s6[6] = {"a", "bb", "", "ccc", "d", "ee"};
	void	   *before;
	const ox_tensor *y;
	bool		taken;
	char		label[96];

	for (int i = 0; i < 24; i++)
		x24[i] = (float) i * 0.5f;
	snprintf(label, sizeof(label), "%s take (movable %d, owned %d, strings %d)", op, movable, owned, strings);
	kt_begin(op, "", opset);
	kt.label = label;
	if (strings)
		kt_input_strings(2, D(2, 3), s6);
	else
		kt_input_f32(3, D(2, 3, 4), x24);
	if (strcmp(op, "Reshape") == 0)
		kt_input_i64(1, D(2), strings ? I64(3, 2) : I64(6, -1));
	else if (strcmp(op, "Unsqueeze") == 0)
		kt_input_i64(1, D(1), I64(0));
	if (strcmp(op, "Flatten") == 0)
		kt_attr_int("axis", 2);
	kt.inputs[0].tensor.owns = owned;	/* an unowned buffer: the test still frees it below */
	before = kt.inputs[0].tensor.data;
	kt.movable = movable ? 1 : 0;
	kt_run(TENSOR, 1);
	kt_expect_ok();
	y = kt_output(0);
	taken = y && y->data == before;
	if (taken != (movable && owned && !strings))
		kt_fail("%s: buffer taken %.0f, expected %.0f", op, taken, movable && owned && !strings);
	if (y && !strings)
	{
		for (int i = 0; i < 24; i++)
			if (((const float *) y->data)[i] != x24[i])
			{
				kt_fail("%s: element %.0f is %g", op, i, ((const float *) y->data)[i]);
				break;
			}
	}
	else if (y)
		for (int i = 0; i < 6; i++)
			if (strcmp(((const ox_string *) y->data)[i].data, s6[i]) != 0)
				kt_fail("%s: string %.0f differs%.0f", op, i, 0);
	/* what the input holds now is the output's previous (empty) buffer */
	if (taken && (kt.inputs[0].tensor.data || kt.inputs[0].tensor.owns))
		kt_fail("%s: the input still holds a buffer after it was taken%.0f%.0f", op, 0, 0);
	if (!owned)
	{
		free(before);
		kt.inputs[0].tensor.data = NULL;
	}
	kt_end();
}

static void
take_ops(void)
{
	const char *ops[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
	const int	opsets[] = {14, 13, 13, 13, 16};

	for (int o = 0; o < 5; o++)
		for (int m = 0; m < 2; m++)
			for (int w = 0; w < 2; w++)
				check_take(ops[o], opsets[o], m, w, false);
	check_take("Reshape", 14, true, true, true);
	check_take("Identity", 16, true, true, true);
}

int
main(void)
{
	shape_ops();
	take_ops();
	constant_ops();
	movement_ops();
	index_ops();
	resize_ops();
	topk_ops();
	cumprod_cases();
	concat_ops();
	return kt_summary();
}
