#!/usr/bin/env python3
"""A/B of engine builds in one process: several copies of libox_capi.so loaded side by
side, each case run by every build in turn, block after block.

    cp build/libox_capi.so /tmp/lib_a.so      # before the change
    make build/libox_capi.so && cp build/libox_capi.so /tmp/lib_b.so
    python3 bench/ab.py /tmp/lib_a.so /tmp/lib_b.so resnet50 "l2 3x3/2 128" --threads 2

The speed of this machine's cores changes by a quarter within minutes (other guests
of the host); two runs of bench/run.py an hour apart differ by more than most single
changes.  Interleaving blocks of the builds in one process is what tells a change
apart from that.  Cases: the models of bench/run.py (resnet50, mobilenet_v2, encoder,
mlp, iris_rf; --batch), the layer names of bench/layers.py and the PyTorch models of
bench/zoo_models.py as zoo:NAME (zoo:tinytf), and one MatMul by a constant as
matmul:MxKxN (a [--batch, M, K] feed), and one Transpose as transpose:DIMS:PERM
(transpose:64x512x16:0,2,1,3, a [--batch, 64, 512, 16] feed), and any ONNX file as
file:PATH (inputs of its declared shapes, as bench/run.py makes them).  Prints per case and
build the minimum and median time per run (process CPU time, or wall time with
--wall) and the median of the per-block ratios to the first build, which is the
figure to read.  Each build keeps its own thread-local variables (initial-exec TLS,
about 1 KB a copy), and the dynamic loader's default static TLS reserve fits one
copy: the script restarts itself with GLIBC_TUNABLES raising the reserve to
STATIC_TLS bytes.  Not megabytes: glibc carves a thread's static TLS out of its
stack, and a 16 MB reserve (this docstring's advice before) left the pool's
workers so little stack that the encoder crashed in a worker at 2 threads.  The
first build listed tends to measure a few percent slow: list the baseline twice
(first and last) to see that bias.  CPU time is the process's: a build whose
workers keep spinning after its block (a change to how long they spin) has
that spin charged to the next build's block, so measure such changes in
separate processes.
"""
import argparse
import importlib.util
import json
import os
import sys
import time

# before numpy starts its BLAS threads, which would spin under the timings
# (bench/run.py sets the same, but is imported after numpy here)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ENGINE = os.path.join(HERE, "..", "test", "engine", "oxengine.py")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(ENGINE))
import layers as L  # noqa: E402
import run as R  # noqa: E402

MODELS = ("resnet50", "mobilenet_v2", "encoder", "mlp", "iris_rf")
STATIC_TLS = 65536
TUNABLE = f"glibc.rtld.optional_static_tls={STATIC_TLS}"


