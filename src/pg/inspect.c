/*
 * inspect.c
 *	  onnx_model_info, onnx_model_inputs, onnx_model_outputs and
 *	  onnx_model_nodes, each for a stored model (by name) or raw bytes.
 *
 * They describe the model as stored (parsed, not optimized): what the file
 * says, not what a session runs.  The parsed model is engine memory held by
 * an OnnxGuard, so an ERROR while building the result frees it.
 */
#include "onnx_pg.h"

#include "catalog/pg_type.h"
#include "common/shortest_dec.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(onnx_model_info);
PG_FUNCTION_INFO_V1(onnx_model_info_bytea);
PG_FUNCTION_INFO_V1(onnx_model_inputs);
PG_FUNCTION_INFO_V1(onnx_model_inputs_bytea);
PG_FUNCTION_INFO_V1(onnx_model_outputs);
PG_FUNCTION_INFO_V1(onnx_model_outputs_bytea);
PG_FUNCTION_INFO_V1(onnx_model_nodes);
PG_FUNCTION_INFO_V1(onnx_model_nodes_bytea);

ox_model *
OnnxParseModel(const void *bytes, size_t len, const char *name, size_t max_bytes)
{
	ox_load_options lopts;
	ox_status	st;
	ox_model   *m;

	memset(&lopts, 0, sizeof(lopts));
	lopts.max_model_bytes = max_bytes;
	lopts.max_unpack_bytes = max_bytes ? OnnxMaxLoadBytes() : 0;
	ox_status_clear(&st);
	if (len == 0)
	{
		ox_fail(&st, OX_INVALID_MODEL, "the model is empty (0 bytes)");
		OnnxReportStatus(&st, ONNX_PHASE_LOAD, name);
	}
	m = ox_model_load(bytes, len, &lopts, &st);
	if (m == NULL)
	{
		if (st.code == OX_OK)
			ox_fail(&st, OX_INTERNAL, "the loader returned no model and no error");
		/* the one load limit a setting here gives (loader_tensor.c's message) */
		if (st.code == OX_LIMIT_EXCEEDED && strncmp(st.msg, "unpacking the model", 19) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 name ? errmsg("could not load model \"%s\"", name) : errmsg("could not load model"),
					 errdetail("Unpacking the model would take more memory than onnx.max_load_memory allows (%d MB).",
							   onnx_max_load_memory),
					 errhint("A superuser may raise onnx.max_load_memory.")));
		OnnxReportStatus(&st, ONNX_PHASE_LOAD, name);
	}
	if (ox_model_check_kernels(m, &st) != OX_OK)
	{
		ox_model_free(m);
		OnnxReportStatus(&st, ONNX_PHASE_LOAD, name);
	}
	return m;
}

/* ---- jsonb building helpers ---- */

#define jb_key OnnxJbKey
#define jb_int OnnxJbInt
#define jb_float OnnxJbFloat

static void
jb_str(JsonbParseState **state, const char *s)
{
	OnnxJbString(state, WJB_VALUE, s, strlen(s));
}

static void
jb_elem_str(JsonbParseState **state, const char *s, size_t len, bool elem)
{
	OnnxJbBytes(state, elem ? WJB_ELEM : WJB_VALUE, s, len);
}

static Jsonb *
jb_finish(JsonbParseState **state, JsonbIteratorToken tok)
{
	JsonbValue *res = pushJsonbValue(state, tok, NULL);

	return JsonbValueToJsonb(res);
}

Jsonb *
OnnxOpsetsJsonb(const ox_model *m)
{
	JsonbParseState *state = NULL;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	for (int i = 0; i < m->n_opsets; i++)
	{
		jb_key(&state, OnnxDomainName(m->opsets[i].domain));
		jb_int(&state, m->opsets[i].version, false);
	}
	return jb_finish(&state, WJB_END_OBJECT);
}

Jsonb *
OnnxMetadataJsonb(const ox_model *m)
{
	JsonbParseState *state = NULL;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	for (int i = 0; i < m->n_meta; i++)
	{
		const char *k = m->meta[i].key ? m->meta[i].key : "";
		const char *v = m->meta[i].value ? m->meta[i].value : "";

		if (!OnnxUtf8Valid(k, strlen(k)))
			continue;
		jb_key(&state, k);
		jb_elem_str(&state, v, strlen(v), false);
	}
	return jb_finish(&state, WJB_END_OBJECT);
}

