/*
 * tensor_transpose.c
 *	  The strided-copy engine and the ops that are nothing but a strided
 *	  view of their input: Transpose, DepthToSpace, SpaceToDepth, Expand,
 *	  Tile and Slice.
 *
 * Every one of them describes its output as "element i of the output is
 * src[offset + sum(i_k * stride_k)]" and hands that to oxt_strided_copy,
 * which merges dimensions that are contiguous in the source, copies whole
 * rows with memcpy when the innermost stride is 1, fills when it is 0, and
 * takes a cache-blocked 2-D transpose when the last two output dims are
 * swapped in the source (plain 2-D transposes and NCHW <-> NHWC).
 */
#include "kernels/cpu/tensor_ops.h"

#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* ---------------------------------------------------------------------
 * the strided-copy engine
 * --------------------------------------------------------------------- */

typedef struct strided_job
{
	ox_kernel_ctx *ctx;
	char	   *dst;
	const char *src;
	size_t		es;
	bool		is_string;
	int			rank;			/* after coalescing, >= 1 */
	int64_t		dims[OXT_MAX_VIEW_RANK];
	int64_t		strides[OXT_MAX_VIEW_RANK];
	int64_t		offset;
	ox_code		rc;				/* string copies only (run serially) */
} strided_job;

/* copy n elements with source stride s (elements) for a given element size */
#define STRIDED_ROW(T) \
	do { \
		T		   *d_ = (T *) d; \
		const T    *s_ = (const T *) s; \
		for (int64_t i_ = 0; i_ < n; i_++) \
			d_[i_] = s_[i_ * stride]; \
	} while (0)

static void
copy_row(strided_job *job, char *d, const char *s, int64_t n, int64_t stride)
{
	size_t		es = job->es;

	if (job->is_string)
	{
		const ox_string *ss = (const ox_string *) s;
		ox_string  *dd = (ox_string *) d;

		for (int64_t i = 0; i < n && job->rc == OX_OK; i++)
			job->rc = oxt_string_set(job->ctx, &dd[i], ss[i * stride].data, ss[i * stride].len);
		return;
	}
	if (stride == 1)
	{
		memcpy(d, s, (size_t) n * es);
		return;
	}
	switch (es)
	{
		case 1:
			if (stride == 0)
				memset(d, *(const uint8_t *) s, (size_t) n);
			else
				STRIDED_ROW(uint8_t);
			break;
		case 2:
			STRIDED_ROW(uint16_t);
			break;
		case 4:
			STRIDED_ROW(uint32_t);
			break;
		case 8:
			STRIDED_ROW(uint64_t);
			break;
		default:
			for (int64_t i = 0; i < n; i++)
				memcpy(d + (size_t) i * es, s + (i * stride) * (int64_t) es, es);
			break;
	}
}

