/*
 * gemm.c
 *	  Gemm, MatMul, com.microsoft FusedGemm and FusedMatMul, the BLAS
 *	  wrappers the other nn families use, and the gemm family table
 *	  (MatMulInteger, QLinearMatMul and Einsum live in gemm_quant.c and
 *	  gemm_einsum.c; the com.microsoft Gelu and BiasGelu that follow
 *	  transformer projections in attention_contrib.c).
 *
 * float32 goes to our SGEMM (sgemm.c), with constant B packed once at
 * prepare; Gemm's bias row and FusedGemm's activation are applied by the
 * GEMM's epilogue while each block of the output is in cache.  Batched
 * float32 MatMuls (attention heads) run one single-threaded GEMM per batch
 * matrix, the batch split across the intra-op threads.  double goes to
 * OpenBLAS; float16 and bfloat16 are staged through float32; integer types
 * use a plain i-k-j loop that the compiler vectorizes, with wrap-around
 * arithmetic done in the unsigned type so that overflow is defined.
 */
#include "kernels/cpu/nn.h"
#include "kernels/cpu/sgemm.h"
#include "kernels/cpu/fused_act.h"
#include "kernels/cpu/attention_contrib.h"
#include "kernels/cpu/tensor_ops.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

/* ---- BLAS wrappers ------------------------------------------------------ */

/*
 * OpenBLAS reports bad arguments by printing, so degenerate sizes (an empty
 * output, or k == 0, where the leading dimension may legally be 0) are
 * handled here instead of reaching it.
 */
void
nn_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
		 const float *a, int64_t lda, const float *b, int64_t ldb,
		 float beta, float *c, int64_t ldc)
{
	/* our own kernels, threaded by the running kernel's context; a failure
	 * (out of memory for packing) lands in its status, which the executor checks */
	(void) ox_sgemm(ox_kernel_current(), ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void
nn_dgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
		 const double *a, int64_t lda, const double *b, int64_t ldb,
		 double beta, double *c, int64_t ldc)
{
	if (m == 0 || n == 0)
		return;
	if (k == 0)
	{
		for (int64_t i = 0; i < m; i++)
			for (int64_t j = 0; j < n; j++)
				c[i * ldc + j] = beta == 0 ? 0 : beta * c[i * ldc + j];
		return;
	}
	cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
				(int) m, (int) n, (int) k, alpha, a, (int) lda, b, (int) ldb, beta, c, (int) ldc);
}

/* ---- integer products --------------------------------------------------- */

/* y[m, n] = op(a) op(b); a is [m, k] (or [k, m] when ta), b is [k, n] (or [n, k]) */
#define DEFINE_INT_MATMUL(NAME, T, U) \
static void \
NAME(const T *a, const T *b, T *y, int64_t m, int64_t n, int64_t k, bool ta, bool tb) \
{ \
	for (int64_t i = 0; i < m; i++) \
	{ \
		T		   *yr = y + i * n; \
		for (int64_t j = 0; j < n; j++) \
			yr[j] = 0; \
		for (int64_t p = 0; p < k; p++) \
		{ \
			U			av = (U) (ta ? a[p * m + i] : a[i * k + p]); \
			if (!tb) \
			{ \
				const T    *br = b + p * n; \
				for (int64_t j = 0; j < n; j++) \
					yr[j] = (T) ((U) yr[j] + av * (U) br[j]); \
			} \
			else \
			{ \
				for (int64_t j = 0; j < n; j++) \
					yr[j] = (T) ((U) yr[j] + av * (U) b[j * k + p]); \
			} \
		} \
	} \
}

DEFINE_INT_MATMUL(matmul_i32, int32_t, uint32_t)
DEFINE_INT_MATMUL(matmul_i64, int64_t, uint64_t)
DEFINE_INT_MATMUL(matmul_u32, uint32_t, uint32_t)
DEFINE_INT_MATMUL(matmul_u64, uint64_t, uint64_t)

/* the arithmetic a (Mat)Mul runs in, chosen once per call from the dtype */
typedef enum mm_kind
{
	MM_F32,
	MM_F64,
	MM_STAGED,					/* float16/bfloat16 through float32 */
	MM_I32,
	MM_I64,
	MM_U32,
	MM_U64,
	MM_NONE
} mm_kind;

static mm_kind
mm_kind_of(ox_dtype dt)
{
	switch (dt)
	{
		case OX_FLOAT:
			return MM_F32;
		case OX_DOUBLE:
			return MM_F64;
		case OX_FLOAT16:
		case OX_BFLOAT16:
			return MM_STAGED;
		case OX_INT32:
			return MM_I32;
		case OX_INT64:
			return MM_I64;
		case OX_UINT32:
			return MM_U32;
		case OX_UINT64:
			return MM_U64;
		default:
			return MM_NONE;
	}
}

/* one product of matrices at element offsets; integer and float kinds */
static void
mm_int_product(mm_kind kind, const void *a, const void *b, void *y, int64_t m, int64_t n,
			   int64_t k, bool ta, bool tb)
{
	switch (kind)
	{
		case MM_I32:
			matmul_i32(a, b, y, m, n, k, ta, tb);
			break;
		case MM_I64:
			matmul_i64(a, b, y, m, n, k, ta, tb);
			break;
		case MM_U32:
			matmul_u32(a, b, y, m, n, k, ta, tb);
			break;
		case MM_U64:
			matmul_u64(a, b, y, m, n, k, ta, tb);
			break;
		default:
			break;
	}
}

/* ---- Gemm --------------------------------------------------------------- */

/*
 * A constant float B packed once in the micro-kernel's layout.  src is the
 * constant's data: runs use the packed copy only when B is still that
 * tensor (an initializer that is also a graph input can be overridden).
 */
typedef struct nn_packed_weight
{
	ox_sgemm_packed *packed;
	const void *src;
} nn_packed_weight;

/*
 * Pack a constant 2-D float B if this machine has our GEMM kernels.  Not a
 * B of one column (a regression head): the GEMM takes a dot product per
 * row of A from B itself (column_dots in sgemm.c), and a packed copy would
 * pad the column to sixteen.
 */
