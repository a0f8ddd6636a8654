/*
 * tensor_resize.c
 *	  Resize (opset 10 onwards), its predecessor Upsample, and Col2Im.
 *
 * Resize follows the ONNX reference implementation, which is separable: it
 * resizes one axis at a time, in the order the axes are listed.  For each
 * output position along an axis it maps the coordinate back to the input
 * (coordinate_transformation_mode), takes a window of n neighbours (edge
 * indices clamped) and weights them with n coefficients (nearest: one-hot,
 * linear: 2 taps, cubic: 4 taps, more with antialias when downsampling).
 *
 * Nearest mode never mixes values, so it runs as a pure gather in the input
 * type (strings included).  Linear and cubic run in double precision and
 * round back to the input type, like the reference.
 */
#include "kernels/cpu/tensor_ops.h"

#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum resize_mode
{
	RESIZE_NEAREST,
	RESIZE_LINEAR,
	RESIZE_CUBIC
} resize_mode;

typedef enum coord_mode
{
	COORD_HALF_PIXEL,
	COORD_HALF_PIXEL_SYMMETRIC,
	COORD_PYTORCH_HALF_PIXEL,
	COORD_ALIGN_CORNERS,
	COORD_ASYMMETRIC,
	COORD_TF_HALF_PIXEL_FOR_NEAREST,
	COORD_TF_CROP_AND_RESIZE
} coord_mode;

typedef enum nearest_mode
{
	NEAREST_ROUND_PREFER_FLOOR,
	NEAREST_ROUND_PREFER_CEIL,
	NEAREST_FLOOR,
	NEAREST_CEIL
} nearest_mode;

typedef enum aspect_policy
{
	ASPECT_STRETCH,
	ASPECT_NOT_LARGER,
	ASPECT_NOT_SMALLER
} aspect_policy;

typedef struct resize_state
{
	bool		upsample;		/* the Upsample op */
	resize_mode mode;
	coord_mode	coord;
	nearest_mode nearest;
	aspect_policy aspect;
	double		cubic_a;
	bool		exclude_outside;
	double		extrapolation;
	bool		antialias;
	int			n_axes;			/* -1: all axes */
	int64_t		axes[OX_MAX_RANK];
	int			n_attr_scales;	/* Upsample-7 scales attribute */
	float		attr_scales[OX_MAX_RANK];
} resize_state;

#define NAMED(s, name) (strcmp((s), (name)) == 0)

ox_code
oxt_resize_prepare(ox_prepare_ctx *pc)
{
	const ox_node *node = pc->node;
	resize_state *s = calloc(1, sizeof(resize_state));
	const char *mode = ox_attr_string(node, "mode", "nearest");
	bool		legacy;
	ox_code		rc = OX_OK;

	if (!s)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s: could not allocate state", node->op_type);
	s->upsample = NAMED(node->op_type, "Upsample");
	/* Upsample and Resize-10 use asymmetric coordinates and floor for nearest */
	legacy = s->upsample || node->opset < 11;
	s->n_axes = -1;
	if (NAMED(mode, "nearest"))
		s->mode = RESIZE_NEAREST;
	else if (NAMED(mode, "linear") || (s->upsample && NAMED(mode, "bilinear")))
		s->mode = RESIZE_LINEAR;
	else if (NAMED(mode, "cubic") && !legacy)
		s->mode = RESIZE_CUBIC;
	else
	{
		rc = ox_fail(pc->st, OX_UNSUPPORTED, "%s: unsupported mode \"%s\"", node->op_type, mode);
		goto fail;
	}
	if (legacy)
	{
		s->coord = COORD_ASYMMETRIC;
		s->nearest = NEAREST_FLOOR;
	}
	else
	{
		const char *c = ox_attr_string(node, "coordinate_transformation_mode", "half_pixel");
		const char *nm = ox_attr_string(node, "nearest_mode", "round_prefer_floor");

		if (NAMED(c, "half_pixel"))
			s->coord = COORD_HALF_PIXEL;
		else if (NAMED(c, "half_pixel_symmetric") && node->opset >= 19)
			s->coord = COORD_HALF_PIXEL_SYMMETRIC;
		else if (NAMED(c, "pytorch_half_pixel"))
			s->coord = COORD_PYTORCH_HALF_PIXEL;
		else if (NAMED(c, "align_corners"))
			s->coord = COORD_ALIGN_CORNERS;
		else if (NAMED(c, "asymmetric"))
			s->coord = COORD_ASYMMETRIC;
		else if (NAMED(c, "tf_half_pixel_for_nearest") && node->opset < 13)
			s->coord = COORD_TF_HALF_PIXEL_FOR_NEAREST;
		else if (NAMED(c, "tf_crop_and_resize"))
			s->coord = COORD_TF_CROP_AND_RESIZE;
		else
		{
			rc = ox_fail(pc->st, OX_UNSUPPORTED, "Resize: unsupported coordinate_transformation_mode \"%s\"", c);
			goto fail;
		}
		if (NAMED(nm, "round_prefer_floor"))
			s->nearest = NEAREST_ROUND_PREFER_FLOOR;
		else if (NAMED(nm, "round_prefer_ceil"))
			s->nearest = NEAREST_ROUND_PREFER_CEIL;
		else if (NAMED(nm, "floor"))
			s->nearest = NEAREST_FLOOR;
		else if (NAMED(nm, "ceil"))
			s->nearest = NEAREST_CEIL;
		else
		{
			rc = ox_fail(pc->st, OX_UNSUPPORTED, "Resize: unsupported nearest_mode \"%s\"", nm);
			goto fail;
		}
		s->cubic_a = ox_attr_float(node, "cubic_coeff_a", -0.75f);
		s->exclude_outside = ox_attr_int(node, "exclude_outside", 0) != 0;
		s->extrapolation = ox_attr_float(node, "extrapolation_value", 0.0f);
	}
	if (!s->upsample && node->opset >= 18)
	{
		const char *k = ox_attr_string(node, "keep_aspect_ratio_policy", "stretch");
		const int64_t *axes;
		int			na = ox_attr_ints(node, "axes", &axes);

		s->antialias = ox_attr_int(node, "antialias", 0) != 0;
		if (NAMED(k, "stretch"))
			s->aspect = ASPECT_STRETCH;
		else if (NAMED(k, "not_larger"))
			s->aspect = ASPECT_NOT_LARGER;
		else if (NAMED(k, "not_smaller"))
			s->aspect = ASPECT_NOT_SMALLER;
		else
		{
			rc = ox_fail(pc->st, OX_UNSUPPORTED, "Resize: unsupported keep_aspect_ratio_policy \"%s\"", k);
			goto fail;
		}
		if (ox_node_attr(node, "axes"))
		{
			if (na > OX_MAX_RANK)
			{
				rc = ox_fail(pc->st, OX_INVALID_MODEL, "Resize: too many axes (%d)", na);
				goto fail;
			}
			s->n_axes = na;
			if (na > 0)
				memcpy(s->axes, axes, sizeof(int64_t) * na);
		}
		if (s->antialias && s->mode == RESIZE_NEAREST)
		{
			rc = ox_fail(pc->st, OX_UNSUPPORTED, "Resize: antialias is not supported with mode nearest");
			goto fail;
		}
	}
	if (s->upsample && node->opset < 9)
	{
		const float *f;
		int			n = ox_attr_floats(node, "scales", &f);

		if (n > OX_MAX_RANK)
		{
			rc = ox_fail(pc->st, OX_INVALID_MODEL, "Upsample: too many scales (%d)", n);
			goto fail;
		}
		s->n_attr_scales = n;
		if (n > 0)
			memcpy(s->attr_scales, f, sizeof(float) * n);
	}
	pc->state = s;
	return OX_OK;
fail:
	free(s);
	return rc;
}

