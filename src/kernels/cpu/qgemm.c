/*
 * qgemm.c
 *	  The int8 GEMM behind MatMulInteger, QLinearMatMul, ConvInteger,
 *	  QLinearConv and the fused quantized operators (qgemm_ops.c).
 *
 *	  Every path computes the same exact int32 sums: AVX-512 VNNI with
 *	  vpdpbusd (four unsigned x signed byte products summed into each int32
 *	  lane, no intermediate saturation), AVX2 with vpmaddwd on operands
 *	  widened to 16 bits (vpmaddubsw would saturate at 32767), and portable
 *	  C.  The path is chosen once from cpuid; functions carry target
 *	  attributes, the build uses no -march.
 *
 *	  Zero points are applied outside the inner loop:
 *		sum (a - za)(w - zw) = sum a w - za sum w - zw sum a + k za zw
 *	  with the weight sums computed when packing and the activation sums
 *	  only when some weight zero point is not 0.
 *
 *	  Threading: tiles are independent; ox_parallel_for splits them.
 *
 *	  The operand packing of the columns product, byte transposes and the
 *	  vectorized quantization loops live in qgemm_pack.c.
 */
#include "kernels/cpu/qgemm.h"
#include "kernels/cpu/qgemm_isa.h"

#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int	qg_chosen = -1;
static const char *const qg_isa_names[] = {"portable", "avx2", "avx512vnni"};

static bool
qg_isa_available(qg_isa isa)
{
	__builtin_cpu_init();
	switch (isa)
	{
		case QG_VNNI:
			return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
				__builtin_cpu_supports("avx512vnni");
		case QG_AVX2:
			return __builtin_cpu_supports("avx2");
		case QG_PORTABLE:
			return true;
	}
	return false;
}

qg_isa
ox_qg_pick(void)
{
	if (qg_chosen < 0)
	{
		if (qg_isa_available(QG_VNNI))
			qg_chosen = QG_VNNI;
		else if (qg_isa_available(QG_AVX2))
			qg_chosen = QG_AVX2;
		else
			qg_chosen = QG_PORTABLE;
	}
	return (qg_isa) qg_chosen;
}

const char *
ox_qgemm_isa(void)
{
	return qg_isa_names[ox_qg_pick()];
}

bool
ox_qgemm_force_isa(const char *name)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(name, qg_isa_names[i]) == 0)
		{
			if (!qg_isa_available((qg_isa) i))
				return false;
			qg_chosen = i;
			return true;
		}
	return false;
}

/* ---- packing weights ------------------------------------------------------ */

ox_code
ox_qgemm_pack(ox_qgemm_weights *w, ox_qg_layout layout, int64_t n_ch, int64_t k,
			  const void *src, ox_dtype dt, int64_t ch_stride, int64_t k_stride,
			  const void *zp, int64_t n_zp, ox_status *st)
{
	int64_t		unit = layout == OX_QG_VEC ? OX_QG_VEC_NR : OX_QG_BC_MR;
	int64_t		k4 = (k + 3) / 4;
	int64_t		nblk = (n_ch + unit - 1) / unit;
	bool		u8 = dt == OX_UINT8;
	size_t		bytes;

	memset(w, 0, sizeof(*w));
	if ((dt != OX_UINT8 && dt != OX_INT8) || n_ch < 0 || k < 0 ||
		(n_zp != 0 && n_zp != 1 && n_zp != n_ch))
		return ox_fail(st, OX_INTERNAL, "int8 GEMM: bad weights to pack");
	if (nblk > 0 && k4 > OX_MAX_ELEMENTS / nblk / unit / 4)
		return ox_fail(st, OX_LIMIT_EXCEEDED, "int8 GEMM: weights of %lld x %lld are too large",
					   (long long) n_ch, (long long) k);
	bytes = (size_t) (nblk * k4 * unit * 4);
	w->data = ox_aligned_alloc(bytes ? bytes : 64);
	w->zp = malloc(sizeof(int32_t) * (size_t) (n_ch + 1));
	w->sum = malloc(sizeof(int32_t) * (size_t) (n_ch + 1));
	if (!w->data || !w->zp || !w->sum)
	{
		ox_qgemm_weights_free(w);
		return ox_fail(st, OX_OUT_OF_MEMORY, "int8 GEMM: out of memory packing %zu bytes of weights",
					   bytes);
	}
	memset(w->data, 0, bytes);
	w->layout = layout;
	w->n_ch = n_ch;
	w->k = k;
	w->k4 = k4;
	w->bytes = bytes;
	w->src = src;
	for (int64_t ch = 0; ch < n_ch; ch++)
	{
		int8_t	   *blk = w->data + (ch / unit) * k4 * unit * 4 + (ch % unit) * 4;
		int64_t		sum = 0;
		int32_t		z = 0;

		if (n_zp > 0)
		{
			int64_t		zi = n_zp == 1 ? 0 : ch;

			z = u8 ? (int32_t) ((const uint8_t *) zp)[zi] : (int32_t) ((const int8_t *) zp)[zi];
		}
		if (u8)
			z -= 128;
		for (int64_t i = 0; i < k; i++)
		{
			int64_t		off = ch * ch_stride + i * k_stride;
			int32_t		v = u8 ? (int32_t) ((const uint8_t *) src)[off] - 128
				: (int32_t) ((const int8_t *) src)[off];

			blk[(i / 4) * unit * 4 + (i % 4)] = (int8_t) v;
			sum += v;
		}
		w->zp[ch] = z;
		w->sum[ch] = wrap32(sum);
		if (z != 0)
			w->has_zp = true;
	}
	return OX_OK;
}

void
ox_qgemm_weights_free(ox_qgemm_weights *w)
{
	if (!w)
		return;
	ox_aligned_free(w->data);
	free(w->zp);
	free(w->sum);
	memset(w, 0, sizeof(*w));
}

/* ---- epilogue --------------------------------------------------------------- */

