"""Transformer fusions and the kernels behind them (issue 4), against
onnxruntime.

The fusion pass (src/model/passes/fuse_transformer.c, level 2) turns the
GELU written with Erf into com.microsoft Gelu / BiasGelu, Add + LayerNorm
into SkipLayerNormalization (with the projection's bias), and MatMul / Div
by a constant into FusedMatMul.  Every model here is checked at every
optimization level and at 1 and 2 threads against onnxruntime, and the
optimized model onnx_pg saves is run in onnxruntime again: the fused nodes
must be onnxruntime's own operators with its semantics.  The contrib kernels
are also checked one by one on shapes the fusions do not produce
(broadcasting, optional inputs and outputs, transposed operands), plus the
GEMM epilogues (Gemm's bias row, FusedGemm's activation), batched MatMul
across threads and the vectorized Softmax rows.

Tolerances: rtol 1e-4, atol 1e-5 x the output's largest magnitude.  No
timing assertions here; bench/ measures speed.
"""
import collections
import math
import os

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from oxengine import EngineError, Session

RTOL = 1e-4
HERE = os.path.dirname(os.path.abspath(__file__))
MS = "com.microsoft"


def make_model(nodes, inputs, outputs, initializers=(), opset=17, ms=False):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(MS, 1)] if ms else [])
    return helper.make_model(graph, opset_imports=opsets, ir_version=8)


def as_bytes(model):
    return model if isinstance(model, (bytes, bytearray)) else model.SerializeToString()


def ort_run(model, feeds):
    sess = ort.InferenceSession(as_bytes(model), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def assert_close(got, want, what):
    assert len(got) == len(want), what
    for i, (g, w) in enumerate(zip(got, want)):
        w = np.asarray(w)
        assert g.shape == w.shape, f"{what}: output {i} has shape {g.shape}, expected {w.shape}"
        scale = float(np.abs(w[np.isfinite(w)]).max()) if np.isfinite(w).any() else 1.0
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=1e-5 * max(scale, 1e-30), err_msg=f"{what}: output {i}")


# the domains of the fused operators the passes make (placement() names the op alone)
FUSED_DOMAIN = {op: MS for op in ("BiasGelu", "FusedGemm", "FusedMatMul", "Gelu", "SkipLayerNormalization")}
FUSED_DOMAIN["ScaledDotProductAttention"] = "onnx_pg.fused"
SDPA = "onnx_pg.fused:ScaledDotProductAttention"


def op_counts(session):
    """the optimized graph's operators, "domain:op" for the fused ones"""
    return collections.Counter((FUSED_DOMAIN[op] + ":" if op in FUSED_DOMAIN else "") + op
                               for _, op, _ in session.placement())


def check_everywhere(model, feeds, want=None):
    """Every level and thread count agrees with onnxruntime; so does the saved
    level-3 model run in onnxruntime.  Returns the level-3 session."""
    want = ort_run(model, feeds) if want is None else want
    best = None
    for level in (0, 1, 2, 3):
        for threads in (1, 2):
            s = Session(as_bytes(model), opt_level=level, threads=threads)
            assert_close(s.run(feeds), want, f"opt level {level}, {threads} threads")
            if level == 3 and threads == 1:
                best = s
    # a session that runs the graph may hold engine-private fusions: it refuses to
    # save them; the portable graph (onnxruntime's own operators) saves and runs there
    if op_counts(best)[SDPA]:
        with pytest.raises(EngineError, match="portable_graph"):
            best.save()
    saved = Session(as_bytes(model), opt_level=3, portable=True).save()
    assert_close(ort_run(saved, feeds), want, "saved optimized model in onnxruntime")
    return best


# ---- a BERT-shaped encoder as PyTorch exports it ---------------------------

