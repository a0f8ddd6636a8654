#!/usr/bin/env python3
"""Hostile and broken ONNX files for the bad-input suite (sql/onnx_badinput.sql).

    python3 test/models/make_bad_models.py     # writes test/models/bad/*.onnx

Each file breaks one rule, made with onnx.helper where the protobuf can say
it and by byte surgery where it cannot (truncation, bad varints, wrong wire
types, absurd lengths, deep nesting, other file formats).  The ok_*.onnx
files are valid models with inputs that the suite feeds bad values.  Only
the onnx package and numpy are needed; the output is deterministic.
bad/README.md lists the files and what each one breaks.
"""
import gzip
import os
import struct

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "bad")
F, I64, I32, B, S, D = T.FLOAT, T.INT64, T.INT32, T.BOOL, T.STRING, T.DOUBLE
CASES = []


def vi(name, dt, shape):
    return h.make_tensor_value_info(name, dt, shape)


def model(nodes, inputs, outputs, inits=(), opset=17, ir=8, extra_opsets=(), **kw):
    g = h.make_graph(nodes, "g", inputs, outputs, initializer=list(inits), **kw)
    ops = [h.make_opsetid("", opset)] + [h.make_opsetid(d, v) for d, v in extra_opsets]
    m = h.make_model(g, opset_imports=ops, producer_name="onnx_pg bad models")
    m.ir_version = ir
    return m


def base():
    """Y = Relu(X + W), X float [N, 4]: the valid model most cases break."""
    w = nh.from_array(np.array([0.5, -1.0, 2.0, 0.0], dtype=np.float32), "W")
    return model([h.make_node("Add", ["X", "W"], ["S"], name="add"),
                  h.make_node("Relu", ["S"], ["Y"], name="relu")],
                 [vi("X", F, ["N", 4])], [vi("Y", F, ["N", 4])], [w])


def emit(name, what, data):
    if isinstance(data, onnx.ModelProto):
        data = data.SerializeToString()
    CASES.append((name, what))
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(data)


# ---- raw protobuf ----------------------------------------------------------

def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wire):
    return varint(field << 3 | wire)


def ld(field, payload):
    return key(field, 2) + varint(len(payload)) + payload


