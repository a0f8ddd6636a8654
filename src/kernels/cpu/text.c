/*
 * text.c
 *	  The text kernel family table, and the string ops StringNormalizer,
 *	  StringSplit and StringConcat.  RegexFullMatch lives in text_regex.c,
 *	  TfIdfVectorizer in text_tfidf.c.
 *
 * Strings are bytes (UTF-8 in practice).  Case changes touch ASCII letters
 * only, whatever the locale attribute says: that is what onnxruntime does
 * for the default en_US locale on the characters most models meet, and it
 * keeps results independent of the server's locale.
 */
#include "kernels/cpu/text.h"

#include <stdlib.h>
#include <string.h>

ox_code
ox_text_string_set(ox_kernel_ctx *ctx, ox_string *dst, const char *data, size_t len)
{
	return ox_string_set(dst, data, len, ctx->st);
}

static inline char
ascii_lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char) (c - 'A' + 'a') : c;
}

static inline char
ascii_upper(char c)
{
	return (c >= 'a' && c <= 'z') ? (char) (c - 'a' + 'A') : c;
}

static const ox_tensor *
text_input(ox_kernel_ctx *ctx, int i, const char *what)
{
	const ox_tensor *t = ox_in_tensor(ctx, i);

	if (!t)
	{
		ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: %s is required", ctx->node->op_type, what);
		return NULL;
	}
	if (t->dtype != OX_STRING)
	{
		ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: %s must be a string tensor, got %s",
				ctx->node->op_type, what, ox_dtype_name(t->dtype));
		return NULL;
	}
	if (ox_tensor_numel(t) < 0)
	{
		ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "%s: %s is too large", ctx->node->op_type, what);
		return NULL;
	}
	return t;
}

/* ---------- StringNormalizer ---------- */

typedef enum case_action
{
	CASE_NONE,
	CASE_LOWER,
	CASE_UPPER
} case_action;

typedef struct normalizer_state
{
	case_action action;
	bool		case_sensitive;
	int			n_stop;
	ox_string  *stop;			/* lower-cased when not case sensitive, sorted */
} normalizer_state;

static int
bytes_cmp(const char *a, size_t la, const char *b, size_t lb)
{
	int			c = memcmp(a, b, la < lb ? la : lb);

	if (c != 0)
		return c;
	return la < lb ? -1 : (la > lb ? 1 : 0);
}

static int
ox_string_cmp(const void *a, const void *b)
{
	const ox_string *x = a;
	const ox_string *y = b;

	return bytes_cmp(x->data, x->len, y->data, y->len);
}

static void
normalizer_free(void *state)
{
	normalizer_state *s = state;

	if (!s)
		return;
	for (int i = 0; i < s->n_stop; i++)
		free(s->stop[i].data);
	free(s->stop);
	free(s);
}

static ox_code
normalizer_prepare(ox_prepare_ctx *pc)
{
	const ox_node *node = pc->node;
	const char *action = ox_attr_string(node, "case_change_action", "NONE");
	int64_t		sens = ox_attr_int(node, "is_case_sensitive", 0);
	const ox_attr *sw = ox_node_attr(node, "stopwords");
	normalizer_state *s;

	if (sens != 0 && sens != 1)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT,
					   "StringNormalizer: is_case_sensitive must be 0 or 1, got %lld", (long long) sens);
	if (!(s = calloc(1, sizeof(*s))))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "StringNormalizer: out of memory");
	if (strcmp(action, "NONE") == 0)
		s->action = CASE_NONE;
	else if (strcmp(action, "LOWER") == 0)
		s->action = CASE_LOWER;
	else if (strcmp(action, "UPPER") == 0)
		s->action = CASE_UPPER;
	else
	{
		normalizer_free(s);
		return ox_fail(pc->st, OX_UNSUPPORTED, "StringNormalizer: unsupported case_change_action \"%s\"",
					   action);
	}
	s->case_sensitive = sens != 0;
	if (sw && sw->type == OX_ATTR_STRINGS && sw->n > 0)
	{
		if (!(s->stop = calloc(sw->n, sizeof(ox_string))))
		{
			normalizer_free(s);
			return ox_fail(pc->st, OX_OUT_OF_MEMORY, "StringNormalizer: out of memory");
		}
		for (int i = 0; i < sw->n; i++)
		{
			size_t		len = sw->string_lens ? sw->string_lens[i] : strlen(sw->strings[i]);
			char	   *p = malloc(len + 1);

			if (!p)
			{
				normalizer_free(s);
				return ox_fail(pc->st, OX_OUT_OF_MEMORY, "StringNormalizer: out of memory");
			}
			for (size_t k = 0; k < len; k++)
				p[k] = s->case_sensitive ? sw->strings[i][k] : ascii_lower(sw->strings[i][k]);
			p[len] = '\0';
			s->stop[i].data = p;
			s->stop[i].len = len;
			s->n_stop++;
		}
		qsort(s->stop, s->n_stop, sizeof(ox_string), ox_string_cmp);
	}
	else if (sw && sw->type != OX_ATTR_STRINGS)
	{
		normalizer_free(s);
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "StringNormalizer: stopwords must be a list of strings");
	}
	pc->state = s;
	return OX_OK;
}

