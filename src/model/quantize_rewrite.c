/*
 * quantize_rewrite.c
 *	  The three rewrites of the quantizer, on the plan quantize.c made:
 *
 *	  dynamic	  X -> DynamicQuantizeLinear -> (Xq, Xs, Xzp), shared by every
 *				  product reading X;  MatMulInteger(Xq, Wq, Xzp, Wzp) (or
 *				  ConvInteger) -> Cast(float) -> Mul(Xs * Ws) [-> Add(bias)].
 *				  Gather tables: Gather(Wq) -> DequantizeLinear.
 *	  QDQ		  every quantized tensor T becomes Q(T) -> DQ -> T' and its
 *				  readers read T'; weights are DQ(Wq), biases DQ(int32).
 *				  Runtimes (ours: qdq_fuse.c) fuse the patterns into int8
 *				  kernels.
 *	  QOperator   QLinearConv / QLinearMatMul where the output is quantized,
 *				  MatMulInteger with a float output elsewhere (Gemm, and
 *				  products whose output is a graph output only); value
 *				  preserving operators run on the quantized tensors; the rest
 *				  stays float behind DequantizeLinear.
 *
 * Node pointers move when nodes are added (the node array grows): the
 * rewrites copy what they need from a node before adding any.
 */
#include "model/quantize_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* what a rewrite reads from an original node before the node array moves */
typedef struct qz_src
{
	int			index;
	const char *name;
	const char *op;
	int			in[3];			/* first three inputs, -1 when absent */
	int			out;
	const ox_node *copy;		/* for attributes: valid until the next qz_node */
	ox_attr    *attrs;
	int			n_attrs;
} qz_src;

static void
src_of(qz *z, int k, qz_src *s)
{
	ox_node    *n = &z->g->nodes[k];

	s->index = k;
	s->name = n->name;
	s->op = n->op_type;
	for (int i = 0; i < 3; i++)
		s->in[i] = i < n->n_inputs ? n->inputs[i] : -1;
	s->out = n->outputs[0];
	s->attrs = n->attrs;
	s->n_attrs = n->n_attrs;
}

/* attributes of the source copied onto a new node */
static ox_code
copy_src_attrs(qz *z, int node, const qz_src *s)
{
	ox_node		tmp;

	memset(&tmp, 0, sizeof(tmp));
	tmp.attrs = s->attrs;
	tmp.n_attrs = s->n_attrs;
	return qz_copy_attrs(z, node, &tmp);
}

static const ox_tensor *
init_of(qz *z, int v)
{
	return v >= 0 ? z->g->values[v].init : NULL;
}

static void
kill(qz *z, int k)
{
	qz_count(z, &z->g->nodes[k]);
	z->g->nodes[k].dead = true;
}

#define TRY_ID(expr) do { if ((expr) < 0) return z->st->code ? z->st->code : OX_OUT_OF_MEMORY; } while (0)

/* a float initializer holding `n` values shaped [1, n, 1, ...] (rank r) or [n] (r <= 1) */
static int
channel_floats(qz *z, const char *base, const char *suffix, const float *v, int64_t n, int r,
			   float factor)
{
	int64_t		dims[OX_MAX_RANK];
	void	   *d;
	int			id;

	if (r <= 1)
	{
		r = n == 1 ? 0 : 1;
		dims[0] = n;
	}
	else
	{
		for (int i = 0; i < r; i++)
			dims[i] = 1;
		dims[1] = n;
	}
	id = qz_init(z, base, suffix, OX_FLOAT, r, dims, &d);
	if (id >= 0)
		for (int64_t i = 0; i < n; i++)
			((float *) d)[i] = v[i] * factor;
	return id;
}

/* ---- dynamic ------------------------------------------------------------------- */

/* DynamicQuantizeLinear of x, shared: returns Xq; Xs and Xzp follow it */
static int
dynamic_input(qz *z, int x)
{
	int			out[3];
	const char *base = z->g->values[x].name;

	if (z->dyn[x] >= 0)
		return z->dyn[x];
	out[0] = qz_value(z, base, "quantized", OX_UINT8);
	out[1] = qz_value(z, base, "scale", OX_FLOAT);
	out[2] = qz_value(z, base, "zero_point", OX_UINT8);
	if (out[0] < 0 || out[1] < 0 || out[2] < 0 ||
		qz_node(z, "DynamicQuantizeLinear", "", base, &x, 1, out, 3) < 0)
		return -1;
	z->dyn[x] = out[0];
	return out[0];
}

/* node helpers for the per-row chain: one input or two, one output of type dt */
static int
rows_op(qz *z, const char *op, const char *base, int a, int b, ox_dtype dt)
{
	int			in[2] = {a, b};
	int			out = qz_value(z, base, op, dt);

	if (out < 0 || qz_node(z, op, "", base, in, b >= 0 ? 2 : 1, &out, 1) < 0)
		return -1;
	return out;
}

