/*
 * memo.c
 *	  The shape memo: a run skips the nodes that compute shapes when the
 *	  shapes they start from are those of the run before.
 *
 * Exporters compute shapes inside the graph.  PyTorch's and Hugging Face's
 * transformer exports rebuild every Reshape's target from Shape, Gather,
 * Unsqueeze and Concat at every run (a 2-layer BERT: 27 Shape nodes and 80
 * more after them, for 8 matrix products), and at batch 1 those small
 * nodes cost a tenth of the run.  Their results depend only on the shapes
 * of the tensors the Shape nodes read, which repeat from run to run when
 * the input shapes do.
 *
 * Which nodes (fixed when the main graph's plan is built):
 *	 - a shape node: Shape or Size, whose output depends on its input's
 *	   dimensions only;
 *	 - a derived node: every input a constant (not a graph input, which a
 *	   feed may replace) or the output of a memo node.
 * Both deterministic (not random, no subgraph, no outer-scope input), in
 * the default domain, with no graph output among their outputs.
 *
 * A run skips a memo node whose outputs an earlier run left (valid): a
 * shape node when its input has the dimensions it had then, a derived node
 * when each memo node it reads has not computed again since it last ran
 * (every computation of a memo node takes a new version number, and a
 * derived node keeps the versions it read).  So any change upstream,
 * including shapes that depend on data (NonZero, a Reshape to a computed
 * shape), recomputes exactly what follows from it, whatever happened in
 * between: a run of selected nodes (row-wise SQL calls compute only the
 * output asked for), or a run that failed part way (a node about to run is
 * not valid until it has).  The outputs stay in their slots between runs
 * (the release loop passes them by, and no consumer may take their
 * buffers), up to OX_MEMO_VALUE_BYTES an output and OX_MEMO_PLAN_BYTES in
 * all; a node past those computes every time.
 */
#include "runtime/exec.h"
#include "runtime/memo.h"

#include <stdlib.h>
#include <string.h>

#define OX_MEMO_VALUE_BYTES (64 * 1024)
#define OX_MEMO_PLAN_BYTES (1024 * 1024)

typedef enum memo_kind
{
	MEMO_NONE = 0,
	MEMO_SHAPE,					/* Shape or Size: keyed by its input's dimensions */
	MEMO_DERIVED				/* constants and memo outputs in */
} memo_kind;

typedef struct memo_dims
{
	int			rank;
	int64_t		dims[OX_MAX_RANK];
} memo_dims;

struct ox_memo
{
	uint8_t    *kind;			/* per node: memo_kind */
	bool	   *valid;			/* per node: its outputs are held from an earlier run */
	uint64_t   *version;		/* per node: clock when it last computed */
	uint64_t  **read;			/* per derived node and input: the version it read */
	size_t	   *bytes;			/* per node: what its held outputs take */
	int		   *dims_at;		/* per node: its entry in dims (shape nodes), else -1 */
	memo_dims  *dims;			/* a shape node's input dimensions when it ran */
	bool	   *held;			/* per value: a memo node's output */
	int			n_nodes;
	size_t		held_bytes;		/* bytes[] of the valid nodes, summed */
	uint64_t	clock;			/* memo computations so far */
};

static bool
memo_candidate(const ox_graph *g, const ox_node *n)
{
	if (n->domain[0] != '\0' || n->n_implicit > 0 || n->n_outputs < 1 || ox_node_is_random(n))
		return false;
	for (int a = 0; a < n->n_attrs; a++)
		if (n->attrs[a].type == OX_ATTR_GRAPH || n->attrs[a].type == OX_ATTR_GRAPHS)
			return false;
	for (int o = 0; o < n->n_outputs; o++)
		if (n->outputs[o] >= 0 && g->values[n->outputs[o]].is_output)
			return false;
	return true;
}

static memo_kind
classify(const ox_graph *g, const ox_node *n, const bool *held)
{
	if (!memo_candidate(g, n))
		return MEMO_NONE;
	if (strcmp(n->op_type, "Shape") == 0 || strcmp(n->op_type, "Size") == 0)
		return n->n_inputs == 1 && n->inputs[0] >= 0 ? MEMO_SHAPE : MEMO_NONE;
	for (int i = 0; i < n->n_inputs; i++)
	{
		int			v = n->inputs[i];

		if (v < 0 || held[v])
			continue;
		if (!g->values[v].init || g->values[v].is_input)
			return MEMO_NONE;
	}
	return MEMO_DERIVED;
}

void
ox_memo_free(ox_memo *m)
{
	if (!m)
		return;
	free(m->kind);
	free(m->valid);
	free(m->version);
	if (m->read)
		for (int k = 0; k < m->n_nodes; k++)
			free(m->read[k]);
	free(m->read);
	free(m->bytes);
	free(m->dims_at);
	free(m->dims);
	free(m->held);
	free(m);
}

