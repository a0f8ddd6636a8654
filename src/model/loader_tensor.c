/*
 * loader_tensor.c
 *	  TensorProto / TypeProto / onnx-data conversion and the wire-format
 *	  pre-check.
 */
#include "model/loader.h"

#include <stdlib.h>
#include <string.h>

ox_dtype
ox_dtype_from_onnx(int32_t t)
{
	switch (t)
	{
		case OX_FLOAT:
		case OX_UINT8:
		case OX_INT8:
		case OX_UINT16:
		case OX_INT16:
		case OX_INT32:
		case OX_INT64:
		case OX_STRING:
		case OX_BOOL:
		case OX_FLOAT16:
		case OX_DOUBLE:
		case OX_UINT32:
		case OX_UINT64:
		case OX_BFLOAT16:
		case OX_FLOAT8E4M3FN:
		case OX_FLOAT8E4M3FNUZ:
		case OX_FLOAT8E5M2:
		case OX_FLOAT8E5M2FNUZ:
		case OX_UINT4:
		case OX_INT4:
		case OX_FLOAT4E2M1:
		case OX_FLOAT8E8M0:
		case OX_UINT2:
		case OX_INT2:
			return (ox_dtype) t;
		default:
			return OX_UNDEFINED;
	}
}

static const char *
onnx_type_name(int32_t t)
{
	static const char *const names[] = {
		"undefined", "float", "uint8", "int8", "uint16", "int16", "int32", "int64",
		"string", "bool", "float16", "double", "uint32", "uint64", "complex64",
		"complex128", "bfloat16", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2",
		"float8e5m2fnuz", "uint4", "int4", "float4e2m1", "float8e8m0", "uint2", "int2"
	};

	if (t < 0 || (size_t) t >= sizeof(names) / sizeof(names[0]))
		return "unknown";
	return names[t];
}

/* ---- wire-format pre-check ------------------------------------------- */

static bool
read_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	uint64_t	v = 0;

	for (int shift = 0; shift < 64; shift += 7)
	{
		uint8_t		b;

		if (*p >= end)
			return false;
		b = *(*p)++;
		v |= (uint64_t) (b & 0x7f) << shift;
		if (!(b & 0x80))
		{
			*out = v;
			return true;
		}
	}
	return false;
}

typedef struct wire_frame
{
	const uint8_t *end;
	const ProtobufCMessageDescriptor *desc;
	uint64_t	fields;			/* field occurrences of this message */
	uint64_t	deepest;		/* the most a chain of its submessages records at once */
} wire_frame;

/*
 * What unpacking takes, as protobuf-c (1.4) allocates it.  What it keeps:
 * each message's struct, a repeated field's array of one element of its
 * C type per value (a packed run of one-byte varints becomes 8 bytes
 * each), copies of strings and bytes, fields not in the schema with a
 * 24-byte header, and 16 bytes of malloc's own for each allocation.  What
 * it holds for a while: every field occurrence of a message, recorded as a
 * scanned member (32 bytes, in slabs that double: up to 64) in a first pass
 * over the message, kept while the second pass unpacks its submessages one
 * after the other.  So the records of a message and of its open ancestors
 * are alive at once, and the peak is the chain of nested messages with the
 * most fields between them.  An empty NodeProto, 2 bytes of file, costs
 * some 200 bytes kept and recorded: a 10 MB file of five million in one
 * graph took 1.5 GB to load, and a 1 GB one would take the server's memory.
 * A tree ensemble's attribute lists, a field per value, are records only
 * one attribute at a time: a 10 MB scikit-learn forest took 54 MB.
 */
#define WIRE_SCANNED_COST	64
#define WIRE_ALLOC_COST		16

static size_t
wire_elem_size(ProtobufCType type)
{
	switch (type)
	{
		case PROTOBUF_C_TYPE_INT64:
		case PROTOBUF_C_TYPE_SINT64:
		case PROTOBUF_C_TYPE_SFIXED64:
		case PROTOBUF_C_TYPE_UINT64:
		case PROTOBUF_C_TYPE_FIXED64:
		case PROTOBUF_C_TYPE_DOUBLE:
		case PROTOBUF_C_TYPE_STRING:
		case PROTOBUF_C_TYPE_MESSAGE:
			return 8;
		case PROTOBUF_C_TYPE_BYTES:
			return sizeof(ProtobufCBinaryData);
		default:
			return 4;			/* 32-bit types, enums, protobuf_c_boolean */
	}
}

