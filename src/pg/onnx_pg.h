/*
 * onnx_pg.h
 *	  Declarations shared by the PostgreSQL layer of onnx_pg (src/pg/).
 *
 * This is the only part of onnx_pg that includes postgres.h.  The engine
 * below (src/runtime/onnx_engine.h) knows nothing about PostgreSQL: it
 * reports failures as ox_status values, which errors.c turns into ereport.
 *
 * Files, one concern each:
 *	 onnx_pg.c	_PG_init, GUCs, the effective session options
 *	 catalog.c	the model table: lookups, load, replace, drop, export
 *	 cache.c	the per-backend session cache and its invalidation
 *	 infer.c	onnx_predict, onnx_predict_batch, onnx_run; resolved calls (OnnxCall)
 *	 inspect.c	onnx_model_info/_inputs/_outputs/_nodes
 *	 providers.c	provider lists, CUDA fallback NOTICE/ERROR, onnx_model_placement
 *	 batch*.c	automatic batching (batchplan.c, batchscan.c) and
 *				onnx_predict_query (batchquery.c); see batch.h
 *	 convert.c	arrays <-> tensors, jsonb <-> values
 *	 errors.c	ox_status -> ereport
 *	 stats.c	per-model statistics (shared memory when preloaded)
 *	 progress.c	progress of loads, optimizations and scoring
 *	 profile.c	onnx_profile, onnx_profile_ops
 *	 dot.c		onnx_model_dot
 *	 optimize.c	onnx_optimize
 */
#ifndef ONNX_PG_H
#define ONNX_PG_H

#include "postgres.h"

#include "fmgr.h"
#include "utils/array.h"
#include "utils/jsonb.h"

#include "runtime/onnx_engine.h"

#define ONNX_EXTENSION_NAME "onnx_pg"
#define ONNX_STORE_TABLE "onnx_model_store"
#define ONNX_SHA256_LEN 32
/* longest model name accepted (bytes) */
#define ONNX_MAX_NAME_LEN 256

/* ---- onnx_pg.c: GUCs ---- */

#define ONNX_CACHE_SIZE_DEFAULT 256		/* MB */
#define ONNX_CACHE_SIZE_MIN 0
#define ONNX_CACHE_SIZE_MAX (INT_MAX / 2)
#define ONNX_THREADS_DEFAULT 1
#define ONNX_THREADS_MIN 0				/* 0 = one thread */
#define ONNX_THREADS_MAX 1024
/*
 * Limits, in MB; -1 = no limit (bytea still stops a model at 1 GB).  0 is
 * refused, so that a value that rounds down to 0 MB ('1kB') is an error
 * rather than no limit.
 */
#define ONNX_LIMIT_NONE (-1)
#define ONNX_MAX_MODEL_SIZE_DEFAULT 1024
#define ONNX_MAX_MODEL_SIZE_MAX (INT_MAX / 2)
#define ONNX_MAX_LOAD_MEMORY_DEFAULT 2048
#define ONNX_MAX_LOAD_MEMORY_MAX (INT_MAX / 2)
#define ONNX_MAX_RUN_MEMORY_DEFAULT 1024
#define ONNX_MAX_RUN_MEMORY_MAX (INT_MAX / 2)
/* CUDA provider: device ordinal, and the per-session device memory bound in MB */
#define ONNX_CUDA_DEVICE_MAX 1023
#define ONNX_CUDA_MEMORY_DEFAULT ONNX_LIMIT_NONE
#define ONNX_CUDA_MEMORY_MAX (INT_MAX / 2)

/* onnx.provider_fallback: when a session asks for cuda and cannot have it */
typedef enum OnnxFallbackMode
{
	ONNX_FALLBACK_NOTICE,		/* run on the CPU with a NOTICE */
	ONNX_FALLBACK_ERROR,		/* ERROR unless the device is usable */
	ONNX_FALLBACK_STRICT		/* ERROR unless every node runs on the device */
} OnnxFallbackMode;

extern char *onnx_providers;
extern int	onnx_intra_op_threads;
extern int	onnx_graph_optimization_level;
extern int	onnx_session_cache_size;
extern int	onnx_max_model_size;
extern int	onnx_max_load_memory;
extern int	onnx_max_run_memory;
extern int	onnx_cuda_device_id;
extern int	onnx_cuda_memory_limit;
extern bool onnx_cuda_fp16;
extern int	onnx_provider_fallback;

