/*
 * session.c
 *	  Session lifetime: optimize, check kernels, plan; run with input
 *	  validation; statistics; providers.
 */
#include "runtime/exec.h"
#include "runtime/memo.h"
#include "runtime/placement.h"
#include "model/passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double
now_ms(void)
{
	return ox_now_ns() / 1e6;
}

const char *
ox_available_providers(void)
{
#ifdef OX_WITH_CUDA
	return "cpu,cuda";
#else
	return "cpu";
#endif
}

ox_code
ox_parse_providers(const char *list, bool *want_cuda, ox_status *st)
{
	const char *p = list ? list : "cpu";

	if (want_cuda)
		*want_cuda = false;
	while (*p)
	{
		const char *start;
		size_t		len;

		while (*p == ' ' || *p == ',' || *p == '\t')
			p++;
		start = p;
		while (*p && *p != ',' && *p != ' ' && *p != '\t')
			p++;
		len = (size_t) (p - start);
		if (len == 0)
			continue;
		if (len == 3 && strncmp(start, "cpu", 3) == 0)
			continue;
		if (len == 4 && strncmp(start, "cuda", 4) == 0)
		{
			if (want_cuda)
				*want_cuda = true;
			continue;
		}
		return ox_fail(st, OX_NOT_FOUND, "unknown execution provider \"%.*s\"; valid providers are: cpu, cuda",
					   (int) len, start);
	}
	return OX_OK;
}

ox_code
ox_model_check_kernels(const ox_model *m, ox_status *st)
{
	char		list[OX_STATUS_MSG_LEN];
	size_t		off = 0;
	int			missing = 0;

	list[0] = '\0';
	for (int gi = 0; gi < m->n_graphs; gi++)
	{
		const ox_graph *g = m->graphs[gi];

		for (int k = 0; k < g->n_nodes; k++)
		{
			const ox_node *n = &g->nodes[k];
			char		item[192];

			if (ox_kernel_find(n->domain, n->op_type, n->opset))
				continue;
			snprintf(item, sizeof(item), "%s%s%s (opset %d)", n->domain[0] ? n->domain : "",
					 n->domain[0] ? "." : "", n->op_type, n->opset);
			/* list each operator once */
			if (strstr(list, item))
				continue;
			if (off < sizeof(list))
				off += snprintf(list + off, sizeof(list) - off, "%s%s", missing ? ", " : "", item);
			missing++;
		}
	}
	if (missing)
		return ox_fail(st, OX_UNSUPPORTED, "unsupported operator%s: %s", missing > 1 ? "s" : "", list);
	return OX_OK;
}

/* constant folding evaluator: run one node through its kernel */
static ox_code
eval_node(void *arg, const ox_graph *g, const ox_node *node, ox_value *outs, ox_status *st)
{
	const ox_kernel_def *k = ox_kernel_find(node->domain, node->op_type, node->opset);
	ox_prepare_ctx pc;
	ox_kernel_ctx ctx;
	ox_value   *in[64];
	ox_value	in_vals[64];
	ox_value   *out[64];
	ox_code		rc;
	size_t		new_bytes = 0;

	if (!k || node->n_inputs > 64 || node->n_outputs > 64 || node->n_implicit > 0)
		return OX_UNSUPPORTED;
	for (int i = 0; i < node->n_inputs; i++)
	{
		in[i] = NULL;
		if (node->inputs[i] >= 0)
		{
			const ox_tensor *t = g->values[node->inputs[i]].init;

			if (!t)
				return OX_UNSUPPORTED;
			ox_value_init_tensor(&in_vals[i]);
			ox_tensor_view(&in_vals[i].tensor, t);
			in[i] = &in_vals[i];
		}
	}
	for (int o = 0; o < node->n_outputs; o++)
		out[o] = &outs[o];
	memset(&pc, 0, sizeof(pc));
	pc.node = node;
	pc.graph = g;
	pc.st = st;
	if ((rc = ox_kernel_prepare(k, &pc)) != OX_OK)
		return rc;
	memset(&ctx, 0, sizeof(ctx));
	ctx.node = node;
	ctx.graph = g;
	ctx.in = in;
	ctx.n_in = node->n_inputs;
	ctx.out = out;
	ctx.n_out = node->n_outputs;
	ctx.state = pc.state;
	ctx.st = st;
	ctx.nthreads = 1;
	/* past this the result is not folded anyway (constant_fold.c) */
	ctx.run_memory_limit = OX_FOLD_EVAL_MAX_BYTES;
	ctx.run_new_bytes = &new_bytes;
	if (arg)
	{
		/* folding a big constant is as cancelable as running it */
		ctx.should_abort = ((const ox_session_options *) arg)->should_abort;
		ctx.abort_arg = ((const ox_session_options *) arg)->abort_arg;
	}
	{
		ox_kernel_ctx *outer = ox_kernel_current();

		ox_kernel_set_current(&ctx);
		rc = k->run(&ctx);
		ox_kernel_set_current(outer);
	}
	/* canceled half-way: the outputs are incomplete, never fold them */
	if (rc == OX_OK && st->code != OX_OK)
		rc = st->code;
	if (k->free_state && pc.state)
		k->free_state(pc.state);
	return rc;
}

