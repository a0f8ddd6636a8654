/*
 * tensor_concat.c
 *	  Block-copy kernels: Concat, Split, Pad, Compress, Trilu and
 *	  ReverseSequence.  They move contiguous runs of elements, so numeric
 *	  types go through memcpy and strings through per-element duplication.
 */
#include "kernels/cpu/tensor_ops.h"

#include <stdlib.h>
#include <string.h>

/* outer = prod(dims[:axis]), inner = prod(dims[axis+1:]) */
static void
split_dims(const ox_tensor *t, int axis, int64_t *outer, int64_t *inner)
{
	*outer = 1;
	*inner = 1;
	for (int i = 0; i < axis; i++)
		*outer *= t->dims[i];
	for (int i = axis + 1; i < t->rank; i++)
		*inner *= t->dims[i];
}

/* ---------------------------------------------------------------------
 * Concat
 * --------------------------------------------------------------------- */

typedef struct concat_job
{
	int			n;
	const ox_tensor **in;
	int64_t    *block;			/* per input: elements per outer step */
	int64_t		out_block;
	char	   *dst;
	size_t		es;
} concat_job;

/*
 * Copy `rows` blocks of SIZE bytes, src rows packed, dst rows `dstride`
 * bytes apart; the constant size makes each memcpy a single move.
 */
#define CONCAT_COLUMN(SIZE) \
	do { \
		for (int64_t r_ = 0; r_ < rows; r_++) \
			memcpy(d + (size_t) r_ * dstride, s + (size_t) r_ * (SIZE), (SIZE)); \
	} while (0)

/*
 * Rows go in tiles of about CONCAT_TILE output bytes, and within a tile
 * input by input: with many narrow inputs (495 [N, 1] columns from
 * PolynomialFeatures) each input then gives one short sequential run and
 * the tile stays in L1, and a 4- or 8-byte block is a move instead of a
 * memcpy call per (row, input).  Wide inputs get one-row tiles, i.e. the
 * row-by-row memcpy as before.
 */
#define CONCAT_TILE 16384

static void
concat_range(void *arg, int64_t begin, int64_t end)
{
	concat_job *job = arg;
	size_t		dstride = (size_t) job->out_block * job->es;
	int64_t		tile = dstride > 0 && dstride < CONCAT_TILE ? (int64_t) (CONCAT_TILE / dstride) : 1;

	for (int64_t o = begin; o < end; o += tile)
	{
		int64_t		rows = end - o < tile ? end - o : tile;
		char	   *d = job->dst + (size_t) o * dstride;

		for (int i = 0; i < job->n; i++)
		{
			size_t		bytes = (size_t) job->block[i] * job->es;
			const char *s;

			/* an empty input may have no data pointer to offset */
			if (bytes == 0)
				continue;
			s = (const char *) job->in[i]->data + (size_t) o * bytes;
			switch (bytes)
			{
				case 1:
					CONCAT_COLUMN(1);
					break;
				case 2:
					CONCAT_COLUMN(2);
					break;
				case 4:
					CONCAT_COLUMN(4);
					break;
				case 8:
					CONCAT_COLUMN(8);
					break;
				case 16:
					CONCAT_COLUMN(16);
					break;
				default:
					CONCAT_COLUMN(bytes);
					break;
			}
			d += bytes;
		}
	}
}

