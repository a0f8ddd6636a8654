/*
 * runner.c
 *	  The ONNX backend node-test runner: loads each test folder's model.onnx
 *	  through the engine API, feeds test_data_set_N/input_K.pb and compares
 *	  the results with output_*.pb.
 *
 *	  ox_conformance [--filter SUBSTR] [--floor N] [--timeout SEC] [--opt-level N]
 *	                 [--report FILE] [--providers LIST] [--no-fallback] [--cuda-fp16] DIR...
 *	  ox_conformance --list-kernels
 *
 *	  DIR is a folder of test folders (backend/test/data/node) or one test
 *	  folder.  Each test runs in a child process with a time limit, so a
 *	  crash or hang is reported as that test's failure and the run goes on.
 *	  Prints one line per test and a closing summary; exits 1 when the pass
 *	  count is below --floor.  --report writes "name<TAB>status<TAB>detail"
 *	  lines for the operator coverage generator.
 *
 *	  --providers cuda,cpu runs the sessions with the CUDA provider (nodes it
 *	  does not support fall back to the CPU).  --no-fallback counts a test
 *	  whose model does not run entirely on CUDA (or any test, when no device
 *	  is usable) as FALLBACK, not as passed: GPU coverage is counted
 *	  honestly.
 */
#include "model/loader.h"
#include "kernels/kernel.h"
#include "runtime/onnx_engine.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define RTOL 1e-3
#define ATOL 1e-7

static int	opt_level = OX_OPT_ALL;
static const char *providers = NULL;
static bool no_fallback = false;
static bool cuda_fp16 = false;

/*
 * With the CUDA provider the absolute tolerance floor is 1e-5 of the
 * tensor's largest magnitude instead of 1e-7: cuBLAS/cuDNN sum in another
 * order than the CPU kernels, and the CUDA libm's expf/erff/tanhf/powf are
 * within a few ulp, not correctly rounded.  The relative tolerance (1e-3)
 * is the same for every provider.
 */
#define CUDA_ATOL_SCALE 1e-5

static unsigned char *
read_file(const char *path, size_t *len)
{
	FILE	   *f = fopen(path, "rb");
	unsigned char *buf;
	long		n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? n : 1);
	if (buf && n > 0 && fread(buf, 1, n, f) != (size_t) n)
	{
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = n > 0 ? (size_t) n : 0;
	return buf;
}

/* Parse a test-data file according to the declared type of the value. */
static ox_code
read_value(const char *path, const ox_type *type, ox_value *v, ox_status *st)
{
	size_t		len;
	unsigned char *buf = read_file(path, &len);
	ox_code		rc = OX_OK;

	if (!buf)
		return ox_fail(st, OX_INVALID_ARGUMENT, "cannot read %s", path);
	ox_value_init_tensor(v);
	if (type->kind == OX_TYPE_SEQUENCE)
	{
		Onnx__SequenceProto *sp = onnx__sequence_proto__unpack(NULL, len, buf);

		rc = sp ? ox_value_from_sequence_proto(v, sp, 0, st) :
			ox_fail(st, OX_INVALID_ARGUMENT, "bad sequence file %s", path);
		if (sp)
			onnx__sequence_proto__free_unpacked(sp, NULL);
	}
	else if (type->kind == OX_TYPE_MAP)
	{
		Onnx__MapProto *mp = onnx__map_proto__unpack(NULL, len, buf);

		rc = mp ? ox_value_from_map_proto(v, mp, st) :
			ox_fail(st, OX_INVALID_ARGUMENT, "bad map file %s", path);
		if (mp)
			onnx__map_proto__free_unpacked(mp, NULL);
	}
	else if (type->kind == OX_TYPE_OPTIONAL)
	{
		Onnx__OptionalProto *op = onnx__optional_proto__unpack(NULL, len, buf);

		rc = op ? ox_value_from_optional_proto(v, op, 0, st) :
			ox_fail(st, OX_INVALID_ARGUMENT, "bad optional file %s", path);
		if (op)
			onnx__optional_proto__free_unpacked(op, NULL);
	}
	else
	{
		Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, buf);

		rc = tp ? ox_tensor_from_proto(&v->tensor, tp, path, st) :
			ox_fail(st, OX_INVALID_ARGUMENT, "bad tensor file %s", path);
		if (tp)
			onnx__tensor_proto__free_unpacked(tp, NULL);
	}
	free(buf);
	return rc;
}