void
oxt_resize_free(void *state)
{
	free(state);
}

/* one axis to resize */
typedef struct axis_plan
{
	int			axis;
	double		scale;
	int64_t		in;
	int64_t		out;
	double		roi_start;
	double		roi_end;
} axis_plan;

/* source coordinate of output position x; *extrapolate for tf_crop_and_resize outside the input */
static double
source_coord(const resize_state *s, const axis_plan *p, int64_t x, bool *extrapolate)
{
	double		out_w = p->scale * (double) p->in;
	double		in = (double) p->in;
	double		xo;

	*extrapolate = false;
	switch (s->coord)
	{
		case COORD_ALIGN_CORNERS:
			return out_w == 1 ? 0.0 : x * (in - 1) / (out_w - 1);
		case COORD_ASYMMETRIC:
			return x / p->scale;
		case COORD_TF_CROP_AND_RESIZE:
			if (out_w == 1)
				xo = (p->roi_end - p->roi_start) * (in - 1) / 2;
			else
				xo = x * (p->roi_end - p->roi_start) * (in - 1) / (out_w - 1);
			xo += p->roi_start * (in - 1);
			*extrapolate = xo < 0 || xo > in - 1;
			return xo;
		case COORD_PYTORCH_HALF_PIXEL:
			return out_w == 1 ? -0.5 : (x + 0.5) / p->scale - 0.5;
		case COORD_TF_HALF_PIXEL_FOR_NEAREST:
			return (x + 0.5) / p->scale;
		case COORD_HALF_PIXEL_SYMMETRIC:
			{
				double		adjustment = (double) p->out / out_w;
				double		offset = in / 2 * (1 - adjustment);

				return offset + (x + 0.5) / p->scale - 0.5;
			}
		case COORD_HALF_PIXEL:
		default:
			return (x + 0.5) / p->scale - 0.5;
	}
}

#define MAX_TAPS 64

static double
cubic_weight(double x, double A)
{
	x = fabs(x);
	if (x <= 1)
		return ((A + 2) * x - (A + 3)) * x * x + 1;
	if (x < 2)
		return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
	return 0;
}

/*
 * Coefficients and the first neighbour index for output position x.
 * Returns the tap count (0 when the position is extrapolated).
 */
