#!/usr/bin/env python3
"""Side-by-side CPU benchmark: onnx_pg's engine against onnxruntime.

    python3 bench/run.py            # full suite (about 10-12 minutes on 2 cores)
    python3 bench/run.py --quick    # smoke run (about 2-3 minutes)

For every model/batch of issue 4, at 1 and 2 threads, both engines run in the
same process, alternating block by block (the first engine alternates too),
after a warm-up and after checking that their outputs agree.  onnx_pg runs
through its engine API (build/libox_capi.so via test/engine/oxengine.py, n runs
inside C per block); onnxruntime through its Python API (CPUExecutionProvider,
ORT_ENABLE_ALL, intra_op_num_threads = threads, inter_op_num_threads = 1,
ORT_SEQUENTIAL).  While a row runs, every thread of the process is pinned to
`threads` CPUs, so "1 thread" means one core for both engines whatever helper
threads a library starts.

Per row it records the median and p10/p90 latency of each engine, the ratio
onnx_pg / onnxruntime of the medians, session creation time (median of 15
creations in this process), and, in a fresh child process per engine and
model/batch, peak resident memory (ru_maxrss) and its rise over the child's
baseline.  For resnet50 and the encoder it also reports GFLOP/s as a fraction
of the machine's peak (see machine_peak()).  It writes docs/performance.md,
docs/performance.svg (the plot of the ratios) and bench/results/latest.json;
bench/report.py writes the first two.

Models come from bench/models/ (make_models.py and make_sklearn_models.py; run
automatically when a file is missing).  The engine library is
$OX_CAPI_LIB or build/libox_capi.so (make build/libox_capi.so).
"""
import argparse
import datetime
import gc
import json
import os
import platform
import re
import subprocess
import sys
import time

# numpy's own BLAS threads would spin on the other core for a while after
# each of the harness's array operations, under both engines' timings
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODELS_DIR = os.path.join(HERE, "models")
sys.path.insert(0, os.path.join(ROOT, "test", "engine"))
sys.path.insert(0, HERE)  # report.py, also when bench/inquery/run.py loads this file

from report import (FLOP_MODELS, OX_OPT_LEVEL, WHY_NODE_MODELS, fmt_t, headline_ratio,  # noqa: E402
                    pct, unmet_rows, write_markdown, write_svg)

# (model, batch); the order of the report
CASES = [
    ("resnet50", 1), ("resnet50", 8), ("mobilenet_v2", 1), ("encoder", 1),
    ("mlp", 1), ("mlp", 256), ("iris_rf", 1), ("iris_rf", 10000),
]
TORCH_MODELS = {"resnet50", "mobilenet_v2", "encoder", "mlp"}
ENCODER_VOCAB = 30522


# ---------------------------------------------------------------------------
# utilities
# ---------------------------------------------------------------------------

def log(msg):
    print(msg, file=sys.stderr, flush=True)


def pin(threads):
    """Pin every thread of this process (and the threads it starts later) to the first `threads` CPUs."""
    cpus = sorted(os.sched_getaffinity(0) | set(range(os.cpu_count() or 1)))
    want = set(cpus[:max(1, threads)])
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), want)
        except OSError:
            pass
    return sorted(want)


