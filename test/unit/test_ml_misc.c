/*
 * test_ml_misc.c
 *	  The ai.onnx.ml kernels other than tree ensembles.  Expected values are
 *	  onnxruntime 1.32's answers on the same attributes (checked with
 *	  skl2onnx exports of LogisticRegression, LinearSVC, SVC, SVR, ...), or
 *	  arithmetic simple enough to do by hand.
 */
#include "kernel_test.h"

#define ML "ai.onnx.ml"
#define RUN(n) kt_run(ox_kernels_ml_misc, ox_kernels_ml_misc_count, n)

static _Alignas(16) char keep_pool[1 << 20];
static size_t keep_used;

/* literal arrays in static storage (the harness keeps the pointers) */
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
#define F64(...) KEEP(double, __VA_ARGS__)
#define STRS(...) ((const char **) KEEP(char *, __VA_ARGS__))
#define DIMS(...) I64(__VA_ARGS__)

static void
expect_strings(int i, int n, const char **want)
{
	const ox_tensor *t = kt_output(i);

	kt_expect_ok();
	if (kt.rc != OX_OK)
		return;
	if (kt.outputs[i].kind != OX_VALUE_TENSOR || t->dtype != OX_STRING || ox_tensor_numel(t) != n)
	{
		kt_fail("output %s%.0f is not %.0f strings", "", i, n);
		return;
	}
	for (int k = 0; k < n; k++)
		if (strcmp(((ox_string *) t->data)[k].data, want[k]) != 0)
			kt_fail("got string \"%s\" at %.0f%.0f", ((ox_string *) t->data)[k].data, k, 0);
}

/* ---------------- linear models ---------------- */

/*
 * A row scores the same bits alone as in a batch (automatic batching
 * promises results identical to the row-wise plan): 21 rows at once, then
 * each alone, for 1 to 6 coefficient rows, compared exactly.
 */
static void
test_linear_batch_invariant(void)
{
	uint32_t	seed = 4242;
	float		coef[6 * 30],
				icpt[6],
				x[21 * 30],
				batch[21 * 6];

	for (int i = 0; i < 6 * 30; i++)
		coef[i] = (float) ((seed = seed * 1103515245u + 12345u) >> 9) / (1 << 20) - 4.0f;
	for (int i = 0; i < 21 * 30; i++)
		x[i] = (float) ((seed = seed * 1103515245u + 12345u) >> 9) / (1 << 21) - 2.0f;
	for (int i = 0; i < 6; i++)
		icpt[i] = 0.3f * (float) i;
	for (int k = 1; k <= 6; k++)
	{
		int			bad = 0;

		for (int one = -1; one < 21; one++)
		{
			int			rows = one < 0 ? 21 : 1;

			kt_begin("LinearRegressor", ML, 1);
			kt_attr_floats("coefficients", k * 30, coef);
			kt_attr_floats("intercepts", k, icpt);
			kt_attr_int("targets", k);
			kt_input_f32(2, DIMS(rows, 30), one < 0 ? x : x + one * 30);
			RUN(1);
			kt.label = "LinearRegressor: a row alone and in a batch";
			kt_expect_ok();
			if (kt.rc == OX_OK)
			{
				const float *y = kt_output(0)->data;

				if (one < 0)
					memcpy(batch, y, sizeof(float) * 21 * k);
				else if (memcmp(y, batch + one * k, sizeof(float) * k) != 0)
					bad++;
			}
			kt_end();
		}
		if (bad)
		{
			printf("FAIL LinearRegressor with %d targets: %d rows differ alone and in a batch\n", k, bad);
			kt.failed++;
		}
		else
			kt.passed++;
	}
}

/*
 * Scores of many rows against a plain double reference: the blocked paths
 * (eight rows at a time for up to four outputs, the SGEMM above that) and
 * their tails; labels by the largest raw score.
 */
static void
test_linear_blocked(void)
{
	static const int row_counts[] = {1, 7, 8, 9, 21};
	uint32_t	seed = 12345;

	for (int k = 1; k <= 6; k++)
		for (int ri = 0; ri < 5; ri++)
		{
			int			rows = row_counts[ri],
						cols = k == 3 ? 1 : 13;
			int			nz = k == 1 ? 2 : k;
			float		coef[6 * 13],
						icpt[6],
						x[21 * 13],
						want[21 * 6];
			int64_t		labels[6],
						want_label[21];
			char		label[96];

			for (int i = 0; i < k * cols; i++)
				coef[i] = (float) ((seed = seed * 1103515245u + 12345u) >> 9) / (1 << 23) - 0.5f;
			for (int i = 0; i < rows * cols; i++)
				x[i] = (float) ((seed = seed * 1103515245u + 12345u) >> 9) / (1 << 22) - 1.0f;
			for (int i = 0; i < k; i++)
			{
				icpt[i] = 0.125f * (float) (i - 1);
				labels[i] = 100 + i;
			}
			labels[k == 1 ? 1 : 0] = k == 1 ? 101 : 100;
			for (int r = 0; r < rows; r++)
			{
				int			best = 0;

				for (int c = 0; c < k; c++)
				{
					double		sum = icpt[c];

					for (int f = 0; f < cols; f++)
						sum += (double) x[r * cols + f] * coef[c * cols + f];
					want[r * nz + (k == 1 ? 1 : c)] = (float) sum;
					if (k == 1)
						want[r * nz] = (float) (1 - sum);
					if (c > 0 && sum > want[r * nz + best])
						best = c;
				}
				want_label[r] = k == 1 ? (want[r * nz + 1] > 0 ? 101 : 100) : 100 + best;
			}
			kt_begin("LinearClassifier", ML, 1);
			kt_attr_floats("coefficients", k * cols, coef);
			kt_attr_floats("intercepts", k, icpt);
			kt_attr_ints("classlabels_ints", k == 1 ? 2 : k, labels);
			kt_input_f32(2, DIMS(rows, cols), x);
			RUN(2);
			snprintf(label, sizeof(label), "LinearClassifier %d outputs, %d rows, %d features", k, rows, cols);
			kt.label = label;
			kt_expect_i64(0, 1, DIMS(rows), want_label);
			if (k == 1)
			{
				/* binary NONE: [1 - s, s] */
				kt_expect_f32(1, 2, DIMS(rows, 2), want, 1e-5);
			}
			else
				kt_expect_f32(1, 2, DIMS(rows, k), want, 1e-5);
			kt_end();

			if (k > 1)
			{
				/* LOGISTIC, applied to all rows at once after the labels */
				float		wl[21 * 6];

				for (int i = 0; i < rows * k; i++)
					wl[i] = (float) (1.0 / (1.0 + exp(-(double) want[i])));
				kt_begin("LinearClassifier", ML, 1);
				kt_attr_floats("coefficients", k * cols, coef);
				kt_attr_floats("intercepts", k, icpt);
				kt_attr_ints("classlabels_ints", k, labels);
				kt_attr_string("post_transform", "LOGISTIC");
				kt_input_f32(2, DIMS(rows, cols), x);
				RUN(2);
				snprintf(label, sizeof(label), "LinearClassifier LOGISTIC %d outputs, %d rows", k, rows);
				kt.label = label;
				kt_expect_i64(0, 1, DIMS(rows), want_label);
				kt_expect_f32(1, 2, DIMS(rows, k), wl, 1e-5);
				kt_end();
			}

			kt_begin("LinearRegressor", ML, 1);
			kt_attr_floats("coefficients", k * cols, coef);
			kt_attr_floats("intercepts", k, icpt);
			kt_attr_int("targets", k);
			kt_input_f32(2, DIMS(rows, cols), x);
			RUN(1);
			snprintf(label, sizeof(label), "LinearRegressor %d targets, %d rows, %d features", k, rows, cols);
			kt.label = label;
			{
				float		wr[21 * 6];

				for (int r = 0; r < rows; r++)
					for (int c = 0; c < k; c++)
						wr[r * k + c] = want[r * nz + (k == 1 ? 1 : c)];
				kt_expect_f32(0, 2, DIMS(rows, k), wr, 1e-5);
			}
			kt_end();
		}
}