def gelu_nodes(x, out, form, p):
    """x * 0.5 * (1 + erf(x / sqrt(2))) in one of the orders exporters write."""
    if form == 0:  # torch: div, erf, add, mul x, mul 0.5
        return [helper.make_node("Div", [x, "c_sqrt2"], [p + "d"]), helper.make_node("Erf", [p + "d"], [p + "e"]),
                helper.make_node("Add", [p + "e", "c_one"], [p + "a"]),
                helper.make_node("Mul", [x, p + "a"], [p + "m"]), helper.make_node("Mul", [p + "m", "c_half"], [out])]
    if form == 1:  # mul by 1/sqrt(2); (a * 0.5) * x
        return [helper.make_node("Mul", ["c_rsqrt2", x], [p + "d"]), helper.make_node("Erf", [p + "d"], [p + "e"]),
                helper.make_node("Add", ["c_one", p + "e"], [p + "a"]),
                helper.make_node("Mul", [p + "a", "c_half"], [p + "m"]), helper.make_node("Mul", [x, p + "m"], [out])]
    # (x * 0.5) * a
    return [helper.make_node("Div", [x, "c_sqrt2"], [p + "d"]), helper.make_node("Erf", [p + "d"], [p + "e"]),
            helper.make_node("Add", [p + "e", "c_one"], [p + "a"]),
            helper.make_node("Mul", [x, "c_half"], [p + "h"]), helper.make_node("Mul", [p + "h", p + "a"], [out])]


