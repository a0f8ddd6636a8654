"""The scikit-learn zoo: what scikit-learn users convert, through the server,
against onnxruntime.

Every model is trained here (seeded, a few seconds in all) on scikit-learn's
bundled datasets or synthetic data, converted with skl2onnx (XGBoost and
LightGBM with onnxmltools), loaded with onnx_load_model(name, bytea) and run
on at least 100 rows with onnx_run (jsonb, every output), and, for models
with one numeric input, with onnx_predict_batch naming each output and
onnx_predict row-wise over a table.  onnxruntime runs the same model on the
same rows here.

    labels (ints and strings)    identical
    probabilities and values     |got - want| <= RTOL * |want| + max(ATOL, SCALE * max|want|),
                                 RTOL = 1e-5, ATOL = 1e-6, SCALE = 1e-7

SCALE: a value that is a float32 sum of terms much larger than itself (a
linear model's output near zero) is exact to about float32's epsilon (6e-8)
times those terms, not times itself, and the two engines sum in different
orders (onnxruntime's GEMM differs between AVX2 and AVX-512): on an AVX2 EPYC
the ridge regressor's 0.8090 came out 1.2e-5 apart, its outputs reaching
about 600.  The output's largest value stands in for the terms.

The zoo (ZOO below): RandomForest, ExtraTrees, GradientBoosting and
HistGradientBoosting classifiers and regressors (HistGradientBoosting trained
and run with missing values; the classifiers binary and multiclass, i.e.
LOGISTIC and SOFTMAX post-transforms; ExtraTrees with two targets), a forest
on a double input with double thresholds and one written as the newer
TreeEnsemble operator (ai.onnx.ml 5), LogisticRegression binary and
multinomial, LinearRegression, Ridge (two targets), SVC rbf with
probabilities (binary and multiclass), linear and poly SVCs, rbf and sigmoid
SVRs, MinMaxScaler + Normalizer + Binarizer, MLPClassifier,
KNeighborsClassifier, a Pipeline with a ColumnTransformer over four named
inputs (two strings; SimpleImputer, StandardScaler, OneHotEncoder), string
class labels (forest, single tree and linear), a DecisionTreeRegressor, XGBoost and LightGBM classifiers and
regressors.

Needs scikit-learn and skl2onnx (skipped without them, saying so), and
xgboost, lightgbm and onnxmltools for those two models (each skipped with its
reason when missing).

    PGHOST=... PGPORT=... PGUSER=... PGDATABASE=... python3 -m pytest test/e2e/test_sklearn_zoo.py
"""
import functools
import math
import warnings

import numpy as np
import pytest
from psycopg.types.json import Jsonb

ort = pytest.importorskip("onnxruntime", reason="onnxruntime not installed: the sklearn zoo is skipped")
sklearn = pytest.importorskip("sklearn", reason="scikit-learn not installed: the sklearn zoo is skipped")
skl2onnx = pytest.importorskip("skl2onnx", reason="skl2onnx not installed: the sklearn zoo is skipped")

from skl2onnx import convert_sklearn  # noqa: E402
from skl2onnx.common.data_types import DoubleTensorType, FloatTensorType, StringTensorType  # noqa: E402
from sklearn import datasets  # noqa: E402
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.ensemble import (ExtraTreesClassifier, ExtraTreesRegressor,  # noqa: E402
                              GradientBoostingClassifier, GradientBoostingRegressor,
                              HistGradientBoostingClassifier, HistGradientBoostingRegressor,
                              RandomForestClassifier, RandomForestRegressor)
from sklearn.impute import SimpleImputer  # noqa: E402
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402
from sklearn.pipeline import Pipeline, make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder, StandardScaler  # noqa: E402
from sklearn.svm import SVC, SVR  # noqa: E402
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402  (a scikit-learn dependency)

RTOL = 1e-5
ATOL = 1e-6
SCALE = 1e-7
MIN_ROWS = 100
MAX_ROWS = 200
SEED = 20240611
# as the committed fixtures (test/models/generate.py): ai.onnx 17, ai.onnx.ml 3 at most
SKL_TARGET_OPSET = {"": 17, "ai.onnx.ml": 3}
# onnxmltools' XGBoost and LightGBM converters stop at ai.onnx 15
OMT_TARGET_OPSET = 15


# --------------------------------------------------------------------------
# data

def dataset(name):
    X, y = getattr(datasets, "load_" + name)(return_X_y=True)
    return X.astype(np.float32), y


def eval_rows(X, seed=0):
    """The rows to predict: the data set itself when it has <= MAX_ROWS rows,
    else MAX_ROWS of them chosen at random (seeded)."""
    if len(X) <= MAX_ROWS:
        return X
    rng = np.random.default_rng(SEED + seed)
    return X[np.sort(rng.choice(len(X), MAX_ROWS, replace=False))]


