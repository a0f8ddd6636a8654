#!/usr/bin/python3
"""Export the "real network" test models to ONNX (opset 17, random weights).

Runs with Debian's /usr/bin/python3 and its python3-torch / python3-torchvision
packages (torch 1.13, which exports up to opset 17).  It needs neither the onnx
Python package nor onnxruntime, and downloads nothing: every model is built
from torch.nn modules (torchvision with weights=None) and gets seeded random
weights, BatchNorm running statistics and LayerNorm affine parameters included
(so that the folding passes see non-trivial values).

    /usr/bin/python3 test/models/networks/export.py            # every model
    /usr/bin/python3 test/models/networks/export.py lstm gru   # some of them
    /usr/bin/python3 test/models/networks/export.py --list

Where the files go (see MODELS below, "committed"):

  test/models/networks/<name>.onnx            the small models, committed as
                                              fixtures (each under ~3 MB)
  test/models/networks/generated/<name>.onnx  the big ones (torchvision CNNs),
                                              gitignored, made where torch is

The inputs each model takes, and how the tests draw them (seeded), are listed
in test/models/networks/manifest.json, which this script also rewrites.
test/engine/test_networks.py and test/e2e/test_networks.py compare onnx_pg
with onnxruntime on those inputs.
"""
import argparse
import json
import math
import os
import sys
import warnings

import torch
from torch import nn

OPSET = 17
HERE = os.path.dirname(os.path.abspath(__file__))
GENERATED = os.path.join(HERE, "generated")


# --------------------------------------------------------------------------
# sequence models

class LSTMTagger(nn.Module):
    """Token ids [N,T] -> Embedding(500, 32) -> 2-layer bidirectional LSTM(48)
    -> Linear(96, 7): per-token logits [N,T,7]."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(500, 32)
        self.lstm = nn.LSTM(32, 48, num_layers=2, bidirectional=True, batch_first=True)
        self.out = nn.Linear(96, 7)

    def forward(self, tokens):
        h, _ = self.lstm(self.emb(tokens))
        return self.out(h)


class GRURegressor(nn.Module):
    """Features [N,T,12] -> 2-layer GRU(40) -> Linear(40, 3): the per-step
    outputs [N,T,3] and the last layer's final hidden state [N,40]."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(12, 40, num_layers=2, batch_first=True)
        self.out = nn.Linear(40, 3)

    def forward(self, x):
        h, hn = self.gru(x)
        return self.out(h), hn[-1]


# --------------------------------------------------------------------------
# transformers

