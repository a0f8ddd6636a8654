/*
 * kernel_test.h
 *	  Tiny harness for kernel unit tests: build a node with attributes, feed
 *	  tensors, run a kernel straight from its family table, compare outputs.
 *	  Header-only so each test file is one translation unit.
 *
 *	  kt_begin("Add", "", 14)                  start a node (op, domain, opset)
 *	  kt_attr_int("axis", 1) ...               attributes
 *	  kt_input_f32(rank, dims, data)           inputs in order (kt_input_none for omitted)
 *	  kt_run(ox_kernels_elementwise, ox_kernels_elementwise_count, n_outputs)
 *	  kt_expect_f32(0, rank, dims, data, tol)  compare output 0
 *	  kt_end()
 *	  return kt_summary();                     prints "N passed, N failed"
 */
#ifndef KERNEL_TEST_H
#define KERNEL_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernel.h"

#define KT_MAX_IO 80				/* Concat tests pass 64 inputs */
#define KT_MAX_ATTRS 32

static struct
{
	ox_model   *model;
	ox_graph   *graph;
	ox_node		node;
	ox_attr		attrs[KT_MAX_ATTRS];
	int			n_attrs;
	ox_value	inputs[KT_MAX_IO];
	bool		input_present[KT_MAX_IO];
	int			n_inputs;
	ox_value	outputs[KT_MAX_IO];
	int			n_outputs;
	ox_status	st;
	ox_code		rc;
	const char *label;
	int			passed;
	int			failed;
	bool		case_failed;
	int			in_ids[KT_MAX_IO];
	int			out_ids[KT_MAX_IO];
	uint64_t	movable;		/* ox_kernel_ctx.movable for the next run */
	uint64_t	unread;			/* ox_kernel_ctx.unread for the next run */
}			kt;

static inline void
kt_begin(const char *op, const char *domain, int opset)
{
	if (!kt.model)
	{
		kt.model = ox_model_new(NULL);
		kt.graph = ox_graph_new(kt.model, NULL, NULL);
		kt.model->graph = kt.graph;
	}
	memset(&kt.node, 0, sizeof(kt.node));
	kt.node.op_type = op;
	kt.node.name = op;
	kt.node.domain = domain ? domain : "";
	kt.node.opset = opset;
	kt.n_attrs = 0;
	kt.n_inputs = 0;
	kt.n_outputs = 0;
	kt.movable = 0;
	kt.unread = 0;
	kt.label = op;
	kt.case_failed = false;
	memset(kt.attrs, 0, sizeof(kt.attrs));
	ox_status_clear(&kt.st);
}

static inline ox_attr *
kt_new_attr(const char *name, ox_attr_type type)
{
	ox_attr    *a = &kt.attrs[kt.n_attrs++];

	a->name = name;
	a->type = type;
	return a;
}

static inline void kt_attr_int(const char *name, int64_t v) { kt_new_attr(name, OX_ATTR_INT)->i = v; }
static inline void kt_attr_float(const char *name, float v) { kt_new_attr(name, OX_ATTR_FLOAT)->f = v; }
static inline void
kt_attr_string(const char *name, const char *v)
{
	ox_attr    *a = kt_new_attr(name, OX_ATTR_STRING);

	a->s = v;
	a->s_len = strlen(v);
}
static inline void
kt_attr_ints(const char *name, int n, const int64_t *v)
{
	ox_attr    *a = kt_new_attr(name, OX_ATTR_INTS);

	a->n = n;
	a->ints = (int64_t *) v;
}
static inline void
kt_attr_floats(const char *name, int n, const float *v)
{
	ox_attr    *a = kt_new_attr(name, OX_ATTR_FLOATS);

	a->n = n;
	a->floats = (float *) v;
}
static inline void
kt_attr_strings(const char *name, int n, const char **v)
{
	ox_attr    *a = kt_new_attr(name, OX_ATTR_STRINGS);

	a->n = n;
	a->strings = v;
}
/* the tensor must outlive the case (use a static or kt_make_tensor) */
static inline void
kt_attr_tensor(const char *name, ox_tensor *t)
{
	kt_new_attr(name, OX_ATTR_TENSOR)->t = t;
}

/* a freshly allocated tensor copying data (numeric types) */
static inline ox_tensor *
kt_make_tensor(ox_dtype dt, int rank, const int64_t *dims, const void *data)
{
	ox_tensor  *t = ox_model_new_tensor(kt.model, NULL);
	int64_t		n = ox_shape_numel(rank, dims);

	ox_tensor_alloc(t, dt, rank, dims, NULL);
	if (n > 0 && data)
		memcpy(t->data, data, (size_t) n * ox_dtype_size(dt));
	return t;
}

