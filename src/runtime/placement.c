/*
 * placement.c
 *	  The provider placement pass: device-supported nodes of the main graph
 *	  grouped into partition nodes (see placement.h).
 *
 * Grouping walks the nodes in topological order with one open partition.
 * dep[k] is the highest partition id node k depends on (through any path).
 * A supported node joins the open partition unless one of its inputs comes
 * from a CPU node that depends on that partition (joining would make a
 * cycle: partition -> CPU node -> partition); then it opens the next one.
 * A partition never depends on a later one, so the contracted graph is
 * acyclic and ox_graph_analyze can sort it again.
 */
#include "runtime/placement.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool
ox_node_is_partition(const ox_node *n)
{
	return !n->dead && strcmp(n->domain, OX_PARTITION_DOMAIN) == 0 && ox_attr_graph(n, "body") != NULL;
}

const char *
ox_node_provider(const ox_node *n, int *n_inner, const char **first, const char **last)
{
	const ox_graph *body = ox_node_is_partition(n) ? ox_attr_graph(n, "body") : NULL;

	*n_inner = body ? body->n_nodes : 0;
	*first = body && body->n_nodes > 0 ? body->nodes[0].name : NULL;
	*last = body && body->n_nodes > 0 ? body->nodes[body->n_nodes - 1].name : NULL;
	return body ? "cuda" : "cpu";
}

bool
ox_graph_is_partition_body(const ox_graph *g)
{
	const ox_graph *p = g->parent;

	if (!p)
		return false;
	for (int k = 0; k < p->n_nodes; k++)
		if (ox_node_is_partition(&p->nodes[k]) && ox_attr_graph(&p->nodes[k], "body") == g)
			return true;
	return false;
}

static bool
has_subgraph(const ox_node *n)
{
	for (int a = 0; a < n->n_attrs; a++)
		if (n->attrs[a].type == OX_ATTR_GRAPH || n->attrs[a].type == OX_ATTR_GRAPHS)
			return true;
	return n->n_implicit > 0;
}

/* body value for main-graph value v, made on first use */
static int
body_value(ox_graph *g, ox_graph *body, int *map, int v, ox_status *st)
{
	int			b;

	if (map[v] >= 0)
		return map[v];
	b = ox_graph_add_value(body, g->values[v].name, st);
	if (b < 0)
		return -1;
	body->values[b].type = g->values[v].type;
	map[v] = b;
	return b;
}

/* node and graph input/output arrays are malloc'd: ox_model_free frees them */
static ox_code
add_list(int **list, int *n, int v, ox_status *st)
{
	int		   *l = realloc(*list, sizeof(int) * (*n + 1));

	if (!l)
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not build a partition");
	l[(*n)++] = v;
	*list = l;
	return OX_OK;
}

