/*
 * quant_lowbit.h
 *	  QuantizeLinear / DequantizeLinear pieces for the narrow element types,
 *	  called by quant.c.
 *
 * int4, uint4, int2 and uint2 take one byte a value in memory (see
 * util/tensor.h), so they quantize like int8/uint8 with narrower clamps:
 * ox_quant_lowbit_int_range gives the clamp.  float8 (E4M3FN, E4M3FNUZ,
 * E5M2, E5M2FNUZ) and float4 (E2M1) quantize by a float conversion of
 * x / scale, with no rounding to integers: the functions below do that per
 * contiguous segment of x, stepping through the scales like quant.c's
 * segment kernels (scale index i * ps).
 */
#ifndef OX_KERNELS_CPU_QUANT_LOWBIT_H
#define OX_KERNELS_CPU_QUANT_LOWBIT_H

#include "util/status.h"
#include "util/tensor.h"

/* int4/uint4/int2/uint2 and float8/float4: the quantized types beyond 8/16-bit ints */
bool		ox_quant_lowbit_is_qtype(ox_dtype dt);

/* float8 (all four) and float4e2m1 */
bool		ox_quant_lowbit_is_float(ox_dtype dt);

/* the saturation range of int4/uint4/int2/uint2; false for other types */
bool		ox_quant_lowbit_int_range(ox_dtype dt, int32_t *lo, int32_t *hi);

/*
 * A float8/float4 zero point must be zero (+0 or -0) everywhere: the ONNX
 * reference ignores it (float8) or requires it to be zero, and the engine
 * refuses other values rather than guess.  zp may be NULL.
 */
ox_code		ox_quant_lowbit_check_zero_point(ox_status *st, const char *op,
											 const ox_tensor *zp);

/*
 * y[i] = float8/float4 of x[i] / scale[i * ps], for i in [0, n).  x is
 * float32 or int32 (x_dt).  precision (float16, bfloat16 or OX_UNDEFINED)
 * rounds the quotient first, as QuantizeLinear-23's attribute asks;
 * saturate is the attribute of that name (float8 only; float4 always
 * saturates).
 */
void		ox_quant_lowbit_quantize(uint8_t *y, ox_dtype y_dt, const void *x, ox_dtype x_dt,
									 const float *scale, int64_t ps, int64_t n,
									 ox_dtype precision, bool saturate);

/* y[i] = float of x[i] * scale[i * ps], for float8/float4 x */
void		ox_quant_lowbit_dequantize(float *y, const uint8_t *x, ox_dtype x_dt,
									   const float *scale, int64_t ps, int64_t n);

#endif							/* OX_KERNELS_CPU_QUANT_LOWBIT_H */
