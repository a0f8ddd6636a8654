/*
 * softmax_norm.cu
 *	  Row-wise Softmax/LogSoftmax and LayerNormalization (with the skip and
 *	  bias inputs of com.microsoft SkipLayerNormalization), one block per
 *	  row; per-channel affine for BatchNormalization (inference).
 */
#include "kernels/cuda/cuda_internal.h"

#include <math.h>

#define ROW_THREADS 256

/* block-wide reduction of v (sum or max) through shared memory */
__device__ float
block_reduce(float v, bool is_max)
{
	__shared__ float buf[32];
	int			lane = threadIdx.x & 31,
				warp = threadIdx.x >> 5;

	for (int o = 16; o > 0; o >>= 1)
	{
		float		w = __shfl_down_sync(0xffffffffu, v, o);

		v = is_max ? fmaxf(v, w) : v + w;
	}
	__syncthreads();
	if (lane == 0)
		buf[warp] = v;
	__syncthreads();
	if (warp == 0)
	{
		int			nw = (blockDim.x + 31) >> 5;

		v = lane < nw ? buf[lane] : (is_max ? -INFINITY : 0.0f);
		for (int o = 16; o > 0; o >>= 1)
		{
			float		w = __shfl_down_sync(0xffffffffu, v, o);

			v = is_max ? fmaxf(v, w) : v + w;
		}
		if (lane == 0)
			buf[0] = v;
	}
	__syncthreads();
	return buf[0];
}

__global__ void
softmax_kernel(const float *__restrict__ x, float *__restrict__ y, int64_t cols, bool log)
{
	const float *xr = x + blockIdx.x * cols;
	float	   *yr = y + blockIdx.x * cols;
	float		m = -INFINITY,
				s = 0.0f;

	for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
		m = fmaxf(m, xr[j]);
	m = block_reduce(m, true);
	for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
		s += expf(xr[j] - m);
	s = block_reduce(s, false);
	if (log)
	{
		float		ls = logf(s);

		for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
			yr[j] = xr[j] - m - ls;
	}
	else
		for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
			yr[j] = expf(xr[j] - m) / s;
}

/* softmax over a strided axis: one thread per (outer, inner) */
__global__ void
softmax_strided(const float *__restrict__ x, float *__restrict__ y, int64_t outer, int64_t len, int64_t inner,
				bool log)
{
	int64_t		n = outer * inner;

	for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n;
		 i += (int64_t) gridDim.x * blockDim.x)
	{
		int64_t		base = (i / inner) * len * inner + i % inner;
		float		m = -INFINITY,
					s = 0.0f;

		for (int64_t j = 0; j < len; j++)
			m = fmaxf(m, x[base + j * inner]);
		for (int64_t j = 0; j < len; j++)
			s += expf(x[base + j * inner] - m);
		for (int64_t j = 0; j < len; j++)
			y[base + j * inner] = log ? x[base + j * inner] - m - logf(s) : expf(x[base + j * inner] - m) / s;
	}
}

extern "C" cudaError_t
oxc_launch_softmax(cudaStream_t s, const float *x, float *y, int64_t outer, int64_t len, int64_t inner, bool log)
{
	if (outer <= 0 || len <= 0 || inner <= 0)
		return cudaSuccess;
	if (inner == 1)
	{
		if (outer > 2147483647LL)
			return cudaErrorInvalidValue;
		softmax_kernel<<<(unsigned) outer, ROW_THREADS, 0, s>>>(x, y, len, log);
	}
	else
	{
		int64_t		b = (outer * inner + 255) / 256;

		softmax_strided<<<(unsigned) (b > 1048560 ? 1048560 : b), 256, 0, s>>>(x, y, outer, len, inner, log);
	}
	return cudaGetLastError();
}

__global__ void
layernorm_kernel(const float *__restrict__ x, const float *__restrict__ skip, const float *__restrict__ bias,
				 const float *__restrict__ gamma, const float *__restrict__ beta, float *__restrict__ y,
				 float *__restrict__ sum_out, int64_t cols, int64_t skip_rows, float eps, bool simplified)
{
	const float *xr = x + blockIdx.x * cols;
	/* skip may be broadcast over the leading dims (e.g. [S, H] against [B, S, H]) */
	const float *sr = skip ? skip + (blockIdx.x % skip_rows) * cols : NULL;
	float	   *yr = y + blockIdx.x * cols;
	float	   *so = sum_out ? sum_out + blockIdx.x * cols : NULL;
	float		mean = 0.0f,
				var = 0.0f;

	/* y holds x (+ skip + bias) first, then the normalized row */
	for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
	{
		float		v = xr[j];

		if (sr)
			v += sr[j];
		if (bias)
			v += bias[j];
		yr[j] = v;
		if (so)
			so[j] = v;
		mean += v;
	}
	mean = block_reduce(mean, false) / (float) cols;
	if (simplified)
		mean = 0.0f;
	for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
	{
		float		d = yr[j] - mean;

		var += d * d;
	}
	var = block_reduce(var, false) / (float) cols;
	{
		float		inv = rsqrtf(var + eps);

		for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
		{
			float		v = (yr[j] - mean) * inv * gamma[j];

			yr[j] = beta ? v + beta[j] : v;
		}
	}
}

extern "C" cudaError_t
oxc_launch_layernorm(cudaStream_t s, const float *x, const float *skip, const float *bias, const float *gamma,
					 const float *beta, float *y, float *sum_out, int64_t rows, int64_t cols,
					 int64_t skip_rows, float eps, bool simplified)
{
	if (rows <= 0 || cols <= 0)
		return cudaSuccess;
	if (rows > 2147483647LL || skip_rows <= 0 || rows % skip_rows != 0)
		return cudaErrorInvalidValue;
	layernorm_kernel<<<(unsigned) rows, ROW_THREADS, 0, s>>>(x, skip, bias, gamma, beta, y, sum_out, cols,
															 skip_rows, eps, simplified);
	return cudaGetLastError();
}

__global__ void
affine_kernel(const float *__restrict__ x, float *__restrict__ y, const float *__restrict__ scale,
			  const float *__restrict__ shift, int64_t n, int64_t c, int64_t inner)
{
	for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n;
		 i += (int64_t) gridDim.x * blockDim.x)
	{
		int64_t		ch = (i / inner) % c;

		y[i] = x[i] * scale[ch] + shift[ch];
	}
}

extern "C" cudaError_t
oxc_launch_channel_affine(cudaStream_t s, const float *x, float *y, const float *scale, const float *shift,
						  int64_t n, int64_t c, int64_t inner)
{
	int64_t		total = n * c * inner;
	int64_t		b = (total + 255) / 256;

	if (total <= 0)
		return cudaSuccess;
	affine_kernel<<<(unsigned) (b > 1048560 ? 1048560 : b), 256, 0, s>>>(x, y, scale, shift, total, c, inner);
	return cudaGetLastError();
}
