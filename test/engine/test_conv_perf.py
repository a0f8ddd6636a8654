"""The fast convolution paths (src/kernels/cpu/conv_gemm.c, conv_pixels.c,
conv_depthwise.c, conv_winograd.c) and the Conv + Add fusion
(fuse_conv_add.c) against onnxruntime, at every optimization level and at 1
and 2 threads.

Which path runs: depthwise for one input channel per group; Winograd
F(4x4, 3x3) for 3x3 stride 1 with >= 16 channels in and out on planes of
>= 400 pixels, F(2x2, 3x3) on planes of 7 to 28 output columns and >= 8
rows below that; rows of a GEMM (X W^T) for a 1x1 kernel over a 1x1 plane, unpadded;
the pixel-broadcast path for other ungrouped convolutions with at most 64
output pixels and >= 16 output channels; the GEMM path otherwise.

Shapes cover what the paths special-case: 1x1 (plain row copies), strided
1x1, 3x3 stride 1 (Winograd where it applies) and stride 2, the 7x7 stem,
dilations, asymmetric pads, odd sizes, output-channel counts that are not a
multiple of the 8-row tile, reductions longer than one block (and the
pixel paths' prefetched weight slices: full, short last, exactly one), groups,
depthwise with and without a channel multiplier, 1-D and 3-D, batch > 1,
every fused activation, residual inputs, and weights that are not constants
(packed per run).

Tolerance: |got - want| <= 1e-4 * |want| + 1e-5 * max|want| (the magnitude
term because sums of hundreds of terms cancel to values near zero whose
relative error says nothing)."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from oxengine import Session

RTOL = 1e-4
ATOL_REL = 1e-5


def make_model(nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def ort_run(model, feeds):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def assert_close(got, want, what):
    atol = ATOL_REL * max(float(np.max(np.abs(want), initial=0.0)), 1e-30)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=atol, err_msg=what)


def check(model, feeds, levels=(0, 1, 2, 3), threads=(1, 2)):
    """onnx_pg gives onnxruntime's answer at every level and thread count."""
    want = ort_run(model, feeds)
    for level in levels:
        for t in threads:
            got = Session(model, opt_level=level, threads=t).run(feeds)
            for g, w in zip(got, want):
                assert g.shape == w.shape
                assert_close(g, w, f"opt level {level}, {t} threads")


ACTS = {
    None: lambda i, o: [],
    "Relu": lambda i, o: [helper.make_node("Relu", [i], [o])],
    "Clip": lambda i, o: [helper.make_node("Clip", [i, "lo", "hi"], [o])],
    "LeakyRelu": lambda i, o: [helper.make_node("LeakyRelu", [i], [o], alpha=0.1)],
    "HardSigmoid": lambda i, o: [helper.make_node("HardSigmoid", [i], [o], alpha=0.3, beta=0.4)],
    "Sigmoid": lambda i, o: [helper.make_node("Sigmoid", [i], [o])],
    "Tanh": lambda i, o: [helper.make_node("Tanh", [i], [o])],
}


