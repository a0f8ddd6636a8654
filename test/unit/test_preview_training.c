/*
 * test_preview_training.c
 *	  Unit tests of the preview kernel family, training: the
 *	  ai.onnx.preview.training optimizers Momentum, Adam and Adagrad.
 *
 * The expected values in generated_cases() were computed with the ONNX
 * reference implementation (onnx.reference, onnx 1.22) on random inputs.
 * The hand-written cases cover the errors every optimizer must report
 * instead of touching memory.
 */
#include "kernel_test.h"

#define P_TABLE ox_kernels_preview, ox_kernels_preview_count

static void
generated_cases(void)
{
	/* momentum standard */
	{
		static const int64_t di0[] = {0};
		static const float xi0[] = {
			0.100000001f,
		};
		static const int64_t di1[] = {0};
		static const int64_t xi1[] = {
			3LL,
		};
		static const int64_t di2[] = {3};
		static const float xi2[] = {
			0.067034483f, 0.0298534874f, -0.565489948f,
		};
		static const int64_t di3[] = {3};
		static const float xi3[] = {
			-0.425945103f, 1.11333728f, 0.213827133f,
		};
		static const int64_t di4[] = {3};
		static const float xi4[] = {
			0.885094345f, 1.20182228f, 0.588842273f,
		};
		static const int64_t do0[] = {3};
		static const float xo0[] = {
			0.00863972679f, -0.133992299f, -0.628894329f,
		};
		static const int64_t do1[] = {3};
		static const float xo1[] = {
			0.583947539f, 1.63845789f, 0.634044111f,
		};
		kt_begin("Momentum", "ai.onnx.preview.training", 1);
		kt.label = "momentum standard";
		kt_attr_float("alpha", 0.9f);
		kt_attr_float("beta", 0.5f);
		kt_attr_string("mode", "standard");
		kt_attr_float("norm_coefficient", 0.01f);
		kt_input(OX_FLOAT, 0, di0, xi0);
		kt_input(OX_INT64, 0, di1, xi1);
		kt_input(OX_FLOAT, 1, di2, xi2);
		kt_input(OX_FLOAT, 1, di3, xi3);
		kt_input(OX_FLOAT, 1, di4, xi4);
		kt_run(P_TABLE, 2);
		kt_expect_values(0, OX_FLOAT, 1, do0, xo0, 1e-06);
		kt_expect_values(1, OX_FLOAT, 1, do1, xo1, 1e-06);
		kt_end();
	}

	/* momentum nesterov first step */
	{
		static const int64_t di0[] = {0};
		static const float xi0[] = {
			0.100000001f,
		};
		static const int64_t di1[] = {0};
		static const int64_t xi1[] = {
			0LL,
		};
		static const int64_t di2[] = {2, 2};
		static const float xi2[] = {
			2.27088642f, -0.825304031f, 0.808409572f, -0.318143964f,
		};
		static const int64_t di3[] = {2, 2};
		static const float xi3[] = {
			1.85578322f, 1.70044017f, -1.95421124f, -0.968866229f,
		};
		static const int64_t di4[] = {2, 2};
		static const float xi4[] = {
			0.664312899f, 0.789867222f, 0.736564219f, -0.0708653256f,
		};
		static const int64_t do0[] = {2, 2};
		static const float xo0[] = {
			1.86447835f, -1.21236694f, 1.12004805f, -0.128319278f,
		};
		static const int64_t do1[] = {2, 2};
		static const float xo1[] = {
			2.45366478f, 2.41132069f, -1.2913034f, -1.03264499f,
		};
		kt_begin("Momentum", "ai.onnx.preview.training", 1);
		kt.label = "momentum nesterov first step";
		kt_attr_float("alpha", 0.9f);
		kt_attr_float("beta", 0.5f);
		kt_attr_string("mode", "nesterov");
		kt_attr_float("norm_coefficient", 0.0f);
		kt_input(OX_FLOAT, 0, di0, xi0);
		kt_input(OX_INT64, 0, di1, xi1);
		kt_input(OX_FLOAT, 2, di2, xi2);
		kt_input(OX_FLOAT, 2, di3, xi3);
		kt_input(OX_FLOAT, 2, di4, xi4);
		kt_run(P_TABLE, 2);
		kt_expect_values(0, OX_FLOAT, 2, do0, xo0, 1e-06);
		kt_expect_values(1, OX_FLOAT, 2, do1, xo1, 1e-06);
		kt_end();
	}

	/* momentum two tensors double */
	{
		static const int64_t di0[] = {0};
		static const double xi0[] = {
			0.050000000000000003,
		};
		static const int64_t di1[] = {0};
		static const int64_t xi1[] = {
			2LL,
		};
		static const int64_t di2[] = {2};
		static const double xi2[] = {
			0.45512082456347686, 0.65302143578632332,
		};
		static const int64_t di3[] = {3};
		static const double xi3[] = {
			-0.077871269537323914, 1.0273019683616285, -2.2594972491090459,
		};
		static const int64_t di4[] = {2};
		static const double xi4[] = {
			0.6337935195699923, -1.0340526122857261,
		};
		static const int64_t di5[] = {3};
		static const double xi5[] = {
			0.95867780796938917, -0.22868442489120011, -0.88878727108402455,
		};
		static const int64_t di6[] = {2};
		static const double xi6[] = {
			0.37390215674424337, -0.91133349784576667,
		};
		static const int64_t di7[] = {3};
		static const double xi7[] = {
			-0.91276789755539411, -1.5672943559530921, -0.026707754798113225,
		};
		static const int64_t do0[] = {2};
		static const double xo0[] = {
			0.42997515362537853, 0.70400603383678162,
		};
		static const int64_t do1[] = {3};
		static const double xo1[] = {
			-0.055623913871325398, 1.0918830570068705, -2.2417078832463395,
		};
		static const int64_t do2[] = {2};
		static const double xo2[] = {
			0.50291341876196638, -1.0196919610091655,
		};
		static const int64_t do3[] = {3};
		static const double xo3[] = {
			-0.44494711331997039, -1.2916217729048411, -0.3557873172541251,
		};
		kt_begin("Momentum", "ai.onnx.preview.training", 1);
		kt.label = "momentum two tensors double";
		kt_attr_float("alpha", 0.8f);
		kt_attr_float("beta", 0.3f);
		kt_attr_string("mode", "standard");
		kt_attr_float("norm_coefficient", 0.1f);
		kt_input(OX_DOUBLE, 0, di0, xi0);
		kt_input(OX_INT64, 0, di1, xi1);
		kt_input(OX_DOUBLE, 1, di2, xi2);
		kt_input(OX_DOUBLE, 1, di3, xi3);
		kt_input(OX_DOUBLE, 1, di4, xi4);
		kt_input(OX_DOUBLE, 1, di5, xi5);
		kt_input(OX_DOUBLE, 1, di6, xi6);
		kt_input(OX_DOUBLE, 1, di7, xi7);
		kt_run(P_TABLE, 4);
		kt_expect_values(0, OX_DOUBLE, 1, do0, xo0, 1e-12);
		kt_expect_values(1, OX_DOUBLE, 1, do1, xo1, 1e-12);
		kt_expect_values(2, OX_DOUBLE, 1, do2, xo2, 1e-12);
		kt_expect_values(3, OX_DOUBLE, 1, do3, xo3, 1e-12);
		kt_end();
	}

	/* adam defaults */
	{
		static const int64_t di0[] = {0};
		static const float xi0[] = {
			0.100000001f,
		};
		static const int64_t di1[] = {0};
		static const int64_t xi1[] = {
			0LL,
		};
		static const int64_t di2[] = {3};
		static const float xi2[] = {
			0.496823519f, 1.02302599f, -0.141727865f,
		};
		static const int64_t di3[] = {3};
		static const float xi3[] = {
			1.04785526f, 0.0179609749f, -0.0932884812f,
		};
		static const int64_t di4[] = {3};
		static const float xi4[] = {
			0.57356292f, 1.05839276f, -0.341434449f,
		};
		static const int64_t di5[] = {3};
		static const float xi5[] = {
			0.243761629f, 0.160831407f, 0.0827691257f,
		};
		static const int64_t do0[] = {3};
		static const float xo0[] = {
			0.371265948f, 0.784937859f, -0.0316254571f,
		};
		static const int64_t do1[] = {3};
		static const float xo1[] = {
			0.620992184f, 0.954349577f, -0.316619843f,
		};
		static const int64_t do2[] = {3};
		static const float xo2[] = {
			0.244615868f, 0.160670906f, 0.0826950595f,
		};
		kt_begin("Adam", "ai.onnx.preview.training", 1);
		kt.label = "adam defaults";
		kt_input(OX_FLOAT, 0, di0, xi0);
		kt_input(OX_INT64, 0, di1, xi1);
		kt_input(OX_FLOAT, 1, di2, xi2);
		kt_input(OX_FLOAT, 1, di3, xi3);
		kt_input(OX_FLOAT, 1, di4, xi4);
		kt_input(OX_FLOAT, 1, di5, xi5);
		kt_run(P_TABLE, 3);
		kt_expect_values(0, OX_FLOAT, 1, do0, xo0, 1e-05);
		kt_expect_values(1, OX_FLOAT, 1, do1, xo1, 1e-05);
		kt_expect_values(2, OX_FLOAT, 1, do2, xo2, 1e-05);
		kt_end();
	}

	/* adam two tensors */
	{
		static const int64_t di0[] = {0};
		static const float xi0[] = {
			0.200000003f,
		};
		static const int64_t di1[] = {0};
		static const int64_t xi1[] = {
			4LL,
		};
		static const int64_t di2[] = {2};
		static const float xi2[] = {
			-0.900408208f, 1.02800608f,
		};
		static const int64_t di3[] = {1};
		static const float xi3[] = {
			-0.400409639f,
		};
		static const int64_t di4[] = {2};
		static const float xi4[] = {
			0.462443471f, -0.825472593f,
		};
		static const int64_t di5[] = {1};
		static const float xi5[] = {
			0.358803958f,
		};
		static const int64_t di6[] = {2};
		static const float xi6[] = {
			0.391593009f, -0.420681417f,
		};
		static const int64_t di7[] = {1};
		static const float xi7[] = {
			2.02088952f,
		};
		static const int64_t di8[] = {2};
		static const float xi8[] = {
			0.371039957f, 1.7769289f,
		};
		static const int64_t di9[] = {1};
		static const float xi9[] = {
			0.95913893f,
		};
		static const int64_t do0[] = {2};
		static const float xo0[] = {
			-1.08503079f, 1.12679839f,
		};
		static const int64_t do1[] = {1};
		static const float xo1[] = {
			-0.965562046f,
		};
		static const int64_t do2[] = {2};
		static const float xo2[] = {
			0.403962284f, -0.499583632f,
		};
		static const int64_t do3[] = {1};
		static const float xo3[] = {
			1.68767154f,
		};
		static const int64_t do4[] = {2};
		static const float xo4[] = {
			0.321410149f, 1.44321191f,
		};
		static const int64_t do5[] = {1};
		static const float xo5[] = {
			0.709162176f,
		};
		kt_begin("Adam", "ai.onnx.preview.training", 1);
		kt.label = "adam two tensors";
		kt_attr_float("alpha", 0.8f);
		kt_attr_float("beta", 0.7f);
		kt_attr_float("epsilon", 0.01f);
		kt_attr_float("norm_coefficient", 0.01f);
		kt_attr_float("norm_coefficient_post", 0.02f);
		kt_input(OX_FLOAT, 0, di0, xi0);
		kt_input(OX_INT64, 0, di1, xi1);
		kt_input(OX_FLOAT, 1, di2, xi2);
		kt_input(OX_FLOAT, 1, di3, xi3);
		kt_input(OX_FLOAT, 1, di4, xi4);
		kt_input(OX_FLOAT, 1, di5, xi5);
		kt_input(OX_FLOAT, 1, di6, xi6);
		kt_input(OX_FLOAT, 1, di7, xi7);
		kt_input(OX_FLOAT, 1, di8, xi8);
		kt_input(OX_FLOAT, 1, di9, xi9);
		kt_run(P_TABLE, 6);
		kt_expect_values(0, OX_FLOAT, 1, do0, xo0, 1e-05);
		kt_expect_values(1, OX_FLOAT, 1, do1, xo1, 1e-05);
		kt_expect_values(2, OX_FLOAT, 1, do2, xo2, 1e-05);
		kt_expect_values(3, OX_FLOAT, 1, do3, xo3, 1e-05);
		kt_expect_values(4, OX_FLOAT, 1, do4, xo4, 1e-05);
		kt_expect_values(5, OX_FLOAT, 1, do5, xo5, 1e-05);
		kt_end();
	}

	/* adagrad */
	{
		static const int64_t di0[] = {0};
		static const float xi0[] = {
			0.100000001f,
		};
		static const int64_t di1[] = {0};
		static const int64_t xi1[] = {
			5LL,
		};
		static const int64_t di2[] = {4};
		static const float xi2[] = {
			-0.662274778f, -0.38218683f, 0.436102062f, 0.0611725301f,
		};
		static const int64_t di3[] = {4};
		static const float xi3[] = {
			0.0494611412f, -0.286204964f, -1.80847633f, -0.225432649f,
		};
		static const int64_t di4[] = {4};
		static const float xi4[] = {
			2.21812153f, 0.371819556f, 0.726057768f, 0.715416729f,
		};
		static const int64_t do0[] = {4};
		static const float xo0[] = {
			-0.664191544f, -0.353552371f, 0.496383101f, 0.0782977864f,
		};
		static const int64_t do1[] = {4};
		static const float xo1[] = {
			2.21995664f, 0.455935121f, 3.9808898f, 0.76596117f,
		};
		kt_begin("Adagrad", "ai.onnx.preview.training", 1);
		kt.label = "adagrad";
		kt_attr_float("decay_factor", 0.1f);
		kt_attr_float("epsilon", 1e-05f);
		kt_attr_float("norm_coefficient", 0.01f);
		kt_input(OX_FLOAT, 0, di0, xi0);
		kt_input(OX_INT64, 0, di1, xi1);
		kt_input(OX_FLOAT, 1, di2, xi2);
		kt_input(OX_FLOAT, 1, di3, xi3);
		kt_input(OX_FLOAT, 1, di4, xi4);
		kt_run(P_TABLE, 2);
		kt_expect_values(0, OX_FLOAT, 1, do0, xo0, 1e-05);
		kt_expect_values(1, OX_FLOAT, 1, do1, xo1, 1e-05);
		kt_end();
	}

	/* adagrad double two tensors */
	{
		static const int64_t di0[] = {0};
		static const double xi0[] = {
			0.29999999999999999,
		};
		static const int64_t di1[] = {0};
		static const int64_t xi1[] = {
			1LL,
		};
		static const int64_t di2[] = {2};
		static const double xi2[] = {
			-0.21930379562997881, 0.27267234629586407,
		};
		static const int64_t di3[] = {1};
		static const double xi3[] = {
			-1.4320061777359552,
		};
		static const int64_t di4[] = {2};
		static const double xi4[] = {
			-1.7486011895534066, -1.0660658714998135,
		};
		static const int64_t di5[] = {1};
		static const double xi5[] = {
			-2.0417275241987234,
		};
		static const int64_t di6[] = {2};
		static const double xi6[] = {
			0.96684960988929813, 1.590883030522966,
		};
		static const int64_t di7[] = {1};
		static const double xi7[] = {
			1.0565859164970517,
		};
		static const int64_t do0[] = {2};
		static const double xo0[] = {
			0.042188098268471419, 0.46632892200302156,
		};
		static const int64_t do1[] = {1};
		static const double xo1[] = {
			-1.1640487234233643,
		};
		static const int64_t do2[] = {2};
		static const double xo2[] = {
			4.0244557299968866, 2.7273794728996226,
		};
		static const int64_t do3[] = {1};
		static const double xo3[] = {
			5.2252371995677001,
		};
		kt_begin("Adagrad", "ai.onnx.preview.training", 1);
		kt.label = "adagrad double two tensors";
		kt_input(OX_DOUBLE, 0, di0, xi0);
		kt_input(OX_INT64, 0, di1, xi1);
		kt_input(OX_DOUBLE, 1, di2, xi2);
		kt_input(OX_DOUBLE, 1, di3, xi3);
		kt_input(OX_DOUBLE, 1, di4, xi4);
		kt_input(OX_DOUBLE, 1, di5, xi5);
		kt_input(OX_DOUBLE, 1, di6, xi6);
		kt_input(OX_DOUBLE, 1, di7, xi7);
		kt_run(P_TABLE, 4);
		kt_expect_values(0, OX_DOUBLE, 1, do0, xo0, 1e-12);
		kt_expect_values(1, OX_DOUBLE, 1, do1, xo1, 1e-12);
		kt_expect_values(2, OX_DOUBLE, 1, do2, xo2, 1e-12);
		kt_expect_values(3, OX_DOUBLE, 1, do3, xo3, 1e-12);
		kt_end();
	}
}

