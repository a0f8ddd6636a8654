"""The channel-blocked layout (src/kernels/cpu/conv_nchwc.c and
src/model/passes/layout_nchwc.c, level 3): blocks of 16 channels with
AVX-512, of 8 with AVX2.

The onnx_pg.nchwc kernels are checked one by one in models that use them
directly (ReorderInput, the operator, ReorderOutput), against onnxruntime
running the plain ONNX equivalent, over kernel sizes, strides, paddings,
dilations, channel counts that are not multiples of 16 or 64, batches,
bias, residual Z and activations (HardSigmoid among them, whose act(0) is
not 0).  The pass is checked on ResNet-like
graphs: level 3 (rewritten) against level 0 and onnxruntime, the profile
showing the blocked operators, and graphs it must leave alone.  Tolerance:
rtol 1e-4, atol 1e-5 of the output's scale (the sums run in another order).
Every test runs once per block size this CPU has (an AVX-512 machine runs
blocks of 8 too, its kernel choice forced to AVX2); skipped without AVX2, where the pass does not
apply."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from oxengine import ISA_AVX2, EngineError, Session, force_conv_isa, force_fma_bcast, nchwc_block

F = TensorProto.FLOAT
NC = "onnx_pg.nchwc"
MS = "com.microsoft"


def model(nodes, inputs, outputs, inits, domains=()):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, F, s) for n, s in inputs],
                          [helper.make_tensor_value_info(o, F, None) for o in outputs], initializer=inits)
    ops = [helper.make_opsetid("", 17)] + [helper.make_opsetid(d, 1) for d in domains]
    return helper.make_model(g, opset_imports=ops, ir_version=8).SerializeToString()


def ort_run(m, feeds):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(m, so, providers=["CPUExecutionProvider"]).run(None, feeds)


def close(got, want, what):
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * scale, err_msg=what)


HOST_BLOCK = nchwc_block()
BLOCKS = {16: [16, 8], 8: [8], 0: []}[HOST_BLOCK]
pytestmark = pytest.mark.skipif(not BLOCKS, reason="the onnx_pg.nchwc kernels need AVX2 or AVX-512")


@pytest.fixture(autouse=True, params=BLOCKS or [0], ids=lambda b: "block%d" % b)
def block(request):
    """each test in blocks of 16 (AVX-512) and of 8 (AVX2, forced on an AVX-512 CPU)"""
    if request.param == 8 and HOST_BLOCK == 16:
        before = force_conv_isa(ISA_AVX2)
        yield 8
        force_conv_isa(before)
    else:
        yield request.param

ACTS = {
    None: ([], None),
    "Relu": ([], lambda x: helper.make_node("Relu", [x], ["y"])),
    "LeakyRelu": ([0.1], lambda x: helper.make_node("LeakyRelu", [x], ["y"], alpha=0.1)),
    "Clip": ([-0.5, 0.25], None),
    "HardSigmoid": ([0.3, 0.4], lambda x: helper.make_node("HardSigmoid", [x], ["y"], alpha=0.3, beta=0.4)),
    "Sigmoid": ([], lambda x: helper.make_node("Sigmoid", [x], ["y"])),
    # the engine's own (the pass absorbs PyTorch's Sigmoid and Mul into it)
    "SiLU": ([], lambda x: [helper.make_node("Sigmoid", [x], ["s"]), helper.make_node("Mul", [x, "s"], ["y"])]),
}


def conv_case(n, c, m, h, w, k, stride, pads, dilation, bias, z, act, seed, depthwise=False, nchw_input=False,
              group=1, blocked_op=None):
    """(blocked model, plain model, feeds) of act(conv(x) + b + z); depthwise:
    group = c = m, the blocked DepthwiseConv; nchw_input: the blocked Conv
    reads x as it is (an RGB stem); group: a grouped Conv; blocked_op: the
    onnx_pg.nchwc operator (default Conv, or DepthwiseConv)"""
    rng = np.random.default_rng(seed)
    kh, kw = k if isinstance(k, tuple) else (k, k)
    wt = (rng.standard_normal((m, 1 if depthwise else c // group, kh, kw)) * 0.2).astype(np.float32)
    inits = [numpy_helper.from_array(wt, "w")]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(m).astype(np.float32), "b"))
    attrs = dict(kernel_shape=[kh, kw], strides=[stride, stride], pads=pads, dilations=[dilation, dilation])
    if depthwise:
        attrs["group"] = c
    elif group > 1:
        attrs["group"] = group
    oh = (h + pads[0] + pads[2] - dilation * (kh - 1) - 1) // stride + 1
    ow = (w + pads[1] + pads[3] - dilation * (kw - 1) - 1) // stride + 1
    feeds = {"x": rng.standard_normal((n, c, h, w)).astype(np.float32)}
    inputs = [("x", [n, c, h, w])]
    if z:
        feeds["z"] = rng.standard_normal((n, m, oh, ow)).astype(np.float32)
        inputs.append(("z", [n, m, oh, ow]))
    params, plain_act = ACTS[act]
    act_attrs = {} if act is None else {"activation": act}
    if params:
        act_attrs["activation_params"] = params

    conv_in = ["xb", "w", "b" if bias else ""] + (["zb"] if z else [])
    blocked = [helper.make_node("Identity" if nchw_input else "ReorderInput", ["x"], ["xb"],
                                domain="" if nchw_input else NC)]
    if nchw_input:
        act_attrs["nchw_input"] = 1
    if z:
        blocked.append(helper.make_node("ReorderInput", ["z"], ["zb"], domain=NC))
    blocked += [helper.make_node(blocked_op or ("DepthwiseConv" if depthwise else "Conv"), conv_in, ["yb"], domain=NC,
                                 **attrs, **act_attrs),
                helper.make_node("ReorderOutput", ["yb"], ["y"], domain=NC, channels=m)]

    plain = [helper.make_node("Conv", ["x", "w"] + (["b"] if bias else []), ["c"], **attrs)]
    last = "c"
    if z:
        plain.append(helper.make_node("Add", ["c", "z"], ["cz"]))
        last = "cz"
    if act == "Clip":
        inits += [numpy_helper.from_array(np.float32(params[0]), "lo"),
                  numpy_helper.from_array(np.float32(params[1]), "hi")]
        plain.append(helper.make_node("Clip", [last, "lo", "hi"], ["y"]))
    elif plain_act is not None:
        made = plain_act(last)
        plain += made if isinstance(made, list) else [made]
    else:
        plain.append(helper.make_node("Identity", [last], ["y"]))
    return (model(blocked, inputs, ["y"], inits, [NC]), model(plain, inputs, ["y"], inits), feeds)


CONV_CASES = [
    # n, c, m, h, w, k, stride, pads, dilation, bias, z, act
    (1, 64, 64, 14, 14, 1, 1, [0, 0, 0, 0], 1, True, False, "Relu"),      # pointwise: one long row
    (2, 32, 200, 9, 11, 1, 1, [0, 0, 0, 0], 1, True, True, "Relu"),       # 13 blocks: groups of 4, 3, 3, 3 (of 8: 25 in 4 x 4 + 3 x 3)
    (1, 16, 24, 7, 5, 1, 2, [0, 0, 0, 0], 1, False, False, None),         # stride-2 1x1, M not a multiple of 16
    (1, 40, 48, 13, 11, 1, 2, [0, 0, 0, 0], 1, True, True, "Relu"),       # stride-2 1x1, a partial input block
    (1, 640, 40, 15, 14, 1, 2, [0, 0, 0, 0], 1, True, False, None),       # stride-2 1x1, input blocks in chunks
    (1, 24, 32, 9, 9, 1, 2, [1, 1, 1, 1], 1, True, False, "Relu"),        # stride-2 1x1, padded: the general tile
    (1, 48, 80, 12, 13, 3, 1, [1, 1, 1, 1], 1, True, True, "LeakyRelu"),
    (2, 20, 40, 10, 9, 3, 2, [1, 1, 1, 1], 1, True, False, "Clip"),       # C not a multiple of 16
    (1, 16, 16, 8, 8, 3, 1, [2, 2, 2, 2], 2, True, False, "HardSigmoid"),  # dilation 2, act(0) != 0
    (1, 32, 64, 23, 19, 7, 2, [3, 2, 1, 3], 1, True, False, "Relu"),      # asymmetric pads, edge pixels
    (1, 16, 48, 6, 7, 5, 1, [0, 2, 1, 2], 1, False, True, None),          # a 5-wide kernel on 7 columns: 4 edge pixels per row
    (1, 16, 16, 3, 3, 3, 3, [1, 1, 1, 1], 1, True, False, "Relu"),        # stride 3
    # the tiles' table of tap offsets: 7x7 its last size (49 taps), 9x9 past it (the loops per axis)
    (1, 24, 40, 15, 16, 7, 1, [3, 3, 3, 3], 1, True, True, "Relu"),
    (1, 16, 24, 13, 12, 9, 1, [4, 4, 4, 4], 1, True, False, None),
    (1, 40, 48, 20, 26, 3, 2, [1, 0, 1, 1], 1, False, True, "Clip"),     # stride 2: rows of several full tiles
    (1, 64, 112, 3, 200, 1, 1, [0, 0, 0, 0], 1, True, False, None),       # several row chunks
    # weights past L1: the input blocks in chunks, partial sums in Y, the epilogue once
    (2, 640, 80, 7, 7, 1, 1, [0, 0, 0, 0], 1, True, True, "Relu"),        # 40 blocks in chunks of 8
    (1, 72, 40, 10, 9, 3, 2, [1, 1, 1, 1], 1, True, True, "Clip"),        # 3x3: one block per chunk, a partial one
    (1, 128, 24, 40, 30, 3, 2, [1, 1, 1, 1], 1, True, True, "Relu"),      # tasks of several rows (two groups of 10)
    (1, 528, 32, 20, 20, 1, 1, [0, 0, 0, 0], 1, True, False, "Relu"),     # a flattened plane in two chunks of 204 and 196
    (1, 140, 48, 9, 10, 1, 1, [0, 0, 0, 0], 1, True, True, "Relu"),       # blocks of 8: 128 channels a chunk, then 12 (a partial block)
    (1, 256, 40, 28, 28, 1, 1, [0, 0, 0, 0], 1, True, True, None),        # 64 KB per group on a large plane: chunked too
    (1, 384, 64, 14, 14, 1, 1, [0, 0, 0, 0], 1, False, False, "Relu"),    # one group: the plane cut for the threads
    # 3x3 stride 1 (dilation 1): Winograd's F(4x4, 3x3) on the blocks (conv_nchwc_winograd.c)
    (2, 24, 40, 21, 23, 3, 1, [1, 1, 1, 1], 1, True, True, "Relu"),       # partial tiles, C and M not multiples of 16
    (1, 16, 200, 9, 10, 3, 1, [0, 2, 1, 0], 1, True, False, "HardSigmoid"),  # asymmetric pads, 13 output blocks
    (3, 16, 16, 4, 4, 3, 1, [0, 0, 0, 0], 1, False, False, None),         # one partial tile per image, images in one block
    (1, 64, 64, 56, 56, 3, 1, [1, 1, 1, 1], 1, True, False, "Relu"),      # ResNet-50's first 3x3: several blocks of tiles
    (1, 136, 24, 20, 20, 3, 1, [1, 1, 1, 1], 1, True, True, "LeakyRelu"),  # 9 input blocks, 8 channels of padding
    # one block of tiles on 2 threads: its groups shared out (ResNet-50's 3x3 layers at 14x14)
    (1, 256, 256, 14, 14, 3, 1, [1, 1, 1, 1], 1, True, True, "Relu"),     # 4 groups in 2 tasks
    (1, 32, 160, 8, 8, 3, 1, [1, 1, 1, 1], 1, True, False, None),         # 3 groups (the last of 2 blocks) in 2
    # planes of 784 pixels and more on 2 threads: tasks a chunk of pixels after another, in every group
    (2, 32, 96, 30, 30, 1, 1, [0, 0, 0, 0], 1, True, True, "Relu"),       # two groups of 3 blocks, two images
    (1, 24, 80, 60, 58, 3, 2, [1, 1, 1, 1], 1, True, False, "Clip"),      # 3x3/2 into 30x29: groups of 3 and 2
    (1, 256, 72, 28, 28, 1, 1, [0, 0, 0, 0], 1, True, True, None),        # chunked input blocks, 5 output blocks
    # dilated past the plane (DeepLabV3's ASPP): no interior, edge pixels with the same taps share tiles
    (1, 48, 40, 14, 14, 3, 1, [12, 12, 12, 12], 12, True, False, "Relu"),  # outer taps in range for a few pixels
    (1, 32, 24, 9, 11, 3, 1, [36, 36, 36, 36], 36, True, True, None),      # only the centre tap anywhere
    (2, 16, 16, 10, 13, 3, 2, [6, 5, 6, 5], 5, False, False, "Clip"),      # stride 2, asymmetric reach
    # EfficientNet's activations, in registers: 1x1, Winograd, direct 3x3/2, a residual
    (1, 32, 48, 14, 14, 1, 1, [0, 0, 0, 0], 1, True, False, "SiLU"),
    (1, 16, 40, 12, 12, 3, 1, [1, 1, 1, 1], 1, True, True, "SiLU"),
    (2, 24, 40, 11, 9, 3, 2, [1, 1, 1, 1], 1, True, False, "Sigmoid"),
    (1, 40, 24, 7, 7, 1, 1, [0, 0, 0, 0], 1, False, True, "Sigmoid"),
]


@pytest.mark.parametrize("case", range(len(CONV_CASES)))
@pytest.mark.parametrize("threads", [1, 2])
def test_blocked_conv_matches_conv(case, threads, block):
    blocked, plain, feeds = conv_case(*CONV_CASES[case], seed=case)
    want = ort_run(plain, feeds)[0]
    got = Session(blocked, opt_level=0, threads=threads).run(feeds)[0]
    assert got.shape == want.shape
    close(got, want, "case %d %s" % (case, CONV_CASES[case]))
    if block == 16:
        # the 2-block tiles' other way of broadcasting (the one this CPU does
        # not pick): the same multiply-adds in the same order, so the same bits
        before = force_fma_bcast(None)
        try:
            force_fma_bcast(not before)
            other = Session(blocked, opt_level=0, threads=threads).run(feeds)[0]
        finally:
            force_fma_bcast(None)
        np.testing.assert_array_equal(other, got, err_msg="case %d, broadcast in the FMA: %s" % (case, not before))


# n, c, m, h, w, k, stride, pads, dilation: a residual's convolution of each kind
RESIDUAL_CASES = [
    (1, 64, 256, 14, 14, 1, 1, [0, 0, 0, 0], 1),     # 1x1, the input blocks in one pass
    (1, 640, 80, 7, 7, 1, 1, [0, 0, 0, 0], 1),       # 40 input blocks in chunks: partial sums in Y
    (1, 256, 40, 28, 28, 1, 1, [0, 0, 0, 0], 1),     # chunked on a large plane
    (1, 32, 48, 20, 20, 3, 1, [1, 1, 1, 1], 1),      # Winograd
    (1, 40, 40, 12, 12, 3, 2, [1, 1, 1, 1], 1),      # direct 3x3/2
]


@pytest.mark.parametrize("case", RESIDUAL_CASES + ["depthwise"])
@pytest.mark.parametrize("threads", [1, 2])
def test_blocked_residual_in_place_or_shared(case, threads, block):
    """Y takes Z's buffer when the convolution alone reads Z (the sum in
    place, partial sums of chunked passes in it); when another node reads Z
    after it, Z stays as it was"""
    from onnx import load_from_string
    if case == "depthwise":
        blocked, plain, feeds = conv_case(1, 48, 48, 13, 11, 3, 1, [1, 1, 1, 1], 1, True, True, "Relu", seed=5,
                                          depthwise=True)
        m = 48
    else:
        blocked, plain, feeds = conv_case(*case, True, True, "Relu", seed=case[1])
        m = case[2]
    want = ort_run(plain, feeds)[0]
    close(Session(blocked, opt_level=0, threads=threads).run(feeds)[0], want, "in place: %s" % (case,))
    shared = load_from_string(blocked)
    shared.graph.node.append(helper.make_node("ReorderOutput", ["zb"], ["z_again"], domain=NC, channels=m))
    shared.graph.output.append(helper.make_tensor_value_info("z_again", TensorProto.FLOAT, None))
    y, z_again = Session(shared.SerializeToString(), opt_level=0, threads=threads).run(feeds)
    close(y, want, "Z shared: %s" % (case,))
    np.testing.assert_array_equal(z_again, feeds["z"])


@pytest.mark.parametrize("act", ["Sigmoid", "SiLU"])
def test_blocked_sigmoid_saturates(act, block):
    """Sigmoid and SiLU in registers over the whole float range of their
    argument: 0 and 1 (and -0 and x) far out, no NaN from exp's overflow,
    subnormal exp(-|x|) near -88, NaN kept"""
    blocked, plain, _ = conv_case(1, 16, 16, 1, 40, 1, 1, [0, 0, 0, 0], 1, False, False, act, seed=0)
    # the weights: the identity, so that y = x per channel
    m = onnx.load_from_string(blocked)
    m.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.eye(16, dtype=np.float32).reshape(16, 16, 1, 1), "w"))
    x = np.linspace(-120, 120, 16 * 40, dtype=np.float32).reshape(1, 16, 1, 40)
    x[0, 3, 0, :6] = [-88.5, -87.0, -103.9, -104.5, 1e30, -1e30]
    x[0, 5, 0, 7] = np.nan  # times the zero weights, NaN in every channel of that pixel
    got = Session(m.SerializeToString(), opt_level=0).run({"x": x})[0]
    with np.errstate(over="ignore"):
        sig = 1 / (1 + np.exp(-x.astype(np.float64)))
    want = sig if act == "Sigmoid" else x * sig
    assert np.isnan(got[0, :, 0, 7]).all() and np.isnan(got).sum() == 16
    got, want = np.delete(got, 7, axis=3), np.delete(want, 7, axis=3)
    # atol: SiLU of about -100 multiplies a Sigmoid of a few subnormal steps (float has no finer ones)
    np.testing.assert_allclose(got, want, rtol=4e-7, atol=1e-42)


# n, c, m, h, w, k, stride, pads, dilation, bias, z, act, group: whole blocks of 16 a group in and out
GROUPED_CASES = [
    (1, 64, 64, 14, 14, 3, 1, [1, 1, 1, 1], 1, True, False, "Relu", 4),     # ResNeXt's layer3: a block a group
    (2, 96, 192, 9, 11, 3, 2, [1, 1, 1, 1], 1, True, False, None, 3),       # 4 output blocks a group (2 of 8: 8)
    (1, 128, 64, 7, 7, 1, 1, [0, 0, 0, 0], 1, False, True, "Clip", 2),     # 1x1, a residual
    (1, 32, 288, 10, 10, 3, 1, [1, 1, 1, 1], 1, True, False, "SiLU", 2),   # 9 output blocks a group: 3 tiles of 3
    (1, 512, 512, 28, 28, 3, 1, [1, 1, 1, 1], 1, True, True, "Relu", 32),  # weights chunked, a large plane
]


@pytest.mark.parametrize("case", range(len(GROUPED_CASES)))
@pytest.mark.parametrize("threads", [1, 2])
def test_blocked_grouped_conv_matches_conv(case, threads, block):
    """a grouped Conv on the blocks: each group's output blocks from its own
    input blocks, tiles never across two groups"""
    *args, group = GROUPED_CASES[case]
    blocked, plain, feeds = conv_case(*args, seed=case, group=group)
    want = ort_run(plain, feeds)[0]
    got = Session(blocked, opt_level=0, threads=threads).run(feeds)[0]
    close(got, want, "grouped case %d" % case)
    # and the pass makes the same of the plain model (whole blocks of 8 and 16 alike)
    close(Session(plain, opt_level=3, threads=threads).run(feeds)[0], want, "grouped case %d, level 3" % case)


def test_blocked_grouped_conv_needs_whole_blocks(block):
    """a model's own onnx_pg.nchwc Conv with groups that cut blocks: an error"""
    blocked, _, feeds = conv_case(1, 24, 24, 6, 6, 3, 1, [1, 1, 1, 1], 1, False, False, None, seed=0, group=6)
    with pytest.raises(EngineError, match="whole blocks"):
        Session(blocked, opt_level=0).run(feeds)


