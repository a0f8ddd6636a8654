/*
 * batchquery.c
 *	  onnx_predict_query(model, query, output): the set-based form.  Runs a
 *	  query, scores its rows in batches of onnx.batch_size and returns each
 *	  row with its prediction:
 *
 *	 SELECT * FROM onnx_predict_query('iris_rf', 'SELECT id, features FROM iris')
 *	   AS p(id int, label real[]);
 *
 * The query's last column holds the features (an array of numbers, as for
 * onnx_predict); the columns before it are passed through unchanged, in
 * order, and the prediction is added as the last column: the column
 * definition list is the query's columns with the features replaced by a
 * real[].  NULL features give a NULL prediction; other bad features raise
 * the error onnx_predict would raise for them.
 *
 * The query runs through an SPI cursor, onnx.batch_size rows per fetch;
 * each fetch is one model run (or one per run of rows whose feature count
 * is the same).  The result is materialized in a tuplestore, which spills to
 * disk beyond work_mem.
 */
#include "onnx_pg.h"
#include "batch.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(onnx_predict_query);

typedef struct QueryState
{
	OnnxCall	call;
	const char *model;
	const char *output;
	int			n_pass;			/* columns passed through */
	Tuplestorestate *store;
	TupleDesc	desc;			/* of the result */
	/* the pending run: rows of the current fetch with per_sample features */
	int64		per_sample;
	int			n_rows;
	int		   *rows;			/* positions in the fetch */
	bool		rowwise;		/* the model's input has no batch dimension */
	char	   *matrix;
	Size		matrix_bytes;
} QueryState;

static void
check_result_type(QueryState *qs, TupleDesc query, TupleDesc result)
{
	int			n_query = query->natts;

	if (n_query < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the query of onnx_predict_query must return at least one column"),
				 errdetail("Its last column holds the features.")));
	if (result->natts != n_query)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the column definition list of onnx_predict_query must have %d columns", n_query),
				 errdetail("The query returns %d columns: the ones before the features are passed through and the prediction is added last.",
						   n_query)));
	for (int i = 0; i < n_query - 1; i++)
	{
		Oid			want = TupleDescAttr(query, i)->atttypid;
		Oid			got = TupleDescAttr(result, i)->atttypid;

		if (want != got)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column %d of the column definition list has type %s, but the query returns %s",
							i + 1, format_type_be(got), format_type_be(want))));
	}
	if (TupleDescAttr(result, n_query - 1)->atttypid != FLOAT4ARRAYOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the last column of the column definition list must be of type real[]"),
				 errdetail("It receives the prediction; it has type %s.",
						   format_type_be(TupleDescAttr(result, n_query - 1)->atttypid))));
	{
		Oid			ft = getBaseType(TupleDescAttr(query, n_query - 1)->atttypid);
		Oid			elem = get_element_type(ft);

		if (!OidIsValid(elem) || (OnnxElemDtype(elem) == OX_UNDEFINED && elem != NUMERICOID))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("features must be an array of numbers"),
					 errdetail("The last column of the query has type %s; the features may be real[], double precision[], integer[], bigint[], smallint[] or numeric[].",
							   format_type_be(TupleDescAttr(query, n_query - 1)->atttypid))));
	}
	qs->n_pass = n_query - 1;
}

/* the same checks and messages as onnx_predict */
static void
check_features(const OnnxArrayView *v)
{
	if (v->ndim > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("features must be a one-dimensional array"),
				 errdetail("Got a %d-dimensional array.", v->ndim)));
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
 * Run the pending rows (one run; or, for a model without a batch dimension,
 * one row) and keep their predictions.
 */
static void
flush(QueryState *qs, Datum *preds, bool *pred_set)
{
	ox_status	st;
	const ox_value *res;
	int64		per_row;
	int64		numel;
	int			n = qs->n_rows;

	if (n == 0)
		return;
	Assert(!qs->rowwise || n == 1);
	OnnxCallShape(&qs->call, qs->rowwise ? -1 : n, qs->per_sample, false);
	qs->call.in.data = qs->matrix;
	if (OnnxCallRun(&qs->call, &st) != OX_OK)
		OnnxCallReport(&qs->call, &st);
	res = OnnxCallResult(&qs->call);
	numel = OnnxResultIsDense(res) ? ox_tensor_numel(&res->tensor) : -1;
	if (numel < 0 ||
		(!qs->rowwise && (res->tensor.rank < 1 || res->tensor.dims[0] != n || numel % n != 0)))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("output \"%s\" of model \"%s\" does not have one row of numbers per sample",
						ox_session_output(qs->call.session, qs->call.out_index)->name, qs->model),
				 errhint("onnx_predict and onnx_run return such outputs.")));
	per_row = numel / n;
	if (per_row > PG_INT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("result of model \"%s\" is too large for an array", qs->model)));
	for (int k = 0; k < n; k++)
	{
		int			dims[1] = {(int) per_row};

		preds[qs->rows[k]] = PointerGetDatum(OnnxTensorFloatArray(&res->tensor, k * per_row,
																   per_row, 1, dims));
		pred_set[qs->rows[k]] = true;
	}
	qs->n_rows = 0;
}

