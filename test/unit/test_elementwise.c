/*
 * test_elementwise.c
 *	  Unit tests of the elementwise kernel family and its broadcast iterator.
 */
#include "kernel_test.h"
#include "kernels/cpu/elementwise.h"

#define EW ox_kernels_elementwise, ox_kernels_elementwise_count
#define D(...) ((const int64_t[]) {__VA_ARGS__})

/* start a case of op with a label of its own */
static void
begin(const char *op, int opset, const char *label)
{
	kt_begin(op, "", opset);
	kt.label = label;
}

static void
expect_bool(int i, int rank, const int64_t *dims, const uint8_t *want)
{
	kt_expect_values(i, OX_BOOL, rank, dims, want, 0);
}

static void
expect_strings(int i, int rank, const int64_t *dims, const char **want)
{
	const ox_tensor *t = kt_output(i);

	if (!kt_check_shape(i, OX_STRING, rank, dims))
		return;
	for (int64_t k = 0; k < ox_tensor_numel(t); k++)
	{
		const ox_string *s = &((const ox_string *) t->data)[k];

		if (s->len != strlen(want[k]) || memcmp(s->data, want[k], s->len) != 0)
		{
			kt_fail("string %s%.0f: got another value (element %.0f)", want[k], 0, k);
			printf("  got \"%s\" want \"%s\"\n", s->data, want[k]);
			return;
		}
	}
}

/* ---- broadcast plans ------------------------------------------------------ */

static void
test_plan(const char *label, int ra, const int64_t *a, int rb, const int64_t *b,
		  int want_rank, const int64_t *want_dims)
{
	ox_ew_bcast	p;
	int			ranks[2] = {ra, rb};
	const int64_t *dims[2] = {a, b};
	ox_status	st;

	kt_begin(label, "", 1);
	ox_status_clear(&st);
	if (ox_ew_bcast_plan(&p, 2, ranks, dims, "Add", &st) != OX_OK)
		kt_fail("plan failed: %s%.0f%.0f", st.msg, 0, 0);
	else if (!ox_shape_equal(p.rank, p.dims, want_rank, want_dims))
	{
		char		buf[128];

		ox_shape_str(p.rank, p.dims, buf, sizeof(buf));
		kt_fail("iteration dims %s%.0f%.0f", buf, 0, 0);
	}
	kt_end();
}

static void
test_plans(void)
{
	/* same shape: one contiguous run */
	test_plan("plan same", 3, D(2, 3, 4), 3, D(2, 3, 4), 1, D(24));
	/* scalar operand: one run, the scalar with step 0 */
	test_plan("plan scalar", 3, D(2, 3, 4), 0, D(0), 1, D(24));
	/* trailing vector (row broadcast): [outer, row] */
	test_plan("plan row", 3, D(2, 3, 4), 1, D(4), 2, D(6, 4));
	/* channel bias on NCHW: [N, C, H*W] */
	test_plan("plan channel", 4, D(8, 3, 5, 5), 3, D(3, 1, 1), 3, D(8, 3, 25));
	/* outer product */
	test_plan("plan outer", 2, D(5, 1), 2, D(1, 7), 2, D(5, 7));
	/* size-1 axes vanish */
	test_plan("plan ones", 4, D(1, 3, 1, 4), 3, D(3, 1, 1), 2, D(3, 4));
	test_plan("plan all ones", 2, D(1, 1), 1, D(1), 1, D(1));

	ox_ew_bcast	p;
	ox_status	st;
	int			ranks[2] = {2, 1};
	const int64_t *dims[2] = {D(2, 3), D(4)};

	begin("plan", 1, "plan mismatch");
	ox_status_clear(&st);
	if (ox_ew_bcast_plan(&p, 2, ranks, dims, "Add", &st) != OX_INVALID_ARGUMENT ||
		!strstr(st.msg, "[2, 3] and [4]"))
		kt_fail("expected a broadcast error naming both shapes, got \"%s\"%.0f%.0f", st.msg, 0, 0);
	kt_end();
}

/* a row function that records, for each output element, the input offsets */
static void
index_row(void *arg, int64_t n, void *out_, const void *const *in, const int *step)
{
	int64_t    *o = out_;
	const int64_t *a = in[0];
	const int64_t *b = in[1];

	(void) arg;
	for (int64_t i = 0; i < n; i++)
		o[i] = a[step[0] ? i : 0] * 1000 + b[step[1] ? i : 0];
}

