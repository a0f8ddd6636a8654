"""ctypes binding of the engine's flat C API (build/libox_capi.so), for engine
tests and benchmarks that run without a PostgreSQL server."""
import ctypes
import os

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
_LIB_PATH = os.environ.get("OX_CAPI_LIB", os.path.join(_HERE, "..", "..", "build", "libox_capi.so"))

# onnx TensorProto element types <-> numpy
_NP_OF = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32,
          7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}
_CODE_OF = {np.dtype(v): k for k, v in _NP_OF.items()}

_lib = None


def lib():
    global _lib
    if _lib is None:
        _lib = ctypes.CDLL(_LIB_PATH)
        _lib.oxc_create.restype = ctypes.c_void_p
        _lib.oxc_create.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                                    ctypes.c_char_p, ctypes.c_size_t]
        _lib.oxc_create_ex.restype = ctypes.c_void_p
        _lib.oxc_create_ex.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                                       ctypes.c_char_p, ctypes.c_int, ctypes.c_int64, ctypes.c_int,
                                       ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
        _lib.oxc_node_count.argtypes = [ctypes.c_void_p]
        _lib.oxc_node_info.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                       ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p)]
        for f in ("oxc_fallback_reason", "oxc_effective_providers"):
            getattr(_lib, f).argtypes = [ctypes.c_void_p]
            getattr(_lib, f).restype = ctypes.c_char_p
        _lib.oxc_cuda_usable.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
        _lib.oxc_free.argtypes = [ctypes.c_void_p]
        for f in ("oxc_input_count", "oxc_output_count"):
            getattr(_lib, f).argtypes = [ctypes.c_void_p]
        for f in ("oxc_input_name", "oxc_output_name"):
            getattr(_lib, f).argtypes = [ctypes.c_void_p, ctypes.c_int]
            getattr(_lib, f).restype = ctypes.c_char_p
        run_args = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int),
                    ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_void_p),
                    ctypes.c_char_p, ctypes.c_size_t]
        _lib.oxc_run.argtypes = run_args
        _lib.oxc_run_repeat.argtypes = [ctypes.c_void_p, ctypes.c_int] + run_args[1:]
        _lib.oxc_output.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                                    ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int64),
                                    ctypes.POINTER(ctypes.c_void_p)]
        _lib.oxc_target_output.argtypes = _lib.oxc_output.argtypes
        _lib.oxc_run_targets.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int)] + run_args[1:]
        _lib.oxc_set_profiling.argtypes = [ctypes.c_void_p, ctypes.c_int]
        _lib.oxc_profile.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                     ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_double)]
        _lib.oxc_save.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t),
                                  ctypes.c_char_p, ctypes.c_size_t]
        _lib.oxc_free_bytes.argtypes = [ctypes.c_void_p]
        _lib.oxc_type_of.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        _lib.oxc_type_of.restype = ctypes.c_char_p
        _lib.oxc_stat.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        _lib.oxc_stat.restype = ctypes.c_int64
    return _lib


class EngineError(RuntimeError):
    pass


def cuda_usable(device_id=0):
    """(usable, reason): whether the engine can run on CUDA device device_id."""
    why = ctypes.create_string_buffer(512)
    ok = lib().oxc_cuda_usable(device_id, why, 512)
    return bool(ok), why.value.decode()


def cuda_libraries_load():
    """(loaded, reason): opens cuBLAS and cuDNN as a CUDA session would; needs no device."""
    f = lib().oxc_cuda_libraries_load
    f.restype, f.argtypes = ctypes.c_int, [ctypes.c_char_p, ctypes.c_size_t]
    why = ctypes.create_string_buffer(512)
    ok = f(why, 512)
    return bool(ok), why.value.decode()


def available_providers():
    """the providers the engine was built with: ["cpu"] or ["cpu", "cuda"]"""
    f = lib().ox_available_providers
    f.restype, f.argtypes = ctypes.c_char_p, []
    return f().decode().split(",")


