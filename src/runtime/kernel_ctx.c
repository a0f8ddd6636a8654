/*
 * kernel_ctx.c
 *	  Services the executor offers kernels: output allocation, abort
 *	  polling, parallel loops.
 */
#include "kernels/kernel.h"

#include <stdlib.h>
#include <string.h>

ox_tensor *
ox_out_tensor(ox_kernel_ctx *ctx, int i, ox_dtype dt, int rank, const int64_t *dims)
{
	ox_value   *v;

	if (i < 0 || i >= ctx->n_out || !ctx->out[i])
	{
		ox_fail(ctx->st, OX_INTERNAL, "kernel wrote output %d of %d", i, ctx->n_out);
		return NULL;
	}
	v = ctx->out[i];
	if (v->kind != OX_VALUE_TENSOR)
	{
		ox_value_release(v);
		v->kind = OX_VALUE_TENSOR;
	}
	if (ctx->supply_buffer && !v->tensor.data && dt != OX_STRING)
	{
		int64_t		n = ox_shape_numel(rank, dims);

		if (n > 0)
			ctx->supply_buffer(ctx->exec, &v->tensor, (size_t) n * ox_dtype_size(dt));
	}
	if (ctx->run_memory_limit && ctx->run_new_bytes && dt != OX_STRING)
	{
		int64_t		n = ox_shape_numel(rank, dims);
		size_t		need = n > 0 ? (size_t) n * ox_dtype_size(dt) : 0;

		/* only an allocation counts: a buffer big enough is reused */
		if (n > 0 && (!v->tensor.data || v->tensor.capacity < need) &&
			(need > ctx->run_memory_limit ||
			 *ctx->run_new_bytes > ctx->run_memory_limit - need))
		{
			ox_fail(ctx->st, OX_LIMIT_EXCEEDED,
					"output %d needs %zu bytes, which would make this run hold more than "
					"max_run_memory (%zu bytes; it has allocated %zu)",
					i, need, ctx->run_memory_limit, *ctx->run_new_bytes);
			return NULL;
		}
	}
	{
		void	   *before = v->tensor.data;

		if (ox_tensor_alloc(&v->tensor, dt, rank, dims, ctx->st) != OX_OK)
			return NULL;
		if (v->tensor.data != before)
		{
			if (ctx->alloc_events)
				(*ctx->alloc_events)++;
			if (ctx->run_new_bytes && v->tensor.owns)
				*ctx->run_new_bytes += v->tensor.capacity;
		}
	}
	return &v->tensor;
}

bool
ox_take_input_buffer(ox_kernel_ctx *ctx, const ox_tensor *src, int o, int rank, const int64_t *dims)
{
	ox_tensor  *x,
			   *y;
	void	   *data;
	size_t		cap;
	bool		owns;
	int			i = 0;

	if (!ctx->movable || o < 0 || o >= ctx->n_out || !ctx->out[o] ||
		ctx->out[o]->kind != OX_VALUE_TENSOR || rank < 0 || rank > OX_MAX_RANK)
		return false;
	while (i < ctx->n_in && i < 64 && !(ctx->in[i] && &ctx->in[i]->tensor == src))
		i++;
	if (i == ctx->n_in || i == 64 || !(ctx->movable & ((uint64_t) 1 << i)) ||
		ctx->in[i]->kind != OX_VALUE_TENSOR)
		return false;
	x = &ctx->in[i]->tensor;
	y = &ctx->out[o]->tensor;
	/* a view of a constant, a feed or an outer value owns nothing to give */
	if (!x->owns || !x->data || x->dtype == OX_STRING || x->released ||
		ox_shape_numel(rank, dims) != ox_tensor_numel(x))
		return false;
	data = y->data;
	cap = y->capacity;
	owns = y->owns;
	y->data = x->data;
	y->capacity = x->capacity;
	y->owns = true;
	y->dtype = x->dtype;
	y->rank = rank;
	if (rank > 0)
		memcpy(y->dims, dims, sizeof(int64_t) * (size_t) rank);
	x->data = data;
	x->capacity = cap;
	x->owns = owns;
	/* one kernel may not take the same buffer twice */
	ctx->movable &= ~((uint64_t) 1 << i);
	return true;
}

ox_code
ox_workspace_reserve(size_t bytes, ox_status *st, const char *what)
{
	ox_kernel_ctx *ctx = ox_kernel_current();
	size_t		held;

	if (!ctx || !ctx->run_memory_limit || !ctx->run_new_bytes)
		return OX_OK;
	held = *ctx->run_new_bytes + ctx->ws_bytes;
	if (bytes > ctx->run_memory_limit || held > ctx->run_memory_limit - bytes)
		return ox_fail(st ? st : ctx->st, OX_LIMIT_EXCEEDED,
					   "%s: a workspace of %zu bytes would make this run hold more than "
					   "max_run_memory (%zu bytes; it holds %zu in outputs and %zu in workspace)",
					   what, bytes, ctx->run_memory_limit, *ctx->run_new_bytes, ctx->ws_bytes);
	ctx->ws_bytes += bytes;
	return OX_OK;
}

