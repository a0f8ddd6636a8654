/*
 * ml.h
 *	  Private header of the ai.onnx.ml kernels (ml_tree*.c, ml_misc*.c):
 *	  post transforms, attribute helpers and the tree ensemble model that
 *	  TreeEnsembleClassifier, TreeEnsembleRegressor and TreeEnsemble share.
 *
 * The numeric helpers reproduce onnxruntime's float arithmetic (its
 * ml_common.h) on purpose: scikit-learn users compare our scores and labels
 * with onnxruntime's, so the same approximations (erfinv for PROBIT, the
 * SOFTMAX_ZERO rule) must give the same numbers.
 */
#ifndef OX_KERNELS_CPU_ML_H
#define OX_KERNELS_CPU_ML_H

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernel.h"

#define ML_DOMAIN "ai.onnx.ml"

typedef enum ml_post_transform
{
	ML_POST_NONE = 0,
	ML_POST_LOGISTIC,
	ML_POST_SOFTMAX,
	ML_POST_SOFTMAX_ZERO,
	ML_POST_PROBIT
} ml_post_transform;

/* -------- numeric helpers (float, like onnxruntime) -------- */

static inline float
ml_logistic(float val)
{
	float		v = 1.0f / (1.0f + expf(-fabsf(val)));

	return val < 0 ? 1.0f - v : v;
}

static inline float
ml_erfinv(float x)
{
	float		sgn = x < 0 ? -1.0f : 1.0f;
	float		lg;
	float		v;
	float		v2;
	float		v3;

	x = (1 - x) * (1 + x);
	lg = logf(x);
	v = 2 / ((float) M_PI * 0.147f) + 0.5f * lg;
	v2 = 1 / 0.147f * lg;
	v3 = -v + sqrtf(v * v - v2);
	return sgn * sqrtf(v3);
}

static inline float
ml_probit(float val)
{
	return (float) M_SQRT2 * ml_erfinv(2 * val - 1);
}

static inline void
ml_softmax(float *v, int64_t n)
{
	float		vmax = -FLT_MAX;
	float		sum = 0.0f;

	for (int64_t i = 0; i < n; i++)
		if (v[i] > vmax)
			vmax = v[i];
	for (int64_t i = 0; i < n; i++)
	{
		v[i] = expf(v[i] - vmax);
		sum += v[i];
	}
	for (int64_t i = 0; i < n; i++)
		v[i] = v[i] / sum;
}

/* softmax that leaves (near) zero scores at zero: exp(0) would not be */
static inline void
ml_softmax_zero(float *v, int64_t n)
{
	float		vmax = -FLT_MAX;
	float		exp_neg_vmax;
	float		sum = 0.0f;

	for (int64_t i = 0; i < n; i++)
		if (v[i] > vmax)
			vmax = v[i];
	exp_neg_vmax = expf(-vmax);
	for (int64_t i = 0; i < n; i++)
	{
		if (v[i] > 0.0000001f || v[i] < -0.0000001f)
		{
			v[i] = expf(v[i] - vmax);
			sum += v[i];
		}
		else
			v[i] = v[i] * exp_neg_vmax;
	}
	for (int64_t i = 0; i < n; i++)
		v[i] = v[i] / sum;
}

/* apply a post transform to a vector of at least two scores, in place */
static inline void
ml_post_transform_apply(ml_post_transform pt, float *v, int64_t n)
{
	switch (pt)
	{
		case ML_POST_PROBIT:
			for (int64_t i = 0; i < n; i++)
				v[i] = ml_probit(v[i]);
			break;
		case ML_POST_LOGISTIC:
			for (int64_t i = 0; i < n; i++)
				v[i] = ml_logistic(v[i]);
			break;
		case ML_POST_SOFTMAX:
			ml_softmax(v, n);
			break;
		case ML_POST_SOFTMAX_ZERO:
			ml_softmax_zero(v, n);
			break;
		case ML_POST_NONE:
			break;
	}
}

