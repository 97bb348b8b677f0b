#!/bin/bash
# sample-steps.sh — replay --sample-steps K against the full replay: on
# 1,000-step traces whose steps repeat (bench/repeat-steps.py on
# traces/hand-train-step.jsonl), plain, spilling and under uvm at 600 MiB,
# the extrapolated time is the full replay's within 1e-6 (measured: to
# the ns) after at most 10 steps; steps that vary (kernel times
# scattered by +-30 %) never settle: everything is replayed, the time is
# the full replay's and a warning says so; on the real Kineto trace with
# repeated ProfilerStep marks (memory-profile-v100, 4 steps, K = 2 at 5 %)
# within 1 %. TAP.
set -u
VRAMSIM=${VRAMSIM:-bin/vramsim}
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/tests/data-lib.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0
ok () { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
echo 1..11
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
