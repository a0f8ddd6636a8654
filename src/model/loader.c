/*
 * loader.c
 *	  ONNX ModelProto -> IR: the model, its graph and subgraphs, checked
 *	  for the structural faults a hostile or broken file can carry.
 *
 * Order of work for one graph: declare inputs, initializers and every node
 * output (so that nodes may appear in any order), then resolve node inputs
 * and attributes (subgraphs resolve names through the scope chain), then
 * outputs and value_info types, and finally ox_graph_analyze sorts the
 * nodes and rejects cycles and undefined inputs.
 */
#include "model/loader.h"
#include "model/schema_check.h"
#include "model/shape_infer.h"
#include "runtime/onnx_engine.h"
#include "util/strmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct scope scope;
struct scope
{
	ox_graph   *graph;
	ox_strmap	names;			/* value name -> id in graph */
	scope	   *parent;
	ox_node    *owner;			/* node in parent graph whose attribute this is */
	int			depth;
};

static ox_code build_graph(ox_model *m, scope *sc, const Onnx__GraphProto *gp, ox_status *st);

static const char *
norm_domain(const char *d)
{
	if (!d || strcmp(d, "ai.onnx") == 0)
		return "";
	return d;
}

/* Look a name up in this scope; if absent, in enclosing ones, creating the
 * outer-value link in every scope in between.  -1 if nowhere. */
static int
resolve_name(scope *sc, const char *name, ox_status *st)
{
	int			id = ox_strmap_get(&sc->names, name);
	int			pid;
	ox_value_def *v;

	if (id >= 0 || !sc->parent)
		return id;
	pid = resolve_name(sc->parent, name, st);
	if (pid < 0)
		return -1;
	/* record the use on the owning node of the parent graph */
	if (sc->owner)
	{
		ox_node    *o = sc->owner;
		bool		seen = false;

		for (int i = 0; i < o->n_implicit; i++)
			if (o->implicit_inputs[i] == pid)
				seen = true;
		if (!seen)
		{
			int		   *arr = realloc(o->implicit_inputs, sizeof(int) * (o->n_implicit + 1));

			if (!arr)
			{
				ox_fail(st, OX_OUT_OF_MEMORY, "could not record an outer-scope input");
				return -2;
			}
			o->implicit_inputs = arr;
			arr[o->n_implicit++] = pid;
		}
	}
	id = ox_graph_add_value(sc->graph, name, st);
	if (id < 0)
		return -2;
	v = &sc->graph->values[id];
	v->is_outer = true;
	v->type = sc->parent->graph->values[pid].type;
	if (!ox_strmap_put(&sc->names, v->name, id))
	{
		ox_fail(st, OX_OUT_OF_MEMORY, "could not grow the name table");
		return -2;
	}
	{
		int		   *arr = realloc(sc->graph->outer, sizeof(int) * (sc->graph->n_outer + 1));

		if (!arr)
		{
			ox_fail(st, OX_OUT_OF_MEMORY, "could not record an outer-scope value");
			return -2;
		}
		sc->graph->outer = arr;
		arr[sc->graph->n_outer++] = id;
	}
	return id;
}

/*
 * No attribute twice.  Compared pairwise for the few a node has; through a
 * hash above that, since a hostile file can give one node a million (50,000
 * took 4.5 s pairwise, and the load cannot be canceled).
 */
static ox_code
check_attr_names(const ox_node *node, const ox_attr *attrs, size_t n, ox_status *st)
{
	ox_strmap	seen;

	if (n <= 32)
	{
		for (size_t a = 1; a < n; a++)
			for (size_t b = 0; b < a; b++)
				if (strcmp(attrs[a].name, attrs[b].name) == 0)
					return ox_fail(st, OX_INVALID_MODEL, "node \"%s\" has attribute \"%s\" twice",
								   node->name, attrs[a].name);
		return OX_OK;
	}
	if (!ox_strmap_init(&seen, n))
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate attributes");
	for (size_t a = 0; a < n; a++)
	{
		if (ox_strmap_get(&seen, attrs[a].name) >= 0)
		{
			ox_strmap_free(&seen);
			return ox_fail(st, OX_INVALID_MODEL, "node \"%s\" has attribute \"%s\" twice",
						   node->name, attrs[a].name);
		}
		if (!ox_strmap_put(&seen, attrs[a].name, 0))
		{
			ox_strmap_free(&seen);
			return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate attributes");
		}
	}
	ox_strmap_free(&seen);
	return OX_OK;
}

