/*
 * cache.c
 *	  Per-backend cache of ready-to-run sessions, one per model name.
 *
 * Memory: the hash table and its strings live in "onnx session cache", a
 * child of TopMemoryContext; each entry's ox_session is engine memory
 * (malloc'ed by the engine) and is freed with ox_session_free when the entry
 * is evicted, invalidated or cleared.  A session goes into its entry right
 * after ox_session_create returns, with no PostgreSQL call in between, so an
 * ERROR can never leak one.
 *
 * Validity: an entry remembers the catalog row's version, sha256 and
 * provider override, and the session options it was built with (the CUDA
 * ones only matter, and are only compared, when it asked for cuda).  Writes to
 * the model table invalidate its relcache entry (catalog.c); our relcache
 * callback then marks every entry stale, and the next use of a stale entry
 * re-reads just version/sha256/providers through the primary key (never the
 * model bytes) and keeps the session when they match.  Changing a GUC that
 * shapes sessions bumps OnnxCacheEpoch; entries built with other options are
 * rebuilt at their next use.
 *
 * Callers may remember an entry across calls (fn_extra) as long as
 * OnnxCacheEpoch is unchanged: anything that frees a session or marks one
 * stale bumps it.
 *
 * Size: entries are accounted as max(file size, weights) plus the session's
 * peak tensor memory; beyond onnx.session_cache_size the least recently used
 * sessions are freed (the entry and its statistics stay).
 */
#include "onnx_pg.h"

#include <time.h>

#include "access/htup_details.h"
#include "access/xact.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/sinval.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(onnx_cache_stats);
PG_FUNCTION_INFO_V1(onnx_cache_clear);

struct OnnxCacheEntry
{
	char		name[ONNX_MAX_NAME_LEN + 1];	/* hash key */
	ox_session *session;		/* NULL when evicted or never built */
	bool		stale;
	/* what the session was built from */
	int64		version;
	uint8		sha256[ONNX_SHA256_LEN];
	char	   *override;		/* normalized per-model providers, or NULL */
	char	   *requested;		/* normalized providers asked for */
	char	   *effective;		/* providers the session runs on (engine's word) */
	char	   *fallback_reason;	/* why it asked for cuda and runs on the CPU */
	int			threads;
	int			opt_level;
	Size		max_run_bytes;	/* onnx.max_run_memory it was built with */
	/* CUDA options it was built with */
	int			cuda_device_id;
	Size		cuda_memory_bytes;
	bool		cuda_fp16;
	int			fallback_mode;
	/* accounting */
	Size		file_bytes;
	Size		bytes;
	uint64		lru_tick;
	/* statistics */
	void	   *stat_entry;		/* OnnxStatsRunBegin's, for this name */
	int64		calls;
	int64		misses;
	double		load_ms;
	TimestampTz last_used;
};

uint64		OnnxCacheEpoch = 1;

static MemoryContext cache_cxt = NULL;
static HTAB *cache_hash = NULL;
static Size cache_total = 0;
static uint64 lru_clock = 0;

