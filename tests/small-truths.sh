#!/bin/sh
# small-truths.sh — what the reports say, said once and right: each
# warning once in the text view; the TF32 upgrade and a missing peak named
# without contradicting themselves; an empty capture's slowdown "-" (null
# in JSON); no "GPU idle" warning on an oom row; --timeline ranges as
# slices, points as instants, a failed allocation as an instant; the
# unified-memory warning when a Jetson's pool has little left; the
# no-capture-config warning. TAP.
set -u
VRAMSIM=${VRAMSIM:-bin/vramsim}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0
ok () { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails+1)); fi; }
echo "1..15"

# A window of host time and no GPU work: the GPU-idle warning.
cat > "$tmp/idle.jsonl" <<'EOF'
{"vramsim_trace": 1, "capture": {"config": "a100-80g"}}
{"t": 0, "op": "alloc", "id": 1, "bytes": 1048576, "kind": "device"}
{"t": 1000000, "op": "free", "id": 1}
EOF
W="the GPU is idle 100.00 %"
"$VRAMSIM" replay "$tmp/idle.jsonl" > "$tmp/i.out" 2> "$tmp/i.err"
[ "$(grep -c "$W" "$tmp/i.out")" = 1 ] && [ ! -s "$tmp/i.err" ] && grep -q "^warnings$" "$tmp/i.out"
ok $? "text on stdout: the warning once, in its warnings section, nothing on stderr"
"$VRAMSIM" replay "$tmp/idle.jsonl" -o "$tmp/i.txt" 2> "$tmp/i2.err"
[ "$(grep -c "$W" "$tmp/i.txt")" = 1 ] && [ "$(grep -c "$W" "$tmp/i2.err")" = 1 ]
ok $? "text to a file (-o): once in the file, once on stderr"
"$VRAMSIM" replay "$tmp/idle.jsonl" --format json > "$tmp/i.json" 2> "$tmp/i3.err"
[ "$(grep -c "^vramsim: warning: $W" "$tmp/i3.err")" = 1 ]
ok $? "JSON: once on stderr"

# FP32 convolutions captured on a V100 (no TF32 units: its compute.tf32 is
# its FP32 rate) run as TF32 on an A100 (model.tf32 "conv"): said once, as
# what happens, not as a missing peak.
cat > "$tmp/v100.jsonl" <<'EOF'
{"vramsim_trace": 1, "capture": {"config": "v100-sxm2-32g"}}
{"t": 0, "op": "kernel", "name": "volta_scudnn_128x64_relu_interior_nn_v1", "stream": 1, "dur": 1000000}
{"t": 10, "op": "kernel", "name": "volta_scudnn_128x64_relu_interior_nn_v1", "stream": 1, "dur": 1000000}
EOF
"$VRAMSIM" replay "$tmp/v100.jsonl" -c a100-80g --format json 2>/dev/null | python3 -c '
import json, sys
w = json.load(sys.stdin)["warnings"]
t = [x for x in w if "tf32" in x]
assert len(t) == 1, w
assert "run as tf32 on a100-80g: v100-sxm2-32g captured them at its FP32 rate" in t[0] and "model.tf32 \"conv\"" in t[0], t
assert not any("gives no compute.tf32 peak" in x or "stands in" in x for x in w), w'
ok $? "tf32: one warning, the FP32 rate at capture and the target's TF32 rate named; no 'gives no compute.tf32 peak'"
# An FP8 kernel (its fields say so) from an H100 on an A100, which lists no FP8 peak.
cat > "$tmp/fp8.jsonl" <<'EOF'
{"vramsim_trace": 1, "capture": {"config": "h100-sxm"}}
{"t": 0, "op": "kernel", "name": "sm90_xmma_gemm_e4m3", "stream": 1, "dur": 1000000, "flops": 1000000000000, "precision": "fp8"}
EOF
"$VRAMSIM" replay "$tmp/fp8.jsonl" -c a100-80g --format json 2>/dev/null | python3 -c '
import json, sys
w = json.load(sys.stdin)["warnings"]
t = [x for x in w if x.startswith("fp8 kernels")]
assert len(t) == 1 and "a100-80g gives no compute.fp8 peak; its FP16 rate (compute.fp16) is used instead" in t[0], w'
ok $? "a missing peak: the chip named, and the rate used instead (FP16)"