def conv_model(n, c, spatial, m, kernel, strides=None, pads=None, dilations=None, group=1, bias=True,
               act=None, seed=0, const_weights=True, auto_pad=None):
    rng = np.random.default_rng(seed)
    nsp = len(spatial)
    kernel = [kernel] * nsp if isinstance(kernel, int) else list(kernel)
    wshape = [m, c // group] + kernel
    fan_in = (c // group) * int(np.prod(kernel))
    w = (rng.standard_normal(wshape) / np.sqrt(fan_in)).astype(np.float32)
    b = rng.standard_normal(m).astype(np.float32)
    attrs = {"group": group}
    if strides:
        attrs["strides"] = [strides] * nsp if isinstance(strides, int) else strides
    if pads is not None:
        attrs["pads"] = [pads] * (2 * nsp) if isinstance(pads, int) else pads
    if dilations:
        attrs["dilations"] = [dilations] * nsp if isinstance(dilations, int) else dilations
    if auto_pad:
        attrs["auto_pad"] = auto_pad
    inits = [numpy_helper.from_array(np.array(0, np.float32), "lo"),
             numpy_helper.from_array(np.array(6, np.float32), "hi")]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", c] + list(spatial))]
    feeds = {"x": rng.standard_normal([n, c] + list(spatial)).astype(np.float32)}
    if const_weights:
        inits.append(numpy_helper.from_array(w, "w"))
    else:
        inputs.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, wshape))
        feeds["w"] = w
    conv_in = ["x", "w"]
    if bias:
        inits.append(numpy_helper.from_array(b, "b"))
        conv_in.append("b")
    nodes = [helper.make_node("Conv", conv_in, ["c" if act else "y"], **attrs)] + ACTS[act]("c", "y")
    model = make_model(nodes, inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return model, feeds


# (name, n, c, spatial, m, kernel, strides, pads, dilations, group)
SHAPES = [
    ("1x1", 1, 32, (14, 14), 64, 1, None, None, None, 1),
    ("1x1 wide", 1, 16, (56, 56), 24, 1, None, None, None, 1),
    ("1x1 s2", 2, 24, (15, 15), 40, 1, 2, None, None, 1),
    ("1x1 long k", 1, 700, (7, 7), 20, 1, None, None, None, 1),
    ("3x3 s1", 1, 16, (20, 20), 16, 3, None, 1, None, 1),
    ("3x3 s1 big", 1, 64, (28, 28), 64, 3, None, 1, None, 1),
    ("3x3 s1 odd", 2, 5, (13, 11), 13, 3, None, 1, None, 1),
    ("3x3 s1 nopad", 1, 8, (9, 17), 24, 3, None, 0, None, 1),
    ("3x3 s1 7x7", 1, 48, (7, 7), 32, 3, None, 1, None, 1),
    ("3x3 s1 long k", 1, 40, (10, 10), 8, 3, None, 1, None, 1),
    ("3x3 s2", 1, 16, (28, 28), 32, 3, 2, 1, None, 1),
    ("3x3 s2 odd", 3, 3, (15, 9), 10, 3, 2, 1, None, 1),
    ("3x3 asym pads", 1, 8, (12, 10), 16, 3, None, [0, 1, 2, 1], None, 1),
    ("3x3 dilated", 1, 8, (16, 16), 16, 3, None, 2, 2, 1),
    ("7x7 s2 stem", 1, 3, (64, 64), 16, 7, 2, 3, None, 1),
    ("5x5 s3", 1, 4, (20, 23), 9, 5, 3, 2, None, 1),
    ("rect kernel", 1, 6, (10, 12), 7, (1, 5), None, [0, 2, 0, 2], None, 1),
    ("groups", 2, 8, (10, 10), 16, 3, None, 1, None, 2),
    ("groups 4", 1, 16, (9, 9), 12, 3, 2, 1, None, 4),
    ("depthwise 3x3", 1, 32, (28, 28), 32, 3, None, 1, None, 32),
    ("depthwise 3x3 s2", 2, 24, (29, 31), 24, 3, 2, 1, None, 24),
    ("depthwise 5x5", 1, 16, (14, 14), 16, 5, None, 2, None, 16),
    ("depthwise 5x5 s2", 1, 16, (15, 15), 16, 5, 2, 2, None, 16),
    ("depthwise mult 2", 1, 8, (11, 13), 16, 3, None, 1, None, 8),
    ("depthwise dilated", 1, 8, (12, 12), 8, 3, None, 2, 2, 8),
    ("depthwise s3", 1, 8, (20, 20), 8, 3, 3, 1, None, 8),
    ("depthwise 7x7 plane", 1, 40, (7, 7), 40, 3, None, 1, None, 40),
    ("depthwise 1x1 plane", 1, 8, (1, 1), 8, 3, None, 1, None, 8),
    ("1-D", 2, 6, (50,), 10, 5, 2, 2, None, 1),
    ("1-D depthwise", 1, 6, (33,), 6, 3, None, 1, None, 6),
    ("depthwise stride 70", 1, 4, (300,), 4, 3, 70, 1, None, 4),
    ("3-D", 1, 4, (6, 7, 8), 8, 3, None, 1, None, 1),
    ("3-D depthwise", 1, 4, (5, 6, 7), 4, 3, 2, 1, None, 4),
    ("batch 4", 4, 16, (14, 14), 32, 3, None, 1, None, 1),
    # Winograd F(4x4, 3x3): >= 16 channels in and out, planes of >= 100
    ("wino odd", 1, 16, (23, 21), 24, 3, None, 1, None, 1),
    ("wino m tail", 2, 24, (20, 22), 20, 3, None, 1, None, 1),
    ("wino long k", 1, 300, (20, 20), 16, 3, None, 1, None, 1),
    ("wino no pad", 1, 16, (22, 24), 16, 3, None, 0, None, 1),
    ("wino pad 2", 1, 16, (20, 20), 16, 3, None, 2, None, 1),
    ("wino asym pads", 1, 16, (21, 25), 16, 3, None, [1, 0, 2, 1], None, 1),
    ("wino many blocks", 3, 32, (40, 36), 48, 3, None, 1, None, 1),
    ("wino wide", 1, 16, (9, 130), 16, 3, None, 1, None, 1),
    # Winograd F(2x2, 3x3): 7 to 28 output columns, >= 8 rows, below 400 pixels
    ("wino2 14x14", 1, 64, (14, 14), 64, 3, None, 1, None, 1),
    ("wino2 odd", 2, 16, (13, 15), 20, 3, None, 1, None, 1),
    ("wino2 9x9", 1, 24, (9, 9), 16, 3, None, 1, None, 1),
    ("wino2 no pad", 3, 16, (12, 18), 40, 3, None, 0, None, 1),
    ("wino2 asym pads", 1, 32, (10, 13), 24, 3, None, [2, 0, 1, 1], None, 1),
    ("wino2 long k", 1, 300, (14, 12), 50, 3, None, 1, None, 1),
    ("1x1 output", 2, 16, (3, 3), 24, 3, None, 0, None, 1),
    # stride 2 rows gathered sixteen at a time: full vectors, every tail length, the tensor's last row
    ("s2 wide rows", 1, 5, (6, 75), 8, 3, 2, 1, None, 1),
    ("s2 1x1 tensor end", 1, 3, (5, 67), 8, 1, 2, 0, None, 1),
    ("s2 30 cols", 2, 4, (4, 62), 8, 3, 2, 0, None, 1),
    ("s2 31 cols asym", 1, 4, (3, 63), 8, 3, 2, [0, 1, 0, 0], None, 1),
    ("s2 pixels path", 1, 16, (13, 13), 32, 3, 2, 1, None, 1),
    # weight slices of 128 reduction rows, the next one prefetched while one runs: slices of
    # 128, 128 and a shorter last, across channel blocks of 48 with a tail, batch folded in
    ("pixels k slices m tail", 2, 300, (7, 7), 100, 1, None, None, None, 1),
    ("pixels 3x3 k slices", 1, 40, (7, 7), 100, 3, None, 1, None, 1),
    ("pixels one slice", 1, 64, (8, 8), 16, 1, None, None, None, 1),
    ("pixels k exact slices", 1, 256, (5, 5), 48, 1, None, None, None, 1),
    ("wino2 k slices m tail", 1, 260, (14, 14), 56, 3, None, 1, None, 1),
    # depthwise on the unpadded plane, borders masked: planes narrower than 16 outputs
    # (stride 1, as wide as the input) run flat, several rows to a vector
    ("dw flat asym pads", 1, 16, (6, 5), 16, 3, None, [0, 1, 2, 1], None, 16),
    ("dw flat dilated", 2, 8, (9, 9), 8, 3, None, 2, 2, 8),
    ("dw flat 5x5 on 4x4", 1, 8, (4, 4), 8, 5, None, 2, None, 8),
    ("dw flat mult 3", 1, 4, (7, 7), 12, 3, None, 1, None, 4),
    ("dw flat 15 wide", 1, 4, (3, 15), 4, 3, None, 1, None, 4),
    ("dw narrow valid", 1, 8, (8, 8), 8, 3, None, 0, None, 8),
    ("dw s2 to 7x7", 1, 24, (14, 14), 24, 3, 2, 1, None, 24),
    ("dw s2 odd asym", 1, 8, (13, 35), 8, 3, 2, [1, 0, 0, 2], None, 8),
    ("dw wide 33 cols", 1, 4, (5, 33), 4, 3, None, 1, None, 4),
    ("dw rect kernel", 1, 4, (9, 20), 4, (3, 5), None, [1, 2, 1, 2], None, 4),
    ("dw 1-D s2", 1, 4, (40,), 4, 3, 2, 1, None, 4),
    # AVX2 stride 2: rows split into even and odd columns (odd and even left pads, dilation)
    ("dw s2 split dilated", 1, 6, (15, 21), 6, 3, 2, [1, 3, 0, 1], [1, 2], 6),
    ("dw s2 split 5x5 pad 4", 1, 5, (11, 40), 5, 5, 2, [2, 4, 2, 0], None, 5),
    ("dw 16 wide pad 2", 1, 4, (16, 16), 4, 5, None, 2, None, 4),
    # channels in lanes (conv_depthwise_lanes.c): a block of 1 channel past
    # two full ones, a chunk of outputs past 256 that is not a multiple of
    # 16, mixed strides and dilations, a large plane with TF-style pads
    ("dw lanes 33 ch s2", 2, 33, (37, 23), 33, 3, 2, 1, None, 33),
    ("dw lanes chunk tail", 1, 17, (19, 23), 17, 3, None, 1, None, 17),
    ("dw lanes rect dilated", 1, 18, (23, 17), 18, (3, 5), [2, 1], [1, 2, 0, 1], [2, 1], 18),
    ("dw lanes 112 s2", 1, 20, (112, 112), 20, 3, 2, [0, 0, 1, 1], None, 20),
    # a padded plane over 64K pixels: the pixels-in-lanes loops instead
    ("dw plane past lanes", 1, 3, (258, 255), 3, 3, 2, 1, None, 3),
    # 1x1 over a 1x1 plane (squeeze-and-excitation layers): rows of a GEMM, X W^T
    ("rows 1x1 plane", 1, 52, (1, 1), 440, 1, None, None, None, 1),
    ("rows batch 3", 3, 7, (1, 1), 9, 1, None, None, None, 1),
    ("rows strided", 2, 16, (1, 1), 24, 1, 2, None, None, 1),
    ("rows 1-D", 1, 20, (1,), 33, 1, None, None, None, 1),
    ("rows 3-D", 2, 8, (1, 1, 1), 12, 1, None, None, None, 1),
    # not rows: the one output reads the padding (the bias alone); groups
    ("1x1 plane padded", 1, 8, (1, 1), 16, 1, 2, [1, 1, 0, 0], None, 1),
    ("1x1 plane groups", 2, 16, (1, 1), 32, 1, None, None, None, 4),
]


@pytest.mark.parametrize("case", SHAPES, ids=[s[0] for s in SHAPES])
def test_conv_shapes(case):
    name, n, c, spatial, m, k, s, p, d, g = case
    model, feeds = conv_model(n, c, spatial, m, k, strides=s, pads=p, dilations=d, group=g, act="Relu")
    check(model, feeds)


@pytest.mark.parametrize("case", SHAPES[:14:3] + SHAPES[19:22], ids=[s[0] for s in SHAPES[:14:3] + SHAPES[19:22]])
def test_conv_weights_not_constant(case):
    """Weights fed at run time are packed per run."""
    name, n, c, spatial, m, k, s, p, d, g = case
    model, feeds = conv_model(n, c, spatial, m, k, strides=s, pads=p, dilations=d, group=g, bias=False,
                              const_weights=False)
    check(model, feeds, levels=(0, 3))


@pytest.mark.parametrize("act", list(ACTS))
@pytest.mark.parametrize("kind", ["gemm", "pixels", "depthwise", "winograd", "winograd2"])
def test_conv_activations(act, kind):
    if kind == "gemm":
        model, feeds = conv_model(1, 12, (19, 21), 20, 3, strides=1, pads=1, act=act, seed=3)
    elif kind == "pixels":
        model, feeds = conv_model(1, 12, (9, 10), 20, 3, strides=2, pads=1, act=act, seed=3)
    elif kind == "depthwise":
        model, feeds = conv_model(1, 12, (9, 10), 12, 3, pads=1, group=12, act=act, seed=3)
    elif kind == "winograd":
        model, feeds = conv_model(1, 32, (20, 24), 32, 3, pads=1, act=act, seed=3)
    else:
        model, feeds = conv_model(2, 32, (14, 13), 40, 3, pads=1, act=act, seed=3)
    feeds["x"][0, 0, 0, :3] = [np.nan, np.inf, -np.inf]
    want = ort_run(model, feeds)[0]
    for level in (0, 3):
        got = Session(model, opt_level=level).run(feeds)[0]
        # NaN and infinities spread through the sums alike (what an activation
        # makes of NaN differs between onnxruntime's own kernels); compare
        # where onnxruntime's result is finite
        fin = np.isfinite(want)
        assert fin.sum() > want.size // 2
        assert_close(got[fin], want[fin], f"level {level}")
        if act in (None, "Relu"):
            # Relu keeps NaN, fused or not (as the standalone Relu does)
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


@pytest.mark.parametrize("act", [None, "Relu", "Sigmoid", "HardSigmoid"])
def test_conv_rows_activations(act):
    """the rows path (1x1 over a 1x1 plane): bias, then the activation"""
    model, feeds = conv_model(2, 24, (1, 1), 40, 1, act=act, seed=5)
    check(model, feeds)


@pytest.mark.parametrize("inf_weight", [False, True])
def test_conv_rows_zero_inputs(inf_weight):
    """a GEMV over W^T may skip the inputs that are 0 (a ReLU's zeros) only
    when W holds no infinity: 0 x inf is NaN, as onnxruntime gives it"""
    model, feeds = conv_model(1, 16, (1, 1), 24, 1, seed=6)
    feeds["x"][0, ::2] = 0.0
    if inf_weight:
        w = next(t for t in model.graph.initializer if t.name == "w")
        arr = numpy_helper.to_array(w).copy()
        arr[3, 4] = np.inf      # input 4 is 0: output 3 is NaN
        arr[5, 5] = -np.inf     # input 5 is not: output 5 is -inf or +inf
        w.CopyFrom(numpy_helper.from_array(arr, "w"))
    want = ort_run(model, feeds)[0]
    for level in (0, 3):
        got = Session(model, opt_level=level).run(feeds)[0]
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        fin = np.isfinite(want)
        np.testing.assert_array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)])
        assert_close(got[fin], want[fin], f"level {level}")
    if inf_weight:
        assert np.isnan(want[0, 3, 0, 0]) and np.isinf(want[0, 5, 0, 0])