/* test hook (placement.h): optimize like a session, partition for CUDA, no device */
ox_code
ox_cuda_place_dry(ox_model *m, int opt_level, int *n_partitions, ox_status *st)
{
	*n_partitions = 0;
	OX_TRY(ox_model_check_kernels(m, st));
	if (opt_level > OX_OPT_DISABLE)
	{
		ox_pass_ctx pc;

		memset(&pc, 0, sizeof(pc));
		pc.model = m;
		pc.eval = eval_node;
		OX_TRY(ox_optimize(&pc, opt_level, st));
	}
	return ox_cuda_partition_model(m, n_partitions, st);
}

ox_session *
ox_session_create(ox_model *m, const ox_session_options *opts, ox_status *st)
{
	ox_session *s;
	double		t0 = now_ms();
	int			nodes_before = 0;

	if (!m)
	{
		ox_fail(st, OX_INVALID_ARGUMENT, "no model given");
		return NULL;
	}
	s = calloc(1, sizeof(ox_session));
	if (!s)
	{
		ox_model_free(m);
		ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate a session");
		return NULL;
	}
	s->model = m;
	if (opts)
		s->opts = *opts;
	else
		s->opts.opt_level = OX_OPT_ALL;
	s->run_threads = s->opts.intra_op_threads > 0 ? s->opts.intra_op_threads : 1;
	s->providers = strdup(s->opts.providers ? s->opts.providers : "cpu");
	if (!s->providers)
	{
		ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate a session");
		goto fail;
	}
	s->opts.providers = s->providers;
	if (ox_parse_providers(s->providers, NULL, st) != OX_OK)
		goto fail;

	for (int gi = 0; gi < m->n_graphs; gi++)
		nodes_before += m->graphs[gi]->n_nodes;
	if (ox_model_check_kernels(m, st) != OX_OK)
		goto fail;
	if (s->opts.opt_level > OX_OPT_DISABLE)
	{
		ox_pass_ctx pc;

		memset(&pc, 0, sizeof(pc));
		pc.model = m;
		pc.eval = eval_node;
		pc.eval_arg = &s->opts;
		pc.should_abort = s->opts.should_abort;
		pc.abort_arg = s->opts.abort_arg;
		pc.cpu_layout = strstr(s->providers, "cuda") == NULL;
		pc.nchwc_block = s->opts.portable_graph ? 0 : ox_kernels_nchwc_block();
		pc.private_ops = pc.cpu_layout && !s->opts.portable_graph;
		if (ox_optimize(&pc, s->opts.opt_level, st) != OX_OK)
			goto fail;
	}

	if (ox_session_place(s, st) != OX_OK)
		goto fail;

	s->plans = calloc(m->n_graphs + 1, sizeof(ox_plan));
	if (!s->plans)
	{
		ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate a session");
		goto fail;
	}
	for (int gi = 0; gi < m->n_graphs; gi++)
	{
		s->n_plans++;
		/* partition bodies run inside their provider's kernel: no CPU plan */
		if (s->n_partitions > 0 && ox_graph_is_partition_body(m->graphs[gi]))
			continue;
		if (ox_plan_build(s, &s->plans[gi], m->graphs[gi], st) != OX_OK)
			goto fail;
		if (m->graphs[gi] == m->graph)
			s->main = &s->plans[gi];
	}
	if (!s->main)
	{
		ox_fail(st, OX_INTERNAL, "the model has no main graph");
		goto fail;
	}

	s->n_feeds = ox_model_feed_count(m);
	s->feed_ids = calloc(s->n_feeds + 1, sizeof(int));
	if (!s->feed_ids)
	{
		ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate a session");
		goto fail;
	}
	for (int i = 0, k = 0; i < m->graph->n_inputs; i++)
		if (!m->graph->values[m->graph->inputs[i]].init)
			s->feed_ids[k++] = m->graph->inputs[i];

	s->stats.nodes_before_opt = nodes_before;
	for (int gi = 0; gi < m->n_graphs; gi++)
	{
		const ox_graph *g = m->graphs[gi];

		/* partition bodies share the main graph's initializers */
		if (s->n_partitions > 0 && ox_graph_is_partition_body(g))
		{
			s->stats.nodes_after_opt += g->n_nodes - 1;	/* its nodes, not the partition node */
			continue;
		}
		s->stats.nodes_after_opt += g->n_nodes;
		for (int v = 0; v < g->n_values; v++)
		{
			const ox_tensor *t = g->values[v].init;
			size_t		bytes = t ? (size_t) ox_tensor_numel(t) * ox_dtype_size(t->dtype) : 0;

			if (t && t->data)
				s->stats.weight_bytes += bytes;
			else if (t && t->released)
				s->stats.released_weight_bytes += bytes;
		}
	}
	s->stats.create_ms = now_ms() - t0;
	return s;

fail:
	ox_session_free(s);
	return NULL;
}

