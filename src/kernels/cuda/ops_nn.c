/*
 * ops_nn.c
 *	  Host side of the CUDA nn family: Softmax/LogSoftmax, LayerNormalization
 *	  and com.microsoft SkipLayerNormalization, BatchNormalization
 *	  (inference), pooling, reductions.  Conv lives in ops_conv.c.
 */
#include "kernels/cuda/cuda_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int
norm_axis(int64_t axis, int rank, ox_status *st, int *out)
{
	if (axis < -rank || axis >= (rank > 0 ? rank : 1))
		return ox_fail(st, OX_INVALID_ARGUMENT, "axis %lld is out of range for rank %d", (long long) axis, rank);
	*out = (int) (axis < 0 ? axis + rank : axis);
	return OX_OK;
}

static int64_t
prod(const int64_t *d, int from, int to)
{
	int64_t		p = 1;

	for (int i = from; i < to; i++)
		p *= d[i];
	return p;
}

/* ---- Softmax / LogSoftmax ------------------------------------------- */

static bool
sup_softmax(const ox_graph *g, const ox_node *n)
{
	return n->n_inputs == 1 && n->n_outputs == 1 && oxc_all_float(g, n, 1);
}

static ox_code
run_softmax(ox_cuda_op_ctx *oc)
{
	ox_dval    *x,
			   *y;
	int			axis = 0;
	bool		log = strcmp(oc->node->op_type, "LogSoftmax") == 0;
	int64_t		outer,
				len,
				inner;

	OX_TRY(oxc_in(oc, 0, OX_FLOAT, &x));
	OX_TRY(norm_axis(ox_attr_int(oc->node, "axis", oc->node->opset >= 13 ? -1 : 1), x->rank, oc->st, &axis));
	OX_TRY(oxc_out(oc, 0, OX_FLOAT, x->rank, x->dims, &y));
	if (x->rank == 0)
	{
		float		one = log ? 0.0f : 1.0f;

		return oxc_cuda_check(cudaMemcpyAsync(y->d, &one, sizeof(float), cudaMemcpyHostToDevice, oc->cx->stream),
							  "cudaMemcpyAsync", oc->st);
	}
	outer = prod(x->dims, 0, axis);
	if (oc->node->opset >= 13)
	{
		len = x->dims[axis];
		inner = prod(x->dims, axis + 1, x->rank);
	}
	else
	{
		/* opset < 13: the input is coerced to 2-D at axis */
		len = prod(x->dims, axis, x->rank);
		inner = 1;
	}
	return oxc_cuda_check(oxc_launch_softmax(oc->cx->stream, x->d, y->d, outer, len, inner, log), "softmax", oc->st);
}

/* ---- LayerNormalization / SkipLayerNormalization ---------------------- */

static bool
sup_layernorm(const ox_graph *g, const ox_node *n)
{
	if (n->n_inputs < 2 || !oxc_all_float(g, n, 3))
		return false;
	for (int o = 1; o < n->n_outputs; o++)
		if (n->outputs[o] >= 0)
			return false;		/* Mean / InvStdDev outputs: CPU */
	return true;
}

static ox_code
run_layernorm(ox_cuda_op_ctx *oc)
{
	ox_dval    *x,
			   *scale,
			   *bias = NULL,
			   *y;
	int			axis = 0;
	int64_t		rows,
				cols;

	OX_TRY(oxc_in(oc, 0, OX_FLOAT, &x));
	OX_TRY(oxc_in(oc, 1, OX_FLOAT, &scale));
	if (oc->n_in > 2 && oc->in[2])
		OX_TRY(oxc_in(oc, 2, OX_FLOAT, &bias));
	OX_TRY(norm_axis(ox_attr_int(oc->node, "axis", -1), x->rank, oc->st, &axis));
	rows = prod(x->dims, 0, axis);
	cols = prod(x->dims, axis, x->rank);
	if (oxc_numel(scale) != cols || (bias && oxc_numel(bias) != cols))
		return ox_fail(oc->st, OX_UNSUPPORTED, "LayerNormalization on CUDA needs scale and bias of the normalized shape");
	OX_TRY(oxc_out(oc, 0, OX_FLOAT, x->rank, x->dims, &y));
	return oxc_cuda_check(oxc_launch_layernorm(oc->cx->stream, x->d, NULL, NULL, scale->d, bias ? bias->d : NULL,
											   y->d, NULL, rows, cols, 1, ox_attr_float(oc->node, "epsilon", 1e-5f),
											   false), "LayerNormalization", oc->st);
}

