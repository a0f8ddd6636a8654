/*
 * quantize_calib.c
 *	  Calibration statistics: from the values a tensor takes on calibration
 *	  data to the range [lo, hi] its quantization covers.
 *
 *	  Every collector keeps the minimum and maximum.  percentile and
 *	  entropy also keep a histogram of HIST_BINS bins over [-R, R]: R is
 *	  set by the first values seen and doubled (merging bin pairs into the
 *	  middle half) whenever later values fall outside, so one pass over the
 *	  data suffices and batches can arrive in any order.  Doubling keeps at
 *	  least HIST_BINS / 4 bins across the largest |x|.
 */
#include "model/quantize.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HIST_BINS 8192			/* even */
#define ENTROPY_BINS 2048		/* |x| histogram the KL search runs on */
#define ENTROPY_LEVELS 128		/* quantization levels it compares with */

typedef struct calib_tensor
{
	double		min;
	double		max;
	int64_t		count;
	double		range;			/* R: histogram covers [-R, R]; 0 before any value */
	double	   *hist;			/* HIST_BINS counts, or NULL (minmax) */
} calib_tensor;

struct ox_calib
{
	int			n;
	ox_calib_method method;
	calib_tensor *t;
};

ox_calib *
ox_calib_new(int n, ox_calib_method method, ox_status *st)
{
	ox_calib   *c = calloc(1, sizeof(*c));

	if (!c || !(c->t = calloc((size_t) (n > 0 ? n : 1), sizeof(calib_tensor))))
	{
		free(c);
		ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate calibration state");
		return NULL;
	}
	c->n = n;
	c->method = method;
	for (int i = 0; i < n; i++)
	{
		c->t[i].min = INFINITY;
		c->t[i].max = -INFINITY;
	}
	return c;
}

void
ox_calib_free(ox_calib *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->n; i++)
		free(c->t[i].hist);
	free(c->t);
	free(c);
}

int64_t
ox_calib_count(const ox_calib *c, int i)
{
	return (i >= 0 && i < c->n) ? c->t[i].count : 0;
}

/* double the histogram's range: bins i and i+1 land in bin HIST_BINS/4 + i/2 */
static void
hist_double(calib_tensor *t)
{
	double		merged[HIST_BINS];

	memset(merged, 0, sizeof(merged));
	for (int i = 0; i < HIST_BINS; i++)
		merged[HIST_BINS / 4 + i / 2] += t->hist[i];
	memcpy(t->hist, merged, sizeof(merged));
	t->range *= 2;
}

ox_code
ox_calib_add(ox_calib *c, int i, const float *x, int64_t n, ox_status *st)
{
	calib_tensor *t;
	float		mn = INFINITY,
				mx = -INFINITY;
	int64_t		finite = 0;

	if (i < 0 || i >= c->n)
		return ox_fail(st, OX_INTERNAL, "calibration tensor %d out of range", i);
	t = &c->t[i];
	for (int64_t k = 0; k < n; k++)
		if (isfinite(x[k]))
		{
			mn = x[k] < mn ? x[k] : mn;
			mx = x[k] > mx ? x[k] : mx;
			finite++;
		}
	if (finite == 0)
		return OX_OK;
	t->min = mn < t->min ? mn : t->min;
	t->max = mx > t->max ? mx : t->max;
	t->count += finite;
	if (c->method == OX_CALIB_MINMAX)
		return OX_OK;

	if (!t->hist)
	{
		t->hist = calloc(HIST_BINS, sizeof(double));
		if (!t->hist)
			return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate a calibration histogram");
	}
	{
		double		amax = fmax(fabs(mn), fabs(mx));

		if (t->range == 0)
			t->range = amax > 0 ? amax : 1e-30;
		while (amax > t->range)
			hist_double(t);
	}
	{
		double		scale = HIST_BINS / (2 * t->range);
		double		r = t->range;

		for (int64_t k = 0; k < n; k++)
		{
			int64_t		b;

			if (!isfinite(x[k]))
				continue;
			b = (int64_t) ((x[k] + r) * scale);
			b = b < 0 ? 0 : (b >= HIST_BINS ? HIST_BINS - 1 : b);
			t->hist[b] += 1;
		}
	}
	return OX_OK;
}

/* |x| histogram: bin j covers [j, j + 1) * range / (HIST_BINS / 2) */
static void
fold_abs(const calib_tensor *t, double *abs_hist)
{
	for (int j = 0; j < HIST_BINS / 2; j++)
		abs_hist[j] = t->hist[HIST_BINS / 2 + j] + t->hist[HIST_BINS / 2 - 1 - j];
}

