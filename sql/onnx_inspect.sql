-- Inspection of stored models (by name) and raw bytes
\getenv abs_srcdir PG_ABS_SRCDIR
\set models :abs_srcdir '/test/models'
\set iris_file :models '/iris_rf.onnx'
\set mlp_file :models '/mlp.onnx'
\set cnn_file :models '/small_cnn.onnx'

SELECT onnx_load_model_file('iris_rf', :'iris_file', true);
SELECT onnx_load_model_file('small_cnn', :'cnn_file', true);

SELECT * FROM onnx_model_info('iris_rf');
SELECT ir_version, opsets, producer_name, graph_name, node_count, initializer_count,
       initializer_bytes, op_histogram
  FROM onnx_model_info('small_cnn');
-- raw bytes give the same answer as the stored model
SELECT (SELECT row(i.*) FROM onnx_model_info(pg_read_binary_file(:'iris_file')) i)
     = (SELECT row(i.*) FROM onnx_model_info('iris_rf') i) AS same_info;

SELECT * FROM onnx_model_inputs('iris_rf');
SELECT * FROM onnx_model_outputs('iris_rf');
-- symbolic dimensions are shown by name
SELECT * FROM onnx_model_inputs(pg_read_binary_file(:'mlp_file'));
SELECT * FROM onnx_model_outputs(pg_read_binary_file(:'mlp_file'));
SELECT * FROM onnx_model_inputs('small_cnn');

-- nodes in execution order with their attributes
SELECT ordinal, name, op_type, domain, inputs, outputs,
       (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(attributes) k) AS attribute_names
  FROM onnx_model_nodes('iris_rf');
SELECT attributes -> 'classlabels_int64s' AS classes, attributes -> 'post_transform' AS post_transform,
       jsonb_array_length(attributes -> 'nodes_featureids') AS tree_nodes
  FROM onnx_model_nodes('iris_rf') WHERE op_type = 'TreeEnsembleClassifier';
SELECT ordinal, name, op_type, domain, inputs, outputs, attributes
  FROM onnx_model_nodes(pg_read_binary_file(:'cnn_file'));

-- a hand-made model: Y = X * 2 + 1 with scalar initializers
SELECT * FROM onnx_model_info(decode('0808120d6f6e6e785f70675f74657374733a80010a150a01580a0374776f1201541a036d756c22034d756c0a150a01540a036f6e651201591a0361646422034164641206616666696e652a0d1001220400000040420374776f2a0d100122040000803f42036f6e655a140a0158120f0a0d080112090a0312014e0a02080262140a0159120f0a0d080112090a0312014e0a02080242040a001011', 'hex'));
SELECT * FROM onnx_model_inputs(decode('0808120d6f6e6e785f70675f74657374733a80010a150a01580a0374776f1201541a036d756c22034d756c0a150a01540a036f6e651201591a0361646422034164641206616666696e652a0d1001220400000040420374776f2a0d100122040000803f42036f6e655a140a0158120f0a0d080112090a0312014e0a02080262140a0159120f0a0d080112090a0312014e0a02080242040a001011', 'hex'));

SELECT onnx_drop_model('iris_rf');
SELECT onnx_drop_model('small_cnn');
