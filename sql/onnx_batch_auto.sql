-- Automatic batching: row-wise onnx_predict calls over the rows of a scan run
-- in batches (Custom Scan (OnnxBatch)) where that cannot change the result;
-- each plan is compared with the unbatched plan of the same query
\getenv abs_srcdir PG_ABS_SRCDIR
\set models :abs_srcdir '/test/models'
\set iris_csv :models '/iris.csv'

-- loads the library (and its planner hook) for the rest of the session
SELECT onnx_load_model_file('ab_iris', :'models' || '/iris_rf.onnx', true) AS version;
SELECT onnx_load_model_file('ab_mlp', :'models' || '/mlp.onnx', true) AS version;
SHOW onnx.auto_batch;
SHOW onnx.batch_size;

CREATE TABLE ab_src (id int, sepal_length real, sepal_width real, petal_length real,
                     petal_width real, label int, sklearn_prediction int);
COPY ab_src FROM :'iris_csv' WITH (FORMAT csv, HEADER true);
-- 3000 rows: several batches; a NULL every 97 rows
CREATE TABLE ab (id int PRIMARY KEY, src int, grp int, features real[], wide real[]);
INSERT INTO ab
SELECT (r - 1) * 150 + s.id, s.id, s.id % 7,
       CASE WHEN ((r - 1) * 150 + s.id) % 97 = 0 THEN NULL
            ELSE ARRAY[s.sepal_length, s.sepal_width, s.petal_length, s.petal_width] END,
       ARRAY[s.sepal_length, s.sepal_width, s.petal_length, s.petal_width,
             s.sepal_width, s.petal_length, s.petal_width, s.sepal_length,
             s.petal_length, s.petal_width, s.sepal_length, s.sepal_width,
             s.petal_width, s.sepal_length, s.sepal_width, r::real / 10]
  FROM ab_src s, generate_series(1, 20) r;
ANALYZE ab, ab_src;
SET max_parallel_workers_per_gather = 0;

-- compare(query, ordered): is the plan batched, how many rows, and are the
-- rows (in order, when ordered) identical to those of the unbatched plan?
CREATE FUNCTION pg_temp.compare(q text, ordered boolean DEFAULT false)
RETURNS TABLE (batched boolean, rows integer, same boolean) LANGUAGE plpgsql AS $$
DECLARE
    agg text := CASE WHEN ordered THEN 'array_agg(x::text)' ELSE 'array_agg(x::text ORDER BY x::text)' END;
    a text[];
    b text[];
    line text;
BEGIN
    batched := false;
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        batched := batched OR line LIKE '%OnnxBatch%';
    END LOOP;
    EXECUTE format('WITH x AS MATERIALIZED (%s) SELECT %s FROM x', q, agg) INTO a;
    PERFORM set_config('onnx.auto_batch', 'off', true);
    EXECUTE format('WITH x AS MATERIALIZED (%s) SELECT %s FROM x', q, agg) INTO b;
    PERFORM set_config('onnx.auto_batch', 'on', true);
    rows := coalesce(array_length(a, 1), 0);
    same := a IS NOT DISTINCT FROM b;
    RETURN NEXT;
END $$;

-- ---- batched plans ----

-- a plain scan
EXPLAIN (COSTS OFF) SELECT id, onnx_predict('ab_iris', features) FROM ab;
SELECT * FROM pg_temp.compare($$SELECT id, onnx_predict('ab_iris', features) FROM ab$$);
EXPLAIN (COSTS OFF, VERBOSE) SELECT id, onnx_predict('ab_iris', features) FROM ab WHERE id < 10;
SELECT id, onnx_predict('ab_iris', features) FROM ab WHERE id < 10;
-- WHERE
EXPLAIN (COSTS OFF) SELECT id, onnx_predict('ab_iris', features) FROM ab WHERE grp = 3 AND id > 100;
SELECT * FROM pg_temp.compare($$SELECT id, onnx_predict('ab_iris', features) FROM ab WHERE grp = 3 AND id > 100$$);
-- an index scan
EXPLAIN (COSTS OFF) SELECT id, onnx_predict('ab_iris', features) FROM ab WHERE id BETWEEN 100 AND 120;
SELECT * FROM pg_temp.compare($$SELECT id, onnx_predict('ab_iris', features) FROM ab WHERE id BETWEEN 100 AND 120$$);
-- ORDER BY, LIMIT
EXPLAIN (COSTS OFF) SELECT id, onnx_predict('ab_iris', features) FROM ab ORDER BY id DESC LIMIT 10;
SELECT * FROM pg_temp.compare($$SELECT id, onnx_predict('ab_iris', features) FROM ab ORDER BY id DESC LIMIT 10$$, true);
SELECT * FROM pg_temp.compare($$SELECT id, onnx_predict('ab_iris', features) FROM ab LIMIT 7$$, true);
SELECT * FROM pg_temp.compare($$SELECT id, onnx_predict('ab_iris', features) FROM ab ORDER BY id LIMIT 5 OFFSET 1000$$, true);
-- ordered by the prediction
EXPLAIN (COSTS OFF) SELECT id, onnx_predict('ab_iris', features) AS p FROM ab ORDER BY p, id;
SELECT * FROM pg_temp.compare($$SELECT id, onnx_predict('ab_iris', features) AS p FROM ab ORDER BY p, id$$, true);
-- expressions over the prediction, several calls, outputs and models
EXPLAIN (COSTS OFF)
SELECT id, (onnx_predict('ab_iris', features))[1] + 1 AS l1,
       array_length(onnx_predict('ab_iris', features, 'output_probability'), 1) AS n,
       onnx_predict('ab_mlp', wide) AS m
  FROM ab;
