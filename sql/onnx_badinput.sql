-- Hostile models and inputs: every case is an ERROR with a SQLSTATE (printed
-- after it) and a detail, and the server never restarts.  The model files
-- are test/models/bad/*.onnx, made by test/models/make_bad_models.py; its
-- README lists what each file breaks.
\getenv abs_srcdir PG_ABS_SRCDIR
\set bad :abs_srcdir '/test/models/bad/'
\set models :abs_srcdir '/test/models/'
\set sqlstate '\\echo SQLSTATE :LAST_ERROR_SQLSTATE'
SET client_min_messages = notice;
SELECT pg_postmaster_start_time() AS start_time, pg_backend_pid() AS start_pid \gset

-- ---- malformed protobuf (read from server files) ----
SELECT onnx_load_model_file('bad', :'bad' || 'proto_random.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'proto_truncated_half.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'proto_truncated_last_byte.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'proto_bad_varint.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'proto_length_overflow.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'proto_length_past_end.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'proto_wrong_wire_type.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'proto_group_wire_type.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'proto_field_zero.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'proto_deep_nesting.onnx');
:sqlstate
-- a directory and a missing file
-- (paths relative to the data directory, so the messages do not depend on
-- where the source tree is checked out)
SELECT onnx_load_model_file('bad', 'base');
:sqlstate
SELECT onnx_load_model_file('bad', 'no_such_file.onnx');
:sqlstate

-- ---- other file formats (wrong magic), as bytes sent by a client ----
SELECT onnx_load_model('bad', pg_read_binary_file(:'bad' || 'magic_zip.onnx'));
:sqlstate
SELECT onnx_load_model('bad', pg_read_binary_file(:'bad' || 'magic_gzip.onnx'));
:sqlstate
SELECT onnx_load_model('bad', pg_read_binary_file(:'bad' || 'magic_ort.onnx'));
:sqlstate
SELECT onnx_load_model('bad', pg_read_binary_file(:'bad' || 'magic_pickle.onnx'));
:sqlstate
SELECT onnx_load_model('bad', pg_read_binary_file(:'bad' || 'magic_text.onnx'));
:sqlstate
SELECT onnx_load_model('bad', pg_read_binary_file(:'bad' || 'magic_tflite.onnx'));
:sqlstate
-- the inspection functions parse raw bytes the same way
SELECT * FROM onnx_model_info(pg_read_binary_file(:'bad' || 'magic_zip.onnx'));
:sqlstate
SELECT * FROM onnx_model_nodes(pg_read_binary_file(:'bad' || 'proto_truncated_half.onnx'));
:sqlstate

-- ---- the model: IR version, opsets, domains, functions ----
SELECT onnx_load_model_file('bad', :'bad' || 'model_no_graph.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'model_no_ir_version.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'model_ir_version_99.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'model_ir_version_negative.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'model_no_opset.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'model_opset_zero.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'model_opset_huge.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'model_opset_twice.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'model_domain_not_imported.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'model_unknown_domain.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'model_unknown_op.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'model_local_function.onnx');
:sqlstate

-- ---- graph structure: cycles, duplicate and missing names ----
SELECT onnx_load_model_file('bad', :'bad' || 'graph_cycle.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'graph_self_loop.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'graph_duplicate_output.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'graph_duplicate_input.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'graph_duplicate_initializer.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'graph_node_redefines_input.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'graph_missing_initializer.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'graph_missing_input.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'graph_output_not_produced.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'graph_no_outputs.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'graph_node_no_op.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'graph_input_no_name.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'graph_initializer_no_name.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'graph_duplicate_attribute.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'graph_ref_attr_outside_function.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'graph_attribute_type_99.onnx');
:sqlstate

-- ---- tensors: data that does not match its shape, absurd shapes, external data ----
SELECT onnx_load_model_file('bad', :'bad' || 'tensor_raw_data_short.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'tensor_raw_data_long.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'tensor_float_data_short.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'tensor_int64_odd_bytes.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'tensor_dtype_undefined.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'tensor_dtype_99.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'tensor_negative_dim.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'tensor_huge_dims.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'tensor_numel_overflow.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'tensor_bytes_overflow.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'tensor_rank_18.onnx');
:sqlstate
-- external data must never make the server read a file
SELECT onnx_load_model_file('bad', :'bad' || 'tensor_external_absolute.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'tensor_external_relative.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'tensor_segmented.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'tensor_string_raw_data.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'tensor_sparse_index_out_of_range.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'tensor_sparse_count_mismatch.onnx');
:sqlstate

-- ---- declared types: huge, negative, deep, unknown ----
SELECT onnx_load_model_file('bad', :'bad' || 'type_huge_dim.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'type_negative_dim.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'type_rank_20.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'type_elem_99.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'type_nested_sequences.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'type_opaque.onnx');
:sqlstate

-- ---- subgraphs: too deep, undefined names, missing parts ----
SELECT onnx_load_model_file('bad', :'bad' || 'subgraph_nested_30.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'subgraph_undefined_outer.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'subgraph_output_not_produced.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'subgraph_missing_branch.onnx');
:sqlstate

-- ---- nodes against the operator's schema: attributes unknown, of another kind, missing ----
SELECT onnx_load_model_file('bad', :'bad' || 'attr_unknown_name.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'attr_wrong_kind.onnx');
:sqlstate
-- inputs of one type variable (Add's A and B: T) with different element types
SELECT onnx_load_model_file('bad', :'bad' || 'dtype_add_float_int64.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'dtype_matmul_float_double.onnx');
:sqlstate

-- ---- attributes and types that the kernels check ----
-- Where the value alone decides (Cast's to, Conv's strides, Transpose's
-- perm), when the session is built: the load fails.
SELECT onnx_load_model_file('bad', :'bad' || 'attr_cast_to_99.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'attr_conv_zero_stride.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'attr_transpose_perm_repeats.onnx');
:sqlstate
SELECT onnx_load_model_file('bad', :'bad' || 'attr_transpose_perm_range.onnx');
:sqlstate
-- Where it takes the input's shape too, at the first run: these load.
SELECT onnx_load_model_file('bad_' || f, :'bad' || f || '.onnx') > 0 AS loaded, f
  FROM unnest(ARRAY['subgraph_loop_body_arity', 'attr_concat_axis_range',
                    'attr_softmax_axis_huge', 'attr_gemm_shapes', 'attr_conv_channels',
                    'const_reshape_two_minus_one', 'const_gather_out_of_range',
                    'const_expand_2p60']) AS f;
SELECT onnx_run('bad_subgraph_loop_body_arity', '{"M": 3, "C": true, "X": true}');
:sqlstate
SELECT onnx_predict('bad_attr_concat_axis_range', '{1,2,3,4}');
:sqlstate
SELECT onnx_predict('bad_attr_softmax_axis_huge', '{1,2,3,4}');
:sqlstate
SELECT onnx_predict('bad_attr_gemm_shapes', '{1,2,3,4}');
:sqlstate
SELECT onnx_predict('bad_attr_conv_channels', array_fill(1, ARRAY[16])::real[]);
:sqlstate
SELECT onnx_predict('bad_const_reshape_two_minus_one', '{1,2,3,4}');
:sqlstate
SELECT onnx_predict('bad_const_gather_out_of_range', '{1}');
:sqlstate
-- 2^60 elements: refused before any allocation
SELECT onnx_predict('bad_const_expand_2p60', '{1}');
:sqlstate
-- the failures above left the sessions usable: the same error again
SELECT onnx_predict('bad_attr_gemm_shapes', '{1,2,3,4}');
:sqlstate

-- ---- valid models, bad inputs ----
SELECT onnx_load_model_file(f, :'bad' || f || '.onnx') AS version, f
  FROM unnest(ARRAY['ok_base', 'ok_reshape', 'ok_gather', 'ok_constant_of_shape',
                    'ok_div_int64', 'ok_string', 'ok_two_inputs']) AS f;
SELECT onnx_predict('ok_base', '{1,2,3,4}');

-- wrong lengths and ranks
SELECT onnx_predict('ok_base', '{1,2,3}');
:sqlstate
SELECT onnx_predict_batch('ok_base', '{{1,2,3,4,5},{1,2,3,4,5}}');
:sqlstate
SELECT onnx_run('ok_base', '{"X": [1, 2, 3, 4]}');
:sqlstate
SELECT onnx_run('ok_base', '{"X": [[[1, 2, 3, 4]]]}');
:sqlstate
SELECT onnx_run('ok_base', '{"X": 1.5}');
:sqlstate
SELECT onnx_run('ok_two_inputs', '{"A": [[1, 2, 3], [4, 5, 6]], "B": [[1, 2], [3, 4], [5, 6]]}');
:sqlstate
-- multi-dimensional and ragged arrays
SELECT onnx_predict('ok_base', '{{1,2},{3,4}}');
:sqlstate
SELECT onnx_predict_batch('ok_base', '{{{1,2,3,4}}}');
:sqlstate
SELECT onnx_run('ok_base', '{"X": [[1, 2, 3, 4], [1, 2]]}');
:sqlstate
SELECT onnx_run('ok_base', '{"X": [[1, 2, 3, 4], 5]}');
:sqlstate
-- empty arrays
SELECT onnx_predict('ok_base', '{}');
:sqlstate
SELECT onnx_predict_batch('ok_base', '{}');
:sqlstate
SELECT onnx_run('ok_base', '{"X": []}');
:sqlstate
SELECT onnx_run('ok_base', '{"X": [[]]}');
:sqlstate
-- NULLs: a NULL argument gives NULL (the functions are STRICT); NULL
-- elements and NULL inputs are errors
SELECT onnx_predict(NULL, '{1,2,3,4}') IS NULL AS null_model,
       onnx_predict('ok_base', NULL) IS NULL AS null_features,
       onnx_run('ok_base', NULL) IS NULL AS null_inputs;
SELECT onnx_predict('ok_base', '{1,NULL,3,4}');
:sqlstate
SELECT onnx_predict_batch('ok_base', '{{1,2,3,4},{NULL,NULL,NULL,NULL}}');
:sqlstate
SELECT onnx_run('ok_base', '{"X": [[1, null, 3, 4]]}');
:sqlstate
SELECT onnx_run('ok_base', '{"X": null}');
:sqlstate
SELECT onnx_run('ok_string', '{"X": ["a", null]}');
:sqlstate
SELECT onnx_set_model_providers(NULL, ARRAY['cpu']);
:sqlstate
-- NaN and infinity: fine as floats (they propagate), errors where an integer is needed
SELECT onnx_predict('ok_base', '{NaN,Infinity,-Infinity,1}');
SELECT onnx_run('ok_reshape', '{"X": [1, 2, 3, 4], "S": ["NaN", 2]}');
:sqlstate
SELECT onnx_run('ok_reshape', '{"X": [1, 2, 3, 4], "S": ["Infinity", 2]}');
:sqlstate
SELECT onnx_run('ok_reshape', '{"X": [1, 2, 3, 4], "S": [1.5, 2]}');
:sqlstate
SELECT onnx_run('ok_reshape', '{"X": [1, 2, 3, 4], "S": [1e300, 2]}');
:sqlstate
SELECT onnx_run('ok_gather', '{"X": [1, 2, 3], "I": [1e19]}');
:sqlstate
-- wrong JSON types
SELECT onnx_run('ok_base', '[[1, 2, 3, 4]]');
:sqlstate
SELECT onnx_run('ok_base', '{"X": "1, 2, 3, 4"}');
:sqlstate
SELECT onnx_run('ok_base', '{"X": [[true, false, true, false]]}');
:sqlstate
SELECT onnx_run('ok_base', '{"X": [[{"v": 1}, 2, 3, 4]]}');
:sqlstate
SELECT onnx_run('ok_string', '{"X": [1, 2]}');
:sqlstate
-- missing, extra and unknown inputs and outputs
SELECT onnx_run('ok_two_inputs', '{"A": [[1, 2, 3], [4, 5, 6]]}');
:sqlstate
SELECT onnx_run('ok_base', '{"X": [[1, 2, 3, 4]], "Z": [1]}');
:sqlstate
SELECT onnx_predict('ok_two_inputs', '{1,2,3,4,5,6}');
:sqlstate
SELECT onnx_predict('ok_base', '{1,2,3,4}', 'no_such_output');
:sqlstate
SELECT onnx_predict('ok_base', '{1,2,3,4}', '');
:sqlstate
SELECT onnx_predict_batch('ok_base', '{{1,2,3,4}}', 'no_such_output');
:sqlstate
-- values that make the model itself fail
SELECT onnx_run('ok_reshape', '{"X": [1, 2, 3], "S": [4, 5]}');
:sqlstate
SELECT onnx_run('ok_reshape', '{"X": [1, 2, 3, 4], "S": [-1, -1]}');
:sqlstate
SELECT onnx_run('ok_gather', '{"X": [1, 2, 3], "I": [3]}');
:sqlstate
SELECT onnx_run('ok_gather', '{"X": [1, 2, 3], "I": [-4]}');
:sqlstate
SELECT onnx_run('ok_constant_of_shape', '{"S": [-1]}');
:sqlstate
SELECT onnx_run('ok_constant_of_shape', '{"S": [1048576, 1048576, 1048576]}');
:sqlstate
SELECT onnx_run('ok_div_int64', '{"A": [7, 8], "B": [1, 0]}');
:sqlstate
-- the most negative integer divided by -1 overflows: no crash either way
SELECT onnx_run('ok_div_int64', '{"A": [-9223372036854775808], "B": [-1]}') IS NOT NULL AS int_min_div_ok;

-- ---- model names ----
-- odd but valid names round-trip: quotes, SQL, newlines, format
-- directives, non-ASCII, spaces
SELECT onnx_load_model(n, pg_read_binary_file(:'bad' || 'ok_base.onnx')) AS version,
       onnx_predict(n, '{1,2,3,4}') AS prediction
  FROM unnest(ARRAY[E'it''s "quoted"; DROP TABLE onnx_model_store; --', E'new\nline',
                    '%s%n%x%p', 'ünïcödé 模型', ' ', repeat('é', 128)]) AS n;
SELECT count(*) AS odd_names FROM onnx_models
 WHERE name IN (E'it''s "quoted"; DROP TABLE onnx_model_store; --', E'new\nline',
                '%s%n%x%p', 'ünïcödé 模型', ' ', repeat('é', 128));
SELECT bool_and(onnx_drop_model(n)) AS dropped
  FROM unnest(ARRAY[E'it''s "quoted"; DROP TABLE onnx_model_store; --', E'new\nline',
                    '%s%n%x%p', 'ünïcödé 模型', ' ', repeat('é', 128)]) AS n;
-- invalid names
SELECT onnx_load_model('', pg_read_binary_file(:'bad' || 'ok_base.onnx'));
:sqlstate
SELECT onnx_load_model(repeat('x', 257), pg_read_binary_file(:'bad' || 'ok_base.onnx'));
:sqlstate
SELECT onnx_load_model(repeat('é', 129), pg_read_binary_file(:'bad' || 'ok_base.onnx'));
:sqlstate
-- a name no model can have is refused as such wherever a model is named
-- (the name is not echoed: it may be of any length)
SELECT onnx_predict(repeat('x', 300), '{1,2,3,4}');
:sqlstate
SELECT onnx_predict(repeat('x', 100000), '{1,2,3,4}');
:sqlstate
SELECT onnx_predict('', '{1,2,3,4}');
:sqlstate
SELECT onnx_drop_model(repeat('x', 300), if_exists => true);
:sqlstate
SELECT onnx_drop_model(repeat('x', 300));
:sqlstate
SELECT * FROM onnx_model_inputs(repeat('x', 300));
:sqlstate
SELECT onnx_predict('ok_base ', '{1,2,3,4}');
:sqlstate
SELECT onnx_predict('OK_BASE', '{1,2,3,4}');
:sqlstate

-- ---- nothing was stored by the failures, the server never restarted ----
SELECT name FROM onnx_models ORDER BY name;
SELECT onnx_drop_model(name) FROM onnx_models ORDER BY name;
SELECT pg_postmaster_start_time() = :'start_time' AS server_never_restarted,
       pg_backend_pid() = :start_pid AS same_backend;