def encoder_model(layers=2, hidden=64, heads=4, ffn=192, seq=16, vocab=50, gelu_form=0, seed=0):
    rng = np.random.default_rng(seed)
    d = hidden // heads
    inits, nodes = [], []

    def w(name, *shape, scale=None):
        scale = scale if scale is not None else 1.0 / math.sqrt(shape[0])
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def c(name, value, dtype=np.float32):
        inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), name))
        return name

    c("c_sqrt2", math.sqrt(2.0))
    c("c_rsqrt2", 1.0 / math.sqrt(2.0))
    c("c_one", 1.0)
    c("c_half", 0.5)
    c("c_scale", math.sqrt(d))
    c("s_heads", [0, 0, heads, d], np.int64)
    c("s_hidden", [0, 0, hidden], np.int64)
    w("tok", vocab, hidden, scale=1.0)
    w("pos", seq, hidden, scale=1.0)
    c("ln_g", rng.uniform(0.5, 1.5, hidden))
    c("ln_b", rng.standard_normal(hidden) * 0.1)
    nodes += [helper.make_node("Gather", ["tok", "ids"], ["emb_t"]),
              helper.make_node("Add", ["emb_t", "pos"], ["emb"]),
              helper.make_node("LayerNormalization", ["emb", "ln_g", "ln_b"], ["h0"], axis=-1, epsilon=1e-12)]
    h = "h0"
    for i in range(layers):
        p = f"l{i}_"
        for t, perm in (("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]), ("v", [0, 2, 1, 3])):
            nodes += [helper.make_node("MatMul", [h, w(p + "W" + t, hidden, hidden)], [p + t + "m"]),
                      helper.make_node("Add", [c(p + "b" + t, rng.standard_normal(hidden) * 0.1), p + t + "m"], [p + t]),
                      helper.make_node("Reshape", [p + t, "s_heads"], [p + t + "r"]),
                      helper.make_node("Transpose", [p + t + "r"], [p + t + "t"], perm=perm)]
        nodes += [helper.make_node("MatMul", [p + "qt", p + "kt"], [p + "s"]),
                  helper.make_node("Div", [p + "s", "c_scale"], [p + "sd"]),
                  helper.make_node("Softmax", [p + "sd"], [p + "pr"], axis=-1),
                  helper.make_node("MatMul", [p + "pr", p + "vt"], [p + "cx"]),
                  helper.make_node("Transpose", [p + "cx"], [p + "cxt"], perm=[0, 2, 1, 3]),
                  helper.make_node("Reshape", [p + "cxt", "s_hidden"], [p + "cxr"]),
                  helper.make_node("MatMul", [p + "cxr", w(p + "Wo", hidden, hidden)], [p + "om"]),
                  helper.make_node("Add", [c(p + "bo", rng.standard_normal(hidden) * 0.1), p + "om"], [p + "o"]),
                  helper.make_node("Add", [h, p + "o"], [p + "r1"]),
                  helper.make_node("LayerNormalization", [p + "r1", c(p + "g1", rng.uniform(0.5, 1.5, hidden)),
                                                          c(p + "be1", rng.standard_normal(hidden) * 0.1)],
                                   [p + "h1"], axis=-1, epsilon=1e-12),
                  helper.make_node("MatMul", [p + "h1", w(p + "W1", hidden, ffn)], [p + "f1m"]),
                  helper.make_node("Add", [c(p + "b1", rng.standard_normal(ffn) * 0.1), p + "f1m"], [p + "f1"])]
        nodes += gelu_nodes(p + "f1", p + "g", gelu_form, p + "gelu_")
        nodes += [helper.make_node("MatMul", [p + "g", w(p + "W2", ffn, hidden)], [p + "f2m"]),
                  helper.make_node("Add", [p + "f2m", c(p + "b2", rng.standard_normal(hidden) * 0.1)], [p + "f2"]),
                  helper.make_node("Add", [p + "h1", p + "f2"], [p + "r2"]),
                  helper.make_node("LayerNormalization", [p + "r2", c(p + "g2", rng.uniform(0.5, 1.5, hidden)),
                                                          c(p + "be2", rng.standard_normal(hidden) * 0.1)],
                                   [p + "h2"], axis=-1, epsilon=1e-12)]
        h = p + "h2"
    nodes.append(helper.make_node("Identity", [h], ["y"]))
    return make_model(nodes, [helper.make_tensor_value_info("ids", TensorProto.INT64, ["N", seq])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)


def ids(batch, seq=16, vocab=50, seed=1):
    return {"ids": np.random.default_rng(seed).integers(0, vocab, (batch, seq)).astype(np.int64)}


@pytest.mark.parametrize("gelu_form", [0, 1, 2])
def test_encoder_fusions_agree_with_onnxruntime(gelu_form):
    model = encoder_model(layers=2, gelu_form=gelu_form)
    s = check_everywhere(model, ids(3))
    ops = op_counts(s)
    assert ops[MS + ":BiasGelu"] == 2, ops
    assert ops[MS + ":SkipLayerNormalization"] == 5, ops  # embeddings + 2 per layer
    # attention (MatMul, the 1/sqrt(d) Div, Softmax, MatMul and the head Transposes) is one node
    assert ops[SDPA] == 2 and ops["Softmax"] == 0 and ops[MS + ":FusedMatMul"] == 0, ops
    assert ops["Transpose"] == 0, ops
    assert op_counts(Session(model.SerializeToString(), opt_level=3, portable=True))[MS + ":FusedMatMul"] == 2
    assert ops["Erf"] == 0 and ops["LayerNormalization"] == 0 and ops["Div"] == 0, ops
    # the three Q/K/V biases: Gemm epilogues (fuse_matmul_add, A of rank 3 through Reshape)
    assert ops["Add"] == 0 and ops["Gemm"] == 6, ops


def test_encoder_batch_one_and_unfused_levels():
    model = encoder_model(layers=1, hidden=48, heads=3, ffn=100, seq=16)
    check_everywhere(model, ids(1))
    ops1 = op_counts(Session(model.SerializeToString(), opt_level=1))
    assert ops1[MS + ":BiasGelu"] == 0 and ops1["Erf"] == 1, "level 1 must not run the transformer fusions"


def test_bench_encoder_when_present():
    path = os.path.join(HERE, "..", "..", "bench", "models", "encoder.onnx")
    if not os.path.exists(path):
        pytest.skip("bench/models/encoder.onnx not generated (make bench)")
    with open(path, "rb") as f:
        data = f.read()
    feeds = {"input_ids": np.random.default_rng(0).integers(0, 1000, (1, 128)).astype(np.int64)}
    want = ort_run(data, feeds)
    s = Session(data, opt_level=3)
    assert_close(s.run(feeds), want, "encoder, level 3")
    assert_close(ort_run(Session(data, opt_level=3, portable=True).save(), feeds), want,
                 "encoder saved optimized, in onnxruntime")
    ops = op_counts(s)
    assert ops[MS + ":SkipLayerNormalization"] == 25 and ops[MS + ":BiasGelu"] == 12, ops
    assert ops[SDPA] == 12 and ops["Softmax"] == 0, ops


@pytest.mark.parametrize("name", ["bert_encoder", "transformer_encoder"])
def test_network_encoders_saved_models_load_in_onnxruntime(name):
    import sys
    sys.path.insert(0, os.path.join(HERE, "..", "models", "networks"))
    import netinputs as ni
    path, why = ni.ensure(name)
    if path is None:
        pytest.skip(why)
    with open(path, "rb") as f:
        data = f.read()
    feeds = ni.inputs(name)
    want = ort_run(data, feeds)
    for threads in (1, 2):
        s = Session(data, opt_level=3, threads=threads)
        assert_close(s.run(feeds), want, f"{name} level 3, {threads} threads")
    assert_close(ort_run(Session(data, opt_level=3, portable=True).save(), feeds), want,
                 f"{name} saved optimized, in onnxruntime")
    assert op_counts(s)[MS + ":SkipLayerNormalization"] >= 2
    # both layers' attention, its padding mask included, is one fused node each
    assert op_counts(s)[SDPA] == 2 and op_counts(s)["Softmax"] == 0, op_counts(s)


def test_no_fusion_where_an_intermediate_is_needed():
    """The residual sum and the GELU's erf are graph outputs: nothing may vanish."""
    rng = np.random.default_rng(3)
    g = numpy_helper.from_array(rng.uniform(0.5, 1.5, 8).astype(np.float32), "g")
    b = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b")
    consts = [numpy_helper.from_array(np.array(v, np.float32), n)
              for n, v in (("c_sqrt2", math.sqrt(2)), ("c_one", 1.0), ("c_half", 0.5))]
    nodes = [helper.make_node("Add", ["x", "z"], ["s"]),
             helper.make_node("LayerNormalization", ["s", "g", "b"], ["ln"], axis=-1),
             helper.make_node("Div", ["ln", "c_sqrt2"], ["d"]), helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "c_one"], ["a"]), helper.make_node("Mul", ["ln", "a"], ["m"]),
             helper.make_node("Mul", ["m", "c_half"], ["y"])]
    f = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, None)  # noqa: E731
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8]),
                               helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3, 8])],
                       [f("y"), f("s"), f("e")], [g, b] + consts)
    feeds = {"x": rng.standard_normal((2, 3, 8)).astype(np.float32),
             "z": rng.standard_normal((2, 3, 8)).astype(np.float32)}
    s = check_everywhere(model, feeds)
    ops = op_counts(s)
    assert ops["LayerNormalization"] == 1 and ops["Erf"] == 1, ops


