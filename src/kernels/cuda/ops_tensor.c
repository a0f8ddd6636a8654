/*
 * ops_tensor.c
 *	  Host side of the CUDA tensor family: Reshape/Flatten/Squeeze/Unsqueeze/
 *	  Identity-like shape changes (device copies), Transpose, Concat, Slice,
 *	  Gather, Expand.  Shape inputs (Reshape's shape, Slice's starts...) are
 *	  read on the host: placement keeps their producers on the CPU.
 */
#include "kernels/cuda/cuda_internal.h"

#include <stdlib.h>
#include <string.h>

static ox_code
copy_as(ox_cuda_op_ctx *oc, ox_dval *x, int rank, const int64_t *dims)
{
	ox_dval    *y;

	if (ox_shape_numel(rank, dims) != oxc_numel(x))
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "cannot reshape %lld elements into %lld",
					   (long long) oxc_numel(x), (long long) ox_shape_numel(rank, dims));
	OX_TRY(oxc_out(oc, 0, x->dtype, rank, dims, &y));
	if (oxc_numel(x) == 0)
		return OX_OK;
	return oxc_cuda_check(cudaMemcpyAsync(y->d, x->d, (size_t) oxc_numel(x) * ox_dtype_size(x->dtype),
										  cudaMemcpyDeviceToDevice, oc->cx->stream), "cudaMemcpyAsync", oc->st);
}

static bool
sup_float_shape(const ox_graph *g, const ox_node *n)
{
	return n->n_inputs >= 1 && n->n_outputs == 1 && oxc_all_float(g, n, 1);
}

static int
norm_axis(int64_t a, int rank)
{
	return (int) (a < 0 ? a + rank : a);
}

/* ---- Reshape ---------------------------------------------------------- */

static ox_code
run_reshape(ox_cuda_op_ctx *oc)
{
	ox_dval    *x;
	const int64_t *shape;
	int64_t		n,
				dims[OX_MAX_RANK],
				known = 1;
	int			infer = -1;
	bool		allowzero = ox_attr_int(oc->node, "allowzero", 0) != 0;

	OX_TRY(oxc_in(oc, 0, OX_FLOAT, &x));
	OX_TRY(oxc_host_ints(oc, 1, &shape, &n));
	if (n > OX_MAX_RANK)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Reshape to rank %lld", (long long) n);
	for (int i = 0; i < n; i++)
	{
		int64_t		v = shape[i];

		if (v == 0 && !allowzero)
		{
			if (i >= x->rank)
				return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Reshape copies dimension %d of a rank-%d input", i, x->rank);
			v = x->dims[i];
		}
		if (v == -1)
		{
			if (infer >= 0)
				return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Reshape shape has more than one -1");
			infer = i;
			dims[i] = 1;
			continue;
		}
		if (v < 0)
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Reshape shape has a negative dimension");
		dims[i] = v;
		known *= v;
		if (known > OX_MAX_ELEMENTS)
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Reshape shape is too large");
	}
	if (infer >= 0)
	{
		if (known == 0 || oxc_numel(x) % known != 0)
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Reshape cannot infer the -1 dimension");
		dims[infer] = oxc_numel(x) / known;
	}
	return copy_as(oc, x, (int) n, dims);
}

static ox_code
run_flatten(ox_cuda_op_ctx *oc)
{
	ox_dval    *x;
	int64_t		axis = ox_attr_int(oc->node, "axis", 1),
				dims[2] = {1, 1};

	OX_TRY(oxc_in(oc, 0, OX_FLOAT, &x));
	if (axis < -x->rank || axis > x->rank)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Flatten axis out of range");
	axis = norm_axis(axis, x->rank);
	for (int i = 0; i < x->rank; i++)
		dims[i < axis ? 0 : 1] *= x->dims[i];
	return copy_as(oc, x, 2, dims);
}

/* Squeeze / Unsqueeze: axes from the attribute (< 13) or the host input */
static ox_code
squeeze_axes(ox_cuda_op_ctx *oc, const int64_t **axes, int64_t *n)
{
	if (oc->node->opset >= 13)
	{
		if (oc->n_in > 1 && oc->in[1])
			return oxc_host_ints(oc, 1, axes, n);
		*axes = NULL;
		*n = 0;
		return OX_OK;
	}
	*n = ox_attr_ints(oc->node, "axes", axes);
	return OX_OK;
}