static ox_code
pack_constant_b(ox_prepare_ctx *pc, int input, bool trans_b, nn_packed_weight *w)
{
	const ox_tensor *b = ox_prepare_constant(pc, input);

	if (!b || b->dtype != OX_FLOAT || b->rank != 2 || ox_tensor_numel(b) <= 0 ||
		b->dims[trans_b ? 0 : 1] == 1)
		return OX_OK;
	w->packed = ox_sgemm_pack_b(trans_b, trans_b ? b->dims[1] : b->dims[0],
								trans_b ? b->dims[0] : b->dims[1], b->data, b->dims[1], pc->st);
	w->src = b->data;
	return pc->st->code;
}

/* whether b is the constant w was packed from (or its session freed it: then w is all there is) */
static inline bool
packed_is_b(const nn_packed_weight *w, const ox_tensor *b)
{
	return w->packed && (b->data == w->src || b->released);
}

/* the declared type of the node's input 0 (A), or NULL without the graph */
static const ox_type *
input0_type(const ox_prepare_ctx *pc)
{
	const ox_value_def *def = (pc->graph && pc->node->n_inputs > 0 && pc->node->inputs[0] >= 0 &&
							   pc->node->inputs[0] < pc->graph->n_values)
		? ox_node_input_def(pc->graph, pc->node, 0) : NULL;

	return def ? &def->type : NULL;
}

/*
 * The rows A gives the product (Gemm: op(A)'s first dimension; MatMul: all
 * of A's dimensions but the last, batches folded in) when A's shape is
 * static, else -1.
 */
static int64_t
static_product_rows(const ox_prepare_ctx *pc, bool gemm, bool trans_a)
{
	const ox_type *t = input0_type(pc);
	int64_t		rows = 1;

	if (!t || t->kind != OX_TYPE_TENSOR || t->rank < 2 || (gemm && t->rank != 2))
		return -1;
	for (int i = 0; i < t->rank; i++)
		if (t->dims[i].value < 0)
			return -1;
	if (gemm)
		return t->dims[trans_a ? 1 : 0].value;
	for (int i = 0; i < t->rank - 1; i++)
		rows *= t->dims[i].value;
	return rows;
}

/*
 * From this many floats of B on (2 MB, about a core's L2), the packed copy
 * is all a session keeps: one or two rows then sum its slivers (the packed
 * GEMV, sgemm.c) rather than stream the original B or a [K, N] copy of it.
 * A smaller B keeps the original for one or two rows, whose dot products
 * and zigzag order win while B fits in L2 (issue 4's MLP, 1.6 and 1 MB),
 * and costs little memory.  Above it the GEMV streams B from L3 or memory
 * whichever copy it reads: batch-1 products by one packed copy took
 * 0.97-1.00x the dot products' time over weights of 1 to 9.4 MB (several
 * layers in turn, from L3) and 0.67-0.85x over 67 and 151 MB, while three
 * copies (the original, the packed one, the [K, N] one) were three times
 * onnxruntime's memory and most of the session's creation (AlexNet with
 * a dynamic batch: 730 MB and 2 to 5 s against 267 MB and 0.8 s).  Rows
 * with many zeros (after a ReLU) lose a little of their skipping: a packed
 * depth is 128 bytes a sliver, which the prefetchers read anyway, where a
 * row of the [K, N] copy is the whole N (1.2-1.8x those rows' time).
 */
#define GEMM_PACKED_ONLY_MIN_FLOATS ((int64_t) 512 * 1024)

static bool
packed_only(const nn_packed_weight *w)
{
	return w->packed && (int64_t) ox_sgemm_packed_bytes(w->packed) / (int64_t) sizeof(float) >=
		GEMM_PACKED_ONLY_MIN_FLOATS;
}

/*
 * A packed B whose products always have more than two rows is the only
 * copy a run needs (one or two rows stream the original B instead), as is
 * a large one (packed_only): the session may free the original
 * (ox_prepare_releasable).  a_rank_ok: A's rank is known to suit the
 * packed path (MatMul: at least 2).
 */
static void
offer_release(ox_prepare_ctx *pc, const nn_packed_weight *w, int64_t rows, bool a_rank_ok)
{
	if (w->packed && (rows > 2 || (a_rank_ok && packed_only(w))))
		ox_prepare_releasable(pc, 1);
}

/* whether input 0 (A) is declared a tensor of rank 2 or more */
static bool
a_rank_at_least_2(const ox_prepare_ctx *pc)
{
	const ox_type *t = input0_type(pc);

	return t && t->kind == OX_TYPE_TENSOR && t->rank >= 2;
}

/* whether the constant B input has no infinity or NaN (ox_sgemm_epilogue.b_finite) */
static bool
constant_b_finite(const ox_prepare_ctx *pc, int input)
{
	const ox_tensor *b = ox_prepare_constant(pc, input);
	int64_t		n = b ? ox_tensor_numel(b) : 0;

	if (!b || b->dtype != OX_FLOAT || n <= 0 || !b->data)
		return false;
	for (int64_t i = 0; i < n; i++)
		if (!isfinite(((const float *) b->data)[i]))
			return false;
	return true;
}

/* the share of zeros among n floats (a GEMV's rows, after a ReLU) */
static double
zero_share(const float *x, int64_t n)
{
	return n > 0 ? (double) ox_sgemm_zero_count(x, n) / (double) n : 0.0;
}

/*
 * Attributes parsed once, and B packed when it is a constant.
 *
 * A constant transposed B (PyTorch's Linear: [N, K]) of a Gemm that may run
 * on one or two rows also gets a [K, N] copy, kmajor.  A row whose zeros
 * are many (the ReLU before every layer but the first: about half of them)
 * then sums x[k] * B[k, :] and skips B's rows where x[k] is 0, reading that
 * much less of B; dense rows keep the dot products over B's rows (a little
 * faster on a dense row from L3), except over a small B (below).  Issue 4's
 * MLP at batch 1: its 512 x 512 layer 11.3 us -> 6.9.  Only a finite B:
 * 0 * inf is NaN.
 */
#define GEMM_SPARSE_ROW_SHARE (1.0 / 8.0)

