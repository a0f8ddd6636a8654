/*
 * ml_tree_fast.c
 *	  The fast walk of tree ensembles: float features, every branch of one
 *	  comparison mode (what scikit-learn, LightGBM and XGBoost export: all
 *	  BRANCH_LEQ).  Branches that send NaN to their true side (missing
 *	  value tracking: LightGBM and XGBoost) are walked as if they did not,
 *	  so rows holding a NaN take the generic walk (ml_tree.c) instead.
 *
 * Walking one tree is a chain of dependent loads (node, feature, compare,
 * next node): a few nanoseconds per level however short the code, with a
 * mispredicted branch at every leaf.  Trees of an ensemble, and rows of a
 * batch, are independent, so the walk advances ML_FAST_LANES (row, tree)
 * pairs together, one level per step, without branches: a leaf is a node
 * whose two successors are itself, so lanes that reached their leaf simply
 * stay there until every lane has (the step that changes no lane ends the
 * group).  The out-of-order core overlaps the lanes' load chains.
 *
 * Shallow ensembles (every tree at most ML_FAST_MAX_FIXED levels: forests of
 * small data sets, most boosting) are laid out as complete trees instead:
 * the children of slot i are 2i + 1 and 2i + 2, so a step computes the next
 * slot rather than loading it, and every walk takes exactly depth steps.
 * On iris_rf (10 trees of depth 4 to 5; engine_rate, CPU time, same run)
 * the kernel went from about 148 to 86 ns per row in batches of 1024.
 *
 * With AVX-512, shallow ensembles (depth at most ML_MASK_MAX_DEPTH) over few
 * features (at most 16: a row fits one vector) skip the chain altogether:
 * every comparison of a tree is made at once, 16 slots per instruction
 * (the slot's feature fetched from the row's vector by a permute), into a
 * bit mask, and the path is then followed in that mask, in registers:
 * pos = 2 pos + 1 + bit[pos].  The comparisons are the ones the walk would
 * make (same predicate, NaN included), so the leaves are the same.  One row
 * (a row-wise SQL call: a whole run of iris_rf 0.91x the time, interleaved
 * A/B) compares 16 slots of a tree per instruction; batches compare one
 * real branch (dummy slots skipped) for 16 rows per instruction, their
 * columns transposed, and with dense weights also sum the leaves in vectors
 * (a permute picks each row's weight by its bottom position).  iris_rf in
 * batches of 1024 (engine_rate, CPU time): 76 ns a row with the
 * complete-tree walk, 51 with the batch masks, 34 with their sums.
 *
 * Leaves are then summed in model order by the caller (ml_tree.c), so scores
 * and labels are bit for bit those of the tree-by-tree walk.  For SUM and
 * AVERAGE aggregation with few targets each leaf also gets a dense row of
 * its weights (0 for targets it does not score) and a bit mask of the
 * targets it scores: adding a leaf is then a short fixed loop, and adding 0
 * leaves a sum that started at +0 unchanged.
 */
#include "kernels/cpu/ml.h"
#include "kernels/cpu/conv_fast.h"

#define ML_FAST_LANES 8

/* one node: successors indexed by the comparison's result */
typedef struct ml_fast_node
{
	float		th;
	int32_t		feature;
	int32_t		next[2];		/* [0]: comparison false, [1]: true */
} ml_fast_node;

/*
 * A node of a complete tree: the children of slot i are 2i + 1 (comparison
 * false) and 2i + 2 (true), so the next slot is computed, not loaded.
 */
typedef struct ml_full_node
{
	float		th;
	int32_t		feature;
} ml_full_node;

struct ml_tree_fast
{
	ml_fast_node *nodes;		/* n_nodes + 1: the last is a padding leaf */
	int32_t		pad;			/* its index */
	int32_t		n_trees;
	const int32_t *roots;		/* the ensemble's */
	uint8_t		mode;
	int32_t		fixed_steps;	/* > 0: every walk ends within this many steps */
	/*
	 * Some branch sends NaN to its true side (nodes_missing_value_tracks_true:
	 * LightGBM's and XGBoost's exports): the walk ignores that, so it is
	 * exact only for rows without NaN, and rows with one take the generic
	 * walk (ml_tree_fast_rows_have_nan).
	 */
	bool		nan_rows_excluded;
	/* shallow ensembles: each tree as a complete tree of depth fixed_steps */
	ml_full_node *full;			/* n_trees x (2^depth - 1), heap order */
	int32_t    *full_leaf;		/* n_trees x 2^depth: bottom slot -> leaf node */
	/* the same, every comparison at once (AVX-512), or NULL */
	float	   *mask_th;		/* n_trees x mask_slots thresholds, heap order */
	int32_t    *mask_feature;	/* n_trees x mask_slots features */
	int32_t		mask_slots;		/* 2^depth - 1 rounded up to 16 */
	uint16_t	mask_load;		/* the row's columns to load: bits 0..max_feature */
	/* batches by masks: each tree's real branches only (no dummy slots) */
	uint8_t    *full_branch;	/* while building: n_trees x (2^depth - 1), 1 where a slot is a real branch */
	int32_t    *bm_start;		/* n_trees + 1 offsets into the three below */
	uint64_t   *bm_bit;			/* the branch's bit: 1 << its slot */
	int32_t    *bm_feature;
	float	   *bm_th;
	int32_t		bm_features;	/* columns 0..max_feature (at least 1) */
	/* and their sums: each bottom position's dense weights, or NULL */
	float	   *bs_w;			/* n_trees x n_targets x bs_stride */
	uint32_t   *bs_has;			/* n_trees x bs_stride: dense_has */
	int32_t		bs_stride;		/* 32 (depth <= 5) or 64 */
	/* dense leaf weights (SUM and AVERAGE, at most 64 targets), or NULL */
	int32_t		n_targets;
	int32_t    *leaf_slot;		/* node -> leaf row, -1 for branches */
	float	   *dense_w;		/* n_leaves x n_targets */
	uint64_t   *dense_has;		/* n_leaves */
};

