-- Quantization as SQL: onnx_quantize_dynamic, onnx_quantize_static and
-- onnx_quantize_report on the fixture MLP (Gemm, Relu, Tanh, Softmax) and
-- small CNN (Conv, BatchNorm, Relu, MaxPool, GlobalAveragePool, Gemm)
\getenv abs_srcdir PG_ABS_SRCDIR
\set models :abs_srcdir '/test/models'
SET client_min_messages = warning;
SELECT count(onnx_drop_model(m, if_exists => true)) >= 0 AS ready
  FROM unnest(ARRAY['q_mlp', 'q_cnn', 'q_mlp_dyn', 'q_mlp_pc', 'q_mlp_u8', 'q_mlp_st',
                    'q_mlp_qop', 'q_mlp_ent', 'q_mlp_json', 'q_cnn_st', 'q_cnn_dyn', 'q_mlp_rows',
                    'q_x']) m;
DROP TABLE IF EXISTS q_rows, q_imgs;
RESET client_min_messages;

SELECT onnx_load_model_file('q_mlp', :'models' || '/mlp.onnx') AS mlp,
       onnx_load_model_file('q_cnn', :'models' || '/small_cnn.onnx') AS cnn;

-- calibration rows, deterministic: 16 features per MLP sample, 3x16x16 per image
CREATE TABLE q_rows AS
  SELECT i, ARRAY(SELECT sin(i * 16 + j)::real FROM generate_series(1, 16) j) AS f
    FROM generate_series(1, 64) i;
CREATE TABLE q_imgs AS
  SELECT i, ARRAY(SELECT (sin(i * 768 + j * 0.37) * 2)::real FROM generate_series(1, 768) j) AS f
    FROM generate_series(1, 24) i;

-- ---- dynamic ------------------------------------------------------------------------

SELECT model, version, nodes_total, nodes_quantized, quantized_ops,
       size_after < size_before AS smaller, calibration_rows
  FROM onnx_quantize_dynamic('q_mlp', 'q_mlp_dyn');
-- the stored model: standard integer operators, runs, close to the source
SELECT op_histogram FROM onnx_model_info('q_mlp_dyn');
SELECT array_length(onnx_predict('q_mlp_dyn', f), 1) AS outputs FROM q_rows WHERE i = 1;
SELECT compared_with, output_name, rows, mean_abs_diff < 0.01 AS close, max_abs_diff < 0.05 AS bounded,
       argmax_agreement >= 0.95 AS agrees
  FROM onnx_quantize_report('q_mlp_dyn', 'SELECT f FROM q_rows');
SELECT lineage->>'quantized_from' AS source, lineage->>'mode' AS mode,
       lineage->>'weight_type' AS weight_type, lineage->>'per_channel' AS per_channel,
       lineage->>'source_version' AS source_version, length(lineage->>'source_sha256') AS sha_len
  FROM onnx_models WHERE name = 'q_mlp_dyn';

-- options: per-channel uint8 weights in 7 bits; op types and excluded nodes
SELECT model, nodes_quantized, quantized_ops
  FROM onnx_quantize_dynamic('q_mlp', 'q_mlp_pc', weight_type => 'uint8', per_channel => true,
                             reduce_range => true, symmetric_weights => false);
SELECT lineage->>'weight_type' AS weight_type, lineage->>'reduce_range' AS reduce_range,
       lineage->>'symmetric_weights' AS symmetric_weights
  FROM onnx_models WHERE name = 'q_mlp_pc';
SELECT rows, mean_abs_diff < 0.02 AS close FROM onnx_quantize_report('q_mlp_pc', 'SELECT f FROM q_rows');
SELECT nodes_quantized, quantized_ops
  FROM onnx_quantize_dynamic('q_mlp', 'q_mlp_u8', op_types => ARRAY['Gemm'],
                             exclude_nodes => ARRAY['/fc3/Gemm']);
SELECT lineage->'op_types' AS op_types, lineage->'exclude_nodes' AS exclude_nodes
  FROM onnx_models WHERE name = 'q_mlp_u8';
-- a CNN: ConvInteger
SELECT nodes_quantized, quantized_ops FROM onnx_quantize_dynamic('q_cnn', 'q_cnn_dyn');
SELECT rows, mean_abs_diff < 0.05 AS close FROM onnx_quantize_report('q_cnn_dyn', 'SELECT f FROM q_imgs');
-- per-row activations: one scale and zero point per row, in standard operators
-- (no DynamicQuantizeLinear), which the session runs as one fused kernel per product
SELECT nodes_quantized, quantized_ops
  FROM onnx_quantize_dynamic('q_mlp', 'q_mlp_rows', per_channel => true, per_row_activations => true);
