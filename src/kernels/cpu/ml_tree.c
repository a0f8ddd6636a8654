/*
 * ml_tree.c
 *	  Tree ensembles of ai.onnx.ml: TreeEnsembleClassifier and
 *	  TreeEnsembleRegressor (opsets 1 and 3) and TreeEnsemble (opset 5).
 *
 * This is the hot path of scikit-learn models (random forests, gradient
 * boosting): prepare() (ml_tree_build.c) validates the model and lays every
 * tree out as a flat node array; run() walks it with no checks, no
 * allocation (unless a model has more than ML_STACK_TARGETS targets) and
 * no string work.
 *
 * Scores and labels follow onnxruntime exactly, including its corner cases
 * (which users see as "the right answer" since skl2onnx is tested against
 * it): a single target skips every post transform but PROBIT, targets no
 * leaf scored come out as 0, and a two-class model whose weights all name
 * one class reports [1 - p, p] (or [-s, s]) with the label chosen by
 * p > 0.5 (or s > 0).  Sums run in float for float, integer and float16
 * inputs and in double for double input, tree by tree in model order, as
 * onnxruntime does, so that near ties break the same way.
 */
#include "kernels/cpu/ml.h"

#define ML_STACK_TARGETS 64

/* ---------------- walking one tree ---------------- */

#define ML_LOAD_PLAIN(v) (v)
#define ML_LOAD_HALF(v) ox_half_to_float(v)
#define ML_TH_F(e, nd) ((nd)->value)
#define ML_TH_D(e, nd) ((e)->values_d[(nd) - (e)->nodes])

#define ML_WALK_SAME(CMP, TT, LOAD, TH) \
	while (nd->mode != ML_LEAF) \
	{ \
		TT			v_ = LOAD(x[nd->feature]); \
		nd = &nodes[(v_ CMP TH(e, nd)) ? nd->true_next : nd->false_next]; \
	} \
	return nd

/*
 * Defines NAME(e, root, x): the leaf that row x reaches from root.  IT is
 * the input element type, TT the type thresholds are compared in, LOAD
 * converts an input element to TT, TH reads a node's threshold as TT.
 */
#define ML_DEFINE_WALK(NAME, IT, TT, LOAD, TH) \
static inline const ml_tree_node * \
NAME(const ml_tree_ensemble *e, int32_t root, const IT *x) \
{ \
	const ml_tree_node *nodes = e->nodes; \
	const ml_tree_node *nd = &nodes[root]; \
\
	if (e->same_mode && !e->has_missing) \
	{ \
		switch (e->common_mode) \
		{ \
			case ML_BRANCH_LEQ: ML_WALK_SAME(<=, TT, LOAD, TH); \
			case ML_BRANCH_LT: ML_WALK_SAME(<, TT, LOAD, TH); \
			case ML_BRANCH_GTE: ML_WALK_SAME(>=, TT, LOAD, TH); \
			case ML_BRANCH_GT: ML_WALK_SAME(>, TT, LOAD, TH); \
			case ML_BRANCH_EQ: ML_WALK_SAME(==, TT, LOAD, TH); \
			case ML_BRANCH_NEQ: ML_WALK_SAME(!=, TT, LOAD, TH); \
			default: break; \
		} \
	} \
	while (nd->mode != ML_LEAF) \
	{ \
		TT			v = LOAD(x[nd->feature]); \
		TT			th = TH(e, nd); \
		bool		r = false; \
\
		switch (nd->mode) \
		{ \
			case ML_BRANCH_LEQ: r = v <= th; break; \
			case ML_BRANCH_LT: r = v < th; break; \
			case ML_BRANCH_GTE: r = v >= th; break; \
			case ML_BRANCH_GT: r = v > th; break; \
			case ML_BRANCH_EQ: r = v == th; break; \
			case ML_BRANCH_NEQ: r = v != th; break; \
			case ML_BRANCH_MEMBER: \
				{ \
					int32_t		i = (int32_t) (nd - nodes); \
					const double *m = e->members + e->member_off[i]; \
\
					for (int32_t k = 0; k < e->member_cnt[i] && !r; k++) \
						r = v == (TT) m[k]; \
					break; \
				} \
		} \
		if (!r && nd->missing_true && isnan((double) v)) \
			r = true; \
		nd = &nodes[r ? nd->true_next : nd->false_next]; \
	} \
	return nd; \
}

ML_DEFINE_WALK(walk_f32, float, float, ML_LOAD_PLAIN, ML_TH_F)
ML_DEFINE_WALK(walk_i64, int64_t, float, ML_LOAD_PLAIN, ML_TH_F)
ML_DEFINE_WALK(walk_i32, int32_t, float, ML_LOAD_PLAIN, ML_TH_F)
ML_DEFINE_WALK(walk_f16, uint16_t, float, ML_LOAD_HALF, ML_TH_F)
ML_DEFINE_WALK(walk_f64, double, double, ML_LOAD_PLAIN, ML_TH_D)

