/*
 * quantize.c
 *	  Quantization as SQL: onnx_quantize_dynamic, onnx_quantize_static and
 *	  onnx_quantize_report.
 *
 * Both quantizers read the source model from the catalog, run the engine's
 * basic optimizations on it (constant folding, Conv+BatchNorm folding, ...)
 * through a private session, rewrite the result with the engine's quantizer
 * (model/quantize.h) and store it under the target name through
 * OnnxCatalogStoreModel (which validates it again), with a lineage saying
 * where it came from and how.  The backend's session cache is not touched.
 *
 * Static quantization calibrates on the rows of a SQL query: the query runs
 * in a read-only SPI cursor with the caller's privileges, batch_size rows
 * at a time; each row gives the model's inputs (one array column per input,
 * in input order, or one jsonb column with an object keyed by input name).
 * When the inputs have a dynamic first dimension and rows hold one sample
 * each, a batch's rows are stacked into one run.  A calibration session
 * (no graph optimization, so that every tensor keeps its name) computes
 * the tensors the quantizer asks for, and ox_calib_* turns their values into
 * ranges.  Interrupts are checked between batches and by the engine inside
 * runs; progress goes through progress.c (NOTICEs for long runs,
 * onnx_stat_progress).
 *
 * Memory: engine objects (models, sessions, calibration statistics, the
 * malloc'ed model bytes) hang off a reset callback of the calling memory
 * context, so an ERROR anywhere frees them; rows are converted in a
 * per-batch context.
 */
#include "onnx_pg.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "model/quantize.h"

PG_FUNCTION_INFO_V1(onnx_quantize_dynamic);
PG_FUNCTION_INFO_V1(onnx_quantize_static);
PG_FUNCTION_INFO_V1(onnx_quantize_report);

#define QUANT_BATCH_MAX 65536

/* ---- engine objects of one call ------------------------------------------------ */

typedef struct QuantWork
{
	ox_model   *model;			/* being quantized */
	ox_session *sess[2];		/* calibration session; the report's two */
	ox_calib   *stats;
	const char **targets;		/* malloc'ed by the engine */
	void	   *buf;			/* malloc'ed bytes from ox_model_save */
	MemoryContextCallback cb;
} QuantWork;

static void
work_release(void *arg)
{
	QuantWork  *w = (QuantWork *) arg;

	ox_model_free(w->model);
	w->model = NULL;
	for (int i = 0; i < 2; i++)
	{
		ox_session_free(w->sess[i]);
		w->sess[i] = NULL;
	}
	ox_calib_free(w->stats);
	w->stats = NULL;
	free(w->targets);
	w->targets = NULL;
	free(w->buf);
	w->buf = NULL;
}

static QuantWork *
work_create(void)
{
	QuantWork  *w = palloc0(sizeof(QuantWork));

	w->cb.func = work_release;
	w->cb.arg = w;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &w->cb);
	return w;
}

/* malloc'ed engine bytes into a bytea, freeing them */
static bytea *
take_bytes(QuantWork *w, size_t len, const char *name)
{
	bytea	   *out = len > MaxAllocSize - VARHDRSZ ? NULL :
		(bytea *) palloc_extended(len + VARHDRSZ, MCXT_ALLOC_NO_OOM);

	if (out == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("quantized model \"%s\" is too large", name),
				 errdetail("The model has %zu bytes.", len)));
	SET_VARSIZE(out, len + VARHDRSZ);
	memcpy(VARDATA(out), w->buf, len);
	free(w->buf);
	w->buf = NULL;
	return out;
}

/* an engine failure of the quantizer itself */
static void
report_quant_error(const ox_status *st, const char *source)
{
	if (st->code == OX_CANCELED)
		OnnxServiceCancel(source);
	ereport(ERROR,
			(errcode(OnnxSqlState(st->code)),
			 errmsg("could not quantize model \"%s\"", source),
			 errdetail("%s%s%s.", st->node[0] ? st->node : "", st->node[0] ? ": " : "", st->msg)));
}

/*
 * A private session on model bytes.  refuse_quantized: the source of a
 * quantization must be a float model.
 */
static ox_session *
make_session(const void *bytes, size_t len, const char *name, ox_opt_level level,
			 bool refuse_quantized)
{
	OnnxGuard  *guard = OnnxGuardCreate(CurrentMemoryContext);
	ox_session_options opts;
	ox_session *s;
	ox_status	st;
	char	   *eff;
	const char *op;

	guard->model = OnnxParseModel(bytes, len, name, 0);
	if (refuse_quantized && ox_model_is_quantized(guard->model, &op))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("model \"%s\" is already quantized", name),
				 errdetail("It contains %s operators.", op),
				 errhint("Quantize the float model it was made from.")));
	OnnxSessionOptions(&opts, "cpu", &eff);
	opts.opt_level = level;
	/* graphs saved, and values read by name for calibration: ONNX as written */
	opts.portable_graph = true;
	ox_status_clear(&st);
	s = ox_session_create(guard->model, &opts, &st);
	guard->model = NULL;		/* the session call owns it now */
	if (s == NULL)
	{
		if (st.code == OX_CANCELED)
			OnnxServiceCancel(name);
		OnnxReportStatus(&st, ONNX_PHASE_SESSION, name);
	}
	return s;
}