/* ---- optimizers ---------------------------------------------------------- */

static void
optimizer_cases(void)
{
	static const float r = 0.1f;
	static const int64_t t = 1;
	/* room for the mis-shaped inputs of the error cases (kt_input reads numel of them) */
	static const double rd16[16] = {0.1};
	static const float x[4] = {1, 2, 3, 4};
	static const int64_t d2[] = {2};
	static const int64_t d3[] = {3};
	static const int32_t xi[2] = {1, 2};

	/* Momentum: attributes */
	kt_begin("Momentum", "ai.onnx.preview.training", 1);
	kt.label = "momentum unknown mode";
	kt_attr_float("alpha", 0.9f);
	kt_attr_float("beta", 0.1f);
	kt_attr_float("norm_coefficient", 0.0f);
	kt_attr_string("mode", "adamw");
	kt_input(OX_FLOAT, 0, NULL, &r);
	kt_input(OX_INT64, 0, NULL, &t);
	kt_input(OX_FLOAT, 1, d2, x);
	kt_input(OX_FLOAT, 1, d2, x);
	kt_input(OX_FLOAT, 1, d2, x);
	kt_run(P_TABLE, 2);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	kt_begin("Momentum", "ai.onnx.preview.training", 1);
	kt.label = "momentum missing alpha";
	kt_attr_float("beta", 0.1f);
	kt_attr_float("norm_coefficient", 0.0f);
	kt_attr_string("mode", "standard");
	kt_input(OX_FLOAT, 0, NULL, &r);
	kt_input(OX_INT64, 0, NULL, &t);
	kt_input(OX_FLOAT, 1, d2, x);
	kt_input(OX_FLOAT, 1, d2, x);
	kt_input(OX_FLOAT, 1, d2, x);
	kt_run(P_TABLE, 2);
	kt_expect_error(OX_INVALID_MODEL);
	kt_end();

	/* Adagrad: inputs (attributes all have defaults) */
	{
		static const struct
		{
			const char *label;
			ox_dtype	rdt;
			ox_dtype	tdt;
			ox_dtype	gdt;
			const int64_t *gd;
			int			n_in;
			int			n_out;
			ox_code		code;
		}			bad[] = {
			{"adagrad R of type int64", OX_INT64, OX_INT64, OX_FLOAT, d2, 5, 2, OX_INVALID_ARGUMENT},
			{"adagrad T of type float", OX_FLOAT, OX_FLOAT, OX_FLOAT, d2, 5, 2, OX_INVALID_ARGUMENT},
			{"adagrad G shape", OX_FLOAT, OX_INT64, OX_FLOAT, d3, 5, 2, OX_INVALID_ARGUMENT},
			{"adagrad G type", OX_FLOAT, OX_INT64, OX_DOUBLE, d2, 5, 2, OX_INVALID_ARGUMENT},
			{"adagrad input count", OX_FLOAT, OX_INT64, OX_FLOAT, d2, 6, 2, OX_INVALID_ARGUMENT},
			{"adagrad output count", OX_FLOAT, OX_INT64, OX_FLOAT, d2, 5, 3, OX_INVALID_ARGUMENT},
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		{
			kt_begin("Adagrad", "ai.onnx.preview.training", 1);
			kt.label = bad[i].label;
			kt_input(bad[i].rdt, 0, NULL, rd16);
			kt_input(bad[i].tdt, 0, NULL, rd16);
			kt_input(OX_FLOAT, 1, d2, x);
			kt_input(bad[i].gdt, 1, bad[i].gd, rd16);
			for (int j = 4; j < bad[i].n_in; j++)
				kt_input(OX_FLOAT, 1, d2, x);
			kt_run(P_TABLE, bad[i].n_out);
			kt_expect_error(bad[i].code);
			kt_end();
		}
	}

	kt_begin("Adam", "ai.onnx.preview.training", 1);
	kt.label = "adam int32 tensors";
	kt_input(OX_FLOAT, 0, NULL, &r);
	kt_input(OX_INT64, 0, NULL, &t);
	for (int j = 0; j < 4; j++)
		kt_input(OX_INT32, 1, d2, xi);
	kt_run(P_TABLE, 3);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	kt_begin("Adam", "ai.onnx.preview.training", 1);
	kt.label = "adam missing H";
	kt_input(OX_FLOAT, 0, NULL, &r);
	kt_input(OX_INT64, 0, NULL, &t);
	for (int j = 0; j < 3; j++)
		kt_input(OX_FLOAT, 1, d2, x);
	kt_input_none();
	kt_run(P_TABLE, 3);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Adam", "", 1);
	kt.label = "adam in the default domain";
	kt_input(OX_FLOAT, 0, NULL, &r);
	kt_run(P_TABLE, 3);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();
}

int
main(void)
{
	generated_cases();
	optimizer_cases();
	return kt_summary();
}
