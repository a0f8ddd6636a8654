/*
 * ml_misc_svm.c
 *	  SVMClassifier and SVMRegressor (ai.onnx.ml opset 1), as exported by
 *	  skl2onnx for SVC, NuSVC, SVR, NuSVR and OneClassSVM.
 *
 * The classifier is libsvm's one-vs-one scheme: one decision value per
 * pair of classes, a vote per pair, and, when prob_a/prob_b are present,
 * Platt's sigmoid per pair coupled into class probabilities with the
 * iterative method of Wu, Lin and Weng (libsvm's multiclass_probability).
 * Arithmetic follows onnxruntime (float kernels, double pair sums) so
 * scores and labels match it.
 *
 * Kernel values are computed for blocks of ML_SVM_ROWS rows against all
 * support vectors at once by ml_misc_svm_kernels.c, from a transposed copy
 * of the support vectors made at prepare time.
 */
#include "kernels/cpu/ml.h"

/* rows whose kernel values are computed together */
#define ML_SVM_ROWS 4

enum
{
	SVM_LINEAR = 0,
	SVM_POLY,
	SVM_RBF,
	SVM_SIGMOID
};

typedef struct ml_svm
{
	int			kernel;
	float		gamma;
	float		coef0;
	float		degree;
	bool		svc;			/* support vectors; else one coefficient row per class */
	const float *coef;
	int64_t		n_coef;
	const float *sv;
	const float *rho;
	int64_t		n_rho;
	const float *proba;
	const float *probb;
	int64_t		n_prob;
	int64_t    *start;			/* first support vector of each class */
	const int64_t *vpc;
	int64_t		vector_count;
	int64_t		feature_count;
	int64_t		class_count;
	bool		all_positive;
	ml_labels	lab;
	ml_post_transform post;
	bool		one_class;
	ml_svm_lanes lanes;			/* support vectors transposed (svc only) */
} ml_svm;

void
ml_svm_free(void *state)
{
	ml_svm	   *s = state;

	if (!s)
		return;
	free(s->start);
	ml_svm_lanes_free(&s->lanes);
	free(s);
}

static ox_code
svm_common(const ox_node *node, ml_svm *s, ox_status *st)
{
	const char *op = node->op_type;
	const char *kt = ox_attr_string(node, "kernel_type", "LINEAR");
	const float *kp;
	int			nkp = ox_attr_floats(node, "kernel_params", &kp);
	int			n;

	if (strcmp(kt, "LINEAR") == 0)
		s->kernel = SVM_LINEAR;
	else if (strcmp(kt, "POLY") == 0)
		s->kernel = SVM_POLY;
	else if (strcmp(kt, "RBF") == 0)
		s->kernel = SVM_RBF;
	else if (strcmp(kt, "SIGMOID") == 0)
		s->kernel = SVM_SIGMOID;
	else
		return ox_fail(st, OX_UNSUPPORTED, "%s: kernel_type \"%s\" is not supported", op, kt);
	if (nkp > 0)
	{
		if (nkp != 3)
			return ox_fail(st, OX_INVALID_MODEL, "%s: kernel_params has %d values, expected 3", op, nkp);
		s->gamma = kp[0];
		s->coef0 = kp[1];
		s->degree = kp[2];
	}
	OX_TRY(ml_parse_post_transform(node, &s->post, st));
	n = ox_attr_floats(node, "coefficients", &s->coef);
	s->n_coef = n;
	if (n == 0)
		return ox_fail(st, OX_INVALID_MODEL, "%s: coefficients is empty", op);
	s->n_rho = ox_attr_floats(node, "rho", &s->rho);
	if (s->n_rho == 0)
		return ox_fail(st, OX_INVALID_MODEL, "%s: rho is empty", op);
	return OX_OK;
}

