/*
 * test_preview.c
 *	  Unit tests of the preview kernel family, part one: BitCast, Swish and
 *	  CausalConvWithState.
 *
 * The expected values in generated_cases() were computed with the ONNX
 * reference implementation (onnx.reference, onnx 1.22) on random inputs.
 * The hand-written cases cover bit patterns, edge shapes and the errors
 * every kernel must report instead of touching memory.  LinearAttention and
 * FlexAttention are in test_preview_attention.c, the ai.onnx.preview.training
 * optimizers in test_preview_training.c.
 */
#include "kernel_test.h"

#define P_TABLE ox_kernels_preview, ox_kernels_preview_count

static void
generated_cases(void)
{
	/* swish float alpha 1 */
	{
		static const int64_t di0[] = {7};
		static const float xi0[] = {
			-30.0f, -2.5f, -1.0f, 0.0f, 0.5f, 3.0f,
			40.0f,
		};
		static const int64_t do0[] = {7};
		static const float xo0[] = {
			-2.80728717e-12f, -0.189645454f, -0.268941402f, 0.0f, 0.311229676f, 2.85772228f,
			40.0f,
		};
		kt_begin("Swish", "", 24);
		kt.label = "swish float alpha 1";
		kt_input(OX_FLOAT, 1, di0, xi0);
		kt_run(P_TABLE, 1);
		kt_expect_values(0, OX_FLOAT, 1, do0, xo0, 1e-06);
		kt_end();
	}

	/* swish float alpha 0.5 */
	{
		static const int64_t di0[] = {2, 3};
		static const float xi0[] = {
			0.00123015337f, 0.298745543f, -0.274137855f, -0.89059186f, -0.454670787f, -0.991646528f,
		};
		static const int64_t do0[] = {2, 3};
		static const float xo0[] = {
			0.000615265861f, 0.160508171f, -0.127689645f, -0.347758144f, -0.201605424f, -0.375360757f,
		};
		kt_begin("Swish", "", 24);
		kt.label = "swish float alpha 0.5";
		kt_attr_float("alpha", 0.5f);
		kt_input(OX_FLOAT, 2, di0, xi0);
		kt_run(P_TABLE, 1);
		kt_expect_values(0, OX_FLOAT, 2, do0, xo0, 1e-06);
		kt_end();
	}

	/* swish double */
	{
		static const int64_t di0[] = {4};
		static const double xi0[] = {
			0.060143602597438485, 1.3402152455545335, -0.49220651855132963, -0.62047489981994042,
		};
		static const int64_t do0[] = {4};
		static const double xo0[] = {
			0.031427351891676163, 1.1819045438972131, -0.15916672149160385, -0.17545802652909323,
		};
		kt_begin("Swish", "", 24);
		kt.label = "swish double";
		kt_attr_float("alpha", 1.5f);
		kt_input(OX_DOUBLE, 1, di0, xi0);
		kt_run(P_TABLE, 1);
		kt_expect_values(0, OX_DOUBLE, 1, do0, xo0, 1e-12);
		kt_end();
	}

	/* swish float16 */
	{
		static const int64_t di0[] = {5};
		static const uint16_t xi0[] = {
			14294, 13750, 11967, 47986, 42877,
		};
		static const int64_t do0[] = {5};
		static const uint16_t xo0[] = {
			13532, 12984, 11034, 46134, 41825,
		};
		kt_begin("Swish", "", 24);
		kt.label = "swish float16";
		kt_input(OX_FLOAT16, 1, di0, xi0);
		kt_run(P_TABLE, 1);
		kt_expect_values(0, OX_FLOAT16, 1, do0, xo0, 0.002);
		kt_end();
	}

	/* causal conv basic */
	{
		static const int64_t di0[] = {1, 2, 5};
		static const float xi0[] = {
			0.695303202f, -1.34421456f, -0.457615763f, -1.90122271f, -1.28953779f, -1.84173501f,
			-0.235091135f, -1.26744652f, 0.271264344f, 0.156751081f,
		};
		static const int64_t di1[] = {2, 1, 3};
		static const float xi1[] = {
			-0.18693094f, -2.51675963f, -0.538692892f, -0.0485009439f, 0.113308989f, -1.53013575f,
		};
		static const int64_t do0[] = {1, 2, 5};
		static const float xo0[] = {
			-0.374554902f, -1.02579224f, 3.49960566f, 2.42715931f, 5.56512785f, 2.81810451f,
			0.151036233f, 2.00205326f, -0.547282219f, -0.147641391f,
		};
		static const int64_t do1[] = {1, 2, 2};
		static const float xo1[] = {
			-1.90122271f, -1.28953779f, 0.271264344f, 0.156751081f,
		};
		kt_begin("CausalConvWithState", "", 27);
		kt.label = "causal conv basic";
		kt_input(OX_FLOAT, 3, di0, xi0);
		kt_input(OX_FLOAT, 3, di1, xi1);
		kt_run(P_TABLE, 2);
		kt_expect_values(0, OX_FLOAT, 3, do0, xo0, 1e-05);
		kt_expect_values(1, OX_FLOAT, 3, do1, xo1, 1e-05);
		kt_end();
	}

	/* causal conv bias past silu */
	{
		static const int64_t di0[] = {2, 3, 4};
		static const float xi0[] = {
			-0.477753282f, -0.978519082f, -0.808837235f, 1.06089866f, -0.807534695f, -0.0325217061f,
			0.884389877f, -0.583600461f, -0.11170195f, 0.110464141f, 0.0637817755f, -1.22505581f,
			0.0761402324f, 1.35882342f, -1.54714465f, 0.859382689f, 0.119354025f, -0.641470373f,
			2.00041652f, 0.762259722f, -1.19928885f, 0.0745162293f, 0.576689601f, -0.188782126f,
		};
		static const int64_t di1[] = {3, 1, 3};
		static const float xi1[] = {
			0.682910264f, -0.0665173233f, 0.667247534f, 1.43852258f, -0.675662279f, 0.203138605f,
			-0.463307589f, 0.127268419f, -1.18719459f,
		};
		static const int64_t di2[] = {3};
		static const float xi2[] = {
			-0.579301596f, -0.196195975f, 0.898763895f,
		};
		static const int64_t di3[] = {2, 3, 2};
		static const float xi3[] = {
			1.14522195f, -1.32352781f, -0.794642389f, 0.646903396f, -1.99241984f, -0.463169873f,
			-0.0972869247f, 1.25701499f, 0.689403892f, -0.327213407f, -0.368575901f, -0.250195414f,
		};
		static const int64_t do0[] = {2, 3, 4};
		static const float xo0[] = {
			-0.0137845455f, -0.228695586f, -0.27738893f, -0.185048804f, -0.243718654f, 0.994941771f,
			-0.276746988f, -0.265725046f, 1.64794719f, 0.70152545f, 0.629889131f, 2.10150123f,
			-0.228389531f, 0.903355479f, -0.265828609f, 0.754330695f, 0.769210458f, -0.257757425f,
			0.565176487f, -0.208018973f, 2.26799488f, 0.529360592f, 0.53418535f, 0.884852886f,
		};
		static const int64_t do1[] = {2, 3, 2};
		static const float xo1[] = {
			-0.808837235f, 1.06089866f, 0.884389877f, -0.583600461f, 0.0637817755f, -1.22505581f,
			-1.54714465f, 0.859382689f, 2.00041652f, 0.762259722f, 0.576689601f, -0.188782126f,
		};
		kt_begin("CausalConvWithState", "", 27);
		kt.label = "causal conv bias past silu";
		kt_attr_string("activation", "silu");
		kt_input(OX_FLOAT, 3, di0, xi0);
		kt_input(OX_FLOAT, 3, di1, xi1);
		kt_input(OX_FLOAT, 1, di2, xi2);
		kt_input(OX_FLOAT, 3, di3, xi3);
		kt_run(P_TABLE, 2);
		kt_expect_values(0, OX_FLOAT, 3, do0, xo0, 1e-05);
		kt_expect_values(1, OX_FLOAT, 3, do1, xo1, 1e-05);
		kt_end();
	}

	/* causal conv short input past */
	{
		static const int64_t di0[] = {1, 2, 2};
		static const float xi0[] = {
			1.52352941f, -0.428024948f, -0.30368039f, 0.352589071f,
		};
		static const int64_t di1[] = {2, 1, 4};
		static const float xi1[] = {
			-0.120770447f, -0.197284222f, -1.1140672f, -0.0115214679f, -0.443581223f, 1.1661278f,
			0.65308851f, -0.0241436139f,
		};
		static const int64_t di3[] = {1, 2, 3};
		static const float xi3[] = {
			0.668381035f, -0.339869559f, 1.05212641f, -0.00539956056f, 0.583382368f, -1.2908932f,
		};
		static const int64_t do0[] = {1, 2, 2};
		static const float xo0[] = {
			-1.20336258f, -1.85890436f, -0.153042048f, -1.97096682f,
		};
		static const int64_t do1[] = {1, 2, 3};
		static const float xo1[] = {
			1.05212641f, 1.52352941f, -0.428024948f, -1.2908932f, -0.30368039f, 0.352589071f,
		};
		kt_begin("CausalConvWithState", "", 27);
		kt.label = "causal conv short input past";
		kt_input(OX_FLOAT, 3, di0, xi0);
		kt_input(OX_FLOAT, 3, di1, xi1);
		kt_input_none();
		kt_input(OX_FLOAT, 3, di3, xi3);
		kt_run(P_TABLE, 2);
		kt_expect_values(0, OX_FLOAT, 3, do0, xo0, 1e-05);
		kt_expect_values(1, OX_FLOAT, 3, do1, xo1, 1e-05);
		kt_end();
	}

	/* causal conv k1 */
	{
		static const int64_t di0[] = {1, 2, 3};
		static const float xi0[] = {
			0.346680045f, -1.68820417f, -2.03532887f, -0.304476887f, -0.899927616f, 0.164052799f,
		};
		static const int64_t di1[] = {2, 1, 1};
		static const float xi1[] = {
			2.2447567f, -0.831723154f,
		};
		static const int64_t di2[] = {2};
		static const float xi2[] = {
			-0.623943567f, 0.205403939f,
		};
		static const int64_t do0[] = {1, 2, 3};
		static const float xo0[] = {
			0.083072342f, -0.0528175905f, -0.0286948644f, 0.281008035f, 0.688614368f, 0.0356670283f,
		};
		static const int64_t do1[] = {1, 2, 0};
		static const float xo1[] = {
			0,
		};
		kt_begin("CausalConvWithState", "", 27);
		kt.label = "causal conv k1";
		kt_attr_string("activation", "swish");
		kt_input(OX_FLOAT, 3, di0, xi0);
		kt_input(OX_FLOAT, 3, di1, xi1);
		kt_input(OX_FLOAT, 1, di2, xi2);
		kt_run(P_TABLE, 2);
		kt_expect_values(0, OX_FLOAT, 3, do0, xo0, 1e-05);
		kt_expect_values(1, OX_FLOAT, 3, do1, xo1, 1e-05);
		kt_end();
	}

	/* causal conv float16 */
	{
		static const int64_t di0[] = {1, 2, 4};
		static const uint16_t xi0[] = {
			14307, 45477, 45719, 14751, 14377, 48162,
			44305, 10372,
		};
		static const int64_t di1[] = {2, 1, 2};
		static const uint16_t xi1[] = {
			48184, 13352, 47837, 15303,
		};
		static const int64_t do0[] = {1, 2, 4};
		static const uint16_t xo0[] = {
			12313, 47239, 12350, 13925, 14347, 48589,
			14970, 11915,
		};
		static const int64_t do1[] = {1, 2, 1};
		static const uint16_t xo1[] = {
			14751, 10372,
		};
		kt_begin("CausalConvWithState", "", 27);
		kt.label = "causal conv float16";
		kt_input(OX_FLOAT16, 3, di0, xi0);
		kt_input(OX_FLOAT16, 3, di1, xi1);
		kt_run(P_TABLE, 2);
		kt_expect_values(0, OX_FLOAT16, 3, do0, xo0, 0.002);
		kt_expect_values(1, OX_FLOAT16, 3, do1, xo1, 0.002);
		kt_end();
	}
}