/* ---------------- aggregation and final scores ---------------- */

/* what the label output receives for one row */
typedef struct ml_label
{
	int64_t		value;
	bool		is_index;		/* value indexes the class labels; else it is the label */
} ml_label;

/*
 * take ? a : b by masks: the compiler makes a float's select a branch, and
 * these pick the winning class, a coin toss a row
 */
#define ML_DEFINE_SELECT(SUFFIX, TT, UT) \
static inline TT \
ml_select_##SUFFIX(bool take, TT a, TT b) \
{ \
	UT			m = (UT) 0 - (UT) take; \
	UT			ia, \
				ib; \
\
	memcpy(&ia, &a, sizeof(ia)); \
	memcpy(&ib, &b, sizeof(ib)); \
	ia = (ia & m) | (ib & ~m); \
	memcpy(&a, &ia, sizeof(a)); \
	return a; \
}

ML_DEFINE_SELECT(f, float, uint32_t)
ML_DEFINE_SELECT(d, double, uint64_t)

/*
 * Per row: add one leaf into acc/has (n_targets > 1), or into acc[0]
 * (single target: onnxruntime uses only the leaf's first weight there).
 * Then finalize into z (double, holding TT or float values) and a label.
 */
#define ML_DEFINE_AGG(SUFFIX, TT, W) \
static inline void \
add_leaf_##SUFFIX(const ml_tree_ensemble *e, const ml_tree_node *leaf, TT *acc, uint8_t *has) \
{ \
	const int32_t *tg = e->w_target + leaf->true_next; \
	const TT   *w = e->W + leaf->true_next; \
	int32_t		cnt = leaf->false_next; \
\
	switch (e->agg) \
	{ \
		case ML_AGG_SUM: \
		case ML_AGG_AVERAGE: \
			for (int32_t k = 0; k < cnt; k++) \
			{ \
				acc[tg[k]] += w[k]; \
				has[tg[k]] = 1; \
			} \
			break; \
		case ML_AGG_MIN: \
			for (int32_t k = 0; k < cnt; k++) \
			{ \
				if (!has[tg[k]] || w[k] < acc[tg[k]]) \
					acc[tg[k]] = w[k]; \
				has[tg[k]] = 1; \
			} \
			break; \
		case ML_AGG_MAX: \
			for (int32_t k = 0; k < cnt; k++) \
			{ \
				if (!has[tg[k]] || w[k] > acc[tg[k]]) \
					acc[tg[k]] = w[k]; \
				has[tg[k]] = 1; \
			} \
			break; \
	} \
} \
\
static inline void \
add_leaf1_##SUFFIX(const ml_tree_ensemble *e, TT lw, int32_t cnt, TT *acc, uint8_t *has) \
{ \
	switch (e->agg) \
	{ \
		case ML_AGG_SUM: \
		case ML_AGG_AVERAGE: \
			*acc += lw; \
			break; \
		case ML_AGG_MIN: \
			if (cnt > 0 && (!*has || lw < *acc)) \
				*acc = lw; \
			*has |= cnt > 0; \
			break; \
		case ML_AGG_MAX: \
			if (cnt > 0 && (!*has || lw > *acc)) \
				*acc = lw; \
			*has |= cnt > 0; \
			break; \
	} \
} \
\
/* scores of n >= 2 targets: unscored ones count as 0, transforms in float */ \
static void \
write_scores_##SUFFIX(const ml_tree_ensemble *e, const TT *acc, const uint8_t *has, int64_t n, \
					  double *z, float *tmp) \
{ \
	if (e->post == ML_POST_NONE) \
	{ \
		for (int64_t k = 0; k < n; k++) \
			z[k] = has[k] ? acc[k] : 0; \
		return; \
	} \
	for (int64_t k = 0; k < n; k++) \
		tmp[k] = has[k] ? (float) acc[k] : 0.0f; \
	ml_post_transform_apply(e->post, tmp, n); \
	for (int64_t k = 0; k < n; k++) \
		z[k] = tmp[k]; \
} \
\
static void \
finalize_regression_##SUFFIX(const ml_tree_ensemble *e, TT *acc, uint8_t *has, double *z, float *tmp) \
{ \
	int64_t		n = e->n_targets; \
	bool		use_base = e->n_base == n; \
\
	if (n == 1) \
	{ \
		TT			origin = e->n_base == 1 ? (TT) e->base[0] : 0; \
		TT			s = acc[0]; \
\
		switch (e->agg) \
		{ \
			case ML_AGG_SUM: \
				s = s + origin; \
				break; \
			case ML_AGG_AVERAGE: \
				s = s / (TT) e->n_trees + origin; \
				break; \
			case ML_AGG_MIN: \
			case ML_AGG_MAX: \
				s = has[0] ? s + origin : origin; \
				break; \
		} \
		z[0] = e->post == ML_POST_PROBIT ? (double) ml_probit((float) s) : (double) s; \
		return; \
	} \
	for (int64_t k = 0; k < n; k++) \
	{ \
		TT			b = use_base ? (TT) e->base[k] : 0; \
\
		switch (e->agg) \
		{ \
			case ML_AGG_SUM: \
				acc[k] = acc[k] + b; \
				break; \
			case ML_AGG_AVERAGE: \
				acc[k] = acc[k] / (TT) e->n_trees + b; \
				break; \
			case ML_AGG_MIN: \
			case ML_AGG_MAX: \
				acc[k] = b + (has[k] ? acc[k] : 0); \
				break; \
		} \
	} \
	write_scores_##SUFFIX(e, acc, has, n, z, tmp); \
} \
\
/* \
 * The first scored class (has) of the highest score, -1 for none: \
 * onnxruntime's label (a NaN score compares false, and stays when first). \
 * Without branches: which class wins is a coin toss a row, a mispredict each \
 * for a loop that branches (half of the time of iris_rf's batches' finishing). \
 */ \
