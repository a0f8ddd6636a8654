/*
 * uses.c
 *	  The consumers of each value while the optimizer runs (see uses.h).
 *
 * One list per value, linked through a single growing table of entries:
 * indexing a node pushes it onto the list of each value it reads, so a
 * node whose inputs were rewritten is simply pushed again (a duplicate or
 * a stale entry is harmless: queries check the node itself).  Nothing is
 * ever removed; ox_graph_analyze renumbers nodes and so empties the index,
 * which the next query rebuilds in one pass over the graph.
 */
#include "model/uses.h"

#include <stdlib.h>
#include <string.h>

typedef struct use_entry
{
	int			node;
	int			next;			/* the value's next entry, -1 at the end */
} use_entry;

struct ox_uses
{
	bool		built;			/* the lists hold nodes [0, n_indexed) */
	bool		broken;			/* an allocation failed: queries scan */
	bool		mismatch;		/* OX_CHECK_USES: a query disagreed with the scan */
	int			mismatch_value;
	int			n_indexed;
	int			n_heads;
	int		   *head;			/* per value: its newest entry, -1 for none */
	use_entry  *entries;
	int			n_entries;
	int			cap_entries;
};

/* how node n reads v: 0 not at all, 1 as a plain input, -1 through a subgraph */
static int
node_use(const ox_node *n, int v)
{
	int			use = 0;

	if (n->dead)
		return 0;
	for (int i = 0; i < n->n_inputs; i++)
		if (n->inputs[i] == v)
			use = 1;
	for (int i = 0; i < n->n_implicit; i++)
		if (n->implicit_inputs[i] == v)
			return -1;
	return use;
}

static bool
add_use(ox_uses *u, int v, int k)
{
	if (v < 0)
		return true;
	if (v >= u->n_heads)
	{
		int			n = v + 1 > 2 * u->n_heads ? v + 1 : 2 * u->n_heads;
		int		   *h = realloc(u->head, sizeof(int) * (size_t) n);

		if (!h)
			return false;
		for (int i = u->n_heads; i < n; i++)
			h[i] = -1;
		u->head = h;
		u->n_heads = n;
	}
	if (u->n_entries == u->cap_entries)
	{
		int			cap = u->cap_entries ? 2 * u->cap_entries : 256;
		use_entry  *e;

		if (cap < u->cap_entries)
			return false;		/* past INT_MAX entries */
		e = realloc(u->entries, sizeof(use_entry) * (size_t) cap);
		if (!e)
			return false;
		u->entries = e;
		u->cap_entries = cap;
	}
	u->entries[u->n_entries].node = k;
	u->entries[u->n_entries].next = u->head[v];
	u->head[v] = u->n_entries++;
	return true;
}

/* push node k onto the list of every value it reads; on failure the index is broken */
static void
index_node(ox_uses *u, const ox_graph *g, int k)
{
	const ox_node *n = &g->nodes[k];

	for (int i = 0; i < ox_node_n_reads(n) && !u->broken; i++)
		if (!add_use(u, ox_node_read(n, i), k))
			u->broken = true;
}

/* the index up to date with g's nodes, or broken */
static void
catch_up(ox_uses *u, const ox_graph *g)
{
	if (!u->built || g->n_nodes < u->n_indexed)
	{
		u->n_entries = 0;
		for (int i = 0; i < u->n_heads; i++)
			u->head[i] = -1;
		u->n_indexed = 0;
		u->built = true;
	}
	for (; u->n_indexed < g->n_nodes && !u->broken; u->n_indexed++)
		index_node(u, g, u->n_indexed);
}

#ifdef OX_CHECK_USES
/* the scan's answer, noting the first time the index's differed from it */
static int
checked_answer(ox_uses *u, int v, int indexed, int scanned)
{
	if (indexed != scanned && !u->mismatch)
	{
		u->mismatch = true;
		u->mismatch_value = v;
	}
	return scanned;
}
#endif

static bool
is_next_reader(const ox_graph *g, int k, int v, int after, ox_reader_pred pred, const void *arg)
{
	return k > after && node_use(&g->nodes[k], v) != 0 && (!pred || pred(g, k, arg));
}

static int
next_reader_scan(const ox_graph *g, int v, int after, ox_reader_pred pred, const void *arg)
{
	for (int k = after + 1; k < g->n_nodes; k++)
		if (is_next_reader(g, k, v, after, pred, arg))
			return k;
	return -1;
}

