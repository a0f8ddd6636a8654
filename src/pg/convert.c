/*
 * convert.c
 *	  Between PostgreSQL values and engine values: real[] results, jsonb
 *	  inputs and outputs of onnx_run, and the jsonb building helpers the
 *	  inspection functions share.
 *
 * JSON has no NaN or infinity: like to_jsonb(float8), they are written as the
 * strings "NaN", "Infinity" and "-Infinity", and read back from them.
 * Floats are written in their shortest exact decimal form, so a float
 * output read back as real is bit-identical.
 */
#include "onnx_pg.h"

#include <float.h>
#include <math.h>

#include "catalog/pg_type.h"
#include "common/shortest_dec.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "miscadmin.h"

bool
OnnxUtf8Valid(const char *s, size_t len)
{
	return pg_encoding_verifymbstr(PG_UTF8, s, (int) len) == (int) len;
}

/* ---- jsonb helpers ---- */

void
OnnxJbString(JsonbParseState **state, JsonbIteratorToken tok, const char *s, size_t len)
{
	JsonbValue	v;

	v.type = jbvString;
	v.val.string.val = (char *) s;
	v.val.string.len = (int) len;
	pushJsonbValue(state, tok, &v);
}

void
OnnxJbKey(JsonbParseState **state, const char *k)
{
	OnnxJbString(state, WJB_KEY, k, strlen(k));
}

static void
jb_numeric(JsonbParseState **state, Datum num, bool elem)
{
	JsonbValue	v;

	v.type = jbvNumeric;
	v.val.numeric = DatumGetNumeric(num);
	pushJsonbValue(state, elem ? WJB_ELEM : WJB_VALUE, &v);
}

static void
jb_numeric_text(JsonbParseState **state, const char *text, bool elem)
{
	jb_numeric(state, DirectFunctionCall3(numeric_in, CStringGetDatum(text),
										  ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1)),
			   elem);
}

void
OnnxJbInt(JsonbParseState **state, int64 i, bool elem)
{
	jb_numeric(state, DirectFunctionCall1(int8_numeric, Int64GetDatum(i)), elem);
}

static bool
jb_special_float(JsonbParseState **state, double d, bool elem)
{
	const char *s;

	if (!isnan(d) && !isinf(d))
		return false;
	s = isnan(d) ? "NaN" : (d > 0 ? "Infinity" : "-Infinity");
	OnnxJbString(state, elem ? WJB_ELEM : WJB_VALUE, s, strlen(s));
	return true;
}

void
OnnxJbFloat(JsonbParseState **state, float f, bool elem)
{
	char		buf[32];

	if (jb_special_float(state, f, elem))
		return;
	float_to_shortest_decimal_buf(f, buf);
	jb_numeric_text(state, buf, elem);
}

void
OnnxJbDouble(JsonbParseState **state, double d, bool elem)
{
	char		buf[32];

	if (jb_special_float(state, d, elem))
		return;
	double_to_shortest_decimal_buf(d, buf);
	jb_numeric_text(state, buf, elem);
}

void
OnnxJbBytes(JsonbParseState **state, JsonbIteratorToken tok, const char *s, size_t len)
{
	/* ONNX strings are bytes: show non-UTF-8 ones as \x hex */
	if (OnnxUtf8Valid(s, len))
		OnnxJbString(state, tok, s, len);
	else
	{
		char	   *hex = palloc(len * 2 + 3);

		hex[0] = '\\';
		hex[1] = 'x';
		hex_encode(s, len, hex + 2);
		hex[len * 2 + 2] = '\0';
		OnnxJbString(state, tok, hex, len * 2 + 2);
	}
}

/* ---- real[] results ---- */