/*
 * A B of at most this many floats (256 KB, within one core's L2) takes the
 * [K, N] copy's row sums for a dense row too: at that size the dot
 * products' general dispatch, not the weights' reading, is the difference.
 * PyTorch-exported networks row by row, engine alone (Zen 4, medians of 8
 * interleaved pairs): 100-64-64-1 1.16x the rows per second, 100-100-1
 * 1.16x, 100-32-16-1 1.18x, 100-256-256-1 1.05x; 400-256-1 and 784-256-1
 * (102 and 200 thousand floats with this bound raised) 1.02x and 1.01x,
 * and issue 4's 784 x 512 layer from L3 0.96x: the dot products stay
 * there.
 */
#define GEMM_SMALL_KMAJOR (64 * 1024)

typedef struct gemm_state
{
	bool		trans_a;
	bool		trans_b;
	float		alpha;
	float		beta;
	bool		b_is_constant;
	bool		b_finite;		/* the constant B has no inf or NaN */
	nn_packed_weight b;
	float	   *kmajor;			/* transposed constant B as [K, N], or NULL */
	nn_activation act;			/* FusedGemm only */
} gemm_state;

static ox_code
gemm_prepare(ox_prepare_ctx *pc)
{
	const ox_node *node = pc->node;
	gemm_state *s;
	int64_t		ta = ox_attr_int(node, "transA", 0);
	int64_t		tb = ox_attr_int(node, "transB", 0);
	int64_t		bc = ox_attr_int(node, "broadcast", 0);
	const ox_tensor *bconst;	/* the constant B, or NULL */
	int64_t		rows;

	if ((ta != 0 && ta != 1) || (tb != 0 && tb != 1))
		return ox_fail(pc->st, OX_INVALID_ARGUMENT,
					   "Gemm: transA and transB must be 0 or 1, got %lld and %lld",
					   (long long) ta, (long long) tb);
	if (bc != 0 && bc != 1)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "Gemm: broadcast must be 0 or 1, got %lld",
					   (long long) bc);
	s = calloc(1, sizeof(*s));
	if (!s)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "Gemm: could not allocate state");
	s->trans_a = ta == 1;
	s->trans_b = tb == 1;
	s->alpha = ox_attr_float(node, "alpha", 1.0f);
	s->beta = ox_attr_float(node, "beta", 1.0f);
	bconst = ox_prepare_constant(pc, 1);
	s->b_is_constant = bconst != NULL;
	pc->state = s;
	if (strcmp(node->op_type, "FusedGemm") == 0)
		OX_TRY(nn_activation_parse(node, &s->act, pc->st));
	OX_TRY(pack_constant_b(pc, 1, s->trans_b, &s->b));
	rows = static_product_rows(pc, true, s->trans_a);
	offer_release(pc, &s->b, rows, true);
	s->b_finite = s->b_is_constant && constant_b_finite(pc, 1);
	/*
	 * Not for fewer than 16 columns (a classifier head): their sums of rows
	 * fill one vector, each row's multiply-add waiting on the previous one
	 * (the 512 x 10 head of issue 4's MLP: 252 in a chain), where the dot
	 * products of B's few rows run side by side.
	 */
	if (s->b_finite && s->trans_b && !s->trans_a && rows <= 2 && bconst->rank == 2 &&
		bconst->dims[0] >= 16 && !packed_only(&s->b))
	{
		const ox_tensor *b = bconst;
		int64_t		n = b->dims[0],
					k = b->dims[1];

		s->kmajor = ox_aligned_alloc_huge(sizeof(float) * (size_t) (n * k));
		if (!s->kmajor)
			return ox_fail(pc->st, OX_OUT_OF_MEMORY, "Gemm: could not allocate a %lld x %lld weight copy",
						   (long long) k, (long long) n);
		oxt_transpose_f32(s->kmajor, b->data, k, n, k);
	}
	return OX_OK;
}

static void
gemm_free(void *state)
{
	gemm_state *s = state;

	if (s)
	{
		ox_sgemm_packed_free(s->b.packed);
		ox_aligned_free(s->kmajor);
	}
	free(s);
}

/* C broadcast to [m, n]: element (i, j) is c[i * ci + j * cj] */
static ox_code
gemm_c_strides(const ox_tensor *c, int64_t m, int64_t n, int64_t *ci, int64_t *cj,
			   ox_status *st)
{
	int64_t		cm = 1,
				cn = 1;
	char		buf[NN_SHAPE_LEN];

	if (c->rank > 2)
		return ox_fail(st, OX_INVALID_ARGUMENT, "Gemm: C has shape %s, expected rank <= 2",
					   nn_shape(c, buf));
	if (c->rank >= 1)
		cn = c->dims[c->rank - 1];
	if (c->rank == 2)
		cm = c->dims[0];
	if ((cm != 1 && cm != m) || (cn != 1 && cn != n))
		return ox_fail(st, OX_INVALID_ARGUMENT,
					   "Gemm: C has shape %s, which does not broadcast to [%lld, %lld]",
					   nn_shape(c, buf), (long long) m, (long long) n);
	*ci = cm == 1 ? 0 : cn;
	*cj = cn == 1 ? 0 : 1;
	return OX_OK;
}

#define DEFINE_FILL_C(NAME, T) \
static void \
NAME(T *y, const T *c, int64_t m, int64_t n, int64_t ci, int64_t cj) \
{ \
	for (int64_t i = 0; i < m; i++) \
		for (int64_t j = 0; j < n; j++) \
			y[i * n + j] = c[i * ci + j * cj]; \
}
DEFINE_FILL_C(fill_c_f32, float)
DEFINE_FILL_C(fill_c_f64, double)

/* integer Gemm: y = alpha * y + beta * c, computed in double unless trivial */
#define DEFINE_INT_EPILOGUE(NAME, T) \
static void \
NAME(T *y, const T *c, int64_t m, int64_t n, int64_t ci, int64_t cj, double alpha, double beta) \
{ \
	for (int64_t i = 0; i < m; i++) \
		for (int64_t j = 0; j < n; j++) \
		{ \
			T			cv = c ? c[i * ci + j * cj] : 0; \
			if (alpha == 1 && (beta == 1 || !c)) \
				y[i * n + j] = (T) (y[i * n + j] + cv); \
			else \
				y[i * n + j] = (T) (alpha * (double) y[i * n + j] + beta * (double) cv); \
		} \
}
DEFINE_INT_EPILOGUE(epilogue_i32, int32_t)
DEFINE_INT_EPILOGUE(epilogue_i64, int64_t)
DEFINE_INT_EPILOGUE(epilogue_u32, uint32_t)
DEFINE_INT_EPILOGUE(epilogue_u64, uint64_t)

