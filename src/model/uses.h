/*
 * uses.h
 *	  Who consumes each value of a graph, kept while the optimizer rewrites
 *	  it, so that "the sole consumer of v" costs the consumers of v, not a
 *	  scan of every node (which made the optimizer quadratic in the graph's
 *	  size).
 *
 * The index is on between ox_uses_begin and ox_uses_end (ox_optimize holds
 * it around its passes); elsewhere ox_graph_sole_consumer scans.  It is a
 * superset of the truth: each query checks every listed node's inputs as
 * the scan would, so entries a rewrite made stale (an input replaced, a
 * node marked dead) cost nothing but the check.  What it cannot see is a
 * new use: nodes added since it was built are indexed at the next query,
 * ox_graph_replace_uses keeps it itself, and a pass that writes an
 * existing node's inputs in place calls ox_uses_node_changed after.  A
 * build with OX_CHECK_USES (the sanitizer builds of fuzz/) answers every
 * query both ways and fails the pass with OX_INTERNAL when they differ, so
 * a missed call shows up in the tests instead of as a wrong fusion.
 */
#ifndef OX_MODEL_USES_H
#define OX_MODEL_USES_H

#include "model/ir.h"

/* turn the index on for g (built at its first query); OX_OUT_OF_MEMORY only */
ox_code		ox_uses_begin(ox_graph *g, ox_status *st);

/*
 * Turn it off and free it.  With OX_CHECK_USES, OX_INTERNAL (naming pass)
 * when a query since the last call disagreed with the scan; else OX_OK.
 */
ox_code		ox_uses_end(ox_graph *g, const char *pass, ox_status *st);

/* as ox_uses_end, but the index stays on */
ox_code		ox_uses_check(ox_graph *g, const char *pass, ox_status *st);

/* node indices changed (compaction, sorting): rebuilt at the next query */
void		ox_uses_invalidate(ox_graph *g);

/* node k's inputs or implicit inputs were written: index its uses again */
void		ox_uses_node_changed(ox_graph *g, int k);

/*
 * The single node consuming value v as a plain input, or -1 when none, more
 * than one, or a subgraph (implicit input) reads it
 */
int			ox_graph_sole_consumer(const ox_graph *g, int v);

/*
 * The first node after node `after` (-1: from the start), in node order,
 * that reads v as a plain input or through a subgraph and that pred
 * accepts (NULL: any); -1 when there is none.  Successive calls with after
 * the last answer walk v's readers in node order.
 */
typedef bool (*ox_reader_pred) (const ox_graph *g, int k, const void *arg);
int			ox_graph_next_reader(const ox_graph *g, int v, int after, ox_reader_pred pred, const void *arg);

/* replace every use of value from by to (node inputs; graph outputs keep names) */
void		ox_graph_replace_uses(ox_graph *g, int from, int to);

#endif							/* OX_MODEL_USES_H */
