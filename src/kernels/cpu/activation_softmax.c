/*
 * activation_softmax.c
 *	  Softmax, LogSoftmax and Hardmax.
 *
 * Before opset 13 the input is coerced to 2-D at axis (default 1): every
 * row of prod(dims[axis:]) elements is normalised.  From 13 the operation
 * runs along the single axis (default -1).  Both are an [outer, n, inner]
 * view: contiguous rows when inner is 1, else columns handled a tile at a
 * time so the inner loops still run over contiguous memory.
 *
 * Softmax subtracts the maximum before exponentiating, so large inputs do
 * not overflow; LogSoftmax is (x - max) - log(sum(exp(x - max))), in that
 * order so that x - max is exact.  Hardmax
 * marks the first maximum (a NaN counts as the maximum, as numpy's argmax).
 * float16/bfloat16 compute in float.
 *
 * float32 rows (Softmax and LogSoftmax over the last axis: attention
 * scores) take an AVX-512 path where the machine has it: the exp of
 * ox_fast_expf sixteen lanes at a time (vmath_avx512.h), and the sum
 * accumulated in double as in the portable path.
 */
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/vmath_avx512.h"

typedef enum sm_kind
{
	SM_SOFTMAX,
	SM_LOG,
	SM_HARD
} sm_kind;

typedef struct sm_job
{
	sm_kind		kind;
	const void *x;
	void	   *y;
	int64_t		n;				/* length of the normalised axis */
	int64_t		inner;			/* elements after it */
} sm_job;

/* columns per tile when inner > 1 */
#define SM_TILE 64
/* independent accumulators, so max and sum reductions vectorize */
#define SM_LANES 8

static inline bool
hard_better(double v, double best)
{
	return v > best || (v != v && best == best);
}

/*
 * One implementation for float and double: T the type, EXP its exp.  Sums accumulate in double: rows can be long.
 * Defines ox_act_softmax_rows_SFX (inner == 1) and ox_act_softmax_cols_SFX
 * (inner > 1), each over outer blocks [begin, end).  The row helpers are forced inline so that they
 * are compiled into each SIMD clone.
 */
