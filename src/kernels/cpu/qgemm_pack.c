/*
 * qgemm_pack.c
 *	  Data movement around the int8 GEMM (qgemm.c): the column operand of
 *	  the BCAST product (im2col rows interleaved into quads, and their
 *	  sums), 16 x 16 byte transposes between NCHW and channels-last, and the
 *	  vectorized quantization loops of DynamicQuantizeLinear and per-tensor
 *	  QuantizeLinear.  Paths are chosen by ox_qg_pick like the GEMM's.
 */
#include "kernels/cpu/qgemm.h"
#include "kernels/cpu/qgemm_isa.h"

#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- byte transposes ---------------------------------------------------------- */

/* 16 x 16 bytes: rows of src (sld apart) become rows of dst (dld apart) */
static inline void
transpose16(const uint8_t *src, int64_t sld, uint8_t *dst, int64_t dld, __m128i flip)
{
	__m128i		a[16],
				b[16];

	for (int i = 0; i < 16; i++)
		a[i] = _mm_xor_si128(_mm_loadu_si128((const __m128i *) (src + i * sld)), flip);
	for (int i = 0; i < 8; i++)
	{
		b[2 * i] = _mm_unpacklo_epi8(a[2 * i], a[2 * i + 1]);
		b[2 * i + 1] = _mm_unpackhi_epi8(a[2 * i], a[2 * i + 1]);
	}
	for (int i = 0; i < 4; i++)
	{
		a[4 * i] = _mm_unpacklo_epi16(b[4 * i], b[4 * i + 2]);
		a[4 * i + 1] = _mm_unpackhi_epi16(b[4 * i], b[4 * i + 2]);
		a[4 * i + 2] = _mm_unpacklo_epi16(b[4 * i + 1], b[4 * i + 3]);
		a[4 * i + 3] = _mm_unpackhi_epi16(b[4 * i + 1], b[4 * i + 3]);
	}
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < 4; k++)
		{
			b[8 * i + 2 * k] = _mm_unpacklo_epi32(a[8 * i + k], a[8 * i + 4 + k]);
			b[8 * i + 2 * k + 1] = _mm_unpackhi_epi32(a[8 * i + k], a[8 * i + 4 + k]);
		}
	for (int k = 0; k < 8; k++)
	{
		_mm_storeu_si128((__m128i *) (dst + (2 * k) * dld), _mm_unpacklo_epi64(b[k], b[8 + k]));
		_mm_storeu_si128((__m128i *) (dst + (2 * k + 1) * dld), _mm_unpackhi_epi64(b[k], b[8 + k]));
	}
}

/*
 * A block of nr x nc bytes (at most 16 x 16) through a zeroed 16 x 16
 * staging block: the edges of small planes (a 7 x 7 or 14 x 14 feature map
 * of a late convolution, whose rows are all edge) stay vectorized.
 */
static void
transpose_edge(const uint8_t *src, int nr, int nc, int64_t sld, uint8_t *dst, int64_t dld,
			   __m128i flip)
{
	uint8_t		in[256] __attribute__((aligned(16)));
	uint8_t		out[256] __attribute__((aligned(16)));

	memset(in, 0, sizeof(in));
	for (int r = 0; r < nr; r++)
		memcpy(in + r * 16, src + r * sld, (size_t) nc);
	transpose16(in, 16, out, 16, flip);
	for (int c = 0; c < nc; c++)
		memcpy(dst + c * dld, out + c * 16, (size_t) nr);
}

void
ox_qgemm_transpose_u8(const uint8_t *src, int64_t rows, int64_t cols, int64_t sld, uint8_t *dst,
					  int64_t dld, uint8_t flip)
{
	__m128i		f = _mm_set1_epi8((char) flip);

	for (int64_t r0 = 0; r0 < rows; r0 += 16)
	{
		int			nr = (int) (rows - r0 < 16 ? rows - r0 : 16);

		for (int64_t c0 = 0; c0 < cols; c0 += 16)
		{
			int			nc = (int) (cols - c0 < 16 ? cols - c0 : 16);

			if (nr == 16 && nc == 16)
				transpose16(src + r0 * sld + c0, sld, dst + c0 * dld + r0, dld, f);
			else
				transpose_edge(src + r0 * sld + c0, nr, nc, sld, dst + c0 * dld + r0, dld, f);
		}
	}
}

