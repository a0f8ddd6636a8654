/*
 * onnx_pg.c
 *	  Module entry point and configuration (GUCs) of onnx_pg.
 *
 * _PG_init only defines GUCs and registers callbacks: no engine object, no
 * thread and no GPU context is created here, since with
 * shared_preload_libraries this runs in the postmaster, which then forks
 * every backend.  Sessions are created lazily by the backend that needs them
 * (cache.c).
 *
 * The GUCs that shape sessions (providers, threads, optimization level,
 * run memory limit) are part of each cached session's identity: cache.c
 * compares them when it revalidates an entry, and the assign hooks here bump
 * the cache epoch so that remembered sessions are rechecked.
 *
 * The two limits, onnx.max_model_size and onnx.max_run_memory, protect the
 * server rather than tune a query, so only superusers may change them
 * (PGC_SUSET; a superuser may still set them per role or database).
 */
#include "onnx_pg.h"

#include <limits.h>

#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/varlena.h"

PG_MODULE_MAGIC;

char	   *onnx_providers = NULL;
int			onnx_intra_op_threads = ONNX_THREADS_DEFAULT;
int			onnx_graph_optimization_level = OX_OPT_ALL;
int			onnx_session_cache_size = ONNX_CACHE_SIZE_DEFAULT;
int			onnx_max_model_size = ONNX_MAX_MODEL_SIZE_DEFAULT;
int			onnx_max_run_memory = ONNX_MAX_RUN_MEMORY_DEFAULT;

static const struct config_enum_entry opt_level_options[] = {
	{"disable", OX_OPT_DISABLE, false},
	{"basic", OX_OPT_BASIC, false},
	{"extended", OX_OPT_EXTENDED, false},
	{"all", OX_OPT_ALL, false},
	{NULL, 0, false}
};

static const char *const known_providers[] = {"cpu", "cuda"};

/* the last provider list we warned about, so the NOTICE comes once */
static char *warned_providers = NULL;

void		_PG_init(void);

char *
OnnxNormalizeProviders(const char *list, char **bad)
{
	char	   *raw = pstrdup(list);
	List	   *names;
	ListCell   *lc;
	StringInfoData buf;
	bool		seen[lengthof(known_providers)] = {false};
	bool		any = false;

	*bad = NULL;
	/* SplitIdentifierString lower-cases unquoted names */
	if (!SplitIdentifierString(raw, ',', &names))
	{
		*bad = pstrdup(list);
		return NULL;
	}
	initStringInfo(&buf);
	foreach(lc, names)
	{
		const char *n = (const char *) lfirst(lc);
		int			k;

		for (k = 0; k < (int) lengthof(known_providers); k++)
			if (strcmp(n, known_providers[k]) == 0)
				break;
		if (k == (int) lengthof(known_providers))
		{
			*bad = pstrdup(n);
			return NULL;
		}
		if (seen[k])
			continue;
		seen[k] = true;
		appendStringInfo(&buf, "%s%s", any ? "," : "", n);
		any = true;
	}
	/* cpu is always there as the last resort */
	if (!seen[0])
		appendStringInfo(&buf, "%scpu", any ? "," : "");
	return buf.data;
}

static bool
check_providers(char **newval, void **extra, GucSource source)
{
	char	   *bad;
	char	   *norm;

	if (*newval == NULL)
		return true;
	norm = OnnxNormalizeProviders(*newval, &bad);
	if (norm == NULL)
	{
		GUC_check_errcode(ERRCODE_INVALID_PARAMETER_VALUE);
		GUC_check_errmsg("unrecognized execution provider \"%s\"", bad);
		GUC_check_errdetail("Valid execution providers are: %s.", ONNX_VALID_PROVIDERS);
		return false;
	}
	pfree(norm);
	return true;
}

static void
assign_session_guc(void)
{
	/* sessions built with other settings are rebuilt at their next use */
	OnnxCacheEpoch++;
}

