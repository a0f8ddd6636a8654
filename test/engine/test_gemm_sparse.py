"""Products whose input is a ReLU's output, about half zeros, times constant
weights: with AVX-512 the GEMM skips the zeros (src/kernels/cpu/
sgemm_sparse.c) when the weights are finite, and multiplies every entry when
they hold an infinity or NaN (0 * inf is NaN).  Against onnxruntime at
optimization levels 0 and 3, 1 and 2 threads.

test/unit/test_sgemm.c checks the kernel's bits against the micro-kernels';
here whole networks: Gemm layers (bias, fused Relu), MatMul over a 3-D input,
batches above and below a task's 256 rows, and weights with an infinity.

Tolerance: |got - want| <= 1e-4 * |want| + 1e-5 * max|want|."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from oxengine import Session
from test_conv_perf import make_model, ort_run


def check(model, feeds):
    want = ort_run(model, feeds)
    for level in (0, 3):
        for threads in (1, 2):
            got = Session(model, opt_level=level, threads=threads).run(feeds)
            for g, w in zip(got, want):
                what = "level %d, %d thread(s)" % (level, threads)
                np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=what)
                finite = np.isfinite(w)
                np.testing.assert_array_equal(g[~finite], w[~finite], err_msg=what)
                atol = 1e-5 * max(float(np.max(np.abs(w[finite]), initial=0.0)), 1e-30)
                np.testing.assert_allclose(g[finite], w[finite], rtol=1e-4, atol=atol, err_msg=what)


def mlp(sizes, rng, inf_at=None):
    """Gemm (transB) + Relu layers, the last without Relu"""
    nodes, inits = [], []
    prev = "x"
    for i, (k, n) in enumerate(zip(sizes[:-1], sizes[1:])):
        w = (rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32)
        if inf_at is not None and i == 1:
            w[inf_at] = np.inf
        b = (0.1 * rng.standard_normal(n)).astype(np.float32)
        inits += [numpy_helper.from_array(w, "w%d" % i), numpy_helper.from_array(b, "b%d" % i)]
        out = "y" if i == len(sizes) - 2 else "g%d" % i
        nodes.append(helper.make_node("Gemm", [prev, "w%d" % i, "b%d" % i], [out], transB=1))
        if out != "y":
            nodes.append(helper.make_node("Relu", [out], ["r%d" % i]))
            prev = "r%d" % i
    return make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, sizes[0]])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, sizes[-1]])], inits)


@pytest.mark.parametrize("batch", [8, 64, 300])
def test_mlp_relu_layers(batch):
    rng = np.random.default_rng(batch)
    model = mlp([784, 512, 512, 10], rng)
    check(model, {"x": rng.standard_normal((batch, 784)).astype(np.float32)})


def test_deep_layer_with_a_tail():
    """K = 1000 (four K blocks), 700 columns (five groups of four slivers, then two, the last partly empty)"""
    rng = np.random.default_rng(3)
    model = mlp([300, 1000, 700, 5], rng)
    check(model, {"x": rng.standard_normal((40, 300)).astype(np.float32)})


def test_infinite_weight_multiplies_the_zeros():
    """an infinity in the second layer's weights: the rows with a zero there give NaN, as onnxruntime's"""
    rng = np.random.default_rng(4)
    model = mlp([64, 256, 256, 3], rng, inf_at=(17, 5))
    x = rng.standard_normal((32, 64)).astype(np.float32)
    want = ort_run(model, {"x": x})[0]
    assert np.isnan(want).any() and not np.isnan(want).all()
    check(model, {"x": x})


def test_matmul_over_3d_relu_input():
    rng = np.random.default_rng(5)
    w = (rng.standard_normal((256, 384)) / 16).astype(np.float32)
    model = make_model(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("MatMul", ["r", "w"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 32, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 32, 384])],
        [numpy_helper.from_array(w, "w")])
    x = rng.standard_normal((4, 32, 256)).astype(np.float32)
    x[:, :, ::7] = np.nan
    check(model, {"x": x})