/* ---- options ---------------------------------------------------------------------- */

static ox_dtype
parse_qtype(const char *what, const char *s)
{
	if (pg_strcasecmp(s, "int8") == 0)
		return OX_INT8;
	if (pg_strcasecmp(s, "uint8") == 0)
		return OX_UINT8;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid %s \"%s\"", what, s),
			 errdetail("Valid types are: int8, uint8.")));
	pg_unreachable();
}

static ox_calib_method
parse_method(const char *s)
{
	if (pg_strcasecmp(s, "minmax") == 0)
		return OX_CALIB_MINMAX;
	if (pg_strcasecmp(s, "percentile") == 0)
		return OX_CALIB_PERCENTILE;
	if (pg_strcasecmp(s, "entropy") == 0)
		return OX_CALIB_ENTROPY;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unrecognized calibration method \"%s\"", s),
			 errdetail("Valid methods are: minmax, percentile, entropy.")));
	pg_unreachable();
}

static ox_quant_format
parse_format(const char *s)
{
	if (pg_strcasecmp(s, "qdq") == 0)
		return OX_QUANT_QDQ;
	if (pg_strcasecmp(s, "qoperator") == 0)
		return OX_QUANT_QOPERATOR;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unrecognized quantization format \"%s\"", s),
			 errdetail("Valid formats are: qdq, qoperator.")));
	pg_unreachable();
}

/* a text[] argument as C strings; NULL for a NULL argument */
static const char *const *
text_list(FunctionCallInfo fcinfo, int arg, const char *what, int *n)
{
	ArrayType  *arr;
	Datum	   *elems;
	bool	   *nulls;
	char	  **out;

	*n = 0;
	if (PG_ARGISNULL(arg))
		return NULL;
	arr = PG_GETARG_ARRAYTYPE_P(arg);
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, n);
	out = palloc(sizeof(char *) * (*n + 1));
	for (int i = 0; i < *n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not contain null values", what)));
		out[i] = TextDatumGetCString(elems[i]);
	}
	return (const char *const *) out;
}

static char *
required_text(FunctionCallInfo fcinfo, int arg, const char *what)
{
	if (PG_ARGISNULL(arg))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", what)));
	return text_to_cstring(PG_GETARG_TEXT_PP(arg));
}

/* ---- lineage ----------------------------------------------------------------------- */

static void
jb_str(JsonbParseState **state, const char *key, const char *val)
{
	OnnxJbKey(state, key);
	OnnxJbString(state, WJB_VALUE, val, strlen(val));
}

static void
jb_bool(JsonbParseState **state, const char *key, bool val)
{
	JsonbValue	v;

	OnnxJbKey(state, key);
	v.type = jbvBool;
	v.val.boolean = val;
	pushJsonbValue(state, WJB_VALUE, &v);
}

static void
jb_list(JsonbParseState **state, const char *key, const char *const *list, int n)
{
	OnnxJbKey(state, key);
	if (!list)
	{
		JsonbValue	v;

		v.type = jbvNull;
		pushJsonbValue(state, WJB_VALUE, &v);
		return;
	}
	pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
	for (int i = 0; i < n; i++)
		OnnxJbString(state, WJB_ELEM, list[i], strlen(list[i]));
	pushJsonbValue(state, WJB_END_ARRAY, NULL);
}

typedef struct QuantRequest
{
	char	   *source;
	char	   *target;
	bool		replace;
	ox_quant_options opts;
	/* static */
	char	   *calibration;
	ox_calib_method method;
	const char *method_name;
	double		percentile;
	int			batch_size;
	int64		max_rows;
} QuantRequest;

