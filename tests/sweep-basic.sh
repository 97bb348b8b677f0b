#!/bin/bash
# sweep-basic.sh — a sweep's rows, columns and values; -j 1 = -j 4; jsonl.
. "$(dirname "$0")/sweep-lib.sh"
require_engine 9
echo 1..10

"$VRAMSIM" sweep "$T/t.jsonl" -c a100-80g,rtx3090 --vary memory.capacity=512MiB..2GiB/512MiB \
  --vary policy.oversubscription=oom,spill -j 2 -o "$T/r.csv" 2> "$T/err"
ok $? "a sweep of 2 configs x 4 capacities x 2 policies runs"
[ "$(head -1 "$T/r.csv")" = "config,memory.capacity,policy.oversubscription,status,predicted_ns,slowdown,peak_device_bytes,resident_peak_bytes,contention_ns,fault_ns,swap_ns,copy_engine_ns,blocked_ns,h2d_bytes,d2h_bytes,swap_out_bytes,swap_in_bytes,fault_bytes,faults,writeback_bytes,lower_bound,error" ]
ok $? "columns: config, varied keys as written, status, results, error"
[ "$(tail -n +2 "$T/r.csv" | wc -l)" = 16 ]; ok $? "one row per run: 16"
# Run order: configs outermost, the last --vary fastest; 2GiB..: values in the first bound's unit.
[ "$(tail -n +2 "$T/r.csv" | cut -d, -f1-3 | head -4 | tr '\n' ' ')" = "a100-80g,512MiB,oom a100-80g,512MiB,spill a100-80g,1024MiB,oom a100-80g,1024MiB,spill " ]
ok $? "rows in run order, range values in the unit of the first bound"
# The device holds the 1 GiB buffer and the preset's CUDA context (rtx3090: 256 MiB).
[ "$(grep -c '^a100-80g,512MiB,oom,oom,' "$T/r.csv")" = 1 ] && [ "$(grep -c '^rtx3090,1536MiB,oom,ok,.*,1342177280,' "$T/r.csv")" = 1 ]
ok $? "512 MiB under oom is an oom row; 1536 MiB fits the 1 GiB buffer and the context (peak 1342177280)"
# The same run through `vramsim replay` gives the same predicted_ns.
want=$("$VRAMSIM" replay "$T/t.jsonl" -c rtx3090 --set memory.capacity=1536MiB --set policy.oversubscription=oom --format json \
       | sed -n 's/.*"predicted_ns":[[:space:]]*\([0-9]*\).*/\1/p' | head -1)
got=$(grep '^rtx3090,1536MiB,oom,' "$T/r.csv" | cut -d, -f5)
[ -n "$want" ] && [ "$want" = "$got" ]; ok $? "a row's predicted_ns equals vramsim replay's ($want = $got)"

"$VRAMSIM" sweep "$T/t.jsonl" -c a100-80g,rtx3090 --vary memory.capacity=512MiB..2GiB/512MiB \
  --vary policy.oversubscription=oom,spill -j 1 -o "$T/j1.csv" &&
"$VRAMSIM" sweep "$T/t.jsonl" -c a100-80g,rtx3090 --vary memory.capacity=512MiB..2GiB/512MiB \
  --vary policy.oversubscription=oom,spill -j 4 -o "$T/j4.csv" && cmp -s "$T/j1.csv" "$T/j4.csv" && cmp -s "$T/j1.csv" "$T/r.csv"
ok $? "identical CSV with -j 1 and -j 4"

"$VRAMSIM" sweep "$T/t.jsonl" -c a100-80g --vary memory.capacity=2GiB,3GiB --format jsonl > "$T/r.jsonl"
[ "$(wc -l < "$T/r.jsonl")" = 2 ] && head -1 "$T/r.jsonl" | grep -q '^{"config":"a100-80g","memory.capacity":"2GiB","status":"ok","predicted_ns":[0-9]*,'
ok $? "--format jsonl: one object per run, to stdout without -o"

# An invalid combination is an error row, not a failed sweep.
"$VRAMSIM" sweep "$T/t.jsonl" -c a100-80g --vary memory.reserved=0B,100GiB -o "$T/e.csv" 2> "$T/err"
rc=$?
[ $rc = 0 ] && grep -q '^a100-80g,0B,ok,' "$T/e.csv" && grep -q '^a100-80g,100GiB,error,,.*memory' "$T/e.csv"
ok $? "an impossible config (reserved > capacity) is a row with status error and the message (rc $rc)"

# -c all is every preset, as fit -c all: one row per preset, in
# `vramsim configs` order, a named one first and not twice.
"$VRAMSIM" sweep "$T/t.jsonl" -c all -j 2 -o "$T/all.csv" && "$VRAMSIM" sweep "$T/t.jsonl" -c rtx3090,all -j 2 -o "$T/all2.csv"
n_presets=$("$VRAMSIM" configs | tail -n +2 | grep -c .)
[ "$(tail -n +2 "$T/all.csv" | cut -d, -f1 | tr '\n' ' ')" = "$("$VRAMSIM" configs | tail -n +2 | awk '{ printf "%s ", $1 }')" ] \
  && [ "$(tail -n +2 "$T/all.csv" | wc -l)" = "$n_presets" ] && [ "$(sed -n 2p "$T/all2.csv" | cut -d, -f1)" = rtx3090 ] \
  && [ "$(grep -c '^rtx3090,' "$T/all2.csv")" = 1 ] && [ "$(tail -n +2 "$T/all2.csv" | wc -l)" = "$n_presets" ]
ok $? "-c all: every preset once ($n_presets rows), as fit -c all; -c rtx3090,all puts rtx3090 first"
