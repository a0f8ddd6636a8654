"""Attention fusion (issue 4): MatMul -> Softmax -> MatMul, with the head
Transposes around it, becomes onnx_pg.fused ScaledDotProductAttention
(src/model/passes/fuse_attention.c, src/kernels/cpu/transformer_sdpa.c).

Every model is checked against onnxruntime at every optimization level, at
1 and 2 threads, with the fused kernel's AVX-512 code (where the CPU has it)
and its portable C.  The patterns are the two that exporters write (heads
split as [batch, heads, seq, width] by a hand-written BERT layer, and as
[seq, batch * heads, width] by PyTorch's MultiheadAttention) and bare
products with broadcasting, odd sizes and empty axes; the fusion must also
stay away where the nodes are not exactly attention.  The fused operator is
engine-private: a session that runs it refuses to save it, and a portable
session saves onnxruntime's operators instead.

Tolerances: rtol 1e-4, atol 1e-5 x the output's largest magnitude (the
fused kernel sums in another order and applies Softmax's division to the
output rows).
"""
import collections
import math

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import oxengine
from oxengine import EngineError, Session

SDPA = "ScaledDotProductAttention"


def model_of(nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8).SerializeToString()


def tensor(name, shape, dt=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dt, shape)


def ort_run(model, feeds):
    return ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)


def ops_of(session):
    return collections.Counter(op for _, op, _ in session.placement())


def assert_close(got, want, what):
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"{what}: output {i} has shape {g.shape}, expected {w.shape}"
        finite = np.isfinite(w)
        scale = float(np.abs(w[finite]).max()) if finite.any() else 1.0
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5 * max(scale, 1e-30), err_msg=f"{what}: output {i}")


@pytest.fixture(params=["native", "portable"])
def kernel_code(request):
    before = oxengine.force_sdpa_portable(request.param == "portable")
    yield request.param
    oxengine.force_sdpa_portable(before)


def check(model, feeds, fused, want=None):
    """every level and thread count against onnxruntime; fused: the number of
    ScaledDotProductAttention nodes level 2 must make"""
    want = ort_run(model, feeds) if want is None else want
    for level in (0, 1, 2, 3):
        for threads in (1, 2):
            s = Session(model, opt_level=level, threads=threads)
            assert_close(s.run(feeds), want, f"level {level}, {threads} threads")
            if level >= 2:
                assert ops_of(s)[SDPA] == fused, ops_of(s)
            else:
                assert ops_of(s)[SDPA] == 0, "levels 0 and 1 must not fuse"
    if fused:
        with pytest.raises(EngineError, match="engine-private operator onnx_pg.fused"):
            s.save()
    portable = Session(model, opt_level=3, portable=True)
    assert ops_of(portable)[SDPA] == 0
    assert_close(ort_run(portable.save(), feeds), want, "portable saved model in onnxruntime")
    return want