char *
OnnxProducerString(const ox_model *m)
{
	const char *n = m->producer_name ? m->producer_name : "";
	const char *v = m->producer_version ? m->producer_version : "";
	char	   *s;

	if (n[0] == '\0' && v[0] == '\0')
		return NULL;
	s = (v[0] == '\0') ? pstrdup(n) : (n[0] == '\0' ? pstrdup(v) : psprintf("%s %s", n, v));
	return OnnxUtf8Valid(s, strlen(s)) ? s : NULL;
}

/* text or NULL for a possibly non-UTF-8 engine string */
static Datum
text_or_null(const char *s, bool *isnull)
{
	if (s == NULL || !OnnxUtf8Valid(s, strlen(s)))
	{
		*isnull = true;
		return (Datum) 0;
	}
	*isnull = false;
	return CStringGetTextDatum(s);
}

/* ---- getting the model ---- */

static ox_model *
model_from_args(FunctionCallInfo fcinfo, bool by_name, OnnxGuard **guard)
{
	*guard = OnnxGuardCreate(CurrentMemoryContext);
	if (by_name)
	{
		char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
		OnnxModelKey key;
		bytea	   *bytes = OnnxCatalogFetch(name, &key);

		(*guard)->model = OnnxParseModel(VARDATA_ANY(bytes), VARSIZE_ANY_EXHDR(bytes), name, 0);
		pfree(bytes);
	}
	else
	{
		bytea	   *bytes = PG_GETARG_BYTEA_PP(0);

		OnnxCheckModelSize(VARSIZE_ANY_EXHDR(bytes), NULL, NULL);
		(*guard)->model = OnnxParseModel(VARDATA_ANY(bytes), VARSIZE_ANY_EXHDR(bytes), NULL,
										 OnnxMaxModelBytes());
	}
	return (*guard)->model;
}

/* ---- onnx_model_info ---- */

static int64
tensor_bytes(const ox_tensor *t)
{
	int64		n = ox_tensor_numel(t);

	if (n < 0)
		return 0;
	if (t->dtype == OX_STRING)
	{
		int64		total = 0;

		for (int64 i = 0; i < n && t->data; i++)
			total += ((const ox_string *) t->data)[i].len;
		return total;
	}
	return n * (int64) ox_dtype_size(t->dtype);
}

static Datum
model_info(FunctionCallInfo fcinfo, bool by_name)
{
	OnnxGuard  *guard;
	ox_model   *m = model_from_args(fcinfo, by_name, &guard);
	ox_graph   *g = m->graph;
	TupleDesc	tupdesc;
	Datum		values[13];
	bool		nulls[13] = {0};
	int			ninit = 0;
	int64		initbytes = 0;
	JsonbParseState *state = NULL;
	char	  **ops;
	int			nops = 0;
	HeapTuple	tuple;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);

	for (int i = 0; i < g->n_values; i++)
		if (g->values[i].init && !g->values[i].is_outer)
		{
			ninit++;
			initbytes += tensor_bytes(g->values[i].init);
		}

	/* operator histogram, keys "op" or "domain.op", sorted by jsonb */
	ops = palloc(sizeof(char *) * Max(g->n_nodes, 1));
	for (int i = 0; i < g->n_nodes; i++)
	{
		const ox_node *n = &g->nodes[i];

		if (n->dead)
			continue;
		if (n->domain == NULL || n->domain[0] == '\0')
			ops[nops++] = pstrdup(n->op_type);
		else
			ops[nops++] = psprintf("%s.%s", n->domain, n->op_type);
	}
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	for (int i = 0; i < nops; i++)
	{
		int			count = 0;
		bool		first = true;

		for (int j = 0; j < nops; j++)
			if (strcmp(ops[i], ops[j]) == 0)
			{
				if (j < i)
					first = false;
				count++;
			}
		if (!first)
			continue;
		jb_key(&state, ops[i]);
		jb_int(&state, count, false);
	}

	values[0] = Int64GetDatum(m->ir_version);
	values[1] = JsonbPGetDatum(OnnxOpsetsJsonb(m));
	values[2] = text_or_null(m->producer_name, &nulls[2]);
	values[3] = text_or_null(m->producer_version, &nulls[3]);
	values[4] = text_or_null(m->domain, &nulls[4]);
	values[5] = Int64GetDatum(m->model_version);
	values[6] = text_or_null(g->name, &nulls[6]);
	values[7] = text_or_null(m->doc && m->doc[0] ? m->doc : NULL, &nulls[7]);
	values[8] = Int32GetDatum(nops);
	values[9] = Int32GetDatum(ninit);
	values[10] = Int64GetDatum(initbytes);
	values[11] = JsonbPGetDatum(jb_finish(&state, WJB_END_OBJECT));
	values[12] = JsonbPGetDatum(OnnxMetadataJsonb(m));

	tuple = heap_form_tuple(tupdesc, values, nulls);
	OnnxGuardRelease(guard);
	return HeapTupleGetDatum(tuple);
}