def test_conv_rows_unknown_plane():
    """a plane unknown when the session is made: W packed for the GEMM path,
    and for the rows at the run that meets a 1x1 plane (and back)"""
    model, feeds = conv_model(2, 12, (1, 1), 20, 1, act="Relu", seed=8)
    x = model.graph.input[0].type.tensor_type.shape
    x.dim[2].dim_param = "H"
    x.dim[3].dim_param = "W"
    check(model, feeds, levels=(0, 3), threads=(1,))
    check(model, {"x": np.random.default_rng(9).standard_normal((1, 12, 3, 2)).astype(np.float32)},
          levels=(0, 3), threads=(1,))


def test_conv_no_bias_and_empty_batch():
    model, feeds = conv_model(0, 8, (7, 7), 8, 3, pads=1, bias=False)
    check(model, feeds, levels=(0, 3), threads=(1,))


# ---- Conv + Add (+ activation) -> FusedConv with Z ---------------------------

def residual_model(c=16, m=16, hw=(14, 14), k=3, group=1, act="Relu", z_first=False, seed=1,
                   z_shape=None, extra_use=False, dw=False):
    """x -> Conv(w1) -> Relu -> Conv(w2) -> Add(., x or z) -> act; the residual
    branch comes from the input (or, with z_shape, a separate input)."""
    rng = np.random.default_rng(seed)
    w1 = (rng.standard_normal((c, c // group if not dw else 1, k, k)) / np.sqrt(c * k * k)).astype(np.float32)
    w2 = (rng.standard_normal((m, c, 1, 1)) / np.sqrt(c)).astype(np.float32)
    b2 = rng.standard_normal(m).astype(np.float32)
    inits = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2"),
             numpy_helper.from_array(b2, "b2"), numpy_helper.from_array(np.array(0, np.float32), "lo"),
             numpy_helper.from_array(np.array(6, np.float32), "hi")]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", c] + list(hw))]
    feeds = {"x": rng.standard_normal([2, c] + list(hw)).astype(np.float32)}
    zname = "x"
    if z_shape is not None:
        inputs.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, list(z_shape)))
        feeds["z"] = rng.standard_normal(z_shape).astype(np.float32)
        zname = "z"
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[k // 2] * 4, group=c if dw else group),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"]),
             helper.make_node("Add", [zname, "c2"] if z_first else ["c2", zname], ["s" if act else "y"])]
    nodes += ACTS[act]("s", "y")
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    if extra_use:
        nodes.append(helper.make_node("Neg", ["c2"], ["y2"]))
        outputs.append(helper.make_tensor_value_info("y2", TensorProto.FLOAT, None))
    return make_model(nodes, inputs, outputs, inits), feeds


