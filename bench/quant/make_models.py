#!/usr/bin/python3
"""Export the quantization benchmark's models to ONNX with random (seeded) weights.

Runs with Debian's /usr/bin/python3 and its python3-torch / python3-torchvision
(torch 1.13, opset 17); nothing is downloaded.

    /usr/bin/python3 bench/quant/make_models.py --out DIR [--only NAME ...]

  resnet18.onnx     torchvision resnet18, input "input" [N,3,224,224], dynamic N
  encoder.onnx      BERT-base-shaped encoder (bench/make_models.py's: 12 layers,
                    hidden 768, 12 heads, FFN 3072), input_ids int64 [1,128]
  encoder_small.onnx  the same architecture, 4 layers, hidden 256, 4 heads,
                    FFN 1024, vocabulary 8192, input_ids int64 [1,64]
                    (the end-to-end test's encoder: 200 inputs in seconds)
"""
import argparse
import os
import sys
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from make_models import Encoder  # noqa: E402  (bench/make_models.py)

OPSET = 17


def export(model, example, path, input_name, dynamic_batch):
    model.eval()
    kwargs = {}
    if dynamic_batch:
        kwargs["dynamic_axes"] = {input_name: {0: "N"}, "output": {0: "N"}}
    # newer torch exports through dynamo by default: ask for the TorchScript exporter
    import inspect
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, example, path, opset_version=OPSET, input_names=[input_name],
                          output_names=["output"], do_constant_folding=True, **kwargs)
    print("wrote %s (%.1f MB)" % (path, os.path.getsize(path) / 1e6))


def build(name):
    import torchvision

    torch.manual_seed(0)
    if name == "resnet18":
        return torchvision.models.resnet18(weights=None), torch.randn(1, 3, 224, 224), "input", True
    if name == "encoder":
        return Encoder(), torch.randint(0, 30522, (1, 128), dtype=torch.long), "input_ids", False
    if name == "encoder_small":
        return (Encoder(vocab=8192, hidden=256, layers=4, heads=4, ffn=1024, max_pos=128),
                torch.randint(0, 8192, (1, 64), dtype=torch.long), "input_ids", False)
    raise SystemExit("unknown model %s" % name)


ALL = ["resnet18", "encoder_small", "encoder"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", nargs="*", choices=ALL)
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for name in args.only or ALL:
        path = os.path.join(args.out, name + ".onnx")
        if os.path.exists(path) and not args.force:
            print("kept %s" % path)
            continue
        model, example, input_name, dyn = build(name)
        export(model, example, path, input_name, dyn)
    return 0


if __name__ == "__main__":
    sys.exit(main())
