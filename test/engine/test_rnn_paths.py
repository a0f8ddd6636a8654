"""RNN, GRU and LSTM against onnxruntime on the paths batch size picks: one or
two rows stream the recurrent weights (the SGEMM's matrix-vector path), three
and more multiply by a copy packed once per direction; float gates use the
vectorized Sigmoid/Tanh math.  Every cell, both GRU variants, both
directions, with and without sequence_lens, on 1 and 2 threads."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from oxengine import Session

RTOL, ATOL = 1e-4, 1e-5
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def rnn_model(op, hidden, inputs, direction, lbr, with_lens):
    rng = np.random.default_rng(11)
    nd = 2 if direction == "bidirectional" else 1
    g = GATES[op]
    inits = [numpy_helper.from_array((0.4 * rng.standard_normal((nd, g * hidden, inputs))).astype(np.float32), "W"),
             numpy_helper.from_array((0.4 * rng.standard_normal((nd, g * hidden, hidden))).astype(np.float32), "R"),
             numpy_helper.from_array((0.2 * rng.standard_normal((nd, 2 * g * hidden))).astype(np.float32), "B")]
    attrs = {"hidden_size": hidden, "direction": direction}
    if op == "GRU":
        attrs["linear_before_reset"] = lbr
    node = helper.make_node(op, ["X", "W", "R", "B", "lens" if with_lens else ""], ["Y", "Y_h"], **attrs)
    ins = [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["T", "N", inputs])]
    if with_lens:
        ins.append(helper.make_tensor_value_info("lens", TensorProto.INT32, ["N"]))
    outs = [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("Y_h", TensorProto.FLOAT, None)]
    graph = helper.make_graph([node], "g", ins, outs, initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=8)


@pytest.mark.parametrize("op,lbr", [("RNN", 0), ("GRU", 0), ("GRU", 1), ("LSTM", 0)])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
@pytest.mark.parametrize("batch", [1, 2, 3, 13])
@pytest.mark.parametrize("with_lens", [False, True])
def test_rnn_matches_onnxruntime(op, lbr, direction, batch, with_lens):
    hidden, inputs, seq = 24, 5, 7
    model = rnn_model(op, hidden, inputs, direction, lbr, with_lens)
    rng = np.random.default_rng(batch)
    feeds = {"X": rng.standard_normal((seq, batch, inputs)).astype(np.float32)}
    if with_lens:
        feeds["lens"] = rng.integers(0, seq + 1, batch).astype(np.int32)
        feeds["lens"][0] = seq
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    for threads in (1, 2):
        got = Session(model.SerializeToString(), threads=threads).run(feeds)
        for g, w, name in zip(got, want, ("Y", "Y_h")):
            np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=f"{name}, {threads} threads")


@pytest.mark.parametrize("op,lbr", [("GRU", 0), ("LSTM", 0)])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("lens", ["none", "full", "ragged"])
def test_rnn_chunked_projection(op, lbr, direction, lens):
    """Large enough that the input projection goes in chunks of steps (rnn.c, RNN_XP_CHUNK_BYTES:
    6 steps of 40 rows here, the last chunk shorter), forward and backward; ragged sequence_lens
    take the whole-sequence projection instead."""
    hidden, inputs, seq, batch = 64, 9, 17, 40
    model = rnn_model(op, hidden, inputs, direction, lbr, lens != "none")
    rng = np.random.default_rng(17)
    feeds = {"X": rng.standard_normal((seq, batch, inputs)).astype(np.float32)}
    if lens != "none":
        feeds["lens"] = np.full(batch, seq, np.int32)
        if lens == "ragged":
            feeds["lens"][::3] = rng.integers(1, seq, len(feeds["lens"][::3]))
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = Session(model.SerializeToString(), threads=1).run(feeds)
    for g, w, name in zip(got, want, ("Y", "Y_h")):
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=name)


@pytest.mark.parametrize("op,lbr", [("RNN", 0), ("GRU", 0), ("GRU", 1), ("LSTM", 0)])
@pytest.mark.parametrize("hidden", [24, 128])
def test_rnn_one_sequence_same_bits_in_any_batch(op, lbr, hidden):
    """A sequence gets the same bits alone as inside batches of 2, 3 and 20 (a row-wise SQL call
    and an automatically batched one agree): one sequence over a constant R sums the rows of R^T's
    copy (rnn.c, rnn_r_kmajor) in the order the micro-kernel of the SGEMM, over R packed once at
    session creation, sums them for two and more (rnn_pack_constants).  Hidden 128 is LSTM's
    largest R of the copy's bound (4 x 128 x 128 floats)."""
    model = rnn_model(op, hidden, 5, "bidirectional", lbr, False).SerializeToString()
    x1 = np.random.default_rng(3).standard_normal((7, 1, 5)).astype(np.float32)
    for threads in (1, 2):
        s = Session(model, threads=threads)
        alone = s.run({"X": x1})
        for batch in (2, 3, 20):
            got = s.run({"X": np.repeat(x1, batch, axis=1)})
            what = f"batch {batch}, {threads} threads"
            np.testing.assert_array_equal(alone[0][:, :, 0], got[0][:, :, batch - 1], err_msg="Y, " + what)
            np.testing.assert_array_equal(alone[1][:, 0], got[1][:, batch - 1], err_msg="Y_h, " + what)


