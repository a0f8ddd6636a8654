/*
 * qgemm_ops.c
 *	  Quantized operators of the com.microsoft domain, with onnxruntime's
 *	  semantics, that the QDQ fusion pass (model/passes/qdq_fuse.c) turns
 *	  QuantizeLinear/DequantizeLinear patterns into, so that a QDQ model
 *	  runs in int8 instead of through float round trips:
 *
 *	  QGemm(A, a_scale, a_zp, B, b_scale, b_zp, [C], [y_scale], [y_zp])
 *		  alpha * A * op(B) + C (C int32, already at the scale alpha *
 *		  a_scale * b_scale); requantized when y_scale is given, float
 *		  otherwise.  A may have leading batch dimensions (transA = 0).
 *	  DynamicQuantizeMatMul(A, B, b_scale, [b_zp], [bias])
 *		  A quantized per tensor to uint8 on the fly, times int8 B, scaled
 *		  back to float, plus bias.
 *	  com.onnx_pg DynamicQuantizeMatMulRows(A, B, b_scale, [b_zp], [bias])
 *		  the same with one scale and zero point per row of A (attribute
 *		  min_scale): the quantizer's per-row chain of standard operators
 *		  (model/quantize_rewrite.c), fused.
 *	  QLinearAdd(A, a_scale, a_zp, B, b_scale, b_zp, c_scale, [c_zp])
 *	  QLinearGlobalAveragePool(X, x_scale, x_zp, y_scale, [y_zp])
 *
 *	  Constant weights are packed once per session (prepare).
 */
#include "kernels/cpu/nn.h"
#include "kernels/cpu/qgemm.h"

#include <immintrin.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- shared ----------------------------------------------------------------- */

typedef struct qop_state
{
	int32_t    *col_sums;		/* DynamicQuantizeMatMulRows: sum_k (B - b_zp) per column */
	bool		trans_b;
	float		alpha;
	ox_qgemm_weights packed;	/* when B (and its zero point) are constants */
	bool		have_packed;
	const void *zp_src;
} qop_state;

void
ox_qop_free(void *state)
{
	qop_state  *s = state;

	if (!s)
		return;
	ox_qgemm_weights_free(&s->packed);
	free(s->col_sums);
	free(s);
}

static const ox_tensor *
const_input(const ox_prepare_ctx *pc, int i, bool *present)
{
	const ox_node *n = pc->node;

	*present = i < n->n_inputs && n->inputs[i] >= 0;
	if (!*present || !pc->graph || n->inputs[i] >= pc->graph->n_values)
		return NULL;
	return pc->graph->values[n->inputs[i]].init;
}

/* B [K, N] (or [N, K] transposed) with its zero point, packed for the rows product */
static ox_code
pack_b(const ox_tensor *b, const ox_tensor *bzp, bool trans_b, ox_qgemm_weights *w, ox_status *st)
{
	int64_t		k = trans_b ? b->dims[1] : b->dims[0];
	int64_t		n = trans_b ? b->dims[0] : b->dims[1];

	return ox_qgemm_pack(w, OX_QG_VEC, n, k, b->data, b->dtype, trans_b ? k : 1, trans_b ? 1 : n,
						 bzp ? bzp->data : NULL, bzp ? ox_tensor_numel(bzp) : 0, st);
}

static bool
b_packable(const ox_tensor *b, const ox_tensor *bzp, bool trans_b)
{
	int64_t		n;

	if (!b || !nn_is_quant8(b->dtype) || b->rank != 2)
		return false;
	n = trans_b ? b->dims[0] : b->dims[1];
	return !bzp || (bzp->dtype == b->dtype && (ox_tensor_numel(bzp) == 1 || ox_tensor_numel(bzp) == n));
}

static ox_code
prepare_common(ox_prepare_ctx *pc, int bi, int zi, bool trans_b, float alpha)
{
	qop_state  *s = calloc(1, sizeof(*s));
	bool		has_b,
				has_zp;
	const ox_tensor *b,
			   *bzp;

	if (!s)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s: could not allocate state", pc->node->op_type);
	pc->state = s;
	s->trans_b = trans_b;
	s->alpha = alpha;
	b = const_input(pc, bi, &has_b);
	bzp = const_input(pc, zi, &has_zp);
	if (!b || (has_zp && !bzp) || !b_packable(b, bzp, trans_b))
		return OX_OK;			/* computed operands: packed on each run */
	OX_TRY(pack_b(b, bzp, trans_b, &s->packed, pc->st));
	s->have_packed = true;
	s->zp_src = bzp ? bzp->data : NULL;
	return OX_OK;
}