ox_code
ml_svm_classifier_prepare(ox_prepare_ctx *pc)
{
	const ox_node *node = pc->node;
	const char *op = node->op_type;
	ml_svm	   *s = calloc(1, sizeof(ml_svm));
	const float *pb;
	int			n_vpc;
	int64_t		n_sv;
	ox_code		rc;

	if (!s)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s: could not allocate its state", op);
	if ((rc = svm_common(node, s, pc->st)) != OX_OK ||
		(rc = ml_read_labels(node, "classlabels_ints", "classlabels_strings", &s->lab, pc->st)) != OX_OK)
		goto fail;
	s->n_prob = ox_attr_floats(node, "prob_a", &s->proba);
	if (ox_attr_floats(node, "prob_b", &pb) != s->n_prob)
	{
		rc = ox_fail(pc->st, OX_INVALID_MODEL, "%s: prob_a and prob_b differ in length", op);
		goto fail;
	}
	s->probb = pb;
	s->class_count = s->lab.n;
	if (s->class_count == 0)
	{
		rc = ox_fail(pc->st, OX_INVALID_MODEL, "%s: classlabels_ints or classlabels_strings is required", op);
		goto fail;
	}
	n_vpc = ox_attr_ints(node, "vectors_per_class", &s->vpc);
	n_sv = ox_attr_floats(node, "support_vectors", &s->sv);
	for (int i = 0; i < n_vpc; i++)
	{
		if (s->vpc[i] < 0 || s->vpc[i] > INT32_MAX)
		{
			rc = ox_fail(pc->st, OX_INVALID_MODEL, "%s: vectors_per_class[%d] is %lld", op, i, (long long) s->vpc[i]);
			goto fail;
		}
		s->vector_count += s->vpc[i];
	}
	if (s->vector_count > 0)
	{
		int64_t		pairs = s->class_count * (s->class_count - 1) / 2;

		s->svc = true;
		s->feature_count = n_sv / s->vector_count;
		if (n_vpc != s->class_count || n_sv != s->feature_count * s->vector_count ||
			s->n_coef != (s->class_count - 1) * s->vector_count || s->n_rho < pairs ||
			(s->n_prob > 0 && s->n_prob < pairs))
		{
			rc = ox_fail(pc->st, OX_INVALID_MODEL,
						 "%s: %d vectors_per_class, %lld support vector values, %lld coefficients, %lld rho and %lld prob_a do not fit %lld classes",
						 op, n_vpc, (long long) n_sv, (long long) s->n_coef, (long long) s->n_rho,
						 (long long) s->n_prob, (long long) s->class_count);
			goto fail;
		}
		s->start = malloc(sizeof(int64_t) * (size_t) s->class_count);
		if (!s->start)
		{
			rc = ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s: could not allocate its state", op);
			goto fail;
		}
		for (int64_t i = 0, acc = 0; i < s->class_count; i++)
		{
			s->start[i] = acc;
			acc += s->vpc[i];
		}
		if ((rc = ml_svm_lanes_init(&s->lanes, s->sv, s->vector_count, s->feature_count, pc->st, op)) != OX_OK)
			goto fail;
	}
	else
	{
		s->kernel = SVM_LINEAR;
		s->feature_count = s->n_coef / s->class_count;
		if (s->n_coef != s->feature_count * s->class_count)
		{
			rc = ox_fail(pc->st, OX_INVALID_MODEL, "%s: %lld coefficients do not make %lld rows",
						 op, (long long) s->n_coef, (long long) s->class_count);
			goto fail;
		}
	}
	s->all_positive = true;
	for (int64_t i = 0; i < s->n_coef; i++)
		if (!(s->coef[i] >= 0))
			s->all_positive = false;
	pc->state = s;
	return OX_OK;
fail:
	ml_svm_free(s);
	return rc;
}

/*
 * A kernel value from its sum over the features (x . sv, or for RBF the
 * squared distance).  Sums run in double: onnxruntime uses a float GEMM
 * here, but scikit-learn (libsvm) works in double and its answers are the
 * reference users check; with POLY and SIGMOID kernels float sums visibly
 * move decision values near zero (onnxruntime mislabels some iris rows
 * with a sigmoid SVC that this gets right).  RBF goes through
 * ml_svm_rbf_exp instead, vectorized.
 */
static float
svm_finish(const ml_svm *s, double sum)
{
	if (s->kernel == SVM_RBF)
		return (float) exp(-(double) s->gamma * sum);
	if (s->kernel == SVM_POLY)
	{
		double		v = (double) s->gamma * sum + s->coef0;

		if (s->degree == 2)
			return (float) (v * v);
		if (s->degree == 3)
			return (float) (v * v * v);
		return (float) pow(v, s->degree);
	}
	if (s->kernel == SVM_SIGMOID)
		return (float) tanh((double) s->gamma * sum + s->coef0);
	return (float) sum;
}

/* a linear score: a . b + c (models without support vectors) */
static float
svm_linear(const float *a, const float *b, int64_t n, float c)
{
	double		sum = 0;

	for (int64_t i = 0; i < n; i++)
		sum += (double) a[i] * b[i];
	return (float) (sum + c);
}

/*
 * Kernel values of the rows [n0, n0 + rows) of xf (rows <= ML_SVM_ROWS)
 * against every support vector: row r's in kbuf + r * vp, through the
 * double sums in dbuf (the same layout).
 */
