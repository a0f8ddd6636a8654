"""release_weights (what the extension's cached sessions do): a constant whose
every reader packed its own copy is freed after preparation.  Outputs must be
bit-identical to a session that keeps its weights; constants something still
reads as they are (another operator, a graph input, a graph
output, a product of one or two rows by a small weight) must stay; a large
weight keeps only its packed copy whatever the rows; the model can no longer
be saved, and says why."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from oxengine import EngineError, Session, nchwc_block


def model(nodes, inputs, outputs, inits, opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def both(m, feeds):
    """(kept session, released session, their outputs)"""
    keep = Session(m, opt_level=3, release_weights=False)
    rel = Session(m, opt_level=3, release_weights=True)
    return keep, rel, keep.run(feeds), rel.run(feeds)


def assert_identical(a, b):
    for x, y in zip(a, b):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_matmul_gemm_chain_static_rows_is_released():
    rng = np.random.default_rng(1)
    w1 = numpy_helper.from_array(rng.standard_normal((64, 96)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array(rng.standard_normal((40, 96)).astype(np.float32), "w2")
    b2 = numpy_helper.from_array(rng.standard_normal(40).astype(np.float32), "b2")
    m = model([helper.make_node("MatMul", ["x", "w1"], ["h"]),
               helper.make_node("Relu", ["h"], ["r"]),
               helper.make_node("Gemm", ["r", "w2", "b2"], ["y"], transB=1)],
              [f32("x", [8, 64])], [f32("y", [8, 40])], [w1, w2, b2])
    x = {"x": rng.standard_normal((8, 64)).astype(np.float32)}
    keep, rel, a, b = both(m, x)
    assert_identical(a, b)
    assert keep.stat("released_weight_bytes") == 0
    assert rel.stat("released_weight_bytes") == (64 * 96 + 40 * 96) * 4
    # runs again from the packed copies alone
    assert_identical(rel.run(x), a)
    with pytest.raises(EngineError, match="released the data of initializer"):
        rel.save()
    keep.save()


def test_one_row_products_keep_their_weights():
    # a dynamic batch may be one row, which streams the original of a small B
    rng = np.random.default_rng(2)
    w = numpy_helper.from_array(rng.standard_normal((32, 48)).astype(np.float32), "w")
    m = model([helper.make_node("Gemm", ["x", "w"], ["y"])],
              [f32("x", ["N", 32])], [f32("y", ["N", 48])], [w])
    for rows in (1, 2, 5):
        x = {"x": rng.standard_normal((rows, 32)).astype(np.float32)}
        keep, rel, a, b = both(m, x)
        assert_identical(a, b)
        assert rel.stat("released_weight_bytes") == 0


def test_large_weights_keep_only_the_packed_copy():
    # from 512K floats (2 MB) on, one or two rows sum the packed slivers: the
    # session keeps one copy of the weight for every batch size
    rng = np.random.default_rng(5)
    w1 = rng.standard_normal((640, 1024)).astype(np.float32) * 0.05
    b1 = rng.standard_normal(640).astype(np.float32)
    w2 = rng.standard_normal((640, 900)).astype(np.float32) * 0.05
    m = model([helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], transB=1),
               helper.make_node("Relu", ["h"], ["r"]),
               helper.make_node("MatMul", ["r", "w2"], ["y"])],
              [f32("x", ["N", 1024])], [f32("y", ["N", 900])],
              [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
               numpy_helper.from_array(w2, "w2")])
    keep = Session(m, opt_level=3, release_weights=False)
    rel = Session(m, opt_level=3, release_weights=True)
    assert rel.stat("released_weight_bytes") == (640 * 1024 + 640 * 900) * 4
    for rows in (1, 2, 5, 1):
        x = rng.standard_normal((rows, 1024)).astype(np.float32)
        h = np.maximum(x.astype(np.float64) @ w1.T.astype(np.float64) + b1, 0)
        want = h @ w2.astype(np.float64)
        got = rel.run({"x": x})[0]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
        np.testing.assert_allclose(got, keep.run({"x": x})[0], rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_large_weight_of_a_vector_product_stays():
    # A of rank 1 ([K] @ [K, N]) does not fit the packed path: B is kept
    rng = np.random.default_rng(6)
    w = rng.standard_normal((1024, 600)).astype(np.float32)
    m = model([helper.make_node("MatMul", ["x", "w"], ["y"])],
              [f32("x", [1024])], [f32("y", [600])], [numpy_helper.from_array(w, "w")])
    x = {"x": rng.standard_normal(1024).astype(np.float32)}
    keep, rel, a, b = both(m, x)
    assert_identical(a, b)
    assert rel.stat("released_weight_bytes") == 0
    np.testing.assert_allclose(b[0], x["x"].astype(np.float64) @ w, rtol=1e-4, atol=1e-3)


def test_shared_and_overridable_constants_stay():
    rng = np.random.default_rng(3)
    w = rng.standard_normal((16, 16)).astype(np.float32)
    # w read by a MatMul (packs it) and by an Add (reads it as it is)
    m = model([helper.make_node("MatMul", ["x", "w"], ["h"]),
               helper.make_node("Add", ["h", "w"], ["y"])],
              [f32("x", [16, 16])], [f32("y", [16, 16])], [numpy_helper.from_array(w, "w")])
    x = {"x": rng.standard_normal((16, 16)).astype(np.float32)}
    _, rel, a, b = both(m, x)
    assert_identical(a, b)
    assert rel.stat("released_weight_bytes") == 0
    # w also listed as a graph input (a default a runtime may let feeds
    # replace): kept, whatever the session's feeds allow
    m = model([helper.make_node("MatMul", ["x", "w"], ["y"])],
              [f32("x", [16, 16]), f32("w", [16, 16])], [f32("y", [16, 16])],
              [numpy_helper.from_array(w, "w")])
    _, rel, a, b = both(m, x)
    assert_identical(a, b)
    assert rel.stat("released_weight_bytes") == 0


def test_blocked_convolutions_release_all_but_winograd():
    rng = np.random.default_rng(4)
    inits, nodes, c = [], [], 3
    # stem 3x3/2 (blocked, NCHW input), 1x1, depthwise 3x3, 3x3 stride 1 (Winograd: keeps W)
    specs = [("stem", 32, 3, 2, 1), ("pw", 32, 1, 1, 1), ("dw", 32, 3, 1, 32), ("w3", 32, 3, 1, 1)]
    prev = "x"
    for name, m_out, k, stride, group in specs:
        w = rng.standard_normal((m_out, c // group, k, k)).astype(np.float32) * 0.2
        inits.append(numpy_helper.from_array(w, name))
        nodes.append(helper.make_node("Conv", [prev, name], [name + "_y"], kernel_shape=[k, k],
                                      strides=[stride, stride], pads=[k // 2] * 4, group=group))
        nodes.append(helper.make_node("Relu", [name + "_y"], [name + "_r"]))
        prev, c = name + "_r", m_out
    m = model(nodes, [f32("x", [1, 3, 32, 32])], [f32(prev, None)], inits)
    x = {"x": rng.standard_normal((1, 3, 32, 32)).astype(np.float32)}
    keep, rel, a, b = both(m, x)
    assert_identical(a, b)
    released = rel.stat("released_weight_bytes")
    if nchwc_block() == 0:
        assert released == 0
        pytest.skip("no channel-blocked layout on this machine (it needs AVX2 or AVX-512)")
    if nchwc_block() == 8:
        # blocks of 8 run 3x3 stride-1 layers directly: every W is released
        assert released == (32 * 3 * 9 + 32 * 32 + 32 * 9 + 32 * 32 * 9) * 4
        assert rel.stat("weight_bytes") == 0
    else:
        # all but the Winograd layer's weights, which its direct recomputation reads
        assert released == (32 * 3 * 9 + 32 * 32 + 32 * 9) * 4
        assert rel.stat("weight_bytes") == 32 * 32 * 9 * 4
    assert_identical(rel.run(x), a)
