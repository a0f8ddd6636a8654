#!/usr/bin/env python3
"""In-SQL variant of the CPU benchmark: the cost of the PostgreSQL layer.

    PGHOST=... PGPORT=... PGUSER=... [PGDATABASE=...] python3 bench/inquery_cpu.py [--quick]

For resnet50 (batch 1 and 8) and the MLP (batch 1 and 256) it times, against
a running server with onnx_pg installed, and at 1 and 2 threads
(SET onnx.intra_op_threads):

  sql     SELECT onnx_predict_batch(model, x) over the rows of a query:
          n calls per statement, x a real[][] (one row per sample) read from
          a table, so the client round trip and the input's transfer are
          amortized or excluded; what is left is the PostgreSQL layer (detoast,
          array checks, the session cache lookup, building the real[][]
          result) plus the engine run;
  sql1    for the MLP at batch 1 also onnx_predict(model, x) with x real[784],
          the one-row-at-a-time scoring path (onnx.auto_batch off: one run
          per call);
  sql1b   the same statement with automatic batching on (the default): the
          calls run onnx.batch_size rows at a time, the per-call cost of
          scoring a table row by row;
  rt      one statement per call, the input sent as a parameter each time
          (what a client scoring one request at a time pays);
  engine  the same model, input and thread count through the engine API in
          this process (build/libox_capi.so or $OX_CAPI_LIB), for reference.

The engine in the server is the installed onnx_pg.so, which can be a
different build from the engine library; the report says when each was
built.  Results go to bench/results/inquery.md (and .json);
bench/run.py includes that file in docs/performance.md.  Without a reachable
server (or without psycopg) the script says so and exits 0, leaving earlier
results alone.
"""
import argparse
import datetime
import json
import os
import sys
import time

# before numpy starts its BLAS threads, which would spin under the timings
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "engine"))
sys.path.insert(0, HERE)

CASES = [("resnet50", 1), ("resnet50", 8), ("mlp", 1), ("mlp", 256)]
SHAPES = {"resnet50": (3, 224, 224), "mlp": (784,)}


def skip(msg):
    print("inquery_cpu: skipped: %s" % msg)
    sys.exit(0)