static Jsonb *
lineage_jsonb(const QuantRequest *r, const OnnxModelKey *key, const ox_quant_summary *sum,
			  int64 calib_rows)
{
	JsonbParseState *state = NULL;
	const ox_quant_options *o = &r->opts;
	char		hex[ONNX_SHA256_LEN * 2 + 1];
	bool		stat = o->mode == OX_QUANT_STATIC;

	for (int i = 0; i < ONNX_SHA256_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", key->sha256[i]);
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	jb_str(&state, "quantized_from", r->source);
	OnnxJbKey(&state, "source_version");
	OnnxJbInt(&state, key->version, false);
	jb_str(&state, "source_sha256", hex);
	jb_str(&state, "mode", stat ? "static" : "dynamic");
	if (stat)
	{
		jb_str(&state, "format", o->format == OX_QUANT_QDQ ? "qdq" : "qoperator");
		jb_str(&state, "method", r->method_name);
		if (r->method == OX_CALIB_PERCENTILE)
		{
			OnnxJbKey(&state, "percentile");
			OnnxJbDouble(&state, r->percentile, false);
		}
		jb_str(&state, "activation_type", ox_dtype_name(o->activation_type));
		jb_bool(&state, "symmetric_activations", o->symmetric_activations);
	}
	else
		jb_bool(&state, "per_row_activations", o->per_row_activations);
	jb_str(&state, "weight_type", ox_dtype_name(o->weight_type));
	jb_bool(&state, "per_channel", o->per_channel);
	jb_bool(&state, "symmetric_weights", o->symmetric_weights);
	jb_bool(&state, "reduce_range", o->reduce_range);
	jb_list(&state, "op_types", o->op_types, o->n_op_types);
	jb_list(&state, "exclude_nodes", o->exclude, o->n_exclude);
	if (stat)
	{
		OnnxJbKey(&state, "calibration");
		pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
		jb_str(&state, "query", r->calibration);
		OnnxJbKey(&state, "rows");
		OnnxJbInt(&state, calib_rows, false);
		OnnxJbKey(&state, "batch_size");
		OnnxJbInt(&state, r->batch_size, false);
		pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	}
	OnnxJbKey(&state, "nodes_quantized");
	OnnxJbInt(&state, sum->nodes_quantized, false);
	jb_str(&state, "engine", OX_ENGINE_VERSION);
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}

/* ---- rows -> model inputs ------------------------------------------------------------ */

/* how the rows of a query feed a session's inputs */
typedef struct FeedPlan
{
	ox_session *session;
	const char *model;
	int			n;				/* inputs */
	const ox_value_def **defs;
	bool		json;			/* one jsonb column */
	bool		stack;			/* rows are samples stacked along a dynamic first dim */
	int64	   *per_sample;		/* elements per sample, or -1 when not static */
	ox_value   *values;			/* n inputs of the current run */
	char	  **bufs;			/* stacked input buffers (stack) */
	int			rows;			/* rows in the current run */
} FeedPlan;

static const char *
type_text(const ox_value_def *def)
{
	char		buf[256];

	return pstrdup(ox_type_str(&def->type, buf, sizeof(buf)));
}

static void
plan_feeds(FeedPlan *fp, ox_session *s, const char *model, TupleDesc desc, int batch_size,
		   const char *what)
{
	memset(fp, 0, sizeof(*fp));
	fp->session = s;
	fp->model = model;
	fp->n = ox_session_input_count(s);
	fp->defs = palloc(sizeof(ox_value_def *) * Max(fp->n, 1));
	fp->per_sample = palloc(sizeof(int64) * Max(fp->n, 1));
	fp->values = palloc0(sizeof(ox_value) * Max(fp->n, 1));
	fp->bufs = palloc0(sizeof(char *) * Max(fp->n, 1));
	for (int i = 0; i < fp->n; i++)
		fp->defs[i] = ox_session_input(s, i);

	if (desc->natts == 1 && TupleDescAttr(desc, 0)->atttypid == JSONBOID)
	{
		fp->json = true;
		return;
	}
	if (desc->natts != fp->n)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s query returns %d column%s, but model \"%s\" has %d input%s",
						what, desc->natts, desc->natts == 1 ? "" : "s", model, fp->n,
						fp->n == 1 ? "" : "s"),
				 errhint("Return one array column per model input, in input order, or one jsonb column with an object keyed by input name.")));
	fp->stack = batch_size > 1;
	for (int i = 0; i < fp->n; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		const ox_type *t = &fp->defs[i]->type;
		Oid			elem = get_element_type(att->atttypid);
		int64		per = 1;

		if (!OidIsValid(elem) || OnnxElemDtype(elem) == OX_UNDEFINED)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column %d of the %s query has type %s, but input \"%s\" of model \"%s\" needs an array",
							i + 1, what, format_type_be(att->atttypid), fp->defs[i]->name, model),
					 errdetail("Arrays of real, double precision, smallint, integer and bigint are accepted.")));
		if (t->kind != OX_TYPE_TENSOR || t->rank < 1)
		{
			fp->per_sample[i] = -1;
			fp->stack = false;
			continue;
		}
		for (int d = 1; d < t->rank; d++)
		{
			if (t->dims[d].value < 0)
			{
				per = -1;
				break;
			}
			per *= t->dims[d].value;
		}
		fp->per_sample[i] = per;
		/* rows stack only along a dynamic first dimension */
		if (per < 0 || t->dims[0].value >= 0)
			fp->stack = false;
	}
}

static void
wrong_shape(const FeedPlan *fp, int i, int64 row, const OnnxArrayView *v, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
			 errmsg("%s row " INT64_FORMAT ": column %d has %lld values, which do not fit input \"%s\" of model \"%s\"",
					what, row, i + 1, (long long) v->nitems, fp->defs[i]->name, fp->model),
			 errdetail("The input has type %s; a row gives one sample%s.", type_text(fp->defs[i]),
					   fp->per_sample[i] > 0 ? psprintf(" of %lld values", (long long) fp->per_sample[i]) : ""),
			 errhint("Return one sample per row, without the batch dimension, or the input's full shape.")));
}