void
ox_session_free(ox_session *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n_plans; i++)
		ox_plan_free(&s->plans[i]);
	free(s->plans);
	ox_session_unplace(s);
	ox_pool_free(&s->pool);
	free(s->feed_ids);
	free(s->profile);
	free(s->targets);
	free(s->target_nodes);
	free(s->target_keep);
	free(s->target_unread);
	free(s->providers);
	ox_model_free(s->model);
	free(s);
}

const ox_model *
ox_session_model(const ox_session *s)
{
	return s->model;
}

int
ox_session_input_count(const ox_session *s)
{
	return s->n_feeds;
}

const ox_value_def *
ox_session_input(const ox_session *s, int i)
{
	if (i < 0 || i >= s->n_feeds)
		return NULL;
	return &s->model->graph->values[s->feed_ids[i]];
}

int
ox_session_find_input(const ox_session *s, const char *name)
{
	for (int i = 0; i < s->n_feeds; i++)
		if (strcmp(s->model->graph->values[s->feed_ids[i]].name, name) == 0)
			return i;
	return -1;
}

int
ox_session_output_count(const ox_session *s)
{
	return s->model->graph->n_outputs;
}

const ox_value_def *
ox_session_output(const ox_session *s, int i)
{
	if (i < 0 || i >= s->model->graph->n_outputs)
		return NULL;
	return &s->model->graph->values[s->model->graph->outputs[i]];
}

int
ox_session_find_output(const ox_session *s, const char *name)
{
	for (int i = 0; i < s->model->graph->n_outputs; i++)
		if (strcmp(s->model->graph->values[s->model->graph->outputs[i]].name, name) == 0)
			return i;
	return -1;
}

static const char *
declared_shape_str(const ox_type *t, char *buf, size_t len)
{
	size_t		off = 0;

	off += snprintf(buf + off, len - off, "[");
	for (int i = 0; i < t->rank && off < len; i++)
	{
		if (t->dims[i].value >= 0)
			off += snprintf(buf + off, len - off, "%s%lld", i ? ", " : "", (long long) t->dims[i].value);
		else
			off += snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
							t->dims[i].param ? t->dims[i].param : "?");
	}
	if (off < len)
		snprintf(buf + off, len - off, "]");
	return buf;
}