/* Cast(a) to `to` into out, or into a new value when out < 0; returns the output */
static int
cast_to(qz *z, const char *base, int a, ox_dtype to, int out)
{
	int			node;

	if (out < 0)
		out = qz_value(z, base, "Cast", to);
	if (out < 0 || (node = qz_node(z, "Cast", "", base, &a, 1, &out, 1)) < 0 ||
		qz_attr_int(z, node, "to", to) != OX_OK)
		return -1;
	return out;
}

/* ReduceMin/ReduceMax over the last axis, kept: axes an attribute before opset 18, an input after */
static int
rows_reduce(qz *z, const char *op, const char *base, int x)
{
	int64_t		last = -1;
	int			out = qz_value(z, base, op, OX_FLOAT);
	int			node;

	if (out < 0)
		return -1;
	if (ox_model_opset(z->m, "") >= 18)
	{
		int64_t		one = 1;
		void	   *d;
		int			in[2] = {x, qz_init(z, base, "axes", OX_INT64, 1, &one, &d)};

		if (in[1] < 0 || (node = qz_node(z, op, "", base, in, 2, &out, 1)) < 0)
			return -1;
		*(int64_t *) d = last;
	}
	else if ((node = qz_node(z, op, "", base, &x, 1, &out, 1)) < 0 ||
			 qz_attr_ints(z, node, "axes", &last, 1) != OX_OK)
		return -1;
	return qz_attr_int(z, node, "keepdims", 1) == OX_OK ? out : -1;
}

/*
 * Per-row dynamic quantization of x, shared by every product reading it:
 * what DynamicQuantizeLinear does for the whole tensor, for each row of the
 * last axis, in standard operators (onnxruntime's MatMulInteger takes only
 * a scalar zero point for A, so the product runs without one and the
 * zero point is taken out after it, per row):
 *
 *	 lo = Min(ReduceMin(x), 0)	hi = Max(ReduceMax(x), 0)
 *	 scale = Max((hi - lo) / 255, tiny)	 zp = Round(-lo / scale)
 *	 q = Cast<uint8>(Clip(Round(x / scale) + zp, 0, 255))
 *
 * Returns q; the scale ([..., 1] float) and the zero point as int32 follow
 * it as q + 1 and q + 2.  qdq_fuse.c recognizes exactly this chain.
 */
static int
dynamic_input_rows(qz *z, int x)
{
	const char *base = z->g->values[x].name;
	int			q,
				s,
				zpi,
				zero,
				c255,
				tiny,
				lo,
				hi,
				zpf,
				t;
	int			in[3];

	if (z->dyn_rows[x] >= 0)
		return z->dyn_rows[x];
	/* the three outputs first, so that their ids are consecutive */
	if ((q = qz_value(z, base, "row_quantized", OX_UINT8)) < 0 ||
		(s = qz_value(z, base, "row_scale", OX_FLOAT)) < 0 ||
		(zpi = qz_value(z, base, "row_zero_point", OX_INT32)) < 0)
		return -1;
	if ((zero = qz_scalar_f(z, base, "zero", 0.0f)) < 0 ||
		(c255 = qz_scalar_f(z, base, "qmax", 255.0f)) < 0 ||
		(tiny = qz_scalar_f(z, base, "min_scale", OX_ROWQ_MIN_SCALE)) < 0)
		return -1;
	if ((lo = rows_reduce(z, "ReduceMin", base, x)) < 0 ||
		(lo = rows_op(z, "Min", base, lo, zero, OX_FLOAT)) < 0 ||
		(hi = rows_reduce(z, "ReduceMax", base, x)) < 0 ||
		(hi = rows_op(z, "Max", base, hi, zero, OX_FLOAT)) < 0 ||
		(t = rows_op(z, "Sub", base, hi, lo, OX_FLOAT)) < 0 ||
		(t = rows_op(z, "Div", base, t, c255, OX_FLOAT)) < 0)
		return -1;
	in[0] = t;
	in[1] = tiny;
	if (qz_node(z, "Max", "", base, in, 2, &s, 1) < 0 ||
		(t = rows_op(z, "Neg", base, lo, -1, OX_FLOAT)) < 0 ||
		(t = rows_op(z, "Div", base, t, s, OX_FLOAT)) < 0 ||
		(zpf = rows_op(z, "Round", base, t, -1, OX_FLOAT)) < 0 ||
		(t = rows_op(z, "Div", base, x, s, OX_FLOAT)) < 0 ||
		(t = rows_op(z, "Round", base, t, -1, OX_FLOAT)) < 0 ||
		(t = rows_op(z, "Add", base, t, zpf, OX_FLOAT)) < 0)
		return -1;
	in[0] = t;
	in[1] = zero;
	in[2] = c255;
	if ((t = qz_value(z, base, "Clip", OX_FLOAT)) < 0 ||
		qz_node(z, "Clip", "", base, in, 3, &t, 1) < 0 ||
		cast_to(z, base, t, OX_UINT8, q) < 0 || cast_to(z, base, zpf, OX_INT32, zpi) < 0)
		return -1;
	z->dyn_rows[x] = q;
	return q;
}