static bool
sup_skip_layernorm(const ox_graph *g, const ox_node *n)
{
	if (n->n_inputs < 3 || n->n_inputs > 5 || !oxc_all_float(g, n, 5))
		return false;
	for (int o = 1; o < n->n_outputs && o < 3; o++)
		if (n->outputs[o] >= 0)
			return false;
	return n->n_outputs <= 4;
}

static ox_code
run_skip_layernorm(ox_cuda_op_ctx *oc)
{
	ox_dval    *x,
			   *skip,
			   *gamma,
			   *beta = NULL,
			   *bias = NULL,
			   *y,
			   *sum = NULL;
	int64_t		cols,
				rows,
				skip_rows;

	OX_TRY(oxc_in(oc, 0, OX_FLOAT, &x));
	OX_TRY(oxc_in(oc, 1, OX_FLOAT, &skip));
	OX_TRY(oxc_in(oc, 2, OX_FLOAT, &gamma));
	if (oc->n_in > 3 && oc->in[3])
		OX_TRY(oxc_in(oc, 3, OX_FLOAT, &beta));
	if (oc->n_in > 4 && oc->in[4])
		OX_TRY(oxc_in(oc, 4, OX_FLOAT, &bias));
	if (x->rank < 1)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "SkipLayerNormalization input must have rank 1 or more");
	cols = x->dims[x->rank - 1];
	rows = cols > 0 ? oxc_numel(x) / cols : 0;
	/* skip: the input's shape, or a suffix of it ([S, H] or [1, S, H] against [B, S, H]) */
	{
		int			k;

		for (k = 1; k <= skip->rank; k++)
		{
			int64_t		xd = k <= x->rank ? x->dims[x->rank - k] : 1;

			if (skip->dims[skip->rank - k] != xd && !(k > 2 && skip->dims[skip->rank - k] == 1))
				break;
		}
		if (skip->rank < 2 || skip->rank > x->rank || k <= skip->rank)
			return ox_fail(oc->st, OX_INVALID_ARGUMENT,
						   "SkipLayerNormalization skip must have the input's shape or its last two dimensions");
	}
	skip_rows = cols > 0 ? oxc_numel(skip) / cols : 1;
	if (skip_rows < 1 || rows % skip_rows != 0)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "SkipLayerNormalization skip does not broadcast over the input");
	if (oxc_numel(gamma) != cols || (beta && oxc_numel(beta) != cols) || (bias && oxc_numel(bias) != cols))
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "SkipLayerNormalization gamma, beta and bias must have the hidden size");
	OX_TRY(oxc_out(oc, 0, OX_FLOAT, x->rank, x->dims, &y));
	if (oc->n_out > 3 && oc->node->outputs[3] >= 0)
		OX_TRY(oxc_out(oc, 3, OX_FLOAT, x->rank, x->dims, &sum));
	return oxc_cuda_check(oxc_launch_layernorm(oc->cx->stream, x->d, skip->d, bias ? bias->d : NULL, gamma->d,
											   beta ? beta->d : NULL, y->d, sum ? sum->d : NULL, rows, cols,
											   skip_rows, ox_attr_float(oc->node, "epsilon", 1e-12f), false),
						  "SkipLayerNormalization", oc->st);
}

/* ---- BatchNormalization (inference) ---------------------------------- */

typedef struct bn_state
{
	float	   *dev;			/* scale' then shift', 2 * c floats */
	size_t		cap;
	int64_t		c;
} bn_state;

static void
free_bn(ox_cuda_ctx *cx, void *p)
{
	bn_state   *s = p;

	oxc_release(cx, s->dev, s->cap);
	free(s);
}

static bool
sup_batchnorm(const ox_graph *g, const ox_node *n)
{
	if (n->n_inputs != 5 || !oxc_all_float(g, n, 5) || ox_attr_int(n, "training_mode", 0) != 0)
		return false;
	if (n->opset < 9 && ox_attr_int(n, "spatial", 1) != 1)
		return false;
	for (int o = 1; o < n->n_outputs; o++)
		if (n->outputs[o] >= 0)
			return false;
	for (int i = 1; i < 5; i++)
		if (!oxc_const(g, n, i))
			return false;
	return true;
}