/* a tensor fed for a tensor input: element type and static dimensions */
static ox_code
check_tensor(const ox_value_def *def, const ox_tensor *x, ox_status *st)
{
	const ox_type *t = &def->type;
	char		want[256];
	char		got[256];
	int64_t		n;

	if (t->elem != OX_UNDEFINED && x->dtype != t->elem)
		return ox_fail(st, OX_INVALID_ARGUMENT, "input \"%s\" expects element type %s but got %s",
					   def->name, ox_dtype_name(t->elem), ox_dtype_name(x->dtype));
	if (x->rank < 0 || x->rank > OX_MAX_RANK)
		return ox_fail(st, OX_INVALID_ARGUMENT, "input \"%s\" has invalid rank %d", def->name, x->rank);
	n = ox_tensor_numel(x);
	if (n < 0)
		return ox_fail(st, OX_INVALID_ARGUMENT, "input \"%s\" has an invalid shape", def->name);
	if (n > 0 && !x->data)
		return ox_fail(st, OX_INVALID_ARGUMENT, "input \"%s\" has no data", def->name);
	if (t->rank < 0)
		return OX_OK;
	if (x->rank != t->rank)
		return ox_fail(st, OX_INVALID_ARGUMENT, "input \"%s\" expects shape %s but got %s",
					   def->name, declared_shape_str(t, want, sizeof(want)),
					   ox_shape_str(x->rank, x->dims, got, sizeof(got)));
	for (int i = 0; i < t->rank; i++)
		if (t->dims[i].value >= 0 && t->dims[i].value != x->dims[i])
			return ox_fail(st, OX_INVALID_ARGUMENT, "input \"%s\" expects shape %s but got %s",
						   def->name, declared_shape_str(t, want, sizeof(want)),
						   ox_shape_str(x->rank, x->dims, got, sizeof(got)));
	return OX_OK;
}

static ox_code
check_input(const ox_value_def *def, const ox_value *v, ox_status *st)
{
	const ox_type *t = &def->type;

	if (t->kind == OX_TYPE_UNKNOWN)
		return OX_OK;
	if (t->kind == OX_TYPE_TENSOR)
	{
		if (v->kind != OX_VALUE_TENSOR)
			return ox_fail(st, OX_INVALID_ARGUMENT, "input \"%s\" expects a tensor", def->name);
		return check_tensor(def, &v->tensor, st);
	}
	if (t->kind == OX_TYPE_SEQUENCE && v->kind != OX_VALUE_SEQUENCE)
		return ox_fail(st, OX_INVALID_ARGUMENT, "input \"%s\" expects a sequence", def->name);
	if (t->kind == OX_TYPE_MAP && v->kind != OX_VALUE_MAP)
		return ox_fail(st, OX_INVALID_ARGUMENT, "input \"%s\" expects a map", def->name);
	return OX_OK;
}

size_t
ox_session_buffer_bytes(const ox_session *s)
{
	size_t		bytes = s->pool.bytes;

	for (int p = 0; p < s->n_plans; p++)
	{
		const ox_plan *plan = &s->plans[p];

		if (!plan->graph)
			continue;
		for (int v = 0; v < plan->graph->n_values; v++)
			if (!plan->env.borrowed[v] && plan->env.vals[v].tensor.owns)
				bytes += plan->env.vals[v].tensor.capacity;
	}
	return bytes;
}

static void
refresh_memory_stats(ox_session *s)
{
	size_t		bytes = ox_session_buffer_bytes(s);

	s->stats.tensor_bytes = bytes;
	if (bytes > s->stats.peak_tensor_bytes)
		s->stats.peak_tensor_bytes = bytes;
	s->stats_events = s->alloc_events;
}

static ox_code run_main(ox_session *s, const ox_value *inputs, const ox_run_subset *subset,
						ox_status *st);

ox_code
ox_session_run(ox_session *s, const ox_value *inputs, ox_status *st)
{
	return run_main(s, inputs, NULL, st);
}

/* ---- input shape signatures -------------------------------------------- */

#define OX_SIG_SEED 0xcbf29ce484222325ULL

static inline uint64_t
sig_mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ULL;	/* FNV-1a, a word at a time */
}

static uint64_t
tensor_sig(uint64_t h, const ox_tensor *t)
{
	h = sig_mix(h, ((uint64_t) t->dtype << 8) | (uint64_t) t->rank);
	for (int d = 0; d < t->rank; d++)
		h = sig_mix(h, (uint64_t) t->dims[d]);
	return h;
}