void
ml_tree_fast_free(ml_tree_fast *f)
{
	if (!f)
		return;
	free(f->nodes);
	free(f->full);
	free(f->full_leaf);
	ox_aligned_free(f->mask_th);
	ox_aligned_free(f->mask_feature);
	free(f->full_branch);
	free(f->bm_start);
	free(f->bm_bit);
	free(f->bm_feature);
	free(f->bm_th);
	ox_aligned_free(f->bs_w);
	ox_aligned_free(f->bs_has);
	free(f->leaf_slot);
	free(f->dense_w);
	free(f->dense_has);
	free(f);
}

/* dense weights when every leaf names each target at most once */
static ox_code
build_dense(const ml_tree_ensemble *e, ml_tree_fast *f, ox_status *st)
{
	int32_t		n_leaves = 0;
	int32_t		nt = (int32_t) e->n_targets;

	if ((e->agg != ML_AGG_SUM && e->agg != ML_AGG_AVERAGE) || e->n_targets > 64)
		return OX_OK;
	for (int32_t i = 0; i < e->n_nodes; i++)
	{
		const ml_tree_node *nd = &e->nodes[i];
		uint64_t	seen = 0;

		if (nd->mode != ML_LEAF)
			continue;
		for (int32_t k = 0; nt > 1 && k < nd->false_next; k++)
		{
			uint64_t	bit = UINT64_C(1) << e->w_target[nd->true_next + k];

			if (seen & bit)
				return OX_OK;	/* a repeated target: sums would round differently */
			seen |= bit;
		}
		n_leaves++;
	}
	f->leaf_slot = malloc(sizeof(int32_t) * (size_t) e->n_nodes);
	f->dense_w = calloc((size_t) (n_leaves ? n_leaves : 1) * nt, sizeof(float));
	f->dense_has = calloc((size_t) (n_leaves ? n_leaves : 1), sizeof(uint64_t));
	if (!f->leaf_slot || !f->dense_w || !f->dense_has)
		return ox_fail(st, OX_OUT_OF_MEMORY, "tree ensemble: could not allocate %d leaves", n_leaves);
	for (int32_t i = 0, s = 0; i < e->n_nodes; i++)
	{
		const ml_tree_node *nd = &e->nodes[i];

		f->leaf_slot[i] = -1;
		if (nd->mode != ML_LEAF)
			continue;
		if (nt == 1)
		{
			/* a single target adds the leaf's first weight (onnxruntime) */
			f->dense_w[s] = nd->value;
			f->dense_has[s] = nd->false_next > 0;
		}
		else
			for (int32_t k = 0; k < nd->false_next; k++)
			{
				int32_t		tg = e->w_target[nd->true_next + k];

				f->dense_w[(size_t) s * nt + tg] = e->w_f[nd->true_next + k];
				f->dense_has[s] |= UINT64_C(1) << tg;
			}
		f->leaf_slot[i] = s++;
	}
	f->n_targets = nt;
	return OX_OK;
}

/*
 * For the batch walk by masks with dense weights (at most
 * ML_TREE_BATCH_SUM_TARGETS targets): tree t's leaf weights by bottom position,
 * so that a vector of 16 rows' positions picks its 16 weights by a permute
 * and the sums are made in vectors, tree by tree in model order as
 * ml_tree_fast_sum makes them (bit for bit the same).
 */
static ox_code
build_batch_sums(const ml_tree_ensemble *e, ml_tree_fast *f, ox_status *st)
{
	int32_t		nt = f->n_targets;
	int32_t		depth = f->fixed_steps;
	int32_t		ni = (1 << depth) - 1;
	int32_t		bs = depth <= 5 ? 32 : 64;

	if (!f->bm_start || !f->dense_w || nt > ML_TREE_BATCH_SUM_TARGETS)
		return OX_OK;
	f->bs_w = ox_aligned_alloc(sizeof(float) * (size_t) e->n_trees * nt * bs);
	f->bs_has = ox_aligned_alloc(sizeof(uint32_t) * (size_t) e->n_trees * bs);
	if (!f->bs_w || !f->bs_has)
		return ox_fail(st, OX_OUT_OF_MEMORY, "tree ensemble: could not allocate %d trees' leaf sums",
					   e->n_trees);
	memset(f->bs_w, 0, sizeof(float) * (size_t) e->n_trees * nt * bs);
	memset(f->bs_has, 0, sizeof(uint32_t) * (size_t) e->n_trees * bs);
	for (int32_t t = 0; t < e->n_trees; t++)
		for (int32_t b = 0; b <= ni; b++)
		{
			int32_t		slot = f->leaf_slot[f->full_leaf[(size_t) t * (ni + 1) + b]];

			for (int32_t k = 0; k < nt; k++)
				f->bs_w[((size_t) t * nt + k) * bs + b] = f->dense_w[(size_t) slot * nt + k];
			f->bs_has[(size_t) t * bs + b] = (uint32_t) f->dense_has[slot];
		}
	f->bs_stride = bs;
	return OX_OK;
}

/*
 * The height of the tallest tree when at most ML_FAST_MAX_FIXED, else 0.
 * Shallow ensembles (forests of a few levels, boosting of depth 3 to 8) are
 * walked a fixed number of steps, which saves the test for "some lane
 * moved" and the step that finds none did; taller ones stop when every
 * lane has reached its leaf, so that a degenerate deep tree costs only the
 * paths rows take.  Heights of a DAG: children before parents, by an
 * iterative depth-first search (check_acyclic proved there is no cycle).
 */
#define ML_FAST_MAX_FIXED 8