static inline int64_t \
first_best_##SUFFIX(const TT *acc, const uint8_t *has, int64_t n) \
{ \
	int64_t		best = -1; \
	TT			bestw = 0; \
\
	for (int64_t k = 0; k < n; k++) \
	{ \
		bool		take = (has[k] != 0) & ((best < 0) | (acc[k] > bestw)); \
		uint64_t	m = (uint64_t) 0 - (uint64_t) take; \
\
		best = (int64_t) (((uint64_t) k & m) | ((uint64_t) best & ~m)); \
		bestw = ml_select_##SUFFIX(take, acc[k], bestw); \
	} \
	return best; \
} \
\
/* the label, and into z the scores unless z is NULL (the run asks for the label alone) */ \
static void \
finalize_classifier_##SUFFIX(const ml_tree_ensemble *e, TT *acc, uint8_t *has, double *z, \
							 float *tmp, ml_label *label) \
{ \
	int64_t		n = e->n_targets; \
	int			extra = -1;		/* onnxruntime's add_second_class */ \
	int			size = 2; \
	TT			pos; \
	TT			v0; \
\
	if (n == 1) \
	{ \
		TT			s = acc[0] + (e->n_base >= 1 ? (TT) e->base[e->n_base == 2 ? 1 : 0] : 0); \
\
		label->is_index = false; \
		label->value = s > 0 ? 1 : 0; \
		if (!z) \
			return; \
		if (e->n_base == 2) \
			z[0] = e->post == ML_POST_PROBIT ? (double) ml_probit((float) -s) : (double) -s; \
		else \
			z[0] = e->post == ML_POST_PROBIT ? (double) ml_probit((float) s) : (double) s; \
		return; \
	} \
	if (n > 2) \
	{ \
		int64_t		best; \
\
		for (int64_t k = 0; k < e->n_base; k++) \
		{ \
			if (!has[k]) \
			{ \
				has[k] = 1; \
				acc[k] = (TT) e->base[k]; \
			} \
			else \
				acc[k] += (TT) e->base[k]; \
		} \
		best = first_best_##SUFFIX(acc, has, n); \
		label->is_index = true; \
		label->value = best < 0 ? 0 : best; \
		if (z) \
			write_scores_##SUFFIX(e, acc, has, n, z, tmp); \
		return; \
	} \
	/* two classes */ \
	if (e->n_base == 2) \
	{ \
		if (has[1]) \
		{ \
			acc[1] = (TT) e->base[1] + acc[0]; \
			acc[0] = -acc[1]; \
		} \
		else \
		{ \
			acc[1] += (TT) e->base[1]; \
			acc[0] += (TT) e->base[0]; \
		} \
	} \
	else if (e->n_base == 1) \
	{ \
		acc[0] += (TT) e->base[0]; \
		if (!has[1]) \
			size = 1; \
	} \
	else \
	{ \
		extra = 3; \
		if (!has[1]) \
			size = 1; \
	} \
	if (size == 2 && has[1]) \
		pos = acc[1]; \
	else \
		pos = has[0] ? acc[0] : 0; \
	if (e->binary_case) \
	{ \
		label->is_index = true; \
		if (e->weights_all_positive) \
		{ \
			label->value = pos > (TT) 0.5 ? 1 : 0; \
			extra = pos > (TT) 0.5 ? 0 : 1; \
		} \
		else \
		{ \
			label->value = pos > 0 ? 1 : 0; \
			extra = pos > 0 ? 2 : 3; \
		} \
	} \
	else \
	{ \
		/* onnxruntime answers the literal labels 1 and 0 here */ \
		label->is_index = false; \
		label->value = pos > 0 ? 1 : 0; \
	} \
	if (!z) \
		return; \
	if (size == 2) \
	{ \
		write_scores_##SUFFIX(e, acc, has, 2, z, tmp); \
		return; \
	} \
	v0 = has[0] ? acc[0] : 0; \
	if (e->post == ML_POST_PROBIT) \
	{ \
		z[0] = ml_probit((float) v0); \
		z[1] = 0; \
		return; \
	} \
	switch (extra) \
	{ \
		case 0: \
		case 1: \
		case 2: \
		case 3: \
			if (e->post == ML_POST_LOGISTIC) \
			{ \
				z[0] = ml_logistic((float) -v0); \
				z[1] = ml_logistic((float) v0); \
			} \
			else if (extra <= 1) \
			{ \
				z[0] = (TT) 1 - v0; \
				z[1] = v0; \
			} \
			else \
			{ \
				z[0] = -v0; \
				z[1] = v0; \
			} \
			break; \
		default: \
			z[0] = v0; \
			z[1] = 0; \
			break; \
	} \
}

