/*
 * text_tfidf.c
 *	  TfIdfVectorizer (opset 9): n-gram counts of int64 or string sequences
 *	  against a fixed pool, weighted as TF, IDF or TFIDF.
 *
 * The pool is parsed once into a trie, exactly as onnxruntime (and the
 * ONNX reference) build it: n-grams are numbered 1, 2, ... across all
 * lengths in pool order, only lengths in [min_gram_length,
 * max_gram_length] are inserted, and an n-gram's node carries its number
 * (0 for a pure prefix).  Trie edges live in one open-addressing hash
 * keyed by (parent node, token), so building and walking are O(1) per
 * step.  String pools are interned: each distinct pool string gets a
 * token number and input strings are looked up by binary search, so the
 * trie only ever sees integers.
 *
 * Counting walks, for each skip distance 1..max_skip_count+1 and each
 * start position, down the trie with items start, start+skip, ...;
 * unigrams are counted in the first pass only.
 */
#include "kernels/cpu/text.h"

#include <stdlib.h>
#include <string.h>

typedef enum tfidf_mode
{
	TFIDF_TF,
	TFIDF_IDF,
	TFIDF_TFIDF
} tfidf_mode;

typedef struct tfidf_node
{
	int64_t		id;				/* 1-based n-gram number, 0 = prefix only */
	bool		has_children;
} tfidf_node;

typedef struct tfidf_edge
{
	int64_t		parent;			/* -1 marks an empty slot */
	int64_t		key;
	int64_t		child;
} tfidf_edge;

typedef struct tfidf_state
{
	tfidf_mode	mode;
	int64_t		min_gram;
	int64_t		max_gram;
	int64_t		max_skip;
	int64_t		out_size;
	int			n_indexes;
	int64_t    *indexes;		/* ngram_indexes */
	int			n_weights;
	float	   *weights;
	bool		strings;		/* pool_strings (else pool_int64s) */
	int64_t		n_tokens;
	ox_string  *tokens;			/* sorted distinct pool strings; token = position */
	tfidf_node *nodes;			/* nodes[0] is the root */
	int64_t		n_nodes;
	tfidf_edge *edges;
	int64_t		edge_mask;		/* table size - 1 (a power of two) */
} tfidf_state;

static uint64_t
mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static int64_t
edge_slot(const tfidf_state *s, int64_t parent, int64_t key)
{
	uint64_t	h = mix64((uint64_t) parent * 0x9e3779b97f4a7c15ULL ^ mix64((uint64_t) key));
	int64_t		i = (int64_t) (h & (uint64_t) s->edge_mask);

	while (s->edges[i].parent != -1 && !(s->edges[i].parent == parent && s->edges[i].key == key))
		i = (i + 1) & s->edge_mask;
	return i;
}

/* child of parent along key, or -1 */
static inline int64_t
trie_child(const tfidf_state *s, int64_t parent, int64_t key)
{
	int64_t		i = edge_slot(s, parent, key);

	return s->edges[i].parent == -1 ? -1 : s->edges[i].child;
}

void
ox_text_tfidf_free(void *state)
{
	tfidf_state *s = state;

	if (!s)
		return;
	free(s->indexes);
	free(s->weights);
	if (s->tokens)
		for (int64_t i = 0; i < s->n_tokens; i++)
			free(s->tokens[i].data);
	free(s->tokens);
	free(s->nodes);
	free(s->edges);
	free(s);
}

static int
token_cmp(const void *a, const void *b)
{
	const ox_string *x = a;
	const ox_string *y = b;
	size_t		n = x->len < y->len ? x->len : y->len;
	int			c = memcmp(x->data, y->data, n);

	if (c != 0)
		return c;
	return x->len < y->len ? -1 : (x->len > y->len ? 1 : 0);
}

/* token number of a string, or -1 when the pool does not hold it */
static int64_t
token_of(const tfidf_state *s, const char *data, size_t len)
{
	ox_string	key;
	const ox_string *hit;

	key.data = (char *) (data ? data : "");
	key.len = len;
	hit = bsearch(&key, s->tokens, s->n_tokens, sizeof(ox_string), token_cmp);
	return hit ? (int64_t) (hit - s->tokens) : -1;
}