/* element conversion of an array into an input's element type */
static void
convert_into(const FeedPlan *fp, int i, const OnnxArrayView *v, void *dst, int64 row,
			 const char *what)
{
	ox_status	st;
	ox_dtype	src = OnnxElemDtype(v->elemtype);
	ox_dtype	dt = fp->defs[i]->type.kind == OX_TYPE_TENSOR ? fp->defs[i]->type.elem : OX_FLOAT;
	size_t		esz = ox_dtype_size(src);
	void	   *aligned;

	if (v->hasnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s row " INT64_FORMAT ": column %d contains nulls", what, row, i + 1)));
	/* packed arrays need not be aligned: copy them first */
	aligned = palloc(esz * Max(v->nitems, 1));
	memcpy(aligned, v->data, esz * v->nitems);
	ox_status_clear(&st);
	if (ox_convert_elements(dst, dt, aligned, src, v->nitems, &st) != OX_OK)
		ereport(ERROR,
				(errcode(OnnxSqlState(st.code)),
				 errmsg("%s row " INT64_FORMAT ": column %d cannot feed input \"%s\" of model \"%s\"",
						what, row, i + 1, fp->defs[i]->name, fp->model),
				 errdetail("%s.", st.msg)));
	pfree(aligned);
}

/* a tensor input for a whole row (no stacking) */
static void
row_tensor(FeedPlan *fp, int i, const OnnxArrayView *v, int64 row, const char *what)
{
	const ox_type *t = &fp->defs[i]->type;
	ox_tensor  *out = &fp->values[i].tensor;
	ox_dtype	dt = t->kind == OX_TYPE_TENSOR ? t->elem : OX_FLOAT;

	memset(&fp->values[i], 0, sizeof(ox_value));
	fp->values[i].kind = OX_VALUE_TENSOR;
	out->dtype = dt;
	if (t->kind == OX_TYPE_TENSOR && t->rank >= 1 && fp->per_sample[i] > 0 &&
		v->nitems == fp->per_sample[i] && (t->dims[0].value < 0 || t->dims[0].value == 1))
	{
		/* one sample: the batch dimension added */
		out->rank = t->rank;
		out->dims[0] = 1;
		for (int d = 1; d < t->rank; d++)
			out->dims[d] = t->dims[d].value;
	}
	else if (t->kind == OX_TYPE_TENSOR && t->rank >= 1 && fp->per_sample[i] < 0 &&
			 v->ndim == t->rank - 1)
	{
		out->rank = t->rank;
		out->dims[0] = 1;
		for (int d = 1; d < t->rank; d++)
			out->dims[d] = v->dims[d - 1];
	}
	else if (t->kind != OX_TYPE_TENSOR || t->rank < 0 || v->ndim == t->rank)
	{
		out->rank = v->ndim;
		for (int d = 0; d < v->ndim; d++)
			out->dims[d] = v->dims[d];
	}
	else
		wrong_shape(fp, i, row, v, what);
	out->data = palloc(ox_dtype_size(dt) * Max(v->nitems, 1));
	convert_into(fp, i, v, out->data, row, what);
}

/*
 * Add one row to the current run.  Returns true when the run is full (or
 * cannot take more rows) and must run now.
 */
static bool
add_row(FeedPlan *fp, HeapTuple tup, TupleDesc desc, int64 row, int batch, const char *what)
{
	if (fp->json)
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, 1, desc, &isnull);
		Jsonb	   *jb;

		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s row " INT64_FORMAT " is null", what, row)));
		jb = DatumGetJsonbP(d);
		for (int i = 0; i < fp->n; i++)
		{
			JsonbValue *jv = getKeyJsonValueFromContainer(&jb->root, fp->defs[i]->name,
														  strlen(fp->defs[i]->name), NULL);

			if (jv == NULL || jv->type == jbvNull)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("%s row " INT64_FORMAT " has no value for input \"%s\" of model \"%s\"",
								what, row, fp->defs[i]->name, fp->model)));
			memset(&fp->values[i], 0, sizeof(ox_value));
			OnnxJsonbToValue(jb, jv, fp->defs[i], fp->model, &fp->values[i]);
		}
		fp->rows = 1;
		return true;
	}
	for (int i = 0; i < fp->n; i++)
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, i + 1, desc, &isnull);
		OnnxArrayView v;

		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s row " INT64_FORMAT ": column %d is null", what, row, i + 1)));
		OnnxArrayRead(d, &v);
		if (!fp->stack)
		{
			row_tensor(fp, i, &v, row, what);
			continue;
		}
		if (v.nitems != fp->per_sample[i])
			wrong_shape(fp, i, row, &v, what);
		if (fp->rows == 0)
		{
			const ox_type *t = &fp->defs[i]->type;
			ox_tensor  *out = &fp->values[i].tensor;

			memset(&fp->values[i], 0, sizeof(ox_value));
			fp->values[i].kind = OX_VALUE_TENSOR;
			out->dtype = t->elem;
			out->rank = t->rank;
			for (int k = 1; k < t->rank; k++)
				out->dims[k] = t->dims[k].value;
			fp->bufs[i] = palloc(ox_dtype_size(t->elem) * fp->per_sample[i] * batch);
			out->data = fp->bufs[i];
		}
		convert_into(fp, i, &v,
					 fp->bufs[i] + ox_dtype_size(fp->values[i].tensor.dtype) * fp->per_sample[i] * fp->rows,
					 row, what);
	}
	fp->rows++;
	for (int i = 0; fp->stack && i < fp->n; i++)
		fp->values[i].tensor.dims[0] = fp->rows;
	return !fp->stack || fp->rows >= batch;
}

