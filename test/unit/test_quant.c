/*
 * test_quant.c
 *	  Unit tests of the quant family: QuantizeLinear, DequantizeLinear and
 *	  DynamicQuantizeLinear.
 *
 * The numbered cases were generated with the ONNX reference implementation
 * (onnx.reference, onnx 1.22) except the precision and output_dtype
 * (opset 23) cases, which it lacks, and the saturation cases (NaN,
 * infinities, 1e30), where its int32 cast wraps around: those follow the
 * ONNX formula in NumPy and agree with onnxruntime 1.32.
 * The hand-written tests after them cover attribute handling and error
 * reporting.
 */
#include "kernel_test.h"

/* QuantizeLinear uint8 per tensor, ties to even, saturation */
static void
case_0(void)
{
	static const float in0[] = {
		0.0f, 1.0f, 2.5f, 3.5f, -2.5f, 5.0f, 6.5f, 300.0f,
		-300.0f, 1.00000002e+30f, -INFINITY, INFINITY, 7.49989986f, 254.5f, 253.5f, -0.5f
	};
	static const int64_t in0_dims[] = {16};
	static const float in1[] = {1.0f};
	static const int64_t in1_dims[] = {0};
	static const uint8_t in2[] = {1};
	static const int64_t in2_dims[] = {0};
	static const uint8_t want0[] = {
		1, 2, 3, 5, 0, 6, 7, 255, 0, 255, 0, 255,
		8, 255, 255, 1
	};
	static const int64_t want0_dims[] = {16};

	kt_begin("QuantizeLinear", "", 10);
	kt.label = "QuantizeLinear uint8 per tensor, ties to even, saturation";
	kt_input(OX_FLOAT, 1, in0_dims, in0);
	kt_input(OX_FLOAT, 0, in1_dims, in1);
	kt_input(OX_UINT8, 0, in2_dims, in2);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_UINT8, 1, want0_dims, want0, 0);
	kt_end();
}

/* QuantizeLinear int8 per tensor, scale 0.5 */
static void
case_1(void)
{
	static const float in0[] = {
		0.0f, 1.0f, 2.5f, 3.5f, -2.5f, 5.0f, 6.5f, 300.0f,
		-300.0f, 1.00000002e+30f, -INFINITY, INFINITY, 7.49989986f, 254.5f, 253.5f, -0.5f
	};
	static const int64_t in0_dims[] = {16};
	static const float in1[] = {0.5f};
	static const int64_t in1_dims[] = {0};
	static const int8_t in2[] = {-3};
	static const int64_t in2_dims[] = {0};
	static const int8_t want0[] = {
		-3, -1, 2, 4, -8, 7, 10, 127, -128, 127, -128, 127,
		12, 127, 127, -4
	};
	static const int64_t want0_dims[] = {16};

	kt_begin("QuantizeLinear", "", 13);
	kt.label = "QuantizeLinear int8 per tensor, scale 0.5";
	kt_input(OX_FLOAT, 1, in0_dims, in0);
	kt_input(OX_FLOAT, 0, in1_dims, in1);
	kt_input(OX_INT8, 0, in2_dims, in2);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_INT8, 1, want0_dims, want0, 0);
	kt_end();
}

/* QuantizeLinear NaN goes to the low end */
static void
case_2(void)
{
	static const float in0[] = {NAN, 1.0f};
	static const int64_t in0_dims[] = {2};
	static const float in1[] = {1.0f};
	static const int64_t in1_dims[] = {0};
	static const int8_t in2[] = {-3};
	static const int64_t in2_dims[] = {0};
	static const int8_t want0[] = {-128, -2};
	static const int64_t want0_dims[] = {2};

	kt_begin("QuantizeLinear", "", 13);
	kt.label = "QuantizeLinear NaN goes to the low end";
	kt_input(OX_FLOAT, 1, in0_dims, in0);
	kt_input(OX_FLOAT, 0, in1_dims, in1);
	kt_input(OX_INT8, 0, in2_dims, in2);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_INT8, 1, want0_dims, want0, 0);
	kt_end();
}

/* QuantizeLinear per axis 1, int8 */
static void
case_3(void)
{
	static const float in0[] = {
		102.045959f, -127.783249f, 20.9049416f, -28.3884811f, -22.6324654f, -10.7798586f, -100.999306f, -11.5966187f,
		-43.2606544f, 166.149979f, 11.2893305f, -17.6315403f, -14.0643711f, -33.402317f, -52.7575264f, -19.5400486f,
		24.0972691f, -11.92768f, 47.8879356f, -9.99010658f, 1.21297824f, 77.2910461f, 27.2552757f, -25.2614365f
	};
	static const int64_t in0_dims[] = {2, 3, 4};
	static const float in1[] = {0.5f, 1.0f, 2.0f};
	static const int64_t in1_dims[] = {3};
	static const int8_t in2[] = {-1, 0, 3};
	static const int64_t in2_dims[] = {3};
	static const int8_t want0[] = {
		127, -128, 41, -58, -23, -11, -101, -12, -19, 86, 9, -6,
		-29, -68, -107, -40, 24, -12, 48, -10, 4, 42, 17, -10
	};
	static const int64_t want0_dims[] = {2, 3, 4};

	kt_begin("QuantizeLinear", "", 13);
	kt.label = "QuantizeLinear per axis 1, int8";
	kt_attr_int("axis", 1);
	kt_input(OX_FLOAT, 3, in0_dims, in0);
	kt_input(OX_FLOAT, 1, in1_dims, in1);
	kt_input(OX_INT8, 1, in2_dims, in2);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_INT8, 3, want0_dims, want0, 0);
	kt_end();
}

/* QuantizeLinear per axis -1 (last), uint8 */
static void
case_4(void)
{
	static const float in0[] = {
		102.045959f, -127.783249f, 20.9049416f, -28.3884811f, -22.6324654f, -10.7798586f, -100.999306f, -11.5966187f,
		-43.2606544f, 166.149979f, 11.2893305f, -17.6315403f, -14.0643711f, -33.402317f, -52.7575264f, -19.5400486f,
		24.0972691f, -11.92768f, 47.8879356f, -9.99010658f, 1.21297824f, 77.2910461f, 27.2552757f, -25.2614365f
	};
	static const int64_t in0_dims[] = {2, 3, 4};
	static const float in1[] = {0.5f, 1.0f, 2.0f, 0.25f};
	static const int64_t in1_dims[] = {4};
	static const uint8_t in2[] = {100, 128, 0, 255};
	static const int64_t in2_dims[] = {4};
	static const uint8_t want0[] = {
		255, 0, 10, 141, 55, 117, 0, 209, 13, 255, 6, 184,
		72, 95, 0, 177, 148, 116, 24, 215, 102, 205, 14, 154
	};
	static const int64_t want0_dims[] = {2, 3, 4};

	kt_begin("QuantizeLinear", "", 13);
	kt.label = "QuantizeLinear per axis -1 (last), uint8";
	kt_attr_int("axis", -1);
	kt_input(OX_FLOAT, 3, in0_dims, in0);
	kt_input(OX_FLOAT, 1, in1_dims, in1);
	kt_input(OX_UINT8, 1, in2_dims, in2);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_UINT8, 3, want0_dims, want0, 0);
	kt_end();
}