/* rows [begin, end) of the view, a row being the innermost dimension */
static void
strided_rows(void *arg, int64_t begin, int64_t end)
{
	strided_job *job = arg;
	int			r = job->rank;
	int64_t		len = job->dims[r - 1];
	int64_t		idx[OXT_MAX_VIEW_RANK];
	int64_t		off = job->offset;
	int64_t		rem = begin;

	/* position the odometer on row "begin" */
	for (int k = r - 2; k >= 0; k--)
	{
		idx[k] = rem % job->dims[k];
		rem /= job->dims[k];
		off += idx[k] * job->strides[k];
	}
	/*
	 * Short contiguous rows (the 64-byte head rows of [seq, heads, d] ->
	 * [heads, seq, d], Slices of the last axis): a run of rows along the
	 * next axis in a tight loop, the odometer and the poll once per run.
	 * Row by row they cost three times the copy.
	 */
	if (r >= 2 && job->strides[r - 1] == 1 && !job->is_string && len * (int64_t) job->es <= 256)
	{
		size_t		nb = (size_t) len * job->es;
		int64_t		sstep = job->strides[r - 2] * (int64_t) job->es;

		for (int64_t row = begin; row < end;)
		{
			int64_t		run = job->dims[r - 2] - idx[r - 2];
			char	   *d = job->dst + (size_t) (row * len) * job->es;
			const char *s = job->src + off * (int64_t) job->es;

			if (run > end - row)
				run = end - row;
			/*
			 * Rows of 64 and 32 bytes (16 and 8 floats: attention heads)
			 * copied inline, not by a call per row: [64, 512, 16] ->
			 * [512, 64, 16] 0.144 -> 0.114 ms (interleaved A/B,
			 * bench/ab.py transpose:64x512x16:0,2,1,3).
			 */
			if (nb == 64)
				for (int64_t i = 0; i < run; i++, d += 64, s += sstep)
					memcpy(d, s, 64);
			else if (nb == 32)
				for (int64_t i = 0; i < run; i++, d += 32, s += sstep)
					memcpy(d, s, 32);
			else
				for (int64_t i = 0; i < run; i++, d += nb, s += sstep)
					memcpy(d, s, nb);
			row += run;
			if (ox_kernel_poll(job->ctx, run * len))
			{
				/* job->rc: string copies, on the kernel's thread alone */
				if (job->is_string && job->rc == OX_OK)
					job->rc = job->ctx->st->code;
				return;
			}
			/* the run ended at the end of axis r - 2 (or of the range): carry */
			off += run * job->strides[r - 2];
			idx[r - 2] += run;
			for (int k = r - 2; k > 0 && idx[k] >= job->dims[k]; k--)
			{
				off -= idx[k] * job->strides[k];
				idx[k] = 0;
				off += job->strides[k - 1];
				idx[k - 1]++;
			}
		}
		return;
	}
	for (int64_t row = begin; row < end; row++)
	{
		char	   *d = job->dst + (size_t) (row * len) * job->es;
		const char *s = job->src + off * (int64_t) job->es;
		int64_t		stride = job->strides[r - 1];

		/*
		 * Coalescing can leave one row of everything (Expand of a scalar):
		 * long rows go in pieces, polled for cancellation in between.
		 */
		for (int64_t c = 0; c < len; c += OX_POLL_BLOCK)
		{
			int64_t		m = len - c < OX_POLL_BLOCK ? len - c : OX_POLL_BLOCK;

			copy_row(job, d + (size_t) c * job->es, s + c * stride * (int64_t) job->es, m, stride);
			if (ox_kernel_poll(job->ctx, m))
			{
				if (job->is_string && job->rc == OX_OK)
					job->rc = job->ctx->st->code;
				return;
			}
		}
		for (int k = r - 2; k >= 0; k--)
		{
			off += job->strides[k];
			if (++idx[k] < job->dims[k])
				break;
			off -= idx[k] * job->strides[k];
			idx[k] = 0;
		}
	}
}

#define TILE 32

/*
 * Blocked transpose for views whose last two dims (A, B) have source
 * strides (1, sb): dst[a][b] = src[a + b * sb].  One unit of work is one
 * TILE-row band of A inside one outer batch.
 */
#define TRANSPOSE_TILE(T) \
	do { \
		T		   *d_ = (T *) d; \
		const T    *s_ = (const T *) s; \
		for (int64_t b0 = 0; b0 < B; b0 += TILE) \
		{ \
			int64_t		b1 = b0 + TILE < B ? b0 + TILE : B; \
			for (int64_t a = a0; a < a1; a++) \
				for (int64_t b = b0; b < b1; b++) \
					d_[a * B + b] = s_[a + b * sb]; \
		} \
	} while (0)

#if defined(__x86_64__)
/*
 * 4-byte elements, AVX2: 8 x 8 blocks transposed in registers.  The
 * scalar tile reads each source line (16 consecutive a) once per a, TILE
 * times over a band; when the source stride is a multiple of 4 KiB (the
 * keys of an attention head, [seq, heads, d] -> [heads, d, seq]) those
 * lines share one L1 set and are evicted before their next use, and the
 * copy ran at 2 GB/s.  Here each 8 x 8 block loads its eight source rows
 * once and consumes them whole.
 */
