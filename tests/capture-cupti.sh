#!/bin/sh
# capture-cupti.sh — vramcap in its default (CUPTI) mode, end to end
# without a GPU: the stub driver (tests/stub-cuda/libcuda-stub.c) loads the
# shim as its injection library (STUB_CUDA_INJECT=1), and the stub libcupti
# (libcupti-stub.c, through VRAMCAP_CUPTI) turns the driver's calls into
# callbacks and its fake GPU times into activity records. The traces must
# be those of hook mode (tests/capture-hook.sh), their GPU times taken from
# the activity records.
VRAMSIM=${VRAMSIM:-bin/vramsim}
BUILD=${TEST_BUILD:-build}
VRAMCAP=$(dirname "$VRAMSIM")/vramcap
STUB=$BUILD/tests/stub-cuda
HERE=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$VRAMCAP" ] || [ ! -f "$STUB/libcuda.so.1" ] || [ ! -f "$STUB/libcupti.so" ] \
   || [ ! -f "$STUB/libcupti-probe.so" ] || [ ! -x "$STUB/prog-linked" ] || [ ! -x "$STUB/prog-managed" ]; then
  echo "1..0 # SKIP capture not built (no CUDA toolkit)"
  exit 0
fi
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
STUB=$(cd "$STUB" && pwd)
VRAMCAP=$(cd "$(dirname "$VRAMCAP")" && pwd)/vramcap
VRAMSIM=$(cd "$(dirname "$VRAMSIM")" && pwd)/$(basename "$VRAMSIM")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export LD_LIBRARY_PATH="$STUB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
n=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }

# capture NAME PROG [ENV=VALUE...]: the default (cupti) mode with injection
# and the stub libcupti; NAME.out, NAME.err, NAME.rc, NAME.norm.
capture() {
  name=$1 prog=$2
  shift 2
  env STUB_CUDA_INJECT=1 VRAMCAP_CUPTI="$STUB/libcupti.so" "$@" \
    "$VRAMCAP" -o "$name.vtrace" -- "$STUB/$prog" > "$name.out" 2> "$name.err"
  echo $? > "$name.rc"
  decode "$name.vtrace" "$name.norm" || echo '{}' > "$name.norm"
}

# Is there no sign on stderr (FILE) that CUPTI mode fell back to hooks?
no_fallback() {
  ! grep -q "CUPTI injection did not start\|hook mode\|cannot load libcupti\|cuptiSubscribe failed" "$1"
}

. "$HERE/capture-lib.sh"

# The expected prog-basic and prog-more traces are capture-hook.sh's own
# (expect-basic, expect-more): CUPTI mode must record what hook mode does,
# only the header's mode differs.
hook_expect() {
  sed -n "/^cat > \"\$T\/$1\" <<'EOF2'\$/,/^EOF2\$/p" "$HERE/capture-hook.sh" | sed '1d;$d'
}
hook_expect expect-basic | sed '1s/"mode": "hook"/"mode": "cupti"/' > "$T/expect-basic"
hook_expect expect-more > "$T/expect-more"
hook_expect expect-copies > "$T/expect-copies"
# with_durs "LINE:DUR ...": expect-copies with those events' dur changed
# (LINE counts the events from 0).
with_durs() {
  python3 - "$T/expect-copies" "$1" <<'PY'
import json, sys
durs = dict(map(int, x.split(":")) for x in sys.argv[2].split())
for i, l in enumerate(open(sys.argv[1])):
    e = json.loads(l)
    if i in durs: e["dur"] = durs[i]
    print(json.dumps(e, sort_keys=True))
PY
}
# Batch entries of prog-copies, by event line: 14-17 (1000, 3000, 2000,
# 500 bytes), 18-19 (700, 300), 20-22 (the 3D batch: 128, 256, 120), 23
# (100), 28-29 (40, 60), 30 (10), 31 (20).
# STUB_CUPTI_BATCH=pairs: a record per two entries, 1000 ns more than their
# bytes, split over its two entries by bytes (5000: 1250 + 3750; 1384 over
# 128 + 256: 461 + 923; a lone entry keeps its record's 1000 + bytes).
with_durs "14:1250 15:3750 16:2800 17:700 18:1400 19:600 20:461 21:923 22:1120 23:1100 28:440 29:660 30:1010 31:1020" \
  > "$T/expect-copies.pairs"