def with_nans(X, frac, seed):
    """A copy of X with a fraction of its values replaced by NaN (missing)."""
    rng = np.random.default_rng(SEED + seed)
    X = X.copy()
    X[rng.random(X.shape) < frac] = np.nan
    return X


def skl(model, X, name, input_type=FloatTensorType, options=None):
    """skl2onnx, one input 'input' [None, n_features]."""
    with warnings.catch_warnings():
        # scikit-learn 1.9 deprecates SVC(probability=True) and its probA_/probB_,
        # which the converter reads
        warnings.simplefilter("ignore", FutureWarning)
        onx = convert_sklearn(model, name=name, initial_types=[("input", input_type([None, X.shape[1]]))],
                              target_opset=SKL_TARGET_OPSET, options=options)
    return onx.SerializeToString()


def hgb(model, X, name):
    """skl2onnx for a HistGradientBoosting model.  skl2onnx 1.20 passes a
    Python bool (a leaf's missing_go_to_left = False) into the integer
    attribute nodes_missing_value_tracks_true, which onnx 1.22 refuses
    ("Expected an int, got a boolean"): coerce it to int while converting."""
    try:
        import skl2onnx.common.tree_ensemble as te
        add_node = te.add_node
    except (ImportError, AttributeError):  # another skl2onnx: convert as it is
        return skl(model, X, name)

    def add_node_int(*args, **kw):
        if "nodes_missing_value_tracks_true" in kw:
            kw["nodes_missing_value_tracks_true"] = int(kw["nodes_missing_value_tracks_true"])
        return add_node(*args, **kw)

    te.add_node = add_node_int
    try:
        return skl(model, X, name)
    finally:
        te.add_node = add_node