static inline void
kt_input(ox_dtype dt, int rank, const int64_t *dims, const void *data)
{
	ox_value   *v = &kt.inputs[kt.n_inputs];
	int64_t		n = ox_shape_numel(rank, dims);

	ox_value_release(v);
	ox_value_init_tensor(v);
	ox_tensor_alloc(&v->tensor, dt, rank, dims, NULL);
	if (n > 0 && data)
		memcpy(v->tensor.data, data, (size_t) n * ox_dtype_size(dt));
	kt.input_present[kt.n_inputs] = true;
	kt.n_inputs++;
}

static inline void kt_input_f32(int rank, const int64_t *dims, const float *d) { kt_input(OX_FLOAT, rank, dims, d); }
static inline void kt_input_i64(int rank, const int64_t *dims, const int64_t *d) { kt_input(OX_INT64, rank, dims, d); }

static inline void
kt_input_strings(int rank, const int64_t *dims, const char **strs)
{
	ox_value   *v = &kt.inputs[kt.n_inputs];
	int64_t		n = ox_shape_numel(rank, dims);

	ox_value_release(v);
	ox_value_init_tensor(v);
	ox_tensor_alloc(&v->tensor, OX_STRING, rank, dims, NULL);
	for (int64_t i = 0; i < n; i++)
	{
		ox_string  *s = &((ox_string *) v->tensor.data)[i];

		s->len = strlen(strs[i]);
		s->data = strdup(strs[i]);
	}
	kt.input_present[kt.n_inputs] = true;
	kt.n_inputs++;
}

/* an omitted optional input */
static inline void
kt_input_none(void)
{
	kt.input_present[kt.n_inputs] = false;
	kt.n_inputs++;
}

/* direct access to the value of input i, e.g. to build a sequence or map */
static inline ox_value *
kt_input_value(void)
{
	ox_value   *v = &kt.inputs[kt.n_inputs];

	ox_value_release(v);
	ox_value_init_tensor(v);
	kt.input_present[kt.n_inputs] = true;
	kt.n_inputs++;
	return v;
}

static inline const ox_kernel_def *
kt_find(const ox_kernel_def *table, int count)
{
	const ox_kernel_def *best = NULL;

	for (int i = 0; i < count; i++)
	{
		const ox_kernel_def *k = &table[i];

		if (strcmp(k->op_type, kt.node.op_type) != 0 || strcmp(k->domain, kt.node.domain) != 0)
			continue;
		if (k->since_version > kt.node.opset)
			continue;
		if (!best || k->since_version > best->since_version)
			best = k;
	}
	return best;
}

static inline void
kt_fail(const char *fmt, const char *a, double x, double y)
{
	if (!kt.case_failed)
	{
		printf("FAIL %s: ", kt.label);
		printf(fmt, a, x, y);
		printf("\n");
	}
	kt.case_failed = true;
}

/* Runs the node; returns the kernel's code.  Errors are not failures by
 * themselves: use kt_expect_ok or kt_expect_error. */
static inline ox_code
kt_run(const ox_kernel_def *table, int count, int n_outputs)
{
	const ox_kernel_def *k = kt_find(table, count);
	ox_prepare_ctx pc;
	ox_kernel_ctx ctx;
	ox_value   *in[KT_MAX_IO];
	ox_value   *out[KT_MAX_IO];

	kt.node.attrs = kt.attrs;
	kt.node.n_attrs = kt.n_attrs;
	kt.node.n_inputs = kt.n_inputs;
	kt.node.inputs = kt.in_ids;
	kt.node.n_outputs = n_outputs;
	kt.node.outputs = kt.out_ids;
	for (int i = 0; i < kt.n_inputs; i++)
		kt.in_ids[i] = kt.input_present[i] ? i : -1;
	for (int i = 0; i < n_outputs; i++)
		kt.out_ids[i] = 100 + i;
	kt.n_outputs = n_outputs;
	ox_status_clear(&kt.st);
	if (!k)
	{
		kt.rc = ox_fail(&kt.st, OX_UNSUPPORTED, "no kernel for %s opset %d", kt.node.op_type, kt.node.opset);
		return kt.rc;
	}
	memset(&pc, 0, sizeof(pc));
	pc.node = &kt.node;
	pc.graph = kt.graph;
	pc.st = &kt.st;
	if (k->prepare && (kt.rc = k->prepare(&pc)) != OX_OK)
		return kt.rc;
	memset(&ctx, 0, sizeof(ctx));
	for (int i = 0; i < kt.n_inputs; i++)
		in[i] = kt.input_present[i] ? &kt.inputs[i] : NULL;
	for (int i = 0; i < n_outputs; i++)
	{
		ox_value_release(&kt.outputs[i]);
		ox_value_init_tensor(&kt.outputs[i]);
		out[i] = &kt.outputs[i];
	}
	ctx.node = &kt.node;
	ctx.graph = kt.graph;
	ctx.in = in;
	ctx.n_in = kt.n_inputs;
	ctx.out = out;
	ctx.n_out = n_outputs;
	ctx.state = pc.state;
	ctx.st = &kt.st;
	ctx.nthreads = 1;
	ctx.movable = kt.movable;
	ctx.unread = kt.unread;
	kt.rc = k->run(&ctx);
	if (k->free_state && pc.state)
		k->free_state(pc.state);
	return kt.rc;
}

