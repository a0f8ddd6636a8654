-- Bad input: each case is an ERROR with a proper SQLSTATE (printed after it)
-- and a detail; the server never restarts.
\getenv abs_srcdir PG_ABS_SRCDIR
\set models :abs_srcdir '/test/models'
\set iris_file :models '/iris_rf.onnx'
\set csv_file :models '/iris.csv'
\set sqlstate '\\echo SQLSTATE :LAST_ERROR_SQLSTATE'

SELECT onnx_load_model_file('iris_rf', :'iris_file', true);

-- ---- loading ----

-- empty, truncated and random bytes
SELECT onnx_load_model('bad', ''::bytea);
:sqlstate
SELECT onnx_load_model('bad', substring(onnx_export_model('iris_rf') FROM 1 FOR 100));
:sqlstate
SELECT onnx_load_model('bad', decode('deadbeef00112233445566778899aabbccddeeff', 'hex'));
:sqlstate
-- a file that is not ONNX at all
SELECT onnx_load_model_file('bad', :'csv_file');
:sqlstate
SELECT onnx_load_model('bad', convert_to('{"not": "onnx"}', 'UTF8'));
:sqlstate
-- unsupported operators: every one is listed at once
SELECT onnx_load_model('bad', decode('0808120d6f6e6e785f70675f74657374733a690a160a01581201541a026631220a46726f626e69636174650a200a01541201591a027a3122075a6f72626c61783a0b636f6d2e6578616d706c651201675a140a0158120f0a0d080112090a0312014e0a02080262140a0159120f0a0d080112090a0312014e0a02080242040a001011420f0a0b636f6d2e6578616d706c651001', 'hex'));
:sqlstate
-- a cyclic graph
SELECT onnx_load_model('bad', decode('0808120d6f6e6e785f70675f74657374733a680a100a01421201411a027231220452656c750a100a01411201421a027232220452656c750a130a01580a01421201591a0361646422034164641201675a140a0158120f0a0d080112090a0312014e0a02080262140a0159120f0a0d080112090a0312014e0a02080242040a001011', 'hex'));
:sqlstate
-- a node input nothing defines (missing initializer)
SELECT onnx_load_model('bad', decode('0808120d6f6e6e785f70675f74657374733a440a130a01580a01571201591a0361646422034164641201675a140a0158120f0a0d080112090a0312014e0a02080262140a0159120f0a0d080112090a0312014e0a02080242040a001011', 'hex'));
:sqlstate
-- the same checks for inspection of raw bytes
SELECT * FROM onnx_model_inputs(decode('deadbeef', 'hex'));
:sqlstate
-- replacing without the flag
SELECT onnx_load_model('iris_rf', onnx_export_model('iris_rf'));
:sqlstate
-- nothing was stored by the failures
SELECT name, version FROM onnx_models ORDER BY name;

-- ---- unknown names ----

SELECT onnx_predict('nosuch', '{1,2,3,4}');
:sqlstate
SELECT onnx_predict_batch('nosuch', '{{1,2,3,4}}');
:sqlstate
SELECT onnx_run('nosuch', '{}');
:sqlstate
SELECT * FROM onnx_model_info('nosuch');
:sqlstate
SELECT onnx_export_model('nosuch');
:sqlstate
SELECT onnx_drop_model('nosuch');
:sqlstate
SELECT onnx_predict('iris_rf', '{5.1,3.5,1.4,0.2}', 'nosuch');
:sqlstate
SELECT onnx_predict_batch('iris_rf', '{{5.1,3.5,1.4,0.2}}', 'nosuch');
:sqlstate

-- ---- features ----

-- wrong feature count: the detail says expected vs got
SELECT onnx_predict('iris_rf', '{5.1,3.5,1.4}');
:sqlstate
SELECT onnx_predict('iris_rf', '{5.1,3.5,1.4,0.2,9}');
:sqlstate
SELECT onnx_predict_batch('iris_rf', '{{5.1,3.5,1.4},{1,2,3}}');
:sqlstate
-- NULL array: NULL result (STRICT); NULL elements: error
SELECT onnx_predict('iris_rf', NULL) IS NULL AS null_array;
SELECT onnx_predict_batch('iris_rf', NULL) IS NULL AS null_batch;
SELECT onnx_predict('iris_rf', NULL, 'output_probability') IS NULL AS null_output_array;
SELECT onnx_predict('iris_rf', '{5.1,NULL,1.4,0.2}');
:sqlstate
SELECT onnx_predict_batch('iris_rf', '{{5.1,3.5,1.4,0.2},{NULL,1,2,3}}');
:sqlstate
-- a multi-dimensional array given to the row-wise function
SELECT onnx_predict('iris_rf', '{{5.1,3.5,1.4,0.2},{5.1,3.5,1.4,0.2}}');
:sqlstate
-- and a one-dimensional one to the batch function
SELECT onnx_predict_batch('iris_rf', '{5.1,3.5,1.4,0.2}');
:sqlstate
SELECT onnx_predict_batch('iris_rf', '{{{5.1,3.5,1.4,0.2}}}');
:sqlstate
-- empty arrays
SELECT onnx_predict('iris_rf', '{}');
:sqlstate
SELECT onnx_predict_batch('iris_rf', '{}');
:sqlstate
-- NaN and infinity are not errors: they propagate
SELECT array_length(onnx_predict('iris_rf', '{NaN,Infinity,-Infinity,0}', 'output_probability'), 1) AS nan_ok;

-- ---- onnx_run inputs ----

SELECT onnx_run('iris_rf', '[[5.1,3.5,1.4,0.2]]');
:sqlstate
SELECT onnx_run('iris_rf', '{}');
:sqlstate
SELECT onnx_run('iris_rf', '{"float_input": [[5.1,3.5,1.4,0.2]], "extra": [1]}');
:sqlstate
SELECT onnx_run('iris_rf', '{"float_input": null}');
:sqlstate
SELECT onnx_run('iris_rf', '{"float_input": [[5.1,3.5,1.4,0.2],[1,2,3]]}');
:sqlstate
SELECT onnx_run('iris_rf', '{"float_input": [[5.1,3.5,1.4,"x"]]}');
:sqlstate
SELECT onnx_run('iris_rf', '{"float_input": [[5.1,3.5,1.4,null]]}');
:sqlstate
SELECT onnx_run('iris_rf', '{"float_input": [[5.1,3.5,1.4,1e300]]}');
:sqlstate
SELECT onnx_run('iris_rf', '{"float_input": [[5.1,3.5,1.4,{"a":1}]]}');
:sqlstate
-- the engine checks shapes against the model
SELECT onnx_run('iris_rf', '{"float_input": [[5.1,3.5,1.4]]}');
:sqlstate
SELECT onnx_run('iris_rf', '{"float_input": [5.1,3.5,1.4,0.2]}');
:sqlstate
-- JSON has no NaN: the strings "NaN" and "Infinity" stand for them
SELECT onnx_run('iris_rf', '{"float_input": [["NaN","Infinity","-Infinity",0]]}') ? 'output_label' AS nan_strings_ok;

-- ---- settings ----

SET onnx.providers = 'tpu';
:sqlstate
SET onnx.providers = 'cpu, gpu';
:sqlstate
SET onnx.graph_optimization_level = 'maximal';
:sqlstate
SET onnx.intra_op_threads = -1;
:sqlstate
SET onnx.session_cache_size = -1;
:sqlstate
SET onnx.no_such_setting = 1;
:sqlstate

-- the server is still up, the model still works
SELECT onnx_predict('iris_rf', '{5.1,3.5,1.4,0.2}');
SELECT onnx_drop_model('iris_rf');