def bert_attention(batch, seq, heads, width, scale_form="div", mask=None):
    """q, k, v [batch, seq, heads * width] split into heads as a hand-written
    BERT layer does, scaled after the product (Div) or on Q (Mul); mask: the
    shape of an input m added to the scores (Hugging Face's [batch, 1, 1, seq])"""
    d = heads * width
    shape = numpy_helper.from_array(np.array([batch, seq, heads, width], np.int64), "hshape")
    back = numpy_helper.from_array(np.array([batch, seq, d], np.int64), "oshape")
    c = numpy_helper.from_array(np.array(math.sqrt(width), np.float32), "c")
    nodes = [helper.make_node("Reshape", [x, "hshape"], [x + "4"]) for x in ("q", "k", "v")]
    nodes += [helper.make_node("Transpose", ["q4"], ["qt"], perm=[0, 2, 1, 3]),
              helper.make_node("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),
              helper.make_node("Transpose", ["v4"], ["vt"], perm=[0, 2, 1, 3])]
    if scale_form == "div":
        nodes += [helper.make_node("MatMul", ["qt", "kt"], ["s0"]), helper.make_node("Div", ["s0", "c"], ["s"])]
    else:
        nodes += [helper.make_node("Div", ["qt", "c"], ["qs"]), helper.make_node("MatMul", ["qs", "kt"], ["s"])]
    if mask is not None:
        nodes += [helper.make_node("Add", ["m", "s"], ["sm"])]
    nodes += [helper.make_node("Softmax", ["sm" if mask is not None else "s"], ["p"], axis=-1),
              helper.make_node("MatMul", ["p", "vt"], ["o"]),
              helper.make_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
              helper.make_node("Reshape", ["ot", "oshape"], ["y"])]
    ins = [tensor(x, [batch, seq, d]) for x in ("q", "k", "v")] + ([tensor("m", mask)] if mask is not None else [])
    return model_of(nodes, ins, [tensor("y", [batch, seq, d])], [shape, back, c])


def feeds_of(model, seed=0):
    rng = np.random.default_rng(seed)
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    return {i.name: rng.standard_normal(i.shape).astype(np.float32) for i in sess.get_inputs()}


@pytest.mark.parametrize("shape", [(2, 16, 4, 16), (1, 37, 3, 20), (3, 5, 2, 64), (1, 200, 2, 8)])
@pytest.mark.parametrize("scale_form", ["div", "mul_q"])
def test_bert_heads(kernel_code, shape, scale_form):
    model = bert_attention(*shape, scale_form=scale_form)
    check(model, feeds_of(model), fused=1)
    s = Session(model, opt_level=2)
    assert ops_of(s)["Transpose"] == 0 and ops_of(s)["Softmax"] == 0, ops_of(s)


@pytest.mark.parametrize("mask", [lambda b, s, h: [b, 1, 1, s], lambda b, s, h: [b, h, s, s],
                                  lambda b, s, h: [s, s], lambda b, s, h: [s]])
def test_bert_heads_with_a_mask(kernel_code, mask):
    """an additive mask (padding, causal) broadcast into the scores"""
    batch, seq, heads, width = 2, 19, 3, 16
    shape = mask(batch, seq, heads)
    model = bert_attention(batch, seq, heads, width, mask=shape)
    feeds = feeds_of(model)
    rng = np.random.default_rng(5)
    feeds["m"] = np.where(rng.random(shape) < 0.3, -10000.0, 0.0).astype(np.float32)
    check(model, feeds, fused=1)


def masked(qs, ks, ms, vs, axis=-1, mask_first=False):
    nodes = [helper.make_node("MatMul", ["q", "k"], ["s"]),
             helper.make_node("Add", ["m", "s"] if mask_first else ["s", "m"], ["sm"]),
             helper.make_node("Softmax", ["sm"], ["p"], axis=axis), helper.make_node("MatMul", ["p", "v"], ["y"])]
    return model_of(nodes, [tensor("q", qs), tensor("k", ks), tensor("m", ms), tensor("v", vs)], [tensor("y", None)])


@pytest.mark.parametrize("qs,ks,ms,vs", [
    ([2, 1, 4], [2, 4, 6], [2, 5, 6], [2, 6, 3]),        # the mask's rows widen one query row
    ([2, 3, 4], [2, 4, 1], [2, 3, 7], [2, 7, 5]),        # the mask's columns widen one key
    ([3, 4], [4, 5], [2, 3, 3, 5], [5, 6]),              # the mask adds batch axes
    ([2, 3, 5, 4], [2, 3, 4, 5], [3, 1, 5], [1, 3, 5, 2]),
])
def test_masks_broadcast_as_add_does(kernel_code, qs, ks, ms, vs):
    """the fused kernel broadcasts the mask with the scores and Q', K', V' exactly
    as Add and the second MatMul do, even where the mask widens the scores"""
    for first in (False, True):
        model = masked(qs, ks, ms, vs, mask_first=first)
        check(model, feeds_of(model), fused=1)


def test_causal_mask_and_positive_axes():
    # a causal mask, -inf above the diagonal
    model = masked([2, 6, 4], [2, 4, 6], [6, 6], [2, 6, 3])
    feeds = feeds_of(model)
    feeds["m"] = np.triu(np.full((6, 6), -np.inf, np.float32), 1)
    check(model, feeds, fused=1)
    # axis 2 is the last axis of the scores [2, 6, 6]
    model = masked([2, 6, 4], [2, 4, 6], [6, 6], [2, 6, 3], axis=2)
    check(model, feeds_of(model), fused=1)
    # a rank-4 mask makes the scores rank 4: axis 2 is not the last there
    model = masked([2, 6, 4], [2, 4, 6], [3, 1, 6, 6], [2, 6, 3], axis=2)
    check(model, feeds_of(model), fused=0)


def torch_mha_attention(seq, batch, heads, width):
    """PyTorch MultiheadAttention's export: one packed projection sliced into
    q, k, v [seq, batch, d], heads as [seq, batch * heads, width]"""
    d = heads * width
    rng = np.random.default_rng(7)
    w = numpy_helper.from_array((rng.standard_normal((d, 3 * d)) / math.sqrt(d)).astype(np.float32), "w")
    inits = [w, numpy_helper.from_array(np.array([seq, batch * heads, width], np.int64), "hshape"),
             numpy_helper.from_array(np.array([seq, batch, d], np.int64), "oshape"),
             numpy_helper.from_array(np.array(1 / math.sqrt(width), np.float32), "c"),
             numpy_helper.from_array(np.array([2], np.int64), "ax")]
    for i, name in enumerate("qkv"):
        inits += [numpy_helper.from_array(np.array([i * d], np.int64), name + "0"),
                  numpy_helper.from_array(np.array([(i + 1) * d], np.int64), name + "1")]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["p"])]
    for name in "qkv":
        nodes += [helper.make_node("Slice", ["p", name + "0", name + "1", "ax"], [name]),
                  helper.make_node("Reshape", [name, "hshape"], [name + "h"])]
    nodes += [helper.make_node("Mul", ["qh", "c"], ["qs"]),
              helper.make_node("Transpose", ["qs"], ["qt"], perm=[1, 0, 2]),
              helper.make_node("Transpose", ["kh"], ["kt"], perm=[1, 2, 0]),
              helper.make_node("Transpose", ["vh"], ["vt"], perm=[1, 0, 2]),
              helper.make_node("MatMul", ["qt", "kt"], ["s"]),
              helper.make_node("Softmax", ["s"], ["pr"], axis=-1),
              helper.make_node("MatMul", ["pr", "vt"], ["o"]),
              helper.make_node("Transpose", ["o"], ["ot"], perm=[1, 0, 2]),
              helper.make_node("Reshape", ["ot", "oshape"], ["y"])]
    return model_of(nodes, [tensor("x", [seq, batch, d])], [tensor("y", [seq, batch, d])], inits)


