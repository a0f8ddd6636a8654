/*
 * ops_conv.c
 *	  Conv and com.microsoft FusedConv on cuDNN (legacy convolution API,
 *	  still shipped by cuDNN 9): 1-D and 2-D, groups (depthwise included),
 *	  strides, dilations, explicit and auto pads, bias, and FusedConv's Z
 *	  addend and activation applied by the elementwise epilogue kernel.
 *
 *	  Descriptors and the algorithm are chosen per input shape (the last
 *	  shape is cached): cudnnFindConvolutionForwardAlgorithmEx measures the
 *	  candidates once with the session's workspace; the fastest one whose
 *	  workspace fits is kept.  Math type CUDNN_FMA_MATH (no TF32: exact
 *	  float32) unless cuda_fp16 is set (CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION).
 *	  cuDNN wants symmetric pads: asymmetric ones (SAME_* with an odd total)
 *	  are applied by copying the input into a zero-padded buffer.
 */
#include "kernels/cuda/cuda_internal.h"

#include <stdlib.h>
#include <string.h>

#define CONV_WORKSPACE_MAX ((size_t) 512 << 20)

typedef struct conv_state
{
	cudnnTensorDescriptor_t xd,
				yd;
	cudnnFilterDescriptor_t wd;
	cudnnConvolutionDescriptor_t cd;
	cudnnConvolutionFwdAlgo_t algo;
	size_t		ws;
	int			rank;			/* of the input the descriptors were made for */
	int64_t		xdims[OX_MAX_RANK];
	int64_t		ydims[OX_MAX_RANK];
	int64_t		pad_begin[2],
				pad_end[2];
	bool		explicit_pad;	/* input copied into a padded buffer */
	int64_t		pdims[4];		/* its dims */
	bool		ready;
} conv_state;

static void
free_conv(ox_cuda_ctx *cx, void *p)
{
	conv_state *s = p;

	(void) cx;
	if (s->xd)
		cudnnDestroyTensorDescriptor(s->xd);
	if (s->yd)
		cudnnDestroyTensorDescriptor(s->yd);
	if (s->wd)
		cudnnDestroyFilterDescriptor(s->wd);
	if (s->cd)
		cudnnDestroyConvolutionDescriptor(s->cd);
	free(s);
}

static bool
sup_conv(const ox_graph *g, const ox_node *n)
{
	const ox_tensor *w = oxc_const(g, n, 1);
	const char *ap = ox_attr_string(n, "auto_pad", "NOTSET");
	oxc_unary	act;
	float		p0,
				p1;

	if (n->n_inputs < 2 || n->n_outputs != 1 || !oxc_all_float(g, n, 4))
		return false;
	if (strcmp(n->domain, "com.microsoft") == 0)
	{
		if (!oxc_fused_activation(n, &act, &p0, &p1) || n->n_inputs > 4)
			return false;
	}
	else if (n->n_inputs > 3)
		return false;
	/* a constant weight of rank 3 or 4 (1-D or 2-D convolution) */
	if (!w || w->dtype != OX_FLOAT || (w->rank != 3 && w->rank != 4))
		return false;
	return strcmp(ap, "NOTSET") == 0 || strcmp(ap, "VALID") == 0 || strcmp(ap, "SAME_UPPER") == 0 ||
		strcmp(ap, "SAME_LOWER") == 0;
}

