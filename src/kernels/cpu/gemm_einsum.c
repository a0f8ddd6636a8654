/*
 * gemm_einsum.c
 *	  Einsum: the equation is parsed once in prepare; run() resolves the
 *	  ellipsis against the input ranks and evaluates the operands left to
 *	  right.
 *
 * Each operand first loses repeated labels (a diagonal, "ii->i") and the
 * labels nobody else needs (summed out).  Two operands are then contracted
 * with a batched GEMM: labels shared and kept are batch axes, shared and
 * not kept are the reduction axis, the rest are the M and N axes.  Operands
 * already laid out as [batch, M, K] / [batch, K, M] (and likewise for B) are
 * used in place with the matching transpose flag; others are permuted once.
 * A size-1 axis facing a larger one (ellipsis broadcasting) is simply
 * dropped from the operand that has it.
 *
 * float32 computes in float32 (sgemm); float16/bfloat16 are staged through
 * float32; double and the integer types compute in double (integers stay
 * exact below 2^53).
 */
#include "kernels/cpu/nn.h"

#include <string.h>

#define EIN_LETTERS 52			/* a-z, A-Z */
#define EIN_MAX_LABELS (EIN_LETTERS + OX_MAX_RANK)
#define EIN_MAX_OPERANDS 64

typedef struct ein_term
{
	int			n;				/* number of letters */
	int8_t		lab[OX_MAX_RANK];	/* letter ids, ellipsis not included */
	int			ell;			/* position of "..." among the letters, -1 if none */
} ein_term;

typedef struct ein_state
{
	int			n_ops;
	ein_term	in[EIN_MAX_OPERANDS];
	ein_term	out;
	bool		explicit_out;
} ein_state;

/* a working operand: row-major data in the compute type, one label per axis */
typedef struct ein_operand
{
	void	   *data;
	bool		owned;
	int			rank;
	int			lab[OX_MAX_RANK];
	int64_t		dims[OX_MAX_RANK];
} ein_operand;

typedef struct ein_run
{
	ox_status  *st;
	bool		dbl;			/* compute in double, else float */
	size_t		es;
	int64_t		size[EIN_MAX_LABELS];
} ein_run;

static int
letter_id(char c)
{
	if (c >= 'a' && c <= 'z')
		return c - 'a';
	if (c >= 'A' && c <= 'Z')
		return 26 + c - 'A';
	return -1;
}

static char
id_letter(int id)
{
	return id < 26 ? (char) ('a' + id) : (char) ('A' + id - 26);
}

static ox_code
parse_term(const char *s, size_t len, ein_term *t, ox_status *st)
{
	t->n = 0;
	t->ell = -1;
	for (size_t i = 0; i < len; i++)
	{
		char		c = s[i];

		if (c == ' ')
			continue;
		if (c == '.')
		{
			if (i + 2 >= len)
				return ox_fail(st, OX_INVALID_ARGUMENT, "Einsum: incomplete ellipsis in the equation");
			if (s[i + 1] != '.' || s[i + 2] != '.' || t->ell >= 0)
				return ox_fail(st, OX_INVALID_ARGUMENT, "Einsum: bad or repeated ellipsis in the equation");
			t->ell = t->n;
			i += 2;
			continue;
		}
		if (letter_id(c) < 0)
			return ox_fail(st, OX_INVALID_ARGUMENT, "Einsum: unexpected character '%c' in the equation", c);
		if (t->n >= OX_MAX_RANK)
			return ox_fail(st, OX_INVALID_ARGUMENT, "Einsum: a term has more than %d labels", OX_MAX_RANK);
		t->lab[t->n++] = (int8_t) letter_id(c);
	}
	return OX_OK;
}