def rss_kb(field="VmRSS"):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def reset_hwm():
    """Reset this process's peak RSS (VmHWM) to its current RSS (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


class CpuWatch:
    """CPU time used by other processes while a measurement runs, as a fraction of all CPUs."""

    @staticmethod
    def _busy():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return (sum(v[:8]) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")

    def __init__(self):
        self.t0, self.b0, self.own0 = time.time(), self._busy(), sum(os.times()[:2])

    def other(self):
        wall = time.time() - self.t0
        if wall <= 0:
            return 0.0
        busy = self._busy() - self.b0
        own = sum(os.times()[:2]) - self.own0
        return max(0.0, (busy - own) / (wall * (os.cpu_count() or 1)))


def wait_quiet(limit_s, threshold=0.15):
    """Wait (at most limit_s) until other processes use less than `threshold` of the CPUs; returns
    the seconds waited."""
    t0 = time.time()
    while True:
        w = CpuWatch()
        time.sleep(0.5)
        if w.other() < threshold or time.time() - t0 >= limit_s:
            return time.time() - t0


def model_path(name):
    return os.path.join(MODELS_DIR, name + ".onnx")


def ensure_models(names):
    missing = [n for n in names if not os.path.exists(model_path(n))]
    torch_missing = [n for n in missing if n in TORCH_MODELS]
    if torch_missing:
        log("generating %s with /usr/bin/python3 bench/make_models.py" % " ".join(torch_missing))
        subprocess.check_call(["/usr/bin/python3", os.path.join(HERE, "make_models.py"), "--only"] + torch_missing)
    if "iris_rf" in missing:
        subprocess.check_call([sys.executable, os.path.join(HERE, "make_sklearn_models.py")])


def make_inputs(ort_sess, name, batch, seed=0):
    rng = np.random.default_rng(seed)
    feeds = {}
    for i in ort_sess.get_inputs():
        shape = [batch if k == 0 else (d if isinstance(d, int) else 1) for k, d in enumerate(i.shape)]
        if i.type == "tensor(int64)":
            feeds[i.name] = rng.integers(0, ENCODER_VOCAB, size=shape, dtype=np.int64)
        elif name == "iris_rf":
            feeds[i.name] = rng.uniform(0.0, 8.0, size=shape).astype(np.float32)
        else:
            feeds[i.name] = rng.standard_normal(size=shape, dtype=np.float32)
    return feeds


def ort_session(model_bytes, threads):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])


def ox_session(model_bytes, threads):
    import oxengine

    # as the extension's cached sessions run (src/pg/cache.c): the constants
    # that nodes packed copies of are freed, weights held once
    return oxengine.Session(model_bytes, OX_OPT_LEVEL, threads, release_weights=True)


# ---------------------------------------------------------------------------
# machine, versions, FLOPs
# ---------------------------------------------------------------------------

def machine_info():
    info = {"lscpu": {}, "flags": []}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if ":" in line:
                k, v = line.split(":", 1)
                info["lscpu"][k.strip()] = v.strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    mhz = []
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("cpu MHz"):
                mhz.append(float(line.split(":")[1]))
            elif line.startswith("flags") and not info["flags"]:
                info["flags"] = line.split(":")[1].split()
    info["cpuinfo_mhz"] = max(mhz) if mhz else None
    with open("/proc/meminfo") as f:
        info["mem_gib"] = int(f.readline().split()[1]) / 2**20
    info["cores"] = os.cpu_count()
    info["kernel"] = platform.release()
    return info


def cpu_flags():
    """the flags of /proc/cpuinfo's first processor"""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


def build_tool(source, folder):
    """compile one of bench/'s measuring programs (FMA, threads; AVX-512 where the machine has it,
    else AVX2) into folder; its path"""
    exe = os.path.join(folder, os.path.splitext(source)[0])
    isa = "-mavx512f" if "avx512f" in cpu_flags() else "-mavx2"
    subprocess.run(["gcc", "-O2", isa, "-mfma", "-pthread", os.path.join(HERE, source), "-o", exe],
                   check=True, capture_output=True)
    return exe


def measure_peak(threads_list):
    """Compile and run bench/peak.c: per thread count, the clock (dependent imul chain) and the
    FMA throughput (AVX-512, else AVX2), both over CPU time so other processes do not count."""
    import tempfile

    out = {}
    with tempfile.TemporaryDirectory() as d:
        try:
            exe = build_tool("peak.c", d)
        except (OSError, subprocess.CalledProcessError) as e:
            log("peak.c did not build (%s): using the nominal clock" % e)
            return out
        for t in sorted(set(threads_list)):
            runs = []
            for _ in range(3):
                try:
                    p = subprocess.run([exe, str(t)], capture_output=True, text=True, check=True, timeout=60)
                    _, ghz, gflops = p.stdout.split()
                    runs.append((float(ghz), float(gflops)))
                except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired, ValueError):
                    pass
            if runs:
                out[t] = {"ghz": float(np.median([r[0] for r in runs])),
                          "fma_gflops": float(np.median([r[1] for r in runs]))}
    return out


