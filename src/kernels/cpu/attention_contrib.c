/*
 * attention_contrib.c
 *	  com.microsoft SkipLayerNormalization, Gelu and BiasGelu, as
 *	  onnxruntime defines them: the nodes the transformer fusion pass
 *	  (fuse_transformer.c) makes of a residual Add before a
 *	  LayerNormalization, of a GELU written out with Erf, and of the biases
 *	  added before them.  Also the vectorized LayerNormalization row that
 *	  norm.c uses.
 *
 * Each makes one pass over memory where the unfused nodes made two to
 * five: the biases and the residual are added in registers, and a
 * normalized row is summed, reduced twice and mapped while it is in L1.
 *
 * GELU is y = x * 0.5 * (1 + erf(x / sqrt(2))) with the rational erf of
 * elementwise.h (within 7 ulp).  float32 paths use AVX-512 where the
 * machine has it.  Types: BiasGelu float32 (as in onnxruntime); Gelu and
 * SkipLayerNormalization float32 and double.
 */
#include "kernels/cpu/attention_contrib.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/nn.h"
#include "kernels/cpu/vmath_avx512.h"

#define GELU_SQRT1_2 0.70710678118654752f

/* mean and 1 / sqrt(variance + eps) of a row, two passes (mean 0 for rms) */
static void
stats_f32(const float *x, int64_t n, bool rms, double eps, float *mean, float *inv)
{
	float		m = 0,
				v;

	if (n == 0)
	{
		*mean = 0;
		*inv = (float) (1.0 / sqrt(eps));
		return;
	}
	if (!rms)
		m = nn_sum_f32(x, n) / (float) n;
	v = nn_sqdev_f32(x, n, m) / (float) n;
	*mean = m;
	*inv = (float) (1.0 / sqrt((double) v + eps));
}

static void
stats_f64(const double *x, int64_t n, double eps, double *mean, double *inv)
{
	double		m = 0,
				v = 0;

	for (int64_t i = 0; i < n; i++)
		m += x[i];
	m = n > 0 ? m / (double) n : 0;
	for (int64_t i = 0; i < n; i++)
		v += (x[i] - m) * (x[i] - m);
	v = n > 0 ? v / (double) n : 0;
	*mean = m;
	*inv = 1.0 / sqrt(v + eps);
}

static inline float
gelu_scalar(float x)
{
	return x * 0.5f * (1.0f + ox_fast_erff(x * GELU_SQRT1_2));
}

/* the rational erf of ox_fast_erff, sixteen lanes at a time */
__attribute__((target("avx512f,fma")))
static inline __m512
erf_avx512(__m512 x)
{
	__m512		c = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-4.0f)), _mm512_set1_ps(4.0f));
	__m512		c2 = _mm512_mul_ps(c, c);
	__m512		p = _mm512_set1_ps(-2.72614225801306e-10f);
	__m512		q = _mm512_set1_ps(-1.45660718464996e-05f);

	p = _mm512_fmadd_ps(p, c2, _mm512_set1_ps(2.77068142495902e-08f));
	p = _mm512_fmadd_ps(p, c2, _mm512_set1_ps(-2.10102402082508e-06f));
	p = _mm512_fmadd_ps(p, c2, _mm512_set1_ps(-5.69250639462346e-05f));
	p = _mm512_fmadd_ps(p, c2, _mm512_set1_ps(-7.34990630326855e-04f));
	p = _mm512_fmadd_ps(p, c2, _mm512_set1_ps(-2.95459980854025e-03f));
	p = _mm512_fmadd_ps(p, c2, _mm512_set1_ps(-1.60960333262415e-02f));
	p = _mm512_mul_ps(p, c);
	q = _mm512_fmadd_ps(q, c2, _mm512_set1_ps(-2.13374055278905e-04f));
	q = _mm512_fmadd_ps(q, c2, _mm512_set1_ps(-1.68282697438203e-03f));
	q = _mm512_fmadd_ps(q, c2, _mm512_set1_ps(-7.37332916720468e-03f));
	q = _mm512_fmadd_ps(q, c2, _mm512_set1_ps(-1.42647390514189e-02f));
	return _mm512_div_ps(p, q);
}