/* QuantizeLinear per axis 0, one-element scale is per tensor */
static void
case_5(void)
{
	static const float in0[] = {
		102.045959f, -127.783249f, 20.9049416f, -28.3884811f, -22.6324654f, -10.7798586f, -100.999306f, -11.5966187f,
		-43.2606544f, 166.149979f, 11.2893305f, -17.6315403f, -14.0643711f, -33.402317f, -52.7575264f, -19.5400486f,
		24.0972691f, -11.92768f, 47.8879356f, -9.99010658f, 1.21297824f, 77.2910461f, 27.2552757f, -25.2614365f
	};
	static const int64_t in0_dims[] = {2, 3, 4};
	static const float in1[] = {0.699999988f};
	static const int64_t in1_dims[] = {1};
	static const uint8_t in2[] = {5};
	static const int64_t in2_dims[] = {1};
	static const uint8_t want0[] = {
		151, 0, 35, 0, 0, 0, 0, 0, 0, 242, 21, 0,
		0, 0, 0, 0, 39, 0, 73, 0, 7, 115, 44, 0
	};
	static const int64_t want0_dims[] = {2, 3, 4};

	kt_begin("QuantizeLinear", "", 13);
	kt.label = "QuantizeLinear per axis 0, one-element scale is per tensor";
	kt_attr_int("axis", 0);
	kt_input(OX_FLOAT, 3, in0_dims, in0);
	kt_input(OX_FLOAT, 1, in1_dims, in1);
	kt_input(OX_UINT8, 1, in2_dims, in2);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_UINT8, 3, want0_dims, want0, 0);
	kt_end();
}

/* QuantizeLinear no zero point: uint8 */
static void
case_6(void)
{
	static const float in0[] = {
		102.045959f, -127.783249f, 20.9049416f, -28.3884811f, -22.6324654f, -10.7798586f, -100.999306f, -11.5966187f,
		-43.2606544f, 166.149979f, 11.2893305f, -17.6315403f, -14.0643711f, -33.402317f, -52.7575264f, -19.5400486f,
		24.0972691f, -11.92768f, 47.8879356f, -9.99010658f, 1.21297824f, 77.2910461f, 27.2552757f, -25.2614365f
	};
	static const int64_t in0_dims[] = {2, 3, 4};
	static const float in1[] = {0.300000012f};
	static const int64_t in1_dims[] = {0};
	static const uint8_t want0[] = {
		255, 0, 70, 0, 0, 0, 0, 0, 0, 255, 38, 0,
		0, 0, 0, 0, 80, 0, 160, 0, 4, 255, 91, 0
	};
	static const int64_t want0_dims[] = {2, 3, 4};

	kt_begin("QuantizeLinear", "", 13);
	kt.label = "QuantizeLinear no zero point: uint8";
	kt_input(OX_FLOAT, 3, in0_dims, in0);
	kt_input(OX_FLOAT, 0, in1_dims, in1);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_UINT8, 3, want0_dims, want0, 0);
	kt_end();
}

/* QuantizeLinear output_dtype int8 without zero point */
static void
case_7(void)
{
	static const float in0[] = {
		102.045959f, -127.783249f, 20.9049416f, -28.3884811f, -22.6324654f, -10.7798586f, -100.999306f, -11.5966187f,
		-43.2606544f, 166.149979f, 11.2893305f, -17.6315403f, -14.0643711f, -33.402317f, -52.7575264f, -19.5400486f,
		24.0972691f, -11.92768f, 47.8879356f, -9.99010658f, 1.21297824f, 77.2910461f, 27.2552757f, -25.2614365f
	};
	static const int64_t in0_dims[] = {2, 3, 4};
	static const float in1[] = {0.300000012f};
	static const int64_t in1_dims[] = {0};
	static const int8_t want0[] = {
		127, -128, 70, -95, -75, -36, -128, -39, -128, 127, 38, -59,
		-47, -111, -128, -65, 80, -40, 127, -33, 4, 127, 91, -84
	};
	static const int64_t want0_dims[] = {2, 3, 4};

	kt_begin("QuantizeLinear", "", 21);
	kt.label = "QuantizeLinear output_dtype int8 without zero point";
	kt_attr_int("output_dtype", 3);
	kt_input(OX_FLOAT, 3, in0_dims, in0);
	kt_input(OX_FLOAT, 0, in1_dims, in1);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_INT8, 3, want0_dims, want0, 0);
	kt_end();
}

/* QuantizeLinear output_dtype int16 without zero point */
static void
case_8(void)
{
	static const float in0[] = {
		102045.961f, -127783.25f, 20904.9414f, -28388.4805f, -22632.4648f, -10779.8584f, -100999.305f, -11596.6191f,
		-43260.6562f, 166149.984f, 11289.3301f, -17631.541f, -14064.3711f, -33402.3164f, -52757.5273f, -19540.0488f,
		24097.2695f, -11927.6797f, 47887.9375f, -9990.10645f, 1212.97827f, 77291.0469f, 27255.2754f, -25261.4355f
	};
	static const int64_t in0_dims[] = {2, 3, 4};
	static const float in1[] = {0.300000012f};
	static const int64_t in1_dims[] = {0};
	static const int16_t want0[] = {
		32767, -32768, 32767, -32768, -32768, -32768, -32768, -32768, -32768, 32767, 32767, -32768,
		-32768, -32768, -32768, -32768, 32767, -32768, 32767, -32768, 4043, 32767, 32767, -32768
	};
	static const int64_t want0_dims[] = {2, 3, 4};

	kt_begin("QuantizeLinear", "", 21);
	kt.label = "QuantizeLinear output_dtype int16 without zero point";
	kt_attr_int("output_dtype", 5);
	kt_input(OX_FLOAT, 3, in0_dims, in0);
	kt_input(OX_FLOAT, 0, in1_dims, in1);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_INT16, 3, want0_dims, want0, 0);
	kt_end();
}

/* QuantizeLinear uint16 */
static void
case_9(void)
{
	static const float in0[] = {
		102045.961f, -127783.25f, 20904.9414f, -28388.4805f, -22632.4648f, -10779.8584f, -100999.305f, -11596.6191f,
		-43260.6562f, 166149.984f, 11289.3301f, -17631.541f, -14064.3711f, -33402.3164f, -52757.5273f, -19540.0488f,
		24097.2695f, -11927.6797f, 47887.9375f, -9990.10645f, 1212.97827f, 77291.0469f, 27255.2754f, -25261.4355f
	};
	static const int64_t in0_dims[] = {2, 3, 4};
	static const float in1[] = {0.899999976f};
	static const int64_t in1_dims[] = {0};
	static const uint16_t in2[] = {30000};
	static const int64_t in2_dims[] = {0};
	static const uint16_t want0[] = {
		65535, 0, 53228, 0, 4853, 18022, 0, 17115, 0, 65535, 42544, 10409,
		14373, 0, 0, 8289, 56775, 16747, 65535, 18900, 31348, 65535, 60284, 1932
	};
	static const int64_t want0_dims[] = {2, 3, 4};

	kt_begin("QuantizeLinear", "", 21);
	kt.label = "QuantizeLinear uint16";
	kt_input(OX_FLOAT, 3, in0_dims, in0);
	kt_input(OX_FLOAT, 0, in1_dims, in1);
	kt_input(OX_UINT16, 0, in2_dims, in2);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_UINT16, 3, want0_dims, want0, 0);
	kt_end();
}

