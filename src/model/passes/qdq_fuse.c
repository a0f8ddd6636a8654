/*
 * qdq_fuse.c
 *	  Run quantized models in int8: fuse QuantizeLinear/DequantizeLinear
 *	  patterns (what the quantizer's QDQ format and onnxruntime's produce)
 *	  and the integer-operator patterns of dynamic quantization into int8
 *	  kernels, instead of running the float operators on dequantized data.
 *
 *	  DQ(x), DQ(w) [, bias] -> Conv -> Q			   QLinearConv
 *	  DQ(a), DQ(B) -> MatMul / Gemm [-> Q]			   com.microsoft.QGemm
 *	  QLinearMatMul with a constant 2-D B			   com.microsoft.QGemm
 *	  DQ(a), DQ(b) -> Add -> Q						   com.microsoft.QLinearAdd
 *	  DQ(x) -> GlobalAveragePool -> Q				   com.microsoft.QLinearGlobalAveragePool
 *	  DQ(x) -> MaxPool/Flatten/Reshape/... -> Q		   the operator on the int8 data
 *		  (when Q has DQ's scale and zero point)
 *	  DynamicQuantizeLinear -> MatMulInteger -> Cast
 *		  -> Mul(x_scale * w_scale) [-> Add(bias)]	   com.microsoft.DynamicQuantizeMatMul
 *	  the quantizer's per-row chain -> MatMulInteger
 *		  -> Sub(zp * column sums) -> Cast -> Mul(row scale)
 *		  -> Mul(w_scale) [-> Add(bias)]			   com.onnx_pg.DynamicQuantizeMatMulRows
 *
 *	  The com.microsoft operators have onnxruntime's semantics, so a model
 *	  saved after this pass still loads there.  The pass runs first among
 *	  the basic passes: constant folding would otherwise turn the weights'
 *	  DequantizeLinear back into float constants.  What stays unfused (the
 *	  DequantizeLinear of a weight, say) is folded and runs in float as
 *	  before: the pass only ever changes how a result is computed, within
 *	  the rounding of requantization.
 */
#include "model/passes/passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MS_DOMAIN "com.microsoft"
#define OX_ONNX_PG_DOMAIN "com.onnx_pg"	/* as runtime/placement.h */

static bool
is_q8(ox_dtype dt)
{
	return dt == OX_UINT8 || dt == OX_INT8;
}

/* quantization parameters carried by a Q or DQ node */
typedef struct qp
{
	int			node;
	int			q;				/* DQ: its quantized input; Q: its quantized output */
	int			scale;			/* value ids */
	int			zp;				/* -1 when absent */
	const ox_tensor *s;			/* constant scale */
	const ox_tensor *z;			/* constant zero point or NULL */
	ox_dtype	dt;				/* quantized element type */
	int64_t		n;				/* scale element count */
	int64_t		axis;			/* normalized when n > 1 */
} qp;

static float
qp_scale(const qp *p, int64_t i)
{
	return ((const float *) p->s->data)[p->n == 1 ? 0 : i];
}

static int32_t
qp_zero(const qp *p, int64_t i)
{
	int64_t		j = p->n == 1 ? 0 : i;

	if (!p->z)
		return 0;
	switch (p->z->dtype)
	{
		case OX_INT8:
			return ((const int8_t *) p->z->data)[j];
		case OX_UINT8:
			return ((const uint8_t *) p->z->data)[j];
		case OX_INT32:
			return ((const int32_t *) p->z->data)[j];
		default:
			return 0;
	}
}

/* scale and zero point of a Q/DQ node: constants, per tensor or per axis */
static bool
qp_read(const ox_graph *g, int k, bool quantize, int x_rank, qp *p)
{
	const ox_node *n = &g->nodes[k];

	memset(p, 0, sizeof(*p));
	if (n->n_inputs < 2 || n->n_outputs < 1 || n->outputs[0] < 0 ||
		ox_attr_int(n, "block_size", 0) != 0)
		return false;
	p->node = k;
	p->q = quantize ? n->outputs[0] : n->inputs[0];
	p->scale = n->inputs[1];
	p->zp = n->n_inputs > 2 ? n->inputs[2] : -1;
	p->s = ox_node_const_input(g, n, 1);
	if (!p->s || p->s->dtype != OX_FLOAT)
		return false;
	p->n = ox_tensor_numel(p->s);
	/*
	 * Only positive finite scales are fused: the int8 kernels' factors and
	 * the int32 biases divide by them.  Other nodes stay as written, and
	 * their operators run them or report the bad scale.
	 */
	for (int64_t i = 0; i < p->n; i++)
	{
		float		v = ((const float *) p->s->data)[i];

		if (!(v > 0.0f) || !isfinite(v))
			return false;
	}
	if (p->zp >= 0)
	{
		p->z = ox_node_const_input(g, n, 2);
		if (!p->z || ox_tensor_numel(p->z) != p->n)
			return false;
		p->dt = p->z->dtype;
	}
	else
	{
		int64_t		odt = ox_attr_int(n, "output_dtype", 0);

		if (quantize)
			p->dt = odt ? (ox_dtype) odt : OX_UINT8;
		else
		{
			const ox_value_def *x = &g->values[n->inputs[0]];

			p->dt = x->init ? x->init->dtype :
				(x->type.kind == OX_TYPE_TENSOR ? x->type.elem : OX_UNDEFINED);
		}
	}
	if (p->n > 1)
	{
		if (p->s->rank != 1 || x_rank <= 0)
			return false;
		p->axis = ox_attr_int(n, "axis", 1);
		if (p->axis < 0)
			p->axis += x_rank;
	}
	return true;
}

