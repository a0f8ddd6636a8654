/*
 * signal_window.c
 *	  HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix
 *	  (opset 17): generators whose inputs are scalars and whose output type
 *	  comes from the output_datatype attribute.
 *
 * Values are computed in double and converted to the requested type with
 * ONNX Cast semantics (so integer outputs truncate, as the reference does).
 * A periodic window of length N is the first N points of a symmetric window
 * of length N + 1.  A symmetric window of length 1 would divide by zero;
 * it is [1], as in PyTorch and NumPy.
 *
 * MelWeightMatrix follows the ONNX reference exactly, including its choice
 * of num_mel_bins + 2 equal mel steps and floor((dft_length + 1) * hz /
 * sample_rate) for the bin of each band edge.
 */
#include "kernels/cpu/signal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum win_kind
{
	WIN_HANN,
	WIN_HAMMING,
	WIN_BLACKMAN
} win_kind;

typedef struct win_state
{
	win_kind	kind;
	bool		periodic;
	ox_dtype	out;
} win_state;

bool
signal_output_type_ok(int64_t dt)
{
	switch (dt)
	{
		case OX_FLOAT:
		case OX_DOUBLE:
		case OX_FLOAT16:
		case OX_BFLOAT16:
		case OX_INT8:
		case OX_INT16:
		case OX_INT32:
		case OX_INT64:
		case OX_UINT8:
		case OX_UINT16:
		case OX_UINT32:
		case OX_UINT64:
			return true;
		default:
			return false;
	}
}

ox_code
signal_window_prepare(ox_prepare_ctx *pc)
{
	const char *op = pc->node->op_type;
	int64_t		periodic = ox_attr_int(pc->node, "periodic", 1);
	int64_t		out = ox_attr_int(pc->node, "output_datatype", OX_FLOAT);
	win_state  *s;

	if (periodic != 0 && periodic != 1)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "%s: periodic must be 0 or 1, got %lld", op, (long long) periodic);
	if (!signal_output_type_ok(out))
		return ox_fail(pc->st, OX_UNSUPPORTED, "%s: output_datatype %lld is not a supported numeric type", op,
					   (long long) out);
	if (!(s = calloc(1, sizeof(*s))))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s: could not allocate kernel state", op);
	s->kind = strcmp(op, "HannWindow") == 0 ? WIN_HANN :
		strcmp(op, "HammingWindow") == 0 ? WIN_HAMMING : WIN_BLACKMAN;
	s->periodic = periodic == 1;
	s->out = (ox_dtype) out;
	pc->state = s;
	return OX_OK;
}

void
signal_window_free(void *state)
{
	free(state);
}

ox_code
signal_window_run(ox_kernel_ctx *ctx)
{
	const win_state *ws = ctx->state;
	const char *op = ctx->node->op_type;
	const ox_tensor *size_t_in = ox_in_tensor(ctx, 0);
	int64_t		size;
	double		denom;
	double	   *v;
	ox_tensor  *y;
	ox_code		rc;

	if (!size_t_in)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: size is required", op);
	OX_TRY(signal_scalar_int(ctx, op, "size", size_t_in, &size));
	if (size < 0 || size > OX_MAX_ELEMENTS)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: size must be between 0 and %lld, got %lld", op,
					   (long long) OX_MAX_ELEMENTS, (long long) size);
	if (!(y = ox_out_tensor(ctx, 0, ws->out, 1, &size)))
		return ctx->st->code;
	if (size == 0)
		return OX_OK;
	if (!(v = ox_workspace_alloc((size_t) size * sizeof(double), ctx->st, "window")))
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: could not allocate %lld values", op, (long long) size);
	denom = (double) (ws->periodic ? size : size - 1);
	for (int64_t i = 0; i < size; i++)
	{
		double		a = 2.0 * M_PI * (double) i / denom;

		if (denom == 0)
			v[i] = 1.0;
		else if (ws->kind == WIN_HANN)
		{
			double		s = sin(M_PI * (double) i / denom);

			v[i] = s * s;
		}
		else if (ws->kind == WIN_HAMMING)
			v[i] = 25.0 / 46.0 - (1.0 - 25.0 / 46.0) * cos(a);
		else
			v[i] = 0.42 - 0.5 * cos(a) + 0.08 * cos(2.0 * a);
	}
	rc = ox_convert_elements(y->data, y->dtype, v, OX_DOUBLE, size, ctx->st);
	free(v);
	return rc;
}

/* ---- MelWeightMatrix ----------------------------------------------------- */

ox_code
signal_mel_prepare(ox_prepare_ctx *pc)
{
	int64_t		out = ox_attr_int(pc->node, "output_datatype", OX_FLOAT);
	ox_dtype   *s;

	if (!signal_output_type_ok(out))
		return ox_fail(pc->st, OX_UNSUPPORTED, "MelWeightMatrix: output_datatype %lld is not a supported numeric type",
					   (long long) out);
	if (!(s = malloc(sizeof(*s))))
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "MelWeightMatrix: could not allocate kernel state");
	*s = (ox_dtype) out;
	pc->state = s;
	return OX_OK;
}

void
signal_mel_free(void *state)
{
	free(state);
}

