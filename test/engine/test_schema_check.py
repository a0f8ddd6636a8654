"""Nodes' attributes and their numbers of inputs and outputs against the
ONNX operator schemas at load
(src/model/schema_check.c, table generated from the onnx package).

onnxruntime refuses a node with an attribute its operator does not define,
one of another kind, or without a required one, or with more or fewer inputs
or outputs than the operator takes; the engine used to run such a node with
its defaults (a misspelt LeakyRelu "alhpa" ran with alpha 0.01),
a wrong answer without a word.  Each case here is also given to
onnxruntime, which must agree that it loads or not; the engine is more
lenient in one way only, on purpose: an integer where a float belongs and
the reverse (its attribute getters convert them).
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from oxengine import EngineError, Session

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
F = TensorProto.FLOAT


def model(nodes, opset=17, inputs=None, outputs=None, ml=None):
    inputs = inputs or [helper.make_tensor_value_info("x", F, [2, 3])]
    outputs = outputs or [helper.make_tensor_value_info("y", F, None)]
    imports = [helper.make_opsetid("", opset)] + ([helper.make_opsetid("ai.onnx.ml", ml)] if ml else [])
    return helper.make_model(helper.make_graph(nodes, "g", inputs, outputs), opset_imports=imports)


def ort_loads(m):
    try:
        ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        return True
    except Exception:
        return False


def with_initializer(m, array, name):
    m.graph.initializer.append(numpy_helper.from_array(array, name))
    return m


X = np.array([[-1.0, 2.0, -3.0], [4.0, -5.0, 6.0]], np.float32)

REFUSED = [
    ("misspelt attribute", model([helper.make_node("LeakyRelu", ["x"], ["y"], alhpa=0.5)]),
     'has attribute "alhpa", which LeakyRelu-16 does not define (it has attributes alpha)'),
    ("string for a float", model([helper.make_node("LeakyRelu", ["x"], ["y"], alpha="0.5")]),
     'attribute "alpha" of node "n0" (LeakyRelu) is a string, but LeakyRelu-16 takes a float'),
    ("ints for a string", model([helper.make_node("Pad", ["x", "p"], ["y"], mode=[1, 2])],
                                inputs=[helper.make_tensor_value_info("x", F, [2, 3]),
                                        helper.make_tensor_value_info("p", TensorProto.INT64, [4])]),
     'attribute "mode" of node "n0" (Pad) is a list of integers, but Pad-13 takes a string'),
    ("required attribute missing", model([helper.make_node("Cast", ["x"], ["y"])]),
     'node "n0" (Cast) lacks attribute "to", which Cast-13 requires'),
    # Split's sizes moved from an attribute to an input in opset 13
    ("attribute of an older version", model([helper.make_node("Split", ["x"], ["y"], axis=1, split=[1, 2])],
                                             opset=13),
     'has attribute "split", which Split-13 does not define (it has attributes axis)'),
    ("attribute of an older version (2)", model(
        [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], spatial=1)], opset=15,
        inputs=[helper.make_tensor_value_info(n, F, [2, 3] if n == "x" else [3]) for n in "xsbmv"]),
     'has attribute "spatial", which BatchNormalization-15 does not define'),
    ("inside a subgraph", model([helper.make_node(
        "If", ["c"], ["y"],
        then_branch=helper.make_graph([helper.make_node("Relu", ["x"], ["t"], name="inner", slope=1.0)], "then", [],
                                      [helper.make_tensor_value_info("t", F, None)]),
        else_branch=helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                                      [helper.make_tensor_value_info("e", F, None)]))],
        inputs=[helper.make_tensor_value_info("c", TensorProto.BOOL, []), helper.make_tensor_value_info("x", F, [2, 3])]),
     'node "inner" (Relu) has attribute "slope", which Relu-14 does not define (it has no attributes)'),
    ("an input too many", model([helper.make_node("Relu", ["x", "x"], ["y"])]),
     'node "n0" (Relu) has 2 inputs, but Relu-14 takes 1'),
    ("an input too few", model([helper.make_node("Add", ["x"], ["y"])]),
     'node "n0" (Add) has 1 input, but Add-14 takes 2'),
    ("an output too many", model([helper.make_node("Relu", ["x"], ["y", "z"])],
                                 outputs=[helper.make_tensor_value_info(o, F, None) for o in "yz"]),
     'node "n0" (Relu) has 2 outputs, but Relu-14 takes 1'),
    ("a variadic operator without inputs", model([helper.make_node("Concat", [], ["y"], axis=0)]),
     'node "n0" (Concat) has 0 inputs, but Concat-13 takes at least 1'),
    ("optional inputs past the last", model([helper.make_node("Gemm", ["x", "x", "", ""], ["y"], transB=1)]),
     'node "n0" (Gemm) has 4 inputs, but Gemm-13 takes 2 to 3'),
    ("element types of one variable differ",
     with_initializer(model([helper.make_node("Add", ["x", "k"], ["y"])]), np.array([1], np.int64), "k"),
     'node "n0" (Add): input B ("k") is int64 but input A ("x") is float, and Add-14 takes one element type '
     'for both (T)'),
    ("ai.onnx.ml", model([helper.make_node("Normalizer", ["x"], ["y"], domain="ai.onnx.ml", norm="MAX", axis=1)],
                         ml=3),
     'has attribute "axis", which ai.onnx.ml.Normalizer-1 does not define (it has attributes norm)'),
]


def named(m):
    for i, n in enumerate(m.graph.node):
        if not n.name:
            n.name = "n%d" % i
    return m


@pytest.mark.parametrize("case,m,message", REFUSED, ids=[c[0] for c in REFUSED])
def test_refused_at_load(case, m, message):
    m = named(m)
    assert not ort_loads(m), "onnxruntime loads it: the engine should too"
    with pytest.raises(EngineError) as e:
        Session(m.SerializeToString())
    assert message in str(e.value)


def test_integer_for_a_float_is_taken():
    # alpha=2 (an integer) is alpha 2.0, as before; onnxruntime refuses it
    m = named(model([helper.make_node("LeakyRelu", ["x"], ["y"], alpha=2)]))
    y = Session(m.SerializeToString()).run({"x": X})[0]
    np.testing.assert_array_equal(y, np.where(X > 0, X, 2 * X))


def test_what_onnxruntime_takes_loads():
    cases = [
        # names starting with "__" are onnx's internal symbols
        model([helper.make_node("Relu", ["x"], ["y"], __debug_tag=3)]),
        # opset 6 selects LeakyRelu-6, which has alpha too
        model([helper.make_node("LeakyRelu", ["x"], ["y"], alpha=0.5)], opset=6),
        # BatchNormalization-7's spatial, gone from version 9 on
        model([helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], spatial=1)], opset=7,
              inputs=[helper.make_tensor_value_info(n, F, [2, 3] if n == "x" else [3]) for n in "xsbmv"]),
    ]
    rng = np.random.default_rng(0)
    for m in cases:
        m = named(m)
        assert ort_loads(m)
        feeds = {i.name: X if i.name == "x" else rng.uniform(0.5, 2, 3).astype(np.float32) for i in m.graph.input}
        y = Session(m.SerializeToString()).run(feeds)[0]
        ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        np.testing.assert_allclose(y, ref, rtol=1e-6, atol=1e-6)


def test_untyped_attribute_of_ir_version_1_is_not_type_checked():
    # IR version 1 files may omit an attribute's type: the loader infers it
    # from the field set, and an empty list is indistinguishable from a
    # float 0 there, so such attributes are not type-checked
    m = named(model([helper.make_node("Transpose", ["x"], ["y"], perm=[1, 0])]))
    m.graph.node[0].attribute[0].ClearField("type")
    y = Session(m.SerializeToString()).run({"x": X})[0]
    np.testing.assert_array_equal(y, X.T)
    m.graph.node[0].attribute[0].name = "prem"
    with pytest.raises(EngineError, match='has attribute "prem"'):
        Session(m.SerializeToString())


def test_generated_table_matches_the_pinned_onnx():
    with open(os.path.join(ROOT, "scripts", "lib.sh")) as f:
        pinned = [line.split("=", 1)[1].strip() for line in f if line.startswith("OX_ONNX_VERSION=")][0]
    if onnx.__version__ != pinned:
        pytest.skip("onnx %s installed, the table is generated from %s" % (onnx.__version__, pinned))
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_onnx_schemas.py"), "--check"], check=True)


def test_output_a_kernel_leaves_unset_fails_the_run():
    # com.microsoft has no schemas in the onnx package: a Gelu with an output
    # too many loads, and its run used to hand back a tensor of no element
    # type for "z"
    m = model([helper.make_node("Gelu", ["x"], ["y", "z"], name="g", domain="com.microsoft")],
              outputs=[helper.make_tensor_value_info(o, F, None) for o in "yz"])
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    s = Session(m.SerializeToString())
    with pytest.raises(EngineError, match='node "g" \\(com.microsoft.Gelu\\) did not produce its output "z"'):
        s.run({"x": X})


def test_types_of_intermediate_values_are_not_trusted_for_a_refusal():
    # value_info says the Neg's output is int64; that is the exporter's word,
    # not the engine's: the model loads, and the Add runs on float and float
    m = named(model([helper.make_node("Neg", ["x"], ["t"]), helper.make_node("Add", ["t", "x"], ["y"])]))
    m.graph.value_info.append(helper.make_tensor_value_info("t", TensorProto.INT64, [2, 3]))
    y = Session(m.SerializeToString()).run({"x": X})[0]
    np.testing.assert_array_equal(y, np.zeros_like(X))


BUILT = [
    ("Transpose perm repeats", model([helper.make_node("Transpose", ["x"], ["y"], perm=[0, 0])]),
     "Transpose: perm is not a permutation of 0..1 (entry 1 is 0)"),
    ("DepthToSpace blocksize 0", model([helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=0)],
                                       inputs=[helper.make_tensor_value_info("x", F, [1, 4, 2, 2])]),
     "DepthToSpace: blocksize must be positive, got 0"),
    ("SpaceToDepth blocksize -1", model([helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=-1)],
                                        inputs=[helper.make_tensor_value_info("x", F, [1, 4, 2, 2])]),
     "SpaceToDepth: blocksize must be positive, got -1"),
    ("DepthToSpace mode", model([helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2, mode="XYZ")],
                                inputs=[helper.make_tensor_value_info("x", F, [1, 4, 2, 2])]),
     'DepthToSpace: unknown mode "XYZ"'),
    ("Pad mode", with_initializer(model([helper.make_node("Pad", ["x", "p"], ["y"], mode="weird")]),
                                  np.zeros(4, np.int64), "p"),
     'Pad: unsupported mode "weird"'),
]


@pytest.mark.parametrize("case,m,message", BUILT, ids=[c[0] for c in BUILT])
def test_attribute_values_wrong_whatever_the_input_fail_the_build(case, m, message):
    # the kernels' prepare functions check them (tensor.c), so the load
    # fails rather than every run; onnxruntime refuses them when it builds
    # its session too
    m = named(m)
    assert not ort_loads(m)
    with pytest.raises(EngineError) as e:
        Session(m.SerializeToString())
    assert message in str(e.value)


@pytest.mark.parametrize("count", [3, 40, 5000])
def test_an_attribute_twice_is_refused_however_many_the_node_has(count):
    # pairwise for a few, through a hash above 32 (loader.c): a hostile file
    # gave one node 50,000 attributes, and the pairwise check took seconds
    node = helper.make_node("Gelu", ["x"], ["y"], name="g", domain="com.microsoft")
    for i in range(count):
        node.attribute.append(helper.make_attribute("a%d" % i, i))
    m = model([node])
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    Session(m.SerializeToString())  # distinct names: loads (another domain: not schema-checked)
    m.graph.node[0].attribute.append(helper.make_attribute("a%d" % (count // 2), 1))
    with pytest.raises(EngineError, match='node "g" has attribute "a%d" twice' % (count // 2)):
        Session(m.SerializeToString())