/* the values in a packed run of n bytes at p */
static uint64_t
packed_count(const ProtobufCFieldDescriptor *fd, const uint8_t *p, uint64_t n)
{
	uint64_t	count = 0;

	switch (fd->type)
	{
		case PROTOBUF_C_TYPE_SFIXED64:
		case PROTOBUF_C_TYPE_FIXED64:
		case PROTOBUF_C_TYPE_DOUBLE:
			return n / 8;
		case PROTOBUF_C_TYPE_SFIXED32:
		case PROTOBUF_C_TYPE_FIXED32:
		case PROTOBUF_C_TYPE_FLOAT:
			return n / 4;
		default:
			/* varints: one ends at each byte below 0x80 */
			for (uint64_t i = 0; i < n; i++)
				count += p[i] < 0x80;
			return count;
	}
}

/* what one occurrence of a field, n payload bytes at p, leaves in the unpacked message */
static uint64_t
wire_field_kept(const ProtobufCFieldDescriptor *fd, int wire_type, const uint8_t *p, uint64_t n)
{
	bool		repeated;

	if (!fd)
		return 24 + WIRE_ALLOC_COST + (wire_type == 2 ? n : 8);
	repeated = fd->label == PROTOBUF_C_LABEL_REPEATED;
	switch (fd->type)
	{
		case PROTOBUF_C_TYPE_MESSAGE:
			return ((const ProtobufCMessageDescriptor *) fd->descriptor)->sizeof_message + WIRE_ALLOC_COST +
				(repeated ? 8 : 0);
		case PROTOBUF_C_TYPE_STRING:
		case PROTOBUF_C_TYPE_BYTES:
			return n + 1 + WIRE_ALLOC_COST + (repeated ? wire_elem_size(fd->type) : 0);
		default:
			if (wire_type == 2)
				return packed_count(fd, p, n) * wire_elem_size(fd->type);
			return repeated ? wire_elem_size(fd->type) : 0;
	}
}

ox_code
ox_proto_check_wire(const uint8_t *buf, size_t len, const ProtobufCMessageDescriptor *desc,
					int max_depth, size_t max_unpacked, ox_status *st)
{
	wire_frame	stack[OX_MAX_PROTO_DEPTH + 1];
	int			depth = 0;
	const uint8_t *p = buf;
	uint64_t	kept = desc->sizeof_message;
	uint64_t	open_fields = 0;	/* the fields of the open messages */
	uint64_t	records = 0;	/* the most scanned members alive at once, so far */

	if (max_depth > OX_MAX_PROTO_DEPTH)
		max_depth = OX_MAX_PROTO_DEPTH;
	stack[0].end = buf + len;
	stack[0].desc = desc;
	stack[0].fields = stack[0].deepest = 0;
	for (;;)
	{
		uint64_t	key;
		uint64_t	n = 0;
		uint32_t	field;
		const ProtobufCFieldDescriptor *fd;
		const uint8_t *payload;

		while (depth > 0 && p == stack[depth].end)
		{
			uint64_t	chain = stack[depth].fields + stack[depth].deepest;

			open_fields -= stack[depth].fields;
			depth--;
			if (chain > stack[depth].deepest)
				stack[depth].deepest = chain;
		}
		if (p == stack[depth].end)
			break;
		if (!read_varint(&p, stack[depth].end, &key))
			goto malformed;
		field = (uint32_t) (key >> 3);
		if (field == 0)
			goto malformed;
		fd = stack[depth].desc ?
			protobuf_c_message_descriptor_get_field(stack[depth].desc, field) : NULL;
		stack[depth].fields++;
		open_fields++;
		payload = p;
		switch (key & 7)
		{
			case 0:
				if (!read_varint(&p, stack[depth].end, &n))
					goto malformed;
				break;
			case 1:
				if (stack[depth].end - p < 8)
					goto malformed;
				p += 8;
				break;
			case 5:
				if (stack[depth].end - p < 4)
					goto malformed;
				p += 4;
				break;
			case 2:
				if (!read_varint(&p, stack[depth].end, &n))
					goto malformed;
				if (n > (uint64_t) (stack[depth].end - p))
					goto malformed;
				payload = p;
				if (fd && fd->type == PROTOBUF_C_TYPE_MESSAGE && n > 0)
				{
					if (depth + 1 > max_depth)
						return ox_fail(st, OX_LIMIT_EXCEEDED,
									   "the model nests messages more than %d levels deep",
									   max_depth);
					kept += wire_field_kept(fd, 2, payload, n);
					depth++;
					stack[depth].end = p + n;
					stack[depth].desc = fd->descriptor;
					stack[depth].fields = stack[depth].deepest = 0;
					goto counted;
				}
				p += n;
				break;
			default:
				/* groups (3, 4) are not used by ONNX; 6 and 7 do not exist */
				goto malformed;
		}
		kept += wire_field_kept(fd, (int) (key & 7), payload, n);
counted:
		/* both only grow (the records of the open messages, and of the deepest chain closed below them) */
		if (open_fields + stack[depth].deepest > records)
			records = open_fields + stack[depth].deepest;
		if (max_unpacked && kept + records * WIRE_SCANNED_COST > max_unpacked)
			return ox_fail(st, OX_LIMIT_EXCEEDED,
						   "unpacking the model would take more than the limit of %zu MB of memory, "
						   "counted over its first %zu bytes of %zu (a field of a few bytes in the file "
						   "takes tens to hundreds in memory)",
						   max_unpacked >> 20, (size_t) (p - buf), len);
	}
	return OX_OK;

malformed:
	return ox_fail(st, OX_INVALID_MODEL,
				   "the data is not a valid ONNX protobuf message (malformed at byte %zu of %zu)",
				   (size_t) (p - buf), len);
}