def resnext_like(seed, h):
    """ResNeXt bottlenecks: 1x1, a 3x3 of 8 groups of 16 or 4 (stride 1 and
    2), 1x1, residual"""
    net = Net(seed)
    x = net.conv("x", 3, 64, k=3, stride=2)
    for width, groups, stride in ((128, 8, 1), (128, 32, 2)):
        y = net.conv(net.conv(net.conv(x, 64, width, k=1), width, width, stride=stride, group=groups), width, 64,
                     k=1, relu=False)
        skip = x if stride == 1 else net.conv(x, 64, 64, k=1, stride=stride, relu=False)
        x = net.op("Relu", [net.op("Add", [y, skip])])
    net.nodes.append(helper.make_node("GlobalAveragePool", [x], ["y"]))
    return model(net.nodes, [("x", [None, 3, h, h])], ["y"], net.inits)


@pytest.mark.parametrize("h,threads", [(32, 1), (30, 2)])
def test_pass_keeps_grouped_convs_blocked(h, threads, block):
    """16 channels a group: a blocked GroupConv in blocks of 16, a blocked
    Conv in blocks of 8 (two blocks a group); 4 a group (the second
    module) a blocked GroupConv: no NCHW convolution"""
    ops = level3_ops(resnext_like(h, h), h, threads)
    groups = 2 if block == 16 else 1
    assert ops.count("FusedConv") == 0 and ops.count("GroupConv") == groups, ops
    assert ops.count("Conv") == 8 - groups, ops


