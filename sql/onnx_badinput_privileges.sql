-- Privileges (docs/reliability.md has the model these tests pin down):
--  - the catalog table is reachable only through the functions (and the
--    onnx_models view, which shows no bytes);
--  - loading from a server file needs superuser or pg_read_server_files;
--  - whoever loads a model owns it; replacing, dropping and configuring it
--    need the privileges of its owner (or superuser);
--  - who may load, run or inspect models at all is EXECUTE on the functions,
--    which can be granted and revoked;
--  - the functions run as the caller (no SECURITY DEFINER), and what they
--    run internally is schema-qualified, so a caller's search_path cannot
--    redirect it.
\getenv abs_srcdir PG_ABS_SRCDIR
\set bad :abs_srcdir '/test/models/bad/'
\set models :abs_srcdir '/test/models/'
\set sqlstate '\\echo SQLSTATE :LAST_ERROR_SQLSTATE'
SELECT pg_postmaster_start_time() AS start_time \gset
SELECT pg_read_binary_file(:'bad' || 'ok_base.onnx') AS base_bytes \gset
SELECT pg_read_binary_file(:'models' || 'logreg.onnx') AS logreg_bytes \gset

CREATE ROLE regress_onnx_alice;
CREATE ROLE regress_onnx_bob;
CREATE ROLE regress_onnx_carol;
CREATE ROLE regress_onnx_team NOLOGIN;
GRANT regress_onnx_team TO regress_onnx_carol;
GRANT USAGE ON SCHEMA public TO regress_onnx_alice, regress_onnx_bob, regress_onnx_carol;

-- ---- no SECURITY DEFINER, no function with its own search_path ----
SELECT p.proname, p.prosecdef, p.proconfig
  FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
  JOIN pg_extension e ON d.refclassid = 'pg_extension'::regclass AND d.refobjid = e.oid
 WHERE e.extname = 'onnx_pg' AND (p.prosecdef OR p.proconfig IS NOT NULL);
-- the objects of the extension live in its schema
SELECT DISTINCT n.nspname
  FROM pg_depend d JOIN pg_extension e ON d.refobjid = e.oid AND e.extname = 'onnx_pg'
  JOIN pg_class c ON d.classid = 'pg_class'::regclass AND d.objid = c.oid
  JOIN pg_namespace n ON c.relnamespace = n.oid
 WHERE d.deptype = 'e';

-- ---- the catalog table is not for users ----
SET ROLE regress_onnx_alice;
SELECT count(*) FROM onnx_model_store;
:sqlstate
INSERT INTO onnx_model_store (name, model, sha256, size_bytes, owner)
  VALUES ('forged', :'base_bytes', sha256(:'base_bytes'), 145, 'regress_onnx_alice');
:sqlstate
UPDATE onnx_model_store SET model = '\x00';
:sqlstate
DELETE FROM onnx_model_store;
:sqlstate
TRUNCATE onnx_model_store;
:sqlstate
-- the view is public and shows no bytes
SELECT count(*) >= 0 AS view_ok FROM onnx_models;
SELECT count(*) AS bytes_columns FROM information_schema.columns
 WHERE table_name = 'onnx_models' AND data_type = 'bytea';
RESET ROLE;

-- ---- loading from server files ----
SET ROLE regress_onnx_alice;
SELECT onnx_load_model_file('alice_file', :'bad' || 'ok_base.onnx');
:sqlstate
-- (whatever the path: nothing is read before the privilege check)
SELECT onnx_load_model_file('alice_file', '/etc/passwd');
:sqlstate
RESET ROLE;
GRANT pg_read_server_files TO regress_onnx_alice;
SET ROLE regress_onnx_alice;
SELECT onnx_load_model_file('alice_file', :'bad' || 'ok_base.onnx');
RESET ROLE;
REVOKE pg_read_server_files FROM regress_onnx_alice;

-- ---- ownership: whoever loads a model owns it ----
SET ROLE regress_onnx_alice;
SELECT onnx_load_model('alice_model', :'base_bytes');
RESET ROLE;
SET ROLE regress_onnx_team;
SELECT onnx_load_model('team_model', :'base_bytes');
RESET ROLE;
SELECT name, owner FROM onnx_models ORDER BY name;

