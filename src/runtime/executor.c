/*
 * executor.c
 *	  Plans and the execution loop, including subgraph runs for control
 *	  flow kernels.
 */
#include "runtime/exec.h"
#include "runtime/memo.h"
#include "runtime/placement.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- buffer pool (buffer_pool.c holds it) ---------------------------- */

/* A pooled buffer for t if one fits what ox_tensor_alloc keeps (not > 4x + 4 KiB). */
static void
pool_supply(void *exec, ox_tensor *t, size_t bytes)
{
	ox_session *s = exec;
	ox_buffer	b;

	if (!ox_pool_take(&s->pool, bytes, &b))
		return;
	ox_tensor_release(t);
	t->data = b.ptr;
	t->capacity = b.cap;
	t->owns = true;
}

/*
 * A small tensor keeps its buffer in its slot past its last use, for the
 * same value of the next run: a pool round trip (put here, take when the
 * node runs again) costs as much as a small model's kernels.  In the
 * in-query MLP's row-wise calls the pool's share was 2.5%, and every
 * structure it touched an L2 miss, the GEMV kernels having just streamed
 * the weights through L1.  Bounded per slot and per session (all its
 * plans: subgraphs too), so that larger values still share memory through
 * the pool.  The kernels see no difference: an output's buffer is reused
 * when it is big enough either way (ox_out_tensor), and a kept buffer
 * counts in the session's tensor bytes as a pooled one does.
 */
#define OX_KEEP_SLOT_BYTES 4096
#define OX_KEEP_SESSION_BYTES (256 * 1024)

static bool
keep_in_slot(ox_session *s, ox_env *env, int id)
{
	const ox_tensor *t = &env->vals[id].tensor;
	size_t		had = env->kept[id];
	size_t		cap = t->capacity;

	if (t->owns && t->data && t->dtype != OX_STRING && cap <= OX_KEEP_SLOT_BYTES &&
		s->kept_bytes - had + cap <= OX_KEEP_SESSION_BYTES)
	{
		s->kept_bytes += cap - had;
		env->kept[id] = cap;
		return true;
	}
	s->kept_bytes -= had;
	env->kept[id] = 0;
	return false;
}

void
ox_env_release_slot(ox_session *s, ox_env *env, int id)
{
	ox_value   *v = &env->vals[id];

	if (env->borrowed[id])
	{
		memset(v, 0, sizeof(*v));
		env->borrowed[id] = false;
		return;
	}
	if (v->kind == OX_VALUE_TENSOR && keep_in_slot(s, env, id))
		return;
	if (v->kind == OX_VALUE_TENSOR)
		ox_pool_put(&s->pool, &v->tensor);
	ox_value_release(v);
	v->kind = OX_VALUE_TENSOR;
}

/* ---- plans ------------------------------------------------------------ */

ox_plan *
ox_session_plan_for(ox_session *s, const ox_graph *g)
{
	for (int i = 0; i < s->n_plans; i++)
		if (s->plans[i].graph == g)
			return &s->plans[i];
	return NULL;
}

static void
bind_constants(ox_plan *p)
{
	const ox_graph *g = p->graph;

	for (int v = 0; v < g->n_values; v++)
		if (g->values[v].init)
		{
			ox_value_init_tensor(&p->env.vals[v]);
			ox_tensor_view(&p->env.vals[v].tensor, g->values[v].init);
			p->env.borrowed[v] = true;
		}
}

/*
 * Freeing the constants that every node reading them packed a copy of
 * (release_weights), each as soon as the last of those nodes is prepared:
 * the originals and the packed copies then never all exist at once (the
 * BERT-base encoder's creation peak: 742 MB above the baseline when freed
 * at the end, 426 MB as they go; onnxruntime 834 MB).  Not a graph input
 * (a default a feed could replace), a graph output, or one a subgraph
 * reads.  refs[v]: references to v by nodes not yet prepared, or -1 for
 * never.
 */
