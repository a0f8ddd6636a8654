"""Outputs a run does not need (ox_kernel_ctx.unread) against onnxruntime.

onnx_predict asks a classifier for its label alone: a targeted run, in which
the classifier's scores are read by no node that runs and returned to no
one, so the tree ensemble and linear classifier kernels skip finishing and
storing them.  An output that no node reads and the graph does not return is
skipped in a run of every node too.  These check that the outputs a run does
need are unchanged on every path that the skip touches (trees: many in
blocks, one row at a time, rows with NaN, one tree's leaf table, one, two and
three classes; linear: one coefficient row and several, each post
transform), that a run asking for the scores still gets them, and that a run
of every node after a label-only run writes the scores again.  Labels must
be identical, scores within RTOL/ATOL.
"""
import numpy as np
import onnx
import onnxruntime as ort
import pytest

from oxengine import Session

RTOL, ATOL = 1e-5, 1e-6

sklearn = pytest.importorskip("sklearn", reason="scikit-learn not installed")
skl2onnx = pytest.importorskip("skl2onnx", reason="skl2onnx not installed")

from skl2onnx import to_onnx  # noqa: E402
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.svm import LinearSVC  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

OPSETS = {"": 17, "ai.onnx.ml": 3}


def _data(seed=0, n=2000, d=6):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32)
    y3 = np.digitize(x[:, 0] + x[:, 1] * x[:, 2], [-0.5, 0.5]).astype(np.int64)
    return x, y3


def _classifiers():
    x, y3 = _data()
    yield "forest 3 classes", RandomForestClassifier(n_estimators=12, max_depth=7, random_state=0).fit(x, y3)
    yield "boosting 3 classes", GradientBoostingClassifier(n_estimators=10, max_depth=3, random_state=0).fit(x, y3)
    yield "boosting 2 classes", GradientBoostingClassifier(n_estimators=15, max_depth=3, random_state=0).fit(x, y3 > 0)
    yield "forest 2 classes", RandomForestClassifier(n_estimators=5, max_depth=6, random_state=0).fit(x, y3 > 0)
    yield "tree 3 classes", DecisionTreeClassifier(max_depth=8, random_state=0).fit(x, y3)
    yield "tree 2 classes", DecisionTreeClassifier(max_depth=6, random_state=0).fit(x, y3 > 0)
    yield "logistic 3 classes", LogisticRegression(max_iter=500).fit(x, y3)
    yield "logistic 2 classes", LogisticRegression(max_iter=500).fit(x, y3 > 0)
    yield "linear SVC 3 classes", LinearSVC(dual=False).fit(x, y3)
    yield "linear SVC 2 classes", LinearSVC(dual=False).fit(x, y3 > 0)


def _export(m, x, zipmap=False):
    if zipmap or isinstance(m, LinearSVC):   # LinearSVC exports no ZipMap
        return to_onnx(m, x[:1], target_opset=OPSETS)
    return to_onnx(m, x[:1], options={id(m): {"zipmap": False}}, target_opset=OPSETS)


def _inputs(x):
    """Batches that take each path of the kernel: one row, a few, many, NaN rows."""
    nan = x[:40].copy()
    nan[::3, 1] = np.nan
    return [x[:1], x[:7], x[:1500], nan]


def _ort(onx):
    return ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])


CLASSIFIERS = list(_classifiers())


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name,model", CLASSIFIERS, ids=[n for n, _ in CLASSIFIERS])
def test_label_alone_and_scores_alone_match_onnxruntime(name, model, threads):
    x, _ = _data()
    onx = _export(model, x)
    ref = _ort(onx)
    sess = Session(onx.SerializeToString(), threads=threads)
    assert sess.output_names[:2] == ["label", "probabilities"], sess.output_names
    for xb in _inputs(x):
        feeds = {"X": xb}
        want_label, want_proba = ref.run(None, feeds)
        (label,) = sess.run_targets(feeds, [0])
        np.testing.assert_array_equal(label, want_label, err_msg=f"{name}: label alone, {len(xb)} rows")
        (proba,) = sess.run_targets(feeds, [1])
        np.testing.assert_allclose(proba, want_proba, rtol=RTOL, atol=ATOL,
                                   err_msg=f"{name}: scores alone, {len(xb)} rows")
        (label,) = sess.run_targets(feeds, [0])
        # a run of every node after the label-only run: the scores are written again
        got_label, got_proba = sess.run(feeds)
        np.testing.assert_array_equal(got_label, want_label, err_msg=f"{name}: full run, {len(xb)} rows")
        np.testing.assert_allclose(got_proba, want_proba, rtol=RTOL, atol=ATOL,
                                   err_msg=f"{name}: full run after a label-only one, {len(xb)} rows")
        both = sess.run_targets(feeds, [1, 0])
        np.testing.assert_allclose(both[0], want_proba, rtol=RTOL, atol=ATOL)
        np.testing.assert_array_equal(both[1], want_label)


def test_zipmap_label_alone():
    """A ZipMap export: the label's run skips both the ZipMap and the scores."""
    x, y3 = _data(1)
    model = RandomForestClassifier(n_estimators=8, max_depth=6, random_state=0).fit(x, y3)
    onx = _export(model, x, zipmap=True)
    ref = _ort(onx)
    sess = Session(onx.SerializeToString())
    for xb in _inputs(x):
        want = ref.run(["output_label"], {"X": xb})[0]
        (label,) = sess.run_targets({"X": xb}, [0])
        np.testing.assert_array_equal(label, want)
        # the ZipMap's output stands for its dense input: the scores
        (proba,) = sess.run_targets({"X": xb}, [1])
        want_proba = np.array([[row[k] for k in sorted(row)] for row in ref.run(None, {"X": xb})[1]],
                              dtype=np.float32)
        np.testing.assert_allclose(proba, want_proba, rtol=RTOL, atol=ATOL)


def test_output_no_node_reads_is_skipped_in_a_full_run():
    """The scores read by no node and not a graph output: a run of every node leaves
    them; the label, which a node after the classifier reads, is unchanged."""
    x, y3 = _data(2)
    model = RandomForestClassifier(n_estimators=10, max_depth=6, random_state=0).fit(x, y3)
    onx = _export(model, x)
    # the label plus one, through an Add, is the only output; the scores dangle
    plus = onnx.helper.make_tensor("one", onnx.TensorProto.INT64, [], [1])
    onx.graph.initializer.append(plus)
    onx.graph.node.append(onnx.helper.make_node("Add", ["label", "one"], ["label_plus_one"]))
    del onx.graph.output[:]
    onx.graph.output.append(onnx.helper.make_tensor_value_info("label_plus_one", onnx.TensorProto.INT64, [None]))
    onnx.checker.check_model(onx)
    ref = _ort(onx)
    for threads in (1, 2):
        sess = Session(onx.SerializeToString(), threads=threads)
        for xb in _inputs(x):
            (got,) = sess.run({"X": xb})
            np.testing.assert_array_equal(got, ref.run(None, {"X": xb})[0])