SELECT * FROM pg_temp.compare($$SELECT id, (onnx_predict('ab_iris', features))[1] + 1 AS l1,
       onnx_predict('ab_iris', features, 'output_probability') AS p
  FROM ab$$);
-- joins (the batch goes above the join)
EXPLAIN (COSTS OFF)
SELECT a.id, s.label, onnx_predict('ab_iris', a.features) FROM ab a JOIN ab_src s ON s.id = a.src;
SELECT * FROM pg_temp.compare($$SELECT a.id, s.label, onnx_predict('ab_iris', a.features)
  FROM ab a JOIN ab_src s ON s.id = a.src$$);
SELECT * FROM pg_temp.compare($$SELECT a.id, onnx_predict('ab_iris', a.features), onnx_predict('ab_iris', b.features)
  FROM ab a LEFT JOIN ab b ON b.src = a.grp AND b.id < 100 WHERE a.grp = 2$$);
-- subqueries: in FROM, scalar subqueries beside the call, LATERAL (rescans)
EXPLAIN (COSTS OFF)
SELECT s.id, s.p FROM (SELECT id, onnx_predict('ab_iris', features) p FROM ab WHERE grp = 1 OFFSET 0) s WHERE s.p = '{2}';
SELECT * FROM pg_temp.compare($$SELECT s.id, s.p FROM (SELECT id, onnx_predict('ab_iris', features) p FROM ab WHERE grp = 1 OFFSET 0) s WHERE s.p = '{2}'$$);
EXPLAIN (COSTS OFF)
SELECT id, (SELECT label FROM ab_src WHERE ab_src.id = ab.id) AS label, onnx_predict('ab_iris', features) FROM ab WHERE id <= 150;
SELECT * FROM pg_temp.compare($$SELECT id, (SELECT label FROM ab_src WHERE ab_src.id = ab.id) AS label,
       onnx_predict('ab_iris', features) FROM ab WHERE id <= 150$$);
EXPLAIN (COSTS OFF)
SELECT s.id, x.p FROM ab_src s CROSS JOIN LATERAL
       (SELECT onnx_predict('ab_iris', features) p FROM ab WHERE ab.grp = s.label AND ab.id < 300 OFFSET 0) x
 WHERE s.id <= 20;
SELECT * FROM pg_temp.compare($$SELECT s.id, x.p FROM ab_src s CROSS JOIN LATERAL
       (SELECT onnx_predict('ab_iris', features) p FROM ab WHERE ab.grp = s.label AND ab.id < 300 OFFSET 0) x
 WHERE s.id <= 20$$);
SELECT * FROM pg_temp.compare($$SELECT id, onnx_predict('ab_iris', features) FROM ab
  WHERE src IN (SELECT id FROM ab_src WHERE label = 1)$$);
-- volatile neighbours still run once per row, in row order
EXPLAIN (COSTS OFF) SELECT id, random() >= 0 AS r, onnx_predict('ab_iris', features) FROM ab;
SELECT * FROM pg_temp.compare($$SELECT id, random() >= 0 AS r, onnx_predict('ab_iris', features) FROM ab$$);
CREATE SEQUENCE ab_seq;
EXPLAIN (COSTS OFF) SELECT id, nextval('ab_seq') AS n, onnx_predict('ab_iris', features) AS p FROM ab;
WITH x AS MATERIALIZED (SELECT id, nextval('ab_seq') AS n, onnx_predict('ab_iris', features) AS p FROM ab)
SELECT count(*) AS rows, bool_and(n - id = (SELECT min(n) - min(id) FROM x)) AS in_row_order,
       count(p) AS scored
  FROM x;
-- the float network: equal within float rounding (a batch sums in another order)
SELECT count(*) AS rows,
       bool_and((SELECT bool_and(abs(x - y) <= 1e-6 + 1e-5 * abs(y)) FROM unnest(b.m, u.m) v(x, y))) AS close
  FROM (SELECT id, onnx_predict('ab_mlp', wide) m FROM ab) b
  JOIN (SELECT id, onnx_predict('ab_mlp', wide::text::real[]) m FROM ab) u USING (id);