/* ---- packed columns ------------------------------------------------------------ */

ox_code
ox_qgemm_cols_reset(ox_qgemm_cols *c, int64_t n, int64_t k, int32_t zp, ox_status *st)
{
	int64_t		k4 = (k + 3) / 4;
	int64_t		panels = (n + OX_QG_COLS_NR - 1) / OX_QG_COLS_NR;
	size_t		need;

	if (n < 0 || k < 0 || (panels > 0 && k4 > OX_MAX_ELEMENTS / panels / (OX_QG_COLS_NR * 4)))
		return ox_fail(st, OX_LIMIT_EXCEEDED, "int8 GEMM: %lld x %lld operand is too large",
					   (long long) k, (long long) n);
	need = (size_t) (panels * k4 * OX_QG_COLS_NR * 4);
	if (need > c->cap)
	{
		ox_aligned_free(c->data);
		c->data = ox_aligned_alloc(need);
		c->cap = c->data ? need : 0;
		if (!c->data)
			return ox_fail(st, OX_OUT_OF_MEMORY, "int8 GEMM: out of memory for %zu bytes", need);
	}
	/* the last panel's padding columns must hold something defined */
	if (n % OX_QG_COLS_NR != 0 && need > 0)
		memset(c->data + (panels - 1) * k4 * OX_QG_COLS_NR * 4, 0,
			   (size_t) (k4 * OX_QG_COLS_NR * 4));
	c->n = n;
	c->k = k;
	c->k4 = k4;
	c->zp = zp;
	return OX_OK;
}

QG_INLINE void
cols_put_body(ox_qgemm_cols *c, int64_t q, const uint8_t *const rows[4], uint8_t flip)
{
	static const uint8_t zeros[OX_QG_COLS_NR];
	int64_t		panels = (c->n + OX_QG_COLS_NR - 1) / OX_QG_COLS_NR;

	for (int64_t p = 0; p < panels; p++)
	{
		uint32_t   *dst = (uint32_t *) (c->data + (p * c->k4 + q) * OX_QG_COLS_NR * 4);
		int64_t		j0 = p * OX_QG_COLS_NR;
		int			nc = (int) (c->n - j0 < OX_QG_COLS_NR ? c->n - j0 : OX_QG_COLS_NR);
		const uint8_t *r0 = rows[0] ? rows[0] + j0 : zeros;
		const uint8_t *r1 = rows[1] ? rows[1] + j0 : zeros;
		const uint8_t *r2 = rows[2] ? rows[2] + j0 : zeros;
		const uint8_t *r3 = rows[3] ? rows[3] + j0 : zeros;
		uint8_t		f0 = rows[0] ? flip : 0,
					f1 = rows[1] ? flip : 0,
					f2 = rows[2] ? flip : 0,
					f3 = rows[3] ? flip : 0;

		for (int j = 0; j < nc; j++)
			dst[j] = (uint32_t) (uint8_t) (r0[j] ^ f0) | (uint32_t) (uint8_t) (r1[j] ^ f1) << 8 |
				(uint32_t) (uint8_t) (r2[j] ^ f2) << 16 | (uint32_t) (uint8_t) (r3[j] ^ f3) << 24;
	}
}

QG_TARGET_AVX2 static void
cols_put_avx2(ox_qgemm_cols *c, int64_t q, const uint8_t *const rows[4], uint8_t flip)
{
	cols_put_body(c, q, rows, flip);
}

static void
cols_put_portable(ox_qgemm_cols *c, int64_t q, const uint8_t *const rows[4], uint8_t flip)
{
	cols_put_body(c, q, rows, flip);
}

