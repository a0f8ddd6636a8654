/*
 * transformer_rotary.c
 *	  RotaryEmbedding (opset 23): rotary positional embeddings.
 *
 * Each head vector of a token is rotated pairwise by the angle of its
 * position: (x1, x2) -> (cos * x1 - sin * x2, sin * x1 + cos * x2), where
 * the pairs are the two halves of the first rotary_embedding_dim elements
 * or, with interleaved, neighbouring elements.  The rest of the head passes
 * through.  cos/sin rows come from the caches indexed by position_ids
 * ([max_pos, rotary_dim / 2] caches) or, without position_ids, straight from
 * [batch, seq, rotary_dim / 2] caches.
 *
 * Input is 4-D [batch, heads, seq, head_size] or 3-D [batch, seq, hidden]
 * with the num_heads attribute.  float16/bfloat16/double are computed in
 * float32 through converted copies.
 */
#include "kernels/cpu/transformer.h"

#include <stdlib.h>
#include <string.h>

#define ROPE_SHAPE_LEN 192

typedef struct rope_state
{
	bool		interleaved;
	int64_t		rotary_dim;		/* 0 = the whole head */
	int64_t		num_heads;		/* 0 when absent */
} rope_state;

typedef struct rope_job
{
	const float *x;
	float	   *y;
	const float *cos;
	const float *sin;
	const int64_t *pos;			/* [batch, seq] or NULL */
	bool		three_d;
	bool		interleaved;
	int64_t		seq;
	int64_t		heads;
	int64_t		head;
	int64_t		half;			/* rotary_dim / 2 */
} rope_job;

ox_code
transformer_rotary_prepare(ox_prepare_ctx *pc)
{
	int64_t		interleaved = ox_attr_int(pc->node, "interleaved", 0);
	int64_t		rotary_dim = ox_attr_int(pc->node, "rotary_embedding_dim", 0);
	int64_t		num_heads = ox_attr_int(pc->node, "num_heads", 0);
	rope_state *s;

	if (interleaved != 0 && interleaved != 1)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "RotaryEmbedding: interleaved must be 0 or 1, got %lld",
					   (long long) interleaved);
	if (rotary_dim < 0 || rotary_dim % 2 != 0 || rotary_dim > INT32_MAX)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT,
					   "RotaryEmbedding: rotary_embedding_dim must be even and >= 0, got %lld",
					   (long long) rotary_dim);
	if (num_heads < 0 || num_heads > INT32_MAX)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "RotaryEmbedding: num_heads must be > 0, got %lld",
					   (long long) num_heads);
	s = calloc(1, sizeof(*s));
	if (!s)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "RotaryEmbedding: could not allocate kernel state");
	s->interleaved = interleaved == 1;
	s->rotary_dim = rotary_dim;
	s->num_heads = num_heads;
	pc->state = s;
	return OX_OK;
}

void
transformer_rotary_free(void *state)
{
	free(state);
}

/* rotate tokens [begin, end) of batch * seq, every head */
static void
rope_rows(void *arg, int64_t begin, int64_t end)
{
	const rope_job *j = arg;

	for (int64_t bs = begin; bs < end; bs++)
	{
		int64_t		b = bs / j->seq;
		int64_t		t = bs % j->seq;
		int64_t		row = j->pos ? j->pos[bs] : bs;
		const float *c = j->cos + row * j->half;
		const float *s = j->sin + row * j->half;

		for (int64_t h = 0; h < j->heads; h++)
		{
			int64_t		off = j->three_d ? (bs * j->heads + h) * j->head :
				((b * j->heads + h) * j->seq + t) * j->head;
			const float *x = j->x + off;
			float	   *y = j->y + off;

			if (j->interleaved)
				for (int64_t i = 0; i < j->half; i++)
				{
					float		x1 = x[2 * i],
								x2 = x[2 * i + 1];

					y[2 * i] = c[i] * x1 - s[i] * x2;
					y[2 * i + 1] = s[i] * x1 + c[i] * x2;
				}
			else
				for (int64_t i = 0; i < j->half; i++)
				{
					float		x1 = x[i],
								x2 = x[i + j->half];

					y[i] = c[i] * x1 - s[i] * x2;
					y[i + j->half] = s[i] * x1 + c[i] * x2;
				}
			for (int64_t i = 2 * j->half; i < j->head; i++)
				y[i] = x[i];
		}
	}
}