SELECT lineage->>'per_row_activations' AS per_row_activations,
       lineage->>'per_channel' AS per_channel
  FROM onnx_models WHERE name = 'q_mlp_rows';
SELECT op_histogram ? 'ReduceMin' AS row_ranges, op_histogram ? 'DynamicQuantizeLinear' AS per_tensor,
       op_histogram->'MatMulInteger' AS products
  FROM onnx_model_info('q_mlp_rows');
SELECT op_type, count(*) FROM onnx_model_placement('q_mlp_rows')
  WHERE op_type LIKE '%Quantize%' OR op_type LIKE '%Integer%' GROUP BY op_type;
SELECT rows, mean_abs_diff < 0.01 AS close, argmax_agreement >= 0.95 AS agrees
  FROM onnx_quantize_report('q_mlp_rows', 'SELECT f FROM q_rows');

-- ---- static ------------------------------------------------------------------------

SELECT model, version, nodes_total, nodes_quantized, quantized_ops, calibration_rows
  FROM onnx_quantize_static('q_mlp', 'q_mlp_st', 'SELECT f FROM q_rows');
SELECT op_histogram FROM onnx_model_info('q_mlp_st');
SELECT rows, mean_abs_diff < 0.01 AS close, argmax_agreement >= 0.9 AS agrees
  FROM onnx_quantize_report('q_mlp_st', 'SELECT f FROM q_rows');
SELECT lineage->>'mode' AS mode, lineage->>'format' AS format, lineage->>'method' AS method,
       lineage->>'activation_type' AS activation_type, lineage->'calibration' AS calibration
  FROM onnx_models WHERE name = 'q_mlp_st';

-- QOperator format, percentile calibration, rows one at a time, fewer rows
SELECT nodes_quantized, quantized_ops, calibration_rows
  FROM onnx_quantize_static('q_mlp', 'q_mlp_qop', 'SELECT f FROM q_rows ORDER BY i',
                            method => 'percentile', percentile => 99.9, format => 'qoperator',
                            batch_size => 1, max_rows => 40);
SELECT op_histogram FROM onnx_model_info('q_mlp_qop');
SELECT rows, mean_abs_diff < 0.02 AS close FROM onnx_quantize_report('q_mlp_qop', 'SELECT f FROM q_rows');
-- entropy calibration, int8 activations, symmetric
SELECT nodes_quantized, calibration_rows
  FROM onnx_quantize_static('q_mlp', 'q_mlp_ent', 'SELECT f FROM q_rows', method => 'entropy',
                            activation_type => 'int8', symmetric_activations => true,
                            per_channel => false);
SELECT rows, mean_abs_diff < 0.05 AS close FROM onnx_quantize_report('q_mlp_ent', 'SELECT f FROM q_rows');
-- inputs by name, as a jsonb object per row
SELECT calibration_rows
  FROM onnx_quantize_static('q_mlp', 'q_mlp_json',
                            $$SELECT jsonb_build_object('input', jsonb_build_array(to_jsonb(f))) FROM q_rows$$);
-- the CNN: Conv+BatchNorm folded, Relu absorbed, everything in int8
SELECT nodes_total, nodes_quantized, quantized_ops, calibration_rows
  FROM onnx_quantize_static('q_cnn', 'q_cnn_st', 'SELECT f FROM q_imgs', batch_size => 8);
SELECT rows, mean_abs_diff < 0.05 AS close
  FROM onnx_quantize_report('q_cnn_st', 'SELECT f FROM q_imgs', source => 'q_cnn', output => 'output');

-- progress of a long quantization (every phase, with onnx.progress_interval = 0)
SET onnx.progress_interval = 0;
\set VERBOSITY terse
SELECT calibration_rows FROM onnx_quantize_static('q_mlp', 'q_x', 'SELECT f FROM q_rows');
\set VERBOSITY default
RESET onnx.progress_interval;
SELECT onnx_drop_model('q_x');

-- replacing an existing target needs replace => true
SELECT model, version FROM onnx_quantize_dynamic('q_mlp', 'q_mlp_dyn', replace => true);

-- ---- errors ------------------------------------------------------------------------