ox_code
nn_einsum_prepare(ox_prepare_ctx *pc)
{
	const char *eq = ox_attr_string(pc->node, "equation", NULL);
	const char *arrow,
			   *p,
			   *end;
	ein_state  *s;
	ox_code		rc = OX_OK;

	if (!eq)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "Einsum: attribute equation is required");
	s = calloc(1, sizeof(*s));
	if (!s)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "Einsum: could not allocate state");
	arrow = strstr(eq, "->");
	end = arrow ? arrow : eq + strlen(eq);
	for (p = eq;;)
	{
		const char *comma = memchr(p, ',', (size_t) (end - p));
		const char *stop = comma ? comma : end;

		if (s->n_ops >= EIN_MAX_OPERANDS)
		{
			rc = ox_fail(pc->st, OX_UNSUPPORTED, "Einsum: more than %d operands", EIN_MAX_OPERANDS);
			break;
		}
		if ((rc = parse_term(p, (size_t) (stop - p), &s->in[s->n_ops++], pc->st)) != OX_OK)
			break;
		if (!comma)
			break;
		p = comma + 1;
	}
	if (rc == OX_OK && arrow)
	{
		s->explicit_out = true;
		if (strstr(arrow + 2, "->"))
			rc = ox_fail(pc->st, OX_INVALID_ARGUMENT, "Einsum: equation \"%s\" has more than one \"->\"", eq);
		else
			rc = parse_term(arrow + 2, strlen(arrow + 2), &s->out, pc->st);
		for (int i = 0; rc == OX_OK && i < s->out.n; i++)
		{
			bool		found = false;

			for (int j = 0; j < i; j++)
				if (s->out.lab[j] == s->out.lab[i])
					rc = ox_fail(pc->st, OX_INVALID_ARGUMENT,
								 "Einsum: output label '%c' appears twice", id_letter(s->out.lab[i]));
			for (int o = 0; o < s->n_ops && !found; o++)
				for (int j = 0; j < s->in[o].n; j++)
					found |= s->in[o].lab[j] == s->out.lab[i];
			if (rc == OX_OK && !found)
				rc = ox_fail(pc->st, OX_INVALID_ARGUMENT,
							 "Einsum: output label '%c' does not appear in any input",
							 id_letter(s->out.lab[i]));
		}
	}
	if (rc != OX_OK)
	{
		free(s);
		return rc;
	}
	pc->state = s;
	return OX_OK;
}

void
nn_einsum_free(void *state)
{
	free(state);
}

static void
operand_free(ein_operand *o)
{
	if (o->owned)
		ox_aligned_free(o->data);
	o->data = NULL;
	o->owned = false;
}

/* dst = src viewed with element strides sstr over dims (row-major dst) */
static void
strided_copy(void *dst, const void *src, size_t es, int rank, const int64_t *dims,
			 const int64_t *sstr)
{
	int64_t		idx[OX_MAX_RANK] = {0};
	int64_t		n = ox_shape_numel(rank, dims);
	int64_t		inner = rank ? dims[rank - 1] : 1;
	int64_t		istr = rank ? sstr[rank - 1] : 0;
	int64_t		off = 0;

	if (n <= 0)
		return;
	for (int64_t done = 0; done < n; done += inner)
	{
		if (es == 4)
		{
			const uint32_t *s = (const uint32_t *) src + off;
			uint32_t   *d = (uint32_t *) dst + done;

			for (int64_t j = 0; j < inner; j++)
				d[j] = s[j * istr];
		}
		else
		{
			const uint64_t *s = (const uint64_t *) src + off;
			uint64_t   *d = (uint64_t *) dst + done;

			for (int64_t j = 0; j < inner; j++)
				d[j] = s[j * istr];
		}
		/* advance the odometer over the outer axes */
		for (int a = rank - 2; a >= 0; a--)
		{
			off += sstr[a];
			if (++idx[a] < dims[a])
				break;
			off -= sstr[a] * dims[a];
			idx[a] = 0;
		}
	}
}

static void
row_major_strides(int rank, const int64_t *dims, int64_t *str)
{
	int64_t		s = 1;

	for (int i = rank - 1; i >= 0; i--)
	{
		str[i] = s;
		s *= dims[i];
	}
}

/*
 * Rebuild o with the axes listed in order[] (axis indices of o); an axis
 * index may repeat to take a diagonal, in which case new_lab tells the
 * label and the strides add up.  Used for permutes and diagonals.
 */
