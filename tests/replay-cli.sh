#!/usr/bin/env bash
# replay-cli.sh — `vramsim replay` from the command line: exit statuses,
# messages that name the file/line/field, no partial outputs, the series,
# the timeline, and --set/--capture-config. TAP output.
set -u
VRAMSIM=${VRAMSIM:-bin/vramsim}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0
ok () { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails+1)); fi; }
# run CMD...: sets rc, out, err
run () { "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; out=$(cat "$tmp/out"); err=$(cat "$tmp/err"); }
has () { case "$1" in *"$2"*) return 0;; esac; return 1; }

echo "1..29"
T=$here/traces/hand-train-step.jsonl

run "$VRAMSIM" replay "$T"
ok $(( rc != 0 )) "replay of a sample exits 0"
has "$out" "predicted time" ; ok $? "text summary names the predicted time"

run "$VRAMSIM" replay "$T" --format json
ok $(( rc != 0 )) "json report exits 0"
python3 - "$tmp/out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
need = ["status", "config", "capture_config", "trace", "time", "host", "stalls", "memory", "traffic", "resources", "kernels", "marks"]
assert all(k in r for k in need), [k for k in need if k not in r]
for k in ["captured_ns", "predicted_ns", "slowdown"]: assert k in r["time"]
for k in ["contention_ns", "fault_ns", "swap_ns", "copy_engine_ns"]: assert k in r["stalls"]
for k in ["h2d_bytes", "d2h_bytes", "swap_out_bytes", "swap_in_bytes", "fault_bytes", "faults", "writeback_bytes"]: assert k in r["traffic"]
assert r["memory"]["tiers"][0]["name"] == "device"
for x in r["resources"]: assert set(["name", "capacity_bps", "bytes", "busy_ns", "utilization_mean", "saturated_ns"]) <= set(x)
assert abs(r["time"]["slowdown"] - 1) < 0.05, r["time"]
PY
ok $? "json report has every SPEC 5.8 field; slowdown on the capture config is ~1"

run "$VRAMSIM" replay "$T" -c rtx3090 --set memory.capacity=512MiB --format json
ok $(( rc != 0 )) "predicted OOM exits 0"
python3 -c "import json,sys; r=json.load(open('$tmp/out')); assert r['status']=='oom' and r['oom']['capacity']==512*2**20 and r['sets']=={'memory.capacity':'512MiB'}, r.get('oom')"
ok $? "status oom with the capacity set and the sets echoed"

run "$VRAMSIM" replay "$tmp/missing.jsonl"
ok $(( rc != 1 )) "missing trace exits 1"
has "$err" "missing.jsonl"; ok $? "message names the missing file"

run "$VRAMSIM" replay "$T" -c no-such-preset
ok $(( rc != 1 )) "unknown preset exits 1"
has "$err" "no-such-preset"; ok $? "message names the preset"

run "$VRAMSIM" replay "$T" --set memory.bandwith=1TB/s
ok $(( rc != 1 )) "unknown --set key exits 1"
has "$err" "memory.bandwith"; ok $? "message names the key"

run "$VRAMSIM" replay "$T" --set memory.efficiency=1.5
ok $(( rc != 1 )) "impossible value exits 1"

run "$VRAMSIM" replay
ok $(( rc != 2 )) "no trace is a usage error (2)"

run "$VRAMSIM" replay "$T" --format yaml
ok $(( rc != 2 )) "bad --format is a usage error (2)"

# A bad line after good ones: exit 1, message names file:line, no outputs left.
head -5 "$T" > "$tmp/bad.jsonl"
echo '{"t": 99999999, "op": "free", "id": 424242}' >> "$tmp/bad.jsonl"
run "$VRAMSIM" replay "$tmp/bad.jsonl" -o "$tmp/r.json" --series "$tmp/s.csv" --timeline "$tmp/t.json"
ok $(( rc != 1 )) "bad trace line exits 1"
has "$err" "bad.jsonl:6"; ok $? "message names file and line ($err)"
[ ! -e "$tmp/r.json" ] && [ ! -e "$tmp/s.csv" ] && [ ! -e "$tmp/t.json" ] && [ -z "$(ls "$tmp" | grep tmp)" ]
ok $? "no report, series, timeline or temporary file left behind"

