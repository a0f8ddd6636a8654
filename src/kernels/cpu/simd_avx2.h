/*
 * simd_avx2.h
 *	  Loads and stores of a vector's first lanes for the AVX2 kernels.
 *
 * VMASKMOVPS to memory is microcode on AMD Zen 2 and Zen 3: on an EPYC
 * (Zen 3) a masked store took 5.7 ns against 0.6 ns for VMOVUPS, and a
 * masked load 1.0 ns.  Micro-kernels that stored every row of a tile
 * through a mask, although nearly all of them are full, spent up to a
 * quarter of a 3x3 convolution's time in those stores.  These take the
 * plain move when every lane is wanted and the mask only for a tail.
 */
#ifndef OX_KERNELS_CPU_SIMD_AVX2_H
#define OX_KERNELS_CPU_SIMD_AVX2_H

#include "kernels/cpu/fused_act.h"

#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>

/* p[0..8) where full, else the lanes of m (the others read as zero) */
__attribute__((target("avx2"), always_inline))
static inline __m256
nn_load8_part(const float *p, bool full, __m256i m)
{
	return full ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, m);
}

/* v into p[0..8) where full, else into the lanes of m */
__attribute__((target("avx2"), always_inline))
static inline void
nn_store8_part(float *p, bool full, __m256i m, __m256 v)
{
	if (full)
		_mm256_storeu_ps(p, v);
	else
		_mm256_maskstore_ps(p, m, v);
}

/*
 * d[0..n) = x[0..n) for the short rows of the convolution kernels, where a
 * call to memcpy costs more than the copy: whole vectors, the last one
 * ending at n (overlapping the one before), so that nothing past the row
 * is read or written; rows under a vector element by element.
 */
__attribute__((target("avx2"), always_inline))
static inline void
nn_copy_avx2(float *d, const float *x, int64_t n)
{
	int64_t		i = 0;

	if (n < 8)
	{
		for (; i < n; i++)
			d[i] = x[i];
		return;
	}
	for (; i + 8 < n; i += 8)
		_mm256_storeu_ps(d + i, _mm256_loadu_ps(x + i));
	_mm256_storeu_ps(d + n - 8, _mm256_loadu_ps(x + n - 8));
}

/* r[i] lane j becomes r[j] lane i, for eight vectors */
__attribute__((target("avx2"), always_inline))
static inline void
nn_transpose8(__m256 r[8])
{
	__m256		t[8],
				u[8];

	for (int i = 0; i < 8; i += 2)
	{
		t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
		t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
	}
	for (int i = 0; i < 8; i += 4)
	{
		u[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
		u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
		u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
		u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
	}
	for (int i = 0; i < 4; i++)
	{
		r[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
		r[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
	}
}

/* the activations computed in registers (nn_act_in_registers): conv_fast.h's nn_act_avx512 in AVX2 */
__attribute__((target("avx2,fma"), always_inline))
static inline __m256
nn_act_avx2(const nn_activation *act, __m256 v)
{
	switch (act->kind)
	{
		case NN_ACT_RELU:
			return _mm256_max_ps(_mm256_setzero_ps(), v);
		case NN_ACT_LEAKY_RELU:
			{
				__m256		neg = _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_NGE_UQ);

				return _mm256_blendv_ps(v, _mm256_mul_ps(v, _mm256_set1_ps(act->p0)), neg);
			}
		case NN_ACT_CLIP:
			v = _mm256_max_ps(_mm256_set1_ps(act->p0), v);
			return _mm256_min_ps(_mm256_set1_ps(act->p1), v);
		case NN_ACT_HARD_SIGMOID:
			v = _mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(act->p0), v), _mm256_set1_ps(act->p1));
			v = _mm256_max_ps(_mm256_setzero_ps(), v);
			return _mm256_min_ps(_mm256_set1_ps(1.0f), v);
		case NN_ACT_HARD_SWISH:
			{
				__m256		h = _mm256_add_ps(_mm256_mul_ps(v, _mm256_set1_ps(1.0f / 6.0f)), _mm256_set1_ps(0.5f));

				h = _mm256_min_ps(_mm256_set1_ps(1.0f), _mm256_max_ps(_mm256_setzero_ps(), h));
				return _mm256_mul_ps(v, h);
			}
		default:
			return v;
	}
}

#endif							/* OX_KERNELS_CPU_SIMD_AVX2_H */