def quiet(fit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning and the like: the fit need not be good
        return fit()


# --------------------------------------------------------------------------
# the zoo: name -> () -> (model bytes, {input name: ndarray}, note)

ZOO = {}


def zoo(name):
    def register(fn):
        ZOO[name] = fn
        return fn
    return register


@zoo("rf_classifier")
def _():
    X, y = dataset("digits")  # 64 features, 10 classes
    m = RandomForestClassifier(n_estimators=25, max_depth=10, random_state=0).fit(X, y)
    return skl(m, X, "rf_classifier"), {"input": eval_rows(X)}


@zoo("rf_regressor")
def _():
    X, y = dataset("diabetes")
    m = RandomForestRegressor(n_estimators=25, max_depth=8, random_state=0).fit(X, y)
    return skl(m, X, "rf_regressor"), {"input": eval_rows(X)}


@zoo("rf_regressor_double")
def _():
    """Double thresholds: TreeEnsembleRegressor (ai.onnx.ml 3) on tensor(double)
    (its output is tensor(float) whatever the input) with nodes_values_as_tensor / target_weights_as_tensor holding the exact
    float64 thresholds and leaf values.  (skl2onnx 1.20 writes an invalid
    model for a double input, with ai.onnx.ml 1 attributes, so the node is
    rebuilt here from the forest.)  Half the rows sit exactly on a threshold
    or on the next double above it, where a float32 comparison would go the
    other way."""
    X, y = datasets.load_diabetes(return_X_y=True)
    m = RandomForestRegressor(n_estimators=10, max_depth=6, random_state=0).fit(X, y)
    return double_tree_regressor(m, X), {"input": threshold_rows(m, X, 7)}


def double_tree_regressor(m, X):
    from onnx import helper, TensorProto
    float_model = convert_sklearn(m, initial_types=[("input", FloatTensorType([None, X.shape[1]]))],
                                  target_opset=SKL_TARGET_OPSET)
    node, = [n for n in float_model.graph.node if n.op_type == "TreeEnsembleRegressor"]
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    trees = [e.tree_ for e in m.estimators_]
    modes = [v.decode() if isinstance(v, bytes) else v for v in attrs.pop("nodes_modes")]
    thresholds = [0.0 if mode == "LEAF" else float(trees[t].threshold[n])
                  for t, n, mode in zip(attrs["nodes_treeids"], attrs["nodes_nodeids"], modes)]
    weights = [float(trees[t].value[n, 0, 0]) / len(trees)
               for t, n in zip(attrs["target_treeids"], attrs["target_nodeids"])]
    for k in ("nodes_values", "target_weights", "nodes_hitrates", "base_values"):
        attrs.pop(k, None)
    attrs["post_transform"] = attrs["post_transform"].decode() if isinstance(attrs["post_transform"], bytes) \
        else attrs["post_transform"]
    new = helper.make_node(
        "TreeEnsembleRegressor", ["input"], ["variable"], domain="ai.onnx.ml", nodes_modes=modes,
        nodes_values_as_tensor=helper.make_tensor("nv", TensorProto.DOUBLE, [len(thresholds)], thresholds),
        target_weights_as_tensor=helper.make_tensor("tw", TensorProto.DOUBLE, [len(weights)], weights),
        **attrs)
    graph = helper.make_graph([new], "rf_regressor_double",
                              [helper.make_tensor_value_info("input", TensorProto.DOUBLE, [None, X.shape[1]])],
                              [helper.make_tensor_value_info("variable", TensorProto.FLOAT, [None, 1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("ai.onnx.ml", 3)])
    model.ir_version = 8
    return model.SerializeToString()


def threshold_rows(m, X, seed):
    """eval_rows(X), then as many rows again with one feature set exactly to a
    split threshold of the forest, or to the next double above it."""
    rng = np.random.default_rng(SEED + seed)
    base = eval_rows(X)[: MAX_ROWS // 2]
    rows = []
    for i in range(MAX_ROWS // 2):
        tree = m.estimators_[rng.integers(len(m.estimators_))].tree_
        branch = np.flatnonzero(tree.children_left >= 0)
        n = branch[rng.integers(len(branch))]
        x = X[rng.integers(len(X))].copy()
        t = tree.threshold[n]
        x[tree.feature[n]] = t if i % 2 == 0 else np.nextafter(t, np.inf)
        rows.append(x)
    return np.concatenate([base, np.array(rows)])


@zoo("tree_ensemble_v5")
def _():
    """The newer TreeEnsemble operator (ai.onnx.ml 5), which no converter
    emits yet: a RandomForestRegressor written as one TreeEnsemble node
    (aggregate AVERAGE, BRANCH_LEQ splits, double input, splits and leaf
    weights), by tree_ensemble_v5() below; rows on the thresholds as for
    rf_regressor_double."""
    X, y = datasets.load_diabetes(return_X_y=True)
    m = RandomForestRegressor(n_estimators=8, max_depth=5, random_state=1).fit(X, y)
    return tree_ensemble_v5(m, X.shape[1]), {"input": threshold_rows(m, X, 8)}


def tree_ensemble_v5(m, n_features):
    from onnx import helper, TensorProto
    node_feat, node_split, true_ids, true_leaf, false_ids, false_leaf, roots = [], [], [], [], [], [], []
    leaf_weights = []
    for est in m.estimators_:
        t = est.tree_
        internal = np.flatnonzero(t.children_left >= 0)
        assert len(internal) > 0, "a single-leaf tree cannot be written as TreeEnsemble"
        node_index = {int(n): len(node_feat) + k for k, n in enumerate(internal)}
        leaf_index = {}
        for n in np.flatnonzero(t.children_left < 0):
            leaf_index[int(n)] = len(leaf_weights)
            leaf_weights.append(float(t.value[n, 0, 0]))
        roots.append(node_index[0])
        for n in internal:
            node_feat.append(int(t.feature[n]))
            node_split.append(float(t.threshold[n]))
            for child, ids, leaf in ((t.children_left[n], true_ids, true_leaf),
                                     (t.children_right[n], false_ids, false_leaf)):
                child = int(child)
                if child in leaf_index:
                    ids.append(leaf_index[child])
                    leaf.append(1)
                else:
                    ids.append(node_index[child])
                    leaf.append(0)
    n_nodes = len(node_feat)
    node = helper.make_node(
        "TreeEnsemble", ["input"], ["variable"], domain="ai.onnx.ml",
        aggregate_function=0,  # AVERAGE
        post_transform=0,  # NONE
        n_targets=1,
        tree_roots=roots,
        nodes_featureids=node_feat,
        nodes_modes=helper.make_tensor("modes", TensorProto.UINT8, [n_nodes], [0] * n_nodes),  # BRANCH_LEQ
        nodes_splits=helper.make_tensor("splits", TensorProto.DOUBLE, [n_nodes], node_split),
        nodes_truenodeids=true_ids, nodes_trueleafs=true_leaf,
        nodes_falsenodeids=false_ids, nodes_falseleafs=false_leaf,
        leaf_targetids=[0] * len(leaf_weights),
        leaf_weights=helper.make_tensor("weights", TensorProto.DOUBLE, [len(leaf_weights)], leaf_weights))
    graph = helper.make_graph([node], "tree_ensemble_v5",
                              [helper.make_tensor_value_info("input", TensorProto.DOUBLE, [None, n_features])],
                              [helper.make_tensor_value_info("variable", TensorProto.DOUBLE, [None, 1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("ai.onnx.ml", 5)])
    model.ir_version = 10
    return model.SerializeToString()


@zoo("extra_trees_classifier")
def _():
    X, y = dataset("wine")
    m = ExtraTreesClassifier(n_estimators=30, max_depth=6, random_state=0).fit(X, y)
    return skl(m, X, "extra_trees_classifier"), {"input": eval_rows(X)}


@zoo("extra_trees_regressor")
def _():
    """Two targets: TreeEnsembleRegressor with n_targets = 2."""
    X, y = datasets.make_regression(n_samples=400, n_features=8, n_targets=2, noise=5.0, random_state=0)
    X = X.astype(np.float32)
    m = ExtraTreesRegressor(n_estimators=20, max_depth=8, random_state=0).fit(X, y)
    return skl(m, X, "extra_trees_regressor"), {"input": eval_rows(X)}


@zoo("gradient_boosting_classifier")
def _():
    """Multiclass: SOFTMAX post-transform over per-class base values."""
    X, y = dataset("iris")
    m = GradientBoostingClassifier(n_estimators=30, max_depth=3, random_state=0).fit(X, y)
    return skl(m, X, "gradient_boosting_classifier"), {"input": eval_rows(X)}


@zoo("gradient_boosting_regressor")
def _():
    X, y = dataset("diabetes")
    m = GradientBoostingRegressor(n_estimators=40, max_depth=3, random_state=0).fit(X, y)
    return skl(m, X, "gradient_boosting_regressor"), {"input": eval_rows(X)}


@zoo("hist_gradient_boosting_classifier")
def _():
    """Binary (LOGISTIC post-transform), trained and run with missing values."""
    X, y = dataset("breast_cancer")
    Xn = with_nans(X, 0.1, 1)
    m = HistGradientBoostingClassifier(max_iter=30, max_depth=4, random_state=0).fit(Xn, y)
    return hgb(m, X, "hist_gradient_boosting_classifier"), {"input": eval_rows(Xn)}


@zoo("hist_gradient_boosting_classifier_multiclass")
def _():
    X, y = dataset("wine")
    Xn = with_nans(X, 0.1, 2)
    m = HistGradientBoostingClassifier(max_iter=20, max_depth=3, random_state=0).fit(Xn, y)
    return hgb(m, X, "hist_gradient_boosting_classifier_multiclass"), {"input": eval_rows(Xn)}


@zoo("hist_gradient_boosting_regressor")
def _():
    X, y = dataset("diabetes")
    Xn = with_nans(X, 0.1, 3)
    m = HistGradientBoostingRegressor(max_iter=40, max_depth=4, random_state=0).fit(Xn, y)
    return hgb(m, X, "hist_gradient_boosting_regressor"), {"input": eval_rows(Xn)}


@zoo("logistic_regression_binary")
def _():
    X, y = dataset("breast_cancer")
    m = quiet(lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)).fit(X, y))
    return skl(m, X, "logistic_regression_binary"), {"input": eval_rows(X)}


@zoo("logistic_regression_multinomial")
def _():
    X, y = dataset("digits")
    m = quiet(lambda: LogisticRegression(max_iter=300).fit(X / 16.0, y))  # multinomial (lbfgs)
    return skl(m, X, "logistic_regression_multinomial"), {"input": eval_rows(X / 16.0)}


@zoo("linear_regression")
def _():
    X, y = dataset("diabetes")
    m = LinearRegression().fit(X, y)
    return skl(m, X, "linear_regression"), {"input": eval_rows(X)}


@zoo("ridge")
def _():
    """Two targets."""
    X, y = datasets.make_regression(n_samples=300, n_features=12, n_targets=2, noise=2.0, random_state=1)
    X = X.astype(np.float32)
    m = Ridge(alpha=1.0).fit(X, y)
    return skl(m, X, "ridge"), {"input": eval_rows(X)}


def svc_with_probabilities():
    """SVC(kernel="rbf", probability=True): deprecated in scikit-learn 1.9,
    to be removed in 1.11 (skipped there, saying so)."""
    try:
        return SVC(kernel="rbf", probability=True, random_state=0)
    except TypeError as e:
        pytest.skip("this scikit-learn has no SVC(probability=True) (%s): skipped" % e)


@zoo("svc_rbf_proba")
def _():
    X, y = dataset("wine")
    m = quiet(lambda: make_pipeline(StandardScaler(), svc_with_probabilities()).fit(X, y))
    return skl(m, X, "svc_rbf_proba"), {"input": eval_rows(X)}


@zoo("svc_rbf_proba_binary")
def _():
    X, y = dataset("breast_cancer")
    m = quiet(lambda: make_pipeline(StandardScaler(), svc_with_probabilities()).fit(X, y))
    return skl(m, X, "svc_rbf_proba_binary"), {"input": eval_rows(X)}


@zoo("svc_linear_binary")
def _():
    """No probabilities: the label and the decision function (SVMClassifier
    with a LINEAR kernel)."""
    X, y = dataset("breast_cancer")
    m = make_pipeline(StandardScaler(), SVC(kernel="linear", C=0.5)).fit(X, y)
    return skl(m, X, "svc_linear_binary"), {"input": eval_rows(X)}


@zoo("svc_poly")
def _():
    """Multiclass one-vs-one votes, POLY kernel, no probabilities."""
    X, y = dataset("wine")
    m = make_pipeline(StandardScaler(), SVC(kernel="poly", degree=3, coef0=1.0, C=2.0)).fit(X, y)
    return skl(m, X, "svc_poly"), {"input": eval_rows(X)}


@zoo("svr_sigmoid")
def _():
    """SIGMOID kernel.  C is kept small: with C = 50 the 437 dual
    coefficients sit at +-50 and the sum of |terms| is ~450 times the result,
    so float32 accumulation alone (onnxruntime's as much as ours) moves
    results by ~3e-4 of ~15, beyond 1e-5 relative: a badly conditioned model,
    not a kernel difference."""
    X, y = dataset("diabetes")
    m = make_pipeline(StandardScaler(), SVR(kernel="sigmoid", gamma=0.05, C=2.0, epsilon=2.0)).fit(X, y)
    return skl(m, X, "svr_sigmoid"), {"input": eval_rows(X)}


@zoo("svr")
def _():
    X, y = dataset("diabetes")
    m = make_pipeline(StandardScaler(), SVR(kernel="rbf", C=50.0, epsilon=2.0)).fit(X, y)
    return skl(m, X, "svr"), {"input": eval_rows(X)}


@zoo("preprocessing_pipeline")
def _():
    """MinMaxScaler, Normalizer and Binarizer in front of a Bernoulli-style
    LogisticRegression (Scaler, Normalizer, Binarizer, LinearClassifier)."""
    from sklearn.preprocessing import Binarizer, MinMaxScaler, Normalizer
    X, y = dataset("digits")
    m = quiet(lambda: make_pipeline(MinMaxScaler(), Normalizer(norm="l2"), Binarizer(threshold=0.1),
                                    LogisticRegression(max_iter=300)).fit(X, y))
    return skl(m, X, "preprocessing_pipeline"), {"input": eval_rows(X)}


@zoo("mlp_classifier")
def _():
    X, y = dataset("digits")
    m = quiet(lambda: make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(32, 16), max_iter=150,
                                                                    random_state=0)).fit(X, y))
    return skl(m, X, "mlp_classifier"), {"input": eval_rows(X)}


@zoo("kneighbors_classifier")
def _():
    X, y = dataset("wine")
    m = make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=5)).fit(X, y)
    return skl(m, X, "kneighbors_classifier"), {"input": eval_rows(X)}


def tabular(n, seed):
    """A synthetic customer table: two numeric columns with missing values and
    two string columns, and a 3-class label that depends on all four."""
    rng = np.random.default_rng(SEED + seed)
    age = rng.normal(40, 12, n)
    income = rng.lognormal(10, 0.5, n)
    city = rng.choice(["paris", "lyon", "nantes", "lille", "brest"], n)
    plan = rng.choice(["free", "basic", "pro"], n, p=[0.5, 0.3, 0.2])
    score = (age - 40) / 12 + np.log(income) - 10 + (plan == "pro") * 1.5 - (city == "lille") * 1.0
    score += rng.normal(0, 0.5, n)
    label = np.digitize(score, [-0.5, 0.7])
    age[rng.random(n) < 0.1] = np.nan
    income[rng.random(n) < 0.1] = np.nan
    return age.astype(np.float32), income.astype(np.float32), city, plan, label


@zoo("pipeline_column_transformer")
def _():
    """Four named inputs, two of them strings: SimpleImputer + StandardScaler
    on the numbers, OneHotEncoder on the strings, then LogisticRegression."""
    age, income, city, plan, label = tabular(600, 4)
    X = np.empty((len(age), 4), dtype=object)
    X[:, 0], X[:, 1], X[:, 2], X[:, 3] = age, income, city, plan
    pre = ColumnTransformer([
        ("num", Pipeline([("impute", SimpleImputer(strategy="median")), ("scale", StandardScaler())]), [0, 1]),
        ("cat", OneHotEncoder(handle_unknown="ignore"), [2, 3]),
    ])
    m = quiet(lambda: Pipeline([("pre", pre), ("clf", LogisticRegression(max_iter=500))]).fit(X, label))
    onx = convert_sklearn(m, name="pipeline_column_transformer", target_opset=SKL_TARGET_OPSET,
                          initial_types=[("age", FloatTensorType([None, 1])),
                                         ("income", FloatTensorType([None, 1])),
                                         ("city", StringTensorType([None, 1])),
                                         ("plan", StringTensorType([None, 1]))])
    a, i, c, p, _ = tabular(MAX_ROWS, 5)  # fresh rows
    c[:3] = "brest-sur-mer"  # a category never seen in training (ignored by the encoder)
    feeds = {"age": a.reshape(-1, 1), "income": i.reshape(-1, 1),
             "city": c.reshape(-1, 1).astype(object), "plan": p.reshape(-1, 1).astype(object)}
    return onx.SerializeToString(), feeds


@zoo("string_labels_random_forest")
def _():
    X, y = dataset("iris")
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    m = RandomForestClassifier(n_estimators=15, max_depth=4, random_state=0).fit(X, names)
    return skl(m, X, "string_labels_random_forest"), {"input": eval_rows(X)}


@zoo("decision_tree_string_labels")
def _():
    """A single tree: each leaf's row is finished once when the session is
    made (ml_tree.c, build_leaf_table), string labels included."""
    X, y = dataset("iris")
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    m = DecisionTreeClassifier(max_depth=5, random_state=0).fit(X, names)
    return skl(m, X, "decision_tree_string_labels"), {"input": eval_rows(X)}


@zoo("decision_tree_regressor")
def _():
    X, y = dataset("diabetes")
    m = DecisionTreeRegressor(max_depth=8, random_state=0).fit(X, y)
    return skl(m, X, "decision_tree_regressor"), {"input": eval_rows(X)}


@zoo("string_labels_logistic_regression")
def _():
    X, y = dataset("wine")
    names = np.array(["barolo", "grignolino", "barbera"])[y]
    m = quiet(lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)).fit(X, names))
    return skl(m, X, "string_labels_logistic_regression"), {"input": eval_rows(X)}