static ox_code
fixed_height(const ml_tree_ensemble *e, int32_t *out, ox_status *st)
{
	int32_t    *h = malloc(sizeof(int32_t) * (size_t) e->n_nodes);
	int32_t    *stack = malloc(sizeof(int32_t) * (size_t) e->n_nodes);
	int32_t		best = 0;

	*out = 0;
	if (!h || !stack)
	{
		free(h);
		free(stack);
		return ox_fail(st, OX_OUT_OF_MEMORY, "tree ensemble: could not allocate %d heights", e->n_nodes);
	}
	for (int32_t i = 0; i < e->n_nodes; i++)
		h[i] = -1;
	for (int32_t t = 0; t < e->n_trees && best <= ML_FAST_MAX_FIXED; t++)
	{
		int32_t		sp = 0;

		stack[sp++] = e->roots[t];
		while (sp > 0)
		{
			int32_t		cur = stack[sp - 1];
			const ml_tree_node *nd = &e->nodes[cur];

			if (h[cur] >= 0)
				sp--;
			else if (nd->mode == ML_LEAF)
			{
				h[cur] = 0;
				sp--;
			}
			else if (h[nd->true_next] < 0 && sp < e->n_nodes)
				stack[sp++] = nd->true_next;
			else if (h[nd->false_next] < 0 && sp < e->n_nodes)
				stack[sp++] = nd->false_next;
			else
			{
				int32_t		a = h[nd->true_next],
							b = h[nd->false_next];

				/* (a full stack cannot happen: a path holds each node once) */
				h[cur] = 1 + (a > b ? a : b);
				sp--;
			}
		}
		if (h[e->roots[t]] > best)
			best = h[e->roots[t]];
	}
	*out = best <= ML_FAST_MAX_FIXED ? best : 0;
	free(h);
	free(stack);
	return OX_OK;
}

/* at most this many bytes for the complete trees (else the linked walk) */
#define ML_FULL_MAX_BYTES ((size_t) 64 << 20)

/*
 * Lay node o out at slot s of tree t's complete tree (depth d levels left).
 * A leaf above the bottom fills its slot with a dummy branch whose two
 * subtrees both end at that leaf, so any comparison result is right (NaN
 * included).  Depth is at most ML_FAST_MAX_FIXED: the recursion is short.
 */
static void
fill_full(const ml_tree_ensemble *e, ml_tree_fast *f, int32_t t, int32_t o, int32_t s, int32_t d)
{
	int32_t		depth = f->fixed_steps;
	size_t		ni = ((size_t) 1 << depth) - 1;
	const ml_tree_node *nd = &e->nodes[o];

	if (d == 0)
	{
		f->full_leaf[(size_t) t * (ni + 1) + (size_t) (s - (int32_t) ni)] = o;
		return;
	}
	if (nd->mode == ML_LEAF)
	{
		f->full[(size_t) t * ni + s].th = 0;
		f->full[(size_t) t * ni + s].feature = 0;
		f->full_branch[(size_t) t * ni + s] = 0;
		fill_full(e, f, t, o, 2 * s + 1, d - 1);
		fill_full(e, f, t, o, 2 * s + 2, d - 1);
		return;
	}
	f->full[(size_t) t * ni + s].th = nd->value;
	f->full[(size_t) t * ni + s].feature = nd->feature;
	f->full_branch[(size_t) t * ni + s] = 1;
	fill_full(e, f, t, nd->false_next, 2 * s + 1, d - 1);
	fill_full(e, f, t, nd->true_next, 2 * s + 2, d - 1);
}

static ox_code
build_full(const ml_tree_ensemble *e, ml_tree_fast *f, ox_status *st)
{
	size_t		ni;

	if (f->fixed_steps <= 0)
		return OX_OK;
	ni = ((size_t) 1 << f->fixed_steps) - 1;
	if ((size_t) e->n_trees * (ni * sizeof(ml_full_node) + (ni + 1) * sizeof(int32_t)) > ML_FULL_MAX_BYTES)
		return OX_OK;
	f->full = malloc((size_t) e->n_trees * ni * sizeof(ml_full_node));
	f->full_leaf = malloc((size_t) e->n_trees * (ni + 1) * sizeof(int32_t));
	f->full_branch = malloc((size_t) e->n_trees * ni);
	if (!f->full || !f->full_leaf || !f->full_branch)
		return ox_fail(st, OX_OUT_OF_MEMORY, "tree ensemble: could not allocate %d complete trees", e->n_trees);
	for (int32_t t = 0; t < e->n_trees; t++)
		fill_full(e, f, t, e->roots[t], 0, f->fixed_steps);
	return OX_OK;
}

/*
 * The comparison masks of complete trees, when the walk by masks applies:
 * AVX-512, at most ML_MASK_MAX_DEPTH levels (a tree's 2^depth - 1
 * comparisons fit 64 bits), and features 0..15 only.  Padding slots compare
 * feature 0 with 0 and are never read.
 */
#define ML_MASK_MAX_DEPTH 6
#define ML_MASK_MAX_FEATURES 16

/*
 * For batches, each tree's real branches as (bit, feature, threshold): the
 * dummy slots of leaves above the bottom lead to one leaf whatever their
 * bit, so they are not compared (iris_rf: 7 real branches of 31 slots).
 */
static ox_code
build_batch_masks(const ml_tree_ensemble *e, ml_tree_fast *f, ox_status *st)
{
	int32_t		ni = (1 << f->fixed_steps) - 1;
	int32_t		n = 0;

	for (size_t i = 0; i < (size_t) e->n_trees * ni; i++)
		n += f->full_branch[i];
	f->bm_start = malloc(sizeof(int32_t) * ((size_t) e->n_trees + 1));
	f->bm_bit = malloc(sizeof(uint64_t) * (size_t) (n ? n : 1));
	f->bm_feature = malloc(sizeof(int32_t) * (size_t) (n ? n : 1));
	f->bm_th = malloc(sizeof(float) * (size_t) (n ? n : 1));
	if (!f->bm_start || !f->bm_bit || !f->bm_feature || !f->bm_th)
		return ox_fail(st, OX_OUT_OF_MEMORY, "tree ensemble: could not allocate %d branch masks", n);
	n = 0;
	for (int32_t t = 0; t < e->n_trees; t++)
	{
		f->bm_start[t] = n;
		for (int32_t i = 0; i < ni; i++)
		{
			const ml_full_node *nd = &f->full[(size_t) t * ni + i];

			if (!f->full_branch[(size_t) t * ni + i])
				continue;
			f->bm_bit[n] = UINT64_C(1) << i;
			f->bm_feature[n] = nd->feature;
			f->bm_th[n] = nd->th;
			n++;
		}
	}
	f->bm_start[e->n_trees] = n;
	return OX_OK;
}