static ox_code
run_squeeze(ox_cuda_op_ctx *oc)
{
	ox_dval    *x;
	const int64_t *axes;
	int64_t		n,
				dims[OX_MAX_RANK];
	bool		drop[OX_MAX_RANK] = {false};
	int			r = 0;

	OX_TRY(oxc_in(oc, 0, OX_FLOAT, &x));
	OX_TRY(squeeze_axes(oc, &axes, &n));
	for (int64_t i = 0; i < n; i++)
	{
		if (axes[i] < -x->rank || axes[i] >= x->rank || x->dims[norm_axis(axes[i], x->rank)] != 1)
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Squeeze axis %lld is not a dimension of size 1",
						   (long long) axes[i]);
		drop[norm_axis(axes[i], x->rank)] = true;
	}
	for (int d = 0; d < x->rank; d++)
		if (!(n == 0 ? x->dims[d] == 1 : drop[d]))
			dims[r++] = x->dims[d];
	return copy_as(oc, x, r, dims);
}

static ox_code
run_unsqueeze(ox_cuda_op_ctx *oc)
{
	ox_dval    *x;
	const int64_t *axes;
	int64_t		n,
				dims[OX_MAX_RANK];
	bool		ins[OX_MAX_RANK] = {false};
	int			r,
				k = 0;

	OX_TRY(oxc_in(oc, 0, OX_FLOAT, &x));
	OX_TRY(squeeze_axes(oc, &axes, &n));
	r = x->rank + (int) n;
	if (n <= 0 || r > OX_MAX_RANK)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Unsqueeze needs 1 to %d axes", OX_MAX_RANK - x->rank);
	for (int64_t i = 0; i < n; i++)
	{
		int			a;

		if (axes[i] < -r || axes[i] >= r)
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Unsqueeze axis %lld out of range", (long long) axes[i]);
		a = norm_axis(axes[i], r);
		if (ins[a])
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Unsqueeze axis %lld repeated", (long long) axes[i]);
		ins[a] = true;
	}
	for (int d = 0; d < r; d++)
		dims[d] = ins[d] ? 1 : x->dims[k++];
	return copy_as(oc, x, r, dims);
}

/* ---- Transpose -------------------------------------------------------- */

static ox_code
run_transpose(ox_cuda_op_ctx *oc)
{
	ox_dval    *x,
			   *y;
	const int64_t *perm;
	int			np = ox_attr_ints(oc->node, "perm", &perm);
	int64_t		p[OX_MAX_RANK],
				dims[OX_MAX_RANK],
				xs[OX_MAX_RANK];
	bool		seen[OX_MAX_RANK] = {false};
	oxc_strided g;

	OX_TRY(oxc_in(oc, 0, OX_FLOAT, &x));
	if (np && np != x->rank)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Transpose perm has %d entries for rank %d", np, x->rank);
	for (int d = 0; d < x->rank; d++)
	{
		p[d] = np ? perm[d] : x->rank - 1 - d;
		if (p[d] < 0 || p[d] >= x->rank || seen[p[d]])
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Transpose perm is not a permutation");
		seen[p[d]] = true;
	}
	xs[x->rank - 1] = 1;
	for (int d = x->rank - 2; d >= 0; d--)
		xs[d] = xs[d + 1] * x->dims[d + 1];
	for (int d = 0; d < x->rank; d++)
		dims[d] = x->dims[p[d]];
	OX_TRY(oxc_out(oc, 0, OX_FLOAT, x->rank, dims, &y));
	/* drop size-1 dims and merge runs that stay contiguous */
	memset(&g, 0, sizeof(g));
	g.n = oxc_numel(x);
	{
		int64_t		ys = 1;
		int64_t		yst[OX_MAX_RANK];

		for (int d = x->rank - 1; d >= 0; d--)
		{
			yst[d] = ys;
			ys *= dims[d];
		}
		for (int d = 0; d < x->rank; d++)
		{
			int			k = g.rank;

			if (dims[d] == 1)
				continue;
			if (k > 0 && g.src_strides[k - 1] == xs[p[d]] * dims[d] && g.dst_strides[k - 1] == yst[d] * dims[d])
			{
				g.dims[k - 1] *= dims[d];
				g.src_strides[k - 1] = xs[p[d]];
				g.dst_strides[k - 1] = yst[d];
				continue;
			}
			if (k == OXC_MAX_DIMS)
				return ox_fail(oc->st, OX_UNSUPPORTED, "Transpose of more than %d dimensions on CUDA", OXC_MAX_DIMS);
			g.dims[k] = dims[d];
			g.src_strides[k] = xs[p[d]];
			g.dst_strides[k] = yst[d];
			g.rank++;
		}
	}
	if (g.rank == 0 && g.n == 1)
	{
		g.rank = 1;
		g.dims[0] = 1;
	}
	return oxc_cuda_check(oxc_launch_strided_copy(oc->cx->stream, &g, x->d, y->d, 4), "Transpose", oc->st);
}

