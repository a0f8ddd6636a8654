"""Hostile quantization parameters: every quantized operator, and the int8
kernels the QDQ fusion pass substitutes for the float ones, refuse zero or
non-finite scales that they divide by, zero points of the wrong type or
shape, and scales of the wrong length with a clear error (never a crash, a
hang or silent garbage).  Each case runs at optimization level 0 (the
operators as written) and 3 (after QDQ fusion); a case that onnxruntime
also runs is compared with it.

Scales that only multiply (a DequantizeLinear scale of 0 gives zeros) are
valid and must still run."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from oxengine import EngineError, Session

F, U8, I8, I32 = TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32
NP = {F: np.float32, U8: np.uint8, I8: np.int8, I32: np.int32}
MS = "com.microsoft"


def const(name, value, dt):
    return numpy_helper.from_array(np.asarray(value, dtype=NP[dt]), name)


def model(nodes, inputs, outputs, inits, opset=19):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=inits)
    ops = [helper.make_opsetid("", opset), helper.make_opsetid(MS, 1)]
    return helper.make_model(g, opset_imports=ops, ir_version=9)


def vi(name, dt, shape):
    return helper.make_tensor_value_info(name, dt, shape)


# ---- the cases: name -> (model, feeds, expected error substring or None) ----

def quantize_linear(scale, zp=None, zp_dt=U8):
    inits = [const("s", scale, F)] + ([const("z", zp, zp_dt)] if zp is not None else [])
    n = helper.make_node("QuantizeLinear", ["x", "s"] + (["z"] if zp is not None else []), ["y"])
    out_dt = zp_dt if zp is not None else U8
    return model([n], [vi("x", F, [2, 3])], [vi("y", out_dt, [2, 3])], inits), \
        {"x": np.arange(6, dtype=np.float32).reshape(2, 3)}


def dequantize_linear(scale, zp, axis=None):
    kw = {} if axis is None else {"axis": axis}
    n = helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], **kw)
    return model([n], [vi("x", U8, [2, 3])], [vi("y", F, [2, 3])],
                 [const("s", scale, F), const("z", zp, U8)]), {"x": np.arange(6, dtype=np.uint8).reshape(2, 3)}


def qlinear_conv(x_scale=0.1, w_scale=(0.05, 0.05), y_scale=0.2, x_zp=128, w_zp=(0, 0), y_zp=128,
                 w_zp_dt=I8, bias=(10, -10), x_zp_dt=U8):
    inits = [const("xs", x_scale, F), const("xz", x_zp, x_zp_dt),
             const("w", np.arange(2 * 3 * 3 * 3).reshape(2, 3, 3, 3) % 7 - 3, I8),
             const("ws", w_scale, F), const("wz", w_zp, w_zp_dt),
             const("ys", y_scale, F), const("yz", y_zp, U8)]
    ins = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    if bias is not None:
        inits.append(const("b", bias, I32))
        ins.append("b")
    n = helper.make_node("QLinearConv", ins, ["y"], pads=[1, 1, 1, 1])
    rng = np.random.default_rng(0)
    return model([n], [vi("x", U8, [1, 3, 5, 5])], [vi("y", U8, [1, 2, 5, 5])], inits), \
        {"x": rng.integers(0, 256, (1, 3, 5, 5)).astype(np.uint8)}


def conv_integer(x_zp=3, w_zp=(0, 0)):
    inits = [const("w", np.arange(2 * 3 * 3 * 3).reshape(2, 3, 3, 3) % 7 - 3, I8),
             const("xz", x_zp, U8), const("wz", w_zp, I8)]
    n = helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"])
    rng = np.random.default_rng(0)
    return model([n], [vi("x", U8, [1, 3, 5, 5])], [vi("y", I32, [1, 2, 3, 3])], inits, opset=17), \
        {"x": rng.integers(0, 256, (1, 3, 5, 5)).astype(np.uint8)}


def matmul_integer(a_zp=3, b_zp=(0, 0, 0, 0), b_zp_dt=I8):
    inits = [const("b", np.arange(12).reshape(3, 4) - 6, I8), const("az", a_zp, U8), const("bz", b_zp, b_zp_dt)]
    n = helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])
    return model([n], [vi("a", U8, [2, 3])], [vi("y", I32, [2, 4])], inits, opset=17), \
        {"a": np.arange(6, dtype=np.uint8).reshape(2, 3) * 20}


def qlinear_matmul(a_scale=0.1, b_scale=0.05, y_scale=0.2):
    inits = [const("as", a_scale, F), const("az", 128, U8), const("b", np.arange(12).reshape(3, 4) - 6, I8),
             const("bs", b_scale, F), const("bz", 0, I8), const("ys", y_scale, F), const("yz", 128, U8)]
    n = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
    return model([n], [vi("a", U8, [2, 3])], [vi("y", U8, [2, 4])], inits), \
        {"a": np.arange(6, dtype=np.uint8).reshape(2, 3) * 20}


def qdq_conv(w_scale=(0.05, 0.05), q_scale=0.2, q_zp=128, w_axis=0):
    """DQ(x), DQ(w) -> Conv -> Q: fused into an int8 convolution at level 3."""
    inits = [const("xs", 0.1, F), const("xz", 128, U8),
             const("w", np.arange(2 * 3 * 3 * 3).reshape(2, 3, 3, 3) % 7 - 3, I8),
             const("ws", w_scale, F), const("wz", np.zeros(np.size(w_scale)), I8),
             const("ys", q_scale, F), const("yz", q_zp, U8)]
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"], axis=w_axis),
             helper.make_node("Conv", ["xf", "wf"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("QuantizeLinear", ["c", "ys", "yz"], ["y"])]
    rng = np.random.default_rng(0)
    return model(nodes, [vi("x", U8, [1, 3, 5, 5])], [vi("y", U8, [1, 2, 5, 5])], inits), \
        {"x": rng.integers(0, 256, (1, 3, 5, 5)).astype(np.uint8)}


def qdq_matmul(b_scale=0.05, q_scale=0.2):
    inits = [const("as", 0.1, F), const("az", 128, U8), const("b", np.arange(12).reshape(3, 4) - 6, I8),
             const("bs", b_scale, F), const("bz", np.zeros(np.shape(b_scale)), I8),
             const("ys", q_scale, F), const("yz", 128, U8)]
    kw = {"axis": 1} if np.ndim(b_scale) else {}
    nodes = [helper.make_node("DequantizeLinear", ["a", "as", "az"], ["af"]),
             helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bf"], **kw),
             helper.make_node("MatMul", ["af", "bf"], ["m"]),
             helper.make_node("QuantizeLinear", ["m", "ys", "yz"], ["y"])]
    return model(nodes, [vi("a", U8, [2, 3])], [vi("y", U8, [2, 4])], inits), \
        {"a": np.arange(6, dtype=np.uint8).reshape(2, 3) * 20}


def qdq_add(q_scale=0.2):
    inits = [const("s1", 0.1, F), const("z1", 128, U8), const("s2", 0.05, F), const("z2", 100, U8),
             const("ys", q_scale, F), const("yz", 128, U8)]
    nodes = [helper.make_node("DequantizeLinear", ["a", "s1", "z1"], ["af"]),
             helper.make_node("DequantizeLinear", ["b", "s2", "z2"], ["bf"]),
             helper.make_node("Add", ["af", "bf"], ["s"]),
             helper.make_node("QuantizeLinear", ["s", "ys", "yz"], ["y"])]
    return model(nodes, [vi("a", U8, [2, 3]), vi("b", U8, [2, 3])], [vi("y", U8, [2, 3])], inits), \
        {"a": np.arange(6, dtype=np.uint8).reshape(2, 3) * 20, "b": np.arange(6, dtype=np.uint8).reshape(2, 3) * 7}


def qdq_gap(q_scale=0.2):
    inits = [const("s1", 0.1, F), const("z1", 128, U8), const("ys", q_scale, F), const("yz", 128, U8)]
    nodes = [helper.make_node("DequantizeLinear", ["x", "s1", "z1"], ["xf"]),
             helper.make_node("GlobalAveragePool", ["xf"], ["p"]),
             helper.make_node("QuantizeLinear", ["p", "ys", "yz"], ["y"])]
    return model(nodes, [vi("x", U8, [1, 2, 3, 3])], [vi("y", U8, [1, 2, 1, 1])], inits), \
        {"x": np.arange(18, dtype=np.uint8).reshape(1, 2, 3, 3) * 9}


def ms_qgemm(y_scale=0.2, b_scale=0.05):
    inits = [const("as", 0.1, F), const("az", 128, U8), const("b", np.arange(12).reshape(3, 4) - 6, I8),
             const("bs", b_scale, F), const("bz", np.zeros(np.shape(b_scale)), I8),
             const("ys", y_scale, F), const("yz", 128, U8)]
    n = helper.make_node("QGemm", ["a", "as", "az", "b", "bs", "bz", "", "ys", "yz"], ["y"], domain=MS)
    return model([n], [vi("a", U8, [2, 3])], [vi("y", U8, [2, 4])], inits), \
        {"a": np.arange(6, dtype=np.uint8).reshape(2, 3) * 20}


def ms_qlinear_add(c_scale=0.2):
    inits = [const("s1", 0.1, F), const("z1", 128, U8), const("s2", 0.05, F), const("z2", 100, U8),
             const("ys", c_scale, F), const("yz", 128, U8)]
    n = helper.make_node("QLinearAdd", ["a", "s1", "z1", "b", "s2", "z2", "ys", "yz"], ["y"], domain=MS)
    return model([n], [vi("a", U8, [2, 3]), vi("b", U8, [2, 3])], [vi("y", U8, [2, 3])], inits), \
        {"a": np.arange(6, dtype=np.uint8).reshape(2, 3) * 20, "b": np.arange(6, dtype=np.uint8).reshape(2, 3) * 7}


def ms_qlinear_gap(y_scale=0.2):
    inits = [const("s1", 0.1, F), const("z1", 128, U8), const("ys", y_scale, F), const("yz", 128, U8)]
    n = helper.make_node("QLinearGlobalAveragePool", ["x", "s1", "z1", "ys", "yz"], ["y"], domain=MS,
                         channels_last=0)
    return model([n], [vi("x", U8, [1, 2, 3, 3])], [vi("y", U8, [1, 2, 1, 1])], inits), \
        {"x": np.arange(18, dtype=np.uint8).reshape(1, 2, 3, 3) * 9}


def ms_dqmatmul(b_scale=0.05, b_zp=0):
    inits = [const("b", np.arange(12).reshape(3, 4) - 6, I8), const("bs", b_scale, F), const("bz", b_zp, I8)]
    n = helper.make_node("DynamicQuantizeMatMul", ["a", "b", "bs", "bz"], ["y"], domain=MS)
    return model([n], [vi("a", F, [2, 3])], [vi("y", F, [2, 4])], inits), \
        {"a": np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)}


ZERO = "finite"          # the error names the scale and says it must be finite (and non-zero)
SHAPE = "shape"
CASES = {
    # valid edge cases: they run
    "QuantizeLinear ok": (quantize_linear(0.5, 3), None),
    "DequantizeLinear zero scale gives zeros": (dequantize_linear(0.0, 3), None),
    "QLinearConv zero x_scale gives the zero point": (qlinear_conv(x_scale=0.0), None),
    "QLinearConv zero w_scale of one channel": (qlinear_conv(w_scale=(0.05, 0.0)), None),
    "QLinearConv ok": (qlinear_conv(), None),
    "QDQ Conv ok": (qdq_conv(), None),
    "QDQ MatMul per channel ok": (qdq_matmul(b_scale=[0.05, 0.1, 0.05, 0.1]), None),
    # zero and non-finite scales that are divided by
    "QuantizeLinear zero scale": (quantize_linear(0.0, 3), ZERO),
    "QuantizeLinear NaN scale": (quantize_linear(float("nan"), 3), ZERO),
    "QuantizeLinear infinite scale": (quantize_linear(float("inf"), 3), ZERO),
    "QuantizeLinear zero per-axis scale": (quantize_linear([0.5, 0.0, 0.5], [1, 2, 3]), ZERO),
    "QLinearConv zero y_scale": (qlinear_conv(y_scale=0.0), ZERO),
    "QLinearConv NaN y_scale": (qlinear_conv(y_scale=float("nan")), ZERO),
    "QLinearConv NaN x_scale": (qlinear_conv(x_scale=float("nan")), ZERO),
    "QLinearConv infinite w_scale": (qlinear_conv(w_scale=(0.05, float("inf"))), ZERO),
    "QLinearConv scales that overflow the factor": (qlinear_conv(x_scale=1e30, w_scale=(1e30, 1e30)), "factor"),
    "QLinearMatMul NaN b_scale": (qlinear_matmul(b_scale=float("nan")), ZERO),
    "QGemm NaN b_scale": (ms_qgemm(b_scale=float("nan")), ZERO),
    "QLinearMatMul zero y_scale": (qlinear_matmul(y_scale=0.0), ZERO),
    "QDQ Conv zero output scale": (qdq_conv(q_scale=0.0), ZERO),
    "QDQ MatMul zero output scale": (qdq_matmul(q_scale=0.0), ZERO),
    "QDQ Add zero output scale": (qdq_add(q_scale=0.0), ZERO),
    "QDQ GlobalAveragePool zero output scale": (qdq_gap(q_scale=0.0), ZERO),
    "QGemm zero y_scale": (ms_qgemm(y_scale=0.0), ZERO),
    "QLinearAdd zero C_scale": (ms_qlinear_add(c_scale=0.0), ZERO),
    "QLinearGlobalAveragePool zero y_scale": (ms_qlinear_gap(y_scale=0.0), ZERO),
    # zero points of the wrong type or shape, scales of the wrong length
    "QuantizeLinear int32 zero point": (quantize_linear(0.5, 3, I32), "y_zero_point has type int32"),
    "DequantizeLinear zero point shape": (dequantize_linear([0.1, 0.2, 0.3], [1, 2], axis=1), SHAPE),
    "QLinearConv per-channel x zero point": (qlinear_conv(x_zp=[1, 2, 3]), "x_zero_point"),
    "QLinearConv w_scale of the wrong length": (qlinear_conv(w_scale=(0.05, 0.05, 0.05)), "w_scale"),
    "QLinearConv w_zero_point of the wrong length": (qlinear_conv(w_zp=(0, 0, 0)), "w_zero_point"),
    "QLinearConv uint8 zero point for int8 weights": (qlinear_conv(w_zp=(0, 0), w_zp_dt=U8), "w_zero_point"),
    "QLinearConv int8 x zero point for uint8 x": (qlinear_conv(x_zp=0, x_zp_dt=I8), "x_zero_point"),
    "QLinearConv bias of the wrong length": (qlinear_conv(bias=(1, 2, 3)), "B is int32 with shape [3], expected int32 [2]"),
    "ConvInteger per-channel x zero point": (conv_integer(x_zp=[1, 2, 3]), "x_zero_point"),
    "ConvInteger w_zero_point of the wrong length": (conv_integer(w_zp=(0, 0, 0)), "w_zero_point"),
    "MatMulInteger b_zero_point of the wrong length": (matmul_integer(b_zp=(0, 0, 0)), "zero point of B has shape [3]"),
    # refused at load (schema_check.c: B and b_zero_point share T2)
    "MatMulInteger b_zero_point type": (matmul_integer(b_zp=(0, 0, 0, 0), b_zp_dt=U8),
                                        'input b_zero_point ("bz") is uint8 but input B ("b") is int8'),
    "QLinearMatMul a_scale of the wrong length": (qlinear_matmul(a_scale=[0.1, 0.1, 0.1]), "a_scale"),
    "QDQ Conv weight scale of the wrong length": (qdq_conv(w_scale=(0.05, 0.05, 0.05)), SHAPE),
    "QDQ MatMul weight scale of the wrong length": (qdq_matmul(b_scale=[0.05, 0.1, 0.05]), SHAPE),
    "QGemm b_scale of the wrong length": (ms_qgemm(b_scale=[0.05, 0.1, 0.05]), "b_scale"),
    "DynamicQuantizeMatMul b_scale of the wrong length": (ms_dqmatmul(b_scale=[0.05, 0.1, 0.05]), "b_scale"),
}


def ort_outputs(m, feeds):
    try:
        s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        return s.run(None, feeds)
    except Exception:           # noqa: BLE001 -- onnxruntime refusing it too is fine
        return None


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("level", [0, 3])
def test_quant_params(name, level):
    (m, feeds), want = CASES[name]
    try:
        got = Session(m, opt_level=level).run(feeds)
    except EngineError as e:
        msg = str(e)
        assert want is not None, "%s: level %d refused a valid model: %s" % (name, level, msg)
        assert want in msg, "%s: level %d: unclear error: %s" % (name, level, msg)
        return
    assert want is None, "%s: level %d ran (expected an error about %s): %s" % (name, level, want, got)
    ref = ort_outputs(m, feeds)
    if ref is not None:
        for g, r in zip(got, ref):
            # integer outputs one requantization step apart at most
            np.testing.assert_allclose(g.astype(np.float64), r.astype(np.float64), atol=1, err_msg=name)
