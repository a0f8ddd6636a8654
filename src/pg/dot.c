/*
 * dot.c
 *	  onnx_model_dot: a model's graph as Graphviz DOT text.
 *
 *	  psql -Atc "SELECT onnx_model_dot('iris_rf')" | dot -Tsvg > iris_rf.svg
 *
 * Graph inputs and outputs are ellipses, operators boxes, and weights
 * (initializers) are listed inside the box of the node that reads them
 * rather than drawn as nodes of their own.  Edges carry the value's name and
 * its type.  Nodes an optimizer pass created by fusing others are drawn in
 * orange with what they replaced ("Conv+BatchNormalization").
 *
 * optimized => false draws the graph as stored; true draws what a session
 * runs after the optimizer passes (at onnx.graph_optimization_level).
 *
 * Shapes: the declared (value_info) and inferred types of values, with
 * symbolic dimensions by name.  Where those leave a dimension unknown, the
 * shapes of a run on zeros (symbolic dimensions set to 1) fill it in; the
 * run is skipped, silently, when an input is not a numeric tensor of known
 * rank or the run fails.  A session is built for the drawing and freed
 * right after it; the backend's session cache is not touched.
 */
#include "onnx_pg.h"

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"

PG_FUNCTION_INFO_V1(onnx_model_dot);

/* weights listed in a node's box before "+ n more" */
#define DOT_MAX_WEIGHTS 4
/* no shape run for inputs larger than this many elements */
#define DOT_MAX_RUN_ELEMENTS ((int64) 16 * 1024 * 1024)

typedef struct RunShape
{
	bool		known;
	ox_dtype	dtype;
	int			rank;
	int64		dims[OX_MAX_RANK];
	bool		varies[OX_MAX_RANK];	/* differs between the two runs */
} RunShape;

/* the name shown for dimensions that follow the symbolic input dimensions */
static const char *run_symbol = "?";

/* append s as the inside of a DOT quoted string */
static void
append_escaped(StringInfo buf, const char *s)
{
	bool		valid = OnnxUtf8Valid(s, strlen(s));

	for (const char *p = s; *p; p++)
	{
		unsigned char c = (unsigned char) *p;

		if (c == '"' || c == '\\')
		{
			appendStringInfoChar(buf, '\\');
			appendStringInfoChar(buf, c);
		}
		else if (c == '\n' || c == '\r')
			appendStringInfoString(buf, "\\n");
		else if (c < 0x20 || (!valid && c >= 0x80))
			appendStringInfoChar(buf, '?');
		else
			appendStringInfoChar(buf, c);
	}
}

static void
append_dim(StringInfo buf, const ox_dim *d, const RunShape *rs, int i)
{
	if (d && d->value >= 0)
		appendStringInfo(buf, INT64_FORMAT, (int64) d->value);
	else if (d && d->param && d->param[0])
		append_escaped(buf, d->param);
	else if (rs && rs->known && i < rs->rank && rs->varies[i])
		append_escaped(buf, run_symbol);
	else if (rs && rs->known && i < rs->rank)
		appendStringInfo(buf, INT64_FORMAT, rs->dims[i]);
	else
		appendStringInfoChar(buf, '?');
}

static void
append_run_dims(StringInfo buf, const RunShape *rs)
{
	appendStringInfoString(buf, " [");
	for (int i = 0; i < rs->rank; i++)
	{
		if (i)
			appendStringInfoString(buf, ", ");
		append_dim(buf, NULL, rs, i);
	}
	appendStringInfoChar(buf, ']');
}