/* the limits in bytes (0 = none, as the engine takes them) */
extern Size OnnxMaxModelBytes(void);
extern Size OnnxMaxLoadBytes(void);
extern Size OnnxMaxRunBytes(void);
extern Size OnnxCudaMemoryBytes(void);
/* ERROR (54000) when a model of len bytes exceeds onnx.max_model_size */
extern void OnnxCheckModelSize(uint64 len, const char *name, const char *path);
/*
 * Inputs count against onnx.max_run_memory and are checked here, before the
 * run; the engine is handed the limit for what the run allocates (what it
 * enforces: docs/reliability.md).  OX_LIMIT_EXCEEDED in st when input_bytes
 * are too many.
 */
extern ox_code OnnxCheckRunInputs(uint64 input_bytes, ox_status *st);
extern uint64 OnnxTensorBytes(const ox_tensor *t);

extern void OnnxGucInit(void);

/* ---- providers.c ---- */

/*
 * Validate a provider list ("cuda, cpu") and normalize it: lower case,
 * duplicates removed, "cpu" appended when missing.  On a bad name, returns
 * NULL and sets *bad to the offending name.
 */
extern char *OnnxNormalizeProviders(const char *list, char **bad);
/* the text listing the valid provider names, for messages */
#define ONNX_VALID_PROVIDERS "cpu, cuda"
/* does a normalized list ask for cuda? */
extern bool OnnxProvidersWantCuda(const char *normalized);

/*
 * With onnx.provider_fallback = error or strict, ERROR (0A000) when the
 * normalized list asks for cuda and no CUDA device is usable; from_model:
 * the list is the model's own (for the hint).  May initialize the CUDA
 * runtime, and only then.
 */
extern void OnnxCheckCudaUsable(const char *requested, bool from_model);
/*
 * The NOTICE for a session that asked for cuda and runs on the CPU (reason
 * from ox_session_fallback_reason; nothing when NULL), once per backend for
 * each provider list and reason.
 */
extern void OnnxReportFallback(const char *requested, const char *effective,
							   const char *reason);

/* ---- catalog.c ---- */

/* The cheap part of a model row: everything but the bytes. */
typedef struct OnnxModelKey
{
	int64		version;
	uint8		sha256[ONNX_SHA256_LEN];
	char	   *providers;		/* normalized override, or NULL; palloc'd */
} OnnxModelKey;

/* Look up a model's key (no detoasting); false when no such model. */
extern bool OnnxCatalogLookup(const char *name, OnnxModelKey *key);

/*
 * Fetch a model's bytes (detoasted, palloc'd in the current context) and
 * key, read with the same snapshot.  Raises 42704 when missing.
 */
extern bytea *OnnxCatalogFetch(const char *name, OnnxModelKey *key);

/* OID of the model table, or InvalidOid while unknown */
extern Oid	OnnxStoreRelid(void);
extern void OnnxCatalogForget(void);
/* the remembered OID, without any lookup (for invalidation callbacks) */
extern Oid	OnnxStoreRelidCached(void);

/* error for an unknown model (42704) */
extern void OnnxReportUnknownModel(const char *name) pg_attribute_noreturn();

/* ---- cache.c ---- */

typedef struct OnnxCacheEntry OnnxCacheEntry;

/*
 * Bumped whenever any cached session may have been freed or marked stale;
 * callers that remember an entry across calls (fn_extra) recheck it when
 * this changes.
 */
extern uint64 OnnxCacheEpoch;

extern void OnnxCacheInit(void);
/* the session for a model, built or revalidated as needed */
extern OnnxCacheEntry *OnnxCacheAcquire(const char *name);
extern ox_session *OnnxCacheSession(OnnxCacheEntry *entry);
extern const char *OnnxCacheModelName(OnnxCacheEntry *entry);
/* count a call and refresh the entry's LRU position (before running) */
extern void OnnxCacheTouch(OnnxCacheEntry *entry);
/* refresh memory accounting after a run; may evict other sessions */
extern void OnnxCacheAfterRun(OnnxCacheEntry *entry);
/* mark every entry stale (GUC change, relcache invalidation) */
extern void OnnxCacheInvalidateAll(void);