def test_layer_norm_with_statistics_outputs_is_not_fused():
    rng = np.random.default_rng(4)
    g = numpy_helper.from_array(rng.uniform(0.5, 1.5, 33).astype(np.float32), "g")
    nodes = [helper.make_node("Add", ["x", "z"], ["s"]),
             helper.make_node("LayerNormalization", ["s", "g"], ["y", "mean", "inv"], axis=-1)]
    f = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, None)  # noqa: E731
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 33]),
                               helper.make_tensor_value_info("z", TensorProto.FLOAT, [4, 33])],
                       [f("y"), f("mean"), f("inv")], [g])
    feeds = {"x": rng.standard_normal((4, 33)).astype(np.float32), "z": rng.standard_normal((4, 33)).astype(np.float32)}
    s = check_everywhere(model, feeds)
    assert op_counts(s)["LayerNormalization"] == 1


def test_matmul_scale_fusion_broadcast_and_mul_form():
    rng = np.random.default_rng(5)
    k = numpy_helper.from_array(np.array(0.37, np.float32), "k")
    nodes = [helper.make_node("MatMul", ["a", "b"], ["p"]), helper.make_node("Mul", ["k", "p"], ["y"])]
    model = make_model(nodes, [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 1, 5, 7]),
                               helper.make_tensor_value_info("b", TensorProto.FLOAT, [3, 7, 6])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [k])
    feeds = {"a": rng.standard_normal((2, 1, 5, 7)).astype(np.float32),
             "b": rng.standard_normal((3, 7, 6)).astype(np.float32)}
    s = check_everywhere(model, feeds)
    assert op_counts(s)[MS + ":FusedMatMul"] == 1


