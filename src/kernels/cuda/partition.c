/*
 * partition.c
 *	  The com.onnx_pg CudaPartition kernel: runs the nodes of its "body"
 *	  graph on the session's CUDA stream.
 *
 *	  prepare: resolve each body node's device op, upload the constants
 *	           the device reads (once per session), and plan value lifetimes.
 *	  run:     wrap the partition inputs (host tensors, uploaded on first
 *	           use), run each node (output shapes are computed on the host
 *	           from input dims), release values after their last reader,
 *	           copy the outputs back into ox_out_tensor buffers, synchronize.
 */
#include "kernels/cuda/cuda_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct part_state
{
	ox_cuda_ctx *cx;
	const ox_graph *body;
	const ox_cuda_op **ops;		/* per body node */
	void	  **op_states;
	ox_dval    *vals;			/* per body value */
	ox_dval    *scratch;		/* per body node output slot, for omitted outputs */
	int		   *rel_start;		/* CSR: values released after node k */
	int		   *rel_ids;
	ox_dval   **in_buf;
	ox_dval   **out_buf;
	int			max_io;
} part_state;

static const struct
{
	const ox_cuda_op *table;
	const int  *count;
}			op_families[] = {
	{ox_cuda_ops_elementwise, &ox_cuda_ops_elementwise_count},
	{ox_cuda_ops_gemm, &ox_cuda_ops_gemm_count},
	{ox_cuda_ops_nn, &ox_cuda_ops_nn_count},
	{ox_cuda_ops_conv, &ox_cuda_ops_conv_count},
	{ox_cuda_ops_tensor, &ox_cuda_ops_tensor_count},
};

const ox_cuda_op *
ox_cuda_find_op(const ox_node *n)
{
	const ox_cuda_op *best = NULL;

	for (size_t f = 0; f < sizeof(op_families) / sizeof(op_families[0]); f++)
		for (int i = 0; i < *op_families[f].count; i++)
		{
			const ox_cuda_op *op = &op_families[f].table[i];

			if (strcmp(op->op_type, n->op_type) != 0 || strcmp(op->domain, n->domain) != 0 ||
				op->since_version > n->opset)
				continue;
			if (!best || op->since_version > best->since_version)
				best = op;
		}
	return best;
}

bool
ox_cuda_supports(const ox_graph *g, const ox_node *n)
{
	const ox_cuda_op *op = ox_cuda_find_op(n);

	if (!op)
		return false;
	/* host-read inputs: int64 and known (the device never computes them) */
	for (int i = 0; i < n->n_inputs && i < 32; i++)
		if ((op->host_inputs & (1u << i)) && n->inputs[i] >= 0 &&
			oxc_input_type(g, n, i) != OX_INT64)
			return false;
	return op->supports(g, n);
}

bool
ox_cuda_host_input(const ox_node *n, int i)
{
	const ox_cuda_op *op = ox_cuda_find_op(n);

	return op && i >= 0 && i < 32 && (op->host_inputs & (1u << i));
}

static void
part_free(void *p)
{
	part_state *ps = p;

	if (!ps)
		return;
	if (ps->cx)
	{
		(void) cudaStreamSynchronize(ps->cx->stream);
		for (int k = 0; ps->op_states && k < ps->body->n_nodes; k++)
			if (ps->op_states[k] && ps->ops[k] && ps->ops[k]->free_state)
				ps->ops[k]->free_state(ps->cx, ps->op_states[k]);
		for (int v = 0; ps->vals && v < ps->body->n_values; v++)
		{
			ps->vals[v].persistent = false;
			oxc_dval_release(ps->cx, &ps->vals[v]);
		}
		for (int k = 0; ps->scratch && k < ps->max_io * ps->body->n_nodes; k++)
			oxc_dval_release(ps->cx, &ps->scratch[k]);
	}
	free(ps->ops);
	free(ps->op_states);
	free(ps->vals);
	free(ps->scratch);
	free(ps->rel_start);
	free(ps->rel_ids);
	free(ps->in_buf);
	free(ps->out_buf);
	free(ps);
}

