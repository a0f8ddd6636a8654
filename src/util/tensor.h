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

/*
 * Numbering follows onnx.TensorProto.DataType, so values map 1:1.
 *
 * The narrow types (float8, float4, float8e8m0, int4, uint4, int2, uint2)
 * take one byte per element in memory, so that every data-movement kernel
 * handles them as 1-byte elements: INT4 and INT2 are sign-extended into an
 * int8, UINT4 and UINT2 zero-extended into a uint8, and the float types keep
 * their bit pattern in the low bits of a uint8 (FLOAT4E2M1: bits 0-3).  Only
 * the protobuf form packs 4-bit and 2-bit elements; the loader unpacks them
 * and the saver packs them again.  Kernels compute with them only where the
 * ONNX spec allows the type (Cast, QuantizeLinear, DequantizeLinear, BitCast
 * and data movement); ox_dtype_is_float and ox_dtype_is_int leave them out.
 */
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
	OX_FLOAT8E4M3FN = 17,		/* bias 7, NaN S.1111.111, no infinity */
	OX_FLOAT8E4M3FNUZ = 18,		/* bias 8, one NaN 0x80, no -0, no infinity */
	OX_FLOAT8E5M2 = 19,			/* bias 15, IEEE-like infinities and NaNs */
	OX_FLOAT8E5M2FNUZ = 20,		/* bias 16, one NaN 0x80, no -0, no infinity */
	OX_UINT4 = 21,
	OX_INT4 = 22,
	OX_FLOAT4E2M1 = 23,			/* bias 1, no infinity, no NaN; max 6 */
	OX_FLOAT8E8M0 = 24,			/* 2^(e - 127), 0xFF NaN; no sign, no zero */
	OX_UINT2 = 25,
	OX_INT2 = 26,
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
	/*
	 * A session's constant whose data it freed once every node reading it
	 * had packed its own copy (ox_session_options.release_weights): data
	 * is NULL, the shape stays.  Only those nodes ever see it.
	 */
	bool		released;
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

/*
 * dtype facts.  The size and the element count are inline: a row-wise SQL
 * call on a small model asks for them dozens of times per run, and as calls
 * into the shared library (through its PLT) they cost several percent.
 */
extern const uint8_t ox_dtype_sizes[OX_DTYPE_COUNT];
/* bytes in memory; 0 for undefined */
static inline size_t
ox_dtype_size(ox_dtype dt)
{
	return (unsigned) dt < OX_DTYPE_COUNT ? ox_dtype_sizes[dt] : 0;
}
const char *ox_dtype_name(ox_dtype dt);		/* "float", "int64", "int4", ... */
bool		ox_dtype_is_float(ox_dtype dt);	/* float16/bfloat16/float/double */
bool		ox_dtype_is_int(ox_dtype dt);		/* 8- to 64-bit signed or unsigned integers */
bool		ox_dtype_is_signed(ox_dtype dt);	/* signed integers and floats, narrow ones too */
/* float8, float4 and float8e8m0: a bit pattern in a uint8 */
bool		ox_dtype_is_narrow_float(ox_dtype dt);
/* int4, uint4, int2, uint2: one (extended) value per byte */
bool		ox_dtype_is_narrow_int(ox_dtype dt);
/* any type ox_convert_elements reads and writes: bool and every number but complex */
bool		ox_dtype_is_numeric(ox_dtype dt);
/* width of one element in ONNX (4 for int4, 16 for float16); 0 for undefined and string */
int			ox_dtype_bits(ox_dtype dt);

/* shape helpers */
/* elements of a shape; -1 for a negative dimension or past OX_MAX_ELEMENTS */
static inline int64_t
ox_shape_numel(int rank, const int64_t *dims)
{
	int64_t		n = 1;

	/* no division: this runs several times per node and run */
	for (int i = 0; i < rank; i++)
	{
		if (dims[i] < 0)
			return -1;
		if (dims[i] == 0)
			return 0;
		if (__builtin_mul_overflow(n, dims[i], &n) || n > OX_MAX_ELEMENTS)
			return -1;
	}
	return n;
}
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
/* ox_tensor_alloc for a model's constant, kept as long as the model (ox_aligned_alloc_huge) */
ox_code		ox_tensor_alloc_lasting(ox_tensor *t, ox_dtype dt, int rank, const int64_t *dims,
									ox_status *st);
/* Free owned data (and owned strings); leaves an empty tensor. */
void		ox_tensor_release(ox_tensor *t);
/* Deep copy src into dst (dst is released first). */
ox_code		ox_tensor_copy(ox_tensor *dst, const ox_tensor *src, ox_status *st);
/* Make dst a borrowed view of src's data. */
void		ox_tensor_view(ox_tensor *dst, const ox_tensor *src);

/* replace dst's bytes with a NUL-terminated copy of data[0..len) */
ox_code		ox_string_set(ox_string *dst, const char *data, size_t len, ox_status *st);

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

/* float16 / bfloat16 conversion (round to nearest even) */
float		ox_half_to_float(uint16_t h);
uint16_t	ox_float_to_half(float f);
uint16_t	ox_double_to_half(double d);	/* rounds once, straight from double */
float		ox_bf16_to_float(uint16_t h);
uint16_t	ox_float_to_bf16(float f);

