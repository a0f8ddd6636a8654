/*
 * tensor_convert.c
 *	  Element conversion between dtypes: float16, bfloat16, the narrow
 *	  floats (float8 E4M3FN/E4M3FNUZ/E5M2/E5M2FNUZ, float4 E2M1, float8
 *	  E8M0) and integers of every width; element access as double/int64;
 *	  BitCast copies.
 *
 * Rounding is to nearest even everywhere except float8e8m0, which rounds
 * as the Cast round_mode attribute asks.  The narrow-float encodings, their
 * NaN and overflow behaviour and the quirks noted below reproduce ml_dtypes
 * and the ONNX reference (onnx.numpy_helper), which made the ONNX test
 * data; test/unit/test_dtypes.c holds tables generated from them.
 */
#include "util/tensor.h"

#include <math.h>
#include <string.h>

/* IEEE half <-> float, handling subnormals, infinities and NaN */
float
ox_half_to_float(uint16_t h)
{
	uint32_t	sign = (uint32_t) (h & 0x8000) << 16;
	uint32_t	exp = (h >> 10) & 0x1f;
	uint32_t	mant = h & 0x3ff;
	uint32_t	bits;
	float		f;

	if (exp == 0)
	{
		if (mant == 0)
			bits = sign;
		else
		{
			/* subnormal: normalize */
			int			e = -1;

			do
			{
				mant <<= 1;
				e++;
			} while ((mant & 0x400) == 0);
			mant &= 0x3ff;
			bits = sign | ((uint32_t) (127 - 15 - e) << 23) | (mant << 13);
		}
	}
	else if (exp == 0x1f)
		bits = sign | 0x7f800000u | (mant << 13);
	else
		bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
	memcpy(&f, &bits, 4);
	return f;
}

uint16_t
ox_float_to_half(float f)
{
	uint32_t	x;
	uint32_t	sign;
	int32_t		exp;
	uint32_t	mant;

	memcpy(&x, &f, 4);
	sign = (x >> 16) & 0x8000;
	exp = (int32_t) ((x >> 23) & 0xff);
	mant = x & 0x7fffff;
	if (exp == 0xff)
		return (uint16_t) (sign | 0x7c00 | (mant ? 0x200 | (mant >> 13) : 0));
	exp = exp - 127 + 15;
	if (exp >= 0x1f)
		return (uint16_t) (sign | 0x7c00);
	if (exp <= 0)
	{
		uint32_t	m;
		uint32_t	shift;
		uint32_t	half_bit;
		uint32_t	res;

		if (exp < -10)
			return (uint16_t) sign;
		m = mant | 0x800000;
		shift = (uint32_t) (14 - exp);
		res = m >> shift;
		half_bit = 1u << (shift - 1);
		/* round to nearest even */
		if ((m & half_bit) && ((m & (half_bit - 1)) || (res & 1)))
			res++;
		return (uint16_t) (sign | res);
	}
	else
	{
		uint32_t	res = sign | ((uint32_t) exp << 10) | (mant >> 13);

		if ((mant & 0x1000) && ((mant & 0x1fff) != 0x1000 || (res & 1)))
			res++;				/* may carry into the exponent: correct */
		return (uint16_t) res;
	}
}

float
ox_bf16_to_float(uint16_t h)
{
	uint32_t	bits = (uint32_t) h << 16;
	float		f;

	memcpy(&f, &bits, 4);
	return f;
}

uint16_t
ox_float_to_bf16(float f)
{
	uint32_t	x;

	memcpy(&x, &f, 4);
	if (isnan(f))
		return (uint16_t) ((x >> 16) | 0x40);
	x += 0x7fff + ((x >> 16) & 1);
	return (uint16_t) (x >> 16);
}

/*
 * IEEE half from double, rounding once: going through float would round
 * twice and miss by one unit where the float lands on a half-way point.
 */
