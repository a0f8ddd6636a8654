-- The batch forms: onnx_predict_batch, the set-based onnx_predict_query, and
-- the element types onnx_predict takes
\getenv abs_srcdir PG_ABS_SRCDIR
\set models :abs_srcdir '/test/models'
\set iris_csv :models '/iris.csv'

SELECT onnx_load_model_file('b_iris', :'models' || '/iris_rf.onnx', true) AS version;
SELECT onnx_load_model_file('b_mlp', :'models' || '/mlp.onnx', true) AS version;

CREATE TABLE b_src (id int, sepal_length real, sepal_width real, petal_length real,
                    petal_width real, label int, sklearn_prediction int);
COPY b_src FROM :'iris_csv' WITH (FORMAT csv, HEADER true);
-- 1500 samples, a NULL every 97 rows; wide: 16 features for the MLP
CREATE TABLE b_samples (id int PRIMARY KEY, tag text, features real[], wide real[]);
INSERT INTO b_samples
SELECT (r - 1) * 150 + s.id, 'tag' || s.label,
       CASE WHEN ((r - 1) * 150 + s.id) % 97 = 0 THEN NULL
            ELSE ARRAY[s.sepal_length, s.sepal_width, s.petal_length, s.petal_width] END,
       ARRAY[s.sepal_length, s.sepal_width, s.petal_length, s.petal_width,
             s.sepal_width, s.petal_length, s.petal_width, s.sepal_length,
             s.petal_length, s.petal_width, s.sepal_length, s.sepal_width,
             s.petal_width, s.sepal_length, s.sepal_width, r::real / 10]
  FROM b_src s, generate_series(1, 10) r;
ANALYZE b_samples;
-- float networks: batches may differ from single rows in the last bit (the
-- matrix kernels sum in another order for another batch size)
CREATE FUNCTION pg_temp.close(a real[], b real[]) RETURNS boolean LANGUAGE sql AS
$$SELECT array_length(a, 1) = array_length(b, 1) AND
         bool_and(abs(x - y) <= 1e-6 + 1e-5 * abs(y))
    FROM unnest(a, b) u(x, y)$$;

-- ---- onnx_predict_batch: one run per call, equal to row-wise calls ----

WITH b AS (
    SELECT id / 100 AS g, array_agg(id ORDER BY id) AS ids,
           onnx_predict_batch('b_iris', array_agg(features ORDER BY id)) AS labels,
           onnx_predict_batch('b_iris', array_agg(features ORDER BY id), 'output_probability') AS probs,
           onnx_predict_batch('b_mlp', array_agg(wide ORDER BY id)) AS mlp
      FROM b_samples WHERE features IS NOT NULL GROUP BY id / 100),
u AS (
    SELECT b.ids[i] AS id, b.labels[i:i] AS label, b.probs[i:i] AS prob, b.mlp[i:i] AS mlp
      FROM b, generate_subscripts(b.ids, 1) i)
SELECT count(*) AS samples,
       count(*) FILTER (WHERE (SELECT array_agg(x) FROM unnest(u.label) x) = onnx_predict('b_iris', s.features)) AS same_label,
       count(*) FILTER (WHERE (SELECT array_agg(x) FROM unnest(u.prob) x) = onnx_predict('b_iris', s.features, 'output_probability')) AS same_prob,
       count(*) FILTER (WHERE pg_temp.close((SELECT array_agg(x) FROM unnest(u.mlp) x), onnx_predict('b_mlp', s.wide))) AS close_mlp
  FROM u JOIN b_samples s USING (id);
SELECT array_dims(onnx_predict_batch('b_iris', array_agg(features))) AS dims
  FROM b_samples WHERE id <= 5;
-- a big table's pattern (batching.md): statistics on the grouping
-- expression, the aggregates unordered (two aggregates of a group read its
-- rows in the same order), keys and scores unnested side by side
CREATE STATISTICS b_samples_batches ON (id / 100) FROM b_samples;
ANALYZE b_samples;
-- (the label: one value per row)
WITH g AS (
    SELECT array_agg(id) AS ids, onnx_predict_batch('b_iris', array_agg(features)) AS labels
      FROM b_samples WHERE features IS NOT NULL GROUP BY id / 100),
