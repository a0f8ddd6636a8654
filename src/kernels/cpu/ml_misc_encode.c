/*
 * ml_misc_encode.c
 *	  Encoders and feature plumbing of ai.onnx.ml: LabelEncoder (opsets 1,
 *	  2 and 4), OneHotEncoder, CategoryMapper, ArrayFeatureExtractor and
 *	  FeatureVectorizer.
 *
 * Lookups go through sorted key arrays and binary search; the first of
 * duplicate keys wins, as in onnxruntime.  Float keys compare as numbers,
 * with NaN matching a NaN key.
 */
#include "kernels/cpu/ml.h"

#include <stdio.h>

/* ---------------- sorted keys ---------------- */

typedef enum key_kind
{
	KEY_STR,
	KEY_INT,
	KEY_REAL
} key_kind;

typedef struct key_entry
{
	const char *s;
	size_t		len;
	int64_t		i;
	double		d;
	int32_t		pos;			/* position in the attribute list */
} key_entry;

static int
cmp_str(const char *a, size_t la, const char *b, size_t lb)
{
	int			c = memcmp(a, b, la < lb ? la : lb);

	if (c != 0)
		return c;
	return la < lb ? -1 : (la > lb);
}

static int
entry_cmp_str(const void *pa, const void *pb)
{
	const key_entry *a = pa;
	const key_entry *b = pb;
	int			c = cmp_str(a->s, a->len, b->s, b->len);

	return c ? c : (a->pos > b->pos) - (a->pos < b->pos);
}

static int
entry_cmp_int(const void *pa, const void *pb)
{
	const key_entry *a = pa;
	const key_entry *b = pb;

	if (a->i != b->i)
		return a->i < b->i ? -1 : 1;
	return (a->pos > b->pos) - (a->pos < b->pos);
}

/* NaN sorts last and equals NaN */
static int
real_cmp(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) - isnan(b);
	return a < b ? -1 : (a > b);
}

static int
entry_cmp_real(const void *pa, const void *pb)
{
	const key_entry *a = pa;
	const key_entry *b = pb;
	int			c = real_cmp(a->d, b->d);

	return c ? c : (a->pos > b->pos) - (a->pos < b->pos);
}

static void
sort_keys(key_entry *e, int64_t n, key_kind kind)
{
	qsort(e, (size_t) n, sizeof(key_entry),
		  kind == KEY_STR ? entry_cmp_str : kind == KEY_INT ? entry_cmp_int : entry_cmp_real);
}

/* position of the first entry equal to the probe, or -1 */
static int32_t
find_key(const key_entry *e, int64_t n, key_kind kind, const char *s, size_t len, int64_t iv, double dv)
{
	int64_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;
		int			c;

		if (kind == KEY_STR)
			c = cmp_str(e[mid].s, e[mid].len, s, len);
		else if (kind == KEY_INT)
			c = e[mid].i < iv ? -1 : (e[mid].i > iv);
		else
			c = real_cmp(e[mid].d, dv);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n)
	{
		if (kind == KEY_STR ? cmp_str(e[lo].s, e[lo].len, s, len) == 0 :
			kind == KEY_INT ? e[lo].i == iv : real_cmp(e[lo].d, dv) == 0)
			return e[lo].pos;
	}
	return -1;
}

/* keys from a STRINGS attribute */
static key_entry *
entries_from_strings(const ox_attr *a)
{
	key_entry  *e = calloc((size_t) (a->n > 0 ? a->n : 1), sizeof(key_entry));

	if (!e)
		return NULL;
	for (int i = 0; i < a->n; i++)
	{
		e[i].s = ml_attr_str_at(a, i, &e[i].len);
		e[i].pos = i;
	}
	return e;
}