uint16_t
ox_double_to_half(double d)
{
	uint64_t	x;
	uint32_t	sign;
	int32_t		exp;
	uint64_t	mant;

	memcpy(&x, &d, 8);
	sign = (uint32_t) (x >> 48) & 0x8000;
	exp = (int32_t) ((x >> 52) & 0x7ff);
	mant = x & ((UINT64_C(1) << 52) - 1);
	if (exp == 0x7ff)
		return (uint16_t) (sign | 0x7c00 | (mant ? 0x200 | (uint32_t) (mant >> 42) : 0));
	exp = exp - 1023 + 15;
	if (exp >= 0x1f)
		return (uint16_t) (sign | 0x7c00);
	if (exp <= 0)
	{
		/* a half subnormal (or zero): shift the 53-bit significand into place */
		uint64_t	m;
		uint64_t	half_bit;
		uint64_t	res;
		int			shift;

		if (exp < -10)
			return (uint16_t) sign;
		m = mant | (UINT64_C(1) << 52);
		shift = 43 - exp;
		res = m >> shift;
		half_bit = UINT64_C(1) << (shift - 1);
		if ((m & half_bit) && ((m & (half_bit - 1)) || (res & 1)))
			res++;
		return (uint16_t) (sign | (uint32_t) res);
	}
	else
	{
		uint32_t	res = sign | ((uint32_t) exp << 10) | (uint32_t) (mant >> 42);
		uint64_t	rest = mant & ((UINT64_C(1) << 42) - 1);
		uint64_t	half = UINT64_C(1) << 41;

		/* may carry into the exponent, up to infinity: correct */
		if (rest > half || (rest == half && (res & 1)))
			res++;
		return (uint16_t) res;
	}
}

/* ---- float8, float4 and float8e8m0 ------------------------------------- */

/*
 * A sign-magnitude narrow float.  Magnitudes are codes exp << mbits | mant
 * that grow with the value, so rounding up carries into the exponent.
 */
typedef struct narrow_format
{
	uint8_t		mbits;			/* mantissa bits */
	uint8_t		bias;
	uint8_t		sign;			/* the sign bit */
	uint8_t		max;			/* the largest finite magnitude */
	uint8_t		nan;			/* NaN magnitude; 0: none, or 0x80 alone (FNUZ) */
	bool		fnuz;			/* 0x80 is the only NaN: no -0 */
	bool		inf;			/* max + 1 is infinity (E5M2) */
} narrow_format;

static const narrow_format fmt_e4m3fn = {3, 7, 0x80, 0x7e, 0x7f, false, false};
static const narrow_format fmt_e4m3fnuz = {3, 8, 0x80, 0x7f, 0, true, false};
/* E5M2 NaN: ml_dtypes writes the quiet NaN 0x7e whatever the payload */
static const narrow_format fmt_e5m2 = {2, 15, 0x80, 0x7b, 0x7e, false, true};
static const narrow_format fmt_e5m2fnuz = {2, 16, 0x80, 0x7f, 0, true, false};
static const narrow_format fmt_e2m1 = {1, 1, 0x08, 0x07, 0, false, false};

static const narrow_format *
narrow_format_of(ox_dtype dt)
{
	switch (dt)
	{
		case OX_FLOAT8E4M3FN:
			return &fmt_e4m3fn;
		case OX_FLOAT8E4M3FNUZ:
			return &fmt_e4m3fnuz;
		case OX_FLOAT8E5M2:
			return &fmt_e5m2;
		case OX_FLOAT8E5M2FNUZ:
			return &fmt_e5m2fnuz;
		case OX_FLOAT4E2M1:
			return &fmt_e2m1;
		default:
			return NULL;
	}
}

/*
 * Round f to nearest even in fmt.  Out of range (infinities included)
 * saturates to the largest finite value, or with saturate false becomes
 * infinity (E5M2) or NaN (the rest), as the ONNX Cast tables say.  float4
 * has neither, so it always saturates.
 */