ox_code
ox_memo_build(ox_plan *p, ox_status *st)
{
	const ox_graph *g = p->graph;
	int			n = g->n_nodes,
				n_memo = 0,
				n_shape = 0;
	ox_memo    *m = calloc(1, sizeof(*m));

	if (!m || !(m->kind = calloc(n + 1, 1)) || !(m->held = calloc(g->n_values + 1, sizeof(bool))))
		goto oom;
	for (int k = 0; k < n; k++)
	{
		const ox_node *node = &g->nodes[k];

		m->kind[k] = (uint8_t) classify(g, node, m->held);
		if (m->kind[k] == MEMO_NONE)
			continue;
		n_memo++;
		n_shape += m->kind[k] == MEMO_SHAPE;
		for (int o = 0; o < node->n_outputs; o++)
			if (node->outputs[o] >= 0)
				m->held[node->outputs[o]] = true;
	}
	if (n_memo == 0)
	{
		ox_memo_free(m);
		return OX_OK;
	}
	m->n_nodes = n;
	m->valid = calloc(n + 1, sizeof(bool));
	m->version = calloc(n + 1, sizeof(uint64_t));
	m->read = calloc(n + 1, sizeof(uint64_t *));
	m->bytes = calloc(n + 1, sizeof(size_t));
	m->dims_at = malloc(sizeof(int) * (size_t) (n + 1));
	m->dims = calloc(n_shape + 1, sizeof(memo_dims));
	if (!m->valid || !m->version || !m->read || !m->bytes || !m->dims_at || !m->dims)
		goto oom;
	for (int k = 0; k < n; k++)
		if (m->kind[k] == MEMO_DERIVED && !(m->read[k] = calloc(g->nodes[k].n_inputs + 1, sizeof(uint64_t))))
			goto oom;
	n_shape = 0;
	for (int k = 0; k < n; k++)
		m->dims_at[k] = m->kind[k] == MEMO_SHAPE ? n_shape++ : -1;
	/* a held value's buffer outlives the run: no consumer may take it */
	for (int k = 0; k < n; k++)
		for (int i = 0; i < g->nodes[k].n_inputs && i < 64; i++)
			if (g->nodes[k].inputs[i] >= 0 && m->held[g->nodes[k].inputs[i]])
				p->movable[k] &= ~((uint64_t) 1 << i);
	/* a node that wrote only some outputs would leave the memo half a result */
	for (int k = 0; k < n; k++)
		if (m->kind[k] != MEMO_NONE)
			p->unread[k] = 0;
	p->memo = m;
	return OX_OK;

oom:
	ox_memo_free(m);
	return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate an execution plan");
}

bool
ox_memo_node(const ox_memo *m, int k)
{
	return m->kind[k] != MEMO_NONE;
}

bool
ox_memo_holds(const ox_memo *m, const ox_graph *g, int v)
{
	return m->held[v] && m->valid[g->values[v].producer];
}

/* whether node k's outputs from an earlier run stand (and so it need not run) */
static bool
still_valid(const ox_memo *m, const ox_plan *p, int k)
{
	const ox_node *node = &p->graph->nodes[k];

	if (!m->valid[k])
		return false;
	if (m->kind[k] == MEMO_SHAPE)
	{
		const ox_value *x = p->env.in_ptrs[k][0];
		const memo_dims *d = &m->dims[m->dims_at[k]];

		return x && x->kind == OX_VALUE_TENSOR && x->tensor.rank == d->rank &&
			memcmp(x->tensor.dims, d->dims, sizeof(int64_t) * (size_t) d->rank) == 0;
	}
	for (int i = 0; i < node->n_inputs; i++)
	{
		int			v = node->inputs[i];
		int			from = v >= 0 && m->held[v] ? p->graph->values[v].producer : -1;

		if (from >= 0 && (!m->valid[from] || m->version[from] != m->read[k][i]))
			return false;
	}
	return true;
}

bool
ox_memo_skip(ox_memo *m, const ox_plan *p, int k)
{
	if (m->kind[k] == MEMO_NONE)
		return false;
	if (still_valid(m, p, k))
		return true;
	/* not valid until it has run: a failure leaves its outputs half made */
	if (m->valid[k])
		m->held_bytes -= m->bytes[k];
	m->valid[k] = false;
	m->bytes[k] = 0;
	return false;
}

void
ox_memo_store(ox_memo *m, const ox_plan *p, int k)
{
	const ox_graph *g = p->graph;
	const ox_node *node = &g->nodes[k];
	size_t		bytes = 0;
	bool		ok = true;

	if (m->kind[k] == MEMO_NONE)
		return;
	m->version[k] = ++m->clock;
	/* a derived node's outputs are worth keeping only with what they came from */
	for (int i = 0; m->kind[k] == MEMO_DERIVED && i < node->n_inputs; i++)
	{
		int			v = node->inputs[i];
		int			from = v >= 0 && m->held[v] ? g->values[v].producer : -1;

		m->read[k][i] = from >= 0 ? m->version[from] : 0;
		if (from >= 0 && !m->valid[from])
			ok = false;
	}
	for (int o = 0; o < node->n_outputs && ok; o++)
	{
		const ox_value *v = p->env.out_ptrs[k][o];
		const ox_tensor *t = &v->tensor;
		int64_t		numel;

		if (v->kind != OX_VALUE_TENSOR || t->dtype == OX_STRING)
		{
			ok = false;
			break;
		}
		numel = ox_tensor_numel(t);
		if (numel > 0 && !t->owns)
			ok = false;
		else if (numel > 0 && (size_t) numel * ox_dtype_size(t->dtype) > OX_MEMO_VALUE_BYTES)
			ok = false;
		else
			bytes += t->capacity;
	}
	if (!ok || m->held_bytes + bytes > OX_MEMO_PLAN_BYTES)
		return;
	if (m->kind[k] == MEMO_SHAPE)
	{
		const ox_value *x = p->env.in_ptrs[k][0];
		memo_dims  *d = &m->dims[m->dims_at[k]];

		if (!x || x->kind != OX_VALUE_TENSOR)
			return;
		d->rank = x->tensor.rank;
		memcpy(d->dims, x->tensor.dims, sizeof(int64_t) * (size_t) d->rank);
	}
	m->valid[k] = true;
	m->bytes[k] = bytes;
	m->held_bytes += bytes;
}