ox_code
oxt_concat_run(ox_kernel_ctx *ctx)
{
	int			n = ctx->n_in;
	const ox_tensor *first;
	const ox_tensor *in[64];
	const ox_tensor **ins = in;
	int64_t		blocks[64];
	int64_t    *block = blocks;
	int64_t		dims[OX_MAX_RANK];
	const oxt_attr_cache *c = oxt_cache(ctx);
	int64_t		axis_attr;
	int			axis;
	int64_t		outer,
				inner;
	ox_tensor  *out;
	ox_code		rc = OX_OK;
	char		b1[128],
				b2[128];

	if (!c)
		return ctx->st->code;
	axis_attr = c->axis;
	if (n < 1 || !(first = oxt_input(ctx, 0, "inputs")))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Concat: needs at least one input");
	if (axis_attr == INT64_MIN)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Concat: attribute axis is required");
	OX_TRY(oxt_axis(ctx, axis_attr, first->rank, &axis, "axis"));
	if (n > 64)
	{
		ins = malloc(sizeof(*ins) * n);
		block = malloc(sizeof(*block) * n);
		if (!ins || !block)
		{
			rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Concat: could not allocate %d input slots", n);
			goto done;
		}
	}
	memcpy(dims, first->dims, sizeof(int64_t) * first->rank);
	dims[axis] = 0;
	for (int i = 0; i < n; i++)
	{
		const ox_tensor *t = oxt_input(ctx, i, "inputs");

		if (!t)
		{
			rc = ctx->st->code;
			goto done;
		}
		if (t->dtype != first->dtype || t->rank != first->rank)
		{
			rc = ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						 "Concat: input %d is %s %s but input 0 is %s %s", i,
						 ox_dtype_name(t->dtype), OXT_SHAPE(t, b1),
						 ox_dtype_name(first->dtype), OXT_SHAPE(first, b2));
			goto done;
		}
		for (int k = 0; k < t->rank; k++)
			if (k != axis && t->dims[k] != first->dims[k])
			{
				rc = ox_fail(ctx->st, OX_INVALID_ARGUMENT,
							 "Concat: input %d has shape %s but input 0 has %s (only axis %d may differ)",
							 i, OXT_SHAPE(t, b1), OXT_SHAPE(first, b2), axis);
				goto done;
			}
		if (oxt_numel(ctx, t, "input") < 0)
		{
			rc = ctx->st->code;
			goto done;
		}
		dims[axis] += t->dims[axis];
		ins[i] = t;
	}
	if (ox_shape_numel(first->rank, dims) < 0)
	{
		rc = ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "Concat: output has too many elements");
		goto done;
	}
	if (!(out = ox_out_tensor(ctx, 0, first->dtype, first->rank, dims)))
	{
		rc = ctx->st->code;
		goto done;
	}
	split_dims(out, axis, &outer, &inner);
	for (int i = 0; i < n; i++)
		block[i] = ins[i]->dims[axis] * inner;
	/* an empty output: the inputs are all empty and have no data to offset from */
	if (ox_tensor_numel(out) == 0)
		goto done;
	if (first->dtype == OX_STRING)
	{
		ox_string  *d = out->data;

		for (int64_t o = 0; o < outer && rc == OX_OK; o++)
			for (int i = 0; i < n && rc == OX_OK; i++)
			{
				rc = oxt_copy_elems(ctx, OX_STRING, d,
									OX_DATA(ins[i], ox_string) + o * block[i], block[i]);
				d += block[i];
			}
	}
	else if (outer > 0)
	{
		concat_job job = {n, ins, block, dims[axis] * inner, out->data, ox_dtype_size(first->dtype)};

		ox_parallel_for(ctx, outer, 1 + 16384 / (job.out_block ? job.out_block : 1), concat_range, &job);
	}
done:
	if (ins != in)
		free(ins);
	if (block != blocks)
		free(block);
	return rc;
}

/* ---------------------------------------------------------------------
 * Split
 * --------------------------------------------------------------------- */

