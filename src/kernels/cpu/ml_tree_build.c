/*
 * ml_tree_build.c
 *	  Turn tree ensemble attributes into the flat node array that
 *	  ml_tree.c walks: TreeEnsembleClassifier / TreeEnsembleRegressor
 *	  (ai.onnx.ml opsets 1 and 3) and TreeEnsemble (opset 5).
 *
 * Everything a hostile model could get wrong is checked here, once, so
 * that the walk in run() needs no checks at all: list lengths agree, node
 * ids are unique per tree, children exist in the same tree, no tree has a
 * cycle (a walk always ends at a leaf), weights name leaves and targets in
 * range.  Feature ids are checked against the input width at run time.
 */
#include "kernels/cpu/ml.h"

#include <stdio.h>

/* (tree id, node id) -> position, sorted for binary search */
typedef struct node_key
{
	int64_t		tree;
	int64_t		node;
	int32_t		index;
} node_key;

static int
node_key_cmp(const void *a, const void *b)
{
	const node_key *x = a;
	const node_key *y = b;

	if (x->tree != y->tree)
		return x->tree < y->tree ? -1 : 1;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return x->index < y->index ? -1 : (x->index > y->index);
}

static int32_t
node_key_find(const node_key *keys, int32_t n, int64_t tree, int64_t node)
{
	int32_t		lo = 0;
	int32_t		hi = n;

	while (lo < hi)
	{
		int32_t		mid = lo + (hi - lo) / 2;
		const node_key *k = &keys[mid];

		if (k->tree < tree || (k->tree == tree && k->node < node))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && keys[lo].tree == tree && keys[lo].node == node)
		return keys[lo].index;
	return -1;
}

void
ml_tree_free(ml_tree_ensemble *e)
{
	if (!e)
		return;
	free(e->nodes);
	free(e->values_d);
	free(e->member_off);
	free(e->member_cnt);
	free(e->members);
	free(e->roots);
	free(e->w_target);
	free(e->w_f);
	free(e->w_d);
	free(e->base);
	free(e->labels_i64);
	free(e->labels_str);
	free(e->labels_len);
	ml_tree_fast_free(e->fast);
	free(e->leaf_z);
	free(e->leaf_label);
	memset(e, 0, sizeof(*e));
}