__attribute__((target("avx512f,fma")))
static inline __m512
gelu_avx512(__m512 x)
{
	__m512		e = erf_avx512(_mm512_mul_ps(x, _mm512_set1_ps(GELU_SQRT1_2)));
	__m512		hx = _mm512_mul_ps(x, _mm512_set1_ps(0.5f));

	return _mm512_fmadd_ps(hx, e, hx);
}

__attribute__((target("avx512f,fma")))
static void
gelu_f32_avx512(const float *x, const float *bias, float *y, int64_t n)
{
	int64_t		i = 0;

	for (; i + 16 <= n; i += 16)
	{
		__m512		v = _mm512_loadu_ps(x + i);

		if (bias)
			v = _mm512_add_ps(v, _mm512_loadu_ps(bias + i));
		_mm512_storeu_ps(y + i, gelu_avx512(v));
	}
	if (i < n)
	{
		__mmask16	m = (__mmask16) ((1u << (n - i)) - 1);
		__m512		v = _mm512_maskz_loadu_ps(m, x + i);

		if (bias)
			v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, bias + i));
		_mm512_mask_storeu_ps(y + i, m, gelu_avx512(v));
	}
}

OX_SIMD_CLONES
static void
gelu_f32_portable(const float *x, const float *bias, float *y, int64_t n)
{
	if (bias)
		for (int64_t i = 0; i < n; i++)
			y[i] = gelu_scalar(x[i] + bias[i]);
	else
		for (int64_t i = 0; i < n; i++)
			y[i] = gelu_scalar(x[i]);
}

void
nn_gelu_f32(const float *x, const float *bias, float *y, int64_t n)
{
	if (ox_have_avx512_fma())
		gelu_f32_avx512(x, bias, y, n);
	else
		gelu_f32_portable(x, bias, y, n);
}

/* ---- LayerNormalization rows ---------------------------------------------- */


__attribute__((target("avx512f,fma")))
static void
ln_row_f32_avx512(const nn_ln_row *r, float *mean_out, float *inv_out)
{
	const float *src = r->x;
	float	   *s = r->sum ? r->sum : r->y;
	__m512		acc0 = _mm512_setzero_ps(),
				acc1 = _mm512_setzero_ps();
	int64_t		n = r->n,
				i;
	__mmask16	tail = (__mmask16) ((1u << (n % 16)) - 1);
	int64_t		body = n - n % 16;
	float		mean = 0.0f,
				inv;
	__m512		vm,
				vi;

	if (r->skip || r->add || r->sum)
	{
		for (i = 0; i < body; i += 16)
		{
			__m512		v = _mm512_loadu_ps(r->x + i);

			if (r->skip)
				v = _mm512_add_ps(v, _mm512_loadu_ps(r->skip + i));
			if (r->add)
				v = _mm512_add_ps(v, _mm512_loadu_ps(r->add + i));
			_mm512_storeu_ps(s + i, v);
			if (i & 16)
				acc1 = _mm512_add_ps(acc1, v);
			else
				acc0 = _mm512_add_ps(acc0, v);
		}
		if (tail)
		{
			__m512		v = _mm512_maskz_loadu_ps(tail, r->x + i);

			if (r->skip)
				v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(tail, r->skip + i));
			if (r->add)
				v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(tail, r->add + i));
			_mm512_mask_storeu_ps(s + i, tail, v);
			acc0 = _mm512_add_ps(acc0, v);
		}
		src = s;
	}
	else if (!r->rms)
	{
		for (i = 0; i < body; i += 16)
		{
			if (i & 16)
				acc1 = _mm512_add_ps(acc1, _mm512_loadu_ps(src + i));
			else
				acc0 = _mm512_add_ps(acc0, _mm512_loadu_ps(src + i));
		}
		if (tail)
			acc0 = _mm512_add_ps(acc0, _mm512_maskz_loadu_ps(tail, src + i));
	}
	if (!r->rms)
		mean = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1)) / (float) n;
	vm = _mm512_set1_ps(mean);
	acc0 = _mm512_setzero_ps();
	acc1 = _mm512_setzero_ps();
	for (i = 0; i < body; i += 16)
	{
		__m512		d = _mm512_sub_ps(_mm512_loadu_ps(src + i), vm);

		if (i & 16)
			acc1 = _mm512_fmadd_ps(d, d, acc1);
		else
			acc0 = _mm512_fmadd_ps(d, d, acc0);
	}
	if (tail)
	{
		/* masked-off lanes load 0: subtract the mean only where loaded */
		__m512		d = _mm512_maskz_sub_ps(tail, _mm512_maskz_loadu_ps(tail, src + i), vm);

		acc0 = _mm512_fmadd_ps(d, d, acc0);
	}
	inv = (float) (1.0 / sqrt((double) (_mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1)) / (float) n) + r->eps));
	vi = _mm512_set1_ps(inv);
	for (i = 0; i < body; i += 16)
	{
		__m512		v = _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(src + i), vm), vi);

		v = r->shift ? _mm512_fmadd_ps(v, _mm512_loadu_ps(r->scale + i), _mm512_loadu_ps(r->shift + i))
			: _mm512_mul_ps(v, _mm512_loadu_ps(r->scale + i));
		_mm512_storeu_ps(r->y + i, v);
	}
	if (tail)
	{
		__m512		v = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, src + i), vm), vi);

		v = r->shift ? _mm512_fmadd_ps(v, _mm512_maskz_loadu_ps(tail, r->scale + i),
									   _mm512_maskz_loadu_ps(tail, r->shift + i))
			: _mm512_mul_ps(v, _mm512_maskz_loadu_ps(tail, r->scale + i));
		_mm512_mask_storeu_ps(r->y + i, tail, v);
	}
	*mean_out = mean;
	*inv_out = inv;
}