static ox_code
part_prepare(ox_prepare_ctx *pc)
{
	const ox_graph *body = ox_attr_graph(pc->node, "body");
	part_state *ps;
	int		   *last_use;
	int			n;

	if (!pc->device)
		return ox_fail(pc->st, OX_INTERNAL, "a CUDA partition in a session without a CUDA context");
	if (!body)
		return ox_fail(pc->st, OX_INVALID_MODEL, "CudaPartition has no body");
	if (body->n_inputs != pc->node->n_inputs || body->n_outputs != pc->node->n_outputs)
		return ox_fail(pc->st, OX_INVALID_MODEL, "CudaPartition inputs or outputs do not match its body");
	n = body->n_nodes;
	ps = calloc(1, sizeof(part_state));
	if (!ps)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "could not prepare a CUDA partition");
	ps->cx = pc->device;
	ps->body = body;
	for (int k = 0; k < n; k++)
	{
		if (body->nodes[k].n_inputs > ps->max_io)
			ps->max_io = body->nodes[k].n_inputs;
		if (body->nodes[k].n_outputs > ps->max_io)
			ps->max_io = body->nodes[k].n_outputs;
	}
	ps->ops = calloc(n + 1, sizeof(*ps->ops));
	ps->op_states = calloc(n + 1, sizeof(void *));
	ps->vals = calloc(body->n_values + 1, sizeof(ox_dval));
	ps->scratch = calloc((size_t) ps->max_io * n + 1, sizeof(ox_dval));
	ps->rel_start = calloc(n + 2, sizeof(int));
	ps->rel_ids = calloc(body->n_values + 1, sizeof(int));
	ps->in_buf = calloc(ps->max_io + 1, sizeof(ox_dval *));
	ps->out_buf = calloc(ps->max_io + 1, sizeof(ox_dval *));
	last_use = malloc(sizeof(int) * (body->n_values + 1));
	if (!ps->ops || !ps->op_states || !ps->vals || !ps->scratch || !ps->rel_start || !ps->rel_ids ||
		!ps->in_buf || !ps->out_buf || !last_use)
	{
		free(last_use);
		part_free(ps);
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "could not prepare a CUDA partition");
	}
	for (int k = 0; k < n; k++)
	{
		ps->ops[k] = ox_cuda_find_op(&body->nodes[k]);
		if (!ps->ops[k])
		{
			ox_fail(pc->st, OX_UNSUPPORTED, "the CUDA provider has no kernel for %s", body->nodes[k].op_type);
			free(last_use);
			part_free(ps);
			return OX_UNSUPPORTED;
		}
	}
	/* constants: host views; uploaded now when a node reads them on the device */
	for (int v = 0; v < body->n_values; v++)
	{
		const ox_tensor *t = body->values[v].init;
		ox_dval    *dv = &ps->vals[v];

		last_use[v] = -1;
		if (!t)
			continue;
		dv->dtype = t->dtype;
		dv->rank = t->rank;
		memcpy(dv->dims, t->dims, sizeof(int64_t) * t->rank);
		dv->h = t->data;
		dv->live = true;
		dv->persistent = true;
		for (int k = 0; k < n && !dv->d; k++)
			for (int i = 0; i < body->nodes[k].n_inputs; i++)
				if (body->nodes[k].inputs[i] == v && !(i < 32 && (ps->ops[k]->host_inputs & (1u << i))) &&
					t->dtype != OX_STRING)
				{
					dv->persistent = false;
					if (oxc_dval_device(ps->cx, dv, pc->st) != OX_OK)
					{
						free(last_use);
						part_free(ps);
						return pc->st->code;
					}
					dv->persistent = true;
					break;
				}
	}
	if (oxc_cuda_check(cudaStreamSynchronize(ps->cx->stream), "uploading weights", pc->st) != OX_OK)
	{
		free(last_use);
		part_free(ps);
		return pc->st->code;
	}
	/* lifetimes of values produced inside: released after their last reader */
	for (int k = 0; k < n; k++)
	{
		const ox_node *node = &body->nodes[k];

		for (int i = 0; i < node->n_inputs; i++)
			if (node->inputs[i] >= 0)
				last_use[node->inputs[i]] = k;
		for (int o = 0; o < node->n_outputs; o++)
			if (node->outputs[o] >= 0 && last_use[node->outputs[o]] < k)
				last_use[node->outputs[o]] = k;
	}
	for (int v = 0; v < body->n_values; v++)
		if (body->values[v].producer >= 0 && !body->values[v].is_output && last_use[v] >= 0)
			ps->rel_start[last_use[v] + 1]++;
	for (int k = 0; k < n; k++)
		ps->rel_start[k + 1] += ps->rel_start[k];
	{
		int		   *fill = calloc(n + 1, sizeof(int));

		if (!fill)
		{
			free(last_use);
			part_free(ps);
			return ox_fail(pc->st, OX_OUT_OF_MEMORY, "could not prepare a CUDA partition");
		}
		for (int v = 0; v < body->n_values; v++)
			if (body->values[v].producer >= 0 && !body->values[v].is_output && last_use[v] >= 0)
				ps->rel_ids[ps->rel_start[last_use[v]] + fill[last_use[v]]++] = v;
		free(fill);
	}
	free(last_use);
	pc->state = ps;
	return OX_OK;
}

/* back to the state between runs: only constants hold device memory */
static void
release_run_values(part_state *ps)
{
	for (int v = 0; v < ps->body->n_values; v++)
		if (!ps->vals[v].persistent)
			oxc_dval_release(ps->cx, &ps->vals[v]);
}

