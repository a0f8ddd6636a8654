/*
 * providers.c
 *	  Execution providers: provider lists, the CUDA fallback NOTICE or ERROR,
 *	  and onnx_model_placement.
 *
 * A provider list ("cuda, cpu") is normalized here and handed to the engine
 * as it is: the engine decides where each node runs.  When a session asked
 * for cuda but runs on the CPU only (a build without CUDA, no driver, no
 * device), the engine says why (ox_session_fallback_reason) and, as
 * onnxruntime does, we tell the user with a NOTICE, once per backend for
 * each provider list and reason.  onnx.provider_fallback turns that into an
 * ERROR:
 *
 *	 notice	 run on the CPU with the NOTICE (the default)
 *	 error	 the device must be usable (ox_cuda_device_usable, checked before
 *			 the session is built); nodes the CUDA provider has no kernel
 *			 for still run on the CPU, as in onnxruntime
 *	 strict	 as error, and every node must run on CUDA: the engine's
 *			 provider_no_fallback refuses to build the session otherwise
 *
 * No CUDA call is made unless a session asks for cuda: not at library load,
 * not in the postmaster, not for cpu-only sessions.
 */
#include "onnx_pg.h"

#include <ctype.h>

#include "funcapi.h"
#include "nodes/pg_list.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/varlena.h"

PG_FUNCTION_INFO_V1(onnx_model_placement);

static const char *const known_providers[] = {"cpu", "cuda"};

/*
 * Fallbacks already reported by this backend, as "providers\nreason"
 * strings in TopMemoryContext.  Few distinct ones exist (two provider
 * orders, a handful of reasons); the bound only guards against surprises.
 */
#define ONNX_FALLBACK_WARNED_MAX 32
static List *warned_fallbacks = NIL;

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

bool
OnnxProvidersWantCuda(const char *normalized)
{
	const char *p = normalized;

	/* a normalized list is lower case, comma-separated, without spaces */
	while (p && *p)
	{
		size_t		len = strcspn(p, ",");

		if (len == 4 && strncmp(p, "cuda", 4) == 0)
			return true;
		p += len;
		if (*p == ',')
			p++;
	}
	return false;
}

/*
 * The DETAIL for an engine's reason ("onnx_pg was built without CUDA", "CUDA
 * device 1 does not exist"): a sentence whatever the reason's first word.
 */
static char *
reason_detail(const char *reason)
{
	StringInfoData buf;
	const char *r = reason && reason[0] ? reason : "no reason was given";
	size_t		len = strlen(r);

	initStringInfo(&buf);
	appendStringInfoString(&buf, "The CUDA provider cannot be used: ");
	/* "No driver" -> "no driver", but keep "CUDA", "onnx_pg", ... */
	if (isupper((unsigned char) r[0]) && islower((unsigned char) r[1]))
	{
		appendStringInfoChar(&buf, (char) tolower((unsigned char) r[0]));
		r++;
		len--;
	}
	appendStringInfoString(&buf, r);
	if (len == 0 || r[len - 1] != '.')
		appendStringInfoChar(&buf, '.');
	return buf.data;
}

void
OnnxCheckCudaUsable(const char *requested, bool from_model)
{
	char		why[256];

	if (onnx_provider_fallback == ONNX_FALLBACK_NOTICE || !OnnxProvidersWantCuda(requested))
		return;
	why[0] = '\0';
	if (ox_cuda_device_usable(onnx_cuda_device_id, why, sizeof(why)))
		return;

	/*
	 * 0A000 feature_not_supported: this server cannot provide what the
	 * setting demands (the build has no CUDA, or the machine no usable
	 * device), and trying again will not help.  It is also the SQLSTATE of
	 * the engine's refusal under 'strict' (a node without a CUDA kernel is
	 * an unsupported feature, OX_UNSUPPORTED), so that an application catches
	 * both the same way.
	 */
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("execution provider \"cuda\" is not available"),
			 errdetail("%s", reason_detail(why)),
			 from_model ?
			 errhint("The model's own provider list (onnx_set_model_providers) asks for cuda; "
					 "with onnx.provider_fallback = notice it runs on the CPU instead.") :
			 errhint("Set onnx.provider_fallback to notice to run on the CPU instead, "
					 "or remove cuda from onnx.providers.")));
}

void
OnnxReportFallback(const char *requested, const char *effective, const char *reason)
{
	MemoryContext old;
	char	   *key;
	ListCell   *lc;

	if (reason == NULL)
		return;
	key = psprintf("%s\n%s", requested ? requested : "", reason);
	foreach(lc, warned_fallbacks)
		if (strcmp((const char *) lfirst(lc), key) == 0)
			return;

	/* remember first: should the client be gone, the NOTICE is not retried */
	old = MemoryContextSwitchTo(TopMemoryContext);
	if (list_length(warned_fallbacks) >= ONNX_FALLBACK_WARNED_MAX)
	{
		pfree(linitial(warned_fallbacks));
		warned_fallbacks = list_delete_first(warned_fallbacks);
	}
	warned_fallbacks = lappend(warned_fallbacks, pstrdup(key));
	MemoryContextSwitchTo(old);

	ereport(NOTICE,
			(errmsg("execution provider \"cuda\" is not available, using \"%s\"",
					effective ? effective : "cpu"),
			 errdetail("%s", reason_detail(reason))));
}

/* text or NULL for a possibly empty or non-UTF-8 engine string */
static Datum
text_or_null(const char *s, bool *isnull)
{
	if (s == NULL || s[0] == '\0' || !OnnxUtf8Valid(s, strlen(s)))
	{
		*isnull = true;
		return (Datum) 0;
	}
	*isnull = false;
	return CStringGetTextDatum(s);
}

/*
 * onnx_model_placement(model text) -> TABLE (ordinal, name, op_type, provider)
 *
 * Where each node of this backend's session for the model runs: the
 * optimized graph in execution order, as built with the current settings
 * (the session is built or revalidated first, like a call would).
 */
Datum
onnx_model_placement(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	OnnxCacheEntry *entry;
	ox_session *s;
	int			n;

	InitMaterializedSRF(fcinfo, 0);
	entry = OnnxCacheAcquire(name);
	s = OnnxCacheSession(entry);
	if (s == NULL)
		elog(ERROR, "no session for model \"%s\"", name);

	/*
	 * Nothing below can free the session: invalidations only mark entries
	 * stale, and only OnnxCacheAcquire frees or evicts.
	 */
	n = ox_session_node_count(s);
	for (int i = 0; i < n; i++)
	{
		const char *node = NULL;
		const char *op = NULL;
		const char *provider = NULL;
		ox_status	st;
		Datum		values[4];
		bool		nulls[4] = {0};

		ox_status_clear(&st);
		if (ox_session_node_info(s, i, &node, &op, &provider, &st) != OX_OK)
			OnnxReportStatus(&st, ONNX_PHASE_SESSION, name);
		values[0] = Int32GetDatum(i + 1);
		values[1] = text_or_null(node, &nulls[1]);
		values[2] = text_or_null(op, &nulls[2]);
		values[3] = text_or_null(provider, &nulls[3]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