def bias_as_input(m):
    """the model with its constant B turned into a graph input of any length"""
    from onnx import load_from_string
    p = load_from_string(m)
    b = next(t for t in p.graph.initializer if t.name == "b")
    p.graph.initializer.remove(b)
    p.graph.input.append(helper.make_tensor_value_info("b", F, ["nb"]))
    return p.SerializeToString()


# n, c, m, h, w, k, stride, pads, dilation, depthwise
FED_BIAS_CASES = [
    (1, 32, 40, 9, 9, 3, 1, [1, 1, 1, 1], 1, False),   # Winograd (3x3, stride 1)
    (1, 24, 40, 9, 9, 1, 1, [0, 0, 0, 0], 1, False),   # pointwise: the tiled path
    (1, 40, 40, 9, 9, 3, 2, [1, 1, 1, 1], 1, True),    # depthwise
]


@pytest.mark.parametrize("case", range(len(FED_BIAS_CASES)))
@pytest.mark.parametrize("threads", [1, 2])
def test_blocked_bias_fed_at_run_time(case, threads):
    """B padded once at prepare when it is a constant; a B fed at run time
    is read at every run (two runs, two biases), and a constant one of the
    wrong length is an error at run time, not a crash"""
    n, c, m, h, w, k, stride, pads, dil, dw = FED_BIAS_CASES[case]
    blocked, plain, feeds = conv_case(n, c, m, h, w, k, stride, pads, dil, True, False, "Relu",
                                      seed=40 + case, depthwise=dw)
    blocked, plain = bias_as_input(blocked), bias_as_input(plain)
    sess = Session(blocked, opt_level=0, threads=threads)
    rng = np.random.default_rng(case)
    for run in range(2):
        feeds["b"] = rng.standard_normal(m).astype(np.float32) * (run + 1)
        close(sess.run(feeds)[0], ort_run(plain, feeds)[0], "case %d run %d" % (case, run))
    feeds["b"] = np.zeros(m + 1, np.float32)
    with pytest.raises(EngineError, match="B must be a float tensor"):
        sess.run(feeds)


@pytest.mark.parametrize("threads", [1, 2])
def test_blocked_winograd_non_finite(threads):
    """an infinity or NaN spreads over a whole Winograd tile: those outputs
    are computed again directly, so each is what a direct convolution gives
    (infinite or NaN only where its own 3x3 window holds one)"""
    blocked, plain, feeds = conv_case(1, 32, 48, 17, 18, 3, 1, [1, 1, 1, 1], 1, True, False, "Relu", seed=7)
    x = feeds["x"]
    x[0, 3, 5, 6] = np.inf
    x[0, 20, 12, 2] = -np.inf
    x[0, 9, 9, 15] = np.nan
    x[0, 30, 0, 0] = 3e38                      # finite, but its transforms overflow
    want = ort_run(plain, feeds)[0]
    got = Session(blocked, opt_level=0, threads=threads).run(feeds)[0]
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(np.isinf(got), np.isinf(want))
    assert np.isfinite(got).sum() > 0.9 * got.size
    fin = np.isfinite(want)
    close(got[fin], want[fin], "finite outputs")