static void *
ml_calloc(size_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

/*
 * Check that no walk from a root can loop: an iterative depth-first search
 * (a hostile chain of a million nodes must not overflow the C stack) that
 * fails when it meets a node still on its path.  Shared subtrees are
 * harmless and allowed.
 */
static ox_code
check_acyclic(const char *op, ml_tree_ensemble *e, ox_status *st)
{
	uint8_t    *color = ml_calloc((size_t) e->n_nodes, 1);	/* 0 new, 1 on path, 2 done */
	int32_t    *stack = ml_calloc((size_t) e->n_nodes, sizeof(int32_t));
	uint8_t    *next_child = ml_calloc((size_t) e->n_nodes, 1);
	ox_code		rc = OX_OK;

	if (!color || !stack || !next_child)
	{
		rc = ox_fail(st, OX_OUT_OF_MEMORY, "%s: could not allocate %d tree nodes", op, e->n_nodes);
		goto done;
	}
	for (int32_t t = 0; t < e->n_trees && rc == OX_OK; t++)
	{
		int32_t		sp = 0;
		int32_t		root = e->roots[t];

		if (color[root])
			continue;
		stack[sp++] = root;
		color[root] = 1;
		while (sp > 0)
		{
			int32_t		cur = stack[sp - 1];
			const ml_tree_node *nd = &e->nodes[cur];
			int32_t		child;

			if (nd->mode == ML_LEAF || next_child[cur] == 2)
			{
				color[cur] = 2;
				sp--;
				continue;
			}
			child = next_child[cur] == 0 ? nd->true_next : nd->false_next;
			next_child[cur]++;
			if (color[child] == 1)
			{
				rc = ox_fail(st, OX_INVALID_MODEL, "%s: tree %d has a cycle through node position %d",
							 op, t, child);
				break;
			}
			if (color[child] == 0)
			{
				color[child] = 1;
				stack[sp++] = child;	/* each node is pushed once: sp <= n_nodes */
			}
		}
	}
done:
	free(color);
	free(stack);
	free(next_child);
	return rc;
}

/* facts derived from the node array once it is complete */
static void
finish_modes(ml_tree_ensemble *e)
{
	int			first = -1;

	e->same_mode = true;
	e->has_missing = false;
	e->max_feature = -1;
	for (int32_t i = 0; i < e->n_nodes; i++)
	{
		const ml_tree_node *nd = &e->nodes[i];

		if (nd->mode == ML_LEAF)
			continue;
		if (nd->feature > e->max_feature)
			e->max_feature = nd->feature;
		if (nd->missing_true)
			e->has_missing = true;
		if (first < 0)
			first = nd->mode;
		else if (nd->mode != first)
			e->same_mode = false;
	}
	/* MEMBER nodes need the generic walk */
	if (first == ML_BRANCH_MEMBER)
		e->same_mode = false;
	e->common_mode = (uint8_t) (first < 0 ? ML_LEAF : first);
}

static int
parse_legacy_mode(const char *s, size_t len)
{
	static const char *const names[] = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT",
	"BRANCH_EQ", "BRANCH_NEQ"};

	for (int m = 0; m < 6; m++)
		if (strlen(names[m]) == len && memcmp(names[m], s, len) == 0)
			return m;
	if (len == 4 && memcmp(s, "LEAF", 4) == 0)
		return ML_LEAF;
	return -1;
}

/*
 * TreeEnsembleClassifier / TreeEnsembleRegressor.  The weight lists are
 * class_* for the classifier and target_* for the regressor.
 */
