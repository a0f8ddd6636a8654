/*
 * rnn.c
 *	  RNN, GRU and LSTM (ai.onnx, every opset from 1), and the rnn family
 *	  table.
 *
 * The three ops share one driver.  Per direction, the input projection
 * X W^T of all time steps is one GEMM (with the biases that are not tied
 * to the reset gate folded in); each time step is then one GEMM
 * H_{t-1} R^T over the whole batch (two for GRU with
 * linear_before_reset = 0, whose reset gate applies before the recurrent
 * product) followed by element-wise gate math on the batch rows that are
 * still inside their sequence.
 *
 * sequence_lens: batch entry b runs time steps 0 .. len_b - 1, backwards
 * for the reverse direction.  Y is zero past len_b; Y_h and Y_c hold the
 * state after the entry's last step, and zero when len_b is 0 (what
 * onnxruntime does).  clip bounds the input of every gate activation but
 * not the cell state fed to h(), also as onnxruntime does.
 *
 * float and double are computed in their own precision; float16 and
 * bfloat16 are staged through float32.  The gate math is written once as a
 * macro and instantiated for the two precisions.
 */
#include "kernels/kernel.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/fused_act.h"
#include "kernels/cpu/sgemm.h"
#include "kernels/cpu/tensor_ops.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum rnn_cell
{
	RNN_CELL_RNN,
	RNN_CELL_GRU,
	RNN_CELL_LSTM
} rnn_cell;

typedef enum rnn_act_kind
{
	ACT_RELU,
	ACT_TANH,
	ACT_SIGMOID,
	ACT_AFFINE,
	ACT_LEAKY_RELU,
	ACT_THRESHOLDED_RELU,
	ACT_SCALED_TANH,
	ACT_HARD_SIGMOID,
	ACT_ELU,
	ACT_SOFTSIGN,
	ACT_SOFTPLUS
} rnn_act_kind;

typedef struct rnn_act
{
	rnn_act_kind kind;
	float		alpha;
	float		beta;
} rnn_act;

/* which activations take alpha / beta, and their defaults when not given */
typedef struct rnn_act_info
{
	const char *name;
	rnn_act_kind kind;
	bool		takes_alpha;
	bool		takes_beta;
	float		alpha;
	float		beta;
} rnn_act_info;

static const rnn_act_info rnn_act_infos[] = {
	{"Relu", ACT_RELU, false, false, 0.0f, 0.0f},
	{"Tanh", ACT_TANH, false, false, 0.0f, 0.0f},
	{"Sigmoid", ACT_SIGMOID, false, false, 0.0f, 0.0f},
	{"Affine", ACT_AFFINE, true, true, 1.0f, 0.0f},
	{"LeakyRelu", ACT_LEAKY_RELU, true, false, 0.01f, 0.0f},
	{"ThresholdedRelu", ACT_THRESHOLDED_RELU, true, false, 1.0f, 0.0f},
	{"ScaledTanh", ACT_SCALED_TANH, true, true, 1.0f, 1.0f},
	{"HardSigmoid", ACT_HARD_SIGMOID, true, true, 0.2f, 0.5f},
	{"Elu", ACT_ELU, true, false, 1.0f, 0.0f},
	{"Softsign", ACT_SOFTSIGN, false, false, 0.0f, 0.0f},
	{"Softplus", ACT_SOFTPLUS, false, false, 0.0f, 0.0f},
};

#define RNN_MAX_ACTS 3

/* attributes, parsed once per session */
typedef struct rnn_state
{
	rnn_cell	cell;
	const char *op;
	int			n_gates;		/* 1 (RNN), 3 (GRU), 4 (LSTM) */
	int			num_dir;		/* 1 or 2 */
	bool		reverse;		/* direction "reverse" */
	int64_t		hidden_size;	/* -1 when absent: taken from R */
	bool		has_clip;
	float		clip;
	int			layout;			/* 0: time-major, 1: batch-major */
	bool		linear_before_reset;
	bool		input_forget;
	rnn_act		act[2][RNN_MAX_ACTS];	/* per direction: f (, g (, h)) */
	/* a small constant float R as [hidden, gates * hidden] per direction (rnn_r_kmajor) */
	float	   *r_kmajor;
	const void *r_src;			/* the constant R those copies were made from */
	/* constant float W and R packed for the SGEMM per direction (rnn_pack_constants), or NULL */
	ox_sgemm_packed *w_packed[2];
	ox_sgemm_packed *r_packed[2];	/* R's first rcols rows (rnn_compute) */
	ox_sgemm_packed *rh_packed[2];	/* GRU, linear_before_reset = 0: R's h block */
	const void *w_src;			/* the constant W */
} rnn_state;

/* sizes of one run */
typedef struct rnn_dims
{
	int64_t		seq;
	int64_t		batch;
	int64_t		input;
	int64_t		hidden;
} rnn_dims;

/* raw data of one run, in the compute precision; absent ones are NULL */
typedef struct rnn_io
{
	const void *x;
	const void *w;
	const void *r;
	const void *b;
	const int32_t *lens;
	const void *h0;
	const void *c0;
	const void *p;
	void	   *y;
	void	   *yh;
	void	   *yc;
} rnn_io;

/* what the typed gate functions see for one time step of one direction */
typedef struct rnn_step
{
	const rnn_state *s;
	const rnn_act *act;			/* this direction's activations */
	int64_t		hidden;
	int64_t		gh;				/* n_gates * hidden: row stride of xp and gates */
	int64_t		n_rows;			/* batch rows inside their sequence */
	const int64_t *rows;		/* their batch indices */
	const int64_t *xrows;		/* their rows in xp */
	const void *xp;				/* [seq * batch, gh] input projection + biases */
	void	   *gates;			/* [batch, gh] recurrent products, then scratch */
	void	   *h;				/* [batch, hidden] state, updated in place */
	void	   *c;				/* [batch, hidden] LSTM cell state */
	void	   *rh;				/* [batch, hidden] GRU: r (.) H_{t-1} */
	const void *p;				/* LSTM peepholes [3 * hidden], or NULL */
	const void *rbh;			/* GRU linear_before_reset: Rb of h, or NULL */
} rnn_step;

/* precision-specific pieces */
typedef struct rnn_ops
{
	size_t		esz;
	/* c[m, n] = a[m, k] b[n, k]^T */
	void		(*gemm_nt) (int64_t m, int64_t n, int64_t k, const void *a, int64_t lda,
							const void *b, int64_t ldb, void *c, int64_t ldc);
	/* rows[i, j] += wb[j] (+ rb[j] for j < rb_cols) */
	void		(*fold_bias) (void *rows, int64_t n_rows, int64_t width,
							  const void *wb, const void *rb, int64_t rb_cols);
	void		(*rnn_step) (const rnn_step *st);
	void		(*gru_step) (const rnn_step *st);	/* linear_before_reset = 1 */
	void		(*gru_reset) (const rnn_step *st);	/* lbr = 0, before the 2nd GEMM */
	void		(*gru_update) (const rnn_step *st); /* lbr = 0, after it */
	void		(*lstm_step) (const rnn_step *st);
	/*
	 * float only (NULL for double): b[n, k]^T packed once for the SGEMM's
	 * micro-kernel, and c[m, n] = a[m, k] times it
	 */
	void	   *(*pack_nt) (int64_t n, int64_t k, const void *b, int64_t ldb, ox_status *st);
	void		(*gemm_packed) (int64_t m, const void *a, int64_t lda, const void *packed, void *c,
								int64_t ldc);
} rnn_ops;