/*
 * One output element from an exact (wrapped) int32 sum.  Float math, like
 * onnxruntime's requantization: (float) v is exact below 2^24 and off by a
 * relative 2^-24 beyond, far below the output's rounding step.
 */
typedef struct qg_epi_run
{
	ox_qg_out	kind;
	bool		q_signed;
	bool		relu;
	const float *mult;
	const float *bias;
	float		yzp;
} qg_epi_run;

static void
epi_setup(const ox_qgemm_epi *ep, qg_epi_run *e)
{
	e->kind = ep->kind;
	e->q_signed = ep->q_dtype == OX_INT8;
	e->relu = ep->relu;
	e->mult = ep->mult;
	e->bias = ep->bias;
	e->yzp = (float) ep->y_zp;
}

/*
 * A run of n outputs v[i] (already corrected): of consecutive channels
 * ch0 + i (rows of a VEC product) or all of channel ch0 (a BCAST row).
 * Two copies so that each vectorizes with its own addressing.
 */
#define QG_EPI_BODY(MULT, BIAS) \
	switch (e->kind) \
	{ \
		case OX_QG_OUT_I32: \
			memcpy((int32_t *) y + y_off, v, sizeof(int32_t) * (size_t) n); \
			break; \
		case OX_QG_OUT_F32: \
			{ \
				float	   *restrict yo = (float *) y + y_off; \
				bool		relu = e->relu; \
				for (int64_t i = 0; i < n; i++) \
				{ \
					float		f = (float) v[i] * (MULT) + (BIAS); \
					yo[i] = relu && f < 0.0f ? 0.0f : f; \
				} \
				break; \
			} \
		case OX_QG_OUT_Q8: \
			if (e->q_signed) \
			{ \
				int8_t	   *restrict yo = (int8_t *) y + y_off; \
				for (int64_t i = 0; i < n; i++) \
				{ \
					float		f = nearbyintf((float) v[i] * (MULT)) + yzp; \
					yo[i] = (int8_t) (int32_t) (f < -128.0f ? -128.0f : (f > 127.0f ? 127.0f : f)); \
				} \
			} \
			else \
			{ \
				uint8_t    *restrict yo = (uint8_t *) y + y_off; \
				for (int64_t i = 0; i < n; i++) \
				{ \
					float		f = nearbyintf((float) v[i] * (MULT)) + yzp; \
					yo[i] = (uint8_t) (int32_t) (f < 0.0f ? 0.0f : (f > 255.0f ? 255.0f : f)); \
				} \
			} \
			break; \
	}

QG_INLINE void
epi_store_vec(const qg_epi_run *e, const int32_t *restrict v, int64_t n, int64_t ch0, void *y,
			  int64_t y_off)
{
	const float *restrict mult = e->mult ? e->mult + ch0 : NULL;
	const float *restrict bias = e->bias ? e->bias + ch0 : NULL;
	float		yzp = e->yzp;

	if (e->kind == OX_QG_OUT_F32 && !bias)
	{
		QG_EPI_BODY(mult[i], 0.0f)
	}
	else
	{
		QG_EPI_BODY(mult[i], bias[i])
	}
}

QG_INLINE void
epi_store_one(const qg_epi_run *e, const int32_t *restrict v, int64_t n, int64_t ch, void *y,
			  int64_t y_off)
{
	float		mult = e->mult ? e->mult[ch] : 0.0f;
	float		bias = e->bias ? e->bias[ch] : 0.0f;
	float		yzp = e->yzp;

	QG_EPI_BODY(mult, bias)
}

/*
 * AVX-512: the epilogue straight from the accumulators.  A tile's output
 * rows are ldy elements apart from y; lanes are channels (rows product) or
 * columns (columns product).
 */
typedef struct qg_tile_out
{
	const qg_epi_run *e;
	bool		lanes_are_channels;
	const int32_t *corr;		/* per channel, from the tile's first channel */
	const int32_t *zp;			/* per channel like corr, or NULL */
	const int32_t *osum;		/* operand sums: per row (rows) or per column (cols) */
	const float *mult;			/* per channel like corr */
	const float *bias;			/* per channel like corr, or NULL */
	void	   *y;				/* the tile's first element */
	int64_t		ldy;
	int			nvalid;			/* valid lanes in the tile */
} qg_tile_out;

QG_TARGET_VNNI QG_INLINE void
vnni_out(const qg_tile_out *o, __m512i acc, int r, int v)
{
	__mmask16	m = (__mmask16) (o->nvalid - v * 16 >= 16 ? 0xffff : ((1u << (o->nvalid - v * 16)) - 1));
	const qg_epi_run *e = o->e;
	__m512i		corr,
				val;
	__m512		mult,
				bias;
	int64_t		off = r * o->ldy + v * 16;

	if (o->lanes_are_channels)
	{
		corr = _mm512_maskz_loadu_epi32(m, o->corr + v * 16);
		val = _mm512_add_epi32(acc, corr);
		if (o->zp)
			val = _mm512_sub_epi32(val, _mm512_mullo_epi32(_mm512_maskz_loadu_epi32(m, o->zp + v * 16),
														   _mm512_set1_epi32(o->osum[r])));
		mult = o->mult ? _mm512_maskz_loadu_ps(m, o->mult + v * 16) : _mm512_setzero_ps();
		bias = o->bias ? _mm512_maskz_loadu_ps(m, o->bias + v * 16) : _mm512_setzero_ps();
	}
	else
	{
		val = _mm512_add_epi32(acc, _mm512_set1_epi32(o->corr[r]));
		if (o->zp)
			val = _mm512_sub_epi32(val, _mm512_mullo_epi32(_mm512_set1_epi32(o->zp[r]),
														   _mm512_maskz_loadu_epi32(m, o->osum + v * 16)));
		mult = _mm512_set1_ps(o->mult ? o->mult[r] : 0.0f);
		bias = _mm512_set1_ps(o->bias ? o->bias[r] : 0.0f);
	}
	switch (e->kind)
	{
		case OX_QG_OUT_I32:
			_mm512_mask_storeu_epi32((int32_t *) o->y + off, m, val);
			break;
		case OX_QG_OUT_F32:
			{
				__m512		f = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(val), mult), bias);

				if (e->relu)
					f = _mm512_max_ps(f, _mm512_setzero_ps());
				_mm512_mask_storeu_ps((float *) o->y + off, m, f);
				break;
			}
		case OX_QG_OUT_Q8:
			{
				__m512		f = _mm512_mul_ps(_mm512_cvtepi32_ps(val), mult);
				__m512i		q;

				/* stay inside int32 before converting (rounds to nearest even) */
				f = _mm512_min_ps(_mm512_max_ps(f, _mm512_set1_ps(-1048576.0f)),
								  _mm512_set1_ps(1048576.0f));
				q = _mm512_add_epi32(_mm512_cvtps_epi32(f), _mm512_set1_epi32((int32_t) e->yzp));
				if (e->q_signed)
					_mm512_mask_cvtsepi32_storeu_epi8((int8_t *) o->y + off, m, q);
				else
					_mm512_mask_cvtusepi32_storeu_epi8((uint8_t *) o->y + off, m,
													   _mm512_max_epi32(q, _mm512_setzero_si512()));
				break;
			}
	}
}