ArrayType *
OnnxFloatArray(const float *data, int ndims, const int *dims)
{
	int64		n = 1;
	Size		nbytes;
	ArrayType  *a;

	for (int i = 0; i < ndims; i++)
		n *= dims[i];
	if (ndims == 0 || n == 0)
		return construct_empty_array(FLOAT4OID);
	if (n > (int64) ((MaxAllocSize - ARR_OVERHEAD_NONULLS(ndims)) / sizeof(float4)))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("result has too many elements for an array"),
				 errdetail("The result has " INT64_FORMAT " elements.", n)));
	nbytes = ARR_OVERHEAD_NONULLS(ndims) + n * sizeof(float4);
	a = (ArrayType *) palloc0(nbytes);
	SET_VARSIZE(a, nbytes);
	a->ndim = ndims;
	a->dataoffset = 0;
	a->elemtype = FLOAT4OID;
	for (int i = 0; i < ndims; i++)
	{
		ARR_DIMS(a)[i] = dims[i];
		ARR_LBOUND(a)[i] = 1;
	}
	memcpy(ARR_DATA_PTR(a), data, n * sizeof(float4));
	return a;
}

static void
check_float_output(ox_dtype dt, const char *model, const char *output)
{
	if (dt == OX_STRING || dt == OX_COMPLEX64 || dt == OX_COMPLEX128 ||
		ox_dtype_size(dt) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("output \"%s\" of model \"%s\" cannot be returned as real[]",
						output, model),
				 errdetail("Its elements are of type %s.", ox_dtype_name(dt)),
				 errhint("Use onnx_run, which returns every output as jsonb.")));
}

typedef struct FloatBuf
{
	float	   *data;
	int64		n;
	int64		cap;
} FloatBuf;

static void
floatbuf_append_tensor(FloatBuf *fb, const ox_tensor *t, const char *model, const char *output)
{
	int64		n = ox_tensor_numel(t);

	check_float_output(t->dtype, model, output);
	if (n < 0 || n > (int64) (MaxAllocSize / sizeof(float)) - fb->n)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("output \"%s\" of model \"%s\" is too large", output, model)));
	if (fb->n + n > fb->cap)
	{
		int64		cap = Max(fb->cap * 2, fb->n + n);

		cap = Min(cap, (int64) (MaxAllocSize / sizeof(float)));
		fb->data = fb->data ? repalloc(fb->data, cap * sizeof(float)) :
			palloc(Max(cap, 1) * sizeof(float));
		fb->cap = cap;
	}
	if (n == 0)
		return;
	if (t->dtype == OX_FLOAT)
		memcpy(fb->data + fb->n, t->data, n * sizeof(float));
	else
		for (int64 i = 0; i < n; i++)
			fb->data[fb->n + i] = (float) ox_tensor_get_double(t, i);
	fb->n += n;
}

float *
OnnxValueToFloats(const ox_value *v, const char *model, const char *output,
				  int64 *count, int64 *rows)
{
	FloatBuf	fb = {NULL, 0, 0};
	int64		unused_rows;

	/* callers that only want the values may pass rows = NULL */
	if (rows == NULL)
		rows = &unused_rows;
	switch (v->kind)
	{
		case OX_VALUE_TENSOR:
			floatbuf_append_tensor(&fb, &v->tensor, model, output);
			*rows = v->tensor.rank > 0 ? v->tensor.dims[0] : -1;
			break;
		case OX_VALUE_MAP:
			floatbuf_append_tensor(&fb, &v->map_values, model, output);
			*rows = -1;
			break;
		case OX_VALUE_SEQUENCE:
			/* ZipMap: one map per sample, values in class order */
			for (int i = 0; i < v->seq_len; i++)
			{
				const ox_value *item = &v->seq_items[i];

				if (item->kind == OX_VALUE_MAP)
					floatbuf_append_tensor(&fb, &item->map_values, model, output);
				else if (item->kind == OX_VALUE_TENSOR)
					floatbuf_append_tensor(&fb, &item->tensor, model, output);
				else
					ereport(ERROR,
							(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
							 errmsg("output \"%s\" of model \"%s\" cannot be returned as real[]",
									output, model),
							 errdetail("It is a sequence of nested sequences or absent values."),
							 errhint("Use onnx_run, which returns every output as jsonb.")));
			}
			*rows = v->seq_len;
			break;
		case OX_VALUE_NONE:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("output \"%s\" of model \"%s\" has no value", output, model),
					 errdetail("The model returned an empty optional.")));
			break;
	}
	*count = fb.n;
	if (fb.data == NULL)
		fb.data = palloc(sizeof(float));
	return fb.data;
}

