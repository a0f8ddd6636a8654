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
 * run memory limit, and for sessions that ask for cuda the device, its
 * memory bound, fp16 and the fallback mode) are part of each cached
 * session's identity: cache.c compares them when it revalidates an entry,
 * and the assign hooks here bump the cache epoch so that remembered sessions
 * are rechecked.  Provider lists and the CUDA fallback are in providers.c.
 *
 * The limits, onnx.max_model_size, onnx.max_load_memory and
 * onnx.max_run_memory, protect the server rather than tune a query, so
 * only superusers may change them
 * (PGC_SUSET; a superuser may still set them per role or database).
 * onnx.cuda_memory_limit is such a limit too: the GPU is shared by every
 * backend that uses it.
 */
#include "onnx_pg.h"

#include <limits.h>

#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"

PG_MODULE_MAGIC;

char	   *onnx_providers = NULL;
int			onnx_intra_op_threads = ONNX_THREADS_DEFAULT;
int			onnx_graph_optimization_level = OX_OPT_ALL;
int			onnx_session_cache_size = ONNX_CACHE_SIZE_DEFAULT;
int			onnx_max_model_size = ONNX_MAX_MODEL_SIZE_DEFAULT;
int			onnx_max_load_memory = ONNX_MAX_LOAD_MEMORY_DEFAULT;
int			onnx_max_run_memory = ONNX_MAX_RUN_MEMORY_DEFAULT;
int			onnx_cuda_device_id = 0;
int			onnx_cuda_memory_limit = ONNX_CUDA_MEMORY_DEFAULT;
bool		onnx_cuda_fp16 = false;
int			onnx_provider_fallback = ONNX_FALLBACK_NOTICE;

static const struct config_enum_entry opt_level_options[] = {
	{"disable", OX_OPT_DISABLE, false},
	{"basic", OX_OPT_BASIC, false},
	{"extended", OX_OPT_EXTENDED, false},
	{"all", OX_OPT_ALL, false},
	{NULL, 0, false}
};

static const struct config_enum_entry fallback_options[] = {
	{"notice", ONNX_FALLBACK_NOTICE, false},
	{"error", ONNX_FALLBACK_ERROR, false},
	{"strict", ONNX_FALLBACK_STRICT, false},
	{NULL, 0, false}
};

void		_PG_init(void);

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

static void
assign_bool_guc(bool newval, void *extra)
{
	assign_session_guc();
}

Size
OnnxMaxModelBytes(void)
{
	return onnx_max_model_size <= 0 ? 0 : (Size) onnx_max_model_size * 1024 * 1024;
}

Size
OnnxMaxLoadBytes(void)
{
	return onnx_max_load_memory <= 0 ? 0 : (Size) onnx_max_load_memory * 1024 * 1024;
}

Size
OnnxMaxRunBytes(void)
{
	return onnx_max_run_memory <= 0 ? 0 : (Size) onnx_max_run_memory * 1024 * 1024;
}

Size
OnnxCudaMemoryBytes(void)
{
	return onnx_cuda_memory_limit <= 0 ? 0 : (Size) onnx_cuda_memory_limit * 1024 * 1024;
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
				   char **requested)
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
	/* before anything is built: 'error' and 'strict' need a usable device */
	OnnxCheckCudaUsable(norm, providers_override != NULL);
	*requested = norm;
	/* the engine places the nodes and falls back to the CPU (providers.c) */
	opts->providers = norm;
	opts->intra_op_threads = onnx_intra_op_threads > 0 ? onnx_intra_op_threads : 1;
	opts->opt_level = (ox_opt_level) onnx_graph_optimization_level;
	opts->max_run_memory = OnnxMaxRunBytes();
	opts->should_abort = OnnxShouldAbort;
	opts->abort_arg = NULL;
	opts->cuda_device_id = onnx_cuda_device_id;
	opts->cuda_memory_limit = OnnxCudaMemoryBytes();
	opts->cuda_fp16 = onnx_cuda_fp16;
	opts->provider_no_fallback = onnx_provider_fallback == ONNX_FALLBACK_STRICT;
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

	/*
	 * protobuf-c records every field of a message before it copies them
	 * out, and allocates every message: an empty node, 2 bytes of file,
	 * takes about 200 in memory, so the file's size alone bounds a load's
	 * memory only at a hundred times itself (src/model/loader_tensor.c)
	 */
	DefineCustomIntVariable("onnx.max_load_memory",
							"Most memory unpacking one ONNX model may take.",
							"Estimated from the file before it is unpacked; applies where "
							"onnx.max_model_size does; -1 means no limit.",
							&onnx_max_load_memory,
							ONNX_MAX_LOAD_MEMORY_DEFAULT, ONNX_LIMIT_NONE, ONNX_MAX_LOAD_MEMORY_MAX,
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

	DefineCustomIntVariable("onnx.cuda_device_id",
							"CUDA device that sessions asking for cuda run on.",
							"The device ordinal, as CUDA numbers them (CUDA_VISIBLE_DEVICES applies).",
							&onnx_cuda_device_id,
							0, 0, ONNX_CUDA_DEVICE_MAX,
							PGC_USERSET,
							0,
							NULL, assign_int_guc, NULL);

	DefineCustomIntVariable("onnx.cuda_memory_limit",
							"Most device memory one session's CUDA arena may hold.",
							"Weights and tensors on the device count; -1 means no limit.",
							&onnx_cuda_memory_limit,
							ONNX_CUDA_MEMORY_DEFAULT, ONNX_LIMIT_NONE, ONNX_CUDA_MEMORY_MAX,
							PGC_SUSET,
							GUC_UNIT_MB,
							check_limit, assign_int_guc, NULL);

	DefineCustomBoolVariable("onnx.cuda_fp16",
							 "Lets the CUDA provider compute float32 operators with fp16 tensor cores.",
							 "Faster, less exact: for models whose accuracy allows it.",
							 &onnx_cuda_fp16,
							 false,
							 PGC_USERSET,
							 0,
							 NULL, assign_bool_guc, NULL);

	DefineCustomEnumVariable("onnx.provider_fallback",
							 "What happens when a session asks for cuda and cannot have it.",
							 "notice: run on the CPU with a NOTICE; error: an ERROR unless the "
							 "device is usable; strict: an ERROR unless every node runs on it.",
							 &onnx_provider_fallback,
							 ONNX_FALLBACK_NOTICE,
							 fallback_options,
							 PGC_USERSET,
							 0,
							 NULL, assign_int_guc, NULL);

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
