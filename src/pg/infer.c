/*
 * infer.c
 *	  onnx_predict (one sample), onnx_predict_batch (one row per sample) and
 *	  onnx_run (named jsonb inputs and outputs).
 *
 * Each call site resolves its session once and keeps it in fn_extra, with
 * the cache epoch it saw; a row only compares the model name and the epoch
 * before running.  Float features are handed to the engine as a borrowed
 * tensor over the array's own data (ARR_DATA_PTR): no per-element work.
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
#include "utils/builtins.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(onnx_predict);
PG_FUNCTION_INFO_V1(onnx_predict_batch);
PG_FUNCTION_INFO_V1(onnx_run);

typedef struct CallSite
{
	uint64		epoch;
	OnnxCacheEntry *entry;
	ox_session *session;
	char	   *model;			/* name, in fn_mcxt */
	char	   *output;			/* requested output name, or NULL */
	int			out_index;
	int			target;			/* value id holding out_index densely (see
								 * ox_session_dense_source) */
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

/*
 * The session for this call site: reuse what fn_extra holds while the cache
 * epoch, the model name and the output name are unchanged.
 */
static CallSite *
resolve(FunctionCallInfo fcinfo, text *model, text *output)
{
	CallSite   *cs = (CallSite *) fcinfo->flinfo->fn_extra;
	MemoryContext old;
	char	   *name;

	if (cs && cs->epoch == OnnxCacheEpoch && text_equals(model, cs->model) &&
		(output == NULL ? cs->output == NULL : text_equals(output, cs->output)))
		return cs;

	if (cs == NULL)
		cs = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(CallSite));
	else
	{
		if (cs->model)
			pfree(cs->model);
		if (cs->output)
			pfree(cs->output);
		cs->model = cs->output = NULL;
	}
	fcinfo->flinfo->fn_extra = cs;
	cs->epoch = 0;

	name = text_to_cstring(model);
	cs->entry = OnnxCacheAcquire(name);
	cs->session = OnnxCacheSession(cs->entry);
	cs->out_index = 0;
	if (output)
	{
		char	   *oname = text_to_cstring(output);

		cs->out_index = ox_session_find_output(cs->session, oname);
		if (cs->out_index < 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("model \"%s\" has no output named \"%s\"", name, oname),
					 errdetail("Its outputs are: %s.", value_names(cs->session, true))));
	}
	else if (ox_session_output_count(cs->session) < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model \"%s\" has no outputs", name)));

	cs->target = ox_session_dense_source(cs->session, cs->out_index);

	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	cs->model = pstrdup(name);
	cs->output = output ? text_to_cstring(output) : NULL;
	MemoryContextSwitchTo(old);
	/* anything above may have bumped the epoch; we are current now */
	cs->epoch = OnnxCacheEpoch;
	return cs;
}

/*
 * Run the call site's session.  Targeted runs compute only what the
 * requested output needs (a classifier's label skips the probabilities) and
 * read a ZipMap output from its dense source tensor.
 */
static void
run_session(CallSite *cs, const ox_value *inputs, bool targeted)
{
	ox_status	st;
	ox_code		rc;
	Size		limit = OnnxMaxRunBytes();

	/* inputs count against onnx.max_run_memory; the engine checks the rest */
	if (limit > 0)
	{
		uint64		bytes = 0;

		for (int i = 0; i < ox_session_input_count(cs->session); i++)
			if (inputs[i].kind == OX_VALUE_TENSOR && ox_tensor_numel(&inputs[i].tensor) > 0)
				bytes += (uint64) ox_tensor_numel(&inputs[i].tensor) *
					Max(ox_dtype_size(inputs[i].tensor.dtype), 1);
		if (bytes > limit)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("inputs of model \"%s\" exceed onnx.max_run_memory", cs->model),
					 errdetail("The inputs take " UINT64_FORMAT " bytes; onnx.max_run_memory allows %d MB.",
							   bytes, onnx_max_run_memory)));
	}

	OnnxCacheTouch(cs->entry);
	ox_status_clear(&st);
	if (targeted)
		rc = ox_session_run_targets(cs->session, inputs, &cs->target, 1, &st);
	else
		rc = ox_session_run(cs->session, inputs, &st);
	if (rc != OX_OK)
	{
		if (st.code == OX_CANCELED)
			OnnxServiceCancel(cs->model);
		OnnxReportStatus(&st, ONNX_PHASE_RUN, cs->model);
	}
	OnnxCacheAfterRun(cs->entry);
}

/* ---- features (real[]) -> the single input tensor ---- */

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
 * (samples < 0: one sample, no batch dimension forced).  Fills dims/rank.
 */