/* every chunking of the output gives the same answer as numpy indexing */
static void
test_ranges(void)
{
	static const struct
	{
		int			ra;
		int64_t		a[4];
		int			rb;
		int64_t		b[4];
	}			cases[] = {
		{3, {2, 3, 4}, 2, {3, 1}},
		{4, {2, 1, 3, 5}, 3, {4, 1, 5}},
		{2, {7, 1}, 2, {1, 9}},
		{1, {1}, 3, {3, 2, 2}},
		/* short rows: blocks of rows through gathered tiles */
		{3, {4, 10, 3}, 2, {10, 1}},
		{3, {4, 10, 3}, 1, {3}},
		{2, {40, 5}, 2, {40, 1}},
		{3, {3, 1, 6}, 3, {3, 20, 1}},
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		int			ranks[2] = {cases[c].ra, cases[c].rb};
		const int64_t *dims[2] = {cases[c].a, cases[c].b};
		ox_ew_bcast	p;
		int64_t		a[512];
		int64_t		b[512];
		int64_t		whole[512];
		int64_t		parts[512];
		const void *in[2] = {a, b};
		size_t		es[3] = {8, 8, 8};

		begin("bcast", 1, "bcast ranges");
		for (int i = 0; i < 512; i++)
			a[i] = b[i] = i;
		if (ox_ew_bcast_plan(&p, 2, ranks, dims, "t", NULL) != OX_OK || p.numel > 512)
		{
			kt_fail("plan %s%.0f%.0f", "failed", 0, 0);
			kt_end();
			continue;
		}
		ox_ew_bcast_run(NULL, &p, index_row, NULL, whole, in, es);

		/* reference: numpy index arithmetic on the output shape */
		for (int64_t e = 0; e < p.numel; e++)
		{
			int64_t		rem = e;
			int64_t		oa = 0,
						ob = 0,
						sa = 1,
						sb = 1;

			for (int d = p.out_rank - 1; d >= 0; d--)
			{
				int64_t		idx = rem % p.out_dims[d];
				int			da = d - (p.out_rank - ranks[0]);
				int			db = d - (p.out_rank - ranks[1]);

				rem /= p.out_dims[d];
				if (da >= 0)
				{
					oa += (dims[0][da] == 1 ? 0 : idx) * sa;
					sa *= dims[0][da];
				}
				if (db >= 0)
				{
					ob += (dims[1][db] == 1 ? 0 : idx) * sb;
					sb *= dims[1][db];
				}
			}
			if (whole[e] != oa * 1000 + ob)
			{
				kt_fail("element %s%.0f: got %.0f", "", e, whole[e]);
				break;
			}
		}
		for (int64_t chunk = 1; chunk <= 40; chunk += 3)
		{
			memset(parts, 0, sizeof(parts));
			for (int64_t s = 0; s < p.numel; s += chunk)
				ox_ew_bcast_run_range(&p, index_row, NULL, parts, in, es, s,
								   s + chunk < p.numel ? s + chunk : p.numel);
			if (memcmp(parts, whole, sizeof(int64_t) * p.numel) != 0)
				kt_fail("chunked run differs (chunk %s%.0f)%.0f", "", chunk, 0);
		}
		kt_end();
	}
}

/* ---- arithmetic ------------------------------------------------------------ */

