/*
 * ir.c
 *	  Model, graph and attribute helpers; graph analysis (producers,
 *	  consumers, topological order, cycle detection).
 */
#include "model/ir.h"
#include "model/uses.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ox_model *
ox_model_new(ox_status *st)
{
	ox_model   *m = calloc(1, sizeof(ox_model));

	if (!m)
	{
		ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate a model");
		return NULL;
	}
	ox_arena_init(&m->arena);
	return m;
}

void
ox_model_free(ox_model *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->n_tensors; i++)
	{
		ox_tensor_release(m->tensors[i]);
		free(m->tensors[i]);
	}
	free(m->tensors);
	for (int i = 0; i < m->n_graphs; i++)
	{
		ox_graph   *g = m->graphs[i];

		for (int n = 0; n < g->n_nodes; n++)
		{
			free(g->nodes[n].inputs);
			free(g->nodes[n].outputs);
			free(g->nodes[n].implicit_inputs);
		}
		(void) ox_uses_end(g, "", NULL);
		free(g->values);
		free(g->nodes);
		free(g->inputs);
		free(g->outputs);
		free(g->outer);
		free(g);
	}
	free(m->graphs);
	ox_arena_free(&m->arena);
	free(m);
}

static bool
grow(void **arr, int *cap, int need, size_t elem)
{
	int			newcap;
	void	   *p;

	if (need <= *cap)
		return true;
	newcap = *cap ? *cap * 2 : 16;
	while (newcap < need)
		newcap *= 2;
	p = realloc(*arr, (size_t) newcap * elem);
	if (!p)
		return false;
	memset((char *) p + (size_t) *cap * elem, 0, (size_t) (newcap - *cap) * elem);
	*arr = p;
	*cap = newcap;
	return true;
}

int64_t
ox_model_opset(const ox_model *m, const char *domain)
{
	if (!domain || strcmp(domain, "ai.onnx") == 0)
		domain = "";
	for (int i = 0; i < m->n_opsets; i++)
	{
		const char *d = m->opsets[i].domain ? m->opsets[i].domain : "";

		if (strcmp(d, "ai.onnx") == 0)
			d = "";
		if (strcmp(d, domain) == 0)
			return m->opsets[i].version;
	}
	return -1;
}

ox_tensor *
ox_model_new_tensor(ox_model *m, ox_status *st)
{
	ox_tensor  *t;

	if (!grow((void **) &m->tensors, &m->cap_tensors, m->n_tensors + 1, sizeof(ox_tensor *)))
		goto oom;
	t = calloc(1, sizeof(ox_tensor));
	if (!t)
		goto oom;
	m->tensors[m->n_tensors++] = t;
	return t;
oom:
	ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate a tensor");
	return NULL;
}

const char *
ox_model_unique_name(ox_model *m, const char *prefix)
{
	char		buf[256];

	snprintf(buf, sizeof(buf), "%s__%d", prefix, ++m->name_counter);
	return ox_arena_strdup(&m->arena, buf);
}

ox_graph *
ox_graph_new(ox_model *m, ox_graph *parent, ox_status *st)
{
	ox_graph   *g;

	if (!grow((void **) &m->graphs, &m->cap_graphs, m->n_graphs + 1, sizeof(ox_graph *)))
		goto oom;
	g = calloc(1, sizeof(ox_graph));
	if (!g)
		goto oom;
	g->model = m;
	g->parent = parent;
	m->graphs[m->n_graphs++] = g;
	return g;
oom:
	ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate a graph");
	return NULL;
}

int
ox_graph_add_value(ox_graph *g, const char *name, ox_status *st)
{
	ox_value_def *v;

	if (!grow((void **) &g->values, &g->cap_values, g->n_values + 1, sizeof(ox_value_def)))
	{
		ox_fail(st, OX_OUT_OF_MEMORY, "could not grow the value table");
		return -1;
	}
	v = &g->values[g->n_values];
	memset(v, 0, sizeof(*v));
	v->name = ox_arena_strdup(&g->model->arena, name ? name : "");
	if (!v->name)
	{
		ox_fail(st, OX_OUT_OF_MEMORY, "could not copy a value name");
		return -1;
	}
	v->producer = -1;
	v->type.rank = -1;
	return g->n_values++;
}