static ox_code
build_masks(const ml_tree_ensemble *e, ml_tree_fast *f, ox_status *st)
{
	int32_t		ni,
				slots;

	if (!f->full || f->fixed_steps > ML_MASK_MAX_DEPTH ||
		e->max_feature >= ML_MASK_MAX_FEATURES || nn_conv_fast_isa() != NN_ISA_AVX512)
		return OX_OK;
	ni = (1 << f->fixed_steps) - 1;
	slots = (ni + 15) & ~15;
	f->mask_th = ox_aligned_alloc(sizeof(float) * (size_t) e->n_trees * slots);
	f->mask_feature = ox_aligned_alloc(sizeof(int32_t) * (size_t) e->n_trees * slots);
	if (!f->mask_th || !f->mask_feature)
		return ox_fail(st, OX_OUT_OF_MEMORY, "tree ensemble: could not allocate %d comparison masks",
					   e->n_trees);
	for (int32_t t = 0; t < e->n_trees; t++)
		for (int32_t i = 0; i < slots; i++)
		{
			const ml_full_node *nd = &f->full[(size_t) t * ni + i];

			f->mask_th[(size_t) t * slots + i] = i < ni ? nd->th : 0;
			f->mask_feature[(size_t) t * slots + i] = i < ni ? nd->feature : 0;
		}
	f->mask_slots = slots;
	/* features 0..max_feature (feature 0 when no branch reads one: the dummies read it) */
	f->bm_features = e->max_feature >= 0 ? (int32_t) e->max_feature + 1 : 1;
	f->mask_load = (uint16_t) ((1u << f->bm_features) - 1);
	return build_batch_masks(e, f, st);
}

ox_code
ml_tree_fast_build(ml_tree_ensemble *e, ox_status *st)
{
	ml_tree_fast *f;

	e->fast = NULL;
	if (!e->same_mode || e->common_mode > ML_BRANCH_NEQ ||
		e->n_trees < 1 || e->n_nodes >= INT32_MAX - 1)
		return OX_OK;
	f = calloc(1, sizeof(ml_tree_fast));
	if (!f)
		return ox_fail(st, OX_OUT_OF_MEMORY, "tree ensemble: could not allocate its fast walk");
	f->nan_rows_excluded = e->has_missing;
	f->nodes = malloc(sizeof(ml_fast_node) * ((size_t) e->n_nodes + 1));
	if (!f->nodes)
	{
		ml_tree_fast_free(f);
		return ox_fail(st, OX_OUT_OF_MEMORY, "tree ensemble: could not allocate %d nodes", e->n_nodes);
	}
	for (int32_t i = 0; i <= e->n_nodes; i++)
	{
		ml_fast_node *fn = &f->nodes[i];

		if (i == e->n_nodes || e->nodes[i].mode == ML_LEAF)
		{
			/* feature 0 exists: the walk runs only on rows of >= 1 column */
			fn->th = 0;
			fn->feature = 0;
			fn->next[0] = fn->next[1] = i;
		}
		else
		{
			fn->th = e->nodes[i].value;
			fn->feature = e->nodes[i].feature;
			fn->next[0] = e->nodes[i].false_next;
			fn->next[1] = e->nodes[i].true_next;
		}
	}
	f->pad = e->n_nodes;
	f->n_trees = e->n_trees;
	f->roots = e->roots;
	f->mode = e->common_mode;
	if (fixed_height(e, &f->fixed_steps, st) != OX_OK || build_full(e, f, st) != OX_OK ||
		build_masks(e, f, st) != OX_OK || build_dense(e, f, st) != OX_OK ||
		build_batch_sums(e, f, st) != OX_OK)
	{
		ml_tree_fast_free(f);
		return st->code;
	}
	/* only the builders read it */
	free(f->full_branch);
	f->full_branch = NULL;
	e->fast = f;
	return OX_OK;
}

bool
ml_tree_fast_dense(const ml_tree_fast *f)
{
	return f->dense_w != NULL;
}

/*
 * Whether rows [0, nrows) of x hold a NaN that the fast walk would send the
 * wrong way: false when no branch tracks missing values.  Every column is
 * read (a NaN beyond the model's features changes nothing, but checking them
 * keeps the loop branch-free; it is a few ns a row against microseconds of
 * walking a boosted ensemble).
 */
bool
ml_tree_fast_rows_have_nan(const ml_tree_fast *f, const float *x, int64_t stride, int64_t nrows)
{
	const float *end = x + stride * nrows;
	int			nan = 0;

	if (!f->nan_rows_excluded)
		return false;
	for (const float *p = x; p < end; p++)
		nan |= *p != *p;
	return nan != 0;
}

/*
 * Advance L lanes (idx[], features XR(l)) to their leaves: a fixed number
 * of steps for shallow ensembles, else until a step moves no lane.
 */
#define ML_WALK_GROUP(L, XR, CMP) \
	do { \
		if (f->fixed_steps > 0) \
		{ \
			for (int32_t step = 0; step < f->fixed_steps; step++) \
				for (int l = 0; l < (L); l++) \
				{ \
					const ml_fast_node *nd = &nodes[idx[l]]; \
\
					idx[l] = nd->next[XR(l)[nd->feature] CMP nd->th]; \
				} \
		} \
		else \
		{ \
			int32_t		changed; \
\
			do \
			{ \
				changed = 0; \
				for (int l = 0; l < (L); l++) \
				{ \
					const ml_fast_node *nd = &nodes[idx[l]]; \
					int32_t		nx = nd->next[XR(l)[nd->feature] CMP nd->th]; \
\
					changed |= nx ^ idx[l]; \
					idx[l] = nx; \
				} \
			} while (changed); \
		} \
	} while (0)

#define ML_XR_ONE(l) x
#define ML_XR_LANE(l) xr[l]