/* ---- Concat ----------------------------------------------------------- */

static bool
sup_concat(const ox_graph *g, const ox_node *n)
{
	return n->n_inputs >= 1 && n->n_outputs == 1 && oxc_all_float(g, n, n->n_inputs);
}

static ox_code
run_concat(ox_cuda_op_ctx *oc)
{
	ox_dval    *x0,
			   *y;
	int64_t		axis = ox_attr_int(oc->node, "axis", 0);
	int			a;
	int64_t		dims[OX_MAX_RANK],
				outer,
				inner = 1,
				off = 0;

	OX_TRY(oxc_in(oc, 0, OX_FLOAT, &x0));
	if (axis < -x0->rank || axis >= x0->rank)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Concat axis out of range");
	a = norm_axis(axis, x0->rank);
	memcpy(dims, x0->dims, sizeof(int64_t) * x0->rank);
	dims[a] = 0;
	for (int i = 0; i < oc->n_in; i++)
	{
		ox_dval    *x;

		OX_TRY(oxc_in(oc, i, OX_FLOAT, &x));
		if (x->rank != x0->rank)
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Concat inputs differ in rank");
		for (int d = 0; d < x->rank; d++)
			if (d != a && x->dims[d] != x0->dims[d])
				return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Concat inputs differ in dimension %d", d);
		dims[a] += x->dims[a];
	}
	OX_TRY(oxc_out(oc, 0, OX_FLOAT, x0->rank, dims, &y));
	outer = 1;
	for (int d = 0; d < a; d++)
		outer *= dims[d];
	for (int d = a + 1; d < x0->rank; d++)
		inner *= dims[d];
	for (int i = 0; i < oc->n_in; i++)
	{
		ox_dval    *x = oc->in[i];
		int64_t		rows = x->dims[a] * inner;

		/* each input is outer blocks of rows contiguous floats */
		if (outer > 0 && rows > 0)
			OX_TRY(oxc_cuda_check(cudaMemcpy2DAsync((float *) y->d + off, sizeof(float) * dims[a] * inner, x->d,
													sizeof(float) * rows, sizeof(float) * rows, outer,
													cudaMemcpyDeviceToDevice, oc->cx->stream),
								  "cudaMemcpy2DAsync", oc->st));
		off += rows;
	}
	return OX_OK;
}

/* ---- Slice (opset 10+: starts/ends/axes/steps inputs) ------------------- */

