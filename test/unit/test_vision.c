/*
 * test_vision.c
 *	  Unit tests of the vision family: GridSample, AffineGrid,
 *	  NonMaxSuppression, CenterCropPad, TensorScatter (CumProd, with
 *	  CumSum, is in test_tensor.c).
 *
 * The gen_* cases (GridSample, AffineGrid) were generated with
 * onnx.reference (the implementation the ONNX node tests come from); the
 * rest are written by hand: edge cases, other types and errors.  RoiAlign
 * and DeformConv are in test_vision_roi_deform.c.
 */
#include "kernel_test.h"

static void
gen_1(void)
{
	kt_begin("GridSample", "", 20);
	kt.label = "GridSample linear zeros align_corners=0";
	kt_attr_string("mode", "linear");
	kt_attr_string("padding_mode", "zeros");
	kt_attr_int("align_corners", 0);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {0.304717094f, -1.03998411f, 0.750451207f, 0.940564692f, -1.95103514f, -1.30217946f, 0.1278404f, -0.316242605f,
		-0.016801158f, -0.853043914f, 0.879397988f, 0.777791917f, 0.066030696f, 1.12724125f, 0.467509329f, -0.859292448f,
		0.368750781f, -0.95888263f, 0.878450274f, -0.0499259122f, -0.18486236f, -0.680929542f, 1.22254133f, -0.154529482f});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 3, 2, 2}, (const float[]) {0.723797083f, -0.793939352f, -0.0865253881f, -1.18611026f, -0.898847342f, 0.475927293f, 0.636381626f, 1.21552527f,
		-0.452854067f, -0.336804777f, -0.0791548938f, -0.807374477f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 2}, (const float[]) {0.75294137f, -0.100391999f, -0.400456488f, 0.141525418f, -1.02434993f, -0.337831229f, -0.638987899f, 0.201300114f,
		-0.0185890943f, 0.0279897414f, 0.144040346f, 0.711478233f}, 0.0001);
	kt_end();
}

static void
gen_2(void)
{
	kt_begin("GridSample", "", 20);
	kt.label = "GridSample linear zeros align_corners=1";
	kt_attr_string("mode", "linear");
	kt_attr_string("padding_mode", "zeros");
	kt_attr_int("align_corners", 1);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {0.304717094f, -1.03998411f, 0.750451207f, 0.940564692f, -1.95103514f, -1.30217946f, 0.1278404f, -0.316242605f,
		-0.016801158f, -0.853043914f, 0.879397988f, 0.777791917f, 0.066030696f, 1.12724125f, 0.467509329f, -0.859292448f,
		0.368750781f, -0.95888263f, 0.878450274f, -0.0499259122f, -0.18486236f, -0.680929542f, 1.22254133f, -0.154529482f});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 3, 2, 2}, (const float[]) {0.723797083f, -0.793939352f, -0.0865253881f, -1.18611026f, -0.898847342f, 0.475927293f, 0.636381626f, 1.21552527f,
		-0.452854067f, -0.336804777f, -0.0791548938f, -0.807374477f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 2}, (const float[]) {0.656963825f, -0.306953281f, -1.03927195f, 0.65363282f, -1.20982194f, -0.434324116f, -0.176828533f, 0.718665123f,
		-0.0361202955f, 0.467988551f, -0.16249156f, 0.657255232f}, 0.0001);
	kt_end();
}

static void
gen_3(void)
{
	kt_begin("GridSample", "", 20);
	kt.label = "GridSample linear border align_corners=0";
	kt_attr_string("mode", "linear");
	kt_attr_string("padding_mode", "border");
	kt_attr_int("align_corners", 0);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {0.304717094f, -1.03998411f, 0.750451207f, 0.940564692f, -1.95103514f, -1.30217946f, 0.1278404f, -0.316242605f,
		-0.016801158f, -0.853043914f, 0.879397988f, 0.777791917f, 0.066030696f, 1.12724125f, 0.467509329f, -0.859292448f,
		0.368750781f, -0.95888263f, 0.878450274f, -0.0499259122f, -0.18486236f, -0.680929542f, 1.22254133f, -0.154529482f});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 3, 2, 2}, (const float[]) {0.723797083f, -0.793939352f, -0.0865253881f, -1.18611026f, -0.898847342f, 0.475927293f, 0.636381626f, 1.21552527f,
		-0.452854067f, -0.336804777f, -0.0791548938f, -0.807374477f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 2}, (const float[]) {0.930601597f, -0.454602629f, -0.570202827f, 0.800880551f, -1.02434993f, -0.42820996f, -0.789760232f, 0.911542416f,
		-0.0264686793f, 0.15839161f, 0.144040346f, 0.901817322f}, 0.0001);
	kt_end();
}

static void
gen_4(void)
{
	kt_begin("GridSample", "", 20);
	kt.label = "GridSample linear border align_corners=1";
	kt_attr_string("mode", "linear");
	kt_attr_string("padding_mode", "border");
	kt_attr_int("align_corners", 1);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {0.304717094f, -1.03998411f, 0.750451207f, 0.940564692f, -1.95103514f, -1.30217946f, 0.1278404f, -0.316242605f,
		-0.016801158f, -0.853043914f, 0.879397988f, 0.777791917f, 0.066030696f, 1.12724125f, 0.467509329f, -0.859292448f,
		0.368750781f, -0.95888263f, 0.878450274f, -0.0499259122f, -0.18486236f, -0.680929542f, 1.22254133f, -0.154529482f});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 3, 2, 2}, (const float[]) {0.723797083f, -0.793939352f, -0.0865253881f, -1.18611026f, -0.898847342f, 0.475927293f, 0.636381626f, 1.21552527f,
		-0.452854067f, -0.336804777f, -0.0791548938f, -0.807374477f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 2}, (const float[]) {0.656963825f, -0.377143562f, -1.03927195f, 0.833210707f, -1.20982194f, -0.434324116f, -0.176828533f, 0.883000612f,
		-0.0361202955f, 0.596562862f, -0.16249156f, 0.657255232f}, 0.0001);
	kt_end();
}

static void
gen_5(void)
{
	kt_begin("GridSample", "", 20);
	kt.label = "GridSample linear reflection align_corners=0";
	kt_attr_string("mode", "linear");
	kt_attr_string("padding_mode", "reflection");
	kt_attr_int("align_corners", 0);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {0.304717094f, -1.03998411f, 0.750451207f, 0.940564692f, -1.95103514f, -1.30217946f, 0.1278404f, -0.316242605f,
		-0.016801158f, -0.853043914f, 0.879397988f, 0.777791917f, 0.066030696f, 1.12724125f, 0.467509329f, -0.859292448f,
		0.368750781f, -0.95888263f, 0.878450274f, -0.0499259122f, -0.18486236f, -0.680929542f, 1.22254133f, -0.154529482f});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 3, 2, 2}, (const float[]) {0.723797083f, -0.793939352f, -0.0865253881f, -1.18611026f, -0.898847342f, 0.475927293f, 0.636381626f, 1.21552527f,
		-0.452854067f, -0.336804777f, -0.0791548938f, -0.807374477f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 2}, (const float[]) {0.930601597f, -0.454602659f, -0.570202827f, 0.800880551f, -1.02434993f, -0.42820996f, -0.789760232f, 0.911542416f,
		-0.0264686793f, 0.15839161f, 0.144040346f, 0.901817322f}, 0.0001);
	kt_end();
}

