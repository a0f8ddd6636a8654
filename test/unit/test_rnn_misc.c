/*
 * test_rnn_misc.c
 *	  Unit tests of the rnn family (RNN, GRU, LSTM): the hand-written cases.
 *
 * These cover attribute handling, edge sizes (empty batch, empty sequence)
 * and error reporting: misshaped inputs, bad attribute values and types;
 * each error must come back with a message instead of touching memory.  The
 * generated value cases are in test_rnn.c and test_rnn_lstm.c.
 */
#include "kernel_test.h"

/* enough ones for the largest (mis)shaped input of these cases: kt_input reads numel of them */
#define N_ONES 4096
static float ones[N_ONES];

static void
fill_ones(void)
{
	for (int i = 0; i < N_ONES; i++)
		ones[i] = 1.0f;
}

/*
 * LSTM, seq 2, batch 1, input 2, hidden 2, forward, with every input
 * shape overridable; NULL dims keep the valid default.
 */
typedef struct lstm_shapes
{
	int			x_rank;
	int64_t		x[3];
	int64_t		w[3];
	int64_t		r[3];
	int64_t		b[2];
	int64_t		h0[3];
	int64_t		p[2];
} lstm_shapes;

static const lstm_shapes lstm_ok = {
	3, {2, 1, 2}, {1, 8, 2}, {1, 8, 2}, {1, 16}, {1, 1, 2}, {1, 6}
};

static void
lstm_inputs(const lstm_shapes *s, ox_dtype wdt, const int32_t *lens, int64_t n_lens, ox_dtype lens_dt)
{
	int64_t		ldims[1] = {n_lens};

	fill_ones();
	kt_input(OX_FLOAT, s->x_rank, s->x, ones);
	kt_input(wdt, 3, s->w, ones);
	kt_input(OX_FLOAT, 3, s->r, ones);
	kt_input(OX_FLOAT, 2, s->b, ones);
	if (lens)
		kt_input(lens_dt, 1, ldims, lens);
	else
		kt_input_none();
	kt_input(OX_FLOAT, 3, s->h0, ones);
	kt_input(OX_FLOAT, 3, s->h0, ones);
	kt_input(OX_FLOAT, 2, s->p, ones);
}

static void
expect_lstm_error(const char *label, const lstm_shapes *s, ox_dtype wdt,
				  const int32_t *lens, ox_dtype lens_dt, ox_code code)
{
	kt_begin("LSTM", "", 14);
	kt.label = label;
	kt_attr_int("hidden_size", 2);
	lstm_inputs(s, wdt, lens, 1, lens_dt);
	kt_run(ox_kernels_rnn, ox_kernels_rnn_count, 3);
	kt_expect_error(code);
	if (kt.rc != OX_OK && kt.st.msg[0] == '\0')
		kt_fail("error without a message%s%.0f%.0f", "", 0, 0);
	kt_end();
}

