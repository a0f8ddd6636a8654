"""Engine tests without a server: loader errors on hostile bytes, optimizer
passes (same outputs before and after), control flow with outer scopes, and
agreement with onnxruntime on small graphs.  Tolerances: rtol 1e-4, atol 1e-5
for float32 unless stated."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from oxengine import EngineError, Session

RTOL, ATOL = 1e-4, 1e-5


def make_model(nodes, inputs, outputs, initializers=(), opset=17, extra_opsets=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    model = helper.make_model(graph, opset_imports=opsets, ir_version=8)
    return model


def ort_run(model, feeds):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def check_all_levels(model, feeds, rtol=RTOL, atol=ATOL):
    """Every optimization level gives onnxruntime's answer."""
    want = ort_run(model, feeds)
    for level in (0, 1, 2, 3):
        got = Session(model, opt_level=level).run(feeds)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"opt level {level}")


def conv_bn_model():
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b")
    scale = numpy_helper.from_array(rng.uniform(0.5, 1.5, 4).astype(np.float32), "scale")
    bias = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "bias")
    mean = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "mean")
    var = numpy_helper.from_array(rng.uniform(0.5, 2, 4).astype(np.float32), "var")
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["y0"], epsilon=1e-3),
        helper.make_node("Identity", ["y0"], ["y1"]),
        helper.make_node("Relu", ["y1"], ["y"]),
    ]
    return make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                      [w, b, scale, bias, mean, var])


def test_conv_bn_fold_same_outputs_and_fewer_nodes():
    model = conv_bn_model()
    x = np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype(np.float32)
    check_all_levels(model, {"x": x})
    plain = Session(model, opt_level=0)
    opt = Session(model, opt_level=1)
    assert plain.stat("nodes_after") == 4
    assert opt.stat("nodes_after") == 2  # Conv(+BN folded) and Relu


def test_conv_bn_fold_shared_weights():
    """W scaled in place only where its Conv is its one reader: two Convs sharing W, each
    with a BatchNormalization of its own, fold into two weights; a model with a W of its
    own per Conv gives the same outputs folded in place"""
    rng = np.random.default_rng(2)
    w = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w")
    inits = [w]
    for i in (1, 2):
        for name, arr in (("scale", rng.uniform(0.5, 1.5, 8)), ("bias", rng.standard_normal(8)),
                          ("mean", rng.standard_normal(8)), ("var", rng.uniform(0.5, 2, 8))):
            inits.append(numpy_helper.from_array(arr.astype(np.float32), "%s%d" % (name, i)))
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "scale1", "bias1", "mean1", "var1"], ["y1"]),
        helper.make_node("Conv", ["x", "w"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c2", "scale2", "bias2", "mean2", "var2"], ["y2"]),
    ]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y1", "y2")]
    shared = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
                        outs, inits)
    x = np.random.default_rng(3).standard_normal((2, 3, 8, 8)).astype(np.float32)
    check_all_levels(shared, {"x": x})
    assert Session(shared, opt_level=1).stat("nodes_after") == 2
    # the same network with a copy of W per Conv: both folded in place, the same outputs
    own = make_model([helper.make_node("Conv", ["x", "w"], ["c1"], pads=[1, 1, 1, 1]), nodes[1],
                      helper.make_node("Conv", ["x", "w2"], ["c2"], pads=[1, 1, 1, 1]), nodes[3]],
                     [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])], outs,
                     inits + [numpy_helper.from_array(numpy_helper.to_array(w), "w2")])
    a = Session(shared, opt_level=1).run({"x": x})
    b = Session(own, opt_level=1).run({"x": x})
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


def test_constant_folding_and_identity_removal():
    c = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "c")
    nodes = [
        helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(np.full((2, 3), 2.0, np.float32))),
        helper.make_node("Mul", ["c", "k"], ["ck"]),          # constant: folded
        helper.make_node("Dropout", ["ck"], ["ckd"]),          # inference: removed
        helper.make_node("Add", ["x", "ckd"], ["y"]),
    ]
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [c])
    x = np.ones((2, 3), np.float32)
    check_all_levels(model, {"x": x})
    assert Session(model, opt_level=1).stat("nodes_after") == 1