static uint64_t
values_sig(const ox_session *s, const ox_value *inputs)
{
	uint64_t	h = OX_SIG_SEED;

	for (int i = 0; i < s->n_feeds; i++)
	{
		const ox_value *v = &inputs[i];

		h = sig_mix(h, (uint64_t) v->kind);
		if (v->kind == OX_VALUE_TENSOR)
			h = tensor_sig(h, &v->tensor);
		else if (v->kind == OX_VALUE_SEQUENCE)
			h = sig_mix(h, (uint64_t) v->seq_len);
		else if (v->kind == OX_VALUE_MAP)
			h = tensor_sig(h, &v->map_keys);
	}
	return h;
}

/* remember a run's signature: the last one first, then the (bounded) set */
static void
note_shape(ox_session *s, uint64_t sig)
{
	if (s->n_shape_sigs > 0 && s->shape_sigs[s->last_shape_sig] == sig)
		return;
	for (int i = 0; i < s->n_shape_sigs; i++)
		if (s->shape_sigs[i] == sig)
		{
			s->last_shape_sig = i;
			return;
		}
	if (s->n_shape_sigs < OX_MAX_SHAPE_SIGNATURES)
	{
		s->last_shape_sig = s->n_shape_sigs;
		s->shape_sigs[s->n_shape_sigs++] = sig;
	}
}

int
ox_session_shape_count(const ox_session *s)
{
	return s->n_shape_sigs;
}

/*
 * A run on several threads wakes the pool's workers, which sleep between
 * runs (a backend idles between queries): a futex wake-up, and in a VM an
 * idle virtual CPU's, tens of microseconds.  Runs that short cost more
 * CPU time on two threads than on one: issue 4's MLP at batch 1 (about
 * 32 us on one thread), back to back on two, took 0.69x the wall time but
 * 1.26x the CPU time (2026-12-06; before the pool's wake-up was tuned, it
 * took longer on two even by the clock).  A backend's CPU time is what the
 * other backends lose, so per input shape, a run that took less than
 * OX_TINY_RUN_NS on several threads makes the next ones of that shape run
 * on one, until one of them takes more than OX_SERIAL_MAX_NS.  The table
 * is direct-mapped by shape signature: a shape that takes another's slot
 * starts on every thread again.
 */
int
ox_thread_mode_threads(const ox_thread_mode *modes, uint64_t sig, int threads)
{
	const ox_thread_mode *m = &modes[sig % OX_THREAD_MODES];

	return threads > 1 && m->sig == sig && m->serial ? 1 : threads;
}

void
ox_thread_mode_note(ox_thread_mode *modes, uint64_t sig, int threads_used, int64_t ns)
{
	ox_thread_mode *m = &modes[sig % OX_THREAD_MODES];

	m->sig = sig;
	m->serial = threads_used > 1 ? ns < OX_TINY_RUN_NS : ns <= OX_SERIAL_MAX_NS;
}

/* the main graph's run, on the threads its input shape gets */
static ox_code
run_plan_timed(ox_session *s, uint64_t sig, const ox_run_subset *subset, ox_status *st)
{
	bool		several = s->opts.intra_op_threads > 1;
	int64_t		t0 = several ? ox_now_ns() : 0;
	ox_code		rc;

	s->run_threads = several ? ox_thread_mode_threads(s->thread_modes, sig, s->opts.intra_op_threads) : 1;
	if (several && s->run_threads == 1)
		s->stats.single_thread_runs++;
	rc = ox_plan_run(s, s->main, NULL, subset, st);
	if (several)
	{
		int64_t		ns = ox_now_ns() - t0;

		/*
		 * A run that failed (a cancel: statement_timeout) took at least
		 * this long: enough to say that its shape is not tiny when it ran
		 * on one thread for longer than OX_SERIAL_MAX_NS, never that it is
		 * (the work of an input shape can depend on the values: a shape
		 * whose run was short, then one canceled after seconds alone).
		 */
		if (rc == OX_OK || (s->run_threads == 1 && ns > OX_SERIAL_MAX_NS))
			ox_thread_mode_note(s->thread_modes, sig, s->run_threads, ns);
	}
	return rc;
}

/*
 * A value the run returns that its producer should have written and did
 * not: the loader's schema check refuses standard operators with more
 * outputs than they take, but an operator of another domain (com.microsoft)
 * with an output too many got this far, and the run handed back a tensor of
 * no element type.
 */