Datum
onnx_model_info(PG_FUNCTION_ARGS)
{
	return model_info(fcinfo, true);
}

Datum
onnx_model_info_bytea(PG_FUNCTION_ARGS)
{
	return model_info(fcinfo, false);
}

/* ---- onnx_model_inputs / onnx_model_outputs ---- */

static const char *
type_kind_name(ox_type_kind k)
{
	switch (k)
	{
		case OX_TYPE_TENSOR:
			return "tensor";
		case OX_TYPE_SEQUENCE:
			return "sequence";
		case OX_TYPE_MAP:
			return "map";
		case OX_TYPE_OPTIONAL:
			return "optional";
		case OX_TYPE_SPARSE_TENSOR:
			return "sparse_tensor";
		case OX_TYPE_UNKNOWN:
			break;
	}
	return "unknown";
}

static void
put_value_row(ReturnSetInfo *rsinfo, int ordinal, const ox_value_def *v)
{
	Datum		values[6];
	bool		nulls[6] = {0};
	char		buf[1024];
	const ox_type *t = &v->type;

	values[0] = Int32GetDatum(ordinal);
	values[1] = text_or_null(v->name, &nulls[1]);
	values[2] = CStringGetTextDatum(type_kind_name(t->kind));
	if (t->kind == OX_TYPE_TENSOR || t->kind == OX_TYPE_SPARSE_TENSOR)
	{
		values[3] = CStringGetTextDatum(ox_dtype_name(t->elem));
		if (t->rank >= 0)
		{
			Datum	   *dims = palloc(sizeof(Datum) * Max(t->rank, 1));

			for (int i = 0; i < t->rank; i++)
			{
				if (t->dims[i].param && t->dims[i].param[0])
					dims[i] = CStringGetTextDatum(t->dims[i].param);
				else if (t->dims[i].value >= 0)
					dims[i] = CStringGetTextDatum(psprintf(INT64_FORMAT,
														   (int64) t->dims[i].value));
				else
					dims[i] = CStringGetTextDatum("?");
			}
			values[4] = PointerGetDatum(construct_array(dims, t->rank, TEXTOID, -1,
														false, TYPALIGN_INT));
		}
		else
			nulls[4] = true;
	}
	else
	{
		nulls[3] = true;
		nulls[4] = true;
	}
	values[5] = CStringGetTextDatum(ox_type_str(t, buf, sizeof(buf)));
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

static Datum
model_values(FunctionCallInfo fcinfo, bool by_name, bool outputs)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OnnxGuard  *guard;
	ox_model   *m;
	ox_graph   *g;
	int			ordinal = 0;

	InitMaterializedSRF(fcinfo, 0);
	m = model_from_args(fcinfo, by_name, &guard);
	g = m->graph;
	if (outputs)
	{
		for (int i = 0; i < g->n_outputs; i++)
			put_value_row(rsinfo, ++ordinal, &g->values[g->outputs[i]]);
	}
	else
	{
		/* the inputs a caller feeds: initializers listed as inputs are not */
		for (int i = 0; i < g->n_inputs; i++)
		{
			const ox_value_def *v = &g->values[g->inputs[i]];

			if (v->init)
				continue;
			put_value_row(rsinfo, ++ordinal, v);
		}
	}
	OnnxGuardRelease(guard);
	return (Datum) 0;
}

Datum
onnx_model_inputs(PG_FUNCTION_ARGS)
{
	return model_values(fcinfo, true, false);
}

Datum
onnx_model_inputs_bytea(PG_FUNCTION_ARGS)
{
	return model_values(fcinfo, false, false);
}

Datum
onnx_model_outputs(PG_FUNCTION_ARGS)
{
	return model_values(fcinfo, true, true);
}

Datum
onnx_model_outputs_bytea(PG_FUNCTION_ARGS)
{
	return model_values(fcinfo, false, true);
}

/* ---- onnx_model_nodes ---- */

