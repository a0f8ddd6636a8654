/*
 * elementwise_cast.c
 *	  Cast and CastLike: between all numeric types, bool, float16, bfloat16,
 *	  float8, float4, float8e8m0, int4/uint4/int2/uint2 and strings.
 *
 * Numbers convert through ox_convert_elements_ex (float to integer truncates
 * and saturates; to 4- and 2-bit integers it keeps the low bits).  Numbers
 * become strings the way numpy's astype(str) writes them: the shortest
 * digits that read back to the same value, positional
 * for magnitudes in [1e-4, T) and scientific otherwise, where T is 1e16 for
 * double, 1e6 for float and 1e3 for float16 ("0.1", "100.0", "1e-05",
 * "1.5e+16", "nan", "-inf"); bool becomes "True"/"False".  Strings become
 * numbers by parsing: decimal and scientific notation, "inf", "+INF", "-INF"
 * and "NaN" in any case; integers also accept a decimal fraction, which is
 * truncated.  A string that is not a number is an error.
 *
 * The "saturate" attribute (opset 19) concerns float8 and float8e8m0
 * targets: out-of-range values saturate to the largest finite value by
 * default, or become infinity/NaN as the Cast tables say.  "round_mode"
 * (opset 24: up, down or nearest) rounds float8e8m0 targets.  Both are
 * parsed once in prepare and travel in the kernel state with the target
 * type.  Narrow floats become strings as their float32 value would.
 */
#include "kernels/cpu/elementwise.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

/* ---- numbers to strings ------------------------------------------------ */

/* the value v read back at the precision of dt */
static double
round_trip(double v, ox_dtype dt)
{
	switch (dt)
	{
		case OX_FLOAT:
			return (float) v;
		case OX_FLOAT16:
			return ox_half_to_float(ox_float_to_half((float) v));
		case OX_BFLOAT16:
			return ox_bf16_to_float(ox_float_to_bf16((float) v));
		default:
			return v;
	}
}

/*
 * Shortest decimal digits of a finite non-zero v (already of type dt) that
 * convert back to v: digits into buf (no dot, no sign), returns the decimal
 * exponent of the first digit.
 */
static int
shortest_digits(double v, ox_dtype dt, char *digits, int *ndigits)
{
	char		buf[64];
	int			max_prec = dt == OX_DOUBLE ? 17 : 9;
	int			p;

	for (p = 1; p < max_prec; p++)
	{
		snprintf(buf, sizeof(buf), "%.*e", p - 1, v);
		if (dt == OX_FLOAT ? strtof(buf, NULL) == (float) v
			: round_trip(strtod(buf, NULL), dt) == v)
			break;
	}
	snprintf(buf, sizeof(buf), "%.*e", p - 1, v);

	/* buf is [-]d[.ddd]e[+-]xx */
	const char *s = buf + (buf[0] == '-');
	int			n = 0;

	for (; *s && *s != 'e'; s++)
		if (isdigit((unsigned char) *s))
			digits[n++] = *s;
	/* drop trailing zeros ("1.50e+00" cannot be shortest, but be safe) */
	while (n > 1 && digits[n - 1] == '0')
		n--;
	digits[n] = '\0';
	*ndigits = n;
	return atoi(s + 1);
}

