/*
 * quantize_impl.h
 *	  Private to the quantizer (quantize.c, quantize_rewrite.c): graph
 *	  building helpers and the analysis that decides what gets quantized.
 */
#ifndef OX_QUANTIZE_IMPL_H
#define OX_QUANTIZE_IMPL_H

#include "model/quantize.h"

/* what happens to a node of the main graph */
typedef enum qz_kind
{
	QK_NONE = 0,
	QK_CONV,
	QK_MATMUL,					/* constant 2-D B */
	QK_GEMM,					/* constant B, transA = 0 */
	QK_GATHER,					/* dynamic: constant embedding table */
	QK_ADD,						/* static: two activations */
	QK_POOL,					/* static: AveragePool, GlobalAveragePool */
	QK_DIRECT,					/* static: runs on int8 data, output shares the input's scale */
	QK_RELU_FOLD				/* static: Relu absorbed by the quantization of its input */
} qz_kind;

/* quantization parameters of one tensor */
typedef struct qz_params
{
	bool		set;
	float		scale;
	int32_t		zp;
	int			scale_id;		/* initializers, created on first use (0: not yet) */
	int			zp_id;
} qz_params;

typedef struct qz
{
	ox_model   *m;
	ox_graph   *g;
	const ox_quant_options *o;
	ox_status  *st;
	int			n_nodes;		/* nodes analyzed (original nodes) */
	int			n_values;		/* values at analysis time */
	qz_kind    *kind;			/* per original node */
	int		   *root;			/* per value: -1, or the value whose parameters it uses */
	qz_params  *params;			/* per value (roots) */
	int		   *qval;			/* per value: quantized twin (QOperator), or -1 */
	int		   *dyn;			/* per value: DynamicQuantizeLinear node output base, or -1 */
	int		   *dyn_rows;		/* per value: per-row quantization's outputs (q, scale,
								 * int32 zero point: consecutive ids), or -1 */
	ox_quant_summary *sum;
	/* per operator type counts for the summary */
	const char *count_op[32];
	int			count_n[32];
	int			n_count;
} qz;

/* ---- graph building (quantize.c) ---- */
int			qz_value(qz *z, const char *base, const char *suffix, ox_dtype dt);
int			qz_init(qz *z, const char *base, const char *suffix, ox_dtype dt, int rank,
					const int64_t *dims, void **data);
int			qz_scalar_f(qz *z, const char *base, const char *suffix, float v);
int			qz_scalar_q(qz *z, const char *base, const char *suffix, ox_dtype dt, int32_t v);
int			qz_node(qz *z, const char *op, const char *domain, const char *base,
					const int *in, int n_in, const int *out, int n_out);
ox_code		qz_attr_int(qz *z, int node, const char *name, int64_t v);
ox_code		qz_attr_ints(qz *z, int node, const char *name, const int64_t *v, int n);
ox_code		qz_copy_attrs(qz *z, int node, const ox_node *src);

/* ---- parameters ---- */
void		qz_qrange(ox_dtype qt, bool symmetric, bool reduce_range, int32_t *qmin, int32_t *qmax);
void		qz_compute_params(float rmin, float rmax, int32_t qmin, int32_t qmax, bool symmetric,
							  float *scale, int32_t *zp);

/*
 * Quantize a constant weight: per tensor (axis < 0) or per slice along
 * axis.  Creates initializers for the int8 data (same shape as w unless
 * transpose: a 2-D w stored transposed), the scales and zero points (rank
 * 0 per tensor, 1-D per channel, or of rank |param_rank| with the channels
 * on dim 1 when param_rank > 1, on dim 0 when param_rank < -1), and returns
 * their value ids and the scales.
 */
typedef struct qz_weight
{
	int			q;
	int			scale;
	int			zp;
	int64_t		n_ch;
	float	   *scales;			/* n_ch floats, malloc'ed */
} qz_weight;

ox_code		qz_quantize_weight(qz *z, const ox_tensor *w, const char *base, int axis,
							   bool transpose, ox_dtype qt, int param_rank, qz_weight *out);

/* a 1-D int32 initializer: round(bias / (x_scale * w_scale[c])) */
int			qz_quantize_bias(qz *z, const ox_tensor *bias, const char *base, float x_scale,
							 const float *w_scales, int64_t n_ws);

bool		qz_is_float_const(const ox_graph *g, const ox_node *n, int i, int rank);

/* ---- rewrites (quantize_rewrite.c) ---- */
ox_code		qz_rewrite_dynamic(qz *z);
ox_code		qz_rewrite_qdq(qz *z);
ox_code		qz_rewrite_qoperator(qz *z);

/* count a rewritten node in the summary */
void		qz_count(qz *z, const ox_node *n);

#endif							/* OX_QUANTIZE_IMPL_H */