static ox_code
operand_restride(ein_run *r, ein_operand *o, int new_rank, const int *new_lab,
				 const int64_t *new_dims, const int64_t *new_str)
{
	int64_t		n = ox_shape_numel(new_rank, new_dims);
	void	   *d = nn_scratch(n, r->es, r->st, "Einsum");

	if (!d)
		return r->st->code;
	strided_copy(d, o->data, r->es, new_rank, new_dims, new_str);
	operand_free(o);
	o->data = d;
	o->owned = true;
	o->rank = new_rank;
	memcpy(o->lab, new_lab, sizeof(int) * new_rank);
	memcpy(o->dims, new_dims, sizeof(int64_t) * new_rank);
	return OX_OK;
}

/* merge repeated labels of o into one axis (the diagonal) */
static ox_code
operand_diagonal(ein_run *r, ein_operand *o)
{
	int64_t		str[OX_MAX_RANK],
				nstr[OX_MAX_RANK],
				ndims[OX_MAX_RANK];
	int			nlab[OX_MAX_RANK],
				nr = 0;
	bool		repeated = false;

	row_major_strides(o->rank, o->dims, str);
	for (int i = 0; i < o->rank; i++)
	{
		int			j;

		for (j = 0; j < nr; j++)
			if (nlab[j] == o->lab[i])
				break;
		if (j < nr)
		{
			if (o->dims[i] != ndims[j])
				return ox_fail(r->st, OX_INVALID_ARGUMENT,
							   "Einsum: repeated label '%c' has sizes %lld and %lld in one operand",
							   o->lab[i] < EIN_LETTERS ? id_letter(o->lab[i]) : '.',
							   (long long) ndims[j], (long long) o->dims[i]);
			nstr[j] += str[i];
			repeated = true;
			continue;
		}
		nlab[nr] = o->lab[i];
		ndims[nr] = o->dims[i];
		nstr[nr] = str[i];
		nr++;
	}
	if (!repeated)
		return OX_OK;
	return operand_restride(r, o, nr, nlab, ndims, nstr);
}

/* permute o so that its labels follow want[] (a permutation of o->lab) */
static ox_code
operand_permute(ein_run *r, ein_operand *o, const int *want)
{
	int64_t		str[OX_MAX_RANK],
				nstr[OX_MAX_RANK],
				ndims[OX_MAX_RANK];
	bool		same = true;

	row_major_strides(o->rank, o->dims, str);
	for (int i = 0; i < o->rank; i++)
	{
		int			j = 0;

		while (o->lab[j] != want[i])
			j++;
		nstr[i] = str[j];
		ndims[i] = o->dims[j];
		same &= j == i;
	}
	if (same)
		return OX_OK;
	return operand_restride(r, o, o->rank, want, ndims, nstr);
}

/* sum o over the axes whose labels are not marked in keep[] */
static ox_code
operand_reduce(ein_run *r, ein_operand *o, const bool *keep)
{
	int			order[OX_MAX_RANK] = {0},
				nk = 0,
				nr = 0;
	int64_t		outer = 1,
				inner = 1;
	void	   *d;

	for (int i = 0; i < o->rank; i++)
		if (keep[o->lab[i]])
			order[nk++] = o->lab[i];
	if (nk == o->rank)
		return OX_OK;
	nr = nk;
	for (int i = 0; i < o->rank; i++)
		if (!keep[o->lab[i]])
			order[nr++] = o->lab[i];
	OX_TRY(operand_permute(r, o, order));
	for (int i = 0; i < nk; i++)
		outer *= o->dims[i];
	for (int i = nk; i < o->rank; i++)
		inner *= o->dims[i];
	if (!(d = nn_scratch(outer, r->es, r->st, "Einsum")))
		return r->st->code;
	/* sums over an empty axis are 0; o (empty) may have no data to offset from */
	if (inner == 0 && outer > 0)
		memset(d, 0, (size_t) outer * r->es);
	for (int64_t i = 0; i < outer && inner > 0; i++)
	{
		if (r->dbl)
		{
			const double *s = (const double *) o->data + i * inner;
			double		acc = 0;

			for (int64_t j = 0; j < inner; j++)
				acc += s[j];
			((double *) d)[i] = acc;
		}
		else
		{
			const float *s = (const float *) o->data + i * inner;
			float		acc = 0;

			for (int64_t j = 0; j < inner; j++)
				acc += s[j];
			((float *) d)[i] = acc;
		}
	}
	operand_free(o);
	o->data = d;
	o->owned = true;
	o->rank = nk;
	return OX_OK;
}

