# onnx_pg: a PostgreSQL extension (PGXS) wrapped around a PostgreSQL-independent
# inference engine.  The engine objects also build into build/libox.a, which
# the unit tests, the conformance runner and the benchmarks link.
#
#   make && make install        build and install the extension
#   make unit                   engine unit tests (no server)
#   make installcheck           pg_regress suites in sql/ against a running server
#   make tools                  standalone engine tools (conformance runner, C API library)
#
# CUDA execution provider (docs/cuda.md):
#   CUDA=auto (default)  on when $(CUDA_HOME)/bin/nvcc exists (CUDA_HOME defaults
#                        to /usr/local/cuda); the extension and every tool then
#                        link libcudart, cuBLAS and cuDNN, and still load and run
#                        on machines without a GPU or driver
#   CUDA=on              require nvcc;  CUDA=off  never build the provider
#   make cuda-bundle     tools built with CUDA=on plus the libraries and test data
#                        that test/cuda/run.sh needs on a GPU machine (.cudabundle/)
# Without pg_config (a GPU machine with no PostgreSQL) the PGXS part is skipped
# and the default goal is "tools": make tools CUDA=on PG_CONFIG=none.

EXTENSION = onnx_pg
EXTVERSION := $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" onnx_pg.control)
MODULE_big = onnx_pg

PG_CONFIG ?= pg_config

CUDA ?= auto
CUDA_HOME ?= /usr/local/cuda
NVCC ?= $(CUDA_HOME)/bin/nvcc
ifeq ($(CUDA),on)
ifeq ($(wildcard $(NVCC)),)
$(error CUDA=on but $(NVCC) does not exist (set CUDA_HOME))
endif
CUDA_ENABLED = 1
else ifeq ($(CUDA),auto)
ifneq ($(wildcard $(NVCC)),)
CUDA_ENABLED = 1
endif
else ifneq ($(CUDA),off)
$(error CUDA must be auto, on or off)
endif

