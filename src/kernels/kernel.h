/*
 * kernel.h
 *	  The contract between the executor and operator kernels.
 *
 * A kernel is a row in a family table (ox_kernels_<family>[]): domain, op
 * type, the first opset version it serves, and up to three functions:
 *
 *	 prepare(pc)	once per session: validate attributes, parse them into a
 *					state struct, pre-pack constant weights.  Optional.
 *	 run(ctx)		every execution: read ctx inputs, allocate outputs with
 *					ox_out_tensor (or fill ox_out_value), compute.
 *	 free_state(s)	release what prepare built.  Optional.
 *
 * Rules for kernel code: never abort, exit or print; report errors with
 * ox_fail(ctx->st, ...) and return its code; treat every input as hostile
 * (check ranks, dims, dtypes and index values before touching memory).  A
 * kernel may be run with different input shapes on every call.
 *
 * The registry picks, for a node, the entry with the highest since_version
 * not above the opset the model imports for the node's domain.  A kernel
 * that changes behaviour across versions reads node->opset.
 */
#ifndef OX_KERNEL_H
#define OX_KERNEL_H

#include <signal.h>

#include "model/ir.h"
#include "util/status.h"
#include "util/tensor.h"

typedef struct ox_kernel_ctx ox_kernel_ctx;

typedef struct ox_prepare_ctx
{
	const ox_node *node;
	const ox_graph *graph;
	void	   *state;			/* out: kernel state handed to run() */
	ox_status  *st;
	void	   *device;			/* provider context of the session (CUDA), or NULL */
	/*
	 * out: bit i set = run() never reads input i's data while it is the
	 * constant prepare saw (prepare packed its own copy), so the session
	 * may free that constant's data (ox_tensor.released); run() must then
	 * accept it released.  Set with ox_prepare_releasable().
	 */
	uint64_t	releasable;
	/*
	 * The session's intra-op threads (0 or 1: the calling thread only), on
	 * which prepare may share its packing (ox_prepare_parallel_for).
	 */
	int			nthreads;
} ox_prepare_ctx;

/*
 * The constant (initializer) behind the node's input i, or NULL: absent,
 * computed, or a bare node without its graph (test harnesses run those)
 */
static inline const ox_tensor *
ox_prepare_constant(const ox_prepare_ctx *pc, int input)
{
	const ox_value_def *def = pc->graph && input >= 0 && input < pc->node->n_inputs &&
		pc->node->inputs[input] < pc->graph->n_values ? ox_node_input_def(pc->graph, pc->node, input) : NULL;

	return def ? def->init : NULL;
}

static inline void
ox_prepare_releasable(ox_prepare_ctx *pc, int input)
{
	if (input >= 0 && input < 64)
		pc->releasable |= (uint64_t) 1 << input;
}

typedef struct ox_kernel_def
{
	const char *domain;			/* "" (ai.onnx), "ai.onnx.ml", "com.microsoft" */
	const char *op_type;
	int			since_version;
	ox_code		(*prepare) (ox_prepare_ctx *pc);
	ox_code		(*run) (ox_kernel_ctx *ctx);
	void		(*free_state) (void *state);
	/*
	 * Every output is a tensor from ox_out_tensor (or ox_take_input_buffer),
	 * counted against a run's memory limit as it is allocated: the executor
	 * need not look at the outputs afterwards for sequences and maps
	 * (ox_check_output_values), which costs a small model's run cache
	 * misses after a kernel that streamed its weights.  false (the default
	 * of a table entry that does not say) is always safe.
	 */
	bool		tensor_outputs;
} ox_kernel_def;

/* Runs a subgraph (If/Loop/Scan bodies); implemented by the executor. */
typedef ox_code (*ox_subgraph_runner) (ox_kernel_ctx *ctx, const ox_graph *g,
									   ox_value *const *inputs, int n_inputs,
									   ox_value *outputs, ox_status *st);