/* a scale or zero point: one value, or n values when allowed */
static ox_code
check_vec(const char *op, const char *name, const ox_tensor *t, int64_t n, bool is_float,
		  ox_dtype qt, ox_status *st)
{
	char		buf[NN_SHAPE_LEN];
	int64_t		cnt;

	if (!t)
		return OX_OK;
	if (is_float ? t->dtype != OX_FLOAT : t->dtype != qt)
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: %s has type %s, expected %s", op, name,
					   ox_dtype_name(t->dtype), is_float ? "float" : ox_dtype_name(qt));
	cnt = ox_tensor_numel(t);
	if (cnt == 1 || (n > 1 && cnt == n))
		return OX_OK;
	return ox_fail(st, OX_INVALID_ARGUMENT, "%s: %s has shape %s, expected one value%s", op, name,
				   nn_shape(t, buf), n > 1 ? " or one per output column" : "");
}

static ox_code
bad_scale(ox_status *st, const char *op, const char *name, int64_t n, int64_t i, double v,
		  bool divisor)
{
	char		idx[32] = "";

	if (n > 1)
		snprintf(idx, sizeof(idx), "[%lld]", (long long) i);
	return ox_fail(st, OX_INVALID_ARGUMENT, "%s: %s%s is %g, expected a finite%s value", op, name,
				   idx, v, divisor ? " non-zero" : "");
}

ox_code
ox_quant_check_scales(ox_status *st, const char *op, const char *name, const float *s, int64_t n,
					  bool divisor)
{
	for (int64_t i = 0; i < n; i++)
		if (!isfinite(s[i]) || (divisor && s[i] == 0.0f))
			return bad_scale(st, op, name, n, i, s[i], divisor);
	return OX_OK;
}

ox_code
ox_quant_check_scale_tensor(ox_status *st, const char *op, const char *name, const ox_tensor *s,
							bool divisor)
{
	int64_t		n;

	if (!s)
		return OX_OK;
	n = ox_tensor_numel(s);
	if (s->dtype == OX_FLOAT)
		return ox_quant_check_scales(st, op, name, s->data, n, divisor);
	for (int64_t i = 0; i < n; i++)
	{
		double		v = ox_tensor_get_double(s, i);

		if (!isfinite(v) || (divisor && v == 0.0))
			return bad_scale(st, op, name, n, i, v, divisor);
	}
	return OX_OK;
}

ox_code
ox_quant_check_factors(ox_status *st, const char *op, const float *f, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (!isfinite(f[i]))
			return ox_fail(st, OX_INVALID_ARGUMENT,
						   "%s: the input and output scales give a requantization factor of %g, "
						   "which is not a finite float", op, f[i]);
	return OX_OK;
}

static inline float
vec_at(const ox_tensor *t, int64_t i)
{
	return ((const float *) t->data)[ox_tensor_numel(t) == 1 ? 0 : i];
}

/*
 * The product of A (quantized, [..., K]) with B, through the packed
 * weights, into y (allocated here with A's leading dims and N columns).
 */
static ox_code
run_rows(ox_kernel_ctx *ctx, const char *op, const qop_state *s, const void *a, ox_dtype adt,
		 const int64_t *a_dims, int a_rank, int32_t azp, const ox_tensor *b, const ox_tensor *bzp,
		 ox_qgemm_epi *ep, ox_dtype ydt, ox_tensor **yout)
{
	ox_qgemm_weights tmp;
	const ox_qgemm_weights *w;
	int64_t		k = s->trans_b ? b->dims[1] : b->dims[0];
	int64_t		n = s->trans_b ? b->dims[0] : b->dims[1];
	int64_t		dims[OX_MAX_RANK];
	int64_t		rows;
	char		sa[NN_SHAPE_LEN],
				sb[NN_SHAPE_LEN];
	ox_tensor  *y;
	ox_code		rc;

	if (a_rank < 1 || a_dims[a_rank - 1] != k)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: A has shape %s but B has shape %s%s", op,
					   ox_shape_str(a_rank, a_dims, sa, sizeof(sa)), nn_shape(b, sb),
					   s->trans_b ? " (transposed)" : "");
	memcpy(dims, a_dims, sizeof(int64_t) * (size_t) a_rank);
	dims[a_rank - 1] = n;
	if (!(y = ox_out_tensor(ctx, 0, ydt, a_rank, dims)))
		return ctx->st->code;
	*yout = y;
	rows = ox_shape_numel(a_rank - 1, a_dims);
	if (rows == 0 || n == 0)
		return OX_OK;
	if (s->have_packed && b->data == s->packed.src && (bzp ? bzp->data : NULL) == s->zp_src)
		w = &s->packed;
	else
	{
		if (!b_packable(b, bzp, s->trans_b))
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: B must be a 2-D uint8/int8 matrix with a zero point per tensor or per column",
						   op);
		OX_TRY(pack_b(b, bzp, s->trans_b, &tmp, ctx->st));
		w = &tmp;
	}
	rc = ox_qgemm_rows(ctx, rows, a, adt, k, azp, w, ep, y->data, n, ctx->st);
	if (w == &tmp)
		ox_qgemm_weights_free(&tmp);
	return rc;
}

