/*
 * test_ml_tree.c
 *	  TreeEnsembleClassifier, TreeEnsembleRegressor and TreeEnsemble.
 *	  Expected values come from onnxruntime 1.32 on the same attributes
 *	  (see test/unit/gen_ml_vectors.py for the binary-classifier cases).
 */
#include "kernel_test.h"
#include "kernels/cpu/conv_fast.h"

#define ML "ai.onnx.ml"
#define RUN(n) kt_run(ox_kernels_ml_tree, ox_kernels_ml_tree_count, n)
/*
 * Literal arrays copied into static storage: the harness keeps attribute
 * pointers until the node runs, after helper functions have returned.
 */
static _Alignas(16) char keep_pool[1 << 22];
static size_t keep_used;

static void *
keep(const void *p, size_t n)
{
	void	   *dst = keep_pool + keep_used;

	keep_used += (n + 15) & ~(size_t) 15;
	if (keep_used > sizeof(keep_pool))
	{
		printf("test pool exhausted\n");
		exit(1);
	}
	memcpy(dst, p, n);
	return dst;
}

#define KEEP(T, ...) ((const T *) keep((const T[]) {__VA_ARGS__}, sizeof((const T[]) {__VA_ARGS__})))
#define I64(...) KEEP(int64_t, __VA_ARGS__)
#define F32(...) KEEP(float, __VA_ARGS__)
#define STRS(...) ((const char **) KEEP(char *, __VA_ARGS__))
#define N_OF(a) ((int) (sizeof(a) / sizeof((a)[0])))

static void
expect_strings(int i, int n, const char **want)
{
	const ox_tensor *t = kt_output(i);

	kt_expect_ok();
	if (kt.rc != OX_OK)
		return;
	if (t->dtype != OX_STRING || ox_tensor_numel(t) != n)
	{
		kt_fail("string output %s%.0f has %.0f elements", "", i, (double) ox_tensor_numel(t));
		return;
	}
	for (int k = 0; k < n; k++)
		if (strcmp(((ox_string *) t->data)[k].data, want[k]) != 0)
			kt_fail("label %s: %.0f (element %.0f)", ((ox_string *) t->data)[k].data, 0, k);
}

/* one tree: x0 <= 1.5 ? node 1 : node 2, both leaves */
static void
stump(void)
{
	const char **modes = STRS("BRANCH_LEQ", "LEAF", "LEAF");

	kt_attr_ints("nodes_treeids", 3, I64(0, 0, 0));
	kt_attr_ints("nodes_nodeids", 3, I64(0, 1, 2));
	kt_attr_ints("nodes_featureids", 3, I64(0, 0, 0));
	kt_attr_strings("nodes_modes", 3, modes);
	kt_attr_floats("nodes_values", 3, F32(1.5f, 0, 0));
	kt_attr_ints("nodes_truenodeids", 3, I64(1, 0, 0));
	kt_attr_ints("nodes_falsenodeids", 3, I64(2, 0, 0));
}

/*
 * The classifier cases run twice: for every output, and for the label alone
 * (ox_kernel_ctx.unread marks the scores), when the kernel must leave the
 * scores unwritten and give the same labels.
 */
static bool label_alone;

#define RUN_CLASSIFIER() (kt.unread = label_alone ? 2 : 0, RUN(2))

static void
expect_scores(const int64_t *dims, const float *want, float tol)
{
	if (!label_alone)
		kt_expect_f32(1, 2, dims, want, tol);
	else if (kt_output(1)->dtype != OX_UNDEFINED)
		kt_fail("the scores (output %s%.0f, rank %.0f) were written, though the run needs the label alone",
				"", 1, kt_output(1)->rank);
}

static const int64_t x4_dims[] = {4, 1};
static const float x4[] = {0, 1, 2, 3};

/* a binary stump classifier whose weights all name class 0 */
static void
binary_case(const char *post, float w1, float w2, int n_base, const float *base)
{
	kt_begin("TreeEnsembleClassifier", ML, 1);
	stump();
	kt_attr_ints("class_treeids", 2, I64(0, 0));
	kt_attr_ints("class_nodeids", 2, I64(1, 2));
	kt_attr_ints("class_ids", 2, I64(0, 0));
	kt_attr_floats("class_weights", 2, F32(w1, w2));
	kt_attr_ints("classlabels_int64s", 2, I64(5, 7));
	kt_attr_string("post_transform", post);
	if (n_base)
		kt_attr_floats("base_values", n_base, base);
	kt_input_f32(2, x4_dims, x4);
	RUN_CLASSIFIER();
}

static void
test_classifier_binary(void)
{
	static const int64_t zd[] = {4, 2};

	binary_case("NONE", 0.3f, 0.8f, 0, NULL);
	kt.label = "binary, positive weights, NONE";
	kt_expect_i64(0, 1, I64(4), I64(5, 5, 7, 7));
	expect_scores(zd, F32(0.7f, 0.3f, 0.7f, 0.3f, 0.2f, 0.8f, 0.2f, 0.8f), 1e-5);
	kt_end();

	binary_case("LOGISTIC", 0.3f, 0.8f, 0, NULL);
	kt.label = "binary, positive weights, LOGISTIC";
	kt_expect_i64(0, 1, I64(4), I64(5, 5, 7, 7));
	expect_scores(zd, F32(0.4255575f, 0.5744425f, 0.4255575f, 0.5744425f,
								0.3100255f, 0.6899745f, 0.3100255f, 0.6899745f), 1e-5);
	kt_end();

	binary_case("NONE", -0.3f, 0.8f, 0, NULL);
	kt.label = "binary, mixed weights, NONE";
	kt_expect_i64(0, 1, I64(4), I64(5, 5, 7, 7));
	expect_scores(zd, F32(0.3f, -0.3f, 0.3f, -0.3f, -0.8f, 0.8f, -0.8f, 0.8f), 1e-5);
	kt_end();

	binary_case("LOGISTIC", -0.3f, 0.8f, 1, F32(0.1f));
	kt.label = "binary, mixed weights, one base value, LOGISTIC";
	kt_expect_i64(0, 1, I64(4), I64(5, 5, 7, 7));
	expect_scores(zd, F32(0.549834f, 0.450166f, 0.549834f, 0.450166f,
								0.28905052f, 0.7109495f, 0.28905052f, 0.7109495f), 1e-5);
	kt_end();

	binary_case("SOFTMAX", -0.3f, 0.8f, 2, F32(0.1f, 0.2f));
	kt.label = "binary, mixed weights, two base values, SOFTMAX";
	kt_expect_i64(0, 1, I64(4), I64(5, 5, 7, 7));
	expect_scores(zd, F32(0.450166f, 0.549834f, 0.450166f, 0.549834f,
								0.7109495f, 0.2890505f, 0.7109495f, 0.2890505f), 1e-5);
	kt_end();

	/* weights for both classes: onnxruntime answers the literal labels 1/0 */
	kt_begin("TreeEnsembleClassifier", ML, 1);
	stump();
	kt_attr_ints("class_treeids", 4, I64(0, 0, 0, 0));
	kt_attr_ints("class_nodeids", 4, I64(1, 1, 2, 2));
	kt_attr_ints("class_ids", 4, I64(0, 1, 0, 1));
	kt_attr_floats("class_weights", 4, F32(0.7f, 0.3f, 0.2f, 0.8f));
	kt_attr_ints("classlabels_int64s", 2, I64(5, 7));
	kt_input_f32(2, x4_dims, x4);
	RUN_CLASSIFIER();
	kt.label = "two classes with weights for both";
	kt_expect_i64(0, 1, I64(4), I64(1, 1, 1, 1));
	expect_scores(zd, F32(0.7f, 0.3f, 0.7f, 0.3f, 0.2f, 0.8f, 0.2f, 0.8f), 1e-5);
	kt_end();
}