static int *
release_refs(const ox_graph *g)
{
	int		   *refs = calloc(g->n_values + 1, sizeof(int));

	if (!refs)
		return NULL;			/* keeping them is always correct */
	for (int v = 0; v < g->n_values; v++)
	{
		const ox_value_def *d = &g->values[v];

		if (!d->init || d->is_input || d->is_output || d->init->dtype == OX_STRING)
			refs[v] = -1;
	}
	for (int k = 0; k < g->n_nodes; k++)
	{
		const ox_node *node = &g->nodes[k];

		for (int i = 0; i < node->n_inputs; i++)
			if (node->inputs[i] >= 0 && refs[node->inputs[i]] >= 0)
				refs[node->inputs[i]]++;
		for (int i = 0; i < node->n_implicit; i++)
			if (node->implicit_inputs[i] >= 0)
				refs[node->implicit_inputs[i]] = -1;
	}
	return refs;
}

/* node k, just prepared, packed copies of the inputs in its releasable mask */
static void
release_packed_inputs(ox_plan *p, const ox_graph *g, int k, uint64_t releasable, int *refs)
{
	const ox_node *node = &g->nodes[k];

	for (int i = 0; i < node->n_inputs && i < 64; i++)
	{
		int			v = node->inputs[i];
		ox_tensor  *t;

		if (v < 0 || refs[v] < 0)
			continue;
		if (!(releasable & ((uint64_t) 1 << i)))
		{
			refs[v] = -1;		/* this node reads it as it is */
			continue;
		}
		if (--refs[v] > 0)
			continue;
		t = g->values[v].init;
		if (!t->owns || !t->data || t->released)
			continue;
		ox_aligned_free(t->data);
		t->data = NULL;
		t->capacity = 0;
		t->owns = false;
		t->released = true;
		ox_tensor_view(&p->env.vals[v].tensor, t);
	}
}

/*
 * The inputs of node k whose buffers the node may take (ox_plan.movable): a
 * value some node produced (not a constant, a feed or an outer-scope view),
 * not a graph output, last used by k, and read by k through that input
 * alone (not twice, not from a subgraph).  Whether the buffer is the
 * value's own is checked at run time (ox_tensor.owns).
 */
static uint64_t
movable_inputs(const ox_graph *g, int k, const int *last_use)
{
	const ox_node *node = &g->nodes[k];
	uint64_t	mask = 0;

	for (int i = 0; i < node->n_inputs && i < 64; i++)
	{
		int			v = node->inputs[i];
		bool		once = true;

		if (v < 0 || g->values[v].producer < 0 || g->values[v].is_output || last_use[v] != k)
			continue;
		for (int j = 0; j < ox_node_n_reads(node) && once; j++)
			if (j != i && ox_node_read(node, j) == v)
				once = false;
		if (once)
			mask |= (uint64_t) 1 << i;
	}
	return mask;
}

/*
 * The outputs of node k that even a run of every node does without (ox_plan.unread):
 * omitted, or read by no node (their last use is their producer) and not
 * graph outputs
 */
static uint64_t
unread_outputs(const ox_graph *g, int k, const int *last_use)
{
	const ox_node *node = &g->nodes[k];
	uint64_t	mask = 0;

	for (int o = 0; o < node->n_outputs && o < 64; o++)
	{
		int			v = node->outputs[o];

		if (v < 0 || (!g->values[v].is_output && last_use[v] == k))
			mask |= (uint64_t) 1 << o;
	}
	return mask;
}