/* ---- BitCast ------------------------------------------------------------- */

static void
bitcast_cases(void)
{
	{
		static const int64_t d[] = {2, 2};
		static const float x[] = {1.0f, -2.0f, 0.0f, -0.0f};
		static const int32_t want[] = {0x3f800000, (int32_t) 0xc0000000, 0, INT32_MIN};

		kt_begin("BitCast", "", 26);
		kt.label = "bitcast float to int32";
		kt_attr_int("to", OX_INT32);
		kt_input(OX_FLOAT, 2, d, x);
		kt_run(P_TABLE, 1);
		kt_expect_values(0, OX_INT32, 2, d, want, 0);
		kt_end();
	}
	{
		static const int64_t d[] = {2};
		static const int64_t x[] = {0x3FF8000000000000LL, (int64_t) 0xC000000000000000ULL};
		static const double want[] = {1.5, -2.0};

		kt_begin("BitCast", "", 26);
		kt.label = "bitcast int64 to double";
		kt_attr_int("to", OX_DOUBLE);
		kt_input(OX_INT64, 1, d, x);
		kt_run(P_TABLE, 1);
		kt_expect_values(0, OX_DOUBLE, 1, d, want, 0);
		kt_end();
	}
	{
		static const int64_t d[] = {3};
		static const uint8_t x[] = {1, 0, 1};
		static const uint8_t want[] = {1, 0, 1};

		kt_begin("BitCast", "", 26);
		kt.label = "bitcast bool to uint8";
		kt_attr_int("to", OX_UINT8);
		kt_input(OX_BOOL, 1, d, x);
		kt_run(P_TABLE, 1);
		kt_expect_values(0, OX_UINT8, 1, d, want, 0);
		kt_end();
	}
	{
		static const int64_t d[] = {3};
		static const uint16_t x[] = {0x3c00, 0xc000, 0x7c00};
		static const int16_t want[] = {0x3c00, (int16_t) 0xc000, 0x7c00};

		kt_begin("BitCast", "", 26);
		kt.label = "bitcast float16 to int16";
		kt_attr_int("to", OX_INT16);
		kt_input(OX_FLOAT16, 1, d, x);
		kt_run(P_TABLE, 1);
		kt_expect_values(0, OX_INT16, 1, d, want, 0);
		kt_end();
	}
	{
		static const float x[] = {-1.0f};
		static const uint32_t want[] = {0xbf800000u};

		kt_begin("BitCast", "", 26);
		kt.label = "bitcast scalar float to uint32";
		kt_attr_int("to", OX_UINT32);
		kt_input(OX_FLOAT, 0, NULL, x);
		kt_run(P_TABLE, 1);
		kt_expect_values(0, OX_UINT32, 0, NULL, want, 0);
		kt_end();
	}
	{
		static const int64_t d[] = {0, 3};

		kt_begin("BitCast", "", 26);
		kt.label = "bitcast empty tensor";
		kt_attr_int("to", OX_FLOAT);
		kt_input(OX_INT32, 2, d, NULL);
		kt_run(P_TABLE, 1);
		kt_check_shape(0, OX_FLOAT, 2, d);
		kt_end();
	}
	{
		static const int64_t d[] = {2};
		static const float x[] = {1, 2};

		kt_begin("BitCast", "", 26);
		kt.label = "bitcast width mismatch";
		kt_attr_int("to", OX_INT64);
		kt_input(OX_FLOAT, 1, d, x);
		kt_run(P_TABLE, 1);
		kt_expect_error(OX_INVALID_ARGUMENT);
		kt_end();

		kt_begin("BitCast", "", 26);
		kt.label = "bitcast to string";
		kt_attr_int("to", OX_STRING);
		kt_input(OX_FLOAT, 1, d, x);
		kt_run(P_TABLE, 1);
		kt_expect_error(OX_INVALID_ARGUMENT);
		kt_end();

		kt_begin("BitCast", "", 26);
		kt.label = "bitcast to an unknown type";
		kt_attr_int("to", 99);
		kt_input(OX_UINT8, 1, d, NULL);
		kt_run(P_TABLE, 1);
		kt_expect_error(OX_UNSUPPORTED);
		kt_end();

		kt_begin("BitCast", "", 26);
		kt.label = "bitcast int8 to int4";
		kt_attr_int("to", OX_INT4);
		kt_input(OX_INT8, 1, d, NULL);
		kt_run(P_TABLE, 1);
		kt_expect_error(OX_INVALID_ARGUMENT);
		kt_end();

		kt_begin("BitCast", "", 26);
		kt.label = "bitcast without to";
		kt_input(OX_FLOAT, 1, d, x);
		kt_run(P_TABLE, 1);
		kt_expect_error(OX_INVALID_MODEL);
		kt_end();

		kt_begin("BitCast", "", 25);
		kt.label = "bitcast before opset 26";
		kt_attr_int("to", OX_INT32);
		kt_input(OX_FLOAT, 1, d, x);
		kt_run(P_TABLE, 1);
		kt_expect_error(OX_UNSUPPORTED);
		kt_end();
	}
	{
		static const int64_t d[] = {1};
		static const char *s[] = {"abc"};

		kt_begin("BitCast", "", 26);
		kt.label = "bitcast from string";
		kt_attr_int("to", OX_UINT64);
		kt_input_strings(1, d, s);
		kt_run(P_TABLE, 1);
		kt_expect_error(OX_INVALID_ARGUMENT);
		kt_end();
	}
}