@pytest.mark.parametrize("shape", [(64, 4, 8, 16), (9, 3, 2, 24), (130, 1, 1, 32)])
def test_torch_multihead_heads(kernel_code, shape):
    model = torch_mha_attention(*shape)
    check(model, feeds_of(model), fused=1)


def bare_attention(qs, ks, vs, opset=17, axis=-1, alpha=None):
    nodes = [helper.make_node("MatMul", ["q", "k"], ["s0"])]
    inits = []
    if alpha is not None:
        inits.append(numpy_helper.from_array(np.array(alpha, np.float32), "a"))
        nodes.append(helper.make_node("Mul", ["s0", "a"], ["s"]))
    else:
        nodes[0].output[0] = "s"
    nodes += [helper.make_node("Softmax", ["s"], ["p"], axis=axis),
              helper.make_node("MatMul", ["p", "v"], ["y"])]
    return model_of(nodes, [tensor("q", qs), tensor("k", ks), tensor("v", vs)], [tensor("y", None)], inits, opset)


@pytest.mark.parametrize("qs,ks,vs", [
    ([5, 7], [7, 37], [37, 19]),                      # rank 2, nothing a multiple of 16
    ([3, 1, 9], [3, 9, 33], [3, 33, 48]),             # one query row
    ([2, 3, 11, 8], [1, 3, 8, 17], [2, 1, 17, 16]),   # batch axes broadcast
    ([1, 300, 16], [1, 16, 300], [1, 300, 16]),       # one group, rows split over threads
])
def test_bare_products(kernel_code, qs, ks, vs):
    model = bare_attention(qs, ks, vs, alpha=0.37)
    check(model, feeds_of(model), fused=1)


def test_extreme_scores_and_nan(kernel_code):
    """large scores (the max is subtracted first), a NaN row, and -inf scores"""
    model = bare_attention([2, 4, 8], [2, 8, 20], [2, 20, 16], alpha=30.0)
    feeds = feeds_of(model)
    feeds["q"][0, 1, 3] = np.nan
    feeds["k"][1, :, 5] = -np.inf * np.sign(feeds["q"][1, 0, :] + 1e-9)
    check(model, feeds, fused=1)


def test_empty_axes(kernel_code):
    """no keys: each output row is an empty sum (zeros); no queries: nothing"""
    for qs, ks, vs in [([2, 3, 4], [2, 4, 0], [2, 0, 5]), ([2, 0, 4], [2, 4, 6], [2, 6, 5])]:
        model = bare_attention(qs, ks, vs)
        rng = np.random.default_rng(0)
        feeds = {n: rng.standard_normal(s).astype(np.float32) for n, s in zip("qkv", (qs, ks, vs))}
        want = [np.zeros(qs[:-1] + vs[-1:], np.float32)]
        for level in (0, 2):
            s = Session(model, opt_level=level)
            assert ops_of(s)[SDPA] == (1 if level else 0)
            assert_close(s.run(feeds), want, f"{qs} level {level}")


