/*
 * control.c
 *	  Control flow: If, Loop, Scan.  Bodies run through the executor's
 *	  subgraph runner; every iteration polls the abort callback, so a huge
 *	  trip count is bounded by query cancel and statement_timeout.
 */
#include "kernels/kernel.h"

#include <stdlib.h>
#include <string.h>

/* move src into *dst, leaving src empty */
static void
move_value(ox_value *dst, ox_value *src)
{
	ox_value_release(dst);
	*dst = *src;
	memset(src, 0, sizeof(*src));
	src->kind = OX_VALUE_TENSOR;
}

static ox_value *
new_values(int n, ox_status *st)
{
	ox_value   *v = calloc(n + 1, sizeof(ox_value));

	if (!v)
		ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate subgraph values");
	return v;
}

static void
free_values(ox_value *v, int n)
{
	if (!v)
		return;
	for (int i = 0; i < n; i++)
		ox_value_release(&v[i]);
	free(v);
}

static ox_code
if_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *cond = ox_in_tensor(ctx, 0);
	const ox_graph *branch;
	ox_value   *outs;
	ox_code		rc;

	if (!cond || ox_tensor_numel(cond) != 1 || !cond->data)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "If: the condition must be a tensor with one element");
	branch = ox_tensor_get_double(cond, 0) != 0 ?
		ox_attr_graph(ctx->node, "then_branch") : ox_attr_graph(ctx->node, "else_branch");
	if (!branch)
		return ox_fail(ctx->st, OX_INVALID_MODEL, "If: missing then_branch or else_branch");
	if (branch->n_outputs != ctx->n_out)
		return ox_fail(ctx->st, OX_INVALID_MODEL, "If: the branch has %d outputs but the node has %d",
					   branch->n_outputs, ctx->n_out);
	outs = new_values(branch->n_outputs, ctx->st);
	if (!outs)
		return ctx->st->code;
	rc = ctx->run_subgraph(ctx, branch, NULL, 0, outs, ctx->st);
	if (rc == OX_OK)
		for (int i = 0; i < ctx->n_out; i++)
			move_value(ctx->out[i], &outs[i]);
	free_values(outs, branch->n_outputs);
	return rc;
}

/* Stack equally shaped tensors along a new axis at position axis. */
static ox_code
stack_tensors(ox_kernel_ctx *ctx, ox_value *dst, ox_tensor *parts, int64_t n, int axis, bool reverse)
{
	const ox_tensor *first = n > 0 ? &parts[0] : NULL;
	int64_t		dims[OX_MAX_RANK];
	int			rank;
	int64_t		outer = 1,
				inner = 1;
	size_t		es;

	ox_value_release(dst);
	dst->kind = OX_VALUE_TENSOR;
	if (!first)
	{
		int64_t		zero = 0;

		return ox_tensor_alloc(&dst->tensor, OX_FLOAT, 1, &zero, ctx->st);
	}
	rank = first->rank + 1;
	if (rank > OX_MAX_RANK)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "scan output rank exceeds %d", OX_MAX_RANK);
	if (axis < 0)
		axis += rank;
	if (axis < 0 || axis >= rank)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "scan output axis out of range");
	if (first->dtype == OX_STRING)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "scan outputs of strings are not supported");
	for (int64_t i = 1; i < n; i++)
		if (parts[i].dtype != first->dtype ||
			!ox_shape_equal(parts[i].rank, parts[i].dims, first->rank, first->dims))
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "loop/scan body produced scan outputs of different shapes across iterations");
	for (int d = 0, k = 0; d < rank; d++)
		dims[d] = d == axis ? n : first->dims[k++];
	for (int d = 0; d < axis; d++)
		outer *= dims[d];
	for (int d = axis + 1; d < rank; d++)
		inner *= dims[d];
	OX_TRY(ox_tensor_alloc(&dst->tensor, first->dtype, rank, dims, ctx->st));
	es = ox_dtype_size(first->dtype);
	for (int64_t t = 0; t < n; t++)
	{
		int64_t		slot = reverse ? n - 1 - t : t;

		for (int64_t o = 0; o < outer; o++)
			memcpy((char *) dst->tensor.data + ((o * n + slot) * inner) * es,
				   (char *) parts[t].data + o * inner * es, inner * es);
	}
	return OX_OK;
}

