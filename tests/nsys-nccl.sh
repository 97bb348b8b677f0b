#!/bin/sh
# nsys-nccl.sh — the nsys importer's NCCL NVTX ranges (sim/import/import-nccl-nvtx.c)
# on a GENERATED export (tests/import/gen-nsys-nccl.py: the real schema's
# subset, NCCL's payload schemas; no NCCL run made it): every NCCL kernel's
# collective as worked out by hand, broken payloads refused naming the row,
# fuzzed payloads never crash, and the real export imports as before.
VRAMSIM=${VRAMSIM:-bin/vramsim}
HERE=$(cd "$(dirname "$0")" && pwd)
GEN="$HERE/import/gen-nsys-nccl.py"
command -v python3 >/dev/null && python3 -c 'import sqlite3' 2>/dev/null \
  || { echo "1..0 # SKIP no python3 with sqlite3"; exit 0; }
VRAMSIM=$(cd "$(dirname "$VRAMSIM")" && pwd)/$(basename "$VRAMSIM")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
cd "$T"

# The kernels, by hand from the generator's calls (t counts from the first
# NVTX event at 1000 ns; each launch call is 100 ns, its kernel 5000 ns):
#   ncclAllReduce 4000 B, comm A (8 ranks)          all_reduce 4000 x 8
#   ncclAllGather 512 B                              all_gather 512
#   ncclReduceScatter 800 B (recvcount x f64)        reduce_scatter 800 x 8 ranks = 6400
#   gemm_kernel outside any range                    none
#   ncclBroadcast 33 B, comm B (4 ranks)             broadcast 33 x 4
#   ncclReduce 80 B                                  reduce 80 x 4
#   ncclSend 128 B, launched in its own ncclGroupEnd send 128
#   group: 8 sends + 8 recvs of 64 B, one per rank   all_to_all 8 x 64 = 512
#   nested groups: all-reduces of 400 + 200 B        all_reduce 600
#   comm C, never initialised                        none (ranks unknown)
#   thread 4243's 2048 B all-reduce (4242 is in an all-gather then)  all_reduce 2048, tid 4243
#   a range named ncclAllReduce in domain "mylib"    none
#   two kernels in one 1000 B all-reduce             the first only
#   group: send 400 B, recv 800 B                    recv 800
#   ncclAllReduce 256 B, comm D (split from A: 2)    all_reduce 256 x 2
#   group: all-reduces of 100 B on A, 50 B on D      all_reduce 150 x 8, no group
# Groups: the communicator hash folded to 53 bits (h ^ h >> 53, low 53
# bits): A = 0xA1A1A1A1A1A1A1A1 -> 0x1A1A1A1A1A1A1 ^ 0x50D = 459190550242476;
# B = 0xB2 = 178 and D = 0xD4 = 212 (below 2^53: themselves).
cat > expect <<'EOF2'
{"collective": {"bytes": 4000, "group": {"id": 459190550242476}, "kind": "all_reduce", "ranks": 8}, "t": 9100, "tid": 4242}
{"collective": {"bytes": 512, "group": {"id": 459190550242476}, "kind": "all_gather", "ranks": 8}, "t": 19100, "tid": 4242}
{"collective": {"bytes": 6400, "group": {"id": 459190550242476}, "kind": "reduce_scatter", "ranks": 8}, "t": 29100, "tid": 4242}
{"t": 39100, "tid": 4242}
{"collective": {"bytes": 33, "group": {"id": 178}, "kind": "broadcast", "ranks": 4}, "t": 49100, "tid": 4242}
{"collective": {"bytes": 80, "group": {"id": 178}, "kind": "reduce", "ranks": 4}, "t": 59100, "tid": 4242}
{"collective": {"bytes": 128, "group": {"id": 459190550242476}, "kind": "send", "ranks": 8}, "t": 69300, "tid": 4242}
{"collective": {"bytes": 512, "group": {"id": 459190550242476}, "kind": "all_to_all", "ranks": 8}, "t": 81100, "tid": 4242}
{"collective": {"bytes": 600, "group": {"id": 459190550242476}, "kind": "all_reduce", "ranks": 8}, "t": 89600, "tid": 4242}
{"t": 99100, "tid": 4242}
{"collective": {"bytes": 2048, "group": {"id": 459190550242476}, "kind": "all_reduce", "ranks": 8}, "t": 109100, "tid": 4243}
{"t": 119100, "tid": 4242}
{"collective": {"bytes": 1000, "group": {"id": 459190550242476}, "kind": "all_reduce", "ranks": 8}, "t": 129100, "tid": 4242}
{"t": 129300, "tid": 4242}
{"collective": {"bytes": 800, "group": {"id": 459190550242476}, "kind": "recv", "ranks": 8}, "t": 139600, "tid": 4242}
{"collective": {"bytes": 256, "group": {"id": 212}, "kind": "all_reduce", "ranks": 2}, "t": 144100, "tid": 4242}
{"collective": {"bytes": 150, "kind": "all_reduce", "ranks": 8}, "t": 146600, "tid": 4242}
EOF2