u AS (
    SELECT u.id, u.label FROM g, unnest(g.ids, g.labels) AS u(id, label))
SELECT count(*) AS rows, count(s.id) AS samples,
       count(*) FILTER (WHERE ARRAY[u.label] = onnx_predict('b_iris', s.features)) AS same_label
  FROM u LEFT JOIN b_samples s USING (id);
DROP STATISTICS b_samples_batches;

-- ---- onnx_predict_query: the rows of a query, scored in batches ----

-- the columns before the features pass through; NULL features: NULL prediction
SELECT * FROM onnx_predict_query('b_iris', $$SELECT id, tag, features FROM b_samples
                                              WHERE id IN (1, 51, 97, 101, 150) ORDER BY id$$)
    AS p(id int, tag text, label real[]);
-- a named output (ZipMap probabilities, dense)
SELECT id, (SELECT array_agg(round(x::numeric, 3)) FROM unnest(p) x) AS probabilities
  FROM onnx_predict_query('b_iris', 'SELECT id, features FROM b_samples WHERE id <= 3 ORDER BY id',
                          'output_probability') AS q(id int, p real[]);
-- every row, across several fetches, equal to row-wise calls and in query order
SET onnx.batch_size = 100;
SELECT count(*) AS rows,
       count(p.label) AS scored,
       count(*) FILTER (WHERE p.label IS NOT DISTINCT FROM onnx_predict('b_iris', s.features)) AS same,
       bool_and(p.n = p.id) AS in_order
  FROM onnx_predict_query('b_iris', 'SELECT row_number() OVER (ORDER BY id) AS n, id, features FROM b_samples ORDER BY id')
       AS p(n bigint, id int, label real[])
  JOIN b_samples s USING (id);
SELECT count(*) FILTER (WHERE pg_temp.close(p.y, onnx_predict('b_mlp', s.wide))) AS close_mlp
  FROM onnx_predict_query('b_mlp', 'SELECT id, wide FROM b_samples') AS p(id int, y real[])
  JOIN b_samples s USING (id);
RESET onnx.batch_size;
-- only the features: the prediction alone
SELECT * FROM onnx_predict_query('b_iris', 'SELECT features FROM b_samples WHERE id = 150') AS p(label real[]);
-- an empty query, a NULL query
SELECT count(*) FROM onnx_predict_query('b_iris', 'SELECT id, features FROM b_samples WHERE false') AS p(id int, l real[]);
SELECT count(*) FROM onnx_predict_query('b_iris', NULL) AS p(id int, l real[]);

-- errors
SELECT * FROM onnx_predict_query('b_iris', 'SELECT id, features FROM b_samples') AS p(id int);
SELECT * FROM onnx_predict_query('b_iris', 'SELECT id, features FROM b_samples') AS p(id bigint, l real[]);
SELECT * FROM onnx_predict_query('b_iris', 'SELECT id, features FROM b_samples') AS p(id int, l float8[]);
SELECT * FROM onnx_predict_query('b_iris', 'SELECT id, tag FROM b_samples') AS p(id int, l real[]);
SELECT * FROM onnx_predict_query('nosuch', 'SELECT id, features FROM b_samples') AS p(id int, l real[]);
SELECT * FROM onnx_predict_query('b_iris', 'SELECT id, features FROM b_samples', 'nosuch') AS p(id int, l real[]);
SELECT * FROM onnx_predict_query('b_iris', $$SELECT 1, '{1,2,3}'::real[]$$) AS p(id int, l real[]);
SELECT * FROM onnx_predict_query('b_iris', $$SELECT 1, '{1,NULL,3,4}'::real[]$$) AS p(id int, l real[]);
SELECT * FROM onnx_predict_query('b_iris', 'SELECT id, features FROM nosuch') AS p(id int, l real[]);

-- ---- element types ----

