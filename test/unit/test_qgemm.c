/*
 * test_qgemm.c
 *	  The int8 GEMM (src/kernels/cpu/qgemm.c) against a plain reference, on
 *	  every path this machine has (AVX-512 VNNI, AVX2, portable): sizes with
 *	  ragged edges, int8/uint8 operands, scalar and per-channel zero points,
 *	  and the int32, float and requantized epilogues.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/qgemm.h"

static int	passed,
			failed;
static uint64_t rng = 88172645463325252ull;

static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t) rng;
}

static void
check(bool ok, const char *what, const char *isa, long long a, long long b, long long c)
{
	if (ok)
		passed++;
	else
	{
		failed++;
		if (failed < 20)
			printf("FAIL %s [%s] %lld %lld %lld\n", what, isa, a, b, c);
	}
}

static int32_t
qval(const void *p, ox_dtype dt, int64_t i)
{
	return dt == OX_INT8 ? ((const int8_t *) p)[i] : ((const uint8_t *) p)[i];
}

static void
fill(void *p, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		((uint8_t *) p)[i] = (uint8_t) rnd();
}

/* rows: C[m, n] = sum (A[m,k]-za)(B(n,k)-zb[n]) with B given as [K, N] (trans 0) or [N, K] */
static void
test_rows(const char *isa, int64_t M, int64_t N, int64_t K, ox_dtype adt, ox_dtype bdt,
		  bool trans, int zp_mode, ox_qg_out out)
{
	uint8_t    *A = malloc(M * K + 1),
			   *B = malloc(N * K + 1),
				bzp[1024];
	int32_t		azp = adt == OX_INT8 ? (int32_t) (int8_t) rnd() : (int32_t) (rnd() & 255);
	int64_t		n_zp = zp_mode == 0 ? 0 : (zp_mode == 1 ? 1 : N);
	void	   *C = malloc(M * N * 4 + 4);
	float	   *mult = malloc(N * 4 + 4),
			   *bias = malloc(N * 4 + 4);
	int32_t    *ibias = malloc(N * 4 + 4);
	ox_qgemm_weights w;
	ox_qgemm_epi ep;
	ox_status	st;
	bool		ok = true;

	fill(A, M * K);
	fill(B, N * K);
	fill(bzp, sizeof(bzp));
	for (int64_t n = 0; n < N; n++)
	{
		mult[n] = 0.0005f + (rnd() % 1000) * 1e-6f;
		bias[n] = (float) ((int) (rnd() % 2001) - 1000) * 0.01f;
		ibias[n] = (int32_t) (rnd() % 20001) - 10000;
	}
	ox_status_clear(&st);
	if (ox_qgemm_pack(&w, OX_QG_VEC, N, K, B, bdt, trans ? K : 1, trans ? 1 : N, bzp, n_zp, &st) != OX_OK)
	{
		check(false, "pack", isa, M, N, K);
		return;
	}
	memset(&ep, 0, sizeof(ep));
	ep.kind = out;
	ep.q_dtype = (rnd() & 1) ? OX_INT8 : OX_UINT8;
	ep.mult = mult;
	ep.bias = out == OX_QG_OUT_F32 ? bias : NULL;
	ep.ibias = out == OX_QG_OUT_F32 ? NULL : ibias;
	ep.y_zp = ep.q_dtype == OX_INT8 ? 3 : 120;
	if (ox_qgemm_rows(NULL, M, A, adt, K, azp, &w, &ep, C, N, &st) != OX_OK)
	{
		check(false, "rows", isa, M, N, K);
		ox_qgemm_weights_free(&w);
		return;
	}
	for (int64_t m = 0; m < M && ok; m++)
		for (int64_t n = 0; n < N && ok; n++)
		{
			int64_t		acc = 0;
			int32_t		zb = n_zp == 0 ? 0 : qval(bzp, bdt, n_zp == 1 ? 0 : n);

			for (int64_t k = 0; k < K; k++)
				acc += (int64_t) (qval(A, adt, m * K + k) - azp) *
					(qval(B, bdt, trans ? n * K + k : k * N + n) - zb);
			if (out == OX_QG_OUT_I32)
				ok = ((int32_t *) C)[m * N + n] == (int32_t) (acc + ibias[n]);
			else if (out == OX_QG_OUT_F32)
			{
				double		ref = (double) acc * mult[n] + bias[n];

				ok = fabs(((float *) C)[m * N + n] - ref) <= 1e-4 * (1 + fabs(ref));
			}
			else
			{
				double		ref = nearbyint((double) (acc + ibias[n]) * mult[n]) + ep.y_zp;
				double		lo = ep.q_dtype == OX_INT8 ? -128 : 0,
							hi = ep.q_dtype == OX_INT8 ? 127 : 255;
				int32_t		got = ep.q_dtype == OX_INT8 ? ((int8_t *) C)[m * N + n] : ((uint8_t *) C)[m * N + n];

				ref = ref < lo ? lo : (ref > hi ? hi : ref);
				ok = fabs(got - ref) <= 1;
			}
			if (!ok)
				printf("  rows mismatch at m=%lld n=%lld (adt %d bdt %d trans %d zp %d out %d)\n",
					   (long long) m, (long long) n, adt, bdt, trans, zp_mode, out);
		}
	check(ok, "rows", isa, M, N, K);
	ox_qgemm_weights_free(&w);
	free(A);
	free(B);
	free(C);
	free(mult);
	free(bias);
	free(ibias);
}

