/*
 * stats.c
 *	  Per-model statistics: calls, rows, run time, errors, session loads.
 *
 * Two levels, like pg_stat_statements and the cumulative statistics system:
 *
 *	 - Always: this backend's counters, in a local hash keyed by model name
 *	   (memory context "onnx statistics", a child of TopMemoryContext).
 *	 - With onnx_pg in shared_preload_libraries: a hash in shared memory keyed
 *	   by (database, model name) holding the sums over every backend, parallel
 *	   workers included.  Without preloading there is no shared memory to put
 *	   it in; onnx_stat_models then shows this backend's counters with a NOTICE
 *	   that says so.
 *
 * The hot path (OnnxStatsRunBegin/OnnxStatsRunEnd around every engine run,
 * called by the session cache's OnnxCacheTouch/OnnxCacheAfterRun, with the
 * run's sample count from OnnxStatsRunRows) adds to local memory: no lock.
 * It reads the clock around a run, except for runs of a model whose last
 * timed run took under ONNX_STATS_CHEAP_MS: of those only one in
 * ONNX_STATS_SAMPLE is timed, and the others count as long as the last timed
 * one.  Two clock reads cost as much as a whole row-wise run of a small
 * tree ensemble; sampling keeps total_ms an estimate within the runs'
 * variation, while calls and rows stay exact.  Progress rows reach shared
 * memory with the timed runs.  A backend moves
 * its pending counts into shared memory ("flushes") at the end of each
 * transaction, at most once a second during a long statement, before it
 * reads the statistics itself, and when it exits.
 *
 * Errors are counted without a PG_TRY per row: RunBegin remembers the run in
 * flight and RunEnd forgets it, so a run still in flight at the next
 * RunBegin or at transaction end was left by an ERROR.
 *
 * Locking of the shared hash: one LWLock guards its structure.  Flushing
 * takes it shared to find entries and updates an entry's counters under the
 * entry's spinlock; adding an entry (and evicting the least recently used
 * one when the table is full) or resetting takes it exclusive.  Readers take
 * it shared and copy each entry under its spinlock.  Nothing here allocates
 * or raises errors while holding the lock, so the flush at transaction abort
 * and at exit is safe.
 *
 * _PG_init runs in the postmaster when preloaded: it only defines GUCs and
 * installs the shared memory hooks (chained, saving the previous hooks).
 */
#include "onnx_pg.h"

#include "access/xact.h"
#include "commands/dbcommands.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(onnx_stat_models);
PG_FUNCTION_INFO_V1(onnx_stat_reset);

/* flush pending counts at least this often during a long statement */
#define ONNX_STATS_FLUSH_MS 1000.0

/* runs shorter than this are timed one in ONNX_STATS_SAMPLE */
#define ONNX_STATS_CHEAP_MS 0.05
#define ONNX_STATS_SAMPLE 16

bool		onnx_track_stats = true;
int			onnx_stats_max = ONNX_STATS_MAX_DEFAULT;

typedef struct StatCounters
{
	int64		calls;
	int64		rows;
	double		total_ms;
	double		max_ms;
	int64		errors;
	int64		loads;
	double		load_ms;
	TimestampTz last_used;		/* 0 when never */
} StatCounters;

/* ---- shared memory ---- */

typedef struct SharedStatKey
{
	Oid			dbid;
	char		name[ONNX_MAX_NAME_LEN + 1];	/* zero-padded: hashed as bytes */
} SharedStatKey;

typedef struct SharedStatEntry
{
	SharedStatKey key;
	slock_t		mutex;			/* protects the fields below */
	StatCounters c;
	TimestampTz since;
} SharedStatEntry;

typedef struct SharedStatState
{
	LWLock	   *lock;
	int64		evicted;		/* entries dropped because the table was full */
	TimestampTz reset_at;		/* last full reset */
} SharedStatState;

static SharedStatState *shared_state = NULL;
static HTAB *shared_hash = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* ---- this backend ---- */

