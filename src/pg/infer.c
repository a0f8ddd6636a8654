/*
 * infer.c
 *	  onnx_predict (one sample), onnx_predict_batch (one row per sample) and
 *	  onnx_run (named jsonb inputs and outputs), and the resolved model calls
 *	  (OnnxCall) that the batch forms in batch*.c share with them.
 *
 * Each call site resolves its session once and keeps it in fn_extra, with
 * the cache epoch it saw; a row only compares the epoch (and the model name,
 * unless the name is a constant of the query) before running.
 *
 * The row-wise path does no allocation per row beyond its result array:
 *	 - features are read in place, also from a short-header (packed) array,
 *	   which PostgreSQL's own array macros would first copy into a palloc'd
 *	   4-byte-header version; elements that are not aligned for the engine
 *	   (a packed array's usually are not) or that need converting are copied
 *	   into a scratch buffer kept by the call site;
 *	 - the input tensor's shape is computed once per feature count;
 *	 - the engine is entered through ox_session_run_tensor, which binds just
 *	   the tensor, and computes only what the requested output needs;
 *	 - the result array is built straight from the output tensor.
 *
 * Features may be real[], double precision[], smallint[], integer[],
 * bigint[] or numeric[] (the SQL functions take "any" so that each arrives
 * as it is, and an untyped literal such as '{5.1,3.5,1.4,0.2}' is read as
 * real[]); they are converted to the element type the model declares.
 *
 * The batch dimension: an input declared [N, d1, ...] (N symbolic, or 1)
 * gets shape [samples, d1, ...]; the features of one sample must fill
 * d1 * ... (one symbolic dimension among d1... is inferred from the count).
 * An input whose first dimension is a fixed size other than 1 has no batch
 * dimension: onnx_predict fills the whole declared shape.
 */
#include "onnx_pg.h"

#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/primnodes.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

PG_FUNCTION_INFO_V1(onnx_predict);
PG_FUNCTION_INFO_V1(onnx_predict_batch);
PG_FUNCTION_INFO_V1(onnx_run);

/* the state onnx_predict keeps in fn_extra */
typedef struct CallSite
{
	OnnxCall	call;
	bool		names_stable;	/* model and output are constants of the query */
	bool		literal;		/* features are an untyped literal */
	ArrayType  *literal_value;	/* that literal, parsed */
	Oid			arg_type;		/* type of the features (base type) */
} CallSite;

static bool
text_equals(text *t, const char *s)
{
	size_t		len = VARSIZE_ANY_EXHDR(t);

	return s != NULL && strlen(s) == len && memcmp(VARDATA_ANY(t), s, len) == 0;
}

static char *
value_names(ox_session *s, bool outputs)
{
	StringInfoData buf;
	int			n = outputs ? ox_session_output_count(s) : ox_session_input_count(s);

	initStringInfo(&buf);
	for (int i = 0; i < n; i++)
	{
		const ox_value_def *d = outputs ? ox_session_output(s, i) : ox_session_input(s, i);

		appendStringInfo(&buf, "%s%s", i ? ", " : "", d->name);
	}
	return buf.data;
}

/* ---- resolved calls ---- */

bool
OnnxCallCurrent(const OnnxCall *call, const char *model, const char *output)
{
	return call->epoch == OnnxCacheEpoch && call->model != NULL &&
		strcmp(call->model, model) == 0 &&
		(output == NULL ? call->output == NULL :
		 (call->output != NULL && strcmp(call->output, output) == 0));
}

/*
 * Resolve the session and output of a call.  With quiet, a model that does
 * not exist, an unknown output, or a model onnx_predict cannot feed (not
 * exactly one tensor input) return false instead of raising the error the
 * row-wise call would raise; a batch scan then leaves those rows to the
 * row-wise call, so that the error comes at the same row as without
 * batching.
 */