/* FusedGemm's activation on a finished block of the output */
static void
gemm_post_activation(void *arg, int64_t row0, int64_t col0, int64_t rows, int64_t cols, float *c,
					 int64_t ldc)
{
	const nn_activation *act = arg;

	(void) row0;
	(void) col0;
	for (int64_t r = 0; r < rows; r++)
		nn_activation_apply_row_f32(act, c + r * ldc, cols);
}

/*
 * float32 Gemm: y = alpha * op(a) op(b) + beta * c, then the activation.
 * A c that is one row (the usual bias) goes to the GEMM's epilogue as a
 * bias row, scaled by beta first when beta is not 1; a full c is copied
 * into y and accumulated onto.
 */
static ox_code
gemm_f32(ox_kernel_ctx *ctx, const gemm_state *s, const ox_tensor *a, const ox_tensor *b,
		 const ox_tensor *c, int64_t ci, int64_t cj, int64_t m, int64_t n, int64_t k, ox_tensor *y)
{
	ox_sgemm_epilogue epi;
	float		row_buf[1024];
	float	   *row_heap = NULL;
	float		beta = 0.0f;
	ox_code		rc;

	memset(&epi, 0, sizeof(epi));
	if (c && ci == 0)
	{
		if (s->beta == 1.0f && cj == 1)
			epi.bias = c->data;
		else
		{
			float	   *row = n <= 1024 ? row_buf : (row_heap = nn_scratch(n, sizeof(float), ctx->st, "Gemm"));

			if (!row)
				return ctx->st->code;
			for (int64_t j = 0; j < n; j++)
				row[j] = s->beta * ((const float *) c->data)[j * cj];
			epi.bias = row;
		}
	}
	else if (c)
	{
		fill_c_f32(y->data, c->data, m, n, ci, cj);
		beta = s->beta;
	}
	/* Relu and Clip in the micro-kernel's registers, the rest on finished blocks */
	if (s->act.kind == NN_ACT_RELU || s->act.kind == NN_ACT_CLIP)
	{
		epi.clamp = true;
		epi.clamp_lo = s->act.kind == NN_ACT_RELU ? 0.0f : s->act.p0;
		epi.clamp_hi = s->act.kind == NN_ACT_RELU ? INFINITY : s->act.p1;
	}
	else if (s->act.kind != NN_ACT_NONE)
	{
		epi.post = gemm_post_activation;
		epi.post_arg = (void *) &s->act;
	}
	epi.b_finite = s->b_finite && (b->data == s->b.src || b->released);
	/* one or two rows stream B directly: cheaper than the padded tile */
	if (packed_is_b(&s->b, b) && (m > 2 || b->released))
		rc = ox_sgemm_packed_b_ex(ctx, s->trans_a, m, s->alpha, a->data, a->dims[1], s->b.packed,
								  beta, y->data, n, &epi);
	else
	{
		bool		sparse_rows = s->kmajor && m <= 2 && b->data == s->b.src &&
			zero_share(a->data, m * k) >= GEMM_SPARSE_ROW_SHARE;
		bool		small_kmajor = s->kmajor && m == 1 && b->data == s->b.src && n * k <= GEMM_SMALL_KMAJOR;

		/* a row-wise call's layers: B's rows summed without the GEMM's dispatch */
		if (m == 1 && !s->trans_a && s->alpha == 1.0f && beta == 0.0f &&
			(sparse_rows || small_kmajor || !s->trans_b) &&
			ox_sgemm_row_sums(ctx, n, k, a->data, sparse_rows || small_kmajor ? s->kmajor : b->data, n, &epi, y->data))
			rc = OX_OK;
		else if (sparse_rows)
			rc = ox_sgemm_ex(ctx, false, false, m, n, k, s->alpha, a->data, a->dims[1], s->kmajor, n,
							 beta, y->data, n, &epi);
		else
			rc = ox_sgemm_ex(ctx, s->trans_a, s->trans_b, m, n, k, s->alpha, a->data, a->dims[1],
							 b->data, b->dims[1], beta, y->data, n, &epi);
	}
	ox_aligned_free(row_heap);
	return rc;
}