static void
shape_input(CallSite *cs, const ox_value_def *def, int64 samples, int64 per_sample,
			ox_tensor *t)
{
	const ox_type *ty = &def->type;
	bool		batch_fn = samples >= 0;
	int64		rows = batch_fn ? samples : 1;
	int			first;
	int64		known = 1;
	int			unknown = -1;
	int			n_unknown = 0;
	char		buf[512];

	if (ty->rank < 0)
	{
		/* undeclared shape: [samples, features] */
		t->rank = 2;
		t->dims[0] = rows;
		t->dims[1] = per_sample;
		return;
	}
	if (ty->rank == 0)
	{
		if (batch_fn || per_sample != 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("wrong number of features for model \"%s\"", cs->model),
					 errdetail("Input \"%s\" is a scalar (%s), which takes 1 feature, got " INT64_FORMAT ".",
							   def->name, declared_shape(ty, buf, sizeof(buf)),
							   batch_fn ? samples * per_sample : per_sample)));
		t->rank = 0;
		return;
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
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model \"%s\" takes a fixed number of samples", cs->model),
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
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot shape the features for model \"%s\"", cs->model),
				 errdetail("Input \"%s\" has shape %s, with more than one unknown dimension per sample.",
						   def->name, declared_shape(ty, buf, sizeof(buf))),
				 errhint("Use onnx_run, which takes the shape from nested arrays.")));
	if (n_unknown == 1)
	{
		if (known <= 0 || per_sample % known != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("wrong number of features for model \"%s\"", cs->model),
					 errdetail("Input \"%s\" has shape %s: each sample takes a multiple of " INT64_FORMAT " features, got " INT64_FORMAT ".",
							   def->name, declared_shape(ty, buf, sizeof(buf)), known, per_sample)));
		t->dims[unknown] = per_sample / known;
	}
	else if (known != per_sample)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("wrong number of features for model \"%s\"", cs->model),
				 errdetail("Input \"%s\" has shape %s: each sample takes " INT64_FORMAT " features, got " INT64_FORMAT ".",
						   def->name, declared_shape(ty, buf, sizeof(buf)), known, per_sample)));
}

/* the one input a row-wise or batch call feeds */
static const ox_value_def *
single_input(CallSite *cs)
{
	int			n = ox_session_input_count(cs->session);
	const ox_value_def *def;

	if (n != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model \"%s\" takes %d inputs", cs->model, n),
				 errdetail("onnx_predict and onnx_predict_batch feed exactly one input; the model's inputs are: %s.",
						   n ? value_names(cs->session, false) : "none"),
				 errhint("Use onnx_run to feed named inputs.")));
	def = ox_session_input(cs->session, 0);
	if (def->type.kind != OX_TYPE_TENSOR && def->type.kind != OX_TYPE_UNKNOWN)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("input \"%s\" of model \"%s\" is not a tensor", def->name, cs->model),
				 errhint("Use onnx_run.")));
	return def;
}

static void
check_features(ArrayType *arr)
{
	if (ARR_NDIM(arr) == 0 || ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr)) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("features must not be empty")));
	if (array_contains_nulls(arr))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("features must not contain null values")));
}

/* fill the tensor's data from the float features, converting if needed */
static void
feature_data(CallSite *cs, const ox_value_def *def, ArrayType *arr, int64 n, ox_tensor *t)
{
	ox_dtype	dt = def->type.kind == OX_TYPE_TENSOR ? def->type.elem : OX_FLOAT;
	ox_status	st;

	t->owns = false;
	t->capacity = 0;
	if (dt == OX_FLOAT || dt == OX_UNDEFINED)
	{
		t->dtype = OX_FLOAT;
		t->data = ARR_DATA_PTR(arr);
		return;
	}
	if (dt == OX_STRING || dt == OX_COMPLEX64 || dt == OX_COMPLEX128 || ox_dtype_size(dt) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("input \"%s\" of model \"%s\" takes %s elements", def->name,
						cs->model, ox_dtype_name(dt)),
				 errhint("Use onnx_run.")));
	t->dtype = dt;
	t->data = palloc(n * ox_dtype_size(dt));
	ox_status_clear(&st);
	if (ox_convert_elements(t->data, dt, ARR_DATA_PTR(arr), OX_FLOAT, n, &st) != OX_OK)
		OnnxReportStatus(&st, ONNX_PHASE_RUN, cs->model);
}

Datum
onnx_predict(PG_FUNCTION_ARGS)
{
	text	   *model = PG_GETARG_TEXT_PP(0);
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(1);
	text	   *output = PG_NARGS() > 2 ? PG_GETARG_TEXT_PP(2) : NULL;
	CallSite   *cs;
	const ox_value_def *def;
	ox_value	in;
	int64		n;
	int64		count;
	int64		rows;
	float	   *res;
	int			dims[1];

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("features must be a one-dimensional array"),
				 errdetail("Got a %d-dimensional array.", ARR_NDIM(arr)),
				 errhint("Use onnx_predict_batch for several samples.")));
	check_features(arr);
	n = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));

	cs = resolve(fcinfo, model, output);
	def = single_input(cs);

	memset(&in, 0, sizeof(in));
	in.kind = OX_VALUE_TENSOR;
	shape_input(cs, def, -1, n, &in.tensor);
	feature_data(cs, def, arr, n, &in.tensor);
	run_session(cs, &in, true);

	res = OnnxValueToFloats(ox_session_value(cs->session, cs->target), cs->model,
							ox_session_output(cs->session, cs->out_index)->name,
							&count, &rows);
	if (count > PG_INT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("result of model \"%s\" is too large for an array", cs->model)));
	dims[0] = (int) count;
	PG_RETURN_ARRAYTYPE_P(OnnxFloatArray(res, 1, dims));
}

