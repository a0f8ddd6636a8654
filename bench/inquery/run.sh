#!/usr/bin/env bash
# make bench-inquery: the in-query throughput benchmark (bench/inquery/run.py).
#
#   bash bench/inquery/run.sh [run.py options, e.g. --quick]
#
# Builds build/bench_inquery/engine_rate (make).  With PGHOST (or
# PGPORT) set, runs against that server, which must have onnx_pg installed;
# otherwise (as root, like scripts/test.sh) installs the extension and starts
# a throwaway cluster (ox_bench_server in scripts/lib.sh), stopped at the end.
set -euo pipefail

# shellcheck source=../../scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
cd "$OX_ROOT"

# the Makefile links it as the other tools (BLAS, and CUDA when built with it)
[ -n "${MAKELEVEL:-}" ] || ox_make build/bench_inquery/engine_rate
[ -n "${PGHOST:-}" ] || [ -n "${PGPORT:-}" ] || ox_require_root
ox_bench_server || exit 1

PY="${ONNX_PG_PYTHON:-python3}"
"$PY" bench/inquery/run.py "$@"
