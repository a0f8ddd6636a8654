"""onnx_pg against onnxruntime, on the fixture models of test/models/.

Every fixture is loaded into a live server with onnx_load_model(name, bytea)
and run through onnx_predict (row-wise, one sample per call, many rows in one
query), onnx_predict_batch and onnx_run; the results must match onnxruntime run
here on the same inputs: labels and integers identical, floats within
rtol 1e-4, atol 1e-5.

    PGHOST=... PGPORT=... PGUSER=... PGDATABASE=... python3 -m pytest test/e2e

Without onnxruntime installed, the committed reference outputs
(test/models/<name>.expected.json) stand in for it, on the committed inputs.
"""
import csv
import functools
import json
import os

import numpy as np
import psycopg
import pytest
from psycopg.types.json import Jsonb

from conftest import MODELS_DIR

try:
    import onnxruntime as ort
except ImportError:  # quick checks against the committed reference data
    ort = None

RTOL = 1e-4
ATOL = 1e-5
MIN_SAMPLES = 100

SKLEARN_CLASSIFIERS = ["iris_rf", "logreg", "scaler_logreg", "gb_classifier"]
MODELS = SKLEARN_CLASSIFIERS + ["rf_regressor", "mlp", "small_cnn"]
PROBA = "output_probability"  # skl2onnx's ZipMap output


# --------------------------------------------------------------------------
# fixtures data and the reference runtime

def model_path(name):
    return os.path.join(MODELS_DIR, name + ".onnx")


@functools.lru_cache(maxsize=None)
def model_bytes(name):
    with open(model_path(name), "rb") as f:
        return f.read()


@functools.lru_cache(maxsize=None)
def read_json(path):
    with open(path) as f:
        return json.load(f)


@functools.lru_cache(maxsize=None)
def inputs(name):
    """(input name, float32 batch): the committed inputs, topped up with seeded
    random samples of the same scale to at least MIN_SAMPLES when onnxruntime
    is there to compute their reference outputs."""
    (input_name, data), = read_json(os.path.join(MODELS_DIR, name + ".inputs.json")).items()
    X = np.asarray(data, dtype=np.float32)
    if ort is not None and len(X) < MIN_SAMPLES:
        rng = np.random.default_rng(2024)
        extra = rng.normal(X.mean(axis=0), X.std(axis=0) + 1e-3,
                           size=(MIN_SAMPLES - len(X),) + X.shape[1:])
        X = np.concatenate([X, np.round(extra, 2).astype(np.float32)])
    return input_name, X


def normalize(value):
    """onnxruntime output or onnx_run JSON -> ndarray, or a list of
    {str key: float} for ZipMap's sequence of maps."""
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return [{str(k): float(v) for k, v in m.items()} for m in value]
    return np.asarray(value)


@functools.lru_cache(maxsize=None)
def ort_session(name):
    return ort.InferenceSession(model_path(name), providers=["CPUExecutionProvider"])


def output_names(name):
    if ort is not None:
        return [o.name for o in ort_session(name).get_outputs()]
    return list(read_json(os.path.join(MODELS_DIR, name + ".expected.json")).keys())


def reference(name):
    """{output name: normalized reference output} for inputs(name)."""
    input_name, X = inputs(name)
    if ort is None:
        expected = read_json(os.path.join(MODELS_DIR, name + ".expected.json"))
        return {k: normalize(v) for k, v in expected.items()}
    outs = ort_session(name).run(None, {input_name: X})
    return {n: normalize(v) for n, v in zip(output_names(name), outs)}


def dense_proba(maps):
    """ZipMap output -> [N, classes] ordered by class (numeric keys numerically)."""
    keys = sorted(maps[0], key=lambda k: (0, float(k)) if _is_number(k) else (1, k))
    return np.array([[m[k] for k in keys] for m in maps], dtype=np.float64)


def _is_number(s):
    try:
        float(s)
        return True
    except ValueError:
        return False


def per_sample(arr, n):
    """[N, ...] -> [N, k]: one flattened row per sample."""
    arr = np.asarray(arr)
    assert arr.shape[0] == n, "expected %d samples, got shape %s" % (n, arr.shape)
    return arr.reshape(n, -1)


