/*
 * test_signal.c
 *	  Unit tests of the signal kernel family: DFT, STFT, the three windows,
 *	  MelWeightMatrix and Det.  Expected values of the generated cases were
 *	  computed with the ONNX reference implementation (onnx.reference); a
 *	  long transform is checked against the direct sum in double.
 */
#include "kernel_test.h"

#define S_TABLE ox_kernels_signal, ox_kernels_signal_count

static void
generated_cases(void)
{
	/* dft real pow2 forward */
	{
		static const int64_t di0[] = {2, 8, 1};
		static const float xi0[] = {
			-0.801931441f, -1.32435894f, -0.248361617f, 0.420445234f, 1.13604653f, 0.109706402f, -0.552647293f, -0.784780383f,
			0.748745799f, 1.63478303f, 0.272768766f, -1.2333287f, -0.958265185f, 1.6000191f, 0.202882439f, -1.73213482f,
		};
		static const int64_t do0[] = {2, 8, 2};
		static const float xo0[] = {
			-2.04588151f, 0.0f, -3.80423856f, -0.142471552f, 1.13512397f, 0.850317359f, -0.0717174336f, 0.466099799f,
			1.11209393f, 0.0f, -0.0717174336f, -0.466099799f, 1.13512397f, -0.850317359f, -3.80423856f, 0.142471552f,
			0.535470426f, 0.0f, 1.3788836f, -0.447177321f, -0.685170591f, -6.20026588f, 2.03513837f, -0.307404667f,
			-0.00320678949f, 0.0f, 2.03513837f, 0.307404667f, -0.685170591f, 6.20026588f, 1.3788836f, 0.447177321f,
		};
		kt_begin("DFT", "", 20);
		kt.label = "dft real pow2 forward";
		kt_input(OX_FLOAT, 3, di0, xi0);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_FLOAT, 3, do0, xo0, 1e-05);
		kt_end();
	}

	/* dft complex n6 forward axis0 */
	{
		static const int64_t di0[] = {6, 3, 2};
		static const float xi0[] = {
			-0.083696194f, -1.16322601f, -0.629288077f, -0.488005817f, -0.713313401f, 0.553378463f, -0.0630859733f, -0.589431286f,
			0.409637839f, 0.829855323f, -1.64302337f, -0.256730139f, -0.980747342f, -0.173155218f, -1.2894187f, 0.0206903946f,
			-0.0378857404f, -0.30433774f, -1.04792655f, -0.396190345f, -1.09132886f, -1.35520875f, 0.22478573f, -1.10934997f,
			1.17029607f, 0.716587663f, -1.99781668f, 0.27212888f, -1.10171664f, 0.0330572203f, 0.0436319932f, -1.98842978f,
			-0.233422518f, -0.255790025f, 0.962000549f, -1.18144679f,
		};
		static const int64_t di2[] = {0};
		static const int64_t xi2[] = {
			0LL,
		};
		static const int64_t do0[] = {6, 3, 2};
		static const float xo0[] = {
			-0.961528003f, -3.59384489f, -4.83163691f, -0.976329982f, -2.30915284f, -2.26542902f, 1.30075729f, -0.372403711f,
			2.91621041f, -0.162571311f, -0.200173855f, 2.41399264f, 0.76543808f, -2.31263971f, 0.992841661f, -2.22007275f,
			1.51480567f, 3.47607875f, 1.17323303f, 2.35425782f, -3.00141001f, 0.585956931f, -1.39667869f, 2.82962489f,
			-3.19877839f, 1.22823572f, -1.32305551f, -2.33324099f, -0.6712358f, -2.87856436f, 0.418700695f, -4.28296137f,
			1.47132182f, 2.17822313f, -1.2174449f, -0.255432099f,
		};
		kt_begin("DFT", "", 20);
		kt.label = "dft complex n6 forward axis0";
		kt_input(OX_FLOAT, 3, di0, xi0);
		kt_input_none();
		kt_input(OX_INT64, 0, di2, xi2);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_FLOAT, 3, do0, xo0, 1e-05);
		kt_end();
	}

	/* dft rfft dft_length pad */
	{
		static const int64_t di0[] = {2, 5, 1};
		static const float xi0[] = {
			0.738041878f, -1.0989728f, -0.331290901f, -0.840473175f, 1.4487313f, 0.568213105f, 2.43173242f, 0.641916394f,
			0.844992757f, 0.840682864f,
		};
		static const int64_t di1[] = {0};
		static const int64_t xi1[] = {
			12LL,
		};
		static const int64_t di2[] = {0};
		static const int64_t xi2[] = {
			1LL,
		};
		static const int64_t do0[] = {2, 7, 2};
		static const float xo0[] = {
			-0.0839636922f, 0.0f, -1.10370755f, 0.4222278f, 0.470308453f, 2.49328279f, 2.51806402f, 0.258499622f,
			-0.1116651f, -0.58980608f, 0.799769163f, 2.35769129f, 3.79492831f, 0.0f, 5.32753754f, 0.0f,
			2.57477188f, -3.34482765f, 0.197786927f, -1.93380523f, 0.766979575f, -1.58673966f, -0.543959975f, -2.27807879f,
			-1.63711214f, -0.776890337f, -1.22591281f, 0.0f,
		};
		kt_begin("DFT", "", 20);
		kt.label = "dft rfft dft_length pad";
		kt_attr_int("onesided", 1);
		kt_input(OX_FLOAT, 3, di0, xi0);
		kt_input(OX_INT64, 0, di1, xi1);
		kt_input(OX_INT64, 0, di2, xi2);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_FLOAT, 3, do0, xo0, 1e-05);
		kt_end();
	}

	/* dft rfft truncate int32 length */
	{
		static const int64_t di0[] = {1, 9, 1};
		static const float xi0[] = {
			-0.60661155f, -0.0700284466f, 1.35038888f, -0.396550775f, 0.18879953f, -0.0212234613f, 0.609216511f, -0.364908755f,
			-0.152361885f,
		};
		static const int64_t di1[] = {0};
		static const int32_t xi1[] = {
			7,
		};
		static const int64_t do0[] = {1, 4, 2};
		static const float xo0[] = {
			1.05399072f, 0.0f, -0.379023015f, -0.552194118f, -2.05365968f, 0.799689889f, -0.217453122f, 1.93775737f,
		};
		kt_begin("DFT", "", 20);
		kt.label = "dft rfft truncate int32 length";
		kt_attr_int("onesided", 1);
		kt_input(OX_FLOAT, 3, di0, xi0);
		kt_input(OX_INT32, 0, di1, xi1);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_FLOAT, 3, do0, xo0, 1e-05);
		kt_end();
	}

	/* dft inverse complex n12 */
	{
		static const int64_t di0[] = {1, 12, 2};
		static const float xi0[] = {
			0.242381424f, 0.103023142f, -0.86497277f, 0.895783067f, -1.29848123f, -1.20111561f, -1.2824918f, 0.966972291f,
			-0.360608369f, -0.971036375f, -1.13602138f, 0.421131134f, -1.05484068f, -1.27207816f, 0.613993049f, -1.19670773f,
			-0.322438151f, -0.00676154019f, -0.445335358f, -0.0540939607f, 1.33877349f, -0.516894162f, -1.25930715f, -1.83674574f,
		};
		static const int64_t do0[] = {1, 12, 2};
		static const float xo0[] = {
			-0.485779047f, -0.389043629f, -0.124775797f, -0.247517988f, -0.107857674f, -0.165509313f, -0.229618162f, 0.13306582f,
			-0.13488099f, 0.504827499f, -0.131450623f, 0.162517816f, 0.243243486f, -0.255100131f, 0.639197707f, 0.02885288f,
			-0.0144115789f, -0.179828078f, 0.325265378f, 0.219486386f, 0.0934561715f, -0.0998738632f, 0.169992626f, 0.391145796f,
		};
		kt_begin("DFT", "", 20);
		kt.label = "dft inverse complex n12";
		kt_attr_int("inverse", 1);
		kt_input(OX_FLOAT, 3, di0, xi0);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_FLOAT, 3, do0, xo0, 1e-05);
		kt_end();
	}

	/* dft irfft default length */
	{
		static const int64_t di0[] = {2, 5, 2};
		static const float xi0[] = {
			-0.20476611f, -0.352257013f, 0.265090913f, -0.464244604f, -0.47863847f, -0.721315742f, -0.519759774f, 0.160226703f,
			-0.380352736f, 0.100441851f, 1.90118718f, 0.479118139f, -1.57608986f, 1.73352957f, 0.347810358f, -0.941413283f,
			0.907048941f, 0.017655611f, -0.61521852f, -0.633508921f,
		};
		static const int64_t do0[] = {2, 8, 1};
		static const float xo0[] = {
			-0.256466687f, 0.394763827f, 0.202637583f, -0.243380636f, -0.129132271f, 0.00979067385f, -0.109598063f, -0.073380582f,
			0.0804384351f, -0.198625803f, -0.355174989f, 0.208589703f, 0.414958894f, 1.29843378f, 0.50276196f, -0.0501949489f,
		};
		kt_begin("DFT", "", 20);
		kt.label = "dft irfft default length";
		kt_attr_int("inverse", 1);
		kt_attr_int("onesided", 1);
		kt_input(OX_FLOAT, 3, di0, xi0);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_FLOAT, 3, do0, xo0, 1e-05);
		kt_end();
	}

	/* dft irfft odd length */
	{
		static const int64_t di0[] = {1, 4, 2};
		static const float xi0[] = {
			-0.993431807f, 0.0481189825f, 1.06881666f, -0.325052112f, 0.420824111f, 1.875646f, -1.21459067f, 0.257522315f,
		};
		static const int64_t di1[] = {0};
		static const int64_t xi1[] = {
			7LL,
		};
		static const int64_t do0[] = {1, 7, 1};
		static const float xo0[] = {
			-0.0633330867f, -0.147391975f, -0.153980196f, 0.122678064f, -0.652412355f, -0.915153742f, 0.816161454f,
		};
		kt_begin("DFT", "", 20);
		kt.label = "dft irfft odd length";
		kt_attr_int("inverse", 1);
		kt_attr_int("onesided", 1);
		kt_input(OX_FLOAT, 3, di0, xi0);
		kt_input(OX_INT64, 0, di1, xi1);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_FLOAT, 3, do0, xo0, 1e-05);
		kt_end();
	}

	/* dft opset17 axis attr */
	{
		static const int64_t di0[] = {2, 3, 4, 2};
		static const float xi0[] = {
			-0.306436926f, -1.05925608f, -1.0258472f, -0.0152851436f, 0.433863401f, -0.531589806f, 0.0543905459f, 0.722208679f,
			0.296561241f, 0.868670166f, 0.461395621f, 0.488005668f, 1.82663405f, 0.623171866f, 0.129471138f, 0.709943831f,
			-0.91912365f, -0.337704778f, 0.793220878f, 0.630786717f, 1.54836166f, 0.0104730288f, -1.46232784f, 1.94724691f,
			1.09289277f, -1.0587374f, 1.37582362f, 0.0324027985f, -1.81392872f, -0.420353919f, -0.508903861f, 1.59084821f,
			-0.79206872f, -0.253617346f, -0.276760817f, -0.378972769f, -0.914074063f, 0.219086915f, 1.07680464f, 0.623977661f,
			-0.927499115f, -1.1498158f, 0.118973553f, -0.706580162f, -0.630165637f, -1.67969453f, 1.95049155f, 0.916619182f,
		};
		static const int64_t do0[] = {2, 3, 4, 2};
		static const float xo0[] = {
			-0.844030201f, -0.883922338f, -1.47779417f, 0.552571476f, 1.09888315f, -2.29776931f, -0.00280650519f, -1.60790396f,
			2.71406198f, 2.68979144f, -1.75201094f, -0.0864261836f, 1.53232849f, 0.293892533f, -1.30813468f, 0.577422798f,
			-0.0398689508f, 2.2508018f, -3.78394556f, -2.60372663f, 1.29834497f, -2.90526533f, -1.15102506f, 1.90737092f,
			0.145883799f, 0.14415969f, 1.34837604f, -2.52311087f, -1.58795571f, -3.10234237f, 4.4652667f, 1.24634397f,
			-0.906098962f, 0.210474461f, -0.880945086f, 0.880861163f, -2.50618649f, -0.279535323f, 1.12495577f, -1.82626975f,
			0.511800349f, -2.61947131f, -1.92053282f, 2.36139679f, -3.62712979f, -3.03954935f, 1.32586586f, -1.30163932f,
		};
		kt_begin("DFT", "", 17);
		kt.label = "dft opset17 axis attr";
		kt_attr_int("axis", 2);
		kt_input(OX_FLOAT, 4, di0, xi0);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_FLOAT, 4, do0, xo0, 1e-05);
		kt_end();
	}

	/* dft opset17 negative axis */
	{
		static const int64_t di0[] = {2, 3, 5, 1};
		static const float xi0[] = {
			-0.973907351f, 0.908210278f, 1.3424871f, -2.38955331f, -0.548944771f, -0.387973219f, 0.648254454f, -0.121465422f,
			-0.230431333f, -0.0583713874f, 1.85332572f, 2.15998054f, -0.524826407f, -0.92624402f, 2.69255304f, -0.979744613f,
			-0.573402047f, 0.0365815088f, 0.483246237f, 1.02903557f, 0.390977234f, -0.872383058f, 0.506382346f, 0.249917582f,
			1.87691903f, -0.0149997985f, -1.33697295f, -1.04501987f, 1.45015311f, -0.540131211f,
		};
		static const int64_t do0[] = {2, 3, 5, 2};
		static const float xo0[] = {
			0.491445154f, 0.0f, 3.71644521f, 0.0f, 0.696195245f, 0.0f, -3.54622865f, 0.0f,
			2.08523679f, 0.0f, -1.70658362f, 1.9410218f, -0.495907217f, 1.30919313f, 1.66563296f, -0.349320859f,
			-1.81121564f, -0.602591455f, -1.86603558f, 2.38237047f, -1.70658362f, -1.9410218f, -0.495907217f, -1.30919313f,
			1.66563296f, 0.349320859f, -1.81121564f, 0.602591455f, -1.86603558f, -2.38237047f, -0.603767157f, 0.0f,
			-2.782758f, 0.0f, -0.502056003f, 0.0f, 2.18331695f, 0.0f, 2.36582327f, 0.0f,
			-1.16773331f, -0.351586431f, 0.531275988f, -0.402346641f, 0.305900276f, -1.34355378f, -0.366789103f, 1.03943443f,
			0.360641658f, -2.09322691f, -1.16773331f, 0.351586431f, 0.531275988f, 0.402346641f, 0.305900276f, 1.34355378f,
			-0.366789103f, -1.03943443f, 0.360641658f, 2.09322691f,
		};
		kt_begin("DFT", "", 17);
		kt.label = "dft opset17 negative axis";
		kt_attr_int("axis", -3);
		kt_input(OX_FLOAT, 4, di0, xi0);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_FLOAT, 4, do0, xo0, 1e-05);
		kt_end();
	}

	/* dft double n10 */
	{
		static const int64_t di0[] = {1, 10, 2};
		static const double xi0[] = {
			-2.1044659614562988, -0.58069968223571777, 1.5099831216502935e-05, 1.1888307332992554, -1.0144681930541992, 0.66668331623077393, 0.79529911279678345, -0.69938832521438599,
			-0.18758970499038696, 1.7694501876831055, 1.720484733581543, 0.85552197694778442, 0.33194637298583984, 1.1383095979690552, -0.14067728817462921, -0.09509306401014328,
			-0.86036014556884766, 0.0055633848533034325, -0.082016624510288239, 2.7736315727233887,
		};
		static const int64_t do0[] = {1, 10, 2};
		static const double xo0[] = {
			-1.5418325985592674, 7.0228096982464194, -5.2962253642173565, -0.6161478757488601, -0.74123777011346836, 2.565338200346154, -2.6490194961082074, -2.0730885593297392,
			-3.3174712046927377, -6.7114013289937411, -6.1280426656085183, -1.024196089245379, 1.694486908737374, -3.9307521280474003, -0.76824850028291713, -3.8244126670199527,
			1.9861485252543196, 2.4281170320088994, -4.2832174489722101, 0.35673689542642051,
		};
		kt_begin("DFT", "", 20);
		kt.label = "dft double n10";
		kt_input(OX_DOUBLE, 3, di0, xi0);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_DOUBLE, 3, do0, xo0, 1e-12);
		kt_end();
	}

	/* dft fp16 */
	{
		static const int64_t di0[] = {1, 8, 1};
		static const uint16_t xi0[] = {
			45612, 15637, 15688, 45560, 15533, 49243, 11795, 15068,
		};
		static const int64_t do0[] = {1, 8, 2};
		static const uint16_t xo0[] = {
			16463, 0, 16194, 49626, 46855, 15952, 50314, 47000,
			16705, 0, 50314, 14232, 46855, 48720, 16194, 16858,
		};
		kt_begin("DFT", "", 20);
		kt.label = "dft fp16";
		kt_input(OX_FLOAT16, 3, di0, xi0);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_FLOAT16, 3, do0, xo0, 0.005);
		kt_end();
	}

	/* stft window onesided */
	{
		static const int64_t di0[] = {2, 16, 1};
		static const float xi0[] = {
			-2.3978653f, -1.15917122f, 1.05607367f, -0.257010758f, -1.09819865f, -0.373595655f, -0.542588294f, 0.72444731f,
			0.453885883f, -0.280228347f, -0.665342689f, -0.0538756624f, 1.32515597f, 0.349026114f, 0.63894558f, -0.1506816f,
			-1.29181623f, -0.710843563f, 0.651236594f, 0.103216104f, -0.903839886f, -1.61787045f, 0.110681899f, -0.339531004f,
			-0.350530207f, -0.329449952f, 0.283905119f, 0.29444772f, 0.96212858f, 0.928421557f, 1.33209312f, 0.806363046f,
		};
		static const int64_t di1[] = {0};
		static const int64_t xi1[] = {
			4LL,
		};
		static const int64_t di2[] = {8};
		static const float xi2[] = {
			0.0f, 0.188255101f, 0.611260474f, 0.950484455f, 0.950484455f, 0.611260474f, 0.188255101f, 0.0f,
		};
		static const int64_t do0[] = {2, 3, 5, 2};
		static const float xo0[] = {
			-1.1912986f, 0.0f, 1.22372925f, -0.582118869f, -1.58721185f, 0.202299416f, 0.863912225f, 0.913243294f,
			0.190439194f, 0.0f, 0.421446681f, 0.0f, -0.846917808f, -0.351878464f, 0.888328433f, 0.930199742f,
			-0.0159051362f, -0.764695704f, -0.472457588f, 0.0f, 1.08251071f, 0.0f, -1.41149199f, 0.751353264f,
			1.54595315f, -0.211799428f, -1.10758841f, -0.302611619f, 0.863743782f, 0.0f, -1.46482897f, 0.0f,
			1.39437616f, -1.05127108f, -1.27799737f, 1.22086549f, 0.323795289f, -0.29679355f, 0.584480762f, 0.0f,
			-1.04074252f, 0.0f, 0.488402039f, 0.286956102f, -0.454275578f, 0.183233157f, 0.177944973f, 0.315373868f,
			0.616599619f, 0.0f, 2.12415624f, 0.0f, -1.55752838f, 0.324480325f, 0.490174949f, -0.22561878f,
			-0.271448195f, 0.170013651f, 0.553446829f, 0.0f,
		};
		kt_begin("STFT", "", 17);
		kt.label = "stft window onesided";
		kt_input(OX_FLOAT, 3, di0, xi0);
		kt_input(OX_INT64, 0, di1, xi1);
		kt_input(OX_FLOAT, 1, di2, xi2);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_FLOAT, 4, do0, xo0, 1e-05);
		kt_end();
	}

	/* stft frame_length twosided */
	{
		static const int64_t di0[] = {1, 11, 1};
		static const float xi0[] = {
			-0.335608035f, -0.054268945f, 0.494215101f, -0.310292274f, 0.549438775f, 1.15360951f, -0.801245987f, -1.77038407f,
			1.19365501f, 0.0177599099f, 0.708669841f,
		};
		static const int64_t di1[] = {0};
		static const int64_t xi1[] = {
			3LL,
		};
		static const int64_t di3[] = {0};
		static const int64_t xi3[] = {
			5LL,
		};
		static const int64_t do0[] = {1, 3, 5, 2};
		static const float xo0[] = {
			0.34348461f, 0.0f, -0.331388831f, 0.101282589f, -0.679373562f, 1.11998248f, -0.679373562f, -1.11998248f,
			-0.331388831f, -0.101282589f, -1.17887402f, 0.0f, -0.97265321f, -3.35531783f, 0.786359549f, 0.4956204f,
			0.786359549f, -0.4956204f, -0.97265321f, 3.35531783f, -0.651545286f, 0.0f, -2.10938907f, 1.66654658f,
			0.432046682f, 2.57549405f, 0.432046682f, -2.57549405f, -2.10938907f, -1.66654658f,
		};
		kt_begin("STFT", "", 17);
		kt.label = "stft frame_length twosided";
		kt_attr_int("onesided", 0);
		kt_input(OX_FLOAT, 3, di0, xi0);
		kt_input(OX_INT64, 0, di1, xi1);
		kt_input_none();
		kt_input(OX_INT64, 0, di3, xi3);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_FLOAT, 4, do0, xo0, 1e-05);
		kt_end();
	}

	/* stft complex twosided */
	{
		static const int64_t di0[] = {1, 10, 2};
		static const float xi0[] = {
			-1.33230531f, 1.73299253f, 0.738619864f, -0.12607418f, -0.351988047f, 0.113895878f, -0.166731343f, -0.27869013f,
			-1.11959994f, 1.2628094f, -0.0395776853f, 0.0746356398f, 0.0929159895f, -2.35821724f, 0.527141452f, -0.329154938f,
			-0.289228469f, 0.0697878748f, -0.972475588f, 0.843380809f,
		};
		static const int64_t di1[] = {0};
		static const int64_t xi1[] = {
			2LL,
		};
		static const int64_t di3[] = {0};
		static const int64_t xi3[] = {
			4LL,
		};
		static const int64_t do0[] = {1, 4, 4, 2};
		static const float xo0[] = {
			-1.11240482f, 1.44212413f, -0.82770133f, 0.713745475f, -2.25618196f, 2.25165272f, -1.13293326f, 2.52444792f,
			-1.67789698f, 1.17265081f, 0.414286137f, -1.02175987f, -1.26527894f, 1.58075976f, 1.12093771f, -1.27606714f,
			-0.539120197f, -1.34992719f, -0.808725357f, 4.18774557f, -1.51424766f, -0.84088856f, -1.61630654f, 3.05430746f,
			-0.641646624f, -1.77420354f, -0.790391266f, -3.92762208f, 0.249021649f, -2.80265522f, 1.55468023f, -0.928388059f,
		};
		kt_begin("STFT", "", 17);
		kt.label = "stft complex twosided";
		kt_attr_int("onesided", 0);
		kt_input(OX_FLOAT, 3, di0, xi0);
		kt_input(OX_INT64, 0, di1, xi1);
		kt_input_none();
		kt_input(OX_INT64, 0, di3, xi3);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_FLOAT, 4, do0, xo0, 1e-05);
		kt_end();
	}

	/* HannWindow periodic */
	{
		static const int64_t di0[] = {0};
		static const int64_t xi0[] = {
			10LL,
		};
		static const int64_t do0[] = {10};
		static const float xo0[] = {
			0.0f, 0.0954915062f, 0.345491529f, 0.654508471f, 0.904508531f, 1.0f, 0.904508471f, 0.654508352f,
			0.345491439f, 0.0954914987f,
		};
		kt_begin("HannWindow", "", 17);
		kt.label = "HannWindow periodic";
		kt_input(OX_INT64, 0, di0, xi0);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_FLOAT, 1, do0, xo0, 1e-06);
		kt_end();
	}

	/* HannWindow symmetric double */
	{
		static const int64_t di0[] = {0};
		static const int32_t xi0[] = {
			7,
		};
		static const int64_t do0[] = {7};
		static const double xo0[] = {
			0.0, 0.24999999999999994, 0.74999999999999989, 1.0, 0.75000000000000011, 0.24999999999999994, 1.4997597826618576e-32,
		};
		kt_begin("HannWindow", "", 17);
		kt.label = "HannWindow symmetric double";
		kt_attr_int("periodic", 0);
		kt_attr_int("output_datatype", 11);
		kt_input(OX_INT32, 0, di0, xi0);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_DOUBLE, 1, do0, xo0, 1e-12);
		kt_end();
	}

	/* HammingWindow periodic */
	{
		static const int64_t di0[] = {0};
		static const int64_t xi0[] = {
			10LL,
		};
		static const int64_t do0[] = {10};
		static const float xo0[] = {
			0.0869565234f, 0.174144417f, 0.402405292f, 0.684551239f, 0.912812114f, 1.0f, 0.912812114f, 0.68455112f,
			0.402405232f, 0.174144417f,
		};
		kt_begin("HammingWindow", "", 17);
		kt.label = "HammingWindow periodic";
		kt_input(OX_INT64, 0, di0, xi0);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_FLOAT, 1, do0, xo0, 1e-06);
		kt_end();
	}

	/* HammingWindow symmetric double */
	{
		static const int64_t di0[] = {0};
		static const int32_t xi0[] = {
			7,
		};
		static const int64_t do0[] = {7};
		static const double xo0[] = {
			0.086956521739130377, 0.31521739130434773, 0.77173913043478248, 1.0, 0.77173913043478282, 0.31521739130434773, 0.086956521739130377,
		};
		kt_begin("HammingWindow", "", 17);
		kt.label = "HammingWindow symmetric double";
		kt_attr_int("periodic", 0);
		kt_attr_int("output_datatype", 11);
		kt_input(OX_INT32, 0, di0, xi0);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_DOUBLE, 1, do0, xo0, 1e-12);
		kt_end();
	}

	/* BlackmanWindow periodic */
	{
		static const int64_t di0[] = {0};
		static const int64_t xi0[] = {
			10LL,
		};
		static const int64_t do0[] = {10};
		static const float xo0[] = {
			0.0f, 0.0402128622f, 0.20077014f, 0.509787142f, 0.849229872f, 1.0f, 0.849229872f, 0.509787142f,
			0.20077014f, 0.0402128622f,
		};
		kt_begin("BlackmanWindow", "", 17);
		kt.label = "BlackmanWindow periodic";
		kt_input(OX_INT64, 0, di0, xi0);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_FLOAT, 1, do0, xo0, 1e-06);
		kt_end();
	}

	/* BlackmanWindow symmetric double */
	{
		static const int64_t di0[] = {0};
		static const int32_t xi0[] = {
			7,
		};
		static const int64_t do0[] = {7};
		static const double xo0[] = {
			0.0, 0.12999999999999995, 0.62999999999999989, 1.0, 0.63000000000000034, 0.12999999999999995, 0.0,
		};
		kt_begin("BlackmanWindow", "", 17);
		kt.label = "BlackmanWindow symmetric double";
		kt_attr_int("periodic", 0);
		kt_attr_int("output_datatype", 11);
		kt_input(OX_INT32, 0, di0, xi0);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_DOUBLE, 1, do0, xo0, 1e-12);
		kt_end();
	}

	/* hann int8 output */
	{
		static const int64_t di0[] = {0};
		static const int64_t xi0[] = {
			6LL,
		};
		static const int64_t do0[] = {6};
		static const int8_t xo0[] = {
			0, 0, 0, 1, 0, 0,
		};
		kt_begin("HannWindow", "", 17);
		kt.label = "hann int8 output";
		kt_attr_int("output_datatype", 3);
		kt_input(OX_INT64, 0, di0, xi0);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_INT8, 1, do0, xo0, 0);
		kt_end();
	}

	/* mel weight matrix */
	{
		static const int64_t di0[] = {0};
		static const int64_t xi0[] = {
			8LL,
		};
		static const int64_t di1[] = {0};
		static const int64_t xi1[] = {
			64LL,
		};
		static const int64_t di2[] = {0};
		static const int64_t xi2[] = {
			8000LL,
		};
		static const int64_t di3[] = {0};
		static const float xi3[] = {
			0.0f,
		};
		static const int64_t di4[] = {0};
		static const float xi4[] = {
			4000.0f,
		};
		static const int64_t do0[] = {33, 8};
		static const float xo0[] = {
			0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
			1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
			0.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
			0.0f, 0.5f, 0.5f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
			0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
			0.0f, 0.0f, 0.5f, 0.5f, 0.0f, 0.0f, 0.0f, 0.0f,
			0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f,
			0.0f, 0.0f, 0.0f, 0.666666687f, 0.333333343f, 0.0f, 0.0f, 0.0f,
			0.0f, 0.0f, 0.0f, 0.333333343f, 0.666666687f, 0.0f, 0.0f, 0.0f,
			0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f,
			0.0f, 0.0f, 0.0f, 0.0f, 0.666666687f, 0.333333343f, 0.0f, 0.0f,
			0.0f, 0.0f, 0.0f, 0.0f, 0.333333343f, 0.666666687f, 0.0f, 0.0f,
			0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f,
			0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.666666687f, 0.333333343f, 0.0f,
			0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.333333343f, 0.666666687f, 0.0f,
			0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f,
			0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.800000012f, 0.200000003f,
			0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.600000024f, 0.400000006f,
			0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.400000006f, 0.600000024f,
			0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.200000003f, 0.800000012f,
			0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f,
			0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.800000012f,
			0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.600000024f,
			0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.400000006f,
			0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.200000003f,
			0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
			0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
			0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
			0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
			0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
			0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
			0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
			0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
		};
		kt_begin("MelWeightMatrix", "", 17);
		kt.label = "mel weight matrix";
		kt_input(OX_INT64, 0, di0, xi0);
		kt_input(OX_INT64, 0, di1, xi1);
		kt_input(OX_INT64, 0, di2, xi2);
		kt_input(OX_FLOAT, 0, di3, xi3);
		kt_input(OX_FLOAT, 0, di4, xi4);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_FLOAT, 2, do0, xo0, 1e-06);
		kt_end();
	}

	/* mel weight matrix double */
	{
		static const int64_t di0[] = {0};
		static const int64_t xi0[] = {
			5LL,
		};
		static const int64_t di1[] = {0};
		static const int64_t xi1[] = {
			32LL,
		};
		static const int64_t di2[] = {0};
		static const int64_t xi2[] = {
			16000LL,
		};
		static const int64_t di3[] = {0};
		static const float xi3[] = {
			100.0f,
		};
		static const int64_t di4[] = {0};
		static const float xi4[] = {
			6000.0f,
		};
		static const int64_t do0[] = {17, 5};
		static const double xo0[] = {
			1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0,
			0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0,
			0.0, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0, 1.0,
			0.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0,
			0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.5,
			0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
			0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
			0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
			0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
			0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
			0.0, 0.0, 0.0, 0.0, 0.0,
		};
		kt_begin("MelWeightMatrix", "", 17);
		kt.label = "mel weight matrix double";
		kt_attr_int("output_datatype", 11);
		kt_input(OX_INT64, 0, di0, xi0);
		kt_input(OX_INT64, 0, di1, xi1);
		kt_input(OX_INT64, 0, di2, xi2);
		kt_input(OX_FLOAT, 0, di3, xi3);
		kt_input(OX_FLOAT, 0, di4, xi4);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_DOUBLE, 2, do0, xo0, 1e-12);
		kt_end();
	}

	/* det 2d */
	{
		static const int64_t di0[] = {4, 4};
		static const float xi0[] = {
			-0.695864618f, -0.903658032f, -0.862189591f, 0.158752695f, 0.745779455f, -0.595053256f, -1.51018667f, 1.0624907f,
			-1.06508362f, 1.19483042f, -0.0542958751f, -0.698349893f, -0.640039921f, 0.46186617f, 0.889371812f, -0.19817023f,
		};
		static const int64_t do0[] = {0};
		static const float xo0[] = {
			-1.62630808f,
		};
		kt_begin("Det", "", 22);
		kt.label = "det 2d";
		kt_input(OX_FLOAT, 2, di0, xi0);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_FLOAT, 0, do0, xo0, 1e-05);
		kt_end();
	}

	/* det batch */
	{
		static const int64_t di0[] = {2, 3, 3, 3};
		static const float xi0[] = {
			0.946934402f, 2.0869782f, -0.208308339f, -1.14944661f, -1.05440032f, -1.39033532f, -0.639665425f, -0.723779261f,
			-1.32510328f, 0.530184269f, -2.61133909f, -1.32079899f, 2.01525187f, 1.03780246f, 0.522791684f, 0.457259059f,
			1.7709372f, 0.53562963f, 0.0775770843f, -1.23016012f, -0.0736668184f, -0.733883977f, -0.706175268f, -0.714238942f,
			-0.0446468629f, -0.329710811f, 0.871110499f, -1.32618141f, -0.169470191f, 1.85949755f, 0.0388973355f, 1.19861519f,
			1.13686347f, 1.31664777f, 0.738119185f, -1.38044608f, -0.267387718f, -0.380335569f, -1.5488553f, -0.463881612f,
			-1.25007987f, -1.66555142f, 0.210896254f, -0.0435912721f, -0.687814891f, -0.950586379f, -0.541273415f, -0.394090384f,
			-0.408110291f, -0.0527077466f, -0.435540676f, 0.38697198f, 0.522870898f, 0.357869685f,
		};
		static const int64_t do0[] = {2, 3};
		static const float xo0[] = {
			-0.985352039f, -2.08863425f, -0.907155395f, 0.163227171f, -0.3952007f, -0.110317364f,
		};
		kt_begin("Det", "", 22);
		kt.label = "det batch";
		kt_input(OX_FLOAT, 4, di0, xi0);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_FLOAT, 2, do0, xo0, 1e-05);
		kt_end();
	}

	/* det singular double */
	{
		static const int64_t di0[] = {3, 3};
		static const double xi0[] = {
			1.0, 2.0, 3.0, 2.0, 4.0, 6.0, 0.0, 1.0,
			5.0,
		};
		static const int64_t do0[] = {0};
		static const double xo0[] = {
			0.0,
		};
		kt_begin("Det", "", 11);
		kt.label = "det singular double";
		kt_input(OX_DOUBLE, 2, di0, xi0);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_DOUBLE, 0, do0, xo0, 1e-12);
		kt_end();
	}

	/* det needs pivot */
	{
		static const int64_t di0[] = {2, 2};
		static const float xi0[] = {
			0.0f, 1.0f, 1.0f, 0.0f,
		};
		static const int64_t do0[] = {0};
		static const float xo0[] = {
			-1.0f,
		};
		kt_begin("Det", "", 22);
		kt.label = "det needs pivot";
		kt_input(OX_FLOAT, 2, di0, xi0);
		kt_run(ox_kernels_signal, ox_kernels_signal_count, 1);
		kt_expect_values(0, OX_FLOAT, 0, do0, xo0, 1e-06);
		kt_end();
	}

}

