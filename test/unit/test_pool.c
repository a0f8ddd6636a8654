/*
 * test_pool.c
 *	  Unit tests of the pool family: MaxPool (with Indices), AveragePool,
 *	  LpPool, GlobalAveragePool, GlobalMaxPool, GlobalLpPool, MaxRoiPool,
 *	  MaxUnpool.  Expected values of the generated cases come from
 *	  onnxruntime (or onnx.reference where onnxruntime lacks the case).
 */
#include "kernel_test.h"

static void
case_0(void)
{
	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool 2-D default";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 2});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 4, 5}, (const float[]) {-1.60383677f, 0.0640999153f, 0.740891278f, 0.152619198f, 0.863743901f, 2.91309929f, -1.4788233f, 0.945472956f,
		-1.66613543f, 0.343744576f, -0.512443721f, 1.32375896f, -0.860280216f, 0.519493222f, -1.26514375f, -2.15913892f,
		0.434733957f, 1.73328936f, 0.520134151f, -1.00216579f, 0.268345535f, 0.767174721f, 1.19127202f, -1.15741086f,
		0.696279407f, 0.351383686f, -0.0324150845f, 0.0131815793f, -0.679249942f, -0.620532036f, 1.33121419f, 0.258838505f,
		-0.481483907f, -2.49178958f, -0.876563787f, -0.505509138f, -1.28312922f, -1.33032846f, 0.825992584f, -0.247215018f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {2.91309929f, 0.945472956f, 0.945472956f, 0.863743901f, 2.91309929f, 1.32375896f, 0.945472956f, 0.519493222f,
		1.32375896f, 1.73328936f, 1.73328936f, 0.520134151f, 0.767174721f, 1.19127202f, 1.19127202f, 0.696279407f,
		1.33121419f, 0.258838505f, 0.0131815793f, -0.620532036f, 1.33121419f, 0.258838505f, 0.825992584f, 0.825992584f}, 0.0001);
	kt_end();
}

static void
case_1(void)
{
	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool 2-D pads strides";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {3, 3});
	kt_attr_ints("pads", 4, (const int64_t[]) {1, 1, 1, 1});
	kt_attr_ints("strides", 2, (const int64_t[]) {2, 2});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {2, 2, 5, 5}, (const float[]) {-1.69970608f, -1.33515286f, -0.299638897f, 1.11480689f, -1.50640881f, 1.59011209f, -0.487325191f, -1.71110213f,
		0.513090193f, 1.43709195f, -0.221804112f, 0.648816526f, -0.317891181f, -0.0109782554f, 1.66541648f, 0.895786405f,
		-1.20260119f, 2.79962707f, -1.02119625f, 0.84810698f, 0.498082608f, -0.0844416395f, 0.202493325f, -0.163805783f,
		0.837059736f, -0.712439656f, -1.17414987f, 0.475267947f, 1.73739481f, -0.136643663f, 1.70331669f, -0.0882183462f,
		1.55724216f, 0.963409901f, 0.522726178f, 0.937150419f, -0.836909294f, 0.0980680883f, -1.57055342f, -1.7798779f,
		0.918836296f, -0.149067774f, 1.00563645f, 0.131017894f, -0.77304709f, 2.89430737f, 1.37707841f, 0.17145583f,
		0.0222422294f, 1.65268576f, -0.321875215f, 1.52456462f, 0.654605329f, -1.32182598f, 0.743245363f, 1.11738074f,
		0.546459436f, 0.964053035f, 1.37477863f, -0.491282851f, 2.25392556f, 0.161614195f, 0.833778799f, -1.58010948f,
		1.01058531f, 0.721867859f, -0.583632052f, 0.682845354f, 0.505365789f, 1.00145781f, 0.715796113f, -0.554364622f,
		0.05488047f, -1.6986469f, 0.0214629807f, -0.515716374f, 1.06883919f, 1.34257412f, 0.641309559f, -1.85189486f,
		0.520961642f, -1.10491621f, 0.437862277f, 0.158265948f, -1.09056187f, -1.31971598f, 0.838651478f, 2.11976385f,
		-0.049572438f, 0.325697839f, -0.548323393f, -0.270319074f, -1.67280543f, 0.0828318074f, 0.190192729f, -0.308207154f,
		0.107088342f, -0.356980115f, 1.3375268f, -0.0762180015f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {2, 2, 3, 3}, (const float[]) {1.59011209f, 1.11480689f, 1.43709195f, 1.59011209f, 2.79962707f, 1.66541648f, 0.895786405f, 2.79962707f,
		0.84810698f, 1.70331669f, 1.73739481f, 1.73739481f, 1.70331669f, 1.55724216f, 0.963409901f, 2.89430737f,
		1.37707841f, 1.65268576f, 1.52456462f, 1.52456462f, 1.37477863f, 2.25392556f, 1.37477863f, 1.37477863f,
		0.721867859f, 0.682845354f, 1.00145781f, 1.06883919f, 1.34257412f, 0.641309559f, 0.838651478f, 2.11976385f,
		0.325697839f, 0.107088342f, 1.3375268f, 1.3375268f}, 0.0001);
	kt_end();
}

static void
case_2(void)
{
	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool 2-D ceil";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {3, 3});
	kt_attr_ints("strides", 2, (const int64_t[]) {2, 2});
	kt_attr_int("ceil_mode", 1);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 1, 4, 4}, (const float[]) {0.263373196f, 0.960938096f, 0.190181494f, 0.404074132f, -1.82536614f, -0.248902991f, 1.91449749f, 0.39060843f,
		1.02394104f, 0.393099904f, 1.88192761f, -0.748258948f, -0.807030082f, 0.657375574f, 0.786261261f, 0.317279279f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 1, 2, 2}, (const float[]) {1.91449749f, 1.91449749f, 1.88192761f, 1.88192761f}, 0.0001);
	kt_end();
}

static void
case_3(void)
{
	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool 2-D ceil reduce by one";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {1, 1});
	kt_attr_ints("strides", 2, (const int64_t[]) {2, 2});
	kt_attr_int("ceil_mode", 1);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 1, 4, 4}, (const float[]) {0.296087682f, -0.665650129f, 1.03538275f, 0.0364025459f, 0.498543292f, -0.477990448f, 2.0507431f, -0.449946433f,
		0.166740566f, -1.10267234f, -0.811982989f, -0.0457032844f, -0.822553754f, 0.125976935f, -0.839708507f, 0.121813335f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 1, 2, 2}, (const float[]) {0.296087682f, 1.03538275f, 0.166740566f, -0.811982989f}, 0.0001);
	kt_end();
}

static void
case_4(void)
{
	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool 2-D dilations";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 2});
	kt_attr_ints("dilations", 2, (const int64_t[]) {2, 2});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 1, 4, 4}, (const float[]) {0.0279498789f, 1.2317971f, -0.504830062f, -1.10014141f, -0.802113473f, -2.16376328f, -2.18858647f, 1.00609052f,
		2.12540126f, -0.382920414f, 0.092418462f, -0.452013999f, 0.951815128f, -0.173188835f, -0.124116488f, -0.153353259f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 1, 2, 2}, (const float[]) {2.12540126f, 1.2317971f, 0.951815128f, 1.00609052f}, 0.0001);
	kt_end();
}

static void
case_5(void)
{
	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool 2-D SAME_UPPER";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {3, 3});
	kt_attr_ints("strides", 2, (const int64_t[]) {2, 2});
	kt_attr_string("auto_pad", "SAME_UPPER");
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 1, 5, 6}, (const float[]) {-1.61874092f, 0.827491164f, -1.22232771f, 2.21201706f, 1.34709322f, 0.189515516f, -2.73004127f, 0.0366457403f,
		0.738741159f, 0.374716997f, -0.646274924f, 2.01768398f, 0.731188655f, -0.229647055f, 2.14411187f, 0.397145867f,
		0.15946658f, 0.387664288f, 1.21467102f, 0.313031614f, 0.219778255f, 0.251344264f, 1.89918971f, 0.0787203684f,
		-1.35192049f, -0.770740747f, -0.490627408f, 1.07957923f, 1.17455077f, -0.334518701f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 1, 3, 3}, (const float[]) {0.827491164f, 2.21201706f, 2.01768398f, 2.14411187f, 2.14411187f, 2.01768398f, 1.21467102f, 1.89918971f,
		1.89918971f}, 0.0001);
	kt_end();
}

