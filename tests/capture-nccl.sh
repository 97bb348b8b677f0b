#!/bin/sh
# capture-nccl.sh — vramcap's NCCL wrap (capture/nccl.c) against the stub
# driver and the stub libnccl (tests/stub-cuda/libnccl-stub.c): each kernel
# an NCCL call launches carries the call's collective, in hook and CUPTI
# mode; --no-nccl and programs without NCCL get none.
VRAMSIM=${VRAMSIM:-bin/vramsim}
BUILD=${TEST_BUILD:-build}
VRAMCAP=$(dirname "$VRAMSIM")/vramcap
STUB=$BUILD/tests/stub-cuda
HERE=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$VRAMCAP" ] || [ ! -f "$STUB/libcuda.so.1" ] || [ ! -x "$STUB/prog-nccl" ] \
   || [ ! -f "$STUB/libcupti.so" ]; then
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

. "$HERE/capture-lib.sh"

# The kernels prog-nccl.c launches, in order: stream 1 = s1, 2 = s2; the
# stub's kernel runs 1000 ns (grid 1). Bytes by hand from its arguments
# (SPEC 3: the per-rank input buffer; element sizes f16 2, bf16 2, f32 4,
# f64 8, i8 1, i32 4, i64 8):
#   allreduce 1000 f32               4000      allgather sendcount 256 bf16   512
#   reducescatter recvcount 100 f64 x 8 ranks  100*8*8 = 6400
#   noargs: not NCCL's, no collective
#   broadcast 33 i8                  33        bcast 7 f64                    56
#   reduce 10 i64                    80        send 64 f16                    128
#   recv 48 f32                      192       alltoall 5 i32 per peer x 4    80
#   group of 8 sends + 8 recvs of 16 f32, one per rank: all_to_all 8*16*4 = 512
#   group: allreduce 100 + 50 f32 on s1 = 600; allgather 10 f32 on s2 = 40
#   group: send 100 f32 (400) + recv 200 f32 (800): recv 800
#   a group ended by ncclGroupSimulateEnd: no kernel; then allreduce 25 f32  100
#   c8b (another rank of c8, same unique id): allreduce 64 f32     256
#   the InitAll clique of 2: allreduce 10 f32 on s1 and on s2       40, 40
#   two splits of c8 (4 ranks each in the stub): allreduce 8 f32   32, 32
#   one group, c8 and the first split on s1: allreduce 100 f32 (400), then
#     allgather 5 f32 (20)
# Groups by letter in order of first use (the ids are hashes): A c8 (and
# c8b: its unique id), B c4, C the clique, D and E the two splits.
cat > "$T/expect" <<'EOF2'
{"collective": {"bytes": 4000, "kind": "all_reduce", "ranks": 8}, "stream": 1}
{"collective": {"bytes": 512, "kind": "all_gather", "ranks": 8}, "stream": 1}
{"collective": {"bytes": 6400, "kind": "reduce_scatter", "ranks": 8}, "stream": 1}
{"name": "noargs", "stream": 1}
{"collective": {"bytes": 33, "kind": "broadcast", "ranks": 4}, "stream": 2}
{"collective": {"bytes": 56, "kind": "broadcast", "ranks": 4}, "stream": 2}
{"collective": {"bytes": 80, "kind": "reduce", "ranks": 4}, "stream": 2}
{"collective": {"bytes": 128, "kind": "send", "ranks": 8}, "stream": 1}
{"collective": {"bytes": 192, "kind": "recv", "ranks": 8}, "stream": 1}
{"collective": {"bytes": 80, "kind": "all_to_all", "ranks": 4}, "stream": 2}
{"collective": {"bytes": 512, "kind": "all_to_all", "ranks": 8}, "stream": 1}
{"collective": {"bytes": 600, "kind": "all_reduce", "ranks": 8}, "stream": 1}
{"collective": {"bytes": 40, "kind": "all_gather", "ranks": 4}, "stream": 2}
{"collective": {"bytes": 800, "kind": "recv", "ranks": 8}, "stream": 1}
{"collective": {"bytes": 100, "kind": "all_reduce", "ranks": 8}, "stream": 1}
{"collective": {"bytes": 256, "kind": "all_reduce", "ranks": 8}, "stream": 1}
{"collective": {"bytes": 40, "kind": "all_reduce", "ranks": 2}, "stream": 1}
{"collective": {"bytes": 40, "kind": "all_reduce", "ranks": 2}, "stream": 2}
{"collective": {"bytes": 32, "kind": "all_reduce", "ranks": 4}, "stream": 2}
{"collective": {"bytes": 32, "kind": "all_reduce", "ranks": 4}, "stream": 2}
{"collective": {"bytes": 400, "kind": "all_reduce", "ranks": 8}, "stream": 1}
{"collective": {"bytes": 20, "kind": "all_gather", "ranks": 4}, "stream": 1}
EOF2
# The group of each of those collectives, by letter.
echo "A A A - B B B A A B A A B A A A C C D E A D" > "$T/expect-groups"

