/*
 * vision_roi.c
 *	  Box and region ops: NonMaxSuppression and RoiAlign.
 *
 * Both follow the ONNX reference implementations (which mirror
 * onnxruntime), including its quirks: NonMaxSuppression suppresses a box
 * only when IoU is strictly above the threshold, and RoiAlign's "max" mode
 * takes the maximum of the four weighted corner values of each sample.
 */
#include "kernels/cpu/vision.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------- NonMaxSuppression ---------- */

typedef struct nms_cand
{
	float		score;
	int64_t		idx;
} nms_cand;

typedef struct nms_box
{
	float		xmin,
				ymin,
				xmax,
				ymax;
} nms_box;

/* highest score first, lower box index first among equal scores; NaN last */
static int
nms_cand_cmp(const void *a, const void *b)
{
	const nms_cand *x = a;
	const nms_cand *y = b;

	if (x->score > y->score || (isnan(y->score) && !isnan(x->score)))
		return -1;
	if (x->score < y->score || (isnan(x->score) && !isnan(y->score)))
		return 1;
	return x->idx < y->idx ? -1 : (x->idx > y->idx ? 1 : 0);
}

static inline void
nms_minmax(float a, float b, float *lo, float *hi)
{
	if (a >= b)
	{
		*lo = b;
		*hi = a;
	}
	else
	{
		*lo = a;
		*hi = b;
	}
}

static bool
nms_suppress(const nms_box *a, const nms_box *b, float iou_threshold)
{
	float		ix_min = fmaxf(a->xmin, b->xmin);
	float		ix_max = fminf(a->xmax, b->xmax);
	float		iy_min,
				iy_max,
				inter,
				area_a,
				area_b,
				uni;

	if (ix_max <= ix_min)
		return false;
	iy_min = fmaxf(a->ymin, b->ymin);
	iy_max = fminf(a->ymax, b->ymax);
	if (iy_max <= iy_min)
		return false;
	inter = (ix_max - ix_min) * (iy_max - iy_min);
	if (inter <= 0)
		return false;
	area_a = (a->xmax - a->xmin) * (a->ymax - a->ymin);
	area_b = (b->xmax - b->xmin) * (b->ymax - b->ymin);
	uni = area_a + area_b - inter;
	if (area_a <= 0 || area_b <= 0 || uni <= 0)
		return false;
	return inter / uni > iou_threshold;
}

/* a one-element optional input as double; *present false when absent or empty */
static ox_code
nms_scalar(ox_kernel_ctx *ctx, int i, const char *what, double *out, bool *present)
{
	const ox_tensor *t = ox_in_tensor(ctx, i);
	int64_t		n;

	*present = false;
	if (!t)
		return OX_OK;
	n = ox_tensor_numel(t);
	if (n == 0)
		return OX_OK;
	if (n != 1 || t->rank > 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "NonMaxSuppression: %s must hold one element, got %lld", what, (long long) n);
	if (!ox_dtype_is_float(t->dtype) && !ox_dtype_is_int(t->dtype))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "NonMaxSuppression: %s has unsupported type %s",
					   what, ox_dtype_name(t->dtype));
	*out = ox_tensor_get_double(t, 0);
	*present = true;
	return OX_OK;
}