static void
percentile_range(const calib_tensor *t, double pct, bool symmetric, ox_quant_range *out)
{
	double		total = 0;
	double		bw = 2 * t->range / HIST_BINS;

	for (int b = 0; b < HIST_BINS; b++)
		total += t->hist[b];
	if (symmetric)
	{
		double		abs_hist[HIST_BINS / 2];
		double		acc = 0;
		double		amax = fmax(fabs(t->min), fabs(t->max));
		double		thr = amax;

		fold_abs(t, abs_hist);
		for (int j = 0; j < HIST_BINS / 2; j++)
		{
			acc += abs_hist[j];
			if (acc >= total * pct / 100.0)
			{
				thr = (j + 1) * bw;
				break;
			}
		}
		thr = fmin(thr, amax);
		out->lo = (float) -thr;
		out->hi = (float) thr;
	}
	else
	{
		double		cut = total * (100.0 - pct) / 200.0;
		double		acc = 0;
		double		lo = t->min,
					hi = t->max;
		int			b;

		for (b = 0; b < HIST_BINS; b++)
		{
			acc += t->hist[b];
			if (acc > cut)
				break;
		}
		lo = fmax(lo, -t->range + b * bw);
		acc = 0;
		for (b = HIST_BINS - 1; b >= 0; b--)
		{
			acc += t->hist[b];
			if (acc > cut)
				break;
		}
		hi = fmin(hi, -t->range + (b + 1) * bw);
		if (lo > hi)
			lo = hi;
		out->lo = (float) lo;
		out->hi = (float) hi;
	}
}

/*
 * TensorRT's KL calibration on the |x| histogram: for each candidate
 * threshold i (in bins), P is the histogram clipped at i with the clipped
 * mass added to its last bin, Q is P merged into ENTROPY_LEVELS levels and
 * spread back over P's non-empty bins; the threshold with the smallest
 * KL(P || Q) wins.
 */
static double
entropy_threshold(const calib_tensor *t)
{
	double		abs_hist[HIST_BINS / 2];
	double		h[ENTROPY_BINS];
	double		p[ENTROPY_BINS];
	int			per = (HIST_BINS / 2) / ENTROPY_BINS;
	double		bw = t->range / (HIST_BINS / 2) * per;
	int			last = 0;
	double		best_kl = INFINITY;
	int			best = ENTROPY_BINS;

	fold_abs(t, abs_hist);
	for (int j = 0; j < ENTROPY_BINS; j++)
	{
		h[j] = 0;
		for (int k = 0; k < per; k++)
			h[j] += abs_hist[j * per + k];
		if (h[j] > 0)
			last = j + 1;
	}
	if (last <= ENTROPY_LEVELS)
		return last * bw;
	for (int i = ENTROPY_LEVELS; i <= last; i++)
	{
		double		outliers = 0,
					psum = 0,
					qsum = 0,
					kl = 0;
		double		q[ENTROPY_BINS];

		memcpy(p, h, sizeof(double) * (size_t) i);
		for (int j = i; j < last; j++)
			outliers += h[j];
		p[i - 1] += outliers;
		/* merge into levels of i / LEVELS bins (the last takes the rest) */
		for (int lvl = 0; lvl < ENTROPY_LEVELS; lvl++)
		{
			int			b0 = lvl * (i / ENTROPY_LEVELS);
			int			b1 = lvl == ENTROPY_LEVELS - 1 ? i : b0 + i / ENTROPY_LEVELS;
			double		sum = 0;
			int			nz = 0;

			/* Q is built from the unclipped bins, spread over P's non-empty ones */
			for (int j = b0; j < b1; j++)
			{
				sum += h[j];
				nz += p[j] > 0;
			}
			for (int j = b0; j < b1; j++)
				q[j] = (p[j] > 0 && nz > 0) ? sum / nz : 0;
		}
		for (int j = 0; j < i; j++)
		{
			psum += p[j];
			qsum += q[j];
		}
		if (psum <= 0 || qsum <= 0)
			continue;
		for (int j = 0; j < i; j++)
		{
			double		pj = p[j] / psum,
						qj = q[j] / qsum;

			if (pj > 0)
				kl += qj > 0 ? pj * log(pj / qj) : pj * 30.0;	/* a missing level costs a lot */
		}
		if (kl < best_kl)
		{
			best_kl = kl;
			best = i;
		}
	}
	return (best + 0.5) * bw;
}

ox_code
ox_calib_ranges(ox_calib *c, double percentile, bool symmetric, ox_quant_range *out,
				ox_status *st)
{
	if (c->method == OX_CALIB_PERCENTILE && !(percentile > 0 && percentile <= 100))
		return ox_fail(st, OX_INVALID_ARGUMENT, "percentile must be in (0, 100], got %g", percentile);
	for (int i = 0; i < c->n; i++)
	{
		calib_tensor *t = &c->t[i];

		if (t->count == 0)
		{
			out[i].lo = 0;
			out[i].hi = 0;
			continue;
		}
		out[i].lo = (float) t->min;
		out[i].hi = (float) t->max;
		if (c->method == OX_CALIB_PERCENTILE && t->hist)
			percentile_range(t, percentile, symmetric, &out[i]);
		else if (c->method == OX_CALIB_ENTROPY && t->hist)
		{
			double		thr = entropy_threshold(t);

			out[i].lo = (float) fmax(t->min, -thr);
			out[i].hi = (float) fmin(t->max, thr);
		}
	}
	return OX_OK;
}