static int
taps_for(const resize_state *s, const axis_plan *p, int64_t x, double *c, int64_t *start,
		 ox_status *st, bool *bad)
{
	bool		extrap;
	double		xo = source_coord(s, p, x, &extrap);
	double		ratio;
	double		pad,
				xp,
				pf,
				frac;
	int			n;
	int64_t		offset;

	*bad = false;
	if (extrap)
		return 0;
	ratio = xo == floor(xo) ? 1.0 : xo - floor(xo);
	switch (s->mode)
	{
		case RESIZE_NEAREST:
			n = 2;
			if (ratio == 1.0)
			{
				c[0] = 0;
				c[1] = 1;
			}
			else
			{
				bool		second;

				switch (s->nearest)
				{
					case NEAREST_ROUND_PREFER_FLOOR:
						second = ratio > 0.5;
						break;
					case NEAREST_ROUND_PREFER_CEIL:
						second = ratio >= 0.5;
						break;
					case NEAREST_FLOOR:
						second = false;
						break;
					default:
						second = true;
						break;
				}
				c[0] = second ? 0 : 1;
				c[1] = second ? 1 : 0;
			}
			break;
		case RESIZE_LINEAR:
			if (s->antialias)
			{
				double		sc = p->scale < 1 ? p->scale : 1;
				int64_t		first = (int64_t) floor(-1 / sc) + 1;
				double		sum = 0;

				n = (int) (2 - 2 * first);
				if (n > MAX_TAPS || n < 1)
				{
					*bad = true;
					ox_fail(st, OX_UNSUPPORTED, "Resize: antialias with scale %g needs too many taps", p->scale);
					return 0;
				}
				for (int j = 0; j < n; j++)
				{
					double		a = (first + j - ratio) * sc;
					double		v = 1 - fabs(a);

					c[j] = v < 0 ? 0 : v > 1 ? 1 : v;
					sum += c[j];
				}
				for (int j = 0; j < n; j++)
					c[j] /= sum;
			}
			else
			{
				n = 2;
				c[0] = 1 - ratio;
				c[1] = ratio;
			}
			break;
		case RESIZE_CUBIC:
		default:
			if (s->antialias)
			{
				double		sc = p->scale < 1 ? p->scale : 1;
				int64_t		first = (int64_t) floor(-2 / sc) + 1;
				double		sum = 0;

				n = (int) (2 - 2 * first);
				if (n > MAX_TAPS || n < 1)
				{
					*bad = true;
					ox_fail(st, OX_UNSUPPORTED, "Resize: antialias with scale %g needs too many taps", p->scale);
					return 0;
				}
				for (int j = 0; j < n; j++)
				{
					c[j] = cubic_weight(sc * (first + j - ratio), s->cubic_a);
					sum += c[j];
				}
				for (int j = 0; j < n; j++)
					c[j] /= sum;
			}
			else
			{
				double		A = s->cubic_a;

				n = 4;
				c[0] = ((A * (ratio + 1) - 5 * A) * (ratio + 1) + 8 * A) * (ratio + 1) - 4 * A;
				c[1] = ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1;
				c[2] = ((A + 2) * (1 - ratio) - (A + 3)) * (1 - ratio) * (1 - ratio) + 1;
				c[3] = ((A * ((1 - ratio) + 1) - 5 * A) * ((1 - ratio) + 1) + 8 * A) * ((1 - ratio) + 1) - 4 * A;
			}
			break;
	}
	/* the n neighbours nearest to xo, ties to the smaller index (reference) */
	pad = ceil(n / 2.0);
	xp = xo + pad;
	pf = floor(xp);
	frac = xp - pf;
	if (n % 2 == 0)
		offset = frac == 0 ? -(n / 2) : -(n / 2) + 1;
	else
		offset = frac <= 0.5 ? -((n - 1) / 2) : -((n - 1) / 2) + 1;
	*start = (int64_t) pf + offset - (int64_t) pad;
	if (s->exclude_outside)
	{
		double		sum = 0;

		for (int j = 0; j < n; j++)
		{
			int64_t		idx = *start + j;

			if (idx < 0 || idx >= p->in)
				c[j] = 0;
			sum += c[j];
		}
		if (sum != 0)
			for (int j = 0; j < n; j++)
				c[j] /= sum;
	}
	return n;
}

static inline int64_t
clamp_index(int64_t i, int64_t n)
{
	return i < 0 ? 0 : i >= n ? n - 1 : i;
}

/* nearest: per-axis source index maps (-1 = extrapolate), then one gather */
static ox_code
resize_nearest(ox_kernel_ctx *ctx, const resize_state *s, const ox_tensor *x, ox_tensor *out,
			   const axis_plan *plans, int n_plans)
{
	int			r = x->rank;
	int64_t    *maps[OX_MAX_RANK] = {NULL};
	int64_t		xs[OX_MAX_RANK];
	int64_t		n = ox_tensor_numel(out);
	size_t		es = ox_dtype_size(x->dtype);
	uint64_t	extrap[2] = {0};
	ox_string	empty = {NULL, 0};
	const void *extrap_p = x->dtype == OX_STRING ? (const void *) &empty : extrap;
	ox_code		rc = OX_OK;
	double		ev = s->extrapolation;

	if (x->dtype != OX_STRING)
	{
		if (!ox_dtype_is_float(x->dtype))
			ev = nearbyint(ev);
		OX_TRY(ox_convert_elements(extrap, x->dtype, &ev, OX_DOUBLE, 1, ctx->st));
	}
	for (int k = 0; k < n_plans && rc == OX_OK; k++)
	{
		const axis_plan *p = &plans[k];
		int64_t    *m = ox_workspace_alloc(sizeof(int64_t) * (p->out ? p->out : 1), ctx->st, "Resize");

		if (!m)
		{
			rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Resize: could not allocate an index map");
			break;
		}
		maps[p->axis] = m;
		for (int64_t o = 0; o < p->out; o++)
		{
			double		c[MAX_TAPS];
			int64_t		start = 0;
			bool		bad;
			int			taps = taps_for(s, p, o, c, &start, ctx->st, &bad);

			m[o] = taps == 0 ? -1 : clamp_index(start + (c[1] > c[0] ? 1 : 0), p->in);
		}
	}
	oxt_strides(r, x->dims, xs);
	if (rc == OX_OK && r > 0)
	{
		/* row by row: the outer indices give a base offset, the last axis a gather */
		int64_t		len = out->dims[r - 1];
		int64_t		rows = n / len;
		const int64_t *m = maps[r - 1];

		for (int64_t row = 0; row < rows && rc == OX_OK; row++)
		{
			char	   *d = (char *) out->data + (size_t) (row * len) * es;
			const char *base;
			int64_t		off = 0;
			int64_t		rem = row;
			bool		outside = false;

			/* scales make outputs of any size: stay cancelable */
			if (ox_kernel_poll(ctx, len))
			{
				rc = ctx->st->code;
				break;
			}
			for (int k = r - 2; k >= 0; k--)
			{
				int64_t		i = rem % out->dims[k];
				int64_t		v = maps[k] ? maps[k][i] : i;

				rem /= out->dims[k];
				if (v < 0)
					outside = true;
				off += v * xs[k];
			}
			base = (const char *) x->data + (size_t) off * es;
			if (outside)
			{
				rc = oxt_fill(ctx, x->dtype, d, extrap_p, len);
				continue;
			}
			if (x->dtype == OX_STRING)
			{
				for (int64_t j = 0; j < len && rc == OX_OK; j++)
					rc = oxt_copy_elems(ctx, OX_STRING, d + j * es,
										m && m[j] < 0 ? extrap_p : base + (m ? m[j] : j) * es, 1);
				continue;
			}
			if (!m)
			{
				memcpy(d, base, (size_t) len * es);
				continue;
			}
#define NEAREST_ROW(T) \
			for (int64_t j = 0; j < len; j++) \
				((T *) d)[j] = m[j] < 0 ? *(const T *) extrap_p : ((const T *) base)[m[j]]
			switch (es)
			{
				case 1:
					NEAREST_ROW(uint8_t);
					break;
				case 2:
					NEAREST_ROW(uint16_t);
					break;
				case 4:
					NEAREST_ROW(uint32_t);
					break;
				case 8:
					NEAREST_ROW(uint64_t);
					break;
				default:
					for (int64_t j = 0; j < len; j++)
						memcpy(d + j * es, m[j] < 0 ? extrap_p : base + m[j] * es, es);
					break;
			}
#undef NEAREST_ROW
		}
	}
	else if (rc == OX_OK)
		rc = oxt_copy_elems(ctx, x->dtype, out->data, x->data, 1);
	for (int k = 0; k < r; k++)
		free(maps[k]);
	return rc;
}

