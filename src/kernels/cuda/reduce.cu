/*
 * reduce.cu
 *	  Reductions of the middle axis of [outer, len, inner] (the host folds
 *	  the reduced axes into one contiguous run first) and 2-D pooling.
 */
#include "kernels/cuda/cuda_internal.h"

#include <math.h>

__global__ void
reduce_kernel(const float *__restrict__ x, float *__restrict__ y, int64_t outer, int64_t len, int64_t inner,
			  int op)
{
	int64_t		n = outer * inner;

	for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n;
		 i += (int64_t) gridDim.x * blockDim.x)
	{
		int64_t		o = i / inner,
					in = i % inner;
		const float *p = x + o * len * inner + in;
		float		acc;

		if (op == 2 || op == 3)
		{
			acc = op == 2 ? -INFINITY : INFINITY;
			for (int64_t j = 0; j < len; j++)
			{
				float		v = p[j * inner];

				if (v != v)
				{
					acc = v;
					break;
				}
				acc = op == 2 ? fmaxf(acc, v) : fminf(acc, v);
			}
		}
		else if (op == 4)
		{
			acc = 1.0f;
			for (int64_t j = 0; j < len; j++)
				acc *= p[j * inner];
		}
		else if (op == 8)
		{
			float		m = -INFINITY;

			for (int64_t j = 0; j < len; j++)
				m = fmaxf(m, p[j * inner]);
			acc = 0.0f;
			for (int64_t j = 0; j < len; j++)
				acc += expf(p[j * inner] - m);
			acc = len > 0 ? logf(acc) + m : -INFINITY;
		}
		else
		{
			acc = 0.0f;
			for (int64_t j = 0; j < len; j++)
			{
				float		v = p[j * inner];

				acc += op == 5 || op == 7 ? v * v : (op == 6 ? fabsf(v) : v);
			}
			if (op == 1)
				acc = len > 0 ? acc / (float) len : NAN;
			else if (op == 7)
				acc = sqrtf(acc);
		}
		y[i] = acc;
	}
}

extern "C" cudaError_t
oxc_launch_reduce(cudaStream_t s, const float *x, float *y, int64_t outer, int64_t len, int64_t inner, int op)
{
	int64_t		n = outer * inner;
	int64_t		b = (n + 255) / 256;

	if (n <= 0)
		return cudaSuccess;
	reduce_kernel<<<(unsigned) (b > 1048560 ? 1048560 : b), 256, 0, s>>>(x, y, outer, len, inner, op);
	return cudaGetLastError();
}

__global__ void
pool2d_kernel(oxc_pool2d p, const float *__restrict__ x, float *__restrict__ y)
{
	int64_t		n = p.n * p.c * p.oh * p.ow;

	for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n;
		 i += (int64_t) gridDim.x * blockDim.x)
	{
		int64_t		ox = i % p.ow,
					oy = (i / p.ow) % p.oh,
					nc = i / (p.ow * p.oh);
		const float *xp = x + nc * p.h * p.w;
		float		acc = p.kind == 0 ? -INFINITY : 0.0f;
		int			count = 0;
		bool		nan = false;

		for (int ky = 0; ky < p.kh; ky++)
		{
			int64_t		iy = oy * p.sh - p.ph + (int64_t) ky * p.dh;

			for (int kx = 0; kx < p.kw; kx++)
			{
				int64_t		ix = ox * p.sw - p.pw + (int64_t) kx * p.dw;

				if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w)
				{
					/* padding counts for average with count_include_pad, inside the padded extent */
					if (p.kind == 1 && p.count_include_pad && iy < p.h + p.ph_end && ix < p.w + p.pw_end)
						count++;
					continue;
				}
				{
					float		v = xp[iy * p.w + ix];

					if (p.kind == 0)
					{
						if (v != v)
							nan = true;
						acc = fmaxf(acc, v);
					}
					else
						acc += v;
					count++;
				}
			}
		}
		if (p.kind == 0)
			y[i] = nan ? NAN : acc;
		else
			y[i] = count > 0 ? acc / (float) count : 0.0f;
	}
}

extern "C" cudaError_t
oxc_launch_pool2d(cudaStream_t s, const oxc_pool2d *p, const float *x, float *y)
{
	int64_t		n = p->n * p->c * p->oh * p->ow;
	int64_t		b = (n + 255) / 256;

	if (n <= 0)
		return cudaSuccess;
	pool2d_kernel<<<(unsigned) (b > 1048560 ? 1048560 : b), 256, 0, s>>>(*p, x, y);
	return cudaGetLastError();
}
