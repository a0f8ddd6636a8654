/*
 * optimize.c
 *	  onnx_optimize: store a model's optimized graph as a new model, like
 *	  onnxruntime's optimized_model_filepath.
 *
 * The source model is parsed and optimized by a private session at the
 * requested level (the backend's session cache is not touched), the
 * session's graph is serialized back to ONNX protobuf (ox_model_save), and
 * the bytes are stored under the target name through the same path as
 * onnx_load_model, which validates them again.  The target's lineage
 * records where it came from:
 *
 *	 {"optimized_from": "src", "source_version": 3, "source_sha256": "...",
 *	  "level": "all", "nodes_before": 12, "nodes_after": 8, "engine": "0.1.0"}
 *
 * The saved graph is an ordinary ONNX model: onnxruntime loads it and gives
 * the same outputs (test/e2e/test_observe.py checks that).  Progress goes
 * through progress.c (NOTICEs for long runs, onnx_stat_progress).
 */
#include "onnx_pg.h"

#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(onnx_optimize);

static const struct
{
	const char *name;
	ox_opt_level level;
}			levels[] =
{
	{"disable", OX_OPT_DISABLE},
	{"basic", OX_OPT_BASIC},
	{"extended", OX_OPT_EXTENDED},
	{"all", OX_OPT_ALL},
};

static ox_opt_level
parse_level(const char *s)
{
	for (int i = 0; i < (int) lengthof(levels); i++)
		if (pg_strcasecmp(s, levels[i].name) == 0)
			return levels[i].level;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid optimization level \"%s\"", s),
			 errdetail("Valid levels are: disable, basic, extended, all.")));
	pg_unreachable();
}

static Jsonb *
lineage_jsonb(const char *source, const OnnxModelKey *key, const char *level,
			  const ox_session_stats *stats)
{
	JsonbParseState *state = NULL;
	char		hex[ONNX_SHA256_LEN * 2 + 1];
	JsonbValue *res;

	for (int i = 0; i < ONNX_SHA256_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", key->sha256[i]);
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	OnnxJbKey(&state, "optimized_from");
	OnnxJbString(&state, WJB_VALUE, source, strlen(source));
	OnnxJbKey(&state, "source_version");
	OnnxJbInt(&state, key->version, false);
	OnnxJbKey(&state, "source_sha256");
	OnnxJbString(&state, WJB_VALUE, hex, strlen(hex));
	OnnxJbKey(&state, "level");
	OnnxJbString(&state, WJB_VALUE, level, strlen(level));
	OnnxJbKey(&state, "nodes_before");
	OnnxJbInt(&state, stats->nodes_before_opt, false);
	OnnxJbKey(&state, "nodes_after");
	OnnxJbInt(&state, stats->nodes_after_opt, false);
	OnnxJbKey(&state, "engine");
	OnnxJbString(&state, WJB_VALUE, OX_ENGINE_VERSION, strlen(OX_ENGINE_VERSION));
	res = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(res);
}

Datum
onnx_optimize(PG_FUNCTION_ARGS)
{
	char	   *source = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *target = text_to_cstring(PG_GETARG_TEXT_PP(1));
	char	   *level_name = text_to_cstring(PG_GETARG_TEXT_PP(2));
	bool		replace = PG_GETARG_BOOL(3);
	ox_opt_level level = parse_level(level_name);
	OnnxGuard  *guard;
	OnnxModelKey key;
	bytea	   *bytes;
	ox_session_options opts;
	ox_session_stats stats;
	ox_status	st;
	void	   *buf = NULL;
	size_t		len = 0;
	bytea	   *out;
	Jsonb	   *lineage;
	int64		version;

	OnnxProgressBegin("optimize", target);
	OnnxProgressPhase("reading source", 0, NULL);
	bytes = OnnxCatalogFetch(source, &key);

	OnnxProgressPhase("parsing", VARSIZE_ANY_EXHDR(bytes), "bytes");
	guard = OnnxGuardCreate(CurrentMemoryContext);
	guard->model = OnnxParseModel(VARDATA_ANY(bytes), VARSIZE_ANY_EXHDR(bytes), source, 0);
	pfree(bytes);

	OnnxProgressPhase("optimizing", 0, NULL);
	memset(&opts, 0, sizeof(opts));
	opts.providers = "cpu";
	opts.intra_op_threads = 1;
	opts.opt_level = level;
	opts.portable_graph = true;	/* saved: ONNX other runtimes load */
	opts.max_run_memory = OnnxMaxRunBytes();	/* constant folding runs kernels */
	opts.should_abort = OnnxShouldAbort;
	ox_status_clear(&st);
	guard->session = ox_session_create(guard->model, &opts, &st);
	guard->model = NULL;		/* the session call owns it now */
	if (guard->session == NULL)
	{
		if (st.code == OX_CANCELED)
			OnnxServiceCancel(source);
		OnnxReportStatus(&st, ONNX_PHASE_SESSION, source);
	}
	ox_session_get_stats(guard->session, &stats);

	OnnxProgressPhase("serializing", 0, NULL);
	ox_status_clear(&st);
	if (ox_model_save(ox_session_model(guard->session), &buf, &len, &st) != OX_OK)
		OnnxReportStatus(&st, ONNX_PHASE_SESSION, source);
	/* buf is malloc'ed: copy it without any chance of an ERROR in between */
	out = len > MaxAllocSize - VARHDRSZ ? NULL :
		(bytea *) palloc_extended(len + VARHDRSZ, MCXT_ALLOC_NO_OOM);
	if (out == NULL)
	{
		free(buf);
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("optimized model \"%s\" is too large", source),
				 errdetail("The optimized model has %zu bytes.", len)));
	}
	SET_VARSIZE(out, len + VARHDRSZ);
	memcpy(VARDATA(out), buf, len);
	free(buf);
	OnnxGuardRelease(guard);

	lineage = lineage_jsonb(source, &key, levels[level].name, &stats);
	version = OnnxCatalogStoreModel(target, out, replace, lineage);
	OnnxProgressEnd();
	PG_RETURN_INT64(version);
}