run "$VRAMSIM" replay "$T" -o "$tmp/r.json" --series "$tmp/s.csv" --timeline "$tmp/t.json"
ok $(( rc != 0 )) "replay with all outputs exits 0"
python3 - "$tmp" "$T" <<'PY'
import json, sys, csv
tmp, trace = sys.argv[1], sys.argv[2]
r = json.load(open(tmp + "/r.json"))
rows = list(csv.DictReader(open(tmp + "/s.csv")))
assert rows and "resident_device_bytes" in rows[0] and "util_device_mem" in rows[0], rows[:1]
# residency never exceeds capacity, utilizations are fractions
cap = r["memory"]["tiers"][0]["capacity"]
for row in rows:
    assert float(row["resident_device_bytes"]) <= cap
    for k, v in row.items():
        if k.startswith("util_"): assert -1e-9 <= float(v) <= 1 + 1e-6, (k, v)
# the series' mean device_mem utilization equals the report's
dt = sum(float(x["dt_ns"]) for x in rows)
mean = sum(float(x["util_device_mem"]) * float(x["dt_ns"]) for x in rows) / dt
rep = [x for x in r["resources"] if x["name"] == "device_mem"][0]["utilization_mean"]
assert abs(mean - rep) < 0.01, (mean, rep)
PY
ok $? "series CSV: columns, bounds, mean utilization matches the report"
python3 - "$tmp/t.json" "$T" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
ops = [json.loads(l) for l in open(sys.argv[2]).readlines()[1:] if l.strip()]
gpu = [o for o in ops if o["op"] in ("kernel", "copy", "memset", "prefetch")]
xs = [e for e in ev if e["ph"] == "X" and e["pid"] == 1]
assert len(xs) == len(gpu), (len(xs), len(gpu))
assert sorted(e["args"]["event"] for e in xs) == [i for i, o in enumerate(ops) if o["op"] in ("kernel", "copy", "memset", "prefetch")]
assert any(e["ph"] == "C" for e in ev)
cap = [e for e in ev if e["ph"] == "X" and e["pid"] == 3]
assert len(cap) == len([o for o in gpu if "dur" in o]), (len(cap),)
assert all(abs(e["dur"] * 1e3 - ops[e["args"]["event"]]["dur"]) < 1 for e in cap)
PY
ok $? "timeline: valid JSON, one X event per GPU op, counters, captured track with captured durations"

run "$VRAMSIM" replay "$T" --timeline "$tmp/nodir/t.json"
ok $(( rc != 1 )) "unwritable timeline exits 1"

run "$VRAMSIM" replay "$T" -c a100-80g --capture-config rtx3090 --format json
python3 -c "import json; r=json.load(open('$tmp/out')); assert r['capture_config']=='rtx3090' and r['time']['slowdown'] < 1, r['time']"
ok $? "--capture-config names the capture machine (faster target: slowdown < 1)"

run "$VRAMSIM" replay --help
ok $(( rc != 0 )) "--help exits 0"

# More live allocations than the machine can hold: a clear error, not the OOM killer.
{ echo '{"vramsim_trace": 1}'; for i in 1 2 3 4 5; do echo "{\"t\": $i, \"op\": \"alloc\", \"id\": $i, \"bytes\": 1, \"kind\": \"device\"}"; done; } > "$tmp/live.jsonl"
VRAMSIM_MAX_LIVE=3 run "$VRAMSIM" replay "$tmp/live.jsonl" -c a100-80g
ok $(( rc != 1 )) "too many live allocations exits 1"
has "$err" "live.jsonl:5: 4 allocations live at once"; ok $? "message names the line and the count"