def assert_match(got, want, what):
    """Integers/labels identical, floats within RTOL/ATOL."""
    if isinstance(want, list):  # ZipMap: sequence of maps
        assert isinstance(got, list) and len(got) == len(want), "%s: %d maps expected" % (what, len(want))
        for i, (g, w) in enumerate(zip(got, want)):
            assert set(g) == set(w), "%s[%d]: keys %s, expected %s" % (what, i, sorted(g), sorted(w))
            np.testing.assert_allclose([g[k] for k in sorted(w)], [w[k] for k in sorted(w)],
                                       rtol=RTOL, atol=ATOL, err_msg="%s[%d]" % (what, i))
        return
    got = np.asarray(got)
    assert got.shape == want.shape, "%s: shape %s, expected %s" % (what, got.shape, want.shape)
    if want.dtype.kind in "iub":
        bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
        assert bad.size == 0, "%s: %d of %d values differ, first at %d: %s vs %s" % (
            what, bad.size, want.size, bad[0], got.reshape(-1)[bad[0]], want.reshape(-1)[bad[0]])
    else:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=RTOL, atol=ATOL, err_msg=what)


def is_label_output(name, output):
    return name in SKLEARN_CLASSIFIERS and output == "output_label"


# --------------------------------------------------------------------------
# server-side helpers

@pytest.fixture(scope="module")
def loaded(conn):
    """Load every fixture (replacing any earlier copy)."""
    with conn.cursor() as cur:
        for name in MODELS:
            cur.execute("SELECT onnx_load_model(%s, %s, replace => true)", (name, model_bytes(name)))
    return conn


def predict_rows(conn, name, X, output=None):
    """onnx_predict over a table of samples, in one query (the typical use);
    returns one result array per sample, in order."""
    rows = [(i, x.reshape(-1).tolist()) for i, x in enumerate(X)]
    with conn.cursor() as cur:
        cur.execute("CREATE TEMP TABLE IF NOT EXISTS e2e_samples (id int PRIMARY KEY, features real[])")
        cur.execute("TRUNCATE e2e_samples")
        cur.executemany("INSERT INTO e2e_samples VALUES (%s, %s::real[])", rows)
        if output is None:
            cur.execute("SELECT id, onnx_predict(%s, features) FROM e2e_samples ORDER BY id", (name,))
        else:
            cur.execute("SELECT id, onnx_predict(%s, features, %s) FROM e2e_samples ORDER BY id",
                        (name, output))
        got = cur.fetchall()
    assert [r[0] for r in got] == list(range(len(X)))
    return [r[1] for r in got]


def check_rows(name, got, want, what):
    """Row-wise results (one real[] per sample) against a [N, ...] reference."""
    n = len(want)
    assert len(got) == n
    want = per_sample(want, n)
    for i, g in enumerate(got):
        assert g is not None, "%s: NULL for sample %d" % (what, i)
        g = np.asarray(g, dtype=np.float64).reshape(-1)
        assert g.shape == want[i].shape, "%s: sample %d has %d values, expected %d" % (
            what, i, g.size, want[i].size)
        if want.dtype.kind in "iub":
            assert np.array_equal(g, want[i].astype(np.float64)), "%s: sample %d: %s vs %s" % (
                what, i, g, want[i])
        else:
            np.testing.assert_allclose(g, want[i].astype(np.float64), rtol=RTOL, atol=ATOL,
                                       err_msg="%s: sample %d" % (what, i))


# --------------------------------------------------------------------------
# the committed fixtures themselves (no server needed)

@pytest.mark.parametrize("name", MODELS)
def test_fixture_files(name):
    """Each fixture is small, and its committed reference outputs agree with
    onnxruntime (i.e. they are not stale)."""
    assert os.path.getsize(model_path(name)) < 1024 * 1024
    input_name, data = next(iter(read_json(os.path.join(MODELS_DIR, name + ".inputs.json")).items()))
    assert len(data) >= (20 if name == "small_cnn" else MIN_SAMPLES)
    if ort is None:
        pytest.skip("onnxruntime not installed")
    X = np.asarray(data, dtype=np.float32)
    outs = ort_session(name).run(None, {input_name: X})
    expected = read_json(os.path.join(MODELS_DIR, name + ".expected.json"))
    for out_name, value in zip(output_names(name), outs):
        assert_match(normalize(expected[out_name]), normalize(value), "%s.%s" % (name, out_name))


