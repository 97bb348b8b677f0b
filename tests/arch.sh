#!/bin/sh
# arch.sh — the include rule of docs/architecture.md ("The rooms"): a room
# includes only the rooms its row names (a lower room never includes a
# higher one), and no files include each other in a circle, in sim/ and
# in capture/; with the objects built (TEST_BUILD), no object of a room
# calls another that calls it back (nm). The checker is first run on two
# made-up trees that break each rule, so that it is seen to fail.
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BUILD=${TEST_BUILD:-$ROOT/build}
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

cat > "$T/arch.py" <<'PY'
import os, re, subprocess, sys

# Each room and the rooms it may include (besides itself), as the table of
# docs/architecture.md gives them. A part (NAME.part.c) counts in the room
# of the translation unit that #includes it: sim/flow's parts are compiled
# inside sim/flow/flow.c, the flow room's; every other part (in any room)
# inside sim/engine/replay.c, so it and engine/sim-priv.h count as the
# engine's.
ALLOWED = {
    "base": [],
    "flow": [],
    "trace": ["base"],
    "config": ["base", "trace"],
    "model": ["base", "config", "trace"],
    "mem": ["base"],
    "import": ["base", "trace", "mem", "model"],
    "synth": ["base", "config", "trace", "model"],
    "engine": ["base", "flow", "trace", "config", "model", "mem"],
    "sweep": ["base", "config", "trace", "engine"],
    "out": ["base", "engine", "sweep"],
    "plan": ["base", "config", "trace", "synth", "engine", "sweep"],
    "cli": None,  # every room
}
# Rooms whose objects still call each other in a circle, and why; a new
# circle anywhere else fails. Take a room off when its circle is broken.
KNOWN_CALL_CIRCLES = {
    "cli": "main.c's cmd_error, called back by every cmd-*.c",
    "mem": "alloc.c's table of allocator models and the helpers the models call back",
}
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

# The rooms whose own translation unit #includes the parts in their
# folder (a part elsewhere is the engine's).
PART_ROOMS = {"flow": "sim/flow/flow.c"}

def room_of(rel):
    """The room a file of sim/ counts in: sim/ROOM/..., a part its
    translation unit's (the engine's but in PART_ROOMS)."""
    room = rel.split("/")[1]
    if rel.endswith(".part.c"):
        return room if room in PART_ROOMS else "engine"
    if rel == "sim/engine/sim-priv.h":
        return "engine"
    return room

def sources(root, top):
    for d, _, files in os.walk(os.path.join(root, top)):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.relpath(os.path.join(d, f), root)

def module(root, rel):
    """The implementation a file stands for: X.c for X.c and X.h, a part
    itself; None for a header with no X.c (a room's shared or private
    header: trace-priv.h, sim-priv.h), which holds no calls."""
    if rel.endswith(".part.c") or rel.endswith(".c"):
        return rel
    c = rel[:-2] + ".c"
    return c if os.path.exists(os.path.join(root, c)) else None

def includes(root, rel):
    text = open(os.path.join(root, rel), encoding="utf-8", errors="replace").read()
    for name in INC.findall(text):
        if rel.startswith("sim/"):
            yield "sim/" + name
        else:
            yield os.path.normpath(os.path.join(os.path.dirname(rel), name))

def cycles(graph):
    """Each circle of GRAPH (node -> set of nodes) once, as a list of nodes."""
    seen, found, stack, on = set(), [], [], set()
    def visit(n):
        seen.add(n); stack.append(n); on.add(n)
        for m in sorted(graph.get(n, ())):
            if m in on:
                found.append(stack[stack.index(m):] + [m])
            elif m not in seen:
                visit(m)
        stack.pop(); on.discard(n)
    for n in sorted(graph):
        if n not in seen:
            visit(n)
    return found

def check_rooms(root):
    bad = []
    for rel in sources(root, "sim"):
        room = room_of(rel)
        allowed = ALLOWED.get(room, [])
        if room not in ALLOWED:
            bad.append("%s: room '%s' is not in the table (docs/architecture.md, tests/arch.sh)" % (rel, room))
            continue
        for inc in includes(root, rel):
            other = room_of(inc)
            if allowed is None or other == room or other in allowed:
                continue
            bad.append("%s: includes %s: room %s may not include %s" % (rel, inc[4:], room, other))
    return bad

def check_circles(root):
    """A.c -> B.c when A.c (or A.h) includes B.h (or B.c, a part): the
    circles of files that include each other's headers."""
    graph = {}
    for top in ("sim", "capture"):
        for rel in sources(root, top):
            a = module(root, rel)
            for inc in includes(root, rel):
                b = module(root, inc) if os.path.exists(os.path.join(root, inc)) else None
                if a and b and a != b:
                    graph.setdefault(a, set()).add(b)
    return ["include circle: " + " -> ".join(c) for c in cycles(graph)]

