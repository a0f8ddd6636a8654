/*
 * test_passes.c
 *	  The helpers the fusion passes share (fused_attrs.c, manager.c) and the
 *	  arena they write into.
 *
 *	  FusedGemm with a two-parameter activation (HardSigmoid) takes three
 *	  new attributes; the copy of this code in fuse_activation.c used to
 *	  allocate room for two, and the third landed past the array, in
 *	  whatever the arena had put next.  Under AddressSanitizer (`make -C
 *	  fuzz unit-asan`) the arena poisons a red zone after every allocation,
 *	  which this test checks is in place, so that such a write is reported.
 */
#include "model/ir.h"
#include "model/passes/passes.h"
#include "util/arena.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#endif
#ifdef TEST_ASAN
#include <sanitizer/asan_interface.h>
#endif

static int	failures;

#define CHECK(cond) do { if (!(cond)) { printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); failures++; } } while (0)

static const ox_attr *
find_attr(const ox_node *n, const char *name)
{
	for (int i = 0; i < n->n_attrs; i++)
		if (strcmp(n->attrs[i].name, name) == 0)
			return &n->attrs[i];
	return NULL;
}

/* a node of op (ai.onnx, opset) with one float attribute, its attributes in the arena */
static ox_node
node_with_attr(ox_model *m, const char *op, int opset, const char *attr, float value)
{
	ox_node		n;

	memset(&n, 0, sizeof(n));
	n.name = op;
	n.op_type = op;
	n.domain = "";
	n.opset = opset;
	if (attr)
	{
		n.attrs = ox_arena_alloc(&m->arena, sizeof(ox_attr));
		n.attrs[0].name = attr;
		n.attrs[0].type = OX_ATTR_FLOAT;
		n.attrs[0].f = value;
		n.n_attrs = 1;
	}
	return n;
}

static void
test_activation_of(ox_model *m)
{
	ox_graph	g;
	const char *name = NULL;
	float		p[2] = {0, 0};
	int			np = -1;
	ox_node		relu = node_with_attr(m, "Relu", 14, NULL, 0);
	ox_node		leaky = node_with_attr(m, "LeakyRelu", 16, "alpha", 0.25f);
	ox_node		hs = node_with_attr(m, "HardSigmoid", 6, "beta", 0.75f);
	ox_node		clip6 = node_with_attr(m, "Clip", 6, "max", 6.0f);
	ox_node		clip13 = node_with_attr(m, "Clip", 13, NULL, 0);
	ox_node		gelu = node_with_attr(m, "Gelu", 20, NULL, 0);

	memset(&g, 0, sizeof(g));
	CHECK(ox_pass_activation_of(&g, &relu, &name, p, &np) && strcmp(name, "Relu") == 0 && np == 0);
	CHECK(ox_pass_activation_of(&g, &leaky, &name, p, &np) && strcmp(name, "LeakyRelu") == 0 &&
		  np == 1 && p[0] == 0.25f);
	/* the attribute not given takes its default */
	CHECK(ox_pass_activation_of(&g, &hs, &name, p, &np) && strcmp(name, "HardSigmoid") == 0 &&
		  np == 2 && p[0] == 0.2f && p[1] == 0.75f);
	CHECK(ox_pass_activation_of(&g, &clip6, &name, p, &np) && np == 2 && isinf(p[0]) && p[0] < 0 &&
		  p[1] == 6.0f);
	/* Clip-13 without bound inputs: no bounds */
	CHECK(ox_pass_activation_of(&g, &clip13, &name, p, &np) && np == 2 && isinf(p[0]) && isinf(p[1]));
	CHECK(!ox_pass_activation_of(&g, &gelu, &name, p, &np));
	relu.dead = true;
	CHECK(!ox_pass_activation_of(&g, &relu, &name, p, &np));
}