/*
 * Lengths 1024 (radix-2 path) and 1000 (direct path) of a complex signal,
 * forward then inverse: checks both algorithms against the direct sum and
 * that the inverse undoes the forward transform.
 */
static void
test_dft_long(int64_t n)
{
	float	   *x = malloc(sizeof(float) * 2 * n);
	float	   *want = malloc(sizeof(float) * 2 * n);
	float	   *back;
	const int64_t d[] = {1, n, 2};
	static char label[64];

	for (int64_t i = 0; i < 2 * n; i++)
		x[i] = (float) sin(0.37 * i) + (float) (i % 7) * 0.25f;
	for (int64_t k = 0; k < n; k++)
	{
		double		sr = 0,
					si = 0;

		for (int64_t m = 0; m < n; m++)
		{
			double		a = -2.0 * M_PI * (double) ((k * m) % n) / (double) n;

			sr += x[2 * m] * cos(a) - x[2 * m + 1] * sin(a);
			si += x[2 * m] * sin(a) + x[2 * m + 1] * cos(a);
		}
		want[2 * k] = (float) sr;
		want[2 * k + 1] = (float) si;
	}
	snprintf(label, sizeof(label), "dft long forward n=%lld", (long long) n);
	kt_begin("DFT", "", 20);
	kt.label = label;
	kt_input_f32(3, d, x);
	kt_run(S_TABLE, 1);
	kt_expect_f32(0, 3, d, want, 1e-4);
	back = malloc(sizeof(float) * 2 * n);
	memcpy(back, kt_output(0)->data, sizeof(float) * 2 * n);
	kt_end();

	kt_begin("DFT", "", 20);
	kt.label = "dft long inverse round trip";
	kt_attr_int("inverse", 1);
	kt_input_f32(3, d, back);
	kt_run(S_TABLE, 1);
	kt_expect_f32(0, 3, d, x, 1e-4);
	kt_end();
	free(x);
	free(want);
	free(back);
}

