/*
 * errors.c
 *	  Engine statuses as PostgreSQL errors, query cancel for the engine, and
 *	  guards that free engine objects when an ERROR unwinds.
 *
 * SQLSTATEs, one per engine code:
 *	 OX_INVALID_MODEL	 22P03 invalid_binary_representation (the bytes are
 *						 not a valid ONNX model: malformed protobuf, cycles,
 *						 undefined values, bad types)
 *	 OX_INVALID_ARGUMENT 22023 invalid_parameter_value
 *	 OX_UNSUPPORTED		 0A000 feature_not_supported
 *	 OX_NOT_FOUND		 42704 undefined_object
 *	 OX_LIMIT_EXCEEDED	 54000 program_limit_exceeded
 *	 OX_OUT_OF_MEMORY	 53200 out_of_memory
 *	 OX_CANCELED		 57014 query_canceled
 *	 OX_INTERNAL		 XX000 internal_error
 */
#include "onnx_pg.h"

#include <ctype.h>

#include "miscadmin.h"
#include "lib/stringinfo.h"
#include "utils/memutils.h"

int
OnnxSqlState(ox_code code)
{
	switch (code)
	{
		case OX_OK:
			return ERRCODE_SUCCESSFUL_COMPLETION;
		case OX_INVALID_MODEL:
			return ERRCODE_INVALID_BINARY_REPRESENTATION;
		case OX_INVALID_ARGUMENT:
			return ERRCODE_INVALID_PARAMETER_VALUE;
		case OX_UNSUPPORTED:
			return ERRCODE_FEATURE_NOT_SUPPORTED;
		case OX_NOT_FOUND:
			return ERRCODE_UNDEFINED_OBJECT;
		case OX_LIMIT_EXCEEDED:
			return ERRCODE_PROGRAM_LIMIT_EXCEEDED;
		case OX_OUT_OF_MEMORY:
			return ERRCODE_OUT_OF_MEMORY;
		case OX_CANCELED:
			return ERRCODE_QUERY_CANCELED;
		case OX_INTERNAL:
			return ERRCODE_INTERNAL_ERROR;
	}
	return ERRCODE_INTERNAL_ERROR;
}

/* engine message as a detail sentence: capitalized, ending with a period */
static char *
detail_sentence(const ox_status *st)
{
	StringInfoData buf;
	size_t		len;

	initStringInfo(&buf);
	if (st->msg[0] == '\0')
		appendStringInfoString(&buf, ox_code_name(st->code));
	else
		appendStringInfoString(&buf, st->msg);
	buf.data[0] = (char) toupper((unsigned char) buf.data[0]);
	len = strlen(buf.data);
	if (len > 0 && buf.data[len - 1] != '.')
		appendStringInfoChar(&buf, '.');
	if (st->node[0] != '\0')
	{
		if (st->op[0] != '\0')
			appendStringInfo(&buf, " Node \"%s\" (%s).", st->node, st->op);
		else
			appendStringInfo(&buf, " Node \"%s\".", st->node);
	}
	return buf.data;
}

/* the primary message: what failed, lower case, naming the model */
static char *
primary_message(const ox_status *st, OnnxPhase phase, const char *model)
{
	StringInfoData buf;

	initStringInfo(&buf);
	switch (st->code)
	{
		case OX_INVALID_MODEL:
			if (model)
				appendStringInfo(&buf, "invalid ONNX model \"%s\"", model);
			else
				appendStringInfoString(&buf, "invalid ONNX model");
			break;
		case OX_UNSUPPORTED:
			if (model)
				appendStringInfo(&buf, "model \"%s\" uses unsupported ONNX features", model);
			else
				appendStringInfoString(&buf, "model uses unsupported ONNX features");
			break;
		case OX_OUT_OF_MEMORY:
			appendStringInfoString(&buf, "out of memory");
			break;
		case OX_CANCELED:
			appendStringInfoString(&buf, "canceling statement due to user request");
			break;
		default:
			{
				const char *what = phase == ONNX_PHASE_RUN ? "run" :
					phase == ONNX_PHASE_SESSION ? "prepare" : "load";

				if (model)
					appendStringInfo(&buf, "could not %s model \"%s\"", what, model);
				else
					appendStringInfo(&buf, "could not %s model", what);
			}
			break;
	}
	return buf.data;
}

void
OnnxReportStatus(const ox_status *st, OnnxPhase phase, const char *model)
{
	ereport(ERROR,
			(errcode(OnnxSqlState(st->code)),
			 errmsg_internal("%s", primary_message(st, phase, model)),
			 errdetail_internal("%s", detail_sentence(st))));
	pg_unreachable();
}

/*
 * Polled by the engine between nodes, while it builds a session and inside
 * long kernels, always from the backend's own thread (the engine never
 * polls from its worker threads): it only reads two flags.
 */
bool
OnnxShouldAbort(void *arg)
{
	return QueryCancelPending || ProcDiePending;
}

void
OnnxServiceCancel(const char *model)
{
	CHECK_FOR_INTERRUPTS();
	/* interrupts held off (or already serviced): still stop this query */
	ereport(ERROR,
			(errcode(ERRCODE_QUERY_CANCELED),
			 errmsg("canceling statement due to user request"),
			 errdetail("Inference of model \"%s\" was interrupted.", model ? model : "?")));
	pg_unreachable();
}

static void
guard_callback(void *arg)
{
	OnnxGuard  *guard = (OnnxGuard *) arg;

	OnnxGuardRelease(guard);
}

OnnxGuard *
OnnxGuardCreate(MemoryContext cxt)
{
	OnnxGuard  *guard = MemoryContextAllocZero(cxt, sizeof(OnnxGuard));

	guard->cb.func = guard_callback;
	guard->cb.arg = guard;
	MemoryContextRegisterResetCallback(cxt, &guard->cb);
	return guard;
}

void
OnnxGuardRelease(OnnxGuard *guard)
{
	if (guard->session)
	{
		ox_session_free(guard->session);
		guard->session = NULL;
	}
	if (guard->model)
	{
		ox_model_free(guard->model);
		guard->model = NULL;
	}
}
