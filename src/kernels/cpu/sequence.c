/*
 * sequence.c
 *	  Sequence and optional operators: SequenceEmpty/Construct/Insert/At/
 *	  Erase/Length, SplitToSequence, ConcatFromSequence, SequenceMap,
 *	  Optional, OptionalHasElement, OptionalGetElement.
 */
#include "kernels/kernel.h"

#include <stdlib.h>
#include <string.h>

static ox_code
need_sequence(ox_kernel_ctx *ctx, int i, const char *op)
{
	/* a node may have fewer inputs than the operator needs */
	if (i >= ctx->n_in || !ctx->in[i] || ctx->in[i]->kind != OX_VALUE_SEQUENCE)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input %d must be a sequence", op, i);
	return OX_OK;
}

/* position input (scalar int32/int64), negative counts from the end */
static ox_code
read_position(ox_kernel_ctx *ctx, int i, int64_t len, bool allow_end, int64_t def, int64_t *pos)
{
	const ox_tensor *p = ox_in_tensor(ctx, i);
	int64_t		v;

	if (!p)
	{
		*pos = def;
		return OX_OK;
	}
	if (ox_tensor_numel(p) != 1 || (p->dtype != OX_INT64 && p->dtype != OX_INT32))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: position must be one int32 or int64",
					   ctx->node->op_type);
	v = ox_tensor_get_int64(p, 0);
	if (v < 0)
		v += len;
	if (v < 0 || v > len || (v == len && !allow_end))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: position %lld is out of range for a sequence of %lld",
					   ctx->node->op_type, (long long) ox_tensor_get_int64(p, 0), (long long) len);
	*pos = v;
	return OX_OK;
}

static ox_code
sequence_empty_run(ox_kernel_ctx *ctx)
{
	ox_value   *out = ox_out_value(ctx, 0);

	if (!out)
		return ctx->st->code;
	out->kind = OX_VALUE_SEQUENCE;
	out->seq_elem_dtype = (ox_dtype) ox_attr_int(ctx->node, "dtype", OX_FLOAT);
	return OX_OK;
}

static ox_code
sequence_construct_run(ox_kernel_ctx *ctx)
{
	ox_value   *out = ox_out_value(ctx, 0);

	if (!out)
		return ctx->st->code;
	out->kind = OX_VALUE_SEQUENCE;
	for (int i = 0; i < ctx->n_in; i++)
	{
		const ox_tensor *t = ox_in_tensor(ctx, i);

		if (!t)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "SequenceConstruct: input %d must be a tensor", i);
		if (i > 0 && t->dtype != ctx->in[0]->tensor.dtype)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "SequenceConstruct: inputs have different element types");
		OX_TRY(ox_value_seq_append(out, ctx->in[i], ctx->st));
		out->seq_elem_dtype = t->dtype;
	}
	return OX_OK;
}

static ox_code
sequence_insert_run(ox_kernel_ctx *ctx)
{
	const ox_value *seq;
	ox_value   *out;
	int64_t		pos;

	OX_TRY(need_sequence(ctx, 0, "SequenceInsert"));
	seq = ctx->in[0];
	if (!ox_in_tensor(ctx, 1))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "SequenceInsert: the inserted value must be a tensor");
	OX_TRY(read_position(ctx, 2, seq->seq_len, true, seq->seq_len, &pos));
	out = ox_out_value(ctx, 0);
	if (!out)
		return ctx->st->code;
	out->kind = OX_VALUE_SEQUENCE;
	out->seq_elem_dtype = ctx->in[1]->tensor.dtype;
	for (int64_t i = 0; i <= seq->seq_len; i++)
	{
		if (i == pos)
			OX_TRY(ox_value_seq_append(out, ctx->in[1], ctx->st));
		if (i < seq->seq_len)
			OX_TRY(ox_value_seq_append(out, &seq->seq_items[i], ctx->st));
	}
	return OX_OK;
}

static ox_code
sequence_at_run(ox_kernel_ctx *ctx)
{
	int64_t		pos = 0;		/* set by read_position; gcc cannot tell */
	ox_value   *out;

	OX_TRY(need_sequence(ctx, 0, "SequenceAt"));
	OX_TRY(read_position(ctx, 1, ctx->in[0]->seq_len, false, 0, &pos));
	if (!ox_has_input(ctx, 1))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "SequenceAt: position is required");
	out = ox_out_value(ctx, 0);
	if (!out)
		return ctx->st->code;
	return ox_value_copy(out, &ctx->in[0]->seq_items[pos], ctx->st);
}

