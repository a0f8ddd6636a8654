-- Observability: statistics, per-node profiles, DOT pictures, optimized
-- models, progress.  This suite runs without onnx_pg in
-- shared_preload_libraries (statistics of this backend, with a NOTICE);
-- test/t/observe_preload.pl covers the shared-memory statistics.
\getenv abs_srcdir PG_ABS_SRCDIR
\set models :abs_srcdir '/test/models'
\set iris_file :models '/iris_rf.onnx'
\set cnn_file :models '/small_cnn.onnx'
\set resnet_file :models '/resnet_block.onnx'
\set sqlstate '\\echo SQLSTATE :LAST_ERROR_SQLSTATE'

SELECT onnx_load_model_file('obs_iris', :'iris_file', true) AS version;
SELECT onnx_load_model_file('obs_resnet', :'resnet_file', true) AS version;

-- ---- statistics ----

SELECT onnx_stat_reset();
SELECT count(*) AS models FROM onnx_stat_models;

-- 10 row-wise calls, one batch of 3 samples, one call that fails in the engine
SELECT count(onnx_predict('obs_iris', ARRAY[x, 3.0, 1.4, 0.2]::real[])) FROM generate_series(1, 10) x;
SELECT onnx_predict_batch('obs_iris', ARRAY[[5.1, 3.5, 1.4, 0.2], [6.7, 3.0, 5.2, 2.3], [5.9, 3.0, 4.2, 1.5]]::real[][]);
SELECT onnx_run('obs_resnet', '{"input": [[[[1, 2], [3, 4]]]]}');
:sqlstate
SELECT model, calls, rows, errors, loads,
       total_ms > 0 AS timed, mean_ms <= max_ms AS mean_below_max,
       abs(mean_ms * calls - total_ms) < 1e-6 AS mean_is_total_over_calls,
       load_ms > 0 AS load_timed, last_used IS NOT NULL AS used, stats_since <= now() AS since
  FROM onnx_stat_models ORDER BY model;
-- every database (this backend only knows its own)
SELECT datname = current_database() AS this_db, model FROM onnx_stat_models(true) ORDER BY model;

-- an error caught by a savepoint is counted at the next call
BEGIN;
SAVEPOINT s;
SELECT onnx_run('obs_resnet', '{"input": [[[[1, 2], [3, 4]]]]}');
ROLLBACK TO s;
SELECT array_length(onnx_predict('obs_resnet', array_fill(0.1::real, ARRAY[768])), 1) AS logits;
COMMIT;
SELECT model, calls, rows, errors FROM onnx_stat_models WHERE model = 'obs_resnet';

-- reset one model, then all
SELECT onnx_stat_reset('obs_resnet');
SELECT model, calls FROM onnx_stat_models ORDER BY model;
SELECT onnx_stat_reset();
SELECT model, calls, errors FROM onnx_stat_models ORDER BY model;

-- onnx.track_stats = off stops counting
SET onnx.track_stats = off;
SELECT onnx_predict('obs_iris', '{5.1,3.5,1.4,0.2}');
SELECT model, calls FROM onnx_stat_models ORDER BY model;
RESET onnx.track_stats;

-- the reset function is not for everyone
CREATE ROLE obs_user;
SET ROLE obs_user;
SELECT onnx_stat_reset();
:sqlstate
SELECT count(*) >= 0 AS can_read FROM onnx_stat_models;
RESET ROLE;
DROP ROLE obs_user;

-- ---- per-node profile ----

-- level basic (Conv+BatchNormalization folding) keeps this output stable
-- when passes are added to the higher levels
SET onnx.graph_optimization_level = 'basic';

-- one row per node in execution order; times vary, the rest does not
SELECT ordinal, node, op, provider, ms >= 0 AS timed, shape, dtype, bytes, fused_from
  FROM onnx_profile('obs_resnet', array_fill(0.1::real, ARRAY[768]));
SELECT round(sum(pct)) AS pct_total FROM onnx_profile('obs_resnet', array_fill(0.1::real, ARRAY[768]), 3);
-- totals by operator
SELECT op, nodes, bytes, ms >= 0 AS timed
  FROM onnx_profile_ops('obs_resnet', array_fill(0.1::real, ARRAY[768])) ORDER BY op;
-- named jsonb inputs, as onnx_run takes them
SELECT ordinal, node, op, shape, dtype, bytes
  FROM onnx_profile('obs_iris', '{"float_input": [[5.1, 3.5, 1.4, 0.2], [6.7, 3.0, 5.2, 2.3]]}'::jsonb);
SELECT op, nodes FROM onnx_profile_ops('obs_iris', '{"float_input": [[5.1, 3.5, 1.4, 0.2]]}'::jsonb) ORDER BY op;
-- the graph as stored: no fused nodes
SET onnx.graph_optimization_level = 'disable';
SELECT ordinal, op, fused_from FROM onnx_profile('obs_resnet', array_fill(0.1::real, ARRAY[768])) WHERE ordinal <= 3;
SET onnx.graph_optimization_level = 'basic';
-- bad calls
SELECT * FROM onnx_profile('obs_iris', '{5.1,3.5,1.4,0.2}'::real[], 0);
:sqlstate
SELECT * FROM onnx_profile('obs_iris', '{5.1,3.5}'::real[]);
:sqlstate
SELECT * FROM onnx_profile('obs_nope', '{5.1,3.5,1.4,0.2}'::real[]);
:sqlstate
SELECT * FROM onnx_profile('obs_iris', '{"x": [[1]]}'::jsonb);
:sqlstate
SELECT * FROM onnx_profile('obs_resnet', '{"input": [[[[1, 2], [3, 4]]]]}'::jsonb);
:sqlstate
-- profiling is off again after an error: the next calls run normally
SELECT array_length(onnx_predict('obs_resnet', array_fill(0.1::real, ARRAY[768])), 1) AS logits;
-- profiles do not disturb the cache's accounting
SELECT model, hits >= 0 AS hits_ok, misses >= 1 AS built FROM onnx_cache_stats()
 WHERE model IN ('obs_iris', 'obs_resnet') ORDER BY model;