/* numpy's str() of a float value of type dt */
static void
format_float(double v, ox_dtype dt, char *out, size_t len)
{
	char		digits[32];
	int			nd;
	int			e;
	double		upper = dt == OX_DOUBLE ? 1e16 : dt == OX_FLOAT ? 1e6 : 1e3;
	double		mag = fabs(v);
	size_t		o = 0;

	if (isnan(v))
	{
		snprintf(out, len, "nan");
		return;
	}
	if (isinf(v))
	{
		snprintf(out, len, v < 0 ? "-inf" : "inf");
		return;
	}
	if (v == 0)
	{
		snprintf(out, len, signbit(v) ? "-0.0" : "0.0");
		return;
	}
	e = shortest_digits(v, dt, digits, &nd);
	if (v < 0)
		out[o++] = '-';
	if (mag >= 1e-4 && mag < upper)
	{
		/* positional, with at least one digit after the point */
		if (e >= 0)
		{
			for (int i = 0; i <= e; i++)
				out[o++] = i < nd ? digits[i] : '0';
			out[o++] = '.';
			if (nd > e + 1)
				for (int i = e + 1; i < nd; i++)
					out[o++] = digits[i];
			else
				out[o++] = '0';
		}
		else
		{
			out[o++] = '0';
			out[o++] = '.';
			for (int i = 0; i < -e - 1; i++)
				out[o++] = '0';
			for (int i = 0; i < nd; i++)
				out[o++] = digits[i];
		}
		out[o] = '\0';
	}
	else
	{
		out[o++] = digits[0];
		if (nd > 1)
		{
			out[o++] = '.';
			for (int i = 1; i < nd; i++)
				out[o++] = digits[i];
		}
		snprintf(out + o, len - o, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
	}
}

/* element i of a numeric tensor as text */
static void
format_element(const ox_tensor *t, int64_t i, char *buf, size_t len)
{
	switch (t->dtype)
	{
		case OX_FLOAT:
		case OX_DOUBLE:
		case OX_FLOAT16:
		case OX_BFLOAT16:
			format_float(ox_tensor_get_double(t, i), t->dtype, buf, len);
			break;
		case OX_FLOAT8E4M3FN:
		case OX_FLOAT8E4M3FNUZ:
		case OX_FLOAT8E5M2:
		case OX_FLOAT8E5M2FNUZ:
		case OX_FLOAT4E2M1:
		case OX_FLOAT8E8M0:
			format_float(ox_tensor_get_double(t, i), OX_FLOAT, buf, len);
			break;
		case OX_BOOL:
			snprintf(buf, len, "%s", ((const uint8_t *) t->data)[i] ? "True" : "False");
			break;
		case OX_UINT64:
			snprintf(buf, len, "%llu", (unsigned long long) ((const uint64_t *) t->data)[i]);
			break;
		default:
			snprintf(buf, len, "%lld", (long long) ox_tensor_get_int64(t, i));
			break;
	}
}

static ox_code
to_strings(ox_kernel_ctx *ctx, const ox_tensor *x, ox_tensor *y)
{
	int64_t		n = ox_tensor_numel(x);
	ox_string  *out = y->data;

	for (int64_t i = 0; i < n; i++)
	{
		char		buf[64];
		const char *src;
		size_t		len;

		if (x->dtype == OX_STRING)
		{
			src = ((const ox_string *) x->data)[i].data;
			len = ((const ox_string *) x->data)[i].len;
		}
		else
		{
			format_element(x, i, buf, sizeof(buf));
			src = buf;
			len = strlen(buf);
		}
		out[i].data = malloc(len + 1);
		if (!out[i].data)
			return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Cast could not allocate a string");
		if (len)
			memcpy(out[i].data, src, len);
		out[i].data[len] = '\0';
		out[i].len = len;
	}
	return OX_OK;
}

/* ---- strings to numbers ------------------------------------------------ */

static bool
only_space(const char *s)
{
	while (isspace((unsigned char) *s))
		s++;
	return *s == '\0';
}

/* parse a float; strtod already reads inf/infinity/nan in any case */
static bool
parse_double(const char *s, double *out)
{
	char	   *end;

	if (!*s || only_space(s))
		return false;
	*out = strtod(s, &end);
	return end != s && only_space(end);
}

/* parse s as a dt into dst; false when s is not a number */
static bool
parse_number(const char *s, ox_dtype dt, unsigned flags, void *dst)
{
	char	   *end;
	double		d;

	if (dt == OX_FLOAT)
	{
		/* strtof rounds once, straight to float */
		float		f = strtof(s, &end);

		*(float *) dst = f;
		return end != s && only_space(end);
	}
	if (dt == OX_INT64 || dt == OX_UINT64)
	{
		/* the whole 64-bit range exactly; fractions fall through to strtod */
		bool		neg = strchr(s, '-') != NULL;

		errno = 0;
		if (dt == OX_INT64)
		{
			long long	v = strtoll(s, &end, 10);

			*(int64_t *) dst = v;
		}
		else
		{
			unsigned long long v = strtoull(s, &end, 10);

			*(uint64_t *) dst = v;
		}
		if (end != s && only_space(end) && errno == 0 && !(neg && dt == OX_UINT64))
			return true;
	}
	if (dt == OX_BOOL && (strcasecmp(s, "true") == 0 || strcasecmp(s, "false") == 0))
	{
		*(uint8_t *) dst = strcasecmp(s, "true") == 0;
		return true;
	}
	if (!parse_double(s, &d))
		return false;
	return ox_convert_elements_ex(dst, dt, &d, OX_DOUBLE, 1, flags, NULL) == OX_OK;
}

static ox_code
from_strings(ox_kernel_ctx *ctx, const ox_tensor *x, ox_tensor *y, unsigned flags)
{
	int64_t		n = ox_tensor_numel(x);
	const ox_string *in = x->data;
	size_t		es = ox_dtype_size(y->dtype);

	for (int64_t i = 0; i < n; i++)
	{
		const char *s = in[i].data ? in[i].data : "";

		/* an embedded NUL is not part of any number */
		if (strlen(s) != in[i].len ||
			!parse_number(s, y->dtype, flags, (char *) y->data + i * es))
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Cast cannot convert string \"%.64s\" to %s",
						   s, ox_dtype_name(y->dtype));
	}
	return OX_OK;
}

