#!/usr/bin/env python3
"""Per-layer comparison with onnxruntime: single-node Conv (and MatMul) models with the
shapes of resnet50, mobilenet_v2, mnasnet and the encoder, each engine timed by process CPU time
per call (alternating blocks), so that a slow layer shape stands out.

    python3 bench/layers.py [--set resnet50|mobilenet|mnasnet|encoder|vit|all] [--threads 1] [--reps 5]

Prints one line per layer: CPU time per call (the minimum over the blocks) of both engines, the ratio onnx_pg /
onnxruntime, and GFLOP per CPU-second.  A tool for finding work, not a report.
"""
import argparse
import os
import sys
import time

# before numpy starts its BLAS threads, which would spin under the timings
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as R  # noqa: E402

# (name, C, H, M, k, stride, group): square input H x H, pads k // 2
RESNET50 = [
    ("conv1 7x7/2", 3, 224, 64, 7, 2, 1),
    ("l1 1x1 64>64", 64, 56, 64, 1, 1, 1),
    ("l1 3x3 64", 64, 56, 64, 3, 1, 1),
    ("l1 1x1 64>256", 64, 56, 256, 1, 1, 1),
    ("l1 1x1 256>64", 256, 56, 64, 1, 1, 1),
    ("l2 1x1 256>128@56", 256, 56, 128, 1, 1, 1),
    ("l2 3x3/2 128", 128, 56, 128, 3, 2, 1),
    ("l2 1x1/2 256>512", 256, 56, 512, 1, 2, 1),
    ("l2 3x3 128", 128, 28, 128, 3, 1, 1),
    ("l2 1x1 128>512", 128, 28, 512, 1, 1, 1),
    ("l2 1x1 512>128", 512, 28, 128, 1, 1, 1),
    ("l3 1x1 512>256@28", 512, 28, 256, 1, 1, 1),
    ("l3 3x3/2 256", 256, 28, 256, 3, 2, 1),
    ("l3 3x3 256", 256, 14, 256, 3, 1, 1),
    ("l3 1x1 256>1024", 256, 14, 1024, 1, 1, 1),
    ("l3 1x1 1024>256", 1024, 14, 256, 1, 1, 1),
    ("l4 1x1 1024>512@14", 1024, 14, 512, 1, 1, 1),
    ("l4 3x3/2 512", 512, 14, 512, 3, 2, 1),
    ("l4 3x3 512", 512, 7, 512, 3, 1, 1),
    ("l4 1x1 512>2048", 512, 7, 2048, 1, 1, 1),
    ("l4 1x1 2048>512", 2048, 7, 512, 1, 1, 1),
]
# resnet50's count of each layer above, for the weighted total
RESNET50_COUNT = [1, 1, 3, 4, 2, 1, 1, 1, 3, 4, 3, 1, 1, 5, 6, 5, 1, 1, 2, 3, 2]

MOBILENET = [
    ("stem 3x3/2 3>32", 3, 224, 32, 3, 2, 1),
    ("dw 3x3 32@112", 32, 112, 32, 3, 1, 32),
    ("pw 32>16@112", 32, 112, 16, 1, 1, 1),
    ("pw 16>96@112", 16, 112, 96, 1, 1, 1),
    ("dw 3x3/2 96@112", 96, 112, 96, 3, 2, 96),
    ("pw 96>24@56", 96, 56, 24, 1, 1, 1),
    ("pw 24>144@56", 24, 56, 144, 1, 1, 1),
    ("dw 3x3 144@56", 144, 56, 144, 3, 1, 144),
    ("pw 144>24@56", 144, 56, 24, 1, 1, 1),
    ("dw 3x3/2 144@56", 144, 56, 144, 3, 2, 144),
    ("pw 32>192@28", 32, 28, 192, 1, 1, 1),
    ("dw 3x3 192@28", 192, 28, 192, 3, 1, 192),
    ("pw 192>32@28", 192, 28, 32, 1, 1, 1),
    ("pw 64>384@14", 64, 14, 384, 1, 1, 1),
    ("dw 3x3 384@14", 384, 14, 384, 3, 1, 384),
    ("pw 384>64@14", 384, 14, 64, 1, 1, 1),
    ("pw 96>576@14", 96, 14, 576, 1, 1, 1),
    ("dw 3x3 576@14", 576, 14, 576, 3, 1, 576),
    ("pw 160>960@7", 160, 7, 960, 1, 1, 1),
    ("dw 3x3 960@7", 960, 7, 960, 3, 1, 960),
    ("pw 960>160@7", 960, 7, 160, 1, 1, 1),
    ("pw 320>1280@7", 320, 7, 1280, 1, 1, 1),
]

# MNASNet-1.0's shapes that MobileNet-v2 lacks: 5x5 depthwise layers, expansions of 3,
# channel counts of 40, 80, 120 and 192
MNASNET = [
    ("pw 16>48@112", 16, 112, 48, 1, 1, 1),
    ("dw 3x3/2 48@112", 48, 112, 48, 3, 2, 48),
    ("pw 48>24@56", 48, 56, 24, 1, 1, 1),
    ("pw 24>72@56", 24, 56, 72, 1, 1, 1),
    ("dw 5x5/2 72@56", 72, 56, 72, 5, 2, 72),
    ("pw 72>40@28", 72, 28, 40, 1, 1, 1),
    ("pw 40>120@28", 40, 28, 120, 1, 1, 1),
    ("dw 5x5 120@28", 120, 28, 120, 5, 1, 120),
    ("pw 120>40@28", 120, 28, 40, 1, 1, 1),
    ("pw 80>480@14", 80, 14, 480, 1, 1, 1),
    ("dw 5x5 480@14", 480, 14, 480, 5, 1, 480),
    ("pw 480>80@14", 480, 14, 80, 1, 1, 1),
    ("pw 96>576@14", 96, 14, 576, 1, 1, 1),
    ("pw 576>96@14", 576, 14, 96, 1, 1, 1),
    ("pw 192>1152@7", 192, 7, 1152, 1, 1, 1),
    ("dw 5x5 1152@7", 1152, 7, 1152, 5, 1, 1152),
    ("pw 1152>192@7", 1152, 7, 192, 1, 1, 1),
    ("pw 1152>320@7", 1152, 7, 320, 1, 1, 1),
]