bool
OnnxCallResolve(OnnxCall *call, const char *model, const char *output, bool quiet)
{
	MemoryContext old;
	const ox_value_def *def;
	int			out_index = 0;

	if (call->mcxt == NULL)
		call->mcxt = CurrentMemoryContext;
	call->epoch = 0;
	call->session = NULL;
	call->input = NULL;
	call->shaped_per_sample = 0;

	if (quiet)
	{
		OnnxModelKey key;

		if (strlen(model) > ONNX_MAX_NAME_LEN || !OnnxCatalogLookup(model, &key))
			return false;
	}
	call->entry = OnnxCacheAcquire(model);
	call->session = OnnxCacheSession(call->entry);
	if (output)
	{
		out_index = ox_session_find_output(call->session, output);
		if (out_index < 0)
		{
			if (quiet)
				return false;
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("model \"%s\" has no output named \"%s\"", model, output),
					 errdetail("Its outputs are: %s.", value_names(call->session, true))));
		}
	}
	else if (ox_session_output_count(call->session) < 1)
	{
		if (quiet)
			return false;
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model \"%s\" has no outputs", model)));
	}
	call->out_index = out_index;
	call->target = ox_session_dense_source(call->session, out_index);

	/* the one input that onnx_predict feeds, when there is one */
	def = ox_session_input_count(call->session) == 1 ? ox_session_input(call->session, 0) : NULL;
	if (def && (def->type.kind == OX_TYPE_TENSOR || def->type.kind == OX_TYPE_UNKNOWN))
	{
		ox_dtype	dt = def->type.kind == OX_TYPE_TENSOR ? def->type.elem : OX_UNDEFINED;

		call->input = def;
		call->in_dtype = dt == OX_UNDEFINED ? OX_FLOAT : dt;
	}
	else if (quiet)
		return false;

	old = MemoryContextSwitchTo(call->mcxt);
	if (call->model == NULL || strcmp(call->model, model) != 0)
	{
		if (call->model)
			pfree(call->model);
		call->model = pstrdup(model);
	}
	if (call->output)
		pfree(call->output);
	call->output = output ? pstrdup(output) : NULL;
	MemoryContextSwitchTo(old);
	/* anything above may have bumped the epoch; we are current now */
	call->epoch = OnnxCacheEpoch;
	return true;
}

/* the one input a row-wise or batch call feeds, or an error */
static void
require_single_input(OnnxCall *call)
{
	int			n = ox_session_input_count(call->session);
	const ox_value_def *def;

	if (call->input)
		return;
	if (n != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model \"%s\" takes %d inputs", call->model, n),
				 errdetail("onnx_predict and onnx_predict_batch feed exactly one input; the model's inputs are: %s.",
						   n ? value_names(call->session, false) : "none"),
				 errhint("Use onnx_run to feed named inputs.")));
	def = ox_session_input(call->session, 0);
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("input \"%s\" of model \"%s\" is not a tensor", def->name, call->model),
			 errhint("Use onnx_run.")));
}

/* "[N, 4]": symbolic dimensions by name, unknown ones as ? */
static const char *
declared_shape(const ox_type *t, char *buf, size_t len)
{
	StringInfoData s;

	initStringInfo(&s);
	appendStringInfoChar(&s, '[');
	for (int i = 0; i < t->rank; i++)
	{
		if (i)
			appendStringInfoString(&s, ", ");
		if (t->dims[i].param && t->dims[i].param[0])
			appendStringInfoString(&s, t->dims[i].param);
		else if (t->dims[i].value >= 0)
			appendStringInfo(&s, INT64_FORMAT, (int64) t->dims[i].value);
		else
			appendStringInfoChar(&s, '?');
	}
	appendStringInfoChar(&s, ']');
	strlcpy(buf, s.data, len);
	pfree(s.data);
	return buf;
}

/*
 * Shape the input for `samples` samples of `per_sample` features each
 * (samples < 0: one sample, no batch dimension forced) into call->in.  The
 * shape is kept until the next call with other counts.  With quiet,
 * features that do not fit return false instead of raising.
 */
