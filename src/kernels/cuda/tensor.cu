/*
 * tensor.cu
 *	  Device kernels of the tensor family: strided copy (Transpose, Slice,
 *	  Expand, Concat pieces, Gemm's C broadcast) and Gather.
 */
#include "kernels/cuda/cuda_internal.h"

#define OXC_THREADS 256

static inline unsigned
grid_for(int64_t n)
{
	int64_t		b = (n + OXC_THREADS - 1) / OXC_THREADS;

	return (unsigned) (b > 65535 * 16 ? 65535 * 16 : (b < 1 ? 1 : b));
}

template <typename T>
__global__ void
strided_copy(oxc_strided g, const T *__restrict__ src, T *__restrict__ dst)
{
	for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < g.n;
		 i += (int64_t) gridDim.x * blockDim.x)
	{
		int64_t		r = i,
					is = g.src_offset,
					id = g.dst_offset;

		for (int d = g.rank - 1; d >= 0; d--)
		{
			int64_t		q = r / g.dims[d];
			int64_t		c = r - q * g.dims[d];

			is += c * g.src_strides[d];
			id += c * g.dst_strides[d];
			r = q;
		}
		dst[id] = src[is];
	}
}

extern "C" cudaError_t
oxc_launch_strided_copy(cudaStream_t s, const oxc_strided *g, const void *src, void *dst, int elem_size)
{
	if (g->n <= 0)
		return cudaSuccess;
	if (g->rank < 0 || g->rank > OXC_MAX_DIMS)
		return cudaErrorInvalidValue;
	switch (elem_size)
	{
		case 1:
			strided_copy<unsigned char><<<grid_for(g->n), OXC_THREADS, 0, s>>>(*g, (const unsigned char *) src, (unsigned char *) dst);
			break;
		case 2:
			strided_copy<unsigned short><<<grid_for(g->n), OXC_THREADS, 0, s>>>(*g, (const unsigned short *) src, (unsigned short *) dst);
			break;
		case 4:
			strided_copy<float><<<grid_for(g->n), OXC_THREADS, 0, s>>>(*g, (const float *) src, (float *) dst);
			break;
		case 8:
			strided_copy<long long><<<grid_for(g->n), OXC_THREADS, 0, s>>>(*g, (const long long *) src, (long long *) dst);
			break;
		default:
			return cudaErrorInvalidValue;
	}
	return cudaGetLastError();
}

/* y[o, j, i] = x[o, idx[j], i]; indices were checked and normalized on the host */
__global__ void
gather_kernel(const float *__restrict__ x, const int64_t *__restrict__ idx, float *__restrict__ y,
			  int64_t outer, int64_t axis_len, int64_t n_idx, int64_t inner)
{
	int64_t		n = outer * n_idx * inner;

	for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n;
		 i += (int64_t) gridDim.x * blockDim.x)
	{
		int64_t		in = i % inner;
		int64_t		j = (i / inner) % n_idx;
		int64_t		o = i / (inner * n_idx);

		y[i] = x[(o * axis_len + idx[j]) * inner + in];
	}
}

extern "C" cudaError_t
oxc_launch_gather(cudaStream_t s, const float *x, const int64_t *idx, float *y, int64_t outer,
				  int64_t axis_len, int64_t n_idx, int64_t inner)
{
	int64_t		n = outer * n_idx * inner;

	if (n <= 0)
		return cudaSuccess;
	gather_kernel<<<grid_for(n), OXC_THREADS, 0, s>>>(x, idx, y, outer, axis_len, n_idx, inner);
	return cudaGetLastError();
}
