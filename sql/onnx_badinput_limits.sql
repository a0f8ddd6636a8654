-- Limits: onnx.max_model_size (largest model a load accepts) and
-- onnx.max_run_memory (most tensor memory one inference may hold).  Both are
-- superuser settings; exceeding either is an ERROR (54000) before the
-- allocation, never an out-of-memory kill.
\getenv abs_srcdir PG_ABS_SRCDIR
\set bad :abs_srcdir '/test/models/bad/'
\set sqlstate '\\echo SQLSTATE :LAST_ERROR_SQLSTATE'
SELECT pg_postmaster_start_time() AS start_time \gset
-- load the library, so that the settings are defined (not placeholders)
SELECT onnx_load_model_file('base', :'bad' || 'ok_base.onnx');

SELECT name, setting, unit, context, vartype, min_val, max_val, boot_val
  FROM pg_settings WHERE name IN ('onnx.max_model_size', 'onnx.max_load_memory', 'onnx.max_run_memory')
  ORDER BY name;
SHOW onnx.max_model_size;
SHOW onnx.max_load_memory;
SHOW onnx.max_run_memory;

-- bad values: 0 (and what rounds to it), below -1, not a size
SET onnx.max_model_size = 0;
:sqlstate
SET onnx.max_model_size = '100kB';
:sqlstate
SET onnx.max_run_memory = -2;
:sqlstate
SET onnx.max_run_memory = 'lots';
:sqlstate
SET onnx.max_load_memory = 0;
:sqlstate

-- ---- onnx.max_model_size ----
-- a 2 MB model: the base model with a 2,000,000-byte doc_string appended
-- (ModelProto field 6; protobuf merges fields that come late)
SELECT pg_read_binary_file(:'bad' || 'ok_base.onnx') || '\x3280897a'::bytea ||
       convert_to(repeat('x', 2000000), 'UTF8') AS big \gset
SELECT length(:'big'::bytea) AS big_bytes;
SET onnx.max_model_size = '1MB';
SELECT onnx_load_model('big', :'big'::bytea);
:sqlstate
SELECT * FROM onnx_model_inputs(:'big'::bytea);
:sqlstate
-- a file is refused before it is read
SELECT lo_from_bytea(0, :'big'::bytea) AS big_oid \gset
SELECT lo_export(:big_oid, 'onnx_badinput_big.onnx') AS exported, lo_unlink(:big_oid) AS unlinked;
SELECT onnx_load_model_file('big', 'onnx_badinput_big.onnx');
:sqlstate
-- a model under the limit loads
SELECT onnx_load_model('small', pg_read_binary_file(:'bad' || 'ok_base.onnx'));
-- no limit
SET onnx.max_model_size = -1;
SELECT onnx_load_model('big', :'big'::bytea);
SELECT onnx_load_model_file('big_file', 'onnx_badinput_big.onnx');
-- a model stored before the limit was lowered keeps working
SET onnx.max_model_size = '1MB';
SELECT onnx_predict('big', '{1,2,3,4}');
SELECT onnx_load_model('big', :'big'::bytea, replace => true);
:sqlstate
RESET onnx.max_model_size;
SELECT name, size_bytes FROM onnx_models ORDER BY name;