/* cols: Y[ch, j] = sum (W[ch,k]-zw[ch])(X[k,j]-zx) */
static void
test_cols(const char *isa, int64_t CH, int64_t NC, int64_t K, ox_dtype wdt, bool x_signed,
		  int zp_mode, ox_qg_out out)
{
	uint8_t    *W = malloc(CH * K + 1),
			   *X = malloc(K * NC + 1),
				wzp[1024];
	int64_t		n_zp = zp_mode == 0 ? 0 : (zp_mode == 1 ? 1 : CH);
	int32_t		xzp = x_signed ? (int32_t) (int8_t) rnd() : (int32_t) (rnd() & 255);
	void	   *Y = malloc(CH * NC * 4 + 4);
	float	   *mult = malloc(CH * 4 + 4);
	int32_t    *ibias = malloc(CH * 4 + 4);
	ox_qgemm_weights w;
	ox_qgemm_cols c;
	ox_qgemm_epi ep;
	ox_status	st;
	bool		ok = true;

	fill(W, CH * K);
	fill(X, K * NC);
	fill(wzp, sizeof(wzp));
	for (int64_t i = 0; i < CH; i++)
	{
		mult[i] = 0.0005f + (rnd() % 1000) * 1e-6f;
		ibias[i] = (int32_t) (rnd() % 20001) - 10000;
	}
	ox_status_clear(&st);
	memset(&c, 0, sizeof(c));
	if (ox_qgemm_pack(&w, OX_QG_BCAST, CH, K, W, wdt, K, 1, wzp, n_zp, &st) != OX_OK ||
		ox_qgemm_cols_reset(&c, NC, K, x_signed ? xzp + 128 : xzp, &st) != OX_OK)
	{
		check(false, "cols setup", isa, CH, NC, K);
		return;
	}
	for (int64_t q = 0; q < (K + 3) / 4; q++)
	{
		const uint8_t *rows[4];

		for (int t = 0; t < 4; t++)
			rows[t] = 4 * q + t < K ? X + (4 * q + t) * NC : NULL;
		ox_qgemm_cols_put(&c, q, rows, x_signed ? 0x80 : 0);
	}
	if (w.has_zp)
		ox_qgemm_cols_sums(&c, &st);
	memset(&ep, 0, sizeof(ep));
	ep.kind = out;
	ep.q_dtype = OX_UINT8;
	ep.mult = mult;
	ep.ibias = ibias;
	ep.y_zp = 7;
	if (ox_qgemm_cols_run(NULL, &w, &c, &ep, Y, NC, &st) != OX_OK)
	{
		check(false, "cols run", isa, CH, NC, K);
		return;
	}
	for (int64_t ch = 0; ch < CH && ok; ch++)
		for (int64_t j = 0; j < NC && ok; j++)
		{
			int64_t		acc = 0;
			int32_t		zw = n_zp == 0 ? 0 : qval(wzp, wdt, n_zp == 1 ? 0 : ch);

			for (int64_t k = 0; k < K; k++)
				acc += (int64_t) (qval(W, wdt, ch * K + k) - zw) *
					(qval(X, x_signed ? OX_INT8 : OX_UINT8, k * NC + j) - xzp);
			if (out == OX_QG_OUT_I32)
				ok = ((int32_t *) Y)[ch * NC + j] == (int32_t) (acc + ibias[ch]);
			else
			{
				double		ref = nearbyint((double) (acc + ibias[ch]) * mult[ch]) + 7;

				ref = ref < 0 ? 0 : (ref > 255 ? 255 : ref);
				ok = fabs(((uint8_t *) Y)[ch * NC + j] - ref) <= 1;
			}
			if (!ok)
				printf("  cols mismatch at ch=%lld j=%lld\n", (long long) ch, (long long) j);
		}
	check(ok, "cols", isa, CH, NC, K);
	ox_qgemm_weights_free(&w);
	ox_qgemm_cols_free(&c);
	free(W);
	free(X);
	free(Y);
	free(mult);
	free(ibias);
}

