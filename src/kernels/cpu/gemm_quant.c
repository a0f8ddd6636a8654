/*
 * gemm_quant.c
 *	  MatMulInteger and QLinearMatMul.
 *
 * The common shapes (a 2-D B, per-tensor zero point and scale for A) run
 * on our int8 GEMM (qgemm.c): exact int32 sums with AVX-512 VNNI or AVX2,
 * B packed on each run (the fusion pass turns constant-weight products
 * into operators that pack once per session).  Every other layout
 * subtracts the zero points while widening the 8-bit operands to double
 * and multiplies with dgemm: integer sums are exact in double up to 2^53,
 * far beyond any reduction length (255 * 255 * K) seen in practice, so the
 * int32 result equals an integer accumulation.
 *
 * Zero points (and, for QLinearMatMul, scales) are per tensor (one value),
 * per row of A / per column of B as a 1-D tensor of M / N values, or, for
 * zero points, the full N-D form of the spec ([..., M, 1] for A,
 * [..., 1, N] for B).
 */
#include "kernels/cpu/nn.h"
#include "kernels/cpu/qgemm.h"

#include <string.h>

/* how a zero point / scale maps to an element of its operand */
typedef enum qp_layout
{
	QP_NONE,
	QP_SCALAR,
	QP_VECTOR,					/* 1-D: per row of A (M) or per column of B (N) */
	QP_FULL						/* one value per row of every A matrix / column of every B matrix */
} qp_layout;

static ox_code
qp_layout_of(const char *op, const char *name, const ox_tensor *x, const ox_tensor *q,
			 bool is_a, bool allow_full, qp_layout *layout, ox_status *st)
{
	char		sx[NN_SHAPE_LEN],
				sq[NN_SHAPE_LEN];
	int64_t		nq,
				len;

	if (!q)
	{
		*layout = QP_NONE;
		return OX_OK;
	}
	nq = ox_tensor_numel(q);
	/* A: rows of length K = last dim; B: columns, N = last dim (1 for 1-D B) */
	len = is_a ? (x->rank >= 2 ? x->dims[x->rank - 2] : 1) : (x->rank >= 2 ? x->dims[x->rank - 1] : 1);
	if (nq == 1)
		*layout = QP_SCALAR;
	else if (q->rank == 1 && q->dims[0] == len && x->rank >= 2)
		*layout = QP_VECTOR;
	else if (allow_full && q->rank == x->rank && x->rank >= 2 &&
			 q->dims[q->rank - (is_a ? 1 : 2)] == 1 &&
			 ox_shape_equal(q->rank - 2, q->dims, x->rank - 2, x->dims) &&
			 q->dims[q->rank - (is_a ? 2 : 1)] == len)
		*layout = QP_FULL;
	else
		return ox_fail(st, OX_INVALID_ARGUMENT,
					   "%s: %s has shape %s, which does not fit %s with shape %s (expected a scalar or %s)",
					   op, name, nn_shape(q, sq), is_a ? "A" : "B", nn_shape(x, sx),
					   is_a ? "one value per row" : "one value per column");
	return OX_OK;
}

/* widen a uint8/int8 matrix operand to double, subtracting its zero point */
static void
widen_operand(const ox_tensor *x, const ox_tensor *zp, qp_layout layout, bool is_a, double *out)
{
	int64_t		n = ox_tensor_numel(x);
	int64_t		last = x->rank >= 1 ? x->dims[x->rank - 1] : 1;
	int64_t		rows = x->rank >= 2 ? x->dims[x->rank - 2] : 1;

	for (int64_t i = 0; i < n; i++)
	{
		double		z = 0;

		switch (layout)
		{
			case QP_NONE:
				break;
			case QP_SCALAR:
				z = nn_quant8_at(zp->data, zp->dtype, 0);
				break;
			case QP_VECTOR:
				z = nn_quant8_at(zp->data, zp->dtype, is_a ? (i / last) % rows : i % last);
				break;
			case QP_FULL:
				z = nn_quant8_at(zp->data, zp->dtype,
								 is_a ? i / last : (i / (last * rows)) * last + i % last);
				break;
		}
		out[i] = nn_quant8_at(x->data, x->dtype, i) - z;
	}
}

