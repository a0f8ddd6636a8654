/*
 * elementwise_bcast.c
 *	  The broadcast iterator and the runners shared by the elementwise and
 *	  activation families: binary broadcasting ops and one-input maps.
 */
#include "kernels/cpu/elementwise.h"

#include <stdio.h>

static void
shapes_str(char *buf, size_t len, int n, const int *ranks, const int64_t *const *dims)
{
	size_t		off = 0;

	buf[0] = '\0';
	for (int k = 0; k < n && off + 1 < len; k++)
	{
		if (k > 0)
			off += snprintf(buf + off, len - off, " and ");
		if (off + 1 < len)
			ox_shape_str(ranks[k], dims[k], buf + off, len - off);
		off += strlen(buf + off);
	}
}

ox_code
ox_ew_bcast_plan(ox_ew_bcast *b, int n, const int *ranks, const int64_t *const *dims,
				 const char *op, ox_status *st)
{
	int			R = 0;
	int			r;

	if (n < 1 || n > OX_EW_BCAST_MAX_IN)
		return ox_fail(st, OX_INTERNAL, "broadcast of %d inputs", n);
	for (int k = 0; k < n; k++)
	{
		if (ranks[k] < 0 || ranks[k] > OX_MAX_RANK)
			return ox_fail(st, OX_INVALID_ARGUMENT, "%s input %d has rank %d", op, k, ranks[k]);
		if (ranks[k] > R)
			R = ranks[k];
	}
	b->n_in = n;
	b->out_rank = R;

	/* output shape: every dim is 1 or the common size */
	for (int d = 0; d < R; d++)
	{
		int64_t		size = 1;

		for (int k = 0; k < n; k++)
		{
			int			kd = d - (R - ranks[k]);
			int64_t		v;

			if (kd < 0)
				continue;
			v = dims[k][kd];
			if (v < 0)
				return ox_fail(st, OX_INVALID_ARGUMENT, "%s input %d has a negative dimension", op, k);
			if (v == 1)
				continue;
			if (size == 1)
				size = v;
			else if (size != v)
			{
				char		buf[512];

				shapes_str(buf, sizeof(buf), n, ranks, dims);
				return ox_fail(st, OX_INVALID_ARGUMENT,
							   "%s cannot broadcast shapes %s", op, buf);
			}
		}
		b->out_dims[d] = size;
	}
	b->numel = ox_shape_numel(R, b->out_dims);
	if (b->numel < 0)
		return ox_fail(st, OX_LIMIT_EXCEEDED, "%s output has too many elements", op);

	/* iteration space: drop size-1 axes, keep per-input element strides */
	r = 0;
	for (int d = 0; d < R; d++)
	{
		if (b->out_dims[d] == 1)
			continue;
		b->dims[r] = b->out_dims[d];
		for (int k = 0; k < n; k++)
		{
			int			kd = d - (R - ranks[k]);
			int64_t		s = 1;

			if (kd < 0 || dims[k][kd] == 1)
				s = 0;
			else
				for (int j = kd + 1; j < ranks[k]; j++)
					s *= dims[k][j];
			b->strides[k][r] = s;
		}
		r++;
	}
	if (r == 0)
	{
		b->dims[0] = 1;
		for (int k = 0; k < n; k++)
			b->strides[k][0] = 0;
		r = 1;
	}

	/* merge axis d into its inner neighbour where every input allows it */
	for (int d = r - 2; d >= 0; d--)
	{
		bool		ok = true;

		for (int k = 0; k < n && ok; k++)
			ok = b->strides[k][d] == b->strides[k][d + 1] * b->dims[d + 1];
		if (!ok)
			continue;
		b->dims[d + 1] *= b->dims[d];
		for (int j = d; j < r - 1; j++)
		{
			b->dims[j] = b->dims[j + 1];
			for (int k = 0; k < n; k++)
				b->strides[k][j] = b->strides[k][j + 1];
		}
		r--;
	}
	b->rank = r;
	return OX_OK;
}