/* linear / cubic: resize a double buffer one axis at a time */
static ox_code
resize_interp(ox_kernel_ctx *ctx, const resize_state *s, const ox_tensor *x, ox_tensor *out,
			  const axis_plan *plans, int n_plans)
{
	int			r = x->rank;
	int64_t		dims[OX_MAX_RANK];
	int64_t		n = ox_tensor_numel(x);
	double	   *cur = ox_workspace_alloc(sizeof(double) * (n ? n : 1), ctx->st, "Resize");
	ox_code		rc = OX_OK;

	if (!cur)
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Resize: could not allocate a work buffer");
	if ((rc = ox_convert_elements(cur, OX_DOUBLE, x->data, x->dtype, n, ctx->st)) != OX_OK)
		goto done;
	memcpy(dims, x->dims, sizeof(int64_t) * r);
	for (int k = 0; k < n_plans; k++)
	{
		const axis_plan *p = &plans[k];
		int64_t		outer = 1,
					inner = 1,
					nn;
		double	   *next,
				   *coef;
		int64_t    *starts;
		int		   *ntaps;

		for (int i = 0; i < p->axis; i++)
			outer *= dims[i];
		for (int i = p->axis + 1; i < r; i++)
			inner *= dims[i];
		nn = outer * p->out * inner;
		next = ox_workspace_alloc(sizeof(double) * (nn ? nn : 1), ctx->st, "Resize");
		coef = ox_workspace_alloc(sizeof(double) * MAX_TAPS * (p->out ? p->out : 1), ctx->st, "Resize");
		starts = ox_workspace_alloc(sizeof(int64_t) * (p->out ? p->out : 1), ctx->st, "Resize");
		ntaps = ox_workspace_alloc(sizeof(int) * (p->out ? p->out : 1), ctx->st, "Resize");
		if (!next || !coef || !starts || !ntaps)
		{
			free(next);
			free(coef);
			free(starts);
			free(ntaps);
			rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Resize: could not allocate a work buffer");
			goto done;
		}
		for (int64_t o = 0; o < p->out && rc == OX_OK; o++)
		{
			bool		bad;

			ntaps[o] = taps_for(s, p, o, coef + o * MAX_TAPS, &starts[o], ctx->st, &bad);
			if (bad)
				rc = ctx->st->code;
		}
		for (int64_t a = 0; a < outer && rc == OX_OK; a++)
			for (int64_t o = 0; o < p->out && rc == OX_OK; o++)
			{
				double	   *d = next + (a * p->out + o) * inner;
				const double *c = coef + o * MAX_TAPS;

				if (ox_kernel_poll(ctx, inner * (ntaps[o] + 1)))
				{
					rc = ctx->st->code;
					break;
				}

				if (ntaps[o] == 0)
				{
					for (int64_t i = 0; i < inner; i++)
						d[i] = s->extrapolation;
					continue;
				}
				for (int64_t i = 0; i < inner; i++)
					d[i] = 0;
				for (int j = 0; j < ntaps[o]; j++)
				{
					const double *src = cur + (a * p->in + clamp_index(starts[o] + j, p->in)) * inner;

					if (c[j] != 0)
						for (int64_t i = 0; i < inner; i++)
							d[i] += c[j] * src[i];
				}
			}
		free(coef);
		free(starts);
		free(ntaps);
		free(cur);
		cur = next;
		dims[p->axis] = p->out;
		if (rc != OX_OK)
			goto done;
	}
	n = ox_tensor_numel(out);
	if (!ox_dtype_is_float(x->dtype))
		for (int64_t i = 0; i < n; i++)
			cur[i] = nearbyint(cur[i]);
	rc = ox_convert_elements(out->data, out->dtype, cur, OX_DOUBLE, n, ctx->st);
done:
	free(cur);
	return rc;
}

/*
 * A float tensor resized on its last two axes (H, then W, as listed), every
 * output position inside the input: the bilinear or bicubic upsampling at
 * the end of a segmentation network ([1, 21, 28, 28] to [1, 21, 224, 224]
 * in LR-ASPP: 10.7 ms through resize_interp, a double buffer of the whole
 * tensor per axis and a call per output element).  Row by row instead: the
 * taps of each output row summed over the input's width into one row of
 * doubles, then each output column's taps from it.  The same arithmetic in
 * the same order as resize_interp (double, zero coefficients skipped, H
 * before W, rounded to float once): the same bits.  Taps are per output
 * position, tap-major: rows[t * hout + o] the clamped source row of output
 * row o's tap t, with hcoef likewise, cols and wcoef the same for the
 * columns (a coefficient of 0 pads a position with fewer taps).
 */