static void
case_6(void)
{
	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool 2-D SAME_LOWER";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 2});
	kt_attr_string("auto_pad", "SAME_LOWER");
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 1, 3, 3}, (const float[]) {0.000751004554f, -0.29465577f, -1.4346714f, -1.10108232f, -1.31130731f, 0.272847891f, 0.798896849f, -0.146135464f,
		-0.485249877f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 1, 3, 3}, (const float[]) {0.000751004554f, 0.000751004554f, -0.29465577f, 0.000751004554f, 0.000751004554f, 0.272847891f, 0.798896849f, 0.798896849f,
		0.272847891f}, 0.0001);
	kt_end();
}

static void
case_7(void)
{
	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool 2-D VALID";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 3});
	kt_attr_string("auto_pad", "VALID");
	kt_attr_ints("strides", 2, (const int64_t[]) {1, 2});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 1, 5, 6}, (const float[]) {0.68777585f, -0.931699455f, -1.98983967f, -0.0735851973f, 0.323405296f, -1.08459997f, -1.4339956f, -0.70119822f,
		-1.40144849f, -0.308618367f, -0.285460591f, 0.140025362f, 0.892729044f, -0.0294189025f, 0.556432426f, 0.437318385f,
		-1.62129962f, -0.244596317f, -1.09140658f, -1.18128395f, 0.0572855696f, 1.04698741f, 0.620833397f, 0.429510474f,
		1.41379404f, -0.0584779829f, -0.689301968f, -0.463178396f, -0.551660419f, -1.92313039f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 1, 4, 2}, (const float[]) {0.68777585f, 0.323405296f, 0.892729044f, 0.556432426f, 0.892729044f, 1.04698741f, 1.41379404f, 1.04698741f}, 0.0001);
	kt_end();
}

static void
case_8(void)
{
	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool 1-D";
	kt_attr_ints("kernel_shape", 1, (const int64_t[]) {3});
	kt_attr_ints("strides", 1, (const int64_t[]) {2});
	kt_attr_ints("pads", 2, (const int64_t[]) {1, 1});
	kt_input(OX_FLOAT, 3, (const int64_t[]) {1, 3, 8}, (const float[]) {1.20822501f, -0.174295634f, -0.120462857f, -0.475159675f, 0.0242445208f, -0.577811897f, 0.923009098f, -1.62854874f,
		0.667647958f, 0.076933153f, 1.14102829f, 1.38521791f, 1.3619653f, -0.00347518874f, -0.879180849f, 1.448861f,
		-1.05149591f, 0.278730929f, -0.497229129f, 0.178557202f, 1.93463409f, 0.633524537f, 0.36368981f, -0.0524432436f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 3, (const int64_t[]) {1, 3, 4}, (const float[]) {1.20822501f, -0.120462857f, 0.0242445208f, 0.923009098f, 0.667647958f, 1.38521791f, 1.38521791f, 1.448861f,
		0.278730929f, 0.278730929f, 1.93463409f, 0.633524537f}, 0.0001);
	kt_end();
}

static void
case_9(void)
{
	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool 3-D";
	kt_attr_ints("kernel_shape", 3, (const int64_t[]) {2, 2, 2});
	kt_attr_ints("strides", 3, (const int64_t[]) {1, 2, 2});
	kt_input(OX_FLOAT, 5, (const int64_t[]) {1, 2, 3, 4, 4}, (const float[]) {0.395483822f, 0.836657882f, 0.595926285f, -0.886506081f, -0.635581493f, 0.0434988029f, 0.769402683f, 0.437064648f,
		-0.158835694f, -1.86801016f, -1.21321082f, 1.43514872f, -0.479091346f, 1.26949179f, 0.281790584f, -0.590846539f,
		-1.69864523f, -0.307836592f, -0.651133299f, -1.18459702f, -0.354516029f, 1.36731231f, 1.70012212f, -1.87958884f,
		-0.285411f, -0.3594414f, 0.3245956f, 0.755334318f, 0.362081945f, 0.0534408875f, -1.52842939f, -0.932440221f,
		-0.421899319f, -0.629130065f, -1.58154559f, -1.25363708f, 0.714422405f, -1.13420522f, -0.456559718f, -0.64203608f,
		0.334013462f, -0.554628134f, -1.13246262f, -0.561507404f, 0.964634478f, 1.50554132f, 0.668013334f, 0.303571135f,
		-0.514432371f, 0.589793086f, 1.54932833f, 1.84939444f, -1.35925722f, -0.940603197f, 2.43381405f, -0.307211816f,
		1.13994861f, -0.59771806f, 1.07635403f, 1.34456289f, -1.51352143f, -2.24620247f, 0.0964808464f, -1.13126993f,
		-0.23344478f, 1.1062541f, 0.996864617f, 1.12867296f, -1.6653769f, 0.617932379f, -1.29514253f, -0.702961922f,
		0.714338362f, 0.881722748f, 0.266288549f, 0.508362055f, -0.150100097f, -1.19278955f, -0.631160438f, 0.478161961f,
		-1.02972496f, -0.95274502f, -1.51718688f, -1.05599308f, -0.209734172f, -0.186683938f, 1.8037107f, 1.3782233f,
		-1.33487964f, 1.42160642f, -0.340643585f, 1.81491089f, -0.62917757f, 0.203731656f, 0.557926297f, 1.05661416f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 5, (const int64_t[]) {1, 2, 2, 2, 2}, (const float[]) {1.36731231f, 1.70012212f, 1.26949179f, 1.43514872f, 1.36731231f, 1.70012212f, 1.50554132f, 0.755334318f,
		1.1062541f, 2.43381405f, 1.13994861f, 1.34456289f, 1.1062541f, 1.8037107f, 1.42160642f, 1.81491089f}, 0.0001);
	kt_end();
}

static void
case_10(void)
{
	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool 3-D dilations";
	kt_attr_ints("kernel_shape", 3, (const int64_t[]) {2, 2, 2});
	kt_attr_ints("dilations", 3, (const int64_t[]) {2, 1, 2});
	kt_attr_ints("pads", 6, (const int64_t[]) {1, 1, 1, 1, 1, 1});
	kt_input(OX_FLOAT, 5, (const int64_t[]) {1, 1, 4, 4, 4}, (const float[]) {1.06310284f, 0.398793578f, -1.11034107f, -0.547139704f, -0.665289283f, -0.394966424f, -0.961065173f, 0.00565390987f,
		-2.08205223f, -0.239093646f, -0.224849641f, 0.0154080195f, 0.347693264f, 0.537033677f, -0.0491900668f, -0.797315955f,
		2.42676973f, 0.342631817f, 1.5244292f, 0.675204873f, -1.53954709f, -0.194129825f, -0.314496547f, 0.736664116f,
		-0.0624638014f, -0.407031506f, 1.36698556f, -0.605694175f, -0.0523042642f, 0.0976520628f, -0.534364581f, 1.3251282f,
		2.55791736f, -1.58118701f, -0.0796107426f, 1.38236809f, -0.0877858326f, 0.626389325f, -0.598351121f, 0.061817605f,
		0.395838082f, 0.215998784f, -0.589678109f, -0.300397456f, -0.135944605f, 0.582923412f, 0.805770934f, 0.620056272f,
		-0.185074538f, 0.564956784f, -0.347275794f, 0.664220512f, -0.438920677f, 0.47844103f, -0.128768638f, 1.62985063f,
		0.525277495f, 1.82856894f, 0.0943890885f, -0.218618378f, 1.66227841f, 0.331710756f, -0.461502254f, 1.84508514f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 5, (const int64_t[]) {1, 1, 4, 5, 4}, (const float[]) {0.342631817f, 2.42676973f, 0.675204873f, 1.5244292f, 0.342631817f, 2.42676973f, 0.736664116f, 1.5244292f,
		-0.194129825f, 1.36698556f, 0.736664116f, 1.36698556f, 0.0976520628f, 1.36698556f, 1.3251282f, 1.36698556f,
		0.0976520628f, -0.0523042642f, 1.3251282f, -0.534364581f, 0.398793578f, 2.55791736f, 1.38236809f, -0.0796107426f,
		0.626389325f, 2.55791736f, 1.38236809f, -0.0796107426f, 0.626389325f, 0.395838082f, 0.626389325f, -0.224849641f,
		0.582923412f, 0.805770934f, 0.620056272f, 0.805770934f, 0.582923412f, 0.805770934f, 0.620056272f, 0.805770934f,
		0.564956784f, 2.42676973f, 0.675204873f, 1.5244292f, 0.564956784f, 2.42676973f, 1.62985063f, 1.5244292f,
		1.82856894f, 1.36698556f, 1.82856894f, 1.36698556f, 1.82856894f, 1.66227841f, 1.84508514f, 1.36698556f,
		0.331710756f, 1.66227841f, 1.84508514f, -0.461502254f, -1.58118701f, 2.55791736f, 1.38236809f, -0.0796107426f,
		0.626389325f, 2.55791736f, 1.38236809f, -0.0796107426f, 0.626389325f, 0.395838082f, 0.626389325f, -0.589678109f,
		0.582923412f, 0.805770934f, 0.620056272f, 0.805770934f, 0.582923412f, 0.805770934f, 0.620056272f, 0.805770934f}, 0.0001);
	kt_end();
}

static void
case_11(void)
{
	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool indices";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 2});
	kt_attr_ints("strides", 2, (const int64_t[]) {2, 2});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {2, 2, 4, 4}, (const float[]) {0.00229382468f, -1.46600211f, 0.126740992f, -0.682070911f, 0.188128412f, -0.185062274f, -0.776011646f, -1.51561844f,
		-0.550627053f, -0.540433347f, -1.55363131f, 0.762521565f, 0.917889953f, 0.38784644f, 1.69595528f, -0.0444088839f,
		-0.456689656f, -0.314284325f, 1.93245935f, -0.0726289302f, -0.352246702f, 0.826690495f, 1.34969914f, -1.02439582f,
		-0.412340134f, -0.826177776f, 1.43125355f, -0.73507756f, 1.11188376f, -0.698884428f, -0.244458616f, 0.123958878f,
		-1.44272232f, 1.63273978f, 0.127758101f, 0.405665338f, -0.223036617f, 0.614121199f, -0.30438f, -1.64533472f,
		-2.08625364f, 1.421543f, -1.3026427f, -2.19894886f, 0.259770334f, -0.537651658f, 0.289122462f, 1.58869994f,
		0.733091474f, -0.657176793f, 1.66879606f, 0.377436221f, 1.08225226f, 0.961028099f, 1.65733624f, 1.03932607f,
		1.12451041f, -0.606264174f, -1.18170619f, 0.727835715f, 0.661117733f, 1.0287919f, 0.467075497f, 0.533234715f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 2);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {2, 2, 2, 2}, (const float[]) {0.188128412f, 0.126740992f, 0.917889953f, 1.69595528f, 0.826690495f, 1.93245935f, 1.11188376f, 1.43125355f,
		1.63273978f, 0.405665338f, 1.421543f, 1.58869994f, 1.08225226f, 1.66879606f, 1.12451041f, 0.727835715f}, 0.0001);
	kt_expect_values(1, OX_INT64, 4, (const int64_t[]) {2, 2, 2, 2}, (const int64_t[]) {4LL, 2LL, 12LL, 14LL, 21LL, 18LL, 28LL, 26LL,
		33LL, 35LL, 41LL, 47LL, 52LL, 50LL, 56LL, 59LL}, 0);
	kt_end();
}

static void
case_12(void)
{
	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool indices pads";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {3, 3});
	kt_attr_ints("pads", 4, (const int64_t[]) {1, 1, 1, 1});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {-1.54101789f, 1.04684746f, -1.81551242f, 1.07880962f, -0.816996813f, -0.0325979441f, 2.07119274f, 0.241327584f,
		-1.87896705f, -1.48834288f, -0.522207797f, 0.289076209f, -0.402167827f, -0.730358481f, 0.960083246f, -0.98662281f,
		2.90448689f, -0.421511322f, -0.122529924f, -0.443705618f, -0.355543345f, 1.50110209f, -0.169914395f, -0.947103798f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 2);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {1.04684746f, 2.07119274f, 2.07119274f, 2.07119274f, 1.04684746f, 2.07119274f, 2.07119274f, 2.07119274f,
		-0.0325979441f, 2.07119274f, 2.07119274f, 2.07119274f, 2.90448689f, 2.90448689f, 0.960083246f, 0.960083246f,
		2.90448689f, 2.90448689f, 1.50110209f, 0.960083246f, 2.90448689f, 2.90448689f, 1.50110209f, -0.122529924f}, 0.0001);
	kt_expect_values(1, OX_INT64, 4, (const int64_t[]) {1, 2, 3, 4}, (const int64_t[]) {1LL, 6LL, 6LL, 6LL, 1LL, 6LL, 6LL, 6LL,
		5LL, 6LL, 6LL, 6LL, 16LL, 16LL, 14LL, 14LL,
		16LL, 16LL, 21LL, 14LL, 16LL, 16LL, 21LL, 18LL}, 0);
	kt_end();
}

static void
case_13(void)
{
	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool indices storage_order 1";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 2});
	kt_attr_int("storage_order", 1);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {-0.637258589f, 0.383715093f, -0.995705187f, 1.47267711f, -0.0923011899f, -0.808474064f, -1.19232452f, 1.7750144f,
		-0.604245722f, 0.837093949f, -0.153181911f, -0.273646355f, 1.05215585f, 1.75335503f, 0.580869913f, -0.271154344f,
		-1.56803727f, 0.992142439f, -0.495197982f, -1.72078073f, 0.265636474f, -0.0464683846f, -0.789013922f, -0.994691193f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 2);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 2, 3}, (const float[]) {0.383715093f, 0.383715093f, 1.7750144f, 0.837093949f, 0.837093949f, 1.7750144f, 1.75335503f, 1.75335503f,
		0.580869913f, 0.992142439f, 0.992142439f, -0.495197982f}, 0.0001);
	kt_expect_values(1, OX_INT64, 4, (const int64_t[]) {1, 2, 2, 3}, (const int64_t[]) {3LL, 3LL, 10LL, 5LL, 5LL, 10LL, 15LL, 15LL,
		18LL, 16LL, 16LL, 19LL}, 0);
	kt_end();
}

