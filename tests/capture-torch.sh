#!/bin/sh
# capture-torch.sh — vramcap's PyTorch hook (capture/python-hook) and the
# tensor merge at exit, end to end on the stub driver with a fake torch
# (tests/stub-cuda/fake-torch: torch's hook surface and a miniature caching
# allocator that calls the stub through ctypes and dumps a snapshot in
# torch's layout): the merged trace exactly; --no-torch; a Python program
# without torch and one with its own sitecustomize captured unchanged; torch
# too old, torch without CUDA, SIGTERM, and a ring buffer that wraps.
VRAMSIM=${VRAMSIM:-bin/vramsim}
BUILD=${TEST_BUILD:-build}
VRAMCAP=$(dirname "$VRAMSIM")/vramcap
STUB=$BUILD/tests/stub-cuda
HERE=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$VRAMCAP" ] || [ ! -f "$STUB/libcuda.so.1" ]; then
  echo "1..0 # SKIP capture not built (no CUDA toolkit)"
  exit 0
fi
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
STUB=$(cd "$STUB" && pwd)
VRAMCAP=$(cd "$(dirname "$VRAMCAP")" && pwd)/vramcap
VRAMSIM=$(cd "$(dirname "$VRAMSIM")" && pwd)/$(basename "$VRAMSIM")
FT=$HERE/stub-cuda/fake-torch
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
export LD_LIBRARY_PATH="$STUB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset PYTHONPATH VRAMCAP_TORCH_ENTRIES VRAMCAP_TORCH_POLL
n=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
echo "1..15"

# norm TRACE: the header's allocations, tensor_note and tensor_merge counts,
# then one line per event without t and host_ns.
norm() {
  "$VRAMSIM" convert "$1" "$1.jsonl" || return 1
  python3 - "$1.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
h = lines[0]
m = h.get("tensor_merge", {})
print(json.dumps({"allocations": h.get("allocations"), "note": h.get("tensor_note"),
                  "conf": h.get("allocator_settings", {}).get("PYTORCH_CUDA_ALLOC_CONF"),
                  "merge": {k: m[k] for k in ("tensors", "segments_replaced", "driver_allocations_kept",
                                              "anchors", "references", "references_in_life",
                                              "lives_widened", "references_dropped") if k in m}},
                 sort_keys=True))
for e in lines[1:]:
    e.pop("t", None); e.pop("host_ns", None)
    print(json.dumps(e, sort_keys=True))
PY
}

cat > prog.py <<'PY'
import sys
import torch
x = torch.cuda.empty(4096)
y = torch.cuda.empty((1 << 20) + 1)
torch.cuda.axpy(x, y)
torch.cuda.free(x)
z = torch.cuda.empty(4096)
torch.cuda.axpy(z, y)
torch.cuda.synchronize()
torch.cuda.free(z)
torch.cuda.free(y)
torch.cuda.empty_cache()
print("prog done")
sys.exit(3)
PY

# 1-3: the fake torch program, merged.
PYTHONPATH=$FT python3 prog.py > plain.out 2> plain.err
PYTHONPATH=$FT "$VRAMCAP" --mode hook -o t.vtrace python3 prog.py > t.out 2> t.err
rc=$?
[ $rc = 3 ] && cmp -s plain.out t.out && [ ! -s t.err ] || { cat t.err >&2; false; }
ok $? "torch program: exit status 3 kept, stdout unchanged, nothing on stderr (rc $rc)"
# Kernels carry their shape (the fake torch launches axpy on 1 block of 32
# threads; the stub driver gives it 32 registers and 1024 B of static
# shared memory), through the merge unchanged.
cat > expect-t <<'EOF2'
{"allocations": "tensor", "conf": "fake:1", "merge": {"anchors": 2, "driver_allocations_kept": 0, "lives_widened": 0, "references": 4, "references_dropped": 0, "references_in_life": 4, "segments_replaced": 2, "tensors": 3}, "note": null}
{"bytes": 4096, "id": 3, "kind": "device", "op": "alloc", "stream": 0, "tag": "prog.py:3 <module>", "tid": 1}
{"bytes": 1048577, "id": 4, "kind": "device", "op": "alloc", "stream": 0, "tag": "prog.py:4 <module>", "tid": 1}
{"block": [32, 1, 1], "dur": 1000, "grid": [1, 1, 1], "name": "axpy", "op": "kernel", "regs": 32, "smem": 1024, "touches": [3, 4]}
{"id": 3, "op": "free", "stream": 0, "tid": 1}
{"bytes": 4096, "id": 5, "kind": "device", "op": "alloc", "stream": 0, "tag": "prog.py:7 <module>", "tid": 1}
{"block": [32, 1, 1], "dur": 1000, "grid": [1, 1, 1], "name": "axpy", "op": "kernel", "regs": 32, "smem": 1024, "touches": [5, 4]}
{"op": "sync", "scope": "device"}
{"id": 5, "op": "free", "stream": 0, "tid": 1}
{"id": 4, "op": "free", "stream": 0, "tid": 1}
{"op": "empty_cache", "tid": 1}
EOF2
norm t.vtrace > t.norm && diff expect-t t.norm >&2
ok $? "merged trace: tensors (stream, frame tags) for the two segments, touches remapped to the tensors, empty_cache, header allocations tensor"
[ -f t.torch.pickle ] && [ -f t.vtrace.addrs ] && [ ! -e t.torch-status ]
ok $? "snapshot and address sidecar kept beside the trace, status file removed"
# The replay follows the header (allocations tensor -> the pytorch model) and
# makes the fake allocator's two segments: 4096 B -> a 2 MiB small segment,
# 1 MiB + 1 B -> a 20 MiB large one (the real rules give the same), peak
# reserved 22 MiB = 23068672 B, both freed by empty_cache.
"$VRAMSIM" replay t.vtrace --format json -o t.json && python3 - t.json <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["memory"]["allocator"]
want = {"kind": "pytorch", "segment_allocs": 2, "segment_frees": 2, "peak_reserved_bytes": 23068672,
        "segment_alloc_bytes": 23068672, "end_reserved_bytes": 0, "peak_allocated_bytes": 4096 + 1049088}