-- bob may use alice's model ...
SET ROLE regress_onnx_bob;
SELECT onnx_predict('alice_model', '{1,2,3,4}');
-- ... but not replace, drop or configure it
SELECT onnx_load_model('alice_model', :'logreg_bytes', replace => true);
:sqlstate
SELECT onnx_load_model('alice_model', :'logreg_bytes');
:sqlstate
SELECT onnx_drop_model('alice_model');
:sqlstate
SELECT onnx_drop_model('alice_model', if_exists => true);
:sqlstate
SELECT onnx_set_model_providers('alice_model', ARRAY['cpu']);
:sqlstate
SELECT onnx_set_model_providers('alice_model', NULL);
:sqlstate
-- nor the team's
SELECT onnx_load_model('team_model', :'logreg_bytes', replace => true);
:sqlstate
SELECT onnx_drop_model('team_model');
:sqlstate
RESET ROLE;
-- a member of the owning role may
SET ROLE regress_onnx_carol;
SELECT onnx_load_model('team_model', :'base_bytes', replace => true);
SELECT onnx_set_model_providers('team_model', ARRAY['cpu']);
RESET ROLE;
-- and so may a superuser
SELECT onnx_load_model('alice_model', :'base_bytes', replace => true);
-- the failed attempts changed nothing: versions count the successful replacements
SELECT name, version, owner, providers FROM onnx_models ORDER BY name;

-- ---- EXECUTE on the functions decides who may run models at all ----
REVOKE EXECUTE ON FUNCTION onnx_predict(text, "any") FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION onnx_run(text, jsonb) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION onnx_load_model(text, bytea, boolean) FROM PUBLIC;
SET ROLE regress_onnx_bob;
SELECT onnx_predict('alice_model', '{1,2,3,4}');
:sqlstate
SELECT onnx_run('alice_model', '{"X": [[1, 2, 3, 4]]}');
:sqlstate
SELECT onnx_load_model('bob_model', :'base_bytes');
:sqlstate
RESET ROLE;
GRANT EXECUTE ON FUNCTION onnx_predict(text, "any") TO regress_onnx_bob;
SET ROLE regress_onnx_bob;
SELECT onnx_predict('alice_model', '{1,2,3,4}');
SELECT onnx_run('alice_model', '{"X": [[1, 2, 3, 4]]}');
:sqlstate
RESET ROLE;
-- back to the defaults
REVOKE EXECUTE ON FUNCTION onnx_predict(text, "any") FROM regress_onnx_bob;
GRANT EXECUTE ON FUNCTION onnx_predict(text, "any") TO PUBLIC;
GRANT EXECUTE ON FUNCTION onnx_run(text, jsonb) TO PUBLIC;
GRANT EXECUTE ON FUNCTION onnx_load_model(text, bytea, boolean) TO PUBLIC;
-- administration functions are not for everyone
SET ROLE regress_onnx_bob;
SELECT onnx_stat_reset();
:sqlstate
RESET ROLE;

-- ---- a caller's search_path cannot redirect what the functions run ----
CREATE SCHEMA regress_onnx_evil;
GRANT USAGE, CREATE ON SCHEMA regress_onnx_evil TO regress_onnx_bob;
SET ROLE regress_onnx_bob;
CREATE FUNCTION regress_onnx_evil.trap_texteq(text, text) RETURNS boolean
  LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'trap: = (text, text) called'; END $$;
CREATE OPERATOR regress_onnx_evil.= (LEFTARG = text, RIGHTARG = text,
  FUNCTION = regress_onnx_evil.trap_texteq);
CREATE FUNCTION regress_onnx_evil.trap_int8pl(bigint, integer) RETURNS bigint
  LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'trap: + called'; END $$;
CREATE OPERATOR regress_onnx_evil.+ (LEFTARG = bigint, RIGHTARG = integer,
  FUNCTION = regress_onnx_evil.trap_int8pl);
CREATE FUNCTION regress_onnx_evil.now() RETURNS timestamptz
  LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'trap: now() called'; END $$;
CREATE FUNCTION regress_onnx_evil.encode(bytea, text) RETURNS text
  LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'trap: encode() called'; END $$;
CREATE TABLE regress_onnx_evil.onnx_model_store (name text, model bytea);
SET search_path = regress_onnx_evil, public;
SELECT onnx_load_model('bob_model', :'base_bytes');
SELECT onnx_load_model('bob_model', :'logreg_bytes', replace => true);
SELECT onnx_set_model_providers('bob_model', ARRAY['cpu']);
SELECT onnx_predict('bob_model', '{5.1,3.5,1.4,0.2}');
SELECT length(onnx_export_model('bob_model')) AS exported_bytes;
SELECT name, version, sha256 = pg_catalog.encode(pg_catalog.sha256(:'logreg_bytes'), 'hex') AS sha_ok
  FROM public.onnx_models WHERE name = 'bob_model';
SELECT onnx_drop_model('bob_model');
SELECT count(*) AS evil_table_untouched FROM regress_onnx_evil.onnx_model_store;
RESET search_path;
RESET ROLE;

