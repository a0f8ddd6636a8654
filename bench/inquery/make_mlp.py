#!/usr/bin/env python3
"""The benchmark's MLP: 100 -> 256 -> 256 -> 1 (Gemm, Relu, Gemm, Relu, Gemm),
random weights (seed 0), input "x" float [N, 100], output "y" float [N, 1].

    python3 bench/inquery/make_mlp.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def make_mlp(seed=0):
    rng = np.random.default_rng(seed)
    sizes = [100, 256, 256, 1]
    nodes, inits = [], []
    prev = "x"
    for i in range(len(sizes) - 1):
        fan_in, fan_out = sizes[i], sizes[i + 1]
        w = (rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(np.float32)
        b = (rng.standard_normal(fan_out) * 0.01).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        out = "y" if i == len(sizes) - 2 else f"h{i}"
        gemm_out = out if i == len(sizes) - 2 else f"g{i}"
        nodes.append(helper.make_node("Gemm", [prev, f"w{i}", f"b{i}"], [gemm_out]))
        if i < len(sizes) - 2:
            nodes.append(helper.make_node("Relu", [gemm_out], [out]))
        prev = out
    graph = helper.make_graph(
        nodes, "mlp_100_256_256_1",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 100])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 1])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="onnx_pg bench/inquery")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    onnx.save(make_mlp(), sys.argv[1])