typedef struct resize2d_job
{
	ox_kernel_ctx *ctx;
	const float *x;
	float	   *y;
	int64_t		hin,
				win,
				hout,
				wout;
	int			nh,
				nw;
	const int64_t *rows;
	const double *hcoef;
	const int64_t *cols;
	const double *wcoef;
	bool		avx2;
	bool		avx512;
	bool		oom;
} resize2d_job;

#define RESIZE2D_STACK_WIDTH 512

/*
 * out[ox] for ox from o0 on: the column taps of the row summed in tmp.
 * Never inlined: the vector versions call it for their last columns, and
 * inside a function built for AVX-512 (which implies FMA) the compiler
 * would fuse its multiply-adds, a different rounding.
 */
__attribute__((noinline))
static void
resize2d_columns(const resize2d_job *j, const double *tmp, int64_t o0, float *out)
{
	for (int64_t ox = o0; ox < j->wout; ox++)
	{
		double		acc = 0;

		for (int t = 0; t < j->nw; t++)
		{
			double		c = j->wcoef[t * j->wout + ox];

			if (c != 0)
				acc += c * tmp[j->cols[t * j->wout + ox]];
		}
		out[ox] = (float) acc;
	}
}

/*
 * Four columns at a time, their taps gathered: a product whose coefficient
 * is 0 is masked to +0 rather than skipped, which adds nothing to a sum
 * that started at +0 (it never becomes -0), so the bits are the scalar
 * loop's.  No "fma" target: every product is rounded before its sum, as
 * there.  (An upsampling by 8 ran at 7 cycles an output one at a time.)
 */
__attribute__((target("avx2")))
static void
resize2d_columns_avx2(const resize2d_job *j, const double *tmp, float *out)
{
	const __m256d zero = _mm256_setzero_pd();
	int64_t		ox = 0;

	for (; ox + 4 <= j->wout; ox += 4)
	{
		__m256d		acc = zero;

		for (int t = 0; t < j->nw; t++)
		{
			__m256d		c = _mm256_loadu_pd(j->wcoef + t * j->wout + ox);
			__m256i		idx = _mm256_loadu_si256((const __m256i *) (j->cols + t * j->wout + ox));
			__m256d		v = _mm256_i64gather_pd(tmp, idx, 8);
			/* NaN counts as nonzero, as c != 0 says */
			__m256d		keep = _mm256_cmp_pd(c, zero, _CMP_NEQ_UQ);

			acc = _mm256_add_pd(acc, _mm256_and_pd(_mm256_mul_pd(c, v), keep));
		}
		_mm_storeu_ps(out + ox, _mm256_cvtpd_ps(acc));
	}
	/* GCC makes the call below a jump without the vzeroupper of a return */
	_mm256_zeroupper();
	resize2d_columns(j, tmp, ox, out);
}

/* the same eight columns at a time (AVX-512: LR-ASPP's upsampling 0.8x the time of four) */
__attribute__((target("avx512f")))
static void
resize2d_columns_avx512(const resize2d_job *j, const double *tmp, float *out)
{
	const __m512d zero = _mm512_setzero_pd();
	int64_t		ox = 0;

	for (; ox + 8 <= j->wout; ox += 8)
	{
		__m512d		acc = zero;

		for (int t = 0; t < j->nw; t++)
		{
			__m512d		c = _mm512_loadu_pd(j->wcoef + t * j->wout + ox);
			__m512i		idx = _mm512_loadu_si512((const void *) (j->cols + t * j->wout + ox));
			__m512d		v = _mm512_i64gather_pd(idx, tmp, 8);
			__mmask8	keep = _mm512_cmp_pd_mask(c, zero, _CMP_NEQ_UQ);

			acc = _mm512_add_pd(acc, _mm512_maskz_mul_pd(keep, c, v));
		}
		_mm256_storeu_ps(out + ox, _mm512_cvtpd_ps(acc));
	}
	/*
	 * GCC makes the call below a jump without the vzeroupper of a return:
	 * the caller's SSE code then ran with the upper halves dirty, at half
	 * the speed (LR-ASPP's upsampling 1.47 ms instead of 0.74)
	 */
	_mm256_zeroupper();
	resize2d_columns(j, tmp, ox, out);
}

/* output rows [r0, r1) of all the planes, row r being plane r / hout's row r % hout */
static void
resize2d_rows(void *arg, int64_t r0, int64_t r1)
{
	resize2d_job *j = arg;
	double		stack[RESIZE2D_STACK_WIDTH];
	double	   *tmp = j->win <= RESIZE2D_STACK_WIDTH ? stack : malloc(sizeof(double) * (size_t) j->win);

	if (!tmp)
	{
		__atomic_store_n(&j->oom, true, __ATOMIC_RELAXED);
		return;
	}
	for (int64_t r = r0; r < r1; r++)
	{
		int64_t		oy = r % j->hout;
		const float *plane = j->x + (r / j->hout) * j->hin * j->win;
		float	   *out = j->y + r * j->wout;

		if (ox_kernel_poll(j->ctx, j->win * j->nh + j->wout * j->nw))
			break;
		for (int64_t i = 0; i < j->win; i++)
			tmp[i] = 0;
		for (int t = 0; t < j->nh; t++)
		{
			double		c = j->hcoef[t * j->hout + oy];
			const float *src = plane + j->rows[t * j->hout + oy] * j->win;

			if (c != 0)
				for (int64_t i = 0; i < j->win; i++)
					tmp[i] += c * (double) src[i];
		}
		if (j->avx512)
			resize2d_columns_avx512(j, tmp, out);
		else if (j->avx2)
			resize2d_columns_avx2(j, tmp, out);
		else
			resize2d_columns(j, tmp, 0, out);
	}
	if (tmp != stack)
		free(tmp);
}