static void
gen_6(void)
{
	kt_begin("GridSample", "", 20);
	kt.label = "GridSample linear reflection align_corners=1";
	kt_attr_string("mode", "linear");
	kt_attr_string("padding_mode", "reflection");
	kt_attr_int("align_corners", 1);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {0.304717094f, -1.03998411f, 0.750451207f, 0.940564692f, -1.95103514f, -1.30217946f, 0.1278404f, -0.316242605f,
		-0.016801158f, -0.853043914f, 0.879397988f, 0.777791917f, 0.066030696f, 1.12724125f, 0.467509329f, -0.859292448f,
		0.368750781f, -0.95888263f, 0.878450274f, -0.0499259122f, -0.18486236f, -0.680929542f, 1.22254133f, -0.154529482f});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 3, 2, 2}, (const float[]) {0.723797083f, -0.793939352f, -0.0865253881f, -1.18611026f, -0.898847342f, 0.475927293f, 0.636381626f, 1.21552527f,
		-0.452854067f, -0.336804777f, -0.0791548938f, -0.807374477f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 2}, (const float[]) {0.656963825f, -0.450773507f, -1.03927195f, 0.637678027f, -1.20982194f, -0.434324116f, -0.176828533f, 0.666799903f,
		-0.0361202955f, 0.566362023f, -0.16249156f, 0.657255232f}, 0.0001);
	kt_end();
}

static void
gen_7(void)
{
	kt_begin("GridSample", "", 20);
	kt.label = "GridSample nearest zeros align_corners=0";
	kt_attr_string("mode", "nearest");
	kt_attr_string("padding_mode", "zeros");
	kt_attr_int("align_corners", 0);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {0.304717094f, -1.03998411f, 0.750451207f, 0.940564692f, -1.95103514f, -1.30217946f, 0.1278404f, -0.316242605f,
		-0.016801158f, -0.853043914f, 0.879397988f, 0.777791917f, 0.066030696f, 1.12724125f, 0.467509329f, -0.859292448f,
		0.368750781f, -0.95888263f, 0.878450274f, -0.0499259122f, -0.18486236f, -0.680929542f, 1.22254133f, -0.154529482f});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 3, 2, 2}, (const float[]) {0.723797083f, -0.793939352f, -0.0865253881f, -1.18611026f, -0.898847342f, 0.475927293f, 0.636381626f, 1.21552527f,
		-0.452854067f, -0.336804777f, -0.0791548938f, -0.807374477f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 2}, (const float[]) {0.940564692f, 0.0f, -0.016801158f, 0.0f, -1.03998411f, -1.03998411f, -0.859292448f, 0.0f,
		-0.18486236f, 0.0f, 1.12724125f, 1.12724125f}, 0.0001);
	kt_end();
}

static void
gen_8(void)
{
	kt_begin("GridSample", "", 20);
	kt.label = "GridSample nearest zeros align_corners=1";
	kt_attr_string("mode", "nearest");
	kt_attr_string("padding_mode", "zeros");
	kt_attr_int("align_corners", 1);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {0.304717094f, -1.03998411f, 0.750451207f, 0.940564692f, -1.95103514f, -1.30217946f, 0.1278404f, -0.316242605f,
		-0.016801158f, -0.853043914f, 0.879397988f, 0.777791917f, 0.066030696f, 1.12724125f, 0.467509329f, -0.859292448f,
		0.368750781f, -0.95888263f, 0.878450274f, -0.0499259122f, -0.18486236f, -0.680929542f, 1.22254133f, -0.154529482f});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 3, 2, 2}, (const float[]) {0.723797083f, -0.793939352f, -0.0865253881f, -1.18611026f, -0.898847342f, 0.475927293f, 0.636381626f, 1.21552527f,
		-0.452854067f, -0.336804777f, -0.0791548938f, -0.807374477f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 2}, (const float[]) {0.940564692f, -1.03998411f, -1.95103514f, 0.879397988f, -1.30217946f, -1.03998411f, -0.859292448f, 1.12724125f,
		0.368750781f, 1.22254133f, -0.95888263f, 1.12724125f}, 0.0001);
	kt_end();
}

static void
gen_9(void)
{
	kt_begin("GridSample", "", 20);
	kt.label = "GridSample nearest border align_corners=0";
	kt_attr_string("mode", "nearest");
	kt_attr_string("padding_mode", "border");
	kt_attr_int("align_corners", 0);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {0.304717094f, -1.03998411f, 0.750451207f, 0.940564692f, -1.95103514f, -1.30217946f, 0.1278404f, -0.316242605f,
		-0.016801158f, -0.853043914f, 0.879397988f, 0.777791917f, 0.066030696f, 1.12724125f, 0.467509329f, -0.859292448f,
		0.368750781f, -0.95888263f, 0.878450274f, -0.0499259122f, -0.18486236f, -0.680929542f, 1.22254133f, -0.154529482f});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 3, 2, 2}, (const float[]) {0.723797083f, -0.793939352f, -0.0865253881f, -1.18611026f, -0.898847342f, 0.475927293f, 0.636381626f, 1.21552527f,
		-0.452854067f, -0.336804777f, -0.0791548938f, -0.807374477f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 2}, (const float[]) {0.940564692f, -1.03998411f, -0.016801158f, 0.777791917f, -1.03998411f, -1.03998411f, -0.859292448f, 1.12724125f,
		-0.18486236f, -0.154529482f, 1.12724125f, 1.12724125f}, 0.0001);
	kt_end();
}

static void
gen_10(void)
{
	kt_begin("GridSample", "", 20);
	kt.label = "GridSample nearest border align_corners=1";
	kt_attr_string("mode", "nearest");
	kt_attr_string("padding_mode", "border");
	kt_attr_int("align_corners", 1);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {0.304717094f, -1.03998411f, 0.750451207f, 0.940564692f, -1.95103514f, -1.30217946f, 0.1278404f, -0.316242605f,
		-0.016801158f, -0.853043914f, 0.879397988f, 0.777791917f, 0.066030696f, 1.12724125f, 0.467509329f, -0.859292448f,
		0.368750781f, -0.95888263f, 0.878450274f, -0.0499259122f, -0.18486236f, -0.680929542f, 1.22254133f, -0.154529482f});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 3, 2, 2}, (const float[]) {0.723797083f, -0.793939352f, -0.0865253881f, -1.18611026f, -0.898847342f, 0.475927293f, 0.636381626f, 1.21552527f,
		-0.452854067f, -0.336804777f, -0.0791548938f, -0.807374477f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 2}, (const float[]) {0.940564692f, -1.03998411f, -1.95103514f, 0.879397988f, -1.30217946f, -1.03998411f, -0.859292448f, 1.12724125f,
		0.368750781f, 1.22254133f, -0.95888263f, 1.12724125f}, 0.0001);
	kt_end();
}

