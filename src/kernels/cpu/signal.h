/*
 * signal.h
 *	  Private header of the signal kernel family: the entry points that the
 *	  family table in signal.c collects from signal_window.c and
 *	  signal_det.c, and small helpers they share.
 *
 * Symbols that leave a file carry the signal_ prefix so that they cannot
 * clash with other families.
 */
#ifndef OX_KERNELS_CPU_SIGNAL_H
#define OX_KERNELS_CPU_SIGNAL_H

#include "kernels/kernel.h"

/* signal_window.c */
ox_code		signal_window_prepare(ox_prepare_ctx *pc);
ox_code		signal_window_run(ox_kernel_ctx *ctx);
void		signal_window_free(void *state);
ox_code		signal_mel_prepare(ox_prepare_ctx *pc);
ox_code		signal_mel_run(ox_kernel_ctx *ctx);
void		signal_mel_free(void *state);

/* signal_det.c */
ox_code		signal_det_run(ox_kernel_ctx *ctx);

/*
 * Read a scalar integer input (rank 0, or one element of rank 1) of type
 * int32 or int64 into *v; what names the input in messages.
 */
ox_code		signal_scalar_int(ox_kernel_ctx *ctx, const char *op, const char *what,
							  const ox_tensor *t, int64_t *v);

/* whether an output_datatype attribute value names a numeric type windows may produce */
bool		signal_output_type_ok(int64_t dt);

#endif							/* OX_KERNELS_CPU_SIGNAL_H */