# kernels NORM: one line per kernel (decode's output): its collective
# (without its group) and stream, and the name of a kernel that is not the
# stub NCCL's; every kernel must have run 1000 ns.
kernels() {
  python3 - "$1" <<'PY'
import json, sys
for l in list(open(sys.argv[1]))[1:]:
    e = json.loads(l)
    if e["op"] != "kernel":
        continue
    assert e["dur"] == 1000, e
    o = {"stream": e["stream"]}
    if e["name"] == "ncclDevKernel_Generic":
        c = dict(e.get("collective"))
        c.pop("group", None)
        o["collective"] = c
    else:
        assert "collective" not in e, e
        o["name"] = e["name"]
    print(json.dumps(o, sort_keys=True))
PY
}
# groups NORM: each kernel's group id by letter in order of first use ("-":
# none); every id is 1 .. 2^53 - 1 and names no role.
groups() {
  python3 - "$1" <<'PY'
import json, sys
seen, out = {}, []
for l in list(open(sys.argv[1]))[1:]:
    e = json.loads(l)
    if e["op"] != "kernel":
        continue
    g = e.get("collective", {}).get("group")
    if g is None:
        out.append("-")
        continue
    assert set(g) == {"id"} and 1 <= g["id"] < 2**53, g
    out.append(seen.setdefault(g["id"], "ABCDEFGHIJ"[len(seen)]))
print(" ".join(out))
PY
}

echo "1..11"
cd "$T"
"$VRAMCAP" --mode hook -o hook.vtrace -- "$STUB/prog-nccl" > hook.out 2> hook.err
rc=$?
decode hook.vtrace hook.norm && kernels hook.norm > hook.k && [ $rc = 0 ] && diff expect hook.k >&2
ok $? "hook mode: every NCCL kernel's collective {kind, bytes, ranks} as computed by hand"
groups hook.norm > hook.g && diff expect-groups hook.g >&2
ok $? "each collective names its communicator: one id per unique id (two ranks of c8 alike), a clique over two streams one, two splits two, two communicators on one stream each their own"

# Another rank of the same job: every communicator has the same id in its trace.
env STUB_NCCL_RANK=3 "$VRAMCAP" --mode hook -o rank3.vtrace -- "$STUB/prog-nccl" > rank3.out 2> rank3.err \
  && decode rank3.vtrace rank3.norm && python3 - hook.norm rank3.norm <<'PY'
import json, sys
def ids(p):
    return [json.loads(l).get("collective", {}).get("group", {}).get("id") for l in list(open(p))[1:]
            if json.loads(l)["op"] == "kernel"]
a, b = ids(sys.argv[1]), ids(sys.argv[2])
assert a == b and len(set(x for x in a if x)) == 5, (a, b)
PY
ok $? "rank 3's capture names the communicators with rank 0's ids (the unique id, the split order)"

"$VRAMSIM" info hook.vtrace > info.txt && grep -q "^collectives 21, .*; 5 groups$" info.txt \
  && [ "$(grep -c '^  group ' info.txt)" = 5 ] && grep -Eq '^  group [0-9]+ +- +8 ranks +11 collectives' info.txt
ok $? "vramsim info lists the 5 groups (c8: 8 ranks, 11 collectives)"

# libnccl opened with RTLD_LOCAL, as Python opens PyTorch's: outside the
# global scope dlsym(RTLD_NEXT) searches, the wrap must still reach it.
"$VRAMCAP" --mode hook -o local.vtrace -- "$STUB/prog-nccl-local" > local.out 2> local.err
rc=$?
decode local.vtrace local.norm && kernels local.norm > local.k && [ $rc = 0 ] && diff expect local.k >&2 \
  && grep -qx done local.out
