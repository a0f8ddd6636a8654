"""onnx_pg.nchwc GroupConv (src/kernels/cpu/conv_nchwc_group_kernels.h): a
convolution whose groups are narrower than a block, 2, 4 or 8 channels in
and out (M = C), on channel-blocked tensors; and the layout pass, which puts
it in place of such 3-wide layers (ResNeXt's, RegNet's).

Against onnxruntime running the plain Conv, over group widths, strides,
paddings, row widths around the kernel's groups of 8 outputs, channel
counts that leave a block partly empty, batches, bias, residual Z,
activations and the general path (other kernels, dilations, strides).
Tolerance as test_layout_nchwc's: rtol 1e-4, atol 1e-5 of the output's
scale.  Every test runs once per block size this CPU has."""
import numpy as np
import pytest
from onnx import helper

from oxengine import EngineError, Session
from test_layout_nchwc import BLOCKS, Net, block, close, conv_case, level3_ops, model, ort_run  # noqa: F401 (block: fixture)

pytestmark = pytest.mark.skipif(not BLOCKS, reason="the onnx_pg.nchwc kernels need AVX2 or AVX-512")


def group_case(c, cg, h, w, k=3, stride=1, pads=(1, 1, 1, 1), dilation=1, n=1, bias=True, z=False, act="Relu",
               seed=0):
    return conv_case(n, c, c, h, w, k, stride, list(pads), dilation, bias, z, act, seed=seed, group=c // cg,
                     blocked_op="GroupConv")


# c, cg, h, w, k, stride, pads, dilation, n, bias, z, act
CASES = [
    (128, 4, 14, 14, 3, 1, (1, 1, 1, 1), 1, 1, True, False, "Relu"),     # ResNeXt's stage 1, smaller
    (64, 2, 9, 11, 3, 1, (1, 1, 1, 1), 1, 2, True, True, None),          # groups of 2, a residual, 2 images
    (96, 4, 12, 13, 3, 2, (1, 1, 1, 1), 1, 1, False, False, "Clip"),     # stride 2
    (40, 4, 7, 7, 3, 1, (1, 1, 1, 1), 1, 1, True, True, "SiLU"),         # 40 channels: a block half empty
    (20, 2, 5, 17, 3, 2, (0, 1, 2, 0), 1, 1, True, False, "HardSigmoid"),  # asymmetric pads, act(0) != 0
    (32, 4, 6, 9, 3, 1, (2, 2, 2, 2), 1, 1, True, False, None),          # pads of 2: two outputs lacking taps
    (16, 4, 4, 6, 3, 1, (0, 0, 0, 0), 1, 1, False, False, "LeakyRelu"),  # no padding
    (24, 4, 8, 8, (5, 3), 1, (2, 1, 2, 1), 1, 1, True, False, "Relu"),   # 5 rows of 3 taps
    (24, 2, 7, 12, (1, 3), 2, (0, 1, 0, 1), 1, 1, True, True, "Sigmoid"),  # one row of taps, stride 2
    # the general path, an output at a time: 5x5, dilation 2, stride 3
    (32, 4, 11, 10, 5, 1, (2, 2, 2, 2), 1, 1, True, False, "Relu"),
    (16, 2, 9, 13, 3, 1, (2, 2, 2, 2), 2, 1, True, True, None),
    (48, 4, 10, 11, 3, 3, (1, 1, 1, 1), 1, 2, False, False, "Clip"),
    # 784 output pixels and more on 2 threads: tasks a row after another
    (32, 4, 30, 29, 3, 1, (1, 1, 1, 1), 1, 1, True, True, "Relu"),
    (16, 2, 60, 57, 3, 2, (1, 1, 1, 1), 1, 1, True, False, None),
]
# groups of 8: in blocks of 16 two a block; in blocks of 8 a whole block, each channel of a group
# broadcast from memory
CASES_8 = [
    (104, 8, 7, 7, 3, 1, (1, 1, 1, 1), 1, 1, True, False, "Relu"),       # RegNet's 104: a block half empty
    (256, 8, 12, 12, 3, 2, (1, 1, 1, 1), 1, 2, True, True, None),        # ResNeXt's stage 2 at stride 2
    (48, 8, 14, 15, 3, 1, (1, 1, 1, 1), 1, 1, False, False, "SiLU"),
    (16, 8, 9, 9, 3, 1, (1, 2, 0, 1), 2, 1, True, False, "Relu"),        # dilated: the general path
]
# groups of 16: blocks of 16 only (a whole block: broadcast from memory)
CASES_16 = [
    (64, 16, 14, 14, 3, 1, (1, 1, 1, 1), 1, 1, True, False, "Relu"),     # ResNeXt's 14x14 stage, smaller
    (48, 16, 9, 13, 3, 2, (1, 1, 1, 1), 1, 2, False, True, "Clip"),      # stride 2, a residual
    (32, 16, 7, 7, 3, 1, (0, 2, 1, 0), 1, 1, True, False, None),         # uneven pads
    (32, 16, 8, 9, 3, 3, (1, 1, 1, 1), 1, 1, True, True, "SiLU"),        # stride 3: the general path
]


