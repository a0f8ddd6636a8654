/*
 * reduce.c
 *	  The reduce family: ReduceSum, ReduceMean, ReduceMax, ReduceMin,
 *	  ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp,
 *	  ReduceSumSquare, ArgMax and ArgMin.
 *
 * Every reduction is brought to the shape [O, R, I]: O outer positions, R
 * reduced elements with stride I, I inner positions.  Reducing a block of
 * trailing axes gives I = 1 (contiguous runs, summed with 8 independent
 * lanes so the compiler can vectorize), a block of leading or middle axes
 * gives I > 1 (rows added into an accumulator row).  Axes that form no
 * single block are first transposed so that the reduced axes come last.
 *
 * float32 is reduced in float; double, float16 and bfloat16 in double;
 * integers in int64 (wrapping like the element type for sum and product),
 * except the means, norms and logs, which integers take in double.
 */
#include "kernels/cpu/tensor_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum red_op
{
	RED_SUM,
	RED_MEAN,
	RED_MAX,
	RED_MIN,
	RED_PROD,
	RED_L1,
	RED_L2,
	RED_LOG_SUM,
	RED_LOG_SUM_EXP,
	RED_SUM_SQUARE,
	RED_ARGMAX,
	RED_ARGMIN
} red_op;

static const struct
{
	const char *name;
	red_op		op;
	int			axes_input_since;	/* opset where axes moved to an input */
}			red_ops[] = {
	{"ReduceSum", RED_SUM, 13},
	{"ReduceMean", RED_MEAN, 18},
	{"ReduceMax", RED_MAX, 18},
	{"ReduceMin", RED_MIN, 18},
	{"ReduceProd", RED_PROD, 18},
	{"ReduceL1", RED_L1, 18},
	{"ReduceL2", RED_L2, 18},
	{"ReduceLogSum", RED_LOG_SUM, 18},
	{"ReduceLogSumExp", RED_LOG_SUM_EXP, 18},
	{"ReduceSumSquare", RED_SUM_SQUARE, 18},
	{"ArgMax", RED_ARGMAX, 0},
	{"ArgMin", RED_ARGMIN, 0},
};

typedef struct red_state
{
	red_op		op;
	bool		keepdims;
	bool		noop_empty;		/* noop_with_empty_axes */
	bool		axes_from_input;
	int			n_axes;			/* attribute axes */
	int64_t		axes[OX_MAX_RANK];
	int64_t		axis;			/* ArgMax/ArgMin */
	bool		select_last;
} red_state;

static ox_code
reduce_prepare(ox_prepare_ctx *pc)
{
	const ox_node *node = pc->node;
	red_state  *s;
	int			k = -1;

	for (int i = 0; i < (int) (sizeof(red_ops) / sizeof(red_ops[0])); i++)
		if (strcmp(node->op_type, red_ops[i].name) == 0)
			k = i;
	if (k < 0)
		return ox_fail(pc->st, OX_INTERNAL, "reduce kernel bound to unknown op %s", node->op_type);
	if (!(s = calloc(1, sizeof(red_state))))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s: could not allocate state", node->op_type);
	s->op = red_ops[k].op;
	s->keepdims = ox_attr_int(node, "keepdims", 1) != 0;
	s->axes_from_input = red_ops[k].axes_input_since > 0 && node->opset >= red_ops[k].axes_input_since;
	s->noop_empty = s->axes_from_input && ox_attr_int(node, "noop_with_empty_axes", 0) != 0;
	s->axis = ox_attr_int(node, "axis", 0);
	s->select_last = node->opset >= 12 && ox_attr_int(node, "select_last_index", 0) != 0;
	if (!s->axes_from_input)
	{
		const int64_t *a;
		int			n = ox_attr_ints(node, "axes", &a);

		if (n > OX_MAX_RANK)
		{
			free(s);
			return ox_fail(pc->st, OX_INVALID_MODEL, "%s: too many axes (%d)", node->op_type, n);
		}
		s->n_axes = n;
		/* a is NULL when the attribute is absent (n 0) */
		if (n > 0)
			memcpy(s->axes, a, sizeof(int64_t) * n);
	}
	pc->state = s;
	return OX_OK;
}