/* drop size-1 axes whose label is larger elsewhere (broadcasting) */
static void
operand_squeeze_broadcast(ein_run *r, ein_operand *o)
{
	int			nr = 0;

	for (int i = 0; i < o->rank; i++)
	{
		if (o->dims[i] == 1 && r->size[o->lab[i]] != 1)
			continue;
		o->lab[nr] = o->lab[i];
		o->dims[nr] = o->dims[i];
		nr++;
	}
	o->rank = nr;
}

static bool
has_label(const ein_operand *o, int l)
{
	for (int i = 0; i < o->rank; i++)
		if (o->lab[i] == l)
			return true;
	return false;
}

/* is o laid out as the concatenation of lists x, y, z? */
static bool
laid_out_as(const ein_operand *o, const int *x, int nx, const int *y, int ny, const int *z, int nz)
{
	int			p = 0;

	for (int i = 0; i < nx; i++)
		if (o->lab[p++] != x[i])
			return false;
	for (int i = 0; i < ny; i++)
		if (o->lab[p++] != y[i])
			return false;
	for (int i = 0; i < nz; i++)
		if (o->lab[p++] != z[i])
			return false;
	return true;
}

static int
concat3(int *dst, const int *x, int nx, const int *y, int ny, const int *z, int nz)
{
	memcpy(dst, x, sizeof(int) * nx);
	memcpy(dst + nx, y, sizeof(int) * ny);
	memcpy(dst + nx + ny, z, sizeof(int) * nz);
	return nx + ny + nz;
}