def onnxmltools_or_skip(package):
    try:
        __import__(package)
        import onnxmltools  # noqa: F401
        from onnxmltools.convert.common.data_types import FloatTensorType as OmtFloat
    except ImportError as e:
        pytest.skip("%s or onnxmltools not installed (%s): the %s model is skipped "
                    "(pip install %s onnxmltools)" % (package, e, package, package))
    return onnxmltools, OmtFloat


@zoo("xgboost_classifier")
def _():
    onnxmltools, OmtFloat = onnxmltools_or_skip("xgboost")
    import xgboost
    X, y = dataset("wine")
    m = xgboost.XGBClassifier(n_estimators=30, max_depth=3, learning_rate=0.3, random_state=0, n_jobs=1).fit(X, y)
    onx = onnxmltools.convert_xgboost(m, name="xgboost_classifier", target_opset=OMT_TARGET_OPSET,
                                      initial_types=[("input", OmtFloat([None, X.shape[1]]))])
    return onx.SerializeToString(), {"input": eval_rows(X)}


@zoo("xgboost_regressor")
def _():
    onnxmltools, OmtFloat = onnxmltools_or_skip("xgboost")
    import xgboost
    X, y = dataset("diabetes")
    m = xgboost.XGBRegressor(n_estimators=30, max_depth=4, random_state=0, n_jobs=1).fit(X, y)
    onx = onnxmltools.convert_xgboost(m, name="xgboost_regressor", target_opset=OMT_TARGET_OPSET,
                                      initial_types=[("input", OmtFloat([None, X.shape[1]]))])
    return onx.SerializeToString(), {"input": eval_rows(X)}


