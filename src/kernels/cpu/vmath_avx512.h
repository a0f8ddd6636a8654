/*
 * vmath_avx512.h
 *	  exp, sigmoid and tanh of sixteen floats at a time, for the kernels
 *	  that take an AVX-512 path where the machine has it (Softmax's rows,
 *	  the Sigmoid and Tanh ops, the recurrent layers' gates, fused
 *	  activations).
 *
 * Each is the portable helper of elementwise.h (ox_fast_expf,
 * ox_fast_sigmoidf, ox_fast_tanhf: the same reductions, polynomials and
 * rational functions) with its multiply-adds fused, rounding to integer by
 * vrndscaleps and the power of two applied by vscalefps.  That is about
 * half the instructions GCC makes of the portable code, which keeps
 * contraction off so that the AVX2 and baseline builds agree bit for bit;
 * these differ from it in the last bit or two (the unit tests bound both
 * against double precision).  Include after elementwise.h (its pragma).
 */
#ifndef OX_KERNELS_CPU_VMATH_AVX512_H
#define OX_KERNELS_CPU_VMATH_AVX512_H

#include <immintrin.h>
#include <math.h>
#include <stdbool.h>

/* whether this machine runs the functions below; cpuid once per file */
static inline bool
ox_have_avx512_fma(void)
{
	static int	known = -1;

	if (known < 0)
	{
		__builtin_cpu_init();
		known = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
	}
	return known;
}

/* p * e^r's polynomial of ox_fast_expf for the reduced argument r */
__attribute__((target("avx512f,fma")))
static inline __m512
ox_expm_poly16(__m512 r)
{
	__m512		p = _mm512_set1_ps(1.9875691500e-4f);

	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
	p = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, r);
	return _mm512_add_ps(p, _mm512_set1_ps(1.0f));
}

/* e^x for x already clamped to [-104, 88.75]: k = round(x / ln 2), p * 2^k */
__attribute__((target("avx512f,fma")))
static inline __m512
ox_exp_clamped16(__m512 xc)
{
	__m512		k = _mm512_roundscale_ps(_mm512_mul_ps(xc, _mm512_set1_ps(1.44269504088896341f)),
										 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m512		r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693359375f), xc);

	r = _mm512_fnmadd_ps(k, _mm512_set1_ps(-2.12194440e-4f), r);
	/* rounded once, into the subnormals where it falls there */
	return _mm512_scalef_ps(ox_expm_poly16(r), k);
}

/* exp(x): 0 below -104, +inf above 88.75, NaN stays NaN */
__attribute__((target("avx512f,fma")))
static inline __m512
ox_exp16(__m512 x)
{
	__m512		xc = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-104.0f)), _mm512_set1_ps(88.75f));
	__m512		p = ox_exp_clamped16(xc);

	p = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(-104.0f), _CMP_LT_OQ), p,
							 _mm512_setzero_ps());
	p = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(88.75f), _CMP_GT_OQ), p,
							 _mm512_set1_ps(INFINITY));
	return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), p, x);
}

/*
 * 1 / (1 + exp(-x)) through e = exp(-|x|), in (0, 1]: s = 1 / (1 + e) for
 * x >= 0, e * s below.  The argument is never above 0, so only the lower
 * clamp applies; at -104 e already rounds to 0.  A NaN lane comes out
 * NaN through the arithmetic (vmaxps returns its second operand, the NaN,
 * when either is NaN).
 */
__attribute__((target("avx512f,fma")))
static inline __m512
ox_sigmoid16(__m512 x)
{
	/* -|x|: the sign bit set (in integer lanes: vorps on zmm is AVX512DQ) */
	__m512		a = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(x),
														_mm512_set1_epi32(INT32_MIN)));
	__m512		e = ox_exp_clamped16(_mm512_max_ps(_mm512_set1_ps(-104.0f), a));
	__m512		s = _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_add_ps(e, _mm512_set1_ps(1.0f)));

	return _mm512_mask_mul_ps(s, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), s, e);
}

/*
 * tanh(x): ox_fast_tanhf's [13/6] rational on [-7.9, 7.9], x itself near 0,
 * +-1 beyond 9
 */
__attribute__((target("avx512f,fma")))
static inline __m512
ox_tanh16(__m512 x)
{
	const __m512 lim = _mm512_set1_ps(7.90531110763549805f);
	/* operands in this order keep a NaN x: vmaxps and vminps return the second on NaN */
	__m512		c = _mm512_min_ps(lim, _mm512_max_ps(_mm512_sub_ps(_mm512_setzero_ps(), lim), x));
	__m512		c2 = _mm512_mul_ps(c, c);
	__m512		p = _mm512_set1_ps(-2.76076847742355e-16f);
	__m512		q = _mm512_set1_ps(1.19825839466702e-06f);
	__m512		ax;
	__m512		r;
	__m512		one;

	p = _mm512_fmadd_ps(p, c2, _mm512_set1_ps(2.00018790482477e-13f));
	p = _mm512_fmadd_ps(p, c2, _mm512_set1_ps(-8.60467152213735e-11f));
	p = _mm512_fmadd_ps(p, c2, _mm512_set1_ps(5.12229709037114e-08f));
	p = _mm512_fmadd_ps(p, c2, _mm512_set1_ps(1.48572235717979e-05f));
	p = _mm512_fmadd_ps(p, c2, _mm512_set1_ps(6.37261928875436e-04f));
	p = _mm512_fmadd_ps(p, c2, _mm512_set1_ps(4.89352455891786e-03f));
	p = _mm512_mul_ps(p, c);
	q = _mm512_fmadd_ps(q, c2, _mm512_set1_ps(1.18534705686654e-04f));
	q = _mm512_fmadd_ps(q, c2, _mm512_set1_ps(2.26843463243900e-03f));
	q = _mm512_fmadd_ps(q, c2, _mm512_set1_ps(4.89352518554385e-03f));
	ax = _mm512_abs_ps(x);
	r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(ax, _mm512_set1_ps(0.0004f), _CMP_LT_OQ), _mm512_div_ps(p, q), x);
	/* +-1 where tanh rounds to it (the fused rational ends 4 ulp short) */
	one = _mm512_castsi512_ps(_mm512_or_si512(_mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN)),
											  _mm512_castps_si512(_mm512_set1_ps(1.0f))));
	return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(ax, _mm512_set1_ps(9.0f), _CMP_GT_OQ), r, one);
}

/* y[i] = f(x[i]) for n floats (y may be x), sixteen lanes at a time */
#define OX_VMATH16_LOOP(F, y, x, n) \
	do { \
		int64_t		i_ = 0; \
		for (; i_ + 16 <= (n); i_ += 16) \
			_mm512_storeu_ps((y) + i_, F(_mm512_loadu_ps((x) + i_))); \
		if (i_ < (n)) \
		{ \
			__mmask16	m_ = (__mmask16) ((1u << ((n) - i_)) - 1); \
			_mm512_mask_storeu_ps((y) + i_, m_, F(_mm512_maskz_loadu_ps(m_, (x) + i_))); \
		} \
	} while (0)

#endif							/* OX_KERNELS_CPU_VMATH_AVX512_H */