ox_code
oxt_split_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "input");
	int			nout = ctx->n_out;
	int64_t    *sizes;
	int			axis;
	int64_t		outer,
				inner,
				dim,
				pos = 0,
				sum = 0;
	int			ns = 0;
	ox_code		rc = OX_OK;
	size_t		es;

	if (!x)
		return ctx->st->code;
	if (oxt_numel(ctx, x, "input") < 0)
		return ctx->st->code;
	if (nout < 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Split: needs at least one output");
	OX_TRY(oxt_axis(ctx, ox_attr_int(ctx->node, "axis", 0), x->rank, &axis, "axis"));
	dim = x->dims[axis];
	if (!(sizes = calloc(nout, sizeof(int64_t))))
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Split: could not allocate %d sizes", nout);
	if (ctx->node->opset < 13 ? ox_node_attr(ctx->node, "split") != NULL :
		(ox_in_tensor(ctx, 1) != NULL && ox_tensor_numel(ox_in_tensor(ctx, 1)) > 0))
	{
		const int64_t *a;

		if (ctx->node->opset < 13)
		{
			ns = ox_attr_ints(ctx->node, "split", &a);
			if (ns == nout)
				memcpy(sizes, a, sizeof(int64_t) * ns);
		}
		else
		{
			const ox_tensor *st = ox_in_tensor(ctx, 1);

			ns = (int) ox_tensor_numel(st);
			if (ns == nout && (rc = oxt_read_ints(ctx, st, sizes, nout, &ns, "split")) != OX_OK)
				goto done;
		}
		if (ns != nout)
		{
			rc = ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Split: split has %d entries but there are %d outputs",
						 ns, nout);
			goto done;
		}
		for (int i = 0; i < nout; i++)
		{
			if (sizes[i] < 0 || sizes[i] > dim)
			{
				rc = ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Split: split entry %d is %lld, outside [0, %lld]",
							 i, (long long) sizes[i], (long long) dim);
				goto done;
			}
			sum += sizes[i];
		}
		if (sum != dim)
		{
			rc = ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						 "Split: split sizes add up to %lld but axis %d has size %lld",
						 (long long) sum, axis, (long long) dim);
			goto done;
		}
	}
	else if (ctx->node->opset >= 18 && ox_node_attr(ctx->node, "num_outputs"))
	{
		int64_t		num = ox_attr_int(ctx->node, "num_outputs", 0);
		int64_t		chunk;

		if (num != nout)
		{
			rc = ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Split: num_outputs is %lld but the node has %d outputs",
						 (long long) num, nout);
			goto done;
		}
		/* chunks of ceil(dim / n), the last one smaller */
		chunk = (dim + num - 1) / num;
		for (int i = 0; i < nout; i++)
		{
			int64_t		left = dim - chunk * i;

			sizes[i] = left < 0 ? 0 : left < chunk ? left : chunk;
		}
	}
	else
	{
		if (dim % nout != 0)
		{
			rc = ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						 "Split: axis %d of size %lld cannot be split evenly into %d outputs",
						 axis, (long long) dim, nout);
			goto done;
		}
		for (int i = 0; i < nout; i++)
			sizes[i] = dim / nout;
	}
	split_dims(x, axis, &outer, &inner);
	es = ox_dtype_size(x->dtype);
	for (int i = 0; i < nout && rc == OX_OK; i++)
	{
		int64_t		dims[OX_MAX_RANK];
		ox_tensor  *out;
		int64_t		blk = sizes[i] * inner;

		memcpy(dims, x->dims, sizeof(int64_t) * x->rank);
		dims[axis] = sizes[i];
		if (!(out = ox_out_tensor(ctx, i, x->dtype, x->rank, dims)))
		{
			rc = ctx->st->code;
			break;
		}
		for (int64_t o = 0; o < outer && rc == OX_OK && blk > 0; o++)
			rc = oxt_copy_elems(ctx, x->dtype, (char *) out->data + (size_t) (o * blk) * es,
								(const char *) x->data + (size_t) (o * dim * inner + pos * inner) * es,
								blk);
		pos += sizes[i];
	}
done:
	free(sizes);
	return rc;
}

/* ---------------------------------------------------------------------
 * Pad
 * --------------------------------------------------------------------- */

typedef enum pad_mode
{
	PAD_CONSTANT,
	PAD_REFLECT,
	PAD_EDGE,
	PAD_WRAP
} pad_mode;