/*
 * After MatMulInteger(q, Wq, -, wzp) -> q32 for per-row quantized rows q:
 * q32 - zp * colsum(Wq - wzp) -> Cast -> Mul(scale) -> Mul(ws) [-> Add(bias)].
 */
static ox_code
rows_scale_back(qz *z, const char *base, int xq, int q32, const qz_weight *wq, int ws_id, int bias,
				int y)
{
	const ox_tensor *w = init_of(z, wq->q);
	int64_t		n = w->dims[1];
	int			cs,
				t;
	int			in[2];
	void	   *d;

	TRY_ID(cs = qz_init(z, base, "weight_column_sums", OX_INT32, 1, &n, &d));
	ox_int8_column_sums(w, init_of(z, wq->zp), d);
	TRY_ID(t = rows_op(z, "Mul", base, xq + 2, cs, OX_INT32));
	TRY_ID(t = rows_op(z, "Sub", base, q32, t, OX_INT32));
	TRY_ID(t = cast_to(z, base, t, OX_FLOAT, -1));
	TRY_ID(t = rows_op(z, "Mul", base, t, xq + 1, OX_FLOAT));
	in[0] = t;
	in[1] = ws_id;
	if (bias < 0)
	{
		TRY_ID(qz_node(z, "Mul", "", base, in, 2, &y, 1));
		return OX_OK;
	}
	TRY_ID(t = rows_op(z, "Mul", base, t, ws_id, OX_FLOAT));
	in[0] = t;
	in[1] = bias;
	TRY_ID(qz_node(z, "Add", "", base, in, 2, &y, 1));
	return OX_OK;
}

/*
 * q32 (int32 product of xq and the weights) -> Cast -> Mul(xs * ws) -> y,
 * with an optional bias added after.  ws_id is a float initializer that
 * broadcasts against the product.
 */
static ox_code
scale_back(qz *z, const char *base, int q32, int xs, int ws_id, int bias, int y)
{
	int			yf = qz_value(z, base, "float", OX_FLOAT);
	int			s = qz_value(z, base, "scale", OX_FLOAT);
	int			ys = bias >= 0 ? qz_value(z, base, "scaled", OX_FLOAT) : y;
	int			in[2];

	TRY_ID(yf);
	TRY_ID(s);
	TRY_ID(ys);
	TRY_ID(cast_to(z, base, q32, OX_FLOAT, yf));
	in[0] = xs;
	in[1] = ws_id;
	TRY_ID(qz_node(z, "Mul", "", base, in, 2, &s, 1));
	in[0] = yf;
	in[1] = s;
	TRY_ID(qz_node(z, "Mul", "", base, in, 2, &ys, 1));
	if (bias >= 0)
	{
		in[0] = ys;
		in[1] = bias;
		TRY_ID(qz_node(z, "Add", "", base, in, 2, &y, 1));
	}
	return OX_OK;
}

