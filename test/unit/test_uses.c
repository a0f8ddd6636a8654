/*
 * test_uses.c
 *	  The optimizer's use index (src/model/uses.c) against the scan it
 *	  replaces: a random graph is rewritten thousands of times in every way
 *	  the passes rewrite graphs (an input written in place or a whole input
 *	  list replaced, each followed by ox_uses_node_changed; nodes added or
 *	  marked dead; ox_graph_replace_uses; new values; node indices changed),
 *	  and after each rewrite every value's sole consumer and its readers in
 *	  node order must be the same with the index on as with it off.  Built with OX_CHECK_USES (make -C
 *	  fuzz unit-asan), it also checks that a write the index was not told
 *	  of is reported as OX_INTERNAL.
 */
#include "model/ir.h"
#include "model/uses.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int	failures;

#define CHECK(cond) do { if (!(cond)) { printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); failures++; } } while (0)

static unsigned int rng_state = 12345;

static int
rnd(int n)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return (int) ((rng_state >> 8) % (unsigned int) n);
}

/* a value id, or now and then an omitted input (-1) */
static int
random_input(const ox_graph *g)
{
	return rnd(12) == 0 ? -1 : rnd(g->n_values);
}

static int *
random_inputs(const ox_graph *g, int n)
{
	int		   *in = malloc(sizeof(int) * (size_t) (n + 1));

	for (int i = 0; i < n; i++)
		in[i] = random_input(g);
	return in;
}

static void
add_random_node(ox_graph *g, ox_status *st)
{
	ox_node    *n = ox_graph_add_node(g, st);

	n->name = "n";
	n->op_type = "Op";
	n->n_inputs = 1 + rnd(3);
	n->inputs = random_inputs(g, n->n_inputs);
	if (rnd(8) == 0)
	{
		n->n_implicit = 1;
		n->implicit_inputs = random_inputs(g, 1);
	}
}

static bool
odd_or_even(const ox_graph *g, int k, const void *arg)
{
	(void) g;
	return (k & 1) == *(const int *) arg;
}

/*
 * every value's sole consumer and readers, with the index on and off,
 * agree; false at the first difference
 */
static bool
index_agrees(ox_graph *g)
{
	ox_uses    *u = g->uses;

	/* -1 too: an omitted input, never indexed */
	for (int v = -1; v < g->n_values; v++)
	{
		int			indexed = ox_graph_sole_consumer(g, v),
					scanned;

		g->uses = NULL;
		scanned = ox_graph_sole_consumer(g, v);
		g->uses = u;
		if (indexed != scanned)
		{
			printf("value %d: index says %d, scan says %d\n", v, indexed, scanned);
			return false;
		}
		/* its readers in node order, walked both ways; the predicate takes every other node */
		for (int after = -1;;)
		{
			int			parity = after & 1;

			indexed = ox_graph_next_reader(g, v, after, odd_or_even, &parity);
			g->uses = NULL;
			scanned = ox_graph_next_reader(g, v, after, odd_or_even, &parity);
			g->uses = u;
			if (indexed != scanned)
			{
				printf("value %d after node %d: index says %d, scan says %d\n", v, after, indexed, scanned);
				return false;
			}
			if (indexed < 0)
				break;
			after = indexed;
		}
	}
	return true;
}

static bool
reads(const ox_node *n, int v)
{
	for (int i = 0; i < n->n_inputs; i++)
		if (n->inputs[i] == v)
			return true;
	for (int i = 0; i < n->n_implicit; i++)
		if (n->implicit_inputs[i] == v)
			return true;
	return false;
}