ox_code
ox_ew_bcast_plan_tensors(ox_ew_bcast *b, int n, const ox_tensor *const *t,
						 const char *op, ox_status *st)
{
	int			ranks[OX_EW_BCAST_MAX_IN];
	const int64_t *dims[OX_EW_BCAST_MAX_IN];

	if (n < 1 || n > OX_EW_BCAST_MAX_IN)
		return ox_fail(st, OX_INTERNAL, "broadcast of %d inputs", n);
	for (int k = 0; k < n; k++)
	{
		ranks[k] = t[k]->rank;
		dims[k] = t[k]->dims;
	}
	return ox_ew_bcast_plan(b, n, ranks, dims, op, st);
}

/*
 * Short rows.  When the innermost axis is short (a [N, 4] input with a [4]
 * or [N, 1] operand), calling the row function once per row costs more
 * than the arithmetic.  Then blocks of rows are processed as one long row:
 * inputs that are not contiguous across the block (a repeated row, a value
 * per row) are first gathered into a small contiguous tile.  A repeated row
 * is gathered once and reused while its source stays the same.
 */
#define SHORT_ROW 64
#define TILE_BYTES 4096
#define MAX_TILED 3

typedef struct bcast_job
{
	const ox_ew_bcast *b;
	ox_ew_row_fn fn;
	void	   *arg;
	char	   *out;
	const char *in[OX_EW_BCAST_MAX_IN];
	size_t		esize[OX_EW_BCAST_MAX_IN + 1];
	int			step[OX_EW_BCAST_MAX_IN];
	int64_t		tile_rows;		/* rows per block call; 0 = row by row */
	int			n_tiled;
	int			tiled[MAX_TILED];	/* inputs gathered into tiles */
	int			tile_step[OX_EW_BCAST_MAX_IN]; /* step within a block call */
} bcast_job;

/* dst[r * cols + c] = src[r * sr + c * sc], element strides */
static void
gather(char *dst, const char *src, size_t es, int64_t rows, int64_t cols,
	   int64_t sr, int64_t sc)
{
#define GATHER(T) \
	for (int64_t r = 0; r < rows; r++) \
		for (int64_t c = 0; c < cols; c++) \
			((T *) dst)[r * cols + c] = ((const T *) src)[r * sr + c * sc]
	switch (es)
	{
		case 1:
			GATHER(uint8_t);
			break;
		case 2:
			GATHER(uint16_t);
			break;
		case 4:
			GATHER(uint32_t);
			break;
		case 8:
			GATHER(uint64_t);
			break;
		default:
			for (int64_t r = 0; r < rows; r++)
				for (int64_t c = 0; c < cols; c++)
					memcpy(dst + (r * cols + c) * es, src + (r * sr + c * sc) * es, es);
			break;
	}
#undef GATHER
}

/* step axis d by one, carrying into the outer axes (axes inside d are 0) */
static inline void
carry(const ox_ew_bcast *b, int d, int64_t *idx, int64_t *off)
{
	for (; d >= 0; d--)
	{
		idx[d]++;
		for (int k = 0; k < b->n_in; k++)
			off[k] += b->strides[k][d];
		if (idx[d] < b->dims[d])
			return;
		for (int k = 0; k < b->n_in; k++)
			off[k] -= idx[d] * b->strides[k][d];
		idx[d] = 0;
	}
}