static void
case_14(void)
{
	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool double";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 2});
	kt_input(OX_DOUBLE, 4, (const int64_t[]) {1, 1, 3, 3}, (const double[]) {-0.7915171027058131, -1.6089413767020022, 1.514733649104405, 0.75548360409948812, -0.81965325430769131, 0.28916716533081921, 0.053856908759371797, 0.28083888090408571,
		-0.022073649009290104});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_DOUBLE, 4, (const int64_t[]) {1, 1, 2, 2}, (const double[]) {0.75548360409948812, 1.514733649104405, 0.75548360409948812, 0.28916716533081921}, 0);
	kt_end();
}

static void
case_15(void)
{
	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool float16";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 2});
	kt_input(OX_FLOAT16, 4, (const int64_t[]) {1, 1, 3, 3}, (const uint16_t[]) {15514, 48021, 12711, 47739, 16156, 48667, 48339, 15536,
		45791});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT16, 4, (const int64_t[]) {1, 1, 2, 2}, (const uint16_t[]) {16156, 16156, 16156, 16156}, 0);
	kt_end();
}

static void
case_16(void)
{
	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool uint8";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 2});
	kt_attr_ints("pads", 4, (const int64_t[]) {1, 1, 1, 1});
	kt_input(OX_UINT8, 4, (const int64_t[]) {1, 1, 3, 3}, (const uint8_t[]) {86, 88, 60, 16, 87, 22, 108, 129,
		168});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_UINT8, 4, (const int64_t[]) {1, 1, 4, 4}, (const uint8_t[]) {86, 88, 88, 60, 86, 88, 88, 60,
		108, 129, 168, 168, 108, 129, 168, 168}, 0);
	kt_end();
}

static void
case_17(void)
{
	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool int8";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 2});
	kt_input(OX_INT8, 4, (const int64_t[]) {1, 2, 3, 3}, (const int8_t[]) {-64, 30, 67, -45, -40, -52, 92, 82,
		81, -84, -73, 34, -99, 37, -46, 25,
		14, 7});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_INT8, 4, (const int64_t[]) {1, 2, 2, 2}, (const int8_t[]) {30, 67, 92, 82, 37, 37, 37, 37}, 0);
	kt_end();
}

static void
case_18(void)
{
	kt_begin("MaxPool", "", 1);
	kt.label = "MaxPool opset 1";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 2});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 1, 3, 3}, (const float[]) {1.08960283f, 0.456077456f, 1.63279903f, -1.98163676f, 0.331642598f, -0.200610161f, 0.21532461f, 0.0651760772f,
		-0.320466906f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 1, 2, 2}, (const float[]) {1.08960283f, 1.63279903f, 0.331642598f, 0.331642598f}, 0.0001);
	kt_end();
}

