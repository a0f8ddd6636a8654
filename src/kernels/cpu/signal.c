/*
 * signal.c
 *	  DFT (opsets 17 and 20) and STFT (opset 17), the FFT they share, and
 *	  the signal family table.  Windows and MelWeightMatrix live in
 *	  signal_window.c, Det in signal_det.c.
 *
 * Transforms of a power-of-two length use an iterative radix-2 FFT; other
 * lengths use the direct O(n^2) sum over a table of twiddle factors (index
 * k * m mod n, so no angle is computed inside the loops).  All arithmetic
 * is in double, whatever the tensor type, and the twiddles are computed
 * once per run with cos/sin of the exact angle.
 *
 * Complex values are a trailing dimension of 2 (real, imaginary); a
 * trailing 1 means a real signal.  One-sided output (RFFT) keeps bins
 * 0..n/2; one-sided inverse (IRFFT) rebuilds the missing half of the
 * spectrum by conjugate symmetry and returns the real part.  Inverse
 * transforms are scaled by 1/n.  Signals are independent, so they are
 * spread over the intra-op threads, each chunk with its own work buffers.
 */
#include "kernels/cpu/signal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SIG_SHAPE_LEN 192

/* ---- shared helpers ------------------------------------------------------ */

ox_code
signal_scalar_int(ox_kernel_ctx *ctx, const char *op, const char *what, const ox_tensor *t, int64_t *v)
{
	char		a[SIG_SHAPE_LEN];

	if (t->dtype != OX_INT32 && t->dtype != OX_INT64)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: %s must be int32 or int64, got %s", op, what,
					   ox_dtype_name(t->dtype));
	if (ox_tensor_numel(t) != 1 || t->rank > 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: %s must be a scalar, got shape %s", op, what,
					   ox_shape_str(t->rank, t->dims, a, sizeof(a)));
	*v = t->dtype == OX_INT64 ? *(const int64_t *) t->data : *(const int32_t *) t->data;
	return OX_OK;
}

/* ---- FFT ----------------------------------------------------------------- */

typedef struct fft_plan
{
	int64_t		n;
	bool		pow2;
	double	   *cs;				/* cos(2 pi k / n), k < n */
	double	   *sn;				/* sin(2 pi k / n) */
} fft_plan;

static ox_code
fft_plan_init(fft_plan *p, int64_t n, ox_status *st, const char *op)
{
	memset(p, 0, sizeof(*p));
	p->n = n;
	p->pow2 = n > 0 && (n & (n - 1)) == 0;
	p->cs = ox_workspace_alloc((size_t) (n > 0 ? n : 1) * sizeof(double), st, op);
	p->sn = ox_workspace_alloc((size_t) (n > 0 ? n : 1) * sizeof(double), st, op);
	if (!p->cs || !p->sn)
	{
		free(p->cs);
		free(p->sn);
		p->cs = p->sn = NULL;
		return ox_fail(st, OX_OUT_OF_MEMORY, "%s: could not allocate twiddles for length %lld", op, (long long) n);
	}
	for (int64_t k = 0; k < n; k++)
	{
		double		a = 2.0 * M_PI * (double) k / (double) n;

		p->cs[k] = cos(a);
		p->sn[k] = sin(a);
	}
	return OX_OK;
}

static void
fft_plan_free(fft_plan *p)
{
	free(p->cs);
	free(p->sn);
	p->cs = p->sn = NULL;
}

/*
 * Unnormalized transform of (re, im) in place: exponent sign -1 forward,
 * +1 inverse.  tr/ti are n-element scratch for the direct path.
 */