ML_DEFINE_AGG(f, float, w_f)
ML_DEFINE_AGG(d, double, w_d)

/* ---------------- running rows ---------------- */

typedef struct ml_tree_job
{
	const ml_tree_ensemble *e;
	const void *x;				/* input rows */
	int64_t		stride;			/* elements per row */
	void	   *z;				/* scores, [N, width]; NULL when the run needs none */
	ox_dtype	z_dtype;
	int64_t		z_width;		/* columns of z */
	int64_t    *label_i64;		/* label output when int64, else NULL */
	int64_t    *label_idx;		/* label positions for string labels, else NULL */
	ox_dtype	x_dtype;
	bool		failed;			/* scratch allocation failed */
} ml_tree_job;

static inline void
store_row(const ml_tree_job *job, int64_t row, const double *z)
{
	int64_t		w = job->z_width;

	if (!job->z)
		return;
	switch (job->z_dtype)
	{
		case OX_FLOAT:
			{
				float	   *out = (float *) job->z + row * w;

				for (int64_t k = 0; k < w; k++)
					out[k] = (float) z[k];
				break;
			}
		case OX_DOUBLE:
			memcpy((double *) job->z + row * w, z, sizeof(double) * (size_t) w);
			break;
		case OX_FLOAT16:
			{
				uint16_t   *out = (uint16_t *) job->z + row * w;

				for (int64_t k = 0; k < w; k++)
					out[k] = ox_float_to_half((float) z[k]);
				break;
			}
		default:
			break;
	}
}

static inline void
store_label(const ml_tree_job *job, int64_t row, ml_label lab)
{
	const ml_tree_ensemble *e = job->e;

	if (job->label_i64)
		job->label_i64[row] = lab.is_index ? e->labels_i64[lab.value] : lab.value;
	else if (job->label_idx)
	{
		int64_t		idx = lab.value;

		/* a literal 1 with a single string label has no string: take the only one */
		if (idx >= e->n_targets)
			idx = e->n_targets - 1;
		job->label_idx[row] = idx;
	}
}

/* a single tree's row: the finished scores and label of the leaf it reached */
static inline void
store_leaf_row(const ml_tree_job *job, int64_t row, const ml_tree_node *leaf)
{
	const ml_tree_ensemble *e = job->e;
	int64_t		node = leaf - e->nodes;

	store_row(job, row, e->leaf_z + node * job->z_width);
	if (e->classifier)
		store_label(job, row, e->leaf_label[node]);
}

/* the leaf's first weight in the accumulation type (single-target path) */
static inline float
leaf_w1_f(const ml_tree_ensemble *e, const ml_tree_node *leaf)
{
	(void) e;
	return leaf->value;
}

static inline double
leaf_w1_d(const ml_tree_ensemble *e, const ml_tree_node *leaf)
{
	return e->values_d[leaf - e->nodes];
}

/*
 * Rows [begin, end) of one input type.  TT is the accumulation type, SUF
 * the aggregation helpers' suffix.
 */