static void
svm_kernel_rows(const ml_svm *s, const float *xf, int64_t cols, int64_t n0, int rows, double *dbuf,
				float *kbuf)
{
	const float *x[ML_SVM_ROWS] = {0};
	double	   *dsum[ML_SVM_ROWS] = {0};

	for (int r = 0; r < rows; r++)
	{
		x[r] = xf + (n0 + r) * cols;
		dsum[r] = dbuf + r * s->lanes.vp;
	}
	ml_svm_sums(&s->lanes, s->kernel == SVM_RBF, x, rows, dsum);
	for (int r = 0; r < rows; r++)
	{
		float	   *kern = kbuf + r * s->lanes.vp;

		if (s->kernel == SVM_RBF)
			ml_svm_rbf_exp(dsum[r], s->vector_count, s->gamma, kern);
		else
			for (int64_t v = 0; v < s->vector_count; v++)
				kern[v] = svm_finish(s, dsum[r][v]);
	}
}

/* libsvm's coupling of pairwise probabilities r (k x k) into p (k), in float */
static void
multiclass_probability(int64_t k, const float *r, float *p, float *q, float *qp)
{
	float		eps = 0.005f / (float) k;

	memset(q, 0, sizeof(float) * (size_t) (k * k));
	for (int64_t i = 0; i < k; i++)
	{
		p[i] = 1.0f / (float) k;
		for (int64_t j = 0; j < i; j++)
		{
			q[i * k + i] += r[j * k + i] * r[j * k + i];
			q[i * k + j] = q[j * k + i];
		}
		for (int64_t j = i + 1; j < k; j++)
		{
			q[i * k + i] += r[j * k + i] * r[j * k + i];
			q[i * k + j] = -r[j * k + i] * r[i * k + j];
		}
	}
	for (int loop = 0; loop < 100; loop++)
	{
		float		pqp = 0;
		float		max_error = 0;

		for (int64_t i = 0; i < k; i++)
		{
			qp[i] = 0;
			for (int64_t j = 0; j < k; j++)
				qp[i] += q[i * k + j] * p[j];
			pqp += p[i] * qp[i];
		}
		for (int64_t i = 0; i < k; i++)
		{
			float		err = fabsf(qp[i] - pqp);

			if (err > max_error)
				max_error = err;
		}
		if (max_error < eps)
			break;
		for (int64_t i = 0; i < k; i++)
		{
			float		diff = (-qp[i] + pqp) / q[i * k + i];

			p[i] += diff;
			pqp = (pqp + diff * (diff * q[i * k + i] + 2 * qp[i])) / (1 + diff) / (1 + diff);
			for (int64_t j = 0; j < k; j++)
			{
				qp[j] = (qp[j] + diff * q[i * k + j]) / (1 + diff);
				p[j] /= (1 + diff);
			}
		}
	}
}