ox_code
ox_vision_nms_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *boxes = ox_in_tensor(ctx, 0);
	const ox_tensor *scores = ox_in_tensor(ctx, 1);
	int64_t		center = ox_attr_int(ctx->node, "center_point_box", 0);
	char		b1[OX_VISION_SHAPE_LEN],
				b2[OX_VISION_SHAPE_LEN];
	double		v;
	bool		have;
	int64_t		max_out = 0;
	float		iou_threshold = 0,
				score_threshold = 0;
	bool		use_score_threshold;
	int64_t		B,
				C,
				NB;
	nms_box    *bx = NULL;
	nms_cand   *cand = NULL;
	int64_t    *sel = NULL;		/* box indices selected in the current class */
	int64_t    *res = NULL;		/* triples */
	int64_t		n_res = 0,
				cap_res = 0;
	ox_tensor  *y;
	int64_t		dims[2];
	ox_code		rc = OX_OK;

	if (center != 0 && center != 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "NonMaxSuppression: center_point_box must be 0 or 1, got %lld", (long long) center);
	if (!boxes || !scores)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "NonMaxSuppression: boxes and scores are required");
	if (boxes->dtype != OX_FLOAT || scores->dtype != OX_FLOAT)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "NonMaxSuppression: boxes and scores must be float, got %s and %s",
					   ox_dtype_name(boxes->dtype), ox_dtype_name(scores->dtype));
	if (boxes->rank != 3 || boxes->dims[2] != 4 || scores->rank != 3 ||
		scores->dims[0] != boxes->dims[0] || scores->dims[2] != boxes->dims[1])
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "NonMaxSuppression: boxes has shape %s and scores %s, expected [B, N, 4] and [B, C, N]",
					   ox_shape_str(boxes->rank, boxes->dims, b1, sizeof(b1)),
					   ox_shape_str(scores->rank, scores->dims, b2, sizeof(b2)));
	if (ox_tensor_numel(boxes) < 0 || ox_tensor_numel(scores) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "NonMaxSuppression: input too large");
	OX_TRY(nms_scalar(ctx, 2, "max_output_boxes_per_class", &v, &have));
	if (have)
		max_out = v > 0 ? (v > (double) INT64_MAX / 2 ? INT64_MAX / 2 : (int64_t) v) : 0;
	if (have && ox_in_tensor(ctx, 2)->dtype != OX_INT64)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "NonMaxSuppression: max_output_boxes_per_class must be int64, got %s",
					   ox_dtype_name(ox_in_tensor(ctx, 2)->dtype));
	OX_TRY(nms_scalar(ctx, 3, "iou_threshold", &v, &have));
	if (have)
	{
		if (!(v >= 0 && v <= 1))
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "NonMaxSuppression: iou_threshold must be in [0, 1], got %g", v);
		iou_threshold = (float) v;
	}
	OX_TRY(nms_scalar(ctx, 4, "score_threshold", &v, &use_score_threshold));
	if (use_score_threshold)
		score_threshold = (float) v;

	B = boxes->dims[0];
	NB = boxes->dims[1];
	C = scores->dims[1];
	if (max_out > 0 && NB > 0 && B > 0 && C > 0)
	{
		bx = ox_workspace_alloc(sizeof(nms_box) * NB, ctx->st, "NonMaxSuppression");
		cand = ox_workspace_alloc(sizeof(nms_cand) * NB, ctx->st, "NonMaxSuppression");
		sel = ox_workspace_alloc(sizeof(int64_t) * NB, ctx->st, "NonMaxSuppression");
		if (!bx || !cand || !sel)
		{
			rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "NonMaxSuppression: out of memory");
			goto done;
		}
	}
	for (int64_t b = 0; b < B && bx; b++)
	{
		const float *bd = OX_DATA(boxes, float) + b * NB * 4;

		for (int64_t i = 0; i < NB; i++)
		{
			const float *p = bd + i * 4;

			if (center)
			{
				bx[i].xmin = p[0] - p[2] / 2;
				bx[i].xmax = p[0] + p[2] / 2;
				bx[i].ymin = p[1] - p[3] / 2;
				bx[i].ymax = p[1] + p[3] / 2;
			}
			else
			{
				nms_minmax(p[1], p[3], &bx[i].xmin, &bx[i].xmax);
				nms_minmax(p[0], p[2], &bx[i].ymin, &bx[i].ymax);
			}
		}
		for (int64_t c = 0; c < C; c++)
		{
			const float *sd = OX_DATA(scores, float) + (b * C + c) * NB;
			int64_t		nc = 0,
						ns = 0;

			for (int64_t i = 0; i < NB; i++)
			{
				if (use_score_threshold && !(sd[i] > score_threshold))
					continue;
				cand[nc].score = sd[i];
				cand[nc].idx = i;
				nc++;
			}
			qsort(cand, nc, sizeof(nms_cand), nms_cand_cmp);
			for (int64_t k = 0; k < nc && ns < max_out; k++)
			{
				bool		keep = true;

				for (int64_t j = 0; j < ns && keep; j++)
					keep = !nms_suppress(&bx[cand[k].idx], &bx[sel[j]], iou_threshold);
				if (!keep)
					continue;
				sel[ns++] = cand[k].idx;
				if (n_res == cap_res)
				{
					int64_t		ncap = cap_res ? cap_res * 2 : 64;
					int64_t    *nr = realloc(res, sizeof(int64_t) * 3 * ncap);

					if (!nr)
					{
						rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "NonMaxSuppression: out of memory");
						goto done;
					}
					res = nr;
					cap_res = ncap;
				}
				res[n_res * 3] = b;
				res[n_res * 3 + 1] = c;
				res[n_res * 3 + 2] = cand[k].idx;
				n_res++;
			}
		}
	}
	dims[0] = n_res;
	dims[1] = 3;
	if (!(y = ox_out_tensor(ctx, 0, OX_INT64, 2, dims)))
	{
		rc = ctx->st->code;
		goto done;
	}
	if (n_res)
		memcpy(y->data, res, sizeof(int64_t) * 3 * n_res);