static ox_code
tfidf_intern(ox_prepare_ctx *pc, tfidf_state *s, const ox_attr *pool)
{
	int64_t		n = pool->n,
				u = 0;

	if (!(s->tokens = calloc(n > 0 ? n : 1, sizeof(ox_string))))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "TfIdfVectorizer: out of memory");
	for (int64_t i = 0; i < n; i++)
	{
		size_t		len = pool->string_lens ? pool->string_lens[i] : strlen(pool->strings[i]);

		s->tokens[i].data = malloc(len + 1);
		s->n_tokens = i + 1;
		if (!s->tokens[i].data)
			return ox_fail(pc->st, OX_OUT_OF_MEMORY, "TfIdfVectorizer: out of memory");
		memcpy(s->tokens[i].data, pool->strings[i], len);
		s->tokens[i].data[len] = '\0';
		s->tokens[i].len = len;
	}
	qsort(s->tokens, n, sizeof(ox_string), token_cmp);
	for (int64_t i = 0; i < n; i++)
	{
		if (u > 0 && token_cmp(&s->tokens[u - 1], &s->tokens[i]) == 0)
		{
			free(s->tokens[i].data);
			continue;
		}
		s->tokens[u++] = s->tokens[i];
	}
	s->n_tokens = u;
	return OX_OK;
}

/* the pool's i-th item as a trie key */
static int64_t
pool_key(const tfidf_state *s, const ox_attr *pool, int64_t i)
{
	if (!s->strings)
		return pool->ints[i];
	return token_of(s, pool->strings[i],
					pool->string_lens ? pool->string_lens[i] : strlen(pool->strings[i]));
}