static key_entry *
entries_from_ints(const int64_t *v, int64_t n)
{
	key_entry  *e = calloc((size_t) (n > 0 ? n : 1), sizeof(key_entry));

	if (!e)
		return NULL;
	for (int64_t i = 0; i < n; i++)
	{
		e[i].i = v[i];
		e[i].pos = (int32_t) i;
	}
	return e;
}

/* ---------------- LabelEncoder ---------------- */

/* a typed list: the keys or the values of the encoder */
typedef struct typed_list
{
	ox_dtype	dtype;			/* OX_STRING, OX_INT64/32/16, OX_FLOAT, OX_DOUBLE */
	int64_t		n;
	const ox_attr *str_attr;	/* strings from a STRINGS attribute */
	const ox_string *str_tensor;	/* or from a string tensor */
	const int64_t *ints;
	const float *floats;
	const ox_tensor *tensor;	/* numeric tensor */
} typed_list;

static const char *
list_str(const typed_list *l, int64_t i, size_t *len)
{
	if (l->str_attr)
		return ml_attr_str_at(l->str_attr, (int) i, len);
	*len = l->str_tensor[i].len;
	return l->str_tensor[i].data ? l->str_tensor[i].data : "";
}

static int64_t
list_int(const typed_list *l, int64_t i)
{
	return l->ints ? l->ints[i] : ox_tensor_get_int64(l->tensor, i);
}

static double
list_real(const typed_list *l, int64_t i)
{
	return l->floats ? l->floats[i] : ox_tensor_get_double(l->tensor, i);
}

static key_kind
dtype_kind(ox_dtype dt)
{
	return dt == OX_STRING ? KEY_STR : (dt == OX_FLOAT || dt == OX_DOUBLE) ? KEY_REAL : KEY_INT;
}

/* one of name_strings / name_int64s / name_floats / name_tensor */
static ox_code
read_list(const ox_node *node, const char *prefix, bool allow_tensor, typed_list *l, ox_status *st)
{
	char		name[64];
	const ox_attr *a;
	int			found = 0;

	memset(l, 0, sizeof(*l));
	snprintf(name, sizeof(name), "%s_strings", prefix);
	a = ox_node_attr(node, name);
	if (a && a->type == OX_ATTR_STRINGS)
	{
		l->dtype = OX_STRING;
		l->str_attr = a;
		l->n = a->n;
		found++;
	}
	snprintf(name, sizeof(name), "%s_int64s", prefix);
	a = ox_node_attr(node, name);
	if (a && (a->type == OX_ATTR_INTS || a->type == OX_ATTR_INT))
	{
		l->dtype = OX_INT64;
		l->n = ox_attr_ints(node, name, &l->ints);
		found++;
	}
	snprintf(name, sizeof(name), "%s_floats", prefix);
	a = ox_node_attr(node, name);
	if (a && (a->type == OX_ATTR_FLOATS || a->type == OX_ATTR_FLOAT))
	{
		l->dtype = OX_FLOAT;
		l->n = ox_attr_floats(node, name, &l->floats);
		found++;
	}
	if (allow_tensor)
	{
		snprintf(name, sizeof(name), "%s_tensor", prefix);
		l->tensor = ox_attr_tensor(node, name);
		if (l->tensor)
		{
			ox_dtype	dt = l->tensor->dtype;

			if (dt != OX_STRING && dt != OX_INT64 && dt != OX_INT32 && dt != OX_INT16 &&
				dt != OX_FLOAT && dt != OX_DOUBLE)
				return ox_fail(st, OX_UNSUPPORTED, "%s: %s has element type %s",
							   node->op_type, name, ox_dtype_name(dt));
			l->dtype = dt;
			l->n = ox_tensor_numel(l->tensor);
			if (dt == OX_STRING)
			{
				l->str_tensor = l->tensor->data;
				l->tensor = NULL;
			}
			found++;
		}
	}
	if (found != 1)
		return ox_fail(st, OX_INVALID_MODEL, "%s: exactly one list of %s is required, found %d",
					   node->op_type, prefix, found);
	return OX_OK;
}

