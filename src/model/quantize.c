/*
 * quantize.c
 *	  The quantizer's entry points: options, the analysis that decides which
 *	  nodes and tensors are quantized, quantization parameters, weight and
 *	  bias quantization, and graph-building helpers.  The three rewrites
 *	  (dynamic, QDQ, QOperator) live in quantize_rewrite.c.
 *
 *	  Only the main graph is rewritten; subgraphs keep their float nodes.
 *	  New nodes are appended and ox_graph_analyze restores the topological
 *	  order at the end.
 */
#include "model/quantize_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const dynamic_ops[] = {"Conv", "Gather", "Gemm", "MatMul"};
static const char *const dynamic_default[] = {"Conv", "Gemm", "MatMul"};
static const char *const static_ops[] = {
	"Add", "AveragePool", "Conv", "Flatten", "Gemm", "GlobalAveragePool", "MatMul", "MaxPool",
	"Relu", "Reshape", "Squeeze", "Transpose", "Unsqueeze"
};

#define N_ELEMS(a) ((int) (sizeof(a) / sizeof((a)[0])))

/* operators that mark a model as quantized already */
static const char *const quantized_ops[] = {
	"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv",
	"QLinearMatMul", "MatMulInteger", "ConvInteger", "QLinearAdd", "QGemm",
	"DynamicQuantizeMatMul", "MatMulIntegerToFloat", "QLinearGlobalAveragePool",
	"QLinearAveragePool", "QLinearLeakyRelu", "QLinearMul", "QLinearConcat", "QAttention",
	"DynamicQuantizeMatMulRows"
};

void
ox_quant_options_init(ox_quant_options *o, ox_quant_mode mode)
{
	memset(o, 0, sizeof(*o));
	o->mode = mode;
	o->format = OX_QUANT_QDQ;
	o->weight_type = OX_INT8;
	o->activation_type = OX_UINT8;
	o->per_channel = mode == OX_QUANT_STATIC;
	o->symmetric_weights = true;
}

const char *
ox_quant_supported_ops(ox_quant_mode mode)
{
	return mode == OX_QUANT_DYNAMIC ? "Conv, Gather, Gemm, MatMul"
		: "Add, AveragePool, Conv, Flatten, Gemm, GlobalAveragePool, MatMul, MaxPool, Relu, "
		"Reshape, Squeeze, Transpose, Unsqueeze";
}