/* QuantizeLinear int16 per axis */
static void
case_10(void)
{
	static const float in0[] = {
		102045.961f, -127783.25f, 20904.9414f, -28388.4805f, -22632.4648f, -10779.8584f, -100999.305f, -11596.6191f,
		-43260.6562f, 166149.984f, 11289.3301f, -17631.541f, -14064.3711f, -33402.3164f, -52757.5273f, -19540.0488f,
		24097.2695f, -11927.6797f, 47887.9375f, -9990.10645f, 1212.97827f, 77291.0469f, 27255.2754f, -25261.4355f
	};
	static const int64_t in0_dims[] = {2, 3, 4};
	static const float in1[] = {0.5f, 2.0f, 3.0f};
	static const int64_t in1_dims[] = {3};
	static const int16_t in2[] = {-100, 0, 100};
	static const int64_t in2_dims[] = {3};
	static const int16_t want0[] = {
		32767, -32768, 32767, -32768, -11316, -5390, -32768, -5798, -14320, 32767, 3863, -5777,
		-28229, -32768, -32768, -32768, 12049, -5964, 23944, -4995, 504, 25864, 9185, -8320
	};
	static const int64_t want0_dims[] = {2, 3, 4};

	kt_begin("QuantizeLinear", "", 21);
	kt.label = "QuantizeLinear int16 per axis";
	kt_attr_int("axis", 1);
	kt_input(OX_FLOAT, 3, in0_dims, in0);
	kt_input(OX_FLOAT, 1, in1_dims, in1);
	kt_input(OX_INT16, 1, in2_dims, in2);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_INT16, 3, want0_dims, want0, 0);
	kt_end();
}

/* QuantizeLinear blocked along the last axis, remainder block */
static void
case_11(void)
{
	static const float in0[] = {
		-3.65677953f, 10.810503f, 38.7017593f, -5.39240646f, -4.87117338f, 20.0462723f, -17.7291985f, -5.83440447f,
		17.6507797f, 11.6070004f
	};
	static const int64_t in0_dims[] = {2, 5};
	static const float in1[] = {0.830090225f, 0.498163104f, 0.941756666f, 0.922164798f, 0.418715417f, 1.02988684f};
	static const int64_t in1_dims[] = {2, 3};
	static const int8_t in2[] = {3, 1, -5, 1, -3, 3};
	static const int64_t in2_dims[] = {2, 3};
	static const int8_t want0[] = {-1, 16, 79, -10, -10, 23, -18, -17, 39, 14};
	static const int64_t want0_dims[] = {2, 5};

	kt_begin("QuantizeLinear", "", 21);
	kt.label = "QuantizeLinear blocked along the last axis, remainder block";
	kt_attr_int("axis", 1);
	kt_attr_int("block_size", 2);
	kt_input(OX_FLOAT, 2, in0_dims, in0);
	kt_input(OX_FLOAT, 2, in1_dims, in1);
	kt_input(OX_INT8, 2, in2_dims, in2);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_INT8, 2, want0_dims, want0, 0);
	kt_end();
}

/* QuantizeLinear blocked along axis 0 */
static void
case_12(void)
{
	static const float in0[] = {
		-21.5281162f, 0.5224967f, -1.05494618f, 28.1119633f, 14.9481602f, 3.87631297f, 22.2326641f, -4.11046124f,
		-18.517992f, 11.6811666f, 11.6507683f, -4.29657841f, -15.6561718f, 4.58307791f, -49.8778839f, 13.802495f,
		9.82736492f, -32.7771416f, 1.22707021f, -19.2819939f, 15.1444206f, -40.6833458f, -18.2898903f, 14.1915998f,
		23.1280212f, -43.1601067f, -9.96079731f, 6.56040192f, -12.1843224f, 31.8128052f
	};
	static const int64_t in0_dims[] = {5, 3, 2};
	static const float in1[] = {
		0.284894764f, 0.393527567f, 0.413866997f, 1.05864191f, 0.326754987f, 0.496757776f, 0.692846954f, 1.04946041f,
		1.16523147f, 0.908144772f, 0.413687229f, 0.74498266f
	};
	static const int64_t in1_dims[] = {2, 3, 2};
	static const uint8_t in2[] = {240, 180, 209, 13, 75, 173, 161, 93, 40, 150, 22, 170};
	static const int64_t in2_dims[] = {2, 3, 2};
	static const uint8_t want0[] = {
		164, 181, 206, 40, 121, 181, 255, 170, 164, 24, 111, 164,
		185, 192, 88, 26, 105, 107, 163, 75, 53, 105, 0, 189,
		194, 52, 31, 157, 0, 213
	};
	static const int64_t want0_dims[] = {5, 3, 2};

	kt_begin("QuantizeLinear", "", 21);
	kt.label = "QuantizeLinear blocked along axis 0";
	kt_attr_int("axis", 0);
	kt_attr_int("block_size", 3);
	kt_input(OX_FLOAT, 3, in0_dims, in0);
	kt_input(OX_FLOAT, 3, in1_dims, in1);
	kt_input(OX_UINT8, 3, in2_dims, in2);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_UINT8, 3, want0_dims, want0, 0);
	kt_end();
}

/* QuantizeLinear blocked along the middle axis */
static void
case_13(void)
{
	static const float in0[] = {
		-21.5281162f, 0.5224967f, -1.05494618f, 28.1119633f, 14.9481602f, 3.87631297f, 22.2326641f, -4.11046124f,
		-18.517992f, 11.6811666f, 11.6507683f, -4.29657841f, -15.6561718f, 4.58307791f, -49.8778839f, 13.802495f,
		9.82736492f, -32.7771416f, 1.22707021f, -19.2819939f, 15.1444206f, -40.6833458f, -18.2898903f, 14.1915998f,
		23.1280212f, -43.1601067f, -9.96079731f, 6.56040192f, -12.1843224f, 31.8128052f
	};
	static const int64_t in0_dims[] = {5, 3, 2};
	static const float in1[] = {
		0.869127512f, 0.72304976f, 0.754737437f, 0.398149699f, 0.69518739f, 0.325409472f, 0.680746973f, 0.736244917f,
		0.974104822f, 0.593664765f, 0.219600424f, 0.727749944f, 0.405232489f, 0.941257536f, 0.588697255f, 0.580473185f,
		1.10945463f, 0.592970431f, 0.54885155f, 0.548019707f
	};
	static const int64_t in1_dims[] = {5, 2, 2};
	static const uint8_t want0[] = {
		0, 1, 0, 39, 20, 10, 32, 0, 0, 36, 17, 0,
		0, 8, 0, 23, 45, 0, 3, 0, 37, 0, 0, 24,
		21, 0, 0, 11, 0, 58
	};
	static const int64_t want0_dims[] = {5, 3, 2};

	kt_begin("QuantizeLinear", "", 21);
	kt.label = "QuantizeLinear blocked along the middle axis";
	kt_attr_int("axis", 1);
	kt_attr_int("block_size", 2);
	kt_input(OX_FLOAT, 3, in0_dims, in0);
	kt_input(OX_FLOAT, 3, in1_dims, in1);
	kt_input_none();
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_UINT8, 3, want0_dims, want0, 0);
	kt_end();
}