typedef struct ml_label_encoder
{
	int			version;		/* 1: classes_strings; 2: keys/values */
	typed_list	keys;
	typed_list	values;
	key_entry  *sorted;
	/* defaults */
	const char *def_str;
	size_t		def_str_len;
	int64_t		def_int;
	double		def_real;
} ml_label_encoder;

void
ml_label_encoder_free(void *state)
{
	ml_label_encoder *le = state;

	if (!le)
		return;
	free(le->sorted);
	free(le);
}

ox_code
ml_label_encoder_prepare(ox_prepare_ctx *pc)
{
	const ox_node *node = pc->node;
	const char *op = node->op_type;
	ml_label_encoder *le = calloc(1, sizeof(ml_label_encoder));
	const ox_tensor *dt;
	ox_code		rc = OX_OK;

	if (!le)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s: could not allocate its state", op);
	le->def_str = ox_attr_string(node, "default_string", "_Unused");
	le->def_str_len = strlen(le->def_str);
	le->def_int = ox_attr_int(node, "default_int64", -1);
	le->def_real = ox_attr_float(node, "default_float", -0.0f);
	if (node->opset < 2)
	{
		const ox_attr *a = ox_node_attr(node, "classes_strings");

		le->version = 1;
		if (!a || a->type != OX_ATTR_STRINGS)
		{
			rc = ox_fail(pc->st, OX_INVALID_MODEL, "%s: classes_strings is required", op);
			goto fail;
		}
		le->keys.dtype = OX_STRING;
		le->keys.str_attr = a;
		le->keys.n = a->n;
		le->sorted = entries_from_strings(a);
		if (!le->sorted)
			goto oom;
		sort_keys(le->sorted, a->n, KEY_STR);
		pc->state = le;
		return OX_OK;
	}
	le->version = 2;
	if ((rc = read_list(node, "keys", node->opset >= 4, &le->keys, pc->st)) != OX_OK ||
		(rc = read_list(node, "values", node->opset >= 4, &le->values, pc->st)) != OX_OK)
		goto fail;
	if (le->keys.n != le->values.n || le->keys.n < 0 || le->keys.n > INT32_MAX)
	{
		rc = ox_fail(pc->st, OX_INVALID_MODEL, "%s: %lld keys but %lld values",
					 op, (long long) le->keys.n, (long long) le->values.n);
		goto fail;
	}
	dt = node->opset >= 4 ? ox_attr_tensor(node, "default_tensor") : NULL;
	if (dt)
	{
		if (ox_tensor_numel(dt) != 1 || dt->dtype != le->values.dtype)
		{
			rc = ox_fail(pc->st, OX_INVALID_MODEL, "%s: default_tensor must hold one %s",
						 op, ox_dtype_name(le->values.dtype));
			goto fail;
		}
		if (dt->dtype == OX_STRING)
		{
			const ox_string *s = dt->data;

			le->def_str = s->data ? s->data : "";
			le->def_str_len = s->len;
		}
		else if (dtype_kind(dt->dtype) == KEY_INT)
			le->def_int = ox_tensor_get_int64(dt, 0);
		else
			le->def_real = ox_tensor_get_double(dt, 0);
	}
	le->sorted = calloc((size_t) (le->keys.n > 0 ? le->keys.n : 1), sizeof(key_entry));
	if (!le->sorted)
		goto oom;
	for (int64_t i = 0; i < le->keys.n; i++)
	{
		key_entry  *e = &le->sorted[i];

		e->pos = (int32_t) i;
		switch (dtype_kind(le->keys.dtype))
		{
			case KEY_STR:
				e->s = list_str(&le->keys, i, &e->len);
				break;
			case KEY_INT:
				e->i = list_int(&le->keys, i);
				break;
			case KEY_REAL:
				e->d = list_real(&le->keys, i);
				break;
		}
	}
	sort_keys(le->sorted, le->keys.n, dtype_kind(le->keys.dtype));
	pc->state = le;
	return OX_OK;
oom:
	rc = ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s: could not allocate its state", op);
fail:
	ml_label_encoder_free(le);
	return rc;
}

