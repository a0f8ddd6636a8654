/*
 * random.c
 *	  The random kernel family: RandomUniform, RandomNormal,
 *	  RandomUniformLike, RandomNormalLike, Bernoulli and Multinomial.
 *
 * Generator: xoshiro256** seeded through splitmix64.  A node with a seed
 * attribute reseeds from it on every run, so a seeded model gives the same
 * values on every run (and in every backend): SQL callers can rely on a
 * seeded model being a pure function.  Without a seed, each run draws a
 * fresh seed from a per-process source mixing the clock, the process id
 * (backends forked from one postmaster must not repeat each other) and an
 * atomic counter (concurrent runs must not repeat each other either).
 * The values differ from onnxruntime's and numpy's: ONNX makes no promise
 * about them, even for a given seed.
 */
#include "kernels/kernel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct rng
{
	uint64_t	s[4];
} rng;

static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t	z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void
rng_seed(rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static inline uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t
rng_next(rng *r)
{
	uint64_t   *s = r->s;
	uint64_t	result = rotl(s[1] * 5, 7) * 9;
	uint64_t	t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/* uniform in [0, 1) with 53 random bits */
static inline double
rng_uniform(rng *r)
{
	return (double) (rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

static uint64_t process_counter;

/* Seed the run's generator: from the seed attribute, or fresh per run. */
static void
rng_init(rng *r, const ox_node *node)
{
	const ox_attr *a = ox_node_attr(node, "seed");
	uint64_t	seed;

	if (a && !isnan(a->f))
	{
		uint32_t	bits;
		float		f = a->f;

		memcpy(&bits, &f, sizeof(bits));
		seed = 0x6f6e6e785f7067ULL ^ bits;
	}
	else
	{
		struct timespec ts;
		uint64_t	count = __atomic_fetch_add(&process_counter, 1, __ATOMIC_RELAXED);
		uint64_t	mix;

		clock_gettime(CLOCK_REALTIME, &ts);
		mix = (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
		seed = splitmix64(&mix) ^ ((uint64_t) getpid() << 32) ^ (count * 0xd1342543de82ef95ULL) ^
			(uint64_t) (uintptr_t) r;
	}
	rng_seed(r, seed);
}

static bool
random_float_dtype(int64_t dt)
{
	return dt == OX_FLOAT || dt == OX_DOUBLE || dt == OX_FLOAT16 || dt == OX_BFLOAT16;
}

typedef enum dist_kind
{
	DIST_UNIFORM,
	DIST_NORMAL
} dist_kind;

/* fill y with n values of the distribution (a, b) = (low, high) or (mean, scale) */
static void
fill_dist(ox_tensor *y, int64_t n, dist_kind kind, double a, double b, rng *r)
{
	if (kind == DIST_UNIFORM)
	{
		for (int64_t i = 0; i < n; i++)
			ox_store_real(y->data, y->dtype, i, a + rng_uniform(r) * (b - a));
		return;
	}
	/* Box-Muller: two normal values from two uniforms */
	for (int64_t i = 0; i < n; i += 2)
	{
		double		u1 = 1.0 - rng_uniform(r);	/* (0, 1]: log is finite */
		double		u2 = rng_uniform(r);
		double		rad = sqrt(-2.0 * log(u1));

		ox_store_real(y->data, y->dtype, i, a + b * rad * cos(2 * M_PI * u2));
		if (i + 1 < n)
			ox_store_real(y->data, y->dtype, i + 1, a + b * rad * sin(2 * M_PI * u2));
	}
}

static ox_code
random_generate(ox_kernel_ctx *ctx, dist_kind kind, bool like)
{
	const ox_node *node = ctx->node;
	const char *op = node->op_type;
	double		a = kind == DIST_UNIFORM ? ox_attr_float(node, "low", 0.0f) : ox_attr_float(node, "mean", 0.0f);
	double		b = kind == DIST_UNIFORM ? ox_attr_float(node, "high", 1.0f) : ox_attr_float(node, "scale", 1.0f);
	int64_t		dims[OX_MAX_RANK];
	int			rank;
	int64_t		dt,
				n;
	ox_tensor  *y;
	rng			r;

	if (like)
	{
		const ox_tensor *x = ox_in_tensor(ctx, 0);

		if (!x)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input is required", op);
		rank = x->rank;
		memcpy(dims, x->dims, sizeof(int64_t) * rank);
		dt = ox_attr_int(node, "dtype", x->dtype);
	}
	else
	{
		const int64_t *shape;
		const ox_attr *sa = ox_node_attr(node, "shape");

		if (!sa)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: the shape attribute is required", op);
		rank = ox_attr_ints(node, "shape", &shape);
		if (rank > OX_MAX_RANK)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: shape has rank %d, at most %d allowed",
						   op, rank, OX_MAX_RANK);
		for (int i = 0; i < rank; i++)
		{
			if (shape[i] < 0)
				return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: shape[%d] is negative (%lld)",
							   op, i, (long long) shape[i]);
			dims[i] = shape[i];
		}
		dt = ox_attr_int(node, "dtype", OX_FLOAT);
	}
	if (!random_float_dtype(dt))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: output type must be a floating type, got %s",
					   op, dt > 0 && dt < OX_DTYPE_COUNT ? ox_dtype_name((ox_dtype) dt) : "unknown");
	if (!isfinite(a) || !isfinite(b))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: distribution parameters must be finite", op);
	if ((n = ox_shape_numel(rank, dims)) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "%s: output too large", op);
	if (!(y = ox_out_tensor(ctx, 0, (ox_dtype) dt, rank, dims)))
		return ctx->st->code;
	rng_init(&r, node);
	fill_dist(y, n, kind, a, b, &r);
	return OX_OK;
}

static ox_code
random_uniform_run(ox_kernel_ctx *ctx)
{
	return random_generate(ctx, DIST_UNIFORM, false);
}

static ox_code
random_normal_run(ox_kernel_ctx *ctx)
{
	return random_generate(ctx, DIST_NORMAL, false);
}

static ox_code
random_uniform_like_run(ox_kernel_ctx *ctx)
{
	return random_generate(ctx, DIST_UNIFORM, true);
}

static ox_code
random_normal_like_run(ox_kernel_ctx *ctx)
{
	return random_generate(ctx, DIST_NORMAL, true);
}

/* ---------- Bernoulli ---------- */

static bool
bernoulli_out_dtype(int64_t dt)
{
	switch (dt)
	{
		case OX_UINT8:
		case OX_UINT16:
		case OX_UINT32:
		case OX_UINT64:
		case OX_INT8:
		case OX_INT16:
		case OX_INT32:
		case OX_INT64:
		case OX_BFLOAT16:
		case OX_FLOAT16:
		case OX_FLOAT:
		case OX_DOUBLE:
		case OX_BOOL:
			return true;
		default:
			return false;
	}
}

static void
store01(void *data, ox_dtype dt, int64_t i, bool v)
{
	switch (dt)
	{
		case OX_UINT8:
		case OX_INT8:
		case OX_BOOL:
			((uint8_t *) data)[i] = v;
			break;
		case OX_UINT16:
		case OX_INT16:
			((uint16_t *) data)[i] = v;
			break;
		case OX_UINT32:
		case OX_INT32:
			((uint32_t *) data)[i] = v;
			break;
		case OX_UINT64:
		case OX_INT64:
			((uint64_t *) data)[i] = v;
			break;
		default:
			ox_store_real(data, dt, i, v ? 1.0 : 0.0);
			break;
	}
}

static ox_code
bernoulli_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	int64_t		dt,
				n;
	ox_tensor  *y;
	rng			r;

	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Bernoulli: input is required");
	if (!random_float_dtype(x->dtype))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Bernoulli: input must be a floating tensor, got %s",
					   ox_dtype_name(x->dtype));
	dt = ox_attr_int(ctx->node, "dtype", x->dtype);
	if (!bernoulli_out_dtype(dt))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Bernoulli: unsupported output dtype %lld", (long long) dt);
	if ((n = ox_tensor_numel(x)) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "Bernoulli: input too large");
	for (int64_t i = 0; i < n; i++)
	{
		double		p = ox_load_real(x->data, x->dtype, i);

		if (!(p >= 0 && p <= 1))
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "Bernoulli: probability %g at element %lld is outside [0, 1]", p, (long long) i);
	}
	if (!(y = ox_out_tensor(ctx, 0, (ox_dtype) dt, x->rank, x->dims)))
		return ctx->st->code;
	rng_init(&r, ctx->node);
	for (int64_t i = 0; i < n; i++)
		store01(y->data, y->dtype, i, rng_uniform(&r) < ox_load_real(x->data, x->dtype, i));
	return OX_OK;
}