static ox_code
sequence_erase_run(ox_kernel_ctx *ctx)
{
	const ox_value *seq;
	int64_t		pos;
	ox_value   *out;

	OX_TRY(need_sequence(ctx, 0, "SequenceErase"));
	seq = ctx->in[0];
	if (seq->seq_len == 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "SequenceErase: the sequence is empty");
	OX_TRY(read_position(ctx, 1, seq->seq_len, false, seq->seq_len - 1, &pos));
	out = ox_out_value(ctx, 0);
	if (!out)
		return ctx->st->code;
	out->kind = OX_VALUE_SEQUENCE;
	out->seq_elem_dtype = seq->seq_elem_dtype;
	for (int64_t i = 0; i < seq->seq_len; i++)
		if (i != pos)
			OX_TRY(ox_value_seq_append(out, &seq->seq_items[i], ctx->st));
	return OX_OK;
}

static ox_code
sequence_length_run(ox_kernel_ctx *ctx)
{
	ox_tensor  *out;

	OX_TRY(need_sequence(ctx, 0, "SequenceLength"));
	out = ox_out_tensor(ctx, 0, OX_INT64, 0, NULL);
	if (!out)
		return ctx->st->code;
	((int64_t *) out->data)[0] = ctx->in[0]->seq_len;
	return OX_OK;
}

/* copy rows [start, start+count) along axis of x into out */
static ox_code
copy_range(const ox_tensor *x, int axis, int64_t start, int64_t count, bool keep_axis,
		   ox_tensor *out, ox_status *st)
{
	int64_t		dims[OX_MAX_RANK];
	int			rank = 0;
	int64_t		outer = 1,
				inner = 1;
	size_t		es = ox_dtype_size(x->dtype);

	for (int d = 0; d < x->rank; d++)
	{
		if (d == axis)
		{
			if (keep_axis)
				dims[rank++] = count;
		}
		else
			dims[rank++] = x->dims[d];
	}
	for (int d = 0; d < axis; d++)
		outer *= x->dims[d];
	for (int d = axis + 1; d < x->rank; d++)
		inner *= x->dims[d];
	OX_TRY(ox_tensor_alloc(out, x->dtype, rank, dims, st));
	/* empty rows: an empty tensor has no data to offset from */
	if (count * inner == 0)
		return OX_OK;
	for (int64_t o = 0; o < outer; o++)
		memcpy((char *) out->data + o * count * inner * es,
			   (char *) x->data + (o * x->dims[axis] + start) * inner * es, count * inner * es);
	return OX_OK;
}

static ox_code
split_to_sequence_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *split = ox_in_tensor(ctx, 1);
	int64_t		axis = ox_attr_int(ctx->node, "axis", 0);
	bool		keepdims = ox_attr_int(ctx->node, "keepdims", 1) != 0;
	ox_value   *out;
	int64_t		len;

	if (!x || x->rank < 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "SplitToSequence: input must have rank >= 1");
	if (x->dtype == OX_STRING)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "SplitToSequence: string tensors are not supported");
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis >= x->rank)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "SplitToSequence: axis is out of range");
	len = x->dims[axis];
	out = ox_out_value(ctx, 0);
	if (!out)
		return ctx->st->code;
	out->kind = OX_VALUE_SEQUENCE;
	out->seq_elem_dtype = x->dtype;
	if (!split)
	{
		for (int64_t i = 0; i < len; i++)
		{
			ox_value   *item = ox_value_seq_push(out, ctx->st);

			if (!item)
				return ctx->st->code;
			OX_TRY(copy_range(x, (int) axis, i, 1, keepdims, &item->tensor, ctx->st));
		}
		return OX_OK;
	}
	if (split->rank == 0)
	{
		int64_t		chunk = ox_tensor_get_int64(split, 0);

		if (chunk <= 0)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "SplitToSequence: split must be positive");
		for (int64_t s = 0; s < len; s += chunk)
		{
			ox_value   *item = ox_value_seq_push(out, ctx->st);

			if (!item)
				return ctx->st->code;
			OX_TRY(copy_range(x, (int) axis, s, s + chunk <= len ? chunk : len - s, true, &item->tensor, ctx->st));
		}
		return OX_OK;
	}
	{
		int64_t		n = ox_tensor_numel(split);
		int64_t		total = 0;
		int64_t		s = 0;

		for (int64_t i = 0; i < n; i++)
		{
			int64_t		c = ox_tensor_get_int64(split, i);

			if (c < 0)
				return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "SplitToSequence: negative split");
			total += c;
		}
		if (total != len)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "SplitToSequence: splits sum to %lld but the axis has %lld",
						   (long long) total, (long long) len);
		for (int64_t i = 0; i < n; i++)
		{
			int64_t		c = ox_tensor_get_int64(split, i);
			ox_value   *item = ox_value_seq_push(out, ctx->st);

			if (!item)
				return ctx->st->code;
			OX_TRY(copy_range(x, (int) axis, s, c, true, &item->tensor, ctx->st));
			s += c;
		}
	}
	return OX_OK;
}