/* float32 view of a tensor: its data, or a converted copy (*owned) */
static float *
rope_as_float(ox_kernel_ctx *ctx, const ox_tensor *t, bool *owned)
{
	int64_t		n = ox_tensor_numel(t);
	float	   *f;

	*owned = false;
	if (t->dtype == OX_FLOAT)
		return t->data;
	if (!(f = ox_workspace_aligned((size_t) n * sizeof(float), ctx->st, "RotaryEmbedding")))
	{
		ox_fail(ctx->st, OX_OUT_OF_MEMORY, "RotaryEmbedding: could not allocate %lld floats", (long long) n);
		return NULL;
	}
	*owned = true;
	if (n > 0 && ox_convert_elements(f, OX_FLOAT, t->data, t->dtype, n, ctx->st) != OX_OK)
	{
		ox_aligned_free(f);
		*owned = false;
		return NULL;
	}
	return f;
}

ox_code
transformer_rotary_run(ox_kernel_ctx *ctx)
{
	const rope_state *rs = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *cos_t = ox_in_tensor(ctx, 1);
	const ox_tensor *sin_t = ox_in_tensor(ctx, 2);
	const ox_tensor *pos = ox_in_tensor(ctx, 3);
	char		a[ROPE_SHAPE_LEN],
				b[ROPE_SHAPE_LEN];
	rope_job	j;
	int64_t		batch,
				rot,
				rows,
				n;
	ox_tensor  *y;
	bool		own_x = false,
				own_c = false,
				own_s = false;
	float	   *xf = NULL,
			   *cf = NULL,
			   *sf = NULL,
			   *yf = NULL;
	ox_code		rc = OX_OK;

	if (!x || !cos_t || !sin_t)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "RotaryEmbedding: input, cos_cache and sin_cache are required");
	if (x->dtype != OX_FLOAT && x->dtype != OX_FLOAT16 && x->dtype != OX_BFLOAT16 && x->dtype != OX_DOUBLE)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "RotaryEmbedding: type %s is not supported",
					   ox_dtype_name(x->dtype));
	if (cos_t->dtype != x->dtype || sin_t->dtype != x->dtype)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "RotaryEmbedding: cos_cache (%s) and sin_cache (%s) must have the input's type %s",
					   ox_dtype_name(cos_t->dtype), ox_dtype_name(sin_t->dtype), ox_dtype_name(x->dtype));
	memset(&j, 0, sizeof(j));
	j.interleaved = rs->interleaved;
	if (x->rank == 4)
	{
		batch = x->dims[0];
		j.heads = x->dims[1];
		j.seq = x->dims[2];
		j.head = x->dims[3];
		if (rs->num_heads && rs->num_heads != j.heads)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "RotaryEmbedding: num_heads is %lld but the input %s has %lld heads",
						   (long long) rs->num_heads, ox_shape_str(x->rank, x->dims, a, sizeof(a)),
						   (long long) j.heads);
	}
	else if (x->rank == 3)
	{
		if (rs->num_heads <= 0)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "RotaryEmbedding: 3-D input needs the num_heads attribute");
		j.three_d = true;
		batch = x->dims[0];
		j.seq = x->dims[1];
		j.heads = rs->num_heads;
		if (x->dims[2] % j.heads != 0)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "RotaryEmbedding: hidden size %lld is not a multiple of num_heads %lld",
						   (long long) x->dims[2], (long long) j.heads);
		j.head = x->dims[2] / j.heads;
	}
	else
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "RotaryEmbedding: input must be 3-D or 4-D, got %s",
					   ox_shape_str(x->rank, x->dims, a, sizeof(a)));
	rot = rs->rotary_dim ? rs->rotary_dim : j.head;
	if (rot > j.head || rot % 2 != 0)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "RotaryEmbedding: rotary dimension %lld must be even and at most the head size %lld",
					   (long long) rot, (long long) j.head);
	j.half = rot / 2;
	rows = batch * j.seq;
	if (ox_tensor_numel(x) < 0 || rows < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "RotaryEmbedding: input size overflows");
	if (!ox_shape_equal(cos_t->rank, cos_t->dims, sin_t->rank, sin_t->dims))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "RotaryEmbedding: cos_cache %s and sin_cache %s differ in shape",
					   ox_shape_str(cos_t->rank, cos_t->dims, a, sizeof(a)),
					   ox_shape_str(sin_t->rank, sin_t->dims, b, sizeof(b)));
	if (pos)
	{
		int64_t		max_pos;

		if (pos->dtype != OX_INT64 || pos->rank != 2 || pos->dims[0] != batch || pos->dims[1] != j.seq)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "RotaryEmbedding: position_ids must be int64 [%lld, %lld], got %s %s",
						   (long long) batch, (long long) j.seq, ox_dtype_name(pos->dtype),
						   ox_shape_str(pos->rank, pos->dims, a, sizeof(a)));
		if (cos_t->rank != 2 || cos_t->dims[1] != j.half)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "RotaryEmbedding: with position_ids the caches must be [max_position, %lld], got %s",
						   (long long) j.half, ox_shape_str(cos_t->rank, cos_t->dims, a, sizeof(a)));
		max_pos = cos_t->dims[0];
		j.pos = pos->data;
		for (int64_t i = 0; i < rows; i++)
			if (j.pos[i] < 0 || j.pos[i] >= max_pos)
				return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
							   "RotaryEmbedding: position id %lld is outside the cache's [0, %lld)",
							   (long long) j.pos[i], (long long) max_pos);
	}
	else if (cos_t->rank != 3 || cos_t->dims[0] != batch || cos_t->dims[1] != j.seq || cos_t->dims[2] != j.half)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "RotaryEmbedding: without position_ids the caches must be [%lld, %lld, %lld], got %s",
					   (long long) batch, (long long) j.seq, (long long) j.half,
					   ox_shape_str(cos_t->rank, cos_t->dims, a, sizeof(a)));

	if (!(y = ox_out_tensor(ctx, 0, x->dtype, x->rank, x->dims)))
		return ctx->st->code;
	n = ox_tensor_numel(x);
	if (!(xf = rope_as_float(ctx, x, &own_x)) || !(cf = rope_as_float(ctx, cos_t, &own_c)) ||
		!(sf = rope_as_float(ctx, sin_t, &own_s)))
		goto fail;
	if (x->dtype == OX_FLOAT)
		yf = y->data;
	else if (!(yf = ox_workspace_aligned((size_t) n * sizeof(float), ctx->st, "RotaryEmbedding")))
	{
		ox_fail(ctx->st, OX_OUT_OF_MEMORY, "RotaryEmbedding: could not allocate %lld floats", (long long) n);
		goto fail;
	}
	j.x = xf;
	j.y = yf;
	j.cos = cf;
	j.sin = sf;
	ox_parallel_for(ctx, rows, 16, rope_rows, &j);
	if (yf != y->data && n > 0 && ox_convert_elements(y->data, y->dtype, yf, OX_FLOAT, n, ctx->st) != OX_OK)
		goto fail;
	goto done;

fail:
	rc = ctx->st->code != OX_OK ? ctx->st->code : OX_INTERNAL;
done:
	if (own_x)
		ox_aligned_free(xf);
	if (own_c)
		ox_aligned_free(cf);
	if (own_s)
		ox_aligned_free(sf);
	if (yf && yf != y->data)
		ox_aligned_free(yf);
	return rc;
}
