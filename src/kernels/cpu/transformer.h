/*
 * transformer.h
 *	  Private header of the transformer kernel family (Attention,
 *	  RotaryEmbedding): the run/prepare entry points that the family table
 *	  in transformer.c collects from the other transformer_*.c files.
 *
 * Symbols that leave a file carry the transformer_ prefix so that they
 * cannot clash with other families.
 */
#ifndef OX_KERNELS_CPU_TRANSFORMER_H
#define OX_KERNELS_CPU_TRANSFORMER_H

#include "kernels/kernel.h"

/* transformer_rotary.c */
ox_code		transformer_rotary_prepare(ox_prepare_ctx *pc);
ox_code		transformer_rotary_run(ox_kernel_ctx *ctx);
void		transformer_rotary_free(void *state);

/* transformer_sdpa.c: onnx_pg.fused ScaledDotProductAttention (passes/fuse_attention.c) */
ox_code		transformer_sdpa_prepare(ox_prepare_ctx *pc);
ox_code		transformer_sdpa_run(ox_kernel_ctx *ctx);
void		transformer_sdpa_free(void *state);
/* tests: 1 runs the portable code on every machine, 0 what the CPU has, -1 asks; returns the setting before */
int			transformer_sdpa_force_portable(int on);

#endif							/* OX_KERNELS_CPU_TRANSFORMER_H */