/* ---- jsonb -> engine value ---- */

typedef struct JsonInput
{
	const char *model;
	const char *input;
	ox_dtype	dtype;
	int			rank;
	int64		dims[OX_MAX_RANK];
	int64		numel;
	char	   *data;
	int64		pos;
} JsonInput;

static void
json_input_error(JsonInput *ji, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid value for input \"%s\" of model \"%s\"", ji->input, ji->model),
			 errdetail_internal("%s", detail)));
}

static bool
jv_is_array(const JsonbValue *jv)
{
	return (jv->type == jbvBinary && JsonContainerIsArray(jv->val.binary.data) &&
			!JsonContainerIsScalar(jv->val.binary.data)) || jv->type == jbvArray;
}

static void
jv_array_elem(const JsonbValue *jv, int i, JsonbValue *out)
{
	JsonbValue *e = getIthJsonbValueFromContainer(jv->val.binary.data, i);

	*out = *e;
}

static int
jv_array_size(const JsonbValue *jv)
{
	return JsonContainerSize(jv->val.binary.data);
}

static int64
int_min(ox_dtype dt)
{
	switch (dt)
	{
		case OX_INT8:
			return PG_INT8_MIN;
		case OX_INT16:
			return PG_INT16_MIN;
		case OX_INT32:
			return PG_INT32_MIN;
		case OX_INT64:
			return PG_INT64_MIN;
		default:
			return 0;
	}
}

static int64
int_max(ox_dtype dt)
{
	switch (dt)
	{
		case OX_INT8:
			return PG_INT8_MAX;
		case OX_UINT8:
			return PG_UINT8_MAX;
		case OX_INT16:
			return PG_INT16_MAX;
		case OX_UINT16:
			return PG_UINT16_MAX;
		case OX_INT32:
			return PG_INT32_MAX;
		case OX_UINT32:
			return PG_UINT32_MAX;
		default:
			return PG_INT64_MAX;
	}
}

static const char *
jv_type_name(const JsonbValue *jv)
{
	switch (jv->type)
	{
		case jbvNull:
			return "null";
		case jbvString:
			return "a string";
		case jbvNumeric:
			return "a number";
		case jbvBool:
			return "a boolean";
		case jbvBinary:
		case jbvObject:
			return JsonContainerIsArray(jv->val.binary.data) ? "an array" : "an object";
		default:
			return "an unexpected value";
	}
}