/* ---- QGemm -------------------------------------------------------------------- */

ox_code
ox_qop_qgemm_prepare(ox_prepare_ctx *pc)
{
	if (ox_attr_int(pc->node, "transA", 0) != 0)
		return ox_fail(pc->st, OX_UNSUPPORTED, "QGemm: transA = 1 is not supported");
	return prepare_common(pc, 3, 5, ox_attr_int(pc->node, "transB", 0) != 0,
						  ox_attr_float(pc->node, "alpha", 1.0f));
}

ox_code
ox_qop_qgemm_run(ox_kernel_ctx *ctx)
{
	const char *op = "QGemm";
	const qop_state *s = ctx->state;
	const ox_tensor *a = ox_in_tensor(ctx, 0);
	const ox_tensor *as = ox_in_tensor(ctx, 1);
	const ox_tensor *azp = ox_in_tensor(ctx, 2);
	const ox_tensor *b = ox_in_tensor(ctx, 3);
	const ox_tensor *bs = ox_in_tensor(ctx, 4);
	const ox_tensor *bzp = ox_in_tensor(ctx, 5);
	const ox_tensor *c = ox_in_tensor(ctx, 6);
	const ox_tensor *ys = ox_in_tensor(ctx, 7);
	const ox_tensor *yzp = ox_in_tensor(ctx, 8);
	ox_qgemm_epi ep;
	ox_dtype	ydt;
	int64_t		n;
	float	   *mult;
	int32_t    *cb = NULL;
	ox_tensor  *y;
	ox_code		rc;

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "%s: not prepared", op);
	if (!a || !as || !b || !bs)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: A, a_scale, B and b_scale are required", op);
	if (!nn_is_quant8(a->dtype) || !nn_is_quant8(b->dtype) || b->rank != 2)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: A is %s and B is %s of rank %d, expected uint8/int8 with a 2-D B",
					   op, ox_dtype_name(a->dtype), ox_dtype_name(b->dtype), b->rank);
	n = s->trans_b ? b->dims[0] : b->dims[1];
	OX_TRY(check_vec(op, "a_scale", as, 1, true, OX_FLOAT, ctx->st));
	OX_TRY(check_vec(op, "a_zero_point", azp, 1, false, a->dtype, ctx->st));
	OX_TRY(check_vec(op, "b_scale", bs, n, true, OX_FLOAT, ctx->st));
	OX_TRY(check_vec(op, "b_zero_point", bzp, n, false, b->dtype, ctx->st));
	OX_TRY(ox_quant_check_scale_tensor(ctx->st, op, "a_scale", as, false));
	OX_TRY(ox_quant_check_scale_tensor(ctx->st, op, "b_scale", bs, false));
	if (c && (c->dtype != OX_INT32 || (ox_tensor_numel(c) != 1 && ox_tensor_numel(c) != n)))
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: C must be int32 with one value or one per column", op);
	if (ys)
	{
		ydt = yzp ? yzp->dtype : OX_UINT8;
		if (!nn_is_quant8(ydt))
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: y_zero_point has type %s", op, ox_dtype_name(ydt));
		OX_TRY(check_vec(op, "y_scale", ys, 1, true, OX_FLOAT, ctx->st));
		OX_TRY(check_vec(op, "y_zero_point", yzp, 1, false, ydt, ctx->st));
		OX_TRY(ox_quant_check_scale_tensor(ctx->st, op, "y_scale", ys, true));
	}
	else
		ydt = OX_FLOAT;

	mult = malloc(sizeof(float) * (size_t) (n + 1));
	if (c && ox_tensor_numel(c) == 1 && n > 1)
		cb = malloc(sizeof(int32_t) * (size_t) n);
	if (!mult || (c && ox_tensor_numel(c) == 1 && n > 1 && !cb))
	{
		free(mult);
		free(cb);
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: out of memory", op);
	}
	{
		double		base = (double) s->alpha * vec_at(as, 0);
		double		inv = ys ? 1.0 / vec_at(ys, 0) : 1.0;

		for (int64_t j = 0; j < n; j++)
			mult[j] = (float) (base * vec_at(bs, j) * inv);
	}
	if (ys && ox_quant_check_factors(ctx->st, op, mult, n) != OX_OK)
	{
		free(mult);
		free(cb);
		return ctx->st->code;
	}
	if (cb)
		for (int64_t j = 0; j < n; j++)
			cb[j] = *(const int32_t *) c->data;
	memset(&ep, 0, sizeof(ep));
	ep.kind = ys ? OX_QG_OUT_Q8 : OX_QG_OUT_F32;
	ep.q_dtype = ydt;
	ep.mult = mult;
	ep.ibias = cb ? cb : (c ? (const int32_t *) c->data : NULL);
	ep.y_zp = yzp ? (int32_t) nn_quant8_at(yzp->data, yzp->dtype, 0) : 0;
	rc = run_rows(ctx, op, s, a->data, a->dtype, a->dims, a->rank,
				  azp ? (int32_t) nn_quant8_at(azp->data, azp->dtype, 0) : 0, b, bzp, &ep, ydt, &y);
	free(mult);
	free(cb);
	return rc;
}

