/*
 * ox_capi.c
 *	  A flat C API over the engine for foreign-function callers (the Python
 *	  engine tests and benchmarks load it with ctypes as build/libox_capi.so).
 *	  Tensors only; values are passed as (dtype, rank, dims, data) tuples.
 */
#include "runtime/onnx_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OXC_MAX_TARGETS 16

typedef struct oxc_session
{
	ox_session *s;
	ox_value   *inputs;
	int			n_inputs;
	int			targets[OXC_MAX_TARGETS];	/* value ids of the last targeted run */
	int			n_targets;
} oxc_session;

static void
copy_error(const ox_status *st, char *err, size_t errlen)
{
	if (err && errlen)
		snprintf(err, errlen, "%s%s%s", st->node[0] ? st->node : "", st->node[0] ? ": " : "", st->msg);
}

/* oxc_create_ex's flags (bit 0 was its former int portable) */
#define OXC_PORTABLE 1			/* ox_session_options.portable_graph */
#define OXC_RELEASE_WEIGHTS 2	/* ox_session_options.release_weights */
#define OXC_NO_SHAPE_MEMO 4		/* ox_session_options.disable_shape_memo */

void	   *oxc_create(const void *bytes, size_t len, int opt_level, int threads, char *err, size_t errlen);
void	   *oxc_create_ex(const void *bytes, size_t len, int opt_level, int threads, const char *providers,
						  int cuda_device_id, int64_t cuda_memory_limit, int cuda_fp16, int no_fallback,
						  int flags, char *err, size_t errlen);
int			oxc_node_count(void *h);
int			oxc_node_info(void *h, int i, const char **name, const char **op, const char **provider);
const char *oxc_fallback_reason(void *h);
const char *oxc_effective_providers(void *h);
int			oxc_cuda_usable(int device_id, char *why, size_t why_len);
int			oxc_cuda_libraries_load(char *why, size_t why_len);
void		oxc_free(void *h);
int			oxc_input_count(void *h);
const char *oxc_input_name(void *h, int i);
int			oxc_output_count(void *h);
const char *oxc_output_name(void *h, int i);
int			oxc_run(void *h, const int *dtypes, const int *ranks, const int64_t *dims,
					void *const *data, char *err, size_t errlen);
int			oxc_output(void *h, int i, int *dtype, int *rank, int64_t *dims, const void **data);
int			oxc_run_targets(void *h, int n_outputs, const int *outputs, const int *dtypes, const int *ranks,
							const int64_t *dims, void *const *data, char *err, size_t errlen);
int			oxc_target_output(void *h, int j, int *dtype, int *rank, int64_t *dims, const void **data);
int			oxc_run_repeat(void *h, int n, const int *dtypes, const int *ranks, const int64_t *dims,
						   void *const *data, char *err, size_t errlen);
int64_t		oxc_stat(void *h, const char *what);

void *
oxc_create(const void *bytes, size_t len, int opt_level, int threads, char *err, size_t errlen)
{
	return oxc_create_ex(bytes, len, opt_level, threads, NULL, 0, 0, 0, 0, 0, err, errlen);
}

void *
oxc_create_ex(const void *bytes, size_t len, int opt_level, int threads, const char *providers,
			  int cuda_device_id, int64_t cuda_memory_limit, int cuda_fp16, int no_fallback,
			  int flags, char *err, size_t errlen)
{
	ox_status	st;
	ox_model   *m;
	ox_session_options opts;
	oxc_session *h;

	ox_status_clear(&st);
	m = ox_model_load(bytes, len, NULL, &st);
	if (!m)
	{
		copy_error(&st, err, errlen);
		return NULL;
	}
	memset(&opts, 0, sizeof(opts));
	opts.opt_level = opt_level;
	opts.intra_op_threads = threads;
	opts.providers = providers;
	opts.cuda_device_id = cuda_device_id;
	opts.cuda_memory_limit = cuda_memory_limit > 0 ? (size_t) cuda_memory_limit : 0;
	opts.cuda_fp16 = cuda_fp16 != 0;
	opts.provider_no_fallback = no_fallback != 0;
	opts.portable_graph = (flags & OXC_PORTABLE) != 0;
	opts.release_weights = (flags & OXC_RELEASE_WEIGHTS) != 0;
	opts.disable_shape_memo = (flags & OXC_NO_SHAPE_MEMO) != 0;
	h = calloc(1, sizeof(oxc_session));
	if (!h)
		return NULL;
	h->s = ox_session_create(m, &opts, &st);
	if (!h->s)
	{
		copy_error(&st, err, errlen);
		free(h);
		return NULL;
	}
	h->n_inputs = ox_session_input_count(h->s);
	h->inputs = calloc(h->n_inputs + 1, sizeof(ox_value));
	return h;
}

