-- Loading, replacing, exporting and dropping models
\getenv abs_srcdir PG_ABS_SRCDIR
\set models :abs_srcdir '/test/models'
\set iris_file :models '/iris_rf.onnx'
\set mlp_file :models '/mlp.onnx'

SELECT onnx_load_model_file('iris_rf', :'iris_file');
SELECT name, version, size_bytes, length(sha256) AS sha_hex_len, ir_version, opsets, producer,
       owner, providers, created_at = updated_at AS unchanged
  FROM onnx_models ORDER BY name;

-- the stored bytes come back byte for byte
SELECT sha256(onnx_export_model('iris_rf')) = sha256(pg_read_binary_file(:'iris_file')) AS same_bytes,
       encode(sha256(pg_read_binary_file(:'iris_file')), 'hex') = sha256 AS sha_matches
  FROM onnx_models WHERE name = 'iris_rf';

-- client-side upload: bytes as a parameter
SELECT onnx_load_model('iris_copy', onnx_export_model('iris_rf'));

-- replacing needs the flag, never a silent overwrite
SELECT onnx_load_model('iris_copy', pg_read_binary_file(:'mlp_file'));
SELECT version, producer FROM onnx_models WHERE name = 'iris_copy';
SELECT onnx_load_model('iris_copy', pg_read_binary_file(:'mlp_file'), replace => true);
SELECT version, producer, opsets, updated_at >= created_at AS updated FROM onnx_models WHERE name = 'iris_copy';
SELECT onnx_load_model_file('iris_copy', :'iris_file', true);
SELECT version, producer FROM onnx_models WHERE name = 'iris_copy';

-- names
SELECT onnx_load_model('', onnx_export_model('iris_rf'));
SELECT onnx_load_model(repeat('x', 257), onnx_export_model('iris_rf'));

-- per-model provider override
SELECT onnx_set_model_providers('iris_copy', ARRAY['CPU']);
SELECT providers FROM onnx_models WHERE name = 'iris_copy';
SELECT onnx_set_model_providers('iris_copy', ARRAY['cuda', 'cpu', 'cuda']);
SELECT providers FROM onnx_models WHERE name = 'iris_copy';
SELECT onnx_set_model_providers('iris_copy', ARRAY['tpu', 'cpu']);
SELECT onnx_set_model_providers('iris_copy', NULL);
SELECT providers FROM onnx_models WHERE name = 'iris_copy';
SELECT onnx_set_model_providers('nosuch', ARRAY['cpu']);

-- dropping
SELECT onnx_drop_model('iris_copy');
SELECT onnx_drop_model('iris_copy');
SELECT onnx_drop_model('iris_copy', if_exists => true);
SELECT count(*) FROM onnx_models WHERE name = 'iris_copy';

-- server files need pg_read_server_files; models belong to their loader
CREATE ROLE onnx_test_user;
GRANT USAGE ON SCHEMA public TO onnx_test_user;
SET ROLE onnx_test_user;
SELECT onnx_load_model_file('x', :'iris_file');
SELECT onnx_load_model('user_model', onnx_export_model('iris_rf'));
SELECT name, owner FROM onnx_models ORDER BY name;
SELECT onnx_drop_model('iris_rf');
SELECT onnx_load_model('iris_rf', onnx_export_model('iris_rf'), true);
SELECT count(*) FROM onnx_model_store;
RESET ROLE;
-- a superuser may drop anyone's model
SELECT onnx_drop_model('user_model');
REVOKE USAGE ON SCHEMA public FROM onnx_test_user;
DROP ROLE onnx_test_user;

-- loading is all or nothing: nothing stored after an error
SELECT onnx_load_model_file('missing', 'does_not_exist.onnx');
SELECT onnx_load_model_file('dir', '.');
SELECT name FROM onnx_models ORDER BY name;

-- NULL arguments: STRICT
SELECT onnx_load_model(NULL, NULL) IS NULL AS is_null;

SELECT onnx_drop_model('iris_rf');
