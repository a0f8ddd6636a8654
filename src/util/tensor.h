/*
 * tensor.h
 *	  Element types, tensors and runtime values (tensor, sequence, map,
 *	  empty optional) shared by every engine layer.
 *
 * Tensors are dense and row-major.  A tensor either owns its data (allocated
 * with ox_tensor_alloc, released with ox_tensor_release) or borrows it
 * (caller input, graph initializer).  Strings are stored as an array of
 * ox_string, each owning a NUL-terminated copy of its bytes.
 */
#ifndef OX_TENSOR_H
#define OX_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/status.h"

/* Numbering follows onnx.TensorProto.DataType, so values map 1:1. */
typedef enum ox_dtype
{
	OX_UNDEFINED = 0,
	OX_FLOAT = 1,
	OX_UINT8 = 2,
	OX_INT8 = 3,
	OX_UINT16 = 4,
	OX_INT16 = 5,
	OX_INT32 = 6,
	OX_INT64 = 7,
	OX_STRING = 8,
	OX_BOOL = 9,
	OX_FLOAT16 = 10,
	OX_DOUBLE = 11,
	OX_UINT32 = 12,
	OX_UINT64 = 13,
	OX_COMPLEX64 = 14,
	OX_COMPLEX128 = 15,
	OX_BFLOAT16 = 16,
	OX_DTYPE_COUNT
} ox_dtype;

/* Deepest rank a tensor may have; deeper tensors are refused at load. */
#define OX_MAX_RANK 16
/* Largest element count accepted anywhere, so that size arithmetic cannot overflow. */
#define OX_MAX_ELEMENTS ((int64_t) 1 << 40)

typedef struct ox_string
{
	char	   *data;			/* NUL-terminated, owned */
	size_t		len;
} ox_string;

typedef struct ox_tensor
{
	ox_dtype	dtype;
	int			rank;
	int64_t		dims[OX_MAX_RANK];
	void	   *data;			/* NULL when numel == 0 is allowed */
	size_t		capacity;		/* bytes allocated when owned, else 0 */
	bool		owns;
} ox_tensor;

typedef enum ox_value_kind
{
	OX_VALUE_TENSOR = 0,
	OX_VALUE_SEQUENCE,
	OX_VALUE_MAP,
	OX_VALUE_NONE				/* an empty optional, or an absent value */
} ox_value_kind;

typedef struct ox_value ox_value;

struct ox_value
{
	ox_value_kind kind;
	ox_tensor	tensor;			/* OX_VALUE_TENSOR */
	/* OX_VALUE_SEQUENCE: items are owned by the sequence */
	int			seq_len;
	int			seq_cap;
	ox_value   *seq_items;
	ox_dtype	seq_elem_dtype; /* element dtype, for empty sequences */
	/* OX_VALUE_MAP: two 1-D tensors of equal length */
	ox_tensor	map_keys;
	ox_tensor	map_values;
};

/* dtype facts */
size_t		ox_dtype_size(ox_dtype dt);		/* 0 for undefined */
const char *ox_dtype_name(ox_dtype dt);		/* "float", "int64", ... */
bool		ox_dtype_is_float(ox_dtype dt);	/* float16/bfloat16/float/double */
bool		ox_dtype_is_int(ox_dtype dt);		/* signed or unsigned integers */
bool		ox_dtype_is_signed(ox_dtype dt);

/* shape helpers */
int64_t		ox_shape_numel(int rank, const int64_t *dims);	/* -1 on overflow */
static inline int64_t
ox_tensor_numel(const ox_tensor *t)
{
	return ox_shape_numel(t->rank, t->dims);
}
bool		ox_shape_equal(int ra, const int64_t *a, int rb, const int64_t *b);
/* format "[1, 3, 224, 224]" into buf */
const char *ox_shape_str(int rank, const int64_t *dims, char *buf, size_t len);

/* Set shape/dtype and allocate (or reuse if capacity suffices) owned data.
 * Data is zeroed only by ox_tensor_alloc_zero. */
ox_code		ox_tensor_alloc(ox_tensor *t, ox_dtype dt, int rank, const int64_t *dims,
							ox_status *st);
ox_code		ox_tensor_alloc_zero(ox_tensor *t, ox_dtype dt, int rank, const int64_t *dims,
								 ox_status *st);
/* Free owned data (and owned strings); leaves an empty tensor. */
void		ox_tensor_release(ox_tensor *t);
/* Deep copy src into dst (dst is released first). */
ox_code		ox_tensor_copy(ox_tensor *dst, const ox_tensor *src, ox_status *st);
/* Make dst a borrowed view of src's data. */
void		ox_tensor_view(ox_tensor *dst, const ox_tensor *src);

/* typed element access (no bounds checks: callers check) */
#define OX_DATA(t, type) ((type *) (t)->data)

/* values */
void		ox_value_init_tensor(ox_value *v);
void		ox_value_release(ox_value *v);
ox_code		ox_value_copy(ox_value *dst, const ox_value *src, ox_status *st);
/* append a deep copy of item to a sequence value */
ox_code		ox_value_seq_append(ox_value *seq, const ox_value *item, ox_status *st);
/* append an uninitialized slot and return it (kind = tensor, empty) */
ox_value   *ox_value_seq_push(ox_value *seq, ox_status *st);

/* float16 / bfloat16 conversion */
float		ox_half_to_float(uint16_t h);
uint16_t	ox_float_to_half(float f);
float		ox_bf16_to_float(uint16_t h);
uint16_t	ox_float_to_bf16(float f);

/* Convert n elements between numeric dtypes (ONNX Cast semantics for
 * numbers and bool; strings handled by the Cast kernel). */
ox_code		ox_convert_elements(void *dst, ox_dtype dst_dt, const void *src,
								ox_dtype src_dt, int64_t n, ox_status *st);
/* read element i of any numeric tensor as double / int64 */
double		ox_tensor_get_double(const ox_tensor *t, int64_t i);
int64_t		ox_tensor_get_int64(const ox_tensor *t, int64_t i);

/* aligned allocation used for all tensor data (64-byte aligned) */
void	   *ox_aligned_alloc(size_t bytes);
void		ox_aligned_free(void *p);

#endif							/* OX_TENSOR_H */