done:
	free(bx);
	free(cand);
	free(sel);
	free(res);
	return rc;
}

/* ---------- RoiAlign ---------- */

typedef struct roi_state
{
	bool		max_mode;
	bool		half_pixel;
	int64_t		out_h;
	int64_t		out_w;
	int64_t		sampling_ratio;
	double		spatial_scale;
} roi_state;

/* limits that keep a hostile roi from asking for unbounded work */
#define ROI_MAX_GRID 65536
#define ROI_MAX_SAMPLES ((int64_t) 1 << 24)

ox_code
ox_vision_roi_align_prepare(ox_prepare_ctx *pc)
{
	const ox_node *node = pc->node;
	const char *mode = ox_attr_string(node, "mode", "avg");
	const char *ctm = node->opset >= 16 ?
		ox_attr_string(node, "coordinate_transformation_mode", "half_pixel") : "output_half_pixel";
	roi_state	s;

	memset(&s, 0, sizeof(s));
	if (strcmp(mode, "avg") == 0)
		s.max_mode = false;
	else if (strcmp(mode, "max") == 0)
		s.max_mode = true;
	else
		return ox_fail(pc->st, OX_UNSUPPORTED, "RoiAlign: unsupported mode \"%s\"", mode);
	if (strcmp(ctm, "half_pixel") == 0)
		s.half_pixel = true;
	else if (strcmp(ctm, "output_half_pixel") == 0)
		s.half_pixel = false;
	else
		return ox_fail(pc->st, OX_UNSUPPORTED,
					   "RoiAlign: unsupported coordinate_transformation_mode \"%s\"", ctm);
	s.out_h = ox_attr_int(node, "output_height", 1);
	s.out_w = ox_attr_int(node, "output_width", 1);
	s.sampling_ratio = ox_attr_int(node, "sampling_ratio", 0);
	s.spatial_scale = ox_attr_float(node, "spatial_scale", 1.0f);
	if (s.out_h < 1 || s.out_w < 1 || s.out_h > ROI_MAX_GRID || s.out_w > ROI_MAX_GRID)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT,
					   "RoiAlign: output_height and output_width must be in [1, %d], got %lld and %lld",
					   ROI_MAX_GRID, (long long) s.out_h, (long long) s.out_w);
	if (s.sampling_ratio < 0 || s.sampling_ratio > ROI_MAX_GRID)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "RoiAlign: sampling_ratio must be in [0, %d], got %lld",
					   ROI_MAX_GRID, (long long) s.sampling_ratio);
	if (!isfinite(s.spatial_scale))
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "RoiAlign: spatial_scale is not finite");
	if (!(pc->state = malloc(sizeof(s))))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "RoiAlign: out of memory");
	memcpy(pc->state, &s, sizeof(s));
	return OX_OK;
}

typedef struct roi_sample
{
	int64_t		pos[4];
	double		w[4];
} roi_sample;