ox_node *
ox_graph_add_node(ox_graph *g, ox_status *st)
{
	ox_node    *n;

	if (!grow((void **) &g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof(ox_node)))
	{
		ox_fail(st, OX_OUT_OF_MEMORY, "could not grow the node table");
		return NULL;
	}
	n = &g->nodes[g->n_nodes++];
	memset(n, 0, sizeof(*n));
	n->domain = "";
	return n;
}

int
ox_graph_find_value(const ox_graph *g, const char *name)
{
	for (int i = 0; i < g->n_values; i++)
		if (strcmp(g->values[i].name, name) == 0)
			return i;
	return -1;
}

/*
 * Kahn's algorithm over live nodes, stable with respect to the original
 * order so that well-ordered models keep their order.
 */
ox_code
ox_graph_analyze(ox_graph *g, ox_status *st)
{
	int			n_live = 0;
	int		   *indeg = NULL;
	int		   *order = NULL;
	int		   *queue = NULL;
	int		   *cons_start = NULL;
	int		   *cons = NULL;
	int			n_edges = 0;
	int			head = 0;
	int			tail = 0;
	ox_node    *sorted = NULL;
	ox_code		rc = OX_OK;

	/* node indices change below: the optimizer's use index starts again */
	ox_uses_invalidate(g);

	/* compact dead nodes first */
	for (int i = 0; i < g->n_nodes; i++)
	{
		if (g->nodes[i].dead)
		{
			free(g->nodes[i].inputs);
			free(g->nodes[i].outputs);
			free(g->nodes[i].implicit_inputs);
			continue;
		}
		if (i != n_live)
			g->nodes[n_live] = g->nodes[i];
		n_live++;
	}
	g->n_nodes = n_live;

	for (int v = 0; v < g->n_values; v++)
	{
		g->values[v].producer = -1;
		g->values[v].n_consumers = 0;
	}
	for (int i = 0; i < g->n_nodes; i++)
	{
		ox_node    *n = &g->nodes[i];

		for (int o = 0; o < n->n_outputs; o++)
		{
			int			v = n->outputs[o];

			if (v < 0)
				continue;
			if (v >= g->n_values)
				return ox_fail(st, OX_INTERNAL, "node output refers to value %d of %d", v, g->n_values);
			if (g->values[v].producer >= 0 || g->values[v].init || g->values[v].is_input ||
				g->values[v].is_outer)
				return ox_fail(st, OX_INVALID_MODEL,
							   "value \"%s\" is defined more than once (node \"%s\")",
							   g->values[v].name, n->name);
			g->values[v].producer = i;
			g->values[v].producer_slot = o;
		}
	}

	indeg = calloc(g->n_nodes + 1, sizeof(int));
	cons_start = calloc(g->n_nodes + 2, sizeof(int));
	if (!indeg || !cons_start)
		goto oom;

	/* count edges producer -> consumer, including implicit (subgraph) inputs */
	for (int pass = 0; pass < 2; pass++)
	{
		int		   *fill = NULL;

		if (pass == 1)
		{
			for (int i = 0; i < g->n_nodes; i++)
				cons_start[i + 1] += cons_start[i];
			n_edges = cons_start[g->n_nodes];
			cons = malloc(sizeof(int) * (n_edges + 1));
			fill = calloc(g->n_nodes + 1, sizeof(int));
			if (!cons || !fill)
			{
				free(fill);
				goto oom;
			}
		}
		for (int i = 0; i < g->n_nodes; i++)
		{
			ox_node    *n = &g->nodes[i];
			for (int k = 0; k < ox_node_n_reads(n); k++)
			{
				int			v = ox_node_read(n, k);
				int			p;

				if (v < 0)
					continue;
				if (v >= g->n_values)
				{
					free(fill);
					rc = ox_fail(st, OX_INTERNAL, "node input refers to value %d of %d", v, g->n_values);
					goto done;
				}
				p = g->values[v].producer;
				if (pass == 0)
				{
					g->values[v].n_consumers++;
					if (p < 0 && !g->values[v].init && !g->values[v].is_input && !g->values[v].is_outer)
					{
						rc = ox_fail(st, OX_INVALID_MODEL,
									 "input \"%s\" of node \"%s\" (%s) is not produced by any node, graph input or initializer",
									 g->values[v].name, n->name, n->op_type);
						goto done;
					}
					if (p >= 0)
					{
						cons_start[p + 1]++;
						indeg[i]++;
					}
				}
				else if (p >= 0)
					cons[cons_start[p] + fill[p]++] = i;
			}
		}
		free(fill);
	}

	queue = malloc(sizeof(int) * (g->n_nodes + 1));
	order = malloc(sizeof(int) * (g->n_nodes + 1));
	if (!queue || !order)
		goto oom;
	/* stable: seed the queue in original order; a min-heap would be stricter but costs more */
	for (int i = 0; i < g->n_nodes; i++)
		if (indeg[i] == 0)
			queue[tail++] = i;
	while (head < tail)
	{
		int			i = queue[head++];

		order[head - 1] = i;
		for (int e = cons_start[i]; e < cons_start[i + 1]; e++)
			if (--indeg[cons[e]] == 0)
				queue[tail++] = cons[e];
	}
	if (tail != g->n_nodes)
	{
		for (int i = 0; i < g->n_nodes; i++)
			if (indeg[i] > 0)
			{
				rc = ox_fail(st, OX_INVALID_MODEL, "the graph has a cycle through node \"%s\" (%s)",
							 g->nodes[i].name, g->nodes[i].op_type);
				goto done;
			}
		rc = ox_fail(st, OX_INVALID_MODEL, "the graph has a cycle");
		goto done;
	}

	/* apply the order if it differs */
	for (int i = 0; i < g->n_nodes; i++)
		if (order[i] != i)
		{
			sorted = malloc(sizeof(ox_node) * g->n_nodes);
			if (!sorted)
				goto oom;
			for (int k = 0; k < g->n_nodes; k++)
				sorted[k] = g->nodes[order[k]];
			memcpy(g->nodes, sorted, sizeof(ox_node) * g->n_nodes);
			for (int k = 0; k < g->n_nodes; k++)
				for (int o = 0; o < g->nodes[k].n_outputs; o++)
					if (g->nodes[k].outputs[o] >= 0)
						g->values[g->nodes[k].outputs[o]].producer = k;
			break;
		}

	for (int i = 0; i < g->n_outputs; i++)
	{
		ox_value_def *v = &g->values[g->outputs[i]];

		if (v->producer < 0 && !v->init && !v->is_input && !v->is_outer)
		{
			rc = ox_fail(st, OX_INVALID_MODEL, "graph output \"%s\" is not produced by any node",
						 v->name);
			goto done;
		}
	}
	goto done;

oom:
	rc = ox_fail(st, OX_OUT_OF_MEMORY, "could not analyze the graph");
done:
	free(indeg);
	free(order);
	free(queue);
	free(cons_start);
	free(cons);
	free(sorted);
	return rc;
}

