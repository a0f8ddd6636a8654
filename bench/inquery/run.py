#!/usr/bin/env python3
"""In-query throughput (issue 5): rows per second of the ways to score a table
inside PostgreSQL, against scanning it and against a Python client.

    python3 bench/inquery/run.py [--rows 1000000] [--reps 5] [--quick]

Against the server PGHOST/PGPORT/PGUSER name (onnx_pg installed), in database
--db (created if missing), on two tables of --rows rows:

  bench_iris  id int, features real[4]    model iris_rf (test/models, a random forest)
  bench_wide  id int, features real[100]  model mlp100 (make_mlp.py: 100-256-256-1, random weights)

each form is one statement over the whole table, timed from the client
(best of --reps after a warm-up; one core unless stated).  The runs go in
--rounds rounds, each of which measures every form in turn (a share of its
repetitions, after its own warm-up): on a machine whose speed drifts, as a
shared one's does by a quarter over minutes, a slow spell then slows a
share of every form's runs rather than all of one form's, so that the
ratios between forms hold better from run to run.  The targets' ratios
pair the forms within each round (paired_ratio) and take the median:

  floor       SELECT count(array_length(features, 1)) FROM t
  row-wise    SELECT count(onnx_predict(model, features)) FROM t, SET onnx.auto_batch = off
  auto        the same with automatic batching (Custom Scan (OnnxBatch), onnx.batch_size rows)
  query       SELECT count(r) FROM onnx_predict_query(model, 'SELECT id, features FROM t') AS p(id int, r real[])
  batch       onnx_predict_batch(model, array_agg(features)) over GROUP BY id / 1024
              (the tables carry statistics on id / 1024, so that the groups are hashed)
  *-2w        row-wise, auto and floor with 2 parallel workers (leader not participating)
  store       INSERT INTO an unlogged table SELECT id, onnx_predict(...) (auto): scored and stored
  client      Python: psycopg fetches the rows (server-side cursor, binary), onnxruntime
              scores them in batches of 10,000 (1 thread), COPY writes the scores back
              into the same unlogged table
  engine      the engine alone (bench/inquery/engine_rate.c) on batches of onnx.batch_size

count() consumes every score without sending a million rows to the client;
with parallel workers each worker counts its share (Partial Aggregate), so
the rows do not cross the Gather.  JIT is off: its compile time would
dominate the floor.

Writes bench/inquery/results.json (--json) and results.md beside it, the
plot docs/performance_inquery.svg (--svg), and the section "## In-query
throughput" of docs/performance.md (--out; replaced in place, the rest of
the file is kept).
"""
import argparse
import datetime
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import psycopg

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import machine as M  # noqa: E402  (bench/machine.py)

SECTION = "## In-query throughput"
BATCH_GROUP = 1024

# forms that are not scored inside the database (the 10x target's exceptions)
NOT_IN_DATABASE = ("client", "engine", "floor", "floor_2w")

FORMS = [
    # key, label, threads
    ("floor", "(e) floor: array_length over the same scan", 1),
    ("rowwise", "(a) row-wise onnx_predict", 1),
    ("auto", "(b) automatic batching", 1),
    ("query", "(c) onnx_predict_query (set-based form)", 1),
    ("batch", "(c) onnx_predict_batch over array_agg groups of 1024", 1),
    ("rowwise_2w", "(d) row-wise, 2 parallel workers", 2),
    ("auto_2w", "(d) automatic batching, 2 parallel workers", 2),
    ("floor_2w", "(e) floor, 2 parallel workers", 2),
    ("store", "(b) automatic batching, scores stored (INSERT ... SELECT)", 1),
    ("client", "(f) Python client: psycopg + onnxruntime + COPY", 1),
    ("engine", "engine alone, batches of onnx.batch_size (no SQL)", 1),
]

SERIAL = ["SET max_parallel_workers_per_gather = 0"]
PARALLEL = ["SET max_parallel_workers_per_gather = 2", "SET parallel_setup_cost = 0",
            "SET parallel_tuple_cost = 0", "SET min_parallel_table_scan_size = 0",
            "SET parallel_leader_participation = off"]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def connect(db, autocommit=True):
    return psycopg.connect(dbname=db, autocommit=autocommit)


