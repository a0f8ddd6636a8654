-- Execution providers.  This expected output is for a build without CUDA:
-- asking for cuda falls back to cpu with a NOTICE.  (A CUDA build on a
-- machine with a GPU needs an alternative expected file.)
\getenv abs_srcdir PG_ABS_SRCDIR
\set iris_file :abs_srcdir '/test/models/iris_rf.onnx'
SELECT onnx_load_model_file('prov_m', :'iris_file', true) AS version;

SHOW onnx.providers;
SET onnx.providers = 'CUDA,  cpu';
SHOW onnx.providers;
SELECT onnx_predict('prov_m', '{5.1,3.5,1.4,0.2}');
-- the notice comes once per setting, not per session
SELECT onnx_predict('prov_m', '{5.1,3.5,1.4,0.2}');
SELECT model, providers FROM onnx_cache_stats() WHERE model = 'prov_m';
RESET onnx.providers;
SELECT onnx_predict('prov_m', '{5.1,3.5,1.4,0.2}');

-- a per-model override takes precedence over onnx.providers
SELECT onnx_set_model_providers('prov_m', ARRAY['cuda']);
SELECT providers FROM onnx_models WHERE name = 'prov_m';
SELECT onnx_predict('prov_m', '{5.1,3.5,1.4,0.2}');
SELECT model, providers FROM onnx_cache_stats() WHERE model = 'prov_m';
SELECT onnx_set_model_providers('prov_m', NULL);
SELECT onnx_drop_model('prov_m');
