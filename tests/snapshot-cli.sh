#!/bin/bash
# snapshot-cli.sh — `vramsim convert SNAPSHOT.pickle OUT [--device N]` from
# the command line: a real snapshot (../shared, read in place) imports and
# replays with the pytorch allocator model; hostile and malformed pickles
# exit 1 naming the byte offset and leave no output file. Prints TAP.
VRAMSIM=${VRAMSIM:-bin/vramsim}
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export VRAMSIM_CONFIGS=$PWD/configs
real=${VRAMSIM_REAL_TRACES:-../shared/real-traces}/snapshots
echo 1..9
n=0
ok () { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
skip () { n=$((n + 1)); echo "ok $n # SKIP $1"; }
run () { "$@" >"$tmp/_stdout" 2>"$tmp/_stderr"; rc=$?; err=$(cat "$tmp/_stderr"); }

# A class reference (collections.OrderedDict): refused, with its byte.
printf '\x80\x04\x95\x22\x00\x00\x00\x00\x00\x00\x00\x8c\x0bcollections\x94\x8c\x0bOrderedDict\x94\x93\x94)R\x94.' > "$tmp/evil.pickle"
run "$VRAMSIM" convert "$tmp/evil.pickle" "$tmp/out.jsonl"
[ $rc -eq 1 ] && [[ $err == *"evil.pickle: byte 39: class reference (STACK_GLOBAL) refused"* ]] && [ ! -e "$tmp/out.jsonl" ]
ok $? "a class reference exits 1 naming byte 39, no output file"
# Truncated: the same bytes without STOP.
head -c 20 "$tmp/evil.pickle" > "$tmp/cut.pickle"
run "$VRAMSIM" convert "$tmp/cut.pickle" "$tmp/out.jsonl"
[ $rc -eq 1 ] && [[ $err == *"cut.pickle: byte 11: string of 11 bytes, only 7 left"* ]] && [ ! -e "$tmp/out.jsonl" ]
ok $? "a truncated pickle exits 1 naming the byte"
# Plain data, but not a snapshot.
printf '\x80\x04]\x94.' > "$tmp/list.pickle"
run "$VRAMSIM" convert "$tmp/list.pickle" "$tmp/out.jsonl"
[ $rc -eq 0 ] && [ "$(wc -l < "$tmp/out.jsonl")" = 1 ] && grep -q '"allocations": "tensor"' "$tmp/out.jsonl"
ok $? "an empty list (the old torch.cuda.memory_snapshot() form: segments only) imports as a header"

# A header's allocation_sizes is "block" or "request", nothing else.
printf '{"vramsim_trace": 1, "allocations": "tensor", "allocation_sizes": "blocks"}\n' > "$tmp/bad.jsonl"
run "$VRAMSIM" replay "$tmp/bad.jsonl" -c rtx3090
[ $rc -eq 1 ] && [[ $err == *"bad.jsonl:1: header field 'allocation_sizes' must be \"block\" or \"request\""* ]]
ok $? "a bad allocation_sizes exits 1 naming the header field"
# A profiler trace's sizes are block sizes: allocated is their sum, the
# file's own maximum Total Allocated, exactly; reserved is its Total
# Reserved throughout (docs/validation.md).
kineto=${VRAMSIM_REAL_TRACES:-../shared/real-traces}/kineto/memory-profile-v100.json.gz
if [ -r "$kineto" ]; then
  run "$VRAMSIM" convert "$kineto" "$tmp/v100.jsonl"
  run "$VRAMSIM" replay "$tmp/v100.jsonl" -c v100-sxm2-32g --format json -o "$tmp/v.json"
  [ $rc -eq 0 ] && grep -q '"peak_allocated_bytes":[[:space:]]*6629508096' "$tmp/v.json" \
    && grep -q '"peak_reserved_bytes":[[:space:]]*12782141440' "$tmp/v.json" \
    && grep -q '"end_reserved_bytes":[[:space:]]*12782141440' "$tmp/v.json" \
    && grep -q '"segment_allocs":[[:space:]]*0,' "$tmp/v.json"
  ok $? "memory-profile-v100: allocated peaks at 6,629,508,096 B, reserved stays 12,782,141,440 B"
else
  skip "real Kineto traces not found"
fi

if [ ! -r "$real/select_n-snapshot.pickle" ]; then
  for i in 1 2 3 4; do skip "real snapshots not found"; done
  exit 0
fi
run "$VRAMSIM" convert "$real/select_n-snapshot.pickle" "$tmp/sel.jsonl" --device 9
[ $rc -eq 1 ] && [[ $err == *"--device 9: the snapshot has 4 devices"* ]] && [ ! -e "$tmp/sel.jsonl" ]
ok $? "--device past the snapshot's devices exits 1"
run "$VRAMSIM" convert "$real/select_n-snapshot.pickle" "$tmp/sel.jsonl"
[ $rc -eq 0 ] && head -1 "$tmp/sel.jsonl" | grep -q '"allocations": "tensor"'
ok $? "select_n imports: a tensor-level trace"
# 24 GiB: release-and-retry brings reserved to the file's own final figure.
run "$VRAMSIM" replay "$tmp/sel.jsonl" -c rtx3090 --format json -o "$tmp/r.json"
[ $rc -eq 0 ] && grep -q '"end_reserved_bytes":[[:space:]]*18566086656' "$tmp/r.json" && grep -q '"kind":[[:space:]]*"pytorch"' "$tmp/r.json"
ok $? "replayed on rtx3090 it ends with the snapshot's 18,566,086,656 B reserved"
# 16 GiB cannot hold it: oom with PyTorch's figures; --keep-going: overflow.
run "$VRAMSIM" replay "$tmp/sel.jsonl" -c v100-pcie-16g --format json -o "$tmp/o.json"
run2=$rc
run "$VRAMSIM" replay "$tmp/sel.jsonl" -c v100-pcie-16g --keep-going --format json -o "$tmp/k.json"
[ $run2 -eq 0 ] && grep -q '"status":[[:space:]]*"oom"' "$tmp/o.json" && grep -q '"reserved_free"' "$tmp/o.json" \
  && grep -q '"status":[[:space:]]*"overflow"' "$tmp/k.json"
ok $? "on 16 GiB: status oom (reserved_free given), overflow with --keep-going"
