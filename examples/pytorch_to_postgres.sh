#!/usr/bin/env bash
# Tutorial: from PyTorch to a scored table in PostgreSQL, with psql.
#
#   bash examples/pytorch_to_postgres.sh
#
# 1. train a small classifier with PyTorch and export it to ONNX
#    (examples/pytorch_export.py; Debian's python3-torch is enough);
# 2. load the file with psql (the client reads it: no file on the server);
# 3. load 1000 samples with \copy and score them in batches of 64 rows with
#    onnx_predict_batch, and row by row with onnx_predict;
# 4. compare with PyTorch's own outputs, and fail if they differ.
#
# Needs a server with onnx_pg (PGHOST, PGPORT, PGUSER, PGDATABASE as for
# psql).  TORCH_PYTHON picks the Python with torch (default /usr/bin/python3);
# without torch the tutorial is skipped with a message (exit 0).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

TORCH_PYTHON="${TORCH_PYTHON:-/usr/bin/python3}"
if ! "$TORCH_PYTHON" -c "import torch" 2>/dev/null; then
  echo "SKIP: PyTorch is not available to $TORCH_PYTHON (Debian: apt-get install python3-torch)"
  exit 0
fi

work="$(mktemp -d /tmp/onnx_pg-torch.XXXXXX)"
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"

echo "== 1. train and export with PyTorch"
"$TORCH_PYTHON" examples/pytorch_export.py "$work"

echo "== 2. load the model with psql"
# psql interpolates :'variables' in what it reads from stdin (not in -c)
psql -X -q -v ON_ERROR_STOP=1 -v model="$(base64 -w0 "$work/model.onnx")" <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS onnx_pg;
SELECT onnx_load_model('tutorial_torch', decode(:'model', 'base64'), replace => true) AS version;
SELECT name, shape FROM onnx_model_inputs('tutorial_torch');
SELECT name, shape FROM onnx_model_outputs('tutorial_torch');
SQL

echo "== 3. score 1000 rows in batches"
psql -X -q -v ON_ERROR_STOP=1 <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS tutorial_points, tutorial_torch_expected;
CREATE TABLE tutorial_points (id int PRIMARY KEY, features real[], label int);
CREATE TABLE tutorial_torch_expected (id int PRIMARY KEY, probabilities real[]);
\copy tutorial_points FROM '$work/samples.csv' WITH (FORMAT csv)
\copy tutorial_torch_expected FROM '$work/expected.csv' WITH (FORMAT csv)
SQL
psql -X -v ON_ERROR_STOP=1 <<'SQL'
-- batches of 64 rows: one model run per batch, then one row per sample again
CREATE TEMP TABLE scored AS
SELECT b.ids[i] AS id, ARRAY(SELECT unnest(b.out[i:i][:])) AS probabilities
  FROM (SELECT id / 64 AS batch,
               array_agg(id ORDER BY id) AS ids,
               onnx_predict_batch('tutorial_torch', array_agg(features ORDER BY id)) AS out
          FROM tutorial_points GROUP BY 1) b,
       generate_subscripts(b.ids, 1) AS i;
SELECT id, probabilities FROM scored ORDER BY id LIMIT 3;

-- 4. the same as PyTorch, batch and row by row
SELECT count(DISTINCT s.id) AS samples,
       max(abs(p - e)) AS torch_difference,
       max(abs(p - r)) AS row_difference
  FROM scored s
  JOIN tutorial_torch_expected x USING (id)
  JOIN tutorial_points t USING (id),
       LATERAL unnest(s.probabilities, x.probabilities,
                      onnx_predict('tutorial_torch', t.features)) AS u(p, e, r)
\gset
\echo samples :samples, largest difference from PyTorch :torch_difference, batch vs row-wise :row_difference
SELECT :samples = 1000 AND :torch_difference <= 1e-5 AND :row_difference <= 1e-5 AS ok \gset
\if :ok
\else
DO $$ BEGIN RAISE EXCEPTION 'onnx_pg and PyTorch disagree'; END $$;
\endif
SELECT round(avg((s.probabilities[t.label + 1] = (SELECT max(v) FROM unnest(s.probabilities) v))::int), 3) AS accuracy
  FROM scored s JOIN tutorial_points t USING (id);
SQL
if [ "${KEEP:-1}" = 0 ]; then
  psql -X -q -c "DROP TABLE tutorial_points, tutorial_torch_expected" -c "SELECT onnx_drop_model('tutorial_torch')" >/dev/null
fi
echo "OK: onnx_pg gives PyTorch's outputs"
