#!/bin/sh
# capture-hook.sh — vramcap --mode hook against the stub driver
# (tests/stub-cuda): exact traces from plain and dlopen+cuGetProcAddress
# programs, threads, fork, signals, exit codes, launcher usage, graphs,
# array copies, 3D peer copies and batched copies.
VRAMSIM=${VRAMSIM:-bin/vramsim}
BUILD=${TEST_BUILD:-build}
VRAMCAP=$(dirname "$VRAMSIM")/vramcap
STUB=$BUILD/tests/stub-cuda
HERE=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$VRAMCAP" ] || [ ! -f "$STUB/libcuda.so.1" ] || [ ! -x "$STUB/prog-linked" ]; then
  echo "1..0 # SKIP capture not built (no CUDA toolkit)"
  exit 0
fi
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
STUB=$(cd "$STUB" && pwd)
VRAMCAP=$(cd "$(dirname "$VRAMCAP")" && pwd)/vramcap
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export LD_LIBRARY_PATH="$STUB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
n=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }

. "$HERE/capture-lib.sh"

cat > "$T/expect-basic" <<'EOF2'
{"config": "h100-sxm", "device": "NVIDIA H100 80GB HBM3", "mode": "hook", "tool": "vramcap 0.1"}
{"bytes": 1048576, "id": 1, "kind": "device", "op": "alloc", "tid": 0}
{"bytes": 2097152, "id": 2, "kind": "device", "op": "alloc", "tid": 0}
{"bytes": 4096, "id": 3, "kind": "pinned", "op": "alloc", "tid": 0}
{"async": true, "bytes": 4096, "dir": "h2d", "dst": 1, "dur": 4096, "op": "copy", "src": 3, "stream": 1, "tid": 0}
{"async": false, "bytes": 512, "dir": "h2d", "dst": 1, "dur": 512, "op": "copy", "src": 0, "stream": 1, "tid": 0}
{"dur": 3000, "name": "axpy", "op": "kernel", "reads": [], "stream": 1, "tid": 0, "touches": [1, 2], "writes": []}
{"dur": 2000, "name": "pairk", "op": "kernel", "reads": [], "stream": 1, "tid": 0, "touches": [2], "writes": []}
{"op": "sync", "scope": "stream", "stream": 1, "tid": 0}
{"async": false, "bytes": 1000, "dir": "d2h", "dst": 0, "dur": 1000, "op": "copy", "src": 2, "stream": 0, "tid": 0}
{"async": true, "bytes": 1048576, "dst": 1, "dur": 524288, "op": "memset", "stream": 0, "tid": 0}
{"bytes": 8192, "id": 4, "kind": "managed", "op": "alloc", "tid": 0}
{"bytes": 8192, "id": 4, "op": "prefetch", "stream": 1, "tid": 0, "to": "device"}
{"bytes": 65536, "id": 5, "kind": "device", "op": "alloc", "stream": 1, "tid": 0}
{"id": 5, "op": "free", "stream": 1, "tid": 0}
{"event": 1, "op": "event_record", "stream": 1, "tid": 0}
{"event": 1, "op": "stream_wait", "stream": 0, "tid": 0}
{"event": 1, "op": "sync", "scope": "event", "tid": 0}
{"bytes": 2097152, "id": 6, "kind": "device", "op": "alloc", "tid": 0}
{"dur": 1000, "name": "noargs", "op": "kernel", "reads": [], "stream": 0, "tid": 0, "touches": [], "writes": []}
{"id": 6, "op": "free", "tid": 0}
{"op": "sync", "scope": "device", "tid": 0}
{"id": 1, "op": "free", "tid": 0}
{"id": 2, "op": "free", "tid": 0}
{"id": 3, "op": "free", "tid": 0}
{"id": 4, "op": "free", "tid": 0}
EOF2

echo "1..37"
cd "$T"
sed 1d expect-basic > expect-basic.events

for p in linked dlopen; do
  "$VRAMCAP" --mode hook -o "$p.vtrace" -- "$STUB/prog-$p" > "$p.out" 2> "$p.err"
  rc=$?
  decode "$p.vtrace" "$p.norm" && [ $rc = 0 ] && diff "$T/expect-basic" "$p.norm" >&2
  ok $? "prog-$p: exact trace (kinds, sizes, directions, touches, syncs, GPU times)"
done

# Kernel shapes (SPEC 3) from the launch arguments and cuFuncGetAttribute:
# grid and block as launched; regs the stub's NUM_REGS (axpy 32, pairk 40,
# noargs 8); smem its SHARED_SIZE_BYTES (axpy 1024, pairk 512, noargs 0)
# plus the launch's dynamic shared memory (0 here), so noargs, with
# 0 + 0 bytes, has none (0 is absent, docs/trace-format.md).
cat > "$T/expect-basic.shapes" <<'EOF2'
axpy 3x1x1 128x1x1 32 1024
pairk 2x1x1 64x1x1 40 512
noargs 1x1x1 32x1x1 8 -
EOF2
shapes linked.vtrace > linked.shapes && diff "$T/expect-basic.shapes" linked.shapes >&2 \
  && shapes dlopen.vtrace | diff "$T/expect-basic.shapes" - >&2
