/*
 * catalog.c
 *	  The model table (@extschema@.onnx_model_store): lookups, loading,
 *	  replacing, dropping, exporting.
 *
 * Reads go straight to the table through its primary key index, with the
 * latest snapshot (like the system caches), and without privilege checks on
 * the table: users never get direct access to it, the SQL functions are the
 * interface.  The cheap lookup used to revalidate cached sessions reads
 * version, sha256 and providers and never touches (detoasts) the model bytes.
 *
 * Writes go through SPI as the table's owner (the role that created the
 * extension), after the functions here have checked the caller's right to
 * do them: anyone allowed to EXECUTE onnx_load_model may add a model and
 * becomes its owner; replacing, dropping, exporting and changing the
 * provider override need the privileges of the owner role.  Every query is
 * schema-qualified and names its operators with OPERATOR(pg_catalog.=), so
 * that a caller's search_path cannot redirect it.
 *
 * Every write also invalidates the table's relcache entry, which is how
 * other backends' session caches learn that an entry may be stale (cache.c).
 */
#include "onnx_pg.h"

#include <sys/stat.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "common/cryptohash.h"
#include "common/sha2.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/formatting.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(onnx_load_model);
PG_FUNCTION_INFO_V1(onnx_load_model_file);
PG_FUNCTION_INFO_V1(onnx_drop_model);
PG_FUNCTION_INFO_V1(onnx_export_model);
PG_FUNCTION_INFO_V1(onnx_set_model_providers);
PG_FUNCTION_INFO_V1(onnx_model_store_invalidate);

/* onnx_load_model_file reads in chunks of this many bytes */
#define ONNX_READ_CHUNK ((size_t) 16 * 1024 * 1024)

/* where the table is; forgotten on any invalidation of it */
static Oid	store_relid = InvalidOid;
static char *store_qualname = NULL;	/* quoted schema.table */
static AttrNumber att_name,
			att_version,
			att_model,
			att_sha256,
			att_providers;

/* the schema of an extension (get_extension_schema is not exported in 15) */
static Oid
extension_schema(Oid extoid)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			nsp = InvalidOid;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(extoid));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
		nsp = ((Form_pg_extension) GETSTRUCT(tup))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return nsp;
}

Oid
OnnxStoreRelid(void)
{
	Oid			extoid;
	Oid			nsp;
	Oid			relid;
	char	   *nspname;

	if (OidIsValid(store_relid))
		return store_relid;

	extoid = get_extension_oid(ONNX_EXTENSION_NAME, true);
	if (!OidIsValid(extoid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"%s\" is not installed in this database",
						ONNX_EXTENSION_NAME)));
	nsp = extension_schema(extoid);
	relid = get_relname_relid(ONNX_STORE_TABLE, nsp);
	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("table \"%s\" of extension \"%s\" does not exist",
						ONNX_STORE_TABLE, ONNX_EXTENSION_NAME)));
	nspname = get_namespace_name(nsp);

	att_name = get_attnum(relid, "name");
	att_version = get_attnum(relid, "version");
	att_model = get_attnum(relid, "model");
	att_sha256 = get_attnum(relid, "sha256");
	att_providers = get_attnum(relid, "providers");
	if (att_name == InvalidAttrNumber || att_version == InvalidAttrNumber ||
		att_model == InvalidAttrNumber || att_sha256 == InvalidAttrNumber ||
		att_providers == InvalidAttrNumber)
		elog(ERROR, "table \"%s\" lacks expected columns", ONNX_STORE_TABLE);

	if (store_qualname)
		pfree(store_qualname);
	store_qualname = MemoryContextStrdup(TopMemoryContext,
										 quote_qualified_identifier(nspname, ONNX_STORE_TABLE));
	store_relid = relid;
	return relid;
}

Oid
OnnxStoreRelidCached(void)
{
	return store_relid;
}

void
OnnxCatalogForget(void)
{
	store_relid = InvalidOid;
}

/*
 * A name no model can have (loading refuses it) is reported as such
 * wherever a model is named: an empty or overlong name then says why, and
 * a name of any length is not echoed whole into the message and the log.
 */
static void
check_model_name(const char *name)
{
	size_t		len = strlen(name);

	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model name must not be empty")));
	if (len > ONNX_MAX_NAME_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_NAME_TOO_LONG),
				 errmsg("model name is too long"),
				 errdetail("Model names may have up to %d bytes; this one has %zu.",
						   ONNX_MAX_NAME_LEN, len)));
}

