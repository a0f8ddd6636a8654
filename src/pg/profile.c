/*
 * profile.c
 *	  onnx_profile: run a model on one input with per-node timing and
 *	  return one row per node in execution order; onnx_profile_ops: the same
 *	  totalled by operator.
 *
 * onnxruntime writes a JSON trace file for this; we answer with rows, so
 * that SQL can sort, sum and compare them.
 *
 * The input is an "any" argument, like onnx_predict's features: an array of
 * numbers is one sample for the model's single input (shaped and converted
 * exactly as onnx_predict does, through OnnxCall); a jsonb object names the
 * inputs as onnx_run takes them.  An untyped literal is read as jsonb when it
 * contains a colon ('{"X": [[1, 2]]}'), else as real[] ('{1, 2}').
 *
 * The run uses the backend's cached session, the same one onnx_predict and
 * onnx_run use, with the engine's profiling switched on for the call and off
 * again before returning or raising an error.  The engine records the main
 * graph only: a node with subgraphs (If, Loop, Scan) counts their time as
 * its own.  Times of several runs are averaged.
 *
 * With the CUDA provider, the nodes placed on the device run as partition
 * nodes (op CudaPartition): one row each, provider 'cuda', named after the
 * nodes it ran ("cuda partition of 12 nodes: conv1..relu5"), timed as one;
 * onnx_model_placement lists them one by one.
 */
#include "onnx_pg.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(onnx_profile);
PG_FUNCTION_INFO_V1(onnx_profile_ops);

#define ONNX_PROFILE_MAX_RUNS 1000

/* one node's row, copied out of the engine before anything can ERROR */
typedef struct ProfileRow
{
	char	   *name;
	char	   *op;
	char	   *fused_from;
	const char *provider;		/* a static string of the engine's */
	double		ms;
	ox_dtype	dtype;
	int			rank;
	int64		dims[OX_MAX_RANK];
	int64		bytes;
} ProfileRow;

/* named jsonb inputs -> values, as onnx_run takes them */
static ox_value *
jsonb_inputs(ox_session *s, const char *model, Jsonb *jb)
{
	int			n_in = ox_session_input_count(s);
	ox_value   *inputs;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;

	if (!JB_ROOT_IS_OBJECT(jb))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("inputs must be a JSON object"),
				 errdetail("Map each input name to a nested array, for example {\"X\": [[5.1, 3.5, 1.4, 0.2]]}.")));
	it = JsonbIteratorInit(&jb->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			char	   *key = pnstrdup(v.val.string.val, v.val.string.len);

			if (ox_session_find_input(s, key) < 0)
				ereport(ERROR,
						(errcode(ERRCODE_UNDEFINED_OBJECT),
						 errmsg("model \"%s\" has no input named \"%s\"", model, key)));
		}
	}
	inputs = palloc0(sizeof(ox_value) * Max(n_in, 1));
	for (int i = 0; i < n_in; i++)
	{
		const ox_value_def *def = ox_session_input(s, i);
		JsonbValue *jv;

		jv = getKeyJsonValueFromContainer(&jb->root, def->name, strlen(def->name), NULL);
		if (jv == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("missing input \"%s\" for model \"%s\"", def->name, model)));
		if (jv->type == jbvNull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("input \"%s\" of model \"%s\" must not be null", def->name, model)));
		OnnxJsonbToValue(jb, jv, def, model, &inputs[i]);
	}
	return inputs;
}

static char *
safe_strdup(const char *s)
{
	if (s == NULL)
		return NULL;
	if (!OnnxUtf8Valid(s, strlen(s)))
		return pstrdup("?");
	return pstrdup(s);
}

/* what to run: one tensor for the single input, or named values */
typedef struct ProfileInput
{
	OnnxCall	call;			/* resolved session; call.in for the tensor form */
	bool		tensor_form;
	ox_value   *inputs;			/* jsonb form */
	int64		rows;			/* samples, for onnx_stat_models */
} ProfileInput;

static ox_code
run_once(ProfileInput *pi, ox_status *st)
{
	ox_status_clear(st);
	if (pi->tensor_form)
		return ox_session_run_tensor(pi->call.session, &pi->call.in, NULL, 0, st);
	return ox_session_run(pi->call.session, pi->inputs, st);
}

/*
 * Run `runs` times with profiling on; returns the rows (times averaged) and
 * their count.  Profiling is off again whatever happens.
 */
