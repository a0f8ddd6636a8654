-- onnx_pg: run ONNX models inside SQL queries.
-- The Makefile installs this file as onnx_pg--<version>.sql.

\echo Use "CREATE EXTENSION onnx_pg" to load this file. \quit

-- Every object is created as @extschema@.name, and every operator and
-- function an expression uses is named with its schema (pg_catalog.now(),
-- OPERATOR(pg_catalog.*)): CREATE EXTENSION runs this script with
-- search_path = the target schema, where a role allowed to create objects
-- could have planted an operator that matches better than pg_catalog's
-- (sql/onnx_badinput_privileges.sql tests this).

-- ---------------------------------------------------------------------------
-- Catalog
-- ---------------------------------------------------------------------------

CREATE TABLE @extschema@.onnx_model_store (
    name        text        PRIMARY KEY
                            CHECK (name OPERATOR(pg_catalog.<>) ''
                                   AND pg_catalog.octet_length(name) OPERATOR(pg_catalog.<=) 256),
    version     bigint      NOT NULL DEFAULT 1 CHECK (version OPERATOR(pg_catalog.>) 0),
    model       bytea       NOT NULL,
    sha256      bytea       NOT NULL CHECK (pg_catalog.octet_length(sha256) OPERATOR(pg_catalog.=) 32),
    size_bytes  bigint      NOT NULL,
    ir_version  bigint,
    opsets      jsonb,
    producer    text,
    owner       regrole     NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT pg_catalog.now(),
    updated_at  timestamptz NOT NULL DEFAULT pg_catalog.now(),
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

-- features: "any" so that real[], double precision[], integer[], bigint[],
-- smallint[] and numeric[] each arrive as they are (overloads for each would
-- make an untyped literal such as '{5.1,3.5,1.4,0.2}' ambiguous; it is read
-- as real[]); they are converted to the element type the model declares
-- the planner support function of onnx_predict: it offers nothing to the
-- planner, but a statement that calls onnx_predict then loads the library
-- while it is planned, so that automatic batching applies to a session's
-- first statement too (src/pg/batchplan.c)
CREATE FUNCTION @extschema@.onnx_predict_support(internal)
    RETURNS internal
    AS 'MODULE_PATHNAME', 'onnx_predict_support'
    LANGUAGE C STRICT;

CREATE FUNCTION @extschema@.onnx_predict(model text, features "any")
    RETURNS real[]
    AS 'MODULE_PATHNAME', 'onnx_predict'
    LANGUAGE C STABLE STRICT PARALLEL SAFE COST 1000
    SUPPORT @extschema@.onnx_predict_support;

COMMENT ON FUNCTION @extschema@.onnx_predict(text, "any") IS
    'run a model on one sample (an array of numbers: real[], double precision[], integer[], ...; the batch dimension is added) and return its first output as real[]; a query calling it over the rows of a scan runs in batches of onnx.batch_size rows (see onnx.auto_batch)';

CREATE FUNCTION @extschema@.onnx_predict(model text, features "any", output text)
    RETURNS real[]
    AS 'MODULE_PATHNAME', 'onnx_predict'
    LANGUAGE C STABLE STRICT PARALLEL SAFE COST 1000
    SUPPORT @extschema@.onnx_predict_support;

COMMENT ON FUNCTION @extschema@.onnx_predict(text, "any", text) IS
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

-- the set-based form: a query's rows scored in batches, each row kept with
-- its prediction; the column definition list is the query's columns with
-- the last one (the features) replaced by the prediction, e.g.
--   SELECT * FROM onnx_predict_query('iris_rf', 'SELECT id, features FROM iris')
--     AS p(id int, label real[]);
CREATE FUNCTION @extschema@.onnx_predict_query(model text, query text, output text DEFAULT NULL)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'onnx_predict_query'
    LANGUAGE C VOLATILE PARALLEL UNSAFE COST 1000 ROWS 1000;

COMMENT ON FUNCTION @extschema@.onnx_predict_query(text, text, text) IS
    'run a query and score its rows in batches of onnx.batch_size: the last column of the query holds the features, the columns before it are returned unchanged with the prediction (real[]) added last; call it with a column definition list, e.g. AS p(id int, label real[])';

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
    OUT threads integer,
    OUT providers_requested text,
    OUT fallback_reason text,
    OUT shapes integer,
    OUT pool_bytes bigint,
    OUT shape_nodes_skipped bigint)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'onnx_cache_stats'
    LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.onnx_cache_stats() IS
    'the sessions this backend has cached: calls served from the cache (hits), sessions built (misses), build time, memory, last use, the providers each runs on and was asked for, why a session that asked for cuda runs on the CPU, the distinct input shapes its runs had, the bytes of tensor buffers it keeps between runs, and the shape-computing nodes its runs skipped because their shapes repeated';