static void
ln_row_f32_portable(const nn_ln_row *r, float *mean_out, float *inv_out)
{
	const float *src = r->x;
	float	   *s = r->sum ? r->sum : r->y;
	float		m,
				iv;

	if (r->skip || r->add || r->sum)
	{
		for (int64_t i = 0; i < r->n; i++)
			s[i] = r->x[i] + (r->skip ? r->skip[i] : 0.0f) + (r->add ? r->add[i] : 0.0f);
		src = s;
	}
	stats_f32(src, r->n, r->rms, r->eps, &m, &iv);
	if (r->shift)
		for (int64_t i = 0; i < r->n; i++)
			r->y[i] = (src[i] - m) * iv * r->scale[i] + r->shift[i];
	else
		for (int64_t i = 0; i < r->n; i++)
			r->y[i] = (src[i] - m) * iv * r->scale[i];
	*mean_out = m;
	*inv_out = iv;
}

void
nn_layer_norm_row_f32(const nn_ln_row *r, float *mean_out, float *inv_out)
{
	if (ox_have_avx512_fma() && r->n > 0)
		ln_row_f32_avx512(r, mean_out, inv_out);
	else
		ln_row_f32_portable(r, mean_out, inv_out);
}

/* ---- SkipLayerNormalization (com.microsoft) ------------------------------ */

/*
 * onnxruntime's contrib operator: s = input + skip (+ bias), then
 * LayerNormalization of s over the last axis with gamma (and beta).
 * Outputs: the result, optionally mean and inv_std_var (float, the shape of
 * the rows with a last axis of 1) and input_skip_bias_sum (s).  input and
 * skip broadcast over their leading axes like Add (onnxruntime itself takes
 * skip shaped like input, or like its trailing axes); both must have the
 * hidden size as last axis.  float32 and double.
 */
typedef struct sln_state
{
	double		eps;
} sln_state;

ox_code
nn_skip_layer_norm_prepare(ox_prepare_ctx *pc)
{
	sln_state   *s = calloc(1, sizeof(*s));

	if (!s)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "SkipLayerNormalization: could not allocate state");
	s->eps = ox_attr_float(pc->node, "epsilon", 1e-12f);
	pc->state = s;
	return OX_OK;
}