static uint8_t
narrow_encode(float f, const narrow_format *fmt, bool saturate)
{
	uint32_t	x;
	uint32_t	ax;
	uint32_t	code;
	uint8_t		sign;

	memcpy(&x, &f, 4);
	sign = (x >> 31) ? fmt->sign : 0;
	ax = x & 0x7fffffff;
	if (ax > 0x7f800000)
	{
		if (fmt->fnuz)
			return 0x80;
		if (fmt->nan)
			return (uint8_t) (sign | fmt->nan);
		/* float4 has no NaN: ml_dtypes (hence the ONNX test data) gives +NaN -0, -NaN +0 */
		return (uint8_t) (sign ^ fmt->sign);
	}
	if (ax == 0x7f800000)
		code = UINT32_MAX;
	else if (ax < 0x00800000)
		code = 0;				/* float32 subnormal: far below every narrow subnormal */
	else
	{
		int			e = (int) (ax >> 23) - 127;
		int			emin = 1 - fmt->bias;
		int			shift = 23 - fmt->mbits;
		uint32_t	base;
		uint32_t	rest;
		uint32_t	half;

		if (e >= emin)
		{
			base = ((uint32_t) (e + fmt->bias) << fmt->mbits) | ((ax & 0x7fffff) >> shift);
			rest = ax & ((1u << shift) - 1);
		}
		else
		{
			/* a narrow subnormal: the whole significand shifted further */
			uint32_t	sig = (ax & 0x7fffff) | 0x800000;

			shift += emin - e;
			if (shift > 24)
				shift = 25;		/* sig < 2^24 <= half: rounds to zero */
			base = shift > 24 ? 0 : sig >> shift;
			rest = shift > 24 ? sig : sig & ((1u << shift) - 1);
		}
		half = 1u << (shift - 1);
		code = base + (rest > half || (rest == half && (base & 1)));
	}
	if (code > fmt->max)
	{
		if (saturate || !(fmt->nan || fmt->fnuz || fmt->inf))
			code = fmt->max;
		else if (fmt->inf)
			code = fmt->max + 1u;
		else if (fmt->fnuz)
			return 0x80;
		else
			return (uint8_t) (sign | fmt->nan);
	}
	if (code == 0 && fmt->fnuz)
		return 0;
	return (uint8_t) (sign | code);
}

/*
 * float8e8m0 keeps only the float32 exponent field, rounded as the ONNX
 * reference (onnx.numpy_helper.to_float8e8m0) does: up when any mantissa
 * bit is set, down never, nearest on the guard bit (ties up; below the
 * float32 normals only past the tie).  NaN and infinities become NaN (0xFF),
 * as do values that round past 2^127 unless saturating.  The sign is
 * ignored: negative values are undefined for the type.
 */
static uint8_t
e8m0_encode(float f, unsigned flags)
{
	uint32_t	x;
	uint32_t	exp;
	bool		up;

	memcpy(&x, &f, 4);
	exp = (x >> 23) & 0xff;
	if (exp == 0xff)
		return 0xff;
	if (flags & OX_CONVERT_E8M0_DOWN)
		up = false;
	else if (flags & OX_CONVERT_E8M0_NEAREST)
		up = (x & 0x400000) && ((x & 0x200000) || (x & 0x1fffff) || exp > 0);
	else
		up = (x & 0x7fffff) != 0;
	if (up && !(exp == 0xfe && !(flags & OX_CONVERT_NO_SATURATE)))
		exp++;
	return (uint8_t) exp;
}

float
ox_narrow_to_float(uint8_t bits, ox_dtype dt)
{
	const narrow_format *fmt;
	uint32_t	mag;
	uint32_t	exp;
	uint32_t	mant;
	float		v;

	if (dt == OX_FLOAT8E8M0)
		return bits == 0xff ? NAN : ldexpf(1.0f, (int) bits - 127);
	fmt = narrow_format_of(dt);
	if (!fmt)
		return 0.0f;
	if (fmt->fnuz && bits == 0x80)
		return -NAN;			/* the sign bit set, as ml_dtypes decodes it */
	mag = bits & (fmt->sign - 1u);
	if (mag > fmt->max)
		v = fmt->inf && mag == fmt->max + 1u ? INFINITY : NAN;
	else
	{
		exp = mag >> fmt->mbits;
		mant = mag & ((1u << fmt->mbits) - 1);
		if (exp == 0)
			v = ldexpf((float) mant, 1 - fmt->bias - fmt->mbits);
		else
			v = ldexpf((float) (mant | (1u << fmt->mbits)), (int) exp - fmt->bias - fmt->mbits);
	}
	return (bits & fmt->sign) ? -v : v;
}