typedef struct scan_list
{
	ox_tensor  *items;
	int64_t		n;
	int64_t		cap;
} scan_list;

static ox_code
scan_list_push(scan_list *l, ox_value *v, ox_status *st)
{
	if (v->kind != OX_VALUE_TENSOR)
		return ox_fail(st, OX_UNSUPPORTED, "scan outputs must be tensors");
	if (l->n == l->cap)
	{
		int64_t		cap = l->cap ? l->cap * 2 : 16;
		ox_tensor  *items = realloc(l->items, sizeof(ox_tensor) * cap);

		if (!items)
			return ox_fail(st, OX_OUT_OF_MEMORY, "could not grow scan outputs");
		l->items = items;
		l->cap = cap;
	}
	l->items[l->n++] = v->tensor;
	memset(&v->tensor, 0, sizeof(ox_tensor));
	return OX_OK;
}

static void
scan_lists_free(scan_list *lists, int k)
{
	if (!lists)
		return;
	for (int i = 0; i < k; i++)
	{
		for (int64_t j = 0; j < lists[i].n; j++)
			ox_tensor_release(&lists[i].items[j]);
		free(lists[i].items);
	}
	free(lists);
}

static ox_code
loop_run(ox_kernel_ctx *ctx)
{
	const ox_graph *body = ox_attr_graph(ctx->node, "body");
	const ox_tensor *max_trip = ox_in_tensor(ctx, 0);
	const ox_tensor *cond_in = ox_in_tensor(ctx, 1);
	int			n_carried = ctx->n_in - 2;
	int			n_scan;
	int64_t		trip_limit = -1;
	bool		cond = true;
	ox_value   *carried = NULL;
	ox_value   *outs = NULL;
	ox_value  **body_in = NULL;
	ox_value	iter_v,
				cond_v;
	scan_list  *lists = NULL;
	ox_code		rc = OX_OK;
	int64_t		scalar_dims[1] = {1};

	if (!body)
		return ox_fail(ctx->st, OX_INVALID_MODEL, "Loop: missing body");
	if (n_carried < 0 || body->n_inputs != n_carried + 2 || body->n_outputs < n_carried + 1)
		return ox_fail(ctx->st, OX_INVALID_MODEL,
					   "Loop: the body has %d inputs and %d outputs for %d loop-carried values",
					   body->n_inputs, body->n_outputs, n_carried);
	n_scan = body->n_outputs - 1 - n_carried;
	if (ctx->n_out != n_carried + n_scan)
		return ox_fail(ctx->st, OX_INVALID_MODEL, "Loop: the node has %d outputs, expected %d",
					   ctx->n_out, n_carried + n_scan);
	if (max_trip)
	{
		if (ox_tensor_numel(max_trip) != 1)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Loop: M must have one element");
		trip_limit = ox_tensor_get_int64(max_trip, 0);
	}
	if (cond_in)
	{
		if (ox_tensor_numel(cond_in) != 1)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Loop: cond must have one element");
		cond = ox_tensor_get_double(cond_in, 0) != 0;
	}

	carried = new_values(n_carried, ctx->st);
	outs = new_values(body->n_outputs, ctx->st);
	body_in = calloc(n_carried + 3, sizeof(ox_value *));
	lists = calloc(n_scan + 1, sizeof(scan_list));
	ox_value_init_tensor(&iter_v);
	ox_value_init_tensor(&cond_v);
	if (!carried || !outs || !body_in || !lists)
	{
		rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Loop: out of memory");
		goto done;
	}
	for (int i = 0; i < n_carried; i++)
	{
		ox_value_init_tensor(&carried[i]);
		if (ctx->in[2 + i] && (rc = ox_value_copy(&carried[i], ctx->in[2 + i], ctx->st)) != OX_OK)
			goto done;
		if (!ctx->in[2 + i])
			carried[i].kind = OX_VALUE_NONE;
	}
	if ((rc = ox_tensor_alloc(&iter_v.tensor, OX_INT64, 0, scalar_dims, ctx->st)) != OX_OK ||
		(rc = ox_tensor_alloc(&cond_v.tensor, OX_BOOL, 0, scalar_dims, ctx->st)) != OX_OK)
		goto done;
	body_in[0] = &iter_v;
	body_in[1] = &cond_v;
	for (int i = 0; i < n_carried; i++)
		body_in[2 + i] = &carried[i];

	for (int64_t it = 0; (trip_limit < 0 || it < trip_limit) && cond; it++)
	{
		if (ox_kernel_should_abort(ctx))
		{
			rc = ox_fail(ctx->st, OX_CANCELED, "Loop: canceled at iteration %lld", (long long) it);
			goto done;
		}
		((int64_t *) iter_v.tensor.data)[0] = it;
		((uint8_t *) cond_v.tensor.data)[0] = cond;
		if ((rc = ctx->run_subgraph(ctx, body, body_in, n_carried + 2, outs, ctx->st)) != OX_OK)
			goto done;
		if (outs[0].kind != OX_VALUE_TENSOR || ox_tensor_numel(&outs[0].tensor) != 1)
		{
			rc = ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Loop: the body's condition output must have one element");
			goto done;
		}
		cond = ox_tensor_get_double(&outs[0].tensor, 0) != 0;
		for (int i = 0; i < n_carried; i++)
			move_value(&carried[i], &outs[1 + i]);
		for (int k = 0; k < n_scan; k++)
			if ((rc = scan_list_push(&lists[k], &outs[1 + n_carried + k], ctx->st)) != OX_OK)
				goto done;
	}
	for (int i = 0; i < n_carried; i++)
		move_value(ctx->out[i], &carried[i]);
	for (int k = 0; k < n_scan; k++)
		if ((rc = stack_tensors(ctx, ctx->out[n_carried + k], lists[k].items, lists[k].n, 0, false)) != OX_OK)
			goto done;
done:
	ox_value_release(&iter_v);
	ox_value_release(&cond_v);
	free_values(carried, n_carried);
	free_values(outs, body->n_outputs);
	free(body_in);
	scan_lists_free(lists, n_scan);
	return rc;
}