CREATE FUNCTION @extschema@.onnx_model_placement(model text)
    RETURNS TABLE (ordinal integer, name text, op_type text, provider text)
    AS 'MODULE_PATHNAME', 'onnx_model_placement'
    LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED ROWS 50;

COMMENT ON FUNCTION @extschema@.onnx_model_placement(text) IS
    'where each node of this backend''s session for a model runs (cpu or cuda): the optimized graph in execution order, built with the current settings if needed';

CREATE FUNCTION @extschema@.onnx_cache_clear()
    RETURNS integer
    AS 'MODULE_PATHNAME', 'onnx_cache_clear'
    LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.onnx_cache_clear() IS
    'free every session this backend has cached and forget their statistics; returns how many sessions were freed';

-- ---------------------------------------------------------------------------
-- Statistics and progress (src/pg/stats.c, src/pg/progress.c)
-- ---------------------------------------------------------------------------

CREATE FUNCTION @extschema@.onnx_stat_models(
    all_databases boolean DEFAULT false,
    OUT datname name,
    OUT model text,
    OUT calls bigint,
    OUT rows bigint,
    OUT total_ms double precision,
    OUT mean_ms double precision,
    OUT max_ms double precision,
    OUT errors bigint,
    OUT loads bigint,
    OUT load_ms double precision,
    OUT last_used timestamptz,
    OUT stats_since timestamptz)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'onnx_stat_models'
    LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.onnx_stat_models(boolean) IS
    'per-model statistics: calls, rows, run time, errors, session loads; across the server with onnx_pg in shared_preload_libraries, else this backend only';

CREATE VIEW @extschema@.onnx_stat_models AS
    SELECT * FROM @extschema@.onnx_stat_models(false);

COMMENT ON VIEW @extschema@.onnx_stat_models IS
    'per-model statistics of the current database (see onnx_stat_models(boolean))';

GRANT SELECT ON @extschema@.onnx_stat_models TO PUBLIC;

CREATE FUNCTION @extschema@.onnx_stat_reset(model text DEFAULT NULL)
    RETURNS void
    AS 'MODULE_PATHNAME', 'onnx_stat_reset'
    LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.onnx_stat_reset(text) IS
    'forget the statistics of one model of the current database, or of every model in every database (NULL)';

-- like pg_stat_statements_reset: not for everyone
REVOKE ALL ON FUNCTION @extschema@.onnx_stat_reset(text) FROM PUBLIC;

CREATE FUNCTION @extschema@.onnx_stat_progress(
    OUT pid integer,
    OUT datid oid,
    OUT command text,
    OUT model text,
    OUT phase text,
    OUT done bigint,
    OUT total bigint,
    OUT unit text,
    OUT started timestamptz,
    OUT phase_started timestamptz)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'onnx_stat_progress'
    LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.onnx_stat_progress() IS
    'the progress of model loads, optimizations and scoring statements in other backends (needs onnx_pg in shared_preload_libraries)';

CREATE VIEW @extschema@.onnx_stat_progress AS
    SELECT p.pid, d.datname, p.command, p.model, p.phase, p.done, p.total, p.unit,
           CASE WHEN p.total OPERATOR(pg_catalog.>) 0
                THEN pg_catalog.round((100.0 OPERATOR(pg_catalog.*) p.done) OPERATOR(pg_catalog./) p.total, 1)
           END AS percent,
           p.started, p.phase_started
      FROM @extschema@.onnx_stat_progress() p
      LEFT JOIN pg_catalog.pg_database d ON d.oid OPERATOR(pg_catalog.=) p.datid;

COMMENT ON VIEW @extschema@.onnx_stat_progress IS
    'one row per backend loading or optimizing a model, or scoring rows in the current statement';

GRANT SELECT ON @extschema@.onnx_stat_progress TO PUBLIC;

-- ---------------------------------------------------------------------------
-- Profiling (src/pg/profile.c)
-- ---------------------------------------------------------------------------

-- inputs: "any", like onnx_predict's features: an array of numbers (one
-- sample for the model's single input) or a jsonb object of named inputs (as
-- onnx_run takes them); an untyped literal is read as jsonb when it contains
-- a colon, else as real[]
CREATE FUNCTION @extschema@.onnx_profile(model text, inputs "any", runs integer DEFAULT 1)
    RETURNS TABLE (ordinal integer, node text, op text, provider text, ms double precision,
                   pct double precision, shape bigint[], dtype text, bytes bigint,
                   fused_from text)
    AS 'MODULE_PATHNAME', 'onnx_profile'
    LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED ROWS 50;

COMMENT ON FUNCTION @extschema@.onnx_profile(text, "any", integer) IS
    'run a model on one input (an array of features as onnx_predict takes them, or named inputs as a jsonb object as onnx_run takes them) and return, per node in execution order, its name, operator, provider, time (mean of runs), share of the total, first output shape and type, output bytes, and what a fused node replaced';