ox_code
ml_tree_build_legacy(const ox_node *node, bool classifier, ml_tree_ensemble *e, ox_status *st)
{
	const char *op = node->op_type;
	const int64_t *treeids,
			   *nodeids,
			   *featureids,
			   *trueids,
			   *falseids,
			   *missing;
	const int64_t *w_tree,
			   *w_node,
			   *w_ids;
	const ox_attr *modes_attr = ox_node_attr(node, "nodes_modes");
	double	   *values = NULL;
	double	   *weights = NULL;
	int64_t		n_values,
				n_wvalues;
	int			n,
				n_missing,
				nw;
	node_key   *keys = NULL;
	int32_t    *leaf_count = NULL;
	int32_t    *leaf_fill = NULL;
	ox_code		rc = OX_OK;
	const char *pfx = classifier ? "class" : "target";
	char		name_tree[32],
				name_node[32],
				name_ids[32],
				name_w[32],
				name_wt[48];

	memset(e, 0, sizeof(*e));
	e->classifier = classifier;
	n = ox_attr_ints(node, "nodes_treeids", &treeids);
	if (ox_attr_ints(node, "nodes_nodeids", &nodeids) != n ||
		ox_attr_ints(node, "nodes_featureids", &featureids) != n ||
		ox_attr_ints(node, "nodes_truenodeids", &trueids) != n ||
		ox_attr_ints(node, "nodes_falsenodeids", &falseids) != n ||
		!modes_attr || modes_attr->type != OX_ATTR_STRINGS || modes_attr->n != n)
		return ox_fail(st, OX_INVALID_MODEL,
					   "%s: nodes_treeids, nodes_nodeids, nodes_featureids, nodes_modes, nodes_truenodeids and nodes_falsenodeids must all have %d entries",
					   op, n);
	if (n > INT32_MAX / 2)
		return ox_fail(st, OX_LIMIT_EXCEEDED, "%s: %d nodes is too many", op, n);
	n_missing = ox_attr_ints(node, "nodes_missing_value_tracks_true", &missing);
	if (n_missing != 0 && n_missing != n)
		return ox_fail(st, OX_INVALID_MODEL, "%s: nodes_missing_value_tracks_true has %d entries, expected %d",
					   op, n_missing, n);

	snprintf(name_tree, sizeof(name_tree), "%s_treeids", pfx);
	snprintf(name_node, sizeof(name_node), "%s_nodeids", pfx);
	snprintf(name_ids, sizeof(name_ids), "%s_ids", pfx);
	snprintf(name_w, sizeof(name_w), "%s_weights", pfx);
	snprintf(name_wt, sizeof(name_wt), "%s_weights_as_tensor", pfx);
	nw = ox_attr_ints(node, name_tree, &w_tree);
	if (ox_attr_ints(node, name_node, &w_node) != nw || ox_attr_ints(node, name_ids, &w_ids) != nw)
		return ox_fail(st, OX_INVALID_MODEL, "%s: %s, %s and %s must have the same length",
					   op, name_tree, name_node, name_ids);

	/* number of targets or classes */
	if (classifier)
	{
		const int64_t *li;
		const ox_attr *ls = ox_node_attr(node, "classlabels_strings");
		int			nli = ox_attr_ints(node, "classlabels_int64s", &li);
		int			nls = (ls && ls->type == OX_ATTR_STRINGS) ? ls->n : 0;

		if ((nli > 0) == (nls > 0))
			return ox_fail(st, OX_INVALID_MODEL,
						   "%s: exactly one of classlabels_int64s and classlabels_strings must be set", op);
		e->n_targets = nli > 0 ? nli : nls;
		if (nli > 0)
		{
			e->labels_i64 = malloc(sizeof(int64_t) * nli);
			if (!e->labels_i64)
				goto oom;
			memcpy(e->labels_i64, li, sizeof(int64_t) * nli);
		}
		else
		{
			e->labels_str = malloc(sizeof(char *) * nls);
			e->labels_len = malloc(sizeof(size_t) * nls);
			if (!e->labels_str || !e->labels_len)
				goto oom;
			for (int i = 0; i < nls; i++)
				e->labels_str[i] = ml_attr_str_at(ls, i, &e->labels_len[i]);
		}
		e->agg = ML_AGG_SUM;
	}
	else
	{
		const char *agg = ox_attr_string(node, "aggregate_function", "SUM");

		e->n_targets = ox_attr_int(node, "n_targets", 1);
		if (e->n_targets <= 0 || e->n_targets > INT32_MAX)
			return ox_fail(st, OX_INVALID_MODEL, "%s: n_targets is %lld, expected a positive count",
						   op, (long long) e->n_targets);
		if (strcmp(agg, "SUM") == 0)
			e->agg = ML_AGG_SUM;
		else if (strcmp(agg, "AVERAGE") == 0)
			e->agg = ML_AGG_AVERAGE;
		else if (strcmp(agg, "MIN") == 0)
			e->agg = ML_AGG_MIN;
		else if (strcmp(agg, "MAX") == 0)
			e->agg = ML_AGG_MAX;
		else
			return ox_fail(st, OX_UNSUPPORTED, "%s: aggregate_function \"%s\" is not supported", op, agg);
	}
	/* the class labels are allocated by now: free them on failure */
	if ((rc = ml_parse_post_transform(node, &e->post, st)) != OX_OK)
		goto fail;

	if ((rc = ml_attr_reals(node, "base_values", "base_values_as_tensor", &e->base, &e->n_base, st)) != OX_OK)
		goto fail;
	if (classifier ? (e->n_targets == 2 ? e->n_base > 2 : (e->n_base != 0 && e->n_base != e->n_targets))
		: (e->n_base != 0 && e->n_base != e->n_targets))
	{
		rc = ox_fail(st, OX_INVALID_MODEL, "%s: base_values has %lld entries for %lld %s",
					 op, (long long) e->n_base, (long long) e->n_targets, classifier ? "classes" : "targets");
		goto fail;
	}
	if ((rc = ml_attr_reals(node, "nodes_values", "nodes_values_as_tensor", &values, &n_values, st)) != OX_OK)
		goto fail;
	if (n_values != n)
	{
		rc = ox_fail(st, OX_INVALID_MODEL, "%s: nodes_values has %lld entries, expected %d",
					 op, (long long) n_values, n);
		goto fail;
	}
	if ((rc = ml_attr_reals(node, name_w, name_wt, &weights, &n_wvalues, st)) != OX_OK)
		goto fail;
	if (n_wvalues != nw)
	{
		rc = ox_fail(st, OX_INVALID_MODEL, "%s: %s has %lld entries, expected %d",
					 op, name_w, (long long) n_wvalues, nw);
		goto fail;
	}

	/* nodes */
	e->n_nodes = n;
	e->nodes = ml_calloc((size_t) n, sizeof(ml_tree_node));
	e->values_d = ml_calloc((size_t) n, sizeof(double));
	e->roots = ml_calloc((size_t) n, sizeof(int32_t));
	keys = ml_calloc((size_t) n, sizeof(node_key));
	if (!e->nodes || !e->values_d || !e->roots || !keys)
		goto oom;
	for (int i = 0; i < n; i++)
	{
		size_t		len;
		const char *s = ml_attr_str_at(modes_attr, i, &len);
		int			mode = parse_legacy_mode(s, len);
		ml_tree_node *nd = &e->nodes[i];

		if (mode < 0)
		{
			rc = ox_fail(st, OX_UNSUPPORTED, "%s: node %d has unknown mode \"%.*s\"",
						 op, i, (int) (len > 64 ? 64 : len), s);
			goto fail;
		}
		nd->mode = (uint8_t) mode;
		nd->value = (float) values[i];
		e->values_d[i] = values[i];
		nd->missing_true = (n_missing && missing[i] == 1) ? 1 : 0;
		if (mode != ML_LEAF)
		{
			if (featureids[i] < 0 || featureids[i] > INT32_MAX)
			{
				rc = ox_fail(st, OX_INVALID_MODEL, "%s: node %d reads feature %lld",
							 op, i, (long long) featureids[i]);
				goto fail;
			}
			nd->feature = (int32_t) featureids[i];
		}
		keys[i].tree = treeids[i];
		keys[i].node = nodeids[i];
		keys[i].index = i;
	}
	qsort(keys, (size_t) n, sizeof(node_key), node_key_cmp);
	for (int i = 1; i < n; i++)
		if (keys[i].tree == keys[i - 1].tree && keys[i].node == keys[i - 1].node)
		{
			rc = ox_fail(st, OX_INVALID_MODEL, "%s: node %lld of tree %lld is defined twice",
						 op, (long long) keys[i].node, (long long) keys[i].tree);
			goto fail;
		}
	for (int i = 0; i < n; i++)
	{
		ml_tree_node *nd = &e->nodes[i];
		int32_t		t,
					f;

		if (nd->mode == ML_LEAF)
			continue;
		t = node_key_find(keys, n, treeids[i], trueids[i]);
		f = node_key_find(keys, n, treeids[i], falseids[i]);
		if (t < 0 || f < 0)
		{
			rc = ox_fail(st, OX_INVALID_MODEL, "%s: node %lld of tree %lld points to node %lld, which tree %lld does not have",
						 op, (long long) nodeids[i], (long long) treeids[i],
						 (long long) (t < 0 ? trueids[i] : falseids[i]), (long long) treeids[i]);
			goto fail;
		}
		nd->true_next = t;
		nd->false_next = f;
	}

	/* trees in order of first appearance, rooted at their first node */
	{
		uint8_t    *first_of = ml_calloc((size_t) n, 1);

		if (!first_of)
			goto oom;
		for (int i = 0; i < n;)
		{
			int			j = i;
			int32_t		mn = keys[i].index;

			while (j < n && keys[j].tree == keys[i].tree)
			{
				if (keys[j].index < mn)
					mn = keys[j].index;
				j++;
			}
			first_of[mn] = 1;
			i = j;
		}
		for (int i = 0; i < n; i++)
			if (first_of[i])
				e->roots[e->n_trees++] = i;
		free(first_of);
	}

	/* weights, grouped by leaf in attribute order */
	leaf_count = ml_calloc((size_t) n + 1, sizeof(int32_t));
	leaf_fill = ml_calloc((size_t) n + 1, sizeof(int32_t));
	e->w_target = ml_calloc((size_t) nw, sizeof(int32_t));
	e->w_f = ml_calloc((size_t) nw, sizeof(float));
	e->w_d = ml_calloc((size_t) nw, sizeof(double));
	if (!leaf_count || !leaf_fill || !e->w_target || !e->w_f || !e->w_d)
		goto oom;
	{
		int32_t    *pos = ml_calloc((size_t) nw, sizeof(int32_t));
		int64_t		distinct_first = nw > 0 ? w_ids[0] : 0;
		bool		one_class = true;

		if (!pos)
			goto oom;
		e->weights_all_positive = true;
		for (int j = 0; j < nw; j++)
		{
			int32_t		at = node_key_find(keys, n, w_tree[j], w_node[j]);

			if (w_ids[j] != distinct_first)
				one_class = false;
			if (weights[j] < 0)
				e->weights_all_positive = false;
			if (at < 0)
			{
				free(pos);
				rc = ox_fail(st, OX_INVALID_MODEL, "%s: weight %d names node %lld of tree %lld, which does not exist",
							 op, j, (long long) w_node[j], (long long) w_tree[j]);
				goto fail;
			}
			if (w_ids[j] < 0 || w_ids[j] >= e->n_targets)
			{
				free(pos);
				rc = ox_fail(st, OX_INVALID_MODEL, "%s: %s[%d] is %lld, expected 0 to %lld",
							 op, name_ids, j, (long long) w_ids[j], (long long) e->n_targets - 1);
				goto fail;
			}
			/* weights on branches come from old converters: ignored, like onnxruntime */
			pos[j] = e->nodes[at].mode == ML_LEAF ? at : -1;
			if (pos[j] >= 0)
				leaf_count[at]++;
		}
		e->binary_case = classifier && e->n_targets == 2 && nw > 0 && one_class;
		for (int i = 0, acc = 0; i < n; i++)
		{
			leaf_fill[i] = acc;
			if (e->nodes[i].mode == ML_LEAF)
			{
				e->nodes[i].true_next = acc;
				e->nodes[i].false_next = leaf_count[i];
				e->nodes[i].value = 0;
				e->values_d[i] = 0;
			}
			acc += leaf_count[i];
		}
		for (int j = 0; j < nw; j++)
		{
			int32_t		at = pos[j];
			int32_t		k;

			if (at < 0)
				continue;
			k = leaf_fill[at]++;
			e->w_target[k] = (int32_t) w_ids[j];
			e->w_d[k] = weights[j];
			e->w_f[k] = (float) weights[j];
			if (k == e->nodes[at].true_next)
			{
				e->nodes[at].value = (float) weights[j];
				e->values_d[at] = weights[j];
			}
		}
		e->n_weights = nw;
		free(pos);
	}
	finish_modes(e);
	rc = check_acyclic(op, e, st);
	if (rc != OX_OK)
		goto fail;
	free(values);
	free(weights);
	free(keys);
	free(leaf_count);
	free(leaf_fill);
	return OX_OK;

oom:
	rc = ox_fail(st, OX_OUT_OF_MEMORY, "%s: could not allocate the tree ensemble", op);
fail:
	free(values);
	free(weights);
	free(keys);
	free(leaf_count);
	free(leaf_fill);
	ml_tree_free(e);
	return rc;
}