def fused_ops(model, level=2):
    saved = onnx.load_from_string(Session(model, opt_level=level, portable=True).save())
    return saved, [(n.op_type, len(n.input)) for n in saved.graph.node]


@pytest.mark.parametrize("act", [None, "Relu", "Clip", "LeakyRelu", "Sigmoid"])
@pytest.mark.parametrize("z_first", [False, True])
def test_conv_add_fusion(act, z_first):
    model, feeds = residual_model(act=act, z_first=z_first)
    check(model, feeds)
    saved, ops = fused_ops(model)
    assert ("FusedConv", 4) in ops, ops
    assert not any(op in ("Add", "Relu", "Clip", "LeakyRelu", "Sigmoid") for op, _ in ops), ops
    # the saved model is onnxruntime's FusedConv: same answer there
    assert_close(ort_run(saved, feeds)[0], ort_run(model, feeds)[0], "saved model in onnxruntime")


def test_conv_add_fusion_rows():
    """Z and the activation after the rows path (an SE-like 1x1 plane)"""
    model, feeds = residual_model(c=24, m=24, hw=(1, 1), act="Sigmoid")
    check(model, feeds)
    _, ops = fused_ops(model)
    assert ("FusedConv", 4) in ops, ops


def test_conv_add_fusion_winograd():
    """Z and the activation in the Winograd output transform."""
    model, feeds = residual_model(c=32, m=32, hw=(20, 24), act="Relu")
    # make the first conv (3x3, 32 -> 32) the one that takes the residual
    g = model.graph
    g.node[3].input[:] = ["c1", "x"]
    del g.node[1]
    g.node[1].input[0] = "x"
    check(model, feeds)
    _, ops = fused_ops(model)
    assert ("FusedConv", 4) in ops, ops


