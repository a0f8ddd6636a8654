"""The shape memo (src/runtime/memo.c): a run skips the nodes that compute
shapes (Shape and Size, and every node fed only by them and by constants)
when the shapes they start from are those they saw before.

Every test runs the same inputs through a session with the memo and one
without (Session(shape_memo=False)) and asks for the same bits, and where
onnxruntime runs the model, for its outputs within the fixtures' tolerance.
The skip counts (the session's "memo_skips") show that the memo engaged, and
where it must not have: a shape that changed, data that decides a shape, a
run that failed half way, outputs too large to hold, random nodes.
"""
import os
import sys

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from oxengine import EngineError, Session

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models", "networks"))
import netinputs as ni  # noqa: E402


def make_model(nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, "memo", inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m.SerializeToString()


def const(name, values, dtype=np.int64):
    return numpy_helper.from_array(np.asarray(values, dtype=dtype), name)


def both(data, **kw):
    """(session with the memo, session without)"""
    return Session(data, shape_memo=True, **kw), Session(data, shape_memo=False, **kw)


def run_both(with_memo, without, feeds):
    got = with_memo.run(feeds)
    want = without.run(feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        assert np.array_equal(g, w, equal_nan=True), "the memo changed an output"
    return got


def skips(sess):
    return sess.stat("memo_skips")


# x [N, C] -> Shape -> Gather 1 -> Unsqueeze -> Concat([-1], .) -> Reshape(x): y [N * C / C', C']
# where C' is x's second dimension, i.e. y = x; plus Size(x) as the second output's length
def reshape_by_shape_model():
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "one"], ["c"], axis=0),
        helper.make_node("Unsqueeze", ["c", "zero"], ["c1"]),
        helper.make_node("Concat", ["minus_one", "c1"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
        helper.make_node("Size", ["x"], ["n"]),
        helper.make_node("Unsqueeze", ["n", "zero"], ["n1"]),
        helper.make_node("ConstantOfShape", ["n1"], ["ones"],
                         value=numpy_helper.from_array(np.array([1.0], np.float32))),
        helper.make_node("Mul", ["ones", "two"], ["z"]),
    ]
    inits = [const("one", 1), const("zero", [0]), const("minus_one", [-1]),
             const("two", [2.0], np.float32)]
    return make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "C"])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                       helper.make_tensor_value_info("z", TensorProto.FLOAT, None)], inits)


@pytest.mark.parametrize("level", [0, 1, 3])
def test_skips_exactly_the_shape_nodes_when_shapes_repeat(level):
    data = reshape_by_shape_model()
    memo, plain = both(data, opt_level=level)
    rng = np.random.default_rng(0)
    # Shape, Gather, Unsqueeze, Concat, Size, Unsqueeze, ConstantOfShape: 7 memo nodes
    # (Reshape reads x's data, and Mul's output z is the graph's: they run every time)
    memo_nodes = 7
    previous = None
    for shape in [(3, 4), (3, 4), (3, 4), (5, 4), (5, 4), (3, 7), (3, 4), (3, 4)]:
        x = rng.standard_normal(shape).astype(np.float32)
        before = skips(memo)
        y, z = run_both(memo, plain, {"x": x})
        assert np.array_equal(y, x)
        assert np.array_equal(z, np.full(x.size, 2.0, np.float32))
        # the shape of the run before: all 7 skipped; another: none (each depends on it)
        assert skips(memo) - before == (memo_nodes if shape == previous else 0), shape
        previous = shape
    assert skips(plain) == 0