static void
gen_11(void)
{
	kt_begin("GridSample", "", 20);
	kt.label = "GridSample nearest reflection align_corners=0";
	kt_attr_string("mode", "nearest");
	kt_attr_string("padding_mode", "reflection");
	kt_attr_int("align_corners", 0);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {0.304717094f, -1.03998411f, 0.750451207f, 0.940564692f, -1.95103514f, -1.30217946f, 0.1278404f, -0.316242605f,
		-0.016801158f, -0.853043914f, 0.879397988f, 0.777791917f, 0.066030696f, 1.12724125f, 0.467509329f, -0.859292448f,
		0.368750781f, -0.95888263f, 0.878450274f, -0.0499259122f, -0.18486236f, -0.680929542f, 1.22254133f, -0.154529482f});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 3, 2, 2}, (const float[]) {0.723797083f, -0.793939352f, -0.0865253881f, -1.18611026f, -0.898847342f, 0.475927293f, 0.636381626f, 1.21552527f,
		-0.452854067f, -0.336804777f, -0.0791548938f, -0.807374477f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 2}, (const float[]) {0.940564692f, -1.03998411f, -0.016801158f, 0.777791917f, -1.03998411f, -1.03998411f, -0.859292448f, 1.12724125f,
		-0.18486236f, -0.154529482f, 1.12724125f, 1.12724125f}, 0.0001);
	kt_end();
}

static void
gen_12(void)
{
	kt_begin("GridSample", "", 20);
	kt.label = "GridSample nearest reflection align_corners=1";
	kt_attr_string("mode", "nearest");
	kt_attr_string("padding_mode", "reflection");
	kt_attr_int("align_corners", 1);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {0.304717094f, -1.03998411f, 0.750451207f, 0.940564692f, -1.95103514f, -1.30217946f, 0.1278404f, -0.316242605f,
		-0.016801158f, -0.853043914f, 0.879397988f, 0.777791917f, 0.066030696f, 1.12724125f, 0.467509329f, -0.859292448f,
		0.368750781f, -0.95888263f, 0.878450274f, -0.0499259122f, -0.18486236f, -0.680929542f, 1.22254133f, -0.154529482f});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 3, 2, 2}, (const float[]) {0.723797083f, -0.793939352f, -0.0865253881f, -1.18611026f, -0.898847342f, 0.475927293f, 0.636381626f, 1.21552527f,
		-0.452854067f, -0.336804777f, -0.0791548938f, -0.807374477f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 2}, (const float[]) {0.940564692f, -1.03998411f, -1.95103514f, 0.879397988f, -1.30217946f, -1.03998411f, -0.859292448f, 1.12724125f,
		0.368750781f, 1.22254133f, -0.95888263f, 1.12724125f}, 0.0001);
	kt_end();
}

static void
gen_13(void)
{
	kt_begin("GridSample", "", 20);
	kt.label = "GridSample cubic zeros align_corners=0";
	kt_attr_string("mode", "cubic");
	kt_attr_string("padding_mode", "zeros");
	kt_attr_int("align_corners", 0);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {0.304717094f, -1.03998411f, 0.750451207f, 0.940564692f, -1.95103514f, -1.30217946f, 0.1278404f, -0.316242605f,
		-0.016801158f, -0.853043914f, 0.879397988f, 0.777791917f, 0.066030696f, 1.12724125f, 0.467509329f, -0.859292448f,
		0.368750781f, -0.95888263f, 0.878450274f, -0.0499259122f, -0.18486236f, -0.680929542f, 1.22254133f, -0.154529482f});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 3, 2, 2}, (const float[]) {0.723797083f, -0.793939352f, -0.0865253881f, -1.18611026f, -0.898847342f, 0.475927293f, 0.636381626f, 1.21552527f,
		-0.452854067f, -0.336804777f, -0.0791548938f, -0.807374477f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 2}, (const float[]) {0.927047968f, -0.124252051f, -0.405483097f, 0.164461747f, -1.43095827f, -0.492454469f, -0.773911774f, 0.264886022f,
		0.0634089112f, 0.0251050554f, 0.180893689f, 1.05497754f}, 0.0001);
	kt_end();
}

static void
gen_14(void)
{
	kt_begin("GridSample", "", 20);
	kt.label = "GridSample cubic zeros align_corners=1";
	kt_attr_string("mode", "cubic");
	kt_attr_string("padding_mode", "zeros");
	kt_attr_int("align_corners", 1);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {0.304717094f, -1.03998411f, 0.750451207f, 0.940564692f, -1.95103514f, -1.30217946f, 0.1278404f, -0.316242605f,
		-0.016801158f, -0.853043914f, 0.879397988f, 0.777791917f, 0.066030696f, 1.12724125f, 0.467509329f, -0.859292448f,
		0.368750781f, -0.95888263f, 0.878450274f, -0.0499259122f, -0.18486236f, -0.680929542f, 1.22254133f, -0.154529482f});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 3, 2, 2}, (const float[]) {0.723797083f, -0.793939352f, -0.0865253881f, -1.18611026f, -0.898847342f, 0.475927293f, 0.636381626f, 1.21552527f,
		-0.452854067f, -0.336804777f, -0.0791548938f, -0.807374477f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 2}, (const float[]) {0.966942489f, -0.46099031f, -1.37806523f, 0.9716627f, -1.51756215f, -0.624484599f, -0.34378019f, 1.05548f,
		-0.0602701381f, 0.648113191f, -0.251936436f, 0.937906325f}, 0.0001);
	kt_end();
}

static void
gen_15(void)
{
	kt_begin("GridSample", "", 20);
	kt.label = "GridSample cubic border align_corners=0";
	kt_attr_string("mode", "cubic");
	kt_attr_string("padding_mode", "border");
	kt_attr_int("align_corners", 0);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {0.304717094f, -1.03998411f, 0.750451207f, 0.940564692f, -1.95103514f, -1.30217946f, 0.1278404f, -0.316242605f,
		-0.016801158f, -0.853043914f, 0.879397988f, 0.777791917f, 0.066030696f, 1.12724125f, 0.467509329f, -0.859292448f,
		0.368750781f, -0.95888263f, 0.878450274f, -0.0499259122f, -0.18486236f, -0.680929542f, 1.22254133f, -0.154529482f});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 3, 2, 2}, (const float[]) {0.723797083f, -0.793939352f, -0.0865253881f, -1.18611026f, -0.898847342f, 0.475927293f, 0.636381626f, 1.21552527f,
		-0.452854067f, -0.336804777f, -0.0791548938f, -0.807374477f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 2}, (const float[]) {1.05162239f, -0.648321271f, -0.587569058f, 0.850294113f, -1.29398775f, -0.608470559f, -0.880571246f, 1.11357725f,
		0.0650654435f, 0.182378143f, 0.0870019943f, 1.26216149f}, 0.0001);
	kt_end();
}