/*
 * Session options from the GUCs and an optional per-model override;
 * *requested gets the normalized provider list handed to the engine
 * (palloc'd).  Raises the provider_fallback ERROR (OnnxCheckCudaUsable).
 */
extern void OnnxSessionOptions(ox_session_options *opts, const char *providers_override,
							   char **requested);

/* ---- infer.c: resolved model calls, shared with the batch forms (batch*.c) ---- */

/*
 * One model call resolved for repeated use: by a row-wise call site
 * (fn_extra), a batch scan or a set-returning call.  The session is valid
 * while epoch == OnnxCacheEpoch; names and scratch live in mcxt.
 */
typedef struct OnnxCall
{
	uint64		epoch;
	MemoryContext mcxt;
	OnnxCacheEntry *entry;
	ox_session *session;
	char	   *model;
	char	   *output;			/* requested output, or NULL for the first */
	int			out_index;
	int			target;			/* value id holding the output densely */
	const ox_value_def *input;	/* the one input; NULL if the model has several */
	ox_dtype	in_dtype;		/* its element type (float when undeclared) */
	ox_tensor	in;				/* shaped by OnnxCallShape; data set per run */
	int64		shaped_samples; /* -1: one sample, no batch dimension forced */
	int64		shaped_per_sample;	/* 0: not shaped */
	void	   *scratch;		/* 64-byte aligned, scratch_size bytes */
	void	   *scratch_raw;
	Size		scratch_size;
} OnnxCall;

/* Is the call resolved for this model and output, and still current? */
extern bool OnnxCallCurrent(const OnnxCall *call, const char *model, const char *output);
/* quiet: false instead of the error for a missing model/output or a model without one tensor input */
extern bool OnnxCallResolve(OnnxCall *call, const char *model, const char *output, bool quiet);
/* shape call->in for samples (-1: row-wise) x per_sample features */
extern bool OnnxCallShape(OnnxCall *call, int64 samples, int64 per_sample, bool quiet);
extern bool OnnxCallInputSupported(const OnnxCall *call);
extern void *OnnxCallScratch(OnnxCall *call, Size size);
/* run on call->in; errors are returned (OnnxCallReport raises them) */
extern ox_code OnnxCallRun(OnnxCall *call, ox_status *st);
extern void OnnxCallReport(OnnxCall *call, const ox_status *st) pg_attribute_noreturn();
extern const ox_value *OnnxCallResult(OnnxCall *call);
/* a tensor of numbers (what OnnxTensorFloatArray converts without error)? */
extern bool OnnxResultIsDense(const ox_value *v);
/* float4[] of dims from elements [first, first + n) of a numeric tensor */
extern ArrayType *OnnxTensorFloatArray(const ox_tensor *t, int64 first, int64 n, int ndims,
									   const int *dims);

/* An array read in place, short (packed) header or not. */
typedef struct OnnxArrayView
{
	int			ndim;
	int			dims[MAXDIM];
	Oid			elemtype;
	int64		nitems;
	bool		hasnull;
	const bits8 *nullbitmap;
	const char *data;			/* first element: only as aligned as the tuple made it */
	ArrayType  *flat;			/* the array when it has a 4-byte header, else NULL */
	Datum		datum;			/* the (detoasted) datum read */
} OnnxArrayView;

/* detoasts compressed, external and expanded arrays (a copy), not packed ones */
extern void OnnxArrayRead(Datum d, OnnxArrayView *v);

/*
 * Ask for the cache lines of [p, p + len) ahead of their use; nothing is
 * read, and a prefetch never faults, whatever the address.  (asm on x86-64:
 * GCC 12 drops a loop of __builtin_prefetch as dead code.)
 */
static inline void
OnnxPrefetch(const void *p, Size len)
{
	for (Size off = 0; off < len; off += 64)
	{
		const char *line = (const char *) p + off;

#if defined(__x86_64__)
		__asm__ __volatile__("prefetcht0 %0" : : "m"(*line));
#else
		__builtin_prefetch(line);
#endif
	}
}

