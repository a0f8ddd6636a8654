#!/usr/bin/env python3
"""Tutorial: quantize a model to int8 inside PostgreSQL, and measure what it costs.

    python3 examples/quantize_in_postgres.py

1. train a small neural network (scikit-learn's MLPClassifier) on the digits
   data set and write it as ONNX with onnx.helper (Gemm, Relu: logits out);
2. load it, and put the training and test images in two tables;
3. quantize it dynamically (onnx_quantize_dynamic: int8 weights, activations
   quantized at run time; no data needed);
4. quantize it statically (onnx_quantize_static), calibrated on rows that a
   SQL query returns: the data never leaves the database;
5. compare the three models in SQL: accuracy on the test table, size, agreement
   with the float model (onnx_quantize_report), and the time to score the
   test table.

Needs a server with onnx_pg (connection from PGHOST, PGPORT, PGUSER,
PGDATABASE, as for psql) and: pip install scikit-learn onnx psycopg[binary]
numpy.  Exits non-zero if a quantized model loses more than 2 points of
accuracy, agrees with the float model on fewer than 95% of the test images, or
is not smaller.  It leaves the models and tables in place to play with; KEEP=0
drops them.  See docs/quantization.md for the choices and measured results.
"""
import os
import sys
import time

import numpy as np
import psycopg
from onnx import TensorProto, helper, numpy_helper
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

MODEL = "tutorial_digits"
DYNAMIC = MODEL + "_dynamic"
STATIC = MODEL + "_static"
TRAIN, TEST = "tutorial_digits_train", "tutorial_digits_test"

# ---- 1. train, and write the network as ONNX --------------------------------
digits = load_digits()
X = (digits.data / 16.0).astype(np.float32)          # 8x8 images, 64 pixels in [0, 1]
X_train, X_test, y_train, y_test = train_test_split(X, digits.target, test_size=0.3, random_state=0,
                                                    stratify=digits.target)
clf = MLPClassifier(hidden_layer_sizes=(256, 128), max_iter=300, random_state=0).fit(X_train, y_train)
print("1. trained an MLP 64-256-128-10 on %d images: accuracy %.2f%% (scikit-learn)"
      % (len(X_train), 100 * clf.score(X_test, y_test)))