static ox_code
convert_attr(ox_model *m, scope *sc, ox_node *node, ox_attr *a, const Onnx__AttributeProto *ap,
			 ox_status *st)
{
	ox_arena   *ar = &m->arena;
	ox_attr_type t;

	a->name = ox_arena_strdup(ar, ap->name ? ap->name : "");
	if (!a->name)
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not copy an attribute");
	if (ap->ref_attr_name && *ap->ref_attr_name)
		return ox_fail(st, OX_INVALID_MODEL,
					   "attribute \"%s\" of node \"%s\" refers to a function attribute outside a function",
					   a->name, node->name);
	a->untyped = !ap->has_type;
	if (ap->has_type)
		t = (ox_attr_type) ap->type;
	else
	{
		/* IR version 1 files may omit the type: infer it from the field set */
		if (ap->n_floats)
			t = OX_ATTR_FLOATS;
		else if (ap->n_ints)
			t = OX_ATTR_INTS;
		else if (ap->n_strings)
			t = OX_ATTR_STRINGS;
		else if (ap->n_tensors)
			t = OX_ATTR_TENSORS;
		else if (ap->n_graphs)
			t = OX_ATTR_GRAPHS;
		else if (ap->t)
			t = OX_ATTR_TENSOR;
		else if (ap->g)
			t = OX_ATTR_GRAPH;
		else if (ap->has_s)
			t = OX_ATTR_STRING;
		else if (ap->has_i)
			t = OX_ATTR_INT;
		else
			t = OX_ATTR_FLOAT;
	}
	a->type = t;
	switch (t)
	{
		case OX_ATTR_FLOAT:
			a->f = ap->f;
			break;
		case OX_ATTR_INT:
			a->i = ap->i;
			break;
		case OX_ATTR_STRING:
			a->s = ox_arena_strndup(ar, (const char *) ap->s.data, ap->s.len);
			a->s_len = ap->s.len;
			if (!a->s)
				return ox_fail(st, OX_OUT_OF_MEMORY, "could not copy an attribute");
			break;
		case OX_ATTR_FLOATS:
			a->n = (int) ap->n_floats;
			a->floats = ox_arena_alloc(ar, sizeof(float) * (ap->n_floats + 1));
			if (!a->floats)
				return ox_fail(st, OX_OUT_OF_MEMORY, "could not copy an attribute");
			if (ap->n_floats)
				memcpy(a->floats, ap->floats, sizeof(float) * ap->n_floats);
			break;
		case OX_ATTR_INTS:
			a->n = (int) ap->n_ints;
			a->ints = ox_arena_alloc(ar, sizeof(int64_t) * (ap->n_ints + 1));
			if (!a->ints)
				return ox_fail(st, OX_OUT_OF_MEMORY, "could not copy an attribute");
			if (ap->n_ints)
				memcpy(a->ints, ap->ints, sizeof(int64_t) * ap->n_ints);
			break;
		case OX_ATTR_STRINGS:
			a->n = (int) ap->n_strings;
			a->strings = ox_arena_alloc(ar, sizeof(char *) * (ap->n_strings + 1));
			a->string_lens = ox_arena_alloc(ar, sizeof(size_t) * (ap->n_strings + 1));
			if (!a->strings || !a->string_lens)
				return ox_fail(st, OX_OUT_OF_MEMORY, "could not copy an attribute");
			for (size_t i = 0; i < ap->n_strings; i++)
			{
				a->strings[i] = ox_arena_strndup(ar, (const char *) ap->strings[i].data,
												 ap->strings[i].len);
				a->string_lens[i] = ap->strings[i].len;
				if (!a->strings[i])
					return ox_fail(st, OX_OUT_OF_MEMORY, "could not copy an attribute");
			}
			break;
		case OX_ATTR_TENSOR:
			if (!ap->t)
				return ox_fail(st, OX_INVALID_MODEL, "tensor attribute \"%s\" of node \"%s\" has no tensor",
							   a->name, node->name);
			a->t = ox_model_new_tensor(m, st);
			if (!a->t)
				return st->code;
			return ox_tensor_from_proto(a->t, ap->t, a->name, st);
		case OX_ATTR_TENSORS:
			a->n = (int) ap->n_tensors;
			a->tensors = ox_arena_alloc(ar, sizeof(ox_tensor *) * (ap->n_tensors + 1));
			if (!a->tensors)
				return ox_fail(st, OX_OUT_OF_MEMORY, "could not copy an attribute");
			for (size_t i = 0; i < ap->n_tensors; i++)
			{
				a->tensors[i] = ox_model_new_tensor(m, st);
				if (!a->tensors[i])
					return st->code;
				OX_TRY(ox_tensor_from_proto(a->tensors[i], ap->tensors[i], a->name, st));
			}
			break;
		case OX_ATTR_SPARSE_TENSOR:
			if (!ap->sparse_tensor)
				return ox_fail(st, OX_INVALID_MODEL, "sparse tensor attribute \"%s\" is empty", a->name);
			a->t = ox_model_new_tensor(m, st);
			if (!a->t)
				return st->code;
			return ox_tensor_from_sparse_proto(a->t, ap->sparse_tensor, a->name, st);
		case OX_ATTR_GRAPH:
		case OX_ATTR_GRAPHS:
			{
				size_t		ng = t == OX_ATTR_GRAPH ? (ap->g ? 1 : 0) : ap->n_graphs;

				if (ng == 0)
					return ox_fail(st, OX_INVALID_MODEL, "graph attribute \"%s\" of node \"%s\" is empty",
								   a->name, node->name);
				a->n = (int) ng;
				a->graphs = ox_arena_alloc(ar, sizeof(ox_graph *) * (ng + 1));
				if (!a->graphs)
					return ox_fail(st, OX_OUT_OF_MEMORY, "could not copy an attribute");
				for (size_t i = 0; i < ng; i++)
				{
					const Onnx__GraphProto *gp = t == OX_ATTR_GRAPH ? ap->g : ap->graphs[i];
					scope		sub;
					ox_code		rc;

					if (sc->depth + 1 > OX_MAX_GRAPH_DEPTH)
						return ox_fail(st, OX_LIMIT_EXCEEDED,
									   "subgraphs are nested more than %d levels deep", OX_MAX_GRAPH_DEPTH);
					memset(&sub, 0, sizeof(sub));
					sub.graph = ox_graph_new(m, sc->graph, st);
					if (!sub.graph)
						return st->code;
					sub.parent = sc;
					sub.owner = node;
					sub.depth = sc->depth + 1;
					rc = build_graph(m, &sub, gp, st);
					ox_strmap_free(&sub.names);
					if (rc != OX_OK)
						return rc;
					a->graphs[i] = sub.graph;
				}
				if (t == OX_ATTR_GRAPH)
					a->g = a->graphs[0];
				break;
			}
		case OX_ATTR_TYPE_PROTO:
			a->tp = ox_arena_alloc(ar, sizeof(ox_type));
			if (!a->tp)
				return ox_fail(st, OX_OUT_OF_MEMORY, "could not copy an attribute");
			return ox_type_from_proto(m, a->tp, ap->tp, 0, st);
		default:
			return ox_fail(st, OX_UNSUPPORTED, "attribute \"%s\" of node \"%s\" has unsupported type %d",
						   a->name, node->name, (int) t);
	}
	return OX_OK;
}