/*
 * One row (a row-wise SQL call): its trees in groups of 8 lanes, the last
 * one of 4 when at most 4 trees remain, all lanes reading the same row.
 * Several rows: lanes walk (row, tree) pairs in row-major order, lane i of
 * the block being row i / n_trees, tree i % n_trees.  The padding leaf fills
 * a group's unused lanes, with row 0's features (read at column 0 only).
 */
#define ML_DEFINE_FAST_WALK(NAME, CMP) \
static void \
NAME(const ml_tree_fast *f, const float *x, int64_t stride, int64_t nrows, int32_t *leaf) \
{ \
	const ml_fast_node *nodes = f->nodes; \
	int32_t		nt = f->n_trees; \
	int64_t		total = nrows * nt; \
	int64_t		r = 0; \
	int32_t		t = 0; \
\
	if (nrows == 1) \
	{ \
		for (int32_t base = 0; base < nt; base += ML_FAST_LANES) \
		{ \
			int32_t		idx[ML_FAST_LANES]; \
			int			nl = nt - base < ML_FAST_LANES ? nt - base : ML_FAST_LANES; \
\
			for (int l = 0; l < ML_FAST_LANES; l++) \
				idx[l] = l < nl ? f->roots[base + l] : f->pad; \
			if (nl <= 4) \
				ML_WALK_GROUP(4, ML_XR_ONE, CMP); \
			else \
				ML_WALK_GROUP(ML_FAST_LANES, ML_XR_ONE, CMP); \
			memcpy(leaf + base, idx, sizeof(int32_t) * (size_t) nl); \
		} \
		return; \
	} \
	for (int64_t base = 0; base < total; base += ML_FAST_LANES) \
	{ \
		int32_t		idx[ML_FAST_LANES]; \
		const float *xr[ML_FAST_LANES]; \
		int			nl = total - base < ML_FAST_LANES ? (int) (total - base) : ML_FAST_LANES; \
\
		for (int l = 0; l < ML_FAST_LANES; l++) \
		{ \
			if (l < nl) \
			{ \
				idx[l] = f->roots[t]; \
				xr[l] = x + r * stride; \
				if (++t == nt) \
				{ \
					t = 0; \
					r++; \
				} \
			} \
			else \
			{ \
				idx[l] = f->pad; \
				xr[l] = x; \
			} \
		} \
		ML_WALK_GROUP(ML_FAST_LANES, ML_XR_LANE, CMP); \
		memcpy(leaf + base, idx, sizeof(int32_t) * (size_t) nl); \
	} \
}

/*
 * The same over complete trees.  A lane holds the absolute position of its
 * node, pos = tree base + slot; the next position is base + 2 slot + 1 + c
 * = 2 pos + (1 - base) + c, so only pos is on the chain of dependent loads
 * (the per-lane constant 1 - base is not).  One row: lanes are trees.
 * Several rows: lanes are 8 rows walking the same tree, which shares the
 * constant, and the lanes' row pointers are loop invariants.
 */
#define ML_FULL_STEPS(L, XR, K, CMP) \
	for (int32_t step = 0; step < depth; step++) \
		for (int l = 0; l < (L); l++) \
		{ \
			const ml_full_node *nd = &full[pos[l]]; \
\
			pos[l] = 2 * pos[l] + (K) + (XR(l)[nd->feature] CMP nd->th); \
		}

#define ML_K_LANE(l) k[l]

#define ML_DEFINE_FULL_WALK(NAME, CMP) \
static void \
NAME(const ml_tree_fast *f, const float *x, int64_t stride, int64_t nrows, int32_t *leaf) \
{ \
	const ml_full_node *full = f->full; \
	const int32_t *full_leaf = f->full_leaf; \
	int32_t		depth = f->fixed_steps; \
	int64_t		ni = ((int64_t) 1 << depth) - 1; \
	int32_t		nt = f->n_trees; \
\
	if (nrows == 1) \
	{ \
		for (int32_t base = 0; base < nt; base += ML_FAST_LANES) \
		{ \
			int64_t		pos[ML_FAST_LANES]; \
			int64_t		k[ML_FAST_LANES]; \
			int			nl = nt - base < ML_FAST_LANES ? nt - base : ML_FAST_LANES; \
\
			/* unused lanes walk tree 0 again: never stored */ \
			for (int l = 0; l < ML_FAST_LANES; l++) \
			{ \
				pos[l] = (l < nl ? base + l : 0) * ni; \
				k[l] = 1 - pos[l]; \
			} \
			if (nl <= 4) \
			{ \
				ML_FULL_STEPS(4, ML_XR_ONE, ML_K_LANE(l), CMP) \
			} \
			else \
			{ \
				ML_FULL_STEPS(ML_FAST_LANES, ML_XR_ONE, ML_K_LANE(l), CMP) \
			} \
			for (int l = 0; l < nl; l++) \
			{ \
				int64_t		t = base + l; \
\
				leaf[t] = full_leaf[t * (ni + 1) + (pos[l] - t * ni - ni)]; \
			} \
		} \
		return; \
	} \
	for (int64_t r0 = 0; r0 < nrows; r0 += ML_FAST_LANES) \
	{ \
		const float *xr[ML_FAST_LANES]; \
		int			nl = nrows - r0 < ML_FAST_LANES ? (int) (nrows - r0) : ML_FAST_LANES; \
\
		/* unused lanes walk row 0 again: never stored */ \
		for (int l = 0; l < ML_FAST_LANES; l++) \
			xr[l] = x + (l < nl ? r0 + l : 0) * stride; \
		for (int32_t t = 0; t < nt; t++) \
		{ \
			int64_t		pos[ML_FAST_LANES]; \
			int64_t		tb = t * ni; \
			int64_t		kk = 1 - tb; \
\
			for (int l = 0; l < ML_FAST_LANES; l++) \
				pos[l] = tb; \
			ML_FULL_STEPS(ML_FAST_LANES, ML_XR_LANE, kk, CMP) \
			for (int l = 0; l < nl; l++) \
				leaf[(r0 + l) * nt + t] = full_leaf[t * (ni + 1) + (pos[l] - tb - ni)]; \
		} \
	} \
}