/* BitCast between one-byte-per-element narrow types, checked byte by byte */
static void
bitcast_narrow(const char *label, ox_dtype from, ox_dtype to, const uint8_t *x, const uint8_t *want, int n)
{
	int64_t		d[1] = {n};

	kt_begin("BitCast", "", 26);
	kt.label = label;
	kt_attr_int("to", to);
	kt_input(from, 1, d, x);
	kt_run(P_TABLE, 1);
	if (kt_check_shape(0, to, 1, d) && memcmp(kt_output(0)->data, want, n) != 0)
		kt_fail("%s%.0f%.0f: bytes differ", "", 0, 0);
	kt_end();
}

static void
bitcast_narrow_cases(void)
{
	static const uint8_t bytes[] = {0x00, 0x38, 0x7f, 0x80, 0xff};
	static const uint8_t int4[] = {0xff, 0xf8, 0x07, 0x00};	/* -1, -8, 7, 0 sign-extended */
	static const uint8_t uint4[] = {0x0f, 0x08, 0x07, 0x00};
	static const uint8_t u8[] = {0, 1, 2, 255};
	static const uint8_t b01[] = {0, 1, 1, 1};

	bitcast_narrow("bitcast uint8 to float8e4m3fn", OX_UINT8, OX_FLOAT8E4M3FN, bytes, bytes, 5);
	bitcast_narrow("bitcast float8e5m2 to int8", OX_FLOAT8E5M2, OX_INT8, bytes, bytes, 5);
	bitcast_narrow("bitcast int4 to uint4", OX_INT4, OX_UINT4, int4, uint4, 4);
	bitcast_narrow("bitcast uint4 to int4", OX_UINT4, OX_INT4, uint4, int4, 4);
	bitcast_narrow("bitcast uint8 to bool", OX_UINT8, OX_BOOL, u8, b01, 4);
}