/* ---- micro-kernels: rows of A (unsigned, broadcast) x VEC panel ------------ */

/*
 * c[r * 64 + l] = sum over the reduction of a row r quad times the panel's
 * lane l quad, for r < mr rows and lanes < 16 * nv.
 */
static void
rows_tile_portable(int mr, int nv, int64_t k4, const uint8_t *a, int64_t lda, const int8_t *b,
				   int32_t *c, const qg_tile_out *o)
{
	(void) o;
	for (int r = 0; r < mr; r++)
		for (int l = 0; l < nv * 16; l++)
		{
			int32_t		acc = 0;

			for (int64_t p = 0; p < k4; p++)
				for (int t = 0; t < 4; t++)
					acc += (int32_t) a[r * lda + 4 * p + t] * (int32_t) b[p * 256 + l * 4 + t];
			c[r * OX_QG_VEC_NR + l] = acc;
		}
}

QG_TARGET_VNNI QG_INLINE void
rows_tile_vnni(const int MR, const int NV, int64_t k4, const uint8_t *a, int64_t lda,
			   const int8_t *b, const qg_tile_out *o)
{
	__m512i		acc[OX_QG_ROWS_MR][4];

#pragma GCC unroll 6
	for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
		for (int v = 0; v < NV; v++)
			acc[r][v] = _mm512_setzero_si512();
	for (int64_t p = 0; p < k4; p++)
	{
		__m512i		bv[4];
		const int8_t *bp = b + p * 256;

#pragma GCC unroll 4
		for (int v = 0; v < NV; v++)
			bv[v] = _mm512_load_si512((const void *) (bp + v * 64));
#pragma GCC unroll 6
		for (int r = 0; r < MR; r++)
		{
			int32_t		q;
			__m512i		av;

			memcpy(&q, a + r * lda + 4 * p, 4);
			av = _mm512_set1_epi32(q);
#pragma GCC unroll 4
			for (int v = 0; v < NV; v++)
				acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], av, bv[v]);
		}
	}
#pragma GCC unroll 6
	for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
		for (int v = 0; v < NV; v++)
			vnni_out(o, acc[r][v], r, v);
}

/*
 * Rows gathered instead of stored (convolutions without im2col): row m's
 * reduction is, tap after tap, quads of bytes at base + row_off[m] +
 * tap_off[t] + 4 * g for g < qpt.
 */
typedef struct qg_gather
{
	const uint8_t *base;
	const int64_t *row_off;
	const int64_t *tap_off;
	int			n_taps;
	int64_t		qpt;			/* quads per tap */
} qg_gather;

QG_TARGET_VNNI QG_INLINE void
rows_gtile_vnni(const int MR, const int NV, const qg_gather *ga, const int64_t *roff,
				const int8_t *b, const qg_tile_out *o)
{
	__m512i		acc[OX_QG_ROWS_MR][4];
	const uint8_t *rp[OX_QG_ROWS_MR];

#pragma GCC unroll 6
	for (int r = 0; r < MR; r++)
	{
		rp[r] = ga->base + roff[r];
#pragma GCC unroll 4
		for (int v = 0; v < NV; v++)
			acc[r][v] = _mm512_setzero_si512();
	}
	for (int t = 0; t < ga->n_taps; t++)
	{
		const uint8_t *ap[OX_QG_ROWS_MR];
		int64_t		toff = ga->tap_off[t];

#pragma GCC unroll 6
		for (int r = 0; r < MR; r++)
			ap[r] = rp[r] + toff;
		for (int64_t g = 0; g < ga->qpt; g++, b += 256)
		{
			__m512i		bv[4];

#pragma GCC unroll 4
			for (int v = 0; v < NV; v++)
				bv[v] = _mm512_load_si512((const void *) (b + v * 64));
#pragma GCC unroll 6
			for (int r = 0; r < MR; r++)
			{
				int32_t		q;
				__m512i		av;

				memcpy(&q, ap[r] + 4 * g, 4);
				av = _mm512_set1_epi32(q);
#pragma GCC unroll 4
				for (int v = 0; v < NV; v++)
					acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], av, bv[v]);
			}
		}
	}
#pragma GCC unroll 6
	for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
		for (int v = 0; v < NV; v++)
			vnni_out(o, acc[r][v], r, v);
}

#define QG_GROWS_CASE(MR, NV) \
	case (MR) * 8 + (NV): rows_gtile_vnni(MR, NV, ga, roff, b, o); break;
#define QG_GROWS_CASES(MR) \
	QG_GROWS_CASE(MR, 1) QG_GROWS_CASE(MR, 2) QG_GROWS_CASE(MR, 3) QG_GROWS_CASE(MR, 4)

