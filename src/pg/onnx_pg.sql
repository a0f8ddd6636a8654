-- onnx_pg: run ONNX models inside SQL queries.
-- The Makefile installs this file as onnx_pg--<version>.sql.

\echo Use "CREATE EXTENSION onnx_pg" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Catalog
-- ---------------------------------------------------------------------------

CREATE TABLE @extschema@.onnx_model_store (
    name        text        PRIMARY KEY
                            CHECK (name <> '' AND octet_length(name) <= 256),
    version     bigint      NOT NULL DEFAULT 1 CHECK (version > 0),
    model       bytea       NOT NULL,
    sha256      bytea       NOT NULL CHECK (octet_length(sha256) = 32),
    size_bytes  bigint      NOT NULL,
    ir_version  bigint,
    opsets      jsonb,
    producer    text,
    owner       regrole     NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    providers   text[],
    lineage     jsonb,
    metadata    jsonb
);

-- model files are mostly incompressible floats: store them out of line
-- without pglz
ALTER TABLE @extschema@.onnx_model_store ALTER COLUMN model SET STORAGE EXTERNAL;

COMMENT ON TABLE @extschema@.onnx_model_store IS
    'ONNX models stored by onnx_pg; use the onnx_* functions to change it';

-- models are data: pg_dump includes them
SELECT pg_catalog.pg_extension_config_dump('@extschema@.onnx_model_store', '');

-- users go through the functions (and the view), never the table
REVOKE ALL ON @extschema@.onnx_model_store FROM PUBLIC;

CREATE FUNCTION @extschema@.onnx_model_store_invalidate()
    RETURNS trigger
    AS 'MODULE_PATHNAME', 'onnx_model_store_invalidate'
    LANGUAGE C;

COMMENT ON FUNCTION @extschema@.onnx_model_store_invalidate() IS
    'trigger: direct changes to onnx_model_store invalidate cached sessions in every backend';

CREATE TRIGGER onnx_model_store_invalidate
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON @extschema@.onnx_model_store
    FOR EACH STATEMENT EXECUTE FUNCTION @extschema@.onnx_model_store_invalidate();

CREATE VIEW @extschema@.onnx_models AS
    SELECT name,
           version,
           size_bytes,
           pg_catalog.encode(sha256, 'hex') AS sha256,
           ir_version,
           opsets,
           producer,
           owner,
           providers,
           created_at,
           updated_at,
           lineage,
           metadata
      FROM @extschema@.onnx_model_store;

COMMENT ON VIEW @extschema@.onnx_models IS
    'models stored by onnx_pg, without their bytes';

GRANT SELECT ON @extschema@.onnx_models TO PUBLIC;

-- ---------------------------------------------------------------------------
-- Loading, dropping, exporting
-- ---------------------------------------------------------------------------

CREATE FUNCTION @extschema@.onnx_load_model(name text, model bytea, replace boolean DEFAULT false)
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'onnx_load_model'
    LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.onnx_load_model(text, bytea, boolean) IS
    'validate and store an ONNX model under a name; replacing an existing model needs replace => true; returns the model version';

CREATE FUNCTION @extschema@.onnx_load_model_file(name text, path text, replace boolean DEFAULT false)
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'onnx_load_model_file'
    LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.onnx_load_model_file(text, text, boolean) IS
    'validate and store an ONNX model read from a file on the database server (superuser or pg_read_server_files); returns the model version';

CREATE FUNCTION @extschema@.onnx_drop_model(name text, if_exists boolean DEFAULT false)
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'onnx_drop_model'
    LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.onnx_drop_model(text, boolean) IS
    'remove a stored model (owner only); with if_exists => true a missing model is a notice, not an error';

CREATE FUNCTION @extschema@.onnx_export_model(name text)
    RETURNS bytea
    AS 'MODULE_PATHNAME', 'onnx_export_model'
    LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.onnx_export_model(text) IS
    'the stored ONNX file of a model, byte for byte';