def check(case, threads, seed):
    c, cg, h, w, k, stride, pads, dilation, n, bias, z, act = case
    blocked, plain, feeds = group_case(c, cg, h, w, k, stride, pads, dilation, n, bias, z, act, seed)
    want = ort_run(plain, feeds)[0]
    got = Session(blocked, opt_level=0, threads=threads).run(feeds)[0]
    assert got.shape == want.shape
    close(got, want, "GroupConv %s" % (case,))


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("threads", [1, 2])
def test_group_conv_matches_conv(case, threads, block):
    check(CASES[case], threads, case)


@pytest.mark.parametrize("case", range(len(CASES_8)))
@pytest.mark.parametrize("threads", [1, 2])
def test_group_conv_of_8_matches_conv(case, threads, block):
    check(CASES_8[case], threads, 100 + case)


@pytest.mark.parametrize("case", range(len(CASES_16)))
@pytest.mark.parametrize("threads", [1, 2])
def test_group_conv_of_16_matches_conv(case, threads, block):
    if block == 8:
        pytest.skip("groups of 16 are two blocks of 8: the blocked Conv's")
    check(CASES_16[case], threads, 200 + case)


@pytest.mark.parametrize("w", list(range(1, 19)) + [23, 31, 33])
@pytest.mark.parametrize("stride", [1, 2])
def test_group_conv_row_widths(w, stride, block):
    """a row's outputs go 8 at a time and a shorter last group, every group
    skipping its taps outside the row: widths around those sizes"""
    check((32, 4, 3, w, 3, stride, (1, 1, 1, 1), 1, 1, True, w % 2 == 0, "Clip" if w % 3 else None), 1, w)


@pytest.mark.parametrize("whole_block", [False, True])
def test_group_conv_same_bits_on_every_path(whole_block, block):
    """an output's products are added in the same order by the fast path
    (3 wide, stride 1) and the general one (a 3x3 kernel made 5 wide by
    zero columns runs there): the same bits where the zeros add nothing;
    groups of 4 (shuffled) and of a whole block (broadcast, another order)"""
    blocked, plain, feeds = group_case(32, block if whole_block else 4, 6, 10, act=None, seed=3)
    fast = Session(blocked, opt_level=0).run(feeds)[0]
    from onnx import load_from_string, numpy_helper
    p = load_from_string(blocked)
    wt = numpy_helper.to_array(next(t for t in p.graph.initializer if t.name == "w"))
    wide = np.zeros(wt.shape[:3] + (5,), np.float32)
    wide[..., 1:4] = wt
    p.graph.initializer.remove(next(t for t in p.graph.initializer if t.name == "w"))
    p.graph.initializer.append(numpy_helper.from_array(wide, "w"))
    conv = next(n for n in p.graph.node if n.op_type == "GroupConv")
    for a in conv.attribute:
        if a.name == "kernel_shape":
            a.ints[:] = [3, 5]
        if a.name == "pads":
            a.ints[:] = [1, 2, 1, 2]
    general = Session(p.SerializeToString(), opt_level=0).run(feeds)[0]
    close(general, ort_run(plain, feeds)[0], "the general path")
    # zero products added to a nonzero sum leave it as it is; the order of the others is the same
    np.testing.assert_array_equal(general, fast)


