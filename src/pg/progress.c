/*
 * progress.c
 *	  Progress of long operations: loading and optimizing models, and the
 *	  rows a statement has scored so far.
 *
 * Two ways to watch:
 *
 *	 - NOTICE lines from the backend doing the work, for loads and
 *	   optimizations: once an operation has run for onnx.progress_interval,
 *	   each new phase is reported, progress within a phase at most once per
 *	   interval, and the end.  Timings go into the DETAIL so that the primary
 *	   message stays stable.
 *	 - The view onnx_stat_progress, from any session, when onnx_pg is in
 *	   shared_preload_libraries: one slot per backend in shared memory
 *	   (MaxBackends of them), written only by its backend.
 *
 * Slot protocol (like PgBackendStatus): the writer increments changecount
 * before and after writing, with write barriers; a reader copies the slot
 * and retries while changecount is odd or changed.  No lock.
 *
 * A slot is cleared at the end of the operation and at transaction end, so
 * an ERROR never leaves a stale row.
 */
#include "onnx_pg.h"

#include "access/xact.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "portability/instr_time.h"
#include "storage/backendid.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(onnx_stat_progress);

int			onnx_progress_interval = ONNX_PROGRESS_INTERVAL_DEFAULT;

typedef struct ProgressSlot
{
	uint32		changecount;
	int			pid;			/* 0 = idle */
	Oid			dbid;
	char		command[16];
	char		model[ONNX_MAX_NAME_LEN + 1];
	char		phase[48];
	int64		done;
	int64		total;			/* 0 = unknown */
	char		unit[8];
	TimestampTz started;
	TimestampTz phase_started;
	TimestampTz statement;		/* "score": the statement the rows belong to */
} ProgressSlot;

static ProgressSlot *slots = NULL;	/* MaxBackends of them, when preloaded */

/* the operation in progress in this backend */
static struct
{
	bool		active;
	char		command[16];
	char		model[ONNX_MAX_NAME_LEN + 1];
	char		phase[48];
	int64		done;
	int64		total;
	char		unit[8];
	instr_time	start;
	instr_time	last_notice;
	int			notices;
} cur;

static bool callback_registered = false;

static Size
slots_size(void)
{
	return mul_size(MaxBackends, sizeof(ProgressSlot));
}

void
OnnxProgressShmemRequest(void)
{
	RequestAddinShmemSpace(slots_size());
}

/* called with AddinShmemInitLock held */
void
OnnxProgressShmemInit(void)
{
	bool		found;

	slots = ShmemInitStruct("onnx_pg progress", slots_size(), &found);
	if (!found)
		memset(slots, 0, slots_size());
}

static ProgressSlot *
my_slot(void)
{
	if (slots == NULL || MyBackendId == InvalidBackendId || MyBackendId > MaxBackends)
		return NULL;
	return &slots[MyBackendId - 1];
}

#define SLOT_BEGIN_WRITE(s) \
	do { (s)->changecount++; pg_write_barrier(); } while (0)
#define SLOT_END_WRITE(s) \
	do { pg_write_barrier(); (s)->changecount++; } while (0)

static void
slot_clear(void)
{
	ProgressSlot *s = my_slot();

	if (s == NULL || s->pid == 0)
		return;
	SLOT_BEGIN_WRITE(s);
	s->pid = 0;
	SLOT_END_WRITE(s);
}

static void
progress_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			cur.active = false;
			slot_clear();
			break;
		default:
			break;
	}
}

static void
ensure_callback(void)
{
	if (!callback_registered)
	{
		RegisterXactCallback(progress_xact_callback, NULL);
		callback_registered = true;
	}
}

void
OnnxProgressInit(void)
{
	DefineCustomIntVariable("onnx.progress_interval",
							"Reports the progress of long model loads and optimizations as NOTICEs.",
							"The first NOTICE comes once an operation has run this long, then each "
							"new phase and at most one progress line per interval; -1 turns "
							"them off, 0 reports every phase.",
							&onnx_progress_interval,
							ONNX_PROGRESS_INTERVAL_DEFAULT, -1, INT_MAX,
							PGC_USERSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);
}

