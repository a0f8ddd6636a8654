#!/usr/bin/python3
"""Export the PyTorch fixture models (mlp, small_cnn) to ONNX.

Runs with Debian's /usr/bin/python3 and its python3-torch package (torch 1.13,
which exports up to opset 17).  It needs neither the onnx Python package nor
onnxruntime: generate.py (run with the Python that has those) calls this
script, then computes the reference outputs with onnxruntime.

    /usr/bin/python3 test/models/generate_torch.py [--out DIR]

Weights are random but seeded, so the files are reproducible for a given
torch version.  Both models have a dynamic batch axis named "N".
"""
import argparse
import os
import sys
import warnings

import torch
from torch import nn

OPSET = 17


class MLP(nn.Module):
    """16 -> 32 -> 32 -> 3: Gemm, Relu, Gemm, Tanh, Gemm, Softmax."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 32)
        self.fc3 = nn.Linear(32, 3)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        return torch.softmax(self.fc3(x), dim=1)


class SmallCNN(nn.Module):
    """[N,3,16,16] -> [N,10]: Conv, BatchNormalization, Relu, MaxPool, Conv,
    BatchNormalization, Relu, GlobalAveragePool, Flatten, Gemm."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn1(self.conv1(x))))
        x = torch.relu(self.bn2(self.conv2(x)))
        x = torch.flatten(self.gap(x), 1)
        return self.fc(x)


def randomize_batchnorm(model, gen):
    """Give BatchNorm non-trivial running statistics and affine parameters, so
    that an engine folding BatchNormalization into Conv is really tested."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            with torch.no_grad():
                m.running_mean.copy_(torch.randn(m.num_features, generator=gen) * 0.5)
                m.running_var.copy_(torch.rand(m.num_features, generator=gen) * 1.5 + 0.25)
                m.weight.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
                m.bias.copy_(torch.randn(m.num_features, generator=gen) * 0.2)


def export(model, example, path):
    model.eval()
    # Constant folding is safe here: the model is in eval mode.
    warnings.filterwarnings("ignore", message=".*constant folding.*")
    # TrainingMode.PRESERVE (with the model in eval mode) keeps the
    # BatchNormalization nodes: the default EVAL mode would fold them into
    # the preceding Conv at export time, and the engine's own Conv+BN folding
    # pass would then have nothing to do.
    torch.onnx.export(
        model,
        example,
        path,
        export_params=True,
        opset_version=OPSET,
        do_constant_folding=True,
        training=torch.onnx.TrainingMode.PRESERVE,
        input_names=["input"],
        output_names=["output"],
        dynamic_axes={"input": {0: "N"}, "output": {0: "N"}},
    )
    print("wrote %s (%d bytes)" % (path, os.path.getsize(path)))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    args = ap.parse_args(argv)

    torch.manual_seed(20240601)
    gen = torch.Generator().manual_seed(7)

    mlp = MLP()
    export(mlp, torch.randn(2, 16, generator=gen), os.path.join(args.out, "mlp.onnx"))

    cnn = SmallCNN()
    randomize_batchnorm(cnn, gen)
    export(cnn, torch.randn(2, 3, 16, 16, generator=gen), os.path.join(args.out, "small_cnn.onnx"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