/* what resize2d_taps made of an axis */
typedef enum taps_made
{
	TAPS_MADE,
	TAPS_OUTSIDE,				/* a position outside the input: not the row path's */
	TAPS_FAILED					/* st says why */
} taps_made;

/*
 * The taps of every output position of axis plan p (NULL: the axis is
 * kept, one tap of 1 at the same position) padded to *ntaps each, in
 * workspace the caller frees (nothing allocated unless TAPS_MADE)
 */
static taps_made
resize2d_taps(const resize_state *s, const axis_plan *p, int64_t n, ox_status *st, int64_t **idx,
			  double **coef, int *ntaps)
{
	double		c[MAX_TAPS];
	int64_t		start;
	int			most = 1;
	bool		bad;

	*idx = NULL;
	*coef = NULL;
	for (int64_t o = 0; p && o < n; o++)
	{
		int			k = taps_for(s, p, o, c, &start, st, &bad);

		if (bad)
			return TAPS_FAILED;
		if (k == 0)
			return TAPS_OUTSIDE;
		most = k > most ? k : most;
	}
	*idx = ox_workspace_alloc(sizeof(int64_t) * (size_t) (n * most), st, "Resize");
	*coef = *idx ? ox_workspace_alloc(sizeof(double) * (size_t) (n * most), st, "Resize") : NULL;
	if (!*coef)
	{
		free(*idx);
		*idx = NULL;
		return TAPS_FAILED;
	}
	for (int64_t o = 0; o < n; o++)
	{
		int			k = p ? taps_for(s, p, o, c, &start, st, &bad) : 1;

		if (!p)
		{
			c[0] = 1;
			start = o;
		}
		for (int t = 0; t < most; t++)
		{
			(*idx)[t * n + o] = t < k ? clamp_index(start + t, p ? p->in : n) : 0;
			(*coef)[t * n + o] = t < k ? c[t] : 0;
		}
	}
	*ntaps = most;
	return TAPS_MADE;
}

/*
 * resize_2d_float: true when it resized (or failed: ctx->st says which);
 * false when the case is not its own (resize_interp then does it)
 */
static bool
resize_2d_float(ox_kernel_ctx *ctx, const resize_state *s, const ox_tensor *x, ox_tensor *out,
				const axis_plan *plans, int n_plans)
{
	int			r = x->rank;
	const axis_plan *ph = NULL,
			   *pw = NULL;
	resize2d_job job;
	int64_t    *rows = NULL,
			   *cols = NULL;
	double	   *hcoef = NULL,
			   *wcoef = NULL;
	taps_made	made;

	if (x->dtype != OX_FLOAT || r < 2 || n_plans < 1 || n_plans > 2)
		return false;
	for (int k = 0; k < n_plans; k++)
	{
		if (plans[k].axis == r - 2 && !pw && !ph)
			ph = &plans[k];
		else if (plans[k].axis == r - 1 && !pw)
			pw = &plans[k];
		else
			return false;		/* another axis, or W before H */
	}
	memset(&job, 0, sizeof(job));
	job.hin = x->dims[r - 2];
	job.win = x->dims[r - 1];
	job.hout = out->dims[r - 2];
	job.wout = out->dims[r - 1];
	made = resize2d_taps(s, ph, job.hout, ctx->st, &rows, &hcoef, &job.nh);
	if (made == TAPS_MADE)
		made = resize2d_taps(s, pw, job.wout, ctx->st, &cols, &wcoef, &job.nw);
	if (made == TAPS_MADE)
	{
		job.ctx = ctx;
		job.x = x->data;
		job.y = out->data;
		job.rows = rows;
		job.hcoef = hcoef;
		job.cols = cols;
		job.wcoef = wcoef;
		job.avx2 = __builtin_cpu_supports("avx2");
		job.avx512 = __builtin_cpu_supports("avx512f");
		/* rows of a few thousand multiply-adds per chunk */
		ox_parallel_for(ctx, ox_tensor_numel(out) / job.wout,
						4096 / (job.win * job.nh + job.wout * job.nw + 1) + 1, resize2d_rows, &job);
		if (job.oom && ctx->st->code == OX_OK)
			ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Resize: could not allocate a row buffer");
	}
	free(rows);
	free(hcoef);
	free(cols);
	free(wcoef);
	return made != TAPS_OUTSIDE;
}

/* read a float tensor (scales, roi) of up to max entries */
static ox_code
read_floats(ox_kernel_ctx *ctx, const ox_tensor *t, double *out, int max, int *n, const char *what)
{
	int64_t		cnt = ox_tensor_numel(t);

	if (!ox_dtype_is_float(t->dtype))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: %s must be a float tensor, got %s",
					   ctx->node->op_type, what, ox_dtype_name(t->dtype));
	if (cnt < 0 || cnt > max)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: %s has %lld entries, at most %d allowed",
					   ctx->node->op_type, what, (long long) cnt, max);
	for (int64_t i = 0; i < cnt; i++)
		out[i] = ox_tensor_get_double(t, i);
	*n = (int) cnt;
	return OX_OK;
}