static ox_code
run_slice(ox_cuda_op_ctx *oc)
{
	ox_dval    *x,
			   *y;
	const int64_t *starts,
			   *ends,
			   *axes = NULL,
			   *steps = NULL;
	int64_t		ns,
				ne,
				na = 0,
				nst = 0;
	int64_t		st[OX_MAX_RANK],
				step[OX_MAX_RANK],
				dims[OX_MAX_RANK];
	bool		seen[OX_MAX_RANK] = {false};
	oxc_strided g;
	int64_t		xs = 1;

	OX_TRY(oxc_in(oc, 0, OX_FLOAT, &x));
	OX_TRY(oxc_host_ints(oc, 1, &starts, &ns));
	OX_TRY(oxc_host_ints(oc, 2, &ends, &ne));
	if (oc->n_in > 3 && oc->in[3])
		OX_TRY(oxc_host_ints(oc, 3, &axes, &na));
	if (oc->n_in > 4 && oc->in[4])
		OX_TRY(oxc_host_ints(oc, 4, &steps, &nst));
	if (ns != ne || (axes && na != ns) || (steps && nst != ns) || ns > x->rank)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Slice starts, ends, axes and steps differ in length");
	for (int d = 0; d < x->rank; d++)
	{
		st[d] = 0;
		step[d] = 1;
		dims[d] = x->dims[d];
	}
	for (int64_t i = 0; i < ns; i++)
	{
		int64_t		a = axes ? axes[i] : i;
		int64_t		s = steps ? steps[i] : 1,
					b = starts[i],
					e = ends[i],
					len;
		int			d;

		if (a < -x->rank || a >= x->rank)
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Slice axis %lld out of range", (long long) a);
		d = norm_axis(a, x->rank);
		if (seen[d])
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Slice axis repeated");
		seen[d] = true;
		if (s == 0)
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Slice step is 0");
		len = x->dims[d];
		if (b < 0)
			b += len;
		if (e < 0)
			e += len;
		if (s > 0)
		{
			b = b < 0 ? 0 : (b > len ? len : b);
			e = e < 0 ? 0 : (e > len ? len : e);
			dims[d] = e > b ? (e - b + s - 1) / s : 0;
		}
		else
		{
			b = b < 0 ? -1 : (b > len - 1 ? len - 1 : b);
			e = e < -1 ? -1 : (e > len - 1 ? len - 1 : e);
			dims[d] = b > e ? (b - e + (-s) - 1) / (-s) : 0;
		}
		st[d] = b;
		step[d] = s;
	}
	OX_TRY(oxc_out(oc, 0, OX_FLOAT, x->rank, dims, &y));
	if (oxc_numel(y) == 0)
		return OX_OK;
	if (x->rank > OXC_MAX_DIMS)
		return ox_fail(oc->st, OX_UNSUPPORTED, "Slice of more than %d dimensions on CUDA", OXC_MAX_DIMS);
	memset(&g, 0, sizeof(g));
	g.rank = x->rank;
	g.n = oxc_numel(y);
	for (int d = x->rank - 1; d >= 0; d--)
	{
		g.dims[d] = dims[d];
		g.src_strides[d] = xs * step[d];
		g.src_offset += st[d] * xs;
		xs *= x->dims[d];
	}
	{
		int64_t		ys = 1;

		for (int d = x->rank - 1; d >= 0; d--)
		{
			g.dst_strides[d] = ys;
			ys *= dims[d];
		}
	}
	if (g.rank == 0)
	{
		g.rank = 1;
		g.dims[0] = 1;
	}
	return oxc_cuda_check(oxc_launch_strided_copy(oc->cx->stream, &g, x->d, y->d, 4), "Slice", oc->st);
}

static bool
sup_slice(const ox_graph *g, const ox_node *n)
{
	return n->n_inputs >= 3 && n->n_outputs == 1 && oxc_all_float(g, n, 1);
}

/* ---- Gather ------------------------------------------------------------- */

static bool
sup_gather(const ox_graph *g, const ox_node *n)
{
	return n->n_inputs == 2 && n->n_outputs == 1 && oxc_all_float(g, n, 1) &&
		oxc_input_type(g, n, 1) == OX_INT64;
}