#define ML_DEFINE_ROWS(NAME, IT, TT, SUF, WALK, W1, TABLE) \
static void \
NAME(void *arg, int64_t begin, int64_t end) \
{ \
	ml_tree_job *job = arg; \
	const ml_tree_ensemble *e = job->e; \
	int64_t		n = e->n_targets; \
	int64_t		zn = n < 2 ? 2 : n; \
	TT			acc_stack[ML_STACK_TARGETS]; \
	uint8_t		has_stack[ML_STACK_TARGETS]; \
	double		z_stack[ML_STACK_TARGETS]; \
	float		tmp_stack[ML_STACK_TARGETS]; \
	TT		   *acc = acc_stack; \
	uint8_t    *has = has_stack; \
	double	   *z = z_stack; \
	float	   *tmp = tmp_stack; \
	void	   *heap = NULL; \
\
	if (zn > ML_STACK_TARGETS) \
	{ \
		heap = malloc((size_t) zn * (sizeof(TT) + 1 + sizeof(double) + sizeof(float))); \
		if (!heap) \
		{ \
			job->failed = true; \
			return; \
		} \
		z = heap; \
		acc = (TT *) (z + zn); \
		tmp = (float *) (acc + zn); \
		has = (uint8_t *) (tmp + zn); \
	} \
	for (int64_t row = begin; row < end; row++) \
	{ \
		const IT   *x = (const IT *) job->x + row * job->stride; \
		ml_label	lab = {0, true}; \
\
		if (TABLE && e->leaf_z) \
		{ \
			store_leaf_row(job, row, WALK(e, e->roots[0], x)); \
			continue; \
		} \
		if (n == 1) \
		{ \
			acc[0] = 0; \
			has[0] = 0; \
			for (int32_t t = 0; t < e->n_trees; t++) \
			{ \
				const ml_tree_node *leaf = WALK(e, e->roots[t], x); \
\
				add_leaf1_##SUF(e, W1(e, leaf), leaf->false_next, acc, has); \
			} \
		} \
		else \
		{ \
			memset(acc, 0, sizeof(TT) * (size_t) n); \
			memset(has, 0, (size_t) n); \
			for (int32_t t = 0; t < e->n_trees; t++) \
				add_leaf_##SUF(e, WALK(e, e->roots[t], x), acc, has); \
		} \
		z[0] = z[1] = 0; \
		if (e->classifier) \
			finalize_classifier_##SUF(e, acc, has, job->z ? z : NULL, tmp, &lab); \
		else \
			finalize_regression_##SUF(e, acc, has, z, tmp); \
		store_row(job, row, z); \
		if (e->classifier) \
			store_label(job, row, lab); \
	} \
	free(heap); \
}


ML_DEFINE_ROWS(rows_f32, float, float, f, walk_f32, leaf_w1_f, true)
ML_DEFINE_ROWS(rows_f64, double, double, d, walk_f64, leaf_w1_d, false)
ML_DEFINE_ROWS(rows_i64, int64_t, float, f, walk_i64, leaf_w1_f, true)
ML_DEFINE_ROWS(rows_i32, int32_t, float, f, walk_i32, leaf_w1_f, true)
ML_DEFINE_ROWS(rows_f16, uint16_t, float, f, walk_f16, leaf_w1_f, true)

/* a float row's sums (acc, has) finalized and stored as rows_f32 does; z and tmp: scratch */
static inline void
finish_row_f32(const ml_tree_job *job, int64_t row, float *acc, uint8_t *has, double *z, float *tmp)
{
	const ml_tree_ensemble *e = job->e;
	ml_label	lab = {0, true};

	z[0] = z[1] = 0;
	if (e->classifier)
		finalize_classifier_f(e, acc, has, job->z ? z : NULL, tmp, &lab);
	else
		finalize_regression_f(e, acc, has, z, tmp);
	store_row(job, row, z);
	if (e->classifier)
		store_label(job, row, lab);
}

/*
 * Batches whose sums the walk by masks makes itself (ml_tree_fast.c: dense
 * weights, at most 16 targets, AVX-512): blocks of rows summed in vectors,
 * then each row finalized as rows_f32 does.
 */
#define ML_SUM_BLOCK_ROWS 64