static bool
in_list(const char *const *list, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

ox_code
ox_quant_check_options(const ox_quant_options *o, ox_status *st)
{
	if (o->weight_type != OX_INT8 && o->weight_type != OX_UINT8)
		return ox_fail(st, OX_INVALID_ARGUMENT, "weight type must be int8 or uint8, not %s",
					   ox_dtype_name(o->weight_type));
	if (o->activation_type != OX_INT8 && o->activation_type != OX_UINT8)
		return ox_fail(st, OX_INVALID_ARGUMENT, "activation type must be int8 or uint8, not %s",
					   ox_dtype_name(o->activation_type));
	if (o->per_row_activations && o->mode != OX_QUANT_DYNAMIC)
		return ox_fail(st, OX_INVALID_ARGUMENT,
					   "per-row activations are a dynamic quantization setting: static quantization calibrates one range per tensor");
	for (int i = 0; i < o->n_op_types; i++)
	{
		bool		ok = o->mode == OX_QUANT_DYNAMIC ?
			in_list(dynamic_ops, N_ELEMS(dynamic_ops), o->op_types[i]) :
			in_list(static_ops, N_ELEMS(static_ops), o->op_types[i]);

		if (!ok)
			return ox_fail(st, OX_INVALID_ARGUMENT,
						   "cannot quantize operator type \"%s\" (%s quantization supports %s)",
						   o->op_types[i], o->mode == OX_QUANT_DYNAMIC ? "dynamic" : "static",
						   ox_quant_supported_ops(o->mode));
	}
	return OX_OK;
}

static bool
op_wanted(const ox_quant_options *o, const char *op)
{
	if (o->op_types)
		return in_list(o->op_types, o->n_op_types, op);
	if (o->mode == OX_QUANT_DYNAMIC)
		return in_list(dynamic_default, N_ELEMS(dynamic_default), op);
	return in_list(static_ops, N_ELEMS(static_ops), op);
}

bool
ox_model_is_quantized(const ox_model *m, const char **op)
{
	for (int gi = 0; gi < m->n_graphs; gi++)
	{
		const ox_graph *g = m->graphs[gi];

		for (int k = 0; k < g->n_nodes; k++)
			if (!g->nodes[k].dead &&
				in_list(quantized_ops, N_ELEMS(quantized_ops), g->nodes[k].op_type))
			{
				if (op)
					*op = g->nodes[k].op_type;
				return true;
			}
	}
	return false;
}

/* ---- graph building --------------------------------------------------------- */

static const char *
qz_name(qz *z, const char *base, const char *suffix)
{
	char		buf[200];

	snprintf(buf, sizeof(buf), "%.150s_%s", base && base[0] ? base : "q", suffix);
	return ox_model_unique_name(z->m, buf);
}

int
qz_value(qz *z, const char *base, const char *suffix, ox_dtype dt)
{
	int			id = ox_graph_add_value(z->g, qz_name(z, base, suffix), z->st);

	if (id < 0)
		return -1;
	z->g->values[id].type.kind = OX_TYPE_TENSOR;
	z->g->values[id].type.elem = dt;
	z->g->values[id].type.rank = -1;
	return id;
}

int
qz_init(qz *z, const char *base, const char *suffix, ox_dtype dt, int rank, const int64_t *dims,
		void **data)
{
	ox_tensor  *t = ox_model_new_tensor(z->m, z->st);
	int			id;

	if (!t || ox_tensor_alloc_zero(t, dt, rank, dims, z->st) != OX_OK)
		return -1;
	id = ox_graph_add_value(z->g, qz_name(z, base, suffix), z->st);
	if (id < 0)
		return -1;
	z->g->values[id].init = t;
	ox_type_from_tensor(z->m, &z->g->values[id].type, t);
	if (data)
		*data = t->data;
	return id;
}

int
qz_scalar_f(qz *z, const char *base, const char *suffix, float v)
{
	void	   *d;
	int			id = qz_init(z, base, suffix, OX_FLOAT, 0, NULL, &d);

	if (id >= 0)
		*(float *) d = v;
	return id;
}

int
qz_scalar_q(qz *z, const char *base, const char *suffix, ox_dtype dt, int32_t v)
{
	void	   *d;
	int			id = qz_init(z, base, suffix, dt, 0, NULL, &d);

	if (id < 0)
		return -1;
	if (dt == OX_INT8)
		*(int8_t *) d = (int8_t) v;
	else if (dt == OX_UINT8)
		*(uint8_t *) d = (uint8_t) v;
	else
		*(int32_t *) d = v;
	return id;
}

int
qz_node(qz *z, const char *op, const char *domain, const char *base, const int *in, int n_in,
		const int *out, int n_out)
{
	ox_node    *n = ox_graph_add_node(z->g, z->st);
	int64_t		opset;

	if (!n)
		return -1;
	n->op_type = op;
	n->domain = domain ? domain : "";
	n->name = qz_name(z, base, op);
	opset = ox_model_opset(z->m, n->domain);
	n->opset = (int) (opset > 0 ? opset : 1);
	n->inputs = malloc(sizeof(int) * (size_t) (n_in + 1));
	n->outputs = malloc(sizeof(int) * (size_t) (n_out + 1));
	if (!n->inputs || !n->outputs)
	{
		ox_fail(z->st, OX_OUT_OF_MEMORY, "could not allocate a node");
		return -1;
	}
	memcpy(n->inputs, in, sizeof(int) * (size_t) n_in);
	memcpy(n->outputs, out, sizeof(int) * (size_t) n_out);
	n->n_inputs = n_in;
	n->n_outputs = n_out;
	return (int) (n - z->g->nodes);
}

static ox_attr *
grow_attrs(qz *z, int node)
{
	ox_node    *n = &z->g->nodes[node];
	ox_attr    *a = ox_arena_alloc(&z->m->arena, sizeof(ox_attr) * (size_t) (n->n_attrs + 1));

	if (!a)
	{
		ox_fail(z->st, OX_OUT_OF_MEMORY, "could not allocate an attribute");
		return NULL;
	}
	if (n->n_attrs)
		memcpy(a, n->attrs, sizeof(ox_attr) * (size_t) n->n_attrs);
	n->attrs = a;
	return &a[n->n_attrs++];
}

ox_code
qz_attr_int(qz *z, int node, const char *name, int64_t v)
{
	ox_attr    *a = grow_attrs(z, node);

	if (!a)
		return z->st->code;
	memset(a, 0, sizeof(*a));
	a->name = name;
	a->type = OX_ATTR_INT;
	a->i = v;
	return OX_OK;
}

ox_code
qz_attr_ints(qz *z, int node, const char *name, const int64_t *v, int n)
{
	int64_t    *list = ox_arena_alloc(&z->m->arena, sizeof(int64_t) * (size_t) n);
	ox_attr    *a = list ? grow_attrs(z, node) : NULL;

	if (!list)
		return ox_fail(z->st, OX_OUT_OF_MEMORY, "could not allocate an attribute");
	if (!a)
		return z->st->code;
	memcpy(list, v, sizeof(int64_t) * (size_t) n);
	memset(a, 0, sizeof(*a));
	a->name = name;
	a->type = OX_ATTR_INTS;
	a->ints = list;
	a->n = n;
	return OX_OK;
}

ox_code
qz_copy_attrs(qz *z, int node, const ox_node *src)
{
	ox_node    *n = &z->g->nodes[node];

	if (src->n_attrs == 0)
		return OX_OK;
	n->attrs = ox_arena_alloc(&z->m->arena, sizeof(ox_attr) * (size_t) src->n_attrs);
	if (!n->attrs)
		return ox_fail(z->st, OX_OUT_OF_MEMORY, "could not copy attributes");
	memcpy(n->attrs, src->attrs, sizeof(ox_attr) * (size_t) src->n_attrs);
	n->n_attrs = src->n_attrs;
	return OX_OK;
}

bool
qz_is_float_const(const ox_graph *g, const ox_node *n, int i, int rank)
{
	const ox_tensor *t;

	if (i >= n->n_inputs || n->inputs[i] < 0)
		return false;
	if (g->values[n->inputs[i]].is_input)
		return false;			/* overridable */
	t = g->values[n->inputs[i]].init;
	return t && t->dtype == OX_FLOAT && (rank < 0 ? t->rank >= 3 : t->rank == rank);
}

void
qz_count(qz *z, const ox_node *n)
{
	int			i;

	z->sum->nodes_quantized++;
	for (i = 0; i < z->n_count; i++)
		if (strcmp(z->count_op[i], n->op_type) == 0)
			break;
	if (i == z->n_count)
	{
		if (z->n_count == N_ELEMS(z->count_op))
			return;
		z->count_op[z->n_count] = n->op_type;
		z->count_n[z->n_count++] = 0;
	}
	z->count_n[i]++;
}

/* "Conv: 20, Gemm: 1" into the summary */
static void
format_counts(qz *z)
{
	size_t		len = 0;

	z->sum->ops[0] = '\0';
	for (int i = 0; i < z->n_count; i++)
	{
		int			w = snprintf(z->sum->ops + len, sizeof(z->sum->ops) - len, "%s%s: %d",
								 i ? ", " : "", z->count_op[i], z->count_n[i]);

		if (w < 0 || (size_t) w >= sizeof(z->sum->ops) - len)
			break;
		len += (size_t) w;
	}
}

/* ---- quantization parameters ------------------------------------------------ */

void
qz_qrange(ox_dtype qt, bool symmetric, bool reduce_range, int32_t *qmin, int32_t *qmax)
{
	if (qt == OX_UINT8)
	{
		*qmin = 0;
		*qmax = reduce_range ? 127 : 255;
	}
	else if (reduce_range)
	{
		*qmin = -64;
		*qmax = 64;
	}
	else
	{
		*qmin = symmetric ? -127 : -128;
		*qmax = 127;
	}
}

void
qz_compute_params(float rmin, float rmax, int32_t qmin, int32_t qmax, bool symmetric,
				  float *scale, int32_t *zp)
{
	double		lo = fmin(rmin, 0.0),
				hi = fmax(rmax, 0.0);
	double		s,
				z;

	if (!isfinite(lo) || !isfinite(hi))
		lo = hi = 0;
	if (symmetric)
	{
		double		a = fmax(fabs(lo), fabs(hi));

		lo = -a;
		hi = a;
	}
	s = (hi - lo) / (qmax - qmin);
	if (!(s > 0) || (float) s == 0.0f)
	{
		*scale = 1.0f;
		*zp = symmetric ? (qmin + qmax + 1) / 2 : qmin;
		if (qmin < 0 && symmetric)
			*zp = 0;
		return;
	}
	*scale = (float) s;
	z = nearbyint(qmin - lo / (double) *scale);
	*zp = (int32_t) fmin(fmax(z, qmin), qmax);
}

static inline int32_t
quantize_one(float v, float scale, int32_t zp, int32_t qmin, int32_t qmax)
{
	double		q = nearbyint((double) v / scale) + zp;

	return (int32_t) fmin(fmax(q, qmin), qmax);
}

ox_code
qz_quantize_weight(qz *z, const ox_tensor *w, const char *base, int axis, bool transpose,
				   ox_dtype qt, int param_rank, qz_weight *out)
{
	const ox_quant_options *o = z->o;
	int64_t		dims[OX_MAX_RANK];
	int64_t		n = ox_tensor_numel(w);
	int64_t		n_ch = axis >= 0 ? w->dims[axis] : 1;
	int64_t		outer = 1,
				inner = 1;
	int32_t		qmin,
				qmax;
	int32_t    *zps;
	void	   *qdata,
			   *sdata,
			   *zdata;
	int64_t		pdims[OX_MAX_RANK];
	const float *src = w->data;

	memset(out, 0, sizeof(*out));
	memcpy(dims, w->dims, sizeof(int64_t) * (size_t) w->rank);
	if (transpose)
	{
		dims[0] = w->dims[1];
		dims[1] = w->dims[0];
	}
	if (axis >= 0)
	{
		outer = ox_shape_numel(axis, w->dims);
		inner = ox_shape_numel(w->rank - axis - 1, w->dims + axis + 1);
	}
	qz_qrange(qt, o->symmetric_weights, o->reduce_range, &qmin, &qmax);
	out->n_ch = n_ch;
	out->scales = malloc(sizeof(float) * (size_t) n_ch);
	zps = malloc(sizeof(int32_t) * (size_t) n_ch);
	if (!out->scales || !zps)
	{
		free(out->scales);
		free(zps);
		out->scales = NULL;
		return ox_fail(z->st, OX_OUT_OF_MEMORY, "could not allocate weight scales");
	}
	for (int64_t c = 0; c < n_ch; c++)
	{
		float		mn = 0,
					mx = 0;

		for (int64_t o1 = 0; o1 < outer; o1++)
			for (int64_t i = 0; i < inner; i++)
			{
				float		v = src[(o1 * n_ch + c) * inner + i];

				if (isfinite(v))
				{
					mn = v < mn ? v : mn;
					mx = v > mx ? v : mx;
				}
			}
		if (axis < 0)
			for (int64_t i = 0; i < n; i++)
				if (isfinite(src[i]))
				{
					mn = src[i] < mn ? src[i] : mn;
					mx = src[i] > mx ? src[i] : mx;
				}
		qz_compute_params(mn, mx, qmin, qmax, o->symmetric_weights, &out->scales[c], &zps[c]);
	}
	out->q = qz_init(z, base, "quantized", qt, w->rank, dims, &qdata);
	if (out->q < 0)
		goto fail;
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		c = axis >= 0 ? (i / inner) % n_ch : 0;
		int32_t		q = quantize_one(src[i], out->scales[c], zps[c], qmin, qmax);
		int64_t		dst = i;

		if (transpose)
			dst = (i % w->dims[1]) * w->dims[0] + i / w->dims[1];
		if (qt == OX_INT8)
			((int8_t *) qdata)[dst] = (int8_t) q;
		else
			((uint8_t *) qdata)[dst] = (uint8_t) q;
	}
	if (axis < 0 && param_rank <= 0)
	{
		out->scale = qz_scalar_f(z, base, "scale", out->scales[0]);
		out->zp = qz_scalar_q(z, base, "zero_point", qt, zps[0]);
	}
	else
	{
		/* rank |param_rank|, channels on dim 1, or on dim 0 when param_rank < 0 */
		int			r = param_rank > 1 ? param_rank : (param_rank < -1 ? -param_rank : 1);

		for (int i = 0; i < r; i++)
			pdims[i] = 1;
		pdims[r > 1 && param_rank > 0 ? 1 : 0] = n_ch;
		out->scale = qz_init(z, base, "scale", OX_FLOAT, r, pdims, &sdata);
		out->zp = qz_init(z, base, "zero_point", qt, r, pdims, &zdata);
		if (out->scale >= 0 && out->zp >= 0)
			for (int64_t c = 0; c < n_ch; c++)
			{
				((float *) sdata)[c] = out->scales[c];
				if (qt == OX_INT8)
					((int8_t *) zdata)[c] = (int8_t) zps[c];
				else
					((uint8_t *) zdata)[c] = (uint8_t) zps[c];
			}
	}
	if (out->scale < 0 || out->zp < 0)
		goto fail;
	free(zps);
	z->sum->weights_quantized++;
	return OX_OK;
fail:
	free(zps);
	free(out->scales);
	out->scales = NULL;
	return z->st->code ? z->st->code : ox_fail(z->st, OX_OUT_OF_MEMORY, "could not quantize a weight");
}

