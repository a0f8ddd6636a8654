/*
 * quant_lowbit.c
 *	  QuantizeLinear / DequantizeLinear for int4, uint4, int2, uint2, float8
 *	  and float4: type facts and segment kernels that quant.c calls.
 *
 * Quantizing to float8 follows the ONNX reference: the quotient x / scale
 * is converted with round to nearest even, saturating to the largest
 * finite value unless saturate is 0 (then out of range gives infinity for
 * E5M2 and NaN for the others); float4 has no infinity or NaN and always
 * saturates.  No zero point takes part (it must be zero).  Dequantizing
 * multiplies the float value by the scale in float32.
 */
#include "kernels/cpu/quant_lowbit.h"

#include <stdio.h>

bool
ox_quant_lowbit_is_float(ox_dtype dt)
{
	return dt == OX_FLOAT8E4M3FN || dt == OX_FLOAT8E4M3FNUZ || dt == OX_FLOAT8E5M2 ||
		dt == OX_FLOAT8E5M2FNUZ || dt == OX_FLOAT4E2M1;
}

bool
ox_quant_lowbit_int_range(ox_dtype dt, int32_t *lo, int32_t *hi)
{
	switch (dt)
	{
		case OX_INT4:
			*lo = -8;
			*hi = 7;
			return true;
		case OX_UINT4:
			*lo = 0;
			*hi = 15;
			return true;
		case OX_INT2:
			*lo = -2;
			*hi = 1;
			return true;
		case OX_UINT2:
			*lo = 0;
			*hi = 3;
			return true;
		default:
			return false;
	}
}

bool
ox_quant_lowbit_is_qtype(ox_dtype dt)
{
	int32_t		lo;
	int32_t		hi;

	return ox_quant_lowbit_is_float(dt) || ox_quant_lowbit_int_range(dt, &lo, &hi);
}

ox_code
ox_quant_lowbit_check_zero_point(ox_status *st, const char *op, const ox_tensor *zp)
{
	int64_t		n;
	const uint8_t *b;
	uint8_t		neg_zero;

	if (!zp || !ox_quant_lowbit_is_float(zp->dtype))
		return OX_OK;
	n = ox_tensor_numel(zp);
	b = zp->data;
	/* -0 is 0x80 (0x8 for float4); FNUZ types have no -0: 0x80 is their NaN */
	neg_zero = zp->dtype == OX_FLOAT4E2M1 ? 0x8 :
		(zp->dtype == OX_FLOAT8E4M3FNUZ || zp->dtype == OX_FLOAT8E5M2FNUZ) ? 0 : 0x80;
	for (int64_t i = 0; i < n; i++)
		if (b[i] != 0 && b[i] != neg_zero)
			return ox_fail(st, OX_UNSUPPORTED,
						   "%s: zero point element %lld of type %s is %g, but only 0 is supported for float8 and float4",
						   op, (long long) i, ox_dtype_name(zp->dtype),
						   (double) ox_narrow_to_float(b[i], zp->dtype));
	return OX_OK;
}

/* round a float32 quotient to a narrower precision, as the precision attribute asks */
static inline float
round_to_precision(float v, ox_dtype prec)
{
	if (prec == OX_FLOAT16)
		return ox_half_to_float(ox_float_to_half(v));
	if (prec == OX_BFLOAT16)
		return ox_bf16_to_float(ox_float_to_bf16(v));
	return v;
}

void
ox_quant_lowbit_quantize(uint8_t *y, ox_dtype y_dt, const void *x, ox_dtype x_dt,
						 const float *scale, int64_t ps, int64_t n, ox_dtype precision,
						 bool saturate)
{
	unsigned	flags = saturate ? 0 : OX_CONVERT_NO_SATURATE;

	if (x_dt == OX_INT32)
	{
		/* int32 divides in double so that large values keep their precision */
		const int32_t *xi = x;

		for (int64_t i = 0; i < n; i++)
		{
			float		q = (float) ((double) xi[i] / (double) scale[i * ps]);

			y[i] = ox_float_to_narrow(round_to_precision(q, precision), y_dt, flags);
		}
	}
	else
	{
		const float *xf = x;

		for (int64_t i = 0; i < n; i++)
			y[i] = ox_float_to_narrow(round_to_precision(xf[i] / scale[i * ps], precision),
									  y_dt, flags);
	}
}

void
ox_quant_lowbit_dequantize(float *y, const uint8_t *x, ox_dtype x_dt, const float *scale,
						   int64_t ps, int64_t n)
{
	float		table[256];

	/* every value is exact in float: decode through a table */
	for (int b = 0; b < 256; b++)
		table[b] = ox_narrow_to_float((uint8_t) b, x_dt);
	for (int64_t i = 0; i < n; i++)
		y[i] = table[x[i]] * scale[i * ps];
}
