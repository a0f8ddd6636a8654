"""Every hostile model we keep, through every SQL function that takes a model.

The fuzzers (fuzz/) drive the engine alone; the PostgreSQL layer turns its
results into rows, arrays and JSON, and can go wrong on its own: a fuzzed
model whose output was an empty tensor of shape [4294967296, 89, 0] passed
the engine and then took a backend to 9 GB on its way to the out-of-memory
killer while onnx_run built 382 billion empty JSON arrays.  So each model of
test/models/bad/, fuzz/regressions/load*/ and fuzz/run_models/ is inspected
from its bytes, loaded, and, where it loads, inspected by name, run through
onnx_run with zeros of its declared input shapes, onnx_predict,
onnx_predict_batch and onnx_profile, optimized and quantized.  Any of them
may fail, but only with an ERROR of a proper class: never a lost connection,
an internal error (XX) or a statement that runs into the timeout, and the
server must not restart.  The long fuzzing runs' corpora go through the same
steps with `python3 -m pytest test/e2e/test_hostile_models.py` and
ONNX_PG_HOSTILE_DIRS=fuzz/build/corpus/load.
"""
import glob
import json
import os

import psycopg
import pytest

from conftest import connect

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIRS = ["test/models/bad", "fuzz/regressions/load", "fuzz/regressions/load-memory", "fuzz/run_models"]
DIRS += [d for d in os.environ.get("ONNX_PG_HOSTILE_DIRS", "").split(":") if d]
FILES = sorted(f for d in DIRS for f in glob.glob(os.path.join(ROOT, d, "*")) if os.path.isfile(f)
               and not f.endswith(".md"))
# statements of a well-behaved model take milliseconds; this only catches the ones that never end
TIMEOUT = "30s"


def zeros(shape, elem):
    """nested zeros of a declared shape, symbolic or huge dimensions as 1"""
    value = False if elem == "bool" else ("" if elem == "string" else 0)
    dims = []
    for d in shape or []:
        try:
            dims.append(max(0, min(int(d), 64)))
        except (TypeError, ValueError):
            dims.append(1)
    total = 1
    for d in dims:
        total *= d
    if total > 100000:
        dims = [1] * len(dims)

    def build(ds):
        return value if not ds else [build(ds[1:]) for _ in range(ds[0])]
    return build(dims)


def features(shape):
    """one sample's floats for onnx_predict: the declared shape past its batch dimension"""
    n = 1
    for d in (shape or [])[1:]:
        try:
            n *= max(1, min(int(d), 64))
        except (TypeError, ValueError):
            pass
    return [0.5] * min(n, 100000)


def statements(conn, data):
    """(what, sql, args) for one model's bytes: what follows a load depends on what it declares"""
    yield "info of bytes", "SELECT * FROM onnx_model_info(%s::bytea)", (data,)
    yield "inputs of bytes", "SELECT * FROM onnx_model_inputs(%s::bytea)", (data,)
    yield "outputs of bytes", "SELECT * FROM onnx_model_outputs(%s::bytea)", (data,)
    yield "nodes of bytes", "SELECT * FROM onnx_model_nodes(%s::bytea)", (data,)
    yield "load", "SELECT onnx_load_model('hostile', %s::bytea, replace => true)", (data,)
    if not conn.execute("SELECT count(*) FROM onnx_models WHERE name = 'hostile'").fetchone()[0]:
        return
    yield "info", "SELECT * FROM onnx_model_info('hostile')", ()
    yield "nodes", "SELECT * FROM onnx_model_nodes('hostile')", ()
    yield "dot", "SELECT onnx_model_dot('hostile', true)", ()
    yield "placement", "SELECT * FROM onnx_model_placement('hostile')", ()
    inputs = conn.execute("SELECT name, kind, elem_type, shape FROM onnx_model_inputs('hostile')").fetchall()
    feeds = json.dumps({n: zeros(s, e) for n, k, e, s in inputs if k == "tensor"})
    yield "run", "SELECT onnx_run('hostile', %s::jsonb)", (feeds,)
    yield "profile", "SELECT * FROM onnx_profile('hostile', %s::jsonb)", (feeds,)
    if inputs:
        x = features(inputs[0][3])
        yield "predict", "SELECT onnx_predict('hostile', %s::real[])", (x,)
        yield "predict_batch", "SELECT onnx_predict_batch('hostile', %s::real[])", ([x, x],)
    yield "optimize", "SELECT onnx_optimize('hostile', 'hostile_opt', replace => true)", ()
    yield "quantize", "SELECT * FROM onnx_quantize_dynamic('hostile', 'hostile_q', replace => true)", ()


@pytest.fixture(scope="module")
def server_start(conn):
    start = conn.execute("SELECT pg_postmaster_start_time()").fetchone()[0]
    yield start
    assert conn.execute("SELECT pg_postmaster_start_time()").fetchone()[0] == start, \
        "the server restarted while hostile models went through it"


@pytest.mark.parametrize("path", FILES, ids=lambda p: os.path.relpath(p, ROOT))
def test_hostile_model(path, server_start):
    with open(path, "rb") as f:
        data = f.read()
    conn = connect()
    try:
        conn.execute("SET statement_timeout = '%s'" % TIMEOUT)
        conn.execute("SELECT onnx_drop_model('hostile', if_exists => true)")
        for what, sql, args in statements(conn, data):
            try:
                conn.execute(sql, args).fetchall()
            except psycopg.Error as e:
                assert not conn.broken, "%s: the connection was lost: %s" % (what, e)
                state = e.sqlstate or ""
                assert state != "57014", "%s: ran into the %s timeout" % (what, TIMEOUT)
                assert not state.startswith("XX") and not state.startswith("58"), \
                    "%s: %s %s" % (what, state, e)
    finally:
        if not conn.broken:
            conn.execute("SELECT count(onnx_drop_model(m, if_exists => true)) "
                         "FROM unnest(ARRAY['hostile', 'hostile_opt', 'hostile_q']) m")
        conn.close()