/*
 * memcpy for the bytes of one short row (an iris array is 40 bytes with its
 * header): at most two fixed-size moves, which the compiler makes inline,
 * where a length known only at run time calls libc (its memmove was 6% of
 * an automatically batched iris_rf scan).  dst and src must not overlap.
 */
static inline void
OnnxCopyShort(void *dst, const void *src, Size len)
{
	char	   *d = dst;
	const char *s = src;

	if (len < 8 || len > 64)
		memcpy(d, s, len);
	else if (len <= 16)
	{
		memcpy(d, s, 8);
		memcpy(d + len - 8, s + len - 8, 8);
	}
	else if (len <= 32)
	{
		memcpy(d, s, 16);
		memcpy(d + len - 16, s + len - 16, 16);
	}
	else
	{
		memcpy(d, s, 32);
		memcpy(d + len - 32, s + len - 32, 32);
	}
}

/* the engine type of real, double precision, smallint, integer, bigint elements */
extern ox_dtype OnnxElemDtype(Oid elemtype);
/*
 * The view's elements as the call's input type: in place when possible, else
 * converted into dst (or the call's scratch when dst is NULL).  NULL and *st
 * set on a conversion error.
 */
extern const void *OnnxFeatureData(OnnxCall *call, const OnnxArrayView *v, void *dst,
								   ox_status *st);

/* ---- batchplan.c: automatic batching (planner hook, GUCs); batch.h has the rest ---- */

extern void OnnxBatchInit(void);

/* ---- convert.c ---- */

/* a float4[] of the given dims from contiguous floats */
extern ArrayType *OnnxFloatArray(const float *data, int ndims, const int *dims);
/*
 * Append the elements of a result value to *out as floats (dense): numeric
 * tensors are converted, a ZipMap-style sequence of maps yields the map
 * values in map order, sample after sample.  *rows gets the number of
 * samples the value holds (first dimension or sequence length) when known.
 */
extern float *OnnxValueToFloats(const ox_value *v, const char *model, const char *output,
								int64 *count, int64 *rows);
/* ox_value from a jsonb nested array for a declared input type */
extern void OnnxJsonbToValue(Jsonb *jb, JsonbValue *jv, const ox_value_def *def,
							 const char *model, ox_value *out);
/* push an engine value into a jsonb being built */
/* what a result's JSON costs (convert.c): checked before building it */
typedef struct OnnxJsonbSize
{
	uint64		min_bytes;		/* the smallest jsonb it could be */
	uint64		build_bytes;	/* about what pushJsonbValue's tree takes */
} OnnxJsonbSize;
extern void OnnxJsonbSizeAdd(OnnxJsonbSize *s, const ox_value *v);
extern void OnnxJsonbSizeAddList(OnnxJsonbSize *s, uint64 n, uint64 payload, bool numbers);
/* whether any jsonb could hold it */
extern bool OnnxJsonbSizeFits(const OnnxJsonbSize *s);
extern void OnnxJsonbSizeCheck(const OnnxJsonbSize *s, const char *model);
extern void OnnxValueToJsonb(JsonbParseState **state, const ox_value *v, bool is_elem,
							 const char *model, const char *output);
extern bool OnnxUtf8Valid(const char *s, size_t len);

/* jsonb building helpers; elem: an array element rather than an object value */
extern void OnnxJbString(JsonbParseState **state, JsonbIteratorToken tok,
						 const char *s, size_t len);
extern void OnnxJbKey(JsonbParseState **state, const char *k);
extern void OnnxJbInt(JsonbParseState **state, int64 i, bool elem);
extern void OnnxJbFloat(JsonbParseState **state, float f, bool elem);
extern void OnnxJbDouble(JsonbParseState **state, double d, bool elem);
/* ONNX bytes as a JSON string, \x-hex when not valid UTF-8 */
extern void OnnxJbBytes(JsonbParseState **state, JsonbIteratorToken tok,
						const char *s, size_t len);

/* ---- errors.c ---- */

typedef enum OnnxPhase
{
	ONNX_PHASE_LOAD,			/* parsing and validating bytes */
	ONNX_PHASE_SESSION,			/* building a session */
	ONNX_PHASE_RUN				/* executing */
} OnnxPhase;

/* ereport(ERROR) for a failed engine call; model may be NULL (raw bytes) */
extern void OnnxReportStatus(const ox_status *st, OnnxPhase phase,
							 const char *model) pg_attribute_noreturn();
