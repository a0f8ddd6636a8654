/*
 * ml_misc.c
 *	  ai.onnx.ml kernels other than tree ensembles: the linear models and
 *	  the per-element transforms (Scaler, Normalizer, Binarizer, Imputer)
 *	  here, SVMs in ml_misc_svm.c, encoders in ml_misc_encode.c and the map
 *	  and sequence ops in ml_misc_map.c.  The family table is at the end.
 *
 * Like the tree kernels these follow onnxruntime's arithmetic (features
 * converted to float, float scores, its binary-classifier conventions), so
 * that skl2onnx models answer what users see in onnxruntime.
 *
 * elementwise.h comes first: its pragma (no FP contraction, for the SIMD
 * clones of the linear models' scores) must precede every function here.
 */
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/fused_act.h"
#include "kernels/cpu/ml.h"
#include "kernels/cpu/tensor_ops.h"

/*
 * The input features as a float matrix: the input itself when it is float
 * (*conv stays NULL), else converted into *conv (workspace; the caller
 * frees it).
 */
static ox_code
features_float(ox_kernel_ctx *ctx, const float **out, float **conv, int64_t *rows, int64_t *cols)
{
	const char *op = ctx->node->op_type;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	int64_t		n;

	*out = NULL;
	*conv = NULL;
	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input X is missing", op);
	OX_TRY(ml_rows_cols(op, x, rows, cols, ctx->st));
	if (x->dtype == OX_FLOAT)
	{
		*out = x->data;
		return OX_OK;
	}
	n = *rows * *cols;
	*conv = ox_workspace_alloc(sizeof(float) * (size_t) (n > 0 ? n : 1), ctx->st, op);
	if (!*conv)
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: could not allocate %lld features", op, (long long) n);
	if (ml_to_float(op, x, *conv, n, ctx->st) != OX_OK)
	{
		free(*conv);
		*conv = NULL;
		return ctx->st->code;
	}
	*out = *conv;
	return OX_OK;
}

/*
 * scores[r][k] = sum_f x[r][f] * coef[k][f] + intercept[k], each row's sum
 * over its features in order, so a row scores the same bits alone or in a
 * batch of any size: automatic batching promises results identical to the
 * row-wise plan (test/t/001_concurrent_replace.pl compares them exactly).
 * The SGEMM does not keep that promise: it takes a matrix-vector path with
 * split dot products for one or two rows and register tiles above.
 *
 * LINEAR_ROWS rows go together, one per vector lane: their block of x is
 * transposed once (feature-major), then every output's sums advance a
 * feature at a time for all of them, a multiply and an add per lane exactly
 * as the one-row loop does (no contraction in this file: elementwise.h's
 * pragma), so the lanes and the rows left over compute the same bits.
 * Batch 1000 x 30 features, three outputs (LinearSVC): 41 us a run with
 * the SGEMM, 23 with eight scalar chains, 13 in lanes; one output 8 to 7.
 */
#define LINEAR_ROWS 16

/* LINEAR_ROWS floats: the compiler splits it into the clone's vectors */
typedef float linear_lanes __attribute__((vector_size(LINEAR_ROWS * sizeof(float))));

OX_SIMD_CLONES static void
linear_block_scores(const linear_lanes *xt, int64_t cols, const float *coef, const float *icpt,
					int64_t n_icpt, int64_t k_count, float *scores)
{
	for (int64_t k = 0; k < k_count; k++)
	{
		const float *ck = coef + k * cols;
		linear_lanes acc = {0};
		float		add = n_icpt ? icpt[k] : 0.0f;

		for (int64_t f = 0; f < cols; f++)
			acc += xt[f] * ck[f];
		acc += add;
		for (int j = 0; j < LINEAR_ROWS; j++)
			scores[j * k_count + k] = acc[j];
	}
}

