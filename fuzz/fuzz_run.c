/*
 * fuzz_run.c
 *	  libFuzzer target: session runs with fuzzed input shapes, element
 *	  types and values, on a set of seed models.
 *
 * The first byte picks a model (its low 7 bits: the line of fuzz/models.txt)
 * and whether its session is optimized (the high bit); the
 * rest describes each input: whether it follows the declared rank, shape and
 * type or breaks them, its dimensions and its values (raw bit patterns, so
 * NaN, infinities and huge integers, or small numbers that make plausible
 * indices and shapes).  Every run must end in a status (success, invalid
 * argument, limit, canceled...), never in a crash or a sanitizer report.
 *
 * Sessions are created once, at start-up, and reused across inputs like a
 * PostgreSQL backend reuses its cached sessions: shapes change from run to
 * run, which exercises plan and buffer reuse.  Each session has a twin
 * without the shape memo (runtime/memo.c), which runs every input too: the
 * two must succeed or fail together and give the same bytes, whatever runs
 * (targeted, failed, canceled) came before; a difference aborts.  The
 * abort callback cancels a run after 0.5 s, so endless loops show up as
 * canceled runs, and the cancel path is fuzzed too.
 *
 * Seed models: the files listed in fuzz/models.txt (or the list file named
 * by $OX_FUZZ_MODELS), one path per line relative to the list.  A model's
 * line number is its index, so that inputs saved in fuzz/regressions/run
 * keep picking the same model: only ever append to the list.  A listed file
 * that is missing or does not load keeps its slot (inputs for it do
 * nothing).
 */
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/onnx_engine.h"

#define MAX_MODELS 128			/* the first byte's low 7 bits */
#define MAX_INPUTS 16
#define MAX_ELEMS (1 << 16)
#define RUN_SECONDS 0.5

int			LLVMFuzzerInitialize(int *argc, char ***argv);
int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct seed
{
	char		name[256];
	ox_session *sess[2];		/* [0] optimized, [1] optimizer disabled */
	ox_session *plain[2];		/* the same without the shape memo */
} seed;

static seed seeds[MAX_MODELS];
static int	n_seeds;
static double deadline;

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Cancels a run after RUN_SECONDS; 0 (between runs, and while the seed
 * sessions are built: session creation polls the callback too) means no
 * deadline.
 */
static bool
should_abort(void *arg)
{
	(void) arg;
	return deadline > 0 && now_s() > deadline;
}

static void
load_model(const char *path)
{
	seed	   *sd = &seeds[n_seeds++];
	FILE	   *f;
	long		len;
	void	   *buf;

	snprintf(sd->name, sizeof(sd->name), "%s", path);
	if ((f = fopen(path, "rb")) == NULL)
	{
		fprintf(stderr, "fuzz_run: skipping %s: cannot open it\n", path);
		return;
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(len > 0 ? len : 1);
	if (buf && fread(buf, 1, len, f) == (size_t) len)
	{
		for (int k = 0; k < 4; k++)
		{
			ox_status	st;
			ox_session_options o;
			ox_model   *m;
			ox_session **at = k < 2 ? &sd->sess[k] : &sd->plain[k - 2];

			ox_status_clear(&st);
			m = ox_model_load(buf, len, NULL, &st);
			if (m)
			{
				memset(&o, 0, sizeof(o));
				o.intra_op_threads = 1;
				o.opt_level = k % 2 == 0 ? OX_OPT_ALL : OX_OPT_DISABLE;
				o.providers = "cpu";
				o.max_run_memory = 64 << 20;
				o.should_abort = should_abort;
				o.disable_shape_memo = k >= 2;
				*at = ox_session_create(m, &o, &st);
			}
			if (!*at)
			{
				fprintf(stderr, "fuzz_run: skipping %s: %s\n", path, st.msg);
				for (int j = 0; j < 2; j++)
				{
					ox_session_free(sd->sess[j]);
					ox_session_free(sd->plain[j]);
					sd->sess[j] = sd->plain[j] = NULL;
				}
				break;
			}
		}
	}
	free(buf);
	fclose(f);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *env = getenv("OX_FUZZ_MODELS");
	char		list[PATH_MAX];
	char		dir[PATH_MAX];
	char		line[PATH_MAX];
	FILE	   *f;
	int			usable = 0;

	if (env)
		snprintf(list, sizeof(list), "%s", env);
	else
	{
		snprintf(dir, sizeof(dir), "%s", (*argv)[0]);
		snprintf(list, sizeof(list), "%s/../models.txt", dirname(dir));
	}
	if ((f = fopen(list, "r")) == NULL)
	{
		fprintf(stderr, "fuzz_run: cannot read the model list %s (set OX_FUZZ_MODELS)\n", list);
		exit(1);
	}
	snprintf(line, sizeof(line), "%s", list);
	snprintf(dir, sizeof(dir), "%s", dirname(line));
	while (fgets(line, sizeof(line), f) && n_seeds < MAX_MODELS)
	{
		char		path[2 * PATH_MAX + 2];

		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '\0' || line[0] == '#')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, line);
		load_model(path);
	}
	fclose(f);
	for (int i = 0; i < n_seeds; i++)
		usable += seeds[i].sess[0] != NULL;
	fprintf(stderr, "fuzz_run: %d seed models (%d usable)\n", n_seeds, usable);
	if (usable == 0)
		exit(1);
	(void) argc;
	return 0;
}