/* QuantizeLinear float16 x and scale */
static void
case_14(void)
{
	static const uint16_t in0[] = {
		22113, 55293, 19770, 53017, 52648, 51556, 54864, 51660, 53608, 22833, 18853, 52328,
		51976, 53293, 53912, 52451, 19974, 51703, 20988, 51455, 15578, 21717, 20176, 52817
	};
	static const int64_t in0_dims[] = {2, 3, 4};
	static const uint16_t in1[] = {14336};
	static const int64_t in1_dims[] = {0};
	static const int8_t in2[] = {10};
	static const int64_t in2_dims[] = {0};
	static const int8_t want0[] = {
		127, -128, 52, -47, -35, -12, -128, -13, -76, 127, 33, -25,
		-18, -57, -96, -29, 58, -14, 106, -10, 12, 127, 64, -41
	};
	static const int64_t want0_dims[] = {2, 3, 4};

	kt_begin("QuantizeLinear", "", 19);
	kt.label = "QuantizeLinear float16 x and scale";
	kt_input(OX_FLOAT16, 3, in0_dims, in0);
	kt_input(OX_FLOAT16, 0, in1_dims, in1);
	kt_input(OX_INT8, 0, in2_dims, in2);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_INT8, 3, want0_dims, want0, 0);
	kt_end();
}

/* QuantizeLinear int32 x */
static void
case_15(void)
{
	static const int32_t in0[] = {0, 1, -7, 1000, 123456789, -5, 3};
	static const int64_t in0_dims[] = {7};
	static const float in1[] = {2.0f};
	static const int64_t in1_dims[] = {0};
	static const uint8_t in2[] = {128};
	static const int64_t in2_dims[] = {0};
	static const uint8_t want0[] = {128, 128, 124, 255, 255, 126, 130};
	static const int64_t want0_dims[] = {7};

	kt_begin("QuantizeLinear", "", 10);
	kt.label = "QuantizeLinear int32 x";
	kt_input(OX_INT32, 1, in0_dims, in0);
	kt_input(OX_FLOAT, 0, in1_dims, in1);
	kt_input(OX_UINT8, 0, in2_dims, in2);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_UINT8, 1, want0_dims, want0, 0);
	kt_end();
}

/* QuantizeLinear precision float16 */
static void
case_16(void)
{
	static const float in0[] = {
		102.045959f, -127.783249f, 20.9049416f, -28.3884811f, -22.6324654f, -10.7798586f, -100.999306f, -11.5966187f,
		-43.2606544f, 166.149979f, 11.2893305f, -17.6315403f, -14.0643711f, -33.402317f, -52.7575264f, -19.5400486f,
		24.0972691f, -11.92768f, 47.8879356f, -9.99010658f, 1.21297824f, 77.2910461f, 27.2552757f, -25.2614365f
	};
	static const int64_t in0_dims[] = {2, 3, 4};
	static const float in1[] = {0.370000005f};
	static const int64_t in1_dims[] = {0};
	static const int8_t in2[] = {3};
	static const int64_t in2_dims[] = {0};
	static const int8_t want0[] = {
		127, -128, 59, -74, -58, -26, -128, -28, -114, 127, 33, -45,
		-35, -87, -128, -50, 68, -29, 127, -24, 6, 127, 77, -65
	};
	static const int64_t want0_dims[] = {2, 3, 4};

	kt_begin("QuantizeLinear", "", 23);
	kt.label = "QuantizeLinear precision float16";
	kt_attr_int("precision", 10);
	kt_input(OX_FLOAT, 3, in0_dims, in0);
	kt_input(OX_FLOAT, 0, in1_dims, in1);
	kt_input(OX_INT8, 0, in2_dims, in2);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_INT8, 3, want0_dims, want0, 0);
	kt_end();
}

/* QuantizeLinear empty x */
static void
case_17(void)
{
	static const float in0[] = {0};
	static const int64_t in0_dims[] = {0, 3};
	static const float in1[] = {0.5f};
	static const int64_t in1_dims[] = {0};
	static const int8_t in2[] = {3};
	static const int64_t in2_dims[] = {0};
	static const int8_t want0[] = {0};
	static const int64_t want0_dims[] = {0, 3};

	kt_begin("QuantizeLinear", "", 13);
	kt.label = "QuantizeLinear empty x";
	kt_input(OX_FLOAT, 2, in0_dims, in0);
	kt_input(OX_FLOAT, 0, in1_dims, in1);
	kt_input(OX_INT8, 0, in2_dims, in2);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_INT8, 2, want0_dims, want0, 0);
	kt_end();
}

/* DequantizeLinear uint8 per tensor */
static void
case_18(void)
{
	static const uint8_t in0[] = {0, 3, 128, 255, 7};
	static const int64_t in0_dims[] = {5};
	static const float in1[] = {0.5f};
	static const int64_t in1_dims[] = {0};
	static const uint8_t in2[] = {128};
	static const int64_t in2_dims[] = {0};
	static const float want0[] = {-64.0f, -62.5f, 0.0f, 63.5f, -60.5f};
	static const int64_t want0_dims[] = {5};

	kt_begin("DequantizeLinear", "", 10);
	kt.label = "DequantizeLinear uint8 per tensor";
	kt_input(OX_UINT8, 1, in0_dims, in0);
	kt_input(OX_FLOAT, 0, in1_dims, in1);
	kt_input(OX_UINT8, 0, in2_dims, in2);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_FLOAT, 1, want0_dims, want0, 0);
	kt_end();
}

