/*
 * ops_gemm.c
 *	  Gemm, MatMul (batched, broadcast) and the fused com.microsoft forms
 *	  (FusedGemm, FusedMatMul) on cuBLAS.
 *
 * Row-major C[M,N] = A'[M,K] B'[K,N] is computed as the column-major
 * C^T = B'^T A'^T, so the operands go to cuBLAS swapped and no transposes
 * are materialized.  Compute type CUBLAS_COMPUTE_32F (exact float32) unless
 * the session set cuda_fp16 (CUBLAS_COMPUTE_32F_FAST_16F).
 */
#include "kernels/cuda/cuda_internal.h"

#include <limits.h>
#include <math.h>
#include <string.h>

bool
oxc_fused_activation(const ox_node *n, oxc_unary *op, float *p0, float *p1)
{
	const char *act = ox_attr_string(n, "activation", NULL);
	const float *params = NULL;
	int			np = ox_attr_floats(n, "activation_params", &params);
	float		a = np > 0 ? params[0] : ox_attr_float(n, "activation_alpha", NAN);
	float		b = np > 1 ? params[1] : ox_attr_float(n, "activation_beta", NAN);

	*p0 = *p1 = 0.0f;
	if (!act || !act[0])
	{
		*op = OXC_U_IDENTITY;
		return true;
	}
	if (strcmp(act, "Relu") == 0)
		*op = OXC_U_RELU;
	else if (strcmp(act, "Sigmoid") == 0)
		*op = OXC_U_SIGMOID;
	else if (strcmp(act, "Tanh") == 0)
		*op = OXC_U_TANH;
	else if (strcmp(act, "LeakyRelu") == 0)
	{
		*op = OXC_U_LEAKY_RELU;
		*p0 = isnan(a) ? 0.01f : a;
	}
	else if (strcmp(act, "HardSigmoid") == 0)
	{
		*op = OXC_U_HARD_SIGMOID;
		*p0 = isnan(a) ? 0.2f : a;
		*p1 = isnan(b) ? 0.5f : b;
	}
	else if (strcmp(act, "Clip") == 0)
	{
		*op = OXC_U_CLIP;
		*p0 = isnan(a) ? -INFINITY : a;
		*p1 = isnan(b) ? INFINITY : b;
	}
	else
		return false;
	return true;
}

/* C[b] = alpha * op(A[b]) op(B[b]) + beta * C[b] for row-major matrices */
ox_code
oxc_gemm(ox_cuda_ctx *cx, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
		 const float *a, int64_t stride_a, const float *b, int64_t stride_b, float beta, float *c,
		 int64_t stride_c, int64_t batch, ox_status *st)
{
	if (m <= 0 || n <= 0 || batch <= 0)
		return OX_OK;
	if (m > INT_MAX || n > INT_MAX || k > INT_MAX || batch > INT_MAX)
		return ox_fail(st, OX_UNSUPPORTED, "matrix dimensions beyond 2^31 on CUDA");
	if (k == 0)
	{
		/* nothing to multiply: C = beta * C, as a 1x1-free scale */
		if (beta == 0.0f)
			return oxc_cuda_check(cudaMemsetAsync(c, 0, sizeof(float) * (size_t) (m * n * batch), cx->stream),
								  "cudaMemsetAsync", st);
		return oxc_cuda_check(oxc_launch_unary(cx->stream, OXC_U_SCALE, beta, 0, c, c, m * n * batch),
							  "scale", st);
	}
	return oxc_blas_check(cublasGemmStridedBatchedEx(cx->cublas, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
													 ta ? CUBLAS_OP_T : CUBLAS_OP_N,
													 (int) n, (int) m, (int) k, &alpha,
													 b, CUDA_R_32F, (int) (tb ? k : n), stride_b,
													 a, CUDA_R_32F, (int) (ta ? m : k), stride_a,
													 &beta, c, CUDA_R_32F, (int) n, stride_c, (int) batch,
													 cx->fp16 ? CUBLAS_COMPUTE_32F_FAST_16F : CUBLAS_COMPUTE_32F,
													 CUBLAS_GEMM_DEFAULT), "cublasGemmStridedBatchedEx", st);
}

/* ---- MatMul / FusedMatMul ---------------------------------------------- */