@pytest.mark.parametrize("case", [(1, 3, 64, 23, 21, 7, 2, [3, 3, 3, 3], 1, True, False, "Relu"),
                                  (2, 3, 32, 17, 16, 3, 2, [1, 1, 1, 1], 1, True, True, "Clip"),
                                  (1, 5, 20, 9, 30, 1, 1, [0, 0, 0, 0], 1, False, False, None),
                                  # stride 2 (the tiles of constant pixel offsets): rows of several
                                  # full tiles, asymmetric pads, dilation, 4 output blocks
                                  (1, 3, 40, 31, 50, 3, 2, [1, 0, 1, 1], 1, True, False, "Relu"),
                                  (2, 4, 64, 16, 37, 3, 2, [2, 2, 2, 1], 2, True, True, None)])
@pytest.mark.parametrize("threads", [1, 2])
def test_blocked_conv_of_nchw_input(case, threads):
    blocked, plain, feeds = conv_case(*case, seed=len(case) + case[1], nchw_input=True)
    want = ort_run(plain, feeds)[0]
    got = Session(blocked, opt_level=0, threads=threads).run(feeds)[0]
    assert got.shape == want.shape
    close(got, want, "nchw input %s" % (case,))


def pool_case(op, n, c, h, w, attrs, seed):
    rng = np.random.default_rng(seed)
    feeds = {"x": rng.standard_normal((n, c, h, w)).astype(np.float32)}
    blocked = model([helper.make_node("ReorderInput", ["x"], ["xb"], domain=NC),
                     helper.make_node(op, ["xb"], ["yb"], domain=NC, **attrs),
                     helper.make_node("ReorderOutput", ["yb"], ["y"], domain=NC, channels=c)],
                    [("x", [n, c, h, w])], ["y"], [], [NC])
    plain = model([helper.make_node(op, ["x"], ["y"], **attrs)], [("x", [n, c, h, w])], ["y"], [])
    return blocked, plain, feeds


POOL_CASES = [
    ("MaxPool", 1, 64, 112, 112, dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ("MaxPool", 2, 20, 9, 10, dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)),
    ("MaxPool", 1, 16, 11, 7, dict(kernel_shape=[3, 2], strides=[1, 2], pads=[0, 1, 2, 0], dilations=[2, 1])),
    # groups of 4 inside pixels and a remainder on each side; no pixel inside; ceil_mode past the end
    ("MaxPool", 1, 24, 13, 31, dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 2, 1, 1])),
    ("MaxPool", 1, 16, 6, 3, dict(kernel_shape=[5, 5], pads=[2, 2, 2, 2])),
    ("MaxPool", 2, 16, 9, 23, dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1, dilations=[1, 2])),
    ("GlobalAveragePool", 2, 40, 7, 5, {}),
    ("GlobalAveragePool", 1, 2048, 7, 7, {}),
    # Inception's 3x3 stride-1 pool (its Pad folded in) on 35 x 35, with and without the padding counted
    ("AveragePool", 1, 48, 35, 35, dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1)),
    ("AveragePool", 2, 20, 9, 10, dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])),
    ("AveragePool", 1, 16, 13, 31, dict(kernel_shape=[3, 2], strides=[2, 1], pads=[0, 1, 2, 0], count_include_pad=1)),
    # past the padded extent with ceil_mode: those taps never count
    ("AveragePool", 2, 16, 9, 23, dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 0, 0, 1], ceil_mode=1,
                                       count_include_pad=1)),
    ("AveragePool", 1, 24, 6, 3, dict(kernel_shape=[5, 5], pads=[2, 2, 2, 2])),
    ("AveragePool", 1, 16, 8, 8, dict(kernel_shape=[2, 2], strides=[2, 2])),
]


@pytest.mark.parametrize("case", range(len(POOL_CASES)))
def test_blocked_pool_matches_pool(case):
    blocked, plain, feeds = pool_case(*POOL_CASES[case], seed=case)
    want = ort_run(plain, feeds)[0]
    got = Session(blocked, opt_level=0, threads=2).run(feeds)[0]
    assert got.shape == want.shape
    close(got, want, "pool case %d" % case)


@pytest.mark.parametrize("case", [c for c in range(len(POOL_CASES)) if POOL_CASES[c][0] == "MaxPool"])
def test_blocked_max_pool_same_bits(case):
    """the blocked MaxPool takes u > v ? u : v tap by tap as pool.c does
    (VMAXPS): NaN never taken over what came before, +0 not over -0 nor
    -0 over +0, infinities; the same bits as the NCHW kernel"""
    blocked, plain, feeds = pool_case(*POOL_CASES[case], seed=case)
    x = feeds["x"]
    rng = np.random.default_rng(case)
    special = np.array([np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf], np.float32)
    pick = rng.random(x.shape) < 0.3
    x[pick] = special[rng.integers(0, len(special), pick.sum())]
    got = Session(blocked, opt_level=0, threads=2).run(feeds)[0]
    want = Session(plain, opt_level=0).run(feeds)[0]
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("case", [c for c in range(len(POOL_CASES)) if POOL_CASES[c][0] == "AveragePool"])
def test_blocked_average_pool_same_bits(case):
    """the blocked AveragePool sums each window in pool.c's order and divides
    by its count: the same bits as the NCHW kernel, edges and all"""
    blocked, plain, feeds = pool_case(*POOL_CASES[case], seed=case)
    np.testing.assert_array_equal(Session(blocked, opt_level=0, threads=2).run(feeds)[0],
                                  Session(plain, opt_level=0).run(feeds)[0])


def test_reorder_round_trip_is_exact():
    x = np.random.default_rng(1).standard_normal((2, 37, 5, 19)).astype(np.float32)
    m = model([helper.make_node("ReorderInput", ["x"], ["b"], domain=NC),
               helper.make_node("ReorderOutput", ["b"], ["y"], domain=NC, channels=37)],
              [("x", list(x.shape))], ["y"], [], [NC])
    np.testing.assert_array_equal(Session(m, opt_level=0).run({"x": x})[0], x)


@pytest.mark.parametrize("want", [8, 16, 5])
def test_reorder_block_attribute(want, block):
    """ReorderInput's block: 8 runs on any CPU with the kernels, 16 needs
    AVX-512, others are errors; a Conv prepared for this CPU's block refuses
    blocks of the other size"""
    x = np.random.default_rng(2).standard_normal((1, 20, 3, 5)).astype(np.float32)
    m = model([helper.make_node("ReorderInput", ["x"], ["b"], domain=NC, block=want),
               helper.make_node("ReorderOutput", ["b"], ["y"], domain=NC, channels=20)],
              [("x", list(x.shape))], ["y"], [], [NC])
    if want == 5:
        with pytest.raises(EngineError, match="block must be 8 or 16"):
            Session(m, opt_level=0).run({"x": x})
        return
    if want == 16 and block == 8:
        with pytest.raises(EngineError, match="needs AVX-512"):
            Session(m, opt_level=0).run({"x": x})
        return
    np.testing.assert_array_equal(Session(m, opt_level=0).run({"x": x})[0], x)
    other = 24 - block  # the other block size: blocks of 16 need the kernels' AVX-512 (block 16)
    if other == 16:
        return
    w = numpy_helper.from_array(np.ones((8, 20, 1, 1), np.float32), "w")
    conv = model([helper.make_node("ReorderInput", ["x"], ["b"], domain=NC, block=other),
                  helper.make_node("Conv", ["b", "w"], ["c"], domain=NC, kernel_shape=[1, 1]),
                  helper.make_node("ReorderOutput", ["c"], ["y"], domain=NC, channels=8)],
                 [("x", list(x.shape))], ["y"], [w], [NC])
    with pytest.raises(EngineError, match=r"X must be a float tensor \[N, C/%d, H, W, %d\]" % (block, block)):
        Session(conv, opt_level=0).run({"x": x})


