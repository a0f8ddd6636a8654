/*
 * engine_rate.c
 *	  Rows per second of the onnx_pg engine alone (no server): the model's
 *	  first input fed [batch, features] random floats, one targeted run per
 *	  batch computing only the requested output (as onnx_predict does).  This
 *	  is the "engine batch throughput" that in-query forms are compared with.
 *
 *	  engine_rate MODEL.onnx FEATURES BATCH SECONDS [ROWS.f32 [OUTPUT_INDEX]]
 *
 * ROWS.f32: raw float32 rows of FEATURES values each (for example rows of the
 * benchmark's table, so that a tree ensemble takes the same branches as in
 * SQL); batches cycle through them.  Without it, uniform random values in
 * [0, 4).  Prints one line: rows_per_second=<float> rows_per_cpu_second=<float>
 * runs=<n> (the second by this process's CPU time, which other load on the
 * machine disturbs less).
 */
#include "runtime/onnx_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double
cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	FILE	   *f;
	long		len;
	char	   *bytes;
	ox_status	st;
	ox_model   *m;
	ox_session_options opts;
	ox_session *s;
	int			features,
				batch,
				out_index = 0,
				target;
	double		seconds,
				t0,
				c0,
				t;
	float	   *x;
	float	   *rows = NULL;
	long		n_rows = 0;
	long		next = 0;
	ox_value	in;
	long		runs = 0;

	if (argc < 5)
	{
		fprintf(stderr, "usage: %s MODEL.onnx FEATURES BATCH SECONDS [OUTPUT_INDEX]\n", argv[0]);
		return 2;
	}
	features = atoi(argv[2]);
	batch = atoi(argv[3]);
	seconds = atof(argv[4]);
	if (argc > 6)
		out_index = atoi(argv[6]);
	if (argc > 5)
	{
		FILE	   *rf = fopen(argv[5], "rb");
		long		bytes;

		if (!rf)
		{
			perror(argv[5]);
			return 1;
		}
		fseek(rf, 0, SEEK_END);
		bytes = ftell(rf);
		fseek(rf, 0, SEEK_SET);
		n_rows = bytes / (long) (sizeof(float) * features);
		rows = malloc(sizeof(float) * features * (n_rows + 1));
		if (n_rows < 1 || fread(rows, sizeof(float) * features, n_rows, rf) != (size_t) n_rows)
		{
			fprintf(stderr, "%s: no rows of %d floats\n", argv[5], features);
			return 1;
		}
		fclose(rf);
	}
	f = fopen(argv[1], "rb");
	if (!f)
	{
		perror(argv[1]);
		return 1;
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	bytes = malloc(len);
	if (fread(bytes, 1, len, f) != (size_t) len)
		return 1;
	fclose(f);

	ox_status_clear(&st);
	m = ox_model_load(bytes, len, NULL, &st);
	if (!m)
	{
		fprintf(stderr, "load: %s\n", st.msg);
		return 1;
	}
	memset(&opts, 0, sizeof(opts));
	opts.intra_op_threads = 1;
	opts.opt_level = OX_OPT_ALL;
	s = ox_session_create(m, &opts, &st);
	if (!s)
	{
		fprintf(stderr, "session: %s\n", st.msg);
		return 1;
	}
	target = ox_session_dense_source(s, out_index);

	x = malloc(sizeof(float) * (size_t) features * batch);
	srand(42);
	for (long i = 0; i < (long) features * batch; i++)
		x[i] = (float) rand() / RAND_MAX * 4.0f;
	memset(&in, 0, sizeof(in));
	in.kind = OX_VALUE_TENSOR;
	in.tensor.dtype = OX_FLOAT;
	in.tensor.rank = 2;
	in.tensor.dims[0] = batch;
	in.tensor.dims[1] = features;
	in.tensor.data = x;

	/* batches from the given rows, in turn (prepared before timing) */
	if (rows)
	{
		long		n_batches = n_rows / batch > 0 ? n_rows / batch : 1;
		float	   *all = malloc(sizeof(float) * features * batch * n_batches);

		for (long b = 0; b < n_batches; b++)
			for (long r = 0; r < batch; r++)
			{
				memcpy(all + (b * batch + r) * features, rows + (next % n_rows) * features,
					   sizeof(float) * features);
				next++;
			}
		free(x);
		x = all;
		n_rows = n_batches;		/* now: batches */
		in.tensor.data = x;
	}

	/*
	 * Warm up, then time whole runs until the budget is spent (the clock
	 * read every 16 runs: a tiny model's run is a fraction of a
	 * microsecond).  Runs go through ox_session_run_tensor, onnx_predict's
	 * entry point.
	 */
	for (int i = 0; i < 3; i++)
		if (ox_session_run_tensor(s, &in.tensor, &target, 1, &st) != OX_OK)
		{
			fprintf(stderr, "run: %s\n", st.msg);
			return 1;
		}
	t0 = now_s();
	c0 = cpu_s();
	do
	{
		for (int i = 0; i < 16; i++)
		{
			if (rows)
				in.tensor.data = x + (runs % n_rows) * (long) batch * features;
			ox_session_run_tensor(s, &in.tensor, &target, 1, &st);
			runs++;
		}
		t = now_s();
	} while (t - t0 < seconds);
	printf("rows_per_second=%.0f rows_per_cpu_second=%.0f runs=%ld\n", (double) runs * batch / (t - t0),
		   (double) runs * batch / (cpu_s() - c0), runs);
	ox_session_free(s);
	free(x);
	free(rows);
	free(bytes);
	return 0;
}