def machine_peak(info, fma_units, threads_list, measure=True):
    """Peak FP32 FLOP/s = cores x clock x FLOPs/cycle, FLOPs/cycle = SIMD lanes x 2 (FMA) x FMA units.

    lanes: 16 with avx512f, 8 with avx2+fma. The clock is measured per thread count by bench/peak.c
    (the turbo clock the cores actually run at); without it, the largest of lscpu's "CPU max MHz"
    and /proc/cpuinfo's "cpu MHz" (the nominal clock under KVM). FMA units: `fma_units` when
    given, else the measured FMA throughput per cycle rounded to whole FMAs of the widest vectors (512-bit:
    2 on Xeon Scalable Gold/Platinum and AMD Zen 5, 1 on AMD Zen 4, which runs a 512-bit FMA as two
    256-bit halves; 256-bit: 2 on AMD Zen 2 and 3)."""
    lscpu = info["lscpu"]
    clocks = [info.get("cpuinfo_mhz") or 0.0]
    for key in ("CPU max MHz", "CPU MHz"):
        try:
            clocks.append(float(lscpu.get(key, "0")))
        except ValueError:
            pass
    nominal = max(clocks)
    flags = set(info["flags"])
    lanes = 16 if "avx512f" in flags else 8 if "avx2" in flags and "fma" in flags else 4
    measured = measure_peak(threads_list) if measure and lanes >= 8 else {}
    fma_source = "given"
    if fma_units is None:
        one = measured.get(min(threads_list)) if measured else None
        if one:
            fma_units = max(1, int(round(one["fma_gflops"] / min(threads_list) / one["ghz"] / (lanes * 2))))
            fma_source = "measured"
        else:
            fma_units, fma_source = 2, "assumed"
    per_cycle = lanes * 2 * fma_units
    by_threads = {}
    for t in threads_list:
        mhz = measured[t]["ghz"] * 1e3 if t in measured else nominal
        by_threads[t] = {"mhz": mhz, "gflops": t * mhz * 1e6 * per_cycle / 1e9,
                         "measured_fma_gflops": measured.get(t, {}).get("fma_gflops"),
                         "measured_flops_per_cycle": (measured[t]["fma_gflops"] / t / measured[t]["ghz"])
                         if t in measured else None}
    return {"nominal_mhz": nominal, "lanes": lanes, "fma_units": fma_units, "fma_source": fma_source,
            "flops_per_cycle": per_cycle,
            "clock_source": "bench/peak.c (imul chain)" if measured else "nominal (lscpu / /proc/cpuinfo)",
            "by_threads": by_threads}


def versions(lib_info):
    import onnx
    import onnxruntime as ort

    def git(*a):
        try:
            return subprocess.run(["git", "-C", ROOT] + list(a), capture_output=True, text=True,
                                  check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return "unknown"
    rev = git("rev-parse", "--short", "HEAD")
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "src", "tools")
    lib = lib_info["path"]
    return {"onnxruntime": ort.__version__, "numpy": np.__version__, "onnx": onnx.__version__,
            "python": platform.python_version(),
            "onnx_pg": rev + (" + uncommitted changes in src/" if dirty and dirty != "unknown" else ""),
            "onnx_pg_lib": os.path.relpath(lib, ROOT) if lib.startswith(ROOT) else lib,
            "onnx_pg_lib_mtime": lib_info.get("mtime")}


def count_flops(model_bytes, feeds):
    """Multiply-adds x 2 of Conv, ConvTranspose, Gemm and MatMul nodes, from onnx shape inference
    with the batch fixed (elementwise work is left out)."""
    import onnx
    from onnx import shape_inference

    m = onnx.load_from_string(model_bytes)
    for i in m.graph.input:
        if i.name in feeds:
            dims = i.type.tensor_type.shape.dim
            for k, d in enumerate(dims):
                d.ClearField("dim_param")
                d.dim_value = feeds[i.name].shape[k]
    m = shape_inference.infer_shapes(m, data_prop=True)
    shapes = {}
    for vi in list(m.graph.input) + list(m.graph.value_info) + list(m.graph.output):
        dims = [d.dim_value if d.HasField("dim_value") else None for d in vi.type.tensor_type.shape.dim]
        shapes[vi.name] = dims
    for t in m.graph.initializer:
        shapes[t.name] = list(t.dims)
    total = 0
    unknown = 0
    for n in m.graph.node:
        try:
            if n.op_type in ("Conv", "ConvTranspose"):
                w = shapes[n.input[1]]
                out = shapes[n.output[0]]
                group = next((a.i for a in n.attribute if a.name == "group"), 1)
                if n.op_type == "Conv":
                    total += 2 * int(np.prod(out)) * (w[1]) * int(np.prod(w[2:]))
                else:
                    total += 2 * int(np.prod(shapes[n.input[0]])) * w[1] * int(np.prod(w[2:]))
                _ = group
            elif n.op_type == "Gemm":
                a = shapes[n.input[0]]
                out = shapes[n.output[0]]
                ta = next((x.i for x in n.attribute if x.name == "transA"), 0)
                k = a[0] if ta else a[1]
                total += 2 * int(np.prod(out)) * k
            elif n.op_type == "MatMul":
                a = shapes[n.input[0]]
                out = shapes[n.output[0]]
                total += 2 * int(np.prod(out)) * a[-1]
        except (KeyError, TypeError, IndexError):
            unknown += 1
    return total, unknown


