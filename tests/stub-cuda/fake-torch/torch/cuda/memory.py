# torch.cuda.memory of the fake torch: a miniature caching allocator.
# Requests are rounded to 512 bytes; up to 1 MiB they come from 2 MiB
# "small" segments, larger ones from 20 MiB "large" segments (one block
# per request, first fit in address order, exact-size reuse of freed
# blocks); segments are returned to the driver only by empty_cache().
# With PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True each pool is one
# expandable segment, as torch's: a reserved address range
# (cuMemAddressReserve) into which pages (2 MiB small, 20 MiB large) are
# mapped one cuMemCreate + cuMemMap each, the range recorded once as
# segment_map after the last; empty_cache unmaps a pool with no live block
# page by page (cuMemUnmap) and records one segment_unmap.
import ctypes
import os
import pickle
import sys
import threading
import time

_conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF")
_expandable = "expandable_segments:True" in (_conf or "")
# backend:cudaMallocAsync: one cuMemAllocAsync per request, no history (as
# torch's CUDAMallocAsyncAllocator, whose recordHistory and snapshot raise)
_async = "backend:cudaMallocAsync" in (_conf or "")
_async_live = {}


def get_allocator_backend():
    return "cudaMallocAsync" if _async else "native"

_lib = None
_history = None
_max_entries = 0
_segments = []   # dicts: address, total_size, segment_type, blocks [[addr, size, req, live, frames]]
_stats = {"allocation.all.allocated": 0, "allocation.all.freed": 0,
          "segment.all.allocated": 0, "segment.all.freed": 0}


# The allocator's mutex: torch updates its stats and its history under one
# lock and takes a snapshot under it, so a reader on another thread (the
# hook's poller: memory_stats(), _dump_snapshot()) never sees a count the
# history does not hold yet.
_lock = threading.RLock()


def _locked(fn):
    def run(*args, **kwargs):
        with _lock:
            return fn(*args, **kwargs)
    run.__name__ = fn.__name__
    return run


def _frames():
    # the caller's frames: the first outside this package (torch.cuda.empty
    # called by the program)
    here = os.path.dirname(os.path.abspath(__file__))
    f = sys._getframe(1)
    while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == here:
        f = f.f_back
    out = []
    while f is not None and len(out) < 8:
        out.append({"filename": f.f_code.co_filename, "line": f.f_lineno, "name": f.f_code.co_name})
        f = f.f_back
    return out


def _driver_end_us():
    """When the last driver call ended, by the stub driver's clock
    (CLOCK_REALTIME, as time.time()): PyTorch stamps a segment event in C++
    right after cudaMalloc returns; Python's own clock read here would be
    late by however long the scheduler kept it from running (milliseconds
    on a loaded machine), and the tensor merge's clock anchor with it.
    Another driver: Python's clock."""
    f = getattr(_lib, "stub_last_call_end_us", None)
    if f is None:
        return int(time.time() * 1e6)
    f.restype = ctypes.c_uint64
    return int(f())


def _record(action, addr, size, frames=None, time_us=None):
    if _history is None:
        return
    _history.append({"action": action, "addr": addr, "size": size, "stream": 0,
                     "time_us": int(time.time() * 1e6) if time_us is None else time_us,
                     "frames": frames or []})
    if len(_history) > _max_entries:
        del _history[0]


def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=sys.maxsize,
                           device=None, clear_history=False):
    global _history, _max_entries
    if _async:
        raise RuntimeError("cudaMallocAsync does not yet support recordHistory. "
                           "If you need it, please file an issue describing your use case.")
    _history = [] if enabled else None
    _max_entries = max_entries