# STUB_CUPTI_BATCH=first: only the first entry's record came; at the
# device sync the sum (the first entry's bytes) is split over all the
# entries by bytes (1000 over 6500 bytes: 153, 462, 308, 77).
with_durs "14:153 15:462 16:308 17:77 18:490 19:210 20:32 21:65 22:31 28:16 29:24" > "$T/expect-copies.first"
sed 1d "$T/expect-basic" > "$T/expect-basic.events"

# prog-managed: A (id 1, device), M (id 2, managed), P (id 3, stream-ordered
# on the legacy stream), three axpy launches of 4 blocks (4000 ns on the
# stub): x = M, y = A twice, then x = y = A. The first launch migrates M
# (the stub's UM counters: a page fault over its first quarter, a transfer
# over [1/8, 1/2]); CUPTI mode takes the 2000 ns of fault handling out of it.
cat > "$T/expect-managed" <<'EOF2'
{"config": "h100-sxm", "device": "NVIDIA H100 80GB HBM3", "mode": "cupti", "tool": "vramcap 0.1"}
{"bytes": 1048576, "id": 1, "kind": "device", "op": "alloc", "tid": 0}
{"bytes": 1048576, "id": 2, "kind": "managed", "op": "alloc", "tid": 0}
{"bytes": 1048576, "id": 3, "kind": "device", "op": "alloc", "stream": 0, "tid": 0}
{"id": 3, "op": "free", "stream": 0, "tid": 0}
{"dur": 2000, "name": "axpy", "op": "kernel", "reads": [], "stream": 0, "tid": 0, "touches": [2, 1], "writes": []}
{"dur": 4000, "name": "axpy", "op": "kernel", "reads": [], "stream": 0, "tid": 0, "touches": [2, 1], "writes": []}
{"dur": 4000, "name": "axpy", "op": "kernel", "reads": [], "stream": 0, "tid": 0, "touches": [1], "writes": []}
{"op": "sync", "scope": "device", "tid": 0}
{"id": 1, "op": "free", "tid": 0}
{"id": 2, "op": "free", "tid": 0}
EOF2
# The same without the first kernel's dur (what holds with or without the
# unified-memory accounting), and with the full 4000 ns (no UM counters).
python3 - "$T/expect-managed" > "$T/expect-managed.nodur" <<'PY'
import json, sys
for i, l in enumerate(open(sys.argv[1])):
    e = json.loads(l)
    if i == 5: e.pop("dur")
    print(json.dumps(e, sort_keys=True))
PY
sed '6s/"dur": 2000/"dur": 4000/' "$T/expect-managed" > "$T/expect-managed.full"
# strip_dur1 NORM: NORM without the first kernel's dur.
strip_dur1() {
  python3 - "$1" <<'PY'
import json, sys
seen = False
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("op") == "kernel" and not seen:
        seen = True; e.pop("dur", None)
    print(json.dumps(e, sort_keys=True))
PY
}

echo "1..34"
cd "$T"