static void
rows_batch_sums_f32(ml_tree_job *job, int64_t begin, int64_t end)
{
	const ml_tree_ensemble *e = job->e;
	int64_t		n = e->n_targets;
	float		sums[ML_SUM_BLOCK_ROWS * ML_TREE_BATCH_SUM_TARGETS];
	uint32_t	masks[ML_SUM_BLOCK_ROWS];
	uint8_t		has[ML_TREE_BATCH_SUM_TARGETS < 2 ? 2 : ML_TREE_BATCH_SUM_TARGETS];
	double		z[ML_TREE_BATCH_SUM_TARGETS < 2 ? 2 : ML_TREE_BATCH_SUM_TARGETS];
	float		tmp[ML_TREE_BATCH_SUM_TARGETS < 2 ? 2 : ML_TREE_BATCH_SUM_TARGETS];
	/* the label alone of more than two classes: the walk picks each row's class */
	bool		labels_only = e->classifier && !job->z && n > 2;
	float		base[ML_TREE_BATCH_SUM_TARGETS];
	int64_t		best[ML_SUM_BLOCK_ROWS];

	for (int64_t k = 0; labels_only && k < e->n_base && k < ML_TREE_BATCH_SUM_TARGETS; k++)
		base[k] = (float) e->base[k];
	for (int64_t row0 = begin; row0 < end; row0 += ML_SUM_BLOCK_ROWS)
	{
		int64_t		nr = end - row0 < ML_SUM_BLOCK_ROWS ? end - row0 : ML_SUM_BLOCK_ROWS;
		const float *xb = (const float *) job->x + row0 * job->stride;

		if (ml_tree_fast_rows_have_nan(e->fast, xb, job->stride, nr))
		{
			rows_f32(job, row0, row0 + nr);
			continue;
		}
		if (labels_only)
		{
			ml_tree_fast_batch_labels(e->fast, xb, job->stride, nr, e->n_base > 0 ? base : NULL, best);
			for (int64_t r = 0; r < nr; r++)
				store_label(job, row0 + r, (ml_label) {best[r], true});
			continue;
		}
		ml_tree_fast_batch_sums(e->fast, xb, job->stride, nr, sums, masks);
		for (int64_t r = 0; r < nr; r++)
		{
			float	   *acc = sums + r * n;

			/* one target: SUM and AVERAGE never set has (add_leaf1_f) */
			if (n == 1)
				has[0] = 0;
			else
				for (int64_t k = 0; k < n; k++)
					has[k] = (masks[r] >> k) & 1;
			finish_row_f32(job, row0 + r, acc, has, z, tmp);
		}
	}
}

/*
 * Float rows through the fast walk (ml_tree_fast.c): blocks of rows walked
 * lane-parallel, then each row's leaves summed in model order and finalized
 * as rows_f32 does.
 */
#define ML_FAST_BLOCK_LANES 512

static void
rows_fast_f32(void *arg, int64_t begin, int64_t end)
{
	ml_tree_job *job = arg;
	const ml_tree_ensemble *e = job->e;
	const ml_tree_fast *f = e->fast;
	bool		dense = ml_tree_fast_dense(f);
	int64_t		n = e->n_targets;
	int64_t		zn = n < 2 ? 2 : n;
	int32_t		nt = e->n_trees;
	int64_t		block = nt >= ML_FAST_BLOCK_LANES ? 1 : ML_FAST_BLOCK_LANES / nt;
	float		acc_stack[ML_STACK_TARGETS];
	uint8_t		has_stack[ML_STACK_TARGETS];
	double		z_stack[ML_STACK_TARGETS];
	float		tmp_stack[ML_STACK_TARGETS];
	int32_t		leaf_stack[ML_FAST_BLOCK_LANES];
	float	   *acc = acc_stack;
	uint8_t    *has = has_stack;
	double	   *z = z_stack;
	float	   *tmp = tmp_stack;
	int32_t    *leaves = leaf_stack;
	void	   *heap = NULL;
	void	   *leaf_heap = NULL;

	if (end - begin > 1 && ml_tree_fast_has_batch_sums(f) && !e->leaf_z)
	{
		rows_batch_sums_f32(job, begin, end);
		return;
	}
	if (zn > ML_STACK_TARGETS)
	{
		heap = malloc((size_t) zn * (sizeof(float) + 1 + sizeof(double) + sizeof(float)));
		if (!heap)
		{
			job->failed = true;
			return;
		}
		z = heap;
		acc = (float *) (z + zn);
		tmp = (float *) (acc + zn);
		has = (uint8_t *) (tmp + zn);
	}
	if (block * nt > ML_FAST_BLOCK_LANES)
	{
		leaf_heap = malloc(sizeof(int32_t) * (size_t) nt);
		if (!leaf_heap)
		{
			free(heap);
			job->failed = true;
			return;
		}
		leaves = leaf_heap;
	}
	for (int64_t row0 = begin; row0 < end; row0 += block)
	{
		int64_t		nr = end - row0 < block ? end - row0 : block;
		const float *xb = (const float *) job->x + row0 * job->stride;

		if (ml_tree_fast_rows_have_nan(f, xb, job->stride, nr))
		{
			rows_f32(job, row0, row0 + nr);
			continue;
		}
		ml_tree_fast_walk(f, xb, job->stride, nr, leaves);
		if (e->leaf_z)
		{
			for (int64_t r = 0; r < nr; r++)
				store_leaf_row(job, row0 + r, &e->nodes[leaves[r]]);
			continue;
		}
		for (int64_t r = 0; r < nr; r++)
		{
			const int32_t *lf = leaves + r * nt;

			if (dense)
			{
				/* writes acc[0..n) (sums from 0) */
				uint64_t	mask = ml_tree_fast_sum(f, lf, acc);

				/* one target: SUM and AVERAGE never set has (add_leaf1_f) */
				if (n == 1)
					has[0] = 0;
				else
					for (int64_t k = 0; k < n; k++)
						has[k] = (mask >> k) & 1;
			}
			else
			{
				memset(acc, 0, sizeof(float) * (size_t) n);
				memset(has, 0, (size_t) n);
				if (n == 1)
					for (int32_t t = 0; t < nt; t++)
					{
						const ml_tree_node *leaf = &e->nodes[lf[t]];

						add_leaf1_f(e, leaf->value, leaf->false_next, acc, has);
					}
				else
					for (int32_t t = 0; t < nt; t++)
						add_leaf_f(e, &e->nodes[lf[t]], acc, has);
			}
			finish_row_f32(job, row0 + r, acc, has, z, tmp);
		}
	}
	free(leaf_heap);
	free(heap);
}

