/*
 * loss.c
 *	  NegativeLogLikelihoodLoss (opsets 12, 13, 22) and
 *	  SoftmaxCrossEntropyLoss (opsets 12, 13), and the loss family table.
 *
 * Both read scores [N, C, d1, ..., dk] as [N, C, D] with D = d1 * ... * dk
 * and labels [N, d1, ..., dk] as [N, D].  SoftmaxCrossEntropyLoss first
 * turns the scores into log-probabilities along C (x - max - log(sum(exp(x
 * - max))), so that large scores cannot overflow); from there both ops are
 * the same: loss[n, d] = -logp[n, label, d] * weight[label], zero where the
 * label equals ignore_index.  Reduction "mean" divides by the sum of the
 * applied weights (the count of labels not ignored when there are no
 * weights), as the spec says; a mean over nothing is 0/0 = NaN, as in the
 * reference.
 *
 * Everything is computed in double, from a converted copy of the scores,
 * and converted to the scores' type (float, double, float16, bfloat16) at
 * the end.  A label outside [0, C) that is not ignore_index is an error.
 */
#include "kernels/kernel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LOSS_SHAPE_LEN 192

typedef enum loss_reduction
{
	LOSS_NONE,
	LOSS_SUM,
	LOSS_MEAN
} loss_reduction;

typedef struct loss_state
{
	const char *op;				/* for messages */
	bool		softmax;		/* SoftmaxCrossEntropyLoss */
	loss_reduction reduction;
	bool		has_ignore;
	int64_t		ignore_index;
} loss_state;

static ox_code
loss_prepare(ox_prepare_ctx *pc)
{
	const ox_node *n = pc->node;
	const char *red = ox_attr_string(n, "reduction", "mean");
	const ox_attr *ii = ox_node_attr(n, "ignore_index");
	loss_state *s;
	loss_reduction r;

	if (strcmp(red, "none") == 0)
		r = LOSS_NONE;
	else if (strcmp(red, "sum") == 0)
		r = LOSS_SUM;
	else if (strcmp(red, "mean") == 0)
		r = LOSS_MEAN;
	else
		return ox_fail(pc->st, OX_UNSUPPORTED, "%s: reduction must be none, sum or mean, got \"%s\"",
					   n->op_type, red);
	if (ii && ii->type != OX_ATTR_INT)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "%s: ignore_index must be an int", n->op_type);
	if (!(s = calloc(1, sizeof(*s))))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s: could not allocate kernel state", n->op_type);
	s->softmax = strcmp(n->op_type, "SoftmaxCrossEntropyLoss") == 0;
	s->op = s->softmax ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss";
	s->reduction = r;
	s->has_ignore = ii != NULL;
	s->ignore_index = ii ? ii->i : 0;
	pc->state = s;
	return OX_OK;
}

static void
loss_free(void *state)
{
	free(state);
}

/* scores [C, D] of one sample -> log-softmax along C, in place */
static void
loss_log_softmax(double *x, int64_t C, int64_t D, double *max, double *sum)
{
	for (int64_t d = 0; d < D; d++)
	{
		max[d] = -INFINITY;
		sum[d] = 0;
	}
	for (int64_t c = 0; c < C; c++)
		for (int64_t d = 0; d < D; d++)
			max[d] = x[c * D + d] > max[d] ? x[c * D + d] : max[d];
	for (int64_t c = 0; c < C; c++)
		for (int64_t d = 0; d < D; d++)
			sum[d] += exp(x[c * D + d] - max[d]);
	for (int64_t d = 0; d < D; d++)
		sum[d] = log(sum[d]);
	for (int64_t c = 0; c < C; c++)
		for (int64_t d = 0; d < D; d++)
			x[c * D + d] = (x[c * D + d] - max[d]) - sum[d];
}