@zoo("lightgbm_classifier")
def _():
    onnxmltools, OmtFloat = onnxmltools_or_skip("lightgbm")
    import lightgbm
    X, y = dataset("breast_cancer")
    m = lightgbm.LGBMClassifier(n_estimators=30, num_leaves=15, random_state=0, n_jobs=1, verbose=-1).fit(X, y)
    onx = onnxmltools.convert_lightgbm(m, name="lightgbm_classifier", target_opset=OMT_TARGET_OPSET,
                                       initial_types=[("input", OmtFloat([None, X.shape[1]]))])
    return onx.SerializeToString(), {"input": eval_rows(X)}


@zoo("lightgbm_regressor")
def _():
    onnxmltools, OmtFloat = onnxmltools_or_skip("lightgbm")
    import lightgbm
    X, y = dataset("diabetes")
    m = lightgbm.LGBMRegressor(n_estimators=30, num_leaves=15, random_state=0, n_jobs=1, verbose=-1).fit(X, y)
    onx = onnxmltools.convert_lightgbm(m, name="lightgbm_regressor", target_opset=OMT_TARGET_OPSET,
                                       initial_types=[("input", OmtFloat([None, X.shape[1]]))])
    return onx.SerializeToString(), {"input": eval_rows(X)}


NAMES = list(ZOO)


