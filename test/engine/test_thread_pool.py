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


def test_short_runs_stay_on_one_thread():
    # runs too short to pay for waking a sleeping worker run on the calling
    # thread, per input shape; long ones keep every thread.  Which runs are
    # short depends on this machine's speed and load (under ASan on a busy
    # machine none may be), so the choice itself is checked over given run
    # times in test/unit/test_session_shapes.c; here, that the results do not
    # change with it, that a shape's first run has every thread, and that
    # runs of milliseconds are never moved to one
    m = matmul_chain(n=2, k=16)
    small = np.random.RandomState(2).randn(1, 16).astype(np.float32)
    s, ref = Session(m, threads=2), Session(m, threads=1)
    for _ in range(5):
        np.testing.assert_array_equal(s.run({"x": small})[0], ref.run({"x": small})[0])
    assert 0 <= s.stat("single_thread_runs") <= 4
    assert ref.stat("single_thread_runs") == 0
    big = Session(matmul_chain(), threads=2)
    x = np.random.RandomState(1).randn(512, 256).astype(np.float32)
    want = Session(matmul_chain(), threads=1).run({"x": x})[0]
    for _ in range(3):
        np.testing.assert_array_equal(big.run({"x": x})[0], want)
    assert big.stat("single_thread_runs") == 0
    # a new shape starts on every thread again
    n = s.stat("single_thread_runs")
    np.testing.assert_array_equal(s.run({"x": x[:, :16]})[0], ref.run({"x": x[:, :16]})[0])
    assert s.stat("single_thread_runs") == n
