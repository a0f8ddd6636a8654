/*
 * shape_infer.c
 *	  Best-effort static type and shape inference over the IR, for
 *	  inspection (declared and inferred shapes of every value) and for
 *	  passes that want to know shapes.  It never fails a load: an operator
 *	  it does not know, or inputs whose shapes are unknown, leave the
 *	  outputs unknown.  Declared types (value_info, graph outputs) win over
 *	  inferred ones.  Symbolic dimensions flow by name.
 */
#include "model/shape_infer.h"

#include <string.h>

typedef struct dims_buf
{
	int			rank;			/* -1 unknown */
	ox_dim		d[OX_MAX_RANK];
} dims_buf;

static const ox_type *
in_type(const ox_graph *g, const ox_node *n, int i)
{
	if (i >= n->n_inputs || n->inputs[i] < 0)
		return NULL;
	return &g->values[n->inputs[i]].type;
}

static bool
tensor_known(const ox_type *t)
{
	return t && t->kind == OX_TYPE_TENSOR && t->rank >= 0;
}

static void
from_type(dims_buf *b, const ox_type *t)
{
	b->rank = tensor_known(t) ? t->rank : -1;
	for (int i = 0; i < b->rank; i++)
		b->d[i] = t->dims[i];
}

static bool
dim_equal(ox_dim a, ox_dim b)
{
	if (a.value >= 0 || b.value >= 0)
		return a.value == b.value;
	return a.param && b.param && strcmp(a.param, b.param) == 0;
}

static ox_dim
dim_known(int64_t v)
{
	ox_dim		d = {v, NULL};

	return d;
}

static ox_dim
dim_unknown(void)
{
	ox_dim		d = {-1, NULL};

	return d;
}

/*
 * Checked arithmetic on dimensions and attribute values (fuzzed models give
 * any int64): false on overflow, and the caller leaves the dimension
 * unknown (inference never fails a load).
 */
static bool
dim_mul(int64_t a, int64_t b, int64_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}

static bool
dim_add(int64_t a, int64_t b, int64_t *out)
{
	return !__builtin_add_overflow(a, b, out);
}

/* set output o's tensor type unless something better is declared */
static void
set_out(ox_model *m, ox_graph *g, const ox_node *n, int o, ox_dtype elem, const dims_buf *b)
{
	ox_value_def *v;

	if (o >= n->n_outputs || n->outputs[o] < 0)
		return;
	v = &g->values[n->outputs[o]];
	if (v->type.kind != OX_TYPE_UNKNOWN && (v->type.rank >= 0 || !b || b->rank < 0))
		return;
	/* a type without an element type is not a type: leave it unknown */
	if (elem == OX_UNDEFINED && v->type.elem == OX_UNDEFINED)
		return;
	v->type.kind = OX_TYPE_TENSOR;
	if (v->type.elem == OX_UNDEFINED)
		v->type.elem = elem;
	v->type.rank = b ? b->rank : -1;
	v->type.dims = NULL;
	if (b && b->rank > 0)
	{
		v->type.dims = ox_arena_alloc(&m->arena, sizeof(ox_dim) * b->rank);
		if (!v->type.dims)
		{
			v->type.rank = -1;
			return;
		}
		memcpy(v->type.dims, b->d, sizeof(ox_dim) * b->rank);
	}
}

static bool
broadcast(dims_buf *out, const dims_buf *a, const dims_buf *b)
{
	int			r;

	if (a->rank < 0 || b->rank < 0)
		return false;
	r = a->rank > b->rank ? a->rank : b->rank;
	out->rank = r;
	for (int i = 0; i < r; i++)
	{
		int			ia = i - (r - a->rank),
					ib = i - (r - b->rank);
		ox_dim		da = ia >= 0 ? a->d[ia] : dim_known(1),
					db = ib >= 0 ? b->d[ib] : dim_known(1);

		if (da.value == 1)
			out->d[i] = db;
		else if (db.value == 1)
			out->d[i] = da;
		else if (dim_equal(da, db))
			out->d[i] = da;
		else if (da.value >= 0 && db.value >= 0)
			return false;		/* incompatible: leave unknown, the kernel reports it */
		else
			out->d[i] = da.value >= 0 ? da : (db.value >= 0 ? db : dim_unknown());
	}
	return true;
}

