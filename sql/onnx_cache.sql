-- The per-backend session cache: hits, misses, invalidation across backends
\getenv abs_srcdir PG_ABS_SRCDIR
\set models :abs_srcdir '/test/models'
\set iris_file :models '/iris_rf.onnx'
\set mlp_file :models '/mlp.onnx'
\set cnn_file :models '/small_cnn.onnx'

SELECT onnx_cache_clear() >= 0 AS cleared;
SELECT onnx_load_model_file('cache_m', :'iris_file', true) AS version;

-- the first call builds the session (a miss), the following ones reuse it
SELECT onnx_predict('cache_m', '{5.1,3.5,1.4,0.2}');
SELECT model, version, cached, hits, misses, load_ms >= 0 AS timed, bytes > 0 AS sized,
       providers, threads
  FROM onnx_cache_stats();
SELECT onnx_predict('cache_m', ARRAY[x, 3.5, 1.4, 0.2]::real[]) FROM generate_series(1, 10) x;
SELECT hits, misses FROM onnx_cache_stats() WHERE model = 'cache_m';

-- replacing in this backend is seen at the next call
SELECT onnx_load_model_file('cache_m', :'mlp_file', true) AS version;
SELECT array_length(onnx_predict('cache_m', array_fill(0.5::real, ARRAY[16])), 1) AS mlp_outputs;
SELECT version, hits, misses FROM onnx_cache_stats() WHERE model = 'cache_m';

-- settings that shape sessions rebuild them; others do not
SET onnx.graph_optimization_level = 'basic';
SELECT array_length(onnx_predict('cache_m', array_fill(0.5::real, ARRAY[16])), 1) AS mlp_outputs;
SET onnx.intra_op_threads = 2;
SELECT array_length(onnx_predict('cache_m', array_fill(0.5::real, ARRAY[16])), 1) AS mlp_outputs;
SELECT hits, misses, threads FROM onnx_cache_stats() WHERE model = 'cache_m';
SET onnx.intra_op_threads = 2;
SELECT array_length(onnx_predict('cache_m', array_fill(0.5::real, ARRAY[16])), 1) AS mlp_outputs;
SELECT hits, misses FROM onnx_cache_stats() WHERE model = 'cache_m';
RESET onnx.graph_optimization_level;
RESET onnx.intra_op_threads;