Datum
onnx_predict_batch(PG_FUNCTION_ARGS)
{
	text	   *model = PG_GETARG_TEXT_PP(0);
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(1);
	text	   *output = PG_NARGS() > 2 ? PG_GETARG_TEXT_PP(2) : NULL;
	CallSite   *cs;
	const ox_value_def *def;
	ox_value	in;
	int64		samples;
	int64		per_sample;
	int64		count;
	int64		rows;
	float	   *res;
	int			dims[2];
	const char *oname;

	if (ARR_NDIM(arr) != 2 && ARR_NDIM(arr) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("features must be a two-dimensional array"),
				 errdetail("Got a %d-dimensional array; onnx_predict_batch takes one row per sample.",
						   ARR_NDIM(arr)),
				 ARR_NDIM(arr) == 1 ? errhint("Use onnx_predict for a single sample.") : 0));
	check_features(arr);
	samples = ARR_DIMS(arr)[0];
	per_sample = ARR_DIMS(arr)[1];

	cs = resolve(fcinfo, model, output);
	def = single_input(cs);

	memset(&in, 0, sizeof(in));
	in.kind = OX_VALUE_TENSOR;
	shape_input(cs, def, samples, per_sample, &in.tensor);
	feature_data(cs, def, arr, samples * per_sample, &in.tensor);
	run_session(cs, &in, true);

	oname = ox_session_output(cs->session, cs->out_index)->name;
	res = OnnxValueToFloats(ox_session_value(cs->session, cs->target), cs->model,
							oname, &count, &rows);
	if ((rows >= 0 && rows != samples) || count % samples != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("output \"%s\" of model \"%s\" does not have one row per sample",
						oname, cs->model),
				 errdetail("The batch has " INT64_FORMAT " samples; the output has " INT64_FORMAT " elements in " INT64_FORMAT " rows.",
						   samples, count, rows)));
	if (count / samples > PG_INT32_MAX || count > PG_INT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("result of model \"%s\" is too large for an array", cs->model)));
	dims[0] = (int) samples;
	dims[1] = (int) (count / samples);
	PG_RETURN_ARRAYTYPE_P(OnnxFloatArray(res, 2, dims));
}

Datum
onnx_run(PG_FUNCTION_ARGS)
{
	text	   *model = PG_GETARG_TEXT_PP(0);
	Jsonb	   *jb = PG_GETARG_JSONB_P(1);
	CallSite   *cs;
	int			n_in;
	int			n_out;
	ox_value   *inputs;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	JsonbParseState *state = NULL;
	JsonbValue *res;

	if (!JB_ROOT_IS_OBJECT(jb))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("inputs must be a JSON object"),
				 errdetail("Map each input name to a nested array, for example {\"X\": [[5.1, 3.5, 1.4, 0.2]]}.")));

	cs = resolve(fcinfo, model, NULL);
	n_in = ox_session_input_count(cs->session);
	n_out = ox_session_output_count(cs->session);

	/* every key must name an input */
	it = JsonbIteratorInit(&jb->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			char	   *key = pnstrdup(v.val.string.val, v.val.string.len);

			if (ox_session_find_input(cs->session, key) < 0)
				ereport(ERROR,
						(errcode(ERRCODE_UNDEFINED_OBJECT),
						 errmsg("model \"%s\" has no input named \"%s\"", cs->model, key),
						 errdetail("Its inputs are: %s.", n_in ? value_names(cs->session, false) : "none")));
		}
	}

	inputs = palloc0(sizeof(ox_value) * Max(n_in, 1));
	for (int i = 0; i < n_in; i++)
	{
		const ox_value_def *def = ox_session_input(cs->session, i);
		JsonbValue *jv;

		jv = getKeyJsonValueFromContainer(&jb->root, def->name, strlen(def->name), NULL);
		if (jv == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("missing input \"%s\" for model \"%s\"", def->name, cs->model),
					 errdetail("The model's inputs are: %s.", value_names(cs->session, false))));
		if (jv->type == jbvNull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("input \"%s\" of model \"%s\" must not be null", def->name, cs->model)));
		OnnxJsonbToValue(jb, jv, def, cs->model, &inputs[i]);
	}

	run_session(cs, inputs, false);

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	for (int i = 0; i < n_out; i++)
	{
		const ox_value_def *def = ox_session_output(cs->session, i);

		OnnxJbKey(&state, def->name);
		OnnxValueToJsonb(&state, ox_session_result(cs->session, i), false, cs->model, def->name);
	}
	res = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	PG_RETURN_JSONB_P(JsonbValueToJsonb(res));
}