/* the DequantizeLinear producing v; per tensor unless allow_axis */
static bool
dq_of(const ox_graph *g, int v, bool allow_axis, qp *p)
{
	int			k;
	int			x_rank = 0;
	const ox_value_def *x;

	if (v < 0 || (k = g->values[v].producer) < 0 || !ox_pass_is_op(&g->nodes[k], "DequantizeLinear") ||
		g->nodes[k].n_inputs < 2 || g->nodes[k].inputs[0] < 0)
		return false;
	x = &g->values[g->nodes[k].inputs[0]];
	if (allow_axis)
		x_rank = x->init ? x->init->rank : (x->type.kind == OX_TYPE_TENSOR ? x->type.rank : 0);
	return qp_read(g, k, false, x_rank, p) && (p->n == 1 || allow_axis);
}

/* v's only reader, a per-tensor QuantizeLinear */
static bool
sole_q(const ox_graph *g, int v, qp *p)
{
	int			k;

	if (v < 0 || g->values[v].is_output || (k = ox_graph_sole_consumer(g, v)) < 0 ||
		!ox_pass_is_op(&g->nodes[k], "QuantizeLinear") || g->nodes[k].inputs[0] != v)
		return false;
	return qp_read(g, k, true, 0, p) && p->n == 1 && is_q8(p->dt);
}

/* a constant uint8/int8 tensor of the given rank (not an overridable input) */
static const ox_tensor *
const_q8(const ox_graph *g, int v, int rank)
{
	const ox_tensor *t;

	if (v < 0 || g->values[v].is_input)
		return NULL;
	t = g->values[v].init;
	return t && is_q8(t->dtype) && (rank < 0 || t->rank == rank) ? t : NULL;
}

/* ---- building ------------------------------------------------------------------ */

/* the zero point input, or a new scalar 0 of the given type when absent */
static int
zp_or_zero(ox_pass_ctx *pc, ox_graph *g, const qp *p, ox_status *st)
{
	void	   *d;

	if (p->zp >= 0)
		return p->zp;
	return ox_pass_new_init(pc, g, "qdq_zero_point", p->dt, 0, NULL, &d, st);
}

/* a new node; returns its index (node pointers taken before are invalid) */
static int
add_node(ox_pass_ctx *pc, ox_graph *g, const char *op, const char *domain, const char *name,
		 const int *in, int n_in, int out, const char *fused_from, ox_status *st)
{
	return ox_pass_add_node(pc, g, op, domain, name, in, n_in, &out, 1, fused_from, st);
}

/*
 * int32 bias at the product's scale: round(value[c] / (x_scale * w_scale[c])),
 * value being a float constant or a DequantizeLinear of one.
 */
static int
requantize_bias(ox_pass_ctx *pc, ox_graph *g, int bias, const qp *x, const qp *w, float factor,
				int64_t n_out, ox_status *st)
{
	qp			bd;
	const ox_tensor *bf = NULL;
	int64_t		n;
	void	   *d;
	int			id;

	if (dq_of(g, bias, true, &bd))
	{
		const ox_tensor *bq = g->values[bd.q].is_input ? NULL : g->values[bd.q].init;

		if (!bq || bq->dtype != OX_INT32)
			return -2;
		n = ox_tensor_numel(bq);
		if (bd.n != 1 && bd.n != n)
			return -2;
		if ((n != 1 && n != n_out) || bq->rank > 1)
			return -2;
		id = ox_pass_new_init(pc, g, "qdq_bias", OX_INT32, 1, &n_out, &d, st);
		if (id < 0)
			return -1;
		for (int64_t c = 0; c < n_out; c++)
		{
			int64_t		i = n == 1 ? 0 : c;
			double		v = ((double) ((const int32_t *) bq->data)[i] - qp_zero(&bd, i)) * qp_scale(&bd, i);
			double		s = (double) qp_scale(x, 0) * qp_scale(w, c) * factor;

			((int32_t *) d)[c] = (int32_t) fmin(fmax(s > 0 ? nearbyint(v / s) : 0, INT32_MIN), INT32_MAX);
		}
		return id;
	}
	bf = g->values[bias].is_input ? NULL : g->values[bias].init;
	if (!bf || bf->dtype != OX_FLOAT || bf->rank > 1 ||
		(ox_tensor_numel(bf) != 1 && ox_tensor_numel(bf) != n_out))
		return -2;
	n = ox_tensor_numel(bf);
	id = ox_pass_new_init(pc, g, "qdq_bias", OX_INT32, 1, &n_out, &d, st);
	if (id < 0)
		return -1;
	for (int64_t c = 0; c < n_out; c++)
	{
		double		s = (double) qp_scale(x, 0) * qp_scale(w, c) * factor;
		double		v = ((const float *) bf->data)[n == 1 ? 0 : c];

		((int32_t *) d)[c] = (int32_t) fmin(fmax(s > 0 ? nearbyint(v / s) : 0, INT32_MIN), INT32_MAX);
	}
	return id;
}

