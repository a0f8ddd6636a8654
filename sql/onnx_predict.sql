-- Row-wise, batch and general inference on the fixture models
\getenv abs_srcdir PG_ABS_SRCDIR
\set models :abs_srcdir '/test/models'
\set iris_csv :models '/iris.csv'

-- load every fixture model
SELECT m, onnx_load_model_file(m, :'models' || '/' || m || '.onnx', true)
  FROM unnest(ARRAY['iris_rf', 'rf_regressor', 'logreg', 'scaler_logreg', 'gb_classifier',
                    'mlp', 'small_cnn']) AS m;

CREATE TABLE iris (id int PRIMARY KEY, sepal_length real, sepal_width real,
                   petal_length real, petal_width real, label int, sklearn_prediction int);
COPY iris FROM :'iris_csv' WITH (FORMAT csv, HEADER true);
ALTER TABLE iris ADD COLUMN features real[];
UPDATE iris SET features = ARRAY[sepal_length, sepal_width, petal_length, petal_width];

-- the label, as real[]; probabilities of the ZipMap output, dense, in class order
SELECT id, features, onnx_predict('iris_rf', features) AS label,
       (SELECT array_agg(round(p::numeric, 4) ORDER BY o)
          FROM unnest(onnx_predict('iris_rf', features, 'output_probability')) WITH ORDINALITY u(p, o)) AS probabilities
  FROM iris WHERE id IN (1, 51, 101, 71, 135) ORDER BY id;

-- predictions equal scikit-learn's for all 150 rows
SELECT count(*) AS rows,
       count(*) FILTER (WHERE onnx_predict('iris_rf', features) = ARRAY[sklearn_prediction::real]) AS same_as_sklearn
  FROM iris;

-- probabilities sum to one
SELECT count(*) FILTER (WHERE abs(p - 1) > 1e-5) AS bad_sums
  FROM (SELECT (SELECT sum(x) FROM unnest(onnx_predict('iris_rf', features, 'output_probability')) x) AS p
          FROM iris) s;

-- batch equals row-wise
WITH b AS (
    SELECT onnx_predict_batch('iris_rf', array_agg(features ORDER BY id)) AS labels,
           onnx_predict_batch('iris_rf', array_agg(features ORDER BY id), 'output_probability') AS probs
      FROM iris),
r AS (
    SELECT array_agg(l ORDER BY id, o) AS labels
      FROM iris, unnest(onnx_predict('iris_rf', features)) WITH ORDINALITY AS u(l, o)),
rp AS (
    SELECT array_agg(p ORDER BY id, o) AS probs
      FROM iris, unnest(onnx_predict('iris_rf', features, 'output_probability')) WITH ORDINALITY AS u(p, o))
SELECT array_dims(b.labels) AS label_dims, array_dims(b.probs) AS prob_dims,
       (SELECT array_agg(x) FROM unnest(b.labels) x) = r.labels AS labels_equal,
       (SELECT array_agg(x) FROM unnest(b.probs) x) = rp.probs AS probs_equal
  FROM b, r, rp;

SELECT onnx_predict_batch('iris_rf', ARRAY[[5.1, 3.5, 1.4, 0.2], [6.7, 3.0, 5.2, 2.3]]);
SELECT array_dims(p), round(p[1][1]::numeric, 4) AS p11, round(p[2][3]::numeric, 4) AS p23
  FROM onnx_predict_batch('iris_rf', ARRAY[[5.1, 3.5, 1.4, 0.2], [6.7, 3.0, 5.2, 2.3]],
                          'output_probability') p;

-- onnx_run: every output, sequences as arrays, maps as objects
SELECT r -> 'output_label' AS labels,
       jsonb_typeof(r -> 'output_probability') AS probability_type,
       (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(r -> 'output_probability' -> 0) k) AS classes,
       round((r -> 'output_probability' -> 1 ->> '2')::numeric, 4) AS p_class2
  FROM onnx_run('iris_rf', '{"float_input": [[5.1, 3.5, 1.4, 0.2], [6.7, 3.0, 5.2, 2.3]]}') r;

-- every fixture through onnx_run against onnxruntime's reference outputs:
-- labels identical, floats within rtol 1e-4, atol 1e-5
CREATE FUNCTION pg_temp.close(a jsonb, b jsonb) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    k text;
BEGIN
    IF jsonb_typeof(a) IS DISTINCT FROM jsonb_typeof(b) THEN
        RETURN false;
    END IF;
    CASE jsonb_typeof(a)
    WHEN 'number' THEN
        RETURN abs(a::numeric - b::numeric) <= 1e-5 + 1e-4 * abs(b::numeric);
    WHEN 'array' THEN
        IF jsonb_array_length(a) <> jsonb_array_length(b) THEN
            RETURN false;
        END IF;
        FOR i IN 0 .. jsonb_array_length(a) - 1 LOOP
            IF NOT pg_temp.close(a -> i, b -> i) THEN
                RETURN false;
            END IF;
        END LOOP;
        RETURN true;
    WHEN 'object' THEN
        IF (SELECT array_agg(x ORDER BY x) FROM jsonb_object_keys(a) x)
           IS DISTINCT FROM (SELECT array_agg(x ORDER BY x) FROM jsonb_object_keys(b) x) THEN
            RETURN false;
        END IF;
        FOR k IN SELECT jsonb_object_keys(a) LOOP
            IF NOT pg_temp.close(a -> k, b -> k) THEN
                RETURN false;
            END IF;
        END LOOP;
        RETURN true;
    ELSE
        RETURN a = b;
    END CASE;
