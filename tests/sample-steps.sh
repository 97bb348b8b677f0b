#!/bin/bash
# sample-steps.sh — replay --sample-steps K against the full replay: on
# 1,000-step traces whose steps repeat (bench/repeat-steps.py on
# traces/hand-train-step.jsonl), plain, spilling and under uvm at 600 MiB,
# the extrapolated time is the full replay's within 1e-6 (measured: to
# the ns) after at most 10 steps; steps that vary (kernel times
# scattered by +-30 %) never settle: everything is replayed, the time is
# the full replay's and a warning says so; on the real Kineto trace with
# repeated ProfilerStep marks (memory-profile-v100, 4 steps, K = 2 at 5 %)
# within 1 %; on the binary form, the rest of the trace after the stop is
# skimmed (trace_skim: framed, not decoded): it counts the steps, events
# and captured time a full replay does, with string definitions and marks
# after the stop, and still refuses a cut file, a wrong end count and
# data after the end naming the file (as a full replay does), but not an
# allocation id error after the stop, which only a full replay refuses
# (docs/trace-format.md, "Skimming"). TAP.
set -u
VRAMSIM=${VRAMSIM:-bin/vramsim}
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/tests/data-lib.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0
ok () { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
echo 1..17
python3 "$here/bench/repeat-steps.py" "$here/traces/hand-train-step.jsonl" "$T/r.jsonl" 999 || exit 1
# report FILE KEY...: one value of a JSON report
val () { python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))
for k in sys.argv[2:]: r = r[k]
print(json.dumps(r))' "$@"; }
# compare FULL SAMPLED TOL MAXSTEPS STOL: the sampled time within TOL of
# the full one, steady at tolerance STOL after at most MAXSTEPS steps,
# every step counted
compare () {
  python3 - "$@" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
tol, most, stol = float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
pa, pb, s = a['time']['predicted_ns'], b['time']['predicted_ns'], b['sampled']
err = abs(pb - pa) / pa
steps = a['steady_state']['steps'] - 1
print('# full %d ns, sampled %d ns (%.2e), %s' % (pa, pb, err, s))
ok = err <= tol and s['steady'] and s['steps_replayed'] <= most and s['steps_total'] == steps \
     and s['extrapolated_ns'] > 0 and s['tolerance'] == stol
sys.exit(0 if ok else 1)
PY
}
for p in "plain:" "spill:--set memory.capacity=600MiB --set policy.oversubscription=spill" \
         "uvm:--set memory.capacity=600MiB --set policy.oversubscription=uvm"; do
  name=${p%%:*} args=${p#*:}
  # shellcheck disable=SC2086
  "$VRAMSIM" replay "$T/r.jsonl" -c a100-80g $args --format json -o "$T/full.json" \
    && "$VRAMSIM" replay "$T/r.jsonl" -c a100-80g $args --sample-steps 5 --format json -o "$T/s.json" \
    && compare "$T/full.json" "$T/s.json" 1e-6 10 0.01
  ok $? "1,000 repeated steps, $name: --sample-steps 5 within 1e-6 of the full replay"
done

"$VRAMSIM" replay "$T/r.jsonl" -c a100-80g --sample-steps 5 | grep -q "^  sampled  *6 of 999 steps replayed, 2.8 s of it extrapolated (tolerance 0.01)$"
ok $? "the text view says what was sampled"

# Steps that vary: kernel times scattered by +-30 % (seeded).
python3 - "$T/r.jsonl" "$T/v.jsonl" <<'PY'
import json, random, sys
random.seed(25)
with open(sys.argv[1]) as f, open(sys.argv[2], 'w') as g:
    for i, l in enumerate(f):
        e = json.loads(l)
        if i > 0 and e.get('op') == 'kernel':
            e['dur'] = int(e['dur'] * random.uniform(0.7, 1.3))
            e['compute_ns'] = int(e['compute_ns'] * random.uniform(0.7, 1.3))
        g.write(json.dumps(e) + '\n')
PY
"$VRAMSIM" replay "$T/v.jsonl" -c a100-80g --format json -o "$T/vf.json"
"$VRAMSIM" replay "$T/v.jsonl" -c a100-80g --sample-steps 5 --format json -o "$T/vs.json" 2> "$T/err"
[ "$(val "$T/vf.json" time predicted_ns)" = "$(val "$T/vs.json" time predicted_ns)" ] \
  && [ "$(val "$T/vs.json" sampled steady)" = false ] && [ "$(val "$T/vs.json" sampled steps_replayed)" = 999 ] \
  && [ "$(val "$T/vs.json" sampled extrapolated_ns)" = 0 ] && grep -q "never repeated within 0.01 for 5 steps: the whole trace was replayed" "$T/err"
ok $? "steps that vary: never steady, everything replayed (the full time), and said so"

# The real trace with repeated ProfilerStep marks.
k=$(data_file kineto/memory-profile-v100.json.gz) && "$VRAMSIM" convert "$k" "$T/m.vtrace" 2> /dev/null \
  && "$VRAMSIM" replay "$T/m.vtrace" -c a100-80g --format json -o "$T/mf.json" \
  && "$VRAMSIM" replay "$T/m.vtrace" -c a100-80g --sample-steps 2 --sample-tolerance 0.05 --format json -o "$T/ms.json" \
  && [ "$(val "$T/ms.json" sampled mark)" = '"ProfilerStep"' ] && compare "$T/mf.json" "$T/ms.json" 0.01 3 0.05
ok $? "memory-profile-v100 (ProfilerStep): --sample-steps 2 --sample-tolerance 0.05 within 1 % of the full replay"

# Without marks: everything, said so.
"$VRAMSIM" replay "$here/traces/overlap.jsonl" -c a100-80g --sample-steps 3 --format json -o "$T/o.json" 2> "$T/err"
[ "$(val "$T/o.json" sampled steady)" = false ] && grep -q "sample-steps 3" "$T/err"
ok $? "a trace without a repeated mark: replayed whole, said so"

# sweep and fit: the same option, the same answers on repeated steps.
sw=(sweep "$T/r.jsonl" -c a100-80g --vary memory.capacity=600MiB,1GiB --vary policy.oversubscription=spill,uvm -j 1)
"$VRAMSIM" "${sw[@]}" -o "$T/sw0.csv" && "$VRAMSIM" "${sw[@]}" --sample-steps 5 -o "$T/sw5.csv" \
  && [ "$(cut -d, -f1-6 "$T/sw0.csv")" = "$(cut -d, -f1-6 "$T/sw5.csv")" ] && [ "$(wc -l < "$T/sw5.csv")" = 5 ]
ok $? "sweep --sample-steps 5: every run's predicted time and slowdown the full sweep's"
V=$(realpath "$VRAMSIM")
mkdir "$T/j" && (cd "$T/j" && "$V" "${sw[@]}" --sample-steps 5 --sample-tolerance 0.02 --jobs-file jobs.txt 2> /dev/null) \
  && [ "$(grep -c -- '--sample-steps 5 --sample-tolerance 0.02 --format json' "$T/j/jobs.txt")" = 4 ]
ok $? "sweep --jobs-file: each command carries --sample-steps and --sample-tolerance"
"$VRAMSIM" fit "$T/r.jsonl" -c a100-80g,rtx3090 > "$T/f0.txt" && "$VRAMSIM" fit "$T/r.jsonl" -c a100-80g,rtx3090 --sample-steps 5 > "$T/f5.txt" \
  && cmp -s "$T/f0.txt" "$T/f5.txt"
ok $? "fit --sample-steps 5: the same table (times, bounds) as the full fit"

"$VRAMSIM" replay "$T/r.jsonl" -c a100-80g --sample-steps -1 2> "$T/err"
[ $? = 2 ] && grep -q "sample-steps: K must be 1 or more" "$T/err"
ok $? "--sample-steps -1: exit 2, named"

# The binary form, with marks of new names (string definitions) after
# the stop: the skim counts what the full replay does.
python3 - "$T/r.jsonl" "$T/late.jsonl" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
with open(sys.argv[2], 'w') as g:
    n = len(lines)
    for i, l in enumerate(lines):
        g.write(l + '\n')
        if i > n // 2 and i % 97 == 0:
            e = json.loads(l)
            # at the end of the call before (no gap changed: the time is the same)
            g.write(json.dumps({'t': e['t'] + e.get('host_ns', 0), 'op': 'mark', 'name': 'late_%d' % i,
                                'tid': e.get('tid', 0)}) + '\n')
PY
"$VRAMSIM" convert "$T/late.jsonl" "$T/late.vtrace" 2> /dev/null \
  && "$VRAMSIM" replay "$T/late.vtrace" -c a100-80g --format json -o "$T/lf.json" \
  && "$VRAMSIM" replay "$T/late.vtrace" -c a100-80g --sample-steps 5 --format json -o "$T/ls.json" \
  && compare "$T/lf.json" "$T/ls.json" 1e-6 10 0.01 \
  && [ "$(val "$T/lf.json" events)" = "$(val "$T/ls.json" events)" ] \
  && [ "$(val "$T/lf.json" time captured_ns)" = "$(val "$T/ls.json" time captured_ns)" ] \
  && [ "$(val "$T/ls.json" sampled steps_replayed)" -lt 10 ]
ok $? "binary, string definitions and marks after the stop: the skim counts the full replay's steps, events and captured time"

# bad FILE HOW: a copy of late.vtrace spoilt after the stop (cut, count,
# after, id), as version 3, whose rest the skim frames (a version 4
# file's rest is taken from its end record, after its checksum: below);
# its end record holds the full replay's event count.
bad () {
  python3 "$here/bench/to-v3.py" "$T/late.vtrace" "$T/late3.vtrace" || return 1
  python3 - "$T/late3.vtrace" "$1" "$2" "$(val "$T/lf.json" events)" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
out, how, count = sys.argv[2], sys.argv[3], int(sys.argv[4])
def uv(v):
    r = bytearray()
    while v >= 0x80:
        r.append((v & 0x7f) | 0x80); v >>= 7
    r.append(v)
    return r
end = lambda c: bytes([0xFE]) + uv(c) + b'VEND'
assert d.endswith(end(count))
body = d[:-len(end(count))]
if how == 'cut':
    d = body[:-3]
elif how == 'count':
    d = body + end(count + 1)
elif how == 'after':
    d = d + b'\n'
elif how == 'id':
    # a free of an id never allocated (op 1, dt 0, tid 0, host 0, id, no stream)
    d = body + bytes([1, 0, 0, 0]) + uv(123456789) + bytes([0]) + end(count + 1)
open(out, 'wb').write(d)
PY
}
for c in "cut:truncated: the file ends inside a record" "count:the end record counts" "after:data after the end record"; do
  how=${c%%:*} what=${c#*:}
  bad "$T/bad-$how.vtrace" "$how" \
    && { "$VRAMSIM" replay "$T/bad-$how.vtrace" -c a100-80g --format json -o "$T/bf.json" 2> "$T/ef"; [ $? = 1 ]; } \
    && { "$VRAMSIM" replay "$T/bad-$how.vtrace" -c a100-80g --sample-steps 5 --format json -o "$T/bs.json" 2> "$T/es"; [ $? = 1 ]; } \
    && grep -q "^vramsim: $T/bad-$how.vtrace: .*$what" "$T/es" && cmp -s "$T/ef" "$T/es"
  ok $? "binary, $how after the stop: --sample-steps exits 1 naming the file, with the full replay's message"
done
bad "$T/bad-id.vtrace" id \
  && { "$VRAMSIM" replay "$T/bad-id.vtrace" -c a100-80g --format json -o "$T/bf.json" 2> "$T/ef"; [ $? = 1 ]; } \
  && grep -q "^vramsim: $T/bad-id.vtrace: event [0-9]*: field 'id': allocation 123456789 is not live" "$T/ef" \
  && "$VRAMSIM" replay "$T/bad-id.vtrace" -c a100-80g --sample-steps 5 --format json -o "$T/bs.json" \
  && [ "$(val "$T/bs.json" sampled steps_total)" = "$(val "$T/ls.json" sampled steps_total)" ] \
  && [ "$(val "$T/bs.json" events)" = $(($(val "$T/ls.json" events) + 1)) ]
ok $? "binary, a free of an id never allocated after the stop: the full replay refuses it, --sample-steps (which holds no ids there) counts it"

# Version 4 (what convert wrote): one byte of a mark's name after the
# stop changed ("late_" to "Late_"). --sample-steps, which does not read
# the records, refuses it by the end record's checksum; a full replay,
# which reads them, by the end record's summary (its marks no longer the
# events'). Neither leaves a report.
python3 - "$T/late.vtrace" "$T/flip.vtrace" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
at = struct.unpack('<Q', d[-12:-4])[0]
i = d.rindex(b'late_', 0, at)   # the last mark name defined
d[i] = ord('L')
open(sys.argv[2], 'wb').write(d)
PY
"$VRAMSIM" replay "$T/flip.vtrace" -c a100-80g --format json -o "$T/xf.json" 2> "$T/ef"; xf=$?
"$VRAMSIM" replay "$T/flip.vtrace" -c a100-80g --sample-steps 5 --format json -o "$T/xs.json" 2> "$T/es"; xs=$?
[ $xs = 1 ] && grep -q "^vramsim: $T/flip.vtrace: the checksum of the records is [0-9a-f]* but the end record gives [0-9a-f]*: the file is corrupt, or was changed" "$T/es" \
  && [ $xf = 1 ] && grep -q "^vramsim: $T/flip.vtrace: event [0-9]*: the end record's summary gives 1 marks \"late_" "$T/ef" \
  && [ ! -e "$T/xs.json" ] && [ ! -e "$T/xf.json" ]
ok $? "binary version 4, a mark's name changed after the stop: --sample-steps refuses it by the checksum, the full replay by the summary (exit 1, no report)"