ox_code
ml_svm_classifier_run(ox_kernel_ctx *ctx)
{
	const ml_svm *s = ctx->state;
	const char *op = ctx->node->op_type;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	int64_t		rows,
				cols,
				k = s->class_count;
	int64_t		pairs = k * (k - 1) / 2;
	bool		have_proba = s->n_prob > 0;
	int64_t		width,
				n_scores;
	int			extra = -1;
	int64_t		dims[2];
	char	   *buf = NULL;
	const float *xf;
	double	   *dbuf;
	float	   *kbuf,
			   *pair_scores,
			   *r,
			   *q,
			   *qp,
			   *scores;
	int64_t    *votes = NULL;
	ox_tensor  *y,
			   *z;
	ox_code		rc = OX_OK;
	size_t		nbuf;

	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input X is missing", op);
	OX_TRY(ml_rows_cols(op, x, &rows, &cols, ctx->st));
	if (cols != s->feature_count)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input has %lld features, the model %lld",
					   op, (long long) cols, (long long) s->feature_count);
	width = k;
	n_scores = k;
	if (s->svc && !have_proba)
	{
		width = k > 2 ? pairs : 2;
		n_scores = pairs;
		if (k <= 2)
			extra = s->post == ML_POST_NONE ? 2 : 0;
	}
	/* features only when not float already: no copy of float input */
	nbuf = (size_t) ((x->dtype == OX_FLOAT ? 0 : rows * cols) + ML_SVM_ROWS * s->lanes.vp +
					 pairs + 3 * k * k + 2 * k + 2 + width);
	buf = ox_workspace_alloc(sizeof(double) * ML_SVM_ROWS * (size_t) s->lanes.vp + sizeof(float) * nbuf,
							 ctx->st, "SVMClassifier");
	votes = malloc(sizeof(int64_t) * (size_t) (k + 1));
	if (!buf || !votes)
	{
		rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: could not allocate scratch space", op);
		goto done;
	}
	dbuf = (double *) buf;
	kbuf = (float *) (dbuf + ML_SVM_ROWS * s->lanes.vp);
	pair_scores = kbuf + ML_SVM_ROWS * s->lanes.vp;
	r = pair_scores + pairs;
	q = r + k * k;
	qp = q + k * k;
	scores = qp + k;
	xf = x->data;
	if (x->dtype != OX_FLOAT)
	{
		float	   *conv = pair_scores + pairs + 3 * k * k + 2 * k + 2 + width;

		if ((rc = ml_to_float(op, x, conv, rows * cols, ctx->st)) != OX_OK)
			goto done;
		xf = conv;
	}
	dims[0] = rows;
	dims[1] = width;
	y = ox_out_tensor(ctx, 0, s->lab.str ? OX_STRING : OX_INT64, 1, dims);
	z = y ? ox_out_tensor(ctx, 1, OX_FLOAT, 2, dims) : NULL;
	if (!z)
	{
		rc = ctx->st->code;
		goto done;
	}
	for (int64_t n0 = 0; n0 < rows && rc == OX_OK; n0 += ML_SVM_ROWS)
	{
		int			nb = rows - n0 < ML_SVM_ROWS ? (int) (rows - n0) : ML_SVM_ROWS;

		if (s->svc)
			svm_kernel_rows(s, xf, cols, n0, nb, dbuf, kbuf);
		for (int64_t n = n0; n < n0 + nb && rc == OX_OK; n++)
		{
			const float *xr = xf + n * cols;
			float	   *zr = (float *) z->data + n * width;
			int64_t		maxclass = 0;
			float		max_weight = 0;

			if (!s->svc)
			{
				for (int64_t c = 0; c < k; c++)
					scores[c] = svm_linear(xr, s->coef + c * cols, cols, s->rho[0]);
				for (int64_t c = 1; c < k; c++)
					if (scores[c] > scores[maxclass])
						maxclass = c;
				max_weight = scores[maxclass];
			}
			else
			{
				const float *kern = kbuf + (n - n0) * s->lanes.vp;
				int64_t		idx = 0;

				memset(votes, 0, sizeof(int64_t) * (size_t) k);
				for (int64_t i = 0; i < k - 1; i++)
				{
					for (int64_t j = i + 1; j < k; j++, idx++)
					{
						const float *c1 = s->coef + (j - 1) * s->vector_count + s->start[i];
						const float *c2 = s->coef + i * s->vector_count + s->start[j];
						double		sum;

						sum = ml_svm_dot(c1, kern + s->start[i], s->vpc[i]);
						sum += ml_svm_dot(c2, kern + s->start[j], s->vpc[j]);
						sum += s->rho[idx];
						pair_scores[idx] = (float) sum;
						votes[sum > 0 ? i : j]++;
					}
				}
				if (have_proba)
				{
					idx = 0;
					memset(r, 0, sizeof(float) * (size_t) (k * k));
					for (int64_t i = 0; i < k - 1; i++)
					{
						for (int64_t j = i + 1; j < k; j++, idx++)
						{
							float		v1 = 1 - ml_logistic(pair_scores[idx] * s->proba[idx] + s->probb[idx]);
							float		v2 = v1 > 1.0e-7f ? v1 : 1.0e-7f;

							v2 = v2 < 1 - 1.0e-7f ? v2 : 1 - 1.0e-7f;
							r[i * k + j] = v2;
							r[j * k + i] = 1 - v2;
						}
					}
					multiclass_probability(k, r, scores, q, qp);
				}
				else
					memcpy(scores, pair_scores, sizeof(float) * (size_t) pairs);
				for (int64_t c = 1; c < k; c++)
					if (votes[c] > votes[maxclass])
						maxclass = c;
			}

			/* label: onnxruntime's ChooseClass */
			if (pairs == 1 && !have_proba &&
				((s->all_positive && max_weight >= 0.5f) || (max_weight > 0 && !s->all_positive)))
				maxclass = 1;
			rc = ml_write_label(&s->lab, y, n, maxclass, ctx->st);

			/* scores */
			if (n_scores == 1)
			{
				float		two[2];

				ml_binary_scores(s->post, extra, scores[0], two);
				zr[0] = two[0];
				if (width > 1)
					zr[1] = two[1];
			}
			else
			{
				memcpy(zr, scores, sizeof(float) * (size_t) n_scores);
				ml_post_transform_apply(s->post, zr, n_scores);
			}
		}
	}