static ProfileRow *
profile_runs(ProfileInput *pi, int runs, int *n_rows)
{
	ox_session *s = pi->call.session;
	const char *model = pi->call.model;
	ProfileRow *rows = NULL;
	int			n = 0;
	ox_status	st;

	for (int r = 0; r < runs; r++)
	{
		const ox_node_profile *prof;
		int			np;

		CHECK_FOR_INTERRUPTS();
		OnnxCacheTouch(pi->call.entry);
		OnnxStatsRunRows(pi->rows);
		ox_session_set_profiling(s, true);
		if (run_once(pi, &st) != OX_OK)
		{
			ox_session_set_profiling(s, false);
			if (st.code == OX_CANCELED)
				OnnxServiceCancel(model);
			OnnxReportStatus(&st, ONNX_PHASE_RUN, model);
		}
		np = ox_session_profile(s, &prof);
		if (rows == NULL)
		{
			/* palloc may ERROR: copy with malloc and switch profiling off first */
			ox_node_profile *copy = malloc(sizeof(ox_node_profile) * Max(np, 1));

			if (copy == NULL)
			{
				ox_session_set_profiling(s, false);
				ereport(ERROR,
						(errcode(ERRCODE_OUT_OF_MEMORY),
						 errmsg("out of memory")));
			}
			memcpy(copy, prof, sizeof(ox_node_profile) * np);
			ox_session_set_profiling(s, false);
			rows = palloc0(sizeof(ProfileRow) * Max(np, 1));
			for (int k = 0; k < np; k++)
			{
				const ox_node_profile *p = &copy[k];
				ProfileRow *row;

				if (p->op_type == NULL)
					continue;	/* not executed */
				row = &rows[n++];
				if (p->partition_nodes > 0)
					row->name = psprintf("%s partition of %d node%s: %s%s%s", p->provider,
										 p->partition_nodes, p->partition_nodes == 1 ? "" : "s",
										 safe_strdup(p->partition_first),
										 p->partition_nodes > 1 ? ".." : "",
										 p->partition_nodes > 1 ? safe_strdup(p->partition_last) : "");
				else
					row->name = safe_strdup(p->name);
				row->provider = p->provider && strcmp(p->provider, "cuda") == 0 ? "cuda" : "cpu";
				row->op = safe_strdup(p->op_type);
				row->fused_from = safe_strdup(p->fused_from);
				row->ms = p->ms;
				row->dtype = p->out_dtype;
				row->rank = p->out_rank;
				if (p->out_rank > 0)
					memcpy(row->dims, p->out_dims, sizeof(int64) * p->out_rank);
				row->bytes = (int64) p->out_bytes;
			}
			free(copy);
		}
		else
		{
			/* same session, same plan: the same nodes in the same order */
			int			j = 0;

			for (int k = 0; k < np && j < n; k++)
			{
				if (prof[k].op_type == NULL)
					continue;
				rows[j++].ms += prof[k].ms;
			}
			ox_session_set_profiling(s, false);
		}
		OnnxCacheAfterRun(pi->call.entry);
	}
	for (int j = 0; j < n; j++)
		rows[j].ms /= runs;
	*n_rows = n;
	return rows;
}

/* one sample of features for the model's single input, as onnx_predict */
static void
features_input(ProfileInput *pi, Datum d)
{
	OnnxCall   *call = &pi->call;
	OnnxArrayView v;
	ox_status	st;
	int			n_in = ox_session_input_count(call->session);

	if (call->input == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model \"%s\" takes %d inputs", call->model, n_in),
				 errdetail("An array of features feeds exactly one input."),
				 errhint("Pass the inputs as a jsonb object, as onnx_run takes them.")));
	if (!OnnxCallInputSupported(call))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("input \"%s\" of model \"%s\" takes %s elements", call->input->name,
						call->model, ox_dtype_name(call->in_dtype)),
				 errhint("Pass the inputs as a jsonb object, as onnx_run takes them.")));
	OnnxArrayRead(d, &v);
	if (v.ndim > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("features must be a one-dimensional array"),
				 errdetail("Got a %d-dimensional array.", v.ndim)));
	if (v.nitems == 0)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("features must not be empty")));
	if (v.hasnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("features must not contain null values")));
	OnnxCallShape(call, -1, v.nitems, false);
	call->in.data = (void *) OnnxFeatureData(call, &v, NULL, &st);
	if (call->in.data == NULL)
		OnnxReportStatus(&st, ONNX_PHASE_RUN, call->model);
	pi->tensor_form = true;
	pi->rows = 1;
}