static void
test_dynq(const char *isa)
{
	float		x[1000];
	uint8_t		y[1000];
	float		scale;
	uint8_t		zp;
	bool		ok = true;

	for (int i = 0; i < 1000; i++)
		x[i] = ((int) (rnd() % 20001) - 8000) * 0.001f;
	ox_qgemm_dynamic_quantize(x, 1000, y, &scale, &zp);
	{
		float		mn = 0,
					mx = 0;

		for (int i = 0; i < 1000; i++)
		{
			mn = fminf(mn, x[i]);
			mx = fmaxf(mx, x[i]);
		}
		ok = fabsf(scale - (mx - mn) / 255.0f) < 1e-7f && zp == (uint8_t) nearbyintf(-mn / scale);
		for (int i = 0; i < 1000 && ok; i++)
		{
			float		q = nearbyintf(x[i] / scale) + zp;

			q = q < 0 ? 0 : (q > 255 ? 255 : q);
			ok = y[i] == (uint8_t) q;
		}
	}
	check(ok, "dynamic quantize", isa, 0, 0, 0);
}

/* byte transposes with ragged edges, strides wider than the block and a flip */
static void
test_transpose(void)
{
	int64_t		shapes[][2] = {{1, 1}, {7, 7}, {16, 16}, {17, 49}, {49, 512}, {512, 7}, {3, 40}, {33, 15}};

	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
		for (int f = 0; f < 2; f++)
		{
			int64_t		rows = shapes[s][0],
						cols = shapes[s][1];
			int64_t		sld = cols + 3,
						dld = rows + 5;
			uint8_t		flip = f ? 0x80 : 0;
			uint8_t    *src = malloc(rows * sld),
					   *dst = malloc(cols * dld);
			bool		ok = true;

			fill(src, rows * sld);
			memset(dst, 0xA5, cols * dld);
			ox_qgemm_transpose_u8(src, rows, cols, sld, dst, dld, flip);
			for (int64_t c = 0; c < cols; c++)
				for (int64_t r = 0; r < dld; r++)
					ok &= dst[c * dld + r] == (r < rows ? (uint8_t) (src[r * sld + c] ^ flip) : 0xA5);
			check(ok, "transpose", "any", rows, cols, flip);
			free(src);
			free(dst);
		}
}

int
main(void)
{
	const char *isas[] = {"avx512vnni", "avx2", "portable"};
	int64_t		sizes[][3] = {{1, 1, 1}, {1, 64, 64}, {7, 70, 13}, {6, 64, 4}, {13, 130, 257},
	{48, 200, 96}, {100, 3, 5}, {5, 129, 1000}};

	for (int i = 0; i < 3; i++)
	{
		if (!ox_qgemm_force_isa(isas[i]))
		{
			printf("skip %s (not available here)\n", isas[i]);
			continue;
		}
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
			for (int variant = 0; variant < 6; variant++)
			{
				ox_dtype	adt = (variant & 1) ? OX_INT8 : OX_UINT8;
				ox_dtype	bdt = (variant & 2) ? OX_UINT8 : OX_INT8;
				ox_qg_out	out = (ox_qg_out) (variant % 3);

				test_rows(isas[i], sizes[s][0], sizes[s][1], sizes[s][2], adt, bdt, variant >= 3,
						  variant % 3, out);
				test_cols(isas[i], sizes[s][1], sizes[s][0] * 9 + 1, sizes[s][2], bdt, variant & 1,
						  variant % 3, out == OX_QG_OUT_F32 ? OX_QG_OUT_Q8 : out);
			}
		test_dynq(isas[i]);
	}
	test_transpose();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