/* ---- DynamicQuantizeMatMul -------------------------------------------------------- */

/* the operands of both dynamic kernels: float A, 2-D int8 B, scales, zero points and bias per column */
static ox_code
check_dynamic_args(ox_kernel_ctx *ctx, const char *op, const qop_state *s, const ox_tensor *a,
				   const ox_tensor *b, const ox_tensor *bs, const ox_tensor *bzp, const ox_tensor *bias)
{
	int64_t		n;

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "%s: not prepared", op);
	if (!a || !b || !bs)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: A, B and b_scale are required", op);
	if (a->dtype != OX_FLOAT || !nn_is_quant8(b->dtype) || b->rank != 2)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: A is %s and B is %s of rank %d, expected float A and a 2-D uint8/int8 B",
					   op, ox_dtype_name(a->dtype), ox_dtype_name(b->dtype), b->rank);
	n = b->dims[1];
	OX_TRY(check_vec(op, "b_scale", bs, n, true, OX_FLOAT, ctx->st));
	OX_TRY(check_vec(op, "b_zero_point", bzp, n, false, b->dtype, ctx->st));
	OX_TRY(ox_quant_check_scale_tensor(ctx->st, op, "b_scale", bs, false));
	if (bias && (bias->dtype != OX_FLOAT || ox_tensor_numel(bias) != n))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: bias must be float with one value per column", op);
	return OX_OK;
}

ox_code
ox_qop_dqmatmul_prepare(ox_prepare_ctx *pc)
{
	return prepare_common(pc, 1, 3, false, 1.0f);
}

ox_code
ox_qop_dqmatmul_run(ox_kernel_ctx *ctx)
{
	const char *op = "DynamicQuantizeMatMul";
	const qop_state *s = ctx->state;
	const ox_tensor *a = ox_in_tensor(ctx, 0);
	const ox_tensor *b = ox_in_tensor(ctx, 1);
	const ox_tensor *bs = ox_in_tensor(ctx, 2);
	const ox_tensor *bzp = ox_in_tensor(ctx, 3);
	const ox_tensor *bias = ox_in_tensor(ctx, 4);
	ox_qgemm_epi ep;
	int64_t		n,
				na;
	float	   *mult;
	uint8_t    *aq;
	float		ascale;
	uint8_t		azp;
	ox_tensor  *y;
	ox_code		rc;

	OX_TRY(check_dynamic_args(ctx, op, s, a, b, bs, bzp, bias));
	n = b->dims[1];
	na = ox_tensor_numel(a);
	aq = nn_scratch(na > 0 ? na : 1, 1, ctx->st, op);
	mult = aq ? malloc(sizeof(float) * (size_t) (n + 1)) : NULL;
	if (!mult)
	{
		ox_aligned_free(aq);
		return aq ? ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: out of memory", op) : ctx->st->code;
	}
	ox_qgemm_dynamic_quantize(a->data, na, aq, &ascale, &azp);
	for (int64_t j = 0; j < n; j++)
		mult[j] = ascale * vec_at(bs, j);
	memset(&ep, 0, sizeof(ep));
	ep.kind = OX_QG_OUT_F32;
	ep.mult = mult;
	ep.bias = bias ? bias->data : NULL;
	rc = run_rows(ctx, op, s, aq, OX_UINT8, a->dims, a->rank, azp, b, bzp, &ep, OX_FLOAT, &y);
	ox_aligned_free(aq);
	free(mult);
	return rc;
}

