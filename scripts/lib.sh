# shellcheck shell=bash disable=SC2034
# Shared helpers for scripts/demo.sh and scripts/test.sh.  Source it:
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# Meant for a fresh Debian 12 machine, run as root (as CI does), and also
# fine on a developer machine that has everything already: every step is
# idempotent and quiet when there is nothing to do.
#
# Environment knobs:
#   ONNX_PG_PYTHON     Python to run the tests with (default: a venv made from python3)
#   ONNX_PG_VENV       where that venv lives (default ~/.cache/onnx_pg/venv)
#   ONNX_PG_PORTS      port range for the throwaway cluster (default 5480-5489)
#   ONNX_PG_KEEP=1     leave the throwaway cluster running at exit
#   ONNX_PG_BUILD_LOCK lock file serializing make runs in a shared checkout
#                      (default /tmp/onnx_pg_build.lock)

OX_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PG_MAJOR=15
PG_BIN="/usr/lib/postgresql/$PG_MAJOR/bin"
PG_CONFIG="$PG_BIN/pg_config"
PGXS_DIR="/usr/lib/postgresql/$PG_MAJOR/lib/pgxs"
OX_JOBS="$(nproc 2>/dev/null || echo 2)"

# Debian packages: build, server, tests (IPC::Run for the TAP tests, venv/pip
# for the Python tests).
OX_APT_PACKAGES="build-essential ca-certificates util-linux
  postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR
  libprotobuf-c-dev protobuf-c-compiler libopenblas-dev libopenblas-serial-dev
  libipc-run-perl python3 python3-venv python3-pip"
# Python packages for test/e2e, and onnx for the conformance runner's data
# (the ONNX backend node tests ship inside the onnx wheel).  scikit-learn,
# skl2onnx, xgboost (the CPU-only wheel: the default one pulls ~700 MB of
# CUDA/NCCL), lightgbm and onnxmltools train and convert the models of
# test/e2e/test_sklearn_zoo.py.  Generating the fixtures needs more: see
# test/models/generate.py (and test/models/networks/export.py: Debian's
# python3-torch and python3-torchvision).
OX_ONNX_VERSION=1.22.0
OX_PIP_PACKAGES="numpy onnx==$OX_ONNX_VERSION onnxruntime psycopg[binary] pytest
  scikit-learn skl2onnx xgboost-cpu lightgbm onnxmltools"
OX_PY_CHECK="import numpy, onnxruntime, psycopg, pytest, onnx, sklearn, skl2onnx, xgboost, lightgbm, onnxmltools; assert onnx.__version__ == '$OX_ONNX_VERSION'"

if [ -t 1 ] && [ -z "${CI:-}" ]; then
  OX_BOLD=$'\033[1m'; OX_RED=$'\033[31m'; OX_GREEN=$'\033[32m'; OX_OFF=$'\033[0m'
else
  OX_BOLD=""; OX_RED=""; OX_GREEN=""; OX_OFF=""
fi

ox_log() { printf '%s==> %s%s\n' "$OX_BOLD" "$*" "$OX_OFF"; }
ox_warn() { printf '%swarning: %s%s\n' "$OX_RED" "$*" "$OX_OFF" >&2; }
ox_die() { printf '%serror: %s%s\n' "$OX_RED" "$*" "$OX_OFF" >&2; exit 1; }

ox_require_root() {
  [ "$(id -u)" -eq 0 ] || ox_die "run this as root (it installs packages and the extension; the cluster runs as the postgres user)"
}

# ---------------------------------------------------------------------------
# dependencies

# Install the Debian packages that are missing (apt-get update first).
ox_install_apt() {
  local missing=() p
  for p in $OX_APT_PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    ox_log "Debian packages: all present"
    return 0
  fi
  ox_log "Debian packages: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || return 1
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/onnx_pg-apt.log 2>&1 || {
    tail -n 40 /tmp/onnx_pg-apt.log >&2
    return 1
  }
}