/* ---- typed gate math ---------------------------------------------------- */

/*
 * Instantiated for float and double.  Every row function works on the
 * active rows only and leaves the others untouched, so a finished sequence
 * keeps its last state.  Gate rows are scratch: sums are built in place,
 * clipped and activated there.
 */
#define RNN_DEFINE_TYPED(SUF, T, EXP, EXPM1, LOG1P, TANH, FABS, BLAS_GEMM, SIGMOID_ROW, TANH_ROW, \
						 PACK_NT, GEMM_PACKED) \
static void \
gemm_nt_##SUF(int64_t m, int64_t n, int64_t k, const void *a, int64_t lda, \
			  const void *b, int64_t ldb, void *c, int64_t ldc) \
{ \
	T		   *cc = c; \
	if (m == 0 || n == 0) \
		return; \
	if (k == 0) \
	{ \
		for (int64_t i = 0; i < m; i++) \
			for (int64_t j = 0; j < n; j++) \
				cc[i * ldc + j] = 0; \
		return; \
	} \
	BLAS_GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (int) m, (int) n, (int) k, \
			  1, a, (int) lda, b, (int) ldb, 0, c, (int) ldc); \
} \
\
OX_SIMD_CLONES static void \
fold_bias_##SUF(void *rows, int64_t n_rows, int64_t width, const void *wb, \
				const void *rb, int64_t rb_cols) \
{ \
	T		   *x = rows; \
	const T    *w = wb; \
	const T    *r = rb; \
	for (int64_t i = 0; i < n_rows; i++) \
	{ \
		T		   *row = x + i * width; \
		for (int64_t j = 0; j < width; j++) \
			row[j] += w[j] + (j < rb_cols ? r[j] : 0); \
	} \
} \
\
static void \
clip_##SUF(const rnn_state *s, T *x, int64_t n) \
{ \
	T			c = (T) s->clip; \
	if (!s->has_clip) \
		return; \
	for (int64_t i = 0; i < n; i++) \
		x[i] = x[i] < -c ? -c : (x[i] > c ? c : x[i]); \
} \
\
static void \
activate_##SUF(const rnn_act *a, T *x, int64_t n) \
{ \
	T			alpha = (T) a->alpha; \
	T			beta = (T) a->beta; \
	switch (a->kind) \
	{ \
		case ACT_RELU: \
			for (int64_t i = 0; i < n; i++) \
				x[i] = x[i] > 0 ? x[i] : 0; \
			break; \
		case ACT_TANH: \
			TANH_ROW(x, n); \
			break; \
		case ACT_SIGMOID: \
			SIGMOID_ROW(x, n); \
			break; \
		case ACT_AFFINE: \
			for (int64_t i = 0; i < n; i++) \
				x[i] = alpha * x[i] + beta; \
			break; \
		case ACT_LEAKY_RELU: \
			for (int64_t i = 0; i < n; i++) \
				x[i] = x[i] >= 0 ? x[i] : alpha * x[i]; \
			break; \
		case ACT_THRESHOLDED_RELU: \
			for (int64_t i = 0; i < n; i++) \
				x[i] = x[i] > alpha ? x[i] : 0; \
			break; \
		case ACT_SCALED_TANH: \
			for (int64_t i = 0; i < n; i++) \
				x[i] = alpha * TANH(beta * x[i]); \
			break; \
		case ACT_HARD_SIGMOID: \
			for (int64_t i = 0; i < n; i++) \
			{ \
				T			v = alpha * x[i] + beta; \
				x[i] = v < 0 ? 0 : (v > 1 ? 1 : v); \
			} \
			break; \
		case ACT_ELU: \
			for (int64_t i = 0; i < n; i++) \
				x[i] = x[i] >= 0 ? x[i] : alpha * EXPM1(x[i]); \
			break; \
		case ACT_SOFTSIGN: \
			for (int64_t i = 0; i < n; i++) \
				x[i] = x[i] / (1 + FABS(x[i])); \
			break; \
		case ACT_SOFTPLUS: \
			/* log(1 + e^x) = max(x, 0) + log1p(e^-|x|), exact for large |x| */ \
			for (int64_t i = 0; i < n; i++) \
				x[i] = (x[i] > 0 ? x[i] : 0) + LOG1P(EXP(-FABS(x[i]))); \
			break; \
	} \
} \
\
/* H_t = f(X W^T + H_{t-1} R^T + Wb + Rb) */ \
OX_SIMD_CLONES static void \
rnn_step_##SUF(const rnn_step *st) \
{ \
	int64_t		hs = st->hidden; \
	for (int64_t k = 0; k < st->n_rows; k++) \
	{ \
		T		   *g = (T *) st->gates + st->rows[k] * st->gh; \
		const T    *xr = (const T *) st->xp + st->xrows[k] * st->gh; \
		T		   *h = (T *) st->h + st->rows[k] * hs; \
		for (int64_t j = 0; j < hs; j++) \
			g[j] += xr[j]; \
		clip_##SUF(st->s, g, hs); \
		activate_##SUF(&st->act[0], g, hs); \
		memcpy(h, g, sizeof(T) * hs); \
	} \
} \
\
/* z and r of a GRU row into g[0, 2h) */ \
static void \
gru_zr_##SUF(const rnn_step *st, T *g, const T *xr) \
{ \
	int64_t		n = 2 * st->hidden; \
	for (int64_t j = 0; j < n; j++) \
		g[j] += xr[j]; \
	clip_##SUF(st->s, g, n); \
	activate_##SUF(&st->act[0], g, n); \
} \
\
/* H_t = (1 - z) (.) hh + z (.) H_{t-1}, hh already activated */ \
static void \
gru_blend_##SUF(int64_t hs, const T *z, const T *hh, T *h) \
{ \
	for (int64_t j = 0; j < hs; j++) \
		h[j] = (1 - z[j]) * hh[j] + z[j] * h[j]; \
} \
\
/* linear_before_reset = 1: hh = g(Xh + r (.) (H_{t-1} Rh^T + Rbh) + Wbh) */ \
OX_SIMD_CLONES static void \
gru_step_##SUF(const rnn_step *st) \
{ \
	int64_t		hs = st->hidden; \
	const T    *rbh = st->rbh; \
	for (int64_t k = 0; k < st->n_rows; k++) \
	{ \
		T		   *g = (T *) st->gates + st->rows[k] * st->gh; \
		const T    *xr = (const T *) st->xp + st->xrows[k] * st->gh; \
		T		   *h = (T *) st->h + st->rows[k] * hs; \
		T		   *hh = g + 2 * hs; \
		gru_zr_##SUF(st, g, xr); \
		for (int64_t j = 0; j < hs; j++) \
			hh[j] = xr[2 * hs + j] + g[hs + j] * (hh[j] + (rbh ? rbh[j] : 0)); \
		clip_##SUF(st->s, hh, hs); \
		activate_##SUF(&st->act[1], hh, hs); \
		gru_blend_##SUF(hs, g, hh, h); \
	} \
} \
\
/* linear_before_reset = 0, first half: z, r and r (.) H_{t-1} */ \
static void \
gru_reset_##SUF(const rnn_step *st) \
{ \
	int64_t		hs = st->hidden; \
	for (int64_t k = 0; k < st->n_rows; k++) \
	{ \
		T		   *g = (T *) st->gates + st->rows[k] * st->gh; \
		const T    *xr = (const T *) st->xp + st->xrows[k] * st->gh; \
		const T    *h = (const T *) st->h + st->rows[k] * hs; \
		T		   *rh = (T *) st->rh + st->rows[k] * hs; \
		gru_zr_##SUF(st, g, xr); \
		for (int64_t j = 0; j < hs; j++) \
			rh[j] = g[hs + j] * h[j]; \
	} \
} \
\
/* second half: hh = g(Xh + (r (.) H_{t-1}) Rh^T + Rbh + Wbh), the product in g[2h, 3h) */ \
static void \
gru_update_##SUF(const rnn_step *st) \
{ \
	int64_t		hs = st->hidden; \
	for (int64_t k = 0; k < st->n_rows; k++) \
	{ \
		T		   *g = (T *) st->gates + st->rows[k] * st->gh; \
		const T    *xr = (const T *) st->xp + st->xrows[k] * st->gh; \
		T		   *h = (T *) st->h + st->rows[k] * hs; \
		T		   *hh = g + 2 * hs; \
		for (int64_t j = 0; j < hs; j++) \
			hh[j] += xr[2 * hs + j]; \
		clip_##SUF(st->s, hh, hs); \
		activate_##SUF(&st->act[1], hh, hs); \
		gru_blend_##SUF(hs, g, hh, h); \
	} \
} \
\
/* gates in ONNX order i, o, f, c; peepholes i, o, f */ \
OX_SIMD_CLONES static void \
lstm_step_##SUF(const rnn_step *st) \
{ \
	int64_t		hs = st->hidden; \
	const T    *p = st->p; \
	for (int64_t k = 0; k < st->n_rows; k++) \
	{ \
		T		   *g = (T *) st->gates + st->rows[k] * st->gh; \
		const T    *xr = (const T *) st->xp + st->xrows[k] * st->gh; \
		T		   *h = (T *) st->h + st->rows[k] * hs; \
		T		   *c = (T *) st->c + st->rows[k] * hs; \
		T		   *gi = g, *go = g + hs, *gf = g + 2 * hs, *gc = g + 3 * hs; \
		for (int64_t j = 0; j < 4 * hs; j++) \
			g[j] += xr[j]; \
		if (p) \
			for (int64_t j = 0; j < hs; j++) \
			{ \
				gi[j] += p[j] * c[j]; \
				gf[j] += p[2 * hs + j] * c[j]; \
			} \
		clip_##SUF(st->s, gi, hs); \
		activate_##SUF(&st->act[0], gi, hs); \
		if (st->s->input_forget) \
			for (int64_t j = 0; j < hs; j++) \
				gf[j] = 1 - gi[j]; \
		else \
		{ \
			clip_##SUF(st->s, gf, hs); \
			activate_##SUF(&st->act[0], gf, hs); \
		} \
		clip_##SUF(st->s, gc, hs); \
		activate_##SUF(&st->act[1], gc, hs); \
		for (int64_t j = 0; j < hs; j++) \
		{ \
			c[j] = gf[j] * c[j] + gi[j] * gc[j]; \
			if (p) \
				go[j] += p[hs + j] * c[j]; \
		} \
		clip_##SUF(st->s, go, hs); \
		activate_##SUF(&st->act[0], go, hs); \
		/* gc is free again: h(C_t) goes there */ \
		memcpy(gc, c, sizeof(T) * hs); \
		activate_##SUF(&st->act[2], gc, hs); \
		for (int64_t j = 0; j < hs; j++) \
			h[j] = go[j] * gc[j]; \
	} \
} \
\
static const rnn_ops rnn_ops_##SUF = { \
	sizeof(T), gemm_nt_##SUF, fold_bias_##SUF, rnn_step_##SUF, gru_step_##SUF, \
	gru_reset_##SUF, gru_update_##SUF, lstm_step_##SUF, PACK_NT, GEMM_PACKED \
};