# Every C file of these engine folders is part of the engine.
ENGINE_DIRS = src/util src/model src/model/passes src/kernels src/kernels/cpu src/runtime
ENGINE_SRCS = $(foreach d,$(ENGINE_DIRS),$(wildcard $(d)/*.c))
ENGINE_OBJS = $(ENGINE_SRCS:.c=.o) build/proto/onnx.pb-c.o
ifdef CUDA_ENABLED
# host C of the provider (gcc, CUDA headers) and device code (nvcc)
CUDA_C_OBJS = $(patsubst %.c,%.o,$(wildcard src/kernels/cuda/*.c))
CUDA_CU_OBJS = $(patsubst %.cu,%.o,$(wildcard src/kernels/cuda/*.cu))
ENGINE_OBJS += $(CUDA_C_OBJS) $(CUDA_CU_OBJS)
# cuBLAS and cuDNN are opened at the first CUDA session (src/kernels/cuda/cuda_libs.h),
# not linked: the rpath is where that dlopen looks first
CUDA_LIBS = -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart -ldl -lstdc++
CUDA_MODE = on
else
CUDA_LIBS =
CUDA_MODE = off
endif
PG_SRCS = $(wildcard src/pg/*.c)
PG_OBJS = $(PG_SRCS:.c=.o)

OBJS = $(ENGINE_OBJS) $(PG_OBJS)

DATA_built = build/$(EXTENSION)--$(EXTVERSION).sql
REGRESS = $(patsubst sql/%.sql,%,$(sort $(wildcard sql/*.sql)))
REGRESS_OPTS = --load-extension=$(EXTENSION)
EXTRA_CLEAN = build src/*/*.o src/*/*/*.o .cudabundle

PG_CPPFLAGS = -Isrc -Ibuild -Ibuild/proto
# Single-threaded OpenBLAS when the distribution has it: the engine threads
# its own GEMM (ox_parallel_for), and the threaded OpenBLAS starts a thread
# as soon as the library loads -- in the postmaster, with preloading.
OPENBLAS_SERIAL_DIR ?= $(wildcard /usr/lib/$(shell $(CC) -print-multiarch)/openblas-serial)
ifneq ($(OPENBLAS_SERIAL_DIR),)
BLAS_LIBS = -L$(OPENBLAS_SERIAL_DIR) -Wl,-rpath,$(OPENBLAS_SERIAL_DIR) -lopenblas
else
BLAS_LIBS = -lopenblas
endif
SHLIB_LINK = -lprotobuf-c $(BLAS_LIBS) $(CUDA_LIBS) -lm -lpthread

# The engine is C11 and declares variables where they are used.
ENGINE_CFLAGS = -std=gnu11 -Wno-declaration-after-statement -fPIC

# No LLVM bitcode: JIT inlining of this library brings nothing, and the
# bitcode install step (llvm-lto) has crashed on these objects.
override with_llvm = no

PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)
ifneq ($(PGXS),)
include $(PGXS)
else
# engine-only build: no PostgreSQL on this machine
.DEFAULT_GOAL := tools
CFLAGS ?= -O2 -g
CPPFLAGS += $(PG_CPPFLAGS)
clean:
	rm -rf $(EXTRA_CLEAN)
.PHONY: clean
endif

$(ENGINE_OBJS): CFLAGS += $(ENGINE_CFLAGS)
ifdef CUDA_ENABLED
$(ENGINE_OBJS): CFLAGS += -DOX_WITH_CUDA
# (cuDNN 9 marks the legacy convolution API deprecated; it is still shipped)
$(CUDA_C_OBJS): CFLAGS += -I$(CUDA_HOME)/include -Wno-deprecated-declarations
NVCC_FLAGS = -O3 -std=c++17 -Xcompiler -fPIC -DOX_WITH_CUDA -Isrc -Ibuild -Ibuild/proto \
	-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_90,code=compute_90
src/kernels/cuda/%.o: src/kernels/cuda/%.cu $(wildcard src/kernels/cuda/*.h)
	$(NVCC) $(NVCC_FLAGS) -c -o $@ $<
endif
# objects built with the other CUDA setting must not be reused: a stamp per
# mode, the other one removed, makes every engine object older than it
CUDA_STAMP = build/cuda-$(CUDA_MODE).stamp
$(CUDA_STAMP):
	@mkdir -p build
	rm -f build/cuda-*.stamp
	touch $@
$(ENGINE_OBJS): $(CUDA_STAMP)
# Kernels: let GCC vectorize loops of unknown length (-O2 keeps them scalar).
# No -march and no fast-math: binaries stay portable and results exact;
# ISA-specific code uses target attributes chosen by cpuid at run time.
$(filter src/kernels/cpu/%.o,$(ENGINE_OBJS)): CFLAGS += -O3
$(ENGINE_OBJS) $(PG_OBJS): build/proto/onnx.pb-c.h
# PGXS does not track header dependencies: rebuild when any header changes
# (coarse, but a stale object with an old struct layout corrupts memory)
$(ENGINE_OBJS) $(PG_OBJS): $(wildcard src/*/*.h src/*/*/*.h)

# One run of protoc-c writes both files: a grouped target (&:, GNU make 4.3),
# so that make does not run it again for the second file, whose rewritten
# header would make every object out of date for the next make
build/proto/onnx.pb-c.c build/proto/onnx.pb-c.h &: proto/onnx.proto
	@mkdir -p build/proto
	protoc-c --proto_path=proto --c_out=build/proto proto/onnx.proto

build/proto/onnx.pb-c.o: build/proto/onnx.pb-c.c
	$(CC) $(CFLAGS) $(ENGINE_CFLAGS) -Ibuild/proto -c -o $@ $<

build/$(EXTENSION)--$(EXTVERSION).sql: src/pg/$(EXTENSION).sql
	@mkdir -p build
	cp $< $@

# ---- standalone engine library and tools --------------------------------
TOOL_CFLAGS = $(ENGINE_CFLAGS) -O2 -g -Wall -Wno-format-truncation -Isrc -Ibuild -Ibuild/proto
# whole-archive: kernel families register through tables nothing references by name
TOOL_LIBS = -Wl,--whole-archive build/libox.a -Wl,--no-whole-archive -lprotobuf-c $(BLAS_LIBS) $(CUDA_LIBS) -lm -lpthread

build/libox.a: $(ENGINE_OBJS)
	@mkdir -p build
	rm -f $@
	$(AR) rcs $@ $(filter %.o,$^)

UNIT_SRCS = $(wildcard test/unit/test_*.c)
UNIT_BINS = $(patsubst test/unit/%.c,build/unit/%,$(UNIT_SRCS))

build/unit/%: test/unit/%.c build/libox.a test/unit/kernel_test.h
	@mkdir -p build/unit
	$(CC) $(TOOL_CFLAGS) -Itest/unit -o $@ $< $(TOOL_LIBS)

build/libox_capi.so: tools/ox_capi.c build/libox.a
	$(CC) $(TOOL_CFLAGS) -shared -o $@ $< $(TOOL_LIBS)

tools: build/libox_capi.so build/ox_conformance

unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done

.PHONY: tools unit

# ---- conformance (ONNX backend tests) ------------------------------------
# The node tests plus the simple, pytorch-converted, pytorch-operator and
# light model suites of the pinned onnx package; the pass count must not drop
# below test/conformance/floor.
ONNX_TEST_DATA ?= $(shell python3 -c "import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), 'backend/test/data'))" 2>/dev/null)
ONNX_NODE_TESTS ?= $(ONNX_TEST_DATA)/node
CONFORMANCE_FLOOR := $(shell cat test/conformance/floor 2>/dev/null || echo 0)

build/ox_conformance: test/conformance/runner.c build/libox.a
	$(CC) $(TOOL_CFLAGS) -o $@ $< $(TOOL_LIBS)

# (PGXS already defines PYTHON as the server build's interpreter)
TEST_PYTHON ?= python3

build/light: test/conformance/prepare_light.py
	$(TEST_PYTHON) test/conformance/prepare_light.py $@

conformance: build/ox_conformance build/light
	build/ox_conformance --floor $(CONFORMANCE_FLOOR) --report build/conformance.tsv $(ONNX_NODE_TESTS) \
		$(dir $(ONNX_NODE_TESTS))simple $(dir $(ONNX_NODE_TESTS))pytorch-converted \
		$(dir $(ONNX_NODE_TESTS))pytorch-operator build/light

.PHONY: conformance

operators-doc: build/ox_conformance
	build/ox_conformance --report build/conformance.tsv $(ONNX_NODE_TESTS) > build/conformance.log || true
	python3 test/conformance/gen_operators.py --runner build/ox_conformance --report build/conformance.tsv \
		--tests $(ONNX_NODE_TESTS) --out docs/operators.md

.PHONY: operators-doc

# ---- benchmarks (issue 4): see bench/README.md ---------------------------
BENCH_ARGS ?=

# the in-SQL variant first (bench/sql.sh: a throwaway cluster as root unless
# PGHOST/PGPORT name a server; skipped where there can be none): run.py puts
# its table into docs/performance.md
bench: all build/libox_capi.so
	bash bench/sql.sh
	python3 bench/run.py $(BENCH_ARGS)

bench-quick: all build/libox_capi.so
	bash bench/sql.sh --quick
	python3 bench/run.py --quick $(BENCH_ARGS)

bench-sql: all
	bash bench/sql.sh $(BENCH_ARGS)

# in-query throughput (issue 5): a throwaway cluster unless PGHOST/PGPORT name
# a server; bench/inquery/run.sh, bench/inquery/run.py (options in BENCH_ARGS)
bench-inquery: all build/bench_inquery/engine_rate
	bash bench/inquery/run.sh $(BENCH_ARGS)

build/bench_inquery/engine_rate: bench/inquery/engine_rate.c build/libox.a
	@mkdir -p build/bench_inquery
	$(CC) $(TOOL_CFLAGS) -o $@ $< $(TOOL_LIBS)

# quantized models (issue 6): ours int8 vs our fp32 vs onnxruntime, CPU time
build/oxquant: bench/quant/oxquant.c build/libox.a
	$(CC) $(TOOL_CFLAGS) -o $@ $< $(TOOL_LIBS)

bench-quant: build/libox_capi.so build/oxquant
	$(TEST_PYTHON) bench/quant/run.py --oxquant build/oxquant $(BENCH_ARGS)

# scikit-learn and PyTorch models beyond issue 4's list, side by side with
# onnxruntime (bench/zoo.py; the PyTorch ones exported by Debian's torch when
# /usr/bin/python3 has it) into docs/performance_zoo.md
bench-zoo: build/libox_capi.so
	if /usr/bin/python3 -c "import torch" 2>/dev/null; then /usr/bin/python3 bench/zoo_models.py; fi
	$(TEST_PYTHON) bench/zoo.py $(BENCH_ARGS)

.PHONY: bench bench-quick bench-sql bench-inquery bench-quant bench-zoo

# ---- CUDA provider: the GPU-machine bundle (see test/cuda/run.sh) --------
cuda-bundle:
	TEST_PYTHON=$(TEST_PYTHON) test/cuda/bundle.sh

.PHONY: cuda-bundle