got = {k: a.get(k) for k in want}
assert got == want, got
PY
ok $? "replayed with the pytorch model: the snapshot's two segments, 22 MiB reserved peak, released by empty_cache"

# 5: --no-torch: the driver's trace, no sidecar, PYTHONPATH untouched.
cat > expect-drv <<'EOF2'
{"bytes": 2097152, "id": 1, "kind": "device", "op": "alloc"}
{"bytes": 20971520, "id": 2, "kind": "device", "op": "alloc"}
{"block": [32, 1, 1], "dur": 1000, "grid": [1, 1, 1], "name": "axpy", "op": "kernel", "regs": 32, "smem": 1024, "touches": [1, 2]}
{"block": [32, 1, 1], "dur": 1000, "grid": [1, 1, 1], "name": "axpy", "op": "kernel", "regs": 32, "smem": 1024, "touches": [1, 2]}
{"op": "sync", "scope": "device"}
{"id": 1, "op": "free"}
{"id": 2, "op": "free"}
EOF2
PYTHONPATH=$FT "$VRAMCAP" --mode hook --no-torch -o nt.vtrace python3 prog.py > nt.out 2> nt.err
rc=$?
norm nt.vtrace > nt.norm && [ $rc = 3 ] && cmp -s plain.out nt.out && [ ! -e nt.vtrace.addrs ] \
  && [ ! -e nt.torch.pickle ] && [ "$(head -1 nt.norm)" = '{"allocations": "driver", "conf": null, "merge": {}, "note": null}' ] \
  && sed 1d nt.norm | diff expect-drv - >&2 \
  && [ "$(PYTHONPATH=/x "$VRAMCAP" --mode hook --no-torch -o pp.vtrace python3 -c 'import os; print(os.environ["PYTHONPATH"])')" = /x ]
ok $? "--no-torch: driver-level trace as before, no sidecar or snapshot, PYTHONPATH untouched"

# 5-6: Python without torch (CUDA through ctypes), and its own sitecustomize.
cat > plainpy.py <<'PY'
import ctypes, sys
lib = ctypes.CDLL("libcuda.so.1")
lib.cuInit(0)
dev = ctypes.c_int(); lib.cuDeviceGet(ctypes.byref(dev), 0)
ctx = ctypes.c_void_p(); lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev); lib.cuCtxSetCurrent(ctx)
p = ctypes.c_uint64(); lib.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(1 << 20)); lib.cuMemFree_v2(p)
mark = getattr(sys.modules.get("sitecustomize"), "MARK", None)
print("mark", mark, "torch" in sys.modules)
sys.exit(5)
PY
python3 plainpy.py > pp-plain.out 2>/dev/null
"$VRAMCAP" --mode hook -o pp.vtrace python3 plainpy.py > pp.out 2> pp.err
rc=$?
"$VRAMCAP" --mode hook --no-torch -o ppn.vtrace python3 plainpy.py > /dev/null 2>&1
norm pp.vtrace > pp.norm && norm ppn.vtrace > ppn.norm && sed 1d pp.norm > a && sed 1d ppn.norm > b \
  && [ $rc = 5 ] && cmp -s pp-plain.out pp.out && [ ! -s pp.err ] && cmp -s a b && [ -s a ]