-- a target that exists
SELECT * FROM onnx_quantize_dynamic('q_mlp', 'q_mlp_dyn');
SELECT * FROM onnx_quantize_static('q_mlp', 'q_mlp_st', 'SELECT f FROM q_rows');
-- an already quantized model
SELECT * FROM onnx_quantize_dynamic('q_mlp_dyn', 'q_x', replace => true);
SELECT * FROM onnx_quantize_static('q_mlp_st', 'q_x', 'SELECT f FROM q_rows', replace => true);
-- unknown source, unknown settings
SELECT * FROM onnx_quantize_dynamic('q_nope', 'q_x');
SELECT * FROM onnx_quantize_static('q_mlp', 'q_x', 'SELECT f FROM q_rows', method => 'median');
SELECT * FROM onnx_quantize_static('q_mlp', 'q_x', 'SELECT f FROM q_rows', format => 'qlinear');
SELECT * FROM onnx_quantize_dynamic('q_mlp', 'q_x', weight_type => 'int4');
SELECT * FROM onnx_quantize_static('q_mlp', 'q_x', 'SELECT f FROM q_rows', activation_type => 'float');
SELECT * FROM onnx_quantize_dynamic('q_mlp', 'q_x', op_types => ARRAY['Softmax']);
SELECT * FROM onnx_quantize_dynamic('q_mlp', 'q_x', op_types => ARRAY['Conv']);
SELECT * FROM onnx_quantize_dynamic('q_mlp', 'q_x', op_types => ARRAY['Gemm', NULL]);
SELECT * FROM onnx_quantize_dynamic('q_mlp', 'q_x', per_row_activations => NULL);
SELECT * FROM onnx_quantize_static('q_mlp', 'q_x', 'SELECT f FROM q_rows', percentile => 0);
SELECT * FROM onnx_quantize_static('q_mlp', 'q_x', 'SELECT f FROM q_rows', batch_size => 0);
SELECT * FROM onnx_quantize_static('q_mlp', 'q_x', 'SELECT f FROM q_rows', max_rows => 0);
SELECT * FROM onnx_quantize_static('q_mlp', NULL, 'SELECT f FROM q_rows');
SELECT * FROM onnx_quantize_static('q_mlp', 'q_x', NULL);
-- calibration queries of the wrong shape, or without rows
SELECT * FROM onnx_quantize_static('q_mlp', 'q_x', 'SELECT f, f FROM q_rows');
SELECT * FROM onnx_quantize_static('q_mlp', 'q_x', 'SELECT i FROM q_rows');
SELECT * FROM onnx_quantize_static('q_mlp', 'q_x', 'SELECT f[1:5] FROM q_rows');
SELECT * FROM onnx_quantize_static('q_mlp', 'q_x', 'SELECT NULL::real[] FROM q_rows');
SELECT * FROM onnx_quantize_static('q_mlp', 'q_x', 'SELECT f FROM q_rows WHERE false');
SELECT * FROM onnx_quantize_static('q_mlp', 'q_x', 'SELEKT f FROM q_rows');
SELECT * FROM onnx_quantize_static('q_mlp', 'q_x', 'UPDATE q_rows SET i = i');
SELECT * FROM onnx_quantize_static('q_mlp', 'q_x', $$SELECT '{"other": [1]}'::jsonb$$);
-- calibration is cancelable
SET statement_timeout = '300ms';
SELECT model FROM onnx_quantize_static('q_mlp', 'q_x',
                                       $$SELECT f FROM q_rows WHERE pg_sleep(0.05)::text = ''$$,
                                       batch_size => 1);
RESET statement_timeout;
SELECT count(*) AS leftover FROM onnx_models WHERE name = 'q_x';
-- reports: no lineage, unknown output, wrong shape
SELECT * FROM onnx_quantize_report('q_mlp', 'SELECT f FROM q_rows');
SELECT * FROM onnx_quantize_report('q_mlp_st', 'SELECT f FROM q_rows', output => 'nope');
SELECT * FROM onnx_quantize_report('q_mlp_st', 'SELECT f, f FROM q_rows');
SELECT rows, mean_abs_diff, argmax_agreement
  FROM onnx_quantize_report('q_mlp_st', 'SELECT f FROM q_rows WHERE false');

-- clean up
SET client_min_messages = warning;
SELECT count(onnx_drop_model(m, if_exists => true)) AS dropped
  FROM unnest(ARRAY['q_mlp', 'q_cnn', 'q_mlp_dyn', 'q_mlp_pc', 'q_mlp_u8', 'q_mlp_st',
                    'q_mlp_qop', 'q_mlp_ent', 'q_mlp_json', 'q_cnn_st', 'q_cnn_dyn', 'q_mlp_rows',
                    'q_x']) m;
DROP TABLE q_rows, q_imgs;
RESET client_min_messages;
