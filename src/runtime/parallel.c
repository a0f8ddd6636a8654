/*
 * parallel.c
 *	  ox_parallel_for.  For now it runs the range on the calling thread in
 *	  one chunk; the intra-op pool replaces the body without changing callers.
 */
#include "kernels/kernel.h"

void
ox_parallel_for(ox_kernel_ctx *ctx, int64_t n, int64_t min_chunk, ox_range_fn fn, void *arg)
{
	(void) ctx;
	(void) min_chunk;
	if (n > 0)
		fn(arg, 0, n);
}