/* run the session on the current inputs (targets: value ids, or none for the outputs) */
static void
run_feeds(FeedPlan *fp, const int *targets, int n_targets)
{
	ox_status	st;
	uint64		bytes = 0;

	for (int i = 0; i < fp->n; i++)
		if (fp->values[i].kind == OX_VALUE_TENSOR)
			bytes += OnnxTensorBytes(&fp->values[i].tensor);
	ox_status_clear(&st);
	if (OnnxCheckRunInputs(bytes, &st) != OX_OK ||
		(n_targets > 0 ? ox_session_run_targets(fp->session, fp->values, targets, n_targets, &st)
		 : ox_session_run(fp->session, fp->values, &st)) != OX_OK)
	{
		if (st.code == OX_CANCELED)
			OnnxServiceCancel(fp->model);
		OnnxReportStatus(&st, ONNX_PHASE_RUN, fp->model);
	}
}

/*
 * Open the rows of a user's query: a read-only cursor with the caller's
 * privileges.  The first batch is fetched (SPI_tuptable).
 */
static Portal
open_rows(const char *query, const char *what, int batch)
{
	SPIPlanPtr	plan;
	Portal		portal;

	plan = SPI_prepare(query, 0, NULL);
	if (plan == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("could not prepare the %s query", what),
				 errdetail("%s.", SPI_result_code_string(SPI_result))));
	if (!SPI_is_cursor_plan(plan))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("%s query must return rows", what),
				 errhint("Use a SELECT (or VALUES) query.")));
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, true);
	SPI_cursor_fetch(portal, true, batch);
	return portal;
}

/* ---- the quantizers ---------------------------------------------------------------------- */

/* the calibration session, fed the query's rows; returns the rows read */
static int64
calibrate(QuantWork *w, const QuantRequest *r, const void *bytes, size_t len, int n_targets)
{
	const char *what = "calibration";
	int		   *ids = palloc(sizeof(int) * Max(n_targets, 1));
	int		   *from_input = palloc(sizeof(int) * Max(n_targets, 1));
	MemoryContext batch_cxt,
				old;
	FeedPlan	fp;
	Portal		portal;
	int64		rows = 0;
	TupleDesc	desc;
	ox_status	st;

	w->sess[0] = make_session(bytes, len, r->source, OX_OPT_DISABLE, false);
	ox_status_clear(&st);
	w->stats = ox_calib_new(n_targets, r->method, &st);
	if (!w->stats)
		report_quant_error(&st, r->source);
	for (int t = 0; t < n_targets; t++)
	{
		ids[t] = ox_session_value_id(w->sess[0], w->targets[t]);
		from_input[t] = ox_session_find_input(w->sess[0], w->targets[t]);
		if (ids[t] < 0)
			elog(ERROR, "calibration tensor \"%s\" is not in model \"%s\"", w->targets[t], r->source);
	}

	batch_cxt = AllocSetContextCreate(CurrentMemoryContext, "onnx calibration batch",
									  ALLOCSET_DEFAULT_SIZES);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	portal = open_rows(r->calibration, what, r->batch_size);
	desc = SPI_tuptable->tupdesc;
	old = MemoryContextSwitchTo(batch_cxt);
	plan_feeds(&fp, w->sess[0], r->source, desc, r->batch_size, what);
	MemoryContextSwitchTo(old);

	OnnxProgressPhase("calibrating", r->max_rows > 0 ? r->max_rows : 0, "rows");
	while (SPI_processed > 0)
	{
		uint64		n = SPI_processed;
		SPITupleTable *tt = SPI_tuptable;

		for (uint64 k = 0; k < n && (r->max_rows <= 0 || rows < r->max_rows); k++)
		{
			bool		full;

			CHECK_FOR_INTERRUPTS();
			old = MemoryContextSwitchTo(batch_cxt);
			full = add_row(&fp, tt->vals[k], tt->tupdesc, rows + 1, r->batch_size, what);
			rows++;
			if (full || k == n - 1 || (r->max_rows > 0 && rows >= r->max_rows))
			{
				run_feeds(&fp, ids, n_targets);
				for (int t = 0; t < n_targets; t++)
				{
					const ox_value *v = from_input[t] >= 0 ? &fp.values[from_input[t]] :
						ox_session_value(w->sess[0], ids[t]);

					if (v == NULL || v->kind != OX_VALUE_TENSOR || v->tensor.dtype != OX_FLOAT)
						continue;
					ox_status_clear(&st);
					if (ox_calib_add(w->stats, t, v->tensor.data, ox_tensor_numel(&v->tensor), &st) != OX_OK)
						report_quant_error(&st, r->source);
				}
				fp.rows = 0;
				MemoryContextSwitchTo(old);
				MemoryContextReset(batch_cxt);
				/* plan_feeds' arrays live in batch_cxt: rebuild them */
				old = MemoryContextSwitchTo(batch_cxt);
				plan_feeds(&fp, w->sess[0], r->source, tt->tupdesc, r->batch_size, what);
			}
			MemoryContextSwitchTo(old);
		}
		OnnxProgressUpdate(rows);
		SPI_freetuptable(tt);
		if (r->max_rows > 0 && rows >= r->max_rows)
			break;
		SPI_cursor_fetch(portal, true, r->batch_size);
	}
	SPI_cursor_close(portal);
	SPI_finish();
	MemoryContextDelete(batch_cxt);
	if (rows == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("calibration query returned no rows"),
				 errdetail("Static quantization of model \"%s\" needs example inputs to measure value ranges.",
						   r->source)));
	ox_session_free(w->sess[0]);
	w->sess[0] = NULL;
	return rows;
}