ox_code
ox_plan_build(ox_session *s, ox_plan *p, const ox_graph *g, ox_status *st)
{
	int			n = g->n_nodes;
	int		   *last_use = NULL;
	int			n_scratch = 0;
	int			k_scratch = 0;
	int		   *release = NULL;

	memset(p, 0, sizeof(*p));
	p->graph = g;
	p->kernels = calloc(n + 1, sizeof(*p->kernels));
	p->states = calloc(n + 1, sizeof(void *));
	p->rel_start = calloc(n + 2, sizeof(int));
	p->rel_ids = calloc(g->n_values + 1, sizeof(int));
	p->movable = calloc(n + 1, sizeof(uint64_t));
	p->unread = calloc(n + 1, sizeof(uint64_t));
	p->outer_parent = calloc(g->n_outer + 1, sizeof(int));
	p->env.vals = calloc(g->n_values + 1, sizeof(ox_value));
	p->env.borrowed = calloc(g->n_values + 1, sizeof(bool));
	p->env.kept = calloc(g->n_values + 1, sizeof(size_t));
	p->env.in_ptrs = calloc(n + 1, sizeof(ox_value **));
	p->env.out_ptrs = calloc(n + 1, sizeof(ox_value **));
	last_use = malloc(sizeof(int) * (g->n_values + 1));
	if (!p->kernels || !p->states || !p->rel_start || !p->rel_ids || !p->movable || !p->unread ||
		!p->outer_parent || !p->env.vals || !p->env.borrowed || !p->env.kept || !p->env.in_ptrs ||
		!p->env.out_ptrs || !last_use)
		goto oom;

	for (int i = 0; i < g->n_outer; i++)
	{
		const ox_value_def *ov = &g->values[g->outer[i]];

		p->outer_parent[i] = g->parent ? ox_graph_find_value(g->parent, ov->name) : -1;
		if (p->outer_parent[i] < 0)
		{
			free(last_use);
			free(release);
			return ox_fail(st, OX_INVALID_MODEL, "subgraph value \"%s\" is not defined in an enclosing graph",
						   ov->name);
		}
	}
	for (int v = 0; v < g->n_values; v++)
		ox_value_init_tensor(&p->env.vals[v]);
	bind_constants(p);
	/* partition bodies share the main graph's constants: keep them all then */
	if (s->opts.release_weights && s->n_partitions == 0)
		release = release_refs(g);

	/* kernels and prepared states */
	for (int k = 0; k < n; k++)
	{
		const ox_node *node = &g->nodes[k];
		ox_prepare_ctx pc;

		memset(&pc, 0, sizeof(pc));
		p->kernels[k] = ox_kernel_find(node->domain, node->op_type, node->opset);
		if (!p->kernels[k])
		{
			free(last_use);
			free(release);
			return ox_fail(st, OX_UNSUPPORTED, "operator %s%s%s (opset %d) is not supported",
						   node->domain[0] ? node->domain : "", node->domain[0] ? "." : "",
						   node->op_type, node->opset);
		}
		if (p->kernels[k]->prepare)
		{
			/* prepare packs weights: thousands of nodes take seconds */
			if (s->opts.should_abort && s->opts.should_abort(s->opts.abort_arg))
			{
				free(last_use);
				free(release);
				return ox_fail(st, OX_CANCELED, "session creation was canceled");
			}
			pc.node = node;
			pc.graph = g;
			pc.st = st;
			pc.device = s->device;
			pc.nthreads = s->opts.intra_op_threads;
			if (ox_kernel_prepare(p->kernels[k], &pc) != OX_OK)
			{
				free(last_use);
				free(release);
				if (st->code == OX_OK)
					ox_fail(st, OX_INTERNAL, "kernel prepare failed without a message");
				ox_status_set_node(st, node->name, node->op_type);
				return st->code;
			}
			p->states[k] = pc.state;
		}
		if (release)
			release_packed_inputs(p, g, k, pc.releasable, release);
		for (int o = 0; o < node->n_outputs; o++)
			if (node->outputs[o] < 0)
				n_scratch++;
	}
	free(release);
	release = NULL;
	p->env.scratch = calloc(n_scratch + 1, sizeof(ox_value));
	if (!p->env.scratch)
		goto oom;

	/* pointer tables so that a run does no per-node setup */
	for (int k = 0; k < n; k++)
	{
		const ox_node *node = &g->nodes[k];

		p->env.in_ptrs[k] = calloc(node->n_inputs + 1, sizeof(ox_value *));
		p->env.out_ptrs[k] = calloc(node->n_outputs + 1, sizeof(ox_value *));
		if (!p->env.in_ptrs[k] || !p->env.out_ptrs[k])
			goto oom;
		for (int i = 0; i < node->n_inputs; i++)
			p->env.in_ptrs[k][i] = node->inputs[i] >= 0 ? &p->env.vals[node->inputs[i]] : NULL;
		for (int o = 0; o < node->n_outputs; o++)
		{
			if (node->outputs[o] >= 0)
				p->env.out_ptrs[k][o] = &p->env.vals[node->outputs[o]];
			else
			{
				ox_value_init_tensor(&p->env.scratch[k_scratch]);
				p->env.out_ptrs[k][o] = &p->env.scratch[k_scratch++];
			}
		}
	}

	/*
	 * Last use of each node-produced value: the last node reading it
	 * (explicitly or from a subgraph), or its producer when nothing reads it.
	 * Graph outputs are never released: the caller reads them.
	 */
	for (int v = 0; v < g->n_values; v++)
		last_use[v] = -1;
	for (int k = 0; k < n; k++)
	{
		const ox_node *node = &g->nodes[k];

		for (int i = 0; i < ox_node_n_reads(node); i++)
		{
			int			v = ox_node_read(node, i);

			if (v >= 0)
				last_use[v] = k;
		}
		for (int o = 0; o < node->n_outputs; o++)
			if (node->outputs[o] >= 0 && last_use[node->outputs[o]] < k)
				last_use[node->outputs[o]] = k;
	}
	for (int v = 0; v < g->n_values; v++)
		if (g->values[v].producer >= 0 && !g->values[v].is_output && last_use[v] >= 0)
			p->rel_start[last_use[v] + 1]++;
	for (int k = 0; k < n; k++)
		p->rel_start[k + 1] += p->rel_start[k];
	{
		int		   *fill = calloc(n + 1, sizeof(int));

		if (!fill)
			goto oom;
		for (int v = 0; v < g->n_values; v++)
			if (g->values[v].producer >= 0 && !g->values[v].is_output && last_use[v] >= 0)
				p->rel_ids[p->rel_start[last_use[v]] + fill[last_use[v]]++] = v;
		free(fill);
	}
	for (int k = 0; k < n; k++)
	{
		p->movable[k] = movable_inputs(g, k, last_use);
		p->unread[k] = unread_outputs(g, k, last_use);
	}
	free(last_use);
	free(release);
	if (g == s->model->graph && !s->opts.disable_shape_memo)
		return ox_memo_build(p, st);
	return OX_OK;

oom:
	free(last_use);
	free(release);
	return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate an execution plan");
}

