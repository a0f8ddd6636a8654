/*
 * simd_bcast.h
 *	  acc += w * broadcast(*x) with the scalar read by the multiply-add
 *	  itself (EVEX embedded broadcast, "{1to16}").
 *
 * Written as _mm512_fmadd_ps(_mm512_set1_ps(*x), w, acc), GCC folds the
 * broadcast into the multiply-add only when the scalar has one use; with
 * two or more it emits one vbroadcastss and reuses the register.  Measured
 * on AMD Zen 4: a 1x1 convolution tile of 2 output blocks by 6 pixels (6
 * broadcasts from 6 pixels' cache lines for 12 multiply-adds) ran at 75%
 * of the FMA peak that way and at 93% with the broadcast in each
 * multiply-add (a second load of the same scalar); on Zen 5 (two whole
 * 512-bit FMA pipes) the other way round, so the convolution picks per CPU
 * (nn_nchwc_fma_bcast, conv_nchwc.c).  The SGEMM micro-kernel
 * (12 rows by 2 vectors, its 12 scalars packed in one line) ran the same
 * either way, so which tiles gain is measured, not assumed.  The asm keeps
 * GCC from merging the two loads back; it costs GCC's register allocation
 * some freedom, so tiles of many accumulators (3 and 4 blocks by 6 pixels,
 * which spilled) keep the broadcast.
 */
#ifndef OX_KERNELS_CPU_SIMD_BCAST_H
#define OX_KERNELS_CPU_SIMD_BCAST_H

#include <immintrin.h>

__attribute__((target("avx512f"), always_inline))
static inline __m512
nn_fmadd_bcast512(__m512 w, const float *x, __m512 acc)
{
	__asm__("vfmadd231ps %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(w), "m"(*x));
	return acc;
}

#endif							/* OX_KERNELS_CPU_SIMD_BCAST_H */