typedef struct LocalStatEntry
{
	char		name[ONNX_MAX_NAME_LEN + 1];	/* hash key */
	StatCounters total;			/* what this backend did */
	StatCounters pending;		/* not yet flushed to shared memory */
	bool		has_pending;
	TimestampTz since;
	/* sampled timing of cheap runs */
	int			untimed_left;	/* runs to go before the next timed one */
	double		est_ms;			/* the last timed run */
	/* rows scored since progress was last reported, in statement progress_stmt */
	int64		progress_rows;
	TimestampTz progress_stmt;
} LocalStatEntry;

static MemoryContext local_cxt = NULL;
static HTAB *local_hash = NULL;
static LocalStatEntry *last_entry = NULL;	/* the model of the last run */
static LocalStatEntry *in_flight = NULL;	/* a run begun and not ended */
static instr_time run_start;
static bool run_timed = false;	/* run_start was read for the run in flight */
static int64 run_rows = 1;		/* samples of the run in flight */
static instr_time last_flush;
static bool any_pending = false;
static bool callbacks_registered = false;

static void stats_xact_callback(XactEvent event, void *arg);
static void stats_exit(int code, Datum arg);

static Size
shared_size(void)
{
	return add_size(MAXALIGN(sizeof(SharedStatState)),
					hash_estimate_size(onnx_stats_max, sizeof(SharedStatEntry)));
}

static void
stats_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(shared_size());
	RequestNamedLWLockTranche("onnx_pg", 1);
	OnnxProgressShmemRequest();
}

static void
stats_shmem_startup(void)
{
	bool		found;
	HASHCTL		info;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	shared_state = ShmemInitStruct("onnx_pg statistics", sizeof(SharedStatState), &found);
	if (!found)
	{
		shared_state->lock = &(GetNamedLWLockTranche("onnx_pg"))->lock;
		shared_state->evicted = 0;
		shared_state->reset_at = GetCurrentTimestamp();
	}
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(SharedStatKey);
	info.entrysize = sizeof(SharedStatEntry);
	shared_hash = ShmemInitHash("onnx_pg statistics hash", onnx_stats_max, onnx_stats_max,
								&info, HASH_ELEM | HASH_BLOBS);
	OnnxProgressShmemInit();
	LWLockRelease(AddinShmemInitLock);
}

bool
OnnxStatsShared(void)
{
	return shared_hash != NULL;
}