static void
fft_exec(const fft_plan *p, double *re, double *im, double *tr, double *ti, bool inverse)
{
	const int64_t n = p->n;
	const double sign = inverse ? 1.0 : -1.0;

	if (p->pow2)
	{
		for (int64_t i = 1, j = 0; i < n; i++)
		{
			int64_t		bit = n >> 1;

			for (; j & bit; bit >>= 1)
				j ^= bit;
			j ^= bit;
			if (i < j)
			{
				double		t = re[i];

				re[i] = re[j];
				re[j] = t;
				t = im[i];
				im[i] = im[j];
				im[j] = t;
			}
		}
		for (int64_t len = 2; len <= n; len <<= 1)
		{
			const int64_t half = len / 2;
			const int64_t step = n / len;

			for (int64_t i = 0; i < n; i += len)
				for (int64_t k = 0; k < half; k++)
				{
					double		wr = p->cs[k * step],
								wi = sign * p->sn[k * step];
					int64_t		a = i + k,
								b = a + half;
					double		xr = re[b] * wr - im[b] * wi,
								xi = re[b] * wi + im[b] * wr;

					re[b] = re[a] - xr;
					im[b] = im[a] - xi;
					re[a] += xr;
					im[a] += xi;
				}
		}
		return;
	}
	for (int64_t k = 0; k < n; k++)
	{
		double		sr = 0,
					si = 0;
		int64_t		idx = 0;

		for (int64_t m = 0; m < n; m++)
		{
			double		wr = p->cs[idx],
						wi = sign * p->sn[idx];

			sr += re[m] * wr - im[m] * wi;
			si += re[m] * wi + im[m] * wr;
			idx += k;
			if (idx >= n)
				idx -= n;
		}
		tr[k] = sr;
		ti[k] = si;
	}
	memcpy(re, tr, (size_t) n * sizeof(double));
	memcpy(im, ti, (size_t) n * sizeof(double));
}

/* ---- DFT ----------------------------------------------------------------- */

typedef struct dft_state
{
	bool		inverse;
	bool		onesided;
	bool		axis_input;		/* opset >= 20: axis is input 2 */
	int64_t		axis_attr;		/* opset < 20 */
} dft_state;

typedef struct dft_job
{
	const fft_plan *plan;
	const void *x;
	void	   *y;
	ox_dtype	dt;
	int64_t		inner;			/* elements between consecutive signal samples */
	int64_t		n_in;			/* input length along the axis */
	int64_t		n_out;			/* output length along the axis */
	int64_t		n_copy;			/* input samples that enter the transform */
	int64_t		cin;			/* 1 real, 2 complex */
	int64_t		cout;
	bool		inverse;
	bool		irfft;
	bool		oom;
} dft_job;

static ox_code
dft_prepare(ox_prepare_ctx *pc)
{
	int64_t		inverse = ox_attr_int(pc->node, "inverse", 0);
	int64_t		onesided = ox_attr_int(pc->node, "onesided", 0);
	dft_state  *s;

	if ((inverse != 0 && inverse != 1) || (onesided != 0 && onesided != 1))
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "DFT: inverse and onesided must be 0 or 1, got %lld and %lld",
					   (long long) inverse, (long long) onesided);
	if (!(s = calloc(1, sizeof(*s))))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "DFT: could not allocate kernel state");
	s->inverse = inverse == 1;
	s->onesided = onesided == 1;
	s->axis_input = pc->node->opset >= 20;
	s->axis_attr = ox_attr_int(pc->node, "axis", 1);
	pc->state = s;
	return OX_OK;
}

static void
dft_free(void *state)
{
	free(state);
}

