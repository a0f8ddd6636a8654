/*
 * vision_grid.c
 *	  GridSample (opset 16: 4-D, bilinear/nearest/bicubic; opset 20+: N-D,
 *	  linear/nearest/cubic) and AffineGrid (2-D and 3-D).
 *
 * GridSample follows the ONNX reference implementation (itself PyTorch's
 * grid_sampler): a normalized coordinate is mapped to pixel space, rounded
 * half-to-even for "nearest", moved inside the image for border/reflection
 * padding, and then interpolated from taps whose out-of-image pixels are
 * zero, clamped or reflected by the padding mode.  Interpolation is
 * separable, so each spatial dimension yields a few (pixel index, weight)
 * taps and a sample is the weighted sum over their outer product; the taps
 * do not depend on the channel, so they are built once per output point.
 */
#include "kernels/cpu/vision.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum gs_mode
{
	GS_NEAREST,
	GS_LINEAR,
	GS_CUBIC
} gs_mode;

typedef enum gs_padding
{
	GS_PAD_ZEROS,
	GS_PAD_BORDER,
	GS_PAD_REFLECTION
} gs_padding;

typedef struct gs_state
{
	gs_mode		mode;
	gs_padding	padding;
	bool		align_corners;
} gs_state;

/* more taps than this per output point (4^r for cubic) is refused */
#define GS_MAX_COMBOS (1 << 16)

ox_code
ox_vision_grid_sample_prepare(ox_prepare_ctx *pc)
{
	const ox_node *node = pc->node;
	const char *mode = ox_attr_string(node, "mode", node->opset >= 20 ? "linear" : "bilinear");
	const char *pad = ox_attr_string(node, "padding_mode", "zeros");
	int64_t		align = ox_attr_int(node, "align_corners", 0);
	gs_state   *s;

	if (align != 0 && align != 1)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT,
					   "GridSample: align_corners must be 0 or 1, got %lld", (long long) align);
	if (!(s = calloc(1, sizeof(*s))))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "GridSample: out of memory");
	s->align_corners = align != 0;
	/* the names changed in opset 20; both spellings mean the same thing */
	if (strcmp(mode, "nearest") == 0)
		s->mode = GS_NEAREST;
	else if (strcmp(mode, "linear") == 0 || strcmp(mode, "bilinear") == 0)
		s->mode = GS_LINEAR;
	else if (strcmp(mode, "cubic") == 0 || strcmp(mode, "bicubic") == 0)
		s->mode = GS_CUBIC;
	else
	{
		free(s);
		return ox_fail(pc->st, OX_UNSUPPORTED, "GridSample: unsupported mode \"%s\"", mode);
	}
	if (strcmp(pad, "zeros") == 0)
		s->padding = GS_PAD_ZEROS;
	else if (strcmp(pad, "border") == 0)
		s->padding = GS_PAD_BORDER;
	else if (strcmp(pad, "reflection") == 0)
		s->padding = GS_PAD_REFLECTION;
	else
	{
		free(s);
		return ox_fail(pc->st, OX_UNSUPPORTED, "GridSample: unsupported padding_mode \"%s\"", pad);
	}
	pc->state = s;
	return OX_OK;
}

/* reflect x by the nearer border until it lies within [lo, hi] */
static double
gs_reflect(double x, double lo, double hi)
{
	double		range = hi - lo;
	double		d,
				n,
				r;

	if (!(range > 0))
		return lo;
	if (x < lo)
	{
		d = lo - x;
		n = floor(d / range);
		r = d - n * range;
		return fmod(n, 2.0) == 0 ? lo + r : hi - r;
	}
	if (x > hi)
	{
		d = x - hi;
		n = floor(d / range);
		r = d - n * range;
		return fmod(n, 2.0) == 0 ? hi - r : lo + r;
	}
	return x;
}

