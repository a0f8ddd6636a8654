#!/usr/bin/env python3
"""Lay out onnx's "light" model tests (backend/test/data/light) as node-test
folders the conformance runner reads: model.onnx + test_data_set_0 with the
inputs onnx's own runner uses (arange(n) / n, reshaped, float32) and the
stored expected outputs.

    prepare_light.py OUT_DIR
"""
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import numpy_helper

LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def main(out_dir):
    count = 0
    for f in sorted(os.listdir(LIGHT)):
        if not f.endswith(".onnx"):
            continue
        name = "test_" + f[len("light_"):-len(".onnx")]
        prefix = os.path.join(LIGHT, f[:-len(".onnx")])
        model = onnx.load(os.path.join(LIGHT, f))
        dest = os.path.join(out_dir, name)
        data = os.path.join(dest, "test_data_set_0")
        os.makedirs(data, exist_ok=True)
        shutil.copy(os.path.join(LIGHT, f), os.path.join(dest, "model.onnx"))
        inits = {i.name for i in model.graph.initializer}
        k = 0
        for x in model.graph.input:
            if x.name in inits:
                continue
            shape = tuple(d.dim_value if d.HasField("dim_value") else 1 for d in x.type.tensor_type.shape.dim)
            n = int(np.prod(shape))
            value = (np.arange(n).reshape(shape) / n).astype(np.float32)
            with open(os.path.join(data, f"input_{k}.pb"), "wb") as out:
                out.write(numpy_helper.from_array(value).SerializeToString())
            k += 1
        for i in range(len(model.graph.output)):
            shutil.copy(f"{prefix}_output_{i}.pb", os.path.join(data, f"output_{i}.pb"))
        count += 1
    print(f"prepared {count} light model tests in {out_dir}")


if __name__ == "__main__":
    main(sys.argv[1])