QG_TARGET_VNNI static void
rows_gkernel_vnni(int mr, int nv, const qg_gather *ga, const int64_t *roff, const int8_t *b,
				  const qg_tile_out *o)
{
	switch (mr * 8 + nv)
	{
			QG_GROWS_CASES(1)
			QG_GROWS_CASES(2)
			QG_GROWS_CASES(3)
			QG_GROWS_CASES(4)
			QG_GROWS_CASES(5)
			QG_GROWS_CASES(6)
		default:
			break;
	}
}

#define QG_ROWS_CASE(MR, NV) \
	case (MR) * 8 + (NV): rows_tile_vnni(MR, NV, k4, a, lda, b, o); break;
#define QG_ROWS_CASES(MR) \
	QG_ROWS_CASE(MR, 1) QG_ROWS_CASE(MR, 2) QG_ROWS_CASE(MR, 3) QG_ROWS_CASE(MR, 4)

QG_TARGET_VNNI static void
rows_kernel_vnni(int mr, int nv, int64_t k4, const uint8_t *a, int64_t lda, const int8_t *b,
				 int32_t *c, const qg_tile_out *o)
{
	(void) c;
	switch (mr * 8 + nv)
	{
			QG_ROWS_CASES(1)
			QG_ROWS_CASES(2)
			QG_ROWS_CASES(3)
			QG_ROWS_CASES(4)
			QG_ROWS_CASES(5)
			QG_ROWS_CASES(6)
		default:
			break;
	}
}

/*
 * AVX2: a quad of unsigned bytes splits into its even and odd bytes as
 * 16-bit lanes (and, shift right), a quad of signed bytes likewise (shift
 * left then arithmetic right, arithmetic right); two vpmaddwd then give the
 * four products' sum exactly.
 */
QG_TARGET_AVX2 QG_INLINE void
qg_split_u8(__m256i x, __m256i *lo, __m256i *hi)
{
	*lo = _mm256_and_si256(x, _mm256_set1_epi16(0x00ff));
	*hi = _mm256_srli_epi16(x, 8);
}

QG_TARGET_AVX2 QG_INLINE void
qg_split_s8(__m256i x, __m256i *lo, __m256i *hi)
{
	*lo = _mm256_srai_epi16(_mm256_slli_epi16(x, 8), 8);
	*hi = _mm256_srai_epi16(x, 8);
}

QG_TARGET_AVX2 QG_INLINE __m256i
qg_dot4_avx2(__m256i acc, __m256i ul, __m256i uh, __m256i sl, __m256i sh)
{
	return _mm256_add_epi32(acc, _mm256_add_epi32(_mm256_madd_epi16(ul, sl),
												  _mm256_madd_epi16(uh, sh)));
}

QG_TARGET_AVX2 static void
rows_kernel_avx2(int mr, int nv, int64_t k4, const uint8_t *a, int64_t lda, const int8_t *b,
				 int32_t *c, const qg_tile_out *o)
{
	(void) o;
	for (int v = 0; v < nv; v++)
		for (int r0 = 0; r0 < mr; r0 += 3)
		{
			int			rr = mr - r0 < 3 ? mr - r0 : 3;
			__m256i		acc[3][2];

#pragma GCC unroll 3
			for (int r = 0; r < 3; r++)
				acc[r][0] = acc[r][1] = _mm256_setzero_si256();
			for (int64_t p = 0; p < k4; p++)
			{
				const int8_t *bp = b + p * 256 + v * 64;
				__m256i		b0l,
							b0h,
							b1l,
							b1h;

				qg_split_s8(_mm256_load_si256((const __m256i *) bp), &b0l, &b0h);
				qg_split_s8(_mm256_load_si256((const __m256i *) (bp + 32)), &b1l, &b1h);
#pragma GCC unroll 3
				for (int r = 0; r < 3; r++)
				{
					int32_t		q;
					__m256i		al,
								ah;

					if (r >= rr)
						break;
					memcpy(&q, a + (r0 + r) * lda + 4 * p, 4);
					qg_split_u8(_mm256_set1_epi32(q), &al, &ah);
					acc[r][0] = qg_dot4_avx2(acc[r][0], al, ah, b0l, b0h);
					acc[r][1] = qg_dot4_avx2(acc[r][1], al, ah, b1l, b1h);
				}
			}
			for (int r = 0; r < rr; r++)
			{
				_mm256_storeu_si256((__m256i *) (c + (r0 + r) * OX_QG_VEC_NR + v * 16), acc[r][0]);
				_mm256_storeu_si256((__m256i *) (c + (r0 + r) * OX_QG_VEC_NR + v * 16 + 8), acc[r][1]);
			}
		}
}

/* ---- micro-kernels: BCAST block (signed, broadcast) x packed columns ------ */

static void
cols_tile_portable(int mr, int nv, int64_t k4, const int8_t *w, const uint8_t *x, int32_t *c,
				   const qg_tile_out *o)
{
	(void) o;
	for (int r = 0; r < mr; r++)
		for (int l = 0; l < nv * 16; l++)
		{
			int32_t		acc = 0;

			for (int64_t p = 0; p < k4; p++)
				for (int t = 0; t < 4; t++)
					acc += (int32_t) w[p * OX_QG_BC_MR * 4 + r * 4 + t] *
						(int32_t) x[p * OX_QG_COLS_NR * 4 + l * 4 + t];
			c[r * OX_QG_COLS_NR + l] = acc;
		}
}

QG_TARGET_VNNI QG_INLINE void
cols_tile_vnni(const int MR, const int NV, int64_t k4, const int8_t *w, const uint8_t *x,
			   const qg_tile_out *o)
{
	__m512i		acc[OX_QG_BC_MR][3];

#pragma GCC unroll 8
	for (int r = 0; r < MR; r++)
#pragma GCC unroll 3
		for (int v = 0; v < NV; v++)
			acc[r][v] = _mm512_setzero_si512();
	for (int64_t p = 0; p < k4; p++)
	{
		__m512i		xv[3];
		const int8_t *wp = w + p * OX_QG_BC_MR * 4;

#pragma GCC unroll 3
		for (int v = 0; v < NV; v++)
			xv[v] = _mm512_load_si512((const void *) (x + p * OX_QG_COLS_NR * 4 + v * 64));
#pragma GCC unroll 8
		for (int r = 0; r < MR; r++)
		{
			int32_t		q;
			__m512i		wb;

			memcpy(&q, wp + r * 4, 4);
			wb = _mm512_set1_epi32(q);
#pragma GCC unroll 3
			for (int v = 0; v < NV; v++)
				acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], xv[v], wb);
		}
	}