static void
gen_16(void)
{
	kt_begin("GridSample", "", 20);
	kt.label = "GridSample cubic border align_corners=1";
	kt_attr_string("mode", "cubic");
	kt_attr_string("padding_mode", "border");
	kt_attr_int("align_corners", 1);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {0.304717094f, -1.03998411f, 0.750451207f, 0.940564692f, -1.95103514f, -1.30217946f, 0.1278404f, -0.316242605f,
		-0.016801158f, -0.853043914f, 0.879397988f, 0.777791917f, 0.066030696f, 1.12724125f, 0.467509329f, -0.859292448f,
		0.368750781f, -0.95888263f, 0.878450274f, -0.0499259122f, -0.18486236f, -0.680929542f, 1.22254133f, -0.154529482f});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 3, 2, 2}, (const float[]) {0.723797083f, -0.793939352f, -0.0865253881f, -1.18611026f, -0.898847342f, 0.475927293f, 0.636381626f, 1.21552527f,
		-0.452854067f, -0.336804777f, -0.0791548938f, -0.807374477f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 2}, (const float[]) {0.786954463f, -0.564631104f, -1.26159668f, 1.00949323f, -1.43325126f, -0.573400259f, -0.222899407f, 1.09574628f,
		-0.0454571843f, 0.797374666f, -0.316267014f, 0.835199535f}, 0.0001);
	kt_end();
}

static void
gen_17(void)
{
	kt_begin("GridSample", "", 20);
	kt.label = "GridSample cubic reflection align_corners=0";
	kt_attr_string("mode", "cubic");
	kt_attr_string("padding_mode", "reflection");
	kt_attr_int("align_corners", 0);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {0.304717094f, -1.03998411f, 0.750451207f, 0.940564692f, -1.95103514f, -1.30217946f, 0.1278404f, -0.316242605f,
		-0.016801158f, -0.853043914f, 0.879397988f, 0.777791917f, 0.066030696f, 1.12724125f, 0.467509329f, -0.859292448f,
		0.368750781f, -0.95888263f, 0.878450274f, -0.0499259122f, -0.18486236f, -0.680929542f, 1.22254133f, -0.154529482f});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 3, 2, 2}, (const float[]) {0.723797083f, -0.793939352f, -0.0865253881f, -1.18611026f, -0.898847342f, 0.475927293f, 0.636381626f, 1.21552527f,
		-0.452854067f, -0.336804777f, -0.0791548938f, -0.807374477f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 2}, (const float[]) {1.07885456f, -0.633157372f, -0.570932031f, 0.963059127f, -1.29398775f, -0.605282009f, -0.898215294f, 1.32058728f,
		0.103367314f, 0.18113327f, 0.0870019943f, 1.30342972f}, 0.0001);
	kt_end();
}

static void
gen_18(void)
{
	kt_begin("GridSample", "", 20);
	kt.label = "GridSample cubic reflection align_corners=1";
	kt_attr_string("mode", "cubic");
	kt_attr_string("padding_mode", "reflection");
	kt_attr_int("align_corners", 1);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {0.304717094f, -1.03998411f, 0.750451207f, 0.940564692f, -1.95103514f, -1.30217946f, 0.1278404f, -0.316242605f,
		-0.016801158f, -0.853043914f, 0.879397988f, 0.777791917f, 0.066030696f, 1.12724125f, 0.467509329f, -0.859292448f,
		0.368750781f, -0.95888263f, 0.878450274f, -0.0499259122f, -0.18486236f, -0.680929542f, 1.22254133f, -0.154529482f});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 3, 2, 2}, (const float[]) {0.723797083f, -0.793939352f, -0.0865253881f, -1.18611026f, -0.898847342f, 0.475927293f, 0.636381626f, 1.21552527f,
		-0.452854067f, -0.336804777f, -0.0791548938f, -0.807374477f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 2}, (const float[]) {0.900704265f, -0.581524372f, -1.10768223f, 0.884869099f, -1.40409791f, -0.560823739f, -0.4410339f, 0.982824445f,
		0.004366301f, 0.694681764f, -0.196412891f, 0.972449899f}, 0.0001);
	kt_end();
}