ox_code
ox_text_tfidf_prepare(ox_prepare_ctx *pc)
{
	const ox_node *node = pc->node;
	const char *mode = ox_attr_string(node, "mode", NULL);
	const ox_attr *pi = ox_node_attr(node, "pool_int64s");
	const ox_attr *ps = ox_node_attr(node, "pool_strings");
	const ox_attr *pool;
	const int64_t *counts,
			   *idx;
	const float *w;
	int			n_counts,
				n_idx,
				n_w;
	int64_t		pool_len,
				ngram_id = 1,
				max_edges;
	tfidf_state *s;
	ox_code		rc = OX_OK;

	if (!mode)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "TfIdfVectorizer: the mode attribute is required");
	if ((pi && pi->n > 0) == (ps && ps->n > 0))
		return ox_fail(pc->st, OX_INVALID_ARGUMENT,
					   "TfIdfVectorizer: exactly one of pool_int64s and pool_strings must be set");
	pool = (pi && pi->n > 0) ? pi : ps;
	if ((pool == pi && pool->type != OX_ATTR_INTS) || (pool == ps && pool->type != OX_ATTR_STRINGS))
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "TfIdfVectorizer: the pool attribute has the wrong type");
	pool_len = pool->n;
	n_counts = ox_attr_ints(node, "ngram_counts", &counts);
	n_idx = ox_attr_ints(node, "ngram_indexes", &idx);
	n_w = ox_attr_floats(node, "weights", &w);
	if (!(s = calloc(1, sizeof(*s))))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "TfIdfVectorizer: out of memory");
	s->strings = pool == ps;
	if (strcmp(mode, "TF") == 0)
		s->mode = TFIDF_TF;
	else if (strcmp(mode, "IDF") == 0)
		s->mode = TFIDF_IDF;
	else if (strcmp(mode, "TFIDF") == 0)
		s->mode = TFIDF_TFIDF;
	else
	{
		rc = ox_fail(pc->st, OX_UNSUPPORTED, "TfIdfVectorizer: unsupported mode \"%s\"", mode);
		goto fail;
	}
	s->min_gram = ox_attr_int(node, "min_gram_length", 0);
	s->max_gram = ox_attr_int(node, "max_gram_length", 0);
	s->max_skip = ox_attr_int(node, "max_skip_count", 0);
	if (s->min_gram < 1 || s->max_gram < s->min_gram || s->max_skip < 0 ||
		s->max_skip > ((int64_t) 1 << 31))
	{
		rc = ox_fail(pc->st, OX_INVALID_ARGUMENT,
					 "TfIdfVectorizer: invalid gram lengths [%lld, %lld] or max_skip_count %lld",
					 (long long) s->min_gram, (long long) s->max_gram, (long long) s->max_skip);
		goto fail;
	}
	if (n_counts < 1 || n_idx < 1)
	{
		rc = ox_fail(pc->st, OX_INVALID_ARGUMENT, "TfIdfVectorizer: ngram_counts and ngram_indexes are required");
		goto fail;
	}
	for (int i = 0; i < n_counts; i++)
		if (counts[i] < 0 || counts[i] > pool_len || (i > 0 && counts[i] < counts[i - 1]))
		{
			rc = ox_fail(pc->st, OX_INVALID_ARGUMENT,
						 "TfIdfVectorizer: ngram_counts[%d] = %lld is out of order or beyond the pool of %lld",
						 i, (long long) counts[i], (long long) pool_len);
			goto fail;
		}
	s->out_size = 0;
	for (int i = 0; i < n_idx; i++)
	{
		if (idx[i] < 0 || idx[i] >= OX_MAX_ELEMENTS)
		{
			rc = ox_fail(pc->st, OX_INVALID_ARGUMENT, "TfIdfVectorizer: ngram_indexes[%d] = %lld is out of range",
						 i, (long long) idx[i]);
			goto fail;
		}
		if (idx[i] + 1 > s->out_size)
			s->out_size = idx[i] + 1;
	}
	if (n_w > 0 && n_w < n_idx)
	{
		rc = ox_fail(pc->st, OX_INVALID_ARGUMENT, "TfIdfVectorizer: %d weights for %d n-grams",
					 n_w, n_idx);
		goto fail;
	}
	s->n_indexes = n_idx;
	s->n_weights = n_w;
	if (!(s->indexes = malloc(sizeof(int64_t) * n_idx)) ||
		(n_w > 0 && !(s->weights = malloc(sizeof(float) * n_w))))
	{
		rc = ox_fail(pc->st, OX_OUT_OF_MEMORY, "TfIdfVectorizer: out of memory");
		goto fail;
	}
	memcpy(s->indexes, idx, sizeof(int64_t) * n_idx);
	if (n_w > 0)
		memcpy(s->weights, w, sizeof(float) * n_w);
	if (s->strings && (rc = tfidf_intern(pc, s, pool)) != OX_OK)
		goto fail;

	/* at most one node and one edge per pool item */
	max_edges = 16;
	while (max_edges < 2 * pool_len + 2)
		max_edges *= 2;
	s->edge_mask = max_edges - 1;
	s->nodes = calloc(pool_len + 1, sizeof(tfidf_node));
	s->edges = malloc(sizeof(tfidf_edge) * max_edges);
	if (!s->nodes || !s->edges)
	{
		rc = ox_fail(pc->st, OX_OUT_OF_MEMORY, "TfIdfVectorizer: out of memory");
		goto fail;
	}
	for (int64_t i = 0; i < max_edges; i++)
		s->edges[i].parent = -1;
	s->n_nodes = 1;
	for (int i = 0; i < n_counts; i++)
	{
		int64_t		size = i + 1;
		int64_t		start = counts[i];
		int64_t		stop = i + 1 < n_counts ? counts[i + 1] : pool_len;
		int64_t		ngrams = (stop - start) / size;

		if (size < s->min_gram || size > s->max_gram)
		{
			ngram_id += ngrams;
			continue;
		}
		for (int64_t g = 0; g < ngrams; g++)
		{
			int64_t		cur = 0;

			for (int64_t k = 0; k < size; k++)
			{
				int64_t		key = pool_key(s, pool, start + g * size + k);
				int64_t		slot = edge_slot(s, cur, key);

				if (s->edges[slot].parent == -1)
				{
					s->edges[slot].parent = cur;
					s->edges[slot].key = key;
					s->edges[slot].child = s->n_nodes++;
				}
				s->nodes[cur].has_children = true;
				cur = s->edges[slot].child;
			}
			if (ngram_id > n_idx)
			{
				rc = ox_fail(pc->st, OX_INVALID_ARGUMENT,
							 "TfIdfVectorizer: the pool holds n-gram %lld but ngram_indexes has only %d entries",
							 (long long) ngram_id, n_idx);
				goto fail;
			}
			s->nodes[cur].id = ngram_id++;
		}
	}
	pc->state = s;
	return OX_OK;

fail:
	ox_text_tfidf_free(s);
	return rc;
}

