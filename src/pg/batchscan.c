/*
 * batchscan.c
 *	  Custom Scan (OnnxBatch): executes the onnx_predict calls that
 *	  batchplan.c moved out of a plan node's target list, one model run per
 *	  batch of rows.
 *
 * Per batch: pull up to the batch size rows from the child, keeping the
 * passed-through values (copied into the batch's memory context, reset per
 * batch) and the features; for each call, copy the features of the rows
 * that can be batched into one [rows, features] matrix in the model's
 * element type, run the model once, and cut the output into one real[] per
 * row.  Then return the rows one by one through the node's projection,
 * which evaluates the rest of the original target list in row order.
 *
 * A row is left to the row-wise onnx_predict, called when the row is
 * returned, whenever batching it could change what the query sees: NULL
 * features (the function is strict: NULL), features that are not a
 * one-dimensional array without nulls of the batch's feature count, a model
 * that is missing or cannot take a batch dimension, an output without one
 * row per sample, or a failed run.  The row-wise call then returns the same
 * result or raises the same error, at the same row, as without batching.
 *
 * Batches start at ONNX_BATCH_FIRST rows and double up to onnx.batch_size,
 * so that a LIMIT reads little ahead; a batch also ends once its copies
 * pass ONNX_BATCH_MAX_BYTES (large inputs such as images), and a run that
 * fails for onnx.max_run_memory or lack of memory halves the batches that
 * follow (its rows go row-wise).  Each model run is one call for the
 * session cache and the statistics, which also count its rows.
 */
#include "onnx_pg.h"
#include "batch.h"

#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

/* one batched onnx_predict call */
typedef struct BatchCall
{
	OnnxCall	call;
	FuncExpr   *expr;			/* the original call */
	int			arg_col;		/* its features in the child's output */
	char	   *model;
	char	   *output;
	Datum		model_datum;	/* the Const arguments, for the row-wise call */
	Datum		output_datum;
	FmgrInfo	flinfo;			/* the row-wise call (fallback) */
	/* per row of the current batch */
	Datum	   *result;
	uint8	   *how;			/* ROW_NULL, ROW_BATCHED, ROW_ROWWISE */
	Datum	   *features;		/* copied features of ROW_ROWWISE rows */
	int64		rowwise_rows;	/* for EXPLAIN ANALYZE */
	/* the batch's result arrays and converted scores, kept across batches */
	char	   *arrays;
	Size		arrays_cap;
	float	   *floats;
	Size		floats_cap;
} BatchCall;

#define ROW_NULL 0
#define ROW_BATCHED 1
#define ROW_ROWWISE 2

typedef struct OnnxBatchState
{
	CustomScanState css;
	PlanState  *child;
	int			n_pass;
	int			pass_first;		/* the child's column of the first passed value */
	int			n_calls;
	BatchCall  *calls;
	int			max_batch;
	int			next_batch;
	MemoryContext batch_cxt;
	MemoryContext keep_cxt;		/* the query's: buffers kept across batches */
	/* passed-through values of the batch, row-major [row][n_pass] */
	Datum	   *pass_values;
	bool	   *pass_nulls;
	int16	   *pass_typlen;
	bool	   *pass_byval;
	int			n_rows;
	int			pos;
	bool		child_done;
	/*
	 * Bump allocation of the batch's by-reference copies: from arena_base
	 * (kept across batches, grown to what a batch used), past it from
	 * chunks in batch_cxt.  A batch's buffers are all kept across batches:
	 * allocations past 8 kB are malloc'ed blocks of their own, and freeing
	 * them at every batch let malloc return the heap's top to the kernel
	 * and fault it back in (automatic batching of iris_rf spent 7% of its
	 * time in page faults).
	 */
	char	   *arena_base;
	Size		arena_cap;
	char	   *arena;
	Size		arena_left;
	Size		arena_used;		/* bytes copied into the current batch */
	int		   *rows;			/* run_call's, max_batch of each */
	OnnxArrayView *views;
	int64		batches;		/* for EXPLAIN ANALYZE */
} OnnxBatchState;