static ox_code
run_batchnorm(ox_cuda_op_ctx *oc)
{
	bn_state   *s = *oc->state;
	ox_dval    *x,
			   *y;
	int64_t		c;

	OX_TRY(oxc_in(oc, 0, OX_FLOAT, &x));
	if (x->rank < 2)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "BatchNormalization input must have rank 2 or more");
	c = x->dims[1];
	for (int i = 1; i < 5; i++)
		if (!oc->in[i] || !oc->in[i]->h || oc->in[i]->dtype != OX_FLOAT || oxc_numel(oc->in[i]) != c)
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "BatchNormalization parameters must have %lld floats",
						   (long long) c);
	if (!s)
	{
		/* fold once: scale' = scale / sqrt(var + eps), shift' = B - mean * scale' */
		float	   *host = malloc(sizeof(float) * 2 * c + 1);
		const float *sc = oc->in[1]->h,
				   *b = oc->in[2]->h,
				   *mean = oc->in[3]->h,
				   *var = oc->in[4]->h;
		float		eps = ox_attr_float(oc->node, "epsilon", 1e-5f);
		ox_code		rc;

		s = calloc(1, sizeof(bn_state));
		if (!host || !s)
		{
			free(host);
			free(s);
			return ox_fail(oc->st, OX_OUT_OF_MEMORY, "could not fold BatchNormalization");
		}
		for (int64_t i = 0; i < c; i++)
		{
			double		k = sc[i] / sqrt((double) var[i] + eps);

			host[i] = (float) k;
			host[c + i] = (float) (b[i] - mean[i] * k);
		}
		rc = oxc_alloc(oc->cx, sizeof(float) * 2 * c, (void **) &s->dev, &s->cap, oc->st);
		if (rc == OX_OK)
			rc = oxc_cuda_check(cudaMemcpyAsync(s->dev, host, sizeof(float) * 2 * c, cudaMemcpyHostToDevice,
												oc->cx->stream), "cudaMemcpyAsync", oc->st);
		if (rc == OX_OK)
			rc = oxc_cuda_check(cudaStreamSynchronize(oc->cx->stream), "cudaStreamSynchronize", oc->st);
		free(host);
		if (rc != OX_OK)
		{
			oxc_release(oc->cx, s->dev, s->cap);
			free(s);
			return rc;
		}
		s->c = c;
		*oc->state = s;
	}
	if (s->c != c)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "BatchNormalization channel count changed");
	OX_TRY(oxc_out(oc, 0, OX_FLOAT, x->rank, x->dims, &y));
	return oxc_cuda_check(oxc_launch_channel_affine(oc->cx->stream, x->d, y->d, s->dev, s->dev + c, x->dims[0], c,
													prod(x->dims, 2, x->rank)), "BatchNormalization", oc->st);
}

/* ---- pooling ----------------------------------------------------------- */

static bool
sup_pool(const ox_graph *g, const ox_node *n)
{
	const int64_t *v;
	const char *ap = ox_attr_string(n, "auto_pad", "NOTSET");

	if (n->n_inputs != 1 || !oxc_all_float(g, n, 1))
		return false;
	if (n->n_outputs > 1 && n->outputs[1] >= 0)
		return false;			/* MaxPool indices: CPU */
	if (strcmp(n->op_type, "MaxPool") == 0 && ox_attr_int(n, "storage_order", 0) != 0)
		return false;
	if (strcmp(ap, "NOTSET") != 0 && strcmp(ap, "VALID") != 0 && strcmp(ap, "SAME_UPPER") != 0 &&
		strcmp(ap, "SAME_LOWER") != 0)
		return false;
	/* 2-D windows only */
	return ox_attr_ints(n, "kernel_shape", &v) == 2;
}