/* count the row's n-grams into counts[], indexed by n-gram number - 1 */
static void
tfidf_row(const tfidf_state *s, const int64_t *keys, int64_t C, int64_t *counts)
{
	int64_t		start_size = s->min_gram;

	for (int64_t skip = 1; skip <= s->max_skip + 1; skip++)
	{
		for (int64_t start = 0; start < C; start++)
		{
			int64_t		cur = 0,
						item = start;

			if (start_size - 1 > 0 && (C - 1 - start) / skip < start_size - 1)
				break;
			for (int64_t size = 1; s->nodes[cur].has_children && size <= s->max_gram && item < C; size++)
			{
				int64_t		child = (s->strings && keys[item] < 0) ? -1 : trie_child(s, cur, keys[item]);

				if (child < 0)
					break;
				if (size >= start_size && s->nodes[child].id != 0)
					counts[s->nodes[child].id - 1]++;
				cur = child;
				if (C - item <= skip)
					break;
				item += skip;
			}
		}
		if (start_size == 1)
		{
			start_size = 2;
			if (start_size > s->max_gram)
				break;
		}
	}
}

ox_code
ox_text_tfidf_run(ox_kernel_ctx *ctx)
{
	const tfidf_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	char		b1[OX_TEXT_SHAPE_LEN];
	int64_t		rows,
				C,
				dims[2];
	int64_t    *keys = NULL,
			   *counts = NULL;
	ox_tensor  *y;
	float	   *out;
	int			out_rank;

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "TfIdfVectorizer: prepare did not run");
	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "TfIdfVectorizer: X is required");
	if (s->strings ? x->dtype != OX_STRING : (x->dtype != OX_INT64 && x->dtype != OX_INT32))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "TfIdfVectorizer: X is %s but the pool holds %s",
					   ox_dtype_name(x->dtype), s->strings ? "strings" : "int64s");
	if (x->rank > 2)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "TfIdfVectorizer: X must be [C] or [N, C], got %s",
					   ox_shape_str(x->rank, x->dims, b1, sizeof(b1)));
	rows = x->rank == 2 ? x->dims[0] : 1;
	C = x->rank == 0 ? 1 : x->dims[x->rank - 1];
	out_rank = x->rank == 2 ? 2 : 1;
	dims[0] = x->rank == 2 ? rows : s->out_size;
	dims[1] = s->out_size;
	if (ox_shape_numel(out_rank, dims) < 0 || ox_tensor_numel(x) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "TfIdfVectorizer: output too large");
	if (!(y = ox_out_tensor(ctx, 0, OX_FLOAT, out_rank, dims)))
		return ctx->st->code;
	out = y->data;
	if (ox_tensor_numel(y) > 0)
		memset(out, 0, sizeof(float) * (size_t) ox_tensor_numel(y));
	if (C <= 0 || rows <= 0)
		return OX_OK;
	keys = ox_workspace_alloc(sizeof(int64_t) * C, ctx->st, "TfIdfVectorizer");
	counts = ox_workspace_alloc(sizeof(int64_t) * s->n_indexes, ctx->st, "TfIdfVectorizer");
	if (!keys || !counts)
	{
		free(keys);
		free(counts);
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "TfIdfVectorizer: out of memory");
	}
	for (int64_t r = 0; r < rows; r++)
	{
		float	   *row = out + r * s->out_size;

		for (int64_t i = 0; i < C; i++)
		{
			int64_t		e = r * C + i;

			if (s->strings)
			{
				const ox_string *str = (const ox_string *) x->data + e;

				/* -1: a string outside the pool, which never matches */
				keys[i] = token_of(s, str->data, str->len);
			}
			else
				keys[i] = x->dtype == OX_INT64 ? OX_DATA(x, int64_t)[e] : OX_DATA(x, int32_t)[e];
		}
		memset(counts, 0, sizeof(int64_t) * s->n_indexes);
		tfidf_row(s, keys, C, counts);

		/*
		 * Weighting follows onnxruntime: weights[i] belongs to the i-th pool
		 * n-gram; IDF writes the weight of each n-gram present, TF and
		 * TFIDF add up.
		 */
		for (int i = 0; i < s->n_indexes; i++)
		{
			float		wt = s->n_weights > 0 ? s->weights[i] : 1.0f;
			float	   *o = &row[s->indexes[i]];

			if (counts[i] == 0)
				continue;
			if (s->mode == TFIDF_TF)
				*o += (float) counts[i];
			else if (s->mode == TFIDF_IDF)
				*o = wt;
			else
				*o += (float) counts[i] * wt;
		}
	}
	free(keys);
	free(counts);
	return OX_OK;
}
