/*
 * context.c
 *	  The CUDA provider's device handling: the lazy device probe, the
 *	  per-session context (stream, cuBLAS and cuDNN handles, memory arena
 *	  bounded by cuda_memory_limit), and error mapping.  Every CUDA, cuBLAS
 *	  and cuDNN return code becomes an ox_status; nothing aborts or prints.
 */
#include "kernels/cuda/cuda_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Streams and cuBLAS/cuDNN handles outlive the sessions that used them:
 * cudnnCreate alone takes a large fraction of a second, and a backend (or
 * the conformance runner) builds many sessions.  A freed context parks its
 * handles here; the next context on the same device takes them.  A handle
 * is used by one context at a time, so concurrent sessions stay safe.
 */
typedef struct handle_set
{
	int			device;
	cudaStream_t stream;
	cublasHandle_t cublas;
	cudnnHandle_t cudnn;
} handle_set;

#define HANDLE_POOL_MAX 8
static handle_set handle_pool[HANDLE_POOL_MAX];
static int	handle_pool_n;
static pthread_mutex_t handle_pool_lock = PTHREAD_MUTEX_INITIALIZER;

static bool
take_handles(int device, handle_set *out)
{
	bool		found = false;

	pthread_mutex_lock(&handle_pool_lock);
	for (int i = handle_pool_n - 1; i >= 0; i--)
		if (handle_pool[i].device == device)
		{
			*out = handle_pool[i];
			handle_pool[i] = handle_pool[--handle_pool_n];
			found = true;
			break;
		}
	pthread_mutex_unlock(&handle_pool_lock);
	return found;
}

/* false when the pool is full: the caller destroys them */
static bool
park_handles(const handle_set *h)
{
	bool		parked = false;

	pthread_mutex_lock(&handle_pool_lock);
	if (handle_pool_n < HANDLE_POOL_MAX)
	{
		handle_pool[handle_pool_n++] = *h;
		parked = true;
	}
	pthread_mutex_unlock(&handle_pool_lock);
	return parked;
}

static int64_t runtime_calls;

void
oxc_count_call(void)
{
	runtime_calls++;
}

int64_t
ox_cuda_runtime_calls(void)
{
	return runtime_calls;
}

