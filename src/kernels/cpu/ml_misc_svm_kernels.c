/*
 * ml_misc_svm_kernels.c
 *	  The arithmetic of SVMClassifier and SVMRegressor (ml_misc_svm.c) over
 *	  blocks of rows: kernel sums of rows against all support vectors, the
 *	  RBF exponential, and the dot products of coefficients with kernel
 *	  values; AVX-512 and AVX2 paths chosen once by cpuid, and the portable
 *	  C path that defines the results.
 *
 * The support vectors are kept transposed and in double (feature-major,
 * vector-minor, see ml_svm_lanes): per feature, one x[k] broadcast meets
 * eight (AVX-512) or four (AVX2) support vectors at once, and several rows
 * share each load.  Every path sums a kernel value over the features in
 * order, in double, with separate multiplies and adds (no FMA), exactly as
 * the scalar loop does, so all machines give bit-identical kernel values.
 *
 * This file includes elementwise.h first for ox_fast_expf; its pragma must
 * precede every function here.  FP contraction is turned off as well, for
 * GCC and clang (the sanitizer builds): the AVX-512 and AVX2 paths could
 * otherwise fuse multiply-adds and differ from the portable path in the
 * last bit.
 */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/ml.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SVM_X86 1
#endif

/* double lanes the dot products keep apart, on every path */
#define SVM_DOT_LANES 8

ox_code
ml_svm_lanes_init(ml_svm_lanes *l, const float *sv, int64_t nv, int64_t nf, ox_status *st,
				  const char *op)
{
	int64_t		vp = (nv + ML_SVM_PAD - 1) / ML_SVM_PAD * ML_SVM_PAD;
	size_t		n;

	l->svt = NULL;
	l->nv = nv;
	l->vp = vp;
	l->nf = nf;
	/* nv and nf come from an attribute that already holds nv * nf floats */
	n = (size_t) (vp * (nf > 0 ? nf : 1));
	l->svt = calloc(n, sizeof(double));
	if (!l->svt)
		return ox_fail(st, OX_OUT_OF_MEMORY, "%s: could not allocate %lld transposed support vector values",
					   op, (long long) n);
	for (int64_t v = 0; v < nv; v++)
		for (int64_t f = 0; f < nf; f++)
			l->svt[f * vp + v] = sv[v * nf + f];
	return OX_OK;
}

void
ml_svm_lanes_free(ml_svm_lanes *l)
{
	free(l->svt);
	l->svt = NULL;
}

/* ---- the portable path (defines the results) ---- */

static void
svm_sums_c(const ml_svm_lanes *l, bool rbf, const float *const *x, int rows, double *const *out)
{
	for (int r = 0; r < rows; r++)
	{
		const float *xr = x[r];
		double	   *o = out[r];

		for (int64_t v = 0; v < l->vp; v++)
			o[v] = 0;
		for (int64_t f = 0; f < l->nf; f++)
		{
			const double *s = l->svt + f * l->vp;
			double		xv = xr[f];

			if (rbf)
				for (int64_t v = 0; v < l->vp; v++)
				{
					double		d = xv - s[v];

					o[v] = o[v] + d * d;
				}
			else
				for (int64_t v = 0; v < l->vp; v++)
					o[v] = o[v] + xv * s[v];
		}
	}
}

/*
 * out[i] = exp(-gamma * d[i]) in float; written as a plain loop so that
 * each instruction-set clone vectorizes it.
 */
#define DEFINE_SVM_EXP(name, attr) \
static attr void \
name(const double *d, int64_t n, float gamma, float *out) \
{ \
	double		g = -(double) gamma; \
\
	for (int64_t i = 0; i < n; i++) \
		out[i] = ox_fast_expf((float) (g * d[i])); \
}

/* sum of a[i] * b[i] in double, in SVM_DOT_LANES interleaved partial sums */
#define DEFINE_SVM_DOT(name, attr) \
static attr double \
name(const float *a, const float *b, int64_t n) \
{ \
	double		acc[SVM_DOT_LANES] = {0}; \
	double		tail = 0; \
	int64_t		i = 0; \
\
	for (; i + SVM_DOT_LANES <= n; i += SVM_DOT_LANES) \
		for (int j = 0; j < SVM_DOT_LANES; j++) \
			acc[j] = acc[j] + (double) a[i + j] * (double) b[i + j]; \
	for (; i < n; i++) \
		tail = tail + (double) a[i] * (double) b[i]; \
	return (((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]))) + tail; \
}

DEFINE_SVM_EXP(svm_exp_c,)
DEFINE_SVM_DOT(svm_dot_c,)

#ifdef SVM_X86

#define SVM_AVX512 __attribute__((target("avx512f,avx512dq,avx512vl,avx2")))
#define SVM_AVX2 __attribute__((target("avx2")))

DEFINE_SVM_EXP(svm_exp_avx512, SVM_AVX512)
DEFINE_SVM_DOT(svm_dot_avx512, SVM_AVX512)
DEFINE_SVM_EXP(svm_exp_avx2, SVM_AVX2)
DEFINE_SVM_DOT(svm_dot_avx2, SVM_AVX2)

/*
 * One row block against support vectors [v0, v1): R rows (each x[r]),
 * W vectors of L doubles per row in registers.  OP is the per-feature
 * update of an accumulator a with broadcast xb and support values s.
 */
#define SVM_RBF_OP(PS, a, xb, s) \
	do { \
		__typeof__(s) d_ = PS##_sub_pd(xb, s); \
		a = PS##_add_pd(a, PS##_mul_pd(d_, d_)); \
	} while (0)