typedef struct skip_ln_job
{
	const sln_state *s;
	bool		dbl;
	const void *x,
			   *skip,
			   *gamma,
			   *beta,
			   *bias;
	void	   *y,
			   *sum;
	float	   *mean,
			   *inv;
	int64_t		h;
	int			lead;			/* leading axes of the output */
	int64_t		dims[OX_MAX_RANK];
	int64_t		xstr[OX_MAX_RANK];	/* row strides (in rows), 0 where broadcast */
	int64_t		sstr[OX_MAX_RANK];
	bool		direct;			/* no broadcasting: row r of each */
} skip_ln_job;

static void
skip_ln_rows(void *arg, int64_t begin, int64_t end)
{
	const skip_ln_job *j = arg;
	int64_t		h = j->h;

	for (int64_t r = begin; r < end; r++)
	{
		int64_t		xr = r,
					sr = r;

		if (!j->direct)
		{
			int64_t		rem = r;

			xr = sr = 0;
			for (int i = j->lead - 1; i >= 0; i--)
			{
				int64_t		idx = rem % j->dims[i];

				rem /= j->dims[i];
				xr += idx * j->xstr[i];
				sr += idx * j->sstr[i];
			}
		}
		if (!j->dbl)
		{
			nn_ln_row	row;
			float		m,
						iv;

			row.x = (const float *) j->x + xr * h;
			row.skip = (const float *) j->skip + sr * h;
			row.add = j->bias;
			row.scale = j->gamma;
			row.shift = j->beta;
			row.sum = j->sum ? (float *) j->sum + r * h : NULL;
			row.y = (float *) j->y + r * h;
			row.n = h;
			row.eps = j->s->eps;
			row.rms = false;
			nn_layer_norm_row_f32(&row, &m, &iv);
			if (j->mean)
				j->mean[r] = m;
			if (j->inv)
				j->inv[r] = iv;
		}
		else
		{
			const double *x = (const double *) j->x + xr * h,
					   *sk = (const double *) j->skip + sr * h,
					   *g = j->gamma,
					   *b = j->beta,
					   *bi = j->bias;
			double	   *y = (double *) j->y + r * h;
			double	   *s = j->sum ? (double *) j->sum + r * h : y;
			double		m,
						iv;

			for (int64_t i = 0; i < h; i++)
				s[i] = x[i] + sk[i] + (bi ? bi[i] : 0.0);
			stats_f64(s, h, j->s->eps, &m, &iv);
			for (int64_t i = 0; i < h; i++)
				y[i] = (s[i] - m) * iv * g[i] + (b ? b[i] : 0.0);
			if (j->mean)
				j->mean[r] = (float) m;
			if (j->inv)
				j->inv[r] = (float) iv;
		}
	}
}