static void
test_linear(void)
{
	/* one coefficient row, two labels: scores [1 - s, s], label by s > 0 */
	kt_begin("LinearClassifier", ML, 1);
	kt_attr_floats("coefficients", 2, F32(0.5f, -0.25f));
	kt_attr_floats("intercepts", 1, F32(0.1f));
	kt_attr_ints("classlabels_ints", 2, I64(5, 7));
	kt_input_f32(2, DIMS(3, 2), F32(1, 2, -1, 0.5f, 0, 0));
	RUN(2);
	kt.label = "LinearClassifier binary NONE";
	kt_expect_i64(0, 1, DIMS(3), I64(7, 5, 7));
	kt_expect_f32(1, 2, DIMS(3, 2), F32(0.9f, 0.1f, 1.525f, -0.525f, 0.9f, 0.1f), 1e-5);
	kt_end();

	kt_begin("LinearClassifier", ML, 1);
	kt_attr_floats("coefficients", 2, F32(0.5f, -0.25f));
	kt_attr_floats("intercepts", 1, F32(0.1f));
	kt_attr_strings("classlabels_strings", 2, STRS("no", "yes"));
	kt_attr_string("post_transform", "LOGISTIC");
	kt_input(OX_INT64, 2, DIMS(2, 2), I64(1, 2, -1, 0));
	RUN(2);
	kt.label = "LinearClassifier binary LOGISTIC, int64 input, strings";
	expect_strings(0, 2, STRS("yes", "no"));
	kt_expect_f32(1, 2, DIMS(2, 2), F32(0.47502083f, 0.5249792f, 0.5986877f, 0.4013123f), 1e-5);
	kt_end();

	kt_begin("LinearClassifier", ML, 1);
	kt_attr_floats("coefficients", 6, F32(1, 0, 0, 1, -1, -1));
	kt_attr_floats("intercepts", 3, F32(0, 0, 0.5f));
	kt_attr_ints("classlabels_ints", 3, I64(10, 20, 30));
	kt_attr_string("post_transform", "SOFTMAX");
	kt_input(OX_DOUBLE, 1, DIMS(2), F64(1, 2));
	RUN(2);
	kt.label = "LinearClassifier multiclass SOFTMAX, 1-D double";
	kt_expect_i64(0, 1, DIMS(1), I64(20));
	{
		float		e0 = expf(1 - 2),
					e1 = 1,
					e2 = expf(-2.5f - 2);
		float		sum = e0 + e1 + e2;

		kt_expect_f32(1, 2, DIMS(1, 3), F32(e0 / sum, e1 / sum, e2 / sum), 1e-5);
	}
	kt_end();

	kt_begin("LinearClassifier", ML, 1);
	kt_attr_floats("coefficients", 3, F32(1, 0, 0));
	kt_attr_floats("intercepts", 1, F32(0));
	kt_attr_ints("classlabels_ints", 2, I64(0, 1));
	kt_input_f32(2, DIMS(1, 2), F32(1, 2));
	RUN(2);
	kt.label = "LinearClassifier coefficients do not fit the input";
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("LinearRegressor", ML, 1);
	kt_attr_floats("coefficients", 6, F32(0.1f, 0.2f, -0.3f, 0.05f, 0.1f, 0.1f));
	kt_attr_floats("intercepts", 2, F32(0.1f, 0.2f));
	kt_attr_int("targets", 2);
	kt_input_f32(2, DIMS(2, 3), F32(1, 2, 3, 0, 0, 0));
	RUN(1);
	kt.label = "LinearRegressor two targets";
	kt_expect_f32(0, 2, DIMS(2, 2), F32(-0.3f, 0.75f, 0.1f, 0.2f), 1e-5);
	kt_end();

	kt_begin("LinearRegressor", ML, 1);
	kt_attr_floats("coefficients", 2, F32(1, 1));
	kt_attr_floats("intercepts", 1, F32(0.5f));
	kt_attr_string("post_transform", "LOGISTIC");
	kt_input(OX_INT32, 2, DIMS(1, 2), KEEP(int32_t, 1, 2));
	RUN(1);
	kt.label = "LinearRegressor one target ignores LOGISTIC";
	kt_expect_f32(0, 2, DIMS(1, 1), F32(3.5f), 1e-6);
	kt_end();
}

/* ---------------- SVMs ---------------- */

/* a 3-class RBF SVC with two support vectors per class (libsvm layout) */
static void
svc3(bool proba)
{
	kt_begin("SVMClassifier", ML, 1);
	kt_attr_string("kernel_type", "RBF");
	kt_attr_floats("kernel_params", 3, F32(0.5f, 0, 3));
	kt_attr_ints("vectors_per_class", 3, I64(1, 1, 1));
	kt_attr_floats("support_vectors", 6, F32(0, 0, 1, 1, 2, 0));
	/* rows: (c1, c2 | c0, c2 | c0, c1) coefficient layout, one row per other class */
	kt_attr_floats("coefficients", 6, F32(1, 1, -1, 1, -1, -1));
	kt_attr_floats("rho", 3, F32(0.1f, -0.2f, 0.05f));
	kt_attr_ints("classlabels_ints", 3, I64(0, 1, 2));
	if (proba)
	{
		kt_attr_floats("prob_a", 3, F32(-2, -2, -2));
		kt_attr_floats("prob_b", 3, F32(0.1f, 0, -0.1f));
	}
}

