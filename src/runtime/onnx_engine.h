/*
 * onnx_engine.h
 *	  The public API of the onnx_pg inference engine.
 *
 * The engine is a PostgreSQL-independent C library: the extension, the unit
 * tests, the conformance runner and the benchmarks all link it.  Every
 * fallible call fills an ox_status; nothing aborts, exits or prints.
 *
 *	 model   = ox_model_load(bytes, len, &st)		parse + validate
 *	 session = ox_session_create(model, &opts, &st) optimize + prepare kernels
 *	 ox_session_run(session, inputs, &st)			execute
 *	 ox_session_output(session, i)					read results
 *
 * A session owns the model it was created from.  Outputs stay valid until
 * the next run or ox_session_free.  Sessions are not thread-safe: one
 * caller at a time (a PostgreSQL backend is single-threaded).
 */
#ifndef OX_ONNX_ENGINE_H
#define OX_ONNX_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/ir.h"
#include "model/saver.h"
#include "util/status.h"
#include "util/tensor.h"

#define OX_ENGINE_VERSION "0.1.0"

typedef enum ox_opt_level
{
	OX_OPT_DISABLE = 0,
	OX_OPT_BASIC = 1,			/* constant folding, Identity/Dropout removal,
								 * Conv+BatchNorm folding */
	OX_OPT_EXTENDED = 2,		/* + fusions */
	OX_OPT_ALL = 3				/* + layout transforms */
} ox_opt_level;

typedef struct ox_load_options
{
	size_t		max_model_bytes;	/* 0 = no limit */
	/*
	 * what unpacking the protobuf may take, estimated from the wire format
	 * before it starts (0 = no limit): a few bytes of file can cost
	 * hundreds in memory (src/model/loader_tensor.c)
	 */
	size_t		max_unpack_bytes;
} ox_load_options;

typedef struct ox_session_options
{
	int			intra_op_threads;	/* <= 0: 1 */
	ox_opt_level opt_level;
	const char *providers;		/* "cpu", "cuda,cpu", ...; NULL = "cpu" */
	size_t		max_run_memory; /* bytes of tensors one run may hold; 0 = no limit */
	/* polled between nodes and inside long kernels; true = cancel */
	bool		(*should_abort) (void *arg);
	void	   *abort_arg;
	/* CUDA provider (docs/cuda.md); zeroes mean device 0, no limit, exact fp32 */
	int			cuda_device_id;
	size_t		cuda_memory_limit;	/* bytes of device memory per session; 0 = no limit */
	bool		cuda_fp16;		/* let cuBLAS/cuDNN compute float32 with fp16 tensor cores */
	bool		provider_no_fallback;	/* error instead of CPU fallback when cuda cannot
										 * run the session or some of its nodes */
	/*
	 * The session's graph is for saving (onnx_optimize, quantization): keep
	 * it ONNX that other runtimes load, without engine-private layouts.
	 */
	bool		portable_graph;
	/*
	 * Free a constant's data once every node reading it packed its own
	 * copy (weights then exist once, not twice).  The model can no longer
	 * be saved (ox_model_save fails on such a constant).
	 */
	bool		release_weights;
	/*
	 * Run every node at every run, even those computing shapes that the
	 * run before computed from the same dimensions (runtime/memo.c).  The
	 * results are the same either way; for tests and comparisons.
	 */
	bool		disable_shape_memo;
} ox_session_options;

typedef struct ox_session ox_session;

/* Parse and validate an ONNX model (structure, types, opsets).  NULL on error. */
ox_model   *ox_model_load(const void *bytes, size_t len, const ox_load_options *opts,
						  ox_status *st);
/* ox_model_free is declared in model/ir.h */

/*
 * Check that every node has a kernel.  On failure the message lists every
 * unsupported operator once, e.g. "unsupported operators: Foo (opset 13),
 * ai.onnx.ml.Bar (opset 3)".
 */
ox_code		ox_model_check_kernels(const ox_model *m, ox_status *st);

/* Graph inputs the caller must feed (those without a default initializer). */
int			ox_model_feed_count(const ox_model *m);
const ox_value_def *ox_model_feed(const ox_model *m, int i);

/*
 * Optimize, plan and prepare.  Takes ownership of the model whether it
 * succeeds or not.  NULL on error.
 */
ox_session *ox_session_create(ox_model *m, const ox_session_options *opts, ox_status *st);
void		ox_session_free(ox_session *s);

/* the (optimized) model the session runs; ox_model_save serializes it */
const ox_model *ox_session_model(const ox_session *s);

int			ox_session_input_count(const ox_session *s);
const ox_value_def *ox_session_input(const ox_session *s, int i);
int			ox_session_find_input(const ox_session *s, const char *name);
int			ox_session_output_count(const ox_session *s);
const ox_value_def *ox_session_output(const ox_session *s, int i);
int			ox_session_find_output(const ox_session *s, const char *name);

/*
 * Run the model.  inputs has ox_session_input_count entries in input order;
 * tensors are borrowed (not copied) for the duration of the call and are
 * checked against the declared element type and static dimensions.  Their
 * data need only be aligned to the element size (a PostgreSQL array's data
 * is), so kernels never use aligned vector loads on inputs.
 */
ox_code		ox_session_run(ox_session *s, const ox_value *inputs, ox_status *st);
/* result i of the last successful run; valid until the next run or free */
const ox_value *ox_session_result(const ox_session *s, int i);

/*
 * Targeted runs: compute only the nodes that the given values depend on.
 * Targets are value ids of the main graph (graph outputs or intermediate
 * values); read them with ox_session_value after the run (the slot of a
 * value that was not a target holds nothing meaningful then: a small one
 * keeps a buffer for the next run).  A caller that
 * needs one output of a multi-output model (a classifier's label) skips the
 * work for the others.
 */
