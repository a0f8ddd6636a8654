/*
 * test_loss.c
 *	  Unit tests of the loss kernel family: NegativeLogLikelihoodLoss and
 *	  SoftmaxCrossEntropyLoss.  Expected values of the generated cases were
 *	  computed with the ONNX reference implementation (onnx.reference).
 */
#include "kernel_test.h"

#define L_TABLE ox_kernels_loss, ox_kernels_loss_count

static void
generated_cases(void)
{
	/* nll NC mean */
	{
		static const int64_t di0[] = {3, 5};
		static const float xi0[] = {
			0.034192767f, 1.35974753f, 1.22472107f, -0.510307074f, -0.29796952f, -0.527384222f, 0.569726348f, -0.0560644381f,
			0.746885598f, -1.84732485f, 1.56654882f, -0.0964321569f, 0.680378437f, -0.136566341f, -0.379098564f,
		};
		static const int64_t di1[] = {3};
		static const int64_t xi1[] = {
			1LL, 3LL, 1LL,
		};
		static const int64_t do0[] = {0};
		static const float xo0[] = {
			-0.670067012f,
		};
		kt_begin("NegativeLogLikelihoodLoss", "", 22);
		kt.label = "nll NC mean";
		kt_input(OX_FLOAT, 2, di0, xi0);
		kt_input(OX_INT64, 1, di1, xi1);
		kt_run(ox_kernels_loss, ox_kernels_loss_count, 1);
		kt_expect_values(0, OX_FLOAT, 0, do0, xo0, 1e-06);
		kt_end();
	}

	/* nll NC none int32 labels */
	{
		static const int64_t di0[] = {4, 3};
		static const float xi0[] = {
			-0.202529877f, -0.15278618f, 0.685698628f, -0.870340645f, -1.51438355f, 0.394981861f, -0.670565844f, -1.92034054f,
			-0.814053655f, -0.467597544f, -1.1932025f, -1.49246383f,
		};
		static const int64_t di1[] = {4};
		static const int32_t xi1[] = {
			2, 2, 0, 2,
		};
		static const int64_t do0[] = {4};
		static const float xo0[] = {
			-0.685698628f, -0.394981861f, 0.670565844f, 1.49246383f,
		};
		kt_begin("NegativeLogLikelihoodLoss", "", 13);
		kt.label = "nll NC none int32 labels";
		kt_attr_string("reduction", "none");
		kt_input(OX_FLOAT, 2, di0, xi0);
		kt_input(OX_INT32, 1, di1, xi1);
		kt_run(ox_kernels_loss, ox_kernels_loss_count, 1);
		kt_expect_values(0, OX_FLOAT, 1, do0, xo0, 1e-06);
		kt_end();
	}

	/* nll NCd1 weight ignore sum */
	{
		static const int64_t di0[] = {2, 4, 3};
		static const float xi0[] = {
			0.717235804f, -0.300010592f, 0.54466778f, 1.04287553f, -0.206956431f, -0.813515544f, 0.347650588f, 0.247545734f,
			1.09881282f, -1.28458083f, -0.661612928f, -0.838166952f, -1.73401487f, 0.12643455f, 0.527804196f, -0.738790035f,
			1.38564706f, 0.821924329f, 0.627376497f, 0.401707083f, 0.955669582f, -1.33197987f, 0.613929629f, 0.602776825f,
		};
		static const int64_t di1[] = {2, 3};
		static const int64_t xi1[] = {
			1LL, -1LL, 1LL, 0LL, 0LL, 3LL,
		};
		static const int64_t di2[] = {4};
		static const float xi2[] = {
			0.0892372578f, 0.172669604f, 0.0245861076f, 0.839124858f,
		};
		static const int64_t do0[] = {0};
		static const float xo0[] = {
			-0.401952446f,
		};
		kt_begin("NegativeLogLikelihoodLoss", "", 22);
		kt.label = "nll NCd1 weight ignore sum";
		kt_attr_string("reduction", "sum");
		kt_attr_int("ignore_index", -1);
		kt_input(OX_FLOAT, 3, di0, xi0);
		kt_input(OX_INT64, 2, di1, xi1);
		kt_input(OX_FLOAT, 1, di2, xi2);
		kt_run(ox_kernels_loss, ox_kernels_loss_count, 1);
		kt_expect_values(0, OX_FLOAT, 0, do0, xo0, 1e-06);
		kt_end();
	}

	/* nll NCd1d2 weight ignore mean double */
	{
		static const int64_t di0[] = {2, 4, 3, 2};
		static const double xi0[] = {
			-0.10496319085359573, 0.49248263239860535, -0.52183753252029419, 1.086201548576355, 0.60520195960998535, -0.178025022149086, 0.63195717334747314, 1.2597551345825195,
			1.7911754846572876, -1.5735763311386108, 0.88313180208206177, 0.465068519115448, -0.09386078268289566, -1.0066649913787842, 1.2571885585784912, -1.2617379426956177,
			0.56694549322128296, 1.3018679618835449, -1.599669337272644, -0.30251783132553101, -1.3092168569564819, 0.24405410885810852, 1.5143750905990601, 2.0235559940338135,
			-1.7781144380569458, -0.57494902610778809, 0.70354509353637695, 1.5793726444244385, 0.4212106466293335, -0.74615198373794556, 0.29713150858879089, -0.016619201749563217,
			-0.20374071598052979, -0.73447108268737793, 0.38725975155830383, 0.30787962675094604, -0.092984125018119812, -0.22168794274330139, -1.2849165201187134, -0.48617565631866455,
			1.2064496278762817, -0.19055825471878052, -1.439697265625, 1.3344428539276123, 0.53026539087295532, 2.1080870628356934, 0.062512166798114777, -0.46138456463813782,
		};
		static const int64_t di1[] = {2, 3, 2};
		static const int64_t xi1[] = {
			3LL, 0LL, 1LL, 1LL, 0LL, 2LL, 2LL, 3LL,
			0LL, 3LL, 1LL, 0LL,
		};
		static const int64_t di2[] = {4};
		static const double xi2[] = {
			0.49826855771255019, 0.078669758634957621, 0.61097978735989567, 0.23166322809745765,
		};
		static const int64_t do0[] = {0};
		static const double xo0[] = {
			-0.432539259548745,
		};
		kt_begin("NegativeLogLikelihoodLoss", "", 12);
		kt.label = "nll NCd1d2 weight ignore mean double";
		kt_attr_string("reduction", "mean");
		kt_attr_int("ignore_index", 1);
		kt_input(OX_DOUBLE, 4, di0, xi0);
		kt_input(OX_INT64, 3, di1, xi1);
		kt_input(OX_DOUBLE, 1, di2, xi2);
		kt_run(ox_kernels_loss, ox_kernels_loss_count, 1);
		kt_expect_values(0, OX_DOUBLE, 0, do0, xo0, 1e-12);
		kt_end();
	}

	/* sce NC mean log_prob */
	{
		static const int64_t di0[] = {3, 5};
		static const float xi0[] = {
			-0.647087634f, 0.596188784f, -0.830345452f, -0.270558357f, -0.349837691f, 0.191958889f, 1.09481847f, 0.0220675897f,
			0.918910086f, -0.419888884f, 0.327798545f, -2.13822556f, -1.44994807f, 0.795913398f, -0.590149403f,
		};
		static const int64_t di1[] = {3};
		static const int64_t xi1[] = {
			2LL, 2LL, 4LL,
		};
		static const int64_t do0[] = {0};
		static const float xo0[] = {
			2.15889525f,
		};
		static const int64_t do1[] = {3, 5};
		static const float xo1[] = {
			-2.09221911f, -0.848942816f, -2.27547693f, -1.7156899f, -1.7949692f, -1.93463457f, -1.03177512f, -2.10452604f,
			-1.20768344f, -2.54648232f, -1.17873466f, -3.6447587f, -2.95648146f, -0.710619807f, -2.09668255f,
		};
		kt_begin("SoftmaxCrossEntropyLoss", "", 13);
		kt.label = "sce NC mean log_prob";
		kt_input(OX_FLOAT, 2, di0, xi0);
		kt_input(OX_INT64, 1, di1, xi1);
		kt_run(ox_kernels_loss, ox_kernels_loss_count, 2);
		kt_expect_values(0, OX_FLOAT, 0, do0, xo0, 1e-06);
		kt_expect_values(1, OX_FLOAT, 2, do1, xo1, 1e-06);
		kt_end();
	}

	/* sce NCd1d2 weight ignore none log_prob */
	{
		static const int64_t di0[] = {2, 3, 2, 3};
		static const float xi0[] = {
			-7.315588f, -4.88043928f, -11.2982922f, -5.47443581f, -0.925690532f, 2.51611948f, -3.38890791f, -19.2368279f,
			-0.72282958f, 2.25345802f, 10.8447561f, 5.77863884f, -6.43560696f, -7.23776579f, 20.1059742f, 7.56637955f,
			18.3143978f, 21.294445f, -8.18083668f, 3.85269308f, 4.58167028f, 5.59612226f, 5.41902256f, 2.02054644f,
			1.74129248f, -15.0249996f, -1.65401196f, -7.47619677f, 1.26087308f, -4.67546272f, 6.18520737f, 8.1907568f,
			3.0869236f, 3.16168118f, 0.929466844f, -4.47797871f,
		};
		static const int64_t di1[] = {2, 2, 3};
		static const int64_t xi1[] = {
			7LL, 2LL, 2LL, 0LL, 2LL, 2LL, 2LL, 2LL,
			1LL, 0LL, 2LL, 1LL,
		};
		static const int64_t di2[] = {3};
		static const float xi2[] = {
			0.644866526f, 0.340082377f, 0.749844432f,
		};
		static const int64_t do0[] = {2, 2, 3};
		static const float xo0[] = {
			0.0f, 1.83545625f, -0.0f, 8.41275597f, 0.000427443127f, 1.78776858e-07f, 0.00875963271f, 0.00973089598f,
			2.19001293f, 0.0541806519f, 3.38634491f, 2.27812576f,
		};
		static const int64_t do1[] = {2, 3, 2, 3};
		static const float xo1[] = {
			-3.99174142f, -0.090456292f, -31.4042664f, -13.0457325f, -19.2406578f, -18.778326f, -0.0650613382f, -14.4468441f,
			-20.828804f, -5.31783915f, -7.47021198f, -15.5158062f, -3.11176038f, -2.44778275f, 0.0f, -0.0049175336f,
			-0.000570042408f, -2.38418608e-07f, -14.3777256f, -4.35104084f, -0.203971893f, -0.0840183944f, -0.0265075881f, -0.00273768976f,
			-4.45559692f, -23.2287331f, -6.43965435f, -13.1563377f, -4.18465757f, -6.69874668f, -0.0116819339f, -0.0129772192f,
			-1.69871867f, -2.51845956f, -4.51606321f, -6.50126314f,
		};
		kt_begin("SoftmaxCrossEntropyLoss", "", 13);
		kt.label = "sce NCd1d2 weight ignore none log_prob";
		kt_attr_string("reduction", "none");
		kt_attr_int("ignore_index", 7);
		kt_input(OX_FLOAT, 4, di0, xi0);
		kt_input(OX_INT64, 3, di1, xi1);
		kt_input(OX_FLOAT, 1, di2, xi2);
		kt_run(ox_kernels_loss, ox_kernels_loss_count, 2);
		kt_expect_values(0, OX_FLOAT, 3, do0, xo0, 1e-05);
		kt_expect_values(1, OX_FLOAT, 4, do1, xo1, 1e-05);
		kt_end();
	}

	/* sce large scores sum */
	{
		static const int64_t di0[] = {2, 3};
		static const float xi0[] = {
			1000.0f, 0.0f, -1000.0f, 88.0f, 89.0f, 90.0f,
		};
		static const int64_t di1[] = {2};
		static const int64_t xi1[] = {
			0LL, 2LL,
		};
		static const int64_t do0[] = {0};
		static const float xo0[] = {
			0.407605976f,
		};
		kt_begin("SoftmaxCrossEntropyLoss", "", 13);
		kt.label = "sce large scores sum";
		kt_attr_string("reduction", "sum");
		kt_input(OX_FLOAT, 2, di0, xi0);
		kt_input(OX_INT64, 1, di1, xi1);
		kt_run(ox_kernels_loss, ox_kernels_loss_count, 1);
		kt_expect_values(0, OX_FLOAT, 0, do0, xo0, 1e-06);
		kt_end();
	}

	/* sce fp16 mean */
	{
		static const int64_t di0[] = {3, 4};
		static const uint16_t xi0[] = {
			44927, 13877, 9018, 14502, 48465, 15130, 47642, 47584,
			45649, 47234, 13480, 47256,
		};
		static const int64_t di1[] = {3};
		static const int64_t xi1[] = {
			0LL, 2LL, 2LL,
		};
		static const int64_t do0[] = {0};
		static const uint16_t xo0[] = {
			15945,
		};
		static const int64_t do1[] = {3, 4};
		static const uint16_t xo1[] = {
			48905, 48388, 48771, 48190, 49470, 46712, 49180, 49165,
			48526, 48901, 47925, 48912,
		};
		kt_begin("SoftmaxCrossEntropyLoss", "", 13);
		kt.label = "sce fp16 mean";
		kt_input(OX_FLOAT16, 2, di0, xi0);
		kt_input(OX_INT64, 1, di1, xi1);
		kt_run(ox_kernels_loss, ox_kernels_loss_count, 2);
		kt_expect_values(0, OX_FLOAT16, 0, do0, xo0, 0.002);
		kt_expect_values(1, OX_FLOAT16, 2, do1, xo1, 0.002);
		kt_end();
	}

	/* sce double mean weight */
	{
		static const int64_t di0[] = {4, 3};
		static const double xi0[] = {
			1.3119833469390869, 0.044258330017328262, -1.1675302982330322, 0.0083774030208587646, -1.5559464693069458, 1.7895665168762207, -1.5244781970977783, 0.47875270247459412,
			0.54362565279006958, -1.4500077962875366, 0.30027651786804199, 0.99717205762863159,
		};
		static const int64_t di1[] = {4};
		static const int64_t xi1[] = {
			2LL, 0LL, 1LL, 0LL,
		};
		static const int64_t di2[] = {3};
		static const double xi2[] = {
			0.4994093806321438, 0.13412907512792005, 0.51201538202607788,
		};
		static const int64_t do0[] = {0};
		static const double xo0[] = {
			2.4128304608395945,
		};
		kt_begin("SoftmaxCrossEntropyLoss", "", 12);
		kt.label = "sce double mean weight";
		kt_input(OX_DOUBLE, 2, di0, xi0);
		kt_input(OX_INT64, 1, di1, xi1);
		kt_input(OX_DOUBLE, 1, di2, xi2);
		kt_run(ox_kernels_loss, ox_kernels_loss_count, 1);
		kt_expect_values(0, OX_DOUBLE, 0, do0, xo0, 1e-12);
		kt_end();
	}

}