static ox_code
linear_scores(const float *x, int64_t rows, int64_t cols, const float *coef, const float *icpt,
			  int64_t n_icpt, int64_t k_count, float *scores, ox_status *st)
{
	int64_t		r = 0;

	if (rows >= LINEAR_ROWS && cols > 0)
	{
		linear_lanes *xt = aligned_alloc(sizeof(linear_lanes), sizeof(linear_lanes) * (size_t) cols);

		if (!xt)
			return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate %lld features", (long long) cols);
		for (; r + LINEAR_ROWS <= rows; r += LINEAR_ROWS)
		{
			const float *xr = x + r * cols;

			/* the block feature-major, one lane per row */
			oxt_transpose_f32((float *) xt, xr, cols, LINEAR_ROWS, cols);
			linear_block_scores(xt, cols, coef, icpt, n_icpt, k_count, scores + r * k_count);
		}
		free(xt);
	}
	for (; r < rows; r++)
		for (int64_t k = 0; k < k_count; k++)
		{
			const float *xr = x + r * cols;
			const float *ck = coef + k * cols;
			float		acc = 0;

			for (int64_t f = 0; f < cols; f++)
				acc += xr[f] * ck[f];
			scores[r * k_count + k] = acc + (n_icpt ? icpt[k] : 0.0f);
		}
	return OX_OK;
}

/* ---------------- LinearClassifier ---------------- */

static ox_code
linear_classifier_run(ox_kernel_ctx *ctx)
{
	const ox_node *node = ctx->node;
	const char *op = node->op_type;
	const float *coef,
			   *icpt;
	int			n_coef = ox_attr_floats(node, "coefficients", &coef);
	int			n_icpt = ox_attr_floats(node, "intercepts", &icpt);
	ml_post_transform post;
	ml_labels	lab;
	const float *x = NULL;
	float	   *conv = NULL;
	float	   *scores = NULL;
	int64_t		rows,
				cols,
				k_count,
				zdims[2];
	ox_tensor  *y,
			   *z = NULL;
	/* a run that asks for the label alone: no scores transformed or stored */
	bool		want_scores = ox_output_wanted(ctx, 1);
	ox_code		rc = OX_OK;

	OX_TRY(ml_parse_post_transform(node, &post, ctx->st));
	OX_TRY(ml_read_labels(node, "classlabels_ints", "classlabels_strings", &lab, ctx->st));
	OX_TRY(features_float(ctx, &x, &conv, &rows, &cols));
	k_count = n_icpt > 0 ? n_icpt : (cols > 0 ? n_coef / cols : 0);
	if (k_count <= 0 || (int64_t) n_coef != k_count * cols)
	{
		rc = ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: %d coefficients do not make %lld rows of %lld features",
					 op, n_coef, (long long) k_count, (long long) cols);
		goto done;
	}
	if (k_count == 1 ? lab.n != 2 : lab.n != k_count)
	{
		rc = ox_fail(ctx->st, OX_INVALID_MODEL, "%s: %lld class labels for %lld coefficient rows",
					 op, (long long) lab.n, (long long) k_count);
		goto done;
	}
	scores = ox_workspace_alloc(sizeof(float) * (size_t) (rows * k_count + 1), ctx->st, "LinearClassifier");
	if (!scores)
	{
		rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: could not allocate scores", op);
		goto done;
	}
	if ((rc = linear_scores(x, rows, cols, coef, icpt, n_icpt, k_count, scores, ctx->st)) != OX_OK)
		goto done;
	zdims[0] = rows;
	zdims[1] = k_count == 1 ? 2 : k_count;
	y = ox_out_tensor(ctx, 0, lab.str ? OX_STRING : OX_INT64, 1, zdims);
	if (y && want_scores)
		z = ox_out_tensor(ctx, 1, OX_FLOAT, 2, zdims);
	if (!y || (want_scores && !z))
	{
		rc = ctx->st->code;
		goto done;
	}
	for (int64_t r = 0; r < rows && rc == OX_OK; r++)
	{
		const float *s = scores + r * k_count;
		float	   *zr = z ? (float *) z->data + r * zdims[1] : NULL;
		int64_t		best = 0;

		if (k_count == 1)
		{
			best = s[0] > 0 ? 1 : 0;
			if (zr)
				ml_binary_scores(post, 1, s[0], zr);
		}
		else
		{
			/* without a branch: which class wins is a coin toss a row (a mispredict each) */
			for (int64_t k = 1; k < k_count; k++)
				best = s[k] > s[best] ? k : best;
			if (zr)
			{
				memcpy(zr, s, sizeof(float) * (size_t) k_count);
				if (post != ML_POST_LOGISTIC)
					ml_post_transform_apply(post, zr, k_count);
			}
		}
		rc = ml_write_label(&lab, y, r, best, ctx->st);
	}
	/*
	 * LOGISTIC is element by element: all rows at once, vectorized (the
	 * Sigmoid op's math, within 1e-7 of libm's; two expf calls a row were
	 * a third of a binary logistic regression's batch)
	 */
	if (rc == OX_OK && z && k_count > 1 && post == ML_POST_LOGISTIC)
		ox_sigmoid_inplace_f32(z->data, rows * k_count);