def test_if_with_outer_scope_values():
    then_g = helper.make_graph([helper.make_node("Add", ["x", "x"], ["t"])], "then", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, [3])])
    else_g = helper.make_graph([helper.make_node("Mul", ["x", "x"], ["e"])], "else", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, [3])])
    nodes = [helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g)]
    model = make_model(nodes, [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
                               helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    x = np.array([1, 2, 3], np.float32)
    for cond in (True, False):
        check_all_levels(model, {"cond": np.array(cond), "x": x})


def test_loop_accumulates():
    body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "step"], ["acc_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Identity", ["acc_out"], ["scan_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("scan_out", TensorProto.FLOAT, [2])])
    nodes = [helper.make_node("Loop", ["M", "", "acc0"], ["acc", "scan"], body=body)]
    model = make_model(nodes, [helper.make_tensor_value_info("M", TensorProto.INT64, []),
                               helper.make_tensor_value_info("acc0", TensorProto.FLOAT, [2]),
                               helper.make_tensor_value_info("step", TensorProto.FLOAT, [2])],
                       [helper.make_tensor_value_info("acc", TensorProto.FLOAT, [2]),
                        helper.make_tensor_value_info("scan", TensorProto.FLOAT, [None, 2])])
    feeds = {"M": np.array(5, np.int64), "acc0": np.zeros(2, np.float32), "step": np.array([1, 2], np.float32)}
    check_all_levels(model, feeds)


def test_repeated_runs_reuse_buffers_and_stay_correct():
    model = conv_bn_model()
    s = Session(model)
    rng = np.random.default_rng(2)
    for batch in (1, 4, 1, 3):
        x = rng.standard_normal((batch, 3, 8, 8)).astype(np.float32)
        np.testing.assert_allclose(s.run({"x": x})[0], ort_run(model, {"x": x})[0], rtol=RTOL, atol=ATOL)


# ---- hostile models: each a clear error, never a crash -------------------

def error_of(data):
    with pytest.raises(EngineError) as e:
        Session(data)
    return str(e.value)


def test_empty_and_random_bytes():
    assert "empty" in error_of(b"")
    rng = np.random.default_rng(3)
    for _ in range(50):
        Session_or_error(rng.bytes(int(rng.integers(1, 300))))


def Session_or_error(data):
    try:
        Session(data)
    except EngineError:
        pass


def test_truncated_models():
    data = conv_bn_model().SerializeToString()
    for cut in range(1, len(data), max(1, len(data) // 97)):
        Session_or_error(data[:cut])


def test_deep_nesting_is_refused():
    # a chain of nested length-delimited fields: graph(7) -> node(1) -> attribute(5) -> g(6) ...
    inner = b""
    for _ in range(5000):
        inner = b"\x32" + _varint(len(inner)) + inner  # field 6 (g) inside AttributeProto
        inner = b"\x2a" + _varint(len(inner)) + inner  # field 5 (attribute) inside NodeProto
        inner = b"\x0a" + _varint(len(inner)) + inner  # field 1 (node) inside GraphProto
    data = b"\x08\x08" + b"\x3a" + _varint(len(inner)) + inner
    assert "deep" in error_of(data)


def test_opset_imports_are_limited():
    # every node looks its domain up among the imports: 50,000 of them took
    # 8 s to load (loader.h, OX_MAX_OPSET_IMPORTS)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    m = make_model([helper.make_node("Relu", ["x"], ["y"])], [x], [y])
    m.opset_import.extend([helper.make_opsetid("d%d" % i, 1) for i in range(255)])
    Session(m.SerializeToString())
    m.opset_import.append(helper.make_opsetid("one.too.many", 1))
    assert "257 operator set imports, more than the 256 allowed" in error_of(m.SerializeToString())


def _varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def test_structural_faults():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    cyclic = make_model([helper.make_node("Add", ["x", "b"], ["a"]), helper.make_node("Relu", ["a"], ["b"]),
                         helper.make_node("Relu", ["a"], ["y"])], [x], [y])
    assert "cycle" in error_of(cyclic.SerializeToString())
    dup = make_model([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Relu", ["x"], ["y"])], [x], [y])
    assert "more than once" in error_of(dup.SerializeToString())
    missing = make_model([helper.make_node("Add", ["x", "nope"], ["y"])], [x], [y])
    assert "nope" in error_of(missing.SerializeToString())
    unknown = make_model([helper.make_node("NoSuchOp", ["x"], ["y"]), ], [x], [y])
    assert "NoSuchOp" in error_of(unknown.SerializeToString())
    two = make_model([helper.make_node("FooA", ["x"], ["a"]), helper.make_node("FooB", ["a"], ["y"])], [x], [y])
    msg = error_of(two.SerializeToString())
    assert "FooA" in msg and "FooB" in msg
    short = numpy_helper.from_array(np.zeros(4, np.float32), "w")
    short.raw_data = short.raw_data[:7]
    bad_init = make_model([helper.make_node("Add", ["x", "w"], ["y"])], [x], [y], [short])
    assert "bytes of data" in error_of(bad_init.SerializeToString())
    ext = numpy_helper.from_array(np.zeros(2, np.float32), "w")
    ext.data_location = TensorProto.EXTERNAL
    ext.ClearField("raw_data")
    ext.external_data.add(key="location", value="weights.bin")
    ext_model = make_model([helper.make_node("Add", ["x", "w"], ["y"])], [x], [y], [ext])
    assert "external" in error_of(ext_model.SerializeToString())
    neg = make_model([helper.make_node("Relu", ["x"], ["y"])],
                     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [-3])], [y])
    assert "negative" in error_of(neg.SerializeToString())


def test_wrong_inputs_are_errors():
    model = conv_bn_model()
    s = Session(model)
    with pytest.raises(EngineError, match="expects shape"):
        s.run({"x": np.zeros((1, 2, 8, 8), np.float32)})
    with pytest.raises(EngineError, match="element type"):
        s.run({"x": np.zeros((1, 3, 8, 8), np.float64)})


def _onnx_types(model):
    """value name -> 'tensor(elem)[dims]' as onnx's own shape inference sees it."""
    inferred = onnx.shape_inference.infer_shapes(model)
    out = {}
    for vi in list(inferred.graph.value_info) + list(inferred.graph.output):
        t = vi.type.tensor_type
        if not t.HasField("shape"):
            continue
        # onnx names dimensions it cannot determine "unk__N"; we show them as "?"
        dims = [("?" if d.dim_param.startswith("unk__") else d.dim_param) if d.dim_param
                else (str(d.dim_value) if d.HasField("dim_value") else "?") for d in t.shape.dim]
        out[vi.name] = f"tensor({onnx.helper.tensor_dtype_to_np_dtype(t.elem_type).name})[{', '.join(dims)}]"
    return out


@pytest.mark.parametrize("name", ["small_cnn", "mlp", "iris_rf", "logreg"])
def test_shape_inference_agrees_with_onnx(name):
    import os
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", name + ".onnx")
    model = onnx.load(path)
    s = Session(model, opt_level=0)
    want = _onnx_types(model)
    checked = 0
    for value, t in want.items():
        got = s.type_of(value)
        if got is None:
            continue
        got = got.replace("float)", "float32)").replace("double)", "float64)")
        assert got == t, f"{value}: {got} vs {t}"
        checked += 1
    assert checked >= 1


def test_shape_inference_through_computed_shapes():
    """Reshape to a shape computed at run time has that shape's length as its rank;
    Slice keeps its input's rank and the sizes of the axes it does not slice;
    Shape honours start and end; ConstantOfShape and Expand take the rank of
    their shape input; Range is 1-D.  Each also agrees with onnx's own inference
    wherever both know an axis (passes rely on these: attention fusion)."""
    i64 = lambda n, v: numpy_helper.from_array(np.array(v, np.int64), n)
    nodes = [helper.make_node("Shape", ["x"], ["sh"]),
             helper.make_node("Shape", ["x"], ["sh1"], start=1),
             helper.make_node("Shape", ["x"], ["sh2"], start=-1),
             helper.make_node("Shape", ["x"], ["sh3"], start=1, end=-1),
             helper.make_node("Reshape", ["x", "sh"], ["re"]),
             helper.make_node("Gather", ["sh", "zero"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "zero1"], ["n1"]),
             helper.make_node("Concat", ["n1", "m1"], ["sh4"], axis=0),
             helper.make_node("Reshape", ["x", "sh4"], ["re2"]),
             helper.make_node("Slice", ["x", "one1", "three1", "one1"], ["sl"]),
             helper.make_node("Slice", ["x", "one1", "sh2", "one1"], ["sl2"]),
             helper.make_node("Slice", ["x", "one1", "sh2"], ["sl3"]),
             helper.make_node("ConstantOfShape", ["s"], ["cs"]),
             helper.make_node("ConstantOfShape", ["c23"], ["cs2"],
                              value=helper.make_tensor("v", TensorProto.INT64, [1], [7])),
             helper.make_node("Expand", ["row", "s"], ["ex"]),
             helper.make_node("Range", ["n", "n", "n"], ["rg"])]
    inits = [i64("zero", 0), i64("zero1", [0]), i64("m1", [-1]), i64("one1", [1]), i64("three1", [3]),
             i64("c23", [2, 3]), numpy_helper.from_array(np.ones((1, 8), np.float32), "row")]
    outs = ["sh1", "sh2", "sh3", "re", "re2", "sl", "sl2", "sl3", "cs", "cs2", "ex", "rg"]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 6, 8]),
                                           helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outs],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    s = Session(model.SerializeToString(), opt_level=0)
    want = {"sh1": "tensor(int64)[2]", "sh2": "tensor(int64)[1]", "sh3": "tensor(int64)[1]",
            "re": "tensor(float)[?, ?, ?]", "re2": "tensor(float)[?, ?]", "sl": "tensor(float)[N, ?, 8]",
            "sl2": "tensor(float)[N, ?, 8]", "sl3": "tensor(float)[?, ?, ?]", "cs": "tensor(float)[?, ?]",
            "cs2": "tensor(int64)[2, 3]", "ex": "tensor(float)[?, 8]", "rg": "tensor(int64)[?]"}
    for name, t in want.items():
        assert s.type_of(name) == t, f"{name}: {s.type_of(name)}, expected {t}"
    theirs = onnx.shape_inference.infer_shapes(model, data_prop=True)
    compared = 0
    for vi in list(theirs.graph.value_info) + list(theirs.graph.output):
        if vi.name not in want or not vi.type.tensor_type.HasField("shape"):
            continue
        compared += 1
        dims = vi.type.tensor_type.shape.dim
        ours = want[vi.name].split("[")[1].rstrip("]").split(", ")
        assert len(dims) == len(ours), f"{vi.name}: onnx has rank {len(dims)}"
        for d, o in zip(dims, ours):
            if o != "?" and d.HasField("dim_value"):
                assert str(d.dim_value) == o, f"{vi.name}: onnx {dims}, ours {ours}"
    assert compared >= 8, compared


@pytest.mark.parametrize("act", ["Relu", "Clip6", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid"])
def test_activation_fusion_same_outputs(act):
    """Conv/Gemm followed by an activation fuse into FusedConv/FusedGemm at level 2+."""
    rng = np.random.default_rng(4)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    gw = numpy_helper.from_array(rng.standard_normal((5, 64)).astype(np.float32), "gw")
    inits = [w, gw]
    if act == "Clip6":
        inits += [numpy_helper.from_array(np.array(0, np.float32), "lo"),
                  numpy_helper.from_array(np.array(6, np.float32), "hi")]
        mk = lambda i, o: helper.make_node("Clip", [i, "lo", "hi"], [o])
    elif act == "LeakyRelu":
        mk = lambda i, o: helper.make_node("LeakyRelu", [i], [o], alpha=0.2)
    elif act == "HardSigmoid":
        mk = lambda i, o: helper.make_node("HardSigmoid", [i], [o], alpha=0.3, beta=0.4)
    else:
        mk = lambda i, o: helper.make_node(act, [i], [o])
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), mk("c", "a"),
             helper.make_node("Flatten", ["a"], ["f"]),
             helper.make_node("Gemm", ["f", "gw"], ["g"], transB=1), mk("g", "y")]
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 4, 4])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    x = rng.standard_normal((3, 3, 4, 4)).astype(np.float32)
    check_all_levels(model, {"x": x})
    fused = Session(model, opt_level=2)
    saved = onnx.load_from_string(fused.save())
    # onnxruntime's FusedGemm has no Clip: that Gemm stays unfused
    want_ops = ["FusedConv", "Flatten", "Gemm", "Clip"] if act == "Clip6" else ["FusedConv", "Flatten", "FusedGemm"]
    assert [n.op_type for n in saved.graph.node] == want_ops
    np.testing.assert_allclose(ort_run(saved, {"x": x})[0], ort_run(model, {"x": x})[0], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("rows", [1, 2, 5, 40])
def test_fused_gemm_relu_long_reduction(rows):
    """FusedGemm's Relu runs in the GEMM micro-kernel's registers: only on
    the last block of a reduction longer than one (a partial sum clamped to
    zero would be wrong), and in the one-or-two-row path too."""
    rng = np.random.default_rng(6)
    gw = numpy_helper.from_array(rng.standard_normal((70, 1500)).astype(np.float32), "gw")
    gb = numpy_helper.from_array(rng.standard_normal(70).astype(np.float32), "gb")
    nodes = [helper.make_node("Gemm", ["x", "gw", "gb"], ["g"], transB=1), helper.make_node("Relu", ["g"], ["y"])]
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1500])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [gw, gb])
    # random signs: many outputs change sign between the first block's partial sum and the total
    x = rng.standard_normal((rows, 1500)).astype(np.float32)
    check_all_levels(model, {"x": x})
    saved = onnx.load_from_string(Session(model, opt_level=2).save())
    assert [n.op_type for n in saved.graph.node] == ["FusedGemm"]


