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

#endif							/* OX_KERNELS_CPU_TRANSFORMER_H */