/* -------- attribute helpers -------- */

static inline ox_code
ml_parse_post_transform(const ox_node *node, ml_post_transform *out, ox_status *st)
{
	const char *s = ox_attr_string(node, "post_transform", "NONE");

	*out = ML_POST_NONE;
	if (strcmp(s, "NONE") == 0)
		*out = ML_POST_NONE;
	else if (strcmp(s, "LOGISTIC") == 0)
		*out = ML_POST_LOGISTIC;
	else if (strcmp(s, "SOFTMAX") == 0)
		*out = ML_POST_SOFTMAX;
	else if (strcmp(s, "SOFTMAX_ZERO") == 0)
		*out = ML_POST_SOFTMAX_ZERO;
	else if (strcmp(s, "PROBIT") == 0)
		*out = ML_POST_PROBIT;
	else
		return ox_fail(st, OX_UNSUPPORTED, "%s: post_transform \"%s\" is not supported",
					   node->op_type, s);
	return OX_OK;
}

/* element i of a STRINGS attribute with its length (strings may hold NULs) */
static inline const char *
ml_attr_str_at(const ox_attr *a, int i, size_t *len)
{
	*len = a->string_lens ? a->string_lens[i] : strlen(a->strings[i]);
	return a->strings[i];
}

/*
 * Read a list of reals given either as a FLOATS attribute (name) or as a
 * tensor attribute (tensor_name, float or double, the *_as_tensor forms of
 * ai.onnx.ml opset 3).  *out is malloc'ed (NULL when absent, *n = 0).
 */
static inline ox_code
ml_attr_reals(const ox_node *node, const char *name, const char *tensor_name,
			  double **out, int64_t *n, ox_status *st)
{
	const float *f;
	int			nf = ox_attr_floats(node, name, &f);
	const ox_tensor *t = tensor_name ? ox_attr_tensor(node, tensor_name) : NULL;

	*out = NULL;
	*n = 0;
	if (nf > 0 && t)
		return ox_fail(st, OX_INVALID_MODEL, "%s: both %s and %s are set",
					   node->op_type, name, tensor_name);
	if (t)
	{
		int64_t		cnt = ox_tensor_numel(t);

		if (t->dtype != OX_FLOAT && t->dtype != OX_DOUBLE)
			return ox_fail(st, OX_INVALID_MODEL, "%s: %s has element type %s, expected float or double",
						   node->op_type, tensor_name, ox_dtype_name(t->dtype));
		if (cnt < 0 || cnt > INT32_MAX)
			return ox_fail(st, OX_INVALID_MODEL, "%s: %s is too large", node->op_type, tensor_name);
		if (cnt == 0)
			return OX_OK;
		*out = malloc(sizeof(double) * (size_t) cnt);
		if (!*out)
			return ox_fail(st, OX_OUT_OF_MEMORY, "%s: could not allocate %s", node->op_type, tensor_name);
		for (int64_t i = 0; i < cnt; i++)
			(*out)[i] = ox_tensor_get_double(t, i);
		*n = cnt;
		return OX_OK;
	}
	if (nf == 0)
		return OX_OK;
	*out = malloc(sizeof(double) * (size_t) nf);
	if (!*out)
		return ox_fail(st, OX_OUT_OF_MEMORY, "%s: could not allocate %s", node->op_type, name);
	for (int i = 0; i < nf; i++)
		(*out)[i] = f[i];
	*n = nf;
	return OX_OK;
}

/*
 * Rows and columns of a feature matrix input: [N, C], or a 1-D [C] taken
 * as one row.  Fails on other ranks or an overflowing shape.
 */