void
ox_plan_free(ox_plan *p)
{
	const ox_graph *g = p->graph;

	if (!g)
		return;
	for (int k = 0; k < g->n_nodes; k++)
	{
		if (p->states && p->states[k] && p->kernels[k] && p->kernels[k]->free_state)
			p->kernels[k]->free_state(p->states[k]);
		if (p->env.in_ptrs)
			free(p->env.in_ptrs[k]);
		if (p->env.out_ptrs)
		{
			for (int o = 0; o < g->nodes[k].n_outputs; o++)
				if (g->nodes[k].outputs[o] < 0 && p->env.out_ptrs[k] && p->env.out_ptrs[k][o])
					ox_value_release(p->env.out_ptrs[k][o]);
			free(p->env.out_ptrs[k]);
		}
	}
	if (p->env.vals)
		for (int v = 0; v < g->n_values; v++)
			if (!p->env.borrowed[v])
				ox_value_release(&p->env.vals[v]);
	free(p->env.vals);
	free(p->env.borrowed);
	free(p->env.kept);
	free(p->env.scratch);
	free(p->env.in_ptrs);
	free(p->env.out_ptrs);
	free(p->kernels);
	free(p->states);
	free(p->rel_start);
	free(p->rel_ids);
	free(p->movable);
	free(p->unread);
	free(p->outer_parent);
	ox_memo_free(p->memo);
	memset(p, 0, sizeof(*p));
}

/* ---- execution -------------------------------------------------------- */

static ox_code run_subgraph(ox_kernel_ctx *ctx, const ox_graph *g, ox_value *const *inputs,
							int n_inputs, ox_value *outputs, ox_status *st);

typedef struct exec_frame
{
	ox_session *s;
	ox_env	   *env;
} exec_frame;

static void
frame_supply(void *exec, ox_tensor *t, size_t bytes)
{
	pool_supply(((exec_frame *) exec)->s, t, bytes);
}

static void
record_profile(ox_node_profile *np, const ox_node *node, ox_value **outs, struct timespec t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	np->name = node->name;
	np->op_type = node->op_type;
	np->fused_from = node->fused_from;
	np->provider = ox_node_provider(node, &np->partition_nodes, &np->partition_first,
									&np->partition_last);
	np->ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	np->out_bytes = 0;
	np->out_rank = -1;
	np->out_dtype = OX_UNDEFINED;
	for (int o = 0; o < node->n_outputs; o++)
	{
		const ox_value *v = outs[o];

		if (!v || v->kind != OX_VALUE_TENSOR)
			continue;
		if (o == 0)
		{
			np->out_dtype = v->tensor.dtype;
			np->out_rank = v->tensor.rank;
			memcpy(np->out_dims, v->tensor.dims, sizeof(int64_t) * v->tensor.rank);
		}
		if (ox_tensor_numel(&v->tensor) > 0)
			np->out_bytes += (size_t) ox_tensor_numel(&v->tensor) * ox_dtype_size(v->tensor.dtype);
	}
}