def _matmul_add_model(bias_shape, bias_first=False, x_shape=("N", 30), bias_const=True, mm_also_output=False):
    """x @ w + b -> Relu -> @ w2 + b2: scikit-learn's MLP export (MatMul, Add with a [1, N] row)."""
    rng = np.random.default_rng(7)
    inits = [numpy_helper.from_array(rng.standard_normal((30, 16)).astype(np.float32), "w"),
             numpy_helper.from_array(rng.standard_normal((16, 3)).astype(np.float32), "w2"),
             numpy_helper.from_array(rng.standard_normal((1, 3)).astype(np.float32), "b2")]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape) if x_shape else None)]
    if bias_const:
        inits.append(numpy_helper.from_array(rng.standard_normal(bias_shape).astype(np.float32), "b"))
    else:
        inputs.append(helper.make_tensor_value_info("b", TensorProto.FLOAT, list(bias_shape)))
    add_in = ["b", "m"] if bias_first else ["m", "b"]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", add_in, ["a"]),
             helper.make_node("Relu", ["a"], ["h"]), helper.make_node("MatMul", ["h", "w2"], ["m2"]),
             helper.make_node("Add", ["m2", "b2"], ["y"])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    if mm_also_output:
        outputs.append(helper.make_tensor_value_info("m", TensorProto.FLOAT, None))
    return make_model(nodes, inputs, outputs, inits)


