"""The intra-op thread pool (src/runtime/parallel.c): within a run on several
threads the workers spin between the run's loops; once the run returns they
must sleep at once, since a PostgreSQL backend idles between queries and a
spinning worker would hold a core for nothing.  And the results do not depend
on the thread count."""
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from oxengine import Session


def matmul_chain(n=6, k=256):
    rng = np.random.RandomState(0)
    nodes, inits, x = [], [], "x"
    for i in range(n):
        inits.append(numpy_helper.from_array((rng.randn(k, k) * 0.05).astype(np.float32), "w%d" % i))
        nodes.append(helper.make_node("MatMul", [x, "w%d" % i], ["m%d" % i]))
        nodes.append(helper.make_node("Tanh", ["m%d" % i], ["y%d" % i]))
        x = "y%d" % i
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, k])],
                          [helper.make_tensor_value_info(x, TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_same_results_at_any_thread_count():
    m = matmul_chain()
    x = np.random.RandomState(1).randn(64, 256).astype(np.float32)
    ref = Session(m, threads=1).run({"x": x})[0]
    for t in (2, 3):
        np.testing.assert_array_equal(Session(m, threads=t).run({"x": x})[0], ref)


def test_workers_sleep_after_a_run():
    s = Session(matmul_chain(), threads=2)
    x = np.random.RandomState(1).randn(64, 256).astype(np.float32)
    s.run_repeat({"x": x}, 20)
    # were the workers still spinning, they would use ~0.2 s of CPU in 0.2 s
    c0, t0 = time.process_time(), time.perf_counter()
    time.sleep(0.2)
    used = time.process_time() - c0
    elapsed = time.perf_counter() - t0
    assert used < 0.25 * elapsed, "the process used %.3f s of CPU while idle for %.3f s" % (used, elapsed)
