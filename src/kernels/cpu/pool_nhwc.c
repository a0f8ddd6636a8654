/*
 * pool_nhwc.c
 *	  com.microsoft NhwcMaxPool on 8-bit data: the MaxPool of X [N, H, W, C]
 *	  into Y [N, OH, OW, C].  The layout pass (passes/layout_nhwc.c) makes
 *	  it of a MaxPool between channels-last int8 convolutions.
 *
 * A pixel's channels are contiguous, so the maximum over the window runs
 * across channels, 64 at a time with AVX-512BW (the stem of a ResNet has
 * 64); the portable loop defines the semantics: padding never wins (taps
 * outside the image are skipped), a window entirely in the padding gives
 * the type's lowest value.
 */
#include "kernels/cpu/nn.h"

#include <immintrin.h>
#include <string.h>

typedef struct nhwc_pool_state
{
	nn_window	win;
} nhwc_pool_state;

typedef struct nhwc_pool_job
{
	const nn_geom *g;
	const uint8_t *x;
	uint8_t    *y;
	int64_t		c;
	int64_t		h_out;			/* rows per image */
	bool		is_signed;
	bool		avx512;
} nhwc_pool_job;

static ox_code
nhwc_max_pool_prepare(ox_prepare_ctx *pc)
{
	nhwc_pool_state *s = calloc(1, sizeof(*s));

	if (!s)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "NhwcMaxPool: could not allocate state");
	pc->state = s;
	return nn_window_parse(pc->node, &s->win, true, pc->st);
}

static void
nhwc_pool_free(void *state)
{
	free(state);
}

/* the taps [*lo, *hi) of a window axis that land inside the input */
static inline void
valid_taps(const nn_geom *g, int ax, int64_t o, int64_t *lo, int64_t *hi)
{
	int64_t		start = o * g->s[ax] - g->pb[ax];

	/* taps t with 0 <= start + t * d < in: the range helper with roles swapped */
	nn_valid_range(g->k[ax], g->d[ax], start, g->in[ax], lo, hi);
}

static void
max_pixel_portable(const nhwc_pool_job *j, const uint8_t *xi, int64_t oh, int64_t ow, uint8_t *yp)
{
	const nn_geom *g = j->g;
	int64_t		hlo,
				hhi,
				wlo,
				whi;

	valid_taps(g, 1, oh, &hlo, &hhi);
	valid_taps(g, 2, ow, &wlo, &whi);
	/* int8 compared as uint8 with the sign bit flipped */
	memset(yp, 0, (size_t) j->c);
	for (int64_t kh = hlo; kh < hhi; kh++)
		for (int64_t kw = wlo; kw < whi; kw++)
		{
			int64_t		ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
			int64_t		iw = ow * g->s[2] - g->pb[2] + kw * g->d[2];
			const uint8_t *px = xi + (ih * g->in[2] + iw) * j->c;

			for (int64_t ci = 0; ci < j->c; ci++)
			{
				uint8_t		v = j->is_signed ? px[ci] ^ 0x80 : px[ci];

				if (v > yp[ci])
					yp[ci] = v;
			}
		}
	if (j->is_signed)
		for (int64_t ci = 0; ci < j->c; ci++)
			yp[ci] ^= 0x80;
}