static void
gen_19(void)
{
	kt_begin("GridSample", "", 22);
	kt.label = "GridSample 3-D linear border";
	kt_attr_string("mode", "linear");
	kt_attr_string("padding_mode", "border");
	kt_input(OX_FLOAT, 5, (const int64_t[]) {2, 1, 2, 3, 3}, (const float[]) {-0.113947459f, -0.840156496f, -0.824481189f, 0.650592804f, 0.743254185f, 0.54315424f, -0.665509701f, 0.232161328f,
		0.116685808f, 0.218688592f, 0.871428788f, 0.223595545f, 0.678913534f, 0.0675790682f, 0.289119393f, 0.63128823f,
		-1.45715582f, -0.319671214f, -0.470372647f, -0.638877869f, -0.275142252f, 1.49494135f, -0.865831137f, 0.968278348f,
		-1.68286979f, -0.334885031f, 0.16275306f, 0.586222351f, 0.711226583f, 0.793347239f, -0.34872508f, -0.462351799f,
		0.8579759f, -0.191304326f, -1.27568626f, -1.13328719f});
	kt_input(OX_FLOAT, 5, (const int64_t[]) {2, 2, 2, 2, 3}, (const float[]) {-1.14841282f, -0.568401873f, -0.536656201f, 0.420982927f, 0.148283601f, 0.738135338f, 0.427215219f, -0.243394166f,
		0.81645298f, -0.865870416f, -1.24094856f, -1.06587553f, 0.578134298f, -0.0991192013f, -0.880693376f, 0.00271641533f,
		-0.90398854f, 0.510432959f, -0.139993683f, -0.309344798f, -0.516068578f, 0.338734746f, -0.359287202f, -1.07211018f,
		-0.993184626f, 1.20093393f, 1.06230974f, 0.519238532f, -0.608738124f, 1.21985853f, 0.724752367f, 0.563914478f,
		-0.131660089f, -0.592171967f, -1.04938352f, 1.04676628f, -0.114981644f, -0.773855269f, -0.504512787f, 0.205970883f,
		-0.840390742f, 0.927197158f, 0.672150791f, 0.570603669f, -0.176558092f, 0.33100298f, 0.218654722f, 0.389601171f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 5, (const int64_t[]) {2, 1, 2, 2, 2}, (const float[]) {-0.00125639886f, -0.00301386416f, 0.299628049f, -0.113947451f, 0.362128556f, 0.868789136f, 0.0688565373f, -0.152679622f,
		-0.191304326f, 0.757009685f, -0.123160049f, 0.60019058f, -0.609815359f, 0.736598253f, -0.0851062387f, -0.235938653f}, 0.0001);
	kt_end();
}

static void
gen_20(void)
{
	kt_begin("GridSample", "", 22);
	kt.label = "GridSample 3-D nearest border";
	kt_attr_string("mode", "nearest");
	kt_attr_string("padding_mode", "border");
	kt_input(OX_FLOAT, 5, (const int64_t[]) {2, 1, 2, 3, 3}, (const float[]) {-0.113947459f, -0.840156496f, -0.824481189f, 0.650592804f, 0.743254185f, 0.54315424f, -0.665509701f, 0.232161328f,
		0.116685808f, 0.218688592f, 0.871428788f, 0.223595545f, 0.678913534f, 0.0675790682f, 0.289119393f, 0.63128823f,
		-1.45715582f, -0.319671214f, -0.470372647f, -0.638877869f, -0.275142252f, 1.49494135f, -0.865831137f, 0.968278348f,
		-1.68286979f, -0.334885031f, 0.16275306f, 0.586222351f, 0.711226583f, 0.793347239f, -0.34872508f, -0.462351799f,
		0.8579759f, -0.191304326f, -1.27568626f, -1.13328719f});
	kt_input(OX_FLOAT, 5, (const int64_t[]) {2, 2, 2, 2, 3}, (const float[]) {-1.14841282f, -0.568401873f, -0.536656201f, 0.420982927f, 0.148283601f, 0.738135338f, 0.427215219f, -0.243394166f,
		0.81645298f, -0.865870416f, -1.24094856f, -1.06587553f, 0.578134298f, -0.0991192013f, -0.880693376f, 0.00271641533f,
		-0.90398854f, 0.510432959f, -0.139993683f, -0.309344798f, -0.516068578f, 0.338734746f, -0.359287202f, -1.07211018f,
		-0.993184626f, 1.20093393f, 1.06230974f, 0.519238532f, -0.608738124f, 1.21985853f, 0.724752367f, 0.563914478f,
		-0.131660089f, -0.592171967f, -1.04938352f, 1.04676628f, -0.114981644f, -0.773855269f, -0.504512787f, 0.205970883f,
		-0.840390742f, 0.927197158f, 0.672150791f, 0.570603669f, -0.176558092f, 0.33100298f, 0.218654722f, 0.389601171f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 5, (const int64_t[]) {2, 1, 2, 2, 2}, (const float[]) {-0.113947459f, 0.289119393f, 0.289119393f, -0.113947459f, 0.54315424f, 0.871428788f, 0.743254185f, -0.824481189f,
		-0.191304326f, 0.793347239f, 0.16275306f, 0.586222351f, -0.638877869f, 0.711226583f, 0.16275306f, -0.462351799f}, 0.0001);
	kt_end();
}

static void
gen_21(void)
{
	kt_begin("GridSample", "", 22);
	kt.label = "GridSample 3-D cubic border";
	kt_attr_string("mode", "cubic");
	kt_attr_string("padding_mode", "border");
	kt_input(OX_FLOAT, 5, (const int64_t[]) {2, 1, 2, 3, 3}, (const float[]) {-0.113947459f, -0.840156496f, -0.824481189f, 0.650592804f, 0.743254185f, 0.54315424f, -0.665509701f, 0.232161328f,
		0.116685808f, 0.218688592f, 0.871428788f, 0.223595545f, 0.678913534f, 0.0675790682f, 0.289119393f, 0.63128823f,
		-1.45715582f, -0.319671214f, -0.470372647f, -0.638877869f, -0.275142252f, 1.49494135f, -0.865831137f, 0.968278348f,
		-1.68286979f, -0.334885031f, 0.16275306f, 0.586222351f, 0.711226583f, 0.793347239f, -0.34872508f, -0.462351799f,
		0.8579759f, -0.191304326f, -1.27568626f, -1.13328719f});
	kt_input(OX_FLOAT, 5, (const int64_t[]) {2, 2, 2, 2, 3}, (const float[]) {-1.14841282f, -0.568401873f, -0.536656201f, 0.420982927f, 0.148283601f, 0.738135338f, 0.427215219f, -0.243394166f,
		0.81645298f, -0.865870416f, -1.24094856f, -1.06587553f, 0.578134298f, -0.0991192013f, -0.880693376f, 0.00271641533f,
		-0.90398854f, 0.510432959f, -0.139993683f, -0.309344798f, -0.516068578f, 0.338734746f, -0.359287202f, -1.07211018f,
		-0.993184626f, 1.20093393f, 1.06230974f, 0.519238532f, -0.608738124f, 1.21985853f, 0.724752367f, 0.563914478f,
		-0.131660089f, -0.592171967f, -1.04938352f, 1.04676628f, -0.114981644f, -0.773855269f, -0.504512787f, 0.205970883f,
		-0.840390742f, 0.927197158f, 0.672150791f, 0.570603669f, -0.176558092f, 0.33100298f, 0.218654722f, 0.389601171f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 5, (const int64_t[]) {2, 1, 2, 2, 2}, (const float[]) {-0.00697636139f, -0.143170938f, 0.424196124f, -0.0339293554f, 0.435030609f, 0.97572124f, 0.139925599f, -0.158569172f,
		-0.0876086205f, 0.776836514f, -0.0906553864f, 0.597098887f, -0.648210585f, 0.984556317f, -0.0737363622f, -0.318852931f}, 0.0001);
	kt_end();
}

static void
gen_22(void)
{
	kt_begin("GridSample", "", 20);
	kt.label = "GridSample 1-D linear reflection";
	kt_attr_string("mode", "linear");
	kt_attr_string("padding_mode", "reflection");
	kt_input(OX_FLOAT, 3, (const int64_t[]) {1, 2, 5}, (const float[]) {-1.02349746f, 0.179275632f, 0.219996691f, 1.3591876f, 0.83511126f, 0.356871068f, 1.46330285f, -1.18876302f,
		-0.639751554f, -0.926575959f});
	kt_input(OX_FLOAT, 3, (const int64_t[]) {1, 4, 1}, (const float[]) {0.210758969f, -0.398138523f, 0.236380279f, -1.2407099f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 3, (const int64_t[]) {1, 2, 4}, (const float[]) {0.820233405f, 0.179465145f, 0.893202662f, -0.901085615f, -0.899490297f, 1.45096099f, -0.864324152f, 0.469477832f}, 0.0001);
	kt_end();
}

static void
gen_23(void)
{
	kt_begin("GridSample", "", 20);
	kt.label = "GridSample double";
	kt_attr_string("mode", "linear");
	kt_input(OX_DOUBLE, 4, (const int64_t[]) {1, 2, 3, 4}, (const double[]) {-1.4708062945026579, -1.0155790812075416, 0.31351384745019528, 0.83812656789438111, 1.9967308916917865, 2.9138624660073296, 0.41440943327599639, -0.98953812003186414,
		-2.1320462807313092, 0.2677114623438358, -0.81294109531032599, -0.41535726017968533, -0.61209679905980807, -0.14079088641638526, 1.0659802307876436, 0.15704856744534462,
		-0.1586348370386883, -1.0356537528258116, -1.674682944704357, -0.48630790907333088, -0.053782550818320493, 1.7679299135798829, 0.13027452147288585, 0.98273951102305757});
	kt_input(OX_DOUBLE, 4, (const int64_t[]) {1, 3, 2, 2}, (const double[]) {1.0816307973577806, -0.70144362367330992, -1.2027273539419325, 0.14261642041785683, -0.33560206195765929, 0.85745333214427411, 0.80145382736718473, -0.47543887866094015,
		1.1775384271813369, -0.54361362083569165, 0.039148536002457712, -0.63449076452423292});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_DOUBLE, 4, (const int64_t[]) {1, 2, 3, 2}, (const double[]) {0.26750673491689658, 0.10527465531637828, -0.10217406598517702, 0.28157588081337132, 0.072574214068680407, -0.16417655940569503, 0.050125543217446791, -0.012877481667790805,
		1.0393541422232879, -0.024663662792681305, 0.0055502851144494398, 0.46237388698573262}, 0.0001);
	kt_end();
}

static void
gen_24(void)
{
	kt_begin("AffineGrid", "", 20);
	kt.label = "AffineGrid 2-D ac=0";
	kt_attr_int("align_corners", 0);
	kt_input(OX_FLOAT, 3, (const int64_t[]) {2, 2, 3}, (const float[]) {-0.654787719f, 0.446072191f, -0.454983473f, -1.22560573f, -1.27793753f, 0.172587916f, 1.57909131f, 0.159991607f,
		-0.118638329f, 0.285826147f, 1.30600178f, 0.219382495f});
	kt_input(OX_INT64, 1, (const int64_t[]) {4}, (const int64_t[]) {2, 3, 3, 4});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {2, 3, 4, 2}, (const float[]) {-0.261274159f, 1.94375062f, -0.588667989f, 1.33094776f, -0.916061878f, 0.718144834f, -1.24345577f, 0.105341978f,
		0.0361073166f, 1.09179223f, -0.291286558f, 0.478989363f, -0.618680418f, -0.133813515f, -0.946074247f, -0.746616364f,
		0.333488762f, 0.239833862f, 0.00609491765f, -0.372969002f, -0.321298957f, -0.985771894f, -0.648692787f, -1.59857476f,
		-1.4096179f, -0.865654945f, -0.620072246f, -0.722741902f, 0.169473425f, -0.579828799f, 0.959019065f, -0.436915755f,
		-1.30295682f, 0.00501288474f, -0.513411164f, 0.147925958f, 0.276134491f, 0.290839016f, 1.06568015f, 0.43375209f,
		-1.19629574f, 0.875680745f, -0.406750083f, 1.01859379f, 0.382795572f, 1.16150689f, 1.17234123f, 1.30441999f}, 0.0001);
	kt_end();
}

static void
gen_25(void)
{
	kt_begin("AffineGrid", "", 20);
	kt.label = "AffineGrid 3-D ac=0";
	kt_attr_int("align_corners", 0);
	kt_input(OX_FLOAT, 3, (const int64_t[]) {1, 3, 4}, (const float[]) {-0.410927236f, 1.10628867f, 0.428756446f, 1.53575599f, 0.183234438f, -1.22446907f, -1.36815917f, 1.6509279f,
		1.72366571f, -0.179519206f, -0.383187324f, 1.46144426f});
	kt_input(OX_INT64, 1, (const int64_t[]) {5}, (const int64_t[]) {1, 1, 2, 3, 2});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 5, (const int64_t[]) {1, 2, 3, 2, 3}, (const float[]) {0.789315581f, 3.05970287f, 0.910884559f, 0.378388375f, 3.24293733f, 2.63455033f, 1.5268414f, 2.24339032f,
		0.791205049f, 1.11591411f, 2.42662477f, 2.51487088f, 2.2643671f, 1.42707753f, 0.671525598f, 1.85343993f,
		1.61031199f, 2.39519119f, 1.21807206f, 1.69154382f, 0.527697206f, 0.807144821f, 1.87477827f, 2.25136304f,
		1.95559788f, 0.875231087f, 0.408017755f, 1.54467058f, 1.05846548f, 2.13168335f, 2.69312358f, 0.058918383f,
		0.288338274f, 2.28219628f, 0.242152825f, 2.0120039f}, 0.0001);
	kt_end();
}

static void
gen_26(void)
{
	kt_begin("AffineGrid", "", 20);
	kt.label = "AffineGrid 2-D ac=1";
	kt_attr_int("align_corners", 1);
	kt_input(OX_FLOAT, 3, (const int64_t[]) {2, 2, 3}, (const float[]) {-0.654787719f, 0.446072191f, -0.454983473f, -1.22560573f, -1.27793753f, 0.172587916f, 1.57909131f, 0.159991607f,
		-0.118638329f, 0.285826147f, 1.30600178f, 0.219382495f});
	kt_input(OX_INT64, 1, (const int64_t[]) {4}, (const int64_t[]) {2, 3, 3, 4});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {2, 3, 4, 2}, (const float[]) {-0.246267945f, 2.67613125f, -0.682793081f, 1.85906065f, -1.11931825f, 1.04199016f, -1.55584335f, 0.224919721f,
		0.199804246f, 1.3981936f, -0.236720905f, 0.581123173f, -0.673246026f, -0.235947326f, -1.10977125f, -1.05301785f,
		0.645876408f, 0.120256111f, 0.209351286f, -0.696814358f, -0.22717385f, -1.5138849f, -0.663699031f, -2.33095527f,
		-1.85772121f, -1.37244546f, -0.804993689f, -1.18189466f, 0.247733831f, -0.991343915f, 1.30046141f, -0.800793171f,
		-1.69772959f, -0.0664436519f, -0.645002127f, 0.124107115f, 0.407725453f, 0.314657867f, 1.46045303f, 0.505208611f,
		-1.53773808f, 1.2395581f, -0.485010505f, 1.4301089f, 0.567717075f, 1.62065971f, 1.62044454f, 1.81121039f}, 0.0001);
	kt_end();
}