static inline ox_code
ml_rows_cols(const char *op, const ox_tensor *x, int64_t *rows, int64_t *cols, ox_status *st)
{
	*rows = 0;
	*cols = 0;
	if (ox_tensor_numel(x) < 0)
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: input shape is invalid", op);
	if (x->rank == 1)
	{
		*rows = 1;
		*cols = x->dims[0];
	}
	else if (x->rank == 2)
	{
		*rows = x->dims[0];
		*cols = x->dims[1];
	}
	else
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: input has rank %d, expected 1 or 2", op, x->rank);
	return OX_OK;
}

/* copy a string into an output ox_string (owned) */
static inline ox_code
ml_set_string(ox_string *dst, const char *s, size_t len, ox_status *st)
{
	char	   *p = malloc(len + 1);

	if (!p)
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate a string of %zu bytes", len);
	if (len)
		memcpy(p, s, len);
	p[len] = '\0';
	free(dst->data);
	dst->data = p;
	dst->len = len;
	return OX_OK;
}

/* -------- tree ensembles (ml_tree*.c) -------- */

/* node modes; LEAF must stay distinct from every branch mode */
typedef enum ml_node_mode
{
	ML_BRANCH_LEQ = 0,
	ML_BRANCH_LT,
	ML_BRANCH_GTE,
	ML_BRANCH_GT,
	ML_BRANCH_EQ,
	ML_BRANCH_NEQ,
	ML_BRANCH_MEMBER,
	ML_LEAF
} ml_node_mode;

typedef enum ml_aggregate
{
	ML_AGG_SUM = 0,
	ML_AGG_AVERAGE,
	ML_AGG_MIN,
	ML_AGG_MAX
} ml_aggregate;

/*
 * One node of the flat tree array.  Branches hold child indices into the
 * same array; leaves hold a slice [first, first + count) of the weight
 * arrays, and their first weight in value (the single-target fast path).
 */
typedef struct ml_tree_node
{
	float		value;			/* threshold, or the leaf's first weight */
	int32_t		feature;
	int32_t		true_next;		/* branch: node index; leaf: first weight */
	int32_t		false_next;		/* branch: node index; leaf: weight count */
	uint8_t		mode;			/* ml_node_mode */
	uint8_t		missing_true;	/* NaN goes to the true branch */
} ml_tree_node;

typedef struct ml_tree_fast ml_tree_fast;	/* ml_tree_fast.c */

typedef struct ml_tree_ensemble
{
	/* structure */
	int32_t		n_nodes;
	ml_tree_node *nodes;
	double	   *values_d;		/* thresholds / first weights in double */
	int32_t	   *member_off;		/* BRANCH_MEMBER: slice of members[] */
	int32_t	   *member_cnt;
	double	   *members;
	int32_t		n_trees;
	int32_t    *roots;
	int32_t		n_weights;
	int32_t    *w_target;
	float	   *w_f;
	double	   *w_d;
	int64_t		n_targets;		/* targets, or classes for the classifier */
	int64_t		max_feature;	/* -1 when no branch reads a feature */
	bool		same_mode;		/* every branch has mode common_mode */
	uint8_t		common_mode;
	bool		has_missing;	/* some branch sends NaN to the true side */
	/* aggregation */
	ml_aggregate agg;
	ml_post_transform post;
	double	   *base;
	int64_t		n_base;
	/* classifier */
	bool		classifier;
	bool		binary_case;	/* two classes, weights for only one */
	bool		weights_all_positive;
	int64_t    *labels_i64;		/* classlabels_int64s, or NULL */
	const char **labels_str;	/* classlabels_strings (model arena), or NULL */
	size_t	   *labels_len;
	/* TreeEnsemble (opset 5) writes Y in the input's type */
	bool		v5;
	/* the branch-free walk for float rows, or NULL when it does not apply */
	ml_tree_fast *fast;
	/*
	 * A single tree (a decision tree): each leaf's finished row, by node
	 * index, made at prepare by the float path's own code; NULL otherwise
	 * (or when too large).  z_width scores a node, and its label.
	 */
	double	   *leaf_z;
	struct ml_label *leaf_label;
} ml_tree_ensemble;

