"""The CUDA provider through the C API: fallback without a device (runs
everywhere), and CUDA-vs-CPU results for small graphs (skipped with a
message when no CUDA device is usable)."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from oxengine import EngineError, Session, cuda_usable

USABLE, WHY = cuda_usable(0)
needs_gpu = pytest.mark.skipif(not USABLE, reason=f"no usable CUDA device: {WHY}")


def mlp():
    rng = np.random.default_rng(0)
    w1 = helper.make_tensor("w1", TensorProto.FLOAT, [8, 16], rng.standard_normal(128).astype(np.float32))
    b1 = helper.make_tensor("b1", TensorProto.FLOAT, [16], rng.standard_normal(16).astype(np.float32))
    w2 = helper.make_tensor("w2", TensorProto.FLOAT, [16, 4], rng.standard_normal(64).astype(np.float32))
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["hb"]),
             helper.make_node("Relu", ["hb"], ["r"]), helper.make_node("MatMul", ["r", "w2"], ["z"]),
             helper.make_node("Softmax", ["z"], ["y"], axis=-1), helper.make_node("Shape", ["z"], ["s"])]
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4]),
                           helper.make_tensor_value_info("s", TensorProto.INT64, [2])], [w1, b1, w2])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_cpu_session_has_no_fallback_reason():
    s = Session(mlp())
    assert s.fallback_reason is None
    assert s.effective_providers == "cpu"
    assert all(p == "cpu" for _, _, p in s.placement())


@pytest.mark.skipif(USABLE, reason="a CUDA device is usable here")
def test_fallback_without_device():
    s = Session(mlp(), providers="cuda,cpu")
    assert s.fallback_reason
    assert s.effective_providers == "cpu"
    x = np.ones((3, 8), np.float32)
    np.testing.assert_allclose(s.run({"x": x})[0], Session(mlp()).run({"x": x})[0])
    with pytest.raises(EngineError, match="CUDA"):
        Session(mlp(), providers="cuda,cpu", no_fallback=True)


def test_unknown_provider():
    with pytest.raises(EngineError, match="unknown execution provider"):
        Session(mlp(), providers="tpu")


@needs_gpu
@pytest.mark.parametrize("fp16", [False, True])
def test_mlp_on_cuda(fp16):
    s = Session(mlp(), providers="cuda,cpu", cuda_fp16=fp16)
    assert s.effective_providers == "cuda,cpu"
    placed = {op: p for _, op, p in s.placement()}
    assert placed["Softmax"] == "cuda" and placed["Shape"] == "cpu"
    x = np.random.default_rng(1).standard_normal((5, 8)).astype(np.float32)
    want = Session(mlp()).run({"x": x})
    for _ in range(2):
        got = s.run({"x": x})
        np.testing.assert_allclose(got[0], want[0], rtol=3e-2 if fp16 else 1e-4, atol=1e-5)
        np.testing.assert_array_equal(got[1], want[1])


@needs_gpu
def test_no_fallback_lists_ops():
    with pytest.raises(EngineError, match="Shape"):
        Session(mlp(), providers="cuda,cpu", no_fallback=True)


@needs_gpu
def test_memory_limit():
    s = Session(mlp(), providers="cuda,cpu", cuda_memory_limit=4096)
    with pytest.raises(EngineError, match="memory limit"):
        s.run({"x": np.ones((4096, 8), np.float32)})


@needs_gpu
def test_bad_device_falls_back():
    s = Session(mlp(), providers="cuda,cpu", cuda_device_id=999)
    assert "does not exist" in s.fallback_reason
