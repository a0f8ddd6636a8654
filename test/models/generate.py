#!/usr/bin/env python3
"""Generate the onnx_pg fixture models and their reference data.

    python3 test/models/generate.py            # everything
    python3 test/models/generate.py --no-torch # keep the committed mlp/small_cnn

Writes into test/models/ (or --out):

  <name>.onnx            the model (each well under 1 MB)
  <name>.inputs.json     {"<input name>": [[...], ...]}: a batch of samples (>= 100,
                         except small_cnn: 20), in the JSON shape onnx_run() takes
  <name>.expected.json   {"<output name>": ...}: onnxruntime's outputs for that batch,
                         in the JSON shape onnx_run() returns (sequences as arrays,
                         maps as objects with string keys)
  iris.csv               the 150 iris rows: id, 4 features, label, and
                         sklearn_prediction (the iris_rf model's scikit-learn predict)
  manifest.json          one entry per model: source, inputs, outputs, sample count

Models (all seeded):
  scikit-learn, converted with skl2onnx using default options (ZipMap probabilities):
    iris_rf        RandomForestClassifier(n_estimators=10, max_depth=5) on iris
    rf_regressor   RandomForestRegressor(n_estimators=10, max_depth=5) on diabetes
    logreg         LogisticRegression on iris
    scaler_logreg  Pipeline(StandardScaler, LogisticRegression) on wine
    gb_classifier  GradientBoostingClassifier(n_estimators=20, max_depth=3) on
                   breast_cancer (binary)
  PyTorch, exported by generate_torch.py (run with /usr/bin/python3 and Debian's
  python3-torch, opset 17, dynamic batch axis, random weights):
    mlp            16-32-32-3 (Gemm, Relu, Tanh, Softmax)
    small_cnn      [N,3,16,16] -> [N,10] (Conv, BatchNormalization, Relu, MaxPool,
                   GlobalAveragePool, Flatten, Gemm)

Needs: numpy, onnx, onnxruntime, scikit-learn, skl2onnx (and, for the torch part,
/usr/bin/python3 with torch; without it the committed torch models are kept).
"""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# Opsets pinned so that regenerating with a newer skl2onnx gives the same operators.
SKL_TARGET_OPSET = {"": 17, "ai.onnx.ml": 3}
SKL_MODELS = ["iris_rf", "rf_regressor", "logreg", "scaler_logreg", "gb_classifier"]
TORCH_MODELS = ["mlp", "small_cnn"]
ALL_MODELS = SKL_MODELS + TORCH_MODELS
MAX_ROWS = 200  # reference rows kept per tabular model


# --------------------------------------------------------------------------
# JSON helpers: float32 values written with the shortest decimal that reads
# back as the same float32, so the files stay small and exact.

def f32(v):
    s = str(np.float32(v))
    if s in ("nan", "inf", "-inf"):
        raise ValueError("non-finite value %r in reference data" % v)
    d = float(s)
    assert np.float32(d) == np.float32(v), (v, s)
    return d