def setup(args):
    with connect(os.environ.get("PGDATABASE_ADMIN", "postgres")) as c:
        if not c.execute("SELECT 1 FROM pg_database WHERE datname = %s", (args.db,)).fetchone():
            c.execute(f'CREATE DATABASE "{args.db}"')
    conn = connect(args.db)
    conn.execute("CREATE EXTENSION IF NOT EXISTS onnx_pg")
    conn.execute("SET client_min_messages = warning")
    with open(os.path.join(ROOT, "test", "models", "iris_rf.onnx"), "rb") as f:
        iris = f.read()
    from make_mlp import make_mlp
    mlp = make_mlp().SerializeToString()
    conn.execute("SELECT onnx_load_model('bench_iris', %s, true)", (iris,))
    conn.execute("SELECT onnx_load_model('bench_mlp', %s, true)", (mlp,))
    n = args.rows
    for table, width, make in (
            ("bench_iris", 4,
             "ARRAY[4.3 + random() * 3.6, 2 + random() * 2.4, 1 + random() * 5.9, 0.1 + random() * 2.4]::real[]"),
            ("bench_wide", 100, None)):
        have = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone()[0]
        if have and conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == n:
            continue
        log(f"creating {table} ({n} rows)")
        conn.execute(f"DROP TABLE IF EXISTS {table}")
        conn.execute("SELECT setseed(0.5)")
        if make:
            conn.execute(f"CREATE TABLE {table} AS SELECT i AS id, {make} AS features "
                         f"FROM generate_series(1, {n}) i")
        else:
            # 4096 distinct random rows, repeated: the model's cost depends on the values only through
            # how many hidden units its ReLUs zero (about half; a zero skips its row of weights)
            conn.execute("CREATE TEMP TABLE wide_base AS SELECT k, ARRAY(SELECT (random() * 2 - 1)::real "
                         "FROM generate_series(1, 100) WHERE k >= 0) AS f FROM generate_series(0, 4095) k")
            conn.execute(f"CREATE TABLE {table} AS SELECT i AS id, b.f AS features "
                         f"FROM generate_series(1, {n}) i JOIN wide_base b ON b.k = i % 4096")
            conn.execute("DROP TABLE wide_base")
        conn.execute(f"VACUUM ANALYZE {table}")
    for table in ("bench_iris", "bench_wide"):
        # the batch form groups by id / BATCH_GROUP: without statistics on that expression the
        # planner takes it for as many groups as rows and sorts every row to group them (see
        # docs/batching.md, "Explicit batches")
        if not conn.execute("SELECT 1 FROM pg_statistic_ext WHERE stxname = %s",
                            (f"{table}_batches",)).fetchone():
            conn.execute(f"CREATE STATISTICS {table}_batches ON (id / {BATCH_GROUP}) FROM {table}")
            conn.execute(f"ANALYZE {table}")
    conn.execute("DROP TABLE IF EXISTS bench_scores")
    conn.execute("CREATE UNLOGGED TABLE bench_scores (id int, score real[])")
    conn.close()
    return iris, mlp


def prewarm(args, table):
    """Read table into shared buffers (pg_prewarm), so that every form scans it from there.
    A sequential scan of a table over a quarter of shared_buffers reads through a ring of
    256 KB and leaves the table in the kernel's page cache only: each scan copies every page
    in again (bench_wide: 460 MB, about 40 ms of each 100 to 150 ms floor scan).  Returns
    whether it could (the extension ships with PostgreSQL's contrib modules)."""
    with connect(args.db) as c:
        if not c.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_prewarm'").fetchone():
            return False
        c.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
        c.execute("SELECT pg_prewarm(%s)", (table,))
    return True


def backend_cpu(conn):
    """CPU seconds the backend has used, when the server runs on this machine: from
    /proc/PID/schedstat (nanoseconds; the backend is idle between statements, so the
    figure is current), else /proc/PID/stat (clock ticks, 10 ms: too coarse for the
    fast forms, whose best run is a few ticks)."""
    pid = conn.info.backend_pid
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            ns = int(f.read().split()[0])
        if ns > 0:
            return ns / 1e9
    except (OSError, IndexError, ValueError):
        pass
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def timed(conn, sql, settings, reps):
    """The wall times and backend CPU times of reps runs, after a warm-up."""
    for s in settings:
        conn.execute(s)
    conn.execute(sql).fetchall()            # warm-up (and session caches)
    times, cpus = [], []
    for _ in range(reps):
        c0 = backend_cpu(conn)
        t0 = time.perf_counter()
        conn.execute(sql).fetchall()
        times.append(time.perf_counter() - t0)
        c1 = backend_cpu(conn)
        if c0 is not None and c1 is not None and c1 > c0:
            cpus.append(c1 - c0)
    return times, cpus


def statement(form, model, table):
    agg = f"SELECT count(%s) FROM {table}"
    if form.startswith("floor"):
        return agg % "array_length(features, 1)"
    if form.startswith("rowwise") or form.startswith("auto"):
        return agg % f"onnx_predict('{model}', features)"
    if form == "query":
        return (f"SELECT count(r) FROM onnx_predict_query('{model}', 'SELECT id, features FROM {table}') "
                "AS p(id int, r real[])")
    if form == "batch":
        return (f"SELECT sum(cardinality(onnx_predict_batch('{model}', f))) FROM "
                f"(SELECT array_agg(features) AS f FROM {table} GROUP BY id / {BATCH_GROUP}) s")
    if form == "store":
        return f"INSERT INTO bench_scores SELECT id, onnx_predict('{model}', features) FROM {table}"
    raise ValueError(form)