/* ---- tensors ---------------------------------------------------------- */

/*
 * Stored units (raw_data bytes, or int32_data entries) that hold n elements
 * of dt: 4-bit types pack two elements a byte, 2-bit types four.
 */
static int64_t
packed_units(ox_dtype dt, int64_t n)
{
	switch (ox_dtype_bits(dt))
	{
		case 4:
			return (n + 1) / 2;
		case 2:
			return (n + 3) / 4;
		default:
			return n;
	}
}

/*
 * The first packed_units(dt, n) bytes of t's data hold packed 4- or 2-bit
 * elements, first element in the least significant bits: spread them to
 * one byte each, sign-extending int4 and int2.  Walking backwards lets the
 * bytes unpack in place: element i reads byte i / per_byte <= i, which no
 * later write has touched.
 */
static void
unpack_narrow(ox_tensor *t, int64_t n)
{
	int			bits = ox_dtype_bits(t->dtype);
	int			per_byte = 8 / bits;
	uint8_t		mask = (uint8_t) ((1u << bits) - 1);
	bool		sign = t->dtype == OX_INT4 || t->dtype == OX_INT2;
	uint8_t    *d = t->data;

	for (int64_t i = n - 1; i >= 0; i--)
	{
		uint8_t		v = (uint8_t) (d[i / per_byte] >> ((i % per_byte) * bits)) & mask;

		d[i] = sign && (v >> (bits - 1)) ? (uint8_t) (v | ~mask) : v;
	}
}

static ox_code
tensor_shape_from_proto(ox_tensor *t, ox_dtype dt, size_t n_dims, const int64_t *dims,
						const char *what, ox_status *st)
{
	if (n_dims > OX_MAX_RANK)
		return ox_fail(st, OX_LIMIT_EXCEEDED, "tensor \"%s\" has rank %zu, more than the limit of %d",
					   what, n_dims, OX_MAX_RANK);
	for (size_t i = 0; i < n_dims; i++)
		if (dims[i] < 0)
			return ox_fail(st, OX_INVALID_MODEL, "tensor \"%s\" has a negative dimension (%lld)",
						   what, (long long) dims[i]);
	if (ox_shape_numel((int) n_dims, dims) < 0)
		return ox_fail(st, OX_LIMIT_EXCEEDED, "tensor \"%s\" has too many elements", what);
	t->dtype = dt;
	t->rank = (int) n_dims;
	for (size_t i = 0; i < n_dims; i++)
		t->dims[i] = dims[i];
	return OX_OK;
}