static ox_code
declare_value(scope *sc, const char *name, int *out_id, ox_status *st)
{
	int			id;

	if (ox_strmap_get(&sc->names, name) >= 0)
		return ox_fail(st, OX_INVALID_MODEL, "value name \"%s\" is defined more than once", name);
	id = ox_graph_add_value(sc->graph, name, st);
	if (id < 0)
		return st->code;
	if (!ox_strmap_put(&sc->names, sc->graph->values[id].name, id))
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not grow the name table");
	*out_id = id;
	return OX_OK;
}

static ox_code
build_graph(ox_model *m, scope *sc, const Onnx__GraphProto *gp, ox_status *st)
{
	ox_graph   *g = sc->graph;
	ox_arena   *ar = &m->arena;

	if (!ox_strmap_init(&sc->names, gp->n_input + gp->n_initializer + gp->n_node * 2))
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate the name table");
	g->name = ox_arena_strdup(ar, gp->name ? gp->name : "");
	g->doc = ox_arena_strdup(ar, gp->doc_string ? gp->doc_string : "");

	/* inputs */
	g->inputs = calloc(gp->n_input + 1, sizeof(int));
	if (!g->inputs)
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate graph inputs");
	for (size_t i = 0; i < gp->n_input; i++)
	{
		const Onnx__ValueInfoProto *vi = gp->input[i];
		int			id;

		if (!vi->name || !*vi->name)
			return ox_fail(st, OX_INVALID_MODEL, "graph input %zu has no name", i);
		OX_TRY(declare_value(sc, vi->name, &id, st));
		g->values[id].is_input = true;
		OX_TRY(ox_type_from_proto(m, &g->values[id].type, vi->type, 0, st));
		g->inputs[g->n_inputs++] = id;
	}

	/* initializers: defaults for inputs of the same name, else constants */
	for (size_t i = 0; i < gp->n_initializer + gp->n_sparse_initializer; i++)
	{
		bool		sparse = i >= gp->n_initializer;
		const char *name = sparse ?
			(gp->sparse_initializer[i - gp->n_initializer]->values ?
			 gp->sparse_initializer[i - gp->n_initializer]->values->name : NULL) :
			gp->initializer[i]->name;
		int			id;
		ox_tensor  *t;

		if (!name || !*name)
			return ox_fail(st, OX_INVALID_MODEL, "initializer %zu has no name", i);
		id = ox_strmap_get(&sc->names, name);
		if (id >= 0 && (g->values[id].init || !g->values[id].is_input))
			return ox_fail(st, OX_INVALID_MODEL, "initializer \"%s\" is defined more than once", name);
		if (id < 0)
			OX_TRY(declare_value(sc, name, &id, st));
		t = ox_model_new_tensor(m, st);
		if (!t)
			return st->code;
		if (sparse)
			OX_TRY(ox_tensor_from_sparse_proto(t, gp->sparse_initializer[i - gp->n_initializer], name, st));
		else
			OX_TRY(ox_tensor_take_from_proto(t, gp->initializer[i], true, name, st));
		g->values[id].init = t;
		if (g->values[id].type.kind == OX_TYPE_UNKNOWN || g->values[id].type.rank < 0)
			ox_type_from_tensor(m, &g->values[id].type, t);
	}

	/* declare node outputs first so that nodes may come in any order */
	for (size_t n = 0; n < gp->n_node; n++)
	{
		const Onnx__NodeProto *np = gp->node[n];
		ox_node    *node = ox_graph_add_node(g, st);
		char		buf[160];

		if (!node)
			return st->code;
		if (!np->op_type || !*np->op_type)
			return ox_fail(st, OX_INVALID_MODEL, "node %zu has no operator type", n);
		node->op_type = ox_arena_strdup(ar, np->op_type);
		node->domain = ox_arena_strdup(ar, norm_domain(np->domain));
		if (np->name && *np->name)
			node->name = ox_arena_strdup(ar, np->name);
		else
		{
			snprintf(buf, sizeof(buf), "%s_%zu", np->op_type, n);
			node->name = ox_arena_strdup(ar, buf);
		}
		node->doc = np->doc_string ? ox_arena_strdup(ar, np->doc_string) : NULL;
		if (!node->op_type || !node->domain || !node->name)
			return ox_fail(st, OX_OUT_OF_MEMORY, "could not copy a node");
		{
			int64_t		ver = ox_model_opset(m, node->domain);

			if (ver < 0)
				return ox_fail(st, OX_INVALID_MODEL,
							   "node \"%s\" (%s) uses domain \"%s\", which the model does not import",
							   node->name, node->op_type, node->domain[0] ? node->domain : "ai.onnx");
			node->opset = (int) ver;
		}
		node->n_outputs = (int) np->n_output;
		node->outputs = calloc(np->n_output + 1, sizeof(int));
		node->n_inputs = (int) np->n_input;
		node->inputs = calloc(np->n_input + 1, sizeof(int));
		if (!node->outputs || !node->inputs)
			return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate a node");
		for (size_t o = 0; o < np->n_output; o++)
		{
			if (!np->output[o] || !*np->output[o])
			{
				node->outputs[o] = -1;
				continue;
			}
			if (ox_strmap_get(&sc->names, np->output[o]) >= 0)
				return ox_fail(st, OX_INVALID_MODEL,
							   "value \"%s\" is defined more than once (output of node \"%s\")",
							   np->output[o], node->name);
			OX_TRY(declare_value(sc, np->output[o], &node->outputs[o], st));
		}
	}

	/* node inputs and attributes */
	for (size_t n = 0; n < gp->n_node; n++)
	{
		const Onnx__NodeProto *np = gp->node[n];

		for (size_t i = 0; i < np->n_input; i++)
		{
			int			id;

			if (!np->input[i] || !*np->input[i])
			{
				g->nodes[n].inputs[i] = -1;
				continue;
			}
			id = resolve_name(sc, np->input[i], st);
			if (id == -2)
				return st->code;
			if (id < 0)
				return ox_fail(st, OX_INVALID_MODEL,
							   "input \"%s\" of node \"%s\" (%s) is not produced by any node, graph input or initializer",
							   np->input[i], g->nodes[n].name, g->nodes[n].op_type);
			g->nodes[n].inputs[i] = id;
		}
		if (np->n_attribute)
		{
			ox_attr    *attrs = ox_arena_alloc(ar, sizeof(ox_attr) * np->n_attribute);

			if (!attrs)
				return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate attributes");
			for (size_t a = 0; a < np->n_attribute; a++)
				/* g->nodes may not move here: no nodes are added to g below */
				OX_TRY(convert_attr(m, sc, &g->nodes[n], &attrs[a], np->attribute[a], st));
			OX_TRY(check_attr_names(&g->nodes[n], attrs, np->n_attribute, st));
			g->nodes[n].attrs = attrs;
			g->nodes[n].n_attrs = (int) np->n_attribute;
		}
	}

	/* outputs */
	g->outputs = calloc(gp->n_output + 1, sizeof(int));
	if (!g->outputs)
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate graph outputs");
	for (size_t i = 0; i < gp->n_output; i++)
	{
		const Onnx__ValueInfoProto *vi = gp->output[i];
		int			id;

		if (!vi->name || !*vi->name)
			return ox_fail(st, OX_INVALID_MODEL, "graph output %zu has no name", i);
		id = resolve_name(sc, vi->name, st);
		if (id == -2)
			return st->code;
		if (id < 0)
			return ox_fail(st, OX_INVALID_MODEL, "graph output \"%s\" is not produced by any node",
						   vi->name);
		g->values[id].is_output = true;
		if (vi->type)
			OX_TRY(ox_type_from_proto(m, &g->values[id].type, vi->type, 0, st));
		g->outputs[g->n_outputs++] = id;
	}
	if (gp->n_output == 0)
		return ox_fail(st, OX_INVALID_MODEL, "graph \"%s\" has no outputs", g->name);

	/* declared types of intermediate values (shape inference fills the rest) */
	for (size_t i = 0; i < gp->n_value_info; i++)
	{
		const Onnx__ValueInfoProto *vi = gp->value_info[i];
		int			id;

		if (!vi->name)
			continue;
		id = ox_strmap_get(&sc->names, vi->name);
		if (id >= 0 && g->values[id].type.kind == OX_TYPE_UNKNOWN && vi->type)
			OX_TRY(ox_type_from_proto(m, &g->values[id].type, vi->type, 0, st));
	}

	return ox_graph_analyze(g, st);
}