/* ---- numbers to numbers ------------------------------------------------ */

typedef struct convert_job
{
	const char *src;
	char	   *dst;
	ox_dtype	src_dt;
	ox_dtype	dst_dt;
	unsigned	flags;			/* OX_CONVERT_* */
} convert_job;

static void
convert_range(void *arg, int64_t begin, int64_t end)
{
	const convert_job *j = arg;
	size_t		ss = ox_dtype_size(j->src_dt);
	size_t		ds = ox_dtype_size(j->dst_dt);

	/* types were checked by the caller, so this cannot fail */
	ox_convert_elements_ex(j->dst + begin * ds, j->dst_dt, j->src + begin * ss, j->src_dt,
						   end - begin, j->flags, NULL);
}

static bool
castable(ox_dtype dt)
{
	return dt == OX_STRING || ox_dtype_is_numeric(dt);
}

/* Cast x into output 0 as type to, with OX_CONVERT_* flags */
static ox_code
cast_to(ox_kernel_ctx *ctx, const ox_tensor *x, int64_t to, unsigned flags)
{
	ox_tensor  *y;
	convert_job j;

	if (to <= 0 || to >= OX_DTYPE_COUNT || !castable((ox_dtype) to))
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s to type %lld is not supported",
					   ctx->node->op_type, (long long) to);
	if (!castable(x->dtype))
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s from type %s is not supported",
					   ctx->node->op_type, ox_dtype_name(x->dtype));
	y = ox_out_tensor(ctx, 0, (ox_dtype) to, x->rank, x->dims);
	if (!y)
		return ctx->st->code;
	if (y->dtype == OX_STRING)
		return to_strings(ctx, x, y);
	if (x->dtype == OX_STRING)
		return from_strings(ctx, x, y, flags);
	j.src = x->data;
	j.dst = y->data;
	j.src_dt = x->dtype;
	j.dst_dt = y->dtype;
	j.flags = flags;
	ox_parallel_for(ctx, ox_tensor_numel(x), OX_EW_MIN_CHUNK, convert_range, &j);
	return OX_OK;
}

/* opset 1 names the target type in a string attribute */
static int64_t
type_from_name(const char *name)
{
	static const struct
	{
		const char *name;
		ox_dtype	dt;
	}			names[] = {
		{"FLOAT", OX_FLOAT}, {"UINT8", OX_UINT8}, {"INT8", OX_INT8},
		{"UINT16", OX_UINT16}, {"INT16", OX_INT16}, {"INT32", OX_INT32},
		{"INT64", OX_INT64}, {"STRING", OX_STRING}, {"BOOL", OX_BOOL},
		{"FLOAT16", OX_FLOAT16}, {"DOUBLE", OX_DOUBLE}, {"UINT32", OX_UINT32},
		{"UINT64", OX_UINT64}, {"BFLOAT16", OX_BFLOAT16},
		{"FLOAT8E4M3FN", OX_FLOAT8E4M3FN}, {"FLOAT8E4M3FNUZ", OX_FLOAT8E4M3FNUZ},
		{"FLOAT8E5M2", OX_FLOAT8E5M2}, {"FLOAT8E5M2FNUZ", OX_FLOAT8E5M2FNUZ},
		{"UINT4", OX_UINT4}, {"INT4", OX_INT4}, {"FLOAT4E2M1", OX_FLOAT4E2M1},
		{"FLOAT8E8M0", OX_FLOAT8E8M0}, {"UINT2", OX_UINT2}, {"INT2", OX_INT2},
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcasecmp(name, names[i].name) == 0)
			return names[i].dt;
	return -1;
}

