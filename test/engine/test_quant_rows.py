"""Per-row dynamic quantization (onnx_quantize_dynamic's per_row_activations):
the quantizer writes, in standard operators, one scale and zero point per
row of a product's input, MatMulInteger without an A zero point and an int32
correction for it (model/quantize_rewrite.c); the QDQ fusion pass
(model/passes/qdq_fuse.c) runs the whole chain as one
com.onnx_pg.DynamicQuantizeMatMulRows kernel.

The graphs here are built the way the quantizer builds them.  Checked: the
chain fuses (level 3) and gives the outputs of the unfused chain (level 0)
and of onnxruntime running the same file (ONNX's reference evaluator on a CPU
without VNNI, see run_all); a chain that differs anywhere
from the quantizer's is left unfused and still computes the right thing;
the fused kernel refuses hostile attributes and shapes with an error."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from oxengine import EngineError, Session

F, U8, I8, I32, I64 = TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32, TensorProto.INT64
FUSED = "DynamicQuantizeMatMulRows"


def row_chain(nodes, inits, x, opset, clip_max=255.0):
    """quantize_rewrite.c's dynamic_input_rows: returns (q, scale, int32 zero point)"""
    def c(name, v, dt=np.float32):
        inits.append(numpy_helper.from_array(np.asarray(v, dt), name))
        return name

    def op(t, ins, out, **kw):
        nodes.append(helper.make_node(t, ins, [out], **kw))
        return out

    zero, qmax, tiny = c("zero", 0.0), c("qmax", clip_max), c("min_scale", 1e-30)
    if opset >= 18:
        axes = c("axes", [-1], np.int64)
        lo = op("ReduceMin", [x, axes], "rmin", keepdims=1)
        hi = op("ReduceMax", [x, axes], "rmax", keepdims=1)
    else:
        lo = op("ReduceMin", [x], "rmin", axes=[-1], keepdims=1)
        hi = op("ReduceMax", [x], "rmax", axes=[-1], keepdims=1)
    lo = op("Min", [lo, zero], "lo")
    hi = op("Max", [hi, zero], "hi")
    s = op("Max", [op("Div", [op("Sub", [hi, lo], "range"), qmax], "s0"), tiny], "scale")
    zp = op("Round", [op("Div", [op("Neg", [lo], "nlo"), s], "zq")], "zp")
    t = op("Add", [op("Round", [op("Div", [x, s], "xs")], "xr"), zp], "xz")
    q = op("Cast", [op("Clip", [t, zero, qmax], "xc")], "q", to=U8)
    zpi = op("Cast", [zp], "zpi", to=I32)
    return q, s, zpi


def product(nodes, inits, q, s, zpi, rng, k, n, tag, wtype=I8, bias=True, sums_off=0):
    """quantize_rewrite.c's rows_product on random weights"""
    if wtype == I8:
        w = rng.randint(-127, 128, size=(k, n)).astype(np.int8)
        wz = np.zeros(n, np.int8)
    else:
        w = rng.randint(0, 256, size=(k, n)).astype(np.uint8)
        wz = rng.randint(100, 156, size=n).astype(np.uint8)
    sums = (w.astype(np.int64) - wz.astype(np.int64)).sum(0).astype(np.int32)
    sums[0] += sums_off
    ws = (rng.rand(n) * 0.01 + 0.001).astype(np.float32)
    for name, v in [("w" + tag, w), ("wz" + tag, wz), ("sums" + tag, sums), ("ws" + tag, ws)]:
        inits.append(numpy_helper.from_array(v, name))
    nodes.append(helper.make_node("MatMulInteger", [q, "w" + tag, "", "wz" + tag], ["i32" + tag]))
    nodes.append(helper.make_node("Mul", [zpi, "sums" + tag], ["corr" + tag]))
    nodes.append(helper.make_node("Sub", ["i32" + tag, "corr" + tag], ["c32" + tag]))
    nodes.append(helper.make_node("Cast", ["c32" + tag], ["f" + tag], to=F))
    nodes.append(helper.make_node("Mul", ["f" + tag, s], ["fs" + tag]))
    out = "y" + tag
    if bias:
        inits.append(numpy_helper.from_array((rng.rand(n) - 0.5).astype(np.float32), "b" + tag))
        nodes.append(helper.make_node("Mul", ["fs" + tag, "ws" + tag], ["yw" + tag]))
        nodes.append(helper.make_node("Add", ["yw" + tag, "b" + tag], [out]))
    else:
        nodes.append(helper.make_node("Mul", ["fs" + tag, "ws" + tag], [out]))
    return out