@pytest.mark.parametrize("c,m,group", [(24, 24, 8), (64, 64, 2), (16, 16, 16), (32, 16, 4)],
                         ids=["3-a-group", "two-blocks", "depthwise", "m-not-c"])
def test_group_conv_rejects_other_groups(c, m, group, block):
    """a model's own GroupConv with groups the kernels do not take (3 a
    group, 32 (more than a block), 1 (depthwise), M != C): an error naming it"""
    blocked, _, feeds = conv_case(1, c, m, 6, 6, 3, 1, [1, 1, 1, 1], 1, True, False, None, seed=1, group=group,
                                  blocked_op="GroupConv")
    with pytest.raises(EngineError, match="GroupConv: W must be"):
        Session(blocked, opt_level=0).run(feeds)


def regnet_like(seed, h):
    """RegNetY's blocks: 1x1, a 3x3 of groups of 8 (stride 2, then 1), a
    squeeze-and-excitation gate, 1x1, residual; 48 then 104 channels (a
    block of 16 half empty), and a 3x3 of groups of 4"""
    net = Net(seed)
    x = net.conv("x", 3, 32, k=3, stride=2)
    c_in = 32
    for width, stride in ((48, 2), (104, 1)):
        a = net.conv(x, c_in, width, k=1)
        b = net.conv(a, width, width, stride=stride, group=width // 8)
        s = net.op("GlobalAveragePool", [b])
        s = net.op("Relu", [net.op("Conv", [s, net.const(net.rng.standard_normal((16, width, 1, 1)) * 0.2)])])
        s = net.op("Sigmoid", [net.op("Conv", [s, net.const(net.rng.standard_normal((width, 16, 1, 1)) * 0.2)])])
        y = net.conv(net.op("Mul", [b, s]), width, width, k=1, relu=False)
        skip = net.conv(x, c_in, width, k=1, stride=stride, relu=False)
        x = net.op("Relu", [net.op("Add", [y, skip])])
        c_in = width
    x = net.conv(x, 104, 104, group=26)
    net.nodes.append(helper.make_node("GlobalAveragePool", [x], ["y"]))
    return model(net.nodes, [("x", [None, 3, h, h])], ["y"], net.inits)


@pytest.mark.parametrize("h,threads", [(32, 1), (29, 2)])
def test_pass_blocks_small_groups(h, threads, block):
    """the pass makes GroupConvs of the groups of 8 and of 4: no NCHW
    convolution is left, and the level-3 outputs match onnxruntime's"""
    ops = level3_ops(regnet_like(h, h), h, threads)
    assert ops.count("FusedConv") == 0, ops
    assert ops.count("GroupConv") == 3, ops


def test_pass_leaves_other_groups(block):
    """groups of 3 (not dividing a block) and 4-group layers 5 wide stay
    NCHW convolutions"""
    net = Net(5)
    x = net.conv("x", 3, 48, k=3, stride=2)
    x = net.conv(x, 48, 48, k=3, group=16)
    x = net.conv(x, 48, 48, k=5, group=12)
    net.nodes.append(helper.make_node("GlobalAveragePool", [x], ["y"]))
    ops = level3_ops(model(net.nodes, [("x", [None, 3, 20, 20])], ["y"], net.inits), 20, 1)
    assert ops.count("GroupConv") == 0 and ops.count("FusedConv") == 2, ops
