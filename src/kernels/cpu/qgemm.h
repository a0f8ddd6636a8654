/*
 * qgemm.h
 *	  Our int8 GEMM: exact int32 sums of (a - a_zero) * (w - w_zero) over a
 *	  reduction, with an epilogue that writes int32, float or requantized
 *	  uint8/int8.  Micro-kernels for AVX-512 VNNI (vpdpbusd), AVX2 (exact
 *	  vpmaddwd on operands widened to 16 bits) and portable C are chosen once
 *	  by cpuid; every path gives bit-identical integer sums.
 *
 * Operands: one side is always unsigned 8-bit (activations; int8 inputs are
 * shifted by 128 on the fly, their zero point with them) and the other is
 * signed 8-bit (weights; uint8 weights are shifted down by 128 when
 * packed).  Weights are packed once per session in one of two layouts:
 *
 *	 OX_QG_VEC		channels are the vector lanes: panels of OX_QG_VEC_NR
 *					channels, [panel][k/4][64][4].  ox_qgemm_rows multiplies
 *					row-major activations (MatMul, Gemm) by them.
 *	 OX_QG_BCAST	channels are broadcast: blocks of OX_QG_BC_MR channels,
 *					[block][k/4][8][4].  ox_qgemm_cols multiplies them by an
 *					operand packed column-wise (im2col of a convolution), so
 *					a convolution writes NCHW rows directly.
 *
 * The reduction is padded to a multiple of 4 with zero weights.
 */
#ifndef OX_QGEMM_H
#define OX_QGEMM_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/kernel.h"

#define OX_QG_VEC_NR 64			/* VEC: channels per panel */
#define OX_QG_ROWS_MR 6			/* VEC: rows of activations per micro-tile */
#define OX_QG_BC_MR 8			/* BCAST: channels per block */
#define OX_QG_COLS_NR 48		/* BCAST: columns per panel of the packed operand */

typedef enum ox_qg_layout
{
	OX_QG_VEC,
	OX_QG_BCAST
} ox_qg_layout;

/* constant weights, packed */
typedef struct ox_qgemm_weights
{
	ox_qg_layout layout;
	int64_t		n_ch;			/* output channels */
	int64_t		k;				/* reduction length */
	int64_t		k4;				/* (k + 3) / 4 */
	int8_t	   *data;			/* 64-byte aligned */
	int32_t    *zp;				/* n_ch zero points, signed 8-bit domain */
	int32_t    *sum;			/* n_ch sums over k of the (shifted) weights */
	bool		has_zp;			/* some zero point is not 0 */
	const void *src;			/* the tensor data this was packed from */
	size_t		bytes;
} ox_qgemm_weights;

/*
 * Pack weights: element (ch, k) is src[ch * ch_stride + k * k_stride], of
 * type uint8 or int8.  zp holds 0 (NULL), 1 or n_ch zero points of the
 * same type.  On failure the status is set and w is left empty.
 */
ox_code		ox_qgemm_pack(ox_qgemm_weights *w, ox_qg_layout layout, int64_t n_ch, int64_t k,
						  const void *src, ox_dtype dt, int64_t ch_stride, int64_t k_stride,
						  const void *zp, int64_t n_zp, ox_status *st);
void		ox_qgemm_weights_free(ox_qgemm_weights *w);

typedef enum ox_qg_out
{
	OX_QG_OUT_I32,				/* int32 sums (+ ibias) */
	OX_QG_OUT_F32,				/* (sums + ibias) * mult + bias */
	OX_QG_OUT_Q8				/* saturate(round((sums + ibias) * mult) + y_zp) */
} ox_qg_out;

/* what happens to the exact sums; per-channel arrays are indexed by channel */
typedef struct ox_qgemm_epi
{
	ox_qg_out	kind;
	ox_dtype	q_dtype;		/* OX_QG_OUT_Q8: OX_UINT8 or OX_INT8 */
	const float *mult;			/* F32, Q8: n_ch scales */
	const float *bias;			/* F32: n_ch, added after scaling, or NULL */
	const int32_t *ibias;		/* n_ch, added to the sums before scaling, or NULL */
	int32_t		y_zp;			/* Q8 */
	bool		relu;			/* F32: clamp below at 0 */
} ox_qgemm_epi;

