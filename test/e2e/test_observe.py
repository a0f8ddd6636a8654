"""Optimized models and pictures against onnxruntime and graphviz.

onnx_optimize stores a session's optimized graph (ox_model_save) as a new
model.  Exported with onnx_export_model, it must load in onnxruntime and give
the same outputs as the original model does in onnxruntime, on the committed
inputs of every fixture (floats within rtol 1e-4, atol 1e-5; labels equal).
onnx_model_dot must be DOT that graphviz accepts.

    PGHOST=... PGPORT=... PGUSER=... PGDATABASE=... python3 -m pytest test/e2e/test_observe.py
"""
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

from conftest import MODELS_DIR

ort = pytest.importorskip("onnxruntime")

RTOL = 1e-4
ATOL = 1e-5
# resnet_block: Conv+BatchNormalization folding at every level but disable
MODELS = ["iris_rf", "logreg", "scaler_logreg", "gb_classifier", "rf_regressor", "mlp",
          "small_cnn", "resnet_block"]
LEVELS = ["basic", "all"]


def model_bytes(name):
    with open(os.path.join(MODELS_DIR, name + ".onnx"), "rb") as f:
        return f.read()


def model_inputs(name):
    path = os.path.join(MODELS_DIR, name + ".inputs.json")
    if os.path.exists(path):
        with open(path) as f:
            (input_name, data), = json.load(f).items()
        return input_name, np.asarray(data, dtype=np.float32)
    # resnet_block has no committed inputs: seeded random ones
    sess = ort.InferenceSession(model_bytes(name), providers=["CPUExecutionProvider"])
    inp = sess.get_inputs()[0]
    shape = [8 if not isinstance(d, int) else d for d in inp.shape]
    return inp.name, np.random.default_rng(3).standard_normal(shape).astype(np.float32)


def run_ort(onnx_bytes, input_name, X):
    sess = ort.InferenceSession(onnx_bytes, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, {input_name: X})))


def assert_same(got, want, what):
    if isinstance(want, list):  # ZipMap: sequence of maps
        assert len(got) == len(want), what
        for g, w in zip(got, want):
            assert set(g) == set(w), what
            np.testing.assert_allclose([g[k] for k in w], [w[k] for k in w], rtol=RTOL, atol=ATOL,
                                       err_msg=what)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, "%s: shape %s, expected %s" % (what, got.shape, want.shape)
    if want.dtype.kind in "iub":
        assert np.array_equal(got, want), what
    else:
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=what)


@pytest.fixture(scope="module")
def loaded(conn):
    with conn.cursor() as cur:
        for name in MODELS:
            cur.execute("SELECT onnx_load_model(%s, %s, replace => true)", ("obs_" + name, model_bytes(name)))
    yield conn
    with conn.cursor() as cur:
        cur.execute("SELECT onnx_drop_model(name) FROM onnx_models WHERE name LIKE 'obs\\_%'")


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("name", MODELS)
def test_optimized_model_in_onnxruntime(loaded, name, level):
    source, target = "obs_" + name, "obs_%s_%s" % (name, level)
    with loaded.cursor() as cur:
        cur.execute("SELECT onnx_optimize(%s, %s, %s, replace => true)", (source, target, level))
        cur.execute("SELECT onnx_export_model(%s), (SELECT lineage FROM onnx_models WHERE name = %s)",
                    (target, target))
        optimized, lineage = cur.fetchone()
    assert lineage["optimized_from"] == source and lineage["level"] == level
    assert lineage["nodes_after"] <= lineage["nodes_before"]
    if name in ("small_cnn", "resnet_block"):
        assert lineage["nodes_after"] < lineage["nodes_before"], "BatchNormalization was not folded"

    input_name, X = model_inputs(name)
    want = run_ort(model_bytes(name), input_name, X)
    got = run_ort(bytes(optimized), input_name, X)
    assert set(got) == set(want)
    for out in want:
        assert_same(got[out], want[out], "%s (%s) output %s" % (name, level, out))


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz dot is not installed")
@pytest.mark.parametrize("optimized", [False, True])
@pytest.mark.parametrize("name", MODELS)
def test_dot_renders(loaded, name, optimized):
    with loaded.cursor() as cur:
        cur.execute("SELECT onnx_model_dot(%s, %s)", ("obs_" + name, optimized))
        dot = cur.fetchone()[0]
    r = subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    assert b"<svg" in r.stdout