static ox_code
loss_run(ox_kernel_ctx *ctx)
{
	const loss_state *ls = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *t = ox_in_tensor(ctx, 1);
	const ox_tensor *w = ox_in_tensor(ctx, 2);
	char		a[LOSS_SHAPE_LEN],
				b[LOSS_SHAPE_LEN];
	int64_t		N,
				C,
				D,
				nx;
	double	   *xd = NULL,
			   *wd = NULL,
			   *ld = NULL,
			   *tmp = NULL;
	double		total = 0,
				weight_total = 0;
	ox_tensor  *out;
	ox_code		rc = OX_OK;

	if (!x || !t)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: scores and labels are required", ls->op);
	if (!ox_dtype_is_float(x->dtype))
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: type %s is not supported", ls->op, ox_dtype_name(x->dtype));
	if (t->dtype != OX_INT32 && t->dtype != OX_INT64)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: labels must be int32 or int64, got %s", ls->op,
					   ox_dtype_name(t->dtype));
	if (x->rank < 2 || t->rank != x->rank - 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: scores %s must be [N, C, d1...] and labels %s [N, d1...]",
					   ls->op, ox_shape_str(x->rank, x->dims, a, sizeof(a)),
					   ox_shape_str(t->rank, t->dims, b, sizeof(b)));
	N = x->dims[0];
	C = x->dims[1];
	for (int i = 0; i < t->rank; i++)
		if (t->dims[i] != x->dims[i == 0 ? 0 : i + 1])
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: labels %s do not match scores %s", ls->op,
						   ox_shape_str(t->rank, t->dims, b, sizeof(b)),
						   ox_shape_str(x->rank, x->dims, a, sizeof(a)));
	nx = ox_tensor_numel(x);
	D = ox_shape_numel(x->rank - 2, x->dims + 2);
	if (nx < 0 || D < 0 || ox_tensor_numel(t) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "%s: input size overflows", ls->op);
	if (w && (w->dtype != x->dtype || w->rank != 1 || w->dims[0] != C))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: weights must be %s [%lld], got %s %s", ls->op,
					   ox_dtype_name(x->dtype), (long long) C, ox_dtype_name(w->dtype),
					   ox_shape_str(w->rank, w->dims, a, sizeof(a)));

	/* outputs first: loss, then log_prob (SoftmaxCrossEntropyLoss only) */
	if (ls->reduction == LOSS_NONE)
		out = ox_out_tensor(ctx, 0, x->dtype, t->rank, t->dims);
	else
		out = ox_out_tensor(ctx, 0, x->dtype, 0, NULL);
	if (!out)
		return ctx->st->code;

	xd = ox_workspace_alloc((size_t) (nx > 0 ? nx : 1) * sizeof(double), ctx->st, "Loss");
	ld = ox_workspace_alloc((size_t) (N * D > 0 ? N * D : 1) * sizeof(double), ctx->st, "Loss");
	tmp = ox_workspace_alloc((size_t) (D > 0 ? 2 * D : 1) * sizeof(double), ctx->st, "Loss");
	wd = ox_workspace_alloc((size_t) (C > 0 ? C : 1) * sizeof(double), ctx->st, "Loss");
	if (!xd || !ld || !tmp || !wd)
	{
		rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: could not allocate work buffers", ls->op);
		goto done;
	}
	if (nx > 0 && (rc = ox_convert_elements(xd, OX_DOUBLE, x->data, x->dtype, nx, ctx->st)) != OX_OK)
		goto done;
	if (w && C > 0 && (rc = ox_convert_elements(wd, OX_DOUBLE, w->data, w->dtype, C, ctx->st)) != OX_OK)
		goto done;
	if (ls->softmax)
	{
		for (int64_t n = 0; n < N && C > 0; n++)
			loss_log_softmax(xd + n * C * D, C, D, tmp, tmp + D);
		if (ox_has_output(ctx, 1))
		{
			ox_tensor  *lp = ox_out_tensor(ctx, 1, x->dtype, x->rank, x->dims);

			if (!lp)
			{
				rc = ctx->st->code;
				goto done;
			}
			if (nx > 0 && (rc = ox_convert_elements(lp->data, lp->dtype, xd, OX_DOUBLE, nx, ctx->st)) != OX_OK)
				goto done;
		}
	}

	for (int64_t n = 0; n < N; n++)
		for (int64_t d = 0; d < D; d++)
		{
			int64_t		i = n * D + d;
			int64_t		label = t->dtype == OX_INT64 ? ((const int64_t *) t->data)[i] :
				((const int32_t *) t->data)[i];
			double		wt;

			if (ls->has_ignore && label == ls->ignore_index)
			{
				ld[i] = 0;
				continue;
			}
			if (label < 0 || label >= C)
			{
				rc = ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: label %lld is outside [0, %lld)", ls->op,
							 (long long) label, (long long) C);
				goto done;
			}
			wt = w ? wd[label] : 1.0;
			ld[i] = -xd[(n * C + label) * D + d] * wt;
			total += ld[i];
			weight_total += wt;
		}

	if (ls->reduction == LOSS_NONE)
	{
		if (N * D > 0)
			rc = ox_convert_elements(out->data, out->dtype, ld, OX_DOUBLE, N * D, ctx->st);
	}
	else
	{
		double		r = ls->reduction == LOSS_SUM ? total : total / weight_total;

		rc = ox_convert_elements(out->data, out->dtype, &r, OX_DOUBLE, 1, ctx->st);
	}

done:
	free(xd);
	free(ld);
	free(tmp);
	free(wd);
	return rc;
}

const ox_kernel_def ox_kernels_loss[] = {
	{"", "NegativeLogLikelihoodLoss", 12, loss_prepare, loss_run, loss_free},
	{"", "SoftmaxCrossEntropyLoss", 12, loss_prepare, loss_run, loss_free},
};
const int	ox_kernels_loss_count = OX_KERNEL_COUNT(ox_kernels_loss);
