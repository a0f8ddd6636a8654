/*
 * test_tensor_reference.c
 *	  Unit tests of the tensor family (shape and data movement kernels)
 *	  against onnx.reference.
 *
 * reference_cases() holds expected values computed with onnx.reference, the
 * ONNX Python reference implementation.  The hand-written cases (shapes,
 * strings, opset differences, fast paths, errors) are in test_tensor.c.
 */
#include "kernel_test.h"

#include <stdint.h>

#define TENSOR ox_kernels_tensor, ox_kernels_tensor_count
#define D(...) ((const int64_t[]){__VA_ARGS__})
#define I64(...) ((const int64_t[]){__VA_ARGS__})

/* expected values from onnx.reference */
static void
reference_cases(void)
{
	/* Transpose 3-D mixed, int8 */
	kt_begin("Transpose", "", 13);
	kt_attr_ints("perm", 3, I64(1, 2, 0));
	kt_input(OX_INT8, 3, D(3, 4, 5), ((const int8_t[]){
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
		24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45,
		46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_INT8, 3, D(4, 5, 3), ((const int8_t[]){
		0, 20, 40, 1, 21, 41, 2, 22, 42, 3, 23, 43, 4, 24, 44, 5, 25, 45, 6, 26, 46, 7, 27, 47,
		8, 28, 48, 9, 29, 49, 10, 30, 50, 11, 31, 51, 12, 32, 52, 13, 33, 53, 14, 34, 54, 15,
		35, 55, 16, 36, 56, 17, 37, 57, 18, 38, 58, 19, 39, 59}), 0);
	kt_end();

	/* Transpose float16 */
	kt_begin("Transpose", "", 13);
	kt_attr_ints("perm", 2, I64(1, 0));
	kt_input(OX_FLOAT16, 2, D(6, 9), ((const uint16_t[]){
		0, 15360, 16384, 16896, 17408, 17664, 17920, 18176, 18432, 18560, 18688, 18816, 18944,
		19072, 19200, 19328, 19456, 19520, 19584, 19648, 19712, 19776, 19840, 19904, 19968,
		20032, 20096, 20160, 20224, 20288, 20352, 20416, 20480, 20512, 20544, 20576, 20608,
		20640, 20672, 20704, 20736, 20768, 20800, 20832, 20864, 20896, 20928, 20960, 20992,
		21024, 21056, 21088, 21120, 21152}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT16, 2, D(9, 6), ((const uint16_t[]){
		0, 18560, 19584, 20160, 20608, 20896, 15360, 18688, 19648, 20224, 20640, 20928, 16384,
		18816, 19712, 20288, 20672, 20960, 16896, 18944, 19776, 20352, 20704, 20992, 17408,
		19072, 19840, 20416, 20736, 21024, 17664, 19200, 19904, 20480, 20768, 21056, 17920,
		19328, 19968, 20512, 20800, 21088, 18176, 19456, 20032, 20544, 20832, 21120, 18432,
		19520, 20096, 20576, 20864, 21152}), 1e-05);
	kt_end();

	/* DepthToSpace DCR */
	kt_begin("DepthToSpace", "", 13);
	kt_attr_int("blocksize", 2);
	kt_input(OX_FLOAT, 4, D(1, 8, 2, 3), ((const float[]){
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
		24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45,
		46, 47}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 4, D(1, 2, 4, 6), ((const float[]){
		0, 12, 1, 13, 2, 14, 24, 36, 25, 37, 26, 38, 3, 15, 4, 16, 5, 17, 27, 39, 28, 40, 29,
		41, 6, 18, 7, 19, 8, 20, 30, 42, 31, 43, 32, 44, 9, 21, 10, 22, 11, 23, 33, 45, 34, 46,
		35, 47}), 1e-05);
	kt_end();

	/* DepthToSpace CRD */
	kt_begin("DepthToSpace", "", 13);
	kt_attr_int("blocksize", 2);
	kt_attr_string("mode", "CRD");
	kt_input(OX_FLOAT, 4, D(1, 8, 2, 3), ((const float[]){
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
		24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45,
		46, 47}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 4, D(1, 2, 4, 6), ((const float[]){
		0, 6, 1, 7, 2, 8, 12, 18, 13, 19, 14, 20, 3, 9, 4, 10, 5, 11, 15, 21, 16, 22, 17, 23,
		24, 30, 25, 31, 26, 32, 36, 42, 37, 43, 38, 44, 27, 33, 28, 34, 29, 35, 39, 45, 40, 46,
		41, 47}), 1e-05);
	kt_end();

	/* SpaceToDepth */
	kt_begin("SpaceToDepth", "", 13);
	kt_attr_int("blocksize", 2);
	kt_input(OX_FLOAT, 4, D(2, 2, 4, 6), ((const float[]){
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
		24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45,
		46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67,
		68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89,
		90, 91, 92, 93, 94, 95}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 4, D(2, 8, 2, 3), ((const float[]){
		0, 2, 4, 12, 14, 16, 24, 26, 28, 36, 38, 40, 1, 3, 5, 13, 15, 17, 25, 27, 29, 37, 39,
		41, 6, 8, 10, 18, 20, 22, 30, 32, 34, 42, 44, 46, 7, 9, 11, 19, 21, 23, 31, 33, 35, 43,
		45, 47, 48, 50, 52, 60, 62, 64, 72, 74, 76, 84, 86, 88, 49, 51, 53, 61, 63, 65, 73, 75,
		77, 85, 87, 89, 54, 56, 58, 66, 68, 70, 78, 80, 82, 90, 92, 94, 55, 57, 59, 67, 69, 71,
		79, 81, 83, 91, 93, 95}), 1e-05);
	kt_end();

	/* Expand broadcast both ways */
	kt_begin("Expand", "", 13);
	kt_input(OX_FLOAT, 2, D(3, 1), ((const float[]){0, 1, 2}));
	kt_input(OX_INT64, 1, D(3), ((const int64_t[]){2, 1, 4}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 3, 4), ((const float[]){0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}), 1e-05);
	kt_end();

	/* Expand lower rank shape */
	kt_begin("Expand", "", 13);
	kt_input(OX_INT32, 2, D(2, 3), ((const int32_t[]){0, 1, 2, 3, 4, 5}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){3}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_INT32, 2, D(2, 3), ((const int32_t[]){0, 1, 2, 3, 4, 5}), 0);
	kt_end();

	/* Tile */
	kt_begin("Tile", "", 13);
	kt_input(OX_FLOAT, 2, D(2, 3), ((const float[]){0, 1, 2, 3, 4, 5}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){2, 2}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(4, 6), ((const float[]){0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}), 1e-05);
	kt_end();

	/* Tile 3-D with 1 and 0-free repeats */
	kt_begin("Tile", "", 13);
	kt_input(OX_INT64, 3, D(2, 1, 3), ((const int64_t[]){0, 1, 2, 3, 4, 5}));
	kt_input(OX_INT64, 1, D(3), ((const int64_t[]){1, 3, 2}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_INT64, 3, D(2, 3, 6), ((const int64_t[]){
		0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 3, 4, 5, 3, 4,
		5, 3, 4, 5, 3, 4, 5}), 0);
	kt_end();

	/* Slice opset 13 negative step */
	kt_begin("Slice", "", 13);
	kt_input(OX_FLOAT, 2, D(4, 6), ((const float[]){
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){-1, 5}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){-10, 0}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){0, 1}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){-1, -2}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(4, 3), ((const float[]){23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1}), 1e-05);
	kt_end();

	/* Slice INT64 max end and axes */
	kt_begin("Slice", "", 13);
	kt_input(OX_FLOAT, 2, D(3, 10), ((const float[]){
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
		24, 25, 26, 27, 28, 29}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){9223372036854775807}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){3}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(3, 3), ((const float[]){1, 4, 7, 11, 14, 17, 21, 24, 27}), 1e-05);
	kt_end();

	/* Slice default axes/steps clamped */
	kt_begin("Slice", "", 13);
	kt_input(OX_FLOAT, 3, D(3, 4, 5), ((const float[]){
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
		24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45,
		46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59}));
	kt_input(OX_INT64, 1, D(3), ((const int64_t[]){0, 1, -100}));
	kt_input(OX_INT64, 1, D(3), ((const int64_t[]){10, 3, 100}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(3, 2, 5), ((const float[]){
		5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 45, 46, 47,
		48, 49, 50, 51, 52, 53, 54}), 1e-05);
	kt_end();

	/* Slice opset 1 attributes */
	kt_begin("Slice", "", 1);
	kt_attr_ints("starts", 1, I64(1));
	kt_attr_ints("ends", 1, I64(3));
	kt_attr_ints("axes", 1, I64(1));
	kt_input(OX_FLOAT, 2, D(2, 4), ((const float[]){0, 1, 2, 3, 4, 5, 6, 7}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 2), ((const float[]){1, 2, 5, 6}), 1e-05);
	kt_end();

	/* Slice empty result */
	kt_begin("Slice", "", 13);
	kt_input(OX_FLOAT, 2, D(3, 4), ((const float[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){2}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){0}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(0, 4), NULL, 1e-05);
	kt_end();

	/* Concat axis 1 */
	kt_begin("Concat", "", 13);
	kt_attr_int("axis", 1);
	kt_input(OX_FLOAT, 2, D(2, 3), ((const float[]){0, 1, 2, 3, 4, 5}));
	kt_input(OX_FLOAT, 2, D(2, 1), ((const float[]){100, 101}));
	kt_input(OX_FLOAT, 2, D(2, 2), ((const float[]){200, 201, 202, 203}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 6), ((const float[]){0, 1, 2, 100, 200, 201, 3, 4, 5, 101, 202, 203}), 1e-05);
	kt_end();

	/* Concat negative axis with empty input */
	kt_begin("Concat", "", 13);
	kt_attr_int("axis", -1);
	kt_input(OX_FLOAT, 2, D(2, 0), NULL);
	kt_input(OX_FLOAT, 2, D(2, 2), ((const float[]){0, 1, 2, 3}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 2), ((const float[]){0, 1, 2, 3}), 1e-05);
	kt_end();

	/* Split equal */
	kt_begin("Split", "", 13);
	kt_attr_int("axis", 1);
	kt_input(OX_FLOAT, 2, D(2, 6), ((const float[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
	kt_run(TENSOR, 3);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 2), ((const float[]){0, 1, 6, 7}), 1e-05);
	kt_expect_values(1, OX_FLOAT, 2, D(2, 2), ((const float[]){2, 3, 8, 9}), 1e-05);
	kt_expect_values(2, OX_FLOAT, 2, D(2, 2), ((const float[]){4, 5, 10, 11}), 1e-05);
	kt_end();

	/* Split input sizes */
	kt_begin("Split", "", 13);
	kt_attr_int("axis", 0);
	kt_input(OX_FLOAT, 2, D(5, 2), ((const float[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){2, 3}));
	kt_run(TENSOR, 2);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 2), ((const float[]){0, 1, 2, 3}), 1e-05);
	kt_expect_values(1, OX_FLOAT, 2, D(3, 2), ((const float[]){4, 5, 6, 7, 8, 9}), 1e-05);
	kt_end();

	/* Split attribute sizes opset 11 */
	kt_begin("Split", "", 11);
	kt_attr_int("axis", 1);
	kt_attr_ints("split", 2, I64(1, 3));
	kt_input(OX_FLOAT, 2, D(2, 4), ((const float[]){0, 1, 2, 3, 4, 5, 6, 7}));
	kt_run(TENSOR, 2);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 1), ((const float[]){0, 4}), 1e-05);
	kt_expect_values(1, OX_FLOAT, 2, D(2, 3), ((const float[]){1, 2, 3, 5, 6, 7}), 1e-05);
	kt_end();

	/* Split num_outputs uneven */
	kt_begin("Split", "", 18);
	kt_attr_int("axis", 0);
	kt_attr_int("num_outputs", 3);
	kt_input(OX_FLOAT, 1, D(7), ((const float[]){0, 1, 2, 3, 4, 5, 6}));
	kt_run(TENSOR, 3);
	kt_expect_values(0, OX_FLOAT, 1, D(3), ((const float[]){0, 1, 2}), 1e-05);
	kt_expect_values(1, OX_FLOAT, 1, D(3), ((const float[]){3, 4, 5}), 1e-05);
	kt_expect_values(2, OX_FLOAT, 1, D(1), ((const float[]){6}), 1e-05);
	kt_end();

	/* Pad constant */
	kt_begin("Pad", "", 13);
	kt_input(OX_FLOAT, 2, D(2, 3), ((const float[]){0, 1, 2, 3, 4, 5}));
	kt_input(OX_INT64, 1, D(4), ((const int64_t[]){1, 0, 0, 2}));
	kt_input(OX_FLOAT, 1, D(1), ((const float[]){9.5f}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(3, 5), ((const float[]){9.5f, 9.5f, 9.5f, 9.5f, 9.5f, 0, 1, 2, 9.5f, 9.5f, 3, 4, 5, 9.5f, 9.5f}), 1e-05);
	kt_end();

	/* Pad reflect */
	kt_begin("Pad", "", 13);
	kt_attr_string("mode", "reflect");
	kt_input(OX_FLOAT, 2, D(3, 4), ((const float[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
	kt_input(OX_INT64, 1, D(4), ((const int64_t[]){2, 1, 1, 3}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(6, 8), ((const float[]){
		9, 8, 9, 10, 11, 10, 9, 8, 5, 4, 5, 6, 7, 6, 5, 4, 1, 0, 1, 2, 3, 2, 1, 0, 5, 4, 5, 6,
		7, 6, 5, 4, 9, 8, 9, 10, 11, 10, 9, 8, 5, 4, 5, 6, 7, 6, 5, 4}), 1e-05);
	kt_end();

	/* Pad edge */
	kt_begin("Pad", "", 13);
	kt_attr_string("mode", "edge");
	kt_input(OX_FLOAT, 2, D(2, 3), ((const float[]){0, 1, 2, 3, 4, 5}));
	kt_input(OX_INT64, 1, D(4), ((const int64_t[]){1, 2, 2, 1}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(5, 6), ((const float[]){
		0, 0, 0, 1, 2, 2, 0, 0, 0, 1, 2, 2, 3, 3, 3, 4, 5, 5, 3, 3, 3, 4, 5, 5, 3, 3, 3, 4, 5, 5}), 1e-05);
	kt_end();

	/* Pad wrap */
	kt_begin("Pad", "", 19);
	kt_attr_string("mode", "wrap");
	kt_input(OX_FLOAT, 2, D(2, 3), ((const float[]){0, 1, 2, 3, 4, 5}));
	kt_input(OX_INT64, 1, D(4), ((const int64_t[]){1, 2, 1, 2}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(4, 7), ((const float[]){
		4, 5, 3, 4, 5, 3, 4, 1, 2, 0, 1, 2, 0, 1, 4, 5, 3, 4, 5, 3, 4, 1, 2, 0, 1, 2, 0, 1}), 1e-05);
	kt_end();

	/* Pad axes input */
	kt_begin("Pad", "", 18);
	kt_input(OX_FLOAT, 3, D(2, 3, 2), ((const float[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){1, 1}));
	kt_input(OX_FLOAT, 1, D(1), ((const float[]){-1}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){-2}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 5, 2), ((const float[]){-1, -1, 0, 1, 2, 3, 4, 5, -1, -1, -1, -1, 6, 7, 8, 9, 10, 11, -1, -1}), 1e-05);
	kt_end();

	/* Pad opset 2 attribute */
	kt_begin("Pad", "", 2);
	kt_attr_ints("pads", 4, I64(0, 1, 0, 1));
	kt_attr_float("value", 3.0f);
	kt_input(OX_FLOAT, 2, D(2, 2), ((const float[]){0, 1, 2, 3}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 4), ((const float[]){3, 0, 1, 3, 3, 2, 3, 3}), 1e-05);
	kt_end();

	/* Compress axis */
	kt_begin("Compress", "", 11);
	kt_attr_int("axis", 1);
	kt_input(OX_FLOAT, 2, D(2, 4), ((const float[]){0, 1, 2, 3, 4, 5, 6, 7}));
	kt_input(OX_BOOL, 1, D(3), ((const uint8_t[]){1, 0, 1}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 2), ((const float[]){0, 2, 4, 6}), 1e-05);
	kt_end();

	/* Compress flattened */
	kt_begin("Compress", "", 11);
	kt_input(OX_FLOAT, 2, D(2, 3), ((const float[]){0, 1, 2, 3, 4, 5}));
	kt_input(OX_BOOL, 1, D(6), ((const uint8_t[]){0, 1, 1, 0, 0, 1}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 1, D(3), ((const float[]){1, 2, 5}), 1e-05);
	kt_end();

	/* Trilu upper k=1 */
	kt_begin("Trilu", "", 14);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){1}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 3, 4), ((const float[]){0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 11, 0, 13, 14, 15, 0, 0, 18, 19, 0, 0, 0, 23}), 1e-05);
	kt_end();

	/* Trilu lower k=-1 */
	kt_begin("Trilu", "", 14);
	kt_attr_int("upper", 0);
	kt_input(OX_FLOAT, 2, D(4, 3), ((const float[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){-1}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(4, 3), ((const float[]){0, 0, 0, 3, 0, 0, 6, 7, 0, 9, 10, 11}), 1e-05);
	kt_end();

	/* ReverseSequence time major */
	kt_begin("ReverseSequence", "", 10);
	kt_attr_int("batch_axis", 1);
	kt_attr_int("time_axis", 0);
	kt_input(OX_FLOAT, 3, D(4, 3, 2), ((const float[]){
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}));
	kt_input(OX_INT64, 1, D(3), ((const int64_t[]){4, 2, 1}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(4, 3, 2), ((const float[]){
		18, 19, 8, 9, 4, 5, 12, 13, 2, 3, 10, 11, 6, 7, 14, 15, 16, 17, 0, 1, 20, 21, 22, 23}), 1e-05);
	kt_end();

	/* ReverseSequence batch major */
	kt_begin("ReverseSequence", "", 10);
	kt_attr_int("batch_axis", 0);
	kt_attr_int("time_axis", 1);
	kt_input(OX_FLOAT, 2, D(2, 4), ((const float[]){0, 1, 2, 3, 4, 5, 6, 7}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){3, 1}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 4), ((const float[]){2, 1, 0, 3, 4, 5, 6, 7}), 1e-05);
	kt_end();

	/* Gather axis 0 */
	kt_begin("Gather", "", 13);
	kt_input(OX_FLOAT, 2, D(5, 3), ((const float[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}));
	kt_input(OX_INT64, 1, D(4), ((const int64_t[]){4, -1, 0, 2}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(4, 3), ((const float[]){12, 13, 14, 12, 13, 14, 0, 1, 2, 6, 7, 8}), 1e-05);
	kt_end();

	/* Gather axis 1, 2-D indices */
	kt_begin("Gather", "", 13);
	kt_attr_int("axis", 1);
	kt_input(OX_FLOAT, 3, D(2, 4, 2), ((const float[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
	kt_input(OX_INT32, 2, D(2, 2), ((const int32_t[]){0, 3, -2, 1}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 4, D(2, 2, 2, 2), ((const float[]){0, 1, 6, 7, 4, 5, 2, 3, 8, 9, 14, 15, 12, 13, 10, 11}), 1e-05);
	kt_end();

	/* Gather scalar index */
	kt_begin("Gather", "", 13);
	kt_attr_int("axis", 0);
	kt_input(OX_INT64, 2, D(3, 2), ((const int64_t[]){0, 1, 2, 3, 4, 5}));
	kt_input(OX_INT64, 0, NULL, ((const int64_t[]){1}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_INT64, 1, D(2), ((const int64_t[]){2, 3}), 0);
	kt_end();

	/* GatherElements */
	kt_begin("GatherElements", "", 13);
	kt_attr_int("axis", 1);
	kt_input(OX_FLOAT, 2, D(3, 3), ((const float[]){0, 1, 2, 3, 4, 5, 6, 7, 8}));
	kt_input(OX_INT64, 2, D(3, 2), ((const int64_t[]){1, 0, 2, -1, 0, 0}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(3, 2), ((const float[]){1, 0, 5, 5, 6, 6}), 1e-05);
	kt_end();

	/* GatherND batch_dims 1 */
	kt_begin("GatherND", "", 13);
	kt_attr_int("batch_dims", 1);
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}));
	kt_input(OX_INT64, 3, D(2, 2, 1), ((const int64_t[]){1, 0, 2, 1}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(2, 2, 4), ((const float[]){4, 5, 6, 7, 0, 1, 2, 3, 20, 21, 22, 23, 16, 17, 18, 19}), 1e-05);
	kt_end();

	/* GatherND full index */
	kt_begin("GatherND", "", 13);
	kt_input(OX_FLOAT, 2, D(2, 3), ((const float[]){0, 1, 2, 3, 4, 5}));
	kt_input(OX_INT64, 2, D(2, 2), ((const int64_t[]){1, 2, 0, -1}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 1, D(2), ((const float[]){5, 2}), 1e-05);
	kt_end();

	/* ScatterElements add */
	kt_begin("ScatterElements", "", 18);
	kt_attr_int("axis", 1);
	kt_attr_string("reduction", "add");
	kt_input(OX_FLOAT, 2, D(2, 4), ((const float[]){0, 1, 2, 3, 4, 5, 6, 7}));
	kt_input(OX_INT64, 2, D(2, 2), ((const int64_t[]){1, 1, 3, 0}));
	kt_input(OX_FLOAT, 2, D(2, 2), ((const float[]){1, 2, 3, 4}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 4), ((const float[]){0, 4, 2, 3, 8, 5, 6, 10}), 1e-05);
	kt_end();

	/* ScatterElements none */
	kt_begin("ScatterElements", "", 13);
	kt_attr_int("axis", 0);
	kt_input(OX_FLOAT, 2, D(3, 2), ((const float[]){0, 1, 2, 3, 4, 5}));
	kt_input(OX_INT64, 2, D(1, 2), ((const int64_t[]){2, 0}));
	kt_input(OX_FLOAT, 2, D(1, 2), ((const float[]){-1, -2}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(3, 2), ((const float[]){0, -2, 2, 3, -1, 5}), 1e-05);
	kt_end();

	/* ScatterElements max int32 */
	kt_begin("ScatterElements", "", 18);
	kt_attr_int("axis", 0);
	kt_attr_string("reduction", "max");
	kt_input(OX_INT32, 2, D(3, 2), ((const int32_t[]){0, 1, 2, 3, 4, 5}));
	kt_input(OX_INT64, 2, D(2, 2), ((const int64_t[]){2, 0, 2, 0}));
	kt_input(OX_INT32, 2, D(2, 2), ((const int32_t[]){1, 9, 7, -1}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_INT32, 2, D(3, 2), ((const int32_t[]){0, 9, 2, 3, 7, 5}), 0);
	kt_end();

	/* ScatterND mul */
	kt_begin("ScatterND", "", 18);
	kt_attr_string("reduction", "mul");
	kt_input(OX_FLOAT, 2, D(3, 2), ((const float[]){1, 2, 3, 4, 5, 6}));
	kt_input(OX_INT64, 2, D(2, 1), ((const int64_t[]){1, 1}));
	kt_input(OX_FLOAT, 2, D(2, 2), ((const float[]){2, 3, 4, 5}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(3, 2), ((const float[]){1, 2, 24, 60, 5, 6}), 1e-05);
	kt_end();

	/* ScatterND element */
	kt_begin("ScatterND", "", 13);
	kt_input(OX_FLOAT, 2, D(2, 3), ((const float[]){0, 1, 2, 3, 4, 5}));
	kt_input(OX_INT64, 2, D(2, 2), ((const int64_t[]){0, 2, 1, 0}));
	kt_input(OX_FLOAT, 1, D(2), ((const float[]){-1, -2}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 3), ((const float[]){0, 1, -1, -2, 4, 5}), 1e-05);
	kt_end();

	/* OneHot axis -1 */
	kt_begin("OneHot", "", 11);
	kt_input(OX_INT64, 1, D(4), ((const int64_t[]){0, 2, -1, 3}));
	kt_input(OX_INT64, 0, NULL, ((const int64_t[]){4}));
	kt_input(OX_FLOAT, 1, D(2), ((const float[]){0, 1}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(4, 4), ((const float[]){1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1}), 1e-05);
	kt_end();

	/* NonZero */
	kt_begin("NonZero", "", 13);
	kt_input(OX_INT32, 2, D(2, 3), ((const int32_t[]){1, 0, 3, 0, 0, 2}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_INT64, 2, D(2, 3), ((const int64_t[]){0, 0, 1, 0, 2, 2}), 0);
	kt_end();

	/* TopK largest */
	kt_begin("TopK", "", 11);
	kt_attr_int("axis", 1);
	kt_input(OX_FLOAT, 2, D(2, 4), ((const float[]){3, 1, 3, 2, 0, 5, 5, -1}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){3}));
	kt_run(TENSOR, 2);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 3), ((const float[]){3, 3, 2, 5, 5, 0}), 1e-05);
	kt_expect_values(1, OX_INT64, 2, D(2, 3), ((const int64_t[]){0, 2, 3, 1, 2, 0}), 0);
	kt_end();

	/* TopK smallest axis 0 */
	kt_begin("TopK", "", 11);
	kt_attr_int("axis", 0);
	kt_attr_int("largest", 0);
	kt_input(OX_INT64, 2, D(3, 2), ((const int64_t[]){3, 1, 1, 1, 2, 0}));
	kt_input(OX_INT64, 1, D(1), ((const int64_t[]){2}));
	kt_run(TENSOR, 2);
	kt_expect_values(0, OX_INT64, 2, D(2, 2), ((const int64_t[]){1, 0, 2, 1}), 0);
	kt_expect_values(1, OX_INT64, 2, D(2, 2), ((const int64_t[]){1, 2, 2, 0}), 0);
	kt_end();

	/* Unique sorted flat */
	kt_begin("Unique", "", 11);
	kt_input(OX_FLOAT, 1, D(6), ((const float[]){2, 1, 1, 3, 4, 3}));
	kt_run(TENSOR, 4);
	kt_expect_values(0, OX_FLOAT, 1, D(4), ((const float[]){1, 2, 3, 4}), 1e-05);
	kt_expect_values(1, OX_INT64, 1, D(4), ((const int64_t[]){1, 0, 3, 4}), 0);
	kt_expect_values(2, OX_INT64, 1, D(6), ((const int64_t[]){1, 0, 0, 2, 3, 2}), 0);
	kt_expect_values(3, OX_INT64, 1, D(4), ((const int64_t[]){2, 1, 2, 1}), 0);
	kt_end();

	/* Unique unsorted */
	kt_begin("Unique", "", 11);
	kt_attr_int("sorted", 0);
	kt_input(OX_INT64, 1, D(6), ((const int64_t[]){2, 1, 1, 3, 4, 3}));
	kt_run(TENSOR, 4);
	kt_expect_values(0, OX_INT64, 1, D(4), ((const int64_t[]){2, 1, 3, 4}), 0);
	kt_expect_values(1, OX_INT64, 1, D(4), ((const int64_t[]){0, 1, 3, 4}), 0);
	kt_expect_values(2, OX_INT64, 1, D(6), ((const int64_t[]){0, 1, 1, 2, 3, 2}), 0);
	kt_expect_values(3, OX_INT64, 1, D(4), ((const int64_t[]){1, 2, 2, 1}), 0);
	kt_end();

	/* Unique axis 0 */
	kt_begin("Unique", "", 11);
	kt_attr_int("axis", 0);
	kt_input(OX_FLOAT, 2, D(3, 3), ((const float[]){1, 0, 0, 1, 0, 0, 2, 3, 4}));
	kt_run(TENSOR, 4);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 3), ((const float[]){1, 0, 0, 2, 3, 4}), 1e-05);
	kt_expect_values(1, OX_INT64, 1, D(2), ((const int64_t[]){0, 2}), 0);
	kt_expect_values(2, OX_INT64, 1, D(3), ((const int64_t[]){0, 0, 1}), 0);
	kt_expect_values(3, OX_INT64, 1, D(2), ((const int64_t[]){2, 1}), 0);
	kt_end();

	/* CumSum */
	kt_begin("CumSum", "", 14);
	kt_input(OX_FLOAT, 2, D(2, 3), ((const float[]){0, 1, 2, 3, 4, 5}));
	kt_input(OX_INT32, 0, NULL, ((const int32_t[]){1}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 3), ((const float[]){0, 1, 3, 3, 7, 12}), 1e-05);
	kt_end();

	/* CumSum exclusive reverse */
	kt_begin("CumSum", "", 14);
	kt_attr_int("exclusive", 1);
	kt_attr_int("reverse", 1);
	kt_input(OX_INT64, 2, D(3, 2), ((const int64_t[]){0, 1, 2, 3, 4, 5}));
	kt_input(OX_INT64, 0, NULL, ((const int64_t[]){0}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_INT64, 2, D(3, 2), ((const int64_t[]){6, 8, 4, 5, 0, 0}), 0);
	kt_end();

	/* CumSum double axis -1 */
	kt_begin("CumSum", "", 14);
	kt_input(OX_DOUBLE, 2, D(2, 3), ((const double[]){0, 1, 2, 3, 4, 5}));
	kt_input(OX_INT64, 0, NULL, ((const int64_t[]){-1}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_DOUBLE, 2, D(2, 3), ((const double[]){0, 1, 3, 3, 7, 12}), 1e-05);
	kt_end();

	/* Resize nearest 2x round_prefer_floor half_pixel */
	kt_begin("Resize", "", 19);
	kt_attr_string("mode", "nearest");
	kt_input(OX_FLOAT, 4, D(1, 1, 2, 2), ((const float[]){0, 1, 2, 3}));
	kt_input_none();
	kt_input(OX_FLOAT, 1, D(4), ((const float[]){1, 1, 2, 3}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 4, D(1, 1, 4, 6), ((const float[]){0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 2, 2, 2, 3, 3, 3}), 1e-05);
	kt_end();

	/* Resize nearest sizes ceil align_corners */
	kt_begin("Resize", "", 19);
	kt_attr_string("mode", "nearest");
	kt_attr_string("nearest_mode", "ceil");
	kt_attr_string("coordinate_transformation_mode", "align_corners");
	kt_input(OX_FLOAT, 4, D(1, 1, 3, 3), ((const float[]){0, 1, 2, 3, 4, 5, 6, 7, 8}));
	kt_input_none();
	kt_input_none();
	kt_input(OX_INT64, 1, D(4), ((const int64_t[]){1, 1, 5, 4}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 4, D(1, 1, 5, 4), ((const float[]){0, 1, 2, 2, 3, 4, 5, 5, 3, 4, 5, 5, 6, 7, 8, 8, 6, 7, 8, 8}), 1e-05);
	kt_end();

	/* Resize nearest floor asymmetric down */
	kt_begin("Resize", "", 19);
	kt_attr_string("mode", "nearest");
	kt_attr_string("nearest_mode", "floor");
	kt_attr_string("coordinate_transformation_mode", "asymmetric");
	kt_input(OX_FLOAT, 4, D(1, 1, 4, 4), ((const float[]){
		-1.103f, -0.725f, -0.782f, 0.267f, -0.249f, 0.126f, 0.843f, 0.858f, 0.475f, -0.451f,
		-0.755f, -0.815f, -0.344f, -0.051f, -0.972f, -1.134f}));
	kt_input_none();
	kt_input(OX_FLOAT, 1, D(4), ((const float[]){1, 1, 0.6f, 0.6f}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 4, D(1, 1, 2, 2), ((const float[]){-1.103f, -0.725f, -0.249f, 0.126f}), 1e-05);
	kt_end();

	/* Resize nearest round_prefer_ceil pytorch_half_pixel */
	kt_begin("Resize", "", 19);
	kt_attr_string("mode", "nearest");
	kt_attr_string("nearest_mode", "round_prefer_ceil");
	kt_attr_string("coordinate_transformation_mode", "pytorch_half_pixel");
	kt_input(OX_FLOAT, 4, D(1, 1, 4, 4), ((const float[]){
		-1.103f, -0.725f, -0.782f, 0.267f, -0.249f, 0.126f, 0.843f, 0.858f, 0.475f, -0.451f,
		-0.755f, -0.815f, -0.344f, -0.051f, -0.972f, -1.134f}));
	kt_input_none();
	kt_input_none();
	kt_input(OX_INT64, 1, D(4), ((const int64_t[]){1, 1, 3, 7}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 4, D(1, 1, 3, 7), ((const float[]){
		-1.103f, -1.103f, -0.725f, -0.782f, -0.782f, 0.267f, 0.267f, 0.475f, 0.475f, -0.451f,
		-0.755f, -0.755f, -0.815f, -0.815f, -0.344f, -0.344f, -0.051f, -0.972f, -0.972f,
		-1.134f, -1.134f}), 1e-05);
	kt_end();

	/* Resize linear half_pixel up */
	kt_begin("Resize", "", 19);
	kt_attr_string("mode", "linear");
	kt_input(OX_FLOAT, 4, D(1, 1, 4, 4), ((const float[]){
		-1.103f, -0.725f, -0.782f, 0.267f, -0.249f, 0.126f, 0.843f, 0.858f, 0.475f, -0.451f,
		-0.755f, -0.815f, -0.344f, -0.051f, -0.972f, -1.134f}));
	kt_input_none();
	kt_input(OX_FLOAT, 1, D(4), ((const float[]){1, 1, 1.5f, 2}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 4, D(1, 1, 6, 8), ((const float[]){
		-1.103f, -1.0085001f, -0.8195f, -0.73925f, -0.76775f, -0.51975f, 0.004749991f, 0.267f,
		-0.676f, -0.581875f, -0.39362502f, -0.21700001f, -0.05200001f, 0.1635f, 0.42949998f,
		0.5625f, -0.12833333f, -0.08879167f, -0.009708333f, 0.16654167f, 0.43995833f,
		0.57729167f, 0.57854164f, 0.57916665f, 0.35433334f, 0.17704166f, -0.17754167f,
		-0.38829166f, -0.45520833f, -0.5005417f, -0.5242917f, -0.53616667f, 0.06549999f,
		-0.013625007f, -0.171875f, -0.404125f, -0.710375f, -0.89125f, -0.94675f, -0.97449994f,
		-0.344f, -0.27075002f, -0.12425f, -0.28125f, -0.74175f, -1.0125f, -1.0934999f, -1.134f}), 1e-05);
	kt_end();

	/* Resize linear align_corners down */
	kt_begin("Resize", "", 19);
	kt_attr_string("mode", "linear");
	kt_attr_string("coordinate_transformation_mode", "align_corners");
	kt_input(OX_FLOAT, 4, D(1, 1, 4, 4), ((const float[]){
		-1.103f, -0.725f, -0.782f, 0.267f, -0.249f, 0.126f, 0.843f, 0.858f, 0.475f, -0.451f,
		-0.755f, -0.815f, -0.344f, -0.051f, -0.972f, -1.134f}));
	kt_input_none();
	kt_input(OX_FLOAT, 1, D(4), ((const float[]){1, 1, 0.75f, 0.5f}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 4, D(1, 1, 3, 2), ((const float[]){-1.103f, 0.267f, 0.113f, 0.021499991f, -0.344f, -1.134f}), 1e-05);
	kt_end();

	/* Resize linear half_pixel_symmetric */
	kt_begin("Resize", "", 19);
	kt_attr_string("mode", "linear");
	kt_attr_string("coordinate_transformation_mode", "half_pixel_symmetric");
	kt_input(OX_FLOAT, 4, D(1, 1, 4, 4), ((const float[]){
		-1.103f, -0.725f, -0.782f, 0.267f, -0.249f, 0.126f, 0.843f, 0.858f, 0.475f, -0.451f,
		-0.755f, -0.815f, -0.344f, -0.051f, -0.972f, -1.134f}));
	kt_input_none();
	kt_input(OX_FLOAT, 1, D(4), ((const float[]){1, 1, 1.7f, 0.8f}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 4, D(1, 1, 6, 3), ((const float[]){
		-0.9834044f, -0.7170882f, 0.0297353f, -0.48149264f, 0.011147083f, 0.5294412f,
		-0.073154405f, 0.26060292f, 0.5136691f, 0.16140439f, -0.37910295f, -0.4594191f,
		0.046874996f, -0.5680147f, -0.91222054f, -0.25562498f, -0.5141912f, -1.0848676f}), 1e-05);
	kt_end();

	/* Resize cubic half_pixel */
	kt_begin("Resize", "", 19);
	kt_attr_string("mode", "cubic");
	kt_input(OX_FLOAT, 4, D(1, 1, 4, 4), ((const float[]){
		-1.103f, -0.725f, -0.782f, 0.267f, -0.249f, 0.126f, 0.843f, 0.858f, 0.475f, -0.451f,
		-0.755f, -0.815f, -0.344f, -0.051f, -0.972f, -1.134f}));
	kt_input_none();
	kt_input(OX_FLOAT, 1, D(4), ((const float[]){1, 1, 1.5f, 1.25f}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 4, D(1, 1, 6, 5), ((const float[]){
		-1.200112f, -0.8907151f, -0.93226224f, -0.619038f, 0.28487757f, -0.7741571f,
		-0.43141448f, -0.036349617f, 0.37763762f, 0.75209004f, -0.06687867f, -0.007918963f,
		0.4577947f, 0.8065995f, 0.66964555f, 0.5083552f, -0.1423668f, -0.50713766f,
		-0.50485843f, -0.54048574f, 0.16001199f, -0.104680106f, -0.68924415f, -1.1243244f,
		-1.1385143f, -0.43932208f, -0.020102546f, -0.4501509f, -1.1459507f, -1.172071f}), 1e-05);
	kt_end();

	/* Resize cubic exclude_outside a=-0.5 asymmetric */
	kt_begin("Resize", "", 19);
	kt_attr_string("mode", "cubic");
	kt_attr_float("cubic_coeff_a", -0.5f);
	kt_attr_int("exclude_outside", 1);
	kt_attr_string("coordinate_transformation_mode", "asymmetric");
	kt_input(OX_FLOAT, 4, D(1, 1, 4, 4), ((const float[]){
		-1.103f, -0.725f, -0.782f, 0.267f, -0.249f, 0.126f, 0.843f, 0.858f, 0.475f, -0.451f,
		-0.755f, -0.815f, -0.344f, -0.051f, -0.972f, -1.134f}));
	kt_input_none();
	kt_input(OX_FLOAT, 1, D(4), ((const float[]){1, 1, 0.8f, 2}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 4, D(1, 1, 3, 8), ((const float[]){
		-1.103f, -0.92176473f, -0.725f, -0.7954375f, -0.782f, -0.23f, 0.267f, 0.398125f,
		-0.022695309f, -0.018158086f, 0.059257817f, 0.35803515f, 0.63774997f, 0.6344306f,
		0.5672031f, 0.5583848f, 0.08400006f, -0.043453276f, -0.27317652f, -0.63345224f,
		-0.9638823f, -1.0672007f, -1.0822941f, -1.0970955f}), 1e-05);
	kt_end();

	/* Resize linear antialias down */
	kt_begin("Resize", "", 19);
	kt_attr_string("mode", "linear");
	kt_attr_int("antialias", 1);
	kt_input(OX_FLOAT, 4, D(1, 1, 8, 8), ((const float[]){
		-0.432f, -1.13f, 0.674f, -1.108f, 2.014f, 0.924f, -0.359f, 0.571f, 1.612f, 2.834f,
		-0.923f, 1.065f, 0.518f, -0.28f, 1.092f, 0.507f, 1.076f, -0.526f, -0.002f, 0.395f,
		0.02f, 0.017f, -0.768f, 0.126f, 0.188f, -0.061f, -0.015f, 0.696f, -0.659f, 0.697f,
		-0.153f, 0.056f, -0.191f, 0.899f, 0.761f, 0.006f, -0.439f, 1.856f, 0.539f, -1.146f,
		-0.004f, -0.112f, 0.722f, -0.227f, -0.739f, 1.338f, -1.993f, -1.414f, -0.523f, -0.514f,
		-0.127f, -0.011f, 0.998f, -1.52f, 2.984f, 0.611f, -0.773f, -0.571f, -0.483f, -2.232f,
		0.401f, -1.111f, -0.542f, -1.096f}));
	kt_input_none();
	kt_input(OX_FLOAT, 1, D(4), ((const float[]){1, 1, 0.5f, 0.4f}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 4, D(1, 1, 4, 3), ((const float[]){
		0.358635f, 0.35766f, 0.411175f, 0.365785f, 0.191455f, 0.04883001f, 0.14215499f,
		0.137155f, -0.020644967f, -0.496175f, -0.45285f, -0.11377999f}), 1e-05);
	kt_end();

	/* Resize cubic antialias down */
	kt_begin("Resize", "", 19);
	kt_attr_string("mode", "cubic");
	kt_attr_int("antialias", 1);
	kt_input(OX_FLOAT, 4, D(1, 1, 8, 8), ((const float[]){
		-0.432f, -1.13f, 0.674f, -1.108f, 2.014f, 0.924f, -0.359f, 0.571f, 1.612f, 2.834f,
		-0.923f, 1.065f, 0.518f, -0.28f, 1.092f, 0.507f, 1.076f, -0.526f, -0.002f, 0.395f,
		0.02f, 0.017f, -0.768f, 0.126f, 0.188f, -0.061f, -0.015f, 0.696f, -0.659f, 0.697f,
		-0.153f, 0.056f, -0.191f, 0.899f, 0.761f, 0.006f, -0.439f, 1.856f, 0.539f, -1.146f,
		-0.004f, -0.112f, 0.722f, -0.227f, -0.739f, 1.338f, -1.993f, -1.414f, -0.523f, -0.514f,
		-0.127f, -0.011f, 0.998f, -1.52f, 2.984f, 0.611f, -0.773f, -0.571f, -0.483f, -2.232f,
		0.401f, -1.111f, -0.542f, -1.096f}));
	kt_input_none();
	kt_input(OX_FLOAT, 1, D(4), ((const float[]){1, 1, 0.6f, 0.3f}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 4, D(1, 1, 4, 2), ((const float[]){
		0.29492387f, 0.5273954f, 0.52791214f, -0.024089633f, 0.22101739f, 0.28193173f,
		-0.015478583f, 0.16775753f}), 1e-05);
	kt_end();

	/* Resize tf_crop_and_resize linear with extrapolation */
	kt_begin("Resize", "", 19);
	kt_attr_string("mode", "linear");
	kt_attr_string("coordinate_transformation_mode", "tf_crop_and_resize");
	kt_attr_float("extrapolation_value", 10.0f);
	kt_input(OX_FLOAT, 4, D(1, 1, 4, 4), ((const float[]){
		-1.103f, -0.725f, -0.782f, 0.267f, -0.249f, 0.126f, 0.843f, 0.858f, 0.475f, -0.451f,
		-0.755f, -0.815f, -0.344f, -0.051f, -0.972f, -1.134f}));
	kt_input(OX_FLOAT, 1, D(8), ((const float[]){0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f}));
	kt_input_none();
	kt_input(OX_INT64, 1, D(4), ((const int64_t[]){1, 1, 3, 3}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 4, D(1, 1, 3, 3), ((const float[]){0.42083997f, 10, 10, -0.73164004f, 10, 10, 10, 10, 10}), 1e-05);
	kt_end();

	/* Resize tf_crop_and_resize nearest axes */
	kt_begin("Resize", "", 19);
	kt_attr_string("mode", "nearest");
	kt_attr_string("coordinate_transformation_mode", "tf_crop_and_resize");
	kt_attr_ints("axes", 2, I64(3, 2));
	kt_input(OX_FLOAT, 4, D(1, 1, 4, 4), ((const float[]){
		-1.103f, -0.725f, -0.782f, 0.267f, -0.249f, 0.126f, 0.843f, 0.858f, 0.475f, -0.451f,
		-0.755f, -0.815f, -0.344f, -0.051f, -0.972f, -1.134f}));
	kt_input(OX_FLOAT, 1, D(4), ((const float[]){0.1f, 0.2f, 0.9f, 0.8f}));
	kt_input_none();
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){3, 3}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 4, D(1, 1, 3, 3), ((const float[]){-0.249f, 0.126f, 0.858f, 0.475f, -0.451f, -0.815f, 0.475f, -0.451f, -0.815f}), 1e-05);
	kt_end();

	/* Resize sizes not_larger */
	kt_begin("Resize", "", 19);
	kt_attr_string("mode", "linear");
	kt_attr_string("keep_aspect_ratio_policy", "not_larger");
	kt_attr_ints("axes", 2, I64(2, 3));
	kt_input(OX_FLOAT, 4, D(1, 1, 4, 4), ((const float[]){
		-1.103f, -0.725f, -0.782f, 0.267f, -0.249f, 0.126f, 0.843f, 0.858f, 0.475f, -0.451f,
		-0.755f, -0.815f, -0.344f, -0.051f, -0.972f, -1.134f}));
	kt_input_none();
	kt_input_none();
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){7, 3}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 4, D(1, 1, 3, 3), ((const float[]){
		-0.89775f, -0.5471667f, 0.21938887f, 0.06708333f, -0.05925f, 0.025249993f, -0.19252779f,
		-0.52675f, -1.0566666f}), 1e-05);
	kt_end();

	/* Resize sizes not_smaller nearest */
	kt_begin("Resize", "", 19);
	kt_attr_string("mode", "nearest");
	kt_attr_string("keep_aspect_ratio_policy", "not_smaller");
	kt_attr_ints("axes", 2, I64(2, 3));
	kt_input(OX_FLOAT, 4, D(1, 1, 4, 4), ((const float[]){
		-1.103f, -0.725f, -0.782f, 0.267f, -0.249f, 0.126f, 0.843f, 0.858f, 0.475f, -0.451f,
		-0.755f, -0.815f, -0.344f, -0.051f, -0.972f, -1.134f}));
	kt_input_none();
	kt_input_none();
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){3, 2}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 4, D(1, 1, 3, 3), ((const float[]){-1.103f, -0.725f, 0.267f, -0.249f, 0.126f, 0.858f, -0.344f, -0.051f, -1.134f}), 1e-05);
	kt_end();

	/* Resize 3-D linear over all axes */
	kt_begin("Resize", "", 19);
	kt_attr_string("mode", "linear");
	kt_input(OX_FLOAT, 3, D(2, 3, 4), ((const float[]){
		-0.803f, 0.243f, -1.656f, 0.656f, 1.143f, -0.453f, 0.43f, 0.251f, -0.394f, -0.862f,
		-2.033f, 1.41f, -0.048f, 2.522f, 0.826f, 0.278f, -0.657f, 1.392f, -0.506f, 1.57f,
		-0.398f, 0.186f, -1.523f, 2.343f}));
	kt_input_none();
	kt_input(OX_FLOAT, 1, D(3), ((const float[]){2, 0.5f, 1.5f}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 3, D(4, 1, 6), ((const float[]){
		0.17000002f, 0.032500006f, -0.18966667f, -0.52833337f, -0.07975f, 0.4535f, 0.03937501f,
		0.22493751f, 0.272125f, -0.281375f, 0.0756875f, 0.57112503f, -0.221875f, 0.6098125f,
		1.1957084f, 0.21254167f, 0.3865625f, 0.806375f, -0.3525f, 0.80225f, 1.6575f,
		0.45949998f, 0.542f, 0.924f}), 1e-05);
	kt_end();

	/* Resize linear uint8 rounds */
	kt_begin("Resize", "", 19);
	kt_attr_string("mode", "linear");
	kt_input(OX_UINT8, 4, D(1, 1, 2, 2), ((const uint8_t[]){0, 255, 10, 20}));
	kt_input_none();
	kt_input(OX_FLOAT, 1, D(4), ((const float[]){1, 1, 2, 1.5f}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_UINT8, 4, D(1, 1, 4, 3), ((const uint8_t[]){0, 128, 255, 2, 99, 196, 8, 43, 79, 10, 15, 20}), 0);
	kt_end();

	/* Upsample opset 9 nearest */
	kt_begin("Upsample", "", 9);
	kt_attr_string("mode", "nearest");
	kt_input(OX_FLOAT, 4, D(1, 1, 2, 2), ((const float[]){0, 1, 2, 3}));
	kt_input(OX_FLOAT, 1, D(4), ((const float[]){1, 1, 2, 3}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 4, D(1, 1, 4, 6), ((const float[]){0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 2, 2, 2, 3, 3, 3}), 1e-05);
	kt_end();

	/* Col2Im */
	kt_begin("Col2Im", "", 18);
	kt_attr_ints("strides", 2, I64(1, 1));
	kt_input(OX_FLOAT, 3, D(1, 4, 6), ((const float[]){
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){3, 4}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){2, 2}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 4, D(1, 1, 3, 4), ((const float[]){0, 7, 9, 8, 15, 44, 48, 31, 15, 37, 39, 23}), 1e-05);
	kt_end();

	/* Col2Im pads strides */
	kt_begin("Col2Im", "", 18);
	kt_attr_ints("strides", 2, I64(2, 1));
	kt_attr_ints("pads", 4, I64(1, 0, 1, 1));
	kt_input(OX_FLOAT, 3, D(1, 6, 6), ((const float[]){
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
		24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){4, 3}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){2, 3}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 4, D(1, 1, 4, 3), ((const float[]){18, 43, 55, 2, 11, 23, 20, 47, 59, 4, 15, 27}), 1e-05);
	kt_end();

	/* Col2Im dilations */
	kt_begin("Col2Im", "", 18);
	kt_attr_ints("dilations", 2, I64(2, 1));
	kt_input(OX_FLOAT, 3, D(1, 4, 12), ((const float[]){
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
		24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45,
		46, 47}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){5, 5}));
	kt_input(OX_INT64, 1, D(2), ((const int64_t[]){2, 2}));
	kt_run(TENSOR, 1);
	kt_expect_values(0, OX_FLOAT, 4, D(1, 1, 5, 5), ((const float[]){
		0, 13, 15, 17, 15, 4, 21, 23, 25, 19, 32, 90, 94, 98, 62, 28, 69, 71, 73, 43, 32, 77,
		79, 81, 47}), 1e-05);
	kt_end();

	/* Dropout training with a seed */
	kt_begin("Dropout", "", 13);
	kt_attr_int("seed", 3);
	kt_input(OX_FLOAT, 2, D(3, 5), ((const float[]){
		-1.738f, -1.337f, -1.361f, -0.352f, -2.313f, -0.189f, -0.957f, 0.894f, 0.957f, 1.392f,
		0.767f, -0.053f, 0.86f, 1.505f, -0.654f}));
	kt_input(OX_FLOAT, 0, NULL, ((const float[]){0.4f}));
	kt_input(OX_BOOL, 0, NULL, ((const uint8_t[]){1}));
	kt_run(TENSOR, 2);
	kt_expect_values(0, OX_FLOAT, 2, D(3, 5), ((const float[]){
		-2.8966668f, -2.2283332f, -0.0f, -0.58666664f, -3.8549998f, -0.315f, -0.0f, 0, 0, 2.32f,
		0, -0.08833333f, 1.4333333f, 0, -1.0899999f}), 1e-05);
	kt_expect_values(1, OX_BOOL, 2, D(3, 5), ((const uint8_t[]){1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1, 1, 0, 1}), 0);
	kt_end();

	/* Dropout inference */
	kt_begin("Dropout", "", 13);
	kt_input(OX_FLOAT, 2, D(2, 3), ((const float[]){-0.802f, -1.324f, -0.248f, 0.42f, 1.136f, 0.11f}));
	kt_run(TENSOR, 2);
	kt_expect_values(0, OX_FLOAT, 2, D(2, 3), ((const float[]){-0.802f, -1.324f, -0.248f, 0.42f, 1.136f, 0.11f}), 1e-05);
	kt_expect_values(1, OX_BOOL, 2, D(2, 3), ((const uint8_t[]){1, 1, 1, 1, 1, 1}), 0);
	kt_end();
}

int
main(void)
{
	reference_cases();
	return kt_summary();
}