bool
OnnxCallShape(OnnxCall *call, int64 samples, int64 per_sample, bool quiet)
{
	const ox_value_def *def;
	const ox_type *ty;
	ox_tensor  *t = &call->in;
	bool		batch_fn = samples >= 0;
	int64		rows = batch_fn ? samples : 1;
	int			first;
	int64		known = 1;
	int			unknown = -1;
	int			n_unknown = 0;
	char		buf[512];

	if (call->shaped_per_sample == per_sample && call->shaped_samples == samples &&
		per_sample > 0)
		return true;
	require_single_input(call);
	def = call->input;
	ty = &def->type;
	call->shaped_per_sample = 0;
	t->dtype = call->in_dtype;
	t->owns = false;
	t->capacity = 0;
	t->data = NULL;

	if (ty->kind != OX_TYPE_TENSOR || ty->rank < 0)
	{
		/* undeclared shape: [samples, features] */
		t->rank = 2;
		t->dims[0] = rows;
		t->dims[1] = per_sample;
		goto done;
	}
	if (ty->rank == 0)
	{
		if (batch_fn || per_sample != 1)
		{
			if (quiet)
				return false;
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("wrong number of features for model \"%s\"", call->model),
					 errdetail("Input \"%s\" is a scalar (%s), which takes 1 feature, got " INT64_FORMAT ".",
							   def->name, declared_shape(ty, buf, sizeof(buf)),
							   batch_fn ? samples * per_sample : per_sample)));
		}
		t->rank = 0;
		goto done;
	}

	t->rank = ty->rank;
	if (ty->dims[0].value < 0 || (ty->dims[0].value == 1 && ty->rank >= 2) ||
		(batch_fn && ty->dims[0].value == rows))
	{
		/* a batch dimension */
		t->dims[0] = rows;
		first = 1;
	}
	else if (batch_fn)
	{
		if (quiet)
			return false;
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model \"%s\" takes a fixed number of samples", call->model),
				 errdetail("Input \"%s\" has shape %s, got " INT64_FORMAT " samples.",
						   def->name, declared_shape(ty, buf, sizeof(buf)), samples),
				 errhint("Use onnx_predict for one sample at a time.")));
	}
	else
		first = 0;				/* no batch dimension: fill the declared shape */

	for (int i = first; i < ty->rank; i++)
	{
		if (ty->dims[i].value < 0)
		{
			unknown = i;
			n_unknown++;
		}
		else
		{
			known *= ty->dims[i].value;
			t->dims[i] = ty->dims[i].value;
		}
	}
	if (n_unknown > 1)
	{
		if (quiet)
			return false;
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot shape the features for model \"%s\"", call->model),
				 errdetail("Input \"%s\" has shape %s, with more than one unknown dimension per sample.",
						   def->name, declared_shape(ty, buf, sizeof(buf))),
				 errhint("Use onnx_run, which takes the shape from nested arrays.")));
	}
	if (n_unknown == 1)
	{
		if (known <= 0 || per_sample % known != 0)
		{
			if (quiet)
				return false;
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("wrong number of features for model \"%s\"", call->model),
					 errdetail("Input \"%s\" has shape %s: each sample takes a multiple of " INT64_FORMAT " features, got " INT64_FORMAT ".",
							   def->name, declared_shape(ty, buf, sizeof(buf)), known, per_sample)));
		}
		t->dims[unknown] = per_sample / known;
	}
	else if (known != per_sample)
	{
		if (quiet)
			return false;
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("wrong number of features for model \"%s\"", call->model),
				 errdetail("Input \"%s\" has shape %s: each sample takes " INT64_FORMAT " features, got " INT64_FORMAT ".",
						   def->name, declared_shape(ty, buf, sizeof(buf)), known, per_sample)));
	}
done:
	call->shaped_samples = samples;
	call->shaped_per_sample = per_sample;
	return true;
}

/* Is the model's input element type one onnx_predict can produce? */
bool
OnnxCallInputSupported(const OnnxCall *call)
{
	ox_dtype	dt = call->in_dtype;

	return !(dt == OX_STRING || dt == OX_COMPLEX64 || dt == OX_COMPLEX128 ||
			 ox_dtype_size(dt) == 0);
}

static void
require_supported_input(OnnxCall *call)
{
	if (!OnnxCallInputSupported(call))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("input \"%s\" of model \"%s\" takes %s elements", call->input->name,
						call->model, ox_dtype_name(call->in_dtype)),
				 errhint("Use onnx_run.")));
}

/* a scratch buffer of at least size bytes, 64-byte aligned, kept in mcxt */
void *
OnnxCallScratch(OnnxCall *call, Size size)
{
	if (call->scratch_size < size)
	{
		Size		want = Max(size, 256);

		if (call->scratch_raw)
			pfree(call->scratch_raw);
		call->scratch_raw = MemoryContextAllocHuge(call->mcxt, want + 64);
		call->scratch = (void *) TYPEALIGN(64, call->scratch_raw);
		call->scratch_size = want;
	}
	return call->scratch;
}

/*
 * Run the call's session on call->in (shaped, data set), computing only
 * what the requested output needs.  Errors are returned, not raised.
 */