static void
gen_27(void)
{
	kt_begin("AffineGrid", "", 20);
	kt.label = "AffineGrid 3-D ac=1";
	kt_attr_int("align_corners", 1);
	kt_input(OX_FLOAT, 3, (const int64_t[]) {1, 3, 4}, (const float[]) {-0.410927236f, 1.10628867f, 0.428756446f, 1.53575599f, 0.183234438f, -1.22446907f, -1.36815917f, 1.6509279f,
		1.72366571f, -0.179519206f, -0.383187324f, 1.46144426f});
	kt_input(OX_INT64, 1, (const int64_t[]) {5}, (const int64_t[]) {1, 1, 2, 3, 2});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 5, (const int64_t[]) {1, 2, 3, 2, 3}, (const float[]) {0.411638111f, 4.06032181f, 0.300485075f, -0.410216361f, 4.42679071f, 3.74781656f, 1.51792681f, 2.83585262f,
		0.120965868f, 0.69607234f, 3.20232153f, 3.56829739f, 2.62421536f, 1.61138356f, -0.0585533381f, 1.80236101f,
		1.97785246f, 3.38877821f, 1.26915097f, 1.32400334f, -0.465889573f, 0.44729653f, 1.69047225f, 2.98144197f,
		2.37543964f, 0.099534288f, -0.64540875f, 1.55358517f, 0.46600318f, 2.80192256f, 3.48172832f, -1.12493479f,
		-0.824927986f, 2.65987396f, -0.758465886f, 2.62240338f}, 0.0001);
	kt_end();
}

