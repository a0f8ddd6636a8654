/*
 * ops_elementwise.c
 *	  Host side of the CUDA elementwise family: placement rules, output
 *	  shapes (numpy broadcasting) and launches of elementwise.cu.
 */
#include "kernels/cuda/cuda_internal.h"

#include <math.h>
#include <string.h>

/* ---- broadcasting ----------------------------------------------------- */

/* out shape of a op b, and the coalesced geometry; false when not broadcastable */
static ox_code
bcast_geometry(const ox_dval *a, const ox_dval *b, int *rank, int64_t *dims, oxc_bcast *g, ox_status *st)
{
	int			r = a->rank > b->rank ? a->rank : b->rank;
	int64_t		sa[OX_MAX_RANK],
				sb[OX_MAX_RANK];
	int64_t		acc_a = 1,
				acc_b = 1;

	for (int d = r - 1; d >= 0; d--)
	{
		int			ia = d - (r - a->rank),
					ib = d - (r - b->rank);
		int64_t		da = ia >= 0 ? a->dims[ia] : 1;
		int64_t		db = ib >= 0 ? b->dims[ib] : 1;

		if (da != db && da != 1 && db != 1)
			return ox_fail(st, OX_INVALID_ARGUMENT, "shapes cannot be broadcast (dimension %d: %lld vs %lld)",
						   d, (long long) da, (long long) db);
		dims[d] = da == 1 ? db : da;
		sa[d] = da == 1 ? 0 : acc_a;
		sb[d] = db == 1 ? 0 : acc_b;
		acc_a *= da;
		acc_b *= db;
	}
	*rank = r;
	/* coalesce: drop 1-dims, merge neighbours that stay contiguous for both */
	g->rank = 0;
	g->n = ox_shape_numel(r, dims);
	for (int d = 0; d < r; d++)
	{
		int			k = g->rank;

		if (dims[d] == 1)
			continue;
		if (k > 0 && g->sa[k - 1] == sa[d] * dims[d] && g->sb[k - 1] == sb[d] * dims[d])
		{
			g->dims[k - 1] *= dims[d];
			g->sa[k - 1] = sa[d];
			g->sb[k - 1] = sb[d];
			continue;
		}
		if (k == OXC_MAX_DIMS)
			return ox_fail(st, OX_UNSUPPORTED, "broadcast of more than %d distinct dimensions on CUDA",
						   OXC_MAX_DIMS);
		g->dims[k] = dims[d];
		g->sa[k] = sa[d];
		g->sb[k] = sb[d];
		g->rank++;
	}
	return OX_OK;
}

static oxc_binary
binary_of(const char *op)
{
	static const char *const names[] = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "PRelu"};

	for (int i = 0; i < 8; i++)
		if (strcmp(op, names[i]) == 0)
			return (oxc_binary) i;
	return OXC_B_ADD;
}

static ox_code
run_binary(ox_cuda_op_ctx *oc)
{
	ox_dval    *a,
			   *b,
			   *y;
	int			rank = 0;
	int64_t		dims[OX_MAX_RANK];
	oxc_bcast	g;

	if (oc->n_in != 2)
		return ox_fail(oc->st, OX_UNSUPPORTED, "%s with %d inputs on CUDA", oc->node->op_type, oc->n_in);
	OX_TRY(oxc_in(oc, 0, OX_FLOAT, &a));
	OX_TRY(oxc_in(oc, 1, OX_FLOAT, &b));
	OX_TRY(bcast_geometry(a, b, &rank, dims, &g, oc->st));
	if (strcmp(oc->node->op_type, "PRelu") == 0 && !ox_shape_equal(rank, dims, a->rank, a->dims))
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "PRelu slope does not broadcast to the input");
	OX_TRY(oxc_out(oc, 0, OX_FLOAT, rank, dims, &y));
	return oxc_cuda_check(oxc_launch_binary(oc->cx->stream, binary_of(oc->node->op_type), &g, a->d, b->d, y->d),
						  "binary kernel", oc->st);
}

static bool
sup_binary(const ox_graph *g, const ox_node *n)
{
	return n->n_inputs == 2 && n->n_outputs == 1 && oxc_all_float(g, n, 2);
}

/* ---- unary ------------------------------------------------------------ */

