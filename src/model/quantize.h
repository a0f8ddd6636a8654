/*
 * quantize.h
 *	  The quantizer: IR rewrites that turn a float model into an int8 one
 *	  made of standard ONNX operators only, so that any ONNX runtime loads
 *	  the result.
 *
 *	  dynamic	weights of MatMul, Gemm and Conv (and optionally Gather
 *				embeddings) become int8/uint8 initializers; activations are
 *				quantized at run time by DynamicQuantizeLinear and the
 *				products run as MatMulInteger / ConvInteger, scaled back
 *				with Cast and Mul.
 *	  static	activations get fixed scales from calibration ranges, in one
 *				of two formats: QDQ (QuantizeLinear/DequantizeLinear pairs
 *				around the float operators, weights as int8 behind
 *				DequantizeLinear, biases as int32) or QOperator
 *				(QLinearConv, QLinearMatMul, MatMulInteger, QuantizeLinear
 *				and DequantizeLinear at the float boundaries).
 *
 * Calibration is the caller's job (it needs a runtime, which lives above
 * this layer): ox_quant_calib_targets names the tensors whose ranges a
 * static quantization needs, ox_calib_* (quantize_calib.c) turns observed
 * values into ranges, and ox_quantize applies them.
 *
 * Quantization parameters follow onnxruntime's quantization tool: ranges
 * are widened to include 0; scale = (rmax - rmin) / (qmax - qmin) and zero
 * point = round(qmin - rmin / scale); symmetric int8 uses [-127, 127];
 * reduce_range keeps weights to 7 bits.
 */
#ifndef OX_QUANTIZE_H
#define OX_QUANTIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "model/ir.h"

typedef enum ox_quant_mode
{
	OX_QUANT_DYNAMIC,
	OX_QUANT_STATIC
} ox_quant_mode;

typedef enum ox_quant_format
{
	OX_QUANT_QDQ,
	OX_QUANT_QOPERATOR
} ox_quant_format;

/*
 * The smallest scale of per-row quantization: a row whose range is below
 * 255 times this (all zeros, in practice) quantizes to zeros instead of
 * dividing by zero.
 */
#define OX_ROWQ_MIN_SCALE 1e-30f

typedef struct ox_quant_options
{
	ox_quant_mode mode;
	ox_quant_format format;		/* static only */
	ox_dtype	weight_type;	/* OX_INT8 or OX_UINT8 */
	ox_dtype	activation_type;	/* static: OX_UINT8 or OX_INT8 (dynamic: uint8) */
	bool		per_channel;
	bool		reduce_range;	/* weights in 7 bits */
	bool		symmetric_weights;
	bool		symmetric_activations;	/* static */
	/*
	 * dynamic: quantize the activations of MatMul and Gemm per row (one
	 * scale and zero point per row of the last axis: per token in a
	 * transformer) instead of per tensor; standard operators still
	 * (ReduceMin/ReduceMax, Div, Round, Clip, Cast, MatMulInteger and an
	 * int32 zero-point correction), which qdq_fuse.c runs as one kernel
	 */
	bool		per_row_activations;
	/* operator types to quantize; NULL = the defaults of the mode */
	const char *const *op_types;
	int			n_op_types;
	/* node names left in float */
	const char *const *exclude;
	int			n_exclude;
} ox_quant_options;

/* defaults: int8 symmetric weights, uint8 asymmetric activations, QDQ */
void		ox_quant_options_init(ox_quant_options *o, ox_quant_mode mode);

/* operator types a mode can quantize, e.g. "Conv, Gather, Gemm, MatMul" */
const char *ox_quant_supported_ops(ox_quant_mode mode);

/* refuse impossible settings (unknown op types, bad element types) */
ox_code		ox_quant_check_options(const ox_quant_options *o, ox_status *st);

/*
 * Whether the model is quantized already (has quantized operators); sets
 * *op to the first such operator's type.
 */
bool		ox_model_is_quantized(const ox_model *m, const char **op);

typedef struct ox_quant_range
{
	float		lo;
	float		hi;
} ox_quant_range;

/*
 * Static quantization: the tensors (value names of the main graph) whose
 * value ranges ox_quantize needs, in a malloc'ed array of pointers into
 * the model (free the array only).  Dynamic quantization needs none.
 */
ox_code		ox_quant_calib_targets(ox_model *m, const ox_quant_options *o,
								   const char ***names, int *n, ox_status *st);

typedef struct ox_quant_summary
{
	int			nodes_total;	/* nodes of the main graph before */
	int			nodes_quantized;	/* of those, rewritten to int8 */
	int			weights_quantized;	/* float initializers stored as int8 */
	int			tensors_quantized;	/* activations with fixed scales (static) */
	char		ops[256];		/* per type, e.g. "Conv: 20, Gemm: 1" */
} ox_quant_summary;

/*
 * Rewrite the main graph.  Static quantization takes a range for each
 * calibration target, by name (names[i] -> ranges[i]).  On failure the
 * model is left in an unspecified state: throw it away.
 */
ox_code		ox_quantize(ox_model *m, const ox_quant_options *o, const char *const *names,
						const ox_quant_range *ranges, int n_ranges, ox_quant_summary *sum,
						ox_status *st);

/* ---- calibration (quantize_calib.c) --------------------------------------- */

typedef enum ox_calib_method
{
	OX_CALIB_MINMAX,
	OX_CALIB_PERCENTILE,
	OX_CALIB_ENTROPY
} ox_calib_method;

typedef struct ox_calib ox_calib;

/* collectors for n tensors */
ox_calib   *ox_calib_new(int n, ox_calib_method method, ox_status *st);
void		ox_calib_free(ox_calib *c);
/* observe values of tensor i (NaNs and infinities are ignored) */
ox_code		ox_calib_add(ox_calib *c, int i, const float *x, int64_t n, ox_status *st);
/* values seen for tensor i */
int64_t		ox_calib_count(const ox_calib *c, int i);
/*
 * The ranges: minmax takes the extremes; percentile keeps the central
 * `percentile` percent of values (both tails, or |x| when symmetric);
 * entropy picks the clipping threshold that minimizes the KL divergence
 * between the histogram and its 128-level quantization.
 */
ox_code		ox_calib_ranges(ox_calib *c, double percentile, bool symmetric,
							ox_quant_range *out, ox_status *st);

#endif							/* OX_QUANTIZE_H */