ML_DEFINE_FULL_WALK(full_leq, <=)
ML_DEFINE_FULL_WALK(full_lt, <)
ML_DEFINE_FULL_WALK(full_gte, >=)
ML_DEFINE_FULL_WALK(full_gt, >)
ML_DEFINE_FULL_WALK(full_eq, ==)
ML_DEFINE_FULL_WALK(full_neq, !=)

/*
 * The walk by masks, for one row (a row-wise call): the comparisons of 8
 * trees at a time as 64-bit masks in the lanes of a vector, then depth
 * steps on all 8 lanes together (a variable shift picks each lane's bit).
 * Lanes past the last tree walk an all-zero mask and are not stored.
 */
#define ML_DEFINE_MASK_WALK(NAME, PRED) \
__attribute__((target("avx512f"))) \
static void \
NAME(const ml_tree_fast *f, const float *x, int32_t *out) \
{ \
	int32_t		depth = f->fixed_steps; \
	int64_t		ni = ((int64_t) 1 << depth) - 1; \
	int32_t		nt = f->n_trees; \
	int32_t		slots = f->mask_slots; \
	const __m512i one = _mm512_set1_epi64(1); \
	__m512		xv = _mm512_maskz_loadu_ps(f->mask_load, x); \
\
	for (int32_t t0 = 0; t0 < nt; t0 += 8) \
	{ \
		int			nl = nt - t0 < 8 ? nt - t0 : 8; \
		uint64_t	bits[8] __attribute__((aligned(64))) = {0}; \
		int64_t		pos[8] __attribute__((aligned(64))); \
		__m512i		b, \
					p = _mm512_setzero_si512(); \
\
		for (int l = 0; l < nl; l++) \
		{ \
			const float *th = f->mask_th + (size_t) (t0 + l) * slots; \
			const int32_t *ft = f->mask_feature + (size_t) (t0 + l) * slots; \
\
			for (int32_t c = 0; c < slots; c += 16) \
			{ \
				__m512		xs = _mm512_permutexvar_ps(_mm512_load_si512(ft + c), xv); \
\
				bits[l] |= (uint64_t) _mm512_cmp_ps_mask(xs, _mm512_load_ps(th + c), PRED) << c; \
			} \
		} \
		/* each lane: pos = 2 pos + 1 + bit pos of its mask */ \
		b = _mm512_load_si512(bits); \
		for (int32_t step = 0; step < depth; step++) \
			p = _mm512_add_epi64(_mm512_add_epi64(p, p), \
								 _mm512_add_epi64(one, _mm512_and_si512(_mm512_srlv_epi64(b, p), one))); \
		_mm512_store_si512(pos, p); \
		for (int l = 0; l < nl; l++) \
			out[t0 + l] = f->full_leaf[(t0 + l) * (ni + 1) + (pos[l] - ni)]; \
	} \
}

/*
 * The walk by masks for batches: 16 rows at a time, their columns
 * transposed so that a branch compares one column of 16 rows with its
 * threshold in one instruction; the results are or-ed into each row's
 * 64-bit mask of its tree's comparisons (rows 0-7 in lo, 8-15 in hi), and
 * the path is followed as in the one-row walk.  Only real branches are
 * compared.  Lanes past the last row repeat row 0 and are not stored.
 * Each row's leaves (leaf), else its sums (acc, has), else its class
 * (label: see ml_tree_fast_batch_labels).
 */