/* ---- DynamicQuantizeMatMulRows ---------------------------------------------------- */

ox_code
ox_qop_dqmatmul_rows_prepare(ox_prepare_ctx *pc)
{
	qop_state  *s;
	bool		present;
	const ox_tensor *b,
			   *bzp;

	OX_TRY(prepare_common(pc, 1, 3, false, 1.0f));
	s = pc->state;
	if (!s->have_packed)
		return OX_OK;
	b = const_input(pc, 1, &present);
	bzp = const_input(pc, 3, &present);
	if (!(s->col_sums = malloc(sizeof(int32_t) * (size_t) (b->dims[1] + 1))))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "DynamicQuantizeMatMulRows: could not allocate state");
	ox_int8_column_sums(b, bzp, s->col_sums);
	return OX_OK;
}

ox_code
ox_qop_dqmatmul_rows_run(ox_kernel_ctx *ctx)
{
	const char *op = "DynamicQuantizeMatMulRows";
	const qop_state *s = ctx->state;
	const ox_tensor *a = ox_in_tensor(ctx, 0);
	const ox_tensor *b = ox_in_tensor(ctx, 1);
	const ox_tensor *bs = ox_in_tensor(ctx, 2);
	const ox_tensor *bzp = ox_in_tensor(ctx, 3);
	const ox_tensor *bias = ox_in_tensor(ctx, 4);
	float		min_scale = ox_attr_float(ctx->node, "min_scale", 0.0f);
	ox_qgemm_epi ep;
	int64_t		n,
				k,
				rows;
	uint8_t    *aq = NULL;
	float	   *scales = NULL;
	int32_t    *zps = NULL,
			   *sums = NULL;
	ox_tensor  *y;
	ox_code		rc;

	OX_TRY(check_dynamic_args(ctx, op, s, a, b, bs, bzp, bias));
	if (a->rank < 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: A is a scalar, expected rows", op);
	if (!(min_scale > 0.0f) || !isfinite(min_scale))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: min_scale is %g, expected a positive finite value",
					   op, min_scale);
	k = b->dims[0];
	n = b->dims[1];
	/* the int32 products, scaled back below once each row's parameters are known */
	memset(&ep, 0, sizeof(ep));
	ep.kind = OX_QG_OUT_I32;
	if (a->dims[a->rank - 1] != k)
		/* run_rows words the error */
		return run_rows(ctx, op, s, NULL, OX_UINT8, a->dims, a->rank, 0, b, bzp, &ep, OX_FLOAT, &y);
	rows = ox_shape_numel(a->rank - 1, a->dims);
	if (!(aq = nn_scratch(rows * k > 0 ? rows * k : 1, 1, ctx->st, op)) ||
		!(scales = ox_workspace_alloc(sizeof(float) * (size_t) (rows + 1), ctx->st, op)) ||
		!(zps = ox_workspace_alloc(sizeof(int32_t) * (size_t) (rows + 1), ctx->st, op)) ||
		(!(s->col_sums && b->data == s->packed.src && (bzp ? bzp->data : NULL) == s->zp_src) &&
		 !(sums = ox_workspace_alloc(sizeof(int32_t) * (size_t) (n + 1), ctx->st, op))))
	{
		rc = ctx->st->code ? ctx->st->code : ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: out of memory", op);
		goto done;
	}
	ox_qgemm_quantize_rows(a->data, rows, k, aq, scales, zps, min_scale);
	rc = run_rows(ctx, op, s, aq, OX_UINT8, a->dims, a->rank, 0, b, bzp, &ep, OX_FLOAT, &y);
	if (rc != OX_OK || rows == 0 || n == 0)
		goto done;
	if (sums)
		ox_int8_column_sums(b, bzp, sums);
	ox_qgemm_rows_scale_back(y->data, rows, n, scales, zps, sums ? sums : s->col_sums, bs->data,
							 ox_tensor_numel(bs), bias ? bias->data : NULL);
done:
	ox_aligned_free(aq);
	free(scales);
	free(zps);
	free(sums);
	return rc;
}

/* ---- QLinearAdd ----------------------------------------------------------------- */