/* the key type an input dtype matches */
static bool
input_matches(ox_dtype key, ox_dtype in)
{
	return key == in;
}

ox_code
ml_label_encoder_run(ox_kernel_ctx *ctx)
{
	const ml_label_encoder *le = ctx->state;
	const char *op = ctx->node->op_type;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	ox_dtype	out_dt;
	ox_tensor  *y;
	int64_t		n;
	key_kind	kk;

	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input X is missing", op);
	n = ox_tensor_numel(x);
	if (le->version == 1)
	{
		if (x->dtype == OX_STRING)
		{
			y = ox_out_tensor(ctx, 0, OX_INT64, x->rank, x->dims);
			if (!y)
				return ctx->st->code;
			for (int64_t i = 0; i < n; i++)
			{
				const ox_string *s = &((const ox_string *) x->data)[i];
				int32_t		pos = find_key(le->sorted, le->keys.n, KEY_STR, s->data ? s->data : "", s->len, 0, 0);

				((int64_t *) y->data)[i] = pos >= 0 ? pos : le->def_int;
			}
			return OX_OK;
		}
		if (x->dtype != OX_INT64)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input has element type %s, expected string or int64",
						   op, ox_dtype_name(x->dtype));
		y = ox_out_tensor(ctx, 0, OX_STRING, x->rank, x->dims);
		if (!y)
			return ctx->st->code;
		for (int64_t i = 0; i < n; i++)
		{
			int64_t		k = ((const int64_t *) x->data)[i];
			size_t		len = le->def_str_len;
			const char *s = le->def_str;

			if (k >= 0 && k < le->keys.n)
				s = ml_attr_str_at(le->keys.str_attr, (int) k, &len);
			OX_TRY(ml_set_string(&((ox_string *) y->data)[i], s, len, ctx->st));
		}
		return OX_OK;
	}

	if (!input_matches(le->keys.dtype, x->dtype))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input has element type %s but the keys are %s",
					   op, ox_dtype_name(x->dtype), ox_dtype_name(le->keys.dtype));
	out_dt = le->values.dtype;
	y = ox_out_tensor(ctx, 0, out_dt, x->rank, x->dims);
	if (!y)
		return ctx->st->code;
	kk = dtype_kind(le->keys.dtype);
	for (int64_t i = 0; i < n; i++)
	{
		int32_t		pos;

		if (kk == KEY_STR)
		{
			const ox_string *s = &((const ox_string *) x->data)[i];

			pos = find_key(le->sorted, le->keys.n, kk, s->data ? s->data : "", s->len, 0, 0);
		}
		else if (kk == KEY_INT)
			pos = find_key(le->sorted, le->keys.n, kk, NULL, 0, ox_tensor_get_int64(x, i), 0);
		else
		{
			double		d = ox_tensor_get_double(x, i);

			/* NaN finds a NaN key from opset 4 on; before, onnxruntime never matches it */
			pos = (isnan(d) && ctx->node->opset < 4) ? -1 :
				find_key(le->sorted, le->keys.n, kk, NULL, 0, 0, d);
		}
		switch (out_dt)
		{
			case OX_STRING:
				{
					size_t		len = le->def_str_len;
					const char *s = pos >= 0 ? list_str(&le->values, pos, &len) : le->def_str;

					OX_TRY(ml_set_string(&((ox_string *) y->data)[i], s, len, ctx->st));
					break;
				}
			case OX_INT64:
				((int64_t *) y->data)[i] = pos >= 0 ? list_int(&le->values, pos) : le->def_int;
				break;
			case OX_INT32:
				((int32_t *) y->data)[i] = (int32_t) (pos >= 0 ? list_int(&le->values, pos) : le->def_int);
				break;
			case OX_INT16:
				((int16_t *) y->data)[i] = (int16_t) (pos >= 0 ? list_int(&le->values, pos) : le->def_int);
				break;
			case OX_FLOAT:
				((float *) y->data)[i] = (float) (pos >= 0 ? list_real(&le->values, pos) : le->def_real);
				break;
			case OX_DOUBLE:
				((double *) y->data)[i] = pos >= 0 ? list_real(&le->values, pos) : le->def_real;
				break;
			default:
				return ox_fail(ctx->st, OX_INTERNAL, "%s: unexpected value type", op);
		}
	}
	return OX_OK;
}