static ox_code
gemm_run(ox_kernel_ctx *ctx)
{
	const gemm_state *s = ctx->state;
	const ox_tensor *a = ox_in_tensor(ctx, 0);
	const ox_tensor *b = ox_in_tensor(ctx, 1);
	const ox_tensor *c = ox_in_tensor(ctx, 2);
	char		sa[NN_SHAPE_LEN],
				sb[NN_SHAPE_LEN];
	int64_t		m,
				k,
				kb,
				n,
				ci = 0,
				cj = 0,
				dims[2];
	mm_kind		kind;
	ox_tensor  *y;
	bool		use_c;

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "Gemm: not prepared");
	if (!a || !b)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Gemm: inputs A and B are required");
	if (a->rank != 2 || b->rank != 2)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Gemm: A has shape %s and B has shape %s, expected 2-D",
					   nn_shape(a, sa), nn_shape(b, sb));
	if (a->dtype != b->dtype || (c && c->dtype != a->dtype))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Gemm: input types differ (%s, %s, %s)",
					   ox_dtype_name(a->dtype), ox_dtype_name(b->dtype),
					   c ? ox_dtype_name(c->dtype) : "none");
	kind = mm_kind_of(a->dtype);
	if (kind == MM_NONE)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "Gemm: type %s is not supported",
					   ox_dtype_name(a->dtype));
	m = s->trans_a ? a->dims[1] : a->dims[0];
	k = s->trans_a ? a->dims[0] : a->dims[1];
	kb = s->trans_b ? b->dims[1] : b->dims[0];
	n = s->trans_b ? b->dims[0] : b->dims[1];
	if (k != kb)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "Gemm: A has shape %s but B has shape %s (transA=%d, transB=%d): inner dimensions %lld and %lld differ",
					   nn_shape(a, sa), nn_shape(b, sb), s->trans_a, s->trans_b,
					   (long long) k, (long long) kb);
	if (!nn_blas_fits(m, n, k))
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "Gemm: dimensions %lld x %lld x %lld are too large",
					   (long long) m, (long long) n, (long long) k);
	use_c = c && s->beta != 0;
	if (c)
		OX_TRY(gemm_c_strides(c, m, n, &ci, &cj, ctx->st));
	dims[0] = m;
	dims[1] = n;
	if (!(y = ox_out_tensor(ctx, 0, a->dtype, 2, dims)))
		return ctx->st->code;
	if (m * n == 0)
		return OX_OK;

	switch (kind)
	{
		case MM_F32:
			return gemm_f32(ctx, s, a, b, use_c ? c : NULL, ci, cj, m, n, k, y);
		case MM_F64:
			if (use_c)
				fill_c_f64(y->data, c->data, m, n, ci, cj);
			nn_dgemm(s->trans_a, s->trans_b, m, n, k, s->alpha, a->data, a->dims[1],
					 b->data, b->dims[1], use_c ? s->beta : 0.0, y->data, n);
			break;
		case MM_STAGED:
			{
				float	   *fa = nn_to_float(a, ctx->st),
						   *fb = fa ? nn_to_float(b, ctx->st) : NULL,
						   *fc = (fb && use_c) ? nn_to_float(c, ctx->st) : NULL,
						   *fy = (fb && (!use_c || fc)) ? nn_scratch(m * n, sizeof(float), ctx->st, "Gemm") : NULL;
				ox_code		rc = ctx->st->code;

				if (fy)
				{
					if (use_c)
						fill_c_f32(fy, fc, m, n, ci, cj);
					nn_sgemm(s->trans_a, s->trans_b, m, n, k, s->alpha, fa, a->dims[1],
							 fb, b->dims[1], use_c ? s->beta : 0.0f, fy, n);
					rc = nn_store_float(y, fy, m * n, ctx->st);
				}
				ox_aligned_free(fa);
				ox_aligned_free(fb);
				ox_aligned_free(fc);
				ox_aligned_free(fy);
				return rc;
			}
		default:
			mm_int_product(kind, a->data, b->data, y->data, m, n, k, s->trans_a, s->trans_b);
			{
				const void *cd = use_c ? c->data : NULL;

				if (kind == MM_I32)
					epilogue_i32(y->data, cd, m, n, ci, cj, s->alpha, s->beta);
				else if (kind == MM_I64)
					epilogue_i64(y->data, cd, m, n, ci, cj, s->alpha, s->beta);
				else if (kind == MM_U32)
					epilogue_u32(y->data, cd, m, n, ci, cj, s->alpha, s->beta);
				else
					epilogue_u64(y->data, cd, m, n, ci, cj, s->alpha, s->beta);
			}
			break;
	}
	return OX_OK;
}

/* ---- MatMul, FusedMatMul ------------------------------------------------- */

/*
 * numpy matmul: 1-D operands are promoted ([K] -> [1, K] for A, [K, 1] for
 * B) and the promoted axis dropped from the result; leading batch axes
 * broadcast.  When B has a single matrix and A's batch is not broadcast,
 * A's batch folds into M and one GEMM does the whole product.
 *
 * com.microsoft FusedMatMul adds alpha (the product is scaled by it),
 * transA / transB (the last two axes of an operand of rank >= 2 are
 * swapped) and transBatchA / transBatchB: an operand of rank r >= 3 is read
 * as if transposed by perm [1, ..., r - 2, 0, r - 1] first (its first axis
 * moved to the matrix rows, onnxruntime's semantics), which is how
 * attention reads the heads of [seq, batch * heads, d] without copying
 * them to [batch * heads, seq, d]: each matrix is a strided view, rows
 * prod(dims[1..r-1]) apart.
 */
typedef struct mm_plan
{
	int64_t		m,
				n,
				k;
	int64_t		nbatch;
	int			nb;				/* batch rank of the output */
	int64_t		bdims[OX_MAX_RANK];
	int64_t		astride[OX_MAX_RANK];	/* in elements; 0 where broadcast */
	int64_t		bstride[OX_MAX_RANK];
	int64_t		lda,
				ldb;			/* row strides of the stored matrices */
	bool		fold;
	bool		ta,
				tb;				/* operands stored transposed */
	bool		batch_view;		/* an operand read through transBatch */
	float		alpha;
} mm_plan;

/*
 * One operand as stored: its batch axes (sizes and element strides) and
 * its matrix, rows ld apart (columns adjacent).  With trans_batch the first
 * axis becomes the matrix rows.
 */
typedef struct mm_view
{
	int			nbatch_axes;
	int64_t		dims[OX_MAX_RANK];	/* batch axes, then rows, then columns */
	int64_t		strides[OX_MAX_RANK];	/* in elements, in the same order */
	int64_t		ld;
} mm_view;

static ox_code
mm_view_make(const char *op, const char *which, const ox_tensor *x, bool trans_batch, mm_view *v,
			 ox_status *st)
{
	int			r = x->rank;
	int64_t		natural[OX_MAX_RANK];

	if (r > OX_MAX_RANK)
		return ox_fail(st, OX_LIMIT_EXCEEDED, "%s: %s has rank %d", op, which, r);
	natural[r - 1] = 1;
	for (int i = r - 2; i >= 0; i--)
		natural[i] = natural[i + 1] * x->dims[i + 1];
	v->nbatch_axes = r > 2 ? r - 2 : 0;
	/* the axes in the order read: with trans_batch, axis 0 moves to the rows */
	for (int i = 0; i < r; i++)
	{
		int			from = trans_batch && i < r - 1 ? (i + 1) % (r - 1) : i;

		v->dims[i] = x->dims[from];
		v->strides[i] = natural[from];
	}
	v->ld = r >= 2 ? v->strides[r - 2] : x->dims[0];
	return OX_OK;
}