# The stubs themselves, seen by a plain CUPTI client (cupti-probe.c, small
# 4 KiB buffers): callbacks paired by correlation id with their slot kept,
# the *_params layouts, and the records prog-managed must produce.
probe() {
  out=$1
  shift
  env STUB_CUDA_INJECT=1 CUDA_INJECTION64_PATH="$STUB/libcupti-probe.so" CUPTI_PROBE_OUT="$out" "$@" \
    "$STUB/prog-managed" > /dev/null 2>&1
}
check_probe() {
  python3 - "$1" "$2" <<'PY'
import sys
no_um = sys.argv[2] == "no-um"
calls, order, recs = {}, [], []
for l in open(sys.argv[1]):
    w = l.split()
    if w[0] == "enter":
        assert int(w[3]) not in calls, l             # a fresh correlation id per call
        calls[int(w[3])] = [w[1], int(w[4]), None]
        order.append(int(w[3]))
    elif w[0] == "exit":
        c = calls[int(w[3])]
        assert c[0] == w[1] and c[2] is None and w[5] == "0" and w[6] == "1", l   # same call, slot kept
        c[2] = True
    elif w[0] == "subscribe":
        assert w[1] == "0", l
    elif w[0] == "enable":                           # kind 25: UNIFIED_MEMORY_COUNTER
        assert w[2] == ("28" if no_um and w[1] == "25" else "0"), l
    elif w[0] == "um-config":
        assert w[1] == ("28" if no_um else "0"), l   # CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED
    else:
        recs.append(w)
assert all(c[2] for c in calls.values())
names = [calls[k][0] for k in order]
assert names == ["cuMemAlloc_v2", "cuMemAllocManaged", "cuMemAllocAsync", "cuMemFreeAsync"] + ["cuLaunchKernel"] * 3 \
    + ["cuCtxSynchronize", "cuMemFree_v2", "cuMemFree_v2"], names
assert [calls[k][1] for k in order[:3]] == [1 << 20] * 3 and calls[order[4]][1] == 4
corr = dict(zip(["alloc", "managed", "async", "freeasync", "k1", "k2", "k3", "sync", "freeA", "freeM"], order))
MiB = 1 << 20
want = [["memory", "1", "6", "0", str(8 << 20), "0", "0", "0"],           # STUB_CUPTI_STATIC
        ["memory", "1", "3", str(0x7fffffff), "4096", "0", "0", "0"],     # STUB_CUPTI_UNRECORDED
        ["memory", "1", "3", str(corr["alloc"]), str(MiB), "0", "0", "0"],
        ["memory", "1", "5", str(corr["managed"]), str(MiB), "0", "0", "0"],
        ["pool", "1", str(corr["async"]), str(32 * MiB), str(MiB)],
        ["memory", "1", "3", str(corr["async"]), str(MiB), "1", str(32 * MiB), str(MiB)],
        ["memory", "2", "3", str(corr["freeasync"]), str(MiB), "1", str(32 * MiB), "0"],
        ["kernel", "axpy", str(corr["k1"]), "1000000", "1004000", "7", "4"]]
if not no_um:
    want += [["um", "4", "1", "1000000", "1001000"], ["um", "1", str(MiB), "1000500", "1002000"]]
want += [["kernel", "axpy", str(corr["k2"]), "1004000", "1008000", "7", "4"],
         ["kernel", "axpy", str(corr["k3"]), "1008000", "1012000", "7", "4"],
         ["memory", "2", "3", str(corr["freeA"]), str(MiB), "0", "0", "0"],
         ["memory", "2", "5", str(corr["freeM"]), str(MiB), "0", "0", "0"]]
assert recs == want, "\n".join(" ".join(r) for r in recs)
PY
}
probe "$T/probe.txt" STUB_CUPTI_STATIC=8388608 STUB_CUPTI_UNRECORDED=1 && check_probe "$T/probe.txt" um >&2
ok $? "stub CUPTI: enter/exit pairs, correlation ids, params, memory/pool/kernel/UM records of prog-managed"
probe "$T/probe-noum.txt" STUB_CUPTI_NO_UM=1 STUB_CUPTI_STATIC=8388608 STUB_CUPTI_UNRECORDED=1 \
  && check_probe "$T/probe-noum.txt" no-um >&2
ok $? "stub CUPTI with STUB_CUPTI_NO_UM=1: UM configuration refused, no UM records"

# a. prog-basic both ways in, the exact trace.
for p in linked dlopen; do
  "$STUB/prog-$p" > "plain-$p.out" 2>&1
  echo $? > "plain-$p.rc"
  capture "$p" "prog-$p"
  [ "$(cat "$p.rc")" = 0 ] && diff "$T/expect-basic" "$p.norm" >&2
  ok $? "prog-$p in cupti mode: exact trace, header mode cupti, GPU times from activity records"
  # b. stdout untouched, no fallback.
  cmp -s "plain-$p.out" "$p.out" && no_fallback "$p.err"
  ok $? "prog-$p in cupti mode: program output unchanged, no fallback note on stderr"
done

# prog-more: 2D/3D/peer copies, cooperative and Ex launches, the _ptds/_ptsz
# callbacks (cupti.c's pt_map), two threads.
capture more prog-more-linked
[ "$(cat more.rc)" = 0 ] && no_fallback more.err && [ -s "$T/expect-more" ] \
  && [ "$(grep -c . more.err)" = 1 ] && grep -qxF "$ADVISE_NOTE" more.err \
  && sed 1d more.norm | diff "$T/expect-more" - >&2