def test_matmul_scaled_operand_fusion():
    """Queries scaled before the product (PyTorch's MultiheadAttention: q / sqrt(d) @ k^T), by Div
    or by Mul from either side, and both operands and the product at once: one FusedMatMul whose
    alpha is the product of the factors.  An operand read elsewhere too keeps its node."""
    rng = np.random.default_rng(15)
    c = numpy_helper.from_array(np.array(4.0, np.float32), "c")
    h = numpy_helper.from_array(np.array([0.5], np.float32), "h")
    f = lambda n, shape: helper.make_tensor_value_info(n, TensorProto.FLOAT, shape)  # noqa: E731
    ins = [f("q", [6, 5, 8]), f("k", [6, 8, 5])]
    feeds = {"q": rng.standard_normal((6, 5, 8)).astype(np.float32),
             "k": rng.standard_normal((6, 8, 5)).astype(np.float32)}
    cases = {
        "div": ([helper.make_node("Div", ["q", "c"], ["qs"]), helper.make_node("MatMul", ["qs", "k"], ["y"])], 1, 0),
        "mul_left": ([helper.make_node("Mul", ["h", "k"], ["ks"]), helper.make_node("MatMul", ["q", "ks"], ["y"])], 1, 0),
        "all": ([helper.make_node("Div", ["q", "c"], ["qs"]), helper.make_node("Mul", ["k", "h"], ["ks"]),
                 helper.make_node("MatMul", ["qs", "ks"], ["p"]), helper.make_node("Div", ["p", "c"], ["y"])], 1, 0),
        "shared": ([helper.make_node("Div", ["q", "c"], ["qs"]), helper.make_node("MatMul", ["qs", "k"], ["p"]),
                    helper.make_node("Add", ["p", "p"], ["y"]), helper.make_node("Identity", ["qs"], ["z"])], 0, 1),
    }
    for name, (nodes, fused, divs) in cases.items():
        outs = [f("y", None)] + ([f("z", None)] if name == "shared" else [])
        model = make_model(nodes, ins, outs, [c, h])
        s = check_everywhere(model, feeds)
        ops = op_counts(s)
        assert ops[MS + ":FusedMatMul"] == fused and ops["Div"] == divs and ops["Mul"] == 0, (name, ops)


# ---- the contrib kernels one by one -----------------------------------------

def contrib_model(op, inputs, outputs, initializers=(), **attrs):
    """One com.microsoft node; inputs / outputs are (name, elem, shape) or '' (omitted)."""
    node = helper.make_node(op, [i[0] if i else "" for i in inputs], [o[0] if o else "" for o in outputs],
                            domain=MS, **attrs)
    ins = [helper.make_tensor_value_info(n, t, s) for i in inputs if i for n, t, s in [i]
           if n not in {x.name for x in initializers}]
    outs = [helper.make_tensor_value_info(n, t, None) for o in outputs if o for n, t, s in [o]]
    return make_model([node], ins, outs, initializers, ms=True)