static ox_code
mm_plan_make(const char *op, const ox_tensor *a, const ox_tensor *b, bool ta, bool tb, bool tba, bool tbb,
			 mm_plan *p, int *y_rank, int64_t *y_dims, ox_status *st)
{
	char		sa[NN_SHAPE_LEN],
				sb[NN_SHAPE_LEN];
	int			ra = a->rank,
				rb = b->rank,
				nba,
				nbb;
	int64_t		kb,
				amats = 1,
				bmats = 1;
	mm_view		va,
				vb;

	if (ra < 1 || rb < 1)
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: A has shape %s and B has shape %s, expected at least 1-D",
					   op, nn_shape(a, sa), nn_shape(b, sb));
	/* onnxruntime's rule, so that a model that runs here runs there */
	if ((tba || tbb) && (ra != rb || ra < 3))
		return ox_fail(st, OX_INVALID_ARGUMENT,
					   "%s: with transBatchA or transBatchB, A and B need the same rank, 3 or more; A has shape %s and B has shape %s",
					   op, nn_shape(a, sa), nn_shape(b, sb));
	OX_TRY(mm_view_make(op, "A", a, tba, &va, st));
	OX_TRY(mm_view_make(op, "B", b, tbb, &vb, st));
	/* a vector has nothing to transpose */
	p->ta = ta && ra > 1;
	p->tb = tb && rb > 1;
	p->batch_view = tba || tbb;
	p->alpha = 1.0f;
	p->m = ra == 1 ? 1 : va.dims[ra - (p->ta ? 1 : 2)];
	p->k = va.dims[ra - (p->ta ? 2 : 1)];
	kb = rb == 1 ? vb.dims[0] : vb.dims[rb - (p->tb ? 1 : 2)];
	p->n = rb == 1 ? 1 : vb.dims[rb - (p->tb ? 2 : 1)];
	p->lda = va.ld;
	p->ldb = rb == 1 ? 1 : vb.ld;
	if (p->k != kb)
		return ox_fail(st, OX_INVALID_ARGUMENT,
					   "%s: A has shape %s but B has shape %s: inner dimensions %lld and %lld differ",
					   op, nn_shape(a, sa), nn_shape(b, sb), (long long) p->k, (long long) kb);
	nba = va.nbatch_axes;
	nbb = vb.nbatch_axes;
	p->nb = nba > nbb ? nba : nbb;
	for (int i = p->nb - 1; i >= 0; i--)
	{
		int			ia = i - (p->nb - nba),
					ib = i - (p->nb - nbb);
		int64_t		da = ia >= 0 ? va.dims[ia] : 1,
					db = ib >= 0 ? vb.dims[ib] : 1;

		if (da != db && da != 1 && db != 1)
			return ox_fail(st, OX_INVALID_ARGUMENT,
						   "%s: A has shape %s and B has shape %s: batch dimensions do not broadcast",
						   op, nn_shape(a, sa), nn_shape(b, sb));
		p->bdims[i] = da == 1 ? db : da;
		p->astride[i] = da == 1 ? 0 : va.strides[ia];
		p->bstride[i] = db == 1 ? 0 : vb.strides[ib];
		amats *= da;
		bmats *= db;
	}
	p->nbatch = ox_shape_numel(p->nb, p->bdims);
	*y_rank = 0;
	for (int i = 0; i < p->nb; i++)
		y_dims[(*y_rank)++] = p->bdims[i];
	if (ra > 1)
		y_dims[(*y_rank)++] = p->m;
	if (rb > 1)
		y_dims[(*y_rank)++] = p->n;
	if (p->nbatch < 0 || ox_shape_numel(*y_rank, y_dims) < 0)
		return ox_fail(st, OX_LIMIT_EXCEEDED, "%s: output of A %s times B %s is too large",
					   op, nn_shape(a, sa), nn_shape(b, sb));
	/* A's matrices stacked are one tall matrix only when stored untransposed and adjacent */
	p->fold = bmats == 1 && amats == p->nbatch && p->nbatch > 1 && !p->ta && !tba;
	if (!nn_blas_fits(p->fold ? p->m * p->nbatch : p->m, p->n, p->k))
		return ox_fail(st, OX_LIMIT_EXCEEDED, "%s: dimensions %lld x %lld x %lld are too large",
					   op, (long long) p->m, (long long) p->n, (long long) p->k);
	return OX_OK;
}

/* element offsets of A's and B's matrices for output batch index bi */
static inline void
mm_batch_offsets(const mm_plan *p, int64_t bi, int64_t *ao, int64_t *bo)
{
	int64_t		ra = 0,
				rb = 0;

	for (int i = p->nb - 1; i >= 0; i--)
	{
		int64_t		idx = bi % p->bdims[i];

		bi /= p->bdims[i];
		ra += idx * p->astride[i];
		rb += idx * p->bstride[i];
	}
	*ao = ra;
	*bo = rb;
}

/* float32 batch matrices [begin, end), one single-threaded GEMM each */
typedef struct mm_batch_job
{
	const mm_plan *p;
	const float *a;
	const float *b;
	float	   *y;
	bool		failed;
} mm_batch_job;

/*
 * A matrix read through transBatch, copied row by row into a buffer of the
 * calling thread before its GEMM (src itself when its rows are adjacent).
 * Its rows are ld apart, and an attention head's (rows batch * heads * d
 * floats apart, often a multiple of 4 KB) all map to one cache set: the
 * GEMM's packing, which reads a few rows side by side, then missed L1 and
 * L2 at every step (q . k^T of tinytf at batch 64: 3.0 ms a layer read in
 * place, against 2.5 ms copied here).  Row by row, each line is read once.
 */
static __thread float *tls_view_a;
static __thread size_t tls_view_a_len;
static __thread float *tls_view_b;
static __thread size_t tls_view_b_len;

static const float *
mm_gather(const float *src, int64_t rows, int64_t cols, int64_t ld, float **buf, size_t *len)
{
	float	   *d;

	if (ld == cols || rows <= 1)
		return src;
	d = ox_aligned_grow(buf, len, (size_t) (rows * cols));
	if (!d)
		return NULL;
	for (int64_t r = 0; r < rows; r++)
		memcpy(d + r * cols, src + r * ld, sizeof(float) * (size_t) cols);
	return d;
}

/* the float32 product of output batch bi, one GEMM */
static ox_code
mm_f32_batch(ox_kernel_ctx *ctx, const mm_plan *p, const float *a, const float *b, float *y, int64_t bi,
			 ox_status *st)
{
	int64_t		ao,
				bo,
				lda = p->lda,
				ldb = p->ldb;

	mm_batch_offsets(p, bi, &ao, &bo);
	a += ao;
	b += bo;
	if (p->batch_view)
	{
		int64_t		acols = p->ta ? p->m : p->k,
					bcols = p->tb ? p->k : p->n;

		a = mm_gather(a, p->ta ? p->k : p->m, acols, lda, &tls_view_a, &tls_view_a_len);
		b = mm_gather(b, p->tb ? p->n : p->k, bcols, ldb, &tls_view_b, &tls_view_b_len);
		if (!a || !b)
			return ox_fail(st, OX_OUT_OF_MEMORY, "MatMul: could not allocate a matrix buffer");
		lda = acols;
		ldb = bcols;
	}
	return ox_sgemm(ctx, p->ta, p->tb, p->m, p->n, p->k, p->alpha, a, lda, b, ldb, 0.0f, y + bi * p->m * p->n,
					p->n);
}