/* build partition pid from the nodes with part[k] == pid */
static ox_code
make_partition(ox_model *m, const ox_placement_rules *rules, const int *part, int pid,
			   int n_nodes, int *map, ox_status *st)
{
	ox_graph   *g = m->graph;
	ox_graph   *body;
	ox_node    *pn;
	ox_attr    *attr;
	int		   *p_in = NULL,
			   *p_out = NULL;
	int			n_in = 0,
				n_out = 0;
	char		name[64];

	body = ox_graph_new(m, g, st);
	if (!body)
		return st->code;
	snprintf(name, sizeof(name), "%s_%d", rules->op_type, pid);
	body->name = ox_arena_strdup(&m->arena, name);
	if (!body->name)
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not build a partition");
	for (int v = 0; v < g->n_values; v++)
		map[v] = -1;

	for (int k = 0; k < n_nodes; k++)
	{
		const ox_node *src = &g->nodes[k];
		ox_node    *dst;
		int		   *ins,
				   *outs;

		if (part[k] != pid)
			continue;
		ins = malloc(sizeof(int) * (src->n_inputs + 1));
		outs = malloc(sizeof(int) * (src->n_outputs + 1));
		if (!ins || !outs)
		{
			free(ins);
			free(outs);
			return ox_fail(st, OX_OUT_OF_MEMORY, "could not build a partition");
		}
		for (int i = 0; i < src->n_inputs; i++)
		{
			int			v = src->inputs[i];
			bool		fresh;

			ins[i] = -1;
			if (v < 0)
				continue;
			fresh = map[v] < 0;
			if ((ins[i] = body_value(g, body, map, v, st)) < 0)
				return st->code;
			if (!fresh)
				continue;
			if (g->values[v].init && !g->values[v].is_input)
				body->values[ins[i]].init = g->values[v].init;	/* constant: goes inside */
			else
			{
				/* from outside: a partition input */
				body->values[ins[i]].is_input = true;
				OX_TRY(add_list(&body->inputs, &body->n_inputs, ins[i], st));
				OX_TRY(add_list(&p_in, &n_in, v, st));
			}
		}
		for (int o = 0; o < src->n_outputs; o++)
		{
			int			v = src->outputs[o];
			bool		outside;

			outs[o] = -1;
			if (v < 0)
				continue;
			if ((outs[o] = body_value(g, body, map, v, st)) < 0)
				return st->code;
			/* read outside the partition? */
			outside = g->values[v].is_output;
			for (int c = 0; c < n_nodes && !outside; c++)
			{
				const ox_node *cn = &g->nodes[c];

				if (part[c] == pid || cn->dead)
					continue;
				for (int i = 0; i < ox_node_n_reads(cn) && !outside; i++)
				{
					int			in = ox_node_read(cn, i);

					outside = in == v;
				}
			}
			if (outside)
			{
				body->values[outs[o]].is_output = true;
				OX_TRY(add_list(&body->outputs, &body->n_outputs, outs[o], st));
				OX_TRY(add_list(&p_out, &n_out, v, st));
			}
		}
		dst = ox_graph_add_node(body, st);
		if (!dst)
		{
			free(ins);
			free(outs);
			return st->code;
		}
		src = &g->nodes[k];
		*dst = *src;
		dst->inputs = ins;
		dst->outputs = outs;
		dst->n_implicit = 0;
		dst->implicit_inputs = NULL;
		dst->dead = false;
	}

	/* the partition node (ox_graph_add_node may move g->nodes) */
	attr = ox_arena_alloc(&m->arena, sizeof(ox_attr));
	if (!attr)
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not build a partition");
	memset(attr, 0, sizeof(*attr));
	attr->name = "body";
	attr->type = OX_ATTR_GRAPH;
	attr->g = body;
	pn = ox_graph_add_node(g, st);
	if (!pn)
	{
		free(p_in);
		free(p_out);
		return st->code;
	}
	pn->name = body->name;
	pn->op_type = rules->op_type;
	pn->domain = OX_PARTITION_DOMAIN;
	pn->doc = "";
	pn->opset = 1;
	pn->n_inputs = n_in;
	pn->inputs = p_in;
	pn->n_outputs = n_out;
	pn->outputs = p_out;
	pn->n_attrs = 1;
	pn->attrs = attr;
	return ox_graph_analyze(body, st);
}

ox_code
ox_place_partitions(ox_model *m, const ox_placement_rules *rules, int *n_partitions, ox_status *st)
{
	ox_graph   *g = m->graph;
	int			n = g->n_nodes;
	bool	   *placed = calloc(n + 1, sizeof(bool));
	int		   *part = malloc(sizeof(int) * (n + 1));
	int		   *dep = malloc(sizeof(int) * (n + 1));
	int		   *map = malloc(sizeof(int) * (g->n_values + 1));
	int			cur = -1,
				next = 0;
	ox_code		rc = OX_OK;

	*n_partitions = 0;
	if (!placed || !part || !dep || !map)
	{
		rc = ox_fail(st, OX_OUT_OF_MEMORY, "could not place nodes");
		goto done;
	}
	for (int k = 0; k < n; k++)
	{
		const ox_node *node = &g->nodes[k];
		bool		conflict = false;
		int			d = -1;

		part[k] = -1;
		placed[k] = !node->dead && !has_subgraph(node) && rules->supports(g, node, rules->arg);
		for (int i = 0; i < ox_node_n_reads(node); i++)
		{
			int			v = ox_node_read(node, i);
			int			p = v >= 0 ? g->values[v].producer : -1;

			if (p < 0 || p >= k)
				continue;
			if (dep[p] > d)
				d = dep[p];
			/* a host-read input must come from the CPU side */
			if (placed[k] && i < node->n_inputs && placed[p] && rules->host_input &&
				rules->host_input(node, i, rules->arg))
				placed[k] = false;
			if (!placed[p] && cur >= 0 && dep[p] >= cur)
				conflict = true;
		}
		if (placed[k])
		{
			if (cur < 0 || conflict)
				cur = next++;
			part[k] = cur;
			dep[k] = d > cur ? d : cur;
		}
		else
			dep[k] = d;
	}
	for (int pid = 0; pid < next; pid++)
	{
		if ((rc = make_partition(m, rules, part, pid, n, map, st)) != OX_OK)
			goto done;
		(*n_partitions)++;
	}
	if (next > 0)
	{
		/* g->nodes may have moved: index, not pointers */
		for (int k = 0; k < n; k++)
			if (part[k] >= 0)
				g->nodes[k].dead = true;
		rc = ox_graph_analyze(g, st);
	}
done:
	free(placed);
	free(part);
	free(dep);
	free(map);
	return rc;
}