/* the smallest listed node that qualifies: the list is in no order, and may repeat a node */
static int
next_reader_indexed(ox_uses *u, const ox_graph *g, int v, int after, ox_reader_pred pred, const void *arg)
{
	int			best = -1;

	catch_up(u, g);
	if (u->broken)
		return next_reader_scan(g, v, after, pred, arg);
	if (v >= u->n_heads)
		return -1;				/* no node has read it */
	for (int e = u->head[v]; e >= 0; e = u->entries[e].next)
	{
		int			k = u->entries[e].node;

		if ((best < 0 || k < best) && is_next_reader(g, k, v, after, pred, arg))
			best = k;
	}
	return best;
}

int
ox_graph_next_reader(const ox_graph *g, int v, int after, ox_reader_pred pred, const void *arg)
{
	ox_uses    *u = g->uses;
	int			found;

	if (!u || u->broken || v < 0)
		return next_reader_scan(g, v, after, pred, arg);
	found = next_reader_indexed(u, g, v, after, pred, arg);
#ifdef OX_CHECK_USES
	found = checked_answer(u, v, found, next_reader_scan(g, v, after, pred, arg));
#endif
	return found;
}

/*
 * The sole consumer as the first reader when no other follows: two walks
 * of v's list (or two partial scans), checked as next_reader's answers are.
 */
int
ox_graph_sole_consumer(const ox_graph *g, int v)
{
	int			first = ox_graph_next_reader(g, v, -1, NULL, NULL);

	if (first < 0 || node_use(&g->nodes[first], v) < 0)
		return -1;
	return ox_graph_next_reader(g, v, first, NULL, NULL) < 0 ? first : -1;
}

ox_code
ox_uses_begin(ox_graph *g, ox_status *st)
{
	if (g->uses)
		return OX_OK;
	g->uses = calloc(1, sizeof(ox_uses));
	if (!g->uses)
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate the optimizer's use index");
	return OX_OK;
}

ox_code
ox_uses_check(ox_graph *g, const char *pass, ox_status *st)
{
	ox_uses    *u = g->uses;

	if (!u || !u->mismatch)
		return OX_OK;
	u->mismatch = false;
	return ox_fail(st, OX_INTERNAL,
				   "pass %s: the use index disagrees with the graph on the consumers of value \"%s\"",
				   pass, u->mismatch_value >= 0 && u->mismatch_value < g->n_values ? g->values[u->mismatch_value].name : "?");
}

ox_code
ox_uses_end(ox_graph *g, const char *pass, ox_status *st)
{
	ox_code		rc = ox_uses_check(g, pass, st);

	if (g->uses)
	{
		free(g->uses->head);
		free(g->uses->entries);
		free(g->uses);
		g->uses = NULL;
	}
	return rc;
}

void
ox_uses_invalidate(ox_graph *g)
{
	if (g->uses)
		g->uses->built = false;
}

void
ox_uses_node_changed(ox_graph *g, int k)
{
	ox_uses    *u = g->uses;

	/* not built yet, or a node the next query indexes anyway */
	if (!u || !u->built || u->broken || k >= u->n_indexed)
		return;
	index_node(u, g, k);
}

/* node k's inputs that read from read to instead; true if there were any */
static bool
replace_in_node(ox_node *n, int from, int to)
{
	bool		changed = false;

	if (n->dead)
		return false;
	for (int i = 0; i < n->n_inputs; i++)
		if (n->inputs[i] == from)
		{
			n->inputs[i] = to;
			changed = true;
		}
	for (int i = 0; i < n->n_implicit; i++)
		if (n->implicit_inputs[i] == from)
		{
			n->implicit_inputs[i] = to;
			changed = true;
		}
	return changed;
}

void
ox_graph_replace_uses(ox_graph *g, int from, int to)
{
	ox_uses    *u = g->uses;

	if (from == to)
		return;
	if (u && !u->broken)
		catch_up(u, g);
	if (!u || u->broken || from < 0)
	{
		/* every node (-1, an omitted input, has no list); what changed is indexed again */
		for (int k = 0; k < g->n_nodes; k++)
			if (replace_in_node(&g->nodes[k], from, to) && u && !u->broken)
				index_node(u, g, k);
		return;
	}
	/* from's list: each node that reads from now reads to, so goes on to's list */
	if (from >= u->n_heads)
		return;
	for (int e = u->head[from]; e >= 0; e = u->entries[e].next)
	{
		int			k = u->entries[e].node;

		if (replace_in_node(&g->nodes[k], from, to) && !u->broken)
			index_node(u, g, k);
	}
	/* a failed push left to's list short: from here on queries scan */
}
