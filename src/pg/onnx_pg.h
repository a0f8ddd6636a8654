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
 *	 infer.c	onnx_predict, onnx_predict_batch, onnx_run
 *	 inspect.c	onnx_model_info/_inputs/_outputs/_nodes
 *	 convert.c	arrays <-> tensors, jsonb <-> values
 *	 errors.c	ox_status -> ereport
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
#define ONNX_MAX_RUN_MEMORY_DEFAULT 1024
#define ONNX_MAX_RUN_MEMORY_MAX (INT_MAX / 2)

extern char *onnx_providers;
extern int	onnx_intra_op_threads;
extern int	onnx_graph_optimization_level;
extern int	onnx_session_cache_size;
extern int	onnx_max_model_size;
extern int	onnx_max_run_memory;

/* the limits in bytes (0 = none, as the engine takes them) */
extern Size OnnxMaxModelBytes(void);
extern Size OnnxMaxRunBytes(void);
/* ERROR (54000) when a model of len bytes exceeds onnx.max_model_size */
extern void OnnxCheckModelSize(uint64 len, const char *name, const char *path);

extern void OnnxGucInit(void);

/*
 * Validate a provider list ("cuda, cpu") and normalize it: lower case,
 * duplicates removed, "cpu" appended when missing.  On a bad name, returns
 * NULL and sets *bad to the offending name.
 */
extern char *OnnxNormalizeProviders(const char *list, char **bad);
/* the text listing the valid provider names, for messages */
#define ONNX_VALID_PROVIDERS "cpu, cuda"

/*
 * The providers a session will actually use: the normalized list minus
 * providers this build or machine cannot run (with a NOTICE once per backend
 * and list).  Returned string is palloc'd.
 */
extern char *OnnxEffectiveProviders(const char *normalized);

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

/* session options from the GUCs and an optional per-model override */
extern void OnnxSessionOptions(ox_session_options *opts, const char *providers_override,
							   char **effective_providers);

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
 */
extern ox_model *OnnxParseModel(const void *bytes, size_t len, const char *name,
								size_t max_bytes);

#endif							/* ONNX_PG_H */