int
qz_quantize_bias(qz *z, const ox_tensor *bias, const char *base, float x_scale,
				 const float *w_scales, int64_t n_ws)
{
	int64_t		n = ox_tensor_numel(bias);
	void	   *d;
	int			id = qz_init(z, base, "quantized", OX_INT32, 1, &n, &d);

	if (id < 0)
		return -1;
	for (int64_t i = 0; i < n; i++)
	{
		double		s = (double) x_scale * w_scales[n_ws == 1 ? 0 : i];
		double		q = s > 0 ? nearbyint(((const float *) bias->data)[i] / s) : 0;

		((int32_t *) d)[i] = (int32_t) fmin(fmax(q, (double) INT32_MIN), (double) INT32_MAX);
	}
	return id;
}

/* ---- analysis --------------------------------------------------------------- */

static bool
excluded(const ox_quant_options *o, const ox_node *n)
{
	return in_list(o->exclude, o->n_exclude, n->name);
}

static bool
is_const(const ox_graph *g, int v)
{
	return v >= 0 && g->values[v].init && !g->values[v].is_input;
}

/* a known float tensor type, or unknown (then trusted) when allow_unknown */
static bool
float_typed(const ox_graph *g, int v, bool allow_unknown)
{
	const ox_type *t = &g->values[v].type;

	if (t->kind == OX_TYPE_UNKNOWN)
		return allow_unknown;
	return t->kind == OX_TYPE_TENSOR && t->elem == OX_FLOAT;
}