static ox_code
run_pool(ox_cuda_op_ctx *oc)
{
	const ox_node *n = oc->node;
	ox_dval    *x,
			   *y;
	const int64_t *ks,
			   *st = NULL,
			   *pads = NULL,
			   *dil = NULL;
	int			nst = ox_attr_ints(n, "strides", &st);
	int			npd = ox_attr_ints(n, "pads", &pads);
	int			ndl = ox_attr_ints(n, "dilations", &dil);
	const char *ap = ox_attr_string(n, "auto_pad", "NOTSET");
	bool		ceil_mode = ox_attr_int(n, "ceil_mode", 0) != 0;
	oxc_pool2d	p;
	int64_t		in[2],
				out[2],
				pb[2],
				pe[2],
				dims[4];

	if (ox_attr_ints(n, "kernel_shape", &ks) != 2)
		return ox_fail(oc->st, OX_UNSUPPORTED, "pooling on CUDA is 2-D only");
	OX_TRY(oxc_in(oc, 0, OX_FLOAT, &x));
	if (x->rank != 4)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "2-D pooling needs a 4-D input");
	if ((nst && nst != 2) || (npd && npd != 4) || (ndl && ndl != 2))
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "pooling attributes do not match the kernel rank");
	memset(&p, 0, sizeof(p));
	p.kind = strcmp(n->op_type, "MaxPool") == 0 ? 0 : 1;
	p.count_include_pad = (int) ox_attr_int(n, "count_include_pad", 0);
	for (int d = 0; d < 2; d++)
	{
		int64_t		k = ks[d],
					s = nst ? st[d] : 1,
					dl = ndl ? dil[d] : 1;
		int64_t		ext;

		if (k <= 0 || s <= 0 || dl <= 0 || k > 65535 || s > 65535 || dl > 65535)
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "invalid pooling kernel, stride or dilation");
		in[d] = x->dims[2 + d];
		ext = (k - 1) * dl + 1;
		if (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0)
		{
			int64_t		total;

			out[d] = (in[d] + s - 1) / s;
			total = (out[d] - 1) * s + ext - in[d];
			if (total < 0)
				total = 0;
			pb[d] = strcmp(ap, "SAME_UPPER") == 0 ? total / 2 : total - total / 2;
			pe[d] = total - pb[d];
		}
		else
		{
			pb[d] = strcmp(ap, "VALID") == 0 || !npd ? 0 : pads[d];
			pe[d] = strcmp(ap, "VALID") == 0 || !npd ? 0 : pads[d + 2];
			if (pb[d] < 0 || pe[d] < 0 || pb[d] > 65535 || pe[d] > 65535)
				return ox_fail(oc->st, OX_INVALID_ARGUMENT, "invalid pooling pads");
			if (in[d] + pb[d] + pe[d] < ext)
				return ox_fail(oc->st, OX_INVALID_ARGUMENT, "pooling window larger than the padded input");
			if (ceil_mode)
			{
				out[d] = (in[d] + pb[d] + pe[d] - ext + s - 1) / s + 1;
				/* the last window must start inside the input or the begin padding */
				if ((out[d] - 1) * s >= in[d] + pb[d])
					out[d]--;
			}
			else
				out[d] = (in[d] + pb[d] + pe[d] - ext) / s + 1;
		}
		if (d == 0)
		{
			p.kh = (int) k;
			p.sh = (int) s;
			p.dh = (int) dl;
			p.ph = (int) pb[d];
			p.ph_end = (int) pe[d];
		}
		else
		{
			p.kw = (int) k;
			p.sw = (int) s;
			p.dw = (int) dl;
			p.pw = (int) pb[d];
			p.pw_end = (int) pe[d];
		}
	}
	p.n = x->dims[0];
	p.c = x->dims[1];
	p.h = in[0];
	p.w = in[1];
	p.oh = out[0];
	p.ow = out[1];
	dims[0] = p.n;
	dims[1] = p.c;
	dims[2] = p.oh;
	dims[3] = p.ow;
	OX_TRY(oxc_out(oc, 0, OX_FLOAT, 4, dims, &y));
	return oxc_cuda_check(oxc_launch_pool2d(oc->cx->stream, &p, x->d, y->d), "pooling", oc->st);
}

static bool
sup_global_pool(const ox_graph *g, const ox_node *n)
{
	return n->n_inputs == 1 && n->n_outputs == 1 && oxc_all_float(g, n, 1);
}

static ox_code
run_global_pool(ox_cuda_op_ctx *oc)
{
	ox_dval    *x,
			   *y;
	int64_t		dims[OX_MAX_RANK];

	OX_TRY(oxc_in(oc, 0, OX_FLOAT, &x));
	if (x->rank < 3)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "global pooling needs rank 3 or more");
	for (int d = 0; d < x->rank; d++)
		dims[d] = d < 2 ? x->dims[d] : 1;
	OX_TRY(oxc_out(oc, 0, OX_FLOAT, x->rank, dims, &y));
	return oxc_cuda_check(oxc_launch_reduce(oc->cx->stream, x->d, y->d, x->dims[0] * x->dims[1],
											prod(x->dims, 2, x->rank), 1,
											strcmp(oc->node->op_type, "GlobalMaxPool") == 0 ? 2 : 1),
						  "global pooling", oc->st);
}