ox_code
nn_skip_layer_norm_run(ox_kernel_ctx *ctx)
{
	static const char *const op = "SkipLayerNormalization";
	static const char *const pnames[3] = {"gamma", "beta", "bias"};
	const sln_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *skip = ox_in_tensor(ctx, 1);
	const ox_tensor *p[3];
	char		sa[NN_SHAPE_LEN],
				sb[NN_SHAPE_LEN];
	int64_t		dims[OX_MAX_RANK],
				sdims[OX_MAX_RANK];
	int64_t		h,
				rows,
				xs = 1,
				ss = 1;
	int			rank;
	ox_tensor  *y,
			   *mt = NULL,
			   *it = NULL,
			   *sum = NULL;
	skip_ln_job job;

	p[0] = ox_in_tensor(ctx, 2);
	p[1] = ox_in_tensor(ctx, 3);
	p[2] = ox_in_tensor(ctx, 4);
	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "%s: not prepared", op);
	if (!x || !skip || !p[0])
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: inputs input, skip and gamma are required", op);
	if (x->dtype != OX_FLOAT && x->dtype != OX_DOUBLE)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: type %s is not supported (float, double)",
					   op, ox_dtype_name(x->dtype));
	if (x->rank < 1 || skip->rank < 1 || skip->dtype != x->dtype)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input is %s %s and skip is %s %s, expected the same type and at least 1-D",
					   op, ox_dtype_name(x->dtype), nn_shape(x, sa), ox_dtype_name(skip->dtype), nn_shape(skip, sb));
	h = x->dims[x->rank - 1];
	if (skip->dims[skip->rank - 1] != h)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input has shape %s but skip has shape %s: hidden sizes differ",
					   op, nn_shape(x, sa), nn_shape(skip, sb));
	for (int i = 0; i < 3; i++)
		if (p[i] && (p[i]->dtype != x->dtype || p[i]->rank != 1 || p[i]->dims[0] != h))
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: %s is %s %s, expected %s [%lld]",
						   op, pnames[i], ox_dtype_name(p[i]->dtype), nn_shape(p[i], sa),
						   ox_dtype_name(x->dtype), (long long) h);
	/* leading axes broadcast like Add */
	rank = x->rank > skip->rank ? x->rank : skip->rank;
	memset(&job, 0, sizeof(job));
	job.lead = rank - 1;
	for (int i = rank - 2; i >= 0; i--)
	{
		int			xi = i - (rank - x->rank),
					si = i - (rank - skip->rank);
		int64_t		dx = xi >= 0 ? x->dims[xi] : 1,
					ds = si >= 0 ? skip->dims[si] : 1;

		if (dx != ds && dx != 1 && ds != 1)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input has shape %s and skip has shape %s, which do not broadcast",
						   op, nn_shape(x, sa), nn_shape(skip, sb));
		dims[i] = dx == 1 ? ds : dx;
		job.dims[i] = dims[i];
		job.xstr[i] = dx == 1 ? 0 : xs;
		job.sstr[i] = ds == 1 ? 0 : ss;
		xs *= dx;
		ss *= ds;
	}
	dims[rank - 1] = h;
	if (ox_shape_numel(rank, dims) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "%s: output of %s and %s is too large",
					   op, nn_shape(x, sa), nn_shape(skip, sb));
	rows = ox_shape_numel(rank - 1, dims);
	job.direct = xs == rows && ss == rows;
	memcpy(sdims, dims, sizeof(int64_t) * rank);
	sdims[rank - 1] = 1;
	if (!(y = ox_out_tensor(ctx, 0, x->dtype, rank, dims)))
		return ctx->st->code;
	if (ox_has_output(ctx, 1) && !(mt = ox_out_tensor(ctx, 1, OX_FLOAT, rank, sdims)))
		return ctx->st->code;
	if (ox_has_output(ctx, 2) && !(it = ox_out_tensor(ctx, 2, OX_FLOAT, rank, sdims)))
		return ctx->st->code;
	if (ox_has_output(ctx, 3) && !(sum = ox_out_tensor(ctx, 3, x->dtype, rank, dims)))
		return ctx->st->code;
	if (rows == 0 || h == 0)
	{
		/* empty rows have no statistics: mean 0 and 1 / sqrt(eps), as LayerNormalization */
		for (int64_t r = 0; r < rows; r++)
		{
			if (mt)
				((float *) mt->data)[r] = 0.0f;
			if (it)
				((float *) it->data)[r] = (float) (1.0 / sqrt(s->eps));
		}
		return OX_OK;
	}
	job.s = s;
	job.dbl = x->dtype == OX_DOUBLE;
	job.x = x->data;
	job.skip = skip->data;
	job.gamma = p[0]->data;
	job.beta = p[1] ? p[1]->data : NULL;
	job.bias = p[2] ? p[2]->data : NULL;
	job.y = y->data;
	job.sum = sum ? sum->data : NULL;
	job.mean = mt ? mt->data : NULL;
	job.inv = it ? it->data : NULL;
	job.h = h;
	ox_parallel_for(ctx, rows, 4096 / h + 1, skip_ln_rows, &job);
	return OX_OK;
}

/* ---- Gelu, BiasGelu ------------------------------------------------------- */

/*
 * Rows of the output: row r reads x row r (or element r when x's last
 * axis is 1) and the bias (all of it, or its only element).
 */
typedef struct gelu_job
{
	ox_dtype	dt;
	const void *x;
	void	   *y;
	const float *bias;			/* NULL: Gelu */
	int64_t		rows;
	int64_t		width;			/* output row length */
	int64_t		x_width;		/* width or 1 */
	int64_t		b_width;		/* width or 1 */
} gelu_job;

