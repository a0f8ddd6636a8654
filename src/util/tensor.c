/*
 * tensor.c
 *	  Tensor and value helpers: dtype facts, allocation, copies, conversion.
 */
#include "util/tensor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct
{
	const char *name;
	size_t		size;
}			dtype_info[OX_DTYPE_COUNT] = {
	[OX_UNDEFINED] = {"undefined", 0},
	[OX_FLOAT] = {"float", 4},
	[OX_UINT8] = {"uint8", 1},
	[OX_INT8] = {"int8", 1},
	[OX_UINT16] = {"uint16", 2},
	[OX_INT16] = {"int16", 2},
	[OX_INT32] = {"int32", 4},
	[OX_INT64] = {"int64", 8},
	[OX_STRING] = {"string", sizeof(ox_string)},
	[OX_BOOL] = {"bool", 1},
	[OX_FLOAT16] = {"float16", 2},
	[OX_DOUBLE] = {"double", 8},
	[OX_UINT32] = {"uint32", 4},
	[OX_UINT64] = {"uint64", 8},
	[OX_COMPLEX64] = {"complex64", 8},
	[OX_COMPLEX128] = {"complex128", 16},
	[OX_BFLOAT16] = {"bfloat16", 2},
};

size_t
ox_dtype_size(ox_dtype dt)
{
	if ((int) dt < 0 || dt >= OX_DTYPE_COUNT)
		return 0;
	return dtype_info[dt].size;
}

const char *
ox_dtype_name(ox_dtype dt)
{
	if ((int) dt < 0 || dt >= OX_DTYPE_COUNT)
		return "unknown";
	return dtype_info[dt].name;
}

bool
ox_dtype_is_float(ox_dtype dt)
{
	return dt == OX_FLOAT || dt == OX_DOUBLE || dt == OX_FLOAT16 || dt == OX_BFLOAT16;
}

bool
ox_dtype_is_int(ox_dtype dt)
{
	switch (dt)
	{
		case OX_UINT8:
		case OX_INT8:
		case OX_UINT16:
		case OX_INT16:
		case OX_INT32:
		case OX_INT64:
		case OX_UINT32:
		case OX_UINT64:
			return true;
		default:
			return false;
	}
}

bool
ox_dtype_is_signed(ox_dtype dt)
{
	return dt == OX_INT8 || dt == OX_INT16 || dt == OX_INT32 || dt == OX_INT64 ||
		ox_dtype_is_float(dt);
}

int64_t
ox_shape_numel(int rank, const int64_t *dims)
{
	int64_t		n = 1;

	for (int i = 0; i < rank; i++)
	{
		if (dims[i] < 0)
			return -1;
		if (dims[i] == 0)
			return 0;
		if (n > OX_MAX_ELEMENTS / dims[i])
			return -1;
		n *= dims[i];
	}
	return n;
}

