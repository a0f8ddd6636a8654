"""Real networks through the server: the committed models of
test/models/networks (squeezenet1_1, a 2-layer nn.TransformerEncoder with a
padding mask, an LSTM and a GRU sequence model, a BERT-shaped encoder; random
weights, opset 17) loaded with onnx_load_model(name, bytea) and run with
onnx_run (jsonb), compared with onnxruntime on the same seeded inputs:
|got - want| <= 1e-3 * |want| + 1e-4 * max|want| per output.

The big torchvision models (resnet18, mobilenet_v2, mobilenet_v3_small,
efficientnet_b0) are compared through the engine, without a server, by
test/engine/test_networks.py; here they run too when they have been exported
(test/models/networks/generated/), and are skipped otherwise.
"""
import os
import sys

import numpy as np
import pytest
from psycopg.types.json import Jsonb

from conftest import MODELS_DIR

ort = pytest.importorskip("onnxruntime", reason="onnxruntime not installed: the network comparisons are skipped")

sys.path.insert(0, os.path.join(MODELS_DIR, "networks"))
import netinputs as ni  # noqa: E402

NAMES = ni.names()


def model_bytes(name):
    """Committed models always; generated ones only when already exported
    (exporting is test/engine's job: it takes a while)."""
    path = ni.path_of(name)
    if not os.path.exists(path):
        if ni.manifest()["models"][name]["committed"]:
            pytest.fail("%s is missing: regenerate it with %s" % (path, ni.EXPORT))
        why = ni.torch_available()
        pytest.skip(("torch not installed: %s skipped (%s)" % (name, why)) if why else
                    ("%s not exported: run /usr/bin/python3 %s (or test/engine/test_networks.py) "
                     "to include it" % (name, ni.EXPORT)))
    with open(path, "rb") as f:
        return f.read()


def to_json(a):
    if a.dtype.kind == "f":
        return a.astype(np.float64).tolist()  # float32 values, exactly
    return a.tolist()  # int64 and bool as they are


@pytest.mark.parametrize("name", NAMES)
def test_network_onnx_run(conn, name):
    data = model_bytes(name)
    feeds = ni.inputs(name)
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    want = sess.run(None, feeds)
    model = "net_" + name
    with conn.cursor() as cur:
        cur.execute("SELECT onnx_load_model(%s, %s, replace => true)", (model, data))
        cur.execute("SELECT onnx_run(%s, %s)", (model, Jsonb({k: to_json(v) for k, v in feeds.items()})))
        got = cur.fetchone()[0]
    assert sorted(got) == sorted(o.name for o in sess.get_outputs())
    for o, w in zip(sess.get_outputs(), want):
        g = np.asarray(got[o.name], dtype=np.float64)
        abs_err, rel_err, ok = ni.compare(g, w, "%s %s" % (name, o.name))
        assert ok, ni.describe_failure(g, w, "%s onnx_run %s" % (name, o.name))
        print("%s %s: max abs error %.3g, max rel error %.3g" % (name, o.name, abs_err, rel_err))


def test_squeezenet_onnx_predict_rows(conn):
    """One image per row: onnx_predict with a real[] sample of 3*224*224
    values over a table, against onnxruntime."""
    name = "squeezenet1_1"
    data = model_bytes(name)
    X = ni.inputs(name)["image"]
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"image": X})[0]
    model = "net_" + name
    with conn.cursor() as cur:
        cur.execute("SELECT onnx_load_model(%s, %s, replace => true)", (model, data))
        cur.execute("CREATE TEMP TABLE IF NOT EXISTS net_images (id int PRIMARY KEY, pixels real[])")
        cur.execute("TRUNCATE net_images")
        cur.executemany("INSERT INTO net_images VALUES (%s, %s::real[])",
                        [(i, x.reshape(-1).astype(np.float64).tolist()) for i, x in enumerate(X)])
        cur.execute("SELECT onnx_predict(%s, pixels) FROM net_images ORDER BY id", (model,))
        got = np.asarray([r[0] for r in cur.fetchall()], dtype=np.float64)
    abs_err, rel_err, ok = ni.compare(got, want, name)
    assert ok, ni.describe_failure(got, want, "%s onnx_predict" % name)
