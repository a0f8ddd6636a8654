"""Float MaxPool's vector path (src/kernels/cpu/pool.c, max_pool_f32_avx512:
2-D and 1-D planes, row stride 1 or 2, no Indices) against a direct numpy
reference with the row loops' semantics: the max over the taps inside the
input, starting from -FLT_MAX, a NaN never replacing the running max.  Max is
exact, so the comparison is exact.  On machines without AVX-512 the same
cases check the row loops.

Shapes cover row widths below, at and past one vector (1, 7, 15, 16, 17,
33, 112), both strides, asymmetric pads, dilation, ceil_mode, a kernel wider
than the row, a kernel larger than the padded input (one window with
ceil_mode, an empty output without), 1-D, and batch x channels > 1, at 1 and
2 threads.  The pools on maps smaller than their kernel are also compared
with onnxruntime, AveragePool (both count_include_pad) and LpPool too."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from oxengine import Session

LOWEST = np.float32(-np.finfo(np.float32).max)


def pool_model(shape, kernel, strides, pads, dilations, ceil_mode):
    nsp = len(kernel)
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=list(kernel), strides=list(strides),
                            pads=list(pads), dilations=list(dilations), ceil_mode=ceil_mode)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 12)])
    assert nsp in (1, 2)
    return m


def out_size(n, k, s, pb, pe, d, ceil_mode):
    span = n + pb + pe - ((k - 1) * d + 1)
    o = (span + (s - 1 if ceil_mode else 0)) // s + 1
    # a last window that starts in the end padding is dropped (ONNX, like PyTorch)
    if ceil_mode and (o - 1) * s >= n + pb:
        o -= 1
    return o


def reference(x, kernel, strides, pads, dilations, ceil_mode):
    nsp = len(kernel)
    spatial = x.shape[2:]
    outs = [out_size(spatial[i], kernel[i], strides[i], pads[i], pads[nsp + i], dilations[i], ceil_mode)
            for i in range(nsp)]
    y = np.full(x.shape[:2] + tuple(outs), LOWEST, np.float32)
    for o in np.ndindex(*outs):
        for k in np.ndindex(*kernel):
            pos = [o[i] * strides[i] - pads[i] + k[i] * dilations[i] for i in range(nsp)]
            if all(0 <= pos[i] < spatial[i] for i in range(nsp)):
                v = x[(slice(None), slice(None)) + tuple(pos)]
                cur = y[(slice(None), slice(None)) + o]
                y[(slice(None), slice(None)) + o] = np.where(v > cur, v, cur)
    return y


CASES = [
    # name, shape, kernel, strides, pads (begin..., end...), dilations, ceil_mode
    ("resnet stem", (1, 4, 112, 112), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 0),
    ("s1 same 7x7", (2, 3, 7, 7), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 0),
    ("s1 no pad 17", (1, 2, 9, 17), (2, 2), (1, 1), (0, 0, 0, 0), (1, 1), 0),
    ("s2 16 wide", (1, 2, 8, 32), (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), 0),
    ("s2 33 ceil", (1, 3, 11, 33), (3, 3), (2, 2), (0, 0, 0, 0), (1, 1), 1),
    ("s2 asym pads", (1, 2, 10, 15), (3, 3), (2, 2), (1, 0, 0, 2), (1, 1), 0),
    ("s1 dilated", (1, 2, 12, 16), (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), 0),
    ("s2 dilated ceil", (2, 2, 13, 21), (3, 2), (2, 2), (1, 1, 1, 0), (2, 3), 1),
    ("width 1", (1, 2, 5, 1), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 0),
    ("kernel wider than row", (1, 1, 4, 3), (2, 5), (1, 1), (0, 2, 0, 2), (1, 1), 0),
    ("5x5 s1 pad 2 x 40", (1, 2, 6, 40), (5, 5), (1, 1), (2, 2, 2, 2), (1, 1), 0),
    ("vertical stride 3", (1, 2, 14, 18), (3, 3), (3, 1), (1, 1, 1, 1), (1, 1), 0),
    ("1-D s2", (2, 3, 50), (3,), (2,), (1, 1), (1,), 0),
    ("1-D s1 wide", (1, 2, 70), (4,), (1,), (2, 1), (1,), 0),
    # a map smaller than the kernel (a network made for larger inputs): with
    # ceil_mode one window over all of it, without none (an empty output)
    ("kernel past the input ceil", (1, 2, 2, 5), (3, 3), (2, 2), (0, 0, 0, 0), (1, 1), 1),
    ("1x1 map 3x3/2 ceil", (1, 3, 1, 1), (3, 3), (2, 2), (0, 0, 0, 0), (1, 1), 1),
    ("kernel past pads ceil", (1, 2, 2, 3), (4, 4), (3, 3), (1, 0, 0, 1), (1, 1), 1),
    ("no window", (1, 2, 2, 6), (3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 0),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_max_pool_vector_path(case, threads):
    name, shape, kernel, strides, pads, dil, ceil_mode = case
    model = pool_model(shape, kernel, strides, pads, dil, ceil_mode)
    x = np.random.default_rng(len(name)).standard_normal(shape).astype(np.float32)
    want = reference(x, kernel, strides, pads, dil, ceil_mode)
    got = Session(model, threads=threads).run({"x": x})[0]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_max_pool_nan_and_negative_values():
    """NaN never replaces a running max; windows of large negative values
    are not confused with the padding."""
    case = CASES[0]
    _, shape, kernel, strides, pads, dil, ceil_mode = case
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32) - 1e30
    x[0, 0, 0, :5] = np.nan
    x[0, 1, :3, :3] = np.nan
    x[0, 2, 5, 5] = np.inf
    x[0, 3, 7, :] = -np.inf
    want = reference(x, kernel, strides, pads, dil, ceil_mode)
    got = Session(pool_model(shape, kernel, strides, pads, dil, ceil_mode)).run({"x": x})[0]
    np.testing.assert_array_equal(got, want)


SMALL_MAPS = [
    # op, attributes, input shape: kernels larger than the (padded) input.  Where
    # the kernel passes the padded input by a stride or more, onnxruntime's
    # kernel counts a window where ONNX's shape inference counts none, and
    # divides by zero (SIGFPE): no such case here
    ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1), (1, 3, 2, 2)),
    ("MaxPool", dict(kernel_shape=[4], strides=[3], pads=[1, 0], ceil_mode=1), (2, 2, 2)),
    ("AveragePool", dict(kernel_shape=[4], strides=[3], pads=[1, 0], ceil_mode=1, count_include_pad=1), (2, 2, 2)),
    ("AveragePool", dict(kernel_shape=[4], strides=[3], pads=[1, 0], ceil_mode=1, count_include_pad=0), (2, 2, 2)),
    ("AveragePool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1], ceil_mode=1, count_include_pad=1),
     (1, 16, 1, 1)),
    ("AveragePool", dict(kernel_shape=[5, 5], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1), (1, 16, 3, 4)),
    ("MaxPool", dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1), (1, 16, 1, 3)),
    ("MaxPool", dict(kernel_shape=[3, 3], strides=[1, 1]), (1, 2, 2, 5)),
    ("AveragePool", dict(kernel_shape=[2, 2], strides=[1, 1]), (1, 2, 1, 1)),
    ("LpPool", dict(kernel_shape=[3, 3], strides=[1, 1], p=2), (1, 2, 2, 2)),
]


@pytest.mark.parametrize("after_conv", [False, True])
@pytest.mark.parametrize("case", SMALL_MAPS, ids=["%s %s %s" % (c[0], c[2], sorted(c[1].items())) for c in SMALL_MAPS])
def test_pools_on_maps_smaller_than_the_kernel(case, after_conv):
    """One window with ceil_mode, an empty output without, as onnxruntime;
    after a convolution of 16 channels the pool runs blocked (NCHWc)"""
    op, attrs, shape = case
    if after_conv and (len(shape) != 4 or shape[1] != 16):
        pytest.skip("the blocked pools are 2-D, after a convolution of whole blocks")
    nodes = [helper.make_node(op, ["h" if after_conv else "x"], ["y"], **attrs)]
    inits = []
    if after_conv:
        w = np.random.default_rng(4).standard_normal((16, 16, 1, 1)).astype(np.float32) / 4
        inits.append(onnx.numpy_helper.from_array(w, "w"))
        nodes.insert(0, helper.make_node("Conv", ["x", "w"], ["h"]))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    for threads in (1, 2):
        got = Session(model, threads=threads).run({"x": x})[0]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