/* two trees, three classes, string labels, SOFTMAX over summed weights */
static void
test_classifier_multiclass(void)
{
	static const char *modes[] = {"BRANCH_LT", "LEAF", "LEAF", "BRANCH_GTE", "LEAF", "LEAF"};
	static const int64_t xd[] = {3, 2};
	static const float x[] = {0.5f, 0, 2, 3, 2, -1};
	static const int64_t zd[] = {3, 3};
	float		want[9];
	/* tree 0: x0 < 1 ? A : B; tree 1 (node ids listed in reverse): x1 >= 0 ? C : D */
	const float s[3][3] = {
		{1.0f + 0.5f, 0, 0.25f},	/* row 0: A + C */
		{0.5f, 2.0f, 0.25f},		/* row 1: B + C */
		{0, 2.0f + 1.0f, 0},		/* row 2: B + D */
	};

	for (int r = 0; r < 3; r++)
	{
		float		mx = fmaxf(s[r][0], fmaxf(s[r][1], s[r][2]));
		float		sum = 0;

		for (int c = 0; c < 3; c++)
			sum += expf(s[r][c] - mx);
		for (int c = 0; c < 3; c++)
			want[r * 3 + c] = expf(s[r][c] - mx) / sum;
	}
	kt_begin("TreeEnsembleClassifier", ML, 1);
	kt_attr_ints("nodes_treeids", 6, I64(0, 0, 0, 1, 1, 1));
	kt_attr_ints("nodes_nodeids", 6, I64(0, 1, 2, 2, 1, 0));
	kt_attr_ints("nodes_featureids", 6, I64(0, 0, 0, 1, 0, 0));
	kt_attr_strings("nodes_modes", 6, modes);
	kt_attr_floats("nodes_values", 6, F32(1, 0, 0, 0, 0, 0));
	kt_attr_ints("nodes_truenodeids", 6, I64(1, 0, 0, 1, 0, 0));
	kt_attr_ints("nodes_falsenodeids", 6, I64(2, 0, 0, 0, 0, 0));
	/* tree 1 root is node id 2 (listed first): true -> id 1, false -> id 0 */
	kt_attr_ints("class_treeids", 6, I64(0, 0, 1, 1, 1, 1));
	kt_attr_ints("class_nodeids", 6, I64(1, 2, 1, 1, 0, 1));
	kt_attr_ints("class_ids", 6, I64(0, 1, 2, 0, 1, 2));
	kt_attr_floats("class_weights", 6, F32(1.0f, 2.0f, 0.25f, 0.5f, 1.0f, 0.0f));
	kt_attr_strings("classlabels_strings", 3, STRS("setosa", "versicolor", "virginica"));
	kt_attr_string("post_transform", "SOFTMAX");
	kt_input_f32(2, xd, x);
	RUN_CLASSIFIER();
	kt.label = "multiclass, string labels, SOFTMAX";
	expect_strings(0, 3, STRS("setosa", "versicolor", "versicolor"));
	expect_scores(zd, want, 1e-5);
	kt_end();
}

