"""The committed fixture models (test/models) through the engine, compared with
onnxruntime on the same inputs: labels identical, floats within rtol 1e-4,
atol 1e-5, at every optimization level.  Outputs that are sequences or maps
(ZipMap) are checked through the server tests instead."""
import json
import os

import numpy as np
import onnxruntime as ort
import pytest

from oxengine import Session

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models")
NAMES = sorted(f[:-5] for f in os.listdir(MODELS) if f.endswith(".onnx"))


def fixture_feeds(name, ref):
    """The fixture's stored inputs, or seeded random ones for models stored without them."""
    path = os.path.join(MODELS, name + ".inputs.json")
    raw = None
    if os.path.exists(path):
        with open(path) as f:
            raw = json.load(f)
    rng = np.random.default_rng(0)
    feeds = {}
    for inp in ref.get_inputs():
        dtype = {"tensor(float)": np.float32, "tensor(double)": np.float64,
                 "tensor(int64)": np.int64}[inp.type]
        if raw is not None:
            feeds[inp.name] = np.asarray(raw[inp.name], dtype=dtype)
        else:
            shape = [d if isinstance(d, int) else 2 for d in inp.shape]
            feeds[inp.name] = rng.standard_normal(shape).astype(dtype)
    return feeds


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("level", [0, 3])
def test_fixture_matches_onnxruntime(name, level):
    with open(os.path.join(MODELS, name + ".onnx"), "rb") as f:
        data = f.read()
    ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    feeds = fixture_feeds(name, ref)
    want = ref.run(None, feeds)
    got = Session(data, opt_level=level).run(feeds)
    compared = 0
    for g, w, out in zip(got, want, ref.get_outputs()):
        if g is None or not isinstance(w, np.ndarray):
            continue
        if w.dtype.kind in "iub":
            np.testing.assert_array_equal(g, w, err_msg=out.name)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=out.name)
        compared += 1
    assert compared >= 1


@pytest.mark.parametrize("name", NAMES)
def test_saved_optimized_model_runs_in_onnxruntime(name):
    """The optimized graph saved back to ONNX loads in onnxruntime and gives the same outputs."""
    with open(os.path.join(MODELS, name + ".onnx"), "rb") as f:
        data = f.read()
    ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    feeds = fixture_feeds(name, ref)
    saved = Session(data, opt_level=3, portable=True).save()
    opt = ort.InferenceSession(saved, providers=["CPUExecutionProvider"])
    for w, g in zip(ref.run(None, feeds), opt.run(None, feeds)):
        if isinstance(w, np.ndarray):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
        else:
            assert len(g) == len(w)
    # and our engine reads its own output back
    Session(saved).run(feeds)