struct ox_kernel_ctx
{
	const ox_node *node;
	const ox_graph *graph;
	ox_value  **in;				/* n_in entries; NULL for an omitted input */
	int			n_in;
	ox_value  **out;			/* n_out entries, never NULL (see ox_has_output) */
	int			n_out;
	void	   *state;			/* from prepare */
	ox_status  *st;
	int			nthreads;		/* intra-op threads the kernel may use */
	ox_subgraph_runner run_subgraph;
	void	   *exec;			/* executor private */
	/* executor hook: give a released buffer to an empty output tensor */
	void		(*supply_buffer) (void *exec, ox_tensor *t, size_t bytes);
	bool		(*should_abort) (void *arg);
	void	   *abort_arg;
	int64_t    *alloc_events;	/* executor counter of buffer (re)allocations, or NULL */
	/*
	 * Bytes of output buffers the run has newly allocated, and the limit on
	 * them (max_run_memory; 0 = none): an output that would pass the limit
	 * fails before it is allocated.  Buffers reused from earlier runs or
	 * from released values do not count again.
	 */
	size_t	   *run_new_bytes;
	size_t		run_memory_limit;
	/* workspace the running kernel has reserved (ox_workspace_reserve) */
	size_t		ws_bytes;
	/*
	 * Set (atomically) once the callback has said stop on the kernel's
	 * thread: what worker threads' polls answer, so that a parallel loop's
	 * long chunks end soon after a cancel, not when their work is done.
	 */
	bool		canceled;
	/*
	 * Bit i set: nothing this run computes reads output i and the caller
	 * does not get it (an omitted output; a value no later node reads; in a
	 * targeted run, one that only nodes outside the run read), so the
	 * kernel may leave it unwritten (ox_output_wanted).  A classifier whose
	 * label alone is asked for then skips its scores.
	 */
	uint64_t	unread;
	/*
	 * Bit i set: the executor releases input i right after this node and
	 * nothing else reads it, so its buffer may become an output's
	 * (ox_take_input_buffer) instead of being copied.
	 */
	uint64_t	movable;
};

/* input i as a tensor, or NULL when omitted (or not a tensor) */
static inline const ox_tensor *
ox_in_tensor(const ox_kernel_ctx *ctx, int i)
{
	if (i < 0 || i >= ctx->n_in || !ctx->in[i] || ctx->in[i]->kind != OX_VALUE_TENSOR)
		return 0;
	return &ctx->in[i]->tensor;
}

static inline bool
ox_has_input(const ox_kernel_ctx *ctx, int i)
{
	return i >= 0 && i < ctx->n_in && ctx->in[i] && ctx->in[i]->kind != OX_VALUE_NONE;
}

/* whether the model asked for output i (omitted optional outputs still get a
 * scratch slot, so kernels may always write every output) */
static inline bool
ox_has_output(const ox_kernel_ctx *ctx, int i)
{
	return i >= 0 && i < ctx->n_out && i < ctx->node->n_outputs && ctx->node->outputs[i] >= 0;
}

/*
 * Whether the run needs output i: false for the outputs ox_kernel_ctx.unread
 * marks, which the kernel may then skip writing (it may also write them)
 */
static inline bool
ox_output_wanted(const ox_kernel_ctx *ctx, int i)
{
	return ox_has_output(ctx, i) && !(i < 64 && (ctx->unread >> i) & 1);
}

/*
 * Allocate output i as a tensor of the given type and shape (reusing the
 * slot's buffer when large enough) and return it; NULL with ctx->st set on
 * failure.  For an omitted optional output it returns a scratch tensor the
 * executor discards, so kernels need not special-case omitted outputs.
 */
ox_tensor  *ox_out_tensor(ox_kernel_ctx *ctx, int i, ox_dtype dt, int rank,
						  const int64_t *dims);
/*
 * Make output o a tensor of the given shape over the buffer of src, when
 * src is one of the node's inputs, ctx->movable allows taking it and it
 * owns a buffer of the same number of elements: the kernels that only
 * reinterpret a shape (Reshape, Squeeze, Identity...) then copy nothing.
 * The input gets output o's previous buffer, which the executor pools when
 * it releases the input after the node.
 * Returns false, changing nothing, when the buffer cannot be taken.
 */
bool		ox_take_input_buffer(ox_kernel_ctx *ctx, const ox_tensor *src, int o, int rank,
								 const int64_t *dims);
/* output i as a raw value to fill (sequences, maps, optionals) */
ox_value   *ox_out_value(ox_kernel_ctx *ctx, int i);
/*
 * Executor check after a kernel: an output that is a sequence or a map
 * (built from copies, outside ox_out_tensor) must fit in max_run_memory
 * next to what the run has allocated.  It is counted as held, not added
 * to the run's total: a Loop that rebuilds a growing sequence every
 * iteration frees the previous one, and only the live one matters.
 */
ox_code		ox_check_output_values(ox_kernel_ctx *ctx);