/* ---- Swish --------------------------------------------------------------- */

static void
swish_cases(void)
{
	static const int64_t d[] = {4};

	{
		static const float x[] = {-1000.0f, 1000.0f, -INFINITY, INFINITY};
		static const float want[] = {0.0f, 1000.0f, NAN, INFINITY};

		/* -inf * sigmoid(-inf) is -inf * 0: NaN, as in the reference */
		kt_begin("Swish", "", 24);
		kt.label = "swish extremes";
		kt_input(OX_FLOAT, 1, d, x);
		kt_run(P_TABLE, 1);
		kt_expect_f32(0, 1, d, want, 0);
		kt_end();
	}
	{
		static const int64_t e[] = {0};

		kt_begin("Swish", "", 24);
		kt.label = "swish empty";
		kt_input(OX_FLOAT, 1, e, NULL);
		kt_run(P_TABLE, 1);
		kt_check_shape(0, OX_FLOAT, 1, e);
		kt_end();
	}
	{
		static const int32_t x[] = {1, 2, 3, 4};

		kt_begin("Swish", "", 24);
		kt.label = "swish int32";
		kt_input(OX_INT32, 1, d, x);
		kt_run(P_TABLE, 1);
		kt_expect_error(OX_UNSUPPORTED);
		kt_end();
	}
	{
		static const float x[] = {1, 2, 3, 4};

		kt_begin("Swish", "", 24);
		kt.label = "swish infinite alpha";
		kt_attr_float("alpha", INFINITY);
		kt_input(OX_FLOAT, 1, d, x);
		kt_run(P_TABLE, 1);
		kt_expect_error(OX_INVALID_ARGUMENT);
		kt_end();

		kt_begin("Swish", "", 23);
		kt.label = "swish before opset 24";
		kt_input(OX_FLOAT, 1, d, x);
		kt_run(P_TABLE, 1);
		kt_expect_error(OX_UNSUPPORTED);
		kt_end();
	}
}