#define SVM_DOT_OP(PS, a, xb, s) \
	(a = PS##_add_pd(a, PS##_mul_pd(xb, s)))

#define SVM_BLOCK(PS, VT, L, R, W, OP) \
	for (; v + (L) * (W) <= l->vp; v += (L) * (W)) \
	{ \
		VT			acc[R][W]; \
\
		for (int r = 0; r < (R); r++) \
			for (int w = 0; w < (W); w++) \
				acc[r][w] = PS##_setzero_pd(); \
		for (int64_t f = 0; f < l->nf; f++) \
		{ \
			const double *s = l->svt + f * l->vp + v; \
			VT			sv[W]; \
\
			for (int w = 0; w < (W); w++) \
				sv[w] = PS##_loadu_pd(s + w * (L)); \
			for (int r = 0; r < (R); r++) \
			{ \
				VT			xb = PS##_set1_pd((double) x[r][f]); \
\
				for (int w = 0; w < (W); w++) \
					OP(PS, acc[r][w], xb, sv[w]); \
			} \
		} \
		for (int r = 0; r < (R); r++) \
			for (int w = 0; w < (W); w++) \
				PS##_storeu_pd(out[r] + v + w * (L), acc[r][w]); \
	}

/* rows 4 at a time (4 x 4 zmm accumulators), then one by one */
#define DEFINE_SVM_SUMS(name, attr, PS, VT, L, W4, W1) \
static attr void \
name##_op(const ml_svm_lanes *l, const float *const *x4, int rows, double *const *out4, bool rbf) \
{ \
	int			r0 = 0; \
\
	for (; r0 + 4 <= rows; r0 += 4) \
	{ \
		const float *const *x = x4 + r0; \
		double	   *const *out = out4 + r0; \
		int64_t		v = 0; \
\
		if (rbf) \
		{ \
			SVM_BLOCK(PS, VT, L, 4, W4, SVM_RBF_OP) \
			SVM_BLOCK(PS, VT, L, 4, 1, SVM_RBF_OP) \
		} \
		else \
		{ \
			SVM_BLOCK(PS, VT, L, 4, W4, SVM_DOT_OP) \
			SVM_BLOCK(PS, VT, L, 4, 1, SVM_DOT_OP) \
		} \
	} \
	for (; r0 < rows; r0++) \
	{ \
		const float *const *x = x4 + r0; \
		double	   *const *out = out4 + r0; \
		int64_t		v = 0; \
\
		if (rbf) \
		{ \
			SVM_BLOCK(PS, VT, L, 1, W1, SVM_RBF_OP) \
			SVM_BLOCK(PS, VT, L, 1, 1, SVM_RBF_OP) \
		} \
		else \
		{ \
			SVM_BLOCK(PS, VT, L, 1, W1, SVM_DOT_OP) \
			SVM_BLOCK(PS, VT, L, 1, 1, SVM_DOT_OP) \
		} \
	} \
}

DEFINE_SVM_SUMS(svm_sums_avx512, SVM_AVX512, _mm512, __m512d, 8, 4, 4)
DEFINE_SVM_SUMS(svm_sums_avx2, SVM_AVX2, _mm256, __m256d, 4, 2, 4)

#endif							/* SVM_X86 */

typedef struct svm_isa
{
	const char *name;
	void		(*sums) (const ml_svm_lanes *l, const float *const *x, int rows, double *const *out, bool rbf);
	void		(*exp) (const double *d, int64_t n, float gamma, float *out);
	double		(*dot) (const float *a, const float *b, int64_t n);
} svm_isa;

static void
svm_sums_c_op(const ml_svm_lanes *l, const float *const *x, int rows, double *const *out, bool rbf)
{
	svm_sums_c(l, rbf, x, rows, out);
}

static const svm_isa svm_isa_c = {"c", svm_sums_c_op, svm_exp_c, svm_dot_c};

#ifdef SVM_X86
static const svm_isa svm_isa_avx512 = {"avx512", svm_sums_avx512_op, svm_exp_avx512, svm_dot_avx512};
static const svm_isa svm_isa_avx2 = {"avx2", svm_sums_avx2_op, svm_exp_avx2, svm_dot_avx2};
#endif

static const svm_isa *svm_forced;

/* the path for this machine, chosen once by cpuid */
static const svm_isa *
svm_best(void)
{
	static const svm_isa *best;

	if (svm_forced)
		return svm_forced;
	if (!best)
	{
#ifdef SVM_X86
		__builtin_cpu_init();
		if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
			__builtin_cpu_supports("avx512vl"))
			best = &svm_isa_avx512;
		else if (__builtin_cpu_supports("avx2"))
			best = &svm_isa_avx2;
		else
#endif
			best = &svm_isa_c;
	}
	return best;
}

const char *
ml_svm_force_isa(const char *name)
{
	const svm_isa *prev = svm_best();
	const svm_isa *want = NULL;

	if (strcmp(name, "c") == 0)
		want = &svm_isa_c;
#ifdef SVM_X86
	else if (strcmp(name, "avx512") == 0 && __builtin_cpu_supports("avx512f") &&
			 __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
		want = &svm_isa_avx512;
	else if (strcmp(name, "avx2") == 0 && __builtin_cpu_supports("avx2"))
		want = &svm_isa_avx2;
#endif
	if (!want)
		return NULL;
	svm_forced = want;
	return prev->name;
}

void
ml_svm_sums(const ml_svm_lanes *l, bool rbf, const float *const *x, int rows, double *const *out)
{
	svm_best()->sums(l, x, rows, out, rbf);
}

void
ml_svm_rbf_exp(const double *d, int64_t n, float gamma, float *out)
{
	svm_best()->exp(d, n, gamma, out);
}

double
ml_svm_dot(const float *a, const float *b, int64_t n)
{
	return svm_best()->dot(a, b, n);
}