@pytest.mark.parametrize("bias_shape,bias_first", [((16,), False), ((1, 16), False), ((1, 16), True)])
def test_matmul_add_becomes_gemm(bias_shape, bias_first):
    """MatMul -> Add of a constant row becomes Gemm at level 2+ (and Gemm -> Relu FusedGemm):
    same outputs at every level and in onnxruntime running the saved graph."""
    model = _matmul_add_model(bias_shape, bias_first)
    for rows in (1, 3, 1000):
        x = np.random.default_rng(rows).standard_normal((rows, 30)).astype(np.float32)
        check_all_levels(model, {"x": x})
    saved = onnx.load_from_string(Session(model, opt_level=2).save())
    assert [n.op_type for n in saved.graph.node] == ["FusedGemm", "Gemm"]
    assert [n.op_type for n in onnx.load_from_string(Session(model, opt_level=1).save()).graph.node] == \
        ["MatMul", "Add", "Relu", "MatMul", "Add"]
    np.testing.assert_allclose(ort_run(saved, {"x": x})[0], ort_run(model, {"x": x})[0], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("x_shape", [(2, 4, 30), ("N", 4, 30), ("B", "N", 30), (2, 3, 4, 30), None])
def test_matmul_add_batched_becomes_gemm(x_shape):
    """A of rank 3 and more (PyTorch's Linear on [batch, tokens, features]) with a matrix B:
    Reshape to rows, Gemm (FusedGemm with the Relu), Reshape back; the shape after it is a
    constant when A's leading dimensions are known but for one, else Shape(A) at run time (two
    unknown, or no shape at all).  Same outputs at every level, and in onnxruntime running the
    saved graph."""
    model = _matmul_add_model((16,), x_shape=x_shape if x_shape else None)
    lead = [d if isinstance(d, int) else 3 for d in (x_shape or (2, 5, 30))[:-1]]
    for scale in (1, 2):
        dims = [lead[0] * scale] + lead[1:] if x_shape is None or isinstance(x_shape[0], str) else lead
        x = np.random.default_rng(scale).standard_normal(dims + [30]).astype(np.float32)
        check_all_levels(model, {"x": x})
    saved = onnx.load_from_string(Session(model, opt_level=2).save())
    ops = [n.op_type for n in saved.graph.node]
    assert "FusedGemm" in ops and "Add" not in ops and "Relu" not in ops and "MatMul" not in ops, ops
    dynamic = x_shape is None or sum(isinstance(d, str) for d in x_shape) > 1
    assert ("Shape" in ops) == dynamic, ops
    np.testing.assert_allclose(ort_run(saved, {"x": x})[0], ort_run(model, {"x": x})[0], rtol=RTOL, atol=ATOL)


def test_matmul_add_batched_left_to_transformer_fusions():
    """A batched MatMul + Add whose sum goes on to another Add (a residual: SkipLayerNormalization
    takes the bias) stays MatMul and Add."""
    rng = np.random.default_rng(3)
    inits = [numpy_helper.from_array(rng.standard_normal((30, 30)).astype(np.float32), "w"),
             numpy_helper.from_array(rng.standard_normal(30).astype(np.float32), "b")]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["a"]),
             helper.make_node("Add", ["a", "x"], ["y"])]
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", 4, 30])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    check_all_levels(model, {"x": rng.standard_normal((2, 4, 30)).astype(np.float32)})
    ops = [n.op_type for n in onnx.load_from_string(Session(model, opt_level=2).save()).graph.node]
    assert ops == ["MatMul", "Add", "Add"], ops


