#!/usr/bin/env python3
"""Tutorial: from scikit-learn to a scored table in PostgreSQL.

    python3 examples/sklearn_to_postgres.py

1. train a scikit-learn pipeline (StandardScaler + RandomForestClassifier) on
   the breast cancer data set;
2. convert it to ONNX with skl2onnx;
3. load it into PostgreSQL through psycopg, the model's bytes bound as a
   bytea parameter (no file on the server needed);
4. score a table of patients in one query, and check every prediction and
   probability against scikit-learn's own.

Needs a server with onnx_pg (connection from PGHOST, PGPORT, PGUSER,
PGDATABASE, as for psql) and: pip install scikit-learn skl2onnx psycopg[binary]
numpy.  Exits non-zero if onnx_pg and scikit-learn disagree.  It leaves the
model and the table in place to play with; KEEP=0 drops them.
"""
import os
import sys

import numpy as np
import psycopg
from skl2onnx import to_onnx
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

MODEL = "tutorial_breast_cancer"
TABLE = "tutorial_patients"

# ---- 1. train ---------------------------------------------------------------
X, y = load_breast_cancer(return_X_y=True)
X = X.astype(np.float32)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
pipe = make_pipeline(StandardScaler(), RandomForestClassifier(n_estimators=50, max_depth=6, random_state=0))
pipe.fit(X_train, y_train)
print("1. trained %s on %d samples (%d features)" % (type(pipe[-1]).__name__, len(X_train), X.shape[1]))

# ---- 2. convert -------------------------------------------------------------
# float32 inputs, opsets onnx_pg supports; the classifier gets two outputs:
# output_label and output_probability (a ZipMap: one {class: p} per sample)
onx = to_onnx(pipe, X_train[:1], target_opset={"": 17, "ai.onnx.ml": 3})
model_bytes = onx.SerializeToString()
print("2. converted to ONNX: %d bytes" % len(model_bytes))

# ---- 3. load ----------------------------------------------------------------
conn = psycopg.connect("", autocommit=True)
cur = conn.cursor()
cur.execute("SET client_min_messages = warning")
cur.execute("CREATE EXTENSION IF NOT EXISTS onnx_pg")
# the functions live in the extension's schema; put it on the search_path
cur.execute("SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
            "WHERE e.extname = 'onnx_pg'")
cur.execute("SELECT set_config('search_path', 'public, ' || quote_ident(%s), false)", (cur.fetchone()[0],))
# bytes -> bytea: psycopg binds Python bytes as a bytea parameter
cur.execute("SELECT onnx_load_model(%s, %s, replace => true)", (MODEL, model_bytes))
version = cur.fetchone()[0]
cur.execute("SELECT name, shape FROM onnx_model_inputs(%s)", (MODEL,))
print("3. loaded %r (version %d), input %s" % (MODEL, version, cur.fetchone()))

# ---- 4. score in a query ----------------------------------------------------
cur.execute("DROP TABLE IF EXISTS %s" % TABLE)
cur.execute("CREATE TABLE %s (id int PRIMARY KEY, features real[], diagnosis int)" % TABLE)
with cur.copy("COPY %s (id, features, diagnosis) FROM STDIN" % TABLE) as copy:
    for i, (x, label) in enumerate(zip(X_test, y_test)):
        copy.write_row((i, x.tolist(), int(label)))
cur.execute("ANALYZE %s" % TABLE)

query = """
SELECT id,
       onnx_predict(%(m)s, features)::int[] AS predicted,
       onnx_predict(%(m)s, features, 'output_probability') AS probabilities,
       diagnosis
  FROM {table}
 ORDER BY id""".format(table=TABLE)
cur.execute(query, {"m": MODEL})
rows = cur.fetchall()
print("4. scored %d rows in one query, for example:" % len(rows))
for r in rows[:3]:
    print("     id %d: predicted %s, probabilities %s, diagnosis %d"
          % (r[0], r[1], np.round(r[2], 3).tolist(), r[3]))

cur.execute("SELECT round(avg(((onnx_predict(%s, features))[1] = diagnosis)::int), 3) FROM {table}"
            .format(table=TABLE), (MODEL,))
print("   accuracy, computed in SQL: %s" % cur.fetchone()[0])

# ---- check against scikit-learn ---------------------------------------------
want_label = pipe.predict(X_test)
want_proba = pipe.predict_proba(X_test)
got_label = np.array([r[1][0] for r in rows])
got_proba = np.array([r[2] for r in rows], dtype=np.float64)
label_diff = int((got_label != want_label).sum())
proba_diff = float(np.abs(got_proba - want_proba).max())
print("   against scikit-learn: %d of %d labels differ, largest probability difference %.2e"
      % (label_diff, len(rows), proba_diff))

cur.execute("SELECT calls, rows FROM onnx_stat_models WHERE model = %s", (MODEL,))
print("   onnx_stat_models: calls, rows =", cur.fetchone())

if os.environ.get("KEEP", "1") == "0":
    cur.execute("DROP TABLE %s" % TABLE)
    cur.execute("SELECT onnx_drop_model(%s)", (MODEL,))
conn.close()

if label_diff or proba_diff > 1e-5:
    print("FAILED: onnx_pg and scikit-learn disagree", file=sys.stderr)
    sys.exit(1)
print("OK: onnx_pg gives scikit-learn's predictions")
