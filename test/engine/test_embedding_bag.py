"""Embedding bags (issue 4): Gather of table rows then ReduceSum or
ReduceMean over the indices' last axis becomes onnx_pg.fused GatherReduce
(src/model/passes/fuse_gather_reduce.c, src/kernels/cpu/tensor_gather.c).

Every model is checked against onnxruntime at every optimization level and
at 1 and 2 threads, and the portable optimized graph (no private operator)
is saved and run in onnxruntime.  Where the pattern is not exactly a bag
(another axis, Gather on axis 1, a double table, a reduction over every
axis) the nodes stay.  Bad indices fail as Gather's do.

Tolerances: rtol 1e-5, atol 1e-6 x the output's largest magnitude (sums of
up to a few dozen rows, in index order).
"""
import collections

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from oxengine import EngineError, Session


def ort_run(model, feeds):
    return ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)


def ops_of(session):
    return collections.Counter(op for _, op, _ in session.placement())


def assert_close(got, want, what):
    for g, w in zip(got, want):
        assert g.shape == w.shape, f"{what}: shape {g.shape}, expected {w.shape}"
        finite = np.isfinite(w)
        scale = float(np.abs(w[finite]).max()) if finite.any() else 1.0
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6 * max(scale, 1e-30), err_msg=what)


def bag(reduce="ReduceMean", opset=17, idx_shape=(4, 7), idx_type=TensorProto.INT64, axes=None, keepdims=None,
        table_dtype=np.float32, table_input=False, gather_axis=0, vocab=50, width=24):
    rng = np.random.default_rng(3)
    table = rng.standard_normal((vocab, width)).astype(table_dtype)
    axes = [len(idx_shape) - 1] if axes is None else axes
    kw = {} if keepdims is None else {"keepdims": keepdims}
    inits = [] if table_input else [numpy_helper.from_array(table, "t")]
    red_in = ["g"]
    if axes != "none":
        if (reduce == "ReduceSum" and opset >= 13) or opset >= 18:
            inits.append(numpy_helper.from_array(np.array(axes, np.int64), "axes"))
            red_in.append("axes")
        else:
            kw["axes"] = axes
    nodes = [helper.make_node("Gather", ["t", "i"], ["g"], axis=gather_axis),
             helper.make_node(reduce, red_in, ["y"], **kw)]
    tt = TensorProto.FLOAT if table_dtype == np.float32 else TensorProto.DOUBLE
    ins = [helper.make_tensor_value_info("i", idx_type, list(idx_shape))]
    if table_input:
        ins.append(helper.make_tensor_value_info("t", tt, [vocab, width]))
    g = helper.make_graph(nodes, "g", ins, [helper.make_tensor_value_info("y", tt, None)], initializer=inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8).SerializeToString()
    np_idx = np.int64 if idx_type == TensorProto.INT64 else np.int32
    feeds = {"i": rng.integers(-vocab, vocab, idx_shape).astype(np_idx)}
    if table_input:
        feeds["t"] = table
    return model, feeds


def check(model, feeds, fused):
    want = ort_run(model, feeds)
    for level in (0, 1, 2, 3):
        for threads in (1, 2):
            s = Session(model, opt_level=level, threads=threads)
            assert_close(s.run(feeds), want, f"level {level}, {threads} threads")
            assert ops_of(s)["GatherReduce"] == (fused if level >= 2 else 0), ops_of(s)
    portable = Session(model, opt_level=3, portable=True)
    assert ops_of(portable)["GatherReduce"] == 0
    assert_close(ort_run(portable.save(), feeds), want, "portable saved model in onnxruntime")


@pytest.mark.parametrize("reduce", ["ReduceMean", "ReduceSum"])
@pytest.mark.parametrize("opset", [11, 13, 18])
@pytest.mark.parametrize("keepdims", [None, 0, 1])
def test_bags(reduce, opset, keepdims):
    check(*bag(reduce, opset, keepdims=keepdims), fused=1)


@pytest.mark.parametrize("idx_shape,axes", [((9,), [0]), ((2, 3, 5), [2]), ((3, 6), [-2]), ((300, 20), [1])])
def test_bag_shapes(idx_shape, axes):
    check(*bag(idx_shape=idx_shape, axes=axes, idx_type=TensorProto.INT32), fused=1)


def test_table_as_an_input_and_empty_bags():
    check(*bag(table_input=True), fused=1)
    for reduce in ("ReduceMean", "ReduceSum"):
        model, feeds = bag(reduce, idx_shape=(3, 0))
        want = np.full((3, 1, 24), np.nan if reduce == "ReduceMean" else 0.0, np.float32)  # keepdims 1
        for level in (0, 2):
            assert_close(Session(model, opt_level=level).run(feeds), [want], f"{reduce} of empty bags, level {level}")


@pytest.mark.parametrize("case", ["other_axis", "gather_axis_1", "double", "every_axis", "two_axes"])
def test_not_a_bag_stays(case):
    kw = {"other_axis": dict(axes=[0]), "gather_axis_1": dict(gather_axis=1, vocab=24, width=50),
          "double": dict(table_dtype=np.float64), "every_axis": dict(reduce="ReduceSum", opset=13, axes="none"),
          "two_axes": dict(idx_shape=(2, 3, 4), axes=[1, 2])}[case]
    check(*bag(**kw), fused=0)


def test_bad_indices_fail_as_gather_does():
    model, feeds = bag()
    feeds["i"][1, 2] = 50
    for level in (0, 2):
        with pytest.raises(EngineError, match="index 50 is out of range"):
            Session(model, opt_level=level).run(feeds)
    feeds["i"][1, 2] = -51
    with pytest.raises(EngineError, match="index -51 is out of range"):
        Session(model, opt_level=2).run(feeds)