bool
ox_shape_equal(int ra, const int64_t *a, int rb, const int64_t *b)
{
	if (ra != rb)
		return false;
	for (int i = 0; i < ra; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

const char *
ox_shape_str(int rank, const int64_t *dims, char *buf, size_t len)
{
	size_t		off = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	off += snprintf(buf + off, len - off, "[");
	for (int i = 0; i < rank && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%lld", i ? ", " : "", (long long) dims[i]);
	if (off < len)
		snprintf(buf + off, len - off, "]");
	return buf;
}

void *
ox_aligned_alloc(size_t bytes)
{
	void	   *p = NULL;

	if (bytes == 0)
		bytes = 64;
	if (posix_memalign(&p, 64, (bytes + 63) & ~(size_t) 63) != 0)
		return NULL;
	return p;
}

void
ox_aligned_free(void *p)
{
	free(p);
}

static void
free_strings(ox_tensor *t)
{
	if (t->dtype == OX_STRING && t->owns && t->data)
	{
		int64_t		n = ox_tensor_numel(t);
		ox_string  *s = t->data;

		for (int64_t i = 0; i < n; i++)
		{
			free(s[i].data);
			s[i].data = NULL;
			s[i].len = 0;
		}
	}
}

static ox_code
tensor_alloc(ox_tensor *t, ox_dtype dt, int rank, const int64_t *dims, bool zero,
			 ox_status *st)
{
	int64_t		n;
	size_t		bytes;

	if (rank < 0 || rank > OX_MAX_RANK)
		return ox_fail(st, OX_INVALID_ARGUMENT, "tensor rank %d exceeds the limit of %d",
					   rank, OX_MAX_RANK);
	if (ox_dtype_size(dt) == 0)
		return ox_fail(st, OX_UNSUPPORTED, "element type %d is not supported", (int) dt);
	n = ox_shape_numel(rank, dims);
	if (n < 0)
		return ox_fail(st, OX_LIMIT_EXCEEDED, "tensor shape has a negative dimension or too many elements");
	bytes = (size_t) n * ox_dtype_size(dt);

	free_strings(t);
	if (!t->owns || t->capacity < bytes || bytes == 0 || t->capacity > 4 * bytes + 4096)
	{
		if (t->owns)
			ox_aligned_free(t->data);
		t->data = NULL;
		t->capacity = 0;
		t->owns = true;
		t->data = ox_aligned_alloc(bytes);
		if (!t->data)
			return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate %zu bytes for a tensor", bytes);
		t->capacity = bytes ? bytes : 64;
	}
	t->dtype = dt;
	t->rank = rank;
	for (int i = 0; i < rank; i++)
		t->dims[i] = dims[i];
	if (zero || dt == OX_STRING)
		memset(t->data, 0, bytes);
	return OX_OK;
}

ox_code
ox_tensor_alloc(ox_tensor *t, ox_dtype dt, int rank, const int64_t *dims, ox_status *st)
{
	return tensor_alloc(t, dt, rank, dims, false, st);
}

ox_code
ox_tensor_alloc_zero(ox_tensor *t, ox_dtype dt, int rank, const int64_t *dims, ox_status *st)
{
	return tensor_alloc(t, dt, rank, dims, true, st);
}

void
ox_tensor_release(ox_tensor *t)
{
	free_strings(t);
	if (t->owns)
		ox_aligned_free(t->data);
	t->data = NULL;
	t->capacity = 0;
	t->owns = false;
	t->rank = 0;
}

ox_code
ox_tensor_copy(ox_tensor *dst, const ox_tensor *src, ox_status *st)
{
	int64_t		n = ox_tensor_numel(src);

	if (dst == src)
		return OX_OK;
	OX_TRY(ox_tensor_alloc(dst, src->dtype, src->rank, src->dims, st));
	if (n <= 0)
		return OX_OK;
	if (src->dtype == OX_STRING)
	{
		const ox_string *s = src->data;
		ox_string  *d = dst->data;

		for (int64_t i = 0; i < n; i++)
		{
			d[i].data = malloc(s[i].len + 1);
			if (!d[i].data)
				return ox_fail(st, OX_OUT_OF_MEMORY, "could not copy a string tensor");
			if (s[i].len)
				memcpy(d[i].data, s[i].data, s[i].len);
			d[i].data[s[i].len] = '\0';
			d[i].len = s[i].len;
		}
	}
	else
		memcpy(dst->data, src->data, (size_t) n * ox_dtype_size(src->dtype));
	return OX_OK;
}

void
ox_tensor_view(ox_tensor *dst, const ox_tensor *src)
{
	*dst = *src;
	dst->owns = false;
	dst->capacity = 0;
}

void
ox_value_init_tensor(ox_value *v)
{
	memset(v, 0, sizeof(*v));
	v->kind = OX_VALUE_TENSOR;
}

void
ox_value_release(ox_value *v)
{
	ox_tensor_release(&v->tensor);
	for (int i = 0; i < v->seq_len; i++)
		ox_value_release(&v->seq_items[i]);
	free(v->seq_items);
	v->seq_items = NULL;
	v->seq_len = v->seq_cap = 0;
	ox_tensor_release(&v->map_keys);
	ox_tensor_release(&v->map_values);
}

ox_code
ox_value_copy(ox_value *dst, const ox_value *src, ox_status *st)
{
	if (dst == src)
		return OX_OK;
	ox_value_release(dst);
	dst->kind = src->kind;
	dst->seq_elem_dtype = src->seq_elem_dtype;
	switch (src->kind)
	{
		case OX_VALUE_TENSOR:
			return ox_tensor_copy(&dst->tensor, &src->tensor, st);
		case OX_VALUE_SEQUENCE:
			for (int i = 0; i < src->seq_len; i++)
				OX_TRY(ox_value_seq_append(dst, &src->seq_items[i], st));
			return OX_OK;
		case OX_VALUE_MAP:
			OX_TRY(ox_tensor_copy(&dst->map_keys, &src->map_keys, st));
			return ox_tensor_copy(&dst->map_values, &src->map_values, st);
		case OX_VALUE_NONE:
			return OX_OK;
	}
	return OX_OK;
}

ox_value *
ox_value_seq_push(ox_value *seq, ox_status *st)
{
	ox_value   *item;

	seq->kind = OX_VALUE_SEQUENCE;
	if (seq->seq_len == seq->seq_cap)
	{
		int			cap = seq->seq_cap ? seq->seq_cap * 2 : 8;
		ox_value   *items = realloc(seq->seq_items, sizeof(ox_value) * cap);

		if (!items)
		{
			ox_fail(st, OX_OUT_OF_MEMORY, "could not grow a sequence");
			return NULL;
		}
		seq->seq_items = items;
		seq->seq_cap = cap;
	}
	item = &seq->seq_items[seq->seq_len++];
	ox_value_init_tensor(item);
	return item;
}

ox_code
ox_value_seq_append(ox_value *seq, const ox_value *item, ox_status *st)
{
	ox_value   *slot = ox_value_seq_push(seq, st);

	if (!slot)
		return OX_OUT_OF_MEMORY;
	return ox_value_copy(slot, item, st);
}

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
			return ((const int8_t *) p)[i];
		case OX_UINT8:
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
			return ((const int8_t *) p)[i];
		case OX_UINT8:
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

/*
 * Numeric conversion.  Float -> integer follows C truncation with
 * saturation of out-of-range values (ONNX leaves those undefined; we choose
 * a defined answer rather than C's undefined behaviour).
 */
#define CONVERT_FROM(SRC_T, GET) \
	do { \
		const SRC_T *s = src; \
		switch (dst_dt) \
		{ \
			case OX_FLOAT: for (int64_t i = 0; i < n; i++) ((float *) dst)[i] = (float) (GET); break; \
			case OX_DOUBLE: for (int64_t i = 0; i < n; i++) ((double *) dst)[i] = (double) (GET); break; \
			case OX_FLOAT16: for (int64_t i = 0; i < n; i++) ((uint16_t *) dst)[i] = ox_float_to_half((float) (GET)); break; \
			case OX_BFLOAT16: for (int64_t i = 0; i < n; i++) ((uint16_t *) dst)[i] = ox_float_to_bf16((float) (GET)); break; \
			case OX_BOOL: for (int64_t i = 0; i < n; i++) ((uint8_t *) dst)[i] = (GET) != 0; break; \
			case OX_INT8: for (int64_t i = 0; i < n; i++) ((int8_t *) dst)[i] = (int8_t) sat_i64((GET), INT8_MIN, INT8_MAX); break; \
			case OX_UINT8: for (int64_t i = 0; i < n; i++) ((uint8_t *) dst)[i] = (uint8_t) sat_i64((GET), 0, UINT8_MAX); break; \
			case OX_INT16: for (int64_t i = 0; i < n; i++) ((int16_t *) dst)[i] = (int16_t) sat_i64((GET), INT16_MIN, INT16_MAX); break; \
			case OX_UINT16: for (int64_t i = 0; i < n; i++) ((uint16_t *) dst)[i] = (uint16_t) sat_i64((GET), 0, UINT16_MAX); break; \
			case OX_INT32: for (int64_t i = 0; i < n; i++) ((int32_t *) dst)[i] = (int32_t) sat_i64((GET), INT32_MIN, INT32_MAX); break; \
			case OX_UINT32: for (int64_t i = 0; i < n; i++) ((uint32_t *) dst)[i] = (uint32_t) sat_i64((GET), 0, UINT32_MAX); break; \
			case OX_INT64: for (int64_t i = 0; i < n; i++) ((int64_t *) dst)[i] = sat_i64((GET), INT64_MIN, INT64_MAX); break; \
			case OX_UINT64: for (int64_t i = 0; i < n; i++) ((uint64_t *) dst)[i] = sat_u64(GET); break; \
			default: return ox_fail(st, OX_UNSUPPORTED, "cannot convert to %s", ox_dtype_name(dst_dt)); \
		} \
	} while (0)

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

ox_code
ox_convert_elements(void *dst, ox_dtype dst_dt, const void *src, ox_dtype src_dt,
					int64_t n, ox_status *st)
{
	if (src_dt == dst_dt)
	{
		if (src_dt == OX_STRING)
			return ox_fail(st, OX_INTERNAL, "string copy through numeric conversion");
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
			CONVERT_FROM(int8_t, s[i]);
			break;
		case OX_UINT8:
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
		default:
			return ox_fail(st, OX_UNSUPPORTED, "cannot convert from %s", ox_dtype_name(src_dt));
	}
	return OX_OK;
}