-- ---- onnx.max_load_memory ----
-- What a model unpacks into, estimated from its bytes before any of it is
-- unpacked: protobuf-c records every field it reads, so an empty node, 2
-- bytes of file, takes about 200 in memory.  100,000 of them, 200 kB,
-- would take about 21 MB (the same bytes at 1 GB of file, under
-- onnx.max_model_size's default, would take the server out of memory).
SELECT pg_read_binary_file(:'bad' || 'ok_base.onnx') || '\x3ac09a0c'::bytea ||
       decode(repeat('0a00', 100000), 'hex') AS empty_nodes \gset
SELECT length(:'empty_nodes'::bytea) AS empty_nodes_bytes;
SET onnx.max_load_memory = '16MB';
SELECT onnx_model_info(:'empty_nodes'::bytea);
:sqlstate
SELECT onnx_load_model('empty_nodes', :'empty_nodes'::bytea);
:sqlstate
-- a stored model is not checked again (limits apply to what arrives)
SET onnx.max_load_memory = 1;
SELECT ir_version, graph_name FROM onnx_model_info('base');
-- under the default, unpacked and then refused for what it is
RESET onnx.max_load_memory;
SELECT onnx_model_info(:'empty_nodes'::bytea);
:sqlstate
-- The same limit bounds the JSON of a node's attributes, checked before it
-- is built (about 72 bytes a number): a Constant of 20,000 value_floats
-- takes about 1.4 MB to show, more than 1 MB allows.
SELECT onnx_load_model_file('long_attribute', :'bad' || 'ok_long_attribute.onnx');
SELECT op_type, jsonb_array_length(attributes -> 'value_floats') AS values
  FROM onnx_model_nodes('long_attribute');
SET onnx.max_load_memory = 1;
SELECT op_type FROM onnx_model_nodes('long_attribute');
:sqlstate
RESET onnx.max_load_memory;
SELECT onnx_drop_model('long_attribute');

-- ---- onnx.max_run_memory ----
-- 70,000 samples of 4 floats: 1.1 MB of input
SET onnx.max_run_memory = '1MB';
SELECT onnx_predict_batch('base', array_fill(1::real, ARRAY[70000, 4])) IS NULL;
:sqlstate
SELECT onnx_run('base', jsonb_build_object('X',
         (SELECT jsonb_agg('[1, 2, 3, 4]'::jsonb) FROM generate_series(1, 70000)))) IS NULL;
:sqlstate
-- under the limit
SELECT array_length(onnx_predict_batch('base', array_fill(1::real, ARRAY[1000, 4])), 1) AS rows;
SET onnx.max_run_memory = -1;
SELECT array_length(onnx_predict_batch('base', array_fill(1::real, ARRAY[70000, 4])), 1) AS rows;
-- the setting is part of a cached session's identity: changing it rebuilds the session
SELECT misses AS misses_before FROM onnx_cache_stats() WHERE model = 'base' \gset
SET onnx.max_run_memory = '2MB';
SELECT onnx_predict('base', '{1,2,3,4}');
SELECT misses - :misses_before AS sessions_rebuilt FROM onnx_cache_stats() WHERE model = 'base';
-- Tensors made inside a run count too: ConstantOfShape [1024, 1024] makes
-- 4 MB from an input of two numbers, refused before it is allocated; [64,
-- 256] (64 kB, and about 1.2 MB to build as JSON, which counts as well:
-- below) fits.
SELECT onnx_load_model_file('cos', :'bad' || 'ok_constant_of_shape.onnx');
SELECT jsonb_array_length(onnx_run('cos', '{"S": [1024, 1024]}') -> 'Y') AS rows;
:sqlstate
SELECT jsonb_array_length(onnx_run('cos', '{"S": [64, 256]}') -> 'Y') AS rows;
RESET onnx.max_run_memory;
SELECT jsonb_array_length(onnx_run('cos', '{"S": [1024, 1024]}') -> 'Y') AS rows;
-- The JSON of a result counts as well, checked before any of it is built.
-- An empty tensor takes no memory, but its JSON has an array for each index
-- of every dimension but the last: [4294967296, 89, 0] would be 382
-- billion of them, more than any jsonb holds, refused with or without a
-- limit; few of them are an empty result.
SELECT onnx_run('cos', '{"S": [4294967296, 89, 0]}');
:sqlstate
SET onnx.max_run_memory = -1;
SELECT onnx_run('cos', '{"S": [4294967296, 89, 0]}');
:sqlstate
RESET onnx.max_run_memory;
SELECT onnx_run('cos', '{"S": [3, 0]}');
-- Building JSON takes about 72 bytes a number and 256 an array: [400000,
-- 1] is a 1.6 MB tensor but about 125 MB of JSON to build, refused under 64
-- MB; [100000, 1], about 31 MB, fits.
SET onnx.max_run_memory = '64MB';
SELECT onnx_run('cos', '{"S": [400000, 1]}');
:sqlstate
SELECT jsonb_array_length(onnx_run('cos', '{"S": [100000, 1]}') -> 'Y') AS rows;
RESET onnx.max_run_memory;
-- Workspaces count as well: a double Conv of a 64x64 image with a 33x33
-- kernel unrolls the image into 8.9 MB of columns (im2col) while its
-- inputs and output take 48 kB; refused under 2 MB before the allocation.
SELECT onnx_load_model_file('conv_d', :'bad' || 'ok_conv_double.onnx');
SELECT jsonb_build_object('X', to_jsonb(array_fill(1::float8, ARRAY[1, 1, 64, 64])),
                          'W', to_jsonb(array_fill(1::float8, ARRAY[1, 1, 33, 33]))) AS conv_in \gset
SET onnx.max_run_memory = '2MB';
SELECT onnx_run('conv_d', :'conv_in') -> 'Y' -> 0 -> 0 -> 0 -> 0 AS y;
:sqlstate
RESET onnx.max_run_memory;
SELECT onnx_run('conv_d', :'conv_in') -> 'Y' -> 0 -> 0 -> 0 -> 0 AS y;

-- Sequences hold copies: four of a 512 kB tensor make 2 MB, refused under
-- 2 MB (the run also holds the tensor); 128 kB ones fit.
SELECT onnx_load_model_file('seq4', :'bad' || 'ok_sequence_copies.onnx');
SET onnx.max_run_memory = '2MB';
SELECT onnx_run('seq4', '{"S": [256, 512]}') -> 'N' AS n;
:sqlstate
SELECT onnx_run('seq4', '{"S": [128, 256]}') -> 'N' AS n;
RESET onnx.max_run_memory;
SELECT onnx_run('seq4', '{"S": [256, 512]}') -> 'N' AS n;

-- ---- only superusers change the limits ----
CREATE ROLE onnx_limits_user;
GRANT USAGE ON SCHEMA public TO onnx_limits_user;
SET ROLE onnx_limits_user;
SET onnx.max_model_size = -1;
:sqlstate
SET onnx.max_run_memory = '100GB';
:sqlstate
SHOW onnx.max_model_size;
RESET ROLE;
-- a superuser may set them per role
ALTER ROLE onnx_limits_user SET onnx.max_run_memory = '16MB';
SELECT unnest(setconfig) AS role_setting FROM pg_db_role_setting
 WHERE setrole = 'onnx_limits_user'::regrole;
REVOKE USAGE ON SCHEMA public FROM onnx_limits_user;
DROP ROLE onnx_limits_user;

SELECT onnx_drop_model(name) FROM onnx_models ORDER BY name;
SELECT pg_postmaster_start_time() = :'start_time' AS server_never_restarted;