/* room for rows x per_sample elements of the model's input type */
static void
reserve_matrix(QueryState *qs, uint64 rows)
{
	Size		need = (Size) Max(rows, 1) * qs->per_sample * Max(ox_dtype_size(qs->call.in_dtype), 8);

	if (qs->matrix_bytes < need)
	{
		if (qs->matrix)
			pfree(qs->matrix);
		qs->matrix = MemoryContextAllocHuge(qs->call.mcxt, need);
		qs->matrix_bytes = need;
	}
	if (qs->rows == NULL)
		qs->rows = MemoryContextAlloc(qs->call.mcxt, sizeof(int) * Max(onnx_batch_size, 1));
}

/* one fetch of the cursor: batch its rows, then store them in order */
static void
score_fetch(QueryState *qs, SPITupleTable *tt, uint64 ntuples)
{
	TupleDesc	tdesc = tt->tupdesc;
	int			fcol = tdesc->natts;	/* 1-based: the features */
	Datum	   *preds = palloc(sizeof(Datum) * ntuples);
	bool	   *pred_set = palloc0(sizeof(bool) * ntuples);
	Datum	   *values = palloc(sizeof(Datum) * (qs->n_pass + 1));
	bool	   *nulls = palloc(sizeof(bool) * (qs->n_pass + 1));

	qs->n_rows = 0;
	for (uint64 r = 0; r < ntuples; r++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(tt->vals[r], tdesc, fcol, &isnull);
		OnnxArrayView v;
		ox_status	st;
		Size		esize;

		if (isnull)
			continue;
		OnnxArrayRead(d, &v);
		check_features(&v);
		if (qs->n_rows > 0 && v.nitems != qs->per_sample)
			flush(qs, preds, pred_set);
		if (qs->n_rows == 0)
		{
			const ox_type *ty;

			if (!OnnxCallCurrent(&qs->call, qs->model, qs->output))
				OnnxCallResolve(&qs->call, qs->model, qs->output, false);
			/* raises onnx_predict's errors for a bad feature count */
			OnnxCallShape(&qs->call, -1, v.nitems, false);
			if (!OnnxCallInputSupported(&qs->call))
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("input \"%s\" of model \"%s\" takes %s elements",
								qs->call.input->name, qs->model, ox_dtype_name(qs->call.in_dtype)),
						 errhint("Use onnx_run.")));
			ty = &qs->call.input->type;
			qs->rowwise = ty->kind == OX_TYPE_TENSOR && ty->rank >= 0 &&
				!(ty->rank >= 1 && ty->dims[0].value < 0);
			qs->per_sample = v.nitems;
			reserve_matrix(qs, ntuples);
		}
		esize = ox_dtype_size(qs->call.in_dtype);
		if (OnnxFeatureData(&qs->call, &v, qs->matrix + (Size) qs->n_rows * qs->per_sample * esize,
							&st) == NULL)
			OnnxReportStatus(&st, ONNX_PHASE_RUN, qs->model);
		qs->rows[qs->n_rows++] = (int) r;
		if (qs->rowwise)
			flush(qs, preds, pred_set);
	}
	flush(qs, preds, pred_set);

	for (uint64 r = 0; r < ntuples; r++)
	{
		for (int j = 0; j < qs->n_pass; j++)
			values[j] = SPI_getbinval(tt->vals[r], tdesc, j + 1, &nulls[j]);
		values[qs->n_pass] = preds[r];
		nulls[qs->n_pass] = !pred_set[r];
		tuplestore_putvalues(qs->store, qs->desc, values, nulls);
	}
}

Datum
onnx_predict_query(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *model;
	char	   *query;
	char	   *output;
	QueryState *qs;
	SPIPlanPtr	plan;
	Portal		portal;
	MemoryContext per_query;
	MemoryContext fetch_cxt;
	int			batch = onnx_batch_size;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		return (Datum) 0;		/* no model or no query: no rows */
	model = text_to_cstring(PG_GETARG_TEXT_PP(0));
	query = text_to_cstring(PG_GETARG_TEXT_PP(1));
	output = PG_ARGISNULL(2) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(2));
	per_query = rsinfo->econtext->ecxt_per_query_memory;

	qs = MemoryContextAllocZero(per_query, sizeof(QueryState));
	qs->call.mcxt = per_query;
	qs->model = MemoryContextStrdup(per_query, model);
	qs->output = output ? MemoryContextStrdup(per_query, output) : NULL;
	qs->store = rsinfo->setResult;
	qs->desc = rsinfo->setDesc;

	/* the model first: an unknown name is reported before the query runs */
	OnnxCallResolve(&qs->call, qs->model, qs->output, false);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plan = SPI_prepare_cursor(query, 0, NULL, CURSOR_OPT_NO_SCROLL);
	if (plan == NULL)
		elog(ERROR, "could not prepare the query of onnx_predict_query: %s",
			 SPI_result_code_string(SPI_result));
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, false);
	check_result_type(qs, portal->tupDesc, qs->desc);

	/* each fetch in its own context: the predictions are copied into the store */
	fetch_cxt = AllocSetContextCreate(CurrentMemoryContext, "onnx_predict_query fetch",
									  ALLOCSET_DEFAULT_SIZES);
	for (;;)
	{
		uint64		n;
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		SPI_cursor_fetch(portal, true, batch);
		n = SPI_processed;
		if (n == 0)
			break;
		old = MemoryContextSwitchTo(fetch_cxt);
		score_fetch(qs, SPI_tuptable, n);
		MemoryContextSwitchTo(old);
		MemoryContextReset(fetch_cxt);
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_cursor_close(portal);
	SPI_finish();
	return (Datum) 0;
}