/* geometry for input x and weight w (both as 4-D, 1-D convs with h = 1) */
static ox_code
conv_geometry(ox_cuda_op_ctx *oc, const int64_t *x4, const int64_t *w4, int sp_rank, int64_t *ydims,
			  int64_t *pb, int64_t *pe, int64_t *stride, int64_t *dil)
{
	const ox_node *n = oc->node;
	const int64_t *st = NULL,
			   *pads = NULL,
			   *dl = NULL,
			   *ks = NULL;
	int			nst = ox_attr_ints(n, "strides", &st);
	int			npd = ox_attr_ints(n, "pads", &pads);
	int			ndl = ox_attr_ints(n, "dilations", &dl);
	int			nks = ox_attr_ints(n, "kernel_shape", &ks);
	const char *ap = ox_attr_string(n, "auto_pad", "NOTSET");
	int64_t		group = ox_attr_int(n, "group", 1);

	if ((nst && nst != sp_rank) || (npd && npd != 2 * sp_rank) || (ndl && ndl != sp_rank) ||
		(nks && nks != sp_rank))
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Conv attributes do not match the input rank");
	if (group <= 0 || x4[1] % group != 0 || w4[0] % group != 0 || w4[1] * group != x4[1])
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Conv channels (%lld input, %lld x %lld weight) do not match group %lld",
					   (long long) x4[1], (long long) w4[0], (long long) w4[1], (long long) group);
	ydims[0] = x4[0];
	ydims[1] = w4[0];
	for (int d = 0; d < 2; d++)
	{
		int			a = d - (2 - sp_rank);	/* attribute index; < 0 for the dummy h of 1-D */
		int64_t		in = x4[2 + d],
					k = w4[2 + d];
		int64_t		s = a >= 0 && nst ? st[a] : 1,
					dlt = a >= 0 && ndl ? dl[a] : 1;
		int64_t		ext;

		if (a >= 0 && nks && ks[a] != k)
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Conv kernel_shape does not match the weight");
		if (s <= 0 || dlt <= 0 || s > 65535 || dlt > 65535)
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "invalid Conv strides or dilations");
		ext = (k - 1) * dlt + 1;
		stride[d] = s;
		dil[d] = dlt;
		if (a >= 0 && (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0))
		{
			int64_t		out = (in + s - 1) / s;
			int64_t		total = (out - 1) * s + ext - in;

			if (total < 0)
				total = 0;
			pb[d] = strcmp(ap, "SAME_UPPER") == 0 ? total / 2 : total - total / 2;
			pe[d] = total - pb[d];
		}
		else if (a >= 0 && npd && strcmp(ap, "VALID") != 0)
		{
			pb[d] = pads[a];
			pe[d] = pads[a + sp_rank];
		}
		else
			pb[d] = pe[d] = 0;
		if (pb[d] < 0 || pe[d] < 0 || pb[d] > 65535 || pe[d] > 65535)
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "invalid Conv pads");
		if (in + pb[d] + pe[d] < ext)
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Conv kernel larger than the padded input");
		ydims[2 + d] = (in + pb[d] + pe[d] - ext) / s + 1;
	}
	return OX_OK;
}

static ox_code
setup(ox_cuda_op_ctx *oc, conv_state *s, const int64_t *x4, const int64_t *w4, const int64_t *y4,
	  const int64_t *stride, const int64_t *dil, const void *x, const void *w, void *y)
{
	ox_cuda_ctx *cx = oc->cx;
	int64_t		group = ox_attr_int(oc->node, "group", 1);
	const int64_t *in4 = s->explicit_pad ? s->pdims : x4;
	int			ph = s->explicit_pad ? 0 : (int) s->pad_begin[0],
				pw = s->explicit_pad ? 0 : (int) s->pad_begin[1];
	cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
	int			got = 0;
	int			choice = -1;

	for (int i = 0; i < 4; i++)
		if (in4[i] > 2147483647LL || w4[i] > 2147483647LL || y4[i] > 2147483647LL)
			return ox_fail(oc->st, OX_UNSUPPORTED, "Conv dimensions beyond 2^31 on CUDA");
	OX_TRY(oxc_cudnn(cx, oc->st));
	if (!s->xd)
	{
		OX_TRY(oxc_dnn_check(cudnnCreateTensorDescriptor(&s->xd), "cudnnCreateTensorDescriptor", oc->st));
		OX_TRY(oxc_dnn_check(cudnnCreateTensorDescriptor(&s->yd), "cudnnCreateTensorDescriptor", oc->st));
		OX_TRY(oxc_dnn_check(cudnnCreateFilterDescriptor(&s->wd), "cudnnCreateFilterDescriptor", oc->st));
		OX_TRY(oxc_dnn_check(cudnnCreateConvolutionDescriptor(&s->cd), "cudnnCreateConvolutionDescriptor", oc->st));
	}
	OX_TRY(oxc_dnn_check(cudnnSetTensor4dDescriptor(s->xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, (int) in4[0],
													(int) in4[1], (int) in4[2], (int) in4[3]),
						 "cudnnSetTensor4dDescriptor", oc->st));
	OX_TRY(oxc_dnn_check(cudnnSetFilter4dDescriptor(s->wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, (int) w4[0],
													(int) w4[1], (int) w4[2], (int) w4[3]),
						 "cudnnSetFilter4dDescriptor", oc->st));
	OX_TRY(oxc_dnn_check(cudnnSetConvolution2dDescriptor(s->cd, ph, pw, (int) stride[0], (int) stride[1],
														 (int) dil[0], (int) dil[1], CUDNN_CROSS_CORRELATION,
														 CUDNN_DATA_FLOAT),
						 "cudnnSetConvolution2dDescriptor", oc->st));
	OX_TRY(oxc_dnn_check(cudnnSetConvolutionGroupCount(s->cd, (int) group), "cudnnSetConvolutionGroupCount",
						 oc->st));
	OX_TRY(oxc_dnn_check(cudnnSetConvolutionMathType(s->cd, cx->fp16 ? CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION :
													 CUDNN_FMA_MATH), "cudnnSetConvolutionMathType", oc->st));
	{
		int			n,
					c,
					h,
					wd;

		OX_TRY(oxc_dnn_check(cudnnGetConvolution2dForwardOutputDim(s->cd, s->xd, s->wd, &n, &c, &h, &wd),
							 "cudnnGetConvolution2dForwardOutputDim", oc->st));
		if (n != y4[0] || c != y4[1] || h != y4[2] || wd != y4[3])
			return ox_fail(oc->st, OX_INTERNAL, "cuDNN computes another Conv output shape");
	}
	OX_TRY(oxc_dnn_check(cudnnSetTensor4dDescriptor(s->yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, (int) y4[0],
													(int) y4[1], (int) y4[2], (int) y4[3]),
						 "cudnnSetTensor4dDescriptor", oc->st));
	/* measure the algorithms once for this shape (workspace from the arena) */
	{
		size_t		ws_try = CONV_WORKSPACE_MAX;

		if (cx->limit && cx->limit / 4 < ws_try)
			ws_try = cx->limit / 4;
		if (oxc_workspace(cx, ws_try, oc->st) != OX_OK)
		{
			ox_status_clear(oc->st);
			ws_try = cx->workspace_cap;
		}
		if (cudnnFindConvolutionForwardAlgorithmEx(cx->cudnn, s->xd, x, s->wd, w, s->cd, s->yd, y,
												   CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf,
												   cx->workspace, cx->workspace_cap) != CUDNN_STATUS_SUCCESS)
		{
			got = 0;
			OX_TRY(oxc_dnn_check(cudnnGetConvolutionForwardAlgorithm_v7(cx->cudnn, s->xd, s->wd, s->cd, s->yd,
																		 CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got,
																		 perf),
								 "cudnnGetConvolutionForwardAlgorithm_v7", oc->st));
		}
		for (int i = 0; i < got && choice < 0; i++)
			if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= cx->workspace_cap &&
				(cx->fp16 || perf[i].mathType != CUDNN_TENSOR_OP_MATH))
				choice = i;
		if (choice < 0)
			return ox_fail(oc->st, OX_UNSUPPORTED, "cuDNN has no algorithm for this Conv");
	}
	s->algo = perf[choice].algo;
	s->ws = perf[choice].memory;
	OX_TRY(oxc_dnn_check(cudnnSetConvolutionMathType(s->cd, perf[choice].mathType), "cudnnSetConvolutionMathType",
						 oc->st));
	s->ready = true;
	return OX_OK;
}