__attribute__((target("avx2")))
static void
transpose_band_f32_avx2(float *d, const float *s, int64_t a0, int64_t a1, int64_t B, int64_t sb)
{
	int64_t		b0 = 0;

	for (; b0 + 8 <= B; b0 += 8)
	{
		int64_t		a = a0;

		for (; a + 8 <= a1; a += 8)
		{
			const float *src = s + a + b0 * sb;
			__m256		r0 = _mm256_loadu_ps(src),
						r1 = _mm256_loadu_ps(src + sb),
						r2 = _mm256_loadu_ps(src + 2 * sb),
						r3 = _mm256_loadu_ps(src + 3 * sb),
						r4 = _mm256_loadu_ps(src + 4 * sb),
						r5 = _mm256_loadu_ps(src + 5 * sb),
						r6 = _mm256_loadu_ps(src + 6 * sb),
						r7 = _mm256_loadu_ps(src + 7 * sb);
			__m256		t0 = _mm256_unpacklo_ps(r0, r1),
						t1 = _mm256_unpackhi_ps(r0, r1),
						t2 = _mm256_unpacklo_ps(r2, r3),
						t3 = _mm256_unpackhi_ps(r2, r3),
						t4 = _mm256_unpacklo_ps(r4, r5),
						t5 = _mm256_unpackhi_ps(r4, r5),
						t6 = _mm256_unpacklo_ps(r6, r7),
						t7 = _mm256_unpackhi_ps(r6, r7);
			__m256		u0 = _mm256_shuffle_ps(t0, t2, 0x44),
						u1 = _mm256_shuffle_ps(t0, t2, 0xEE),
						u2 = _mm256_shuffle_ps(t1, t3, 0x44),
						u3 = _mm256_shuffle_ps(t1, t3, 0xEE),
						u4 = _mm256_shuffle_ps(t4, t6, 0x44),
						u5 = _mm256_shuffle_ps(t4, t6, 0xEE),
						u6 = _mm256_shuffle_ps(t5, t7, 0x44),
						u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
			float	   *dst = d + a * B + b0;

			_mm256_storeu_ps(dst, _mm256_permute2f128_ps(u0, u4, 0x20));
			_mm256_storeu_ps(dst + B, _mm256_permute2f128_ps(u1, u5, 0x20));
			_mm256_storeu_ps(dst + 2 * B, _mm256_permute2f128_ps(u2, u6, 0x20));
			_mm256_storeu_ps(dst + 3 * B, _mm256_permute2f128_ps(u3, u7, 0x20));
			_mm256_storeu_ps(dst + 4 * B, _mm256_permute2f128_ps(u0, u4, 0x31));
			_mm256_storeu_ps(dst + 5 * B, _mm256_permute2f128_ps(u1, u5, 0x31));
			_mm256_storeu_ps(dst + 6 * B, _mm256_permute2f128_ps(u2, u6, 0x31));
			_mm256_storeu_ps(dst + 7 * B, _mm256_permute2f128_ps(u3, u7, 0x31));
		}
		for (; a < a1; a++)
			for (int64_t b = b0; b < b0 + 8; b++)
				d[a * B + b] = s[a + b * sb];
	}
	for (int64_t a = a0; a < a1; a++)
		for (int64_t b = b0; b < B; b++)
			d[a * B + b] = s[a + b * sb];
}

static bool
transpose_has_avx2(void)
{
	static int	known = -1;

	if (known < 0)
		known = __builtin_cpu_supports("avx2") ? 1 : 0;
	return known == 1;
}
#endif

void
oxt_transpose_f32(float *d, const float *s, int64_t A, int64_t B, int64_t sb)
{
#if defined(__x86_64__)
	if (transpose_has_avx2())
	{
		transpose_band_f32_avx2(d, s, 0, A, B, sb);
		return;
	}
#endif
	for (int64_t a = 0; a < A; a++)
		for (int64_t b = 0; b < B; b++)
			d[a * B + b] = s[a + b * sb];
}