# (name, M, K, N): MatMul [M, K] x [K, N] with constant B
ENCODER = [
    ("qkv 128x768x768", 128, 768, 768),
    ("ffn1 128x768x3072", 128, 768, 3072),
    ("ffn2 128x3072x768", 128, 3072, 768),
    ("mlp 256x784x512", 256, 784, 512),
    ("mlp 1x784x512", 1, 784, 512),
]

# ViT-B/16's Linear layers (197 tokens, hidden 768, MLP 3072; bench/zoo_models.py's vit)
VIT = [
    ("vit qkv 197x768x2304", 197, 768, 2304),
    ("vit proj 197x768x768", 197, 768, 768),
    ("vit ffn1 197x768x3072", 197, 768, 3072),
    ("vit ffn2 197x3072x768", 197, 3072, 768),
]


def conv_model(C, H, M, k, s, g, batch):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((M, C // g, k, k), dtype=np.float32) * 0.1
    b = rng.standard_normal((M,), dtype=np.float32) * 0.1
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[k, k], strides=[s, s],
                            pads=[k // 2] * 4, group=g)
    graph = helper.make_graph([node], "c", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, C, H, H])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.tobytes(), raw=True),
                               helper.make_tensor("b", TensorProto.FLOAT, b.shape, b.tobytes(), raw=True)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    Ho = (H + 2 * (k // 2) - k) // s + 1
    flops = 2.0 * batch * M * Ho * Ho * (C // g) * k * k
    return m.SerializeToString(), {"x": rng.standard_normal((batch, C, H, H), dtype=np.float32)}, flops


def matmul_model(M, K, N, batch=1):
    """one MatMul by a constant [K, N], fed [M, K] (the layer's M is its batch: batch is not used)"""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((K, N), dtype=np.float32) * 0.05
    node = helper.make_node("MatMul", ["x", "w"], ["y"])
    graph = helper.make_graph([node], "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [M, K])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.tobytes(), raw=True)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m.SerializeToString(), {"x": rng.standard_normal((M, K), dtype=np.float32)}, 2.0 * M * K * N


def cpu_per_call(fn, k):
    c0 = time.process_time()
    fn(k)
    return (time.process_time() - c0) / k


def measure(model_bytes, feeds, threads, reps, min_block):
    ox = R.ox_session(model_bytes, threads)
    ort = R.ort_session(model_bytes, threads)
    a = ox.run(feeds)[0]
    b = ort.run(None, feeds)[0]
    err = float(np.max(np.abs(a - b)) / max(1e-30, float(np.max(np.abs(b)))))

    def fo(k):
        ox.run_repeat(feeds, k)

    def fr(k):
        for _ in range(k):
            ort.run(None, feeds)
    for f in (fo, fr):
        f(2)
    t1 = max(cpu_per_call(fo, 1), cpu_per_call(fr, 1), 1e-5)
    k = max(1, int(min_block / t1))
    so, sr = [], []
    for r in range(reps):
        for lbl in (("o", "r") if r % 2 == 0 else ("r", "o")):
            (so if lbl == "o" else sr).append(cpu_per_call(fo if lbl == "o" else fr, k))
    # the minimum: on a shared machine the other load only ever adds time (cache misses)
    return float(np.min(so)), float(np.min(sr)), err


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", default="all", choices=["resnet50", "mobilenet", "mnasnet", "encoder", "vit", "all"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--block", type=float, default=0.05, help="seconds of CPU per timed block")
    ap.add_argument("--only", help="substring of the layer names to run")
    args = ap.parse_args()
    R.pin(args.threads)
    sets = []
    if args.set in ("resnet50", "all"):
        sets.append(("resnet50", RESNET50, RESNET50_COUNT, conv_model))
    if args.set in ("mobilenet", "all"):
        sets.append(("mobilenet", MOBILENET, None, conv_model))
    if args.set in ("mnasnet", "all"):
        sets.append(("mnasnet", MNASNET, None, conv_model))
    if args.set in ("encoder", "all"):
        sets.append(("encoder", ENCODER, None, matmul_model))
    if args.set in ("vit", "all"):
        sets.append(("vit", VIT, None, matmul_model))
    for sname, layers, counts, make in sets:
        tot_o = tot_r = 0.0
        print("%-22s %10s %10s %6s %8s %8s %8s" % (sname, "onnx_pg", "ort", "ratio", "GF/s ox", "GF/s ort", "err"))
        for i, L in enumerate(layers):
            if args.only and args.only not in L[0]:
                continue
            mb, feeds, fl = make(*L[1:], batch=args.batch)
            o, r, err = measure(mb, feeds, args.threads, args.reps, args.block)
            n = counts[i] if counts else 1
            tot_o += n * o
            tot_r += n * r
            print("%-22s %8.3fms %8.3fms %6.2f %8.1f %8.1f %8.1e" % (L[0], o * 1e3, r * 1e3, o / r, fl / o / 1e9,
                                                                 fl / r / 1e9, err), flush=True)
        if counts and not args.only:
            print("%-22s %8.2fms %8.2fms %6.2f  (weighted by layer count)" % ("total", tot_o * 1e3, tot_r * 1e3,
                                                                              tot_o / tot_r))


if __name__ == "__main__":
    main()