/* every branch mode and NaN handling, on double, int64 and int32 inputs */
static void
test_modes(void)
{
	static const char *modes[] = {"BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ", "LEAF", "LEAF", "LEAF", "LEAF"};
	static const int64_t xd[] = {5, 1};
	static const double xdbl[] = {5, 2, 1, NAN, -4};
	static const int64_t xi[] = {5, 2, 1, 0, -4};
	static const int32_t xi32[] = {5, 2, 1, 0, -4};
	static const int64_t yd[] = {5, 1};
	ox_tensor  *vals;
	static const double thr[] = {3, 2, -4, 0, 0, 0, 0};
	static const int64_t td[] = {7};

	/* 0: x > 3 ? leaf3(10) : 1;  1: x == 2 ? leaf4(20) : 2;  2: x != -4 ? leaf5(30) : leaf6(40) */
	for (int variant = 0; variant < 3; variant++)
	{
		kt_begin("TreeEnsembleRegressor", ML, 3);
		kt_attr_ints("nodes_treeids", 7, I64(0, 0, 0, 0, 0, 0, 0));
		kt_attr_ints("nodes_nodeids", 7, I64(0, 1, 2, 3, 4, 5, 6));
		kt_attr_ints("nodes_featureids", 7, I64(0, 0, 0, 0, 0, 0, 0));
		kt_attr_strings("nodes_modes", 7, modes);
		vals = kt_make_tensor(OX_DOUBLE, 1, td, thr);
		kt_attr_tensor("nodes_values_as_tensor", vals);
		kt_attr_ints("nodes_truenodeids", 7, I64(3, 4, 5, 0, 0, 0, 0));
		kt_attr_ints("nodes_falsenodeids", 7, I64(1, 2, 6, 0, 0, 0, 0));
		/* NaN: GT false, EQ false, NEQ true -> leaf 5 (missing tracks nothing) */
		kt_attr_ints("target_treeids", 4, I64(0, 0, 0, 0));
		kt_attr_ints("target_nodeids", 4, I64(3, 4, 5, 6));
		kt_attr_ints("target_ids", 4, I64(0, 0, 0, 0));
		kt_attr_floats("target_weights", 4, F32(10, 20, 30, 40));
		kt_attr_int("n_targets", 1);
		if (variant == 0)
			kt_input(OX_DOUBLE, 2, xd, xdbl);
		else if (variant == 1)
			kt_input(OX_INT64, 2, xd, xi);
		else
			kt_input(OX_INT32, 2, xd, xi32);
		RUN(1);
		kt.label = variant == 0 ? "modes, double input with NaN" : variant == 1 ? "modes, int64" : "modes, int32";
		kt_expect_f32(0, 2, yd, variant == 0 ? F32(10, 20, 30, 30, 40) : F32(10, 20, 30, 30, 40), 1e-6);
		kt_end();
	}

	/* missing_value_tracks_true sends NaN left; LEQ and LT */
	{
		static const char *m2[] = {"BRANCH_LEQ", "BRANCH_LT", "LEAF", "LEAF", "LEAF"};
		static const int64_t x2d[] = {2, 2};
		static const float x2[] = {NAN, 5, 9, NAN};
		static const int64_t y2d[] = {2, 1};

		kt_begin("TreeEnsembleRegressor", ML, 1);
		kt_attr_ints("nodes_treeids", 5, I64(0, 0, 0, 0, 0));
		kt_attr_ints("nodes_nodeids", 5, I64(0, 1, 2, 3, 4));
		kt_attr_ints("nodes_featureids", 5, I64(0, 1, 0, 0, 0));
		kt_attr_strings("nodes_modes", 5, m2);
		kt_attr_floats("nodes_values", 5, F32(1, 1, 0, 0, 0));
		kt_attr_ints("nodes_truenodeids", 5, I64(2, 3, 0, 0, 0));
		kt_attr_ints("nodes_falsenodeids", 5, I64(1, 4, 0, 0, 0));
		kt_attr_ints("nodes_missing_value_tracks_true", 5, I64(1, 0, 0, 0, 0));
		kt_attr_ints("target_treeids", 3, I64(0, 0, 0));
		kt_attr_ints("target_nodeids", 3, I64(2, 3, 4));
		kt_attr_ints("target_ids", 3, I64(0, 0, 0));
		kt_attr_floats("target_weights", 3, F32(1, 2, 3));
		kt_input_f32(2, x2d, x2);
		RUN(1);
		kt.label = "missing_value_tracks_true";
		/* row 0: NaN <= 1 -> true (tracks) -> 1; row 1: 9 <= 1 no -> NaN < 1 false -> 3 */
		kt_expect_f32(0, 2, y2d, F32(1, 3), 1e-6);
		kt_end();
	}
}

/* regression aggregates, base values, two targets, 1-D input */
static void
regressor_case(const char *agg, int n_targets, const char *post)
{
	kt_begin("TreeEnsembleRegressor", ML, 1);
	kt_attr_ints("nodes_treeids", 6, I64(0, 0, 0, 1, 1, 1));
	kt_attr_ints("nodes_nodeids", 6, I64(0, 1, 2, 0, 1, 2));
	kt_attr_ints("nodes_featureids", 6, I64(0, 0, 0, 1, 0, 0));
	kt_attr_strings("nodes_modes", 6, STRS("BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_LEQ", "LEAF", "LEAF"));
	kt_attr_floats("nodes_values", 6, F32(0, 0, 0, 0, 0, 0));
	kt_attr_ints("nodes_truenodeids", 6, I64(1, 0, 0, 1, 0, 0));
	kt_attr_ints("nodes_falsenodeids", 6, I64(2, 0, 0, 2, 0, 0));
	kt_attr_ints("target_treeids", 4, I64(0, 0, 1, 1));
	kt_attr_ints("target_nodeids", 4, I64(1, 2, 1, 2));
	kt_attr_ints("target_ids", 4, I64(0, 0, 0, n_targets - 1));
	kt_attr_floats("target_weights", 4, F32(1, 2, 4, 8));
	kt_attr_int("n_targets", n_targets);
	kt_attr_string("aggregate_function", agg);
	kt_attr_string("post_transform", post);
	if (n_targets == 1)
		kt_attr_floats("base_values", 1, F32(0.5f));
	else
		kt_attr_floats("base_values", 2, F32(0.5f, -1));
}

static void
test_regressor(void)
{
	static const int64_t xd[] = {2, 2};
	static const float x[] = {-1, -1, 1, 1};	/* row 0: leaves (1, 1); row 1: (2, 2) */
	static const int64_t y1[] = {2, 1};
	static const int64_t y2[] = {2, 2};
	static const int64_t x1d[] = {2};

	regressor_case("SUM", 1, "NONE");
	kt_input_f32(2, xd, x);
	RUN(1);
	kt.label = "regressor SUM";
	kt_expect_f32(0, 2, y1, F32(1 + 4 + 0.5f, 2 + 8 + 0.5f), 1e-6);
	kt_end();

	regressor_case("AVERAGE", 1, "NONE");
	kt_input_f32(2, xd, x);
	RUN(1);
	kt.label = "regressor AVERAGE";
	kt_expect_f32(0, 2, y1, F32(2.5f + 0.5f, 5 + 0.5f), 1e-6);
	kt_end();

	regressor_case("MIN", 1, "NONE");
	kt_input_f32(2, xd, x);
	RUN(1);
	kt.label = "regressor MIN";
	kt_expect_f32(0, 2, y1, F32(1.5f, 2.5f), 1e-6);
	kt_end();

	regressor_case("MAX", 1, "PROBIT");
	kt_input_f32(2, xd, x);
	RUN(1);
	kt.label = "regressor MAX, single target ignores all but PROBIT";
	kt_expect_f32(0, 2, y1, F32(NAN, NAN), 1e-6);	/* probit of 4.5 and 8.5 */
	kt_end();

	regressor_case("MAX", 1, "LOGISTIC");
	kt_input_f32(2, xd, x);
	RUN(1);
	kt.label = "regressor MAX, single target ignores LOGISTIC";
	kt_expect_f32(0, 2, y1, F32(4.5f, 8.5f), 1e-6);
	kt_end();

	/* two targets: row 0 scores target 0 only, so target 1 comes out 0 */
	regressor_case("SUM", 2, "NONE");
	kt_input_f32(2, xd, x);
	RUN(1);
	kt.label = "regressor two targets SUM";
	kt_expect_f32(0, 2, y2, F32(1 + 4 + 0.5f, 0, 2 + 0.5f, 8 - 1), 1e-6);
	kt_end();

	regressor_case("MAX", 2, "LOGISTIC");
	kt_input_f32(2, xd, x);
	RUN(1);
	kt.label = "regressor two targets MAX LOGISTIC";
	kt_expect_f32(0, 2, y2, F32(1 / (1 + expf(-4.5f)), 0.5f, 1 / (1 + expf(-2.5f)), 1 / (1 + expf(-7))), 1e-6);
	kt_end();

	regressor_case("SUM", 1, "NONE");
	kt_input_f32(1, x1d, F32(1, -1));
	RUN(1);
	kt.label = "regressor 1-D input is one row";
	kt_expect_f32(0, 2, ((const int64_t[]) {1, 1}), F32(2 + 4 + 0.5f), 1e-6);
	kt_end();

	regressor_case("SUM", 1, "NONE");
	kt_input_f32(2, ((const int64_t[]) {0, 2}), NULL);
	RUN(1);
	kt.label = "regressor zero rows";
	kt_expect_f32(0, 2, ((const int64_t[]) {0, 1}), NULL, 0);
	kt_end();
}

