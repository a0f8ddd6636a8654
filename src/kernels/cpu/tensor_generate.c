/*
 * tensor_generate.c
 *	  Kernels that produce tensors from attributes or scalars: Constant,
 *	  ConstantOfShape, Range, EyeLike, and Dropout (identity at inference).
 */
#include "kernels/cpu/tensor_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------
 * Constant, ConstantOfShape
 * --------------------------------------------------------------------- */

ox_code
oxt_constant_run(ox_kernel_ctx *ctx)
{
	const ox_node *node = ctx->node;
	const ox_attr *a = NULL;
	int			found = 0;
	static const char *const names[] = {
		"value", "value_float", "value_floats", "value_int", "value_ints",
		"value_string", "value_strings", "sparse_value"
	};
	ox_tensor  *out;
	int64_t		n;

	for (int i = 0; i < (int) (sizeof(names) / sizeof(names[0])); i++)
	{
		const ox_attr *c = ox_node_attr(node, names[i]);

		if (c)
		{
			a = c;
			found++;
		}
	}
	if (found != 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "Constant: exactly one value attribute must be set, found %d", found);
	if (strcmp(a->name, "sparse_value") == 0)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "Constant: sparse_value is not supported");
	if (strcmp(a->name, "value") == 0)
	{
		if (a->type != OX_ATTR_TENSOR || !a->t)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Constant: attribute value is not a tensor");
		if (oxt_numel(ctx, a->t, "value") < 0)
			return ctx->st->code;
		return oxt_output_copy(ctx, 0, a->t, a->t->rank, a->t->dims);
	}
	if (strcmp(a->name, "value_float") == 0)
	{
		if (!(out = ox_out_tensor(ctx, 0, OX_FLOAT, 0, NULL)))
			return ctx->st->code;
		OX_DATA(out, float)[0] = a->f;
		return OX_OK;
	}
	if (strcmp(a->name, "value_int") == 0)
	{
		if (!(out = ox_out_tensor(ctx, 0, OX_INT64, 0, NULL)))
			return ctx->st->code;
		OX_DATA(out, int64_t)[0] = a->i;
		return OX_OK;
	}
	if (strcmp(a->name, "value_string") == 0)
	{
		if (!(out = ox_out_tensor(ctx, 0, OX_STRING, 0, NULL)))
			return ctx->st->code;
		return oxt_string_set(ctx, OX_DATA(out, ox_string), a->s ? a->s : "",
							  a->s ? a->s_len : 0);
	}
	n = a->n;
	if (strcmp(a->name, "value_floats") == 0)
	{
		if (!(out = ox_out_tensor(ctx, 0, OX_FLOAT, 1, &n)))
			return ctx->st->code;
		if (n)
			memcpy(out->data, a->floats, sizeof(float) * n);
		return OX_OK;
	}
	if (strcmp(a->name, "value_ints") == 0)
	{
		if (!(out = ox_out_tensor(ctx, 0, OX_INT64, 1, &n)))
			return ctx->st->code;
		if (n)
			memcpy(out->data, a->ints, sizeof(int64_t) * n);
		return OX_OK;
	}
	/* value_strings */
	if (!(out = ox_out_tensor(ctx, 0, OX_STRING, 1, &n)))
		return ctx->st->code;
	for (int64_t i = 0; i < n; i++)
	{
		const char *s = a->strings[i] ? a->strings[i] : "";
		size_t		len = a->string_lens ? a->string_lens[i] : strlen(s);

		OX_TRY(oxt_string_set(ctx, &OX_DATA(out, ox_string)[i], s, len));
	}
	return OX_OK;
}