/* DequantizeLinear int8 per axis 1 */
static void
case_19(void)
{
	static const int8_t in0[] = {
		-3, -6, -113, -105, -52, 11, -110, 106, 90, 15, 58, 61,
		-126, 113, -116, 86, 84, 61, -94, 79, 116, 81, 48, -64
	};
	static const int64_t in0_dims[] = {2, 3, 4};
	static const float in1[] = {0.5f, 1.5f, 0.100000001f};
	static const int64_t in1_dims[] = {3};
	static const int8_t in2[] = {-1, 0, 3};
	static const int64_t in2_dims[] = {3};
	static const float want0[] = {
		-1.0f, -2.5f, -56.0f, -52.0f, -78.0f, 16.5f, -165.0f, 159.0f,
		8.69999981f, 1.20000005f, 5.5f, 5.80000019f, -62.5f, 57.0f, -57.5f, 43.5f,
		126.0f, 91.5f, -141.0f, 118.5f, 11.3000002f, 7.80000019f, 4.5f, -6.70000029f
	};
	static const int64_t want0_dims[] = {2, 3, 4};

	kt_begin("DequantizeLinear", "", 13);
	kt.label = "DequantizeLinear int8 per axis 1";
	kt_attr_int("axis", 1);
	kt_input(OX_INT8, 3, in0_dims, in0);
	kt_input(OX_FLOAT, 1, in1_dims, in1);
	kt_input(OX_INT8, 1, in2_dims, in2);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_FLOAT, 3, want0_dims, want0, 0);
	kt_end();
}

/* DequantizeLinear int8 per axis -1 without zero point */
static void
case_20(void)
{
	static const int8_t in0[] = {
		-3, -6, -113, -105, -52, 11, -110, 106, 90, 15, 58, 61,
		-126, 113, -116, 86, 84, 61, -94, 79, 116, 81, 48, -64
	};
	static const int64_t in0_dims[] = {2, 3, 4};
	static const float in1[] = {0.5f, 1.5f, 0.100000001f, 2.0f};
	static const int64_t in1_dims[] = {4};
	static const float want0[] = {
		-1.5f, -9.0f, -11.3000002f, -210.0f, -26.0f, 16.5f, -11.0f, 212.0f,
		45.0f, 22.5f, 5.80000019f, 122.0f, -63.0f, 169.5f, -11.6000004f, 172.0f,
		42.0f, 91.5f, -9.40000057f, 158.0f, 58.0f, 121.5f, 4.80000019f, -128.0f
	};
	static const int64_t want0_dims[] = {2, 3, 4};

	kt_begin("DequantizeLinear", "", 13);
	kt.label = "DequantizeLinear int8 per axis -1 without zero point";
	kt_attr_int("axis", -1);
	kt_input(OX_INT8, 3, in0_dims, in0);
	kt_input(OX_FLOAT, 1, in1_dims, in1);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_FLOAT, 3, want0_dims, want0, 0);
	kt_end();
}

/* DequantizeLinear int32 */
static void
case_21(void)
{
	static const int32_t in0[] = {-2147483648, 2147483647, 0, -7, 1000};
	static const int64_t in0_dims[] = {5};
	static const float in1[] = {0.00100000005f};
	static const int64_t in1_dims[] = {0};
	static const float want0[] = {-2147483.75f, 2147483.75f, 0.0f, -0.00700000022f, 1.0f};
	static const int64_t want0_dims[] = {5};

	kt_begin("DequantizeLinear", "", 13);
	kt.label = "DequantizeLinear int32";
	kt_input(OX_INT32, 1, in0_dims, in0);
	kt_input(OX_FLOAT, 0, in1_dims, in1);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_FLOAT, 1, want0_dims, want0, 0);
	kt_end();
}

/* DequantizeLinear int16 per axis */
static void
case_22(void)
{
	static const int16_t in0[] = {3578, -1183, 24228, -10309, -5936, -15616, -740, 4688, -2587, -11936, 3267, 7775};
	static const int64_t in0_dims[] = {3, 4};
	static const float in1[] = {0.5f, 0.00999999978f, 3.0f};
	static const int64_t in1_dims[] = {3};
	static const int16_t in2[] = {-5, 0, 7};
	static const int64_t in2_dims[] = {3};
	static const float want0[] = {
		1791.5f, -589.0f, 12116.5f, -5152.0f, -59.3599968f, -156.160004f, -7.39999962f, 46.8799973f,
		-7782.0f, -35829.0f, 9780.0f, 23304.0f
	};
	static const int64_t want0_dims[] = {3, 4};

	kt_begin("DequantizeLinear", "", 21);
	kt.label = "DequantizeLinear int16 per axis";
	kt_attr_int("axis", 0);
	kt_input(OX_INT16, 2, in0_dims, in0);
	kt_input(OX_FLOAT, 1, in1_dims, in1);
	kt_input(OX_INT16, 1, in2_dims, in2);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_FLOAT, 2, want0_dims, want0, 0);
	kt_end();
}

/* DequantizeLinear uint16 */
static void
case_23(void)
{
	static const uint16_t in0[] = {0, 1, 65535, 30000};
	static const int64_t in0_dims[] = {4};
	static const float in1[] = {0.25f};
	static const int64_t in1_dims[] = {0};
	static const uint16_t in2[] = {30000};
	static const int64_t in2_dims[] = {0};
	static const float want0[] = {-7500.0f, -7499.75f, 8883.75f, 0.0f};
	static const int64_t want0_dims[] = {4};

	kt_begin("DequantizeLinear", "", 21);
	kt.label = "DequantizeLinear uint16";
	kt_input(OX_UINT16, 1, in0_dims, in0);
	kt_input(OX_FLOAT, 0, in1_dims, in1);
	kt_input(OX_UINT16, 0, in2_dims, in2);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_FLOAT, 1, want0_dims, want0, 0);
	kt_end();
}

/* DequantizeLinear blocked */
static void
case_24(void)
{
	static const uint8_t in0[] = {42, 148, 180, 26, 157, 112, 237, 99, 80, 180};
	static const int64_t in0_dims[] = {2, 5};
	static const float in1[] = {0.188132837f, 0.268958181f, 0.612597466f, 0.50459373f, 0.765346706f, 0.432856679f};
	static const int64_t in1_dims[] = {2, 3};
	static const uint8_t in2[] = {50, 50, 215, 237, 110, 62};
	static const int64_t in2_dims[] = {2, 3};
	static const float want0[] = {
		-1.5050627f, 18.4370174f, 34.9645653f, -6.45499611f, -35.5306549f, -63.0742149f, 0.0f, -8.41881371f,
		-22.9604015f, 51.0770874f
	};
	static const int64_t want0_dims[] = {2, 5};

	kt_begin("DequantizeLinear", "", 21);
	kt.label = "DequantizeLinear blocked";
	kt_attr_int("axis", 1);
	kt_attr_int("block_size", 2);
	kt_input(OX_UINT8, 2, in0_dims, in0);
	kt_input(OX_FLOAT, 2, in1_dims, in1);
	kt_input(OX_UINT8, 2, in2_dims, in2);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_FLOAT, 2, want0_dims, want0, 0);
	kt_end();
}