/* ---------------- kernel entry points ---------------- */

/* leaf tables above this many scores are not made (4 MB of doubles) */
#define ML_LEAF_TABLE_MAX_SCORES ((int64_t) 1 << 19)

/*
 * A single tree's rows depend on nothing but the leaf they reach: finish
 * every leaf once here, with the float rows' own steps (the sum from 0,
 * finalize_*_f), and a row is then a walk and a copy.  A decision tree
 * spent two thirds of its run finishing rows (argmax, probabilities,
 * label).  Double input sums in double and keeps its own path.
 */
static ox_code
build_leaf_table(ml_tree_ensemble *e, ox_status *st)
{
	int64_t		n = e->n_targets;
	int64_t		zn = n < 2 ? 2 : n;
	float	   *acc;
	uint8_t    *has;
	double	   *z;
	float	   *tmp;

	if (e->n_trees != 1 || n < 1 || n > ML_LEAF_TABLE_MAX_SCORES ||
		(int64_t) e->n_nodes * n > ML_LEAF_TABLE_MAX_SCORES)
		return OX_OK;
	e->leaf_z = calloc((size_t) e->n_nodes * (size_t) n, sizeof(double));
	e->leaf_label = calloc((size_t) e->n_nodes, sizeof(ml_label));
	/* doubles first: the floats after them stay aligned whatever zn is */
	z = malloc((size_t) zn * (sizeof(double) + sizeof(float) * 2 + 1));
	if (!e->leaf_z || !e->leaf_label || !z)
	{
		free(z);
		return ox_fail(st, OX_OUT_OF_MEMORY, "tree ensemble: could not allocate the scores of %d nodes",
					   e->n_nodes);
	}
	acc = (float *) (z + zn);
	tmp = acc + zn;
	has = (uint8_t *) (tmp + zn);
	for (int32_t i = 0; i < e->n_nodes; i++)
	{
		const ml_tree_node *leaf = &e->nodes[i];
		ml_label	lab = {0, true};

		if (leaf->mode != ML_LEAF)
			continue;
		if (n == 1)
		{
			acc[0] = 0;
			has[0] = 0;
			add_leaf1_f(e, leaf_w1_f(e, leaf), leaf->false_next, acc, has);
		}
		else
		{
			memset(acc, 0, sizeof(float) * (size_t) n);
			memset(has, 0, (size_t) n);
			add_leaf_f(e, leaf, acc, has);
		}
		z[0] = z[1] = 0;
		if (e->classifier)
			finalize_classifier_f(e, acc, has, z, tmp, &lab);
		else
			finalize_regression_f(e, acc, has, z, tmp);
		memcpy(e->leaf_z + (int64_t) i * n, z, sizeof(double) * (size_t) n);
		e->leaf_label[i] = lab;
	}
	free(z);
	return OX_OK;
}

static ox_code
tree_prepare_common(ox_prepare_ctx *pc, int kind)
{
	ml_tree_ensemble *e = calloc(1, sizeof(ml_tree_ensemble));
	ox_code		rc;

	if (!e)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s: could not allocate its state", pc->node->op_type);
	if (kind == 2)
		rc = ml_tree_build_v5(pc->node, e, pc->st);
	else
		rc = ml_tree_build_legacy(pc->node, kind == 1, e, pc->st);
	if (rc == OX_OK && ((rc = ml_tree_fast_build(e, pc->st)) != OX_OK ||
						(rc = build_leaf_table(e, pc->st)) != OX_OK))
		ml_tree_free(e);
	if (rc != OX_OK)
	{
		free(e);
		return rc;
	}
	pc->state = e;
	return OX_OK;
}

static ox_code
tree_regressor_prepare(ox_prepare_ctx *pc)
{
	return tree_prepare_common(pc, 0);
}

static ox_code
tree_classifier_prepare(ox_prepare_ctx *pc)
{
	return tree_prepare_common(pc, 1);
}