static void
case_19(void)
{
	kt_begin("AveragePool", "", 11);
	kt.label = "AveragePool 2-D default";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 2});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 4, 5}, (const float[]) {1.16135037f, -1.13955975f, 1.21008003f, -1.35957241f, -1.26092792f, -0.859205782f, 0.107378572f, -0.0107789207f,
		-0.295724869f, -0.259374827f, -1.32006574f, 1.92485058f, 0.518515825f, -0.018981088f, -0.310542345f, -0.606186271f,
		0.565622747f, -1.071262f, -1.22207713f, -1.23813927f, 1.54188836f, 0.729454935f, 0.0348857641f, -0.444337547f,
		0.921727896f, 0.882287741f, -1.85279357f, 0.026884133f, -1.10499263f, -1.07562828f, 1.98615968f, 1.80887556f,
		0.421781033f, -0.402604699f, 1.12580013f, 1.76098907f, -0.00521124713f, -1.26894677f, 1.65616834f, -1.56575775f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 4}, (const float[]) {-0.182509139f, 0.041779995f, -0.113999039f, -0.793900013f, -0.0367605686f, 0.634991527f, 0.0482577384f, -0.221155792f,
		0.141055316f, 0.484431773f, -0.448451102f, -0.697434962f, 0.325209379f, -0.265392214f, -0.371890098f, -0.425807655f,
		0.706132293f, 0.10118679f, -0.264733046f, -0.364356369f, 1.3877033f, 0.239124656f, 0.101599485f, 0.203401506f}, 0.0001);
	kt_end();
}

static void
case_20(void)
{
	kt_begin("AveragePool", "", 11);
	kt.label = "AveragePool 2-D pads exclude";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {3, 3});
	kt_attr_ints("pads", 4, (const int64_t[]) {1, 1, 1, 1});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 1, 4, 4}, (const float[]) {-2.29893684f, -0.376136571f, -1.23246717f, -0.644300997f, 0.00363821094f, 0.707521677f, 0.792132795f, 0.227186114f,
		-0.105040245f, -0.302345216f, -0.744481266f, -0.32867071f, -0.493488222f, 1.99056947f, -0.104065381f, -0.164776847f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 1, 4, 4}, (const float[]) {-0.49097836f, -0.40070796f, -0.0876773596f, -0.214362323f, -0.395216495f, -0.395123839f, -0.211284593f, -0.321766883f,
		0.300142616f, 0.193826869f, 0.230341166f, -0.0537792183f, 0.272423983f, 0.0401915498f, 0.0577050261f, -0.335498542f}, 0.0001);
	kt_end();
}

static void
case_21(void)
{
	kt_begin("AveragePool", "", 11);
	kt.label = "AveragePool 2-D pads include";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {3, 3});
	kt_attr_ints("pads", 4, (const int64_t[]) {1, 2, 1, 0});
	kt_attr_int("count_include_pad", 1);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 1, 4, 4}, (const float[]) {0.872712076f, -0.143517807f, -0.548597574f, -1.00975537f, 0.816048443f, -0.310841888f, 0.683329999f, -1.72591889f,
		0.0783017576f, 0.494389027f, -0.0981139317f, 1.94997978f, -0.320416212f, -1.28353024f, 2.89488888f, 0.803679526f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 1, 4, 4}, (const float[]) {0.187640056f, 0.137155637f, 0.15212591f, -0.339477956f, 0.196340263f, 0.200787961f, 0.204856679f, -0.0787829757f,
		0.0637704432f, -0.0584499054f, 0.328228414f, 0.378651351f, -0.0269016065f, -0.114583954f, 0.19616881f, 0.529032528f}, 0.0001);
	kt_end();
}

static void
case_22(void)
{
	kt_begin("AveragePool", "", 11);
	kt.label = "AveragePool 2-D ceil";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {3, 3});
	kt_attr_ints("strides", 2, (const int64_t[]) {2, 2});
	kt_attr_int("ceil_mode", 1);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 1, 4, 4}, (const float[]) {0.0255382583f, 2.17618275f, 1.05426919f, -0.298337936f, 0.256859928f, -0.109446689f, 0.485342383f, -0.109186612f,
		0.883063138f, -2.00729275f, 0.658242643f, -0.145964518f, -0.0632545352f, -0.39040342f, -0.272127748f, 1.83718836f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 1, 2, 2}, (const float[]) {0.380306542f, 0.274060875f, -0.198628783f, 0.519334674f}, 0.0001);
	kt_end();
}

static void
case_23(void)
{
	kt_begin("AveragePool", "", 11);
	kt.label = "AveragePool 2-D ceil include pad";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {3, 3});
	kt_attr_ints("strides", 2, (const int64_t[]) {2, 2});
	kt_attr_ints("pads", 4, (const int64_t[]) {1, 1, 1, 1});
	kt_attr_int("ceil_mode", 1);
	kt_attr_int("count_include_pad", 1);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 1, 6, 6}, (const float[]) {0.499947518f, 0.582168162f, 0.908046722f, 0.978208065f, -0.766105592f, -0.652743101f, 0.381807357f, 0.560029984f,
		0.469942689f, -0.113643184f, 0.856565893f, 0.143781707f, -1.22291088f, 0.348316491f, -1.25580931f, -0.5566594f,
		0.998750925f, -0.382975161f, 0.39330551f, 0.756348073f, -0.123312578f, 0.899760842f, 0.532894731f, 0.641737938f,
		1.03953886f, -0.892030895f, -0.881940126f, 1.69039476f, 0.543381989f, -0.755254865f, 1.4436425f, -1.3032198f,
		0.99419868f, -0.540315986f, 0.154987395f, 1.86388767f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 1, 4, 4}, (const float[]) {0.224883661f, 0.376083583f, 0.0495626479f, -0.0848268941f, 0.135210723f, 0.109441519f, 0.335579336f, 0.0670907497f,
		0.159731552f, 0.0666536763f, 0.559052706f, 0.291728467f, 0.0234037843f, -0.141556188f, 0.246426508f, 0.465971917f}, 0.0001);
	kt_end();
}

static void
case_24(void)
{
	kt_begin("AveragePool", "", 19);
	kt.label = "AveragePool 2-D ceil last window on pad";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {3, 3});
	kt_attr_ints("strides", 2, (const int64_t[]) {2, 2});
	kt_attr_ints("pads", 4, (const int64_t[]) {1, 1, 1, 1});
	kt_attr_int("ceil_mode", 1);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 1, 5, 5}, (const float[]) {-0.227638945f, -0.650813699f, 0.605306089f, -0.720559001f, 1.4718895f, 1.66955984f, -0.477528125f, -0.845004201f,
		-2.36458826f, 1.38722932f, -1.25872612f, 0.334566057f, 0.17990905f, 0.98964107f, -0.924158514f, 1.21507561f,
		-0.869623721f, 0.24164255f, -1.9400394f, -1.23203719f, 0.577744603f, 0.311021984f, 0.484677553f, 1.47509789f,
		-0.458753824f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 1, 3, 3}, (const float[]) {0.0783947632f, -0.742197812f, -0.0565071106f, 0.102220602f, -0.527891695f, -0.680658817f, 0.30855462f, -0.0495371819f,
		-0.538933158f}, 0.0001);
	kt_end();
}

static void
case_25(void)
{
	kt_begin("AveragePool", "", 11);
	kt.label = "AveragePool 2-D SAME_UPPER";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {3, 3});
	kt_attr_ints("strides", 2, (const int64_t[]) {2, 2});
	kt_attr_string("auto_pad", "SAME_UPPER");
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 1, 5, 5}, (const float[]) {-0.129071355f, 0.0994169265f, -1.38212001f, 0.653119862f, 0.00367729692f, 0.972266614f, 0.653154373f, 1.42000377f,
		0.190943882f, 0.471333474f, 0.45199585f, 0.144581094f, -1.51554191f, 0.982857108f, -1.10703909f, -0.735821962f,
		-0.484554321f, 0.829373777f, 2.35209012f, -0.00722063612f, 1.78998613f, -0.0488524064f, 1.02678633f, -0.835908294f,
		0.115449101f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 1, 3, 3}, (const float[]) {0.398941636f, 0.27241981f, 0.329768628f, 0.166936949f, 0.508100867f, 0.480494142f, 0.130189359f, 0.473155886f,
		0.406102568f}, 0.0001);
	kt_end();
}

static void
case_26(void)
{
	kt_begin("AveragePool", "", 11);
	kt.label = "AveragePool 2-D SAME_LOWER include";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 2});
	kt_attr_string("auto_pad", "SAME_LOWER");
	kt_attr_int("count_include_pad", 1);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 1, 3, 3}, (const float[]) {-0.710166097f, -0.892374694f, -1.4108727f, 1.14713323f, 0.715456009f, 0.185285255f, -0.34109059f, -0.106317215f,
		0.182238445f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 1, 3, 3}, (const float[]) {-0.177541524f, -0.400635183f, -0.575811863f, 0.109241784f, 0.0650121123f, -0.350626528f, 0.201510668f, 0.35379535f,
		0.244165629f}, 0.0001);
	kt_end();
}