void
OnnxReportUnknownModel(const char *name)
{
	check_model_name(name);
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("model \"%s\" does not exist", name),
			 errhint("Load it with onnx_load_model or onnx_load_model_file; onnx_models lists the loaded models.")));
	pg_unreachable();
}

/* a text[] datum as a normalized provider string, or NULL */
static char *
providers_from_array(Datum d)
{
	ArrayType  *arr = DatumGetArrayTypeP(d);
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	StringInfoData buf;
	char	   *bad;
	char	   *norm;

	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	initStringInfo(&buf);
	for (int i = 0; i < n; i++)
	{
		char	   *pname;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("provider list must not contain null values")));

		pname = TextDatumGetCString(elems[i]);
		pname = str_tolower(pname, strlen(pname), DEFAULT_COLLATION_OID);
		appendStringInfo(&buf, "%s%s", i ? "," : "", quote_identifier(pname));
	}
	if (n == 0)
		return NULL;
	norm = OnnxNormalizeProviders(buf.data, &bad);
	if (norm == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized execution provider \"%s\"", bad),
				 errdetail("Valid execution providers are: %s.", ONNX_VALID_PROVIDERS)));
	return norm;
}

/*
 * Find a model's row with the latest snapshot.  Fills key; when bytes is not
 * NULL, also returns the detoasted model bytes.
 */
static bool
scan_model(const char *name, OnnxModelKey *key, bytea **bytes)
{
	Oid			relid = OnnxStoreRelid();
	Relation	rel;
	ScanKeyData skey;
	SysScanDesc scan;
	Snapshot	snap;
	HeapTuple	tup;
	bool		found = false;

	rel = table_open(relid, AccessShareLock);
	/*
	 * The latest committed row.  During a parallel query (workers, and the
	 * leader while they run) a new latest snapshot may not be taken; a
	 * catalog snapshot is as fresh and allowed.
	 */
	snap = RegisterSnapshot(IsInParallelMode() ? GetCatalogSnapshot(relid) : GetLatestSnapshot());
	ScanKeyInit(&skey, att_name, BTEqualStrategyNumber, F_TEXTEQ,
				CStringGetTextDatum(name));
	scan = systable_beginscan(rel, RelationGetPrimaryKeyIndex(rel), true, snap, 1, &skey);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		TupleDesc	desc = RelationGetDescr(rel);
		bool		isnull;
		Datum		d;

		found = true;
		memset(key, 0, sizeof(*key));
		key->version = DatumGetInt64(heap_getattr(tup, att_version, desc, &isnull));
		d = heap_getattr(tup, att_sha256, desc, &isnull);
		if (!isnull)
		{
			bytea	   *sha = DatumGetByteaPP(d);

			if (VARSIZE_ANY_EXHDR(sha) == ONNX_SHA256_LEN)
				memcpy(key->sha256, VARDATA_ANY(sha), ONNX_SHA256_LEN);
		}
		d = heap_getattr(tup, att_providers, desc, &isnull);
		key->providers = isnull ? NULL : providers_from_array(d);
		if (bytes)
		{
			d = heap_getattr(tup, att_model, desc, &isnull);
			if (isnull)
				elog(ERROR, "model \"%s\" has no bytes", name);
			*bytes = DatumGetByteaPCopy(d);
		}
	}
	systable_endscan(scan);
	UnregisterSnapshot(snap);
	table_close(rel, AccessShareLock);
	return found;
}

bool
OnnxCatalogLookup(const char *name, OnnxModelKey *key)
{
	return scan_model(name, key, NULL);
}

bytea *
OnnxCatalogFetch(const char *name, OnnxModelKey *key)
{
	bytea	   *bytes = NULL;

	if (!scan_model(name, key, &bytes))
		OnnxReportUnknownModel(name);
	return bytes;
}

/* ---- writes ---- */

typedef struct WriteState
{
	Oid			relid;
	Oid			caller;
	Oid			save_userid;
	int			save_sec;
} WriteState;

static void
begin_write(WriteState *ws)
{
	Relation	rel;
	Oid			owner;

	ws->relid = OnnxStoreRelid();
	rel = table_open(ws->relid, RowExclusiveLock);
	owner = rel->rd_rel->relowner;
	table_close(rel, NoLock);

	ws->caller = GetUserId();
	GetUserIdAndSecContext(&ws->save_userid, &ws->save_sec);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	SetUserIdAndSecContext(owner, ws->save_sec | SECURITY_LOCAL_USERID_CHANGE);
}