static ox_code
tree_ensemble_prepare(ox_prepare_ctx *pc)
{
	return tree_prepare_common(pc, 2);
}

static void
tree_free_state(void *state)
{
	ml_tree_free(state);
	free(state);
}

static ox_code
tree_run(ox_kernel_ctx *ctx)
{
	const ml_tree_ensemble *e = ctx->state;
	const char *op = ctx->node->op_type;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	ml_tree_job job;
	ox_range_fn fn;
	int64_t		rows = 0,
				cols = 0;
	int64_t		zdims[2];
	ox_tensor  *z;
	ox_tensor  *labels = NULL;
	/* a classifier's run that asks for the label alone skips the scores (finalize, store) */
	bool		scores = !e || !e->classifier || ox_output_wanted(ctx, 1);

	if (!e)
		return ox_fail(ctx->st, OX_INTERNAL, "%s: run without prepare", op);
	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input X is missing", op);
	OX_TRY(ml_rows_cols(op, x, &rows, &cols, ctx->st));
	switch (x->dtype)
	{
		case OX_FLOAT:
			/* the fast walk reads column 0 at leaves: rows have one */
			fn = e->fast && cols > 0 ? rows_fast_f32 : rows_f32;
			break;
		case OX_DOUBLE:
			fn = rows_f64;
			break;
		case OX_INT64:
			fn = e->v5 ? NULL : rows_i64;
			break;
		case OX_INT32:
			fn = e->v5 ? NULL : rows_i32;
			break;
		case OX_FLOAT16:
			fn = e->v5 ? rows_f16 : NULL;
			break;
		default:
			fn = NULL;
			break;
	}
	if (!fn)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: input element type %s is not supported",
					   op, ox_dtype_name(x->dtype));
	if (e->max_feature >= cols)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: the model reads feature %lld but the input has %lld columns",
					   op, (long long) e->max_feature, (long long) cols);

	memset(&job, 0, sizeof(job));
	job.e = e;
	job.x = x->data;
	job.stride = cols;
	job.x_dtype = x->dtype;
	job.z_width = e->n_targets;
	job.z_dtype = e->v5 ? x->dtype : OX_FLOAT;
	zdims[0] = rows;
	zdims[1] = e->n_targets;
	if (e->classifier)
	{
		labels = ox_out_tensor(ctx, 0, e->labels_i64 ? OX_INT64 : OX_STRING, 1, zdims);
		if (!labels)
			return OX_OUT_OF_MEMORY;
		z = scores ? ox_out_tensor(ctx, 1, OX_FLOAT, 2, zdims) : NULL;
		if (e->labels_i64)
			job.label_i64 = labels->data;
		else if (rows > 0)
		{
			job.label_idx = ox_workspace_alloc(sizeof(int64_t) * (size_t) rows, ctx->st, "TreeEnsemble");
			if (!job.label_idx)
				return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: could not allocate %lld labels", op, (long long) rows);
		}
	}
	else
		z = ox_out_tensor(ctx, 0, job.z_dtype, 2, zdims);
	if (scores && !z)
	{
		free(job.label_idx);
		return ctx->st->code != OX_OK ? ctx->st->code : OX_OUT_OF_MEMORY;
	}
	job.z = z ? z->data : NULL;
	if (rows > 0)
		ox_parallel_for(ctx, rows, 32, fn, &job);
	if (job.failed)
	{
		free(job.label_idx);
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: could not allocate scores for %lld targets",
					   op, (long long) e->n_targets);
	}
	/* canceled half-way: label_idx is partly unset, never index with it */
	if (ctx->st->code != OX_OK)
	{
		free(job.label_idx);
		return ctx->st->code;
	}
	if (job.label_idx)
	{
		ox_string  *out = labels->data;

		for (int64_t r = 0; r < rows; r++)
		{
			int64_t		k = job.label_idx[r];

			if (ml_set_string(&out[r], e->labels_str[k], e->labels_len[k], ctx->st) != OX_OK)
			{
				free(job.label_idx);
				return OX_OUT_OF_MEMORY;
			}
		}
		free(job.label_idx);
	}
	return OX_OK;
}

const ox_kernel_def ox_kernels_ml_tree[] = {
	{ML_DOMAIN, "TreeEnsembleClassifier", 1, tree_classifier_prepare, tree_run, tree_free_state},
	{ML_DOMAIN, "TreeEnsembleRegressor", 1, tree_regressor_prepare, tree_run, tree_free_state},
	{ML_DOMAIN, "TreeEnsemble", 5, tree_ensemble_prepare, tree_run, tree_free_state},
};
const int	ox_kernels_ml_tree_count = OX_KERNEL_COUNT(ox_kernels_ml_tree);