ox_code
oxt_constant_of_shape_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *s = oxt_input(ctx, 0, "input");
	const ox_tensor *value = ox_attr_tensor(ctx->node, "value");
	int64_t		dims[OX_MAX_RANK];
	int			n;
	float		zero = 0.0f;
	ox_tensor  *out;
	int64_t		total;

	if (!s)
		return ctx->st->code;
	if (s->dtype != OX_INT64)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "ConstantOfShape: input must be int64, got %s",
					   ox_dtype_name(s->dtype));
	OX_TRY(oxt_read_ints(ctx, s, dims, OX_MAX_RANK, &n, "input"));
	for (int i = 0; i < n; i++)
		if (dims[i] < 0)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "ConstantOfShape: dimension %d is negative (%lld)",
						   i, (long long) dims[i]);
	if ((total = ox_shape_numel(n, dims)) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "ConstantOfShape: shape has too many elements");
	if (value && ox_tensor_numel(value) != 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "ConstantOfShape: value must hold one element, got %lld",
					   (long long) ox_tensor_numel(value));
	if (!(out = ox_out_tensor(ctx, 0, value ? value->dtype : OX_FLOAT, n, dims)))
		return ctx->st->code;
	return oxt_fill(ctx, out->dtype, out->data, value ? value->data : &zero, total);
}

/* ---------------------------------------------------------------------
 * Dropout
 *
 * Inference is the identity with an all-true mask.  Training mode with a
 * ratio above zero draws the keep mask from MT19937 seeded like numpy's
 * RandomState(seed), which is what the ONNX reference uses, so a given seed
 * produces the same mask as the reference.
 * --------------------------------------------------------------------- */

typedef struct mt19937
{
	uint32_t	mt[624];
	int			pos;
} mt19937;

static void
mt_seed(mt19937 *m, uint32_t seed)
{
	m->mt[0] = seed;
	for (int i = 1; i < 624; i++)
		m->mt[i] = 1812433253u * (m->mt[i - 1] ^ (m->mt[i - 1] >> 30)) + (uint32_t) i;
	m->pos = 624;
}

static uint32_t
mt_next(mt19937 *m)
{
	uint32_t	y;

	if (m->pos >= 624)
	{
		for (int i = 0; i < 624; i++)
		{
			y = (m->mt[i] & 0x80000000u) | (m->mt[(i + 1) % 624] & 0x7fffffffu);
			m->mt[i] = m->mt[(i + 397) % 624] ^ (y >> 1) ^ ((y & 1) ? 0x9908b0dfu : 0);
		}
		m->pos = 0;
	}
	y = m->mt[m->pos++];
	y ^= y >> 11;
	y ^= (y << 7) & 0x9d2c5680u;
	y ^= (y << 15) & 0xefc60000u;
	y ^= y >> 18;
	return y;
}

/* numpy's random_double: 53 random bits in [0, 1) */
static double
mt_double(mt19937 *m)
{
	uint32_t	a = mt_next(m) >> 5;
	uint32_t	b = mt_next(m) >> 6;

	return (a * 67108864.0 + b) / 9007199254740992.0;
}