/* a tensor attribute as doubles (float, double or float16), malloc'ed */
static ox_code
tensor_attr_reals(const ox_node *node, const char *name, bool required, double **out,
				  int64_t *n, ox_status *st)
{
	const ox_tensor *t = ox_attr_tensor(node, name);
	int64_t		cnt;

	*out = NULL;
	*n = 0;
	if (!t)
	{
		if (required)
			return ox_fail(st, OX_INVALID_MODEL, "%s: attribute %s is required", node->op_type, name);
		return OX_OK;
	}
	if (t->dtype != OX_FLOAT && t->dtype != OX_DOUBLE && t->dtype != OX_FLOAT16)
		return ox_fail(st, OX_INVALID_MODEL, "%s: %s has element type %s, expected float, double or float16",
					   node->op_type, name, ox_dtype_name(t->dtype));
	cnt = ox_tensor_numel(t);
	if (cnt < 0 || cnt > INT32_MAX / 2)
		return ox_fail(st, OX_LIMIT_EXCEEDED, "%s: %s is too large", node->op_type, name);
	*out = ml_calloc((size_t) cnt, sizeof(double));
	if (!*out)
		return ox_fail(st, OX_OUT_OF_MEMORY, "%s: could not allocate %s", node->op_type, name);
	for (int64_t i = 0; i < cnt; i++)
		(*out)[i] = ox_tensor_get_double(t, i);
	*n = cnt;
	return OX_OK;
}

