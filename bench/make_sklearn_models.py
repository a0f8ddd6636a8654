#!/usr/bin/env python3
"""Build the benchmark's scikit-learn model (iris_rf) with skl2onnx.

Runs with the Python that has scikit-learn and skl2onnx (the pyenv python3).

    python3 bench/make_sklearn_models.py [--out bench/models]

iris_rf.onnx is the same model as test/models/iris_rf.onnx
(RandomForestClassifier(n_estimators=10, max_depth=5, random_state=0) on iris,
ai.onnx 17 / ai.onnx.ml 3) converted with zipmap=False, so that both engines
return two plain tensors (label int64 [N], probabilities float [N,3]).  With
the default ZipMap output, onnxruntime's Python API would spend most of a
10,000-row call building Python dicts, which measures Python, not the engine.
If scikit-learn or skl2onnx is missing, test/models/iris_rf.onnx (ZipMap) is
copied instead and the benchmark only compares the label output.
"""
import argparse
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "models"))
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "iris_rf.onnx")
    if os.path.exists(path) and not args.force:
        print("kept %s" % path)
        return 0
    try:
        import numpy as np
        from skl2onnx import to_onnx
        from sklearn.datasets import load_iris
        from sklearn.ensemble import RandomForestClassifier
    except ImportError as e:
        shutil.copyfile(os.path.join(ROOT, "test", "models", "iris_rf.onnx"), path)
        print("scikit-learn/skl2onnx unavailable (%s): copied test/models/iris_rf.onnx" % e)
        return 0
    iris = load_iris()
    X = iris.data.astype(np.float32)
    y = iris.target.astype(np.int64)
    rf = RandomForestClassifier(n_estimators=10, max_depth=5, random_state=0).fit(X, y)
    onx = to_onnx(rf, X[:1], options={id(rf): {"zipmap": False}},
                  target_opset={"": 17, "ai.onnx.ml": 3})
    with open(path, "wb") as f:
        f.write(onx.SerializeToString())
    print("wrote %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