/*
 * float GEMMs go through our SGEMM (threaded by the running kernel's
 * context; a packing failure lands in its status, which the executor checks)
 */
static void
rnn_sgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha,
		  const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc)
{
	(void) order;				/* always row-major here */
	(void) ox_sgemm(ox_kernel_current(), ta == CblasTrans, tb == CblasTrans, m, n, k, alpha, a, lda, b,
					ldb, beta, c, ldc);
}

/*
 * The recurrent weights are the B of every time step's product: packed
 * once per direction instead of by every step's SGEMM (an LSTM of hidden
 * 128 at batch 64 repacked 256 KB fifty times a run).  NULL where our SGEMM
 * kernels are not used (the caller then calls gemm_nt).
 */
static void *
rnn_pack_nt_f32(int64_t n, int64_t k, const void *b, int64_t ldb, ox_status *st)
{
	return ox_sgemm_pack_b_transient(true, k, n, b, ldb, st);
}

static void
rnn_gemm_packed_f32(int64_t m, const void *a, int64_t lda, const void *packed, void *c, int64_t ldc)
{
	/* as rnn_sgemm: a failure lands in the running kernel's status */
	(void) ox_sgemm_packed_b(ox_kernel_current(), false, m, 1.0f, a, lda, packed, 0.0f, c, ldc);
}

/* double gates: libm, sigmoid written so that neither branch overflows */
static void
sigmoid_row_f64(double *x, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
	{
		double		e = exp(-fabs(x[i]));

		x[i] = x[i] >= 0 ? 1 / (1 + e) : e / (1 + e);
	}
}

static void
tanh_row_f64(double *x, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		x[i] = tanh(x[i]);
}

/*
 * float gates: the Sigmoid and Tanh ops' vectorized math (activation.c),
 * which onnxruntime's LSTM matches as closely as libm (it uses its own
 * approximations too); libm per value was two thirds of an LSTM's run
 */
RNN_DEFINE_TYPED(f32, float, expf, expm1f, log1pf, tanhf, fabsf, rnn_sgemm,
				 ox_sigmoid_inplace_f32, ox_tanh_inplace_f32, rnn_pack_nt_f32, rnn_gemm_packed_f32)
RNN_DEFINE_TYPED(f64, double, exp, expm1, log1p, tanh, fabs, cblas_dgemm, sigmoid_row_f64, tanh_row_f64,
				 NULL, NULL)

