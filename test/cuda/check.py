"""The GPU check proper (run by test/cuda/run.sh): accuracy of the CUDA
provider against our CPU provider and onnxruntime on exported networks,
node placement, and the throughput benchmark.

    python check.py MODELDIR [--rehearsal]

Accuracy: max |ours_cuda - reference| / max |reference| over the output,
tolerance 1e-3 for exact float32 (cuBLAS/cuDNN sum in another order than
the CPU kernels; over a 50-layer network that reaches 1e-4) and 3e-2 with
cuda_fp16 (inputs rounded to 10-bit mantissas in the tensor cores).

Benchmark: runs per second of host-to-host inference (numpy in, numpy out:
our C API copies in and out, and so do the baselines) after a short
warm-up, against onnxruntime's CUDAExecutionProvider when onnxruntime has
it, otherwise torch eager on the same GPU as the stated substitute.
Writes results.md and results.json to $OUT when OUT is set.
"""
import json
import os
import signal
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "engine"))
if "--torch-bench" not in sys.argv:
    import oxengine  # noqa: E402

REHEARSAL = "--rehearsal" in sys.argv
PROVIDERS = "cpu" if REHEARSAL else "cuda,cpu"
TOL_FP32, TOL_FP16 = 1e-3, 3e-2
results = {"accuracy": [], "placement": {}, "bench": [], "notes": []}


def note(msg):
    print(msg, flush=True)
    results["notes"].append(msg)


def feeds_for(path, batch):
    rng = np.random.default_rng(0)
    if os.path.basename(path).startswith("encoder"):
        return {"input_ids": rng.integers(0, 30522, size=(batch, 128), dtype=np.int64)}
    return {"input": rng.standard_normal((batch, 3, 224, 224), dtype=np.float32)}


def ort_session(path, want_cuda):
    try:
        import onnxruntime as ort
    except Exception as e:  # noqa: BLE001
        return None, f"onnxruntime unavailable ({e})"
    avail = ort.get_available_providers()
    if want_cuda and "CUDAExecutionProvider" not in avail:
        return None, f"onnxruntime has no CUDAExecutionProvider ({', '.join(avail)})"
    so = ort.SessionOptions()
    so.log_severity_level = 3
    prov = ["CUDAExecutionProvider", "CPUExecutionProvider"] if want_cuda else ["CPUExecutionProvider"]
    return ort.InferenceSession(path, so, providers=prov), "ok"


def rel_err(a, b):
    scale = float(np.max(np.abs(b))) or 1.0
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) / scale


def placement_summary(sess, name, show=0):
    rows = sess.placement()
    on_cuda = sum(1 for r in rows if r[2] == "cuda")
    cpu_ops = sorted({r[1] for r in rows if r[2] != "cuda"})
    results["placement"][name] = {"nodes": len(rows), "cuda": on_cuda, "cpu_ops": cpu_ops,
                                  "effective": sess.effective_providers, "fallback_reason": sess.fallback_reason}
    print(f"  placement {name}: {on_cuda}/{len(rows)} nodes on cuda; effective {sess.effective_providers}"
          + (f"; CPU ops: {', '.join(cpu_ops)}" if cpu_ops else "")
          + (f"; fallback: {sess.fallback_reason}" if sess.fallback_reason else ""), flush=True)
    for r in rows[:show]:
        print(f"    {r[2]:4s} {r[1]:24s} {r[0]}")