/* source index for virtual index v of an axis of size n, -1 = constant */
static int64_t
pad_source(pad_mode mode, int64_t v, int64_t n)
{
	if (v >= 0 && v < n)
		return v;
	switch (mode)
	{
		case PAD_CONSTANT:
			return -1;
		case PAD_EDGE:
			return v < 0 ? 0 : n - 1;
		case PAD_WRAP:
			return ((v % n) + n) % n;
		case PAD_REFLECT:
			{
				int64_t		period = 2 * (n - 1);
				int64_t		m;

				if (n == 1)
					return 0;
				m = ((v % period) + period) % period;
				return m >= n ? period - m : m;
			}
	}
	return -1;
}

/* the mode, wrong whatever the input when unknown: the prepare refuses it, so that the load fails */
static ox_code
pad_mode_of(const ox_node *node, ox_status *st, pad_mode *mode)
{
	const char *s = ox_attr_string(node, "mode", "constant");

	if (strcmp(s, "constant") == 0)
		*mode = PAD_CONSTANT;
	else if (strcmp(s, "reflect") == 0)
		*mode = PAD_REFLECT;
	else if (strcmp(s, "edge") == 0)
		*mode = PAD_EDGE;
	else if (strcmp(s, "wrap") == 0 && node->opset >= 19)
		*mode = PAD_WRAP;
	else
		return ox_fail(st, OX_UNSUPPORTED, "Pad: unsupported mode \"%s\"", s);
	return OX_OK;
}

ox_code
oxt_pad_prepare(ox_prepare_ctx *pc)
{
	pad_mode	mode;

	return pad_mode_of(pc->node, pc->st, &mode);
}

