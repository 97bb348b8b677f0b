# torch.cuda of the fake torch (see ../__init__.py).
import ctypes
import os

from . import memory

_initialized = False
_queued_calls = []
_lib = None


def is_initialized():
    return _initialized


def _lazy_call(fn):
    # as torch: run now if CUDA is up, else at the first CUDA use
    if _initialized:
        fn()
    else:
        _queued_calls.append(fn)


def _ck(r, what):
    if r != 0:
        raise RuntimeError("%s failed: %d" % (what, r))


def _lazy_init():
    global _initialized, _lib
    if _initialized:
        return
    _lib = ctypes.CDLL(os.environ.get("FAKE_TORCH_LIBCUDA", "libcuda.so.1"))
    _ck(_lib.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    _ck(_lib.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    ctx = ctypes.c_void_p()
    _ck(_lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    _ck(_lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    memory._lib = _lib
    for fn in _queued_calls:
        fn()
    del _queued_calls[:]
    _initialized = True


class Tensor:
    def __init__(self, ptr, nbytes):
        self.ptr, self.nbytes = ptr, nbytes


def empty(nbytes):
    _lazy_init()
    return Tensor(memory._malloc(nbytes), nbytes)


def free(t):
    memory._free(t.ptr)


def empty_cache():
    if _initialized:
        memory._empty_cache()


def axpy(x, y):
    """Launches the stub driver's axpy(float, float*, float*, int) on x and
    a view into y (4 bytes in)."""
    mod = ctypes.c_void_p()
    _ck(_lib.cuModuleLoadData(ctypes.byref(mod), b"stub"), "cuModuleLoadData")
    f = ctypes.c_void_p()
    _ck(_lib.cuModuleGetFunction(ctypes.byref(f), mod, b"axpy"), "cuModuleGetFunction")
    alpha = ctypes.c_float(2.0)
    px = ctypes.c_uint64(x.ptr)
    py = ctypes.c_uint64(y.ptr + 4)
    n = ctypes.c_int(16)
    params = (ctypes.c_void_p * 4)(ctypes.cast(ctypes.byref(alpha), ctypes.c_void_p),
                                   ctypes.cast(ctypes.byref(px), ctypes.c_void_p),
                                   ctypes.cast(ctypes.byref(py), ctypes.c_void_p),
                                   ctypes.cast(ctypes.byref(n), ctypes.c_void_p))
    _ck(_lib.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, None, params, None), "cuLaunchKernel")


def synchronize():
    if _initialized:
        _ck(_lib.cuCtxSynchronize(), "cuCtxSynchronize")


def memory_stats():
    if not _initialized:
        return {}
    with memory._lock:
        return dict(memory._stats)