def test_one_input_changing_recomputes_only_what_follows_from_it():
    """Two inputs, each with its own shape chain: a change of b's shape
    recomputes b's chain and the node that joins the two, not a's chain."""
    nodes = [
        helper.make_node("Shape", ["a"], ["sa"]),
        helper.make_node("Gather", ["sa", "zero"], ["na"], axis=0),  # a's N, a scalar
        helper.make_node("Shape", ["b"], ["sb"]),
        helper.make_node("ReduceProd", ["sb"], ["nb"], keepdims=0),  # b's size
        helper.make_node("Add", ["na", "nb"], ["total"]),
        helper.make_node("Unsqueeze", ["total", "zero1"], ["total1"]),
        helper.make_node("ConstantOfShape", ["total1"], ["y"],
                         value=numpy_helper.from_array(np.array([3], np.int64))),
    ]
    data = make_model(nodes, [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["N", 2]),
                              helper.make_tensor_value_info("b", TensorProto.FLOAT, ["M", "K"])],
                      [helper.make_tensor_value_info("y", TensorProto.INT64, None)],
                      [const("zero", 0), const("zero1", [0])])
    memo, plain = both(data)
    feeds = {"a": np.zeros((4, 2), np.float32), "b": np.zeros((2, 3), np.float32)}
    assert run_both(memo, plain, feeds)[0].shape == (10,)
    before = skips(memo)
    run_both(memo, plain, feeds)
    assert skips(memo) - before == 6  # all but y, a graph output
    before = skips(memo)
    feeds["b"] = np.zeros((5, 3), np.float32)
    assert run_both(memo, plain, feeds)[0].shape == (19,)
    assert skips(memo) - before == 2  # a's Shape and Gather
    before = skips(memo)
    feeds["a"] = np.zeros((1, 2), np.float32)
    assert run_both(memo, plain, feeds)[0].shape == (16,)
    assert skips(memo) - before == 2  # b's Shape and ReduceProd


def test_a_shape_decided_by_data_is_recomputed():
    """NonZero's output shape depends on x's values, not its shape: the
    Shape node after it sees a new dimension and everything after it runs."""
    nodes = [
        helper.make_node("NonZero", ["x"], ["nz"]),
        helper.make_node("Shape", ["nz"], ["s"]),
        helper.make_node("Gather", ["s", "one"], ["count"], axis=0),
        helper.make_node("Unsqueeze", ["count", "zero"], ["count1"]),
        helper.make_node("Expand", ["x_sum", "count1"], ["y"]),
        helper.make_node("ReduceSum", ["x"], ["x_sum"], keepdims=0),
    ]
    # the ReduceSum last in the file: the sort puts it before its consumer
    data = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                      [const("one", 1), const("zero", [0])])
    memo, plain = both(data)
    ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    for x in ([1, 0, 2, 0, 0, 3], [1, 0, 2, 0, 0, 3], [0, 0, 0, 0, 0, 5], [4, 4, 4, 4, 4, 4],
              [4, 4, 4, 4, 4, 4], [0, 0, 0, 0, 0, 0], [1, 0, 2, 0, 0, 3]):
        feeds = {"x": np.array(x, np.float32)}
        got = run_both(memo, plain, feeds)[0]
        want = ref.run(None, feeds)[0]
        assert got.shape == (np.count_nonzero(x),) and np.array_equal(got, want)


def test_a_failed_run_leaves_nothing_stale():
    """Shape(x) computes again in the run that then fails at the Gather of
    data; the nodes after the failure did not run.  The next run, with x of
    the same new shape, must not take their outputs from before."""
    nodes = [
        helper.make_node("Shape", ["x"], ["sx"]),
        helper.make_node("Gather", ["table", "idx"], ["g"], axis=0),
        helper.make_node("Shape", ["g"], ["sg"]),
        helper.make_node("Concat", ["sx", "sg"], ["target"], axis=0),
        helper.make_node("ConstantOfShape", ["target"], ["y"],
                         value=numpy_helper.from_array(np.array([7.0], np.float32))),
    ]
    data = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["A", "B"]),
                              helper.make_tensor_value_info("idx", TensorProto.INT64, [1])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                      [const("table", np.arange(6, dtype=np.float32).reshape(3, 2), np.float32)])
    for level in (0, 3):
        memo, plain = both(data, opt_level=level)
        good = np.array([1], np.int64)
        bad = np.array([9], np.int64)
        assert run_both(memo, plain, {"x": np.zeros((2, 3), np.float32), "idx": good})[0].shape == (2, 3, 1, 2)
        run_both(memo, plain, {"x": np.zeros((2, 3), np.float32), "idx": good})
        for sess in (memo, plain):
            with pytest.raises(EngineError):
                sess.run({"x": np.zeros((4, 5), np.float32), "idx": bad})
        y = run_both(memo, plain, {"x": np.zeros((4, 5), np.float32), "idx": good})[0]
        assert y.shape == (4, 5, 1, 2)
        assert np.all(y == 7.0)