static bool
compare_tensor(const ox_tensor *got, const ox_tensor *want, char *why, size_t len)
{
	int64_t		n = ox_tensor_numel(want);
	double		worst = 0;
	int64_t		worst_at = -1;
	char		a[128],
				b[128];

	if (got->dtype != want->dtype)
	{
		snprintf(why, len, "element type %s, expected %s", ox_dtype_name(got->dtype),
				 ox_dtype_name(want->dtype));
		return false;
	}
	if (!ox_shape_equal(got->rank, got->dims, want->rank, want->dims))
	{
		snprintf(why, len, "shape %s, expected %s", ox_shape_str(got->rank, got->dims, a, sizeof(a)),
				 ox_shape_str(want->rank, want->dims, b, sizeof(b)));
		return false;
	}
	/*
	 * Float results are compared as the ONNX runner does (atol + rtol * |want|),
	 * except that atol never goes below float32 resolution at the tensor's
	 * scale: an exact 0 computed next to values of magnitude 5 is 1e-15 here
	 * and 2e-7 in reference data that came out of a float32 FFT.
	 */
	double		atol = ATOL;

	if (want->dtype == OX_FLOAT || want->dtype == OX_FLOAT16 || want->dtype == OX_BFLOAT16)
	{
		double		maxabs = 0;

		for (int64_t i = 0; i < n; i++)
		{
			double		w = fabs(ox_tensor_get_double(want, i));

			if (isfinite(w) && w > maxabs)
				maxabs = w;
		}
		if (maxabs * 1e-7 > atol)
			atol = maxabs * 1e-7;
		if (providers && strstr(providers, "cuda") && maxabs * CUDA_ATOL_SCALE > atol)
			atol = maxabs * CUDA_ATOL_SCALE;
	}
	for (int64_t i = 0; i < n; i++)
	{
		if (want->dtype == OX_STRING)
		{
			const ox_string *g = &((ox_string *) got->data)[i];
			const ox_string *w = &((ox_string *) want->data)[i];

			if (g->len != w->len || memcmp(g->data, w->data, w->len) != 0)
			{
				snprintf(why, len, "string %lld is \"%.40s\", expected \"%.40s\"", (long long) i,
						 g->data, w->data);
				return false;
			}
			continue;
		}
		{
			double		g = ox_tensor_get_double(got, i);
			double		w = ox_tensor_get_double(want, i);
			double		err;

			if (ox_dtype_is_int(want->dtype) && want->dtype != OX_BOOL)
			{
				if (ox_tensor_get_int64(got, i) != ox_tensor_get_int64(want, i))
				{
					snprintf(why, len, "element %lld is %lld, expected %lld", (long long) i,
							 (long long) ox_tensor_get_int64(got, i), (long long) ox_tensor_get_int64(want, i));
					return false;
				}
				continue;
			}
			if (isnan(w) && isnan(g))
				continue;
			if (isinf(w) && g == w)
				continue;
			err = fabs(g - w);
			if (!(err <= atol + RTOL * fabs(w)))
			{
				if (worst_at < 0 || err > worst || isnan(err))
				{
					worst = err;
					worst_at = i;
				}
			}
		}
	}
	if (worst_at >= 0)
	{
		snprintf(why, len, "element %lld is %.9g, expected %.9g (abs error %.3g)", (long long) worst_at,
				 ox_tensor_get_double(got, worst_at), ox_tensor_get_double(want, worst_at), worst);
		return false;
	}
	return true;
}

/*
 * Random operators (Bernoulli, RandomUniform...): the spec lets every
 * implementation draw its own numbers even with a seed, so their tests are
 * checked for element type and shape only.
 */
static bool
model_is_random(const ox_model *m)
{
	static const char *const ops[] = {
		"Bernoulli", "RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike",
		"Multinomial", NULL
	};

	for (int gi = 0; gi < m->n_graphs; gi++)
		for (int k = 0; k < m->graphs[gi]->n_nodes; k++)
			for (const char *const *op = ops; *op; op++)
				if (strcmp(m->graphs[gi]->nodes[k].op_type, *op) == 0)
					return true;
	return false;
}