static ox_code
check_written(const ox_session *s, int id, ox_status *st)
{
	const ox_graph *g = s->model->graph;
	const ox_value_def *def = &g->values[id];
	const ox_value *v = &s->main->env.vals[id];

	if (def->producer >= 0 && v->kind == OX_VALUE_TENSOR && v->tensor.dtype == OX_UNDEFINED)
	{
		const ox_node *n = &g->nodes[def->producer];

		return ox_fail(st, OX_INVALID_MODEL, "node \"%s\" (%s%s%s) did not produce its output \"%s\"",
					   n->name, n->domain, n->domain[0] ? "." : "", n->op_type, def->name);
	}
	return OX_OK;
}

/*
 * What the run returns: its targets (subset), or every graph output.  A
 * targeted run's other values may be unwritten (ox_kernel_ctx.unread).
 */
static ox_code
check_outputs_written(const ox_session *s, const ox_run_subset *subset, ox_status *st)
{
	const ox_graph *g = s->model->graph;

	if (subset)
	{
		for (int t = 0; t < s->n_targets; t++)
			OX_TRY(check_written(s, s->targets[t], st));
		return OX_OK;
	}
	for (int o = 0; o < g->n_outputs; o++)
		OX_TRY(check_written(s, g->outputs[o], st));
	return OX_OK;
}

/* after a successful run: statistics, and outputs that are inputs copied */
static ox_code
finish_run(ox_session *s, uint64_t sig, const ox_run_subset *subset, ox_status *st)
{
	ox_env	   *env = &s->main->env;

	OX_TRY(check_outputs_written(s, subset, st));
	s->stats.runs++;
	note_shape(s, sig);
	if (s->alloc_events != s->stats_events)
		refresh_memory_stats(s);
	/* graph outputs that are inputs: copy them, the caller's memory may go */
	for (int o = 0; o < s->model->graph->n_outputs; o++)
	{
		int			id = s->model->graph->outputs[o];

		if (s->model->graph->values[id].is_input && env->borrowed[id] &&
			!s->model->graph->values[id].init)
		{
			ox_value	copy;

			ox_value_init_tensor(&copy);
			OX_TRY(ox_value_copy(&copy, &env->vals[id], st));
			env->vals[id] = copy;
			env->borrowed[id] = false;
		}
	}
	return OX_OK;
}

/*
 * A caller's empty tensor may come with no data at all; kernels compute
 * offsets from every tensor's data, and an offset (even 0) from NULL is
 * undefined behaviour, so such a view gets this instead.  Nothing is ever
 * read or written through it: the tensor has no elements.
 */
static _Alignas(64) uint8_t empty_tensor_data[64];

static void *
view_data(const ox_tensor *t)
{
	if (!t->data && t->dtype != OX_STRING && ox_tensor_numel(t) == 0)
		return empty_tensor_data;
	return t->data;
}

static ox_code
run_main(ox_session *s, const ox_value *inputs, const ox_run_subset *subset, ox_status *st)
{
	ox_env	   *env = &s->main->env;
	ox_code		rc;
	uint64_t	sig;

	for (int i = 0; i < s->n_feeds; i++)
	{
		int			id = s->feed_ids[i];
		const ox_value_def *def = &s->model->graph->values[id];

		OX_TRY(check_input(def, &inputs[i], st));
		if (!env->borrowed[id])
			ox_value_release(&env->vals[id]);
		env->vals[id] = inputs[i];
		if (env->vals[id].kind == OX_VALUE_TENSOR)
			env->vals[id].tensor.data = view_data(&inputs[i].tensor);
		env->vals[id].tensor.owns = false;
		env->vals[id].tensor.capacity = 0;
		env->vals[id].seq_cap = 0;
		env->borrowed[id] = true;
	}
	sig = values_sig(s, inputs);
	rc = run_plan_timed(s, sig, subset, st);
	/* drop the views of caller memory: it may be gone after we return */
	for (int i = 0; i < s->n_feeds; i++)
	{
		int			id = s->feed_ids[i];

		if (!s->model->graph->values[id].is_output)
		{
			memset(&env->vals[id], 0, sizeof(ox_value));
			env->borrowed[id] = false;
		}
	}
	if (rc != OX_OK)
		return rc;
	return finish_run(s, sig, subset, st);
}

const ox_value *
ox_session_result(const ox_session *s, int i)
{
	if (i < 0 || i >= s->model->graph->n_outputs)
		return NULL;
	return &s->main->env.vals[s->model->graph->outputs[i]];
}