/*
 * C[m, ch] = epilogue(sum_k (A[m, k] - a_zp) * (w(ch, k) - w_zp[ch])) for
 * m < M and every channel of w (layout VEC).  A is uint8 or int8 with rows
 * lda bytes apart (a_zp in A's type); C has rows ldc elements apart.
 */
ox_code		ox_qgemm_rows(ox_kernel_ctx *ctx, int64_t M, const void *A, ox_dtype adt, int64_t lda,
						  int32_t a_zp, const ox_qgemm_weights *w, const ox_qgemm_epi *ep,
						  void *C, int64_t ldc, ox_status *st);

/*
 * The same product for rows that are not stored but gathered (a
 * convolution without im2col): row m's reduction is, for each of n_taps
 * taps in turn, quads_per_tap quads of unsigned bytes at base + row_off[m] +
 * tap_off[t].  a_zp is in the unsigned domain; w->k4 must be n_taps *
 * quads_per_tap.
 */
ox_code		ox_qgemm_rows_gather(ox_kernel_ctx *ctx, int64_t M, const uint8_t *base,
								 const int64_t *row_off, const int64_t *tap_off, int n_taps,
								 int64_t quads_per_tap, int32_t a_zp, const ox_qgemm_weights *w,
								 const ox_qgemm_epi *ep, void *C, int64_t ldc, ox_status *st);

/* dst[c * dld + r] = src[r * sld + c] ^ flip for r < rows, c < cols (16x16 SSE2 blocks) */
void		ox_qgemm_transpose_u8(const uint8_t *src, int64_t rows, int64_t cols, int64_t sld,
								  uint8_t *dst, int64_t dld, uint8_t flip);

/*
 * The column operand of a BCAST product: n columns of a k-long reduction,
 * unsigned, packed [panel][k4][OX_QG_COLS_NR][4].  Reused between runs.
 */
typedef struct ox_qgemm_cols
{
	int64_t		n;
	int64_t		k;
	int64_t		k4;
	int32_t		zp;				/* zero point of the packed (unsigned) values */
	uint8_t    *data;
	int32_t    *sum;			/* column sums, filled by ox_qgemm_cols_sums */
	size_t		cap;
	size_t		sum_cap;
} ox_qgemm_cols;

/* size the operand for n columns and a k-long reduction */
ox_code		ox_qgemm_cols_reset(ox_qgemm_cols *c, int64_t n, int64_t k, int32_t zp, ox_status *st);
/*
 * Fill reduction rows 4*q .. 4*q+3 from four rows of n bytes each (NULL for
 * a row past k); flip = 0x80 turns int8 rows into the unsigned domain.
 */
void		ox_qgemm_cols_put(ox_qgemm_cols *c, int64_t q, const uint8_t *const rows[4], uint8_t flip);
/*
 * The same for rows that are 2-D windows of image planes: column
 * oy * width + ox of row t is rows[t][oy * pitch + ox * xstride].
 */
void		ox_qgemm_cols_put2d(ox_qgemm_cols *c, int64_t q, const uint8_t *const rows[4],
								int64_t width, int64_t pitch, int64_t xstride, uint8_t flip);
/* column sums (needed when the weights have non-zero zero points) */
ox_code		ox_qgemm_cols_sums(ox_qgemm_cols *c, ox_status *st);
void		ox_qgemm_cols_free(ox_qgemm_cols *c);

/*
 * Y[ch, j] = epilogue(sum_k (w(ch, k) - w_zp[ch]) * (x(k, j) - x->zp)) for
 * every channel of w (layout BCAST) and every column j; Y rows are ldy
 * elements apart.
 */
