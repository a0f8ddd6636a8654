#!/usr/bin/env python3
"""Seed models for fuzz/fuzz_run.c: small graphs whose work and output
shapes depend on their inputs (shapes, indices, axes, counts, trip counts),
so that fuzzed inputs reach the engine's run-time checks.

    python3 fuzz/make_run_models.py      # writes fuzz/run_models/*.onnx

Needs only the onnx package.  Models are tiny and committed.  fuzz/models.txt
lists the seed models in a fixed order (a fuzz input's first byte picks one
by its line): new models are appended to it, never inserted or removed, so
that saved inputs (fuzz/regressions/run) keep their meaning.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run_models")
F, I64, I32, B, S, U8, U64 = T.FLOAT, T.INT64, T.INT32, T.BOOL, T.STRING, T.UINT8, T.UINT64


def vi(name, dt, shape):
    return h.make_tensor_value_info(name, dt, shape)


def save(name, nodes, inputs, outputs, inits=(), opset=17, ml=False, ms=False):
    g = h.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    ops = [h.make_opsetid("", opset)]
    if ml:
        ops.append(h.make_opsetid("ai.onnx.ml", 3))
    if ms:
        ops.append(h.make_opsetid("com.microsoft", 1))
    m = h.make_model(g, opset_imports=ops, producer_name="onnx_pg fuzz seeds")
    m.ir_version = 8
    try:
        onnx.checker.check_model(m)
    except onnx.checker.ValidationError as e:
        if "shape" not in str(e):
            raise
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())



def unary(name, op, dt_in=F, dt_out=F, rank=2, opset=17, **attrs):
    shape = ["d%d" % i for i in range(rank)]
    save(name, [h.make_node(op, ["X"], ["Y"], **attrs)], [vi("X", dt_in, shape)],
         [vi("Y", dt_out, None)], opset=opset)


def binary(name, op, dt=F, dt_out=None, opset=17, **attrs):
    save(name, [h.make_node(op, ["A", "B"], ["Y"], **attrs)],
         [vi("A", dt, ["a", "b"]), vi("B", dt, ["c", "d"])], [vi("Y", dt_out or dt, None)], opset=opset)


def main():
    os.makedirs(OUT, exist_ok=True)
    dyn = ["n", "m"]
    # shapes from data
    save("reshape", [h.make_node("Reshape", ["X", "S"], ["Y"])],
         [vi("X", F, dyn), vi("S", I64, ["r"])], [vi("Y", F, None)])
    save("expand", [h.make_node("Expand", ["X", "S"], ["Y"])],
         [vi("X", F, dyn), vi("S", I64, ["r"])], [vi("Y", F, None)])
    save("tile", [h.make_node("Tile", ["X", "R"], ["Y"])],
         [vi("X", F, dyn), vi("R", I64, [2])], [vi("Y", F, None)])
    save("constant_of_shape", [h.make_node("ConstantOfShape", ["S"], ["Y"])],
         [vi("S", I64, ["r"])], [vi("Y", F, None)])
    save("range_i64", [h.make_node("Range", ["A", "L", "D"], ["Y"])],
         [vi("A", I64, []), vi("L", I64, []), vi("D", I64, [])], [vi("Y", I64, None)])
    save("range_f", [h.make_node("Range", ["A", "L", "D"], ["Y"])],
         [vi("A", F, []), vi("L", F, []), vi("D", F, [])], [vi("Y", F, None)])
    save("slice", [h.make_node("Slice", ["X", "S", "E", "A", "P"], ["Y"])],
         [vi("X", F, dyn), vi("S", I64, ["k"]), vi("E", I64, ["k"]), vi("A", I64, ["k"]),
          vi("P", I64, ["k"])], [vi("Y", F, None)])
    save("pad", [h.make_node("Pad", ["X", "P"], ["Y"], mode="reflect")],
         [vi("X", F, dyn), vi("P", I64, [4])], [vi("Y", F, None)])
    save("pad_edge", [h.make_node("Pad", ["X", "P"], ["Y"], mode="edge")],
         [vi("X", F, dyn), vi("P", I64, [4])], [vi("Y", F, None)])
    save("split", [h.make_node("Split", ["X", "S"], ["Y1", "Y2"], axis=1)],
         [vi("X", F, dyn), vi("S", I64, [2])], [vi("Y1", F, None), vi("Y2", F, None)])
    save("unsqueeze", [h.make_node("Unsqueeze", ["X", "A"], ["Y"])],
         [vi("X", F, dyn), vi("A", I64, ["k"])], [vi("Y", F, None)])
    save("squeeze", [h.make_node("Squeeze", ["X", "A"], ["Y"])],
         [vi("X", F, ["a", "b", "c"]), vi("A", I64, ["k"])], [vi("Y", F, None)])
    save("resize", [h.make_node("Resize", ["X", "", "S"], ["Y"], mode="linear")],
         [vi("X", F, [1, 1, "h", "w"]), vi("S", F, [4])], [vi("Y", F, None)])
    save("resize_nearest_sizes", [h.make_node("Resize", ["X", "", "", "Z"], ["Y"], mode="nearest")],
         [vi("X", F, [1, 1, "h", "w"]), vi("Z", I64, [4])], [vi("Y", F, None)])
    # indices from data
    save("gather", [h.make_node("Gather", ["X", "I"], ["Y"], axis=1)],
         [vi("X", F, dyn), vi("I", I64, ["k"])], [vi("Y", F, None)])
    save("gather_elements", [h.make_node("GatherElements", ["X", "I"], ["Y"], axis=0)],
         [vi("X", F, dyn), vi("I", I64, ["p", "q"])], [vi("Y", F, None)])
    save("gather_nd", [h.make_node("GatherND", ["X", "I"], ["Y"])],
         [vi("X", F, dyn), vi("I", I64, ["p", "q"])], [vi("Y", F, None)])
    save("scatter_nd", [h.make_node("ScatterND", ["X", "I", "U"], ["Y"])],
         [vi("X", F, dyn), vi("I", I64, ["p", "q"]), vi("U", F, ["r"])], [vi("Y", F, None)])
    save("scatter_elements", [h.make_node("ScatterElements", ["X", "I", "U"], ["Y"], axis=1)],
         [vi("X", F, dyn), vi("I", I64, ["p", "q"]), vi("U", F, ["p", "q"])], [vi("Y", F, None)])
    save("onehot", [h.make_node("OneHot", ["I", "D", "V"], ["Y"])],
         [vi("I", I64, ["k"]), vi("D", I64, []), vi("V", F, [2])], [vi("Y", F, None)])
    save("topk", [h.make_node("TopK", ["X", "K"], ["V", "I"], axis=1)],
         [vi("X", F, dyn), vi("K", I64, [1])], [vi("V", F, None), vi("I", I64, None)])
    save("compress", [h.make_node("Compress", ["X", "C"], ["Y"], axis=0)],
         [vi("X", F, dyn), vi("C", B, ["k"])], [vi("Y", F, None)])
    save("nonzero_where", [h.make_node("NonZero", ["X"], ["NZ"]),
                           h.make_node("Where", ["C", "X", "Z"], ["W"])],
         [vi("X", F, dyn), vi("C", B, dyn), vi("Z", F, dyn)], [vi("NZ", I64, None), vi("W", F, None)])
    save("cumsum", [h.make_node("CumSum", ["X", "A"], ["Y"], reverse=1)],
         [vi("X", F, dyn), vi("A", I64, [])], [vi("Y", F, None)])
    save("reduce_sum", [h.make_node("ReduceSum", ["X", "A"], ["Y"], keepdims=0)],
         [vi("X", F, dyn), vi("A", I64, ["k"])], [vi("Y", F, None)])
    save("reduce_ops", [h.make_node("ReduceMax", ["X"], ["Y1"], axes=[1]),
                        h.make_node("ReduceLogSumExp", ["X"], ["Y2"], axes=[0]),
                        h.make_node("ArgMax", ["X"], ["Y3"], axis=1)],
         [vi("X", F, dyn)], [vi("Y1", F, None), vi("Y2", F, None), vi("Y3", I64, None)])
    save("trilu", [h.make_node("Trilu", ["X", "K"], ["Y"])],
         [vi("X", F, dyn), vi("K", I64, [])], [vi("Y", F, None)])
    save("clip", [h.make_node("Clip", ["X", "L", "H"], ["Y"])],
         [vi("X", F, dyn), vi("L", F, []), vi("H", F, [])], [vi("Y", F, None)])
    save("reverse_sequence", [h.make_node("ReverseSequence", ["X", "L"], ["Y"], batch_axis=1, time_axis=0)],
         [vi("X", F, ["t", "b", "c"]), vi("L", I64, ["b"])], [vi("Y", F, None)])
    save("unique", [h.make_node("Unique", ["X"], ["Y", "I", "V", "C"], sorted=1)],
         [vi("X", F, ["n"])], [vi("Y", F, None), vi("I", I64, None), vi("V", I64, None), vi("C", I64, None)])
    save("nms", [h.make_node("NonMaxSuppression", ["B", "S", "M", "I", "T"], ["Y"])],
         [vi("B", F, [1, "n", 4]), vi("S", F, [1, 1, "n"]), vi("M", I64, [1]), vi("I", F, [1]),
          vi("T", F, [1])], [vi("Y", I64, None)])
    # arithmetic with every kind of number
    binary("add_bcast", "Add")
    binary("div_int64", "Div", I64)
    binary("div_int32", "Div", I32)
    binary("mod_int64", "Mod", I64)
    binary("mod_fmod", "Mod", F, fmod=1)
    binary("pow_int", "Pow", I64)
    binary("bitshift", "BitShift", U64, direction="LEFT")
    binary("matmul", "MatMul")
    binary("equal", "Equal", F, B)
    save("einsum", [h.make_node("Einsum", ["A", "B"], ["Y"], equation="ij,jk->ik")],
         [vi("A", F, dyn), vi("B", F, ["m", "k"])], [vi("Y", F, None)])
    save("gemm", [h.make_node("Gemm", ["A", "B", "C"], ["Y"], transB=1)],
         [vi("A", F, dyn), vi("B", F, ["k", "m"]), vi("C", F, ["c"])], [vi("Y", F, None)])
    unary("cast_f2i", "Cast", F, I64, to=I64)
    unary("cast_f2u8", "Cast", F, U8, to=U8)
    unary("cast_f2s", "Cast", F, S, to=S)
    unary("cast_s2f", "Cast", S, F, to=F)
    unary("softmax", "Softmax", axis=-1)
    unary("logsoftmax", "LogSoftmax", axis=0)
    unary("hardmax", "Hardmax", axis=1)
    unary("transpose", "Transpose", rank=3, perm=[2, 0, 1])
    unary("depth_to_space", "DepthToSpace", rank=4, blocksize=2)
    unary("space_to_depth", "SpaceToDepth", rank=4, blocksize=2)
    unary("flatten", "Flatten", rank=3, axis=2)
    unary("shape_size", "Shape", F, I64, rank=3)
    unary("lrn", "LRN", rank=4, size=3)
    unary("global_pool", "GlobalAveragePool", rank=4)
    unary("isnan", "IsNaN", F, B)
    unary("erf_sqrt", "Sqrt")
    unary("mean_var_norm", "MeanVarianceNormalization", rank=4)
    unary("identity_rank5", "Identity", rank=5)
    # vision
    w = nh.from_array(np.arange(18, dtype=np.float32).reshape(2, 1, 3, 3) / 10, "W")
    save("conv", [h.make_node("Conv", ["X", "W"], ["Y"], pads=[1, 1, 1, 1], strides=[2, 2])],
         [vi("X", F, ["n", 1, "h", "w"])], [vi("Y", F, None)], inits=[w])
    save("conv_dilated", [h.make_node("Conv", ["X", "W"], ["Y"], dilations=[2, 2], auto_pad="SAME_UPPER")],
         [vi("X", F, ["n", 1, "h", "w"])], [vi("Y", F, None)], inits=[w])
    save("conv_transpose", [h.make_node("ConvTranspose", ["X", "W"], ["Y"], strides=[2, 2], output_padding=[1, 1])],
         [vi("X", F, ["n", 2, "h", "w"])], [vi("Y", F, None)], inits=[w])
    save("maxpool", [h.make_node("MaxPool", ["X"], ["Y", "I"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)],
         [vi("X", F, ["n", "c", "h", "w"])], [vi("Y", F, None), vi("I", I64, None)])
    save("avgpool", [h.make_node("AveragePool", ["X"], ["Y"], kernel_shape=[2, 3], pads=[1, 1, 1, 1],
                                 count_include_pad=1)],
         [vi("X", F, ["n", "c", "h", "w"])], [vi("Y", F, None)])
    save("batchnorm", [h.make_node("BatchNormalization", ["X", "S", "B", "M", "V"], ["Y"])],
         [vi("X", F, ["n", "c", "h"]), vi("S", F, ["c"]), vi("B", F, ["c"]), vi("M", F, ["c"]),
          vi("V", F, ["c"])], [vi("Y", F, None)])
    save("layernorm", [h.make_node("LayerNormalization", ["X", "S", "B"], ["Y"], axis=-1)],
         [vi("X", F, dyn), vi("S", F, ["m"]), vi("B", F, ["m"])], [vi("Y", F, None)])
    save("concat", [h.make_node("Concat", ["A", "B"], ["Y"], axis=1)],
         [vi("A", F, dyn), vi("B", F, ["p", "q"])], [vi("Y", F, None)])
    save("sum_variadic", [h.make_node("Sum", ["A", "B", "C"], ["Y"])],
         [vi("A", F, ["a"]), vi("B", F, ["b", "c"]), vi("C", F, ["d", "e", "f"])], [vi("Y", F, None)])
    save("quantize", [h.make_node("QuantizeLinear", ["X", "S", "Z"], ["Q"]),
                      h.make_node("DequantizeLinear", ["Q", "S", "Z"], ["Y"])],
         [vi("X", F, dyn), vi("S", F, []), vi("Z", U8, [])], [vi("Y", F, None)])
    # recurrent
    rng = np.random.default_rng(7)
    lw = nh.from_array(rng.standard_normal((1, 16, 3)).astype(np.float32), "W")
    lr = nh.from_array(rng.standard_normal((1, 16, 4)).astype(np.float32), "R")
    save("lstm", [h.make_node("LSTM", ["X", "W", "R", "", "L"], ["Y", "H"], hidden_size=4)],
         [vi("X", F, ["t", "b", 3]), vi("L", I32, ["b"])], [vi("Y", F, None), vi("H", F, None)],
         inits=[lw, lr])
    # control flow: a Loop whose trip count and condition come from the caller
    body = h.make_graph(
        [h.make_node("Add", ["acc_in", "one"], ["acc_out"]),
         h.make_node("Identity", ["cond_in"], ["cond_out"]),
         h.make_node("Identity", ["acc_out"], ["scan_out"])],
        "body",
        [vi("i", I64, []), vi("cond_in", B, []), vi("acc_in", F, None)],
        [vi("cond_out", B, []), vi("acc_out", F, None), vi("scan_out", F, None)],
        initializer=[nh.from_array(np.array(1.0, dtype=np.float32), "one")])
    save("loop", [h.make_node("Loop", ["M", "C", "X"], ["Y", "S"], body=body)],
         [vi("M", I64, []), vi("C", B, []), vi("X", F, ["n"])], [vi("Y", F, None), vi("S", F, None)])
    then_g = h.make_graph([h.make_node("Identity", ["X"], ["o1"])], "then", [], [vi("o1", F, None)])
    else_g = h.make_graph([h.make_node("Transpose", ["X"], ["o2"])], "else", [], [vi("o2", F, None)])
    save("if", [h.make_node("If", ["C"], ["Y"], then_branch=then_g, else_branch=else_g)],
         [vi("C", B, []), vi("X", F, dyn)], [vi("Y", F, None)])
    # sequences
    save("sequence", [h.make_node("SplitToSequence", ["X", "S"], ["Q"], axis=0),
                      h.make_node("SequenceAt", ["Q", "P"], ["A"]),
                      h.make_node("ConcatFromSequence", ["Q"], ["C"], axis=1)],
         [vi("X", F, dyn), vi("S", I64, ["k"]), vi("P", I64, [])], [vi("A", F, None), vi("C", F, None)])
    # ai.onnx.ml
    save("label_encoder", [h.make_node("LabelEncoder", ["X"], ["Y"], domain="ai.onnx.ml",
                                       keys_strings=["a", "b", "c"], values_int64s=[1, 2, 3])],
         [vi("X", S, ["n"])], [vi("Y", I64, None)], ml=True)
    save("one_hot_encoder", [h.make_node("OneHotEncoder", ["X"], ["Y"], domain="ai.onnx.ml",
                                         cats_int64s=[1, 2, 3, 5], zeros=1)],
         [vi("X", I64, dyn)], [vi("Y", F, None)], ml=True)
    save("normalizer", [h.make_node("Normalizer", ["X"], ["Y"], domain="ai.onnx.ml", norm="L2")],
         [vi("X", F, dyn)], [vi("Y", F, None)], ml=True)
    # per-row dynamic quantization (the quantizer's chain: fused into
    # com.onnx_pg DynamicQuantizeMatMulRows at levels >= 1)
    rq = [nh.from_array(np.array(0.0, np.float32), "zero"), nh.from_array(np.array(255.0, np.float32), "qmax"),
          nh.from_array(np.array(1e-30, np.float32), "tiny"),
          nh.from_array((np.arange(32).reshape(8, 4) % 11 - 5).astype(np.int8), "W"),
          nh.from_array(np.zeros(4, np.int8), "WZ"),
          nh.from_array((np.arange(32).reshape(8, 4) % 11 - 5).sum(0).astype(np.int32), "SUMS"),
          nh.from_array(np.full(4, 0.01, np.float32), "WS")]
    save("row_quantized_matmul", [
        h.make_node("ReduceMin", ["X"], ["rmin"], axes=[-1], keepdims=1),
        h.make_node("ReduceMax", ["X"], ["rmax"], axes=[-1], keepdims=1),
        h.make_node("Min", ["rmin", "zero"], ["lo"]), h.make_node("Max", ["rmax", "zero"], ["hi"]),
        h.make_node("Sub", ["hi", "lo"], ["range"]), h.make_node("Div", ["range", "qmax"], ["s0"]),
        h.make_node("Max", ["s0", "tiny"], ["s"]), h.make_node("Neg", ["lo"], ["nlo"]),
        h.make_node("Div", ["nlo", "s"], ["zq"]), h.make_node("Round", ["zq"], ["zp"]),
        h.make_node("Div", ["X", "s"], ["xs"]), h.make_node("Round", ["xs"], ["xr"]),
        h.make_node("Add", ["xr", "zp"], ["xz"]), h.make_node("Clip", ["xz", "zero", "qmax"], ["xc"]),
        h.make_node("Cast", ["xc"], ["q"], to=U8), h.make_node("Cast", ["zp"], ["zpi"], to=I32),
        h.make_node("MatMulInteger", ["q", "W", "", "WZ"], ["i32"]),
        h.make_node("Mul", ["zpi", "SUMS"], ["corr"]), h.make_node("Sub", ["i32", "corr"], ["c32"]),
        h.make_node("Cast", ["c32"], ["f"], to=F), h.make_node("Mul", ["f", "s"], ["fs"]),
        h.make_node("Mul", ["fs", "WS"], ["Y"])],
        [vi("X", F, dyn)], [vi("Y", F, None)], rq)
    # strided batch views: ranks, broadcasts and empty axes from data
    save("fused_matmul_trans_batch", [
        h.make_node("FusedMatMul", ["A", "B"], ["Y"], domain="com.microsoft", alpha=0.5, transBatchA=1,
                    transBatchB=1, transB=1)],
        [vi("A", F, ["a", "b", "c"]), vi("B", F, ["d", "e", "f"])], [vi("Y", F, None)], ms=True)
    save("fused_matmul_trans_batch_a4", [
        h.make_node("FusedMatMul", ["A", "B"], ["Y"], domain="com.microsoft", transBatchA=1, transA=1)],
        [vi("A", F, ["a", "b", "c", "d"]), vi("B", F, ["e", "f", "g", "h"])], [vi("Y", F, None)], ms=True)
    # attention with a mask: the fused ScaledDotProductAttention on shapes from data
    save("attention_masked", [
        h.make_node("Transpose", ["K"], ["KT"], perm=[0, 2, 1]), h.make_node("MatMul", ["Q", "KT"], ["S"]),
        h.make_node("Add", ["S", "M"], ["SM"]), h.make_node("Softmax", ["SM"], ["P"], axis=-1),
        h.make_node("MatMul", ["P", "V"], ["O"]), h.make_node("Transpose", ["O"], ["Y"], perm=[1, 0, 2])],
        [vi("Q", F, ["a", "b", "c"]), vi("K", F, ["d", "e", "f"]), vi("V", F, ["g", "h", "i"]),
         vi("M", F, ["j", "k"])], [vi("Y", F, None)])
    # an embedding bag: the fused GatherReduce, indices and table shapes from data
    save("embedding_bag", [
        h.make_node("Gather", ["T", "I"], ["G"], axis=0), h.make_node("ReduceMean", ["G"], ["Y"], axes=[1])],
        [vi("T", F, ["v", "e"]), vi("I", I64, ["b", "l"])], [vi("Y", F, None)])
    # shape subgraphs as exporters write them (the runtime's shape memo skips them while
    # shapes repeat): Reshape to a shape built from Shape/Gather/Mul/Concat, a shape decided by
    # data (NonZero), Range and ConstantOfShape of computed lengths
    c = lambda name, v: nh.from_array(np.array(v, dtype=np.int64), name)  # noqa: E731
    save("shape_chain", [
        h.make_node("Shape", ["X"], ["s"]), h.make_node("Gather", ["s", "i0"], ["n"], axis=0),
        h.make_node("Gather", ["s", "i1"], ["k"], axis=0), h.make_node("Mul", ["n", "k"], ["nk"]),
        h.make_node("Unsqueeze", ["nk", "ax0"], ["nk1"]), h.make_node("Concat", ["nk1", "one"], ["t"], axis=0),
        h.make_node("Reshape", ["X", "t"], ["R"]),
        h.make_node("NonZero", ["Y"], ["nz"]), h.make_node("Shape", ["nz"], ["zs"], start=1),
        h.make_node("ReduceSum", ["Y"], ["ysum"], keepdims=0), h.make_node("Expand", ["ysum", "zs"], ["E"]),
        h.make_node("Squeeze", ["zs", "ax0"], ["cnt"]), h.make_node("Range", ["i0", "cnt", "i1"], ["rg"]),
        h.make_node("Cast", ["rg"], ["RG"], to=F),
        h.make_node("Unsqueeze", ["n", "ax0"], ["n1"]), h.make_node("Concat", ["n1", "zs"], ["cs"], axis=0),
        h.make_node("ConstantOfShape", ["cs"], ["C"], value=nh.from_array(np.array([1.5], np.float32))),
        h.make_node("Size", ["Y"], ["sz"]), h.make_node("Add", ["sz", "k"], ["SK"])],
        [vi("X", F, ["a", "b"]), vi("Y", F, ["c"])],
        [vi("R", F, None), vi("E", F, None), vi("RG", F, None), vi("C", F, None), vi("SK", I64, None)],
        [c("i0", 0), c("i1", 1), c("ax0", [0]), c("one", [1])])
    # grouped 3x3 layers of 4, 2 and 16 channels a group (strides 1, 2, 1): at level 3 onnx_pg.nchwc
    # GroupConvs on the blocks, whatever planes and batches the input brings
    rng = np.random.default_rng(5)
    w4 = nh.from_array((rng.standard_normal((32, 4, 3, 3)) * 0.3).astype(np.float32), "W4")
    w2 = nh.from_array((rng.standard_normal((32, 2, 3, 3)) * 0.3).astype(np.float32), "W2")
    w16 = nh.from_array((rng.standard_normal((32, 16, 3, 3)) * 0.1).astype(np.float32), "W16")
    b32 = nh.from_array(rng.standard_normal(32).astype(np.float32), "B32")
    save("conv_grouped", [
        h.make_node("Conv", ["X", "W4", "B32"], ["A"], pads=[1, 1, 1, 1], group=8),
        h.make_node("Relu", ["A"], ["R"]),
        h.make_node("Conv", ["R", "W2"], ["C"], pads=[1, 0, 1, 2], strides=[2, 2], group=16),
        h.make_node("Conv", ["C", "W16", "B32"], ["Y"], pads=[0, 1, 2, 1], group=2)],
        [vi("X", F, ["n", 32, "h", "w"])], [vi("Y", F, None)], inits=[w4, w2, w16, b32])
    b16 = nh.from_array(rng.standard_normal(16).astype(np.float32), "B")
    # a squeeze-and-excitation gate: 1x1 layers over the pooled 1x1 plane (rows of a GEMM), the
    # input scaled by the gate
    ws = nh.from_array((rng.standard_normal((8, 16, 1, 1)) * 0.3).astype(np.float32), "WS")
    we = nh.from_array((rng.standard_normal((16, 8, 1, 1)) * 0.3).astype(np.float32), "WE")
    save("squeeze_excite", [
        h.make_node("GlobalAveragePool", ["X"], ["P"]), h.make_node("Conv", ["P", "WS"], ["S"]),
        h.make_node("Relu", ["S"], ["SR"]), h.make_node("Conv", ["SR", "WE", "B"], ["E"]),
        h.make_node("Sigmoid", ["E"], ["G"]), h.make_node("Mul", ["X", "G"], ["Y"])],
        [vi("X", F, ["n", 16, "h", "w"])], [vi("Y", F, None)], inits=[ws, we, b16])
    # an MLP over any batch: past the first layer the rows are a ReLU's output, whose zeros the
    # GEMM skips (sgemm_sparse.c) from 8 rows on, in groups of slivers with a ragged last one
    w1 = nh.from_array((rng.standard_normal((160, 32)) * 0.3).astype(np.float32), "W1")
    w2 = nh.from_array((rng.standard_normal((160, 200)) * 0.1).astype(np.float32), "W2")
    w3 = nh.from_array((rng.standard_normal((200, 70)) * 0.1).astype(np.float32), "W3")
    b160 = nh.from_array(rng.standard_normal(160).astype(np.float32), "B160")
    save("mlp_relu", [
        h.make_node("Gemm", ["X", "W1", "B160"], ["H1"], transB=1), h.make_node("Relu", ["H1"], ["R1"]),
        h.make_node("MatMul", ["R1", "W2"], ["H2"]), h.make_node("Relu", ["H2"], ["R2"]),
        h.make_node("MatMul", ["R2", "W3"], ["Y"])],
        [vi("X", F, ["n", 32])], [vi("Y", F, None)], inits=[w1, w2, w3, b160])
    made = sorted(f for f in os.listdir(OUT) if f.endswith(".onnx"))
    order = os.path.join(os.path.dirname(OUT), "models.txt")
    with open(order) as f:
        listed = {line.strip() for line in f}
    new = ["run_models/" + f for f in made if "run_models/" + f not in listed]
    with open(order, "a") as f:
        for line in new:
            f.write(line + "\n")
    print("wrote %d models to %s (%d new in models.txt)" % (len(made), OUT, len(new)))


if __name__ == "__main__":
    main()
