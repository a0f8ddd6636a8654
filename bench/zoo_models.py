#!/usr/bin/python3
"""Export the PyTorch models of bench/zoo.py (the models beyond issue 4's list
that people score in a database: sequence models, 1-D convolutions, a small
transformer, an embedding bag, a tabular residual MLP; from torchvision, when
python3-torchvision is installed, a segmentation network, AlexNet, whose
Linear layers are most of its 244 MB, Inception-v3, EfficientNet-B0 and the
image classifiers of other designs: grouped convolutions (ResNeXt-50,
RegNetY-400MF), dense concatenation (DenseNet-121), channel shuffles
(ShuffleNetV2), fire modules (SqueezeNet), inception modules (GoogLeNet) and
7x7 depthwise convolutions with LayerNorm and GELU (ConvNeXt-Tiny)) and the
vision transformers (ViT-B/16, Swin-T), random seeded weights.

Runs with Debian's /usr/bin/python3 and python3-torch (torch 1.13, opset 17);
nothing is downloaded.

    /usr/bin/python3 bench/zoo_models.py [--out bench/models/zoo]

Every model has one input "x" with a dynamic batch (first) dimension; the
shapes per example are in SHAPES, written next to them as shapes.json for
bench/zoo.py.
"""
import argparse
import json
import os
import warnings

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))

# name -> per-example input shape (int64 token ids for "embed", float otherwise)
SHAPES = {"lstm": (50, 16), "gru": (50, 16), "conv1d": (8, 256), "tinytf": (64, 128),
          "embed": (20,), "tabres": (40,), "lraspp": (3, 224, 224), "alexnet": (3, 224, 224),
          "inception": (3, 299, 299), "efficientnet": (3, 224, 224), "resnext": (3, 224, 224),
          "regnet": (3, 224, 224), "densenet": (3, 224, 224), "shufflenet": (3, 224, 224),
          "squeezenet": (3, 224, 224), "googlenet": (3, 224, 224), "convnext": (3, 224, 224),
          "vit": (3, 224, 224), "swin": (3, 224, 224)}


class LSTMNet(nn.Module):
    """one LSTM layer over 50 steps, the last state to one score"""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(16, 128, batch_first=True)
        self.head = nn.Linear(128, 1)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.head(y[:, -1])


class GRUNet(nn.Module):
    """two GRU layers (linear_before_reset, as PyTorch exports them)"""

    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(16, 128, num_layers=2, batch_first=True)
        self.head = nn.Linear(128, 1)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.head(y[:, -1])


class Conv1dNet(nn.Module):
    """a signal classifier: Conv1d, BatchNorm, ReLU, MaxPool, global average"""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv1d(8, 32, 5, padding=2), nn.BatchNorm1d(32), nn.ReLU(), nn.MaxPool1d(2),
                                  nn.Conv1d(32, 64, 5, padding=2), nn.ReLU(), nn.AdaptiveAvgPool1d(1))
        self.head = nn.Linear(64, 3)

    def forward(self, x):
        return self.head(self.body(x).flatten(1))


class TinyTransformer(nn.Module):
    """two nn.TransformerEncoderLayer (d 128, 4 heads, FFN 256), mean pooled"""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(128, 4, 256, batch_first=True, dropout=0.0)
        self.enc = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(128, 2)

    def forward(self, x):
        return self.head(self.enc(x).mean(1))


class EmbedBag(nn.Module):
    """20 token ids of a 10,000-word vocabulary, averaged, then an MLP"""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10000, 64)
        self.mlp = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, ids):
        return self.mlp(self.emb(ids).mean(1))


class TabResNet(nn.Module):
    """a tabular residual MLP: LayerNorm, Linear, GELU, Linear blocks"""

    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(40, 256)
        self.blocks = nn.ModuleList([nn.Sequential(nn.LayerNorm(256), nn.Linear(256, 512), nn.GELU(),
                                                   nn.Linear(512, 256)) for _ in range(3)])
        self.out = nn.Linear(256, 1)

    def forward(self, x):
        h = self.inp(x)
        for b in self.blocks:
            h = h + b(h)
        return self.out(h)


def lraspp():
    """LR-ASPP on MobileNetV3-Large (21 classes): dilated convolutions, and a
    bilinear upsampling of its scores to the full 224 x 224 at the end"""
    import torchvision
    return torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None)