/* ---------- Multinomial ---------- */

static ox_code
multinomial_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	int64_t		dt = ox_attr_int(ctx->node, "dtype", OX_INT32);
	int64_t		samples = ox_attr_int(ctx->node, "sample_size", 1);
	char		b1[192];
	int64_t		B,
				K,
				dims[2];
	double	   *cdf;
	ox_tensor  *y;
	rng			r;

	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Multinomial: input is required");
	if (!random_float_dtype(x->dtype))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Multinomial: input must be a floating tensor, got %s",
					   ox_dtype_name(x->dtype));
	if (dt != OX_INT32 && dt != OX_INT64)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Multinomial: dtype must be int32 or int64, got %lld",
					   (long long) dt);
	if (x->rank != 2 || x->dims[1] < 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "Multinomial: input must have shape [batch_size, class_size > 0], got %s",
					   ox_shape_str(x->rank, x->dims, b1, sizeof(b1)));
	if (samples < 0 || samples > OX_MAX_ELEMENTS)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Multinomial: sample_size %lld is out of range",
					   (long long) samples);
	B = x->dims[0];
	K = x->dims[1];
	dims[0] = B;
	dims[1] = samples;
	if (ox_shape_numel(2, dims) < 0 || ox_tensor_numel(x) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "Multinomial: output too large");
	if (!(cdf = ox_workspace_alloc(sizeof(double) * K, ctx->st, "Multinomial")))
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Multinomial: out of memory");
	if (!(y = ox_out_tensor(ctx, 0, (ox_dtype) dt, 2, dims)))
	{
		free(cdf);
		return ctx->st->code;
	}
	rng_init(&r, ctx->node);
	for (int64_t b = 0; b < B; b++)
	{
		double		mx = -INFINITY,
					total = 0;
		int64_t		last = 0;		/* last class of non-zero probability */

		/* the inputs are unnormalized log-probabilities */
		for (int64_t k = 0; k < K; k++)
		{
			double		v = ox_load_real(x->data, x->dtype, b * K + k);

			if (isnan(v) || v == INFINITY)
			{
				free(cdf);
				return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
							   "Multinomial: log-probability %g in row %lld is not valid", v, (long long) b);
			}
			mx = fmax(mx, v);
		}
		if (mx == -INFINITY)
		{
			free(cdf);
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "Multinomial: row %lld has no outcome of non-zero probability", (long long) b);
		}
		for (int64_t k = 0; k < K; k++)
		{
			double		p = exp(ox_load_real(x->data, x->dtype, b * K + k) - mx);

			total += p;
			cdf[k] = total;
			if (p > 0)
				last = k;
		}
		for (int64_t s = 0; s < samples; s++)
		{
			double		u = rng_uniform(&r) * total;
			int64_t		lo = 0,
						hi = last;

			/* first k with cdf[k] > u; a zero-probability class is never chosen */
			while (lo < hi)
			{
				int64_t		mid = lo + (hi - lo) / 2;

				if (cdf[mid] > u)
					hi = mid;
				else
					lo = mid + 1;
			}
			if (dt == OX_INT32)
				OX_DATA(y, int32_t)[b * samples + s] = (int32_t) lo;
			else
				OX_DATA(y, int64_t)[b * samples + s] = lo;
		}
	}
	free(cdf);
	return OX_OK;
}

const ox_kernel_def ox_kernels_random[] = {
	{"", "RandomUniform", 1, NULL, random_uniform_run, NULL},
	{"", "RandomNormal", 1, NULL, random_normal_run, NULL},
	{"", "RandomUniformLike", 1, NULL, random_uniform_like_run, NULL},
	{"", "RandomNormalLike", 1, NULL, random_normal_like_run, NULL},
	{"", "Bernoulli", 15, NULL, bernoulli_run, NULL},
	{"", "Multinomial", 7, NULL, multinomial_run, NULL},
};
const int	ox_kernels_random_count = OX_KERNEL_COUNT(ox_kernels_random);