void *
ox_workspace_alloc(size_t bytes, ox_status *st, const char *what)
{
	void	   *p;

	if (ox_workspace_reserve(bytes, st, what) != OX_OK)
		return NULL;
	p = malloc(bytes > 0 ? bytes : 1);
	if (!p)
		ox_fail(st, OX_OUT_OF_MEMORY, "%s: could not allocate %zu bytes", what, bytes);
	return p;
}

void *
ox_workspace_calloc(size_t n, size_t esize, ox_status *st, const char *what)
{
	size_t		bytes;
	void	   *p;

	if (__builtin_mul_overflow(n, esize, &bytes) || bytes > SIZE_MAX / 2)
	{
		ox_fail(st, OX_LIMIT_EXCEEDED, "%s: a buffer of %zu elements is too large", what, n);
		return NULL;
	}
	if (ox_workspace_reserve(bytes, st, what) != OX_OK)
		return NULL;
	p = calloc(n > 0 ? n : 1, esize > 0 ? esize : 1);
	if (!p)
		ox_fail(st, OX_OUT_OF_MEMORY, "%s: could not allocate %zu bytes", what, bytes);
	return p;
}

void *
ox_workspace_aligned(size_t bytes, ox_status *st, const char *what)
{
	void	   *p;

	if (ox_workspace_reserve(bytes, st, what) != OX_OK)
		return NULL;
	p = ox_aligned_alloc(bytes > 0 ? bytes : 64);
	if (!p)
		ox_fail(st, OX_OUT_OF_MEMORY, "%s: could not allocate %zu bytes", what, bytes);
	return p;
}

/* bytes of the tensors a value holds (a sequence's items, a map's two tensors) */
static size_t
value_bytes(const ox_value *v, int depth)
{
	size_t		sum = 0;

	switch (v->kind)
	{
		case OX_VALUE_TENSOR:
			return v->tensor.data ? v->tensor.capacity : 0;
		case OX_VALUE_MAP:
			return v->map_keys.capacity + v->map_values.capacity;
		case OX_VALUE_SEQUENCE:
			/* sequences of sequences are bounded by the loader; stop anyway */
			if (depth > 8)
				return 0;
			for (int i = 0; i < v->seq_len; i++)
				sum += value_bytes(&v->seq_items[i], depth + 1);
			return sum;
		default:
			return 0;
	}
}

ox_code
ox_check_output_values(ox_kernel_ctx *ctx)
{
	if (!ctx->run_memory_limit || !ctx->run_new_bytes)
		return OX_OK;
	for (int i = 0; i < ctx->n_out; i++)
	{
		const ox_value *v = ctx->out[i];
		size_t		bytes;

		if (!v || v->kind == OX_VALUE_TENSOR)
			continue;
		bytes = value_bytes(v, 0);
		if (bytes > ctx->run_memory_limit ||
			*ctx->run_new_bytes > ctx->run_memory_limit - bytes)
			return ox_fail(ctx->st, OX_LIMIT_EXCEEDED,
						   "output %d is a %s holding %zu bytes, which would make this run hold more than "
						   "max_run_memory (%zu bytes; it has allocated %zu)",
						   i, v->kind == OX_VALUE_MAP ? "map" : "sequence", bytes,
						   ctx->run_memory_limit, *ctx->run_new_bytes);
	}
	return OX_OK;
}

ox_value *
ox_out_value(ox_kernel_ctx *ctx, int i)
{
	if (i < 0 || i >= ctx->n_out || !ctx->out[i])
	{
		ox_fail(ctx->st, OX_INTERNAL, "kernel wrote output %d of %d", i, ctx->n_out);
		return NULL;
	}
	ox_value_release(ctx->out[i]);
	ctx->out[i]->kind = OX_VALUE_TENSOR;
	return ctx->out[i];
}

/*
 * Work done since the last poll (ox_kernel_poll), per thread: only the
 * thread running a kernel polls, and nested kernels (a Loop body) may
 * share its count.
 */
__thread int64_t ox_poll_work __attribute__((tls_model("initial-exec")));

bool
ox_kernel_should_abort(ox_kernel_ctx *ctx)
{
	ox_poll_work = 0;
	if (!ctx || !ctx->should_abort)
		return false;
	/*
	 * Worker threads run pure computation, never the caller's callback:
	 * they see what it told the kernel's thread.  Without this a kernel
	 * whose chunks are long (fused attention: a slot of tasks sharing one
	 * packed K') ran its workers' chunks to the end, 12 s after a cancel.
	 */
	if (ox_kernel_current() != ctx)
		return __atomic_load_n(&ctx->canceled, __ATOMIC_ACQUIRE);
	if (!ctx->should_abort(ctx->abort_arg))
		return false;
	/* sticky: a kernel that ignores the answer still fails */
	ox_fail(ctx->st, OX_CANCELED, "the run was canceled");
	__atomic_store_n(&ctx->canceled, true, __ATOMIC_RELEASE);
	return true;
}

/*
 * initial-exec: the library is usually dlopen'ed (by PostgreSQL), where the
 * default model makes every access a call to __tls_get_addr; one pointer
 * fits easily in the static TLS space glibc reserves for such libraries.
 */
static __thread ox_kernel_ctx *current_ctx __attribute__((tls_model("initial-exec")));

ox_kernel_ctx *
ox_kernel_current(void)
{
	return current_ctx;
}

void
ox_kernel_set_current(ox_kernel_ctx *ctx)
{
	current_ctx = ctx;
}