ox_code
OnnxCallRun(OnnxCall *call, ox_status *st)
{
	ox_code		rc;

	ox_status_clear(st);
	if (OnnxCheckRunInputs(OnnxTensorBytes(&call->in), st) != OX_OK)
		return st->code;
	OnnxCacheTouch(call->entry);
	OnnxStatsRunRows(call->shaped_samples > 0 ? call->shaped_samples : 1);
	ox_status_clear(st);
	rc = ox_session_run_tensor(call->session, &call->in, &call->target, 1, st);
	if (rc == OX_OK)
		OnnxCacheAfterRun(call->entry);
	return rc;
}

void
OnnxCallReport(OnnxCall *call, const ox_status *st)
{
	if (st->code == OX_CANCELED)
		OnnxServiceCancel(call->model);
	OnnxReportStatus(st, ONNX_PHASE_RUN, call->model);
}

/* the requested output of the last run, dense */
const ox_value *
OnnxCallResult(OnnxCall *call)
{
	return ox_session_value(call->session, call->target);
}

/* ---- reading numeric arrays in place ---- */

void
OnnxArrayRead(Datum d, OnnxArrayView *v)
{
	struct varlena *p = (struct varlena *) DatumGetPointer(d);
	const char *base;
	const char *logical;
	int32		hdr[3];			/* ndim, dataoffset, elemtype */

	/* compressed, out-of-line or expanded: the usual detoast (a copy) */
	if (VARATT_IS_EXTERNAL(p) || VARATT_IS_COMPRESSED(p))
		p = (struct varlena *) PG_DETOAST_DATUM(d);

	/*
	 * Everything after the length word is the same in both header forms;
	 * with a 1-byte header it merely starts 3 bytes earlier, so offsets
	 * measured from the start of a 4-byte-header ArrayType apply to
	 * "logical" below.  Fields are read with memcpy: a packed array has no
	 * alignment.
	 */
	base = VARDATA_ANY(p);
	logical = base - VARHDRSZ;
	memcpy(hdr, base, sizeof(hdr));
	v->ndim = hdr[0];
	v->elemtype = (Oid) hdr[2];
	if (v->ndim < 0 || v->ndim > MAXDIM)
		elog(ERROR, "invalid array: %d dimensions", v->ndim);
	if (v->ndim == 1)
	{
		/* the common case, without calls: a fixed-size copy is inline */
		memcpy(v->dims, base + sizeof(hdr), sizeof(int));
		v->nitems = v->dims[0] >= 0 ? v->dims[0] : ArrayGetNItems(1, v->dims);
	}
	else
	{
		memcpy(v->dims, base + sizeof(hdr), sizeof(int) * v->ndim);
		v->nitems = v->ndim == 0 ? 0 : ArrayGetNItems(v->ndim, v->dims);
	}
	if (hdr[1] != 0)
	{
		v->nullbitmap = (const bits8 *) (base + sizeof(hdr) + 2 * sizeof(int) * v->ndim);
		v->data = logical + hdr[1];
	}
	else
	{
		v->nullbitmap = NULL;
		v->data = logical + ARR_OVERHEAD_NONULLS(v->ndim);
	}
	v->hasnull = false;
	if (v->nullbitmap)
	{
		for (int64 i = 0; i < v->nitems; i++)
			if (!(v->nullbitmap[i / 8] & (1 << (i % 8))))
			{
				v->hasnull = true;
				break;
			}
	}
	v->flat = (ArrayType *) (VARATT_IS_4B_U(p) ? p : NULL);
	v->datum = PointerGetDatum(p);
}

ox_dtype
OnnxElemDtype(Oid elemtype)
{
	switch (elemtype)
	{
		case FLOAT4OID:
			return OX_FLOAT;
		case FLOAT8OID:
			return OX_DOUBLE;
		case INT2OID:
			return OX_INT16;
		case INT4OID:
			return OX_INT32;
		case INT8OID:
			return OX_INT64;
		default:
			return OX_UNDEFINED;
	}
}

/*
 * The features as n elements of the call's input type: in place when the
 * types agree and the data is aligned, else converted into scratch.
 * Numeric elements go through numeric_float4/numeric_float8 (what a cast
 * to real[] did when onnx_predict took real[] only).  Errors are returned.
 */