int			ox_session_value_id(const ox_session *s, const char *name);
/*
 * For output i: the value id holding the same numbers as a dense tensor.
 * A ZipMap output (a sequence of maps) is a repackaging of its input, the
 * [N, classes] probability tensor in class order, so that tensor is returned;
 * any other output is its own source.
 */
int			ox_session_dense_source(const ox_session *s, int output_index);
ox_code		ox_session_run_targets(ox_session *s, const ox_value *inputs, const int *targets,
								   int n_targets, ox_status *st);
const ox_value *ox_session_value(const ox_session *s, int value_id);
/*
 * The same for a model with exactly one input, fed one tensor (borrowed for
 * the call, checked like ox_session_run's).  Cheaper per run than building
 * an ox_value array: meant for callers that run once per row.  n_targets = 0
 * runs the whole graph (read the outputs with ox_session_result).
 */
ox_code		ox_session_run_tensor(ox_session *s, const ox_tensor *input, const int *targets,
								  int n_targets, ox_status *st);


/* statistics */
typedef struct ox_session_stats
{
	int64_t		runs;
	size_t		tensor_bytes;	/* bytes currently held by value buffers */
	size_t		peak_tensor_bytes;
	size_t		weight_bytes;	/* initializers after optimization, held */
	size_t		released_weight_bytes;	/* ... whose data was freed after packing */
	int			nodes_before_opt;
	int			nodes_after_opt;
	double		create_ms;
	int64_t		alloc_events;	/* output buffers (re)allocated over all runs */
	int64_t		single_thread_runs; /* runs of a multi-thread session made on one
									 * thread: their input shape's runs are short */
	int64_t		memo_skips;		/* nodes the shape memo skipped, over all runs */
} ox_session_stats;

void		ox_session_get_stats(const ox_session *s, ox_session_stats *out);

/*
 * Input shapes.  The engine plans once per graph and keeps its buffers
 * across runs, growing them when a run needs more; these say how varied
 * the runs were and what that left behind.
 *
 * ox_session_shape_count: the distinct input shape signatures (element
 * types and dimensions of the inputs; lengths of sequences and maps) of the
 * session's successful runs, e.g. the batch sizes it ran, counted up to
 * OX_MAX_SHAPE_SIGNATURES, which then means "at least that many".  Costs a
 * run a hash of its input dimensions and, when the shape repeats the last
 * one, a compare.
 *
 * ox_session_buffer_bytes: bytes of tensor buffers the session holds
 * between runs (its buffer pool and the values kept from the last run);
 * computed on each call, O(values).
 */
#define OX_MAX_SHAPE_SIGNATURES 64
int			ox_session_shape_count(const ox_session *s);
size_t		ox_session_buffer_bytes(const ox_session *s);

/* per-node profile of the last run of the main graph (when profiling is on) */
typedef struct ox_node_profile
{
	const char *name;
	const char *op_type;
	const char *fused_from;		/* set when an optimizer pass fused this node */
	double		ms;
	ox_dtype	out_dtype;		/* first output, when it is a tensor */
	int			out_rank;
	int64_t		out_dims[OX_MAX_RANK];
	size_t		out_bytes;		/* bytes of all tensor outputs */
	/* where it ran: "cpu", or "cuda" for a CUDA partition node */
	const char *provider;
	int			partition_nodes;	/* nodes the partition ran; 0 for other nodes */
	const char *partition_first;	/* names of the partition's first and last node */
	const char *partition_last;
} ox_node_profile;

void		ox_session_set_profiling(ox_session *s, bool on);
/* entries for the main graph's nodes in execution order; 0 before a profiled run */
int			ox_session_profile(const ox_session *s, const ox_node_profile **out);

/*
 * Providers.  A session whose providers include "cuda" runs the nodes the
 * CUDA provider supports on the device when one is usable, the rest on the
 * CPU.  When it cannot use the device at all it runs on the CPU and
 * ox_session_fallback_reason says why (NULL otherwise, and for sessions that
 * did not ask for cuda); with provider_no_fallback the session is not
 * created instead.  No CUDA call is made before a session asks for cuda.
 */
const char *ox_session_fallback_reason(const ox_session *s);
/* the providers the session really uses: "cpu" or "cuda,cpu" */
const char *ox_session_effective_providers(const ox_session *s);
/*
 * Per-node placement: the optimized main graph's nodes in execution order,
 * nodes inside CUDA partitions listed one by one with provider "cuda".
 * Strings live as long as the session.
 */
int			ox_session_node_count(const ox_session *s);
ox_code		ox_session_node_info(const ox_session *s, int i, const char **name,
								 const char **op_type, const char **provider, ox_status *st);
/*
 * Whether a CUDA device can be used (driver, device count, device id); on
 * false, why holds a sentence.  Initializes the CUDA runtime when built with
 * CUDA: never call it at library load.
 */
bool		ox_cuda_device_usable(int device_id, char *why, size_t why_len);
/*
 * Opens cuBLAS and cuDNN, as the first CUDA session on a usable device
 * does (they are not linked, so that loading the engine stays cheap); on
 * false, why holds a sentence.  Needs no device.  For tests and diagnostics.
 */
bool		ox_cuda_libraries_load(char *why, size_t why_len);

/* provider names the engine was built with, e.g. "cpu" or "cpu,cuda" */
const char *ox_available_providers(void);
/* Validate a provider list; returns the providers that will actually run */
ox_code		ox_parse_providers(const char *list, bool *want_cuda, ox_status *st);

#endif							/* OX_ONNX_ENGINE_H */