def test_conv_add_fusion_winograd2():
    model, feeds = residual_model(c=32, m=32, hw=(14, 14), act="Relu")
    g = model.graph
    g.node[3].input[:] = ["x", "c1"]
    del g.node[1]
    g.node[1].input[0] = "x"
    check(model, feeds)


def test_conv_add_fusion_depthwise_and_z_from_later_node():
    """The residual addend is produced after the conv it joins (the fused node
    moves), and a depthwise conv takes Z too."""
    rng = np.random.default_rng(7)
    c = 8
    w_dw = numpy_helper.from_array((rng.standard_normal((c, 1, 3, 3)) / 3).astype(np.float32), "wdw")
    w_pw = numpy_helper.from_array((rng.standard_normal((c, c, 1, 1)) / 3).astype(np.float32), "wpw")
    nodes = [helper.make_node("Conv", ["x", "wdw"], ["a"], pads=[1, 1, 1, 1], group=c),
             helper.make_node("Conv", ["x", "wpw"], ["b"]),
             helper.make_node("Sigmoid", ["b"], ["bs"]),
             helper.make_node("Add", ["a", "bs"], ["y"])]
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, 9, 9])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w_dw, w_pw])
    check(model, {"x": rng.standard_normal((1, c, 9, 9)).astype(np.float32)})
    _, ops = fused_ops(model)
    assert ("FusedConv", 4) in ops and "Add" not in [o for o, _ in ops], ops