-- a model taking double: double precision[] as it is; real[], integer[],
-- numeric[] and untyped literals converted
SELECT onnx_load_model('b_double', decode('0808120d6f6e6e785f70675f74657374733aae010a120a01580a01571202585722064d61744d756c0a0f0a0258570a01421201592203416464120364626c2a3b08030802100b4201574a30000000000000f03f000000000000e03f0000000000000040000000000000f0bf000000000000d03f00000000000010402a190802100b4201424a10000000000000c03f000000000000e0bf5a140a0158120f0a0d080b12090a0312014e0a02080362140a0159120f0a0d080b12090a0312014e0a02080242040a00100d', 'hex'), true) AS version;
SELECT elem_type, shape FROM onnx_model_inputs('b_double');
SELECT onnx_predict('b_double', ARRAY[1, 2, 3]::float8[]) AS float8_in,
       onnx_predict('b_double', ARRAY[1, 2, 3]::real[]) AS real_in,
       onnx_predict('b_double', ARRAY[1, 2, 3]) AS int_in,
       onnx_predict('b_double', ARRAY[1, 2, 3]::bigint[]) AS bigint_in,
       onnx_predict('b_double', ARRAY[1, 2, 3]::smallint[]) AS smallint_in,
       onnx_predict('b_double', ARRAY[1.0, 2.0, 3.0]) AS numeric_in,
       onnx_predict('b_double', '{1,2,3}') AS literal_in;
SELECT onnx_predict('b_double', ARRAY[0.1, 1e-7, 3]::float8[]) = onnx_predict('b_double', ARRAY[0.1, 1e-7, 3]::float8[]::real[]::float8[]) AS rounded_same,
       onnx_predict('b_double', ARRAY[0.1, 1e-7, 1e30]::float8[]) AS big;
-- a model taking int32: integer[] as it is
SELECT onnx_load_model('b_int32', decode('0808120d6f6e6e785f70675f74657374733a7a0a180a0158120258662204436173742a090a02746f1801a001020a120a0258660a015712015922064d61744d756c1205696e7433322a170803080110014201574a0c0000803f000020410000c8425a140a0158120f0a0d080612090a0312014e0a02080362140a0159120f0a0d080112090a0312014e0a02080142040a00100d', 'hex'), true) AS version;
SELECT onnx_predict('b_int32', ARRAY[1, 2, 3]) AS int_in,
       onnx_predict('b_int32', ARRAY[1, 2, 3]::bigint[]) AS bigint_in,
       onnx_predict('b_int32', ARRAY[1.9, 2.1, -3.9]::real[]) AS real_in;
-- a model taking int64
SELECT onnx_load_model('b_int64', decode('0808120d6f6e6e785f70675f74657374733a730a280a01580a0461786573120159220952656475636553756d2a0f0a086b65657064696d731801a001021205696e7436342a14080110074204617865734a0801000000000000005a140a0158120f0a0d080712090a0312014e0a02080262140a0159120f0a0d080712090a0312014e0a02080142040a00100d', 'hex'), true) AS version;
SELECT onnx_predict('b_int64', ARRAY[2000000000, 2000000000]) AS int_in,
       onnx_predict('b_int64', ARRAY[4000000000, 1]::bigint[]) AS bigint_in;
-- the batch form and the set-based form take the same types
SELECT * FROM onnx_predict_query('b_double', $$VALUES (1, '{1,2,3}'::float8[]), (2, '{0,0,1}')$$) AS p(id int, y real[]);
SELECT * FROM onnx_predict_query('b_int32', $$VALUES (1, '{1,2,3}'::int[]), (2, '{0,0,1}')$$) AS p(id int, y real[]);
-- row-wise over a table: packed (short) arrays read in place, same as constants
SELECT count(*) FILTER (WHERE onnx_predict('b_iris', features) =
                        onnx_predict('b_iris', features::text::real[])) AS same_as_copies
  FROM b_samples WHERE features IS NOT NULL;
-- other types are refused
SELECT onnx_predict('b_iris', ARRAY['1', '2', '3', '4']);
SELECT onnx_predict('b_iris', 42);
SELECT onnx_predict('b_iris', '{a,b}');

DROP TABLE b_samples, b_src;
SELECT onnx_drop_model(m) FROM unnest(ARRAY['b_iris', 'b_mlp', 'b_double', 'b_int32', 'b_int64']) m;