static ox_code
check_quant_operand(const char *op, const char *name, const ox_tensor *x, const ox_tensor *zp,
					ox_status *st)
{
	if (!x)
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: input %s is required", op, name);
	if (!nn_is_quant8(x->dtype))
		return ox_fail(st, OX_UNSUPPORTED, "%s: %s has type %s, expected uint8 or int8",
					   op, name, ox_dtype_name(x->dtype));
	if (zp && zp->dtype != x->dtype)
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: zero point of %s is %s but %s is %s",
					   op, name, ox_dtype_name(zp->dtype), name, ox_dtype_name(x->dtype));
	return OX_OK;
}

/*
 * Widen A and B, run the double product; on success *yd holds the exact
 * integer accumulations in the output shape.
 */
static ox_code
quant_product(const char *op, const ox_tensor *a, const ox_tensor *azp, const ox_tensor *b,
			  const ox_tensor *bzp, bool allow_full, double **yd, int *y_rank, int64_t *y_dims,
			  ox_status *st)
{
	qp_layout	la,
				lb;
	double	   *ad = NULL,
			   *bd = NULL;
	ox_code		rc;

	*yd = NULL;
	OX_TRY(check_quant_operand(op, "A", a, azp, st));
	OX_TRY(check_quant_operand(op, "B", b, bzp, st));
	OX_TRY(qp_layout_of(op, "the zero point of A", a, azp, true, allow_full, &la, st));
	OX_TRY(qp_layout_of(op, "the zero point of B", b, bzp, false, allow_full, &lb, st));
	ad = nn_scratch(ox_tensor_numel(a), sizeof(double), st, op);
	bd = ad ? nn_scratch(ox_tensor_numel(b), sizeof(double), st, op) : NULL;
	if (!bd)
	{
		ox_aligned_free(ad);
		return st->code;
	}
	widen_operand(a, azp, la, true, ad);
	widen_operand(b, bzp, lb, false, bd);
	rc = nn_matmul_f64(op, a, b, ad, bd, yd, y_rank, y_dims, st);
	ox_aligned_free(ad);
	ox_aligned_free(bd);
	return rc;
}

/*
 * The int8 GEMM path: B is 2-D [K, N] with a per-tensor or per-column zero
 * point, A [..., M, K] has a per-tensor one.  Returns false (nothing done)
 * for any other layout.  The output has A's leading dims and N columns.
 */
static bool
qgemm_fits(const ox_tensor *a, const ox_tensor *b, qp_layout la, qp_layout lb)
{
	return a->rank >= 1 && b->rank == 2 && a->dims[a->rank - 1] == b->dims[0] &&
		(la == QP_NONE || la == QP_SCALAR) && lb != QP_FULL;
}

static ox_code
qgemm_matmul(ox_kernel_ctx *ctx, const char *op, const ox_tensor *a, const ox_tensor *azp,
			 const ox_tensor *b, const ox_tensor *bzp, ox_qgemm_epi *ep, ox_dtype ydt)
{
	int64_t		k = b->dims[0],
				n = b->dims[1];
	int64_t		y_dims[OX_MAX_RANK];
	int			y_rank = a->rank;
	int64_t		rows;
	ox_qgemm_weights w;
	ox_tensor  *y;
	ox_code		rc;

	memcpy(y_dims, a->dims, sizeof(int64_t) * (size_t) a->rank);
	y_dims[y_rank - 1] = n;
	if (!(y = ox_out_tensor(ctx, 0, ydt, y_rank, y_dims)))
		return ctx->st->code;
	rows = k > 0 ? ox_tensor_numel(a) / k : ox_shape_numel(a->rank - 1, a->dims);
	if (rows == 0 || n == 0)
		return OX_OK;
	OX_TRY(ox_qgemm_pack(&w, OX_QG_VEC, n, k, b->data, b->dtype, 1, n, bzp ? bzp->data : NULL,
						 bzp ? ox_tensor_numel(bzp) : 0, ctx->st));
	rc = ox_qgemm_rows(ctx, rows, a->data, a->dtype, k,
					   azp ? (int32_t) nn_quant8_at(azp->data, azp->dtype, 0) : 0, &w, ep,
					   y->data, n, ctx->st);
	ox_qgemm_weights_free(&w);
	(void) op;
	return rc;
}