typedef struct unary_params
{
	oxc_unary	op;
	float		p0,
				p1;
} unary_params;

static bool
scalar_const(const ox_graph *g, const ox_node *n, int i, float def, float *out)
{
	const ox_tensor *t;

	if (i >= n->n_inputs || n->inputs[i] < 0)
	{
		*out = def;
		return true;
	}
	t = oxc_const(g, n, i);
	if (!t || t->dtype != OX_FLOAT || ox_tensor_numel(t) != 1 || !t->data)
		return false;
	*out = ((const float *) t->data)[0];
	return true;
}

/* the unary op and parameters of node n; false when not supported */
static bool
unary_of(const ox_graph *g, const ox_node *n, unary_params *u)
{
	static const struct
	{
		const char *name;
		oxc_unary	op;
	}			simple[] = {
		{"Relu", OXC_U_RELU}, {"Sigmoid", OXC_U_SIGMOID}, {"Tanh", OXC_U_TANH}, {"Exp", OXC_U_EXP},
		{"Log", OXC_U_LOG}, {"Sqrt", OXC_U_SQRT}, {"Neg", OXC_U_NEG}, {"Abs", OXC_U_ABS},
		{"Erf", OXC_U_ERF}, {"HardSwish", OXC_U_HARD_SWISH}, {"Softplus", OXC_U_SOFTPLUS},
		{"Reciprocal", OXC_U_RECIPROCAL}, {"Floor", OXC_U_FLOOR}, {"Ceil", OXC_U_CEIL},
		{"Sin", OXC_U_SIN}, {"Cos", OXC_U_COS}, {"Identity", OXC_U_IDENTITY},
		{"Dropout", OXC_U_IDENTITY},
	};
	const char *op = n->op_type;

	u->p0 = u->p1 = 0.0f;
	if (strcmp(n->domain, "com.microsoft") == 0)
	{
		if (strcmp(op, "Gelu") == 0)
			u->op = OXC_U_GELU;
		else if (strcmp(op, "FastGelu") == 0)
			u->op = OXC_U_GELU_TANH;
		else
			return false;
		return true;
	}
	for (size_t i = 0; i < sizeof(simple) / sizeof(simple[0]); i++)
		if (strcmp(op, simple[i].name) == 0)
		{
			u->op = simple[i].op;
			return true;
		}
	if (strcmp(op, "LeakyRelu") == 0)
	{
		u->op = OXC_U_LEAKY_RELU;
		u->p0 = ox_attr_float(n, "alpha", 0.01f);
		return true;
	}
	if (strcmp(op, "Elu") == 0)
	{
		u->op = OXC_U_ELU;
		u->p0 = ox_attr_float(n, "alpha", 1.0f);
		return true;
	}
	if (strcmp(op, "Selu") == 0)
	{
		u->op = OXC_U_SELU;
		u->p0 = ox_attr_float(n, "alpha", 1.67326319217681884765625f);
		u->p1 = ox_attr_float(n, "gamma", 1.05070102214813232421875f);
		return true;
	}
	if (strcmp(op, "HardSigmoid") == 0)
	{
		u->op = OXC_U_HARD_SIGMOID;
		u->p0 = ox_attr_float(n, "alpha", 0.2f);
		u->p1 = ox_attr_float(n, "beta", 0.5f);
		return true;
	}
	if (strcmp(op, "Gelu") == 0)
	{
		const char *approx = ox_attr_string(n, "approximate", "none");

		u->op = strcmp(approx, "tanh") == 0 ? OXC_U_GELU_TANH : OXC_U_GELU;
		return strcmp(approx, "tanh") == 0 || strcmp(approx, "none") == 0;
	}
	if (strcmp(op, "Clip") == 0)
	{
		u->op = OXC_U_CLIP;
		if (n->opset < 11)
		{
			u->p0 = ox_attr_float(n, "min", -INFINITY);
			u->p1 = ox_attr_float(n, "max", INFINITY);
			return true;
		}
		return scalar_const(g, n, 1, -INFINITY, &u->p0) && scalar_const(g, n, 2, INFINITY, &u->p1);
	}
	return false;
}