#define ML_DEFINE_BATCH_MASK_WALK(NAME, PRED) \
__attribute__((target("avx512f"))) \
static void \
NAME(const ml_tree_fast *f, const float *x, int64_t stride, int64_t nrows, int32_t *leaf, \
	 float *acc, uint32_t *has, const float *base, int64_t *label) \
{ \
	int32_t		depth = f->fixed_steps; \
	int64_t		ni = ((int64_t) 1 << depth) - 1; \
	int32_t		nt = f->n_trees; \
	int32_t		nf = f->bm_features; \
	int32_t		n = f->n_targets; \
	int32_t		bs = f->bs_stride; \
	const __m512i one = _mm512_set1_epi64(1); \
	float		xt[ML_MASK_MAX_FEATURES][16] __attribute__((aligned(64))); \
	float		accv[ML_TREE_BATCH_SUM_TARGETS][16] __attribute__((aligned(64))); \
	uint32_t	hasv[16] __attribute__((aligned(64))); \
	int64_t		pos[16] __attribute__((aligned(64))); \
	int32_t		best[16] __attribute__((aligned(64))); \
\
	for (int64_t r0 = 0; r0 < nrows; r0 += 16) \
	{ \
		int			nl = nrows - r0 < 16 ? (int) (nrows - r0) : 16; \
		__m512i		hv = _mm512_setzero_si512(); \
\
		for (int l = 0; l < 16; l++) \
		{ \
			const float *xr = x + (l < nl ? r0 + l : 0) * stride; \
\
			for (int32_t c = 0; c < nf; c++) \
				xt[c][l] = xr[c]; \
		} \
		if (!leaf) \
			for (int32_t k = 0; k < n; k++) \
				_mm512_store_ps(accv[k], _mm512_setzero_ps()); \
		for (int32_t t = 0; t < nt; t++) \
		{ \
			__m512i		lo = _mm512_setzero_si512(), \
						hi = _mm512_setzero_si512(), \
						plo = _mm512_setzero_si512(), \
						phi = _mm512_setzero_si512(); \
\
			for (int32_t b = f->bm_start[t]; b < f->bm_start[t + 1]; b++) \
			{ \
				__mmask16	m = _mm512_cmp_ps_mask(_mm512_load_ps(xt[f->bm_feature[b]]), \
												   _mm512_set1_ps(f->bm_th[b]), PRED); \
				__m512i		bit = _mm512_set1_epi64((long long) f->bm_bit[b]); \
\
				lo = _mm512_mask_or_epi64(lo, (__mmask8) m, lo, bit); \
				hi = _mm512_mask_or_epi64(hi, (__mmask8) (m >> 8), hi, bit); \
			} \
			for (int32_t step = 0; step < depth; step++) \
			{ \
				plo = _mm512_add_epi64(_mm512_add_epi64(plo, plo), \
									   _mm512_add_epi64(one, _mm512_and_si512(_mm512_srlv_epi64(lo, plo), one))); \
				phi = _mm512_add_epi64(_mm512_add_epi64(phi, phi), \
									   _mm512_add_epi64(one, _mm512_and_si512(_mm512_srlv_epi64(hi, phi), one))); \
			} \
			if (leaf) \
			{ \
				const int32_t *fl = f->full_leaf + t * (ni + 1) - ni; \
\
				_mm512_store_si512(pos, plo); \
				_mm512_store_si512(pos + 8, phi); \
				for (int l = 0; l < nl; l++) \
					leaf[(r0 + l) * nt + t] = fl[pos[l]]; \
			} \
			else \
			{ \
				/* the bottom positions 0..2^depth-1 as 16 int32 lanes */ \
				__m512i		bp = _mm512_sub_epi32(_mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi64_epi32(plo)), \
																	 _mm512_cvtepi64_epi32(phi), 1), \
												  _mm512_set1_epi32((int) ni)); \
				__mmask16	upper = _mm512_test_epi32_mask(bp, _mm512_set1_epi32(32)); \
				const uint32_t *th = f->bs_has + (size_t) t * bs; \
				__m512i		h = _mm512_permutex2var_epi32(_mm512_load_si512(th), bp, _mm512_load_si512(th + 16)); \
\
				if (bs == 64) \
					h = _mm512_mask_blend_epi32(upper, h, _mm512_permutex2var_epi32(_mm512_load_si512(th + 32), bp, \
																				   _mm512_load_si512(th + 48))); \
				hv = _mm512_or_si512(hv, h); \
				for (int32_t k = 0; k < n; k++) \
				{ \
					const float *tw = f->bs_w + ((size_t) t * n + k) * bs; \
					__m512		w = _mm512_permutex2var_ps(_mm512_load_ps(tw), bp, _mm512_load_ps(tw + 16)); \
\
					if (bs == 64) \
						w = _mm512_mask_blend_ps(upper, w, _mm512_permutex2var_ps(_mm512_load_ps(tw + 32), bp, \
																				  _mm512_load_ps(tw + 48))); \
					_mm512_store_ps(accv[k], _mm512_add_ps(_mm512_load_ps(accv[k]), w)); \
				} \
			} \
		} \
		if (!leaf && label) \
		{ \
			/* finalize_classifier_f's choice for n > 2, 16 rows at once */ \
			__m512i		b = _mm512_set1_epi32(-1); \
			__m512		bw = _mm512_setzero_ps(); \
\
			for (int32_t k = 0; k < n; k++) \
			{ \
				__m512		a = _mm512_load_ps(accv[k]); \
				__mmask16	hk = _mm512_test_epi32_mask(hv, _mm512_set1_epi32((int) (1u << k))); \
				__mmask16	take; \
\
				if (base) \
				{ \
					/* a base value scores every class: has ? sum + base : base */ \
					__m512		bk = _mm512_set1_ps(base[k]); \
\
					a = _mm512_mask_add_ps(bk, hk, a, bk); \
					hk = 0xffff; \
				} \
				take = hk & (_mm512_cmplt_epi32_mask(b, _mm512_setzero_si512()) | \
							 _mm512_cmp_ps_mask(a, bw, _CMP_GT_OQ)); \
				b = _mm512_mask_mov_epi32(b, take, _mm512_set1_epi32(k)); \
				bw = _mm512_mask_mov_ps(bw, take, a); \
			} \
			_mm512_store_si512(best, b); \
			for (int l = 0; l < nl; l++) \
				label[r0 + l] = best[l] < 0 ? 0 : best[l]; \
		} \
		else if (!leaf) \
		{ \
			_mm512_store_si512(hasv, hv); \
			for (int l = 0; l < nl; l++) \
			{ \
				for (int32_t k = 0; k < n; k++) \
					acc[(r0 + l) * n + k] = accv[k][l]; \
				has[r0 + l] = hasv[l]; \
			} \
		} \
	} \
}

/* the predicates of C's comparisons: ordered, except != (true with NaN) */
ML_DEFINE_MASK_WALK(masks_leq, _CMP_LE_OQ)
ML_DEFINE_MASK_WALK(masks_lt, _CMP_LT_OQ)
ML_DEFINE_MASK_WALK(masks_gte, _CMP_GE_OQ)
ML_DEFINE_MASK_WALK(masks_gt, _CMP_GT_OQ)
ML_DEFINE_MASK_WALK(masks_eq, _CMP_EQ_OQ)
ML_DEFINE_MASK_WALK(masks_neq, _CMP_NEQ_UQ)
ML_DEFINE_BATCH_MASK_WALK(batch_masks_leq, _CMP_LE_OQ)
ML_DEFINE_BATCH_MASK_WALK(batch_masks_lt, _CMP_LT_OQ)
ML_DEFINE_BATCH_MASK_WALK(batch_masks_gte, _CMP_GE_OQ)
ML_DEFINE_BATCH_MASK_WALK(batch_masks_gt, _CMP_GT_OQ)
ML_DEFINE_BATCH_MASK_WALK(batch_masks_eq, _CMP_EQ_OQ)
ML_DEFINE_BATCH_MASK_WALK(batch_masks_neq, _CMP_NEQ_UQ)

ML_DEFINE_FAST_WALK(walk_leq, <=)
ML_DEFINE_FAST_WALK(walk_lt, <)
ML_DEFINE_FAST_WALK(walk_gte, >=)
ML_DEFINE_FAST_WALK(walk_gt, >)
ML_DEFINE_FAST_WALK(walk_eq, ==)
ML_DEFINE_FAST_WALK(walk_neq, !=)

/* leaf != NULL: each row's leaves, else its sums and target mask, or its class; by f->mode */
typedef void (*batch_masks_fn) (const ml_tree_fast *f, const float *x, int64_t stride, int64_t nrows,
								int32_t *leaf, float *acc, uint32_t *has, const float *base,
								int64_t *label);