static void
end_write(WriteState *ws)
{
	SetUserIdAndSecContext(ws->save_userid, ws->save_sec);
	SPI_finish();
	/* every backend's cached sessions for this table get rechecked */
	CacheInvalidateRelcacheByRelid(ws->relid);
}

/*
 * Lock a model's row; returns false when there is none, else its owner.
 * Must run between begin_write and end_write.
 */
static bool
lock_model_row(const char *name, Oid *owner)
{
	char	   *q;
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1];
	int			rc;
	bool		isnull;

	q = psprintf("SELECT owner::pg_catalog.oid FROM %s WHERE name OPERATOR(pg_catalog.=) $1 FOR UPDATE",
				 store_qualname);
	args[0] = CStringGetTextDatum(name);
	rc = SPI_execute_with_args(q, 1, argtypes, args, NULL, false, 1);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not lock model row: %s", SPI_result_code_string(rc));
	if (SPI_processed == 0)
		return false;
	*owner = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0],
											SPI_tuptable->tupdesc, 1, &isnull));
	return true;
}

static void
check_owner(WriteState *ws, const char *name, Oid owner, const char *action)
{
	if (!has_privs_of_role(ws->caller, owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of model \"%s\"", name),
				 errdetail("Only members of role \"%s\" may %s this model.",
						   GetUserNameFromId(owner, true) ? GetUserNameFromId(owner, true) : "?",
						   action)));
}

static void
sha256_bytes(const void *data, size_t len, uint8 *out)
{
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);

	if (ctx == NULL ||
		pg_cryptohash_init(ctx) < 0 ||
		pg_cryptohash_update(ctx, data, len) < 0 ||
		pg_cryptohash_final(ctx, out, PG_SHA256_DIGEST_LENGTH) < 0)
		elog(ERROR, "could not compute SHA-256: %s", pg_cryptohash_error(ctx));
	pg_cryptohash_free(ctx);
}

/*
 * Validate model bytes fully: parse, check every operator has a kernel, and
 * build (then free) a CPU session, so that what loads also runs.  Returns
 * the facts stored with the model.
 */
typedef struct ModelFacts
{
	int64		ir_version;
	Jsonb	   *opsets;
	Jsonb	   *metadata;
	char	   *producer;
} ModelFacts;

static void
validate_model(const char *name, bytea *bytes, ModelFacts *facts)
{
	OnnxGuard  *guard = OnnxGuardCreate(CurrentMemoryContext);
	ox_session_options opts;
	ox_status	st;
	ox_session *s;

	guard->model = OnnxParseModel(VARDATA_ANY(bytes), VARSIZE_ANY_EXHDR(bytes), name,
								  OnnxMaxModelBytes());
	facts->ir_version = guard->model->ir_version;
	facts->opsets = OnnxOpsetsJsonb(guard->model);
	facts->metadata = OnnxMetadataJsonb(guard->model);
	facts->producer = OnnxProducerString(guard->model);

	memset(&opts, 0, sizeof(opts));
	opts.providers = "cpu";
	opts.intra_op_threads = 1;
	opts.opt_level = (ox_opt_level) onnx_graph_optimization_level;
	opts.should_abort = OnnxShouldAbort;

	ox_status_clear(&st);
	s = ox_session_create(guard->model, &opts, &st);
	guard->model = NULL;		/* the session call owns it now */
	if (s == NULL)
	{
		if (st.code == OX_CANCELED)
			OnnxServiceCancel(name);
		OnnxReportStatus(&st, ONNX_PHASE_SESSION, name);
	}
	ox_session_free(s);
}