static ox_code
run_conv(ox_cuda_op_ctx *oc)
{
	conv_state *s = *oc->state;
	ox_dval    *x,
			   *w,
			   *b = NULL,
			   *z = NULL,
			   *y;
	int			sp_rank;
	int64_t		x4[4],
				w4[4],
				y4[4],
				pb[2],
				pe[2],
				stride[2],
				dil[2];
	oxc_unary	act = OXC_U_IDENTITY;
	float		p0 = 0,
				p1 = 0,
				one = 1.0f,
				zero = 0.0f;
	const void *xin;
	void	   *pad_buf = NULL;
	size_t		pad_cap = 0;
	ox_code		rc;

	OX_TRY(oxc_in(oc, 0, OX_FLOAT, &x));
	OX_TRY(oxc_in(oc, 1, OX_FLOAT, &w));
	if (oc->n_in > 2 && oc->in[2])
		OX_TRY(oxc_in(oc, 2, OX_FLOAT, &b));
	if (oc->n_in > 3 && oc->in[3])
		OX_TRY(oxc_in(oc, 3, OX_FLOAT, &z));
	if (strcmp(oc->node->domain, "com.microsoft") == 0 && !oxc_fused_activation(oc->node, &act, &p0, &p1))
		return ox_fail(oc->st, OX_UNSUPPORTED, "unsupported FusedConv activation");
	if (x->rank != w->rank || (x->rank != 3 && x->rank != 4))
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Conv on CUDA takes 3-D or 4-D input and weight of the same rank");
	sp_rank = x->rank - 2;
	x4[0] = x->dims[0];
	x4[1] = x->dims[1];
	x4[2] = sp_rank == 2 ? x->dims[2] : 1;
	x4[3] = x->dims[x->rank - 1];
	w4[0] = w->dims[0];
	w4[1] = w->dims[1];
	w4[2] = sp_rank == 2 ? w->dims[2] : 1;
	w4[3] = w->dims[w->rank - 1];
	OX_TRY(conv_geometry(oc, x4, w4, sp_rank, y4, pb, pe, stride, dil));
	if (b && oxc_numel(b) != w4[0])
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Conv bias must have %lld elements", (long long) w4[0]);
	{
		int64_t		yd[4] = {y4[0], y4[1], y4[2], y4[3]};

		if (sp_rank == 1)
			yd[2] = y4[3];
		OX_TRY(oxc_out(oc, 0, OX_FLOAT, x->rank, yd, &y));
		if (z && oxc_numel(z) != oxc_numel(y))
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "FusedConv Z must have the output's shape");
	}
	if (oxc_numel(y) == 0)
		return OX_OK;
	if (!s)
	{
		s = calloc(1, sizeof(conv_state));
		if (!s)
			return ox_fail(oc->st, OX_OUT_OF_MEMORY, "could not allocate Conv state");
		*oc->state = s;
	}
	/* asymmetric pads: copy into a zero-padded input */
	xin = x->d;
	{
		bool		asym = pb[0] != pe[0] || pb[1] != pe[1];

		if (asym)
		{
			oxc_strided g;
			int64_t		pdims[4] = {x4[0], x4[1], x4[2] + pb[0] + pe[0], x4[3] + pb[1] + pe[1]};
			size_t		bytes = sizeof(float) * (size_t) ox_shape_numel(4, pdims);

			OX_TRY(oxc_alloc(oc->cx, bytes, &pad_buf, &pad_cap, oc->st));
			rc = oxc_cuda_check(cudaMemsetAsync(pad_buf, 0, bytes, oc->cx->stream), "cudaMemsetAsync", oc->st);
			memset(&g, 0, sizeof(g));
			g.rank = 4;
			memcpy(g.dims, x4, sizeof(x4));
			g.n = ox_shape_numel(4, x4);
			g.src_strides[3] = 1;
			g.src_strides[2] = x4[3];
			g.src_strides[1] = x4[2] * x4[3];
			g.src_strides[0] = x4[1] * x4[2] * x4[3];
			g.dst_strides[3] = 1;
			g.dst_strides[2] = pdims[3];
			g.dst_strides[1] = pdims[2] * pdims[3];
			g.dst_strides[0] = pdims[1] * pdims[2] * pdims[3];
			g.dst_offset = pb[0] * pdims[3] + pb[1];
			if (rc == OX_OK)
				rc = oxc_cuda_check(oxc_launch_strided_copy(oc->cx->stream, &g, x->d, pad_buf, 4), "Conv padding",
									oc->st);
			if (rc != OX_OK)
			{
				oxc_release(oc->cx, pad_buf, pad_cap);
				return rc;
			}
			memcpy(s->pdims, pdims, sizeof(pdims));
			xin = pad_buf;
		}
		if (!s->ready || s->rank != 4 || memcmp(s->xdims, x4, sizeof(x4)) != 0 || s->explicit_pad != asym ||
			memcmp(s->pad_begin, pb, sizeof(pb)) != 0 || memcmp(s->pad_end, pe, sizeof(pe)) != 0)
		{
			s->ready = false;
			s->explicit_pad = asym;
			memcpy(s->pad_begin, pb, sizeof(pb));
			memcpy(s->pad_end, pe, sizeof(pe));
			rc = setup(oc, s, x4, w4, y4, stride, dil, xin, w->d, y->d);
			if (rc != OX_OK)
			{
				oxc_release(oc->cx, pad_buf, pad_cap);
				return rc;
			}
			s->rank = 4;
			memcpy(s->xdims, x4, sizeof(x4));
		}
	}
	rc = oxc_workspace(oc->cx, s->ws, oc->st);
	if (rc == OX_OK)
		rc = oxc_dnn_check(cudnnConvolutionForward(oc->cx->cudnn, &one, s->xd, xin, s->wd, w->d, s->cd, s->algo,
												   oc->cx->workspace, s->ws, &zero, s->yd, y->d),
						   "cudnnConvolutionForward", oc->st);
	oxc_release(oc->cx, pad_buf, pad_cap);
	OX_TRY(rc);
	if (b || z || act != OXC_U_IDENTITY)
		return oxc_cuda_check(oxc_launch_bias_act(oc->cx->stream, y->d, b ? b->d : NULL, z ? z->d : NULL,
												  oxc_numel(y), y4[1], y4[2] * y4[3], act, p0, p1),
							  "Conv epilogue", oc->st);
	return OX_OK;
}

const ox_cuda_op ox_cuda_ops_conv[] = {
	{"", "Conv", 1, sup_conv, run_conv, free_conv, 0},
	{"com.microsoft", "FusedConv", 1, sup_conv, run_conv, free_conv, 0},
};
const int	ox_cuda_ops_conv_count = sizeof(ox_cuda_ops_conv) / sizeof(ox_cuda_ops_conv[0]);
