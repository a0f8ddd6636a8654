#!/usr/bin/env bash
# Draw the pictures of docs/sql-reference.md with onnx_model_dot and graphviz:
#
#   bash examples/graphs.sh [output dir]      (default: docs/images)
#
# Needs a server with onnx_pg (the usual PGHOST/PGPORT/PGUSER/PGDATABASE) and
# graphviz's dot.  Loads test/models/iris_rf.onnx and resnet_block.onnx under
# temporary names, writes iris_rf.svg, resnet_block.svg (as stored) and
# resnet_block_optimized.svg (as sessions run it), and drops the models.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:-docs/images}"
mkdir -p "$out"
command -v dot >/dev/null || { echo "graphviz dot is not installed (apt-get install graphviz)" >&2; exit 1; }

# psql interpolates :'variables' in what it reads, not in -c
sql() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

cleanup() {
  echo "SELECT onnx_drop_model(m, if_exists => true) FROM unnest(ARRAY['graphs_iris_rf', 'graphs_resnet_block']) m" |
    sql >/dev/null 2>&1 || true
}
trap cleanup EXIT

echo "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS onnx_pg" | sql
for m in iris_rf resnet_block; do
  echo "SELECT onnx_load_model(:'name', decode(:'b64', 'base64'), replace => true)" |
    sql -v name="graphs_$m" -v b64="$(base64 -w0 "test/models/$m.onnx")" >/dev/null
done
draw() {  # model, optimized, file: the title shows the fixture's own name
  echo "SELECT replace(onnx_model_dot(:'name', :'opt'::boolean), :'name', :'title')" |
    sql -v name="graphs_$1" -v title="$1" -v opt="$2" | dot -Tsvg > "$out/$3"
  echo "wrote $out/$3"
}
draw iris_rf false iris_rf.svg
draw resnet_block false resnet_block.svg
draw resnet_block true resnet_block_optimized.svg