#pragma GCC unroll 8
	for (int r = 0; r < MR; r++)
#pragma GCC unroll 3
		for (int v = 0; v < NV; v++)
			vnni_out(o, acc[r][v], r, v);
}

#define QG_COLS_CASE(MR, NV) \
	case (MR) * 4 + (NV): cols_tile_vnni(MR, NV, k4, w, x, o); break;
#define QG_COLS_CASES(MR) QG_COLS_CASE(MR, 1) QG_COLS_CASE(MR, 2) QG_COLS_CASE(MR, 3)

QG_TARGET_VNNI static void
cols_kernel_vnni(int mr, int nv, int64_t k4, const int8_t *w, const uint8_t *x, int32_t *c,
				 const qg_tile_out *o)
{
	(void) c;
	switch (mr * 4 + nv)
	{
			QG_COLS_CASES(1)
			QG_COLS_CASES(2)
			QG_COLS_CASES(3)
			QG_COLS_CASES(4)
			QG_COLS_CASES(5)
			QG_COLS_CASES(6)
			QG_COLS_CASES(7)
			QG_COLS_CASES(8)
		default:
			break;
	}
}

QG_TARGET_AVX2 static void
cols_kernel_avx2(int mr, int nv, int64_t k4, const int8_t *w, const uint8_t *x, int32_t *c,
				 const qg_tile_out *o)
{
	(void) o;
	/* 16 columns (two vectors of 8) by up to 3 channels at a time */
	for (int v = 0; v < nv; v++)
		for (int r0 = 0; r0 < mr; r0 += 3)
		{
			int			rr = mr - r0 < 3 ? mr - r0 : 3;
			__m256i		acc[3][2];

#pragma GCC unroll 3
			for (int r = 0; r < 3; r++)
				acc[r][0] = acc[r][1] = _mm256_setzero_si256();
			for (int64_t p = 0; p < k4; p++)
			{
				const uint8_t *xp = x + p * OX_QG_COLS_NR * 4 + v * 64;
				__m256i		x0l,
							x0h,
							x1l,
							x1h;

				qg_split_u8(_mm256_load_si256((const __m256i *) xp), &x0l, &x0h);
				qg_split_u8(_mm256_load_si256((const __m256i *) (xp + 32)), &x1l, &x1h);
#pragma GCC unroll 3
				for (int r = 0; r < 3; r++)
				{
					int32_t		q;
					__m256i		wl,
								wh;

					if (r >= rr)
						break;
					memcpy(&q, w + p * OX_QG_BC_MR * 4 + (r0 + r) * 4, 4);
					qg_split_s8(_mm256_set1_epi32(q), &wl, &wh);
					acc[r][0] = qg_dot4_avx2(acc[r][0], x0l, x0h, wl, wh);
					acc[r][1] = qg_dot4_avx2(acc[r][1], x1l, x1h, wl, wh);
				}
			}
			for (int r = 0; r < rr; r++)
			{
				_mm256_storeu_si256((__m256i *) (c + (r0 + r) * OX_QG_COLS_NR + v * 16), acc[r][0]);
				_mm256_storeu_si256((__m256i *) (c + (r0 + r) * OX_QG_COLS_NR + v * 16 + 8), acc[r][1]);
			}
		}
}

/* ---- rows driver ------------------------------------------------------------ */

#define QG_ROWS_MC 48			/* rows per task (a multiple of OX_QG_ROWS_MR) */

typedef struct rows_job
{
	const qg_gather *ga;		/* rows gathered, or NULL for a */
	const uint8_t *a;
	int64_t		lda;
	int64_t		M;
	const ox_qgemm_weights *w;
	const int32_t *corr;		/* per channel */
	const int32_t *asum;		/* per row, when w->has_zp */
	qg_epi_run	e;
	void	   *C;
	int64_t		ldc;
	size_t		esize;			/* bytes per output element */
	int64_t		n_mchunks;
	bool	   *failed;			/* set by a task that ran out of memory */
} rows_job;

typedef void (*rows_kernel_fn) (int mr, int nv, int64_t k4, const uint8_t *a, int64_t lda,
								const int8_t *b, int32_t *c, const qg_tile_out *o);
typedef void (*rows_gkernel_fn) (int mr, int nv, const qg_gather *ga, const int64_t *roff,
								 const int8_t *b, const qg_tile_out *o);