/* ---- Conv ------------------------------------------------------------------------- */

static ox_code
fuse_conv(ox_pass_ctx *pc, ox_graph *g, int k, ox_status *st)
{
	ox_node    *conv = &g->nodes[k];
	qp			x,
				w,
				y;
	const ox_tensor *wq;
	int			bias = -1,
				xzp,
				wzp,
				node;
	int			in[9];
	const char *name = conv->name;
	const ox_attr *attrs = conv->attrs;
	int			n_attrs = conv->n_attrs;
	int			out;

	if (conv->n_inputs < 2 || conv->n_outputs != 1 || !dq_of(g, conv->inputs[0], false, &x) ||
		!is_q8(x.dt))
		return OX_OK;
	if (!dq_of(g, conv->inputs[1], true, &w) || !(wq = const_q8(g, w.q, -1)) || wq->rank < 3 ||
		(w.n != 1 && (w.axis != 0 || w.n != wq->dims[0])))
		return OX_OK;
	if (!sole_q(g, conv->outputs[0], &y))
		return OX_OK;
	out = g->nodes[y.node].outputs[0];
	if (conv->n_inputs > 2 && conv->inputs[2] >= 0)
	{
		bias = requantize_bias(pc, g, conv->inputs[2], &x, &w, 1.0f, wq->dims[0], st);
		if (bias == -2)
			return OX_OK;
		if (bias < 0)
			return st->code;
	}
	if ((xzp = zp_or_zero(pc, g, &x, st)) < 0 || (wzp = zp_or_zero(pc, g, &w, st)) < 0)
		return st->code;
	{
		int			yzp = zp_or_zero(pc, g, &y, st);

		if (yzp < 0)
			return st->code;
		in[0] = x.q;
		in[1] = x.scale;
		in[2] = xzp;
		in[3] = w.q;
		in[4] = w.scale;
		in[5] = wzp;
		in[6] = y.scale;
		in[7] = yzp;
		in[8] = bias;
	}
	node = add_node(pc, g, "QLinearConv", "", name, in, bias >= 0 ? 9 : 8, out,
					"DequantizeLinear+Conv+QuantizeLinear", st);
	if (node < 0 || ox_pass_set_attrs(pc, g, node, attrs, n_attrs, NULL, 0, st) != OX_OK)
		return st->code;
	g->nodes[k].dead = true;
	g->nodes[y.node].dead = true;
	pc->changes++;
	return OX_OK;
}

/* ---- MatMul, Gemm, QLinearMatMul -> QGemm ------------------------------------------- */

static ox_code
emit_qgemm(ox_pass_ctx *pc, ox_graph *g, int k, const qp *a, const qp *b, bool trans_b, float alpha,
		   int c32, const qp *y, int out, const char *fused_from, ox_status *st)
{
	const char *name = g->nodes[k].name;
	int			in[9];
	int			n_in;
	int			node;
	ox_attr		extra[2];

	memset(extra, 0, sizeof(extra));
	extra[0].name = "transB";
	extra[0].type = OX_ATTR_INT;
	extra[0].i = trans_b;
	extra[1].name = "alpha";
	extra[1].type = OX_ATTR_FLOAT;
	extra[1].f = alpha;
	in[0] = a->q;
	in[1] = a->scale;
	in[2] = a->zp;
	in[3] = b->q;
	in[4] = b->scale;
	in[5] = b->zp;
	in[6] = c32;
	n_in = c32 >= 0 ? 7 : 6;
	if (y)
	{
		in[7] = y->scale;
		in[8] = y->zp;
		n_in = y->zp >= 0 ? 9 : 8;
	}
	node = add_node(pc, g, "QGemm", MS_DOMAIN, name, in, n_in, out, fused_from, st);
	if (node < 0 || ox_pass_set_attrs(pc, g, node, NULL, 0, extra, 2, st) != OX_OK)
		return st->code;
	g->nodes[k].dead = true;
	if (y)
		g->nodes[y->node].dead = true;
	pc->changes++;
	return OX_OK;
}

static ox_code
fuse_matmul(ox_pass_ctx *pc, ox_graph *g, int k, bool gemm, ox_status *st)
{
	ox_node    *n = &g->nodes[k];
	qp			a,
				b,
				y;
	const ox_tensor *bq;
	bool		trans_b = gemm && ox_attr_int(n, "transB", 0) != 0;
	float		alpha = gemm ? ox_attr_float(n, "alpha", 1.0f) : 1.0f;
	float		beta = gemm ? ox_attr_float(n, "beta", 1.0f) : 1.0f;
	int64_t		n_out;
	int			c32 = -1;
	bool		quantized_out;
	int			out;

	if (n->n_inputs < 2 || n->n_outputs != 1 || (gemm && ox_attr_int(n, "transA", 0) != 0))
		return OX_OK;
	if (!dq_of(g, n->inputs[0], false, &a) || !is_q8(a.dt) || !dq_of(g, n->inputs[1], true, &b) ||
		!(bq = const_q8(g, b.q, 2)))
		return OX_OK;
	n_out = trans_b ? bq->dims[0] : bq->dims[1];
	if (b.n != 1 && (b.axis != (trans_b ? 0 : 1) || b.n != n_out))
		return OX_OK;
	quantized_out = sole_q(g, n->outputs[0], &y);
	out = quantized_out ? g->nodes[y.node].outputs[0] : n->outputs[0];
	if (gemm && n->n_inputs > 2 && n->inputs[2] >= 0)
	{
		if (beta == 0.0f)
			;					/* C is ignored */
		else if ((c32 = requantize_bias(pc, g, n->inputs[2], &a, &b, alpha / beta, n_out, st)) == -2)
			return OX_OK;
		else if (c32 < 0)
			return st->code;
	}
	if (a.zp < 0 && (a.zp = zp_or_zero(pc, g, &a, st)) < 0)
		return st->code;
	if (b.zp < 0 && (b.zp = zp_or_zero(pc, g, &b, st)) < 0)
		return st->code;
	if (quantized_out && y.zp < 0 && (y.zp = zp_or_zero(pc, g, &y, st)) < 0)
		return st->code;
	return emit_qgemm(pc, g, k, &a, &b, trans_b, alpha, c32, quantized_out ? &y : NULL, out,
					  quantized_out ? "DequantizeLinear+MatMul+QuantizeLinear" : "DequantizeLinear+MatMul",
					  st);
}