/* output elements [begin, end) */
static void
bcast_range(void *arg, int64_t begin, int64_t end)
{
	const bcast_job *j = arg;
	const ox_ew_bcast *b = j->b;
	const int	R = b->rank;
	const int	n_in = b->n_in;
	const int64_t inner = b->dims[R - 1];
	int64_t		idx[OX_MAX_RANK];
	int64_t		off[OX_EW_BCAST_MAX_IN];
	const void *in[OX_EW_BCAST_MAX_IN];
	int64_t		rem = begin;
	_Alignas(64) char tiles[MAX_TILED][TILE_BYTES];
	const char *tile_src[MAX_TILED] = {NULL};
	int64_t		tile_n[MAX_TILED] = {0};

	for (int d = R - 1; d >= 0; d--)
	{
		idx[d] = rem % b->dims[d];
		rem /= b->dims[d];
	}
	for (int k = 0; k < n_in; k++)
	{
		off[k] = 0;
		for (int d = 0; d < R; d++)
			off[k] += idx[d] * b->strides[k][d];
	}

	while (begin < end)
	{
		int64_t		n = inner - idx[R - 1];

		for (int k = 0; k < n_in; k++)
			in[k] = j->in[k] + off[k] * (int64_t) j->esize[1 + k];

		/* a block of whole short rows in one call */
		if (j->tile_rows && idx[R - 1] == 0)
		{
			int64_t		rows = b->dims[R - 2] - idx[R - 2];

			if (rows > j->tile_rows)
				rows = j->tile_rows;
			if (rows > (end - begin) / inner)
				rows = (end - begin) / inner;
			if (rows >= 2)
			{
				for (int t = 0; t < j->n_tiled; t++)
				{
					int			k = j->tiled[t];

					if (tile_src[t] != in[k] || tile_n[t] != rows)
					{
						gather(tiles[t], in[k], j->esize[1 + k], rows, inner,
							   b->strides[k][R - 2], b->strides[k][R - 1]);
						tile_src[t] = in[k];
						tile_n[t] = rows;
					}
					in[k] = tiles[t];
				}
				n = rows * inner;
				j->fn(j->arg, n, j->out + begin * (int64_t) j->esize[0], in, j->tile_step);
				begin += n;
				idx[R - 2] += rows - 1;
				for (int k = 0; k < n_in; k++)
					off[k] += (rows - 1) * b->strides[k][R - 2];
				carry(b, R - 2, idx, off);
				continue;
			}
		}

		if (n > end - begin)
			n = end - begin;
		j->fn(j->arg, n, j->out + begin * (int64_t) j->esize[0], in, j->step);
		begin += n;
		if (begin >= end)
			break;
		/* next row: the inner index wraps to 0, outer axes count up */
		for (int k = 0; k < n_in; k++)
			off[k] -= idx[R - 1] * b->strides[k][R - 1];
		idx[R - 1] = 0;
		carry(b, R - 2, idx, off);
	}
}

static void
job_init(bcast_job *j, const ox_ew_bcast *b, ox_ew_row_fn fn, void *arg, void *out,
		 const void *const *in, const size_t *esize)
{
	const int	R = b->rank;
	const int64_t inner = b->dims[R - 1];

	j->b = b;
	j->fn = fn;
	j->arg = arg;
	j->out = out;
	j->esize[0] = esize[0];
	for (int k = 0; k < b->n_in; k++)
	{
		j->in[k] = in[k];
		j->esize[1 + k] = esize[1 + k];
		j->step[k] = b->strides[k][R - 1] != 0;
		j->tile_step[k] = j->step[k];
	}

	/*
	 * Blocks of short rows: inputs contiguous across rows, or constant over
	 * the block, are read in place; the others (at most MAX_TILED) get a
	 * tile.  Blocks hold at most half the rows, so that a tile is reused.
	 */
	j->tile_rows = 0;
	j->n_tiled = 0;
	if (R >= 2 && inner < SHORT_ROW)
	{
		int64_t		max_rows = b->dims[R - 2] / 2;

		for (int k = 0; k < b->n_in && max_rows >= 2; k++)
		{
			int64_t		sr = b->strides[k][R - 2];
			int64_t		sc = b->strides[k][R - 1];

			if ((sc == 1 && sr == inner) || (sc == 0 && sr == 0))
				continue;
			if (j->n_tiled == MAX_TILED)
				max_rows = 0;
			else
			{
				int64_t		fit = TILE_BYTES / (inner * (int64_t) esize[1 + k]);

				j->tiled[j->n_tiled++] = k;
				j->tile_step[k] = 1;
				if (max_rows > fit)
					max_rows = fit;
			}
		}
		if (max_rows >= 2 && j->n_tiled > 0)
			j->tile_rows = max_rows;
	}
}

void
ox_ew_bcast_run(ox_kernel_ctx *ctx, const ox_ew_bcast *b, ox_ew_row_fn fn, void *arg,
				void *out, const void *const *in, const size_t *esize)
{
	bcast_job	j;

	if (b->numel <= 0)
		return;
	job_init(&j, b, fn, arg, out, in, esize);
	if (ctx)
		ox_parallel_for(ctx, b->numel, OX_EW_MIN_CHUNK, bcast_range, &j);
	else
		bcast_range(&j, 0, b->numel);
}