ok $? "hook mode: kernel grid, block, regs, static + dynamic smem (prog-linked, prog-dlopen)"
# A driver that does not answer cuFuncGetAttribute: regs and smem absent,
# grid and block still there, the launches and the rest of the trace as before.
STUB_CUDA_NO_FUNC_ATTR=1 "$VRAMCAP" --mode hook -o noattr.vtrace -- "$STUB/prog-linked" > noattr.out 2> noattr.err
rc=$?
decode noattr.vtrace noattr.norm && [ $rc = 0 ] && [ ! -s noattr.err ] && cmp -s noattr.norm linked.norm \
  && [ "$(shapes noattr.vtrace | tr '\n' ';')" = "axpy 3x1x1 128x1x1 - -;pairk 2x1x1 64x1x1 - -;noargs 1x1x1 32x1x1 - -;" ]
ok $? "STUB_CUDA_NO_FUNC_ATTR=1: grid and block only, the trace otherwise the same"

"$STUB/prog-linked" > plain.out 2>&1
cmp -s plain.out linked.out && [ ! -s linked.err ]
ok $? "program output unchanged, nothing printed by the shim"

# Threads and fork.
"$VRAMCAP" --mode hook -o thr.vtrace "$STUB/prog-threads" > thr.out 2> thr.err
rc=$?
decode thr.vtrace thr.norm
check_threads thr.norm
ok $(( $? + rc )) "4 threads: per-thread tids, every kernel touches its thread's buffer"
child=$(sed -n 's/^child //p' thr.out)
[ -n "$child" ] && [ -f "thr.$child.vtrace" ] && decode "thr.$child.vtrace" child.norm \
  && [ "$(sed 1d child.norm)" = '{"bytes": 12345, "id": 1, "kind": "device", "op": "alloc", "tid": 0}
{"id": 1, "op": "free", "tid": 0}' ]
ok $? "forked child writes its own trace thr.<pid>.vtrace"

# Signals and exit codes.
sh -c '"$@"; exit $?' sh "$VRAMCAP" --mode hook -o abrt.vtrace "$STUB/prog-crash" abort 2>/dev/null
rc=$?
decode abrt.vtrace abrt.norm && [ $rc = 134 ] && sed -n 2,3p abrt.norm | grep -c '"touches": \[1\]\|"bytes": 4096' | grep -qx 2
ok $? "abort: exit status 134 kept, trace flushed and readable (rc $rc)"
sh -c '"$@"; exit $?' sh "$VRAMCAP" --mode hook -o segv.vtrace "$STUB/prog-crash" segv 2>/dev/null
rc=$?
decode segv.vtrace segv.norm && [ $rc = 139 ] && [ "$(wc -l < segv.norm)" = 3 ]
ok $? "SIGSEGV: exit status 139 kept, trace flushed and readable (rc $rc)"
"$VRAMCAP" --mode hook -o ex3.vtrace "$STUB/prog-crash" exit3 2>/dev/null
rc=$?
decode ex3.vtrace ex3.norm && [ $rc = 3 ] \
  && sed -n 3p ex3.norm | grep -q '"dur": 5000, "name": "axpy"'
ok $? "exit(3): status 3 kept; pending GPU time read back at exit (rc $rc)"

# Write errors never change the program.
"$VRAMCAP" --mode hook -o "$T/no/such/dir/x.vtrace" "$STUB/prog-linked" > werr.out 2> werr.err
rc=$?
[ $rc = 0 ] && cmp -s plain.out werr.out && grep -q "^vramcap: cannot write" werr.err
ok $? "unwritable output: program unaffected, one message on stderr"

# Launcher usage.
"$VRAMCAP" --help > help.out 2>&1
ok $(( $? + $(grep -c "^Usage: vramcap" help.out | grep -qx 1; echo $?) )) "vramcap --help"
"$VRAMCAP" --bogus true > /dev/null 2>&1
[ $? = 2 ]; ok $? "unknown option: exit 2"
"$VRAMCAP" --mode fast true > /dev/null 2>&1
[ $? = 2 ]; ok $? "bad --mode: exit 2"
"$VRAMCAP" -o x.vtrace > /dev/null 2>&1
[ $? = 2 ]; ok $? "no program: exit 2"
"$VRAMCAP" --mode hook -o f.vtrace sh -c 'exit 7' 2> f.err
[ $? = 7 ] && [ ! -e f.vtrace ] && [ "$(grep -c '^vramcap: nothing recorded: the program never used CUDA' f.err)" = 1 ]
ok $? "exit status of a program that never uses CUDA kept; no trace, one line saying why (tests/capture-nothing.sh)"

# CUPTI mode: the stub driver never loads the injection library, so the
# shim must say so and record through its hooks.
"$VRAMCAP" -o cupti.vtrace -- "$STUB/prog-dlopen" > cupti.out 2> cupti.err
rc=$?
decode cupti.vtrace cupti.norm && [ $rc = 0 ] && grep -q "CUPTI injection did not start" cupti.err \
  && sed 1d cupti.norm | diff - "$T/expect-basic.events" >&2
ok $? "default (cupti) mode without injection: one note on stderr, hook-mode trace"
nm -D --defined-only "$(dirname "$VRAMCAP")/../lib/libvramcap.so" 2>/dev/null | grep -q " T InitializeInjection" \
  || readelf --dyn-syms "$(dirname "$VRAMCAP")/../lib/libvramcap.so" | grep -q InitializeInjection
ok $? "libvramcap.so exports InitializeInjection (CUPTI entry point)"

# NVTX (v3, header-only) ranges and markers as mark events: the shim is the
# NVTX injection library (vramcap sets NVTX_INJECTION64_PATH).
cat > "$T/expect-nvtx" <<'EOF2'
{"name": "start", "op": "mark", "tid": 0}
{"name": "step", "op": "mark", "tid": 0}
{"bytes": 4096, "id": 1, "kind": "device", "op": "alloc", "tid": 0}
{"name": "forward", "op": "mark", "tid": 0}
{"dur": 1000, "name": "axpy", "op": "kernel", "reads": [], "stream": 0, "tid": 0, "touches": [1], "writes": []}
{"name": "forward/end", "op": "mark", "tid": 0}
{"name": "backward \u00fc\u20ac", "op": "mark", "tid": 0}
{"dur": 2000, "name": "axpy", "op": "kernel", "reads": [], "stream": 0, "tid": 0, "touches": [1], "writes": []}
{"name": "backward \u00fc\u20ac/end", "op": "mark", "tid": 0}
{"name": "step/end", "op": "mark", "tid": 0}
{"name": "registered", "op": "mark", "tid": 0}
{"name": "inner", "op": "mark", "tid": 0}
{"dur": 3000, "name": "axpy", "op": "kernel", "reads": [], "stream": 0, "tid": 0, "touches": [1], "writes": []}
{"name": "registered/end", "op": "mark", "tid": 0}
{"name": "inner/end", "op": "mark", "tid": 0}
{"name": "ex-mark", "op": "mark", "tid": 0}
{"name": "bad? utf8", "op": "mark", "tid": 0}
{"name": "wide", "op": "mark", "tid": 0}
{"name": "async", "op": "mark", "tid": 0}
{"name": "worker", "op": "mark", "tid": 1}
{"dur": 4000, "name": "axpy", "op": "kernel", "reads": [], "stream": 0, "tid": 1, "touches": [1], "writes": []}
{"name": "worker/end", "op": "mark", "tid": 1}
{"name": "async/end", "op": "mark", "tid": 1}
{"op": "sync", "scope": "device", "tid": 0}
{"id": 1, "op": "free", "tid": 0}
EOF2
cat > "$T/expect-nvtx.out" <<'EOF2'
levels push 0 1 1 pop 1 1 0
domain push 0 0 pop 0 0 -1
worker push 0 pop 0
prog-nvtx done
EOF2
"$VRAMCAP" --mode hook -o nvtx.vtrace "$STUB/prog-nvtx" > nvtx.out 2> nvtx.err
rc=$?
decode nvtx.vtrace nvtx.norm && [ $rc = 0 ] && [ ! -s nvtx.err ] && sed 1d nvtx.norm | diff - "$T/expect-nvtx" >&2 \
  && diff nvtx.out "$T/expect-nvtx.out" >&2
ok $? "NVTX: marks at push/start/mark, <name>/end at pop/end, per thread and domain, levels returned"
"$VRAMCAP" -o nvtxc.vtrace "$STUB/prog-nvtx" > nvtxc.out 2> nvtxc.err
rc=$?
decode nvtxc.vtrace nvtxc.norm && [ $rc = 0 ] && sed 1d nvtxc.norm | diff - "$T/expect-nvtx" >&2
ok $? "NVTX in the default (cupti) mode: the same marks"
"$VRAMSIM" replay --format json nvtx.vtrace > nvtx.json && python3 - nvtx.json <<'PY'
import json, sys
m = {x["name"]: (x["kind"], x["count"]) for x in json.load(open(sys.argv[1]))["marks"]}
# 7 ranges (each push/pop and start/end pair, async ended on another
# thread) and 4 points (marks no /end closes): 11 names, one each.
ranges = {"step", "forward", "backward \u00fc\u20ac", "registered", "inner", "worker", "async"}
points = {"start", "ex-mark", "bad? utf8", "wide"}
assert set(m) == ranges | points, m
assert all(m[n] == ("range", 1) for n in ranges) and all(m[n] == ("point", 1) for n in points), m
PY
ok $? "NVTX marks reach the replay report (7 ranges, 4 points, one each)"
NVTX_INJECTION64_PATH=/nonexistent/lib.so "$VRAMCAP" --mode hook -o nvtxu.vtrace "$STUB/prog-nvtx" > nvtxu.out 2>&1
rc=$?
decode nvtxu.vtrace nvtxu.norm && [ $rc = 0 ] && ! grep -q '"mark"' nvtxu.norm \
  && grep -q "^levels push -2 -2 -2" nvtxu.out && [ "$(grep -c '"kernel"' nvtxu.norm)" = 4 ]
ok $? "NVTX_INJECTION64_PATH set by the user is left alone (no marks, program unaffected)"

# 2D/3D, peer, cooperative, cuLaunchKernelEx, a packed parameter buffer, and
# the per-thread default stream (_ptds/_ptsz variants, CU_STREAM_PER_THREAD):
# stream 2 is the main thread's default stream, 3 the worker's.
cat > "$T/expect-more" <<'EOF2'
{"bytes": 1048576, "id": 1, "kind": "device", "op": "alloc", "tid": 0}
{"bytes": 1048576, "id": 2, "kind": "device", "op": "alloc", "tid": 0}
{"bytes": 65536, "id": 3, "kind": "pinned", "op": "alloc", "tid": 0}
{"async": false, "bytes": 4096, "dir": "h2d", "dst": 1, "dur": 4096, "op": "copy", "src": 3, "stream": 0, "tid": 0}
{"async": true, "bytes": 4096, "dir": "d2d", "dst": 2, "dur": 4096, "op": "copy", "src": 1, "stream": 1, "tid": 0}
{"async": false, "bytes": 300, "dir": "d2h", "dst": 3, "dur": 300, "op": "copy", "src": 2, "stream": 0, "tid": 0}
{"async": false, "bytes": 256, "dir": "h2d", "dst": 2, "dur": 256, "op": "copy", "src": 3, "stream": 0, "tid": 0}
{"async": false, "bytes": 512, "dir": "h2d", "dst": 1, "dur": 512, "op": "copy", "src": 3, "stream": 0, "tid": 0}
{"async": true, "bytes": 192, "dir": "d2h", "dst": 3, "dur": 192, "op": "copy", "src": 2, "stream": 1, "tid": 0}
{"async": true, "bytes": 2048, "dir": "p2p", "dst": 1, "dur": 2048, "op": "copy", "src": 2, "stream": 0, "tid": 0}
{"async": true, "bytes": 1024, "dir": "p2p", "dst": 2, "dur": 1024, "op": "copy", "src": 1, "stream": 1, "tid": 0}
{"dur": 5000, "name": "axpy", "op": "kernel", "reads": [], "stream": 1, "tid": 0, "touches": [1, 2], "writes": []}
{"dur": 6000, "name": "pairk", "op": "kernel", "reads": [], "stream": 1, "tid": 0, "touches": [2], "writes": []}
{"dur": 7000, "name": "axpy", "op": "kernel", "reads": [], "stream": 1, "tid": 0, "touches": [1, 2], "writes": []}
{"op": "sync", "scope": "stream", "stream": 1, "tid": 0}
{"dur": 2000, "name": "axpy", "op": "kernel", "reads": [], "stream": 2, "tid": 0, "touches": [1, 2], "writes": []}
{"async": true, "bytes": 1000, "dir": "h2d", "dst": 1, "dur": 1000, "op": "copy", "src": 3, "stream": 2, "tid": 0}
{"async": false, "bytes": 500, "dir": "d2h", "dst": 3, "dur": 500, "op": "copy", "src": 1, "stream": 2, "tid": 0}
{"async": true, "bytes": 128, "dir": "d2d", "dst": 2, "dur": 128, "op": "copy", "src": 1, "stream": 2, "tid": 0}
{"async": true, "bytes": 300, "dir": "p2p", "dst": 1, "dur": 300, "op": "copy", "src": 2, "stream": 2, "tid": 0}
{"async": true, "bytes": 1024, "dst": 2, "dur": 512, "op": "memset", "stream": 2, "tid": 0}
{"dur": 1000, "name": "axpy", "op": "kernel", "reads": [], "stream": 2, "tid": 0, "touches": [1, 2], "writes": []}
{"op": "sync", "scope": "stream", "stream": 2, "tid": 0}
{"dur": 3000, "name": "axpy", "op": "kernel", "reads": [], "stream": 3, "tid": 1, "touches": [1, 2], "writes": []}
{"op": "sync", "scope": "stream", "stream": 3, "tid": 1}
{"event": 1, "op": "event_record", "stream": 2, "tid": 0}
{"event": 1, "op": "stream_wait", "stream": 2, "tid": 0}
{"dur": 1000, "name": "axpy", "op": "kernel", "reads": [], "stream": 0, "tid": 0, "touches": [1, 2], "writes": []}
{"dur": 1000, "name": "axpy", "op": "kernel", "reads": [], "stream": 0, "tid": 0, "touches": [1, 2], "writes": []}
{"op": "sync", "scope": "device", "tid": 0}
{"id": 1, "op": "free", "tid": 0}
{"id": 2, "op": "free", "tid": 0}
{"id": 3, "op": "free", "tid": 0}
EOF2
for p in linked dlopen; do
  "$VRAMCAP" --mode hook -o "more-$p.vtrace" -- "$STUB/prog-more-$p" > "more-$p.out" 2> "more-$p.err"
  rc=$?
  decode "more-$p.vtrace" "more-$p.norm" && [ $rc = 0 ] \
    && [ "$(cat "more-$p.err")" = "$ADVISE_NOTE" ] \
    && sed 1d "more-$p.norm" | diff - "$T/expect-more" >&2
  ok $? "prog-more-$p: 2D/3D/peer copies, cooperative and Ex launches, per-thread default streams; cuMemAdvise: one note, no event"
done
# Their shapes: the cooperative launch (5 blocks of 32, 256 B dynamic:
# 1024 + 256 = 1280), cuLaunchKernelEx from its CUlaunchConfig (6 blocks of
# 64x2, 4096 B dynamic: pairk's 512 + 4096 = 4608), the packed-buffer
# launch (7 blocks), then the _ptsz and plain axpy launches of 2, 1, 3
# (the worker), 1 and 1 blocks.
cat > "$T/expect-more.shapes" <<'EOF2'
axpy 5x1x1 32x1x1 32 1280
pairk 6x1x1 64x2x1 40 4608
axpy 7x1x1 32x1x1 32 1024
axpy 2x1x1 32x1x1 32 1024
axpy 1x1x1 32x1x1 32 1024
axpy 3x1x1 32x1x1 32 1024
axpy 1x1x1 32x1x1 32 1024
axpy 1x1x1 32x1x1 32 1024
EOF2
shapes more-linked.vtrace | diff "$T/expect-more.shapes" - >&2 \
  && shapes more-dlopen.vtrace | diff "$T/expect-more.shapes" - >&2
ok $? "hook mode: shapes of cooperative, Ex (CUlaunchConfig), packed-buffer and _ptsz launches"

# Managed memory in hook mode: no unified-memory counters, so the two
# kernels on the managed allocation keep their fault time, and one note
# says so (capture-cupti.sh checks the CUPTI side).
"$VRAMCAP" --mode hook -o manh.vtrace -- "$STUB/prog-managed" > manh.out 2> manh.err
rc=$?
decode manh.vtrace manh.norm && [ $rc = 0 ] && [ "$(grep -c . manh.err)" = 1 ] \
  && grep -qx "vramcap: 2 kernels on managed memory keep their page-fault time, which replay adds again (hook mode has no unified-memory counters; CUPTI mode takes it out)" manh.err \
  && [ "$(grep -c '"op": "kernel"' manh.norm)" = 3 ]
ok $? "prog-managed in hook mode: one note for the 2 kernels on managed memory"

# Graphs: two kernel nodes (axpy 3 blocks on ids 1 and 2; pairk 5 blocks on
# ids 3 and 1 through a struct) and an empty node, instantiated five ways
# (cuGraphInstantiate v1 and _v2, WithFlags, WithParams, WithParams_ptsz);
# six launches (e1 twice, e2, e3, e4 on stream 1; e5 on the per-thread
# default stream 2), each recorded as its two kernels in node order with the
# graph's 8000 ns split evenly; a node added after instantiation is in no
# exec; a failing launch and a kernel-less graph record nothing. The
# context sync is made twice: the second through cuCtxSynchronize_v2, what
# cuGetProcAddress answers at version 13000 (CUDA 13's cudaDeviceSynchronize).
{
  printf '%s\n' '{"bytes": 1048576, "id": 1, "kind": "device", "op": "alloc", "tid": 0}' \
    '{"bytes": 1048576, "id": 2, "kind": "device", "op": "alloc", "tid": 0}' \
    '{"bytes": 4096, "id": 3, "kind": "device", "op": "alloc", "tid": 0}'
  for st in 1 1 1 1 1 2; do
    echo '{"dur": 4000, "name": "axpy", "op": "kernel", "reads": [], "stream": '$st', "tid": 0, "touches": [1, 2], "writes": []}'
    echo '{"dur": 4000, "name": "pairk", "op": "kernel", "reads": [], "stream": '$st', "tid": 0, "touches": [3, 1], "writes": []}'
  done
  printf '%s\n' '{"op": "sync", "scope": "stream", "stream": 1, "tid": 0}' \
    '{"op": "sync", "scope": "stream", "stream": 2, "tid": 0}' \
    '{"op": "sync", "scope": "stream", "stream": 1, "tid": 0}' \
    '{"op": "sync", "scope": "device", "tid": 0}' '{"op": "sync", "scope": "device", "tid": 0}' \
    '{"id": 1, "op": "free", "tid": 0}' '{"id": 2, "op": "free", "tid": 0}' '{"id": 3, "op": "free", "tid": 0}'
} > "$T/expect-graph"
for p in linked dlopen; do
  "$STUB/prog-graph-$p" > "graph-$p.plain" 2>&1
  "$VRAMCAP" --mode hook -o "graph-$p.vtrace" -- "$STUB/prog-graph-$p" > "graph-$p.out" 2> "graph-$p.err"
  rc=$?
  decode "graph-$p.vtrace" "graph-$p.norm" && [ $rc = 0 ] && [ ! -s "graph-$p.err" ] \
    && cmp -s "graph-$p.plain" "graph-$p.out" \
    && grep -qx 'prog-graph: instantiate results 0, log "", bad launch 1' "graph-$p.out" \
    && sed 1d "graph-$p.norm" | diff - "$T/expect-graph" >&2
  ok $? "prog-graph-$p: every instantiate variant, kernels per launch (names, streams, touches, split time)"
done
"$VRAMCAP" -o graphc.vtrace -- "$STUB/prog-graph-dlopen" > graphc.out 2> graphc.err
rc=$?
decode graphc.vtrace graphc.norm && [ $rc = 0 ] && cmp -s graph-dlopen.plain graphc.out \
  && sed 1d graphc.norm | diff - "$T/expect-graph" >&2
ok $? "prog-graph in the default (cupti) mode without injection: the same trace"
# Graph kernel nodes carry the shape of their CUDA_KERNEL_NODE_PARAMS
# (128 threads a block, 2048 B dynamic shared memory): axpy 3 blocks,
# 1024 + 2048 = 3072 B; pairk 5 blocks, 512 + 2048 = 2560 B; six launches.
for i in 1 2 3 4 5 6; do printf 'axpy 3x1x1 128x1x1 32 3072\npairk 5x1x1 128x1x1 40 2560\n'; done > "$T/expect-graph.shapes"
shapes graph-linked.vtrace | diff "$T/expect-graph.shapes" - >&2 \
  && shapes graph-dlopen.vtrace | diff "$T/expect-graph.shapes" - >&2
ok $? "hook mode: graph kernel nodes carry grid, block, regs and smem from their node parameters"
"$VRAMSIM" replay --format json graph-linked.vtrace > graph.json && python3 - graph.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
k = {x["name"]: (x["count"], x["captured_ns"]) for x in r["kernels"]["top"]}
assert r["status"] == "ok" and r["events"] == 23 and k == {"axpy": (6, 24000), "pairk": (6, 24000)}, (r["status"], r["events"], k)
PY
ok $? "a graph trace replays: 23 events, 6 launches of each kernel, 24000 ns captured each"

# Array copies, 3D peer copies and batches (prog-copies, both ways in). A
# CUDA array side is one synthetic allocation, id 4: 0 bytes, device, tag
# cuda_arrays, made just before the first array copy (an id-0 side would
# replay as pageable host memory). cuMemcpy3DPeer: d2d within a context,
# p2p across two, h2d from host to an array. Batches on stream 1 (CUDA 13's
# cuMemcpyBatchAsync_v2 of 1000/3000/2000/500 bytes, the last to pageable
# memory hence blocking; the 12.8 call of 700/300; cuMemcpy3DBatchAsync_v2
# of 64x2x1 bytes, 16x4x1 floats from an array, 10x3x1 4-byte elements
# into one; the 12.8 3D call of 100): one copy event per entry, direction
# per entry, the batch's measured time split by bytes (1 ns a byte on the
# stub: each entry's own bytes). Then the per-thread variants on stream 2:
# HtoA_v2_ptds, AtoHAsync_v2_ptsz, 3DPeer_ptds, BatchAsync_v2_ptsz,
# BatchAsync_ptsz (12.8), 3DBatchAsync_v2_ptsz.
cat > "$T/expect-copies" <<'EOF2'
{"bytes": 1048576, "id": 1, "kind": "device", "op": "alloc", "tid": 0}
{"bytes": 1048576, "id": 2, "kind": "device", "op": "alloc", "tid": 0}
{"bytes": 65536, "id": 3, "kind": "pinned", "op": "alloc", "tid": 0}
{"bytes": 0, "id": 4, "kind": "device", "op": "alloc", "tag": "cuda_arrays", "tid": 0}
{"async": false, "bytes": 4096, "dir": "h2d", "dst": 4, "dur": 4096, "op": "copy", "src": 3, "stream": 0, "tid": 0}
{"async": false, "bytes": 2048, "dir": "d2h", "dst": 0, "dur": 2048, "op": "copy", "src": 4, "stream": 0, "tid": 0}
{"async": true, "bytes": 1024, "dir": "d2d", "dst": 1, "dur": 1024, "op": "copy", "src": 4, "stream": 0, "tid": 0}
{"async": true, "bytes": 512, "dir": "d2d", "dst": 4, "dur": 512, "op": "copy", "src": 2, "stream": 0, "tid": 0}
{"async": true, "bytes": 256, "dir": "d2d", "dst": 4, "dur": 256, "op": "copy", "src": 4, "stream": 0, "tid": 0}
{"async": true, "bytes": 300, "dir": "h2d", "dst": 4, "dur": 300, "op": "copy", "src": 3, "stream": 1, "tid": 0}
{"async": true, "bytes": 200, "dir": "d2h", "dst": 3, "dur": 200, "op": "copy", "src": 4, "stream": 1, "tid": 0}
{"async": true, "bytes": 512, "dir": "d2d", "dst": 2, "dur": 512, "op": "copy", "src": 1, "stream": 0, "tid": 0}
{"async": true, "bytes": 192, "dir": "p2p", "dst": 1, "dur": 192, "op": "copy", "src": 2, "stream": 1, "tid": 0}
{"async": false, "bytes": 32, "dir": "h2d", "dst": 4, "dur": 32, "op": "copy", "src": 3, "stream": 0, "tid": 0}
{"async": true, "bytes": 1000, "dir": "h2d", "dst": 1, "dur": 1000, "op": "copy", "src": 3, "stream": 1, "tid": 0}
{"async": true, "bytes": 3000, "dir": "d2h", "dst": 3, "dur": 3000, "op": "copy", "src": 2, "stream": 1, "tid": 0}
{"async": true, "bytes": 2000, "dir": "d2d", "dst": 2, "dur": 2000, "op": "copy", "src": 1, "stream": 1, "tid": 0}
{"async": false, "bytes": 500, "dir": "d2h", "dst": 0, "dur": 500, "op": "copy", "src": 1, "stream": 1, "tid": 0}
{"async": true, "bytes": 700, "dir": "d2d", "dst": 2, "dur": 700, "op": "copy", "src": 1, "stream": 1, "tid": 0}
{"async": true, "bytes": 300, "dir": "d2d", "dst": 1, "dur": 300, "op": "copy", "src": 2, "stream": 1, "tid": 0}
{"async": true, "bytes": 128, "dir": "d2d", "dst": 2, "dur": 128, "op": "copy", "src": 1, "stream": 1, "tid": 0}
{"async": true, "bytes": 256, "dir": "d2h", "dst": 3, "dur": 256, "op": "copy", "src": 4, "stream": 1, "tid": 0}
{"async": true, "bytes": 120, "dir": "h2d", "dst": 4, "dur": 120, "op": "copy", "src": 3, "stream": 1, "tid": 0}
{"async": true, "bytes": 100, "dir": "d2d", "dst": 2, "dur": 100, "op": "copy", "src": 1, "stream": 1, "tid": 0}
{"op": "sync", "scope": "stream", "stream": 1, "tid": 0}
{"async": false, "bytes": 64, "dir": "h2d", "dst": 4, "dur": 64, "op": "copy", "src": 3, "stream": 2, "tid": 0}
{"async": true, "bytes": 32, "dir": "d2h", "dst": 3, "dur": 32, "op": "copy", "src": 4, "stream": 2, "tid": 0}
{"async": true, "bytes": 16, "dir": "d2d", "dst": 2, "dur": 16, "op": "copy", "src": 1, "stream": 2, "tid": 0}
{"async": true, "bytes": 40, "dir": "d2d", "dst": 2, "dur": 40, "op": "copy", "src": 1, "stream": 2, "tid": 0}
{"async": true, "bytes": 60, "dir": "d2d", "dst": 1, "dur": 60, "op": "copy", "src": 2, "stream": 2, "tid": 0}
{"async": true, "bytes": 10, "dir": "d2d", "dst": 1, "dur": 10, "op": "copy", "src": 2, "stream": 2, "tid": 0}
{"async": true, "bytes": 20, "dir": "d2d", "dst": 2, "dur": 20, "op": "copy", "src": 1, "stream": 2, "tid": 0}
{"op": "sync", "scope": "stream", "stream": 2, "tid": 0}
{"op": "sync", "scope": "device", "tid": 0}
{"id": 1, "op": "free", "tid": 0}
{"id": 2, "op": "free", "tid": 0}
{"id": 3, "op": "free", "tid": 0}
EOF2
for p in linked dlopen; do
  "$STUB/prog-copies-$p" > "copies-$p.plain" 2>&1
  "$VRAMCAP" --mode hook -o "copies-$p.vtrace" -- "$STUB/prog-copies-$p" > "copies-$p.out" 2> "copies-$p.err"
  rc=$?
  decode "copies-$p.vtrace" "copies-$p.norm" && [ $rc = 0 ] && [ ! -s "copies-$p.err" ] \
    && cmp -s "copies-$p.plain" "copies-$p.out" && sed 1d "copies-$p.norm" | diff - "$T/expect-copies" >&2
  ok $? "prog-copies-$p: array copies, 3D peer copies, batches (12.8 and _v2), per-thread variants"
done
"$VRAMSIM" replay --format json copies-linked.vtrace > copies.json && python3 - copies.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = r["traffic"]
assert r["status"] == "ok" and r["events"] == 37 and t["h2d_bytes"] == 5612 and t["d2h_bytes"] == 6036, (r["status"], r["events"], t)
PY
ok $? "the copies trace replays: 37 events, 5612 bytes h2d and 6036 d2h (array sides on the device)"

# The driver version in the header, from both layouts of
# /proc/driver/nvidia/version (the open kernel module adds "for").
printf 'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U16)\nGCC version:  gcc version 12.2.0\n' > nvrm-open
printf 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n' > nvrm-prop
VRAMCAP_DRIVER_VERSION_FILE=nvrm-open "$VRAMCAP" --mode hook -o drv-open.vtrace -- "$STUB/prog-linked" > /dev/null 2>&1 &&
  VRAMCAP_DRIVER_VERSION_FILE=nvrm-prop "$VRAMCAP" --mode hook -o drv-prop.vtrace -- "$STUB/prog-linked" > /dev/null 2>&1 &&
  "$VRAMSIM" convert drv-open.vtrace drv-open.jsonl && "$VRAMSIM" convert drv-prop.vtrace drv-prop.jsonl &&
  python3 - drv-open.jsonl drv-prop.jsonl <<'PY'
import json, sys
got = [json.loads(open(f).readline())["capture"].get("driver_version") for f in sys.argv[1:]]
assert got == ["580.159.04", "550.54.15"], got
PY
ok $? "driver_version read from the open and the proprietary kernel module's version line"

# 300 functions launched from four threads at once (prog-manyfuncs): the
# shim's table of functions grows (256 slots, doubled at half full) while
# the other threads launch functions already in it. Every kernel keeps its
# own function's name, time and shape: many<I> runs I % 7 + 1 blocks of 32
# threads (1000 ns a block), with the stub's 16 + I % 64 registers and
# 256 x (I % 8) B of static shared memory (absent when 0).
"$VRAMCAP" --mode hook -o many.vtrace -- "$STUB/prog-manyfuncs" > many.out 2> many.err
rc=$?
[ $rc = 0 ] && [ ! -s many.err ] && "$VRAMSIM" convert many.vtrace many.jsonl && python3 - many.jsonl <<'PY'
import json, sys
k = [e for e in map(json.loads, open(sys.argv[1])) if e.get("op") == "kernel"]
assert len(k) == 1200 and len({e["name"] for e in k}) == 300, len(k)
# the main thread records nothing: the workers are tids 0-3, 300 kernels each
assert sorted(e.get("tid", 0) for e in k) == [t for t in range(4) for _ in range(300)]
for e in k:
    i = int(e["name"][4:])
    want = ([i % 7 + 1, 1, 1], [32, 1, 1], 16 + i % 64, 256 * (i % 8) or None, 1000 * (i % 7 + 1))
    assert (e["grid"], e["block"], e["regs"], e.get("smem"), e["dur"]) == want, (e, want)
PY
ok $? "300 functions from 4 threads: each kernel its own function's name, time, regs and smem"

# The header's preset from the device name: the A40 is "NVIDIA A40"; an
# RTX A4000, whose name contains "A40", matches none.
STUB_CUDA_NAME="NVIDIA A40" "$VRAMCAP" --mode hook -o dev-a40.vtrace -- "$STUB/prog-linked" > /dev/null 2>&1 &&
  STUB_CUDA_NAME="NVIDIA RTX A4000" "$VRAMCAP" --mode hook -o dev-a4000.vtrace -- "$STUB/prog-linked" > /dev/null 2>&1 &&
  decode dev-a40.vtrace dev-a40.norm && decode dev-a4000.vtrace dev-a4000.norm &&
  head -1 dev-a40.norm | grep -q '"config": "a40"' && head -1 dev-a4000.norm | grep -q '"config": null'
ok $? "device 'NVIDIA A40' -> preset a40; 'NVIDIA RTX A4000' -> none"