static ox_code plan_run(ox_session *s, ox_plan *p, ox_env *parent, const ox_run_subset *subset,
						ox_status *st);

/* the values whose last use is node k, but those a targeted run keeps and those the memo holds */
static inline void
release_after(ox_session *s, ox_plan *p, int k, const bool *keep)
{
	for (int r = p->rel_start[k]; r < p->rel_start[k + 1]; r++)
	{
		int			id = p->rel_ids[r];

		if ((!keep || !keep[id]) && !(p->memo && ox_memo_holds(p->memo, p->graph, id)))
			ox_env_release_slot(s, &p->env, id);
	}
}

ox_code
ox_plan_run(ox_session *s, ox_plan *p, ox_env *parent, const ox_run_subset *subset, ox_status *st)
{
	ox_code		rc;

	/* a top-level run on several threads keeps the pool's workers awake between its loops */
	if (parent || s->run_threads <= 1)
		return plan_run(s, p, parent, subset, st);
	ox_parallel_run_begin();
	rc = plan_run(s, p, parent, subset, st);
	ox_parallel_run_end();
	return rc;
}

static ox_code
plan_run(ox_session *s, ox_plan *p, ox_env *parent, const ox_run_subset *subset, ox_status *st)
{
	const ox_graph *g = p->graph;
	const bool *nodes = subset ? subset->nodes : NULL;
	const bool *keep = subset ? subset->keep : NULL;
	const uint64_t *unread = subset ? subset->unread : p->unread;
	ox_env	   *env = &p->env;
	ox_memo    *memo = p->memo;
	exec_frame	frame;
	ox_kernel_ctx ctx;

	frame.s = s;
	frame.env = env;
	env->parent = parent;

	/* outer-scope values: views of the enclosing environment's slots */
	for (int i = 0; i < g->n_outer; i++)
	{
		int			id = g->outer[i];

		if (!parent)
			return ox_fail(st, OX_INTERNAL, "subgraph run without an enclosing environment");
		if (!env->borrowed[id])
			ox_value_release(&env->vals[id]);
		env->vals[id] = parent->vals[p->outer_parent[i]];
		env->vals[id].tensor.owns = false;
		env->vals[id].tensor.capacity = 0;
		env->borrowed[id] = true;
	}

	if (!parent)
		s->run_new_bytes = 0;	/* a new top-level run (subgraphs add to it) */
	/*
	 * Every field assigned, the per-node ones in the loop below: GCC makes
	 * the zeroing of a compound literal or memset a rep stos, whose start
	 * was a third of this function's time in a tree ensemble's row-wise run
	 * (13 ns of 280).  A field added to ox_kernel_ctx must be set here.
	 */
	ctx.node = NULL;
	ctx.graph = g;
	ctx.in = NULL;
	ctx.n_in = 0;
	ctx.out = NULL;
	ctx.n_out = 0;
	ctx.state = NULL;
	ctx.st = st;
	ctx.nthreads = s->run_threads > 0 ? s->run_threads : 1;
	ctx.run_subgraph = run_subgraph;
	ctx.exec = &frame;
	ctx.supply_buffer = frame_supply;
	ctx.should_abort = s->opts.should_abort;
	ctx.abort_arg = s->opts.abort_arg;
	ctx.alloc_events = &s->alloc_events;
	ctx.run_new_bytes = &s->run_new_bytes;
	ctx.run_memory_limit = s->opts.max_run_memory;
	ctx.ws_bytes = 0;
	ctx.canceled = false;
	ctx.unread = 0;
	ctx.movable = 0;
	_Static_assert(offsetof(ox_kernel_ctx, movable) + sizeof(ctx.movable) == sizeof(ox_kernel_ctx),
				   "plan_run sets every field of ox_kernel_ctx, the last one being movable");

	for (int k = 0; k < g->n_nodes; k++)
	{
		const ox_node *node = &g->nodes[k];
		const ox_kernel_def *kernel = p->kernels[k];
		ox_code		rc;
		struct timespec t0;
		bool		timed = s->profiling && p == s->main && k < s->n_profile;

		if (nodes && !nodes[k])
			continue;
		if (timed)
			clock_gettime(CLOCK_MONOTONIC, &t0);
		if (memo && ox_memo_skip(memo, p, k))
		{
			if (timed)
				record_profile(&s->profile[k], node, env->out_ptrs[k], t0);
			s->stats.memo_skips++;
			release_after(s, p, k, keep);
			continue;
		}
		if (s->opts.should_abort && s->opts.should_abort(s->opts.abort_arg))
			return ox_fail(st, OX_CANCELED, "the run was canceled");
		ctx.node = node;
		ctx.in = env->in_ptrs[k];
		ctx.n_in = node->n_inputs;
		ctx.out = env->out_ptrs[k];
		ctx.n_out = node->n_outputs;
		ctx.state = p->states[k];
		ctx.ws_bytes = 0;
		ctx.unread = unread[k];
		/* a targeted run keeps some values past their last use: take none */
		ctx.movable = keep ? 0 : p->movable[k];
		{
			ox_kernel_ctx *outer = ox_kernel_current();

			ox_kernel_set_current(&ctx);
			rc = kernel->run(&ctx);
			ox_kernel_set_current(outer);
		}
		/* a helper deep in a kernel may have failed without the kernel noticing */
		if (rc == OX_OK && st->code != OX_OK)
			rc = st->code;
		/* after a kernel that streamed its weights, each value looked at is a cache miss */
		if (rc == OX_OK && ctx.run_memory_limit && !kernel->tensor_outputs)
			rc = ox_check_output_values(&ctx);
		if (rc != OX_OK)
		{
			if (st->code == OX_OK)
				ox_fail(st, rc, "kernel failed without a message");
			ox_status_set_node(st, node->name, node->op_type);
			return st->code;
		}
		if (memo)
			ox_memo_store(memo, p, k);
		if (timed)
			record_profile(&s->profile[k], node, env->out_ptrs[k], t0);
		release_after(s, p, k, keep);
	}
	if (s->opts.max_run_memory && s->pool.bytes > s->opts.max_run_memory)
		ox_pool_free(&s->pool);
	return OX_OK;
}