/* ---- reading the fuzz input ---- */

typedef struct reader
{
	const uint8_t *p;
	size_t		left;
} reader;

static uint8_t
u8(reader *r)
{
	if (r->left == 0)
		return 0;
	r->left--;
	return *r->p++;
}

static void
raw(reader *r, void *out, size_t n)
{
	uint8_t    *o = out;

	for (size_t i = 0; i < n; i++)
		o[i] = u8(r);
}

/* a small signed number (-8..7) most of the time: plausible shapes, axes, indices */
static int64_t
small_int(reader *r)
{
	return (int64_t) (int8_t) u8(r) >> 4;
}

static void
fill(reader *r, ox_tensor *t, int64_t n, bool raw_bits)
{
	size_t		es = ox_dtype_size(t->dtype);

	if (t->dtype == OX_STRING)
	{
		ox_string  *s = t->data;

		for (int64_t i = 0; i < n; i++)
		{
			size_t		len = u8(r) % 8;

			s[i].data = malloc(len + 1);
			raw(r, s[i].data, len);
			s[i].data[len] = '\0';
			s[i].len = len;
		}
		return;
	}
	for (int64_t i = 0; i < n; i++)
	{
		char	   *dst = (char *) t->data + i * es;

		if (raw_bits)
			raw(r, dst, es);
		else
		{
			int64_t		v = small_int(r);
			ox_status	st;

			/* convert the small integer to the element type */
			if (ox_convert_elements(dst, t->dtype, &v, OX_INT64, 1, &st) != OX_OK)
				memset(dst, 0, es);
		}
	}
}