/* DequantizeLinear blocked axis 0 */
static void
case_25(void)
{
	static const int8_t in0[] = {
		66, -71, -73, -45, -27, -33, -45, -55, 25, 7, 31, 87,
		87, -75, 58, -17, 63, 33, -89, 76, 85, 99, -88, -72,
		26, 7, -82, 76, -54, -90
	};
	static const int64_t in0_dims[] = {5, 3, 2};
	static const float in1[] = {
		0.688293159f, 0.273911357f, 0.867830276f, 1.03763103f, 0.6382882f, 0.10896647f, 0.164250314f, 0.51570195f,
		0.947303951f, 0.336766928f, 0.769137561f, 0.505307853f
	};
	static const int64_t in1_dims[] = {2, 3, 2};
	static const float want0[] = {
		45.4273491f, -19.4477062f, -63.3516083f, -46.6933975f, -17.2337818f, -3.59589338f, -30.9731922f, -15.0651245f,
		21.6957569f, 7.26341724f, 19.7869339f, 9.48008251f, 59.8815041f, -20.5433521f, 50.334156f, -17.6397285f,
		40.2121582f, 3.59589338f, -14.6182775f, 39.1933479f, 80.5208359f, 33.3399277f, -67.6841049f, -36.382164f,
		4.27050829f, 3.60991359f, -77.6789246f, 25.594286f, -41.5334282f, -45.4777069f
	};
	static const int64_t want0_dims[] = {5, 3, 2};

	kt_begin("DequantizeLinear", "", 21);
	kt.label = "DequantizeLinear blocked axis 0";
	kt_attr_int("axis", 0);
	kt_attr_int("block_size", 3);
	kt_input(OX_INT8, 3, in0_dims, in0);
	kt_input(OX_FLOAT, 3, in1_dims, in1);
	kt_input_none();
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_FLOAT, 3, want0_dims, want0, 0);
	kt_end();
}

/* DequantizeLinear float16 scale gives float16 */
static void
case_26(void)
{
	static const int8_t in0[] = {
		-3, -6, -113, -105, -52, 11, -110, 106, 90, 15, 58, 61,
		-126, 113, -116, 86, 84, 61, -94, 79, 116, 81, 48, -64
	};
	static const int64_t in0_dims[] = {2, 3, 4};
	static const uint16_t in1[] = {12288};
	static const int64_t in1_dims[] = {0};
	static const int8_t in2[] = {4};
	static const int64_t in2_dims[] = {0};
	static const uint16_t want0[] = {
		47872, 48384, 52048, 51920, 50944, 15104, 52000, 19040, 18784, 15744, 18112, 18208,
		52240, 19152, 52096, 18720, 18688, 18208, 51744, 18608, 19200, 18640, 17792, 51264
	};
	static const int64_t want0_dims[] = {2, 3, 4};

	kt_begin("DequantizeLinear", "", 19);
	kt.label = "DequantizeLinear float16 scale gives float16";
	kt_input(OX_INT8, 3, in0_dims, in0);
	kt_input(OX_FLOAT16, 0, in1_dims, in1);
	kt_input(OX_INT8, 0, in2_dims, in2);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_FLOAT16, 3, want0_dims, want0, 0);
	kt_end();
}

/* DequantizeLinear output_dtype float16 */
static void
case_27(void)
{
	static const int8_t in0[] = {
		-3, -6, -113, -105, -52, 11, -110, 106, 90, 15, 58, 61,
		-126, 113, -116, 86, 84, 61, -94, 79, 116, 81, 48, -64
	};
	static const int64_t in0_dims[] = {2, 3, 4};
	static const float in1[] = {0.300000012f};
	static const int64_t in1_dims[] = {0};
	static const int8_t in2[] = {4};
	static const int64_t in2_dims[] = {0};
	static const uint16_t want0[] = {
		49203, 49664, 53347, 53270, 52275, 16435, 53318, 20390, 20083, 17050, 19469, 19526,
		53472, 20502, 53376, 20006, 19968, 19526, 53082, 19872, 20531, 19910, 19098, 52506
	};
	static const int64_t want0_dims[] = {2, 3, 4};

	kt_begin("DequantizeLinear", "", 23);
	kt.label = "DequantizeLinear output_dtype float16";
	kt_attr_int("output_dtype", 10);
	kt_input(OX_INT8, 3, in0_dims, in0);
	kt_input(OX_FLOAT, 0, in1_dims, in1);
	kt_input(OX_INT8, 0, in2_dims, in2);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_FLOAT16, 3, want0_dims, want0, 0);
	kt_end();
}

/* DynamicQuantizeLinear mixed signs */
static void
case_28(void)
{
	static const float in0[] = {0.0f, 2.0f, -3.0f, -2.5f, 1.34000003f, 0.5f};
	static const int64_t in0_dims[] = {6};
	static const uint8_t want0[] = {153, 255, 0, 26, 221, 179};
	static const int64_t want0_dims[] = {6};
	static const float want1[] = {0.0196078438f};
	static const int64_t want1_dims[] = {0};
	static const uint8_t want2[] = {153};
	static const int64_t want2_dims[] = {0};

	kt_begin("DynamicQuantizeLinear", "", 11);
	kt.label = "DynamicQuantizeLinear mixed signs";
	kt_input(OX_FLOAT, 1, in0_dims, in0);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 3);
	kt_expect_values(0, OX_UINT8, 1, want0_dims, want0, 0);
	kt_expect_values(1, OX_FLOAT, 0, want1_dims, want1, 0);
	kt_expect_values(2, OX_UINT8, 0, want2_dims, want2, 0);
	kt_end();
}

/* DynamicQuantizeLinear all positive */
static void
case_29(void)
{
	static const float in0[] = {
		1.0f, 2.0999999f, 1.29999995f, 2.5f, 3.33999991f, 4.0f, 1.5f, 2.5999999f,
		3.9000001f, 4.0f, 3.0f, 2.34500003f
	};
	static const int64_t in0_dims[] = {3, 4};
	static const uint8_t want0[] = {64, 134, 83, 159, 213, 255, 96, 166, 249, 255, 191, 149};
	static const int64_t want0_dims[] = {3, 4};
	static const float want1[] = {0.0156862754f};
	static const int64_t want1_dims[] = {0};
	static const uint8_t want2[] = {0};
	static const int64_t want2_dims[] = {0};

	kt_begin("DynamicQuantizeLinear", "", 11);
	kt.label = "DynamicQuantizeLinear all positive";
	kt_input(OX_FLOAT, 2, in0_dims, in0);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 3);
	kt_expect_values(0, OX_UINT8, 2, want0_dims, want0, 0);
	kt_expect_values(1, OX_FLOAT, 0, want1_dims, want1, 0);
	kt_expect_values(2, OX_UINT8, 0, want2_dims, want2, 0);
	kt_end();
}