static void
store_element(JsonInput *ji, const JsonbValue *jv)
{
	ox_dtype	dt = ji->dtype;
	int64		i = ji->pos++;

	if (dt == OX_STRING)
	{
		ox_string  *s = &((ox_string *) ji->data)[i];

		if (jv->type != jbvString)
			json_input_error(ji, psprintf("Expected a string, got %s.", jv_type_name(jv)));
		s->data = pnstrdup(jv->val.string.val, jv->val.string.len);
		s->len = jv->val.string.len;
		return;
	}
	if (dt == OX_BOOL)
	{
		if (jv->type != jbvBool)
			json_input_error(ji, psprintf("Expected true or false, got %s.", jv_type_name(jv)));
		((bool *) ji->data)[i] = jv->val.boolean;
		return;
	}
	if (ox_dtype_is_float(dt))
	{
		double		d;

		if (jv->type == jbvNumeric)
			d = DatumGetFloat8(DirectFunctionCall1(numeric_float8,
												   NumericGetDatum(jv->val.numeric)));
		else if (jv->type == jbvString)
		{
			char	   *s = pnstrdup(jv->val.string.val, jv->val.string.len);

			if (pg_strcasecmp(s, "NaN") == 0)
				d = get_float8_nan();
			else if (pg_strcasecmp(s, "Infinity") == 0 || pg_strcasecmp(s, "inf") == 0)
				d = get_float8_infinity();
			else if (pg_strcasecmp(s, "-Infinity") == 0 || pg_strcasecmp(s, "-inf") == 0)
				d = -get_float8_infinity();
			else
				json_input_error(ji, psprintf("Expected a number, got the string \"%s\".", s));
		}
		else
			json_input_error(ji, psprintf("Expected a number, got %s.", jv_type_name(jv)));
		if (dt != OX_DOUBLE && !isinf(d) && !isnan(d) && fabs(d) > FLT_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("value out of range for input \"%s\" of model \"%s\"",
							ji->input, ji->model),
					 errdetail("%g does not fit in type %s.", d, ox_dtype_name(dt))));
		switch (dt)
		{
			case OX_FLOAT:
				((float *) ji->data)[i] = (float) d;
				break;
			case OX_DOUBLE:
				((double *) ji->data)[i] = d;
				break;
			case OX_FLOAT16:
				((uint16 *) ji->data)[i] = ox_float_to_half((float) d);
				break;
			case OX_BFLOAT16:
				((uint16 *) ji->data)[i] = ox_float_to_bf16((float) d);
				break;
			default:
				elog(ERROR, "unexpected float type %d", (int) dt);
		}
		return;
	}
	if (ox_dtype_is_int(dt))
	{
		Datum		num;
		int64		v;
		ox_status	st;

		if (jv->type != jbvNumeric)
			json_input_error(ji, psprintf("Expected an integer, got %s.", jv_type_name(jv)));
		num = NumericGetDatum(jv->val.numeric);
		v = DatumGetInt64(DirectFunctionCall1(numeric_int8, num));
		if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, num,
											  DirectFunctionCall1(int8_numeric,
																  Int64GetDatum(v)))) != 0)
			json_input_error(ji, psprintf("Expected an integer, got %s.",
										  DatumGetCString(DirectFunctionCall1(numeric_out, num))));
		if (v < int_min(dt) || v > int_max(dt))
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("value out of range for input \"%s\" of model \"%s\"",
							ji->input, ji->model),
					 errdetail(INT64_FORMAT " does not fit in type %s.", v, ox_dtype_name(dt))));
		ox_status_clear(&st);
		if (ox_convert_elements(ji->data + i * ox_dtype_size(dt), dt, &v, OX_INT64, 1, &st) != OX_OK)
			OnnxReportStatus(&st, ONNX_PHASE_RUN, ji->model);
		return;
	}
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("input \"%s\" of model \"%s\" has unsupported element type %s",
					ji->input, ji->model, ox_dtype_name(dt))));
}

static void
fill_elements(JsonInput *ji, const JsonbValue *jv, int depth)
{
	if (depth == ji->rank)
	{
		if (jv_is_array(jv))
			json_input_error(ji, psprintf("Nested arrays are deeper at some elements than at the first; the input has %d dimensions.",
										  ji->rank));
		if (jv->type == jbvBinary)
			json_input_error(ji, "Inputs must be nested arrays of scalars, not objects.");
		store_element(ji, jv);
		return;
	}
	if (!jv_is_array(jv))
		json_input_error(ji, psprintf("Found %s where an array of dimension %d was expected; nested arrays must be rectangular.",
									  jv_type_name(jv), depth + 1));
	if (jv_array_size(jv) != ji->dims[depth])
		json_input_error(ji, psprintf("Arrays at dimension %d have different lengths (" INT64_FORMAT " and %d); nested arrays must be rectangular.",
									  depth + 1, ji->dims[depth], jv_array_size(jv)));
	for (int i = 0; i < ji->dims[depth]; i++)
	{
		JsonbValue	e;

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		jv_array_elem(jv, i, &e);
		fill_elements(ji, &e, depth + 1);
	}
}