static bool
build_input(reader *r, const ox_value_def *def, ox_value *v)
{
	const ox_type *ty = &def->type;
	uint8_t		mode = u8(r);
	bool		conform = (mode & 0x07) != 0;	/* 7 in 8 follow the declaration */
	bool		wide = (mode & 0x08) != 0;
	bool		raw_bits = (mode & 0x30) == 0x30;
	ox_tensor  *t = &v->tensor;
	int64_t		n;

	ox_value_init_tensor(v);
	if (ty->kind != OX_TYPE_TENSOR && ty->kind != OX_TYPE_UNKNOWN && conform)
		return false;			/* sequences and maps: not fuzzed */
	t->dtype = ty->kind == OX_TYPE_TENSOR && ty->elem != OX_UNDEFINED ? ty->elem : OX_FLOAT;
	if (!conform && (mode & 0x40))
	{
		t->dtype = (ox_dtype) (u8(r) % OX_DTYPE_COUNT);
		if (ox_dtype_size(t->dtype) == 0)
			t->dtype = OX_FLOAT;
	}
	if (t->dtype == OX_COMPLEX64 || t->dtype == OX_COMPLEX128)
		t->dtype = OX_FLOAT;
	t->rank = ty->kind == OX_TYPE_TENSOR && ty->rank >= 0 && conform ? ty->rank : u8(r) % 5;
	n = 1;
	for (int i = 0; i < t->rank; i++)
	{
		if (conform && ty->kind == OX_TYPE_TENSOR && i < ty->rank && ty->dims[i].value >= 0)
			t->dims[i] = ty->dims[i].value;
		else
			t->dims[i] = wide ? u8(r) % 64 : u8(r) % 9;
		n *= t->dims[i] > 0 ? t->dims[i] : 1;
		if (n > MAX_ELEMS)
			return false;
	}
	n = ox_tensor_numel(t);
	if (n < 0)
		return false;
	t->owns = false;
	t->capacity = 0;
	t->data = n > 0 ? calloc(n, ox_dtype_size(t->dtype)) : NULL;
	if (n > 0 && !t->data)
		return false;
	fill(r, t, n, raw_bits);
	return true;
}

static void
free_input(ox_value *v)
{
	ox_tensor  *t = &v->tensor;

	if (t->dtype == OX_STRING && t->data)
		for (int64_t i = 0; i < ox_tensor_numel(t); i++)
			free(((ox_string *) t->data)[i].data);
	free(t->data);
	t->data = NULL;
}

/* read every byte of a result, so that bad pointers and sizes show */
static uint64_t
touch(const ox_value *v)
{
	uint64_t	h = 0;

	if (!v)
		return 0;
	if (v->kind == OX_VALUE_TENSOR)
	{
		const ox_tensor *t = &v->tensor;
		int64_t		n = ox_tensor_numel(t);

		if (n > 0 && t->dtype == OX_STRING)
		{
			for (int64_t i = 0; i < n; i++)
				h += ((const ox_string *) t->data)[i].len;
		}
		else if (n > 0)
		{
			const uint8_t *b = t->data;
			size_t		bytes = (size_t) n * ox_dtype_size(t->dtype);

			for (size_t i = 0; i < bytes; i += 8)
				h = h * 31 + b[i];
			h += b[bytes - 1];
		}
	}
	else if (v->kind == OX_VALUE_SEQUENCE)
		for (int i = 0; i < v->seq_len; i++)
			h += touch(&v->seq_items[i]);
	return h;
}

volatile uint64_t fuzz_sink;

/* whether two results are the same, byte for byte */
static bool
same_tensor(const ox_tensor *a, const ox_tensor *b)
{
	int64_t		n = ox_tensor_numel(a);

	if (a->dtype != b->dtype || a->rank != b->rank ||
		memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t) a->rank) != 0)
		return false;
	if (n <= 0)
		return true;
	if (a->dtype != OX_STRING)
		return memcmp(a->data, b->data, (size_t) n * ox_dtype_size(a->dtype)) == 0;
	for (int64_t i = 0; i < n; i++)
	{
		const ox_string *x = &((const ox_string *) a->data)[i];
		const ox_string *y = &((const ox_string *) b->data)[i];

		if (x->len != y->len || memcmp(x->data, y->data, x->len) != 0)
			return false;
	}
	return true;
}

static bool
same_value(const ox_value *a, const ox_value *b)
{
	if (!a || !b || a->kind != b->kind)
		return a == b;
	if (a->kind == OX_VALUE_TENSOR)
		return same_tensor(&a->tensor, &b->tensor);
	if (a->kind == OX_VALUE_MAP)
		return same_tensor(&a->map_keys, &b->map_keys) && same_tensor(&a->map_values, &b->map_values);
	if (a->kind == OX_VALUE_SEQUENCE)
	{
		if (a->seq_len != b->seq_len)
			return false;
		for (int i = 0; i < a->seq_len; i++)
			if (!same_value(&a->seq_items[i], &b->seq_items[i]))
				return false;
	}
	return true;
}