#define SM_IMPL(SFX, T, EXP) \
	static inline __attribute__((always_inline)) T \
	row_max_##SFX(const T *x, int64_t n) \
	{ \
		T			m[SM_LANES]; \
		int64_t		i = 0; \
		T			r; \
		for (int k = 0; k < SM_LANES; k++) \
			m[k] = x[0]; \
		for (; i + SM_LANES <= n; i += SM_LANES) \
			for (int k = 0; k < SM_LANES; k++) \
				m[k] = x[i + k] > m[k] ? x[i + k] : m[k]; \
		for (; i < n; i++) \
			m[0] = x[i] > m[0] ? x[i] : m[0]; \
		r = m[0]; \
		for (int k = 1; k < SM_LANES; k++) \
			r = m[k] > r ? m[k] : r; \
		return r; \
	} \
	\
	/* y = exp(x - m), returns the sum */ \
	static inline __attribute__((always_inline)) double \
	row_exp_sum_##SFX(T *restrict y, const T *restrict x, int64_t n, T m) \
	{ \
		double		s[SM_LANES] = {0}; \
		int64_t		i = 0; \
		double		r = 0; \
		for (int64_t j = 0; j < n; j++) \
			y[j] = EXP(x[j] - m); \
		for (; i + SM_LANES <= n; i += SM_LANES) \
			for (int k = 0; k < SM_LANES; k++) \
				s[k] += y[i + k]; \
		for (; i < n; i++) \
			s[0] += y[i]; \
		for (int k = 0; k < SM_LANES; k++) \
			r += s[k]; \
		return r; \
	} \
	\
	OX_SIMD_CLONES static void \
	ox_act_softmax_rows_##SFX(const sm_job *j, int64_t begin, int64_t end) \
	{ \
		const int64_t n = j->n; \
		for (int64_t r = begin; r < end; r++) \
		{ \
			const T    *restrict x = (const T *) j->x + r * n; \
			T		   *restrict y = (T *) j->y + r * n; \
			T			m = row_max_##SFX(x, n); \
			if (j->kind == SM_HARD) \
			{ \
				int64_t		best = 0; \
				for (int64_t i = 1; i < n; i++) \
					if (hard_better(x[i], x[best])) \
						best = i; \
				for (int64_t i = 0; i < n; i++) \
					y[i] = 0; \
				y[best] = 1; \
				continue; \
			} \
			double		s = row_exp_sum_##SFX(y, x, n, m); \
			if (j->kind == SM_SOFTMAX) \
			{ \
				T			inv = (T) (1 / s); \
				for (int64_t i = 0; i < n; i++) \
					y[i] *= inv; \
			} \
			else \
			{ \
				T			ls = (T) log(s); \
				for (int64_t i = 0; i < n; i++) \
					y[i] = (x[i] - m) - ls; \
			} \
		} \
	} \
	\
	OX_SIMD_CLONES static void \
	ox_act_softmax_cols_##SFX(const sm_job *j, int64_t begin, int64_t end) \
	{ \
		const int64_t n = j->n; \
		const int64_t inner = j->inner; \
		for (int64_t o = begin; o < end; o++) \
		{ \
			const T    *xb = (const T *) j->x + o * n * inner; \
			T		   *yb = (T *) j->y + o * n * inner; \
			for (int64_t c0 = 0; c0 < inner; c0 += SM_TILE) \
			{ \
				const int	w = (int) (inner - c0 < SM_TILE ? inner - c0 : SM_TILE); \
				T			m[SM_TILE]; \
				double		s[SM_TILE]; \
				T			f[SM_TILE]; \
				int64_t		best[SM_TILE]; \
				for (int c = 0; c < w; c++) \
				{ \
					m[c] = xb[c0 + c]; \
					s[c] = 0; \
					best[c] = 0; \
				} \
				if (j->kind == SM_HARD) \
				{ \
					for (int64_t k = 1; k < n; k++) \
						for (int c = 0; c < w; c++) \
							if (hard_better(xb[k * inner + c0 + c], m[c])) \
							{ \
								m[c] = xb[k * inner + c0 + c]; \
								best[c] = k; \
							} \
					for (int64_t k = 0; k < n; k++) \
						for (int c = 0; c < w; c++) \
							yb[k * inner + c0 + c] = best[c] == k; \
					continue; \
				} \
				for (int64_t k = 1; k < n; k++) \
				{ \
					const T    *restrict xr = xb + k * inner + c0; \
					for (int c = 0; c < w; c++) \
						m[c] = xr[c] > m[c] ? xr[c] : m[c]; \
				} \
				for (int64_t k = 0; k < n; k++) \
				{ \
					const T    *restrict xr = xb + k * inner + c0; \
					T		   *restrict yr = yb + k * inner + c0; \
					for (int c = 0; c < w; c++) \
					{ \
						yr[c] = EXP(xr[c] - m[c]); \
						s[c] += yr[c]; \
					} \
				} \
				if (j->kind == SM_SOFTMAX) \
				{ \
					for (int c = 0; c < w; c++) \
						f[c] = (T) (1 / s[c]); \
					for (int64_t k = 0; k < n; k++) \
					{ \
						T		   *restrict yr = yb + k * inner + c0; \
						for (int c = 0; c < w; c++) \
							yr[c] *= f[c]; \
					} \
				} \
				else \
				{ \
					for (int c = 0; c < w; c++) \
						f[c] = (T) log(s[c]); \
					for (int64_t k = 0; k < n; k++) \
					{ \
						const T    *restrict xr = xb + k * inner + c0; \
						T		   *restrict yr = yb + k * inner + c0; \
						for (int c = 0; c < w; c++) \
							yr[c] = (xr[c] - m[c]) - f[c]; \
					} \
				} \
			} \
		} \
	}

SM_IMPL(f32, float, ox_fast_expf)
SM_IMPL(f64, double, exp)

/* ---- float32 rows, AVX-512 ---------------------------------------------- */

/* the sum of sixteen floats, added into two double accumulators */
__attribute__((target("avx512f,fma")))
static inline void
sm_sum_pd(__m512 v, __m512d *lo, __m512d *hi)
{
	*lo = _mm512_add_pd(*lo, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
	*hi = _mm512_add_pd(*hi, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
}

__attribute__((target("avx512f,fma")))
static void
softmax_rows_f32_avx512(const sm_job *j, int64_t begin, int64_t end)
{
	const int64_t n = j->n;
	const int64_t body = n - n % 16;
	const __mmask16 tail = (__mmask16) ((1u << (n % 16)) - 1);

	for (int64_t r = begin; r < end; r++)
	{
		const float *x = (const float *) j->x + r * n;
		float	   *y = (float *) j->y + r * n;
		/* NaN lanes never win max (as in the portable path): the exp makes them NaN */
		__m512		vm = _mm512_set1_ps(x[0]);
		__m512d		s_lo = _mm512_setzero_pd(),
					s_hi = _mm512_setzero_pd();
		float		m;
		double		s;
		int64_t		i;

		for (i = 0; i < body; i += 16)
			vm = _mm512_max_ps(_mm512_loadu_ps(x + i), vm);
		if (tail)
			vm = _mm512_mask_max_ps(vm, tail, _mm512_maskz_loadu_ps(tail, x + i), vm);
		m = _mm512_reduce_max_ps(vm);
		vm = _mm512_set1_ps(m);
		for (i = 0; i < body; i += 16)
		{
			__m512		e = ox_exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), vm));

			_mm512_storeu_ps(y + i, e);
			sm_sum_pd(e, &s_lo, &s_hi);
		}
		if (tail)
		{
			__m512		e = ox_exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + i), vm));

			e = _mm512_maskz_mov_ps(tail, e);
			_mm512_mask_storeu_ps(y + i, tail, e);
			sm_sum_pd(e, &s_lo, &s_hi);
		}
		s = _mm512_reduce_add_pd(_mm512_add_pd(s_lo, s_hi));
		if (j->kind == SM_SOFTMAX)
		{
			__m512		f = _mm512_set1_ps((float) (1 / s));

			for (i = 0; i < body; i += 16)
				_mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(y + i), f));
			if (tail)
				_mm512_mask_storeu_ps(y + i, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, y + i), f));
		}
		else
		{
			__m512		ls = _mm512_set1_ps((float) log(s));

			for (i = 0; i < body; i += 16)
				_mm512_storeu_ps(y + i, _mm512_sub_ps(_mm512_sub_ps(_mm512_loadu_ps(x + i), vm), ls));
			if (tail)
				_mm512_mask_storeu_ps(y + i, tail,
									  _mm512_sub_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + i), vm), ls));
		}
	}
}