def run_sql_form(args, form, model, table, reps, with_plan):
    """One round of a form: the wall and CPU times of reps runs, and its plan when asked"""
    conn = connect(args.db)
    # loads the library in this session before anything is planned: the
    # planner hook of automatic batching is active from the first statement
    conn.execute("LOAD 'onnx_pg'")
    settings = ["SET jit = off", "SET work_mem = '256MB'"]
    settings += PARALLEL if form.endswith("_2w") else SERIAL
    settings.append("SET onnx.auto_batch = %s" % ("off" if form.startswith("rowwise") else "on"))
    sql = statement(form, model, table)
    cpu = None
    if form == "store":
        for s in settings:
            conn.execute(s)
        times, cpus = [], []
        for _ in range(reps + 1):
            conn.execute("TRUNCATE bench_scores")
            c0 = backend_cpu(conn)
            t0 = time.perf_counter()
            conn.execute(sql)
            times.append(time.perf_counter() - t0)
            c1 = backend_cpu(conn)
            if c0 is not None and c1 is not None and c1 > c0:
                cpus.append(c1 - c0)
        times, cpus = times[1:], cpus[1:]
    else:
        times, cpus = timed(conn, sql, settings, reps)
    if form.endswith("_2w"):
        cpus = []                           # the workers' CPU is not the backend's
    if not with_plan:
        plan = None
    elif form == "batch":
        # one more run, analyzed: where the grouping's time goes (the report quotes it)
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN (ANALYZE, COSTS OFF) " + sql).fetchall())
    else:
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN (COSTS OFF) " + sql).fetchall())
    conn.close()
    return times, cpus, plan


def grouping_facts(plan):
    """From the batch form's EXPLAIN ANALYZE: the sort method, the milliseconds spent in the
    grouping node and below it (scan, sort, array_agg), and the statement's."""
    sort = re.search(r"Sort Method: ([^\n]*)", plan)
    group = re.search(r"(?:GroupAggregate|HashAggregate)[^\n]*actual time=[0-9.]+\.\.([0-9.]+)", plan)
    total = re.search(r"Execution Time: ([0-9.]+) ms", plan)
    return (" ".join(sort.group(1).split()) if sort else None,
            float(group.group(1)) if group else None,
            float(total.group(1)) if total else None)


def run_client(args, model_bytes, model, table, output, reps):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
    in_name = sess.get_inputs()[0].name
    times, cpus = [], []
    for _ in range(reps):
        with connect(args.db) as c:
            c.execute("TRUNCATE bench_scores")
        t0 = time.perf_counter()
        p0 = time.process_time()
        reader = connect(args.db, autocommit=False)
        writer = connect(args.db, autocommit=False)
        b0 = (backend_cpu(reader), backend_cpu(writer))
        n = 0
        with reader.cursor(name="bench_reader", binary=True) as cur, writer.cursor() as wcur:
            cur.itersize = 10000
            cur.execute(f"SELECT id, features FROM {table}")
            while True:
                rows = cur.fetchmany(10000)
                if not rows:
                    break
                ids = [r[0] for r in rows]
                x = np.array([r[1] for r in rows], dtype=np.float32)
                y = sess.run([output], {in_name: x})[0]
                y = np.asarray(y, dtype=np.float32).reshape(len(ids), -1)
                with wcur.copy("COPY bench_scores (id, score) FROM STDIN (FORMAT BINARY)") as cp:
                    cp.set_types(["int4", "float4[]"])
                    for i, s in zip(ids, y.tolist()):
                        cp.write_row((i, s))
                n += len(ids)
        writer.commit()
        reader.commit()
        b1 = (backend_cpu(reader), backend_cpu(writer))
        reader.close()
        writer.close()
        times.append(time.perf_counter() - t0)
        if None not in b0 and None not in b1:
            # the client's CPU and its two backends'
            cpus.append(time.process_time() - p0 + (b1[0] - b0[0]) + (b1[1] - b0[1]))
        assert n == args.rows, (n, args.rows)
    return times, cpus