/* y = saturate(round(a * ka + b * kb + k0)): the dequantized sum requantized */
#define QADD_LOOP(TA, TB, TY, LO, HI) \
	for (int64_t i = 0; i < n; i++) \
	{ \
		float		f = nearbyintf((float) ((const TA *) ad)[ia] * ka + \
								   (float) ((const TB *) bd)[ib] * kb + k0); \
		((TY *) yd)[i] = (TY) (f < LO ? LO : (f > HI ? HI : f)); \
		QADD_STEP; \
	}

/*
 * The common case, equal shapes: one loop per element type, compiled for
 * AVX-512 and AVX2 too so that the rounding and conversions vectorize.
 */
#define QADD_SAME(NAME, T, LO, HI) \
static inline __attribute__((always_inline)) void \
NAME##_body(const T *restrict a, const T *restrict b, T *restrict y, int64_t n, float ka, \
			float kb, float k0) \
{ \
	for (int64_t i = 0; i < n; i++) \
	{ \
		float		f = nearbyintf((float) a[i] * ka + (float) b[i] * kb + k0); \
		y[i] = (T) (int32_t) (f < LO ? LO : (f > HI ? HI : f)); \
	} \
} \
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void \
NAME##_avx512(const T *a, const T *b, T *y, int64_t n, float ka, float kb, float k0) \
{ \
	__m512		vka = _mm512_set1_ps(ka), vkb = _mm512_set1_ps(kb), vk0 = _mm512_set1_ps(k0); \
	__m512		lo = _mm512_set1_ps(LO), hi = _mm512_set1_ps(HI); \
	int64_t		i = 0; \
	/* clamped in float first, so the conversion never overflows; it rounds \
	 * to nearest even (MXCSR), as nearbyintf does in the body below */ \
	for (; i + 16 <= n; i += 16) \
	{ \
		__m512		fa = _mm512_cvtepi32_ps(WIDEN(_mm_loadu_si128((const __m128i *) (a + i)))); \
		__m512		fb = _mm512_cvtepi32_ps(WIDEN(_mm_loadu_si128((const __m128i *) (b + i)))); \
		__m512		f = _mm512_add_ps(_mm512_fmadd_ps(fa, vka, _mm512_mul_ps(fb, vkb)), vk0); \
		f = _mm512_min_ps(_mm512_max_ps(f, lo), hi); \
		_mm_storeu_si128((__m128i *) (y + i), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(f))); \
	} \
	NAME##_body(a + i, b + i, y + i, n - i, ka, kb, k0); \
} \
__attribute__((target("avx2,fma"))) static void \
NAME##_avx2(const T *a, const T *b, T *y, int64_t n, float ka, float kb, float k0) \
{ \
	NAME##_body(a, b, y, n, ka, kb, k0); \
} \
static void \
NAME(const T *a, const T *b, T *y, int64_t n, float ka, float kb, float k0) \
{ \
	static int	isa = -1; \
	if (isa < 0) \
	{ \
		__builtin_cpu_init(); \
		isa = __builtin_cpu_supports("avx512bw") ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0; \
	} \
	if (isa == 2) \
		NAME##_avx512(a, b, y, n, ka, kb, k0); \
	else if (isa == 1) \
		NAME##_avx2(a, b, y, n, ka, kb, k0); \
	else \
		NAME##_body(a, b, y, n, ka, kb, k0); \
}

#define WIDEN _mm512_cvtepu8_epi32
QADD_SAME(qadd_same_u8, uint8_t, 0.0f, 255.0f)
#undef WIDEN
#define WIDEN _mm512_cvtepi8_epi32
QADD_SAME(qadd_same_i8, int8_t, -128.0f, 127.0f)
#undef WIDEN

typedef struct bcast_iter
{
	int			rank;
	int64_t		dims[OX_MAX_RANK];
	int64_t		sa[OX_MAX_RANK];	/* strides of A and B in the output's index space */
	int64_t		sb[OX_MAX_RANK];
	int64_t		idx[OX_MAX_RANK];
} bcast_iter;

static bool
bcast_setup(const ox_tensor *a, const ox_tensor *b, bcast_iter *it)
{
	int			r = a->rank > b->rank ? a->rank : b->rank;
	int64_t		stride_a = 1,
				stride_b = 1;

	memset(it, 0, sizeof(*it));
	it->rank = r;
	for (int i = r - 1; i >= 0; i--)
	{
		int			ai = i - (r - a->rank),
					bi = i - (r - b->rank);
		int64_t		da = ai >= 0 ? a->dims[ai] : 1,
					db = bi >= 0 ? b->dims[bi] : 1;

		if (da != db && da != 1 && db != 1)
			return false;
		it->dims[i] = da > db ? da : db;
		it->sa[i] = da == 1 ? 0 : stride_a;
		it->sb[i] = db == 1 ? 0 : stride_b;
		stride_a *= da;
		stride_b *= db;
	}
	return true;
}