static inline void
kt_expect_ok(void)
{
	if (kt.rc != OX_OK)
		kt_fail("expected success, got error: %s%.0f%.0f", kt.st.msg, 0, 0);
}

static inline void
kt_expect_error(ox_code code)
{
	if (kt.rc != code)
		kt_fail("expected error code %s%.0f, got %.0f", "", code, kt.rc);
}

static inline const ox_tensor *
kt_output(int i)
{
	return &kt.outputs[i].tensor;
}

static inline bool
kt_check_shape(int i, ox_dtype dt, int rank, const int64_t *dims)
{
	const ox_tensor *t = kt_output(i);

	kt_expect_ok();
	if (kt.rc != OX_OK)
		return false;
	if (kt.outputs[i].kind != OX_VALUE_TENSOR || t->dtype != dt)
	{
		kt_fail("output dtype %s%.0f (want %.0f)", ox_dtype_name(t->dtype), 0, dt);
		return false;
	}
	if (!ox_shape_equal(t->rank, t->dims, rank, dims))
	{
		char		a[128];

		ox_shape_str(t->rank, t->dims, a, sizeof(a));
		kt_fail("output shape %s%.0f%.0f differs", a, 0, 0);
		return false;
	}
	return true;
}

/* compare as doubles with |got - want| <= tol * (1 + |want|); NaN == NaN */
static inline void
kt_expect_values(int i, ox_dtype dt, int rank, const int64_t *dims, const void *want, double tol)
{
	ox_tensor	w;

	if (!kt_check_shape(i, dt, rank, dims))
		return;
	memset(&w, 0, sizeof(w));
	w.dtype = dt;
	w.rank = rank;
	if (rank > 0)
		memcpy(w.dims, dims, sizeof(int64_t) * rank);
	w.data = (void *) want;
	for (int64_t k = 0; k < ox_tensor_numel(&w); k++)
	{
		double		g = ox_tensor_get_double(kt_output(i), k);
		double		e = ox_tensor_get_double(&w, k);

		if (isnan(e) && isnan(g))
			continue;
		if (isinf(e) && g == e)
			continue;
		if (!(fabs(g - e) <= tol * (1 + fabs(e))))
		{
			char		at[64];

			snprintf(at, sizeof(at), "element %lld", (long long) k);
			kt_fail("%s: got %g want %g", at, g, e);
			return;
		}
	}
}

static inline void
kt_expect_f32(int i, int rank, const int64_t *dims, const float *want, double tol)
{
	kt_expect_values(i, OX_FLOAT, rank, dims, want, tol);
}

static inline void
kt_expect_i64(int i, int rank, const int64_t *dims, const int64_t *want)
{
	kt_expect_values(i, OX_INT64, rank, dims, want, 0);
}

static inline void
kt_end(void)
{
	if (kt.case_failed)
		kt.failed++;
	else
		kt.passed++;
	for (int i = 0; i < kt.n_inputs; i++)
		ox_value_release(&kt.inputs[i]);
	for (int i = 0; i < kt.n_outputs; i++)
		ox_value_release(&kt.outputs[i]);
}

static inline int
kt_summary(void)
{
	printf("%d passed, %d failed\n", kt.passed, kt.failed);
	ox_model_free(kt.model);
	kt.model = NULL;
	return kt.failed ? 1 : 0;
}

#endif							/* KERNEL_TEST_H */