/*
 * TreeEnsemble (ai.onnx.ml opset 5): nodes and leaves are separate lists;
 * in the flat array branches come first, then leaves (one weight each).
 */
ox_code
ml_tree_build_v5(const ox_node *node, ml_tree_ensemble *e, ox_status *st)
{
	const char *op = node->op_type;
	const int64_t *featureids,
			   *trueids,
			   *falseids,
			   *trueleafs,
			   *falseleafs,
			   *targetids,
			   *roots,
			   *missing;
	const ox_tensor *modes_t = ox_attr_tensor(node, "nodes_modes");
	double	   *splits = NULL,
			   *lweights = NULL,
			   *members = NULL;
	int64_t		n_splits,
				n_lweights,
				n_members;
	int			n,
				n_leaves,
				n_roots,
				n_missing;
	int64_t		agg,
				post;
	ox_code		rc = OX_OK;

	memset(e, 0, sizeof(*e));
	e->v5 = true;
	n = ox_attr_ints(node, "nodes_featureids", &featureids);
	if (!modes_t || ox_tensor_numel(modes_t) != n ||
		ox_attr_ints(node, "nodes_truenodeids", &trueids) != n ||
		ox_attr_ints(node, "nodes_falsenodeids", &falseids) != n ||
		ox_attr_ints(node, "nodes_trueleafs", &trueleafs) != n ||
		ox_attr_ints(node, "nodes_falseleafs", &falseleafs) != n)
		return ox_fail(st, OX_INVALID_MODEL,
					   "%s: nodes_featureids, nodes_modes, nodes_truenodeids, nodes_falsenodeids, nodes_trueleafs and nodes_falseleafs must all have %d entries",
					   op, n);
	if (modes_t->dtype != OX_UINT8)
		return ox_fail(st, OX_INVALID_MODEL, "%s: nodes_modes has element type %s, expected uint8",
					   op, ox_dtype_name(modes_t->dtype));
	n_leaves = ox_attr_ints(node, "leaf_targetids", &targetids);
	n_roots = ox_attr_ints(node, "tree_roots", &roots);
	n_missing = ox_attr_ints(node, "nodes_missing_value_tracks_true", &missing);
	if (n_missing != 0 && n_missing != n)
		return ox_fail(st, OX_INVALID_MODEL, "%s: nodes_missing_value_tracks_true has %d entries, expected %d",
					   op, n_missing, n);
	if ((int64_t) n + n_leaves > INT32_MAX / 2)
		return ox_fail(st, OX_LIMIT_EXCEEDED, "%s: too many nodes", op);
	e->n_targets = ox_attr_int(node, "n_targets", -1);
	if (e->n_targets <= 0 || e->n_targets > INT32_MAX)
		return ox_fail(st, OX_INVALID_MODEL, "%s: n_targets is %lld, expected a positive count",
					   op, (long long) e->n_targets);
	agg = ox_attr_int(node, "aggregate_function", 1);
	post = ox_attr_int(node, "post_transform", 0);
	switch (agg)
	{
		case 0:
			e->agg = ML_AGG_AVERAGE;
			break;
		case 1:
			e->agg = ML_AGG_SUM;
			break;
		case 2:
			e->agg = ML_AGG_MIN;
			break;
		case 3:
			e->agg = ML_AGG_MAX;
			break;
		default:
			return ox_fail(st, OX_UNSUPPORTED, "%s: aggregate_function %lld is not supported", op, (long long) agg);
	}
	switch (post)
	{
		case 0:
			e->post = ML_POST_NONE;
			break;
		case 1:
			e->post = ML_POST_SOFTMAX;
			break;
		case 2:
			e->post = ML_POST_LOGISTIC;
			break;
		case 3:
			e->post = ML_POST_SOFTMAX_ZERO;
			break;
		case 4:
			e->post = ML_POST_PROBIT;
			break;
		default:
			return ox_fail(st, OX_UNSUPPORTED, "%s: post_transform %lld is not supported", op, (long long) post);
	}
	if ((rc = tensor_attr_reals(node, "nodes_splits", true, &splits, &n_splits, st)) != OX_OK ||
		(rc = tensor_attr_reals(node, "leaf_weights", true, &lweights, &n_lweights, st)) != OX_OK ||
		(rc = tensor_attr_reals(node, "membership_values", false, &members, &n_members, st)) != OX_OK)
		goto fail;
	if (n_splits != n || n_lweights != n_leaves)
	{
		rc = ox_fail(st, OX_INVALID_MODEL, "%s: nodes_splits has %lld entries (expected %d) and leaf_weights %lld (expected %d)",
					 op, (long long) n_splits, n, (long long) n_lweights, n_leaves);
		goto fail;
	}

	e->n_nodes = n + n_leaves;
	e->nodes = ml_calloc((size_t) e->n_nodes, sizeof(ml_tree_node));
	e->values_d = ml_calloc((size_t) e->n_nodes, sizeof(double));
	e->roots = ml_calloc((size_t) n_roots, sizeof(int32_t));
	e->w_target = ml_calloc((size_t) n_leaves, sizeof(int32_t));
	e->w_f = ml_calloc((size_t) n_leaves, sizeof(float));
	e->w_d = ml_calloc((size_t) n_leaves, sizeof(double));
	if (!e->nodes || !e->values_d || !e->roots || !e->w_target || !e->w_f || !e->w_d)
		goto oom;
	e->n_weights = n_leaves;
	for (int k = 0; k < n_leaves; k++)
	{
		ml_tree_node *nd = &e->nodes[n + k];

		if (targetids[k] < 0 || targetids[k] >= e->n_targets)
		{
			rc = ox_fail(st, OX_INVALID_MODEL, "%s: leaf_targetids[%d] is %lld, expected 0 to %lld",
						 op, k, (long long) targetids[k], (long long) e->n_targets - 1);
			goto fail;
		}
		e->w_target[k] = (int32_t) targetids[k];
		e->w_d[k] = lweights[k];
		e->w_f[k] = (float) lweights[k];
		nd->mode = ML_LEAF;
		nd->true_next = k;
		nd->false_next = 1;
		nd->value = (float) lweights[k];
		e->values_d[n + k] = lweights[k];
	}
	{
		const uint8_t *modes = modes_t->data;
		int64_t		mpos = 0;
		bool		any_member = false;

		for (int i = 0; i < n; i++)
			if (modes[i] == ML_BRANCH_MEMBER)
				any_member = true;
		if (any_member)
		{
			e->member_off = ml_calloc((size_t) n, sizeof(int32_t));
			e->member_cnt = ml_calloc((size_t) n, sizeof(int32_t));
			e->members = ml_calloc((size_t) n_members, sizeof(double));
			if (!e->member_off || !e->member_cnt || !e->members)
				goto oom;
		}
		for (int i = 0; i < n; i++)
		{
			ml_tree_node *nd = &e->nodes[i];
			int64_t		t = trueids[i];
			int64_t		f = falseids[i];
			int64_t		tlim = trueleafs[i] ? n_leaves : n;
			int64_t		flim = falseleafs[i] ? n_leaves : n;

			if (modes[i] > ML_BRANCH_MEMBER)
			{
				rc = ox_fail(st, OX_UNSUPPORTED, "%s: node %d has unknown mode %d", op, i, modes[i]);
				goto fail;
			}
			if (t < 0 || t >= tlim || f < 0 || f >= flim)
			{
				rc = ox_fail(st, OX_INVALID_MODEL, "%s: node %d has children %lld and %lld out of range",
							 op, i, (long long) t, (long long) f);
				goto fail;
			}
			if (featureids[i] < 0 || featureids[i] > INT32_MAX)
			{
				rc = ox_fail(st, OX_INVALID_MODEL, "%s: node %d reads feature %lld",
							 op, i, (long long) featureids[i]);
				goto fail;
			}
			nd->mode = modes[i];
			nd->feature = (int32_t) featureids[i];
			nd->value = (float) splits[i];
			e->values_d[i] = splits[i];
			nd->true_next = (int32_t) (trueleafs[i] ? n + t : t);
			nd->false_next = (int32_t) (falseleafs[i] ? n + f : f);
			nd->missing_true = (n_missing && missing[i] == 1) ? 1 : 0;
			if (modes[i] == ML_BRANCH_MEMBER)
			{
				/* this node's members: the next NaN-terminated run */
				int64_t		start = mpos;

				while (mpos < n_members && !isnan(members[mpos]))
					mpos++;
				if (mpos >= n_members && start == mpos)
				{
					rc = ox_fail(st, OX_INVALID_MODEL, "%s: membership_values has no set for node %d", op, i);
					goto fail;
				}
				e->member_off[i] = (int32_t) start;
				e->member_cnt[i] = (int32_t) (mpos - start);
				memcpy(e->members + start, members + start, sizeof(double) * (size_t) (mpos - start));
				mpos++;			/* skip the NaN */
			}
		}
	}
	for (int r = 0; r < n_roots; r++)
	{
		int64_t		root = roots[r];

		if (root < 0 || root >= n)
		{
			rc = ox_fail(st, OX_INVALID_MODEL, "%s: tree_roots[%d] is %lld, expected 0 to %d",
						 op, r, (long long) root, n - 1);
			goto fail;
		}
		/* a tree that is a single leaf: both branches name the same leaf */
		if (trueleafs[root] && falseleafs[root] && trueids[root] == falseids[root])
			e->roots[r] = n + (int32_t) trueids[root];
		else
			e->roots[r] = (int32_t) root;
	}
	e->n_trees = n_roots;
	finish_modes(e);
	if ((rc = check_acyclic(op, e, st)) != OX_OK)
		goto fail;
	free(splits);
	free(lweights);
	free(members);
	return OX_OK;

oom:
	rc = ox_fail(st, OX_OUT_OF_MEMORY, "%s: could not allocate the tree ensemble", op);
fail:
	free(splits);
	free(lweights);
	free(members);
	ml_tree_free(e);
	return rc;
}