/* the shared path of both quantizers: returns the summary tuple */
static Datum
quantize(FunctionCallInfo fcinfo, QuantRequest *r)
{
	QuantWork  *w = work_create();
	OnnxModelKey key;
	OnnxModelKey existing;
	bytea	   *src;
	bytea	   *pre;
	bytea	   *out;
	ox_status	st;
	size_t		len;
	int			n_targets = 0;
	ox_quant_range *ranges = NULL;
	ox_quant_summary sum;
	int64		calib_rows = 0;
	int64		version;
	TupleDesc	tupdesc;
	Datum		values[9];
	bool		nulls[9];

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	ox_status_clear(&st);
	if (ox_quant_check_options(&r->opts, &st) != OX_OK)
		ereport(ERROR,
				(errcode(OnnxSqlState(st.code)),
				 errmsg("invalid quantization options"),
				 errdetail("%s.", st.msg)));
	/* refuse an existing target before the expensive part */
	if (!r->replace && OnnxCatalogLookup(r->target, &existing))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("model \"%s\" already exists", r->target),
				 errhint("Pass replace => true to replace it.")));

	OnnxProgressBegin("quantize", r->target);
	OnnxProgressPhase("reading source", 0, NULL);
	src = OnnxCatalogFetch(r->source, &key);

	/* the basic optimizations first: folded BatchNorms, constants, no Identity */
	OnnxProgressPhase("preparing", 0, NULL);
	w->sess[1] = make_session(VARDATA_ANY(src), VARSIZE_ANY_EXHDR(src), r->source, OX_OPT_BASIC, true);
	ox_status_clear(&st);
	if (ox_model_save(ox_session_model(w->sess[1]), &w->buf, &len, &st) != OX_OK)
		report_quant_error(&st, r->source);
	ox_session_free(w->sess[1]);
	w->sess[1] = NULL;
	pre = take_bytes(w, len, r->source);

	ox_status_clear(&st);
	w->model = ox_model_load(VARDATA(pre), VARSIZE(pre) - VARHDRSZ, NULL, &st);
	if (!w->model)
		report_quant_error(&st, r->source);
	if (ox_quant_calib_targets(w->model, &r->opts, &w->targets, &n_targets, &st) != OX_OK)
		report_quant_error(&st, r->source);

	if (r->opts.mode == OX_QUANT_STATIC)
	{
		calib_rows = calibrate(w, r, VARDATA(pre), VARSIZE(pre) - VARHDRSZ, n_targets);
		ranges = palloc(sizeof(ox_quant_range) * Max(n_targets, 1));
		ox_status_clear(&st);
		if (ox_calib_ranges(w->stats, r->percentile, r->opts.symmetric_activations, ranges, &st) != OX_OK)
			report_quant_error(&st, r->source);
	}

	OnnxProgressPhase("quantizing", 0, NULL);
	ox_status_clear(&st);
	if (ox_quantize(w->model, &r->opts, w->targets, ranges, n_targets, &sum, &st) != OX_OK)
		report_quant_error(&st, r->source);
	if (ox_model_save(w->model, &w->buf, &len, &st) != OX_OK)
		report_quant_error(&st, r->source);
	out = take_bytes(w, len, r->target);
	work_release(w);

	version = OnnxCatalogStoreModel(r->target, out, r->replace,
									lineage_jsonb(r, &key, &sum, calib_rows));
	OnnxProgressEnd();

	memset(nulls, 0, sizeof(nulls));
	values[0] = CStringGetTextDatum(r->target);
	values[1] = Int64GetDatum(version);
	values[2] = Int32GetDatum(sum.nodes_total);
	values[3] = Int32GetDatum(sum.nodes_quantized);
	values[4] = CStringGetTextDatum(sum.ops);
	values[5] = Int64GetDatum((int64) VARSIZE_ANY_EXHDR(src));
	values[6] = Int64GetDatum((int64) len);
	values[7] = Float8GetDatum(len ? (double) VARSIZE_ANY_EXHDR(src) / len : 0);
	values[8] = Int64GetDatum(calib_rows);
	nulls[8] = r->opts.mode == OX_QUANT_DYNAMIC;
	return HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls));
}

/* arguments shared by both functions, from position first on */
static void
common_options(FunctionCallInfo fcinfo, QuantRequest *r, int wt, int pc, int rr, int sw, int ops,
			   int excl, int repl)
{
	r->source = required_text(fcinfo, 0, "source model name");
	r->target = required_text(fcinfo, 1, "target model name");
	r->opts.weight_type = parse_qtype("weight type", required_text(fcinfo, wt, "weight_type"));
	if (PG_ARGISNULL(pc) || PG_ARGISNULL(rr) || PG_ARGISNULL(sw) || PG_ARGISNULL(repl))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("per_channel, reduce_range, symmetric_weights and replace must not be null")));
	r->opts.per_channel = PG_GETARG_BOOL(pc);
	r->opts.reduce_range = PG_GETARG_BOOL(rr);
	r->opts.symmetric_weights = PG_GETARG_BOOL(sw);
	r->opts.op_types = text_list(fcinfo, ops, "op_types", &r->opts.n_op_types);
	r->opts.exclude = text_list(fcinfo, excl, "exclude_nodes", &r->opts.n_exclude);
	r->replace = PG_GETARG_BOOL(repl);
}