ok $? "prog-more in cupti mode: capture-hook.sh's exact trace (per-thread default streams, 2D/3D/peer, Ex launches)"

# prog-copies: array copies, 3D peer copies, batches (cupti.c's batch
# matching: one record per entry by default), the per-thread callbacks.
for p in linked dlopen; do
  capture "copies-$p" "prog-copies-$p"
  [ "$(cat "copies-$p.rc")" = 0 ] && no_fallback "copies-$p.err" && [ -s "$T/expect-copies" ] \
    && head -1 "copies-$p.norm" | grep -q '"mode": "cupti"' && sed 1d "copies-$p.norm" | diff "$T/expect-copies" - >&2
  ok $? "prog-copies-$p in cupti mode: capture-hook.sh's exact trace (arrays, 3D peer, batches, per-thread variants)"
done
# A batch reported as one record (copyCount = the entries): the same trace.
capture copies-merged prog-copies-linked STUB_CUPTI_BATCH=merged
[ "$(cat copies-merged.rc)" = 0 ] && sed 1d copies-merged.norm | diff "$T/expect-copies" - >&2
ok $? "STUB_CUPTI_BATCH=merged: one record per batch (copyCount), split over the entries by bytes"
capture copies-pairs prog-copies-linked STUB_CUPTI_BATCH=pairs
[ "$(cat copies-pairs.rc)" = 0 ] && sed 1d copies-pairs.norm | diff "$T/expect-copies.pairs" - >&2
ok $? "STUB_CUPTI_BATCH=pairs: records of two entries each, matched in order, each split over its own entries"
capture copies-first prog-copies-linked STUB_CUPTI_BATCH=first
[ "$(cat copies-first.rc)" = 0 ] && sed 1d copies-first.norm | diff "$T/expect-copies.first" - >&2
ok $? "STUB_CUPTI_BATCH=first: fewer records than entries, their sum split by bytes at the device sync"

# Graphs: CUPTI reports each kernel node's own time (axpy 3 blocks, pairk
# 5), where hook mode only knows a launch's total and splits it evenly
# (4000 each); the stub reports a launch's nodes last first, so they are
# matched by graphNodeId (cuptiGetGraphNodeId), not by order.
capture graph prog-graph-dlopen
[ "$(cat graph.rc)" = 0 ] && no_fallback graph.err && python3 - graph.norm <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])][1:]
k = [(e["name"], e["stream"], e["dur"], e["touches"]) for e in ev if e["op"] == "kernel"]
want = []
for st in (1, 1, 1, 1, 1, 2):
    want += [("axpy", st, 3000, [1, 2]), ("pairk", st, 5000, [3, 1])]
assert k == want, k
assert len(ev) == 23, len(ev)
PY
ok $? "prog-graph in cupti mode: each node's kernel time, matched by graph node id"

# Threads: callbacks from four threads at once, the forked child's trace.
capture thr prog-threads
[ "$(cat thr.rc)" = 0 ] && check_threads thr.norm
ok $? "4 threads in cupti mode: per-thread events, every kernel timed by its record"

# c. prog-managed.
"$STUB/prog-managed" > plain-managed.out 2>&1
echo $? > plain-managed.rc
capture man prog-managed
[ "$(cat man.rc)" = 0 ] && cmp -s plain-managed.out man.out && no_fallback man.err \
  && strip_dur1 man.norm | diff "$T/expect-managed.nodur" - >&2
ok $? "prog-managed: allocations (device, managed, stream-ordered), touches, later kernels 4000 ns"
# The first kernel loses the union of its fault group and migration.
diff "$T/expect-managed" man.norm >&2
ok $? "prog-managed: first kernel on managed memory 2000 ns (4000 less 2000 of fault handling)"
# The launch CUPTI recorded rides on each kernel (SPEC 3 kernel shape):
# prog-managed launches axpy on 4 blocks of 256 threads; the stub's records
# say 32 registers and 1024 B of static shared memory.
"$VRAMSIM" convert man.vtrace man.raw2.jsonl 2>/dev/null && python3 - man.raw2.jsonl <<'PY'
import json, sys
k = [json.loads(l) for l in open(sys.argv[1])][1:]
k = [e for e in k if e["op"] == "kernel"]
assert len(k) == 3, k
for e in k:
    assert (e["grid"], e["block"], e["regs"], e["smem"]) == ([4, 1, 1], [256, 1, 1], 32, 1024), e