def accuracy(model_dir):
    print("== accuracy: CUDA vs our CPU provider vs onnxruntime (batch 2)", flush=True)
    for name in ("resnet50", "mobilenet_v2", "efficientnet_b0", "encoder"):
        path = os.path.join(model_dir, f"{name}_b2.onnx")
        if not os.path.exists(path):
            note(f"  {name}: not exported, skipped")
            continue
        data = open(path, "rb").read()
        feeds = feeds_for(path, 2)
        t0 = time.time()
        cpu = oxengine.Session(data, threads=os.cpu_count() or 1).run(feeds)[0]
        t_cpu = time.time() - t0
        row = {"model": name}
        try:
            gpu_s = oxengine.Session(data, providers=PROVIDERS)
            placement_summary(gpu_s, name, show=8 if name == "encoder" else 0)
            gpu = gpu_s.run(feeds)[0]
            gpu = gpu_s.run(feeds)[0]  # second run: cached algorithms and arena
            row["cuda_vs_cpu"] = rel_err(gpu, cpu)
            f16 = oxengine.Session(data, providers=PROVIDERS, cuda_fp16=True).run(feeds)[0]
            row["cuda_fp16_vs_cpu"] = rel_err(f16, cpu)
        except oxengine.EngineError as e:
            row["error"] = str(e)
        ort_s, why = ort_session(path, want_cuda=False)
        if ort_s is not None:
            ref = ort_s.run(None, feeds)[0]
            row["cpu_vs_ort"] = rel_err(cpu, ref)
            if "cuda_vs_cpu" in row:
                row["cuda_vs_ort"] = rel_err(gpu, ref)
        else:
            row["ort"] = why
        ok = "error" not in row and row.get("cuda_vs_cpu", 1) <= TOL_FP32 and row.get("cuda_fp16_vs_cpu", 1) <= TOL_FP16
        row["ok"] = bool(ok)
        results["accuracy"].append(row)
        print(f"  {name}: {'OK' if ok else 'MISMATCH'} "
              + " ".join(f"{k}={v:.2e}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()
                         if k not in ("model", "ok")) + f" (cpu run {t_cpu:.1f}s)", flush=True)


def timeit(fn, seconds, max_iters, warmup=3):
    for _ in range(warmup):
        fn()
    n, t0 = 0, time.perf_counter()
    while n < max_iters and (n < 3 or time.perf_counter() - t0 < seconds):
        fn()
        n += 1
    return n / (time.perf_counter() - t0)


def torch_bench(path, batch, tf32, secs):
    """runs/s of torch eager on the same network, in a child process with the
    original library path (torch brings its own CUDA libraries)"""
    import subprocess
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.environ.get("ORIG_LD_LIBRARY_PATH", "")
    py = os.environ.get("EXPORT_PYTHON", sys.executable)
    cmd = [py, os.path.abspath(__file__), "--torch-bench", path, str(batch), str(int(tf32)), str(secs)]
    if REHEARSAL:
        cmd.append("--rehearsal")
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None, "torch baseline timed out"
    for line in p.stdout.splitlines():
        if line.startswith("RUNS_PER_S "):
            return float(line.split()[1]), "ok"
    return None, "torch baseline failed: " + (p.stderr.strip().splitlines() or ["?"])[-1]


def torch_bench_child(path, batch, tf32, secs):
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import models
    if not torch.cuda.is_available() and not REHEARSAL:
        print("torch has no CUDA", file=sys.stderr)
        return 1
    dev = "cpu" if REHEARSAL else "cuda"
    name = os.path.basename(path).rsplit("_b", 1)[0]
    torch.manual_seed(1)
    m = models.Encoder(batch, layers=2 if REHEARSAL else 4) if name == "encoder" else models.cnn(name)[0]
    m = m.eval().to(dev)
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    x = next(iter(feeds_for(path, batch).values()))

    def run():
        with torch.no_grad():
            return m(torch.from_numpy(x).to(dev)).cpu().numpy()
    print("RUNS_PER_S", timeit(run, secs, 200), flush=True)
    return 0


def bench(model_dir):
    print("== benchmark (runs/s, host to host)", flush=True)
    jobs = [("resnet50", 1), ("resnet50", 64), ("encoder", 32)] if not REHEARSAL else [("resnet50", 1), ("encoder", 2)]
    secs = 1.0 if REHEARSAL else 2.5
    for name, batch in jobs:
        path = os.path.join(model_dir, f"{name}_b{batch}.onnx")
        if not os.path.exists(path):
            note(f"  {name} b{batch}: not exported, skipped")
            continue
        data = open(path, "rb").read()
        feeds = feeds_for(path, batch)
        row = {"model": name, "batch": batch}
        try:
            s = oxengine.Session(data, providers=PROVIDERS)
            row["ours"] = timeit(lambda: s.run(feeds), secs, 200)
            del s
            s16 = oxengine.Session(data, providers=PROVIDERS, cuda_fp16=True)
            row["ours_fp16"] = timeit(lambda: s16.run(feeds), secs, 200)
            del s16
        except oxengine.EngineError as e:
            row["error"] = str(e)
        ort_s, why = ort_session(path, want_cuda=not REHEARSAL)
        if ort_s is not None:
            row["baseline"] = "onnxruntime CUDA EP" if not REHEARSAL else "onnxruntime CPU"
            row["base"] = timeit(lambda: ort_s.run(None, feeds), secs, 200)
        else:
            note(f"  {name} b{batch}: {why}; torch eager is the substitute baseline")
            for tf32, key in ((False, "base"), (True, "base_tf32")):
                rate, why2 = torch_bench(path, batch, tf32, secs)
                if rate is None:
                    note(f"  {name} b{batch}: {why2}")
                    break
                row["baseline"] = "torch eager" + (" (cpu)" if REHEARSAL else "")
                row[key] = rate
        if "ours" in row and row.get("base"):
            row["ratio"] = row["ours"] / row["base"]
            ref16 = row.get("base_tf32", row["base"])
            row["ratio_fp16"] = row["ours_fp16"] / ref16
        results["bench"].append(row)
        print("  " + " ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()),
              flush=True)