/* ---------------- OneHotEncoder ---------------- */

/*
 * The categories sorted once, at prepare (they were sorted again every
 * run), and integer categories spanning at most ONE_HOT_TABLE_SPAN values
 * as a direct table from value to position: scikit-learn pipelines encode
 * small integer codes, and a lookup per element is what the kernel does.
 */
#define ONE_HOT_TABLE_SPAN 65536

typedef struct one_hot_state
{
	key_entry  *keys;			/* sorted */
	int64_t		ncat;
	bool		strings;
	bool		zeros;
	int32_t    *table;			/* value - lo -> position or -1; NULL: search keys */
	int64_t		lo;
	uint64_t	span;			/* table entries - 1 */
} one_hot_state;

void
ml_one_hot_encoder_free(void *state)
{
	one_hot_state *oh = state;

	if (!oh)
		return;
	free(oh->keys);
	free(oh->table);
	free(oh);
}

ox_code
ml_one_hot_encoder_prepare(ox_prepare_ctx *pc)
{
	const ox_node *node = pc->node;
	const char *op = node->op_type;
	const ox_attr *cs = ox_node_attr(node, "cats_strings");
	const int64_t *ci;
	int			nci = ox_attr_ints(node, "cats_int64s", &ci);
	one_hot_state *oh;

	oh = calloc(1, sizeof(one_hot_state));
	if (!oh)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s: could not allocate its state", op);
	oh->strings = cs && cs->type == OX_ATTR_STRINGS && cs->n > 0;
	oh->ncat = oh->strings ? cs->n : nci;
	oh->zeros = ox_attr_int(node, "zeros", 1) != 0;
	if (oh->ncat == 0 || (oh->strings && nci > 0))
	{
		ml_one_hot_encoder_free(oh);
		return ox_fail(pc->st, OX_INVALID_MODEL, "%s: exactly one of cats_int64s and cats_strings must be set", op);
	}
	oh->keys = oh->strings ? entries_from_strings(cs) : entries_from_ints(ci, nci);
	if (!oh->keys)
	{
		ml_one_hot_encoder_free(oh);
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s: could not allocate categories", op);
	}
	sort_keys(oh->keys, oh->ncat, oh->strings ? KEY_STR : KEY_INT);
	if (!oh->strings)
	{
		int64_t		lo = oh->keys[0].i,
					hi = oh->keys[oh->ncat - 1].i;
		uint64_t	span = (uint64_t) hi - (uint64_t) lo;

		if (span < ONE_HOT_TABLE_SPAN && (oh->table = malloc(sizeof(int32_t) * (size_t) (span + 1))) != NULL)
		{
			/* the position the search would find, value by value */
			for (uint64_t k = 0; k <= span; k++)
				oh->table[k] = find_key(oh->keys, oh->ncat, KEY_INT, NULL, 0, (int64_t) ((uint64_t) lo + k), 0);
			oh->lo = lo;
			oh->span = span;
		}
	}
	pc->state = oh;
	return OX_OK;
}