static void
publish(bool new_phase)
{
	ProgressSlot *s = my_slot();
	TimestampTz now;

	if (s == NULL)
		return;
	now = GetCurrentTimestamp();
	SLOT_BEGIN_WRITE(s);
	if (s->pid == 0 || strcmp(s->command, cur.command) != 0)
	{
		s->started = now;
		new_phase = true;
	}
	s->pid = MyProcPid;
	s->dbid = MyDatabaseId;
	strlcpy(s->command, cur.command, sizeof(s->command));
	strlcpy(s->model, cur.model, sizeof(s->model));
	strlcpy(s->phase, cur.phase, sizeof(s->phase));
	strlcpy(s->unit, cur.unit, sizeof(s->unit));
	s->done = cur.done;
	s->total = cur.total;
	s->statement = 0;
	if (new_phase)
		s->phase_started = now;
	SLOT_END_WRITE(s);
}

static const char *
verb(const char *command)
{
	if (strcmp(command, "load") == 0)
		return "loading";
	if (strcmp(command, "optimize") == 0)
		return "optimizing";
	if (strcmp(command, "quantize") == 0)
		return "quantizing";
	return command;
}

static char *
amount(int64 n, const char *unit)
{
	if (strcmp(unit, "bytes") == 0)
	{
		if (n >= 10 * 1024 * 1024)
			return psprintf(INT64_FORMAT " MB", n / (1024 * 1024));
		if (n >= 10 * 1024)
			return psprintf(INT64_FORMAT " kB", n / 1024);
		return psprintf(INT64_FORMAT " bytes", n);
	}
	return psprintf(INT64_FORMAT " %s", n, unit);
}

/* a NOTICE when the operation has run long enough and the rate allows */
static void
maybe_notice(bool new_phase)
{
	instr_time	now;
	instr_time	d;
	double		since_start;
	double		since_notice;
	char	   *what;

	if (onnx_progress_interval < 0)
		return;
	INSTR_TIME_SET_CURRENT(now);
	d = now;
	INSTR_TIME_SUBTRACT(d, cur.start);
	since_start = INSTR_TIME_GET_MILLISEC(d);
	d = now;
	INSTR_TIME_SUBTRACT(d, cur.last_notice);
	since_notice = INSTR_TIME_GET_MILLISEC(d);
	if (since_start < onnx_progress_interval)
		return;
	if (!new_phase && cur.notices > 0 && since_notice < onnx_progress_interval)
		return;

	if (cur.total > 0 && cur.done > 0)
		what = psprintf("%s (%s of %s)", cur.phase, amount(cur.done, cur.unit),
						amount(cur.total, cur.unit));
	else if (cur.total > 0)
		what = psprintf("%s (%s)", cur.phase, amount(cur.total, cur.unit));
	else if (cur.done > 0)
		what = psprintf("%s (%s)", cur.phase, amount(cur.done, cur.unit));
	else
		what = pstrdup(cur.phase);
	ereport(NOTICE,
			(errmsg("%s model \"%s\": %s", verb(cur.command), cur.model, what),
			 errdetail("%.1f s elapsed.", since_start / 1000.0)));
	cur.last_notice = now;
	cur.notices++;
}

void
OnnxProgressBegin(const char *command, const char *model)
{
	ensure_callback();
	memset(&cur, 0, sizeof(cur));
	cur.active = true;
	strlcpy(cur.command, command, sizeof(cur.command));
	strlcpy(cur.model, model ? model : "", sizeof(cur.model));
	strlcpy(cur.phase, "starting", sizeof(cur.phase));
	INSTR_TIME_SET_CURRENT(cur.start);
	cur.last_notice = cur.start;
	publish(true);
}

void
OnnxProgressPhase(const char *phase, int64 total, const char *unit)
{
	if (!cur.active)
		return;
	strlcpy(cur.phase, phase, sizeof(cur.phase));
	strlcpy(cur.unit, unit ? unit : "", sizeof(cur.unit));
	cur.done = 0;
	cur.total = total;
	publish(true);
	maybe_notice(true);
}