def run_engine(args, model_bytes, features, table):
    """The engine alone, on the table's first rows (the same branches for trees)."""
    exe = args.engine_rate
    if not exe or not os.path.exists(exe):
        return None
    base = os.path.join(os.path.dirname(exe), table)
    with open(base + ".onnx", "wb") as f:
        f.write(model_bytes)
    n = min(args.rows, 65536)
    with connect(args.db) as c:
        rows = c.execute(f"SELECT features FROM {table} ORDER BY id LIMIT {n}").fetchall()
    np.array([r[0] for r in rows], dtype=np.float32).tofile(base + ".f32")
    out = subprocess.run([exe, base + ".onnx", str(features), str(args.batch_size),
                          str(args.engine_seconds), base + ".f32"],
                         capture_output=True, text=True, check=True).stdout
    rate = float(re.search(r"rows_per_second=([0-9.]+)", out).group(1))
    cpu_rate = float(re.search(r"rows_per_cpu_second=([0-9.]+)", out).group(1))
    return [args.rows / rate], [args.rows / cpu_rate]


def machine():
    return {"cpu": M.cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
            "caches": M.cache_sizes(),
            "load": os.getloadavg()[0] if hasattr(os, "getloadavg") else None}


# ---------------------------------------------------------------------------
# report

def fmt_rate(r):
    return "{:,.0f}".format(r) if r is not None else "n/a"


def paired_ratio(model, a, b):
    """Form a's rate over form b's, as the targets judge it: (value, per-round ratios, basis).

    This machine's speed drifts by a quarter within minutes, and two forms' bests over the whole
    run may come from different spells of it.  So each round's best of a is set against the same
    round's best of b (measured a minute or less apart), and the median of those ratios is the
    value, by CPU time where both sides have it (other load disturbs it less), else by wall time.
    Without a common round (results of an older run), the ratio of the two overall bests."""
    ea, eb = model["forms"].get(a) or {}, model["forms"].get(b) or {}
    ra, rb = ea.get("rounds") or {}, eb.get("rounds") or {}
    pairs = []
    for r in sorted(set(ra) & set(rb), key=int):
        ca, cb = ra[r].get("cpu_seconds"), rb[r].get("cpu_seconds")
        if ca and cb:
            pairs.append((cb / ca, "CPU time"))
        elif ra[r].get("seconds") and rb[r].get("seconds"):
            pairs.append((rb[r]["seconds"] / ra[r]["seconds"], "wall time"))
    if pairs:
        kinds = {how for _, how in pairs}
        basis = kinds.pop() if len(kinds) == 1 else "CPU time, or wall time where a round has no CPU time"
        return statistics.median(v for v, _ in pairs), [v for v, _ in pairs], basis
    for key, basis in (("rows_per_cpu_s", "CPU time"), ("rows_per_s", "wall time")):
        if ea.get(key) and eb.get(key):
            return ea[key] / eb[key], [], basis
    return None, [], None


def describe_ratio(value, rounds, basis):
    if rounds:
        return "%.2fx by %s (the median of the rounds' %s)" % (
            value, basis, ", ".join("%.2f" % v for v in rounds))
    return "%.2fx by %s (best against best)" % (value, basis)


def targets(res):
    """The issue's targets: (text, measured, met)."""
    out = []
    i, m = res["models"]["iris_rf"], res["models"]["mlp"]

    def rate(model, form, key="rows_per_s"):
        e = model["forms"].get(form)
        return e.get(key) if e else None

    rw = rate(i, "rowwise")
    if rw:
        cpu = rate(i, "rowwise", "rows_per_cpu_s")
        out.append(("row-wise onnx_predict, iris_rf, one core: at least 2,000,000 rows/s",
                    fmt_rate(rw) + " rows/s" + ("; %s rows per CPU-second" % fmt_rate(cpu) if cpu else ""),
                    (cpu or rw) >= 2e6))
    r = paired_ratio(i, "floor", "auto")
    if r[0]:
        out.append(("automatic batching, iris_rf: within 2x of the floor",
                    "floor / auto = " + describe_ratio(*r), r[0] <= 2.0))
    r = paired_ratio(m, "engine", "auto")
    if r[0]:
        out.append(("automatic batching, MLP: within 1.3x of the engine's batch throughput",
                    "engine / auto = " + describe_ratio(*r), r[0] <= 1.3))
    worst = None                            # (paired_ratio's answer, model, form)
    for name, model in res["models"].items():
        if not rate(model, "client"):
            continue
        for key, _, _ in FORMS:
            if key in NOT_IN_DATABASE:
                continue
            r = paired_ratio(model, key, "client")
            if r[0] and (worst is None or r[0] < worst[0][0]):
                worst = (r, name, key)
    if worst:
        out.append(("every in-database form at least 10x faster than the Python client",
                    "slowest: %s %s at %s" % (worst[1], worst[2], describe_ratio(*worst[0])),
                    worst[0][0] >= 10))
    return out