-- ---- errors come at the same row as without batching ----

CREATE TABLE ab_bad AS SELECT id, features FROM ab WHERE id <= 200;
UPDATE ab_bad SET features = '{1,2,3}' WHERE id = 150;
-- the bad row is read ahead but never returned: no error, in both plans
SELECT * FROM pg_temp.compare($$SELECT id, onnx_predict('ab_iris', features) FROM ab_bad ORDER BY id LIMIT 5$$, true);
SELECT * FROM pg_temp.compare($$SELECT id, onnx_predict('ab_iris', features) FROM ab_bad WHERE id <> 150$$);
-- returned: the row-wise error
SELECT id, onnx_predict('ab_iris', features) FROM ab_bad ORDER BY id;
SET onnx.auto_batch = off;
SELECT id, onnx_predict('ab_iris', features) FROM ab_bad ORDER BY id;
RESET onnx.auto_batch;
-- a missing model: only rows with features call it
SELECT count(*), count(onnx_predict('nosuch', features)) FROM (SELECT * FROM ab WHERE features IS NULL OFFSET 0) s;
SELECT id, onnx_predict('nosuch', features) FROM ab;

-- ---- not batched: plans where batching could change the result ----

-- a call under a condition
EXPLAIN (COSTS OFF) SELECT id, CASE WHEN grp = 1 THEN onnx_predict('ab_iris', features) END FROM ab;
SELECT * FROM pg_temp.compare($$SELECT id, CASE WHEN grp = 1 THEN onnx_predict('ab_iris', features) END FROM ab$$);
-- a filter or join that may fail on rows past a LIMIT (only leakproof
-- functions, such as comparisons, may see the rows read ahead), a volatile filter
EXPLAIN (COSTS OFF) SELECT id, onnx_predict('ab_iris', features) FROM ab WHERE 100 / grp > 20;
EXPLAIN (COSTS OFF) SELECT a.id, onnx_predict('ab_iris', a.features) FROM ab a JOIN ab_src s ON s.id = a.grp + 1;
EXPLAIN (COSTS OFF) SELECT id, onnx_predict('ab_iris', features) FROM ab WHERE random() < 2;
-- volatile features, a call nested in the features, a name that is not constant
EXPLAIN (COSTS OFF) SELECT id, onnx_predict('ab_iris', features || random()::real) FROM ab_bad;
EXPLAIN (COSTS OFF) SELECT id, onnx_predict('ab_iris', onnx_predict('ab_iris', features) || features[1:3]) FROM ab_bad;
EXPLAIN (COSTS OFF) SELECT id, onnx_predict(CASE WHEN id > 0 THEN 'ab_iris' END, features) FROM ab_bad;
-- switched off
SET onnx.auto_batch = off;
EXPLAIN (COSTS OFF) SELECT id, onnx_predict('ab_iris', features) FROM ab;
RESET onnx.auto_batch;

-- ---- other statements ----

-- INSERT ... SELECT and CREATE TABLE AS
EXPLAIN (COSTS OFF) INSERT INTO ab_bad SELECT id + 10000, onnx_predict('ab_iris', features) FROM ab;
CREATE TABLE ab_scores AS SELECT id, onnx_predict('ab_iris', features) AS p FROM ab;
SET onnx.auto_batch = off;
CREATE TABLE ab_scores_rowwise AS SELECT id, onnx_predict('ab_iris', features) AS p FROM ab;
RESET onnx.auto_batch;
SELECT count(*) AS rows, count(*) FILTER (WHERE a.p IS NOT DISTINCT FROM b.p) AS same
  FROM ab_scores a JOIN ab_scores_rowwise b USING (id);
-- prepared statements and cursors
PREPARE ab_q(int) AS SELECT id, onnx_predict('ab_iris', features) FROM ab WHERE grp = $1 ORDER BY id;
EXPLAIN (COSTS OFF) EXECUTE ab_q(2);
CREATE TEMP TABLE ab_q_out AS EXECUTE ab_q(2);
SELECT count(*) AS rows, count(*) FILTER (WHERE q.onnx_predict IS NOT DISTINCT FROM s.p) AS same
  FROM ab_q_out q JOIN ab_scores_rowwise s USING (id);