done:
	free(conv);
	free(scores);
	return rc;
}

/* ---------------- LinearRegressor ---------------- */

static ox_code
linear_regressor_run(ox_kernel_ctx *ctx)
{
	const ox_node *node = ctx->node;
	const char *op = node->op_type;
	const float *coef,
			   *icpt;
	int			n_coef = ox_attr_floats(node, "coefficients", &coef);
	int			n_icpt = ox_attr_floats(node, "intercepts", &icpt);
	int64_t		targets = ox_attr_int(node, "targets", 1);
	ml_post_transform post;
	const float *x = NULL;
	float	   *conv = NULL;
	int64_t		rows,
				cols,
				dims[2];
	ox_tensor  *y;
	ox_code		rc;

	OX_TRY(ml_parse_post_transform(node, &post, ctx->st));
	if (targets <= 0 || (n_icpt != 0 && n_icpt != targets))
		return ox_fail(ctx->st, OX_INVALID_MODEL, "%s: targets is %lld with %d intercepts",
					   op, (long long) targets, n_icpt);
	OX_TRY(features_float(ctx, &x, &conv, &rows, &cols));
	if ((int64_t) n_coef != targets * cols)
	{
		free(conv);
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: %d coefficients for %lld targets of %lld features",
					   op, n_coef, (long long) targets, (long long) cols);
	}
	dims[0] = rows;
	dims[1] = targets;
	y = ox_out_tensor(ctx, 0, OX_FLOAT, 2, dims);
	if (!y)
	{
		free(conv);
		return ctx->st->code;
	}
	rc = linear_scores(x, rows, cols, coef, icpt, n_icpt, targets, y->data, ctx->st);
	free(conv);
	if (rc != OX_OK)
		return rc;
	for (int64_t r = 0; r < rows; r++)
	{
		float	   *yr = (float *) y->data + r * targets;

		/* one target: onnxruntime applies only PROBIT */
		if (targets == 1)
		{
			if (post == ML_POST_PROBIT)
				yr[0] = ml_probit(yr[0]);
		}
		else
			ml_post_transform_apply(post, yr, targets);
	}
	return OX_OK;
}

/* ---------------- Scaler ---------------- */

static ox_code
scaler_run(ox_kernel_ctx *ctx)
{
	const ox_node *node = ctx->node;
	const char *op = node->op_type;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const float *offset,
			   *scale;
	int			n_off = ox_attr_floats(node, "offset", &offset);
	int			n_scale = ox_attr_floats(node, "scale", &scale);
	int64_t		n,
				c;
	ox_tensor  *y;
	float	   *yd;

	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input X is missing", op);
	n = ox_tensor_numel(x);
	if (n < 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input shape is invalid", op);
	c = x->rank == 0 ? 1 : x->dims[x->rank - 1];
	if ((n_off > 1 && n_off != c) || (n_scale > 1 && n_scale != c))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: offset has %d and scale %d values for %lld features",
					   op, n_off, n_scale, (long long) c);
	y = ox_out_tensor(ctx, 0, OX_FLOAT, x->rank, x->dims);
	if (!y)
		return ctx->st->code;
	yd = y->data;
	OX_TRY(ml_to_float(op, x, yd, n, ctx->st));
	if (c <= 0)
		return OX_OK;
	/*
	 * Row by row, each feature's offset and scale at a stride of 1 (one per
	 * feature) or 0 (one for all): a feature index taken as i % c per value
	 * was a 64-bit division each, 60% of a StandardScaler +
	 * LogisticRegression pipeline's run over 1,000 rows of 30 features.
	 */
	{
		static const float zero = 0.0f,
					one = 1.0f;
		const float *o = n_off == 0 ? &zero : offset,
				   *sc = n_scale == 0 ? &one : scale;
		int64_t		os = n_off > 1 ? 1 : 0,
					ss = n_scale > 1 ? 1 : 0;

		for (int64_t r = 0; r < n / c; r++)
		{
			float	   *row = yd + r * c;

			if (os && ss)		/* a value per feature each (StandardScaler): vectorized */
				for (int64_t f = 0; f < c; f++)
					row[f] = (row[f] - offset[f]) * scale[f];
			else
				for (int64_t f = 0; f < c; f++)
					row[f] = (row[f] - o[f * os]) * sc[f * ss];
		}
	}
	return OX_OK;
}