/*
 * Workspace.  Buffers a kernel allocates for itself during a run (im2col
 * columns, staging copies, index tables) count against
 * max_run_memory together with the output tensors the run has allocated:
 * ox_workspace_reserve fails with OX_LIMIT_EXCEEDED, before anything is
 * allocated, when those outputs plus the workspace the running kernel has
 * reserved so far plus `bytes` would pass the limit.  A kernel's workspace
 * is transient: its reservations end when it returns, so the sum over one
 * kernel bounds what it holds at any moment (an upper bound: buffers freed
 * early still count until the kernel returns).  Outside a run (session
 * creation, unit tests) and on worker threads nothing is counted: their
 * per-thread buffers are sized by cache blocks and the model's weights.
 *
 * ox_workspace_alloc: reserve, then malloc (a non-NULL pointer even for 0
 * bytes); NULL with st set when refused or out of memory.  Free with free().
 * The first error stays in st (ox_fail keeps it), so a caller's own
 * out-of-memory message after a NULL does not hide the limit.
 */
ox_code		ox_workspace_reserve(size_t bytes, ox_status *st, const char *what);
void	   *ox_workspace_alloc(size_t bytes, ox_status *st, const char *what);
/* zeroed, like calloc(n, esize); free with free() */
void	   *ox_workspace_calloc(size_t n, size_t esize, ox_status *st, const char *what);
/* 64-byte aligned (ox_aligned_alloc); free with ox_aligned_free() */
void	   *ox_workspace_aligned(size_t bytes, ox_status *st, const char *what);

/*
 * The context of the kernel running on this thread, or NULL (worker threads,
 * unit tests).  Shared helpers deep inside a kernel (GEMM) use it for the
 * thread count and the status, instead of every signature carrying ctx.
 */
ox_kernel_ctx *ox_kernel_current(void);
void		ox_kernel_set_current(ox_kernel_ctx *ctx);

/*
 * Cancellation.  The session's abort callback (query cancel and
 * statement_timeout in PostgreSQL) must stop a run within about 100 ms, so
 * anything that can take longer polls it.  Only the thread that runs the
 * kernel asks the callback (it belongs to the caller's environment, which
 * worker threads never touch): on other threads both calls return false.
 *
 * ox_kernel_should_abort: true when the run is to stop.  ctx->st then holds
 * OX_CANCELED, so a kernel may simply return ctx->st->code; one that carries
 * on anyway still fails (the executor checks ctx->st after every kernel) and
 * its incomplete outputs are never read.
 *
 * ox_kernel_poll: the same for long serial loops, cheap enough to call once
 * per row or element run: it counts work (elements, or any unit roughly
 * proportional to time) and asks the callback every OX_POLL_WORK units.
 *
 * On a worker thread (a chunk of ox_parallel_for) both calls answer whether
 * the kernel's thread has already been told to stop: a chunk that polls may
 * then end early.  ctx->st is CANCELED by then; a worker never writes it.
 */
#define OX_POLL_WORK ((int64_t) 1 << 16)
/*
 * Elements a block copy or fill handles between two polls: 1 MB of floats,
 * a few ms even into fresh pages (16 times as many took 12-16 ms a block
 * here when every page of the output was first touched).
 */
#define OX_POLL_BLOCK (4 * OX_POLL_WORK)
bool		ox_kernel_should_abort(ox_kernel_ctx *ctx);

/* work since the last poll, per thread (only the kernel's thread polls) */
extern __thread int64_t ox_poll_work __attribute__((tls_model("initial-exec")));

static inline bool
ox_kernel_poll(ox_kernel_ctx *ctx, int64_t work)
{
	if (!ctx || !ctx->should_abort)
		return false;
	ox_poll_work += work;
	if (ox_poll_work < OX_POLL_WORK)
		return false;
	return ox_kernel_should_abort(ctx);
}

/*
 * Split [0, n) into chunks and call fn(arg, begin, end) for each, on up to
 * ctx->nthreads threads.  fn must be pure computation.
 *
 * Between chunks the calling thread polls the abort callback; when the run
 * is canceled the remaining chunks are skipped and ctx->st holds
 * OX_CANCELED.  Whatever the loop was writing is then incomplete: code
 * after it must check ctx->st before using such data to address memory
 * (indices, offsets, sizes).  Plain numbers may be left as they are: the
 * executor discards the outputs of a failed kernel.
 */
typedef void (*ox_range_fn) (void *arg, int64_t begin, int64_t end);
void		ox_parallel_for(ox_kernel_ctx *ctx, int64_t n, int64_t min_chunk,
							ox_range_fn fn, void *arg);

/*
 * The same for a prepare packing a constant: on the session's threads
 * (pc->nthreads), nothing polled (creation is canceled between nodes).
 * Packing a large model's weights is most of creating its session, and
 * writing them is most of the packing (the page faults of fresh memory).
 */