void
ox_qgemm_cols_put(ox_qgemm_cols *c, int64_t q, const uint8_t *const rows[4], uint8_t flip)
{
	if (ox_qg_pick() != QG_PORTABLE)
		cols_put_avx2(c, q, rows, flip);
	else
		cols_put_portable(c, q, rows, flip);
}

/* four 16-byte row chunks interleaved into 64 bytes of quads */
static inline void
put16(uint8_t *o, __m128i r0, __m128i r1, __m128i r2, __m128i r3)
{
	__m128i		a = _mm_unpacklo_epi8(r0, r1),
				b = _mm_unpackhi_epi8(r0, r1),
				c = _mm_unpacklo_epi8(r2, r3),
				d = _mm_unpackhi_epi8(r2, r3);

	_mm_storeu_si128((__m128i *) o, _mm_unpacklo_epi16(a, c));
	_mm_storeu_si128((__m128i *) (o + 16), _mm_unpackhi_epi16(a, c));
	_mm_storeu_si128((__m128i *) (o + 32), _mm_unpacklo_epi16(b, d));
	_mm_storeu_si128((__m128i *) (o + 48), _mm_unpackhi_epi16(b, d));
}

/*
 * Interleave n columns (starting at column x0, xs bytes apart) of four rows
 * into packed quads at dst, with SSE2 byte/word unpacking 16, 8 or 4
 * columns at a time.  Stride-2 rows are compacted first.
 */
static void
put_run(uint8_t *dst, const uint8_t *const r[4], int64_t x0, int64_t n, int64_t xs, uint8_t flip)
{
	__m128i		f = _mm_set1_epi8((char) flip);
	int64_t		i = 0;

	if (xs == 1)
	{
		for (; i + 16 <= n; i += 16)
			put16(dst + i * 4,
				  _mm_xor_si128(_mm_loadu_si128((const __m128i *) (r[0] + x0 + i)), f),
				  _mm_xor_si128(_mm_loadu_si128((const __m128i *) (r[1] + x0 + i)), f),
				  _mm_xor_si128(_mm_loadu_si128((const __m128i *) (r[2] + x0 + i)), f),
				  _mm_xor_si128(_mm_loadu_si128((const __m128i *) (r[3] + x0 + i)), f));
		for (; i + 8 <= n; i += 8)
		{
			__m128i		a = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *) (r[0] + x0 + i)),
											  _mm_loadl_epi64((const __m128i *) (r[1] + x0 + i)));
			__m128i		c = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *) (r[2] + x0 + i)),
											  _mm_loadl_epi64((const __m128i *) (r[3] + x0 + i)));

			a = _mm_xor_si128(a, f);
			c = _mm_xor_si128(c, f);
			_mm_storeu_si128((__m128i *) (dst + i * 4), _mm_unpacklo_epi16(a, c));
			_mm_storeu_si128((__m128i *) (dst + i * 4 + 16), _mm_unpackhi_epi16(a, c));
		}
	}
	else if (xs == 2)
	{
		/* 16 columns read 31 bytes: stop where that would pass the run's last byte */
		for (; i + 16 <= n; i += 16)
		{
			__m128i		m = _mm_set1_epi16(0x00ff);
			__m128i		v[4];

			for (int t = 0; t < 4; t++)
			{
				const uint8_t *p = r[t] + (x0 + i) * 2;
				__m128i		lo = _mm_and_si128(_mm_loadu_si128((const __m128i *) p), m);
				__m128i		hi = _mm_and_si128(_mm_srli_si128(_mm_loadu_si128((const __m128i *) (p + 15)), 1), m);

				v[t] = _mm_xor_si128(_mm_packus_epi16(lo, hi), f);
			}
			put16(dst + i * 4, v[0], v[1], v[2], v[3]);
		}
	}
	for (; i < n; i++)
	{
		int64_t		x = (x0 + i) * xs;

		dst[i * 4] = r[0][x] ^ flip;
		dst[i * 4 + 1] = r[1][x] ^ flip;
		dst[i * 4 + 2] = r[2][x] ^ flip;
		dst[i * 4 + 3] = r[3][x] ^ flip;
	}
}