void
OnnxJsonbToValue(Jsonb *jb, JsonbValue *jv, const ox_value_def *def,
				 const char *model, ox_value *out)
{
	JsonInput	ji;
	JsonbValue	node = *jv;
	size_t		esize;

	memset(&ji, 0, sizeof(ji));
	ji.model = model;
	ji.input = def->name;
	if (def->type.kind != OX_TYPE_TENSOR)
	{
		char		buf[256];

		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("input \"%s\" of model \"%s\" is not a tensor", def->name, model),
				 errdetail("Its type is %s; onnx_run takes tensor inputs only.",
						   ox_type_str(&def->type, buf, sizeof(buf)))));
	}
	ji.dtype = def->type.elem;
	esize = (ji.dtype == OX_STRING) ? sizeof(ox_string) : ox_dtype_size(ji.dtype);
	if (esize == 0 || ji.dtype == OX_COMPLEX64 || ji.dtype == OX_COMPLEX128)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("input \"%s\" of model \"%s\" has unsupported element type %s",
						def->name, model, ox_dtype_name(ji.dtype))));

	/* the shape is the nesting along the first elements */
	ji.numel = 1;
	while (jv_is_array(&node))
	{
		int			n = jv_array_size(&node);

		if (ji.rank == OX_MAX_RANK)
			json_input_error(&ji, psprintf("Inputs may have at most %d dimensions.", OX_MAX_RANK));
		ji.dims[ji.rank++] = n;
		ji.numel *= n;
		if (n == 0)
			break;
		jv_array_elem(&node, 0, &node);
	}
	if (ji.numel > (int64) (MaxAllocSize / esize))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("input \"%s\" of model \"%s\" is too large", def->name, model)));
	ji.data = palloc0(Max(ji.numel, 1) * esize);
	if (ji.numel > 0)
		fill_elements(&ji, jv, 0);

	memset(out, 0, sizeof(*out));
	out->kind = OX_VALUE_TENSOR;
	out->tensor.dtype = ji.dtype;
	out->tensor.rank = ji.rank;
	memcpy(out->tensor.dims, ji.dims, sizeof(int64) * ji.rank);
	out->tensor.data = ji.numel > 0 ? ji.data : NULL;
	out->tensor.owns = false;
	out->tensor.capacity = 0;
}

/* ---- engine value -> jsonb ---- */

static void
push_element(JsonbParseState **state, const ox_tensor *t, int64 i, bool elem,
			 const char *model, const char *output)
{
	JsonbValue	v;

	switch (t->dtype)
	{
		case OX_FLOAT:
			OnnxJbFloat(state, ((const float *) t->data)[i], elem);
			break;
		case OX_FLOAT16:
		case OX_BFLOAT16:
			OnnxJbFloat(state, (float) ox_tensor_get_double(t, i), elem);
			break;
		case OX_DOUBLE:
			OnnxJbDouble(state, ((const double *) t->data)[i], elem);
			break;
		case OX_UINT64:
			jb_numeric_text(state, psprintf(UINT64_FORMAT, ((const uint64 *) t->data)[i]), elem);
			break;
		case OX_BOOL:
			v.type = jbvBool;
			v.val.boolean = ((const bool *) t->data)[i];
			pushJsonbValue(state, elem ? WJB_ELEM : WJB_VALUE, &v);
			break;
		case OX_STRING:
			{
				const ox_string *s = &((const ox_string *) t->data)[i];

				OnnxJbBytes(state, elem ? WJB_ELEM : WJB_VALUE,
							s->data ? s->data : "", s->data ? s->len : 0);
			}
			break;
		default:
			if (ox_dtype_is_int(t->dtype))
				OnnxJbInt(state, ox_tensor_get_int64(t, i), elem);
			else
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("output \"%s\" of model \"%s\" has unsupported element type %s",
								output, model, ox_dtype_name(t->dtype))));
			break;
	}
}