/* QLinearMatMul whose B is a constant matrix: the same product, packed once */
static ox_code
fuse_qlinear_matmul(ox_pass_ctx *pc, ox_graph *g, int k, ox_status *st)
{
	ox_node    *n = &g->nodes[k];
	qp			a,
				b,
				y;
	const ox_tensor *bq;

	if (n->n_inputs < 8 || n->n_outputs != 1 || n->outputs[0] < 0)
		return OX_OK;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&y, 0, sizeof(y));
	a.q = n->inputs[0];
	a.scale = n->inputs[1];
	a.zp = n->inputs[2];
	b.q = n->inputs[3];
	b.scale = n->inputs[4];
	b.zp = n->inputs[5];
	y.scale = n->inputs[6];
	y.zp = n->inputs[7];
	y.node = -1;
	if (!(bq = const_q8(g, b.q, 2)) || a.zp < 0 || b.zp < 0 || y.zp < 0)
		return OX_OK;
	/* a per-row a_scale has no QGemm form */
	{
		const ox_tensor *as = ox_node_const_input(g, n, 1);

		if (!as || ox_tensor_numel(as) != 1)
			return OX_OK;
	}
	{
		const char *name = n->name;
		int			in[9] = {a.q, a.scale, a.zp, b.q, b.scale, b.zp, -1, y.scale, y.zp};
		int			out = n->outputs[0];
		int			node;
		ox_attr		extra[1];

		memset(extra, 0, sizeof(extra));
		extra[0].name = "transB";
		extra[0].type = OX_ATTR_INT;
		extra[0].i = 0;
		node = add_node(pc, g, "QGemm", MS_DOMAIN, name, in, 9, out, "QLinearMatMul", st);
		if (node < 0 || ox_pass_set_attrs(pc, g, node, NULL, 0, extra, 1, st) != OX_OK)
			return st->code;
		g->nodes[k].dead = true;
		pc->changes++;
	}
	return OX_OK;
}

/* ---- Add, GlobalAveragePool, value-preserving operators ------------------------------ */

static ox_code
fuse_add(ox_pass_ctx *pc, ox_graph *g, int k, ox_status *st)
{
	ox_node    *n = &g->nodes[k];
	qp			a,
				b,
				y;
	int			in[8];
	int			node;

	if (n->n_inputs != 2 || n->n_outputs != 1 || !dq_of(g, n->inputs[0], false, &a) ||
		!dq_of(g, n->inputs[1], false, &b) || !is_q8(a.dt) || a.dt != b.dt ||
		!sole_q(g, n->outputs[0], &y) || y.dt != a.dt)
		return OX_OK;
	in[0] = a.q;
	in[1] = a.scale;
	in[2] = a.zp;
	in[3] = b.q;
	in[4] = b.scale;
	in[5] = b.zp;
	in[6] = y.scale;
	in[7] = y.zp;
	if ((in[2] < 0 && (in[2] = zp_or_zero(pc, g, &a, st)) < 0) ||
		(in[5] < 0 && (in[5] = zp_or_zero(pc, g, &b, st)) < 0) ||
		(in[7] < 0 && (in[7] = zp_or_zero(pc, g, &y, st)) < 0))
		return st->code;
	node = add_node(pc, g, "QLinearAdd", MS_DOMAIN, g->nodes[k].name, in, 8,
					g->nodes[y.node].outputs[0], "DequantizeLinear+Add+QuantizeLinear", st);
	if (node < 0)
		return st->code;
	g->nodes[k].dead = true;
	g->nodes[y.node].dead = true;
	pc->changes++;
	return OX_OK;
}