/* a (result) = a . b, keeping the labels marked in keep[] */
static ox_code
contract(ein_run *r, ein_operand *a, ein_operand *b, const bool *keep)
{
	int			batch[OX_MAX_RANK],
				red[OX_MAX_RANK],
				left[OX_MAX_RANK],
				right[OX_MAX_RANK],
				order[OX_MAX_RANK];
	int			nbt = 0,
				nred = 0,
				nl = 0,
				nrt = 0;
	int64_t		nb = 1,
				m = 1,
				k = 1,
				n = 1,
				ydims[OX_MAX_RANK];
	bool		ta,
				tb;
	void	   *y;
	int			yr;

	for (int i = 0; i < a->rank; i++)
	{
		int			l = a->lab[i];

		if (has_label(b, l))
		{
			if (keep[l])
				batch[nbt++] = l, nb *= a->dims[i];
			else
				red[nred++] = l, k *= a->dims[i];
		}
		else
			left[nl++] = l, m *= a->dims[i];
	}
	for (int i = 0; i < b->rank; i++)
		if (!has_label(a, b->lab[i]))
			right[nrt++] = b->lab[i], n *= b->dims[i];
	if (nbt + nl + nrt > OX_MAX_RANK)
		return ox_fail(r->st, OX_LIMIT_EXCEEDED, "Einsum: an intermediate result has rank above %d", OX_MAX_RANK);
	if (!nn_blas_fits(m, n, k) || ox_shape_numel(4, (int64_t[]) {nb, m, n, 1}) < 0)
		return ox_fail(r->st, OX_LIMIT_EXCEEDED, "Einsum: contraction of %lld x %lld x %lld (batch %lld) is too large",
					   (long long) m, (long long) k, (long long) n, (long long) nb);

	/* A as [batch, M, K] or [batch, K, M]; B as [batch, K, N] or [batch, N, K] */
	ta = false;
	if (!laid_out_as(a, batch, nbt, left, nl, red, nred))
	{
		if (laid_out_as(a, batch, nbt, red, nred, left, nl))
			ta = true;
		else
		{
			concat3(order, batch, nbt, left, nl, red, nred);
			OX_TRY(operand_permute(r, a, order));
		}
	}
	tb = false;
	if (!laid_out_as(b, batch, nbt, red, nred, right, nrt))
	{
		if (laid_out_as(b, batch, nbt, right, nrt, red, nred))
			tb = true;
		else
		{
			concat3(order, batch, nbt, red, nred, right, nrt);
			OX_TRY(operand_permute(r, b, order));
		}
	}
	if (!(y = nn_scratch(nb * m * n, r->es, r->st, "Einsum")))
		return r->st->code;
	/* an empty reduced axis gives 0; an empty operand may have no data to offset from */
	if (k == 0 && nb * m * n > 0)
		memset(y, 0, (size_t) (nb * m * n) * r->es);
	for (int64_t i = 0; i < nb && k > 0 && m * n > 0; i++)
	{
		if (r->dbl)
			nn_dgemm(ta, tb, m, n, k, 1.0, (const double *) a->data + i * m * k, ta ? m : k,
					 (const double *) b->data + i * k * n, tb ? k : n, 0.0,
					 (double *) y + i * m * n, n);
		else
			nn_sgemm(ta, tb, m, n, k, 1.0f, (const float *) a->data + i * m * k, ta ? m : k,
					 (const float *) b->data + i * k * n, tb ? k : n, 0.0f,
					 (float *) y + i * m * n, n);
	}
	yr = concat3(order, batch, nbt, left, nl, right, nrt);
	for (int i = 0; i < yr; i++)
		ydims[i] = r->size[order[i]];
	operand_free(a);
	a->data = y;
	a->owned = true;
	a->rank = yr;
	memcpy(a->lab, order, sizeof(int) * yr);
	memcpy(a->dims, ydims, sizeof(int64_t) * yr);
	return OX_OK;
}

/* map input i's axes to label ids, resolving the ellipsis right-aligned */
static ox_code
label_axes(const ein_state *s, int i, const ox_tensor *t, int ell_rank, ein_operand *o, ox_status *st)
{
	const ein_term *term = &s->in[i];
	int			e = t->rank - term->n;
	int			p = 0;
	char		buf[NN_SHAPE_LEN];

	if (e < 0 || (e > 0 && term->ell < 0))
		return ox_fail(st, OX_INVALID_ARGUMENT,
					   "Einsum: input %d has shape %s but its term has %d labels%s",
					   i, nn_shape(t, buf), term->n, term->ell >= 0 ? " and an ellipsis" : "");
	o->rank = t->rank;
	for (int j = 0; j <= term->n; j++)
	{
		if (j == term->ell)
			for (int q = 0; q < e; q++)
				o->lab[p++] = EIN_LETTERS + (ell_rank - e) + q;
		if (j < term->n)
			o->lab[p++] = term->lab[j];
	}
	memcpy(o->dims, t->dims, sizeof(int64_t) * t->rank);
	return OX_OK;
}