static void
reduce_free(void *state)
{
	free(state);
}

/* ---------------------------------------------------------------------
 * [O, R, I] kernels, one per accumulator type
 * --------------------------------------------------------------------- */

#define MAXC(a, b) (((b) > (a) || (b) != (b)) ? (b) : (a))
#define MINC(a, b) (((b) < (a) || (b) != (b)) ? (b) : (a))
#define ADDC(a, b) ((a) + (b))
#define MULC(a, b) ((a) * (b))
#define ID(v) (v)
#define SQ(v) ((v) * (v))
#define ABSV(v) ((v) < 0 ? -(v) : (v))

/* y[o] = fold(COMBINE, INIT, EXPR(x[o, r]) for r < RC), for I == 1 */
#define ORI_SHORT(T, INIT, COMBINE, EXPR, RC) \
	do { \
		for (int64_t o = 0; o < O; o++) \
		{ \
			const T    *xo = x + o * (RC); \
			T			acc = (INIT); \
			for (int64_t r = 0; r < (RC); r++) \
			{ \
				T			v = xo[r]; \
				acc = COMBINE(acc, EXPR(v)); \
			} \
			y[o] = acc; \
		} \
	} while (0)

/*
 * y[o, i] = fold(COMBINE, INIT, EXPR(x[o, r, i]) for r), for I == 1 with
 * eight lanes (their partial results are folded with COMBINE too).
 */
#define ORI_LOOP(T, INIT, COMBINE, EXPR) \
	do { \
		for (int64_t o = 0; o < O; o++) \
		{ \
			const T    *xo = x + o * R * I; \
			T		   *yo = y + o * I; \
			if (I == 1) \
			{ \
				T			lane[8]; \
				T			acc = (INIT); \
				int64_t		r = 0; \
				for (int k = 0; k < 8; k++) \
					lane[k] = (INIT); \
				for (; r + 8 <= R; r += 8) \
					for (int k = 0; k < 8; k++) \
					{ \
						T			v = xo[r + k]; \
						lane[k] = COMBINE(lane[k], EXPR(v)); \
					} \
				for (int k = 0; k < 8; k++) \
					acc = COMBINE(acc, lane[k]); \
				for (; r < R; r++) \
				{ \
					T			v = xo[r]; \
					acc = COMBINE(acc, EXPR(v)); \
				} \
				yo[0] = acc; \
			} \
			else \
			{ \
				for (int64_t i = 0; i < I; i++) \
					yo[i] = (INIT); \
				for (int64_t r = 0; r < R; r++) \
				{ \
					const T    *row = xo + r * I; \
					for (int64_t i = 0; i < I; i++) \
					{ \
						T			v = row[i]; \
						yo[i] = COMBINE(yo[i], EXPR(v)); \
					} \
				} \
			} \
		} \
	} while (0)

#define DEFINE_ORI(SUFFIX, T, LOWEST, HIGHEST, EXPF, LOGF) \
static void \
reduce_ori_##SUFFIX(const T *x, T *y, int64_t O, int64_t R, int64_t I, red_op op) \
{ \
	switch (op) \
	{ \
		case RED_SUM: \
		case RED_MEAN: \
		case RED_LOG_SUM: \
			ORI_LOOP(T, 0, ADDC, ID); \
			break; \
		case RED_SUM_SQUARE: \
		case RED_L2: \
			ORI_LOOP(T, 0, ADDC, SQ); \
			break; \
		case RED_L1: \
			ORI_LOOP(T, 0, ADDC, ABSV); \
			break; \
		case RED_PROD: \
			ORI_LOOP(T, 1, MULC, ID); \
			break; \
		case RED_MAX: \
			ORI_LOOP(T, LOWEST, MAXC, ID); \
			break; \
		case RED_MIN: \
			ORI_LOOP(T, HIGHEST, MINC, ID); \
			break; \
		case RED_LOG_SUM_EXP: \
			/* max first, then log(sum(exp(x - max))) + max */ \
			ORI_LOOP(T, LOWEST, MAXC, ID); \
			for (int64_t o = 0; o < O; o++) \
				for (int64_t i = 0; i < I; i++) \
				{ \
					T			m = y[o * I + i]; \
					T			sum = 0; \
					if (isinf(m) || isnan(m)) \
						continue; \
					for (int64_t r = 0; r < R; r++) \
						sum += EXPF(x[(o * R + r) * I + i] - m); \
					y[o * I + i] = m + LOGF(sum); \
				} \
			break; \
		default: \
			break; \
	} \
}