static void
sm_range_f32(void *arg, int64_t begin, int64_t end)
{
	const sm_job *j = arg;

	if (j->inner == 1 && j->kind != SM_HARD && ox_have_avx512_fma())
		softmax_rows_f32_avx512(j, begin, end);
	else if (j->inner == 1)
		ox_act_softmax_rows_f32(j, begin, end);
	else
		ox_act_softmax_cols_f32(j, begin, end);
}

static void
sm_range_f64(void *arg, int64_t begin, int64_t end)
{
	const sm_job *j = arg;

	if (j->inner == 1)
		ox_act_softmax_rows_f64(j, begin, end);
	else
		ox_act_softmax_cols_f64(j, begin, end);
}

static ox_code
softmax_family(ox_kernel_ctx *ctx, sm_kind kind)
{
	const ox_node *node = ctx->node;
	const ox_tensor *x = ox_ew_input(ctx, 0);
	bool		legacy = node->opset < 13;
	int64_t		axis_attr = ox_attr_int(node, "axis", legacy ? 1 : -1);
	int			axis = 0;
	int64_t		outer = 1;
	int64_t		n = 1;
	int64_t		inner = 1;
	int64_t		numel;
	ox_tensor  *y;
	sm_job		j;
	float	   *tmp = NULL;

	if (!x)
		return ctx->st->code;
	if (!ox_dtype_is_float(x->dtype))
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s does not support type %s",
					   node->op_type, ox_dtype_name(x->dtype));
	/* a scalar is one row of one element */
	if (x->rank > 0 && !ox_ew_axis(axis_attr, x->rank, &axis))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s axis %lld is out of range for rank %d",
					   node->op_type, (long long) axis_attr, x->rank);
	for (int d = 0; d < x->rank; d++)
	{
		if (d < axis)
			outer *= x->dims[d];
		else if (d == axis || legacy)
			n *= x->dims[d];
		else
			inner *= x->dims[d];
	}
	y = ox_out_tensor(ctx, 0, x->dtype, x->rank, x->dims);
	if (!y)
		return ctx->st->code;
	numel = ox_tensor_numel(x);
	if (numel == 0)
		return OX_OK;

	j.kind = kind;
	j.n = n;
	j.inner = inner;
	j.x = x->data;
	j.y = y->data;
	if (x->dtype == OX_FLOAT16 || x->dtype == OX_BFLOAT16)
	{
		/* compute in float: input then output in one buffer */
		tmp = ox_workspace_aligned((size_t) numel * 2 * sizeof(float), ctx->st, "Softmax");
		if (!tmp)
			return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s could not allocate %lld floats",
						   node->op_type, (long long) numel);
		ox_ew_half_to_float(tmp, x->data, x->dtype, numel);
		j.x = tmp;
		j.y = tmp + numel;
	}

	int64_t		block = n * inner;
	int64_t		min_chunk = block >= OX_EW_MIN_CHUNK ? 1 : OX_EW_MIN_CHUNK / block;

	ox_parallel_for(ctx, outer, min_chunk,
					x->dtype == OX_DOUBLE ? sm_range_f64 : sm_range_f32, &j);
	if (tmp)
	{
		ox_ew_float_to_half(y->data, tmp + numel, x->dtype, numel);
		ox_aligned_free(tmp);
	}
	return OX_OK;
}

ox_code
ox_act_softmax(ox_kernel_ctx *ctx)
{
	return softmax_family(ctx, SM_SOFTMAX);
}

ox_code
ox_act_log_softmax(ox_kernel_ctx *ctx)
{
	return softmax_family(ctx, SM_LOG);
}

ox_code
ox_act_hardmax(ox_kernel_ctx *ctx)
{
	return softmax_family(ctx, SM_HARD);
}