void
OnnxStatsInit(void)
{
	DefineCustomBoolVariable("onnx.track_stats",
							 "Collects per-model statistics (onnx_stat_models).",
							 NULL,
							 &onnx_track_stats,
							 true,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	/* a PGC_POSTMASTER setting can only be defined while preloading */
	if (!process_shared_preload_libraries_in_progress)
		return;

	DefineCustomIntVariable("onnx.stats_max",
							"Models tracked in shared memory by onnx_stat_models.",
							"Needs onnx_pg in shared_preload_libraries; beyond it the least "
							"recently used model's statistics are dropped.",
							&onnx_stats_max,
							ONNX_STATS_MAX_DEFAULT, ONNX_STATS_MAX_MIN, ONNX_STATS_MAX_MAX,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = stats_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = stats_shmem_startup;
}

/* ---- recording ---- */

static void
counters_add(StatCounters *to, const StatCounters *from)
{
	to->calls += from->calls;
	to->rows += from->rows;
	to->total_ms += from->total_ms;
	to->max_ms = Max(to->max_ms, from->max_ms);
	to->errors += from->errors;
	to->loads += from->loads;
	to->load_ms += from->load_ms;
	to->last_used = Max(to->last_used, from->last_used);
}

static LocalStatEntry *
local_entry(const char *model)
{
	LocalStatEntry *e;
	bool		found;
	char		key[ONNX_MAX_NAME_LEN + 1];

	if (last_entry && strcmp(last_entry->name, model) == 0)
		return last_entry;
	if (local_hash == NULL)
	{
		HASHCTL		ctl;

		local_cxt = AllocSetContextCreate(TopMemoryContext, "onnx statistics",
										  ALLOCSET_SMALL_SIZES);
		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = ONNX_MAX_NAME_LEN + 1;
		ctl.entrysize = sizeof(LocalStatEntry);
		ctl.hcxt = local_cxt;
		local_hash = hash_create("onnx statistics", 16, &ctl,
								 HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	}
	if (!callbacks_registered)
	{
		RegisterXactCallback(stats_xact_callback, NULL);
		before_shmem_exit(stats_exit, (Datum) 0);
		INSTR_TIME_SET_CURRENT(last_flush);
		callbacks_registered = true;
	}
	strlcpy(key, model, sizeof(key));
	e = hash_search(local_hash, key, HASH_ENTER, &found);
	if (!found)
	{
		memset(&e->total, 0, sizeof(e->total));
		memset(&e->pending, 0, sizeof(e->pending));
		e->has_pending = false;
		e->since = GetCurrentTimestamp();
		e->untimed_left = 0;
		e->est_ms = 0;
		e->progress_rows = 0;
		e->progress_stmt = 0;
	}
	last_entry = e;
	return e;
}

static void
count_error(LocalStatEntry *e)
{
	e->total.errors++;
	e->pending.errors++;
	e->has_pending = true;
	any_pending = true;
}

/* a shared entry for key, created (evicting the least recently used) if needed */
static SharedStatEntry *
shared_entry_create(const SharedStatKey *key, TimestampTz since)
{
	SharedStatEntry *se;
	bool		found;

	se = hash_search(shared_hash, key, HASH_FIND, NULL);
	if (se)
		return se;
	if (hash_get_num_entries(shared_hash) >= onnx_stats_max)
	{
		HASH_SEQ_STATUS seq;
		SharedStatEntry *victim = NULL;
		SharedStatEntry *x;

		hash_seq_init(&seq, shared_hash);
		while ((x = hash_seq_search(&seq)) != NULL)
			if (victim == NULL || x->c.last_used < victim->c.last_used)
				victim = x;
		if (victim)
		{
			hash_search(shared_hash, &victim->key, HASH_REMOVE, NULL);
			shared_state->evicted++;
		}
	}
	se = hash_search(shared_hash, key, HASH_ENTER_NULL, &found);
	if (se && !found)
	{
		SpinLockInit(&se->mutex);
		memset(&se->c, 0, sizeof(se->c));
		se->since = since;
	}
	return se;
}

/* move pending counts into shared memory */
static void
flush_pending(void)
{
	HASH_SEQ_STATUS seq;
	LocalStatEntry *e;
	bool		exclusive = false;

	if (!any_pending || local_hash == NULL)
		return;
	if (shared_hash == NULL)
	{
		any_pending = false;
		return;
	}
	LWLockAcquire(shared_state->lock, LW_SHARED);
	hash_seq_init(&seq, local_hash);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		SharedStatKey key;
		SharedStatEntry *se;

		if (!e->has_pending)
			continue;
		memset(&key, 0, sizeof(key));
		key.dbid = MyDatabaseId;
		strlcpy(key.name, e->name, sizeof(key.name));
		se = hash_search(shared_hash, &key, HASH_FIND, NULL);
		if (se == NULL)
		{
			if (!exclusive)
			{
				LWLockRelease(shared_state->lock);
				LWLockAcquire(shared_state->lock, LW_EXCLUSIVE);
				exclusive = true;
			}
			se = shared_entry_create(&key, e->since);
			if (se == NULL)
				continue;		/* out of shared memory: keep it pending */
		}
		SpinLockAcquire(&se->mutex);
		counters_add(&se->c, &e->pending);
		SpinLockRelease(&se->mutex);
		memset(&e->pending, 0, sizeof(e->pending));
		e->has_pending = false;
	}
	LWLockRelease(shared_state->lock);
	any_pending = false;
	INSTR_TIME_SET_CURRENT(last_flush);
}

void
OnnxStatsRunBegin(const char *model, void **entry)
{
	LocalStatEntry *e;

	if (!onnx_track_stats)
		return;
	if (in_flight)
		count_error(in_flight);
	/* the name's strcmp alone was 2% of a tree ensemble's row-wise call */
	e = *entry ? (LocalStatEntry *) *entry : local_entry(model);
	*entry = e;
	in_flight = e;
	run_rows = 1;
	run_timed = e->untimed_left <= 0;
	if (run_timed)
		INSTR_TIME_SET_CURRENT(run_start);
	else
		e->untimed_left--;
}

void
OnnxStatsRunRows(int64 rows)
{
	run_rows = rows > 0 ? rows : 1;
}

void
OnnxStatsRunEnd(void)
{
	LocalStatEntry *e = in_flight;
	instr_time	now;
	instr_time	elapsed;
	double		ms;
	int64		rows;

	if (e == NULL)
		return;
	in_flight = NULL;
	if (run_timed)
	{
		INSTR_TIME_SET_CURRENT(now);
		elapsed = now;
		INSTR_TIME_SUBTRACT(elapsed, run_start);
		ms = INSTR_TIME_GET_MILLISEC(elapsed);
		e->est_ms = ms;
		e->untimed_left = ms < ONNX_STATS_CHEAP_MS ? ONNX_STATS_SAMPLE - 1 : 0;
	}
	else
		ms = e->est_ms;
	rows = run_rows;

	e->total.calls++;
	e->total.rows += rows;
	e->total.total_ms += ms;
	e->total.max_ms = Max(e->total.max_ms, ms);
	e->total.last_used = GetCurrentStatementStartTimestamp();
	e->pending.calls++;
	e->pending.rows += rows;
	e->pending.total_ms += ms;
	e->pending.max_ms = Max(e->pending.max_ms, ms);
	e->pending.last_used = e->total.last_used;
	e->has_pending = true;
	any_pending = true;

	if (shared_hash)
	{
		/* rows of an earlier statement are not this one's progress */
		if (e->progress_stmt != e->total.last_used)
		{
			e->progress_stmt = e->total.last_used;
			e->progress_rows = 0;
		}
		e->progress_rows += rows;
		if (!run_timed)
			return;
		OnnxProgressRows(e->name, e->progress_rows);
		e->progress_rows = 0;
		elapsed = now;
		INSTR_TIME_SUBTRACT(elapsed, last_flush);
		if (INSTR_TIME_GET_MILLISEC(elapsed) >= ONNX_STATS_FLUSH_MS)
			flush_pending();
	}
}

void
OnnxStatsSessionLoad(const char *model, double ms)
{
	LocalStatEntry *e;

	if (!onnx_track_stats)
		return;
	e = local_entry(model);
	e->total.loads++;
	e->total.load_ms += ms;
	e->total.last_used = Max(e->total.last_used, GetCurrentStatementStartTimestamp());
	e->pending.loads++;
	e->pending.load_ms += ms;
	e->pending.last_used = e->total.last_used;
	e->has_pending = true;
	any_pending = true;
}

static void
stats_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			if (in_flight)
			{
				count_error(in_flight);
				in_flight = NULL;
			}
			flush_pending();
			break;
		default:
			break;
	}
}