ox_code
oxt_pad_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "data");
	pad_mode	mode = PAD_CONSTANT;
	int64_t		pads[2 * OX_MAX_RANK];
	int64_t		raw[2 * OX_MAX_RANK];
	int64_t		axes[OX_MAX_RANK];
	int			nraw = 0,
				naxes;
	int64_t		dims[OX_MAX_RANK];
	int64_t		xs[OX_MAX_RANK];
	int64_t    *maps[OX_MAX_RANK];
	int64_t    *map_buf = NULL;
	int64_t		map_total = 0;
	uint8_t		cval_buf[16] = {0};
	ox_string	cval_str = {NULL, 0};
	const void *cval = cval_buf;
	ox_tensor  *out;
	size_t		es;
	int			r;
	ox_code		rc = OX_OK;

	if (!x)
		return ctx->st->code;
	r = x->rank;
	if (oxt_numel(ctx, x, "data") < 0)
		return ctx->st->code;
	OX_TRY(pad_mode_of(ctx->node, ctx->st, &mode));

	/* pads, the constant value and the axes they refer to */
	naxes = r;
	for (int i = 0; i < r; i++)
		axes[i] = i;
	if (ctx->node->opset < 11)
	{
		const int64_t *a;
		float		v = ox_attr_float(ctx->node, "value", 0.0f);

		nraw = ox_attr_ints(ctx->node, ctx->node->opset < 2 ? "paddings" : "pads", &a);
		if (nraw > 2 * OX_MAX_RANK)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Pad: too many pads (%d)", nraw);
		if (nraw > 0)
			memcpy(raw, a, sizeof(int64_t) * nraw);
		if (x->dtype == OX_STRING)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Pad: string input needs opset 11 or later");
		OX_TRY(ox_convert_elements(cval_buf, x->dtype, &v, OX_FLOAT, 1, ctx->st));
	}
	else
	{
		const ox_tensor *pt = oxt_input(ctx, 1, "pads");
		const ox_tensor *ct = ox_in_tensor(ctx, 2);
		const ox_tensor *at = ox_in_tensor(ctx, 3);

		if (!pt)
			return ctx->st->code;
		OX_TRY(oxt_read_ints(ctx, pt, raw, 2 * OX_MAX_RANK, &nraw, "pads"));
		if (ct && ox_tensor_numel(ct) > 0)
		{
			if (ct->dtype != x->dtype || ox_tensor_numel(ct) != 1)
				return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
							   "Pad: constant_value must be one %s element, got %lld of %s",
							   ox_dtype_name(x->dtype), (long long) ox_tensor_numel(ct),
							   ox_dtype_name(ct->dtype));
			cval = ct->data;
		}
		else if (x->dtype == OX_STRING)
			cval = &cval_str;
		if (at && ctx->node->opset >= 18)
		{
			OX_TRY(oxt_read_ints(ctx, at, axes, OX_MAX_RANK, &naxes, "axes"));
			for (int i = 0; i < naxes; i++)
			{
				int			a;

				OX_TRY(oxt_axis(ctx, axes[i], r, &a, "axis"));
				axes[i] = a;
				for (int j = 0; j < i; j++)
					if (axes[j] == a)
						return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Pad: axis %d is listed twice", a);
			}
		}
	}
	if (x->dtype == OX_STRING && cval == cval_buf)
		cval = &cval_str;
	if (nraw != 2 * naxes)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Pad: pads has %d entries, expected %d (2 per axis)",
					   nraw, 2 * naxes);
	memset(pads, 0, sizeof(pads));
	for (int i = 0; i < naxes; i++)
	{
		pads[axes[i]] = raw[i];
		pads[r + axes[i]] = raw[naxes + i];
	}
	for (int i = 0; i < r; i++)
	{
		int64_t		d = x->dims[i];
		int64_t		lim = OX_MAX_ELEMENTS;

		if (pads[i] < -lim || pads[i] > lim || pads[r + i] < -lim || pads[r + i] > lim)
			return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "Pad: pads for axis %d are too large", i);
		dims[i] = d + pads[i] + pads[r + i];
		if (dims[i] < 0)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "Pad: pads %lld and %lld make axis %d of size %lld negative",
						   (long long) pads[i], (long long) pads[r + i], i, (long long) d);
		if (d == 0 && dims[i] > 0 && mode != PAD_CONSTANT)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "Pad: cannot pad the empty axis %d in %s mode", i,
						   ox_attr_string(ctx->node, "mode", "constant"));
		map_total += dims[i];
	}
	if (ox_shape_numel(r, dims) < 0 || map_total > OX_MAX_ELEMENTS)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "Pad: output has too many elements");
	if (!(out = ox_out_tensor(ctx, 0, x->dtype, r, dims)))
		return ctx->st->code;
	if (ox_tensor_numel(out) == 0)
		return OX_OK;
	if (r == 0)
		return oxt_copy_elems(ctx, x->dtype, out->data, x->data, 1);

	/* per axis, the source index of every output position */
	if (!(map_buf = malloc(sizeof(int64_t) * map_total)))
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Pad: could not allocate index maps");
	for (int i = 0, off = 0; i < r; off += (int) dims[i], i++)
	{
		maps[i] = map_buf + off;
		for (int64_t o = 0; o < dims[i]; o++)
		{
			maps[i][o] = pad_source(mode, o - pads[i], x->dims[i]);
			if (ox_kernel_poll(ctx, 1))
			{
				free(map_buf);
				return ctx->st->code;
			}
		}
	}
	oxt_strides(r, x->dims, xs);
	es = ox_dtype_size(x->dtype);
	{
		int64_t		len = dims[r - 1];
		int64_t		rows = ox_tensor_numel(out) / len;
		int64_t		idx[OX_MAX_RANK] = {0};
		const int64_t *m = maps[r - 1];

		for (int64_t row = 0; row < rows && rc == OX_OK; row++)
		{
			char	   *d = (char *) out->data + (size_t) (row * len) * es;
			int64_t		base = 0;
			bool		constant_row = false;
			int64_t		rem = row;

			for (int k = r - 2; k >= 0; k--)
			{
				idx[k] = rem % dims[k];
				rem /= dims[k];
				if (maps[k][idx[k]] < 0)
					constant_row = true;
				else
					base += maps[k][idx[k]] * xs[k];
			}
			/* a few bytes of pads ask for gigabytes: stay cancelable */
			if (ox_kernel_poll(ctx, len))
			{
				rc = ctx->st->code;
				break;
			}
			if (constant_row)
			{
				rc = oxt_fill(ctx, x->dtype, d, cval, len);
				continue;
			}
			for (int64_t o = 0; o < len && rc == OX_OK;)
			{
				int64_t		run = 1;

				if (m[o] < 0)
				{
					while (o + run < len && m[o + run] < 0)
						run++;
					rc = oxt_fill(ctx, x->dtype, d + (size_t) o * es, cval, run);
				}
				else
				{
					while (o + run < len && m[o + run] == m[o] + run)
						run++;
					rc = oxt_copy_elems(ctx, x->dtype, d + (size_t) o * es,
										(const char *) x->data + (size_t) (base + m[o]) * es, run);
				}
				o += run;
			}
		}
	}
	free(map_buf);
	return rc;
}