@pytest.mark.parametrize("case", ["bias_input", "bias_matrix", "mm_output"])
def test_matmul_add_left_alone(case):
    """No Gemm where it would not compute the same: a bias that is a graph input or a full matrix,
    a MatMul output used elsewhere."""
    kw = {"bias_input": dict(bias_shape=(16,), bias_const=False),
          "bias_matrix": dict(bias_shape=(4, 16)),
          "mm_output": dict(bias_shape=(16,), mm_also_output=True)}[case]
    model = _matmul_add_model(**kw)
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, 30)).astype(np.float32)
    feeds = {"x": x}
    if case == "bias_input":
        feeds["b"] = rng.standard_normal(16).astype(np.float32)
    check_all_levels(model, feeds)
    ops = [n.op_type for n in onnx.load_from_string(Session(model, opt_level=2).save()).graph.node]
    assert ops[:2] == ["MatMul", "Add"], ops


def test_fused_activations_propagate_nan():
    """NaN and infinity go through fused Conv/Gemm activations as through the plain ones."""
    rng = np.random.default_rng(5)
    gw = numpy_helper.from_array(rng.standard_normal((4, 6)).astype(np.float32), "gw")
    nodes = [helper.make_node("Gemm", ["x", "gw"], ["g"], transB=1), helper.make_node("Relu", ["g"], ["y"])]
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 6])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [gw])
    x = np.full((3, 6), np.nan, np.float32)
    x[1] = np.inf
    want = ort_run(model, {"x": x})[0]
    for level in (0, 3):
        got = Session(model, opt_level=level).run({"x": x})[0]
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