static void
mm_batch_task(void *arg, int64_t begin, int64_t end)
{
	mm_batch_job *j = arg;

	for (int64_t bi = begin; bi < end; bi++)
		if (mm_f32_batch(NULL, j->p, j->a, j->b, j->y, bi, NULL) != OX_OK)
			j->failed = true;
}

static ox_code
mm_execute(ox_kernel_ctx *ctx, const mm_plan *p, mm_kind kind, const void *a, const void *b, void *y)
{
	int64_t		mn = p->m * p->n;
	int64_t		lda = p->lda,
				ldb = p->ldb;

	if (p->fold)
	{
		if (kind == MM_F32)
			return ox_sgemm(ctx, false, p->tb, p->m * p->nbatch, p->n, p->k, p->alpha, a, p->k, b, ldb,
							0.0f, y, p->n);
		else if (kind == MM_F64)
			nn_dgemm(false, p->tb, p->m * p->nbatch, p->n, p->k, p->alpha, a, p->k, b, ldb, 0.0, y, p->n);
		else
			mm_int_product(kind, a, b, y, p->m * p->nbatch, p->n, p->k, false, p->tb);
		return OX_OK;
	}
	/* several matrices and threads: whole matrices per thread, no GEMM-internal sync */
	if (kind == MM_F32 && ctx && ctx->nthreads > 1 && p->nbatch > 1)
	{
		mm_batch_job j = {p, a, b, y, false};

		ox_parallel_for(ctx, p->nbatch, 1, mm_batch_task, &j);
		if (j.failed)
			return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "MatMul: could not allocate a matrix packing buffer");
		return OX_OK;
	}
	for (int64_t bi = 0; bi < p->nbatch; bi++)
	{
		int64_t		ao,
					bo;

		if (kind == MM_F32)
		{
			OX_TRY(mm_f32_batch(ctx, p, a, b, y, bi, ctx ? ctx->st : NULL));
			continue;
		}
		mm_batch_offsets(p, bi, &ao, &bo);
		if (kind == MM_F64)
			nn_dgemm(p->ta, p->tb, p->m, p->n, p->k, p->alpha, (const double *) a + ao, lda,
					 (const double *) b + bo, ldb, 0.0, (double *) y + bi * mn, p->n);
		else
		{
			size_t		es = (kind == MM_I32 || kind == MM_U32) ? 4 : 8;

			/* MatMul only (no transBatch): the matrices are contiguous */
			mm_int_product(kind, (const char *) a + ao * es, (const char *) b + bo * es,
						   (char *) y + bi * mn * es, p->m, p->n, p->k, p->ta, p->tb);
		}
	}
	return OX_OK;
}

/* MatMul (alpha 1, nothing transposed) and FusedMatMul */
typedef struct matmul_state
{
	float		alpha;
	bool		trans_a;
	bool		trans_b;
	bool		trans_batch_a;
	bool		trans_batch_b;
	bool		fused;
	bool		b_finite;		/* the constant B has no inf or NaN */
	nn_packed_weight w;			/* B, when constant */
} matmul_state;

static ox_code
matmul_prepare(ox_prepare_ctx *pc)
{
	matmul_state *s = calloc(1, sizeof(*s));

	if (!s)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "MatMul: could not allocate state");
	pc->state = s;
	s->alpha = 1.0f;
	if (strcmp(pc->node->op_type, "FusedMatMul") == 0)
	{
		int64_t		ta = ox_attr_int(pc->node, "transA", 0),
					tb = ox_attr_int(pc->node, "transB", 0),
					tba = ox_attr_int(pc->node, "transBatchA", 0),
					tbb = ox_attr_int(pc->node, "transBatchB", 0);

		if ((ta != 0 && ta != 1) || (tb != 0 && tb != 1))
			return ox_fail(pc->st, OX_INVALID_ARGUMENT,
						   "FusedMatMul: transA and transB must be 0 or 1, got %lld and %lld",
						   (long long) ta, (long long) tb);
		if ((tba != 0 && tba != 1) || (tbb != 0 && tbb != 1))
			return ox_fail(pc->st, OX_INVALID_ARGUMENT,
						   "FusedMatMul: transBatchA and transBatchB must be 0 or 1, got %lld and %lld",
						   (long long) tba, (long long) tbb);
		s->fused = true;
		s->alpha = ox_attr_float(pc->node, "alpha", 1.0f);
		s->trans_a = ta == 1;
		s->trans_b = tb == 1;
		s->trans_batch_a = tba == 1;
		s->trans_batch_b = tbb == 1;
	}
	/* a B read through transBatch is a strided view: never packed as a 2-D weight */
	if (!s->trans_batch_b)
		OX_TRY(pack_constant_b(pc, 1, s->trans_b, &s->w));
	s->b_finite = constant_b_finite(pc, 1);
	/* the packed path takes A as it is (no transA, no transBatchA) */
	if (!s->trans_a && !s->trans_batch_a)
		offer_release(pc, &s->w, static_product_rows(pc, false, false), a_rank_at_least_2(pc));
	return OX_OK;
}

static void
matmul_free(void *state)
{
	matmul_state *s = state;

	if (s)
		ox_sgemm_packed_free(s->w.packed);
	free(s);
}