def check_calls(build):
    """Circles of calls between the objects of one room (nm)."""
    bad = []
    sim = os.path.join(build, "sim")
    if not os.path.isdir(sim):
        return None
    for room in sorted(os.listdir(sim)):
        objs = sorted(f for f in os.listdir(os.path.join(sim, room)) if f.endswith(".o"))
        defined, undef = {}, {}
        for o in objs:
            out = subprocess.run(["nm", os.path.join(sim, room, o)], capture_output=True, text=True).stdout
            undef[o] = set()
            for line in out.splitlines():
                f = line.split()
                if len(f) == 3 and f[1] in "TDRBG":
                    defined[f[2]] = o
                elif len(f) == 2 and f[0] == "U":
                    undef[o].add(f[1])
        graph = {o: {defined[s] for s in undef[o] if s in defined and defined[s] != o} for o in objs}
        found = ["call circle in sim/%s: %s" % (room, " -> ".join(c)) for c in cycles(graph)]
        if room in KNOWN_CALL_CIRCLES:
            for f in found:
                print("# known (%s): %s" % (KNOWN_CALL_CIRCLES[room], f))
        else:
            bad += found
    return bad

what, root = sys.argv[1], sys.argv[2]
bad = {"rooms": check_rooms, "circles": check_circles, "calls": check_calls}[what](root)
if bad is None:
    sys.exit(2)
for b in bad:
    print("# " + b)
sys.exit(1 if bad else 0)
PY

# Two made-up trees: one with a lower room including a higher one (and a
# part of flow.c including the engine, which its own part may), one with
# two files that include each other's headers.
mkdir -p "$T/up/sim/base" "$T/up/sim/trace" "$T/up/sim/flow" "$T/up/sim/mem" "$T/circle/capture"
printf '#include "trace/trace.h"\n' > "$T/up/sim/base/units.c"
printf '#include "engine/sim-priv.h"\n' > "$T/up/sim/flow/flow-x.part.c"
printf '#include "engine/sim-priv.h"\n' > "$T/up/sim/mem/x.part.c"
printf '#pragma once\n' > "$T/up/sim/trace/trace.h"
printf '#include "b.h"\n' > "$T/circle/capture/a.c"; printf '#pragma once\n' > "$T/circle/capture/a.h"
printf '#include "a.h"\n' > "$T/circle/capture/b.c"; printf '#pragma once\n' > "$T/circle/capture/b.h"

echo "1..5"
python3 "$T/arch.py" rooms "$T/up" > "$T/up.out"
rc=$?
[ $rc = 1 ] && grep -q 'sim/base/units.c: includes trace/trace.h: room base may not include trace' "$T/up.out" \
  && grep -q 'sim/flow/flow-x.part.c: includes engine/sim-priv.h: room flow may not include engine' "$T/up.out" \
  && ! grep -q 'sim/mem/x.part.c' "$T/up.out"
r=$?; [ $r = 0 ] && echo "ok 1 - the checker refuses a lower room including a higher one (a part of flow.c counts as flow's)" \
  || { cat "$T/up.out"; echo "not ok 1 - the checker refuses a lower room including a higher one (rc $rc)"; }
python3 "$T/arch.py" circles "$T/circle" > "$T/circle.out"
rc=$?
[ $rc = 1 ] && grep -q 'include circle: capture/a.c -> capture/b.c -> capture/a.c' "$T/circle.out"
r=$?; [ $r = 0 ] && echo "ok 2 - the checker refuses two files that include each other's headers" \
  || { cat "$T/circle.out"; echo "not ok 2 - the checker refuses two files that include each other's headers (rc $rc)"; }

python3 "$T/arch.py" rooms "$ROOT"
[ $? = 0 ] && echo "ok 3 - sim/: every room includes only the rooms its row allows" \
  || echo "not ok 3 - sim/: every room includes only the rooms its row allows"
python3 "$T/arch.py" circles "$ROOT"
[ $? = 0 ] && echo "ok 4 - sim/ and capture/: no include circle between files" \
  || echo "not ok 4 - sim/ and capture/: no include circle between files"
python3 "$T/arch.py" calls "$BUILD"
rc=$?
case $rc in
  0) echo "ok 5 - $BUILD/sim: no call circle between the objects of a room" ;;
  2) echo "ok 5 # SKIP $BUILD/sim not built" ;;
  *) echo "not ok 5 - $BUILD/sim: no call circle between the objects of a room" ;;
esac