static bool
normalizer_is_stopword(const normalizer_state *s, const ox_string *w, char *scratch)
{
	ox_string	key;

	if (s->n_stop == 0)
		return false;
	key.len = w->len;
	if (s->case_sensitive)
		key.data = w->data;
	else
	{
		for (size_t k = 0; k < w->len; k++)
			scratch[k] = ascii_lower(w->data[k]);
		key.data = scratch;
	}
	if (key.len == 0)
		key.data = "";
	return bsearch(&key, s->stop, s->n_stop, sizeof(ox_string), ox_string_cmp) != NULL;
}

static ox_code
normalizer_run(ox_kernel_ctx *ctx)
{
	const normalizer_state *s = ctx->state;
	const ox_tensor *x = text_input(ctx, 0, "X");
	char		b1[OX_TEXT_SHAPE_LEN];
	const ox_string *in;
	int64_t		C,
				kept = 0,
				dims[2];
	bool	   *keep = NULL;
	char	   *scratch = NULL;
	size_t		max_len = 0;
	ox_tensor  *y;
	ox_string  *out;
	ox_code		rc = OX_OK;

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "StringNormalizer: prepare did not run");
	if (!x)
		return ctx->st->code;
	if (!(x->rank == 1 || (x->rank == 2 && x->dims[0] == 1)))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "StringNormalizer: X must have shape [C] or [1, C], got %s",
					   ox_shape_str(x->rank, x->dims, b1, sizeof(b1)));
	C = x->dims[x->rank - 1];
	in = x->data;
	for (int64_t i = 0; i < C; i++)
		if (in[i].len > max_len)
			max_len = in[i].len;
	keep = malloc(C > 0 ? (size_t) C : 1);
	scratch = malloc(max_len + 1);
	if (!keep || !scratch)
	{
		rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "StringNormalizer: out of memory");
		goto done;
	}
	for (int64_t i = 0; i < C; i++)
	{
		keep[i] = !normalizer_is_stopword(s, &in[i], scratch);
		kept += keep[i];
	}
	/* everything dropped: one empty string, per the spec */
	dims[0] = 1;
	dims[x->rank - 1] = kept > 0 ? kept : 1;
	if (!(y = ox_out_tensor(ctx, 0, OX_STRING, x->rank, dims)))
	{
		rc = ctx->st->code;
		goto done;
	}
	out = y->data;
	if (kept == 0)
	{
		rc = ox_text_string_set(ctx, &out[0], "", 0);
		goto done;
	}
	for (int64_t i = 0, j = 0; i < C; i++)
	{
		if (!keep[i])
			continue;
		if ((rc = ox_text_string_set(ctx, &out[j], in[i].data ? in[i].data : "", in[i].len)) != OX_OK)
			goto done;
		if (s->action == CASE_LOWER)
			for (size_t k = 0; k < out[j].len; k++)
				out[j].data[k] = ascii_lower(out[j].data[k]);
		else if (s->action == CASE_UPPER)
			for (size_t k = 0; k < out[j].len; k++)
				out[j].data[k] = ascii_upper(out[j].data[k]);
		j++;
	}