def test_outputs_too_large_to_hold_run_every_time():
    """A ConstantOfShape of [N, 200, 200] floats (160 KB at N = 1) is past
    the 64 KB a held output may take: it runs at every run, the Shape before
    it is still skipped."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "zero1"], ["n1"]),
        helper.make_node("Concat", ["n1", "side"], ["target"], axis=0),
        helper.make_node("ConstantOfShape", ["target"], ["big"],
                         value=numpy_helper.from_array(np.array([0.5], np.float32))),
        helper.make_node("ReduceSum", ["big", "axes"], ["y"], keepdims=0),
    ]
    data = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                      [const("zero", 0), const("zero1", [0]), const("side", [200, 200]),
                       const("axes", [1, 2])])
    memo, plain = both(data)
    for n in (1, 1, 2, 2, 1):
        y = run_both(memo, plain, {"x": np.zeros((n, 3), np.float32)})[0]
        assert np.array_equal(y, np.full(n, 20000.0, np.float32))
    before = skips(memo)
    run_both(memo, plain, {"x": np.zeros((1, 3), np.float32)})
    # Shape, Gather, Unsqueeze, Concat skipped; ConstantOfShape and ReduceSum not
    assert skips(memo) - before == 4


def test_random_nodes_are_never_skipped():
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("RandomUniformLike", ["x"], ["r"]),
        helper.make_node("Add", ["x", "r"], ["y"]),
        helper.make_node("Cast", ["s"], ["sf"], to=TensorProto.FLOAT),
        helper.make_node("RandomNormal", [], ["rn"], shape=[2]),
        helper.make_node("Add", ["sf", "rn"], ["z"]),
    ]
    data = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                       helper.make_tensor_value_info("z", TensorProto.FLOAT, None)])
    for level in (0, 3):
        sess = Session(data, opt_level=level)
        x = np.zeros(2, np.float32)
        runs = [sess.run({"x": x}) for _ in range(4)]
        for i in range(1, 4):
            assert not np.array_equal(runs[0][0], runs[i][0])
            assert not np.array_equal(runs[0][1], runs[i][1])


def test_a_shape_that_is_a_graph_output_is_always_current():
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Identity", ["s"], ["t"])]
    data = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "C"])],
                      [helper.make_tensor_value_info("s", TensorProto.INT64, None),
                       helper.make_tensor_value_info("t", TensorProto.INT64, None)])
    for level in (0, 3):
        memo, plain = both(data, opt_level=level)
        for shape in [(2, 3), (2, 3), (4, 1), (4, 1), (2, 3)]:
            s, t = run_both(memo, plain, {"x": np.zeros(shape, np.float32)})
            assert list(s) == list(shape) and list(t) == list(shape)


def network_feeds(name, n, s):
    saved = dict(ni.TEST_DIMS)
    try:
        ni.TEST_DIMS.update({"N": n, "S": s, "T": s})
        return ni.inputs(name)
    finally:
        ni.TEST_DIMS.clear()
        ni.TEST_DIMS.update(saved)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", ["bert_encoder", "transformer_encoder", "lstm_tagger", "gru_regressor"])
def test_networks_over_changing_shapes(name, threads):
    """The committed PyTorch exports, whose shape subgraphs the memo skips,
    over a sequence of batch and sequence lengths that repeat and change:
    the same bits as without the memo, onnxruntime's outputs within the
    fixtures' tolerance."""
    path = ni.path_of(name)
    with open(path, "rb") as f:
        data = f.read()
    memo, plain = both(data, threads=threads)
    ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    for n, s in [(3, 10), (3, 10), (1, 10), (1, 7), (1, 7), (3, 10), (2, 12), (2, 12), (1, 7)]:
        feeds = network_feeds(name, n, s)
        got = run_both(memo, plain, feeds)
        for g, w in zip(got, ref.run(None, feeds)):
            assert ni.compare(g, w, name)[2], ni.describe_failure(g, w, name)
    assert skips(memo) > 0
    assert skips(plain) == 0