/* TreeEnsemble (opset 5) */
static void
v5_case(int post, bool member)
{
	static const int64_t one[] = {1};
	static const int64_t two[] = {2};
	static const int64_t three[] = {3};

	kt_begin("TreeEnsemble", ML, 5);
	kt_attr_int("n_targets", 3);
	kt_attr_int("aggregate_function", 1);
	kt_attr_int("post_transform", post);
	if (!member)
	{
		kt_attr_ints("nodes_featureids", 1, I64(0));
		kt_attr_ints("nodes_truenodeids", 1, I64(0));
		kt_attr_ints("nodes_falsenodeids", 1, I64(1));
		kt_attr_ints("nodes_trueleafs", 1, I64(1));
		kt_attr_ints("nodes_falseleafs", 1, I64(1));
		kt_attr_tensor("nodes_splits", kt_make_tensor(OX_FLOAT, 1, one, F32(1.0f)));
		kt_attr_tensor("nodes_modes", kt_make_tensor(OX_UINT8, 1, one, KEEP(uint8_t, 0)));
		kt_attr_ints("leaf_targetids", 2, I64(0, 2));
		kt_attr_tensor("leaf_weights", kt_make_tensor(OX_FLOAT, 1, two, F32(0.3f, 0.6f)));
		kt_attr_ints("tree_roots", 1, I64(0));
	}
	else
	{
		/* tree 0: x0 in {1, 4} ? leaf 0 : leaf 1; tree 1: a single leaf 2 */
		kt_attr_ints("nodes_featureids", 2, I64(0, 0));
		kt_attr_ints("nodes_truenodeids", 2, I64(0, 2));
		kt_attr_ints("nodes_falsenodeids", 2, I64(1, 2));
		kt_attr_ints("nodes_trueleafs", 2, I64(1, 1));
		kt_attr_ints("nodes_falseleafs", 2, I64(1, 1));
		kt_attr_tensor("nodes_splits", kt_make_tensor(OX_FLOAT, 1, two, F32(0, 0)));
		kt_attr_tensor("nodes_modes", kt_make_tensor(OX_UINT8, 1, two, KEEP(uint8_t, 6, 0)));
		kt_attr_tensor("membership_values", kt_make_tensor(OX_FLOAT, 1, three, F32(1, 4, NAN)));
		kt_attr_ints("leaf_targetids", 3, I64(0, 1, 2));
		kt_attr_tensor("leaf_weights", kt_make_tensor(OX_FLOAT, 1, three, F32(1, 2, 0.5f)));
		kt_attr_ints("tree_roots", 2, I64(0, 1));
	}
}

static void
test_tree_ensemble_v5(void)
{
	static const int64_t xd[] = {2, 1};
	static const int64_t yd[] = {2, 3};
	static const int64_t x3d[] = {3, 1};
	static const int64_t y3d[] = {3, 3};

	v5_case(0, false);
	kt_input_f32(2, xd, F32(0, 2));
	RUN(1);
	kt.label = "TreeEnsemble NONE";
	kt_expect_f32(0, 2, yd, F32(0.3f, 0, 0, 0, 0, 0.6f), 1e-6);
	kt_end();

	v5_case(2, false);
	kt_input_f32(2, xd, F32(0, 2));
	RUN(1);
	kt.label = "TreeEnsemble LOGISTIC (2, as the spec numbers it)";
	kt_expect_f32(0, 2, yd, F32(0.5744425f, 0.5f, 0.5f, 0.5f, 0.5f, 0.6456563f), 1e-5);
	kt_end();

	v5_case(0, true);
	kt_input(OX_DOUBLE, 2, x3d, ((const double[]) {4, 2, NAN}));
	RUN(1);
	kt.label = "TreeEnsemble MEMBER and a leaf tree, double";
	kt_expect_values(0, OX_DOUBLE, 2, y3d, ((const double[]) {1, 0, 0.5, 0, 2, 0.5, 0, 2, 0.5}), 1e-9);
	kt_end();

	v5_case(0, false);
	kt_input(OX_INT64, 2, xd, I64(0, 2));
	RUN(1);
	kt.label = "TreeEnsemble rejects int64 input";
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();
}

/* hostile models */
static void
bad_model(const char *label, const int64_t *truen, const int64_t *falsen, const int64_t *nodeids,
		  const char *mode0, int64_t class_id, ox_code want)
{
	const char **modes = STRS((char *) mode0, "LEAF", "LEAF");

	kt_begin("TreeEnsembleClassifier", ML, 1);
	kt_attr_ints("nodes_treeids", 3, I64(0, 0, 0));
	kt_attr_ints("nodes_nodeids", 3, nodeids);
	kt_attr_ints("nodes_featureids", 3, I64(0, 0, 0));
	kt_attr_strings("nodes_modes", 3, modes);
	kt_attr_floats("nodes_values", 3, F32(0, 0, 0));
	kt_attr_ints("nodes_truenodeids", 3, truen);
	kt_attr_ints("nodes_falsenodeids", 3, falsen);
	kt_attr_ints("class_treeids", 2, I64(0, 0));
	kt_attr_ints("class_nodeids", 2, I64(1, 2));
	kt_attr_ints("class_ids", 2, I64(0, class_id));
	kt_attr_floats("class_weights", 2, F32(1, 1));
	kt_attr_ints("classlabels_int64s", 2, I64(0, 1));
	kt_input_f32(2, x4_dims, x4);
	RUN(2);
	kt.label = label;
	kt_expect_error(want);
	kt_end();
}