const void *
OnnxFeatureData(OnnxCall *call, const OnnxArrayView *v, void *dst, ox_status *st)
{
	ox_dtype	src_dt = OnnxElemDtype(v->elemtype);
	ox_dtype	dt = call->in_dtype;
	int64		n = v->nitems;
	Size		esize;

	ox_status_clear(st);
	if (src_dt == OX_UNDEFINED)
	{
		/* numeric[]: per element, only reached by untyped numeric input */
		ArrayType  *a = DatumGetArrayTypeP(v->datum);
		Datum	   *elems;
		int			nelems;
		ox_dtype	via = dt == OX_DOUBLE ? OX_DOUBLE : OX_FLOAT;
		void	   *tmp;

		Assert(v->elemtype == NUMERICOID);
		deconstruct_array(a, NUMERICOID, -1, false, TYPALIGN_INT, &elems, NULL, &nelems);
		tmp = palloc(sizeof(double) * Max(nelems, 1));
		for (int i = 0; i < nelems; i++)
		{
			if (via == OX_DOUBLE)
				((double *) tmp)[i] = DatumGetFloat8(DirectFunctionCall1(numeric_float8, elems[i]));
			else
				((float *) tmp)[i] = DatumGetFloat4(DirectFunctionCall1(numeric_float4, elems[i]));
		}
		if (dst == NULL)
			dst = OnnxCallScratch(call, n * ox_dtype_size(dt));
		if (ox_convert_elements(dst, dt, tmp, via, n, st) != OX_OK)
			return NULL;
		pfree(tmp);
		return dst;
	}
	esize = ox_dtype_size(src_dt);
	if (src_dt == dt && dst == NULL && ((uintptr_t) v->data % esize) == 0)
		return v->data;
	if (dst == NULL)
		dst = OnnxCallScratch(call, n * Max(esize, ox_dtype_size(dt)));
	if (src_dt == dt)
	{
		OnnxCopyShort(dst, v->data, n * esize);
		return dst;
	}
	if (((uintptr_t) v->data % esize) != 0)
	{
		/* align first (through the end of the scratch area), then convert */
		void	   *tmp = palloc(n * esize);

		memcpy(tmp, v->data, n * esize);
		if (ox_convert_elements(dst, dt, tmp, src_dt, n, st) != OX_OK)
			return NULL;
		pfree(tmp);
		return dst;
	}
	if (ox_convert_elements(dst, dt, v->data, src_dt, n, st) != OX_OK)
		return NULL;
	return dst;
}

/* ---- results ---- */

/* can OnnxTensorFloats convert this value without error? */
bool
OnnxResultIsDense(const ox_value *v)
{
	ox_dtype	dt;

	if (v == NULL || v->kind != OX_VALUE_TENSOR)
		return false;
	dt = v->tensor.dtype;
	return !(dt == OX_STRING || dt == OX_COMPLEX64 || dt == OX_COMPLEX128 ||
			 ox_dtype_size(dt) == 0);
}

/*
 * A float4[] of the given dims holding elements [first, first + n) of a
 * dense numeric tensor: one palloc, no intermediate copy.
 */
ArrayType *
OnnxTensorFloatArray(const ox_tensor *t, int64 first, int64 n, int ndims, const int *dims)
{
	Size		nbytes;
	ArrayType  *a;
	ox_status	st;

	if (n == 0)
		return construct_empty_array(FLOAT4OID);
	if (n > (int64) ((MaxAllocSize - ARR_OVERHEAD_NONULLS(ndims)) / sizeof(float4)))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("result has too many elements for an array"),
				 errdetail("The result has " INT64_FORMAT " elements.", n)));
	nbytes = ARR_OVERHEAD_NONULLS(ndims) + n * sizeof(float4);
	a = (ArrayType *) palloc(nbytes);
	/* the header, including any padding before the data, is zeroed */
	memset(a, 0, ARR_OVERHEAD_NONULLS(ndims));
	SET_VARSIZE(a, nbytes);
	a->ndim = ndims;
	a->elemtype = FLOAT4OID;
	for (int i = 0; i < ndims; i++)
	{
		ARR_DIMS(a)[i] = dims[i];
		ARR_LBOUND(a)[i] = 1;
	}
	if (t->dtype == OX_FLOAT)
		memcpy(ARR_DATA_PTR(a), (const float *) t->data + first, n * sizeof(float4));
	else
	{
		ox_status_clear(&st);
		if (ox_convert_elements(ARR_DATA_PTR(a), OX_FLOAT,
								(const char *) t->data + first * ox_dtype_size(t->dtype),
								t->dtype, n, &st) != OX_OK)
			OnnxReportStatus(&st, ONNX_PHASE_RUN, NULL);
	}
	return a;
}