/* the run an input asks for (how: targeted or whole), its status in st */
static ox_code
run_one(ox_session *s, ox_value *inputs, uint8_t how, int *target, ox_status *st)
{
	ox_status_clear(st);
	deadline = now_s() + RUN_SECONDS;
	if (how & 1)
	{
		/* a targeted run for one output, as onnx_predict does */
		int			out = (how >> 1) % ox_session_output_count(s);

		*target = ox_session_dense_source(s, out);
		return ox_session_run_targets(s, inputs, target, 1, st);
	}
	*target = -1;
	return ox_session_run(s, inputs, st);
}

/* an outcome that depends on time or on the allocator, not on what was computed */
static bool
incidental(ox_code rc)
{
	return rc == OX_CANCELED || rc == OX_OUT_OF_MEMORY || rc == OX_LIMIT_EXCEEDED;
}

/* the twin without the shape memo: the same outcome and the same bytes */
static void
compare_twin(seed *sd, ox_session *s, ox_session *plain, ox_value *inputs, uint8_t how, ox_code rc)
{
	ox_status	st;
	int			target;
	ox_code		prc = run_one(plain, inputs, how, &target, &st);

	deadline = 0;
	if (incidental(rc) || incidental(prc))
		return;
	if ((rc == OX_OK) != (prc == OX_OK))
	{
		fprintf(stderr, "fuzz_run: %s: the shape memo changed the outcome (%d, without it %d: %s)\n",
				sd->name, (int) rc, (int) prc, st.msg);
		abort();
	}
	if (rc != OX_OK)
		return;
	/* the twins' graphs are the same, value ids included */
	if (target >= 0)
	{
		if (!same_value(ox_session_value(s, target), ox_session_value(plain, target)))
		{
			fprintf(stderr, "fuzz_run: %s: the shape memo changed the targeted output\n", sd->name);
			abort();
		}
		return;
	}
	for (int o = 0; o < ox_session_output_count(s); o++)
		if (!same_value(ox_session_result(s, o), ox_session_result(plain, o)))
		{
			fprintf(stderr, "fuzz_run: %s: the shape memo changed output %d\n", sd->name, o);
			abort();
		}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	reader		r = {data, size};
	uint8_t		pick = u8(&r);
	seed	   *sd = &seeds[pick & 0x7f];
	ox_session *s = (pick & 0x7f) < n_seeds ? sd->sess[pick >> 7] : NULL;
	int			n_in;
	ox_value	inputs[MAX_INPUTS];
	bool		ok;
	uint8_t		how;
	ox_status	st;
	ox_code		rc;

	if (s == NULL)
		return 0;
	n_in = ox_session_input_count(s);
	ok = n_in <= MAX_INPUTS;
	memset(inputs, 0, sizeof(inputs));
	for (int i = 0; i < n_in && ok; i++)
		ok = build_input(&r, ox_session_input(s, i), &inputs[i]);
	if (ok)
	{
		int			target;

		how = u8(&r);
		rc = run_one(s, inputs, how, &target, &st);
		deadline = 0;
		if (rc == OX_OK && target >= 0)
			fuzz_sink += touch(ox_session_value(s, target));
		else if (rc == OX_OK)
			for (int o = 0; o < ox_session_output_count(s); o++)
				fuzz_sink += touch(ox_session_result(s, o));
		if (rc != OX_OK && st.code == OX_OK)
			abort();			/* a failure must say why */
		if (rc == OX_INTERNAL)
		{
			/* cannot-happen cases are bugs too */
			fprintf(stderr, "fuzz_run: internal error on %s: %s\n", sd->name, st.msg);
			abort();
		}
		compare_twin(sd, s, sd->plain[pick >> 7], inputs, how, rc);
	}
	for (int i = 0; i < n_in && i < MAX_INPUTS; i++)
		free_input(&inputs[i]);
	return 0;
}