/* Keys cubic convolution weights (alpha = -0.75) for fractional offset t */
static void
gs_cubic_coeffs(double t, double *c)
{
	const double a = -0.75;
	double		x;

	x = t + 1;
	c[0] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
	x = t;
	c[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
	x = 1 - t;
	c[2] = ((a + 2) * x - (a + 3)) * x * x + 1;
	x = 2 - t;
	c[3] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}

/* map an integer pixel index through the padding mode; -1 = a zero pixel */
static int64_t
gs_pixel_index(const gs_state *s, int64_t i, int64_t len, double lo, double hi)
{
	if (i >= 0 && i < len)
		return i;
	switch (s->padding)
	{
		case GS_PAD_ZEROS:
			return -1;
		case GS_PAD_BORDER:
			return i < 0 ? 0 : len - 1;
		case GS_PAD_REFLECTION:
			i = (int64_t) gs_reflect((double) i, lo, hi);
			return i < 0 ? 0 : (i >= len ? len - 1 : i);
	}
	return -1;
}

/*
 * Taps of one spatial dimension for normalized coordinate g: fills idx and
 * w (up to 4 each) and returns their count, or -1 for a NaN coordinate.
 */
static int
gs_dim_taps(const gs_state *s, double g, int64_t len, bool as_float, int64_t *idx, double *w)
{
	double		lo = s->align_corners ? 0.0 : -0.5;
	double		hi = s->align_corners ? (double) len - 1 : (double) len - 0.5;
	double		x,
				x0;
	int			ntaps;

	if (isnan(g))
		return -1;
	x = s->align_corners ? (g + 1) / 2.0 * (double) (len - 1) : ((g + 1) * (double) len - 1) / 2.0;
	if (as_float)
		x = (float) x;
	if (s->mode == GS_NEAREST)
		x = nearbyint(x);
	if (x < lo || x > hi)
	{
		if (s->padding == GS_PAD_BORDER)
			x = x < 0 ? 0 : (x > (double) (len - 1) ? (double) (len - 1) : x);
		else if (s->padding == GS_PAD_REFLECTION)
			x = gs_reflect(x, lo, hi);
	}
	/* an infinite coordinate can end as NaN (inf * 0, reflected inf): like a NaN one */
	if (isnan(x))
		return -1;
	/* far outside the image every tap is a zero pixel: keep casts defined */
	if (x < -10.0)
		x = -10.0;
	else if (x > (double) len + 10.0)
		x = (double) len + 10.0;
	switch (s->mode)
	{
		case GS_NEAREST:
			idx[0] = gs_pixel_index(s, (int64_t) x, len, lo, hi);
			w[0] = 1.0;
			return 1;
		case GS_LINEAR:
			x0 = floor(x);
			idx[0] = gs_pixel_index(s, (int64_t) x0, len, lo, hi);
			idx[1] = gs_pixel_index(s, (int64_t) x0 + 1, len, lo, hi);
			w[0] = 1.0 - (x - x0);
			w[1] = x - x0;
			return 2;
		case GS_CUBIC:
			x0 = floor(x);
			gs_cubic_coeffs(x - x0, w);
			ntaps = 4;
			for (int t = 0; t < ntaps; t++)
				idx[t] = gs_pixel_index(s, (int64_t) x0 - 1 + t, len, lo, hi);
			return ntaps;
	}
	return -1;
}

ox_code
ox_vision_grid_sample_run(ox_kernel_ctx *ctx)
{
	const gs_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *grid = ox_in_tensor(ctx, 1);
	char		b1[OX_VISION_SHAPE_LEN],
				b2[OX_VISION_SHAPE_LEN];
	int64_t		dims[OX_MAX_RANK];
	int64_t		in_strides[OX_MAX_RANK];
	int			r;
	int64_t		N,
				C,
				in_plane = 1,
				out_plane = 1,
				ntaps_max,
				combos = 1;
	int64_t    *combo_off = NULL;
	double	   *combo_w = NULL;
	ox_tensor  *y;
	bool		as_float;

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "GridSample: prepare did not run");
	if (!x || !grid)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "GridSample: X and grid are required");
	if (!ox_dtype_is_float(x->dtype))
		return ox_fail(ctx->st, OX_UNSUPPORTED, "GridSample: unsupported X type %s",
					   ox_dtype_name(x->dtype));
	if (!ox_dtype_is_float(grid->dtype))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "GridSample: grid must be a floating tensor, got %s",
					   ox_dtype_name(grid->dtype));
	if (x->rank < 3 || (ctx->node->opset < 20 && x->rank != 4))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "GridSample: X must be %s, got shape %s",
					   ctx->node->opset < 20 ? "4-D" : "at least 3-D",
					   ox_shape_str(x->rank, x->dims, b1, sizeof(b1)));
	r = x->rank - 2;
	if (grid->rank != x->rank || grid->dims[0] != x->dims[0] || grid->dims[grid->rank - 1] != r)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "GridSample: grid has shape %s but X has shape %s (expected [N, ..., %d])",
					   ox_shape_str(grid->rank, grid->dims, b1, sizeof(b1)),
					   ox_shape_str(x->rank, x->dims, b2, sizeof(b2)), r);
	if (ox_tensor_numel(x) < 0 || ox_tensor_numel(grid) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "GridSample: tensor too large");
	N = x->dims[0];
	C = x->dims[1];
	dims[0] = N;
	dims[1] = C;
	for (int i = 0; i < r; i++)
	{
		dims[2 + i] = grid->dims[1 + i];
		out_plane *= grid->dims[1 + i];
		in_plane *= x->dims[2 + i];
	}
	if (ox_shape_numel(x->rank, dims) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "GridSample: output too large");
	if (!(y = ox_out_tensor(ctx, 0, x->dtype, x->rank, dims)))
		return ctx->st->code;
	if (ox_tensor_numel(y) == 0)
		return OX_OK;
	if (in_plane == 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "GridSample: X has an empty spatial dimension, shape %s",
					   ox_shape_str(x->rank, x->dims, b1, sizeof(b1)));

	ntaps_max = s->mode == GS_NEAREST ? 1 : (s->mode == GS_LINEAR ? 2 : 4);
	for (int i = 0; i < r; i++)
	{
		combos *= ntaps_max;
		if (combos > GS_MAX_COMBOS)
			return ox_fail(ctx->st, OX_UNSUPPORTED,
						   "GridSample: %d spatial dimensions are too many for this mode", r);
	}
	in_strides[r - 1] = 1;
	for (int i = r - 2; i >= 0; i--)
		in_strides[i] = in_strides[i + 1] * x->dims[3 + i];
	combo_off = ox_workspace_alloc(sizeof(int64_t) * combos, ctx->st, "GridSample");
	combo_w = ox_workspace_alloc(sizeof(double) * combos, ctx->st, "GridSample");
	if (!combo_off || !combo_w)
	{
		free(combo_off);
		free(combo_w);
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "GridSample: out of memory");
	}
	as_float = x->dtype != OX_DOUBLE;

	for (int64_t n = 0; n < N; n++)
	{
		for (int64_t p = 0; p < out_plane; p++)
		{
			int64_t		gbase = (n * out_plane + p) * r;
			int64_t		idx[OX_MAX_RANK][4];
			double		w[OX_MAX_RANK][4];
			int			nt[OX_MAX_RANK];
			int			cnt[OX_MAX_RANK];
			int64_t		k = 0;
			bool		is_nan = false;

			/* grid's last axis lists coordinates innermost dimension first */
			for (int i = 0; i < r && !is_nan; i++)
			{
				double		g = ox_load_real(grid->data, grid->dtype, gbase + (r - 1 - i));

				nt[i] = gs_dim_taps(s, g, x->dims[2 + i], as_float, idx[i], w[i]);
				is_nan = nt[i] < 0;
			}
			if (is_nan)
			{
				for (int64_t c = 0; c < C; c++)
					ox_store_real(y->data, y->dtype, (n * C + c) * out_plane + p, NAN);
				continue;
			}
			/* outer product of the taps, zero pixels dropped */
			memset(cnt, 0, sizeof(cnt));
			for (;;)
			{
				int64_t		off = 0;
				double		wt = 1.0;
				bool		zero = false;
				int			d;

				for (int i = 0; i < r; i++)
				{
					int64_t		ix = idx[i][cnt[i]];

					if (ix < 0)
					{
						zero = true;
						break;
					}
					off += ix * in_strides[i];
					wt *= w[i][cnt[i]];
				}
				if (!zero)
				{
					combo_off[k] = off;
					combo_w[k] = wt;
					k++;
				}
				for (d = r - 1; d >= 0; d--)
				{
					if (++cnt[d] < nt[d])
						break;
					cnt[d] = 0;
				}
				if (d < 0)
					break;
			}
			for (int64_t c = 0; c < C; c++)
			{
				int64_t		xbase = (n * C + c) * in_plane;
				double		acc = 0;

				for (int64_t j = 0; j < k; j++)
					acc += combo_w[j] * ox_load_real(x->data, x->dtype, xbase + combo_off[j]);
				ox_store_real(y->data, y->dtype, (n * C + c) * out_plane + p, acc);
			}
		}
		if (ox_kernel_should_abort(ctx))
		{
			free(combo_off);
			free(combo_w);
			return ox_fail(ctx->st, OX_CANCELED, "GridSample: canceled");
		}
	}
	free(combo_off);
	free(combo_w);
	return OX_OK;
}