ox_code
oxt_resize_run(ox_kernel_ctx *ctx)
{
	const resize_state *s = ctx->state;
	const ox_tensor *x = oxt_input(ctx, 0, "X");
	const ox_tensor *t_roi = NULL,
			   *t_scales = NULL,
			   *t_sizes = NULL;
	double		scales[OX_MAX_RANK];
	double		roi[2 * OX_MAX_RANK];
	int64_t		sizes[OX_MAX_RANK];
	int			axes[OX_MAX_RANK];
	int			naxes,
				nscales = 0,
				nsizes = 0,
				nroi = 0;
	double		full_scale[OX_MAX_RANK];
	int64_t		out_dims[OX_MAX_RANK];
	axis_plan	plans[OX_MAX_RANK];
	int			n_plans = 0;
	ox_tensor  *out;
	int			r;

	if (!x)
		return ctx->st->code;
	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "%s: kernel state is missing", ctx->node->op_type);
	if (oxt_numel(ctx, x, "X") < 0)
		return ctx->st->code;
	r = x->rank;

	/* where the scales, sizes and roi come from */
	if (s->upsample)
	{
		if (ctx->node->opset < 9)
		{
			nscales = s->n_attr_scales;
			for (int i = 0; i < nscales; i++)
				scales[i] = s->attr_scales[i];
		}
		else if (!(t_scales = oxt_input(ctx, 1, "scales")))
			return ctx->st->code;
	}
	else if (ctx->node->opset < 11)
	{
		if (!(t_scales = oxt_input(ctx, 1, "scales")))
			return ctx->st->code;
	}
	else
	{
		t_roi = ox_in_tensor(ctx, 1);
		t_scales = ox_in_tensor(ctx, 2);
		t_sizes = ox_in_tensor(ctx, 3);
	}
	if (t_scales)
		OX_TRY(read_floats(ctx, t_scales, scales, OX_MAX_RANK, &nscales, "scales"));
	if (t_sizes)
		OX_TRY(oxt_read_ints(ctx, t_sizes, sizes, OX_MAX_RANK, &nsizes, "sizes"));
	if (t_roi && s->coord == COORD_TF_CROP_AND_RESIZE)
		OX_TRY(read_floats(ctx, t_roi, roi, 2 * OX_MAX_RANK, &nroi, "roi"));

	/* the axes that scales/sizes/roi describe */
	if (s->n_axes >= 0)
	{
		naxes = s->n_axes;
		for (int i = 0; i < naxes; i++)
		{
			OX_TRY(oxt_axis(ctx, s->axes[i], r, &axes[i], "axis"));
			for (int j = 0; j < i; j++)
				if (axes[j] == axes[i])
					return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Resize: axis %d is listed twice", axes[i]);
		}
	}
	else
	{
		naxes = r;
		for (int i = 0; i < r; i++)
			axes[i] = i;
	}
	if (nscales > 0 && nsizes > 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: only one of scales and sizes may be given",
					   ctx->node->op_type);
	if (nscales == 0 && nsizes == 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: one of scales and sizes must be given",
					   ctx->node->op_type);
	if ((nscales > 0 && nscales != naxes) || (nsizes > 0 && nsizes != naxes))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "%s: %s has %d entries but %d axes are resized", ctx->node->op_type,
					   nscales ? "scales" : "sizes", nscales ? nscales : nsizes, naxes);
	if (nroi > 0 && nroi != 2 * naxes)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Resize: roi has %d entries, expected %d",
					   nroi, 2 * naxes);

	for (int i = 0; i < r; i++)
	{
		full_scale[i] = 1.0;
		out_dims[i] = x->dims[i];
	}
	if (nscales > 0)
	{
		for (int i = 0; i < naxes; i++)
		{
			double		v = scales[i] * (double) x->dims[axes[i]];

			if (!(scales[i] > 0) || !(v <= (double) OX_MAX_ELEMENTS))
				return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: scale %g for axis %d is not valid",
							   ctx->node->op_type, scales[i], axes[i]);
			full_scale[axes[i]] = scales[i];
			out_dims[axes[i]] = (int64_t) floor(v);
		}
	}
	else
	{
		double		pick = 0;

		for (int i = 0; i < naxes; i++)
		{
			int64_t		in = x->dims[axes[i]];

			if (sizes[i] < 0 || sizes[i] > OX_MAX_ELEMENTS || (in == 0 && sizes[i] != 0))
				return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Resize: size %lld for axis %d (of %lld) is not valid",
							   (long long) sizes[i], axes[i], (long long) in);
			full_scale[axes[i]] = in ? (double) sizes[i] / (double) in : 1.0;
			out_dims[axes[i]] = sizes[i];
			if (i == 0 || (s->aspect == ASPECT_NOT_LARGER ? full_scale[axes[i]] < pick :
						   full_scale[axes[i]] > pick))
				pick = full_scale[axes[i]];
		}
		if (s->aspect != ASPECT_STRETCH)
			for (int i = 0; i < naxes; i++)
			{
				full_scale[axes[i]] = pick;
				out_dims[axes[i]] = (int64_t) (pick * (double) x->dims[axes[i]] + 0.5);
			}
	}
	if (ox_shape_numel(r, out_dims) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "%s: output has too many elements", ctx->node->op_type);

	/* axes that actually change, in the listed order */
	for (int i = 0; i < naxes; i++)
	{
		int			a = axes[i];
		axis_plan  *p = &plans[n_plans];

		p->axis = a;
		p->scale = full_scale[a];
		p->in = x->dims[a];
		p->out = out_dims[a];
		p->roi_start = nroi ? roi[i] : 0.0;
		p->roi_end = nroi ? roi[naxes + i] : 1.0;
		if (fabs(p->scale - 1.0) <= 1e-9 && p->in == p->out &&
			fabs(p->roi_start) <= 1e-9 && fabs(p->roi_end - 1.0) <= 1e-9)
			continue;
		if (p->in == 0 || p->out == 0)
			continue;
		n_plans++;
	}
	if (!(out = ox_out_tensor(ctx, 0, x->dtype, r, out_dims)))
		return ctx->st->code;
	if (ox_tensor_numel(out) == 0)
		return OX_OK;
	if (s->mode == RESIZE_NEAREST)
		return resize_nearest(ctx, s, x, out, plans, n_plans);
	if (x->dtype == OX_STRING || x->dtype == OX_COMPLEX64 || x->dtype == OX_COMPLEX128)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Resize: %s input needs mode nearest",
					   ox_dtype_name(x->dtype));
	if (resize_2d_float(ctx, s, x, out, plans, n_plans))
		return ctx->st->code;
	return resize_interp(ctx, s, x, out, plans, n_plans);
}