# Set OX_PY to a Python that has the test packages, installing them if needed.
ox_install_python() {
  if [ -n "${ONNX_PG_PYTHON:-}" ]; then
    OX_PY="$ONNX_PG_PYTHON"
  else
    local venv="${ONNX_PG_VENV:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/onnx_pg/venv}"
    if [ ! -x "$venv/bin/python" ]; then
      ox_log "Python: creating $venv"
      mkdir -p "$(dirname "$venv")"
      # --system-site-packages: reuse whatever python3 already has
      python3 -m venv --system-site-packages "$venv" || return 1
    fi
    OX_PY="$venv/bin/python"
  fi
  if "$OX_PY" -c "$OX_PY_CHECK" 2>/dev/null; then
    ox_log "Python packages: all present ($OX_PY)"
  else
    ox_log "Python packages: installing $OX_PIP_PACKAGES"
    # shellcheck disable=SC2086
    PIP_ROOT_USER_ACTION=ignore "$OX_PY" -m pip install -q --disable-pip-version-check --no-input \
      $OX_PIP_PACKAGES || return 1
    "$OX_PY" -c "$OX_PY_CHECK" || return 1
  fi
  export OX_PY
}

# ---------------------------------------------------------------------------
# build and install

# make, serialized with other builds of the same checkout.
ox_make() {
  local lock="${ONNX_PG_BUILD_LOCK:-/tmp/onnx_pg_build.lock}"
  if command -v flock >/dev/null 2>&1; then
    flock "$lock" make -C "$OX_ROOT" PG_CONFIG="$PG_CONFIG" "$@"
  else
    make -C "$OX_ROOT" PG_CONFIG="$PG_CONFIG" "$@"
  fi
}

ox_build() { ox_make -j"$OX_JOBS"; }

# The ONNX backend node tests (inside the onnx package of $OX_PY).
ox_onnx_node_tests() {
  "$OX_PY" -c "import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), 'backend/test/data/node'))"
}
ox_install_ext() { ox_make install; }

# Does the Makefile have this target?
ox_has_target() { make -C "$OX_ROOT" -n PG_CONFIG="$PG_CONFIG" "$1" >/dev/null 2>&1; }

# ---------------------------------------------------------------------------
# a throwaway cluster owned by postgres, in a temp dir, with its own socket dir

OX_CLUSTER_DIR=""

ox_port_free() {
  local port="$1" hex
  hex="$(printf '%04X' "$port")"
  # a TCP listener on that port, IPv4 or IPv6 (state 0A = LISTEN)
  if awk -v h=":$hex" 'NR > 1 && $4 == "0A" && substr($2, length($2) - 4) == h { f = 1 } END { exit !f }' \
      /proc/net/tcp /proc/net/tcp6 2>/dev/null; then
    return 1
  fi
  # a server using the default socket directories with that port
  [ ! -e "/tmp/.s.PGSQL.$port.lock" ] && [ ! -e "/var/run/postgresql/.s.PGSQL.$port.lock" ]
}

ox_pick_port() {
  local range="${ONNX_PG_PORTS:-5480-5489}" lo hi p
  lo="${range%-*}"; hi="${range#*-}"
  for ((p = lo; p <= hi; p++)); do
    if ox_port_free "$p"; then echo "$p"; return 0; fi
  done
  return 1
}

ox_stop_cluster() {
  [ -n "$OX_CLUSTER_DIR" ] || return 0
  if [ "${ONNX_PG_KEEP:-0}" = 1 ]; then
    ox_log "cluster left running: psql -h $PGHOST -p $PGPORT -U postgres ${PGDATABASE:-postgres}"
    ox_log "stop it with: runuser -u postgres -- $PG_BIN/pg_ctl -D $OX_CLUSTER_DIR/data stop"
    return 0
  fi
  if [ -f "$OX_CLUSTER_DIR/data/postmaster.pid" ]; then
    runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$OX_CLUSTER_DIR/data" -m fast -w stop >/dev/null 2>&1 ||
      runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$OX_CLUSTER_DIR/data" -m immediate -w stop >/dev/null 2>&1
  fi
  rm -rf "$OX_CLUSTER_DIR"
  OX_CLUSTER_DIR=""
}