CREATE FUNCTION @extschema@.onnx_profile_ops(model text, inputs "any", runs integer DEFAULT 1)
    RETURNS TABLE (op text, nodes integer, ms double precision, pct double precision,
                   bytes bigint)
    AS 'MODULE_PATHNAME', 'onnx_profile_ops'
    LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED ROWS 20;

COMMENT ON FUNCTION @extschema@.onnx_profile_ops(text, "any", integer) IS
    'onnx_profile totalled by operator type: nodes, time, share of the total, output bytes; slowest first';

-- ---------------------------------------------------------------------------
-- Pictures and optimized models (src/pg/dot.c, src/pg/optimize.c)
-- ---------------------------------------------------------------------------

CREATE FUNCTION @extschema@.onnx_model_dot(model text, optimized boolean DEFAULT false)
    RETURNS text
    AS 'MODULE_PATHNAME', 'onnx_model_dot'
    LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.onnx_model_dot(text, boolean) IS
    'a stored model''s graph as Graphviz DOT (as stored, or as sessions run it after optimization), with types and shapes on edges and fused nodes marked; psql -Atc "SELECT onnx_model_dot(...)" | dot -Tsvg draws it';

CREATE FUNCTION @extschema@.onnx_optimize(source text, target text, level text DEFAULT 'all',
                                          replace boolean DEFAULT false)
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'onnx_optimize'
    LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.onnx_optimize(text, text, text, boolean) IS
    'optimize a stored model (level disable, basic, extended or all) and store the result as a new model whose lineage names the source; returns its version';

-- ---------------------------------------------------------------------------
-- Quantization (src/pg/quantize.c)
-- ---------------------------------------------------------------------------

CREATE FUNCTION @extschema@.onnx_quantize_dynamic(
    source text,
    target text,
    weight_type text DEFAULT 'int8',
    per_channel boolean DEFAULT false,
    reduce_range boolean DEFAULT false,
    symmetric_weights boolean DEFAULT true,
    op_types text[] DEFAULT NULL,
    exclude_nodes text[] DEFAULT NULL,
    replace boolean DEFAULT false,
    per_row_activations boolean DEFAULT false,
    OUT model text,
    OUT version bigint,
    OUT nodes_total integer,
    OUT nodes_quantized integer,
    OUT quantized_ops text,
    OUT size_before bigint,
    OUT size_after bigint,
    OUT compression double precision,
    OUT calibration_rows bigint)
    RETURNS record
    AS 'MODULE_PATHNAME', 'onnx_quantize_dynamic'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.onnx_quantize_dynamic(text, text, text, boolean, boolean, boolean, text[], text[], boolean, boolean) IS
    'store an int8 copy of a model: weights of MatMul, Gemm and Conv (op_types: also Gather) quantized, activations quantized at run time (per tensor, or per row with per_row_activations); standard ONNX operators only; returns the nodes quantized and the sizes';

CREATE FUNCTION @extschema@.onnx_quantize_static(
    source text,
    target text,
    calibration text,
    method text DEFAULT 'minmax',
    format text DEFAULT 'qdq',
    per_channel boolean DEFAULT true,
    activation_type text DEFAULT 'uint8',
    weight_type text DEFAULT 'int8',
    symmetric_activations boolean DEFAULT false,
    symmetric_weights boolean DEFAULT true,
    reduce_range boolean DEFAULT false,
    percentile double precision DEFAULT 99.999,
    op_types text[] DEFAULT NULL,
    exclude_nodes text[] DEFAULT NULL,
    batch_size integer DEFAULT 16,
    max_rows bigint DEFAULT NULL,
    replace boolean DEFAULT false,
    OUT model text,
    OUT version bigint,
    OUT nodes_total integer,
    OUT nodes_quantized integer,
    OUT quantized_ops text,
    OUT size_before bigint,
    OUT size_after bigint,
    OUT compression double precision,
    OUT calibration_rows bigint)
    RETURNS record
    AS 'MODULE_PATHNAME', 'onnx_quantize_static'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.onnx_quantize_static(text, text, text, text, text, boolean, text, text, boolean, boolean, boolean, double precision, text[], text[], integer, bigint, boolean) IS
    'store an int8 copy of a model with activation scales calibrated on the rows of a query (one array column per input, or one jsonb column); method minmax, percentile or entropy; format qdq or qoperator; returns the nodes quantized and the sizes';

CREATE FUNCTION @extschema@.onnx_quantize_report(
    model text,
    query text,
    source text DEFAULT NULL,
    output text DEFAULT NULL,
    OUT compared_with text,
    OUT output_name text,
    OUT rows bigint,
    OUT mean_abs_diff double precision,
    OUT max_abs_diff double precision,
    OUT argmax_agreement double precision)
    RETURNS record
    AS 'MODULE_PATHNAME', 'onnx_quantize_report'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.onnx_quantize_report(text, text, text, text) IS
    'run a quantized model and its source (by default the model its lineage names) on the rows of a query and compare an output: mean and largest absolute difference, share of equal argmax over the last dimension';