static ox_code
dynamic_product(qz *z, int k, qz_kind kind)
{
	qz_src		s;
	const ox_tensor *w;
	qz_weight	wq;
	int			xq,
				q32,
				node,
				ws_id,
				bias = -1;
	int			in[4];
	bool		trans = false;
	bool		rows;
	int			axis;
	ox_code		rc = OX_OK;

	src_of(z, k, &s);
	w = init_of(z, s.in[1]);
	if (kind == QK_CONV)
		axis = 0;
	else if (kind == QK_GEMM)
	{
		trans = ox_attr_int(&z->g->nodes[k], "transB", 0) != 0;
		axis = trans ? 0 : 1;
	}
	else
		axis = 1;
	OX_TRY(qz_quantize_weight(z, w, z->g->values[s.in[1]].name, z->o->per_channel ? axis : -1,
							  trans, z->o->weight_type, 0, &wq));
	rows = z->o->per_row_activations && kind != QK_CONV;
	TRY_ID(xq = rows ? dynamic_input_rows(z, s.in[0]) : dynamic_input(z, s.in[0]));
	TRY_ID(q32 = qz_value(z, s.name, "int32", OX_INT32));
	in[0] = xq;
	in[1] = wq.q;
	in[2] = rows ? -1 : xq + 2;	/* per row: the zero point is taken out after the product */
	in[3] = wq.zp;
	if (kind == QK_CONV)
	{
		node = qz_node(z, "ConvInteger", "", s.name, in, 4, &q32, 1);
		if (node < 0 || copy_src_attrs(z, node, &s) != OX_OK)
			goto fail;
		/* scales and bias broadcast over [N, M, spatial...] */
		ws_id = channel_floats(z, s.name, "weight_scale", wq.scales, wq.n_ch,
							   wq.n_ch > 1 ? w->rank : 0, 1.0f);
		if (ws_id < 0)
			goto fail;
		if (s.in[2] >= 0)
		{
			const ox_tensor *b = init_of(z, s.in[2]);

			if ((bias = channel_floats(z, s.name, "bias", b->data, ox_tensor_numel(b), w->rank, 1.0f)) < 0)
				goto fail;
		}
	}
	else
	{
		float		alpha = kind == QK_GEMM ? ox_attr_float(&z->g->nodes[k], "alpha", 1.0f) : 1.0f;

		node = qz_node(z, "MatMulInteger", "", s.name, in, 4, &q32, 1);
		if (node < 0)
			goto fail;
		ws_id = channel_floats(z, s.name, "weight_scale", wq.scales, wq.n_ch, 1, alpha);
		if (ws_id < 0)
			goto fail;
		if (kind == QK_GEMM && s.in[2] >= 0)
		{
			float		beta = ox_attr_float(&z->g->nodes[k], "beta", 1.0f);
			const ox_tensor *c = init_of(z, s.in[2]);

			bias = s.in[2];
			if (c && beta != 1.0f)
			{
				void	   *d;

				if ((bias = qz_init(z, s.name, "bias", OX_FLOAT, c->rank, c->dims, &d)) < 0)
					goto fail;
				for (int64_t i = 0; i < ox_tensor_numel(c); i++)
					((float *) d)[i] = ((const float *) c->data)[i] * beta;
			}
		}
	}
	kill(z, k);
	rc = rows ? rows_scale_back(z, s.name, xq, q32, &wq, ws_id, bias, s.out)
		: scale_back(z, s.name, q32, xq + 1, ws_id, bias, s.out);
	free(wq.scales);
	return rc;
fail:
	free(wq.scales);
	return z->st->code ? z->st->code : OX_OUT_OF_MEMORY;
}

/*
 * An embedding table: Gather(Wq, ids) -> DequantizeLinear per tensor, or,
 * per channel, one scale per row: Gather(Wq) -> Cast -> [Sub(Gather(zp))]
 * -> Mul(Gather(scales [V, 1])), standard operators that broadcast over any
 * batch.  Rows are what a lookup returns, so per-row scales cost nothing in
 * accuracy where one table-wide scale would flatten rare, small rows.
 */
static ox_code
dynamic_gather(qz *z, int k)
{
	qz_src		s;
	qz_weight	wq;
	const ox_tensor *w;
	int			gq,
				node;
	int			in[3];
	bool		per_row;

	src_of(z, k, &s);
	w = init_of(z, s.in[0]);
	per_row = z->o->per_channel && w->rank == 2 && ox_attr_int(&z->g->nodes[k], "axis", 0) == 0;
	OX_TRY(qz_quantize_weight(z, w, z->g->values[s.in[0]].name, per_row ? 0 : -1, false,
							  z->o->weight_type, per_row ? -2 : 0, &wq));
	free(wq.scales);
	TRY_ID(gq = qz_value(z, s.name, "quantized", z->o->weight_type));
	in[0] = wq.q;
	in[1] = s.in[1];
	TRY_ID(node = qz_node(z, "Gather", "", s.name, in, 2, &gq, 1));
	OX_TRY(copy_src_attrs(z, node, &s));
	kill(z, k);
	if (!per_row)
	{
		in[0] = gq;
		in[1] = wq.scale;
		in[2] = wq.zp;
		TRY_ID(qz_node(z, "DequantizeLinear", "", s.name, in, 3, &s.out, 1));
		return OX_OK;
	}
	{
		/* scales and zero points are [V, 1]: gathered, they broadcast over the row */
		int			gf = qz_value(z, s.name, "float", OX_FLOAT);
		int			sc = qz_value(z, s.name, "row_scale", OX_FLOAT);
		bool		has_zp = !z->o->symmetric_weights || z->o->weight_type == OX_UINT8;

		TRY_ID(gf);
		TRY_ID(sc);
		TRY_ID(cast_to(z, s.name, gq, OX_FLOAT, gf));
		if (has_zp)
		{
			const ox_tensor *zt = z->g->values[wq.zp].init;
			int64_t		dims[2] = {zt->dims[0], 1};
			void	   *zd;
			int			zf = qz_init(z, s.name, "row_zero_point", OX_FLOAT, 2, dims, &zd);
			int			gz = qz_value(z, s.name, "row_zero", OX_FLOAT);
			int			cen = qz_value(z, s.name, "centered", OX_FLOAT);

			TRY_ID(zf);
			TRY_ID(gz);
			TRY_ID(cen);
			for (int64_t i = 0; i < dims[0]; i++)
				((float *) zd)[i] = (float) (zt->dtype == OX_INT8 ? ((const int8_t *) zt->data)[i]
											 : ((const uint8_t *) zt->data)[i]);
			in[0] = zf;
			in[1] = s.in[1];
			TRY_ID(node = qz_node(z, "Gather", "", s.name, in, 2, &gz, 1));
			OX_TRY(copy_src_attrs(z, node, &s));
			in[0] = gf;
			in[1] = gz;
			TRY_ID(qz_node(z, "Sub", "", s.name, in, 2, &cen, 1));
			gf = cen;
		}
		in[0] = wq.scale;
		in[1] = s.in[1];
		TRY_ID(node = qz_node(z, "Gather", "", s.name, in, 2, &sc, 1));
		OX_TRY(copy_src_attrs(z, node, &s));
		in[0] = gf;
		in[1] = sc;
		TRY_ID(qz_node(z, "Mul", "", s.name, in, 2, &s.out, 1));
	}
	return OX_OK;
}