END $$;

SELECT m,
       jsonb_array_length(inputs -> (SELECT k FROM jsonb_object_keys(inputs) k LIMIT 1)) AS samples,
       (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(result) k) AS outputs,
       (SELECT bool_and(COALESCE((result -> k) = (expected -> k), false))
          FROM jsonb_object_keys(expected) k WHERE k LIKE '%label') AS labels_identical,
       pg_temp.close(result, expected) AS close_to_onnxruntime
  FROM (SELECT m, inputs, expected, onnx_run(m, inputs) AS result
          FROM unnest(ARRAY['iris_rf', 'rf_regressor', 'logreg', 'scaler_logreg',
                            'gb_classifier', 'mlp', 'small_cnn']) AS m,
               LATERAL (SELECT pg_read_file(:'models' || '/' || m || '.inputs.json')::jsonb AS inputs,
                               pg_read_file(:'models' || '/' || m || '.expected.json')::jsonb AS expected) f) s
 ORDER BY m;

-- row-wise and batch on the neural networks (symbolic batch dimension)
SELECT array_length(onnx_predict('mlp', array_fill(0.5::real, ARRAY[16])), 1) AS mlp_outputs,
       round((SELECT sum(x) FROM unnest(onnx_predict('mlp', array_fill(0.5::real, ARRAY[16]))) x)::numeric, 5) AS softmax_sum;
SELECT array_dims(onnx_predict_batch('mlp', array_fill(0.5::real, ARRAY[3, 16]))) AS mlp_batch;
-- the CNN takes [N, 3, 16, 16]: 768 features per sample
SELECT array_length(onnx_predict('small_cnn', array_fill(0.1::real, ARRAY[768])), 1) AS cnn_outputs;
SELECT array_dims(onnx_predict_batch('small_cnn', array_fill(0.1::real, ARRAY[2, 768]))) AS cnn_batch;
-- (a batch may take another BLAS path than one row: equal within float rounding)
SELECT max(abs(b - r)) < 1e-5 AS batch_equals_rows
  FROM unnest(onnx_predict_batch('small_cnn', array_fill(0.1::real, ARRAY[2, 768]))) WITH ORDINALITY x(b, i)
  JOIN unnest(onnx_predict('small_cnn', array_fill(0.1::real, ARRAY[768]))
              || onnx_predict('small_cnn', array_fill(0.1::real, ARRAY[768]))) WITH ORDINALITY y(r, j) ON i = j;

-- regressor and other classifiers row-wise match onnx_run
SELECT (onnx_run('rf_regressor', jsonb_build_object('float_input', jsonb_build_array(to_jsonb(f))))
          -> 'variable' -> 0 -> 0)::real = (onnx_predict('rf_regressor', f))[1] AS regressor_matches
  FROM (SELECT array_fill(0.01::real, ARRAY[10]) AS f) s;

-- NaN and infinity propagate: no crash, no error
SELECT onnx_predict('mlp', array_fill('NaN'::real, ARRAY[16])) AS nan_in;
SELECT onnx_predict('mlp', array_fill('Infinity'::real, ARRAY[16])) AS inf_in;
SELECT onnx_run('mlp', jsonb_build_object('input', jsonb_build_array(array_fill('NaN'::real, ARRAY[16])))) AS nan_json;
SELECT array_length(onnx_predict('iris_rf', '{NaN, Infinity, -Infinity, 0}'), 1) AS tree_nan;

-- results are usable in ordinary SQL: predicted class counts
SELECT (onnx_predict('iris_rf', features))[1] AS class, count(*)
  FROM iris GROUP BY 1 ORDER BY 1;

-- PARALLEL SAFE: a parallel plan runs the model in workers
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
ALTER TABLE iris SET (parallel_workers = 2);
SELECT count(*) FILTER (WHERE onnx_predict('iris_rf', features) = ARRAY[sklearn_prediction::real]) AS same_in_parallel
  FROM iris;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

DROP TABLE iris;
SELECT onnx_drop_model(m)
  FROM unnest(ARRAY['iris_rf', 'rf_regressor', 'logreg', 'scaler_logreg', 'gb_classifier',
                    'mlp', 'small_cnn']) AS m;