/*
 * A TensorProto's raw_data as the tensor's own buffer, instead of a copy:
 * what ox_model_load's protobuf allocator (ox_proto_allocator) allocated
 * is aligned and sized as ox_aligned_alloc would, so the tensor can own
 * and free it.  A model's weights then exist once while it loads, not
 * twice (BERT-base's 435 MB).  Only whole-byte types, whose raw bytes are
 * the tensor's bytes.
 */
static bool
adopt_raw_data(ox_tensor *t, Onnx__TensorProto *tp, ox_dtype dt, const ox_tensor *shape, int64_t n)
{
	if (!tp->has_raw_data || tp->raw_data.len < 64 || ox_dtype_bits(dt) < 8 || dt == OX_STRING ||
		tp->raw_data.len != (size_t) n * ox_dtype_size(dt) || ((uintptr_t) tp->raw_data.data & 63) != 0)
		return false;
	ox_tensor_release(t);
	memset(t, 0, sizeof(*t));
	t->dtype = dt;
	t->rank = shape->rank;
	for (int i = 0; i < shape->rank; i++)
		t->dims[i] = shape->dims[i];
	t->data = tp->raw_data.data;
	t->capacity = tp->raw_data.len;
	t->owns = true;
	tp->raw_data.data = NULL;
	tp->raw_data.len = 0;
	tp->has_raw_data = 0;
	if (dt == OX_BOOL)
		for (int64_t i = 0; i < n; i++)
			((uint8_t *) t->data)[i] = ((uint8_t *) t->data)[i] != 0;
	return true;
}

static void *
proto_alloc(void *arg, size_t size)
{
	(void) arg;
	/*
	 * big buffers (tensor data) as ox_aligned_alloc_huge makes them: a
	 * tensor adopts its raw_data, which lives as long as the model
	 */
	if (size >= 64)
		return ox_aligned_alloc_huge(size);
	return malloc(size);
}

static void
proto_free(void *arg, void *p)
{
	(void) arg;
	ox_aligned_free(p);
}

ProtobufCAllocator ox_proto_allocator = {proto_alloc, proto_free, NULL};

ox_code
ox_tensor_from_proto(ox_tensor *t, const Onnx__TensorProto *tp, const char *what, ox_status *st)
{
	return ox_tensor_take_from_proto(t, (Onnx__TensorProto *) tp, false, what, st);
}