/* slice index t along axis of x into a fresh tensor */
static ox_code
take_slice(const ox_tensor *x, int axis, int64_t t, ox_tensor *out, ox_status *st)
{
	int64_t		dims[OX_MAX_RANK];
	int64_t		outer = 1,
				inner = 1,
				len = x->dims[axis];
	size_t		es = ox_dtype_size(x->dtype);

	for (int d = 0, k = 0; d < x->rank; d++)
		if (d != axis)
			dims[k++] = x->dims[d];
	for (int d = 0; d < axis; d++)
		outer *= x->dims[d];
	for (int d = axis + 1; d < x->rank; d++)
		inner *= x->dims[d];
	OX_TRY(ox_tensor_alloc(out, x->dtype, x->rank - 1, dims, st));
	for (int64_t o = 0; o < outer; o++)
		memcpy((char *) out->data + o * inner * es,
			   (char *) x->data + ((o * len + t) * inner) * es, inner * es);
	return OX_OK;
}

/* copy src into slot b of dst, seen as an array of src-sized pieces */
static ox_code
put_row(ox_tensor *dst, const ox_tensor *src, int64_t b, ox_status *st)
{
	int64_t		n = ox_tensor_numel(src);

	if (src->dtype != dst->dtype || n < 0 || (b + 1) * n > ox_tensor_numel(dst))
		return ox_fail(st, OX_INVALID_ARGUMENT, "Scan: the body produced a value of another type or size");
	memcpy((char *) dst->data + b * n * ox_dtype_size(dst->dtype), src->data, n * ox_dtype_size(src->dtype));
	return OX_OK;
}

/*
 * Scan as opset 8 defined it: every input carries a batch dimension, scan
 * inputs are [batch, time, ...], an optional first input gives each batch
 * entry's sequence length, and outputs past a sequence's end are zeros.
 */
