"""The channels-last layout pass (src/model/passes/layout_nhwc.c, level 3):
int8 convolution chains run as com.microsoft QLinearConv channels_last=1,
with QLinearAdd and MaxPool moved behind the Transposes and inverse
Transpose pairs removed.  Every model here must give bit-identical outputs
at level 3 (rewritten) and level 0 (as written), and the same as
onnxruntime within one quantization step; the profile shows that the
rewrite happened (NhwcMaxPool, few Transposes)."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from oxengine import Session

F, U8, I8, I32 = TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32
NP = {U8: np.uint8, I8: np.int8}
MS = "com.microsoft"


class Builder:
    def __init__(self, dt, seed):
        self.dt = dt
        self.rng = np.random.RandomState(seed)
        self.nodes, self.inits = [], []
        self.n = 0
        zp = 128 if dt == U8 else 0
        self.param("s_act", np.float32(0.05))
        self.param("z_act", NP[dt](zp) if dt == U8 else np.int8(3))

    def name(self, p):
        self.n += 1
        return "%s%d" % (p, self.n)

    def param(self, name, value):
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def conv(self, x, c, m, k=3, stride=1, pad=1, dilation=1, group=1, bias=True):
        w = self.param(self.name("w"), self.rng.randint(-20, 21, size=(m, c // group, k, k)).astype(np.int8))
        ws = self.param(self.name("ws"), (self.rng.rand(m) * 0.01 + 0.002).astype(np.float32))
        wz = self.param(self.name("wz"), np.zeros(m, np.int8))
        ins = [x, "s_act", "z_act", w, ws, wz, "s_act", "z_act"]
        if bias:
            ins.append(self.param(self.name("b"), self.rng.randint(-500, 500, size=m).astype(np.int32)))
        y = self.name("conv")
        self.nodes.append(helper.make_node("QLinearConv", ins, [y], name=y, kernel_shape=[k, k],
                                           strides=[stride, stride], pads=[pad] * 4,
                                           dilations=[dilation, dilation], group=group))
        return y

    def add(self, a, b):
        y = self.name("add")
        self.nodes.append(helper.make_node("QLinearAdd", [a, "s_act", "z_act", b, "s_act", "z_act", "s_act", "z_act"],
                                           [y], name=y, domain=MS))
        return y

    def max_pool(self, x, k=3, stride=2, pad=1, ceil=0):
        y = self.name("pool")
        self.nodes.append(helper.make_node("MaxPool", [x], [y], name=y, kernel_shape=[k, k],
                                           strides=[stride, stride], pads=[pad] * 4, ceil_mode=ceil))
        return y

    def model(self, inputs, outputs):
        g = helper.make_graph(self.nodes, "g", [helper.make_tensor_value_info(n, self.dt, s) for n, s in inputs],
                              [helper.make_tensor_value_info(o, self.dt, None) for o in outputs],
                              initializer=self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19), helper.make_opsetid(MS, 1)],
                              ir_version=9)
        return m.SerializeToString()


def resnet_like(dt, c_in):
    """stem conv (c_in channels: 3 takes the kernel-row-quad path), max pool,
    two residual blocks (the second with a stride-2 1x1 downsample), a
    dilated conv, and an add that broadcasts a [1, C, 1, 1] input."""
    b = Builder(dt, 7 + c_in)
    x = b.conv("X", c_in, 16, k=7, stride=2, pad=3)
    x = b.max_pool(x)
    y = b.conv(b.conv(x, 16, 16), 16, 16)
    x = b.add(y, x)
    y = b.conv(b.conv(x, 16, 24, stride=2), 24, 24)
    x = b.add(y, b.conv(x, 16, 24, k=1, stride=2, pad=0, bias=False))
    x = b.conv(x, 24, 24, dilation=2, pad=2)
    x = b.add(x, "C")
    return b.model([("X", [None, c_in, 40, 36]), ("C", [1, 24, 1, 1])], [x])


def grouped_then_pool(dt):
    """a grouped conv is left alone; an odd pool (ceil_mode, even kernel) after
    a converted conv; the chain's output is a graph output and also feeds
    another node"""
    b = Builder(dt, 3)
    x = b.conv("X", 5, 8)
    g = b.conv(x, 8, 8, group=2)
    p = b.max_pool(x, k=2, stride=2, pad=0, ceil=1)
    return b.model([("X", [1, 5, 11, 13])], [g, p, x])


def feeds(dt, shapes, seed):
    rng = np.random.RandomState(seed)
    lo, hi = (0, 256) if dt == U8 else (-128, 128)
    return {n: rng.randint(lo, hi, size=s).astype(NP[dt]) for n, s in shapes.items()}


CASES = {
    "resnet_like_u8_rgb": (lambda: resnet_like(U8, 3), {"X": [2, 3, 40, 36], "C": [1, 24, 1, 1]}),
    "resnet_like_u8_8ch": (lambda: resnet_like(U8, 8), {"X": [1, 8, 40, 36], "C": [1, 24, 1, 1]}),
    "resnet_like_i8_5ch": (lambda: resnet_like(I8, 5), {"X": [1, 5, 40, 36], "C": [1, 24, 1, 1]}),
    "grouped_then_pool_u8": (lambda: grouped_then_pool(U8), {"X": [1, 5, 11, 13]}),
    "grouped_then_pool_i8": (lambda: grouped_then_pool(I8), {"X": [1, 5, 11, 13]}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_layout_nhwc_same_outputs(case):
    make, shapes = CASES[case]
    m = make()
    dt = U8 if "_u8" in case else I8
    f = feeds(dt, shapes, 1)
    plain = Session(m, opt_level=0).run(f)
    s = Session(m, opt_level=3)
    got = s.run(f)
    for a, b in zip(got, plain):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    ref = ort.InferenceSession(m, so, providers=["CPUExecutionProvider"]).run(None, f)
    for a, r in zip(got, ref):
        # requantization rounds in float on both sides: at most one step apart
        assert np.abs(a.astype(np.int32) - r.astype(np.int32)).max() <= 1
    ops = [op for _, op, _ in s.profile(f)]
    assert "NhwcMaxPool" in ops
    if case.startswith("resnet_like"):
        # one Transpose into the chain; the broadcast input C and the output one each
        assert ops.count("Transpose") <= 3, ops
    else:
        assert ops.count("QLinearConv") == 2


def test_layout_nhwc_not_below_level_3():
    m = resnet_like(U8, 3)
    f = feeds(U8, {"X": [1, 3, 40, 36], "C": [1, 24, 1, 1]}, 2)
    ops = [op for _, op, _ in Session(m, opt_level=2).profile(f)]
    assert "NhwcMaxPool" not in ops and "Transpose" not in ops