def mlp_to_onnx(clf):
    """Gemm + Relu per hidden layer, a last Gemm for the logits: [N, 64] -> [N, 10]."""
    inits, nodes, x = [], [], "pixels"
    layers = len(clf.coefs_)
    for i, (w, b) in enumerate(zip(clf.coefs_, clf.intercepts_)):
        inits += [numpy_helper.from_array(w.T.astype(np.float32), "fc%d.weight" % i),
                  numpy_helper.from_array(b.astype(np.float32), "fc%d.bias" % i)]
        y = "logits" if i == layers - 1 else "h%d" % i
        nodes.append(helper.make_node("Gemm", [x, "fc%d.weight" % i, "fc%d.bias" % i], [y], "fc%d" % i,
                                      transB=1))
        if i < layers - 1:
            nodes.append(helper.make_node("Relu", [y], ["a%d" % i], "relu%d" % i))
            y = "a%d" % i
        x = y
    graph = helper.make_graph(nodes, "digits_mlp",
                              [helper.make_tensor_value_info("pixels", TensorProto.FLOAT, ["N", 64])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             producer_name="quantize_in_postgres")


model_bytes = mlp_to_onnx(clf).SerializeToString()

# ---- 2. load the model and the data -------------------------------------------
conn = psycopg.connect("", autocommit=True)
cur = conn.cursor()
cur.execute("SET client_min_messages = warning")
cur.execute("CREATE EXTENSION IF NOT EXISTS onnx_pg")
cur.execute("SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
            "WHERE e.extname = 'onnx_pg'")
cur.execute("SELECT set_config('search_path', 'public, ' || quote_ident(%s), false)", (cur.fetchone()[0],))
cur.execute("SELECT onnx_load_model(%s, %s, replace => true)", (MODEL, model_bytes))
for table, xs, ys in ((TRAIN, X_train, y_train), (TEST, X_test, y_test)):
    cur.execute("DROP TABLE IF EXISTS %s" % table)
    cur.execute("CREATE TABLE %s (id int PRIMARY KEY, pixels real[], digit int)" % table)
    with cur.copy("COPY %s (id, pixels, digit) FROM STDIN" % table) as copy:
        for i, (x, label) in enumerate(zip(xs, ys)):
            copy.write_row((i, x.tolist(), int(label)))
    cur.execute("ANALYZE %s" % table)
print("2. loaded %r (%d bytes); tables %s (%d rows) and %s (%d rows)"
      % (MODEL, len(model_bytes), TRAIN, len(X_train), TEST, len(X_test)))

SUMMARY = "model, nodes_quantized, nodes_total, quantized_ops, size_before, size_after, " \
          "round(compression::numeric, 2) AS compression, calibration_rows"


def show(title):
    cols = [d.name for d in cur.description]
    row = cur.fetchone()
    print(title)
    for c, v in zip(cols, row):
        print("     %-17s %s" % (c, v))
    return dict(zip(cols, row))


# ---- 3. dynamic quantization: no data needed ----------------------------------
cur.execute("SELECT %s FROM onnx_quantize_dynamic(%%s, %%s, per_channel => true, replace => true)" % SUMMARY,
            (MODEL, DYNAMIC))
dyn = show("3. onnx_quantize_dynamic(%r, %r, per_channel => true):" % (MODEL, DYNAMIC))

# ---- 4. static quantization, calibrated on the rows of a query ----------------
# one real[] column per model input; 300 training images are plenty for minmax
calibration = "SELECT pixels FROM %s ORDER BY id LIMIT 300" % TRAIN
cur.execute("SELECT %s FROM onnx_quantize_static(%%s, %%s, %%s, replace => true)" % SUMMARY,
            (MODEL, STATIC, calibration))
sta = show("4. onnx_quantize_static(%r, %r, %r):" % (MODEL, STATIC, calibration))
cur.execute("SELECT lineage->>'quantized_from', lineage->>'method', lineage#>>'{calibration,rows}' "
            "FROM onnx_models WHERE name = %s", (STATIC,))
print("   its lineage in onnx_models: quantized from %r, method %r, %s calibration rows" % cur.fetchone())

# ---- 5. compare, in SQL -------------------------------------------------------
# accuracy: the argmax of the logits (1-based in SQL) against the label
ACCURACY = """
SELECT m.name, m.size_bytes,
       round(100 * avg((p.argmax - 1 = t.digit)::int), 2) AS accuracy
  FROM onnx_models m
 CROSS JOIN {test} t
 CROSS JOIN LATERAL (SELECT u.i AS argmax
                       FROM unnest(onnx_predict(m.name, t.pixels)) WITH ORDINALITY AS u(v, i)
                      ORDER BY u.v DESC, u.i LIMIT 1) p
 WHERE m.name IN (%s, %s, %s)
 GROUP BY m.name, m.size_bytes
 ORDER BY m.size_bytes DESC""".format(test=TEST)
cur.execute(ACCURACY, (MODEL, DYNAMIC, STATIC))
acc = {name: (size, float(a)) for name, size, a in cur.fetchall()}

# agreement with the float model, on rows it was not calibrated on
agree = {}
for target in (DYNAMIC, STATIC):
    cur.execute("SELECT argmax_agreement, mean_abs_diff, max_abs_diff FROM onnx_quantize_report(%s, %s)",
                (target, "SELECT pixels FROM %s" % TEST))
    agree[target] = cur.fetchone()


def score_ms(name, rounds=7):
    """the server's execution time of a query that scores the whole test table, best of a few"""
    best = float("inf")
    for _ in range(rounds):
        cur.execute("EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) SELECT count(onnx_predict(%%s, pixels)) FROM %s"
                    % TEST, (name,))
        best = min(best, cur.fetchone()[0][0]["Execution Time"])
    return best


print("5. compared on the %d test images (query ms: EXPLAIN ANALYZE of a query that scores them, best of 7):"
      % len(X_test))
print("     %-24s %9s %9s %10s %10s %9s" % ("model", "bytes", "accuracy", "agreement", "mean diff", "query ms"))
for name in (MODEL, DYNAMIC, STATIC):
    size, a = acc[name]
    ag = agree.get(name)
    print("     %-24s %9d %8.2f%% %10s %10s %9.2f"
          % (name, size, a, "%.2f%%" % (100 * ag[0]) if ag else "-", "%.4f" % ag[1] if ag else "-",
             score_ms(name)))
print("   (timings of a model this small vary with the machine's load; docs/quantization.md has "
      "measurements of bigger models)")

if os.environ.get("KEEP", "1") == "0":
    cur.execute("DROP TABLE %s, %s" % (TRAIN, TEST))
    for name in (STATIC, DYNAMIC, MODEL):
        cur.execute("SELECT onnx_drop_model(%s)", (name,))
conn.close()

problems = []
for name, summary in ((DYNAMIC, dyn), (STATIC, sta)):
    if acc[name][1] < acc[MODEL][1] - 2.0:
        problems.append("%s: accuracy %.2f%%, float %.2f%%" % (name, acc[name][1], acc[MODEL][1]))
    if agree[name][0] < 0.95:
        problems.append("%s agrees with the float model on %.1f%% of the images" % (name, 100 * agree[name][0]))
    if not summary["size_after"] < summary["size_before"] or not acc[name][0] < acc[MODEL][0]:
        problems.append("%s is not smaller than its source" % name)
    if summary["nodes_quantized"] < 1:
        problems.append("%s: no node quantized" % name)
if sta["calibration_rows"] != 300:
    problems.append("static quantization calibrated on %s rows, not 300" % sta["calibration_rows"])
if problems:
    print("FAILED: " + "; ".join(problems), file=sys.stderr)
    sys.exit(1)
print("OK: int8 models %.1fx and %.1fx smaller, accuracy %.2f%% and %.2f%% (float %.2f%%)"
      % (acc[MODEL][0] / acc[DYNAMIC][0], acc[MODEL][0] / acc[STATIC][0], acc[DYNAMIC][1], acc[STATIC][1],
         acc[MODEL][1]))