static bool
only_first_output_used(const ox_graph *g, const ox_node *n)
{
	for (int o = 1; o < n->n_outputs; o++)
		if (n->outputs[o] >= 0 && (g->values[n->outputs[o]].n_consumers > 0 ||
								   g->values[n->outputs[o]].is_output))
			return false;
	return n->n_outputs >= 1 && n->outputs[0] >= 0;
}

static qz_kind
classify(const qz *z, const ox_node *n)
{
	const ox_graph *g = z->g;
	const ox_quant_options *o = z->o;
	bool		dyn = o->mode == OX_QUANT_DYNAMIC;
	const char *op = n->op_type;

	if (n->domain[0] != '\0' || n->n_implicit > 0 || excluded(o, n) || !op_wanted(o, op) ||
		n->n_inputs < 1 || n->inputs[0] < 0 || !only_first_output_used(g, n))
		return QK_NONE;
	if (strcmp(op, "Conv") == 0)
		return qz_is_float_const(g, n, 1, -1) && !is_const(g, n->inputs[0]) &&
			float_typed(g, n->inputs[0], true) &&
			(n->n_inputs < 3 || n->inputs[2] < 0 || qz_is_float_const(g, n, 2, 1))
			? QK_CONV : QK_NONE;
	if (strcmp(op, "MatMul") == 0)
		return qz_is_float_const(g, n, 1, 2) && !is_const(g, n->inputs[0]) &&
			float_typed(g, n->inputs[0], true) ? QK_MATMUL : QK_NONE;
	if (strcmp(op, "Gemm") == 0)
	{
		bool		c_ok = n->n_inputs < 3 || n->inputs[2] < 0 ||
			qz_is_float_const(g, n, 2, 1) ||
			(dyn && ox_attr_float(n, "beta", 1.0f) == 1.0f);

		return ox_attr_int(n, "transA", 0) == 0 && qz_is_float_const(g, n, 1, 2) &&
			!is_const(g, n->inputs[0]) && float_typed(g, n->inputs[0], true) && c_ok
			? QK_GEMM : QK_NONE;
	}
	if (dyn)
	{
		if (strcmp(op, "Gather") == 0 && n->n_inputs == 2 && is_const(g, n->inputs[0]) &&
			g->values[n->inputs[0]].init->dtype == OX_FLOAT && !is_const(g, n->inputs[1]))
			return QK_GATHER;
		return QK_NONE;
	}
	/* static: activations only, of a known float type */
	if (is_const(g, n->inputs[0]) || !float_typed(g, n->inputs[0], false))
		return QK_NONE;
	if (strcmp(op, "Add") == 0)
		return n->n_inputs == 2 && n->inputs[1] >= 0 && !is_const(g, n->inputs[1]) &&
			float_typed(g, n->inputs[1], false) ? QK_ADD : QK_NONE;
	if (strcmp(op, "AveragePool") == 0 || strcmp(op, "GlobalAveragePool") == 0)
		return QK_POOL;
	/*
	 * MaxPool, Relu and the shape operators keep values: they share the
	 * input's scale.  A QOperator Relu would run on the quantized data,
	 * where 0 is the zero point: it stays float there (unless folded).
	 */
	return QK_DIRECT;
}