static const batch_masks_fn batch_masks_by_mode[] = {
	[ML_BRANCH_LEQ] = batch_masks_leq,
	[ML_BRANCH_LT] = batch_masks_lt,
	[ML_BRANCH_GTE] = batch_masks_gte,
	[ML_BRANCH_GT] = batch_masks_gt,
	[ML_BRANCH_EQ] = batch_masks_eq,
	[ML_BRANCH_NEQ] = batch_masks_neq,
};

static void
batch_masks(const ml_tree_fast *f, const float *x, int64_t stride, int64_t nrows, int32_t *leaf,
			float *acc, uint32_t *has, const float *base, int64_t *label)
{
	/* the fast walk exists only for these modes (ml_tree_fast_build) */
	batch_masks_by_mode[f->mode] (f, x, stride, nrows, leaf, acc, has, base, label);
}

/*
 * Rows' dense sums straight from the batch walk by masks: acc[r * n_targets
 * + k] as ml_tree_fast_sum writes them, has[r] its mask.  Only for an
 * ensemble with ml_tree_fast_has_batch_sums.
 */
void
ml_tree_fast_batch_sums(const ml_tree_fast *f, const float *x, int64_t stride, int64_t nrows,
						float *acc, uint32_t *has)
{
	batch_masks(f, x, stride, nrows, NULL, acc, has, NULL, NULL);
}

/*
 * Rows' classes straight from the batch walk, for a classifier of more than
 * two classes whose run asks for the label alone: label[r] = the index of
 * the first class of the highest score among those scored, after base
 * (one per class, or NULL), 0 when none is scored; what finalize_classifier_f
 * makes of ml_tree_fast_batch_sums's sums.
 */
void
ml_tree_fast_batch_labels(const ml_tree_fast *f, const float *x, int64_t stride, int64_t nrows,
						  const float *base, int64_t *label)
{
	batch_masks(f, x, stride, nrows, NULL, NULL, NULL, base, label);
}

bool
ml_tree_fast_has_batch_sums(const ml_tree_fast *f)
{
	return f->bs_w != NULL;
}

void
ml_tree_fast_walk(const ml_tree_fast *f, const float *x, int64_t stride, int64_t nrows, int32_t *leaf)
{
	if (f->bm_start && nrows > 1)
	{
		batch_masks(f, x, stride, nrows, leaf, NULL, NULL, NULL, NULL);
		return;
	}
	if (f->mask_th && nrows == 1)
	{
		switch (f->mode)
		{
			case ML_BRANCH_LEQ:
				masks_leq(f, x, leaf);
				break;
			case ML_BRANCH_LT:
				masks_lt(f, x, leaf);
				break;
			case ML_BRANCH_GTE:
				masks_gte(f, x, leaf);
				break;
			case ML_BRANCH_GT:
				masks_gt(f, x, leaf);
				break;
			case ML_BRANCH_EQ:
				masks_eq(f, x, leaf);
				break;
			case ML_BRANCH_NEQ:
				masks_neq(f, x, leaf);
				break;
		}
		return;
	}
	if (f->full)
	{
		switch (f->mode)
		{
			case ML_BRANCH_LEQ:
				full_leq(f, x, stride, nrows, leaf);
				break;
			case ML_BRANCH_LT:
				full_lt(f, x, stride, nrows, leaf);
				break;
			case ML_BRANCH_GTE:
				full_gte(f, x, stride, nrows, leaf);
				break;
			case ML_BRANCH_GT:
				full_gt(f, x, stride, nrows, leaf);
				break;
			case ML_BRANCH_EQ:
				full_eq(f, x, stride, nrows, leaf);
				break;
			case ML_BRANCH_NEQ:
				full_neq(f, x, stride, nrows, leaf);
				break;
		}
		return;
	}
	switch (f->mode)
	{
		case ML_BRANCH_LEQ:
			walk_leq(f, x, stride, nrows, leaf);
			break;
		case ML_BRANCH_LT:
			walk_lt(f, x, stride, nrows, leaf);
			break;
		case ML_BRANCH_GTE:
			walk_gte(f, x, stride, nrows, leaf);
			break;
		case ML_BRANCH_GT:
			walk_gt(f, x, stride, nrows, leaf);
			break;
		case ML_BRANCH_EQ:
			walk_eq(f, x, stride, nrows, leaf);
			break;
		case ML_BRANCH_NEQ:
			walk_neq(f, x, stride, nrows, leaf);
			break;
	}
}

/*
 * acc[0..n_targets) = the sums from 0 of the leaves' dense weights, tree by
 * tree in model order; returns the mask of targets some leaf scored.
 */
uint64_t
ml_tree_fast_sum(const ml_tree_fast *f, const int32_t *leaf, float *acc)
{
	const int32_t *slot_of = f->leaf_slot;
	const float *dw = f->dense_w;
	const uint64_t *dh = f->dense_has;
	int32_t		nt = f->n_targets;
	uint64_t	has = 0;

	/* sums in locals: through acc, each add would wait for the last store */
	if (nt <= 4)
	{
		float		a0 = 0,
					a1 = 0,
					a2 = 0,
					a3 = 0;

		for (int32_t t = 0; t < f->n_trees; t++)
		{
			int32_t		slot = slot_of[leaf[t]];
			const float *w = dw + (size_t) slot * nt;

			a0 += w[0];
			if (nt > 1)
				a1 += w[1];
			if (nt > 2)
				a2 += w[2];
			if (nt > 3)
				a3 += w[3];
			has |= dh[slot];
		}
		acc[0] = a0;
		if (nt > 1)
			acc[1] = a1;
		if (nt > 2)
			acc[2] = a2;
		if (nt > 3)
			acc[3] = a3;
		return has;
	}
	{
		float		a[64] = {0};

		for (int32_t t = 0; t < f->n_trees; t++)
		{
			int32_t		slot = slot_of[leaf[t]];
			const float *w = dw + (size_t) slot * nt;

			for (int32_t k = 0; k < nt; k++)
				a[k] += w[k];
			has |= dh[slot];
		}
		memcpy(acc, a, sizeof(float) * (size_t) nt);
	}
	return has;
}
