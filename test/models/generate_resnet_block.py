"""Write test/models/resnet_block.onnx: a small ResNet-style network built
with onnx.helper (no PyTorch needed), used by the pg_regress suite
onnx_observe and the pictures in docs/.

    stem:   Conv 3->16 (3x3) + BatchNormalization + Relu
    block:  Conv 16->16 + BatchNormalization + Relu
            Conv 16->16 + BatchNormalization
            Add (identity shortcut) + Relu
    head:   GlobalAveragePool + Flatten + Gemm 16->10

Input "input" float [N, 3, 16, 16], output "logits" float [N, 10]; value_info
from onnx's shape inference, so every edge has a declared shape.  Weights
are seeded: the file is byte-for-byte reproducible for a given onnx version.

    python3 test/models/generate_resnet_block.py [output path]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def build():
    rng = np.random.default_rng(7)
    inits = []
    nodes = []

    def weight(name, shape, scale=0.2):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def conv_bn(prefix, x, cin, cout, relu):
        w = weight(prefix + ".conv.weight", (cout, cin, 3, 3))
        nodes.append(helper.make_node("Conv", [x, w], [prefix + ".conv"], name=prefix + "/Conv",
                                      kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
        scale = prefix + ".bn.weight"
        inits.append(numpy_helper.from_array((1 + 0.1 * rng.standard_normal(cout)).astype(np.float32), scale))
        bias = weight(prefix + ".bn.bias", (cout,), 0.1)
        mean = weight(prefix + ".bn.running_mean", (cout,), 0.1)
        var = prefix + ".bn.running_var"
        inits.append(numpy_helper.from_array((1 + 0.1 * rng.random(cout)).astype(np.float32), var))
        out = prefix + ".bn"
        nodes.append(helper.make_node("BatchNormalization", [prefix + ".conv", scale, bias, mean, var], [out],
                                      name=prefix + "/BatchNormalization", epsilon=1e-5))
        if relu:
            nodes.append(helper.make_node("Relu", [out], [prefix + ".relu"], name=prefix + "/Relu"))
            out = prefix + ".relu"
        return out

    x = conv_bn("stem", "input", 3, 16, True)
    y = conv_bn("block.1", x, 16, 16, True)
    y = conv_bn("block.2", y, 16, 16, False)
    nodes.append(helper.make_node("Add", [y, x], ["block.add"], name="block/Add"))
    nodes.append(helper.make_node("Relu", ["block.add"], ["block.out"], name="block/Relu"))
    nodes.append(helper.make_node("GlobalAveragePool", ["block.out"], ["gap"], name="head/GlobalAveragePool"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="head/Flatten", axis=1))
    fw = weight("fc.weight", (10, 16))
    fb = weight("fc.bias", (10,), 0.1)
    nodes.append(helper.make_node("Gemm", ["flat", fw, fb], ["logits"], name="head/Gemm", transB=1))

    graph = helper.make_graph(
        nodes, "resnet_block",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 3, 16, 16])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="onnx_pg generate_resnet_block.py")
    model.ir_version = 8
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.checker.check_model(model, full_check=True)
    return model


if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "resnet_block.onnx")
    onnx.save(build(), path)
    print("wrote", path)