extern int	OnnxSqlState(ox_code code);

/* abort callback handed to the engine */
extern bool OnnxShouldAbort(void *arg);
/* after OX_CANCELED: service the interrupt (never returns) */
extern void OnnxServiceCancel(const char *model) pg_attribute_noreturn();

/*
 * Engine objects held while PostgreSQL code that may ERROR runs: registered
 * as a reset callback on a memory context, so an ERROR frees them.  Set a
 * member back to NULL once freed or handed on.
 */
typedef struct OnnxGuard
{
	ox_model   *model;
	ox_session *session;
	MemoryContextCallback cb;
} OnnxGuard;

extern OnnxGuard *OnnxGuardCreate(MemoryContext cxt);
extern void OnnxGuardRelease(OnnxGuard *guard);

/* ---- inspect.c helpers used by catalog.c ---- */

/* ONNX domain as shown to users: "" -> "ai.onnx" */
static inline const char *
OnnxDomainName(const char *domain)
{
	return (domain == NULL || domain[0] == '\0') ? "ai.onnx" : domain;
}

extern Jsonb *OnnxOpsetsJsonb(const ox_model *m);
extern Jsonb *OnnxMetadataJsonb(const ox_model *m);
extern char *OnnxProducerString(const ox_model *m);
/*
 * Parse and validate model bytes; never returns NULL (ERROR instead).
 * max_bytes: the engine's load limit (0 = none); models arriving from
 * outside pass OnnxMaxModelBytes(), stored ones (accepted already) 0.
 * Where it is given, onnx.max_load_memory bounds the unpacking too.
 */
extern ox_model *OnnxParseModel(const void *bytes, size_t len, const char *name,
								size_t max_bytes);

/* ---- stats.c: per-model statistics (shared with shared_preload_libraries) ---- */

#define ONNX_STATS_MAX_DEFAULT 1000
#define ONNX_STATS_MAX_MIN 100
#define ONNX_STATS_MAX_MAX (1024 * 1024)

extern bool onnx_track_stats;
extern int	onnx_stats_max;

/* GUCs and, when preloaded, the shared memory hooks; before OnnxGucInit */
extern void OnnxStatsInit(void);
/* are statistics kept in shared memory (onnx_pg preloaded)? */
extern bool OnnxStatsShared(void);
/*
 * Around every engine run (OnnxCacheTouch and OnnxCacheAfterRun call them):
 * cheap, no lock.  A run begun and never ended was an error.  The run counts
 * one sample unless OnnxStatsRunRows says otherwise in between.  *entry
 * caches the model's statistics entry for the caller (NULL at first; a
 * backend's entries are never removed, so it stays valid while the caller
 * keeps to one model): no lookup by name per run.
 */
extern void OnnxStatsRunBegin(const char *model, void **entry);
extern void OnnxStatsRunRows(int64 rows);
extern void OnnxStatsRunEnd(void);
/* a session was built for a model in ms milliseconds */
extern void OnnxStatsSessionLoad(const char *model, double ms);

/* ---- progress.c: progress of long operations ---- */

#define ONNX_PROGRESS_INTERVAL_DEFAULT 1000	/* ms */

extern int	onnx_progress_interval;

extern void OnnxProgressInit(void);
extern void OnnxProgressShmemRequest(void);
extern void OnnxProgressShmemInit(void);
/* command: "load", "optimize" or "quantize"; one at a time per backend */
extern void OnnxProgressBegin(const char *command, const char *model);
/* a new phase; total 0 = unknown; unit "bytes", "nodes", ... */
extern void OnnxProgressPhase(const char *phase, int64 total, const char *unit);
extern void OnnxProgressUpdate(int64 done);
extern void OnnxProgressEnd(void);
/* rows scored by the current statement (stats.c calls it) */
extern void OnnxProgressRows(const char *model, int64 rows);

/* ---- catalog.c: storing a model produced inside the server ---- */

/*
 * Validate and store model bytes under name, like onnx_load_model, with a
 * lineage (NULL for none).  Returns the new version.
 */
extern int64 OnnxCatalogStoreModel(const char *name, bytea *bytes, bool replace,
								   Jsonb *lineage);

#endif							/* ONNX_PG_H */