/* every label ignored: the mean is 0 / 0 */
static void
test_mean_all_ignored(void)
{
	static const float x[6] = {1, 2, 3, 4, 5, 6};
	static const int64_t t[2] = {-100, -100};
	const int64_t xd[] = {2, 3},
				td[] = {2};
	const float nan1[1] = {NAN};
	const float zero2[2] = {0, 0};

	kt_begin("NegativeLogLikelihoodLoss", "", 22);
	kt.label = "nll mean all ignored";
	kt_attr_int("ignore_index", -100);
	kt_input_f32(2, xd, x);
	kt_input_i64(1, td, t);
	kt_run(L_TABLE, 1);
	kt_expect_f32(0, 0, NULL, nan1, 0);
	kt_end();

	kt_begin("SoftmaxCrossEntropyLoss", "", 13);
	kt.label = "sce none all ignored";
	kt_attr_int("ignore_index", -100);
	kt_attr_string("reduction", "none");
	kt_input_f32(2, xd, x);
	kt_input_i64(1, td, t);
	kt_run(L_TABLE, 1);
	kt_expect_f32(0, 1, td, zero2, 0);
	kt_end();
}

static void
test_errors(void)
{
	static const float x[12] = {0};
	static const int64_t t_bad[2] = {0, 3};
	static const int64_t t_ok[4] = {0, 1, 2, 0};
	const int64_t xd[] = {2, 3},
				td[] = {2},
				td_bad[] = {3},
				wd_bad[] = {2},
				x1[] = {6};

	kt_begin("NegativeLogLikelihoodLoss", "", 22);
	kt.label = "nll label out of range";
	kt_input_f32(2, xd, x);
	kt_input_i64(1, td, t_bad);
	kt_run(L_TABLE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("SoftmaxCrossEntropyLoss", "", 13);
	kt.label = "sce negative label not ignored";
	kt_attr_int("ignore_index", 5);
	kt_input_f32(2, xd, x);
	kt_input_i64(1, td, (const int64_t[]) {-1, 0});
	kt_run(L_TABLE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("SoftmaxCrossEntropyLoss", "", 13);
	kt.label = "sce bad reduction";
	kt_attr_string("reduction", "max");
	kt_input_f32(2, xd, x);
	kt_input_i64(1, td, t_ok);
	kt_run(L_TABLE, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	kt_begin("SoftmaxCrossEntropyLoss", "", 13);
	kt.label = "sce labels shape mismatch";
	kt_input_f32(2, xd, x);
	kt_input_i64(1, td_bad, t_ok);
	kt_run(L_TABLE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("NegativeLogLikelihoodLoss", "", 13);
	kt.label = "nll weight wrong length";
	kt_input_f32(2, xd, x);
	kt_input_i64(1, td, t_ok);
	kt_input_f32(1, wd_bad, x);
	kt_run(L_TABLE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("NegativeLogLikelihoodLoss", "", 13);
	kt.label = "nll rank 1 scores";
	kt_input_f32(1, x1, x);
	kt_input_i64(0, NULL, t_ok);
	kt_run(L_TABLE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("NegativeLogLikelihoodLoss", "", 13);
	kt.label = "nll float labels";
	kt_input_f32(2, xd, x);
	kt_input_f32(1, td, x);
	kt_run(L_TABLE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("SoftmaxCrossEntropyLoss", "", 13);
	kt.label = "sce int scores";
	kt_input(OX_INT32, 2, xd, x);
	kt_input_i64(1, td, t_ok);
	kt_run(L_TABLE, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();
}

int
main(void)
{
	generated_cases();
	test_mean_all_ignored();
	test_errors();
	return kt_summary();
}