ox_code		ox_qgemm_cols_run(ox_kernel_ctx *ctx, const ox_qgemm_weights *w,
							  const ox_qgemm_cols *x, const ox_qgemm_epi *ep,
							  void *Y, int64_t ldy, ox_status *st);

/*
 * Quantize n floats to uint8 the DynamicQuantizeLinear way (range widened
 * to include 0, scale (max - min) / 255, zero point rounded and clamped);
 * returns scale and zero point.
 */
void		ox_qgemm_dynamic_quantize(const float *x, int64_t n, uint8_t *y, float *scale,
									  uint8_t *zp);
/*
 * Per-row dynamic quantization of rows x k floats to uint8: per row a scale
 * max((hi - lo) / 255, min_scale) and an int32 zero point round(-lo /
 * scale) in [0, 255], lo and hi the row's range widened to include 0.
 */
void		ox_qgemm_quantize_rows(const float *x, int64_t rows, int64_t k, uint8_t *y,
								   float *scales, int32_t *zps, float min_scale);
/*
 * The product of such rows back to float, in place: y holds rows x n int32
 * sums over the quantized values times (B - b_zp) and becomes
 * ((float) (y - zp[m] * sums[j]) * scales[m]) * bs[j] + bias[j] (bs has 1
 * or n values; bias n, or NULL).
 */
void		ox_qgemm_rows_scale_back(void *y, int64_t rows, int64_t n, const float *scales,
									 const int32_t *zps, const int32_t *sums, const float *bs,
									 int64_t n_bs, const float *bias);

/*
 * Fused quantized operators (qgemm_ops.c), registered in the quant family
 * table under com.microsoft with onnxruntime's semantics: QGemm,
 * DynamicQuantizeMatMul, QLinearAdd, QLinearGlobalAveragePool.  The QDQ
 * fusion pass (model/passes/qdq_fuse.c) produces them.
 */
ox_code		ox_qop_qgemm_prepare(ox_prepare_ctx *pc);
ox_code		ox_qop_qgemm_run(ox_kernel_ctx *ctx);
ox_code		ox_qop_dqmatmul_prepare(ox_prepare_ctx *pc);
ox_code		ox_qop_dqmatmul_run(ox_kernel_ctx *ctx);
ox_code		ox_qop_dqmatmul_rows_prepare(ox_prepare_ctx *pc);
ox_code		ox_qop_dqmatmul_rows_run(ox_kernel_ctx *ctx);
void		ox_qop_free(void *state);
ox_code		ox_qop_qlinear_add_run(ox_kernel_ctx *ctx);
ox_code		ox_qop_qlinear_gap_run(ox_kernel_ctx *ctx);

/*
 * QuantizeLinear of n floats per tensor to uint8/int8: saturate(rint(x /
 * scale) + zp), NaN to the low end (quant.c's semantics), vectorized.
 */
void		ox_qgemm_quantize(const float *x, int64_t n, float scale, int32_t zp, ox_dtype dt,
							  void *y);

/*
 * Scales of the quantized kernels (qgemm_ops.c): each of the n values must
 * be finite, and non-zero where the kernel divides by it (the output scale
 * of a requantizing operator, QuantizeLinear's y_scale).  Otherwise the
 * requantization factors are infinite or NaN and converting them to
 * integers is undefined: the operator fails with a message that names the
 * scale instead.  The tensor form reads any float type.
 */
ox_code		ox_quant_check_scales(ox_status *st, const char *op, const char *name,
								  const float *s, int64_t n, bool divisor);
ox_code		ox_quant_check_scale_tensor(ox_status *st, const char *op, const char *name,
										const ox_tensor *s, bool divisor);
/* requantization factors computed from valid scales can still overflow */
ox_code		ox_quant_check_factors(ox_status *st, const char *op, const float *f, int64_t n);

/* the kernel family in use: "avx512vnni", "avx2" or "portable" */
const char *ox_qgemm_isa(void);
/* tests: force a path ("avx512vnni", "avx2", "portable"); false when unavailable */
bool		ox_qgemm_force_isa(const char *name);

#endif							/* OX_QGEMM_H */
