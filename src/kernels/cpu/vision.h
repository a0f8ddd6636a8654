/*
 * vision.h
 *	  Private header of the vision kernel family (GridSample, AffineGrid,
 *	  NonMaxSuppression, RoiAlign, DeformConv, CenterCropPad, CumProd,
 *	  TensorScatter): element access for the floating types these ops
 *	  compute in, and the run functions the family table in vision.c lists.
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

/* float16 / bfloat16 / float / double: the types the geometry ops accept */
static inline bool
ox_vision_is_real(ox_dtype dt)
{
	return dt == OX_FLOAT || dt == OX_DOUBLE || dt == OX_FLOAT16 || dt == OX_BFLOAT16;
}

/* element i of a real tensor's data, as double */
static inline double
ox_vision_load(const void *data, ox_dtype dt, int64_t i)
{
	switch (dt)
	{
		case OX_FLOAT:
			return ((const float *) data)[i];
		case OX_DOUBLE:
			return ((const double *) data)[i];
		case OX_FLOAT16:
			return ox_half_to_float(((const uint16_t *) data)[i]);
		case OX_BFLOAT16:
			return ox_bf16_to_float(((const uint16_t *) data)[i]);
		default:
			return 0;
	}
}

static inline void
ox_vision_store(void *data, ox_dtype dt, int64_t i, double v)
{
	ox_store_real(data, dt, i, v);
}

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