QG_INLINE void
rows_task(const rows_job *j, rows_kernel_fn kern, rows_gkernel_fn gkern, bool fused, int64_t begin,
		  int64_t end)
{
	const ox_qgemm_weights *w = j->w;
	int32_t		tile[OX_QG_ROWS_MR * OX_QG_VEC_NR] __attribute__((aligned(64)));
	int32_t		row[OX_QG_VEC_NR];
	uint8_t    *arows = NULL;

	if (j->ga && !fused)
	{
		/* thread-local, kept between calls like sgemm's pack buffers */
		static __thread uint8_t *buf;
		static __thread size_t cap;
		size_t		need = (size_t) (OX_QG_ROWS_MR * w->k4 * 4);

		if (need > cap)
		{
			free(buf);
			buf = malloc(need);
			cap = buf ? need : 0;
		}
		if (!buf)
		{
			__atomic_store_n(j->failed, true, __ATOMIC_RELAXED);
			return;
		}
		arows = buf;
	}

	for (int64_t t = begin; t < end; t++)
	{
		int64_t		panel = t / j->n_mchunks;
		int64_t		m_begin = (t % j->n_mchunks) * QG_ROWS_MC;
		int64_t		m_end = m_begin + QG_ROWS_MC < j->M ? m_begin + QG_ROWS_MC : j->M;
		int64_t		n0 = panel * OX_QG_VEC_NR;
		int			ncols = (int) (w->n_ch - n0 < OX_QG_VEC_NR ? w->n_ch - n0 : OX_QG_VEC_NR);
		int			nv = (ncols + 15) / 16;
		const int8_t *b = w->data + panel * w->k4 * OX_QG_VEC_NR * 4;

		for (int64_t m = m_begin; m < m_end; m += OX_QG_ROWS_MR)
		{
			int			mr = (int) (m_end - m < OX_QG_ROWS_MR ? m_end - m : OX_QG_ROWS_MR);

			/* the gathered path has no A: its rows come from ga */
			const uint8_t *a = j->a ? j->a + m * j->lda : NULL;
			int64_t		lda = j->lda;

			if (j->ga && !fused)
			{
				/* other ISAs: gather the tile's rows into a buffer for the usual kernel */
				const qg_gather *ga = j->ga;

				for (int r = 0; r < mr; r++)
					for (int tp = 0; tp < ga->n_taps; tp++)
						memcpy(arows + (r * ga->n_taps + tp) * ga->qpt * 4,
							   ga->base + ga->row_off[m + r] + ga->tap_off[tp], (size_t) (ga->qpt * 4));
				a = arows;
				lda = w->k4 * 4;
			}
			if (fused)
			{
				qg_tile_out o;

				o.e = &j->e;
				o.lanes_are_channels = true;
				o.corr = j->corr + n0;
				o.zp = w->has_zp ? w->zp + n0 : NULL;
				o.osum = j->asum ? j->asum + m : NULL;
				o.mult = j->e.mult ? j->e.mult + n0 : NULL;
				o.bias = j->e.bias ? j->e.bias + n0 : NULL;
				o.y = (char *) j->C + (m * j->ldc + n0) * j->esize;
				o.ldy = j->ldc;
				o.nvalid = ncols;
				if (j->ga)
					gkern(mr, nv, j->ga, j->ga->row_off + m, b, &o);
				else
					kern(mr, nv, w->k4, a, lda, b, NULL, &o);
				continue;
			}
			kern(mr, nv, w->k4, a, lda, b, tile, NULL);
			for (int r = 0; r < mr; r++)
			{
				const int32_t *tr = tile + r * OX_QG_VEC_NR;

				if (w->has_zp)
				{
					int32_t		as = j->asum[m + r];

					for (int l = 0; l < ncols; l++)
						row[l] = (int32_t) ((uint32_t) tr[l] + (uint32_t) j->corr[n0 + l] -
											(uint32_t) w->zp[n0 + l] * (uint32_t) as);
				}
				else
					for (int l = 0; l < ncols; l++)
						row[l] = (int32_t) ((uint32_t) tr[l] + (uint32_t) j->corr[n0 + l]);
				epi_store_vec(&j->e, row, ncols, n0, j->C, (m + r) * j->ldc + n0);
			}
		}
	}
}

static void
rows_task_portable(void *arg, int64_t begin, int64_t end)
{
	rows_task(arg, rows_tile_portable, NULL, false, begin, end);
}

QG_TARGET_AVX2 static void
rows_task_avx2(void *arg, int64_t begin, int64_t end)
{
	rows_task(arg, rows_kernel_avx2, NULL, false, begin, end);
}

QG_TARGET_VNNI static void
rows_task_vnni(void *arg, int64_t begin, int64_t end)
{
	rows_task(arg, rows_kernel_vnni, rows_gkernel_vnni, true, begin, end);
}

/* per-channel constant of the zero-point expansion, plus an int32 bias */
static void
channel_corr(const ox_qgemm_weights *w, int32_t azp, const int32_t *ibias, int32_t *corr)
{
	for (int64_t ch = 0; ch < w->n_ch; ch++)
		corr[ch] = wrap32((ibias ? (int64_t) ibias[ch] : 0) - (int64_t) azp * w->sum[ch] +
						  w->k * (int64_t) azp * w->zp[ch]);
}

/* the product with prepared (unsigned, padded) rows or gathered ones */
static ox_code
rows_run(ox_kernel_ctx *ctx, int64_t M, const uint8_t *A, int64_t lda, const qg_gather *ga,
		 int32_t a_zp, const int32_t *asum, const ox_qgemm_weights *w, const ox_qgemm_epi *ep,
		 void *C, int64_t ldc, ox_status *st)
{
	rows_job	j;
	int32_t    *corr = malloc(sizeof(int32_t) * (size_t) w->n_ch);
	int64_t		n_panels = (w->n_ch + OX_QG_VEC_NR - 1) / OX_QG_VEC_NR;
	qg_isa		isa = ox_qg_pick();
	bool		failed = false;

	if (!corr)
		return ox_fail(st, OX_OUT_OF_MEMORY, "int8 GEMM: out of memory");
	channel_corr(w, a_zp, ep->ibias, corr);
	memset(&j, 0, sizeof(j));
	j.ga = ga;
	j.a = A;
	j.lda = lda;
	j.M = M;
	j.w = w;
	j.corr = corr;
	j.asum = asum;
	epi_setup(ep, &j.e);
	j.C = C;
	j.ldc = ldc;
	j.esize = ep->kind == OX_QG_OUT_Q8 ? 1 : 4;
	j.n_mchunks = (M + QG_ROWS_MC - 1) / QG_ROWS_MC;
	j.failed = &failed;
	ox_parallel_for(ctx, n_panels * j.n_mchunks, 1,
					isa == QG_VNNI ? rows_task_vnni : isa == QG_AVX2 ? rows_task_avx2 : rows_task_portable,
					&j);
	free(corr);
	if (failed)
		return ox_fail(st, OX_OUT_OF_MEMORY, "int8 GEMM: out of memory for gathered rows");
	return OX_OK;
}

