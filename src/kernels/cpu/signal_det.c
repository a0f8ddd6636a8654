/*
 * signal_det.c
 *	  Det (opsets 11 and 22): determinants of a batch of square matrices
 *	  [*, M, M] -> [*].
 *
 * Each matrix is copied to double and reduced by LU decomposition with
 * partial pivoting (the row with the largest magnitude in the column is
 * swapped up), which keeps the elimination stable; the determinant is the
 * product of the pivots, negated once per row swap.  A zero pivot column
 * makes the determinant exactly 0.  The determinant of a 0 x 0 matrix is 1.
 * Matrices are independent and spread over the intra-op threads.
 */
#include "kernels/cpu/signal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct det_job
{
	const ox_tensor *x;
	double	   *out;
	int64_t		m;
	bool		oom;
} det_job;

static double
det_lu(double *a, int64_t m)
{
	double		det = 1.0;

	for (int64_t k = 0; k < m; k++)
	{
		int64_t		p = k;
		double		best = fabs(a[k * m + k]);

		for (int64_t i = k + 1; i < m; i++)
			if (fabs(a[i * m + k]) > best)
			{
				best = fabs(a[i * m + k]);
				p = i;
			}
		if (a[p * m + k] == 0.0)
			return 0.0;
		if (p != k)
		{
			for (int64_t c = 0; c < m; c++)
			{
				double		t = a[k * m + c];

				a[k * m + c] = a[p * m + c];
				a[p * m + c] = t;
			}
			det = -det;
		}
		det *= a[k * m + k];
		for (int64_t i = k + 1; i < m; i++)
		{
			double		f = a[i * m + k] / a[k * m + k];

			if (f == 0.0)
				continue;
			for (int64_t c = k + 1; c < m; c++)
				a[i * m + c] -= f * a[k * m + c];
		}
	}
	return det;
}

static void
det_range(void *arg, int64_t begin, int64_t end)
{
	det_job    *j = arg;
	const int64_t mm = j->m * j->m;
	const size_t esize = ox_dtype_size(j->x->dtype);
	double	   *a = malloc((size_t) (mm > 0 ? mm : 1) * sizeof(double));

	if (!a)
	{
		__atomic_store_n(&j->oom, true, __ATOMIC_RELAXED);
		return;
	}
	for (int64_t b = begin; b < end; b++)
	{
		if (mm > 0)
			ox_convert_elements(a, OX_DOUBLE, (const char *) j->x->data + (size_t) (b * mm) * esize,
								j->x->dtype, mm, NULL);
		j->out[b] = det_lu(a, j->m);
	}
	free(a);
}

ox_code
signal_det_run(ox_kernel_ctx *ctx)
{
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	char		s[192];
	int64_t		batch,
				m;
	det_job		j;
	ox_tensor  *y;
	double	   *out;
	ox_code		rc;

	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Det: input is required");
	if (x->dtype != OX_FLOAT && x->dtype != OX_DOUBLE && x->dtype != OX_FLOAT16 && x->dtype != OX_BFLOAT16)
		return ox_fail(ctx->st, OX_UNSUPPORTED, "Det: type %s is not supported", ox_dtype_name(x->dtype));
	if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Det: input must be [*, M, M], got %s",
					   ox_shape_str(x->rank, x->dims, s, sizeof(s)));
	if (ox_tensor_numel(x) < 0)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "Det: input size overflows");
	m = x->dims[x->rank - 1];
	batch = ox_shape_numel(x->rank - 2, x->dims);
	if (batch < 0 || m > (int64_t) 1 << 20)
		return ox_fail(ctx->st, OX_LIMIT_EXCEEDED, "Det: input %s is too large",
					   ox_shape_str(x->rank, x->dims, s, sizeof(s)));
	if (!(y = ox_out_tensor(ctx, 0, x->dtype, x->rank - 2, x->dims)))
		return ctx->st->code;
	if (batch == 0)
		return OX_OK;
	if (!(out = ox_workspace_alloc((size_t) batch * sizeof(double), ctx->st, "Det")))
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Det: could not allocate %lld results", (long long) batch);
	memset(&j, 0, sizeof(j));
	j.x = x;
	j.out = out;
	j.m = m;
	ox_parallel_for(ctx, batch, m >= 64 ? 1 : 64, det_range, &j);
	if (j.oom)
		rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Det: could not allocate a %lld x %lld work matrix",
					 (long long) m, (long long) m);
	else
		rc = ox_convert_elements(y->data, y->dtype, out, OX_DOUBLE, batch, ctx->st);
	free(out);
	return rc;
}