r1=$?
ok $(( r1 + $? )) "Python without torch: events unchanged, stdout and status kept, header says no-torch"
mkdir sc && printf 'MARK = "own"\n' > sc/sitecustomize.py
PYTHONPATH=$T/sc python3 plainpy.py > sc-plain.out 2>/dev/null
PYTHONPATH=$T/sc "$VRAMCAP" --mode hook -o sc.vtrace python3 plainpy.py > sc.out 2> sc.err
rc=$?
norm sc.vtrace > sc.norm && sed 1d sc.norm > a && [ $rc = 5 ] && grep -qx "mark own False" sc.out \
  && cmp -s sc-plain.out sc.out && cmp -s a b && [ ! -s sc.err ]
ok $? "the program's own sitecustomize still runs (and is sys.modules['sitecustomize']); events unchanged"

# 7-8: torch too old; torch without CUDA.
FAKE_TORCH_VERSION=2.0.1 PYTHONPATH=$FT "$VRAMCAP" --mode hook -o old.vtrace python3 prog.py > old.out 2> old.err
rc=$?
norm old.vtrace > old.norm && [ $rc = 3 ] && sed 1d old.norm | diff expect-drv - >&2 \
  && head -1 old.norm | grep -q '"note": "old-torch: torch 2.0.1 has no memory history' && [ ! -e old.torch.pickle ]
ok $? "torch 2.0.1: driver-level trace, header says why"
PYTHONPATH=$FT "$VRAMCAP" --mode hook -o nc.vtrace python3 -c 'import torch; print(torch.__version__)' > nc.out 2> nc.err
norm nc.vtrace > nc.norm && grep -qx "2.5.1+fake" nc.out \
  && head -1 nc.norm | grep -q '"note": "no-cuda: torch 2.5.1+fake never initialised CUDA"' && [ "$(wc -l < nc.norm)" = 1 ]
ok $? "torch imported, CUDA never used: empty trace, header says no-cuda"

# 9-10: SIGTERM after allocating: dies of it, snapshot dumped, trace merged.
cat > term.py <<'PY'
import os, signal
import torch
x = torch.cuda.empty(4096)
torch.cuda.axpy(x, x)
os.kill(os.getpid(), signal.SIGTERM)
print("not reached")
PY
PYTHONPATH=$FT sh -c '"$@"; exit $?' sh "$VRAMCAP" --mode hook -o term.vtrace python3 term.py > term.out 2> term.err
rc=$?
[ $rc = 143 ] && [ ! -s term.out ] && [ -f term.torch.pickle ]
ok $? "SIGTERM: exit status 143 kept, snapshot dumped by the signal handler (rc $rc)"
norm term.vtrace > term.norm && head -1 term.norm | grep -q '"allocations": "tensor"' \
  && grep -q '"name": "axpy", "op": "kernel", "regs": 32, "smem": 1024, "touches": \[2\]' term.norm \
  && grep -q '"bytes": 4096, "id": 2, "kind": "device", "op": "alloc"' term.norm
ok $? "SIGTERM: the shim's trace was flushed (its handler chained) and merged with the tensor"

# 11-12: a ring buffer of 12 entries that wraps: dumps before it does, the
# final window is merged from its rewound start state; the kernels before
# it reach `keep` (a start block) and the first x of the window, whose lives
# are widened back to them (2).
cat > ring.py <<'PY'
import time
import torch
keep = torch.cuda.empty(4096)
for i in range(30):
    x = torch.cuda.empty(8192)
    torch.cuda.axpy(x, keep)
    torch.cuda.free(x)
    time.sleep(0.01)
print("ring done")
PY
VRAMCAP_TORCH_POLL=0.02 PYTHONPATH=$FT "$VRAMCAP" --mode hook --torch-entries 12 -o ring.vtrace python3 ring.py > ring.out 2> ring.err
rc=$?
[ $rc = 0 ] && grep -qx "ring done" ring.out && [ -f ring.torch.pickle.part1 ] \
  && grep -q "^vramcap: the ring buffer of 12 entries wrapped" ring.err
ok $? "ring buffer of 12 entries: dumped before it wraps (part files), one note on stderr"
norm ring.vtrace > ring.norm && head -1 ring.norm | grep -q '"allocations": "tensor".*"lives_widened": 2.*"references_dropped": 0' \
  && [ "$(grep -c '"op": "kernel"' ring.norm)" = 30 ] && "$VRAMSIM" replay ring.vtrace > /dev/null
ok $? "wrapped window: merged from the rewound start (2 lives widened, none dropped), 30 kernels, replays"

# 13-14: usage.
"$VRAMCAP" --torch-entries 0 true > /dev/null 2>&1
[ $? = 2 ]; ok $? "--torch-entries 0: exit 2"
"$VRAMCAP" --mode hook -o nope.vtrace ./no-such-program 2> nope.err
[ $? = 127 ] && grep -q "^vramcap: cannot run ./no-such-program" nope.err
ok $? "a program that does not exist: exit 127, one message"
