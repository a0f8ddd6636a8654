/*
 * tensor.c
 *	  Tensor and value helpers: dtype facts, allocation, copies, values.
 *	  Element conversion lives in tensor_convert.c.
 */
#include "util/tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const dtype_names[OX_DTYPE_COUNT] = {
	[OX_UNDEFINED] = "undefined",
	[OX_FLOAT] = "float",
	[OX_UINT8] = "uint8",
	[OX_INT8] = "int8",
	[OX_UINT16] = "uint16",
	[OX_INT16] = "int16",
	[OX_INT32] = "int32",
	[OX_INT64] = "int64",
	[OX_STRING] = "string",
	[OX_BOOL] = "bool",
	[OX_FLOAT16] = "float16",
	[OX_DOUBLE] = "double",
	[OX_UINT32] = "uint32",
	[OX_UINT64] = "uint64",
	[OX_COMPLEX64] = "complex64",
	[OX_COMPLEX128] = "complex128",
	[OX_BFLOAT16] = "bfloat16",
	[OX_FLOAT8E4M3FN] = "float8e4m3fn",
	[OX_FLOAT8E4M3FNUZ] = "float8e4m3fnuz",
	[OX_FLOAT8E5M2] = "float8e5m2",
	[OX_FLOAT8E5M2FNUZ] = "float8e5m2fnuz",
	[OX_UINT4] = "uint4",
	[OX_INT4] = "int4",
	[OX_FLOAT4E2M1] = "float4e2m1",
	[OX_FLOAT8E8M0] = "float8e8m0",
	[OX_UINT2] = "uint2",
	[OX_INT2] = "int2",
};

/* bytes per element in memory, for the inline ox_dtype_size (tensor.h) */
const uint8_t ox_dtype_sizes[OX_DTYPE_COUNT] = {
	[OX_FLOAT] = 4, [OX_UINT8] = 1, [OX_INT8] = 1, [OX_UINT16] = 2, [OX_INT16] = 2,
	[OX_INT32] = 4, [OX_INT64] = 8, [OX_STRING] = sizeof(ox_string), [OX_BOOL] = 1,
	[OX_FLOAT16] = 2, [OX_DOUBLE] = 8, [OX_UINT32] = 4, [OX_UINT64] = 8, [OX_COMPLEX64] = 8,
	[OX_COMPLEX128] = 16, [OX_BFLOAT16] = 2, [OX_FLOAT8E4M3FN] = 1, [OX_FLOAT8E4M3FNUZ] = 1,
	[OX_FLOAT8E5M2] = 1, [OX_FLOAT8E5M2FNUZ] = 1, [OX_UINT4] = 1, [OX_INT4] = 1,
	[OX_FLOAT4E2M1] = 1, [OX_FLOAT8E8M0] = 1, [OX_UINT2] = 1, [OX_INT2] = 1,
};

const char *
ox_dtype_name(ox_dtype dt)
{
	if ((int) dt < 0 || dt >= OX_DTYPE_COUNT)
		return "unknown";
	return dtype_names[dt];
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
		dt == OX_INT4 || dt == OX_INT2 || ox_dtype_is_float(dt) ||
		(ox_dtype_is_narrow_float(dt) && dt != OX_FLOAT8E8M0);
}

bool
ox_dtype_is_narrow_float(ox_dtype dt)
{
	switch (dt)
	{
		case OX_FLOAT8E4M3FN:
		case OX_FLOAT8E4M3FNUZ:
		case OX_FLOAT8E5M2:
		case OX_FLOAT8E5M2FNUZ:
		case OX_FLOAT4E2M1:
		case OX_FLOAT8E8M0:
			return true;
		default:
			return false;
	}
}

bool
ox_dtype_is_narrow_int(ox_dtype dt)
{
	return dt == OX_INT4 || dt == OX_UINT4 || dt == OX_INT2 || dt == OX_UINT2;
}

bool
ox_dtype_is_numeric(ox_dtype dt)
{
	return dt == OX_BOOL || ox_dtype_is_float(dt) || ox_dtype_is_int(dt) ||
		ox_dtype_is_narrow_float(dt) || ox_dtype_is_narrow_int(dt);
}

int
ox_dtype_bits(ox_dtype dt)
{
	switch (dt)
	{
		case OX_UNDEFINED:
		case OX_STRING:
			return 0;
		case OX_UINT4:
		case OX_INT4:
		case OX_FLOAT4E2M1:
			return 4;
		case OX_UINT2:
		case OX_INT2:
			return 2;
		default:
			return (int) ox_dtype_size(dt) * 8;
	}
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
	if (p && !ox_huge_free(p))
		free(p);
}

float *
ox_aligned_grow(float **buf, size_t *len, size_t floats)
{
	if (*len < floats)
	{
		ox_aligned_free(*buf);
		*buf = ox_aligned_alloc(floats * sizeof(float));
		*len = *buf ? floats : 0;
	}
	return *buf;
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
tensor_alloc(ox_tensor *t, ox_dtype dt, int rank, const int64_t *dims, bool zero, bool lasting,
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
		t->data = lasting ? ox_aligned_alloc_huge(bytes) : ox_aligned_alloc(bytes);
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
	return tensor_alloc(t, dt, rank, dims, false, false, st);
}

ox_code
ox_tensor_alloc_lasting(ox_tensor *t, ox_dtype dt, int rank, const int64_t *dims, ox_status *st)
{
	return tensor_alloc(t, dt, rank, dims, false, true, st);
}

ox_code
ox_tensor_alloc_zero(ox_tensor *t, ox_dtype dt, int rank, const int64_t *dims, ox_status *st)
{
	return tensor_alloc(t, dt, rank, dims, true, false, st);
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

ox_code
ox_string_set(ox_string *dst, const char *data, size_t len, ox_status *st)
{
	char	   *p = malloc(len + 1);

	if (!p)
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate a string of %zu bytes", len);
	if (len)
		memcpy(p, data, len);
	p[len] = '\0';
	free(dst->data);
	dst->data = p;
	dst->len = len;
	return OX_OK;
}