static ox_code
run_matmul_common(ox_cuda_op_ctx *oc, bool ta, bool tb, float alpha)
{
	ox_dval    *A,
			   *B,
			   *Y;
	int64_t		M,
				K,
				K2,
				N;
	int			ra,
				rb,
				rbat;
	int64_t		ba[OX_MAX_RANK],
				bb[OX_MAX_RANK],
				bo[OX_MAX_RANK];
	int64_t		dims[OX_MAX_RANK];
	int			rank = 0;
	int64_t		nba = 1,
				nbb = 1,
				nbo = 1;

	OX_TRY(oxc_in(oc, 0, OX_FLOAT, &A));
	OX_TRY(oxc_in(oc, 1, OX_FLOAT, &B));
	if (A->rank < 1 || B->rank < 1)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "MatMul inputs must have rank 1 or more");
	if ((ta && A->rank < 2) || (tb && B->rank < 2))
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "transposed MatMul inputs must have rank 2 or more");
	if (A->rank == 1)
	{
		M = 1;
		K = A->dims[0];
	}
	else
	{
		M = A->dims[A->rank - (ta ? 1 : 2)];
		K = A->dims[A->rank - (ta ? 2 : 1)];
	}
	if (B->rank == 1)
	{
		K2 = B->dims[0];
		N = 1;
	}
	else
	{
		K2 = B->dims[B->rank - (tb ? 1 : 2)];
		N = B->dims[B->rank - (tb ? 2 : 1)];
	}
	if (K != K2)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "MatMul inner dimensions differ (%lld vs %lld)",
					   (long long) K, (long long) K2);
	ra = A->rank > 2 ? A->rank - 2 : 0;
	rb = B->rank > 2 ? B->rank - 2 : 0;
	rbat = ra > rb ? ra : rb;
	for (int d = 0; d < rbat; d++)
	{
		int			ia = d - (rbat - ra),
					ib = d - (rbat - rb);

		ba[d] = ia >= 0 ? A->dims[ia] : 1;
		bb[d] = ib >= 0 ? B->dims[ib] : 1;
		if (ba[d] != bb[d] && ba[d] != 1 && bb[d] != 1)
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "MatMul batch dimensions cannot be broadcast");
		bo[d] = ba[d] == 1 ? bb[d] : ba[d];
		nba *= ba[d];
		nbb *= bb[d];
		nbo *= bo[d];
		dims[rank++] = bo[d];
	}
	if (A->rank > 1)
		dims[rank++] = M;
	if (B->rank > 1)
		dims[rank++] = N;
	OX_TRY(oxc_out(oc, 0, OX_FLOAT, rank, dims, &Y));
	if (nbo == 0 || M == 0 || N == 0)
		return OX_OK;
	if (nbb == 1 && !ta)
		/* B shared: the batch of A folds into M (A is contiguous) */
		return oxc_gemm(oc->cx, false, tb, M * nba, N, K, alpha, A->d, 0, B->d, 0, 0.0f, Y->d, 0, 1, oc->st);
	if (nba == nbo && nbb == nbo)
		/* the same batch shape (each side's batch count equals the broadcast one) */
		return oxc_gemm(oc->cx, ta, tb, M, N, K, alpha, A->d, M * K, B->d, K * N, 0.0f, Y->d, M * N, nbo,
						oc->st);
	if (nba == 1)
		return oxc_gemm(oc->cx, ta, tb, M, N, K, alpha, A->d, 0, B->d, K * N, 0.0f, Y->d, M * N, nbo, oc->st);
	if (nbb == 1)
		return oxc_gemm(oc->cx, ta, tb, M, N, K, alpha, A->d, M * K, B->d, 0, 0.0f, Y->d, M * N, nbo, oc->st);
	/* general broadcast: one GEMM per output matrix */
	for (int64_t i = 0; i < nbo; i++)
	{
		int64_t		r = i,
					oa = 0,
					ob = 0,
					sa = 1,
					sb = 1;

		for (int d = rbat - 1; d >= 0; d--)
		{
			int64_t		c = r % bo[d];

			r /= bo[d];
			oa += (ba[d] == 1 ? 0 : c) * sa;
			ob += (bb[d] == 1 ? 0 : c) * sb;
			sa *= ba[d];
			sb *= bb[d];
		}
		OX_TRY(oxc_gemm(oc->cx, ta, tb, M, N, K, alpha, (const float *) A->d + oa * M * K, 0,
						(const float *) B->d + ob * K * N, 0, 0.0f, (float *) Y->d + i * M * N, 0, 1, oc->st));
	}
	return OX_OK;
}

static ox_code
run_matmul(ox_cuda_op_ctx *oc)
{
	return run_matmul_common(oc, false, false, 1.0f);
}

static bool
sup_matmul(const ox_graph *g, const ox_node *n)
{
	return n->n_inputs == 2 && n->n_outputs == 1 && oxc_all_float(g, n, 2);
}

static int
declared_rank(const ox_graph *g, const ox_node *n, int i)
{
	const ox_value_def *d = ox_node_input_def(g, n, i);

	if (!d)
		return -1;
	if (d->init)
		return d->init->rank;
	return d->type.kind == OX_TYPE_TENSOR ? d->type.rank : -1;
}

static bool
sup_fused_matmul(const ox_graph *g, const ox_node *n)
{
	bool		ta = ox_attr_int(n, "transA", 0) != 0,
				tb = ox_attr_int(n, "transB", 0) != 0;

	if (!sup_matmul(g, n) || ox_attr_int(n, "transBatchA", 0) || ox_attr_int(n, "transBatchB", 0))
		return false;
	if (ta && declared_rank(g, n, 0) < 2)
		return false;
	if (tb && declared_rank(g, n, 1) < 2)
		return false;
	return true;
}

