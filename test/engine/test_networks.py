"""Real networks (test/models/networks) through the engine, without a server,
compared with onnxruntime on the same seeded inputs.

The models are exported by test/models/networks/export.py with random weights
at opset 17: torchvision resnet18, mobilenet_v2, mobilenet_v3_small,
squeezenet1_1 and efficientnet_b0, a 2-layer nn.TransformerEncoder with a
padding mask, an LSTM and a GRU sequence model, and a BERT-shaped encoder.
The small ones are committed; the big ones are exported here on first use
when /usr/bin/python3 (or $TORCH_PYTHON) has torch and torchvision, and are
skipped ("torch not installed: ...") otherwise.

Tolerance (netinputs.py): |got - want| <= 1e-3 * |want| + 1e-4 * max|want|,
per output, at optimization levels 0 and 3.
"""
import os
import sys

import numpy as np
import onnxruntime as ort
import pytest

from oxengine import Session

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "networks"))
import netinputs as ni  # noqa: E402

NAMES = ni.names()


def model_bytes(name):
    path, why = ni.ensure(name)
    if path is None:
        pytest.skip(why)
    with open(path, "rb") as f:
        return f.read()


_ref_cache = {}


def reference(name, data):
    """onnxruntime's outputs [(name, ndarray)] on ni.inputs(name)."""
    if name not in _ref_cache:
        sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
        outs = sess.run(None, ni.inputs(name))
        _ref_cache[name] = [(o.name, w) for o, w in zip(sess.get_outputs(), outs)]
    return _ref_cache[name]


def check(name, got, want, what):
    assert len(got) == len(want), "%s: %d outputs, expected %d" % (what, len(got), len(want))
    for g, (out, w) in zip(got, want):
        label = "%s %s" % (what, out)
        assert g is not None, "%s: not a tensor" % label
        assert g.dtype == w.dtype, "%s: %s, expected %s" % (label, g.dtype, w.dtype)
        abs_err, rel_err, ok = ni.compare(g, w, label)
        assert ok, ni.describe_failure(g, w, label)
        print("%s: max abs error %.3g, max rel error %.3g (max|want| %.3g)" % (
            label, abs_err, rel_err, float(np.max(np.abs(w)))))


def test_manifest_lists_the_issue_models():
    assert set(NAMES) >= {"resnet18", "mobilenet_v2", "mobilenet_v3_small", "squeezenet1_1",
                          "efficientnet_b0", "transformer_encoder", "lstm_tagger", "gru_regressor",
                          "bert_encoder"}
    assert ni.manifest()["opset"] == 17


@pytest.mark.parametrize("name", ni.names(committed=True))
def test_committed_fixture_is_small(name):
    path = ni.path_of(name)
    assert os.path.exists(path), "%s is missing (regenerate: /usr/bin/python3 %s %s)" % (path, ni.EXPORT, name)
    assert os.path.getsize(path) < 3 * 1024 * 1024


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("name", NAMES)
def test_network_matches_onnxruntime(name, level):
    data = model_bytes(name)
    want = reference(name, data)
    got = Session(data, opt_level=level, threads=2).run(ni.inputs(name))
    check(name, got, want, "%s (level %d)" % (name, level))


@pytest.mark.parametrize("name", NAMES)
def test_network_batch_of_one(name):
    """The first sample alone gives the first row of the batched result."""
    data = model_bytes(name)
    feeds = {k: v[:1] for k, v in ni.inputs(name).items()}
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    want = [(o.name, w) for o, w in zip(sess.get_outputs(), sess.run(None, feeds))]
    got = Session(data, opt_level=3).run(feeds)
    check(name, got, want, "%s (batch 1)" % name)


@pytest.mark.parametrize("name", NAMES)
def test_network_optimized_model_runs_in_onnxruntime(name):
    """The optimized graph saved back to ONNX loads in onnxruntime and gives
    the same outputs."""
    data = model_bytes(name)
    saved = Session(data, opt_level=3, portable=True).save()
    sess = ort.InferenceSession(saved, providers=["CPUExecutionProvider"])
    got = sess.run(None, ni.inputs(name))
    check(name, got, reference(name, data), "%s (saved optimized model in onnxruntime)" % name)