static bool
compare_value(const ox_value *got, const ox_value *want, char *why, size_t len)
{
	if (want->kind == OX_VALUE_NONE || got->kind == OX_VALUE_NONE)
	{
		if (want->kind != got->kind)
		{
			snprintf(why, len, "optional presence differs");
			return false;
		}
		return true;
	}
	if (got->kind != want->kind)
	{
		snprintf(why, len, "value kind %d, expected %d", got->kind, want->kind);
		return false;
	}
	switch (want->kind)
	{
		case OX_VALUE_TENSOR:
			return compare_tensor(&got->tensor, &want->tensor, why, len);
		case OX_VALUE_SEQUENCE:
			if (got->seq_len != want->seq_len)
			{
				snprintf(why, len, "sequence of %d items, expected %d", got->seq_len, want->seq_len);
				return false;
			}
			for (int i = 0; i < want->seq_len; i++)
				if (!compare_value(&got->seq_items[i], &want->seq_items[i], why, len))
					return false;
			return true;
		case OX_VALUE_MAP:
			return compare_tensor(&got->map_keys, &want->map_keys, why, len) &&
				compare_tensor(&got->map_values, &want->map_values, why, len);
		default:
			return true;
	}
}

/* Runs one test folder; prints nothing; returns 0 pass, 1 fail, 2 unsupported, 4 fallback. */
static int
run_test(const char *dir, char *why, size_t why_len)
{
	char		path[4096];
	size_t		len;
	unsigned char *bytes;
	ox_status	st;
	ox_model   *m;
	ox_session *s;
	ox_session_options opts;
	int			result = 0;
	int			sets = 0;
	bool		random_model;

	ox_status_clear(&st);
	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	bytes = read_file(path, &len);
	if (!bytes)
	{
		snprintf(why, why_len, "no model.onnx");
		return 1;
	}
	m = ox_model_load(bytes, len, NULL, &st);
	free(bytes);
	if (!m)
	{
		snprintf(why, why_len, "load: %s", st.msg);
		return st.code == OX_UNSUPPORTED ? 2 : 1;
	}
	memset(&opts, 0, sizeof(opts));
	opts.opt_level = opt_level;
	opts.intra_op_threads = 1;
	opts.providers = providers;
	opts.cuda_fp16 = cuda_fp16;
	random_model = model_is_random(m);
	s = ox_session_create(m, &opts, &st);
	if (!s)
	{
		snprintf(why, why_len, "session: %s%s%s", st.node[0] ? st.node : "", st.node[0] ? ": " : "", st.msg);
		return st.code == OX_UNSUPPORTED ? 2 : 1;
	}
	if (no_fallback)
	{
		/* every node must run on CUDA; list the ones that do not */
		size_t		off = 0;
		int			n_cpu = 0;

		why[0] = '\0';
		if (ox_session_fallback_reason(s))
			snprintf(why, why_len, "fallback: %s", ox_session_fallback_reason(s));
		else
			for (int k = 0; k < ox_session_node_count(s); k++)
			{
				const char *name,
						   *op,
						   *prov;

				if (ox_session_node_info(s, k, &name, &op, &prov, &st) != OX_OK || strcmp(prov, "cuda") == 0)
					continue;
				if (n_cpu++ == 0)
					off += snprintf(why + off, why_len - off, "fallback: on the CPU:");
				if (off < why_len && !strstr(why, op))
					off += snprintf(why + off, why_len - off, " %s", op);
			}
		if (why[0])
		{
			ox_session_free(s);
			return 4;
		}
	}
	for (int set = 0; result == 0; set++)
	{
		struct stat sb;
		int			nin = ox_session_input_count(s);
		int			nout = ox_session_output_count(s);
		ox_value   *inputs;
		ox_value	want;

		snprintf(path, sizeof(path), "%s/test_data_set_%d", dir, set);
		if (stat(path, &sb) != 0)
			break;
		sets++;
		inputs = calloc(nin + 1, sizeof(ox_value));
		for (int i = 0; i < nin && result == 0; i++)
		{
			snprintf(path, sizeof(path), "%s/test_data_set_%d/input_%d.pb", dir, set, i);
			if (stat(path, &sb) != 0)
			{
				/* an omitted optional input */
				ox_value_init_tensor(&inputs[i]);
				inputs[i].kind = OX_VALUE_NONE;
				continue;
			}
			if (read_value(path, &ox_session_input(s, i)->type, &inputs[i], &st) != OX_OK)
			{
				snprintf(why, why_len, "input %d: %s", i, st.msg);
				result = 1;
			}
		}
		if (result == 0 && ox_session_run(s, inputs, &st) != OX_OK)
		{
			snprintf(why, why_len, "run: %s%s%s", st.node[0] ? st.node : "", st.node[0] ? ": " : "", st.msg);
			result = st.code == OX_UNSUPPORTED ? 2 : 1;
		}
		for (int o = 0; o < nout && result == 0; o++)
		{
			const ox_value_def *def = ox_session_output(s, o);

			snprintf(path, sizeof(path), "%s/test_data_set_%d/output_%d.pb", dir, set, o);
			if (read_value(path, &def->type, &want, &st) != OX_OK)
			{
				snprintf(why, why_len, "expected output %d: %s", o, st.msg);
				result = 1;
				break;
			}
			{
				char		detail[512];
				const ox_value *g = ox_session_result(s, o);

				if (random_model && g->kind == OX_VALUE_TENSOR && want.kind == OX_VALUE_TENSOR)
				{
					if (g->tensor.dtype != want.tensor.dtype ||
						!ox_shape_equal(g->tensor.rank, g->tensor.dims, want.tensor.rank, want.tensor.dims))
					{
						snprintf(why, why_len, "output %d (%s): type or shape differs", o, def->name);
						result = 1;
					}
				}
				else if (!compare_value(g, &want, detail, sizeof(detail)))
				{
					snprintf(why, why_len, "output %d (%s): %s", o, def->name, detail);
					result = 1;
				}
			}
			ox_value_release(&want);
		}
		for (int i = 0; i < nin; i++)
			ox_value_release(&inputs[i]);
		free(inputs);
	}
	ox_session_free(s);
	if (result == 0 && sets == 0)
	{
		snprintf(why, why_len, "no test data");
		return 1;
	}
	return result;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

int
main(int argc, char **argv)
{
	const char *filter = NULL;
	const char *report_path = NULL;
	int			floor_count = -1;
	int			timeout_s = 60;
	int			counts[5] = {0, 0, 0, 0, 0};	/* pass, fail, unsupported, crash, fallback */
	char	  **tests = NULL;
	int			n_tests = 0;
	FILE	   *report = NULL;
	/*
	 * --in-process: run the tests in this process instead of one child per
	 * test.  For the CUDA provider: a forked child would initialize CUDA
	 * (context, cuBLAS, cuDNN) anew for every test, most of a second each.
	 * A crash then ends the run; the report, written as it goes, keeps what
	 * ran before.
	 */
	bool		in_process = false;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc)
			filter = argv[++i];
		else if (strcmp(argv[i], "--floor") == 0 && i + 1 < argc)
			floor_count = atoi(argv[++i]);
		else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
			timeout_s = atoi(argv[++i]);
		else if (strcmp(argv[i], "--opt-level") == 0 && i + 1 < argc)
			opt_level = atoi(argv[++i]);
		else if (strcmp(argv[i], "--report") == 0 && i + 1 < argc)
			report_path = argv[++i];
		else if (strcmp(argv[i], "--providers") == 0 && i + 1 < argc)
			providers = argv[++i];
		else if (strcmp(argv[i], "--no-fallback") == 0)
			no_fallback = true;
		else if (strcmp(argv[i], "--cuda-fp16") == 0)
			cuda_fp16 = true;
		else if (strcmp(argv[i], "--in-process") == 0)
			in_process = true;
		else if (strcmp(argv[i], "--list-kernels") == 0)
		{
			/* the registry, for the operator coverage document */
			for (int k = 0; k < ox_kernel_count(); k++)
			{
				const ox_kernel_def *kd = ox_kernel_at(k);

				printf("%s\t%s\t%d\n", kd->domain[0] ? kd->domain : "ai.onnx", kd->op_type,
					   kd->since_version);
			}
			return 0;
		}
		else if (strcmp(argv[i], "--help") == 0)
		{
			printf("usage: %s [--filter SUBSTR] [--floor N] [--timeout SEC] [--opt-level 0-3] [--report FILE]\n"
				   "       [--providers cpu|cuda,cpu] [--no-fallback] [--cuda-fp16] [--in-process] DIR...\n",
				   argv[0]);
			return 0;
		}
		else
		{
			char		path[4096];
			struct stat sb;

			snprintf(path, sizeof(path), "%s/model.onnx", argv[i]);
			if (stat(path, &sb) == 0)
			{
				tests = realloc(tests, sizeof(char *) * (n_tests + 1));
				tests[n_tests++] = strdup(argv[i]);
				continue;
			}
			{
				DIR		   *d = opendir(argv[i]);
				struct dirent *e;

				if (!d)
				{
					fprintf(stderr, "cannot open %s: %s\n", argv[i], strerror(errno));
					return 2;
				}
				while ((e = readdir(d)))
				{
					if (e->d_name[0] == '.')
						continue;
					snprintf(path, sizeof(path), "%s/%s/model.onnx", argv[i], e->d_name);
					if (stat(path, &sb) != 0)
						continue;
					snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
					tests = realloc(tests, sizeof(char *) * (n_tests + 1));
					tests[n_tests++] = strdup(path);
				}
				closedir(d);
			}
		}
	}
	if (n_tests == 0)
	{
		fprintf(stderr, "no tests found\n");
		return 2;
	}
	qsort(tests, n_tests, sizeof(char *), cmp_str);
	if (report_path && !(report = fopen(report_path, "w")))
	{
		fprintf(stderr, "cannot write %s\n", report_path);
		return 2;
	}

	for (int t = 0; t < n_tests; t++)
	{
		const char *name = strrchr(tests[t], '/') ? strrchr(tests[t], '/') + 1 : tests[t];
		int			fds[2];
		pid_t		pid;
		char		why[1024] = "";
		int			status = 0;
		int			result;
		static const char *const labels[] = {"PASS", "FAIL", "UNSUPPORTED", "CRASH", "FALLBACK"};

		if (filter && !strstr(name, filter))
			continue;
		fflush(stdout);
		if (in_process)
		{
			result = run_test(tests[t], why, sizeof(why));
			if (result < 0 || result > 4)
				result = 3;
			goto record;
		}
		if (pipe(fds) != 0)
			return 2;
		pid = fork();
		if (pid == 0)
		{
			int			r;

			close(fds[0]);
			alarm(timeout_s);
			r = run_test(tests[t], why, sizeof(why));
			if (write(fds[1], why, strlen(why) + 1) < 0)
				_exit(3);
			_exit(r);
		}
		close(fds[1]);
		{
			ssize_t		got = read(fds[0], why, sizeof(why) - 1);

			why[got > 0 ? got : 0] = '\0';
		}
		close(fds[0]);
		waitpid(pid, &status, 0);
		if (WIFEXITED(status) && (WEXITSTATUS(status) <= 2 || WEXITSTATUS(status) == 4))
			result = WEXITSTATUS(status);
		else
		{
			result = 3;
			if (WIFSIGNALED(status))
				snprintf(why, sizeof(why), "%s (signal %d)",
						 WTERMSIG(status) == SIGALRM ? "timed out" : "crashed", WTERMSIG(status));
		}
record:
		counts[result]++;
		printf("%s %s%s%s\n", labels[result], name, why[0] ? ": " : "", why);
		if (report)
		{
			fprintf(report, "%s\t%s\t%s\n", name, labels[result], why);
			fflush(report);
		}
	}
	if (report)
		fclose(report);
	if (no_fallback)
		printf("conformance: %d passed, %d failed, %d unsupported, %d crashed, %d fallback, %d total\n",
			   counts[0], counts[1], counts[2], counts[3], counts[4],
			   counts[0] + counts[1] + counts[2] + counts[3] + counts[4]);
	else
		printf("conformance: %d passed, %d failed, %d unsupported, %d crashed, %d total\n",
			   counts[0], counts[1], counts[2], counts[3], counts[0] + counts[1] + counts[2] + counts[3]);
	if (floor_count >= 0 && counts[0] < floor_count)
	{
		printf("conformance: %d passed is below the floor of %d\n", counts[0], floor_count);
		return 1;
	}
	return 0;
}
