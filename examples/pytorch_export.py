"""Part of examples/pytorch_to_postgres.sh: train a small PyTorch classifier
and export it to ONNX.

    /usr/bin/python3 examples/pytorch_export.py OUTDIR

Writes OUTDIR/model.onnx (input "input" [N, 8], output "probabilities"
[N, 3]), OUTDIR/samples.csv (id, features as a PostgreSQL array literal) and
OUTDIR/expected.csv (id, PyTorch's probabilities) for 1000 samples.
Needs only torch (Debian: apt-get install python3-torch).
"""
import csv
import os
import sys

import torch

out = sys.argv[1]
torch.manual_seed(0)

# three classes of points in 8 dimensions
centers = torch.randn(3, 8)
labels = torch.randint(0, 3, (3000,))
X = centers[labels] + torch.randn(3000, 8)

model = torch.nn.Sequential(
    torch.nn.Linear(8, 32), torch.nn.ReLU(),
    torch.nn.Linear(32, 32), torch.nn.ReLU(),
    torch.nn.Linear(32, 3), torch.nn.Softmax(dim=1))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
loss_fn = torch.nn.NLLLoss()
for step in range(300):
    opt.zero_grad()
    loss = loss_fn(torch.log(model(X) + 1e-9), labels)
    loss.backward()
    opt.step()
model.eval()
print("trained: loss %.4f" % loss.item())

torch.onnx.export(model, X[:1], os.path.join(out, "model.onnx"),
                  input_names=["input"], output_names=["probabilities"],
                  dynamic_axes={"input": {0: "N"}, "probabilities": {0: "N"}},
                  opset_version=17)
print("exported", os.path.join(out, "model.onnx"))

samples = X[:1000]
with torch.no_grad():
    probs = model(samples)
with open(os.path.join(out, "samples.csv"), "w", newline="") as f:
    w = csv.writer(f)
    for i, x in enumerate(samples.tolist()):
        w.writerow([i, "{" + ",".join(repr(v) for v in x) + "}", int(labels[i])])
with open(os.path.join(out, "expected.csv"), "w", newline="") as f:
    w = csv.writer(f)
    for i, p in enumerate(probs.tolist()):
        w.writerow([i, "{" + ",".join(repr(v) for v in p) + "}"])
print("wrote 1000 samples and PyTorch's outputs")