/* the whole result of a one-sample run as a one-dimensional real[] */
static ArrayType *
row_result(OnnxCall *call)
{
	const ox_value *v = OnnxCallResult(call);
	int64		count;
	int64		rows;
	float	   *res;
	int			dims[1];

	if (OnnxResultIsDense(v))
	{
		count = ox_tensor_numel(&v->tensor);
		if (count > PG_INT32_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("result of model \"%s\" is too large for an array", call->model)));
		dims[0] = (int) count;
		return OnnxTensorFloatArray(&v->tensor, 0, count, 1, dims);
	}
	res = OnnxValueToFloats(v, call->model,
							ox_session_output(call->session, call->out_index)->name,
							&count, &rows);
	if (count > PG_INT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("result of model \"%s\" is too large for an array", call->model)));
	dims[0] = (int) count;
	return OnnxFloatArray(res, 1, dims);
}

/* ---- SQL functions ---- */

/* the call site's state, created at its first call */
static CallSite *
call_site(FunctionCallInfo fcinfo)
{
	CallSite   *cs = (CallSite *) fcinfo->flinfo->fn_extra;

	if (cs == NULL)
	{
		cs = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(CallSite));
		cs->call.mcxt = fcinfo->flinfo->fn_mcxt;
		cs->names_stable = get_fn_expr_arg_stable(fcinfo->flinfo, 0) &&
			(PG_NARGS() < 3 || get_fn_expr_arg_stable(fcinfo->flinfo, 2));
		fcinfo->flinfo->fn_extra = cs;
	}
	return cs;
}

/*
 * The call site's session, resolved when new or stale.  The model and
 * output names are compared with the remembered ones only when they are not
 * constants of the query.
 */
static CallSite *
resolve(FunctionCallInfo fcinfo, text *model, text *output)
{
	CallSite   *cs = call_site(fcinfo);

	if (cs->call.epoch == OnnxCacheEpoch &&
		(cs->names_stable ||
		 (text_equals(model, cs->call.model) &&
		  (output == NULL ? cs->call.output == NULL : text_equals(output, cs->call.output)))))
		return cs;
	OnnxCallResolve(&cs->call, text_to_cstring(model), output ? text_to_cstring(output) : NULL,
					false);
	return cs;
}

/*
 * The declared type of the features argument, checked once per call site:
 * an array of numbers, or an untyped literal (read as real[]).
 */
static void
features_type(FunctionCallInfo fcinfo, CallSite *cs)
{
	Oid			declared = get_fn_expr_argtype(fcinfo->flinfo, 1);
	Oid			t;
	Oid			elem;

	if (!OidIsValid(declared))
		elog(ERROR, "could not determine the type of the features");
	t = getBaseType(declared);
	cs->literal = (t == UNKNOWNOID);
	if (cs->literal)
		t = FLOAT4ARRAYOID;
	elem = get_element_type(t);
	if (!OidIsValid(elem) ||
		(OnnxElemDtype(elem) == OX_UNDEFINED && elem != NUMERICOID))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("features must be an array of numbers"),
				 errdetail("Got type %s; the features may be real[], double precision[], integer[], bigint[], smallint[] or numeric[].",
						   format_type_be(declared))));
	cs->arg_type = t;
}

/*
 * An untyped literal such as '{5.1,3.5,1.4,0.2}', read as real[] (what the
 * cast to real[] did).  Such a literal is a constant: it is parsed once.
 */
static Datum
literal_features(FunctionCallInfo fcinfo, CallSite *cs)
{
	MemoryContext old;
	Datum		d;

	if (cs->literal_value)
		return PointerGetDatum(cs->literal_value);
	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	d = OidInputFunctionCall(F_ARRAY_IN, DatumGetCString(PG_GETARG_DATUM(1)), FLOAT4OID, -1);
	MemoryContextSwitchTo(old);
	if (get_fn_expr_arg_stable(fcinfo->flinfo, 1))
		cs->literal_value = DatumGetArrayTypeP(d);
	return d;
}

static void
check_row_features(const OnnxArrayView *v)
{
	if (v->ndim > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("features must be a one-dimensional array"),
				 errdetail("Got a %d-dimensional array.", v->ndim),
				 errhint("Use onnx_predict_batch for several samples.")));
	if (v->nitems == 0)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("features must not be empty")));
	if (v->hasnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("features must not contain null values")));
}