static ox_code
run_gather(ox_cuda_op_ctx *oc)
{
	ox_dval    *x,
			   *idx = oc->n_in > 1 ? oc->in[1] : NULL,
			   *y;
	int64_t		axis = ox_attr_int(oc->node, "axis", 0);
	int			a,
				r = 0;
	int64_t		dims[OX_MAX_RANK],
				outer = 1,
				inner = 1,
				n_idx;
	int64_t    *norm;
	void	   *dev = NULL;
	size_t		cap = 0;
	ox_code		rc;

	OX_TRY(oxc_in(oc, 0, OX_FLOAT, &x));
	if (!idx || !idx->live || idx->dtype != OX_INT64 || (!idx->h && oxc_numel(idx) > 0))
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Gather indices must be int64 on the host");
	if (x->rank < 1 || axis < -x->rank || axis >= x->rank)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Gather axis out of range");
	a = norm_axis(axis, x->rank);
	if (x->rank - 1 + idx->rank > OX_MAX_RANK)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Gather output rank too large");
	for (int d = 0; d < a; d++)
	{
		dims[r++] = x->dims[d];
		outer *= x->dims[d];
	}
	for (int d = 0; d < idx->rank; d++)
		dims[r++] = idx->dims[d];
	for (int d = a + 1; d < x->rank; d++)
	{
		dims[r++] = x->dims[d];
		inner *= x->dims[d];
	}
	OX_TRY(oxc_out(oc, 0, OX_FLOAT, r, dims, &y));
	n_idx = oxc_numel(idx);
	if (oxc_numel(y) == 0)
		return OX_OK;
	/* check and normalize the indices on the host, then upload them */
	norm = malloc(sizeof(int64_t) * n_idx);
	if (!norm)
		return ox_fail(oc->st, OX_OUT_OF_MEMORY, "could not copy Gather indices");
	for (int64_t i = 0; i < n_idx; i++)
	{
		int64_t		v = ((const int64_t *) idx->h)[i];

		if (v < -x->dims[a] || v >= x->dims[a])
		{
			free(norm);
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Gather index %lld is out of range [%lld, %lld)",
						   (long long) v, (long long) -x->dims[a], (long long) x->dims[a]);
		}
		norm[i] = v < 0 ? v + x->dims[a] : v;
	}
	rc = oxc_alloc(oc->cx, sizeof(int64_t) * n_idx, &dev, &cap, oc->st);
	if (rc == OX_OK)
		rc = oxc_cuda_check(cudaMemcpyAsync(dev, norm, sizeof(int64_t) * n_idx, cudaMemcpyHostToDevice,
											oc->cx->stream), "cudaMemcpyAsync", oc->st);
	/* pageable source: the copy is done when cudaMemcpyAsync returns, but be sure before free */
	if (rc == OX_OK)
		rc = oxc_cuda_check(cudaStreamSynchronize(oc->cx->stream), "cudaStreamSynchronize", oc->st);
	free(norm);
	if (rc == OX_OK)
		rc = oxc_cuda_check(oxc_launch_gather(oc->cx->stream, x->d, dev, y->d, outer, x->dims[a], n_idx, inner),
							"Gather", oc->st);
	oxc_release(oc->cx, dev, cap);
	return rc;
}

/* ---- Expand ------------------------------------------------------------- */

static ox_code
run_expand(ox_cuda_op_ctx *oc)
{
	ox_dval    *x,
			   *y;
	const int64_t *shape;
	int64_t		n,
				dims[OX_MAX_RANK];
	int			r;
	oxc_strided g;
	int64_t		xs = 1,
				ys = 1;

	OX_TRY(oxc_in(oc, 0, OX_FLOAT, &x));
	OX_TRY(oxc_host_ints(oc, 1, &shape, &n));
	if (n > OX_MAX_RANK)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Expand shape too long");
	r = x->rank > n ? x->rank : (int) n;
	if (r > OXC_MAX_DIMS)
		return ox_fail(oc->st, OX_UNSUPPORTED, "Expand to more than %d dimensions on CUDA", OXC_MAX_DIMS);
	memset(&g, 0, sizeof(g));
	for (int d = r - 1; d >= 0; d--)
	{
		int			ix = d - (r - x->rank),
					is = d - (r - (int) n);
		int64_t		dx = ix >= 0 ? x->dims[ix] : 1,
					ds = is >= 0 ? shape[is] : 1;

		if (dx != ds && dx != 1 && ds != 1)
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Expand shape does not broadcast");
		dims[d] = dx == 1 ? ds : dx;
		if (dims[d] < 0)
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Expand shape has a negative dimension");
		g.dims[d] = dims[d];
		g.src_strides[d] = dx == 1 ? 0 : xs;
		g.dst_strides[d] = ys;
		xs *= dx;
		ys *= dims[d];
	}
	g.rank = r;
	g.n = ox_shape_numel(r, dims);
	if (g.n < 0 || g.n > OX_MAX_ELEMENTS)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Expand output too large");
	OX_TRY(oxc_out(oc, 0, OX_FLOAT, r, dims, &y));
	if (g.rank == 0)
	{
		g.rank = 1;
		g.dims[0] = 1;
	}
	return oxc_cuda_check(oxc_launch_strided_copy(oc->cx->stream, &g, x->d, y->d, 4), "Expand", oc->st);
}

/* ---- Split ------------------------------------------------------------- */

static bool
sup_split(const ox_graph *g, const ox_node *n)
{
	return n->n_inputs >= 1 && n->n_inputs <= 2 && n->n_outputs >= 1 && oxc_all_float(g, n, 1);
}