# ---------------------------------------------------------------------------
# checks and timing
# ---------------------------------------------------------------------------

def compare(ox_out, ort_out, rtol):
    """Every tensor output of onnx_pg against onnxruntime's: float with rtol (and an atol of
    rtol x 1e-2 x the output's largest magnitude, for values near zero), integers exactly."""
    worst = 0.0  # max |a - b| / max |b|
    for a, b in zip(ox_out, ort_out):
        if a is None or not isinstance(b, np.ndarray):
            continue  # non-tensor output
        if a.shape != b.shape:
            return False, "shape %s vs %s" % (a.shape, b.shape)
        if np.issubdtype(b.dtype, np.floating):
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            scale = float(np.max(np.abs(b64))) if b64.size else 0.0
            atol = rtol * 1e-2 * scale
            err = float(np.max(np.abs(a64 - b64))) if b64.size else 0.0
            worst = max(worst, err / scale if scale else err)
            if not np.allclose(a64, b64, rtol=rtol, atol=atol):
                bad = ~np.isclose(a64, b64, rtol=rtol, atol=atol)
                return False, "%d of %d values differ; max abs diff %.1e = %.1e x max|out|" % (
                    int(bad.sum()), b64.size, err, err / scale if scale else err)
        elif not np.array_equal(a, b):
            return False, "%d of %d integer outputs differ" % (int(np.sum(a != b)), a.size)
    return True, "max diff %.0e·max" % worst


def quiesce(min_s, max_s=0.5, step_s=0.002):
    """Sleep at least min_s, then until this process uses (almost) no CPU: the worker threads of the
    engine timed last may spin on after its run returns (onnxruntime's do, for tens of
    milliseconds at 2 threads), and would otherwise take a core from the engine timed next."""
    time.sleep(min_s)
    t_end = time.perf_counter() + max_s
    quiet = 0
    while time.perf_counter() < t_end and quiet < 5:
        c0 = time.process_time()
        time.sleep(step_s)
        # five quiet windows in a row: a spinning pool may yield now and then
        quiet = quiet + 1 if time.process_time() - c0 < 0.1 * step_s else 0


def time_block(fn, k):
    """(wall, CPU) seconds per call of a block of k calls.  CPU is the process's CPU time (every
    thread, user + system): on a machine shared with other work it counts only what this process
    did, where the wall time also counts the time the scheduler gave to others."""
    c0 = time.process_time_ns()
    t0 = time.perf_counter_ns()
    fn(k)
    t1 = time.perf_counter_ns()
    c1 = time.process_time_ns()
    return (t1 - t0) / 1e9 / k, (c1 - c0) / 1e9 / k


def bench_row(ox, sess, feeds, threads, cfg):
    """Alternating blocks of k runs; returns per-inference samples of both engines."""
    def ox_fn(k):
        ox.run_repeat(feeds, k)

    def ort_fn(k):
        run = sess.run
        for _ in range(k):
            run(None, feeds)

    # warm-up (also estimates the single-run time of each engine)
    est = {}
    for label, fn in (("ox", ox_fn), ("ort", ort_fn)):
        t_end = time.perf_counter() + cfg.warmup_s
        n = 0
        t_first = None
        while n < cfg.warmup_min or (time.perf_counter() < t_end and n < 1000):
            t = time_block(fn, 1)[0]
            t_first = t if t_first is None else min(t_first, t)
            n += 1
        est[label] = t_first
    # block sizes: a block lasts at least min_block_s
    ks = {lbl: max(1, int(np.ceil(cfg.min_block_s / max(t, 1e-9)))) for lbl, t in est.items()}
    per_rep = sum(ks[l] * est[l] for l in ks) + 2 * cfg.pause_s
    reps = int(np.clip(cfg.budget_s / per_rep, cfg.min_reps, cfg.max_reps))
    samples = {"ox": [], "ort": []}
    cpu = {"ox": [], "ort": []}
    fns = {"ox": ox_fn, "ort": ort_fn}
    watch = CpuWatch()
    deadline = time.perf_counter() + 1.5 * cfg.budget_s  # a loaded machine runs slower than estimated
    gc.disable()
    try:
        for r in range(reps):
            if r >= cfg.min_reps and time.perf_counter() > deadline:
                reps = r
                break
            order = ("ox", "ort") if r % 2 == 0 else ("ort", "ox")
            for lbl in order:
                if cfg.pause_s:
                    quiesce(cfg.pause_s)  # lets spinning worker threads of the other engine park
                w, c = time_block(fns[lbl], ks[lbl])
                samples[lbl].append(w)
                cpu[lbl].append(c)
    finally:
        gc.enable()
    other = watch.other()
    # onnx_pg's per-call cost through Python (ctypes, output copy), for the small models
    py_samples = []
    if est["ox"] < 2e-3:
        k = ks["ox"]
        run = ox.run
        for _ in range(min(reps, 30)):
            t0 = time.perf_counter_ns()
            for _ in range(k):
                run(feeds)
            py_samples.append((time.perf_counter_ns() - t0) / 1e9 / k)
    return samples, cpu, ks, reps, py_samples, other