/* "float [N, 4]": declared/inferred type, unknown dims filled from the run */
static void
append_type(StringInfo buf, const ox_type *t, const RunShape *rs)
{
	switch (t->kind)
	{
		case OX_TYPE_TENSOR:
			appendStringInfoString(buf, ox_dtype_name(t->elem));
			if (t->rank >= 0 && !(rs && rs->known && rs->rank != t->rank))
			{
				appendStringInfoString(buf, " [");
				for (int i = 0; i < t->rank; i++)
				{
					if (i)
						appendStringInfoString(buf, ", ");
					append_dim(buf, &t->dims[i], rs, i);
				}
				appendStringInfoChar(buf, ']');
			}
			else if (rs && rs->known)
				append_run_dims(buf, rs);
			break;
		case OX_TYPE_SEQUENCE:
			appendStringInfoString(buf, "seq(");
			if (t->inner)
				append_type(buf, t->inner, NULL);
			appendStringInfoChar(buf, ')');
			break;
		case OX_TYPE_MAP:
			appendStringInfo(buf, "map(%s, ", ox_dtype_name(t->map_key));
			if (t->inner)
				append_type(buf, t->inner, NULL);
			appendStringInfoChar(buf, ')');
			break;
		case OX_TYPE_OPTIONAL:
			appendStringInfoString(buf, "optional(");
			if (t->inner)
				append_type(buf, t->inner, NULL);
			appendStringInfoChar(buf, ')');
			break;
		default:
			if (rs && rs->known)
			{
				appendStringInfoString(buf, ox_dtype_name(rs->dtype));
				append_run_dims(buf, rs);
			}
			else
				appendStringInfoChar(buf, '?');
			break;
	}
}

static void
append_tensor_shape(StringInfo buf, const ox_tensor *t)
{
	appendStringInfo(buf, "%s [", ox_dtype_name(t->dtype));
	for (int i = 0; i < t->rank; i++)
		appendStringInfo(buf, "%s" INT64_FORMAT, i ? ", " : "", (int64) t->dims[i]);
	appendStringInfoChar(buf, ']');
}

/*
 * Run the session once on zeros, with symbolic input dimensions set to fill,
 * keeping every intermediate value, and record their shapes.  Returns NULL
 * when no run was possible.
 */
static RunShape *
shapes_from_run(ox_session *s, int64 fill)
{
	const ox_graph *g = ox_session_model(s)->graph;
	int			n_in = ox_session_input_count(s);
	ox_value   *inputs = palloc0(sizeof(ox_value) * Max(n_in, 1));
	int		   *targets = palloc(sizeof(int) * Max(g->n_values, 1));
	int			n_targets = 0;
	RunShape   *shapes;
	ox_status	st;

	for (int i = 0; i < n_in; i++)
	{
		const ox_value_def *def = ox_session_input(s, i);
		const ox_type *t = &def->type;
		ox_tensor  *x = &inputs[i].tensor;
		int64		numel = 1;

		if (t->kind != OX_TYPE_TENSOR || t->rank < 0 || t->elem == OX_STRING ||
			ox_dtype_size(t->elem) == 0)
			return NULL;
		inputs[i].kind = OX_VALUE_TENSOR;
		x->dtype = t->elem;
		x->rank = t->rank;
		for (int d = 0; d < t->rank; d++)
		{
			x->dims[d] = t->dims[d].value >= 0 ? t->dims[d].value : fill;
			numel *= Max(x->dims[d], 1);
			if (numel > DOT_MAX_RUN_ELEMENTS)
				return NULL;
		}
		x->data = palloc0(Max(numel, 1) * ox_dtype_size(t->elem));
		x->owns = false;
		x->capacity = 0;
	}
	for (int v = 0; v < g->n_values; v++)
		if (g->values[v].producer >= 0)
			targets[n_targets++] = v;
	if (n_targets == 0)
		return NULL;

	ox_status_clear(&st);
	if (ox_session_run_targets(s, inputs, targets, n_targets, &st) != OX_OK)
	{
		if (st.code == OX_CANCELED)
			OnnxServiceCancel(NULL);
		return NULL;
	}
	shapes = palloc0(sizeof(RunShape) * Max(g->n_values, 1));
	for (int k = 0; k < n_targets; k++)
	{
		const ox_value *val = ox_session_value(s, targets[k]);
		RunShape   *rs = &shapes[targets[k]];

		if (val == NULL || val->kind != OX_VALUE_TENSOR || val->tensor.rank < 0 ||
			val->tensor.rank > OX_MAX_RANK)
			continue;
		rs->known = true;
		rs->dtype = val->tensor.dtype;
		rs->rank = val->tensor.rank;
		memcpy(rs->dims, val->tensor.dims, sizeof(int64) * rs->rank);
	}
	return shapes;
}

/*
 * Shapes of every value from two runs, symbolic input dimensions at 1 and
 * at 2: a dimension that differs follows them and is shown by their name.
 */