static ox_code
run_split(ox_cuda_op_ctx *oc)
{
	ox_dval    *x;
	int64_t		axis = ox_attr_int(oc->node, "axis", 0);
	int			a;
	const int64_t *split = NULL;
	int64_t		n_split = 0,
				outer = 1,
				inner = 1,
				off = 0,
				sizes[64];
	int			n_out = oc->n_out;

	OX_TRY(oxc_in(oc, 0, OX_FLOAT, &x));
	if (x->rank < 1 || axis < -x->rank || axis >= x->rank)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Split axis out of range");
	if (n_out > 64)
		return ox_fail(oc->st, OX_UNSUPPORTED, "Split into more than 64 outputs on CUDA");
	a = norm_axis(axis, x->rank);
	if (oc->node->opset >= 13)
	{
		if (oc->n_in > 1 && oc->in[1])
			OX_TRY(oxc_host_ints(oc, 1, &split, &n_split));
	}
	else
		n_split = ox_attr_ints(oc->node, "split", &split);
	if (split && n_split != n_out)
		return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Split has %lld sizes for %d outputs", (long long) n_split, n_out);
	{
		int64_t		total = 0,
					len = x->dims[a];

		for (int i = 0; i < n_out; i++)
		{
			if (split)
				sizes[i] = split[i];
			else
			{
				/* equal parts; opset 18 num_outputs: the last one may be smaller */
				int64_t		part = (len + n_out - 1) / n_out;

				sizes[i] = total + part <= len ? part : len - total;
			}
			if (sizes[i] < 0)
				return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Split size is negative");
			total += sizes[i];
		}
		if (total != len || (!split && oc->node->opset < 18 && len % n_out != 0))
			return ox_fail(oc->st, OX_INVALID_ARGUMENT, "Split sizes do not add up to %lld", (long long) len);
	}
	for (int d = 0; d < a; d++)
		outer *= x->dims[d];
	for (int d = a + 1; d < x->rank; d++)
		inner *= x->dims[d];
	for (int i = 0; i < n_out; i++)
	{
		ox_dval    *y;
		int64_t		dims[OX_MAX_RANK];
		int64_t		rows = sizes[i] * inner;

		memcpy(dims, x->dims, sizeof(int64_t) * x->rank);
		dims[a] = sizes[i];
		OX_TRY(oxc_out(oc, i, OX_FLOAT, x->rank, dims, &y));
		if (outer > 0 && rows > 0)
			OX_TRY(oxc_cuda_check(cudaMemcpy2DAsync(y->d, sizeof(float) * rows, (const float *) x->d + off,
													sizeof(float) * x->dims[a] * inner, sizeof(float) * rows, outer,
													cudaMemcpyDeviceToDevice, oc->cx->stream),
								  "cudaMemcpy2DAsync", oc->st));
		off += rows;
	}
	return OX_OK;
}

static bool
sup_with_shape(const ox_graph *g, const ox_node *n)
{
	return n->n_inputs == 2 && n->n_outputs == 1 && oxc_all_float(g, n, 1);
}

static bool
sup_squeeze(const ox_graph *g, const ox_node *n)
{
	return n->n_inputs >= 1 && n->n_inputs <= 2 && n->n_outputs == 1 && oxc_all_float(g, n, 1);
}

const ox_cuda_op ox_cuda_ops_tensor[] = {
	{"", "Reshape", 5, sup_with_shape, run_reshape, NULL, 2},
	{"", "Flatten", 1, sup_float_shape, run_flatten, NULL, 0},
	{"", "Squeeze", 1, sup_squeeze, run_squeeze, NULL, 2},
	{"", "Unsqueeze", 1, sup_squeeze, run_unsqueeze, NULL, 2},
	{"", "Transpose", 1, sup_float_shape, run_transpose, NULL, 0},
	{"", "Concat", 4, sup_concat, run_concat, NULL, 0},
	{"", "Slice", 10, sup_slice, run_slice, NULL, 2 | 4 | 8 | 16},
	{"", "Gather", 1, sup_gather, run_gather, NULL, 2},
	{"", "Expand", 8, sup_with_shape, run_expand, NULL, 2},
	{"", "Split", 2, sup_split, run_split, NULL, 2},
};
const int	ox_cuda_ops_tensor_count = sizeof(ox_cuda_ops_tensor) / sizeof(ox_cuda_ops_tensor[0]);