def test_contrib_gelu_and_bias_gelu():
    rng = np.random.default_rng(6)
    F = TensorProto.FLOAT
    x = (rng.standard_normal((3, 5, 37)) * 3).astype(np.float32)
    x[0, 0, :4] = [0.0, -10.0, 10.0, 1e-8]
    check_everywhere(contrib_model("Gelu", [("x", F, x.shape)], [("y", F, None)]), {"x": x})
    bias = rng.standard_normal(37).astype(np.float32)
    check_everywhere(contrib_model("BiasGelu", [("x", F, x.shape), ("b", F, [37])], [("y", F, None)]),
                     {"x": x, "b": bias})
    # double Gelu against the definition (onnxruntime has float only)
    xd = rng.standard_normal((4, 9))
    got = Session(contrib_model("Gelu", [("x", TensorProto.DOUBLE, xd.shape)],
                                [("y", TensorProto.DOUBLE, None)]).SerializeToString()).run({"x": xd})[0]
    want = xd * 0.5 * (1 + np.vectorize(math.erf)(xd / math.sqrt(2)))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_bias_gelu_rejects_a_bias_that_does_not_broadcast():
    F = TensorProto.FLOAT
    s = Session(contrib_model("BiasGelu", [("x", F, [2, 8]), ("b", F, [5])], [("y", F, None)]).SerializeToString())
    with pytest.raises(EngineError, match="do not broadcast"):
        s.run({"x": np.zeros((2, 8), np.float32), "b": np.zeros(5, np.float32)})