static void
gelu_rows(void *arg, int64_t begin, int64_t end)
{
	const gelu_job *j = arg;
	float		buf[256];

	for (int64_t r = begin; r < end; r++)
	{
		if (j->dt == OX_DOUBLE)
		{
			const double *x = (const double *) j->x + r * j->width;
			double	   *y = (double *) j->y + r * j->width;

			for (int64_t i = 0; i < j->width; i++)
				y[i] = x[i] * 0.5 * (1.0 + erf(x[i] * M_SQRT1_2));
			continue;
		}
		if (j->x_width == j->width && (!j->bias || j->b_width == j->width))
		{
			nn_gelu_f32((const float *) j->x + r * j->width, j->bias, (float *) j->y + r * j->width,
						j->width);
			continue;
		}
		/* a broadcast operand: expand it a block at a time */
		for (int64_t i0 = 0; i0 < j->width; i0 += 256)
		{
			int64_t		n = j->width - i0 < 256 ? j->width - i0 : 256;
			const float *x = (const float *) j->x + r * j->x_width;

			for (int64_t i = 0; i < n; i++)
				buf[i] = (j->x_width == 1 ? x[0] : x[i0 + i]) +
					(j->bias ? j->bias[j->b_width == 1 ? 0 : i0 + i] : 0.0f);
			nn_gelu_f32(buf, NULL, (float *) j->y + r * j->width + i0, n);
		}
	}
}

static ox_code
gelu_common(ox_kernel_ctx *ctx, bool with_bias)
{
	const char *op = with_bias ? "BiasGelu" : "Gelu";
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *b = with_bias ? ox_in_tensor(ctx, 1) : NULL;
	char		sx[NN_SHAPE_LEN],
				sb[NN_SHAPE_LEN];
	int64_t		dims[OX_MAX_RANK];
	int			rank;
	int64_t		x_width,
				width;
	ox_tensor  *y;
	gelu_job	job;

	if (!x || (with_bias && !b))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input%s missing", op, with_bias ? "s A and B are" : " X is");
	if (x->dtype != OX_FLOAT && (with_bias || x->dtype != OX_DOUBLE))
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: type %s is not supported (float%s)", op,
					   ox_dtype_name(x->dtype), with_bias ? "" : ", double");
	rank = x->rank;
	memcpy(dims, x->dims, sizeof(int64_t) * rank);
	x_width = rank > 0 ? x->dims[rank - 1] : 1;
	width = x_width;
	if (b)
	{
		int64_t		bw;

		if (b->dtype != x->dtype || b->rank != 1)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: B has type %s and shape %s, expected a %s vector",
						   op, ox_dtype_name(b->dtype), nn_shape(b, sb), ox_dtype_name(x->dtype));
		bw = b->dims[0];
		if (bw != x_width && bw != 1 && x_width != 1)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "%s: A has shape %s and B has shape %s: the last dimensions do not broadcast",
						   op, nn_shape(x, sx), nn_shape(b, sb));
		if (bw > width || (rank > 0 && bw == 0))
			width = bw;
		if (rank == 0)
		{
			rank = 1;
			dims[0] = width;
		}
		else
			dims[rank - 1] = width;
	}
	if (!(y = ox_out_tensor(ctx, 0, x->dtype, rank, dims)))
		return ctx->st->code;
	if (ox_tensor_numel(y) == 0)
		return OX_OK;
	job.dt = x->dtype;
	job.x = x->data;
	job.y = y->data;
	job.bias = b ? b->data : NULL;
	job.width = width;
	job.x_width = x_width;
	job.b_width = b ? b->dims[0] : width;
	job.rows = ox_tensor_numel(y) / width;
	/* rows of a few thousand elements per chunk */
	ox_parallel_for(ctx, job.rows, 4096 / width + 1, gelu_rows, &job);
	return OX_OK;
}

ox_code
nn_contrib_gelu_run(ox_kernel_ctx *ctx)
{
	return gelu_common(ctx, false);
}

ox_code
nn_contrib_bias_gelu_run(ox_kernel_ctx *ctx)
{
	return gelu_common(ctx, true);
}
