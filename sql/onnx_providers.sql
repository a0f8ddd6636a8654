-- Execution providers: the settings, the CPU fallback of cuda (NOTICE, or
-- ERROR with onnx.provider_fallback), per-model overrides, per-node
-- placement.  pg_regress runs on machines without a GPU (CI), with builds
-- with and without CUDA: asking for cuda always falls back to the CPU here,
-- but the reason (a build without CUDA, no driver, no device) differs, so
-- messages are shown terse and reasons only tested for presence.
\getenv abs_srcdir PG_ABS_SRCDIR
\set iris_file :abs_srcdir '/test/models/iris_rf.onnx'
\set cnn_file :abs_srcdir '/test/models/small_cnn.onnx'
SELECT onnx_load_model_file('prov_m', :'iris_file', true) AS version;
SELECT onnx_load_model_file('prov_cnn', :'cnn_file', true) AS version;

-- ---- settings: defaults and validation ----
SELECT name, setting, unit, context, vartype, enumvals
  FROM pg_settings
 WHERE name IN ('onnx.providers', 'onnx.cuda_device_id', 'onnx.cuda_memory_limit',
                'onnx.cuda_fp16', 'onnx.provider_fallback')
 ORDER BY name;
SET onnx.providers = 'cuda, tpu';
SET onnx.providers = 'cuda,,cpu';
SET onnx.cuda_device_id = -1;
SET onnx.cuda_device_id = 1024;
SET onnx.cuda_memory_limit = 0;
SET onnx.cuda_memory_limit = '100kB';
SET onnx.cuda_fp16 = 'maybe';
SET onnx.provider_fallback = 'warning';
SET onnx.cuda_memory_limit = '2GB';
SHOW onnx.cuda_memory_limit;
RESET onnx.cuda_memory_limit;
SET onnx.provider_fallback = 'ERROR';
SHOW onnx.provider_fallback;
RESET onnx.provider_fallback;

-- ---- asking for cuda: a NOTICE and the CPU ----
\set VERBOSITY terse
SET onnx.providers = 'CUDA,  cpu';
SHOW onnx.providers;
SELECT onnx_predict('prov_m', '{5.1,3.5,1.4,0.2}');
-- once per backend for a provider list and reason, not per session or model
SELECT onnx_predict('prov_m', '{5.1,3.5,1.4,0.2}');
SELECT count(*) > 0 AS placed FROM onnx_model_placement('prov_cnn');
SELECT model, providers, providers_requested, fallback_reason <> '' AS has_reason
  FROM onnx_cache_stats() WHERE model LIKE 'prov%' ORDER BY model;

-- ---- per-node placement: every node on the CPU here ----
-- unoptimized, the session's graph is the stored one, node for node
SET onnx.graph_optimization_level = disable;
SELECT * FROM onnx_model_placement('prov_m');
SELECT count(*) = (SELECT count(*) FROM onnx_model_nodes('prov_m')) AS same_nodes
  FROM onnx_model_placement('prov_m');
RESET onnx.graph_optimization_level;
SELECT provider, count(*) > 0 AS nodes FROM onnx_model_placement('prov_cnn') GROUP BY provider;
-- the optimized graph: no more nodes than the stored one
SELECT (SELECT count(*) FROM onnx_model_placement('prov_cnn'))
       <= (SELECT count(*) FROM onnx_model_nodes('prov_cnn')) AS optimized;
SELECT min(ordinal) = 1 AND max(ordinal) = count(*) AS numbered
  FROM onnx_model_placement('prov_cnn');
-- a cpu session has no fallback
RESET onnx.providers;
SELECT DISTINCT provider FROM onnx_model_placement('prov_cnn');
SELECT model, providers, providers_requested, fallback_reason
  FROM onnx_cache_stats() WHERE model = 'prov_cnn';
SELECT * FROM onnx_model_placement('no_such_model');
SELECT * FROM onnx_model_placement(NULL);