static bool
sup_unary(const ox_graph *g, const ox_node *n)
{
	unary_params u;

	if (n->n_inputs < 1 || n->n_outputs < 1 || !unary_of(g, n, &u))
		return false;
	if (strcmp(n->op_type, "Dropout") == 0)
	{
		/* inference: no mask output, training_mode absent */
		if (n->n_outputs > 1 && n->outputs[1] >= 0)
			return false;
		if (n->n_inputs > 2 && n->inputs[2] >= 0)
			return false;
		return oxc_input_type(g, n, 0) == OX_FLOAT && n->n_outputs >= 1 && n->outputs[0] >= 0 &&
			g->values[n->outputs[0]].type.elem == OX_FLOAT;
	}
	if (strcmp(n->domain, "com.microsoft") == 0 && strcmp(n->op_type, "FastGelu") == 0)
		return n->n_outputs == 1 && n->n_inputs <= 2 && oxc_all_float(g, n, 2);
	if (strcmp(n->op_type, "Clip") == 0)
		return n->n_outputs == 1 && oxc_all_float(g, n, 1);
	return n->n_inputs == 1 && n->n_outputs == 1 && oxc_all_float(g, n, 1);
}

static ox_code
run_unary(ox_cuda_op_ctx *oc)
{
	unary_params u;
	ox_dval    *x,
			   *y;

	bool		clip_inputs = strcmp(oc->node->op_type, "Clip") == 0 && oc->node->opset >= 11;

	/* (unary_of reads no graph except for Clip-11, handled here) */
	if (!clip_inputs && !unary_of(NULL, oc->node, &u))
		return ox_fail(oc->st, OX_UNSUPPORTED, "unsupported activation on CUDA");
	if (clip_inputs)
	{
		/* min/max are constants (placement checked): read their host copies */
		u.op = OXC_U_CLIP;
		u.p0 = -INFINITY;
		u.p1 = INFINITY;
		if (oc->n_in > 1 && oc->in[1])
		{
			if (!oc->in[1]->h || oc->in[1]->dtype != OX_FLOAT || oxc_numel(oc->in[1]) != 1)
				return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Clip min must be a float scalar");
			u.p0 = *(const float *) oc->in[1]->h;
		}
		if (oc->n_in > 2 && oc->in[2])
		{
			if (!oc->in[2]->h || oc->in[2]->dtype != OX_FLOAT || oxc_numel(oc->in[2]) != 1)
				return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Clip max must be a float scalar");
			u.p1 = *(const float *) oc->in[2]->h;
		}
	}
	OX_TRY(oxc_in(oc, 0, OX_FLOAT, &x));
	if (strcmp(oc->node->op_type, "FastGelu") == 0 && oc->n_in > 1 && oc->in[1])
	{
		ox_dval    *b;
		int64_t		c;

		/* com.microsoft FastGelu: gelu_tanh(x + bias), bias over the last axis */
		OX_TRY(oxc_in(oc, 1, OX_FLOAT, &b));
		c = oxc_numel(b);
		if (b->rank != 1 || x->rank < 1 || x->dims[x->rank - 1] != c)
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "FastGelu bias must match the last dimension");
		OX_TRY(oxc_out(oc, 0, OX_FLOAT, x->rank, x->dims, &y));
		OX_TRY(oxc_cuda_check(cudaMemcpyAsync(y->d, x->d, sizeof(float) * oxc_numel(x), cudaMemcpyDeviceToDevice,
											  oc->cx->stream), "copy", oc->st));
		return oxc_cuda_check(oxc_launch_bias_act(oc->cx->stream, y->d, b->d, NULL, oxc_numel(x), c, 1,
												  OXC_U_GELU_TANH, 0, 0), "FastGelu", oc->st);
	}
	OX_TRY(oxc_out(oc, 0, OX_FLOAT, x->rank, x->dims, &y));
	return oxc_cuda_check(oxc_launch_unary(oc->cx->stream, u.op, u.p0, u.p1, x->d, y->d, oxc_numel(x)),
						  "unary kernel", oc->st);
}

/* com.microsoft BiasGelu: gelu(x + bias), bias over the last axis */
static bool
sup_bias_gelu(const ox_graph *g, const ox_node *n)
{
	return n->n_inputs == 2 && n->n_outputs == 1 && oxc_all_float(g, n, 2);
}