static void
case_27(void)
{
	kt_begin("AveragePool", "", 19);
	kt.label = "AveragePool 2-D dilations";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 2});
	kt_attr_ints("dilations", 2, (const int64_t[]) {2, 2});
	kt_attr_ints("pads", 4, (const int64_t[]) {1, 1, 1, 1});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 1, 5, 5}, (const float[]) {-0.855966508f, -0.0842813104f, -0.886537969f, 0.798244059f, -1.02177119f, 0.514899194f, 0.491655171f, -0.508264244f,
		0.420838773f, 0.792980671f, 0.393571615f, 0.00892529171f, -0.358872473f, 0.517308891f, -1.85429144f, 0.64941746f,
		-0.456541896f, -0.152827695f, -0.0315282606f, -1.14793146f, -0.152597621f, -1.08808029f, -1.38349092f, -0.647755086f,
		1.33718097f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 1, 5, 5}, (const float[]) {0.491655171f, 0.00331747532f, 0.456246972f, 0.142358214f, 0.420838773f, -0.0376780108f, -0.426951349f, 0.310049236f,
		-1.03036833f, 0.657776475f, 0.0175566375f, 0.125806183f, 0.106105946f, -0.254010677f, 0.194655254f, -0.539577484f,
		-0.375347346f, -0.302400291f, -0.56486845f, -0.0652230978f, -0.456541896f, 0.24829489f, -0.24403508f, -0.650379598f,
		-0.0315282606f}, 0.0001);
	kt_end();
}

static void
case_28(void)
{
	kt_begin("AveragePool", "", 19);
	kt.label = "AveragePool 3-D dilations include ceil";
	kt_attr_ints("kernel_shape", 3, (const int64_t[]) {2, 2, 2});
	kt_attr_ints("dilations", 3, (const int64_t[]) {2, 2, 2});
	kt_attr_ints("strides", 3, (const int64_t[]) {2, 2, 2});
	kt_attr_int("ceil_mode", 1);
	kt_attr_int("count_include_pad", 1);
	kt_attr_ints("pads", 6, (const int64_t[]) {1, 1, 1, 1, 1, 1});
	kt_input(OX_FLOAT, 5, (const int64_t[]) {1, 1, 5, 5, 5}, (const float[]) {2.79768109f, -0.22488834f, 0.528565705f, -1.13311255f, -1.0051167f, -0.041158136f, 1.15689647f, -2.11453724f,
		-1.08787835f, 0.570689023f, -0.528885722f, -0.384901404f, -0.372389376f, 1.27529764f, 0.28204143f, -0.374489516f,
		1.4685061f, 0.359321386f, 1.04315686f, -1.61166275f, -1.41518462f, 1.83294427f, -0.266610712f, -1.48054492f,
		0.0600281768f, 0.600084186f, 0.687898099f, 0.438220024f, -0.0967751294f, 0.0708000958f, -1.27637792f, -1.08238029f,
		0.0311657432f, 0.389122814f, 1.1710645f, -2.76828671f, -2.2244668f, 0.245259553f, 0.40634951f, -0.0476876982f,
		0.347123742f, -0.0387767553f, 0.464630008f, -0.122406274f, -0.154541716f, -1.09356856f, -0.130976558f, 0.878389359f,
		1.78235364f, -0.160385907f, 0.361984372f, 0.190316603f, -1.6418699f, -0.201110542f, 0.0315058194f, 4.08315849f,
		-1.85667121f, -0.824049473f, -2.18650556f, -0.372254312f, -0.361516237f, 0.0170364901f, 1.23255861f, -0.308700889f,
		-0.460437447f, -1.66505778f, -0.914550483f, -0.0955345258f, 0.726963162f, -1.34563506f, 2.32223725f, 0.517972887f,
		-0.124697328f, -0.130031347f, 0.778881907f, -0.347458899f, -1.66193759f, -0.988644123f, -1.20413506f, 0.249446154f,
		-0.232877225f, 0.489848971f, -0.705464184f, 1.08961344f, 0.0923141167f, -0.497223765f, -0.466631621f, -0.843055904f,
		-0.373274773f, 0.292790622f, -1.41325796f, -0.345073074f, -0.821722984f, -0.774231136f, 0.399332941f, 0.172402054f,
		0.688638091f, 0.218453109f, -0.265386552f, -0.297916323f, 2.15090919f, 0.00637051277f, -0.195185706f, -0.0875893608f,
		-0.229021564f, -0.370213509f, 3.66426086f, 1.43068039f, 1.12233651f, -0.612476349f, -0.386458009f, 0.397871524f,
		0.751757383f, 0.223190859f, -1.15817153f, -0.451100349f, 0.439096302f, -1.29831409f, 2.39314294f, 0.227942541f,
		0.16107136f, -0.363831192f, 0.888035655f, -0.365396708f, -0.63959223f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 5, (const int64_t[]) {1, 1, 3, 3, 3}, (const float[]) {-0.135297537f, -0.0866571814f, 0.0486403517f, -0.140144631f, -0.106805056f, 0.0333395675f, -0.00484709442f, -0.0201478787f,
		-0.0153007843f, -0.0740664154f, 0.11077562f, 0.184842035f, -0.122047648f, -0.0492852814f, 0.0727623478f, -0.0479812287f,
		-0.160060912f, -0.11207968f, 0.0612311214f, 0.197432801f, 0.13620168f, 0.0180969872f, 0.0575197712f, 0.0394227877f,
		-0.0431341343f, -0.139913023f, -0.096778892f}, 0.0001);
	kt_end();
}

static void
case_29(void)
{
	kt_begin("AveragePool", "", 11);
	kt.label = "AveragePool 1-D";
	kt_attr_ints("kernel_shape", 1, (const int64_t[]) {3});
	kt_attr_ints("strides", 1, (const int64_t[]) {2});
	kt_input(OX_FLOAT, 3, (const int64_t[]) {1, 2, 9}, (const float[]) {1.29391146f, 0.315543205f, 0.0827534422f, -0.597925425f, 0.81869781f, 0.548969984f, 0.968981326f, -1.17426705f,
		0.583764374f, -1.09360278f, 1.13194311f, 0.0740517974f, -0.382271826f, 0.182352945f, -1.5178256f, 0.421301484f,
		0.972684979f, -1.06913209f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 3, (const int64_t[]) {1, 2, 4}, (const float[]) {0.564069331f, 0.101175271f, 0.77888304f, 0.126159549f, 0.0374640413f, -0.0419556946f, -0.30472374f, 0.108284794f}, 0.0001);
	kt_end();
}

static void
case_30(void)
{
	kt_begin("AveragePool", "", 11);
	kt.label = "AveragePool double";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 2});
	kt_input(OX_DOUBLE, 4, (const int64_t[]) {1, 1, 3, 3}, (const double[]) {-0.20642673016993962, 0.36222403483525784, 0.7352930267815494, -1.542878171630087, -1.1020167764691999, 1.2376024062911293, -1.1991115911088372, 0.27037239454682133,
		-1.5916394733551817});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_DOUBLE, 4, (const int64_t[]) {1, 1, 2, 2}, (const double[]) {-0.62227441085849211, 0.30827567285968416, -0.89340853616532567, -0.29642036224660778}, 1e-12);
	kt_end();
}

static void
case_31(void)
{
	kt_begin("AveragePool", "", 11);
	kt.label = "AveragePool float16";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 2});
	kt_input(OX_FLOAT16, 4, (const int64_t[]) {1, 1, 3, 3}, (const uint16_t[]) {13466, 48291, 46216, 15559, 13871, 15470, 45391, 14431,
		48150});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT16, 4, (const int64_t[]) {1, 1, 2, 2}, (const uint16_t[]) {12716, 8856, 14296, 13331}, 0.002);
	kt_end();
}

static void
case_32(void)
{
	kt_begin("LpPool", "", 11);
	kt.label = "LpPool 2-D p2";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 2});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 2, 4, 4}, (const float[]) {1.17113435f, 0.358729452f, -0.232436314f, 1.81135809f, -0.460821271f, -1.20685375f, -0.0676196814f, 0.245210186f,
		0.849618316f, -0.795238376f, 0.508840799f, -0.313940257f, 0.455311537f, 0.219807178f, -0.0707139373f, -1.26110446f,
		-0.482071996f, -1.05066204f, -0.303499073f, 2.90240264f, -0.338958681f, -0.699245632f, 1.81280434f, -0.535795867f,
		1.08056092f, 0.889155447f, 1.04447734f, -0.17506057f, -0.466887593f, 0.0511783101f, 2.0391686f, 0.281851292f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 2, 3, 3}, (const float[]) {1.78019512f, 1.28210056f, 1.84383976f, 1.73870862f, 1.53375077f, 0.6497522f, 1.26881015f, 0.971925259f,
		1.39744854f, 1.39288247f, 2.22962022f, 3.47697973f, 1.60063946f, 2.37838912f, 2.16677547f, 1.47608018f,
		2.45812082f, 2.31500053f}, 0.0001);
	kt_end();
}