uint8_t
ox_float_to_narrow(float f, ox_dtype dt, unsigned flags)
{
	const narrow_format *fmt;

	if (dt == OX_FLOAT8E8M0)
		return e8m0_encode(f, flags);
	fmt = narrow_format_of(dt);
	return fmt ? narrow_encode(f, fmt, !(flags & OX_CONVERT_NO_SATURATE)) : 0;
}

/* all 256 values of a narrow float type, for conversion loops */
static void
narrow_table(ox_dtype dt, float *table)
{
	for (int b = 0; b < 256; b++)
		table[b] = ox_narrow_to_float((uint8_t) b, dt);
}

/* ---- element access ------------------------------------------------------ */

double
ox_tensor_get_double(const ox_tensor *t, int64_t i)
{
	const void *p = t->data;

	switch (t->dtype)
	{
		case OX_FLOAT:
			return ((const float *) p)[i];
		case OX_DOUBLE:
			return ((const double *) p)[i];
		case OX_FLOAT16:
			return ox_half_to_float(((const uint16_t *) p)[i]);
		case OX_BFLOAT16:
			return ox_bf16_to_float(((const uint16_t *) p)[i]);
		case OX_INT8:
		case OX_INT4:
		case OX_INT2:
			return ((const int8_t *) p)[i];
		case OX_UINT8:
		case OX_UINT4:
		case OX_UINT2:
			return ((const uint8_t *) p)[i];
		case OX_INT16:
			return ((const int16_t *) p)[i];
		case OX_UINT16:
			return ((const uint16_t *) p)[i];
		case OX_INT32:
			return ((const int32_t *) p)[i];
		case OX_UINT32:
			return ((const uint32_t *) p)[i];
		case OX_INT64:
			return (double) ((const int64_t *) p)[i];
		case OX_UINT64:
			return (double) ((const uint64_t *) p)[i];
		case OX_BOOL:
			return ((const uint8_t *) p)[i] ? 1.0 : 0.0;
		case OX_FLOAT8E4M3FN:
		case OX_FLOAT8E4M3FNUZ:
		case OX_FLOAT8E5M2:
		case OX_FLOAT8E5M2FNUZ:
		case OX_FLOAT4E2M1:
		case OX_FLOAT8E8M0:
			return ox_narrow_to_float(((const uint8_t *) p)[i], t->dtype);
		default:
			return 0.0;
	}
}

int64_t
ox_tensor_get_int64(const ox_tensor *t, int64_t i)
{
	const void *p = t->data;

	switch (t->dtype)
	{
		case OX_INT64:
			return ((const int64_t *) p)[i];
		case OX_INT32:
			return ((const int32_t *) p)[i];
		case OX_UINT64:
			return (int64_t) ((const uint64_t *) p)[i];
		case OX_UINT32:
			return ((const uint32_t *) p)[i];
		case OX_INT16:
			return ((const int16_t *) p)[i];
		case OX_UINT16:
			return ((const uint16_t *) p)[i];
		case OX_INT8:
		case OX_INT4:
		case OX_INT2:
			return ((const int8_t *) p)[i];
		case OX_UINT8:
		case OX_UINT4:
		case OX_UINT2:
		case OX_BOOL:
			return ((const uint8_t *) p)[i];
		default:
			{
				double		d = ox_tensor_get_double(t, i);

				if (isnan(d))
					return 0;
				if (d >= 9.2e18)
					return INT64_MAX;
				if (d <= -9.2e18)
					return INT64_MIN;
				return (int64_t) d;
			}
	}
}

void
ox_int8_column_sums(const ox_tensor *b, const ox_tensor *zp, int32_t *sums)
{
	int64_t		k = b->dims[0],
				n = b->dims[1];

	for (int64_t j = 0; j < n; j++)
	{
		int64_t		z = zp ? ox_tensor_get_int64(zp, ox_tensor_numel(zp) == 1 ? 0 : j) : 0;
		int64_t		sum = 0;

		for (int64_t i = 0; i < k; i++)
			sum += (b->dtype == OX_INT8 ? ((const int8_t *) b->data)[i * n + j]
					: ((const uint8_t *) b->data)[i * n + j]) - z;
		sums[j] = (int32_t) (uint32_t) sum;
	}
}

/* ---- conversion ------------------------------------------------------------ */