static ox_code
matmul_run(ox_kernel_ctx *ctx)
{
	const matmul_state *s = ctx->state;
	const char *op = ctx->node->op_type;
	const ox_tensor *a = ox_in_tensor(ctx, 0);
	const ox_tensor *b = ox_in_tensor(ctx, 1);
	mm_plan		p;
	int			y_rank;
	int64_t		y_dims[OX_MAX_RANK + 2];
	mm_kind		kind;
	ox_tensor  *y;
	int64_t		ny;

	if (!a || !b)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: inputs A and B are required", op);
	if (a->dtype != b->dtype)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: A is %s but B is %s", op,
					   ox_dtype_name(a->dtype), ox_dtype_name(b->dtype));
	kind = mm_kind_of(a->dtype);
	if (kind == MM_NONE || (s && s->fused && kind != MM_F32 && kind != MM_F64 && kind != MM_STAGED))
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: type %s is not supported", op,
					   ox_dtype_name(a->dtype));
	OX_TRY(mm_plan_make(op, a, b, s && s->trans_a, s && s->trans_b, s && s->trans_batch_a,
						s && s->trans_batch_b, &p, &y_rank, y_dims, ctx->st));
	p.alpha = s ? s->alpha : 1.0f;
	if (y_rank > OX_MAX_RANK)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "%s: output rank %d is too deep", op, y_rank);
	if (!(y = ox_out_tensor(ctx, 0, a->dtype, y_rank, y_dims)))
		return ctx->st->code;
	ny = ox_tensor_numel(y);
	if (ny == 0)
		return OX_OK;
	if (kind == MM_STAGED)
	{
		float	   *fa = nn_to_float(a, ctx->st),
				   *fb = fa ? nn_to_float(b, ctx->st) : NULL,
				   *fy = fb ? nn_scratch(ny, sizeof(float), ctx->st, op) : NULL;
		ox_code		rc = ctx->st->code;

		if (fy && (rc = mm_execute(ctx, &p, MM_F32, fa, fb, fy)) == OX_OK)
			rc = nn_store_float(y, fy, ny, ctx->st);
		ox_aligned_free(fa);
		ox_aligned_free(fb);
		ox_aligned_free(fy);
		return rc;
	}
	/* a constant 2-D B: every batch matrix of A folds into one packed GEMM */
	if (s && packed_is_b(&s->w, b) && kind == MM_F32 && b->rank == 2 &&
		a->rank >= 2 && !p.ta && !p.batch_view && (p.m * p.nbatch > 2 || b->released))
	{
		ox_sgemm_epilogue epi;

		/* one or two rows sum the packed slivers, skipping A's zeros when B is finite */
		memset(&epi, 0, sizeof(epi));
		epi.b_finite = s->b_finite;
		return ox_sgemm_packed_b_ex(ctx, false, p.m * p.nbatch, p.alpha, a->data, p.k, s->w.packed,
									0.0f, y->data, p.n, &epi);
	}
	if (b->released)
		return ox_fail(ctx->st, OX_INTERNAL, "%s: B was released but its packed copy does not fit this run", op);
	/* one or two rows against the finite constant B: the GEMV may skip A's zeros */
	if (s && s->b_finite && b->data == s->w.src && kind == MM_F32 && b->rank == 2 && a->rank >= 2 &&
		!p.ta && !p.batch_view && p.m * p.nbatch <= 2 && (p.fold || p.nbatch == 1))
	{
		ox_sgemm_epilogue epi;

		memset(&epi, 0, sizeof(epi));
		epi.b_finite = true;
		return ox_sgemm_ex(ctx, false, p.tb, p.m * p.nbatch, p.n, p.k, p.alpha, a->data, p.k, b->data,
						   p.tb ? p.k : p.n, 0.0f, y->data, p.n, &epi);
	}
	return mm_execute(ctx, &p, kind, a->data, b->data, y->data);
}

/* used by MatMulInteger/QLinearMatMul: shape plan + double product */
ox_code
nn_matmul_f64(const char *op, const ox_tensor *a, const ox_tensor *b, const double *ad,
			  const double *bd, double **yd, int *y_rank, int64_t *y_dims, ox_status *st)
{
	mm_plan		p;
	int64_t		ny;

	OX_TRY(mm_plan_make(op, a, b, false, false, false, false, &p, y_rank, y_dims, st));
	if (*y_rank > OX_MAX_RANK)
		return ox_fail(st, OX_LIMIT_EXCEEDED, "%s: output rank %d is too deep", op, *y_rank);
	ny = ox_shape_numel(*y_rank, y_dims);
	*yd = nn_scratch(ny, sizeof(double), st, op);
	if (!*yd)
		return st->code;
	if (ny > 0)
		return mm_execute(NULL, &p, MM_F64, ad, bd, *yd);
	return OX_OK;
}

/* com.microsoft FusedGemm: Gemm followed by an activation (see FusedConv) */
static ox_code
fused_gemm_run(ox_kernel_ctx *ctx)
{
	const gemm_state *s = ctx->state;
	ox_tensor  *y;

	const ox_tensor *a = ox_in_tensor(ctx, 0);

	if (a && a->dtype != OX_FLOAT && a->dtype != OX_DOUBLE)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "FusedGemm: type %s is not supported (float, double)",
					   ox_dtype_name(a->dtype));
	/*
	 * float32 applies the activation in the GEMM's epilogue; the output's
	 * type is A's (checked before the product: after it, the output's
	 * struct is a cache miss)
	 */
	OX_TRY(gemm_run(ctx));
	if (a && a->dtype == OX_DOUBLE)
	{
		y = &ctx->out[0]->tensor;
		nn_activation_apply_f64(&s->act, y->data, ox_tensor_numel(y));
	}
	return OX_OK;
}

/* ---- family table ------------------------------------------------------- */

const ox_kernel_def ox_kernels_gemm[] = {
	{"", "Gemm", 1, gemm_prepare, gemm_run, gemm_free, true},
	{"com.microsoft", "FusedGemm", 1, gemm_prepare, fused_gemm_run, gemm_free, true},
	{"", "MatMul", 1, matmul_prepare, matmul_run, matmul_free, true},
	{"com.microsoft", "FusedMatMul", 1, matmul_prepare, matmul_run, matmul_free, true},
	{"com.microsoft", "Gelu", 1, NULL, nn_contrib_gelu_run, NULL},
	{"com.microsoft", "BiasGelu", 1, NULL, nn_contrib_bias_gelu_run, NULL},
	{"", "MatMulInteger", 10, NULL, nn_matmul_integer_run, NULL},
	{"", "QLinearMatMul", 10, NULL, nn_qlinear_matmul_run, NULL},
	{"", "Einsum", 12, nn_einsum_prepare, nn_einsum_run, nn_einsum_free},
};
const int	ox_kernels_gemm_count = OX_KERNEL_COUNT(ox_kernels_gemm);