void
ox_qgemm_cols_put2d(ox_qgemm_cols *c, int64_t q, const uint8_t *const rows[4], int64_t width,
					int64_t pitch, int64_t xstride, uint8_t flip)
{
	static const uint8_t zeros[1] = {0};
	int64_t		p = 0;
	bool		padded = false;

	for (int t = 0; t < 4; t++)
		padded |= rows[t] == NULL;
	if (width <= 0)
		return;
	for (int64_t oy = 0; p < c->n; oy++, p += width)
	{
		const uint8_t *r[4];
		uint8_t		fl = flip;

		for (int t = 0; t < 4; t++)
			r[t] = rows[t] ? rows[t] + oy * pitch : zeros;
		for (int64_t ox = 0; ox < width && p + ox < c->n;)
		{
			int64_t		j = p + ox;
			int64_t		lane = j % OX_QG_COLS_NR;
			int64_t		run = OX_QG_COLS_NR - lane;
			uint8_t    *dst = c->data + ((j / OX_QG_COLS_NR) * c->k4 + q) * OX_QG_COLS_NR * 4 + lane * 4;

			if (run > width - ox)
				run = width - ox;
			if (padded)
			{
				/* the last quad of a reduction that is not a multiple of 4 */
				for (int64_t i = 0; i < run; i++)
					for (int t = 0; t < 4; t++)
						dst[i * 4 + t] = rows[t] ? r[t][(ox + i) * xstride] ^ fl : 0;
			}
			else
				put_run(dst, r, ox, run, xstride, fl);
			ox += run;
		}
	}
}

ox_code
ox_qgemm_cols_sums(ox_qgemm_cols *c, ox_status *st)
{
	if ((size_t) c->n * sizeof(int32_t) > c->sum_cap)
	{
		free(c->sum);
		c->sum = malloc(sizeof(int32_t) * (size_t) (c->n + 1));
		c->sum_cap = c->sum ? sizeof(int32_t) * (size_t) (c->n + 1) : 0;
		if (!c->sum)
			return ox_fail(st, OX_OUT_OF_MEMORY, "int8 GEMM: out of memory");
	}
	for (int64_t j = 0; j < c->n; j++)
	{
		const uint8_t *col = c->data + (j / OX_QG_COLS_NR) * c->k4 * OX_QG_COLS_NR * 4 +
			(j % OX_QG_COLS_NR) * 4;
		int64_t		s = 0;

		for (int64_t q = 0; q < c->k4; q++)
			s += col[q * OX_QG_COLS_NR * 4] + col[q * OX_QG_COLS_NR * 4 + 1] +
				col[q * OX_QG_COLS_NR * 4 + 2] + col[q * OX_QG_COLS_NR * 4 + 3];
		c->sum[j] = wrap32(s);
	}
	return OX_OK;
}

void
ox_qgemm_cols_free(ox_qgemm_cols *c)
{
	if (!c)
		return;
	ox_aligned_free(c->data);
	free(c->sum);
	memset(c, 0, sizeof(*c));
}

/* ---- dynamic quantization ---------------------------------------------------- */

/* min and max of x, starting from 0 (the range always holds 0) */
QG_INLINE void
minmax_body(const float *x, int64_t n, float *mn_out, float *mx_out)
{
	float		mn = 0.0f,
				mx = 0.0f;

	/* written as selects so that the loop vectorizes; NaNs take no part */
	for (int64_t i = 0; i < n; i++)
	{
		mn = x[i] < mn ? x[i] : mn;
		mx = x[i] > mx ? x[i] : mx;
	}
	*mn_out = mn;
	*mx_out = mx;
}

/* y = saturate(round(x / scale) + zpf) to uint8, NaN to 0 */
QG_INLINE void
quantize_u8_body(const float *x, int64_t n, uint8_t *y, float scale, float zpf)
{
	for (int64_t i = 0; i < n; i++)
	{
		float		q = nearbyintf(x[i] / scale) + zpf;

		/* !(q >= 0) also catches NaN */
		y[i] = (uint8_t) (int32_t) (!(q >= 0.0f) ? 0.0f : (q > 255.0f ? 255.0f : q));
	}
}