static void
dft_signals(void *arg, int64_t begin, int64_t end)
{
	dft_job    *j = arg;
	const int64_t n = j->plan->n;
	const double scale = j->inverse ? 1.0 / (double) n : 1.0;
	double	   *buf = malloc((size_t) 4 * n * sizeof(double));
	double	   *re,
			   *im;

	if (!buf)
	{
		__atomic_store_n(&j->oom, true, __ATOMIC_RELAXED);
		return;
	}
	re = buf;
	im = buf + n;
	for (int64_t s = begin; s < end; s++)
	{
		int64_t		o = s / j->inner;
		int64_t		i = s % j->inner;

		memset(buf, 0, (size_t) 2 * n * sizeof(double));
		for (int64_t m = 0; m < j->n_copy; m++)
		{
			int64_t		at = ((o * j->n_in + m) * j->inner + i) * j->cin;

			re[m] = ox_load_real(j->x, j->dt, at);
			if (j->cin == 2)
				im[m] = ox_load_real(j->x, j->dt, at + 1);
		}
		/* the upper half of a real signal's spectrum mirrors the lower */
		if (j->irfft)
			for (int64_t k = n / 2 + 1; k < n; k++)
			{
				re[k] = re[n - k];
				im[k] = -im[n - k];
			}
		fft_exec(j->plan, re, im, buf + 2 * n, buf + 3 * n, j->inverse);
		for (int64_t k = 0; k < j->n_out; k++)
		{
			int64_t		at = ((o * j->n_out + k) * j->inner + i) * j->cout;

			ox_store_real(j->y, j->dt, at, re[k] * scale);
			if (j->cout == 2)
				ox_store_real(j->y, j->dt, at + 1, im[k] * scale);
		}
	}
	free(buf);
}

static ox_code
dft_run(ox_kernel_ctx *ctx)
{
	const dft_state *ds = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *len_t = ox_in_tensor(ctx, 1);
	const ox_tensor *axis_t = ds->axis_input ? ox_in_tensor(ctx, 2) : NULL;
	char		a[SIG_SHAPE_LEN];
	int64_t		axis = ds->axis_input ? -2 : ds->axis_attr;
	int64_t		n,
				outer,
				dims[OX_MAX_RANK];
	int			r;
	dft_job		j;
	fft_plan	plan;
	ox_tensor  *y;

	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "DFT: input is required");
	if (!ox_dtype_is_float(x->dtype))
		return ox_fail(ctx->st, OX_UNSUPPORTED, "DFT: type %s is not supported", ox_dtype_name(x->dtype));
	r = x->rank;
	if (r < 2 || (x->dims[r - 1] != 1 && x->dims[r - 1] != 2))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "DFT: input must end in a dimension of 1 (real) or 2 (complex), got %s",
					   ox_shape_str(r, x->dims, a, sizeof(a)));
	if (ox_tensor_numel(x) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "DFT: input size overflows");
	if (axis_t)
	{
		if (axis_t->dtype != OX_INT64 && axis_t->dtype != OX_INT32)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "DFT: axis must be int64, got %s",
						   ox_dtype_name(axis_t->dtype));
		OX_TRY(signal_scalar_int(ctx, "DFT", "axis", axis_t, &axis));
	}
	if (axis < -r || axis > r - 2 || axis == -1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "DFT: axis %lld is out of range for input %s",
					   (long long) axis, ox_shape_str(r, x->dims, a, sizeof(a)));
	if (axis < 0)
		axis += r;

	memset(&j, 0, sizeof(j));
	j.dt = x->dtype;
	j.inverse = ds->inverse;
	j.irfft = ds->inverse && ds->onesided;
	j.n_in = x->dims[axis];
	j.cin = x->dims[r - 1];
	if (len_t)
	{
		OX_TRY(signal_scalar_int(ctx, "DFT", "dft_length", len_t, &n));
		if (n <= 0)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "DFT: dft_length must be positive, got %lld", (long long) n);
	}
	else
		n = j.irfft ? 2 * (j.n_in - 1) : j.n_in;
	if (n <= 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "DFT: transform length %lld is not positive (input %s)",
					   (long long) n, ox_shape_str(r, x->dims, a, sizeof(a)));
	if (n > OX_MAX_ELEMENTS / 4)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "DFT: dft_length %lld is too large", (long long) n);
	if (j.irfft)
	{
		j.n_out = n;
		j.cout = 1;
		j.n_copy = j.n_in < n / 2 + 1 ? j.n_in : n / 2 + 1;
	}
	else
	{
		j.n_out = ds->onesided ? n / 2 + 1 : n;
		j.cout = 2;
		j.n_copy = j.n_in < n ? j.n_in : n;
	}
	memcpy(dims, x->dims, sizeof(int64_t) * r);
	dims[axis] = j.n_out;
	dims[r - 1] = j.cout;
	if (ox_shape_numel(r, dims) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "DFT: output size overflows");
	outer = ox_shape_numel((int) axis, x->dims);
	j.inner = ox_shape_numel(r - 2 - (int) axis, x->dims + axis + 1);
	if (!(y = ox_out_tensor(ctx, 0, x->dtype, r, dims)))
		return ctx->st->code;
	if (outer * j.inner == 0 || ox_tensor_numel(y) == 0)
		return OX_OK;
	OX_TRY(fft_plan_init(&plan, n, ctx->st, "DFT"));
	j.plan = &plan;
	j.x = x->data;
	j.y = y->data;
	ox_parallel_for(ctx, outer * j.inner, 1, dft_signals, &j);
	fft_plan_free(&plan);
	if (j.oom)
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "DFT: could not allocate work buffers for length %lld",
					   (long long) n);
	return OX_OK;
}