static void
ensure_cache(void)
{
	HASHCTL		ctl;

	if (cache_hash)
		return;
	cache_cxt = AllocSetContextCreate(TopMemoryContext, "onnx session cache",
									  ALLOCSET_SMALL_SIZES);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = ONNX_MAX_NAME_LEN + 1;
	ctl.entrysize = sizeof(OnnxCacheEntry);
	ctl.hcxt = cache_cxt;
	cache_hash = hash_create("onnx sessions", 16, &ctl,
							 HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
}

static char *
cache_strdup(const char *s)
{
	return s ? MemoryContextStrdup(cache_cxt, s) : NULL;
}

static void
set_str(char **field, const char *s)
{
	if (*field)
		pfree(*field);
	*field = cache_strdup(s);
}

static void
free_session(OnnxCacheEntry *e)
{
	if (e->session)
	{
		ox_session_free(e->session);
		e->session = NULL;
		OnnxCacheEpoch++;
	}
	cache_total -= Min(cache_total, e->bytes);
	e->bytes = 0;
}

static void
remove_entry(OnnxCacheEntry *e)
{
	char		key[ONNX_MAX_NAME_LEN + 1];

	free_session(e);
	if (e->override)
		pfree(e->override);
	if (e->requested)
		pfree(e->requested);
	if (e->effective)
		pfree(e->effective);
	if (e->fallback_reason)
		pfree(e->fallback_reason);
	strlcpy(key, e->name, sizeof(key));
	hash_search(cache_hash, key, HASH_REMOVE, NULL);
	OnnxCacheEpoch++;
}

static Size
limit_bytes(void)
{
	return (Size) onnx_session_cache_size * 1024 * 1024;
}

/* free least recently used sessions until the cache fits, sparing keep */
static void
enforce_limit(OnnxCacheEntry *keep)
{
	while (cache_total > limit_bytes())
	{
		HASH_SEQ_STATUS seq;
		OnnxCacheEntry *e;
		OnnxCacheEntry *victim = NULL;

		hash_seq_init(&seq, cache_hash);
		while ((e = hash_seq_search(&seq)) != NULL)
		{
			if (e == keep || e->session == NULL)
				continue;
			if (victim == NULL || e->lru_tick < victim->lru_tick)
				victim = e;
		}
		if (victim == NULL)
			break;
		free_session(victim);
	}
}

void
OnnxCacheInvalidateAll(void)
{
	HASH_SEQ_STATUS seq;
	OnnxCacheEntry *e;

	OnnxCacheEpoch++;
	if (!cache_hash)
		return;
	hash_seq_init(&seq, cache_hash);
	while ((e = hash_seq_search(&seq)) != NULL)
		e->stale = true;
}

/* Only marks entries: no catalog access, no freeing (we may be anywhere). */
static void
relcache_callback(Datum arg, Oid relid)
{
	Oid			store = OnnxStoreRelidCached();

	if (relid == InvalidOid || (OidIsValid(store) && relid == store))
	{
		OnnxCatalogForget();
		OnnxCacheInvalidateAll();
	}
}

void
OnnxCacheInit(void)
{
	CacheRegisterRelcacheCallback(relcache_callback, (Datum) 0);
}

/* do the session options the GUCs ask for now match the entry's? */
static bool
options_match(OnnxCacheEntry *e)
{
	char	   *bad;
	char	   *want;
	bool		match;

	if (e->threads != (onnx_intra_op_threads > 0 ? onnx_intra_op_threads : 1) ||
		e->opt_level != onnx_graph_optimization_level ||
		e->max_run_bytes != OnnxMaxRunBytes())
		return false;
	/* the CUDA settings shape only sessions that asked for cuda */
	if (OnnxProvidersWantCuda(e->requested) &&
		(e->cuda_device_id != onnx_cuda_device_id ||
		 e->cuda_memory_bytes != OnnxCudaMemoryBytes() ||
		 e->cuda_fp16 != onnx_cuda_fp16 ||
		 e->fallback_mode != onnx_provider_fallback))
		return false;
	if (e->override)
		return true;			/* the catalog decides; changes invalidate */
	want = OnnxNormalizeProviders(onnx_providers ? onnx_providers : "cpu", &bad);
	match = want && e->requested && strcmp(want, e->requested) == 0;
	if (want)
		pfree(want);
	return match;
}

static bool
key_matches(OnnxCacheEntry *e, const OnnxModelKey *key)
{
	if (e->version != key->version ||
		memcmp(e->sha256, key->sha256, ONNX_SHA256_LEN) != 0)
		return false;
	if ((e->override == NULL) != (key->providers == NULL))
		return false;
	return e->override == NULL || strcmp(e->override, key->providers) == 0;
}

static void
build_session(OnnxCacheEntry *e, const char *name, bytea *bytes, const OnnxModelKey *key)
{
	ox_session_options opts;
	char	   *requested;
	ox_model   *model;
	ox_session *s;
	ox_status	st;
	instr_time	start,
				elapsed;
	ox_session_stats stats;

	INSTR_TIME_SET_CURRENT(start);
	OnnxSessionOptions(&opts, key->providers, &requested);
	/* a cached session only runs: its weights once, packed (not twice) */
	opts.release_weights = true;
	set_str(&e->override, key->providers);
	set_str(&e->requested, requested);
	set_str(&e->effective, NULL);
	set_str(&e->fallback_reason, NULL);
	e->threads = opts.intra_op_threads;
	e->opt_level = onnx_graph_optimization_level;
	e->max_run_bytes = opts.max_run_memory;
	e->cuda_device_id = opts.cuda_device_id;
	e->cuda_memory_bytes = opts.cuda_memory_limit;
	e->cuda_fp16 = opts.cuda_fp16;
	e->fallback_mode = onnx_provider_fallback;

	/* a stored model was accepted at load: onnx.max_model_size does not apply */
	model = OnnxParseModel(VARDATA_ANY(bytes), VARSIZE_ANY_EXHDR(bytes), name, 0);
	ox_status_clear(&st);
	s = ox_session_create(model, &opts, &st);	/* owns model */
	if (s == NULL)
	{
		if (st.code == OX_CANCELED)
			OnnxServiceCancel(name);
		OnnxReportStatus(&st, ONNX_PHASE_SESSION, name);
	}
	e->session = s;
	e->stale = false;
	set_str(&e->effective, ox_session_effective_providers(s));
	set_str(&e->fallback_reason, ox_session_fallback_reason(s));
	e->version = key->version;
	memcpy(e->sha256, key->sha256, ONNX_SHA256_LEN);
	e->misses++;
	e->file_bytes = VARSIZE_ANY_EXHDR(bytes);
	ox_session_get_stats(s, &stats);
	e->bytes = Max(e->file_bytes, stats.weight_bytes) + stats.peak_tensor_bytes;
	cache_total += e->bytes;
	INSTR_TIME_SET_CURRENT(elapsed);
	INSTR_TIME_SUBTRACT(elapsed, start);
	e->load_ms = INSTR_TIME_GET_MILLISEC(elapsed);
	OnnxStatsSessionLoad(name, e->load_ms);
	OnnxCacheEpoch++;
}

OnnxCacheEntry *
OnnxCacheAcquire(const char *name)
{
	OnnxCacheEntry *e;
	OnnxModelKey key;
	bool		found;
	bytea	   *bytes;

	if (strlen(name) > ONNX_MAX_NAME_LEN)
		OnnxReportUnknownModel(name);
	ensure_cache();
	/* see replacements committed by other backends since our last look */
	AcceptInvalidationMessages();

	e = hash_search(cache_hash, name, HASH_FIND, NULL);
	if (e && e->stale)
	{
		if (!OnnxCatalogLookup(name, &key))
		{
			remove_entry(e);
			OnnxReportUnknownModel(name);
		}
		if (e->session && key_matches(e, &key))
			e->stale = false;
		else
			free_session(e);
	}
	if (e && e->session && !options_match(e))
		free_session(e);
	if (e && e->session)
		return e;

	/* build: read the bytes first, so that unknown names leave no entry */
	bytes = OnnxCatalogFetch(name, &key);
	e = hash_search(cache_hash, name, HASH_ENTER, &found);
	if (!found)
	{
		memset(((char *) e) + sizeof(e->name), 0, sizeof(*e) - sizeof(e->name));
		e->last_used = GetCurrentStatementStartTimestamp();
	}
	build_session(e, name, bytes, &key);
	pfree(bytes);
	e->lru_tick = ++lru_clock;
	enforce_limit(e);
	/* asked for cuda, runs on the CPU: say so (once per list and reason) */
	OnnxReportFallback(e->requested, e->effective, e->fallback_reason);
	return e;
}

ox_session *
OnnxCacheSession(OnnxCacheEntry *entry)
{
	return entry->session;
}

const char *
OnnxCacheModelName(OnnxCacheEntry *entry)
{
	return entry->name;
}

void
OnnxCacheTouch(OnnxCacheEntry *e)
{
	e->calls++;
	e->lru_tick = ++lru_clock;
	OnnxStatsRunBegin(e->name, &e->stat_entry);
	e->last_used = GetCurrentStatementStartTimestamp();
}

void
OnnxCacheAfterRun(OnnxCacheEntry *e)
{
	ox_session_stats stats;
	Size		now;

	OnnxStatsRunEnd();
	if (e->session == NULL)
		return;
	ox_session_get_stats(e->session, &stats);
	now = Max(e->file_bytes, stats.weight_bytes) + stats.peak_tensor_bytes;
	if (now != e->bytes)
	{
		cache_total -= Min(cache_total, e->bytes);
		e->bytes = now;
		cache_total += now;
		if (cache_total > limit_bytes())
			enforce_limit(e);
	}
}

Datum
onnx_cache_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS seq;
	OnnxCacheEntry *e;

	InitMaterializedSRF(fcinfo, 0);
	if (!cache_hash)
		return (Datum) 0;
	hash_seq_init(&seq, cache_hash);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		Datum		values[15];
		bool		nulls[15] = {0};

		values[0] = CStringGetTextDatum(e->name);
		values[1] = Int64GetDatum(e->version);
		values[2] = BoolGetDatum(e->session != NULL && !e->stale);
		values[3] = Int64GetDatum(e->calls - e->misses);
		values[4] = Int64GetDatum(e->misses);
		values[5] = Float8GetDatum(e->load_ms);
		values[6] = Int64GetDatum((int64) e->bytes);
		values[7] = TimestampTzGetDatum(e->last_used);
		if (e->effective)
			values[8] = CStringGetTextDatum(e->effective);
		else
			nulls[8] = true;
		values[9] = Int32GetDatum(e->threads);
		if (e->requested)
			values[10] = CStringGetTextDatum(e->requested);
		else
			nulls[10] = true;
		if (e->fallback_reason)
			values[11] = CStringGetTextDatum(e->fallback_reason);
		else
			nulls[11] = true;
		/* what the runs of a live session left: input shapes, buffers, skipped shape work */
		if (e->session)
		{
			ox_session_stats stats;

			ox_session_get_stats(e->session, &stats);
			values[12] = Int32GetDatum(ox_session_shape_count(e->session));
			values[13] = Int64GetDatum((int64) ox_session_buffer_bytes(e->session));
			values[14] = Int64GetDatum(stats.memo_skips);
		}
		else
		{
			nulls[12] = true;
			nulls[13] = true;
			nulls[14] = true;
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

Datum
onnx_cache_clear(PG_FUNCTION_ARGS)
{
	HASH_SEQ_STATUS seq;
	OnnxCacheEntry *e;
	int32		n = 0;

	if (!cache_hash)
		PG_RETURN_INT32(0);
	hash_seq_init(&seq, cache_hash);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		if (e->session)
			n++;
		remove_entry(e);
	}
	PG_RETURN_INT32(n);
}
