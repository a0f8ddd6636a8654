#!/bin/bash
# bundle.sh: build, here, what test/cuda/run.sh needs on a GPU machine that has
# CUDA but no PostgreSQL, protobuf-c or OpenBLAS, and no network.
#
#   make cuda-bundle            (or: bash test/cuda/bundle.sh)
#
# .cudabundle/ (ignored by git) then holds tools.tar.xz: bin/ox_conformance and
# bin/libox_capi.so built with CUDA=on (debug info stripped), and lib/ with
# the Debian libraries they need that a CUDA machine lacks (protobuf-c, the
# serial OpenBLAS and its gfortran/quadmath); and onnx_test_data.tar.xz, the
# ONNX backend test data (node, simple, pytorch-converted, pytorch-operator).
# About 15 MB in all.  Carry .cudabundle with the working tree and run
#   bash test/cuda/run.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
B=.cudabundle
PY=${TEST_PYTHON:-$HOME/.cache/onnx_pg/venv/bin/python}
[ -x "$PY" ] || PY=python3

# (the shared lock the engineers of this tree build under)
LOCK=/tmp/onnx_pg_build.lock
flock "$LOCK" make -j2 CUDA=on tools
# an object built by a concurrent CUDA=off make would lack the provider: check
if ! nm -D build/libox_capi.so | grep -q " T ox_cuda_probe" || strings build/libox_capi.so | grep -q "built without CUDA"; then
	echo "bundle.sh: build/libox_capi.so lacks the CUDA provider; rebuilding the engine objects"
	rm -f build/cuda-*.stamp
	flock "$LOCK" make -j2 CUDA=on tools
	if strings build/libox_capi.so | grep -q "built without CUDA"; then
		echo "bundle.sh: still no CUDA provider in build/libox_capi.so"
		exit 1
	fi
fi
rm -rf "$B"
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$B" "$STAGE/bin" "$STAGE/lib"
strip --strip-debug -o "$STAGE/bin/ox_conformance" build/ox_conformance
strip --strip-debug -o "$STAGE/bin/libox_capi.so" build/libox_capi.so
# the non-CUDA, non-libc shared libraries the tools load
for lib in $(ldd build/ox_conformance build/libox_capi.so | awk '/=>/ {print $3}' | sort -u); do
	case "$(basename "$lib")" in
		libprotobuf-c.so*|libopenblas*.so*|libgfortran.so*|libquadmath.so*)
			cp -L "$lib" "$STAGE/lib/" ;;
	esac
done
XZ_OPT=-9 tar cJf "$B/tools.tar.xz" -C "$STAGE" bin lib
DATA=$("$PY" -c "import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), 'backend/test/data'))")
tar cJf "$B/onnx_test_data.tar.xz" -C "$DATA" node simple pytorch-converted pytorch-operator
"$PY" -c "import onnx; print(onnx.__version__)" > "$B/onnx_test_data.version"
git rev-parse HEAD > "$B/commit" 2>/dev/null || true
grep -qx '/.cudabundle/' .git/info/exclude 2>/dev/null || echo '/.cudabundle/' >> .git/info/exclude
du -sh "$B"
ls -la "$B"
tar tJvf "$B/tools.tar.xz"