ox_code
ml_one_hot_encoder_run(ox_kernel_ctx *ctx)
{
	const one_hot_state *oh = ctx->state;
	const char *op = ctx->node->op_type;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	int64_t		ncat;
	int64_t		dims[OX_MAX_RANK];
	int64_t		n;
	float	   *out;
	ox_tensor  *y;

	if (!oh)
		return ox_fail(ctx->st, OX_INTERNAL, "%s: run without prepare", op);
	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input X is missing", op);
	ncat = oh->ncat;
	if (oh->strings != (x->dtype == OX_STRING))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input has element type %s but the categories are %s",
					   op, ox_dtype_name(x->dtype), oh->strings ? "strings" : "integers");
	if (!oh->strings && x->dtype != OX_INT64 && x->dtype != OX_INT32 && x->dtype != OX_FLOAT && x->dtype != OX_DOUBLE)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: input element type %s is not supported",
					   op, ox_dtype_name(x->dtype));
	if (x->rank >= OX_MAX_RANK)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input rank %d is too deep", op, x->rank);
	memcpy(dims, x->dims, sizeof(int64_t) * x->rank);
	dims[x->rank] = ncat;
	n = ox_tensor_numel(x);
	y = ox_out_tensor(ctx, 0, OX_FLOAT, x->rank + 1, dims);
	if (!y)
		return ctx->st->code;
	out = y->data;
	if (n > 0)
		memset(out, 0, sizeof(float) * (size_t) (n * ncat));
	for (int64_t i = 0; i < n; i++)
	{
		int32_t		pos;

		if (oh->strings)
		{
			const ox_string *s = &((const ox_string *) x->data)[i];

			pos = find_key(oh->keys, ncat, KEY_STR, s->data ? s->data : "", s->len, 0, 0);
		}
		else
		{
			int64_t		v = ox_tensor_get_int64(x, i);
			uint64_t	k = (uint64_t) v - (uint64_t) oh->lo;

			if (oh->table)
				pos = k <= oh->span ? oh->table[k] : -1;
			else
				pos = find_key(oh->keys, ncat, KEY_INT, NULL, 0, v, 0);
		}
		if (pos >= 0)
			out[i * ncat + pos] = 1.0f;
		else if (!oh->zeros)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: element %lld is not one of the categories (zeros is 0)",
						   op, (long long) i);
	}
	return OX_OK;
}

/* ---------------- CategoryMapper ---------------- */

ox_code
ml_category_mapper_run(ox_kernel_ctx *ctx)
{
	const ox_node *node = ctx->node;
	const char *op = node->op_type;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_attr *cs = ox_node_attr(node, "cats_strings");
	const int64_t *ci;
	int			nci = ox_attr_ints(node, "cats_int64s", &ci);
	int64_t		ncs = (cs && cs->type == OX_ATTR_STRINGS) ? cs->n : 0;
	const char *def_str = ox_attr_string(node, "default_string", "_Unused");
	int64_t		def_int = ox_attr_int(node, "default_int64", -1);
	key_entry  *keys;
	int64_t		n;
	ox_tensor  *y;
	bool		from_str;
	ox_code		rc = OX_OK;

	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input X is missing", op);
	if (ncs != nci)
		return ox_fail(ctx->st, OX_INVALID_MODEL, "%s: cats_strings has %lld entries and cats_int64s %d",
					   op, (long long) ncs, nci);
	from_str = x->dtype == OX_STRING;
	if (!from_str && x->dtype != OX_INT64)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input has element type %s, expected string or int64",
					   op, ox_dtype_name(x->dtype));
	n = ox_tensor_numel(x);
	keys = from_str ? entries_from_strings(cs ? cs : &(ox_attr) {0}) : entries_from_ints(ci, nci);
	if (!keys)
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: could not allocate categories", op);
	sort_keys(keys, nci, from_str ? KEY_STR : KEY_INT);
	y = ox_out_tensor(ctx, 0, from_str ? OX_INT64 : OX_STRING, x->rank, x->dims);
	if (!y)
	{
		free(keys);
		return ctx->st->code;
	}
	for (int64_t i = 0; i < n && rc == OX_OK; i++)
	{
		if (from_str)
		{
			const ox_string *s = &((const ox_string *) x->data)[i];
			int32_t		pos = find_key(keys, nci, KEY_STR, s->data ? s->data : "", s->len, 0, 0);

			((int64_t *) y->data)[i] = pos >= 0 ? ci[pos] : def_int;
		}
		else
		{
			int32_t		pos = find_key(keys, nci, KEY_INT, NULL, 0, ((const int64_t *) x->data)[i], 0);
			size_t		len = strlen(def_str);
			const char *s = pos >= 0 ? ml_attr_str_at(cs, pos, &len) : def_str;

			rc = ml_set_string(&((ox_string *) y->data)[i], s, len, ctx->st);
		}
	}
	free(keys);
	return rc;
}