static inline void
bcast_next(bcast_iter *it, int64_t *ia, int64_t *ib)
{
	for (int i = it->rank - 1; i >= 0; i--)
	{
		it->idx[i]++;
		*ia += it->sa[i];
		*ib += it->sb[i];
		if (it->idx[i] < it->dims[i])
			return;
		*ia -= it->sa[i] * it->dims[i];
		*ib -= it->sb[i] * it->dims[i];
		it->idx[i] = 0;
	}
}

ox_code
ox_qop_qlinear_add_run(ox_kernel_ctx *ctx)
{
	const char *op = "QLinearAdd";
	const ox_tensor *a = ox_in_tensor(ctx, 0);
	const ox_tensor *as = ox_in_tensor(ctx, 1);
	const ox_tensor *azp = ox_in_tensor(ctx, 2);
	const ox_tensor *b = ox_in_tensor(ctx, 3);
	const ox_tensor *bs = ox_in_tensor(ctx, 4);
	const ox_tensor *bzp = ox_in_tensor(ctx, 5);
	const ox_tensor *cs = ox_in_tensor(ctx, 6);
	const ox_tensor *czp = ox_in_tensor(ctx, 7);
	bcast_iter	it;
	ox_dtype	ydt;
	ox_tensor  *y;
	float		ka,
				kb,
				k0;
	int64_t		n,
				ia = 0,
				ib = 0;
	const void *ad,
			   *bd;
	void	   *yd;
	bool		same;
	char		sa[NN_SHAPE_LEN],
				sb[NN_SHAPE_LEN];

	if (!a || !as || !b || !bs || !cs)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: A, A_scale, B, B_scale and C_scale are required", op);
	if (!nn_is_quant8(a->dtype) || a->dtype != b->dtype)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: A is %s and B is %s, expected the same uint8/int8 type",
					   op, ox_dtype_name(a->dtype), ox_dtype_name(b->dtype));
	OX_TRY(check_vec(op, "A_scale", as, 1, true, OX_FLOAT, ctx->st));
	OX_TRY(check_vec(op, "B_scale", bs, 1, true, OX_FLOAT, ctx->st));
	OX_TRY(check_vec(op, "C_scale", cs, 1, true, OX_FLOAT, ctx->st));
	OX_TRY(check_vec(op, "A_zero_point", azp, 1, false, a->dtype, ctx->st));
	OX_TRY(check_vec(op, "B_zero_point", bzp, 1, false, b->dtype, ctx->st));
	ydt = a->dtype;
	OX_TRY(check_vec(op, "C_zero_point", czp, 1, false, a->dtype, ctx->st));
	OX_TRY(ox_quant_check_scale_tensor(ctx->st, op, "A_scale", as, false));
	OX_TRY(ox_quant_check_scale_tensor(ctx->st, op, "B_scale", bs, false));
	OX_TRY(ox_quant_check_scale_tensor(ctx->st, op, "C_scale", cs, true));
	if (!bcast_setup(a, b, &it))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: shapes %s and %s do not broadcast", op,
					   nn_shape(a, sa), nn_shape(b, sb));
	if (!(y = ox_out_tensor(ctx, 0, ydt, it.rank, it.dims)))
		return ctx->st->code;
	{
		float		fa = vec_at(as, 0),
					fb = vec_at(bs, 0),
					fc = vec_at(cs, 0);
		float		za = azp ? (float) nn_quant8_at(azp->data, azp->dtype, 0) : 0.0f,
					zb = bzp ? (float) nn_quant8_at(bzp->data, bzp->dtype, 0) : 0.0f,
					zc = czp ? (float) nn_quant8_at(czp->data, czp->dtype, 0) : 0.0f;

		float		k[3];

		ka = k[0] = fa / fc;
		kb = k[1] = fb / fc;
		k0 = k[2] = zc - (fa * za + fb * zb) / fc;
		OX_TRY(ox_quant_check_factors(ctx->st, op, k, 3));
	}
	n = ox_tensor_numel(y);
	ad = a->data;
	bd = b->data;
	yd = y->data;
	same = ox_shape_equal(a->rank, a->dims, b->rank, b->dims);
	if (same && ydt == a->dtype)
	{
		if (a->dtype == OX_UINT8)
			qadd_same_u8(ad, bd, yd, n, ka, kb, k0);
		else
			qadd_same_i8(ad, bd, yd, n, ka, kb, k0);
	}
	else
	{
#define QADD_STEP bcast_next(&it, &ia, &ib)
		if (a->dtype == OX_UINT8)
			QADD_LOOP(uint8_t, uint8_t, uint8_t, 0.0f, 255.0f)
		else
			QADD_LOOP(int8_t, int8_t, int8_t, -128.0f, 127.0f)
#undef QADD_STEP
	}
	return OX_OK;
}