/*
 * Run a subgraph for a control-flow kernel.  Inputs are bound as views;
 * outputs are moved out (or copied when the subgraph merely passes through a
 * value it does not own).
 */
static ox_code
run_subgraph(ox_kernel_ctx *ctx, const ox_graph *g, ox_value *const *inputs, int n_inputs,
			 ox_value *outputs, ox_status *st)
{
	exec_frame *frame = ctx->exec;
	ox_session *s = frame->s;
	ox_plan    *p = ox_session_plan_for(s, g);
	ox_code		rc;

	if (!p)
		return ox_fail(st, OX_INTERNAL, "no plan for subgraph \"%s\"", g->name);
	if (p->running)
		return ox_fail(st, OX_INVALID_MODEL, "subgraph \"%s\" runs itself recursively", g->name);
	if (n_inputs > g->n_inputs)
		return ox_fail(st, OX_INVALID_ARGUMENT, "subgraph \"%s\" takes %d inputs, got %d",
					   g->name, g->n_inputs, n_inputs);
	for (int i = 0; i < g->n_inputs; i++)
	{
		int			id = g->inputs[i];

		if (!p->env.borrowed[id])
			ox_value_release(&p->env.vals[id]);
		if (i < n_inputs && inputs[i])
		{
			p->env.vals[id] = *inputs[i];
			p->env.vals[id].tensor.owns = false;
			p->env.vals[id].tensor.capacity = 0;
			p->env.vals[id].seq_cap = 0;
		}
		else
		{
			memset(&p->env.vals[id], 0, sizeof(ox_value));
			p->env.vals[id].kind = OX_VALUE_NONE;
		}
		p->env.borrowed[id] = true;
	}
	p->running = true;
	rc = ox_plan_run(s, p, frame->env, NULL, st);
	p->running = false;
	if (rc != OX_OK)
		return rc;
	for (int i = 0; i < g->n_outputs; i++)
	{
		int			id = g->outputs[i];

		if (p->env.borrowed[id])
			OX_TRY(ox_value_copy(&outputs[i], &p->env.vals[id], st));
		else
		{
			ox_value_release(&outputs[i]);
			outputs[i] = p->env.vals[id];
			memset(&p->env.vals[id], 0, sizeof(ox_value));
			p->env.vals[id].kind = OX_VALUE_TENSOR;
		}
	}
	/* the same value may be listed twice as an output: moved once, now empty */
	return OX_OK;
}