static void
assign_providers(const char *newval, void *extra)
{
	assign_session_guc();
}

static void
assign_int_guc(int newval, void *extra)
{
	assign_session_guc();
}

char *
OnnxEffectiveProviders(const char *normalized)
{
	const char *avail = ox_available_providers();
	char	   *raw = pstrdup(normalized);
	List	   *names;
	ListCell   *lc;
	StringInfoData buf;
	bool		dropped = false;

	initStringInfo(&buf);
	if (!SplitIdentifierString(raw, ',', &names))
		elog(ERROR, "invalid provider list \"%s\"", normalized);
	foreach(lc, names)
	{
		const char *n = (const char *) lfirst(lc);
		bool		ok = false;
		char	   *availcopy = pstrdup(avail ? avail : "cpu");
		List	   *alist;
		ListCell   *lc2;

		if (SplitIdentifierString(availcopy, ',', &alist))
			foreach(lc2, alist)
				if (strcmp((const char *) lfirst(lc2), n) == 0)
					ok = true;
		if (!ok)
		{
			dropped = true;
			continue;
		}
		appendStringInfo(&buf, "%s%s", buf.len ? "," : "", n);
	}
	if (buf.len == 0)
		appendStringInfoString(&buf, "cpu");

	if (dropped &&
		(warned_providers == NULL || strcmp(warned_providers, normalized) != 0))
	{
		ereport(NOTICE,
				(errmsg("execution provider \"cuda\" is not available, using \"%s\"",
						buf.data),
				 errdetail("This build of onnx_pg supports the providers: %s.",
						   avail ? avail : "cpu")));
		if (warned_providers)
			pfree(warned_providers);
		warned_providers = MemoryContextStrdup(TopMemoryContext, normalized);
	}
	return buf.data;
}

Size
OnnxMaxModelBytes(void)
{
	return onnx_max_model_size <= 0 ? 0 : (Size) onnx_max_model_size * 1024 * 1024;
}

Size
OnnxMaxRunBytes(void)
{
	return onnx_max_run_memory <= 0 ? 0 : (Size) onnx_max_run_memory * 1024 * 1024;
}

uint64
OnnxTensorBytes(const ox_tensor *t)
{
	int64		n = ox_tensor_numel(t);

	return n > 0 ? (uint64) n * Max(ox_dtype_size(t->dtype), 1) : 0;
}

ox_code
OnnxCheckRunInputs(uint64 input_bytes, ox_status *st)
{
	Size		limit = OnnxMaxRunBytes();

	if (limit == 0 || input_bytes <= limit)
		return OX_OK;
	return ox_fail(st, OX_LIMIT_EXCEEDED,
				   "the inputs take " UINT64_FORMAT " bytes; onnx.max_run_memory allows %d MB",
				   input_bytes, onnx_max_run_memory);
}

static bool
check_limit(int *newval, void **extra, GucSource source)
{
	if (*newval == 0)
	{
		GUC_check_errcode(ERRCODE_INVALID_PARAMETER_VALUE);
		GUC_check_errmsg("a limit of 0 MB would refuse everything");
		GUC_check_errdetail("Values are in megabytes; smaller values round to 0.");
		GUC_check_errhint("Use -1 for no limit.");
		return false;
	}
	return true;
}

void
OnnxCheckModelSize(uint64 len, const char *name, const char *path)
{
	Size		limit = OnnxMaxModelBytes();

	if (limit == 0 || len <= limit)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 path ? errmsg("model file \"%s\" is too large", path) :
			 name ? errmsg("model \"%s\" is too large", name) :
			 errmsg("model is too large"),
			 errdetail("The model has " UINT64_FORMAT " bytes; onnx.max_model_size allows %d MB.",
					   len, onnx_max_model_size),
			 errhint("A superuser may raise onnx.max_model_size.")));
}