/*
 * onnx_quantize_dynamic(source, target, weight_type, per_channel,
 *						 reduce_range, symmetric_weights, op_types,
 *						 exclude_nodes, replace, per_row_activations)
 */
Datum
onnx_quantize_dynamic(PG_FUNCTION_ARGS)
{
	QuantRequest r;

	memset(&r, 0, sizeof(r));
	ox_quant_options_init(&r.opts, OX_QUANT_DYNAMIC);
	common_options(fcinfo, &r, 2, 3, 4, 5, 6, 7, 8);
	/* a catalog entry from before the argument existed passes nine */
	if (PG_NARGS() > 9)
	{
		if (PG_ARGISNULL(9))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("per_row_activations must not be null")));
		r.opts.per_row_activations = PG_GETARG_BOOL(9);
	}
	return quantize(fcinfo, &r);
}

/*
 * onnx_quantize_static(source, target, calibration, method, format,
 *						per_channel, activation_type, weight_type,
 *						symmetric_activations, symmetric_weights,
 *						reduce_range, percentile, op_types, exclude_nodes,
 *						batch_size, max_rows, replace)
 */
Datum
onnx_quantize_static(PG_FUNCTION_ARGS)
{
	QuantRequest r;
	char	   *method;

	memset(&r, 0, sizeof(r));
	ox_quant_options_init(&r.opts, OX_QUANT_STATIC);
	common_options(fcinfo, &r, 7, 5, 10, 9, 12, 13, 16);
	r.calibration = required_text(fcinfo, 2, "calibration query");
	method = required_text(fcinfo, 3, "method");
	r.method = parse_method(method);
	r.method_name = r.method == OX_CALIB_MINMAX ? "minmax" :
		r.method == OX_CALIB_PERCENTILE ? "percentile" : "entropy";
	r.opts.format = parse_format(required_text(fcinfo, 4, "format"));
	r.opts.activation_type = parse_qtype("activation type", required_text(fcinfo, 6, "activation_type"));
	if (PG_ARGISNULL(8) || PG_ARGISNULL(11) || PG_ARGISNULL(14))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("symmetric_activations, percentile and batch_size must not be null")));
	r.opts.symmetric_activations = PG_GETARG_BOOL(8);
	r.percentile = PG_GETARG_FLOAT8(11);
	if (!(r.percentile > 0 && r.percentile <= 100))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("percentile must be greater than 0 and at most 100, not %g", r.percentile)));
	r.batch_size = PG_GETARG_INT32(14);
	if (r.batch_size < 1 || r.batch_size > QUANT_BATCH_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("batch_size must be between 1 and %d, not %d", QUANT_BATCH_MAX, r.batch_size)));
	r.max_rows = PG_ARGISNULL(15) ? 0 : PG_GETARG_INT64(15);
	if (!PG_ARGISNULL(15) && r.max_rows < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_rows must be at least 1, not " INT64_FORMAT, r.max_rows)));
	return quantize(fcinfo, &r);
}

/* ---- the comparison report ------------------------------------------------------------------ */

/* lineage->>'quantized_from' of a model, or NULL */
static char *
quantized_from(const char *model)
{
	Oid			relid = OnnxStoreRelid();
	char	   *nsp = get_namespace_name(get_rel_namespace(relid));
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1];
	char	   *res = NULL;
	int			rc;
	MemoryContext caller = CurrentMemoryContext;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	args[0] = CStringGetTextDatum(model);
	rc = SPI_execute_with_args(psprintf("SELECT lineage OPERATOR(pg_catalog.->>) 'quantized_from' FROM %s.onnx_models "
										"WHERE name OPERATOR(pg_catalog.=) $1",
										quote_identifier(nsp)),
							   1, argtypes, args, NULL, true, 1);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read the lineage of model \"%s\": %s", model, SPI_result_code_string(rc));
	if (SPI_processed == 0)
		OnnxReportUnknownModel(model);
	{
		char	   *v = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

		if (v)
			res = MemoryContextStrdup(caller, v);
	}
	SPI_finish();
	return res;
}

static ox_session *
report_session(const char *name)
{
	OnnxModelKey key;
	bytea	   *b = OnnxCatalogFetch(name, &key);
	ox_session *s = make_session(VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b), name,
								 (ox_opt_level) onnx_graph_optimization_level, false);

	pfree(b);
	return s;
}

/*
 * onnx_quantize_report(model, query, source, output): run a quantized
 * model and its source on the query's rows and compare one output.
 */