def test_shape_ops_take_released_buffers():
    """Reshape, Squeeze, Unsqueeze, Flatten and Identity take the buffer of an input they are the
    last to read instead of copying it: the results stay right when the producer writes a fresh
    buffer every run, when the same value is also read later (copied then), and across shapes."""
    nodes = [helper.make_node("Relu", ["x"], ["a"]),
             helper.make_node("Reshape", ["a", "shape"], ["b"]),        # a's last use: taken
             helper.make_node("Unsqueeze", ["b", "ax0"], ["c"]),
             helper.make_node("Squeeze", ["c", "ax0"], ["d"]),
             helper.make_node("Identity", ["d"], ["e"]),
             helper.make_node("Sigmoid", ["x"], ["s"]),
             helper.make_node("Flatten", ["s"], ["f"], axis=1),          # s is read again below
             helper.make_node("Neg", ["s"], ["g"]),
             helper.make_node("Mul", ["e", "e"], ["y"])]
    shape = numpy_helper.from_array(np.array([-1, 6], np.int64), "shape")
    ax0 = numpy_helper.from_array(np.array([0], np.int64), "ax0")
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "f", "g")]
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 2])], outs,
                       [shape, ax0])
    rng = np.random.default_rng(11)
    for level in (0, 3):
        sess = Session(model, opt_level=level)
        for n in (4, 4, 7, 1, 7):
            x = rng.standard_normal((n, 3, 2)).astype(np.float32)
            y, f, g = sess.run({"x": x})
            want = np.maximum(x, 0).reshape(-1, 6)
            np.testing.assert_array_equal(y, want * want)
            s = 1 / (1 + np.exp(-x))
            np.testing.assert_allclose(f, s.reshape(n, 6), rtol=1e-6, atol=1e-7)
            np.testing.assert_allclose(g, -s, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("op", ["Gemm_tb", "Gemm", "MatMul"])
def test_gemv_skips_zero_inputs_only_over_finite_weights(op):
    """One or two rows with many zeros (after a ReLU) skip the weight rows they would multiply by 0,
    through a [K, N] copy of a transposed Gemm weight (which a dense row of a layer this small also
    sums, GEMM_SMALL_KMAJOR); the results match onnxruntime on sparse and dense rows, and a single
    output column (a dot product).  A weight holding inf or NaN is never
    skipped over: 0 * inf stays NaN."""
    rng = np.random.default_rng(21)
    K = 300
    for N, poison in ((70, False), (70, True), (1, False), (1, True)):
        w = rng.standard_normal((N, K) if op == "Gemm_tb" else (K, N)).astype(np.float32)
        if poison:
            w[(5 % N, 3) if op == "Gemm_tb" else (3, 5 % N)] = np.inf
            w[(9 % N, 7) if op == "Gemm_tb" else (7, 9 % N)] = np.nan
        node = (helper.make_node("Gemm", ["x", "w"], ["y"], transB=1) if op == "Gemm_tb" else
                helper.make_node(op, ["x", "w"], ["y"]))
        model = make_model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["M", K])],
                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                           [numpy_helper.from_array(w, "w")])
        sess = Session(model)
        for rows in (1, 2):
            for zeros in (0.0, 0.5, 0.95):
                x = rng.standard_normal((rows, K)).astype(np.float32)
                x[rng.random((rows, K)) < zeros] = 0.0
                x[:, 3] = 0.0
                x[:, 7] = 0.0
                got = sess.run({"x": x})[0]
                want = ort_run(model, {"x": x})[0]
                np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
                if poison:
                    assert np.isnan(got[:, 5 % N]).all() and np.isnan(got[:, 9 % N]).all()
                ok = ~np.isnan(want)
                np.testing.assert_allclose(got[ok], want[ok], rtol=1e-4, atol=1e-4)