ox_code
oxt_dropout_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "data");
	double		ratio = 0.5;
	bool		training = false;
	int64_t		n;
	ox_tensor  *out;
	ox_tensor  *mask;
	ox_dtype	mask_dt;
	mt19937    *rng;
	ox_code		rc = OX_OK;

	if (!x)
		return ctx->st->code;
	if ((n = oxt_numel(ctx, x, "data")) < 0)
		return ctx->st->code;
	if (ctx->node->opset >= 12)
	{
		if (ox_in_tensor(ctx, 1))
			OX_TRY(oxt_scalar_double(ctx, ox_in_tensor(ctx, 1), &ratio, "ratio"));
		if (ox_in_tensor(ctx, 2))
		{
			int64_t		t;

			OX_TRY(oxt_scalar_int(ctx, ox_in_tensor(ctx, 2), &t, "training_mode"));
			training = t != 0;
		}
	}
	else
	{
		/*
		 * Before opset 7, is_test=0 asked for training behaviour; like other
		 * inference engines we always run these old forms as inference.
		 */
		ratio = ox_attr_float(ctx->node, "ratio", 0.5f);
	}
	if (training && (ratio < 0 || ratio >= 1 || isnan(ratio)))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Dropout: ratio %g must be in [0, 1)", ratio);
	mask_dt = ctx->node->opset >= 10 ? OX_BOOL : x->dtype;
	if (!training || ratio == 0)
	{
		OX_TRY(oxt_output_copy(ctx, 0, x, x->rank, x->dims));
		if (ctx->n_out > 1)
		{
			double		one = 1.0;
			uint8_t		buf[16];

			if (!(mask = ox_out_tensor(ctx, 1, mask_dt, x->rank, x->dims)))
				return ctx->st->code;
			if (mask_dt == OX_STRING)
				return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Dropout: string input is not supported");
			OX_TRY(ox_convert_elements(buf, mask_dt, &one, OX_DOUBLE, 1, ctx->st));
			OX_TRY(oxt_fill(ctx, mask_dt, mask->data, buf, n));
		}
		return OX_OK;
	}
	if (!ox_dtype_is_float(x->dtype))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Dropout: input must be a float type, got %s",
					   ox_dtype_name(x->dtype));
	if (!(out = ox_out_tensor(ctx, 0, x->dtype, x->rank, x->dims)))
		return ctx->st->code;
	mask = NULL;
	if (ctx->n_out > 1 && !(mask = ox_out_tensor(ctx, 1, OX_BOOL, x->rank, x->dims)))
		return ctx->st->code;
	if (!(rng = malloc(sizeof(mt19937))))
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Dropout: could not allocate the generator");
	mt_seed(rng, (uint32_t) ox_attr_int(ctx->node, "seed", 0));
	for (int64_t i = 0; i < n && rc == OX_OK; i++)
	{
		bool		keep = mt_double(rng) >= ratio;
		double		v = keep ? ox_tensor_get_double(x, i) / (1.0 - ratio) : 0.0;

		rc = ox_convert_elements((char *) out->data + i * ox_dtype_size(x->dtype), x->dtype,
								 &v, OX_DOUBLE, 1, ctx->st);
		if (mask)
			OX_DATA(mask, uint8_t)[i] = keep;
	}
	free(rng);
	return rc;
}

/* ---------------------------------------------------------------------
 * Range, EyeLike
 * --------------------------------------------------------------------- */