CREATE FUNCTION @extschema@.onnx_set_model_providers(name text, providers text[])
    RETURNS void
    AS 'MODULE_PATHNAME', 'onnx_set_model_providers'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.onnx_set_model_providers(text, text[]) IS
    'set the execution providers one model uses instead of onnx.providers (owner only); NULL restores the default';

-- ---------------------------------------------------------------------------
-- Inspection
-- ---------------------------------------------------------------------------

CREATE FUNCTION @extschema@.onnx_model_info(
    model text,
    OUT ir_version bigint,
    OUT opsets jsonb,
    OUT producer_name text,
    OUT producer_version text,
    OUT domain text,
    OUT model_version bigint,
    OUT graph_name text,
    OUT doc_string text,
    OUT node_count integer,
    OUT initializer_count integer,
    OUT initializer_bytes bigint,
    OUT op_histogram jsonb,
    OUT metadata jsonb)
    AS 'MODULE_PATHNAME', 'onnx_model_info'
    LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.onnx_model_info(text) IS
    'facts about a stored model: versions, producer, graph, node and initializer counts, operator histogram, metadata';

CREATE FUNCTION @extschema@.onnx_model_info(
    model bytea,
    OUT ir_version bigint,
    OUT opsets jsonb,
    OUT producer_name text,
    OUT producer_version text,
    OUT domain text,
    OUT model_version bigint,
    OUT graph_name text,
    OUT doc_string text,
    OUT node_count integer,
    OUT initializer_count integer,
    OUT initializer_bytes bigint,
    OUT op_histogram jsonb,
    OUT metadata jsonb)
    AS 'MODULE_PATHNAME', 'onnx_model_info_bytea'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.onnx_model_info(bytea) IS
    'facts about an ONNX file given as bytes: versions, producer, graph, node and initializer counts, operator histogram, metadata';

CREATE FUNCTION @extschema@.onnx_model_inputs(model text)
    RETURNS TABLE (ordinal integer, name text, kind text, elem_type text, shape text[], type text)
    AS 'MODULE_PATHNAME', 'onnx_model_inputs'
    LANGUAGE C STABLE STRICT PARALLEL SAFE ROWS 4;

COMMENT ON FUNCTION @extschema@.onnx_model_inputs(text) IS
    'the inputs a caller feeds to a stored model: name, kind, element type, shape (symbolic dimensions by name)';

CREATE FUNCTION @extschema@.onnx_model_inputs(model bytea)
    RETURNS TABLE (ordinal integer, name text, kind text, elem_type text, shape text[], type text)
    AS 'MODULE_PATHNAME', 'onnx_model_inputs_bytea'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 4;

COMMENT ON FUNCTION @extschema@.onnx_model_inputs(bytea) IS
    'the inputs a caller feeds to an ONNX file given as bytes: name, kind, element type, shape';

CREATE FUNCTION @extschema@.onnx_model_outputs(model text)
    RETURNS TABLE (ordinal integer, name text, kind text, elem_type text, shape text[], type text)
    AS 'MODULE_PATHNAME', 'onnx_model_outputs'
    LANGUAGE C STABLE STRICT PARALLEL SAFE ROWS 4;

COMMENT ON FUNCTION @extschema@.onnx_model_outputs(text) IS
    'the outputs of a stored model: name, kind, element type, shape (symbolic dimensions by name)';

CREATE FUNCTION @extschema@.onnx_model_outputs(model bytea)
    RETURNS TABLE (ordinal integer, name text, kind text, elem_type text, shape text[], type text)
    AS 'MODULE_PATHNAME', 'onnx_model_outputs_bytea'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 4;

COMMENT ON FUNCTION @extschema@.onnx_model_outputs(bytea) IS
    'the outputs of an ONNX file given as bytes: name, kind, element type, shape';

CREATE FUNCTION @extschema@.onnx_model_nodes(model text)
    RETURNS TABLE (ordinal integer, name text, op_type text, domain text,
                   inputs text[], outputs text[], attributes jsonb)
    AS 'MODULE_PATHNAME', 'onnx_model_nodes'
    LANGUAGE C STABLE STRICT PARALLEL SAFE ROWS 50;