void
ox_ew_bcast_run_range(const ox_ew_bcast *b, ox_ew_row_fn fn, void *arg, void *out,
					  const void *const *in, const size_t *esize,
					  int64_t begin, int64_t end)
{
	bcast_job	j;

	if (begin < 0 || end > b->numel || begin >= end)
		return;
	job_init(&j, b, fn, arg, out, in, esize);
	bcast_range(&j, begin, end);
}

const ox_tensor *
ox_ew_input(ox_kernel_ctx *ctx, int i)
{
	const ox_tensor *t = ox_in_tensor(ctx, i);

	if (!t)
		ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s input %d is missing or not a tensor",
				ctx->node->op_type, i);
	return t;
}

/*
 * Output 0, in the buffer of one of the candidate inputs when it has the
 * output's type and size and the executor releases it after this node
 * (ox_take_input_buffer): the op then runs in place and touches no fresh
 * memory.  Safe for every elementwise row function: output element i is
 * written after the same element of that input is read, and nothing else
 * reads it.  Callers take the inputs' data pointers before this call.
 */
static ox_tensor *
ew_out_in_place(ox_kernel_ctx *ctx, ox_dtype dt, int rank, const int64_t *dims,
				const ox_tensor *const *cands, int n_cands)
{
	for (int c = 0; c < n_cands; c++)
		if (cands[c]->dtype == dt && ox_take_input_buffer(ctx, cands[c], 0, rank, dims))
			return &ctx->out[0]->tensor;
	return ox_out_tensor(ctx, 0, dt, rank, dims);
}

/*
 * Opset 1-6 binary ops broadcast B onto A only when "broadcast" is 1, and
 * "axis" places B's dims inside A's; without axis it is suffix matching,
 * which numpy broadcasting already does.
 */
static void
legacy_b_shape(const ox_kernel_ctx *ctx, const ox_tensor *a, const ox_tensor *b,
			   int *rank, int64_t *dims)
{
	const ox_node *node = ctx->node;
	const ox_attr *axis_attr = ox_node_attr(node, "axis");

	*rank = b->rank;
	memcpy(dims, b->dims, sizeof(int64_t) * b->rank);
	if (node->opset >= 7 || !axis_attr || ox_attr_int(node, "broadcast", 0) != 1)
		return;

	int64_t		axis = ox_attr_int(node, "axis", 0);

	if (axis < 0)
		axis += a->rank;
	if (axis < 0 || axis + b->rank > a->rank)
		return;					/* let numpy rules report the mismatch */
	for (int d = 0; d < a->rank; d++)
		dims[d] = (d >= axis && d < axis + b->rank) ? b->dims[d - axis] : 1;
	*rank = a->rank;
}

ox_code
ox_ew_binary_tensors(ox_kernel_ctx *ctx, const ox_tensor *a, const ox_tensor *b,
					 ox_ew_row_fn fn, ox_dtype out_dt, void *arg)
{
	ox_ew_bcast	plan;
	int			ranks[2];
	int64_t		bdims[OX_MAX_RANK];
	const int64_t *dims[2];
	ox_tensor  *out;
	const void *in[2];
	size_t		esize[3];

	ranks[0] = a->rank;
	dims[0] = a->dims;
	legacy_b_shape(ctx, a, b, &ranks[1], bdims);
	dims[1] = bdims;
	OX_TRY(ox_ew_bcast_plan(&plan, 2, ranks, dims, ctx->node->op_type, ctx->st));
	in[0] = a->data;
	in[1] = b->data;
	{
		const ox_tensor *cands[2] = {a, b};

		out = ew_out_in_place(ctx, out_dt, plan.out_rank, plan.out_dims, cands, 2);
	}
	if (!out)
		return ctx->st->code;
	esize[0] = ox_dtype_size(out_dt);
	esize[1] = ox_dtype_size(a->dtype);
	esize[2] = ox_dtype_size(b->dtype);
	ox_ew_bcast_run(ctx, &plan, fn, arg, out->data, in, esize);
	return OX_OK;
}