-- ---- the CUDA settings are part of the session's identity ----
-- (fallback reasons may name the device: their NOTICEs are not shown)
SET client_min_messages = warning;
SET onnx.providers = 'cuda,cpu';
SELECT onnx_predict('prov_m', '{5.1,3.5,1.4,0.2}');
SELECT misses FROM onnx_cache_stats() WHERE model = 'prov_m' \gset
SET onnx.cuda_device_id = 1;
SELECT onnx_predict('prov_m', '{5.1,3.5,1.4,0.2}');
SET onnx.cuda_fp16 = on;
SELECT onnx_predict('prov_m', '{5.1,3.5,1.4,0.2}');
SET onnx.cuda_memory_limit = '64MB';
SELECT onnx_predict('prov_m', '{5.1,3.5,1.4,0.2}');
-- unchanged settings keep the session
SET onnx.cuda_memory_limit = '64MB';
SELECT onnx_predict('prov_m', '{5.1,3.5,1.4,0.2}');
SELECT misses - :misses AS rebuilt FROM onnx_cache_stats() WHERE model = 'prov_m';
-- sessions that did not ask for cuda are not rebuilt for the CUDA settings
RESET onnx.providers;
SELECT count(*) > 0 AS placed FROM onnx_model_placement('prov_cnn');
SELECT misses FROM onnx_cache_stats() WHERE model = 'prov_cnn' \gset
SET onnx.cuda_device_id = 2;
SET onnx.cuda_fp16 = off;
SELECT count(*) > 0 AS placed FROM onnx_model_placement('prov_cnn');
SELECT misses - :misses AS rebuilt FROM onnx_cache_stats() WHERE model = 'prov_cnn';
RESET onnx.cuda_device_id;
RESET onnx.cuda_fp16;
RESET onnx.cuda_memory_limit;
RESET client_min_messages;

-- ---- onnx.provider_fallback = error: no CPU fallback of the device ----
SET onnx.providers = 'cuda,cpu';
SET onnx.provider_fallback = error;
-- the session built under 'notice' is not reused
SELECT onnx_predict('prov_m', '{5.1,3.5,1.4,0.2}');
SELECT * FROM onnx_model_placement('prov_m');
DO $$
BEGIN
  PERFORM onnx_predict('prov_m', '{5.1,3.5,1.4,0.2}');
  RAISE NOTICE 'no error';
EXCEPTION WHEN feature_not_supported THEN
  RAISE NOTICE 'feature_not_supported (0A000)';
END $$;
SET onnx.provider_fallback = strict;
SELECT onnx_predict('prov_m', '{5.1,3.5,1.4,0.2}');
-- lists without cuda are not concerned
SET onnx.providers = 'cpu';
SELECT onnx_predict('prov_m', '{5.1,3.5,1.4,0.2}');
RESET onnx.provider_fallback;
RESET onnx.providers;

-- ---- a per-model override goes the same way (a new backend: new NOTICEs) ----
\c -
\set VERBOSITY terse
SELECT onnx_set_model_providers('prov_m', ARRAY['cuda']);
SELECT providers FROM onnx_models WHERE name = 'prov_m';
SHOW onnx.providers;
SELECT onnx_predict('prov_m', '{5.1,3.5,1.4,0.2}');
SELECT model, providers, providers_requested, fallback_reason <> '' AS has_reason
  FROM onnx_cache_stats() WHERE model = 'prov_m';
SELECT DISTINCT provider FROM onnx_model_placement('prov_m');
SET onnx.provider_fallback = error;
SELECT onnx_predict('prov_m', '{5.1,3.5,1.4,0.2}');
\set VERBOSITY default
-- the hint names the model's own list (the detail, the reason, varies)
\set SHOW_CONTEXT never
DO $$
DECLARE
  hint text;
BEGIN
  PERFORM onnx_predict('prov_m', '{5.1,3.5,1.4,0.2}');
EXCEPTION WHEN feature_not_supported THEN
  GET STACKED DIAGNOSTICS hint = PG_EXCEPTION_HINT;
  RAISE NOTICE '%', hint;
END $$;
\set VERBOSITY terse
RESET onnx.provider_fallback;
-- back to the default: the model follows onnx.providers again
SELECT onnx_set_model_providers('prov_m', NULL);
SELECT onnx_predict('prov_m', '{5.1,3.5,1.4,0.2}');
SELECT model, providers, providers_requested, fallback_reason
  FROM onnx_cache_stats() WHERE model = 'prov_m';
\set VERBOSITY default
SELECT onnx_drop_model('prov_m');
SELECT onnx_drop_model('prov_cnn');