def _pad_model(consumer="Conv", pads=(0, 0, 1, 2, 0, 0, 2, 1), value=None, mode="constant", attrs=None,
               axes=None, opset=17, pad_is_output=False):
    """x -> Pad -> consumer (Conv 8 -> 4 channels 3x3, or a 3x3 pool) -> y"""
    rng = np.random.default_rng(11)
    inits = [numpy_helper.from_array(rng.standard_normal((4, 8, 3, 3)).astype(np.float32), "w"),
             numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b")]
    if opset >= 11:
        pad_in = ["x", "pads"]
        inits.append(numpy_helper.from_array(np.array(pads, np.int64), "pads"))
        if value is not None or axes is not None:
            pad_in.append("value" if value is not None else "")
            if value is not None:
                inits.append(numpy_helper.from_array(np.array(value, np.float32), "value"))
        if axes is not None:
            pad_in.append("axes")
            inits.append(numpy_helper.from_array(np.array(axes, np.int64), "axes"))
        pad = helper.make_node("Pad", pad_in, ["p"], mode=mode)
    else:
        pad = helper.make_node("Pad", ["x"], ["p"], mode=mode, pads=list(pads),
                               **({"value": value} if value is not None else {}))
    attrs = dict(attrs or {})
    if consumer == "Conv":
        node = helper.make_node("Conv", ["p", "w", "b"], ["y"], **attrs)
    else:
        node = helper.make_node(consumer, ["p"], ["y"], kernel_shape=[3, 3], **attrs)
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    if pad_is_output:
        outputs.append(helper.make_tensor_value_info("p", TensorProto.FLOAT, None))
    return make_model([pad, node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8, 9, 11])],
                      outputs, inits, opset=opset)