/* DynamicQuantizeLinear all negative */
static void
case_30(void)
{
	static const float in0[] = {-1.0f, -2.0999999f, -1.29999995f, -2.5f, -3.33999991f, -4.0f};
	static const int64_t in0_dims[] = {6};
	static const uint8_t want0[] = {191, 121, 172, 96, 42, 0};
	static const int64_t want0_dims[] = {6};
	static const float want1[] = {0.0156862754f};
	static const int64_t want1_dims[] = {0};
	static const uint8_t want2[] = {255};
	static const int64_t want2_dims[] = {0};

	kt_begin("DynamicQuantizeLinear", "", 11);
	kt.label = "DynamicQuantizeLinear all negative";
	kt_input(OX_FLOAT, 1, in0_dims, in0);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 3);
	kt_expect_values(0, OX_UINT8, 1, want0_dims, want0, 0);
	kt_expect_values(1, OX_FLOAT, 0, want1_dims, want1, 0);
	kt_expect_values(2, OX_UINT8, 0, want2_dims, want2, 0);
	kt_end();
}

/* DynamicQuantizeLinear all zero */
static void
case_31(void)
{
	static const float in0[] = {0.0f, 0.0f, 0.0f};
	static const int64_t in0_dims[] = {3};
	static const uint8_t want0[] = {0, 0, 0};
	static const int64_t want0_dims[] = {3};
	static const float want1[] = {0.00392156886f};
	static const int64_t want1_dims[] = {0};
	static const uint8_t want2[] = {0};
	static const int64_t want2_dims[] = {0};

	kt_begin("DynamicQuantizeLinear", "", 11);
	kt.label = "DynamicQuantizeLinear all zero";
	kt_input(OX_FLOAT, 1, in0_dims, in0);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 3);
	kt_expect_values(0, OX_UINT8, 1, want0_dims, want0, 0);
	kt_expect_values(1, OX_FLOAT, 0, want1_dims, want1, 0);
	kt_expect_values(2, OX_UINT8, 0, want2_dims, want2, 0);
	kt_end();
}

/* DynamicQuantizeLinear random */
static void
case_32(void)
{
	static const float in0[] = {
		0.404075444f, 2.51315808f, 3.24975944f, 3.11805201f, 0.465320081f, 4.82898808f, -0.84892267f, -0.422945738f,
		2.39805365f, -1.65411723f, 6.48271894f, 3.05761981f, 6.52672577f, -0.0797675624f, -1.14926565f, 0.501143992f,
		2.20372939f, -1.76228309f, 1.1391052f, -0.0504128374f
	};
	static const int64_t in0_dims[] = {4, 5};
	static const uint8_t want0[] = {
		66, 131, 154, 150, 68, 203, 28, 41, 128, 3, 253, 148,
		255, 52, 19, 69, 122, 0, 89, 52
	};
	static const int64_t want0_dims[] = {4, 5};
	static const float want1[] = {0.0325059183f};
	static const int64_t want1_dims[] = {0};
	static const uint8_t want2[] = {54};
	static const int64_t want2_dims[] = {0};

	kt_begin("DynamicQuantizeLinear", "", 11);
	kt.label = "DynamicQuantizeLinear random";
	kt_input(OX_FLOAT, 2, in0_dims, in0);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 3);
	kt_expect_values(0, OX_UINT8, 2, want0_dims, want0, 0);
	kt_expect_values(1, OX_FLOAT, 0, want1_dims, want1, 0);
	kt_expect_values(2, OX_UINT8, 0, want2_dims, want2, 0);
	kt_end();
}

/* every generated case */
static void (*const generated_cases[])(void) = {
	case_0,
	case_1,
	case_2,
	case_3,
	case_4,
	case_5,
	case_6,
	case_7,
	case_8,
	case_9,
	case_10,
	case_11,
	case_12,
	case_13,
	case_14,
	case_15,
	case_16,
	case_17,
	case_18,
	case_19,
	case_20,
	case_21,
	case_22,
	case_23,
	case_24,
	case_25,
	case_26,
	case_27,
	case_28,
	case_29,
	case_30,
	case_31,
	case_32
};

/* ---- hand-written cases ------------------------------------------------- */