static void
case_33(void)
{
	kt_begin("LpPool", "", 11);
	kt.label = "LpPool 2-D p1 pads";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {3, 3});
	kt_attr_int("p", 1);
	kt_attr_ints("pads", 4, (const int64_t[]) {1, 1, 1, 1});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 1, 4, 4}, (const float[]) {-0.988017142f, 0.784080267f, 0.0748098418f, 0.373396009f, -0.656433642f, 0.134781212f, 0.927148461f, 0.998423159f,
		-0.00590182794f, -0.0807612315f, -0.128510654f, 0.291490376f, 0.349297881f, -0.767214715f, 0.9278f, 0.709566355f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 1, 4, 4}, (const float[]) {2.56331205f, 3.56527042f, 3.29263878f, 2.37377739f, 2.64997506f, 3.78044415f, 3.793401f, 2.79377842f,
		1.99439049f, 3.97784972f, 4.96569633f, 3.982939f, 1.20317566f, 2.2594862f, 2.90534329f, 2.05736732f}, 0.0001);
	kt_end();
}

static void
case_34(void)
{
	kt_begin("LpPool", "", 18);
	kt.label = "LpPool 2-D p3 strides";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 2});
	kt_attr_int("p", 3);
	kt_attr_ints("strides", 2, (const int64_t[]) {2, 2});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 1, 4, 4}, (const float[]) {-0.0600699224f, 0.864734113f, -0.054786671f, -0.342942953f, -0.52614361f, -1.2875371f, 0.513163984f, -0.860421002f,
		-0.365243345f, -0.380206645f, 0.67345804f, -1.58118796f, 1.04704559f, 0.0295018964f, -1.31961095f, 2.26417208f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 1, 2, 2}, (const float[]) {1.43043923f, 0.933175147f, 1.07767451f, 2.62866759f}, 0.0001);
	kt_end();
}

static void
case_35(void)
{
	kt_begin("LpPool", "", 11);
	kt.label = "LpPool 1-D";
	kt_attr_ints("kernel_shape", 1, (const int64_t[]) {2});
	kt_attr_int("p", 2);
	kt_input(OX_FLOAT, 3, (const int64_t[]) {1, 1, 5}, (const float[]) {0.0706529468f, -0.131866574f, 0.231482998f, 0.413262576f, 0.810684144f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 3, (const int64_t[]) {1, 1, 4}, (const float[]) {0.149601579f, 0.266407907f, 0.473677456f, 0.90994215f}, 0.0001);
	kt_end();
}

static void
case_36(void)
{
	kt_begin("GlobalAveragePool", "", 1);
	kt.label = "GlobalAveragePool";
	kt_input(OX_FLOAT, 4, (const int64_t[]) {2, 3, 4, 5}, (const float[]) {0.319565028f, 1.22479403f, 1.74202418f, -1.50526416f, -0.374415666f, 1.96849632f, -0.164679036f, -2.6732285f,
		-0.0926326513f, 0.0931422934f, 0.746311665f, -2.11188769f, 0.683416069f, -0.810214281f, 0.593577325f, -0.333347708f,
		1.82638681f, -0.886299908f, -1.06441116f, 0.437723428f, -0.784758568f, 0.44267416f, 0.0264755189f, -0.623197138f,
		0.0279872753f, 1.42037404f, -0.8405388f, -0.831924438f, -0.13518995f, 1.67317736f, 0.281611711f, 0.0204344969f,
		-0.0564663298f, 1.01761007f, 0.549046934f, 0.315896392f, 0.225735456f, 2.29525375f, -0.714783967f, -1.38820624f,
		-0.571142554f, -0.0496125072f, 0.451372266f, -0.0409493595f, 0.931674957f, 0.549002588f, 2.02652621f, 0.230097353f,
		-0.367443085f, 0.727436781f, -0.4168607f, 1.59901881f, 1.63171303f, 1.01934111f, -0.180777624f, -0.0649993196f,
		0.353343517f, 0.0252781659f, 0.500468969f, -1.05163097f, -0.574923754f, 1.88825345f, -0.0516823716f, -0.354729623f,
		0.616067946f, -0.277557075f, -0.131192595f, -0.374758512f, 0.537097871f, 0.100246891f, -0.246100903f, 1.82342041f,
		-0.325609684f, 0.329944223f, 2.08776903f, -0.58783251f, -0.182418138f, 0.553240061f, -0.801071644f, 0.161522433f,
		-0.0614723749f, -1.30011964f, 0.682733834f, 0.761932731f, -1.29309487f, -0.242160708f, 1.46286845f, -0.624274194f,
		-0.0290975254f, 0.378458858f, 0.180260167f, -0.0589867271f, 0.421520978f, -1.31919467f, 2.80225778f, 0.0216588154f,
		-0.199474216f, -0.150037482f, -0.51681006f, 0.389810681f, 0.0122408699f, -1.43012393f, -1.25402462f, 0.405997574f,
		-0.238225013f, 0.783131719f, -0.0997429267f, -0.141680896f, -1.6244359f, 0.281291366f, 0.26215902f, 1.28165185f,
		-1.09667718f, -0.241109788f, -0.513530016f, -0.404245555f, -1.65594649f, 0.320644319f, -0.313000739f, 0.121926568f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {2, 3, 1, 1}, (const float[]) {-0.0190472119f, 0.146060586f, 0.365092903f, 0.209484294f, 0.0653390065f, -0.277184993f}, 0.0001);
	kt_end();
}

static void
case_37(void)
{
	kt_begin("GlobalAveragePool", "", 1);
	kt.label = "GlobalAveragePool 1-D";
	kt_input(OX_FLOAT, 3, (const int64_t[]) {1, 2, 7}, (const float[]) {1.98834026f, -2.0374341f, 1.60949075f, -0.773191512f, 0.000341962063f, -0.573088586f, -0.812068343f, -0.0919679925f,
		-0.515955508f, 0.868530333f, -0.117180914f, 0.150932893f, 0.629698813f, 0.542677104f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 3, (const int64_t[]) {1, 2, 1}, (const float[]) {-0.0853727907f, 0.209533542f}, 0.0001);
	kt_end();
}

static void
case_38(void)
{
	kt_begin("GlobalAveragePool", "", 1);
	kt.label = "GlobalAveragePool double";
	kt_input(OX_DOUBLE, 4, (const int64_t[]) {1, 2, 3, 3}, (const double[]) {1.6628195888634816, 0.75698911840825711, 0.71379173400170759, -1.4728428816602588, 1.2040608625480165, 1.4777843847766226, -0.90980182024908318, 1.2915622714650346,
		-1.101035670783586, -0.34983127242474671, 0.041259399361352631, -0.22795988500458586, 1.0679505265283207, 0.96316353413224853, -0.24002466797057623, 0.37190164525901265,
		0.46711712602805305, -0.56000523777015365});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_DOUBLE, 4, (const int64_t[]) {1, 2, 1, 1}, (const double[]) {0.40259195415224353, 0.1703967964598806}, 1e-12);
	kt_end();
}

static void
case_39(void)
{
	kt_begin("GlobalAveragePool", "", 1);
	kt.label = "GlobalAveragePool float16";
	kt_input(OX_FLOAT16, 4, (const int64_t[]) {1, 2, 3, 3}, (const uint16_t[]) {12074, 48195, 13364, 12016, 15227, 15909, 16505, 44884,
		47747, 15615, 15925, 13438, 43437, 13509, 15360, 47844,
		15586, 48005});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT16, 4, (const int64_t[]) {1, 2, 1, 1}, (const uint16_t[]) {13743, 13997}, 0.002);
	kt_end();
}

static void
case_40(void)
{
	kt_begin("GlobalMaxPool", "", 1);
	kt.label = "GlobalMaxPool";
	kt_input(OX_FLOAT, 4, (const int64_t[]) {2, 3, 4, 5}, (const float[]) {-0.712423146f, 0.305773377f, -0.54026109f, 1.75629604f, -0.264888644f, -0.130112812f, -0.737874746f, -0.647114933f,
		1.14269984f, 1.36991537f, 0.149033919f, 0.780195594f, -0.447687954f, -0.160912484f, 1.27372289f, -0.737854362f,
		0.716525972f, 0.58772701f, 0.0564791225f, 1.15537226f, 2.06160092f, -0.950838745f, 1.46509981f, -0.275064439f,
		-1.76330364f, -0.347057194f, -0.626949549f, -2.08277535f, -1.32360542f, -0.272066414f, -0.0823915526f, -1.42925096f,
		1.4126426f, 0.09120024f, -1.50353789f, 0.999035656f, 1.02587342f, -1.07736087f, 0.414386004f, -0.834323585f,
		-0.424110025f, 0.0620036609f, -0.576466799f, -0.205480352f, 0.212216258f, -0.811708689f, -2.51118708f, -0.00383537216f,
		-1.2031008f, -0.276910663f, 1.01905465f, -0.920017481f, 0.13832289f, -0.227593914f, -1.04350746f, -1.16714907f,
		0.253852904f, 0.646530867f, -0.414055437f, -1.648368f, 0.133069679f, 1.66633272f, 0.779618382f, -1.2456218f,
		-1.49669492f, 0.0244373139f, 0.9295578f, -1.42477131f, -1.98606288f, -0.809289753f, 0.960561931f, -0.483579665f,
		-1.57651341f, 0.421269476f, 0.212079063f, 1.08416724f, -0.0897298828f, 1.41870356f, -0.390299648f, -0.510518909f,
		-0.066555202f, 1.77945316f, -1.40502894f, 0.942731857f, -1.58965266f, 0.519986868f, 0.819201052f, 0.0146173453f,
		-2.20534992f, 0.699600041f, -1.81642401f, 0.133161023f, 0.382933229f, 0.0979355723f, 0.271561772f, -1.13649523f,
		1.48141325f, 0.811820567f, 0.876907885f, 1.80798268f, -0.517908752f, 0.335953325f, 0.012536237f, -1.98543251f,
		1.98958564f, -0.110182188f, 1.01748407f, 0.467813373f, -0.650564611f, -1.32677782f, -1.65755141f, 0.961824536f,
		-0.0132535556f, 0.306799561f, 0.0406521633f, 0.37828061f, -1.61052561f, -0.595745862f, 0.317035347f, -0.447583675f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {2, 3, 1, 1}, (const float[]) {1.75629604f, 2.06160092f, 1.01905465f, 1.66633272f, 1.80798268f, 1.98958564f}, 0.0001);
	kt_end();
}

static void
case_41(void)
{
	kt_begin("GlobalMaxPool", "", 1);
	kt.label = "GlobalMaxPool 3-D";
	kt_input(OX_FLOAT, 5, (const int64_t[]) {1, 2, 2, 3, 2}, (const float[]) {-0.0745600015f, 1.21711254f, -1.00776958f, 0.181349978f, 0.957589746f, 0.516690493f, 0.852176726f, 0.23761642f,
		-2.4228375f, -0.414403796f, -0.582888603f, 1.04394019f, 0.0945175886f, -0.872009397f, -0.414789587f, -0.901197433f,
		-0.207709953f, -1.77118361f, -0.396416396f, -0.879139066f, -1.10004747f, -1.31067646f, 1.20287859f, -1.72347593f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 5, (const int64_t[]) {1, 2, 1, 1, 1}, (const float[]) {1.21711254f, 1.20287859f}, 0.0001);
	kt_end();
}

static void
case_42(void)
{
	kt_begin("GlobalLpPool", "", 2);
	kt.label = "GlobalLpPool p2";
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 3, 4, 4}, (const float[]) {-1.54225719f, 0.415775478f, 0.324231267f, -0.0427776463f, -0.909763873f, -1.04176426f, -0.603656411f, 0.114573523f,
		-0.117712952f, 0.788729966f, 1.0281291f, 2.65175462f, -1.3287437f, -1.18356776f, -0.250223309f, 0.168012187f,
		-0.0858168751f, -0.562328339f, 1.15061986f, -0.867194116f, 1.10882318f, 0.594582677f, -1.41302776f, -1.45361543f,
		-0.520544231f, -0.364333272f, 1.27817976f, 1.14792275f, 0.583443582f, -0.669280708f, 1.50118947f, -0.622547686f,
		-0.49437502f, -0.857745349f, 0.45406881f, 1.15284574f, -0.292748839f, -0.10425631f, 2.26787686f, 1.43764377f,
		1.56859541f, 0.375627905f, -1.66256118f, 0.367915243f, -1.44676173f, -0.304853827f, -0.300709218f, 0.577231467f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 3, 1, 1}, (const float[]) {4.11471653f, 3.85705137f, 4.23470831f}, 0.0001);
	kt_end();
}

static void
case_43(void)
{
	kt_begin("GlobalLpPool", "", 2);
	kt.label = "GlobalLpPool p1";
	kt_attr_int("p", 1);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 3, 4, 4}, (const float[]) {0.0175571796f, -0.0796594173f, 0.284831107f, 1.44000828f, -0.723024905f, 1.47285354f, -1.35054719f, -0.915973783f,
		0.346230537f, -0.597847462f, 0.770904124f, 1.25768423f, 0.410535574f, -2.64043331f, 0.297403723f, -1.83898604f,
		0.0892766789f, -0.631215692f, 0.587066233f, -0.794196486f, -0.0510836691f, 0.0524413139f, -0.776500881f, 1.10742354f,
		0.171367452f, 1.15509379f, -0.396674186f, 1.3137753f, 0.419141471f, -0.40277496f, -0.332035869f, -1.15763426f,
		2.7330749f, -1.15378535f, -0.122438028f, 0.607656002f, 0.126244679f, -1.01011932f, 0.728621304f, -0.0761291534f,
		1.92194784f, -0.94462949f, -1.03382254f, 0.74213326f, -0.95690155f, 0.362045318f, -0.115807764f, 0.802755117f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 3, 1, 1}, (const float[]) {14.4444809f, 9.43770218f, 13.4381123f}, 0.0001);
	kt_end();
}

