#!/usr/bin/env bash
# steady.sh — ranges, per-mark spread, the steady state and warnings[] in
# the replay report, checked against times written by hand and against
# the real Kineto file's own range durations. TAP output.
set -u
VRAMSIM=${VRAMSIM:-bin/vramsim}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0
ok () { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails+1)); fi; }
skip () { n=$((n+1)); echo "ok $n # skip $1"; }
. "$here/tests/data-lib.sh"
REAL=$VRAMSIM_DATA   # validation/data: these files must be there
echo "1..10"

# Three steps of 10, 12 and 11 us (ranges step ... step/end), each with a
# nested fwd range of 3, 2 and 4 us, and a point mark "iter" at each step
# start. No GPU work, so the replay keeps the host times exactly: step
# median of all = 11 us; first step 10 us, steady (steps 2-3) median =
# (12 + 11) / 2 = 11.5 us; fwd in all 9 us.
cat > "$tmp/r.jsonl" <<'EOF2'
{"vramsim_trace": 1, "time_unit": "ns", "capture": {"config": "a100-80g", "tool": "hand-written"}}
{"t": 0, "op": "alloc", "id": 1, "bytes": 1048576, "kind": "device"}
{"t": 0, "op": "mark", "name": "step"}
{"t": 0, "op": "mark", "name": "iter"}
{"t": 1000, "op": "mark", "name": "fwd"}
{"t": 4000, "op": "mark", "name": "fwd/end"}
{"t": 10000, "op": "mark", "name": "step/end"}
{"t": 10000, "op": "mark", "name": "step"}
{"t": 10000, "op": "mark", "name": "iter"}
{"t": 11000, "op": "mark", "name": "fwd"}
{"t": 13000, "op": "mark", "name": "fwd/end"}
{"t": 22000, "op": "mark", "name": "step/end"}
{"t": 22000, "op": "mark", "name": "step"}
{"t": 22000, "op": "mark", "name": "iter"}
{"t": 23000, "op": "mark", "name": "fwd"}
{"t": 27000, "op": "mark", "name": "fwd/end"}
{"t": 33000, "op": "mark", "name": "step/end"}
{"t": 33000, "op": "free", "id": 1}
EOF2
"$VRAMSIM" replay "$tmp/r.jsonl" --format json > "$tmp/r.json" 2> "$tmp/r.err"
python3 - "$tmp/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
m = {x["name"]: x for x in r["marks"]}
assert set(m) == {"step", "fwd", "iter"}, m            # no "step/end" rows
s = m["step"]
assert s["kind"] == "range" and s["count"] == 3 and s["predicted_ns"] == 33000, s
assert s["median_ns"] == 11000 and s["min_ns"] == 10000 and s["max_ns"] == 12000, s
assert s["captured_ns"] == 33000 and s["captured_median_ns"] == 11000, s
f = m["fwd"]
assert f["kind"] == "range" and f["count"] == 3 and f["predicted_ns"] == 9000 and f["median_ns"] == 3000, f
PY
ok $? "nested ranges: step 3 x (10, 12, 11 us), fwd 3 x (3, 2, 4 us), no /end rows"
python3 - "$tmp/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
i = {x["name"]: x for x in r["marks"]}["iter"]
# A point runs to its thread's next mark: iter -> fwd each step, 1 us.
assert i["kind"] == "point" and i["count"] == 3 and i["predicted_ns"] == 3000, i
PY
ok $? "a point mark runs to the thread's next mark (iter: 3 x 1 us)"
python3 - "$tmp/r.json" <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))["steady_state"]
assert st["mark"] == "step" and st["steps"] == 3 and st["first_step_ns"] == 10000, st
assert st["step_median_ns"] == 11500 and st["step_min_ns"] == 11000 and st["step_max_ns"] == 12000, st
assert st["captured_step_median_ns"] == 11500 and st["step_slowdown"] == 1 and st["warmup_excluded"], st
PY
ok $? "steady state: the mark with the most time (step), first step 10 us apart, median of the rest 11.5 us"
"$VRAMSIM" replay "$tmp/r.jsonl" > "$tmp/r.txt" 2>/dev/null
sed -n 3p "$tmp/r.txt" | grep -q "per step (step) .*11.5 us median of 2 .* after a first step of 10 us"
ok $? "the text summary leads with the step time"
python3 - "$tmp/r.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))["warnings"]
# No GPU work at all in a 33 us window: idle 100 %; it has memory (1 MiB).
assert len(w) == 1 and w[0].startswith("the GPU is idle 100.00 % of the predicted time (0 ns of GPU work in 33 us)"), w
PY
ok $? "warnings[]: a window without GPU work says the GPU is idle 100 %"
grep -q "^vramsim: warning: the GPU is idle 100.00 %" "$tmp/r.err"; ok $? "and says it on stderr"
"$VRAMSIM" replay "$here/traces/hand-train-step.jsonl" --format json > "$tmp/t.json" 2> "$tmp/t.err"
python3 -c "import json; assert json.load(open('$tmp/t.json'))['warnings'] == []" && [ ! -s "$tmp/t.err" ]
ok $? "no warnings for the sample training step (busy GPU, allocations)"

