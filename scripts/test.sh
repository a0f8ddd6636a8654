#!/usr/bin/env bash
# Run every onnx_pg test on this machine (fresh Debian 12, as root):
#
#   bash scripts/test.sh
#
# Installs what it needs (Debian packages, Python test packages), builds the
# extension, runs the engine unit tests, the conformance runner (when the
# Makefile has one), the engine's Python tests (test/engine), the unit tests
# under valgrind, the fuzzers (fuzz/: regressions, then a bounded run) and the
# conformance runner under ASan/UBSan, installs the
# extension, starts a throwaway PostgreSQL
# cluster owned by postgres, runs the pg_regress suites (make installcheck),
# the end-to-end Python tests (test/e2e, compared with onnxruntime), the
# tutorials of examples/ and the TAP tests (test/t/*.pl), then builds the
# other variant of the extension (CUDA=off) in a copy of the tree and runs
# the unit tests, the engine's Python tests and the pg_regress suites
# against it, then prints a summary.  Exits non-zero if anything
# failed.  .ci/run calls this.
set -uo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$OX_ROOT" || exit 1

# the fuzzers need clang and its sanitizer runtime; the unit tests also run
# under valgrind
OX_APT_PACKAGES="$OX_APT_PACKAGES clang-14 libclang-rt-14-dev valgrind"

T0=$(date +%s)
SUMMARY=()
FAILED=()
# each step's output also goes to a file here; a failed step's last lines
# are printed again above the summary, since a CI log may keep only its end
STEP_LOGS=$(mktemp -d /tmp/onnx_pg-steps.XXXXXX)
FAILED_LOGS=()

# ONNX_PG_ONLY="e2e,TAP": developers' filter; only the steps whose names
# contain one of these words run (set-up steps always run). CI sets none.
step_wanted() {
  local w
  [ -z "${ONNX_PG_ONLY:-}" ] && return 0
  case "$1" in dependencies | build | install | "start cluster") return 0 ;; esac
  for w in ${ONNX_PG_ONLY//,/ }; do
    case "$1" in *"$w"*) return 0 ;; esac
  done
  return 1
}

# step NAME COMMAND...: run, time and record one step.
step() {
  local name="$1" t rc log tee_pid
  shift
  if ! step_wanted "$name"; then
    skip "$name" "not in ONNX_PG_ONLY"
    return 0
  fi
  t=$(date +%s)
  printf '\n%s==== %s%s\n' "$OX_BOLD" "$name" "$OX_OFF"
  log="$STEP_LOGS/${#SUMMARY[@]}.log"
  # (a process substitution, not a pipe: the step runs in this shell, so
  # what it sets stays set)
  "$@" > >(tee "$log") 2>&1
  rc=$?
  tee_pid=$!
  # tee ends when the step's output does, unless the step started a daemon
  # (the cluster) that keeps the pipe open: wait a moment, not for that
  for _ in $(seq 50); do
    kill -0 "$tee_pid" 2>/dev/null || break
    sleep 0.1
  done
  t=$(($(date +%s) - t))
  if [ $rc -eq 0 ]; then
    SUMMARY+=("$(printf '%-6s %-28s %5ss' PASS "$name" "$t")")
  else
    SUMMARY+=("$(printf '%-6s %-28s %5ss  (exit %s)' FAIL "$name" "$t" "$rc")")
    FAILED+=("$name")
    FAILED_LOGS+=("$log")
  fi
  return $rc
}

skip() {
  SUMMARY+=("$(printf '%-6s %-28s        %s' SKIP "$1" "$2")")
}