static int64
load_model_bytes(const char *name, bytea *bytes, bool replace, Jsonb *lineage)
{
	ModelFacts	facts;
	uint8		sha[ONNX_SHA256_LEN];
	bytea	   *shab;
	WriteState	ws;
	Oid			owner;
	int64		version = 0;
	Oid			argtypes[10] = {TEXTOID, BYTEAOID, BYTEAOID, INT8OID, INT8OID,
	JSONBOID, TEXTOID, JSONBOID, OIDOID, JSONBOID};
	Datum		args[10];
	char		nulls[10];
	char	   *q;
	int			rc;
	bool		isnull;
	size_t		len = VARSIZE_ANY_EXHDR(bytes);

	check_model_name(name);
	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid ONNX model \"%s\"", name),
				 errdetail("The model is empty (0 bytes).")));
	OnnxCheckModelSize(len, name, NULL);

	OnnxProgressPhase("validating", 0, NULL);
	validate_model(name, bytes, &facts);
	OnnxProgressPhase("hashing", 0, NULL);
	sha256_bytes(VARDATA_ANY(bytes), len, sha);
	shab = palloc(VARHDRSZ + ONNX_SHA256_LEN);
	SET_VARSIZE(shab, VARHDRSZ + ONNX_SHA256_LEN);
	memcpy(VARDATA(shab), sha, ONNX_SHA256_LEN);

	OnnxProgressPhase("storing", 0, NULL);
	begin_write(&ws);

	args[0] = CStringGetTextDatum(name);
	args[1] = PointerGetDatum(bytes);
	args[2] = PointerGetDatum(shab);
	args[3] = Int64GetDatum((int64) len);
	args[4] = Int64GetDatum(facts.ir_version);
	args[5] = JsonbPGetDatum(facts.opsets);
	args[6] = facts.producer ? CStringGetTextDatum(facts.producer) : (Datum) 0;
	args[7] = JsonbPGetDatum(facts.metadata);
	args[8] = ObjectIdGetDatum(ws.caller);
	args[9] = lineage ? JsonbPGetDatum(lineage) : (Datum) 0;
	memset(nulls, ' ', sizeof(nulls));
	if (!facts.producer)
		nulls[6] = 'n';
	if (!lineage)
		nulls[9] = 'n';

	for (int attempt = 0; attempt < 2 && version == 0; attempt++)
	{
		if (lock_model_row(name, &owner))
		{
			if (!replace)
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_OBJECT),
						 errmsg("model \"%s\" already exists", name),
						 errhint("Pass replace => true to replace it.")));
			check_owner(&ws, name, owner, "replace");
			q = psprintf("UPDATE %s SET model = $2, sha256 = $3, size_bytes = $4, "
						 "ir_version = $5, opsets = $6, producer = $7, metadata = $8, "
						 "lineage = $10, version = version OPERATOR(pg_catalog.+) 1, "
						 "updated_at = pg_catalog.now() "
						 "WHERE name OPERATOR(pg_catalog.=) $1 RETURNING version",
						 store_qualname);
			rc = SPI_execute_with_args(q, 10, argtypes, args, nulls, false, 0);
			if (rc != SPI_OK_UPDATE_RETURNING)
				elog(ERROR, "could not update model: %s", SPI_result_code_string(rc));
		}
		else
		{
			q = psprintf("INSERT INTO %s (name, version, model, sha256, size_bytes, ir_version, "
						 "opsets, producer, metadata, owner, lineage) "
						 "VALUES ($1, 1, $2, $3, $4, $5, $6, $7, $8, $9::pg_catalog.regrole, $10) "
						 "ON CONFLICT (name) DO NOTHING RETURNING version",
						 store_qualname);
			rc = SPI_execute_with_args(q, 10, argtypes, args, nulls, false, 0);
			if (rc != SPI_OK_INSERT_RETURNING)
				elog(ERROR, "could not insert model: %s", SPI_result_code_string(rc));
		}
		if (SPI_processed == 1)
			version = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
												  SPI_tuptable->tupdesc, 1, &isnull));
		/* else: inserted concurrently by someone else; look again */
	}
	if (version == 0)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not load model \"%s\" because of a concurrent change", name)));

	end_write(&ws);
	return version;
}

Datum
onnx_load_model(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	bytea	   *bytes = PG_GETARG_BYTEA_P(1);
	bool		replace = PG_GETARG_BOOL(2);
	int64		version;

	OnnxProgressBegin("load", name);
	version = load_model_bytes(name, bytes, replace, NULL);
	OnnxProgressEnd();
	PG_RETURN_INT64(version);
}

int64
OnnxCatalogStoreModel(const char *name, bytea *bytes, bool replace, Jsonb *lineage)
{
	return load_model_bytes(name, bytes, replace, lineage);
}