static RunShape *
run_shapes(ox_session *s)
{
	const ox_graph *g = ox_session_model(s)->graph;
	const char *sym = NULL;
	bool		ambiguous = false;
	RunShape   *one;
	RunShape   *two;

	for (int i = 0; i < ox_session_input_count(s); i++)
	{
		const ox_type *t = &ox_session_input(s, i)->type;

		for (int d = 0; t->kind == OX_TYPE_TENSOR && d < t->rank; d++)
		{
			const char *p = t->dims[d].param;

			if (t->dims[d].value >= 0)
				continue;
			if (p == NULL || p[0] == '\0' || (sym && strcmp(sym, p) != 0))
				ambiguous = true;
			else
				sym = p;
		}
	}
	run_symbol = (sym && !ambiguous) ? sym : "?";

	one = shapes_from_run(s, 1);
	if (one == NULL)
		return NULL;
	two = shapes_from_run(s, 2);
	if (two == NULL)
		return one;
	for (int v = 0; v < g->n_values; v++)
	{
		if (!one[v].known || !two[v].known || one[v].rank != two[v].rank)
			continue;
		for (int d = 0; d < one[v].rank; d++)
			one[v].varies[d] = one[v].dims[d] != two[v].dims[d];
	}
	return one;
}

static void
edge_label(StringInfo buf, const ox_graph *g, int v, const RunShape *shapes)
{
	const ox_value_def *d = &g->values[v];

	appendStringInfoString(buf, " [label=\"");
	append_escaped(buf, d->name);
	appendStringInfoString(buf, "\\n");
	append_type(buf, &d->type, shapes ? &shapes[v] : NULL);
	appendStringInfoString(buf, "\"];\n");
}

static char *
graph_dot(const ox_graph *g, const char *title, const RunShape *shapes)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "digraph \"");
	append_escaped(&buf, title);
	appendStringInfoString(&buf, "\" {\n"
						   "  rankdir=TB;\n"
						   "  graph [fontname=\"Helvetica\", fontsize=12, labelloc=t, label=\"");
	append_escaped(&buf, title);
	appendStringInfoString(&buf, "\"];\n"
						   "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#e8eef7\", "
						   "fontname=\"Helvetica\", fontsize=10];\n"
						   "  edge [fontname=\"Helvetica\", fontsize=9, color=\"#555555\"];\n");

	/* graph inputs the caller feeds (not initializers) */
	for (int i = 0; i < g->n_inputs; i++)
	{
		int			v = g->inputs[i];
		const ox_value_def *d = &g->values[v];

		if (d->init)
			continue;
		appendStringInfo(&buf, "  in%d [shape=ellipse, fillcolor=\"#d8f0d8\", label=\"", v);
		append_escaped(&buf, d->name);
		appendStringInfoString(&buf, "\\n");
		append_type(&buf, &d->type, NULL);
		appendStringInfoString(&buf, "\"];\n");
	}

	/* operators, with the weights they read */
	for (int k = 0; k < g->n_nodes; k++)
	{
		const ox_node *n = &g->nodes[k];
		int			weights = 0;

		if (n->dead)
			continue;
		appendStringInfo(&buf, "  n%d [", k);
		if (n->fused_from)
			appendStringInfoString(&buf, "fillcolor=\"#ffd8a8\", penwidth=2, ");
		appendStringInfoString(&buf, "label=\"");
		if (n->domain && n->domain[0])
		{
			append_escaped(&buf, n->domain);
			appendStringInfoChar(&buf, '.');
		}
		append_escaped(&buf, n->op_type);
		if (n->name && n->name[0] && strcmp(n->name, n->op_type) != 0)
		{
			appendStringInfoString(&buf, "\\n");
			append_escaped(&buf, n->name);
		}
		if (n->fused_from)
		{
			const char *act = ox_attr_string(n, "activation", NULL);

			appendStringInfoString(&buf, "\\nfused: ");
			append_escaped(&buf, n->fused_from);
			if (act)
			{
				appendStringInfoString(&buf, " (");
				append_escaped(&buf, act);
				appendStringInfoChar(&buf, ')');
			}
		}
		for (int i = 0; i < n->n_inputs; i++)
		{
			int			v = n->inputs[i];

			if (v < 0 || g->values[v].init == NULL || g->values[v].producer >= 0)
				continue;
			if (weights++ >= DOT_MAX_WEIGHTS)
				continue;
			appendStringInfoString(&buf, "\\n");
			append_escaped(&buf, g->values[v].name);
			appendStringInfoString(&buf, ": ");
			append_tensor_shape(&buf, g->values[v].init);
		}
		if (weights > DOT_MAX_WEIGHTS)
			appendStringInfo(&buf, "\\n+ %d more", weights - DOT_MAX_WEIGHTS);
		for (int a = 0; a < n->n_attrs; a++)
		{
			if (n->attrs[a].type == OX_ATTR_GRAPH)
			{
				appendStringInfoString(&buf, "\\nsubgraph ");
				append_escaped(&buf, n->attrs[a].name);
				if (n->attrs[a].g)
					appendStringInfo(&buf, ": %d nodes", n->attrs[a].g->n_nodes);
			}
		}
		appendStringInfoString(&buf, "\"];\n");
	}

	/* graph outputs */
	for (int i = 0; i < g->n_outputs; i++)
	{
		int			v = g->outputs[i];
		const ox_value_def *d = &g->values[v];

		appendStringInfo(&buf, "  out%d_%d [shape=ellipse, fillcolor=\"#f4d8d8\", label=\"", i, v);
		append_escaped(&buf, d->name);
		appendStringInfoString(&buf, "\"];\n");
	}

	/* edges: value from its producer (or graph input) to each consumer */
	for (int k = 0; k < g->n_nodes; k++)
	{
		const ox_node *n = &g->nodes[k];

		if (n->dead)
			continue;
		for (int i = 0; i < n->n_inputs; i++)
		{
			int			v = n->inputs[i];
			const ox_value_def *d;

			if (v < 0)
				continue;
			d = &g->values[v];
			if (d->producer >= 0)
				appendStringInfo(&buf, "  n%d -> n%d", d->producer, k);
			else if (d->is_input && !d->init)
				appendStringInfo(&buf, "  in%d -> n%d", v, k);
			else
				continue;		/* weights and outer-scope values */
			edge_label(&buf, g, v, shapes);
		}
	}
	for (int i = 0; i < g->n_outputs; i++)
	{
		int			v = g->outputs[i];
		const ox_value_def *d = &g->values[v];

		if (d->producer >= 0)
			appendStringInfo(&buf, "  n%d -> out%d_%d", d->producer, i, v);
		else if (d->is_input && !d->init)
			appendStringInfo(&buf, "  in%d -> out%d_%d", v, i, v);
		else
			continue;
		edge_label(&buf, g, v, shapes);
	}
	appendStringInfoString(&buf, "}\n");
	return buf.data;
}