# The real files: memory-profile-v100's ranges as the file gives them
# (each ProfilerStep 336.3-365.3 ms, zero_grad 57.638 ms in all: its
# "dur" fields, read here), replayed on its own V100 unchanged.
if [ -r "$REAL/kineto/memory-profile-v100.json.gz" ]; then
  "$VRAMSIM" convert "$REAL/kineto/memory-profile-v100.json.gz" "$tmp/mp.jsonl"
  "$VRAMSIM" replay "$tmp/mp.jsonl" --format json > "$tmp/mp.json" 2>/dev/null
  python3 - "$REAL/kineto/memory-profile-v100.json.gz" "$tmp/mp.json" <<'PY'
import gzip, json, statistics, sys
ev = json.load(gzip.open(sys.argv[1]))["traceEvents"]
steps = [e["dur"] * 1000 for e in ev if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")]
zero = sum(e["dur"] * 1000 for e in ev if e.get("cat") == "user_annotation" and e["name"].startswith("Optimizer.zero_grad"))
r = json.load(open(sys.argv[2]))
m = {x["name"]: x for x in r["marks"]}
p = m["ProfilerStep"]
assert p["kind"] == "range" and p["count"] == len(steps) == 5, p
assert p["predicted_ns"] == sum(steps) and p["min_ns"] == min(steps) == 336328000 and p["max_ns"] == max(steps) == 365256000, p
assert m["Optimizer.zero_grad#SGD.zero_grad"]["predicted_ns"] == zero == 57638000, m
st = r["steady_state"]
assert st["mark"] == "ProfilerStep" and st["first_step_ns"] == steps[0] and st["step_median_ns"] == statistics.median(steps[1:]), st
PY
  ok $? "memory-profile-v100: ProfilerStep 5 ranges of 336.3-365.3 ms, zero_grad 57.6 ms, as the file says"
else
  ok 1 "memory-profile-v100: $REAL/kineto/memory-profile-v100.json.gz missing"
fi
# alexnet: a 43.4 s window with milliseconds of GPU work and no memory events.
if [ -r "$REAL/kineto/alexnet-a100.json.gz" ]; then
  "$VRAMSIM" convert "$REAL/kineto/alexnet-a100.json.gz" "$tmp/ax.jsonl"
  "$VRAMSIM" replay "$tmp/ax.jsonl" --format json > "$tmp/ax.json" 2> "$tmp/ax.err"
  python3 - "$tmp/ax.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))["warnings"]
assert len(w) == 2 and w[0].startswith("the GPU is idle 99.9") and w[1].startswith("memory unknown"), w
PY
  ok $? "alexnet: GPU idle 99.9 % and memory unknown, in warnings[]"
  [ "$(grep -c '^vramsim: warning: ' "$tmp/ax.err")" = 2 ]; ok $? "and both on stderr"
else
  ok 1 "alexnet: $REAL/kineto/alexnet-a100.json.gz missing"; ok 1 "alexnet: warnings on stderr"
fi
exit $(( fails > 0 ))