@pytest.mark.parametrize("why", ["broadcast", "extra_use"])
def test_conv_add_not_fused(why):
    """A broadcasting Add, or a conv output used elsewhere, stays as it is."""
    if why == "broadcast":
        model, feeds = residual_model(z_shape=[1, 16, 1, 1])
    else:
        model, feeds = residual_model(extra_use=True)
    check(model, feeds)
    _, ops = fused_ops(model)
    assert "Add" in [o for o, _ in ops], ops


def test_fused_conv_z_shape_mismatch_is_an_error():
    """A hand-written FusedConv whose Z does not have the output's shape is refused."""
    rng = np.random.default_rng(2)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 1, 1)).astype(np.float32), "w")
    node = helper.make_node("FusedConv", ["x", "w", "", "z"], ["y"], domain="com.microsoft", activation="Relu")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4]),
                                            helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4, 4, 1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                              ir_version=8)
    sess = Session(model, opt_level=0)
    with pytest.raises(Exception, match="Z has shape"):
        sess.run({"x": np.ones((1, 3, 4, 4), np.float32), "z": np.ones((1, 4, 4, 1), np.float32)})
    good = {"x": rng.standard_normal((1, 3, 4, 4)).astype(np.float32),
            "z": rng.standard_normal((1, 4, 4, 1)).astype(np.float32)}
    del good  # shape-matched Z is covered by the fusion tests