/* DynamicQuantizeLinear's scale and zero point for the range [mn, mx] (0 in it) */
static inline void
dynq_params(float mn, float mx, float *scale, float *zpf)
{
	float		z;

	*scale = (mx == mn ? 1.0f : mx - mn) / 255.0f;
	z = 0.0f - mn / *scale;
	z = z < 0.0f ? 0.0f : (z > 255.0f ? 255.0f : z);
	*zpf = nearbyintf(z);
}

QG_INLINE void
dynq_body(const float *x, int64_t n, uint8_t *y, float *scale, uint8_t *zp)
{
	float		mn,
				mx,
				zpf;

	minmax_body(x, n, &mn, &mx);
	dynq_params(mn, mx, scale, &zpf);
	quantize_u8_body(x, n, y, *scale, zpf);
	*zp = (uint8_t) (int32_t) zpf;
}

/* min and max of x, starting from 0 (the range always holds 0) */
QG_TARGET_VNNI static void
minmax_avx512(const float *x, int64_t n, float *mn_out, float *mx_out)
{
	__m512		vmn = _mm512_setzero_ps(),
				vmx = _mm512_setzero_ps();
	float		mn,
				mx;
	int64_t		i = 0;

	/* min/max return their second operand for a NaN: NaNs take no part */
	for (; i + 16 <= n; i += 16)
	{
		__m512		v = _mm512_loadu_ps(x + i);

		vmn = _mm512_min_ps(v, vmn);
		vmx = _mm512_max_ps(v, vmx);
	}
	mn = _mm512_reduce_min_ps(vmn);
	mx = _mm512_reduce_max_ps(vmx);
	for (; i < n; i++)
	{
		mn = x[i] < mn ? x[i] : mn;
		mx = x[i] > mx ? x[i] : mx;
	}
	*mn_out = mn;
	*mx_out = mx;
}

/* y = saturate(round(x / scale) + zpf) to uint8, NaN to 0 */
QG_TARGET_VNNI static void
quantize_u8_avx512(const float *x, int64_t n, uint8_t *y, float scale, float zpf)
{
	__m512		vs = _mm512_set1_ps(scale);
	__m512i		vz = _mm512_set1_epi32((int32_t) zpf);

	for (int64_t i = 0; i < n; i += 16)
	{
		__mmask16	m = n - i >= 16 ? 0xffff : (__mmask16) ((1u << (n - i)) - 1);
		/* the quotient rounds to nearest even in the conversion; NaN gives INT_MIN */
		__m512i		q = _mm512_cvtps_epi32(_mm512_div_ps(_mm512_maskz_loadu_ps(m, x + i), vs));

		q = _mm512_add_epi32(_mm512_max_epi32(q, _mm512_set1_epi32(-65536)), vz);
		q = _mm512_max_epi32(q, _mm512_setzero_si512());
		_mm512_mask_cvtusepi32_storeu_epi8(y + i, m, q);
	}
}

QG_TARGET_VNNI static void
dynq_avx512(const float *x, int64_t n, uint8_t *y, float *scale_out, uint8_t *zp_out)
{
	float		mn,
				mx,
				scale,
				zpf;

	minmax_avx512(x, n, &mn, &mx);
	dynq_params(mn, mx, &scale, &zpf);
	quantize_u8_avx512(x, n, y, scale, zpf);
	*scale_out = scale;
	*zp_out = (uint8_t) (int32_t) zpf;
}

QG_TARGET_AVX2 static void
dynq_avx2(const float *x, int64_t n, uint8_t *y, float *scale, uint8_t *zp)
{
	dynq_body(x, n, y, scale, zp);
}

static void
dynq_portable(const float *x, int64_t n, uint8_t *y, float *scale, uint8_t *zp)
{
	dynq_body(x, n, y, scale, zp);
}