@pytest.mark.parametrize("bad", ["channels", "blocks", "z_shape", "rank", "nchw_channels"])
def test_blocked_kernels_reject_bad_input(bad):
    """a model may hold these operators itself: wrong shapes are errors, not crashes"""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array((rng.standard_normal((16, 32, 3, 3))).astype(np.float32), "w")
    if bad == "channels":
        nodes = [helper.make_node("ReorderInput", ["x"], ["b"], domain=NC),
                 helper.make_node("ReorderOutput", ["b"], ["y"], domain=NC, channels=40)]
        shape, inits = [1, 16, 4, 4], []
    elif bad == "blocks":
        nodes = [helper.make_node("ReorderInput", ["x"], ["b"], domain=NC),
                 helper.make_node("Conv", ["b", "w"], ["c"], domain=NC, kernel_shape=[3, 3]),
                 helper.make_node("ReorderOutput", ["c"], ["y"], domain=NC, channels=16)]
        shape, inits = [1, 48, 4, 4], [w]
    elif bad == "z_shape":
        nodes = [helper.make_node("ReorderInput", ["x"], ["b"], domain=NC),
                 helper.make_node("Conv", ["b", "w", "", "b"], ["c"], domain=NC, kernel_shape=[3, 3]),
                 helper.make_node("ReorderOutput", ["c"], ["y"], domain=NC, channels=16)]
        shape, inits = [1, 32, 4, 4], [w]
    elif bad == "nchw_channels":
        nodes = [helper.make_node("Conv", ["x", "w"], ["c"], domain=NC, kernel_shape=[3, 3], nchw_input=1),
                 helper.make_node("ReorderOutput", ["c"], ["y"], domain=NC, channels=16)]
        shape, inits = [1, 3, 4, 4], [w]  # W wants 32 channels
    else:
        nodes = [helper.make_node("MaxPool", ["x"], ["y"], domain=NC, kernel_shape=[2, 2])]
        shape, inits = [1, 16, 4, 4], []
    m = model(nodes, [("x", shape)], ["y"], inits, [NC])
    # a plain input is checked as Conv checks it, in Conv's words
    with pytest.raises(EngineError, match="not the 3 channels of X" if bad == "nchw_channels" else "onnx_pg.nchwc"):
        Session(m, opt_level=0).run({"x": rng.standard_normal(shape).astype(np.float32)})