/*
 * A scan hands a row-wise call one row at a time, from pages that are seldom
 * in the CPU's caches, and the engine's first read of the features would
 * wait for memory line by line.  So the features' lines are requested here,
 * together, ahead of the call's checks and the run's set-up; and so are
 * those just below the row, as many as it has: a heap page fills from its
 * end, so the scan's next tuple is usually there.
 */
static inline void
prefetch_row(const OnnxArrayView *v)
{
	const char *row = DatumGetPointer(v->datum);
	Size		len = VARSIZE_ANY(row);

	if (len <= 4096)			/* a large input's run outweighs this */
		OnnxPrefetch(row - len - 64, 2 * len + 64);
}

Datum
onnx_predict(PG_FUNCTION_ARGS)
{
	CallSite   *cs = (CallSite *) fcinfo->flinfo->fn_extra;
	OnnxArrayView v;
	ox_status	st;

	if (unlikely(cs == NULL))
	{
		cs = call_site(fcinfo);
		features_type(fcinfo, cs);
	}
	OnnxArrayRead(unlikely(cs->literal) ? literal_features(fcinfo, cs) : PG_GETARG_DATUM(1), &v);
	check_row_features(&v);
	prefetch_row(&v);

	if (unlikely(cs->call.epoch != OnnxCacheEpoch || !cs->names_stable))
		cs = resolve(fcinfo, PG_GETARG_TEXT_PP(0), PG_NARGS() > 2 ? PG_GETARG_TEXT_PP(2) : NULL);
	if (unlikely(cs->call.shaped_per_sample != v.nitems || cs->call.shaped_samples != -1))
	{
		OnnxCallShape(&cs->call, -1, v.nitems, false);
		require_supported_input(&cs->call);
	}
	cs->call.in.data = (void *) OnnxFeatureData(&cs->call, &v, NULL, &st);
	if (cs->call.in.data == NULL)
		OnnxReportStatus(&st, ONNX_PHASE_RUN, cs->call.model);
	if (OnnxCallRun(&cs->call, &st) != OX_OK)
		OnnxCallReport(&cs->call, &st);
	PG_RETURN_ARRAYTYPE_P(row_result(&cs->call));
}

Datum
onnx_predict_batch(PG_FUNCTION_ARGS)
{
	text	   *model = PG_GETARG_TEXT_PP(0);
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(1);
	text	   *output = PG_NARGS() > 2 ? PG_GETARG_TEXT_PP(2) : NULL;
	CallSite   *cs;
	OnnxCall   *call;
	OnnxArrayView v;
	ox_status	st;
	const ox_value *res;
	int64		samples;
	int64		per_sample;
	int64		count;
	int64		rows;
	int			dims[2];
	const char *oname;
	float	   *floats = NULL;

	if (ARR_NDIM(arr) != 2 && ARR_NDIM(arr) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("features must be a two-dimensional array"),
				 errdetail("Got a %d-dimensional array; onnx_predict_batch takes one row per sample.",
						   ARR_NDIM(arr)),
				 ARR_NDIM(arr) == 1 ? errhint("Use onnx_predict for a single sample.") : 0));
	if (ARR_NDIM(arr) == 0 || ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr)) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("features must not be empty")));
	if (array_contains_nulls(arr))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("features must not contain null values")));
	samples = ARR_DIMS(arr)[0];
	per_sample = ARR_DIMS(arr)[1];

	cs = resolve(fcinfo, model, output);
	call = &cs->call;
	OnnxCallShape(call, samples, per_sample, false);
	require_supported_input(call);

	/* the (detoasted, aligned) array's data, in place for float models */
	OnnxArrayRead(PointerGetDatum(arr), &v);
	call->in.data = (void *) OnnxFeatureData(call, &v, NULL, &st);
	if (call->in.data == NULL)
		OnnxReportStatus(&st, ONNX_PHASE_RUN, call->model);
	if (OnnxCallRun(call, &st) != OX_OK)
		OnnxCallReport(call, &st);

	oname = ox_session_output(call->session, call->out_index)->name;
	res = OnnxCallResult(call);
	if (OnnxResultIsDense(res))
	{
		count = ox_tensor_numel(&res->tensor);
		rows = res->tensor.rank > 0 ? res->tensor.dims[0] : -1;
	}
	else
		floats = OnnxValueToFloats(res, call->model, oname, &count, &rows);
	if ((rows >= 0 && rows != samples) || count % samples != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("output \"%s\" of model \"%s\" does not have one row per sample",
						oname, call->model),
				 errdetail("The batch has " INT64_FORMAT " samples; the output has " INT64_FORMAT " elements in " INT64_FORMAT " rows.",
						   samples, count, rows)));
	if (count / samples > PG_INT32_MAX || count > PG_INT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("result of model \"%s\" is too large for an array", call->model)));
	dims[0] = (int) samples;
	dims[1] = (int) (count / samples);
	if (floats == NULL)
		PG_RETURN_ARRAYTYPE_P(OnnxTensorFloatArray(&res->tensor, 0, count, 2, dims));
	PG_RETURN_ARRAYTYPE_P(OnnxFloatArray(floats, 2, dims));
}

