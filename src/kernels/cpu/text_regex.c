/*
 * text_regex.c
 *	  RegexFullMatch (opset 20): whether each string matches a pattern in
 *	  full.
 *
 * ONNX specifies RE2 syntax; we match with POSIX <regex.h> (REG_EXTENDED)
 * after translating the common RE2/Python constructs POSIX lacks: the
 * class escapes \d \w \s and their negations (also inside brackets),
 * escaped punctuation inside brackets (literal in POSIX), (?:...) groups,
 * lazy quantifiers (which cannot change whether a full match exists),
 * \A \z anchors and \n \t \xHH character escapes.  Constructs with no
 * POSIX equivalent (look-around, back-references, inline flags) are
 * refused when the node is prepared.  The whole string must match: the
 * translated pattern is wrapped as ^(...)$.
 */
#include "kernels/cpu/text.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

typedef struct regex_state
{
	regex_t		re;
} regex_state;

typedef struct strbuf
{
	char	   *data;
	size_t		len;
	size_t		cap;
	bool		oom;
} strbuf;

static void
sb_putn(strbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap)
	{
		size_t		cap = (b->cap ? b->cap * 2 : 64) + n;
		char	   *p = realloc(b->data, cap);

		if (!p)
		{
			b->oom = true;
			return;
		}
		b->data = p;
		b->cap = cap;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

static void
sb_puts(strbuf *b, const char *s)
{
	sb_putn(b, s, strlen(s));
}

static void
sb_putc(strbuf *b, char c)
{
	sb_putn(b, &c, 1);
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Decode a character escape (\n \t \r \f \v \xHH, or escaped punctuation)
 * at p[0] == '\\'; returns the byte and sets *used, or -1 when p is not a
 * plain character escape.
 */
static int
char_escape(const char *p, const char *end, size_t *used)
{
	char		c;

	if (p + 1 >= end)
		return -1;
	c = p[1];
	*used = 2;
	switch (c)
	{
		case 'n':
			return '\n';
		case 't':
			return '\t';
		case 'r':
			return '\r';
		case 'f':
			return '\f';
		case 'v':
			return '\v';
		case 'x':
			if (p + 3 < end && hexval(p[2]) >= 0 && hexval(p[3]) >= 0)
			{
				*used = 4;
				return hexval(p[2]) * 16 + hexval(p[3]);
			}
			return -1;
		default:
			if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
				return -1;
			return (unsigned char) c;
	}
}

/* emit one literal byte outside brackets, escaping ERE specials */
static void
emit_literal(strbuf *b, int c)
{
	if (strchr(".[]()*+?{}|^$\\", c) && c != 0)
		sb_putc(b, '\\');
	sb_putc(b, (char) c);
}

/* translate a bracket expression starting at *pp == '[' */
static ox_code
translate_bracket(const char **pp, const char *end, strbuf *b, ox_status *st)
{
	const char *p = *pp + 1;
	bool		negate = false;
	bool		lit_rbracket = false,
				lit_caret = false,
				lit_dash = false;
	strbuf		body = {0};
	bool		empty = true;

	if (p < end && *p == '^')
	{
		negate = true;
		p++;
	}
	if (p < end && *p == ']')
	{
		lit_rbracket = true;
		empty = false;
		p++;
	}
	while (p < end && *p != ']')
	{
		if (*p == '[' && p + 1 < end && (p[1] == ':' || p[1] == '.' || p[1] == '='))
		{
			/* POSIX class such as [:alpha:]: copy through its closing ":]" */
			char		kind = p[1];
			const char *q = p + 2;

			while (q + 1 < end && !(q[0] == kind && q[1] == ']'))
				q++;
			if (q + 1 >= end)
				break;
			sb_putn(&body, p, (size_t) (q + 2 - p));
			p = q + 2;
			empty = false;
			continue;
		}
		if (*p == '\\')
		{
			size_t		used;
			int			c;

			if (p + 1 >= end)
				break;
			switch (p[1])
			{
				case 'd':
					sb_puts(&body, "0-9");
					p += 2;
					empty = false;
					continue;
				case 'w':
					sb_puts(&body, "[:alnum:]_");
					p += 2;
					empty = false;
					continue;
				case 's':
					sb_puts(&body, "[:space:]");
					p += 2;
					empty = false;
					continue;
				case 'D':
				case 'W':
				case 'S':
					free(body.data);
					return ox_fail(st, OX_UNSUPPORTED,
								   "RegexFullMatch: \\%c inside a bracket expression is not supported", p[1]);
				default:
					break;
			}
			c = char_escape(p, end, &used);
			if (c < 0)
			{
				free(body.data);
				return ox_fail(st, OX_INVALID_ARGUMENT, "RegexFullMatch: invalid escape \\%c in brackets", p[1]);
			}
			p += used;
			empty = false;
			if (c == ']')
				lit_rbracket = true;
			else if (c == '^')
				lit_caret = true;
			else if (c == '-')
				lit_dash = true;
			else if (c == 0)
			{
				free(body.data);
				return ox_fail(st, OX_UNSUPPORTED, "RegexFullMatch: NUL in a pattern is not supported");
			}
			else
				sb_putc(&body, (char) c);
			continue;
		}
		if (*p == '-' && (empty || (p + 1 < end && p[1] == ']')))
		{
			/* a dash at either end is literal: move it to the end */
			lit_dash = true;
			empty = false;
			p++;
			continue;
		}
		if (*p == '^')
		{
			lit_caret = true;
			p++;
			empty = false;
			continue;
		}
		sb_putc(&body, *p++);
		empty = false;
	}
	if (p >= end)
	{
		free(body.data);
		return ox_fail(st, OX_INVALID_ARGUMENT, "RegexFullMatch: unterminated bracket expression");
	}
	sb_putc(b, '[');
	if (negate)
		sb_putc(b, '^');
	if (lit_rbracket)
		sb_putc(b, ']');
	if (body.len)
		sb_putn(b, body.data, body.len);
	if (lit_caret)
	{
		/* a lone caret would read as negation */
		if (!lit_rbracket && body.len == 0 && !lit_dash)
			sb_puts(b, "[.^.]");
		else
			sb_putc(b, '^');
	}
	if (lit_dash)
		sb_putc(b, '-');
	sb_putc(b, ']');
	free(body.data);
	if (body.oom)
		b->oom = true;
	*pp = p + 1;
	return OX_OK;
}

ox_code
ox_text_regex_translate(const char *pat, size_t len, char **out, ox_status *st)
{
	const char *p = pat;
	const char *end = pat + len;
	strbuf		b = {0};
	bool		after_quant = false;	/* previous token was a quantifier */

	*out = NULL;
	sb_puts(&b, "^(");
	while (p < end)
	{
		bool		quant = false;

		if (*p == '\\')
		{
			size_t		used;
			int			c;

			if (p + 1 >= end)
			{
				free(b.data);
				return ox_fail(st, OX_INVALID_ARGUMENT, "RegexFullMatch: pattern ends with a backslash");
			}
			switch (p[1])
			{
				case 'd':
					sb_puts(&b, "[0-9]");
					break;
				case 'D':
					sb_puts(&b, "[^0-9]");
					break;
				case 'w':
					sb_puts(&b, "[[:alnum:]_]");
					break;
				case 'W':
					sb_puts(&b, "[^[:alnum:]_]");
					break;
				case 's':
					sb_puts(&b, "[[:space:]]");
					break;
				case 'S':
					sb_puts(&b, "[^[:space:]]");
					break;
				case 'b':
				case 'B':
					/* word boundaries: a GNU extension of POSIX regcomp */
					sb_putc(&b, '\\');
					sb_putc(&b, p[1]);
					break;
				case 'A':
					sb_putc(&b, '^');
					break;
				case 'z':
					sb_putc(&b, '$');
					break;
				default:
					c = char_escape(p, end, &used);
					if (c <= 0)
					{
						free(b.data);
						return ox_fail(st, c == 0 ? OX_UNSUPPORTED : OX_INVALID_ARGUMENT,
									   "RegexFullMatch: unsupported escape \\%c in pattern", p[1]);
					}
					emit_literal(&b, c);
					p += used;
					after_quant = false;
					continue;
			}
			p += 2;
		}
		else if (*p == '[')
		{
			if (translate_bracket(&p, end, &b, st) != OX_OK)
			{
				free(b.data);	/* found by fuzz_load: the bracket error path leaked */
				return st->code;
			}
			after_quant = false;
			continue;
		}
		else if (*p == '(' && p + 1 < end && p[1] == '?')
		{
			if (p + 2 < end && p[2] == ':')
				p += 3;
			else if (p + 3 < end && p[2] == 'P' && p[3] == '<')
			{
				const char *q = p + 4;

				while (q < end && *q != '>')
					q++;
				if (q >= end)
				{
					free(b.data);
					return ox_fail(st, OX_INVALID_ARGUMENT, "RegexFullMatch: unterminated group name");
				}
				p = q + 1;
			}
			else
			{
				free(b.data);
				return ox_fail(st, OX_UNSUPPORTED,
							   "RegexFullMatch: group construct \"(?%c\" is not supported",
							   p + 2 < end ? p[2] : ' ');
			}
			sb_putc(&b, '(');
		}
		else if (*p == '?' && after_quant)
		{
			/* lazy quantifier: same set of full matches as the greedy one */
			p++;
			after_quant = false;
			continue;
		}
		else
		{
			quant = *p == '*' || *p == '+' || *p == '?' || *p == '}';
			if (*p == 0)
			{
				free(b.data);
				return ox_fail(st, OX_UNSUPPORTED, "RegexFullMatch: NUL in a pattern is not supported");
			}
			sb_putc(&b, *p++);
		}
		after_quant = quant;
	}
	sb_puts(&b, ")$");
	if (b.oom)
	{
		free(b.data);
		return ox_fail(st, OX_OUT_OF_MEMORY, "RegexFullMatch: out of memory");
	}
	*out = b.data;
	return OX_OK;
}

void
ox_text_regex_free(void *state)
{
	regex_state *s = state;

	if (!s)
		return;
	regfree(&s->re);
	free(s);
}

ox_code
ox_text_regex_prepare(ox_prepare_ctx *pc)
{
	const ox_attr *a = ox_node_attr(pc->node, "pattern");
	regex_state *s;
	char	   *ere;
	int			err;

	if (!a || a->type != OX_ATTR_STRING || !a->s)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "RegexFullMatch: the pattern attribute is required");
	OX_TRY(ox_text_regex_translate(a->s, a->s_len, &ere, pc->st));
	if (!(s = calloc(1, sizeof(*s))))
	{
		free(ere);
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "RegexFullMatch: out of memory");
	}
	err = regcomp(&s->re, ere, REG_EXTENDED | REG_NOSUB);
	free(ere);
	if (err != 0)
	{
		char		msg[256];

		regerror(err, &s->re, msg, sizeof(msg));
		free(s);
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "RegexFullMatch: invalid pattern \"%s\": %s", a->s, msg);
	}
	pc->state = s;
	return OX_OK;
}

ox_code
ox_text_regex_run(ox_kernel_ctx *ctx)
{
	const regex_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	ox_tensor  *y;
	int64_t		n;

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "RegexFullMatch: prepare did not run");
	if (!x || x->dtype != OX_STRING)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "RegexFullMatch: X must be a string tensor, got %s",
					   x ? ox_dtype_name(x->dtype) : "nothing");
	if ((n = ox_tensor_numel(x)) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "RegexFullMatch: input too large");
	if (!(y = ox_out_tensor(ctx, 0, OX_BOOL, x->rank, x->dims)))
		return ctx->st->code;
	for (int64_t i = 0; i < n; i++)
	{
		const ox_string *str = (const ox_string *) x->data + i;
		regmatch_t	m;

		/* REG_STARTEND: the string's own length, so embedded NULs count */
		m.rm_so = 0;
		m.rm_eo = (regoff_t) str->len;
		OX_DATA(y, bool)[i] = regexec(&s->re, str->data ? str->data : "", 1, &m, REG_STARTEND) == 0;
	}
	return OX_OK;
}