/* O(1): memory figures are refreshed by runs that allocated */
void
ox_session_get_stats(const ox_session *s, ox_session_stats *out)
{
	*out = s->stats;
	out->alloc_events = s->alloc_events;
}

int
ox_session_value_id(const ox_session *s, const char *name)
{
	return ox_graph_find_value(s->model->graph, name);
}

int
ox_session_dense_source(const ox_session *s, int output_index)
{
	const ox_graph *g = s->model->graph;
	int			id;
	int			p;

	if (output_index < 0 || output_index >= g->n_outputs)
		return -1;
	id = g->outputs[output_index];
	p = g->values[id].producer;
	if (p >= 0 && strcmp(g->nodes[p].op_type, "ZipMap") == 0 &&
		strcmp(g->nodes[p].domain, "ai.onnx.ml") == 0 && g->nodes[p].n_inputs == 1 &&
		g->nodes[p].inputs[0] >= 0)
		return g->nodes[p].inputs[0];
	return id;
}

/*
 * A targeted run's unread outputs: those of the static plan, and the ones
 * that no needed node reads and that are not targets (a classifier's scores
 * when its label alone is asked for).  The memo's nodes write every output.
 * read: scratch of one int per value.
 */
static void
set_subset_unread(ox_session *s, int *read)
{
	const ox_graph *g = s->model->graph;
	const ox_plan *p = s->main;

	memset(read, 0, sizeof(int) * (size_t) g->n_values);
	for (int k = 0; k < g->n_nodes; k++)
	{
		if (!s->target_nodes[k])
			continue;
		for (int i = 0; i < ox_node_n_reads(&g->nodes[k]); i++)
		{
			int			v = ox_node_read(&g->nodes[k], i);

			if (v >= 0)
				read[v] = 1;
		}
	}
	for (int k = 0; k < g->n_nodes; k++)
	{
		const ox_node *node = &g->nodes[k];

		s->target_unread[k] = p->unread[k];
		if (!s->target_nodes[k] || (p->memo && ox_memo_node(p->memo, k)))
			continue;
		for (int o = 0; o < node->n_outputs && o < 64; o++)
		{
			int			v = node->outputs[o];

			if (v >= 0 && !s->target_keep[v] && !read[v])
				s->target_unread[k] |= (uint64_t) 1 << o;
		}
	}
}

/* mark the nodes the targets depend on, walking producers backwards */
static ox_code
select_targets(ox_session *s, const int *targets, int n, ox_status *st)
{
	const ox_graph *g = s->model->graph;
	int		   *stack;
	int			top = 0;

	/* the same targets as the last run (a row-wise SQL call: every row) */
	if (s->targets && s->n_targets == n &&
		(n == 1 ? s->targets[0] == targets[0] : memcmp(s->targets, targets, sizeof(int) * n) == 0))
		return OX_OK;
	free(s->targets);
	s->targets = NULL;
	if (!s->target_nodes)
		s->target_nodes = calloc(g->n_nodes + 1, sizeof(bool));
	if (!s->target_keep)
		s->target_keep = calloc(g->n_values + 1, sizeof(bool));
	if (!s->target_unread)
		s->target_unread = calloc(g->n_nodes + 1, sizeof(uint64_t));
	s->target_subset.nodes = s->target_nodes;
	s->target_subset.keep = s->target_keep;
	s->target_subset.unread = s->target_unread;
	stack = malloc(sizeof(int) * (g->n_values + 1));
	s->targets = malloc(sizeof(int) * (n + 1));
	if (!s->target_nodes || !s->target_keep || !s->target_unread || !stack || !s->targets)
	{
		free(stack);
		free(s->targets);
		s->targets = NULL;
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not plan a targeted run");
	}
	memset(s->target_nodes, 0, sizeof(bool) * g->n_nodes);
	memset(s->target_keep, 0, sizeof(bool) * g->n_values);
	for (int i = 0; i < n; i++)
	{
		if (targets[i] < 0 || targets[i] >= g->n_values)
		{
			free(stack);
			free(s->targets);
			s->targets = NULL;
			return ox_fail(st, OX_NOT_FOUND, "no value with id %d", targets[i]);
		}
		s->target_keep[targets[i]] = true;
		stack[top++] = targets[i];
	}
	while (top > 0)
	{
		int			v = stack[--top];
		int			p = g->values[v].producer;
		const ox_node *node;

		if (p < 0 || s->target_nodes[p])
			continue;
		s->target_nodes[p] = true;
		node = &g->nodes[p];
		for (int i = 0; i < ox_node_n_reads(node); i++)
		{
			int			in = ox_node_read(node, i);

			if (in >= 0 && top < g->n_values)
				stack[top++] = in;
		}
	}
	set_subset_unread(s, stack);
	free(stack);
	memcpy(s->targets, targets, sizeof(int) * n);
	s->n_targets = n;
	return OX_OK;
}