# --------------------------------------------------------------------------
# the reference and the comparisons

@functools.lru_cache(maxsize=None)
def build(name):
    """(model bytes, feeds, [(output name, onnxruntime output)])."""
    # one BLAS thread while training: with several, the lbfgs fits run ~50
    # times slower on a busy 2-core machine
    with threadpool_limits(1):
        data, feeds = ZOO[name]()
    n = len(next(iter(feeds.values())))
    assert n >= MIN_ROWS, "%s: only %d rows" % (name, n)
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    outs = sess.run(None, feeds)
    return data, feeds, [(o.name, v) for o, v in zip(sess.get_outputs(), outs)]


def is_zipmap(v):
    return isinstance(v, list) and (not v or isinstance(v[0], dict))


def close(got, want, what):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, "%s: shape %s, expected %s" % (what, got.shape, want.shape)
    err = np.abs(got - want)
    err = np.where(np.isnan(got) != np.isnan(want), np.inf, np.nan_to_num(err))
    scale = float(np.max(np.abs(np.nan_to_num(want, posinf=0.0, neginf=0.0)))) if want.size else 0.0
    tol = RTOL * np.abs(np.nan_to_num(want)) + max(ATOL, SCALE * scale)
    big = np.abs(np.nan_to_num(want)) > 100 * ATOL  # relative error where it means something
    rel = float(np.max(err[big] / np.abs(want[big]))) if np.any(big) else 0.0
    bad = np.flatnonzero((err > tol).reshape(-1))
    if bad.size:
        i = np.unravel_index(bad[0], want.shape)
        pytest.fail("%s: %d of %d values outside rtol %g / atol %g; first at %s: got %.9g, want %.9g "
                    "(max abs error %.3g)" % (what, bad.size, want.size, RTOL, ATOL, list(map(int, i)),
                                              got[i], want[i], float(np.max(err))), pytrace=False)
    return (float(np.max(err)) if err.size else 0.0), rel


