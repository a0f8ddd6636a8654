/*
 * elementwise_select.c
 *	  Variadic Max, Min, Sum, Mean (any number of inputs, broadcast
 *	  together), Where (three-way broadcast, any element type) and Clip.
 */
#include "kernels/cpu/elementwise.h"

#include <float.h>
#include <stdlib.h>

/* ---- Max, Min, Sum, Mean ---------------------------------------------------
 *
 * The inputs are folded into the output in groups that fit one broadcast
 * iterator.  Slot 0 of every group is the output itself (it carries the
 * final shape): the first group overwrites it from its first input, later
 * groups combine into it.
 */

typedef struct var_arg
{
	int			n_in;			/* slots in this group, the output included */
	bool		fresh;			/* first group: slot 0 is not read */
	bool		finish;			/* last group of Mean: divide */
	double		count;
} var_arg;

#define VAR_ROW(NAME, T, CT, LD, ST, COMBINE, FINISH) \
	static void \
	NAME(void *arg_, int64_t n, void *out_, const void *const *in_, const int *step) \
	{ \
		const var_arg *va = arg_; \
		T		   *o = out_; \
		int			k = 1; \
		if (va->fresh) \
		{ \
			const T    *x = in_[1]; \
			for (int64_t i = 0; i < n; i++) \
				o[i] = x[step[1] ? i : 0]; \
			k = 2; \
		} \
		for (; k < va->n_in; k++) \
		{ \
			T		   *restrict acc = o; \
			const T    *restrict x = in_[k]; \
			if (step[k]) \
				for (int64_t i = 0; i < n; i++) \
				{ \
					const CT	a = LD(acc[i]); \
					const CT	b = LD(x[i]); \
					acc[i] = (T) ST(COMBINE); \
				} \
			else \
			{ \
				const CT	b = LD(x[0]); \
				for (int64_t i = 0; i < n; i++) \
				{ \
					const CT	a = LD(acc[i]); \
					acc[i] = (T) ST(COMBINE); \
				} \
			} \
		} \
		if (va->finish) \
		{ \
			const CT	c = (CT) va->count; \
			(void) c; \
			for (int64_t i = 0; i < n; i++) \
			{ \
				const CT	a = LD(o[i]); \
				o[i] = (T) ST(FINISH); \
			} \
		} \
	}

/* NaN-propagating, like numpy's maximum/minimum */
#define FMAX(a, b) ((a) != (a) || (a) > (b) ? (a) : (b))
#define FMIN(a, b) ((a) != (a) || (a) < (b) ? (a) : (b))
#define IMAX(a, b) ((a) > (b) ? (a) : (b))
#define IMIN(a, b) ((a) < (b) ? (a) : (b))