BEGIN;
DECLARE ab_c CURSOR FOR SELECT id, onnx_predict('ab_iris', features) FROM ab ORDER BY id;
FETCH 3 FROM ab_c;
FETCH 2 FROM ab_c;
COMMIT;
BEGIN;
DECLARE ab_s SCROLL CURSOR FOR SELECT id, onnx_predict('ab_iris', features) FROM ab WHERE id <= 100;
FETCH 3 FROM ab_s;
FETCH BACKWARD 2 FROM ab_s;
COMMIT;
-- batch sizes: first batches small (a LIMIT reads little), then onnx.batch_size
SET onnx.batch_size = 100;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id, onnx_predict('ab_iris', features) FROM ab;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id, onnx_predict('ab_iris', features) FROM ab LIMIT 10;
SELECT * FROM pg_temp.compare($$SELECT id, onnx_predict('ab_iris', features) FROM ab$$);
SET onnx.batch_size = 1;
SELECT * FROM pg_temp.compare($$SELECT id, onnx_predict('ab_iris', features) FROM ab WHERE id < 300$$);
-- passed-through values that grow from batch to batch: each batch's copies
-- outgrow the buffer the batches before it left
SET onnx.batch_size = 100;
CREATE TEMP TABLE ab_pad AS
SELECT id, (SELECT string_agg(md5((id * 7919 + i)::text), '') FROM generate_series(1, id % 60) i) AS pad,
       features FROM ab;
ANALYZE ab_pad;
SELECT * FROM pg_temp.compare($$SELECT id, pad, onnx_predict('ab_iris', features) FROM ab_pad$$);
DROP TABLE ab_pad;
-- values of every length from 0 to 70 bytes (the batch copies short ones inline)
CREATE TEMP TABLE ab_short AS
SELECT id, left(md5(id::text) || md5((id + 1)::text) || md5((id + 2)::text), id % 71) AS pad,
       features FROM ab;
ANALYZE ab_short;
SELECT * FROM pg_temp.compare($$SELECT id, pad, length(pad), onnx_predict('ab_iris', features) FROM ab_short$$);
DROP TABLE ab_short;
RESET onnx.batch_size;

-- ---- parallel query: the calls run in the workers ----

SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
-- row-wise: onnx_predict is PARALLEL SAFE and runs below Gather
SET onnx.auto_batch = off;
EXPLAIN (COSTS OFF, VERBOSE) SELECT id, onnx_predict('ab_iris', features) FROM ab WHERE grp = 4;
RESET onnx.auto_batch;
-- batched in each worker
EXPLAIN (COSTS OFF) SELECT id, onnx_predict('ab_iris', features) FROM ab WHERE grp = 4;
CREATE FUNCTION pg_temp.workers_launched(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF line LIKE '%Workers Launched%' THEN
            RETURN trim(line);
        END IF;
    END LOOP;
    RETURN 'no workers';
END $$;
SELECT pg_temp.workers_launched($$SELECT id, onnx_predict('ab_iris', features) FROM ab$$);
SELECT * FROM pg_temp.compare($$SELECT id, onnx_predict('ab_iris', features) FROM ab$$);
SELECT * FROM pg_temp.compare($$SELECT id, onnx_predict('ab_iris', features) FROM ab WHERE grp = 4$$);
SELECT count(*) AS rows, count(*) FILTER (WHERE p IS NOT DISTINCT FROM onnx_predict('ab_iris', features)) AS same
  FROM (SELECT id, features, onnx_predict('ab_iris', features) p FROM ab) s;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 0;

-- ---- a session's first statement ----
-- A new session has not loaded the library: planning a statement that calls
-- onnx_predict loads it (through onnx_predict's planner support function),
-- after the planner hook would have run, and the statement is batched anyway
-- (the executor-start hook batches a copy of its plan).  Each \c starts a
-- backend that has not loaded it.
\c -
EXPLAIN (COSTS OFF) SELECT count(s) FROM (SELECT onnx_predict('ab_iris', features) s FROM ab) q;
\c -
SET max_parallel_workers_per_gather = 0;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT id, onnx_predict('ab_iris', features) FROM ab;
\c -
-- the results of the first statement, against the row-wise calls of a later one
CREATE TEMP TABLE ab_first AS SELECT id, onnx_predict('ab_iris', features) AS p FROM ab;
SET onnx.auto_batch = off;
SELECT count(*) AS rows, count(*) FILTER (WHERE f.p IS NOT DISTINCT FROM onnx_predict('ab_iris', ab.features)) AS same
  FROM ab_first f JOIN ab USING (id);
RESET onnx.auto_batch;
-- a scrollable cursor is not batched, first statement or not
\c -
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id, onnx_predict('ab_iris', features) FROM ab ORDER BY id;
FETCH 2 FROM c;
FETCH BACKWARD 1 FROM c;
COMMIT;
SET max_parallel_workers_per_gather = 0;

DROP TABLE ab, ab_src, ab_bad, ab_scores, ab_scores_rowwise;
DROP SEQUENCE ab_seq;
SELECT onnx_drop_model('ab_iris'), onnx_drop_model('ab_mlp');
