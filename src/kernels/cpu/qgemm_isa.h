/*
 * qgemm_isa.h
 *	  Private to the int8 GEMM (qgemm.c, qgemm_pack.c): the instruction-set
 *	  path chosen once from cpuid, and the target attributes of the
 *	  functions that use it (the build has no -march).
 */
#ifndef OX_QGEMM_ISA_H
#define OX_QGEMM_ISA_H

#include <stdint.h>

typedef enum qg_isa
{
	QG_PORTABLE = 0,
	QG_AVX2,
	QG_VNNI
} qg_isa;

/* the path in use: the best the CPU has, or the one a test forced */
qg_isa		ox_qg_pick(void);

#define QG_TARGET_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni,avx512vl")))
#define QG_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define QG_INLINE static inline __attribute__((always_inline))

/* int32 sums wrap like the hardware's (the spec's int32 overflow) */
static inline int32_t
wrap32(int64_t v)
{
	return (int32_t) (uint32_t) (uint64_t) v;
}

#endif							/* OX_QGEMM_ISA_H */