ox_code
qz_rewrite_dynamic(qz *z)
{
	for (int k = 0; k < z->n_nodes; k++)
	{
		switch (z->kind[k])
		{
			case QK_CONV:
			case QK_MATMUL:
			case QK_GEMM:
				OX_TRY(dynamic_product(z, k, z->kind[k]));
				break;
			case QK_GATHER:
				OX_TRY(dynamic_gather(z, k));
				break;
			default:
				break;
		}
	}
	return OX_OK;
}

/* ---- static: shared pieces ---------------------------------------------------- */

/* the scale and zero point initializers of a quantized tensor */
static ox_code
tensor_params(qz *z, int v, int *scale, int *zp, qz_params **out)
{
	int			r = z->root[v];
	qz_params  *p;

	if (r < 0 || !z->params[r].set)
		return ox_fail(z->st, OX_INTERNAL, "tensor \"%s\" has no quantization parameters",
					   z->g->values[v].name);
	p = &z->params[r];
	if (p->scale_id == 0)
	{
		const char *base = z->g->values[r].name;

		TRY_ID(p->scale_id = qz_scalar_f(z, base, "scale", p->scale));
		TRY_ID(p->zp_id = qz_scalar_q(z, base, "zero_point", z->o->activation_type, p->zp));
	}
	*scale = p->scale_id;
	*zp = p->zp_id;
	if (out)
		*out = p;
	return OX_OK;
}

/* Relu folded into the quantization of its producer's output */
static void
fold_relus(qz *z)
{
	for (int k = 0; k < z->n_nodes; k++)
	{
		ox_node    *relu = &z->g->nodes[k];
		int			t,
					p;

		if (z->kind[k] != QK_RELU_FOLD)
			continue;
		t = relu->inputs[0];
		p = z->g->values[t].producer;
		z->g->nodes[p].outputs[z->g->values[t].producer_slot] = relu->outputs[0];
		kill(z, k);
	}
}

/* the weight's per-channel axis and whether it is stored transposed */
static int
weight_axis(qz *z, int k, qz_kind kind)
{
	if (!z->o->per_channel)
		return -1;
	if (kind == QK_CONV)
		return 0;
	if (kind == QK_GEMM)
		return ox_attr_int(&z->g->nodes[k], "transB", 0) ? 0 : 1;
	return 1;
}

/* ---- QDQ -------------------------------------------------------------------------- */

/* Q -> DQ on tensor v; every reader of v then reads the DQ output */
static ox_code
qdq_tensor(qz *z, int v)
{
	int			s,
				zp,
				q,
				dq,
				qnode;
	int			in[3];
	const char *base = z->g->values[v].name;
	int			n_nodes;

	OX_TRY(tensor_params(z, v, &s, &zp, NULL));
	TRY_ID(q = qz_value(z, base, "quantized", z->o->activation_type));
	TRY_ID(dq = qz_value(z, base, "dequantized", OX_FLOAT));
	z->g->values[dq].type = z->g->values[v].type;
	n_nodes = z->g->n_nodes;
	for (int k = 0; k < n_nodes; k++)
	{
		ox_node    *n = &z->g->nodes[k];

		if (n->dead)
			continue;
		for (int i = 0; i < n->n_inputs; i++)
			if (n->inputs[i] == v)
				n->inputs[i] = dq;
		for (int i = 0; i < n->n_implicit; i++)
			if (n->implicit_inputs[i] == v)
				n->implicit_inputs[i] = dq;
	}
	in[0] = v;
	in[1] = s;
	in[2] = zp;
	TRY_ID(qnode = qz_node(z, "QuantizeLinear", "", base, in, 3, &q, 1));
	in[0] = q;
	TRY_ID(qz_node(z, "DequantizeLinear", "", base, in, 3, &dq, 1));
	return OX_OK;
}