/* ---------------- ArrayFeatureExtractor ---------------- */

/* rows per poll of the numeric gather */
#define AFE_ROWS 256

/* rows [o, end) of the gather, elements of SIZE bytes */
#define AFE_GATHER(SIZE) \
	do { \
		const char *xs_ = (const char *) x->data; \
		char	   *zs_ = (char *) z->data; \
		for (int64_t r_ = o; r_ < end; r_++) \
		{ \
			const char *row_ = xs_ + (size_t) (r_ * stride) * (SIZE); \
			char	   *out_ = zs_ + (size_t) (r_ * n_idx) * (SIZE); \
			for (int64_t i_ = 0; i_ < n_idx; i_++) \
				memcpy(out_ + (size_t) i_ * (SIZE), row_ + (size_t) ix[i_] * (SIZE), (SIZE)); \
		} \
	} while (0)

ox_code
ml_array_feature_extractor_run(ox_kernel_ctx *ctx)
{
	const char *op = ctx->node->op_type;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *idx = ox_in_tensor(ctx, 1);
	int64_t		stride,
				n_idx,
				outer,
				dims[OX_MAX_RANK];
	int			rank;
	size_t		es;
	const int64_t *ix;
	ox_tensor  *z;

	if (!x || !idx)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: inputs X and Y are required", op);
	if (idx->dtype != OX_INT64)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: Y has element type %s, expected int64",
					   op, ox_dtype_name(idx->dtype));
	if (x->rank < 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: X must have rank 1 or more", op);
	if (x->dtype != OX_FLOAT && x->dtype != OX_DOUBLE && x->dtype != OX_INT64 &&
		x->dtype != OX_INT32 && x->dtype != OX_STRING)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: X element type %s is not supported",
					   op, ox_dtype_name(x->dtype));
	stride = x->dims[x->rank - 1];
	n_idx = ox_tensor_numel(idx);
	if (n_idx <= 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: Y holds no indices", op);
	ix = idx->data;
	for (int64_t i = 0; i < n_idx; i++)
	{
		int64_t		k = ix[i];

		if (k < 0 || k >= stride)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: index %lld is out of range for a last dimension of %lld",
						   op, (long long) k, (long long) stride);
	}
	if (x->rank == 1)
	{
		rank = 2;
		dims[0] = 1;
		dims[1] = n_idx;
	}
	else
	{
		rank = x->rank;
		memcpy(dims, x->dims, sizeof(int64_t) * rank);
		dims[rank - 1] = n_idx;
	}
	outer = stride > 0 ? ox_tensor_numel(x) / stride : 0;
	z = ox_out_tensor(ctx, 0, x->dtype, rank, dims);
	if (!z)
		return ctx->st->code;
	es = ox_dtype_size(x->dtype);
	if (x->dtype == OX_STRING)
	{
		for (int64_t o = 0; o < outer; o++)
			for (int64_t i = 0; i < n_idx; i++)
			{
				const ox_string *s = &((const ox_string *) x->data)[o * stride + ix[i]];

				OX_TRY(ml_set_string(&((ox_string *) z->data)[o * n_idx + i], s->data ? s->data : "",
									 s->len, ctx->st));
			}
		return OX_OK;
	}
	/*
	 * Numbers: 4 or 8 bytes, so a constant-size memcpy (one move) instead
	 * of a memcpy call per element, which was most of the 6 us of a
	 * [1000, 30] -> [1000, 2] gather.  Polls between blocks of rows: the
	 * output can be large when the index list is.
	 */
	for (int64_t o = 0; o < outer; o += AFE_ROWS)
	{
		int64_t		end = outer - o < AFE_ROWS ? outer : o + AFE_ROWS;

		if (es == 4)
			AFE_GATHER(4);
		else
			AFE_GATHER(8);
		if (ox_kernel_poll(ctx, (end - o) * n_idx))
			return ctx->st->code;
	}
	return OX_OK;
}