static ox_code
fuse_gap(ox_pass_ctx *pc, ox_graph *g, int k, ox_status *st)
{
	ox_node    *n = &g->nodes[k];
	qp			x,
				y;
	int			in[5];
	int			node;
	ox_attr		extra[1];

	if (n->n_inputs != 1 || n->n_outputs != 1 || !dq_of(g, n->inputs[0], false, &x) ||
		!is_q8(x.dt) || !sole_q(g, n->outputs[0], &y) || y.dt != x.dt)
		return OX_OK;
	in[0] = x.q;
	in[1] = x.scale;
	in[2] = x.zp;
	in[3] = y.scale;
	in[4] = y.zp;
	if ((in[2] < 0 && (in[2] = zp_or_zero(pc, g, &x, st)) < 0) ||
		(in[4] < 0 && (in[4] = zp_or_zero(pc, g, &y, st)) < 0))
		return st->code;
	memset(extra, 0, sizeof(extra));
	extra[0].name = "channels_last";
	extra[0].type = OX_ATTR_INT;
	extra[0].i = 0;
	node = add_node(pc, g, "QLinearGlobalAveragePool", MS_DOMAIN, g->nodes[k].name, in, 5,
					g->nodes[y.node].outputs[0], "DequantizeLinear+GlobalAveragePool+QuantizeLinear", st);
	if (node < 0 || ox_pass_set_attrs(pc, g, node, NULL, 0, extra, 1, st) != OX_OK)
		return st->code;
	g->nodes[k].dead = true;
	g->nodes[y.node].dead = true;
	pc->changes++;
	return OX_OK;
}

/* same parameters on both sides: the operator can run on the quantized data */
static bool
same_params(const qp *a, const qp *b)
{
	return a->n == 1 && b->n == 1 && a->dt == b->dt && qp_scale(a, 0) == qp_scale(b, 0) &&
		qp_zero(a, 0) == qp_zero(b, 0);
}

static ox_code
fuse_direct(ox_pass_ctx *pc, ox_graph *g, int k)
{
	ox_node    *n = &g->nodes[k];
	qp			x,
				y;

	for (int o = 1; o < n->n_outputs; o++)
		if (n->outputs[o] >= 0 && (g->values[n->outputs[o]].n_consumers > 0 ||
								   g->values[n->outputs[o]].is_output))
			return OX_OK;
	if (n->n_outputs < 1 || !dq_of(g, n->inputs[0], false, &x) || !is_q8(x.dt) ||
		!sole_q(g, n->outputs[0], &y) || !same_params(&x, &y))
		return OX_OK;
	n->inputs[0] = x.q;
	ox_uses_node_changed(g, k);
	n->outputs[0] = g->nodes[y.node].outputs[0];
	n->fused_from = "DequantizeLinear+QuantizeLinear";
	g->nodes[y.node].dead = true;
	pc->changes++;
	return OX_OK;
}

/* ---- dynamic quantization ------------------------------------------------------------- */

/* the live default-domain node of type op producing v, or -1 */
static int
producer_op(const ox_graph *g, int v, const char *op)
{
	int			p;

	if (v < 0 || (p = g->values[v].producer) < 0 || !ox_pass_is_op(&g->nodes[p], op))
		return -1;
	return p;
}

/* the node producing v if it is op, and v is read only once */
static int
sole_producer(const ox_graph *g, int v, const char *op)
{
	int			p = producer_op(g, v, op);

	if (p < 0 || g->values[v].n_consumers != 1 || g->values[v].is_output)
		return -1;
	return p;
}

/*
 * MatMulInteger's B: a constant 2-D int8/uint8 matrix, with a constant zero
 * point of its type per tensor or per column if there is one (*bzp NULL
 * otherwise).
 */
static bool
integer_weights(const ox_graph *g, const ox_node *m, const ox_tensor **b, const ox_tensor **bzp)
{
	*bzp = NULL;
	if (m->n_inputs < 2 || !(*b = const_q8(g, m->inputs[1], 2)))
		return false;
	if (m->n_inputs > 3 && m->inputs[3] >= 0)
	{
		*bzp = ox_node_const_input(g, m, 3);
		if (!*bzp || (*bzp)->dtype != (*b)->dtype ||
			(ox_tensor_numel(*bzp) != 1 && ox_tensor_numel(*bzp) != (*b)->dims[1]))
			return false;
	}
	return true;
}

/* a constant float scale, one value or one per of the n columns */
static bool
column_scales(const ox_tensor *t, int64_t n)
{
	return t && t->dtype == OX_FLOAT && t->rank <= 1 && (ox_tensor_numel(t) == 1 || ox_tensor_numel(t) == n);
}

/*
 * The Add of a constant float bias of n values that alone reads *out, or
 * -1: *bias is the bias's value and *out moves to the sum.
 */
static int
trailing_bias(const ox_graph *g, int *out, int64_t n, int *bias)
{
	int			add;
	const ox_node *a;
	int			other;
	const ox_tensor *bt;

	*bias = -1;
	if (g->values[*out].is_output || (add = ox_graph_sole_consumer(g, *out)) < 0 ||
		!ox_pass_is_op(&g->nodes[add], "Add") || g->nodes[add].n_inputs != 2)
		return -1;
	a = &g->nodes[add];
	other = a->inputs[0] == *out ? 1 : 0;
	bt = ox_node_const_input(g, a, other);
	if (!bt || bt->dtype != OX_FLOAT || bt->rank != 1 || bt->dims[0] != n || a->inputs[1 - other] != *out)
		return -1;
	*bias = a->inputs[other];
	*out = a->outputs[0];
	return add;
}

/*
 * Mul(Cast(MatMulInteger(DQL(x).y, B, DQL(x).zp, bzp)), Mul(DQL(x).scale, ws))
 * [+ bias] -> DynamicQuantizeMatMul(x, B, ws, bzp, bias)
 */