ox_code
ox_vision_roi_align_run(ox_kernel_ctx *ctx)
{
	const roi_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *rois = ox_in_tensor(ctx, 1);
	const ox_tensor *bi = ox_in_tensor(ctx, 2);
	char		b1[OX_VISION_SHAPE_LEN],
				b2[OX_VISION_SHAPE_LEN];
	int64_t		N,
				C,
				H,
				W,
				R,
				dims[4];
	ox_tensor  *y;
	roi_sample *pre = NULL;
	int64_t		pre_cap = 0;
	ox_code		rc = OX_OK;

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "RoiAlign: prepare did not run");
	if (!x || !rois || !bi)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "RoiAlign: X, rois and batch_indices are required");
	if (!ox_dtype_is_float(x->dtype) || rois->dtype != x->dtype)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "RoiAlign: X and rois must be the same floating type, got %s and %s",
					   ox_dtype_name(x->dtype), ox_dtype_name(rois->dtype));
	if (bi->dtype != OX_INT64 && bi->dtype != OX_INT32)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "RoiAlign: batch_indices must be int64, got %s",
					   ox_dtype_name(bi->dtype));
	if (x->rank != 4)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "RoiAlign: X must be 4-D, got shape %s",
					   ox_shape_str(x->rank, x->dims, b1, sizeof(b1)));
	if (rois->rank != 2 || rois->dims[1] != 4 || bi->rank != 1 || bi->dims[0] != rois->dims[0])
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "RoiAlign: rois has shape %s and batch_indices %s, expected [R, 4] and [R]",
					   ox_shape_str(rois->rank, rois->dims, b1, sizeof(b1)),
					   ox_shape_str(bi->rank, bi->dims, b2, sizeof(b2)));
	if (ox_tensor_numel(x) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "RoiAlign: X too large");
	N = x->dims[0];
	C = x->dims[1];
	H = x->dims[2];
	W = x->dims[3];
	R = rois->dims[0];
	dims[0] = R;
	dims[1] = C;
	dims[2] = s->out_h;
	dims[3] = s->out_w;
	if (ox_shape_numel(4, dims) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "RoiAlign: output too large");
	for (int64_t r = 0; r < R; r++)
	{
		int64_t		b = ox_tensor_get_int64(bi, r);

		if (b < 0 || b >= N)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "RoiAlign: batch_indices[%lld] = %lld is out of range [0, %lld)",
						   (long long) r, (long long) b, (long long) N);
	}
	if (!(y = ox_out_tensor(ctx, 0, x->dtype, 4, dims)))
		return ctx->st->code;
	if (ox_tensor_numel(y) == 0)
		return OX_OK;
	if (H == 0 || W == 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "RoiAlign: X has an empty spatial dimension, shape %s",
					   ox_shape_str(x->rank, x->dims, b1, sizeof(b1)));

	for (int64_t r = 0; r < R; r++)
	{
		double		off = s->half_pixel ? 0.5 : 0.0;
		double		sx = ox_load_real(rois->data, rois->dtype, r * 4) * s->spatial_scale - off;
		double		sy = ox_load_real(rois->data, rois->dtype, r * 4 + 1) * s->spatial_scale - off;
		double		ex = ox_load_real(rois->data, rois->dtype, r * 4 + 2) * s->spatial_scale - off;
		double		ey = ox_load_real(rois->data, rois->dtype, r * 4 + 3) * s->spatial_scale - off;
		double		rw = ex - sx,
					rh = ey - sy,
					bin_h,
					bin_w,
					gh_d,
					gw_d;
		int64_t		gh,
					gw,
					count,
					n_samples,
					k = 0;
		int64_t		b = ox_tensor_get_int64(bi, r);

		if (!s->half_pixel)
		{
			rw = fmax(rw, 1.0);
			rh = fmax(rh, 1.0);
		}
		bin_h = rh / (double) s->out_h;
		bin_w = rw / (double) s->out_w;
		gh_d = s->sampling_ratio > 0 ? (double) s->sampling_ratio : ceil(rh / (double) s->out_h);
		gw_d = s->sampling_ratio > 0 ? (double) s->sampling_ratio : ceil(rw / (double) s->out_w);
		if (!isfinite(sx) || !isfinite(sy) || !isfinite(bin_h) || !isfinite(bin_w) ||
			!(gh_d <= ROI_MAX_GRID) || !(gw_d <= ROI_MAX_GRID))
		{
			rc = ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						 "RoiAlign: roi %lld [%g, %g, %g, %g] is not finite or too large",
						 (long long) r, sx, sy, ex, ey);
			goto done;
		}
		/* a negative extent (half_pixel) gives no samples, as in the reference */
		gh = gh_d > 0 ? (int64_t) gh_d : 0;
		gw = gw_d > 0 ? (int64_t) gw_d : 0;
		count = gh * gw > 1 ? gh * gw : 1;
		n_samples = s->out_h * s->out_w * gh * gw;
		if (n_samples > ROI_MAX_SAMPLES)
		{
			rc = ox_fail(ctx->st, OX_LIMIT_EXCEEDED,
						 "RoiAlign: roi %lld needs %lld samples, more than the limit %lld",
						 (long long) r, (long long) n_samples, (long long) ROI_MAX_SAMPLES);
			goto done;
		}
		if (n_samples > pre_cap)
		{
			roi_sample *np = realloc(pre, sizeof(roi_sample) * n_samples);

			if (!np)
			{
				rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "RoiAlign: out of memory");
				goto done;
			}
			pre = np;
			pre_cap = n_samples;
		}
		/* bilinear taps of every sample point, shared by all channels */
		for (int64_t ph = 0; ph < s->out_h; ph++)
			for (int64_t pw = 0; pw < s->out_w; pw++)
				for (int64_t iy = 0; iy < gh; iy++)
				{
					double		yy = sy + (double) ph * bin_h + ((double) iy + 0.5) * bin_h / (double) gh;

					for (int64_t ix = 0; ix < gw; ix++)
					{
						double		xx = sx + (double) pw * bin_w + ((double) ix + 0.5) * bin_w / (double) gw;
						roi_sample *p = &pre[k++];
						double		yv = yy,
									xv = xx,
									ly,
									lx;
						int64_t		y_lo,
									x_lo,
									y_hi,
									x_hi;

						if (yv < -1.0 || yv > (double) H || xv < -1.0 || xv > (double) W)
						{
							memset(p, 0, sizeof(*p));
							continue;
						}
						yv = fmax(yv, 0.0);
						xv = fmax(xv, 0.0);
						y_lo = (int64_t) yv;
						x_lo = (int64_t) xv;
						if (y_lo >= H - 1)
						{
							y_hi = y_lo = H - 1;
							yv = (double) y_lo;
						}
						else
							y_hi = y_lo + 1;
						if (x_lo >= W - 1)
						{
							x_hi = x_lo = W - 1;
							xv = (double) x_lo;
						}
						else
							x_hi = x_lo + 1;
						ly = yv - (double) y_lo;
						lx = xv - (double) x_lo;
						p->pos[0] = y_lo * W + x_lo;
						p->pos[1] = y_lo * W + x_hi;
						p->pos[2] = y_hi * W + x_lo;
						p->pos[3] = y_hi * W + x_hi;
						p->w[0] = (1 - ly) * (1 - lx);
						p->w[1] = (1 - ly) * lx;
						p->w[2] = ly * (1 - lx);
						p->w[3] = ly * lx;
					}
				}
		for (int64_t c = 0; c < C; c++)
		{
			int64_t		xbase = (b * C + c) * H * W;
			int64_t		ybase = (r * C + c) * s->out_h * s->out_w;
			int64_t		pi = 0;

			for (int64_t o = 0; o < s->out_h * s->out_w; o++)
			{
				double		acc = 0;
				bool		first = true;

				for (int64_t q = 0; q < gh * gw; q++)
				{
					const roi_sample *p = &pre[pi++];
					double		v[4];

					for (int t = 0; t < 4; t++)
						v[t] = p->w[t] * ox_load_real(x->data, x->dtype, xbase + p->pos[t]);
					if (!s->max_mode)
						acc += v[0] + v[1] + v[2] + v[3];
					else
					{
						double		m = fmax(fmax(v[0], v[1]), fmax(v[2], v[3]));

						acc = first ? m : fmax(acc, m);
						first = false;
					}
				}
				if (!s->max_mode)
					acc /= (double) count;
				ox_store_real(y->data, y->dtype, ybase + o, acc);
			}
		}
		if (ox_kernel_should_abort(ctx))
		{
			rc = ox_fail(ctx->st, OX_CANCELED, "RoiAlign: canceled");
			goto done;
		}
	}
done:
	free(pre);
	return rc;
}