static ox_code
concat_from_sequence_run(ox_kernel_ctx *ctx)
{
	const ox_value *seq;
	int64_t		axis = ox_attr_int(ctx->node, "axis", 0);
	bool		new_axis = ox_attr_int(ctx->node, "new_axis", 0) != 0;
	const ox_tensor *first;
	int			rank;
	int64_t		dims[OX_MAX_RANK];
	int64_t		outer = 1,
				inner = 1,
				total = 0,
				off = 0;
	size_t		es;
	ox_tensor  *out;

	OX_TRY(need_sequence(ctx, 0, "ConcatFromSequence"));
	seq = ctx->in[0];
	if (seq->seq_len == 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "ConcatFromSequence: the sequence is empty");
	first = &seq->seq_items[0].tensor;
	if (first->dtype == OX_STRING)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "ConcatFromSequence: string tensors are not supported");
	rank = first->rank + (new_axis ? 1 : 0);
	if (axis < 0)
		axis += rank;
	if (axis < 0 || axis >= rank || rank > OX_MAX_RANK || (!new_axis && first->rank == 0))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "ConcatFromSequence: axis is out of range");
	for (int i = 0; i < seq->seq_len; i++)
	{
		const ox_tensor *t = &seq->seq_items[i].tensor;

		if (seq->seq_items[i].kind != OX_VALUE_TENSOR || t->dtype != first->dtype || t->rank != first->rank)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "ConcatFromSequence: items differ in type or rank");
		for (int d = 0; d < t->rank; d++)
			if ((new_axis || d != axis) && t->dims[d] != first->dims[d])
				return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "ConcatFromSequence: item shapes differ");
		total += new_axis ? 1 : t->dims[axis];
	}
	for (int d = 0, k = 0; d < rank; d++)
	{
		if (d == axis)
		{
			dims[d] = total;
			if (!new_axis)
				k++;
		}
		else
			dims[d] = first->dims[k++];
	}
	for (int d = 0; d < axis; d++)
		outer *= dims[d];
	for (int d = axis + 1; d < rank; d++)
		inner *= dims[d];
	out = ox_out_tensor(ctx, 0, first->dtype, rank, dims);
	if (!out)
		return ctx->st->code;
	es = ox_dtype_size(first->dtype);
	for (int i = 0; i < seq->seq_len; i++)
	{
		const ox_tensor *t = &seq->seq_items[i].tensor;
		int64_t		c = new_axis ? 1 : t->dims[axis];

		/* an empty item adds nothing and has no data to offset from */
		if (c * inner == 0)
		{
			off += c;
			continue;
		}
		for (int64_t o = 0; o < outer; o++)
			memcpy((char *) out->data + (o * total + off) * inner * es,
				   (char *) t->data + o * c * inner * es, c * inner * es);
		off += c;
	}
	return OX_OK;
}

