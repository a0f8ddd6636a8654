/*
 * test_preview_attention.c
 *	  Unit tests of the preview kernel family, attention: LinearAttention
 *	  and FlexAttention (ai.onnx.preview).
 *
 * The expected values in generated_cases() were computed with the ONNX
 * reference implementation (onnx.reference, onnx 1.22) on random inputs; a
 * larger FlexAttention case is checked against a naive double-precision
 * loop.  The hand-written cases cover edge shapes, score/prob modifier
 * graphs and the errors every kernel must report instead of touching
 * memory.
 */
#include "kernel_test.h"

#define P_TABLE ox_kernels_preview, ox_kernels_preview_count

static void
generated_cases(void)
{
	/* linear attention linear */
	{
		static const int64_t di0[] = {2, 3, 6};
		static const float xi0[] = {
			0.192745909f, 0.0893064886f, -0.591028333f, -0.118609823f, -1.99774635f, -1.1314075f,
			0.362839788f, -2.12856698f, 0.84660852f, -1.74609649f, 0.756738484f, -0.845497012f,
			0.778991103f, 0.130951211f, -1.53683496f, 1.24914873f, 1.44170713f, -0.0658049062f,
			-0.273916274f, -0.159866959f, -0.975152314f, 1.0985868f, -0.54289192f, -0.0511904135f,
			-0.793296397f, -0.626073122f, -1.2777251f, 1.25706935f, -0.154087573f, 0.96592164f,
			0.0133245969f, -0.694403529f, -0.32668525f, -0.56023103f, 0.00795909949f, -0.37526685f,
		};
		static const int64_t di1[] = {2, 3, 6};
		static const float xi1[] = {
			-0.299921721f, -1.37857473f, -0.806845903f, 1.6540575f, -0.671233237f, -1.05409384f,
			0.337326318f, 1.40727222f, -1.45402431f, -0.208521843f, -0.632052541f, -1.76101947f,
			0.734926701f, -0.0234439187f, 0.0714418441f, -0.752311468f, 0.454784155f, -0.539297342f,
			-0.142903209f, -1.10826075f, -1.21610272f, 1.33553183f, -0.507104695f, 0.291680366f,
			-0.0337904356f, -0.441145211f, -0.507960975f, 0.630082607f, -0.301867604f, -0.151443645f,
			0.0222215578f, 1.17650831f, 0.680510998f, 0.382600278f, -0.563571393f, -1.38196874f,
		};
		static const int64_t di2[] = {2, 3, 4};
		static const float xi2[] = {
			0.949529946f, 0.966447115f, -0.140708402f, 0.541883826f, 0.781443059f, 0.831184447f,
			0.9213835f, -0.455617636f, 1.51497293f, -1.24659312f, 0.861723065f, 0.493932068f,
			0.873619139f, 1.87900829f, 1.48444545f, -1.14517689f, -1.68867159f, 0.816889048f,
			-1.01501238f, -0.012405389f, 0.839727461f, -1.6437974f, -2.10998034f, 0.25929901f,
		};
		static const int64_t do0[] = {2, 3, 4};
		static const float xo0[] = {
			0.162240118f, 0.165130615f, -0.189883828f, 0.731263876f, -0.677083731f, -0.774019241f,
			0.934796572f, -1.14528811f, 2.06463027f, 1.41686738f, -0.780208468f, 0.572199941f,
			0.707249224f, 1.52117443f, 1.48060477f, -1.14221394f, 0.262696505f, 3.01039505f,
			1.34159422f, -1.35290504f, -0.376141191f, 2.47237706f, -0.92874074f, 0.61674583f,
		};
		static const int64_t do1[] = {2, 2, 3, 2};
		static const float xo1[] = {
			1.09221065f, -0.925632656f, -0.244811818f, -0.133391827f, -1.79412913f, -2.0773952f,
			-1.07315254f, 0.619722486f, -0.0960166156f, 0.148876339f, -1.93897939f, -0.0352210999f,
			-0.0491219759f, -0.332647085f, 0.764697909f, -4.37673903f, 0.366812468f, -3.81863689f,
			0.53570348f, -1.43802869f, 0.742754698f, 0.438335896f, 3.50262785f, -0.690490007f,
		};
		kt_begin("LinearAttention", "", 27);
		kt.label = "linear attention linear";
		kt_attr_int("q_num_heads", 2);
		kt_attr_int("kv_num_heads", 2);
		kt_attr_string("update_rule", "linear");
		kt_input(OX_FLOAT, 3, di0, xi0);
		kt_input(OX_FLOAT, 3, di1, xi1);
		kt_input(OX_FLOAT, 3, di2, xi2);
		kt_run(P_TABLE, 2);
		kt_expect_values(0, OX_FLOAT, 3, do0, xo0, 1e-05);
		kt_expect_values(1, OX_FLOAT, 4, do1, xo1, 1e-05);
		kt_end();
	}

	/* linear attention gated per-key past */
	{
		static const int64_t di0[] = {2, 3, 6};
		static const float xi0[] = {
			0.0443858914f, -0.245803073f, 0.0385347642f, -0.860515594f, -1.51349437f, -0.166654855f,
			-0.971708715f, -1.64348137f, 0.505681098f, -0.0613986291f, 0.406528533f, -0.989294946f,
			-0.658058763f, -0.999043047f, -0.88664186f, 0.195407912f, -0.782974601f, 0.356066287f,
			0.339755923f, 2.02516103f, -1.39278901f, 0.887902379f, -0.0894879624f, -0.0140297301f,
			-1.44986379f, -0.460193813f, 0.743197262f, -0.0824783742f, 0.0810543671f, -0.290716678f,
			1.15456975f, -0.0214725677f, -2.20041561f, -0.69207257f, -1.96879661f, -3.25143838f,
		};
		static const int64_t di1[] = {2, 3, 3};
		static const float xi1[] = {
			-0.530115366f, 1.33355987f, 0.0471199043f, -1.17254567f, -0.940699875f, 1.13061321f,
			0.157626629f, 0.0479992405f, -0.0534617901f, 0.0384002626f, 0.805405676f, 0.552567303f,
			0.215704694f, -1.04286838f, 0.511108756f, -0.684247077f, 1.09384573f, -1.27105081f,
		};
		static const int64_t di2[] = {2, 3, 2};
		static const float xi2[] = {
			-0.137620971f, -0.00735828606f, -1.32464552f, 1.72197163f, 1.46040678f, -0.463583767f,
			0.771721184f, 0.378676057f, -2.61355948f, 0.25039801f, -0.0613440797f, 0.0832173526f,
		};
		static const int64_t di3[] = {2, 1, 3, 2};
		static const float xi3[] = {
			-1.07687497f, -0.269347042f, -0.178258762f, 1.18809426f, 0.334427059f, -0.00555503042f,
			1.52897f, -0.555247903f, -0.389430314f, -1.81675506f, 1.56910586f, 0.964332342f,
		};
		static const int64_t di4[] = {2, 3, 3};
		static const float xi4[] = {
			-0.916848063f, -0.668898463f, -0.110148586f, -0.21548894f, -0.25200659f, -0.203600422f,
			-0.0543036126f, -1.5118295f, -0.555687904f, -0.0584601276f, -0.579392076f, -0.6349985f,
			-1.602705f, -0.506687284f, -0.0675505549f, -0.34618184f, -1.10905337f, -0.066861555f,
		};
		static const int64_t do0[] = {2, 3, 4};
		static const float xo0[] = {
			0.0363614634f, -0.0877584219f, 0.389604419f, -0.471183777f, -2.05679536f, 2.8422153f,
			0.916356146f, -1.3059386f, -0.304834157f, 0.360952109f, -0.137945652f, 0.126384139f,
			-0.251216024f, -1.51253402f, 0.723450899f, -0.230025277f, -0.633564174f, 0.567884088f,
			0.178515956f, -0.164487496f, -0.0183256883f, -0.876795888f, -0.843421459f, -1.01627076f,
		};
		static const int64_t do1[] = {2, 1, 3, 2};
		static const float xo1[] = {
			1.42830408f, -2.06468201f, 0.297765553f, -0.276811808f, -0.800097942f, 1.13917649f,
			-0.147188365f, -0.0912574083f, 0.912163258f, -0.136783063f, -0.0717067719f, 0.643618941f,
		};
		kt_begin("LinearAttention", "", 27);
		kt.label = "linear attention gated per-key past";
		kt_attr_int("q_num_heads", 2);
		kt_attr_int("kv_num_heads", 1);
		kt_attr_string("update_rule", "gated");
		kt_input(OX_FLOAT, 3, di0, xi0);
		kt_input(OX_FLOAT, 3, di1, xi1);
		kt_input(OX_FLOAT, 3, di2, xi2);
		kt_input(OX_FLOAT, 4, di3, xi3);
		kt_input(OX_FLOAT, 3, di4, xi4);
		kt_run(P_TABLE, 2);
		kt_expect_values(0, OX_FLOAT, 3, do0, xo0, 1e-05);
		kt_expect_values(1, OX_FLOAT, 4, do1, xo1, 1e-05);
		kt_end();
	}

	/* linear attention delta beta scalar */
	{
		static const int64_t di0[] = {2, 3, 4};
		static const float xi0[] = {
			0.873658061f, -0.392537236f, -0.227242589f, -0.221034348f, 0.109594367f, -1.5930109f,
			-0.235398352f, -0.854395509f, 0.884585023f, -0.77059865f, 0.577046752f, 1.52443743f,
			-0.313596249f, -0.601576269f, 0.191432253f, -0.00202902756f, -0.993616343f, 0.46091941f,
			2.01551604f, -0.258111984f, -0.202876195f, -1.04493201f, 0.319088459f, -1.24697626f,
		};
		static const int64_t di1[] = {2, 3, 4};
		static const float xi1[] = {
			-0.553465486f, 0.639833629f, -0.452726543f, 0.540678799f, 0.762179017f, 0.129663229f,
			0.276695698f, 0.976125479f, -0.0983642042f, -0.296502888f, -0.676615536f, 0.0208535399f,
			0.739572108f, 0.479797691f, -0.471045613f, -0.427687705f, -0.252085626f, 0.146134034f,
			-0.102655716f, 0.107226975f, 0.148369685f, -0.149386793f, -0.0200869702f, 0.103296191f,
		};
		static const int64_t di2[] = {2, 3, 6};
		static const float xi2[] = {
			-0.0839697048f, 0.503520846f, 1.87087572f, 0.591972291f, 0.0558105446f, -1.6861186f,
			0.387957096f, -1.9466784f, -1.40903413f, 0.854639232f, 0.706235051f, -0.149939001f,
			-1.71001112f, -0.37134853f, -0.678738296f, 0.636840761f, 2.25773048f, 0.216930494f,
			-0.779311121f, -1.17055154f, -0.0560942814f, -0.176793188f, -1.15151918f, 0.116355233f,
			-1.15091348f, 1.11210728f, 1.06265056f, 1.08475125f, -0.474050462f, 0.514520586f,
			-0.132069498f, -0.388812065f, -0.33914566f, -1.29971528f, -1.44386375f, 0.794314802f,
		};
		static const int64_t di5[] = {2, 3, 1};
		static const float xi5[] = {
			0.0956177041f, 0.108212426f, 0.500855207f, 0.866566241f, 0.392065048f, 0.0876674205f,
		};
		static const int64_t do0[] = {2, 3, 6};
		static const float xo0[] = {
			0.0017696654f, -0.0106117241f, -0.0394287854f, -0.00028238981f, -2.66234219e-05f, 0.000804332492f,
			0.00106262846f, -0.00788842607f, -0.0525702871f, -0.0303158946f, -0.0211206451f, 0.019671157f,
			-0.0267236456f, -0.0584411249f, -0.092140086f, 0.0198970586f, -0.0836979523f, -0.0461459048f,
			0.105464496f, 0.158411235f, 0.00759126293f, 0.00410456304f, 0.0267345328f, -0.0027013903f,
			0.0581133254f, 0.193487301f, 0.0470052399f, 0.00862136856f, 0.264176846f, -0.039568387f,
			0.146210596f, 0.185266614f, -0.00416319817f, -0.034189146f, -0.100176074f, -0.00131134875f,
		};
		static const int64_t do1[] = {2, 2, 2, 3};
		static const float xo1[] = {
			0.120283365f, -0.16671662f, -0.177160174f, 0.253672481f, 0.0614181161f, 0.19519937f,
			-0.215533063f, -0.750182509f, -0.0199032947f, 0.125092819f, 0.100953452f, -0.093368575f,
			-0.379693121f, -0.852700114f, -0.14448528f, -0.39269343f, -0.425446689f, 0.041332785f,
			0.0307994243f, 0.491619736f, -0.0695937201f, 0.0992733836f, 0.39358443f, -0.0143029103f,
		};
		kt_begin("LinearAttention", "", 27);
		kt.label = "linear attention delta beta scalar";
		kt_attr_int("q_num_heads", 2);
		kt_attr_int("kv_num_heads", 2);
		kt_attr_string("update_rule", "delta");
		kt_attr_float("scale", 0.3f);
		kt_input(OX_FLOAT, 3, di0, xi0);
		kt_input(OX_FLOAT, 3, di1, xi1);
		kt_input(OX_FLOAT, 3, di2, xi2);
		kt_input_none();
		kt_input_none();
		kt_input(OX_FLOAT, 3, di5, xi5);
		kt_run(P_TABLE, 2);
		kt_expect_values(0, OX_FLOAT, 3, do0, xo0, 1e-05);
		kt_expect_values(1, OX_FLOAT, 4, do1, xo1, 1e-05);
		kt_end();
	}

	/* linear attention gated delta gqa */
	{
		static const int64_t di0[] = {1, 4, 8};
		static const float xi0[] = {
			0.392094791f, -0.37707445f, 1.02917922f, 0.210394934f, -1.21338212f, -0.930763781f,
			0.805471063f, 0.463831455f, -1.8990612f, 1.34771228f, 0.59802705f, 1.34334302f,
			-0.383700877f, -0.295706213f, -1.1264571f, 2.53692961f, -0.175454229f, 1.58753324f,
			-0.647292435f, 0.163841188f, -1.67135251f, -0.382867157f, 0.983754933f, -1.25174379f,
			1.0722276f, 0.337237805f, -1.04395092f, -0.501597285f, -0.459065676f, -0.0495193377f,
			-0.536143959f, -0.827287912f,
		};
		static const int64_t di1[] = {1, 4, 4};
		static const float xi1[] = {
			-0.152293846f, -0.513444841f, -0.644763291f, -0.0240882412f, 0.441437125f, -0.764685869f,
			0.00175407575f, -0.324978083f, -0.488572717f, 0.426718831f, -0.259084851f, 0.749150813f,
			-0.389919668f, 0.193250999f, -0.1136415f, -0.377010912f,
		};
		static const int64_t di2[] = {1, 4, 6};
		static const float xi2[] = {
			0.587675035f, -0.154982567f, 0.603210568f, -0.0472915061f, -1.08581626f, -0.102069244f,
			0.0519551709f, 0.958462954f, -0.906269014f, -0.0393298529f, -1.72187877f, 0.651493073f,
			-1.08148301f, -1.80635953f, -0.0592168346f, 1.105685f, -1.52444696f, -1.08803558f,
			-0.743274868f, -1.12949669f, 0.37942788f, -0.807367444f, -0.721514761f, 0.583305418f,
		};
		static const int64_t di3[] = {1, 2, 2, 3};
		static const float xi3[] = {
			-0.755514622f, 0.432780087f, -0.971385181f, -1.21213853f, -1.83544934f, 1.86120284f,
			-0.320259035f, 0.243933365f, -0.0310495086f, 0.15996176f, 0.0496864803f, 1.90821707f,
		};
		static const int64_t di4[] = {1, 4, 2};
		static const float xi4[] = {
			-1.0389266f, -1.5574621f, -1.01195967f, -1.33470905f, -0.74696207f, -0.820378184f,
			-0.961315572f, -1.39043581f,
		};
		static const int64_t di5[] = {1, 4, 2};
		static const float xi5[] = {
			0.177398324f, 0.695561945f, 1.40978467f, 0.263313383f, 0.537877619f, 0.520183563f,
			0.538961947f, 0.142707914f,
		};
		static const int64_t do0[] = {1, 4, 12};
		static const float xo0[] = {
			0.0457281284f, 0.207807273f, -0.255955607f, -0.269203931f, 0.0302688871f, -0.181681529f,
			9.2952243e-05f, -0.467545986f, -0.297203302f, -0.00389629975f, 0.307307184f, 0.153329283f,
			0.0340856537f, -1.71291554f, 1.65895271f, -0.177062199f, -0.764774978f, 0.665395737f,
			-0.000646330009f, -0.0694809183f, -0.0126545439f, 0.0278967153f, 0.16814816f, 0.0773260519f,
			-0.377877593f, -1.01350927f, 0.427745372f, -0.14028281f, -0.389452606f, 0.117838651f,
			0.0614423491f, -0.173570767f, -0.0701608136f, -0.489902407f, 0.665968537f, 0.468208671f,
			0.129907265f, 0.240552351f, -0.0590500943f, -0.103133351f, -0.182818651f, 0.0363156796f,
			0.00294653745f, -0.0226219781f, -0.00487527205f, -0.0779711008f, 0.0243208259f, 0.0657522678f,
		};
		static const int64_t do1[] = {1, 2, 2, 3};
		static const float xo1[] = {
			0.231283367f, 0.449211568f, -0.132253021f, -0.190582961f, -0.419480324f, 0.172862858f,
			-0.025217915f, 0.079749912f, 0.0291837454f, 0.149631366f, -0.093259275f, -0.13131395f,
		};
		kt_begin("LinearAttention", "", 27);
		kt.label = "linear attention gated delta gqa";
		kt_attr_int("q_num_heads", 4);
		kt_attr_int("kv_num_heads", 2);
		kt_input(OX_FLOAT, 3, di0, xi0);
		kt_input(OX_FLOAT, 3, di1, xi1);
		kt_input(OX_FLOAT, 3, di2, xi2);
		kt_input(OX_FLOAT, 4, di3, xi3);
		kt_input(OX_FLOAT, 3, di4, xi4);
		kt_input(OX_FLOAT, 3, di5, xi5);
		kt_run(P_TABLE, 2);
		kt_expect_values(0, OX_FLOAT, 3, do0, xo0, 1e-05);
		kt_expect_values(1, OX_FLOAT, 4, do1, xo1, 1e-05);
		kt_end();
	}

	/* linear attention float16 state float */
	{
		static const int64_t di0[] = {1, 2, 2};
		static const uint16_t xi0[] = {
			48646, 48081, 15755, 14993,
		};
		static const int64_t di1[] = {1, 2, 2};
		static const uint16_t xi1[] = {
			46701, 47862, 49043, 46668,
		};
		static const int64_t di2[] = {1, 2, 2};
		static const uint16_t xi2[] = {
			42985, 44385, 44545, 48253,
		};
		static const int64_t di3[] = {1, 1, 2, 2};
		static const float xi3[] = {
			-0.066273883f, -0.0386733785f, 1.29056203f, 1.86673343f,
		};
		static const int64_t do0[] = {1, 2, 2};
		static const uint16_t xo0[] = {
			47827, 48471, 15170, 17131,
		};
		static const int64_t do1[] = {1, 1, 2, 2};
		static const float xo1[] = {
			0.123771846f, 2.11978173f, 1.35436749f, 2.38145876f,
		};
		kt_begin("LinearAttention", "", 27);
		kt.label = "linear attention float16 state float";
		kt_attr_int("q_num_heads", 1);
		kt_attr_int("kv_num_heads", 1);
		kt_attr_string("update_rule", "linear");
		kt_input(OX_FLOAT16, 3, di0, xi0);
		kt_input(OX_FLOAT16, 3, di1, xi1);
		kt_input(OX_FLOAT16, 3, di2, xi2);
		kt_input(OX_FLOAT, 4, di3, xi3);
		kt_run(P_TABLE, 2);
		kt_expect_values(0, OX_FLOAT16, 3, do0, xo0, 0.002);
		kt_expect_values(1, OX_FLOAT, 4, do1, xo1, 0.002);
		kt_end();
	}

	/* flex attention gqa */
	{
		static const int64_t di0[] = {1, 4, 3, 4};
		static const float xi0[] = {
			-0.136989027f, -0.766305923f, -0.0649821311f, -0.607621253f, -0.742433786f, -0.0586501509f,
			-1.04330444f, 0.606106758f, -0.10391555f, 0.250008315f, -0.182940036f, -0.72725445f,
			-0.947959542f, -0.237276003f, -0.548760355f, 0.233901337f, -0.00443170313f, -1.36230671f,
			0.0671212971f, -1.34286046f, -0.616477609f, -0.294353604f, -2.07527328f, 0.0915074497f,
			0.150983348f, -0.158024192f, -0.424317271f, -0.373603672f, -0.976539493f, -0.269700378f,
			-0.552611828f, 0.091685392f, -1.20413613f, 0.235589907f, 0.14321889f, -0.141562834f,
			-0.439204812f, 0.552339911f, -1.66460168f, 0.460453331f, 0.243037462f, 0.283376306f,
			0.383312583f, -0.653644383f, -0.259460062f, 0.637058318f, 0.430639237f, 0.206712767f,
		};
		static const int64_t di1[] = {1, 2, 5, 4};
		static const float xi1[] = {
			-1.51432025f, 0.537887096f, 1.16947103f, 1.00967145f, 0.233878046f, -1.55767858f,
			0.942544818f, -0.147254631f, -2.53251958f, 0.377207398f, -1.49217176f, -1.2964406f,
			-0.634958863f, 1.27259123f, -0.370845348f, 0.270991594f, 1.74796796f, 1.59402978f,
			-0.103353418f, -0.241521016f, -1.26087058f, -0.694458067f, 0.425358355f, 0.395730764f,
			0.110238232f, 0.994801641f, -0.772368014f, -0.0560765192f, 0.731243014f, 0.584145904f,
			1.07094574f, 0.3970204f, -0.309402555f, 0.362192273f, -1.00259519f, -1.63945937f,
			0.580671787f, -0.0551403314f, 0.308409631f, -1.69768441f,
		};
		static const int64_t di2[] = {1, 2, 5, 3};
		static const float xi2[] = {
			-0.365114033f, -0.599857092f, -0.864212096f, -2.2550149f, -0.334873468f, 0.897304296f,
			0.380997717f, -0.600946605f, -0.0148759717f, 0.756800056f, -2.76041794f, -0.124536544f,
			0.543200135f, 0.682128608f, 1.7007302f, 1.13504565f, 0.312562823f, 0.301975995f,
			0.786945343f, -0.539326966f, -0.0401880555f, 0.906239033f, 1.95744526f, -0.159267306f,
			-0.0484006889f, 0.198480189f, 1.34320366f, -0.0303133037f, 1.46935904f, -0.966657221f,
		};
		static const int64_t do0[] = {1, 4, 3, 3};
		static const float xo0[] = {
			-0.5754053f, -0.628148973f, 0.359665424f, 0.152715221f, -0.952439666f, -0.00272220094f,
			0.0537247583f, -0.710824072f, 0.329423815f, 0.0428760462f, -0.867741406f, -0.0287449956f,
			-1.03885865f, -0.49821341f, 0.524910033f, 0.310655534f, -0.805891275f, 0.0445339903f,
			0.419645846f, 0.60849309f, 0.163917318f, 0.607618093f, 0.410689235f, 0.305240333f,
			0.617771685f, 0.505690455f, 0.244916528f, 0.523459673f, 0.145912483f, 0.357937366f,
			0.415829211f, 0.831788361f, -0.000439645781f, 0.637882769f, 0.739491105f, 0.0623314232f,
		};
		kt_begin("FlexAttention", "ai.onnx.preview", 1);
		kt.label = "flex attention gqa";
		kt_input(OX_FLOAT, 4, di0, xi0);
		kt_input(OX_FLOAT, 4, di1, xi1);
		kt_input(OX_FLOAT, 4, di2, xi2);
		kt_run(P_TABLE, 1);
		kt_expect_values(0, OX_FLOAT, 4, do0, xo0, 1e-05);
		kt_end();
	}

	/* flex attention scale */
	{
		static const int64_t di0[] = {2, 1, 2, 3};
		static const float xi0[] = {
			-0.186036289f, -0.198165163f, 0.786505699f, 1.04526043f, -1.50944436f, -0.915117621f,
			0.336852491f, -0.658693671f, -1.5224278f, 1.03847992f, 0.493970096f, 0.493177503f,
		};
		static const int64_t di1[] = {2, 1, 4, 3};
		static const float xi1[] = {
			-0.475445718f, 1.02893841f, -0.23996f, 1.09643531f, -0.911665142f, -0.854135454f,
			0.204663217f, -0.702332139f, 0.67545104f, 0.260087758f, -0.922971189f, 0.0728655979f,
			-0.351277679f, 0.915832818f, -0.632552981f, -0.439173102f, 1.21123695f, 2.23859334f,
			1.99900866f, 0.0632230118f, 0.21885471f, 1.53345871f, -0.124434806f, -0.976349115f,
		};
		static const int64_t di2[] = {2, 1, 4, 2};
		static const float xi2[] = {
			0.116875596f, 0.451516777f, -0.829149604f, -1.64623117f, -1.43672955f, 0.665429294f,
			-0.758376539f, -0.141347095f, 0.212558687f, 0.619140863f, -0.334902793f, 0.498715699f,
			-0.890060306f, -0.361714035f, -1.02441561f, 1.13176727f,
		};
		static const int64_t do0[] = {2, 1, 2, 2};
		static const float xo0[] = {
			-0.778059959f, -0.0675037652f, -0.84211123f, -0.588564992f, -0.638323963f, 0.584978223f,
			-0.600048125f, 0.377280295f,
		};
		kt_begin("FlexAttention", "ai.onnx.preview", 1);
		kt.label = "flex attention scale";
		kt_attr_float("scale", 0.3f);
		kt_input(OX_FLOAT, 4, di0, xi0);
		kt_input(OX_FLOAT, 4, di1, xi1);
		kt_input(OX_FLOAT, 4, di2, xi2);
		kt_run(P_TABLE, 1);
		kt_expect_values(0, OX_FLOAT, 4, do0, xo0, 1e-05);
		kt_end();
	}

	/* flex attention double */
	{
		static const int64_t di0[] = {1, 2, 3, 4};
		static const double xi0[] = {
			-0.027083228066991226, -0.73930748763029952, -0.35237179806514651, -0.22172848072327495, 0.70051979132500952, -1.595636178185236,
			-1.0372058416254191, -0.37810725155749708, 2.5323058327678063, 0.95567889253199467, -0.11145167913094357, 0.71199958241083949,
			2.057436169630336, -0.23374392677539008, -0.36641334409756016, 1.2119435432218957, 0.49417549813294265, 0.67133315532255677,
			-0.50822239928058055, 1.9242031323427422, 1.7095908015936603, 0.56594778887274988, 0.68428983814723754, -2.0272608722430356,
		};
		static const int64_t di1[] = {1, 2, 2, 4};
		static const double xi1[] = {
			0.63770979349720824, -0.19410858722532306, 0.43390570582822213, 0.68245941184609782, -0.34129176810827538, -1.6904818001870843,
			0.36787456507423494, -0.74138365244039506, -0.33019409272433942, -0.6045098440941945, -0.34157425525518803, -2.3095209572659416,
			1.2169471272315173, 0.25334610232647398, 1.111399262918864, 1.9798418298099358,
		};
		static const int64_t di2[] = {1, 2, 2, 4};
		static const double xi2[] = {
			0.022593122562750742, -1.8024362558405755, -0.89388685037958471, -1.2069044808967102, -0.50187464314499897, 0.079647978065977482,
			-2.0021872670232388, 0.34247549334155225, -1.5103566532858779, 0.29736526280001135, -0.1094911451769814, -0.31363123919257752,
			-0.07304305594131319, -0.53977801573169237, -0.6124714434041737, -1.6827563908688876,
		};
		static const int64_t do0[] = {1, 2, 3, 4};
		static const double xo0[] = {
			-0.33199701442915208, -0.52996814632647371, -1.6432034380930882, -0.15937612312191257, -0.37616261373402171, -0.37147722740306321,
			-1.7365337727893477, -0.028902336957278698, -0.018771661977399948, -1.6539962297564161, -0.9812985293001345, -1.0847048472953902,
			-0.10375287289887933, -0.52189151072786999, -0.60172470523906041, -1.6535034965265125, -0.090002798348032514, -0.52990005006877472,
			-0.60653647116892306, -1.666601245646655, -1.3776433804385466, 0.22006826613808275, -0.15593345371617698, -0.44004838305892269,
		};
		kt_begin("FlexAttention", "ai.onnx.preview", 1);
		kt.label = "flex attention double";
		kt_input(OX_DOUBLE, 4, di0, xi0);
		kt_input(OX_DOUBLE, 4, di1, xi1);
		kt_input(OX_DOUBLE, 4, di2, xi2);
		kt_run(P_TABLE, 1);
		kt_expect_values(0, OX_DOUBLE, 4, do0, xo0, 1e-12);
		kt_end();
	}

	/* flex attention float precision double */
	{
		static const int64_t di0[] = {1, 1, 3, 4};
		static const float xi0[] = {
			-0.0296273157f, 1.84553373f, 1.9804951f, 1.32181764f, 0.705801606f, -0.676480114f,
			1.44275081f, -0.0561275557f, -0.0688755065f, -0.291227132f, 0.0919618979f, -0.435214907f,
		};
		static const int64_t di1[] = {1, 1, 2, 4};
		static const float xi1[] = {
			-0.0837821662f, -1.08459914f, -0.373663694f, 2.28055644f, -0.0695940256f, -0.238660559f,
			0.532374263f, 0.708121836f,
		};
		static const int64_t di2[] = {1, 1, 2, 4};
		static const float xi2[] = {
			-1.11376882f, -0.207158789f, 0.918275833f, 0.269837618f, 0.121954046f, 1.55401766f,
			-0.67777276f, 0.0827458948f,
		};
		static const int64_t do0[] = {1, 1, 3, 4};
		static const float xo0[] = {
			-0.305133253f, 0.945324481f, -0.126150623f, 0.147408038f, -0.369036913f, 0.854247749f,
			-0.0436132476f, 0.157083228f, -0.41598466f, 0.787336886f, 0.017024057f, 0.164191246f,
		};
		kt_begin("FlexAttention", "ai.onnx.preview", 1);
		kt.label = "flex attention float precision double";
		kt_attr_int("softmax_precision", 11);
		kt_input(OX_FLOAT, 4, di0, xi0);
		kt_input(OX_FLOAT, 4, di1, xi1);
		kt_input(OX_FLOAT, 4, di2, xi2);
		kt_run(P_TABLE, 1);
		kt_expect_values(0, OX_FLOAT, 4, do0, xo0, 1e-06);
		kt_end();
	}

	/* flex attention float16 */
	{
		static const int64_t di0[] = {1, 2, 3, 8};
		static const uint16_t xi0[] = {
			47145, 15862, 49103, 47452, 47164, 14671,
			14554, 15765, 48716, 14849, 46257, 47443,
			14417, 47964, 49191, 46572, 48638, 47409,
			13810, 13566, 15961, 45668, 48674, 47628,
			47963, 48351, 14071, 47401, 49129, 14739,
			44834, 13750, 11972, 14606, 10462, 15602,
			14029, 13894, 13967, 48596, 45381, 46118,
			12964, 48495, 16009, 11950, 48344, 48854,
		};
		static const int64_t di1[] = {1, 2, 4, 8};
		static const uint16_t xi1[] = {
			46208, 44477, 47551, 11749, 47393, 14442,
			47564, 43246, 15317, 16677, 48136, 46959,
			47800, 14918, 48280, 47040, 42900, 48084,
			48041, 47004, 49203, 48584, 46748, 12478,
			45554, 48921, 46956, 14947, 14450, 44298,
			47897, 14605, 47266, 48301, 47723, 15819,
			13068, 15523, 47019, 15233, 47312, 45322,
			16633, 14883, 47106, 44398, 13624, 15576,
			47059, 48887, 46201, 9185, 12035, 15684,
			13585, 14977, 48232, 15089, 16433, 14895,
			13327, 12525, 16166, 47979,
		};
		static const int64_t di2[] = {1, 2, 4, 8};
		static const uint16_t xi2[] = {
			44828, 14173, 14836, 46847, 13547, 46194,
			12214, 45114, 48273, 42344, 15108, 48060,
			46007, 14673, 48200, 12760, 48190, 15498,
			16544, 16395, 45828, 14828, 12222, 11913,
			15921, 48455, 15417, 43589, 15778, 12798,
			47458, 13423, 14819, 10388, 14287, 47148,
			49221, 15155, 14744, 12478, 11361, 15397,
			46928, 47527, 45577, 15554, 48524, 15556,
			47389, 48231, 15626, 44595, 48435, 46525,
			15219, 15557, 46805, 13952, 14774, 47400,
			13742, 43029, 47178, 47072,
		};
		static const int64_t do0[] = {1, 2, 3, 8};
		static const uint16_t xo0[] = {
			47763, 12590, 15421, 46773, 44050, 14278,
			47467, 12212, 46587, 11808, 15551, 42840,
			12935, 13795, 46935, 12022, 14917, 47384,
			15446, 42077, 15195, 12631, 46942, 12636,
			45087, 44199, 14392, 46783, 48052, 13915,
			10235, 14990, 45651, 13427, 14521, 47268,
			46176, 13183, 46266, 42962, 45623, 44277,
			14739, 46900, 47636, 12963, 11634, 13904,
		};
		kt_begin("FlexAttention", "ai.onnx.preview", 1);
		kt.label = "flex attention float16";
		kt_input(OX_FLOAT16, 4, di0, xi0);
		kt_input(OX_FLOAT16, 4, di1, xi1);
		kt_input(OX_FLOAT16, 4, di2, xi2);
		kt_run(P_TABLE, 1);
		kt_expect_values(0, OX_FLOAT16, 4, do0, xo0, 0.002);
		kt_end();
	}
}