done:
	free(keep);
	free(scratch);
	return rc;
}

/* ---------- StringSplit ---------- */

/* Python's str.isspace() over ASCII */
static inline bool
py_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

/*
 * Split s (Python str.split semantics) and call emit for each piece, at
 * most maxsplit splits (maxsplit < 0: no limit).  Returns the piece count,
 * or -1 when emit fails.
 */
typedef ox_code (*piece_fn) (void *arg, int64_t k, const char *p, size_t len);

static int64_t
split_string(const char *s, size_t len, const char *delim, size_t dlen, int64_t maxsplit,
			 piece_fn emit, void *arg)
{
	int64_t		n = 0;
	size_t		i = 0;

	if (!s)
		s = "";
	if (dlen == 0)
	{
		/* runs of whitespace separate; leading/trailing whitespace is dropped */
		for (;;)
		{
			size_t		start;

			while (i < len && py_space(s[i]))
				i++;
			if (i >= len)
				break;
			if (maxsplit >= 0 && n == maxsplit)
			{
				/* the remainder keeps its trailing whitespace, as Python does */
				if (emit && emit(arg, n, s + i, len - i) != OX_OK)
					return -1;
				return n + 1;
			}
			start = i;
			while (i < len && !py_space(s[i]))
				i++;
			if (emit && emit(arg, n, s + start, i - start) != OX_OK)
				return -1;
			n++;
		}
		return n;
	}
	for (;;)
	{
		size_t		start = i;
		const char *hit = NULL;

		if (maxsplit < 0 || n < maxsplit)
			for (size_t k = i; k + dlen <= len; k++)
				if (memcmp(s + k, delim, dlen) == 0)
				{
					hit = s + k;
					break;
				}
		if (!hit)
		{
			if (emit && emit(arg, n, s + start, len - start) != OX_OK)
				return -1;
			return n + 1;
		}
		if (emit && emit(arg, n, s + start, (size_t) (hit - (s + start))) != OX_OK)
			return -1;
		n++;
		i = (size_t) (hit - s) + dlen;
	}
}

typedef struct split_emit_arg
{
	ox_kernel_ctx *ctx;
	ox_string  *row;
} split_emit_arg;

static ox_code
split_emit(void *arg, int64_t k, const char *p, size_t len)
{
	split_emit_arg *a = arg;

	return ox_text_string_set(a->ctx, &a->row[k], p, len);
}

static ox_code
string_split_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = text_input(ctx, 0, "X");
	const char *delim = ox_attr_string(ctx->node, "delimiter", "");
	const ox_attr *da = ox_node_attr(ctx->node, "delimiter");
	size_t		dlen = da && da->s ? da->s_len : strlen(delim);
	int64_t		maxsplit = -1;
	int64_t		n,
				width = 0,
				dims[OX_MAX_RANK];
	const ox_string *in;
	ox_tensor  *y,
			   *z;

	if (!x)
		return ctx->st->code;
	if (ox_node_attr(ctx->node, "maxsplit"))
	{
		maxsplit = ox_attr_int(ctx->node, "maxsplit", -1);
		if (maxsplit < 0)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "StringSplit: maxsplit must be >= 0, got %lld",
						   (long long) maxsplit);
	}
	if (x->rank >= OX_MAX_RANK)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "StringSplit: X has rank %d, at most %d allowed",
					   x->rank, OX_MAX_RANK - 1);
	n = ox_tensor_numel(x);
	in = x->data;
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		c = split_string(in[i].data, in[i].len, delim, dlen, maxsplit, NULL, NULL);

		if (c > width)
			width = c;
	}
	memcpy(dims, x->dims, sizeof(int64_t) * x->rank);
	dims[x->rank] = width;
	if (ox_shape_numel(x->rank + 1, dims) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "StringSplit: output too large");
	if (!(y = ox_out_tensor(ctx, 0, OX_STRING, x->rank + 1, dims)))
		return ctx->st->code;
	if (!(z = ox_out_tensor(ctx, 1, OX_INT64, x->rank, x->dims)))
		return ctx->st->code;
	for (int64_t i = 0; i < n; i++)
	{
		split_emit_arg a;
		int64_t		c;

		a.ctx = ctx;
		a.row = (ox_string *) y->data + i * width;
		c = split_string(in[i].data, in[i].len, delim, dlen, maxsplit, split_emit, &a);
		if (c < 0)
			return ctx->st->code;
		OX_DATA(z, int64_t)[i] = c;
		/* padding: the remaining entries are empty strings */
		for (int64_t k = c; k < width; k++)
			OX_TRY(ox_text_string_set(ctx, &a.row[k], "", 0));
	}
	return OX_OK;
}