static inline int64_t
sat_i64_d(double v, int64_t lo, int64_t hi)
{
	if (isnan(v))
		return 0;
	if (v <= (double) lo)
		return lo;
	if (v >= (double) hi)
		return hi;
	return (int64_t) v;
}

/* integers wrap like a C cast (what ONNX Cast does in practice); floats saturate */
#define sat_i64(v, lo, hi) _Generic((v), \
	float: sat_i64_d((double) (v), (lo), (hi)), \
	double: sat_i64_d((v), (lo), (hi)), \
	default: (int64_t) (v))
#define sat_u64(v) _Generic((v), \
	float: (uint64_t) sat_i64_d((double) (v), 0, INT64_MAX), \
	double: (uint64_t) sat_i64_d((v), 0, INT64_MAX), \
	default: (uint64_t) (v))

/* the low bits of v, sign-extended (int4, int2) or not (uint4, uint2) */
static inline int8_t
wrap_signed(int64_t v, int bits)
{
	int64_t		low = v & ((INT64_C(1) << bits) - 1);

	return (int8_t) (low >= (INT64_C(1) << (bits - 1)) ? low - (INT64_C(1) << bits) : low);
}

static inline uint8_t
wrap_unsigned(int64_t v, int bits)
{
	return (uint8_t) (v & ((INT64_C(1) << bits) - 1));
}

/* float16 from a double rounds once; from anything else through float */
#define to_half(v) _Generic((v), \
	double: ox_double_to_half((double) (v)), \
	default: ox_float_to_half((float) (v)))

#define STORE(T, EXPR) \
	for (int64_t i = 0; i < n; i++) \
		((T *) dst)[i] = (T) (EXPR); \
	break

/*
 * Numeric conversion.  Float -> integer follows C truncation with
 * saturation of out-of-range values (ONNX leaves those undefined; we choose
 * a defined answer rather than C's undefined behaviour), except that 4- and
 * 2-bit targets keep the low bits of the truncated value, as the ONNX
 * reference does (test_cast_FLOAT_to_INT4: 8 -> -8).
 */
#define CONVERT_FROM(SRC_T, GET) \
	do { \
		const SRC_T *s = src; \
		switch (dst_dt) \
		{ \
			case OX_FLOAT: STORE(float, (GET)); \
			case OX_DOUBLE: STORE(double, (GET)); \
			case OX_FLOAT16: STORE(uint16_t, to_half(GET)); \
			case OX_BFLOAT16: STORE(uint16_t, ox_float_to_bf16((float) (GET))); \
			case OX_BOOL: STORE(uint8_t, (GET) != 0); \
			case OX_INT8: STORE(int8_t, sat_i64((GET), INT8_MIN, INT8_MAX)); \
			case OX_UINT8: STORE(uint8_t, sat_i64((GET), 0, UINT8_MAX)); \
			case OX_INT16: STORE(int16_t, sat_i64((GET), INT16_MIN, INT16_MAX)); \
			case OX_UINT16: STORE(uint16_t, sat_i64((GET), 0, UINT16_MAX)); \
			case OX_INT32: STORE(int32_t, sat_i64((GET), INT32_MIN, INT32_MAX)); \
			case OX_UINT32: STORE(uint32_t, sat_i64((GET), 0, UINT32_MAX)); \
			case OX_INT64: STORE(int64_t, sat_i64((GET), INT64_MIN, INT64_MAX)); \
			case OX_UINT64: STORE(uint64_t, sat_u64(GET)); \
			case OX_INT4: STORE(int8_t, wrap_signed(sat_i64((GET), INT64_MIN, INT64_MAX), 4)); \
			case OX_UINT4: STORE(uint8_t, wrap_unsigned(sat_i64((GET), INT64_MIN, INT64_MAX), 4)); \
			case OX_INT2: STORE(int8_t, wrap_signed(sat_i64((GET), INT64_MIN, INT64_MAX), 2)); \
			case OX_UINT2: STORE(uint8_t, wrap_unsigned(sat_i64((GET), INT64_MIN, INT64_MAX), 2)); \
			case OX_FLOAT8E4M3FN: \
			case OX_FLOAT8E4M3FNUZ: \
			case OX_FLOAT8E5M2: \
			case OX_FLOAT8E5M2FNUZ: \
			case OX_FLOAT4E2M1: \
			case OX_FLOAT8E8M0: \
				STORE(uint8_t, ox_float_to_narrow((float) (GET), dst_dt, flags)); \
			default: return ox_fail(st, OX_UNSUPPORTED, "cannot convert to %s", ox_dtype_name(dst_dt)); \
		} \
	} while (0)