void
oxc_free(void *p)
{
	oxc_session *h = p;

	if (!h)
		return;
	ox_session_free(h->s);
	free(h->inputs);
	free(h);
}

int
oxc_input_count(void *h)
{
	return ox_session_input_count(((oxc_session *) h)->s);
}

const char *
oxc_input_name(void *h, int i)
{
	return ox_session_input(((oxc_session *) h)->s, i)->name;
}

int
oxc_output_count(void *h)
{
	return ox_session_output_count(((oxc_session *) h)->s);
}

const char *
oxc_output_name(void *h, int i)
{
	return ox_session_output(((oxc_session *) h)->s, i)->name;
}

static void
bind_inputs(oxc_session *h, const int *dtypes, const int *ranks, const int64_t *dims, void *const *data)
{
	const int64_t *d = dims;

	for (int i = 0; i < h->n_inputs; i++)
	{
		ox_value   *v = &h->inputs[i];

		memset(v, 0, sizeof(*v));
		v->kind = OX_VALUE_TENSOR;
		v->tensor.dtype = (ox_dtype) dtypes[i];
		v->tensor.rank = ranks[i];
		for (int k = 0; k < ranks[i] && k < OX_MAX_RANK; k++)
			v->tensor.dims[k] = d[k];
		d += ranks[i];
		v->tensor.data = data[i];
	}
}

int
oxc_run(void *p, const int *dtypes, const int *ranks, const int64_t *dims, void *const *data,
		char *err, size_t errlen)
{
	oxc_session *h = p;
	ox_status	st;

	ox_status_clear(&st);
	bind_inputs(h, dtypes, ranks, dims, data);
	if (ox_session_run(h->s, h->inputs, &st) != OX_OK)
	{
		copy_error(&st, err, errlen);
		return (int) st.code;
	}
	return 0;
}

/* n runs back to back, for benchmarks without per-call foreign-call cost */
int
oxc_run_repeat(void *p, int n, const int *dtypes, const int *ranks, const int64_t *dims,
			   void *const *data, char *err, size_t errlen)
{
	for (int i = 0; i < n; i++)
	{
		int			rc = oxc_run(p, dtypes, ranks, dims, data, err, errlen);

		if (rc)
			return rc;
	}
	return 0;
}

/*
 * A run of only what the listed graph outputs need, as onnx_predict makes
 * one: each output's value is the one ox_session_dense_source names (a
 * ZipMap's input for a ZipMap's output); read them with oxc_target_output
 */
int
oxc_run_targets(void *p, int n_outputs, const int *outputs, const int *dtypes, const int *ranks,
				const int64_t *dims, void *const *data, char *err, size_t errlen)
{
	oxc_session *h = p;
	ox_status	st;

	ox_status_clear(&st);
	if (n_outputs < 1 || n_outputs > OXC_MAX_TARGETS)
	{
		snprintf(err, errlen, "between 1 and %d targets, not %d", OXC_MAX_TARGETS, n_outputs);
		return (int) OX_INVALID_ARGUMENT;
	}
	for (int j = 0; j < n_outputs; j++)
		if ((h->targets[j] = ox_session_dense_source(h->s, outputs[j])) < 0)
		{
			snprintf(err, errlen, "no output %d", outputs[j]);
			return (int) OX_NOT_FOUND;
		}
	h->n_targets = n_outputs;
	bind_inputs(h, dtypes, ranks, dims, data);
	if (ox_session_run_targets(h->s, h->inputs, h->targets, n_outputs, &st) != OX_OK)
	{
		copy_error(&st, err, errlen);
		return (int) st.code;
	}
	return 0;
}

static int
value_out(const ox_value *v, int *dtype, int *rank, int64_t *dims, const void **data)
{
	if (!v)
		return -1;
	if (v->kind == OX_VALUE_TENSOR)
	{
		*dtype = v->tensor.dtype;
		*rank = v->tensor.rank;
		memcpy(dims, v->tensor.dims, sizeof(int64_t) * v->tensor.rank);
		*data = v->tensor.data;
	}
	return (int) v->kind;
}

