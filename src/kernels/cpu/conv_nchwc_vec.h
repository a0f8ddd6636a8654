/*
 * conv_nchwc_vec.h
 *	  The vector of one channel block, for the channel-blocked kernels
 *	  (conv_nchwc_kernels.h, conv_nchwc_dw_kernels.h), which are compiled
 *	  once per block size: NCHWC_BLK 16 (AVX-512, a block is a __m512) in
 *	  conv_nchwc_avx512.c, 8 (AVX2 and FMA, a __m256) in conv_nchwc_avx2.c.
 *
 * Define NCHWC_BLK before including this.  NCHWC_FN(name) names a
 * template's entry points after the block (nn_nchwc16_name, nn_nchwc8_name).
 *
 * The register tile of the convolution differs by register file: AVX-512's
 * 32 registers hold 4 output blocks by 6 pixels (24 accumulators); AVX2's
 * 16 hold 4 blocks by 3 pixels (12 accumulators, with the broadcast and a
 * weight vector), the tile onnxruntime's FMA3 kernel uses.
 */
#ifndef OX_KERNELS_CPU_CONV_NCHWC_VEC_H
#define OX_KERNELS_CPU_CONV_NCHWC_VEC_H

#include "kernels/cpu/conv_fast.h"
#include "kernels/cpu/simd_avx2.h"
#include "kernels/cpu/simd_bcast.h"

#include <immintrin.h>

/*
 * The cases of a switch on a group's size, 1 to 8, each CASE(N) a case
 * label and its call (the kernels compile a group's loop once per size)
 */
#define NCHWC_SIZE_CASES(CASE) CASE(1); CASE(2); CASE(3); CASE(4); CASE(5); CASE(6); CASE(7); CASE(8)

#if NCHWC_BLK == 16

#define BLK 16
#define NCHWC_FN(name) nn_nchwc16_##name
#define NCHWC_TARGET "avx512f,fma"
#define TILE_PX 6				/* output pixels per register tile */
#define MAX_NOB 4				/* output blocks per register tile */
typedef __m512 nv_t;
typedef __mmask16 nv_keep_t;	/* lanes to keep */
#define nv_load(p) _mm512_loadu_ps(p)
#define nv_load_aligned(p) _mm512_load_ps(p)
#define nv_store(p, v) _mm512_storeu_ps((p), (v))
#define nv_set1(x) _mm512_set1_ps(x)
#define nv_zero() _mm512_setzero_ps()
#define nv_add(a, b) _mm512_add_ps((a), (b))
#define nv_min(a, b) _mm512_min_ps((a), (b))
#define nv_max(a, b) _mm512_max_ps((a), (b))
#define nv_div(a, b) _mm512_div_ps((a), (b))
#define nv_fmadd(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define nv_act(act, v) nn_nchwc_act16((act), (v))
/* the first n lanes (n in 0 .. 16) */
#define nv_keep_first(n) ((n) >= BLK ? (__mmask16) 0xFFFF : (__mmask16) ((1u << (n)) - 1))
#define nv_keep_all() ((__mmask16) 0xFFFF)
/* v, the lanes not kept zero */
#define nv_keep_apply(k, v) _mm512_maskz_mov_ps((k), (v))
/*
 * u > v ? u : v, lane by lane (MaxPool's comparison: NaN in u is not
 * taken): what VMAXPS computes, its second operand unless the first is
 * greater (NaN in either: the second), one instruction where a compare
 * and a blend made each tap of a pixel wait twice as long
 */
#define nv_take_greater(u, v) _mm512_max_ps((u), (v))
#define nv_keep_none() ((__mmask16) 0)
/* c + *p * b in the lanes of k, c in the others; *p read only in those lanes */
#define nv_fmadd_kept(k, p, b, c) _mm512_mask3_fmadd_ps(_mm512_maskz_loadu_ps((k), (p)), (b), (c), (k))

/*
 * Lane l of v's lane (l / cg) cg + j: input channel j of the group of
 * lane l's channel, for groups of cg = 2, 4 or 8 channels (GroupConv).
 * Groups of 2 and 4 lie in 128-bit lanes (one in-lane shuffle by
 * immediate); groups of 8 cross them (a permute).  j and cg are constants
 * where the kernels call it: the switch folds away.
 */
__attribute__((target("avx512f")))
static inline __attribute__((always_inline)) __m512
nv_group_lane(__m512 v, const int cg, const int j)
{
	if (cg == 2)
		return j == 0 ? _mm512_permute_ps(v, 0xA0) : _mm512_permute_ps(v, 0xF5);
	if (cg == 4)
		switch (j)
		{
			case 0:
				return _mm512_permute_ps(v, 0x00);
			case 1:
				return _mm512_permute_ps(v, 0x55);
			case 2:
				return _mm512_permute_ps(v, 0xAA);
			default:
				return _mm512_permute_ps(v, 0xFF);
		}
	return _mm512_permutexvar_ps(_mm512_setr_epi32(j, j, j, j, j, j, j, j,
												   8 + j, 8 + j, 8 + j, 8 + j, 8 + j, 8 + j, 8 + j, 8 + j), v);
}

#elif NCHWC_BLK == 8

#define BLK 8
#define NCHWC_FN(name) nn_nchwc8_##name
#define NCHWC_TARGET "avx2,fma"
#define TILE_PX 3
#define MAX_NOB 4
typedef __m256 nv_t;
typedef __m256 nv_keep_t;
#define nv_load(p) _mm256_loadu_ps(p)
#define nv_load_aligned(p) _mm256_load_ps(p)
#define nv_store(p, v) _mm256_storeu_ps((p), (v))
#define nv_set1(x) _mm256_set1_ps(x)
#define nv_zero() _mm256_setzero_ps()
#define nv_add(a, b) _mm256_add_ps((a), (b))
#define nv_min(a, b) _mm256_min_ps((a), (b))
#define nv_max(a, b) _mm256_max_ps((a), (b))
#define nv_div(a, b) _mm256_div_ps((a), (b))
#define nv_fmadd(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define nv_act(act, v) nn_nchwc_act8((act), (v))
#define nv_keep_first(n) \
	_mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32((int) (n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)))
#define nv_keep_all() _mm256_castsi256_ps(_mm256_set1_epi32(-1))
#define nv_keep_apply(k, v) _mm256_and_ps((k), (v))
#define nv_take_greater(u, v) _mm256_max_ps((u), (v))
#define nv_keep_none() _mm256_setzero_ps()
#define nv_fmadd_kept(k, p, b, c) \
	_mm256_blendv_ps((c), _mm256_fmadd_ps(_mm256_maskload_ps((p), _mm256_castps_si256(k)), (b), (c)), (k))

/* groups of 2 or 4 channels: both in 128-bit lanes (see the AVX-512 one) */
__attribute__((target("avx2")))
static inline __attribute__((always_inline)) __m256
nv_group_lane(__m256 v, const int cg, const int j)
{
	if (cg == 2)
		return j == 0 ? _mm256_permute_ps(v, 0xA0) : _mm256_permute_ps(v, 0xF5);
	switch (j)
	{
		case 0:
			return _mm256_permute_ps(v, 0x00);
		case 1:
			return _mm256_permute_ps(v, 0x55);
		case 2:
			return _mm256_permute_ps(v, 0xAA);
		default:
			return _mm256_permute_ps(v, 0xFF);
	}
}

#else
#error "NCHWC_BLK must be 16 or 8"
#endif

#endif							/* OX_KERNELS_CPU_CONV_NCHWC_VEC_H */
