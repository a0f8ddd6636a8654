#!/usr/bin/python3
"""Export the benchmark's PyTorch models to ONNX, with random (seeded) weights.

Runs with Debian's /usr/bin/python3 and its python3-torch / python3-torchvision
packages (torch 1.13, ONNX export up to opset 17).  Nothing is downloaded:
torchvision models are built with weights=None and the encoder is assembled
from torch.nn modules.

    /usr/bin/python3 bench/make_models.py [--out bench/models] [--only NAME ...]

Models written (opset 17):
  resnet50.onnx      torchvision resnet50, input "input" [N,3,224,224], dynamic N
  mobilenet_v2.onnx  torchvision mobilenet_v2, input "input" [N,3,224,224], dynamic N
  encoder.onnx       BERT-base-shaped encoder: token + position embeddings,
                     LayerNorm, 12 layers (hidden 768, 12 heads, FFN 3072, GELU,
                     post-LayerNorm), input "input_ids" int64 [1,128] (static)
  mlp.onnx           MLP 784-512-512-10 (Gemm, Relu), input "input" [N,784], dynamic N
"""
import argparse
import math
import os
import sys
import warnings

import torch
from torch import nn

OPSET = 17
HERE = os.path.dirname(os.path.abspath(__file__))


class SelfAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, hidden)

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x):
        b, s, h = x.shape
        q = self.split(self.query(x))
        k = self.split(self.key(x))
        v = self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).reshape(b, s, h)
        return self.out(ctx)


class EncoderLayer(nn.Module):
    """BERT layer: attention, residual, LayerNorm, FFN (GELU), residual, LayerNorm."""

    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.attn = SelfAttention(hidden, heads)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.fc1 = nn.Linear(hidden, ffn)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(ffn, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x):
        x = self.ln1(x + self.attn(x))
        return self.ln2(x + self.fc2(self.act(self.fc1(x))))


class Encoder(nn.Module):
    def __init__(self, vocab=30522, hidden=768, layers=12, heads=12, ffn=3072, max_pos=512):
        super().__init__()
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_pos, hidden)
        self.ln = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList([EncoderLayer(hidden, heads, ffn) for _ in range(layers)])

    def forward(self, input_ids):
        s = input_ids.shape[1]
        pos = torch.arange(s, dtype=torch.long).unsqueeze(0)
        x = self.ln(self.tok(input_ids) + self.pos(pos))
        for layer in self.layers:
            x = layer(x)
        return x


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 512)
        self.fc2 = nn.Linear(512, 512)
        self.fc3 = nn.Linear(512, 10)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def export(model, example, path, input_name, dynamic_batch):
    model.eval()
    kwargs = {}
    if dynamic_batch:
        kwargs["dynamic_axes"] = {input_name: {0: "N"}, "output": {0: "N"}}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, example, path, opset_version=OPSET, input_names=[input_name],
                          output_names=["output"], do_constant_folding=True, **kwargs)
    print("wrote %s (%.1f MB)" % (path, os.path.getsize(path) / 1e6))


def build(name):
    import torchvision

    torch.manual_seed(0)
    if name == "resnet50":
        return torchvision.models.resnet50(weights=None), torch.randn(1, 3, 224, 224), "input", True
    if name == "mobilenet_v2":
        return torchvision.models.mobilenet_v2(weights=None), torch.randn(1, 3, 224, 224), "input", True
    if name == "encoder":
        return Encoder(), torch.randint(0, 30522, (1, 128), dtype=torch.long), "input_ids", False
    if name == "mlp":
        return MLP(), torch.randn(1, 784), "input", True
    raise SystemExit("unknown model %s" % name)


ALL = ["resnet50", "mobilenet_v2", "encoder", "mlp"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "models"))
    ap.add_argument("--only", nargs="*", choices=ALL)
    ap.add_argument("--force", action="store_true", help="rewrite models that already exist")
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