@pytest.mark.parametrize("op,lbr", [("GRU", 0), ("LSTM", 0)])
@pytest.mark.parametrize("case", ["R fed", "W fed", "R past the bound"])
@pytest.mark.parametrize("batch", [1, 2])
def test_rnn_weights_not_prepared(op, lbr, case, batch):
    """Weights fed at run time have no copies made ahead: the products take them as they come
    (R's dot products for one and two sequences, the SGEMM for W); an R past the row-sum copy's
    bound (LSTM hidden 136: 73,984 floats a direction) keeps the dot products for one sequence."""
    hidden = 136 if case == "R past the bound" else 24
    model = rnn_model(op, hidden, 5, "forward", lbr, False)
    rng = np.random.default_rng(5)
    feeds = {"X": rng.standard_normal((6, batch, 5)).astype(np.float32)}
    if case.endswith("fed"):
        name = case[0]
        t = next(i for i in model.graph.initializer if i.name == name)
        feeds[name] = numpy_helper.to_array(t)
        model.graph.initializer.remove(t)
        model.graph.input.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(feeds[name].shape)))
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = Session(model.SerializeToString()).run(feeds)
    for g, w, name in zip(got, want, ("Y", "Y_h")):
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=name)


@pytest.mark.parametrize("peepholes", [False, True])
@pytest.mark.parametrize("batch", [1, 3])
def test_lstm_clip_and_peepholes(peepholes, batch):
    """LSTM with clip, with and without peepholes (the o gate reads the new cell), one sequence
    (row sums over R^T's copy) and three (the packed R), against onnxruntime; the clip cuts most of
    the gate sums here."""
    hidden, inputs, seq = 16, 5, 6
    rng = np.random.default_rng(23)
    inits = [numpy_helper.from_array(rng.standard_normal((1, 4 * hidden, inputs)).astype(np.float32), "W"),
             numpy_helper.from_array(rng.standard_normal((1, 4 * hidden, hidden)).astype(np.float32), "R"),
             numpy_helper.from_array((0.5 * rng.standard_normal((1, 8 * hidden))).astype(np.float32), "B")]
    ins = ["X", "W", "R", "B", "", "", ""]
    if peepholes:
        inits.append(numpy_helper.from_array(rng.standard_normal((1, 3 * hidden)).astype(np.float32), "P"))
        ins.append("P")
    node = helper.make_node("LSTM", ins, ["Y", "Y_h", "Y_c"], hidden_size=hidden, clip=0.5)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["T", "N", inputs])],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("Y", "Y_h", "Y_c")],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=8).SerializeToString()
    feeds = {"X": rng.standard_normal((seq, batch, inputs)).astype(np.float32)}
    want = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)
    got = Session(model).run(feeds)
    for g, w, name in zip(got, want, ("Y", "Y_h", "Y_c")):
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=name)