static const float xs[24] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23
};
/* as many parameters as the largest case reads (blocked [2, 2, 4]) */
static const float scales[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
static const uint8_t zps_u8[16] = {0};
static const int32_t zps_i32[16] = {0};

/*
 * QuantizeLinear (opset 21) of a [2, 3, 4] x with the given scale and zero
 * point shapes; zp_dt OX_UNDEFINED leaves the zero point out.
 */
static void
quantize_case(const char *label, int64_t axis, int64_t block, int64_t out_dt,
			  int s_rank, const int64_t *s_dims, ox_dtype zp_dt, int z_rank,
			  const int64_t *z_dims, ox_code want)
{
	int64_t		xd[3] = {2, 3, 4};

	kt_begin("QuantizeLinear", "", 21);
	kt.label = label;
	kt_attr_int("axis", axis);
	if (block)
		kt_attr_int("block_size", block);
	if (out_dt)
		kt_attr_int("output_dtype", out_dt);
	kt_input_f32(3, xd, xs);
	kt_input(OX_FLOAT, s_rank, s_dims, scales);
	if (zp_dt != OX_UNDEFINED)
		kt_input(zp_dt, z_rank, z_dims, zp_dt == OX_INT32 ? (const void *) zps_i32 : zps_u8);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	if (want == OX_OK)
		kt_expect_ok();
	else
		kt_expect_error(want);
	if (kt.rc != OX_OK && kt.st.msg[0] == '\0')
		kt_fail("error without a message%s%.0f%.0f", "", 0, 0);
	kt_end();
}

static void
test_quantize_errors(void)
{
	int64_t		d3[1] = {3};
	int64_t		d4[1] = {4};
	int64_t		d2[1] = {2};
	int64_t		blk[3] = {2, 2, 4};
	int64_t		blk_bad[3] = {2, 1, 4};
	int64_t		m23[2] = {2, 3};

	quantize_case("per axis ok", 1, 0, 0, 1, d3, OX_UINT8, 1, d3, OX_OK);
	quantize_case("per axis scale of the wrong length", 1, 0, 0, 1, d4, OX_UINT8, 1, d4, OX_INVALID_ARGUMENT);
	quantize_case("zero point shape differs from scale", 1, 0, 0, 1, d3, OX_UINT8, 1, d2, OX_INVALID_ARGUMENT);
	quantize_case("axis out of range", 3, 0, 0, 1, d4, OX_UINT8, 1, d4, OX_INVALID_ARGUMENT);
	quantize_case("axis -4 out of range", -4, 0, 0, 1, d2, OX_UINT8, 1, d2, OX_INVALID_ARGUMENT);
	quantize_case("2-D scale without block_size", 1, 0, 0, 2, m23, OX_UINT8, 2, m23, OX_INVALID_ARGUMENT);
	quantize_case("blocked ok", 1, 2, 0, 3, blk, OX_UINT8, 3, blk, OX_OK);
	quantize_case("blocked with too few blocks", 1, 2, 0, 3, blk_bad, OX_UINT8, 3, blk_bad, OX_INVALID_ARGUMENT);
	quantize_case("blocked with a 1-D scale", 1, 2, 0, 1, d3, OX_UNDEFINED, 0, NULL, OX_INVALID_ARGUMENT);
	quantize_case("negative block_size", 1, -2, 0, 1, d3, OX_UINT8, 1, d3, OX_INVALID_ARGUMENT);
	quantize_case("output_dtype disagrees with zero point", 1, 0, OX_INT8, 1, d3, OX_UINT8, 1, d3, OX_INVALID_ARGUMENT);
	quantize_case("output_dtype float8e4m3fn", 1, 0, 17, 1, d3, OX_UNDEFINED, 0, NULL, OX_OK);
	quantize_case("output_dtype int4", 1, 0, 22, 1, d3, OX_UNDEFINED, 0, NULL, OX_OK);
	quantize_case("output_dtype 27", 1, 0, 27, 1, d3, OX_UNDEFINED, 0, NULL, OX_UNSUPPORTED);
	quantize_case("output_dtype float", 1, 0, OX_FLOAT, 1, d3, OX_UNDEFINED, 0, NULL, OX_INVALID_ARGUMENT);
	quantize_case("int32 zero point", 1, 0, 0, 1, d3, OX_INT32, 1, d3, OX_INVALID_ARGUMENT);

	/* x of a type QuantizeLinear does not take */
	kt_begin("QuantizeLinear", "", 13);
	kt.label = "QuantizeLinear int8 x";
	kt_input(OX_INT8, 1, d3, zps_u8);
	kt_input(OX_FLOAT, 0, NULL, scales);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("QuantizeLinear", "", 13);
	kt.label = "QuantizeLinear int8 scale";
	kt_input(OX_FLOAT, 1, d3, xs);
	kt_input(OX_INT8, 0, NULL, zps_u8);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("QuantizeLinear", "", 13);
	kt.label = "QuantizeLinear without scale";
	kt_input(OX_FLOAT, 1, d3, xs);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("QuantizeLinear", "", 23);
	kt.label = "QuantizeLinear precision int64";
	kt_attr_int("precision", OX_INT64);
	kt_input(OX_FLOAT, 1, d3, xs);
	kt_input(OX_FLOAT, 0, NULL, scales);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	kt_begin("QuantizeLinear", "", 19);
	kt.label = "QuantizeLinear saturate 2";
	kt_attr_int("saturate", 2);
	kt_input(OX_FLOAT, 1, d3, xs);
	kt_input(OX_FLOAT, 0, NULL, scales);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();
}

static void
test_dequantize_errors(void)
{
	int64_t		d3[1] = {3};
	int64_t		d4[1] = {4};
	static const int8_t xi8[3] = {1, 2, 3};

	kt_begin("DequantizeLinear", "", 13);
	kt.label = "DequantizeLinear zero point type differs from x";
	kt_input(OX_INT8, 1, d3, xi8);
	kt_input(OX_FLOAT, 0, NULL, scales);
	kt_input(OX_UINT8, 0, NULL, zps_u8);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("DequantizeLinear", "", 13);
	kt.label = "DequantizeLinear float x";
	kt_input(OX_FLOAT, 1, d3, xs);
	kt_input(OX_FLOAT, 0, NULL, scales);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("DequantizeLinear", "", 13);
	kt.label = "DequantizeLinear int32 scale";
	kt_input(OX_INT8, 1, d3, xi8);
	kt_input(OX_INT32, 0, NULL, zps_i32);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("DequantizeLinear", "", 13);
	kt.label = "DequantizeLinear per axis scale of the wrong length";
	kt_attr_int("axis", 0);
	kt_input(OX_INT8, 1, d3, xi8);
	kt_input(OX_FLOAT, 1, d4, scales);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("DequantizeLinear", "", 23);
	kt.label = "DequantizeLinear output_dtype int8";
	kt_attr_int("output_dtype", OX_INT8);
	kt_input(OX_INT8, 1, d3, xi8);
	kt_input(OX_FLOAT, 0, NULL, scales);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("DequantizeLinear", "", 23);
	kt.label = "DequantizeLinear output_dtype float8e5m2";
	kt_attr_int("output_dtype", 19);
	kt_input(OX_INT8, 1, d3, xi8);
	kt_input(OX_FLOAT, 0, NULL, scales);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("DynamicQuantizeLinear", "", 11);
	kt.label = "DynamicQuantizeLinear double x";
	{
		static const double xd[3] = {1, 2, 3};

		kt_input(OX_DOUBLE, 1, d3, xd);
	}
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 3);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();
}

/* a large per-axis and blocked run, checked element by element against a plain loop */
static void
test_large(void)
{
	enum
	{
		N0 = 37, N1 = 129, N2 = 61
	};
	int64_t		xd[3] = {N0, N1, N2};
	int64_t		sd[1] = {N1};
	int64_t		bd[3] = {N0, N1, (N2 + 15) / 16};
	float	   *x = malloc(sizeof(float) * N0 * N1 * N2);
	float	   *sc = malloc(sizeof(float) * N0 * N1 * bd[2]);
	uint8_t    *want = malloc(N0 * N1 * N2);

	for (int i = 0; i < N0 * N1 * N2; i++)
		x[i] = (float) (((int64_t) i * 7919) % 1000) / 3.0f - 150.0f;
	for (int i = 0; i < N0 * N1 * bd[2]; i++)
		sc[i] = 0.5f + (float) (i % 13) / 7.0f;

	for (int i = 0; i < N0 * N1 * N2; i++)
	{
		float		q = rintf(x[i] / sc[(i / N2) % N1]) + 7;

		want[i] = (uint8_t) (q < 0 ? 0 : q > 255 ? 255 : q);
	}
	kt_begin("QuantizeLinear", "", 13);
	kt.label = "QuantizeLinear large per axis";
	kt_attr_int("axis", 1);
	kt_input_f32(3, xd, x);
	kt_input_f32(1, sd, sc);
	{
		uint8_t    *zp = malloc(N1);

		memset(zp, 7, N1);
		kt_input(OX_UINT8, 1, sd, zp);
		free(zp);
	}
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_UINT8, 3, xd, want, 0);
	kt_end();

	for (int i = 0; i < N0 * N1 * N2; i++)
	{
		float		q = rintf(x[i] / sc[(i / N2) * bd[2] + (i % N2) / 16]);

		want[i] = (uint8_t) (q < 0 ? 0 : q > 255 ? 255 : q);
	}
	kt_begin("QuantizeLinear", "", 21);
	kt.label = "QuantizeLinear large blocked";
	kt_attr_int("axis", -1);
	kt_attr_int("block_size", 16);
	kt_input_f32(3, xd, x);
	kt_input_f32(3, bd, sc);
	kt_run(ox_kernels_quant, ox_kernels_quant_count, 1);
	kt_expect_values(0, OX_UINT8, 3, xd, want, 0);
	kt_end();

	free(x);
	free(sc);
	free(want);
}

int
main(void)
{
	for (size_t i = 0; i < sizeof(generated_cases) / sizeof(generated_cases[0]); i++)
		generated_cases[i] ();
	test_quantize_errors();
	test_dequantize_errors();
	test_large();
	return kt_summary();
}