/* i-th of len evenly spaced positions in [-1, 1] */
static double
affine_base(int64_t i, int64_t len, bool align_corners)
{
	if (align_corners)
		return len > 1 ? -1.0 + 2.0 * (double) i / (double) (len - 1) : 0.0;
	return -1.0 + (2.0 * (double) i + 1.0) / (double) len;
}

ox_code
ox_vision_affine_grid_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *theta = ox_in_tensor(ctx, 0);
	const ox_tensor *size = ox_in_tensor(ctx, 1);
	int64_t		align = ox_attr_int(ctx->node, "align_corners", 0);
	char		b1[OX_VISION_SHAPE_LEN];
	int64_t		sz[5];
	int64_t		dims[5];
	int			nd;
	int64_t		N,
				D,
				H,
				W;
	ox_tensor  *y;
	int64_t		o = 0;

	if (align != 0 && align != 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "AffineGrid: align_corners must be 0 or 1, got %lld", (long long) align);
	if (!theta || !size)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "AffineGrid: theta and size are required");
	if (!ox_dtype_is_float(theta->dtype))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "AffineGrid: theta must be a floating tensor, got %s",
					   ox_dtype_name(theta->dtype));
	if (size->dtype != OX_INT64 || size->rank != 1 || (size->dims[0] != 4 && size->dims[0] != 5))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "AffineGrid: size must be an int64 tensor of 4 or 5 elements, got %s %s",
					   ox_dtype_name(size->dtype), ox_shape_str(size->rank, size->dims, b1, sizeof(b1)));
	nd = size->dims[0] == 4 ? 2 : 3;
	for (int i = 0; i < size->dims[0]; i++)
	{
		sz[i] = OX_DATA(size, int64_t)[i];
		if (sz[i] < 0)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "AffineGrid: size[%d] is negative (%lld)",
						   i, (long long) sz[i]);
	}
	if (theta->rank != 3 || theta->dims[0] != sz[0] || theta->dims[1] != nd || theta->dims[2] != nd + 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "AffineGrid: theta has shape %s, expected [%lld, %d, %d]",
					   ox_shape_str(theta->rank, theta->dims, b1, sizeof(b1)), (long long) sz[0], nd, nd + 1);
	N = sz[0];
	D = nd == 3 ? sz[2] : 1;
	H = sz[nd == 3 ? 3 : 2];
	W = sz[nd == 3 ? 4 : 3];
	dims[0] = N;
	if (nd == 2)
	{
		dims[1] = H;
		dims[2] = W;
		dims[3] = 2;
	}
	else
	{
		dims[1] = D;
		dims[2] = H;
		dims[3] = W;
		dims[4] = 3;
	}
	if (ox_shape_numel(nd + 2, dims) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "AffineGrid: output too large");
	if (!(y = ox_out_tensor(ctx, 0, theta->dtype, nd + 2, dims)))
		return ctx->st->code;
	for (int64_t n = 0; n < N; n++)
	{
		double		t[12];

		for (int i = 0; i < nd * (nd + 1); i++)
			t[i] = ox_load_real(theta->data, theta->dtype, n * nd * (nd + 1) + i);
		for (int64_t d = 0; d < D; d++)
		{
			double		zc = nd == 3 ? affine_base(d, D, align) : 0;

			for (int64_t h = 0; h < H; h++)
			{
				double		yc = affine_base(h, H, align);

				for (int64_t w = 0; w < W; w++)
				{
					double		xc = affine_base(w, W, align);
					double		src[4];

					src[0] = xc;
					src[1] = yc;
					if (nd == 2)
						src[2] = 1.0;
					else
					{
						src[2] = zc;
						src[3] = 1.0;
					}
					for (int row = 0; row < nd; row++)
					{
						double		acc = 0;

						for (int col = 0; col <= nd; col++)
							acc += t[row * (nd + 1) + col] * src[col];
						ox_store_real(y->data, y->dtype, o++, acc);
					}
				}
			}
		}
	}
	return OX_OK;
}
