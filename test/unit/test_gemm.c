/*
 * test_gemm.c
 *	  Unit tests of the gemm family: Gemm, MatMul, MatMulInteger,
 *	  QLinearMatMul, Einsum.  Expected values of the generated cases come
 *	  from onnxruntime (or onnx.reference where onnxruntime lacks the type).
 */
#include "kernel_test.h"

static void
case_0(void)
{
	kt_begin("Gemm", "", 13);
	kt.label = "Gemm default";
	kt_input(OX_FLOAT, 2, (const int64_t[]) {3, 4}, (const float[]) {-1.60383677f, 0.0640999153f, 0.740891278f, 0.152619198f, 0.863743901f, 2.91309929f, -1.4788233f, 0.945472956f,
		-1.66613543f, 0.343744576f, -0.512443721f, 1.32375896f});
	kt_input(OX_FLOAT, 2, (const int64_t[]) {4, 5}, (const float[]) {-0.860280216f, 0.519493222f, -1.26514375f, -2.15913892f, 0.434733957f, 1.73328936f, 0.520134151f, -1.00216579f,
		0.268345535f, 0.767174721f, 1.19127202f, -1.15741086f, 0.696279407f, 0.351383686f, -0.0324150845f, 0.0131815793f,
		-0.679249942f, -0.620532036f, 1.33121419f, 0.258838505f});
	kt_input(OX_FLOAT, 2, (const int64_t[]) {3, 5}, (const float[]) {-0.481483907f, -2.49178958f, -0.876563787f, -0.505509138f, -1.28312922f, -1.33032846f, 0.825992584f, -0.247215018f,
		-1.69970608f, -1.33515286f, -0.299638897f, 1.11480689f, -1.50640881f, 1.59011209f, -0.487325191f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {3, 5}, (const float[]) {1.8939836f, -4.25281334f, 1.50944352f, 3.43810415f, -1.91570807f, 1.22663593f, 3.85929799f, -5.87575388f,
		-2.04393935f, 1.56786299f, 1.13650262f, 0.121998906f, -0.921235919f, 6.86191463f, -0.588688016f}, 0.0001);
	kt_end();
}

static void
case_1(void)
{
	kt_begin("Gemm", "", 13);
	kt.label = "Gemm transA transB alpha beta";
	kt_attr_int("transA", 1);
	kt_attr_int("transB", 1);
	kt_attr_float("alpha", 0.5f);
	kt_attr_float("beta", 2.0f);
	kt_input(OX_FLOAT, 2, (const int64_t[]) {4, 3}, (const float[]) {-1.71110213f, 0.513090193f, 1.43709195f, -0.221804112f, 0.648816526f, -0.317891181f, -0.0109782554f, 1.66541648f,
		0.895786405f, -1.20260119f, 2.79962707f, -1.02119625f});
	kt_input(OX_FLOAT, 2, (const int64_t[]) {5, 4}, (const float[]) {0.84810698f, 0.498082608f, -0.0844416395f, 0.202493325f, -0.163805783f, 0.837059736f, -0.712439656f, -1.17414987f,
		0.475267947f, 1.73739481f, -0.136643663f, 1.70331669f, -0.0882183462f, 1.55724216f, 0.963409901f, 0.522726178f,
		0.937150419f, -0.836909294f, 0.0980680883f, -1.57055342f});
	kt_input(OX_FLOAT, 2, (const int64_t[]) {1, 5}, (const float[]) {-1.7798779f, 0.918836296f, -0.149067774f, 1.00563645f, 0.131017894f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {3, 5}, (const float[]) {-4.46188879f, 2.59491277f, -1.92088747f, 1.59444296f, 0.496907145f, -2.96745825f, -0.169647098f, 2.65795875f,
		4.02778149f, -1.88586283f, -3.17073345f, 1.86734557f, -1.163697f, 1.86496902f, 1.91429019f}, 0.0001);
	kt_end();
}

static void
case_2(void)
{
	kt_begin("Gemm", "", 13);
	kt.label = "Gemm no C";
	kt_attr_int("transB", 1);
	kt_input(OX_FLOAT, 2, (const int64_t[]) {2, 6}, (const float[]) {-0.77304709f, 2.89430737f, 1.37707841f, 0.17145583f, 0.0222422294f, 1.65268576f, -0.321875215f, 1.52456462f,
		0.654605329f, -1.32182598f, 0.743245363f, 1.11738074f});
	kt_input(OX_FLOAT, 2, (const int64_t[]) {3, 6}, (const float[]) {0.546459436f, 0.964053035f, 1.37477863f, -0.491282851f, 2.25392556f, 0.161614195f, 0.833778799f, -1.58010948f,
		1.01058531f, 0.721867859f, -0.583632052f, 0.682845354f, 0.505365789f, 1.00145781f, 0.715796113f, -0.554364622f,
		0.05488047f, -1.6986469f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {2, 3}, (const float[]) {4.49400139f, -2.58690119f, 0.592404485f, 4.69900131f, -2.64078426f, 0.708214223f}, 0.0001);
	kt_end();
}

static void
case_3(void)
{
	kt_begin("Gemm", "", 13);
	kt.label = "Gemm scalar C";
	kt_input(OX_FLOAT, 2, (const int64_t[]) {2, 3}, (const float[]) {0.0214629807f, -0.515716374f, 1.06883919f, 1.34257412f, 0.641309559f, -1.85189486f});
	kt_input(OX_FLOAT, 2, (const int64_t[]) {3, 4}, (const float[]) {0.520961642f, -1.10491621f, 0.437862277f, 0.158265948f, -1.09056187f, -1.31971598f, 0.838651478f, 2.11976385f,
		-0.049572438f, 0.325697839f, -0.548323393f, -0.270319074f});
	kt_input(OX_FLOAT, 1, (const int64_t[]) {1}, (const float[]) {-1.67280543f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {2, 4}, (const float[]) {-1.1521883f, -0.667802453f, -2.68198347f, -3.05153322f, -1.58096063f, -4.60574198f, 0.468329549f, 0.399705768f}, 0.0001);
	kt_end();
}

static void
case_4(void)
{
	kt_begin("Gemm", "", 13);
	kt.label = "Gemm C column [M,1]";
	kt_input(OX_FLOAT, 2, (const int64_t[]) {3, 2}, (const float[]) {0.0828318074f, 0.190192729f, -0.308207154f, 0.107088342f, -0.356980115f, 1.3375268f});
	kt_input(OX_FLOAT, 2, (const int64_t[]) {2, 4}, (const float[]) {-0.0762180015f, 0.263373196f, 0.960938096f, 0.190181494f, 0.404074132f, -1.82536614f, -0.248902991f, 1.91449749f});
	kt_input(OX_FLOAT, 2, (const int64_t[]) {3, 1}, (const float[]) {0.39060843f, 1.02394104f, 0.393099904f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {3, 4}, (const float[]) {0.46114713f, 0.0652527511f, 0.422865123f, 0.770485044f, 1.09070361f, 0.747292101f, 0.701118469f, 1.17034614f,
		0.960768223f, -2.14239502f, -0.282850325f, 2.8859005f}, 0.0001);
	kt_end();
}

static void
case_5(void)
{
	kt_begin("Gemm", "", 11);
	kt.label = "Gemm C vector [N]";
	kt_attr_float("beta", 0.25f);
	kt_input(OX_FLOAT, 2, (const int64_t[]) {3, 2}, (const float[]) {1.88192761f, -0.748258948f, -0.807030082f, 0.657375574f, 0.786261261f, 0.317279279f});
	kt_input(OX_FLOAT, 2, (const int64_t[]) {2, 4}, (const float[]) {0.296087682f, -0.665650129f, 1.03538275f, 0.0364025459f, 0.498543292f, -0.477990448f, 2.0507431f, -0.449946433f});
	kt_input(OX_FLOAT, 1, (const int64_t[]) {4}, (const float[]) {0.166740566f, -1.10267234f, -0.811982989f, -0.0457032844f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {3, 4}, (const float[]) {0.225861222f, -1.17071271f, 0.211032778f, 0.393757582f, 0.13046366f, -0.0526876599f, 0.309527665f, -0.336587578f,
		0.432664871f, -0.950699449f, 1.2617439f, -0.125562593f}, 0.0001);
	kt_end();
}

static void
case_6(void)
{
	kt_begin("Gemm", "", 13);
	kt.label = "Gemm double";
	kt_attr_int("transA", 1);
	kt_input(OX_DOUBLE, 2, (const int64_t[]) {3, 2}, (const double[]) {-0.82255376323598428, 0.12597694100727391, -0.83970852775517624, 0.12181333276207823, 0.027949878754654271, 1.231797049700817});
	kt_input(OX_DOUBLE, 2, (const int64_t[]) {3, 4}, (const double[]) {-0.50483007584153139, -1.1001413664755075, -0.80211345333745909, -2.1637631699785786, -2.1885865854886131, 1.0060905261687547, 2.1254012571912591, -0.3829204272357512,
		0.092418465450072276, -0.45201400382536616, 0.95181511287724863, -0.17318883768284848});
	kt_input(OX_DOUBLE, 2, (const int64_t[]) {2, 4}, (const double[]) {-0.12411648854468904, -0.15335325358132201, -1.6187409264621944, 0.82749117720504384, -1.2223276583996412, 2.2120170065598792, 1.3470932070354773, 0.18951551623525656});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_DOUBLE, 2, (const int64_t[]) {2, 4}, (const double[]) {2.1314912946028621, -0.10588436361523565, -2.7170739304405624, 2.9240036566089671, -1.4386828400200966, 1.6391902862531615, 2.6773906663412665, -0.34304706170595911}, 1e-12);
	kt_end();
}

static void
case_7(void)
{
	kt_begin("Gemm", "", 13);
	kt.label = "Gemm float16";
	kt_input(OX_FLOAT16, 2, (const int64_t[]) {2, 3}, (const uint16_t[]) {49526, 10417, 14825, 13823, 47404, 16393});
	kt_input(OX_FLOAT16, 2, (const int64_t[]) {3, 2}, (const uint16_t[]) {14809, 45913, 16458, 13915, 12570, 13876});
	kt_input(OX_FLOAT16, 2, (const int64_t[]) {2, 2}, (const uint16_t[]) {15580, 13570, 13064, 13318});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT16, 2, (const int64_t[]) {2, 2}, (const uint16_t[]) {47277, 15607, 47250, 14727}, 0.002);
	kt_end();
}

static void
case_8(void)
{
	kt_begin("Gemm", "", 13);
	kt.label = "Gemm int32";
	kt_input(OX_INT32, 2, (const int64_t[]) {2, 3}, (const int32_t[]) {-1, 2, 0, -3, -3, 4});
	kt_input(OX_INT32, 2, (const int64_t[]) {3, 4}, (const int32_t[]) {-3, -4, -1, -5, 1, -1, -3, -2,
		1, 1, 2, -5});
	kt_input(OX_INT32, 2, (const int64_t[]) {2, 4}, (const int32_t[]) {1, -4, -2, 3, 1, 1, -1, -2});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_INT32, 2, (const int64_t[]) {2, 4}, (const int32_t[]) {6, -2, -7, 4, 11, 20, 19, -1}, 0);
	kt_end();
}

static void
case_9(void)
{
	kt_begin("Gemm", "", 13);
	kt.label = "Gemm int64 transB";
	kt_attr_int("transB", 1);
	kt_input(OX_INT64, 2, (const int64_t[]) {2, 3}, (const int64_t[]) {-4LL, -5LL, 3LL, -5LL, -4LL, -2LL});
	kt_input(OX_INT64, 2, (const int64_t[]) {4, 3}, (const int64_t[]) {-1LL, 4LL, 3LL, 4LL, 0LL, -2LL, 2LL, -2LL,
		-1LL, -3LL, -2LL, -4LL});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_INT64, 2, (const int64_t[]) {2, 4}, (const int64_t[]) {-7LL, -22LL, -1LL, 10LL, -17LL, -16LL, 0LL, 31LL}, 0);
	kt_end();
}

static void
case_10(void)
{
	kt_begin("Gemm", "", 6);
	kt.label = "Gemm opset 6 broadcast";
	kt_attr_int("broadcast", 1);
	kt_input(OX_FLOAT, 2, (const int64_t[]) {2, 3}, (const float[]) {-1.08459997f, -1.4339956f, -0.70119822f, -1.40144849f, -0.308618367f, -0.285460591f});
	kt_input(OX_FLOAT, 2, (const int64_t[]) {3, 2}, (const float[]) {0.140025362f, 0.892729044f, -0.0294189025f, 0.556432426f, 0.437318385f, -1.62129962f});
	kt_input(OX_FLOAT, 1, (const int64_t[]) {2}, (const float[]) {-0.244596317f, -1.09140658f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {2, 2}, (const float[]) {-0.66092813f, -1.72072971f, -0.556592584f, -2.05142856f}, 0.0001);
	kt_end();
}

static void
case_11(void)
{
	kt_begin("Gemm", "", 13);
	kt.label = "Gemm K=0";
	kt_input(OX_FLOAT, 2, (const int64_t[]) {2, 0}, (const float[]) {0});
	kt_input(OX_FLOAT, 2, (const int64_t[]) {0, 3}, (const float[]) {0});
	kt_input(OX_FLOAT, 2, (const int64_t[]) {2, 3}, (const float[]) {-1.18128395f, 0.0572855696f, 1.04698741f, 0.620833397f, 0.429510474f, 1.41379404f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {2, 3}, (const float[]) {-1.18128395f, 0.0572855696f, 1.04698741f, 0.620833397f, 0.429510474f, 1.41379404f}, 0.0001);
	kt_end();
}

static void
case_12(void)
{
	kt_begin("MatMul", "", 13);
	kt.label = "MatMul 2-D";
	kt_input(OX_FLOAT, 2, (const int64_t[]) {3, 4}, (const float[]) {-0.0584779829f, -0.689301968f, -0.463178396f, -0.551660419f, -1.92313039f, 1.20822501f, -0.174295634f, -0.120462857f,
		-0.475159675f, 0.0242445208f, -0.577811897f, 0.923009098f});
	kt_input(OX_FLOAT, 2, (const int64_t[]) {4, 5}, (const float[]) {-1.62854874f, 0.667647958f, 0.076933153f, 1.14102829f, 1.38521791f, 1.3619653f, -0.00347518874f, -0.879180849f,
		1.448861f, -1.05149591f, 0.278730929f, -0.497229129f, 0.178557202f, 1.93463409f, 0.633524537f, 0.36368981f,
		-0.0524432436f, 0.395483822f, 0.836657882f, 0.595926285f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {3, 5}, (const float[]) {-1.17330658f, 0.222589388f, 0.30064562f, -2.42305946f, 0.0216096323f, 4.6850791f, -1.19519043f, -1.28896368f,
		-0.881780565f, -4.11660576f, 0.98147583f, -0.0784243122f, 0.20399183f, -0.85265547f, -0.499705315f}, 0.0001);
	kt_end();
}

static void
case_13(void)
{
	kt_begin("MatMul", "", 13);
	kt.label = "MatMul 1-D x 1-D";
	kt_input(OX_FLOAT, 1, (const int64_t[]) {4}, (const float[]) {-0.886506081f, -0.635581493f, 0.0434988029f, 0.769402683f});
	kt_input(OX_FLOAT, 1, (const int64_t[]) {4}, (const float[]) {0.437064648f, -0.158835694f, -1.86801016f, -1.21321082f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 0, NULL, (const float[]) {-1.30121136f}, 0.0001);
	kt_end();
}

static void
case_14(void)
{
	kt_begin("MatMul", "", 13);
	kt.label = "MatMul 1-D x 3-D";
	kt_input(OX_FLOAT, 1, (const int64_t[]) {3}, (const float[]) {1.43514872f, -0.479091346f, 1.26949179f});
	kt_input(OX_FLOAT, 3, (const int64_t[]) {2, 3, 4}, (const float[]) {0.281790584f, -0.590846539f, -1.69864523f, -0.307836592f, -0.651133299f, -1.18459702f, -0.354516029f, 1.36731231f,
		1.70012212f, -1.87958884f, -0.285411f, -0.3594414f, 0.3245956f, 0.755334318f, 0.362081945f, 0.0534408875f,
		-1.52842939f, -0.932440221f, -0.421899319f, -0.629130065f, -1.58154559f, -1.25363708f, 0.714422405f, -1.13420522f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {2, 4}, (const float[]) {2.87465477f, -2.66654515f, -2.63028979f, -1.55316663f, -0.809658766f, -0.0607408285f, 1.62872314f, -1.06175792f}, 0.0001);
	kt_end();
}

static void
case_15(void)
{
	kt_begin("MatMul", "", 13);
	kt.label = "MatMul 4-D x 1-D";
	kt_input(OX_FLOAT, 4, (const int64_t[]) {2, 1, 3, 4}, (const float[]) {-0.456559718f, -0.64203608f, 0.334013462f, -0.554628134f, -1.13246262f, -0.561507404f, 0.964634478f, 1.50554132f,
		0.668013334f, 0.303571135f, -0.514432371f, 0.589793086f, 1.54932833f, 1.84939444f, -1.35925722f, -0.940603197f,
		2.43381405f, -0.307211816f, 1.13994861f, -0.59771806f, 1.07635403f, 1.34456289f, -1.51352143f, -2.24620247f});
	kt_input(OX_FLOAT, 1, (const int64_t[]) {4}, (const float[]) {0.0964808464f, -1.13126993f, -0.23344478f, 1.1062541f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 3, (const int64_t[]) {2, 1, 3}, (const float[]) {-0.00926655531f, 1.96627784f, 0.493582159f, -2.66591835f, -0.344987184f, -3.54876304f}, 0.0001);
	kt_end();
}

static void
case_16(void)
{
	kt_begin("MatMul", "", 13);
	kt.label = "MatMul batch fold";
	kt_input(OX_FLOAT, 4, (const int64_t[]) {2, 3, 4, 5}, (const float[]) {0.996864617f, 1.12867296f, -1.6653769f, 0.617932379f, -1.29514253f, -0.702961922f, 0.714338362f, 0.881722748f,
		0.266288549f, 0.508362055f, -0.150100097f, -1.19278955f, -0.631160438f, 0.478161961f, -1.02972496f, -0.95274502f,
		-1.51718688f, -1.05599308f, -0.209734172f, -0.186683938f, 1.8037107f, 1.3782233f, -1.33487964f, 1.42160642f,
		-0.340643585f, 1.81491089f, -0.62917757f, 0.203731656f, 0.557926297f, 1.05661416f, 1.06310284f, 0.398793578f,
		-1.11034107f, -0.547139704f, -0.665289283f, -0.394966424f, -0.961065173f, 0.00565390987f, -2.08205223f, -0.239093646f,
		-0.224849641f, 0.0154080195f, 0.347693264f, 0.537033677f, -0.0491900668f, -0.797315955f, 2.42676973f, 0.342631817f,
		1.5244292f, 0.675204873f, -1.53954709f, -0.194129825f, -0.314496547f, 0.736664116f, -0.0624638014f, -0.407031506f,
		1.36698556f, -0.605694175f, -0.0523042642f, 0.0976520628f, -0.534364581f, 1.3251282f, 2.55791736f, -1.58118701f,
		-0.0796107426f, 1.38236809f, -0.0877858326f, 0.626389325f, -0.598351121f, 0.061817605f, 0.395838082f, 0.215998784f,
		-0.589678109f, -0.300397456f, -0.135944605f, 0.582923412f, 0.805770934f, 0.620056272f, -0.185074538f, 0.564956784f,
		-0.347275794f, 0.664220512f, -0.438920677f, 0.47844103f, -0.128768638f, 1.62985063f, 0.525277495f, 1.82856894f,
		0.0943890885f, -0.218618378f, 1.66227841f, 0.331710756f, -0.461502254f, 1.84508514f, 0.00229382468f, -1.46600211f,
		0.126740992f, -0.682070911f, 0.188128412f, -0.185062274f, -0.776011646f, -1.51561844f, -0.550627053f, -0.540433347f,
		-1.55363131f, 0.762521565f, 0.917889953f, 0.38784644f, 1.69595528f, -0.0444088839f, -0.456689656f, -0.314284325f,
		1.93245935f, -0.0726289302f, -0.352246702f, 0.826690495f, 1.34969914f, -1.02439582f, -0.412340134f, -0.826177776f});
	kt_input(OX_FLOAT, 2, (const int64_t[]) {5, 2}, (const float[]) {1.43125355f, -0.73507756f, 1.11188376f, -0.698884428f, -0.244458616f, 0.123958878f, -1.44272232f, 1.63273978f,
		0.127758101f, 0.405665338f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {2, 3, 4, 2}, (const float[]) {2.03186512f, -1.24449468f, -0.746633351f, 0.767793715f, -2.20819283f, 1.22870958f, -2.51367092f, 1.21160758f,
		2.34581089f, -0.271630168f, 1.17827964f, 0.470456749f, 2.94078898f, -2.36103177f, 1.33800519f, -2.53373623f,
		-1.17075646f, 1.05449474f, -0.639699996f, 1.69543302f, -3.4132328f, 2.40581775f, 1.17336726f, -0.777031541f,
		2.35431528f, -2.83019757f, 2.59893751f, -1.8290236f, 1.36688411f, -1.06064463f, 1.91784573f, -0.987768352f,
		-0.357914567f, 0.465585887f, 2.30566025f, -1.27308047f, 0.199131355f, 1.50253606f, -2.08562183f, 1.1365906f,
		-2.08004904f, 0.0487743802f, -0.435330033f, 1.59710407f, -1.41571164f, 0.533417761f, 3.42367601f, -2.68634415f}, 0.0001);
	kt_end();
}

static void
case_17(void)
{
	kt_begin("MatMul", "", 13);
	kt.label = "MatMul broadcast batch";
	kt_input(OX_FLOAT, 4, (const int64_t[]) {2, 1, 3, 4}, (const float[]) {-0.223036617f, 0.614121199f, -0.30438f, -1.64533472f, -2.08625364f, 1.421543f, -1.3026427f, -2.19894886f,
		0.259770334f, -0.537651658f, 0.289122462f, 1.58869994f, 0.733091474f, -0.657176793f, 1.66879606f, 0.377436221f,
		1.08225226f, 0.961028099f, 1.65733624f, 1.03932607f, 1.12451041f, -0.606264174f, -1.18170619f, 0.727835715f});
	kt_input(OX_FLOAT, 3, (const int64_t[]) {3, 4, 2}, (const float[]) {0.661117733f, 1.0287919f, 0.467075497f, 0.533234715f, -1.54101789f, 1.04684746f, -1.81551242f, 1.07880962f,
		-0.816996813f, -0.0325979441f, 2.07119274f, 0.241327584f, -1.87896705f, -1.48834288f, -0.522207797f, 0.289076209f,
		-0.402167827f, -0.730358481f, 0.960083246f, -0.98662281f, 2.90448689f, -0.421511322f, -0.122529924f, -0.443705618f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {2, 3, 3, 2}, (const float[]) {3.59556818f, -1.99562991f, 5.28432322f, -5.12421989f, -3.40923262f, 1.99712694f, 2.88531017f, 0.132869601f,
		8.24468327f, 1.71418047f, -2.69869494f, -0.109276161f, -0.00315936306f, 0.415334553f, -1.31024778f, 1.64595091f,
		0.0244275071f, -0.486049563f, -3.07917595f, 2.5579257f, -3.27652526f, 4.48207903f, 0.959898114f, 0.3817361f,
		-5.29278612f, -2.55712509f, -2.55054641f, -1.96959674f, -0.33410579f, 1.786219f, 3.87497878f, -0.75792098f,
		5.17378283f, -2.89834499f, -4.5557375f, -0.0479839221f}, 0.0001);
	kt_end();
}

static void
case_18(void)
{
	kt_begin("MatMul", "", 13);
	kt.label = "MatMul broadcast A";
	kt_input(OX_FLOAT, 2, (const int64_t[]) {3, 4}, (const float[]) {-0.355543345f, 1.50110209f, -0.169914395f, -0.947103798f, -0.637258589f, 0.383715093f, -0.995705187f, 1.47267711f,
		-0.0923011899f, -0.808474064f, -1.19232452f, 1.7750144f});
	kt_input(OX_FLOAT, 3, (const int64_t[]) {2, 4, 3}, (const float[]) {-0.604245722f, 0.837093949f, -0.153181911f, -0.273646355f, 1.05215585f, 1.75335503f, 0.580869913f, -0.271154344f,
		-1.56803727f, 0.992142439f, -0.495197982f, -1.72078073f, 0.265636474f, -0.0464683846f, -0.789013922f, -0.994691193f,
		-0.791517079f, -1.60894144f, 1.51473367f, 0.755483627f, -0.819653273f, 0.289167166f, 0.0538569093f, 0.280838877f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 3, (const int64_t[]) {2, 3, 3}, (const float[]) {-1.23429561f, 1.79684711f, 4.58261776f, 1.16278887f, -0.588994145f, -0.202446207f, 1.34549022f, -1.483585f,
		-2.58820438f, -2.11882472f, -1.3510021f, -2.26136923f, -1.63333535f, -0.947029889f, 1.11514878f, -0.51311481f,
		-0.160974771f, 2.84940004f}, 0.0001);
	kt_end();
}

static void
case_19(void)
{
	kt_begin("MatMul", "", 13);
	kt.label = "MatMul double";
	kt_input(OX_DOUBLE, 3, (const int64_t[]) {2, 2, 3}, (const double[]) {-0.022073649009290104, 1.1503957348958886, -0.94790320437022058, 0.17661581970537729, -0.81023500199566179, 1.7774457134025183, -1.5261166575660523, -1.2062205611185062,
		1.1717940576222095, -0.21470000987101229, 0.69599935415762715, -0.83337514480930086});
	kt_input(OX_DOUBLE, 3, (const int64_t[]) {2, 3, 2}, (const double[]) {1.8281176385778177, -0.086227514413428311, 0.026308958126932847, -0.19532073679738451, -1.746087710678091, -1.3376044611325304, -0.2323880835040093, -0.85468064435070445,
		1.3007159102322439, 0.841204144613799, 0.60412213558469763, 1.9917325828505905});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_DOUBLE, 3, (const int64_t[]) {2, 2, 2}, (const double[]) {1.645034622180344, 1.0451267682270997, -2.8020180600547886, -2.2344927612385637, -0.50639222128459893, 2.6235650378684841, 0.45173078506100678, -0.89088294550993108}, 1e-12);
	kt_end();
}

static void
case_20(void)
{
	kt_begin("MatMul", "", 13);
	kt.label = "MatMul float16";
	kt_input(OX_FLOAT16, 3, (const int64_t[]) {2, 3, 4}, (const uint16_t[]) {15452, 14156, 16008, 49133, 13646, 45675, 13028, 11308,
		46369, 15525, 48271, 15575, 48496, 48395, 47840, 11999,
		41349, 46267, 46118, 48456, 16307, 14374, 42204, 46328});
	kt_input(OX_FLOAT16, 2, (const int64_t[]) {4, 3}, (const uint16_t[]) {47321, 14470, 48201, 48355, 48372, 15915, 14806, 10359,
		46876, 15200, 15119, 49001});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT16, 3, (const int64_t[]) {2, 3, 3}, (const uint16_t[]) {49002, 48783, 16630, 13358, 14338, 47884, 48006, 47291,
		13921, 16216, 15068, 46305, 48168, 47747, 16444, 49203,
		12669, 47470}, 0.002);
	kt_end();
}

static void
case_21(void)
{
	kt_begin("MatMul", "", 13);
	kt.label = "MatMul int32";
	kt_input(OX_INT32, 3, (const int64_t[]) {2, 3, 4}, (const int32_t[]) {8, -7, -4, -1, -1, 4, -9, 2,
		6, -8, -8, -3, 3, -4, 3, -3,
		-7, -7, 5, 0, -4, -3, 3, 4});
	kt_input(OX_INT32, 2, (const int64_t[]) {4, 2}, (const int32_t[]) {3, -8, -1, -6, 4, -9, -6, -3});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_INT32, 3, (const int64_t[]) {2, 3, 2}, (const int32_t[]) {21, 17, -55, 59, 12, 81, 43, -18,
		6, 53, -21, 11}, 0);
	kt_end();
}

static void
case_22(void)
{
	kt_begin("MatMul", "", 13);
	kt.label = "MatMul int64";
	kt_input(OX_INT64, 2, (const int64_t[]) {3, 4}, (const int64_t[]) {7LL, 5LL, -4LL, -7LL, 4LL, -2LL, -9LL, 3LL,
		-4LL, -7LL, 3LL, -9LL});
	kt_input(OX_INT64, 3, (const int64_t[]) {2, 4, 2}, (const int64_t[]) {6LL, -9LL, -2LL, 1LL, -9LL, -4LL, -2LL, 3LL,
		-4LL, -6LL, 4LL, 0LL, 3LL, 7LL, -8LL, 1LL});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_INT64, 3, (const int64_t[]) {2, 3, 2}, (const int64_t[]) {82LL, -63LL, 103LL, 7LL, -19LL, -10LL, 36LL, -77LL,
		-75LL, -84LL, 69LL, 36LL}, 0);
	kt_end();
}

static void
case_23(void)
{
	kt_begin("MatMul", "", 13);
	kt.label = "MatMul uint32";
	kt_input(OX_UINT32, 2, (const int64_t[]) {3, 4}, (const uint32_t[]) {5, 5, 8, 8, 0, 3, 2, 4,
		4, 5, 4, 4});
	kt_input(OX_UINT32, 2, (const int64_t[]) {4, 2}, (const uint32_t[]) {3, 5, 2, 0, 7, 4, 8, 2});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_UINT32, 2, (const int64_t[]) {3, 2}, (const uint32_t[]) {145, 73, 52, 16, 82, 44}, 0);
	kt_end();
}

static void
case_24(void)
{
	kt_begin("MatMul", "", 13);
	kt.label = "MatMul uint64";
	kt_input(OX_UINT64, 2, (const int64_t[]) {3, 4}, (const uint64_t[]) {6ULL, 3ULL, 5ULL, 7ULL, 8ULL, 2ULL, 3ULL, 7ULL,
		7ULL, 6ULL, 8ULL, 6ULL});
	kt_input(OX_UINT64, 2, (const int64_t[]) {4, 2}, (const uint64_t[]) {1ULL, 5ULL, 0ULL, 8ULL, 2ULL, 8ULL, 4ULL, 8ULL});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_UINT64, 2, (const int64_t[]) {3, 2}, (const uint64_t[]) {44ULL, 150ULL, 42ULL, 136ULL, 47ULL, 195ULL}, 0);
	kt_end();
}

static void
case_25(void)
{
	kt_begin("MatMul", "", 13);
	kt.label = "MatMul empty batch";
	kt_input(OX_FLOAT, 3, (const int64_t[]) {0, 3, 4}, (const float[]) {0});
	kt_input(OX_FLOAT, 2, (const int64_t[]) {4, 2}, (const float[]) {-0.109446689f, 0.485342383f, -0.109186612f, 0.883063138f, -2.00729275f, 0.658242643f, -0.145964518f, -0.0632545352f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 3, (const int64_t[]) {0, 3, 2}, (const float[]) {0}, 0.0001);
	kt_end();
}

static void
case_26(void)
{
	kt_begin("MatMulInteger", "", 10);
	kt.label = "MatMulInteger uint8 zp";
	kt_input(OX_UINT8, 2, (const int64_t[]) {3, 4}, (const uint8_t[]) {138, 48, 231, 104, 146, 94, 95, 72,
		104, 42, 71, 239});
	kt_input(OX_UINT8, 2, (const int64_t[]) {4, 2}, (const uint8_t[]) {207, 252, 155, 143, 225, 142, 68, 245});
	kt_input(OX_UINT8, 0, NULL, (const uint8_t[]) {12});
	kt_input(OX_UINT8, 0, NULL, (const uint8_t[]) {200});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_INT32, 2, (const int64_t[]) {3, 2}, (const int32_t[]) {-7407, -4062, -8597, 180, -29195, 9867}, 0);
	kt_end();
}

static void
case_27(void)
{
	kt_begin("MatMulInteger", "", 10);
	kt.label = "MatMulInteger int8 no zp";
	kt_input(OX_INT8, 3, (const int64_t[]) {2, 3, 4}, (const int8_t[]) {61, 45, 7, -116, 51, -55, 24, -26,
		-81, -28, -84, -73, 117, -28, 104, 53,
		12, 74, -42, 93, 99, -82, -51, -19});
	kt_input(OX_INT8, 2, (const int64_t[]) {4, 5}, (const int8_t[]) {-18, -90, -45, -58, 65, -113, -37, 33,
		-52, -54, 67, 101, -92, -55, 70, -107,
		34, -14, -49, -75});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_INT32, 3, (const int64_t[]) {2, 3, 5}, (const int32_t[]) {6698, -10392, -280, -579, 10725, 9687, -1015, -5954,
		-144, 9915, 6805, -2640, 11471, 14351, -4158, 2355,
		2812, -16499, -13647, 12422, -21343, -4898, 4464, -6791,
		-13131, 6100, -11673, -2203, 2258, 8718}, 0);
	kt_end();
}

static void
case_28(void)
{
	kt_begin("MatMulInteger", "", 10);
	kt.label = "MatMulInteger per-column b zp";
	kt_input(OX_UINT8, 2, (const int64_t[]) {3, 4}, (const uint8_t[]) {151, 157, 2, 137, 117, 236, 167, 82,
		56, 190, 170, 203});
	kt_input(OX_INT8, 2, (const int64_t[]) {4, 2}, (const int8_t[]) {44, -116, 124, -62, -65, 61, -9, 35});
	kt_input(OX_UINT8, 0, NULL, (const uint8_t[]) {3});
	kt_input(OX_INT8, 1, (const int64_t[]) {2}, (const int8_t[]) {5, -7});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_INT32, 2, (const int64_t[]) {3, 2}, (const int32_t[]) {22292, -19042, 19587, -10771, 9830, 3694}, 0);
	kt_end();
}

static void
case_29(void)
{
	kt_begin("MatMulInteger", "", 10);
	kt.label = "MatMulInteger per-row a zp";
	kt_input(OX_UINT8, 2, (const int64_t[]) {3, 4}, (const uint8_t[]) {181, 171, 197, 107, 243, 12, 132, 58,
		24, 121, 115, 103});
	kt_input(OX_UINT8, 2, (const int64_t[]) {4, 2}, (const uint8_t[]) {104, 216, 159, 217, 166, 243, 229, 252});
	kt_input(OX_UINT8, 1, (const int64_t[]) {3}, (const uint8_t[]) {1, 2, 3});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_INT32, 2, (const int64_t[]) {3, 2}, (const int32_t[]) {102560, 150110, 61058, 99928, 62438, 82558}, 0);
	kt_end();
}

static void
case_30(void)
{
	kt_begin("QLinearMatMul", "", 10);
	kt.label = "QLinearMatMul uint8";
	kt_input(OX_UINT8, 2, (const int64_t[]) {2, 3}, (const uint8_t[]) {188, 226, 193, 163, 229, 120});
	kt_input(OX_FLOAT, 0, NULL, (const float[]) {0.0500000007f});
	kt_input(OX_UINT8, 0, NULL, (const uint8_t[]) {100});
	kt_input(OX_UINT8, 2, (const int64_t[]) {3, 4}, (const uint8_t[]) {179, 48, 229, 19, 149, 146, 79, 170,
		165, 157, 165, 21});
	kt_input(OX_FLOAT, 0, NULL, (const float[]) {0.0199999996f});
	kt_input(OX_UINT8, 0, NULL, (const uint8_t[]) {120});
	kt_input(OX_FLOAT, 0, NULL, (const float[]) {0.300000012f});
	kt_input(OX_UINT8, 0, NULL, (const uint8_t[]) {110});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_UINT8, 2, (const int64_t[]) {2, 4}, (const uint8_t[]) {153, 111, 139, 71, 138, 109, 118, 104}, 0);
	kt_end();
}

static void
case_31(void)
{
	kt_begin("QLinearMatMul", "", 10);
	kt.label = "QLinearMatMul int8";
	kt_input(OX_INT8, 2, (const int64_t[]) {2, 3}, (const int8_t[]) {64, 80, 7, -120, -16, 14});
	kt_input(OX_FLOAT, 0, NULL, (const float[]) {0.0500000007f});
	kt_input(OX_INT8, 0, NULL, (const int8_t[]) {-28});
	kt_input(OX_INT8, 2, (const int64_t[]) {3, 4}, (const int8_t[]) {-35, -101, -25, 126, 62, 31, 76, -53,
		-89, 94, -61, 45});
	kt_input(OX_FLOAT, 0, NULL, (const float[]) {0.0199999996f});
	kt_input(OX_INT8, 0, NULL, (const int8_t[]) {-8});
	kt_input(OX_FLOAT, 0, NULL, (const float[]) {0.300000012f});
	kt_input(OX_INT8, 0, NULL, (const int8_t[]) {-18});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_INT8, 2, (const int64_t[]) {2, 4}, (const int8_t[]) {-11, -21, 1, 13, -18, 26, -17, -53}, 0);
	kt_end();
}

