/*
 * exec.h
 *	  Runtime internals: per-graph plans, execution environments and the
 *	  buffer pool.  Private to src/runtime.
 *
 * A plan is built once per graph (the main graph and every subgraph) when a
 * session is created: the kernel and prepared state of each node, and for
 * each node the values whose last use it is.  An environment holds one
 * ox_value slot per graph value; slots keep their buffers across runs, and
 * a value's buffer goes back to the pool after its last use so the next
 * node can reuse it.  With repeating shapes a run allocates nothing.
 */
#ifndef OX_EXEC_H
#define OX_EXEC_H

#include "kernels/kernel.h"
#include "runtime/onnx_engine.h"

typedef struct ox_buffer
{
	void	   *ptr;
	size_t		cap;
} ox_buffer;

/*
 * Released run buffers, kept for the next tensor that fits (buffer_pool.c).
 * Binned by capacity so that a lookup costs the same with thousands of
 * buffers as with ten: exact bins below 16 bytes, then eight bins per power
 * of two.  A model of many small branches (a 100-tree IsolationForest
 * export: 2,700 nodes) holds thousands of buffers at once.
 */
#define OX_POOL_BINS (16 + 60 * 8)

typedef struct ox_pool_bin
{
	ox_buffer  *bufs;
	int			n;
	int			cap;
} ox_pool_bin;

typedef struct ox_pool
{
	ox_pool_bin *bins;			/* OX_POOL_BINS of them, allocated on first put */
	int			n;				/* buffers held, all bins */
	size_t		bytes;			/* their capacities, summed */
} ox_pool;

typedef struct ox_plan ox_plan;
typedef struct ox_memo ox_memo;

/*
 * The part of the main graph a targeted run computes (session.c,
 * select_targets); a run of every node passes NULL instead.
 */
typedef struct ox_run_subset
{
	const bool *nodes;			/* per node: needed */
	const bool *keep;			/* per value: a target, never released */
	const uint64_t *unread;		/* per node: as ox_plan.unread, for this subset */
} ox_run_subset;

typedef struct ox_env
{
	ox_value   *vals;			/* one slot per graph value */
	bool	   *borrowed;		/* slot is a view of someone else's value */
	size_t	   *kept;			/* bytes a released slot keeps (ox_env_release_slot) */
	ox_value   *scratch;		/* one per omitted node output */
	ox_value ***in_ptrs;		/* per node: pointers into vals (NULL = omitted) */
	ox_value ***out_ptrs;
	struct ox_env *parent;		/* env of the enclosing graph while running */
} ox_env;

struct ox_plan
{
	const ox_graph *graph;
	const ox_kernel_def **kernels;
	void	  **states;
	int		   *rel_start;		/* CSR: values released after node k */
	int		   *rel_ids;
	/*
	 * Per node: bit i set = input i is a node-produced value whose last
	 * use is this node and that the node reads once, so a kernel that
	 * would copy it unchanged may take its buffer (ox_kernel_ctx.movable).
	 */
	uint64_t   *movable;
	/*
	 * Per node: bit i set = output i is omitted, or read by no node and
	 * not a graph output, so that even a run of every node does without it
	 * (ox_kernel_ctx.unread).  Never set for the memo's nodes, whose
	 * outputs it keeps whole.
	 */
	uint64_t   *unread;
	int		   *outer_parent;	/* per g->outer[i]: value id in the parent graph */
	ox_memo    *memo;			/* the main graph's shape memo (memo.c), or NULL */
	ox_env		env;
	bool		running;		/* guards against re-entrance */
};

/* whether runs of an input shape (sig) go on one thread (session.c) */
typedef struct ox_thread_mode
{
	uint64_t	sig;
	bool		serial;
} ox_thread_mode;

#define OX_THREAD_MODES 16
#define OX_TINY_RUN_NS 50000		/* on several threads: the next go on one */
#define OX_SERIAL_MAX_NS 200000		/* on one thread: the next go on several */

/* the threads a run of shape sig gets, of a session's threads */
extern int	ox_thread_mode_threads(const ox_thread_mode *modes, uint64_t sig, int threads);
/* after a run of shape sig on threads_used threads that took ns */
extern void ox_thread_mode_note(ox_thread_mode *modes, uint64_t sig, int threads_used, int64_t ns);

struct ox_session
{
	ox_model   *model;
	ox_session_options opts;
	char	   *providers;
	ox_plan    *plans;			/* one per model graph, same order as model->graphs */
	int			n_plans;
	ox_plan    *main;
	ox_pool		pool;
	size_t		kept_bytes;		/* the sum of every plan's env.kept */
	int		   *feed_ids;		/* value ids of the inputs the caller feeds */
	int			n_feeds;
	ox_session_stats stats;
	ox_status  *run_status;		/* status of the run in progress */
	/* the node subset of the last targeted run, reused while targets repeat */
	int		   *targets;
	int			n_targets;
	bool	   *target_nodes;	/* per main-graph node: needed */
	bool	   *target_keep;	/* per main-graph value: a target, never released */
	uint64_t   *target_unread;	/* per main-graph node: outputs the subset does without */
	ox_run_subset target_subset;	/* the three above */
	int64_t		alloc_events;	/* output buffers (re)allocated, to refresh stats lazily */
	size_t		run_new_bytes;	/* output buffers newly allocated by the run in progress */
	int64_t		stats_events;	/* alloc_events when stats were last computed */
	/* distinct input shape signatures of successful runs (session.c) */
	uint64_t	shape_sigs[OX_MAX_SHAPE_SIGNATURES];
	int			n_shape_sigs;
	int			last_shape_sig; /* index of the last run's, checked first */
	bool		profiling;
	ox_node_profile *profile;	/* one per main-graph node */
	int			n_profile;
	/* providers (providers.c) */
	char	   *fallback_reason;	/* cuda asked for, CPU only: why */
	const char *effective_providers;
	void	   *device;			/* the CUDA provider's per-session context, or NULL */
	int			n_partitions;
	/*
	 * Threads of the run in progress: intra_op_threads, or 1 for input
	 * shapes whose runs are too short to pay for waking the pool's workers
	 * (session.c, ox_thread_mode_threads).
	 */
	int			run_threads;
	ox_thread_mode thread_modes[OX_THREAD_MODES];	/* by input shape signature, direct-mapped */
};

/*
 * Provider placement at session creation, after the optimizer: decides
 * where nodes run, makes partitions, sets fallback_reason and
 * effective_providers.  Fails only on errors and with provider_no_fallback.
 */
ox_code		ox_session_place(ox_session *s, ox_status *st);
/* release what ox_session_place created (after the plans are freed) */
void		ox_session_unplace(ox_session *s);

ox_code		ox_plan_build(ox_session *s, ox_plan *p, const ox_graph *g, ox_status *st);
void		ox_plan_free(ox_plan *p);
ox_code		ox_plan_run(ox_session *s, ox_plan *p, ox_env *parent, const ox_run_subset *subset,
						ox_status *st);
ox_plan    *ox_session_plan_for(ox_session *s, const ox_graph *g);

void		ox_pool_put(ox_pool *pool, ox_tensor *t);
void		ox_pool_free(ox_pool *pool);
bool		ox_pool_take(ox_pool *pool, size_t bytes, ox_buffer *out);

/* release a slot: buffers of owned tensors go to the pool */
void		ox_env_release_slot(ox_session *s, ox_env *env, int id);

#endif							/* OX_EXEC_H */