ox_code
oxc_cuda_check(cudaError_t e, const char *what, ox_status *st)
{
	if (e == cudaSuccess)
		return OX_OK;
	return ox_fail(st, e == cudaErrorMemoryAllocation ? OX_OUT_OF_MEMORY : OX_INTERNAL,
				   "CUDA error in %s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

ox_code
oxc_blas_check(cublasStatus_t e, const char *what, ox_status *st)
{
	if (e == CUBLAS_STATUS_SUCCESS)
		return OX_OK;
	return ox_fail(st, e == CUBLAS_STATUS_ALLOC_FAILED ? OX_OUT_OF_MEMORY : OX_INTERNAL,
				   "cuBLAS error in %s: %s", what, cublasGetStatusString(e));
}

ox_code
oxc_dnn_check(cudnnStatus_t e, const char *what, ox_status *st)
{
	if (e == CUDNN_STATUS_SUCCESS)
		return OX_OK;
	return ox_fail(st, e == CUDNN_STATUS_ALLOC_FAILED ? OX_OUT_OF_MEMORY :
				   e == CUDNN_STATUS_NOT_SUPPORTED ? OX_UNSUPPORTED : OX_INTERNAL,
				   "cuDNN error in %s: %s", what, cudnnGetErrorString(e));
}

/*
 * The CUDA runtime and driver start threads of their own when they first
 * initialize and when contexts and handles are made: those calls run with
 * every signal blocked (ox_signals_block_all, kernel.h).
 */
static bool probe_device(int device_id, char *why, size_t why_len);
static ox_cuda_ctx *ctx_create(int device_id, size_t memory_limit, bool fp16, ox_status *st);

bool
ox_cuda_probe(int device_id, char *why, size_t why_len)
{
	sigset_t	old;
	bool		ok;

	ox_signals_block_all(&old);
	ok = probe_device(device_id, why, why_len);
	ox_signals_restore(&old);
	return ok;
}

ox_cuda_ctx *
ox_cuda_ctx_create(int device_id, size_t memory_limit, bool fp16, ox_status *st)
{
	sigset_t	old;
	ox_cuda_ctx *cx;

	ox_signals_block_all(&old);
	cx = ctx_create(device_id, memory_limit, fp16, st);
	ox_signals_restore(&old);
	return cx;
}

static bool
probe_device(int device_id, char *why, size_t why_len)
{
	int			count = 0;
	cudaError_t e;

	oxc_count_call();
	e = cudaGetDeviceCount(&count);
	if (e != cudaSuccess)
	{
		snprintf(why, why_len, "no CUDA device is available (cudaGetDeviceCount: %s)",
				 cudaGetErrorString(e));
		(void) cudaGetLastError();
		return false;
	}
	if (count <= 0)
	{
		snprintf(why, why_len, "no CUDA device is available");
		return false;
	}
	if (device_id < 0 || device_id >= count)
	{
		snprintf(why, why_len, "CUDA device %d does not exist (%d device%s)", device_id, count,
				 count == 1 ? "" : "s");
		return false;
	}
	e = cudaSetDevice(device_id);
	if (e == cudaSuccess)
		e = cudaFree(NULL);		/* creates the primary context now, not mid-run */
	if (e != cudaSuccess)
	{
		snprintf(why, why_len, "CUDA device %d cannot be used (%s)", device_id, cudaGetErrorString(e));
		(void) cudaGetLastError();
		return false;
	}
	/* last: a machine without a device never pays for opening them */
	return ox_cuda_libs_load(why, why_len);
}

static ox_cuda_ctx *
ctx_create(int device_id, size_t memory_limit, bool fp16, ox_status *st)
{
	ox_cuda_ctx *cx = calloc(1, sizeof(ox_cuda_ctx));

	oxc_count_call();
	if (!cx)
	{
		ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate the CUDA context");
		return NULL;
	}
	{
		char		why[512];

		if (!ox_cuda_libs_load(why, sizeof(why)))
		{
			ox_fail(st, OX_UNSUPPORTED, "%s", why);
			free(cx);
			return NULL;
		}
	}
	cx->device = device_id;
	cx->limit = memory_limit;
	cx->fp16 = fp16;
	if (oxc_cuda_check(cudaSetDevice(device_id), "cudaSetDevice", st) != OX_OK)
	{
		ox_cuda_ctx_free(cx);
		return NULL;
	}
	{
		handle_set	h;

		if (take_handles(device_id, &h))
		{
			cx->stream = h.stream;
			cx->cublas = h.cublas;
			cx->cudnn = h.cudnn;
		}
	}
	if ((!cx->stream &&
		 oxc_cuda_check(cudaStreamCreateWithFlags(&cx->stream, cudaStreamNonBlocking),
						"cudaStreamCreate", st) != OX_OK) ||
		(!cx->cublas &&
		 oxc_blas_check(cublasCreate(&cx->cublas), "cublasCreate", st) != OX_OK) ||
		oxc_blas_check(cublasSetStream(cx->cublas, cx->stream), "cublasSetStream", st) != OX_OK ||
		oxc_blas_check(cublasSetPointerMode(cx->cublas, CUBLAS_POINTER_MODE_HOST),
					   "cublasSetPointerMode", st) != OX_OK ||
	/*
	 * Exact float32 by default: the default math mode, and GEMMs ask for
	 * CUBLAS_COMPUTE_32F (no TF32) unless fp16 is set (gemm: FAST_16F).
	 */
		oxc_blas_check(cublasSetMathMode(cx->cublas, CUBLAS_DEFAULT_MATH), "cublasSetMathMode",
					   st) != OX_OK)
	{
		ox_cuda_ctx_free(cx);
		return NULL;
	}
	return cx;
}

void
ox_cuda_ctx_free(ox_cuda_ctx *cx)
{
	if (!cx)
		return;
	(void) cudaSetDevice(cx->device);
	if (cx->stream)
		(void) cudaStreamSynchronize(cx->stream);
	if (cx->workspace)
		oxc_release(cx, cx->workspace, cx->workspace_cap);
	for (int i = 0; i < cx->n_cache; i++)
		(void) cudaFree(cx->cache[i].ptr);
	free(cx->cache);
	if (cx->stream && cx->cublas && cudaGetLastError() == cudaSuccess)
	{
		handle_set	h = {cx->device, cx->stream, cx->cublas, cx->cudnn};

		if (park_handles(&h))
		{
			free(cx);
			return;
		}
	}
	if (cx->cudnn)
		(void) cudnnDestroy(cx->cudnn);
	if (cx->cublas)
		(void) cublasDestroy(cx->cublas);
	if (cx->stream)
		(void) cudaStreamDestroy(cx->stream);
	(void) cudaGetLastError();
	free(cx);
}

ox_code
oxc_cudnn(ox_cuda_ctx *cx, ox_status *st)
{
	if (cx->cudnn)
		return OX_OK;
	OX_TRY(oxc_dnn_check(cudnnCreate(&cx->cudnn), "cudnnCreate", st));
	return oxc_dnn_check(cudnnSetStream(cx->cudnn, cx->stream), "cudnnSetStream", st);
}

/* ---- arena ------------------------------------------------------------ */

static void
drop_cache(ox_cuda_ctx *cx)
{
	/* cudaFree waits for the device: the blocks may still be read */
	for (int i = 0; i < cx->n_cache; i++)
	{
		(void) cudaFree(cx->cache[i].ptr);
		cx->held -= cx->cache[i].cap;
	}
	cx->n_cache = 0;
}

ox_code
oxc_alloc(ox_cuda_ctx *cx, size_t bytes, void **ptr, size_t *cap, ox_status *st)
{
	int			best = -1;
	cudaError_t e;
	size_t		want;

	if (bytes == 0)
		bytes = 1;
	/* 256-byte granules; a cached block up to twice the size is good enough */
	want = (bytes + 255) & ~(size_t) 255;
	for (int i = 0; i < cx->n_cache; i++)
		if (cx->cache[i].cap >= want && cx->cache[i].cap <= 2 * want + 65536 &&
			(best < 0 || cx->cache[i].cap < cx->cache[best].cap))
			best = i;
	if (best >= 0)
	{
		*ptr = cx->cache[best].ptr;
		*cap = cx->cache[best].cap;
		cx->cache[best] = cx->cache[--cx->n_cache];
		return OX_OK;
	}
	if (cx->limit && cx->held + want > cx->limit)
		drop_cache(cx);
	if (cx->limit && cx->held + want > cx->limit)
		return ox_fail(st, OX_LIMIT_EXCEEDED,
					   "the CUDA memory limit of %zu bytes (cuda_memory_limit) is exceeded: %zu bytes in use, %zu more needed",
					   cx->limit, cx->held, want);
	e = cudaMalloc(ptr, want);
	if (e == cudaErrorMemoryAllocation && cx->n_cache > 0)
	{
		(void) cudaGetLastError();
		drop_cache(cx);
		e = cudaMalloc(ptr, want);
	}
	if (e != cudaSuccess)
	{
		(void) cudaGetLastError();
		*ptr = NULL;
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate %zu bytes on CUDA device %d: %s",
					   want, cx->device, cudaGetErrorString(e));
	}
	*cap = want;
	cx->held += want;
	return OX_OK;
}

void
oxc_release(ox_cuda_ctx *cx, void *ptr, size_t cap)
{
	if (!ptr)
		return;
	if (cx->n_cache == cx->cap_cache)
	{
		int			n = cx->cap_cache ? cx->cap_cache * 2 : 64;
		ox_cuda_block *b = realloc(cx->cache, sizeof(ox_cuda_block) * n);

		if (!b)
		{
			(void) cudaFree(ptr);
			cx->held -= cap;
			return;
		}
		cx->cache = b;
		cx->cap_cache = n;
	}
	cx->cache[cx->n_cache].ptr = ptr;
	cx->cache[cx->n_cache].cap = cap;
	cx->n_cache++;
}

ox_code
oxc_workspace(ox_cuda_ctx *cx, size_t bytes, ox_status *st)
{
	if (bytes <= cx->workspace_cap)
		return OX_OK;
	if (cx->workspace)
		oxc_release(cx, cx->workspace, cx->workspace_cap);
	cx->workspace = NULL;
	cx->workspace_cap = 0;
	return oxc_alloc(cx, bytes, &cx->workspace, &cx->workspace_cap, st);
}

/* ---- device values ---------------------------------------------------- */

ox_code
oxc_dval_alloc(ox_cuda_ctx *cx, ox_dval *v, ox_dtype dt, int rank, const int64_t *dims, ox_status *st)
{
	int64_t		n = ox_shape_numel(rank, dims);
	size_t		bytes;

	if (rank < 0 || rank > OX_MAX_RANK || n < 0 || n > OX_MAX_ELEMENTS)
		return ox_fail(st, OX_INVALID_ARGUMENT, "invalid output shape");
	bytes = (size_t) n * ox_dtype_size(dt);
	if (v->alias || v->persistent)
		return ox_fail(st, OX_INTERNAL, "a device value is written twice");
	if (v->d && v->cap < bytes)
		oxc_dval_release(cx, v);
	if (!v->d)
		OX_TRY(oxc_alloc(cx, bytes, &v->d, &v->cap, st));
	v->dtype = dt;
	v->rank = rank;
	memcpy(v->dims, dims, sizeof(int64_t) * rank);
	v->h = NULL;
	v->live = true;
	return OX_OK;
}

void
oxc_dval_release(ox_cuda_ctx *cx, ox_dval *v)
{
	if (v->persistent)
		return;
	if (v->d && !v->alias)
		oxc_release(cx, v->d, v->cap);
	v->d = NULL;
	v->cap = 0;
	v->alias = false;
	v->h = NULL;
	v->live = false;
}

ox_code
oxc_dval_device(ox_cuda_ctx *cx, ox_dval *v, ox_status *st)
{
	size_t		bytes;
	int64_t		n = oxc_numel(v);

	if (v->d)
		return OX_OK;
	if (n < 0)
		return ox_fail(st, OX_INVALID_ARGUMENT, "invalid tensor shape");
	bytes = (size_t) n * ox_dtype_size(v->dtype);
	if (bytes > 0 && !v->h)
		return ox_fail(st, OX_INTERNAL, "a device value has no data");
	OX_TRY(oxc_alloc(cx, bytes, &v->d, &v->cap, st));
	cx->upload_bytes += bytes;
	if (bytes > 0)
		OX_TRY(oxc_cuda_check(cudaMemcpyAsync(v->d, v->h, bytes, cudaMemcpyHostToDevice, cx->stream),
							  "cudaMemcpyAsync (upload)", st));
	return OX_OK;
}

ox_code
oxc_in(ox_cuda_op_ctx *oc, int i, ox_dtype dt, ox_dval **out)
{
	ox_dval    *v = i < oc->n_in ? oc->in[i] : NULL;

	if (!v || !v->live)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "input %d is missing", i);
	if (v->dtype != dt)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "input %d has element type %s, expected %s", i,
					   ox_dtype_name(v->dtype), ox_dtype_name(dt));
	OX_TRY(oxc_dval_device(oc->cx, v, oc->st));
	*out = v;
	return OX_OK;
}

