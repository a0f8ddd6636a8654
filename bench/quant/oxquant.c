/*
 * oxquant.c
 *	  The quantizer without a server: the same steps as onnx_quantize_dynamic
 *	  and onnx_quantize_static (src/pg/quantize.c) on files, for benchmarks
 *	  and debugging.  Build against the engine archive:
 *
 *	    gcc -O2 -Isrc -Ibuild -Ibuild/proto bench/quant/oxquant.c \
 *	        -Wl,--whole-archive build/libox.a -Wl,--no-whole-archive \
 *	        -lprotobuf-c -lopenblas -lm -lpthread -o build/oxquant
 *
 *	    oxquant dynamic IN.onnx OUT.onnx [options]
 *	    oxquant static IN.onnx OUT.onnx CALIB.f32 [options]
 *
 *	  CALIB.f32 holds float32 samples for the model's single input, one
 *	  after another, each of the input's shape with a batch dimension of 1.
 *	  Options: --per-channel 0|1, --weight-type int8|uint8,
 *	  --activation-type uint8|int8, --format qdq|qoperator,
 *	  --method minmax|percentile|entropy, --percentile P, --reduce-range,
 *	  --symmetric-activations, --per-row-activations (dynamic),
 *	  --op-types A,B,C, --samples N.
 */
#include "model/quantize.h"
#include "runtime/onnx_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *
read_file(const char *path, size_t *len)
{
	FILE	   *f = fopen(path, "rb");
	void	   *buf;
	long		n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? n : 1);
	if (buf && fread(buf, 1, n, f) != (size_t) n)
	{
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t) n;
	return buf;
}

static int
die(const char *what, const ox_status *st)
{
	fprintf(stderr, "oxquant: %s: %s%s%s\n", what, st->node[0] ? st->node : "",
			st->node[0] ? ": " : "", st->msg);
	return 1;
}

static ox_session *
session_of(const void *bytes, size_t len, ox_opt_level level, ox_status *st)
{
	ox_session_options opts;
	ox_model   *m = ox_model_load(bytes, len, NULL, st);

	if (!m)
		return NULL;
	memset(&opts, 0, sizeof(opts));
	opts.opt_level = level;
	opts.intra_op_threads = 1;
	return ox_session_create(m, &opts, st);
}