void
OnnxProgressUpdate(int64 done)
{
	if (!cur.active)
		return;
	cur.done = done;
	publish(false);
	maybe_notice(false);
}

void
OnnxProgressEnd(void)
{
	if (!cur.active)
		return;
	if (cur.notices > 0)
	{
		instr_time	d;

		INSTR_TIME_SET_CURRENT(d);
		INSTR_TIME_SUBTRACT(d, cur.start);
		ereport(NOTICE,
				(errmsg("%s model \"%s\": done", verb(cur.command), cur.model),
				 errdetail("%.1f s elapsed.", INSTR_TIME_GET_MILLISEC(d) / 1000.0)));
	}
	cur.active = false;
	slot_clear();
}

/*
 * Rows scored by the current statement (from stats.c after every run, only
 * with shared memory).  A load or optimization in progress keeps its slot.
 */
void
OnnxProgressRows(const char *model, int64 rows)
{
	ProgressSlot *s = my_slot();
	TimestampTz stmt;

	if (s == NULL || cur.active)
		return;
	ensure_callback();
	stmt = GetCurrentStatementStartTimestamp();
	SLOT_BEGIN_WRITE(s);
	if (s->pid == 0 || s->statement != stmt || strcmp(s->model, model) != 0)
	{
		s->pid = MyProcPid;
		s->dbid = MyDatabaseId;
		strlcpy(s->command, "score", sizeof(s->command));
		strlcpy(s->model, model, sizeof(s->model));
		strlcpy(s->phase, "running", sizeof(s->phase));
		strlcpy(s->unit, "rows", sizeof(s->unit));
		s->done = 0;
		s->total = 0;
		s->started = stmt;
		s->phase_started = stmt;
		s->statement = stmt;
	}
	s->done += rows;
	SLOT_END_WRITE(s);
}

Datum
onnx_stat_progress(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	if (slots == NULL)
	{
		ereport(NOTICE,
				(errmsg("onnx_stat_progress needs onnx_pg in shared_preload_libraries"),
				 errdetail("Without it, long loads and optimizations report their progress as NOTICEs to their own session only (see onnx.progress_interval)."),
				 errhint("Add onnx_pg to shared_preload_libraries and restart the server.")));
		return (Datum) 0;
	}
	for (int i = 0; i < MaxBackends; i++)
	{
		ProgressSlot *s = &slots[i];
		ProgressSlot copy;
		Datum		values[10];
		bool		nulls[10] = {0};

		for (;;)
		{
			uint32		before = ((volatile ProgressSlot *) s)->changecount;

			pg_read_barrier();
			memcpy(&copy, s, sizeof(copy));
			pg_read_barrier();
			if (before == ((volatile ProgressSlot *) s)->changecount && (before & 1) == 0)
				break;
			CHECK_FOR_INTERRUPTS();
		}
		if (copy.pid == 0 || copy.pid == MyProcPid)
			continue;
		copy.command[sizeof(copy.command) - 1] = '\0';
		copy.model[sizeof(copy.model) - 1] = '\0';
		copy.phase[sizeof(copy.phase) - 1] = '\0';
		copy.unit[sizeof(copy.unit) - 1] = '\0';

		values[0] = Int32GetDatum(copy.pid);
		values[1] = ObjectIdGetDatum(copy.dbid);
		values[2] = CStringGetTextDatum(copy.command);
		values[3] = CStringGetTextDatum(copy.model);
		values[4] = CStringGetTextDatum(copy.phase);
		values[5] = Int64GetDatum(copy.done);
		if (copy.total > 0)
			values[6] = Int64GetDatum(copy.total);
		else
			nulls[6] = true;
		values[7] = CStringGetTextDatum(copy.unit);
		values[8] = TimestampTzGetDatum(copy.started);
		values[9] = TimestampTzGetDatum(copy.phase_started);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