ox_code
ox_qgemm_rows(ox_kernel_ctx *ctx, int64_t M, const void *A, ox_dtype adt, int64_t lda,
			  int32_t a_zp, const ox_qgemm_weights *w, const ox_qgemm_epi *ep,
			  void *C, int64_t ldc, ox_status *st)
{
	uint8_t    *apack = NULL;
	int32_t    *asum = NULL;
	int64_t		kp = w->k4 * 4;
	bool		flip = adt == OX_INT8;
	ox_code		rc;

	if (w->layout != OX_QG_VEC)
		return ox_fail(st, OX_INTERNAL, "int8 GEMM: weights are not packed for rows");
	if (M <= 0 || w->n_ch <= 0)
		return OX_OK;
	if (flip)
		a_zp += 128;
	/* rows must be unsigned and padded to whole quads */
	if (flip || w->k % 4 != 0)
	{
		apack = ox_workspace_aligned((size_t) (M * kp), st, "int8 GEMM");
		if (!apack)
			return ox_fail(st, OX_OUT_OF_MEMORY, "int8 GEMM: out of memory for %lld x %lld activations",
						   (long long) M, (long long) kp);
		for (int64_t m = 0; m < M; m++)
		{
			const uint8_t *src = (const uint8_t *) A + m * lda;
			uint8_t    *dst = apack + m * kp;

			if (flip)
				for (int64_t i = 0; i < w->k; i++)
					dst[i] = src[i] ^ 0x80;
			else
				memcpy(dst, src, (size_t) w->k);
			memset(dst + w->k, 0, (size_t) (kp - w->k));
		}
		A = apack;
		lda = kp;
	}
	if (w->has_zp)
	{
		asum = ox_workspace_alloc(sizeof(int32_t) * (size_t) M, st, "int8 GEMM");
		if (!asum)
		{
			ox_aligned_free(apack);
			return ox_fail(st, OX_OUT_OF_MEMORY, "int8 GEMM: out of memory");
		}
		for (int64_t m = 0; m < M; m++)
		{
			const uint8_t *r = (const uint8_t *) A + m * lda;
			int64_t		s = 0;

			for (int64_t i = 0; i < w->k; i++)
				s += r[i];
			asum[m] = wrap32(s);
		}
	}
	rc = rows_run(ctx, M, A, lda, NULL, a_zp, asum, w, ep, C, ldc, st);
	free(asum);
	ox_aligned_free(apack);
	return rc;
}

ox_code
ox_qgemm_rows_gather(ox_kernel_ctx *ctx, int64_t M, const uint8_t *base, const int64_t *row_off,
					 const int64_t *tap_off, int n_taps, int64_t quads_per_tap, int32_t a_zp,
					 const ox_qgemm_weights *w, const ox_qgemm_epi *ep, void *C, int64_t ldc,
					 ox_status *st)
{
	qg_gather	ga;
	int32_t    *asum = NULL;
	ox_code		rc;

	if (w->layout != OX_QG_VEC || w->k4 != n_taps * quads_per_tap)
		return ox_fail(st, OX_INTERNAL, "int8 GEMM: gathered rows do not match the weights");
	if (M <= 0 || w->n_ch <= 0)
		return OX_OK;
	ga.base = base;
	ga.row_off = row_off;
	ga.tap_off = tap_off;
	ga.n_taps = n_taps;
	ga.qpt = quads_per_tap;
	if (w->has_zp)
	{
		asum = ox_workspace_alloc(sizeof(int32_t) * (size_t) M, st, "int8 GEMM");
		if (!asum)
			return ox_fail(st, OX_OUT_OF_MEMORY, "int8 GEMM: out of memory");
		for (int64_t m = 0; m < M; m++)
		{
			int64_t		s = 0;

			for (int t = 0; t < n_taps; t++)
			{
				const uint8_t *r = base + row_off[m] + tap_off[t];

				for (int64_t i = 0; i < quads_per_tap * 4; i++)
					s += r[i];
			}
			asum[m] = wrap32(s);
		}
	}
	rc = rows_run(ctx, M, NULL, 0, &ga, a_zp, asum, w, ep, C, ldc, st);
	free(asum);
	return rc;
}


/* ---- columns driver ----------------------------------------------------------- */

typedef struct cols_job
{
	const ox_qgemm_weights *w;
	const ox_qgemm_cols *x;
	const int32_t *corr;
	qg_epi_run	e;
	void	   *Y;
	int64_t		ldy;
	size_t		esize;
	int64_t		n_panels;
	int64_t		blocks_per_task;
	int64_t		panels_per_task;
	int64_t		n_pchunks;
	bool		blocks_outer;
} cols_job;

typedef void (*cols_kernel_fn) (int mr, int nv, int64_t k4, const int8_t *w, const uint8_t *x,
								int32_t *c, const qg_tile_out *o);