static void
jb_tensor_summary(JsonbParseState **state, const ox_tensor *t, bool elem)
{
	int64		n;

	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	jb_key(state, "dtype");
	jb_str(state, t ? ox_dtype_name(t->dtype) : "undefined");
	jb_key(state, "dims");
	pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
	for (int i = 0; t && i < t->rank; i++)
		jb_int(state, t->dims[i], true);
	pushJsonbValue(state, WJB_END_ARRAY, NULL);
	/* small numeric constants are worth seeing */
	n = t ? ox_tensor_numel(t) : 0;
	if (t && t->data && n >= 0 && n <= 16 && t->dtype != OX_STRING &&
		ox_dtype_size(t->dtype) > 0 && t->dtype != OX_COMPLEX64 && t->dtype != OX_COMPLEX128)
	{
		jb_key(state, "values");
		pushJsonbValue(state, WJB_BEGIN_ARRAY, NULL);
		for (int64 i = 0; i < n; i++)
		{
			if (ox_dtype_is_float(t->dtype))
				jb_float(state, (float) ox_tensor_get_double(t, i), true);
			else
				jb_int(state, ox_tensor_get_int64(t, i), true);
		}
		pushJsonbValue(state, WJB_END_ARRAY, NULL);
	}
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

static void
jb_graph_summary(JsonbParseState **state, const ox_graph *g)
{
	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	jb_key(state, "graph");
	if (g && g->name && OnnxUtf8Valid(g->name, strlen(g->name)))
		jb_str(state, g->name);
	else
		jb_str(state, "");
	jb_key(state, "nodes");
	jb_int(state, g ? g->n_nodes : 0, false);
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

/*
 * What a node's attributes cost as JSON, checked before they are built: a
 * tree ensemble holds a list of a value per tree node in each of a dozen
 * attributes, and pushJsonbValue's tree takes about 72 bytes a number (a
 * 10 MB random forest's node: 180 MB), so a forest that loads within
 * onnx.max_load_memory could take a backend out of memory here.  The same
 * limit bounds it (inspecting a model is part of reading it).
 */
static void
check_attributes_size(const ox_node *n, int ordinal)
{
	OnnxJsonbSize size = {0, 0};
	Size		limit = OnnxMaxLoadBytes();

	for (int i = 0; i < n->n_attrs; i++)
	{
		const ox_attr *a = &n->attrs[i];
		uint64		chars = 0;

		switch (a->type)
		{
			case OX_ATTR_FLOATS:
			case OX_ATTR_INTS:
				OnnxJsonbSizeAddList(&size, (uint64) Max(a->n, 0), 0, true);
				break;
			case OX_ATTR_STRINGS:
				for (int j = 0; j < a->n; j++)
					chars += a->string_lens ? a->string_lens[j] : strlen(a->strings[j] ? a->strings[j] : "");
				/* (hex for bytes that are not UTF-8: twice the length) */
				OnnxJsonbSizeAddList(&size, (uint64) Max(a->n, 0), 2 * chars, false);
				break;
			case OX_ATTR_TENSORS:
			case OX_ATTR_GRAPHS:
				/* a summary each: an object of a few small members */
				OnnxJsonbSizeAddList(&size, 8 * (uint64) Max(a->n, 0), 0, true);
				break;
			default:
				OnnxJsonbSizeAddList(&size, 1, a->type == OX_ATTR_STRING ? 2 * a->s_len : 0, false);
				break;
		}
	}
	if (!OnnxJsonbSizeFits(&size) || (limit != 0 && size.build_bytes > limit))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the attributes of node %d (%s) are too large to return as JSON",
						ordinal, n->op_type ? n->op_type : "?"),
				 !OnnxJsonbSizeFits(&size) ?
				 errdetail("They need more than the %d bytes a jsonb value holds.", JENTRY_OFFLENMASK) :
				 errdetail("Building their JSON would take about %.1f MB; onnx.max_load_memory allows %d MB.",
						   (double) size.build_bytes / (1024.0 * 1024.0), onnx_max_load_memory),
				 errhint("onnx_model_info and onnx_model_dot describe the model without them.")));
}