DEFINE_ORI(f32, float, -INFINITY, INFINITY, expf, logf)
DEFINE_ORI(f64, double, -INFINITY, INFINITY, exp, log)

/*
 * Short rows (I == 1, R < 8: the [N, 2] products of PolynomialFeatures):
 * the eight lanes of ORI_LOOP would all stay INIT and fold back to INIT
 * exactly, so a plain left fold from INIT gives the same bits, and
 * constant trip counts let GCC vectorize across rows.  A function of its
 * own so that the long-row code stays as it was compiled before.
 */
#define ORI_SHORT_OP(T, INIT, COMBINE, EXPR) \
	do { \
		switch (R) \
		{ \
			case 1: ORI_SHORT(T, INIT, COMBINE, EXPR, 1); break; \
			case 2: ORI_SHORT(T, INIT, COMBINE, EXPR, 2); break; \
			case 3: ORI_SHORT(T, INIT, COMBINE, EXPR, 3); break; \
			case 4: ORI_SHORT(T, INIT, COMBINE, EXPR, 4); break; \
			default: ORI_SHORT(T, INIT, COMBINE, EXPR, R); break; \
		} \
	} while (0)

/* false when op has no short form (LogSumExp: the general kernel) */
static bool
reduce_short_f32(const float *x, float *y, int64_t O, int64_t R, red_op op)
{
	switch (op)
	{
		case RED_SUM:
		case RED_MEAN:
		case RED_LOG_SUM:
			ORI_SHORT_OP(float, 0, ADDC, ID);
			return true;
		case RED_SUM_SQUARE:
		case RED_L2:
			ORI_SHORT_OP(float, 0, ADDC, SQ);
			return true;
		case RED_L1:
			ORI_SHORT_OP(float, 0, ADDC, ABSV);
			return true;
		case RED_PROD:
			ORI_SHORT_OP(float, 1, MULC, ID);
			return true;
		case RED_MAX:
			ORI_SHORT_OP(float, -INFINITY, MAXC, ID);
			return true;
		case RED_MIN:
			ORI_SHORT_OP(float, INFINITY, MINC, ID);
			return true;
		default:
			return false;
	}
}

/*
 * Outer rows per slice: the reductions run in slices with a poll in
 * between, so that one over a huge tensor stays cancelable.
 */
static int64_t
ori_slice(int64_t R, int64_t I)
{
	int64_t		per = R * I > 0 ? R * I : 1;
	int64_t		rows = OX_POLL_BLOCK / per;

	return rows > 0 ? rows : 1;
}

/* integers: means, norms and logs are routed to the double kernel */
static void
reduce_ori_i64(const int64_t *x, int64_t *y, int64_t O, int64_t R, int64_t I, red_op op)
{
	switch (op)
	{
		case RED_SUM:
			ORI_LOOP(int64_t, 0, ADDC, ID);
			break;
		case RED_SUM_SQUARE:
			ORI_LOOP(int64_t, 0, ADDC, SQ);
			break;
		case RED_L1:
			ORI_LOOP(int64_t, 0, ADDC, ABSV);
			break;
		case RED_PROD:
			ORI_LOOP(int64_t, 1, MULC, ID);
			break;
		case RED_MAX:
			ORI_LOOP(int64_t, INT64_MIN, MAXC, ID);
			break;
		case RED_MIN:
			ORI_LOOP(int64_t, INT64_MAX, MINC, ID);
			break;
		default:
			break;
	}
}