summary() {
  local total=$(($(date +%s) - T0)) line i
  for i in "${!FAILED[@]}"; do
    printf '\n%s---- failed: %s (its last 60 lines)%s\n' "$OX_RED" "${FAILED[$i]}" "$OX_OFF"
    tail -n 60 "${FAILED_LOGS[$i]}"
  done
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
  ox_make conformance ONNX_NODE_TESTS="$data" TEST_PYTHON="$OX_PY"
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

# The SQL examples of docs/sql-reference.md are the pg_regress suite
# sql/onnx_docs.sql: check that it is current (scripts/docs_examples.py).
run_docs_check() {
  "$OX_PY" "$OX_ROOT/scripts/docs_examples.py" --check
}

# The tutorials of examples/, against the cluster, in their own database.
# The scikit-learn one needs scikit-learn and skl2onnx; the PyTorch one skips
# itself without torch (Debian's python3-torch); the pictures need graphviz.
run_examples() {
  if ! "$OX_PY" -c "import sklearn, skl2onnx" 2>/dev/null; then
    ox_log "Python packages for the tutorials: installing scikit-learn skl2onnx"
    PIP_ROOT_USER_ACTION=ignore "$OX_PY" -m pip install -q --disable-pip-version-check --no-input \
      scikit-learn skl2onnx || return 1
  fi
  "$PG_BIN/psql" -X -q -d postgres -c "SET client_min_messages = warning" \
    -c "DROP DATABASE IF EXISTS onnx_examples" -c "CREATE DATABASE onnx_examples" || return 1
  (
    export PGDATABASE=onnx_examples KEEP=0 PATH="$PG_BIN:$PATH"
    set -e
    "$OX_PY" "$OX_ROOT/examples/sklearn_to_postgres.py"
    "$OX_PY" "$OX_ROOT/examples/quantize_in_postgres.py"
    bash "$OX_ROOT/examples/pytorch_to_postgres.sh"
    if command -v dot >/dev/null; then
      dir="$(mktemp -d /tmp/onnx_pg-graphs.XXXXXX)"
      bash "$OX_ROOT/examples/graphs.sh" "$dir"
      rm -rf "$dir"
    else
      echo "examples/graphs.sh skipped: graphviz dot is not installed"
    fi
  )
}

# The engine's unit tests under valgrind memcheck: no invalid access, no
# definite or indirect leak (one valgrind per core).
run_valgrind() {
  local logs t
  logs="$(mktemp -d /tmp/onnx_pg-valgrind.XXXXXX)" || return 1
  # shellcheck disable=SC2016
  printf '%s\n' "$OX_ROOT"/build/unit/test_* | xargs -P "$OX_JOBS" -I{} sh -c '
    valgrind -q --error-exitcode=99 --suppressions="$3" --leak-check=full \
      --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
      "$1" >"$2/$(basename "$1").log" 2>&1 ||
      echo "$1" >>"$2/failed"' _ {} "$logs" "$OX_ROOT/test/unit/valgrind.supp"
  if [ -s "$logs/failed" ]; then
    while read -r t; do
      echo "---- valgrind: $t (last 40 lines) ----"
      tail -n 40 "$logs/$(basename "$t").log"
    done <"$logs/failed"
    rm -rf "$logs"
    return 1
  fi
  echo "valgrind: $(ls "$OX_ROOT"/build/unit/test_* | wc -l) unit test programs clean"
  rm -rf "$logs"
}

# libFuzzer targets (fuzz/, clang with ASan and UBSan): replay every input of
# fuzz/regressions, then fuzz each target for a bounded time, 60 s each in CI
# and 10 s otherwise (ONNX_PG_FUZZ_SECONDS overrides).  Long runs: fuzz/Makefile.
run_fuzz() {
  local secs="${ONNX_PG_FUZZ_SECONDS:-}"
  if [ -z "$secs" ]; then
    if [ "${CI:-}" = true ]; then secs=60; else secs=10; fi
  fi
  ox_make -C fuzz -j"$OX_JOBS" all || return 1
  make -C "$OX_ROOT/fuzz" --no-print-directory run FUZZ_SECONDS="$secs"
}

# The ONNX node tests, the unit test programs and the engine's Python tests
# through the engine built with the sanitizers (ASan, UBSan, LSan; no
# suppressions; the Python tests without LSan).
run_conformance_asan() {
  local data
  data="$(ox_onnx_node_tests)" || return 1
  ox_make -C fuzz -j"$OX_JOBS" conformance-asan ONNX_NODE_TESTS="$data" || return 1
  ox_make -C fuzz -j"$OX_JOBS" unit-asan || return 1
  ox_make -C fuzz engine-asan TEST_PYTHON="$OX_PY"
}

# --- the CPU-only variant (CUDA=off) ---------------------------------------
# Both variants are built and tested (issue 8).  The main pipeline above
# builds with the Makefile's default, CUDA=auto: the CUDA build where the
# toolkit is installed ($OX_CUDA_HOME/bin/nvcc; these machines have it under
# /usr/local/cuda, and this script never installs it), and every test above
# runs against that build, through the CPU fallback where there is no GPU.
# The steps below build a copy of the tree with CUDA=off, so that the main
# build outputs stay, and run the unit tests, the engine's Python tests and
# the pg_regress suites against it: the CUDA=off extension is installed for
# the suites, and the main build installed again right after.  (Conformance,
# valgrind, fuzzing, e2e and TAP run once, on the main build.)  Without nvcc
# the main build already is the CUDA=off one: the CUDA variant is skipped
# with a SKIP line, and so are these steps.
OX_CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
VARIANT_DIR=""

ox_have_nvcc() { [ -x "$OX_CUDA_HOME/bin/nvcc" ]; }

variant_cleanup() {
  [ -n "$VARIANT_DIR" ] && rm -rf "$VARIANT_DIR"
  VARIANT_DIR=""
}
OX_CLEANUP_HOOKS+=(variant_cleanup)

variant_make() { make -C "$VARIANT_DIR" --no-print-directory CUDA=off PG_CONFIG="$PG_CONFIG" "$@"; }

# the sources (no build outputs, no benchmark data) in a temp dir, built there
run_variant_build() {
  VARIANT_DIR="$(mktemp -d /tmp/onnx_pg-cuda-off.XXXXXX)" || return 1
  # hidden top-level entries (.git, CI configuration) are not needed either
  tar -C "$OX_ROOT" --exclude='./.*' --exclude=./bench --exclude=./fuzz --exclude=./build \
    --exclude=./results --exclude='*.o' --exclude='*.so' --exclude=__pycache__ \
    -cf - . | tar -C "$VARIANT_DIR" -xf - || return 1
  variant_make -j"$OX_JOBS" >"$VARIANT_DIR/build.log" 2>&1 || { tail -n 40 "$VARIANT_DIR/build.log"; return 1; }
  if ldd "$VARIANT_DIR/onnx_pg.so" | grep -q cuda; then
    ox_warn "the CUDA=off build links CUDA libraries"
    return 1
  fi
  echo "built with CUDA=off in $VARIANT_DIR"
}

run_variant_engine_py() {
  variant_make -j"$OX_JOBS" tools >"$VARIANT_DIR/tools.log" 2>&1 || { tail -n 40 "$VARIANT_DIR/tools.log"; return 1; }
  "$OX_PY" -m pytest -p no:cacheprovider -ra -q --tb=short "$VARIANT_DIR/test/engine"
}

# install the CUDA=off extension, run the suites from the copy, reinstall ours
run_variant_installcheck() {
  local rc=0
  variant_make install >"$VARIANT_DIR/install.log" 2>&1 || { tail -n 40 "$VARIANT_DIR/install.log"; rc=1; }
  if [ $rc -eq 0 ] && ! variant_make installcheck PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER="$PGUSER"; then
    if [ -s "$VARIANT_DIR/regression.diffs" ]; then
      echo "---- regression.diffs, CUDA=off (first 3000 lines) ----"
      head -n 3000 "$VARIANT_DIR/regression.diffs"
      echo "---- end of regression.diffs ----"
    fi
    rc=1
  fi
  ox_install_ext >/dev/null || { ox_warn "could not reinstall the main build"; rc=1; }
  return $rc
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
step "docs (examples in sync)" run_docs_check

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
  if ls build/unit/test_* >/dev/null 2>&1; then
    step "valgrind (unit tests)" run_valgrind
  else
    skip "valgrind (unit tests)" "no unit test programs"
  fi
  step "fuzz (libFuzzer)" run_fuzz
  step "conformance + unit + engine (ASan, UBSan)" run_conformance_asan
  step "install" ox_install_ext && INSTALLED=1 || INSTALLED=0
else
  INSTALLED=0
  for s in "unit tests (make unit)" "conformance" "engine (pytest test/engine)" \
    "valgrind (unit tests)" "fuzz (libFuzzer)" "conformance + unit + engine (ASan, UBSan)" "install"; do
    skip "$s" "build failed"
  done
fi

if [ "$INSTALLED" = 1 ] && step "start cluster" ox_start_cluster; then
  server_ok=1
  step "pg_regress (installcheck)" run_installcheck || server_ok=0
  step "e2e (pytest test/e2e)" run_e2e || server_ok=0
  step "tutorials (examples/)" run_examples || server_ok=0
  if [ "$server_ok" = 0 ]; then
    echo "---- server log (last 60 lines) ----"
    ox_server_log | tail -n 60
  fi
else
  why="extension not installed"
  [ "$INSTALLED" = 1 ] && why="cluster did not start"
  skip "pg_regress (installcheck)" "$why"
  skip "e2e (pytest test/e2e)" "$why"
  skip "tutorials (examples/)" "$why"
fi

if ! ls test/t/*.pl >/dev/null 2>&1; then
  skip "TAP (test/t)" "no test/t/*.pl"
elif [ "$INSTALLED" = 1 ]; then
  step "TAP (test/t)" run_tap
else
  skip "TAP (test/t)" "extension not installed"
fi

VARIANT_STEPS=("CUDA=off: make unit" "CUDA=off: engine pytest" "CUDA=off: installcheck")
if ! ox_have_nvcc; then
  skip "CUDA variant (nvcc)" "no $OX_CUDA_HOME/bin/nvcc: the main build is CUDA=off"
  skip "CUDA=off: build" "the main build is CUDA=off"
elif [ "$INSTALLED" != 1 ]; then
  skip "CUDA=off: build" "the main build failed"
elif step "CUDA=off: build" run_variant_build && [ -n "$VARIANT_DIR" ]; then
  step "CUDA=off: make unit" variant_make -j"$OX_JOBS" unit
  step "CUDA=off: engine pytest" run_variant_engine_py
  if [ -n "$OX_CLUSTER_DIR" ] && [ -n "${PGHOST:-}" ]; then
    step "CUDA=off: installcheck" run_variant_installcheck
  else
    skip "CUDA=off: installcheck" "no cluster"
  fi
  VARIANT_STEPS=()
fi
for s in "${VARIANT_STEPS[@]}"; do skip "$s" "CUDA=off variant not built"; done

[ "${#FAILED[@]}" -eq 0 ]