Datum
onnx_model_dot(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	bool		optimized = PG_GETARG_BOOL(1);
	OnnxGuard  *guard = OnnxGuardCreate(CurrentMemoryContext);
	OnnxModelKey key;
	bytea	   *bytes;
	ox_session_options opts;
	char	   *effective;
	ox_status	st;
	RunShape   *shapes;
	char	   *title;
	char	   *dot;

	bytes = OnnxCatalogFetch(name, &key);
	guard->model = OnnxParseModel(VARDATA_ANY(bytes), VARSIZE_ANY_EXHDR(bytes), name, 0);
	pfree(bytes);

	/* a private session: the stored graph as is, or as sessions optimize it */
	OnnxSessionOptions(&opts, key.providers, &effective);
	opts.intra_op_threads = 1;
	if (!optimized)
		opts.opt_level = OX_OPT_DISABLE;
	ox_status_clear(&st);
	guard->session = ox_session_create(guard->model, &opts, &st);
	guard->model = NULL;		/* the session call owns it now */
	if (guard->session == NULL)
	{
		if (st.code == OX_CANCELED)
			OnnxServiceCancel(name);
		OnnxReportStatus(&st, ONNX_PHASE_SESSION, name);
	}

	shapes = run_shapes(guard->session);
	title = optimized ? psprintf("%s (optimized: %s)", name,
								 GetConfigOption("onnx.graph_optimization_level", false, false))
		: pstrdup(name);
	dot = graph_dot(ox_session_model(guard->session)->graph, title, shapes);
	OnnxGuardRelease(guard);
	PG_RETURN_TEXT_P(cstring_to_text(dot));
}
