"""The network models of test/models/networks, for the tests that compare them
with onnxruntime (test/engine/test_networks.py without a server,
test/e2e/test_networks.py through one): where each file is, the seeded inputs
to feed it, and the export of the big ones where torch is installed.

Needs numpy only; export.py (run with /usr/bin/python3 or $TORCH_PYTHON)
needs torch and torchvision.
"""
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
EXPORT = os.path.join(HERE, "export.py")
TORCH_PYTHON = os.environ.get("TORCH_PYTHON", "/usr/bin/python3")

# concrete sizes of the dynamic axes in the tests: not the export's (2, 12, 9),
# so that the dynamic axes are exercised
TEST_DIMS = {"N": 3, "S": 10, "T": 11}
IMAGE_BATCH = 2  # the CNNs are the slow ones

# rtol 1e-3 as the issue asks; atol for values near zero, relative to the
# largest magnitude of that output (random-weight networks have outputs of
# very different scales): |got - want| <= RTOL * |want| + ATOL * max|want|
RTOL = 1e-3
ATOL = 1e-4


def manifest():
    with open(os.path.join(HERE, "manifest.json")) as f:
        return json.load(f)


def names(committed=None):
    return [n for n, m in manifest()["models"].items() if committed is None or m["committed"] == committed]


def path_of(name):
    return os.path.join(HERE, manifest()["models"][name]["file"])


def inputs(name, seed=None):
    """{input name: ndarray}: seeded inputs as the manifest says to draw them."""
    spec = manifest()["models"][name]
    if seed is None:
        seed = sum(map(ord, name))
    rng = np.random.default_rng(seed)
    dims = dict(TEST_DIMS)
    if any(s["shape"][1:] == [3, 224, 224] for s in spec["inputs"].values()):
        dims["N"] = IMAGE_BATCH
    out = {}
    for iname, s in spec["inputs"].items():
        shape = [dims[d] if isinstance(d, str) else d for d in s["shape"]]
        draw = s["draw"]
        if draw == "normal":
            v = rng.standard_normal(shape).astype(np.float32)
        elif draw.startswith("tokens:"):
            v = rng.integers(0, int(draw[7:]), size=shape, dtype=np.int64)
        elif draw in ("padding_mask", "attention_mask"):
            # per sample a length in [1, S]: the first sample full, the second one token
            n, s_len = shape
            lengths = rng.integers(1, s_len + 1, size=n)
            lengths[0] = s_len
            if n > 1:
                lengths[1] = 1
            pad = np.arange(s_len)[None, :] >= lengths[:, None]
            v = pad if draw == "padding_mask" else (~pad).astype(np.int64)
        elif draw == "token_types":
            v = np.zeros(shape, dtype=np.int64)
            v[:, shape[1] // 2:] = 1
        else:
            raise ValueError("%s: unknown draw %r" % (name, draw))
        out[iname] = np.ascontiguousarray(v.astype(np.dtype(s["dtype"])))
    return out


def compare(got, want, what):
    """(max abs error, max relative error, ok) of got vs want with RTOL/ATOL.
    The relative error reported is over the values of at least 1% of
    max|want| (below that it only measures noise around zero)."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, "%s: shape %s, expected %s" % (what, got.shape, want.shape)
    assert np.all(np.isfinite(want)), "%s: the reference has non-finite values" % what
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    err = np.abs(got - want)
    err = np.where(np.isnan(err), np.inf, err)
    big = np.abs(want) >= 0.01 * scale
    rel = float(np.max(err[big] / np.abs(want[big]))) if np.any(big) else 0.0
    ok = bool(np.all(err <= RTOL * np.abs(want) + ATOL * scale))
    return float(np.max(err)) if err.size else 0.0, rel, ok


def describe_failure(got, want, what):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    scale = float(np.max(np.abs(want)))
    excess = np.abs(got - want) - (RTOL * np.abs(want) + ATOL * scale)
    excess = np.where(np.isnan(excess), np.inf, excess)
    i = np.unravel_index(int(np.argmax(excess)), want.shape)
    bad = int(np.count_nonzero(excess > 0))
    return ("%s: %d of %d values outside rtol %g + atol %g * max|want| (max|want| = %.4g); worst at %s: "
            "got %.7g, want %.7g" % (what, bad, want.size, RTOL, ATOL, scale, list(map(int, i)),
                                     got[i], want[i]))


_export_tried = {}


def torch_available():
    """None if TORCH_PYTHON has torch and torchvision, else why not."""
    if "torch" not in _export_tried:
        try:
            r = subprocess.run([TORCH_PYTHON, "-c", "import torch, torchvision"], capture_output=True,
                               text=True, timeout=300)
            why = None if r.returncode == 0 else (r.stderr.strip().splitlines() or ["failed"])[-1]
        except (OSError, subprocess.TimeoutExpired) as e:
            why = str(e)
        _export_tried["torch"] = why
    return _export_tried["torch"]


def ensure(name):
    """The model's path; a generated one is exported first when missing and
    torch is there.  Returns (path, None) or (None, why it is skipped)."""
    path = path_of(name)
    if os.path.exists(path):
        return path, None
    if manifest()["models"][name]["committed"]:
        return None, "%s is missing: it is a committed fixture, regenerate it with %s" % (path, EXPORT)
    why = torch_available()
    if why is not None:
        return None, ("torch not installed: %s (made by test/models/networks/export.py with %s and "
                      "python3-torch/python3-torchvision: %s) skipped" % (name, TORCH_PYTHON, why))
    if "export" not in _export_tried:
        r = subprocess.run([TORCH_PYTHON, EXPORT, "--generated-only"], capture_output=True, text=True)
        _export_tried["export"] = None if r.returncode == 0 else (r.stdout + r.stderr)[-2000:]
        sys.stderr.write(r.stdout)
    if _export_tried["export"] is not None:
        raise RuntimeError("export.py failed:\n" + _export_tried["export"])
    if not os.path.exists(path):
        raise RuntimeError("export.py did not write " + path)
    return path, None