def nchwc_block():
    """the channels per block of the CPU's channel-blocked kernels (16 with
    AVX-512, 8 with AVX2), 0 where the layout pass leaves graphs alone"""
    f = lib().ox_kernels_nchwc_block
    f.restype, f.argtypes = ctypes.c_int, []
    return f()


ISA_NONE, ISA_AVX2, ISA_AVX512 = 0, 1, 2   # nn_isa (src/kernels/cpu/conv_fast.h)


def force_conv_isa(isa):
    """the convolution kernels' instruction set, at most the CPU's (for
    tests of every variant on one machine); returns the one before"""
    f = lib().nn_conv_fast_force_isa
    f.restype, f.argtypes = ctypes.c_int, [ctypes.c_int]
    return f(isa)


def force_fma_bcast(on):
    """the 2-block convolution tiles of blocks of 16 with the broadcasts in the
    multiply-adds (True), in registers (False), or as detected for this CPU
    (None); returns the choice before"""
    f = lib().nn_nchwc_force_fma_bcast
    f.restype, f.argtypes = ctypes.c_int, [ctypes.c_int]
    return bool(f(-1 if on is None else int(bool(on))))


def force_sdpa_portable(on):
    """ScaledDotProductAttention's portable C (True) or what the CPU runs
    (False); returns the choice before"""
    f = lib().transformer_sdpa_force_portable
    f.restype, f.argtypes = ctypes.c_int, [ctypes.c_int]
    return bool(f(int(bool(on))))