done:
	free(buf);
	free(votes);
	return rc;
}

ox_code
ml_svm_regressor_prepare(ox_prepare_ctx *pc)
{
	const ox_node *node = pc->node;
	const char *op = node->op_type;
	ml_svm	   *s = calloc(1, sizeof(ml_svm));
	int64_t		n_sv;
	ox_code		rc;

	if (!s)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s: could not allocate its state", op);
	if ((rc = svm_common(node, s, pc->st)) != OX_OK)
		goto fail;
	s->vector_count = ox_attr_int(node, "n_supports", 0);
	s->one_class = ox_attr_int(node, "one_class", 0) != 0;
	n_sv = ox_attr_floats(node, "support_vectors", &s->sv);
	if (s->vector_count < 0 || s->vector_count > INT32_MAX)
	{
		rc = ox_fail(pc->st, OX_INVALID_MODEL, "%s: n_supports is %lld", op, (long long) s->vector_count);
		goto fail;
	}
	if (s->vector_count > 0)
	{
		s->svc = true;
		s->feature_count = n_sv / s->vector_count;
		if (n_sv != s->feature_count * s->vector_count || s->n_coef != s->vector_count)
		{
			rc = ox_fail(pc->st, OX_INVALID_MODEL, "%s: %lld support vector values and %lld coefficients for %lld supports",
						 op, (long long) n_sv, (long long) s->n_coef, (long long) s->vector_count);
			goto fail;
		}
		if ((rc = ml_svm_lanes_init(&s->lanes, s->sv, s->vector_count, s->feature_count, pc->st, op)) != OX_OK)
			goto fail;
	}
	else
	{
		s->kernel = SVM_LINEAR;
		s->feature_count = s->n_coef;
	}
	pc->state = s;
	return OX_OK;
fail:
	ml_svm_free(s);
	return rc;
}

ox_code
ml_svm_regressor_run(ox_kernel_ctx *ctx)
{
	const ml_svm *s = ctx->state;
	const char *op = ctx->node->op_type;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	int64_t		rows,
				cols,
				dims[2];
	const float *xf;
	char	   *buf;
	double	   *dbuf;
	float	   *kbuf;
	ox_tensor  *y;
	ox_code		rc = OX_OK;

	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input X is missing", op);
	OX_TRY(ml_rows_cols(op, x, &rows, &cols, ctx->st));
	if (cols != s->feature_count)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input has %lld features, the model %lld",
					   op, (long long) cols, (long long) s->feature_count);
	/* kernel scratch for a block of rows, then features unless float already */
	buf = ox_workspace_alloc(ML_SVM_ROWS * (size_t) s->lanes.vp * (sizeof(double) + sizeof(float)) +
							 sizeof(float) * (size_t) ((x->dtype == OX_FLOAT ? 0 : rows * cols) + 1),
							 ctx->st, "SVMRegressor");
	if (!buf)
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: could not allocate scratch space", op);
	dbuf = (double *) buf;
	kbuf = (float *) (dbuf + ML_SVM_ROWS * s->lanes.vp);
	xf = x->data;
	if (x->dtype != OX_FLOAT)
	{
		float	   *conv = kbuf + ML_SVM_ROWS * s->lanes.vp;

		if ((rc = ml_to_float(op, x, conv, rows * cols, ctx->st)) != OX_OK)
			goto done;
		xf = conv;
	}
	dims[0] = rows;
	dims[1] = 1;
	y = ox_out_tensor(ctx, 0, OX_FLOAT, 2, dims);
	if (!y)
	{
		rc = ctx->st->code;
		goto done;
	}
	for (int64_t n0 = 0; n0 < rows; n0 += ML_SVM_ROWS)
	{
		int			nb = rows - n0 < ML_SVM_ROWS ? (int) (rows - n0) : ML_SVM_ROWS;

		if (s->svc)
			svm_kernel_rows(s, xf, cols, n0, nb, dbuf, kbuf);
		for (int64_t n = n0; n < n0 + nb; n++)
		{
			float		sum;

			if (s->svc)
				sum = (float) (ml_svm_dot(s->coef, kbuf + (n - n0) * s->lanes.vp, s->vector_count) + s->rho[0]);
			else
				sum = svm_linear(xf + n * cols, s->coef, cols, s->rho[0]);
			/* onnxruntime ignores post_transform here; so do we */
			if (s->one_class)
				sum = sum > 0 ? 1.0f : -1.0f;
			((float *) y->data)[n] = sum;
		}
	}
done:
	free(buf);
	return rc;
}