/* ---------------------------------------------------------------------
 * Col2Im
 * --------------------------------------------------------------------- */

ox_code
oxt_col2im_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "input");
	const ox_tensor *ti = oxt_input(ctx, 1, "image_shape");
	const ox_tensor *tb = oxt_input(ctx, 2, "block_shape");
	int64_t		img[OX_MAX_RANK],
				blk[OX_MAX_RANK],
				dil[OX_MAX_RANK],
				pads[2 * OX_MAX_RANK],
				str[OX_MAX_RANK],
				npos[OX_MAX_RANK];
	int			nd,
				nb;
	const int64_t *a;
	int			na;
	int64_t		N,
				C,
				B = 1,
				L = 1,
				spatial = 1;
	int64_t		dims[OX_MAX_RANK + 2];
	ox_tensor  *out;
	double	   *acc;
	int64_t		total;
	ox_code		rc;

	if (!x || !ti || !tb)
		return ctx->st->code;
	if (oxt_numel(ctx, x, "input") < 0)
		return ctx->st->code;
	OX_TRY(oxt_read_ints(ctx, ti, img, OX_MAX_RANK - 2, &nd, "image_shape"));
	OX_TRY(oxt_read_ints(ctx, tb, blk, OX_MAX_RANK - 2, &nb, "block_shape"));
	if (nd != nb || nd < 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Col2Im: image_shape has %d entries, block_shape %d",
					   nd, nb);
	if (x->rank != 3)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Col2Im: input must be 3-D, got rank %d", x->rank);
	for (int i = 0; i < nd; i++)
	{
		dil[i] = 1;
		str[i] = 1;
		pads[i] = pads[nd + i] = 0;
	}
	if ((na = ox_attr_ints(ctx->node, "dilations", &a)) > 0)
	{
		if (na != nd)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Col2Im: dilations has %d entries, expected %d", na, nd);
		memcpy(dil, a, sizeof(int64_t) * nd);
	}
	if ((na = ox_attr_ints(ctx->node, "strides", &a)) > 0)
	{
		if (na != nd)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Col2Im: strides has %d entries, expected %d", na, nd);
		memcpy(str, a, sizeof(int64_t) * nd);
	}
	if ((na = ox_attr_ints(ctx->node, "pads", &a)) > 0)
	{
		if (na != 2 * nd)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Col2Im: pads has %d entries, expected %d", na, 2 * nd);
		memcpy(pads, a, sizeof(int64_t) * 2 * nd);
	}
	for (int i = 0; i < nd; i++)
	{
		int64_t		span;

		if (img[i] < 0 || blk[i] < 1 || dil[i] < 1 || str[i] < 1 || pads[i] < 0 || pads[nd + i] < 0 ||
			img[i] > OX_MAX_ELEMENTS || blk[i] > OX_MAX_ELEMENTS || dil[i] > OX_MAX_ELEMENTS ||
			pads[i] > OX_MAX_ELEMENTS || pads[nd + i] > OX_MAX_ELEMENTS)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Col2Im: invalid geometry on spatial axis %d", i);
		span = img[i] + pads[i] + pads[nd + i] - dil[i] * (blk[i] - 1) - 1;
		npos[i] = span < 0 ? 0 : span / str[i] + 1;
		B *= blk[i];
		L *= npos[i];
		spatial *= img[i];
		if (B > OX_MAX_ELEMENTS || L > OX_MAX_ELEMENTS || spatial > OX_MAX_ELEMENTS)
			return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "Col2Im: geometry is too large");
	}
	N = x->dims[0];
	if (x->dims[1] % B != 0 || x->dims[2] != L)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "Col2Im: input is [%lld, %lld, %lld], expected [N, C*%lld, %lld]",
					   (long long) x->dims[0], (long long) x->dims[1], (long long) x->dims[2],
					   (long long) B, (long long) L);
	C = x->dims[1] / B;
	dims[0] = N;
	dims[1] = C;
	for (int i = 0; i < nd; i++)
		dims[2 + i] = img[i];
	if ((total = ox_shape_numel(nd + 2, dims)) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "Col2Im: output has too many elements");
	if (x->dtype == OX_STRING || ox_dtype_size(x->dtype) == 0 || x->dtype == OX_COMPLEX64 ||
		x->dtype == OX_COMPLEX128)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Col2Im: unsupported type %s", ox_dtype_name(x->dtype));
	if (!(out = ox_out_tensor(ctx, 0, x->dtype, nd + 2, dims)))
		return ctx->st->code;
	if (!(acc = ox_workspace_calloc(total ? total : 1, sizeof(double), ctx->st, "Col2Im")))
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Col2Im: could not allocate a work buffer");
	for (int64_t nc = 0; nc < N * C; nc++)
		for (int64_t b = 0; b < B; b++)
		{
			int64_t		bi[OX_MAX_RANK];
			int64_t		rem = b;

			for (int i = nd - 1; i >= 0; i--)
			{
				bi[i] = rem % blk[i];
				rem /= blk[i];
			}
			for (int64_t l = 0; l < L; l++)
			{
				int64_t		li = l;
				int64_t		off = 0;
				bool		inside = true;

				for (int i = nd - 1; i >= 0 && inside; i--)
				{
					int64_t		p = li % npos[i];
					int64_t		pos = p * str[i] - pads[i] + bi[i] * dil[i];
					int64_t		mul = 1;

					li /= npos[i];
					if (pos < 0 || pos >= img[i])
						inside = false;
					for (int j = i + 1; j < nd; j++)
						mul *= img[j];
					off += pos * mul;
				}
				if (inside)
					acc[nc * spatial + off] += ox_tensor_get_double(x, (nc * B + b) * L + l);
			}
		}
	rc = ox_convert_elements(out->data, out->dtype, acc, OX_DOUBLE, total, ctx->st);
	free(acc);
	return rc;
}
