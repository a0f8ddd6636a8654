/*
 * conv_nchwc.h
 *	  What the channel-blocked (NCHW16c) kernels share: conv_nchwc.c (reorders,
 *	  convolution, pooling) and conv_nchwc_depthwise.c.
 */
#ifndef OX_KERNELS_CPU_CONV_NCHWC_H
#define OX_KERNELS_CPU_CONV_NCHWC_H

#include "kernels/cpu/conv_fast.h"

#define BLK 16					/* channels per block */
/* the spatial axes of a 2-D nn_geom (right-aligned in NN_MAX_SPATIAL) */
#define AH (NN_MAX_SPATIAL - 2)
#define AW (NN_MAX_SPATIAL - 1)

/* true on AVX-512; else false with st saying that op needs it */
static inline bool
nn_nchwc_have_avx512(const char *op, ox_status *st)
{
	if (nn_conv_fast_isa() == NN_ISA_AVX512)
		return true;
	ox_fail(st, OX_UNSUPPORTED, "onnx_pg.nchwc %s needs AVX-512", op);
	return false;
}

/* x (input `what` of op) is a float tensor [N, CB, H, W, 16] */
static inline ox_code
nn_nchwc_check_blocked(const char *op, const char *what, const ox_tensor *x, ox_status *st)
{
	if (!x)
		return ox_fail(st, OX_INVALID_ARGUMENT, "onnx_pg.nchwc %s: input %s is required", op, what);
	if (x->dtype != OX_FLOAT || x->rank != 5 || x->dims[4] != BLK)
		return ox_fail(st, OX_INVALID_ARGUMENT,
					   "onnx_pg.nchwc %s: %s must be a float tensor [N, C/16, H, W, 16]", op, what);
	return OX_OK;
}

/* taps k in [lo, hi) with 0 <= base + k * step < n */
static inline void
nn_nchwc_tap_range(int64_t base, int64_t step, int64_t taps, int64_t n, int64_t *lo, int64_t *hi)
{
	int64_t		l = 0,
				h = taps;

	while (l < h && base + l * step < 0)
		l++;
	while (h > l && base + (h - 1) * step >= n)
		h--;
	*lo = l;
	*hi = h;
}

/*
 * A blocked convolution's bias, B [m] padded with zeros to the lanes of its
 * output blocks: made once at prepare when B is a constant or absent (a
 * copy per run cost MobileNet-v2 half a microsecond a node, with the other
 * thread waiting for the loop), else per run.
 */
typedef struct nn_nchwc_bias
{
	int64_t		len;			/* floats: the lanes of the output blocks */
	float	   *padded;			/* the padded bias, or NULL: made per run */
	const void *src;			/* the constant's data it came from; NULL without B */
} nn_nchwc_bias;

/* conv_nchwc.c: the shared beginnings of a blocked convolution's prepare and run */
ox_code		nn_nchwc_prepare_begin(ox_prepare_ctx *pc, const char *op, const ox_tensor **w, nn_window *win,
								   nn_activation *act);
ox_code		nn_nchwc_prepare_bias(ox_prepare_ctx *pc, const char *op, int64_t m, int64_t len,
								  nn_nchwc_bias *pb);
void		nn_nchwc_bias_free(nn_nchwc_bias *pb);
ox_code		nn_nchwc_conv_begin(ox_kernel_ctx *ctx, const char *op, const nn_window *win, int64_t group,
								int64_t c, int64_t cb, int64_t m, const void *w_data, bool nchw_input,
								const nn_nchwc_bias *pb, nn_conv_shape *cs, ox_tensor **y, float **bias);
void		nn_nchwc_bias_done(const nn_nchwc_bias *pb, float *bias);

/*
 * conv_nchwc_winograd.c: 3x3 stride-1 convolutions by F(4x4, 3x3), the
 * transformed weights packed once per session from W [m, c, 3, 3] (which
 * must outlive them: non-finite outputs are recomputed from it)
 */
typedef struct nn_nchwc_wino nn_nchwc_wino;
nn_nchwc_wino *nn_nchwc_winograd_pack(int64_t m, int64_t c, const float *w, ox_status *st);
void		nn_nchwc_winograd_free(nn_nchwc_wino *p);
ox_code		nn_nchwc_winograd_run(ox_kernel_ctx *ctx, const nn_nchwc_wino *p, const nn_conv_shape *cs,
								  const float *x, const float *z, const float *bias,
								  const nn_activation *act, float *y);

/* conv_nchwc_depthwise.c */
ox_code		nn_nchwc_depthwise_prepare(ox_prepare_ctx *pc);
ox_code		nn_nchwc_depthwise_run(ox_kernel_ctx *ctx);
void		nn_nchwc_depthwise_free(void *state);

#endif							/* OX_KERNELS_CPU_CONV_NCHWC_H */