static ox_code
fuse_dynamic(ox_pass_ctx *pc, ox_graph *g, int k, ox_status *st)
{
	ox_node    *mul = &g->nodes[k];
	int			cast = -1,
				smul = -1,
				mmi,
				dql,
				ws = -1,
				add = -1,
				bias = -1,
				out;
	const ox_tensor *b,
			   *bzp;
	int			in[5];
	int			node;
	const char *name;

	if (mul->n_inputs != 2 || mul->n_outputs != 1)
		return OX_OK;
	for (int i = 0; i < 2 && cast < 0; i++)
		if ((cast = sole_producer(g, mul->inputs[i], "Cast")) >= 0)
			smul = sole_producer(g, mul->inputs[1 - i], "Mul");
	if (cast < 0 || smul < 0 || ox_attr_int(&g->nodes[cast], "to", 0) != OX_FLOAT)
		return OX_OK;
	if ((mmi = sole_producer(g, g->nodes[cast].inputs[0], "MatMulInteger")) < 0 ||
		g->nodes[mmi].n_inputs < 3)
		return OX_OK;
	{
		const ox_node *m = &g->nodes[mmi];
		int			p = g->values[m->inputs[0]].producer;

		if (p < 0 || !ox_pass_is_op(&g->nodes[p], "DynamicQuantizeLinear") ||
			g->nodes[p].n_outputs < 3 || m->inputs[2] != g->nodes[p].outputs[2] ||
			m->inputs[0] != g->nodes[p].outputs[0])
			return OX_OK;
		dql = p;
		if (!integer_weights(g, m, &b, &bzp))
			return OX_OK;
	}
	/* the scale product: DQL's scale times a constant weight scale */
	{
		const ox_node *s = &g->nodes[smul];

		for (int i = 0; i < 2 && ws < 0; i++)
			if (s->inputs[i] == g->nodes[dql].outputs[1])
				ws = s->inputs[1 - i];
		if (ws < 0 || !column_scales(ox_node_const_input(g, s, ws == s->inputs[0] ? 0 : 1), b->dims[1]))
			return OX_OK;
	}
	out = mul->outputs[0];
	/* a bias added right after */
	add = trailing_bias(g, &out, b->dims[1], &bias);
	name = mul->name;
	in[0] = g->nodes[dql].inputs[0];
	in[1] = g->nodes[mmi].inputs[1];
	in[2] = ws;
	in[3] = g->nodes[mmi].n_inputs > 3 ? g->nodes[mmi].inputs[3] : -1;
	in[4] = bias;
	node = add_node(pc, g, "DynamicQuantizeMatMul", MS_DOMAIN, name, in, bias >= 0 ? 5 : 4, out,
					"DynamicQuantizeLinear+MatMulInteger+Cast+Mul", st);
	if (node < 0)
		return st->code;
	g->nodes[k].dead = true;
	g->nodes[cast].dead = true;
	g->nodes[smul].dead = true;
	g->nodes[mmi].dead = true;
	if (add >= 0)
		g->nodes[add].dead = true;
	pc->changes++;
	return OX_OK;
}

/* ---- per-row dynamic quantization ----------------------------------------------------- */

/* v is a constant float scalar (not an overridable input); its value in *f */
static bool
const_scalar_f(const ox_graph *g, int v, float *f)
{
	const ox_tensor *t;

	if (v < 0 || g->values[v].is_input || !(t = g->values[v].init) || t->dtype != OX_FLOAT ||
		ox_tensor_numel(t) != 1)
		return false;
	*f = ((const float *) t->data)[0];
	return true;
}

/* node k has two inputs, the second a constant float scalar equal to want */
static bool
second_is(const ox_graph *g, int k, float want)
{
	float		f;

	return k >= 0 && g->nodes[k].n_inputs == 2 && const_scalar_f(g, g->nodes[k].inputs[1], &f) &&
		f == want;
}

/* v = op(x) reduced over the last axis with the dimension kept; sets *x */
static bool
reduce_last(const ox_graph *g, int v, const char *op, int *x)
{
	int			p = producer_op(g, v, op);
	const ox_node *n;
	int64_t		axis;
	int			rank;

	if (p < 0)
		return false;
	n = &g->nodes[p];
	if (n->n_inputs < 1 || ox_attr_int(n, "keepdims", 1) != 1 ||
		ox_attr_int(n, "noop_with_empty_axes", 0) != 0)
		return false;
	if (n->opset >= 18)
	{
		const ox_tensor *a = n->n_inputs == 2 ? ox_node_const_input(g, n, 1) : NULL;

		if (!a || a->dtype != OX_INT64 || ox_tensor_numel(a) != 1)
			return false;
		axis = ((const int64_t *) a->data)[0];
	}
	else
	{
		const ox_attr *a = ox_node_attr(n, "axes");

		if (n->n_inputs != 1 || !a || a->type != OX_ATTR_INTS || a->n != 1)
			return false;
		axis = a->ints[0];
	}
	rank = g->values[n->inputs[0]].type.rank;
	if (axis != -1 && !(rank > 0 && axis == rank - 1))
		return false;
	*x = n->inputs[0];
	return true;
}

/* the per-row quantization of x behind a uint8 tensor q */
typedef struct rowq
{
	int			x;
	int			scale;			/* [..., 1] float */
	int			zp;				/* [..., 1] float, whole numbers */
	float		min_scale;
} rowq;