/* apply the final step of mean, L2 and log-sum to n results */
#define FINISH(T, SQRTF, LOGF) \
	do { \
		T		   *v = (T *) y; \
		if (op == RED_MEAN) \
			for (int64_t i = 0; i < n; i++) \
				v[i] = v[i] / (T) R; \
		else if (op == RED_L2) \
			for (int64_t i = 0; i < n; i++) \
				v[i] = SQRTF(v[i]); \
		else if (op == RED_LOG_SUM) \
			for (int64_t i = 0; i < n; i++) \
				v[i] = LOGF(v[i]); \
	} while (0)

/* the reduction of an empty set: sum 0, product 1, max -inf, ... */
static double
empty_value(red_op op)
{
	switch (op)
	{
		case RED_PROD:
			return 1;
		case RED_MAX:
		case RED_LOG_SUM:
		case RED_LOG_SUM_EXP:
			return -INFINITY;
		case RED_MIN:
			return INFINITY;
		case RED_MEAN:
			return NAN;
		default:
			return 0;
	}
}

/* the lowest and highest value of an integer type, for empty max/min */
static void
int_limits(ox_dtype dt, double *lo, double *hi)
{
	switch (dt)
	{
		case OX_INT8:
			*lo = INT8_MIN, *hi = INT8_MAX;
			break;
		case OX_UINT8:
		case OX_BOOL:
			*lo = 0, *hi = dt == OX_BOOL ? 1 : UINT8_MAX;
			break;
		case OX_INT16:
			*lo = INT16_MIN, *hi = INT16_MAX;
			break;
		case OX_UINT16:
			*lo = 0, *hi = UINT16_MAX;
			break;
		case OX_INT32:
			*lo = INT32_MIN, *hi = INT32_MAX;
			break;
		case OX_UINT32:
			*lo = 0, *hi = UINT32_MAX;
			break;
		case OX_INT64:
			*lo = (double) INT64_MIN, *hi = (double) INT64_MAX;
			break;
		default:
			*lo = 0, *hi = (double) UINT64_MAX;
			break;
	}
}

static bool
reducible_type(ox_dtype dt)
{
	return ox_dtype_is_float(dt) || ox_dtype_is_int(dt) || dt == OX_BOOL;
}

/* ---------------------------------------------------------------------
 * Reduce*
 * --------------------------------------------------------------------- */

