/*
 * schema_check.c
 *	  Nodes' attributes, input and output counts and input element types
 *	  against the ONNX operator schemas (see schema_check.h; the table is
 *	  onnx_schemas.c).
 */
#include "model/schema_check.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* the domains whose schemas the table holds (gen_onnx_schemas.py) */
static bool
domain_checked(const char *domain)
{
	return domain[0] == '\0' || strcmp(domain, "ai.onnx.ml") == 0 ||
		strcmp(domain, "ai.onnx.preview") == 0 || strcmp(domain, "ai.onnx.preview.training") == 0;
}

static int
compare_key(const ox_op_schema *s, const char *domain, const char *op)
{
	int			c = strcmp(s->domain, domain);

	return c ? c : strcmp(s->op, op);
}

const ox_op_schema *
ox_op_schema_find(const char *domain, const char *op_type, int64_t opset)
{
	int			lo = 0,
				hi = ox_onnx_n_schemas;
	const ox_op_schema *found = NULL;

	if (!domain_checked(domain))
		return NULL;
	/* the first row of (domain, op): the table is sorted by domain, op, since */
	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (compare_key(&ox_onnx_schemas[mid], domain, op_type) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* then the newest version at or below the opset the model imports */
	for (int i = lo; i < ox_onnx_n_schemas && compare_key(&ox_onnx_schemas[i], domain, op_type) == 0; i++)
		if (ox_onnx_schemas[i].since <= opset)
			found = &ox_onnx_schemas[i];
	return found;
}

/*
 * One entry of a schema's attribute list ("alpha:f,to:i!") from *p on: its
 * name (NUL-terminated in name, cut at size - 1), type code and whether it
 * is required; false at the end of the list.
 */
static bool
next_schema_attr(const char **p, char *name, size_t size, char *code, bool *required)
{
	const char *colon = strchr(*p, ':');
	size_t		len;

	if (!**p || !colon)
		return false;			/* (a malformed table is never generated) */
	len = (size_t) (colon - *p) < size ? (size_t) (colon - *p) : size - 1;
	memcpy(name, *p, len);
	name[len] = '\0';
	*code = colon[1];
	*required = colon[1] && colon[2] == '!';
	*p = colon + 2 + (*required ? 1 : 0);
	if (**p == ',')
		(*p)++;
	return true;
}

/* the type code of attribute `name` in a schema's list, '\0' if it has none */
static char
schema_attr(const char *attrs, const char *name)
{
	char		entry[128],
				code;
	bool		required;

	for (const char *p = attrs; next_schema_attr(&p, entry, sizeof(entry), &code, &required);)
		if (strcmp(entry, name) == 0)
			return code;
	return '\0';
}

/*
 * What each type code names, its attribute type, and the one other type the
 * attribute getters (ir.c) also take for it (OX_ATTR_UNDEFINED: none).
 */
static const struct
{
	char		code;
	ox_attr_type type;
	ox_attr_type also;
	const char *name;
}			attr_kinds[] = {
	{'f', OX_ATTR_FLOAT, OX_ATTR_INT, "a float"},
	{'i', OX_ATTR_INT, OX_ATTR_FLOAT, "an integer"},
	{'s', OX_ATTR_STRING, OX_ATTR_UNDEFINED, "a string"},
	{'t', OX_ATTR_TENSOR, OX_ATTR_UNDEFINED, "a tensor"},
	{'g', OX_ATTR_GRAPH, OX_ATTR_UNDEFINED, "a graph"},
	{'p', OX_ATTR_SPARSE_TENSOR, OX_ATTR_UNDEFINED, "a sparse tensor"},
	{'y', OX_ATTR_TYPE_PROTO, OX_ATTR_UNDEFINED, "a type"},
	{'F', OX_ATTR_FLOATS, OX_ATTR_FLOAT, "a list of floats"},
	{'I', OX_ATTR_INTS, OX_ATTR_INT, "a list of integers"},
	{'S', OX_ATTR_STRINGS, OX_ATTR_UNDEFINED, "a list of strings"},
	{'T', OX_ATTR_TENSORS, OX_ATTR_UNDEFINED, "a list of tensors"},
	{'G', OX_ATTR_GRAPHS, OX_ATTR_UNDEFINED, "a list of graphs"},
	{'P', OX_ATTR_SPARSE_TENSORS, OX_ATTR_UNDEFINED, "a list of sparse tensors"},
	{'Y', OX_ATTR_TYPE_PROTOS, OX_ATTR_UNDEFINED, "a list of types"},
};

#define N_ATTR_KINDS ((int) (sizeof(attr_kinds) / sizeof(attr_kinds[0])))

static bool
type_fits(char code, ox_attr_type t)
{
	for (int i = 0; i < N_ATTR_KINDS; i++)
		if (attr_kinds[i].code == code)
			return t == attr_kinds[i].type || (t != OX_ATTR_UNDEFINED && t == attr_kinds[i].also);
	return false;
}

static const char *
code_name(char code)
{
	for (int i = 0; i < N_ATTR_KINDS; i++)
		if (attr_kinds[i].code == code)
			return attr_kinds[i].name;
	return "of an unknown kind";
}

static const char *
attr_type_name(ox_attr_type t)
{
	if (t == OX_ATTR_UNDEFINED)
		return "of no type";
	for (int i = 0; i < N_ATTR_KINDS; i++)
		if (attr_kinds[i].type == t)
			return attr_kinds[i].name;
	return "of an unknown type";
}

/* the schema's attribute names, for the message about one it lacks */
static void
list_names(const char *attrs, char *buf, size_t size)
{
	char		entry[128],
				code;
	bool		required;
	const char *sep = "";
	size_t		off;

	if (!*attrs)
	{
		snprintf(buf, size, "no attributes");
		return;
	}
	off = (size_t) snprintf(buf, size, "attributes ");
	for (const char *p = attrs; off < size && next_schema_attr(&p, entry, sizeof(entry), &code, &required);)
	{
		off += (size_t) snprintf(buf + off, size - off, "%s%s", sep, entry);
		sep = ", ";
	}
}

static ox_code
arity_error(const ox_node *n, const ox_op_schema *s, const char *what, int have, int least, int most,
			ox_status *st)
{
	const char *dom = n->domain[0] ? n->domain : "";
	const char *dot = n->domain[0] ? "." : "";
	char		range[64];

	if (least == most)
		snprintf(range, sizeof(range), "%d", least);
	else if (most == INT_MAX)
		snprintf(range, sizeof(range), "at least %d", least);
	else
		snprintf(range, sizeof(range), "%d to %d", least, most);
	return ox_fail(st, OX_INVALID_MODEL, "node \"%s\" (%s%s%s) has %d %s%s, but %s%s%s-%d takes %s",
				   n->name, dom, dot, n->op_type, have, what, have == 1 ? "" : "s",
				   dom, dot, n->op_type, s->since, range);
}

/*
 * The element type value v is sure to have at every run: an initializer's,
 * or a main-graph input's declared one (runs refuse other types there).
 * Inferred and declared intermediate types are not trusted for a refusal.
 */
static ox_dtype
exact_elem(const ox_graph *g, int v)
{
	const ox_value_def *d;

	if (v < 0 || v >= g->n_values)
		return OX_UNDEFINED;
	d = &g->values[v];
	if (d->init)
		return d->init->dtype;
	if (d->is_input && !d->is_outer && !g->parent && d->type.kind == OX_TYPE_TENSOR)
		return d->type.elem;
	return OX_UNDEFINED;
}

/*
 * Input i's formal parameter in a schema's input list: its name (in name,
 * cut at size - 1) and type variable (NULL when its type is fixed or free;
 * length in *len).  The last parameter stands for every input past it when
 * it repeats.
 */
static const char *
input_param(const char *types, int i, char *name, size_t size, size_t *len)
{
	const char *p = types;

	name[0] = '\0';
	for (int k = 0; *p; k++)
	{
		const char *colon = strchr(p, ':');
		const char *end = strchr(p, ',');
		size_t		n;
		bool		repeats;

		if (!colon || (end && end < colon))
			return NULL;		/* (a malformed table is never generated) */
		n = end ? (size_t) (end - colon - 1) : strlen(colon + 1);
		repeats = n > 0 && colon[n] == '*';
		if (k == i || (repeats && !end))
		{
			size_t		name_len = (size_t) (colon - p) < size ? (size_t) (colon - p) : size - 1;

			memcpy(name, p, name_len);
			name[name_len] = '\0';
			n -= repeats ? 1 : 0;
			if (n == 0 || (n == 1 && colon[1] == '-'))
				return NULL;
			*len = n;
			return colon + 1;
		}
		if (!end)
			break;
		p = end + 1;
	}
	return NULL;
}

/*
 * Inputs that share a type variable with known but different element types.
 * One pass, remembering each variable's first input of a known type: a
 * variadic input may repeat millions of times in a hostile file.
 */
static ox_code
check_input_types(const ox_graph *g, const ox_node *n, const ox_op_schema *s, const char *dom,
				  const char *dot, ox_status *st)
{
	struct
	{
		const char *var;
		size_t		len;
		int			input;
	}			first[16];
	int			n_first = 0;
	char		name_i[64],
				name_j[64];

	for (int i = 0; i < n->n_inputs; i++)
	{
		size_t		len;
		const char *var = input_param(s->input_types, i, name_i, sizeof(name_i), &len);
		ox_dtype	dt = var ? exact_elem(g, n->inputs[i]) : OX_UNDEFINED;
		int			f;

		if (dt == OX_UNDEFINED)
			continue;
		for (f = 0; f < n_first; f++)
			if (first[f].len == len && strncmp(first[f].var, var, len) == 0)
				break;
		if (f == n_first)
		{
			/* (schemas have a few variables: a full table only stops the comparisons) */
			if (n_first < (int) (sizeof(first) / sizeof(first[0])))
			{
				first[n_first].var = var;
				first[n_first].len = len;
				first[n_first].input = i;
				n_first++;
			}
			continue;
		}
		if (exact_elem(g, n->inputs[first[f].input]) != dt)
		{
			int			j = first[f].input;

			input_param(s->input_types, j, name_j, sizeof(name_j), &len);
			return ox_fail(st, OX_INVALID_MODEL,
						   "node \"%s\" (%s%s%s): input %s (\"%s\") is %s but input %s (\"%s\") is %s, "
						   "and %s%s%s-%d takes one element type for both (%.*s)",
						   n->name, dom, dot, n->op_type, name_i, g->values[n->inputs[i]].name,
						   ox_dtype_name(dt), name_j, g->values[n->inputs[j]].name,
						   ox_dtype_name(exact_elem(g, n->inputs[j])),
						   dom, dot, n->op_type, s->since, (int) first[f].len, first[f].var);
		}
	}
	return OX_OK;
}

static ox_code
check_node(const ox_graph *g, const ox_node *n, const ox_op_schema *s, ox_status *st)
{
	const char *dom = n->domain[0] ? n->domain : "";
	const char *dot = n->domain[0] ? "." : "";
	char		names[256],
				name[128],
				code;
	bool		required;

	if (n->n_inputs < s->min_inputs || n->n_inputs > s->max_inputs)
		return arity_error(n, s, "input", n->n_inputs, s->min_inputs, s->max_inputs, st);
	if (n->n_outputs < s->min_outputs || n->n_outputs > s->max_outputs)
		return arity_error(n, s, "output", n->n_outputs, s->min_outputs, s->max_outputs, st);
	for (int i = 0; i < n->n_attrs; i++)
	{
		const ox_attr *a = &n->attrs[i];

		/* onnxruntime lets "__" names through (onnx's internal symbols) */
		if (strncmp(a->name, "__", 2) == 0)
			continue;
		code = schema_attr(s->attrs, a->name);
		if (code == '\0')
		{
			list_names(s->attrs, names, sizeof(names));
			return ox_fail(st, OX_INVALID_MODEL,
						   "node \"%s\" (%s%s%s) has attribute \"%s\", which %s%s%s-%d does not define (it has %s)",
						   n->name, dom, dot, n->op_type, a->name, dom, dot, n->op_type, s->since, names);
		}
		if (!a->untyped && !type_fits(code, a->type))
			return ox_fail(st, OX_INVALID_MODEL,
						   "attribute \"%s\" of node \"%s\" (%s%s%s) is %s, but %s%s%s-%d takes %s",
						   a->name, n->name, dom, dot, n->op_type, attr_type_name(a->type),
						   dom, dot, n->op_type, s->since, code_name(code));
	}
	/* the required ones */
	for (const char *p = s->attrs; next_schema_attr(&p, name, sizeof(name), &code, &required);)
		if (required && !ox_node_attr(n, name))
			return ox_fail(st, OX_INVALID_MODEL,
						   "node \"%s\" (%s%s%s) lacks attribute \"%s\", which %s%s%s-%d requires",
						   n->name, dom, dot, n->op_type, name, dom, dot, n->op_type, s->since);
	return check_input_types(g, n, s, dom, dot, st);
}

ox_code
ox_model_check_schemas(const ox_model *m, ox_status *st)
{
	for (int gi = 0; gi < m->n_graphs; gi++)
	{
		const ox_graph *g = m->graphs[gi];

		for (int k = 0; k < g->n_nodes; k++)
		{
			const ox_node *n = &g->nodes[k];
			const ox_op_schema *s = ox_op_schema_find(n->domain, n->op_type, n->opset);

			if (s)
				OX_TRY(check_node(g, n, s, st));
		}
	}
	return OX_OK;
}