def model(shape, k=48, n=40, opset=17, seed=0, wtype=I8, bias=True, products=2, sums_off=0, clip_max=255.0):
    rng = np.random.RandomState(seed)
    nodes, inits = [], []
    q, s, zpi = row_chain(nodes, inits, "x", opset, clip_max)
    outs = [product(nodes, inits, q, s, zpi, rng, k, n + 8 * i, str(i), wtype, bias, sums_off)
            for i in range(products)]
    g = helper.make_graph(nodes, "rows", [helper.make_tensor_value_info("x", F, list(shape[:-1]) + [k])],
                          [helper.make_tensor_value_info(o, F, None) for o in outs], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def inputs(shape, k, seed=1):
    rng = np.random.RandomState(seed)
    x = (rng.randn(*shape[:-1], k) * rng.rand(*shape[:-1], 1) * 3).astype(np.float32)
    x.reshape(-1, k)[0] = 0.0                         # an all-zero row: the minimum scale
    if x.reshape(-1, k).shape[0] > 2:
        x.reshape(-1, k)[1] = np.abs(x.reshape(-1, k)[1])  # one sign only: zero point 0
        x.reshape(-1, k)[2] = -np.abs(x.reshape(-1, k)[2])  # zero point 255
    return x


def fused_ops(m):
    return [op for _, op, _ in Session(m, opt_level=3).placement()]


def cpu_has_vnni():
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return False
    return "avx512_vnni" in flags or "avx_vnni" in flags


def run_all(m, x):
    """ours at levels 3 and 0, and the reference: onnxruntime where the CPU has VNNI, else ONNX's
    reference evaluator.  Without VNNI onnxruntime multiplies uint8 by int8 with VPMADDUBSW, whose
    pairwise int16 sums saturate (its quantization documentation says so): on an AVX2-only EPYC
    its outputs here were off by up to 9 while ours matched the reference evaluator exactly."""
    ours3 = Session(m, opt_level=3).run({"x": x})
    ours0 = Session(m, opt_level=0).run({"x": x})
    if cpu_has_vnni():
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        theirs = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(
            None, {"x": x})
    else:
        theirs = ReferenceEvaluator(m).run(None, {"x": x})
    return ours3, ours0, theirs


def close(a, b):
    # identical float operations on identical int8 data: equal up to the last bit or two
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * float(np.abs(b).max()))


@pytest.mark.parametrize("shape,k,opset,wtype,bias", [
    ((2, 7, 0), 48, 17, I8, True),        # [batch, tokens, features]
    ((5, 0), 33, 17, I8, False),          # a Gemm-shaped 2-D input, k not a multiple of 4
    ((1, 9, 0), 64, 18, U8, True),        # opset 18: axes as an input; uint8 weights, zero points
    ((3, 4, 0), 100, 13, U8, False),
])
def test_fused_matches_unfused_and_onnxruntime(shape, k, opset, wtype, bias):
    m = model(shape, k=k, opset=opset, wtype=wtype, bias=bias)
    ops = fused_ops(m)
    assert ops.count(FUSED) == 2, ops
    for forbidden in ("MatMulInteger", "ReduceMin", "Round", "Clip"):
        assert forbidden not in ops, ops
    x = inputs(shape, k)
    ours3, ours0, theirs = run_all(m, x)
    for a, b, c in zip(ours3, ours0, theirs):
        assert a.shape == c.shape
        close(a, b)
        close(a, c)


@pytest.mark.parametrize("change", ["sums", "clip"])
def test_near_miss_is_not_fused(change):
    # a correction that does not match the weights, or a clip to 254, is not
    # the quantizer's chain: it must run as written
    m = model((2, 5, 0), sums_off=1 if change == "sums" else 0, clip_max=254.0 if change == "clip" else 255.0)
    assert FUSED not in fused_ops(m)
    x = inputs((2, 5, 0), 48)
    ours3, ours0, theirs = run_all(m, x)
    for a, b, c in zip(ours3, ours0, theirs):
        close(a, b)
        close(a, c)