static ox_code
einsum_body(ox_kernel_ctx *ctx, const ein_state *s, ein_run *r, ein_operand *ops)
{
	int			ell_rank = 0;
	int			out_lab[OX_MAX_RANK + EIN_LETTERS];
	int			n_out = 0;
	int			count[EIN_MAX_LABELS] = {0};
	int64_t		out_dims[OX_MAX_RANK];
	ox_dtype	dt = ox_in_tensor(ctx, 0)->dtype;
	ox_tensor  *y;
	bool		keep[EIN_MAX_LABELS];

	for (int i = 0; i < s->n_ops; i++)
	{
		int			e = ox_in_tensor(ctx, i)->rank - s->in[i].n;

		if (e > ell_rank)
			ell_rank = e;
	}
	for (int l = 0; l < EIN_MAX_LABELS; l++)
		r->size[l] = -1;
	for (int i = 0; i < s->n_ops; i++)
	{
		const ox_tensor *t = ox_in_tensor(ctx, i);

		OX_TRY(label_axes(s, i, t, ell_rank, &ops[i], r->st));
		for (int j = 0; j < ops[i].rank; j++)
		{
			int			l = ops[i].lab[j];
			int64_t		d = ops[i].dims[j];

			count[l]++;
			if (r->size[l] < 0 || r->size[l] == 1)
				r->size[l] = d;
			else if (d != 1 && d != r->size[l])
				return ox_fail(r->st, OX_INVALID_ARGUMENT,
							   "Einsum: label '%c' has sizes %lld and %lld",
							   l < EIN_LETTERS ? id_letter(l) : '.',
							   (long long) r->size[l], (long long) d);
		}
	}

	/* output labels */
	if (s->explicit_out)
	{
		if (s->out.ell < 0 && ell_rank > 0)
		{
			/* numpy refuses to drop broadcast axes silently unless all are size 1 */
			for (int q = 0; q < ell_rank; q++)
				if (r->size[EIN_LETTERS + q] != 1)
					return ox_fail(r->st, OX_INVALID_ARGUMENT,
								   "Einsum: the inputs have ellipsis axes but the output has no ellipsis");
		}
		for (int j = 0; j <= s->out.n; j++)
		{
			if (j == s->out.ell)
				for (int q = 0; q < ell_rank; q++)
					out_lab[n_out++] = EIN_LETTERS + q;
			if (j < s->out.n)
				out_lab[n_out++] = s->out.lab[j];
		}
	}
	else
	{
		for (int q = 0; q < ell_rank; q++)
			out_lab[n_out++] = EIN_LETTERS + q;
		/* letters used once, in alphabetical order (upper case sorts first) */
		for (int l = 26; l < EIN_LETTERS; l++)
			if (count[l] == 1)
				out_lab[n_out++] = l;
		for (int l = 0; l < 26; l++)
			if (count[l] == 1)
				out_lab[n_out++] = l;
	}
	if (n_out > OX_MAX_RANK)
		return ox_fail(r->st, OX_LIMIT_EXCEEDED, "Einsum: output rank %d is too deep", n_out);
	for (int i = 0; i < n_out; i++)
		out_dims[i] = r->size[out_lab[i]];

	/* inputs into the compute type */
	for (int i = 0; i < s->n_ops; i++)
	{
		const ox_tensor *t = ox_in_tensor(ctx, i);
		int64_t		n = ox_tensor_numel(t);

		if ((r->dbl && t->dtype == OX_DOUBLE) || (!r->dbl && t->dtype == OX_FLOAT))
			ops[i].data = t->data;
		else
		{
			if (!(ops[i].data = nn_scratch(n, r->es, r->st, "Einsum")))
				return r->st->code;
			ops[i].owned = true;
			OX_TRY(ox_convert_elements(ops[i].data, r->dbl ? OX_DOUBLE : OX_FLOAT, t->data,
									   t->dtype, n, r->st));
		}
		OX_TRY(operand_diagonal(r, &ops[i]));
	}

	/* fold the operands left to right */
	for (int i = 0; i < s->n_ops; i++)
	{
		ein_operand *a = &ops[0];

		memset(keep, 0, sizeof(keep));
		for (int j = 0; j < n_out; j++)
			keep[out_lab[j]] = true;
		for (int j = i + 1; j < s->n_ops; j++)
			for (int q = 0; q < ops[j].rank; q++)
				keep[ops[j].lab[q]] = true;
		if (i == 0)
		{
			if (s->n_ops == 1)
				OX_TRY(operand_reduce(r, a, keep));
			continue;
		}
		{
			ein_operand *b = &ops[i];
			bool		keep_a[EIN_MAX_LABELS],
						keep_b[EIN_MAX_LABELS];

			operand_squeeze_broadcast(r, a);
			operand_squeeze_broadcast(r, b);
			/* a label only one side has and nobody else needs is summed there */
			for (int l = 0; l < EIN_MAX_LABELS; l++)
			{
				keep_a[l] = keep[l] || has_label(b, l);
				keep_b[l] = keep[l] || has_label(a, l);
			}
			OX_TRY(operand_reduce(r, a, keep_a));
			OX_TRY(operand_reduce(r, b, keep_b));
			OX_TRY(contract(r, a, b, keep));
			operand_free(b);
		}
		if (ox_kernel_should_abort(ctx))
			return ox_fail(r->st, OX_CANCELED, "Einsum: canceled");
	}

	/* broadcast axes that survived with size 1 but are larger in the output */
	{
		ein_operand *a = &ops[0];
		int64_t		str[OX_MAX_RANK],
					ostr[OX_MAX_RANK];
		void	   *dst;
		int64_t		ny = ox_shape_numel(n_out, out_dims);

		row_major_strides(a->rank, a->dims, str);
		for (int i = 0; i < n_out; i++)
		{
			int			j;

			ostr[i] = 0;
			for (j = 0; j < a->rank; j++)
				if (a->lab[j] == out_lab[i])
					break;
			if (j < a->rank && a->dims[j] == out_dims[i])
				ostr[i] = str[j];
			else if (j < a->rank && a->dims[j] != 1)
				return ox_fail(r->st, OX_INTERNAL, "Einsum: result axis size mismatch");
		}
		if (!(y = ox_out_tensor(ctx, 0, dt, n_out, out_dims)))
			return ctx->st->code;
		if (ny <= 0)
			return OX_OK;
		if ((r->dbl && dt == OX_DOUBLE) || (!r->dbl && dt == OX_FLOAT))
		{
			strided_copy(y->data, a->data, r->es, n_out, out_dims, ostr);
			return OX_OK;
		}
		if (!(dst = nn_scratch(ny, r->es, r->st, "Einsum")))
			return r->st->code;
		strided_copy(dst, a->data, r->es, n_out, out_dims, ostr);
		{
			ox_code		rc = ox_convert_elements(y->data, dt, dst, r->dbl ? OX_DOUBLE : OX_FLOAT,
												 ny, r->st);

			ox_aligned_free(dst);
			return rc;
		}
	}
}