const ox_attr *
ox_node_attr(const ox_node *n, const char *name)
{
	for (int i = 0; i < n->n_attrs; i++)
		if (strcmp(n->attrs[i].name, name) == 0)
			return &n->attrs[i];
	return NULL;
}

int64_t
ox_attr_int(const ox_node *n, const char *name, int64_t def)
{
	const ox_attr *a = ox_node_attr(n, name);

	if (!a)
		return def;
	if (a->type == OX_ATTR_INT)
		return a->i;
	/*
	 * a float where an integer belongs, truncated; NaN and values past
	 * int64's range saturate (converting them is undefined in C, and a
	 * hostile model may hold them: the fuzzer's Flatten with a float axis)
	 */
	if (a->type == OX_ATTR_FLOAT)
	{
		if (isnan(a->f))
			return INT64_MIN;
		if (a->f >= 0x1p63f)
			return INT64_MAX;
		if (a->f <= -0x1p63f)
			return INT64_MIN;
		return (int64_t) a->f;
	}
	return def;
}

float
ox_attr_float(const ox_node *n, const char *name, float def)
{
	const ox_attr *a = ox_node_attr(n, name);

	if (!a)
		return def;
	if (a->type == OX_ATTR_FLOAT)
		return a->f;
	if (a->type == OX_ATTR_INT)
		return (float) a->i;
	return def;
}

const char *
ox_attr_string(const ox_node *n, const char *name, const char *def)
{
	const ox_attr *a = ox_node_attr(n, name);

	return (a && a->type == OX_ATTR_STRING) ? a->s : def;
}

int
ox_attr_ints(const ox_node *n, const char *name, const int64_t **out)
{
	const ox_attr *a = ox_node_attr(n, name);

	*out = NULL;
	if (!a || (a->type != OX_ATTR_INTS && a->type != OX_ATTR_INT))
		return 0;
	if (a->type == OX_ATTR_INT)
	{
		*out = &a->i;
		return 1;
	}
	*out = a->ints;
	return a->n;
}