/* resolve the model and read the "any" input argument */
static void
profile_input(FunctionCallInfo fcinfo, ProfileInput *pi)
{
	char	   *model = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Oid			type = getBaseType(get_fn_expr_argtype(fcinfo->flinfo, 1));
	Datum		d = PG_GETARG_DATUM(1);
	Oid			elem;

	if (type == UNKNOWNOID)
	{
		char	   *lit = DatumGetCString(d);

		if (strchr(lit, ':') != NULL)
		{
			d = DirectFunctionCall1(jsonb_in, CStringGetDatum(lit));
			type = JSONBOID;
		}
		else
		{
			d = OidInputFunctionCall(F_ARRAY_IN, lit, FLOAT4OID, -1);
			type = FLOAT4ARRAYOID;
		}
	}
	elem = type == JSONBOID ? InvalidOid : get_element_type(type);
	if (type != JSONBOID &&
		(!OidIsValid(elem) || (OnnxElemDtype(elem) == OX_UNDEFINED && elem != NUMERICOID)))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("inputs must be an array of numbers or a jsonb object"),
				 errdetail("Got type %s.", format_type_be(type))));

	memset(pi, 0, sizeof(*pi));
	pi->call.mcxt = CurrentMemoryContext;
	OnnxCallResolve(&pi->call, model, NULL, false);
	if (type == JSONBOID)
	{
		pi->inputs = jsonb_inputs(pi->call.session, model, DatumGetJsonbP(d));
		pi->rows = (ox_session_input_count(pi->call.session) > 0 &&
					pi->inputs[0].kind == OX_VALUE_TENSOR && pi->inputs[0].tensor.rank > 0) ?
			pi->inputs[0].tensor.dims[0] : 1;
	}
	else
		features_input(pi, d);
}

static int
check_runs(int32 runs)
{
	if (runs < 1 || runs > ONNX_PROFILE_MAX_RUNS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("runs must be between 1 and %d", ONNX_PROFILE_MAX_RUNS)));
	return runs;
}

Datum
onnx_profile(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			runs = check_runs(PG_GETARG_INT32(2));
	ProfileInput pi;
	ProfileRow *rows;
	int			n;
	double		total = 0;

	profile_input(fcinfo, &pi);
	rows = profile_runs(&pi, runs, &n);

	InitMaterializedSRF(fcinfo, 0);
	for (int j = 0; j < n; j++)
		total += rows[j].ms;
	for (int j = 0; j < n; j++)
	{
		ProfileRow *r = &rows[j];
		Datum		values[10];
		bool		nulls[10] = {0};

		values[0] = Int32GetDatum(j + 1);
		values[1] = CStringGetTextDatum(r->name);
		values[2] = CStringGetTextDatum(r->op);
		values[3] = CStringGetTextDatum(r->provider);
		values[4] = Float8GetDatum(r->ms);
		values[5] = Float8GetDatum(total > 0 ? 100.0 * r->ms / total : 0);
		if (r->rank >= 0 && r->dtype != OX_UNDEFINED)
		{
			Datum	   *d = palloc(sizeof(Datum) * Max(r->rank, 1));

			for (int i = 0; i < r->rank; i++)
				d[i] = Int64GetDatum(r->dims[i]);
			values[6] = PointerGetDatum(construct_array(d, r->rank, INT8OID, 8, true,
														TYPALIGN_DOUBLE));
			values[7] = CStringGetTextDatum(ox_dtype_name(r->dtype));
		}
		else
		{
			nulls[6] = true;
			nulls[7] = true;
		}
		values[8] = Int64GetDatum(r->bytes);
		if (r->fused_from)
			values[9] = CStringGetTextDatum(r->fused_from);
		else
			nulls[9] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

typedef struct OpTotal
{
	const char *op;
	int			nodes;
	double		ms;
	int64		bytes;
} OpTotal;

/* the profile totalled by operator type, slowest first */
Datum
onnx_profile_ops(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			runs = check_runs(PG_GETARG_INT32(2));
	ProfileInput pi;
	ProfileRow *rows;
	int			n;
	int			n_ops = 0;
	double		total = 0;
	OpTotal    *ops;

	profile_input(fcinfo, &pi);
	rows = profile_runs(&pi, runs, &n);

	ops = palloc0(sizeof(*ops) * Max(n, 1));
	for (int j = 0; j < n; j++)
	{
		int			k;

		total += rows[j].ms;
		for (k = 0; k < n_ops; k++)
			if (strcmp(ops[k].op, rows[j].op) == 0)
				break;
		if (k == n_ops)
			ops[n_ops++].op = rows[j].op;
		ops[k].nodes++;
		ops[k].ms += rows[j].ms;
		ops[k].bytes += rows[j].bytes;
	}
	/* slowest first (insertion sort: a few dozen operator types at most) */
	for (int a = 1; a < n_ops; a++)
		for (int b = a; b > 0 && (ops[b].ms > ops[b - 1].ms ||
								  (ops[b].ms == ops[b - 1].ms &&
								   strcmp(ops[b].op, ops[b - 1].op) < 0)); b--)
		{
			OpTotal		tmp = ops[b];

			ops[b] = ops[b - 1];
			ops[b - 1] = tmp;
		}

	InitMaterializedSRF(fcinfo, 0);
	for (int k = 0; k < n_ops; k++)
	{
		Datum		values[5];
		bool		nulls[5] = {0};

		values[0] = CStringGetTextDatum(ops[k].op);
		values[1] = Int32GetDatum(ops[k].nodes);
		values[2] = Float8GetDatum(ops[k].ms);
		values[3] = Float8GetDatum(total > 0 ? 100.0 * ops[k].ms / total : 0);
		values[4] = Int64GetDatum(ops[k].bytes);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
