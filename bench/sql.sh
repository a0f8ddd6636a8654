#!/usr/bin/env bash
# The in-SQL variant of the CPU benchmark (bench/inquery_cpu.py): the same
# resnet50 and MLP runs through onnx_predict_batch in a server, so the cost
# of the PostgreSQL layer shows next to the engine's.  make bench runs it
# first and bench/run.py puts its table (bench/results/inquery.md) into
# docs/performance.md.
#
#   bash bench/sql.sh [inquery_cpu.py options, e.g. --quick]
#
# With PGHOST (or PGPORT) set, runs against that server; otherwise, as
# root, installs the extension and starts a throwaway cluster
# (ox_bench_server in scripts/lib.sh), stopped at the end.  Where there can
# be no server (not root, no PostgreSQL) it says so and exits 0: the
# engine benchmark does not need one, and the report then says the
# variant was not measured.
set -euo pipefail

# shellcheck source=../scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
cd "$OX_ROOT"

if ! ox_bench_server; then
  echo "bench/sql.sh: the in-SQL variant is skipped"
  exit 0
fi
PY="${ONNX_PG_PYTHON:-python3}"
"$PY" bench/inquery_cpu.py "$@"