/* a 1-D bias of one value per output channel (Gemm: C with beta 1) */
static bool
bias_quantizable(qz *z, int k, qz_kind kind, const ox_tensor *w, const ox_tensor *b)
{
	int64_t		n_out;

	if (b->dtype != OX_FLOAT || b->rank != 1)
		return false;
	if (kind == QK_CONV)
		return b->dims[0] == w->dims[0];
	if (kind != QK_GEMM || ox_attr_float(&z->g->nodes[k], "beta", 1.0f) != 1.0f)
		return false;
	n_out = ox_attr_int(&z->g->nodes[k], "transB", 0) ? w->dims[0] : w->dims[1];
	return b->dims[0] == n_out;
}

/* DQ of a quantized weight (and its int32 bias) replacing the node's inputs */
static ox_code
qdq_weights(qz *z, int k, qz_kind kind)
{
	qz_src		s;
	const ox_tensor *w;
	qz_weight	wq;
	int			axis = weight_axis(z, k, kind);
	int			xs,
				xzp,
				wdq,
				node;
	qz_params  *xp;
	int			in[3];
	ox_code		rc = OX_OK;

	src_of(z, k, &s);
	w = init_of(z, s.in[1]);
	OX_TRY(tensor_params(z, s.in[0], &xs, &xzp, &xp));
	OX_TRY(qz_quantize_weight(z, w, z->g->values[s.in[1]].name, axis, false, z->o->weight_type, 0, &wq));
	if ((wdq = qz_value(z, z->g->values[s.in[1]].name, "dequantized", OX_FLOAT)) < 0)
		goto fail;
	in[0] = wq.q;
	in[1] = wq.scale;
	in[2] = wq.zp;
	if ((node = qz_node(z, "DequantizeLinear", "", s.name, in, 3, &wdq, 1)) < 0)
		goto fail;
	if (axis >= 0 && qz_attr_int(z, node, "axis", axis) != OX_OK)
		goto fail;
	z->g->nodes[k].inputs[1] = wdq;

	/* Conv's bias, Gemm's C when it is one value per output column */
	if (s.in[2] >= 0 && init_of(z, s.in[2]) && bias_quantizable(z, k, kind, w, init_of(z, s.in[2])))
	{
		const ox_tensor *b = init_of(z, s.in[2]);
		const char *bname = z->g->values[s.in[2]].name;
		int64_t		nch = wq.n_ch;
		int			prank = nch > 1 ? 1 : 0;
		int			bq,
					bs,
					bz,
					bdq;
		void	   *sd;

		if ((bq = qz_quantize_bias(z, b, bname, xp->scale, wq.scales, wq.n_ch)) < 0 ||
			(bs = qz_init(z, bname, "scale", OX_FLOAT, prank, &nch, &sd)) < 0 ||
			(bz = qz_init(z, bname, "zero_point", OX_INT32, prank, &nch, NULL)) < 0 ||
			(bdq = qz_value(z, bname, "dequantized", OX_FLOAT)) < 0)
			goto fail;
		for (int64_t i = 0; i < nch; i++)
			((float *) sd)[i] = xp->scale * wq.scales[i];
		in[0] = bq;
		in[1] = bs;
		in[2] = bz;
		if ((node = qz_node(z, "DequantizeLinear", "", s.name, in, 3, &bdq, 1)) < 0)
			goto fail;
		if (nch > 1 && qz_attr_int(z, node, "axis", 0) != OX_OK)
			goto fail;
		z->g->nodes[k].inputs[2] = bdq;
	}
	free(wq.scales);
	return rc;
fail:
	free(wq.scales);
	return z->st->code ? z->st->code : OX_OUT_OF_MEMORY;
}

ox_code
qz_rewrite_qdq(qz *z)
{
	fold_relus(z);
	/* weights first: they read the activations' parameters, not their DQ */
	for (int k = 0; k < z->n_nodes; k++)
	{
		qz_kind		kind = z->kind[k];

		if (kind == QK_CONV || kind == QK_MATMUL || kind == QK_GEMM)
			OX_TRY(qdq_weights(z, k, kind));
	}
	for (int v = 0; v < z->n_values; v++)
		if (z->root[v] >= 0 && z->g->values[v].n_consumers > 0)
			OX_TRY(qdq_tensor(z, v));
	for (int k = 0; k < z->n_nodes; k++)
		if (z->kind[k] != QK_NONE && z->kind[k] != QK_RELU_FOLD)
			qz_count(z, &z->g->nodes[k]);
	return OX_OK;
}

/* ---- QOperator ---------------------------------------------------------------------- */