# Under uvm a managed allocation off the device is charged to host.capacity
# (SPEC 5.9): 2 GiB on a 1 GiB host is an OOM of the host, and the text says
# which memory ran out (1 GiB alone would read as the device's).
{ echo '{"vramsim_trace": 1}'; echo '{"t": 0, "op": "alloc", "id": 1, "bytes": 2147483648, "kind": "managed"}'; } > "$tmp/host.jsonl"
run "$VRAMSIM" replay "$tmp/host.jsonl" -c rtx3090 --set policy.oversubscription=uvm --set host.capacity=1GiB
has "$out" "asked 2 GiB with 0 B of 1 GiB in use (host memory)"; ok $? "an OOM of the host names the host"

# The allocator model in the outputs (SPEC 5.9), by hand: a tensor-level
# trace, 1 MiB (small pool: a 2 MiB segment) then 5 MiB (large pool, below
# 10 MiB: a 20 MiB segment), both held through a 1 ms kernel. Allocated
# 6 MiB = 6291456 B, reserved 22 MiB = 23068672 B; fragmentation at the
# reserved peak 1 - 6/22 = 0.7273.
cat > "$tmp/ten.jsonl" <<'EOF2'
{"vramsim_trace": 1, "allocations": "tensor"}
{"t": 0, "op": "alloc", "id": 1, "bytes": 1048576, "kind": "device"}
{"t": 1000, "op": "alloc", "id": 2, "bytes": 5242880, "kind": "device"}
{"t": 2000, "op": "kernel", "name": "k", "stream": 1, "dur": 1000000, "reads": [1], "writes": [2]}
{"t": 1003000, "op": "free", "id": 2}
{"t": 1004000, "op": "free", "id": 1}
{"t": 1005000, "op": "sync", "scope": "device"}
EOF2
run "$VRAMSIM" replay "$tmp/ten.jsonl" -c a100-80g --format json -o "$tmp/ten.json" --series "$tmp/ten.csv" --timeline "$tmp/ten-t.json"
python3 - "$tmp" <<'PY'
import json, sys, csv
tmp = sys.argv[1]
a = json.load(open(tmp + "/ten.json"))["memory"]["allocator"]
assert (a["kind"], a["peak_allocated_bytes"], a["peak_reserved_bytes"], a["end_reserved_bytes"], a["segment_allocs"],
        a["segment_frees"], a["segment_alloc_bytes"]) == ("pytorch", 6291456, 23068672, 23068672, 2, 0, 23068672), a
assert abs(a["fragmentation_peak"] - (1 - 6 / 22)) < 1e-9, a
rows = list(csv.DictReader(open(tmp + "/ten.csv")))
assert max(int(r["allocated_bytes"]) for r in rows) == 6291456
assert max(int(r["reserved_bytes"]) for r in rows) == 23068672
# through the kernel both tensors are live: every bucket there holds both
mid = [r for r in rows if 10000 <= int(r["t_ns"]) < 900000]
assert mid and all((int(r["allocated_bytes"]), int(r["reserved_bytes"])) == (6291456, 23068672) for r in mid)
PY
ok $? "memory.allocator by hand; --series allocated_bytes/reserved_bytes: 6 MiB / 22 MiB while the kernel runs"
python3 - "$tmp/ten-t.json" <<'PY'
import json, sys
c = [e["args"] for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("ph") == "C" and e.get("name") == "allocator"]
assert c, "no allocator counter"
# 6 MiB and 22 MiB in GiB, to the counter's 6 decimals
assert abs(max(x["allocated GiB"] for x in c) - 6 / 1024) < 1e-6, c
assert abs(max(x["reserved GiB"] for x in c) - 22 / 1024) < 1e-6, c
assert c[-1]["allocated GiB"] == 0 and abs(c[-1]["reserved GiB"] - 22 / 1024) < 1e-6, c
PY
ok $? "--timeline: the allocator counter (allocated and reserved GiB) peaks at 6 MiB / 22 MiB, ends 0 / 22 MiB cached"

[ $fails -eq 0 ]