@pytest.mark.parametrize("opset,axis,rank", [(11, 1, 3), (13, 1, 3), (17, 0, 2), (11, -1, 3)])
def test_softmax_not_over_the_last_axis_alone(opset, axis, rank):
    """opset 11's Softmax flattens from axis on: only axis = rank - 1 is the
    last axis alone, and only that (or -1) may fuse"""
    shapes = {2: ([6, 4], [4, 6], [6, 5]), 3: ([2, 6, 4], [2, 4, 6], [2, 6, 5])}[rank]
    model = bare_attention(*shapes, opset=opset, axis=axis)
    fused = 1 if axis == -1 or axis == rank - 1 else 0
    check(model, feeds_of(model), fused=fused)


def test_intermediates_that_are_needed_stay():
    """the scores or the probabilities read elsewhere, or a Transpose another
    node reads, keep their nodes: nothing the graph needs may vanish"""
    model = bare_attention([2, 6, 4], [2, 4, 6], [2, 6, 5])
    import onnx
    m = onnx.load_from_string(model)
    m.graph.output.append(tensor("p", None))
    check(m.SerializeToString(), feeds_of(model), fused=0)

    m = onnx.load_from_string(bert_attention(1, 8, 2, 8))
    m.graph.output.append(tensor("kt", None))
    data = m.SerializeToString()
    check(data, feeds_of(data), fused=1)
    s = Session(data, opt_level=2)
    assert ops_of(s)["Transpose"] == 1, "the Transpose read by the graph output stays"


def test_double_is_left_alone():
    nodes = [helper.make_node("MatMul", ["q", "k"], ["s"]), helper.make_node("Softmax", ["s"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"])]
    d = TensorProto.DOUBLE
    model = model_of(nodes, [tensor("q", [2, 3, 4], d), tensor("k", [2, 4, 5], d), tensor("v", [2, 5, 6], d)],
                     [tensor("y", None, d)])
    rng = np.random.default_rng(0)
    feeds = {n: rng.standard_normal(s) for n, s in (("q", (2, 3, 4)), ("k", (2, 4, 5)), ("v", (2, 5, 6)))}
    check(model, feeds, fused=0)


def private_model(perms=None, shapes=([2, 3, 4], [2, 4, 5], [2, 5, 6]), q_type=TensorProto.FLOAT, **attrs):
    node = helper.make_node(SDPA, ["q", "k", "v"], ["y"], domain="onnx_pg.fused", **(perms or {}), **attrs)
    g = helper.make_graph([node], "g", [tensor("q", None, q_type), tensor("k", None), tensor("v", None)],
                          [tensor("y", None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("onnx_pg.fused", 1)],
                             ir_version=8).SerializeToString(), shapes


@pytest.mark.parametrize("perms,shapes,message", [
    ({"perm_q": [0, 1, 1]}, None, "not a permutation"),
    ({"perm_q": [0, 2, 1], "perm_k": [1, 0]}, None, "the same for every perm"),
    ({"perm_y": list(range(9))}, None, "has 9 axes"),
    (None, ([2, 3, 4], [2, 5, 5], [2, 5, 6]), "do not multiply"),
    (None, ([2, 3, 4], [2, 4, 5], [2, 6, 6]), "do not multiply"),
    (None, ([2, 3, 4], [3, 4, 5], [2, 5, 6]), "does not broadcast"),
    (None, ([2, 3, 4], [4, 5], [2, 5, 6]), "rank"),
    (None, ([4], [4], [4]), "rank"),
])
def test_hostile_private_nodes_fail_cleanly(perms, shapes, message):
    """the operator is reachable from a model file: bad attributes and shapes are errors"""
    data, default = private_model(perms)
    shapes = shapes or default
    rng = np.random.default_rng(0)
    feeds = {n: rng.standard_normal(s).astype(np.float32) for n, s in zip("qkv", shapes)}
    with pytest.raises(EngineError, match=message):
        Session(data, opt_level=0).run(feeds)


def test_private_node_direct_and_typed():
    """the operator on its own matches the pattern it stands for; only float32"""
    data, shapes = private_model({"perm_q": [0, 2, 1], "perm_y": [2, 0, 1]}, ([2, 4, 3], [2, 4, 5], [2, 5, 6]),
                                 alpha=0.5)
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in ([2, 4, 3], [2, 4, 5], [2, 5, 6]))
    s = 0.5 * np.transpose(q, (0, 2, 1)) @ k
    p = np.exp(s - s.max(-1, keepdims=True))
    want = np.transpose((p / p.sum(-1, keepdims=True)) @ v, (2, 0, 1))
    got = Session(data, opt_level=0).run({"q": q, "k": k, "v": v})
    assert_close(got, [want], "direct")
    data, _ = private_model(q_type=TensorProto.DOUBLE)
    with pytest.raises(EngineError, match="input 0 must be a float32 tensor"):
        Session(data, opt_level=0).run({"q": q.astype(np.float64), "k": k, "v": v})