/* one tile: channel block b times column panel `panel` */
QG_INLINE void
cols_tile_do(const cols_job *j, cols_kernel_fn kern, bool fused, int64_t panel, int64_t b,
			 int32_t *tile, int32_t *row)
{
	const ox_qgemm_weights *w = j->w;
	const ox_qgemm_cols *x = j->x;
	int64_t		j0 = panel * OX_QG_COLS_NR;
	int			nc = (int) (x->n - j0 < OX_QG_COLS_NR ? x->n - j0 : OX_QG_COLS_NR);
	int			nv = (nc + 15) / 16;
	const uint8_t *xp = x->data + panel * x->k4 * OX_QG_COLS_NR * 4;
	int64_t		ch0 = b * OX_QG_BC_MR;
	int			mr = (int) (w->n_ch - ch0 < OX_QG_BC_MR ? w->n_ch - ch0 : OX_QG_BC_MR);

	if (fused)
	{
		qg_tile_out o;

		o.e = &j->e;
		o.lanes_are_channels = false;
		o.corr = j->corr + ch0;
		o.zp = w->has_zp ? w->zp + ch0 : NULL;
		o.osum = w->has_zp ? x->sum + j0 : NULL;
		o.mult = j->e.mult ? j->e.mult + ch0 : NULL;
		o.bias = j->e.bias ? j->e.bias + ch0 : NULL;
		o.y = (char *) j->Y + (ch0 * j->ldy + j0) * j->esize;
		o.ldy = j->ldy;
		o.nvalid = nc;
		kern(mr, nv, w->k4, w->data + b * w->k4 * OX_QG_BC_MR * 4, xp, NULL, &o);
		return;
	}
	kern(mr, nv, w->k4, w->data + b * w->k4 * OX_QG_BC_MR * 4, xp, tile, NULL);
	for (int r = 0; r < mr; r++)
	{
		const int32_t *tr = tile + r * OX_QG_COLS_NR;
		uint32_t	cr = (uint32_t) j->corr[ch0 + r];

		if (w->has_zp)
		{
			uint32_t	z = (uint32_t) w->zp[ch0 + r];

			for (int l = 0; l < nc; l++)
				row[l] = (int32_t) ((uint32_t) tr[l] + cr - z * (uint32_t) x->sum[j0 + l]);
		}
		else
			for (int l = 0; l < nc; l++)
				row[l] = (int32_t) ((uint32_t) tr[l] + cr);
		epi_store_one(&j->e, row, nc, ch0 + r, j->Y, (ch0 + r) * j->ldy + j0);
	}
}

/*
 * Tasks are rectangles of channel blocks by column panels.  The operand
 * with more bytes is walked once in the outer loop, the other one (reused
 * from cache) in the inner loop.
 */
QG_INLINE void
cols_task(const cols_job *j, cols_kernel_fn kern, bool fused, int64_t begin, int64_t end)
{
	int64_t		n_blocks = (j->w->n_ch + OX_QG_BC_MR - 1) / OX_QG_BC_MR;
	int32_t		tile[OX_QG_BC_MR * OX_QG_COLS_NR] __attribute__((aligned(64)));
	int32_t		row[OX_QG_COLS_NR];

	for (int64_t t = begin; t < end; t++)
	{
		int64_t		b0 = (t / j->n_pchunks) * j->blocks_per_task;
		int64_t		b1 = b0 + j->blocks_per_task < n_blocks ? b0 + j->blocks_per_task : n_blocks;
		int64_t		p0 = (t % j->n_pchunks) * j->panels_per_task;
		int64_t		p1 = p0 + j->panels_per_task < j->n_panels ? p0 + j->panels_per_task : j->n_panels;

		if (j->blocks_outer)
			for (int64_t b = b0; b < b1; b++)
				for (int64_t p = p0; p < p1; p++)
					cols_tile_do(j, kern, fused, p, b, tile, row);
		else
			for (int64_t p = p0; p < p1; p++)
				for (int64_t b = b0; b < b1; b++)
					cols_tile_do(j, kern, fused, p, b, tile, row);
	}
}

static void
cols_task_portable(void *arg, int64_t begin, int64_t end)
{
	cols_task(arg, cols_tile_portable, false, begin, end);
}

QG_TARGET_AVX2 static void
cols_task_avx2(void *arg, int64_t begin, int64_t end)
{
	cols_task(arg, cols_kernel_avx2, false, begin, end);
}

QG_TARGET_VNNI static void
cols_task_vnni(void *arg, int64_t begin, int64_t end)
{
	cols_task(arg, cols_kernel_vnni, true, begin, end);
}

ox_code
ox_qgemm_cols_run(ox_kernel_ctx *ctx, const ox_qgemm_weights *w, const ox_qgemm_cols *x,
				  const ox_qgemm_epi *ep, void *Y, int64_t ldy, ox_status *st)
{
	cols_job	j;
	int32_t    *corr;
	int64_t		n_blocks = (w->n_ch + OX_QG_BC_MR - 1) / OX_QG_BC_MR;
	int			threads = ctx ? ctx->nthreads : 1;
	qg_isa		isa = ox_qg_pick();

	if (w->layout != OX_QG_BCAST || w->k != x->k)
		return ox_fail(st, OX_INTERNAL, "int8 GEMM: operands do not match");
	if (x->n <= 0 || w->n_ch <= 0)
		return OX_OK;
	if (w->has_zp && !x->sum)
		return ox_fail(st, OX_INTERNAL, "int8 GEMM: column sums are missing");
	corr = malloc(sizeof(int32_t) * (size_t) w->n_ch);
	if (!corr)
		return ox_fail(st, OX_OUT_OF_MEMORY, "int8 GEMM: out of memory");
	channel_corr(w, x->zp, ep->ibias, corr);

	memset(&j, 0, sizeof(j));
	j.w = w;
	j.x = x;
	j.corr = corr;
	epi_setup(ep, &j.e);
	j.Y = Y;
	j.ldy = ldy;
	j.esize = ep->kind == OX_QG_OUT_Q8 ? 1 : 4;
	j.n_panels = (x->n + OX_QG_COLS_NR - 1) / OX_QG_COLS_NR;
	/* late layers have few columns and many channels: weights outside */
	j.blocks_outer = x->n < w->n_ch;
	j.blocks_per_task = n_blocks;
	j.panels_per_task = j.n_panels;
	if (threads > 1)
	{
		/* split the larger dimension, and the other one too when it is not enough */
		if (j.n_panels >= threads * 4)
			j.panels_per_task = 1;
		else
		{
			int64_t		want = (threads * 4 + j.n_panels - 1) / j.n_panels;

			j.panels_per_task = 1;
			j.blocks_per_task = (n_blocks + want - 1) / want;
		}
	}
	j.n_pchunks = (j.n_panels + j.panels_per_task - 1) / j.panels_per_task;
	ox_parallel_for(ctx, j.n_pchunks * ((n_blocks + j.blocks_per_task - 1) / j.blocks_per_task), 1,
					isa == QG_VNNI ? cols_task_vnni : isa == QG_AVX2 ? cols_task_avx2 : cols_task_portable,
					&j);
	free(corr);
	return OX_OK;
}