int
main(int argc, char **argv)
{
	ox_quant_options o;
	ox_status	st;
	ox_session *pre;
	void	   *src,
			   *pbytes,
			   *qbytes;
	size_t		src_len,
				plen,
				qlen;
	ox_model   *m;
	const char **names = NULL;
	int			n_names = 0;
	ox_quant_range *ranges = NULL;
	ox_quant_summary sum;
	ox_calib_method method = OX_CALIB_MINMAX;
	double		pct = 99.999;
	const char *calib = NULL;
	long		max_samples = 1L << 30;
	const char *ops[32];
	char	   *opbuf = NULL;
	const char *excl[64];
	char	   *exbuf = NULL;
	int			argi;
	FILE	   *out;

	if (argc < 4 || (strcmp(argv[1], "dynamic") != 0 && strcmp(argv[1], "static") != 0))
	{
		fprintf(stderr, "usage: oxquant dynamic|static IN OUT [CALIB.f32] [options]\n");
		return 2;
	}
	ox_quant_options_init(&o, strcmp(argv[1], "static") == 0 ? OX_QUANT_STATIC : OX_QUANT_DYNAMIC);
	argi = 4;
	if (o.mode == OX_QUANT_STATIC)
	{
		if (argc < 5)
			return fprintf(stderr, "oxquant: static needs a calibration file\n"), 2;
		calib = argv[argi++];
	}
	for (; argi < argc; argi++)
	{
		const char *a = argv[argi];
		const char *v = argi + 1 < argc ? argv[argi + 1] : "";

		if (strcmp(a, "--per-channel") == 0)
			o.per_channel = atoi(v), argi++;
		else if (strcmp(a, "--weight-type") == 0)
			o.weight_type = strcmp(v, "uint8") == 0 ? OX_UINT8 : OX_INT8, argi++;
		else if (strcmp(a, "--activation-type") == 0)
			o.activation_type = strcmp(v, "int8") == 0 ? OX_INT8 : OX_UINT8, argi++;
		else if (strcmp(a, "--format") == 0)
			o.format = strcmp(v, "qoperator") == 0 ? OX_QUANT_QOPERATOR : OX_QUANT_QDQ, argi++;
		else if (strcmp(a, "--method") == 0)
			method = strcmp(v, "percentile") == 0 ? OX_CALIB_PERCENTILE :
				strcmp(v, "entropy") == 0 ? OX_CALIB_ENTROPY : OX_CALIB_MINMAX, argi++;
		else if (strcmp(a, "--percentile") == 0)
			pct = atof(v), argi++;
		else if (strcmp(a, "--samples") == 0)
			max_samples = atol(v), argi++;
		else if (strcmp(a, "--reduce-range") == 0)
			o.reduce_range = true;
		else if (strcmp(a, "--per-row-activations") == 0)
			o.per_row_activations = true;
		else if (strcmp(a, "--symmetric-activations") == 0)
			o.symmetric_activations = true;
		else if (strcmp(a, "--op-types") == 0)
		{
			opbuf = strdup(v);
			o.op_types = ops;
			for (char *t = strtok(opbuf, ","); t && o.n_op_types < 32; t = strtok(NULL, ","))
				ops[o.n_op_types++] = t;
			argi++;
		}
		else if (strcmp(a, "--exclude") == 0)
		{
			exbuf = strdup(v);
			o.exclude = excl;
			for (char *t = strtok(exbuf, ","); t && o.n_exclude < 64; t = strtok(NULL, ","))
				excl[o.n_exclude++] = t;
			argi++;
		}
		else
			return fprintf(stderr, "oxquant: unknown option %s\n", a), 2;
	}

	ox_status_clear(&st);
	if (!(src = read_file(argv[2], &src_len)))
		return fprintf(stderr, "oxquant: cannot read %s\n", argv[2]), 1;
	/* the basic optimizations first (constant folding, Conv+BatchNorm) */
	if (!(pre = session_of(src, src_len, OX_OPT_BASIC, &st)))
		return die("load", &st);
	if (ox_model_save(ox_session_model(pre), &pbytes, &plen, &st) != OX_OK)
		return die("save", &st);
	ox_session_free(pre);
	if (!(m = ox_model_load(pbytes, plen, NULL, &st)))
		return die("reload", &st);
	if (ox_quant_calib_targets(m, &o, &names, &n_names, &st) != OX_OK)
		return die("plan", &st);

	if (o.mode == OX_QUANT_STATIC)
	{
		ox_session *s = session_of(pbytes, plen, OX_OPT_DISABLE, &st);
		ox_calib   *c = ox_calib_new(n_names, method, &st);
		int		   *ids = malloc(sizeof(int) * (n_names + 1));
		const ox_value_def *in;
		int64_t		per = 1;
		size_t		clen;
		float	   *data;
		ox_value	v;
		long		n_samples;

		if (!s || !c || !ids)
			return die("calibration session", &st);
		if (ox_session_input_count(s) != 1)
			return fprintf(stderr, "oxquant: the model must have one input\n"), 1;
		in = ox_session_input(s, 0);
		memset(&v, 0, sizeof(v));
		v.kind = OX_VALUE_TENSOR;
		v.tensor.dtype = OX_FLOAT;
		v.tensor.rank = in->type.rank;
		for (int d = 0; d < in->type.rank; d++)
		{
			v.tensor.dims[d] = d == 0 ? 1 : in->type.dims[d].value;
			per *= v.tensor.dims[d];
		}
		for (int i = 0; i < n_names; i++)
			ids[i] = ox_session_value_id(s, names[i]);
		if (!(data = read_file(calib, &clen)))
			return fprintf(stderr, "oxquant: cannot read %s\n", calib), 1;
		n_samples = (long) (clen / sizeof(float) / per);
		if (n_samples > max_samples)
			n_samples = max_samples;
		for (long i = 0; i < n_samples; i++)
		{
			v.tensor.data = data + i * per;
			if (ox_session_run_targets(s, &v, ids, n_names, &st) != OX_OK)
				return die("calibration run", &st);
			for (int t = 0; t < n_names; t++)
			{
				/* graph inputs are fed, not computed: observe the feed */
				const ox_value *tv = strcmp(names[t], in->name) == 0 ? &v : ox_session_value(s, ids[t]);

				if (tv && tv->kind == OX_VALUE_TENSOR && tv->tensor.dtype == OX_FLOAT &&
					ox_calib_add(c, t, tv->tensor.data, ox_tensor_numel(&tv->tensor), &st) != OX_OK)
					return die("calibration", &st);
			}
		}
		ranges = malloc(sizeof(ox_quant_range) * (n_names + 1));
		if (ox_calib_ranges(c, pct, o.symmetric_activations, ranges, &st) != OX_OK)
			return die("ranges", &st);
		fprintf(stderr, "oxquant: calibrated %d tensors on %ld samples\n", n_names, n_samples);
		ox_calib_free(c);
		ox_session_free(s);
	}
	if (ox_quantize(m, &o, names, ranges, n_names, &sum, &st) != OX_OK)
		return die("quantize", &st);
	if (ox_model_save(m, &qbytes, &qlen, &st) != OX_OK)
		return die("save", &st);
	if (!(out = fopen(argv[3], "wb")) || fwrite(qbytes, 1, qlen, out) != qlen)
		return fprintf(stderr, "oxquant: cannot write %s\n", argv[3]), 1;
	fclose(out);
	printf("nodes %d, quantized %d (%s), weights %d, tensors %d, size %zu -> %zu (%.2fx)\n",
		   sum.nodes_total, sum.nodes_quantized, sum.ops, sum.weights_quantized,
		   sum.tensors_quantized, src_len, qlen, (double) src_len / qlen);
	ox_model_free(m);
	free(names);
	free(ranges);
	free(opbuf);
	free(exbuf);
	free(src);
	free(pbytes);
	free(qbytes);
	return 0;
}
