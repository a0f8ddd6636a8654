"""The CUDA provider through the C API: fallback without a device (runs
everywhere), and CUDA-vs-CPU results for small graphs (skipped with a
message when no CUDA device is usable)."""
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import oxengine
from oxengine import EngineError, Session, available_providers, cuda_libraries_load, cuda_usable

USABLE, WHY = cuda_usable(0)
needs_gpu = pytest.mark.skipif(not USABLE, reason=f"no usable CUDA device: {WHY}")
CUDA_BUILT = "cuda" in available_providers()
needs_cuda_build = pytest.mark.skipif(not CUDA_BUILT, reason="the engine was built without CUDA")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


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


# ---- cuBLAS and cuDNN are opened at the first CUDA session, not linked ----

def needed_libraries(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


@pytest.mark.parametrize("lib", ["build/libox_capi.so", "onnx_pg.so"])
def test_cublas_and_cudnn_are_not_linked(lib):
    """cuBLAS pulls in cuBLASLt (500 MB, 55-110 ms to load): linked, every backend that loaded
    onnx_pg paid it, CPU-only ones included, and a server without them could not load it."""
    path = os.path.join(ROOT, lib)
    if lib == "build/libox_capi.so":
        path = oxengine._LIB_PATH
    if not os.path.exists(path) or not shutil.which("readelf"):
        pytest.skip(f"{lib} not built here, or no readelf")
    needed = needed_libraries(path)
    assert not [n for n in needed if n.startswith(("libcublas", "libcudnn"))], needed


def run_fresh(code, env=None):
    """code in a new Python process (the libraries load once per process), its stdout"""
    e = dict(os.environ, **(env or {}))
    r = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, %r)\n" % HERE + code],
                       capture_output=True, text=True, env=e, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


MAPPED = """
def mapped():
    with open("/proc/self/maps") as f:
        m = f.read()
    return [n for n in ("libcublas.so", "libcublasLt.so", "libcudnn.so") if n in m]
"""


@needs_cuda_build
def test_cuda_libraries_load_on_demand():
    """A CPU session maps neither library; loading them resolves every function the provider
    calls in this toolkit's libraries (a renamed or missing one fails here, without a GPU)."""
    out = run_fresh(MAPPED + """
import numpy as np
from oxengine import Session, cuda_libraries_load
from test_cuda import mlp
Session(mlp()).run({"x": np.ones((2, 8), np.float32)})
print("before", mapped())
ok, why = cuda_libraries_load()
print("load", ok, why)
print("after", mapped())
print("again", cuda_libraries_load())
""")
    lines = dict(line.split(" ", 1) for line in out.strip().splitlines())
    assert lines["before"] == "[]"
    if not os.path.isdir("/usr/local/cuda/lib64") and not lines["load"].startswith("True"):
        pytest.skip("the CUDA libraries are not installed here: " + lines["load"])
    assert lines["load"].startswith("True"), lines["load"]
    assert "'libcublas.so'" in lines["after"] and "'libcudnn.so'" in lines["after"]
    assert lines["again"] == "(True, '')"


def fake_library_dir(tmp_path, name, elf):
    """a directory holding name: a shared library with no symbols (elf), or not a library at all"""
    path = tmp_path / name
    if elf:
        cc = shutil.which("gcc") or shutil.which("cc")
        if not cc:
            pytest.skip("no C compiler for a stand-in library")
        src = tmp_path / "empty.c"
        src.write_text("int ox_stand_in;\n")
        subprocess.run([cc, "-shared", "-fPIC", "-o", str(path), str(src)], check=True)
    else:
        path.write_text("not a shared library\n")
    return str(tmp_path)


def soname(which):
    """the file name the engine opens for "cublas" or "cudnn" (the major version it was built with)"""
    f = getattr(oxengine.lib(), "ox_cuda_%s_soname" % which)
    f.restype, f.argtypes = oxengine.ctypes.c_char_p, []
    return f().decode()


@needs_cuda_build
@pytest.mark.parametrize("which,elf,want", [
    ("cublas", True, r"cuBLAS \(libcublas\.so\.\d+\) lacks cublasCreate_v2: a different version"),
    ("cudnn", False, r"cuDNN could not be loaded \(.*libcudnn\.so\.\d+"),
])
def test_cuda_libraries_that_do_not_load_say_why(tmp_path, which, elf, want):
    """LD_LIBRARY_PATH comes before the library's RUNPATH: a stand-in found first must give a
    sentence (the session's fallback reason on a GPU machine), never end the process."""
    if run_fresh("from oxengine import cuda_libraries_load; print(cuda_libraries_load()[0])").strip() != "True":
        pytest.skip("the CUDA libraries are not installed here")
    lib_dir = fake_library_dir(tmp_path, soname(which), elf)
    path = os.environ.get("LD_LIBRARY_PATH")
    out = run_fresh("""
from oxengine import cuda_libraries_load
ok, why = cuda_libraries_load()
print(ok)
print(why)
print(cuda_libraries_load() == (ok, why))
""", env={"LD_LIBRARY_PATH": lib_dir + (":" + path if path else "")})
    ok, why, same = out.strip().splitlines()
    assert ok == "False"
    assert re.search(want, why), why
    assert same == "True"