int
ox_attr_floats(const ox_node *n, const char *name, const float **out)
{
	const ox_attr *a = ox_node_attr(n, name);

	*out = NULL;
	if (!a || (a->type != OX_ATTR_FLOATS && a->type != OX_ATTR_FLOAT))
		return 0;
	if (a->type == OX_ATTR_FLOAT)
	{
		*out = &a->f;
		return 1;
	}
	*out = a->floats;
	return a->n;
}

int
ox_attr_strings(const ox_node *n, const char *name, const char *const **out)
{
	const ox_attr *a = ox_node_attr(n, name);

	*out = NULL;
	if (!a || a->type != OX_ATTR_STRINGS)
		return 0;
	*out = a->strings;
	return a->n;
}

const ox_tensor *
ox_attr_tensor(const ox_node *n, const char *name)
{
	const ox_attr *a = ox_node_attr(n, name);

	return (a && a->type == OX_ATTR_TENSOR) ? a->t : NULL;
}

const ox_graph *
ox_attr_graph(const ox_node *n, const char *name)
{
	const ox_attr *a = ox_node_attr(n, name);

	return (a && a->type == OX_ATTR_GRAPH) ? a->g : NULL;
}

const char *
ox_attr_type_name(ox_attr_type t)
{
	static const char *const names[] = {
		"undefined", "float", "int", "string", "tensor", "graph", "floats", "ints",
		"strings", "tensors", "graphs", "sparse_tensor", "sparse_tensors",
		"type_proto", "type_protos"
	};

	if ((int) t < 0 || (size_t) t >= sizeof(names) / sizeof(names[0]))
		return "unknown";
	return names[t];
}

static size_t
type_str(const ox_type *t, char *buf, size_t len)
{
	size_t		off = 0;

#define APPEND(...) do { if (off < len) off += snprintf(buf + off, len - off, __VA_ARGS__); } while (0)
	if (!t)
	{
		APPEND("unknown");
		return off;
	}
	switch (t->kind)
	{
		case OX_TYPE_TENSOR:
		case OX_TYPE_SPARSE_TENSOR:
			APPEND("%s(%s)", t->kind == OX_TYPE_TENSOR ? "tensor" : "sparse_tensor",
				   ox_dtype_name(t->elem));
			if (t->rank >= 0)
			{
				APPEND("[");
				for (int i = 0; i < t->rank; i++)
				{
					if (t->dims[i].param)
						APPEND("%s%s", i ? ", " : "", t->dims[i].param);
					else if (t->dims[i].value >= 0)
						APPEND("%s%lld", i ? ", " : "", (long long) t->dims[i].value);
					else
						APPEND("%s?", i ? ", " : "");
				}
				APPEND("]");
			}
			break;
		case OX_TYPE_SEQUENCE:
		case OX_TYPE_OPTIONAL:
			APPEND("%s(", t->kind == OX_TYPE_SEQUENCE ? "seq" : "optional");
			if (off < len)
				off += type_str(t->inner, buf + off, len - off);
			APPEND(")");
			break;
		case OX_TYPE_MAP:
			APPEND("map(%s, ", ox_dtype_name(t->map_key));
			if (off < len)
				off += type_str(t->inner, buf + off, len - off);
			APPEND(")");
			break;
		case OX_TYPE_UNKNOWN:
			APPEND("unknown");
			break;
	}
#undef APPEND
	return off;
}

const char *
ox_type_str(const ox_type *t, char *buf, size_t len)
{
	if (len)
		buf[0] = '\0';
	type_str(t, buf, len);
	return buf;
}

void
ox_type_from_tensor(ox_model *m, ox_type *out, const ox_tensor *t)
{
	memset(out, 0, sizeof(*out));
	out->kind = OX_TYPE_TENSOR;
	out->elem = t->dtype;
	out->rank = -1;
	out->dims = ox_arena_alloc(&m->arena, sizeof(ox_dim) * (t->rank + 1));
	if (!out->dims)
		return;					/* out of memory: the shape stays unknown */
	for (int i = 0; i < t->rank; i++)
	{
		out->dims[i].value = t->dims[i];
		out->dims[i].param = NULL;
	}
	out->rank = t->rank;
}

bool
ox_node_is_random(const ox_node *n)
{
	if (n->domain[0] != '\0')
		return false;
	return strncmp(n->op_type, "Random", 6) == 0 || strcmp(n->op_type, "Multinomial") == 0 ||
		strcmp(n->op_type, "Bernoulli") == 0 || strcmp(n->op_type, "Dropout") == 0;
}