Datum
onnx_run(PG_FUNCTION_ARGS)
{
	text	   *model = PG_GETARG_TEXT_PP(0);
	Jsonb	   *jb = PG_GETARG_JSONB_P(1);
	CallSite   *cs;
	OnnxCall   *call;
	int			n_in;
	int			n_out;
	ox_value   *inputs;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	JsonbParseState *state = NULL;
	JsonbValue *res;
	ox_status	st;

	if (!JB_ROOT_IS_OBJECT(jb))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("inputs must be a JSON object"),
				 errdetail("Map each input name to a nested array, for example {\"X\": [[5.1, 3.5, 1.4, 0.2]]}.")));

	cs = resolve(fcinfo, model, NULL);
	call = &cs->call;
	n_in = ox_session_input_count(call->session);
	n_out = ox_session_output_count(call->session);

	/* every key must name an input */
	it = JsonbIteratorInit(&jb->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			char	   *key = pnstrdup(v.val.string.val, v.val.string.len);

			if (ox_session_find_input(call->session, key) < 0)
				ereport(ERROR,
						(errcode(ERRCODE_UNDEFINED_OBJECT),
						 errmsg("model \"%s\" has no input named \"%s\"", call->model, key),
						 errdetail("Its inputs are: %s.", n_in ? value_names(call->session, false) : "none")));
		}
	}

	inputs = palloc0(sizeof(ox_value) * Max(n_in, 1));
	for (int i = 0; i < n_in; i++)
	{
		const ox_value_def *def = ox_session_input(call->session, i);
		JsonbValue *jv;

		jv = getKeyJsonValueFromContainer(&jb->root, def->name, strlen(def->name), NULL);
		if (jv == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("missing input \"%s\" for model \"%s\"", def->name, call->model),
					 errdetail("The model's inputs are: %s.", value_names(call->session, false))));
		if (jv->type == jbvNull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("input \"%s\" of model \"%s\" must not be null", def->name, call->model)));
		OnnxJsonbToValue(jb, jv, def, call->model, &inputs[i]);
	}

	ox_status_clear(&st);
	{
		uint64		input_bytes = 0;

		for (int i = 0; i < n_in; i++)
			if (inputs[i].kind == OX_VALUE_TENSOR)
				input_bytes += OnnxTensorBytes(&inputs[i].tensor);
		if (OnnxCheckRunInputs(input_bytes, &st) != OX_OK)
			OnnxCallReport(call, &st);
	}
	OnnxCacheTouch(call->entry);
	if (n_in > 0 && inputs[0].kind == OX_VALUE_TENSOR && inputs[0].tensor.rank > 0)
		OnnxStatsRunRows(inputs[0].tensor.dims[0]);
	ox_status_clear(&st);
	if (ox_session_run(call->session, inputs, &st) != OX_OK)
		OnnxCallReport(call, &st);
	OnnxCacheAfterRun(call->entry);

	{
		OnnxJsonbSize size = {0, 0};

		for (int i = 0; i < n_out; i++)
			OnnxJsonbSizeAdd(&size, ox_session_result(call->session, i));
		OnnxJsonbSizeCheck(&size, call->model);
	}
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	for (int i = 0; i < n_out; i++)
	{
		const ox_value_def *def = ox_session_output(call->session, i);

		OnnxJbKey(&state, def->name);
		OnnxValueToJsonb(&state, ox_session_result(call->session, i), false, call->model, def->name);
	}
	res = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	PG_RETURN_JSONB_P(JsonbValueToJsonb(res));
}