/* ---------------------------------------------------------------------
 * Compress
 * --------------------------------------------------------------------- */

ox_code
oxt_compress_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "input");
	const ox_tensor *c = oxt_input(ctx, 1, "condition");
	const ox_attr *axis_attr = ox_node_attr(ctx->node, "axis");
	int			axis = 0;
	int64_t		outer,
				inner,
				dim,
				nc,
				kept = 0;
	int64_t		dims[OX_MAX_RANK];
	int			rank;
	ox_tensor  *out;
	size_t		es;
	char	   *d;

	if (!x || !c)
		return ctx->st->code;
	if (oxt_numel(ctx, x, "input") < 0)
		return ctx->st->code;
	if (c->dtype != OX_BOOL || c->rank != 1)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Compress: condition must be a 1-D bool tensor");
	if (axis_attr)
	{
		OX_TRY(oxt_axis(ctx, ox_attr_int(ctx->node, "axis", 0), x->rank, &axis, "axis"));
		split_dims(x, axis, &outer, &inner);
		dim = x->dims[axis];
		rank = x->rank;
		memcpy(dims, x->dims, sizeof(int64_t) * rank);
	}
	else
	{
		/* no axis: work on the flattened input */
		outer = 1;
		inner = 1;
		dim = ox_tensor_numel(x);
		rank = 1;
	}
	nc = c->dims[0];
	if (nc > dim)
	{
		/* entries past the end may only be false */
		for (int64_t i = dim; i < nc; i++)
			if (OX_DATA(c, uint8_t)[i])
				return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
							   "Compress: condition has %lld entries but the axis has %lld",
							   (long long) nc, (long long) dim);
		nc = dim;
	}
	for (int64_t i = 0; i < nc; i++)
		kept += OX_DATA(c, uint8_t)[i] != 0;
	dims[axis_attr ? axis : 0] = kept;
	if (!(out = ox_out_tensor(ctx, 0, x->dtype, rank, dims)))
		return ctx->st->code;
	/* an empty output (nothing kept, or empty slices) has no data to offset from */
	if (ox_tensor_numel(out) == 0)
		return OX_OK;
	es = ox_dtype_size(x->dtype);
	d = out->data;
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < nc; i++)
			if (OX_DATA(c, uint8_t)[i])
			{
				OX_TRY(oxt_copy_elems(ctx, x->dtype, d,
									  (const char *) x->data + (size_t) ((o * dim + i) * inner) * es,
									  inner));
				d += (size_t) inner * es;
			}
	return OX_OK;
}

/* ---------------------------------------------------------------------
 * Trilu
 * --------------------------------------------------------------------- */