static void
transpose_bands(void *arg, int64_t begin, int64_t end)
{
	strided_job *job = arg;
	int			r = job->rank;
	int64_t		A = job->dims[r - 2];
	int64_t		B = job->dims[r - 1];
	int64_t		sb = job->strides[r - 1];
	int64_t		bands = (A + TILE - 1) / TILE;

	for (int64_t unit = begin; unit < end; unit++)
	{
		int64_t		batch = unit / bands;
		int64_t		a0 = (unit % bands) * TILE;
		int64_t		a1 = a0 + TILE < A ? a0 + TILE : A;
		int64_t		off = job->offset;
		int64_t		rem = batch;
		char	   *d = job->dst + (size_t) (batch * A * B) * job->es;
		const char *s;

		for (int k = r - 3; k >= 0; k--)
		{
			off += (rem % job->dims[k]) * job->strides[k];
			rem /= job->dims[k];
		}
		s = job->src + off * (int64_t) job->es;
#if defined(__x86_64__)
		if (job->es == 4 && transpose_has_avx2())
		{
			transpose_band_f32_avx2((float *) d, (const float *) s, a0, a1, B, sb);
			continue;
		}
#endif
		switch (job->es)
		{
			case 1:
				TRANSPOSE_TILE(uint8_t);
				break;
			case 2:
				TRANSPOSE_TILE(uint16_t);
				break;
			case 4:
				TRANSPOSE_TILE(uint32_t);
				break;
			case 8:
				TRANSPOSE_TILE(uint64_t);
				break;
		}
	}
}

ox_code
oxt_strided_copy(ox_kernel_ctx *ctx, void *dst, const ox_tensor *src, int64_t offset,
				 int rank, const int64_t *dims, const int64_t *strides)
{
	strided_job job;
	int			r = 0;
	int64_t		total = 1;

	memset(&job, 0, sizeof(job));
	job.ctx = ctx;
	job.dst = dst;
	job.src = src->data;
	job.es = ox_dtype_size(src->dtype);
	job.is_string = src->dtype == OX_STRING;
	job.offset = offset;
	job.rc = OX_OK;
	if (job.es == 0)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: element type %d is not supported",
					   ctx->node->op_type, (int) src->dtype);
	if (rank > OXT_MAX_VIEW_RANK)
		return ox_fail(ctx->st, OX_INTERNAL, "%s: strided view of rank %d", ctx->node->op_type, rank);

	/* drop unit dims and merge dims that are contiguous in the source */
	for (int k = 0; k < rank; k++)
	{
		if (dims[k] == 0)
			return OX_OK;
		total *= dims[k];
		if (dims[k] == 1)
			continue;
		if (r > 0 && job.strides[r - 1] == strides[k] * dims[k])
		{
			job.dims[r - 1] *= dims[k];
			job.strides[r - 1] = strides[k];
			continue;
		}
		job.dims[r] = dims[k];
		job.strides[r] = strides[k];
		r++;
	}
	if (r == 0)
	{
		job.dims[0] = 1;
		job.strides[0] = 1;
		r = 1;
	}
	job.rank = r;

	if (job.is_string)
	{
		/* one thread (strings allocate), in slices polled for cancellation */
		int64_t		rows = total / job.dims[r - 1];
		int64_t		step = OX_POLL_WORK / job.dims[r - 1] + 1;

		for (int64_t b = 0; b < rows && job.rc == OX_OK; b += step)
		{
			int64_t		e = rows - b > step ? b + step : rows;

			strided_rows(&job, b, e);
			if (job.rc == OX_OK && ox_kernel_poll(ctx, (e - b) * job.dims[r - 1]))
				return ctx->st->code;
		}
		return job.rc;
	}
	/*
	 * A last dim of 2 or 3 (NCHW -> NHWC of an RGB image) takes the blocked
	 * path too: as rows it would be one call per pixel.
	 */
	if (r >= 2 && job.strides[r - 2] == 1 && job.strides[r - 1] != 1 &&
		job.dims[r - 2] >= 4 && job.dims[r - 1] >= 2 && job.es <= 8 &&
		(job.es & (job.es - 1)) == 0)
	{
		int64_t		bands = (job.dims[r - 2] + TILE - 1) / TILE;
		int64_t		units = total / (job.dims[r - 2] * job.dims[r - 1]) * bands;

		ox_parallel_for(ctx, units, 1 + 16384 / (TILE * job.dims[r - 1]), transpose_bands, &job);
		return ctx->st->code;	/* OX_CANCELED when the loop was cut short */
	}
	ox_parallel_for(ctx, total / job.dims[r - 1], 1 + 16384 / job.dims[r - 1], strided_rows, &job);
	return ctx->st->code;
}