/* ml_tree_build.c */
ox_code		ml_tree_build_legacy(const ox_node *node, bool classifier, ml_tree_ensemble *e,
								 ox_status *st);
ox_code		ml_tree_build_v5(const ox_node *node, ml_tree_ensemble *e, ox_status *st);
void		ml_tree_free(ml_tree_ensemble *e);

/* ml_tree_fast.c */
ox_code		ml_tree_fast_build(ml_tree_ensemble *e, ox_status *st);
void		ml_tree_fast_free(ml_tree_fast *f);
bool		ml_tree_fast_dense(const ml_tree_fast *f);
bool		ml_tree_fast_rows_have_nan(const ml_tree_fast *f, const float *x, int64_t stride, int64_t nrows);
void		ml_tree_fast_walk(const ml_tree_fast *f, const float *x, int64_t stride, int64_t nrows,
							  int32_t *leaf);
uint64_t	ml_tree_fast_sum(const ml_tree_fast *f, const int32_t *leaf, float *acc);
/* batches summed by the walk itself: dense weights, at most this many targets, AVX-512 */
#define ML_TREE_BATCH_SUM_TARGETS 16
bool		ml_tree_fast_has_batch_sums(const ml_tree_fast *f);
void		ml_tree_fast_batch_sums(const ml_tree_fast *f, const float *x, int64_t stride, int64_t nrows,
									float *acc, uint32_t *has);
void		ml_tree_fast_batch_labels(const ml_tree_fast *f, const float *x, int64_t stride, int64_t nrows,
									  const float *base, int64_t *label);

/* -------- misc ops (ml_misc*.c) -------- */

/*
 * Input rows as float: ORT converts double and integer features to float
 * before its linear algebra, so do we.  Writes rows * cols floats to dst.
 */
static inline ox_code
ml_to_float(const char *op, const ox_tensor *x, float *dst, int64_t n, ox_status *st)
{
	switch (x->dtype)
	{
		case OX_FLOAT:
		case OX_DOUBLE:
		case OX_INT64:
		case OX_INT32:
			if (n > 0)
				return ox_convert_elements(dst, OX_FLOAT, x->data, x->dtype, n, st);
			return OX_OK;
		default:
			return ox_fail(st, OX_UNSUPPORTED, "%s: input element type %s is not supported",
						   op, ox_dtype_name(x->dtype));
	}
}

/* scores for a one-score binary model, as onnxruntime writes them */
static inline void
ml_binary_scores(ml_post_transform post, int extra, float s, float *out2)
{
	if (post == ML_POST_PROBIT)
	{
		out2[0] = ml_probit(s);
		out2[1] = 0;
		return;
	}
	if (post == ML_POST_LOGISTIC && extra >= 0)
	{
		/* ml_logistic(-s) and ml_logistic(s) from one exp: |-s| == |s| */
		float		v = 1.0f / (1.0f + expf(-fabsf(s)));

		out2[0] = -s < 0 ? 1.0f - v : v;
		out2[1] = s < 0 ? 1.0f - v : v;
	}
	else if (extra == 0 || extra == 1)
	{
		out2[0] = 1.0f - s;
		out2[1] = s;
	}
	else if (extra == 2 || extra == 3)
	{
		out2[0] = -s;
		out2[1] = s;
	}
	else
	{
		out2[0] = s;
		out2[1] = 0;
	}
}

/* class labels of a classifier: int64 or strings (pointing into the node) */
typedef struct ml_labels
{
	int64_t		n;
	const int64_t *i64;
	const ox_attr *str;
} ml_labels;

