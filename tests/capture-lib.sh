# capture-lib.sh — shared by capture-hook.sh and capture-cupti.sh (sourced;
# needs VRAMSIM and HERE, the tests/ folder).

# What the shim says at exit of a program that called cuMemAdvise once.
ADVISE_NOTE="vramcap: 1 cuMemAdvise call is not in the trace: the trace format has no advise op, and replay places managed pages by its own model"

# decode TRACE OUT: JSONL through "vramsim convert" when it can, else the
# independent decoder; then one canonical line per event (t and host_ns
# dropped: they vary; defaults filled in).
decode() {
  if "$VRAMSIM" convert "$1" "$2.raw.jsonl" 2>/dev/null; then :; else
    python3 "$HERE/stub-cuda/vtrace2jsonl.py" "$1" > "$2.raw.jsonl" || return 1
  fi
  python3 - "$2.raw.jsonl" > "$2" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(json.dumps({k: lines[0]["capture"].get(k) for k in ("device", "config", "mode", "tool")}, sort_keys=True))
for e in lines[1:]:
    e.pop("t", None); e.pop("host_ns", None)
    e.setdefault("tid", 0)
    if e["op"] in ("copy", "memset", "kernel", "event_record", "stream_wait", "prefetch"):
        e.setdefault("stream", 0)
    if e["op"] == "copy":
        e.setdefault("src", 0); e.setdefault("dst", 0)
    if e["op"] in ("copy", "memset"):
        e.setdefault("async", False)
    if e["op"] == "kernel":
        for f in ("reads", "writes", "touches"):
            e.setdefault(f, [])
        # the launch shape (CUPTI mode) is checked on its own (capture-cupti.sh)
        for f in ("grid", "block", "regs", "smem"):
            e.pop(f, None)
    print(json.dumps(e, sort_keys=True))
PY
}

# check_threads NORM: prog-threads' decoded trace (decode): the main thread
# allocates and frees one buffer; each of four threads runs 50 rounds of
# alloc, kernel (touching that allocation, 1000 ns), sync, free, with
# 4, 8, 12 and 16 KiB buffers.
check_threads() {
  python3 - "$1" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])][1:]
by = {}
for e in ev:
    by.setdefault(e["tid"], []).append(e)
assert sorted(by) == [0, 1, 2, 3, 4], sorted(by)
assert [e["op"] for e in by[0]] == ["alloc", "free"], by[0]
sizes = set()
for tid in (1, 2, 3, 4):
    ops = [e["op"] for e in by[tid]]
    assert ops == ["alloc", "kernel", "sync", "free"] * 50, ops[:8]
    for i in range(0, 200, 4):
        a, k, s, f = by[tid][i:i + 4]
        assert k["touches"] == [a["id"]] and f["id"] == a["id"] and k["dur"] == 1000, (a, k, f)
        sizes.add(a["bytes"])
assert sizes == {4096, 8192, 12288, 16384}, sizes
PY
}

# shapes TRACE: one line per kernel, "name grid block regs smem" (SPEC 3
# kernel shape; "-" for an absent field), in trace order.
shapes() {
  "$VRAMSIM" convert "$1" "$1.shapes.jsonl" 2>/dev/null || return 1
  python3 - "$1.shapes.jsonl" <<'PY'
import json, sys
dim = lambda v: "x".join(map(str, v)) if v else "-"
for e in [json.loads(l) for l in open(sys.argv[1]) if l.strip()][1:]:
    if e["op"] == "kernel":
        print(e["name"], dim(e.get("grid")), dim(e.get("block")), e.get("regs", "-"), e.get("smem", "-"))
PY
}