/*
 * The kernel state packs the target type (0 for CastLike) into the low 8
 * bits and the OX_CONVERT_* flags above them.
 */
#define CAST_STATE_TYPE(v) ((v) & 0xff)
#define CAST_STATE_FLAGS(v) ((unsigned) (v) >> 8)

/* saturate and round_mode as OX_CONVERT_* flags */
static ox_code
cast_flags(ox_prepare_ctx *pc, unsigned *flags)
{
	const ox_node *node = pc->node;
	int64_t		saturate = ox_attr_int(node, "saturate", 1);
	const ox_attr *mode = ox_node_attr(node, "round_mode");

	*flags = 0;
	if (saturate != 0 && saturate != 1)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "%s: saturate must be 0 or 1, got %lld",
					   node->op_type, (long long) saturate);
	if (!saturate)
		*flags |= OX_CONVERT_NO_SATURATE;
	if (mode)
	{
		if (mode->type != OX_ATTR_STRING)
			return ox_fail(pc->st, OX_INVALID_MODEL, "%s: round_mode must be a string",
						   node->op_type);
		if (strcmp(mode->s, "down") == 0)
			*flags |= OX_CONVERT_E8M0_DOWN;
		else if (strcmp(mode->s, "nearest") == 0)
			*flags |= OX_CONVERT_E8M0_NEAREST;
		else if (strcmp(mode->s, "up") != 0)
			return ox_fail(pc->st, OX_UNSUPPORTED,
						   "%s: round_mode \"%s\" is not supported (expected up, down or nearest)",
						   node->op_type, mode->s);
	}
	return OX_OK;
}

/* state: the target type and conversion flags, checked once */
ox_code
ox_ew_cast_prepare(ox_prepare_ctx *pc)
{
	const ox_attr *to = ox_node_attr(pc->node, "to");
	int64_t		dt;
	unsigned	flags;

	OX_TRY(cast_flags(pc, &flags));
	if (strcmp(pc->node->op_type, "CastLike") == 0)
		return ox_ew_state_int(pc, (int) (flags << 8));
	if (to && to->type == OX_ATTR_STRING)
	{
		dt = type_from_name(to->s);
		if (dt < 0)
			return ox_fail(pc->st, OX_UNSUPPORTED, "Cast to type \"%s\" is not supported", to->s);
	}
	else if (to && to->type == OX_ATTR_INT)
		dt = to->i;
	else
		return ox_fail(pc->st, OX_INVALID_MODEL, "Cast needs the attribute to");
	if (dt <= 0 || dt >= OX_DTYPE_COUNT || !castable((ox_dtype) dt))
		return ox_fail(pc->st, OX_UNSUPPORTED, "Cast to type %lld is not supported", (long long) dt);
	return ox_ew_state_int(pc, (int) (dt | (flags << 8)));
}

ox_code
ox_ew_cast(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = ox_ew_input(ctx, 0);
	int			state;

	if (!x)
		return ctx->st->code;
	if (!ctx->state)
		return ox_fail(ctx->st, OX_INTERNAL, "Cast ran without prepare");
	state = ox_ew_state_get(ctx, 0);
	return cast_to(ctx, x, CAST_STATE_TYPE(state), CAST_STATE_FLAGS(state));
}

ox_code
ox_ew_cast_like(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = ox_ew_input(ctx, 0);
	const ox_tensor *like = ox_ew_input(ctx, 1);

	if (!x || !like)
		return ctx->st->code;
	/* without prepare (a caller of the bare run function): the defaults */
	return cast_to(ctx, x, like->dtype, CAST_STATE_FLAGS(ox_ew_state_get(ctx, 0)));
}