Datum
onnx_quantize_report(PG_FUNCTION_ARGS)
{
	const char *what = "comparison";
	char	   *model = required_text(fcinfo, 0, "model name");
	char	   *query = required_text(fcinfo, 1, "query");
	char	   *source = PG_ARGISNULL(2) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(2));
	char	   *output = PG_ARGISNULL(3) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(3));
	QuantWork  *w = work_create();
	FeedPlan	fp[2];
	int			out_idx[2];
	MemoryContext batch_cxt,
				old;
	Portal		portal;
	TupleDesc	tupdesc;
	int64		rows = 0,
				elems = 0,
				vectors = 0,
				agree = 0;
	double		sum_abs = 0,
				max_abs = 0;
	Datum		values[6];
	bool		nulls[6];
	const int	batch = 64;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (!source && !(source = quantized_from(model)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model \"%s\" has no quantization lineage", model),
				 errhint("Name the model to compare with: source => 'name'.")));
	w->sess[0] = report_session(model);
	w->sess[1] = report_session(source);
	for (int m = 0; m < 2; m++)
	{
		const char *name = m == 0 ? model : source;

		out_idx[m] = output ? ox_session_find_output(w->sess[m], output) : 0;
		if (out_idx[m] < 0 || ox_session_output_count(w->sess[m]) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("model \"%s\" has no output named \"%s\"", name, output ? output : "?")));
	}
	if (!output)
		output = pstrdup(ox_session_output(w->sess[0], 0)->name);

	batch_cxt = AllocSetContextCreate(CurrentMemoryContext, "onnx report batch",
									  ALLOCSET_DEFAULT_SIZES);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	portal = open_rows(query, what, batch);
	old = MemoryContextSwitchTo(batch_cxt);
	plan_feeds(&fp[0], w->sess[0], model, SPI_tuptable->tupdesc, batch, what);
	plan_feeds(&fp[1], w->sess[1], source, SPI_tuptable->tupdesc, batch, what);
	MemoryContextSwitchTo(old);
	while (SPI_processed > 0)
	{
		SPITupleTable *tt = SPI_tuptable;
		uint64		n = SPI_processed;

		for (uint64 k = 0; k < n; k++)
		{
			bool		full = false;

			CHECK_FOR_INTERRUPTS();
			old = MemoryContextSwitchTo(batch_cxt);
			for (int m = 0; m < 2; m++)
				full = add_row(&fp[m], tt->vals[k], tt->tupdesc, rows + 1, batch, what);
			rows++;
			if (full || k == n - 1)
			{
				const ox_value *a,
						   *b;
				float	   *fa,
						   *fb;
				int64		na,
							nb,
							ra,
							rb,
							last;

				for (int m = 0; m < 2; m++)
					run_feeds(&fp[m], NULL, 0);
				a = ox_session_result(w->sess[0], out_idx[0]);
				b = ox_session_result(w->sess[1], out_idx[1]);
				fa = OnnxValueToFloats(a, model, output, &na, &ra);
				fb = OnnxValueToFloats(b, source, output, &nb, &rb);
				if (na != nb)
					ereport(ERROR,
							(errcode(ERRCODE_DATATYPE_MISMATCH),
							 errmsg("output \"%s\" of model \"%s\" has %lld values but that of \"%s\" has %lld",
									output, model, (long long) na, source, (long long) nb)));
				last = (a->kind == OX_VALUE_TENSOR && a->tensor.rank > 0) ?
					a->tensor.dims[a->tensor.rank - 1] : na;
				for (int64 i = 0; i < na; i++)
				{
					double		d = fabs((double) fa[i] - fb[i]);

					if (isnan(d))
						d = INFINITY;
					sum_abs += d;
					max_abs = Max(max_abs, d);
				}
				elems += na;
				for (int64 v0 = 0; last > 0 && v0 + last <= na; v0 += last)
				{
					int64		ia = v0,
								ib = v0;

					for (int64 i = v0 + 1; i < v0 + last; i++)
					{
						if (fa[i] > fa[ia])
							ia = i;
						if (fb[i] > fb[ib])
							ib = i;
					}
					agree += ia == ib;
					vectors++;
				}
				fp[0].rows = fp[1].rows = 0;
				MemoryContextSwitchTo(old);
				MemoryContextReset(batch_cxt);
				old = MemoryContextSwitchTo(batch_cxt);
				plan_feeds(&fp[0], w->sess[0], model, tt->tupdesc, batch, what);
				plan_feeds(&fp[1], w->sess[1], source, tt->tupdesc, batch, what);
			}
			MemoryContextSwitchTo(old);
		}
		SPI_freetuptable(tt);
		SPI_cursor_fetch(portal, true, batch);
	}
	SPI_cursor_close(portal);
	SPI_finish();
	MemoryContextDelete(batch_cxt);
	work_release(w);

	memset(nulls, 0, sizeof(nulls));
	values[0] = CStringGetTextDatum(source);
	values[1] = CStringGetTextDatum(output);
	values[2] = Int64GetDatum(rows);
	values[3] = Float8GetDatum(elems ? sum_abs / elems : 0);
	values[4] = Float8GetDatum(max_abs);
	values[5] = Float8GetDatum(vectors ? (double) agree / vectors : 0);
	if (rows == 0)
		nulls[3] = nulls[4] = nulls[5] = true;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}
