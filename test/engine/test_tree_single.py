"""Single trees (scikit-learn's DecisionTreeClassifier and
DecisionTreeRegressor, a one-tree LightGBM model) against onnxruntime.

A single tree's rows depend only on the leaf they reach, so the engine
finishes every leaf once when the session is created (ml_tree.c,
build_leaf_table) and a row is a walk and a copy.  These check that table
against onnxruntime on every path that reads it: the fast walk in blocks and
one row at a time, rows with NaN (the generic walk), int64 input, two and
three classes, two targets and a post transform, at 1 and 2 threads.  Labels
must be identical, scores within RTOL/ATOL.  String labels (which this
module's engine binding does not return) are in test/e2e/test_sklearn_zoo.py.
"""
import numpy as np
import onnxruntime as ort
import pytest

from oxengine import Session

RTOL, ATOL = 1e-6, 1e-7

sklearn = pytest.importorskip("sklearn", reason="scikit-learn not installed")
skl2onnx = pytest.importorskip("skl2onnx", reason="skl2onnx not installed")

from skl2onnx import to_onnx  # noqa: E402
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor  # noqa: E402

OPSETS = {"": 17, "ai.onnx.ml": 3}


def _data(seed, n=3000, d=10):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32)
    y3 = (np.digitize(x[:, 0] + x[:, 1] * x[:, 2], [-0.5, 0.5])).astype(np.int64)
    return x, y3


def _models():
    x, y3 = _data(0)
    yield "classifier 3 classes", DecisionTreeClassifier(max_depth=10, random_state=0).fit(x, y3), x
    yield "classifier 2 classes", DecisionTreeClassifier(max_depth=8, random_state=0).fit(x, y3 > 0), x
    yield "regressor", DecisionTreeRegressor(max_depth=12, random_state=0).fit(x, x[:, 0] * 2 - x[:, 3]), x
    two = np.stack([x[:, 0] - x[:, 1], x[:, 2] * x[:, 4]], axis=1)
    yield "regressor 2 targets", DecisionTreeRegressor(max_depth=9, random_state=0).fit(x, two), x


def _export(m, x, dtype=np.float32):
    try:
        onx = to_onnx(m, x[:1].astype(dtype), options={id(m): {"zipmap": False}}, target_opset=OPSETS)
    except Exception:   # regressors have no zipmap option
        onx = to_onnx(m, x[:1].astype(dtype), target_opset=OPSETS)
    trees = [n for n in onx.graph.node if n.op_type.startswith("TreeEnsemble")]
    assert len(trees) == 1
    return onx.SerializeToString()


def _check(mb, feeds_list, label):
    ref = ort.InferenceSession(mb, providers=["CPUExecutionProvider"])
    for threads in (1, 2):
        sess = Session(mb, threads=threads)
        for feeds in feeds_list:
            want = ref.run(None, feeds)
            got = sess.run(feeds)
            n = len(next(iter(feeds.values())))
            for g, w in zip(got, want):
                g, w = np.asarray(g), np.asarray(w)
                msg = f"{label}, {n} rows, {threads} threads"
                if w.dtype.kind in "iUSO":
                    assert g.tolist() == w.tolist(), msg
                else:
                    np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64),
                                               rtol=RTOL, atol=ATOL, err_msg=msg)


def _cases(x):
    rows = x[:500].copy()
    nan_rows = rows.copy()
    nan_rows[::4, 0] = np.nan          # every fourth row takes the generic walk
    nan_rows[1::7, 2] = np.nan
    return [rows, rows[:37], rows[5:6], nan_rows, nan_rows[:1], nan_rows[4:5]]


@pytest.mark.parametrize("which", range(4))
def test_single_tree_matches_onnxruntime(which):
    label, m, x = list(_models())[which]
    mb = _export(m, x)
    xt, _ = _data(1)
    _check(mb, [{"X": c} for c in _cases(xt)], label)


def test_single_tree_int64_input():
    x, y3 = _data(0)
    xi = np.round(x * 3).astype(np.int64)
    m = DecisionTreeClassifier(max_depth=10, random_state=0).fit(xi, y3)
    mb = _export(m, xi, np.int64)
    xt, _ = _data(2)
    xti = np.round(xt * 3).astype(np.int64)
    _check(mb, [{"X": xti[:300]}, {"X": xti[:1]}], "int64 input")


def test_single_tree_lightgbm_missing_tracking():
    """One boosted tree with NaN sent down tracked branches, and a post
    transform (LOGISTIC) that the table applies once per leaf."""
    lightgbm = pytest.importorskip("lightgbm")
    onnxmltools = pytest.importorskip("onnxmltools")
    from onnxmltools.convert.common.data_types import FloatTensorType

    x, y3 = _data(3)
    x[np.random.default_rng(4).random(x.shape) < 0.1] = np.nan
    m = lightgbm.LGBMClassifier(n_estimators=1, num_leaves=40, random_state=0, n_jobs=1, verbose=-1).fit(x, (y3 > 0).astype(np.int64))
    onx = onnxmltools.convert_lightgbm(m, initial_types=[("input", FloatTensorType([None, x.shape[1]]))],
                                       zipmap=False, target_opset=15)
    xt, _ = _data(5)
    xt[np.random.default_rng(6).random(xt.shape) < 0.1] = np.nan
    _check(onx.SerializeToString(), [{"input": xt[:400]}, {"input": xt[:1]}, {"input": xt[7:8]}], "lightgbm 1 tree")
