#!/usr/bin/env bash
# fit.sh — `vramsim fit`: one row per config over the shipped traces, rows
# checked against numbers computed by hand from the trace and the presets,
# the sort order, the three formats, bad input and bad usage. TAP output.
set -u
VRAMSIM=${VRAMSIM:-bin/vramsim}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0
ok () { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails+1)); fi; }
run () { "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; out=$(cat "$tmp/out"); err=$(cat "$tmp/err"); }
has () { case "$1" in *"$2"*) return 0;; esac; return 1; }

echo "1..32"
T=$here/traces/hand-train-step.jsonl

# train-step (3 steps). Device peak by hand: params 128 MiB + grads 128 +
# optimizer 256 + input 16 + activations 192 = 720 MiB = 754974720 B (the
# pinned 16 MiB input buffer is host memory), plus the preset's CUDA
# context (memory.context: a100-80g 322 MiB, rtx3090 256 MiB), charged
# before the first event: 1042 MiB = 1092616192 B on a100-80g, 976 MiB =
# 1023410176 B on rtx3090. On a100-80g, its capture
# config: compute = 3 x (40+180+180+20+360+360+60+30) us = 3.69 ms of sm;
# memory = 3 x 1577058304 kernel bytes + 3 x 16 MiB h2d copies
# = 4781506560 B at 2039 GB/s x 0.86 = 1.75354e12 B/s -> 2726774 ns;
# link = 3 x 16 MiB = 50331648 B at 31.5 GB/s x 0.8 = 25.2e9 B/s -> 1997288 ns.
# Compute is the largest: bound "compute".
run "$VRAMSIM" fit "$T" -c rtx3090,a100-80g --format json
ok $(( rc != 0 )) "fit on two presets exits 0"
python3 - "$tmp/out" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))
rows = f["rows"]
assert [r["config"] for r in rows] == ["a100-80g", "rtx3090"], rows   # faster first
a = rows[0]
assert a["status"] == "ok" and a["fits"] is True, a
assert a["peak_device_bytes"] == 1092616192, a
assert a["capacity_bytes"] == 80 * 2**30, a
assert a["bound"] == "compute", a
b = a["bound_ns"]
# The kernel model (sim/model/kernel-model.c, waves) moves 1300 ns of each
# of the 24 kernels from memory to compute (3721200 and 2695574 ns): the
# sum is the hand-computed 3690000 + 2726774 = 6416774 ns.
assert b["compute"] >= 3690000, b
assert abs(b["compute"] + b["memory"] - (3690000 + 4781506560 / (2039e9 * 0.86) * 1e9)) <= 1, b
assert abs(b["link"] - 50331648 / 25.2e9 * 1e9) <= 1, b
assert b["swap"] == 0 and b["faults"] == 0, b
assert f["capture_config"] == "a100-80g" and f["captured_ns"] == 8485151, f
PY
ok $? "a100-80g row: peak 720 MiB + 322 MiB context of 80 GiB, compute 3.69 ms, memory 2.727 ms, link 1.997 ms, bound compute"

python3 - "$tmp/out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["rows"][1]
# rtx3090: 24 GiB, the same 720 MiB plus its 256 MiB context; slower than the capture.
assert r["capacity_bytes"] == 24 * 2**30 and r["peak_device_bytes"] == 1023410176, r
assert r["slowdown"] > 1 and abs(r["predicted_ns"] - r["slowdown"] * 8485151) < 2, r
PY
ok $? "rtx3090 row: 720 MiB + 256 MiB context of 24 GiB, predicted = slowdown x captured"

"$VRAMSIM" fit "$T" -c rtx3090 --format json > "$tmp/fit1.json"
run "$VRAMSIM" replay "$T" -c rtx3090 --format json
python3 - "$tmp/out" "$tmp/fit1.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
f = json.load(open(sys.argv[2]))["rows"][0]
assert f["predicted_ns"] == r["time"]["predicted_ns"] and f["slowdown"] == r["time"]["slowdown"], (f, r["time"])
PY
ok $? "a fit row's time is the replay report's"

# Out of memory on 512 MiB: the trace's 720 MiB plus each preset's context.
# rtx3090: 720 + 256 - 512 = 464 MiB = 486539264 B; a100-80g: 720 + 322 - 512
# = 530 MiB = 555745280 B; on the unified Jetson AGX Orin the pinned 16 MiB
# shares the pool and its context is 55 MiB: 736 + 55 - 512 = 279 MiB =
# 292552704 B (peak 791 MiB). OOM rows come last, least missing first.
run "$VRAMSIM" fit "$T" -c jetson-agx-orin,rtx3090,a100-80g --set memory.capacity=512MiB --format json
ok $(( rc != 0 )) "predicted OOM rows exit 0"
python3 - "$tmp/out" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert [r["config"] for r in rows] == ["jetson-agx-orin", "rtx3090", "a100-80g"], rows
for r in rows:
    assert r["status"] == "oom" and r["fits"] is False, r
    assert r["predicted_ns"] is None and r["bound"] is None, r