/* ---- STFT ---------------------------------------------------------------- */

typedef struct stft_job
{
	const fft_plan *plan;
	const void *x;
	const void *window;			/* [frame_length] or NULL */
	void	   *y;
	ox_dtype	dt;
	int64_t		sig_len;
	int64_t		cin;
	int64_t		frames;
	int64_t		step;
	int64_t		bins;
	bool		oom;
} stft_job;

static ox_code
stft_prepare(ox_prepare_ctx *pc)
{
	int64_t		onesided = ox_attr_int(pc->node, "onesided", 1);
	bool	   *s;

	if (onesided != 0 && onesided != 1)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "STFT: onesided must be 0 or 1, got %lld", (long long) onesided);
	if (!(s = malloc(sizeof(*s))))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "STFT: could not allocate kernel state");
	*s = onesided == 1;
	pc->state = s;
	return OX_OK;
}

static void
stft_free(void *state)
{
	free(state);
}

static void
stft_frames(void *arg, int64_t begin, int64_t end)
{
	stft_job   *j = arg;
	const int64_t n = j->plan->n;
	double	   *buf = malloc((size_t) 4 * n * sizeof(double));
	double	   *re,
			   *im;

	if (!buf)
	{
		__atomic_store_n(&j->oom, true, __ATOMIC_RELAXED);
		return;
	}
	re = buf;
	im = buf + n;
	for (int64_t bf = begin; bf < end; bf++)
	{
		int64_t		b = bf / j->frames;
		int64_t		f = bf % j->frames;
		int64_t		start = b * j->sig_len + f * j->step;

		for (int64_t m = 0; m < n; m++)
		{
			double		w = j->window ? ox_load_real(j->window, j->dt, m) : 1.0;

			re[m] = ox_load_real(j->x, j->dt, (start + m) * j->cin) * w;
			im[m] = j->cin == 2 ? ox_load_real(j->x, j->dt, (start + m) * j->cin + 1) * w : 0.0;
		}
		fft_exec(j->plan, re, im, buf + 2 * n, buf + 3 * n, false);
		for (int64_t k = 0; k < j->bins; k++)
		{
			ox_store_real(j->y, j->dt, (bf * j->bins + k) * 2, re[k]);
			ox_store_real(j->y, j->dt, (bf * j->bins + k) * 2 + 1, im[k]);
		}
	}
	free(buf);
}

