#!/bin/bash
# test/cuda/run.sh: the GPU check of the CUDA execution provider, run from the
# repository root on a machine with an NVIDIA GPU and no PostgreSQL:
#
#   make cuda-bundle                 # here, where the engine builds
#   bash test/cuda/run.sh            # there, with .cudabundle/ carried along
#
# Prints the GPU, driver and versions, then
#   (a) the ONNX backend conformance with providers cuda,cpu, and again with
#       --no-fallback (tests not entirely on CUDA count as FALLBACK);
#   (b) exported networks (resnet50, mobilenet_v2, efficientnet_b0, a
#       BERT-shaped encoder): CUDA vs our CPU provider vs onnxruntime, and
#       node placement;
#   (c) the benchmark: resnet50 batch 1 and 64, the encoder batch 32, ours
#       (fp32 and fp16) against onnxruntime's CUDA provider, or torch eager.
# Writes results.md/results.json (and the logs) to $OUT when OUT is set.
# Without a usable GPU it says so and exits 0.  OX_CUDA_REHEARSAL=1 runs the
# whole script with providers=cpu and small sizes (to debug it without a GPU);
# PYTHON / EXPORT_PYTHON choose the interpreters (python3 by default).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
B="$ROOT/.cudabundle"
REHEARSAL=${OX_CUDA_REHEARSAL:-0}
PY=${PYTHON:-python3}
EXPORT_PY=${EXPORT_PYTHON:-$PY}
export EXPORT_PYTHON="$EXPORT_PY"	# check.py runs the torch baseline with it
START=$(date +%s)
if [ -n "${OUT:-}" ]; then
	mkdir -p "$OUT"
	exec > >(tee "$OUT/run.log") 2>&1
fi
elapsed() { echo $(( $(date +%s) - START )); }
section() { echo; echo "=== $* (t=$(elapsed)s)"; }

if [ ! -f "$B/tools.tar.xz" ] || [ ! -f "$B/onnx_test_data.tar.xz" ]; then
	echo "run.sh: $B is missing or incomplete: run 'make cuda-bundle' where the engine builds and carry .cudabundle"
	exit 2
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/oxcuda.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
tar xJf "$B/tools.tar.xz" -C "$WORK" || { echo "run.sh: cannot unpack tools.tar.xz"; exit 2; }