def write_svg(res, path):
    rows = []
    for name, model in res["models"].items():
        for key, label, _ in FORMS:
            e = model["forms"].get(key)
            if e:
                rows.append((f"{name}: {label}", e["rows_per_s"], key))
    if not rows:
        return
    bar_h, gap, left, width = 16, 5, 430, 380
    top = 40
    height = top + len(rows) * (bar_h + gap) + 40
    lo, hi = 1e4, 1e8
    colors = {"floor": "#999999", "floor_2w": "#bbbbbb", "client": "#d62728", "engine": "#7f7f7f"}

    def x(v):
        v = min(max(v, lo), hi)
        return left + width * (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 110}" height="{height}" '
           'font-family="sans-serif" font-size="11">',
           f'<text x="10" y="18" font-size="13" font-weight="bold">In-query throughput, rows/s '
           f'({res["rows"]:,} rows; log scale)</text>']
    for d in range(4, 9):
        gx = x(10 ** d)
        out.append(f'<line x1="{gx:.1f}" y1="{top - 8}" x2="{gx:.1f}" y2="{height - 30}" stroke="#ddd"/>')
        out.append(f'<text x="{gx:.1f}" y="{height - 16}" text-anchor="middle">1e{d}</text>')
    for k, (label, v, key) in enumerate(rows):
        y = top + k * (bar_h + gap)
        color = colors.get(key, "#1f77b4" if "iris" in label else "#2ca02c")
        out.append(f'<text x="{left - 6}" y="{y + bar_h - 4}" text-anchor="end">{label}</text>')
        out.append(f'<rect x="{left}" y="{y}" width="{x(v) - left:.1f}" height="{bar_h}" fill="{color}"/>')
        out.append(f'<text x="{x(v) + 4:.1f}" y="{y + bar_h - 4}">{fmt_rate(v)}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def markdown(res, svg_name):
    L = [SECTION, ""]
    L.append("Scoring every row of a %s-row table inside PostgreSQL, and the same work done by a "
             "Python client; rows per second, best of %d runs (the Python client: "
             "best of %d, each with new connections), made in %d rounds that each measure every form "
             "in turn after its own warm-up, so that a slow spell of the machine falls on all the "
             "forms alike (the targets set each round's best of a form against the same round's best "
             "of the other and take the median of those ratios); measured by "
             "`make bench-inquery` (bench/inquery/run.py; %s). Machine: %s, %s cores%s, load average "
             "%.1f at the start and %.1f at the end (other work on the machine slows the wall-clock "
             "rates; the per-CPU-second rates much less)."
             % ("{:,}".format(res["rows"]), res["reps"], res.get("client_reps", 1), res.get("rounds", 1),
                res["date"],
                res["machine"]["cpu"],
                res["machine"]["cores"],
                " (per core: %s)" % res["machine"]["caches"] if res["machine"].get("caches") else "",
                res["machine"]["load"] or 0,
                res["machine"].get("load_end") or 0))
    L.append("")
    L.append("Models: **iris_rf** (test/models, a scikit-learn random forest: 4 features, the label "
             "output) on `bench_iris`, and **MLP** 100-256-256-1 (bench/inquery/make_mlp.py, random "
             "weights) on `bench_wide` (100 features). One core unless stated; onnx.batch_size = %d; "
             "JIT off. %s" % (res["batch_size"],
                              "Each round first reads the model's table into shared buffers "
                              "(pg_prewarm; without it a sequential scan of a table over a quarter of "
                              "shared_buffers reads every page from the kernel's page cache again)."
                              if res.get("prewarmed") else
                              "The tables were not prewarmed (no pg_prewarm): every scan reads "
                              "them from the kernel's page cache."))
    L.append("")
    L.append("| form | iris_rf rows/s | vs floor | per CPU-s | MLP rows/s | vs floor | per CPU-s |")
    L.append("|---|---:|---:|---:|---:|---:|---:|")
    for key, label, _ in FORMS:
        cells = []
        for name in ("iris_rf", "mlp"):
            m = res["models"][name]
            e = m["forms"].get(key)
            fl = m["forms"].get("floor_2w" if key.endswith("_2w") else "floor")
            if e:
                cells.append(fmt_rate(e["rows_per_s"]))
                cells.append("%.2fx" % (fl["rows_per_s"] / e["rows_per_s"]) if fl and key not in ("floor", "floor_2w")
                             else "")
                cells.append(fmt_rate(e.get("rows_per_cpu_s")) if e.get("rows_per_cpu_s") else "")
            else:
                cells += ["n/a", "", ""]
        L.append("| %s | %s |" % (label, " | ".join(cells)))
    L.append("")
    L.append("\"vs floor\": how many times slower than the scan alone (the floor of the same "
             "parallelism), by wall time. \"per CPU-s\": rows per second of CPU time of the process "
             "doing the work (the server backend for serial forms; the engine tool; the Python "
             "client plus its backends), which other load on the machine disturbs less than wall "
             "time. The statements are in bench/inquery/run.py; each in-database form reads the "
             "table, scores every row and consumes the scores (count), except \"stored\", which "
             "writes them into an unlogged table as the Python client does.")
    L.append("")
    L.append("Targets (issue 5):")
    L.append("")
    for text, measured, met in targets(res):
        L.append("- %s: %s (%s)" % (text, measured, "met" if met else "**not met**"))
    L.append("")
    mlp = res["models"].get("mlp", {"forms": {}})

    def vs_client(key):
        """the form's rate over the client's, as targets() judges it"""
        return paired_ratio(mlp, key, "client")[0]

    below = []
    for key, label, _ in FORMS:
        r = vs_client(key) if key not in NOT_IN_DATABASE else None
        if r and r < 10:
            below.append((key, label, r))
    if below:
        L.append("MLP forms below 10x the client: %s." % "; ".join(
            "%s %.1fx" % (label, r) for _, label, r in below))
        L.append("")
    # the row-wise MLP is the form nearest the target: where it stands against this machine's bound
    if vs_client("rowwise"):
        wr = res.get("mlp_weights_read") or {}
        floor = ""
        client = mlp["forms"].get("client", {}).get("rows_per_cpu_s")
        rowwise = mlp["forms"].get("rowwise", {}).get("rows_per_cpu_s")
        if wr.get("gbs") and client and rowwise:
            floor = (" A plain read of as many bytes, over and over on one core (`bench/stream.c`), runs at "
                     "%.0f GB/s on this machine: %.2f us a row, %s rows per second with nothing else done "
                     "(the row-wise form: %s rows per CPU-second), while "
                     "ten times the client is %s rows per CPU-second (%.2f us a row, %.0f GB/s)." % (
                         wr["gbs"], wr["seconds"] * 1e6, fmt_rate(1 / wr["seconds"]), fmt_rate(rowwise),
                         fmt_rate(10 * client), 1e6 / (10 * client), wr["bytes"] * 10 * client / 1e9))
            scan = mlp["forms"].get("floor", {}).get("rows_per_cpu_s")
            if scan:
                # the scan alone (form e) plus the plain read of the weights: what no row-wise
                # run can beat on this machine, whatever its overhead
                bound = 1 / (wr["seconds"] + 1 / scan)
                floor += (" The scan alone (the floor form, %.2f us a row) plus that plain read "
                          "is %.2f us a row: no row-wise form can do more than %s rows per "
                          "CPU-second here, %.1fx the client; the row-wise form runs at %.0f%% of "
                          "that bound." % (1e6 / scan, 1e6 * (wr["seconds"] + 1 / scan),
                                           fmt_rate(bound), bound / client, 100 * rowwise / bound))
        L.append(("The row-wise MLP form, %.2fx the client by the median of the rounds' ratios, is "
                  % vs_client("rowwise")) +
                 "(a) with automatic batching turned off: one run per row, "
                 "each a chain of matrix-vector products over the network's weights: all of the first "
                 "layer's and, of the later layers', the rows that the ReLU zeros do not skip, %s of "
                 "the %s on average over rows like the table's; that is bound by the core's cache "
                 "bandwidth. The Python client runs the same network in batches of 10,000 "
                 "(matrix-matrix products).%s The same statement with automatic batching on (the "
                 "default) is row (b)." % (
                     "%.0f KB" % (wr["bytes"] / 1024) if wr.get("bytes") else "?",
                     "%.0f KB" % (wr["total_bytes"] / 1024) if wr.get("total_bytes") else "all",
                     floor))
        L.append("")
    if any(key == "batch" for key, _, _ in below):
        plan = mlp["forms"].get("batch", {}).get("plan") or ""
        sort_method, grouped_ms, total_ms = grouping_facts(plan)
        if "Sort" in plan:
            grouping = ("PostgreSQL forms the groups by sorting every row on id / %d (Sort, then "
                        "GroupAggregate; it cannot know that the expression has only %d values), "
                        "copying each row into the sort and again into its group's array" % (
                            BATCH_GROUP, res["rows"] // BATCH_GROUP + 1))
            if sort_method:
                grouping += " (Sort Method: %s)" % sort_method
        elif "HashAggregate" in plan:
            grouping = ("PostgreSQL forms the groups in a hash table (HashAggregate), each row "
                        "copied into its group's array as the scan reads it; it knows that id / %d "
                        "has %d values from the statistics the benchmark creates on that expression "
                        "(CREATE STATISTICS, as [batching.md](batching.md) advises; without them it "
                        "takes the expression for as many groups as rows and sorts every row)" % (
                            BATCH_GROUP, res["rows"] // BATCH_GROUP + 1))
        else:
            grouping = "PostgreSQL forms the groups"
        if grouped_ms and total_ms:
            grouping += ("; in one EXPLAIN ANALYZE run, scanning%s and grouping the rows took "
                         "%.0f ms of the statement's %.0f ms, and the network runs the rest"
                         % (", sorting" if "Sort" in plan else "", grouped_ms, total_ms))
        L.append("onnx_predict_batch over array_agg packs each group of %d rows into a %d x 100 "
                 "real[][] (array_agg), runs the network once on it and unnests the scores. %s. "
                 "The engine alone on the same batches: %s rows per CPU-second. Automatic batching "
                 "(b) and onnx_predict_query (c) score the same rows without grouping them." % (
                     BATCH_GROUP, BATCH_GROUP, grouping, fmt_rate(
                         mlp["forms"].get("engine", {}).get("rows_per_cpu_s") or 0)))
        L.append("")
    L.append("![in-query throughput](%s)" % svg_name)
    L.append("")
    L.append("How the forms differ: row-wise onnx_predict runs the model once per row (the per-row "
             "cost is the engine's per-run overhead plus the model); automatic batching "
             "(Custom Scan (OnnxBatch), see [batching.md](batching.md)) runs it once per onnx.batch_size rows; "
             "onnx_predict_query scores a query's rows through an SPI cursor and a tuplestore; "
             "onnx_predict_batch needs the rows packed into a 2-D array first (array_agg over GROUP BY "
             "id / %d; the tables carry statistics on that expression, without which the planner "
             "sorts every row to form the groups: see [batching.md](batching.md)). With 2 "
             "parallel workers each worker scores and counts its share of the rows. Ratios marked "
             "\"by CPU time\" compare rows per CPU-second of the processes doing the work (for the "
             "Python client: the client and its two backends); on a busy machine they are the "
             "better measure of what one core does, and the targets are judged on them when both "
             "sides have them." % BATCH_GROUP)
    L.append("")
    return "\n".join(L)


def update_performance_md(path, section):
    text = ""
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
    pat = re.compile(r"^%s\n.*?(?=^## |\Z)" % re.escape(SECTION), re.S | re.M)
    if pat.search(text):
        text = pat.sub(lambda _: section + "\n", text)
    else:
        if text and not text.endswith("\n"):
            text += "\n"
        text += ("\n" if text else "# Performance\n\n") + section + "\n"
    with open(path, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1000000)
    # two runs of each form in each of the five rounds: a round's best is what the targets pair
    ap.add_argument("--reps", type=int, default=10)
    # its rate moved by a quarter from run to run (51,864 to 65,520 rows per CPU-second on one
    # machine): one in every round, each paired with the round's in-database forms
    ap.add_argument("--client-reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=5,
                    help="rounds over all the forms, each with a share of every form's repetitions; "
                         "the targets' ratios are the medians of the rounds' ratios")
    ap.add_argument("--quick", action="store_true", help="100,000 rows, 2 repetitions")
    ap.add_argument("--db", default=os.environ.get("PGDATABASE") or "onnx_bench")
    ap.add_argument("--batch-size", type=int, default=1024, help="onnx.batch_size (the default)")
    ap.add_argument("--engine-rate", default=os.path.join(ROOT, "build", "bench_inquery", "engine_rate"))
    ap.add_argument("--engine-seconds", type=float, default=3.0)
    ap.add_argument("--forms", nargs="+", help="only these forms (keys: %s)" % ", ".join(k for k, _, _ in FORMS))
    ap.add_argument("--models", nargs="+", default=["iris_rf", "mlp"])
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "performance.md"))
    ap.add_argument("--svg", default=os.path.join(ROOT, "docs", "performance_inquery.svg"))
    ap.add_argument("--json", default=os.path.join(HERE, "results.json"))
    ap.add_argument("--report-only", action="store_true",
                    help="measure nothing: rewrite the report and the plot from --json")
    args = ap.parse_args()
    if args.quick:
        args.rows, args.reps, args.engine_seconds, args.client_reps, args.rounds = 100000, 2, 1.0, 1, 1
    if args.report_only:
        with open(args.json) as f:
            res = json.load(f)
        report(args, res)
        return

    iris_bytes, mlp_bytes = setup(args)
    models = {
        "iris_rf": dict(name="bench_iris", table="bench_iris", bytes=iris_bytes, features=4, output="output_label"),
        "mlp": dict(name="bench_mlp", table="bench_wide", bytes=mlp_bytes, features=100, output="y"),
    }
    res = {"rows": args.rows, "reps": args.reps, "client_reps": args.client_reps, "rounds": args.rounds,
           "batch_size": args.batch_size, "date": datetime.date.today().isoformat(), "machine": machine(), "models": {}}
    if os.path.exists(args.json):
        with open(args.json) as f:
            old = json.load(f)
        if old.get("rows") == args.rows:
            res["models"] = old.get("models", {})
    for mname in ("iris_rf", "mlp"):
        res["models"].setdefault(mname, {"forms": {}})
    rounds = max(1, args.rounds)
    samples = {}                            # (model, form) -> its wall and CPU times so far, its plan
    for r in range(rounds):
        for mname in args.models:
            m = models[mname]
            res["prewarmed"] = prewarm(args, m["table"]) and res.get("prewarmed", True)
            for key, label, threads in FORMS:
                if args.forms and key not in args.forms:
                    continue
                # the engine's one run of --engine-seconds in every round, a pair for automatic batching
                total = args.client_reps if key == "client" else rounds if key == "engine" else args.reps
                # this round's share of the form's repetitions (at least one in the first; the
                # last round's share is never empty, so every form runs in it)
                reps = total * (r + 1) // rounds - total * r // rounds
                if r == 0 and total > 0:
                    reps = max(reps, 1)
                if reps == 0:
                    continue
                log(f"{mname}: {label} (round {r + 1} of {rounds})")
                plan = None
                if key == "client":
                    times, cpus = run_client(args, m["bytes"], m["name"], m["table"], m["output"], reps)
                elif key == "engine":
                    got = run_engine(args, m["bytes"], m["features"], m["table"])
                    if got is None:
                        log("  (no engine_rate binary: skipped)")
                        continue
                    times, cpus = got
                else:
                    times, cpus, plan = run_sql_form(args, key, m["name"], m["table"], reps,
                                                     with_plan=r == rounds - 1)
                acc = samples.setdefault((mname, key), {"times": [], "cpus": [], "plan": None, "rounds": {}})
                acc["times"] += times
                acc["cpus"] += cpus
                acc["plan"] = plan or acc["plan"]
                # this round's best, which paired_ratio sets against the other forms' of the round
                acc["rounds"][str(r)] = {"seconds": min(times), "cpu_seconds": min(cpus) if cpus else None}
                best, med = min(acc["times"]), statistics.median(acc["times"])
                cpu = min(acc["cpus"]) if acc["cpus"] else None
                entry = {"rows_per_s": args.rows / best, "median_rows_per_s": args.rows / med,
                         "seconds": best, "threads": threads, "runs": len(acc["times"]),
                         "rows_per_cpu_s": args.rows / cpu if cpu else None, "rounds": acc["rounds"]}
                if acc["plan"]:
                    entry["plan"] = acc["plan"]
                res["models"][mname]["forms"][key] = entry
                log("  %s rows/s (median %s, %d runs so far)" % (fmt_rate(entry["rows_per_s"]),
                                                                fmt_rate(entry["median_rows_per_s"]),
                                                                len(acc["times"])))
                # after every form: an interrupted run keeps what it measured
                with open(args.json, "w") as f:
                    json.dump(res, f, indent=1)

    res["machine"]["load_end"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    res["mlp_weights_read"] = weights_read(mlp_bytes)
    with open(args.json, "w") as f:
        json.dump(res, f, indent=1)
    report(args, res)


def weights_read(model_bytes):
    """the weight bytes a row-wise run of the MLP reads, averaged over rows like the table's (all of
    the first layer's, and the rows of the later layers' that its ReLU zeros do not skip), and how
    fast one core reads as many bytes over and over (bench/stream.c, as the CPU benchmark measures
    its MLP): the floor of a row-wise run"""
    import importlib.util

    spec = importlib.util.spec_from_file_location("cpu_bench", os.path.join(os.path.dirname(HERE), "run.py"))
    cpu_bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cpu_bench)

    total = cpu_bench.float_weight_bytes(model_bytes)
    rows = np.random.default_rng(0).uniform(-1, 1, (256, 100)).astype(np.float32)
    nbytes = int(np.mean([cpu_bench.mlp_read_bytes(model_bytes, r) for r in rows]))
    st = cpu_bench.stream_rate(nbytes)
    out = {"bytes": nbytes, "total_bytes": total}
    if st:
        out.update(seconds=st[0], gbs=st[1])
    return out


def report(args, res):
    write_svg(res, args.svg)
    section = markdown(res, os.path.relpath(args.svg, os.path.dirname(args.out)))
    # beside --json: a run writing its report elsewhere leaves the kept one alone
    with open(os.path.splitext(args.json)[0] + ".md", "w") as f:
        f.write(section + "\n")
    update_performance_md(args.out, section)
    for text, measured, met in targets(res):
        log("%-80s %s %s" % (text, measured, "met" if met else "NOT MET"))


if __name__ == "__main__":
    main()