static void
test_errors(void)
{
	static const char *cyc_modes[] = {"BRANCH_LEQ", "BRANCH_LEQ", "LEAF"};

	bad_model("child missing", I64(1, 0, 0), I64(9, 0, 0), I64(0, 1, 2), "BRANCH_LEQ", 1, OX_INVALID_MODEL);
	bad_model("duplicate node id", I64(1, 0, 0), I64(2, 0, 0), I64(0, 1, 1), "BRANCH_LEQ", 1, OX_INVALID_MODEL);
	bad_model("self loop", I64(0, 0, 0), I64(2, 0, 0), I64(0, 1, 2), "BRANCH_LEQ", 1, OX_INVALID_MODEL);
	bad_model("unknown mode", I64(1, 0, 0), I64(2, 0, 0), I64(0, 1, 2), "BRANCH_XX", 1, OX_UNSUPPORTED);
	bad_model("class id out of range", I64(1, 0, 0), I64(2, 0, 0), I64(0, 1, 2), "BRANCH_LEQ", 2, OX_INVALID_MODEL);

	/* a two-node cycle below the root */
	kt_begin("TreeEnsembleRegressor", ML, 1);
	kt_attr_ints("nodes_treeids", 3, I64(0, 0, 0));
	kt_attr_ints("nodes_nodeids", 3, I64(0, 1, 2));
	kt_attr_ints("nodes_featureids", 3, I64(0, 0, 0));
	kt_attr_strings("nodes_modes", 3, cyc_modes);
	kt_attr_floats("nodes_values", 3, F32(0, 0, 0));
	kt_attr_ints("nodes_truenodeids", 3, I64(1, 0, 0));
	kt_attr_ints("nodes_falsenodeids", 3, I64(2, 2, 0));
	kt_attr_ints("target_treeids", 1, I64(0));
	kt_attr_ints("target_nodeids", 1, I64(2));
	kt_attr_ints("target_ids", 1, I64(0));
	kt_attr_floats("target_weights", 1, F32(1));
	kt_input_f32(2, x4_dims, x4);
	RUN(1);
	kt.label = "cycle through the root";
	kt_expect_error(OX_INVALID_MODEL);
	kt_end();

	/* feature beyond the input width, rank 3 input, mismatched list lengths */
	regressor_case("SUM", 1, "NONE");
	kt_input_f32(2, x4_dims, x4);
	RUN(1);
	kt.label = "feature 1 of a one-column input";
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	regressor_case("SUM", 1, "NONE");
	kt_input_f32(3, ((const int64_t[]) {1, 2, 2}), F32(0, 0, 0, 0));
	RUN(1);
	kt.label = "rank 3 input";
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	regressor_case("MEDIAN", 1, "NONE");
	kt_input_f32(2, x4_dims, x4);
	RUN(1);
	kt.label = "unknown aggregate_function";
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	kt_begin("TreeEnsembleRegressor", ML, 1);
	stump();
	kt_attr_ints("target_treeids", 2, I64(0, 0));
	kt_attr_ints("target_nodeids", 2, I64(1, 9));
	kt_attr_ints("target_ids", 2, I64(0, 0));
	kt_attr_floats("target_weights", 2, F32(1, 2));
	kt_input_f32(2, x4_dims, x4);
	RUN(1);
	kt.label = "weight on a missing node";
	kt_expect_error(OX_INVALID_MODEL);
	kt_end();

	v5_case(0, false);
	kt.attrs[kt.n_attrs - 1].ints = (int64_t *) I64(5);	/* tree_roots out of range */
	kt_input_f32(2, ((const int64_t[]) {2, 1}), F32(0, 2));
	RUN(1);
	kt.label = "TreeEnsemble root out of range";
	kt_expect_error(OX_INVALID_MODEL);
	kt_end();
}

/* a larger forest: shape of iris_rf, checks the walk on many rows */
static void
test_forest_consistency(void)
{
	enum
	{
		TREES = 20, DEPTH = 6, NODES = (1 << (DEPTH + 1)) - 1, ROWS = 500
	};
	static int64_t treeids[TREES * NODES],
				nodeids[TREES * NODES],
				feat[TREES * NODES],
				tr[TREES * NODES],
				fl[TREES * NODES];
	static float vals[TREES * NODES];
	static const char *modes[TREES * NODES];
	static int64_t wt[TREES * NODES],
				wn[TREES * NODES],
				wc[TREES * NODES];
	static float ww[TREES * NODES];
	static float x[ROWS * 4];
	static float want[ROWS * 3];
	static int64_t want_label[ROWS];
	int			k = 0,
				nw = 0;
	int64_t		xd[] = {ROWS, 4};
	int64_t		zd[] = {ROWS, 3};
	uint32_t	seed = 12345;

#define RND() (seed = seed * 1103515245u + 12345u, (float) ((seed >> 8) & 0xffff) / 65536.0f)
	for (int t = 0; t < TREES; t++)
		for (int i = 0; i < NODES; i++, k++)
		{
			bool		leaf = i >= NODES / 2;

			treeids[k] = t;
			nodeids[k] = i;
			feat[k] = leaf ? 0 : (int64_t) (RND() * 4) % 4;
			vals[k] = leaf ? 0 : RND();
			modes[k] = leaf ? "LEAF" : "BRANCH_LEQ";
			tr[k] = leaf ? 0 : 2 * i + 1;
			fl[k] = leaf ? 0 : 2 * i + 2;
			if (leaf)
			{
				wt[nw] = t;
				wn[nw] = i;
				wc[nw] = (int64_t) (RND() * 3) % 3;
				ww[nw] = 1.0f / TREES;
				nw++;
			}
		}
	for (int i = 0; i < ROWS * 4; i++)
		x[i] = RND();
	/* the same forest walked by a plain recursive-free reference */
	memset(want, 0, sizeof(want));
	for (int r = 0; r < ROWS; r++)
	{
		int			best = 0;

		for (int t = 0; t < TREES; t++)
		{
			int			i = 0;

			while (i < NODES / 2)
				i = x[r * 4 + feat[t * NODES + i]] <= vals[t * NODES + i] ? 2 * i + 1 : 2 * i + 2;
			want[r * 3 + wc[t * (NODES - NODES / 2) + (i - NODES / 2)]] += 1.0f / TREES;
		}
		for (int c = 1; c < 3; c++)
			if (want[r * 3 + c] > want[r * 3 + best])
				best = c;
		want_label[r] = 10 + best;
	}
	kt_begin("TreeEnsembleClassifier", ML, 3);
	kt_attr_ints("nodes_treeids", k, treeids);
	kt_attr_ints("nodes_nodeids", k, nodeids);
	kt_attr_ints("nodes_featureids", k, feat);
	kt_attr_strings("nodes_modes", k, modes);
	kt_attr_floats("nodes_values", k, vals);
	kt_attr_ints("nodes_truenodeids", k, tr);
	kt_attr_ints("nodes_falsenodeids", k, fl);
	kt_attr_ints("class_treeids", nw, wt);
	kt_attr_ints("class_nodeids", nw, wn);
	kt_attr_ints("class_ids", nw, wc);
	kt_attr_floats("class_weights", nw, ww);
	kt_attr_ints("classlabels_int64s", 3, I64(10, 11, 12));
	kt_input_f32(2, xd, x);
	RUN_CLASSIFIER();
	kt.label = label_alone ? "forest of 20 trees, 500 rows, the label alone" : "forest of 20 trees, 500 rows";
	expect_scores(zd, want, 1e-5);
	kt_expect_i64(0, 1, (const int64_t[]) {ROWS}, want_label);
	kt_end();
#undef RND
}