static void
test_small_cases(void)
{
	const int64_t d0[] = {0, 0};
	const int64_t d22[] = {2, 2};
	const int64_t one = 1;
	const int64_t zero = 0;
	const int64_t d1[] = {1};
	/* [[2, 1], [1, 3]] in float16 */
	const uint16_t m16[4] = {0x4000, 0x3c00, 0x3c00, 0x4200};
	const uint16_t det16[1] = {0x4500};
	const float ones[1] = {1.0f};

	kt_begin("Det", "", 22);
	kt.label = "det 0x0";
	kt_input_f32(2, d0, NULL);
	kt_run(S_TABLE, 1);
	kt_expect_f32(0, 0, NULL, ones, 0);
	kt_end();

	kt_begin("Det", "", 22);
	kt.label = "det float16";
	kt_input(OX_FLOAT16, 2, d22, m16);
	kt_run(S_TABLE, 1);
	kt_expect_values(0, OX_FLOAT16, 0, NULL, det16, 0);
	kt_end();

	kt_begin("HannWindow", "", 17);
	kt.label = "hann size 0";
	kt_input_i64(0, NULL, &zero);
	kt_run(S_TABLE, 1);
	kt_expect_f32(0, 1, &zero, NULL, 0);
	kt_end();

	kt_begin("HammingWindow", "", 17);
	kt.label = "hamming symmetric size 1";
	kt_attr_int("periodic", 0);
	kt_input_i64(1, d1, &one);
	kt_run(S_TABLE, 1);
	kt_expect_f32(0, 1, d1, ones, 0);
	kt_end();
}