# --------------------------------------------------------------------------
# the three inference functions against onnxruntime

@pytest.mark.parametrize("name", MODELS)
def test_onnx_run(loaded, name):
    """onnx_run on the whole batch: every output, shapes included."""
    input_name, X = inputs(name)
    want = reference(name)
    with loaded.cursor() as cur:
        cur.execute("SELECT onnx_run(%s, %s)", (name, Jsonb({input_name: X.tolist()})))
        got = cur.fetchone()[0]
    assert isinstance(got, dict), "onnx_run returned %r" % type(got)
    assert set(got) == set(want), "outputs %s, expected %s" % (sorted(got), sorted(want))
    for out_name in want:
        assert_match(normalize(got[out_name]), want[out_name], "%s.%s" % (name, out_name))


@pytest.mark.parametrize("name", MODELS)
def test_onnx_predict(loaded, name):
    """onnx_predict, default output (the first: the label for classifiers)."""
    _, X = inputs(name)
    first = output_names(name)[0]
    got = predict_rows(loaded, name, X)
    check_rows(name, got, reference(name)[first], "%s onnx_predict" % name)


@pytest.mark.parametrize("name", MODELS)
def test_onnx_predict_named_outputs(loaded, name):
    """onnx_predict naming each output: tensors as they are, ZipMap
    probabilities as a dense real[] ordered by class."""
    _, X = inputs(name)
    want = reference(name)
    for out_name in output_names(name):
        got = predict_rows(loaded, name, X, output=out_name)
        ref = dense_proba(want[out_name]) if isinstance(want[out_name], list) else want[out_name]
        check_rows(name, got, ref, "%s onnx_predict(..., %r)" % (name, out_name))


@pytest.mark.parametrize("name", MODELS)
def test_onnx_predict_batch(loaded, name):
    """onnx_predict_batch: one row per sample, equal to the reference."""
    _, X = inputs(name)
    first = output_names(name)[0]
    want = per_sample(reference(name)[first], len(X))
    with loaded.cursor() as cur:
        cur.execute("SELECT onnx_predict_batch(%s, %s::real[][])",
                    (name, X.reshape(len(X), -1).tolist()))
        got = cur.fetchone()[0]
    assert got is not None
    got = np.asarray(got, dtype=np.float64)
    assert got.ndim == 2 and got.shape[0] == len(X), "result shape %s for %d samples" % (got.shape, len(X))
    assert_match(got.astype(want.dtype) if want.dtype.kind in "iub" else got,
                 want, "%s onnx_predict_batch" % name)
    if want.dtype.kind in "iub":
        assert np.array_equal(got, want.astype(np.float64))


@pytest.mark.parametrize("name", MODELS)
def test_onnx_predict_batch_named_outputs(loaded, name):
    """onnx_predict_batch naming each output (when the three-argument form exists)."""
    with loaded.cursor() as cur:
        cur.execute("SELECT to_regprocedure('onnx_predict_batch(text, real[], text)') IS NOT NULL")
        if not cur.fetchone()[0]:
            pytest.skip("no onnx_predict_batch(model, features, output)")
    _, X = inputs(name)
    want = reference(name)
    for out_name in output_names(name):
        ref = dense_proba(want[out_name]) if isinstance(want[out_name], list) else want[out_name]
        with loaded.cursor() as cur:
            cur.execute("SELECT onnx_predict_batch(%s, %s::real[][], %s)",
                        (name, X.reshape(len(X), -1).tolist(), out_name))
            got = cur.fetchone()[0]
        assert got is not None
        check_rows(name, list(got), ref, "%s onnx_predict_batch(..., %r)" % (name, out_name))


@pytest.mark.parametrize("name", ["iris_rf", "mlp"])
def test_onnx_predict_one_call_per_sample(loaded, name):
    """onnx_predict with one statement per sample (a fresh fn_extra each time)."""
    _, X = inputs(name)
    first = output_names(name)[0]
    got = []
    with loaded.cursor() as cur:
        for x in X:
            cur.execute("SELECT onnx_predict(%s, %s::real[])", (name, x.reshape(-1).tolist()))
            got.append(cur.fetchone()[0])
    check_rows(name, got, reference(name)[first], "%s onnx_predict (single calls)" % name)