/* the quantized twin of a float tensor, made by QuantizeLinear on first use */
static int
q_of(qz *z, int v)
{
	int			s,
				zp,
				q;
	int			in[3];

	if (z->qval[v] >= 0)
		return z->qval[v];
	if (tensor_params(z, v, &s, &zp, NULL) != OX_OK)
		return -1;
	if ((q = qz_value(z, z->g->values[v].name, "quantized", z->o->activation_type)) < 0)
		return -1;
	in[0] = v;
	in[1] = s;
	in[2] = zp;
	if (qz_node(z, "QuantizeLinear", "", z->g->values[v].name, in, 3, &q, 1) < 0)
		return -1;
	z->qval[v] = q;
	return q;
}

/* a product whose output is quantized: QLinearConv / QLinearMatMul writing y's twin */
static ox_code
qop_qlinear(qz *z, int k, qz_kind kind, bool *float_gone)
{
	qz_src		s;
	qz_weight	wq;
	int			xq,
				xs,
				xzp,
				ys,
				yzp,
				yq,
				node,
				bq = -1;
	qz_params  *xp;
	int			in[9];
	int			n_in;

	src_of(z, k, &s);
	TRY_ID(xq = q_of(z, s.in[0]));
	OX_TRY(tensor_params(z, s.in[0], &xs, &xzp, &xp));
	OX_TRY(tensor_params(z, s.out, &ys, &yzp, NULL));
	OX_TRY(qz_quantize_weight(z, init_of(z, s.in[1]), z->g->values[s.in[1]].name,
							  weight_axis(z, k, kind), false, z->o->weight_type, 0, &wq));
	if (kind == QK_CONV && s.in[2] >= 0 &&
		(bq = qz_quantize_bias(z, init_of(z, s.in[2]), z->g->values[s.in[2]].name, xp->scale,
							   wq.scales, wq.n_ch)) < 0)
		goto fail;
	if ((yq = qz_value(z, z->g->values[s.out].name, "quantized", z->o->activation_type)) < 0)
		goto fail;
	in[0] = xq;
	in[1] = xs;
	in[2] = xzp;
	in[3] = wq.q;
	in[4] = wq.scale;
	in[5] = wq.zp;
	in[6] = ys;
	in[7] = yzp;
	in[8] = bq;
	n_in = bq >= 0 ? 9 : 8;
	node = qz_node(z, kind == QK_CONV ? "QLinearConv" : "QLinearMatMul", "", s.name, in, n_in, &yq, 1);
	if (node < 0 || (kind == QK_CONV && copy_src_attrs(z, node, &s) != OX_OK))
		goto fail;
	free(wq.scales);
	z->qval[s.out] = yq;
	float_gone[s.out] = true;
	kill(z, k);
	return OX_OK;
fail:
	free(wq.scales);
	return z->st->code ? z->st->code : OX_OUT_OF_MEMORY;
}

/* a product with a float output: MatMulInteger / ConvInteger, scaled back */
static ox_code
qop_integer(qz *z, int k, qz_kind kind)
{
	qz_src		s;
	qz_weight	wq;
	const ox_tensor *w;
	int			xq,
				xs,
				xzp,
				q32,
				node,
				ws_id,
				one,
				bias = -1;
	qz_params  *xp;
	bool		trans = false;
	float		alpha = 1.0f;
	int			in[4];
	ox_code		rc;

	src_of(z, k, &s);
	w = init_of(z, s.in[1]);
	if (kind == QK_GEMM)
	{
		trans = ox_attr_int(&z->g->nodes[k], "transB", 0) != 0;
		alpha = ox_attr_float(&z->g->nodes[k], "alpha", 1.0f);
	}
	TRY_ID(xq = q_of(z, s.in[0]));
	OX_TRY(tensor_params(z, s.in[0], &xs, &xzp, &xp));
	OX_TRY(qz_quantize_weight(z, w, z->g->values[s.in[1]].name, weight_axis(z, k, kind), trans,
							  z->o->weight_type, 0, &wq));
	/* the float x scale times the weight scales, as one constant */
	if ((q32 = qz_value(z, s.name, "int32", OX_INT32)) < 0 ||
		(ws_id = channel_floats(z, s.name, "weight_scale", wq.scales, wq.n_ch,
								kind == QK_CONV && wq.n_ch > 1 ? w->rank : 1, alpha)) < 0 ||
		(one = qz_scalar_f(z, s.name, "x_scale", xp->scale)) < 0)
		goto fail;
	in[0] = xq;
	in[1] = wq.q;
	in[2] = xzp;
	in[3] = wq.zp;
	node = qz_node(z, kind == QK_CONV ? "ConvInteger" : "MatMulInteger", "", s.name, in, 4, &q32, 1);
	if (node < 0 || (kind == QK_CONV && copy_src_attrs(z, node, &s) != OX_OK))
		goto fail;
	if (s.in[2] >= 0)
	{
		const ox_tensor *b = init_of(z, s.in[2]);

		if (kind == QK_CONV)
		{
			if ((bias = channel_floats(z, s.name, "bias", b->data, ox_tensor_numel(b), w->rank, 1.0f)) < 0)
				goto fail;
		}
		else if (kind == QK_GEMM)
		{
			float		beta = ox_attr_float(&z->g->nodes[k], "beta", 1.0f);
			void	   *d;

			bias = s.in[2];
			if (b && beta != 1.0f)
			{
				if ((bias = qz_init(z, s.name, "bias", OX_FLOAT, b->rank, b->dims, &d)) < 0)
					goto fail;
				for (int64_t i = 0; i < ox_tensor_numel(b); i++)
					((float *) d)[i] = ((const float *) b->data)[i] * beta;
			}
		}
	}
	free(wq.scales);
	kill(z, k);
	rc = scale_back(z, s.name, q32, one, ws_id, bias, s.out);
	return rc;
fail:
	free(wq.scales);
	return z->st->code ? z->st->code : OX_OUT_OF_MEMORY;
}

