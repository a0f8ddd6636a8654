"""Resize of a float tensor on its last two axes runs row by row
(tensor_resize.c, resize_2d_float): the same double-precision arithmetic,
in the same order, as the general separable path.  Checked against the
ONNX reference implementation for every interpolating mode, coordinate
transformation, antialias and exclude_outside, upsampling and
downsampling, H and W together or alone, by scales and by sizes, and on
two threads bit for bit as on one; the cases the row path leaves to the
general one (W listed before H, a third axis, positions outside the
input) alongside."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from oxengine import Session


def resize_model(shape, attrs, scales=None, sizes=None, axes=None, roi=None):
    names = ["x", "roi" if roi is not None else "", "scales" if scales is not None else "",
             "sizes" if sizes is not None else ""]
    while names[-1] == "":
        names.pop()
    inits = []
    if roi is not None:
        inits.append(numpy_helper.from_array(np.array(roi, np.float32), "roi"))
    if scales is not None:
        inits.append(numpy_helper.from_array(np.array(scales, np.float32), "scales"))
    if sizes is not None:
        inits.append(numpy_helper.from_array(np.array(sizes, np.int64), "sizes"))
    if axes is not None:
        attrs = dict(attrs, axes=axes)
    node = helper.make_node("Resize", names, ["y"], **attrs)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)


SHAPES = [
    ([1, 3, 7, 9], dict(scales=[1, 1, 2.5, 3.0])),
    ([2, 2, 16, 12], dict(scales=[1, 1, 0.5, 0.4])),
    ([1, 1, 5, 6], dict(sizes=[1, 1, 13, 4])),
    ([3, 20, 30], dict(scales=[1, 0.6, 2.0])),
    ([2, 4, 8, 8], dict(scales=[1, 1, 1, 3.0])),          # W alone
    ([2, 4, 8, 8], dict(scales=[1, 1, 2.0, 1])),          # H alone
    ([1, 2, 9, 9], dict(scales=[3.0, 2.0], axes=[2, 3])),
    ([1, 2, 9, 9], dict(scales=[2.0, 3.0], axes=[3, 2])),  # W listed first: the general path
    ([2, 3, 4, 5], dict(scales=[1, 2, 2, 2])),              # a third axis: the general path
    ([1, 1, 3, 700], dict(scales=[1, 1, 2, 1.5])),          # rows wider than the stack's buffer
]


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("coord", ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                   "half_pixel_symmetric"])
@pytest.mark.parametrize("antialias,exclude", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_matches_reference_and_threads(mode, coord, antialias, exclude):
    attrs = dict(mode=mode, coordinate_transformation_mode=coord, antialias=antialias, exclude_outside=exclude)
    for i, (shape, how) in enumerate(SHAPES):
        m = resize_model(shape, attrs, **how)
        x = np.random.default_rng(i).standard_normal(shape).astype(np.float32)
        want = ReferenceEvaluator(m).run(None, {"x": x})[0]
        one = Session(m, threads=1).run({"x": x})[0]
        two = Session(m, threads=2).run({"x": x})[0]
        assert one.shape == want.shape, (shape, how)
        np.testing.assert_allclose(one, want, rtol=1e-5, atol=1e-5 * (np.abs(want).max() + 1), err_msg=str(how))
        np.testing.assert_array_equal(one.view(np.uint32), two.view(np.uint32))


def test_crop_and_resize_extrapolates_through_the_general_path():
    x = np.random.default_rng(7).standard_normal((1, 2, 6, 6)).astype(np.float32)
    for roi in ([0, 0, -0.2, 0.1, 1, 1, 1.3, 0.9], [0, 0, 0.2, 0.1, 1, 1, 0.8, 0.9]):
        m = resize_model([1, 2, 6, 6], dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize",
                                            extrapolation_value=-7.0), roi=roi, sizes=[1, 2, 9, 9])
        want = ReferenceEvaluator(m).run(None, {"x": x})[0]
        np.testing.assert_allclose(Session(m).run({"x": x})[0], want, rtol=1e-5, atol=1e-5)