/*
 * Missing-value tracking (LightGBM's and XGBoost's exports): the fast walks
 * take rows without NaN, and rows holding one go through the generic walk,
 * block by block.  Complete trees of depth 4 (the mask walk), 6 (the
 * complete-tree walk) and 10 (the lane walk), about a third of the branches
 * sending NaN to their true side, 300 rows of which some hold a NaN, and
 * each row alone, against a plain walk.
 */
static void
check_missing_forest(int depth, int rows)
{
	enum
	{
		TREES = 12, COLS = 5
	};
	int			nodes = (1 << (depth + 1)) - 1,
				leaves = (nodes + 1) / 2,
				total = TREES * nodes;
	int64_t    *ids = malloc(sizeof(int64_t) * (size_t) total * 6);
	int64_t    *treeids = ids,
			   *nodeids = ids + total,
			   *feat = ids + 2 * total,
			   *tr = ids + 3 * total,
			   *fl = ids + 4 * total,
			   *mvt = ids + 5 * total;
	float	   *vals = malloc(sizeof(float) * (size_t) total);
	const char **modes = malloc(sizeof(char *) * (size_t) total);
	int64_t    *wt = malloc(sizeof(int64_t) * (size_t) TREES * leaves * 2);
	int64_t    *wn = wt + TREES * leaves;
	float	   *ww = malloc(sizeof(float) * (size_t) TREES * leaves);
	float	   *x = malloc(sizeof(float) * (size_t) rows * COLS);
	float	   *want = malloc(sizeof(float) * (size_t) rows);
	int64_t    *zeros = calloc((size_t) TREES * leaves, sizeof(int64_t));
	int			k = 0,
				nw = 0;
	uint32_t	seed = 777u + (uint32_t) depth;
	char		label[96];

#define RND() (seed = seed * 1103515245u + 12345u, (float) ((seed >> 8) & 0xffff) / 65536.0f)
	for (int t = 0; t < TREES; t++)
		for (int i = 0; i < nodes; i++, k++)
		{
			bool		leaf = i >= nodes / 2;

			treeids[k] = t;
			nodeids[k] = i;
			feat[k] = leaf ? 0 : (int64_t) (RND() * COLS) % COLS;
			vals[k] = leaf ? 0 : RND();
			modes[k] = leaf ? "LEAF" : "BRANCH_LEQ";
			tr[k] = leaf ? 0 : 2 * i + 1;
			fl[k] = leaf ? 0 : 2 * i + 2;
			mvt[k] = !leaf && RND() < 0.35f;
			if (leaf)
			{
				wt[nw] = t;
				wn[nw] = i;
				ww[nw] = RND() - 0.5f;
				nw++;
			}
		}
	for (int i = 0; i < rows * COLS; i++)
		x[i] = RND();
	/* NaN in a few rows, in varying columns: blocks with and without */
	for (int r = 3; r < rows; r += 41)
		x[r * COLS + r % COLS] = NAN;
	for (int r = 0; r < rows; r++)
	{
		double		sum = 0;

		for (int t = 0; t < TREES; t++)
		{
			int			i = 0;

			while (i < nodes / 2)
			{
				int			n = t * nodes + i;
				float		v = x[r * COLS + feat[n]];
				bool		go_true = v <= vals[n] || (isnan(v) && mvt[n]);

				i = go_true ? 2 * i + 1 : 2 * i + 2;
			}
			sum += ww[t * leaves + (i - nodes / 2)];
		}
		want[r] = (float) sum;
	}
	/* all rows, then single rows: 3, 44 and 85 hold a NaN */
	for (int c = 0; c < 7; c++)
	{
		static const int single[] = {0, 0, 1, 3, 44, 85, 86};
		int			n = c == 0 ? rows : 1;
		int			first = single[c];
		int64_t		xd[] = {n, COLS};
		int64_t		yd[] = {n, 1};

		kt_begin("TreeEnsembleRegressor", ML, 3);
		kt_attr_ints("nodes_treeids", k, treeids);
		kt_attr_ints("nodes_nodeids", k, nodeids);
		kt_attr_ints("nodes_featureids", k, feat);
		kt_attr_strings("nodes_modes", k, modes);
		kt_attr_floats("nodes_values", k, vals);
		kt_attr_ints("nodes_truenodeids", k, tr);
		kt_attr_ints("nodes_falsenodeids", k, fl);
		kt_attr_ints("nodes_missing_value_tracks_true", k, mvt);
		kt_attr_ints("target_treeids", nw, wt);
		kt_attr_ints("target_nodeids", nw, wn);
		kt_attr_ints("target_ids", nw, zeros);
		kt_attr_floats("target_weights", nw, ww);
		kt_attr_int("n_targets", 1);
		kt_input_f32(2, xd, x + (size_t) first * COLS);
		RUN(1);
		snprintf(label, sizeof(label), "missing tracking, depth %d, %d row(s) from %d", depth, n, first);
		kt.label = label;
		kt_expect_f32(0, 2, yd, want + first, 1e-5);
		kt_end();
	}
#undef RND
	free(ids);
	free(vals);
	free(modes);
	free(wt);
	free(ww);
	free(x);
	free(want);
	free(zeros);
}