static void
stats_exit(int code, Datum arg)
{
	if (in_flight)
	{
		count_error(in_flight);
		in_flight = NULL;
	}
	flush_pending();
}

/* ---- SQL ---- */

static void
put_row(ReturnSetInfo *rsinfo, Oid dbid, const char *name, const StatCounters *c,
		TimestampTz since)
{
	Datum		values[12];
	bool		nulls[12] = {0};
	char	   *dbname = get_database_name(dbid);

	if (dbname)
		values[0] = DirectFunctionCall1(namein, CStringGetDatum(dbname));
	else
		nulls[0] = true;
	values[1] = CStringGetTextDatum(name);
	values[2] = Int64GetDatum(c->calls);
	values[3] = Int64GetDatum(c->rows);
	values[4] = Float8GetDatum(c->total_ms);
	/*
	 * Sampled runs all count the same estimate, and a sum of equal terms
	 * divided back can round one ulp above the term: never show a mean
	 * above the maximum.
	 */
	if (c->calls > 0)
		values[5] = Float8GetDatum(Min(c->total_ms / c->calls, c->max_ms));
	else
		nulls[5] = true;
	values[6] = Float8GetDatum(c->max_ms);
	values[7] = Int64GetDatum(c->errors);
	values[8] = Int64GetDatum(c->loads);
	values[9] = Float8GetDatum(c->load_ms);
	if (c->last_used != 0)
		values[10] = TimestampTzGetDatum(c->last_used);
	else
		nulls[10] = true;
	values[11] = TimestampTzGetDatum(since);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

static void
notice_not_shared(void)
{
	ereport(NOTICE,
			(errmsg("onnx_pg statistics cover this backend only"),
			 errdetail("onnx_pg is not in shared_preload_libraries, so there is no shared memory for statistics across backends; parallel workers and other sessions are not counted."),
			 errhint("Add onnx_pg to shared_preload_libraries and restart the server.")));
}

Datum
onnx_stat_models(PG_FUNCTION_ARGS)
{
	bool		all_databases = PG_GETARG_BOOL(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	if (shared_hash)
	{
		HASH_SEQ_STATUS seq;
		SharedStatEntry *se;
		int			n = 0;
		int			i = 0;
		SharedStatEntry *copies;

		flush_pending();
		/* copy under the lock; catalog lookups (database names) come after */
		LWLockAcquire(shared_state->lock, LW_SHARED);
		copies = palloc(sizeof(SharedStatEntry) * Max(hash_get_num_entries(shared_hash), 1));
		hash_seq_init(&seq, shared_hash);
		while ((se = hash_seq_search(&seq)) != NULL)
		{
			if (!all_databases && se->key.dbid != MyDatabaseId)
				continue;
			copies[n].key = se->key;
			SpinLockAcquire(&se->mutex);
			copies[n].c = se->c;
			copies[n].since = se->since;
			SpinLockRelease(&se->mutex);
			n++;
		}
		LWLockRelease(shared_state->lock);
		for (i = 0; i < n; i++)
			put_row(rsinfo, copies[i].key.dbid, copies[i].key.name, &copies[i].c,
					copies[i].since);
	}
	else
	{
		HASH_SEQ_STATUS seq;
		LocalStatEntry *e;

		notice_not_shared();
		if (local_hash)
		{
			hash_seq_init(&seq, local_hash);
			while ((e = hash_seq_search(&seq)) != NULL)
				put_row(rsinfo, MyDatabaseId, e->name, &e->total, e->since);
		}
	}
	return (Datum) 0;
}

Datum
onnx_stat_reset(PG_FUNCTION_ARGS)
{
	char	   *model = PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0));

	if (local_hash)
	{
		HASH_SEQ_STATUS seq;
		LocalStatEntry *e;

		hash_seq_init(&seq, local_hash);
		while ((e = hash_seq_search(&seq)) != NULL)
		{
			if (model && strcmp(model, e->name) != 0)
				continue;
			memset(&e->total, 0, sizeof(e->total));
			memset(&e->pending, 0, sizeof(e->pending));
			e->has_pending = false;
			e->since = GetCurrentTimestamp();
		}
	}
	if (shared_hash)
	{
		HASH_SEQ_STATUS seq;
		SharedStatEntry *se;

		LWLockAcquire(shared_state->lock, LW_EXCLUSIVE);
		hash_seq_init(&seq, shared_hash);
		while ((se = hash_seq_search(&seq)) != NULL)
		{
			if (model && (se->key.dbid != MyDatabaseId || strcmp(se->key.name, model) != 0))
				continue;
			hash_search(shared_hash, &se->key, HASH_REMOVE, NULL);
		}
		if (model == NULL)
		{
			shared_state->evicted = 0;
			shared_state->reset_at = GetCurrentTimestamp();
		}
		LWLockRelease(shared_state->lock);
	}
	PG_RETURN_VOID();
}
