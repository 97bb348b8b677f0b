#!/bin/bash
# snapshot-cli.sh — `vramsim convert SNAPSHOT.pickle OUT [--device N]` from
# the command line: the generated snapshot (tests/import/gen-snapshot.py,
# its figures by hand) and, when given, a real one (optional:
# validation/data/README.md) import and replay with the pytorch allocator
# model; hostile and malformed pickles exit 1 naming the byte offset and
# leave no output file. Prints TAP.
VRAMSIM=${VRAMSIM:-bin/vramsim}
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export VRAMSIM_CONFIGS=$PWD/configs
. tests/data-lib.sh
echo 1..14
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
if kineto=$(data_file kineto/memory-profile-v100.json.gz); then
  run "$VRAMSIM" convert "$kineto" "$tmp/v100.jsonl"
  run "$VRAMSIM" replay "$tmp/v100.jsonl" -c v100-sxm2-32g --format json -o "$tmp/v.json"
  [ $rc -eq 0 ] && grep -q '"peak_allocated_bytes":[[:space:]]*6629508096' "$tmp/v.json" \
    && grep -q '"peak_reserved_bytes":[[:space:]]*12782141440' "$tmp/v.json" \
    && grep -q '"end_reserved_bytes":[[:space:]]*12782141440' "$tmp/v.json" \
    && grep -q '"segment_allocs":[[:space:]]*0,' "$tmp/v.json"
  ok $? "memory-profile-v100: allocated peaks at 6,629,508,096 B, reserved stays 12,782,141,440 B"
else
  ok 1 "memory-profile-v100: validation/data/kineto/memory-profile-v100.json.gz missing"
fi

# The generated snapshot (gen-snapshot.py's docstring: what PyTorch's
# allocator did, by hand). The committed copy the C tests read is what the
# script writes.
fx=tests/import/snapshot-fixture.pickle
python3 tests/import/gen-snapshot.py "$tmp/fx.pickle" && cmp -s "$tmp/fx.pickle" "$fx"
ok $? "tests/import/snapshot-fixture.pickle is what gen-snapshot.py writes"
run "$VRAMSIM" convert "$fx" "$tmp/fx.jsonl"
[ $rc -eq 0 ] && [ "$err" = "vramsim: wrote $tmp/fx.jsonl (7 events)" ] && [ "$(grep -c '"op": "alloc"' "$tmp/fx.jsonl")" = 4 ] && [ "$(grep -c '"op": "free"' "$tmp/fx.jsonl")" = 2 ] \
  && grep -q '"t": 41000, "op": "alloc", "id": 4, "bytes": 31457280, "kind": "device", "stream": 0, "tag": "train.py:12 forward"' "$tmp/fx.jsonl"
ok $? "the generated snapshot imports: 4 allocs (the 30 MiB one at 141 - 100 us, tagged by its user frame), 2 frees, 1 mark; convert says 7 events"
# Reserved: 2 + 20 + 30 MiB = 54,525,952 B; allocated peak 512 B + 4 MiB + 30 MiB = 35,652,096 B.
run "$VRAMSIM" replay "$tmp/fx.jsonl" -c rtx3090 --format json -o "$tmp/fx.json"
[ $rc -eq 0 ] && grep -q '"peak_reserved_bytes":[[:space:]]*54525952' "$tmp/fx.json" \
  && grep -q '"end_reserved_bytes":[[:space:]]*54525952' "$tmp/fx.json" \
  && grep -q '"peak_allocated_bytes":[[:space:]]*35652096' "$tmp/fx.json" && grep -q '"segment_allocs":[[:space:]]*3,' "$tmp/fx.json"
ok $? "replayed: 3 segments, reserved 54,525,952 B, allocated peak 35,652,096 B"
run "$VRAMSIM" convert "$fx" "$tmp/fx9.jsonl" --device 9
[ $rc -eq 1 ] && [[ $err == *"--device 9: the snapshot has 2 devices"* ]] && [ ! -e "$tmp/fx9.jsonl" ]
ok $? "--device past the snapshot's devices exits 1, no output"
run "$VRAMSIM" convert "$fx" "$tmp/fx1.jsonl" --device 1
[ $rc -eq 0 ] && [ "$(wc -l < "$tmp/fx1.jsonl")" = 1 ] \
  && [[ $err == *"wrote $tmp/fx1.jsonl (0 events)"* ]] \
  && [[ $err == *"warning: $fx: device 1: 0 events written (it has no recorded actions or segments); the snapshot holds them on device 0 (--device N)"* ]]
ok $? "--device 1 (nothing there): 0 events and a warning naming the device that has them (0)"

if ! real=$(optional_trace snapshots/select_n-snapshot.pickle); then
  for i in 1 2 3 4; do skip "$(optional_why snapshots/select_n-snapshot.pickle)"; done
  exit 0
fi
real=$(dirname "$real")
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