-- another connection replaces and drops the model: this backend sees it at
-- its next call
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('other', 'dbname=' || current_database()
       || ' port=' || current_setting('port')
       || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
SELECT onnx_predict('cache_m', array_fill(0.5::real, ARRAY[16])) IS NOT NULL AS mlp_runs;
SELECT * FROM dblink('other', $$SELECT onnx_load_model_file('cache_m', '$$ || :'iris_file' || $$', true)$$) AS t(version bigint);
SELECT onnx_predict('cache_m', '{5.1,3.5,1.4,0.2}') AS iris_label;
SELECT version, misses FROM onnx_cache_stats() WHERE model = 'cache_m';
SELECT * FROM dblink('other', $$SELECT onnx_predict('cache_m', '{6.7,3.0,5.2,2.3}')$$) AS t(label real[]);
SELECT * FROM dblink('other', $$SELECT onnx_drop_model('cache_m')$$) AS t(dropped boolean);
SELECT onnx_predict('cache_m', '{5.1,3.5,1.4,0.2}');
SELECT count(*) AS entries FROM onnx_cache_stats() WHERE model = 'cache_m';
-- a replacement that rolls back leaves the old model in place
SELECT onnx_load_model_file('cache_m', :'iris_file') AS version;
SELECT onnx_predict('cache_m', '{5.1,3.5,1.4,0.2}');
BEGIN;
SELECT onnx_load_model_file('cache_m', :'mlp_file', true) AS version;
SELECT array_length(onnx_predict('cache_m', array_fill(0.5::real, ARRAY[16])), 1) AS mlp_in_xact;
ROLLBACK;
SELECT onnx_predict('cache_m', '{5.1,3.5,1.4,0.2}') AS iris_again;
SELECT version FROM onnx_cache_stats() WHERE model = 'cache_m';
SELECT dblink_disconnect('other');

-- LRU eviction beyond onnx.session_cache_size
SELECT onnx_load_model_file('cache_cnn', :'cnn_file', true) AS version;
SET onnx.session_cache_size = 0;
SELECT array_length(onnx_predict('cache_cnn', array_fill(0.1::real, ARRAY[768])), 1) AS cnn_outputs;
SELECT model, cached FROM onnx_cache_stats() ORDER BY model;
SELECT onnx_predict('cache_m', '{5.1,3.5,1.4,0.2}');
SELECT model, cached FROM onnx_cache_stats() ORDER BY model;
-- an evicted session has no shapes or buffers
SELECT model, shapes, pool_bytes FROM onnx_cache_stats() WHERE NOT cached ORDER BY model;
RESET onnx.session_cache_size;

-- an error in a query leaves the cache usable
SELECT onnx_predict('cache_m', x) FROM (VALUES ('{5.1,3.5,1.4,0.2}'::real[]), ('{1}'::real[])) v(x);
SELECT onnx_predict('cache_m', '{5.1,3.5,1.4,0.2}');

-- distinct input shapes of a session's runs, and the buffers it keeps:
-- batches of 1 and 2 samples, then 1 again, are two shapes
SELECT onnx_load_model_file('cache_shapes', :'iris_file', true) AS version;
SELECT onnx_predict_batch('cache_shapes', ARRAY[[5.1, 3.5, 1.4, 0.2]]::real[][]) IS NOT NULL AS ran;
SELECT shapes, pool_bytes > 0 AS buffers FROM onnx_cache_stats() WHERE model = 'cache_shapes';
SELECT onnx_predict_batch('cache_shapes',
       ARRAY[[5.1, 3.5, 1.4, 0.2], [6.7, 3.0, 5.2, 2.3]]::real[][]) IS NOT NULL AS ran;
SELECT onnx_predict('cache_shapes', '{5.1,3.5,1.4,0.2}') AS label;
SELECT onnx_run('cache_shapes', '{"float_input": [[5.1, 3.5, 1.4, 0.2]]}') IS NOT NULL AS ran;
SELECT shapes, pool_bytes > 0 AS buffers FROM onnx_cache_stats() WHERE model = 'cache_shapes';

-- the shape work of a PyTorch export (lstm_tagger: Shape -> Gather -> Unsqueeze
-- -> Concat for its initial states) is done by the first call of a shape and
-- skipped while the shape repeats; a new length computes it again
\set lstm_file :models '/networks/lstm_tagger.onnx'
SELECT onnx_load_model_file('cache_lstm', :'lstm_file', true) AS version;
SELECT onnx_predict('cache_lstm', '{7,1,42,5,9}'::bigint[]) AS first_logits \gset
SELECT shape_nodes_skipped AS after_first FROM onnx_cache_stats() WHERE model = 'cache_lstm';
SELECT onnx_predict('cache_lstm', '{7,1,42,5,9}'::bigint[]) = :'first_logits'::real[] AS same;
SELECT shape_nodes_skipped AS skipped FROM onnx_cache_stats() WHERE model = 'cache_lstm' \gset
SELECT :skipped > 0 AS skipped_on_repeat;
SELECT array_length(onnx_predict('cache_lstm', '{3,3,3,3,3,3,3}'::bigint[]), 1) AS logits_of_7;
SELECT shape_nodes_skipped = :skipped AS none_for_a_new_length FROM onnx_cache_stats() WHERE model = 'cache_lstm';
SELECT array_length(onnx_predict('cache_lstm', '{3,3,3,3,3,3,3}'::bigint[]), 1) AS logits_of_7;
SELECT shape_nodes_skipped = 2 * :skipped AS all_on_its_repeat FROM onnx_cache_stats() WHERE model = 'cache_lstm';
SELECT onnx_predict('cache_lstm', '{7,1,42,5,9}'::bigint[]) = :'first_logits'::real[] AS same_after;
SELECT onnx_cache_clear() AS freed;
SELECT count(*) FROM onnx_cache_stats();
SELECT onnx_drop_model('cache_m');
SELECT onnx_drop_model('cache_cnn');
SELECT onnx_drop_model('cache_shapes');
SELECT onnx_drop_model('cache_lstm');