/* ---- attributes ---------------------------------------------------------- */

static void
rnn_free(void *state)
{
	rnn_state  *s = state;

	if (!s)
		return;
	ox_aligned_free(s->r_kmajor);
	for (int dir = 0; dir < 2; dir++)
	{
		ox_sgemm_packed_free(s->w_packed[dir]);
		ox_sgemm_packed_free(s->r_packed[dir]);
		ox_sgemm_packed_free(s->rh_packed[dir]);
	}
	free(s);
}

static const char *
rnn_op_name(rnn_cell cell)
{
	return cell == RNN_CELL_RNN ? "RNN" : cell == RNN_CELL_GRU ? "GRU" : "LSTM";
}

static ox_code
rnn_parse_activations(ox_prepare_ctx *pc, rnn_state *s, int n_acts)
{
	static const char *const defaults[3][RNN_MAX_ACTS] = {
		{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}
	};
	const char *const *names;
	const float *alphas;
	const float *betas;
	int			n_names = ox_attr_strings(pc->node, "activations", &names);
	int			n_alphas = ox_attr_floats(pc->node, "activation_alpha", &alphas);
	int			n_betas = ox_attr_floats(pc->node, "activation_beta", &betas);
	int			ia = 0;
	int			ib = 0;

	if (n_names == 0)
	{
		names = defaults[s->cell];
		n_names = n_acts;
	}
	if (n_names != n_acts && n_names != n_acts * s->num_dir)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT,
					   "%s: activations has %d entries but expected %d (or %d for each of %d directions)",
					   s->op, n_names, n_acts, n_acts, s->num_dir);

	/*
	 * alpha and beta values are consumed in order by the activations that
	 * take them, as onnxruntime does; the rest use the ONNX defaults.
	 */
	for (int i = 0; i < n_names; i++)
	{
		const rnn_act_info *info = NULL;
		rnn_act    *a = &s->act[i / n_acts][i % n_acts];

		for (size_t k = 0; k < sizeof(rnn_act_infos) / sizeof(rnn_act_infos[0]); k++)
			if (names[i] && strcasecmp(names[i], rnn_act_infos[k].name) == 0)
				info = &rnn_act_infos[k];
		if (!info)
			return ox_fail(pc->st, OX_UNSUPPORTED,
						   "%s: activation \"%s\" is not supported (expected Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign or Softplus)",
						   s->op, names[i] ? names[i] : "");
		a->kind = info->kind;
		a->alpha = info->alpha;
		a->beta = info->beta;
		if (info->takes_alpha && ia < n_alphas)
			a->alpha = alphas[ia++];
		if (info->takes_beta && ib < n_betas)
			a->beta = betas[ib++];
	}
	if (n_names == n_acts && s->num_dir == 2)
		memcpy(s->act[1], s->act[0], sizeof(s->act[0]));
	return OX_OK;
}

/*
 * One sequence (batch 1) multiplies H_{t-1} by R^T at every step: a
 * matrix-vector product over R, 256 KB for an LSTM of hidden size 128,
 * read from L2 each step.  As dot products over R's rows each of the 512
 * sums ends in a horizontal add; summing the rows of R^T ([hidden,
 * gates * hidden], ox_sgemm_row_sums) keeps every sum in its own vector
 * lane.  That copy, made here for a constant float R of at most
 * RNN_KMAJOR_MAX_FLOATS per direction (where its rows stay in L2; beyond,
 * the two forms read at the same rate): R of [512, 128] from L2 in 0.86x
 * the time, on the Intel host.  The sums run over k in order, as the
 * packed GEMM's micro-kernel does for several sequences.
 */
#define RNN_KMAJOR_MAX_FLOATS (64 * 1024)

/* input i of the node when it is a constant float tensor of rank 3, else NULL */
static const ox_tensor *
rnn_constant_input(const ox_prepare_ctx *pc, int i)
{
	const ox_tensor *t = ox_prepare_constant(pc, i);

	return t && t->dtype == OX_FLOAT && t->rank == 3 && t->data && ox_tensor_numel(t) > 0 ? t : NULL;
}

static ox_code
rnn_r_kmajor(ox_prepare_ctx *pc, rnn_state *s, const ox_tensor *r)
{
	int64_t		nd = r->dims[0],
				gh = r->dims[1],
				hs = r->dims[2];

	if (gh * hs > RNN_KMAJOR_MAX_FLOATS)
		return OX_OK;
	s->r_kmajor = ox_aligned_alloc(sizeof(float) * (size_t) (nd * gh * hs));
	if (!s->r_kmajor)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s: could not allocate a copy of R", s->op);
	for (int64_t dir = 0; dir < nd; dir++)
		oxt_transpose_f32(s->r_kmajor + dir * gh * hs, (const float *) r->data + dir * gh * hs, hs, gh, hs);
	return OX_OK;
}

/*
 * Constant float W and R packed for the SGEMM once, not by every run: the
 * input projection's W (the zoo LSTM at batch 1 packed it in 2% of its
 * run), and R for two sequences and more (rnn_compute packed it per run
 * and direction from three on, and two streamed it as dot products: now
 * every batch size of two and more takes the same micro-kernel, and one
 * sequence the row sums in its order, so a sequence gets the same bits
 * whatever it is batched with).  NULL packs (no kernels of ours on this
 * machine) leave the run's own products.
 */
static ox_code
rnn_pack_constants(ox_prepare_ctx *pc, rnn_state *s)
{
	const ox_tensor *w = rnn_constant_input(pc, 1);
	const ox_tensor *r = rnn_constant_input(pc, 2);
	bool		gru_split = s->cell == RNN_CELL_GRU && !s->linear_before_reset;

	/* a malformed W or R is the run's to report */
	if (w && w->dims[0] == s->num_dir && w->dims[1] % s->n_gates == 0 && w->dims[1] > 0 && w->dims[2] > 0)
	{
		for (int dir = 0; dir < s->num_dir; dir++)
		{
			s->w_packed[dir] = ox_sgemm_pack_b(true, w->dims[2], w->dims[1],
											   (const float *) w->data + dir * w->dims[1] * w->dims[2],
											   w->dims[2], pc->st);
			if (pc->st->code != OX_OK)
				return pc->st->code;
		}
		s->w_src = w->data;
	}
	if (r && r->dims[0] == s->num_dir && r->dims[2] > 0 && r->dims[1] == s->n_gates * r->dims[2])
	{
		int64_t		gh = r->dims[1],
					hs = r->dims[2];

		for (int dir = 0; dir < s->num_dir; dir++)
		{
			const float *rd = (const float *) r->data + dir * gh * hs;

			s->r_packed[dir] = ox_sgemm_pack_b(true, hs, gru_split ? 2 * hs : gh, rd, hs, pc->st);
			if (gru_split && pc->st->code == OX_OK)
				s->rh_packed[dir] = ox_sgemm_pack_b(true, hs, hs, rd + 2 * hs * hs, hs, pc->st);
			if (pc->st->code != OX_OK)
				return pc->st->code;
		}
		OX_TRY(rnn_r_kmajor(pc, s, r));
		s->r_src = r->data;
	}
	return OX_OK;
}