ox_code
oxc_out(ox_cuda_op_ctx *oc, int i, ox_dtype dt, int rank, const int64_t *dims, ox_dval **out)
{
	if (i >= oc->n_out)
		return ox_fail(oc->st, OX_INTERNAL, "output %d out of range", i);
	OX_TRY(oxc_dval_alloc(oc->cx, oc->out[i], dt, rank, dims, oc->st));
	*out = oc->out[i];
	return OX_OK;
}

ox_code
oxc_host_ints(ox_cuda_op_ctx *oc, int i, const int64_t **vals, int64_t *n)
{
	ox_dval    *v = i < oc->n_in ? oc->in[i] : NULL;

	if (!v || !v->live)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "input %d is missing", i);
	if (v->dtype != OX_INT64 || v->rank > 1)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "input %d must be a 1-D int64 tensor", i);
	if (!v->h && oxc_numel(v) > 0)
		return ox_fail(oc->st, OX_INTERNAL, "input %d is not available on the host", i);
	*vals = v->h;
	*n = oxc_numel(v);
	return OX_OK;
}

/* ---- placement helpers ------------------------------------------------ */

ox_dtype
oxc_input_type(const ox_graph *g, const ox_node *n, int i)
{
	const ox_value_def *d = ox_node_input_def(g, n, i);

	if (!d)
		return OX_UNDEFINED;
	if (d->init)
		return d->init->dtype;
	return d->type.kind == OX_TYPE_TENSOR ? d->type.elem : OX_UNDEFINED;
}