static ox_code
sequence_map_run(ox_kernel_ctx *ctx)
{
	const ox_graph *body = ox_attr_graph(ctx->node, "body");
	int64_t		len;
	ox_value  **args;
	ox_value   *outs;
	ox_code		rc = OX_OK;

	OX_TRY(need_sequence(ctx, 0, "SequenceMap"));
	if (!body || body->n_inputs != ctx->n_in || body->n_outputs != ctx->n_out)
		return ox_fail(ctx->st, OX_INVALID_MODEL, "SequenceMap: the body does not match the node");
	len = ctx->in[0]->seq_len;
	for (int i = 1; i < ctx->n_in; i++)
		if (ctx->in[i] && ctx->in[i]->kind == OX_VALUE_SEQUENCE && ctx->in[i]->seq_len != len)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "SequenceMap: sequences have different lengths");
	for (int o = 0; o < ctx->n_out; o++)
	{
		ox_value   *out = ox_out_value(ctx, o);

		if (!out)
			return ctx->st->code;
		out->kind = OX_VALUE_SEQUENCE;
	}
	args = calloc(ctx->n_in + 1, sizeof(ox_value *));
	outs = calloc(body->n_outputs + 1, sizeof(ox_value));
	if (!args || !outs)
	{
		free(args);
		free(outs);
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "SequenceMap: out of memory");
	}
	for (int64_t t = 0; t < len && rc == OX_OK; t++)
	{
		for (int i = 0; i < ctx->n_in; i++)
			args[i] = ctx->in[i] && ctx->in[i]->kind == OX_VALUE_SEQUENCE ? &ctx->in[i]->seq_items[t] : ctx->in[i];
		rc = ctx->run_subgraph(ctx, body, args, ctx->n_in, outs, ctx->st);
		for (int o = 0; o < ctx->n_out && rc == OX_OK; o++)
		{
			rc = ox_value_seq_append(ctx->out[o], &outs[o], ctx->st);
			ctx->out[o]->seq_elem_dtype = outs[o].tensor.dtype;
		}
	}
	for (int o = 0; o < body->n_outputs; o++)
		ox_value_release(&outs[o]);
	free(outs);
	free(args);
	return rc;
}

static ox_code
optional_run(ox_kernel_ctx *ctx)
{
	ox_value   *out = ox_out_value(ctx, 0);

	if (!out)
		return ctx->st->code;
	if (!ox_has_input(ctx, 0))
	{
		out->kind = OX_VALUE_NONE;
		return OX_OK;
	}
	return ox_value_copy(out, ctx->in[0], ctx->st);
}

static ox_code
optional_has_element_run(ox_kernel_ctx *ctx)
{
	ox_tensor  *out = ox_out_tensor(ctx, 0, OX_BOOL, 0, NULL);

	if (!out)
		return ctx->st->code;
	((uint8_t *) out->data)[0] = ox_has_input(ctx, 0);
	return OX_OK;
}

static ox_code
optional_get_element_run(ox_kernel_ctx *ctx)
{
	ox_value   *out;

	if (!ox_has_input(ctx, 0))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "OptionalGetElement: the optional is empty");
	out = ox_out_value(ctx, 0);
	if (!out)
		return ctx->st->code;
	return ox_value_copy(out, ctx->in[0], ctx->st);
}

const ox_kernel_def ox_kernels_sequence[] = {
	{"", "SequenceEmpty", 11, NULL, sequence_empty_run, NULL},
	{"", "SequenceConstruct", 11, NULL, sequence_construct_run, NULL},
	{"", "SequenceInsert", 11, NULL, sequence_insert_run, NULL},
	{"", "SequenceAt", 11, NULL, sequence_at_run, NULL},
	{"", "SequenceErase", 11, NULL, sequence_erase_run, NULL},
	{"", "SequenceLength", 11, NULL, sequence_length_run, NULL},
	{"", "SplitToSequence", 11, NULL, split_to_sequence_run, NULL},
	{"", "ConcatFromSequence", 11, NULL, concat_from_sequence_run, NULL},
	{"", "SequenceMap", 17, NULL, sequence_map_run, NULL},
	{"", "Optional", 15, NULL, optional_run, NULL},
	{"", "OptionalHasElement", 15, NULL, optional_has_element_run, NULL},
	{"", "OptionalGetElement", 15, NULL, optional_get_element_run, NULL},
};
const int	ox_kernels_sequence_count = OX_KERNEL_COUNT(ox_kernels_sequence);