static ox_code
run_bias_gelu(ox_cuda_op_ctx *oc)
{
	ox_dval    *x,
			   *b,
			   *y;
	int64_t		c;

	OX_TRY(oxc_in(oc, 0, OX_FLOAT, &x));
	OX_TRY(oxc_in(oc, 1, OX_FLOAT, &b));
	c = oxc_numel(b);
	if (b->rank != 1 || x->rank < 1 || x->dims[x->rank - 1] != c)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "BiasGelu bias must match the last dimension");
	OX_TRY(oxc_out(oc, 0, OX_FLOAT, x->rank, x->dims, &y));
	OX_TRY(oxc_cuda_check(cudaMemcpyAsync(y->d, x->d, sizeof(float) * oxc_numel(x), cudaMemcpyDeviceToDevice,
										  oc->cx->stream), "copy", oc->st));
	return oxc_cuda_check(oxc_launch_bias_act(oc->cx->stream, y->d, b->d, NULL, oxc_numel(x), c, 1,
											  OXC_U_GELU, 0, 0), "BiasGelu", oc->st);
}

const ox_cuda_op ox_cuda_ops_elementwise[] = {
	{"", "Add", 7, sup_binary, run_binary, NULL, 0},
	{"", "Sub", 7, sup_binary, run_binary, NULL, 0},
	{"", "Mul", 7, sup_binary, run_binary, NULL, 0},
	{"", "Div", 7, sup_binary, run_binary, NULL, 0},
	{"", "Pow", 7, sup_binary, run_binary, NULL, 0},
	{"", "Max", 8, sup_binary, run_binary, NULL, 0},
	{"", "Min", 8, sup_binary, run_binary, NULL, 0},
	{"", "PRelu", 7, sup_binary, run_binary, NULL, 0},
	{"", "Relu", 6, sup_unary, run_unary, NULL, 0},
	{"", "LeakyRelu", 6, sup_unary, run_unary, NULL, 0},
	{"", "Sigmoid", 6, sup_unary, run_unary, NULL, 0},
	{"", "Tanh", 6, sup_unary, run_unary, NULL, 0},
	{"", "Exp", 6, sup_unary, run_unary, NULL, 0},
	{"", "Log", 6, sup_unary, run_unary, NULL, 0},
	{"", "Sqrt", 6, sup_unary, run_unary, NULL, 0},
	{"", "Neg", 6, sup_unary, run_unary, NULL, 0},
	{"", "Abs", 6, sup_unary, run_unary, NULL, 0},
	{"", "Reciprocal", 6, sup_unary, run_unary, NULL, 0},
	{"", "Floor", 6, sup_unary, run_unary, NULL, 0},
	{"", "Ceil", 6, sup_unary, run_unary, NULL, 0},
	{"", "Erf", 9, sup_unary, run_unary, NULL, 0},
	{"", "Sin", 7, sup_unary, run_unary, NULL, 0},
	{"", "Cos", 7, sup_unary, run_unary, NULL, 0},
	{"", "Gelu", 20, sup_unary, run_unary, NULL, 0},
	{"", "HardSigmoid", 6, sup_unary, run_unary, NULL, 0},
	{"", "HardSwish", 14, sup_unary, run_unary, NULL, 0},
	{"", "Clip", 6, sup_unary, run_unary, NULL, 0},
	{"", "Elu", 6, sup_unary, run_unary, NULL, 0},
	{"", "Selu", 6, sup_unary, run_unary, NULL, 0},
	{"", "Softplus", 1, sup_unary, run_unary, NULL, 0},
	{"", "Identity", 1, sup_unary, run_unary, NULL, 0},
	{"", "Dropout", 7, sup_unary, run_unary, NULL, 0},
	{"com.microsoft", "Gelu", 1, sup_unary, run_unary, NULL, 0},
	{"com.microsoft", "FastGelu", 1, sup_unary, run_unary, NULL, 0},
	{"com.microsoft", "BiasGelu", 1, sup_bias_gelu, run_bias_gelu, NULL, 0},
};
const int	ox_cuda_ops_elementwise_count = sizeof(ox_cuda_ops_elementwise) / sizeof(ox_cuda_ops_elementwise[0]);