static bool
is_compute(qz_kind k)
{
	return k == QK_CONV || k == QK_MATMUL || k == QK_GEMM || k == QK_ADD || k == QK_POOL;
}

/*
 * Producers a Relu can fold into.  In QOperator form only those rewritten
 * to quantized outputs (QLinearConv, QLinearMatMul): the others stay float
 * and their float readers would miss the clipping.
 */
static bool
foldable_producer(const qz *z, qz_kind k)
{
	if (z->o->format == OX_QUANT_QOPERATOR)
		return k == QK_CONV || k == QK_MATMUL;
	return k == QK_CONV || k == QK_MATMUL || k == QK_GEMM || k == QK_ADD;
}

static void
mark_root(qz *z, int v)
{
	if (v >= 0 && z->root[v] < 0)
		z->root[v] = v;
}

static ox_code
qz_analyze(qz *z)
{
	ox_graph   *g = z->g;
	int		   *fold_to;

	OX_TRY(ox_graph_analyze(g, z->st));
	z->n_nodes = g->n_nodes;
	z->n_values = g->n_values;
	z->kind = calloc((size_t) g->n_nodes + 1, sizeof(qz_kind));
	z->root = malloc(sizeof(int) * ((size_t) g->n_values + 1));
	fold_to = malloc(sizeof(int) * ((size_t) g->n_values + 1));
	if (!z->kind || !z->root || !fold_to)
	{
		free(fold_to);
		return ox_fail(z->st, OX_OUT_OF_MEMORY, "could not allocate the quantization plan");
	}
	for (int v = 0; v < g->n_values; v++)
		z->root[v] = fold_to[v] = -1;
	for (int k = 0; k < g->n_nodes; k++)
		z->kind[k] = classify(z, &g->nodes[k]);
	if (z->o->mode == OX_QUANT_DYNAMIC)
	{
		free(fold_to);
		return OX_OK;
	}

	/*
	 * Relu after a quantized operator: with asymmetric activations its
	 * output's range starts at 0, which is the zero point, so quantizing the
	 * operator's output with that range clips exactly like the Relu.
	 */
	if (!z->o->symmetric_activations)
		for (int k = 0; k < g->n_nodes; k++)
		{
			ox_node    *n = &g->nodes[k];
			int			t = n->inputs[0];
			int			p = g->values[t].producer;

			if (z->kind[k] != QK_DIRECT || strcmp(n->op_type, "Relu") != 0)
				continue;
			if (p >= 0 && foldable_producer(z, z->kind[p]) &&
				g->values[t].n_consumers == 1 && !g->values[t].is_output)
			{
				z->kind[k] = QK_RELU_FOLD;
				fold_to[t] = n->outputs[0];
			}
		}

	/* activations of the computing operators get their own parameters */
	for (int k = 0; k < g->n_nodes; k++)
	{
		ox_node    *n = &g->nodes[k];
		int			out;

		if (!is_compute(z->kind[k]))
			continue;
		mark_root(z, n->inputs[0]);
		if (z->kind[k] == QK_ADD)
			mark_root(z, n->inputs[1]);
		out = n->outputs[0];
		if (fold_to[out] >= 0)
			out = fold_to[out];
		if (g->values[out].n_consumers > 0)
			mark_root(z, out);
	}
	/* value-preserving operators pass their input's parameters on */
	for (int k = 0; k < g->n_nodes; k++)
	{
		ox_node    *n = &g->nodes[k];

		if (z->kind[k] != QK_DIRECT)
			continue;
		if (z->o->format == OX_QUANT_QOPERATOR && strcmp(n->op_type, "Relu") == 0)
		{
			z->kind[k] = QK_NONE;
			continue;
		}
		if (z->root[n->inputs[0]] < 0)
			z->kind[k] = QK_NONE;
		else
			z->root[n->outputs[0]] = z->root[n->inputs[0]];
	}
	free(fold_to);
	return OX_OK;
}