-- ---- a model whose owner role is dropped ----
-- Model ownership is a column, not a dependency PostgreSQL tracks: DROP ROLE
-- does not refuse, DROP OWNED and REASSIGN OWNED do not cover models, and
-- the model is left with a dangling owner that only superusers have the
-- privileges of (see docs/reliability.md).
CREATE ROLE regress_onnx_gone;
GRANT USAGE ON SCHEMA public TO regress_onnx_gone;
SET ROLE regress_onnx_gone;
SELECT onnx_load_model('orphan', :'base_bytes');
RESET ROLE;
REVOKE USAGE ON SCHEMA public FROM regress_onnx_gone;
DROP ROLE regress_onnx_gone;
SELECT name, owner::text ~ '^[0-9]+$' AS dangling_owner FROM onnx_models WHERE name = 'orphan';
SET ROLE regress_onnx_bob;
SELECT onnx_drop_model('orphan');
:sqlstate
RESET ROLE;

-- ---- clean up ----
SELECT onnx_drop_model(name) FROM onnx_models ORDER BY name;
DROP SCHEMA regress_onnx_evil CASCADE;
REVOKE USAGE ON SCHEMA public FROM regress_onnx_alice, regress_onnx_bob, regress_onnx_carol;
DROP ROLE regress_onnx_alice, regress_onnx_bob, regress_onnx_carol, regress_onnx_team;
SELECT pg_postmaster_start_time() = :'start_time' AS server_never_restarted;

-- ---- the install script cannot be redirected either ----
-- CREATE EXTENSION runs the script with search_path = the target schema
-- (pg_catalog implicitly first).  An object planted there that matches an
-- expression better than pg_catalog's does (numeric * bigint: pg_catalog
-- has only numeric * numeric) would be bound into the extension's views
-- and constraints, and run as whoever reads them.  The script names every
-- operator and function with its schema: nothing of the extension may
-- depend on a planted object.
SELECT current_database() AS regress_db \gset
CREATE DATABASE regress_onnx_install;
\c regress_onnx_install
SET client_min_messages = warning;
CREATE SCHEMA trap;
CREATE FUNCTION trap.trap_fn() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NULL; END$$;
CREATE FUNCTION trap.trap_num_i8(numeric, bigint) RETURNS numeric LANGUAGE sql AS 'SELECT 0::numeric';
CREATE FUNCTION trap.trap_i8_i4(bigint, integer) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE FUNCTION trap.trap_i4_i4(integer, integer) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE FUNCTION trap.trap_text_text(text, text) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE FUNCTION trap.trap_oid_oid(oid, oid) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE OPERATOR trap.* (LEFTARG = numeric, RIGHTARG = bigint, FUNCTION = trap.trap_num_i8);
CREATE OPERATOR trap./ (LEFTARG = numeric, RIGHTARG = bigint, FUNCTION = trap.trap_num_i8);
CREATE OPERATOR trap.> (LEFTARG = bigint, RIGHTARG = integer, FUNCTION = trap.trap_i8_i4);
CREATE OPERATOR trap.<= (LEFTARG = integer, RIGHTARG = integer, FUNCTION = trap.trap_i4_i4);
CREATE OPERATOR trap.= (LEFTARG = integer, RIGHTARG = integer, FUNCTION = trap.trap_i4_i4);
CREATE OPERATOR trap.<> (LEFTARG = text, RIGHTARG = text, FUNCTION = trap.trap_text_text);
CREATE OPERATOR trap.= (LEFTARG = oid, RIGHTARG = oid, FUNCTION = trap.trap_oid_oid);
CREATE FUNCTION trap.now() RETURNS timestamptz LANGUAGE sql AS 'SELECT ''2000-01-01''::timestamptz';
CREATE FUNCTION trap.octet_length(text) RETURNS integer LANGUAGE sql AS 'SELECT 0';
CREATE FUNCTION trap.round(numeric, integer) RETURNS numeric LANGUAGE sql AS 'SELECT 0::numeric';
CREATE EXTENSION onnx_pg SCHEMA trap;
RESET client_min_messages;
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS extension_object,
       pg_describe_object(d.refclassid, d.refobjid, 0) AS uses_planted
  FROM pg_depend d
 WHERE d.classid <> 'pg_operator'::regclass	-- (the planted operators use their functions)
   AND ((d.refclassid = 'pg_proc'::regclass AND d.refobjid IN
           (SELECT oid FROM pg_proc WHERE pronamespace = 'trap'::regnamespace
               AND (proname LIKE 'trap\_%' OR proname IN ('now', 'octet_length', 'round'))))
        OR (d.refclassid = 'pg_operator'::regclass AND d.refobjid IN
           (SELECT oid FROM pg_operator WHERE oprnamespace = 'trap'::regnamespace)))
 ORDER BY 1, 2;
-- and the extension works there
SELECT trap.onnx_load_model('m', :'logreg_bytes') AS version,
       trap.onnx_predict('m', '{5.1,3.5,1.4,0.2}'::real[]) AS prediction;
\c :regress_db
DROP DATABASE regress_onnx_install;