void
ox_qgemm_dynamic_quantize(const float *x, int64_t n, uint8_t *y, float *scale, uint8_t *zp)
{
	switch (ox_qg_pick())
	{
		case QG_VNNI:
			dynq_avx512(x, n, y, scale, zp);
			break;
		case QG_AVX2:
			dynq_avx2(x, n, y, scale, zp);
			break;
		default:
			dynq_portable(x, n, y, scale, zp);
	}
}

/*
 * Per-row quantization: each row of k values gets its own range (with 0 in
 * it), scale = max(range / 255, min_scale) and zero point round(-lo /
 * scale), in exactly the float operations of the quantizer's standard
 * operator chain (model/quantize_rewrite.c), so that fused and unfused
 * runs quantize alike.
 */
QG_INLINE void
rowq_params(float mn, float mx, float min_scale, float *scale, float *zpf)
{
	float		s = (mx - mn) / 255.0f;

	/* !(s >= min_scale) also takes a NaN range to min_scale */
	*scale = !(s >= min_scale) ? min_scale : s;
	*zpf = nearbyintf((0.0f - mn) / *scale);
	if (!(*zpf >= 0.0f))
		*zpf = 0.0f;
	else if (*zpf > 255.0f)
		*zpf = 255.0f;
}

QG_TARGET_VNNI static void
rowq_avx512(const float *x, int64_t rows, int64_t k, uint8_t *y, float *scales, int32_t *zps,
			float min_scale)
{
	for (int64_t r = 0; r < rows; r++)
	{
		float		mn,
					mx,
					zpf;

		minmax_avx512(x + r * k, k, &mn, &mx);
		rowq_params(mn, mx, min_scale, &scales[r], &zpf);
		quantize_u8_avx512(x + r * k, k, y + r * k, scales[r], zpf);
		zps[r] = (int32_t) zpf;
	}
}

QG_INLINE void
rowq_body(const float *x, int64_t rows, int64_t k, uint8_t *y, float *scales, int32_t *zps,
		  float min_scale)
{
	for (int64_t r = 0; r < rows; r++)
	{
		float		mn,
					mx,
					zpf;

		minmax_body(x + r * k, k, &mn, &mx);
		rowq_params(mn, mx, min_scale, &scales[r], &zpf);
		quantize_u8_body(x + r * k, k, y + r * k, scales[r], zpf);
		zps[r] = (int32_t) zpf;
	}
}

QG_TARGET_AVX2 static void
rowq_avx2(const float *x, int64_t rows, int64_t k, uint8_t *y, float *scales, int32_t *zps,
		  float min_scale)
{
	rowq_body(x, rows, k, y, scales, zps, min_scale);
}

static void
rowq_portable(const float *x, int64_t rows, int64_t k, uint8_t *y, float *scales, int32_t *zps,
			  float min_scale)
{
	rowq_body(x, rows, k, y, scales, zps, min_scale);
}

void
ox_qgemm_quantize_rows(const float *x, int64_t rows, int64_t k, uint8_t *y, float *scales,
					   int32_t *zps, float min_scale)
{
	switch (ox_qg_pick())
	{
		case QG_VNNI:
			rowq_avx512(x, rows, k, y, scales, zps, min_scale);
			break;
		case QG_AVX2:
			rowq_avx2(x, rows, k, y, scales, zps, min_scale);
			break;
		default:
			rowq_portable(x, rows, k, y, scales, zps, min_scale);
	}
}

/*
 * y[m, j] = ((float) (acc[m, j] - zp[m] * sums[j]) * scale[m]) * b_scale[j]
 * + bias[j], in place over the int32 products; the multiplications in the
 * order of the unfused chain (Cast, Mul by the row scale, Mul by b_scale).
 */