/* ---- reductions -------------------------------------------------------- */

static int
reduce_op(const char *op)
{
	static const char *const names[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
	"ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSumExp"};

	for (int i = 0; i < 9; i++)
		if (strcmp(op, names[i]) == 0)
			return i;
	return -1;
}

/* axes from the attribute (older opsets) or the second input (ReduceSum 13+, all 18+) */
static bool
axes_from_input(const ox_node *n)
{
	return (strcmp(n->op_type, "ReduceSum") == 0 && n->opset >= 13) || n->opset >= 18;
}

static bool
sup_reduce(const ox_graph *g, const ox_node *n)
{
	if (n->n_inputs < 1 || n->n_outputs != 1 || !oxc_all_float(g, n, 1) || reduce_op(n->op_type) < 0)
		return false;
	if (axes_from_input(n) && n->n_inputs > 1 && n->inputs[1] >= 0)
	{
		const ox_tensor *t = oxc_const(g, n, 1);

		return t && t->dtype == OX_INT64;
	}
	return true;
}

static ox_code
run_reduce(ox_cuda_op_ctx *oc)
{
	const ox_node *n = oc->node;
	int			op = reduce_op(n->op_type);
	bool		keep = ox_attr_int(n, "keepdims", 1) != 0;
	const int64_t *axes = NULL;
	int64_t		n_axes = 0;
	bool		red[OX_MAX_RANK] = {false};
	ox_dval    *x,
			   *y;
	int64_t		cur[OX_MAX_RANK],
				odims[OX_MAX_RANK];
	int			orank = 0;
	const float *src;
	void	   *tmp[2] = {NULL, NULL};
	size_t		tcap[2] = {0, 0};
	int			n_red = 0,
				done = 0;
	ox_code		rc = OX_OK;

	OX_TRY(oxc_in(oc, 0, OX_FLOAT, &x));
	if (axes_from_input(n))
	{
		if (n->n_inputs > 1 && oc->in[1])
		{
			if (!oc->in[1]->h && oxc_numel(oc->in[1]) > 0)
				return ox_fail(oc->st, OX_INTERNAL, "reduction axes are not on the host");
			axes = oc->in[1]->h;
			n_axes = oxc_numel(oc->in[1]);
		}
	}
	else
		n_axes = ox_attr_ints(n, "axes", &axes);
	if (n_axes == 0 && ox_attr_int(n, "noop_with_empty_axes", 0))
	{
		OX_TRY(oxc_out(oc, 0, OX_FLOAT, x->rank, x->dims, &y));
		return oxc_cuda_check(cudaMemcpyAsync(y->d, x->d, sizeof(float) * oxc_numel(x), cudaMemcpyDeviceToDevice,
											  oc->cx->stream), "cudaMemcpyAsync", oc->st);
	}
	for (int64_t i = 0; i < n_axes; i++)
	{
		int			a = 0;

		OX_TRY(norm_axis(axes[i], x->rank, oc->st, &a));
		red[a] = true;
	}
	for (int d = 0; d < x->rank; d++)
	{
		if (n_axes == 0)
			red[d] = true;
		if (red[d])
			n_red++;
		if (!red[d] || keep)
			odims[orank++] = red[d] ? 1 : x->dims[d];
	}
	OX_TRY(oxc_out(oc, 0, OX_FLOAT, orank, odims, &y));
	if (oxc_numel(y) == 0)
		return OX_OK;
	if (n_red == 0 || oxc_numel(x) == 0)
	{
		if (oxc_numel(x) == 0)
		{
			/* empty reductions: the identity of the op */
			float		v = op == 2 || op == 8 ? -INFINITY : op == 3 ? INFINITY : op == 4 ? 1.0f :
				op == 1 ? NAN : 0.0f;
			int64_t		cnt = oxc_numel(y);
			float	   *host = malloc(sizeof(float) * cnt);

			if (!host)
				return ox_fail(oc->st, OX_OUT_OF_MEMORY, "could not fill an empty reduction");
			for (int64_t i = 0; i < cnt; i++)
				host[i] = v;
			rc = oxc_cuda_check(cudaMemcpyAsync(y->d, host, sizeof(float) * cnt, cudaMemcpyHostToDevice,
												oc->cx->stream), "cudaMemcpyAsync", oc->st);
			if (rc == OX_OK)
				rc = oxc_cuda_check(cudaStreamSynchronize(oc->cx->stream), "cudaStreamSynchronize", oc->st);
			free(host);
			return rc;
		}
		return oxc_cuda_check(cudaMemcpyAsync(y->d, x->d, sizeof(float) * oxc_numel(x), cudaMemcpyDeviceToDevice,
											  oc->cx->stream), "cudaMemcpyAsync", oc->st);
	}
	/* one pass per reduced axis, innermost first; later passes combine partial results */
	memcpy(cur, x->dims, sizeof(int64_t) * x->rank);
	src = x->d;
	for (int d = x->rank - 1; d >= 0 && rc == OX_OK; d--)
	{
		int			pass_op;
		float	   *dst;

		if (!red[d])
			continue;
		pass_op = done == 0 ? op : (op == 5 || op == 6 || op == 7 ? 0 : op);
		if (done == 0 && op == 7)
			pass_op = 5;		/* L2: sum of squares, then sums, then sqrt */
		done++;
		if (done == n_red)
			dst = y->d;
		else
		{
			int			slot = done & 1;
			size_t		need = sizeof(float) * (size_t) (prod(cur, 0, d) * prod(cur, d + 1, x->rank));

			if (tcap[slot] < need)
			{
				oxc_release(oc->cx, tmp[slot], tcap[slot]);
				tmp[slot] = NULL;
				tcap[slot] = 0;
				rc = oxc_alloc(oc->cx, need, &tmp[slot], &tcap[slot], oc->st);
				if (rc != OX_OK)
					break;
			}
			dst = tmp[slot];
		}
		rc = oxc_cuda_check(oxc_launch_reduce(oc->cx->stream, src, dst, prod(cur, 0, d), cur[d],
											  prod(cur, d + 1, x->rank), pass_op), "reduction", oc->st);
		cur[d] = 1;
		src = dst;
	}
	if (rc == OX_OK && op == 7)
		rc = oxc_cuda_check(oxc_launch_unary(oc->cx->stream, OXC_U_SQRT, 0, 0, y->d, y->d, oxc_numel(y)),
							"sqrt", oc->st);
	oxc_release(oc->cx, tmp[0], tcap[0]);
	oxc_release(oc->cx, tmp[1], tcap[1]);
	return rc;
}

