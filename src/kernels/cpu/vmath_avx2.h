/*
 * vmath_avx2.h
 *	  Sigmoid of eight floats at a time with AVX2 and FMA, for the blocked
 *	  convolutions' activations in blocks of 8 (conv_nchwc_vec.h).
 *
 * ox_sigmoid16's steps (vmath_avx512.h) in 256-bit registers: the same
 * reduction by ln 2, polynomial and multiply-adds, rounding to integer by
 * vroundps.  AVX2 has no vscalefps, so 2^k (k down to -150, below the
 * normal range) is applied as ox_fast_sigmoidf applies it: times 2^(k+64),
 * exact, then times 2^-64, the one rounding.  Like ox_sigmoid16 it may
 * differ from the portable ox_fast_sigmoidf in the last bit or two (the
 * fused multiply-adds).
 */
#ifndef OX_KERNELS_CPU_VMATH_AVX2_H
#define OX_KERNELS_CPU_VMATH_AVX2_H

#include <immintrin.h>
#include <stdint.h>

/* 1 / (1 + exp(-x)) through e = exp(-|x|), in (0, 1]: s = 1 / (1 + e) for x >= 0, e * s below */
__attribute__((target("avx2,fma")))
static inline __m256
ox_sigmoid8(__m256 x)
{
	/* -|x|, clamped below at -104 (where e already rounds to 0); vmaxps keeps a NaN second operand */
	__m256		a = _mm256_max_ps(_mm256_set1_ps(-104.0f), _mm256_or_ps(x, _mm256_set1_ps(-0.0f)));
	__m256		k = _mm256_round_ps(_mm256_mul_ps(a, _mm256_set1_ps(1.44269504088896341f)),
									_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m256		r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693359375f), a);
	__m256		p = _mm256_set1_ps(1.9875691500e-4f);
	__m256		e,
				s;
	__m256i		scale;

	r = _mm256_fnmadd_ps(k, _mm256_set1_ps(-2.12194440e-4f), r);
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
	p = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, r);
	p = _mm256_add_ps(p, _mm256_set1_ps(1.0f));
	/* 2^(k+64): k + 64 + 127 in the exponent field (k in [-150, 0]; junk for NaN, whose p is NaN) */
	scale = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(191)), 23);
	e = _mm256_mul_ps(_mm256_mul_ps(p, _mm256_castsi256_ps(scale)), _mm256_set1_ps(0x1p-64f));
	s = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(e, _mm256_set1_ps(1.0f)));
	return _mm256_blendv_ps(_mm256_mul_ps(s, e), s, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ));
}

#endif							/* OX_KERNELS_CPU_VMATH_AVX2_H */