static void
test_svm(void)
{
	float		k[3];
	float		x[2] = {0.5f, 0.25f};
	float		sv[3][2] = {{0, 0}, {1, 1}, {2, 0}};
	float		s01,
				s02,
				s12;

	for (int i = 0; i < 3; i++)
	{
		float		d0 = x[0] - sv[i][0],
					d1 = x[1] - sv[i][1];

		k[i] = expf(-0.5f * (d0 * d0 + d1 * d1));
	}
	/* pair (i, j): coef[j-1][i] * k_i + coef[i][j] * k_j + rho (libsvm's sv_coef) */
	s01 = 1 * k[0] + 1 * k[1] + 0.1f;
	s02 = 1 * k[0] + (-1) * k[2] - 0.2f;
	s12 = (-1) * k[1] + (-1) * k[2] + 0.05f;

	svc3(false);
	kt_input_f32(2, DIMS(1, 2), x);
	RUN(2);
	kt.label = "SVMClassifier RBF one-vs-one votes";
	{
		int			votes[3] = {0, 0, 0};
		int			best = 0;

		votes[s01 > 0 ? 0 : 1]++;
		votes[s02 > 0 ? 0 : 2]++;
		votes[s12 > 0 ? 1 : 2]++;
		for (int c = 1; c < 3; c++)
			if (votes[c] > votes[best])
				best = c;
		kt_expect_i64(0, 1, DIMS(1), I64(best));
	}
	kt_expect_f32(1, 2, DIMS(1, 3), F32(s01, s02, s12), 1e-5);
	kt_end();

	svc3(true);
	kt_input_f32(2, DIMS(1, 2), x);
	RUN(2);
	kt.label = "SVMClassifier Platt probabilities sum to one";
	kt_expect_ok();
	if (kt.rc == OX_OK)
	{
		const float *p = kt_output(1)->data;

		if (fabsf(p[0] + p[1] + p[2] - 1) > 1e-4f || p[0] < p[1] || p[0] < p[2])
			kt_fail("probabilities %s%g, %g", "", p[0], p[1]);
	}
	kt_end();

	/* binary linear-kernel SVC: scores [-s, s], label by the vote */
	kt_begin("SVMClassifier", ML, 1);
	kt_attr_string("kernel_type", "LINEAR");
	kt_attr_floats("kernel_params", 3, F32(0.1f, 0, 3));
	kt_attr_ints("vectors_per_class", 2, I64(1, 1));
	kt_attr_floats("support_vectors", 4, F32(1, 0, 0, 1));
	kt_attr_floats("coefficients", 2, F32(1, -1));
	kt_attr_floats("rho", 1, F32(0.5f));
	kt_attr_strings("classlabels_strings", 2, STRS("a", "b"));
	kt_input_f32(2, DIMS(2, 2), F32(1, 2, 3, 0));
	RUN(2);
	kt.label = "SVMClassifier binary, string labels";
	/* s = x0 - x1 + 0.5: row 0 -0.5 -> "b"; row 1 3.5 -> "a" */
	expect_strings(0, 2, STRS("b", "a"));
	kt_expect_f32(1, 2, DIMS(2, 2), F32(0.5f, -0.5f, -3.5f, 3.5f), 1e-5);
	kt_end();

	kt_begin("SVMRegressor", ML, 1);
	kt_attr_string("kernel_type", "POLY");
	kt_attr_floats("kernel_params", 3, F32(0.5f, 1, 2));
	kt_attr_int("n_supports", 2);
	kt_attr_floats("support_vectors", 4, F32(1, 0, 0, 2));
	kt_attr_floats("coefficients", 2, F32(2, -1));
	kt_attr_floats("rho", 1, F32(0.25f));
	kt_input_f32(2, DIMS(1, 2), F32(1, 1));
	RUN(1);
	kt.label = "SVMRegressor POLY";
	/* k0 = (0.5*1 + 1)^2 = 2.25, k1 = (0.5*2 + 1)^2 = 4 -> 4.5 - 4 + 0.25 */
	kt_expect_f32(0, 2, DIMS(1, 1), F32(0.75f), 1e-6);
	kt_end();

	kt_begin("SVMRegressor", ML, 1);
	kt_attr_string("kernel_type", "SIGMOID");
	kt_attr_floats("kernel_params", 3, F32(0.5f, 0, 0));
	kt_attr_int("n_supports", 1);
	kt_attr_int("one_class", 1);
	kt_attr_floats("support_vectors", 2, F32(1, 1));
	kt_attr_floats("coefficients", 1, F32(1));
	kt_attr_floats("rho", 1, F32(-0.5f));
	kt_input_f32(2, DIMS(2, 2), F32(1, 1, -1, -1));
	RUN(1);
	kt.label = "SVMRegressor one_class";
	/* tanh(1) - 0.5 > 0 -> 1; tanh(-1) - 0.5 < 0 -> -1 */
	kt_expect_f32(0, 2, DIMS(2, 1), F32(1, -1), 0);
	kt_end();

	kt_begin("SVMRegressor", ML, 1);
	kt_attr_floats("coefficients", 2, F32(1, 2));
	kt_attr_floats("rho", 1, F32(0));
	kt_input_f32(2, DIMS(1, 3), F32(1, 1, 1));
	RUN(1);
	kt.label = "SVMRegressor wrong feature count";
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	svc3(false);
	kt.attrs[1].n = 2;			/* kernel_params with 2 values */
	kt_input_f32(2, DIMS(1, 2), x);
	RUN(2);
	kt.label = "SVMClassifier bad kernel_params";
	kt_expect_error(OX_INVALID_MODEL);
	kt_end();
}

/* ---------------- SVM blocked kernels against a scalar reference ---------------- */

/* tests only (ml_misc_svm_kernels.c): pick the instruction-set path */
extern const char *ml_svm_force_isa(const char *name);

#define SVM_MAX_NV 33
#define SVM_MAX_NF 30
#define SVM_MAX_ROWS 64

static const char *const svm_kernel_names[] = {"LINEAR", "POLY", "RBF", "SIGMOID"};
static uint32_t svm_seed = 12345;
static float svm_sv[SVM_MAX_NV * SVM_MAX_NF];
static float svm_coef[2 * SVM_MAX_NV];
static float svm_rho[3];
static float svm_kp[3];
static float svm_pa[3];
static float svm_pb[3];
static int64_t svm_vpc[3];
static float svm_x[SVM_MAX_ROWS * SVM_MAX_NF];
static double svm_xd[SVM_MAX_ROWS * SVM_MAX_NF];
static float svm_want[SVM_MAX_ROWS * 3];
static float svm_first[3][SVM_MAX_ROWS * 3];
static int64_t svm_first_label[SVM_MAX_ROWS];