/* ---------------- Normalizer ---------------- */

static ox_code
normalizer_run(ox_kernel_ctx *ctx)
{
	const ox_node *node = ctx->node;
	const char *op = node->op_type;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const char *norm = ox_attr_string(node, "norm", "MAX");
	int			kind;
	int64_t		rows,
				cols;
	ox_tensor  *y;

	if (strcmp(norm, "MAX") == 0)
		kind = 0;
	else if (strcmp(norm, "L1") == 0)
		kind = 1;
	else if (strcmp(norm, "L2") == 0)
		kind = 2;
	else
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: norm \"%s\" is not supported", op, norm);
	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input X is missing", op);
	OX_TRY(ml_rows_cols(op, x, &rows, &cols, ctx->st));
	y = ox_out_tensor(ctx, 0, OX_FLOAT, x->rank, x->dims);
	if (!y)
		return ctx->st->code;
	for (int64_t r = 0; r < rows; r++)
	{
		float	   *yr = (float *) y->data + r * cols;
		const float *xf = x->dtype == OX_FLOAT ? (const float *) x->data + r * cols : NULL;
		double		d = 0;

		/* a float row read directly: a call per value was an eighth of a small classifier's run */
		for (int64_t k = 0; k < cols; k++)
		{
			double		v = xf ? xf[k] : ox_tensor_get_double(x, r * cols + k);

			if (kind == 0)
				d = (k == 0 || v > d) ? v : d;
			else if (kind == 1)
				d += fabs(v);
			else
				d += v * v;
			yr[k] = (float) v;
		}
		if (kind == 2)
			d = sqrt(d);
		if (d != 0)
			for (int64_t k = 0; k < cols; k++)
				yr[k] = (float) ((xf ? xf[k] : ox_tensor_get_double(x, r * cols + k)) / d);
	}
	return OX_OK;
}

/* ---------------- Binarizer ---------------- */

static ox_code
binarizer_run(ox_kernel_ctx *ctx)
{
	const char *op = ctx->node->op_type;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	double		th = ox_attr_float(ctx->node, "threshold", 0.0f);
	ox_tensor  *y;
	int64_t		n;

	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input X is missing", op);
	if (x->dtype != OX_FLOAT && x->dtype != OX_DOUBLE && x->dtype != OX_INT64 && x->dtype != OX_INT32)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: input element type %s is not supported",
					   op, ox_dtype_name(x->dtype));
	n = ox_tensor_numel(x);
	y = ox_out_tensor(ctx, 0, x->dtype, x->rank, x->dims);
	if (!y)
		return ctx->st->code;
	for (int64_t i = 0; i < n; i++)
	{
		switch (x->dtype)
		{
			case OX_FLOAT:
				{
					float		v = ((const float *) x->data)[i];

					((float *) y->data)[i] = isnan(v) ? v : (v > (float) th ? 1.0f : 0.0f);
					break;
				}
			case OX_DOUBLE:
				{
					double		v = ((const double *) x->data)[i];

					((double *) y->data)[i] = isnan(v) ? v : (v > th ? 1.0 : 0.0);
					break;
				}
			case OX_INT64:
				((int64_t *) y->data)[i] = (double) ((const int64_t *) x->data)[i] > th ? 1 : 0;
				break;
			default:
				((int32_t *) y->data)[i] = (double) ((const int32_t *) x->data)[i] > th ? 1 : 0;
				break;
		}
	}
	return OX_OK;
}

/* ---------------- Imputer ---------------- */