/* ---------------------------------------------------------------------
 * Transpose
 * --------------------------------------------------------------------- */

ox_code
oxt_transpose_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "data");
	const oxt_attr_cache *c = oxt_cache(ctx);
	const int64_t *perm;
	int			np;
	int64_t		xs[OX_MAX_RANK];
	int64_t		dims[OX_MAX_RANK];
	int64_t		strides[OX_MAX_RANK];
	bool		seen[OX_MAX_RANK] = {false};
	ox_tensor  *out;

	if (!x || !c)
		return ctx->st->code;
	perm = c->perm;
	np = c->n_perm;
	if (oxt_numel(ctx, x, "data") < 0)
		return ctx->st->code;
	if (np != 0 && np != x->rank)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Transpose: perm has %d entries but the input has rank %d",
					   np, x->rank);
	oxt_strides(x->rank, x->dims, xs);
	for (int i = 0; i < x->rank; i++)
	{
		int64_t		p = np ? perm[i] : x->rank - 1 - i;

		if (p < 0 || p >= x->rank || seen[p])
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "Transpose: perm is not a permutation of 0..%d (entry %d is %lld)",
						   x->rank - 1, i, (long long) p);
		seen[p] = true;
		dims[i] = x->dims[p];
		strides[i] = xs[p];
	}
	if (!(out = ox_out_tensor(ctx, 0, x->dtype, x->rank, dims)))
		return ctx->st->code;
	return oxt_strided_copy(ctx, out->data, x, 0, x->rank, dims, strides);
}

/* ---------------------------------------------------------------------
 * DepthToSpace, SpaceToDepth
 * --------------------------------------------------------------------- */

/*
 * blocksize, and DepthToSpace's mode (crd, when asked: "CRD"), which are
 * wrong whatever the input: the prepare refuses them, so that the load
 * fails, and the runs read them through the same checks
 */
static ox_code
block_attrs(const ox_node *node, ox_status *st, int64_t *b, bool *crd)
{
	const char *mode = ox_attr_string(node, "mode", "DCR");
	bool		is_crd = strcmp(mode, "CRD") == 0;

	*b = ox_attr_int(node, "blocksize", 0);
	if (*b <= 0 || *b > 65536)
		return ox_fail(st, OX_INVALID_MODEL, "%s: blocksize must be positive, got %lld",
					   node->op_type, (long long) *b);
	if (strcmp(node->op_type, "DepthToSpace") == 0 && !is_crd && strcmp(mode, "DCR") != 0)
		return ox_fail(st, OX_UNSUPPORTED, "DepthToSpace: unknown mode \"%s\"", mode);
	if (crd)
		*crd = is_crd;
	return OX_OK;
}

ox_code
oxt_block_prepare(ox_prepare_ctx *pc)
{
	int64_t		b;

	return block_attrs(pc->node, pc->st, &b, NULL);
}

/* crd: NULL for SpaceToDepth, which has no mode */
static ox_code
block_size(ox_kernel_ctx *ctx, const ox_tensor *x, int64_t *b, bool *crd)
{
	OX_TRY(block_attrs(ctx->node, ctx->st, b, crd));
	if (x->rank != 4)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input must be 4-D, got rank %d",
					   ctx->node->op_type, x->rank);
	if (oxt_numel(ctx, x, "input") < 0)
		return ctx->st->code;
	return OX_OK;
}