ox_code
nn_matmul_integer_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *a = ox_in_tensor(ctx, 0);
	const ox_tensor *b = ox_in_tensor(ctx, 1);
	double	   *yd;
	int			y_rank;
	int64_t		y_dims[OX_MAX_RANK + 2];
	ox_tensor  *y;
	int32_t    *yo;
	int64_t		n;
	const ox_tensor *azp = ox_in_tensor(ctx, 2);
	const ox_tensor *bzp = ox_in_tensor(ctx, 3);
	qp_layout	la,
				lb;

	OX_TRY(check_quant_operand("MatMulInteger", "A", a, azp, ctx->st));
	OX_TRY(check_quant_operand("MatMulInteger", "B", b, bzp, ctx->st));
	OX_TRY(qp_layout_of("MatMulInteger", "the zero point of A", a, azp, true, true, &la, ctx->st));
	OX_TRY(qp_layout_of("MatMulInteger", "the zero point of B", b, bzp, false, true, &lb, ctx->st));
	if (qgemm_fits(a, b, la, lb))
	{
		ox_qgemm_epi ep;

		memset(&ep, 0, sizeof(ep));
		ep.kind = OX_QG_OUT_I32;
		return qgemm_matmul(ctx, "MatMulInteger", a, azp, b, bzp, &ep, OX_INT32);
	}
	OX_TRY(quant_product("MatMulInteger", a, azp, b, bzp, true, &yd, &y_rank, y_dims, ctx->st));
	if (!(y = ox_out_tensor(ctx, 0, OX_INT32, y_rank, y_dims)))
	{
		ox_aligned_free(yd);
		return ctx->st->code;
	}
	n = ox_tensor_numel(y);
	yo = y->data;
	/* exact integers; the cast wraps like an int32 accumulator would */
	for (int64_t i = 0; i < n; i++)
		yo[i] = (int32_t) (uint32_t) (int64_t) yd[i];
	ox_aligned_free(yd);
	return OX_OK;
}

/* a float scale input: scalar, or 1-D of len values */
static ox_code
read_scale(const char *op, const char *name, const ox_tensor *s, int64_t len, bool allow_vector,
		   int64_t *count, ox_status *st)
{
	char		buf[NN_SHAPE_LEN];
	int64_t		n;

	if (!s)
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: %s is required", op, name);
	if (!ox_dtype_is_float(s->dtype))
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: %s has type %s, expected a float type",
					   op, name, ox_dtype_name(s->dtype));
	n = ox_tensor_numel(s);
	if (n == 1 || (allow_vector && s->rank == 1 && n == len))
	{
		*count = n;
		return OX_OK;
	}
	return ox_fail(st, OX_INVALID_ARGUMENT, "%s: %s has shape %s, expected a scalar%s",
				   op, name, nn_shape(s, buf), allow_vector ? " or a 1-D tensor per row/column" : "");
}