/*
 * What the JSON form of a result costs, checked before any of it is built.
 *
 * onnx.max_run_memory bounds the tensors of a run, but not their JSON:
 * pushJsonbValue's tree takes about 72 bytes a number and 256 an array
 * (measured: ConstantOfShape [4000000, 1] as JSON took a backend to 1.3 GB
 * for a 16 MB tensor), and an empty tensor holds no memory at all however
 * large its other dimensions, while its JSON has an array for every index
 * of every dimension but the last: [4294967296, 89, 0] would be 382 billion
 * of them, and building them took a backend to 9 GB in 20 s, on its way to
 * the out-of-memory killer and the whole server's recovery.
 *
 * Two checks.  A result whose smallest possible jsonb (8 bytes an array, its
 * header and its entry in its parent; 4 an element, its entry) passes the
 * most a jsonb container holds can never be returned, whatever the limits.
 * Otherwise the tree's estimated size counts against onnx.max_run_memory,
 * as the run's tensors do.
 */
#define JSON_ARRAY_COST		256
#define JSON_NUMBER_COST	72
#define JSON_OTHER_COST		40
#define JSON_COST_CAP		(UINT64CONST(1) << 62)

static uint64
cost_add(uint64 a, uint64 b)
{
	return a > JSON_COST_CAP - Min(b, JSON_COST_CAP) ? JSON_COST_CAP : a + b;
}

static uint64
cost_mul(uint64 a, uint64 b)
{
	return b != 0 && a > JSON_COST_CAP / b ? JSON_COST_CAP : a * b;
}

static void
jsonb_size_add_tensor(OnnxJsonbSize *s, const ox_tensor *t, uint64 elem_cost)
{
	uint64		arrays = 0,
				prefix = 1;

	/* the arrays at depth d are the product of the dimensions before it */
	for (int d = 0; d < t->rank; d++)
	{
		arrays = cost_add(arrays, prefix);
		prefix = cost_mul(prefix, (uint64) Max(t->dims[d], 0));
	}
	/* prefix is now the elements */
	s->min_bytes = cost_add(s->min_bytes, cost_add(cost_mul(arrays, 8), cost_mul(prefix, 4)));
	s->build_bytes = cost_add(s->build_bytes,
							  cost_add(cost_mul(arrays, JSON_ARRAY_COST), cost_mul(prefix, elem_cost)));
}

static uint64
json_elem_cost(ox_dtype dt)
{
	return dt == OX_BOOL || dt == OX_STRING ? JSON_OTHER_COST : JSON_NUMBER_COST;
}

void
OnnxJsonbSizeAdd(OnnxJsonbSize *s, const ox_value *v)
{
	check_stack_depth();
	switch (v->kind)
	{
		case OX_VALUE_TENSOR:
			jsonb_size_add_tensor(s, &v->tensor, json_elem_cost(v->tensor.dtype));
			break;
		case OX_VALUE_SEQUENCE:
			s->min_bytes = cost_add(s->min_bytes, 8);
			s->build_bytes = cost_add(s->build_bytes, JSON_ARRAY_COST);
			for (int i = 0; i < v->seq_len; i++)
				OnnxJsonbSizeAdd(s, &v->seq_items[i]);
			break;
		case OX_VALUE_MAP:
			{
				uint64		n = (uint64) Max(ox_tensor_numel(&v->map_keys), 0);

				/* an entry: its key and its value */
				s->min_bytes = cost_add(s->min_bytes, cost_add(8, cost_mul(n, 8)));
				s->build_bytes = cost_add(s->build_bytes,
										  cost_add(JSON_ARRAY_COST,
												   cost_mul(n, JSON_OTHER_COST +
															json_elem_cost(v->map_values.dtype))));
			}
			break;
		case OX_VALUE_NONE:
			s->min_bytes = cost_add(s->min_bytes, 4);
			s->build_bytes = cost_add(s->build_bytes, JSON_OTHER_COST);
			break;
	}
}