static void
test_errors(void)
{
	static const float z[64] = {0};
	const int64_t d3[] = {1, 4, 3},
				d2[] = {4, 2},
				d4[] = {1, 4, 2},
				sig[] = {1, 8, 1},
				win[] = {5},
				nsq[] = {2, 3};
	const int64_t axis_bad = 2,
				axis_last = -1,
				len0 = 0,
				step = 2,
				step0 = 0,
				len_big = 9,
				len4 = 4,
				neg = -3,
				pair[2] = {1, 2};

	kt_begin("DFT", "", 20);
	kt.label = "dft last dim 3";
	kt_input_f32(3, d3, z);
	kt_run(S_TABLE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("DFT", "", 20);
	kt.label = "dft axis on complex dim";
	kt_input_f32(3, d4, z);
	kt_input_none();
	kt_input_i64(0, NULL, &axis_bad);
	kt_run(S_TABLE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("DFT", "", 20);
	kt.label = "dft axis -1";
	kt_input_f32(3, d4, z);
	kt_input_none();
	kt_input_i64(0, NULL, &axis_last);
	kt_run(S_TABLE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("DFT", "", 17);
	kt.label = "dft opset 17 axis attr out of range";
	kt_attr_int("axis", 5);
	kt_input_f32(3, d4, z);
	kt_run(S_TABLE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("DFT", "", 20);
	kt.label = "dft zero length";
	kt_input_f32(3, d4, z);
	kt_input_i64(0, NULL, &len0);
	kt_run(S_TABLE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("DFT", "", 20);
	kt.label = "dft length not scalar";
	kt_input_f32(3, d4, z);
	kt_input_i64(1, (const int64_t[]) {2}, pair);
	kt_run(S_TABLE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("DFT", "", 20);
	kt.label = "dft bad inverse attr";
	kt_attr_int("inverse", 2);
	kt_input_f32(2, d2, z);
	kt_run(S_TABLE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("DFT", "", 20);
	kt.label = "dft int input";
	kt_input(OX_INT32, 2, d2, z);
	kt_run(S_TABLE, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	kt_begin("STFT", "", 17);
	kt.label = "stft zero step";
	kt_input_f32(3, sig, z);
	kt_input_i64(0, NULL, &step0);
	kt_run(S_TABLE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("STFT", "", 17);
	kt.label = "stft frame longer than signal";
	kt_input_f32(3, sig, z);
	kt_input_i64(0, NULL, &step);
	kt_input_none();
	kt_input_i64(0, NULL, &len_big);
	kt_run(S_TABLE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("STFT", "", 17);
	kt.label = "stft window and frame_length disagree";
	kt_input_f32(3, sig, z);
	kt_input_i64(0, NULL, &step);
	kt_input_f32(1, win, z);
	kt_input_i64(0, NULL, &len4);
	kt_run(S_TABLE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("STFT", "", 17);
	kt.label = "stft onesided complex";
	kt_input_f32(3, d4, z);
	kt_input_i64(0, NULL, &step);
	kt_run(S_TABLE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("HannWindow", "", 17);
	kt.label = "hann negative size";
	kt_input_i64(0, NULL, &neg);
	kt_run(S_TABLE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("BlackmanWindow", "", 17);
	kt.label = "blackman bad output type";
	kt_attr_int("output_datatype", OX_STRING);
	kt_input_i64(0, NULL, &len4);
	kt_run(S_TABLE, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	kt_begin("HammingWindow", "", 17);
	kt.label = "hamming float size";
	kt_input_f32(0, NULL, z);
	kt_run(S_TABLE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	{
		const int64_t bins = 4,
					dft = 16,
					rate = 1000;
		const float lo = 0,
					hi_bad = 5000;

		kt_begin("MelWeightMatrix", "", 17);
		kt.label = "mel upper edge above nyquist";
		kt_input_i64(0, NULL, &bins);
		kt_input_i64(0, NULL, &dft);
		kt_input_i64(0, NULL, &rate);
		kt_input_f32(0, NULL, &lo);
		kt_input_f32(0, NULL, &hi_bad);
		kt_run(S_TABLE, 1);
		kt_expect_error(OX_INVALID_ARGUMENT);
		kt_end();

		kt_begin("MelWeightMatrix", "", 17);
		kt.label = "mel zero bins";
		kt_input_i64(0, NULL, &len0);
		kt_input_i64(0, NULL, &dft);
		kt_input_i64(0, NULL, &rate);
		kt_input_f32(0, NULL, &lo);
		kt_input_f32(0, NULL, &lo);
		kt_run(S_TABLE, 1);
		kt_expect_error(OX_INVALID_ARGUMENT);
		kt_end();
	}

	kt_begin("Det", "", 22);
	kt.label = "det not square";
	kt_input_f32(2, nsq, z);
	kt_run(S_TABLE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Det", "", 22);
	kt.label = "det rank 1";
	kt_input_f32(1, win, z);
	kt_run(S_TABLE, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();
}

int
main(void)
{
	generated_cases();
	test_dft_long(1024);
	test_dft_long(1000);
	test_small_cases();
	test_errors();
	return kt_summary();
}