static ox_code
rnn_prepare_cell(ox_prepare_ctx *pc, rnn_cell cell)
{
	const ox_node *node = pc->node;
	rnn_state	s;
	rnn_state  *copy;
	const char *dir = ox_attr_string(node, "direction", "forward");
	const ox_attr *hidden = ox_node_attr(node, "hidden_size");
	const ox_attr *clip = ox_node_attr(node, "clip");
	int64_t		lbr = ox_attr_int(node, "linear_before_reset", 0);
	int64_t		input_forget = ox_attr_int(node, "input_forget", 0);
	int64_t		layout = ox_attr_int(node, "layout", 0);

	memset(&s, 0, sizeof(s));
	s.cell = cell;
	s.op = rnn_op_name(cell);
	s.n_gates = cell == RNN_CELL_RNN ? 1 : cell == RNN_CELL_GRU ? 3 : 4;

	/* "foward" is the default GRU-1 declares, a typo kept by the spec */
	if (strcmp(dir, "forward") == 0 || strcmp(dir, "foward") == 0)
		s.num_dir = 1;
	else if (strcmp(dir, "reverse") == 0)
	{
		s.num_dir = 1;
		s.reverse = true;
	}
	else if (strcmp(dir, "bidirectional") == 0)
		s.num_dir = 2;
	else
		return ox_fail(pc->st, OX_INVALID_ARGUMENT,
					   "%s: direction \"%s\" is not forward, reverse or bidirectional", s.op, dir);

	s.hidden_size = -1;
	if (hidden)
	{
		if (hidden->type != OX_ATTR_INT || hidden->i < 1 || hidden->i > INT_MAX / 4)
			return ox_fail(pc->st, OX_INVALID_ARGUMENT,
						   "%s: hidden_size must be a positive integer, got %lld",
						   s.op, (long long) (hidden->type == OX_ATTR_INT ? hidden->i : 0));
		s.hidden_size = hidden->i;
	}
	if (clip)
	{
		s.has_clip = true;
		s.clip = ox_attr_float(node, "clip", 0.0f);
		if (!(s.clip > 0))
			return ox_fail(pc->st, OX_INVALID_ARGUMENT,
						   "%s: clip must be positive, got %g", s.op, s.clip);
	}
	if (layout != 0 && layout != 1)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "%s: layout must be 0 or 1, got %lld",
					   s.op, (long long) layout);
	s.layout = (int) layout;
	if (cell == RNN_CELL_GRU)
	{
		if (lbr != 0 && lbr != 1)
			return ox_fail(pc->st, OX_INVALID_ARGUMENT,
						   "GRU: linear_before_reset must be 0 or 1, got %lld", (long long) lbr);
		s.linear_before_reset = lbr == 1;
	}
	if (cell == RNN_CELL_LSTM)
	{
		if (input_forget != 0 && input_forget != 1)
			return ox_fail(pc->st, OX_INVALID_ARGUMENT,
						   "LSTM: input_forget must be 0 or 1, got %lld", (long long) input_forget);
		s.input_forget = input_forget == 1;
	}
	OX_TRY(rnn_parse_activations(pc, &s, cell == RNN_CELL_RNN ? 1 : cell == RNN_CELL_GRU ? 2 : 3));

	copy = malloc(sizeof(s));
	if (!copy)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s: out of memory for kernel state", s.op);
	*copy = s;
	if (rnn_pack_constants(pc, copy) != OX_OK)
	{
		rnn_free(copy);
		return pc->st->code;
	}
	pc->state = copy;
	return OX_OK;
}

static ox_code
rnn_prepare(ox_prepare_ctx *pc)
{
	return rnn_prepare_cell(pc, RNN_CELL_RNN);
}

static ox_code
gru_prepare(ox_prepare_ctx *pc)
{
	return rnn_prepare_cell(pc, RNN_CELL_GRU);
}

static ox_code
lstm_prepare(ox_prepare_ctx *pc)
{
	return rnn_prepare_cell(pc, RNN_CELL_LSTM);
}

/* ---- the driver ------------------------------------------------------------ */

/* a * b, or -1 when it exceeds the element limit */
static int64_t
rnn_mul(int64_t a, int64_t b)
{
	int64_t		r;

	if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r) || r > OX_MAX_ELEMENTS)
		return -1;
	return r;
}

/*
 * Bytes of input projection (X W^T + biases) computed ahead of the steps
 * that read it, when it can go in chunks of steps: a quarter of a core's
 * L2, so it is still there when the steps add it.  Projecting a whole
 * sequence first wrote it out to L3 or memory (LSTM of hidden 128 at batch
 * 64 over 50 steps: 6.5 MB a run, allocated each run) and read it back.
 */
#define RNN_XP_CHUNK_BYTES (256 * 1024)

/* steps whose input projection is computed at once (all of them unless chunked) */
static int64_t
rnn_projection_steps(const rnn_state *s, const rnn_dims *d, const rnn_io *io, int64_t step_bytes)
{
	int64_t		n;

	/*
	 * Chunks need the steps' rows of X together: time-major X, and every
	 * sequence at full length (a shorter one, run backward, starts at
	 * another time).
	 */
	if (s->layout != 0 || d->seq <= 1 || step_bytes <= 0)
		return d->seq;
	if (io->lens)
		for (int64_t bi = 0; bi < d->batch; bi++)
			if (io->lens[bi] != d->seq)
				return d->seq;
	n = RNN_XP_CHUNK_BYTES / step_bytes;
	return n < 1 ? 1 : (n > d->seq ? d->seq : n);
}