/* ---- LinearAttention ----------------------------------------------------- */

static void
linear_attention_error(const char *label, const char *rule, int64_t qh, int64_t kvh, ox_dtype dt,
					   const int64_t *qd, const int64_t *kd, const int64_t *vd, const int64_t *pd,
					   const int64_t *gd, const int64_t *bd, ox_code code)
{
	static const float data[256];

	kt_begin("LinearAttention", "", 27);
	kt.label = label;
	if (qh)
		kt_attr_int("q_num_heads", qh);
	if (kvh)
		kt_attr_int("kv_num_heads", kvh);
	if (rule)
		kt_attr_string("update_rule", rule);
	kt_input(dt, 3, qd, data);
	kt_input(dt, 3, kd, data);
	kt_input(dt, 3, vd, data);
	if (pd)
		kt_input(OX_FLOAT, 4, pd, data);
	else
		kt_input_none();
	if (gd)
		kt_input(dt, 3, gd, data);
	else
		kt_input_none();
	if (bd)
		kt_input(dt, 3, bd, data);
	else
		kt_input_none();
	kt_run(P_TABLE, 2);
	kt_expect_error(code);
	kt_end();
}

static void
linear_attention_cases(void)
{
	static const int64_t q[] = {1, 2, 4};	/* 2 heads of d_k 2 */
	static const int64_t k[] = {1, 2, 4};
	static const int64_t v[] = {1, 2, 6};	/* 2 heads of d_v 3 */
	static const int64_t p[] = {1, 2, 2, 3};
	static const int64_t g[] = {1, 2, 2};
	static const int64_t b[] = {1, 2, 2};
	static const int64_t kbad[] = {1, 2, 6};
	static const int64_t tbad[] = {1, 3, 4};
	static const int64_t pbad[] = {1, 2, 3, 2};
	static const int64_t gbad[] = {1, 2, 3};
	static const int64_t bbad[] = {1, 2, 4};

	linear_attention_error("linear attention no heads", "linear", 0, 2, OX_FLOAT, q, k, v, NULL, NULL, NULL,
						   OX_INVALID_MODEL);
	linear_attention_error("linear attention heads not a multiple", "linear", 3, 2, OX_FLOAT, q, k, v, NULL,
						   NULL, NULL, OX_INVALID_ARGUMENT);
	linear_attention_error("linear attention unknown rule", "mamba", 2, 2, OX_FLOAT, q, k, v, NULL, NULL,
						   NULL, OX_UNSUPPORTED);
	linear_attention_error("linear attention gated without decay", "gated", 2, 2, OX_FLOAT, q, k, v, NULL,
						   NULL, NULL, OX_INVALID_ARGUMENT);
	linear_attention_error("linear attention default rule without beta", NULL, 2, 2, OX_FLOAT, q, k, v, NULL,
						   g, NULL, OX_INVALID_ARGUMENT);
	linear_attention_error("linear attention linear with beta", "linear", 2, 2, OX_FLOAT, q, k, v, NULL,
						   NULL, b, OX_INVALID_ARGUMENT);
	linear_attention_error("linear attention key width", "linear", 2, 2, OX_FLOAT, q, kbad, v, NULL, NULL,
						   NULL, OX_INVALID_ARGUMENT);
	linear_attention_error("linear attention sequence mismatch", "linear", 2, 2, OX_FLOAT, q, tbad, v, NULL,
						   NULL, NULL, OX_INVALID_ARGUMENT);
	linear_attention_error("linear attention past shape", "linear", 2, 2, OX_FLOAT, q, k, v, pbad, NULL,
						   NULL, OX_INVALID_ARGUMENT);
	linear_attention_error("linear attention decay width", "gated", 2, 2, OX_FLOAT, q, k, v, p, gbad, NULL,
						   OX_INVALID_ARGUMENT);
	linear_attention_error("linear attention beta width", "delta", 2, 2, OX_FLOAT, q, k, v, p, NULL, bbad,
						   OX_INVALID_ARGUMENT);
	linear_attention_error("linear attention double", "linear", 2, 2, OX_DOUBLE, q, k, v, NULL, NULL, NULL,
						   OX_UNSUPPORTED);

	{
		/* T = 0: empty output, present_state equals past_state */
		static const int64_t q0[] = {1, 0, 4};
		static const int64_t v0[] = {1, 0, 6};
		static const int64_t y0[] = {1, 0, 6};
		static const float past[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

		kt_begin("LinearAttention", "", 27);
		kt.label = "linear attention empty sequence";
		kt_attr_int("q_num_heads", 2);
		kt_attr_int("kv_num_heads", 2);
		kt_attr_string("update_rule", "linear");
		kt_input(OX_FLOAT, 3, q0, NULL);
		kt_input(OX_FLOAT, 3, q0, NULL);
		kt_input(OX_FLOAT, 3, v0, NULL);
		kt_input(OX_FLOAT, 4, p, past);
		kt_run(P_TABLE, 2);
		kt_check_shape(0, OX_FLOAT, 3, y0);
		kt_expect_f32(1, 4, p, past, 0);
		kt_end();
	}
}

/* ---- FlexAttention ------------------------------------------------------- */

static double
flex_frand(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return ((*seed >> 8) & 0xffff) / 32768.0 - 1.0;
}

/* a larger GQA case against a naive double loop (exercises the SGEMM paths) */
static void
flex_attention_large(void)
{
	enum
	{
		B = 2, HQ = 4, HKV = 2, L = 17, S = 33, E = 24, EV = 20
	};
	static float q[B * HQ * L * E],
				k[B * HKV * S * E],
				v[B * HKV * S * EV],
				want[B * HQ * L * EV];
	static const int64_t qd[] = {B, HQ, L, E},
				kd[] = {B, HKV, S, E},
				vd[] = {B, HKV, S, EV},
				yd[] = {B, HQ, L, EV};
	unsigned	seed = 42;
	const double scale = 1.0 / sqrt((double) E);

	for (int i = 0; i < B * HQ * L * E; i++)
		q[i] = (float) flex_frand(&seed);
	for (int i = 0; i < B * HKV * S * E; i++)
		k[i] = (float) flex_frand(&seed);
	for (int i = 0; i < B * HKV * S * EV; i++)
		v[i] = (float) flex_frand(&seed);
	for (int b = 0; b < B; b++)
		for (int h = 0; h < HQ; h++)
			for (int i = 0; i < L; i++)
			{
				const int	kh = h / (HQ / HKV);
				double		sc[S],
							m = -INFINITY,
							sum = 0;

				for (int j = 0; j < S; j++)
				{
					double		acc = 0;

					for (int e = 0; e < E; e++)
						acc += (double) q[((b * HQ + h) * L + i) * E + e] * k[((b * HKV + kh) * S + j) * E + e];
					sc[j] = acc * scale;
					m = sc[j] > m ? sc[j] : m;
				}
				for (int j = 0; j < S; j++)
					sum += (sc[j] = exp(sc[j] - m));
				for (int e = 0; e < EV; e++)
				{
					double		acc = 0;

					for (int j = 0; j < S; j++)
						acc += sc[j] / sum * v[((b * HKV + kh) * S + j) * EV + e];
					want[((b * HQ + h) * L + i) * EV + e] = (float) acc;
				}
			}
	kt_begin("FlexAttention", "ai.onnx.preview", 1);
	kt.label = "flex attention large gqa";
	kt_input(OX_FLOAT, 4, qd, q);
	kt_input(OX_FLOAT, 4, kd, k);
	kt_input(OX_FLOAT, 4, vd, v);
	kt_run(P_TABLE, 1);
	kt_expect_f32(0, 4, yd, want, 1e-5);
	kt_end();
}

/* a modifier graph with n_in inputs and one output */
static ox_graph *
flex_mod_graph(int n_in)
{
	ox_graph   *g = ox_graph_new(kt.model, kt.graph, NULL);

	/* the model frees the graph's arrays */
	g->name = "mod";
	g->inputs = calloc(2, sizeof(int));
	g->n_inputs = n_in;
	g->outputs = calloc(1, sizeof(int));
	g->n_outputs = 1;
	return g;
}

static void
flex_attention_error(const char *label, ox_dtype kdt, const int64_t *qd, int qr, const int64_t *kd,
					 const int64_t *vd, ox_code code)
{
	static const float data[256];

	kt_begin("FlexAttention", "ai.onnx.preview", 1);
	kt.label = label;
	kt_input(OX_FLOAT, qr, qd, data);
	kt_input(kdt, 4, kd, data);
	kt_input(OX_FLOAT, 4, vd, data);
	kt_run(P_TABLE, 1);
	kt_expect_error(code);
	kt_end();
}

static void
flex_attention_cases(void)
{
	static const int64_t q[] = {1, 4, 2, 3};
	static const int64_t q3[] = {4, 2, 3};
	static const int64_t k[] = {1, 2, 5, 3};
	static const int64_t v[] = {1, 2, 5, 2};
	static const int64_t k3h[] = {1, 3, 5, 3};
	static const int64_t v3h[] = {1, 3, 5, 2};
	static const int64_t kwide[] = {1, 2, 5, 4};
	static const int64_t vlen[] = {1, 2, 4, 2};
	static const float data[64] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24};

	flex_attention_large();
	flex_attention_error("flex attention rank 3", OX_FLOAT, q3, 3, k, v, OX_INVALID_ARGUMENT);
	flex_attention_error("flex attention heads not a multiple", OX_FLOAT, q, 4, k3h, v3h, OX_INVALID_ARGUMENT);
	flex_attention_error("flex attention head size", OX_FLOAT, q, 4, kwide, v, OX_INVALID_ARGUMENT);
	flex_attention_error("flex attention kv lengths", OX_FLOAT, q, 4, k, vlen, OX_INVALID_ARGUMENT);
	flex_attention_error("flex attention mixed types", OX_DOUBLE, q, 4, k, v, OX_INVALID_ARGUMENT);

	{
		/* no keys: the empty softmax contributes nothing */
		static const int64_t k0[] = {1, 2, 0, 3};
		static const int64_t v0[] = {1, 2, 0, 2};
		static const int64_t yd[] = {1, 4, 2, 2};
		static const float zeros[16];

		kt_begin("FlexAttention", "ai.onnx.preview", 1);
		kt.label = "flex attention no keys";
		kt_input(OX_FLOAT, 4, q, data);
		kt_input(OX_FLOAT, 4, k0, NULL);
		kt_input(OX_FLOAT, 4, v0, NULL);
		kt_run(P_TABLE, 1);
		kt_expect_f32(0, 4, yd, zeros, 0);
		kt_end();
	}

	kt_begin("FlexAttention", "ai.onnx.preview", 1);
	kt.label = "flex attention bad softmax_precision";
	kt_attr_int("softmax_precision", OX_INT32);
	kt_input(OX_FLOAT, 4, q, data);
	kt_input(OX_FLOAT, 4, k, data);
	kt_input(OX_FLOAT, 4, v, data);
	kt_run(P_TABLE, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	kt_begin("FlexAttention", "ai.onnx.preview", 1);
	kt.label = "flex attention score_mod with two inputs";
	kt_new_attr("score_mod", OX_ATTR_GRAPH)->g = flex_mod_graph(2);
	kt_input(OX_FLOAT, 4, q, data);
	kt_input(OX_FLOAT, 4, k, data);
	kt_input(OX_FLOAT, 4, v, data);
	kt_run(P_TABLE, 1);
	kt_expect_error(OX_INVALID_MODEL);
	kt_end();

	/* the harness has no executor: a modifier cannot run, and says so */
	kt_begin("FlexAttention", "ai.onnx.preview", 1);
	kt.label = "flex attention prob_mod without runner";
	kt_new_attr("prob_mod", OX_ATTR_GRAPH)->g = flex_mod_graph(1);
	kt_input(OX_FLOAT, 4, q, data);
	kt_input(OX_FLOAT, 4, k, data);
	kt_input(OX_FLOAT, 4, v, data);
	kt_run(P_TABLE, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();
}

int
main(void)
{
	generated_cases();
	linear_attention_cases();
	flex_attention_cases();
	return kt_summary();
}