class Net:
    """a float CNN built node by node (BatchNormalization folds into the convs)"""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, p):
        self.n += 1
        return "%s%d" % (p, self.n)

    def const(self, a):
        nm = self.name("k")
        self.inits.append(numpy_helper.from_array(np.asarray(a, np.float32), nm))
        return nm

    def conv(self, x, c, m, k=3, stride=1, relu=True, group=1):
        y = self.name("c")
        w = self.const(self.rng.standard_normal((m, c // group, k, k)) * (1.5 / np.sqrt(c * k * k / group)))
        self.nodes.append(helper.make_node("Conv", [x, w, self.const(self.rng.standard_normal(m) * 0.1)], [y],
                                           kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4,
                                           group=group))
        bn = self.name("bn")
        self.nodes.append(helper.make_node("BatchNormalization",
                                           [y, self.const(1 + 0.1 * self.rng.standard_normal(m)),
                                            self.const(0.1 * self.rng.standard_normal(m)),
                                            self.const(0.1 * self.rng.standard_normal(m)),
                                            self.const(1 + 0.1 * self.rng.random(m))], [bn]))
        if not relu:
            return bn
        r = self.name("r")
        self.nodes.append(helper.make_node("Relu", [bn], [r]))
        return r

    def op(self, op, ins, **attrs):
        y = self.name(op)
        self.nodes.append(helper.make_node(op, ins, [y], **attrs))
        return y

    def bottleneck(self, x, c, mid, out, stride):
        y = self.conv(self.conv(self.conv(x, c, mid, k=1), mid, mid, stride=stride), mid, out, k=1, relu=False)
        skip = x if (stride == 1 and c == out) else self.conv(x, c, out, k=1, stride=stride, relu=False)
        return self.op("Relu", [self.op("Add", [y, skip])])


def resnet_like(seed, h):
    """stem (3 channels, read as NCHW), max pool, bottlenecks with a stride-2
    downsample, 3x3 stride-1 layers (in blocks of 16 by Winograd on planes
    of 100 pixels and more, else directly), a head with global average
    pooling, Flatten and Gemm"""
    net = Net(seed)
    x = net.conv("x", 3, 32, k=7, stride=2)
    x = net.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    x = net.bottleneck(x, 32, 16, 64, 1)
    x = net.bottleneck(x, 64, 16, 64, 1)
    x = net.bottleneck(x, 64, 32, 128, 2)
    x = net.op("GlobalAveragePool", [x])
    x = net.op("Flatten", [x])
    y = net.op("Gemm", [x, net.const(net.rng.standard_normal((10, 128)) * 0.1)], transB=1)
    net.nodes.append(helper.make_node("Identity", [y], ["y"]))
    return model(net.nodes, [("x", [None, 3, h, h])], ["y"], net.inits)


@pytest.mark.parametrize("batch,h,threads", [(1, 64, 1), (2, 40, 2), (1, 33, 1), (1, 96, 2)])
def test_pass_same_outputs(batch, h, threads, block):
    m = resnet_like(batch + h, h)
    feeds = {"x": np.random.default_rng(h).standard_normal((batch, 3, h, h)).astype(np.float32)}
    want = ort_run(m, feeds)[0]
    s = Session(m, opt_level=3, threads=threads)
    got = s.run(feeds)[0]
    close(got, want, "level 3")
    close(Session(m, opt_level=0).run(feeds)[0], want, "level 0")
    ops = [op for _, op, _ in s.profile(feeds)]
    assert "ReorderInput" in ops and "MaxPool" in ops and "GlobalAveragePool" in ops, ops
    # the stem blocked, reading its NCHW input, the max pool reading its output;
    # every other convolution blocked, the 3x3 stride-1 ones included
    assert ops[:2] == ["Conv", "MaxPool"], ops
    assert ops.count("Conv") >= 11, ops
    assert ops.count("FusedConv") == 0, ops


def both_ways(case, seed):
    """conv case's blocked model run directly (winograd = 0) and by
    Winograd (1), each checked against onnxruntime: ({0: out, 1: out}, the
    plain model, its feeds)"""
    from onnx import load_from_string
    blocked, plain, feeds = conv_case(*case, seed=seed)
    want = ort_run(plain, feeds)[0]
    outs = {}
    for wino in (0, 1):
        p = load_from_string(blocked)
        conv = next(n for n in p.graph.node if n.op_type == "Conv")
        conv.attribute.append(helper.make_attribute("winograd", wino))
        outs[wino] = Session(p.SerializeToString(), opt_level=0).run(feeds)[0]
        close(outs[wino], want, "case %s, winograd %d" % (case, wino))
    return outs, plain, feeds


@pytest.mark.parametrize("h", [7, 9, 10, 16])
def test_small_planes_run_directly(h, block):
    """in blocks of 16, a 3x3 stride-1 layer runs by Winograd's F(4x4, 3x3)
    unless the pass marks it winograd = 0, which it does for output planes
    under 100 pixels (9x9 and less); both ways match onnxruntime, and the
    pass's session gives the bits of the explicit model it chose"""
    if block == 8:
        pytest.skip("no blocked Winograd in blocks of 8: every 3x3 layer runs directly")
    outs, plain, feeds = both_ways((1, 64, 64, h, h, 3, 1, [1, 1, 1, 1], 1, True, False, "Relu"), h)
    assert not np.array_equal(outs[0], outs[1]), "the two ways should round differently"
    got = Session(plain, opt_level=3).run(feeds)[0]
    np.testing.assert_array_equal(got, outs[1 if h * h >= 100 else 0])


@pytest.mark.parametrize("c", [512, 528])
def test_many_channels_run_directly(c, block):
    """a 3x3 stride-1 layer with more than 512 input channels runs directly
    whatever its plane (the Winograd kernel's transformed weights, read
    once per few tiles, cost more than they save); 512 still by Winograd"""
    if block == 8:
        pytest.skip("no blocked Winograd in blocks of 8: every 3x3 layer runs directly")
    outs, plain, feeds = both_ways((1, c, 32, 12, 12, 3, 1, [1, 1, 1, 1], 1, True, False, "Relu"), c)
    got = Session(plain, opt_level=3).run(feeds)[0]
    np.testing.assert_array_equal(got, outs[1 if c <= 512 else 0])


@pytest.mark.parametrize("c,h,wino", [(256, 14, 1), (384, 14, 0), (384, 28, 1), (320, 12, 0)])
def test_few_tiles_run_directly(c, h, wino, block):
    """a 3x3 stride-1 layer whose transformed weights (36 x C x M floats)
    come to more than 1 MB per 4x4 tile of its known output plane runs
    directly: C = M = 384 at 14x14 (16 tiles, 1.3 MB each), not at 28x28
    (49 tiles); 256 at 14x14 (0.6 MB) by Winograd"""
    if block == 8:
        pytest.skip("no blocked Winograd in blocks of 8: every 3x3 layer runs directly")
    outs, plain, feeds = both_ways((1, c, c, h, h, 3, 1, [1, 1, 1, 1], 1, True, False, "Relu"), c + h)
    got = Session(plain, opt_level=3).run(feeds)[0]
    np.testing.assert_array_equal(got, outs[wino])


def mobilenet_like(seed, h):
    """inverted residual blocks: 1x1 expand (24 input channels: padded to 32
    in the blocks), 3x3 depthwise (stride 1 and 2), 1x1
    project, a residual add; a grouped conv of 4 channels a group (a
    blocked GroupConv)"""
    net = Net(seed)
    x = net.conv("x", 3, 24, k=3, stride=2)
    e = net.conv(x, 24, 96, k=1)
    d = net.conv(e, 96, 96, k=3, group=96)
    p = net.conv(d, 96, 24, k=1, relu=False)
    x = net.op("Add", [x, p])
    e = net.conv(x, 24, 64, k=1)
    d = net.conv(e, 64, 64, k=3, stride=2, group=64)
    x = net.conv(d, 64, 32, k=1, relu=False)
    x = net.conv(x, 32, 32, k=3, group=8)
    x = net.op("GlobalAveragePool", [x])
    net.nodes.append(helper.make_node("Flatten", [x], ["y"]))
    return model(net.nodes, [("x", [None, 3, h, h])], ["y"], net.inits)


@pytest.mark.parametrize("h,threads", [(48, 1), (37, 2)])
def test_pass_depthwise_network(h, threads):
    m = mobilenet_like(h, h)
    feeds = {"x": np.random.default_rng(h).standard_normal((2, 3, h, h)).astype(np.float32)}
    want = ort_run(m, feeds)[0]
    s = Session(m, opt_level=3, threads=threads)
    close(s.run(feeds)[0], want, "level 3")
    ops = [op for _, op, _ in s.profile(feeds)]
    assert ops.count("DepthwiseConv") == 2, ops
    # the group-8 conv blocked too
    assert ops.count("FusedConv") == 0 and ops.count("GroupConv") == 1, ops


def hard_swish_net(seed, h):
    """MobileNetV3's pattern: convolutions, a depthwise one and a residual
    add followed by HardSwish; one HardSwish read twice (it stays) and one
    after a Relu'd convolution (it stays: one activation per kernel)"""
    net = Net(seed)
    x = net.op("HardSwish", [net.conv("x", 3, 32, k=3, stride=2, relu=False)])
    e = net.op("HardSwish", [net.conv(x, 32, 48, k=1, relu=False)])
    d = net.op("HardSwish", [net.conv(e, 48, 48, k=3, group=48, relu=False)])
    p = net.conv(d, 48, 32, k=1, relu=False)
    r = net.op("HardSwish", [net.op("Add", [x, p])])
    twice = net.op("HardSwish", [net.conv(r, 32, 32, k=3, relu=False)])
    a = net.conv(twice, 32, 32, k=1)
    b = net.op("Add", [twice, net.op("HardSwish", [a])])
    net.nodes.append(helper.make_node("GlobalAveragePool", [b], ["y"]))
    return model(net.nodes, [("x", [None, 3, h, h])], ["y"], net.inits)


def level3_ops(m, h, threads):
    """the level-3 session's ops on a batch of 2, its output checked against
    onnxruntime's and level 2's"""
    feeds = {"x": np.random.default_rng(h).standard_normal((2, 3, h, h)).astype(np.float32)}
    want = ort_run(m, feeds)[0]
    s = Session(m, opt_level=3, threads=threads)
    close(s.run(feeds)[0], want, "level 3")
    close(Session(m, opt_level=2, threads=threads).run(feeds)[0], want, "level 2")
    return [op for _, op, _ in s.profile(feeds)]


@pytest.mark.parametrize("h,threads", [(40, 1), (29, 2)])
def test_pass_absorbs_hard_swish(h, threads, block):
    ops = level3_ops(hard_swish_net(h, h), h, threads)
    # the stem's, the 1x1's, the depthwise one's and the residual's (Conv + Add) in
    # the kernels; the one read twice and the one after a Relu stay
    assert ops.count("HardSwish") == 2, ops
    assert ops.count("DepthwiseConv") == 1, ops


def gate_net(seed, h):
    """a squeeze-and-excitation block (MobileNetV3's): the depthwise output
    times a gate from its global average (1x1 convolutions, HardSigmoid),
    then a product of two chains of the same shape"""
    net = Net(seed)
    x = net.conv("x", 3, 24, k=3, stride=2)
    d = net.conv(x, 24, 24, k=3, group=24)
    g = net.op("GlobalAveragePool", [d])
    g = net.conv(net.conv(g, 24, 16, k=1), 16, 24, k=1, relu=False)
    g = net.op("HardSigmoid", [g], alpha=1.0 / 6, beta=0.5)
    y = net.op("Mul", [d, g])
    p = net.conv(y, 24, 32, k=1, relu=False)
    q = net.conv(y, 24, 32, k=3, relu=False)
    z = net.op("Mul", [q, p])
    net.nodes.append(helper.make_node("GlobalAveragePool", [net.conv(z, 32, 16, k=1)], ["y"]))
    return model(net.nodes, [("x", [None, 3, h, h])], ["y"], net.inits)


@pytest.mark.parametrize("h,threads", [(32, 1), (27, 2)])
def test_pass_keeps_gates_blocked(h, threads, block):
    ops = level3_ops(gate_net(h, h), h, threads)
    # both products on the blocks: the stem reads the input as it is, and the
    # chain leaves the blocks once, for the output
    assert ops.count("Mul") == 2, ops
    assert ops.count("ReorderInput") == 0 and ops.count("ReorderOutput") == 1, ops


def inception_like(seed, h, pool_branch=32, last=48):
    """two Inception-v3 modules: branches of 1x1, 1x1 then 3x3, and a 3x3
    average pool (PyTorch's export: Pad, then AveragePool with no padding)
    then 1x1, concatenated along the channels; the second module reads the
    first's Concat with its convolutions and its pool"""
    net = Net(seed)
    x = net.conv("x", 3, 32, k=3, stride=2)
    c = 32
    for _ in range(2):
        a = net.conv(x, c, 32, k=1)
        b = net.conv(net.conv(x, c, 16, k=1), 16, last, k=3)
        p = net.op("Pad", [x, net.name("pads")], mode="constant")
        net.inits.append(numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), net.nodes[-1].input[1]))
        p = net.conv(net.op("AveragePool", [p], kernel_shape=[3, 3], strides=[1, 1]), c, pool_branch, k=1)
        x = net.op("Concat", [a, p, b], axis=1)
        c = 32 + pool_branch + last
    net.nodes.append(helper.make_node("GlobalAveragePool", [net.conv(x, c, 16, k=1)], ["y"]))
    return model(net.nodes, [("x", [None, 3, h, h])], ["y"], net.inits)


@pytest.mark.parametrize("h,threads", [(31, 1), (24, 2)])
def test_pass_keeps_modules_blocked(h, threads, block):
    """Concat of blocked branches stays blocked, and so do the pools that read
    it; the last input's channels need not fill a block (24 in blocks of 16)"""
    ops = level3_ops(inception_like(h, h), h, threads)
    assert ops.count("Concat") == 2 and ops.count("AveragePool") == 2, ops
    assert ops.count("ReorderInput") == 0 and ops.count("ReorderOutput") == 1, ops
    assert "Pad" not in ops, ops
    ops = level3_ops(inception_like(h, h, last=24), h, threads)
    assert ops.count("ReorderInput") == 0 and ops.count("ReorderOutput") == 1, ops


def test_pass_leaves_partial_blocks_in_concat(block):
    """an input before the last whose channels do not fill its blocks: the
    Concat stays NCHW (its blocks would leave a gap of zeros inside)"""
    ops = level3_ops(inception_like(20, 20, pool_branch=20), 20, 1)
    assert ops.count("ReorderOutput") > 1, ops


def efficientnet_like(seed, h):
    """EfficientNet's MBConv as PyTorch exports it: SiLU as Sigmoid then Mul
    after the stem, the expansion and the depthwise convolution, a
    squeeze-and-excitation gate whose 1x1 convolutions have 4 channels in the
    middle (too few for the blocks), ending in a Sigmoid"""
    net = Net(seed)

    def silu(v):
        return net.op("Mul", [v, net.op("Sigmoid", [v])])

    x = silu(net.conv("x", 3, 16, k=3, stride=2, relu=False))
    e = silu(net.conv(x, 16, 48, k=1, relu=False))
    d = silu(net.conv(e, 48, 48, k=3, group=48, relu=False))
    g = net.op("GlobalAveragePool", [d])
    g = silu(net.conv(g, 48, 4, k=1, relu=False))
    g = net.op("Sigmoid", [net.conv(g, 4, 48, k=1, relu=False)])
    p = net.conv(net.op("Mul", [d, g]), 48, 24, k=1, relu=False)
    net.nodes.append(helper.make_node("GlobalAveragePool", [p], ["y"]))
    return model(net.nodes, [("x", [None, 3, h, h])], ["y"], net.inits)


@pytest.mark.parametrize("h,threads", [(32, 1), (27, 2)])
def test_pass_absorbs_silu(h, threads, block):
    """every Sigmoid-then-Mul of a blocked convolution's output becomes its
    activation, the gate's Sigmoid too (its convolution has 4 input
    channels: NCHW FusedConv), and the gate is reordered into blocks for the
    Mul, so the chain stays blocked"""
    ops = level3_ops(efficientnet_like(h, h), h, threads)
    assert "Sigmoid" not in ops and ops.count("Mul") == 1, ops
    # out for the gate's NCHW convolution and at the end; in for the gate
    assert ops.count("ReorderOutput") == 2 and ops.count("ReorderInput") == 1, ops


def densenet_like(seed, h, stats_fed=False):
    """DenseNet's dense block and transition: each layer normalizes the Concat
    of the features so far (BatchNormalization, Relu), a 1x1 then a 3x3
    convolution add 16 more; a transition normalizes, convolves and average
    pools; the head normalizes before global pooling.  stats_fed: the first
    normalization's statistics are graph inputs (not constants)"""
    net = Net(seed)
    feats = [net.op("MaxPool", [net.conv("x", 3, 32, k=3, stride=2)], kernel_shape=[3, 3], strides=[2, 2],
                    pads=[1, 1, 1, 1])]
    c = 32
    extra = []

    def norm_relu(v, ch, fed=False):
        names = []
        for i, arr in enumerate((1 + 0.1 * net.rng.standard_normal(ch), 0.1 * net.rng.standard_normal(ch),
                                 0.1 * net.rng.standard_normal(ch), 1 + 0.1 * net.rng.random(ch))):
            if fed:
                names.append("stat%d" % i)
                extra.append(("stat%d" % i, arr.astype(np.float32)))
            else:
                names.append(net.const(arr))
        return net.op("Relu", [net.op("BatchNormalization", [v] + names, epsilon=1e-3)])

    for layer in range(3):
        x = net.op("Concat", feats, axis=1) if len(feats) > 1 else feats[0]
        x = norm_relu(x, c, fed=stats_fed and layer == 1)
        feats.append(net.conv(net.conv(x, c, 32, k=1), 32, 16, k=3, relu=False))
        c += 16
    x = net.op("Concat", feats, axis=1)
    x = net.op("AveragePool", [net.conv(norm_relu(x, c), c, 32, k=1, relu=False)], kernel_shape=[2, 2],
               strides=[2, 2])
    net.nodes.append(helper.make_node("GlobalAveragePool", [norm_relu(x, 32)], ["y"]))
    return model(net.nodes, [("x", [None, 3, h, h])] + [(n, [len(a)]) for n, a in extra], ["y"], net.inits), extra


@pytest.mark.parametrize("h,threads", [(32, 1), (26, 2)])
def test_pass_normalizes_blocks(h, threads, block):
    """a BatchNormalization of a blocked chain (with constant statistics)
    becomes a 1x1 DepthwiseConv on the blocks with its Relu, so DenseNet's
    layers stay blocked; one whose statistics are fed stays NCHW"""
    m, _ = densenet_like(h, h)
    ops = level3_ops(m, h, threads)
    assert "BatchNormalization" not in ops and "Relu" not in ops, ops
    assert ops.count("DepthwiseConv") == 5 and ops.count("Concat") == 3, ops
    assert ops.count("ReorderInput") == 0 and ops.count("ReorderOutput") == 1, ops
    m, extra = densenet_like(h, h, stats_fed=True)
    feeds = {"x": np.random.default_rng(h).standard_normal((2, 3, h, h)).astype(np.float32)}
    feeds.update(dict(extra))
    s = Session(m, opt_level=3, threads=threads)
    close(s.run(feeds)[0], ort_run(m, feeds)[0], "statistics fed")
    assert [op for _, op, _ in s.profile(feeds)].count("BatchNormalization") == 1


@pytest.mark.parametrize("shapes", [((1, 2, 3, 4, 8), (1, 1, 3, 4, 8)), ((2, 1, 3, 4, 8), (2, 3, 3, 4, 8), (2, 0, 3, 4, 8)),
                                    ((1, 2, 3, 4, 8), (1, 1, 3, 5, 8)), ((1, 2, 3, 4, 8), (2, 1, 3, 4, 8)),
                                    ((1, 2, 3, 4, 8), (1, 1, 3, 4, 16)), ((1, 2, 3, 4), (1, 1, 3, 4))])
def test_blocked_concat_shapes(shapes):
    """onnx_pg.nchwc Concat (a model may contain it): the blocks of inputs with
    the same batch, plane and block one after the other; anything else an
    error"""
    rng = np.random.default_rng(len(shapes))
    xs = {"x%d" % i: rng.standard_normal(sh).astype(np.float32) for i, sh in enumerate(shapes)}
    m = model([helper.make_node("Concat", list(xs), ["y"], domain=NC, axis=1)],
              [(k, list(v.shape)) for k, v in xs.items()], ["y"], [], [NC])
    first = shapes[0]
    ok = all(len(sh) == 5 and sh[0] == first[0] and sh[2:] == first[2:] for sh in shapes)
    if not ok:
        with pytest.raises(EngineError, match="onnx_pg.nchwc Concat"):
            Session(m, opt_level=0).run(xs)
        return
    np.testing.assert_array_equal(Session(m, opt_level=0, threads=2).run(xs)[0], np.concatenate(list(xs.values()), 1))


@pytest.mark.parametrize("shapes", [((1, 2, 3, 4, 8), (1, 2, 1, 1, 8)), ((1, 2, 3, 4, 8), (1, 2, 3, 4, 8)),
                                    ((1, 2, 1, 1, 8), (1, 2, 3, 4, 8)), ((2, 2, 3, 4, 8), (1, 2, 1, 1, 8)),
                                    ((1, 2, 3, 4, 8), (3, 2, 1, 1, 8)), ((3, 2, 3, 4, 8), (3, 2, 3, 4, 8)),
                                    ((2, 2, 3, 4, 8), (3, 2, 1, 1, 8)),
                                    ((1, 2, 3, 4, 8), (1, 3, 1, 1, 8)), ((1, 2, 3, 4, 8), (1, 2, 3, 1, 8)),
                                    ((1, 2, 3, 4, 8), (1, 2, 1, 1, 16)), ((1, 2, 3, 4), (1, 2, 1, 1))])
def test_blocked_mul_shapes(shapes):
    """onnx_pg.nchwc Mul (a model may contain it): the same blocks, batches
    equal or one of them 1, and the same plane or one of them 1 x 1, as numpy
    broadcasts them; anything else an error"""
    a_shape, b_shape = shapes
    rng = np.random.default_rng(len(a_shape))
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    m = model([helper.make_node("Mul", ["a", "b"], ["y"], domain=NC)],
              [("a", list(a_shape)), ("b", list(b_shape))], ["y"], [], [NC])
    ok = (len(a_shape) == 5 and a_shape[1] == b_shape[1] and a_shape[4] == b_shape[4] and
          (a_shape[0] == b_shape[0] or 1 in (a_shape[0], b_shape[0])) and
          (a_shape[2:4] == b_shape[2:4] or a_shape[2:4] == (1, 1) or b_shape[2:4] == (1, 1)))
    if not ok:
        with pytest.raises(EngineError, match="onnx_pg.nchwc Mul"):
            Session(m, opt_level=0).run({"a": a, "b": b})
        return
    np.testing.assert_array_equal(Session(m, opt_level=0, threads=2).run({"a": a, "b": b})[0], a * b)


@pytest.mark.parametrize("case", [(1, 32, 12, 10, 3, 1, [1, 1, 1, 1], 1, True, False, "Clip"),
                                  (1, 48, 13, 9, 3, 1, [1, 1, 1, 1], 1, True, False, "SiLU"),
                                  (1, 24, 10, 10, 5, 2, [2, 2, 2, 2], 1, True, True, "Sigmoid"),
                                  (2, 40, 9, 14, 3, 2, [1, 0, 1, 2], 1, False, True, None),
                                  (1, 16, 11, 11, 5, 1, [4, 4, 4, 4], 2, True, True, "HardSigmoid"),
                                  (1, 96, 7, 29, 3, 1, [0, 0, 0, 0], 1, True, False, "Relu"),
                                  # interiors of 7 and 31 pixels: a group of 8 must stop short of the edge
                                  (1, 16, 6, 9, 3, 1, [1, 1, 1, 1], 1, True, False, "Relu"),
                                  (1, 48, 5, 33, 3, 1, [1, 1, 1, 1], 1, False, False, None),
                                  # 784 output pixels and more on 2 threads: tasks a row after another
                                  (2, 40, 30, 29, 3, 1, [1, 1, 1, 1], 1, True, True, "Clip"),
                                  (1, 48, 60, 57, 3, 2, [1, 1, 1, 1], 1, True, False, "Relu"),
                                  # MNASNet's 5x5 layers: rows of 7 and 14 with two outputs at each end
                                  # lacking taps, in masked groups; stride 2; a 7x7 kernel (runtime width)
                                  (1, 40, 7, 7, 5, 1, [2, 2, 2, 2], 1, True, False, "Relu"),
                                  (1, 24, 14, 14, 5, 1, [2, 2, 2, 2], 1, True, True, None),
                                  (2, 32, 28, 27, 5, 2, [2, 2, 2, 2], 1, False, False, "Relu"),
                                  (1, 16, 9, 12, 7, 1, [3, 3, 3, 3], 1, True, True, "Clip"),
                                  (1, 16, 6, 20, 5, 1, [2, 2, 2, 2], 2, True, False, None),
                                  # masked groups in a row whose span ends in a cut output (3 wide)
                                  (1, 16, 15, 21, 3, 2, [1, 3, 0, 1], 2, True, False, "Relu"),
                                  # those rows read from a ring of zero-padded input rows: dilated at
                                  # stride 2 with uneven pads; rows wholly in the padding; a large plane
                                  # (tasks a row after another on 2 threads, the ring refilled)
                                  (2, 24, 17, 23, 5, 2, [3, 1, 2, 4], 2, False, True, None),
                                  (1, 16, 3, 10, 5, 1, [6, 2, 6, 2], 1, True, False, "Relu"),
                                  (1, 32, 36, 30, 5, 1, [2, 2, 2, 2], 1, True, True, "Clip"),
                                  # no ring: a kernel taller than 16 rows, a ring past 256 KB (masked)
                                  (1, 16, 20, 12, (17, 5), 1, [8, 2, 8, 2], 1, True, False, None),
                                  (1, 16, 20, 250, 5, 1, [8, 8, 8, 8], 4, True, False, "Relu"),
                                  # 1x1: a per-channel affine map (a BatchNormalization), pixel by pixel
                                  (2, 40, 7, 9, 1, 1, [0, 0, 0, 0], 1, True, True, "Relu"),
                                  (1, 24, 60, 50, 1, 1, [0, 0, 0, 0], 1, True, False, "SiLU"),
                                  (1, 16, 6, 6, 1, 2, [0, 0, 0, 0], 1, False, False, None)])
@pytest.mark.parametrize("threads", [1, 2])
def test_blocked_depthwise_matches_conv(case, threads):
    n, c, h, w, k, stride, pads, dilation, bias, z, act = case
    blocked, plain, feeds = conv_case(n, c, c, h, w, k, stride, pads, dilation, bias, z, act, seed=c, depthwise=True)
    want = ort_run(plain, feeds)[0]
    got = Session(blocked, opt_level=0, threads=threads).run(feeds)[0]
    assert got.shape == want.shape
    close(got, want, "depthwise %s" % (case,))


# w, k, stride, pads, dilation, z, act: a row's ends.  A 3-wide kernel runs
# a row's outputs in groups (8 and a shorter last one) whose first and last
# output may lack one tap (cut by mask); outputs lacking more, or any tap of
# a wider kernel, go one at a time.
ROW_END_CASES = (
    [(w, 3, 1, [1, 1, 1, 1], 1, w % 3 == 0, "Clip" if w % 2 else None) for w in (1, 2, 3, 4, 5, 7, 8, 9, 10, 16, 17, 18)]
    + [(w, 3, 2, [1, 1, 1, 1], 1, False, "Relu") for w in (1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 19)]
    + [(9, 3, 1, [1, 1, 1, 0], 1, True, None),      # the left end cut, the right end inside
       (9, 3, 1, [1, 0, 1, 1], 1, False, None),     # the other way round
       (10, 3, 2, [0, 1, 0, 1], 1, False, None),    # stride 2, the right end cut
       (12, 3, 1, [2, 2, 2, 2], 1, False, "Relu"),  # two outputs at each end, the outer ones lacking two taps
       (12, 3, 1, [1, 1, 1, 1], 2, True, None),     # dilated: the first output cut, the last lacking two taps
       (12, 3, 1, [2, 2, 2, 2], 2, False, None),
       (11, (5, 3), 1, [2, 1, 2, 1], 1, True, "Clip"),  # 5 rows of 3 taps: the cut path on every row
       (11, (3, 5), 1, [1, 2, 1, 2], 1, False, None),   # 5 taps wide: the ends one output at a time
       (6, 3, 1, [0, 0, 0, 0], 1, False, None)])        # no padding: no end outputs


@pytest.mark.parametrize("case", ROW_END_CASES, ids=lambda c: "w%d-k%s-s%d-p%s-d%d" % (c[0], c[1], c[2],
                                                                                     "".join(map(str, c[3])), c[4]))
@pytest.mark.parametrize("threads", [1, 2])
def test_blocked_depthwise_row_ends(case, threads):
    w, k, stride, pads, dilation, z, act = case
    blocked, plain, feeds = conv_case(1, 20, 20, 5, w, k, stride, pads, dilation, True, z, act, seed=w,
                                      depthwise=True)
    want = ort_run(plain, feeds)[0]
    got = Session(blocked, opt_level=0, threads=threads).run(feeds)[0]
    assert got.shape == want.shape
    close(got, want, "depthwise %s" % (case,))


def test_pass_leaves_lower_levels_alone():
    m = resnet_like(3, 40)
    feeds = {"x": np.random.default_rng(0).standard_normal((1, 3, 40, 40)).astype(np.float32)}
    ops = [op for _, op, _ in Session(m, opt_level=2).profile(feeds)]
    assert "ReorderInput" not in ops, ops


def test_saving_needs_the_portable_graph():
    m = resnet_like(4, 40)
    with pytest.raises(EngineError, match="engine-private"):
        Session(m, opt_level=3).save()
    feeds = {"x": np.random.default_rng(0).standard_normal((1, 3, 40, 40)).astype(np.float32)}
    saved = Session(m, opt_level=3, portable=True).save()
    close(ort_run(saved, feeds)[0], ort_run(m, feeds)[0], "portable graph in onnxruntime")


@pytest.mark.parametrize("cin,cout,h", [(960, 320, 7), (960, 160, 7), (512, 1296, 7), (256, 1040, 9)])
def test_pointwise_groups_shared_by_threads(cin, cout, h):
    """layers of a few groups of output blocks (5 for 320 channels), as many
    tasks as groups: the groups left over once every thread has had its
    share are cut along the columns, one part a thread, into as many parts
    as whole tiles allow (49 columns on 4 threads: 3 parts).  Bit for bit
    the single-thread result on any number of threads."""
    net = Net(cin + cout + h)
    x = net.conv("x", 3, cin, k=1)
    y = net.conv(x, cin, cout, k=1, relu=False)
    net.nodes.append(helper.make_node("Identity", [y], ["y"]))
    m = model(net.nodes, [("x", [1, 3, h, h])], ["y"], net.inits)
    feeds = {"x": np.random.default_rng(h).standard_normal((1, 3, h, h)).astype(np.float32)}
    want = Session(m, opt_level=3, threads=1).run(feeds)[0]
    close(want, ort_run(m, feeds)[0], "one thread")
    for threads in (2, 3, 4, 5, 8):
        np.testing.assert_array_equal(Session(m, opt_level=3, threads=threads).run(feeds)[0], want,
                                      err_msg=f"{threads} threads")