/* ---- CausalConvWithState ------------------------------------------------- */

static void
causal_conv_cases(void)
{
	static const float x[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
	static const float w[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

	{
		/* empty input: present_state is the past state unchanged */
		static const int64_t xd[] = {1, 2, 0};
		static const int64_t wd[] = {2, 1, 3};
		static const int64_t pd[] = {1, 2, 2};
		static const float past[] = {1, 2, 3, 4};

		kt_begin("CausalConvWithState", "", 27);
		kt.label = "causal conv empty input";
		kt_input(OX_FLOAT, 3, xd, NULL);
		kt_input(OX_FLOAT, 3, wd, w);
		kt_input_none();
		kt_input(OX_FLOAT, 3, pd, past);
		kt_run(P_TABLE, 2);
		kt_check_shape(0, OX_FLOAT, 3, xd);
		kt_expect_f32(1, 3, pd, past, 0);
		kt_end();
	}
	{
		/* by hand: y[t] = 1 * x[t-1] + 2 * x[t] over a zero past */
		static const int64_t xd[] = {1, 1, 3};
		static const int64_t wd[] = {1, 1, 2};
		static const int64_t pd[] = {1, 1, 1};
		static const float want[] = {2, 5, 8};
		static const float want_state[] = {3};

		kt_begin("CausalConvWithState", "", 27);
		kt.label = "causal conv by hand";
		kt_input(OX_FLOAT, 3, xd, x);
		kt_input(OX_FLOAT, 3, wd, w);
		kt_run(P_TABLE, 2);
		kt_expect_f32(0, 3, xd, want, 1e-6);
		kt_expect_f32(1, 3, pd, want_state, 0);
		kt_end();
	}
	{
		static const int64_t xd[] = {1, 2, 3};
		static const int64_t x2[] = {2, 3};
		static const int64_t wd[] = {2, 1, 3};
		static const int64_t wbad[] = {2, 2, 3};
		static const int64_t wchan[] = {3, 1, 3};
		static const int64_t wk0[] = {2, 1, 0};
		static const int64_t bd[] = {3};
		static const int64_t pbad[] = {1, 2, 3};
		static const struct
		{
			const char *label;
			const int64_t *xd;
			int			xr;
			const int64_t *wd;
			const int64_t *bd;
			const int64_t *pd;
			ox_dtype	wdt;
			ox_code		code;
		}			bad[] = {
			{"causal conv rank-2 input", x2, 2, wd, NULL, NULL, OX_FLOAT, OX_INVALID_ARGUMENT},
			{"causal conv weight middle dim", xd, 3, wbad, NULL, NULL, OX_FLOAT, OX_INVALID_ARGUMENT},
			{"causal conv weight channels", xd, 3, wchan, NULL, NULL, OX_FLOAT, OX_INVALID_ARGUMENT},
			{"causal conv kernel size 0", xd, 3, wk0, NULL, NULL, OX_FLOAT, OX_INVALID_ARGUMENT},
			{"causal conv bias size", xd, 3, wd, bd, NULL, OX_FLOAT, OX_INVALID_ARGUMENT},
			{"causal conv past shape", xd, 3, wd, NULL, pbad, OX_FLOAT, OX_INVALID_ARGUMENT},
			{"causal conv mixed types", xd, 3, wd, NULL, NULL, OX_FLOAT16, OX_INVALID_ARGUMENT},
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		{
			kt_begin("CausalConvWithState", "", 27);
			kt.label = bad[i].label;
			kt_input(OX_FLOAT, bad[i].xr, bad[i].xd, x);
			kt_input(bad[i].wdt, 3, bad[i].wd, w);
			if (bad[i].bd)
				kt_input(OX_FLOAT, 1, bad[i].bd, w);
			else
				kt_input_none();
			if (bad[i].pd)
				kt_input(OX_FLOAT, 3, bad[i].pd, w);
			kt_run(P_TABLE, 2);
			kt_expect_error(bad[i].code);
			kt_end();
		}

		kt_begin("CausalConvWithState", "", 27);
		kt.label = "causal conv double";
		kt_input(OX_DOUBLE, 3, xd, NULL);
		kt_input(OX_DOUBLE, 3, wd, NULL);
		kt_run(P_TABLE, 2);
		kt_expect_error(OX_UNSUPPORTED);
		kt_end();

		kt_begin("CausalConvWithState", "", 27);
		kt.label = "causal conv unknown activation";
		kt_attr_string("activation", "gelu");
		kt_input(OX_FLOAT, 3, xd, x);
		kt_input(OX_FLOAT, 3, wd, w);
		kt_run(P_TABLE, 2);
		kt_expect_error(OX_UNSUPPORTED);
		kt_end();
	}
}

int
main(void)
{
	generated_cases();
	bitcast_cases();
	bitcast_narrow_cases();
	swish_cases();
	causal_conv_cases();
	return kt_summary();
}