ox_code
ox_tensor_take_from_proto(ox_tensor *t, Onnx__TensorProto *tp, bool take, const char *what, ox_status *st)
{
	ox_dtype	dt;
	ox_tensor	shape;
	int64_t		n;
	int64_t		units;
	size_t		esize;
	size_t		have;

	if (!what || !*what)
		what = tp->name && *tp->name ? tp->name : "(unnamed)";
	dt = ox_dtype_from_onnx(tp->data_type);
	if (dt == OX_UNDEFINED)
		return ox_fail(st, tp->data_type == 0 ? OX_INVALID_MODEL : OX_UNSUPPORTED,
					   "tensor \"%s\" has element type %s (%d), which is not supported",
					   what, onnx_type_name(tp->data_type), tp->data_type);
	if ((tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) ||
		tp->n_external_data > 0)
		return ox_fail(st, OX_UNSUPPORTED,
					   "tensor \"%s\" keeps its data in an external file, which is not supported; save the model with all tensor data inside the file",
					   what);
	if (tp->segment)
		return ox_fail(st, OX_UNSUPPORTED, "tensor \"%s\" is segmented, which is not supported", what);
	memset(&shape, 0, sizeof(shape));
	OX_TRY(tensor_shape_from_proto(&shape, dt, tp->n_dims, tp->dims, what, st));
	n = ox_tensor_numel(&shape);
	esize = ox_dtype_size(dt);
	units = packed_units(dt, n);

	/* find the data and check its size before allocating anything */
	if (tp->has_raw_data && tp->raw_data.len > 0)
	{
		if (dt == OX_STRING)
			return ox_fail(st, OX_INVALID_MODEL, "string tensor \"%s\" cannot use raw_data", what);
		have = tp->raw_data.len;
		if (have / esize != (size_t) units || have % esize)
			return ox_fail(st, OX_INVALID_MODEL,
						   "tensor \"%s\" has %zu bytes of data but its shape needs %lld elements of %s (%lld bytes)",
						   what, have, (long long) n, ox_dtype_name(dt), (long long) units * (long long) esize);
	}
	else
	{
		switch (dt)
		{
			case OX_FLOAT:
				have = tp->n_float_data;
				break;
			case OX_DOUBLE:
				have = tp->n_double_data;
				break;
			case OX_INT64:
				have = tp->n_int64_data;
				break;
			case OX_UINT32:
			case OX_UINT64:
				have = tp->n_uint64_data;
				break;
			case OX_STRING:
				have = tp->n_string_data;
				break;
			default:
				have = tp->n_int32_data;
				break;
		}
		if (have != (size_t) units)
			return ox_fail(st, OX_INVALID_MODEL,
						   "tensor \"%s\" has %zu entries of data but its shape needs %lld (%lld elements of %s)",
						   what, have, (long long) units, (long long) n, ox_dtype_name(dt));
	}

	if (take && n > 0 && adopt_raw_data(t, tp, dt, &shape, n))
		return OX_OK;
	OX_TRY(ox_tensor_alloc(t, dt, shape.rank, shape.dims, st));
	if (n == 0)
		return OX_OK;
	if (tp->has_raw_data && tp->raw_data.len > 0)
	{
		memcpy(t->data, tp->raw_data.data, tp->raw_data.len);
		if (dt == OX_BOOL)
			for (int64_t i = 0; i < n; i++)
				((uint8_t *) t->data)[i] = ((uint8_t *) t->data)[i] != 0;
		if (ox_dtype_bits(dt) < 8)
			unpack_narrow(t, n);
		return OX_OK;
	}
	switch (dt)
	{
		case OX_FLOAT:
			memcpy(t->data, tp->float_data, n * sizeof(float));
			break;
		case OX_DOUBLE:
			memcpy(t->data, tp->double_data, n * sizeof(double));
			break;
		case OX_INT64:
			memcpy(t->data, tp->int64_data, n * sizeof(int64_t));
			break;
		case OX_UINT64:
			memcpy(t->data, tp->uint64_data, n * sizeof(uint64_t));
			break;
		case OX_UINT32:
			for (int64_t i = 0; i < n; i++)
				((uint32_t *) t->data)[i] = (uint32_t) tp->uint64_data[i];
			break;
		case OX_INT32:
			memcpy(t->data, tp->int32_data, n * sizeof(int32_t));
			break;
		case OX_INT16:
			for (int64_t i = 0; i < n; i++)
				((int16_t *) t->data)[i] = (int16_t) tp->int32_data[i];
			break;
		case OX_UINT16:
		case OX_FLOAT16:
		case OX_BFLOAT16:
			for (int64_t i = 0; i < n; i++)
				((uint16_t *) t->data)[i] = (uint16_t) tp->int32_data[i];
			break;
		case OX_INT8:
			for (int64_t i = 0; i < n; i++)
				((int8_t *) t->data)[i] = (int8_t) tp->int32_data[i];
			break;
		case OX_UINT8:
		case OX_FLOAT8E4M3FN:
		case OX_FLOAT8E4M3FNUZ:
		case OX_FLOAT8E5M2:
		case OX_FLOAT8E5M2FNUZ:
		case OX_FLOAT8E8M0:
			/* float8 entries hold the bit pattern, one element each */
			for (int64_t i = 0; i < n; i++)
				((uint8_t *) t->data)[i] = (uint8_t) tp->int32_data[i];
			break;
		case OX_UINT4:
		case OX_INT4:
		case OX_FLOAT4E2M1:
		case OX_UINT2:
		case OX_INT2:
			/* each entry holds one packed byte */
			for (int64_t i = 0; i < units; i++)
				((uint8_t *) t->data)[i] = (uint8_t) tp->int32_data[i];
			unpack_narrow(t, n);
			break;
		case OX_BOOL:
			for (int64_t i = 0; i < n; i++)
				((uint8_t *) t->data)[i] = tp->int32_data[i] != 0;
			break;
		case OX_STRING:
			for (int64_t i = 0; i < n; i++)
			{
				ox_string  *s = &((ox_string *) t->data)[i];
				const ProtobufCBinaryData *b = &tp->string_data[i];

				s->data = malloc(b->len + 1);
				if (!s->data)
					return ox_fail(st, OX_OUT_OF_MEMORY, "could not copy string tensor \"%s\"", what);
				if (b->len)
					memcpy(s->data, b->data, b->len);
				s->data[b->len] = '\0';
				s->len = b->len;
			}
			break;
		default:
			return ox_fail(st, OX_INTERNAL, "unhandled element type %d", (int) dt);
	}
	return OX_OK;
}