/* a flat list of n elements (numbers, or others with payload bytes between them) */
void
OnnxJsonbSizeAddList(OnnxJsonbSize *s, uint64 n, uint64 payload, bool numbers)
{
	s->min_bytes = cost_add(s->min_bytes, cost_add(8, cost_add(cost_mul(n, 4), payload)));
	s->build_bytes = cost_add(s->build_bytes,
							  cost_add(JSON_ARRAY_COST,
									   cost_add(cost_mul(n, numbers ? JSON_NUMBER_COST : JSON_OTHER_COST),
												payload)));
}

bool
OnnxJsonbSizeFits(const OnnxJsonbSize *s)
{
	return s->min_bytes <= JENTRY_OFFLENMASK;
}

void
OnnxJsonbSizeCheck(const OnnxJsonbSize *s, const char *model)
{
	Size		limit = OnnxMaxRunBytes();

	if (s->min_bytes > JENTRY_OFFLENMASK)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("result of model \"%s\" is too large to return as JSON", model),
				 errdetail("Its JSON needs more than the %d bytes a jsonb value holds.",
						   JENTRY_OFFLENMASK)));
	if (limit != 0 && s->build_bytes > limit)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("result of model \"%s\" is too large to return as JSON", model),
				 errdetail("Building its JSON would take about %.1f MB; onnx.max_run_memory allows %d MB.",
						   (double) s->build_bytes / (1024.0 * 1024.0), onnx_max_run_memory),
				 errhint("onnx_predict and onnx_predict_batch return real[], at a small part of that cost; "
						 "a superuser may raise onnx.max_run_memory.")));
}

static void
push_tensor(JsonbParseState **state, const ox_tensor *t, int depth, int64 *pos,
			bool elem, const char *model, const char *output)
{
	if (depth == t->rank)
	{
		push_element(state, t, (*pos)++, elem, model, output);
		return;
	}
	pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
	for (int64 i = 0; i < t->dims[depth]; i++)
	{
		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		push_tensor(state, t, depth + 1, pos, true, model, output);
	}
	pushJsonbValue(state, WJB_END_ARRAY, NULL);
}

void
OnnxValueToJsonb(JsonbParseState **state, const ox_value *v, bool is_elem,
				 const char *model, const char *output)
{
	JsonbValue	null;
	int64		pos = 0;

	check_stack_depth();
	switch (v->kind)
	{
		case OX_VALUE_TENSOR:
			push_tensor(state, &v->tensor, 0, &pos, is_elem, model, output);
			break;
		case OX_VALUE_SEQUENCE:
			pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
			for (int i = 0; i < v->seq_len; i++)
				OnnxValueToJsonb(state, &v->seq_items[i], true, model, output);
			pushJsonbValue(state, WJB_END_ARRAY, NULL);
			break;
		case OX_VALUE_MAP:
			{
				const ox_tensor *k = &v->map_keys;
				int64		n = ox_tensor_numel(k);

				pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
				for (int64 i = 0; i < n; i++)
				{
					if (k->dtype == OX_STRING)
					{
						const ox_string *s = &((const ox_string *) k->data)[i];

						OnnxJbBytes(state, WJB_KEY, s->data ? s->data : "", s->data ? s->len : 0);
					}
					else
					{
						char	   *key = psprintf(INT64_FORMAT, ox_tensor_get_int64(k, i));

						OnnxJbKey(state, key);
					}
					push_element(state, &v->map_values, i, false, model, output);
				}
				pushJsonbValue(state, WJB_END_OBJECT, NULL);
			}
			break;
		case OX_VALUE_NONE:
			null.type = jbvNull;
			pushJsonbValue(state, is_elem ? WJB_ELEM : WJB_VALUE, &null);
			break;
	}
}