void
OnnxSessionOptions(ox_session_options *opts, const char *providers_override,
				   char **effective_providers)
{
	char	   *bad;
	char	   *norm;

	memset(opts, 0, sizeof(*opts));
	norm = OnnxNormalizeProviders(providers_override ? providers_override :
								  (onnx_providers ? onnx_providers : "cpu"), &bad);
	if (norm == NULL)			/* the catalog column is validated on write */
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized execution provider \"%s\"", bad),
				 errdetail("Valid execution providers are: %s.", ONNX_VALID_PROVIDERS)));
	*effective_providers = OnnxEffectiveProviders(norm);
	opts->providers = *effective_providers;
	opts->intra_op_threads = onnx_intra_op_threads > 0 ? onnx_intra_op_threads : 1;
	opts->opt_level = (ox_opt_level) onnx_graph_optimization_level;
	opts->max_run_memory = OnnxMaxRunBytes();
	opts->should_abort = OnnxShouldAbort;
	opts->abort_arg = NULL;
}

void
OnnxGucInit(void)
{
	DefineCustomStringVariable("onnx.providers",
							   "Execution providers for ONNX sessions, in order of preference.",
							   "A comma-separated list of: " ONNX_VALID_PROVIDERS
							   ". cpu is always added as the last resort.",
							   &onnx_providers,
							   "cpu",
							   PGC_USERSET,
							   GUC_LIST_INPUT,
							   check_providers, assign_providers, NULL);

	DefineCustomIntVariable("onnx.intra_op_threads",
							"Threads one ONNX session may use inside an operator.",
							"0 or 1 runs single-threaded.",
							&onnx_intra_op_threads,
							ONNX_THREADS_DEFAULT, ONNX_THREADS_MIN, ONNX_THREADS_MAX,
							PGC_USERSET,
							0,
							NULL, assign_int_guc, NULL);

	DefineCustomEnumVariable("onnx.graph_optimization_level",
							 "Graph optimizations applied when a session is created.",
							 NULL,
							 &onnx_graph_optimization_level,
							 OX_OPT_ALL,
							 opt_level_options,
							 PGC_USERSET,
							 0,
							 NULL, assign_int_guc, NULL);

	DefineCustomIntVariable("onnx.session_cache_size",
							"Memory the sessions cached by one backend may use.",
							"Least recently used sessions are freed beyond it; "
							"0 keeps only the session in use.",
							&onnx_session_cache_size,
							ONNX_CACHE_SIZE_DEFAULT, ONNX_CACHE_SIZE_MIN, ONNX_CACHE_SIZE_MAX,
							PGC_USERSET,
							GUC_UNIT_MB,
							NULL, assign_int_guc, NULL);

	DefineCustomIntVariable("onnx.max_model_size",
							"Largest ONNX model accepted by a load.",
							"Applies to onnx_load_model, onnx_load_model_file and the inspection "
							"functions given raw bytes; -1 means no limit.",
							&onnx_max_model_size,
							ONNX_MAX_MODEL_SIZE_DEFAULT, ONNX_LIMIT_NONE, ONNX_MAX_MODEL_SIZE_MAX,
							PGC_SUSET,
							GUC_UNIT_MB,
							check_limit, NULL, NULL);

	DefineCustomIntVariable("onnx.max_run_memory",
							"Most tensor memory one ONNX inference may hold.",
							"Inputs and intermediate tensors count; -1 means no limit.",
							&onnx_max_run_memory,
							ONNX_MAX_RUN_MEMORY_DEFAULT, ONNX_LIMIT_NONE, ONNX_MAX_RUN_MEMORY_MAX,
							PGC_SUSET,
							GUC_UNIT_MB,
							check_limit, assign_int_guc, NULL);

	MarkGUCPrefixReserved("onnx");
}

void
_PG_init(void)
{
	/* before OnnxGucInit, which reserves the "onnx." prefix */
	OnnxStatsInit();
	OnnxProgressInit();
	/* before OnnxGucInit, which reserves the "onnx" prefix */
	OnnxBatchInit();
	OnnxGucInit();
	OnnxCacheInit();
}