# ---- libraries: ours, then CUDA's (toolkit, distribution, pip wheels) ------
# torch runs with the original path (its own CUDA libraries; our serial
# OpenBLAS would shadow the distribution's BLAS that a system torch uses)
export ORIG_LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}"
LIBS="$WORK/lib"
SITE=$("$PY" -c 'import site, sys; print(" ".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null || true)
for want in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcudnn.so.9; do
	found=""
	for d in /usr/local/cuda/lib64 /usr/local/cuda*/lib64 /usr/local/cuda*/targets/x86_64-linux/lib \
		/usr/lib/x86_64-linux-gnu $(for s in $SITE; do echo "$s"/nvidia/*/lib "$s"/nvidia/cu13/lib "$s"/torch/lib; done); do
		if [ -e "$d/$want" ]; then found="$d"; break; fi
	done
	if [ -n "$found" ]; then
		case ":$LIBS:" in *":$found:"*) ;; *) LIBS="$LIBS:$found" ;; esac
	else
		echo "run.sh: warning: $want not found"
	fi
done
export LD_LIBRARY_PATH="$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OX_CAPI_LIB="$WORK/bin/libox_capi.so"
CONF="$WORK/bin/ox_conformance"
if ldd "$CONF" | grep -q "not found"; then
	echo "run.sh: unresolved libraries:"; ldd "$CONF" | grep "not found"
	echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
	exit 2
fi

section "machine"
echo "commit: $(cat "$B/commit" 2>/dev/null) (bundle), $(git rev-parse --short HEAD 2>/dev/null) (tree)"
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
if [ "$REHEARSAL" = 1 ]; then
	echo "REHEARSAL: providers=cpu, small sizes; nothing here runs on a GPU"
	PROVIDERS=cpu
else
	if ! command -v nvidia-smi >/dev/null 2>&1 || ! timeout 30 nvidia-smi -L >/dev/null 2>&1; then
		echo "SKIP: no NVIDIA GPU or driver here (nvidia-smi unavailable); nothing to check"
		exit 0
	fi
	PROVIDERS=cuda,cpu
fi
timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>/dev/null
timeout 30 nvidia-smi 2>/dev/null | head -12
"$PY" - <<'PYEOF'
import ctypes, os, sys
print("python", sys.version.split()[0])
for mod in ("numpy", "onnx", "onnxruntime", "torch", "torchvision"):
    try:
        m = __import__(mod)
        extra = ""
        if mod == "onnxruntime":
            extra = " providers=" + ",".join(m.get_available_providers())
        if mod == "torch":
            extra = f" cuda={m.version.cuda} available={m.cuda.is_available()}"
        print(f"{mod} {m.__version__}{extra}")
    except Exception as e:
        print(f"{mod}: not available ({type(e).__name__})")
lib = ctypes.CDLL(os.environ["OX_CAPI_LIB"])
why = ctypes.create_string_buffer(512)
ok = lib.oxc_cuda_usable(0, why, 512)
print("onnx_pg cuda usable:", bool(ok), why.value.decode())
for name in ("libcudart.so.13", "libcublas.so.13", "libcudnn.so.9"):
    try:
        ctypes.CDLL(name)
        print("loaded", name)
    except OSError as e:
        print("cannot load", name, e)
try:
    rt = ctypes.CDLL("libcudart.so.13"); v = ctypes.c_int()
    rt.cudaRuntimeGetVersion(ctypes.byref(v)); print("cudart version", v.value)
    rt.cudaDriverGetVersion(ctypes.byref(v)); print("driver supports CUDA", v.value)
    dn = ctypes.CDLL("libcudnn.so.9"); dn.cudnnGetVersion.restype = ctypes.c_size_t
    print("cudnn version", dn.cudnnGetVersion())
except Exception as e:
    print("version query failed:", e)
PYEOF
if [ "$REHEARSAL" != 1 ]; then
	WHY=$("$PY" -c 'import ctypes, os
lib = ctypes.CDLL(os.environ["OX_CAPI_LIB"]); why = ctypes.create_string_buffer(512)
print("" if lib.oxc_cuda_usable(0, why, 512) else why.value.decode())')
	if [ -n "$WHY" ]; then
		echo "SKIP: the engine cannot use the GPU: $WHY"
		exit 0
	fi
fi

# ---- (a) conformance ---------------------------------------------------------
section "(a) conformance, providers $PROVIDERS"
tar xJf "$B/onnx_test_data.tar.xz" -C "$WORK"
DIRS="$WORK/node $WORK/simple $WORK/pytorch-converted $WORK/pytorch-operator"
SHARDS=$(nproc 2>/dev/null || echo 4)
[ "$SHARDS" -gt 16 ] && SHARDS=16
[ "$REHEARSAL" = 1 ] && SHARDS=2
LIST="$WORK/tests.txt"
for d in $DIRS; do for t in "$d"/*/; do [ -f "$t/model.onnx" ] && echo "${t%/}"; done; done > "$LIST"
[ "$REHEARSAL" = 1 ] && { grep -E "/test_(relu|add|matmul|gemm|conv|softmax)" "$LIST" > "$LIST.r"; mv "$LIST.r" "$LIST"; }
echo "$(wc -l < "$LIST") tests in $SHARDS shards"
conformance() {	# $1 = tag, rest = runner flags
	local tag=$1; shift
	rm -f "$WORK"/shard.*
	split -n r/"$SHARDS" "$LIST" "$WORK/shard."
	local pids=""
	for s in "$WORK"/shard.*; do
		# (in-process: a child per test would set CUDA up anew each time)
		timeout 80 "$CONF" --in-process --providers "$PROVIDERS" "$@" --report "$s.tsv" $(cat "$s") > "$s.log" 2>&1 &
		pids="$pids $!"
	done
	wait $pids	# (a bare wait would also wait for the tee of the log)
	cat "$WORK"/shard.*.tsv > "$WORK/conformance_$tag.tsv" 2>/dev/null
	awk -F'\t' '{n[$2]++; t++} END {printf "conformance (%s): %d passed, %d failed, %d unsupported, %d crashed, %d fallback, %d total\n", "'"$tag"'", n["PASS"], n["FAIL"], n["UNSUPPORTED"], n["CRASH"], n["FALLBACK"], t}' "$WORK/conformance_$tag.tsv"
	grep -hE "^(FAIL|CRASH)" "$WORK"/shard.*.log | head -40
	[ -n "${OUT:-}" ] && mkdir -p "$OUT" && cp "$WORK/conformance_$tag.tsv" "$OUT/"
}
conformance fallback
section "(a) conformance, providers $PROVIDERS, --no-fallback"
conformance nofallback --no-fallback
echo "fallback reasons (most frequent CPU ops):"
awk -F'\t' '$2=="FALLBACK" {print $3}' "$WORK/conformance_nofallback.tsv" | sed 's/.*on the CPU://' | tr ' ' '\n' | grep -v '^$' | sort | uniq -c | sort -rn | head -25

# ---- (b) + (c) networks ---------------------------------------------------------
section "(b) export networks"
MODELS="$WORK/models"
EXP_ARGS=""
[ "$REHEARSAL" = 1 ] && EXP_ARGS="--rehearsal"
LD_LIBRARY_PATH="$ORIG_LD_LIBRARY_PATH" timeout 120 "$EXPORT_PY" test/cuda/models.py "$MODELS" $EXP_ARGS 2>&1 | grep -vi "warn" | tail -20
CHECK_ARGS=""
[ "$REHEARSAL" = 1 ] && CHECK_ARGS="--rehearsal"
section "(b) accuracy and placement"
OX_CHECK_PARTS=accuracy OX_CHECK_TAG=_accuracy timeout 90 "$PY" test/cuda/check.py "$MODELS" $CHECK_ARGS
RC_ACC=$?
section "(c) benchmark"
OX_CHECK_PARTS=bench OX_CHECK_TAG=_bench timeout 150 "$PY" test/cuda/check.py "$MODELS" $CHECK_ARGS
RC_BENCH=$?
section "done"
echo "accuracy rc=$RC_ACC bench rc=$RC_BENCH"
if [ -n "${OUT:-}" ]; then
	cat "$OUT/results_bench.md" "$OUT/results_accuracy.md" > "$OUT/results.md" 2>/dev/null
	"$PY" -c 'import json, os, sys
out = os.environ["OUT"]; merged = {}
for tag in ("accuracy", "bench"):
    try:
        merged[tag] = json.load(open(os.path.join(out, f"results_{tag}.json")))
    except OSError:
        pass
json.dump(merged, open(os.path.join(out, "results.json"), "w"), indent=1)'
fi
[ $RC_ACC -eq 0 ] && [ $RC_BENCH -eq 0 ]