ox_code
oxt_depth_to_space_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "input");
	int64_t		b,
				N,
				C,
				H,
				W,
				Cb;
	int64_t		dims[6];
	int64_t		strides[6];
	int64_t		out_dims[4];
	ox_tensor  *out;
	bool		crd;

	if (!x)
		return ctx->st->code;
	OX_TRY(block_size(ctx, x, &b, &crd));
	N = x->dims[0];
	C = x->dims[1];
	H = x->dims[2];
	W = x->dims[3];
	if (C % (b * b) != 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "DepthToSpace: channels %lld are not divisible by blocksize^2 = %lld",
					   (long long) C, (long long) (b * b));
	Cb = C / (b * b);
	/* output view [N, C', H, b1, W, b2] */
	dims[0] = N;
	dims[1] = Cb;
	dims[2] = H;
	dims[3] = b;
	dims[4] = W;
	dims[5] = b;
	strides[0] = C * H * W;
	strides[2] = W;
	strides[4] = 1;
	if (crd)
	{
		/* source [N, C', b1, b2, H, W] */
		strides[1] = b * b * H * W;
		strides[3] = b * H * W;
		strides[5] = H * W;
	}
	else
	{
		/* source [N, b1, b2, C', H, W] */
		strides[1] = H * W;
		strides[3] = b * Cb * H * W;
		strides[5] = Cb * H * W;
	}
	out_dims[0] = N;
	out_dims[1] = Cb;
	out_dims[2] = H * b;
	out_dims[3] = W * b;
	if (!(out = ox_out_tensor(ctx, 0, x->dtype, 4, out_dims)))
		return ctx->st->code;
	return oxt_strided_copy(ctx, out->data, x, 0, 6, dims, strides);
}

ox_code
oxt_space_to_depth_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "input");
	int64_t		b,
				N,
				C,
				H,
				W;
	int64_t		dims[6];
	int64_t		strides[6];
	int64_t		out_dims[4];
	ox_tensor  *out;

	if (!x)
		return ctx->st->code;
	OX_TRY(block_size(ctx, x, &b, NULL));
	N = x->dims[0];
	C = x->dims[1];
	H = x->dims[2];
	W = x->dims[3];
	if (H % b != 0 || W % b != 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "SpaceToDepth: height %lld and width %lld must be divisible by blocksize %lld",
					   (long long) H, (long long) W, (long long) b);
	/* output view [N, b1, b2, C, H/b, W/b] over source [N, C, H/b, b1, W/b, b2] */
	dims[0] = N;
	dims[1] = b;
	dims[2] = b;
	dims[3] = C;
	dims[4] = H / b;
	dims[5] = W / b;
	strides[0] = C * H * W;
	strides[1] = W;
	strides[2] = 1;
	strides[3] = H * W;
	strides[4] = b * W;
	strides[5] = b;
	out_dims[0] = N;
	out_dims[1] = C * b * b;
	out_dims[2] = H / b;
	out_dims[3] = W / b;
	if (!(out = ox_out_tensor(ctx, 0, x->dtype, 4, out_dims)))
		return ctx->st->code;
	return oxt_strided_copy(ctx, out->data, x, 0, 6, dims, strides);
}

/* ---------------------------------------------------------------------
 * Expand, Tile
 * --------------------------------------------------------------------- */