ox_code
ox_session_run_targets(ox_session *s, const ox_value *inputs, const int *targets, int n_targets,
					   ox_status *st)
{
	OX_TRY(select_targets(s, targets, n_targets, st));
	return run_main(s, inputs, &s->target_subset, st);
}

/*
 * The lean path for one tensor input.  run_main binds whole ox_value
 * structs (about 500 bytes each, copied in and cleared out on every run);
 * here only the tensor's shape and data pointer are written into the
 * input's slot, and the slot is emptied again by clearing its data pointer.
 * A row-wise SQL call pays this once per row, so it matters there.
 */
ox_code
ox_session_run_tensor(ox_session *s, const ox_tensor *input, const int *targets, int n_targets,
					  ox_status *st)
{
	ox_env	   *env = &s->main->env;
	const ox_value_def *def;
	ox_tensor  *slot;
	int			id;
	ox_code		rc;
	uint64_t	sig;

	if (s->n_feeds != 1)
		return ox_fail(st, OX_INVALID_ARGUMENT, "the model takes %d inputs, not one", s->n_feeds);
	id = s->feed_ids[0];
	def = &s->model->graph->values[id];
	if (def->type.kind != OX_TYPE_UNKNOWN)
	{
		if (def->type.kind != OX_TYPE_TENSOR)
			return ox_fail(st, OX_INVALID_ARGUMENT, "input \"%s\" expects a %s", def->name,
						   def->type.kind == OX_TYPE_MAP ? "map" : "sequence");
		OX_TRY(check_tensor(def, input, st));
	}
	if (n_targets > 0)
		OX_TRY(select_targets(s, targets, n_targets, st));

	if (!env->borrowed[id])
		ox_value_release(&env->vals[id]);
	env->vals[id].kind = OX_VALUE_TENSOR;
	slot = &env->vals[id].tensor;
	slot->dtype = input->dtype;
	slot->rank = input->rank;
	memcpy(slot->dims, input->dims, sizeof(int64_t) * (size_t) input->rank);
	slot->data = view_data(input);
	slot->owns = false;
	slot->capacity = 0;
	env->borrowed[id] = true;

	sig = tensor_sig(sig_mix(OX_SIG_SEED, (uint64_t) OX_VALUE_TENSOR), input);
	rc = run_plan_timed(s, sig, n_targets > 0 ? &s->target_subset : NULL, st);
	if (!def->is_output)
	{
		/* the slot is an empty tensor again, as run_main leaves it */
		slot->data = NULL;
		slot->rank = 0;
		env->borrowed[id] = false;
	}
	if (rc != OX_OK)
		return rc;
	/* the signature values_sig gives a single tensor input */
	return finish_run(s, sig, n_targets > 0 ? &s->target_subset : NULL, st);
}

const ox_value *
ox_session_value(const ox_session *s, int value_id)
{
	if (value_id < 0 || value_id >= s->model->graph->n_values)
		return NULL;
	return &s->main->env.vals[value_id];
}

void
ox_session_set_profiling(ox_session *s, bool on)
{
	if (on && !s->profile)
	{
		s->profile = calloc(s->main->graph->n_nodes + 1, sizeof(ox_node_profile));
		s->n_profile = s->profile ? s->main->graph->n_nodes : 0;
	}
	s->profiling = on && s->profile;
	if (s->profile)
		memset(s->profile, 0, sizeof(ox_node_profile) * s->n_profile);
}

int
ox_session_profile(const ox_session *s, const ox_node_profile **out)
{
	*out = s->profile;
	if (!s->profile || !s->profile[0].op_type)
		return 0;
	return s->n_profile;
}