PY
ok $? "prog-managed: kernels carry grid [4,1,1], block [256,1,1], 32 registers, 1024 B shared memory from CUPTI's records"
# The records, not the launch: with cuFuncGetAttribute refused (which
# leaves hook mode without regs and smem) the records still give them.
# Graph kernels too (prog-graph: each node's record, matched by node id;
# axpy 1024 + 2048 B, pairk 512 + 2048 B, capture-hook.sh).
capture noattr prog-managed STUB_CUDA_NO_FUNC_ATTR=1
capture noattrg prog-graph-dlopen STUB_CUDA_NO_FUNC_ATTR=1
[ "$(cat noattr.rc)" = 0 ] && no_fallback noattr.err \
  && [ "$(shapes noattr.vtrace | sort | uniq -c | tr -s ' ')" = " 3 axpy 4x1x1 256x1x1 32 1024" ] \
  && [ "$(cat noattrg.rc)" = 0 ] \
  && [ "$(shapes noattrg.vtrace | sort | uniq -c | tr -s ' ' | tr '\n' ';')" = " 6 axpy 3x1x1 128x1x1 32 3072; 6 pairk 5x1x1 128x1x1 40 2560;" ]
ok $? "STUB_CUDA_NO_FUNC_ATTR=1: regs and smem from CUPTI's records (launches and graph nodes)"
# One program, both modes, the same shapes: prog-linked, prog-more (static
# + dynamic shared memory from cooperative and Ex launches) and prog-graph
# (kernel nodes: the records matched by node id in CUPTI mode, the node
# parameters in hook mode).
agree=0
for p in linked:prog-linked more:prog-more-linked graph:prog-graph-dlopen; do
  "$VRAMCAP" --mode hook -o "${p%%:*}-hook.vtrace" -- "$STUB/${p#*:}" > /dev/null 2>&1
  shapes "${p%%:*}.vtrace" > "${p%%:*}.cshapes" && shapes "${p%%:*}-hook.vtrace" > "${p%%:*}.hshapes" \
    && [ -s "${p%%:*}.cshapes" ] && diff "${p%%:*}.cshapes" "${p%%:*}.hshapes" >&2 || agree=1
done
ok $agree "cupti and hook mode give each kernel the same grid, block, regs and smem (prog-linked, prog-more, prog-graph)"
# The summary of what the counters showed, once, at exit.
[ "$(grep -c '^vramcap: unified memory: ' man.err)" = 1 ]
ok $? "prog-managed: one 'vramcap: unified memory: ' line on stderr at exit"

# d. No unified-memory counters: kernels keep their whole time.
capture noum prog-managed STUB_CUPTI_NO_UM=1
[ "$(cat noum.rc)" = 0 ] && no_fallback noum.err && diff "$T/expect-managed.full" noum.norm >&2
ok $? "STUB_CUPTI_NO_UM=1: the first kernel keeps its 4000 ns, still cupti mode"
# The note that UM counters are unavailable.
[ "$(grep -c 'unified-memory counters unavailable' noum.err)" = 1 ]
ok $? "STUB_CUPTI_NO_UM=1: one note 'unified-memory counters unavailable'"