ox_code
ox_ew_binary(ox_kernel_ctx *ctx, const ox_ew_row_table fns, ox_dtype out_dt, void *arg)
{
	const ox_tensor *a = ox_ew_input(ctx, 0);
	const ox_tensor *b = ox_ew_input(ctx, 1);

	if (!a || !b)
		return ctx->st->code;
	if (a->dtype != b->dtype)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s inputs have different types %s and %s",
					   ctx->node->op_type, ox_dtype_name(a->dtype), ox_dtype_name(b->dtype));
	if ((int) a->dtype <= 0 || a->dtype >= OX_DTYPE_COUNT || !fns[a->dtype])
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s does not support type %s",
					   ctx->node->op_type, ox_dtype_name(a->dtype));
	return ox_ew_binary_tensors(ctx, a, b, fns[a->dtype],
								out_dt == OX_UNDEFINED ? a->dtype : out_dt, arg);
}

/* ---- maps ----------------------------------------------------------------- */

void
ox_ew_half_to_float(float *dst, const uint16_t *src, ox_dtype dt, int64_t n)
{
	if (dt == OX_BFLOAT16)
		for (int64_t i = 0; i < n; i++)
			dst[i] = ox_f32_from_bits((int32_t) ((uint32_t) src[i] << 16));
	else
		for (int64_t i = 0; i < n; i++)
			dst[i] = ox_half_to_float(src[i]);
}

void
ox_ew_float_to_half(uint16_t *dst, const float *src, ox_dtype dt, int64_t n)
{
	if (dt == OX_BFLOAT16)
		for (int64_t i = 0; i < n; i++)
			dst[i] = ox_float_to_bf16(src[i]);
	else
		for (int64_t i = 0; i < n; i++)
			dst[i] = ox_float_to_half(src[i]);
}

typedef struct map_job
{
	ox_map_fn	fn;
	const ox_map_params *p;
	const char *in;
	char	   *out;
	size_t		in_esize;
	size_t		out_esize;
	ox_dtype	half_dt;		/* float16/bfloat16 through float, else 0 */
	bool		half_out;		/* output is half_dt too (else written directly) */
} map_job;

#define MAP_HALF_BLOCK 512

static void
map_range(void *arg, int64_t begin, int64_t end)
{
	const map_job *j = arg;

	if (!j->half_dt)
	{
		j->fn(j->p, j->out + begin * (int64_t) j->out_esize,
			  j->in + begin * (int64_t) j->in_esize, end - begin);
		return;
	}
	for (int64_t i = begin; i < end; i += MAP_HALF_BLOCK)
	{
		float		x[MAP_HALF_BLOCK];
		float		y[MAP_HALF_BLOCK];
		int64_t		n = end - i < MAP_HALF_BLOCK ? end - i : MAP_HALF_BLOCK;

		ox_ew_half_to_float(x, (const uint16_t *) j->in + i, j->half_dt, n);
		if (j->half_out)
		{
			j->fn(j->p, y, x, n);
			ox_ew_float_to_half((uint16_t *) j->out + i, y, j->half_dt, n);
		}
		else
			j->fn(j->p, j->out + i * (int64_t) j->out_esize, x, n);
	}
}

ox_code
ox_ew_map(ox_kernel_ctx *ctx, const ox_map_op *op, const ox_map_params *p)
{
	static const ox_map_params no_params;
	const ox_tensor *x = ox_ew_input(ctx, 0);
	ox_tensor  *y;
	ox_dtype	out_dt;
	map_job		j;

	if (!x)
		return ctx->st->code;
	if (!p)
		p = &no_params;
	if (!ox_map_supports(op, x->dtype))
		return ox_fail(ctx->st, OX_UNSUPPORTED, "%s does not support type %s",
					   ctx->node->op_type, ox_dtype_name(x->dtype));
	out_dt = op->out_dt != OX_UNDEFINED ? op->out_dt : x->dtype;
	memset(&j, 0, sizeof(j));
	j.in = x->data;
	y = ew_out_in_place(ctx, out_dt, x->rank, x->dims, &x, 1);
	if (!y)
		return ctx->st->code;
	j.p = p;
	j.out = y->data;
	j.in_esize = ox_dtype_size(x->dtype);
	j.out_esize = ox_dtype_size(out_dt);
	j.fn = op->fn[x->dtype];
	if (!j.fn)
	{
		j.fn = op->fn[OX_FLOAT];
		j.half_dt = x->dtype;
		j.half_out = out_dt == x->dtype;
	}
	ox_parallel_for(ctx, ox_tensor_numel(x), OX_EW_MIN_CHUNK, map_range, &j);
	return OX_OK;
}
