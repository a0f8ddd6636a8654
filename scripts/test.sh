#!/usr/bin/env bash
# Run every onnx_pg test on this machine (fresh Debian 12, as root):
#
#   bash scripts/test.sh
#
# Installs what it needs (Debian packages, Python test packages), builds the
# extension, runs the engine unit tests, the conformance runner (when the
# Makefile has one) and the engine's Python tests (test/engine), installs the
# extension, starts a throwaway PostgreSQL
# cluster owned by postgres, runs the pg_regress suites (make installcheck),
# the end-to-end Python tests (test/e2e, compared with onnxruntime) and the
# TAP tests (test/t/*.pl), then prints a summary.  Exits non-zero if anything
# failed.  .ci/run calls this.
set -uo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$OX_ROOT" || exit 1

T0=$(date +%s)
SUMMARY=()
FAILED=()

# step NAME COMMAND...: run, time and record one step.
step() {
  local name="$1" t rc
  shift
  t=$(date +%s)
  printf '\n%s==== %s%s\n' "$OX_BOLD" "$name" "$OX_OFF"
  "$@"
  rc=$?
  t=$(($(date +%s) - t))
  if [ $rc -eq 0 ]; then
    SUMMARY+=("$(printf '%-6s %-28s %5ss' PASS "$name" "$t")")
  else
    SUMMARY+=("$(printf '%-6s %-28s %5ss  (exit %s)' FAIL "$name" "$t" "$rc")")
    FAILED+=("$name")
  fi
  return $rc
}

skip() {
  SUMMARY+=("$(printf '%-6s %-28s        %s' SKIP "$1" "$2")")
}

summary() {
  local total=$(($(date +%s) - T0)) line
  printf '\n%s==== summary (%dm%02ds)%s\n' "$OX_BOLD" $((total / 60)) $((total % 60)) "$OX_OFF"
  for line in "${SUMMARY[@]}"; do echo "  $line"; done
  if [ "${#FAILED[@]}" -eq 0 ]; then
    printf '%sALL TESTS PASSED%s\n' "$OX_GREEN" "$OX_OFF"
  else
    printf '%sFAILED: %s%s\n' "$OX_RED" "${FAILED[*]}" "$OX_OFF"
  fi
}

# --- the steps ---------------------------------------------------------------

deps() { ox_install_apt && ox_install_python; }

run_conformance() {
  local data
  data="$(ox_onnx_node_tests)" || return 1
  if [ ! -d "$data" ]; then
    ox_warn "ONNX node tests not found at $data"
    return 1
  fi
  ox_make conformance ONNX_NODE_TESTS="$data"
}

# Python tests of the engine through its C API (no server).
run_engine_py() {
  if ox_has_target tools; then
    ox_make tools || return 1
  fi
  "$OX_PY" -m pytest -p no:cacheprovider -ra -q --tb=short "$OX_ROOT/test/engine"
}

run_installcheck() {
  rm -f "$OX_ROOT/regression.diffs" "$OX_ROOT/regression.out"
  if ! ox_make installcheck PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER="$PGUSER"; then
    if [ -s "$OX_ROOT/regression.diffs" ]; then
      echo "---- regression.diffs (first 3000 lines) ----"
      head -n 3000 "$OX_ROOT/regression.diffs"
      echo "---- end of regression.diffs ----"
    fi
    return 1
  fi
}

run_e2e() {
  "$PG_BIN/psql" -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS onnx_e2e" -c "CREATE DATABASE onnx_e2e" || return 1
  PGDATABASE=onnx_e2e "$OX_PY" -m pytest -p no:cacheprovider -ra -q --tb=short "$OX_ROOT/test/e2e"
}

# TAP tests make their own clusters with initdb, which refuses to run as
# root: run them as postgres, in a copy of test/ that postgres can write to.
run_tap() {
  local dir rc
  dir="$(mktemp -d /tmp/onnx_pg-tap.XXXXXX)" || return 1
  mkdir -p "$dir/test"
  cp -r "$OX_ROOT/test/t" "$OX_ROOT/test/models" "$dir/test/"
  mkdir -p "$dir/tmp_check"
  chown -R postgres:postgres "$dir"
  (
    cd "$dir" &&
      runuser -u postgres -- env \
        PATH="$PG_BIN:$PATH" \
        TESTDIR="$dir" \
        PG_REGRESS="$PGXS_DIR/src/test/regress/pg_regress" \
        ONNX_PG_ROOT="$OX_ROOT" \
        ONNX_PG_MODELS="$dir/test/models" \
        PGHOST= PGPORT= PGUSER= PGDATABASE= \
        prove -v -I "$PGXS_DIR/src/test/perl" -I "$dir/test/t" test/t/*.pl
  )
  rc=$?
  if [ $rc -ne 0 ] && [ -d "$dir/tmp_check/log" ]; then
    for f in "$dir"/tmp_check/log/*; do
      echo "---- $f (last 60 lines) ----"
      tail -n 60 "$f"
    done
  fi
  rm -rf "$dir"
  return $rc
}

# --- main --------------------------------------------------------------------

ox_require_root
trap 'ox_cleanup; summary' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step "dependencies" deps || exit 1

if step "build" ox_build; then
  if ls test/unit/test_*.c >/dev/null 2>&1; then
    step "unit tests (make unit)" ox_make unit
  else
    skip "unit tests (make unit)" "no test/unit/test_*.c"
  fi
  if ox_has_target conformance; then
    step "conformance" run_conformance
  else
    skip "conformance" "no 'conformance' target in the Makefile"
  fi
  if ls test/engine/test_*.py >/dev/null 2>&1; then
    step "engine (pytest test/engine)" run_engine_py
  else
    skip "engine (pytest test/engine)" "no test/engine/test_*.py"
  fi
  step "install" ox_install_ext && INSTALLED=1 || INSTALLED=0
else
  INSTALLED=0
  for s in "unit tests (make unit)" "conformance" "engine (pytest test/engine)" "install"; do
    skip "$s" "build failed"
  done
fi

if [ "$INSTALLED" = 1 ] && step "start cluster" ox_start_cluster; then
  server_ok=1
  step "pg_regress (installcheck)" run_installcheck || server_ok=0
  step "e2e (pytest test/e2e)" run_e2e || server_ok=0
  if [ "$server_ok" = 0 ]; then
    echo "---- server log (last 60 lines) ----"
    ox_server_log | tail -n 60
  fi
else
  why="extension not installed"
  [ "$INSTALLED" = 1 ] && why="cluster did not start"
  skip "pg_regress (installcheck)" "$why"
  skip "e2e (pytest test/e2e)" "$why"
fi

if ! ls test/t/*.pl >/dev/null 2>&1; then
  skip "TAP (test/t)" "no test/t/*.pl"
elif [ "$INSTALLED" = 1 ]; then
  step "TAP (test/t)" run_tap
else
  skip "TAP (test/t)" "extension not installed"
fi

[ "${#FAILED[@]}" -eq 0 ]