static ox_code
mel_scalar_float(ox_kernel_ctx *ctx, const char *what, const ox_tensor *t, double *v)
{
	char		a[128];

	if (!t)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "MelWeightMatrix: %s is required", what);
	if (t->dtype != OX_FLOAT && t->dtype != OX_DOUBLE && t->dtype != OX_FLOAT16 && t->dtype != OX_BFLOAT16)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "MelWeightMatrix: %s must be a float type, got %s", what,
					   ox_dtype_name(t->dtype));
	if (ox_tensor_numel(t) != 1 || t->rank > 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "MelWeightMatrix: %s must be a scalar, got shape %s", what,
					   ox_shape_str(t->rank, t->dims, a, sizeof(a)));
	*v = ox_tensor_get_double(t, 0);
	if (!isfinite(*v))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "MelWeightMatrix: %s must be finite", what);
	return OX_OK;
}

static double
mel_from_hz(double hz)
{
	return 2595.0 * log10(1.0 + hz / 700.0);
}

static double
mel_to_hz(double mel)
{
	return 700.0 * (pow(10.0, mel / 2595.0) - 1.0);
}

ox_code
signal_mel_run(ox_kernel_ctx *ctx)
{
	const ox_dtype out_dt = *(const ox_dtype *) ctx->state;
	const ox_tensor *t;
	int64_t		mel_bins,
				dft_len,
				rate,
				spec_bins,
				dims[2];
	double		lower,
				upper,
				low_mel,
				step;
	int64_t    *edge = NULL;
	double	   *w = NULL;
	ox_tensor  *y;
	ox_code		rc = OX_OK;

	if (!(t = ox_in_tensor(ctx, 0)))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "MelWeightMatrix: num_mel_bins is required");
	OX_TRY(signal_scalar_int(ctx, "MelWeightMatrix", "num_mel_bins", t, &mel_bins));
	if (!(t = ox_in_tensor(ctx, 1)))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "MelWeightMatrix: dft_length is required");
	OX_TRY(signal_scalar_int(ctx, "MelWeightMatrix", "dft_length", t, &dft_len));
	if (!(t = ox_in_tensor(ctx, 2)))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "MelWeightMatrix: sample_rate is required");
	OX_TRY(signal_scalar_int(ctx, "MelWeightMatrix", "sample_rate", t, &rate));
	OX_TRY(mel_scalar_float(ctx, "lower_edge_hertz", ox_in_tensor(ctx, 3), &lower));
	OX_TRY(mel_scalar_float(ctx, "upper_edge_hertz", ox_in_tensor(ctx, 4), &upper));
	if (mel_bins <= 0 || dft_len <= 0 || rate <= 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "MelWeightMatrix: num_mel_bins %lld, dft_length %lld and sample_rate %lld must be positive",
					   (long long) mel_bins, (long long) dft_len, (long long) rate);
	if (lower < 0 || upper < lower)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "MelWeightMatrix: need 0 <= lower_edge_hertz <= upper_edge_hertz, got %g and %g", lower, upper);
	spec_bins = dft_len / 2 + 1;
	dims[0] = spec_bins;
	dims[1] = mel_bins;
	if (ox_shape_numel(2, dims) < 0 || mel_bins > OX_MAX_ELEMENTS / 2)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "MelWeightMatrix: output size overflows");

	/* the bin of each band edge; every one must land inside the spectrum */
	edge = ox_workspace_alloc((size_t) (mel_bins + 2) * sizeof(int64_t), ctx->st, "MelWeightMatrix");
	w = ox_workspace_calloc((size_t) (spec_bins * mel_bins), sizeof(double), ctx->st, "MelWeightMatrix");
	if (!edge || !w)
	{
		rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "MelWeightMatrix: could not allocate the matrix");
		goto done;
	}
	low_mel = mel_from_hz(lower);
	step = (mel_from_hz(upper) - low_mel) / (double) (mel_bins + 2);
	for (int64_t i = 0; i < mel_bins + 2; i++)
	{
		double		hz = mel_to_hz((double) i * step + low_mel);
		double		bin = floor((double) (dft_len + 1) * hz / (double) rate);

		if (!(bin >= 0 && bin < (double) spec_bins))
		{
			rc = ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						 "MelWeightMatrix: band edge %g Hz falls outside the %lld spectrogram bins "
						 "(upper_edge_hertz %g is above the Nyquist frequency?)",
						 hz, (long long) spec_bins, upper);
			goto done;
		}
		edge[i] = (int64_t) bin;
	}
	for (int64_t i = 0; i < mel_bins; i++)
	{
		int64_t		lo = edge[i],
					mid = edge[i + 1],
					hi = edge[i + 2];

		if (mid == lo)
			w[mid * mel_bins + i] = 1.0;
		else
			for (int64_t k = lo; k <= mid; k++)
				w[k * mel_bins + i] = (double) (k - lo) / (double) (mid - lo);
		if (hi > mid)
			for (int64_t k = mid; k < hi; k++)
				w[k * mel_bins + i] = (double) (hi - k) / (double) (hi - mid);
	}
	if (!(y = ox_out_tensor(ctx, 0, out_dt, 2, dims)))
	{
		rc = ctx->st->code;
		goto done;
	}
	rc = ox_convert_elements(y->data, y->dtype, w, OX_DOUBLE, spec_bins * mel_bins, ctx->st);
done:
	free(edge);
	free(w);
	return rc;
}