static ox_code
rnn_compute(ox_kernel_ctx *ctx, const rnn_state *s, const rnn_dims *d, const rnn_io *io,
			const rnn_ops *ops)
{
	size_t		esz = ops->esz;
	int64_t		hs = d->hidden;
	int64_t		gh = s->n_gates * hs;
	int64_t		nrows = d->seq * d->batch;
	int			nd = s->num_dir;
	bool		gru_split = s->cell == RNN_CELL_GRU && !s->linear_before_reset;
	/* columns of the per-step product: GRU lbr = 0 leaves the h gate for later */
	int64_t		rcols = gru_split ? 2 * hs : gh;
	void	   *r_packed = NULL;	/* this direction's R, packed (float) */
	void	   *rh_packed = NULL;	/* GRU, linear_before_reset = 0: its h block */
	const ox_sgemm_epilogue no_epilogue = {0};
	char	   *xp;
	char	   *gates;
	char	   *h;
	char	   *c;
	char	   *rh;
	int64_t    *rows;
	int64_t    *xrows;
	int64_t    *trows;
	float	   *bias;			/* float with W packed: Wb + Rb, the projection's epilogue */
	/* Rb of the GRU h gate sits inside the reset product when lbr = 1 */
	int64_t		rb_cols = s->cell == RNN_CELL_GRU && s->linear_before_reset ? 2 * hs : gh;
	int64_t		chunk = rnn_projection_steps(s, d, io, d->batch * gh * (int64_t) esz);
	ox_code		rc = OX_OK;

	xp = ox_workspace_alloc((size_t) (chunk * d->batch * gh) * esz + 1, ctx->st, "RNN");
	gates = ox_workspace_alloc((size_t) (d->batch * gh) * esz + 1, ctx->st, "RNN");
	h = ox_workspace_alloc((size_t) (d->batch * hs) * esz + 1, ctx->st, "RNN");
	c = ox_workspace_alloc((size_t) (d->batch * hs) * esz + 1, ctx->st, "RNN");
	/* calloc: rows outside their sequence still enter the second GRU product */
	rh = ox_workspace_calloc((size_t) (d->batch * hs) + 1, esz, ctx->st, "RNN");
	rows = ox_workspace_alloc(sizeof(int64_t) * (size_t) (3 * d->batch + 1), ctx->st, "RNN");
	bias = io->b && esz == sizeof(float) ? ox_workspace_alloc(sizeof(float) * (size_t) gh, ctx->st, "RNN") : NULL;
	if (!xp || !gates || !h || !c || !rh || !rows || (io->b && esz == sizeof(float) && !bias))
	{
		rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: out of memory for %lld x %lld workspace",
					 s->op, (long long) nrows, (long long) gh);
		goto done;
	}
	xrows = rows + d->batch;
	trows = rows + 2 * d->batch;

	/* Y is zero past each sequence's end */
	if (io->y && io->lens)
		memset(io->y, 0, (size_t) (nrows * nd * hs) * esz);

	for (int dir = 0; dir < nd; dir++)
	{
		bool		backward = dir == 1 || s->reverse;
		const char *w = (const char *) io->w + (size_t) (dir * gh * d->input) * esz;
		const char *r = (const char *) io->r + (size_t) (dir * gh * hs) * esz;
		const char *b = io->b ? (const char *) io->b + (size_t) (dir * 2 * gh) * esz : NULL;
		rnn_step	st;
		const float *rk;
		const ox_sgemm_packed *r_use,	/* R's packed copy this direction multiplies by, or NULL */
				   *rh_use,
				   *w_use;
		bool		r_const;
		int64_t		xp_t0 = 0;	/* time of xp's first rows (chunks) */

		for (int64_t bi = 0; bi < d->batch; bi++)
		{
			int64_t		off = s->layout == 0 ? (dir * d->batch + bi) * hs : (bi * nd + dir) * hs;

			if (io->h0)
				memcpy(h + bi * hs * esz, (const char *) io->h0 + off * esz, hs * esz);
			else
				memset(h + bi * hs * esz, 0, hs * esz);
			if (io->c0)
				memcpy(c + bi * hs * esz, (const char *) io->c0 + off * esz, hs * esz);
			else
				memset(c + bi * hs * esz, 0, hs * esz);
		}

		/*
		 * Packing pays from three rows on: one or two rows stream R
		 * directly (the SGEMM's matrix-vector path).  A failed pack
		 * (no memory, or no kernels of ours here) leaves the plain product.
		 */
		ox_sgemm_packed_free(r_packed);
		ox_sgemm_packed_free(rh_packed);
		r_packed = rh_packed = NULL;
		r_use = rh_use = NULL;
		r_const = io->r == s->r_src && esz == sizeof(float);
		if (r_const && d->batch > 1 && s->r_packed[dir])
		{
			r_use = s->r_packed[dir];
			rh_use = s->rh_packed[dir];
		}
		else if (ops->pack_nt && d->batch > 2 && hs > 0)
		{
			ox_status	pst;

			ox_status_clear(&pst);
			r_use = r_packed = ops->pack_nt(rcols, hs, r, hs, &pst);
			if (gru_split)
				rh_use = rh_packed = ops->pack_nt(hs, hs, r + (size_t) (2 * hs * hs) * esz, hs, &pst);
		}
		w_use = io->w == s->w_src && esz == sizeof(float) ? s->w_packed[dir] : NULL;
		if (w_use && b)
		{
			/*
			 * Wb + Rb for the projection's epilogue, added in the
			 * micro-kernel's registers instead of a second pass over xp
			 * (megabytes for a whole sequence): 0 + (Wb + Rb), exactly
			 * the sum fold_bias adds
			 */
			memset(bias, 0, sizeof(float) * (size_t) gh);
			ops->fold_bias(bias, 1, gh, b, b + (size_t) gh * esz, rb_cols);
		}

		/* one sequence over a constant R: the rows of its [hidden, gates * hidden] copy summed */
		rk = s->r_kmajor && r_const && d->batch == 1 ? s->r_kmajor + dir * gh * hs : NULL;

		memset(&st, 0, sizeof(st));
		st.s = s;
		st.act = s->act[dir];
		st.hidden = hs;
		st.gh = gh;
		st.rows = rows;
		st.xrows = xrows;
		st.xp = xp;
		st.gates = gates;
		st.h = h;
		st.c = c;
		st.rh = rh;
		st.p = io->p ? (const char *) io->p + (size_t) (dir * 3 * hs) * esz : NULL;
		st.rbh = b && s->cell == RNN_CELL_GRU && s->linear_before_reset ?
			b + (size_t) (gh + 2 * hs) * esz : NULL;

		for (int64_t step = 0; step < d->seq; step++)
		{
			if (ox_kernel_should_abort(ctx))
			{
				rc = ox_fail(ctx->st, OX_CANCELED, "%s: canceled", s->op);
				goto done;
			}
			if (step % chunk == 0)
			{
				/* the projection of this chunk's steps (of all of them when not chunked) */
				int64_t		n = d->seq - step < chunk ? d->seq - step : chunk;
				int64_t		rows_n = chunk == d->seq ? nrows : n * d->batch;

				xp_t0 = chunk == d->seq ? 0 : (backward ? d->seq - step - n : step);
				const char *xrows = (const char *) io->x + (size_t) (xp_t0 * d->batch * d->input) * esz;

				if (w_use)
				{
					ox_sgemm_epilogue epi = {.bias = b ? bias : NULL};

					rc = ox_sgemm_packed_b_ex(ctx, false, rows_n, 1.0f, (const float *) xrows, d->input, w_use,
											  0.0f, (float *) xp, gh, &epi);
					if (rc != OX_OK)
						goto done;
				}
				else
				{
					ops->gemm_nt(rows_n, gh, d->input, xrows, d->input, w, d->input, xp, gh);
					if (b)
						ops->fold_bias(xp, rows_n, gh, b, b + (size_t) gh * esz, rb_cols);
				}
			}
			st.n_rows = 0;
			for (int64_t bi = 0; bi < d->batch; bi++)
			{
				int64_t		len = io->lens ? io->lens[bi] : d->seq;
				int64_t		t;

				if (step >= len)
					continue;
				t = backward ? len - 1 - step : step;
				rows[st.n_rows] = bi;
				trows[st.n_rows] = t;
				xrows[st.n_rows] = s->layout == 0 ? (t - xp_t0) * d->batch + bi : bi * d->seq + t;
				st.n_rows++;
			}
			if (st.n_rows == 0)
				break;

			if (r_use)
				ops->gemm_packed(d->batch, h, hs, r_use, gates, gh);
			else if (!rk || !ox_sgemm_row_sums(ctx, rcols, hs, (const float *) h, rk, gh, &no_epilogue,
											   (float *) gates))
				ops->gemm_nt(d->batch, rcols, hs, h, hs, r, hs, gates, gh);
			switch (s->cell)
			{
				case RNN_CELL_RNN:
					ops->rnn_step(&st);
					break;
				case RNN_CELL_GRU:
					if (!gru_split)
						ops->gru_step(&st);
					else
					{
						ops->gru_reset(&st);
						if (rh_use)
							ops->gemm_packed(d->batch, rh, hs, rh_use, gates + (size_t) (2 * hs) * esz, gh);
						else if (!rk || !ox_sgemm_row_sums(ctx, hs, hs, (const float *) rh, rk + 2 * hs, gh,
														   &no_epilogue, (float *) gates + 2 * hs))
							ops->gemm_nt(d->batch, hs, hs, rh, hs, r + (size_t) (2 * hs * hs) * esz, hs,
										 gates + (size_t) (2 * hs) * esz, gh);
						ops->gru_update(&st);
					}
					break;
				case RNN_CELL_LSTM:
					ops->lstm_step(&st);
					break;
			}

			if (io->y)
				for (int64_t k = 0; k < st.n_rows; k++)
				{
					int64_t		bi = rows[k];
					int64_t		t = trows[k];
					int64_t		off = s->layout == 0 ?
						((t * nd + dir) * d->batch + bi) * hs :
						((bi * d->seq + t) * nd + dir) * hs;

					memcpy((char *) io->y + off * esz, h + bi * hs * esz, hs * esz);
				}
		}

		for (int64_t bi = 0; bi < d->batch; bi++)
		{
			int64_t		off = s->layout == 0 ? (dir * d->batch + bi) * hs : (bi * nd + dir) * hs;
			bool		empty = io->lens && io->lens[bi] == 0;

			if (io->yh)
			{
				if (empty)
					memset((char *) io->yh + off * esz, 0, hs * esz);
				else
					memcpy((char *) io->yh + off * esz, h + bi * hs * esz, hs * esz);
			}
			if (io->yc)
			{
				if (empty)
					memset((char *) io->yc + off * esz, 0, hs * esz);
				else
					memcpy((char *) io->yc + off * esz, c + bi * hs * esz, hs * esz);
			}
		}
	}