static void
case_32(void)
{
	kt_begin("QLinearMatMul", "", 10);
	kt.label = "QLinearMatMul 3-D";
	kt_input(OX_UINT8, 3, (const int64_t[]) {2, 2, 3}, (const uint8_t[]) {41, 65, 48, 225, 24, 249, 20, 136,
		141, 159, 61, 110});
	kt_input(OX_FLOAT, 0, NULL, (const float[]) {0.00659999996f});
	kt_input(OX_UINT8, 0, NULL, (const uint8_t[]) {113});
	kt_input(OX_UINT8, 2, (const int64_t[]) {3, 2}, (const uint8_t[]) {11, 22, 4, 221, 54, 36});
	kt_input(OX_FLOAT, 0, NULL, (const float[]) {0.00705000013f});
	kt_input(OX_UINT8, 0, NULL, (const uint8_t[]) {114});
	kt_input(OX_FLOAT, 0, NULL, (const float[]) {0.0107000005f});
	kt_input(OX_UINT8, 0, NULL, (const uint8_t[]) {118});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_UINT8, 3, (const int64_t[]) {2, 2, 2}, (const uint8_t[]) {190, 147, 75, 0, 141, 156, 123, 76}, 0);
	kt_end();
}

static void
case_33(void)
{
	kt_begin("Einsum", "", 12);
	kt.label = "Einsum ij,jk->ik";
	kt_attr_string("equation", "ij,jk->ik");
	kt_input(OX_FLOAT, 2, (const int64_t[]) {3, 4}, (const float[]) {0.471333474f, 0.45199585f, 0.144581094f, -1.51554191f, 0.982857108f, -1.10703909f, -0.735821962f, -0.484554321f,
		0.829373777f, 2.35209012f, -0.00722063612f, 1.78998613f});
	kt_input(OX_FLOAT, 2, (const int64_t[]) {4, 2}, (const float[]) {-0.0488524064f, 1.02678633f, -0.835908294f, 0.115449101f, -0.710166097f, -0.892374694f, -1.4108727f, 1.14713323f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {3, 2}, (const float[]) {1.63470733f, -1.33140767f, 2.08356857f, 0.982158065f, -4.52696323f, 3.18293238f}, 0.0001);
	kt_end();
}

static void
case_34(void)
{
	kt_begin("Einsum", "", 12);
	kt.label = "Einsum ij,jk";
	kt_attr_string("equation", "ij,jk");
	kt_input(OX_FLOAT, 2, (const int64_t[]) {3, 4}, (const float[]) {0.715456009f, 0.185285255f, -0.34109059f, -0.106317215f, 0.182238445f, -0.855966508f, -0.0842813104f, -0.886537969f,
		0.798244059f, -1.02177119f, 0.514899194f, 0.491655171f});
	kt_input(OX_FLOAT, 2, (const int64_t[]) {4, 2}, (const float[]) {-0.508264244f, 0.420838773f, 0.792980671f, 0.393571615f, 0.00892529171f, -0.358872473f, 0.517308891f, -1.85429144f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {3, 2}, (const float[]) {-0.274756253f, 0.693565786f, -1.2307564f, 1.41395485f, -0.957030475f, -1.16266322f}, 0.0001);
	kt_end();
}

static void
case_35(void)
{
	kt_begin("Einsum", "", 12);
	kt.label = "Einsum bij,bjk->bik";
	kt_attr_string("equation", "bij,bjk->bik");
	kt_input(OX_FLOAT, 3, (const int64_t[]) {2, 3, 4}, (const float[]) {0.64941746f, -0.456541896f, -0.152827695f, -0.0315282606f, -1.14793146f, -0.152597621f, -1.08808029f, -1.38349092f,
		-0.647755086f, 1.33718097f, 2.79768109f, -0.22488834f, 0.528565705f, -1.13311255f, -1.0051167f, -0.041158136f,
		1.15689647f, -2.11453724f, -1.08787835f, 0.570689023f, -0.528885722f, -0.384901404f, -0.372389376f, 1.27529764f});
	kt_input(OX_FLOAT, 3, (const int64_t[]) {2, 4, 2}, (const float[]) {0.28204143f, -0.374489516f, 1.4685061f, 0.359321386f, 1.04315686f, -1.61166275f, -1.41518462f, 1.83294427f,
		-0.266610712f, -1.48054492f, 0.0600281768f, 0.600084186f, 0.687898099f, 0.438220024f, -0.0967751294f, 0.0708000958f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 3, (const int64_t[]) {2, 3, 2}, (const float[]) {-0.602076888f, -0.218728155f, 0.275001913f, -0.407186538f, 5.01764297f, -4.198071f, -0.896374762f, -1.90590441f,
		-1.23895073f, -3.41806293f, -0.261681378f, 0.479168564f}, 0.0001);
	kt_end();
}

static void
case_36(void)
{
	kt_begin("Einsum", "", 12);
	kt.label = "Einsum bhqd,bhkd->bhqk";
	kt_attr_string("equation", "bhqd,bhkd->bhqk");
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {-1.27637792f, -1.08238029f, 0.0311657432f, 0.389122814f, 1.1710645f, -2.76828671f, -2.2244668f, 0.245259553f,
		0.40634951f, -0.0476876982f, 0.347123742f, -0.0387767553f, 0.464630008f, -0.122406274f, -0.154541716f, -1.09356856f,
		-0.130976558f, 0.878389359f, 1.78235364f, -0.160385907f, 0.361984372f, 0.190316603f, -1.6418699f, -0.201110542f});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 5, 4}, (const float[]) {0.0315058194f, 4.08315849f, -1.85667121f, -0.824049473f, -2.18650556f, -0.372254312f, -0.361516237f, 0.0170364901f,
		1.23255861f, -0.308700889f, -0.460437447f, -1.66505778f, -0.914550483f, -0.0955345258f, 0.726963162f, -1.34563506f,
		2.32223725f, 0.517972887f, -0.124697328f, -0.130031347f, 0.778881907f, -0.347458899f, -1.66193759f, -0.988644123f,
		-1.20413506f, 0.249446154f, -0.232877225f, 0.489848971f, -0.705464184f, 1.08961344f, 0.0923141167f, -0.497223765f,
		-0.466631621f, -0.843055904f, -0.373274773f, 0.292790622f, -1.41325796f, -0.345073074f, -0.821722984f, -0.774231136f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 5}, (const float[]) {-4.83826447f, 3.18909049f, -1.90134072f, 0.769755661f, -3.57918048f, -7.33845997f, -0.721673191f, 2.91383481f,
		-2.75366592f, 1.53108573f, -0.794454753f, -0.996884942f, 0.420307577f, -0.0625457987f, 0.88069582f, 1.74241185f,
		-1.08970523f, 0.0683265477f, -0.376115829f, 0.359262347f, -3.21081543f, -0.116810121f, 1.29378819f, -1.39168072f,
		-1.45843005f, 3.14332795f, -0.104563996f, -0.0995663106f, 0.224624455f, 0.927617848f}, 0.0001);
	kt_end();
}