static void
test_shape_errors(void)
{
	lstm_shapes s;
	static const int32_t len_long[1] = {3};
	static const int32_t len_neg[1] = {-1};
	/* two int32 slots: read as one int64 (2) by the int64 case */
	static const int32_t len_ok[2] = {2, 0};

	/* the valid setup runs */
	kt_begin("LSTM", "", 14);
	kt.label = "LSTM shape baseline";
	kt_attr_int("hidden_size", 2);
	lstm_inputs(&lstm_ok, OX_FLOAT, len_ok, 1, OX_INT32);
	kt_run(ox_kernels_rnn, ox_kernels_rnn_count, 3);
	kt_expect_ok();
	kt_end();

	s = lstm_ok;
	s.w[1] = 6;
	expect_lstm_error("W with 3 gates for LSTM", &s, OX_FLOAT, NULL, OX_INT32, OX_INVALID_ARGUMENT);
	s = lstm_ok;
	s.w[2] = 3;
	expect_lstm_error("W input size differs from X", &s, OX_FLOAT, NULL, OX_INT32, OX_INVALID_ARGUMENT);
	s = lstm_ok;
	s.w[0] = 2;
	expect_lstm_error("W with 2 directions for forward", &s, OX_FLOAT, NULL, OX_INT32, OX_INVALID_ARGUMENT);
	s = lstm_ok;
	s.r[2] = 3;
	expect_lstm_error("R hidden differs from hidden_size", &s, OX_FLOAT, NULL, OX_INT32, OX_INVALID_ARGUMENT);
	s = lstm_ok;
	s.b[1] = 8;
	expect_lstm_error("B of 4 * hidden", &s, OX_FLOAT, NULL, OX_INT32, OX_INVALID_ARGUMENT);
	s = lstm_ok;
	s.h0[1] = 2;
	expect_lstm_error("initial_h batch differs", &s, OX_FLOAT, NULL, OX_INT32, OX_INVALID_ARGUMENT);
	s = lstm_ok;
	s.p[1] = 4;
	expect_lstm_error("P of 2 * hidden", &s, OX_FLOAT, NULL, OX_INT32, OX_INVALID_ARGUMENT);
	s = lstm_ok;
	s.x_rank = 2;
	expect_lstm_error("X of rank 2", &s, OX_FLOAT, NULL, OX_INT32, OX_INVALID_ARGUMENT);
	expect_lstm_error("W double, X float", &lstm_ok, OX_DOUBLE, NULL, OX_INT32, OX_INVALID_ARGUMENT);
	expect_lstm_error("sequence_lens past seq_length", &lstm_ok, OX_FLOAT, len_long, OX_INT32, OX_INVALID_ARGUMENT);
	expect_lstm_error("negative sequence_lens", &lstm_ok, OX_FLOAT, len_neg, OX_INT32, OX_INVALID_ARGUMENT);
	expect_lstm_error("sequence_lens of int64", &lstm_ok, OX_FLOAT, len_ok, OX_INT64, OX_INVALID_ARGUMENT);

	/* sequence_lens of the wrong length */
	kt_begin("LSTM", "", 14);
	kt.label = "sequence_lens of 2 for batch 1";
	kt_attr_int("hidden_size", 2);
	{
		static const int32_t lens2[2] = {1, 1};

		lstm_inputs(&lstm_ok, OX_FLOAT, lens2, 2, OX_INT32);
	}
	kt_run(ox_kernels_rnn, ox_kernels_rnn_count, 3);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	/* integer X */
	kt_begin("RNN", "", 14);
	kt.label = "RNN int32 X";
	{
		static const int32_t xi[4] = {1, 2, 3, 4};
		int64_t		xd[3] = {2, 1, 2};
		int64_t		wd[3] = {1, 2, 2};

		kt_input(OX_INT32, 3, xd, xi);
		kt_input(OX_INT32, 3, wd, xi);
		kt_input(OX_INT32, 3, wd, xi);
	}
	kt_run(ox_kernels_rnn, ox_kernels_rnn_count, 2);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	/* R omitted */
	kt_begin("GRU", "", 14);
	kt.label = "GRU without R";
	{
		int64_t		xd[3] = {2, 1, 2};
		int64_t		wd[3] = {1, 6, 2};

		kt_input_f32(3, xd, ones);
		kt_input_f32(3, wd, ones);
		kt_input_none();
	}
	kt_run(ox_kernels_rnn, ox_kernels_rnn_count, 2);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();
}

/* one RNN over a 1 x 1 x 1 problem with the given string/int attribute */
static void
expect_attr_error(const char *label, const char *op, const char *name, const char *sval,
				  int64_t ival, ox_code code)
{
	int			g = strcmp(op, "RNN") == 0 ? 1 : strcmp(op, "GRU") == 0 ? 3 : 4;
	int64_t		xd[3] = {1, 1, 1};
	int64_t		wd[3] = {1, g, 1};

	kt_begin(op, "", 14);
	kt.label = label;
	if (sval)
		kt_attr_string(name, sval);
	else
		kt_attr_int(name, ival);
	kt_input_f32(3, xd, ones);
	kt_input_f32(3, wd, ones);
	kt_input_f32(3, wd, ones);
	kt_run(ox_kernels_rnn, ox_kernels_rnn_count, 2);
	kt_expect_error(code);
	kt_end();
}