ox_code
oxt_trilu_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "input");
	bool		upper = ox_attr_int(ctx->node, "upper", 1) != 0;
	int64_t		k = 0;
	int64_t		rows,
				cols,
				batches,
				total;
	ox_tensor  *out;
	size_t		es;

	if (!x)
		return ctx->st->code;
	if ((total = oxt_numel(ctx, x, "input")) < 0)
		return ctx->st->code;
	if (x->rank < 2)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Trilu: input must have rank >= 2, got %d", x->rank);
	if (ox_in_tensor(ctx, 1))
		OX_TRY(oxt_scalar_int(ctx, ox_in_tensor(ctx, 1), &k, "k"));
	if (!(out = ox_out_tensor(ctx, 0, x->dtype, x->rank, x->dims)))
		return ctx->st->code;
	rows = x->dims[x->rank - 2];
	cols = x->dims[x->rank - 1];
	if (total == 0)
		return OX_OK;
	batches = total / (rows * cols);
	/* diagonals beyond the matrix behave like the nearest one outside it */
	if (k > rows + cols)
		k = rows + cols;
	if (k < -(rows + cols))
		k = -(rows + cols);
	es = ox_dtype_size(x->dtype);
	if (x->dtype != OX_STRING)
		memset(out->data, 0, (size_t) total * es);
	for (int64_t b = 0; b < batches; b++)
		for (int64_t i = 0; i < rows; i++)
		{
			/* keep j - i >= k (upper) or j - i <= k (lower) */
			int64_t		lo = upper ? i + k : 0;
			int64_t		hi = upper ? cols : i + k + 1;
			size_t		off;

			lo = lo < 0 ? 0 : lo > cols ? cols : lo;
			hi = hi < 0 ? 0 : hi > cols ? cols : hi;
			if (hi <= lo)
				continue;
			off = (size_t) ((b * rows + i) * cols + lo);
			OX_TRY(oxt_copy_elems(ctx, x->dtype, (char *) out->data + off * es,
								  (const char *) x->data + off * es, hi - lo));
		}
	return OX_OK;
}

/* ---------------------------------------------------------------------
 * ReverseSequence
 * --------------------------------------------------------------------- */

ox_code
oxt_reverse_sequence_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = oxt_input(ctx, 0, "input");
	const ox_tensor *lens = oxt_input(ctx, 1, "sequence_lens");
	int64_t		batch_axis = ox_attr_int(ctx->node, "batch_axis", 1);
	int64_t		time_axis = ox_attr_int(ctx->node, "time_axis", 0);
	int64_t		nb,
				nt,
				inner = 1;
	ox_tensor  *out;
	size_t		es;

	if (!x || !lens)
		return ctx->st->code;
	if (oxt_numel(ctx, x, "input") < 0)
		return ctx->st->code;
	if (x->rank < 2)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "ReverseSequence: input must have rank >= 2, got %d",
					   x->rank);
	if (!((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0)))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "ReverseSequence: batch_axis and time_axis must be 0 and 1 in some order, got %lld and %lld",
					   (long long) batch_axis, (long long) time_axis);
	nb = x->dims[batch_axis];
	nt = x->dims[time_axis];
	for (int i = 2; i < x->rank; i++)
		inner *= x->dims[i];
	if ((lens->dtype != OX_INT64 && lens->dtype != OX_INT32) || lens->rank != 1 || lens->dims[0] != nb)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "ReverseSequence: sequence_lens must be a 1-D int64 tensor of %lld entries",
					   (long long) nb);
	if (!(out = ox_out_tensor(ctx, 0, x->dtype, x->rank, x->dims)))
		return ctx->st->code;
	es = ox_dtype_size(x->dtype);
	for (int64_t b = 0; b < nb; b++)
	{
		int64_t		len = ox_tensor_get_int64(lens, b);

		if (len < 0 || len > nt)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "ReverseSequence: sequence_lens[%lld] = %lld is outside [0, %lld]",
						   (long long) b, (long long) len, (long long) nt);
		/* (empty slices, inner 0: X and the output have no data to offset from) */
		for (int64_t t = 0; t < nt && inner > 0; t++)
		{
			int64_t		src_t = t < len ? len - 1 - t : t;
			int64_t		di = batch_axis == 0 ? b * nt + t : t * nb + b;
			int64_t		si = batch_axis == 0 ? b * nt + src_t : src_t * nb + b;

			OX_TRY(oxt_copy_elems(ctx, x->dtype, (char *) out->data + (size_t) (di * inner) * es,
								  (const char *) x->data + (size_t) (si * inner) * es, inner));
		}
	}
	return OX_OK;
}