const ox_cuda_op ox_cuda_ops_nn[] = {
	{"", "Softmax", 1, sup_softmax, run_softmax, NULL, 0},
	{"", "LogSoftmax", 1, sup_softmax, run_softmax, NULL, 0},
	{"", "LayerNormalization", 17, sup_layernorm, run_layernorm, NULL, 0},
	{"com.microsoft", "SkipLayerNormalization", 1, sup_skip_layernorm, run_skip_layernorm, NULL, 0},
	{"", "BatchNormalization", 7, sup_batchnorm, run_batchnorm, free_bn, 0},
	{"", "MaxPool", 8, sup_pool, run_pool, NULL, 0},
	{"", "AveragePool", 7, sup_pool, run_pool, NULL, 0},
	{"", "GlobalAveragePool", 1, sup_global_pool, run_global_pool, NULL, 0},
	{"", "GlobalMaxPool", 1, sup_global_pool, run_global_pool, NULL, 0},
	{"", "ReduceSum", 1, sup_reduce, run_reduce, NULL, 2},
	{"", "ReduceMean", 1, sup_reduce, run_reduce, NULL, 2},
	{"", "ReduceMax", 1, sup_reduce, run_reduce, NULL, 2},
	{"", "ReduceMin", 1, sup_reduce, run_reduce, NULL, 2},
	{"", "ReduceProd", 1, sup_reduce, run_reduce, NULL, 2},
	{"", "ReduceSumSquare", 1, sup_reduce, run_reduce, NULL, 2},
	{"", "ReduceL1", 1, sup_reduce, run_reduce, NULL, 2},
	{"", "ReduceL2", 1, sup_reduce, run_reduce, NULL, 2},
	{"", "ReduceLogSumExp", 1, sup_reduce, run_reduce, NULL, 2},
};
const int	ox_cuda_ops_nn_count = sizeof(ox_cuda_ops_nn) / sizeof(ox_cuda_ops_nn[0]);