/* the tensor of a Constant node's value attribute, or NULL */
static const ox_tensor *
constant_node_value(const ox_node *n)
{
	const ox_attr *a = n && strcmp(n->op_type, "Constant") == 0 && n->domain[0] == '\0'
		? ox_node_attr(n, "value") : NULL;

	return a && a->type == OX_ATTR_TENSOR ? a->t : NULL;
}

/*
 * constant int64 list behind input i (an initializer, or a Constant node's
 * value: shapes of Reshape in exported models), or from attribute name
 */
static int
const_ints(const ox_graph *g, const ox_node *n, int input, const char *attr, int64_t *out, int max)
{
	if (input >= 0 && input < n->n_inputs && n->inputs[input] >= 0)
	{
		const ox_value_def *d = &g->values[n->inputs[input]];
		const ox_tensor *t = d->init ? d->init
			: d->producer >= 0 && d->producer < g->n_nodes ? constant_node_value(&g->nodes[d->producer]) : NULL;
		int64_t		cnt;

		if (!t || (t->dtype != OX_INT64 && t->dtype != OX_INT32))
			return -1;
		cnt = ox_tensor_numel(t);
		if (cnt < 0 || cnt > max)
			return -1;
		for (int64_t i = 0; i < cnt; i++)
			out[i] = ox_tensor_get_int64(t, i);
		return (int) cnt;
	}
	if (attr)
	{
		const int64_t *v;
		int			cnt = ox_attr_ints(n, attr, &v);

		if (cnt > max)
			return -1;
		for (int i = 0; i < cnt; i++)
			out[i] = v[i];
		return ox_node_attr(n, attr) ? cnt : -2;
	}
	return -2;
}

/*
 * the length of the 1-D shape input i (Reshape's, Expand's, ConstantOfShape's)
 * when its values are computed at run time but its length is known: the rank
 * of the output; -1 otherwise
 */
static int
shape_input_length(const ox_graph *g, const ox_node *n, int i)
{
	dims_buf	b;

	from_type(&b, in_type(g, n, i));
	return b.rank == 1 && b.d[0].value >= 0 && b.d[0].value <= OX_MAX_RANK ? (int) b.d[0].value : -1;
}

static bool
is(const ox_node *n, const char *op)
{
	return strcmp(n->op_type, op) == 0;
}

static bool
in_list(const char *op, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(op, *list) == 0)
			return true;
	return false;
}

static const char *const same_shape_ops[] = {
	"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Abs", "Neg", "Sqrt", "Erf", "Softmax", "LogSoftmax",
	"LeakyRelu", "Elu", "Selu", "Celu", "Gelu", "HardSigmoid", "HardSwish", "Clip", "Dropout",
	"Identity", "Softplus", "Softsign", "Floor", "Ceil", "Round", "Reciprocal", "Sin", "Cos", "Tan",
	"BatchNormalization", "LayerNormalization", "InstanceNormalization", "GroupNormalization", "LRN",
	"Sign", "Mish", "ThresholdedRelu", "Shrink", "Hardmax", "CumSum", "LpNormalization",
	"MeanVarianceNormalization", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
	"Scaler", "Normalizer", "Binarizer", "Imputer", "DequantizeLinear", "QuantizeLinear", NULL
};
static const char *const broadcast_ops[] = {
	"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "PRelu", "Mod", "BitShift",
	"BitwiseAnd", "BitwiseOr", "BitwiseXor", NULL
};
static const char *const compare_ops[] = {
	"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", NULL
};