ox_model *
ox_model_load(const void *bytes, size_t len, const ox_load_options *opts, ox_status *st)
{
	Onnx__ModelProto *mp = NULL;
	ox_model   *m = NULL;
	scope		top;

	memset(&top, 0, sizeof(top));
	if (!bytes || len == 0)
	{
		ox_fail(st, OX_INVALID_MODEL, "the model is empty");
		return NULL;
	}
	if (opts && opts->max_model_bytes && len > opts->max_model_bytes)
	{
		ox_fail(st, OX_LIMIT_EXCEEDED, "the model has %zu bytes, more than the limit of %zu",
				len, opts->max_model_bytes);
		return NULL;
	}
	if (ox_proto_check_wire(bytes, len, &onnx__model_proto__descriptor, OX_MAX_PROTO_DEPTH,
							opts ? opts->max_unpack_bytes : 0, st) != OX_OK)
		return NULL;
	mp = onnx__model_proto__unpack(&ox_proto_allocator, len, bytes);
	if (!mp)
	{
		ox_fail(st, OX_INVALID_MODEL, "the data is not a valid ONNX model (protobuf decoding failed)");
		return NULL;
	}
	if (!mp->graph || !mp->has_ir_version)
	{
		ox_fail(st, OX_INVALID_MODEL, "the data is not an ONNX model: it has no %s",
				!mp->has_ir_version ? "IR version" : "graph");
		goto fail;
	}
	if (mp->ir_version < 1 || mp->ir_version > 13)
	{
		ox_fail(st, OX_UNSUPPORTED, "IR version %lld is not supported (1 to 13 are)",
				(long long) mp->ir_version);
		goto fail;
	}
	if (mp->n_functions > 0)
	{
		ox_fail(st, OX_UNSUPPORTED, "model-local functions are not supported (the model defines %zu)",
				mp->n_functions);
		goto fail;
	}

	m = ox_model_new(st);
	if (!m)
		goto fail;
	m->ir_version = mp->ir_version;
	m->model_version = mp->has_model_version ? mp->model_version : 0;
	m->producer_name = ox_arena_strdup(&m->arena, mp->producer_name ? mp->producer_name : "");
	m->producer_version = ox_arena_strdup(&m->arena, mp->producer_version ? mp->producer_version : "");
	m->domain = ox_arena_strdup(&m->arena, mp->domain ? mp->domain : "");
	m->doc = ox_arena_strdup(&m->arena, mp->doc_string ? mp->doc_string : "");

	if (mp->n_opset_import == 0)
	{
		/* IR version 1-2 files predate opset_import: they mean ai.onnx opset 1 */
		if (mp->ir_version >= 3)
		{
			ox_fail(st, OX_INVALID_MODEL, "the model imports no operator set");
			goto fail;
		}
	}
	if (mp->n_opset_import > OX_MAX_OPSET_IMPORTS)
	{
		ox_fail(st, OX_LIMIT_EXCEEDED, "the model lists %zu operator set imports, more than the %d allowed",
				mp->n_opset_import, OX_MAX_OPSET_IMPORTS);
		goto fail;
	}
	m->opsets = ox_arena_alloc(&m->arena, sizeof(ox_opset) * (mp->n_opset_import + 1));
	if (!m->opsets)
		goto oom;
	for (size_t i = 0; i < mp->n_opset_import; i++)
	{
		const Onnx__OperatorSetIdProto *op = mp->opset_import[i];
		const char *d = norm_domain(op->domain);

		if (!op->has_version || op->version < 1 || op->version > 1000)
		{
			ox_fail(st, OX_INVALID_MODEL, "the model imports domain \"%s\" with invalid version %lld",
					d[0] ? d : "ai.onnx", (long long) op->version);
			goto fail;
		}
		if (ox_model_opset(m, d) >= 0)
		{
			/* some converters (skl2onnx) repeat an import: harmless when it agrees */
			if (ox_model_opset(m, d) == op->version)
				continue;
			ox_fail(st, OX_INVALID_MODEL, "the model imports domain \"%s\" twice, as versions %lld and %lld",
					d[0] ? d : "ai.onnx", (long long) ox_model_opset(m, d), (long long) op->version);
			goto fail;
		}
		m->opsets[m->n_opsets].domain = ox_arena_strdup(&m->arena, d);
		m->opsets[m->n_opsets].version = op->version;
		m->n_opsets++;
	}
	if (mp->n_opset_import == 0)
	{
		m->opsets[0].domain = "";
		m->opsets[0].version = 1;
		m->n_opsets = 1;
	}

	m->meta = ox_arena_alloc(&m->arena, sizeof(ox_meta_prop) * (mp->n_metadata_props + 1));
	if (!m->meta)
		goto oom;
	for (size_t i = 0; i < mp->n_metadata_props; i++)
	{
		m->meta[i].key = ox_arena_strdup(&m->arena, mp->metadata_props[i]->key ? mp->metadata_props[i]->key : "");
		m->meta[i].value = ox_arena_strdup(&m->arena, mp->metadata_props[i]->value ? mp->metadata_props[i]->value : "");
		m->n_meta++;
	}

	top.graph = ox_graph_new(m, NULL, st);
	if (!top.graph)
		goto fail;
	m->graph = top.graph;
	if (build_graph(m, &top, mp->graph, st) != OX_OK)
		goto fail;
	if (ox_model_check_schemas(m, st) != OX_OK)
		goto fail;
	ox_strmap_free(&top.names);
	onnx__model_proto__free_unpacked(mp, &ox_proto_allocator);
	ox_infer_shapes(m);
	return m;

oom:
	ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate the model");
fail:
	ox_strmap_free(&top.names);
	if (mp)
		onnx__model_proto__free_unpacked(mp, &ox_proto_allocator);
	ox_model_free(m);
	return NULL;
}

int
ox_model_feed_count(const ox_model *m)
{
	int			n = 0;

	for (int i = 0; i < m->graph->n_inputs; i++)
		if (!m->graph->values[m->graph->inputs[i]].init)
			n++;
	return n;
}

const ox_value_def *
ox_model_feed(const ox_model *m, int k)
{
	for (int i = 0; i < m->graph->n_inputs; i++)
	{
		const ox_value_def *v = &m->graph->values[m->graph->inputs[i]];

		if (v->init)
			continue;
		if (k-- == 0)
			return v;
	}
	return NULL;
}
