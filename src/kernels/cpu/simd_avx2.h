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

#include <immintrin.h>
#include <stdbool.h>

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

#endif							/* OX_KERNELS_CPU_SIMD_AVX2_H */