static void
case_44(void)
{
	kt_begin("MaxRoiPool", "", 1);
	kt.label = "MaxRoiPool";
	kt_attr_ints("pooled_shape", 2, (const int64_t[]) {2, 2});
	kt_attr_float("spatial_scale", 0.5f);
	kt_input(OX_FLOAT, 4, (const int64_t[]) {2, 2, 8, 8}, (const float[]) {-1.16400802f, -0.844296098f, 0.134156525f, -0.960528493f, -0.254432201f, 0.192483097f, -0.0747201368f, -0.877077818f,
		1.78186786f, -1.15649378f, -0.555678189f, 1.45593619f, -1.85238934f, 1.27548742f, 1.29161537f, 2.49718189f,
		-0.538963735f, -0.220740989f, -1.90977871f, -0.741233408f, 0.163772598f, -0.0996741503f, -1.44920576f, -0.497814f,
		-0.477522582f, 0.381091416f, 0.324624747f, -0.895360708f, 0.780855834f, 0.447643727f, 0.350699663f, -1.16005301f,
		-0.645959616f, 0.894696116f, -1.04851806f, -1.52507687f, -1.17218482f, -0.450274616f, -0.953506768f, 0.721694291f,
		0.226391777f, 0.192594156f, -0.663781345f, 1.45123279f, 0.431946009f, 1.25582695f, 1.79469824f, -0.950915635f,
		-0.7811625f, -0.0608549193f, 0.495546013f, 1.37635183f, -0.81669122f, -0.893256426f, 0.361556947f, -1.02355993f,
		0.720507443f, 2.24080157f, 2.39370441f, -0.55584693f, -1.55084097f, 0.560045481f, -2.51217103f, 1.52737713f,
		0.192599431f, -1.3727721f, -0.120043293f, 0.471473753f, -0.372042835f, -1.05226386f, 0.816140115f, -0.331423491f,
		-0.136242047f, 1.31737757f, -1.67352593f, -0.0184562691f, 0.146216065f, -0.490246594f, 1.94330966f, 1.00115526f,
		1.21530294f, -0.391671509f, -0.862300038f, -0.90512073f, -0.471795946f, -2.353894f, 0.973032296f, -0.88152802f,
		-0.234488279f, -2.04972649f, 0.275212824f, 0.0948110744f, -2.35871816f, -1.13846505f, 1.36969852f, 0.316299975f,
		-0.878001213f, -0.299631476f, -0.779509068f, -0.187065363f, 0.403882205f, 0.480015337f, -0.803187907f, 0.84556073f,
		-0.039353963f, -2.84578276f, -0.738610625f, 1.40198588f, -0.488189787f, -0.928219438f, 0.041170463f, 0.101535663f,
		-1.25545728f, -0.702127457f, 0.757270634f, 1.48122323f, -0.0901383981f, 1.28513801f, 0.592634916f, 0.838177085f,
		-1.34161735f, -0.774006784f, 1.46133721f, -0.858102024f, 0.439464658f, -0.252433956f, -0.273685127f, -0.482313544f,
		-0.761312723f, 1.33881772f, 0.368067592f, -0.956697643f, -0.867656171f, -2.08042407f, -0.0015172204f, 0.0492730774f,
		0.0265719611f, 0.72655493f, 0.645877898f, 0.0872724727f, -0.924125671f, -0.523749232f, 0.52828151f, 0.216854945f,
		-1.21114123f, 1.06677318f, -0.5218606f, -1.00657046f, -0.71922797f, -1.32565892f, -0.470425814f, 1.18760598f,
		-1.16889942f, 0.637067258f, -0.611730516f, 0.692971826f, -0.0642363876f, -0.141072527f, 0.688965201f, 1.33748519f,
		-0.956268609f, 0.502297759f, 0.129414305f, -1.09272373f, -0.730681717f, -0.294304878f, -1.87758219f, 0.58512634f,
		-0.0316969715f, -1.32003963f, -0.0156120034f, -0.808311343f, 1.10288441f, -0.0271757971f, 0.48421061f, -0.069855392f,
		0.8379969f, -0.153156579f, 0.579964995f, 0.476533622f, 0.34385699f, -0.0969803333f, 0.784483433f, -1.0418843f,
		-0.213992164f, -0.210683823f, 0.410280228f, 0.0592100881f, 0.0144179761f, 0.541184723f, 1.0130856f, -1.84720087f,
		-0.669612885f, -0.079062067f, 2.087116f, -0.217818961f, 0.018434329f, -0.327767253f, 0.630938649f, -0.812697947f,
		-0.9580369f, 0.494591177f, 1.04272926f, 0.0392791964f, -0.299760759f, 1.35067582f, -1.28541243f, 0.467713743f,
		-1.62873876f, 0.76916492f, 0.248460233f, -0.880373478f, -0.247433618f, 0.0107716434f, 0.0036766266f, -0.819344103f,
		-0.953254402f, 0.0500864163f, 0.87848103f, 0.273815483f, -0.754550755f, -0.668255925f, 0.776027322f, -0.298344344f,
		2.37274981f, -0.433449417f, -0.731681824f, -0.768502414f, -1.33323884f, 1.70382357f, 2.31093645f, -0.948502064f,
		0.0261967927f, 0.253861219f, 0.33256495f, 0.111769892f, -0.100770712f, -0.106603228f, -1.79212427f, 0.655636668f,
		0.895459771f, 2.48612499f, -1.0155592f, -1.72943223f, 0.114005417f, -0.522338986f, 1.8075527f, -1.96718693f,
		-0.459353268f, 0.199626803f, 0.368438512f, -1.23392034f, 1.28174579f, 1.07451534f, 0.97456336f, -0.115388855f});
	kt_input(OX_FLOAT, 2, (const int64_t[]) {3, 5}, (const float[]) {0.0f, 0.0f, 0.0f, 7.0f, 7.0f, 1.0f, 2.0f, 2.0f,
		12.0f, 10.0f, 0.0f, 4.0f, 2.0f, 4.0f, 2.0f});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {3, 2, 2, 2}, (const float[]) {1.78186786f, 1.45593619f, 0.894696116f, 0.780855834f, 1.31737757f, 0.471473753f, 1.21530294f, 0.403882205f,
		1.06677318f, 0.688965201f, 0.692971826f, 1.10288441f, 1.04272926f, 1.35067582f, 0.87848103f, 2.31093645f,
		-0.555678189f, -0.555678189f, -0.555678189f, -0.555678189f, -1.67352593f, -1.67352593f, -1.67352593f, -1.67352593f}, 0.0001);
	kt_end();
}