def test_accuracy_against_float():
    # the point of per-row scales: rows of very different magnitudes keep
    # their own resolution
    rng = np.random.RandomState(3)
    k, n = 64, 32
    w = rng.randn(k, n).astype(np.float32)
    ws = np.abs(w).max(0) / 127
    x = (rng.randn(16, k) * np.logspace(-3, 1, 16)[:, None]).astype(np.float32)
    m = model((16, 0), k=k, n=n, products=1, bias=False)
    # replace the random integer weights by the quantized float ones
    for t in m.graph.initializer:
        if t.name == "w0":
            t.CopyFrom(numpy_helper.from_array(np.clip(np.round(w / ws), -127, 127).astype(np.int8), "w0"))
        elif t.name == "ws0":
            t.CopyFrom(numpy_helper.from_array(ws.astype(np.float32), "ws0"))
        elif t.name == "sums0":
            wq = numpy_helper.to_array(next(i for i in m.graph.initializer if i.name == "w0"))
            t.CopyFrom(numpy_helper.from_array(wq.astype(np.int64).sum(0).astype(np.int32), "sums0"))
    assert FUSED in fused_ops(m)
    y = Session(m).run({"x": x})[0]
    ref = x @ w
    rel = np.abs(y - ref).max(1) / np.abs(ref).max(1)
    assert rel.max() < 0.03, rel      # every row within 3% of its own magnitude


def direct(attrs=None, k=8, n=4, bshape=None, bias_n=None, ws_n=None):
    """a model calling the fused operator itself, as a hostile file may"""
    rng = np.random.RandomState(0)
    inits = [numpy_helper.from_array(rng.randint(-5, 6, size=bshape or (k, n)).astype(np.int8), "B"),
             numpy_helper.from_array(np.full(ws_n or n, 0.01, np.float32), "ws"),
             numpy_helper.from_array(np.zeros(n, np.int8), "bz")]
    ins = ["x", "B", "ws", "bz"]
    if bias_n is not None:
        inits.append(numpy_helper.from_array(np.zeros(bias_n, np.float32), "bias"))
        ins.append("bias")
    node = helper.make_node(FUSED, ins, ["y"], domain="com.onnx_pg", **(attrs or {"min_scale": 1e-30}))
    g = helper.make_graph([node], "direct", [helper.make_tensor_value_info("x", F, None)],
                          [helper.make_tensor_value_info("y", F, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.onnx_pg", 1)],
                             ir_version=8)


def test_direct_call_works():
    x = np.random.RandomState(1).randn(3, 8).astype(np.float32)
    y = Session(direct(), opt_level=0).run({"x": x})[0]
    assert y.shape == (3, 4) and np.all(np.isfinite(y))


@pytest.mark.parametrize("kind,x", [
    ("min_scale 0", np.ones((2, 8), np.float32)),
    ("min_scale nan", np.ones((2, 8), np.float32)),
    ("k mismatch", np.ones((2, 7), np.float32)),
    ("scalar x", np.ones((), np.float32)),
    ("bias length", np.ones((2, 8), np.float32)),
    ("b_scale length", np.ones((2, 8), np.float32)),
    ("B rank", np.ones((2, 8), np.float32)),
])
def test_hostile_direct_calls_fail_cleanly(kind, x):
    kw = {}
    if kind == "min_scale 0":
        kw["attrs"] = {"min_scale": 0.0}
    elif kind == "min_scale nan":
        kw["attrs"] = {"min_scale": float("nan")}
    elif kind == "bias length":
        kw["bias_n"] = 3
    elif kind == "b_scale length":
        kw["ws_n"] = 3
    elif kind == "B rank":
        kw["bshape"] = (8, 4, 1)
    with pytest.raises(EngineError) as e:
        Session(direct(**kw), opt_level=0).run({"x": x})
    assert FUSED + ":" in str(e.value), str(e.value)


def test_nan_and_inf_rows_do_not_crash():
    m = model((4, 0), products=1)
    x = inputs((4, 0), 48)
    x[1, 3] = np.nan
    x[2, 5] = np.inf
    x[3, :] = -np.inf
    y = Session(m).run({"x": x})[0]
    assert y.shape == (4, 40)
    assert np.all(np.isfinite(y[0]))          # the all-zero row is still exact