class Session:
    def __init__(self, model_bytes, opt_level=3, threads=1, providers=None, cuda_device_id=0,
                 cuda_memory_limit=0, cuda_fp16=False, no_fallback=False, portable=False,
                 release_weights=False, shape_memo=True):
        """portable: the optimized graph is for save(): ONNX that other runtimes
        load, without the engine-private channel-blocked layout.
        release_weights: free each constant's data once the nodes reading it
        packed their own copies, as the extension's cached sessions do (the
        model can then not be saved)
        shape_memo: False runs every node at every run, also those that only
        recompute the shapes of the run before (runtime/memo.c)"""
        if not isinstance(model_bytes, (bytes, bytearray)):
            model_bytes = model_bytes.SerializeToString()
        err = ctypes.create_string_buffer(2048)
        self._h = lib().oxc_create_ex(bytes(model_bytes), len(model_bytes), opt_level, threads,
                                      providers.encode() if providers else None, cuda_device_id,
                                      cuda_memory_limit, int(bool(cuda_fp16)), int(bool(no_fallback)),
                                      int(bool(portable)) | (2 if release_weights else 0)
                                      | (0 if shape_memo else 4), err, 2048)
        if not self._h:
            raise EngineError(err.value.decode())
        self.input_names = [lib().oxc_input_name(self._h, i).decode() for i in range(lib().oxc_input_count(self._h))]
        self.output_names = [lib().oxc_output_name(self._h, i).decode() for i in range(lib().oxc_output_count(self._h))]

    def __del__(self):
        if getattr(self, "_h", None):
            lib().oxc_free(self._h)
            self._h = None

    @property
    def fallback_reason(self):
        r = lib().oxc_fallback_reason(self._h)
        return r.decode() if r is not None else None

    @property
    def effective_providers(self):
        return lib().oxc_effective_providers(self._h).decode()

    def placement(self):
        """[(node name, op type, provider)] over the optimized graph in execution order."""
        rows = []
        name, op, prov = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_char_p()
        for i in range(lib().oxc_node_count(self._h)):
            if lib().oxc_node_info(self._h, i, ctypes.byref(name), ctypes.byref(op), ctypes.byref(prov)) == 0:
                rows.append((name.value.decode(), op.value.decode(), prov.value.decode()))
        return rows

    def stat(self, what):
        return lib().oxc_stat(self._h, what.encode())

    def type_of(self, name):
        """Declared or inferred type of a value, e.g. 'tensor(float)[N, 8]'."""
        t = lib().oxc_type_of(self._h, name.encode())
        return t.decode() if t is not None else None

    def save(self):
        """The session's (optimized) model as ONNX bytes."""
        ptr, n = ctypes.c_void_p(), ctypes.c_size_t()
        err = ctypes.create_string_buffer(2048)
        if lib().oxc_save(self._h, ctypes.byref(ptr), ctypes.byref(n), err, 2048):
            raise EngineError(err.value.decode())
        try:
            return ctypes.string_at(ptr.value, n.value)
        finally:
            lib().oxc_free_bytes(ptr)

    def profile(self, feeds):
        """Run once with per-node timing; returns [(node name, op type, ms)] in execution order."""
        lib().oxc_set_profiling(self._h, 1)
        try:
            self.run(feeds)
            name, op, ms = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_double()
            n = lib().oxc_profile(self._h, 0, ctypes.byref(name), ctypes.byref(op), ctypes.byref(ms))
            rows = []
            for i in range(n):
                lib().oxc_profile(self._h, i, ctypes.byref(name), ctypes.byref(op), ctypes.byref(ms))
                rows.append((name.value.decode(), op.value.decode(), ms.value))
            return rows
        finally:
            lib().oxc_set_profiling(self._h, 0)

    def _bind(self, feeds):
        arrays = [np.require(feeds[name], requirements="C") for name in self.input_names]
        n = len(arrays)
        dtypes = (ctypes.c_int * max(n, 1))(*[_CODE_OF[a.dtype] for a in arrays])
        ranks = (ctypes.c_int * max(n, 1))(*[a.ndim for a in arrays])
        flat = [d for a in arrays for d in a.shape]
        dims = (ctypes.c_int64 * max(len(flat), 1))(*flat)
        data = (ctypes.c_void_p * max(n, 1))(*[a.ctypes.data for a in arrays])
        return arrays, dtypes, ranks, dims, data

    def run(self, feeds):
        arrays, dtypes, ranks, dims, data = self._bind(feeds)
        err = ctypes.create_string_buffer(2048)
        rc = lib().oxc_run(self._h, dtypes, ranks, dims, data, err, 2048)
        if rc:
            raise EngineError(err.value.decode())
        return [self._output(i) for i in range(len(self.output_names))]

    def run_targets(self, feeds, outputs):
        """A run of only what the graph outputs listed by index need, as onnx_predict
        makes one (a ZipMap's output stands for the ZipMap's dense input); returns
        their arrays.  The session's other outputs are undefined afterwards."""
        arrays, dtypes, ranks, dims, data = self._bind(feeds)
        err = ctypes.create_string_buffer(2048)
        idx = (ctypes.c_int * len(outputs))(*outputs)
        rc = lib().oxc_run_targets(self._h, len(outputs), idx, dtypes, ranks, dims, data, err, 2048)
        if rc:
            raise EngineError(err.value.decode())
        return [self._output(j, lib().oxc_target_output) for j in range(len(outputs))]

    def run_repeat(self, feeds, n):
        arrays, dtypes, ranks, dims, data = self._bind(feeds)
        err = ctypes.create_string_buffer(2048)
        rc = lib().oxc_run_repeat(self._h, n, dtypes, ranks, dims, data, err, 2048)
        if rc:
            raise EngineError(err.value.decode())

    def _output(self, i, getter=None):
        dtype, rank = ctypes.c_int(), ctypes.c_int()
        dims = (ctypes.c_int64 * 16)()
        ptr = ctypes.c_void_p()
        kind = (getter or lib().oxc_output)(self._h, i, ctypes.byref(dtype), ctypes.byref(rank), dims, ctypes.byref(ptr))
        if kind != 0:
            return None  # sequences and maps are not exposed through this API
        shape = tuple(dims[k] for k in range(rank.value))
        npt = np.dtype(_NP_OF[dtype.value])
        n = int(np.prod(shape)) if shape else 1
        if n == 0:
            return np.zeros(shape, npt)
        buf = (ctypes.c_char * (n * npt.itemsize)).from_address(ptr.value)
        return np.frombuffer(buf, dtype=npt).reshape(shape).copy()
