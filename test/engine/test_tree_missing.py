"""Gradient-boosted trees with missing-value tracking (LightGBM's and XGBoost's
exports set nodes_missing_value_tracks_true) against onnxruntime: batches
mixing rows with and without NaN (the fast walk takes the NaN-free blocks,
the generic walk the others), single rows of both kinds, 1 and 2 threads."""
import numpy as np
import onnxruntime as ort
import pytest

from oxengine import Session

RTOL, ATOL = 1e-5, 1e-6


def _data(seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2000, 12)).astype(np.float32)
    y = (x[:, 0] + 0.5 * x[:, 1] * x[:, 2] - x[:, 3] > 0).astype(np.int64)
    x[rng.random(x.shape) < 0.08] = np.nan   # trained with missing values: tracking branches
    return x, y


def _model(kind):
    onnxmltools = pytest.importorskip("onnxmltools")
    from onnxmltools.convert.common.data_types import FloatTensorType

    x, y = _data(1)
    types = [("input", FloatTensorType([None, x.shape[1]]))]
    if kind.startswith("lightgbm"):
        lightgbm = pytest.importorskip("lightgbm")
        if kind == "lightgbm_classifier":
            m = lightgbm.LGBMClassifier(n_estimators=60, random_state=0, n_jobs=1, verbose=-1).fit(x, y)
        else:
            m = lightgbm.LGBMRegressor(n_estimators=60, random_state=0, n_jobs=1, verbose=-1).fit(x, y)
        onx = onnxmltools.convert_lightgbm(m, initial_types=types, zipmap=False, target_opset=15) \
            if kind == "lightgbm_classifier" else onnxmltools.convert_lightgbm(m, initial_types=types, target_opset=15)
    else:
        xgboost = pytest.importorskip("xgboost")
        m = xgboost.XGBRegressor(n_estimators=60, max_depth=7, random_state=0, n_jobs=1).fit(x, y)
        onx = onnxmltools.convert_xgboost(m, initial_types=types, target_opset=15)
    attrs = {a.name for n in onx.graph.node for a in n.attribute}
    assert "nodes_missing_value_tracks_true" in attrs
    return onx.SerializeToString()


@pytest.mark.parametrize("kind", ["lightgbm_classifier", "lightgbm_regressor", "xgboost_regressor"])
def test_missing_tracking_matches_onnxruntime(kind):
    mb = _model(kind)
    ref = ort.InferenceSession(mb, providers=["CPUExecutionProvider"])
    x, _ = _data(2)
    x = x[:300].copy()
    complete = np.arange(300) % 3 != 0    # two rows in three without NaN
    x[complete] = np.nan_to_num(x[complete], nan=0.25)
    cases = [x, x[:7], x[3:4]]           # a batch, a short one, a complete single row
    cases += [x[i:i + 1] for i in range(0, 30, 3) if np.isnan(x[i]).any()][:3]   # single rows with NaN
    assert any(np.isnan(c).any() for c in cases[3:])
    for threads in (1, 2):
        sess = Session(mb, threads=threads)
        for c in cases:
            want = ref.run(None, {"input": c})
            got = sess.run({"input": c})
            for g, w in zip(got, want):
                np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64), rtol=RTOL, atol=ATOL,
                                           err_msg=f"{kind}, {len(c)} rows, {threads} threads")