static ox_code
reduce_run(ox_kernel_ctx *ctx)
{
	const red_state *s = ctx->state;
	const ox_tensor *x = oxt_input(ctx, 0, "data");
	int64_t		axes[OX_MAX_RANK];
	int			naxes = 0;
	bool		red[OX_MAX_RANK] = {false};
	int64_t		out_dims[OX_MAX_RANK];
	int			out_rank = 0;
	int64_t		O = 1,
				R = 1,
				I = 1,
				n_out;
	int			groups = 0;
	int64_t		gsize[OX_MAX_RANK];
	bool		gred[OX_MAX_RANK];
	ox_tensor	perm;
	const ox_tensor *work;
	ox_tensor  *out;
	red_op		op;
	ox_code		rc = OX_OK;
	void	   *conv = NULL;
	void	   *y = NULL;

	if (!x)
		return ctx->st->code;
	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "%s: kernel state is missing", ctx->node->op_type);
	op = s->op;
	if (oxt_numel(ctx, x, "data") < 0)
		return ctx->st->code;
	if (!reducible_type(x->dtype) || (x->dtype == OX_BOOL && op != RED_MAX && op != RED_MIN))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: unsupported type %s",
					   ctx->node->op_type, ox_dtype_name(x->dtype));
	if (s->axes_from_input)
	{
		const ox_tensor *at = ox_in_tensor(ctx, 1);

		if (at)
			OX_TRY(oxt_read_ints(ctx, at, axes, OX_MAX_RANK, &naxes, "axes"));
	}
	else
	{
		naxes = s->n_axes;
		memcpy(axes, s->axes, sizeof(int64_t) * naxes);
	}
	if (naxes == 0 && s->noop_empty)
		return oxt_output_copy(ctx, 0, x, x->rank, x->dims);
	for (int k = 0; k < naxes; k++)
	{
		int			a;

		OX_TRY(oxt_axis(ctx, axes[k], x->rank, &a, "axis"));
		red[a] = true;
	}
	for (int i = 0; i < x->rank; i++)
	{
		bool		r = naxes == 0 || red[i];

		red[i] = r;
		if (!r)
			out_dims[out_rank++] = x->dims[i];
		else if (s->keepdims)
			out_dims[out_rank++] = 1;
		if (r)
			R *= x->dims[i];
	}
	if (!(out = ox_out_tensor(ctx, 0, x->dtype, out_rank, out_dims)))
		return ctx->st->code;
	n_out = ox_tensor_numel(out);
	if (n_out == 0)
		return OX_OK;
	if (R == 0)
	{
		double		v = empty_value(op);

		if (!ox_dtype_is_float(x->dtype))
		{
			double		lo,
						hi;

			int_limits(x->dtype, &lo, &hi);
			v = op == RED_MAX ? lo : op == RED_MIN ? hi : isfinite(v) ? v : 0;
		}
		if (x->dtype == OX_INT64 || x->dtype == OX_UINT64)
		{
			/* doubles cannot carry the 64-bit limits exactly */
			int64_t		iv = op == RED_MAX ? (x->dtype == OX_INT64 ? INT64_MIN : 0) :
				op == RED_MIN ? (x->dtype == OX_INT64 ? INT64_MAX : -1) : (int64_t) v;

			return oxt_fill(ctx, x->dtype, out->data, &iv, n_out);
		}
		for (int64_t i = 0; i < n_out; i++)
		{
			OX_TRY(ox_convert_elements((char *) out->data + i * ox_dtype_size(x->dtype), x->dtype,
									   &v, OX_DOUBLE, 1, ctx->st));
			/* an empty input can ask for a huge output */
			if (ox_kernel_poll(ctx, 1))
				return ctx->st->code;
		}
		return OX_OK;
	}

	/* coalesce into alternating kept / reduced groups, ignoring unit dims */
	for (int i = 0; i < x->rank; i++)
	{
		if (x->dims[i] == 1)
			continue;
		if (groups > 0 && gred[groups - 1] == red[i])
			gsize[groups - 1] *= x->dims[i];
		else
		{
			gsize[groups] = x->dims[i];
			gred[groups] = red[i];
			groups++;
		}
	}
	memset(&perm, 0, sizeof(perm));
	work = x;
	if (groups <= 1 || (groups == 2) || (groups == 3 && gred[1]))
	{
		/* [R], [K], [K R], [R K], [K R K] */
		int			g = 0;

		if (groups > 0 && !gred[0])
			O = gsize[g++];
		if (g < groups && gred[g])
			g++;
		if (g < groups)
			I = gsize[g];
	}
	else
	{
		/* move the reduced axes last: [kept..., reduced...] */
		int64_t		xs[OX_MAX_RANK];
		int64_t		pd[OX_MAX_RANK];
		int64_t		ps[OX_MAX_RANK];
		int			p = 0;

		oxt_strides(x->rank, x->dims, xs);
		for (int pass = 0; pass < 2; pass++)
			for (int i = 0; i < x->rank; i++)
				if (red[i] == (pass == 1))
				{
					pd[p] = x->dims[i];
					ps[p] = xs[i];
					p++;
					if (!red[i])
						O *= x->dims[i];
				}
		if ((rc = ox_tensor_alloc(&perm, x->dtype, x->rank, pd, ctx->st)) != OX_OK)
			goto done;
		if ((rc = oxt_strided_copy(ctx, perm.data, x, 0, x->rank, pd, ps)) != OX_OK)
			goto done;
		work = &perm;
	}

	if (x->dtype == OX_FLOAT)
	{
		for (int64_t o = 0, step = ori_slice(R, I); o < O; o += step)
		{
			int64_t		m = O - o < step ? O - o : step;

			if (I != 1 || R >= 8 ||
				!reduce_short_f32((const float *) work->data + o * R, (float *) out->data + o, m, R, op))
				reduce_ori_f32((const float *) work->data + o * R * I, (float *) out->data + o * I, m, R, I, op);
			if (ox_kernel_poll(ctx, m * R * I))
			{
				rc = ctx->st->code;
				goto done;
			}
		}
		y = out->data;
		{
			int64_t		n = n_out;

			FINISH(float, sqrtf, logf);
		}
		y = NULL;
	}
	else if (ox_dtype_is_float(x->dtype) || op == RED_MEAN || op == RED_L2 ||
			 op == RED_LOG_SUM || op == RED_LOG_SUM_EXP)
	{
		const double *src = work->data;
		int64_t		n = n_out;

		if (x->dtype != OX_DOUBLE)
		{
			if (!(conv = malloc(sizeof(double) * O * R * I)))
			{
				rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: could not allocate a work buffer", ctx->node->op_type);
				goto done;
			}
			if ((rc = ox_convert_elements(conv, OX_DOUBLE, work->data, x->dtype, O * R * I, ctx->st)) != OX_OK)
				goto done;
			src = conv;
		}
		if (!(y = malloc(sizeof(double) * n_out)))
		{
			rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: could not allocate a work buffer", ctx->node->op_type);
			goto done;
		}
		for (int64_t o = 0, step = ori_slice(R, I); o < O; o += step)
		{
			int64_t		m = O - o < step ? O - o : step;

			reduce_ori_f64(src + o * R * I, (double *) y + o * I, m, R, I, op);
			if (ox_kernel_poll(ctx, m * R * I))
			{
				rc = ctx->st->code;
				goto done;
			}
		}
		FINISH(double, sqrt, log);
		rc = ox_convert_elements(out->data, x->dtype, y, OX_DOUBLE, n_out, ctx->st);
	}
	else
	{
		/* integers and bool: int64 accumulators; unsigned 64-bit order via a sign flip */
		int64_t    *src;
		bool		flip = x->dtype == OX_UINT64 && (op == RED_MAX || op == RED_MIN);

		if (!(conv = malloc(sizeof(int64_t) * O * R * I)) || !(y = malloc(sizeof(int64_t) * n_out)))
		{
			rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: could not allocate a work buffer", ctx->node->op_type);
			goto done;
		}
		src = conv;
		if ((rc = ox_convert_elements(src, OX_INT64, work->data, x->dtype, O * R * I, ctx->st)) != OX_OK)
			goto done;
		if (flip)
			for (int64_t i = 0; i < O * R * I; i++)
				src[i] ^= INT64_MIN;
		for (int64_t o = 0, step = ori_slice(R, I); o < O; o += step)
		{
			int64_t		m = O - o < step ? O - o : step;

			reduce_ori_i64(src + o * R * I, (int64_t *) y + o * I, m, R, I, op);
			if (ox_kernel_poll(ctx, m * R * I))
			{
				rc = ctx->st->code;
				goto done;
			}
		}
		if (flip)
			for (int64_t i = 0; i < n_out; i++)
				((int64_t *) y)[i] ^= INT64_MIN;
		rc = ox_convert_elements(out->data, x->dtype, y, OX_INT64, n_out, ctx->st);
	}