static ox_code
run_fused_matmul(ox_cuda_op_ctx *oc)
{
	return run_matmul_common(oc, ox_attr_int(oc->node, "transA", 0) != 0,
							 ox_attr_int(oc->node, "transB", 0) != 0,
							 ox_attr_float(oc->node, "alpha", 1.0f));
}

/* ---- Gemm / FusedGemm -------------------------------------------------- */

static bool
sup_gemm(const ox_graph *g, const ox_node *n)
{
	oxc_unary	act;
	float		p0,
				p1;

	if (n->n_inputs < 2 || n->n_inputs > 3 || n->n_outputs != 1 || !oxc_all_float(g, n, 3))
		return false;
	if (strcmp(n->domain, "com.microsoft") == 0 && !oxc_fused_activation(n, &act, &p0, &p1))
		return false;
	return true;
}

static ox_code
run_gemm(ox_cuda_op_ctx *oc)
{
	const ox_node *n = oc->node;
	bool		ta = ox_attr_int(n, "transA", 0) != 0,
				tb = ox_attr_int(n, "transB", 0) != 0;
	float		alpha = ox_attr_float(n, "alpha", 1.0f),
				beta = ox_attr_float(n, "beta", 1.0f);
	ox_dval    *A,
			   *B,
			   *C = NULL,
			   *Y;
	int64_t		M,
				K,
				K2,
				N,
				dims[2];
	oxc_unary	act = OXC_U_IDENTITY;
	float		p0 = 0,
				p1 = 0;

	OX_TRY(oxc_in(oc, 0, OX_FLOAT, &A));
	OX_TRY(oxc_in(oc, 1, OX_FLOAT, &B));
	if (A->rank != 2 || B->rank != 2)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Gemm inputs must be 2-D");
	M = ta ? A->dims[1] : A->dims[0];
	K = ta ? A->dims[0] : A->dims[1];
	K2 = tb ? B->dims[1] : B->dims[0];
	N = tb ? B->dims[0] : B->dims[1];
	if (K != K2)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Gemm inner dimensions differ (%lld vs %lld)",
					   (long long) K, (long long) K2);
	if (strcmp(n->domain, "com.microsoft") == 0 && !oxc_fused_activation(n, &act, &p0, &p1))
		return ox_fail(oc->st, OX_UNSUPPORTED, "unsupported FusedGemm activation");
	dims[0] = M;
	dims[1] = N;
	OX_TRY(oxc_out(oc, 0, OX_FLOAT, 2, dims, &Y));
	if (M == 0 || N == 0)
		return OX_OK;
	if (oc->n_in > 2 && oc->in[2] && beta != 0.0f)
	{
		oxc_strided g;
		int			r;

		OX_TRY(oxc_in(oc, 2, OX_FLOAT, &C));
		/* Y = broadcast(C) (unidirectional), then the GEMM accumulates */
		r = C->rank;
		if (r > 2)
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Gemm C must have rank 2 or less");
		memset(&g, 0, sizeof(g));
		g.rank = 2;
		g.dims[0] = M;
		g.dims[1] = N;
		g.n = M * N;
		g.dst_strides[0] = N;
		g.dst_strides[1] = 1;
		{
			int64_t		c0 = r == 2 ? C->dims[0] : 1;
			int64_t		c1 = r >= 1 ? C->dims[r - 1] : 1;

			if ((c0 != 1 && c0 != M) || (c1 != 1 && c1 != N))
				return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Gemm C does not broadcast to [%lld, %lld]",
							   (long long) M, (long long) N);
			g.src_strides[0] = c0 == 1 ? 0 : c1;
			g.src_strides[1] = c1 == 1 ? 0 : 1;
		}
		OX_TRY(oxc_cuda_check(oxc_launch_strided_copy(oc->cx->stream, &g, C->d, Y->d, 4), "Gemm C", oc->st));
		OX_TRY(oxc_gemm(oc->cx, ta, tb, M, N, K, alpha, A->d, 0, B->d, 0, beta, Y->d, 0, 1, oc->st));
	}
	else
		OX_TRY(oxc_gemm(oc->cx, ta, tb, M, N, K, alpha, A->d, 0, B->d, 0, 0.0f, Y->d, 0, 1, oc->st));
	if (act != OXC_U_IDENTITY)
		OX_TRY(oxc_cuda_check(oxc_launch_unary(oc->cx->stream, act, p0, p1, Y->d, Y->d, M * N),
							  "activation", oc->st));
	return OX_OK;
}

const ox_cuda_op ox_cuda_ops_gemm[] = {
	{"", "MatMul", 1, sup_matmul, run_matmul, NULL, 0},
	{"", "Gemm", 7, sup_gemm, run_gemm, NULL, 0},
	{"com.microsoft", "FusedGemm", 1, sup_gemm, run_gemm, NULL, 0},
	{"com.microsoft", "FusedMatMul", 1, sup_fused_matmul, run_fused_matmul, NULL, 0},
};
const int	ox_cuda_ops_gemm_count = sizeof(ox_cuda_ops_gemm) / sizeof(ox_cuda_ops_gemm[0]);