static void
qz_free(qz *z)
{
	free(z->kind);
	free(z->root);
	free(z->params);
	free(z->qval);
	free(z->dyn);
	free(z->dyn_rows);
}

static ox_code
check_opset(qz *z)
{
	int64_t		v = ox_model_opset(z->m, "");
	int64_t		need = z->o->mode == OX_QUANT_DYNAMIC ? 11 : (z->o->per_channel ? 13 : 10);

	if (v < need)
		return ox_fail(z->st, OX_UNSUPPORTED,
					   "%s quantization%s needs ONNX opset %lld or later, but the model imports opset %lld",
					   z->o->mode == OX_QUANT_DYNAMIC ? "dynamic" : "static",
					   z->o->mode == OX_QUANT_STATIC && z->o->per_channel ? " with per-channel weights" : "",
					   (long long) need, (long long) v);
	return OX_OK;
}

static ox_code
qz_begin(qz *z, ox_model *m, const ox_quant_options *o, ox_quant_summary *sum, ox_status *st)
{
	memset(z, 0, sizeof(*z));
	z->m = m;
	z->g = m->graph;
	z->o = o;
	z->st = st;
	z->sum = sum;
	memset(sum, 0, sizeof(*sum));
	OX_TRY(ox_quant_check_options(o, st));
	if (!m->graph)
		return ox_fail(st, OX_INVALID_MODEL, "the model has no graph");
	sum->nodes_total = m->graph->n_nodes;
	OX_TRY(check_opset(z));
	return qz_analyze(z);
}

