/*
 * elementwise.cu
 *	  Device kernels of the elementwise family: unary activations, binary
 *	  arithmetic with coalesced numpy broadcasting, and the bias + residual +
 *	  activation epilogue used after cuBLAS/cuDNN.  float32 only; math in
 *	  float with the CUDA libm (erff, expf, tanhf: a few ulp, see the
 *	  conformance tolerances in test/conformance/runner.c).
 */
#include "kernels/cuda/cuda_internal.h"

#include <math.h>

#define OXC_THREADS 256

static inline unsigned
grid_for(int64_t n)
{
	int64_t		b = (n + OXC_THREADS - 1) / OXC_THREADS;

	return (unsigned) (b > 65535 * 16 ? 65535 * 16 : (b < 1 ? 1 : b));
}

__device__ __forceinline__ float
apply_unary(int op, float x, float p0, float p1)
{
	switch (op)
	{
		case OXC_U_IDENTITY:
			return x;
		case OXC_U_RELU:
			return x > 0.0f ? x : (x == x ? 0.0f : x);	/* keeps NaN */
		case OXC_U_LEAKY_RELU:
			return x >= 0.0f ? x : x * p0;
		case OXC_U_SIGMOID:
			return x >= 0.0f ? 1.0f / (1.0f + expf(-x)) : expf(x) / (1.0f + expf(x));
		case OXC_U_TANH:
			return tanhf(x);
		case OXC_U_EXP:
			return expf(x);
		case OXC_U_LOG:
			return logf(x);
		case OXC_U_SQRT:
			return sqrtf(x);
		case OXC_U_NEG:
			return -x;
		case OXC_U_ABS:
			return fabsf(x);
		case OXC_U_ERF:
			return erff(x);
		case OXC_U_GELU:
			return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
		case OXC_U_GELU_TANH:
			return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
		case OXC_U_HARD_SIGMOID:
			return fmaxf(0.0f, fminf(1.0f, p0 * x + p1));
		case OXC_U_HARD_SWISH:
			return x * fmaxf(0.0f, fminf(1.0f, x / 6.0f + 0.5f));
		case OXC_U_CLIP:
			return x != x ? x : fminf(fmaxf(x, p0), p1);
		case OXC_U_ELU:
			return x >= 0.0f ? x : p0 * (expf(x) - 1.0f);
		case OXC_U_SOFTPLUS:
			return x > 20.0f ? x : log1pf(expf(x));
		case OXC_U_RECIPROCAL:
			return 1.0f / x;
		case OXC_U_FLOOR:
			return floorf(x);
		case OXC_U_CEIL:
			return ceilf(x);
		case OXC_U_SELU:
			return x > 0.0f ? p1 * x : p1 * (p0 * expf(x) - p0);
		case OXC_U_SIN:
			return sinf(x);
		case OXC_U_COS:
			return cosf(x);
		case OXC_U_SILU:
			return x / (1.0f + expf(-x));
		case OXC_U_SCALE:
			return x * p0;
	}
	return x;
}

__global__ void
unary_kernel(int op, float p0, float p1, const float *__restrict__ x, float *__restrict__ y, int64_t n)
{
	for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n;
		 i += (int64_t) gridDim.x * blockDim.x)
		y[i] = apply_unary(op, x[i], p0, p1);
}

extern "C" cudaError_t
oxc_launch_unary(cudaStream_t s, oxc_unary op, float p0, float p1, const float *x, float *y, int64_t n)
{
	if (n <= 0)
		return cudaSuccess;
	unary_kernel<<<grid_for(n), OXC_THREADS, 0, s>>>((int) op, p0, p1, x, y, n);
	return cudaGetLastError();
}

__device__ __forceinline__ float
apply_binary(int op, float a, float b)
{
	switch (op)
	{
		case OXC_B_ADD:
			return a + b;
		case OXC_B_SUB:
			return a - b;
		case OXC_B_MUL:
			return a * b;
		case OXC_B_DIV:
			return a / b;
		case OXC_B_POW:
			return powf(a, b);
		case OXC_B_MAX:
			return (a != a || b != b) ? a + b : fmaxf(a, b);
		case OXC_B_MIN:
			return (a != a || b != b) ? a + b : fminf(a, b);
		case OXC_B_PRELU:
			return a < 0.0f ? a * b : a;
	}
	return a;
}

__global__ void
binary_same(int op, const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ y, int64_t n)
{
	for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n;
		 i += (int64_t) gridDim.x * blockDim.x)
		y[i] = apply_binary(op, a[i], b[i]);
}

__global__ void
binary_scalar_b(int op, const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ y, int64_t n)
{
	float		bv = b[0];

	for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n;
		 i += (int64_t) gridDim.x * blockDim.x)
		y[i] = apply_binary(op, a[i], bv);
}

__global__ void
binary_bcast(int op, oxc_bcast g, const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ y)
{
	for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < g.n;
		 i += (int64_t) gridDim.x * blockDim.x)
	{
		int64_t		r = i,
					ia = 0,
					ib = 0;

		for (int d = g.rank - 1; d >= 0; d--)
		{
			int64_t		q = r / g.dims[d];
			int64_t		c = r - q * g.dims[d];

			ia += c * g.sa[d];
			ib += c * g.sb[d];
			r = q;
		}
		y[i] = apply_binary(op, a[ia], b[ib]);
	}
}

extern "C" cudaError_t
oxc_launch_binary(cudaStream_t s, oxc_binary op, const oxc_bcast *g, const float *a, const float *b, float *y)
{
	bool		a_full = true,
				b_full = true,
				b_scalar = true;
	int64_t		expect = 1;

	if (g->n <= 0)
		return cudaSuccess;
	for (int d = g->rank - 1; d >= 0; d--)
	{
		if (g->dims[d] != 1)
		{
			a_full = a_full && g->sa[d] == expect;
			b_full = b_full && g->sb[d] == expect;
			b_scalar = b_scalar && g->sb[d] == 0;
		}
		expect *= g->dims[d];
	}
	if (a_full && b_full)
		binary_same<<<grid_for(g->n), OXC_THREADS, 0, s>>>((int) op, a, b, y, g->n);
	else if (a_full && b_scalar)
		binary_scalar_b<<<grid_for(g->n), OXC_THREADS, 0, s>>>((int) op, a, b, y, g->n);
	else
		binary_bcast<<<grid_for(g->n), OXC_THREADS, 0, s>>>((int) op, *g, a, b, y);
	return cudaGetLastError();
}

__global__ void
bias_act_kernel(float *__restrict__ y, const float *__restrict__ bias, const float *__restrict__ z,
				int64_t n, int64_t c, int64_t inner, int act, float p0, float p1)
{
	for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n;
		 i += (int64_t) gridDim.x * blockDim.x)
	{
		float		v = y[i];

		if (bias)
			v += bias[(i / inner) % c];
		if (z)
			v += z[i];
		y[i] = apply_unary(act, v, p0, p1);
	}
}

extern "C" cudaError_t
oxc_launch_bias_act(cudaStream_t s, float *y, const float *bias, const float *z, int64_t n, int64_t c,
					int64_t inner, oxc_unary act, float p0, float p1)
{
	if (n <= 0)
		return cudaSuccess;
	if (c <= 0 || inner <= 0)
		return cudaErrorInvalidValue;
	bias_act_kernel<<<grid_for(n), OXC_THREADS, 0, s>>>(y, bias, z, n, c, inner, (int) act, p0, p1);
	return cudaGetLastError();
}
