"""The optimizer on long graphs: every fusion a chain offers is made, dead and
Identity chains go entirely, and the outputs stay those of the unoptimized
graph.

The passes find the node that alone reads a value through a use index kept
while they rewrite the graph (src/model/uses.c).  A rewrite the index missed
would make it answer "no sole reader" (a fusion left undone: the counts
below) or name the wrong one (a fusion that changes results: the outputs
below).  Long chains put thousands of rewrites in one pass, each depending on
the answers after the ones before.  No timings here: docs/reliability.md
("Graph size") has them.
"""
import collections

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from oxengine import Session


def _ops(session):
    return collections.Counter(op for _, op, _ in session.placement())


def _model(nodes, inits, x_shape, y_name, opset=17):
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                          [helper.make_tensor_value_info(y_name, TensorProto.FLOAT, x_shape)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]).SerializeToString()


def _dense_chain(blocks, d, rank3=False):
    rng = np.random.default_rng(7)
    nodes, inits, x = [], [], "x"
    for i in range(blocks):
        # weights scaled so that activations neither vanish nor blow up over the chain
        w = (rng.standard_normal((d, d)) * (1.2 / np.sqrt(d))).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"),
                  numpy_helper.from_array(rng.standard_normal(d).astype(np.float32) * 0.1, f"b{i}")]
        nodes += [helper.make_node("MatMul", [x, f"w{i}"], [f"m{i}"]),
                  helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"]),
                  helper.make_node("Relu", [f"a{i}"], [f"r{i}"])]
        x = f"r{i}"
    shape = [2, 3, d] if rank3 else [3, d]
    return _model(nodes, inits, shape, x), shape


def _same_outputs(model, shape, levels=(0, 3), low=None):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(shape) if low is None else rng.uniform(low, low + 3, shape)).astype(np.float32)
    ref = Session(model, opt_level=levels[0]).run({"x": x})[0]
    assert np.abs(ref).max() > 0
    for level in levels[1:]:
        got = Session(model, opt_level=level).run({"x": x})[0]
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


def test_dense_chain_fully_fused():
    model, shape = _dense_chain(400, 16)
    ops = _ops(Session(model, opt_level=3))
    # MatMul + Add -> Gemm, + Relu -> FusedGemm: one node per block, nothing left over
    assert ops == collections.Counter({"FusedGemm": 400}), ops
    _same_outputs(model, shape)


def test_rank3_dense_chain_fused():
    """The batched rewrite: Reshapes to rows and back around each Gemm, cancelling between blocks."""
    model, shape = _dense_chain(300, 16, rank3=True)
    ops = _ops(Session(model, opt_level=3))
    assert ops["FusedGemm"] == 300 and "MatMul" not in ops and "Add" not in ops and "Relu" not in ops, ops
    _same_outputs(model, shape)


def test_gelu_chain_fused():
    nodes, x = [], "x"
    inits = [numpy_helper.from_array(np.array(1.4142135, np.float32), "sqrt2"),
             numpy_helper.from_array(np.array(1.0, np.float32), "one"),
             numpy_helper.from_array(np.array(0.5, np.float32), "half")]
    for i in range(500):
        nodes += [helper.make_node("Div", [x, "sqrt2"], [f"d{i}"]), helper.make_node("Erf", [f"d{i}"], [f"e{i}"]),
                  helper.make_node("Add", [f"e{i}", "one"], [f"a{i}"]),
                  helper.make_node("Mul", [x, f"a{i}"], [f"m{i}"]),
                  helper.make_node("Mul", [f"m{i}", "half"], [f"g{i}"])]
        x = f"g{i}"
    model = _model(nodes, inits, [4, 8], x)
    ops = _ops(Session(model, opt_level=2))
    assert ops == collections.Counter({"Gelu": 500}), ops
    # inputs from 3 up: GELU passes them through almost unchanged, so 500 of them leave something to compare
    _same_outputs(model, [4, 8], levels=(0, 2), low=3.0)


def test_dead_and_identity_chains_removed():
    nodes = [helper.make_node("Relu", ["x"], ["r"])]
    prev = "x"
    for i in range(3000):  # reads x, read by nothing in the end: dead, link by link
        nodes.append(helper.make_node("Neg", [prev], [f"dead{i}"]))
        prev = f"dead{i}"
    prev = "r"
    for i in range(3000):
        nodes.append(helper.make_node("Identity", [prev], [f"id{i}"]))
        prev = f"id{i}"
    nodes.append(helper.make_node("Neg", [prev], ["y"]))
    model = _model(nodes, [], [4], "y")
    ops = _ops(Session(model, opt_level=1))
    assert ops == collections.Counter({"Relu": 1, "Neg": 1}), ops
    x = np.array([1, -1, 2, -2], np.float32)
    np.testing.assert_array_equal(Session(model, opt_level=1).run({"x": x})[0], -np.maximum(x, 0))
