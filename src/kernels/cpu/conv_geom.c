/*
 * conv_geom.c
 *	  Sliding-window geometry shared by Conv, ConvTranspose and the pools
 *	  (kernel, strides, dilations, pads, auto_pad, ceil_mode), and small
 *	  helpers of the nn kernels: scratch buffers and float16 staging.
 *
 * Output sizes follow ONNX Runtime, which the ONNX node tests agree with:
 *	 NOTSET:  out = floor((in + pb + pe - dk) / s) + 1, or with ceil_mode
 *			  ceil(...) + 1, dropping a last window that would start in the
 *			  end padding;
 *	 VALID:   no padding;
 *	 SAME_*:  out = ceil(in / s), the padding needed split evenly with the
 *			  odd unit at the end (UPPER) or at the beginning (LOWER);
 * where dk = (k - 1) * d + 1 is the dilated kernel extent.
 */
#include "kernels/cpu/nn.h"

#include <string.h>

/* attribute values above this are refused, so size arithmetic cannot overflow */
#define NN_MAX_WINDOW_VALUE ((int64_t) 1 << 31)

void *
nn_scratch(int64_t n, size_t esize, ox_status *st, const char *what)
{
	size_t		bytes = nn_bytes(n, esize);

	if (n < 0 || (n > 0 && bytes == 0))
	{
		ox_fail(st, OX_LIMIT_EXCEEDED, "%s: buffer of %lld elements is too large",
				what, (long long) n);
		return NULL;
	}
	/* counted against max_run_memory; non-NULL even for empty buffers */
	return ox_workspace_aligned(bytes, st, what);
}

float *
nn_to_float(const ox_tensor *t, ox_status *st)
{
	int64_t		n = ox_tensor_numel(t);
	float	   *f = nn_scratch(n, sizeof(float), st, "float16 staging");

	if (!f)
		return NULL;
	if (t->dtype == OX_FLOAT16)
	{
		const uint16_t *h = t->data;

		for (int64_t i = 0; i < n; i++)
			f[i] = ox_half_to_float(h[i]);
	}
	else if (ox_convert_elements(f, OX_FLOAT, t->data, t->dtype, n, st) != OX_OK)
	{
		ox_aligned_free(f);
		return NULL;
	}
	return f;
}

void
nn_float_to_half(uint16_t *dst, const float *src, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		dst[i] = ox_float_to_half(src[i]);
}

static ox_code
read_window_ints(const ox_node *node, const char *name, int64_t lo, int64_t *dst,
				 int *count, ox_status *st)
{
	const int64_t *v;
	int			n = ox_attr_ints(node, name, &v);

	if (n > (strcmp(name, "pads") == 0 ? 2 * OX_MAX_RANK : OX_MAX_RANK))
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: attribute %s has %d values, too many",
					   node->op_type, name, n);
	for (int i = 0; i < n; i++)
	{
		if (v[i] < lo || v[i] > NN_MAX_WINDOW_VALUE)
			return ox_fail(st, OX_INVALID_ARGUMENT,
						   "%s: attribute %s has value %lld at position %d, expected %lld to %lld",
						   node->op_type, name, (long long) v[i], i, (long long) lo,
						   (long long) NN_MAX_WINDOW_VALUE);
		dst[i] = v[i];
	}
	*count = n;
	return OX_OK;
}

ox_code
nn_window_parse(const ox_node *node, nn_window *w, bool allow_ceil, ox_status *st)
{
	const char *ap = ox_attr_string(node, "auto_pad", "NOTSET");
	int64_t		ceil_mode = ox_attr_int(node, "ceil_mode", 0);

	memset(w, 0, sizeof(*w));
	OX_TRY(read_window_ints(node, "kernel_shape", 1, w->kernel, &w->n_kernel, st));
	OX_TRY(read_window_ints(node, "strides", 1, w->strides, &w->n_strides, st));
	OX_TRY(read_window_ints(node, "dilations", 1, w->dilations, &w->n_dilations, st));
	OX_TRY(read_window_ints(node, "pads", 0, w->pads, &w->n_pads, st));

	if (strcmp(ap, "NOTSET") == 0 || ap[0] == '\0')
		w->auto_pad = NN_PAD_NOTSET;
	else if (strcmp(ap, "SAME_UPPER") == 0)
		w->auto_pad = NN_PAD_SAME_UPPER;
	else if (strcmp(ap, "SAME_LOWER") == 0)
		w->auto_pad = NN_PAD_SAME_LOWER;
	else if (strcmp(ap, "VALID") == 0)
		w->auto_pad = NN_PAD_VALID;
	else
		return ox_fail(st, OX_UNSUPPORTED,
					   "%s: auto_pad \"%s\" is not supported (NOTSET, SAME_UPPER, SAME_LOWER, VALID)",
					   node->op_type, ap);

	if (ceil_mode != 0 && ceil_mode != 1)
		return ox_fail(st, OX_INVALID_ARGUMENT, "%s: ceil_mode is %lld, expected 0 or 1",
					   node->op_type, (long long) ceil_mode);
	if (ceil_mode && !allow_ceil)
		return ox_fail(st, OX_UNSUPPORTED, "%s: ceil_mode is not supported", node->op_type);
	w->ceil_mode = ceil_mode == 1;
	return OX_OK;
}