def restart_with_static_tls():
    """Re-exec this script with room for several copies' static TLS (see above)."""
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    if "glibc.rtld.optional_static_tls" in tunables:
        return
    env = dict(os.environ, GLIBC_TUNABLES=":".join(t for t in (tunables, TUNABLE) if t))
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def load_engine(path, tag):
    """oxengine bound to the library at path, as its own module"""
    os.environ["OX_CAPI_LIB"] = path
    spec = importlib.util.spec_from_file_location("oxengine_" + tag, ENGINE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def one_node_model(node, shape, inits):
    """(model bytes, feeds) of node from input x of shape (random floats) to output y"""
    graph = helper.make_graph([node], node.op_type.lower(),
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString(), {"x": np.random.default_rng(1).standard_normal(shape).astype(np.float32)}


def case_model(name, batch):
    """(model bytes, feeds) of a bench model or a layer of bench/layers.py"""
    if name in MODELS:
        mb = open(R.model_path(name), "rb").read()
        return mb, R.make_inputs(R.ort_session(mb, 1), name, batch)
    if name.startswith("zoo:"):
        # the PyTorch models of bench/zoo_models.py: "zoo:tinytf", batch from --batch
        zoo = os.path.join(HERE, "models", "zoo")
        shape = json.load(open(os.path.join(zoo, "shapes.json")))[name[4:]]
        mb = open(os.path.join(zoo, name[4:] + ".onnx"), "rb").read()
        sess = R.ort_session(mb, 1)
        inp = sess.get_inputs()[0]
        rng = np.random.default_rng(0)
        if "int" in inp.type:
            x = rng.integers(0, 1000, [batch] + shape).astype(np.int64)
        else:
            x = rng.standard_normal([batch] + shape).astype(np.float32)
        return mb, {inp.name: x}
    if name.startswith("file:"):
        # any ONNX file ("file:/tmp/tail.onnx": a part of a network cut out with
        # onnx.utils.extract_model, whose weights come from L3 as they do in the whole
        # network), its inputs made as for a bench model (the first dimension --batch)
        mb = open(name[5:], "rb").read()
        return mb, R.make_inputs(R.ort_session(mb, 1), name, batch)
    if name.startswith("matmul:"):
        # one MatMul of a [batch, M, K] feed by a constant [K, N] ("matmul:64x128x384"): the
        # projections of a transformer's layers
        m, k, n = (int(v) for v in name[7:].split("x"))
        rng = np.random.default_rng(0)
        w = numpy_helper.from_array(rng.standard_normal((k, n)).astype(np.float32), "w")
        return one_node_model(helper.make_node("MatMul", ["x", "w"], ["y"]), [batch, m, k], [w])
    if name.startswith("transpose:"):
        # one Transpose of a [batch, dims...] feed, perm over all axes ("transpose:64x512x16:0,2,1,3":
        # the heads of a transformer's attention)
        dims, perm = name[10:].split(":")
        node = helper.make_node("Transpose", ["x"], ["y"], perm=[int(v) for v in perm.split(",")])
        return one_node_model(node, [batch] + [int(v) for v in dims.split("x")], [])
    for layer in L.RESNET50 + L.MOBILENET:
        if layer[0] == name:
            mb, feeds, _ = L.conv_model(*layer[1:], batch)
            return mb, feeds
    raise SystemExit(f"unknown case {name!r}: a model ({', '.join(MODELS)}) or a layer of bench/layers.py")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("items", nargs="+", help="libraries (*.so), then cases")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--blocks", type=int, default=15, help="blocks per build and case")
    ap.add_argument("--block-seconds", type=float, default=0.05, help="about this long per block")
    ap.add_argument("--wall", action="store_true", help="wall time instead of process CPU time")
    ap.add_argument("--conv-isa", choices=("avx2", "avx512"),
                    help="the convolution kernels' instruction set in every build, at most the CPU's "
                         "(avx2 on an AVX-512 machine: blocks of 8 channels)")
    args = ap.parse_args()
    libs = [os.path.abspath(a) for a in args.items if a.endswith(".so")]
    cases = [a for a in args.items if not a.endswith(".so")]
    if len(libs) < 2 or not cases:
        raise SystemExit("need at least two libraries and one case")

    R.pin(args.threads)
    engines = [load_engine(p, str(i)) for i, p in enumerate(libs)]
    if args.conv_isa:
        for e in engines:
            e.force_conv_isa(e.ISA_AVX2 if args.conv_isa == "avx2" else e.ISA_AVX512)
    clock = time.perf_counter if args.wall else time.process_time
    for name in cases:
        mb, feeds = case_model(name, args.batch)
        # weights released as the server and bench/run.py create sessions: a session then
        # keeps only the packed copy of a large weight, and runs from it
        sessions = [e.Session(mb, threads=args.threads, release_weights=True) for e in engines]
        outs = [s.run(feeds) for s in sessions]
        first = np.asarray(list(outs[0].values())[0] if isinstance(outs[0], dict) else outs[0][0])
        for lib, o in zip(libs[1:], outs[1:]):
            got = np.asarray(list(o.values())[0] if isinstance(o, dict) else o[0])
            scale = max(float(np.abs(first).max()), 1e-30) if first.size else 1.0
            if first.shape != got.shape or (first.size and np.abs(got - first).max() / scale > 1e-5):
                print(f"  outputs differ: {os.path.basename(lib)} on {name}")
        # calls per block from one timed call
        t = clock()
        sessions[0].run_repeat(feeds, 1)
        per_call = max(clock() - t, 1e-7)
        n = max(1, int(args.block_seconds / per_call))
        times = [[] for _ in sessions]
        for _ in range(args.blocks):
            for i, s in enumerate(sessions):
                t = clock()
                s.run_repeat(feeds, n)
                times[i].append((clock() - t) / n * 1e3)
        base = np.array(times[0])
        print(f"{name} ({'wall' if args.wall else 'CPU'} ms per run, {args.threads} thread(s), {n} runs per block)")
        for lib, ts in zip(libs, times):
            ratio = float(np.median(np.array(ts) / base))
            print(f"  {os.path.basename(lib):24s} min {min(ts):9.4f}  median {np.median(ts):9.4f}  "
                  f"ratio to the first {ratio:.3f}")


if __name__ == "__main__":
    restart_with_static_tls()
    main()
