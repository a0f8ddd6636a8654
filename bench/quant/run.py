#!/usr/bin/env python3
"""Quantization benchmark: onnx_pg's int8 against its fp32 and against onnxruntime.

For resnet18 (static QDQ, per-channel int8 weights, uint8 activations, minmax
calibration) and the BERT-base-shaped encoder (dynamic int8 per channel, MatMul
and the embedding Gather; activations per tensor, as onnxruntime's quantizer
does, and per row), with random weights:

  - accuracy: argmax agreement with the fp32 model and mean absolute error over
    N inputs, for our quantized file (run by us) and for onnxruntime's own
    quantize_static / quantize_dynamic at the same settings (run by onnxruntime);
  - size of the fp32 and int8 files;
  - speed at one thread: our fp32, our int8, onnxruntime fp32, onnxruntime
    running our int8 file, onnxruntime running its own int8 file.  Each round
    runs every configuration once, in turn, so that a noisy machine slows them
    alike; times are CPU time of this process (time.process_time: both
    engines run in the calling thread at one thread, and CPU time does not
    count the time another job holds the core), min and median over the
    rounds, and the table gives ratios.

Quantization goes through bench/quant/oxquant (the engine calls the SQL
functions make, without a server); the end-to-end test test/e2e/test_quantize.py
does the same through SQL.

    python3 bench/quant/run.py [--models DIR] [--eval 200] [--rounds 20] [--only resnet18 encoder]

Models are made by bench/quant/make_models.py (Debian's /usr/bin/python3 with
python3-torch, or --torch-python) when missing.  Needs build/libox.a and
build/libox_capi.so (make && make tools).
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "engine"))
from oxengine import Session  # noqa: E402

# --libs DIR: shared libraries the prebuilt engine needs, for a machine without them
LIBS = None


def preload_libs(d):
    import ctypes

    global LIBS
    LIBS = os.path.abspath(d)
    for name in ("libquadmath.so.0", "libgfortran.so.5", "libopenblas.so.0", "libprotobuf-c.so.1"):
        p = os.path.join(LIBS, name)
        if os.path.exists(p):
            ctypes.CDLL(p, mode=ctypes.RTLD_GLOBAL)


def sh(cmd, libs=False, **kw):
    print("+ " + " ".join(cmd), file=sys.stderr)
    env = None
    if libs and LIBS:
        env = dict(os.environ, LD_LIBRARY_PATH=LIBS)
    return subprocess.run(cmd, check=True, env=env, **kw)


def oxquant_path(args):
    if args.oxquant:
        return args.oxquant
    exe = os.path.join(args.build, "oxquant")
    src = os.path.join(HERE, "oxquant.c")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src) or \
            os.path.getmtime(exe) < os.path.getmtime(os.path.join(args.build, "libox.a")):
        sh(["gcc", "-O2", "-I" + os.path.join(ROOT, "src"), "-I" + args.build, "-I" + os.path.join(args.build, "proto"),
            src, "-Wl,--whole-archive", os.path.join(args.build, "libox.a"), "-Wl,--no-whole-archive",
            "-lprotobuf-c", "-lopenblas", "-lm", "-lpthread", "-o", exe] + args.ldflags)
    return exe


def ort_session(path_or_bytes, threads=1):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(path_or_bytes, so, providers=["CPUExecutionProvider"])


def read(path):
    with open(path, "rb") as f:
        return f.read()


# --------------------------------------------------------------------------
# inputs

def images(n, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((1, 3, 224, 224), dtype=np.float32) for _ in range(n)]


def token_ids(n, seed, vocab=30522, seq=128):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, vocab, (1, seq)).astype(np.int64) for _ in range(n)]


# --------------------------------------------------------------------------
# measurements

def accuracy(ref, run, feeds, name):
    """argmax agreement over the last dimension and mean |difference| against ref."""
    agree = total = 0
    err = []
    for f in feeds:
        r = ref(f)
        y = run(f)
        err.append(float(np.mean(np.abs(y - r))))
        a = y.reshape(-1, y.shape[-1]).argmax(1) == r.reshape(-1, r.shape[-1]).argmax(1)
        agree += int(a.sum())
        total += a.size
    return {"agreement": agree / total, "mean_abs_err": float(np.mean(err)), "what": name}


def speed(configs, feed, rounds):
    """configs: name -> callable(feed); min and median CPU ms over interleaved rounds."""
    times = {k: [] for k in configs}
    for fn in configs.values():
        fn(feed)               # warm-up (and lazy initialization)
    for _ in range(rounds):
        for k, fn in configs.items():
            t = time.process_time()
            fn(feed)
            times[k].append((time.process_time() - t) * 1e3)
    return {k: {"min_ms": min(v), "median_ms": float(np.median(v))} for k, v in times.items()}


def runners(fp32_path, ours_int8, theirs_int8, input_name):
    ours32 = Session(read(fp32_path), threads=1)
    ours8 = Session(read(ours_int8), threads=1)
    ort32 = ort_session(fp32_path)
    ort8_ours = ort_session(ours_int8)
    ort8_theirs = ort_session(theirs_int8)
    return {
        "onnx_pg fp32": lambda x: ours32.run({input_name: x})[0],
        "onnx_pg int8": lambda x: ours8.run({input_name: x})[0],
        "onnxruntime fp32": lambda x: ort32.run(None, {input_name: x})[0],
        "onnxruntime int8 (our file)": lambda x: ort8_ours.run(None, {input_name: x})[0],
        "onnxruntime int8 (its quantizer)": lambda x: ort8_theirs.run(None, {input_name: x})[0],
    }


def bench_resnet18(args, out):
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    src = os.path.join(args.models, "resnet18.onnx")
    ours = os.path.join(args.work, "resnet18_int8_onnx_pg.onnx")
    pre = os.path.join(args.work, "resnet18_pre.onnx")
    theirs = os.path.join(args.work, "resnet18_int8_onnxruntime.onnx")
    calib = images(args.calib, 1)
    calib_file = os.path.join(args.work, "resnet18_calib.f32")
    np.concatenate(calib).tofile(calib_file)
    q = sh([oxquant_path(args), "static", src, ours, calib_file], libs=True, capture_output=True, text=True)
    summary = q.stdout.strip()

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(calib)

        def get_next(self):
            x = next(self.it, None)
            return None if x is None else {"input": x}

    quant_pre_process(src, pre, skip_symbolic_shape=True)
    quantize_static(pre, theirs, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    run = runners(src, ours, theirs, "input")
    feeds = images(args.eval, 2)
    acc = [accuracy(run["onnxruntime fp32"], run["onnx_pg int8"], feeds, "onnx_pg int8 (static QDQ)"),
           accuracy(run["onnxruntime fp32"], run["onnxruntime int8 (its quantizer)"], feeds,
                    "onnxruntime quantize_static (QDQ, run by onnxruntime)")]
    out["resnet18"] = {"quantizer": summary, "size_fp32": os.path.getsize(src),
                       "size_int8": os.path.getsize(ours), "size_int8_onnxruntime": os.path.getsize(theirs),
                       "accuracy": acc, "speed": speed(run, feeds[0], args.rounds)}


def bench_encoder(args, out):
    from onnxruntime.quantization import QuantType, quantize_dynamic

    src = os.path.join(args.models, "encoder.onnx")
    ours = os.path.join(args.work, "encoder_int8_onnx_pg.onnx")
    ours_rows = os.path.join(args.work, "encoder_int8_rows_onnx_pg.onnx")
    theirs = os.path.join(args.work, "encoder_int8_onnxruntime.onnx")
    opts = ["--op-types", "MatMul,Gemm,Conv,Gather", "--per-channel", "1"]
    q = sh([oxquant_path(args), "dynamic", src, ours] + opts, libs=True, capture_output=True, text=True)
    qr = sh([oxquant_path(args), "dynamic", src, ours_rows, "--per-row-activations"] + opts, libs=True,
            capture_output=True, text=True)
    quantize_dynamic(src, theirs, weight_type=QuantType.QInt8, per_channel=True)
    run = runners(src, ours, theirs, "input_ids")
    rows8 = Session(read(ours_rows), threads=1)
    ort_rows = ort_session(ours_rows)
    run["onnx_pg int8, per-row activations"] = lambda x: rows8.run({"input_ids": x})[0]
    run["onnxruntime int8 (our per-row file)"] = lambda x: ort_rows.run(None, {"input_ids": x})[0]
    feeds = token_ids(args.eval_encoder, 3)
    acc = [accuracy(run["onnxruntime fp32"], run["onnx_pg int8"], feeds, "onnx_pg int8 (dynamic, per-tensor activations)"),
           accuracy(run["onnxruntime fp32"], run["onnx_pg int8, per-row activations"], feeds,
                    "onnx_pg int8 (dynamic, per-row activations)"),
           accuracy(run["onnxruntime fp32"], run["onnxruntime int8 (its quantizer)"], feeds,
                    "onnxruntime quantize_dynamic (run by onnxruntime)")]
    out["encoder"] = {"quantizer": q.stdout.strip() + "; per-row: " + qr.stdout.strip(),
                      "size_fp32": os.path.getsize(src),
                      "size_int8": os.path.getsize(ours_rows), "size_int8_onnxruntime": os.path.getsize(theirs),
                      "accuracy": acc, "speed": speed(run, feeds[0], args.rounds_encoder)}


def table(res):
    lines = []
    for model, r in res.items():
        if not isinstance(r, dict) or "speed" not in r:
            continue
        sp = r["speed"]
        base = sp["onnx_pg fp32"]["min_ms"]
        lines.append("\n### %s\n" % model)
        lines.append("| configuration (1 thread) | min CPU ms | median CPU ms | speed vs onnx_pg fp32 |")
        lines.append("|---|---:|---:|---:|")
        for k, v in sp.items():
            lines.append("| %s | %.1f | %.1f | %.2fx |" % (k, v["min_ms"], v["median_ms"], base / v["min_ms"]))
        lines.append("\n| accuracy (%s inputs) | argmax agreement | mean abs error |" % ("vs onnxruntime fp32"))
        lines.append("|---|---:|---:|")
        for a in r["accuracy"]:
            lines.append("| %s | %.2f%% | %.5f |" % (a["what"], 100 * a["agreement"], a["mean_abs_err"]))
        lines.append("\nsize: fp32 %.1f MB, onnx_pg int8 %.1f MB (%.2fx smaller), onnxruntime int8 %.1f MB"
                     % (r["size_fp32"] / 1e6, r["size_int8"] / 1e6, r["size_fp32"] / r["size_int8"],
                        r["size_int8_onnxruntime"] / 1e6))
        lines.append("\nquantizer: `%s`" % r["quantizer"])
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=os.path.join(HERE, "models"))
    ap.add_argument("--work", default=None, help="where quantized files go (default: the models folder)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ldflags", nargs="*", default=[])
    ap.add_argument("--oxquant", default=None, help="a prebuilt oxquant (else built from build/libox.a)")
    ap.add_argument("--libs", default=None, help="folder of shared libraries for a prebuilt engine")
    ap.add_argument("--torch-python", default="/usr/bin/python3")
    ap.add_argument("--only", nargs="*", choices=["resnet18", "encoder"], default=["resnet18", "encoder"])
    ap.add_argument("--calib", type=int, default=32, help="calibration images")
    ap.add_argument("--eval", type=int, default=200, help="resnet18 inputs for accuracy")
    ap.add_argument("--eval-encoder", type=int, default=200, help="encoder inputs for accuracy")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--rounds-encoder", type=int, default=8)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    args.work = args.work or args.models
    if args.libs:
        preload_libs(args.libs)
    os.makedirs(args.models, exist_ok=True)
    os.makedirs(args.work, exist_ok=True)
    need = [m for m in args.only if not os.path.exists(os.path.join(args.models, m + ".onnx"))]
    if need:
        sh([args.torch_python, os.path.join(HERE, "make_models.py"), "--out", args.models, "--only"] + need)
    res = {"machine": platform.processor() or platform.machine(), "onnxruntime": ort.__version__}
    try:
        with open("/proc/cpuinfo") as f:
            res["cpu"] = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "?")
    except OSError:
        pass
    if "resnet18" in args.only:
        bench_resnet18(args, res)
    if "encoder" in args.only:
        bench_encoder(args, res)
    print("cpu: %s, onnxruntime %s, one thread" % (res.get("cpu"), res["onnxruntime"]))
    print(table(res))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