ok $? "libnccl in a library opened with RTLD_LOCAL: the same collectives, the program unharmed"

"$STUB/prog-nccl" > plain.out 2>&1
cmp -s plain.out hook.out && [ ! -s hook.err ]
ok $? "program output unchanged, nothing printed by the shim"

env STUB_CUDA_INJECT=1 VRAMCAP_CUPTI="$STUB/libcupti.so" \
  "$VRAMCAP" -o cupti.vtrace -- "$STUB/prog-nccl" > cupti.out 2> cupti.err
rc=$?
decode cupti.vtrace cupti.norm && kernels cupti.norm > cupti.k && [ $rc = 0 ] && diff expect cupti.k >&2 \
  && ! grep -q "hook mode" cupti.err && grep -q '"mode": "cupti"' cupti.norm
ok $? "CUPTI mode: the same collectives (the shim is preloaded there too)"

"$VRAMCAP" --mode hook --no-nccl -o off.vtrace -- "$STUB/prog-nccl" > off.out 2> off.err
rc=$?
decode off.vtrace off.norm && [ $rc = 0 ] && [ "$(grep -c '"op": "kernel"' off.norm)" = 22 ] \
  && ! grep -q collective off.norm
ok $? "--no-nccl: the same 22 kernels, none with a collective"

# Everything but the collectives is what --no-nccl records.
python3 - hook.norm off.norm <<'PY'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])][1:]
b = [json.loads(l) for l in open(sys.argv[2])][1:]
for e in a:
    e.pop("collective", None)
assert a == b, (a, b)
PY
ok $? "the wrap changes no other event"

# A trace with collectives replays, and the report counts them (network.collectives).
"$VRAMSIM" replay --format json hook.vtrace > hook.json && python3 - hook.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
net = r["network"]
assert net["collectives"] == 21, net
assert net["bytes"] == 4000 + 512 + 6400 + 33 + 56 + 80 + 128 + 192 + 80 + 512 + 600 + 40 + 800 + 100 \
    + 256 + 40 + 40 + 32 + 32 + 400 + 20, net
assert sorted(g["ranks"] for g in net["groups"]) == [2, 4, 4, 4, 8], net["groups"]
PY
ok $? "replay reads the captured collectives: 21 of them, 14,353 bytes, 5 groups"

# The real libnccl, where the CUDA install has one (prog-nccl-real.c: NULL
# communicators, refused before any GPU work): each call reaches the real
# function through the wrap, with the same results.
if [ -x "$STUB/prog-nccl-real" ]; then
  mkdir cu && ln -s "$STUB/libcuda.so.1" cu/libcuda.so.1
  env LD_LIBRARY_PATH="$T/cu" NCCL_DEBUG=NONE "$STUB/prog-nccl-real" > real-plain.out 2>&1
  env LD_LIBRARY_PATH="$T/cu" NCCL_DEBUG=NONE "$VRAMCAP" --mode hook --no-torch -o real.vtrace -- \
    "$STUB/prog-nccl-real" > real-shim.out 2> real-shim.err
  rc=$?
  env LD_LIBRARY_PATH="$T/cu" LD_PRELOAD="$(dirname "$VRAMCAP")/../lib/libvramcap.so" VRAMCAP_MODE=hook \
    VRAMCAP_OUTPUT="$T/real2.vtrace" LD_DEBUG=bindings NCCL_DEBUG=NONE "$STUB/prog-nccl-real" > /dev/null 2> bind.log
  [ $rc = 0 ] && cmp -s real-plain.out real-shim.out && grep -q '^version [0-9]*: 0 [0-9 ]*$' real-plain.out \
    && grep -q "prog-nccl-real .*to .*libvramcap.so .*symbol .ncclAllReduce'" bind.log \
    && grep -q "libvramcap.so .*to .*libnccl.so.2 .*symbol .ncclAllReduce'" bind.log \
    && grep -q "prog-nccl-real .*to .*libvramcap.so .*symbol .ncclCommSplit'" bind.log \
    && grep -q "libvramcap.so .*to .*libnccl.so.2 .*symbol .ncclCommSplit'" bind.log
  ok $? "real libnccl ($(sed 's/:.*//' real-plain.out)): calls go through the wrap, same results"
else
  echo "ok $((n + 1)) # SKIP no NCCL in the CUDA install"
fi