static inline void
ox_prepare_parallel_for(const ox_prepare_ctx *pc, int64_t n, int64_t min_chunk, ox_range_fn fn, void *arg)
{
	ox_kernel_ctx ctx = {.nthreads = pc->nthreads > 1 ? pc->nthreads : 1};

	ox_parallel_for(&ctx, n, min_chunk, fn, arg);
}

/* CLOCK_MONOTONIC in nanoseconds */
int64_t		ox_now_ns(void);

/*
 * Threads the engine starts, its pool's and the CUDA runtime's, must never
 * take a process-directed signal (PostgreSQL's SIGALRM for
 * statement_timeout, SIGINT for a cancel: their handlers belong to the
 * backend's thread).  A new thread inherits its creator's mask, so code
 * that starts threads runs between these two: every signal blocked, then
 * the caller's mask back.
 */
void		ox_signals_block_all(sigset_t *old);
void		ox_signals_restore(const sigset_t *old);

/*
 * Bracket a multi-threaded run (the executor does): while at least one run
 * is inside, workers that finish a loop spin for the next one for up to
 * OX_SPIN_NS instead of going to sleep, so that the many short loops of a
 * run do not each pay a sleeping thread's wake-up (tens of microseconds,
 * more in a VM).  The run's start wakes the workers that sleep, so that
 * they are spinning by its first loop.  After the last run ends they sleep
 * at once.
 */
void		ox_parallel_run_begin(void);
void		ox_parallel_run_end(void);

/* for tests: workers asleep waiting for a loop, and how many a run's start woke in all */
void		ox_parallel_stats(int *sleeping, int64_t *run_start_wakeups);

/* registry */
const ox_kernel_def *ox_kernel_find(const char *domain, const char *op_type, int opset);

/*
 * k's prepare (OX_OK without one).  A prepare may make its state and then
 * fail (an attribute out of range, a packing that could not allocate):
 * that state is freed here with k's free_state, so that its callers keep
 * a state only from a prepare that succeeded.
 */
ox_code		ox_kernel_prepare(const ox_kernel_def *k, ox_prepare_ctx *pc);
/* iterate all kernels (for docs and inspection) */
int			ox_kernel_count(void);
const ox_kernel_def *ox_kernel_at(int i);

/* family tables, defined in src/kernels/cpu/<family>.c */
#define OX_DECLARE_KERNEL_FAMILY(fam) \
	extern const ox_kernel_def ox_kernels_##fam[]; \
	extern const int ox_kernels_##fam##_count

OX_DECLARE_KERNEL_FAMILY(elementwise);
OX_DECLARE_KERNEL_FAMILY(activation);
OX_DECLARE_KERNEL_FAMILY(reduce);
OX_DECLARE_KERNEL_FAMILY(gemm);
OX_DECLARE_KERNEL_FAMILY(conv);
OX_DECLARE_KERNEL_FAMILY(pool);
OX_DECLARE_KERNEL_FAMILY(pool_nhwc);
OX_DECLARE_KERNEL_FAMILY(nchwc);
OX_DECLARE_KERNEL_FAMILY(norm);
OX_DECLARE_KERNEL_FAMILY(tensor);
OX_DECLARE_KERNEL_FAMILY(ml_tree);
OX_DECLARE_KERNEL_FAMILY(ml_misc);
OX_DECLARE_KERNEL_FAMILY(control);
OX_DECLARE_KERNEL_FAMILY(sequence);
OX_DECLARE_KERNEL_FAMILY(rnn);
OX_DECLARE_KERNEL_FAMILY(quant);
OX_DECLARE_KERNEL_FAMILY(vision);
OX_DECLARE_KERNEL_FAMILY(transformer);
OX_DECLARE_KERNEL_FAMILY(loss);
OX_DECLARE_KERNEL_FAMILY(signal);
OX_DECLARE_KERNEL_FAMILY(text);
OX_DECLARE_KERNEL_FAMILY(random);
OX_DECLARE_KERNEL_FAMILY(preview);

/*
 * The channel-blocked (NCHWc) CNN operators of kernels/cpu/conv_nchwc.c,
 * engine-private: passes/layout_nchwc.c adds them to sessions that run.
 */
/*
 * (OX_NCHWC_DOMAIN, their domain, is in model/ir.h) the channels per block
 * this machine's kernels use: 16 with AVX-512, 8 with AVX2, 0 when it has
 * neither and the pass must leave graphs alone
 */
int			ox_kernels_nchwc_block(void);

#define OX_KERNEL_COUNT(table) ((int) (sizeof(table) / sizeof((table)[0])))

#endif							/* OX_KERNEL_H */