# ModelProto fields: ir_version 1, opset_import 8, producer_name 2, graph 7, doc_string 6
# GraphProto: node 1, name 2, initializer 5, input 11, output 12
# NodeProto: input 1, output 2, name 3, op_type 4, attribute 5, domain 7
# AttributeProto: name 1, g 6, type 20


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith(".onnx"):
            os.remove(os.path.join(OUT, f))
    good = base().SerializeToString()

    # ---- malformed protobuf ----
    rng = np.random.default_rng(20260101)
    emit("proto_random", "256 random bytes", rng.integers(0, 256, 256, dtype=np.uint8).tobytes())
    emit("proto_truncated_half", "a valid model cut in half", good[: len(good) // 2])
    emit("proto_truncated_last_byte", "a valid model without its last byte", good[:-1])
    emit("proto_bad_varint", "ir_version as an 11-byte varint", key(1, 0) + b"\xff" * 10 + b"\x01")
    emit("proto_length_overflow", "graph field declaring 2^62 bytes", key(1, 0) + varint(8) + key(7, 2) + varint(1 << 62) + b"\x00" * 8)
    emit("proto_length_past_end", "graph field longer than the file", key(1, 0) + varint(8) + key(7, 2) + varint(1000) + good[:50])
    emit("proto_wrong_wire_type", "graph sent as a varint", key(1, 0) + varint(8) + key(7, 0) + varint(5))
    emit("proto_group_wire_type", "deprecated group wire type (start group without end)", key(1, 0) + varint(8) + key(7, 3) + b"\x00")
    emit("proto_field_zero", "field number 0", key(0, 0) + varint(1) + good)
    # graph -> node -> attribute(g) -> graph -> ... 200 levels
    inner = b""
    for _ in range(200):
        attr = ld(1, b"body") + ld(6, inner) + key(20, 0) + varint(5)
        node = ld(4, b"If") + ld(5, attr)
        inner = ld(1, node)
    emit("proto_deep_nesting", "messages nested 600 levels deep", key(1, 0) + varint(8) + ld(7, inner))

    # ---- other file formats (wrong magic) ----
    emit("magic_zip", "a zip archive (PyTorch .pt)", b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + good[:64])
    emit("magic_gzip", "a gzip-compressed ONNX file", gzip.compress(good, mtime=0))
    emit("magic_ort", "an ONNX Runtime .ort flatbuffer header", b"\x14\x00\x00\x00ORTM" + b"\x00" * 40)
    emit("magic_pickle", "a Python pickle", b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00}\x94.")
    emit("magic_text", "the ONNX text format", onnx.printer.to_text(base()).encode())
    emit("magic_tflite", "a TensorFlow Lite flatbuffer header", b"\x1c\x00\x00\x00TFL3" + b"\x00" * 40)

    # ---- model level ----
    m = base(); m.ClearField("graph"); emit("model_no_graph", "no graph", m)
    m = base(); m.ClearField("ir_version"); emit("model_no_ir_version", "no IR version", m)
    m = base(); m.ir_version = 99; emit("model_ir_version_99", "IR version 99", m)
    m = base(); m.ir_version = -1; emit("model_ir_version_negative", "IR version -1", m)
    m = base(); del m.opset_import[:]; emit("model_no_opset", "no opset import (IR 8)", m)
    m = base(); m.opset_import[0].version = 0; emit("model_opset_zero", "ai.onnx opset 0", m)
    m = base(); m.opset_import[0].version = 1 << 40; emit("model_opset_huge", "ai.onnx opset 2^40", m)
    m = base(); m.opset_import.append(h.make_opsetid("", 13)); emit("model_opset_twice", "ai.onnx imported twice", m)
    m = base(); m.graph.node[1].domain = "com.example.evil"
    emit("model_domain_not_imported", "a node in a domain the model does not import", m)
    m = model([h.make_node("Steal", ["X"], ["Y"], domain="com.example.evil")], [vi("X", F, ["N", 4])],
              [vi("Y", F, None)], extra_opsets=[("com.example.evil", 1)])
    emit("model_unknown_domain", "an imported but unknown domain", m)
    m = model([h.make_node("Frobnicate", ["X"], ["Y"])], [vi("X", F, ["N", 4])], [vi("Y", F, None)])
    emit("model_unknown_op", "an unknown ai.onnx operator", m)
    m = base()
    fn = h.make_function("local", "MyRelu", ["x"], ["y"], [h.make_node("Relu", ["x"], ["y"])],
                         [h.make_opsetid("", 17)])
    m.functions.append(fn); m.opset_import.append(h.make_opsetid("local", 1))
    emit("model_local_function", "a model-local function", m)

    # ---- graph structure ----
    m = model([h.make_node("Relu", ["B"], ["A"], name="r1"), h.make_node("Relu", ["A"], ["B"], name="r2"),
               h.make_node("Add", ["X", "B"], ["Y"], name="add")], [vi("X", F, ["N", 4])], [vi("Y", F, None)])
    emit("graph_cycle", "two nodes feeding each other", m)
    m = model([h.make_node("Add", ["X", "Y"], ["Y"], name="self")], [vi("X", F, ["N", 4])], [vi("Y", F, None)])
    emit("graph_self_loop", "a node reading its own output", m)
    m = base(); m.graph.node.append(h.make_node("Relu", ["X"], ["Y"], name="dup"))
    emit("graph_duplicate_output", "two nodes producing Y", m)
    m = base(); m.graph.input.append(vi("X", F, ["N", 4])); emit("graph_duplicate_input", "input X listed twice", m)
    m = base(); m.graph.initializer.append(nh.from_array(np.zeros(4, np.float32), "W"))
    emit("graph_duplicate_initializer", "initializer W twice", m)
    m = base(); m.graph.node[0].output[0] = "X"; m.graph.node[1].input[0] = "X"
    emit("graph_node_redefines_input", "a node output named like a graph input", m)
    m = base(); del m.graph.initializer[:]; emit("graph_missing_initializer", "W used, never defined", m)
    m = base(); m.graph.node[1].input[0] = "nowhere"; emit("graph_missing_input", "a node input nothing produces", m)
    m = base(); m.graph.output[0].name = "Z"; emit("graph_output_not_produced", "graph output Z never produced", m)
    m = base(); del m.graph.output[:]; emit("graph_no_outputs", "a graph without outputs", m)
    m = base(); m.graph.node[1].op_type = ""; emit("graph_node_no_op", "a node without an operator", m)
    m = base(); m.graph.input[0].name = ""; emit("graph_input_no_name", "a graph input without a name", m)
    m = base(); m.graph.initializer[0].name = ""; emit("graph_initializer_no_name", "an initializer without a name", m)
    m = base(); m.graph.node[0].attribute.extend([h.make_attribute("x", 1), h.make_attribute("x", 2)])
    emit("graph_duplicate_attribute", "an attribute given twice", m)
    m = base(); a = m.graph.node[1].attribute.add(); a.name = "alpha"; a.ref_attr_name = "a"; a.type = 1
    emit("graph_ref_attr_outside_function", "an attribute referring to a function attribute", m)
    m = base(); a = m.graph.node[1].attribute.add(); a.name = "weird"; a.type = 1
    raw = m.SerializeToString()
    assert raw.count(b"\x0a\x05weird\xa0\x01\x01") == 1
    # protobuf-python refuses unknown enum values: patch the type byte
    emit("graph_attribute_type_99", "an attribute of type 99",
         raw.replace(b"\x0a\x05weird\xa0\x01\x01", b"\x0a\x05weird\xa0\x01\x63"))

    # ---- tensors ----
    def with_w(tp):
        m = base(); del m.graph.initializer[:]; m.graph.initializer.append(tp); return m

    t = T(); t.name = "W"; t.data_type = F; t.dims.extend([4]); t.raw_data = b"\x00" * 8
    emit("tensor_raw_data_short", "float W[4] with 8 bytes of raw_data", with_w(t))
    t = T(); t.name = "W"; t.data_type = F; t.dims.extend([4]); t.raw_data = b"\x00" * 20
    emit("tensor_raw_data_long", "float W[4] with 20 bytes of raw_data", with_w(t))
    t = T(); t.name = "W"; t.data_type = F; t.dims.extend([4]); t.float_data.extend([1.0, 2.0])
    emit("tensor_float_data_short", "float W[4] with 2 float_data values", with_w(t))
    t = T(); t.name = "W"; t.data_type = I64; t.dims.extend([2]); t.raw_data = b"\x01" * 13
    emit("tensor_int64_odd_bytes", "int64 W[2] with 13 bytes", with_w(t))
    t = T(); t.name = "W"; t.data_type = 0; t.dims.extend([4]); t.raw_data = b"\x00" * 16
    emit("tensor_dtype_undefined", "initializer of element type 0", with_w(t))
    t = T(); t.name = "W"; t.data_type = 99; t.dims.extend([4]); t.raw_data = b"\x00" * 16
    emit("tensor_dtype_99", "initializer of element type 99", with_w(t))
    t = T(); t.name = "W"; t.data_type = F; t.dims.extend([-4]); t.raw_data = b""
    emit("tensor_negative_dim", "initializer with dimension -4", with_w(t))
    t = T(); t.name = "W"; t.data_type = F; t.dims.extend([1 << 40, 1 << 40])
    emit("tensor_huge_dims", "initializer [2^40, 2^40] with no data", with_w(t))
    t = T(); t.name = "W"; t.data_type = F; t.dims.extend([1 << 32, 1 << 32, 1 << 32, 4])
    emit("tensor_numel_overflow", "initializer whose element count overflows 64 bits", with_w(t))
    t = T(); t.name = "W"; t.data_type = F; t.dims.extend([(1 << 62) + 1, 4]); t.raw_data = b"\x00" * 16
    emit("tensor_bytes_overflow", "initializer whose byte count overflows 64 bits", with_w(t))
    t = T(); t.name = "W"; t.data_type = F; t.dims.extend([1] * 17 + [4]); t.raw_data = b"\x00" * 16
    emit("tensor_rank_18", "initializer of rank 18", with_w(t))
    for name, loc in (("tensor_external_absolute", "/etc/passwd"),
                      ("tensor_external_relative", "../../../../../../etc/passwd")):
        t = T(); t.name = "W"; t.data_type = F; t.dims.extend([4])
        t.data_location = T.EXTERNAL
        e = t.external_data.add(); e.key = "location"; e.value = loc
        e = t.external_data.add(); e.key = "length"; e.value = "16"
        emit(name, "external data at %s" % loc, with_w(t))
    t = T(); t.name = "W"; t.data_type = F; t.dims.extend([4]); t.segment.begin = 0; t.segment.end = 2
    t.float_data.extend([1, 2, 3, 4])
    emit("tensor_segmented", "a segmented initializer", with_w(t))
    t = T(); t.name = "W"; t.data_type = S; t.dims.extend([2]); t.raw_data = b"abcd"
    emit("tensor_string_raw_data", "a string initializer in raw_data", with_w(t))
    sp = onnx.SparseTensorProto()
    sp.values.CopyFrom(nh.from_array(np.array([1, 2], np.float32), "W"))
    sp.indices.CopyFrom(nh.from_array(np.array([1, 9], np.int64), "W_idx"))
    sp.dims.extend([4])
    m = base(); del m.graph.initializer[:]; m.graph.sparse_initializer.append(sp)
    emit("tensor_sparse_index_out_of_range", "sparse initializer index 9 of 4", m)
    sp = onnx.SparseTensorProto()
    sp.values.CopyFrom(nh.from_array(np.array([1, 2, 3], np.float32), "W"))
    sp.indices.CopyFrom(nh.from_array(np.array([1, 2], np.int64), "W_idx"))
    sp.dims.extend([4])
    m = base(); del m.graph.initializer[:]; m.graph.sparse_initializer.append(sp)
    emit("tensor_sparse_count_mismatch", "sparse initializer: 3 values, 2 indices", m)

    # ---- declared types ----
    def with_x(shape, dt=F):
        m = base(); m.graph.input[0].CopyFrom(vi("X", dt, shape)); return m

    emit("type_huge_dim", "input X [N, 2^62]", with_x(["N", 1 << 62]))
    emit("type_negative_dim", "input X [N, -4]", with_x(["N", -4]))
    emit("type_rank_20", "input X of rank 20", with_x([1] * 19 + [4]))
    emit("type_elem_99", "input X of element type 99", with_x(["N", 4], 99))
    m = base(); tp = m.graph.input[0].type
    inner = h.make_tensor_type_proto(F, ["N", 4])
    for _ in range(40):
        inner = h.make_sequence_type_proto(inner)
    tp.CopyFrom(inner)
    emit("type_nested_sequences", "input X: a sequence nested 40 deep", m)
    m = base(); m.graph.input[0].type.ClearField("tensor_type"); m.graph.input[0].type.opaque_type.domain = "x"
    emit("type_opaque", "input X of an opaque type", m)

    # ---- subgraphs ----
    def nest_if(depth):
        leaf = h.make_graph([h.make_node("Identity", ["X"], ["o0"])], "leaf", [], [vi("o0", F, None)])
        g = leaf
        for d in range(depth):
            g = h.make_graph([h.make_node("If", ["C"], ["o%d" % (d + 1)], then_branch=g, else_branch=leaf)],
                             "level%d" % d, [], [vi("o%d" % (d + 1), F, None)])
        return model(list(g.node), [vi("C", B, []), vi("X", F, ["N", 4])],
                     [vi("o%d" % depth, F, None)])
    emit("subgraph_nested_30", "If inside If, 30 levels deep", nest_if(30))
    then_g = h.make_graph([h.make_node("Relu", ["ghost"], ["t"])], "then", [], [vi("t", F, None)])
    else_g = h.make_graph([h.make_node("Relu", ["X"], ["e"])], "else", [], [vi("e", F, None)])
    m = model([h.make_node("If", ["C"], ["Y"], then_branch=then_g, else_branch=else_g)],
              [vi("C", B, []), vi("X", F, ["N", 4])], [vi("Y", F, None)])
    emit("subgraph_undefined_outer", "a branch reading a value no scope defines", m)
    then_g = h.make_graph([h.make_node("Relu", ["X"], ["t"])], "then", [], [vi("nothing", F, None)])
    m = model([h.make_node("If", ["C"], ["Y"], then_branch=then_g, else_branch=else_g)],
              [vi("C", B, []), vi("X", F, ["N", 4])], [vi("Y", F, None)])
    emit("subgraph_output_not_produced", "a branch whose output is never produced", m)
    m = model([h.make_node("If", ["C"], ["Y"])], [vi("C", B, []), vi("X", F, ["N", 4])], [vi("Y", F, None)])
    emit("subgraph_missing_branch", "If without branches", m)
    body = h.make_graph([h.make_node("Identity", ["c"], ["c_out"]), h.make_node("Identity", ["c"], ["x_out"])],
                        "body", [vi("c", B, [])], [vi("c_out", B, []), vi("x_out", B, [])])
    m = model([h.make_node("Loop", ["M", "C", "X"], ["Y"], body=body)],
              [vi("M", I64, []), vi("C", B, []), vi("X", B, [])], [vi("Y", B, None)])
    emit("subgraph_loop_body_arity", "a Loop body with too few inputs", m)

    # ---- types and attributes that cannot work ----
    wi = nh.from_array(np.array([1, 2, 3, 4], dtype=np.int64), "W")
    m = model([h.make_node("Add", ["X", "W"], ["Y"], name="add")], [vi("X", F, ["N", 4])], [vi("Y", F, None)], [wi])
    emit("dtype_add_float_int64", "Add of float and int64", m)
    wd = nh.from_array(np.ones((4, 2), dtype=np.float64), "W")
    m = model([h.make_node("MatMul", ["X", "W"], ["Y"], name="mm")], [vi("X", F, ["N", 4])], [vi("Y", F, None)], [wd])
    emit("dtype_matmul_float_double", "MatMul of float and double", m)
    m = model([h.make_node("Cast", ["X"], ["Y"], to=99)], [vi("X", F, ["N", 4])], [vi("Y", F, None)])
    emit("attr_cast_to_99", "Cast to element type 99", m)
    m = model([h.make_node("LeakyRelu", ["X"], ["Y"], alhpa=0.5)], [vi("X", F, ["N", 4])], [vi("Y", F, None)])
    emit("attr_unknown_name", "LeakyRelu with a misspelt attribute (alhpa)", m)
    m = model([h.make_node("LeakyRelu", ["X"], ["Y"], alpha="0.5")], [vi("X", F, ["N", 4])], [vi("Y", F, None)])
    emit("attr_wrong_kind", "LeakyRelu alpha given as a string", m)
    m = model([h.make_node("Transpose", ["X"], ["Y"], perm=[0, 0])], [vi("X", F, ["N", 4])], [vi("Y", F, None)])
    emit("attr_transpose_perm_repeats", "Transpose perm [0, 0]", m)
    m = model([h.make_node("Transpose", ["X"], ["Y"], perm=[5, 1 << 40])], [vi("X", F, ["N", 4])], [vi("Y", F, None)])
    emit("attr_transpose_perm_range", "Transpose perm [5, 2^40]", m)
    m = model([h.make_node("Softmax", ["X"], ["Y"], axis=1 << 40)], [vi("X", F, ["N", 4])], [vi("Y", F, None)])
    emit("attr_softmax_axis_huge", "Softmax axis 2^40", m)
    m = model([h.make_node("Concat", ["X", "X"], ["Y"], axis=-7)], [vi("X", F, ["N", 4])], [vi("Y", F, None)])
    emit("attr_concat_axis_range", "Concat axis -7 of rank 2", m)
    wc = nh.from_array(np.ones((2, 3, 9, 9), dtype=np.float32), "W")
    m = model([h.make_node("Conv", ["X", "W"], ["Y"], name="conv")], [vi("X", F, [1, 1, 4, 4])], [vi("Y", F, None)], [wc])
    emit("attr_conv_channels", "Conv: 1 input channel, weights for 3, kernel larger than the image", m)
    m = model([h.make_node("Conv", ["X", "W"], ["Y"], name="conv", strides=[0, 0])], [vi("X", F, [1, 3, 9, 9])],
              [vi("Y", F, None)], [wc])
    emit("attr_conv_zero_stride", "Conv with stride 0", m)
    m = model([h.make_node("Gemm", ["X", "W"], ["Y"], name="gemm", transA=1, alpha=float("nan"))],
              [vi("X", F, ["N", 4])], [vi("Y", F, None)], [nh.from_array(np.ones((3, 5), np.float32), "W")])
    emit("attr_gemm_shapes", "Gemm [N,4]^T x [3,5]", m)
    # constant inputs that the optimizer folds at session creation
    sh = nh.from_array(np.array([-1, -1], dtype=np.int64), "shape")
    m = model([h.make_node("Reshape", ["X", "shape"], ["Y"])], [vi("X", F, ["N", 4])], [vi("Y", F, None)], [sh])
    emit("const_reshape_two_minus_one", "Reshape to [-1, -1]", m)
    c = nh.from_array(np.arange(4, dtype=np.float32), "C")
    idx = nh.from_array(np.array([7], dtype=np.int64), "I")
    m = model([h.make_node("Gather", ["C", "I"], ["G"]), h.make_node("Add", ["X", "G"], ["Y"])],
              [vi("X", F, ["N", 1])], [vi("Y", F, None)], [c, idx])
    emit("const_gather_out_of_range", "Gather index 7 of a constant with 4 elements", m)
    shp = nh.from_array(np.array([1 << 19, 1 << 19], dtype=np.int64), "shape")
    m = model([h.make_node("ConstantOfShape", ["shape"], ["C"]), h.make_node("Add", ["X", "C"], ["Y"])],
              [vi("X", F, ["N", 1])], [vi("Y", F, None)], [shp])
    emit("const_of_shape_1tb", "ConstantOfShape [2^19, 2^19] (1 TB of floats)", m)
    shp = nh.from_array(np.array([1 << 30, 1 << 30], dtype=np.int64), "shape")
    one = nh.from_array(np.array([1.0], dtype=np.float32), "one")
    m = model([h.make_node("Expand", ["one", "shape"], ["C"]), h.make_node("Add", ["X", "C"], ["Y"])],
              [vi("X", F, ["N", 1])], [vi("Y", F, None)], [shp, one])
    emit("const_expand_2p60", "Expand to [2^30, 2^30]", m)

    # ---- valid models whose inputs the suite gets wrong ----
    emit("ok_base", "valid: Y = Relu(X + W), X float [N, 4]", base())
    m = model([h.make_node("Reshape", ["X", "S"], ["Y"])], [vi("X", F, ["N"]), vi("S", I64, [2])], [vi("Y", F, None)])
    emit("ok_reshape", "valid: Reshape(X float [N], S int64 [2])", m)
    m = model([h.make_node("Gather", ["X", "I"], ["Y"], axis=0)], [vi("X", F, ["N"]), vi("I", I64, ["K"])],
              [vi("Y", F, None)])
    emit("ok_gather", "valid: Gather(X float [N], I int64 [K])", m)
    m = model([h.make_node("ConstantOfShape", ["S"], ["Y"])], [vi("S", I64, ["R"])], [vi("Y", F, None)])
    emit("ok_constant_of_shape", "valid: ConstantOfShape(S int64 [R])", m)
    m = model([h.make_node("ConstantOfShape", ["S"], ["Y"]),
               h.make_node("SequenceConstruct", ["Y", "Y", "Y", "Y"], ["Q"]),
               h.make_node("SequenceLength", ["Q"], ["N"])],
              [vi("S", I64, ["R"])], [vi("N", I64, [])])
    emit("ok_sequence_copies", "valid: a sequence of four copies of ConstantOfShape(S int64 [R]), its length", m)
    # double: the portable path, which unrolls the whole image (im2col) as a workspace
    m = model([h.make_node("Conv", ["X", "W"], ["Y"])], [vi("X", D, [1, 1, "H", "W_"]), vi("W", D, [1, 1, "K", "K"])],
              [vi("Y", D, None)])
    emit("ok_conv_double", "valid: Conv(X double [1, 1, H, W], W double [1, 1, K, K]), weights as an input", m)
    m = model([h.make_node("Div", ["A", "B"], ["Y"])], [vi("A", I64, ["N"]), vi("B", I64, ["N"])], [vi("Y", I64, None)])
    emit("ok_div_int64", "valid: Div of int64 A [N] and B [N]", m)
    m = model([h.make_node("Cast", ["X"], ["Y"], to=I32)], [vi("X", F, ["N"])], [vi("Y", I32, None)])
    emit("ok_cast_int32", "valid: Cast(X float [N]) to int32", m)
    m = model([h.make_node("Identity", ["X"], ["Y"])], [vi("X", S, ["N"])], [vi("Y", S, None)])
    emit("ok_string", "valid: Identity of a string tensor X [N]", m)
    m = model([h.make_node("Add", ["A", "B"], ["Y"])], [vi("A", F, [2, 3]), vi("B", F, [2, 3])], [vi("Y", F, None)])
    emit("ok_two_inputs", "valid: Add of A float [2, 3] and B float [2, 3]", m)
    t = T(); t.name = "W"; t.data_type = F; t.dims.extend([1 << 32, 89, 0])
    m = model([h.make_node("Identity", ["W"], ["Y"])], [vi("X", F, ["N", 4])], [vi("Y", F, None)], [t])
    emit("ok_empty_huge_output", "valid: output Y an empty initializer of shape [2^32, 89, 0] (no elements, "
         "but as JSON 382 billion nested arrays)", m)
    m = model([h.make_node("Constant", [], ["Y"], value_floats=[float(i % 7) for i in range(20000)])],
              [vi("X", F, ["N", 4])], [vi("Y", F, None)])
    emit("ok_long_attribute", "valid: a Constant of 20,000 value_floats (about 1.4 MB as JSON)", m)

    with open(os.path.join(OUT, "README.md"), "w") as f:
        f.write("# Hostile and broken ONNX files\n\n"
                "Made by `test/models/make_bad_models.py` for `sql/onnx_badinput.sql`; do not edit by hand.\n"
                "Every file but the `ok_*` ones must be refused with an ERROR (never a crash).\n\n"
                "| File | What it is |\n|---|---|\n")
        for name, what in CASES:
            f.write("| `%s.onnx` | %s |\n" % (name, what))
    print("wrote %d files to %s" % (len(CASES), OUT))


if __name__ == "__main__":
    main()
