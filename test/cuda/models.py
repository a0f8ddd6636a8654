"""Networks for the GPU check (test/cuda/run.sh), exported with torch.onnx.export
(dynamo=False, opset 17) and random weights.  torchvision's resnet50,
mobilenet_v2 and efficientnet_b0 when torchvision is installed; otherwise
equivalent definitions below.  The encoder is BERT-shaped (embedding,
post-LayerNorm blocks of multi-head attention and an erf-GELU MLP), written
with constant reshape dims so that the exported graph has no shape
arithmetic.

    python models.py OUTDIR [--rehearsal]   writes OUTDIR/<name>_b<batch>.onnx
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


# ---- CNNs (used when torchvision is missing) ------------------------------
def _bn(c):
    return nn.BatchNorm2d(c)


class Bottleneck(nn.Module):
    def __init__(self, cin, width, stride, down):
        super().__init__()
        cout = width * 4
        self.c1, self.b1 = nn.Conv2d(cin, width, 1, bias=False), _bn(width)
        self.c2, self.b2 = nn.Conv2d(width, width, 3, stride, 1, bias=False), _bn(width)
        self.c3, self.b3 = nn.Conv2d(width, cout, 1, bias=False), _bn(cout)
        self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), _bn(cout)) if down else None

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        y = F.relu(self.b2(self.c2(y)))
        y = self.b3(self.c3(y))
        return F.relu(y + (self.down(x) if self.down is not None else x))


class ResNet50(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), _bn(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        layers, cin = [], 64
        for width, n, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
            for i in range(n):
                layers.append(Bottleneck(cin, width, stride if i == 0 else 1, i == 0))
                cin = width * 4
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(2048, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class InvRes(nn.Module):
    def __init__(self, cin, cout, stride, expand, act=nn.ReLU6, se=False, k=3):
        super().__init__()
        mid = cin * expand
        layers = []
        if expand != 1:
            layers += [nn.Conv2d(cin, mid, 1, bias=False), _bn(mid), act()]
        layers += [nn.Conv2d(mid, mid, k, stride, k // 2, groups=mid, bias=False), _bn(mid), act()]
        self.body = nn.Sequential(*layers)
        self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(mid, max(1, cin // 4), 1), nn.SiLU(),
                                nn.Conv2d(max(1, cin // 4), mid, 1), nn.Sigmoid()) if se else None
        self.proj = nn.Sequential(nn.Conv2d(mid, cout, 1, bias=False), _bn(cout))
        self.res = stride == 1 and cin == cout

    def forward(self, x):
        y = self.body(x)
        if self.se is not None:
            y = y * self.se(y)
        y = self.proj(y)
        return x + y if self.res else y


class MobileNetV2(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        cfg = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
        layers, cin = [nn.Conv2d(3, 32, 3, 2, 1, bias=False), _bn(32), nn.ReLU6()], 32
        for t, c, n, s in cfg:
            for i in range(n):
                layers.append(InvRes(cin, c, s if i == 0 else 1, t))
                cin = c
        layers += [nn.Conv2d(cin, 1280, 1, bias=False), _bn(1280), nn.ReLU6()]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(1280, classes)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


class EfficientNetB0(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        cfg = [(1, 16, 1, 1, 3), (6, 24, 2, 2, 3), (6, 40, 2, 2, 5), (6, 80, 3, 2, 3), (6, 112, 3, 1, 5),
               (6, 192, 4, 2, 5), (6, 320, 1, 1, 3)]
        layers, cin = [nn.Conv2d(3, 32, 3, 2, 1, bias=False), _bn(32), nn.SiLU()], 32
        for t, c, n, s, k in cfg:
            for i in range(n):
                layers.append(InvRes(cin, c, s if i == 0 else 1, t, act=nn.SiLU, se=True, k=k))
                cin = c
        layers += [nn.Conv2d(cin, 1280, 1, bias=False), _bn(1280), nn.SiLU()]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(1280, classes)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


# ---- BERT-shaped encoder --------------------------------------------------
class Block(nn.Module):
    def __init__(self, batch, seq, hidden, heads):
        super().__init__()
        self.b, self.s, self.h, self.nh, self.d = batch, seq, hidden, heads, hidden // heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.o = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.f1 = nn.Linear(hidden, 4 * hidden)
        self.f2 = nn.Linear(4 * hidden, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x):
        b, s, nh, d = self.b, self.s, self.nh, self.d
        q, k, v = self.qkv(x).split(self.h, dim=-1)
        q = q.reshape(b, s, nh, d).transpose(1, 2)
        k = k.reshape(b, s, nh, d).permute(0, 2, 3, 1)
        v = v.reshape(b, s, nh, d).transpose(1, 2)
        a = torch.softmax(torch.matmul(q, k) / (d ** 0.5), dim=-1)
        ctx = torch.matmul(a, v).transpose(1, 2).reshape(b, s, self.h)
        x = self.ln1(x + self.o(ctx))
        return self.ln2(x + self.f2(F.gelu(self.f1(x))))


class Encoder(nn.Module):
    def __init__(self, batch, seq=128, hidden=768, heads=12, layers=4, vocab=30522):
        super().__init__()
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Parameter(torch.randn(1, seq, hidden) * 0.02)
        self.ln = nn.LayerNorm(hidden, eps=1e-12)
        self.blocks = nn.ModuleList(Block(batch, seq, hidden, heads) for _ in range(layers))

    def forward(self, ids):
        x = self.ln(self.tok(ids) + self.pos)
        for blk in self.blocks:
            x = blk(x)
        return x


def cnn(name):
    try:
        import torchvision.models as tvm
        return getattr(tvm, name)(), "torchvision"
    except Exception:
        return {"resnet50": ResNet50, "mobilenet_v2": MobileNetV2, "efficientnet_b0": EfficientNetB0}[name](), "local"


def export(model, example, path, input_name):
    model.eval()
    kwargs = {"opset_version": 17, "input_names": [input_name], "output_names": ["out"],
              "do_constant_folding": True}
    try:
        torch.onnx.export(model, example, path, dynamo=False, **kwargs)
    except TypeError:  # torch < 2.5 has no dynamo argument
        torch.onnx.export(model, example, path, **kwargs)
    except Exception as e:  # noqa: BLE001  (a torch without the TorchScript exporter)
        print(f"dynamo=False export failed ({type(e).__name__}: {e}); trying dynamo=True", flush=True)
        torch.onnx.export(model, (example,), path, dynamo=True, external_data=False, **kwargs)


def main():
    out = sys.argv[1]
    rehearsal = "--rehearsal" in sys.argv
    os.makedirs(out, exist_ok=True)
    # (name, batch): batch 2 for the accuracy comparisons, the benchmark batches
    cnn_jobs = [("resnet50", 2), ("mobilenet_v2", 2), ("efficientnet_b0", 2), ("resnet50", 1)]
    enc_jobs = [2]
    if not rehearsal:
        cnn_jobs.append(("resnet50", 64))
        enc_jobs.append(32)
    models = {}
    with torch.no_grad():
        for name, batch in cnn_jobs:
            if name not in models:
                models[name] = cnn(name)
            m, src = models[name]
            path = os.path.join(out, f"{name}_b{batch}.onnx")
            export(m, torch.randn(batch, 3, 224, 224), path, "input")
            print(f"exported {path} ({src})", flush=True)
        for batch in enc_jobs:
            torch.manual_seed(1)
            enc = Encoder(batch, layers=2 if rehearsal else 4)
            path = os.path.join(out, f"encoder_b{batch}.onnx")
            export(enc, torch.randint(0, 30522, (batch, 128)), path, "input_ids")
            print(f"exported {path}", flush=True)


if __name__ == "__main__":
    main()