static void
test_arith(void)
{
	begin("Add", 14, "Add same shape");
	kt_input_f32(2, D(2, 2), (float[]) {1, 2, 3, 4});
	kt_input_f32(2, D(2, 2), (float[]) {10, 20, 30, 40});
	kt_run(EW, 1);
	kt_expect_f32(0, 2, D(2, 2), (float[]) {11, 22, 33, 44}, 0);
	kt_end();

	begin("Add", 14, "Add scalar");
	kt_input_f32(0, NULL, (float[]) {0.5f});
	kt_input_f32(2, D(2, 2), (float[]) {1, 2, 3, 4});
	kt_run(EW, 1);
	kt_expect_f32(0, 2, D(2, 2), (float[]) {1.5f, 2.5f, 3.5f, 4.5f}, 0);
	kt_end();

	begin("Sub", 14, "Sub row broadcast");
	kt_input_f32(2, D(2, 3), (float[]) {1, 2, 3, 4, 5, 6});
	kt_input_f32(1, D(3), (float[]) {1, 1, 2});
	kt_run(EW, 1);
	kt_expect_f32(0, 2, D(2, 3), (float[]) {0, 1, 1, 3, 4, 4}, 0);
	kt_end();

	begin("Mul", 14, "Mul column broadcast");
	kt_input_f32(2, D(2, 1), (float[]) {2, 3});
	kt_input_f32(2, D(1, 3), (float[]) {1, 2, 3});
	kt_run(EW, 1);
	kt_expect_f32(0, 2, D(2, 3), (float[]) {2, 4, 6, 3, 6, 9}, 0);
	kt_end();

	begin("Div", 14, "Div float");
	kt_input_f32(1, D(3), (float[]) {1, -6, 1});
	kt_input_f32(1, D(3), (float[]) {4, 3, 0});
	kt_run(EW, 1);
	kt_expect_f32(0, 1, D(3), (float[]) {0.25f, -2, INFINITY}, 0);
	kt_end();

	begin("Add", 14, "Add broadcast mismatch");
	kt_input_f32(1, D(3), (float[]) {1, 2, 3});
	kt_input_f32(1, D(2), (float[]) {1, 2});
	kt_run(EW, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	begin("Add", 14, "Add type mismatch");
	kt_input_f32(1, D(1), (float[]) {1});
	kt_input_i64(1, D(1), (int64_t[]) {1});
	kt_run(EW, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	begin("Add", 14, "Add int32 wraps");
	kt_input(OX_INT32, 1, D(2), (int32_t[]) {INT32_MAX, INT32_MIN});
	kt_input(OX_INT32, 1, D(2), (int32_t[]) {1, -1});
	kt_run(EW, 1);
	kt_expect_values(0, OX_INT32, 1, D(2), (int32_t[]) {INT32_MIN, INT32_MAX}, 0);
	kt_end();

	begin("Mul", 14, "Mul int8 wraps");
	kt_input(OX_INT8, 1, D(2), (int8_t[]) {100, -128});
	kt_input(OX_INT8, 1, D(2), (int8_t[]) {3, -1});
	kt_run(EW, 1);
	kt_expect_values(0, OX_INT8, 1, D(2), (int8_t[]) {44, -128}, 0);
	kt_end();

	begin("Div", 14, "Div int truncates");
	kt_input(OX_INT32, 1, D(5), (int32_t[]) {7, -7, 7, -7, INT32_MIN});
	kt_input(OX_INT32, 1, D(5), (int32_t[]) {2, 2, -2, -2, -1});
	kt_run(EW, 1);
	kt_expect_values(0, OX_INT32, 1, D(5), (int32_t[]) {3, -3, -3, 3, INT32_MIN}, 0);
	kt_end();

	begin("Div", 14, "Div int by zero");
	kt_input_i64(1, D(2), (int64_t[]) {1, 2});
	kt_input_i64(1, D(2), (int64_t[]) {1, 0});
	kt_run(EW, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	begin("Div", 14, "Div uint8");
	kt_input(OX_UINT8, 1, D(2), (uint8_t[]) {255, 7});
	kt_input(OX_UINT8, 0, NULL, (uint8_t[]) {2});
	kt_run(EW, 1);
	kt_expect_values(0, OX_UINT8, 1, D(2), (uint8_t[]) {127, 3}, 0);
	kt_end();

	/* opset 6: B placed at axis 1 of A */
	begin("Add", 6, "Add legacy axis");
	kt_attr_int("broadcast", 1);
	kt_attr_int("axis", 1);
	kt_input_f32(3, D(2, 3, 2), (float[]) {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1});
	kt_input_f32(1, D(3), (float[]) {10, 20, 30});
	kt_run(EW, 1);
	kt_expect_f32(0, 3, D(2, 3, 2), (float[]) {10, 10, 20, 20, 30, 30, 11, 11, 21, 21, 31, 31}, 0);
	kt_end();

	begin("Add", 14, "Add float16");
	kt_input(OX_FLOAT16, 1, D(2), (uint16_t[]) {0x3c00, 0x4000});	/* 1, 2 */
	kt_input(OX_FLOAT16, 0, NULL, (uint16_t[]) {0x3800});	/* 0.5 */
	kt_run(EW, 1);
	kt_expect_values(0, OX_FLOAT16, 1, D(2), (uint16_t[]) {0x3e00, 0x4100}, 0);
	kt_end();

	begin("Mod", 13, "Mod integer sign follows divisor");
	kt_input_i64(1, D(4), (int64_t[]) {5, -5, 5, -5});
	kt_input_i64(1, D(4), (int64_t[]) {3, 3, -3, -3});
	kt_run(EW, 1);
	kt_expect_i64(0, 1, D(4), (int64_t[]) {2, 1, -1, -2});
	kt_end();

	begin("Mod", 13, "Mod fmod");
	kt_attr_int("fmod", 1);
	kt_input_f32(1, D(3), (float[]) {5.5f, -5.5f, 5.5f});
	kt_input_f32(1, D(3), (float[]) {2, 2, -2});
	kt_run(EW, 1);
	kt_expect_f32(0, 1, D(3), (float[]) {1.5f, -1.5f, 1.5f}, 0);
	kt_end();

	begin("Mod", 13, "Mod bad fmod");
	kt_attr_int("fmod", 2);
	kt_input_f32(1, D(1), (float[]) {1});
	kt_input_f32(1, D(1), (float[]) {1});
	kt_run(EW, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	begin("Mod", 13, "Mod int by zero");
	kt_input(OX_INT32, 1, D(1), (int32_t[]) {5});
	kt_input(OX_INT32, 1, D(1), (int32_t[]) {0});
	kt_run(EW, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	begin("Pow", 15, "Pow float");
	kt_input_f32(1, D(3), (float[]) {2, -3, 4});
	kt_input_f32(0, NULL, (float[]) {2});
	kt_run(EW, 1);
	kt_expect_f32(0, 1, D(3), (float[]) {4, 9, 16}, 0);
	kt_end();

	begin("Pow", 15, "Pow float by int64");
	kt_input_f32(1, D(3), (float[]) {2, 3, 4});
	kt_input_i64(1, D(3), (int64_t[]) {3, 0, -1});
	kt_run(EW, 1);
	kt_expect_f32(0, 1, D(3), (float[]) {8, 1, 0.25f}, 1e-7);
	kt_end();

	begin("Pow", 15, "Pow int64 exact");
	kt_input_i64(1, D(3), (int64_t[]) {3, -2, 7});
	kt_input_i64(1, D(3), (int64_t[]) {39, 3, 0});
	kt_run(EW, 1);
	kt_expect_i64(0, 1, D(3), (int64_t[]) {4052555153018976267LL, -8, 1});
	kt_end();

	begin("Pow", 15, "Pow int32 by float");
	kt_input(OX_INT32, 1, D(2), (int32_t[]) {4, 9});
	kt_input_f32(1, D(2), (float[]) {0.5f, 0.5f});
	kt_run(EW, 1);
	kt_expect_values(0, OX_INT32, 1, D(2), (int32_t[]) {2, 3}, 0);
	kt_end();
}

/* ---- unary ------------------------------------------------------------------ */

static void
test_unary(void)
{
	begin("Abs", 13, "Abs int8");
	kt_input(OX_INT8, 1, D(3), (int8_t[]) {-5, 5, -128});
	kt_run(EW, 1);
	kt_expect_values(0, OX_INT8, 1, D(3), (int8_t[]) {5, 5, -128}, 0);
	kt_end();

	kt_begin("Neg", "", 13);
	kt_input_f32(1, D(2), (float[]) {1.5f, -2});
	kt_run(EW, 1);
	kt_expect_f32(0, 1, D(2), (float[]) {-1.5f, 2}, 0);
	kt_end();

	begin("Neg", 13, "Neg unsigned refused");
	kt_input(OX_UINT8, 1, D(1), (uint8_t[]) {1});
	kt_run(EW, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	begin("Round", 11, "Round half to even");
	kt_input_f32(1, D(8), (float[]) {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, 2.6f, -2.6f});
	kt_run(EW, 1);
	kt_expect_f32(0, 1, D(8), (float[]) {0, 2, 2, -0.0f, -2, 2, 3, -3}, 0);
	kt_end();

	kt_begin("Sign", "", 13);
	kt_input_f32(1, D(4), (float[]) {-3, 0, 2, NAN});
	kt_run(EW, 1);
	kt_expect_f32(0, 1, D(4), (float[]) {-1, 0, 1, NAN}, 0);
	kt_end();

	begin("Sign", 13, "Sign int");
	kt_input_i64(1, D(3), (int64_t[]) {-9, 0, 4});
	kt_run(EW, 1);
	kt_expect_i64(0, 1, D(3), (int64_t[]) {-1, 0, 1});
	kt_end();

	static const struct
	{
		const char *op;
		double		(*ref) (double);
	}			fns[] = {
		{"Sqrt", sqrt}, {"Exp", exp}, {"Log", log}, {"Sin", sin}, {"Cos", cos},
		{"Tan", tan}, {"Asin", asin}, {"Acos", acos}, {"Atan", atan}, {"Sinh", sinh},
		{"Cosh", cosh}, {"Asinh", asinh}, {"Atanh", atanh}, {"Erf", erf},
		{"Ceil", ceil}, {"Floor", floor},
	};
	/* in [0, 1) away from the poles and branch cuts of all of them */
	float		x[5] = {0.1f, 0.25f, 0.5f, 0.75f, 0.9f};

	for (size_t f = 0; f < sizeof(fns) / sizeof(fns[0]); f++)
	{
		float		want[5];
		double		wd[5];
		double		xd[5];

		for (int i = 0; i < 5; i++)
		{
			want[i] = (float) fns[f].ref(x[i]);
			xd[i] = x[i];
			wd[i] = fns[f].ref(x[i]);
		}
		kt_begin(fns[f].op, "", 13);
		kt_input_f32(1, D(5), x);
		kt_run(EW, 1);
		kt_expect_f32(0, 1, D(5), want, 1e-6);
		kt_end();

		kt_begin(fns[f].op, "", 13);
		kt_input(OX_DOUBLE, 1, D(5), xd);
		kt_run(EW, 1);
		kt_expect_values(0, OX_DOUBLE, 1, D(5), wd, 1e-15);
		kt_end();
	}

	kt_begin("Acosh", "", 13);
	kt_input_f32(1, D(2), (float[]) {1, 2});
	kt_run(EW, 1);
	kt_expect_f32(0, 1, D(2), (float[]) {0, (float) acosh(2.0)}, 1e-6);
	kt_end();

	kt_begin("Reciprocal", "", 13);
	kt_input_f32(1, D(2), (float[]) {4, -0.5f});
	kt_run(EW, 1);
	kt_expect_f32(0, 1, D(2), (float[]) {0.25f, -2}, 0);
	kt_end();

	begin("Sqrt", 13, "Sqrt bfloat16");
	kt_input(OX_BFLOAT16, 1, D(2), (uint16_t[]) {0x4080, 0x4110});	/* 4, 9 */
	kt_run(EW, 1);
	kt_expect_values(0, OX_BFLOAT16, 1, D(2), (uint16_t[]) {0x4000, 0x4040}, 0);
	kt_end();

	begin("Exp", 13, "Exp int refused");
	kt_input_i64(1, D(1), (int64_t[]) {1});
	kt_run(EW, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	kt_begin("IsNaN", "", 13);
	kt_input_f32(1, D(3), (float[]) {NAN, 1, INFINITY});
	kt_run(EW, 1);
	expect_bool(0, 1, D(3), (uint8_t[]) {1, 0, 0});
	kt_end();

	begin("IsNaN", 13, "IsNaN float16");
	kt_input(OX_FLOAT16, 1, D(2), (uint16_t[]) {0x7e00, 0x3c00});
	kt_run(EW, 1);
	expect_bool(0, 1, D(2), (uint8_t[]) {1, 0});
	kt_end();

	kt_begin("IsInf", "", 10);
	kt_input_f32(1, D(4), (float[]) {INFINITY, -INFINITY, NAN, 1});
	kt_run(EW, 1);
	expect_bool(0, 1, D(4), (uint8_t[]) {1, 1, 0, 0});
	kt_end();

	begin("IsInf", 10, "IsInf negative only");
	kt_attr_int("detect_positive", 0);
	kt_input_f32(1, D(2), (float[]) {INFINITY, -INFINITY});
	kt_run(EW, 1);
	expect_bool(0, 1, D(2), (uint8_t[]) {0, 1});
	kt_end();

	kt_begin("Not", "", 1);
	kt_input(OX_BOOL, 1, D(2), (uint8_t[]) {1, 0});
	kt_run(EW, 1);
	expect_bool(0, 1, D(2), (uint8_t[]) {0, 1});
	kt_end();

	kt_begin("BitwiseNot", "", 18);
	kt_input(OX_UINT8, 1, D(2), (uint8_t[]) {0, 0x0f});
	kt_run(EW, 1);
	kt_expect_values(0, OX_UINT8, 1, D(2), (uint8_t[]) {0xff, 0xf0}, 0);
	kt_end();

	begin("Abs", 13, "Abs empty");
	kt_input_f32(2, D(0, 3), NULL);
	kt_run(EW, 1);
	kt_expect_f32(0, 2, D(0, 3), NULL, 0);
	kt_end();
}

/* ---- logic -------------------------------------------------------------- */

static void
test_logic(void)
{
	begin("Greater", 13, "Greater broadcast");
	kt_input_f32(2, D(2, 2), (float[]) {1, 5, 3, 0});
	kt_input_f32(1, D(2), (float[]) {2, 2});
	kt_run(EW, 1);
	expect_bool(0, 2, D(2, 2), (uint8_t[]) {0, 1, 1, 0});
	kt_end();

	begin("LessOrEqual", 16, "LessOrEqual int");
	kt_input_i64(1, D(3), (int64_t[]) {1, 2, 3});
	kt_input_i64(0, NULL, (int64_t[]) {2});
	kt_run(EW, 1);
	expect_bool(0, 1, D(3), (uint8_t[]) {1, 1, 0});
	kt_end();

	begin("GreaterOrEqual", 16, "GreaterOrEqual NaN");
	kt_input_f32(1, D(2), (float[]) {NAN, 1});
	kt_input_f32(1, D(2), (float[]) {NAN, 1});
	kt_run(EW, 1);
	expect_bool(0, 1, D(2), (uint8_t[]) {0, 1});
	kt_end();

	begin("Equal", 19, "Equal strings");
	kt_input_strings(1, D(3), (const char *[]) {"a", "bc", ""});
	kt_input_strings(2, D(2, 1), (const char *[]) {"bc", ""});
	kt_run(EW, 1);
	expect_bool(0, 2, D(2, 3), (uint8_t[]) {0, 1, 0, 0, 0, 1});
	kt_end();

	begin("Equal", 19, "Equal string vs int");
	kt_input_strings(1, D(1), (const char *[]) {"1"});
	kt_input_i64(1, D(1), (int64_t[]) {1});
	kt_run(EW, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	static const struct
	{
		const char *op;
		uint8_t		want[4];
	}			logic[] = {
		{"And", {0, 0, 0, 1}}, {"Or", {0, 1, 1, 1}}, {"Xor", {0, 1, 1, 0}},
	};

	for (int i = 0; i < 3; i++)
	{
		kt_begin(logic[i].op, "", 7);
		kt_input(OX_BOOL, 1, D(4), (uint8_t[]) {0, 0, 1, 1});
		kt_input(OX_BOOL, 1, D(4), (uint8_t[]) {0, 1, 0, 1});
		kt_run(EW, 1);
		expect_bool(0, 1, D(4), logic[i].want);
		kt_end();
	}

	begin("And", 7, "And float refused");
	kt_input_f32(1, D(1), (float[]) {1});
	kt_input_f32(1, D(1), (float[]) {1});
	kt_run(EW, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	begin("BitShift", 11, "BitShift left");
	kt_attr_string("direction", "LEFT");
	kt_input(OX_UINT8, 1, D(3), (uint8_t[]) {1, 3, 1});
	kt_input(OX_UINT8, 1, D(3), (uint8_t[]) {1, 7, 8});
	kt_run(EW, 1);
	kt_expect_values(0, OX_UINT8, 1, D(3), (uint8_t[]) {2, 128, 0}, 0);
	kt_end();

	begin("BitShift", 11, "BitShift right");
	kt_attr_string("direction", "RIGHT");
	kt_input(OX_UINT64, 1, D(2), (uint64_t[]) {16, 16});
	kt_input(OX_UINT64, 1, D(2), (uint64_t[]) {2, 64});
	kt_run(EW, 1);
	kt_expect_values(0, OX_UINT64, 1, D(2), (uint64_t[]) {4, 0}, 0);
	kt_end();

	begin("BitShift", 11, "BitShift no direction");
	kt_input(OX_UINT8, 1, D(1), (uint8_t[]) {1});
	kt_input(OX_UINT8, 1, D(1), (uint8_t[]) {1});
	kt_run(EW, 1);
	kt_expect_error(OX_INVALID_MODEL);
	kt_end();

	begin("BitShift", 11, "BitShift unknown direction");
	kt_attr_string("direction", "UP");
	kt_input(OX_UINT8, 1, D(1), (uint8_t[]) {1});
	kt_input(OX_UINT8, 1, D(1), (uint8_t[]) {1});
	kt_run(EW, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	begin("BitwiseAnd", 18, "BitwiseAnd/Or/Xor");
	kt_input(OX_INT32, 1, D(2), (int32_t[]) {0x0f, -1});
	kt_input(OX_INT32, 0, NULL, (int32_t[]) {0x3c});
	kt_run(EW, 1);
	kt_expect_values(0, OX_INT32, 1, D(2), (int32_t[]) {0x0c, 0x3c}, 0);
	kt_end();
}

/* ---- variadic, Where, Clip ---------------------------------------------- */

static void
test_select(void)
{
	begin("Max", 13, "Max broadcast 3");
	kt_input_f32(1, D(3), (float[]) {1, 5, 3});
	kt_input_f32(2, D(2, 1), (float[]) {2, 4});
	kt_input_f32(0, NULL, (float[]) {3});
	kt_run(EW, 1);
	kt_expect_f32(0, 2, D(2, 3), (float[]) {3, 5, 3, 4, 5, 4}, 0);
	kt_end();

	begin("Min", 13, "Min NaN propagates");
	kt_input_f32(1, D(2), (float[]) {NAN, 1});
	kt_input_f32(1, D(2), (float[]) {0, NAN});
	kt_run(EW, 1);
	kt_expect_f32(0, 1, D(2), (float[]) {NAN, NAN}, 0);
	kt_end();

	begin("Max", 13, "Max int64");
	kt_input_i64(1, D(2), (int64_t[]) {-5, 9});
	kt_input_i64(1, D(2), (int64_t[]) {-7, 10});
	kt_run(EW, 1);
	kt_expect_i64(0, 1, D(2), (int64_t[]) {-5, 10});
	kt_end();

	begin("Sum", 13, "Sum single");
	kt_input_f32(1, D(2), (float[]) {1, 2});
	kt_run(EW, 1);
	kt_expect_f32(0, 1, D(2), (float[]) {1, 2}, 0);
	kt_end();

	kt_begin("Mean", "", 13);
	kt_input_f32(1, D(2), (float[]) {1, 2});
	kt_input_f32(1, D(2), (float[]) {3, 6});
	kt_input_f32(0, NULL, (float[]) {2});
	kt_run(EW, 1);
	kt_expect_f32(0, 1, D(2), (float[]) {2, 10.0f / 3}, 1e-7);
	kt_end();

	/* more inputs than one broadcast iterator takes: folded in groups;
	 * the last one widens the shape */
	begin("Sum", 13, "Sum 16 inputs");
	for (int i = 0; i < 15; i++)
		kt_input_f32(1, D(2), (float[]) {1, (float) i});
	kt_input_f32(2, D(2, 1), (float[]) {100, 200});
	kt_run(EW, 1);
	kt_expect_f32(0, 2, D(2, 2), (float[]) {115, 205, 215, 305}, 0);
	kt_end();

	begin("Sum", 13, "Sum no inputs");
	kt_run(EW, 1);
	kt_expect_error(OX_INVALID_MODEL);
	kt_end();

	kt_begin("Where", "", 16);
	kt_input(OX_BOOL, 2, D(2, 1), (uint8_t[]) {1, 0});
	kt_input_f32(1, D(3), (float[]) {1, 2, 3});
	kt_input_f32(0, NULL, (float[]) {-1});
	kt_run(EW, 1);
	kt_expect_f32(0, 2, D(2, 3), (float[]) {1, 2, 3, -1, -1, -1}, 0);
	kt_end();

	begin("Where", 16, "Where strings");
	kt_input(OX_BOOL, 1, D(3), (uint8_t[]) {1, 0, 1});
	kt_input_strings(1, D(3), (const char *[]) {"a", "b", "c"});
	kt_input_strings(0, NULL, (const char *[]) {"zz"});
	kt_run(EW, 1);
	expect_strings(0, 1, D(3), (const char *[]) {"a", "zz", "c"});
	kt_end();

	begin("Where", 16, "Where bad condition");
	kt_input_f32(1, D(1), (float[]) {1});
	kt_input_f32(1, D(1), (float[]) {1});
	kt_input_f32(1, D(1), (float[]) {1});
	kt_run(EW, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	begin("Clip", 6, "Clip attributes (opset 6)");
	kt_attr_float("min", -1);
	kt_attr_float("max", 1);
	kt_input_f32(1, D(4), (float[]) {-5, 0.5f, 5, NAN});
	kt_run(EW, 1);
	kt_expect_f32(0, 1, D(4), (float[]) {-1, 0.5f, 1, NAN}, 0);
	kt_end();

	begin("Clip", 13, "Clip inputs, max omitted");
	kt_input_f32(1, D(3), (float[]) {-5, 0.5f, 5});
	kt_input_f32(0, NULL, (float[]) {0});
	kt_input_none();
	kt_run(EW, 1);
	kt_expect_f32(0, 1, D(3), (float[]) {0, 0.5f, 5}, 0);
	kt_end();

	begin("Clip", 13, "Clip min > max gives max");
	kt_input_f32(1, D(2), (float[]) {-5, 5});
	kt_input_f32(0, NULL, (float[]) {2});
	kt_input_f32(0, NULL, (float[]) {1});
	kt_run(EW, 1);
	kt_expect_f32(0, 1, D(2), (float[]) {1, 1}, 0);
	kt_end();

	begin("Clip", 13, "Clip int64");
	kt_input_i64(1, D(3), (int64_t[]) {INT64_MIN, 3, INT64_MAX});
	kt_input_none();
	kt_input_i64(0, NULL, (int64_t[]) {2});
	kt_run(EW, 1);
	kt_expect_i64(0, 1, D(3), (int64_t[]) {INT64_MIN, 2, 2});
	kt_end();

	begin("Clip", 13, "Clip bound type mismatch");
	kt_input_f32(1, D(1), (float[]) {1});
	kt_input_i64(0, NULL, (int64_t[]) {0});
	kt_run(EW, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();
}

/* ---- Cast ------------------------------------------------------------------ */

static void
test_cast(void)
{
	begin("Cast", 13, "Cast float to int32");
	kt_attr_int("to", OX_INT32);
	kt_input_f32(1, D(4), (float[]) {1.9f, -1.9f, 3e10f, NAN});
	kt_run(EW, 1);
	kt_expect_values(0, OX_INT32, 1, D(4), (int32_t[]) {1, -1, INT32_MAX, 0}, 0);
	kt_end();

	begin("Cast", 13, "Cast int to float16");
	kt_attr_int("to", OX_FLOAT16);
	kt_input_i64(1, D(2), (int64_t[]) {1, -2});
	kt_run(EW, 1);
	kt_expect_values(0, OX_FLOAT16, 1, D(2), (uint16_t[]) {0x3c00, 0xc000}, 0);
	kt_end();

	begin("Cast", 13, "Cast float to bool");
	kt_attr_int("to", OX_BOOL);
	kt_input_f32(1, D(3), (float[]) {0, -0.5f, NAN});
	kt_run(EW, 1);
	expect_bool(0, 1, D(3), (uint8_t[]) {0, 1, 1});
	kt_end();

	begin("Cast", 19, "Cast float to string");
	kt_attr_int("to", OX_STRING);
	kt_attr_int("saturate", 1);
	kt_input_f32(1, D(10), (float[]) {0.1f, 100, 1e-5f, 1e16f, -0.0f, NAN, -INFINITY,
	123456.7f, 1e6f, 3.4028235e38f});
	kt_run(EW, 1);
	expect_strings(0, 1, D(10), (const char *[]) {"0.1", "100.0", "1e-05", "1e+16", "-0.0",
	"nan", "-inf", "123456.7", "1e+06", "3.4028235e+38"});
	kt_end();

	begin("Cast", 13, "Cast double to string");
	kt_attr_int("to", OX_STRING);
	kt_input(OX_DOUBLE, 1, D(4), (double[]) {0.1, 1e15, 1.0 / 3, 5e-324});
	kt_run(EW, 1);
	expect_strings(0, 1, D(4), (const char *[]) {"0.1", "1000000000000000.0",
	"0.3333333333333333", "5e-324"});
	kt_end();

	begin("Cast", 13, "Cast int and bool to string");
	kt_attr_int("to", OX_STRING);
	kt_input_i64(1, D(2), (int64_t[]) {-42, INT64_MAX});
	kt_run(EW, 1);
	expect_strings(0, 1, D(2), (const char *[]) {"-42", "9223372036854775807"});
	kt_end();

	begin("Cast", 13, "Cast bool to string");
	kt_attr_int("to", OX_STRING);
	kt_input(OX_BOOL, 1, D(2), (uint8_t[]) {1, 0});
	kt_run(EW, 1);
	expect_strings(0, 1, D(2), (const char *[]) {"True", "False"});
	kt_end();

	begin("Cast", 13, "Cast string to float");
	kt_attr_int("to", OX_FLOAT);
	kt_input_strings(1, D(7), (const char *[]) {"3.14", "1e-5", "INF", "+INF", "-inf",
	"NaN", " 7 "});
	kt_run(EW, 1);
	kt_expect_f32(0, 1, D(7), (float[]) {3.14f, 1e-5f, INFINITY, INFINITY, -INFINITY, NAN, 7}, 0);
	kt_end();

	begin("Cast", 13, "Cast string to int64");
	kt_attr_int("to", OX_INT64);
	kt_input_strings(1, D(3), (const char *[]) {"-9223372036854775808", "1000", "100.5"});
	kt_run(EW, 1);
	kt_expect_i64(0, 1, D(3), (int64_t[]) {INT64_MIN, 1000, 100});
	kt_end();

	begin("Cast", 13, "Cast bad string");
	kt_attr_int("to", OX_FLOAT);
	kt_input_strings(1, D(2), (const char *[]) {"1", "Hello World!"});
	kt_run(EW, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	begin("Cast", 13, "Cast string to string");
	kt_attr_int("to", OX_STRING);
	kt_input_strings(1, D(2), (const char *[]) {"x", ""});
	kt_run(EW, 1);
	expect_strings(0, 1, D(2), (const char *[]) {"x", ""});
	kt_end();

	begin("Cast", 1, "Cast opset 1 string to");
	kt_attr_string("to", "DOUBLE");
	kt_input_f32(1, D(1), (float[]) {0.5f});
	kt_run(EW, 1);
	kt_expect_values(0, OX_DOUBLE, 1, D(1), (double[]) {0.5}, 0);
	kt_end();

	begin("Cast", 19, "Cast to an unknown type unsupported");
	kt_attr_int("to", 27);
	kt_input_f32(1, D(1), (float[]) {0.5f});
	kt_run(EW, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	begin("Cast", 13, "Cast without to");
	kt_input_f32(1, D(1), (float[]) {0.5f});
	kt_run(EW, 1);
	kt_expect_error(OX_INVALID_MODEL);
	kt_end();

	kt_begin("CastLike", "", 15);
	kt_input_f32(1, D(2), (float[]) {2.7f, -1});
	kt_input(OX_UINT8, 1, D(1), (uint8_t[]) {0});
	kt_run(EW, 1);
	kt_expect_values(0, OX_UINT8, 1, D(2), (uint8_t[]) {2, 0}, 0);
	kt_end();
}

/*
 * In place: an input of the output's type and size that the executor
 * releases after the node (ctx->movable) lends the output its buffer,
 * whichever operand it is; a broadcast operand, another type (a comparison's
 * bool output) or an input that is not movable does not.
 */
static void
check_in_place(const char *op, bool big_first, uint64_t movable, int expect_taken)
{
	float		big[12],
				small[3] = {0.5f, -1, 2},
				want[12];
	const void *before[2];
	const ox_tensor *y;
	int			taken = -1;
	char		label[96];

	for (int i = 0; i < 12; i++)
		big[i] = (float) i - 4.5f;
	for (int i = 0; i < 12; i++)
		want[i] = strcmp(op, "Sub") == 0 ? (big_first ? big[i] - small[i % 3] : small[i % 3] - big[i])
			: big[i] * small[i % 3];
	snprintf(label, sizeof(label), "%s in place (big first %d, movable %llu)", op, big_first,
			 (unsigned long long) movable);
	kt_begin(op, "", 14);
	kt.label = label;
	if (big_first)
	{
		kt_input_f32(2, D(4, 3), big);
		kt_input_f32(1, D(3), small);
	}
	else
	{
		kt_input_f32(1, D(3), small);
		kt_input_f32(2, D(4, 3), big);
	}
	before[0] = kt.inputs[0].tensor.data;
	before[1] = kt.inputs[1].tensor.data;
	kt.movable = movable;
	kt_run(EW, 1);
	kt_expect_ok();
	kt_expect_f32(0, 2, D(4, 3), want, 0);
	y = kt_output(0);
	for (int i = 0; i < 2 && y; i++)
		if (y->data == before[i])
			taken = i;
	if (taken != expect_taken)
		kt_fail("%s: took the buffer of input %.0f, expected %.0f", op, taken, expect_taken);
	kt_end();
}

static void
test_in_place(void)
{
	check_in_place("Sub", true, 3, 0);
	check_in_place("Sub", false, 3, 1);
	check_in_place("Mul", true, 2, -1);	/* only the broadcast row may go */
	check_in_place("Mul", false, 1, -1);
	check_in_place("Mul", true, 0, -1);
	check_in_place("Sub", false, 2, 1);

	/* a unary op in place; a comparison (bool output) never */
	{
		const float x[3] = {1, -2, 3};
		const void *before;

		kt_begin("Neg", "", 13);
		kt_input_f32(1, D(3), x);
		before = kt.inputs[0].tensor.data;
		kt.movable = 1;
		kt_run(EW, 1);
		kt_expect_f32(0, 1, D(3), (float[]) {-1, 2, -3}, 0);
		if (!kt_output(0) || kt_output(0)->data != before)
			kt_fail("Neg: %s%.0f%.0f", "did not run in place", 0, 0);
		kt_end();

		kt_begin("Equal", "", 13);
		kt_input_f32(1, D(3), x);
		kt_input_f32(1, D(3), x);
		kt.movable = 3;
		kt_run(EW, 1);
		kt_expect_ok();
		if (!kt_output(0) || kt_output(0)->dtype != OX_BOOL || kt_output(0)->data == kt.inputs[0].tensor.data)
			kt_fail("Equal: %s%.0f%.0f", "bool output in a float input's buffer", 0, 0);
		kt_end();
	}
}

int
main(void)
{
	test_plans();
	test_in_place();
	test_ranges();
	test_arith();
	test_unary();
	test_logic();
	test_select();
	test_cast();
	return kt_summary();
}