class TransformerEncoderModel(nn.Module):
    """src [N,S,64] and a key padding mask [N,S] (bool, true = padding) ->
    2-layer nn.TransformerEncoder (4 heads, feed-forward 128, ReLU) -> [N,S,64].
    batch_first=False inside, so that torch 1.13 does not take its fused
    fast path (which does not export)."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)

    def forward(self, src, padding_mask):
        y = self.encoder(src.transpose(0, 1), src_key_padding_mask=padding_mask)
        return y.transpose(0, 1)


BERT_CONFIG = dict(vocab_size=1000, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                   intermediate_size=512, max_position_embeddings=128, type_vocab_size=2,
                   layer_norm_eps=1e-12)


class BertSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads = c["num_attention_heads"]
        self.head_dim = c["hidden_size"] // self.heads
        self.query = nn.Linear(c["hidden_size"], c["hidden_size"])
        self.key = nn.Linear(c["hidden_size"], c["hidden_size"])
        self.value = nn.Linear(c["hidden_size"], c["hidden_size"])
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"])
        self.norm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])

    def split(self, x):
        n, s, _ = x.shape
        return x.view(n, s, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, mask_bias):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + mask_bias
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
        n, h, s, d = ctx.shape
        ctx = ctx.permute(0, 2, 1, 3).reshape(n, s, h * d)
        return self.norm(x + self.dense(ctx))


class BertLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = BertSelfAttention(c)
        self.intermediate = nn.Linear(c["hidden_size"], c["intermediate_size"])
        self.output = nn.Linear(c["intermediate_size"], c["hidden_size"])
        self.norm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])

    def forward(self, x, mask_bias):
        x = self.attention(x, mask_bias)
        h = nn.functional.gelu(self.intermediate(x))  # erf GELU, as BERT
        return self.norm(x + self.output(h))


class BertEncoder(nn.Module):
    """A BERT-shaped encoder built from BERT_CONFIG (the layout of Hugging Face's
    BertModel, no downloaded weights): word + position + token type embeddings,
    LayerNorm, layers of (self-attention with an additive mask, residual,
    LayerNorm, GELU feed-forward, residual, LayerNorm), and the tanh pooler.
    Inputs input_ids, attention_mask (1 = token, 0 = padding) and
    token_type_ids, int64 [N,S]; outputs last_hidden_state [N,S,H] and
    pooler_output [N,H]."""

    def __init__(self, c=BERT_CONFIG):
        super().__init__()
        self.word = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.position = nn.Embedding(c["max_position_embeddings"], c["hidden_size"])
        self.token_type = nn.Embedding(c["type_vocab_size"], c["hidden_size"])
        self.norm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])
        self.layers = nn.ModuleList([BertLayer(c) for _ in range(c["num_hidden_layers"])])
        self.pooler = nn.Linear(c["hidden_size"], c["hidden_size"])

    def forward(self, input_ids, attention_mask, token_type_ids):
        s = input_ids.shape[1]
        positions = torch.arange(s, dtype=torch.long).unsqueeze(0)
        x = self.word(input_ids) + self.position(positions) + self.token_type(token_type_ids)
        x = self.norm(x)
        mask_bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask_bias)
        return x, torch.tanh(self.pooler(x[:, 0]))


# --------------------------------------------------------------------------
# the list

def torchvision_model(name, **kw):
    def make():
        import torchvision
        return getattr(torchvision.models, name)(weights=None, **kw)
    return make


IMAGE = {"image": {"shape": ["N", 3, 224, 224], "dtype": "float32", "draw": "normal"}}

# name -> (constructor, committed?, inputs, outputs, dynamic axes, export batch)
# inputs: name -> {"shape" (str = dynamic axis), "dtype", "draw"}; "draw" says
# how the tests make the values (see test/engine/test_networks.py):
#   normal            standard normal
#   tokens:V          integers in [0, V)
#   padding_mask      bool, true on the trailing padding positions of each
#                     sequence (each sample keeps at least one token)
#   attention_mask    int64, 1 on the leading tokens, 0 on the padding
#   token_types       int64, 0 on the first half of the tokens, 1 after
MODELS = {
    "resnet18": (torchvision_model("resnet18"), False, IMAGE, ["logits"]),
    "mobilenet_v2": (torchvision_model("mobilenet_v2"), False, IMAGE, ["logits"]),
    "mobilenet_v3_small": (torchvision_model("mobilenet_v3_small"), False, IMAGE, ["logits"]),
    "efficientnet_b0": (torchvision_model("efficientnet_b0"), False, IMAGE, ["logits"]),
    # 10 classes instead of 1000: 2.9 MB instead of 4.9 MB, so it can be committed
    "squeezenet1_1": (torchvision_model("squeezenet1_1", num_classes=10), True, IMAGE, ["logits"]),
    "transformer_encoder": (
        TransformerEncoderModel, True,
        {"src": {"shape": ["N", "S", 64], "dtype": "float32", "draw": "normal"},
         "padding_mask": {"shape": ["N", "S"], "dtype": "bool", "draw": "padding_mask"}},
        ["output"]),
    "lstm_tagger": (
        LSTMTagger, True,
        {"tokens": {"shape": ["N", "T"], "dtype": "int64", "draw": "tokens:500"}},
        ["logits"]),
    "gru_regressor": (
        GRURegressor, True,
        {"x": {"shape": ["N", "T", 12], "dtype": "float32", "draw": "normal"}},
        ["y", "h_last"]),
    "bert_encoder": (
        BertEncoder, True,
        {"input_ids": {"shape": ["N", "S"], "dtype": "int64", "draw": "tokens:%d" % BERT_CONFIG["vocab_size"]},
         "attention_mask": {"shape": ["N", "S"], "dtype": "int64", "draw": "attention_mask"},
         "token_type_ids": {"shape": ["N", "S"], "dtype": "int64", "draw": "token_types"}},
        ["last_hidden_state", "pooler_output"]),
}
# concrete sizes for the dynamic axes: at export, and in the tests
EXPORT_DIMS = {"N": 2, "S": 12, "T": 9}


def randomize(model, seed):
    """Seeded random weights, plus random (valid) BatchNorm statistics and
    LayerNorm/BatchNorm affine parameters, which default to trivial values."""
    torch.manual_seed(seed)
    for m in model.modules():
        if hasattr(m, "reset_parameters") and not isinstance(m, (nn.BatchNorm2d, nn.LayerNorm)):
            m.reset_parameters()
    g = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                c = m.num_features
                m.running_mean.copy_(torch.randn(c, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(c, generator=g) + 0.5)
                m.weight.copy_(torch.rand(c, generator=g) + 0.5)
                m.bias.copy_(torch.randn(c, generator=g) * 0.1)
            elif isinstance(m, nn.LayerNorm) and m.elementwise_affine:
                n = m.weight.numel()
                m.weight.copy_(torch.rand(n, generator=g).view_as(m.weight) + 0.5)
                m.bias.copy_(torch.randn(n, generator=g).view_as(m.bias) * 0.1)
    return model


def example_inputs(inputs):
    g = torch.Generator().manual_seed(0)
    out = []
    for spec in inputs.values():
        shape = [EXPORT_DIMS[d] if isinstance(d, str) else d for d in spec["shape"]]
        draw = spec["draw"]
        if draw == "normal":
            out.append(torch.randn(*shape, generator=g))
        elif draw.startswith("tokens:"):
            out.append(torch.randint(0, int(draw[7:]), shape, generator=g))
        elif draw == "padding_mask":
            m = torch.zeros(*shape, dtype=torch.bool)
            m[0, -3:] = True
            out.append(m)
        elif draw == "attention_mask":
            m = torch.ones(*shape, dtype=torch.long)
            m[0, -3:] = 0
            out.append(m)
        elif draw == "token_types":
            m = torch.zeros(*shape, dtype=torch.long)
            m[:, shape[1] // 2:] = 1
            out.append(m)
        else:
            raise ValueError(draw)
    return tuple(out)


def path_of(name):
    committed = MODELS[name][1]
    return os.path.join(HERE if committed else GENERATED, name + ".onnx")


def export(name, seed):
    make, committed, inputs, outputs = MODELS[name]
    model = randomize(make(), seed).eval()
    args = example_inputs(inputs)
    dynamic = {}
    for n, spec in inputs.items():
        dynamic[n] = {i: d for i, d in enumerate(spec["shape"]) if isinstance(d, str)}
    for o in outputs:
        dynamic[o] = {0: "N"}
    path = path_of(name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.no_grad():
            torch.onnx.export(model, args, path, opset_version=OPSET, input_names=list(inputs),
                              output_names=outputs, dynamic_axes=dynamic, do_constant_folding=True)
    return path


def write_manifest():
    manifest = {
        "opset": OPSET,
        "export_dims": EXPORT_DIMS,
        "models": {
            name: {
                "file": os.path.relpath(path_of(name), HERE),
                "committed": committed,
                "inputs": inputs,
                "outputs": outputs,
            }
            for name, (_, committed, inputs, outputs) in MODELS.items()
        },
    }
    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=False)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="models to export (default: all)")
    ap.add_argument("--list", action="store_true", help="list the models and exit")
    ap.add_argument("--generated-only", action="store_true",
                    help="export only the models that are not committed (the big ones)")
    args = ap.parse_args()
    if args.list:
        for name, (_, committed, _, _) in MODELS.items():
            print("%-20s %s" % (name, "committed" if committed else "generated"))
        return 0
    names = args.names or [n for n in MODELS if not (args.generated_only and MODELS[n][1])]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        ap.error("unknown model(s): %s (see --list)" % ", ".join(unknown))
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    for i, name in enumerate(MODELS):
        if name in names:
            path = export(name, seed=1000 + i)
            print("%-20s %8.2f MB  %s" % (name, os.path.getsize(path) / 1e6, os.path.relpath(path)))
    write_manifest()
    return 0


if __name__ == "__main__":
    sys.exit(main())