# e. Memory the trace does not have: a static allocation, an allocation
# under a correlation id no recorded call had. The events do not change.
capture static prog-managed STUB_CUPTI_STATIC=8388608
strip_dur1 static.norm | diff "$T/expect-managed.nodur" - >&2 && [ "$(cat static.rc)" = 0 ]
ok $? "STUB_CUPTI_STATIC: the same events"
# The static-memory note.
grep "static" static.err | grep -q "8\.0 MiB"
ok $? "STUB_CUPTI_STATIC=8388608: a stderr line with 'static' and '8.0 MiB'"
capture unrec prog-managed STUB_CUPTI_UNRECORDED=1
strip_dur1 unrec.norm | diff "$T/expect-managed.nodur" - >&2 && [ "$(cat unrec.rc)" = 0 ]
ok $? "STUB_CUPTI_UNRECORDED: the same events"
# The unrecorded-allocation note: one allocation of 4096 bytes.
grep -q "^vramcap: CUPTI saw 1 allocation of 4.0 KiB that the trace lacks" unrec.err
ok $? "STUB_CUPTI_UNRECORDED=1: 'CUPTI saw 1 allocation of 4.0 KiB that the trace lacks'"
# The stub's pool reserves 32 MiB for prog-managed's one 1 MiB
# stream-ordered allocation.
grep -q "^vramcap: stream-ordered memory pools reserved up to 32.0 MiB while their allocations peaked at 1.0 MiB" man.err
ok $? "pool records: 'reserved up to 32.0 MiB while their allocations peaked at 1.0 MiB'"
# Records CUPTI dropped, and a timing kind it refuses: said, not hidden.
capture dropped prog-managed STUB_CUPTI_DROPPED=5
[ "$(cat dropped.rc)" = 0 ] && grep -q "^vramcap: CUPTI dropped 5 activity records" dropped.err
ok $? "STUB_CUPTI_DROPPED=5: 'CUPTI dropped 5 activity records'"
capture nokern prog-managed STUB_CUPTI_NO_KERNELS=1
[ "$(cat nokern.rc)" = 0 ] && no_fallback nokern.err \
  && grep -q "^vramcap: CUPTI: CONCURRENT_KERNEL failed (CUPTI_ERROR_NOT_SUPPORTED): GPU times will be missing" nokern.err \
  && [ "$(grep -c '"op": "kernel"' nokern.norm)" = 3 ] && ! grep '"op": "kernel"' nokern.norm | grep -qv '"dur": 0'
ok $? "STUB_CUPTI_NO_KERNELS=1: one note, the kernels recorded with dur 0"
# No records: each kernel keeps the shape its launch and cuFuncGetAttribute gave.
[ "$(shapes nokern.vtrace | sort | uniq -c | tr -s ' ')" = " 3 axpy 4x1x1 256x1x1 32 1024" ]
ok $? "STUB_CUPTI_NO_KERNELS=1: kernels keep the launch's shape"

# f. Exit status and replay.
[ "$(cat man.rc)" = "$(cat plain-managed.rc)" ] && [ "$(cat linked.rc)" = "$(cat plain-linked.rc)" ] \
  && [ "$(cat dlopen.rc)" = "$(cat plain-dlopen.rc)" ]
ok $? "exit status unchanged (prog-basic both ways, prog-managed)"
"$VRAMSIM" replay man.vtrace -c h100-sxm > man.replay 2>&1 && "$VRAMSIM" replay linked.vtrace -c h100-sxm > linked.replay 2>&1 \
  && "$VRAMSIM" replay graph.vtrace -c h100-sxm > graph.replay 2>&1
ok $? "cupti-mode traces replay on h100-sxm (prog-managed, prog-basic, prog-graph)"
sh -c '"$@"; exit $?' sh env STUB_CUDA_INJECT=1 VRAMCAP_CUPTI="$STUB/libcupti.so" \
  "$VRAMCAP" -o crash.vtrace -- "$STUB/prog-crash" exit3 > /dev/null 2>&1
rc=$?
decode crash.vtrace crash.norm && [ $rc = 3 ] && sed -n 3p crash.norm | grep -q '"dur": 5000, "name": "axpy"'
ok $? "exit(3) in cupti mode: status 3 kept; the pending kernel's record flushed at exit (rc $rc)"

# Another tool holds CUPTI: one note, hook mode records the same trace.
capture busy prog-linked STUB_CUPTI_BUSY=1
[ "$(cat busy.rc)" = 0 ] && [ "$(grep -c 'CUPTI is already in use' busy.err)" = 1 ] \
  && sed 1d busy.norm | diff "$T/expect-basic.events" - >&2 && head -1 busy.norm | grep -q '"mode": "hook"'
ok $? "CUPTI already in use (STUB_CUPTI_BUSY=1): one note, hook-mode trace"