static float
svm_rand(void)
{
	svm_seed = svm_seed * 1103515245u + 12345u;
	return (float) ((svm_seed >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* one kernel value the plain way, in double */
static double
svm_ref_kernel(int kernel, const float *x, const float *sv, int nf)
{
	double		sum = 0;

	if (kernel == 2)
	{
		for (int f = 0; f < nf; f++)
		{
			double		d = (double) x[f] - sv[f];

			sum += d * d;
		}
		return exp(-(double) svm_kp[0] * sum);
	}
	for (int f = 0; f < nf; f++)
		sum += (double) x[f] * sv[f];
	if (kernel == 1)
		return pow((double) svm_kp[0] * sum + svm_kp[1], svm_kp[2]);
	if (kernel == 3)
		return tanh((double) svm_kp[0] * sum + svm_kp[1]);
	return sum;
}

static void
svm_attrs(const char *op, int kernel, int nv, int nf)
{
	kt_begin(op, ML, 1);
	kt_attr_string("kernel_type", svm_kernel_names[kernel]);
	kt_attr_floats("kernel_params", 3, svm_kp);
	kt_attr_floats("support_vectors", nv * nf, svm_sv);
	kt_attr_floats("rho", 3, svm_rho);
}

/*
 * Compare output `out` with the first instruction-set path's (exactly:
 * every path must give the same bits) or, on the first, keep it.
 */
static void
svm_same_as_first(int slot, int out, int64_t n, bool first)
{
	const ox_tensor *t;

	kt_expect_ok();
	if (kt.rc != OX_OK)
		return;
	t = kt_output(out);
	if (first)
		memcpy(svm_first[slot], t->data, sizeof(float) * (size_t) n);
	else if (memcmp(svm_first[slot], t->data, sizeof(float) * (size_t) n) != 0)
		kt_fail("%soutput %.0f differs from the portable path's (%.0f values)", "", out, n);
}

static void
svm_case(int kernel, int nv, int nf, int rows, bool first)
{
	int64_t		nn = (int64_t) rows * nf;
	int64_t		start[3];
	char		label[160];

	/* regressor: (float) (sum_v coef[v] * k(x, sv_v) + rho) */
	svm_attrs("SVMRegressor", kernel, nv, nf);
	kt_attr_int("n_supports", nv);
	kt_attr_floats("coefficients", nv, svm_coef);
	kt_input_f32(2, DIMS(rows, nf), svm_x);
	RUN(1);
	snprintf(label, sizeof(label), "SVMRegressor %s nv %d nf %d rows %d (%s path)",
			 svm_kernel_names[kernel], nv, nf, rows, first ? "portable" : "vector");
	kt.label = label;
	for (int r = 0; r < rows; r++)
	{
		double		sum = svm_rho[0];

		for (int v = 0; v < nv; v++)
			sum += svm_coef[v] * svm_ref_kernel(kernel, svm_x + r * nf, svm_sv + v * nf, nf);
		svm_want[r] = (float) sum;
	}
	kt_expect_f32(0, 2, DIMS(rows, 1), svm_want, 1e-4);
	svm_same_as_first(0, 0, rows, first);
	kt_end();

	/* the same from double input (converted to float first) */
	for (int64_t i = 0; i < nn; i++)
		svm_xd[i] = svm_x[i];
	svm_attrs("SVMRegressor", kernel, nv, nf);
	kt_attr_int("n_supports", nv);
	kt_attr_floats("coefficients", nv, svm_coef);
	kt_input(OX_DOUBLE, 2, DIMS(rows, nf), svm_xd);
	RUN(1);
	kt.label = label;
	svm_same_as_first(0, 0, rows, false);
	kt_end();

	/* three classes, one vs one: pair decision values and votes */
	svm_vpc[0] = nv / 3;
	svm_vpc[1] = (nv - svm_vpc[0]) / 2;
	svm_vpc[2] = nv - svm_vpc[0] - svm_vpc[1];
	start[0] = 0;
	start[1] = svm_vpc[0];
	start[2] = svm_vpc[0] + svm_vpc[1];
	svm_attrs("SVMClassifier", kernel, nv, nf);
	kt_attr_ints("vectors_per_class", 3, svm_vpc);
	kt_attr_floats("coefficients", 2 * nv, svm_coef);
	kt_attr_ints("classlabels_ints", 3, I64(0, 1, 2));
	kt_input_f32(2, DIMS(rows, nf), svm_x);
	RUN(2);
	snprintf(label, sizeof(label), "SVMClassifier %s nv %d nf %d rows %d (%s path)",
			 svm_kernel_names[kernel], nv, nf, rows, first ? "portable" : "vector");
	kt.label = label;
	for (int r = 0; r < rows; r++)
	{
		int			idx = 0;

		for (int i = 0; i < 2; i++)
			for (int j = i + 1; j < 3; j++, idx++)
			{
				double		sum = svm_rho[idx];

				for (int m = 0; m < svm_vpc[i]; m++)
					sum += svm_coef[(j - 1) * nv + start[i] + m] *
						svm_ref_kernel(kernel, svm_x + r * nf, svm_sv + (start[i] + m) * nf, nf);
				for (int m = 0; m < svm_vpc[j]; m++)
					sum += svm_coef[i * nv + start[j] + m] *
						svm_ref_kernel(kernel, svm_x + r * nf, svm_sv + (start[j] + m) * nf, nf);
				svm_want[r * 3 + idx] = (float) sum;
			}
	}
	kt_expect_f32(1, 2, DIMS(rows, 3), svm_want, 1e-4);
	svm_same_as_first(1, 1, rows * 3, first);
	if (kt.rc == OX_OK)
	{
		const int64_t *lab = kt_output(0)->data;

		if (first)
			memcpy(svm_first_label, lab, sizeof(int64_t) * (size_t) rows);
		else if (memcmp(svm_first_label, lab, sizeof(int64_t) * (size_t) rows) != 0)
			kt_fail("%slabels differ from the portable path's%.0f%.0f", "", 0, 0);
	}
	kt_end();

	/* with Platt probabilities: every path the same */
	svm_attrs("SVMClassifier", kernel, nv, nf);
	kt_attr_ints("vectors_per_class", 3, svm_vpc);
	kt_attr_floats("coefficients", 2 * nv, svm_coef);
	kt_attr_ints("classlabels_ints", 3, I64(0, 1, 2));
	kt_attr_floats("prob_a", 3, svm_pa);
	kt_attr_floats("prob_b", 3, svm_pb);
	kt_input(OX_DOUBLE, 2, DIMS(rows, nf), svm_xd);
	RUN(2);
	kt.label = label;
	svm_same_as_first(2, 1, rows * 3, first);
	kt_end();
}

static void
test_svm_blocked(void)
{
	static const int nvs[] = {1, 7, 17, 33};
	static const int nfs[] = {1, 3, 30};
	static const int rowss[] = {1, 5, 64};
	static const char *const isas[] = {"c", "avx2", "avx512"};
	const char *prev = NULL;

	for (int kernel = 0; kernel < 4; kernel++)
		for (int a = 0; a < 4; a++)
			for (int b = 0; b < 3; b++)
				for (int c = 0; c < 3; c++)
				{
					int			nv = nvs[a],
								nf = nfs[b],
								rows = rowss[c];

					for (int i = 0; i < nv * nf; i++)
						svm_sv[i] = svm_rand();
					for (int i = 0; i < 2 * nv; i++)
						svm_coef[i] = svm_rand();
					for (int i = 0; i < rows * nf; i++)
						svm_x[i] = svm_rand();
					for (int i = 0; i < 3; i++)
					{
						svm_rho[i] = 0.1f * svm_rand();
						svm_pa[i] = -1 - svm_rand();
						svm_pb[i] = 0.1f * svm_rand();
					}
					/* gamma about 1 / features keeps RBF values away from 0 */
					svm_kp[0] = (1.5f + svm_rand()) / (float) nf;
					svm_kp[1] = 0.5f * svm_rand();
					svm_kp[2] = (float) (2 + (a + b) % 2);
					for (int s = 0; s < 3; s++)
					{
						const char *was = ml_svm_force_isa(isas[s]);

						if (!was)
							continue;
						if (!prev)
							prev = was;
						svm_case(kernel, nv, nf, rows, s == 0);
					}
				}
	if (prev)
		ml_svm_force_isa(prev);
}

/* ---------------- per-element transforms ---------------- */

static void
test_transforms(void)
{
	kt_begin("Scaler", ML, 1);
	kt_attr_floats("offset", 3, F32(1, 2, 3));
	kt_attr_floats("scale", 3, F32(0.5f, 2, -1));
	kt_input(OX_INT64, 2, DIMS(2, 3), I64(1, 2, 3, 3, 4, 5));
	RUN(1);
	kt.label = "Scaler int64";
	kt_expect_f32(0, 2, DIMS(2, 3), F32(0, 0, 0, 1, 4, -2), 1e-6);
	kt_end();

	kt_begin("Scaler", ML, 1);
	kt_attr_floats("offset", 1, F32(1));
	kt_attr_floats("scale", 1, F32(0.5f));
	kt_input(OX_DOUBLE, 1, DIMS(3), F64(1, 3, 5));
	RUN(1);
	kt.label = "Scaler broadcast double";
	kt_expect_f32(0, 1, DIMS(3), F32(0, 1, 2), 1e-6);
	kt_end();

	/* rows of features: one offset per feature and no scale, then one offset and a scale each */
	kt_begin("Scaler", ML, 1);
	kt_attr_floats("offset", 2, F32(1, -2));
	kt_input_f32(2, DIMS(3, 2), F32(1, 2, 3, 4, -5, 0.5f));
	RUN(1);
	kt.label = "Scaler offsets, no scale, three rows";
	kt_expect_f32(0, 2, DIMS(3, 2), F32(0, 4, 2, 6, -6, 2.5f), 1e-6);
	kt_end();

	kt_begin("Scaler", ML, 1);
	kt_attr_floats("offset", 1, F32(1));
	kt_attr_floats("scale", 3, F32(2, -1, 0.5f));
	kt_input_f32(2, DIMS(2, 3), F32(1, 2, 3, 4, 5, 7));
	RUN(1);
	kt.label = "Scaler one offset, a scale per feature";
	kt_expect_f32(0, 2, DIMS(2, 3), F32(0, -1, 1, 6, -4, 3), 1e-6);
	kt_end();

	kt_begin("Scaler", ML, 1);
	kt_attr_floats("offset", 2, F32(1, 2));
	kt_input_f32(2, DIMS(1, 3), F32(1, 2, 3));
	RUN(1);
	kt.label = "Scaler offset length mismatch";
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("Normalizer", ML, 1);
	kt_attr_string("norm", "L2");
	kt_input_f32(2, DIMS(2, 2), F32(3, 4, 0, 0));
	RUN(1);
	kt.label = "Normalizer L2 (zero row untouched)";
	kt_expect_f32(0, 2, DIMS(2, 2), F32(0.6f, 0.8f, 0, 0), 1e-6);
	kt_end();

	kt_begin("Normalizer", ML, 1);
	kt_attr_string("norm", "L1");
	kt_input_f32(2, DIMS(2, 3), F32(1, -2, 1, 0.5f, 0.25f, 0.25f));
	RUN(1);
	kt.label = "Normalizer L1 float rows";
	kt_expect_f32(0, 2, DIMS(2, 3), F32(0.25f, -0.5f, 0.25f, 0.5f, 0.25f, 0.25f), 1e-6);
	kt_end();

	kt_begin("Normalizer", ML, 1);
	kt_attr_string("norm", "L1");
	kt_input(OX_INT32, 2, DIMS(1, 3), KEEP(int32_t, 1, -2, 1));
	RUN(1);
	kt.label = "Normalizer L1 int32";
	kt_expect_f32(0, 2, DIMS(1, 3), F32(0.25f, -0.5f, 0.25f), 1e-6);
	kt_end();

	kt_begin("Normalizer", ML, 1);
	kt_attr_string("norm", "MAX");
	kt_input_f32(2, DIMS(2, 3), F32(1, -2, 4, -1, -5, -2));
	RUN(1);
	kt.label = "Normalizer MAX (signed maximum)";
	kt_expect_f32(0, 2, DIMS(2, 3), F32(0.25f, -0.5f, 1, 1, 5, 2), 1e-6);
	kt_end();

	kt_begin("Normalizer", ML, 1);
	kt_attr_string("norm", "L3");
	kt_input_f32(2, DIMS(1, 1), F32(1));
	RUN(1);
	kt.label = "Normalizer unknown norm";
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	kt_begin("Binarizer", ML, 1);
	kt_attr_float("threshold", 0.5f);
	kt_input_f32(2, DIMS(1, 3), F32(0.2f, 0.5f, 0.7f));
	RUN(1);
	kt.label = "Binarizer float";
	kt_expect_f32(0, 2, DIMS(1, 3), F32(0, 0, 1), 0);
	kt_end();

	kt_begin("Binarizer", ML, 1);
	kt_attr_float("threshold", 1.5f);
	kt_input(OX_INT64, 1, DIMS(4), I64(0, 1, 2, 3));
	RUN(1);
	kt.label = "Binarizer int64";
	kt_expect_i64(0, 1, DIMS(4), I64(0, 0, 1, 1));
	kt_end();

	kt_begin("Imputer", ML, 1);
	kt_attr_floats("imputed_value_floats", 3, F32(1, 2, 3));
	kt_attr_float("replaced_value_float", NAN);
	kt_input_f32(2, DIMS(2, 3), F32(NAN, 5, NAN, 1, NAN, 0));
	RUN(1);
	kt.label = "Imputer NaN";
	kt_expect_f32(0, 2, DIMS(2, 3), F32(1, 5, 3, 1, 2, 0), 0);
	kt_end();

	kt_begin("Imputer", ML, 1);
	kt_attr_ints("imputed_value_int64s", 1, I64(9));
	kt_attr_int("replaced_value_int64", -1);
	kt_input(OX_INT64, 2, DIMS(2, 2), I64(-1, 5, 3, -1));
	RUN(1);
	kt.label = "Imputer int64 broadcast";
	kt_expect_i64(0, 2, DIMS(2, 2), I64(9, 5, 3, 9));
	kt_end();

	/* a value that is not NaN replaced feature by feature, in double and int32 */
	kt_begin("Imputer", ML, 1);
	kt_attr_floats("imputed_value_floats", 2, F32(7, -7));
	kt_attr_float("replaced_value_float", 0.0f);
	kt_input(OX_DOUBLE, 2, DIMS(3, 2), F64(0, 1.5, 2.5, 0, 0, 0));
	RUN(1);
	kt.label = "Imputer zeros per feature, double";
	kt_expect_values(0, OX_DOUBLE, 2, DIMS(3, 2), F64(7, 1.5, 2.5, -7, 7, -7), 0);
	kt_end();

	kt_begin("Imputer", ML, 1);
	kt_attr_ints("imputed_value_int64s", 3, I64(10, 20, 30));
	kt_attr_int("replaced_value_int64", 4);
	kt_input(OX_INT32, 2, DIMS(2, 3), KEEP(int32_t, 4, 1, 4, 2, 4, 3));
	RUN(1);
	kt.label = "Imputer per feature, int32";
	kt_expect_values(0, OX_INT32, 2, DIMS(2, 3), KEEP(int32_t, 10, 1, 30, 2, 20, 3), 0);
	kt_end();

	kt_begin("Imputer", ML, 1);
	kt_attr_floats("imputed_value_floats", 2, F32(1, 2));
	kt_input_f32(2, DIMS(1, 3), F32(0, 0, 0));
	RUN(1);
	kt.label = "Imputer value count mismatch";
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();
}

/* ---------------- encoders ---------------- */

static void
test_encoders(void)
{
	kt_begin("LabelEncoder", ML, 1);
	kt_attr_strings("classes_strings", 3, STRS("a", "b", "c"));
	kt_attr_int("default_int64", 42);
	kt_input_strings(1, DIMS(4), STRS("b", "c", "zz", "a"));
	RUN(1);
	kt.label = "LabelEncoder-1 string to index";
	kt_expect_i64(0, 1, DIMS(4), I64(1, 2, 42, 0));
	kt_end();

	kt_begin("LabelEncoder", ML, 1);
	kt_attr_strings("classes_strings", 3, STRS("a", "b", "c"));
	kt_attr_string("default_string", "none");
	kt_input(OX_INT64, 1, DIMS(4), I64(2, 0, 7, -1));
	RUN(1);
	kt.label = "LabelEncoder-1 index to string";
	expect_strings(0, 4, STRS("c", "a", "none", "none"));
	kt_end();

	kt_begin("LabelEncoder", ML, 2);
	kt_attr_ints("keys_int64s", 3, I64(1, 1, 2));
	kt_attr_ints("values_int64s", 3, I64(10, 11, 20));
	kt_input(OX_INT64, 2, DIMS(1, 3), I64(1, 2, 3));
	RUN(1);
	kt.label = "LabelEncoder-2 int64, duplicate key keeps the first";
	kt_expect_i64(0, 2, DIMS(1, 3), I64(10, 20, -1));
	kt_end();

	kt_begin("LabelEncoder", ML, 2);
	kt_attr_floats("keys_floats", 3, F32(0.5f, NAN, 2));
	kt_attr_floats("values_floats", 3, F32(1.5f, -1, 3));
	kt_attr_float("default_float", 7);
	kt_input_f32(1, DIMS(4), F32(0.5f, NAN, 2, 3));
	RUN(1);
	kt.label = "LabelEncoder-2 float (NaN never matches before opset 4)";
	kt_expect_f32(0, 1, DIMS(4), F32(1.5f, 7, 3, 7), 0);
	kt_end();

	kt_begin("LabelEncoder", ML, 4);
	kt_attr_tensor("keys_tensor", kt_make_tensor(OX_FLOAT, 1, DIMS(3), F32(0.5f, NAN, 2)));
	kt_attr_tensor("values_tensor", kt_make_tensor(OX_DOUBLE, 1, DIMS(3), F64(1.5, -1, 3)));
	kt_attr_tensor("default_tensor", kt_make_tensor(OX_DOUBLE, 1, DIMS(1), F64(7)));
	kt_input_f32(1, DIMS(4), F32(0.5f, NAN, 2, 3));
	RUN(1);
	kt.label = "LabelEncoder-4 tensors, NaN key";
	kt_expect_values(0, OX_DOUBLE, 1, DIMS(4), F64(1.5, -1, 3, 7), 0);
	kt_end();

	kt_begin("LabelEncoder", ML, 2);
	kt_attr_strings("keys_strings", 2, STRS("x", "y"));
	kt_attr_ints("values_int64s", 3, I64(1, 2, 3));
	kt_input_strings(1, DIMS(1), STRS("x"));
	RUN(1);
	kt.label = "LabelEncoder keys and values differ in length";
	kt_expect_error(OX_INVALID_MODEL);
	kt_end();

	kt_begin("LabelEncoder", ML, 2);
	kt_attr_strings("keys_strings", 2, STRS("x", "y"));
	kt_attr_ints("values_int64s", 2, I64(1, 2));
	kt_input(OX_INT64, 1, DIMS(1), I64(1));
	RUN(1);
	kt.label = "LabelEncoder input type differs from keys";
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("OneHotEncoder", ML, 1);
	kt_attr_ints("cats_int64s", 3, I64(1, 3, 5));
	kt_input(OX_INT64, 2, DIMS(2, 2), I64(1, 5, 2, 3));
	RUN(1);
	kt.label = "OneHotEncoder int64";
	kt_expect_f32(0, 3, DIMS(2, 2, 3), F32(1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0), 0);
	kt_end();

	/*
	 * The direct table (categories spanning few values) and the search (a
	 * wide span) give the same rows: negative categories, values just
	 * outside the span on both sides, far outside (the table index would
	 * wrap), float input truncated toward zero, NaN read as 0
	 */
	for (int wide = 0; wide < 2; wide++)
	{
		int64_t		cats[] = {-3, 0, 7, wide ? INT64_C(1) << 40 : 9};
		float		in[] = {-3.0f, -4.0f, 7.9f, -0.5f, 10.0f, NAN, 1e30f, -1e30f};
		float		want[8 * 4] = {0};

		want[0 * 4 + 0] = 1;	/* -3 */
		want[2 * 4 + 2] = 1;	/* 7.9 -> 7 */
		want[3 * 4 + 1] = 1;	/* -0.5 -> 0 */
		want[5 * 4 + 1] = 1;	/* NaN -> 0 */
		kt_begin("OneHotEncoder", ML, 1);
		kt_attr_ints("cats_int64s", 4, cats);
		kt_input_f32(1, DIMS(8), in);
		RUN(1);
		kt.label = wide ? "OneHotEncoder float input, wide span (search)" : "OneHotEncoder float input, table";
		kt_expect_f32(0, 2, DIMS(8, 4), want, 0);
		kt_end();
	}

	kt_begin("OneHotEncoder", ML, 1);
	kt_attr_strings("cats_strings", 3, STRS("a", "b", "c"));
	kt_attr_int("zeros", 0);
	kt_input_strings(1, DIMS(2), STRS("c", "q"));
	RUN(1);
	kt.label = "OneHotEncoder unknown category with zeros=0";
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("CategoryMapper", ML, 1);
	kt_attr_strings("cats_strings", 2, STRS("a", "b"));
	kt_attr_ints("cats_int64s", 2, I64(10, 20));
	kt_attr_int("default_int64", -5);
	kt_input_strings(1, DIMS(3), STRS("b", "x", "a"));
	RUN(1);
	kt.label = "CategoryMapper string to int";
	kt_expect_i64(0, 1, DIMS(3), I64(20, -5, 10));
	kt_end();

	kt_begin("CategoryMapper", ML, 1);
	kt_attr_strings("cats_strings", 2, STRS("a", "b"));
	kt_attr_ints("cats_int64s", 2, I64(10, 20));
	kt_input(OX_INT64, 2, DIMS(2, 2), I64(20, 10, 3, 20));
	RUN(1);
	kt.label = "CategoryMapper int to string";
	expect_strings(0, 4, STRS("b", "a", "_Unused", "b"));
	kt_end();
}

/* ---------------- feature plumbing ---------------- */

static void
test_features(void)
{
	kt_begin("ArrayFeatureExtractor", ML, 1);
	kt_input_f32(2, DIMS(2, 3), F32(1, 2, 3, 4, 5, 6));
	kt_input(OX_INT64, 1, DIMS(2), I64(2, 0));
	RUN(1);
	kt.label = "ArrayFeatureExtractor 2-D";
	kt_expect_f32(0, 2, DIMS(2, 2), F32(3, 1, 6, 4), 0);
	kt_end();

	kt_begin("ArrayFeatureExtractor", ML, 1);
	kt_input_strings(1, DIMS(3), STRS("a", "b", "c"));
	kt_input(OX_INT64, 1, DIMS(1), I64(1));
	RUN(1);
	kt.label = "ArrayFeatureExtractor 1-D strings";
	expect_strings(0, 1, STRS("b"));
	kt_end();

	kt_begin("ArrayFeatureExtractor", ML, 1);
	kt_input_f32(2, DIMS(2, 3), F32(1, 2, 3, 4, 5, 6));
	kt_input(OX_INT64, 1, DIMS(1), I64(3));
	RUN(1);
	kt.label = "ArrayFeatureExtractor index out of range";
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("FeatureVectorizer", ML, 1);
	kt_attr_ints("inputdimensions", 3, I64(2, 3, 1));
	kt_input_f32(2, DIMS(2, 2), F32(1, 2, 3, 4));
	kt_input(OX_INT64, 2, DIMS(2, 2), I64(5, 6, 7, 8));
	kt_input(OX_DOUBLE, 2, DIMS(2, 1), F64(9.5, 10.5));
	RUN(1);
	kt.label = "FeatureVectorizer pads and concatenates";
	kt_expect_f32(0, 2, DIMS(2, 6), F32(1, 2, 5, 6, 0, 9.5f, 3, 4, 7, 8, 0, 10.5f), 0);
	kt_end();

	kt_begin("FeatureVectorizer", ML, 1);
	kt_attr_ints("inputdimensions", 2, I64(2, 1));
	kt_input_f32(2, DIMS(2, 3), F32(1, 2, 3, 4, 5, 6));
	kt_input_f32(2, DIMS(2, 1), F32(7, 8));
	RUN(1);
	kt.label = "FeatureVectorizer float rows wider than their dimension";
	kt_expect_f32(0, 2, DIMS(2, 3), F32(1, 2, 7, 4, 5, 8), 0);
	kt_end();

	kt_begin("FeatureVectorizer", ML, 1);
	kt_attr_ints("inputdimensions", 2, I64(1, 1));
	kt_input_f32(2, DIMS(2, 1), F32(1, 2));
	kt_input_f32(2, DIMS(3, 1), F32(1, 2, 3));
	RUN(1);
	kt.label = "FeatureVectorizer row counts differ";
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();
}

/* ---------------- maps and sequences ---------------- */

static ox_value *
map_input(ox_dtype kdt, ox_dtype vdt, int n)
{
	ox_value   *v = kt_input_value();
	int64_t		d[1] = {n};

	v->kind = OX_VALUE_MAP;
	ox_tensor_alloc(&v->map_keys, kdt, 1, d, NULL);
	ox_tensor_alloc(&v->map_values, vdt, 1, d, NULL);
	return v;
}

static void
set_str(ox_tensor *t, int i, const char *s)
{
	((ox_string *) t->data)[i].data = strdup(s);
	((ox_string *) t->data)[i].len = strlen(s);
}

static void
test_maps(void)
{
	ox_value   *m;

	kt_begin("ZipMap", ML, 1);
	kt_attr_strings("classlabels_strings", 2, STRS("a", "b"));
	kt_input_f32(2, DIMS(2, 2), F32(0.1f, 0.9f, 0.5f, 0.5f));
	RUN(1);
	kt.label = "ZipMap strings";
	kt_expect_ok();
	if (kt.rc == OX_OK)
	{
		ox_value   *seq = &kt.outputs[0];

		if (seq->kind != OX_VALUE_SEQUENCE || seq->seq_len != 2 ||
			seq->seq_items[1].kind != OX_VALUE_MAP ||
			strcmp(((ox_string *) seq->seq_items[1].map_keys.data)[1].data, "b") != 0 ||
			((float *) seq->seq_items[0].map_values.data)[1] != 0.9f)
			kt_fail("sequence of maps is wrong%s%.0f%.0f", "", 0, 0);
	}
	kt_end();

	kt_begin("ZipMap", ML, 1);
	kt_attr_ints("classlabels_int64s", 3, I64(10, 20, 30));
	kt_input_f32(2, DIMS(1, 2), F32(0.1f, 0.9f));
	RUN(1);
	kt.label = "ZipMap label count mismatch";
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("DictVectorizer", ML, 1);
	kt_attr_strings("string_vocabulary", 3, STRS("a", "b", "c"));
	m = map_input(OX_STRING, OX_FLOAT, 2);
	set_str(&m->map_keys, 0, "c");
	set_str(&m->map_keys, 1, "a");
	((float *) m->map_values.data)[0] = 1.5f;
	((float *) m->map_values.data)[1] = 2;
	RUN(1);
	kt.label = "DictVectorizer string keys";
	kt_expect_f32(0, 2, DIMS(1, 3), F32(2, 0, 1.5f), 0);
	kt_end();

	kt_begin("DictVectorizer", ML, 1);
	kt_attr_ints("int64_vocabulary", 3, I64(3, 1, 2));
	m = map_input(OX_INT64, OX_DOUBLE, 2);
	((int64_t *) m->map_keys.data)[0] = 1;
	((int64_t *) m->map_keys.data)[1] = 7;
	((double *) m->map_values.data)[0] = 1.5;
	((double *) m->map_values.data)[1] = 2;
	RUN(1);
	kt.label = "DictVectorizer int64 keys, double values";
	kt_expect_values(0, OX_DOUBLE, 2, DIMS(1, 3), F64(0, 1.5, 0), 0);
	kt_end();

	kt_begin("CastMap", ML, 1);
	kt_attr_string("cast_to", "TO_FLOAT");
	kt_attr_string("map_form", "SPARSE");
	kt_attr_int("max_map", 5);
	m = map_input(OX_INT64, OX_FLOAT, 3);
	memcpy(m->map_keys.data, I64(3, 1, 9), 24);
	memcpy(m->map_values.data, F32(1.5f, 2, 4), 12);
	RUN(1);
	kt.label = "CastMap sparse";
	kt_expect_f32(0, 2, DIMS(1, 5), F32(0, 2, 0, 1.5f, 0), 0);
	kt_end();

	kt_begin("CastMap", ML, 1);
	kt_attr_string("cast_to", "TO_STRING");
	m = map_input(OX_INT64, OX_FLOAT, 2);
	memcpy(m->map_keys.data, I64(3, 1), 16);
	memcpy(m->map_values.data, F32(1.5f, 2), 8);
	RUN(1);
	kt.label = "CastMap dense to string, key order";
	expect_strings(0, 2, STRS("2.000000", "1.500000"));
	kt_end();

	kt_begin("CastMap", ML, 1);
	kt_attr_string("cast_to", "TO_INT64");
	m = map_input(OX_INT64, OX_STRING, 2);
	memcpy(m->map_keys.data, I64(3, 1), 16);
	set_str(&m->map_values, 0, "15");
	set_str(&m->map_values, 1, "-2");
	RUN(1);
	kt.label = "CastMap strings to int64";
	kt_expect_i64(0, 2, DIMS(1, 2), I64(-2, 15));
	kt_end();

	kt_begin("CastMap", ML, 1);
	kt_attr_string("cast_to", "TO_BOOL");
	m = map_input(OX_INT64, OX_FLOAT, 1);
	((int64_t *) m->map_keys.data)[0] = 0;
	((float *) m->map_values.data)[0] = 1;
	RUN(1);
	kt.label = "CastMap unknown cast_to";
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();
}

/*
 * ArrayFeatureExtractor on random numbers of every numeric type, against
 * a per-element gather: 1-D, 2-D and 3-D X, one to many indices with
 * repeats, row counts past one poll block; then the bad indices.
 */
static void
test_afe_random(void)
{
	static const ox_dtype types[] = {OX_FLOAT, OX_DOUBLE, OX_INT64, OX_INT32};
	static const int64_t shapes[][4] = {{1, 30, 0}, {2, 1, 30}, {2, 1000, 30}, {2, 600, 1},
	{3, 4, 7, 5}, {2, 257, 3}};
	static const int64_t nidx[] = {1, 2, 5, 40};

	srand(5);
	for (int t = 0; t < 4; t++)
		for (int sh = 0; sh < 6; sh++)
			for (int ni = 0; ni < 4; ni++)
			{
				int			rank = (int) shapes[sh][0];
				const int64_t *dims = &shapes[sh][1];
				int64_t		last = dims[rank - 1];
				int64_t		numel = ox_shape_numel(rank, dims);
				int64_t		rows = numel / last;
				size_t		es = ox_dtype_size(types[t]);
				unsigned char *x = malloc(es * numel);
				unsigned char *want = malloc(es * rows * nidx[ni]);
				int64_t		idx[40];
				int64_t		odims[3];

				for (size_t b = 0; b < es * numel; b++)
					x[b] = (unsigned char) rand();
				for (int64_t i = 0; i < nidx[ni]; i++)
					idx[i] = rand() % last;
				for (int64_t r = 0; r < rows; r++)
					for (int64_t i = 0; i < nidx[ni]; i++)
						memcpy(want + (r * nidx[ni] + i) * es, x + (r * last + idx[i]) * es, es);
				if (rank == 1)
				{
					odims[0] = 1;
					odims[1] = nidx[ni];
				}
				else
				{
					memcpy(odims, dims, sizeof(int64_t) * rank);
					odims[rank - 1] = nidx[ni];
				}
				kt_begin("ArrayFeatureExtractor", ML, 1);
				kt_input(types[t], rank, dims, x);
				kt_input(OX_INT64, 1, &nidx[ni], idx);
				RUN(1);
				kt.label = "ArrayFeatureExtractor random gather";
				if (kt_check_shape(0, types[t], rank == 1 ? 2 : rank, odims) &&
					memcmp(kt_output(0)->data, want, es * rows * nidx[ni]) != 0)
					kt_fail("values differ%s%.0f%.0f", "", 0, 0);
				kt_end();
				free(x);
				free(want);
			}
	/* any bad index fails, wherever it sits in the list */
	for (int pos = 0; pos < 3; pos++)
	{
		int64_t		bad[3] = {1, 2, 0};

		bad[pos] = pos == 1 ? -1 : 30;
		kt_begin("ArrayFeatureExtractor", ML, 1);
		kt_input_f32(2, DIMS(2, 30), NULL);
		kt_input(OX_INT64, 1, DIMS(3), bad);
		RUN(1);
		kt.label = "ArrayFeatureExtractor bad index";
		kt_expect_error(OX_INVALID_ARGUMENT);
		kt_end();
	}
}

int
main(void)
{
	test_linear();
	test_linear_blocked();
	test_linear_batch_invariant();
	test_svm();
	test_svm_blocked();
	test_transforms();
	test_encoders();
	test_features();
	test_maps();
	test_afe_random();
	return kt_summary();
}