static Node *create_state(CustomScan *cscan);
static void begin_scan(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *exec_scan(CustomScanState *node);
static void end_scan(CustomScanState *node);
static void rescan(CustomScanState *node);
static void explain_scan(CustomScanState *node, List *ancestors, ExplainState *es);

CustomScanMethods OnnxBatchScanMethods = {
	ONNX_BATCH_SCAN_NAME,
	create_state
};

static CustomExecMethods exec_methods = {
	ONNX_BATCH_SCAN_NAME,
	begin_scan,
	exec_scan,
	end_scan,
	rescan,
	NULL,						/* no mark/restore */
	NULL,
	NULL,						/* no parallel-aware execution of its own */
	NULL,
	NULL,
	NULL,
	NULL,
	explain_scan
};

void
OnnxBatchScanInit(void)
{
	RegisterCustomScanMethods(&OnnxBatchScanMethods);
}

static Node *
create_state(CustomScan *cscan)
{
	OnnxBatchState *st = (OnnxBatchState *) newNode(sizeof(OnnxBatchState), T_CustomScanState);

	st->css.methods = &exec_methods;
	return (Node *) st;
}

static void
begin_scan(CustomScanState *node, EState *estate, int eflags)
{
	OnnxBatchState *st = (OnnxBatchState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *calls = (List *) lsecond(cscan->custom_private);
	ListCell   *lc;
	int			i;

	st->child = ExecInitNode((Plan *) linitial(cscan->custom_plans), estate, eflags);
	node->custom_ps = list_make1(st->child);
	st->n_pass = intVal(linitial(cscan->custom_private));
	st->pass_first = intVal(lthird(cscan->custom_private));
	st->n_calls = list_length(calls);
	st->max_batch = onnx_batch_size;
	st->next_batch = Min(ONNX_BATCH_FIRST, st->max_batch);
	st->batch_cxt = AllocSetContextCreate(estate->es_query_cxt, "onnx batch",
										  ALLOCSET_DEFAULT_SIZES);
	st->keep_cxt = estate->es_query_cxt;

	st->pass_values = palloc(sizeof(Datum) * Max(st->n_pass, 1) * st->max_batch);
	st->pass_nulls = palloc(sizeof(bool) * Max(st->n_pass, 1) * st->max_batch);
	st->pass_typlen = palloc(sizeof(int16) * Max(st->n_pass, 1));
	st->pass_byval = palloc(sizeof(bool) * Max(st->n_pass, 1));
	for (i = 0; i < st->n_pass; i++)
	{
		Form_pg_attribute att = TupleDescAttr(node->ss.ss_ScanTupleSlot->tts_tupleDescriptor, i);

		st->pass_typlen[i] = att->attlen;
		st->pass_byval[i] = att->attbyval;
	}

	st->calls = palloc0(sizeof(BatchCall) * Max(st->n_calls, 1));
	i = 0;
	foreach(lc, calls)
	{
		BatchCall  *bc = &st->calls[i++];
		List	   *desc = (List *) lfirst(lc);
		Const	   *model;

		bc->expr = (FuncExpr *) linitial(desc);
		bc->arg_col = intVal(lsecond(desc));
		model = (Const *) linitial(bc->expr->args);
		bc->model_datum = model->constvalue;
		bc->model = TextDatumGetCString(model->constvalue);
		if (list_length(bc->expr->args) > 2)
		{
			bc->output_datum = ((Const *) lthird(bc->expr->args))->constvalue;
			bc->output = TextDatumGetCString(bc->output_datum);
		}
		fmgr_info(bc->expr->funcid, &bc->flinfo);
		bc->flinfo.fn_expr = (Node *) bc->expr;
		bc->call.mcxt = estate->es_query_cxt;
		bc->result = palloc(sizeof(Datum) * st->max_batch);
		bc->how = palloc(sizeof(uint8) * st->max_batch);
		bc->features = palloc(sizeof(Datum) * st->max_batch);
	}
	st->rows = palloc(sizeof(int) * st->max_batch);
	st->views = palloc(sizeof(OnnxArrayView) * st->max_batch);
}

/*
 * Buffers kept across batches (in the query's context, as the state):
 * *buf grown to at least len bytes; its contents are not kept.
 */
static void *
keep_buffer(OnnxBatchState *st, void *buf, Size *cap, Size len)
{
	if (*cap >= len && buf)
		return buf;
	if (buf)
		pfree(buf);
	len = Max(len, 1024);
	buf = MemoryContextAllocHuge(st->keep_cxt, len);
	*cap = len;
	return buf;
}

/* a new batch: its copies start at the kept arena, grown to the last batch's */
static void
batch_reset(OnnxBatchState *st)
{
	if (st->arena_used > st->arena_cap)
		st->arena_base = keep_buffer(st, st->arena_base, &st->arena_cap, st->arena_used + st->arena_used / 4);
	MemoryContextReset(st->batch_cxt);
	st->arena = st->arena_base;
	st->arena_left = st->arena_base ? st->arena_cap : 0;
	st->arena_used = 0;
}

/* memory for the batch's copies: a bump allocator */
static void *
batch_alloc(OnnxBatchState *st, Size len)
{
	void	   *p;

	len = MAXALIGN(len);
	if (st->arena_left < len)
	{
		Size		chunk = Max(len, 64 * 1024);

		st->arena = MemoryContextAllocHuge(st->batch_cxt, chunk);
		st->arena_left = chunk;
	}
	p = st->arena;
	st->arena += len;
	st->arena_left -= len;
	st->arena_used += len;
	return p;
}

/* datumCopy, cheaper: no palloc per value */
static Datum
copy_value(OnnxBatchState *st, Datum v, int16 typlen)
{
	const char *src = DatumGetPointer(v);
	Size		len;
	char	   *dst;

	if (typlen == -1)
	{
		if (VARATT_IS_EXTERNAL_EXPANDED(src))
			return datumCopy(v, false, -1);		/* flattens */
		len = VARSIZE_ANY(src);
	}
	else if (typlen == -2)
		len = strlen(src) + 1;
	else
		len = typlen;
	dst = batch_alloc(st, len);
	OnnxCopyShort(dst, src, len);
	return PointerGetDatum(dst);
}

/* copy the child's current row into row r of the batch */
static void
keep_row(OnnxBatchState *st, TupleTableSlot *slot, int r)
{
	Datum	   *values = st->pass_values + (Size) r * st->n_pass;
	bool	   *nulls = st->pass_nulls + (Size) r * st->n_pass;

	for (int j = 0; j < st->n_pass; j++)
	{
		Datum		v = slot->tts_values[st->pass_first + j];

		nulls[j] = slot->tts_isnull[st->pass_first + j];
		values[j] = (nulls[j] || st->pass_byval[j]) ? v :
			copy_value(st, v, st->pass_typlen[j]);
	}
	for (int c = 0; c < st->n_calls; c++)
	{
		BatchCall  *bc = &st->calls[c];
		int			col = bc->arg_col;

		if (slot->tts_isnull[col])
			bc->how[r] = ROW_NULL;
		else
		{
			/* row-wise unless run_call batches it */
			bc->how[r] = ROW_ROWWISE;
			bc->features[r] = copy_value(st, slot->tts_values[col], -1);
		}
	}
}

/*
 * Can this call be batched at all, with the model as it is now?  Not when
 * the model is missing (the row-wise call reports it) or its input has no
 * batch dimension that row-wise calls would fill with 1.
 */
static bool
call_batchable(BatchCall *bc)
{
	const ox_type *ty;

	if (!OnnxCallCurrent(&bc->call, bc->model, bc->output) &&
		!OnnxCallResolve(&bc->call, bc->model, bc->output, true))
		return false;
	if (bc->call.input == NULL || !OnnxCallInputSupported(&bc->call))
		return false;
	ty = &bc->call.input->type;
	if (ty->kind != OX_TYPE_TENSOR || ty->rank < 0)
		return true;
	/* a symbolic first dimension: onnx_predict makes it 1, a batch makes it n */
	return ty->rank >= 1 && ty->dims[0].value < 0;
}

/* run one call over the rows of the batch that it can batch */
static void
run_call(OnnxBatchState *st, BatchCall *bc)
{
	int			n = st->n_rows;
	int64		per_sample = -1;
	int			n_ok = 0;
	int		   *rows;
	OnnxArrayView *views;
	char	   *matrix;
	Size		esize;
	ox_status	status;
	const ox_value *res;
	int64		per_row;
	Size		arr_bytes;
	char	   *arrays;
	float	   *floats;

	if (!call_batchable(bc))
		return;					/* every row stays row-wise */

	/* the rows to batch: 1-D, no nulls, numeric, the first such row's length */
	rows = st->rows;
	/* each row's array header is read once: the views fill the matrix below */
	views = st->views;
	for (int r = 0; r < n; r++)
	{
		OnnxArrayView *v = &views[n_ok];

		if (bc->how[r] != ROW_ROWWISE)
			continue;
		OnnxArrayRead(bc->features[r], v);
		if (v->ndim != 1 || v->nitems == 0 || v->hasnull || OnnxElemDtype(v->elemtype) == OX_UNDEFINED)
			continue;
		if (per_sample < 0)
			per_sample = v->nitems;
		else if (v->nitems != per_sample)
			continue;
		rows[n_ok++] = r;
	}
	if (n_ok == 0 || !OnnxCallShape(&bc->call, n_ok, per_sample, true))
		return;

	/* the matrix, in the model's element type */
	esize = ox_dtype_size(bc->call.in_dtype);
	matrix = OnnxCallScratch(&bc->call, (Size) n_ok * per_sample * Max(esize, sizeof(double)));
	for (int k = 0; k < n_ok; k++)
		if (OnnxFeatureData(&bc->call, &views[k], matrix + (Size) k * per_sample * esize, &status) == NULL)
			return;
	bc->call.in.data = matrix;
	if (OnnxCallRun(&bc->call, &status) != OX_OK)
	{
		if (status.code == OX_CANCELED)
			OnnxCallReport(&bc->call, &status);
		/* too big for onnx.max_run_memory or for memory: smaller batches from now on */
		if ((status.code == OX_LIMIT_EXCEEDED || status.code == OX_OUT_OF_MEMORY) && n_ok > 1)
		{
			st->max_batch = Max(n_ok / 2, 1);
			st->next_batch = Min(st->next_batch, st->max_batch);
		}
		return;					/* the row-wise calls will report it */
	}

	/* one row of output per sample, numbers */
	res = OnnxCallResult(&bc->call);
	if (!OnnxResultIsDense(res) || res->tensor.rank < 1 || res->tensor.dims[0] != n_ok ||
		ox_tensor_numel(&res->tensor) % n_ok != 0)
		return;
	per_row = ox_tensor_numel(&res->tensor) / n_ok;
	if (per_row < 1 || per_row > (int64) ((MaxAllocSize - 64) / sizeof(float4)) ||
		(Size) n_ok * (ARR_OVERHEAD_NONULLS(1) + per_row * sizeof(float4)) >= MaxAllocHugeSize)
		return;

	/* every row's real[] in one allocation */
	if (res->tensor.dtype == OX_FLOAT)
		floats = (float *) res->tensor.data;
	else
	{
		bc->floats = keep_buffer(st, bc->floats, &bc->floats_cap, sizeof(float) * n_ok * per_row);
		floats = bc->floats;
		if (ox_convert_elements(floats, OX_FLOAT, res->tensor.data, res->tensor.dtype,
								(int64) n_ok * per_row, &status) != OX_OK)
			return;
	}
	arr_bytes = MAXALIGN(ARR_OVERHEAD_NONULLS(1) + per_row * sizeof(float4));
	bc->arrays = keep_buffer(st, bc->arrays, &bc->arrays_cap, arr_bytes * n_ok);
	arrays = bc->arrays;
	for (int k = 0; k < n_ok; k++)
	{
		ArrayType  *a = (ArrayType *) (arrays + arr_bytes * k);

		memset(a, 0, ARR_OVERHEAD_NONULLS(1));
		SET_VARSIZE(a, ARR_OVERHEAD_NONULLS(1) + per_row * sizeof(float4));
		a->ndim = 1;
		a->elemtype = FLOAT4OID;
		ARR_DIMS(a)[0] = (int) per_row;
		ARR_LBOUND(a)[0] = 1;
		memcpy(ARR_DATA_PTR(a), floats + (Size) k * per_row, per_row * sizeof(float4));
		bc->result[rows[k]] = PointerGetDatum(a);
		bc->how[rows[k]] = ROW_BATCHED;
	}
}

/*
 * Read the next batch from the child and run the calls; false at the end.
 * The child runs in the caller's context (nodes allocate their own state
 * lazily, as a heap scan does at its first row): only the batch's copies go
 * to batch_cxt.
 */
static bool
fill_batch(OnnxBatchState *st)
{
	MemoryContext old;
	int			n = 0;

	batch_reset(st);
	st->n_rows = st->pos = 0;
	if (st->child_done)
		return false;
	/* up to the batch size, and not much beyond ONNX_BATCH_MAX_BYTES of copies */
	while (n < st->next_batch && st->arena_used < ONNX_BATCH_MAX_BYTES)
	{
		TupleTableSlot *slot = ExecProcNode(st->child);

		if (TupIsNull(slot))
		{
			st->child_done = true;
			break;
		}
		slot_getallattrs(slot);
		old = MemoryContextSwitchTo(st->batch_cxt);
		keep_row(st, slot, n);
		MemoryContextSwitchTo(old);
		n++;
	}
	st->n_rows = n;
	st->next_batch = Min(st->next_batch * 2, st->max_batch);
	if (n > 0)
	{
		st->batches++;
		old = MemoryContextSwitchTo(st->batch_cxt);
		for (int c = 0; c < st->n_calls; c++)
			run_call(st, &st->calls[c]);
		MemoryContextSwitchTo(old);
	}
	return n > 0;
}

/* the row-wise call for row r (in the per-tuple context) */
static Datum
rowwise_call(BatchCall *bc, int r, bool *isnull)
{
	LOCAL_FCINFO(fcinfo, 3);
	Datum		d;
	int			nargs = list_length(bc->expr->args);

	bc->rowwise_rows++;
	InitFunctionCallInfoData(*fcinfo, &bc->flinfo, nargs, bc->expr->inputcollid, NULL, NULL);
	fcinfo->args[0].value = bc->model_datum;
	fcinfo->args[0].isnull = false;
	fcinfo->args[1].value = bc->features[r];
	fcinfo->args[1].isnull = false;
	if (nargs > 2)
	{
		fcinfo->args[2].value = bc->output_datum;
		fcinfo->args[2].isnull = false;
	}
	d = FunctionCallInvoke(fcinfo);
	*isnull = fcinfo->isnull;
	return d;
}

static TupleTableSlot *
exec_scan(CustomScanState *node)
{
	OnnxBatchState *st = (OnnxBatchState *) node;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	int			r;

	CHECK_FOR_INTERRUPTS();
	if (st->pos >= st->n_rows && !fill_batch(st))
		return NULL;
	r = st->pos++;

	ResetExprContext(econtext);
	ExecClearTuple(slot);
	if (st->n_pass > 0)
	{
		memcpy(slot->tts_values, st->pass_values + (Size) r * st->n_pass, sizeof(Datum) * st->n_pass);
		memcpy(slot->tts_isnull, st->pass_nulls + (Size) r * st->n_pass, sizeof(bool) * st->n_pass);
	}
	for (int c = 0; c < st->n_calls; c++)
	{
		BatchCall  *bc = &st->calls[c];
		int			col = st->n_pass + c;

		switch (bc->how[r])
		{
			case ROW_NULL:
				slot->tts_values[col] = (Datum) 0;
				slot->tts_isnull[col] = true;
				break;
			case ROW_BATCHED:
				slot->tts_values[col] = bc->result[r];
				slot->tts_isnull[col] = false;
				break;
			default:
				{
					MemoryContext old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);

					slot->tts_values[col] = rowwise_call(bc, r, &slot->tts_isnull[col]);
					MemoryContextSwitchTo(old);
				}
				break;
		}
	}
	ExecStoreVirtualTuple(slot);

	econtext->ecxt_scantuple = slot;
	if (node->ss.ps.ps_ProjInfo)
		return ExecProject(node->ss.ps.ps_ProjInfo);
	return slot;
}

static void
end_scan(CustomScanState *node)
{
	OnnxBatchState *st = (OnnxBatchState *) node;

	ExecEndNode(st->child);
	MemoryContextDelete(st->batch_cxt);
}

static void
rescan(CustomScanState *node)
{
	OnnxBatchState *st = (OnnxBatchState *) node;

	batch_reset(st);
	st->n_rows = st->pos = 0;
	st->child_done = false;
	st->next_batch = Min(ONNX_BATCH_FIRST, st->max_batch);
	/* the child rescans at its next fetch when its parameters changed */
	if (node->ss.ps.chgParam != NULL)
		UpdateChangedParamSet(st->child, node->ss.ps.chgParam);
	if (st->child->chgParam == NULL)
		ExecReScan(st->child);
}

static void
explain_scan(CustomScanState *node, List *ancestors, ExplainState *es)
{
	OnnxBatchState *st = (OnnxBatchState *) node;
	StringInfoData models;

	initStringInfo(&models);
	for (int c = 0; c < st->n_calls; c++)
	{
		bool		dup = false;

		for (int d = 0; d < c; d++)
			dup |= strcmp(st->calls[d].model, st->calls[c].model) == 0;
		if (!dup)
			appendStringInfo(&models, "%s%s", models.len ? ", " : "", st->calls[c].model);
	}
	ExplainPropertyText(st->n_calls > 1 ? "Models" : "Model", models.data, es);
	ExplainPropertyInteger("Batch Size", NULL, st->max_batch, es);
	if (es->analyze)
	{
		int64		rowwise = 0;

		for (int c = 0; c < st->n_calls; c++)
			rowwise += st->calls[c].rowwise_rows;
		ExplainPropertyInteger("Batches", NULL, st->batches, es);
		ExplainPropertyInteger("Row-wise Calls", NULL, rowwise, es);
	}
}