ox_code
ox_convert_elements_ex(void *dst, ox_dtype dst_dt, const void *src, ox_dtype src_dt,
					   int64_t n, unsigned flags, ox_status *st)
{
	if (src_dt == dst_dt)
	{
		if (src_dt == OX_STRING)
			return ox_fail(st, OX_INTERNAL, "string copy through numeric conversion");
		if (n > 0)
			memcpy(dst, src, (size_t) n * ox_dtype_size(src_dt));
		return OX_OK;
	}
	switch (src_dt)
	{
		case OX_FLOAT:
			CONVERT_FROM(float, s[i]);
			break;
		case OX_DOUBLE:
			CONVERT_FROM(double, s[i]);
			break;
		case OX_FLOAT16:
			CONVERT_FROM(uint16_t, ox_half_to_float(s[i]));
			break;
		case OX_BFLOAT16:
			CONVERT_FROM(uint16_t, ox_bf16_to_float(s[i]));
			break;
		case OX_BOOL:
			CONVERT_FROM(uint8_t, (uint8_t) (s[i] != 0));
			break;
		case OX_INT8:
		case OX_INT4:
		case OX_INT2:
			CONVERT_FROM(int8_t, s[i]);
			break;
		case OX_UINT8:
		case OX_UINT4:
		case OX_UINT2:
			CONVERT_FROM(uint8_t, s[i]);
			break;
		case OX_INT16:
			CONVERT_FROM(int16_t, s[i]);
			break;
		case OX_UINT16:
			CONVERT_FROM(uint16_t, s[i]);
			break;
		case OX_INT32:
			CONVERT_FROM(int32_t, s[i]);
			break;
		case OX_UINT32:
			CONVERT_FROM(uint32_t, s[i]);
			break;
		case OX_INT64:
			CONVERT_FROM(int64_t, s[i]);
			break;
		case OX_UINT64:
			CONVERT_FROM(uint64_t, s[i]);
			break;
		case OX_FLOAT8E4M3FN:
		case OX_FLOAT8E4M3FNUZ:
		case OX_FLOAT8E5M2:
		case OX_FLOAT8E5M2FNUZ:
		case OX_FLOAT4E2M1:
		case OX_FLOAT8E8M0:
			{
				/* every value is exact in float */
				float		table[256];

				narrow_table(src_dt, table);
				CONVERT_FROM(uint8_t, table[s[i]]);
				break;
			}
		default:
			return ox_fail(st, OX_UNSUPPORTED, "cannot convert from %s", ox_dtype_name(src_dt));
	}
	return OX_OK;
}

ox_code
ox_convert_elements(void *dst, ox_dtype dst_dt, const void *src, ox_dtype src_dt,
					int64_t n, ox_status *st)
{
	return ox_convert_elements_ex(dst, dst_dt, src, src_dt, n, 0, st);
}

void
ox_bitcast_elements(void *dst, ox_dtype dst_dt, const void *src, ox_dtype src_dt,
					int64_t n)
{
	const uint8_t *s = src;
	uint8_t    *d = dst;
	int			bits = ox_dtype_bits(dst_dt);

	(void) src_dt;
	if (n <= 0)
		return;
	if (dst_dt == OX_BOOL)
	{
		for (int64_t i = 0; i < n; i++)
			d[i] = s[i] != 0;
	}
	else if (bits > 0 && bits < 8)
	{
		/* one element per byte: keep its low bits, extended for the new type */
		uint8_t		mask = (uint8_t) ((1u << bits) - 1);
		bool		sign = dst_dt == OX_INT4 || dst_dt == OX_INT2;

		for (int64_t i = 0; i < n; i++)
		{
			uint8_t		v = s[i] & mask;

			d[i] = sign && (v >> (bits - 1)) ? (uint8_t) (v | ~mask) : v;
		}
	}
	else
		memcpy(dst, src, (size_t) n * ox_dtype_size(dst_dt));
}