# --------------------------------------------------------------------------
# iris_rf equals scikit-learn

def iris_rows():
    with open(os.path.join(MODELS_DIR, "iris.csv")) as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 150
    X = np.array([[float(r[c]) for c in ("sepal_length", "sepal_width", "petal_length", "petal_width")]
                  for r in rows], dtype=np.float32)
    return X, np.array([int(r["sklearn_prediction"]) for r in rows])


def test_iris_rf_equals_sklearn(loaded):
    X, sklearn_pred = iris_rows()
    got = predict_rows(loaded, "iris_rf", X)
    labels = np.array([g[0] if g and len(g) == 1 else np.nan for g in got])
    bad = np.flatnonzero(labels != sklearn_pred)
    assert bad.size == 0, "%d of 150 rows differ from scikit-learn, e.g. row %d: %s vs %s" % (
        bad.size, bad[0] + 1, got[bad[0]], sklearn_pred[bad[0]])
    with loaded.cursor() as cur:
        cur.execute("SELECT onnx_predict_batch('iris_rf', %s::real[][])", (X.tolist(),))
        batch = np.asarray(cur.fetchone()[0]).reshape(150, -1)
    assert np.array_equal(batch[:, 0], sklearn_pred)


# --------------------------------------------------------------------------
# replace and drop are seen by other connections

def test_replace_seen_by_other_connection(loaded, new_conn):
    """A model replaced in connection A is used by connection B at its next
    call; a dropped one is gone for B too."""
    name = "e2e_swap"
    X, _ = iris_rows()
    if ort is None:
        pytest.skip("needs onnxruntime")
    p_logreg = dense_proba(normalize(ort_session("logreg").run(None, {"float_input": X})[1]))
    p_rf = dense_proba(normalize(ort_session("iris_rf").run(None, {"float_input": X})[1]))
    i = int(np.argmax(np.abs(p_logreg - p_rf).max(axis=1)))  # the row where they differ most
    assert np.abs(p_logreg[i] - p_rf[i]).max() > 0.05
    x = X[i].tolist()

    a, b = new_conn(), new_conn()
    sql = "SELECT onnx_predict(%s, %s::real[], %s)"

    def b_predict():
        with b.cursor() as cur:
            cur.execute(sql, (name, x, PROBA))
            return np.asarray(cur.fetchone()[0], dtype=np.float64)

    with a.cursor() as cur:
        cur.execute("SELECT onnx_load_model(%s, %s, replace => true)", (name, model_bytes("logreg")))
    for _ in range(2):  # the second call is served from B's session cache
        np.testing.assert_allclose(b_predict(), p_logreg[i], rtol=RTOL, atol=ATOL)

    # replacing needs the flag
    with a.cursor() as cur:
        with pytest.raises(psycopg.Error):
            cur.execute("SELECT onnx_load_model(%s, %s)", (name, model_bytes("iris_rf")))
    np.testing.assert_allclose(b_predict(), p_logreg[i], rtol=RTOL, atol=ATOL)

    with a.cursor() as cur:
        cur.execute("SELECT onnx_load_model(%s, %s, replace => true)", (name, model_bytes("iris_rf")))
    np.testing.assert_allclose(b_predict(), p_rf[i], rtol=RTOL, atol=ATOL,
                               err_msg="connection B still uses the replaced model")

    # and back again, to be sure B is not just reloading on every call by luck
    with a.cursor() as cur:
        cur.execute("SELECT onnx_load_model(%s, %s, replace => true)", (name, model_bytes("logreg")))
    np.testing.assert_allclose(b_predict(), p_logreg[i], rtol=RTOL, atol=ATOL)

    with a.cursor() as cur:
        cur.execute("SELECT onnx_drop_model(%s)", (name,))
    with pytest.raises(psycopg.Error):
        b_predict()
    # B's connection is still usable after the error (autocommit)
    with b.cursor() as cur:
        cur.execute("SELECT onnx_predict('iris_rf', %s::real[])", (x,))
        assert cur.fetchone()[0] is not None