def markdown():
    lines = ["| model | batch | ours fp32 (runs/s) | ours fp16 (runs/s) | baseline | baseline (runs/s) | "
             "baseline TF32 (runs/s) | ratio fp32 | ratio fp16 |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results["bench"]:
        f = lambda k: f"{r[k]:.2f}" if isinstance(r.get(k), float) else "-"  # noqa: E731
        lines.append(f"| {r['model']} | {r['batch']} | {f('ours')} | {f('ours_fp16')} | {r.get('baseline', '-')} | "
                     f"{f('base')} | {f('base_tf32')} | {f('ratio')} | {f('ratio_fp16')} |")
    lines += ["", "| model | cuda vs cpu | cuda fp16 vs cpu | cpu vs onnxruntime | ok |", "|---|---|---|---|---|"]
    for r in results["accuracy"]:
        f = lambda k: f"{r[k]:.2e}" if isinstance(r.get(k), float) else "-"  # noqa: E731
        lines.append(f"| {r['model']} | {f('cuda_vs_cpu')} | {f('cuda_fp16_vs_cpu')} | {f('cpu_vs_ort')} | {r['ok']} |")
    return "\n".join(lines)


def thread_ids():
    return set(os.listdir("/proc/self/task"))


def check_new_threads_block_signals(before):
    """Threads started since `before` (the CUDA runtime's, made while our
    probe and contexts block signals) must block SIGINT and SIGALRM: in a
    backend, PostgreSQL's handlers for a cancel and statement_timeout must
    run in the backend's own thread.  Returns the offending thread ids."""
    bad = []
    for tid in sorted(thread_ids() - before):
        try:
            with open(f"/proc/self/task/{tid}/status") as f:
                blk = next(int(l.split()[1], 16) for l in f if l.startswith("SigBlk:"))
        except (OSError, StopIteration):
            continue  # the thread ended
        if not (blk >> (signal.SIGINT - 1)) & 1 or not (blk >> (signal.SIGALRM - 1)) & 1:
            bad.append(tid)
    note(f"signal masks: {len(thread_ids() - before)} threads started by the CUDA provider, "
         f"{len(bad)} of them take SIGINT or SIGALRM")
    return bad


def main():
    if sys.argv[1] == "--torch-bench":
        return torch_bench_child(sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1", float(sys.argv[5]))
    model_dir = sys.argv[1]
    which = os.environ.get("OX_CHECK_PARTS", "accuracy,bench").split(",")
    before = thread_ids()
    ok, why = oxengine.cuda_usable(0)
    print(f"engine: providers {PROVIDERS}; cuda usable: {ok}{'' if ok else ' (' + why + ')'}", flush=True)
    if "accuracy" in which:
        accuracy(model_dir)
    unmasked = check_new_threads_block_signals(before) if ok else []
    if "bench" in which:
        bench(model_dir)
    md = markdown()
    print(md)
    out = os.environ.get("OUT")
    if out:
        os.makedirs(out, exist_ok=True)
        tag = os.environ.get("OX_CHECK_TAG", "")
        with open(os.path.join(out, f"results{tag}.md"), "w") as f:
            f.write(md + "\n")
        with open(os.path.join(out, f"results{tag}.json"), "w") as f:
            json.dump(results, f, indent=1)
    bad = [r["model"] for r in results["accuracy"] if not r["ok"]]
    return 1 if bad or unmasked else 0


if __name__ == "__main__":
    sys.exit(main())