echo "1..6"
python3 "$GEN" nccl.sqlite && "$VRAMSIM" convert nccl.sqlite nccl.jsonl && python3 - nccl.jsonl > got <<'PY'
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("op") != "kernel":
        continue
    assert e["dur"] == 5000 and e["host_ns"] == 100, e
    o = {k: e[k] for k in ("t", "tid", "collective") if k in e}
    print(json.dumps(o, sort_keys=True))
PY
diff expect got >&2
ok $? "every NCCL kernel's collective {kind, bytes, ranks, group} as worked out by hand"

# The binary trace says the same, and the replay counts them.
"$VRAMSIM" convert nccl.sqlite nccl.vtrace && "$VRAMSIM" convert nccl.vtrace back.jsonl && cmp -s nccl.jsonl back.jsonl \
  && "$VRAMSIM" replay -c a100-80g --format json nccl.vtrace > r.json 2>/dev/null && python3 - r.json <<'PY'
import json, sys
net = json.load(open(sys.argv[1]))["network"]
assert net["collectives"] == 13, net
assert net["bytes"] == 4000 + 512 + 6400 + 33 + 80 + 128 + 512 + 600 + 2048 + 1000 + 800 + 256 + 150, net
assert [(g["id"], g["ranks"], g["collectives"]) for g in net["groups"]] == \
    [(178, 4, 2), (212, 2, 1), (459190550242476, 8, 9)], net["groups"]
PY
ok $? "binary trace round-trips; replay: 13 collectives, 16,519 bytes, the groups of A, B and D"

# Broken payloads: exit 1, one message naming the file and the row, no output.
bad=0
for c in "short-blob:NVTX_EVENTS rowid 46: NCCL payload (binaryData) shorter than its 32-byte header" \
         "short-payload:NVTX_EVENTS rowid 46: NCCL payload (binaryData) shorter than its payload size" \
         "offset:NVTX_PAYLOAD_SCHEMA_ENTRIES rowid 8: offset out of range" \
         "ranks0:NVTX_EVENTS rowid 3: NCCL communicator size below 1 or above 2^32 - 1" \
         "msg63:NVTX_EVENTS rowid 5: NCCL message size is 2^63 bytes or more" \
         "end-before-start:NVTX_EVENTS rowid 46: NCCL range ends before it starts"; do
  case=${c%%:*} msg=${c#*:}
  python3 "$GEN" b.sqlite --break "$case"
  "$VRAMSIM" convert b.sqlite b.jsonl 2> b.err
  rc=$?
  if [ $rc != 1 ] || [ -e b.jsonl ] || [ "$(cat b.err)" != "vramsim: b.sqlite: $msg" ]; then
    echo "# $case: rc $rc: $(cat b.err)" >&2
    bad=1
  fi
  rm -f b.jsonl
done
ok $bad "broken NCCL payloads and schemas: exit 1 naming the row, no output file"

# Fuzzed payload bytes and schema offsets: exit 0 with a readable trace, or
# exit 1 with one message; never a crash.
bad=0 good=0 refused=0
for s in $(seq 1 40); do
  python3 "$GEN" f.sqlite --fuzz "$s"
  "$VRAMSIM" convert f.sqlite f.jsonl 2> f.err
  rc=$?
  if [ $rc = 0 ]; then
    "$VRAMSIM" convert f.jsonl f.vtrace 2>/dev/null || { echo "# seed $s: unreadable output" >&2; bad=1; }
    good=$((good + 1))
  elif [ $rc = 1 ] && [ ! -e f.jsonl ] && [ "$(wc -l < f.err)" = 1 ] && grep -q "^vramsim: f.sqlite: " f.err; then
    refused=$((refused + 1))
  else
    echo "# seed $s: rc $rc: $(cat f.err)" >&2
    bad=1
  fi
  rm -f f.jsonl f.vtrace
done
echo "# fuzz: $good imported, $refused refused"
ok $bad "40 fuzzed exports: readable traces or one error each"

# Without the payload columns (older exports, the hand-made ones of
# tests/import): no collectives, nothing else changes.
python3 - nccl.sqlite <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("DROP TABLE NVTX_PAYLOAD_SCHEMA_ENTRIES")
db.commit()
PY
"$VRAMSIM" convert nccl.sqlite plain.jsonl && ! grep -q collective plain.jsonl \
  && python3 - nccl.jsonl plain.jsonl <<'PY'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
for e in a:
    e.pop("collective", None)
assert a == b
PY
ok $? "no payload schema table: the same trace without collectives"

# The real export (no NCCL ranges, no binaryData column): imports as before.
. "$HERE/data-lib.sh"
if REAL=$(optional_trace nsys/rtx3090-small.sqlite); then
  "$VRAMSIM" convert "$REAL" real.jsonl && [ "$(grep -c '"kernel"' real.jsonl)" -gt 0 ] && ! grep -q collective real.jsonl
  ok $? "rtx3090-small.sqlite: kernels, no collectives"
else
  n=$((n + 1)); echo "ok $n # SKIP $(optional_why nsys/rtx3090-small.sqlite)"
fi