static void
case_45(void)
{
	kt_begin("MaxUnpool", "", 11);
	kt.label = "MaxUnpool default shape";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 2});
	kt_attr_ints("strides", 2, (const int64_t[]) {2, 2});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 1, 2, 2}, (const float[]) {-0.30541262f, 0.416499943f, 0.135862157f, -0.674335539f});
	kt_input(OX_INT64, 4, (const int64_t[]) {1, 1, 2, 2}, (const int64_t[]) {5LL, 7LL, 13LL, 15LL});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 1, 4, 4}, (const float[]) {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, -0.30541262f, 0.0f, 0.416499943f,
		0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.135862157f, 0.0f, -0.674335539f}, 0.0001);
	kt_end();
}

static void
case_46(void)
{
	kt_begin("MaxUnpool", "", 11);
	kt.label = "MaxUnpool output_shape";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 2});
	kt_attr_ints("strides", 2, (const int64_t[]) {2, 2});
	kt_input(OX_FLOAT, 4, (const int64_t[]) {1, 1, 2, 2}, (const float[]) {0.214812562f, -0.0255590696f, 0.754181504f, -0.863485456f});
	kt_input(OX_INT64, 4, (const int64_t[]) {1, 1, 2, 2}, (const int64_t[]) {5LL, 7LL, 13LL, 15LL});
	kt_input(OX_INT64, 1, (const int64_t[]) {4}, (const int64_t[]) {1LL, 1LL, 5LL, 5LL});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_values(0, OX_FLOAT, 4, (const int64_t[]) {1, 1, 5, 5}, (const float[]) {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.214812562f, 0.0f,
		-0.0255590696f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
		0.754181504f, 0.0f, -0.863485456f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
		0.0f}, 0.0001);
	kt_end();
}


static void
errors(void)
{
	float		a[64] = {0};
	int64_t		bad[4] = {0, 1, 99, 2};

	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool no kernel_shape";
	kt_input_f32(4, (const int64_t[]) {1, 1, 4, 4}, a);
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	/* no window fits: an empty output, as onnxruntime and the ONNX reference give */
	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool kernel larger than input";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {5, 5});
	kt_input_f32(4, (const int64_t[]) {1, 1, 4, 4}, a);
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_ok();
	kt_expect_f32(0, 4, (const int64_t[]) {1, 1, 0, 0}, NULL, 0);
	kt_end();

	/* with ceil_mode the one window over the whole 4x4 map: its max */
	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool ceil_mode kernel larger than input";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {5, 5});
	kt_attr_ints("strides", 2, (const int64_t[]) {2, 2});
	kt_attr_int("ceil_mode", 1);
	a[9] = 3.5f;
	kt_input_f32(4, (const int64_t[]) {1, 1, 4, 4}, a);
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_f32(0, 4, (const int64_t[]) {1, 1, 1, 1}, (const float[]) {3.5f}, 0);
	kt_end();
	a[9] = 0.0f;

	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool kernel rank mismatch";
	kt_attr_ints("kernel_shape", 1, (const int64_t[]) {2});
	kt_input_f32(4, (const int64_t[]) {1, 1, 4, 4}, a);
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool rank 2 input";
	kt_attr_ints("kernel_shape", 1, (const int64_t[]) {2});
	kt_input_f32(2, (const int64_t[]) {4, 4}, a);
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("MaxPool", "", 12);
	kt.label = "MaxPool bad storage_order";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 2});
	kt_attr_int("storage_order", 3);
	kt_input_f32(4, (const int64_t[]) {1, 1, 4, 4}, a);
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("AveragePool", "", 11);
	kt.label = "AveragePool int8 unsupported";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 2});
	kt_input(OX_INT8, 4, (const int64_t[]) {1, 1, 4, 4}, a);
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	kt_begin("LpPool", "", 11);
	kt.label = "LpPool p 0";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 2});
	kt_attr_int("p", 0);
	kt_input_f32(4, (const int64_t[]) {1, 1, 4, 4}, a);
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("MaxUnpool", "", 11);
	kt.label = "MaxUnpool index out of range";
	kt_attr_ints("kernel_shape", 2, (const int64_t[]) {2, 2});
	kt_attr_ints("strides", 2, (const int64_t[]) {2, 2});
	kt_input_f32(4, (const int64_t[]) {1, 1, 2, 2}, a);
	kt_input_i64(4, (const int64_t[]) {1, 1, 2, 2}, bad);
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("MaxRoiPool", "", 1);
	kt.label = "MaxRoiPool bad batch index";
	kt_attr_ints("pooled_shape", 2, (const int64_t[]) {1, 1});
	kt_input_f32(4, (const int64_t[]) {1, 1, 2, 2}, a);
	kt_input_f32(2, (const int64_t[]) {1, 5}, (const float[]) {3, 0, 0, 1, 1});
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("GlobalAveragePool", "", 1);
	kt.label = "GlobalAveragePool rank 1";
	kt_input_f32(1, (const int64_t[]) {4}, a);
	kt_run(ox_kernels_pool, ox_kernels_pool_count, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
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
	errors();
	return kt_summary();
}