ox_code
nn_einsum_run(ox_kernel_ctx *ctx)
{
	const ein_state *s = ctx->state;
	ein_operand *ops;
	ein_run		r;
	ox_code		rc;
	ox_dtype	dt;

	if (!s)
		return ox_fail(ctx->st, OX_INTERNAL, "Einsum: not prepared");
	if (ctx->n_in != s->n_ops)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Einsum: the equation has %d operands but the node has %d inputs",
					   s->n_ops, ctx->n_in);
	for (int i = 0; i < s->n_ops; i++)
	{
		const ox_tensor *t = ox_in_tensor(ctx, i);

		if (!t)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Einsum: input %d is missing", i);
		if (t->dtype != ox_in_tensor(ctx, 0)->dtype)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "Einsum: input %d is %s but input 0 is %s", i,
						   ox_dtype_name(t->dtype), ox_dtype_name(ox_in_tensor(ctx, 0)->dtype));
	}
	dt = ox_in_tensor(ctx, 0)->dtype;
	if (!(dt == OX_FLOAT || dt == OX_DOUBLE || nn_is_half(dt) || ox_dtype_is_int(dt)))
		return ox_fail(ctx->st, OX_UNSUPPORTED, "Einsum: type %s is not supported", ox_dtype_name(dt));
	memset(&r, 0, sizeof(r));
	r.st = ctx->st;
	r.dbl = !(dt == OX_FLOAT || nn_is_half(dt));
	r.es = r.dbl ? sizeof(double) : sizeof(float);
	ops = calloc(s->n_ops, sizeof(ein_operand));
	if (!ops)
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "Einsum: could not allocate operands");
	rc = einsum_body(ctx, s, &r, ops);
	for (int i = 0; i < s->n_ops; i++)
		operand_free(&ops[i]);
	free(ops);
	return rc;
}