/*
 * Element i of data of a floating type (float, double, float16, bfloat16)
 * read as double (0 for other types), and stored from double (float16 and
 * bfloat16 through float, as kernels computing in float32 round; other
 * types left untouched).  Inline: kernels call them element by element.
 */
static inline double
ox_load_real(const void *data, ox_dtype dt, int64_t i)
{
	switch (dt)
	{
		case OX_FLOAT:
			return ((const float *) data)[i];
		case OX_DOUBLE:
			return ((const double *) data)[i];
		case OX_FLOAT16:
			return ox_half_to_float(((const uint16_t *) data)[i]);
		case OX_BFLOAT16:
			return ox_bf16_to_float(((const uint16_t *) data)[i]);
		default:
			return 0;
	}
}

static inline void
ox_store_real(void *data, ox_dtype dt, int64_t i, double v)
{
	switch (dt)
	{
		case OX_FLOAT:
			((float *) data)[i] = (float) v;
			break;
		case OX_DOUBLE:
			((double *) data)[i] = v;
			break;
		case OX_FLOAT16:
			((uint16_t *) data)[i] = ox_float_to_half((float) v);
			break;
		case OX_BFLOAT16:
			((uint16_t *) data)[i] = ox_float_to_bf16((float) v);
			break;
		default:
			break;
	}
}

/*
 * Flags of ox_convert_elements_ex.  The defaults (0) are those of Cast:
 * float8 targets saturate, float8e8m0 targets round up.
 */
#define OX_CONVERT_NO_SATURATE	0x1 /* float8 and e8m0: out of range gives inf/NaN */
#define OX_CONVERT_E8M0_DOWN	0x2 /* e8m0: round toward zero */
#define OX_CONVERT_E8M0_NEAREST	0x4 /* e8m0: round to nearest, ties up */

/*
 * float8 / float4 / float8e8m0 elements.  ox_float_to_narrow rounds to
 * nearest even (e8m0: as flags ask) and encodes NaN, infinities and
 * overflow as the ONNX Cast tables say; float4 always saturates.
 */
float		ox_narrow_to_float(uint8_t bits, ox_dtype dt);
uint8_t		ox_float_to_narrow(float f, ox_dtype dt, unsigned flags);

/*
 * Convert n elements between numeric dtypes (ONNX Cast semantics for
 * numbers and bool; strings handled by the Cast kernel).  Float to integer
 * truncates; 8- to 64-bit targets saturate, 4- and 2-bit targets keep the
 * low bits (as the ONNX reference does).  Doubles reach float16 with one
 * rounding, and bfloat16/float8/float4/e8m0 through float32 (as ml_dtypes,
 * which made the ONNX test data, and onnxruntime do).
 */
ox_code		ox_convert_elements(void *dst, ox_dtype dst_dt, const void *src,
								ox_dtype src_dt, int64_t n, ox_status *st);
ox_code		ox_convert_elements_ex(void *dst, ox_dtype dst_dt, const void *src,
								   ox_dtype src_dt, int64_t n, unsigned flags,
								   ox_status *st);

/*
 * Copy n elements reinterpreting their bits (BitCast).  The two types must
 * have the same ox_dtype_bits (the caller checks); narrow integers are
 * re-extended for their new signedness and bool made 0/1.
 */
void		ox_bitcast_elements(void *dst, ox_dtype dst_dt, const void *src,
								ox_dtype src_dt, int64_t n);
/* read element i of any numeric tensor as double / int64 */
double		ox_tensor_get_double(const ox_tensor *t, int64_t i);
int64_t		ox_tensor_get_int64(const ox_tensor *t, int64_t i);
/*
 * sums[j] = sum_k (b[k, j] - zp[j]) over the columns of a 2-D int8/uint8
 * matrix b, zp a scalar, one value per column, or NULL (zero); int32 with
 * wrap-around, like the integer products these correct.
 */
void		ox_int8_column_sums(const ox_tensor *b, const ox_tensor *zp, int32_t *sums);

/* aligned allocation used for all tensor data (64-byte aligned) */
void	   *ox_aligned_alloc(size_t bytes);
/*
 * The same for a long-lived large buffer (weights, as loaded or packed):
 * from 2 MB on, its own mapping on transparent huge pages where the
 * system allows (huge_alloc.c).  Either kind goes to ox_aligned_free.
 */
void	   *ox_aligned_alloc_huge(size_t bytes);
void		ox_aligned_free(void *p);
/* ox_aligned_free's part for ox_aligned_alloc_huge's mappings: false if p is not one */
bool		ox_huge_free(void *p);

/*
 * A scratch buffer kept between calls (usually a kernel's thread-locals):
 * *buf, of *len floats, grown to at least `floats`; NULL when out of
 * memory.  A fresh large buffer per call would be an mmap and its page
 * faults each time.  Growing does not keep the contents.
 */
float	   *ox_aligned_grow(float **buf, size_t *len, size_t floats);

#endif							/* OX_TENSOR_H */