#define D(...) ((const int64_t[]) {__VA_ARGS__})

static void
grid_sample_cases(void)
{
	/* opset 16 spelling, float16 */
	kt_begin("GridSample", "", 16);
	kt.label = "GridSample opset 16 bilinear float16";
	kt_attr_string("mode", "bilinear");
	kt_attr_int("align_corners", 1);
	kt_input(OX_FLOAT16, 4, D(1, 1, 2, 2), (const uint16_t[]) {0x3c00, 0x4000, 0x4200, 0x4400});	/* 1 2 3 4 */
	kt_input(OX_FLOAT, 4, D(1, 1, 2, 2), (const float[]) {0, 0, -1, -1});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_values(0, OX_FLOAT16, 4, D(1, 1, 1, 2), (const uint16_t[]) {0x4100, 0x3c00}, 0);	/* 2.5, 1 */
	kt_end();

	kt_begin("GridSample", "", 16);
	kt.label = "GridSample opset 16 refuses 5-D";
	kt_input(OX_FLOAT, 5, D(1, 1, 1, 1, 1), (const float[]) {1});
	kt_input(OX_FLOAT, 5, D(1, 1, 1, 1, 3), (const float[]) {0, 0, 0});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("GridSample", "", 20);
	kt.label = "GridSample bad mode";
	kt_attr_string("mode", "area");
	kt_input(OX_FLOAT, 4, D(1, 1, 1, 1), (const float[]) {1});
	kt_input(OX_FLOAT, 4, D(1, 1, 1, 2), (const float[]) {0, 0});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	kt_begin("GridSample", "", 20);
	kt.label = "GridSample bad padding_mode";
	kt_attr_string("padding_mode", "wrap");
	kt_input(OX_FLOAT, 4, D(1, 1, 1, 1), (const float[]) {1});
	kt_input(OX_FLOAT, 4, D(1, 1, 1, 2), (const float[]) {0, 0});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	kt_begin("GridSample", "", 20);
	kt.label = "GridSample grid last dim mismatch";
	kt_input(OX_FLOAT, 4, D(1, 1, 2, 2), (const float[]) {1, 2, 3, 4});
	kt_input(OX_FLOAT, 4, D(1, 1, 1, 3), (const float[]) {0, 0, 0});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("GridSample", "", 20);
	kt.label = "GridSample batch mismatch";
	kt_input(OX_FLOAT, 4, D(1, 1, 2, 2), (const float[]) {1, 2, 3, 4});
	kt_input(OX_FLOAT, 4, D(2, 1, 1, 2), (const float[]) {0, 0, 0, 0});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	/* hostile grid values: huge, infinite, NaN */
	kt_begin("GridSample", "", 20);
	kt.label = "GridSample huge and NaN coordinates";
	kt_attr_string("padding_mode", "reflection");
	kt_input(OX_FLOAT, 4, D(1, 1, 2, 2), (const float[]) {1, 2, 3, 4});
	kt_input(OX_FLOAT, 4, D(1, 1, 3, 2), (const float[]) {1e30f, -1e30f, INFINITY, 0, NAN, 0});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_ok();
	if (kt.rc == OX_OK && !isnan(OX_DATA(kt_output(0), float)[2]))
		kt_fail("NaN coordinate gave %s%g%g", "", OX_DATA(kt_output(0), float)[2], 0);
	kt_end();

	kt_begin("GridSample", "", 20);
	kt.label = "GridSample zeros padding far outside";
	kt_attr_string("mode", "cubic");
	kt_input(OX_FLOAT, 4, D(1, 1, 2, 2), (const float[]) {1, 2, 3, 4});
	kt_input(OX_FLOAT, 4, D(1, 1, 1, 2), (const float[]) {1e30f, -1e30f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_f32(0, 4, D(1, 1, 1, 1), (const float[]) {0}, 0);
	kt_end();
}

static void
affine_grid_cases(void)
{
	kt_begin("AffineGrid", "", 20);
	kt.label = "AffineGrid theta/size mismatch";
	kt_input(OX_FLOAT, 3, D(2, 2, 3), NULL);
	kt_input_i64(1, D(4), (const int64_t[]) {3, 1, 2, 2});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("AffineGrid", "", 20);
	kt.label = "AffineGrid negative size";
	kt_input(OX_FLOAT, 3, D(1, 2, 3), (const float[]) {1, 0, 0, 0, 1, 0});
	kt_input_i64(1, D(4), (const int64_t[]) {1, 1, -2, 2});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("AffineGrid", "", 20);
	kt.label = "AffineGrid identity 1x1 align_corners";
	kt_attr_int("align_corners", 1);
	kt_input(OX_DOUBLE, 3, D(1, 2, 3), (const double[]) {1, 0, 0.5, 0, 1, -0.5});
	kt_input_i64(1, D(4), (const int64_t[]) {1, 1, 1, 2});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_values(0, OX_DOUBLE, 4, D(1, 1, 2, 2), (const double[]) {-0.5, -0.5, 1.5, -0.5}, 1e-12);
	kt_end();
}

static void
nms_cases(void)
{
	static const float boxes[] = {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f,
	0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100, 1, 101};
	static const float scores[] = {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f};

	kt_begin("NonMaxSuppression", "", 11);
	kt.label = "NonMaxSuppression suppress by IOU and scores";
	kt_input_f32(3, D(1, 6, 4), boxes);
	kt_input_f32(3, D(1, 1, 6), scores);
	kt_input_i64(1, D(1), (const int64_t[]) {3});
	kt_input_f32(1, D(1), (const float[]) {0.5f});
	kt_input_f32(1, D(1), (const float[]) {0.4f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_i64(0, 2, D(2, 3), (const int64_t[]) {0, 0, 3, 0, 0, 0});
	kt_end();

	kt_begin("NonMaxSuppression", "", 11);
	kt.label = "NonMaxSuppression no score threshold, two classes";
	kt_input_f32(3, D(1, 6, 4), boxes);
	kt_input(OX_FLOAT, 3, D(1, 2, 6), (const float[]) {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f,
	0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f});
	kt_input_i64(1, D(1), (const int64_t[]) {2});
	kt_input_f32(1, D(1), (const float[]) {0.5f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_i64(0, 2, D(4, 3), (const int64_t[]) {0, 0, 3, 0, 0, 0, 0, 1, 3, 0, 1, 0});
	kt_end();

	kt_begin("NonMaxSuppression", "", 11);
	kt.label = "NonMaxSuppression center_point_box";
	kt_attr_int("center_point_box", 1);
	kt_input_f32(3, D(1, 3, 4), (const float[]) {0.5f, 0.5f, 1, 1, 0.5f, 0.6f, 1, 1, 0.5f, 10.5f, 1, 1});
	kt_input_f32(3, D(1, 1, 3), (const float[]) {0.9f, 0.95f, 0.5f});
	kt_input_i64(1, D(1), (const int64_t[]) {10});
	kt_input_f32(1, D(1), (const float[]) {0.5f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_i64(0, 2, D(2, 3), (const int64_t[]) {0, 0, 1, 0, 0, 2});
	kt_end();

	kt_begin("NonMaxSuppression", "", 11);
	kt.label = "NonMaxSuppression default max_output is 0";
	kt_input_f32(3, D(1, 6, 4), boxes);
	kt_input_f32(3, D(1, 1, 6), scores);
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_i64(0, 2, D(0, 3), (const int64_t[]) {0});
	kt_end();

	kt_begin("NonMaxSuppression", "", 11);
	kt.label = "NonMaxSuppression scores shape mismatch";
	kt_input_f32(3, D(1, 6, 4), boxes);
	kt_input_f32(3, D(1, 1, 5), scores);
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("NonMaxSuppression", "", 11);
	kt.label = "NonMaxSuppression iou_threshold out of range";
	kt_input_f32(3, D(1, 6, 4), boxes);
	kt_input_f32(3, D(1, 1, 6), scores);
	kt_input_i64(1, D(1), (const int64_t[]) {3});
	kt_input_f32(1, D(1), (const float[]) {1.5f});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();
}

static void
center_crop_pad_cases(void)
{
	kt_begin("CenterCropPad", "", 18);
	kt.label = "CenterCropPad crop and pad int32";
	kt_input(OX_INT32, 2, D(3, 4), (const int32_t[]) {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
	kt_input_i64(1, D(2), (const int64_t[]) {6, 1});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_values(0, OX_INT32, 2, D(6, 1), (const int32_t[]) {0, 2, 6, 10, 0, 0}, 0);
	kt_end();

	kt_begin("CenterCropPad", "", 18);
	kt.label = "CenterCropPad negative axes, strings";
	kt_attr_ints("axes", 1, D(-1));
	kt_input_strings(2, D(2, 3), (const char *[]) {"a", "b", "c", "d", "e", "f"});
	kt_input(OX_INT32, 1, D(1), (const int32_t[]) {4});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	if (kt_check_shape(0, OX_STRING, 2, D(2, 4)))
	{
		const ox_string *s = kt_output(0)->data;
		const char *want[] = {"a", "b", "c", "", "d", "e", "f", ""};

		for (int i = 0; i < 8; i++)
			if (strcmp(s[i].data ? s[i].data : "", want[i]) != 0)
				kt_fail("string %s%g differs%g", want[i], i, 0);
	}
	kt_end();

	kt_begin("CenterCropPad", "", 18);
	kt.label = "CenterCropPad shape length mismatch";
	kt_input(OX_FLOAT, 2, D(2, 2), (const float[]) {1, 2, 3, 4});
	kt_input_i64(1, D(1), (const int64_t[]) {1});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("CenterCropPad", "", 18);
	kt.label = "CenterCropPad negative target";
	kt_input(OX_FLOAT, 1, D(2), (const float[]) {1, 2});
	kt_input_i64(1, D(1), (const int64_t[]) {-1});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("CenterCropPad", "", 18);
	kt.label = "CenterCropPad repeated axis";
	kt_attr_ints("axes", 2, D(0, -2));
	kt_input(OX_FLOAT, 2, D(2, 2), (const float[]) {1, 2, 3, 4});
	kt_input_i64(1, D(2), (const int64_t[]) {1, 1});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();
}

static void
tensor_scatter_cases(void)
{
	kt_begin("TensorScatter", "", 24);
	kt.label = "TensorScatter linear";
	kt_input_f32(3, D(2, 4, 1), (const float[]) {0, 0, 0, 0, 0, 0, 0, 0});
	kt_input_f32(3, D(2, 2, 1), (const float[]) {1, 2, 3, 4});
	kt_input_i64(1, D(2), (const int64_t[]) {2, 0});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_f32(0, 3, D(2, 4, 1), (const float[]) {0, 0, 1, 2, 3, 4, 0, 0}, 0);
	kt_end();

	kt_begin("TensorScatter", "", 24);
	kt.label = "TensorScatter circular, axis 1, no indices then indices";
	kt_attr_string("mode", "circular");
	kt_attr_int("axis", 1);
	kt_input_i64(2, D(2, 3), (const int64_t[]) {0, 0, 0, 0, 0, 0});
	kt_input_i64(2, D(2, 2), (const int64_t[]) {1, 2, 3, 4});
	kt_input_i64(1, D(2), (const int64_t[]) {2, -1});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_i64(0, 2, D(2, 3), (const int64_t[]) {2, 0, 1, 4, 0, 3});
	kt_end();

	kt_begin("TensorScatter", "", 24);
	kt.label = "TensorScatter strings";
	kt_input_strings(2, D(1, 3), (const char *[]) {"a", "b", "c"});
	kt_input_strings(2, D(1, 1), (const char *[]) {"z"});
	kt_input_i64(1, D(1), (const int64_t[]) {1});
	kt_attr_int("axis", -1);
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	if (kt_check_shape(0, OX_STRING, 2, D(1, 3)))
	{
		const ox_string *s = kt_output(0)->data;

		if (strcmp(s[0].data, "a") || strcmp(s[1].data, "z") || strcmp(s[2].data, "c"))
			kt_fail("strings %s%g%g", s[1].data, 0, 0);
	}
	kt_end();

	kt_begin("TensorScatter", "", 24);
	kt.label = "TensorScatter linear overflow";
	kt_input_f32(3, D(1, 4, 1), NULL);
	kt_input_f32(3, D(1, 2, 1), (const float[]) {1, 2});
	kt_input_i64(1, D(1), (const int64_t[]) {3});
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("TensorScatter", "", 24);
	kt.label = "TensorScatter axis 0 refused";
	kt_attr_int("axis", 0);
	kt_input_f32(2, D(2, 2), NULL);
	kt_input_f32(2, D(1, 2), NULL);
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("TensorScatter", "", 24);
	kt.label = "TensorScatter shape mismatch";
	kt_input_f32(3, D(1, 4, 2), NULL);
	kt_input_f32(3, D(1, 2, 3), NULL);
	kt_run(ox_kernels_vision, ox_kernels_vision_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();
}

int
main(void)
{
	gen_1();
	gen_2();
	gen_3();
	gen_4();
	gen_5();
	gen_6();
	gen_7();
	gen_8();
	gen_9();
	gen_10();
	gen_11();
	gen_12();
	gen_13();
	gen_14();
	gen_15();
	gen_16();
	gen_17();
	gen_18();
	gen_19();
	gen_20();
	gen_21();
	gen_22();
	gen_23();
	gen_24();
	gen_25();
	gen_26();
	gen_27();
	grid_sample_cases();
	affine_grid_cases();
	nms_cases();
	center_crop_pad_cases();
	tensor_scatter_cases();
	return kt_summary();
}
