/*
 * cuda_provider.h
 *	  The CUDA execution provider as the runtime sees it.  Plain C with no
 *	  CUDA headers: the runtime includes it only when built with
 *	  OX_WITH_CUDA, and everything behind it lives in src/kernels/cuda/.
 *
 * Nothing here touches the CUDA runtime until ox_cuda_probe() or
 * ox_cuda_ctx_create() is called, which the runtime does only for a
 * session that asks for cuda: loading the library (into the postmaster,
 * with preloading) creates no CUDA context and starts no thread.
 */
#ifndef OX_CUDA_PROVIDER_H
#define OX_CUDA_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel.h"

#define OX_CUDA_PARTITION_OP "CudaPartition"
#define OX_PARTITION_DOMAIN_NAME "com.onnx_pg"	/* as runtime/placement.h */

typedef struct ox_cuda_ctx ox_cuda_ctx;

/* whether device_id can be used; on false a sentence in why */
bool		ox_cuda_probe(int device_id, char *why, size_t why_len);

/*
 * Opens cuBLAS and cuDNN of the major versions the provider was built with
 * (libs.c), once per process: later calls return the first call's answer.
 * Thread-safe.  On false a sentence in why.
 */
bool		ox_cuda_libs_load(char *why, size_t why_len);

/* per-session device context: stream, cuBLAS/cuDNN handles, memory arena */
ox_cuda_ctx *ox_cuda_ctx_create(int device_id, size_t memory_limit, bool fp16, ox_status *st);
void		ox_cuda_ctx_free(ox_cuda_ctx *c);

/* whether node n of graph g can run inside a CUDA partition */
bool		ox_cuda_supports(const ox_graph *g, const ox_node *n);
/* whether the device kernel of n reads input i on the host (shapes, axes) */
bool		ox_cuda_host_input(const ox_node *n, int i);

/* CUDA runtime entry points the provider has called (for tests) */
int64_t		ox_cuda_runtime_calls(void);

/* the kernel family: com.onnx_pg CudaPartition */
OX_DECLARE_KERNEL_FAMILY(cuda);

#endif							/* OX_CUDA_PROVIDER_H */