done:
	ox_sgemm_packed_free(r_packed);
	ox_sgemm_packed_free(rh_packed);
	free(xp);
	free(gates);
	free(h);
	free(c);
	free(rh);
	free(rows);
	free(bias);
	return rc;
}

/* ---- checks and dispatch ------------------------------------------------------ */

/* fail unless t has exactly the given shape */
static ox_code
rnn_check_shape(ox_kernel_ctx *ctx, const rnn_state *s, const char *what, const ox_tensor *t,
				int rank, const int64_t *dims, const char *expect)
{
	char		got[128];

	if (ox_shape_equal(t->rank, t->dims, rank, dims))
		return OX_OK;
	ox_shape_str(t->rank, t->dims, got, sizeof(got));
	return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: %s has shape %s but expected %s",
				   s->op, what, got, expect);
}

static ox_code
rnn_check_dtype(ox_kernel_ctx *ctx, const rnn_state *s, const char *what, const ox_tensor *t,
				ox_dtype dt)
{
	if (t->dtype != dt)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: %s has type %s but X has type %s",
					   s->op, what, ox_dtype_name(t->dtype), ox_dtype_name(dt));
	return OX_OK;
}

/* float copy of a float16/bfloat16 tensor (NULL tensor: NULL, OK) */
static ox_code
rnn_stage_in(ox_kernel_ctx *ctx, const ox_tensor *t, const void **out, float **owned)
{
	int64_t		n;

	*out = NULL;
	if (!t)
		return OX_OK;
	n = ox_tensor_numel(t);
	*owned = malloc(sizeof(float) * (size_t) n + 1);
	if (!*owned)
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "out of memory staging %lld elements",
					   (long long) n);
	*out = *owned;
	return ox_convert_elements(*owned, OX_FLOAT, t->data, t->dtype, n, ctx->st);
}

static ox_code
rnn_stage_out(ox_kernel_ctx *ctx, ox_tensor *t, void **out, float **owned)
{
	int64_t		n;

	*out = NULL;
	if (!t)
		return OX_OK;
	n = ox_tensor_numel(t);
	*owned = malloc(sizeof(float) * (size_t) n + 1);
	if (!*owned)
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "out of memory staging %lld elements",
					   (long long) n);
	*out = *owned;
	return OX_OK;
}

static ox_code
rnn_run_staged(ox_kernel_ctx *ctx, const rnn_state *s, const rnn_dims *d,
			   const ox_tensor *const in[8], ox_tensor *const out[3], rnn_io *io)
{
	float	   *buf[11];
	const void **ins[8] = {&io->x, &io->w, &io->r, &io->b, NULL, &io->h0, &io->c0, &io->p};
	void	  **outs[3] = {&io->y, &io->yh, &io->yc};
	ox_code		rc = OX_OK;

	memset(buf, 0, sizeof(buf));
	for (int i = 0; i < 8 && rc == OX_OK; i++)
		if (ins[i])
			rc = rnn_stage_in(ctx, in[i], ins[i], &buf[i]);
	for (int i = 0; i < 3 && rc == OX_OK; i++)
		rc = rnn_stage_out(ctx, out[i], outs[i], &buf[8 + i]);
	if (rc == OX_OK)
		rc = rnn_compute(ctx, s, d, io, &rnn_ops_f32);
	for (int i = 0; i < 3 && rc == OX_OK; i++)
		if (out[i])
			rc = ox_convert_elements(out[i]->data, out[i]->dtype, buf[8 + i], OX_FLOAT,
									 ox_tensor_numel(out[i]), ctx->st);
	for (int i = 0; i < 11; i++)
		free(buf[i]);
	return rc;
}