QG_TARGET_VNNI static void
rows_scale_back_avx512(void *y, int64_t rows, int64_t n, const float *scales, const int32_t *zps,
					   const int32_t *sums, const float *bs, int64_t n_bs, const float *bias)
{
	for (int64_t m = 0; m < rows; m++)
	{
		int32_t    *acc = (int32_t *) y + m * n;
		float	   *out = (float *) y + m * n;
		__m512i		vz = _mm512_set1_epi32(zps[m]);
		__m512		vs = _mm512_set1_ps(scales[m]);

		for (int64_t j = 0; j < n; j += 16)
		{
			__mmask16	k = n - j >= 16 ? 0xffff : (__mmask16) ((1u << (n - j)) - 1);
			__m512i		v = _mm512_sub_epi32(_mm512_maskz_loadu_epi32(k, acc + j),
											 _mm512_mullo_epi32(vz, _mm512_maskz_loadu_epi32(k, sums + j)));
			__m512		f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), vs);

			f = _mm512_mul_ps(f, n_bs == 1 ? _mm512_set1_ps(bs[0]) : _mm512_maskz_loadu_ps(k, bs + j));
			if (bias)
				f = _mm512_add_ps(f, _mm512_maskz_loadu_ps(k, bias + j));
			_mm512_mask_storeu_ps(out + j, k, f);
		}
	}
}

void
ox_qgemm_rows_scale_back(void *y, int64_t rows, int64_t n, const float *scales, const int32_t *zps,
				const int32_t *sums, const float *bs, int64_t n_bs, const float *bias)
{
	if (ox_qg_pick() == QG_VNNI)
	{
		rows_scale_back_avx512(y, rows, n, scales, zps, sums, bs, n_bs, bias);
		return;
	}
	for (int64_t m = 0; m < rows; m++)
	{
		int32_t    *acc = (int32_t *) y + m * n;
		float	   *out = (float *) y + m * n;

		for (int64_t j = 0; j < n; j++)
		{
			int32_t		v = (int32_t) ((uint32_t) acc[j] - (uint32_t) zps[m] * (uint32_t) sums[j]);
			float		f = ((float) v * scales[m]) * bs[n_bs == 1 ? 0 : j];

			out[j] = bias ? f + bias[j] : f;
		}
	}
}

/* ---- QuantizeLinear per tensor ------------------------------------------------- */

QG_INLINE void
quantize_body(const float *x, int64_t n, float scale, int32_t zp, bool is_signed, void *y)
{
	float		lo = is_signed ? -128.0f : 0.0f,
				hi = is_signed ? 127.0f : 255.0f,
				z = (float) zp;

	for (int64_t i = 0; i < n; i++)
	{
		float		q = nearbyintf(x[i] / scale) + z;

		q = !(q >= lo) ? lo : (q > hi ? hi : q);
		if (is_signed)
			((int8_t *) y)[i] = (int8_t) (int32_t) q;
		else
			((uint8_t *) y)[i] = (uint8_t) (int32_t) q;
	}
}

QG_TARGET_VNNI static void
quantize_avx512(const float *x, int64_t n, float scale, int32_t zp, bool is_signed, void *y)
{
	__m512		vs = _mm512_set1_ps(scale);
	__m512i		vz = _mm512_set1_epi32(zp);
	__m512i		lo = _mm512_set1_epi32(is_signed ? -128 : 0);

	for (int64_t i = 0; i < n; i += 16)
	{
		__mmask16	m = n - i >= 16 ? 0xffff : (__mmask16) ((1u << (n - i)) - 1);
		__m512		f = _mm512_div_ps(_mm512_maskz_loadu_ps(m, x + i), vs);
		__m512i		q;

		/* NaN to the low end (max returns its second operand), stay inside int32 */
		f = _mm512_min_ps(_mm512_max_ps(f, _mm512_set1_ps(-1048576.0f)), _mm512_set1_ps(1048576.0f));
		q = _mm512_max_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(f), vz), lo);
		if (is_signed)
			_mm512_mask_cvtsepi32_storeu_epi8((int8_t *) y + i, m, q);
		else
			_mm512_mask_cvtusepi32_storeu_epi8((uint8_t *) y + i, m, q);
	}
}

void
ox_qgemm_quantize(const float *x, int64_t n, float scale, int32_t zp, ox_dtype dt, void *y)
{
	if (ox_qg_pick() == QG_VNNI)
		quantize_avx512(x, n, scale, zp, dt == OX_INT8, y);
	else
		quantize_body(x, n, scale, zp, dt == OX_INT8, y);
}