/*
 * q = Cast<uint8>(Clip(Add(Round(Div(x, s)), zp), 0, 255)) with
 * s = Max(Div(Sub(Max(ReduceMax(x), 0), lo), 255), min_scale),
 * lo = Min(ReduceMin(x), 0) and zp = Round(Div(Neg(lo), s)): exactly what
 * quantize_rewrite.c writes, every piece checked, since the fused kernel
 * computes the chain's result and not whatever another graph computes.
 */
static bool
row_quant_of(const ox_graph *g, int q, rowq *r)
{
	const ox_node *n;
	int			p,
				t,
				lo,
				hi,
				x2;

	if ((p = producer_op(g, q, "Cast")) < 0 || ox_attr_int(&g->nodes[p], "to", 0) != OX_UINT8)
		return false;
	if ((p = producer_op(g, g->nodes[p].inputs[0], "Clip")) < 0 || g->nodes[p].n_inputs != 3)
		return false;
	n = &g->nodes[p];
	{
		float		a,
					b;

		if (!const_scalar_f(g, n->inputs[1], &a) || !const_scalar_f(g, n->inputs[2], &b) ||
			a != 0.0f || b != 255.0f)
			return false;
	}
	if ((p = producer_op(g, n->inputs[0], "Add")) < 0 || g->nodes[p].n_inputs != 2)
		return false;
	r->zp = g->nodes[p].inputs[1];
	if ((p = producer_op(g, g->nodes[p].inputs[0], "Round")) < 0 ||
		(p = producer_op(g, g->nodes[p].inputs[0], "Div")) < 0 || g->nodes[p].n_inputs != 2)
		return false;
	r->x = g->nodes[p].inputs[0];
	r->scale = g->nodes[p].inputs[1];
	/* the scale */
	if ((p = producer_op(g, r->scale, "Max")) < 0 || g->nodes[p].n_inputs != 2 ||
		!const_scalar_f(g, g->nodes[p].inputs[1], &r->min_scale) ||
		!(r->min_scale > 0.0f) || !isfinite(r->min_scale))
		return false;
	if ((p = producer_op(g, g->nodes[p].inputs[0], "Div")) < 0 || !second_is(g, p, 255.0f) ||
		(p = producer_op(g, g->nodes[p].inputs[0], "Sub")) < 0 || g->nodes[p].n_inputs != 2)
		return false;
	hi = g->nodes[p].inputs[0];
	lo = g->nodes[p].inputs[1];
	if ((t = producer_op(g, hi, "Max")) < 0 || !second_is(g, t, 0.0f) ||
		!reduce_last(g, g->nodes[t].inputs[0], "ReduceMax", &x2) || x2 != r->x)
		return false;
	if ((t = producer_op(g, lo, "Min")) < 0 || !second_is(g, t, 0.0f) ||
		!reduce_last(g, g->nodes[t].inputs[0], "ReduceMin", &x2) || x2 != r->x)
		return false;
	/* the zero point */
	if ((p = producer_op(g, r->zp, "Round")) < 0 ||
		(p = producer_op(g, g->nodes[p].inputs[0], "Div")) < 0 || g->nodes[p].n_inputs != 2 ||
		g->nodes[p].inputs[1] != r->scale ||
		(p = producer_op(g, g->nodes[p].inputs[0], "Neg")) < 0 || g->nodes[p].inputs[0] != lo)
		return false;
	return g->values[r->x].type.elem == OX_FLOAT || g->values[r->x].type.elem == OX_UNDEFINED;
}

/* the constant int32 [n] at v holds sum_k (B[k, j] - zp[j]) */
static bool
column_sums_match(const ox_graph *g, int v, const ox_tensor *b, const ox_tensor *bzp)
{
	const ox_tensor *t = v >= 0 && !g->values[v].is_input ? g->values[v].init : NULL;
	int32_t    *sums;
	bool		same;

	if (!t || t->dtype != OX_INT32 || t->rank != 1 || t->dims[0] != b->dims[1] ||
		!(sums = malloc(sizeof(int32_t) * (size_t) (b->dims[1] + 1))))
		return false;
	ox_int8_column_sums(b, bzp, sums);
	same = memcmp(sums, t->data, sizeof(int32_t) * (size_t) b->dims[1]) == 0;
	free(sums);
	return same;
}

/*
 * Mul(Mul(Cast<float>(Sub(MatMulInteger(q, B, -, bzp), Mul(Cast<int32>(zp),
 * sums))), scale), ws) [+ bias] -> DynamicQuantizeMatMulRows(x, B, ws, bzp,
 * bias), q being row_quant_of's.  The shared quantization chain is left to
 * dead-node elimination once no product reads it.
 */