def op_profile(ox, feeds, n):
    """onnx_pg's per-node timing (Session.profile), summed per operator type; median of n runs, ms."""
    try:
        runs = []
        for _ in range(n):
            per = {}
            for _node, op, ms in ox.profile(feeds):
                per[op] = per.get(op, 0.0) + ms
            runs.append(per)
    except Exception as e:  # an engine without the profiling API
        return {"error": str(e)}
    ops = set().union(*runs) if runs else set()
    return {op: float(np.median([r.get(op, 0.0) for r in runs])) for op in ops}


def creation_times(model_bytes, threads, n):
    ox_t, ort_t = [], []
    for r in range(n):
        for lbl in (("ox", "ort") if r % 2 == 0 else ("ort", "ox")):
            gc.collect()
            t0 = time.perf_counter()
            s = ox_session(model_bytes, threads) if lbl == "ox" else ort_session(model_bytes, threads)
            dt = time.perf_counter() - t0
            (ox_t if lbl == "ox" else ort_t).append(dt)
            del s
    return float(np.median(ox_t)), float(np.median(ort_t))


# ---------------------------------------------------------------------------
# peak memory: one child process per engine and model/batch
# ---------------------------------------------------------------------------

def child_main(engine, name, spec, threads, runs):
    import resource

    pin(threads)
    with open(model_path(name), "rb") as f:
        model_bytes = f.read()
    # inputs as the parent made them (no onnx import: parsing the model would raise the peak)
    rng = np.random.default_rng(0)
    feeds = {}
    for iname, (shape, dtype) in json.loads(spec).items():
        if dtype == "int64":
            feeds[iname] = rng.integers(0, ENCODER_VOCAB, size=shape, dtype=np.int64)
        else:
            feeds[iname] = rng.standard_normal(size=shape, dtype=np.float32)
    if engine == "ort":
        import onnxruntime  # noqa: F401  (imported before the baseline, like oxengine's library)
    else:
        import oxengine
        oxengine.lib()
    gc.collect()
    base = rss_kb()
    hwm_reset = reset_hwm()
    t0 = time.perf_counter()
    sess = ort_session(model_bytes, threads) if engine == "ort" else ox_session(model_bytes, threads)
    create = time.perf_counter() - t0
    after_create = rss_kb()
    for _ in range(runs):
        if engine == "ort":
            sess.run(None, feeds)
        else:
            sess.run_repeat(feeds, 1)
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent across fork and exec
    peak = rss_kb("VmHWM")
    print(json.dumps({"base_kb": base, "after_create_kb": after_create, "peak_kb": peak,
                      "hwm_reset": hwm_reset, "create_cold_s": create,
                      "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
    return 0


def measure_memory(engine, name, feeds, threads, runs, timeout):
    spec = json.dumps({k: [list(v.shape), str(v.dtype)] for k, v in feeds.items()})
    cmd = [sys.executable, os.path.abspath(__file__), "--child", engine, name, spec, str(threads),
           str(runs)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": "timed out"}
    if p.returncode != 0:
        tail = (p.stderr or p.stdout).strip().splitlines()
        return {"error": tail[-1] if tail else "exit %d" % p.returncode}
    return json.loads(p.stdout.strip().splitlines()[-1])

def l2_per_core(info):
    """bytes of L2 per core from lscpu's "4 MiB (2 instances)", or None"""
    m = re.match(r"([\d.]+)\s*([KMG])i?B?(?:\s*\((\d+) instances?\))?", info["lscpu"].get("L2 cache", ""))
    if not m:
        return None
    size = float(m.group(1)) * {"K": 2**10, "M": 2**20, "G": 2**30}[m.group(2)]
    return int(size / int(m.group(3) or 1))


def float_weight_bytes(model_bytes):
    import onnx
    return sum(4 * int(np.prod(t.dims)) for t in onnx.load_from_string(model_bytes).graph.initializer
               if t.data_type == 1)


def mlp_read_bytes(model_bytes, x):
    """Bytes of weights a batch-1 call of a Gemm/Relu chain reads for input row x: a layer whose
    input row is at least an eighth zeros (after a ReLU) skips the weight rows those zeros would
    multiply (src/kernels/cpu/gemm.c, GEMM_SPARSE_ROW_SHARE); other layers read all of theirs."""
    import onnx
    from onnx import numpy_helper

    m = onnx.load_from_string(model_bytes)
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    h = np.asarray(x, np.float64).reshape(-1)
    total = 0
    for n in m.graph.node:
        if n.op_type == "Gemm":
            tb = any(a.name == "transB" and a.i == 1 for a in n.attribute)
            w = inits[n.input[1]].astype(np.float64)
            w = w.T if tb else w
            nz = np.count_nonzero(h)
            rows = nz if (h.size - nz) >= h.size / 8 else h.size
            total += 4 * rows * w.shape[1] + (4 * inits[n.input[2]].size if len(n.input) > 2 else 0)
            h = h @ w + (inits[n.input[2]] if len(n.input) > 2 else 0)
        elif n.op_type == "Relu":
            h = np.maximum(h, 0)
    return int(total)


def stream_rate(nbytes):
    """bench/stream.c: (seconds per pass, GB/s) of one core reading nbytes over and over, or None"""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        try:
            exe = build_tool("stream.c", d)
            pin(1)
            runs = []
            for _ in range(3):
                p = subprocess.run([exe, str(int(nbytes))], capture_output=True, text=True, check=True,
                                   timeout=60)
                _, sec, gbs = p.stdout.split()
                runs.append((float(sec), float(gbs)))
            return min(runs)[0], max(r[1] for r in runs)
        except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired, ValueError) as e:
            log("stream.c did not run (%s)" % e)
            return None


def explain_misses(res, runs):
    """what the report says about each model with a row that misses its target"""
    why = {}
    miss = unmet_rows(res["rows"])
    for name in sorted({r["model"] for r in miss}):
        if name in WHY_NODE_MODELS:
            import nodes
            # node by node at the thread count that misses (1 when both do)
            threads = min(r["threads"] for r in miss if r["model"] == name)
            pin(threads)
            c = nodes.compare(name, threads, 1, runs)
            why[name] = {"kind": "nodes", "runs": runs, "threads": threads, "categories": c["categories"]}
        elif name == "mlp":
            with open(model_path(name), "rb") as f:
                mb = f.read()
            x = next(iter(make_inputs(ort_session(mb, 1), name, 1).values()))
            nbytes = mlp_read_bytes(mb, x)
            why[name] = {"kind": "weights", "weight_bytes": float_weight_bytes(mb), "read_bytes": nbytes,
                         "l2_bytes": l2_per_core(res["machine"]), "stream": stream_rate(nbytes)}
    return why


class Config:
    pass


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smoke run: few repetitions")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--models", nargs="+", help="only these models (names from the case list)")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "performance.md"))
    ap.add_argument("--json", default=os.path.join(HERE, "results", "latest.json"))
    ap.add_argument("--budget", type=float, help="seconds of timed repetitions per row")
    ap.add_argument("--fma-units", type=int,
                    help="512-bit FMAs per cycle per core for the peak (default: from the measured throughput)")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--no-memory", action="store_true", help="skip the peak-RSS child processes")
    ap.add_argument("--wait-quiet", type=float, default=20.0,
                    help="before each row wait up to this many seconds for other processes to go below "
                         "15%% CPU (0: don't wait)")
    ap.add_argument("--render", metavar="JSON",
                    help="measure nothing: rewrite the report from a results file (bench/results/latest.json), "
                         "picking up a newer bench/results/inquery.md")
    ap.add_argument("--child", nargs=5, metavar=("ENGINE", "MODEL", "INPUTS", "THREADS", "RUNS"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        e, n, b, t, r = args.child
        return child_main(e, n, b, int(t), int(r))

    if args.render:
        with open(args.render) as f:
            res = json.load(f)
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        svg = os.path.splitext(args.out)[0] + ".svg"
        write_svg(res["rows"], svg)
        write_markdown(res, args.out, os.path.basename(svg))
        log("wrote %s, %s from %s" % (args.out, svg, args.render))
        return 0

    cfg = Config()
    cfg.quick = args.quick
    cfg.threads = args.threads
    cfg.rtol = args.rtol
    if args.quick:
        cfg.budget_s, cfg.min_reps, cfg.max_reps = 1.0, 3, 30
        cfg.warmup_s, cfg.warmup_min, cfg.min_block_s = 0.1, 1, 0.002
        cfg.creation_n, cfg.mem_runs = 1, 1
    else:
        cfg.budget_s, cfg.min_reps, cfg.max_reps = 20.0, 7, 400
        cfg.warmup_s, cfg.warmup_min, cfg.min_block_s = 1.0, 2, 0.05
        # creations alternate between the engines; a median of 5 moved the mlp's 2 ms ratio by 0.1
        # between runs on this host (0.90, then 1.01), 15 settle it
        cfg.creation_n, cfg.mem_runs = 15, 2
    if args.budget is not None:
        cfg.budget_s = args.budget
    cfg.pause_s = 0.005
    cfg.wait_quiet_s = args.wait_quiet

    t_start = time.time()
    cases = [(n, b) for n, b in CASES if not args.models or n in args.models]
    names = sorted({n for n, _ in cases}, key=[n for n, _ in CASES].index)
    ensure_models(names)

    # snapshot the engine library: others may rebuild it while the suite runs; the children
    # (peak memory) inherit OX_CAPI_LIB and load the same copy
    lib = os.environ.get("OX_CAPI_LIB", os.path.join(ROOT, "build", "libox_capi.so"))
    lib_info = {"path": lib}
    if os.path.exists(lib):
        import shutil
        import tempfile

        snap_dir = tempfile.mkdtemp(prefix="onnx_pg_bench_")
        snap = os.path.join(snap_dir, "libox_capi.so")
        shutil.copy2(lib, snap)
        lib_info["mtime"] = datetime.datetime.fromtimestamp(os.path.getmtime(lib)).isoformat(timespec="seconds")
        os.environ["OX_CAPI_LIB"] = snap
    import onnxruntime as ort  # noqa: F401
    import oxengine
    try:
        oxengine.lib()
    except OSError as e:
        log("cannot load the engine library (%s): run `make build/libox_capi.so` or set OX_CAPI_LIB" % e)
        return 2

    info = machine_info()
    peak = machine_peak(info, args.fma_units, cfg.threads)
    res = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "quick": args.quick,
           "machine": info, "peak": peak, "versions": versions(lib_info), "rows": [], "creation": {},
           "memory": {}, "config": {k: getattr(cfg, k) for k in vars(cfg)}}
    try:
        res["torch_version"] = subprocess.run(
            ["/usr/bin/python3", "-c", "import torch; print(torch.__version__)"],
            capture_output=True, text=True, timeout=60).stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        pass
    for t, p in peak["by_threads"].items():
        log("peak at %d thread(s): %d x %.0f MHz x %d FLOP/cycle = %.1f GFLOP/s (measured FMA: %s)" % (
            t, t, p["mhz"], peak["flops_per_cycle"], p["gflops"], p["measured_fma_gflops"]))

    for name in names:
        with open(model_path(name), "rb") as f:
            model_bytes = f.read()
        batches = [b for n, b in cases if n == name]
        flops = {}
        if name in FLOP_MODELS:
            probe = ort_session(model_bytes, 1)
            for b in batches:
                flops[b], unk = count_flops(model_bytes, make_inputs(probe, name, b))
                log("%s b%d: %.2f GFLOP per run%s" % (name, b, flops[b] / 1e9,
                                                       " (%d nodes without shapes)" % unk if unk else ""))
            del probe
        for threads in cfg.threads:
            pin(threads)
            ox_err = None
            try:
                cr_ox, cr_ort = creation_times(model_bytes, threads, cfg.creation_n)
                res["creation"]["%s/%d" % (name, threads)] = {"ox": cr_ox, "ort": cr_ort}
            except Exception as e:  # an unsupported operator, a loader error
                ox_err = str(e)
                res["creation"]["%s/%d" % (name, threads)] = {"ox": None, "ort": None, "error": ox_err}
            sess = ort_session(model_bytes, threads)
            ox = None
            if ox_err is None:
                try:
                    ox = ox_session(model_bytes, threads)
                except Exception as e:
                    ox_err = str(e)
            for b in batches:
                row = {"model": name, "batch": b, "threads": threads, "flops": flops.get(b)}
                feeds = make_inputs(sess, name, b)
                ort_out = sess.run(None, feeds)
                if ox is None:
                    row["status"] = "onnx_pg cannot run it: %s" % ox_err
                else:
                    try:
                        ok, msg = compare(ox.run(feeds), ort_out, cfg.rtol)
                    except Exception as e:
                        ok, msg = None, str(e)
                    if ok is None:
                        row["status"] = "onnx_pg failed: %s" % msg
                    else:
                        row["check"] = ("agree (%s)" % msg) if ok else ("**MISMATCH** (%s)" % msg)
                if "status" in row:
                    log("%-13s b%-5d t%d  %s" % (name, b, threads, row["status"]))
                    res["rows"].append(row)
                    continue
                row["waited_s"] = wait_quiet(cfg.wait_quiet_s) if cfg.wait_quiet_s else 0.0
                if threads == min(cfg.threads) and hasattr(ox, "profile"):
                    row["ox_profile"] = op_profile(ox, feeds, 3 if not cfg.quick else 1)
                samples, cpu, ks, reps, py, other = bench_row(ox, sess, feeds, threads, cfg)
                row["other_load"] = other
                for lbl in ("ox", "ort"):
                    s = samples[lbl]
                    c = cpu[lbl]
                    row[lbl] = {"median": float(np.median(s)), "p10": pct(s, 10), "p90": pct(s, 90),
                                "k": ks[lbl], "samples": [float(x) for x in s],
                                "cpu_median": float(np.median(c)), "cpu_p10": pct(c, 10),
                                "cpu_p90": pct(c, 90), "cpu_samples": [float(x) for x in c]}
                if py:
                    row["ox_py"] = {"median": float(np.median(py)), "p10": pct(py, 10), "p90": pct(py, 90)}
                row["reps"] = reps
                row["ratio_wall"] = row["ox"]["median"] / row["ort"]["median"]
                row["ratio_cpu"] = row["ox"]["cpu_median"] / row["ort"]["cpu_median"]
                row["ratio"] = headline_ratio(row)
                log("%-13s b%-5d t%d  CPU: onnx_pg %-10s onnxruntime %-10s ratio %.2f | wall: %-10s %-10s "
                    "ratio %.2f  (%d reps, %s, other load %.0f%%)"
                    % (name, b, threads, fmt_t(row["ox"]["cpu_median"]), fmt_t(row["ort"]["cpu_median"]),
                       row["ratio_cpu"], fmt_t(row["ox"]["median"]), fmt_t(row["ort"]["median"]),
                       row["ratio_wall"], reps, row["check"], 100 * other))
                res["rows"].append(row)
            del sess, ox
            gc.collect()
        if not args.no_memory:
            probe = ort_session(model_bytes, 1)
            for b in batches:
                feeds = make_inputs(probe, name, b)
                key = "%s/%d" % (name, b)
                res["memory"][key] = {}
                for eng in ("ox", "ort"):
                    m = measure_memory(eng, name, feeds, 1, cfg.mem_runs, timeout=300)
                    res["memory"][key][eng] = m
                log("%-13s b%-5d memory: onnx_pg %s, onnxruntime %s" % (
                    name, b, json.dumps(res["memory"][key]["ox"]), json.dumps(res["memory"][key]["ort"])))
    res["why"] = explain_misses(res, 5 if cfg.quick else 15)
    pin(os.cpu_count() or 1)
    res["elapsed_s"] = time.time() - t_start

    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(res, f, indent=1)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    svg = os.path.splitext(args.out)[0] + ".svg"
    write_svg(res["rows"], svg)
    write_markdown(res, args.out, os.path.basename(svg))
    log("wrote %s, %s, %s (%.0f s)" % (args.out, svg, args.json, res["elapsed_s"]))
    if "snap_dir" in locals():
        import shutil
        shutil.rmtree(snap_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