static void
test_missing_tracking(void)
{
	check_missing_forest(4, 300);
	check_missing_forest(6, 300);
	check_missing_forest(10, 300);
}

/*
 * Deep chains (taller than the fixed-step walk takes): the walk that stops
 * when no lane moves, BRANCH_GT, one target (dense sums), 5 trees (a
 * single row's trees fill one group of 4 lanes and one of 1), many rows and
 * a single row, against a plain walk.
 */
static void
test_deep_chains(void)
{
	enum
	{
		TREES = 5, DEPTH = 20, NODES = 2 * DEPTH + 1, ROWS = 37
	};
	static int64_t treeids[TREES * NODES],
				nodeids[TREES * NODES],
				feat[TREES * NODES],
				tr[TREES * NODES],
				fl[TREES * NODES];
	static float vals[TREES * NODES];
	static const char *modes[TREES * NODES];
	static int64_t wt[TREES * NODES],
				wn[TREES * NODES],
				wi[TREES * NODES];
	static float ww[TREES * NODES];
	static float x[ROWS * 4];
	static float want[ROWS];
	int			k = 0,
				nw = 0;
	uint32_t	seed = 777;

#define RND() (seed = seed * 1103515245u + 12345u, (float) ((seed >> 8) & 0xffff) / 65536.0f)
	/* internal node 2i: x > th goes to leaf 2i + 1, else to node 2i + 2; node 2 DEPTH is a leaf */
	for (int t = 0; t < TREES; t++)
		for (int i = 0; i < NODES; i++, k++)
		{
			bool		leaf = (i % 2) == 1 || i == NODES - 1;

			treeids[k] = t;
			nodeids[k] = i;
			feat[k] = leaf ? 0 : (t + i / 2) % 4;
			vals[k] = leaf ? 0 : 0.9f + 0.1f * RND();	/* most rows go deep */
			modes[k] = leaf ? "LEAF" : "BRANCH_GT";
			tr[k] = leaf ? 0 : i + 1;
			fl[k] = leaf ? 0 : i + 2;
			if (leaf)
			{
				wt[nw] = t;
				wn[nw] = i;
				wi[nw] = 0;
				ww[nw] = RND();
				nw++;
			}
		}
	for (int i = 0; i < ROWS * 4; i++)
		x[i] = RND();
	for (int r = 0; r < ROWS; r++)
	{
		float		s = 0;

		for (int t = 0; t < TREES; t++)
		{
			int			i = 0;

			while (!((i % 2) == 1 || i == NODES - 1))
				i = x[r * 4 + feat[t * NODES + i]] > vals[t * NODES + i] ? i + 1 : i + 2;
			for (int j = 0; j < nw; j++)
				if (wt[j] == t && wn[j] == i)
					s += ww[j];
		}
		want[r] = s;
	}
	for (int pass = 0; pass < 2; pass++)
	{
		int64_t		rows = pass == 0 ? ROWS : 1;
		int64_t		xd[] = {rows, 4};
		int64_t		yd[] = {rows, 1};

		kt_begin("TreeEnsembleRegressor", ML, 3);
		kt_attr_ints("nodes_treeids", k, treeids);
		kt_attr_ints("nodes_nodeids", k, nodeids);
		kt_attr_ints("nodes_featureids", k, feat);
		kt_attr_strings("nodes_modes", k, modes);
		kt_attr_floats("nodes_values", k, vals);
		kt_attr_ints("nodes_truenodeids", k, tr);
		kt_attr_ints("nodes_falsenodeids", k, fl);
		kt_attr_ints("target_treeids", nw, wt);
		kt_attr_ints("target_nodeids", nw, wn);
		kt_attr_ints("target_ids", nw, wi);
		kt_attr_floats("target_weights", nw, ww);
		kt_attr_int("n_targets", 1);
		/* the last row alone the second time */
		kt_input_f32(2, xd, pass == 0 ? x : x + (ROWS - 1) * 4);
		RUN(1);
		kt.label = pass == 0 ? "deep chains, 37 rows" : "deep chains, one row";
		kt_expect_f32(0, 2, yd, pass == 0 ? want : want + ROWS - 1, 0);
		kt_end();
	}
#undef RND
}

/*
 * Shallow trees over float rows in every branch mode, on values that hit
 * thresholds exactly and on NaN: the walk by comparison masks (AVX-512, one
 * row, at most 16 features), the complete-tree walk (batches, or 17
 * features) and the portable build (instruction set forced down), each
 * against a plain walk.  Tree t writes its leaf's id + 1 to target t, so
 * every tree's leaf is checked, not just a sum.  11 trees: one group of 8
 * lanes and a partial one; leaves appear above the bottom.
 */
enum
{
	SH_TREES = 11, SH_MAX_NODES = 127, SH_ROWS = 24
};

typedef struct shallow_forest
{
	int64_t		treeids[SH_TREES * SH_MAX_NODES],
				nodeids[SH_TREES * SH_MAX_NODES],
				feat[SH_TREES * SH_MAX_NODES],
				tr[SH_TREES * SH_MAX_NODES],
				fl[SH_TREES * SH_MAX_NODES];
	float		vals[SH_TREES * SH_MAX_NODES];
	const char *modes[SH_TREES * SH_MAX_NODES];
	int64_t		wt[SH_TREES * SH_MAX_NODES],
				wn[SH_TREES * SH_MAX_NODES],
				wi[SH_TREES * SH_MAX_NODES];
	float		ww[SH_TREES * SH_MAX_NODES];
	int			n,
				nw,
				next_id;
	uint32_t	seed;
} shallow_forest;

static uint32_t
sh_rand(shallow_forest *sf)
{
	sf->seed = sf->seed * 1103515245u + 12345u;
	return (sf->seed >> 8) & 0xffff;
}