static void
infer_node(ox_model *m, ox_graph *g, const ox_node *n)
{
	const ox_type *t0 = in_type(g, n, 0);
	dims_buf	a,
				b,
				out;
	ox_dtype	e0 = t0 && t0->kind == OX_TYPE_TENSOR ? t0->elem : OX_UNDEFINED;

	from_type(&a, t0);
	out.rank = -1;

	if (constant_node_value(n))
	{
		const ox_tensor *t = constant_node_value(n);

		out.rank = t->rank;
		for (int i = 0; i < t->rank; i++)
			out.d[i] = dim_known(t->dims[i]);
		set_out(m, g, n, 0, t->dtype, &out);
		return;
	}
	if (n->domain[0] == '\0' || strcmp(n->domain, "ai.onnx.ml") == 0)
	{
		if (in_list(n->op_type, same_shape_ops))
		{
			ox_dtype	e = e0;

			if (is(n, "QuantizeLinear"))
			{
				const ox_type *zt = in_type(g, n, 2);

				e = zt && zt->kind == OX_TYPE_TENSOR ? zt->elem : OX_UINT8;
			}
			else if (is(n, "DequantizeLinear"))
				e = OX_FLOAT;
			else if (is(n, "Scaler") || is(n, "Normalizer"))
				e = OX_FLOAT;
			set_out(m, g, n, 0, e, &a);
			return;
		}
		if (in_list(n->op_type, broadcast_ops) || in_list(n->op_type, compare_ops) || is(n, "Where"))
		{
			int			first = is(n, "Where") ? 1 : 0;
			dims_buf	acc;
			ox_dtype	e;

			from_type(&acc, in_type(g, n, first));
			e = in_type(g, n, first) ? in_type(g, n, first)->elem : OX_UNDEFINED;
			for (int i = 0; i < n->n_inputs; i++)
			{
				if (i == first)
					continue;
				from_type(&b, in_type(g, n, i));
				if (!broadcast(&out, &acc, &b))
				{
					acc.rank = -1;
					break;
				}
				acc = out;
			}
			set_out(m, g, n, 0, in_list(n->op_type, compare_ops) ? OX_BOOL : e, &acc);
			return;
		}
		if (is(n, "Cast"))
		{
			set_out(m, g, n, 0, (ox_dtype) ox_attr_int(n, "to", OX_UNDEFINED), &a);
			return;
		}
		if (is(n, "MatMul"))
		{
			from_type(&b, in_type(g, n, 1));
			if (a.rank >= 2 && b.rank >= 2)
			{
				dims_buf	ba = a,
							bb = b;

				ba.rank -= 2;
				bb.rank -= 2;
				if (broadcast(&out, &ba, &bb) && out.rank + 2 <= OX_MAX_RANK)
				{
					out.d[out.rank] = a.d[a.rank - 2];
					out.d[out.rank + 1] = b.d[b.rank - 1];
					out.rank += 2;
				}
				else
					out.rank = -1;
			}
			else if (a.rank == 1 && b.rank >= 2)
			{
				out.rank = b.rank - 1;
				for (int i = 0; i < b.rank - 2; i++)
					out.d[i] = b.d[i];
				out.d[out.rank - 1] = b.d[b.rank - 1];
			}
			else if (a.rank >= 2 && b.rank == 1)
			{
				out.rank = a.rank - 1;
				for (int i = 0; i < a.rank - 1; i++)
					out.d[i] = a.d[i];
			}
			set_out(m, g, n, 0, e0, &out);
			return;
		}
		if (is(n, "Gemm"))
		{
			from_type(&b, in_type(g, n, 1));
			if (a.rank == 2 && b.rank == 2)
			{
				out.rank = 2;
				out.d[0] = ox_attr_int(n, "transA", 0) ? a.d[1] : a.d[0];
				out.d[1] = ox_attr_int(n, "transB", 0) ? b.d[0] : b.d[1];
			}
			set_out(m, g, n, 0, e0, &out);
			return;
		}
		if (is(n, "Conv") || is(n, "MaxPool") || is(n, "AveragePool") || is(n, "LpPool"))
		{
			int			sp = a.rank - 2;
			int64_t		kernel[OX_MAX_RANK],
						strides[OX_MAX_RANK],
						pads[2 * OX_MAX_RANK],
						dil[OX_MAX_RANK];
			const char *auto_pad = ox_attr_string(n, "auto_pad", "NOTSET");
			bool		ceil_mode = ox_attr_int(n, "ceil_mode", 0) != 0;

			if (sp < 1)
			{
				set_out(m, g, n, 0, e0, NULL);
				return;
			}
			from_type(&b, in_type(g, n, 1));
			if (const_ints(g, n, -1, "kernel_shape", kernel, OX_MAX_RANK) != sp)
			{
				if (is(n, "Conv") && b.rank == a.rank)
					for (int i = 0; i < sp; i++)
						kernel[i] = b.d[2 + i].value;
				else
					sp = -1;
			}
			if (sp > 0)
			{
				if (const_ints(g, n, -1, "strides", strides, OX_MAX_RANK) != sp)
					for (int i = 0; i < sp; i++)
						strides[i] = 1;
				if (const_ints(g, n, -1, "dilations", dil, OX_MAX_RANK) != sp)
					for (int i = 0; i < sp; i++)
						dil[i] = 1;
				if (const_ints(g, n, -1, "pads", pads, 2 * OX_MAX_RANK) != 2 * sp)
					for (int i = 0; i < 2 * sp; i++)
						pads[i] = 0;
				out.rank = a.rank;
				out.d[0] = a.d[0];
				out.d[1] = is(n, "Conv") ? (b.rank >= 1 ? b.d[0] : dim_unknown()) : a.d[1];
				for (int i = 0; i < sp; i++)
				{
					int64_t		in = a.d[2 + i].value;
					int64_t		k = kernel[i];
					int64_t		ek = 0,
								pad = 0,
								span = 0,
								v;

					if (in < 0 || k <= 0 || strides[i] <= 0)
						out.d[2 + i] = dim_unknown();
					else if (strcmp(auto_pad, "SAME_UPPER") == 0 || strcmp(auto_pad, "SAME_LOWER") == 0)
						out.d[2 + i] = dim_add(in, strides[i] - 1, &v) ? dim_known(v / strides[i]) : dim_unknown();
					else
					{
						bool		ok = dim_mul(k - 1, dil[i], &ek) && dim_add(ek, 1, &ek);

						if (strcmp(auto_pad, "VALID") != 0)
							ok = ok && dim_add(pads[i], pads[i + sp], &pad);
						ok = ok && dim_add(in, pad, &span) && !__builtin_sub_overflow(span, ek, &span) &&
							span >= 0 && (!ceil_mode || dim_add(span, strides[i] - 1, &span)) &&
							dim_add(span / strides[i], 1, &v);
						out.d[2 + i] = ok ? dim_known(v) : dim_unknown();
					}
				}
			}
			set_out(m, g, n, 0, e0, &out);
			return;
		}
		if (is(n, "GlobalAveragePool") || is(n, "GlobalMaxPool") || is(n, "GlobalLpPool"))
		{
			out = a;
			for (int i = 2; i < out.rank; i++)
				out.d[i] = dim_known(1);
			set_out(m, g, n, 0, e0, &out);
			return;
		}
		if (is(n, "Flatten"))
		{
			int64_t		axis = ox_attr_int(n, "axis", 1);

			if (a.rank >= 0)
			{
				int64_t		p[2] = {1, 1};

				if (axis < 0)
					axis += a.rank;
				out.rank = 2;
				for (int i = 0; i < a.rank; i++)
				{
					int			side = i < axis ? 0 : 1;

					if (p[side] < 0 || a.d[i].value < 0 || !dim_mul(p[side], a.d[i].value, &p[side]))
						p[side] = -1;
				}
				out.d[0] = p[0] >= 0 ? dim_known(p[0]) : (axis == 1 ? a.d[0] : dim_unknown());
				out.d[1] = p[1] >= 0 ? dim_known(p[1]) : dim_unknown();
			}
			set_out(m, g, n, 0, e0, &out);
			return;
		}
		if (is(n, "Reshape"))
		{
			int64_t		shape[OX_MAX_RANK];
			int			r = const_ints(g, n, 1, NULL, shape, OX_MAX_RANK);

			if (r >= 0)
			{
				int			infer_at = -1;
				int64_t		known = 1;

				out.rank = r;
				for (int i = 0; i < r; i++)
				{
					if (shape[i] == 0 && !ox_attr_int(n, "allowzero", 0) && i < a.rank)
						out.d[i] = a.d[i];
					else if (shape[i] == -1)
					{
						infer_at = i;
						out.d[i] = dim_unknown();
						continue;
					}
					else
						out.d[i] = dim_known(shape[i]);
					if (known < 0 || out.d[i].value < 0 || !dim_mul(known, out.d[i].value, &known))
						known = -1;
				}
				if (infer_at >= 0 && known > 0 && a.rank >= 0)
				{
					int64_t		total = 1;

					for (int i = 0; i < a.rank && total >= 0; i++)
						if (a.d[i].value < 0 || !dim_mul(total, a.d[i].value, &total))
							total = -1;
					if (total >= 0 && total % known == 0)
						out.d[infer_at] = dim_known(total / known);
				}
			}
			else if ((out.rank = shape_input_length(g, n, 1)) >= 0)
				for (int i = 0; i < out.rank; i++)
					out.d[i] = dim_unknown();
			set_out(m, g, n, 0, e0, &out);
			return;
		}
		if (is(n, "Pad") && a.rank >= 0)
		{
			/* the pads of every axis (Pad-2's attribute, Pad-11's input); not with Pad-18's axes */
			int64_t		pads[2 * OX_MAX_RANK];
			int			np = n->opset >= 11 ? const_ints(g, n, 1, NULL, pads, 2 * OX_MAX_RANK)
				: n->opset >= 2 ? const_ints(g, n, -1, "pads", pads, 2 * OX_MAX_RANK) : -1;
			bool		by_axis = n->n_inputs > 3 && n->inputs[3] >= 0;

			out.rank = a.rank;
			for (int i = 0; i < a.rank; i++)
			{
				int64_t		v;

				if (by_axis || np != 2 * a.rank)
					out.d[i] = dim_unknown();
				else if (pads[i] == 0 && pads[a.rank + i] == 0)
					out.d[i] = a.d[i];
				else
					out.d[i] = a.d[i].value >= 0 && dim_add(a.d[i].value, pads[i], &v) &&
						dim_add(v, pads[a.rank + i], &v) && v >= 0 ? dim_known(v) : dim_unknown();
			}
			set_out(m, g, n, 0, e0, &out);
			return;
		}
		if (is(n, "Transpose") && a.rank >= 0)
		{
			int64_t		perm[OX_MAX_RANK];
			int			r = const_ints(g, n, -1, "perm", perm, OX_MAX_RANK);

			out.rank = a.rank;
			for (int i = 0; i < a.rank; i++)
			{
				int64_t		src = r == a.rank ? perm[i] : a.rank - 1 - i;

				out.d[i] = src >= 0 && src < a.rank ? a.d[src] : dim_unknown();
			}
			set_out(m, g, n, 0, e0, &out);
			return;
		}
		if (is(n, "Concat") && a.rank >= 0)
		{
			int64_t		axis = ox_attr_int(n, "axis", 0);
			int64_t		sum = 0;

			if (axis < 0)
				axis += a.rank;
			out = a;
			for (int i = 0; i < n->n_inputs && sum >= 0; i++)
			{
				from_type(&b, in_type(g, n, i));
				if (b.rank != a.rank || axis < 0 || axis >= a.rank || b.d[axis].value < 0 ||
					!dim_add(sum, b.d[axis].value, &sum))
					sum = -1;
			}
			if (axis >= 0 && axis < a.rank)
				out.d[axis] = sum >= 0 ? dim_known(sum) : dim_unknown();
			set_out(m, g, n, 0, e0, &out);
			return;
		}
		if ((is(n, "Unsqueeze") || is(n, "Squeeze")) && a.rank >= 0)
		{
			int64_t		axes[OX_MAX_RANK];
			int			na = const_ints(g, n, n->opset >= 13 ? 1 : -1, n->opset >= 13 ? NULL : "axes",
										axes, OX_MAX_RANK);
			bool		mark[OX_MAX_RANK] = {false};

			if (is(n, "Unsqueeze") && na > 0 && a.rank + na <= OX_MAX_RANK)
			{
				out.rank = a.rank + na;
				for (int i = 0; i < na; i++)
				{
					int64_t		ax = axes[i] < 0 ? axes[i] + out.rank : axes[i];

					if (ax >= 0 && ax < out.rank)
						mark[ax] = true;
				}
				for (int i = 0, k = 0; i < out.rank; i++)
					out.d[i] = mark[i] ? dim_known(1) : (k < a.rank ? a.d[k++] : dim_unknown());
			}
			else if (is(n, "Squeeze") && na >= 0)
			{
				out.rank = 0;
				for (int i = 0; i < na; i++)
				{
					int64_t		ax = axes[i] < 0 ? axes[i] + a.rank : axes[i];

					if (ax >= 0 && ax < a.rank)
						mark[ax] = true;
				}
				for (int i = 0; i < a.rank; i++)
					if (!(na == 0 ? a.d[i].value == 1 : mark[i]))
						out.d[out.rank++] = a.d[i];
			}
			set_out(m, g, n, 0, e0, &out);
			return;
		}
		if (is(n, "Expand") && a.rank >= 0)
		{
			/* broadcast of the input with the shape input's values: a dim other than 1 stays */
			int64_t		shape[OX_MAX_RANK];
			int			r = const_ints(g, n, 1, NULL, shape, OX_MAX_RANK);

			if (r < 0 && (r = shape_input_length(g, n, 1)) >= 0)
				for (int i = 0; i < r; i++)
					shape[i] = -1;
			if (r >= 0)
			{
				out.rank = r > a.rank ? r : a.rank;
				for (int i = 0; i < out.rank; i++)
				{
					int			ia = i - (out.rank - a.rank),
								is = i - (out.rank - r);
					ox_dim		da = ia >= 0 ? a.d[ia] : dim_known(1);
					int64_t		vs = is >= 0 ? shape[is] : 1;

					if (da.value >= 0 && da.value != 1)
						out.d[i] = da;	/* the shape's value is 1 or the same */
					else if (da.value == 1 && vs >= 0)
						out.d[i] = dim_known(vs);
					else
						out.d[i] = dim_unknown();
				}
			}
			set_out(m, g, n, 0, e0, &out);
			return;
		}
		if (is(n, "Range"))
		{
			out.rank = 1;
			out.d[0] = dim_unknown();
			set_out(m, g, n, 0, e0, &out);
			return;
		}
		if (is(n, "ConstantOfShape"))
		{
			/* the shape input's values are the dims; its length alone is the rank */
			const ox_attr *v = ox_node_attr(n, "value");
			int64_t		shape[OX_MAX_RANK];
			int			r = const_ints(g, n, 0, NULL, shape, OX_MAX_RANK);

			if (r >= 0)
			{
				out.rank = r;
				for (int i = 0; i < r; i++)
					out.d[i] = shape[i] >= 0 ? dim_known(shape[i]) : dim_unknown();
			}
			else if ((out.rank = shape_input_length(g, n, 0)) >= 0)
				for (int i = 0; i < out.rank; i++)
					out.d[i] = dim_unknown();
			set_out(m, g, n, 0, v && v->type == OX_ATTR_TENSOR && v->t ? v->t->dtype : OX_FLOAT, &out);
			return;
		}
		if (is(n, "Slice") && n->opset >= 10 && a.rank >= 0)
		{
			/* the rank stays; an axis that axes does not name keeps its size */
			int64_t		axes[OX_MAX_RANK];
			int			na = n->n_inputs > 3 ? const_ints(g, n, 3, NULL, axes, OX_MAX_RANK) : 0;

			out = a;
			for (int i = 0; i < a.rank; i++)
			{
				bool		sliced = na < 0 || n->n_inputs <= 3 || n->inputs[3] < 0;

				for (int j = 0; j < na && !sliced; j++)
					sliced = axes[j] == i || axes[j] + a.rank == i;
				if (sliced)
					out.d[i] = dim_unknown();
			}
			set_out(m, g, n, 0, e0, &out);
			return;
		}
		if (is(n, "Shape") && a.rank >= 0)
		{
			/* opset 15's start and end pick axes [start, end), clamped, negatives from the end */
			int64_t		start = ox_attr_int(n, "start", 0),
						end = ox_attr_int(n, "end", a.rank);

			start = start < 0 ? start + a.rank : start;
			end = end < 0 ? end + a.rank : end;
			start = start < 0 ? 0 : start > a.rank ? a.rank : start;
			end = end < 0 ? 0 : end > a.rank ? a.rank : end;
			out.rank = 1;
			out.d[0] = dim_known(end > start ? end - start : 0);
			set_out(m, g, n, 0, OX_INT64, &out);
			return;
		}
		if (is(n, "Gather") && a.rank >= 1)
		{
			int64_t		axis = ox_attr_int(n, "axis", 0);

			from_type(&b, in_type(g, n, 1));
			if (axis < 0)
				axis += a.rank;
			if (b.rank >= 0 && axis >= 0 && axis < a.rank && a.rank - 1 + b.rank <= OX_MAX_RANK)
			{
				out.rank = 0;
				for (int i = 0; i < axis; i++)
					out.d[out.rank++] = a.d[i];
				for (int i = 0; i < b.rank; i++)
					out.d[out.rank++] = b.d[i];
				for (int i = (int) axis + 1; i < a.rank; i++)
					out.d[out.rank++] = a.d[i];
			}
			set_out(m, g, n, 0, e0, &out);
			return;
		}
		if ((is(n, "ArgMax") || is(n, "ArgMin") || strncmp(n->op_type, "Reduce", 6) == 0) && a.rank >= 0)
		{
			int64_t		axes[OX_MAX_RANK];
			bool		keep = ox_attr_int(n, "keepdims", 1) != 0;
			bool		arg = n->op_type[0] == 'A';
			bool		axes_input = !arg && (n->opset >= 18 || (is(n, "ReduceSum") && n->opset >= 13));
			int			na;
			bool		mark[OX_MAX_RANK] = {false};

			if (arg)
			{
				axes[0] = ox_attr_int(n, "axis", 0);
				na = 1;
			}
			else
				na = const_ints(g, n, axes_input ? 1 : -1, axes_input ? NULL : "axes", axes, OX_MAX_RANK);
			if (na == -2 || (axes_input && n->n_inputs < 2))
				na = 0;			/* no axes: reduce all */
			if (na >= 0)
			{
				for (int i = 0; i < na; i++)
				{
					int64_t		ax = axes[i] < 0 ? axes[i] + a.rank : axes[i];

					if (ax >= 0 && ax < a.rank)
						mark[ax] = true;
				}
				if (na == 0 && !ox_attr_int(n, "noop_with_empty_axes", 0))
					for (int i = 0; i < a.rank; i++)
						mark[i] = true;
				out.rank = 0;
				for (int i = 0; i < a.rank; i++)
				{
					if (!mark[i])
						out.d[out.rank++] = a.d[i];
					else if (keep)
						out.d[out.rank++] = dim_known(1);
				}
			}
			set_out(m, g, n, 0, arg ? OX_INT64 : e0, &out);
			return;
		}
		if ((is(n, "TreeEnsembleClassifier") || is(n, "LinearClassifier") || is(n, "SVMClassifier")) &&
			a.rank >= 1)
		{
			const char *const *labels;
			const int64_t *ilabels;
			int			nc = ox_attr_strings(n, "classlabels_strings", &labels);
			int			ni = ox_attr_ints(n, "classlabels_ints", &ilabels);

			if (!nc && !ni)
				ni = ox_attr_ints(n, "classlabels_int64s", &ilabels);
			out.rank = 1;
			out.d[0] = a.rank == 1 ? dim_known(1) : a.d[0];
			set_out(m, g, n, 0, nc ? OX_STRING : OX_INT64, &out);
			out.rank = 2;
			out.d[1] = dim_known(nc ? nc : ni);
			set_out(m, g, n, 1, OX_FLOAT, &out);
			return;
		}
		if ((is(n, "TreeEnsembleRegressor") || is(n, "LinearRegressor") || is(n, "SVMRegressor")) &&
			a.rank >= 1)
		{
			out.rank = 2;
			out.d[0] = a.rank == 1 ? dim_known(1) : a.d[0];
			out.d[1] = dim_known(ox_attr_int(n, "n_targets", ox_attr_int(n, "targets", 1)));
			set_out(m, g, n, 0, OX_FLOAT, &out);
			return;
		}
	}
}

void
ox_infer_shapes(ox_model *m)
{
	for (int gi = 0; gi < m->n_graphs; gi++)
	{
		ox_graph   *g = m->graphs[gi];

		for (int k = 0; k < g->n_nodes; k++)
			if (!g->nodes[k].dead)
				infer_node(m, g, &g->nodes[k]);
	}
}