ox_code
ox_tensor_from_sparse_proto(ox_tensor *t, const Onnx__SparseTensorProto *sp, const char *what,
							ox_status *st)
{
	ox_tensor	values;
	ox_tensor	indices;
	ox_tensor	shape;
	int64_t		n;
	int64_t		nnz;
	size_t		esize;
	ox_code		rc;

	if (!sp->values || !sp->indices)
		return ox_fail(st, OX_INVALID_MODEL, "sparse tensor \"%s\" lacks values or indices", what);
	memset(&values, 0, sizeof(values));
	memset(&indices, 0, sizeof(indices));
	memset(&shape, 0, sizeof(shape));
	OX_TRY(tensor_shape_from_proto(&shape, OX_FLOAT, sp->n_dims, sp->dims, what, st));
	n = ox_tensor_numel(&shape);
	if ((rc = ox_tensor_from_proto(&values, sp->values, what, st)) != OX_OK)
		return rc;
	if ((rc = ox_tensor_from_proto(&indices, sp->indices, what, st)) != OX_OK)
		goto out;
	nnz = ox_tensor_numel(&values);
	if (values.rank != 1 || indices.dtype != OX_INT64 || values.dtype == OX_STRING ||
		!((indices.rank == 1 && indices.dims[0] == nnz) ||
		  (indices.rank == 2 && indices.dims[0] == nnz && indices.dims[1] == shape.rank)))
	{
		rc = ox_fail(st, OX_INVALID_MODEL, "sparse tensor \"%s\" has inconsistent values and indices",
					 what);
		goto out;
	}
	if ((rc = ox_tensor_alloc_zero(t, values.dtype, shape.rank, shape.dims, st)) != OX_OK)
		goto out;
	esize = ox_dtype_size(values.dtype);
	for (int64_t k = 0; k < nnz; k++)
	{
		int64_t		off = 0;
		const int64_t *ix = indices.data;

		if (indices.rank == 1)
			off = ix[k];
		else
			for (int d = 0; d < shape.rank; d++)
			{
				int64_t		c = ix[k * shape.rank + d];

				if (c < 0 || c >= shape.dims[d])
				{
					off = -1;
					break;
				}
				off = off * shape.dims[d] + c;
			}
		if (off < 0 || off >= n)
		{
			rc = ox_fail(st, OX_INVALID_MODEL, "sparse tensor \"%s\" has an index out of range", what);
			goto out;
		}
		memcpy((char *) t->data + off * esize, (char *) values.data + k * esize, esize);
	}
out:
	ox_tensor_release(&values);
	ox_tensor_release(&indices);
	return rc;
}

/* ---- types ------------------------------------------------------------ */

static ox_code
dims_from_proto(ox_model *m, ox_type *out, const Onnx__TensorShapeProto *shape, ox_status *st)
{
	if (!shape)
	{
		out->rank = -1;
		return OX_OK;
	}
	if (shape->n_dim > OX_MAX_RANK)
		return ox_fail(st, OX_LIMIT_EXCEEDED, "a declared shape has rank %zu, more than the limit of %d",
					   shape->n_dim, OX_MAX_RANK);
	out->rank = (int) shape->n_dim;
	out->dims = ox_arena_alloc(&m->arena, sizeof(ox_dim) * (shape->n_dim + 1));
	if (!out->dims)
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate a shape");
	for (size_t i = 0; i < shape->n_dim; i++)
	{
		const Onnx__TensorShapeProto__Dimension *d = shape->dim[i];

		out->dims[i].value = -1;
		if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
		{
			if (d->dim_value < 0)
				return ox_fail(st, OX_INVALID_MODEL, "a declared shape has a negative dimension (%lld)",
							   (long long) d->dim_value);
			if (d->dim_value > OX_MAX_ELEMENTS)
				return ox_fail(st, OX_LIMIT_EXCEEDED, "a declared shape has a dimension of %lld",
							   (long long) d->dim_value);
			out->dims[i].value = d->dim_value;
		}
		else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
				 d->dim_param && *d->dim_param)
		{
			out->dims[i].param = ox_arena_strdup(&m->arena, d->dim_param);
			if (!out->dims[i].param)
				return ox_fail(st, OX_OUT_OF_MEMORY, "could not copy a dimension name");
		}
	}
	return OX_OK;
}