#define VAR_FLOAT_ROWS(NAME, COMBINE, FINISH) \
	VAR_ROW(NAME##_f32, float, float, OX_ID, OX_ID, COMBINE, FINISH) \
	VAR_ROW(NAME##_f64, double, double, OX_ID, OX_ID, COMBINE, FINISH) \
	VAR_ROW(NAME##_f16, uint16_t, float, OX_H2F, OX_F2H, COMBINE, FINISH) \
	VAR_ROW(NAME##_bf16, uint16_t, float, OX_B2F, OX_F2B, COMBINE, FINISH)

/* integers: CT8..CT64 pick the compute type (unsigned for Sum so it wraps) */
#define VAR_INT_ROWS(NAME, COMBINE, S32, U32, S64, U64) \
	VAR_ROW(NAME##_i8, int8_t, S32, OX_ID, OX_ID, COMBINE, a) \
	VAR_ROW(NAME##_u8, uint8_t, U32, OX_ID, OX_ID, COMBINE, a) \
	VAR_ROW(NAME##_i16, int16_t, S32, OX_ID, OX_ID, COMBINE, a) \
	VAR_ROW(NAME##_u16, uint16_t, U32, OX_ID, OX_ID, COMBINE, a) \
	VAR_ROW(NAME##_i32, int32_t, S32, OX_ID, OX_ID, COMBINE, a) \
	VAR_ROW(NAME##_u32, uint32_t, U32, OX_ID, OX_ID, COMBINE, a) \
	VAR_ROW(NAME##_i64, int64_t, S64, OX_ID, OX_ID, COMBINE, a) \
	VAR_ROW(NAME##_u64, uint64_t, U64, OX_ID, OX_ID, COMBINE, a)

#define FLOAT_FNS(NAME) \
	[OX_FLOAT] = NAME##_f32, [OX_DOUBLE] = NAME##_f64, \
	[OX_FLOAT16] = NAME##_f16, [OX_BFLOAT16] = NAME##_bf16
#define INT_FNS(NAME) \
	[OX_INT8] = NAME##_i8, [OX_UINT8] = NAME##_u8, \
	[OX_INT16] = NAME##_i16, [OX_UINT16] = NAME##_u16, \
	[OX_INT32] = NAME##_i32, [OX_UINT32] = NAME##_u32, \
	[OX_INT64] = NAME##_i64, [OX_UINT64] = NAME##_u64

VAR_FLOAT_ROWS(max, FMAX(a, b), a)
VAR_INT_ROWS(max, IMAX(a, b), int32_t, uint32_t, int64_t, uint64_t)
VAR_FLOAT_ROWS(min, FMIN(a, b), a)
VAR_INT_ROWS(min, IMIN(a, b), int32_t, uint32_t, int64_t, uint64_t)
VAR_FLOAT_ROWS(sum, a + b, a)
VAR_INT_ROWS(sum, a + b, uint32_t, uint32_t, uint64_t, uint64_t)
VAR_FLOAT_ROWS(mean, a + b, a / c)

static const ox_ew_row_table max_fns = {FLOAT_FNS(max), INT_FNS(max)};
static const ox_ew_row_table min_fns = {FLOAT_FNS(min), INT_FNS(min)};
static const ox_ew_row_table sum_fns = {FLOAT_FNS(sum), INT_FNS(sum)};
static const ox_ew_row_table mean_fns = {FLOAT_FNS(mean)};

static ox_code
variadic(ox_kernel_ctx *ctx, const ox_ew_row_table fns, bool mean)
{
	const char *op = ctx->node->op_type;
	const ox_tensor *first = NULL;
	const ox_tensor *t[OX_EW_BCAST_MAX_IN];
	const void *data[OX_EW_BCAST_MAX_IN];
	size_t		esize[OX_EW_BCAST_MAX_IN + 1];
	ox_tensor	shape;			/* the output shape, as a dataless tensor */
	ox_tensor  *out;
	ox_ew_bcast	plan;
	var_arg		va;
	int			n = ctx->n_in;

	if (n < 1)
		return ox_fail(ctx->st, OX_INVALID_MODEL, "%s needs at least one input", op);
	for (int k = 0; k < n; k++)
	{
		const ox_tensor *x = ox_ew_input(ctx, k);

		if (!x)
			return ctx->st->code;
		if (!first)
			first = x;
		else if (x->dtype != first->dtype)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s inputs have different types %s and %s",
						   op, ox_dtype_name(first->dtype), ox_dtype_name(x->dtype));
	}
	if ((int) first->dtype <= 0 || first->dtype >= OX_DTYPE_COUNT || !fns[first->dtype])
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s does not support type %s",
					   op, ox_dtype_name(first->dtype));

	/* the output shape: all inputs broadcast together, pairwise */
	memset(&shape, 0, sizeof(shape));
	shape.rank = first->rank;
	memcpy(shape.dims, first->dims, sizeof(int64_t) * first->rank);
	for (int k = 1; k < n; k++)
	{
		t[0] = &shape;
		t[1] = ox_in_tensor(ctx, k);
		OX_TRY(ox_ew_bcast_plan_tensors(&plan, 2, t, op, ctx->st));
		shape.rank = plan.out_rank;
		memcpy(shape.dims, plan.out_dims, sizeof(int64_t) * plan.out_rank);
	}
	out = ox_out_tensor(ctx, 0, first->dtype, shape.rank, shape.dims);
	if (!out)
		return ctx->st->code;
	if (ox_tensor_numel(out) == 0)
		return OX_OK;

	for (int k = 0; k <= OX_EW_BCAST_MAX_IN; k++)
		esize[k] = ox_dtype_size(first->dtype);
	va.fresh = true;
	va.count = n;
	for (int done = 0; done < n;)
	{
		int			g = n - done < OX_EW_BCAST_MAX_IN - 1 ? n - done : OX_EW_BCAST_MAX_IN - 1;

		t[0] = out;
		data[0] = out->data;
		for (int k = 0; k < g; k++)
		{
			t[1 + k] = ox_in_tensor(ctx, done + k);
			data[1 + k] = t[1 + k]->data;
		}
		OX_TRY(ox_ew_bcast_plan_tensors(&plan, 1 + g, t, op, ctx->st));
		va.n_in = 1 + g;
		done += g;
		va.finish = mean && done == n;
		ox_ew_bcast_run(ctx, &plan, fns[first->dtype], &va, out->data, data, esize);
		va.fresh = false;
	}
	return OX_OK;
}

ox_code
ox_ew_max(ox_kernel_ctx *ctx)
{
	return variadic(ctx, max_fns, false);
}

ox_code
ox_ew_min(ox_kernel_ctx *ctx)
{
	return variadic(ctx, min_fns, false);
}

ox_code
ox_ew_sum(ox_kernel_ctx *ctx)
{
	return variadic(ctx, sum_fns, false);
}

ox_code
ox_ew_mean(ox_kernel_ctx *ctx)
{
	return variadic(ctx, mean_fns, true);
}

/* ---- Where ------------------------------------------------------------------
 * Values are copied by element size, so one row function serves every
 * fixed-size type.
 */

#define WHERE_ROW(NAME, T) \
	static void \
	NAME(void *arg_, int64_t n, void *out_, const void *const *in_, const int *step) \
	{ \
		T		   *restrict o = out_; \
		const uint8_t *restrict c = in_[0]; \
		const T    *restrict x = in_[1]; \
		const T    *restrict y = in_[2]; \
		(void) arg_; \
		if (step[0] && step[1] && step[2]) \
			for (int64_t i = 0; i < n; i++) \
				o[i] = c[i] ? x[i] : y[i]; \
		else \
			for (int64_t i = 0; i < n; i++) \
				o[i] = c[step[0] ? i : 0] ? x[step[1] ? i : 0] : y[step[2] ? i : 0]; \
	}

typedef struct bytes16
{
	uint64_t	w[2];
} bytes16;

WHERE_ROW(where_1, uint8_t)
WHERE_ROW(where_2, uint16_t)
WHERE_ROW(where_4, uint32_t)
WHERE_ROW(where_8, uint64_t)
WHERE_ROW(where_16, bytes16)

/* strings: deep copies; runs on the calling thread, arg is a bool set on OOM */
static void
where_string(void *arg, int64_t n, void *out_, const void *const *in_, const int *step)
{
	ox_string  *o = out_;
	const uint8_t *c = in_[0];
	const ox_string *x = in_[1];
	const ox_string *y = in_[2];

	for (int64_t i = 0; i < n; i++)
	{
		const ox_string *s = c[step[0] ? i : 0] ? &x[step[1] ? i : 0] : &y[step[2] ? i : 0];

		o[i].data = malloc(s->len + 1);
		if (!o[i].data)
		{
			*(bool *) arg = true;
			return;
		}
		if (s->len)
			memcpy(o[i].data, s->data, s->len);
		o[i].data[s->len] = '\0';
		o[i].len = s->len;
	}
}

ox_code
ox_ew_where(ox_kernel_ctx *ctx)
{
	const ox_tensor *t[3];
	const void *data[3];
	size_t		esize[4];
	ox_ew_bcast	plan;
	ox_tensor  *out;
	ox_ew_row_fn fn;
	bool		oom = false;

	for (int k = 0; k < 3; k++)
	{
		if (!(t[k] = ox_ew_input(ctx, k)))
			return ctx->st->code;
		data[k] = t[k]->data;
		esize[1 + k] = ox_dtype_size(t[k]->dtype);
	}
	if (t[0]->dtype != OX_BOOL)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Where condition must be bool, not %s",
					   ox_dtype_name(t[0]->dtype));
	if (t[1]->dtype != t[2]->dtype)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Where inputs have different types %s and %s",
					   ox_dtype_name(t[1]->dtype), ox_dtype_name(t[2]->dtype));
	esize[0] = esize[2];
	switch (t[1]->dtype == OX_STRING ? 0 : esize[0])
	{
		case 0:
			fn = where_string;
			break;
		case 1:
			fn = where_1;
			break;
		case 2:
			fn = where_2;
			break;
		case 4:
			fn = where_4;
			break;
		case 8:
			fn = where_8;
			break;
		case 16:
			fn = where_16;
			break;
		default:
			return ox_fail(ctx->st, OX_UNSUPPORTED, "Where does not support type %s",
						   ox_dtype_name(t[1]->dtype));
	}
	OX_TRY(ox_ew_bcast_plan_tensors(&plan, 3, t, "Where", ctx->st));
	out = ox_out_tensor(ctx, 0, t[1]->dtype, plan.out_rank, plan.out_dims);
	if (!out)
		return ctx->st->code;
	if (fn == where_string)
	{
		ox_ew_bcast_run(NULL, &plan, fn, &oom, out->data, data, esize);
		if (oom)
			return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Where could not copy strings");
	}
	else
		ox_ew_bcast_run(ctx, &plan, fn, NULL, out->data, data, esize);
	return OX_OK;
}

/* ---- Clip -------------------------------------------------------------------
 * min(max(x, lo), hi), so lo > hi gives hi everywhere; NaN stays NaN.  Bounds
 * are attributes before opset 11, optional scalar inputs from 11.
 */

typedef struct clip_job
{
	const void *in;
	void	   *out;
	ox_dtype	dt;
	double		lo;				/* float types */
	double		hi;
	int64_t		ilo;			/* signed integers */
	int64_t		ihi;
	uint64_t	ulo;			/* unsigned integers */
	uint64_t	uhi;
} clip_job;

#define CLIP_LOOP(T, CT, LD, ST, LO, HI) \
	do { \
		const T    *restrict x = (const T *) j->in; \
		T		   *restrict o = (T *) j->out; \
		const CT	lo = (CT) (LO); \
		const CT	hi = (CT) (HI); \
		for (int64_t i = begin; i < end; i++) \
		{ \
			CT			v = LD(x[i]); \
			v = v < lo ? lo : v; \
			o[i] = ST(v > hi ? hi : v); \
		} \
	} while (0)

static void
clip_range(void *arg, int64_t begin, int64_t end)
{
	const clip_job *j = arg;

	switch (j->dt)
	{
		case OX_FLOAT:
			CLIP_LOOP(float, float, OX_ID, OX_ID, j->lo, j->hi);
			break;
		case OX_DOUBLE:
			CLIP_LOOP(double, double, OX_ID, OX_ID, j->lo, j->hi);
			break;
		case OX_FLOAT16:
			CLIP_LOOP(uint16_t, float, OX_H2F, OX_F2H, j->lo, j->hi);
			break;
		case OX_BFLOAT16:
			CLIP_LOOP(uint16_t, float, OX_B2F, OX_F2B, j->lo, j->hi);
			break;
		case OX_INT8:
			CLIP_LOOP(int8_t, int8_t, OX_ID, OX_ID, j->ilo, j->ihi);
			break;
		case OX_INT16:
			CLIP_LOOP(int16_t, int16_t, OX_ID, OX_ID, j->ilo, j->ihi);
			break;
		case OX_INT32:
			CLIP_LOOP(int32_t, int32_t, OX_ID, OX_ID, j->ilo, j->ihi);
			break;
		case OX_INT64:
			CLIP_LOOP(int64_t, int64_t, OX_ID, OX_ID, j->ilo, j->ihi);
			break;
		case OX_UINT8:
			CLIP_LOOP(uint8_t, uint8_t, OX_ID, OX_ID, j->ulo, j->uhi);
			break;
		case OX_UINT16:
			CLIP_LOOP(uint16_t, uint16_t, OX_ID, OX_ID, j->ulo, j->uhi);
			break;
		case OX_UINT32:
			CLIP_LOOP(uint32_t, uint32_t, OX_ID, OX_ID, j->ulo, j->uhi);
			break;
		case OX_UINT64:
			CLIP_LOOP(uint64_t, uint64_t, OX_ID, OX_ID, j->ulo, j->uhi);
			break;
		default:
			break;
	}
}

/* the type's full range: the bound of an omitted min or max */
static void
clip_full_range(clip_job *j)
{
	static const int64_t smin[] = {[1] = INT8_MIN, [2] = INT16_MIN, [4] = INT32_MIN, [8] = INT64_MIN};
	static const int64_t smax[] = {[1] = INT8_MAX, [2] = INT16_MAX, [4] = INT32_MAX, [8] = INT64_MAX};
	static const uint64_t umax[] = {[1] = UINT8_MAX, [2] = UINT16_MAX, [4] = UINT32_MAX, [8] = UINT64_MAX};
	size_t		es = ox_dtype_size(j->dt);

	j->lo = -INFINITY;
	j->hi = INFINITY;
	if (ox_dtype_is_int(j->dt))
	{
		j->ilo = smin[es];
		j->ihi = smax[es];
		j->ulo = 0;
		j->uhi = umax[es];
	}
}

/* read a scalar bound input into the job; false when it is malformed */
static bool
clip_bound(clip_job *j, const ox_tensor *b, bool is_hi)
{
	if (b->dtype != j->dt || ox_tensor_numel(b) != 1)
		return false;
	if (ox_dtype_is_float(j->dt))
		*(is_hi ? &j->hi : &j->lo) = ox_tensor_get_double(b, 0);
	else if (ox_dtype_is_signed(j->dt))
		*(is_hi ? &j->ihi : &j->ilo) = ox_tensor_get_int64(b, 0);
	else
		*(is_hi ? &j->uhi : &j->ulo) = (uint64_t) ox_tensor_get_int64(b, 0);
	return true;
}

ox_code
ox_ew_clip(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = ox_ew_input(ctx, 0);
	ox_tensor  *y;
	clip_job	j;

	if (!x)
		return ctx->st->code;
	if (!ox_dtype_is_float(x->dtype) && !ox_dtype_is_int(x->dtype))
		return ox_fail(ctx->st, OX_UNSUPPORTED, "Clip does not support type %s",
					   ox_dtype_name(x->dtype));
	memset(&j, 0, sizeof(j));
	j.dt = x->dtype;
	clip_full_range(&j);
	if (ctx->node->opset < 11)
	{
		if (!ox_dtype_is_float(x->dtype))
			return ox_fail(ctx->st, OX_UNSUPPORTED, "Clip before opset 11 does not support type %s",
						   ox_dtype_name(x->dtype));
		j.lo = ox_attr_float(ctx->node, "min", -FLT_MAX);
		j.hi = ox_attr_float(ctx->node, "max", FLT_MAX);
	}
	else
	{
		for (int k = 1; k <= 2; k++)
		{
			const ox_tensor *b = ox_in_tensor(ctx, k);

			/* an empty tensor counts as omitted */
			if (!b || ox_tensor_numel(b) == 0)
				continue;
			if (!clip_bound(&j, b, k == 2))
				return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
							   "Clip %s must be a scalar of the input type %s",
							   k == 1 ? "min" : "max", ox_dtype_name(x->dtype));
		}
	}
	y = ox_out_tensor(ctx, 0, x->dtype, x->rank, x->dims);
	if (!y)
		return ctx->st->code;
	j.in = x->data;
	j.out = y->data;
	ox_parallel_for(ctx, ox_tensor_numel(x), OX_EW_MIN_CHUNK, clip_range, &j);
	return OX_OK;
}