/* ---------- StringConcat ---------- */

static ox_code
string_concat_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *a = text_input(ctx, 0, "X");
	const ox_tensor *b = a ? text_input(ctx, 1, "Y") : NULL;
	char		b1[OX_TEXT_SHAPE_LEN],
				b2[OX_TEXT_SHAPE_LEN];
	int			rank;
	int64_t		dims[OX_MAX_RANK],
				sa[OX_MAX_RANK],
				sb[OX_MAX_RANK],
				cnt[OX_MAX_RANK],
				n,
				ia = 0,
				ib = 0;
	ox_tensor  *y;
	ox_string  *out;

	if (!a || !b)
		return ctx->st->code;
	rank = a->rank > b->rank ? a->rank : b->rank;
	/* numpy broadcasting: align trailing dims; a dim of 1 stretches */
	{
		int64_t		stride_a = 1,
					stride_b = 1;

		for (int d = rank - 1; d >= 0; d--)
		{
			int			da = d - (rank - a->rank);
			int			db = d - (rank - b->rank);
			int64_t		xa = da >= 0 ? a->dims[da] : 1;
			int64_t		xb = db >= 0 ? b->dims[db] : 1;

			if (xa != xb && xa != 1 && xb != 1)
				return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
							   "StringConcat: shapes %s and %s cannot be broadcast",
							   ox_shape_str(a->rank, a->dims, b1, sizeof(b1)),
							   ox_shape_str(b->rank, b->dims, b2, sizeof(b2)));
			dims[d] = xa == 1 ? xb : xa;
			sa[d] = xa == 1 ? 0 : stride_a;
			sb[d] = xb == 1 ? 0 : stride_b;
			stride_a *= xa;
			stride_b *= xb;
		}
	}
	if ((n = ox_shape_numel(rank, dims)) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "StringConcat: output too large");
	if (!(y = ox_out_tensor(ctx, 0, OX_STRING, rank, dims)))
		return ctx->st->code;
	out = y->data;
	memset(cnt, 0, sizeof(cnt));
	for (int64_t i = 0; i < n; i++)
	{
		const ox_string *x1 = (const ox_string *) a->data + ia;
		const ox_string *x2 = (const ox_string *) b->data + ib;
		size_t		len = x1->len + x2->len;
		char	   *p = malloc(len + 1);
		int			d;

		if (!p)
			return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "StringConcat: out of memory");
		if (x1->len)
			memcpy(p, x1->data, x1->len);
		if (x2->len)
			memcpy(p + x1->len, x2->data, x2->len);
		p[len] = '\0';
		free(out[i].data);
		out[i].data = p;
		out[i].len = len;
		for (d = rank - 1; d >= 0; d--)
		{
			ia += sa[d];
			ib += sb[d];
			if (++cnt[d] < dims[d])
				break;
			ia -= sa[d] * dims[d];
			ib -= sb[d] * dims[d];
			cnt[d] = 0;
		}
	}
	return OX_OK;
}

const ox_kernel_def ox_kernels_text[] = {
	{"", "StringNormalizer", 10, normalizer_prepare, normalizer_run, normalizer_free},
	{"", "StringSplit", 20, NULL, string_split_run, NULL},
	{"", "StringConcat", 20, NULL, string_concat_run, NULL},
	{"", "RegexFullMatch", 20, ox_text_regex_prepare, ox_text_regex_run, ox_text_regex_free},
	{"", "TfIdfVectorizer", 9, ox_text_tfidf_prepare, ox_text_tfidf_run, ox_text_tfidf_free},
};
const int	ox_kernels_text_count = OX_KERNEL_COUNT(ox_kernels_text);