static Jsonb *
node_attributes(const ox_node *n)
{
	JsonbParseState *state = NULL;
	char		buf[1024];

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	for (int i = 0; i < n->n_attrs; i++)
	{
		const ox_attr *a = &n->attrs[i];

		if (!a->name || !OnnxUtf8Valid(a->name, strlen(a->name)))
			continue;
		jb_key(&state, a->name);
		switch (a->type)
		{
			case OX_ATTR_FLOAT:
				jb_float(&state, a->f, false);
				break;
			case OX_ATTR_INT:
				jb_int(&state, a->i, false);
				break;
			case OX_ATTR_STRING:
				jb_elem_str(&state, a->s ? a->s : "", a->s ? a->s_len : 0, false);
				break;
			case OX_ATTR_TENSOR:
				jb_tensor_summary(&state, a->t, false);
				break;
			case OX_ATTR_GRAPH:
				jb_graph_summary(&state, a->g);
				break;
			case OX_ATTR_FLOATS:
				pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
				for (int j = 0; j < a->n; j++)
					jb_float(&state, a->floats[j], true);
				pushJsonbValue(&state, WJB_END_ARRAY, NULL);
				break;
			case OX_ATTR_INTS:
				pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
				for (int j = 0; j < a->n; j++)
					jb_int(&state, a->ints[j], true);
				pushJsonbValue(&state, WJB_END_ARRAY, NULL);
				break;
			case OX_ATTR_STRINGS:
				pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
				for (int j = 0; j < a->n; j++)
				{
					const char *s = a->strings[j] ? a->strings[j] : "";
					size_t		len = a->string_lens ? a->string_lens[j] : strlen(s);

					jb_elem_str(&state, s, len, true);
				}
				pushJsonbValue(&state, WJB_END_ARRAY, NULL);
				break;
			case OX_ATTR_TENSORS:
				pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
				for (int j = 0; j < a->n; j++)
					jb_tensor_summary(&state, a->tensors[j], true);
				pushJsonbValue(&state, WJB_END_ARRAY, NULL);
				break;
			case OX_ATTR_GRAPHS:
				pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
				for (int j = 0; j < a->n; j++)
					jb_graph_summary(&state, a->graphs[j]);
				pushJsonbValue(&state, WJB_END_ARRAY, NULL);
				break;
			case OX_ATTR_TYPE_PROTO:
				jb_str(&state, ox_type_str(a->tp, buf, sizeof(buf)));
				break;
			default:
				jb_str(&state, ox_attr_type_name(a->type));
				break;
		}
	}
	return jb_finish(&state, WJB_END_OBJECT);
}

static Datum
value_names(const ox_graph *g, const int *ids, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));

	for (int i = 0; i < n; i++)
	{
		const char *name = ids[i] >= 0 ? g->values[ids[i]].name : "";

		if (name == NULL || !OnnxUtf8Valid(name, strlen(name)))
			name = "";
		d[i] = CStringGetTextDatum(name);
	}
	return PointerGetDatum(construct_array(d, n, TEXTOID, -1, false, TYPALIGN_INT));
}

static Datum
model_nodes(FunctionCallInfo fcinfo, bool by_name)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OnnxGuard  *guard;
	ox_model   *m;
	ox_graph   *g;
	int			ordinal = 0;
	MemoryContext row_context,
				old;

	InitMaterializedSRF(fcinfo, 0);
	m = model_from_args(fcinfo, by_name, &guard);
	g = m->graph;
	/* a row's JSON tree, freed once the row is in the tuplestore (which copies it) */
	row_context = AllocSetContextCreate(CurrentMemoryContext, "onnx_model_nodes row", ALLOCSET_DEFAULT_SIZES);
	for (int i = 0; i < g->n_nodes; i++)
	{
		const ox_node *n = &g->nodes[i];
		Datum		values[7];
		bool		nulls[7] = {0};

		if (n->dead)
			continue;
		check_attributes_size(n, ordinal + 1);
		old = MemoryContextSwitchTo(row_context);
		values[0] = Int32GetDatum(++ordinal);
		values[1] = text_or_null(n->name, &nulls[1]);
		values[2] = text_or_null(n->op_type, &nulls[2]);
		values[3] = CStringGetTextDatum(OnnxDomainName(n->domain));
		values[4] = value_names(g, n->inputs, n->n_inputs);
		values[5] = value_names(g, n->outputs, n->n_outputs);
		values[6] = JsonbPGetDatum(node_attributes(n));
		MemoryContextSwitchTo(old);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		MemoryContextReset(row_context);
	}
	MemoryContextDelete(row_context);
	OnnxGuardRelease(guard);
	return (Datum) 0;
}

Datum
onnx_model_nodes(PG_FUNCTION_ARGS)
{
	return model_nodes(fcinfo, true);
}

Datum
onnx_model_nodes_bytea(PG_FUNCTION_ARGS)
{
	return model_nodes(fcinfo, false);
}