const ox_tensor *
oxc_const(const ox_graph *g, const ox_node *n, int i)
{
	const ox_value_def *d = ox_node_input_def(g, n, i);

	return d && d->init && !d->is_input ? d->init : NULL;
}

/*
 * Whether value v is float32.  A value whose type inference left unknown is
 * float32 when a node the provider supports made it from a float32 first
 * input: every such op keeps its first input's element type.
 */
static bool
value_is_float(const ox_graph *g, int v, int depth)
{
	const ox_value_def *d = &g->values[v];
	const ox_node *p;

	if (d->init)
		return d->init->dtype == OX_FLOAT;
	if (d->type.kind == OX_TYPE_TENSOR && d->type.elem != OX_UNDEFINED)
		return d->type.elem == OX_FLOAT;
	if (d->type.kind != OX_TYPE_TENSOR && d->type.kind != OX_TYPE_UNKNOWN)
		return false;
	if (d->producer < 0 || depth > 64)
		return false;
	p = &g->nodes[d->producer];
	if (!ox_cuda_find_op(p) || p->n_inputs < 1 || p->inputs[0] < 0)
		return false;
	return value_is_float(g, p->inputs[0], depth + 1);
}

/* float32 inputs [0, n_inputs_checked) and outputs (known, or made from float32) */
bool
oxc_all_float(const ox_graph *g, const ox_node *n, int n_inputs_checked)
{
	for (int i = 0; i < n->n_inputs && i < n_inputs_checked; i++)
		if (n->inputs[i] >= 0 && !value_is_float(g, n->inputs[i], 0))
			return false;
	for (int o = 0; o < n->n_outputs; o++)
	{
		int			v = n->outputs[o];
		const ox_type *t;

		if (v < 0)
			continue;
		t = &g->values[v].type;
		if (t->kind == OX_TYPE_TENSOR && t->elem != OX_UNDEFINED)
		{
			if (t->elem != OX_FLOAT)
				return false;
		}
		else if (t->kind != OX_TYPE_UNKNOWN && t->kind != OX_TYPE_TENSOR)
			return false;
		/* unknown: the op keeps input 0's type, checked above */
		else if (n->n_inputs < 1 || n->inputs[0] < 0 || n_inputs_checked < 1)
			return false;
	}
	return true;
}