assert [r["missing_bytes"] for r in rows] == [292552704, 486539264, 555745280], rows
assert rows[0]["peak_device_bytes"] == 791 * 2**20, rows[0]
PY
ok $? "OOM rows: 279 MiB missing (Jetson AGX Orin), 464 MiB (rtx3090), 530 MiB (a100-80g), least first"

run "$VRAMSIM" fit "$T" -c a100-80g,rtx3090 --set memory.capacity=512MiB
has "$out" "464 MiB more needed"; ok $? "text names how much is missing"

# Every preset, in predicted-time order, OOM rows after.
run "$VRAMSIM" fit "$T" -c all --format csv
ok $(( rc != 0 )) "-c all exits 0"
npresets=$(ls "$here"/configs/*.json | wc -l)
ok $(( $(printf '%s\n' "$out" | wc -l) != npresets + 1 )) "-c all: a header and one row per preset ($npresets)"
printf '%s\n' "$out" | python3 -c '
import csv, sys
rows = list(csv.DictReader(sys.stdin))
assert list(rows[0]) == ["config","status","fits","peak_device_bytes","capacity_bytes","missing_bytes","predicted_ns","slowdown","bound","step_median_ns","resident_peak_bytes","lower_bound"], list(rows[0])
t = [float(r["predicted_ns"]) for r in rows if r["status"] != "oom"]
assert t == sorted(t), t
'
ok $? "csv columns; rows sorted by predicted time"
run "$VRAMSIM" fit "$T"
ok $(( $(printf '%s\n' "$out" | grep -vc '^warning') != npresets + 2 )) "no -c means every preset (text: title, header, rows; then warnings)"

# The oversubscribed managed trace on its own 16 GiB V100: runs, but pages
# in and out of a full device, so it does not fit, and faults bound it.
run "$VRAMSIM" fit "$here/traces/hand-uvm-oversub.jsonl" -c v100-pcie-16g,a100-80g --format csv
printf '%s\n' "$out" | grep -q '^v100-pcie-16g,ok,no,.*,faults,'; ok $? "uvm-oversub on v100-pcie-16g: ok, does not fit, bound faults"
printf '%s\n' "$out" | grep -q '^a100-80g,ok,yes,'; ok $? "uvm-oversub fits on a100-80g"

# Spilling keeps the step running but it no longer fits; link bound.
run "$VRAMSIM" fit "$T" -c a100-80g --set memory.capacity=640MiB --set policy.oversubscription=spill --format csv
printf '%s\n' "$out" | grep -q '^a100-80g,ok,no,.*,link,'; ok $? "spill at 640 MiB: ok, does not fit, link bound"

# An idle-dominated trace: the host bound. 1 ms kernel in a 100 ms window.
cat > "$tmp/idle.jsonl" <<'EOF'
{"vramsim_trace": 1, "time_unit": "ns", "capture": {"config": "a100-80g", "tool": "hand-written"}}
{"t": 0, "op": "alloc", "id": 1, "bytes": 1048576, "kind": "device"}
{"t": 1000, "op": "kernel", "name": "k", "stream": 0, "dur": 1000000, "compute_ns": 1000000}
{"t": 100000000, "op": "sync", "scope": "device"}
EOF
run "$VRAMSIM" fit "$tmp/idle.jsonl" -c a100-80g --format csv
printf '%s\n' "$out" | grep -q ',host,,[0-9]*,no$'; ok $? "a GPU idle 99 % of the window is host bound"

# --metric step: the steady step time ranks. synth-infer (a generated
# inference: weights upload, prefill, 32 decode tokens) runs faster in
# all on gh200 (its NVLink-C2C makes the 856 MiB upload cheap) but each
# token faster on h200 (4.8 TB/s HBM3e against 4.0): the order flips.
S=$here/traces/synth-infer.jsonl
run "$VRAMSIM" fit "$S" -c h200,gh200 --format csv
[ "$(printf '%s\n' "$out" | sed -n 2p | cut -d, -f1)" = gh200 ]; ok $? "by predicted time gh200 leads synth-infer"
run "$VRAMSIM" fit "$S" -c h200,gh200 --format csv --metric step
[ "$(printf '%s\n' "$out" | sed -n 2p | cut -d, -f1)" = h200 ]; ok $? "by --metric step h200 leads (per token)"
printf '%s\n' "$out" | python3 -c '
import csv, sys
rows = list(csv.DictReader(sys.stdin))
s = [float(r["step_median_ns"]) for r in rows]
assert s == sorted(s) and all(x > 0 for x in s), rows
'
ok $? "step_median_ns is given and ascending"
run "$VRAMSIM" fit "$S" --metric fastest
ok $(( rc != 2 )) "a bad --metric is a usage error (2)"
# A trace that repeats no mark: --metric step ranks by predicted time, as
# without it, and says so on stderr (the table is the same).
run "$VRAMSIM" fit "$here/traces/hand-overlap.jsonl" -c a100-80g,h200 --format csv
plain=$out
run "$VRAMSIM" fit "$here/traces/hand-overlap.jsonl" -c a100-80g,h200 --format csv --metric step
[ $rc = 0 ] && [ "$out" = "$plain" ]; ok $? "--metric step without repeated marks: the table of --metric time"
has "$err" "hand-overlap.jsonl repeats no mark, so no config has a steady step: rows are ranked by predicted time"
ok $? "and a warning naming the trace says why"

# A trace whose kernels name no allocation (as a profiler import's): on
# a100-80g with 1346 MiB (the 322 MiB context + 1 GiB), two 600 MiB
# allocations do not fit together (demand 322 + 1200 = 1522 MiB), so the
# first, written by k1 (the inferred "made" rule), goes out under spill
# and comes back for k3 (freed right after it): 2 x 600 MiB over the link
# at 31.5 GB/s x 0.8, at least 2 x 24.97 ms. Fit reads the trace from its
# buffer, which tells the inference the kernels name nothing. Before, and
# with model.touches=named, it cost nothing (slowdown 1).
cat > "$tmp/noids.jsonl" <<'EOF2'
{"vramsim_trace": 1, "time_unit": "ns", "capture": {"config": "a100-80g", "tool": "hand-written"}}
{"t": 0, "op": "kernel", "name": "k0", "stream": 1, "dur": 1000}
{"t": 1000, "op": "alloc", "id": 1, "bytes": 629145600, "kind": "device"}
{"t": 2000, "op": "kernel", "name": "k1", "stream": 1, "dur": 1000}
{"t": 3000, "op": "alloc", "id": 2, "bytes": 629145600, "kind": "device"}
{"t": 4000, "op": "kernel", "name": "k2", "stream": 1, "dur": 1000}
{"t": 5000, "op": "free", "id": 2}
{"t": 6000, "op": "kernel", "name": "k3", "stream": 1, "dur": 1000}
{"t": 7000, "op": "free", "id": 1}
{"t": 8000, "op": "sync", "scope": "device"}
EOF2
run "$VRAMSIM" fit "$tmp/noids.jsonl" -c a100-80g --set memory.capacity=1346MiB --set policy.oversubscription=spill --format json
python3 - "$tmp/out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["rows"][0]
assert r["fits"] is False and r["peak_device_bytes"] == 1522 * 2**20, r
assert r["lower_bound"] is True and r["predicted_ns"] >= 2 * 629145600 / 25.2e9 * 1e9, r
PY
ok $? "kernels naming nothing: spill costs at least 2 x 600 MiB over the link, a lower bound"
run "$VRAMSIM" fit "$tmp/noids.jsonl" -c a100-80g --set memory.capacity=1346MiB --set policy.oversubscription=spill
has "$out" ">=" && has "$out" "touches inferred"; ok $? "the text marks the time >= and warns that touches were inferred"
run "$VRAMSIM" fit "$tmp/noids.jsonl" -c a100-80g --set memory.capacity=1346MiB --set policy.oversubscription=spill --set model.touches=named --format csv
printf '%s\n' "$out" | grep -q '^a100-80g,ok,no,.*,1,.*,no$'; ok $? "model.touches=named: the old answer (slowdown 1), no lower bound"

# Files: -o writes atomically; the format follows the name.
run "$VRAMSIM" fit "$T" -c a100-80g -o "$tmp/fit.json"
ok $(( rc != 0 )) "-o FILE.json exits 0"
python3 -c "import json; assert json.load(open('$tmp/fit.json'))['vramsim_fit'] == 1"; ok $? "-o .json writes JSON"

# Bad input and usage.
run "$VRAMSIM" fit "$T" -c a100-80g,no-such-gpu
ok $(( rc != 1 )) "an unknown preset exits 1"
has "$err" "no-such-gpu"; ok $? "the message names it"
run "$VRAMSIM" fit "$T" -c a100-80g --set memory.bandwith=1TB/s -o "$tmp/bad.json"
ok $(( rc != 1 )) "an unknown --set key exits 1"
[ ! -e "$tmp/bad.json" ]; ok $? "no output file is left on bad input"
run "$VRAMSIM" fit
ok $(( rc != 2 )) "no trace is a usage error (2)"
run "$VRAMSIM" fit "$T" --format yaml
ok $(( rc != 2 )) "a bad --format is a usage error (2)"
exit $(( fails > 0 ))
