#!/usr/bin/env bash
# python.sh — the Python API (python/vramsim) under Debian's python3:
# replay() equal to the CLI's JSON, sweep() and fit() equal to the CLI's
# tables, errors as VramsimError, the README's sweep-and-plot script, and
# the package `make install` installs. TAP output.
set -u
VRAMSIM=${VRAMSIM:-bin/vramsim}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0
ok () { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails+1)); fi; }
skip () { n=$((n+1)); echo "ok $n # skip $1"; }
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
export VRAMSIM PYTHONPATH=$here/python PYTHONDONTWRITEBYTECODE=1
T=$here/traces/hand-train-step.jsonl
echo "1..10"

"$VRAMSIM" replay "$T" -c rtx3090 --set memory.capacity=16GiB --format json > "$tmp/cli.json"
"$PY" - "$T" "$tmp/cli.json" <<'PY'
import json, sys, vramsim
cli = json.load(open(sys.argv[2]))
py = vramsim.replay(sys.argv[1], "rtx3090", set={"memory.capacity": "16GiB"})
assert py == cli, [k for k in cli if py.get(k) != cli[k]]
assert py["sets"] == {"memory.capacity": "16GiB"}
PY
ok $? "replay() equals the CLI's JSON report (rtx3090, --set memory.capacity=16GiB)"

"$VRAMSIM" replay "$T" --format json > "$tmp/cli0.json"
"$PY" -c "
import json, sys, vramsim
assert vramsim.replay('$T') == json.load(open('$tmp/cli0.json'))"
ok $? "replay() without a config is the capture config's report"

"$PY" -c "
import vramsim
r = vramsim.replay('$T', 'a100-80g', set={'memory.capacity': '512MiB'})
assert r['status'] == 'oom' and r['oom']['capacity'] == 512 * 2**20, r.get('oom')"
ok $? "a predicted out-of-memory is a result, not an exception"

"$PY" -c "
import vramsim
try:
    vramsim.replay('$T', 'no-such-gpu')
except vramsim.VramsimError as e:
    assert e.returncode == 1 and 'no-such-gpu' in str(e), (e.returncode, str(e))
else:
    raise SystemExit('no error')"
ok $? "an unknown preset raises VramsimError(returncode 1) with the CLI's message"

"$VRAMSIM" sweep "$T" -c a100-80g,rtx3090 --vary memory.capacity=512MiB,1GiB --vary policy.oversubscription=oom,spill -j 1 > "$tmp/cli.csv"
"$PY" - "$T" "$tmp/cli.csv" <<'PY'
import csv, sys, vramsim
cli = list(csv.DictReader(open(sys.argv[2])))
py = vramsim.sweep(sys.argv[1], ["a100-80g", "rtx3090"],
                   vary={"memory.capacity": ["512MiB", "1GiB"], "policy.oversubscription": "oom,spill"}, jobs=1)
assert len(py) == len(cli) == 8, len(py)
for a, b in zip(py, cli):
    assert list(a) == list(b)
    assert all(str(a[k]) == b[k] or a[k] == float(b[k]) for k in b), (a, b)
# An oom row has no time (the sweep leaves it empty, as the CSV does); an ok row's are typed.
ok = next(r for r in py if r["status"] == "ok")
assert isinstance(ok["predicted_ns"], int) and isinstance(ok["slowdown"], float), ok
PY
ok $? "sweep() rows equal the CLI's CSV, numbers typed"
# metric="step": the step column of sweep --metric step (train-step: 3 steps;
# the GPU bounds them: its step, 2,816,120 ns, the report's step_median_ns).
"$PY" - "$T" <<'PY'
import sys, vramsim
rows = vramsim.sweep(sys.argv[1], "a100-80g", vary={"memory.capacity": "2GiB,4GiB"}, metric="step")
assert [r["step_median_ns"] for r in rows] == [2816120, 2816120], rows
PY
ok $? "sweep(metric=\"step\") gives step_median_ns"

"$VRAMSIM" fit "$T" -c a100-80g,rtx3090,h200 --format json > "$tmp/fit.json"
"$PY" -c "
import json, vramsim
assert vramsim.fit('$T', 'a100-80g,rtx3090,h200') == json.load(open('$tmp/fit.json'))['rows']
assert [r['config'] for r in vramsim.fit('$T', ['rtx3090', 'a100-80g'])] == ['a100-80g', 'rtx3090']"
ok $? "fit() rows equal the CLI's fit JSON"

# The README's five-line sweep-and-plot script, as the README prints it.
awk '/^```python$/ { on = 1; next } on && /^```$/ { exit } on' "$here/README.md" > "$tmp/example.py"
[ "$(wc -l < "$tmp/example.py")" -eq 5 ]; ok $? "the README's Python example is five lines"
if "$PY" -c "import matplotlib" 2>/dev/null; then
  ln -s "$here/traces" "$tmp/traces"
  (cd "$tmp" && MPLBACKEND=Agg "$PY" example.py) && [ -s "$tmp/sweep-py.png" ]
  ok $? "the README's sweep-and-plot script runs and writes its PNG"
else
  skip "python3-matplotlib is not installed"
fi

# make install puts the package where Debian's python3 finds it, and it
# runs the installed vramsim without VRAMSIM set.
case "$VRAMSIM" in
  */build/asan/*) skip "install is tested in the plain build" ;;
  *)
    make -s -C "$here" install PREFIX="$tmp/inst" >"$tmp/log" 2>&1
    site=$(ls -d "$tmp"/inst/lib/python3*/dist-packages)
    (cd "$tmp" && env -u VRAMSIM PYTHONPATH="$site" PATH=/usr/bin:/bin "$PY" -c "
import vramsim
assert vramsim.command() == '$tmp/inst/bin/vramsim', vramsim.command()
assert vramsim.replay('$T', 'rtx3090')['status'] == 'ok'")
    ok $? "the installed package runs the installed vramsim" ;;
esac
exit $(( fails > 0 ))