Datum
onnx_load_model_file(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *path = text_to_cstring(PG_GETARG_TEXT_PP(1));
	bool		replace = PG_GETARG_BOOL(2);
	FILE	   *f;
	struct stat stbuf;
	bytea	   *bytes;
	size_t		nread;
	int64		version;

	if (!has_privs_of_role(GetUserId(), ROLE_PG_READ_SERVER_FILES))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to load a model from a server file"),
				 errdetail("Only superusers and roles with privileges of the \"pg_read_server_files\" role may load model files."),
				 errhint("Anyone may load a model's bytes with onnx_load_model.")));
	check_model_name(name);

	f = AllocateFile(path, PG_BINARY_R);
	if (f == NULL)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open model file \"%s\": %m", path)));
	if (fstat(fileno(f), &stbuf) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not stat model file \"%s\": %m", path)));
	if (S_ISDIR(stbuf.st_mode))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is a directory", path)));
	if ((uint64) stbuf.st_size > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("model file \"%s\" is too large", path),
				 errdetail("Models of up to 1 GB can be stored; the file has %lld bytes.",
						   (long long) stbuf.st_size)));
	/* before reading it */
	OnnxCheckModelSize((uint64) stbuf.st_size, name, path);
	bytes = palloc(VARHDRSZ + stbuf.st_size);
	OnnxProgressBegin("load", name);
	OnnxProgressPhase("reading file", stbuf.st_size, "bytes");
	/* in chunks, for progress reports and cancellation */
	nread = 0;
	while (nread < (size_t) stbuf.st_size)
	{
		size_t		want = Min((size_t) stbuf.st_size - nread, ONNX_READ_CHUNK);
		size_t		got = fread(VARDATA(bytes) + nread, 1, want, f);

		nread += got;
		if (got < want)
			break;
		OnnxProgressUpdate(nread);
		CHECK_FOR_INTERRUPTS();
	}
	if (ferror(f))
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read model file \"%s\": %m", path)));
	FreeFile(f);
	SET_VARSIZE(bytes, VARHDRSZ + nread);

	version = load_model_bytes(name, bytes, replace, NULL);
	OnnxProgressEnd();
	PG_RETURN_INT64(version);
}

Datum
onnx_drop_model(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	bool		if_exists = PG_NARGS() > 1 ? PG_GETARG_BOOL(1) : false;
	WriteState	ws;
	Oid			owner;
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1];
	int			rc;

	/* IF EXISTS skips models that could exist, not invalid names */
	check_model_name(name);
	begin_write(&ws);
	if (!lock_model_row(name, &owner))
	{
		SetUserIdAndSecContext(ws.save_userid, ws.save_sec);
		SPI_finish();
		if (if_exists)
		{
			ereport(NOTICE,
					(errmsg("model \"%s\" does not exist, skipping", name)));
			PG_RETURN_BOOL(false);
		}
		OnnxReportUnknownModel(name);
	}
	check_owner(&ws, name, owner, "drop");
	args[0] = CStringGetTextDatum(name);
	rc = SPI_execute_with_args(psprintf("DELETE FROM %s WHERE name OPERATOR(pg_catalog.=) $1",
										store_qualname),
							   1, argtypes, args, NULL, false, 0);
	if (rc != SPI_OK_DELETE)
		elog(ERROR, "could not delete model: %s", SPI_result_code_string(rc));
	end_write(&ws);
	PG_RETURN_BOOL(true);
}

Datum
onnx_set_model_providers(PG_FUNCTION_ARGS)
{
	char	   *name;
	char	   *norm = NULL;
	WriteState	ws;
	Oid			owner;
	Oid			argtypes[2] = {TEXTOID, TEXTARRAYOID};
	Datum		args[2];
	char		nulls[2] = {' ', ' '};
	int			rc;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("model name must not be null")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (!PG_ARGISNULL(1))
		norm = providers_from_array(PG_GETARG_DATUM(1));

	begin_write(&ws);
	if (!lock_model_row(name, &owner))
		OnnxReportUnknownModel(name);
	check_owner(&ws, name, owner, "configure");
	args[0] = CStringGetTextDatum(name);
	if (norm)
		args[1] = DirectFunctionCall2Coll(text_to_array, DEFAULT_COLLATION_OID,
									  CStringGetTextDatum(norm),
									  CStringGetTextDatum(","));
	else
		nulls[1] = 'n';
	rc = SPI_execute_with_args(psprintf("UPDATE %s SET providers = $2, updated_at = pg_catalog.now() "
										"WHERE name OPERATOR(pg_catalog.=) $1",
										store_qualname),
							   2, argtypes, args, nulls, false, 0);
	if (rc != SPI_OK_UPDATE)
		elog(ERROR, "could not update model: %s", SPI_result_code_string(rc));
	end_write(&ws);
	PG_RETURN_VOID();
}

Datum
onnx_export_model(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	OnnxModelKey key;
	bytea	   *bytes;

	bytes = OnnxCatalogFetch(name, &key);
	PG_RETURN_BYTEA_P(bytes);
}

/*
 * Statement trigger on the table: direct changes (by its owner, or a
 * restore) invalidate cached sessions like the functions above do.
 */
Datum
onnx_model_store_invalidate(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "onnx_model_store_invalidate: not called by trigger manager");
	CacheInvalidateRelcache(trigdata->tg_relation);
	return PointerGetDatum(NULL);
}