def test_mobilenet_block():
    """An inverted residual block: 1x1 expand + Clip, depthwise 3x3 + Clip,
    1x1 project, residual Add; batch 3."""
    rng = np.random.default_rng(11)
    c, e = 24, 144
    inits = [numpy_helper.from_array(np.array(0, np.float32), "lo"),
             numpy_helper.from_array(np.array(6, np.float32), "hi")]
    for name, shape in (("we", (e, c, 1, 1)), ("wd", (e, 1, 3, 3)), ("wp", (c, e, 1, 1))):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32), name))
        inits.append(numpy_helper.from_array(rng.standard_normal(shape[0]).astype(np.float32) * 0.1, "b" + name))
    nodes = [helper.make_node("Conv", ["x", "we", "bwe"], ["a"]),
             helper.make_node("Clip", ["a", "lo", "hi"], ["a2"]),
             helper.make_node("Conv", ["a2", "wd", "bwd"], ["d"], pads=[1, 1, 1, 1], group=e),
             helper.make_node("Clip", ["d", "lo", "hi"], ["d2"]),
             helper.make_node("Conv", ["d2", "wp", "bwp"], ["p"]),
             helper.make_node("Add", ["x", "p"], ["y"])]
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", c, 28, 28])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    check(model, {"x": rng.standard_normal((3, c, 28, 28)).astype(np.float32)})


@pytest.mark.parametrize("op,attrs", [
    ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ("MaxPool", dict(kernel_shape=[2, 2], strides=[2, 2])),
    ("MaxPool", dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])),
    ("AveragePool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ("AveragePool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1)),
    ("AveragePool", dict(kernel_shape=[5, 5], strides=[3, 3], pads=[2, 1, 2, 1], ceil_mode=1)),
])
def test_pools(op, attrs):
    """The row-wise pool loops (vectorized per instruction set) on odd planes."""
    rng = np.random.default_rng(5)
    model = make_model([helper.make_node(op, ["x"], ["y"], **attrs)],
                       [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 6, 37, 41])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    check(model, {"x": rng.standard_normal((2, 6, 37, 41)).astype(np.float32)})