/* output i: returns its kind (0 tensor, 1 sequence, 2 map, 3 none) */
int
oxc_output(void *p, int i, int *dtype, int *rank, int64_t *dims, const void **data)
{
	return value_out(ox_session_result(((oxc_session *) p)->s, i), dtype, rank, dims, data);
}

/* the last targeted run's target j, as oxc_output */
int
oxc_target_output(void *p, int j, int *dtype, int *rank, int64_t *dims, const void **data)
{
	oxc_session *h = p;

	if (j < 0 || j >= h->n_targets)
		return -1;
	return value_out(ox_session_value(h->s, h->targets[j]), dtype, rank, dims, data);
}

int64_t
oxc_stat(void *p, const char *what)
{
	oxc_session *h = p;
	ox_session_stats s;

	ox_session_get_stats(h->s, &s);
	if (strcmp(what, "nodes_before") == 0)
		return s.nodes_before_opt;
	if (strcmp(what, "nodes_after") == 0)
		return s.nodes_after_opt;
	if (strcmp(what, "tensor_bytes") == 0)
		return (int64_t) s.tensor_bytes;
	if (strcmp(what, "weight_bytes") == 0)
		return (int64_t) s.weight_bytes;
	if (strcmp(what, "released_weight_bytes") == 0)
		return (int64_t) s.released_weight_bytes;
	if (strcmp(what, "single_thread_runs") == 0)
		return s.single_thread_runs;
	if (strcmp(what, "memo_skips") == 0)
		return s.memo_skips;
	if (strcmp(what, "alloc_events") == 0)
		return s.alloc_events;
	if (strcmp(what, "create_us") == 0)
		return (int64_t) (s.create_ms * 1000);
	return -1;
}

void		oxc_set_profiling(void *h, int on);
int			oxc_profile(void *h, int i, const char **name, const char **op, double *ms);

void
oxc_set_profiling(void *h, int on)
{
	ox_session_set_profiling(((oxc_session *) h)->s, on != 0);
}

/* entry i of the last run's profile; returns the entry count */
int
oxc_profile(void *h, int i, const char **name, const char **op, double *ms)
{
	const ox_node_profile *p;
	int			n = ox_session_profile(((oxc_session *) h)->s, &p);

	if (i >= 0 && i < n)
	{
		*name = p[i].name;
		*op = p[i].op_type;
		*ms = p[i].ms;
	}
	return n;
}

int			oxc_save(void *h, void **bytes, size_t *len, char *err, size_t errlen);
void		oxc_free_bytes(void *p);

/* the session's optimized model as ONNX bytes (free with oxc_free_bytes) */
int
oxc_save(void *h, void **bytes, size_t *len, char *err, size_t errlen)
{
	ox_status	st;

	ox_status_clear(&st);
	if (ox_model_save(ox_session_model(((oxc_session *) h)->s), bytes, len, &st) != OX_OK)
	{
		copy_error(&st, err, errlen);
		return (int) st.code;
	}
	return 0;
}

void
oxc_free_bytes(void *p)
{
	free(p);
}

const char *oxc_type_of(void *h, const char *name);

/* the type of a main-graph value, declared or inferred, e.g. "tensor(float)[N, 8, 16, 16]" */
const char *
oxc_type_of(void *h, const char *name)
{
	static __thread char buf[512];
	const ox_model *m = ox_session_model(((oxc_session *) h)->s);
	int			id = ox_graph_find_value(m->graph, name);

	if (id < 0)
		return NULL;
	return ox_type_str(&m->graph->values[id].type, buf, sizeof(buf));
}

/* ---- providers ---------------------------------------------------------- */

int
oxc_node_count(void *h)
{
	return ox_session_node_count(((oxc_session *) h)->s);
}

int
oxc_node_info(void *h, int i, const char **name, const char **op, const char **provider)
{
	ox_status	st;

	ox_status_clear(&st);
	return ox_session_node_info(((oxc_session *) h)->s, i, name, op, provider, &st) == OX_OK ? 0 : 1;
}

const char *
oxc_fallback_reason(void *h)
{
	return ox_session_fallback_reason(((oxc_session *) h)->s);
}

const char *
oxc_effective_providers(void *h)
{
	return ox_session_effective_providers(((oxc_session *) h)->s);
}

int
oxc_cuda_usable(int device_id, char *why, size_t why_len)
{
	return ox_cuda_device_usable(device_id, why, why_len) ? 1 : 0;
}

int
oxc_cuda_libraries_load(char *why, size_t why_len)
{
	return ox_cuda_libraries_load(why, why_len) ? 1 : 0;
}