ox_code
oxt_range_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *ts = oxt_input(ctx, 0, "start");
	const ox_tensor *tl = oxt_input(ctx, 1, "limit");
	const ox_tensor *td = oxt_input(ctx, 2, "delta");
	ox_dtype	dt;
	int64_t		n;
	ox_tensor  *out;

	if (!ts || !tl || !td)
		return ctx->st->code;
	dt = ts->dtype;
	if (tl->dtype != dt || td->dtype != dt)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Range: start, limit and delta types differ (%s, %s, %s)",
					   ox_dtype_name(dt), ox_dtype_name(tl->dtype), ox_dtype_name(td->dtype));
	if (ox_dtype_is_int(dt))
	{
		int64_t		s,
					l,
					d;
		__int128	span;

		OX_TRY(oxt_scalar_int(ctx, ts, &s, "start"));
		OX_TRY(oxt_scalar_int(ctx, tl, &l, "limit"));
		OX_TRY(oxt_scalar_int(ctx, td, &d, "delta"));
		if (d == 0)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Range: delta must not be zero");
		span = (__int128) l - s;
		/* ceil(span / d), clamped at zero */
		if ((span > 0) != (d > 0) || span == 0)
			n = 0;
		else
		{
			__int128	q = span / d + (span % d != 0);

			if (q > OX_MAX_ELEMENTS)
				return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "Range: %lld elements exceed the limit",
							   (long long) (q > INT64_MAX ? INT64_MAX : q));
			n = (int64_t) q;
		}
		if (!(out = ox_out_tensor(ctx, 0, dt, 1, &n)))
			return ctx->st->code;
		for (int64_t i = 0; i < n; i++)
		{
			int64_t		v = s + i * d;

			OX_TRY(ox_convert_elements((char *) out->data + i * ox_dtype_size(dt), dt, &v,
									   OX_INT64, 1, ctx->st));
			/* a few bytes of input ask for billions of elements */
			if (ox_kernel_poll(ctx, 1))
				return ctx->st->code;
		}
		return OX_OK;
	}
	if (ox_dtype_is_float(dt))
	{
		double		s,
					l,
					d,
					q;

		OX_TRY(oxt_scalar_double(ctx, ts, &s, "start"));
		OX_TRY(oxt_scalar_double(ctx, tl, &l, "limit"));
		OX_TRY(oxt_scalar_double(ctx, td, &d, "delta"));
		if (d == 0 || isnan(d) || isnan(s) || isnan(l))
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Range: delta must be non-zero and values not NaN");
		q = ceil((l - s) / d);
		if (!(q <= (double) OX_MAX_ELEMENTS))
			return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "Range: %g elements exceed the limit", q);
		n = q > 0 ? (int64_t) q : 0;
		if (!(out = ox_out_tensor(ctx, 0, dt, 1, &n)))
			return ctx->st->code;
		if (dt == OX_FLOAT)
		{
			/* accumulate like the reference (start + i * delta in the element type) */
			float		fs = (float) s,
						fd = (float) d;

			/* blocks: a poll inside the loop would stop vectorization */
			for (int64_t b = 0; b < n; b += OX_POLL_WORK)
			{
				int64_t		e = n - b > OX_POLL_WORK ? b + OX_POLL_WORK : n;

				for (int64_t i = b; i < e; i++)
					OX_DATA(out, float)[i] = fs + (float) i * fd;
				if (e < n && ox_kernel_poll(ctx, e - b))
					return ctx->st->code;
			}
			return OX_OK;
		}
		for (int64_t i = 0; i < n; i++)
		{
			double		v = s + (double) i * d;

			OX_TRY(ox_convert_elements((char *) out->data + i * ox_dtype_size(dt), dt, &v,
									   OX_DOUBLE, 1, ctx->st));
			if (ox_kernel_poll(ctx, 1))
				return ctx->st->code;
		}
		return OX_OK;
	}
	return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Range: unsupported type %s", ox_dtype_name(dt));
}

ox_code
oxt_eye_like_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "input");
	int64_t		k = ox_attr_int(ctx->node, "k", 0);
	int64_t		dt_attr = ox_attr_int(ctx->node, "dtype", -1);
	ox_dtype	dt;
	ox_tensor  *out;
	double		one = 1.0;
	size_t		es;

	if (!x)
		return ctx->st->code;
	dt = dt_attr >= 0 ? (ox_dtype) dt_attr : x->dtype;
	if (x->rank != 2)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "EyeLike: input must be 2-D, got rank %d", x->rank);
	if (dt_attr >= OX_DTYPE_COUNT || dt == OX_STRING || dt == OX_UNDEFINED ||
		dt == OX_COMPLEX64 || dt == OX_COMPLEX128)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "EyeLike: unsupported output type %lld",
					   (long long) dt);
	if (oxt_numel(ctx, x, "input") < 0)
		return ctx->st->code;
	if (!(out = ox_out_tensor(ctx, 0, dt, 2, x->dims)))
		return ctx->st->code;
	es = ox_dtype_size(dt);
	memset(out->data, 0, (size_t) ox_tensor_numel(out) * es);
	for (int64_t i = 0; i < x->dims[0]; i++)
	{
		int64_t		j = i + k;

		if (j >= 0 && j < x->dims[1])
			OX_TRY(ox_convert_elements((char *) out->data + (i * x->dims[1] + j) * es, dt,
									   &one, OX_DOUBLE, 1, ctx->st));
	}
	return OX_OK;
}
