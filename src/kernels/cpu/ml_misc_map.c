/*
 * ml_misc_map.c
 *	  The ai.onnx.ml ops that read or write maps: DictVectorizer (map ->
 *	  dense row), CastMap (int64-keyed map -> dense row) and ZipMap (score
 *	  matrix -> sequence of label -> score maps, what skl2onnx puts after a
 *	  classifier unless told zipmap=False).
 *
 * A map value holds two 1-D tensors of equal length, map_keys and
 * map_values, in no particular order.
 */
#include "kernels/cpu/ml.h"

#include <stdio.h>

static const ox_value *
map_input(ox_kernel_ctx *ctx, int i)
{
	if (i >= ctx->n_in || !ctx->in[i] || ctx->in[i]->kind != OX_VALUE_MAP)
		return NULL;
	return ctx->in[i];
}

static ox_code
check_map(const char *op, const ox_value *m, int64_t *n, ox_status *st)
{
	*n = ox_tensor_numel(&m->map_keys);
	if (m->map_keys.rank != 1 || m->map_values.rank != 1 || *n < 0 ||
		ox_tensor_numel(&m->map_values) != *n)
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: the map's keys and values must be 1-D of equal length", op);
	return OX_OK;
}

/* ---------------- DictVectorizer ---------------- */

ox_code
ml_dict_vectorizer_run(ox_kernel_ctx *ctx)
{
	const ox_node *node = ctx->node;
	const char *op = node->op_type;
	const ox_value *m = map_input(ctx, 0);
	const ox_attr *sv = ox_node_attr(node, "string_vocabulary");
	const int64_t *iv;
	int			niv = ox_attr_ints(node, "int64_vocabulary", &iv);
	bool		str_keys;
	int64_t		nvoc,
				n,
				dims[2];
	ox_dtype	vdt;
	ox_tensor  *y;
	size_t		es;

	if (!m)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input X must be a map", op);
	OX_TRY(check_map(op, m, &n, ctx->st));
	str_keys = sv && sv->type == OX_ATTR_STRINGS && sv->n > 0;
	if (str_keys == (niv > 0))
		return ox_fail(ctx->st, OX_INVALID_MODEL, "%s: exactly one of string_vocabulary and int64_vocabulary must be set", op);
	if (str_keys != (m->map_keys.dtype == OX_STRING) || (!str_keys && m->map_keys.dtype != OX_INT64))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: map keys are %s but the vocabulary is %s",
					   op, ox_dtype_name(m->map_keys.dtype), str_keys ? "strings" : "int64");
	vdt = m->map_values.dtype;
	if (vdt != OX_FLOAT && vdt != OX_DOUBLE && vdt != OX_INT64 && vdt != OX_STRING)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: map values of type %s are not supported",
					   op, ox_dtype_name(vdt));
	nvoc = str_keys ? sv->n : niv;
	dims[0] = 1;
	dims[1] = nvoc;
	y = ox_out_tensor(ctx, 0, vdt, 2, dims);
	if (!y)
		return ctx->st->code;
	es = ox_dtype_size(vdt);
	if (vdt != OX_STRING)
		memset(y->data, 0, es * (size_t) nvoc);
	/* vocabularies are small: a scan per entry keeps this allocation-free */
	for (int64_t e = 0; e < n; e++)
	{
		for (int64_t k = 0; k < nvoc; k++)
		{
			bool		hit;

			if (str_keys)
			{
				size_t		len;
				const char *s = ml_attr_str_at(sv, (int) k, &len);
				const ox_string *key = &((const ox_string *) m->map_keys.data)[e];

				hit = key->len == len && (len == 0 || memcmp(key->data, s, len) == 0);
			}
			else
				hit = ((const int64_t *) m->map_keys.data)[e] == iv[k];
			if (!hit)
				continue;
			if (vdt == OX_STRING)
			{
				const ox_string *v = &((const ox_string *) m->map_values.data)[e];

				OX_TRY(ml_set_string(&((ox_string *) y->data)[k], v->data ? v->data : "", v->len, ctx->st));
			}
			else
				memcpy((char *) y->data + k * es, (const char *) m->map_values.data + e * es, es);
			break;
		}
	}
	if (vdt == OX_STRING)
		for (int64_t k = 0; k < nvoc; k++)
			if (!((ox_string *) y->data)[k].data)
				OX_TRY(ml_set_string(&((ox_string *) y->data)[k], "", 0, ctx->st));
	return OX_OK;
}

/* ---------------- ZipMap ---------------- */

ox_code
ml_zipmap_run(ox_kernel_ctx *ctx)
{
	const ox_node *node = ctx->node;
	const char *op = node->op_type;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	ml_labels	lab;
	int64_t		rows,
				cols,
				kdims[1];
	ox_value   *out;

	OX_TRY(ml_read_labels(node, "classlabels_int64s", "classlabels_strings", &lab, ctx->st));
	if (lab.n == 0)
		return ox_fail(ctx->st, OX_INVALID_MODEL, "%s: classlabels_int64s or classlabels_strings is required", op);
	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input X is missing", op);
	if (x->dtype != OX_FLOAT)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input has element type %s, expected float",
					   op, ox_dtype_name(x->dtype));
	OX_TRY(ml_rows_cols(op, x, &rows, &cols, ctx->st));
	if (cols != lab.n)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input has %lld columns for %lld labels",
					   op, (long long) cols, (long long) lab.n);
	out = ox_out_value(ctx, 0);
	if (!out)
		return ctx->st->code;
	out->kind = OX_VALUE_SEQUENCE;
	out->seq_elem_dtype = OX_FLOAT;
	kdims[0] = cols;
	for (int64_t r = 0; r < rows; r++)
	{
		ox_value   *item = ox_value_seq_push(out, ctx->st);

		if (!item)
			return ctx->st->code;
		item->kind = OX_VALUE_MAP;
		OX_TRY(ox_tensor_alloc(&item->map_keys, lab.str ? OX_STRING : OX_INT64, 1, kdims, ctx->st));
		OX_TRY(ox_tensor_alloc(&item->map_values, OX_FLOAT, 1, kdims, ctx->st));
		for (int64_t k = 0; k < cols; k++)
			OX_TRY(ml_write_label(&lab, &item->map_keys, k, k, ctx->st));
		if (cols > 0)
			memcpy(item->map_values.data, (const float *) x->data + r * cols, sizeof(float) * (size_t) cols);
	}
	return OX_OK;
}