ox_code
oxt_expand_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "input");
	const ox_tensor *s = oxt_input(ctx, 1, "shape");
	int64_t		shape[OX_MAX_RANK];
	int64_t		dims[OX_MAX_RANK];
	int64_t		strides[OX_MAX_RANK];
	int64_t		xs[OX_MAX_RANK];
	int			n;
	int			r;
	ox_tensor  *out;
	char		b1[128];

	if (!x || !s)
		return ctx->st->code;
	if (oxt_numel(ctx, x, "input") < 0)
		return ctx->st->code;
	OX_TRY(oxt_read_ints(ctx, s, shape, OX_MAX_RANK, &n, "shape"));
	r = n > x->rank ? n : x->rank;
	oxt_strides(x->rank, x->dims, xs);
	for (int i = 0; i < r; i++)
	{
		int			xi = i - (r - x->rank);
		int			si = i - (r - n);
		int64_t		xd = xi >= 0 ? x->dims[xi] : 1;
		int64_t		sd = si >= 0 ? shape[si] : 1;

		if (sd < 0)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Expand: shape entry %d is negative (%lld)",
						   si, (long long) sd);
		if (xd != sd && xd != 1 && sd != 1)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "Expand: input %s cannot be broadcast to the requested shape (dimension %d: %lld vs %lld)",
						   OXT_SHAPE(x, b1), i, (long long) xd, (long long) sd);
		dims[i] = xd == 1 ? sd : xd;
		strides[i] = (xi >= 0 && xd != 1) ? xs[xi] : 0;
	}
	if (ox_shape_numel(r, dims) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "Expand: output has too many elements");
	if (!(out = ox_out_tensor(ctx, 0, x->dtype, r, dims)))
		return ctx->st->code;
	return oxt_strided_copy(ctx, out->data, x, 0, r, dims, strides);
}

ox_code
oxt_tile_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "input");
	const ox_tensor *rt = oxt_input(ctx, 1, "repeats");
	int64_t		reps[OX_MAX_RANK];
	int64_t		xs[OX_MAX_RANK];
	int64_t		vdims[OXT_MAX_VIEW_RANK];
	int64_t		vstrides[OXT_MAX_VIEW_RANK];
	int64_t		dims[OX_MAX_RANK];
	int			n;
	ox_tensor  *out;

	if (!x || !rt)
		return ctx->st->code;
	if (oxt_numel(ctx, x, "input") < 0)
		return ctx->st->code;
	if (ctx->node->opset < 6)
	{
		/* Tile-1: a scalar count of tiles along one axis */
		const ox_tensor *at = oxt_input(ctx, 2, "axis");
		int64_t		tiles,
					axis;
		int			a;

		if (!at)
			return ctx->st->code;
		OX_TRY(oxt_scalar_int(ctx, rt, &tiles, "tiles"));
		OX_TRY(oxt_scalar_int(ctx, at, &axis, "axis"));
		OX_TRY(oxt_axis(ctx, axis, x->rank, &a, "axis"));
		for (int i = 0; i < x->rank; i++)
			reps[i] = i == a ? tiles : 1;
		n = x->rank;
	}
	else
		OX_TRY(oxt_read_ints(ctx, rt, reps, OX_MAX_RANK, &n, "repeats"));
	if (n != x->rank)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Tile: repeats has %d entries but the input has rank %d",
					   n, x->rank);
	oxt_strides(x->rank, x->dims, xs);
	for (int i = 0; i < n; i++)
	{
		if (reps[i] < 0)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Tile: repeats entry %d is negative (%lld)",
						   i, (long long) reps[i]);
		if (reps[i] > 0 && x->dims[i] > OX_MAX_ELEMENTS / reps[i])
			return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "Tile: output has too many elements");
		dims[i] = x->dims[i] * reps[i];
		/* view [r0, d0, r1, d1, ...]: the repeat index does not move in the source */
		vdims[2 * i] = reps[i];
		vstrides[2 * i] = 0;
		vdims[2 * i + 1] = x->dims[i];
		vstrides[2 * i + 1] = xs[i];
	}
	if (ox_shape_numel(n, dims) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "Tile: output has too many elements");
	if (!(out = ox_out_tensor(ctx, 0, x->dtype, n, dims)))
		return ctx->st->code;
	return oxt_strided_copy(ctx, out->data, x, 0, 2 * n, vdims, vstrides);
}

/* ---------------------------------------------------------------------
 * Slice
 * --------------------------------------------------------------------- */