-- ---- DOT pictures ----

-- the stored graph: inputs and outputs as ellipses, types on edges, dimensions
-- that follow the batch shown as ? (unnamed) or by name
SELECT onnx_model_dot('obs_iris');
-- the ResNet block as stored: three BatchNormalization nodes, shapes on edges
SELECT count(*) FILTER (WHERE strpos(l, 'label="BatchNormalization') > 0) AS bn_nodes,
       count(*) FILTER (WHERE strpos(l, 'fused: Conv+BatchNormalization') > 0) AS fused_nodes,
       count(*) FILTER (WHERE strpos(l, ' -> ') > 0) AS edges,
       count(*) FILTER (WHERE strpos(l, 'float [N, 16, 16, 16]') > 0) AS shaped_edges
  FROM (SELECT unnest(string_to_array(onnx_model_dot('obs_resnet', false), E'\n')) AS l) s;
-- optimized: Conv+BatchNormalization folded, fused nodes marked
SELECT count(*) FILTER (WHERE strpos(l, 'label="BatchNormalization') > 0) AS bn_nodes,
       count(*) FILTER (WHERE strpos(l, 'fused: Conv+BatchNormalization') > 0) AS fused_nodes,
       count(*) FILTER (WHERE strpos(l, 'float [N, 16, 16, 16]') > 0) > 0 AS shaped_edges
  FROM (SELECT unnest(string_to_array(onnx_model_dot('obs_resnet', true), E'\n')) AS l) s;
SELECT split_part(onnx_model_dot('obs_resnet', true), E'\n', 1) AS first_line;
RESET onnx.graph_optimization_level;
SELECT onnx_model_dot('obs_nope');
:sqlstate

-- ---- optimized models ----

SELECT onnx_optimize('obs_resnet', 'obs_resnet_opt', 'basic') AS version;
SELECT lineage->>'optimized_from' AS source, lineage->'source_version' AS source_version,
       lineage->>'level' AS level, lineage->'nodes_before' AS nodes_before,
       (lineage->>'nodes_after')::int < (lineage->>'nodes_before')::int AS fewer_nodes,
       lineage->>'source_sha256' = (SELECT sha256 FROM onnx_models WHERE name = 'obs_resnet') AS sha_matches
  FROM onnx_models WHERE name = 'obs_resnet_opt';
-- the stored optimized graph has no BatchNormalization left
SELECT op_type, count(*) FROM onnx_model_nodes('obs_resnet_opt') GROUP BY op_type ORDER BY op_type;
-- and gives the same outputs as the source
SELECT max(abs(a - b)) < 1e-5 AS same_outputs
  FROM generate_series(1, 5) i,
       LATERAL (SELECT array_agg(((j * i) % 17) / 17.0)::real[] AS x FROM generate_series(1, 768) j) f,
       LATERAL unnest(onnx_predict('obs_resnet', f.x), onnx_predict('obs_resnet_opt', f.x)) AS u(a, b);
-- the default level, all; a plain replace clears the lineage
SELECT onnx_optimize('obs_resnet', 'obs_resnet_opt', replace => true) AS version;
SELECT lineage->>'level' AS level FROM onnx_models WHERE name = 'obs_resnet_opt';
SELECT onnx_optimize('obs_iris', 'obs_iris_same', 'disable') AS version;
SELECT onnx_predict('obs_iris_same', '{6.7,3.0,5.2,2.3}') = onnx_predict('obs_iris', '{6.7,3.0,5.2,2.3}') AS same;
SELECT onnx_load_model_file('obs_resnet_opt', :'resnet_file', true) AS version;
SELECT lineage IS NULL AS no_lineage FROM onnx_models WHERE name = 'obs_resnet_opt';
-- errors
SELECT onnx_optimize('obs_resnet', 'obs_resnet_opt');
:sqlstate
SELECT onnx_optimize('obs_resnet', 'obs_x', 'fast');
:sqlstate
SELECT onnx_optimize('obs_nope', 'obs_x');
:sqlstate
SELECT onnx_optimize('obs_resnet', '');
:sqlstate

-- ---- progress ----

-- NOTICE lines for loads and optimizations; onnx.progress_interval = 0
-- reports every phase (terse: the elapsed time is in the DETAIL)
\set VERBOSITY terse
SET onnx.progress_interval = 0;
SELECT onnx_load_model_file('obs_cnn', :'cnn_file', true) AS version;
SELECT onnx_load_model('obs_cnn', onnx_export_model('obs_cnn'), true) AS version;
SELECT onnx_optimize('obs_cnn', 'obs_cnn_opt') AS version;
-- the default reports only operations that take longer than a second
RESET onnx.progress_interval;
SELECT onnx_optimize('obs_cnn', 'obs_cnn_opt', replace => true) AS version;
SET onnx.progress_interval = -1;
SELECT onnx_optimize('obs_cnn', 'obs_cnn_opt', replace => true) AS version;
RESET onnx.progress_interval;
\set VERBOSITY default
-- the view needs shared memory
SELECT * FROM onnx_stat_progress;

SELECT onnx_drop_model(name) FROM onnx_models WHERE name LIKE 'obs\_%' ORDER BY name;