static void
test_add_activation_attrs(ox_model *m)
{
	ox_status	st;
	float		p[2] = {0.3f, 0.4f};
	ox_node		gemm = node_with_attr(m, "Gemm", 13, "alpha", 2.0f);
	ox_node		conv = node_with_attr(m, "Conv", 11, "group", 1.0f);
	ox_node		bare = node_with_attr(m, "Conv", 11, NULL, 0);
	const ox_attr *a;

	ox_status_clear(&st);
	/* FusedGemm: activation_alpha and activation_beta, three new attributes */
	CHECK(ox_pass_add_activation_attrs(m, &gemm, "HardSigmoid", p, 2, true, &st) == OX_OK);
	CHECK(gemm.n_attrs == 4);
	CHECK((a = find_attr(&gemm, "alpha")) && a->f == 2.0f);
	CHECK((a = find_attr(&gemm, "activation")) && a->type == OX_ATTR_STRING &&
		  strcmp(a->s, "HardSigmoid") == 0 && a->s_len == 11);
	CHECK((a = find_attr(&gemm, "activation_alpha")) && a->type == OX_ATTR_FLOAT && a->f == 0.3f);
	CHECK((a = find_attr(&gemm, "activation_beta")) && a->type == OX_ATTR_FLOAT && a->f == 0.4f);
	CHECK(!find_attr(&gemm, "activation_params"));

	/* FusedConv: one list attribute, a copy of the parameters */
	CHECK(ox_pass_add_activation_attrs(m, &conv, "HardSigmoid", p, 2, false, &st) == OX_OK);
	p[0] = 9.0f;
	CHECK(conv.n_attrs == 3);
	CHECK((a = find_attr(&conv, "activation_params")) && a->type == OX_ATTR_FLOATS && a->n == 2 &&
		  a->floats[0] == 0.3f && a->floats[1] == 0.4f);
	CHECK(!find_attr(&conv, "activation_alpha"));

	CHECK(ox_pass_add_activation_attrs(m, &bare, "Relu", NULL, 0, false, &st) == OX_OK);
	CHECK(bare.n_attrs == 1 && strcmp(bare.attrs[0].name, "activation") == 0);
}

static void
test_import_domain(ox_model *m)
{
	ox_status	st;
	int			before = m->n_opsets;

	ox_status_clear(&st);
	CHECK(ox_pass_import_domain(m, OX_FUSED_DOMAIN, &st) == OX_OK);
	CHECK(m->n_opsets == before + 1 && ox_model_opset(m, OX_FUSED_DOMAIN) == 1);
	/* once only */
	CHECK(ox_pass_import_domain(m, OX_FUSED_DOMAIN, &st) == OX_OK);
	CHECK(m->n_opsets == before + 1);
}

static void
test_arena_red_zone(void)
{
	ox_arena	a;
	unsigned char *p,
			   *q;

	ox_arena_init(&a);
	p = ox_arena_alloc(&a, 24);
	q = ox_arena_alloc(&a, 8);
	CHECK(p && q && p[23] == 0 && q[7] == 0);
	CHECK(((uintptr_t) p & 15) == 0 && ((uintptr_t) q & 15) == 0);
#ifdef TEST_ASAN
	/* every byte asked for is usable; the next one, up to the next allocation, is not */
	CHECK(!__asan_region_is_poisoned(p, 24));
	for (unsigned char *b = p + 24; b < q; b++)
		CHECK(__asan_address_is_poisoned(b));
	CHECK(q - p >= 24 + 16);
#endif
	ox_arena_free(&a);
}

int
main(void)
{
	ox_status	st;
	ox_model   *m;

	ox_status_clear(&st);
	m = ox_model_new(&st);
	if (!m)
	{
		printf("FAIL: ox_model_new: %s\n", st.msg);
		return 1;
	}
	test_activation_of(m);
	test_add_activation_attrs(m);
	test_import_domain(m);
	test_arena_red_zone();
	ox_model_free(m);
	if (failures)
	{
		printf("%d failure(s)\n", failures);
		return 1;
	}
	printf("test_passes: all passed\n");
	return 0;
}
