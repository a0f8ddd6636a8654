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
- cancel_chain.onnx: the same with 40 steps of 64 x 64 (test/unit/test_cancel.c).
- heavy_loop.onnx: a Loop whose trip count is an input (give it 10^12), with
  a one-Add body.
- pad_reflect.onnx: Pad (reflect) with the pads as an input: a few input
  values make one long kernel (found by fuzz/fuzz_run.c: a kernel that did
  not poll the abort callback).
- big_*.onnx: one long kernel each, sized by an int64 input S (a shape) so
  that a few bytes ask for seconds of work: ConstantOfShape, Range, Expand,
  Tile, Gather, Concat, Resize, an elementwise Add, a MatMul, a Softmax, a
  Transpose, each followed by a ReduceSum over the last axis and one over
  the rest (the reductions are long kernels too), so that the output is one
  number: S = [2, 3] gives a known small result.

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


def heavy_matmul(n=512, steps=2000, name="heavy_matmul"):
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
    g = h.make_graph(nodes, name, [h.make_tensor_value_info("X", T.FLOAT, [1, n])],
                     [h.make_tensor_value_info("Y", T.FLOAT, [])],
                     initializer=[nh.from_array(np.array([n, n], dtype=np.int64), "wshape"),
                                  nh.from_array(np.array([n, 1], dtype=np.int64), "reps")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], producer_name="onnx_pg TAP fixtures")
    m.ir_version = 8
    save(m, name + ".onnx")


def cancel_chain():
    # heavy_matmul in small (64 x 64, 40 steps): test/unit/test_cancel.c cancels
    # its session creation (folding, prepare) at every poll, under valgrind
    heavy_matmul(n=64, steps=40, name="cancel_chain")


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


def big(name, nodes, inits=(), extra_inputs=()):
    # every model: S (int64 [2]) -> ... -> B [rows, cols] float -> Y (scalar sum)
    nodes = list(nodes) + [
        h.make_node("ReduceSum", ["B", "ax1"], ["R"], keepdims=0),
        h.make_node("ReduceSum", ["R"], ["Y"], keepdims=0)]
    inits = list(inits) + [nh.from_array(np.array([1], dtype=np.int64), "ax1")]
    g = h.make_graph(nodes, name,
                     [h.make_tensor_value_info("S", T.INT64, [2])] + list(extra_inputs),
                     [h.make_tensor_value_info("Y", T.FLOAT, [])], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], producer_name="onnx_pg TAP fixtures")
    m.ir_version = 8
    save(m, name + ".onnx")


def big_kernels():
    one = h.make_tensor("one", T.FLOAT, [1], [1.0])
    i64 = lambda n, v: nh.from_array(np.array(v, dtype=np.int64), n)
    # ConstantOfShape: S
    big("big_constant", [h.make_node("ConstantOfShape", ["S"], ["B"], value=one)])
    # Range(0, S0 * S1) reshaped to S
    big("big_range", [h.make_node("ReduceProd", ["S"], ["n"], keepdims=0),
                      h.make_node("Cast", ["n"], ["nf"], to=T.FLOAT),
                      h.make_node("Range", ["zero", "nf", "onef"], ["r"]),
                      h.make_node("Reshape", ["r", "S"], ["B"])],
        [nh.from_array(np.array(0, dtype=np.float32), "zero"),
         nh.from_array(np.array(1, dtype=np.float32), "onef")])
    # Expand a [1, 1] ones tensor to S
    big("big_expand", [h.make_node("Expand", ["c11", "S"], ["B"])],
        [nh.from_array(np.ones((1, 1), dtype=np.float32), "c11")])
    # Tile a [1, 1] ones tensor S times
    big("big_tile", [h.make_node("Tile", ["c11", "S"], ["B"])],
        [nh.from_array(np.ones((1, 1), dtype=np.float32), "c11")])
    # Gather rows of a [1, S1] ones tensor with S0 zero indices
    big("big_gather", [h.make_node("Slice", ["S", "s0", "s1"], ["rows"]),
                       h.make_node("Slice", ["S", "s1", "s2"], ["cols"]),
                       h.make_node("Concat", ["one_i", "cols"], ["shape1"], axis=0),
                       h.make_node("ConstantOfShape", ["shape1"], ["data"], value=one),
                       h.make_node("ConstantOfShape", ["rows"], ["idx"],
                                   value=h.make_tensor("z", T.INT64, [1], [0])),
                       h.make_node("Gather", ["data", "idx"], ["B"], axis=0)],
        [i64("s0", [0]), i64("s1", [1]), i64("s2", [2]), i64("one_i", [1])])
    # Concat of two ConstantOfShape halves along the last axis
    big("big_concat", [h.make_node("ConstantOfShape", ["S"], ["a"], value=one),
                       h.make_node("Concat", ["a", "a"], ["B"], axis=1)])
    # Resize (nearest) of a [1, 1] ones tensor to S
    big("big_resize", [h.make_node("Cast", ["S"], ["Sf"], to=T.FLOAT),
                       h.make_node("Resize", ["c11", "", "Sf"], ["B"], mode="nearest")],
        [nh.from_array(np.ones((1, 1), dtype=np.float32), "c11")])
    # Add of two ConstantOfShape tensors (the elementwise loop)
    big("big_add", [h.make_node("ConstantOfShape", ["S"], ["a"], value=one),
                    h.make_node("Add", ["a", "a"], ["B"])])
    # MatMul of S0 x S1 by S1 x S1 (ones): S0 * S1 * S1 multiply-adds
    big("big_matmul", [h.make_node("ConstantOfShape", ["S"], ["a"], value=one),
                       h.make_node("Slice", ["S", "s1", "s2"], ["cols"]),
                       h.make_node("Concat", ["cols", "cols"], ["wshape"], axis=0),
                       h.make_node("ConstantOfShape", ["wshape"], ["w"], value=one),
                       h.make_node("MatMul", ["a", "w"], ["B"])],
        [i64("s1", [1]), i64("s2", [2])])
    # Softmax over the last axis
    big("big_softmax", [h.make_node("ConstantOfShape", ["S"], ["a"], value=one),
                        h.make_node("Softmax", ["a"], ["B"], axis=-1)])
    # Attention over S0 queries and keys of width S1 (ones): softmax(Q Q^T) Q, one
    # fused ScaledDotProductAttention (S0 * S0 * S1 * 2 multiply-adds)
    big("big_attention", [h.make_node("ConstantOfShape", ["S"], ["a"], value=one),
                          h.make_node("Transpose", ["a"], ["at"], perm=[1, 0]),
                          h.make_node("MatMul", ["a", "at"], ["s"]),
                          h.make_node("Softmax", ["s"], ["p"], axis=-1),
                          h.make_node("MatMul", ["p", "a"], ["B"])])
    # Transpose of S1 x S0, so that B is S
    big("big_transpose", [h.make_node("Slice", ["S", "s0", "s1"], ["rows"]),
                          h.make_node("Slice", ["S", "s1", "s2"], ["cols"]),
                          h.make_node("Concat", ["cols", "rows"], ["tshape"], axis=0),
                          h.make_node("ConstantOfShape", ["tshape"], ["a"], value=one),
                          h.make_node("Transpose", ["a"], ["B"], perm=[1, 0])],
        [i64("s0", [0]), i64("s1", [1]), i64("s2", [2])])


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    logreg_v2()
    heavy_matmul()
    cancel_chain()
    heavy_loop()
    pad_reflect()
    big_kernels()
    print("wrote", sorted(os.listdir(OUT)))