def identical(got, want, what):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, "%s: shape %s, expected %s" % (what, got.shape, want.shape)
    if want.dtype.kind in "OUS":
        got, want = got.astype(str), want.astype(str)
    else:
        got = got.astype(want.dtype) if got.dtype.kind == "f" and np.all(got == np.round(got)) else got
    bad = np.flatnonzero((got != want).reshape(-1))
    if bad.size:
        pytest.fail("%s: %d of %d labels differ, first at %d: got %r, want %r" % (
            what, bad.size, want.size, bad[0], got.reshape(-1)[bad[0]], want.reshape(-1)[bad[0]]), pytrace=False)


def class_key(k):
    """ZipMap keys: numbers in numeric order, strings as they are."""
    try:
        return (0, float(k), "")
    except ValueError:
        return (1, 0.0, str(k))


def dense(maps):
    """ZipMap output (list of {class: p}) -> [N, classes] in class order."""
    keys = sorted(maps[0], key=class_key)
    return np.array([[m[k] for k in keys] for m in maps], dtype=np.float64), keys


def check_output(got, want, what):
    """Labels identical, floats close; ZipMap outputs as maps."""
    if is_zipmap(want):
        assert isinstance(got, list) and len(got) == len(want), "%s: %d maps expected, got %r" % (
            what, len(want), type(got))
        want_keys = sorted((str(k) for k in want[0]), key=class_key)
        for i, g in enumerate(got):
            assert sorted(map(str, g), key=class_key) == want_keys, "%s[%d]: classes %s, expected %s" % (
                what, i, sorted(g), want_keys)
        g, _ = dense([{str(k): v for k, v in m.items()} for m in got])
        w, _ = dense([{str(k): v for k, v in m.items()} for m in want])
        return close(g, w, what)
    want = np.asarray(want)
    if want.dtype.kind in "iubOUS":
        identical(got, want, what)
        return 0.0, 0.0
    return close(got, want, what)


def to_json(a):
    """ndarray -> what onnx_run takes: nested lists, NaN as the string "NaN"."""
    a = np.asarray(a)
    if a.dtype.kind == "f":
        return [to_json(x) for x in a] if a.ndim else ("NaN" if math.isnan(a) else float(a))
    if a.dtype.kind in "iub":
        return a.tolist()
    return a.astype(str).tolist()


def single_numeric_input(feeds, dtypes=(np.float32,)):
    if len(feeds) != 1:
        return None
    (name, X), = feeds.items()
    return X if X.dtype in dtypes and X.ndim == 2 else None


# --------------------------------------------------------------------------
# server

_loaded = set()


def load(conn, name, data):
    if name not in _loaded:
        with conn.cursor() as cur:
            cur.execute("SELECT onnx_load_model(%s, %s, replace => true)", ("zoo_" + name, data))
        _loaded.add(name)
    return "zoo_" + name


ERRORS = {}  # name -> (max abs error, max relative error) seen, for the summary


def record(name, err):
    a, r = ERRORS.get(name, (0.0, 0.0))
    ERRORS[name] = (max(a, err[0]), max(r, err[1]))


