#!/usr/bin/env python3
"""Print onnxruntime's answers for the binary TreeEnsembleClassifier cases of
test_ml_tree.c (the values pasted there).  Needs onnx and onnxruntime.

onnxruntime's binary-classifier conventions (weights for one class only,
[1 - p, p] or [-s, s] scores, LOGISTIC on both columns, the literal labels
1/0 when two classes both carry weights) are not in the ONNX spec; this is
how they were read off.
"""
import numpy as np
import onnxruntime as ort
from onnx import TensorProto as TP, helper as h


def run(attrs, X):
    node = h.make_node("TreeEnsembleClassifier", ["X"], ["Y", "Z"], domain="ai.onnx.ml", **attrs)
    g = h.make_graph([node], "g", [h.make_tensor_value_info("X", TP.FLOAT, None)],
                     [h.make_tensor_value_info("Y", TP.INT64, None), h.make_tensor_value_info("Z", TP.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("ai.onnx.ml", 1)])
    m.ir_version = 8
    return ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"X": X})


stump = dict(nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2], nodes_featureids=[0, 0, 0],
             nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"], nodes_values=[1.5, 0, 0],
             nodes_truenodeids=[1, 0, 0], nodes_falsenodeids=[2, 0, 0])
X = np.array([[0.0], [1.0], [2.0], [3.0]], np.float32)
for post, w, base in [("NONE", [0.3, 0.8], None), ("LOGISTIC", [0.3, 0.8], None), ("NONE", [-0.3, 0.8], None),
                      ("LOGISTIC", [-0.3, 0.8], [0.1]), ("SOFTMAX", [-0.3, 0.8], [0.1, 0.2])]:
    a = dict(stump, class_treeids=[0, 0], class_nodeids=[1, 2], class_ids=[0, 0], class_weights=w,
             classlabels_int64s=[5, 7], post_transform=post)
    if base:
        a["base_values"] = base
    y, z = run(a, X)
    print(post, w, base, y.tolist(), np.round(z, 7).tolist())
y, z = run(dict(stump, class_treeids=[0] * 4, class_nodeids=[1, 1, 2, 2], class_ids=[0, 1, 0, 1],
                class_weights=[0.7, 0.3, 0.2, 0.8], classlabels_int64s=[5, 7]), X)
print("both classes", y.tolist(), z.tolist())