# An empty capture: nothing captured, no ratio.
printf '{"vramsim_trace": 1, "capture": {"config": "a100-80g"}}\n' > "$tmp/empty.jsonl"
"$VRAMSIM" replay "$tmp/empty.jsonl" 2>/dev/null | grep -q '^  slowdown  *-$'
ok $? "empty capture: text slowdown '-'"
"$VRAMSIM" replay "$tmp/empty.jsonl" --format json 2>/dev/null | python3 -c '
import json, sys; r = json.load(sys.stdin); assert r["time"]["slowdown"] is None and r["time"]["captured_ns"] == 0, r["time"]'
ok $? "empty capture: JSON time.slowdown null"
"$VRAMSIM" fit "$tmp/empty.jsonl" -c a100-80g 2>/dev/null | awk '$1 == "a100-80g" { found = 1; if ($0 !~ / - +[a-z]+$/ || $0 ~ /0\.000x/) exit 1 } END { exit !found }' \
  && "$VRAMSIM" fit "$tmp/empty.jsonl" -c a100-80g --format json 2>/dev/null | python3 -c '
import json, sys; d = json.load(sys.stdin); rows = d["rows"] if isinstance(d, dict) else d; assert rows[0]["slowdown"] is None, rows'
ok $? "empty capture: fit's slowdown '-' (JSON null), not 0.000x"

# Out of memory after a millisecond of host time and no GPU work: the row
# says oom; "GPU idle" would be about a run cut short.
cat > "$tmp/oom.jsonl" <<'EOF'
{"vramsim_trace": 1, "capture": {"config": "a100-80g"}}
{"t": 0, "op": "alloc", "id": 1, "bytes": 1048576, "kind": "device"}
{"t": 1000000, "op": "alloc", "id": 2, "bytes": 1099511627776, "kind": "device"}
EOF
"$VRAMSIM" replay "$tmp/oom.jsonl" --format json 2>/dev/null | python3 -c '
import json, sys; r = json.load(sys.stdin); assert r["status"] == "oom" and not any("GPU is idle" in w for w in r["warnings"]), r["warnings"]' \
  && ! "$VRAMSIM" fit "$tmp/oom.jsonl" -c a100-80g 2>&1 | grep -q "GPU is idle"
ok $? "an oom row (replay and fit): no GPU-idle warning"

# Timeline: a profiler range around an inner range and a point, then an
# out-of-memory.
cat > "$tmp/tl.jsonl" <<'EOF'
{"vramsim_trace": 1, "capture": {"config": "a100-80g"}}
{"t": 0, "op": "mark", "name": "step"}
{"t": 100, "op": "mark", "name": "inner"}
{"t": 200, "op": "kernel", "name": "k", "stream": 1, "dur": 1000}
{"t": 300, "op": "mark", "name": "inner/end"}
{"t": 400, "op": "mark", "name": "p"}
{"t": 500, "op": "mark", "name": "step/end"}
{"t": 600, "op": "alloc", "id": 1, "bytes": 1099511627776, "kind": "device"}
EOF
"$VRAMSIM" replay "$tmp/tl.jsonl" --timeline "$tmp/tl.json" > /dev/null 2>&1
python3 - "$tmp/tl.json" <<'PY'
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("pid") == 2 and e["ph"] != "M"]
x = {e["name"]: e for e in ev if e["ph"] == "X" and e.get("cat") == "range"}
assert x["step"]["ts"] == 0 and x["step"]["dur"] == 0.5, x
assert x["inner"]["ts"] == 0.1 and x["inner"]["dur"] == 0.2, x
inst = [e for e in ev if e["ph"] == "i"]
names = sorted(e["name"] for e in inst)
assert names == ["out of memory", "p"], names
p = [e for e in inst if e["name"] == "p"][0]
assert p["ts"] == 0.4, p
o = [e for e in inst if e["name"] == "out of memory"][0]
assert o["s"] == "g" and o["ts"] == 0.6 and o["args"]["requested"] == 1099511627776 and o["args"]["alloc_id"] == 1, o
PY
ok $? "timeline: ranges as slices (step 0-500 ns, inner 100-300 ns), the point an instant, no instant pairs, the OOM an instant"
python3 "$here/tests/perfetto-check.py" "$tmp/tl.json" >&2
ok $? "and it holds Perfetto's rules"
# Ranges that do not nest (A opens, B opens, A ends, B ends): A a slice,
# B an async slice (b/e), so the track still nests.
cat > "$tmp/cross.jsonl" <<'EOF'
{"vramsim_trace": 1, "capture": {"config": "a100-80g"}}
{"t": 0, "op": "mark", "name": "A"}
{"t": 100, "op": "mark", "name": "B"}
{"t": 200, "op": "mark", "name": "A/end"}
{"t": 300, "op": "mark", "name": "B/end"}
EOF
"$VRAMSIM" replay "$tmp/cross.jsonl" --timeline "$tmp/cross.json" > /dev/null 2>&1
python3 - "$tmp/cross.json" <<'PY' && python3 "$here/tests/perfetto-check.py" "$tmp/cross.json" >&2
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("pid") == 2 and e["ph"] != "M"]
assert [(e["name"], e["ph"]) for e in ev if e.get("cat") == "range"] == [("A", "X"), ("B", "b"), ("B", "e")], ev
b, e = [x for x in ev if x["name"] == "B"]
assert b["id"] == e["id"] and b["ts"] == 0.1 and e["ts"] == 0.3, (b, e)
PY
ok $? "timeline: a range that overlaps another part way is an async slice"
# A unified machine: the OS and the CPU side share the pool and are not
# in the trace. 7 GiB on jetson-orin-nano (8 GiB, context 31 MiB, nothing
# reserved): demand 7 GiB + 31 MiB, 993 MiB left, under a quarter of the
# pool: said. 4 GiB leaves 3.97 GiB (more than 2 GiB): not said; nor with
# memory.reserved given, nor on a discrete GPU.
for gib in 7 4; do
  cat > "$tmp/u$gib.jsonl" <<EOF
{"vramsim_trace": 1, "capture": {"config": "a100-80g"}}
{"t": 0, "op": "alloc", "id": 1, "bytes": $((gib << 30)), "kind": "device"}
{"t": 1000000, "op": "free", "id": 1}
EOF
done
"$VRAMSIM" replay "$tmp/u7.jsonl" -c jetson-orin-nano --format json > "$tmp/u7.json" 2>/dev/null &&
"$VRAMSIM" replay "$tmp/u7.jsonl" -c jetson-orin-nano > "$tmp/u7.txt" 2>/dev/null &&
python3 - "$tmp/u7.json" "$tmp/u7.txt" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["memory"]["device_demand_bytes"] == (7 << 30) + (31 << 20) and r["fits"] is True, r["memory"]
w = [x for x in r["warnings"] if x.startswith("unified memory")]
assert w == ["unified memory: on jetson-orin-nano the OS, the CUDA libraries and the CPU side of the program share "
             "the 8 GiB pool with the GPU and are not in the trace; the preset reserves nothing for them "
             "(memory.reserved = 0 B), so the program's demand (7.03 GiB at its peak) leaves them 993 MiB. Set "
             "memory.reserved to what they take on your system"], r["warnings"]