/* value-preserving operator on the quantized tensor */
static ox_code
qop_direct(qz *z, int k, bool *float_gone)
{
	ox_node    *n = &z->g->nodes[k];
	int			n_in = n->n_inputs;
	int		   *in = malloc(sizeof(int) * (size_t) (n_in + 1));
	const char *name = n->name;
	const char *op = n->op_type;
	int			out = n->outputs[0];
	ox_attr    *attrs = n->attrs;
	int			n_attrs = n->n_attrs;
	int			yq,
				node;
	ox_node		tmp;

	if (!in)
		return ox_fail(z->st, OX_OUT_OF_MEMORY, "out of memory");
	memcpy(in, n->inputs, sizeof(int) * (size_t) n_in);
	if ((in[0] = q_of(z, in[0])) < 0 ||
		(yq = qz_value(z, z->g->values[out].name, "quantized", z->o->activation_type)) < 0 ||
		(node = qz_node(z, op, "", name, in, n_in, &yq, 1)) < 0)
	{
		free(in);
		return z->st->code ? z->st->code : OX_OUT_OF_MEMORY;
	}
	free(in);
	memset(&tmp, 0, sizeof(tmp));
	tmp.attrs = attrs;
	tmp.n_attrs = n_attrs;
	OX_TRY(qz_copy_attrs(z, node, &tmp));
	z->qval[out] = yq;
	float_gone[out] = true;
	kill(z, k);
	return OX_OK;
}

ox_code
qz_rewrite_qoperator(qz *z)
{
	bool	   *float_gone = calloc((size_t) z->n_values + 1, sizeof(bool));
	int64_t		opset = ox_model_opset(z->m, "");
	ox_code		rc = OX_OK;

	if (!float_gone)
		return ox_fail(z->st, OX_OUT_OF_MEMORY, "out of memory");
	fold_relus(z);
	for (int k = 0; k < z->n_nodes && rc == OX_OK; k++)
	{
		qz_kind		kind = z->kind[k];
		ox_node    *n = &z->g->nodes[k];
		bool		out_quantized = n->n_outputs > 0 && n->outputs[0] >= 0 && z->root[n->outputs[0]] >= 0;

		switch (kind)
		{
			case QK_CONV:
			case QK_MATMUL:
				rc = out_quantized ? qop_qlinear(z, k, kind, float_gone) : qop_integer(z, k, kind);
				break;
			case QK_GEMM:
				rc = qop_integer(z, k, kind);
				break;
			case QK_DIRECT:
				/* uint8/int8 MaxPool arrived in opset 12 */
				if (strcmp(n->op_type, "MaxPool") != 0 || opset >= 12)
					rc = qop_direct(z, k, float_gone);
				break;
			default:
				break;			/* Add and pools stay float, between DQ and Q */
		}
	}
	/* readers of tensors that now only exist quantized get a DequantizeLinear */
	for (int v = 0; v < z->n_values && rc == OX_OK; v++)
	{
		bool		needed = z->g->values[v].is_output;
		int			s,
					zp;
		int			in[3];

		if (!float_gone[v])
			continue;
		for (int k = 0; k < z->g->n_nodes && !needed; k++)
		{
			const ox_node *n = &z->g->nodes[k];

			if (n->dead)
				continue;
			for (int i = 0; i < n->n_inputs; i++)
				needed |= n->inputs[i] == v;
			for (int i = 0; i < n->n_implicit; i++)
				needed |= n->implicit_inputs[i] == v;
		}
		if (!needed)
			continue;
		if ((rc = tensor_params(z, v, &s, &zp, NULL)) != OX_OK)
			break;
		in[0] = z->qval[v];
		in[1] = s;
		in[2] = zp;
		if (qz_node(z, "DequantizeLinear", "", z->g->values[v].name, in, 3, &v, 1) < 0)
			rc = z->st->code ? z->st->code : OX_OUT_OF_MEMORY;
	}
	free(float_gone);
	return rc;
}