/* ---- QLinearGlobalAveragePool ------------------------------------------------------- */

ox_code
ox_qop_qlinear_gap_run(ox_kernel_ctx *ctx)
{
	const char *op = "QLinearGlobalAveragePool";
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *xs = ox_in_tensor(ctx, 1);
	const ox_tensor *xzp = ox_in_tensor(ctx, 2);
	const ox_tensor *ys = ox_in_tensor(ctx, 3);
	const ox_tensor *yzp = ox_in_tensor(ctx, 4);
	bool		last = ox_attr_int(ctx->node, "channels_last", 0) != 0;
	int64_t		dims[OX_MAX_RANK];
	int64_t		nb,
				c,
				sp;
	float		k,
				k0,
				lo,
				hi;
	ox_dtype	ydt;
	ox_tensor  *y;
	char		buf[NN_SHAPE_LEN];

	if (!x || !xs || !ys)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: X, x_scale and y_scale are required", op);
	if (!nn_is_quant8(x->dtype) || x->rank < 3)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: X is %s with shape %s, expected uint8/int8 of rank 3 or more",
					   op, ox_dtype_name(x->dtype), nn_shape(x, buf));
	OX_TRY(check_vec(op, "x_scale", xs, 1, true, OX_FLOAT, ctx->st));
	OX_TRY(check_vec(op, "y_scale", ys, 1, true, OX_FLOAT, ctx->st));
	OX_TRY(check_vec(op, "x_zero_point", xzp, 1, false, x->dtype, ctx->st));
	ydt = yzp ? yzp->dtype : x->dtype;
	OX_TRY(check_vec(op, "y_zero_point", yzp, 1, false, x->dtype, ctx->st));
	OX_TRY(ox_quant_check_scale_tensor(ctx->st, op, "x_scale", xs, false));
	OX_TRY(ox_quant_check_scale_tensor(ctx->st, op, "y_scale", ys, true));
	nb = x->dims[0];
	c = last ? x->dims[x->rank - 1] : x->dims[1];
	sp = ox_tensor_numel(x) / (nb * c > 0 ? nb * c : 1);
	for (int i = 0; i < x->rank; i++)
		dims[i] = i == 0 ? nb : ((last ? i == x->rank - 1 : i == 1) ? c : 1);
	if (!(y = ox_out_tensor(ctx, 0, ydt, x->rank, dims)))
		return ctx->st->code;
	if (sp == 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: X %s has no spatial elements", op, nn_shape(x, buf));
	k = vec_at(xs, 0) / vec_at(ys, 0) / (float) sp;
	k0 = (yzp ? (float) nn_quant8_at(yzp->data, yzp->dtype, 0) : 0.0f) -
		vec_at(xs, 0) / vec_at(ys, 0) * (xzp ? (float) nn_quant8_at(xzp->data, xzp->dtype, 0) : 0.0f);
	{
		float		kk[2] = {k, k0};

		OX_TRY(ox_quant_check_factors(ctx->st, op, kk, 2));
	}
	lo = ydt == OX_INT8 ? -128.0f : 0.0f;
	hi = ydt == OX_INT8 ? 127.0f : 255.0f;
	for (int64_t i = 0; i < nb * c; i++)
	{
		int64_t		bi = i / c,
					ci = i % c;
		int64_t		sum = 0;
		float		f;

		for (int64_t j = 0; j < sp; j++)
		{
			int64_t		off = last ? (bi * sp + j) * c + ci : i * sp + j;

			sum += x->dtype == OX_INT8 ? ((const int8_t *) x->data)[off] : ((const uint8_t *) x->data)[off];
		}
		f = nearbyintf((float) sum * k + k0);
		f = f < lo ? lo : (f > hi ? hi : f);
		if (ydt == OX_INT8)
			((int8_t *) y->data)[i] = (int8_t) f;
		else
			((uint8_t *) y->data)[i] = (uint8_t) f;
	}
	return OX_OK;
}