static ox_code
rnn_run(ox_kernel_ctx *ctx)
{
	const rnn_state *s = ctx->state;
	bool		lstm = s->cell == RNN_CELL_LSTM;
	const ox_tensor *in[8];
	ox_tensor  *out[3] = {NULL, NULL, NULL};
	static const char *const in_names[8] = {
		"X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"
	};
	const ox_tensor *x;
	const ox_tensor *w;
	const ox_tensor *r;
	ox_dtype	dt;
	rnn_dims	d;
	rnn_io		io;
	int64_t		nd = s->num_dir;
	int64_t		gh;
	int64_t		dims[4];
	char		expect[160];

	for (int i = 0; i < 8; i++)
		in[i] = (i < 6 || lstm) ? ox_in_tensor(ctx, i) : NULL;
	x = in[0];
	w = in[1];
	r = in[2];
	if (!x || !w || !r)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: inputs X, W and R are required", s->op);
	dt = x->dtype;
	if (dt != OX_FLOAT && dt != OX_DOUBLE && dt != OX_FLOAT16 && dt != OX_BFLOAT16)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "%s: X has type %s but expected float, double, float16 or bfloat16",
					   s->op, ox_dtype_name(dt));
	for (int i = 1; i < 8; i++)
		if (in[i] && i != 4)
			OX_TRY(rnn_check_dtype(ctx, s, in_names[i], in[i], dt));
	if (x->rank != 3 || w->rank != 3 || r->rank != 3)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "%s: X, W and R must have rank 3, got ranks %d, %d and %d",
					   s->op, x->rank, w->rank, r->rank);

	d.seq = x->dims[s->layout == 0 ? 0 : 1];
	d.batch = x->dims[s->layout == 0 ? 1 : 0];
	d.input = x->dims[2];
	d.hidden = s->hidden_size >= 0 ? s->hidden_size : r->dims[2];
	if (d.hidden < 1 || d.hidden > INT_MAX / 4)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: hidden size %lld is out of range",
					   s->op, (long long) d.hidden);
	gh = s->n_gates * d.hidden;

	/* the GEMMs take int sizes */
	if (rnn_mul(rnn_mul(d.seq, d.batch), gh) < 0 || d.seq * d.batch > INT_MAX ||
		rnn_mul(d.batch, gh) < 0 || d.input > INT_MAX ||
		rnn_mul(rnn_mul(d.seq, d.batch), nd * d.hidden) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED,
					   "%s: %lld steps x %lld batch x %lld gates is too large",
					   s->op, (long long) d.seq, (long long) d.batch, (long long) gh);

	dims[0] = nd;
	dims[1] = gh;
	dims[2] = d.input;
	snprintf(expect, sizeof(expect), "[%lld, %lld, %lld] (directions, %d * hidden_size, input_size)",
			 (long long) nd, (long long) gh, (long long) d.input, s->n_gates);
	OX_TRY(rnn_check_shape(ctx, s, "W", w, 3, dims, expect));
	dims[2] = d.hidden;
	snprintf(expect, sizeof(expect), "[%lld, %lld, %lld] (directions, %d * hidden_size, hidden_size)",
			 (long long) nd, (long long) gh, (long long) d.hidden, s->n_gates);
	OX_TRY(rnn_check_shape(ctx, s, "R", r, 3, dims, expect));
	if (in[3])
	{
		dims[1] = 2 * gh;
		snprintf(expect, sizeof(expect), "[%lld, %lld] (directions, %d * hidden_size)",
				 (long long) nd, (long long) (2 * gh), 2 * s->n_gates);
		OX_TRY(rnn_check_shape(ctx, s, "B", in[3], 2, dims, expect));
	}
	if (in[4])
	{
		if (in[4]->dtype != OX_INT32)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: sequence_lens has type %s but expected int32",
						   s->op, ox_dtype_name(in[4]->dtype));
		dims[0] = d.batch;
		snprintf(expect, sizeof(expect), "[%lld] (batch_size)", (long long) d.batch);
		OX_TRY(rnn_check_shape(ctx, s, "sequence_lens", in[4], 1, dims, expect));
		for (int64_t i = 0; i < d.batch; i++)
		{
			int32_t		len = OX_DATA(in[4], int32_t)[i];

			if (len < 0 || len > d.seq)
				return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
							   "%s: sequence_lens[%lld] is %d but must be between 0 and seq_length %lld",
							   s->op, (long long) i, len, (long long) d.seq);
		}
	}
	/* initial_h, initial_c, Y_h and Y_c share one shape */
	dims[0] = s->layout == 0 ? nd : d.batch;
	dims[1] = s->layout == 0 ? d.batch : nd;
	dims[2] = d.hidden;
	snprintf(expect, sizeof(expect), "[%lld, %lld, %lld] (%s, hidden_size)",
			 (long long) dims[0], (long long) dims[1], (long long) dims[2],
			 s->layout == 0 ? "directions, batch_size" : "batch_size, directions");
	if (in[5])
		OX_TRY(rnn_check_shape(ctx, s, "initial_h", in[5], 3, dims, expect));
	if (in[6])
		OX_TRY(rnn_check_shape(ctx, s, "initial_c", in[6], 3, dims, expect));
	if (in[7])
	{
		int64_t		pdims[2] = {nd, 3 * d.hidden};

		snprintf(expect, sizeof(expect), "[%lld, %lld] (directions, 3 * hidden_size)",
				 (long long) nd, (long long) (3 * d.hidden));
		OX_TRY(rnn_check_shape(ctx, s, "P", in[7], 2, pdims, expect));
	}

	if (ox_has_output(ctx, 1) && !(out[1] = ox_out_tensor(ctx, 1, dt, 3, dims)))
		return ctx->st->code;
	if (lstm && ox_has_output(ctx, 2) && !(out[2] = ox_out_tensor(ctx, 2, dt, 3, dims)))
		return ctx->st->code;
	if (ox_has_output(ctx, 0))
	{
		int64_t		ydims[4];

		if (s->layout == 0)
		{
			ydims[0] = d.seq;
			ydims[1] = nd;
			ydims[2] = d.batch;
		}
		else
		{
			ydims[0] = d.batch;
			ydims[1] = d.seq;
			ydims[2] = nd;
		}
		ydims[3] = d.hidden;
		if (!(out[0] = ox_out_tensor(ctx, 0, dt, 4, ydims)))
			return ctx->st->code;
	}

	memset(&io, 0, sizeof(io));
	io.lens = in[4] ? OX_DATA(in[4], int32_t) : NULL;
	if (dt == OX_FLOAT16 || dt == OX_BFLOAT16)
		return rnn_run_staged(ctx, s, &d, in, out, &io);
	io.x = x->data;
	io.w = w->data;
	io.r = r->data;
	io.b = in[3] ? in[3]->data : NULL;
	io.h0 = in[5] ? in[5]->data : NULL;
	io.c0 = in[6] ? in[6]->data : NULL;
	io.p = in[7] ? in[7]->data : NULL;
	io.y = out[0] ? out[0]->data : NULL;
	io.yh = out[1] ? out[1]->data : NULL;
	io.yc = out[2] ? out[2]->data : NULL;
	return rnn_compute(ctx, s, &d, &io, dt == OX_DOUBLE ? &rnn_ops_f64 : &rnn_ops_f32);
}

const ox_kernel_def ox_kernels_rnn[] = {
	{"", "RNN", 1, rnn_prepare, rnn_run, rnn_free},
	{"", "GRU", 1, gru_prepare, rnn_run, rnn_free},
	{"", "LSTM", 1, lstm_prepare, rnn_run, rnn_free},
};
const int	ox_kernels_rnn_count = OX_KERNEL_COUNT(ox_kernels_rnn);