static ox_code
imputer_run(ox_kernel_ctx *ctx)
{
	const ox_node *node = ctx->node;
	const char *op = node->op_type;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const float *fv;
	const int64_t *iv;
	int			nf = ox_attr_floats(node, "imputed_value_floats", &fv);
	int			ni = ox_attr_ints(node, "imputed_value_int64s", &iv);
	bool		is_float;
	int			nv;
	int64_t		n,
				c;
	ox_tensor  *y;

	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input X is missing", op);
	is_float = x->dtype == OX_FLOAT || x->dtype == OX_DOUBLE;
	if (!is_float && x->dtype != OX_INT64 && x->dtype != OX_INT32)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: input element type %s is not supported",
					   op, ox_dtype_name(x->dtype));
	nv = is_float ? nf : ni;
	if (nv == 0)
		return ox_fail(ctx->st, OX_INVALID_MODEL, "%s: imputed_value_%s is empty for %s input",
					   op, is_float ? "floats" : "int64s", ox_dtype_name(x->dtype));
	n = ox_tensor_numel(x);
	c = x->rank == 0 ? 1 : x->dims[x->rank - 1];
	if (nv != 1 && nv != c)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: %d imputed values for %lld features",
					   op, nv, (long long) c);
	y = ox_out_tensor(ctx, 0, x->dtype, x->rank, x->dims);
	if (!y)
		return ctx->st->code;
	if (n == 0)
		return OX_OK;
	/*
	 * Row by row, the imputed value of feature f at f * vs (vs 0: one for
	 * all): no feature index of i % c (a 64-bit division) and no call per
	 * value, as Scaler.  The same arithmetic per value as before.
	 */
	{
		int64_t		vs = nv == 1 ? 0 : 1;
		double		frep = ox_attr_float(node, "replaced_value_float", 0.0f);
		bool		nan_rep = isnan(frep);
		int64_t		irep = ox_attr_int(node, "replaced_value_int64", 0);

#define IMPUTE_ROWS(T, HIT, VAL) \
		for (int64_t r = 0; r < n / c; r++) \
		{ \
			const T    *xr = (const T *) x->data + r * c; \
			T		   *yr = (T *) y->data + r * c; \
			for (int64_t f = 0; f < c; f++) \
				yr[f] = (HIT) ? (T) (VAL) : xr[f]; \
		}
		switch (x->dtype)
		{
			case OX_FLOAT:
				IMPUTE_ROWS(float, nan_rep ? isnan(xr[f]) : (double) xr[f] == frep, fv[f * vs]);
				break;
			case OX_DOUBLE:
				IMPUTE_ROWS(double, nan_rep ? isnan(xr[f]) : xr[f] == frep, (double) fv[f * vs]);
				break;
			case OX_INT64:
				IMPUTE_ROWS(int64_t, xr[f] == irep, iv[f * vs]);
				break;
			default:
				IMPUTE_ROWS(int32_t, (int64_t) xr[f] == irep, iv[f * vs]);
				break;
		}
#undef IMPUTE_ROWS
	}
	return OX_OK;
}

const ox_kernel_def ox_kernels_ml_misc[] = {
	{ML_DOMAIN, "LinearClassifier", 1, NULL, linear_classifier_run, NULL},
	{ML_DOMAIN, "LinearRegressor", 1, NULL, linear_regressor_run, NULL},
	{ML_DOMAIN, "SVMClassifier", 1, ml_svm_classifier_prepare, ml_svm_classifier_run, ml_svm_free},
	{ML_DOMAIN, "SVMRegressor", 1, ml_svm_regressor_prepare, ml_svm_regressor_run, ml_svm_free},
	{ML_DOMAIN, "Scaler", 1, NULL, scaler_run, NULL},
	{ML_DOMAIN, "Normalizer", 1, NULL, normalizer_run, NULL},
	{ML_DOMAIN, "Binarizer", 1, NULL, binarizer_run, NULL},
	{ML_DOMAIN, "Imputer", 1, NULL, imputer_run, NULL},
	{ML_DOMAIN, "LabelEncoder", 1, ml_label_encoder_prepare, ml_label_encoder_run, ml_label_encoder_free},
	{ML_DOMAIN, "OneHotEncoder", 1, ml_one_hot_encoder_prepare, ml_one_hot_encoder_run, ml_one_hot_encoder_free},
	{ML_DOMAIN, "CategoryMapper", 1, NULL, ml_category_mapper_run, NULL},
	{ML_DOMAIN, "ArrayFeatureExtractor", 1, NULL, ml_array_feature_extractor_run, NULL},
	{ML_DOMAIN, "FeatureVectorizer", 1, NULL, ml_feature_vectorizer_run, NULL},
	{ML_DOMAIN, "DictVectorizer", 1, NULL, ml_dict_vectorizer_run, NULL},
	{ML_DOMAIN, "ZipMap", 1, NULL, ml_zipmap_run, NULL},
	{ML_DOMAIN, "CastMap", 1, NULL, ml_cast_map_run, NULL},
};
const int	ox_kernels_ml_misc_count = OX_KERNEL_COUNT(ox_kernels_ml_misc);