COMMENT ON FUNCTION @extschema@.onnx_model_nodes(text) IS
    'the nodes of a stored model in execution order: name, operator, domain, inputs, outputs, attributes';

CREATE FUNCTION @extschema@.onnx_model_nodes(model bytea)
    RETURNS TABLE (ordinal integer, name text, op_type text, domain text,
                   inputs text[], outputs text[], attributes jsonb)
    AS 'MODULE_PATHNAME', 'onnx_model_nodes_bytea'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 50;

COMMENT ON FUNCTION @extschema@.onnx_model_nodes(bytea) IS
    'the nodes of an ONNX file given as bytes in execution order: name, operator, domain, inputs, outputs, attributes';

-- ---------------------------------------------------------------------------
-- Inference
-- ---------------------------------------------------------------------------

CREATE FUNCTION @extschema@.onnx_predict(model text, features real[])
    RETURNS real[]
    AS 'MODULE_PATHNAME', 'onnx_predict'
    LANGUAGE C STABLE STRICT PARALLEL SAFE COST 1000;

COMMENT ON FUNCTION @extschema@.onnx_predict(text, real[]) IS
    'run a model on one sample (the batch dimension is added) and return its first output as real[]';

CREATE FUNCTION @extschema@.onnx_predict(model text, features real[], output text)
    RETURNS real[]
    AS 'MODULE_PATHNAME', 'onnx_predict'
    LANGUAGE C STABLE STRICT PARALLEL SAFE COST 1000;

COMMENT ON FUNCTION @extschema@.onnx_predict(text, real[], text) IS
    'run a model on one sample and return the named output as real[] (a ZipMap output gives the class probabilities in class order)';

CREATE FUNCTION @extschema@.onnx_predict_batch(model text, features real[][])
    RETURNS real[][]
    AS 'MODULE_PATHNAME', 'onnx_predict_batch'
    LANGUAGE C STABLE STRICT PARALLEL SAFE COST 1000;

COMMENT ON FUNCTION @extschema@.onnx_predict_batch(text, real[]) IS
    'run a model on a two-dimensional array of samples (one row each) and return its first output, one row per sample';

CREATE FUNCTION @extschema@.onnx_predict_batch(model text, features real[][], output text)
    RETURNS real[][]
    AS 'MODULE_PATHNAME', 'onnx_predict_batch'
    LANGUAGE C STABLE STRICT PARALLEL SAFE COST 1000;

COMMENT ON FUNCTION @extschema@.onnx_predict_batch(text, real[], text) IS
    'run a model on a two-dimensional array of samples and return the named output, one row per sample';

CREATE FUNCTION @extschema@.onnx_run(model text, inputs jsonb)
    RETURNS jsonb
    AS 'MODULE_PATHNAME', 'onnx_run'
    LANGUAGE C STABLE STRICT PARALLEL SAFE COST 1000;

COMMENT ON FUNCTION @extschema@.onnx_run(text, jsonb) IS
    'run a model on named inputs given as nested JSON arrays and return every output by name (sequences as arrays, maps as objects)';

-- ---------------------------------------------------------------------------
-- Session cache
-- ---------------------------------------------------------------------------

CREATE FUNCTION @extschema@.onnx_cache_stats(
    OUT model text,
    OUT version bigint,
    OUT cached boolean,
    OUT hits bigint,
    OUT misses bigint,
    OUT load_ms double precision,
    OUT bytes bigint,
    OUT last_used timestamptz,
    OUT providers text,
    OUT threads integer)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'onnx_cache_stats'
    LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.onnx_cache_stats() IS
    'the sessions this backend has cached: calls served from the cache (hits), sessions built (misses), build time, memory, last use';

CREATE FUNCTION @extschema@.onnx_cache_clear()
    RETURNS integer
    AS 'MODULE_PATHNAME', 'onnx_cache_clear'
    LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.onnx_cache_clear() IS
    'free every session this backend has cached and forget their statistics; returns how many sessions were freed';