ox_code
nn_window_resolve(const nn_window *w, const char *op, int nsp, const int64_t *in_sp,
				  const int64_t *kernel, nn_geom *g, ox_status *st)
{
	int			off = NN_MAX_SPATIAL - nsp;
	bool		pool = kernel == NULL;	/* the window's own kernel_shape: a pool */

	if (nsp < 1 || nsp > NN_MAX_SPATIAL)
		return ox_fail(st, OX_UNSUPPORTED,
					   "%s: %d spatial dimensions are not supported (1 to %d)",
					   op, nsp, NN_MAX_SPATIAL);
	if (kernel && w->n_kernel > 0)
	{
		bool		same = w->n_kernel == nsp;

		for (int i = 0; same && i < nsp; i++)
			same = w->kernel[i] == kernel[i];
		if (!same)
		{
			char		a[NN_SHAPE_LEN],
						b[NN_SHAPE_LEN];

			return ox_fail(st, OX_INVALID_ARGUMENT,
						   "%s: kernel_shape %s does not match the weight's spatial shape %s", op,
						   ox_shape_str(w->n_kernel, w->kernel, a, sizeof(a)),
						   ox_shape_str(nsp, kernel, b, sizeof(b)));
		}
	}
	if (!kernel)
	{
		if (w->n_kernel != nsp)
			return ox_fail(st, OX_INVALID_ARGUMENT,
						   "%s: kernel_shape has %d values but the input has %d spatial dimensions",
						   op, w->n_kernel, nsp);
		kernel = w->kernel;
	}
	if (w->n_strides != 0 && w->n_strides != nsp)
		return ox_fail(st, OX_INVALID_ARGUMENT,
					   "%s: strides has %d values but the input has %d spatial dimensions",
					   op, w->n_strides, nsp);
	if (w->n_dilations != 0 && w->n_dilations != nsp)
		return ox_fail(st, OX_INVALID_ARGUMENT,
					   "%s: dilations has %d values but the input has %d spatial dimensions",
					   op, w->n_dilations, nsp);
	if (w->n_pads != 0 && w->n_pads != 2 * nsp)
		return ox_fail(st, OX_INVALID_ARGUMENT,
					   "%s: pads has %d values, expected %d for %d spatial dimensions",
					   op, w->n_pads, 2 * nsp, nsp);

	g->nsp = nsp;
	for (int c = 0; c < NN_MAX_SPATIAL; c++)
	{
		g->in[c] = g->out[c] = g->k[c] = g->s[c] = g->d[c] = 1;
		g->pb[c] = g->pe[c] = 0;
	}
	for (int i = 0; i < nsp; i++)
	{
		int			c = off + i;
		int64_t		in = in_sp[i],
					k = kernel[i],
					s = w->n_strides ? w->strides[i] : 1,
					d = w->n_dilations ? w->dilations[i] : 1,
					dk,
					pb = 0,
					pe = 0,
					span,
					num,
					out;

		if (k < 1 || k > NN_MAX_WINDOW_VALUE)
			return ox_fail(st, OX_INVALID_ARGUMENT, "%s: kernel size %lld on spatial axis %d is invalid",
						   op, (long long) k, i);
		if (in < 0 || in > OX_MAX_ELEMENTS)
			return ox_fail(st, OX_INVALID_ARGUMENT, "%s: input size %lld on spatial axis %d is invalid",
						   op, (long long) in, i);
		dk = (k - 1) * d + 1;
		switch (w->auto_pad)
		{
			case NN_PAD_NOTSET:
			case NN_PAD_VALID:
				if (w->auto_pad == NN_PAD_NOTSET && w->n_pads)
				{
					pb = w->pads[i];
					pe = w->pads[nsp + i];
				}
				/*
				 * floor(span / s) + 1 windows (ceil(span / s) + 1 with
				 * ceil_mode), the division rounding down also when span is
				 * negative: a kernel larger than the padded input (a small
				 * map in a network made for larger ones), where ceil_mode
				 * still makes one window over it that starts in the begin
				 * padding or the input, as onnxruntime and the ONNX reference
				 * have it
				 */
				span = in + pb + pe - dk;
				num = span + (w->ceil_mode ? s - 1 : 0);
				out = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
				/* the last window must start inside the input or the begin padding */
				if (w->ceil_mode && out > 0 && (out - 1) * s >= in + pb)
					out--;
				/*
				 * a pool with no window: an empty output, as onnxruntime
				 * and the ONNX reference give it; a convolution's kernel
				 * must fit
				 */
				if (out < 1 && pool)
					out = 0;
				else if (out < 1)
					return ox_fail(st, OX_INVALID_ARGUMENT,
								   "%s: kernel extent %lld on spatial axis %d is larger than the padded input size %lld (input %lld, pads %lld + %lld)",
								   op, (long long) dk, i, (long long) (in + pb + pe),
								   (long long) in, (long long) pb, (long long) pe);
				break;
			case NN_PAD_SAME_UPPER:
			case NN_PAD_SAME_LOWER:
				{
					int64_t		need;

					out = (in + s - 1) / s;
					need = (out - 1) * s + dk - in;
					if (need < 0)
						need = 0;
					pb = w->auto_pad == NN_PAD_SAME_UPPER ? need / 2 : (need + 1) / 2;
					pe = need - pb;
					break;
				}
			default:
				return ox_fail(st, OX_INTERNAL, "%s: bad auto_pad", op);
		}
		g->in[c] = in;
		g->out[c] = out;
		g->k[c] = k;
		g->s[c] = s;
		g->d[c] = d;
		g->pb[c] = pb;
		g->pe[c] = pe;
	}
	g->in_size = ox_shape_numel(NN_MAX_SPATIAL, g->in);
	g->out_size = ox_shape_numel(NN_MAX_SPATIAL, g->out);
	g->k_size = ox_shape_numel(NN_MAX_SPATIAL, g->k);
	if (g->in_size < 0 || g->out_size < 0 || g->k_size < 0)
		return ox_fail(st, OX_LIMIT_EXCEEDED, "%s: window sizes overflow", op);
	return OX_OK;
}