done:
	free(conv);
	free(y);
	ox_tensor_release(&perm);
	return rc;
}

/* ---------------------------------------------------------------------
 * ArgMax, ArgMin
 * --------------------------------------------------------------------- */

static ox_code
arg_run(ox_kernel_ctx *ctx)
{
	const red_state *s = ctx->state;
	const ox_tensor *x = oxt_input(ctx, 0, "data");
	int			axis;
	int64_t		O = 1,
				R,
				I = 1;
	int64_t		dims[OX_MAX_RANK];
	int			r = 0;
	ox_tensor  *out;
	bool		is_max;
	size_t		es;

	if (!x)
		return ctx->st->code;
	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "%s: kernel state is missing", ctx->node->op_type);
	is_max = s->op == RED_ARGMAX;
	if (oxt_numel(ctx, x, "data") < 0)
		return ctx->st->code;
	if (!reducible_type(x->dtype))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: unsupported type %s",
					   ctx->node->op_type, ox_dtype_name(x->dtype));
	OX_TRY(oxt_axis(ctx, s->axis, x->rank, &axis, "axis"));
	R = x->dims[axis];
	for (int i = 0; i < x->rank; i++)
	{
		if (i < axis)
			O *= x->dims[i];
		else if (i > axis)
			I *= x->dims[i];
		if (i != axis)
			dims[r++] = x->dims[i];
		else if (s->keepdims)
			dims[r++] = 1;
	}
	if (!(out = ox_out_tensor(ctx, 0, OX_INT64, r, dims)))
		return ctx->st->code;
	if (O * I == 0)
		return OX_OK;
	if (R == 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: cannot reduce the empty axis %d",
					   ctx->node->op_type, axis);
	es = ox_dtype_size(x->dtype);
	for (int64_t o = 0; o < O; o++)
		for (int64_t i = 0; i < I; i++)
		{
			int64_t		best = 0;

			if (x->dtype == OX_FLOAT)
			{
				const float *p = OX_DATA(x, float) + o * R * I + i;
				float		bv = p[0];

				for (int64_t k = 1; k < R; k++)
				{
					float		v = p[k * I];
					bool		better = is_max ? (v > bv || (s->select_last && v == bv)) :
						(v < bv || (s->select_last && v == bv));

					if (better)
					{
						bv = v;
						best = k;
					}
				}
			}
			else
			{
				const char *p = (const char *) x->data + (size_t) (o * R * I + i) * es;

				for (int64_t k = 1; k < R; k++)
				{
					int			c = oxt_compare_elems(x->dtype, p + (size_t) (k * I) * es,
													  p + (size_t) (best * I) * es);

					if (!is_max)
						c = -c;
					if (c > 0 || (c == 0 && s->select_last))
						best = k;
				}
			}
			OX_DATA(out, int64_t)[o * I + i] = best;
		}
	return OX_OK;
}

const ox_kernel_def ox_kernels_reduce[] = {
	{"", "ReduceSum", 1, reduce_prepare, reduce_run, reduce_free},
	{"", "ReduceMean", 1, reduce_prepare, reduce_run, reduce_free},
	{"", "ReduceMax", 1, reduce_prepare, reduce_run, reduce_free},
	{"", "ReduceMin", 1, reduce_prepare, reduce_run, reduce_free},
	{"", "ReduceProd", 1, reduce_prepare, reduce_run, reduce_free},
	{"", "ReduceL1", 1, reduce_prepare, reduce_run, reduce_free},
	{"", "ReduceL2", 1, reduce_prepare, reduce_run, reduce_free},
	{"", "ReduceLogSum", 1, reduce_prepare, reduce_run, reduce_free},
	{"", "ReduceLogSumExp", 1, reduce_prepare, reduce_run, reduce_free},
	{"", "ReduceSumSquare", 1, reduce_prepare, reduce_run, reduce_free},
	{"", "ArgMax", 1, reduce_prepare, arg_run, reduce_free},
	{"", "ArgMin", 1, reduce_prepare, arg_run, reduce_free},
};

const int	ox_kernels_reduce_count = OX_KERNEL_COUNT(ox_kernels_reduce);