assert open(sys.argv[2]).read().count("unified memory: on jetson-orin-nano") == 1
PY
ok $? "unified memory, 7 GiB of 8: the warning with the demand and the 993 MiB left, once in the text"
quiet=0
for args in "$tmp/u4.jsonl -c jetson-orin-nano" "$tmp/u7.jsonl -c jetson-orin-nano --set memory.reserved=512MiB" \
    "$tmp/u7.jsonl -c a100-80g"; do
  # shellcheck disable=SC2086
  "$VRAMSIM" replay $args --format json 2>/dev/null | grep -q '"unified memory' && quiet=1
done
ok $quiet "no unified-memory warning with 3.97 GiB left, with memory.reserved given, or on a100-80g"
# A trace that names no capture config (an import whose GPU the profiler
# did not name): the target stands in, its GPU times replay as captured,
# and the report says so; not with --capture-config, nor for a trace that
# names its config. fit says it once for all its configs.
cat > "$tmp/nocap.jsonl" <<'EOF'
{"vramsim_trace": 1}
{"t": 0, "op": "alloc", "id": 1, "bytes": 1048576, "kind": "device"}
{"t": 10, "op": "kernel", "name": "k", "stream": 0, "dur": 100000, "writes": [1]}
{"t": 200000, "op": "free", "id": 1}
EOF
W="no capture config: the trace does not name the machine it ran on"
c1=$("$VRAMSIM" replay "$tmp/nocap.jsonl" -c a100-80g 2>/dev/null | grep -c "$W")
c2=$("$VRAMSIM" replay "$tmp/nocap.jsonl" -c a100-80g --capture-config h100-sxm 2>/dev/null | grep -c "$W")
c3=$("$VRAMSIM" replay "$tmp/u7.jsonl" -c h100-sxm 2>/dev/null | grep -c "$W")
c4=$("$VRAMSIM" fit "$tmp/nocap.jsonl" -c a100-80g,rtx3090 2>/dev/null | grep -c "(2 of 2 configs; figures for a100-80g): $W")
[ "$c1.$c2.$c3.$c4" = "1.0.0.1" ]
ok $? "no capture config: said once on replay and once for fit's two configs; not with --capture-config or a named config ($c1.$c2.$c3.$c4)"
exit $(( fails > 0 ))