static ox_code
scan8_run(ox_kernel_ctx *ctx)
{
	const ox_graph *body = ox_attr_graph(ctx->node, "body");
	int			m = (int) ox_attr_int(ctx->node, "num_scan_inputs", 0);
	const ox_tensor *lens = ox_in_tensor(ctx, 0);
	int			n_state = ctx->n_in - 1 - m;
	int			n_scan_out;
	const int64_t *dirs = NULL;
	int			n_dirs = ox_attr_ints(ctx->node, "directions", &dirs);
	int64_t		batch = -1,
				max_len = -1;
	ox_value   *state = NULL,
			   *slices = NULL,
			   *outs = NULL;
	ox_value  **body_in = NULL;
	ox_code		rc = OX_OK;

	if (!body || m <= 0 || n_state < 0 || body->n_inputs != n_state + m || body->n_outputs < n_state ||
		ctx->n_out != body->n_outputs || (n_dirs && n_dirs != m))
		return ox_fail(ctx->st, OX_INVALID_MODEL, "Scan: body and num_scan_inputs do not match the node");
	n_scan_out = body->n_outputs - n_state;
	for (int i = 1; i < ctx->n_in; i++)
	{
		const ox_tensor *x = ox_in_tensor(ctx, i);

		if (!x || x->rank < (i > n_state ? 2 : 1) || x->dtype == OX_STRING)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Scan: input %d must be a batched numeric tensor", i);
		if (batch >= 0 && x->dims[0] != batch)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Scan: inputs have different batch sizes");
		batch = x->dims[0];
		if (i > n_state)
		{
			if (max_len >= 0 && x->dims[1] != max_len)
				return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Scan: scan inputs have different lengths");
			max_len = x->dims[1];
		}
	}
	if (lens && (lens->dtype != OX_INT32 && lens->dtype != OX_INT64 ? true : ox_tensor_numel(lens) != batch))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Scan: sequence_lens must hold one integer per batch entry");

	state = new_values(n_state, ctx->st);
	slices = new_values(m, ctx->st);
	outs = new_values(body->n_outputs, ctx->st);
	body_in = calloc(n_state + m + 1, sizeof(ox_value *));
	if (!state || !slices || !outs || !body_in)
	{
		rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Scan: out of memory");
		goto done;
	}
	for (int i = 0; i < n_state; i++)
		body_in[i] = &state[i];
	for (int j = 0; j < m; j++)
		body_in[n_state + j] = &slices[j];

	for (int64_t b = 0; b < batch && rc == OX_OK; b++)
	{
		int64_t		len = lens ? ox_tensor_get_int64(lens, b) : max_len;

		if (len < 0 || len > max_len)
		{
			rc = ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Scan: sequence length %lld is out of range",
						 (long long) len);
			break;
		}
		for (int i = 0; i < n_state && rc == OX_OK; i++)
			rc = take_slice(ox_in_tensor(ctx, 1 + i), 0, b, &state[i].tensor, ctx->st);
		for (int64_t t = 0; t < len && rc == OX_OK; t++)
		{
			if (ox_kernel_should_abort(ctx))
			{
				rc = ox_fail(ctx->st, OX_CANCELED, "Scan: canceled");
				break;
			}
			for (int j = 0; j < m && rc == OX_OK; j++)
			{
				ox_tensor	row;
				int64_t		step = n_dirs && dirs[j] == 1 ? len - 1 - t : t;

				memset(&row, 0, sizeof(row));
				rc = take_slice(ox_in_tensor(ctx, 1 + n_state + j), 0, b, &row, ctx->st);
				if (rc == OX_OK)
					rc = take_slice(&row, 0, step, &slices[j].tensor, ctx->st);
				ox_tensor_release(&row);
			}
			if (rc == OX_OK)
				rc = ctx->run_subgraph(ctx, body, body_in, n_state + m, outs, ctx->st);
			for (int i = 0; i < n_state && rc == OX_OK; i++)
				move_value(&state[i], &outs[i]);
			for (int k = 0; k < n_scan_out && rc == OX_OK; k++)
			{
				ox_tensor  *y = &ctx->out[n_state + k]->tensor;
				const ox_tensor *piece = &outs[n_state + k].tensor;

				if (b == 0 && t == 0)
				{
					int64_t		dims[OX_MAX_RANK];

					if (piece->rank + 2 > OX_MAX_RANK)
					{
						rc = ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "Scan: output rank too deep");
						break;
					}
					dims[0] = batch;
					dims[1] = max_len;
					memcpy(dims + 2, piece->dims, sizeof(int64_t) * piece->rank);
					if (!ox_out_tensor(ctx, n_state + k, piece->dtype, piece->rank + 2, dims))
						rc = ctx->st->code;
					else
						memset(y->data, 0, ox_tensor_numel(y) * ox_dtype_size(y->dtype));
				}
				if (rc == OX_OK && !ox_shape_equal(piece->rank, piece->dims, y->rank - 2, y->dims + 2))
					rc = ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Scan: scan output %d changes shape across steps", k);
				if (rc == OX_OK)
					rc = put_row(y, piece, b * max_len + t, ctx->st);
			}
		}
		for (int i = 0; i < n_state && rc == OX_OK; i++)
		{
			ox_tensor  *y = &ctx->out[i]->tensor;

			if (b == 0)
			{
				int64_t		dims[OX_MAX_RANK];

				dims[0] = batch;
				memcpy(dims + 1, state[i].tensor.dims, sizeof(int64_t) * state[i].tensor.rank);
				if (!ox_out_tensor(ctx, i, state[i].tensor.dtype, state[i].tensor.rank + 1, dims))
					rc = ctx->st->code;
			}
			if (rc == OX_OK && !ox_shape_equal(state[i].tensor.rank, state[i].tensor.dims, y->rank - 1, y->dims + 1))
				rc = ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Scan: state %d changes shape across batch entries", i);
			if (rc == OX_OK)
				rc = put_row(y, &state[i].tensor, b, ctx->st);
		}
	}