def test_zoo_covers_the_issue():
    """The models issue 3 asks for are all in the zoo."""
    required = {"rf_classifier", "rf_regressor", "extra_trees_classifier", "extra_trees_regressor",
                "gradient_boosting_classifier", "gradient_boosting_regressor",
                "hist_gradient_boosting_classifier", "hist_gradient_boosting_regressor",
                "logistic_regression_binary", "logistic_regression_multinomial", "linear_regression", "ridge",
                "svc_rbf_proba", "svr", "mlp_classifier", "kneighbors_classifier",
                "pipeline_column_transformer", "string_labels_random_forest",
                "xgboost_classifier", "lightgbm_classifier"}
    assert required <= set(NAMES), sorted(required - set(NAMES))


@pytest.mark.parametrize("name", NAMES)
def test_onnx_run(conn, name):
    """onnx_run(model, jsonb) with every input by name: every output equals
    onnxruntime's (labels identical, ZipMap maps with the same classes)."""
    data, feeds, want = build(name)
    model = load(conn, name, data)
    with conn.cursor() as cur:
        cur.execute("SELECT onnx_run(%s, %s)", (model, Jsonb({k: to_json(v) for k, v in feeds.items()})))
        got = cur.fetchone()[0]
    assert isinstance(got, dict), "onnx_run returned %r" % type(got)
    assert sorted(got) == sorted(n for n, _ in want), "outputs %s, expected %s" % (sorted(got), [n for n, _ in want])
    for out, w in want:
        record(name, check_output(got[out], w, "%s onnx_run %s" % (name, out)))


@pytest.mark.parametrize("name", NAMES)
def test_onnx_predict_batch(conn, name):
    """onnx_predict_batch(model, real[][], output) for each numeric output
    (ZipMap probabilities come back dense, in class order)."""
    data, feeds, want = build(name)
    X = single_numeric_input(feeds)
    if X is None:
        pytest.skip("%s: not a single float32 [N, F] input, and onnx_predict_batch takes real[][] "
                    "(checked with onnx_run and onnx_predict)" % name)
    model = load(conn, name, data)
    compared = 0
    for out, w in want:
        if is_zipmap(w):
            w, _ = dense(w)
        elif np.asarray(w).dtype.kind in "OUS":
            continue  # string labels: onnx_predict_batch returns real[]
        w = np.asarray(w).reshape(len(X), -1)
        with conn.cursor() as cur:
            cur.execute("SELECT onnx_predict_batch(%s, %s::real[][], %s)", (model, X.tolist(), out))
            got = cur.fetchone()[0]
        got = np.asarray(got, dtype=np.float64).reshape(len(X), -1)
        what = "%s onnx_predict_batch %s" % (name, out)
        if w.dtype.kind in "iub":
            identical(got, w.astype(np.float64), what)  # exact, no rounding
        else:
            record(name, close(got, w, what))
        compared += 1
    assert compared >= 1


@pytest.mark.parametrize("name", NAMES)
def test_onnx_predict_rows(conn, name):
    """onnx_predict(model, features, output) over a table of samples, one
    query, for the last numeric output (probabilities or values); features
    are real[] or, for a double input, double precision[]."""
    data, feeds, want = build(name)
    X = single_numeric_input(feeds, (np.float32, np.float64))
    if X is None:
        pytest.skip("%s: not a single numeric [N, F] input (checked with onnx_run)" % name)
    sqltype = "real[]" if X.dtype == np.float32 else "double precision[]"
    out, w = [(o, v) for o, v in want if is_zipmap(v) or np.asarray(v).dtype.kind not in "OUS"][-1]
    w = dense(w)[0] if is_zipmap(w) else np.asarray(w).reshape(len(X), -1)
    model = load(conn, name, data)
    with conn.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS pg_temp.zoo_rows")
        cur.execute("CREATE TEMP TABLE zoo_rows (id int PRIMARY KEY, features %s)" % sqltype)
        cur.executemany("INSERT INTO zoo_rows VALUES (%%s, %%s::%s)" % sqltype,
                        [(i, x.tolist()) for i, x in enumerate(X)])
        cur.execute("SELECT onnx_predict(%s, features, %s) FROM zoo_rows ORDER BY id", (model, out))
        got = [r[0] for r in cur.fetchall()]
    assert all(g is not None for g in got)
    got = np.asarray(got, dtype=np.float64).reshape(len(X), -1)
    what = "%s onnx_predict %s" % (name, out)
    if w.dtype.kind in "iub":
        identical(got, w.astype(np.float64), what)  # exact, no rounding
    else:
        record(name, close(got, w, what))


def test_zz_report_errors(capsys):
    """Prints the largest errors seen per model (pytest -s or -rA)."""
    lines = ["%-46s %10.3g %10.3g" % (n, ERRORS[n][0], ERRORS[n][1]) for n in NAMES if n in ERRORS]
    print("\nfloat outputs vs onnxruntime (labels are compared for identity):\n  %-46s %10s %10s\n  "
          % ("model", "max abs", "max rel") + "\n  ".join(lines))