static ox_code
stft_run(ox_kernel_ctx *ctx)
{
	const bool	onesided = *(const bool *) ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *step_t = ox_in_tensor(ctx, 1);
	const ox_tensor *win = ox_in_tensor(ctx, 2);
	const ox_tensor *len_t = ox_in_tensor(ctx, 3);
	char		a[SIG_SHAPE_LEN];
	int64_t		frame_len,
				dims[4];
	stft_job	j;
	fft_plan	plan;
	ox_tensor  *y;

	if (!x || !step_t)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "STFT: signal and frame_step are required");
	if (!ox_dtype_is_float(x->dtype))
		return ox_fail(ctx->st, OX_UNSUPPORTED, "STFT: type %s is not supported", ox_dtype_name(x->dtype));
	if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "STFT: signal must be [batch, length, 1 or 2], got %s",
					   ox_shape_str(x->rank, x->dims, a, sizeof(a)));
	if (ox_tensor_numel(x) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "STFT: signal size overflows");
	memset(&j, 0, sizeof(j));
	j.dt = x->dtype;
	j.sig_len = x->dims[1];
	j.cin = x->dims[2];
	OX_TRY(signal_scalar_int(ctx, "STFT", "frame_step", step_t, &j.step));
	if (j.step <= 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "STFT: frame_step must be positive, got %lld",
					   (long long) j.step);
	if (win && (win->dtype != x->dtype || win->rank != 1))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "STFT: window must be a 1-D %s tensor, got %s %s",
					   ox_dtype_name(x->dtype), ox_dtype_name(win->dtype),
					   ox_shape_str(win->rank, win->dims, a, sizeof(a)));
	if (len_t)
	{
		OX_TRY(signal_scalar_int(ctx, "STFT", "frame_length", len_t, &frame_len));
		if (win && win->dims[0] != frame_len)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "STFT: window length %lld differs from frame_length %lld",
						   (long long) win->dims[0], (long long) frame_len);
	}
	else
		frame_len = win ? win->dims[0] : j.sig_len;
	if (frame_len <= 0 || frame_len > j.sig_len)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "STFT: frame length %lld must be positive and at most the signal length %lld",
					   (long long) frame_len, (long long) j.sig_len);
	if (onesided && j.cin == 2)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "STFT: onesided output is not possible for a complex signal");
	j.frames = 1 + (j.sig_len - frame_len) / j.step;
	j.bins = onesided ? frame_len / 2 + 1 : frame_len;
	dims[0] = x->dims[0];
	dims[1] = j.frames;
	dims[2] = j.bins;
	dims[3] = 2;
	if (ox_shape_numel(4, dims) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "STFT: output size overflows");
	if (!(y = ox_out_tensor(ctx, 0, x->dtype, 4, dims)))
		return ctx->st->code;
	if (ox_tensor_numel(y) == 0)
		return OX_OK;
	OX_TRY(fft_plan_init(&plan, frame_len, ctx->st, "STFT"));
	j.plan = &plan;
	j.x = x->data;
	j.window = win ? win->data : NULL;
	j.y = y->data;
	ox_parallel_for(ctx, dims[0] * j.frames, 1, stft_frames, &j);
	fft_plan_free(&plan);
	if (j.oom)
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "STFT: could not allocate work buffers for length %lld",
					   (long long) frame_len);
	return OX_OK;
}

/* ---- family table -------------------------------------------------------- */

const ox_kernel_def ox_kernels_signal[] = {
	{"", "DFT", 17, dft_prepare, dft_run, dft_free},
	{"", "STFT", 17, stft_prepare, stft_run, stft_free},
	{"", "HannWindow", 17, signal_window_prepare, signal_window_run, signal_window_free},
	{"", "HammingWindow", 17, signal_window_prepare, signal_window_run, signal_window_free},
	{"", "BlackmanWindow", 17, signal_window_prepare, signal_window_run, signal_window_free},
	{"", "MelWeightMatrix", 17, signal_mel_prepare, signal_mel_run, signal_mel_free},
	{"", "Det", 11, NULL, signal_det_run, NULL},
};
const int	ox_kernels_signal_count = OX_KERNEL_COUNT(ox_kernels_signal);