ox_code
ox_quant_calib_targets(ox_model *m, const ox_quant_options *o, const char ***names, int *n,
					   ox_status *st)
{
	qz			z;
	ox_quant_summary sum;
	ox_code		rc;

	*names = NULL;
	*n = 0;
	rc = qz_begin(&z, m, o, &sum, st);
	if (rc == OX_OK && o->mode == OX_QUANT_STATIC)
	{
		int			count = 0;

		for (int v = 0; v < z.n_values; v++)
			count += z.root[v] == v;
		*names = malloc(sizeof(char *) * (size_t) (count + 1));
		if (!*names)
			rc = ox_fail(st, OX_OUT_OF_MEMORY, "could not list calibration targets");
		else
			for (int v = 0; v < z.n_values; v++)
				if (z.root[v] == v)
					(*names)[(*n)++] = z.g->values[v].name;
	}
	qz_free(&z);
	return rc;
}

ox_code
ox_quantize(ox_model *m, const ox_quant_options *o, const char *const *names,
			const ox_quant_range *ranges, int n_ranges, ox_quant_summary *sum, ox_status *st)
{
	qz			z;
	ox_code		rc;
	bool		any = false;

	rc = qz_begin(&z, m, o, sum, st);
	if (rc != OX_OK)
		goto done;
	for (int k = 0; k < z.n_nodes; k++)
		any |= z.kind[k] != QK_NONE;
	if (!any)
	{
		rc = ox_fail(st, OX_INVALID_ARGUMENT,
					 "the model has no operator to quantize (%s quantization handles %s with constant float weights)",
					 o->mode == OX_QUANT_DYNAMIC ? "dynamic" : "static", ox_quant_supported_ops(o->mode));
		goto done;
	}
	z.qval = malloc(sizeof(int) * ((size_t) z.n_values + 1));
	z.dyn = malloc(sizeof(int) * ((size_t) z.n_values + 1));
	z.dyn_rows = malloc(sizeof(int) * ((size_t) z.n_values + 1));
	z.params = calloc((size_t) z.n_values + 1, sizeof(qz_params));
	if (!z.qval || !z.dyn || !z.dyn_rows || !z.params)
	{
		rc = ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate the quantization plan");
		goto done;
	}
	for (int v = 0; v < z.n_values; v++)
		z.qval[v] = z.dyn[v] = z.dyn_rows[v] = -1;

	if (o->mode == OX_QUANT_STATIC)
	{
		int32_t		qmin,
					qmax;

		qz_qrange(o->activation_type, o->symmetric_activations, false, &qmin, &qmax);
		for (int v = 0; v < z.n_values; v++)
		{
			int			r = -1;

			if (z.root[v] != v)
				continue;
			for (int i = 0; i < n_ranges && r < 0; i++)
				if (strcmp(names[i], z.g->values[v].name) == 0)
					r = i;
			if (r < 0)
			{
				rc = ox_fail(st, OX_INVALID_ARGUMENT, "no calibration range for tensor \"%s\"",
							 z.g->values[v].name);
				goto done;
			}
			qz_compute_params(ranges[r].lo, ranges[r].hi, qmin, qmax, o->symmetric_activations,
							  &z.params[v].scale, &z.params[v].zp);
			z.params[v].set = true;
			sum->tensors_quantized++;
		}
		rc = o->format == OX_QUANT_QDQ ? qz_rewrite_qdq(&z) : qz_rewrite_qoperator(&z);
	}
	else
		rc = qz_rewrite_dynamic(&z);
	if (rc == OX_OK)
		rc = ox_graph_analyze(z.g, st);
	format_counts(&z);
done:
	qz_free(&z);
	return rc;
}
