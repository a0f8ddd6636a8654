#!/usr/bin/env bash
# The onnx_pg demo, for a fresh Debian 12 machine (as root):
#
#   bash scripts/demo.sh
#
# Installs what it needs, builds and installs the extension, starts a
# throwaway PostgreSQL cluster owned by postgres, creates the extension, loads
# the bundled iris_rf model (a scikit-learn random forest converted with
# skl2onnx), loads the iris data set into a table, prints predictions for a few
# rows, and checks that all 150 predictions equal scikit-learn's.  The cluster
# is stopped at the end; ONNX_PG_KEEP=1 leaves it running to play with.
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$OX_ROOT"
ox_require_root

LOG="$(mktemp /tmp/onnx_pg-demo-build.XXXXXX.log)"
BUILDING=0
show_log_on_error() {
  local rc=$?
  if [ $rc -ne 0 ] && [ "$BUILDING" = 1 ]; then
    echo "---- the build failed; last lines of $LOG ----" >&2
    tail -n 60 "$LOG" >&2
  else
    rm -f "$LOG"
  fi
  [ $rc -eq 0 ] || ox_warn "the demo failed (exit $rc)"
  ox_cleanup
}
trap show_log_on_error EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ox_install_apt
ox_log "building and installing onnx_pg"
BUILDING=1
ox_build >"$LOG" 2>&1
ox_install_ext >>"$LOG" 2>&1
BUILDING=0
ox_start_cluster

DB=onnx_demo
ox_psql -d postgres -c "CREATE DATABASE $DB"
export PGDATABASE=$DB

ox_log "creating the extension and loading test/models/iris_rf.onnx"
ox_psql <<'SQL'
CREATE EXTENSION onnx_pg;
-- put the extension's schema on this database's search_path
SELECT format('ALTER DATABASE %I SET search_path = public, %I', current_database(), n.nspname)
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
 WHERE e.extname = 'onnx_pg' \gexec
SQL
ox_psql -v model_hex="$(od -An -v -tx1 test/models/iris_rf.onnx | tr -d ' \n')" <<'SQL'
SELECT onnx_load_model('iris_rf', decode(:'model_hex', 'hex')) \g /dev/null

CREATE TABLE iris_raw (
  id int, sepal_length real, sepal_width real, petal_length real, petal_width real,
  label int, sklearn_prediction int);
\copy iris_raw FROM 'test/models/iris.csv' WITH (FORMAT csv, HEADER true)
CREATE TABLE iris AS
  SELECT id, ARRAY[sepal_length, sepal_width, petal_length, petal_width] AS features,
         label, sklearn_prediction
    FROM iris_raw;
DROP TABLE iris_raw;
SQL

ox_log "predicting"
SHOW_SQL="SELECT id, features, onnx_predict('iris_rf', features) AS prediction,
       onnx_predict('iris_rf', features, 'output_probability') AS probabilities,
       sklearn_prediction
  FROM iris
 WHERE id IN (1, 2, 51, 52, 71, 101, 102, 134)
 ORDER BY id;"
echo "$SHOW_SQL"
"$PG_BIN/psql" -X -v ON_ERROR_STOP=1 -c "$SHOW_SQL"

CHECK_SQL="SELECT count(*) AS rows,
       count(*) FILTER (WHERE (onnx_predict('iris_rf', features))[1] = sklearn_prediction)
         AS equal_to_scikit_learn
  FROM iris;"
echo "$CHECK_SQL"
"$PG_BIN/psql" -X -v ON_ERROR_STOP=1 -c "$CHECK_SQL"

read -r total same < <("$PG_BIN/psql" -X -v ON_ERROR_STOP=1 -At -F ' ' -c "$CHECK_SQL")
if [ "$total" = 150 ] && [ "$same" = 150 ]; then
  printf '%sOK: all 150 onnx_pg predictions equal scikit-learn'"'"'s%s\n' "$OX_GREEN" "$OX_OFF"
else
  ox_die "only $same of $total onnx_pg predictions equal scikit-learn's"
fi
