#!/usr/bin/env python3
"""Node by node inside a whole network: onnx_pg's per-node profile (Session.profile)
against onnxruntime's own profiler, on the same model, input and thread count.

    python3 bench/nodes.py resnet50 [--threads 1] [--runs 25] [--nodes]
    python3 bench/nodes.py /tmp/tail.onnx     # any ONNX file, for example a network's last layers

bench/layers.py times single-node models, which makes onnxruntime look slower than it
is inside a network: each of its single-node NCHWc models pays the NCHW <-> NCHWc
reorders that a whole network pays once.  Here both engines run the whole model; each
node's time is the minimum over the runs (the host's speed changes from minute to
minute; the minimum is the stablest estimate).  onnxruntime's profile names a node by
its output tensor (fused nodes by the last fused output, NCHWc ones with "_nchwc"),
so its times are matched to onnx_pg's nodes through the producer of that tensor in
the original graph (walking back through Relu, Add and Clip), never by position: the
two engines order the nodes of a residual block differently.  Reorder nodes of
onnxruntime are left out (a handful of microseconds per network).

Prints per category (Conv kernel, stride, depthwise, input plane; other operators by
type) the summed times of both engines, the difference and the ratio, largest loss
first; --nodes lists every node.  A tool for finding work, not a report.
"""
import argparse
import glob
import json
import os
import sys
import tempfile
from collections import defaultdict

import onnx
import onnxruntime as ort
from onnx import shape_inference

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "test", "engine"))
import run as R  # noqa: E402


def categories(model):
    """node name -> category, e.g. '1x1/2 @56' (kernel, stride, depthwise, input side)"""
    m = shape_inference.infer_shapes(model)
    shapes = {vi.name: [d.dim_value for d in vi.type.tensor_type.shape.dim]
              for vi in list(m.graph.value_info) + list(m.graph.input)}
    inits = {i.name: list(i.dims) for i in m.graph.initializer}
    cat = {}
    for n in m.graph.node:
        if n.op_type == "Conv" and n.input[1] in inits:
            w = inits[n.input[1]]
            x = shapes.get(n.input[0], [0, 0, 0, 0])
            attrs = {a.name: a for a in n.attribute}
            stride = attrs["strides"].ints[0] if "strides" in attrs else 1
            group = attrs["group"].i if "group" in attrs else 1
            kernel = "x".join(str(k) for k in w[2:])
            side = x[2] if len(x) > 2 else "?"
            cat[n.name] = f"{kernel}{'/%d' % stride if stride > 1 else ''}{' dw' if group > 1 else ''} @{side}"
        else:
            cat[n.name] = n.op_type
    return cat


def ort_node_times(model_bytes, model, feeds, threads, runs, between=None):
    """onnxruntime's minimum kernel time per original node name (ms); between() runs
    after each of its runs (the other engine's, so that both see the same minutes)"""
    producer = {o: n for n in model.graph.node for o in n.output}

    def owner(tensor):
        n = producer.get(tensor.replace("_nchwc", ""))
        while n is not None and n.op_type in ("Relu", "Add", "Clip"):
            n = producer.get(n.input[0])
        return n.name if n is not None else tensor

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.enable_profiling = True
    with tempfile.TemporaryDirectory() as tmp:
        so.profile_file_prefix = os.path.join(tmp, "ort")
        sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
        for i in range(runs + 5):
            sess.run(None, feeds)
            if between is not None and i >= 5:
                between()
        events = json.load(open(sess.end_profiling()))
    per = defaultdict(list)
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time") and "Reorder" not in e["name"]:
            per[e["name"][:-len("_kernel_time")]].append(e["dur"] / 1e3)
    times = defaultdict(float)
    for name, durs in per.items():
        times[owner(name)] += min(durs)
    return times


def compare(model_name, threads=1, batch=1, runs=25):
    """both engines node by node on a bench model: {"categories": [(category, nodes,
    onnxruntime ms, onnx_pg ms)] largest loss first, "nodes": [(category, onnxruntime ms,
    onnx_pg ms, name)], "missing": [names onnxruntime has no time for]}"""
    # a path to any ONNX file (a part of a network cut out with onnx.utils.extract_model), or a bench model
    path = model_name if model_name.endswith(".onnx") else R.model_path(model_name)
    model_bytes = open(path, "rb").read()
    model = onnx.load_from_string(model_bytes)
    feeds = R.make_inputs(R.ort_session(model_bytes, 1), model_name, batch)

    import oxengine as ox
    sess = ox.Session(model_bytes, threads=threads)
    for _ in range(5):
        sess.run(feeds)
    profiles = []
    theirs = ort_node_times(model_bytes, model, feeds, threads, runs,
                            between=lambda: profiles.append(sess.profile(feeds)))
    ours = [(row[0], min(p[i][2] for p in profiles)) for i, row in enumerate(profiles[0])]
    cat = categories(model)
    for name, _ in ours:
        if name.startswith("nchwc_reorder"):
            cat[name] = "layout reorders"

    summed = defaultdict(lambda: [0, 0.0, 0.0])
    for name, ms in ours:
        c = summed[cat.get(name, name)]
        c[0] += 1
        c[1] += theirs.get(name, 0.0)
        c[2] += ms
    rows = sorted(((c, n, a, b) for c, (n, a, b) in summed.items()), key=lambda r: -(r[3] - r[2]))
    return {"categories": rows,
            "nodes": [(cat.get(name, name), theirs.get(name, 0.0), ms, name) for name, ms in ours],
            "missing": [name for name, _ in ours if name not in theirs]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="a model of bench/run.py (resnet50, mobilenet_v2, encoder, mlp), "
                    "or the path of an .onnx file (float inputs of its declared shapes)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--runs", type=int, default=25)
    ap.add_argument("--nodes", action="store_true", help="list every node")
    args = ap.parse_args()

    R.pin(args.threads)
    res = compare(args.model, args.threads, args.batch, args.runs)
    print(f"{args.model} batch {args.batch}, {args.threads} thread(s), minimum of {args.runs} runs per node (ms)")
    print(f"{'category':20s} {'nodes':>5s} {'onnxruntime':>11s} {'onnx_pg':>8s} {'diff':>8s} {'ratio':>6s}")
    for c, n, a, b in res["categories"]:
        print(f"{c:20s} {n:5d} {a:11.3f} {b:8.3f} {b - a:+8.3f} {b / a if a else float('nan'):6.2f}")
    total_a = sum(r[2] for r in res["categories"])
    total_b = sum(r[3] for r in res["categories"])
    print(f"{'total':20s} {len(res['nodes']):5d} {total_a:11.3f} {total_b:8.3f} {total_b - total_a:+8.3f} "
          f"{total_b / total_a:6.2f}")
    if res["missing"]:
        print(f"no onnxruntime time for {len(res['missing'])} node(s) (fused away there?): "
              f"{', '.join(res['missing'][:5])}")
    if args.nodes:
        for c, a, b, name in res["nodes"]:
            print(f"{c:20s} onnxruntime {a:7.3f} onnx_pg {b:7.3f}  {name}")


if __name__ == "__main__":
    main()