ox_code
nn_qlinear_matmul_run(ox_kernel_ctx *ctx)
{
	const char *op = "QLinearMatMul";
	const ox_tensor *a = ox_in_tensor(ctx, 0);
	const ox_tensor *as = ox_in_tensor(ctx, 1);
	const ox_tensor *azp = ox_in_tensor(ctx, 2);
	const ox_tensor *b = ox_in_tensor(ctx, 3);
	const ox_tensor *bs = ox_in_tensor(ctx, 4);
	const ox_tensor *bzp = ox_in_tensor(ctx, 5);
	const ox_tensor *ys = ox_in_tensor(ctx, 6);
	const ox_tensor *yzp = ox_in_tensor(ctx, 7);
	double	   *yd;
	int			y_rank;
	int64_t		y_dims[OX_MAX_RANK + 2];
	int64_t		na,
				nb,
				ny,
				m,
				n,
				cnt;
	ox_dtype	ydt = yzp ? yzp->dtype : OX_UINT8;
	double		yscale,
				yzero;
	ox_tensor  *y;

	if (!a || !b)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: inputs a and b are required", op);
	m = a->rank >= 2 ? a->dims[a->rank - 2] : 1;
	n = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
	OX_TRY(read_scale(op, "a_scale", as, m, true, &na, ctx->st));
	OX_TRY(read_scale(op, "b_scale", bs, n, true, &nb, ctx->st));
	OX_TRY(read_scale(op, "y_scale", ys, 1, false, &cnt, ctx->st));
	if (!nn_is_quant8(ydt))
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: y_zero_point has type %s, expected uint8 or int8",
					   op, ox_dtype_name(ydt));
	if (yzp && ox_tensor_numel(yzp) != 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: y_zero_point must be a scalar", op);
	OX_TRY(ox_quant_check_scale_tensor(ctx->st, op, "a_scale", as, false));
	OX_TRY(ox_quant_check_scale_tensor(ctx->st, op, "b_scale", bs, false));
	OX_TRY(ox_quant_check_scale_tensor(ctx->st, op, "y_scale", ys, true));
	yscale = ox_tensor_get_double(ys, 0);
	yzero = yzp ? nn_quant8_at(yzp->data, yzp->dtype, 0) : 0;
	{
		qp_layout	la,
					lb;

		OX_TRY(check_quant_operand(op, "A", a, azp, ctx->st));
		OX_TRY(check_quant_operand(op, "B", b, bzp, ctx->st));
		OX_TRY(qp_layout_of(op, "the zero point of A", a, azp, true, false, &la, ctx->st));
		OX_TRY(qp_layout_of(op, "the zero point of B", b, bzp, false, false, &lb, ctx->st));
		if (qgemm_fits(a, b, la, lb) && na == 1)
		{
			ox_qgemm_epi ep;
			float	   *mult = ox_workspace_alloc(sizeof(float) * (size_t) (n + 1), ctx->st, "QLinearMatMul");
			double		sa = ox_tensor_get_double(as, 0);
			ox_code		rc;

			if (!mult)
				return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: out of memory", op);
			for (int64_t c = 0; c < n; c++)
				mult[c] = (float) (sa * ox_tensor_get_double(bs, nb == 1 ? 0 : c) / yscale);
			if (ox_quant_check_factors(ctx->st, op, mult, n) != OX_OK)
			{
				free(mult);
				return ctx->st->code;
			}
			memset(&ep, 0, sizeof(ep));
			ep.kind = OX_QG_OUT_Q8;
			ep.q_dtype = ydt;
			ep.mult = mult;
			ep.y_zp = (int32_t) yzero;
			rc = qgemm_matmul(ctx, op, a, azp, b, bzp, &ep, ydt);
			free(mult);
			return rc;
		}
	}
	OX_TRY(quant_product(op, a, azp, b, bzp, false, &yd, &y_rank, y_dims, ctx->st));
	if (!(y = ox_out_tensor(ctx, 0, ydt, y_rank, y_dims)))
	{
		ox_aligned_free(yd);
		return ctx->st->code;
	}
	ny = ox_tensor_numel(y);
	for (int64_t i = 0; i < ny; i++)
	{
		int64_t		col = i % n,
					row = (i / n) % m;
		double		sa = ox_tensor_get_double(as, na == 1 ? 0 : row);
		double		sb = ox_tensor_get_double(bs, nb == 1 ? 0 : col);

		nn_store_quant8(y->data, ydt, i, yd[i] * (sa * sb / yscale) + yzero);
	}
	ox_aligned_free(yd);
	return OX_OK;
}