@_locked
def _malloc(nbytes):
    if _async:
        p = ctypes.c_uint64()
        _ck(_lib.cuMemAllocAsync(ctypes.byref(p), ctypes.c_size_t(nbytes), None), "cuMemAllocAsync")
        _async_live[p.value] = nbytes
        return p.value
    size = max(512, (nbytes + 511) // 512 * 512)
    kind = "small" if size <= (1 << 20) else "large"
    frames = _frames()
    for seg in _segments:
        if seg["segment_type"] != kind:
            continue
        for b in seg["blocks"]:
            if not b[3] and b[1] == size:
                b[2], b[3], b[4] = nbytes, True, frames
                _stats["allocation.all.allocated"] += 1
                _record("alloc", b[0], nbytes, frames)
                return b[0]
        used = sum(b[1] for b in seg["blocks"])
        if seg["total_size"] - used >= size:
            addr = seg["address"] + used
            seg["blocks"].append([addr, size, nbytes, True, frames])
            _stats["allocation.all.allocated"] += 1
            _record("alloc", addr, nbytes, frames)
            return addr
    if _expandable:
        return _malloc_expandable(nbytes, size, kind, frames)
    total = 2 << 20 if kind == "small" else max(20 << 20, (size + (2 << 20) - 1) // (2 << 20) * (2 << 20))
    p = ctypes.c_uint64()
    r = _lib.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(total))
    end_us = _driver_end_us()
    if r != 0:
        raise RuntimeError("cuMemAlloc failed: %d" % r)
    _stats["segment.all.allocated"] += 1
    _record("segment_alloc", p.value, total, frames, end_us)
    _segments.append({"address": p.value, "total_size": total, "segment_type": kind, "blocks": []})
    _segments.sort(key=lambda s: s["address"])
    return _malloc(nbytes)


def _ck(r, what):
    if r != 0:
        raise RuntimeError("%s failed: %d" % (what, r))


def _malloc_expandable(nbytes, size, kind, frames):
    page = 2 << 20 if kind == "small" else 20 << 20
    seg = next((g for g in _segments if g["segment_type"] == kind), None)
    if seg is None:
        va = ctypes.c_uint64()
        _ck(_lib.cuMemAddressReserve(ctypes.byref(va), ctypes.c_size_t(64 * page), ctypes.c_size_t(0),
                                     ctypes.c_uint64(0), ctypes.c_ulonglong(0)), "cuMemAddressReserve")
        seg = {"address": va.value, "total_size": 0, "segment_type": kind, "blocks": [], "expandable": True,
               "page": page}
        _segments.append(seg)
        _segments.sort(key=lambda s: s["address"])
    used = sum(b[1] for b in seg["blocks"])
    need = size - (seg["total_size"] - used)
    pages = (need + page - 1) // page
    base = seg["address"] + seg["total_size"]
    prop = ctypes.create_string_buffer(64)  # CUmemAllocationProp, unread by the stub
    for k in range(pages):
        h = ctypes.c_uint64()
        _ck(_lib.cuMemCreate(ctypes.byref(h), ctypes.c_size_t(page), prop, ctypes.c_ulonglong(0)), "cuMemCreate")
        _ck(_lib.cuMemMap(ctypes.c_uint64(base + k * page), ctypes.c_size_t(page), ctypes.c_size_t(0), h,
                          ctypes.c_ulonglong(0)), "cuMemMap")
    end_us = _driver_end_us()
    seg["total_size"] += pages * page
    _stats["segment.all.allocated"] += 1
    _record("segment_map", base, pages * page, frames, end_us)
    return _malloc(nbytes)


@_locked
def _free(ptr):
    if _async:
        del _async_live[ptr]
        _ck(_lib.cuMemFreeAsync(ctypes.c_uint64(ptr), None), "cuMemFreeAsync")
        return
    for seg in _segments:
        for b in seg["blocks"]:
            if b[0] == ptr and b[3]:
                b[3] = False
                _stats["allocation.all.freed"] += 1
                _record("free_requested", ptr, b[2])
                _record("free_completed", ptr, b[2])
                return
    raise RuntimeError("free of an unknown pointer")


@_locked
def _empty_cache():
    if _async:
        return  # torch: cudaMemPoolTrimTo(pool, 0), which the shim does not record
    for seg in list(_segments):
        if any(b[3] for b in seg["blocks"]):
            continue
        if seg.get("expandable"):
            if seg["total_size"] == 0:
                continue
            _record("segment_unmap", seg["address"], seg["total_size"])
            for k in range(seg["total_size"] // seg["page"]):
                _ck(_lib.cuMemUnmap(ctypes.c_uint64(seg["address"] + k * seg["page"]), ctypes.c_size_t(seg["page"])),
                    "cuMemUnmap")
            _stats["segment.all.freed"] += 1
            seg["total_size"] = 0
            seg["blocks"] = []
            continue
        _record("segment_free", seg["address"], seg["total_size"])
        _lib.cuMemFree_v2(ctypes.c_uint64(seg["address"]))
        _stats["segment.all.freed"] += 1
        _segments.remove(seg)


@_locked
def _dump_snapshot(filename="dump_snapshot.pickle"):
    if _async:
        raise RuntimeError("Calling snapshot with backend:cudaMallocAsync is not meaningful.")
    segs = []
    for seg in _segments:
        if seg["total_size"] == 0:
            continue
        blocks = []
        at = seg["address"]
        for b in seg["blocks"]:
            blocks.append({"address": b[0], "size": b[1], "requested_size": b[2],
                           "state": "active_allocated" if b[3] else "inactive", "frames": b[4]})
            at = b[0] + b[1]
        if at < seg["address"] + seg["total_size"]:
            blocks.append({"address": at, "size": seg["address"] + seg["total_size"] - at,
                           "requested_size": 0, "state": "inactive", "frames": []})
        segs.append({"device": 0, "address": seg["address"], "total_size": seg["total_size"],
                     "stream": 0, "segment_type": seg["segment_type"], "is_expandable": bool(seg.get("expandable")),
                     "blocks": blocks})
    # The whole snapshot is taken before the file is opened, as torch's
    # _dump_snapshot does (_snapshot(), then pickle.dump): open() lets the
    # program's thread run, and a program that waits for the file to appear
    # (tests/capture-torch.sh's ring buffer) would otherwise add entries to
    # a history not yet copied (a first dump of 28 entries, not 27).
    snap = {"segments": segs, "device_traces": [list(_history or [])],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": _conf if _conf is not None else "fake:1",
                                   "max_split_size": -1, "expandable_segments": _expandable}}
    with open(filename, "wb") as f:
        pickle.dump(snap, f, protocol=4)
