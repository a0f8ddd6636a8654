#!/usr/bin/env bash
# make bench-inquery: the in-query throughput benchmark (bench/inquery/run.py).
#
#   bash bench/inquery/run.sh [run.py options, e.g. --quick]
#
# Builds build/bench_inquery/engine_rate (make).  With PGHOST (or
# PGPORT) set, runs against that server, which must have onnx_pg installed;
# otherwise (as root, like scripts/test.sh) installs the extension and starts
# a throwaway cluster (scripts/lib.sh), stopped at the end.  Under make
# (MAKELEVEL set), the Makefile has built the library already and the build
# lock is the caller's: nothing here takes it again.
set -euo pipefail

# shellcheck source=../../scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
cd "$OX_ROOT"

if [ -n "${MAKELEVEL:-}" ]; then
  mk() { make -C "$OX_ROOT" PG_CONFIG="$PG_CONFIG" "$@"; }
else
  mk() { ox_make "$@"; }
  # the Makefile links it as the other tools (BLAS, and CUDA when built with it)
  mk build/bench_inquery/engine_rate
fi

if [ -z "${PGHOST:-}" ] && [ -z "${PGPORT:-}" ]; then
  ox_require_root
  [ -n "${MAKELEVEL:-}" ] || mk -j"$OX_JOBS"
  mk install
  ox_start_cluster
  # room for the two tables in shared buffers: every form reads the same pages
  ox_psql -d postgres -c "ALTER SYSTEM SET shared_buffers = '1GB'" \
    -c "ALTER SYSTEM SET max_wal_size = '4GB'"
  runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$OX_CLUSTER_DIR/data" -l "$OX_CLUSTER_DIR/server.log" \
    -w -m fast restart >/dev/null
fi

PY="${ONNX_PG_PYTHON:-python3}"
"$PY" bench/inquery/run.py "$@"