def fmt_t(s):
    if s >= 1.0:
        return "%.2f s" % s
    if s >= 1e-3:
        return "%.2f ms" % (s * 1e3)
    return "%.1f µs" % (s * 1e6)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--models", nargs="+", choices=sorted(SHAPES))
    ap.add_argument("--budget", type=float, help="seconds per case and thread count")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "inquery.md"))
    args = ap.parse_args()
    budget = args.budget if args.budget is not None else (1.0 if args.quick else 8.0)

    try:
        import psycopg
    except ImportError:
        skip("psycopg (version 3) is not installed")
    try:
        conn = psycopg.connect(connect_timeout=5, autocommit=True)
    except Exception as e:  # psycopg.OperationalError and friends
        skip("no PostgreSQL server reachable with PGHOST=%s PGPORT=%s PGUSER=%s (%s)" % (
            os.environ.get("PGHOST", ""), os.environ.get("PGPORT", ""), os.environ.get("PGUSER", ""),
            str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__))
    cur = conn.cursor()
    try:
        cur.execute("CREATE EXTENSION IF NOT EXISTS onnx_pg")
    except Exception as e:
        skip("onnx_pg is not available in this server: %s" % str(e).strip().splitlines()[0])
    cur.execute("SELECT current_setting('server_version'), "
                "(SELECT extversion FROM pg_extension WHERE extname = 'onnx_pg'), "
                "(SELECT setting FROM pg_settings WHERE name = 'data_directory'), inet_server_addr()")
    server_version, ext_version, _datadir, _addr = cur.fetchone()
    cur.execute("SELECT pg_backend_pid()")
    backend_pid = cur.fetchone()[0]

    def pin_backend(threads):
        """Pin the server backend like this process when the server runs on this machine (best effort)."""
        want = set(sorted(os.sched_getaffinity(0) | set(range(os.cpu_count() or 1)))[:threads])
        try:
            with open("/proc/%d/cmdline" % backend_pid, "rb") as f:
                if b"postgres" not in f.read():
                    return False
            for tid in os.listdir("/proc/%d/task" % backend_pid):
                os.sched_setaffinity(int(tid), want)
            return True
        except OSError:
            return False

    import run as R  # bench/run.py: models, sessions, inputs

    models = [m for m in SHAPES if not args.models or m in args.models]
    R.ensure_models(models)
    import oxengine

    try:
        cur.execute("SET onnx.max_model_size = -1")
    except Exception:
        pass  # not a superuser: keep the default limit
    cur.execute("DROP TABLE IF EXISTS onnx_bench_input")
    cur.execute("CREATE TABLE onnx_bench_input (name text PRIMARY KEY, x real[])")
    cur.execute("ALTER TABLE onnx_bench_input ALTER COLUMN x SET STORAGE EXTERNAL")

    rows = []
    for name in models:
        with open(R.model_path(name), "rb") as f:
            model_bytes = f.read()
        cur.execute("SELECT onnx_load_model(%s, %s, true)", ("bench_" + name, model_bytes))
        for mname, batch in CASES:
            if mname != name:
                continue
            rng = np.random.default_rng(0)
            x = rng.standard_normal(size=(batch,) + SHAPES[name], dtype=np.float32)
            flat = x.reshape(batch, -1)
            key = "%s_b%d" % (name, batch)
            cur.execute("INSERT INTO onnx_bench_input VALUES (%s, %s)", (key, flat.tolist()))
            if batch == 1:
                cur.execute("INSERT INTO onnx_bench_input VALUES (%s, %s)", (key + "_1d", flat[0].tolist()))
            for threads in args.threads:
                R.pin(threads)
                pinned = pin_backend(threads)
                cur.execute("SELECT set_config('onnx.intra_op_threads', %s, false)", (str(threads),))
                ox = oxengine.Session(model_bytes, R.OX_OPT_LEVEL, threads)
                feeds = {ox.input_names[0]: x}
                # check: SQL result equals the engine's
                cur.execute("SELECT onnx_predict_batch(%s, x) FROM onnx_bench_input WHERE name = %s",
                            ("bench_" + name, key))
                got = np.asarray(cur.fetchone()[0], dtype=np.float32)
                want = ox.run(feeds)[0].reshape(batch, -1)
                ok = got.shape == want.shape and np.allclose(got, want, rtol=1e-3,
                                                             atol=1e-5 * float(np.abs(want).max()))

                def t_engine(k):
                    t0 = time.perf_counter()
                    ox.run_repeat(feeds, k)
                    return (time.perf_counter() - t0) / k

                def t_sql(k, fn="onnx_predict_batch", suffix="", auto=True):
                    q = ("SELECT sum(cardinality(%s('bench_%s', x))) FROM onnx_bench_input, "
                         "generate_series(1, %d) WHERE name = '%s%s'" % (fn, name, k, key, suffix))
                    cur.execute("SET onnx.auto_batch = %s" % ("on" if auto else "off"))
                    t0 = time.perf_counter()
                    cur.execute(q)
                    cur.fetchone()
                    return (time.perf_counter() - t0) / k

                # the text array literal is built once: the timing holds the transfer and the
                # server's parsing, not Python's formatting of the floats
                literal = "{" + ",".join("{" + ",".join(map(repr, row.tolist())) + "}" for row in flat) + "}"

                def t_rt(k):
                    q = "SELECT cardinality(onnx_predict_batch('bench_%s', %%s::text::real[]))" % name
                    arg = literal
                    t0 = time.perf_counter()
                    for _ in range(k):
                        cur.execute(q, (arg,))
                        cur.fetchone()
                    return (time.perf_counter() - t0) / k

                kinds = {"engine": t_engine, "sql": t_sql, "rt": t_rt}
                if batch == 1 and name == "mlp":
                    kinds["sql1"] = lambda k: t_sql(k, "onnx_predict", "_1d", auto=False)
                    kinds["sql1b"] = lambda k: t_sql(k, "onnx_predict", "_1d")
                # warm-up and block sizes (a block lasts >= 20 ms, the round trip is amortized)
                est = {}
                for kname, fn in kinds.items():
                    fn(1)
                    est[kname] = min(fn(1), fn(1))
                ks = {kname: max(1, int(np.ceil(0.02 / max(t, 1e-7)))) for kname, t in est.items()}
                per = sum(ks[kn] * est[kn] for kn in kinds)
                reps = int(np.clip(budget / max(per, 1e-9), 3, 200))
                samples = {kname: [] for kname in kinds}
                for r in range(reps):
                    order = list(kinds) if r % 2 == 0 else list(reversed(list(kinds)))
                    for kname in order:
                        samples[kname].append(kinds[kname](ks[kname]))
                med = {kname: float(np.median(s)) for kname, s in samples.items()}
                row = {"model": name, "batch": batch, "threads": threads, "reps": reps, "agree": bool(ok),
                       "backend_pinned": pinned,
                       "median": med,
                       "p10": {k: float(np.percentile(s, 10)) for k, s in samples.items()},
                       "p90": {k: float(np.percentile(s, 90)) for k, s in samples.items()}}
                rows.append(row)
                print("%-9s b%-4d t%d  engine %-10s sql %-10s (+%s)  round trip %-10s%s  %s" % (
                    name, batch, threads, fmt_t(med["engine"]), fmt_t(med["sql"]),
                    fmt_t(med["sql"] - med["engine"]), fmt_t(med["rt"]),
                    ("  onnx_predict %s (auto-batched %s)" % (fmt_t(med["sql1"]), fmt_t(med["sql1b"])))
                    if "sql1" in med else "",
                    "outputs agree" if ok else "OUTPUTS DIFFER"), flush=True)
                del ox
        cur.execute("SELECT onnx_drop_model(%s, true)", ("bench_" + name,))
    cur.execute("DROP TABLE IF EXISTS onnx_bench_input")
    R.pin(os.cpu_count() or 1)

    lib = os.environ.get("OX_CAPI_LIB", os.path.join(ROOT, "build", "libox_capi.so"))
    res = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "server_version": server_version,
           "extension_version": ext_version, "quick": args.quick, "rows": rows,
           "engine_lib": lib, "engine_lib_mtime": datetime.datetime.fromtimestamp(
               os.path.getmtime(lib)).isoformat(timespec="seconds")}
    L = ["Measured by `bench/inquery_cpu.py`%s on %s against PostgreSQL %s, onnx_pg %s (server at "
         "PGHOST=%s PGPORT=%s). Per call, median of %s repetitions. **engine**: the engine API in the "
         "client process (library built %s; the server runs its installed onnx_pg.so, which may be another "
         "build). **SQL**: `onnx_predict_batch(model, x)` evaluated n times in one statement over a stored "
         "real[][] (no client round trip; detoast, array handling, session cache lookup and the result "
         "array included). **PG layer** = SQL - engine. **round trip**: one statement per call from "
         "this client with x sent as a text array literal (prepared once in the client; its transfer and "
         "the server's parsing of it count). **onnx_predict (1-D)**: the MLP at batch 1 through the "
         "row-wise `onnx_predict(model, x)` over a stored real[784], n calls in one statement, with "
         "onnx.auto_batch off (one engine run per call); **auto-batched**: the same statement with "
         "automatic batching on, the default (onnx.batch_size calls per engine run). %s"
         % (" --quick" if args.quick else "", res["date"], server_version, ext_version,
            os.environ.get("PGHOST", "(default)"), os.environ.get("PGPORT", "(default)"),
            "/".join(sorted({str(r["reps"]) for r in rows})) or "0", res["engine_lib_mtime"],
            "The server backend was pinned to `threads` CPUs like the client." if rows and all(
                r["backend_pinned"] for r in rows) else "The server backend was not pinned (remote server "
            "or no permission), so helper threads in it may use more CPUs than `threads`."),
         "",
         "| model | batch | threads | engine | SQL | PG layer | PG layer % | round trip | "
         "onnx_predict (1-D) | same, auto-batched | outputs |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        m = r["median"]
        over = m["sql"] - m["engine"]
        L.append("| %s | %d | %d | %s | %s | %s%s | %.0f%% | %s | %s | %s | %s |" % (
            r["model"], r["batch"], r["threads"], fmt_t(m["engine"]), fmt_t(m["sql"]),
            "-" if over < 0 else "", fmt_t(abs(over)), 100 * over / m["sql"], fmt_t(m["rt"]),
            fmt_t(m["sql1"]) if "sql1" in m else "", fmt_t(m["sql1b"]) if "sql1b" in m else "",
            "agree" if r["agree"] else "**differ**"))
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(L) + "\n")
    with open(os.path.splitext(args.out)[0] + ".json", "w") as f:
        json.dump(res, f, indent=1)
    print("wrote %s" % args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
