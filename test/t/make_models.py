#!/usr/bin/env python3
"""Fixture models of the TAP tests (test/t/*.pl), written to test/t/data/:

    python3 test/t/make_models.py

- logreg_v2.onnx: test/models/logreg.onnx "re-trained": the same graph with
  other coefficients and intercepts, so that its probabilities differ from
  logreg.onnx's for every input (001_concurrent_replace.pl swaps the two).
- heavy_matmul.onnx: X float [1, 512] tiled to [512, 512], then a chain of
  2000 MatMul nodes with a 512 x 512 cyclic permutation matrix (values stay
  exact: no overflow, no denormals; Y = 512 * sum(X)): about ten seconds of
  work in steps of a few milliseconds, for the cancellation tests
  (005_cancel.pl).
- heavy_loop.onnx: a Loop whose trip count is an input (give it 10^12), with
  a one-Add body.
- pad_reflect.onnx: Pad (reflect) with the pads as an input: a few input
  values make one long kernel (found by fuzz/fuzz_run.c: a kernel that does
  not poll the abort callback).

Needs the onnx package and numpy; deterministic output.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data")


def save(m, name):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(m.SerializeToString())


def logreg_v2():
    m = onnx.load(os.path.join(HERE, "..", "models", "logreg.onnx"))
    lc = next(n for n in m.graph.node if n.op_type == "LinearClassifier")
    for a in lc.attribute:
        if a.name == "coefficients":
            c = np.array(a.floats, dtype=np.float32)
            a.ClearField("floats")
            a.floats.extend((c * 0.5 + 0.25).tolist())
        elif a.name == "intercepts":
            c = np.array(a.floats, dtype=np.float32)
            a.ClearField("floats")
            a.floats.extend((c[::-1] + 1.0).tolist())
    m.graph.name = "logreg_v2"
    save(m, "logreg_v2.onnx")


def heavy_matmul(n=512, steps=2000):
    # W: a cyclic shift (a permutation) made by the graph itself (folded at load), so
    # that the file stays small
    nodes = [h.make_node("ConstantOfShape", ["wshape"], ["zeros"]),
             h.make_node("EyeLike", ["zeros"], ["W1"], k=1),
             h.make_node("EyeLike", ["zeros"], ["W2"], k=1 - n),
             h.make_node("Add", ["W1", "W2"], ["W"]),
             h.make_node("Tile", ["X", "reps"], ["t0"])]
    for i in range(steps):
        nodes.append(h.make_node("MatMul", ["t%d" % i, "W"], ["t%d" % (i + 1)]))
    nodes.append(h.make_node("ReduceSum", ["t%d" % steps], ["Y"], keepdims=0))
    g = h.make_graph(nodes, "heavy_matmul", [h.make_tensor_value_info("X", T.FLOAT, [1, n])],
                     [h.make_tensor_value_info("Y", T.FLOAT, [])],
                     initializer=[nh.from_array(np.array([n, n], dtype=np.int64), "wshape"),
                                  nh.from_array(np.array([n, 1], dtype=np.int64), "reps")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], producer_name="onnx_pg TAP fixtures")
    m.ir_version = 8
    save(m, "heavy_matmul.onnx")


def heavy_loop():
    body = h.make_graph(
        [h.make_node("Add", ["acc_in", "one"], ["acc_out"]),
         h.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("acc_in", T.FLOAT, [1])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("acc_out", T.FLOAT, [1])],
        initializer=[nh.from_array(np.array([1.0], dtype=np.float32), "one")])
    g = h.make_graph([h.make_node("Loop", ["M", "", "X"], ["Y"], body=body)], "heavy_loop",
                     [h.make_tensor_value_info("M", T.INT64, []), h.make_tensor_value_info("X", T.FLOAT, [1])],
                     [h.make_tensor_value_info("Y", T.FLOAT, [1])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], producer_name="onnx_pg TAP fixtures")
    m.ir_version = 8
    save(m, "heavy_loop.onnx")


def pad_reflect():
    g = h.make_graph([h.make_node("Pad", ["X", "P"], ["Y"], mode="reflect"),
                      h.make_node("ReduceSum", ["Y"], ["S"], keepdims=0)], "pad_reflect",
                     [h.make_tensor_value_info("X", T.FLOAT, ["n", "m"]),
                      h.make_tensor_value_info("P", T.INT64, [4])],
                     [h.make_tensor_value_info("S", T.FLOAT, [])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], producer_name="onnx_pg TAP fixtures")
    m.ir_version = 8
    save(m, "pad_reflect.onnx")


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    logreg_v2()
    heavy_matmul()
    heavy_loop()
    pad_reflect()
    print("wrote", sorted(os.listdir(OUT)))