/* ---------------- FeatureVectorizer ---------------- */

ox_code
ml_feature_vectorizer_run(ox_kernel_ctx *ctx)
{
	const char *op = ctx->node->op_type;
	const int64_t *dimsattr;
	int			nd = ox_attr_ints(ctx->node, "inputdimensions", &dimsattr);
	int64_t		total = 0,
				rows = -1,
				dims[2];
	ox_tensor  *y;
	float	   *yd;
	int64_t		off = 0;

	if (nd != ctx->n_in)
		return ox_fail(ctx->st, OX_INVALID_MODEL, "%s: inputdimensions has %d entries for %d inputs",
					   op, nd, ctx->n_in);
	for (int i = 0; i < nd; i++)
	{
		const ox_tensor *x = ox_in_tensor(ctx, i);
		int64_t		r;

		if (!x)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input %d is missing", op, i);
		if (dimsattr[i] < 0 || total > INT32_MAX)
			return ox_fail(ctx->st, OX_INVALID_MODEL, "%s: inputdimensions[%d] is %lld", op, i, (long long) dimsattr[i]);
		if (x->dtype != OX_FLOAT && x->dtype != OX_DOUBLE && x->dtype != OX_INT64 && x->dtype != OX_INT32)
			return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: input %d has element type %s",
						   op, i, ox_dtype_name(x->dtype));
		if (x->rank < 1 || ox_tensor_numel(x) < 0)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input %d must have rank 1 or more", op, i);
		r = x->rank == 1 ? 1 : x->dims[0];
		if (rows >= 0 && r != rows)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input %d has %lld rows, input 0 has %lld",
						   op, i, (long long) r, (long long) rows);
		rows = r;
		total += dimsattr[i];
	}
	dims[0] = rows < 0 ? 0 : rows;
	dims[1] = total;
	y = ox_out_tensor(ctx, 0, OX_FLOAT, 2, dims);
	if (!y)
		return ctx->st->code;
	yd = y->data;
	if (dims[0] * total > 0)
		memset(yd, 0, sizeof(float) * (size_t) (dims[0] * total));
	for (int i = 0; i < nd; i++)
	{
		const ox_tensor *x = ox_in_tensor(ctx, i);
		int64_t		per_row = rows > 0 ? ox_tensor_numel(x) / rows : 0;
		int64_t		take = per_row < dimsattr[i] ? per_row : dimsattr[i];

		if (x->dtype == OX_FLOAT && take > 0)	/* float columns copied, not a call per value */
			for (int64_t r = 0; r < rows; r++)
				memcpy(yd + r * total + off, (const float *) x->data + r * per_row, sizeof(float) * (size_t) take);
		else
			for (int64_t r = 0; r < rows; r++)
				for (int64_t k = 0; k < take; k++)
					yd[r * total + off + k] = (float) ox_tensor_get_double(x, r * per_row + k);
		off += dimsattr[i];
	}
	return OX_OK;
}
