/*
 * vision.h
 *	  Private header of the vision kernel family (GridSample, AffineGrid,
 *	  NonMaxSuppression, RoiAlign, DeformConv, CenterCropPad,
 *	  TensorScatter): the run functions the family table in vision.c
 *	  lists.  These ops compute in the floating types (ox_dtype_is_float),
 *	  their elements read and written with ox_load_real and ox_store_real.
 *
 * Symbols that leave a file carry the ox_vision_ prefix.
 */
#ifndef OX_KERNELS_CPU_VISION_H
#define OX_KERNELS_CPU_VISION_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/kernel.h"

/* buffer size for a formatted shape */
#define OX_VISION_SHAPE_LEN 192

/* vision_grid.c */
ox_code		ox_vision_grid_sample_prepare(ox_prepare_ctx *pc);
ox_code		ox_vision_grid_sample_run(ox_kernel_ctx *ctx);
ox_code		ox_vision_affine_grid_run(ox_kernel_ctx *ctx);

/* vision_roi.c */
ox_code		ox_vision_nms_run(ox_kernel_ctx *ctx);
ox_code		ox_vision_roi_align_prepare(ox_prepare_ctx *pc);
ox_code		ox_vision_roi_align_run(ox_kernel_ctx *ctx);

/* vision_deform.c */
ox_code		ox_vision_deform_conv_run(ox_kernel_ctx *ctx);

/* vision.c: state freed with free() */
void		ox_vision_free_state(void *state);

#endif							/* OX_KERNELS_CPU_VISION_H */