__attribute__((target("avx512f,avx512bw")))
static void
max_pixel_avx512(const nhwc_pool_job *j, const uint8_t *xi, int64_t oh, int64_t ow, uint8_t *yp)
{
	const nn_geom *g = j->g;
	__m512i		flip = _mm512_set1_epi8((char) (j->is_signed ? 0x80 : 0));
	int64_t		hlo,
				hhi,
				wlo,
				whi;

	valid_taps(g, 1, oh, &hlo, &hhi);
	valid_taps(g, 2, ow, &wlo, &whi);
	for (int64_t c0 = 0; c0 < j->c; c0 += 64)
	{
		__mmask64	m = j->c - c0 >= 64 ? ~(__mmask64) 0 : (((__mmask64) 1 << (j->c - c0)) - 1);
		__m512i		acc = _mm512_setzero_si512();

		for (int64_t kh = hlo; kh < hhi; kh++)
		{
			int64_t		ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];

			for (int64_t kw = wlo; kw < whi; kw++)
			{
				int64_t		iw = ow * g->s[2] - g->pb[2] + kw * g->d[2];
				__m512i		v = _mm512_maskz_loadu_epi8(m, xi + (ih * g->in[2] + iw) * j->c + c0);

				acc = _mm512_max_epu8(acc, _mm512_xor_si512(v, flip));
			}
		}
		_mm512_mask_storeu_epi8(yp + c0, m, _mm512_xor_si512(acc, flip));
	}
}

/* rows [begin, end) of all images: row r is image r / h_out, output row r % h_out */
static void
nhwc_pool_rows(void *arg, int64_t begin, int64_t end)
{
	const nhwc_pool_job *j = arg;
	const nn_geom *g = j->g;

	for (int64_t r = begin; r < end; r++)
	{
		int64_t		n = r / j->h_out,
					oh = r % j->h_out;
		const uint8_t *xi = j->x + n * g->in[1] * g->in[2] * j->c;
		uint8_t    *yr = j->y + r * g->out[2] * j->c;

		for (int64_t ow = 0; ow < g->out[2]; ow++)
		{
			if (j->avx512)
				max_pixel_avx512(j, xi, oh, ow, yr + ow * j->c);
			else
				max_pixel_portable(j, xi, oh, ow, yr + ow * j->c);
		}
	}
}

static bool
have_avx512bw(void)
{
	static int	have = -1;

	if (have < 0)
	{
		__builtin_cpu_init();
		have = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
	}
	return have;
}

static ox_code
nhwc_max_pool_run(ox_kernel_ctx *ctx)
{
	const char *op = "NhwcMaxPool";
	const nhwc_pool_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	nn_geom		g;
	nhwc_pool_job job;
	int64_t		y_dims[4];
	ox_tensor  *y;
	char		buf[NN_SHAPE_LEN];

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "%s: not prepared", op);
	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input X is required", op);
	if (!nn_is_quant8(x->dtype))
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: type %s is not supported (uint8, int8)",
					   op, ox_dtype_name(x->dtype));
	if (x->rank != 4)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: X has shape %s, expected [N, H, W, C]",
					   op, nn_shape(x, buf));
	if (ox_has_output(ctx, 1))
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s: the Indices output is not supported", op);
	OX_TRY(nn_window_resolve(&s->win, op, 2, x->dims + 1, NULL, &g, ctx->st));
	y_dims[0] = x->dims[0];
	y_dims[1] = g.out[1];
	y_dims[2] = g.out[2];
	y_dims[3] = x->dims[3];
	if (ox_shape_numel(4, y_dims) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "%s: output is too large", op);
	if (!(y = ox_out_tensor(ctx, 0, x->dtype, 4, y_dims)))
		return ctx->st->code;
	if (ox_tensor_numel(y) == 0)
		return OX_OK;
	job.g = &g;
	job.x = x->data;
	job.y = y->data;
	job.c = x->dims[3];
	job.h_out = g.out[1];
	job.is_signed = x->dtype == OX_INT8;
	job.avx512 = have_avx512bw();
	ox_parallel_for(ctx, y_dims[0] * y_dims[1], 1, nhwc_pool_rows, &job);
	return ctx->st->code;
}

const ox_kernel_def ox_kernels_pool_nhwc[] = {
	{"com.microsoft", "NhwcMaxPool", 1, nhwc_max_pool_prepare, nhwc_max_pool_run, nhwc_pool_free},
};
const int	ox_kernels_pool_nhwc_count = OX_KERNEL_COUNT(ox_kernels_pool_nhwc);
