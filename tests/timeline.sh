#!/usr/bin/env bash
# timeline.sh — every --timeline the suite writes holds Perfetto's rules
# (tests/perfetto-check.py: no overlap within a track, every B with its E,
# every track named and ordered): the shipped traces under each policy,
# and real profiler traces imported (copies-rank0 had one-ns overlaps
# when ts and dur were rounded apart). TAP output.
set -u
VRAMSIM=${VRAMSIM:-bin/vramsim}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0
ok () { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails+1)); fi; }
skip () { n=$((n+1)); echo "ok $n # skip $1"; }
CHECK="python3 $here/tests/perfetto-check.py"
. "$here/tests/data-lib.sh"
echo "1..12"

# The checker itself fails on what it must catch.
cat > "$tmp/bad.json" <<'EOF2'
{"traceEvents": [
{"name":"process_name","ph":"M","pid":1,"args":{"name":"gpu"}},
{"name":"process_sort_index","ph":"M","pid":1,"args":{"sort_index":1}},
{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"stream 1"}},
{"name":"thread_sort_index","ph":"M","pid":1,"tid":1,"args":{"sort_index":0}},
{"name":"a","ph":"X","pid":1,"tid":1,"ts":1.000,"dur":2.001},
{"name":"b","ph":"X","pid":1,"tid":1,"ts":3.000,"dur":1.000},
{"name":"c","ph":"B","pid":1,"tid":2,"ts":5.000}
]}
EOF2
$CHECK "$tmp/bad.json" > "$tmp/bad.out"
[ $? = 1 ] && grep -q "overlaps" "$tmp/bad.out" && grep -q "B without E" "$tmp/bad.out" && grep -q "(1, 2): no thread_name" "$tmp/bad.out"
ok $? "the checker catches a 1 ns overlap, a B without E and an unnamed track"

for t in hand-train-step hand-overlap hand-uvm-oversub synth-train synth-infer synth-stream-uvm; do
  "$VRAMSIM" replay "$here/traces/$t.jsonl" --timeline "$tmp/$t.json" >/dev/null 2>&1
  $CHECK "$tmp/$t.json" >&2; ok $? "$t: timeline holds Perfetto's rules"
done
"$VRAMSIM" replay "$here/traces/hand-train-step.jsonl" -c rtx3090 --set memory.capacity=512MiB --set policy.oversubscription=spill \
  --timeline "$tmp/spill.json" >/dev/null 2>&1
"$VRAMSIM" replay "$here/traces/hand-train-step.jsonl" -c a100-80g --set memory.capacity=512MiB --set policy.oversubscription=uvm \
  --timeline "$tmp/uvm.json" >/dev/null 2>&1
$CHECK "$tmp/spill.json" "$tmp/uvm.json" >&2; ok $? "spill and uvm replays: timelines hold the rules"

for k in copies-rank0 memory-profile-v100; do
  if f=$(data_file kineto/$k.json.gz); then
    "$VRAMSIM" convert "$f" "$tmp/$k.jsonl" &&
      "$VRAMSIM" replay "$tmp/$k.jsonl" --timeline "$tmp/$k-tl.json" >/dev/null 2>&1
    $CHECK "$tmp/$k-tl.json" >&2; ok $? "$k (Kineto, real): timeline holds Perfetto's rules"
  else
    ok 1 "$k (Kineto, real): validation/data/kineto/$k.json.gz missing"
  fi
done
if f=$(optional_trace nsys/rtx3090-small.sqlite); then
  "$VRAMSIM" convert "$f" "$tmp/ns.jsonl" &&
    "$VRAMSIM" replay "$tmp/ns.jsonl" --timeline "$tmp/ns-tl.json" >/dev/null 2>&1
  $CHECK "$tmp/ns-tl.json" >&2; ok $? "rtx3090-small (nsys, real): timeline holds Perfetto's rules"
else
  skip "$(optional_why nsys/rtx3090-small.sqlite)"
fi
python3 - "$tmp/hand-train-step.json" <<'PY'
import json, sys
evs = json.load(open(sys.argv[1]))["traceEvents"]
names = {(e["pid"], e.get("tid")): e["args"]["name"] for e in evs if e.get("name") == "thread_name"}
assert names[(2, 0)] == "host thread 0" and names[(1, 1)] == "stream 1" and names[(3, 1)] == "stream 1", names
PY
ok $? "host threads are named ('host thread 0'), streams in both GPU processes"
exit $(( fails > 0 ))