static void
case_37(void)
{
	kt_begin("Einsum", "", 12);
	kt.label = "Einsum ii->i";
	kt_attr_string("equation", "ii->i");
	kt_input(OX_FLOAT, 2, (const int64_t[]) {3, 3}, (const float[]) {0.399332941f, 0.172402054f, 0.688638091f, 0.218453109f, -0.265386552f, -0.297916323f, 2.15090919f, 0.00637051277f,
		-0.195185706f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 1, (const int64_t[]) {3}, (const float[]) {0.399332941f, -0.265386552f, -0.195185706f}, 0.0001);
	kt_end();
}

static void
case_38(void)
{
	kt_begin("Einsum", "", 12);
	kt.label = "Einsum ii";
	kt_attr_string("equation", "ii");
	kt_input(OX_FLOAT, 2, (const int64_t[]) {4, 4}, (const float[]) {-0.0875893608f, -0.229021564f, -0.370213509f, 3.66426086f, 1.43068039f, 1.12233651f, -0.612476349f, -0.386458009f,
		0.397871524f, 0.751757383f, 0.223190859f, -1.15817153f, -0.451100349f, 0.439096302f, -1.29831409f, 2.39314294f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 0, NULL, (const float[]) {3.65108109f}, 0.0001);
	kt_end();
}

static void
case_39(void)
{
	kt_begin("Einsum", "", 12);
	kt.label = "Einsum ...ii->...i";
	kt_attr_string("equation", "...ii->...i");
	kt_input(OX_FLOAT, 3, (const int64_t[]) {2, 3, 3}, (const float[]) {0.227942541f, 0.16107136f, -0.363831192f, 0.888035655f, -0.365396708f, -0.63959223f, 1.29391146f, 0.315543205f,
		0.0827534422f, -0.597925425f, 0.81869781f, 0.548969984f, 0.968981326f, -1.17426705f, 0.583764374f, -1.09360278f,
		1.13194311f, 0.0740517974f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {2, 3}, (const float[]) {0.227942541f, -0.365396708f, 0.0827534422f, -0.597925425f, -1.17426705f, 0.0740517974f}, 0.0001);
	kt_end();
}

static void
case_40(void)
{
	kt_begin("Einsum", "", 12);
	kt.label = "Einsum ij->ji";
	kt_attr_string("equation", "ij->ji");
	kt_input(OX_FLOAT, 2, (const int64_t[]) {2, 5}, (const float[]) {-0.382271826f, 0.182352945f, -1.5178256f, 0.421301484f, 0.972684979f, -1.06913209f, -0.206426725f, 0.362224042f,
		0.735293031f, -1.54287815f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {5, 2}, (const float[]) {-0.382271826f, -1.06913209f, 0.182352945f, -0.206426725f, -1.5178256f, 0.362224042f, 0.421301484f, 0.735293031f,
		0.972684979f, -1.54287815f}, 0.0001);
	kt_end();
}

static void
case_41(void)
{
	kt_begin("Einsum", "", 12);
	kt.label = "Einsum ij->";
	kt_attr_string("equation", "ij->");
	kt_input(OX_FLOAT, 2, (const int64_t[]) {3, 4}, (const float[]) {-1.10201681f, 1.23760235f, -1.19911158f, 0.270372391f, -1.59163952f, 0.287650585f, -1.15935743f, -0.283131927f,
		1.19420409f, 0.386565924f, 1.10715473f, -0.16593799f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 0, NULL, (const float[]) {-1.01764536f}, 0.0001);
	kt_end();
}

static void
case_42(void)
{
	kt_begin("Einsum", "", 12);
	kt.label = "Einsum i,i";
	kt_attr_string("equation", "i,i");
	kt_input(OX_FLOAT, 1, (const int64_t[]) {5}, (const float[]) {0.546524465f, -1.02180195f, 1.17113435f, 0.358729452f, -0.232436314f});
	kt_input(OX_FLOAT, 1, (const int64_t[]) {5}, (const float[]) {1.81135809f, -0.460821271f, -1.20685375f, -0.0676196814f, 0.245210186f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 0, NULL, (const float[]) {-0.0338212177f}, 0.0001);
	kt_end();
}

static void
case_43(void)
{
	kt_begin("Einsum", "", 12);
	kt.label = "Einsum i,j->ij";
	kt_attr_string("equation", "i,j->ij");
	kt_input(OX_FLOAT, 1, (const int64_t[]) {3}, (const float[]) {0.849618316f, -0.795238376f, 0.508840799f});
	kt_input(OX_FLOAT, 1, (const int64_t[]) {4}, (const float[]) {-0.313940257f, 0.455311537f, 0.219807178f, -0.0707139373f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {3, 4}, (const float[]) {-0.266729385f, 0.386841029f, 0.1867522f, -0.0600798577f, 0.249657333f, -0.3620812f, -0.1747991f, 0.056234438f,
		-0.159745604f, 0.231681094f, 0.111846857f, -0.0359821357f}, 0.0001);
	kt_end();
}

static void
case_44(void)
{
	kt_begin("Einsum", "", 12);
	kt.label = "Einsum ...ij,...jk->...ik";
	kt_attr_string("equation", "...ij,...jk->...ik");
	kt_input(OX_FLOAT, 4, (const int64_t[]) {2, 1, 2, 3}, (const float[]) {-1.26110446f, -0.482071996f, -1.05066204f, -0.303499073f, 2.90240264f, -0.338958681f, -0.699245632f, 1.81280434f,
		-0.535795867f, 1.08056092f, 0.889155447f, 1.04447734f});
	kt_input(OX_FLOAT, 3, (const int64_t[]) {3, 3, 4}, (const float[]) {-0.17506057f, -0.466887593f, 0.0511783101f, 2.0391686f, 0.281851292f, -0.988017142f, 0.784080267f, 0.0748098418f,
		0.373396009f, -0.656433642f, 0.134781212f, 0.927148461f, 0.998423159f, -0.00590182794f, -0.0807612315f, -0.128510654f,
		0.291490376f, 0.349297881f, -0.767214715f, 0.9278f, 0.709566355f, -0.0600699224f, 0.864734113f, -0.054786671f,
		-0.342942953f, -0.52614361f, -1.2875371f, 0.513163984f, -0.860421002f, -0.365243345f, -0.380206645f, 0.67345804f,
		-1.58118796f, 1.04704559f, 0.0295018964f, -1.31961095f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {2, 3, 2, 4}, (const float[]) {-0.307415962f, 1.75477934f, -0.584133863f, -3.58178806f, 0.744610846f, -2.50341964f, 2.21449876f, -0.716022491f,
		-2.14514971f, -0.0978307202f, -0.436842233f, -0.227638766f, 0.302488267f, 1.03595543f, -2.49536419f, 2.75042248f,
		2.5085659f, -0.260495365f, 1.7760092f, 0.41465652f, -1.85724807f, -1.25530434f, -0.722746372f, 2.24619508f,
		0.433287531f, -1.11289811f, 1.31338274f, -1.78702641f, 0.451449662f, -2.06863141f, 0.893246472f, 3.23834896f,
		-0.549910724f, 0.669520736f, -1.79765916f, 1.80113482f, 2.07916331f, 0.241461158f, 0.133754596f, 0.628871381f,
		-0.472779602f, -0.855213761f, 0.195257425f, 1.56906199f, -2.78713369f, 0.200327083f, -1.698511f, -0.224989861f}, 0.0001);
	kt_end();
}

static void
case_45(void)
{
	kt_begin("Einsum", "", 12);
	kt.label = "Einsum ijk,ikl,ilm->ijm";
	kt_attr_string("equation", "ijk,ikl,ilm->ijm");
	kt_input(OX_FLOAT, 3, (const int64_t[]) {2, 3, 2}, (const float[]) {2.26417208f, 0.0706529468f, -0.131866574f, 0.231482998f, 0.413262576f, 0.810684144f, 0.319565028f, 1.22479403f,
		1.74202418f, -1.50526416f, -0.374415666f, 1.96849632f});
	kt_input(OX_FLOAT, 3, (const int64_t[]) {2, 2, 4}, (const float[]) {-0.164679036f, -2.6732285f, -0.0926326513f, 0.0931422934f, 0.746311665f, -2.11188769f, 0.683416069f, -0.810214281f,
		0.593577325f, -0.333347708f, 1.82638681f, -0.886299908f, -1.06441116f, 0.437723428f, -0.784758568f, 0.44267416f});
	kt_input(OX_FLOAT, 3, (const int64_t[]) {2, 4, 3}, (const float[]) {0.0264755189f, -0.623197138f, 0.0279872753f, 1.42037404f, -0.8405388f, -0.831924438f, -0.13518995f, 1.67317736f,
		0.281611711f, 0.0204344969f, -0.0564663298f, 1.01761007f, 0.549046934f, 0.315896392f, 0.225735456f, 2.29525375f,
		-0.714783967f, -1.38820624f, -0.571142554f, -0.0496125072f, 0.451372266f, -0.0409493595f, 0.931674957f, 0.549002588f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 3, (const int64_t[]) {2, 3, 3}, (const float[]) {-8.79247093f, 5.13359785f, 5.26140547f, -0.21565035f, 0.289834559f, -0.0364804007f, -4.06908035f, 2.93087077f,
		1.87442625f, 0.579404593f, -0.398984641f, -0.876069725f, -3.7990644f, -0.556913316f, 3.07172346f, 2.21534681f,
		-0.205609143f, -2.23792267f}, 0.0001);
	kt_end();
}

static void
case_46(void)
{
	kt_begin("Einsum", "", 12);
	kt.label = "Einsum abc,cd->abd";
	kt_attr_string("equation", "abc,cd->abd");
	kt_input(OX_DOUBLE, 3, (const int64_t[]) {2, 3, 4}, (const double[]) {2.0265262522539738, 0.23009734662780296, -0.36744309364978089, 0.72743675483031034, -0.41686069574722412, 1.599018869353664, 1.6317130300104823, 1.0193411311661582,
		-0.1807776196963746, -0.06499932263682355, 0.35334351760261673, 0.025278165612445464, 0.50046895665191271, -1.0516309728264837, -0.57492372719976337, 1.888253396154576,
		-0.051682373308077116, -0.3547296184380016, 0.6160679540535231, -0.27755708065276247, -0.13119258794015945, -0.37475851593797171, 0.53709786098341972, 0.100246894706257});
	kt_input(OX_DOUBLE, 2, (const int64_t[]) {4, 2}, (const double[]) {-0.24610090440485252, 1.8234203641335502, -0.32560967553478798, 0.3299442358723042, 2.0877690317722424, -0.58783249156536799, -0.18241813594936535, 0.55324004867505616});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_DOUBLE, 3, (const int64_t[]) {2, 3, 2}, (const double[]) {-1.4734858345545749, 4.3895706649194786, 2.8026274027612659, -0.62775882156596374, 0.79874240183416312, -0.54480165173055617, -1.3255042610195389, 1.9482019572461691,
		1.4650615159875386, -0.72698013806880246, 1.257361042847017, -0.62313162558076163}, 1e-12);
	kt_end();
}

static void
case_47(void)
{
	kt_begin("Einsum", "", 12);
	kt.label = "Einsum ij,kj->ik";
	kt_attr_string("equation", "ij,kj->ik");
	kt_input(OX_INT64, 2, (const int64_t[]) {2, 3}, (const int64_t[]) {-4LL, -3LL, -1LL, 3LL, 1LL, -4LL});
	kt_input(OX_INT64, 2, (const int64_t[]) {4, 3}, (const int64_t[]) {2LL, 0LL, -1LL, -3LL, 3LL, -4LL, -1LL, 4LL,
		-2LL, 0LL, 1LL, 3LL});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_INT64, 2, (const int64_t[]) {2, 4}, (const int64_t[]) {-7LL, 7LL, -6LL, -6LL, 10LL, 10LL, 9LL, -11LL}, 0);
	kt_end();
}

static void
case_48(void)
{
	kt_begin("Einsum", "", 12);
	kt.label = "Einsum ijk->kji";
	kt_attr_string("equation", "ijk->kji");
	kt_input(OX_FLOAT16, 3, (const int64_t[]) {2, 3, 4}, (const uint16_t[]) {47359, 42867, 13838, 12741, 43917, 14015, 48455, 16795,
		9611, 45666, 45261, 47138, 13885, 8772, 48568, 48388,
		13951, 45984, 14916, 44642, 45193, 48767, 13440, 13362});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT16, 3, (const int64_t[]) {4, 3, 2}, (const uint16_t[]) {47359, 13885, 43917, 13951, 9611, 45193, 42867, 8772,
		14015, 45984, 45666, 48767, 13838, 48568, 48455, 14916,
		45261, 13440, 12741, 48388, 16795, 44642, 47138, 13362}, 0.001);
	kt_end();
}

static void
case_49(void)
{
	kt_begin("Einsum", "", 12);
	kt.label = "Einsum bn,anm,bm->ba";
	kt_attr_string("equation", "bn,anm,bm->ba");
	kt_input(OX_FLOAT, 2, (const int64_t[]) {2, 3}, (const float[]) {1.28165185f, -1.09667718f, -0.241109788f, -0.513530016f, -0.404245555f, -1.65594649f});
	kt_input(OX_FLOAT, 3, (const int64_t[]) {4, 3, 5}, (const float[]) {0.320644319f, -0.313000739f, 0.121926568f, 1.98834026f, -2.0374341f, 1.60949075f, -0.773191512f, 0.000341962063f,
		-0.573088586f, -0.812068343f, -0.0919679925f, -0.515955508f, 0.868530333f, -0.117180914f, 0.150932893f, 0.629698813f,
		0.542677104f, 1.66281962f, 0.756989121f, 0.713791728f, -1.47284293f, 1.20406091f, 1.4777844f, -0.909801841f,
		1.29156232f, -1.10103571f, -0.349831283f, 0.0412594005f, -0.227959886f, 1.06795049f, 0.963163555f, -0.240024671f,
		0.371901631f, 0.467117131f, -0.560005248f, 0.111958958f, -1.06566691f, 0.26280266f, 0.108390555f, 0.935060799f,
		1.53594589f, 2.23661351f, -0.114480115f, -0.814200819f, 1.24891007f, 1.55131149f, 0.280827582f, -0.0443392321f,
		0.298160672f, 0.999943376f, -0.861216724f, 1.22046065f, -0.939860463f, -0.712423146f, 0.305773377f, -0.54026109f,
		1.75629604f, -0.264888644f, -0.130112812f, -0.737874746f});
	kt_input(OX_FLOAT, 2, (const int64_t[]) {2, 5}, (const float[]) {-0.647114933f, 1.14269984f, 1.36991537f, 0.149033919f, 0.780195594f, -0.447687954f, -0.160912484f, 1.27372289f,
		-0.737854362f, 0.716525972f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {2, 4}, (const float[]) {0.548101664f, -1.96206141f, -1.310251f, -1.10737753f, -0.583564401f, -5.01063061f, -0.582083762f, 1.60299551f}, 0.0001);
	kt_end();
}

static void
case_50(void)
{
	kt_begin("Einsum", "", 12);
	kt.label = "Einsum ij,ij->i";
	kt_attr_string("equation", "ij,ij->i");
	kt_input(OX_FLOAT, 2, (const int64_t[]) {3, 4}, (const float[]) {0.58772701f, 0.0564791225f, 1.15537226f, 2.06160092f, -0.950838745f, 1.46509981f, -0.275064439f, -1.76330364f,
		-0.347057194f, -0.626949549f, -2.08277535f, -1.32360542f});
	kt_input(OX_FLOAT, 2, (const int64_t[]) {3, 4}, (const float[]) {-0.272066414f, -0.0823915526f, -1.42925096f, 1.4126426f, 0.09120024f, -1.50353789f, 0.999035656f, 1.02587342f,
		-1.07736087f, 0.414386004f, -0.834323585f, -0.424110025f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 1, (const int64_t[]) {3}, (const float[]) {1.09643424f, -4.37327528f, 2.41316962f}, 0.0001);
	kt_end();
}

static void
case_51(void)
{
	kt_begin("Einsum", "", 12);
	kt.label = "Einsum iij,jk->ik";
	kt_attr_string("equation", "iij,jk->ik");
	kt_input(OX_FLOAT, 3, (const int64_t[]) {3, 3, 2}, (const float[]) {0.0620036609f, -0.576466799f, -0.205480352f, 0.212216258f, -0.811708689f, -2.51118708f, -0.00383537216f, -1.2031008f,
		-0.276910663f, 1.01905465f, -0.920017481f, 0.13832289f, -0.227593914f, -1.04350746f, -1.16714907f, 0.253852904f,
		0.646530867f, -0.414055437f});
	kt_input(OX_FLOAT, 2, (const int64_t[]) {2, 4}, (const float[]) {-1.648368f, 0.133069679f, 1.66633272f, 0.779618382f, -1.2456218f, -1.49669492f, 0.0244373139f, 0.9295578f});
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 2, (const int64_t[]) {3, 4}, (const float[]) {0.61585474f, 0.871045709f, 0.0892314315f, -0.487520009f, -0.812906027f, -1.56206238f, -0.436522335f, 0.731385589f,
		-0.549964309f, 0.70574832f, 1.06721723f, 0.119158871f}, 0.0001);
	kt_end();
}


static void
errors(void)
{
	float		a[12] = {0};

	kt_begin("Gemm", "", 13);
	kt.label = "Gemm inner mismatch";
	kt_input_f32(2, (const int64_t[]) {2, 3}, a);
	kt_input_f32(2, (const int64_t[]) {4, 2}, a);
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Gemm", "", 13);
	kt.label = "Gemm bad C";
	kt_input_f32(2, (const int64_t[]) {2, 3}, a);
	kt_input_f32(2, (const int64_t[]) {3, 2}, a);
	kt_input_f32(1, (const int64_t[]) {3}, a);
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Gemm", "", 13);
	kt.label = "Gemm rank 3";
	kt_input_f32(3, (const int64_t[]) {1, 2, 3}, a);
	kt_input_f32(2, (const int64_t[]) {3, 2}, a);
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Gemm", "", 13);
	kt.label = "Gemm bad transA";
	kt_attr_int("transA", 2);
	kt_input_f32(2, (const int64_t[]) {2, 3}, a);
	kt_input_f32(2, (const int64_t[]) {3, 2}, a);
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Gemm", "", 13);
	kt.label = "Gemm int8 unsupported";
	kt_input(OX_INT8, 2, (const int64_t[]) {2, 3}, a);
	kt_input(OX_INT8, 2, (const int64_t[]) {3, 2}, a);
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	kt_begin("MatMul", "", 13);
	kt.label = "MatMul inner mismatch";
	kt_input_f32(2, (const int64_t[]) {2, 3}, a);
	kt_input_f32(2, (const int64_t[]) {2, 3}, a);
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	if (!strstr(kt.st.msg, "[2, 3]"))
		kt_fail("message lacks shapes: %s%.0f%.0f", kt.st.msg, 0, 0);
	kt_end();

	kt_begin("MatMul", "", 13);
	kt.label = "MatMul batch mismatch";
	kt_input_f32(3, (const int64_t[]) {2, 1, 3}, a);
	kt_input_f32(3, (const int64_t[]) {3, 3, 1}, a);
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("MatMul", "", 13);
	kt.label = "MatMul scalar";
	kt_input_f32(0, NULL, a);
	kt_input_f32(1, (const int64_t[]) {3}, a);
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("MatMul", "", 13);
	kt.label = "MatMul dtype mismatch";
	kt_input_f32(1, (const int64_t[]) {3}, a);
	kt_input(OX_DOUBLE, 1, (const int64_t[]) {3}, a);
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("MatMulInteger", "", 10);
	kt.label = "MatMulInteger bad zero point shape";
	kt_input(OX_UINT8, 2, (const int64_t[]) {2, 3}, a);
	kt_input(OX_UINT8, 2, (const int64_t[]) {3, 2}, a);
	kt_input(OX_UINT8, 1, (const int64_t[]) {5}, a);
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("MatMulInteger", "", 10);
	kt.label = "MatMulInteger float input";
	kt_input_f32(2, (const int64_t[]) {2, 3}, a);
	kt_input(OX_UINT8, 2, (const int64_t[]) {3, 2}, a);
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	kt_begin("Einsum", "", 12);
	kt.label = "Einsum label size mismatch";
	kt_attr_string("equation", "ij,jk->ik");
	kt_input_f32(2, (const int64_t[]) {2, 3}, a);
	kt_input_f32(2, (const int64_t[]) {4, 2}, a);
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Einsum", "", 12);
	kt.label = "Einsum rank mismatch";
	kt_attr_string("equation", "ij->i");
	kt_input_f32(3, (const int64_t[]) {2, 3, 1}, a);
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Einsum", "", 12);
	kt.label = "Einsum output label unknown";
	kt_attr_string("equation", "ij->k");
	kt_input_f32(2, (const int64_t[]) {2, 3}, a);
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Einsum", "", 12);
	kt.label = "Einsum bad character";
	kt_attr_string("equation", "i1->i");
	kt_input_f32(2, (const int64_t[]) {2, 3}, a);
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Einsum", "", 12);
	kt.label = "Einsum operand count";
	kt_attr_string("equation", "i,i->i");
	kt_input_f32(1, (const int64_t[]) {3}, a);
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();
}

/* a larger float MatMul against a naive loop: exercises the BLAS path */
static void
large_matmul(void)
{
	enum {B = 3, M = 37, K = 65, N = 29};
	static float a[B * M * K], b[K * N], want[B * M * N];

	for (int i = 0; i < B * M * K; i++)
		a[i] = (float) ((i * 7) % 13) / 13.0f - 0.5f;
	for (int i = 0; i < K * N; i++)
		b[i] = (float) ((i * 5) % 11) / 11.0f - 0.5f;
	for (int bi = 0; bi < B; bi++)
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++)
			{
				double		s = 0;

				for (int k = 0; k < K; k++)
					s += (double) a[(bi * M + i) * K + k] * b[k * N + j];
				want[(bi * M + i) * N + j] = (float) s;
			}
	kt_begin("MatMul", "", 13);
	kt.label = "MatMul large folded";
	kt_input_f32(3, (const int64_t[]) {B, M, K}, a);
	kt_input_f32(2, (const int64_t[]) {K, N}, b);
	kt_run(ox_kernels_gemm, ox_kernels_gemm_count, 1);
	kt_expect_f32(0, 3, (const int64_t[]) {B, M, N}, want, 1e-4);
	kt_end();
}

int
main(void)
{
	case_0();
	case_1();
	case_2();
	case_3();
	case_4();
	case_5();
	case_6();
	case_7();
	case_8();
	case_9();
	case_10();
	case_11();
	case_12();
	case_13();
	case_14();
	case_15();
	case_16();
	case_17();
	case_18();
	case_19();
	case_20();
	case_21();
	case_22();
	case_23();
	case_24();
	case_25();
	case_26();
	case_27();
	case_28();
	case_29();
	case_30();
	case_31();
	case_32();
	case_33();
	case_34();
	case_35();
	case_36();
	case_37();
	case_38();
	case_39();
	case_40();
	case_41();
	case_42();
	case_43();
	case_44();
	case_45();
	case_46();
	case_47();
	case_48();
	case_49();
	case_50();
	case_51();
	errors();
	large_matmul();
	return kt_summary();
}