static ox_code
part_run_nodes(ox_kernel_ctx *ctx, part_state *ps)
{
	const ox_graph *body = ps->body;
	ox_cuda_ctx *cx = ps->cx;

	OX_TRY(oxc_cuda_check(cudaSetDevice(cx->device), "cudaSetDevice", ctx->st));
	/* partition inputs: views of the host tensors, uploaded on first use */
	for (int i = 0; i < body->n_inputs; i++)
	{
		const ox_tensor *t = ox_in_tensor(ctx, i);
		ox_dval    *dv = &ps->vals[body->inputs[i]];

		if (!t)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "CUDA partition input %d is not a tensor", i);
		if (t->dtype == OX_STRING)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "CUDA partition input %d is a string tensor", i);
		if (t->rank < 0 || t->rank > OX_MAX_RANK || ox_tensor_numel(t) < 0)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "CUDA partition input %d has an invalid shape", i);
		oxc_dval_release(cx, dv);
		dv->dtype = t->dtype;
		dv->rank = t->rank;
		memcpy(dv->dims, t->dims, sizeof(int64_t) * t->rank);
		dv->h = t->data;
		dv->live = true;
	}
	for (int k = 0; k < body->n_nodes; k++)
	{
		const ox_node *node = &body->nodes[k];
		ox_cuda_op_ctx oc;
		ox_code		rc;

		if (ox_kernel_should_abort(ctx))
			return ox_fail(ctx->st, OX_CANCELED, "the run was canceled");
		for (int i = 0; i < node->n_inputs; i++)
			ps->in_buf[i] = node->inputs[i] >= 0 ? &ps->vals[node->inputs[i]] : NULL;
		for (int o = 0; o < node->n_outputs; o++)
			ps->out_buf[o] = node->outputs[o] >= 0 ? &ps->vals[node->outputs[o]] :
				&ps->scratch[(size_t) k * ps->max_io + o];
		memset(&oc, 0, sizeof(oc));
		oc.cx = cx;
		oc.node = node;
		oc.in = ps->in_buf;
		oc.n_in = node->n_inputs;
		oc.out = ps->out_buf;
		oc.n_out = node->n_outputs;
		oc.state = &ps->op_states[k];
		oc.st = ctx->st;
		rc = ps->ops[k]->run(&oc);
		if (rc == OX_OK)
			rc = oxc_cuda_check(cudaGetLastError(), "a kernel launch", ctx->st);
		if (rc != OX_OK)
		{
			if (ctx->st->code == OX_OK)
				ox_fail(ctx->st, rc, "CUDA kernel failed without a message");
			ox_status_set_node(ctx->st, node->name, node->op_type);
			return ctx->st->code;
		}
		for (int r = ps->rel_start[k]; r < ps->rel_start[k + 1]; r++)
			oxc_dval_release(cx, &ps->vals[ps->rel_ids[r]]);
	}
	/* outputs back to the host */
	for (int o = 0; o < body->n_outputs; o++)
	{
		ox_dval    *dv = &ps->vals[body->outputs[o]];
		ox_tensor  *t;
		size_t		bytes;

		if (!dv->live)
			return ox_fail(ctx->st, OX_INTERNAL, "CUDA partition output %d was not computed", o);
		t = ox_out_tensor(ctx, o, dv->dtype, dv->rank, dv->dims);
		if (!t)
			return ctx->st->code;
		bytes = (size_t) oxc_numel(dv) * ox_dtype_size(dv->dtype);
		if (bytes == 0)
			continue;
		if (dv->d)
			OX_TRY(oxc_cuda_check(cudaMemcpyAsync(t->data, dv->d, bytes, cudaMemcpyDeviceToHost, cx->stream),
								  "cudaMemcpyAsync (download)", ctx->st));
		else if (dv->h)
			memcpy(t->data, dv->h, bytes);
	}
	return oxc_cuda_check(cudaStreamSynchronize(cx->stream), "cudaStreamSynchronize", ctx->st);
}

static ox_code
part_run(ox_kernel_ctx *ctx)
{
	part_state *ps = ctx->state;
	ox_code		rc;

	if (!ps)
		return ox_fail(ctx->st, OX_INTERNAL, "CUDA partition run without prepare");
	rc = part_run_nodes(ctx, ps);
	if (rc != OX_OK)
		(void) cudaStreamSynchronize(ps->cx->stream);
	release_run_values(ps);
	return rc;
}

const ox_kernel_def ox_kernels_cuda[] = {
	{OX_PARTITION_DOMAIN_NAME, OX_CUDA_PARTITION_OP, 1, part_prepare, part_run, part_free},
};
const int	ox_kernels_cuda_count = OX_KERNEL_COUNT(ox_kernels_cuda);