done:
	free_values(state, n_state);
	free_values(slices, m);
	free_values(outs, body ? body->n_outputs : 0);
	free(body_in);
	return rc;
}

static ox_code
scan_run(ox_kernel_ctx *ctx)
{
	const ox_graph *body = ox_attr_graph(ctx->node, "body");
	int			m = (int) ox_attr_int(ctx->node, "num_scan_inputs", 0);
	int			n_state = ctx->n_in - m;
	int			n_scan_out;
	const int64_t *in_axes = NULL,
			   *in_dirs = NULL,
			   *out_axes = NULL,
			   *out_dirs = NULL;
	int			n_in_axes,
				n_in_dirs,
				n_out_axes,
				n_out_dirs;
	int64_t		len = -1;
	ox_value   *state = NULL,
			   *slices = NULL,
			   *outs = NULL;
	ox_value  **body_in = NULL;
	scan_list  *lists = NULL;
	ox_code		rc = OX_OK;

	if (!body || m <= 0 || n_state < 0 || body->n_inputs != ctx->n_in || body->n_outputs < n_state)
		return ox_fail(ctx->st, OX_INVALID_MODEL, "Scan: body and num_scan_inputs do not match the node");
	n_scan_out = body->n_outputs - n_state;
	if (ctx->n_out != body->n_outputs)
		return ox_fail(ctx->st, OX_INVALID_MODEL, "Scan: the node has %d outputs, expected %d",
					   ctx->n_out, body->n_outputs);
	n_in_axes = ox_attr_ints(ctx->node, "scan_input_axes", &in_axes);
	n_in_dirs = ox_attr_ints(ctx->node, "scan_input_directions", &in_dirs);
	n_out_axes = ox_attr_ints(ctx->node, "scan_output_axes", &out_axes);
	n_out_dirs = ox_attr_ints(ctx->node, "scan_output_directions", &out_dirs);
	if ((n_in_axes && n_in_axes != m) || (n_in_dirs && n_in_dirs != m) ||
		(n_out_axes && n_out_axes != n_scan_out) || (n_out_dirs && n_out_dirs != n_scan_out))
		return ox_fail(ctx->st, OX_INVALID_MODEL, "Scan: axis/direction lists have the wrong length");

	for (int j = 0; j < m; j++)
	{
		const ox_tensor *x = ox_in_tensor(ctx, n_state + j);
		int64_t		axis = n_in_axes ? in_axes[j] : 0;

		if (!x || x->rank < 1)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Scan: scan input %d must be a tensor of rank >= 1", j);
		if (x->dtype == OX_STRING)
			return ox_fail(ctx->st, OX_UNSUPPORTED, "Scan: string scan inputs are not supported");
		if (axis < 0)
			axis += x->rank;
		if (axis < 0 || axis >= x->rank)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Scan: scan_input_axes[%d] is out of range", j);
		if (len >= 0 && x->dims[axis] != len)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Scan: scan inputs have different lengths (%lld and %lld)",
						   (long long) len, (long long) x->dims[axis]);
		len = x->dims[axis];
	}

	state = new_values(n_state, ctx->st);
	slices = new_values(m, ctx->st);
	outs = new_values(body->n_outputs, ctx->st);
	body_in = calloc(ctx->n_in + 1, sizeof(ox_value *));
	lists = calloc(n_scan_out + 1, sizeof(scan_list));
	if (!state || !slices || !outs || !body_in || !lists)
	{
		rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Scan: out of memory");
		goto done;
	}
	for (int i = 0; i < n_state; i++)
	{
		ox_value_init_tensor(&state[i]);
		if ((rc = ox_value_copy(&state[i], ctx->in[i], ctx->st)) != OX_OK)
			goto done;
		body_in[i] = &state[i];
	}
	for (int j = 0; j < m; j++)
	{
		ox_value_init_tensor(&slices[j]);
		body_in[n_state + j] = &slices[j];
	}
	for (int64_t t = 0; t < len; t++)
	{
		if (ox_kernel_should_abort(ctx))
		{
			rc = ox_fail(ctx->st, OX_CANCELED, "Scan: canceled");
			goto done;
		}
		for (int j = 0; j < m; j++)
		{
			const ox_tensor *x = ox_in_tensor(ctx, n_state + j);
			int64_t		axis = n_in_axes ? in_axes[j] : 0;
			bool		rev = n_in_dirs && in_dirs[j] == 1;

			if (axis < 0)
				axis += x->rank;
			if ((rc = take_slice(x, (int) axis, rev ? len - 1 - t : t, &slices[j].tensor, ctx->st)) != OX_OK)
				goto done;
		}
		if ((rc = ctx->run_subgraph(ctx, body, body_in, ctx->n_in, outs, ctx->st)) != OX_OK)
			goto done;
		for (int i = 0; i < n_state; i++)
			move_value(&state[i], &outs[i]);
		for (int k = 0; k < n_scan_out; k++)
			if ((rc = scan_list_push(&lists[k], &outs[n_state + k], ctx->st)) != OX_OK)
				goto done;
	}
	for (int i = 0; i < n_state; i++)
		move_value(ctx->out[i], &state[i]);
	for (int k = 0; k < n_scan_out; k++)
		if ((rc = stack_tensors(ctx, ctx->out[n_state + k], lists[k].items, lists[k].n,
								n_out_axes ? (int) out_axes[k] : 0, n_out_dirs && out_dirs[k] == 1)) != OX_OK)
			goto done;
done:
	free_values(state, n_state);
	free_values(slices, m);
	free_values(outs, body ? body->n_outputs : 0);
	free(body_in);
	scan_lists_free(lists, n_scan_out);
	return rc;
}

const ox_kernel_def ox_kernels_control[] = {
	{"", "If", 1, NULL, if_run, NULL},
	{"", "Loop", 1, NULL, loop_run, NULL},
	{"", "Scan", 8, NULL, scan8_run, NULL},
	{"", "Scan", 9, NULL, scan_run, NULL},
};
const int	ox_kernels_control_count = OX_KERNEL_COUNT(ox_kernels_control);