static inline ox_code
ml_read_labels(const ox_node *node, const char *ints_name, const char *strings_name,
			   ml_labels *lab, ox_status *st)
{
	const ox_attr *s = ox_node_attr(node, strings_name);
	int			ni = ox_attr_ints(node, ints_name, &lab->i64);
	int			ns = (s && s->type == OX_ATTR_STRINGS) ? s->n : 0;

	if (ni > 0 && ns > 0)
		return ox_fail(st, OX_INVALID_MODEL, "%s: both %s and %s are set", node->op_type, ints_name, strings_name);
	lab->str = ns > 0 ? s : NULL;
	lab->n = ns > 0 ? ns : ni;
	if (ns > 0)
		lab->i64 = NULL;
	return OX_OK;
}

/* write label k (or a literal int / "0"/"1" string when literal) to element i */
static inline ox_code
ml_write_label(const ml_labels *lab, ox_tensor *y, int64_t i, int64_t k, ox_status *st)
{
	if (lab->str)
	{
		size_t		len;
		const char *s = ml_attr_str_at(lab->str, (int) k, &len);

		return ml_set_string(&((ox_string *) y->data)[i], s, len, st);
	}
	((int64_t *) y->data)[i] = lab->i64[k];
	return OX_OK;
}

/* kernels of ml_misc*.c, listed in the table in ml_misc.c */
/*
 * Support vectors transposed for the blocked kernels of
 * ml_misc_svm_kernels.c: svt[f * vp + v] is feature f of vector v, in
 * double, vectors zero-padded to vp (a multiple of ML_SVM_PAD).
 */
#define ML_SVM_PAD 8
typedef struct ml_svm_lanes
{
	double	   *svt;
	int64_t		nv;
	int64_t		vp;
	int64_t		nf;
} ml_svm_lanes;

ox_code		ml_svm_lanes_init(ml_svm_lanes *l, const float *sv, int64_t nv, int64_t nf, ox_status *st,
							  const char *op);
void		ml_svm_lanes_free(ml_svm_lanes *l);
/*
 * out[r][v] for v < vp and each of the rows x[r] (nf features): the sum
 * over features in order, in double, of (x - sv)^2 (rbf) or x * sv.
 */
void		ml_svm_sums(const ml_svm_lanes *l, bool rbf, const float *const *x, int rows,
						double *const *out);
/* out[i] = exp(-gamma * d[i]) (ox_fast_expf of the float argument) */
void		ml_svm_rbf_exp(const double *d, int64_t n, float gamma, float *out);
/* sum of a[i] * b[i] in double, in a fixed order on every machine */
double		ml_svm_dot(const float *a, const float *b, int64_t n);
/* tests only: use path "c", "avx2" or "avx512"; returns the previous, or NULL */
const char *ml_svm_force_isa(const char *name);

ox_code		ml_svm_classifier_prepare(ox_prepare_ctx *pc);
ox_code		ml_svm_classifier_run(ox_kernel_ctx *ctx);
ox_code		ml_svm_regressor_prepare(ox_prepare_ctx *pc);
ox_code		ml_svm_regressor_run(ox_kernel_ctx *ctx);
void		ml_svm_free(void *state);
ox_code		ml_label_encoder_prepare(ox_prepare_ctx *pc);
ox_code		ml_label_encoder_run(ox_kernel_ctx *ctx);
void		ml_label_encoder_free(void *state);
ox_code		ml_one_hot_encoder_prepare(ox_prepare_ctx *pc);
ox_code		ml_one_hot_encoder_run(ox_kernel_ctx *ctx);
void		ml_one_hot_encoder_free(void *state);
ox_code		ml_category_mapper_run(ox_kernel_ctx *ctx);
ox_code		ml_array_feature_extractor_run(ox_kernel_ctx *ctx);
ox_code		ml_feature_vectorizer_run(ox_kernel_ctx *ctx);
ox_code		ml_dict_vectorizer_run(ox_kernel_ctx *ctx);
ox_code		ml_zipmap_run(ox_kernel_ctx *ctx);
ox_code		ml_cast_map_run(ox_kernel_ctx *ctx);

#endif							/* OX_KERNELS_CPU_ML_H */