ox_code
ox_type_from_proto(ox_model *m, ox_type *out, const Onnx__TypeProto *tp, int depth, ox_status *st)
{
	memset(out, 0, sizeof(*out));
	out->rank = -1;
	if (!tp)
		return OX_OK;
	if (depth > 16)
		return ox_fail(st, OX_LIMIT_EXCEEDED, "a type is nested more than 16 levels deep");
	switch (tp->value_case)
	{
		case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
		case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
			{
				int32_t		et;
				const Onnx__TensorShapeProto *shape;

				if (tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
				{
					out->kind = OX_TYPE_TENSOR;
					et = tp->tensor_type->elem_type;
					shape = tp->tensor_type->shape;
				}
				else
				{
					out->kind = OX_TYPE_SPARSE_TENSOR;
					et = tp->sparse_tensor_type->elem_type;
					shape = tp->sparse_tensor_type->shape;
				}
				out->elem = ox_dtype_from_onnx(et);
				if (out->elem == OX_UNDEFINED && et != 0)
					return ox_fail(st, OX_UNSUPPORTED, "element type %s (%d) is not supported",
								   onnx_type_name(et), et);
				return dims_from_proto(m, out, shape, st);
			}
		case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
		case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
			{
				const Onnx__TypeProto *inner;

				out->kind = tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ?
					OX_TYPE_SEQUENCE : OX_TYPE_OPTIONAL;
				inner = out->kind == OX_TYPE_SEQUENCE ? tp->sequence_type->elem_type :
					tp->optional_type->elem_type;
				out->inner = ox_arena_alloc(&m->arena, sizeof(ox_type));
				if (!out->inner)
					return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate a type");
				return ox_type_from_proto(m, out->inner, inner, depth + 1, st);
			}
		case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
			out->kind = OX_TYPE_MAP;
			out->map_key = ox_dtype_from_onnx(tp->map_type->key_type);
			out->inner = ox_arena_alloc(&m->arena, sizeof(ox_type));
			if (!out->inner)
				return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate a type");
			return ox_type_from_proto(m, out->inner, tp->map_type->value_type, depth + 1, st);
		case ONNX__TYPE_PROTO__VALUE_OPAQUE_TYPE:
			return ox_fail(st, OX_UNSUPPORTED, "opaque types are not supported");
		default:
			return OX_OK;
	}
}

/* ---- onnx-data values ------------------------------------------------- */

ox_code
ox_value_from_map_proto(ox_value *v, const Onnx__MapProto *mp, ox_status *st)
{
	ox_dtype	kt = ox_dtype_from_onnx(mp->key_type);
	int64_t		n;
	ox_value	vals;

	ox_value_release(v);
	v->kind = OX_VALUE_MAP;
	n = kt == OX_STRING ? (int64_t) mp->n_string_keys : (int64_t) mp->n_keys;
	if (kt == OX_UNDEFINED || kt == OX_FLOAT || kt == OX_DOUBLE || kt == OX_FLOAT16 || kt == OX_BOOL)
		return ox_fail(st, OX_INVALID_MODEL, "map has an invalid key type %d", mp->key_type);
	OX_TRY(ox_tensor_alloc(&v->map_keys, kt, 1, &n, st));
	for (int64_t i = 0; i < n; i++)
	{
		if (kt == OX_STRING)
		{
			ox_string  *s = &((ox_string *) v->map_keys.data)[i];

			s->data = malloc(mp->string_keys[i].len + 1);
			if (!s->data)
				return ox_fail(st, OX_OUT_OF_MEMORY, "could not copy map keys");
			memcpy(s->data, mp->string_keys[i].data, mp->string_keys[i].len);
			s->data[mp->string_keys[i].len] = '\0';
			s->len = mp->string_keys[i].len;
		}
		else
		{
			int64_t		k = mp->keys[i];

			OX_TRY(ox_convert_elements((char *) v->map_keys.data + i * ox_dtype_size(kt), kt,
									   &k, OX_INT64, 1, st));
		}
	}
	if (!mp->values || mp->values->n_tensor_values != 1)
	{
		/* the values are a sequence of n scalars or one 1-D tensor */
		if (!mp->values || (int64_t) mp->values->n_tensor_values != n)
			return ox_fail(st, OX_INVALID_MODEL, "map values do not match its keys");
	}
	ox_value_init_tensor(&vals);
	OX_TRY(ox_value_from_sequence_proto(&vals, mp->values, 1, st));
	if (vals.seq_len == 1 && ox_tensor_numel(&vals.seq_items[0].tensor) == n)
	{
		ox_tensor_copy(&v->map_values, &vals.seq_items[0].tensor, st);
		v->map_values.rank = 1;
		v->map_values.dims[0] = n;
	}
	else
	{
		ox_dtype	vt = vals.seq_len ? vals.seq_items[0].tensor.dtype : OX_FLOAT;

		if (ox_tensor_alloc(&v->map_values, vt, 1, &n, st) == OX_OK)
			for (int64_t i = 0; i < n; i++)
				memcpy((char *) v->map_values.data + i * ox_dtype_size(vt),
					   vals.seq_items[i].tensor.data, ox_dtype_size(vt));
	}
	ox_value_release(&vals);
	return st->code;
}

ox_code
ox_value_from_sequence_proto(ox_value *v, const Onnx__SequenceProto *sp, int depth, ox_status *st)
{
	ox_value_release(v);
	v->kind = OX_VALUE_SEQUENCE;
	if (depth > 16)
		return ox_fail(st, OX_LIMIT_EXCEEDED, "values nested too deeply");
	for (size_t i = 0; i < sp->n_tensor_values; i++)
	{
		ox_value   *item = ox_value_seq_push(v, st);

		if (!item)
			return st->code;
		OX_TRY(ox_tensor_from_proto(&item->tensor, sp->tensor_values[i], "sequence item", st));
		v->seq_elem_dtype = item->tensor.dtype;
	}
	for (size_t i = 0; i < sp->n_sequence_values; i++)
	{
		ox_value   *item = ox_value_seq_push(v, st);

		if (!item)
			return st->code;
		OX_TRY(ox_value_from_sequence_proto(item, sp->sequence_values[i], depth + 1, st));
	}
	for (size_t i = 0; i < sp->n_map_values; i++)
	{
		ox_value   *item = ox_value_seq_push(v, st);

		if (!item)
			return st->code;
		OX_TRY(ox_value_from_map_proto(item, sp->map_values[i], st));
	}
	for (size_t i = 0; i < sp->n_optional_values; i++)
	{
		ox_value   *item = ox_value_seq_push(v, st);

		if (!item)
			return st->code;
		OX_TRY(ox_value_from_optional_proto(item, sp->optional_values[i], depth + 1, st));
	}
	if (sp->n_sparse_tensor_values)
		return ox_fail(st, OX_UNSUPPORTED, "sequences of sparse tensors are not supported");
	if (sp->has_elem_type && sp->elem_type == 1 && v->seq_len == 0)
		v->seq_elem_dtype = OX_FLOAT;
	return OX_OK;
}

ox_code
ox_value_from_optional_proto(ox_value *v, const Onnx__OptionalProto *op, int depth, ox_status *st)
{
	ox_value_release(v);
	if (depth > 16)
		return ox_fail(st, OX_LIMIT_EXCEEDED, "values nested too deeply");
	if (op->tensor_value)
	{
		v->kind = OX_VALUE_TENSOR;
		return ox_tensor_from_proto(&v->tensor, op->tensor_value, "optional", st);
	}
	if (op->sequence_value)
		return ox_value_from_sequence_proto(v, op->sequence_value, depth + 1, st);
	if (op->map_value)
		return ox_value_from_map_proto(v, op->map_value, st);
	if (op->optional_value)
		return ox_value_from_optional_proto(v, op->optional_value, depth + 1, st);
	v->kind = OX_VALUE_NONE;
	return OX_OK;
}
