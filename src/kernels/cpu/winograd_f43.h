/*
 * winograd_f43.h
 *	  Winograd's F(4x4, 3x3) transforms, shared by the NCHW kernel
 *	  (conv_winograd.c, 16 tiles in a vector) and the channel-blocked one
 *	  (conv_nchwc_winograd.c, 16 channels in a vector): the filter
 *	  transform G, and the 1-D input (B^T) and output (A^T) transforms over
 *	  vectors, which serve both since they act lane by lane.
 *
 * The interpolation points are 0, 1, -1, 2, -1/2 and infinity (see
 * conv_winograd.c for why); the three transforms must agree on them.
 */
#ifndef OX_KERNELS_CPU_WINOGRAD_F43_H
#define OX_KERNELS_CPU_WINOGRAD_F43_H

#include <immintrin.h>

#define NN_WINO_T 6				/* transform tile */
#define NN_WINO_N 36			/* points of the transform domain */

/* U = G g G^T */
static const double NN_WINO_G[NN_WINO_T][3] = {
	{1, 0, 0},
	{-1.0 / 3, -1.0 / 3, -1.0 / 3},
	{1.0 / 3, -1.0 / 3, 1.0 / 3},
	{1.0 / 15, 2.0 / 15, 4.0 / 15},
	{-16.0 / 15, 8.0 / 15, -4.0 / 15},
	{0, 0, 1}
};

/* u[i * 6 + l] = (G g G^T)[i][l] for one 3x3 filter g (row-major) */
static inline void
nn_wino_filter(const float *g, float *u)
{
	double		t[NN_WINO_T][3];

	for (int i = 0; i < NN_WINO_T; i++)
		for (int b = 0; b < 3; b++)
			t[i][b] = NN_WINO_G[i][0] * g[b] + NN_WINO_G[i][1] * g[3 + b] + NN_WINO_G[i][2] * g[6 + b];
	for (int i = 0; i < NN_WINO_T; i++)
		for (int l = 0; l < NN_WINO_T; l++)
			u[i * NN_WINO_T + l] =
				(float) (t[i][0] * NN_WINO_G[l][0] + t[i][1] * NN_WINO_G[l][1] + t[i][2] * NN_WINO_G[l][2]);
}

/* v = B^T d (six points) */
__attribute__((target("avx512f,fma")))
static inline void
nn_wino_input_1d(const __m512 *d, __m512 *v)
{
	__m512		half = _mm512_set1_ps(0.5f),
				one5 = _mm512_set1_ps(1.5f),
				two = _mm512_set1_ps(2.0f),
				two5 = _mm512_set1_ps(2.5f);
	__m512		d13 = _mm512_sub_ps(d[1], d[3]),
				d42 = _mm512_sub_ps(d[4], d[2]);

	v[0] = _mm512_fmadd_ps(one5, d13, _mm512_fnmadd_ps(two, d[2], _mm512_add_ps(d[0], d[4])));
	v[1] = _mm512_fnmadd_ps(half, d[3], _mm512_fnmadd_ps(two5, d[2], _mm512_sub_ps(d[4], d[1])));
	v[2] = _mm512_fnmadd_ps(two5, d[3], _mm512_fmadd_ps(half, d[2], _mm512_add_ps(d[4], d[1])));
	v[3] = _mm512_fnmadd_ps(half, d13, d42);
	v[4] = _mm512_fmadd_ps(two, d13, d42);
	v[5] = _mm512_fnmadd_ps(one5, _mm512_sub_ps(d[4], d[2]),
							_mm512_fnmadd_ps(two, d[3], _mm512_add_ps(d[1], d[5])));
}

/* o = A^T m (six points to four) */
__attribute__((target("avx512f,fma")))
static inline void
nn_wino_output_1d(const __m512 *m, __m512 *o)
{
	__m512		p12 = _mm512_add_ps(m[1], m[2]),
				m12 = _mm512_sub_ps(m[1], m[2]);

	o[0] = _mm512_add_ps(_mm512_add_ps(m[0], p12), _mm512_add_ps(m[3], m[4]));
	o[1] = _mm512_fnmadd_ps(_mm512_set1_ps(0.5f), m[4], _mm512_fmadd_ps(_mm512_set1_ps(2.0f), m[3], m12));
	o[2] = _mm512_fmadd_ps(_mm512_set1_ps(0.25f), m[4], _mm512_fmadd_ps(_mm512_set1_ps(4.0f), m[3], p12));
	o[3] = _mm512_add_ps(_mm512_fnmadd_ps(_mm512_set1_ps(0.125f), m[4],
										  _mm512_fmadd_ps(_mm512_set1_ps(8.0f), m[3], m12)), m[5]);
}

#endif							/* OX_KERNELS_CPU_WINOGRAD_F43_H */