def to_json(value):
    """onnxruntime output/input -> the JSON shape onnx_run uses."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f":
            return np.vectorize(f32, otypes=[object])(value).tolist() if value.ndim else f32(value)
        if value.dtype.kind in "iu":
            return value.astype(np.int64).tolist()
        if value.dtype.kind == "b":
            return value.tolist()
        return value.astype(str).tolist()
    if isinstance(value, dict):  # ZipMap entry: keys become strings
        return {str(k): to_json(v) for k, v in sorted(value.items())}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return f32(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    return value


def dump_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, separators=(",", ":"))
        f.write("\n")


# --------------------------------------------------------------------------
# scikit-learn models

def skl_convert(model, n_features, name):
    from skl2onnx import convert_sklearn
    from skl2onnx.common.data_types import FloatTensorType

    onx = convert_sklearn(
        model,
        name=name,
        initial_types=[("float_input", FloatTensorType([None, n_features]))],
        target_opset=SKL_TARGET_OPSET,
    )
    onx.doc_string = "onnx_pg test fixture %s (test/models/generate.py)" % name
    # skl2onnx collects the opset imports in a set, so their order depends on
    # the string hash seed: sort them so the files are reproducible.  (It
    # also lists the default domain twice for regressors; that is kept, as
    # real skl2onnx files have it.)
    imports = sorted(((o.domain, o.version) for o in onx.opset_import))
    del onx.opset_import[:]
    for domain, version in imports:
        onx.opset_import.add(domain=domain, version=version)
    return onx


def round_trip_f32(X):
    """The dataset as float32, as the extension and onnxruntime will see it."""
    X = np.asarray(X, dtype=np.float32)
    # make sure every value survives the JSON round trip exactly
    back = np.array([[f32(v) for v in row] for row in X], dtype=np.float32)
    assert np.array_equal(back, X)
    return X


def build_sklearn(out):
    from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, load_wine
    from sklearn.ensemble import (GradientBoostingClassifier, RandomForestClassifier,
                                  RandomForestRegressor)
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    iris = load_iris()
    Xi = round_trip_f32(iris.data)
    yi = iris.target.astype(np.int64)

    specs = {}

    rf = RandomForestClassifier(n_estimators=10, max_depth=5, random_state=0)
    rf.fit(Xi, yi)
    specs["iris_rf"] = (rf, Xi, "RandomForestClassifier(n_estimators=10, max_depth=5) on iris")

    dia = load_diabetes()
    Xd = round_trip_f32(dia.data)
    rfr = RandomForestRegressor(n_estimators=10, max_depth=5, random_state=0)
    rfr.fit(Xd, dia.target)
    specs["rf_regressor"] = (rfr, Xd, "RandomForestRegressor(n_estimators=10, max_depth=5) on diabetes")

    lr = LogisticRegression(max_iter=1000)
    lr.fit(Xi, yi)
    specs["logreg"] = (lr, Xi, "LogisticRegression on iris")

    wine = load_wine()
    Xw = round_trip_f32(wine.data)
    pipe = Pipeline([("scaler", StandardScaler()), ("logreg", LogisticRegression(max_iter=1000))])
    pipe.fit(Xw, wine.target.astype(np.int64))
    specs["scaler_logreg"] = (pipe, Xw, "Pipeline(StandardScaler, LogisticRegression) on wine")

    bc = load_breast_cancer()
    Xb = round_trip_f32(bc.data)
    gb = GradientBoostingClassifier(n_estimators=20, max_depth=3, random_state=0)
    gb.fit(Xb, bc.target.astype(np.int64))
    specs["gb_classifier"] = (gb, Xb, "GradientBoostingClassifier(n_estimators=20, max_depth=3) on breast_cancer")

    result = {}
    for name, (model, X, desc) in specs.items():
        onx = skl_convert(model, X.shape[1], name)
        path = os.path.join(out, name + ".onnx")
        with open(path, "wb") as f:
            f.write(onx.SerializeToString())
        print("wrote %s (%d bytes)" % (path, os.path.getsize(path)))
        result[name] = {"source": "scikit-learn " + desc, "X": X[:MAX_ROWS], "model": model}

    # iris.csv, with scikit-learn's own predictions for the demo's check
    pred = rf.predict(Xi).astype(np.int64)
    with open(os.path.join(out, "iris.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id", "sepal_length", "sepal_width", "petal_length", "petal_width",
                    "label", "sklearn_prediction"])
        for i, (row, label, p) in enumerate(zip(Xi, yi, pred), start=1):
            w.writerow([i] + [repr(f32(v)) for v in row] + [int(label), int(p)])
    print("wrote %s" % os.path.join(out, "iris.csv"))
    return result


# --------------------------------------------------------------------------
# PyTorch models

def torch_python():
    py = os.environ.get("TORCH_PYTHON", "/usr/bin/python3")
    if not shutil.which(py) and not os.path.exists(py):
        return None
    ok = subprocess.run([py, "-c", "import torch"], stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL).returncode == 0
    return py if ok else None


def build_torch(out, want):
    if want:
        py = torch_python()
        if py is None:
            sys.exit("generate.py: no Python with torch found (apt-get install python3-torch, "
                     "or set TORCH_PYTHON); use --no-torch to keep the committed torch models")
        subprocess.run([py, os.path.join(HERE, "generate_torch.py"), "--out", out], check=True)
    for name in TORCH_MODELS:
        if not os.path.exists(os.path.join(out, name + ".onnx")):
            sys.exit("generate.py: %s.onnx missing and torch export not run" % name)

    rng = np.random.default_rng(12345)
    # two-decimal values keep the reference files small and exactly representable
    X_mlp = np.round(rng.normal(size=(128, 16)), 2).astype(np.float32)
    # 20 images only (768 values each); test/e2e adds seeded random ones to reach >= 100
    X_cnn = np.round(rng.normal(size=(20, 3, 16, 16)), 2).astype(np.float32)
    return {
        "mlp": {"source": "PyTorch MLP 16-32-32-3 (random weights), opset 17", "X": X_mlp},
        "small_cnn": {"source": "PyTorch small CNN [N,3,16,16] -> [N,10] (random weights), opset 17",
                      "X": X_cnn},
    }


# --------------------------------------------------------------------------
# reference outputs with onnxruntime

def reference(out, models):
    import onnx
    import onnxruntime as ort

    manifest = {}
    for name in ALL_MODELS:
        path = os.path.join(out, name + ".onnx")
        onnx.checker.check_model(onnx.load(path), full_check=True)
        size = os.path.getsize(path)
        assert size < 512 * 1024, "%s is %d bytes: keep fixtures small" % (path, size)

        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        inp = sess.get_inputs()
        assert len(inp) == 1, name
        X = models[name]["X"]
        outs = sess.run(None, {inp[0].name: X})
        out_names = [o.name for o in sess.get_outputs()]

        dump_json(os.path.join(out, name + ".inputs.json"), {inp[0].name: to_json(X)})
        dump_json(os.path.join(out, name + ".expected.json"),
                  {n: to_json(v) for n, v in zip(out_names, outs)})

        if "model" in models[name] and hasattr(models[name]["model"], "predict_proba"):
            agree = float(np.mean(models[name]["model"].predict(X) == outs[0]))
            print("%s: onnxruntime labels agree with scikit-learn on %.1f%% of %d rows"
                  % (name, 100 * agree, len(X)))
            if name == "iris_rf":
                assert agree == 1.0, "iris_rf: onnxruntime and scikit-learn disagree"

        manifest[name] = {
            "file": name + ".onnx",
            "bytes": size,
            "source": models[name]["source"],
            "samples": int(X.shape[0]),
            "inputs": [{"name": i.name, "type": i.type, "shape": [d if isinstance(d, int) else str(d)
                                                                   for d in i.shape]} for i in inp],
            "outputs": [{"name": o.name, "type": o.type,
                         "shape": None if o.shape is None else
                         [d if isinstance(d, int) else str(d) for d in o.shape]}
                        for o in sess.get_outputs()],
        }
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write("\n")
    print("wrote reference data for %d models" % len(manifest))


def main(argv):
    ap = argparse.ArgumentParser(description="generate onnx_pg fixture models")
    ap.add_argument("--out", default=HERE)
    ap.add_argument("--no-torch", action="store_true",
                    help="do not re-export the PyTorch models; use the committed ones")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    models = build_sklearn(args.out)
    models.update(build_torch(args.out, not args.no_torch))
    reference(args.out, models)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