/* read one of Slice's optional index inputs (opset 10+) or attributes */
static ox_code
slice_param(ox_kernel_ctx *ctx, int input, const char *name, int64_t *out, int *n, bool *given)
{
	*n = 0;
	*given = false;
	if (ctx->node->opset < 10)
	{
		const int64_t *a;
		int			na = ox_attr_ints(ctx->node, name, &a);

		*given = ox_node_attr(ctx->node, name) != NULL;
		if (na > OX_MAX_RANK)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Slice: %s has %d entries, at most %d allowed",
						   name, na, OX_MAX_RANK);
		if (na > 0)
			memcpy(out, a, sizeof(int64_t) * na);
		*n = na;
		return OX_OK;
	}
	if (!ox_in_tensor(ctx, input))
		return OX_OK;
	*given = true;
	return oxt_read_ints(ctx, ox_in_tensor(ctx, input), out, OX_MAX_RANK, n, name);
}

ox_code
oxt_slice_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "data");
	int64_t		starts[OX_MAX_RANK],
				ends[OX_MAX_RANK],
				axes[OX_MAX_RANK],
				steps[OX_MAX_RANK];
	int			ns,
				ne,
				na,
				nst;
	bool		has_s,
				has_e,
				has_axes,
				has_steps;
	int64_t		xs[OX_MAX_RANK];
	int64_t		dims[OX_MAX_RANK];
	int64_t		strides[OX_MAX_RANK];
	bool		seen[OX_MAX_RANK] = {false};
	int64_t		offset = 0;
	ox_tensor  *out;

	if (!x)
		return ctx->st->code;
	if (oxt_numel(ctx, x, "data") < 0)
		return ctx->st->code;
	OX_TRY(slice_param(ctx, 1, "starts", starts, &ns, &has_s));
	OX_TRY(slice_param(ctx, 2, "ends", ends, &ne, &has_e));
	OX_TRY(slice_param(ctx, 3, "axes", axes, &na, &has_axes));
	OX_TRY(slice_param(ctx, 4, "steps", steps, &nst, &has_steps));
	if (!has_s || !has_e)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Slice: starts and ends are required");
	if (ns != ne)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Slice: starts has %d entries but ends has %d", ns, ne);
	if (has_axes && na != ns)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Slice: axes has %d entries but starts has %d", na, ns);
	if (has_steps && nst != ns)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Slice: steps has %d entries but starts has %d", nst, ns);
	if (ns > x->rank)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Slice: %d slices given for an input of rank %d",
					   ns, x->rank);
	oxt_strides(x->rank, x->dims, xs);
	for (int i = 0; i < x->rank; i++)
	{
		dims[i] = x->dims[i];
		strides[i] = xs[i];
	}
	for (int k = 0; k < ns; k++)
	{
		int			a;
		int64_t		dim,
					step = has_steps ? steps[k] : 1,
					start = starts[k],
					end = ends[k],
					count;

		OX_TRY(oxt_axis(ctx, has_axes ? axes[k] : k, x->rank, &a, "axis"));
		if (seen[a])
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Slice: axis %d is listed twice", a);
		seen[a] = true;
		if (step == 0)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Slice: step for axis %d is zero", a);
		if (step == INT64_MIN)
			step = -INT64_MAX;
		dim = x->dims[a];
		if (start < 0)
			start += dim;
		if (end < 0)
			end += dim;
		if (step > 0)
		{
			start = start < 0 ? 0 : start > dim ? dim : start;
			end = end < 0 ? 0 : end > dim ? dim : end;
			count = end > start ? (end - start) / step + ((end - start) % step != 0) : 0;
		}
		else
		{
			start = start < 0 ? 0 : start > dim - 1 ? dim - 1 : start;
			end = end < -1 ? -1 : end > dim - 1 ? dim - 1 : end;
			count = start > end ? (start - end) / (-step) + ((start - end) % (-step) != 0) : 0;
		}
		dims[a] = count;
		if (count > 0)
		{
			/* count > 1 bounds |step| by the dim, so the product cannot overflow */
			offset += start * xs[a];
			strides[a] = count > 1 ? step * xs[a] : 0;
		}
	}
	if (!(out = ox_out_tensor(ctx, 0, x->dtype, x->rank, dims)))
		return ctx->st->code;
	return oxt_strided_copy(ctx, out->data, x, offset, x->rank, dims, strides);
}