/* a node of tree t with depth levels below it; returns its id in the tree */
static int
sh_node(shallow_forest *sf, int t, int depth, int nfeat, const char *mode)
{
	int			id = sf->next_id++;
	int			k = t * SH_MAX_NODES + id;

	sf->treeids[k] = t;
	sf->nodeids[k] = id;
	if (depth == 0 || (id > 0 && sh_rand(sf) % 5 == 0))
	{
		sf->modes[k] = "LEAF";
		sf->feat[k] = 0;
		sf->vals[k] = 0;
		sf->tr[k] = sf->fl[k] = 0;
		sf->wt[sf->nw] = t;
		sf->wn[sf->nw] = id;
		sf->wi[sf->nw] = t;
		sf->ww[sf->nw] = (float) (id + 1);
		sf->nw++;
		return id;
	}
	sf->modes[k] = mode;
	/* tree 0's root reads the last feature: the largest the masks take is 15 */
	sf->feat[k] = t == 0 && id == 0 ? nfeat - 1 : sh_rand(sf) % nfeat;
	sf->vals[k] = (float) (sh_rand(sf) % 5) * 0.25f;
	sf->tr[k] = sh_node(sf, t, depth - 1, nfeat, mode);
	sf->fl[k] = sh_node(sf, t, depth - 1, nfeat, mode);
	return id;
}

static bool
sh_branch(const char *mode, float x, float th)
{
	if (strcmp(mode, "BRANCH_LEQ") == 0)
		return x <= th;
	if (strcmp(mode, "BRANCH_LT") == 0)
		return x < th;
	if (strcmp(mode, "BRANCH_GTE") == 0)
		return x >= th;
	if (strcmp(mode, "BRANCH_GT") == 0)
		return x > th;
	if (strcmp(mode, "BRANCH_EQ") == 0)
		return x == th;
	return x != th;
}

static void
test_shallow_modes(void)
{
	static const char *mode_names[] = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"};
	static shallow_forest sf;
	static float x[SH_ROWS * 17];
	static float want[SH_ROWS * SH_TREES];
	nn_isa		hw = nn_conv_fast_isa();

	for (int m = 0; m < N_OF(mode_names); m++)
		for (int shape = 0; shape < 3; shape++)
		{
			/* depth 6 over 16 features, depth 3 over 16, depth 5 over 17 */
			int			depth = shape == 0 ? 6 : shape == 1 ? 3 : 5;
			int			nfeat = shape == 2 ? 17 : 16;
			int64_t		xd[] = {SH_ROWS, nfeat};
			int64_t		yd[] = {SH_ROWS, SH_TREES};

			memset(&sf, 0, sizeof(sf));
			sf.seed = 1000 + 10 * m + shape;
			for (int t = 0; t < SH_TREES; t++)
			{
				sf.next_id = 0;
				sh_node(&sf, t, depth, nfeat, mode_names[m]);
				sf.n = t * SH_MAX_NODES + sf.next_id;
			}
			for (int i = 0; i < SH_ROWS * nfeat; i++)
			{
				uint32_t	v = sh_rand(&sf) % 7;

				x[i] = v == 6 ? NAN : (float) v * 0.25f - 0.25f;
			}
			for (int r = 0; r < SH_ROWS; r++)
				for (int t = 0; t < SH_TREES; t++)
				{
					int			id = 0;
					int			base = t * SH_MAX_NODES;

					while (strcmp(sf.modes[base + id], "LEAF") != 0)
						id = sh_branch(sf.modes[base + id], x[r * nfeat + sf.feat[base + id]], sf.vals[base + id])
							? (int) sf.tr[base + id] : (int) sf.fl[base + id];
					want[r * SH_TREES + t] = (float) (id + 1);
				}
			for (int isa = 0; isa < 2; isa++)
			{
				if (isa == 1)
					nn_conv_fast_force_isa(NN_ISA_NONE);
				/* all rows at once, then each row alone */
				for (int r = -1; r < SH_ROWS; r++)
				{
					int64_t		one_xd[] = {1, nfeat};
					int64_t		one_yd[] = {1, SH_TREES};
					char		label[96];

					kt_begin("TreeEnsembleRegressor", ML, 3);
					/* node arrays with the unused slots of each tree skipped */
					{
						static int64_t ti[SH_TREES * SH_MAX_NODES],
									ni[SH_TREES * SH_MAX_NODES],
									fi[SH_TREES * SH_MAX_NODES],
									ti2[SH_TREES * SH_MAX_NODES],
									fi2[SH_TREES * SH_MAX_NODES];
						static float vi[SH_TREES * SH_MAX_NODES];
						static const char *mi[SH_TREES * SH_MAX_NODES];
						int			n = 0;

						for (int k = 0; k < SH_TREES * SH_MAX_NODES; k++)
							if (sf.modes[k])
							{
								ti[n] = sf.treeids[k];
								ni[n] = sf.nodeids[k];
								fi[n] = sf.feat[k];
								ti2[n] = sf.tr[k];
								fi2[n] = sf.fl[k];
								vi[n] = sf.vals[k];
								mi[n] = sf.modes[k];
								n++;
							}
						kt_attr_ints("nodes_treeids", n, ti);
						kt_attr_ints("nodes_nodeids", n, ni);
						kt_attr_ints("nodes_featureids", n, fi);
						kt_attr_strings("nodes_modes", n, mi);
						kt_attr_floats("nodes_values", n, vi);
						kt_attr_ints("nodes_truenodeids", n, ti2);
						kt_attr_ints("nodes_falsenodeids", n, fi2);
					}
					kt_attr_ints("target_treeids", sf.nw, sf.wt);
					kt_attr_ints("target_nodeids", sf.nw, sf.wn);
					kt_attr_ints("target_ids", sf.nw, sf.wi);
					kt_attr_floats("target_weights", sf.nw, sf.ww);
					kt_attr_int("n_targets", SH_TREES);
					if (r < 0)
						kt_input_f32(2, xd, x);
					else
						kt_input_f32(2, one_xd, x + r * nfeat);
					RUN(1);
					snprintf(label, sizeof(label), "shallow %s, depth %d, %d features, %s%s", mode_names[m],
							 depth, nfeat, r < 0 ? "all rows" : "one row", isa ? ", portable" : "");
					kt.label = keep(label, strlen(label) + 1);
					if (r < 0)
						kt_expect_f32(0, 2, yd, want, 0);
					else
						kt_expect_f32(0, 2, one_yd, want + r * SH_TREES, 0);
					kt_end();
				}
			}
			nn_conv_fast_force_isa(hw);
		}
}

int
main(void)
{
	for (int alone = 0; alone < 2; alone++)
	{
		label_alone = alone;
		test_classifier_binary();
		test_classifier_multiclass();
		test_forest_consistency();
	}
	label_alone = false;
	test_modes();
	test_regressor();
	test_tree_ensemble_v5();
	test_errors();
	test_missing_tracking();
	test_deep_chains();
	test_shallow_modes();
	return kt_summary();
}