# Start the cluster and export PGHOST/PGPORT/PGUSER/PGDATABASE for it.
ox_start_cluster() {
  local port
  port="$(ox_pick_port)" || { ox_warn "no free port in ${ONNX_PG_PORTS:-5480-5489}"; return 1; }
  OX_CLUSTER_DIR="$(mktemp -d /tmp/onnx_pg-cluster.XXXXXX)" || return 1
  mkdir -p "$OX_CLUSTER_DIR/sock"
  chown -R postgres:postgres "$OX_CLUSTER_DIR"
  chmod 755 "$OX_CLUSTER_DIR"
  # stop it at exit, unless the caller already has an EXIT trap (then that
  # trap must call ox_cleanup)
  if [ -z "$(trap -p EXIT)" ]; then
    trap ox_cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
  fi
  if ! runuser -u postgres -- "$PG_BIN/initdb" -D "$OX_CLUSTER_DIR/data" -U postgres -A trust \
      -E UTF8 --locale=C.UTF-8 >"$OX_CLUSTER_DIR/initdb.log" 2>&1; then
    cat "$OX_CLUSTER_DIR/initdb.log" >&2
    return 1
  fi
  cat >>"$OX_CLUSTER_DIR/data/postgresql.conf" <<EOF
# onnx_pg throwaway test cluster
listen_addresses = ''
unix_socket_directories = '$OX_CLUSTER_DIR/sock'
port = $port
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 40
EOF
  if ! runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$OX_CLUSTER_DIR/data" -l "$OX_CLUSTER_DIR/server.log" \
      -w -t 120 start >/dev/null; then
    ox_warn "the server did not start; its log:"
    tail -n 40 "$OX_CLUSTER_DIR/server.log" >&2
    return 1
  fi
  export PGHOST="$OX_CLUSTER_DIR/sock" PGPORT="$port" PGUSER=postgres PGDATABASE=postgres
  ox_log "cluster running: $OX_CLUSTER_DIR (port $port, socket dir $PGHOST)"
}

ox_server_log() {
  [ -n "$OX_CLUSTER_DIR" ] && [ -f "$OX_CLUSTER_DIR/server.log" ] && cat "$OX_CLUSTER_DIR/server.log"
}

ox_psql() { "$PG_BIN/psql" -X -v ON_ERROR_STOP=1 -q "$@"; }

# A server for a benchmark (make bench, bench-sql, bench-inquery): the one
# PGHOST/PGPORT name, which must have onnx_pg installed; otherwise, as root,
# the extension installed and a throwaway cluster with room for the
# benchmark tables in shared buffers (stopped at exit).  Returns 1, saying
# why, when there can be none (not root, no PostgreSQL here).  Under make
# (MAKELEVEL set) the Makefile has built everything and holds the build
# lock: make runs unlocked then.
ox_bench_server() {
  [ -n "${PGHOST:-}" ] || [ -n "${PGPORT:-}" ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    ox_warn "no server: set PGHOST/PGPORT to one with onnx_pg installed, or run as root for a throwaway cluster"
    return 1
  fi
  if [ ! -x "$PG_CONFIG" ]; then
    ox_warn "no server: PostgreSQL $PG_MAJOR is not installed here ($PG_CONFIG)"
    return 1
  fi
  if [ -n "${MAKELEVEL:-}" ]; then
    make -C "$OX_ROOT" PG_CONFIG="$PG_CONFIG" install >/dev/null
  else
    ox_make -j"$OX_JOBS" >/dev/null
    ox_make install >/dev/null
  fi
  ox_start_cluster || return 1
  # room for the benchmark tables in shared buffers (bench/inquery/run.py prewarms them)
  ox_psql -d postgres -c "ALTER SYSTEM SET shared_buffers = '1GB'" \
    -c "ALTER SYSTEM SET max_wal_size = '4GB'"
  runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$OX_CLUSTER_DIR/data" -l "$OX_CLUSTER_DIR/server.log" \
    -w -m fast restart >/dev/null
}

OX_CLEANUP_HOOKS=()
ox_cleanup() {
  local rc=$? h
  for h in "${OX_CLEANUP_HOOKS[@]}"; do "$h" || true; done
  ox_stop_cluster
  return $rc
}