/* sole consumers found and missed both: the graph is small enough for both to occur */
static void
test_random_rewrites(void)
{
	ox_status	st;
	ox_model   *m;
	ox_graph   *g;
	int			sole = 0,
				none_or_many = 0;

	ox_status_clear(&st);
	m = ox_model_new(&st);
	g = ox_graph_new(m, NULL, &st);
	for (int v = 0; v < 40; v++)
		ox_graph_add_value(g, ox_model_unique_name(m, "v"), &st);
	for (int k = 0; k < 30; k++)
		add_random_node(g, &st);
	CHECK(ox_uses_begin(g, &st) == OX_OK);
	/* before the first query: the index is built from the graph as it is then */
	g->nodes[0].inputs[0] = 7;
	CHECK(index_agrees(g));

	for (int step = 0; step < 4000 && failures == 0; step++)
	{
		int			k = rnd(g->n_nodes);
		ox_node    *n = &g->nodes[k];

		switch (rnd(9))
		{
			case 0:				/* one input written in place */
			case 1:
				n->inputs[rnd(n->n_inputs)] = random_input(g);
				ox_uses_node_changed(g, k);
				break;
			case 2:				/* a new input list (a fusion's) */
				free(n->inputs);
				n->n_inputs = 1 + rnd(4);
				n->inputs = random_inputs(g, n->n_inputs);
				ox_uses_node_changed(g, k);
				break;
			case 3:				/* a subgraph now reads another outer value */
				if (n->n_implicit)
				{
					n->implicit_inputs[0] = random_input(g);
					ox_uses_node_changed(g, k);
				}
				break;
			case 4:
				n->dead = true;
				break;
			case 5:				/* a pass's new node, its inputs set before any query */
				add_random_node(g, &st);
				break;
			case 6:
				{
					int			from = rnd(g->n_values + 1) - 1,
								to = rnd(g->n_values);

					ox_graph_replace_uses(g, from, to);
					if (from != to)
						for (int j = 0; j < g->n_nodes; j++)
							CHECK(g->nodes[j].dead || !reads(&g->nodes[j], from));
				}
				break;
			case 7:				/* a new value (an initializer a pass made), then a reader */
				ox_graph_add_value(g, ox_model_unique_name(m, "v"), &st);
				n->inputs[0] = g->n_values - 1;
				ox_uses_node_changed(g, k);
				break;
			case 8:				/* as ox_graph_analyze does when it compacts and sorts */
				if (rnd(10) == 0)
					ox_uses_invalidate(g);
				break;
		}
		CHECK(index_agrees(g));
	}
	for (int v = 0; v < g->n_values; v++)
	{
		if (ox_graph_sole_consumer(g, v) >= 0)
			sole++;
		else
			none_or_many++;
	}
	CHECK(sole > 0 && none_or_many > 0);
	CHECK(ox_uses_end(g, "test", &st) == OX_OK);
	CHECK(g->uses == NULL);
	ox_model_free(m);
}

/* a chain a -> b -> c; b's reader moved without telling the index */
static void
test_missed_write(void)
{
	ox_status	st;
	ox_model   *m;
	ox_graph   *g;
	int			a,
				b,
				c;
	ox_node    *n;

	ox_status_clear(&st);
	m = ox_model_new(&st);
	g = ox_graph_new(m, NULL, &st);
	a = ox_graph_add_value(g, "a", &st);
	b = ox_graph_add_value(g, "b", &st);
	c = ox_graph_add_value(g, "c", &st);
	for (int k = 0; k < 2; k++)
	{
		n = ox_graph_add_node(g, &st);
		n->name = "n";
		n->op_type = "Op";
		n->n_inputs = 1;
		n->inputs = malloc(sizeof(int));
		n->inputs[0] = k == 0 ? a : b;
	}
	(void) c;
	CHECK(ox_uses_begin(g, &st) == OX_OK);
	CHECK(ox_graph_sole_consumer(g, a) == 0 && ox_graph_sole_consumer(g, b) == 1);
	CHECK(ox_uses_check(g, "test", &st) == OX_OK);
	/* node 1 now reads a too, and the index is not told */
	g->nodes[1].inputs[0] = a;
#ifdef OX_CHECK_USES
	/* the checked build answers as the scan does, and reports the miss */
	CHECK(ox_graph_sole_consumer(g, a) == -1);
	CHECK(ox_uses_check(g, "test", &st) == OX_INTERNAL);
	CHECK(strstr(st.msg, "pass test") && strstr(st.msg, "\"a\""));
#else
	/* what the checked build catches: the index still has a's one reader */
	CHECK(ox_graph_sole_consumer(g, a) == 0);
	ox_uses_node_changed(g, 1);
	CHECK(ox_graph_sole_consumer(g, a) == -1);
#endif
	CHECK(ox_uses_end(g, "test", &st) == OX_OK);
	/* off: the scan */
	CHECK(ox_graph_sole_consumer(g, a) == -1 && ox_graph_sole_consumer(g, b) == -1);
	ox_model_free(m);
}

int
main(void)
{
	test_random_rewrites();
	test_missed_write();
	if (failures)
	{
		printf("%d failure(s)\n", failures);
		return 1;
	}
	printf("test_uses: all passed\n");
	return 0;
}