@pytest.mark.parametrize("case", ["full", "skip_broadcast", "no_beta_no_bias", "odd_hidden"])
def test_contrib_skip_layer_norm(case):
    rng = np.random.default_rng(7)
    F = TensorProto.FLOAT
    h = 45 if case == "odd_hidden" else 64
    x = rng.standard_normal((2, 5, h)).astype(np.float32)
    skip = rng.standard_normal((5, h) if case == "skip_broadcast" else (2, 5, h)).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, h).astype(np.float32)
    beta = rng.standard_normal(h).astype(np.float32)
    bias = rng.standard_normal(h).astype(np.float32)
    with_opt = case != "no_beta_no_bias"
    inputs = [("x", F, x.shape), ("skip", F, skip.shape), ("gamma", F, [h]),
              ("beta", F, [h]) if with_opt else "", ("bias", F, [h]) if with_opt else ""]
    feeds = {"x": x, "skip": skip, "gamma": gamma}
    if with_opt:
        feeds.update(beta=beta, bias=bias)
    outputs = [("y", F, None)] + ([("mean", F, None), ("inv", F, None), ("sum", F, None)]
                                  if case == "full" else [])
    model = contrib_model("SkipLayerNormalization", inputs, outputs, epsilon=1e-5)
    s = check_everywhere(model, feeds)
    if case == "full":
        y, mean, inv, total = s.run(feeds)
        ref_sum = x + skip + bias
        np.testing.assert_allclose(total, ref_sum, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(mean, ref_sum.mean(-1, keepdims=True), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(inv, 1 / np.sqrt(ref_sum.var(-1, keepdims=True) + 1e-5), rtol=1e-4)


def test_skip_layer_norm_rejects_bad_shapes():
    F = TensorProto.FLOAT
    model = contrib_model("SkipLayerNormalization", [("x", F, [2, 8]), ("skip", F, [2, 8]), ("gamma", F, [7])],
                          [("y", F, None)])
    with pytest.raises(EngineError, match="gamma"):
        Session(model.SerializeToString()).run({"x": np.zeros((2, 8), np.float32),
                                                "skip": np.zeros((2, 8), np.float32),
                                                "gamma": np.ones(7, np.float32)})
    model = contrib_model("SkipLayerNormalization", [("x", F, [2, 8]), ("skip", F, [2, 6]), ("gamma", F, [8])],
                          [("y", F, None)])
    with pytest.raises(EngineError, match="hidden sizes differ"):
        Session(model.SerializeToString()).run({"x": np.zeros((2, 8), np.float32),
                                                "skip": np.zeros((2, 6), np.float32),
                                                "gamma": np.ones(8, np.float32)})


@pytest.mark.parametrize("ta,tb,alpha", [(0, 0, 0.125), (1, 0, 2.0), (0, 1, -0.5), (1, 1, 1.0)])
def test_contrib_fused_matmul(ta, tb, alpha):
    rng = np.random.default_rng(8)
    F = TensorProto.FLOAT
    a_shape = (2, 3, 17, 13) if ta else (2, 3, 13, 17)
    b_shape = (3, 11, 17) if tb else (3, 17, 11)
    feeds = {"a": rng.standard_normal(a_shape).astype(np.float32), "b": rng.standard_normal(b_shape).astype(np.float32)}
    check_everywhere(contrib_model("FusedMatMul", [("a", F, a_shape), ("b", F, b_shape)], [("y", F, None)],
                                   alpha=alpha, transA=ta, transB=tb), feeds)
    # a constant B, packed at session creation
    binit = numpy_helper.from_array(feeds["b"][0], "b")
    model = contrib_model("FusedMatMul", [("a", F, a_shape), ("b", F, b_shape[1:])], [("y", F, None)], [binit],
                          alpha=alpha, transA=ta, transB=tb)
    check_everywhere(model, {"a": feeds["a"]})


# operand shapes as stored, flags, and the numpy view each flag stands for
TRANS_BATCH_CASES = [
    ((5, 6, 8), (6, 8, 7), dict(transBatchA=1)),
    ((6, 5, 8), (8, 6, 7), dict(transBatchB=1)),
    ((5, 6, 8), (7, 6, 8), dict(transBatchA=1, transBatchB=1, transB=1)),
    ((8, 6, 5), (6, 8, 7), dict(transBatchA=1, transA=1, alpha=0.25)),
    ((5, 2, 3, 8), (1, 3, 8, 4), dict(transBatchA=1)),       # B's batch broadcast
    ((5, 2, 3, 8), (4, 1, 3, 8), dict(transBatchA=1, transBatchB=1, transB=1)),
    ((64, 24, 16), (64, 24, 16), dict(transBatchA=1, transBatchB=1, transB=1, alpha=0.125)),  # attention's q . k^T
    ((2, 1, 4), (5, 4, 6), dict(transBatchA=1)),             # A's one batch matrix broadcast
    ((0, 3, 4), (3, 4, 5), dict(transBatchA=1)),             # empty: no rows
    ((2, 3, 0), (3, 0, 5), dict(transBatchA=1)),             # empty: no depth, zeros out
]


def trans_batch_view(x, trans_batch, trans):
    """FusedMatMul's reading of an operand: transBatch moves the first axis to the rows."""
    if trans_batch:
        r = x.ndim
        x = x.transpose(list(range(1, r - 1)) + [0, r - 1])
    return np.swapaxes(x, -1, -2) if trans else x


@pytest.mark.parametrize("a_shape,b_shape,attrs", TRANS_BATCH_CASES)
def test_fused_matmul_trans_batch(a_shape, b_shape, attrs):
    """transBatchA / transBatchB (onnxruntime's semantics: an operand [M, b..., K] read as
    [b..., M, K]) against onnxruntime at every level and thread count, and against numpy's
    matmul of the explicitly transposed operands."""
    rng = np.random.default_rng(21)
    F = TensorProto.FLOAT
    feeds = {"a": rng.standard_normal(a_shape).astype(np.float32), "b": rng.standard_normal(b_shape).astype(np.float32)}
    s = check_everywhere(contrib_model("FusedMatMul", [("a", F, a_shape), ("b", F, b_shape)], [("y", F, None)],
                                       **attrs), feeds)
    want = attrs.get("alpha", 1.0) * np.matmul(
        trans_batch_view(feeds["a"], attrs.get("transBatchA", 0), attrs.get("transA", 0)),
        trans_batch_view(feeds["b"], attrs.get("transBatchB", 0), attrs.get("transB", 0)))
    assert_close(s.run(feeds), [want], "numpy reference")


def test_fused_matmul_trans_batch_double():
    rng = np.random.default_rng(22)
    D = TensorProto.DOUBLE
    a = rng.standard_normal((5, 6, 8))
    b = rng.standard_normal((7, 6, 8))
    model = contrib_model("FusedMatMul", [("a", D, a.shape), ("b", D, b.shape)], [("y", D, None)],
                          transBatchA=1, transBatchB=1, transB=1)
    want = np.matmul(a.transpose(1, 0, 2), b.transpose(1, 2, 0))
    for threads in (1, 2):
        np.testing.assert_allclose(Session(model.SerializeToString(), threads=threads).run({"a": a, "b": b})[0],
                                   want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("a_shape,b_shape", [((3, 4), (4, 5)), ((3, 2, 4), (4, 5)), ((2, 3, 4), (1, 2, 4, 5))])
def test_fused_matmul_trans_batch_needs_equal_ranks_of_three(a_shape, b_shape):
    """onnxruntime's rule: with either transBatch flag both operands have one rank, 3 or more."""
    F = TensorProto.FLOAT
    model = contrib_model("FusedMatMul", [("a", F, a_shape), ("b", F, b_shape)], [("y", F, None)],
                          transBatchA=1)
    with pytest.raises(EngineError, match="need the same rank, 3 or more"):
        Session(model.SerializeToString()).run({"a": np.zeros(a_shape, np.float32),
                                                "b": np.zeros(b_shape, np.float32)})


def test_fused_matmul_trans_batch_flags_are_booleans():
    F = TensorProto.FLOAT
    model = contrib_model("FusedMatMul", [("a", F, [2, 3, 4]), ("b", F, [2, 4, 5])], [("y", F, None)],
                          transBatchB=2)
    with pytest.raises(EngineError, match="transBatchA and transBatchB must be 0 or 1"):
        Session(model.SerializeToString())


# ---- GEMM epilogues, batched MatMul, Softmax rows -----------------------------

@pytest.mark.parametrize("m", [1, 2, 37, 300])
@pytest.mark.parametrize("c_shape,beta", [((50,), 1.0), ((1, 50), 0.5), ((), 2.0), (("M", 50), 0.75), (None, 1.0)])
def test_gemm_bias_row_and_activation(m, c_shape, beta):
    rng = np.random.default_rng(9)
    k, n = 70, 50
    w = numpy_helper.from_array(rng.standard_normal((n, k)).astype(np.float32), "w")
    inits = [w]
    ins = ["x", "w"]
    if c_shape is not None:
        shape = tuple(m if d == "M" else d for d in c_shape)
        inits.append(numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), "c"))
        ins.append("c")
    nodes = [helper.make_node("Gemm", ins, ["g"], transB=1, alpha=0.9, beta=beta),
             helper.make_node("Relu", ["g"], ["y"])]
    model = make_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    s = check_everywhere(model, {"x": rng.standard_normal((m, k)).astype(np.float32)})
    assert op_counts(s)[MS + ":FusedGemm"] == 1


def test_batched_matmul_across_threads():
    rng = np.random.default_rng(10)
    nodes = [helper.make_node("MatMul", ["a", "b"], ["y"])]
    for a_shape, b_shape in (((2, 3, 33, 17), (2, 3, 17, 29)), ((4, 1, 5, 8), (3, 8, 40)), ((12, 128, 64), (12, 64, 128))):
        model = make_model(nodes, [helper.make_tensor_value_info("a", TensorProto.FLOAT, a_shape),
                                   helper.make_tensor_value_info("b", TensorProto.FLOAT, b_shape)],
                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
        check_everywhere(model, {"a": rng.standard_normal(a_shape).astype(np.float32),
                                 "b": rng.standard_normal(b_shape).astype(np.float32)})


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_softmax_rows(op):
    rng = np.random.default_rng(11)
    for n in (1, 7, 16, 17, 128, 131):
        x = (rng.standard_normal((3, 4, n)) * 20).astype(np.float32)
        x[0, 0, 0] = -np.inf  # a masked position
        x[1, 1, -1] = 80.0  # exp of the others underflows
        x[2, 0] = -1e4 * np.arange(n)
        model = make_model([helper.make_node(op, ["x"], ["y"], axis=-1)],
                           [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
        want = ort_run(model, {"x": x})
        for threads in (1, 2):
            got = Session(model.SerializeToString(), threads=threads).run({"x": x})
            assert_close(got, want, f"{op} rows of {n}, {threads} threads")