static void
test_attribute_errors(void)
{
	int64_t		xd[3] = {1, 1, 1};
	int64_t		wd[3] = {1, 1, 1};

	expect_attr_error("direction sideways", "RNN", "direction", "sideways", 0, OX_INVALID_ARGUMENT);
	expect_attr_error("layout 2", "GRU", "layout", NULL, 2, OX_INVALID_ARGUMENT);
	expect_attr_error("linear_before_reset 2", "GRU", "linear_before_reset", NULL, 2, OX_INVALID_ARGUMENT);
	expect_attr_error("input_forget -1", "LSTM", "input_forget", NULL, -1, OX_INVALID_ARGUMENT);
	expect_attr_error("hidden_size 0", "LSTM", "hidden_size", NULL, 0, OX_INVALID_ARGUMENT);

	kt_begin("RNN", "", 14);
	kt.label = "unknown activation";
	{
		static const char *acts[] = {"Swish"};

		kt_attr_strings("activations", 1, acts);
	}
	kt_input_f32(3, xd, ones);
	kt_input_f32(3, wd, ones);
	kt_input_f32(3, wd, ones);
	kt_run(ox_kernels_rnn, ox_kernels_rnn_count, 2);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	kt_begin("RNN", "", 14);
	kt.label = "two activations for a forward RNN";
	{
		static const char *acts[] = {"Tanh", "Relu"};

		kt_attr_strings("activations", 2, acts);
	}
	kt_input_f32(3, xd, ones);
	kt_input_f32(3, wd, ones);
	kt_input_f32(3, wd, ones);
	kt_run(ox_kernels_rnn, ox_kernels_rnn_count, 2);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	kt_begin("RNN", "", 14);
	kt.label = "negative clip";
	kt_attr_float("clip", -1.0f);
	kt_input_f32(3, xd, ones);
	kt_input_f32(3, wd, ones);
	kt_input_f32(3, wd, ones);
	kt_run(ox_kernels_rnn, ox_kernels_rnn_count, 2);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	/* activation names are matched without regard to case, as onnxruntime does */
	kt_begin("RNN", "", 14);
	kt.label = "lower-case activation name";
	{
		static const char *acts[] = {"relu"};
		static const float three[1] = {3};
		int64_t		bd[2] = {1, 2};
		int64_t		yd[4] = {1, 1, 1, 1};

		kt_attr_strings("activations", 1, acts);
		kt_input_f32(3, xd, ones);
		kt_input_f32(3, wd, ones);
		kt_input_f32(3, wd, ones);
		kt_input_f32(2, bd, ones);
		kt_run(ox_kernels_rnn, ox_kernels_rnn_count, 1);
		/* relu(x w + h0 r + wb + rb) = relu(1 + 0 + 1 + 1) */
		kt_expect_f32(0, 4, yd, three, 1e-6);
	}
	kt_end();
}

/* empty batch and empty sequence produce empty or zero outputs */
static void
test_edge_sizes(void)
{
	int64_t		wd[3] = {1, 4, 2};
	int64_t		rd[3] = {1, 4, 1};

	kt_begin("LSTM", "", 14);
	kt.label = "LSTM batch 0";
	{
		int64_t		xd[3] = {3, 0, 2};
		int64_t		yd[4] = {3, 1, 0, 1};
		int64_t		hd[3] = {1, 0, 1};

		kt_input_f32(3, xd, ones);
		kt_input_f32(3, wd, ones);
		kt_input_f32(3, rd, ones);
		kt_run(ox_kernels_rnn, ox_kernels_rnn_count, 3);
		kt_check_shape(0, OX_FLOAT, 4, yd);
		kt_check_shape(1, OX_FLOAT, 3, hd);
		kt_check_shape(2, OX_FLOAT, 3, hd);
	}
	kt_end();

	kt_begin("LSTM", "", 14);
	kt.label = "LSTM seq_length 0";
	{
		int64_t		xd[3] = {0, 2, 2};
		int64_t		yd[4] = {0, 1, 2, 1};
		int64_t		hd[3] = {1, 2, 1};
		static const float zeros[2] = {0, 0};

		kt_input_f32(3, xd, ones);
		kt_input_f32(3, wd, ones);
		kt_input_f32(3, rd, ones);
		kt_run(ox_kernels_rnn, ox_kernels_rnn_count, 3);
		kt_check_shape(0, OX_FLOAT, 4, yd);
		kt_expect_f32(1, 3, hd, zeros, 0);
		kt_expect_f32(2, 3, hd, zeros, 0);
	}
	kt_end();

	/* input_size 0: only the recurrence and the biases act */
	kt_begin("RNN", "", 14);
	kt.label = "RNN input_size 0";
	{
		int64_t		xd[3] = {2, 1, 0};
		int64_t		w0[3] = {1, 1, 0};
		int64_t		r1[3] = {1, 1, 1};
		int64_t		bd[2] = {1, 2};
		int64_t		yd[4] = {2, 1, 1, 1};
		float		want[2];

		want[0] = tanhf(2.0f);
		want[1] = tanhf(want[0] + 2.0f);
		kt_input_f32(3, xd, ones);
		kt_input_f32(3, w0, ones);
		kt_input_f32(3, r1, ones);
		kt_input_f32(2, bd, ones);
		kt_run(ox_kernels_rnn, ox_kernels_rnn_count, 1);
		kt_expect_f32(0, 4, yd, want, 1e-6);
	}
	kt_end();
}

int
main(void)
{
	test_shape_errors();
	test_attribute_errors();
	test_edge_sizes();
	return kt_summary();
}