# image classifiers from torchvision: name -> (constructor, its arguments besides weights=None)
CLASSIFIERS = {
    # five convolutions and three Linear layers of 9216 x 4096, 4096 x 4096 and 4096 x 1000
    # (the weights a session should hold once, whatever the batch)
    "alexnet": ("alexnet", {}),
    # modules of parallel branches joined by a Concat, and 3x3 average pools that PyTorch exports
    # as Pad then AveragePool; no auxiliary head.  init_weights=False: PyTorch's default
    # initialization, as for googlenet; torchvision's truncated normal (std 0.1) grows the logits
    # to 1e12, where float32 sums cancel
    "inception": ("inception_v3", {"aux_logits": False, "init_weights": False}),
    # SiLU (a Sigmoid and a Mul) after nearly every convolution, squeeze-and-excitation gates whose
    # middle 1x1 layers have 4 to 48 channels
    "efficientnet": ("efficientnet_b0", {}),
    # 3x3 layers in 32 groups of 4 to 32 channels
    "resnext": ("resnext50_32x4d", {}),
    # grouped 3x3 layers of 8 channels a group, squeeze-and-excitation
    "regnet": ("regnet_y_400mf", {}),
    # every layer's input the Concat of all the layers before it in its block
    "densenet": ("densenet121", {}),
    # channel split (Split), shuffle (Reshape, Transpose, Reshape), depthwise layers
    "shufflenet": ("shufflenet_v2_x1_0", {}),
    # fire modules: a 1x1 squeeze, then 1x1 and 3x3 expansions concatenated
    "squeezenet": ("squeezenet1_1", {}),
    # inception modules of four parallel branches, no auxiliary heads
    "googlenet": ("googlenet", {"aux_logits": False, "init_weights": False}),
    # 7x7 depthwise layers, LayerNorm over channels (a Transpose to channels-last and back), GELU,
    # per-channel layer scale
    "convnext": ("convnext_tiny", {}),
    # a 16x16 patch Conv, then 12 encoder layers of 12 heads over 197 tokens (nn.MultiheadAttention,
    # exported as MatMul, Softmax and the head Reshape/Transposes), LayerNorm and GELU
    "vit": ("vit_b_16", {}),
    # shifted-window attention: 7x7 windows cut and joined by Reshape/Transpose, the shift by Slice and
    # Concat, a relative position bias added to each window's scores, patch merging
    "swin": ("swin_t", {}),
}


def classifier(name):
    """a builder of CLASSIFIERS[name], random weights"""
    def build():
        import torchvision
        ctor, kwargs = CLASSIFIERS[name]
        model = getattr(torchvision.models, ctor)(weights=None, **kwargs)
        # ViT's classifier starts at zero (torchvision's init): every output would be 0 and the
        # comparison of the engines' outputs empty
        for m in model.modules():
            if isinstance(m, nn.Linear) and not m.weight.any():
                nn.init.normal_(m.weight, std=0.02)
        return model
    return build


BUILD = {"lstm": LSTMNet, "gru": GRUNet, "conv1d": Conv1dNet, "tinytf": TinyTransformer,
         "embed": EmbedBag, "tabres": TabResNet, "lraspp": lraspp}
BUILD.update({name: classifier(name) for name in CLASSIFIERS})
TORCHVISION = ("lraspp",) + tuple(CLASSIFIERS)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "models", "zoo"))
    ap.add_argument("--only", nargs="*", help="model names (the others already exported are kept)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    shapes = {}
    shapes_path = os.path.join(args.out, "shapes.json")
    if args.only and os.path.exists(shapes_path):
        with open(shapes_path) as f:
            shapes = json.load(f)
    for name, cls in BUILD.items():
        if args.only and name not in args.only:
            continue
        torch.manual_seed(0)
        try:
            model = cls().eval()
        except ImportError:
            assert name in TORCHVISION
            print("skipped %s: torchvision is not installed" % name)
            continue
        shape = (1,) + SHAPES[name]
        x = torch.randint(0, 10000, shape) if name == "embed" else torch.randn(shape)
        path = os.path.join(args.out, name + ".onnx")
        # not under no_grad: there nn.TransformerEncoderLayer takes a fused
        # fast path that torch 1.13 cannot export
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, x, path, input_names=["x"], output_names=["y"], opset_version=17,
                              dynamic_axes={"x": {0: "N"}, "y": {0: "N"}})
        print("wrote %s (%.1f MB)" % (path, os.path.getsize(path) / 1e6))
        shapes[name] = list(SHAPES[name])
    with open(shapes_path, "w") as f:
        json.dump(shapes, f)


if __name__ == "__main__":
    main()