/* ---------------- CastMap ---------------- */

static int
cmp_i64_pos(const void *a, const void *b, const int64_t *keys)
{
	int64_t		x = keys[*(const int64_t *) a];
	int64_t		y = keys[*(const int64_t *) b];

	return x < y ? -1 : (x > y);
}

/* insertion sort of positions by key: maps from a model are small */
static void
sort_positions(int64_t *pos, int64_t n, const int64_t *keys)
{
	for (int64_t i = 1; i < n; i++)
	{
		int64_t		v = pos[i];
		int64_t		j = i;

		while (j > 0 && cmp_i64_pos(&pos[j - 1], &v, keys) > 0)
		{
			pos[j] = pos[j - 1];
			j--;
		}
		pos[j] = v;
	}
}

ox_code
ml_cast_map_run(ox_kernel_ctx *ctx)
{
	const ox_node *node = ctx->node;
	const char *op = node->op_type;
	const ox_value *m = map_input(ctx, 0);
	const char *cast_to = ox_attr_string(node, "cast_to", "TO_FLOAT");
	const char *form = ox_attr_string(node, "map_form", "DENSE");
	int64_t		max_map = ox_attr_int(node, "max_map", 1);
	ox_dtype	out_dt;
	bool		dense;
	int64_t		n,
				width,
				dims[2];
	int64_t    *pos;
	const int64_t *keys;
	ox_tensor  *y;
	ox_code		rc = OX_OK;

	if (strcmp(cast_to, "TO_FLOAT") == 0)
		out_dt = OX_FLOAT;
	else if (strcmp(cast_to, "TO_STRING") == 0)
		out_dt = OX_STRING;
	else if (strcmp(cast_to, "TO_INT64") == 0)
		out_dt = OX_INT64;
	else
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: cast_to \"%s\" is not supported", op, cast_to);
	if (strcmp(form, "DENSE") == 0)
		dense = true;
	else if (strcmp(form, "SPARSE") == 0)
		dense = false;
	else
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: map_form \"%s\" is not supported", op, form);
	if (!m)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input X must be a map", op);
	OX_TRY(check_map(op, m, &n, ctx->st));
	if (m->map_keys.dtype != OX_INT64 ||
		(m->map_values.dtype != OX_FLOAT && m->map_values.dtype != OX_STRING))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input must be a map from int64 to float or string", op);
	if (!dense && (max_map <= 0 || max_map > OX_MAX_ELEMENTS))
		return ox_fail(ctx->st, OX_INVALID_MODEL, "%s: max_map is %lld", op, (long long) max_map);
	width = dense ? n : max_map;
	keys = m->map_keys.data;
	pos = ox_workspace_alloc(sizeof(int64_t) * (size_t) (n > 0 ? n : 1), ctx->st, "CastMap");
	if (!pos)
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: could not allocate %lld positions", op, (long long) n);
	for (int64_t i = 0; i < n; i++)
		pos[i] = i;
	sort_positions(pos, n, keys);
	dims[0] = 1;
	dims[1] = width;
	y = ox_out_tensor(ctx, 0, out_dt, 2, dims);
	if (!y)
	{
		free(pos);
		return ctx->st->code;
	}
	for (int64_t k = 0, e = 0; k < width && rc == OX_OK; k++)
	{
		int64_t		src = -1;

		if (dense)
			src = pos[k];
		else
		{
			while (e < n && keys[pos[e]] < k)
				e++;
			if (e < n && keys[pos[e]] == k)
				src = pos[e];
		}
		if (m->map_values.dtype == OX_FLOAT)
		{
			float		v = src >= 0 ? ((const float *) m->map_values.data)[src] : 0.0f;

			if (out_dt == OX_FLOAT)
				((float *) y->data)[k] = v;
			else if (out_dt == OX_INT64)
				((int64_t *) y->data)[k] = (int64_t) v;
			else
			{
				char		buf[64];
				int			len = snprintf(buf, sizeof(buf), "%f", (double) v);

				rc = ml_set_string(&((ox_string *) y->data)[k], buf, (size_t) len, ctx->st);
			}
		}
		else
		{
			const ox_string *s = src >= 0 ? &((const ox_string *) m->map_values.data)[src] : NULL;
			const char *txt = s && s->data ? s->data : "";

			if (out_dt == OX_STRING)
				rc = ml_set_string(&((ox_string *) y->data)[k], src >= 0 ? txt : "0", src >= 0 ? (s ? s->len : 0) : 1, ctx->st);
			else if (out_dt == OX_FLOAT)
				((float *) y->data)[k] = src >= 0 ? strtof(txt, NULL) : 0.0f;
			else
				((int64_t *) y->data)[k] = src >= 0 ? strtoll(txt, NULL, 10) : 0;
		}
	}
	free(pos);
	return rc;
}