static ox_code
fuse_dynamic_rows(ox_pass_ctx *pc, ox_graph *g, int k, ox_status *st)
{
	const ox_node *mul = &g->nodes[k];
	int			smul = -1,
				cast,
				sub,
				corr,
				mmi,
				zcast,
				ws = -1,
				add = -1,
				bias = -1,
				out,
				node;
	const ox_tensor *b,
			   *bzp;
	rowq		r;
	int			in[5];
	ox_attr		attr;

	if (mul->n_inputs != 2 || mul->n_outputs != 1)
		return OX_OK;
	for (int i = 0; i < 2 && smul < 0; i++)
		if ((smul = sole_producer(g, mul->inputs[i], "Mul")) >= 0)
			ws = mul->inputs[1 - i];
	if (smul < 0 || g->nodes[smul].n_inputs != 2 ||
		(cast = sole_producer(g, g->nodes[smul].inputs[0], "Cast")) < 0 ||
		ox_attr_int(&g->nodes[cast], "to", 0) != OX_FLOAT ||
		(sub = sole_producer(g, g->nodes[cast].inputs[0], "Sub")) < 0 || g->nodes[sub].n_inputs != 2 ||
		(mmi = sole_producer(g, g->nodes[sub].inputs[0], "MatMulInteger")) < 0 ||
		(corr = sole_producer(g, g->nodes[sub].inputs[1], "Mul")) < 0 || g->nodes[corr].n_inputs != 2)
		return OX_OK;
	{
		const ox_node *m = &g->nodes[mmi];

		if ((m->n_inputs > 2 && m->inputs[2] >= 0) || !integer_weights(g, m, &b, &bzp))
			return OX_OK;
		if (!row_quant_of(g, m->inputs[0], &r) || g->nodes[smul].inputs[1] != r.scale)
			return OX_OK;
	}
	if ((zcast = producer_op(g, g->nodes[corr].inputs[0], "Cast")) < 0 ||
		ox_attr_int(&g->nodes[zcast], "to", 0) != OX_INT32 || g->nodes[zcast].inputs[0] != r.zp ||
		!column_sums_match(g, g->nodes[corr].inputs[1], b, bzp))
		return OX_OK;
	if (!column_scales(ox_node_const_input(g, mul, ws == mul->inputs[0] ? 0 : 1), b->dims[1]))
		return OX_OK;
	out = mul->outputs[0];
	add = trailing_bias(g, &out, b->dims[1], &bias);
	in[0] = r.x;
	in[1] = g->nodes[mmi].inputs[1];
	in[2] = ws;
	in[3] = bzp ? g->nodes[mmi].inputs[3] : -1;
	in[4] = bias;
	node = add_node(pc, g, "DynamicQuantizeMatMulRows", OX_ONNX_PG_DOMAIN, g->nodes[k].name, in,
					bias >= 0 ? 5 : 4, out, "per-row quantization+MatMulInteger+Sub+Cast+Mul+Mul", st);
	if (node < 0)
		return st->code;
	memset(&attr, 0, sizeof(attr));
	attr.name = "min_scale";
	attr.type = OX_ATTR_FLOAT;
	attr.f = r.min_scale;
	OX_TRY(ox_pass_set_attrs(pc, g, node, NULL, 0, &attr, 1, st));
	g->nodes[k].dead = true;
	g->nodes[smul].dead = true;
	g->nodes[cast].dead = true;
	g->nodes[sub].dead = true;
	g->nodes[corr].dead = true;
	g->nodes[mmi].dead = true;
	if (add >= 0)
		g->nodes[add].dead = true;
	pc->changes++;
	return OX_OK;
}

/* ---- the pass ---------------------------------------------------------------------------- */

ox_code
ox_pass_qdq_fuse(ox_pass_ctx *pc, ox_graph *g, ox_status *st)
{
	int			n = g->n_nodes;
	bool		any = false;

	for (int k = 0; k < n && !any; k++)
		any = g->nodes[k].domain[0] == '\0' &&
			(strcmp(g->nodes[k].op_type, "DequantizeLinear") == 0 ||
			 strcmp(g->nodes[k].op_type, "MatMulInteger") == 0 ||
			 strcmp(g->nodes[k].op_type, "QLinearMatMul") == 0);
	if (!any)
		return OX_OK;
	/* nodes added here are not revisited in this round; analyze runs between rounds */
	for (int k = 0; k < n; k++)
	{
		const ox_node *node = &g->nodes[k];
		const char *op = node->op_type;

		if (node->dead || node->domain[0] != '\0')
			continue;
		if (strcmp(op, "Conv") == 0)
			OX_TRY(fuse_conv(pc, g, k, st));
		else if (strcmp(op, "MatMul") == 0)
			OX_TRY(fuse_matmul(pc, g, k, false, st));
		else if (strcmp(op, "Gemm") == 0)
			OX_TRY(fuse_matmul(pc, g, k, true, st));
		else if (strcmp(op, "QLinearMatMul") == 0)
			OX_TRY(fuse_qlinear_matmul(pc, g, k, st));
		else if (strcmp(op, "Add") == 0)
			OX_TRY(fuse_add(pc, g, k, st));
		else if (strcmp(op, "GlobalAveragePool") == 0)
			OX_TRY(fuse_gap(pc, g, k, st));
		else if (strcmp(op, "Mul") == 0)
		{
			OX_TRY(fuse_dynamic(pc, g, k, st));
			if (!g->nodes[k].dead)
				OX_TRY(fuse_dynamic_rows(pc, g, k, st));
		}
		else if ((strcmp(op, "MaxPool") == 0 && node->opset >= 12) || strcmp(op, "Flatten") == 0 ||
				 strcmp(op, "Reshape") == 0 || strcmp(op, "Transpose") == 0 ||
				 strcmp(op, "Squeeze") == 0 || strcmp(op, "Unsqueeze") == 0)
			OX_TRY(fuse_direct(pc, g, k));
	}
	return OX_OK;
}