PAD_FOLDS = {
    "conv": dict(),
    "conv_own_pads": dict(attrs={"pads": [1, 0, 0, 1], "strides": [2, 1]}),
    "conv_axes": dict(pads=(1, 2, 2, 0), axes=(2, -1), opset=18),
    "conv_zero_value": dict(value=0.0),
    "conv_pad2": dict(opset=10),
    "avg": dict(consumer="AveragePool"),
    "avg_counted_pads": dict(consumer="AveragePool", attrs={"pads": [1, 0, 0, 0], "count_include_pad": 1}),
    "avg_strided": dict(consumer="AveragePool", pads=(0, 0, 2, 1, 0, 0, 0, 2), attrs={"strides": [2, 2]}),
}
PAD_LEFT = {
    "value": dict(value=1.5),
    "negative_zero": dict(value=-0.0),
    "reflect": dict(mode="reflect"),
    "channel_axis": dict(consumer="AveragePool", pads=(0, 1, 1, 1, 0, 0, 1, 1)),
    "negative": dict(pads=(0, 0, 1, -1, 0, 0, 1, 1)),
    "auto_pad": dict(attrs={"auto_pad": "SAME_UPPER"}),
    "pad_output": dict(pad_is_output=True),
    "max_pool": dict(consumer="MaxPool"),
    "avg_uncounted_pads": dict(consumer="AveragePool", attrs={"pads": [1, 1, 0, 0]}),
    "avg_ceil": dict(consumer="AveragePool", attrs={"ceil_mode": 1, "strides": [2, 2]}),
    # 2 + 1 rows of padding before a 3-row window: onnxruntime refuses a pool padded so
    "avg_past_kernel": dict(consumer="AveragePool", attrs={"pads": [1, 0, 0, 0], "count_include_pad": 1},
                            pads=(0, 0, 2, 0, 0, 0, 0, 0)),
}


@pytest.mark.parametrize("case", list(PAD_FOLDS) + list(PAD_LEFT))
def test_pad_folds_into_conv_and_average_pool(case):
    """A constant zero Pad of the spatial axes becomes the next Conv's or
    AveragePool's padding (AveragePool then counts the padding, as the
    explicit zeros were counted) from level 1 on; anything that would change
    the result keeps its Pad.  Same outputs at every level, and in
    onnxruntime running the saved graph."""
    model = _pad_model(**{**PAD_FOLDS, **PAD_LEFT}[case])
    x = np.random.default_rng(12).standard_normal((2, 8, 9, 11)).astype(np.float32)
    check_all_levels(model, {"x": x})
    saved = onnx.load_from_string(Session(model, opt_level=1).save())
    ops = [n.op_type for n in saved.graph.node]
    assert ("Pad" in ops) == (case in PAD_LEFT), ops
    for got, want in zip(ort_run(saved, {"x": x}), ort_run(model, {"x": x})):
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    if case in PAD_FOLDS and "avg" in case:
        node = saved.graph.node[0]
        assert helper.get_attribute_value(next(a for a in node.attribute if a.name == "count_include_pad")) == 1
