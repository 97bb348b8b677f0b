#!/usr/bin/env bash
# python.sh — the Python package (python/), installed offline into a venv
# (`pip install --no-build-isolation --no-index`) and tested there, never
# the source tree's copy: replay() and plan() equal to the CLI's JSON,
# sweep() and fit() equal to the CLI's tables with numbers as numbers (sizes in bytes,
# times in ns, empty cells None), numbers given to set= and vary= in those
# units, every failure a VramsimError with the message, __version__ the
# C binary's, py.typed and type hints, the README's sweep-and-plot script,
# and the package `make install` installs. TAP output.
set -u
VRAMSIM=${VRAMSIM:-bin/vramsim}
here=$(cd "$(dirname "$0")/.." && pwd)
case "$VRAMSIM" in /*) ;; *) VRAMSIM=$here/$VRAMSIM ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0
ok () { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails+1)); fi; }
skip () { n=$((n+1)); echo "ok $n # skip $1"; }
SYS=/usr/bin/python3
[ -x "$SYS" ] || SYS=python3
T=$here/traces/hand-train-step.jsonl
echo "1..20"

# The venv sees the system's setuptools and wheel (the build needs them;
# nothing is downloaded) and the system's pip; the package goes into the
# venv, built from a copy so the source tree gets no build/ or egg-info.
cp -r "$here/python" "$tmp/src" && rm -rf "$tmp/src/build" "$tmp/src"/*.egg-info
"$SYS" -m venv --system-site-packages --without-pip "$tmp/venv" \
  && "$tmp/venv/bin/python" -m pip install -q --no-build-isolation --no-index --no-deps "$tmp/src" > "$tmp/pip.log" 2>&1
ok $? "pip install --no-build-isolation --no-index ./python into a venv, offline"
[ $n -eq 1 ] && [ $fails -eq 1 ] && sed 's/^/# /' "$tmp/pip.log"
PY=$tmp/venv/bin/python
export VRAMSIM PYTHONDONTWRITEBYTECODE=1
unset PYTHONPATH
cd "$tmp" || exit 1
"$PY" -c "
import os, vramsim
assert vramsim.__file__.startswith('$tmp/venv/'), vramsim.__file__
assert os.path.exists(os.path.join(os.path.dirname(vramsim.__file__), 'py.typed'))"
ok $? "the venv's vramsim is the installed one (not the source tree's), with py.typed"

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

# Numbers as numbers: 512MiB = 536,870,912 B, 1GiB = 1,073,741,824 B; an
# oom row's times are empty cells, None; the other cells as the CSV's.
"$VRAMSIM" sweep "$T" -c a100-80g,rtx3090 --vary memory.capacity=512MiB,1GiB --vary policy.oversubscription=oom,spill -j 1 > "$tmp/cli.csv"
"$PY" - "$T" "$tmp/cli.csv" <<'PY'
import csv, sys, vramsim
cli = list(csv.DictReader(open(sys.argv[2])))
py = vramsim.sweep(sys.argv[1], ["a100-80g", "rtx3090"],
                   vary={"memory.capacity": ["512MiB", "1GiB"], "policy.oversubscription": "oom,spill"}, jobs=1)
assert len(py) == len(cli) == 8, len(py)
assert [r["memory.capacity"] for r in py] == [536870912, 536870912, 1073741824, 1073741824] * 2, py
for a, b in zip(py, cli):
    assert list(a) == list(b)
    for k in b:
        if k == "memory.capacity":
            continue
        if b[k] == "":
            assert a[k] is None, (k, a[k])
        elif k in ("config", "policy.oversubscription", "status", "error"):
            assert a[k] == b[k], (k, a[k], b[k])
        elif k == "lower_bound":
            assert a[k] is (b[k] == "yes"), (k, a[k], b[k])
        else:
            assert type(a[k]) in (int, float) and a[k] == float(b[k]), (k, a[k], b[k])
oom = next(r for r in py if r["status"] == "oom")
assert oom["predicted_ns"] is None and oom["slowdown"] is None and oom["error"] is None, oom
ok = next(r for r in py if r["status"] == "ok")
assert isinstance(ok["predicted_ns"], int) and isinstance(ok["slowdown"], float), ok
PY
ok $? "sweep() rows are the CLI's CSV: capacities in bytes (int), empty cells None, numbers typed"

# Numbers given: a size in bytes, a time in ns, the same runs as the CLI's
# strings (16 << 30 = 16GiB; 2000 ns = 2us).
"$VRAMSIM" replay "$T" -c rtx3090 --set memory.capacity=16GiB --format json > "$tmp/s16.json"
"$VRAMSIM" sweep "$T" -c a100-80g --vary gpu.launch_latency=0ns,2us --vary memory.capacity=2GiB,4GiB -j 1 > "$tmp/lat.csv"
"$PY" - "$T" "$tmp/s16.json" "$tmp/lat.csv" <<'PY'
import csv, json, sys, vramsim
cli = json.load(open(sys.argv[2]))
py = vramsim.replay(sys.argv[1], "rtx3090", set={"memory.capacity": 16 << 30})
assert py["sets"] == {"memory.capacity": "17179869184B"}, py["sets"]
cli.pop("sets"); py.pop("sets")
assert py == cli, [k for k in cli if py.get(k) != cli[k]]
rows = vramsim.sweep(sys.argv[1], "a100-80g", vary={"gpu.launch_latency": [0, 2000], "memory.capacity": [2 << 30, 4 << 30]}, jobs=1)
want = list(csv.DictReader(open(sys.argv[3])))
assert [r["gpu.launch_latency"] for r in rows] == [0, 0, 2000, 2000], rows
assert [r["predicted_ns"] for r in rows] == [int(w["predicted_ns"]) for w in want], (rows, want)
assert rows[0]["predicted_ns"] < rows[2]["predicted_ns"], "a 2 us launch latency costs time"
PY
ok $? "set= and vary= take numbers: sizes as bytes (16 << 30), times as ns (2000), the CLI's runs"

# metric="step": the step column of sweep --metric step (train-step: 3 steps;
# the GPU bounds them: its step, 2,816,120 ns, the report's step_median_ns).
"$PY" - "$T" <<'PY'
import sys, vramsim
rows = vramsim.sweep(sys.argv[1], "a100-80g", vary={"memory.capacity": "2GiB,4GiB"}, metric="step")
assert [r["step_median_ns"] for r in rows] == [2816120, 2816120], rows
assert [r["memory.capacity"] for r in rows] == [2 << 30, 4 << 30], rows
PY
ok $? "sweep(metric=\"step\") gives step_median_ns"

"$VRAMSIM" fit "$T" -c a100-80g,rtx3090,h200 --format json > "$tmp/fit.json"
"$PY" -c "
import json, vramsim
assert vramsim.fit('$T', 'a100-80g,rtx3090,h200') == json.load(open('$tmp/fit.json'))['rows']
assert [r['config'] for r in vramsim.fit('$T', ['rtx3090', 'a100-80g'])] == ['a100-80g', 'rtx3090']"
ok $? "fit() rows equal the CLI's fit JSON"

"$VRAMSIM" plan --layers 2 --hidden 1024 --heads 16 --kv-heads 4 --ffn 2816 --gated --vocab 32000 --seq 512 \
  --global-batch 4 -c a100-80g --gpus 1,2 --zero 0,1 -j 2 --format json > "$tmp/plan.json"
"$PY" -c "
import json, vramsim
py = vramsim.plan(configs='a100-80g', gpus=[1, 2], global_batch=4, layers=2, hidden=1024, heads=16, kv_heads=4,
                  ffn=2816, gated=True, vocab=32000, seq=512, zero=[0, 1], jobs=2)
assert py == json.load(open('$tmp/plan.json')), 'differs'
assert py['params'] == 55312384"
ok $? "plan() equals the CLI's plan JSON (keywords for the shape, lists for the search)"
"$VRAMSIM" plan --layers 2 --hidden 1024 --heads 16 --kv-lora-rank 256 --q-lora-rank 384 --qk-rope-head-dim 32 \
  --head-dim 64 --v-head-dim 48 --ffn 512 --gated --experts 4 --dense-layers 1 --dense-ffn 2816 --vocab 32000 \
  --seq 512 --global-batch 4 -c a100-80g --gpus 1 -j 2 --flash-attn --format json > "$tmp/plan-mla.json" 2>/dev/null
"$PY" -c "
import json, vramsim
py = vramsim.plan(configs='a100-80g', gpus=1, global_batch=4, layers=2, hidden=1024, heads=16, kv_lora_rank=256,
                  q_lora_rank=384, qk_rope_head_dim=32, head_dim=64, v_head_dim=48, ffn=512, gated=True, experts=4,
                  dense_layers=1, dense_ffn=2816, vocab=32000, seq=512, jobs=2, flash_attn=True)
assert py == json.load(open('$tmp/plan-mla.json')), 'differs'
# attention 2523136 a layer; layer 0 dense (3 x 1024 x 2816), layer 1 4 experts of 3 x 1024 x 512 and the router
assert py['params'] == 2 * 2523136 + 3 * 1024 * 2816 + 4 * 3 * 1024 * 512 + 4096 + 32000 * 1024, py['params']"
ok $? "plan() with latent attention, a dense first layer and fused attention (their keywords) equals the CLI's JSON"
"$VRAMSIM" plan --layers 3 --hidden 1024 --heads 16 --vocab 1000 --seq 256 --global-batch 4 -c a100-80g --gpus 2 \
  --zero 0 --sp off --checkpoint none -j 2 --format json > "$tmp/plan-split.json" 2>/dev/null
"$PY" -c "
import json, vramsim
kw = dict(configs='a100-80g', gpus=2, global_batch=4, layers=3, hidden=1024, heads=16, vocab=1000, seq=256, zero=0,
          sp='off', checkpoint='none', jobs=2)
py = vramsim.plan(**kw)
assert py == json.load(open('$tmp/plan-split.json')), 'differs'
split = [l for l in py['layouts'] if l['pp'] == 2]
assert split and all(l['stage_layers'] == {'first': 2, 'last': 1} for l in split), split
even = vramsim.plan(even_stages=True, **kw)
assert even['layouts'] and all(l['pp'] == 1 for l in even['layouts']), even"
ok $? "plan(): 3 layers on 2 stages split 2/1; even_stages=True searches only one stage"
"$PY" -c "
import vramsim
try:
    vramsim.plan(configs='a100-80g', gpus=1, global_batch=4, layers=2, hidden=1024, heads=16, hiden=3)
except vramsim.VramsimError as e:
    assert \"unknown keyword 'hiden'\" in str(e), str(e)
else:
    raise SystemExit('no error')
try:
    vramsim.plan(configs='a100-80g', gpus=1, global_batch=4, layers=2, hidden=1000, heads=16)
except vramsim.VramsimError as e:
    assert 'multiple of --heads' in str(e), str(e)
else:
    raise SystemExit('no error')"
ok $? "plan(): an unknown keyword and a bad shape are VramsimErrors with the message"

# Every failure is a VramsimError with the message: a trace named like an
# option is a file (./--help), never `vramsim replay --help`; malformed
# set/vary items, jobs, a missing pandas are refused before anything runs.
"$PY" - "$T" <<'PY'
import sys, vramsim
def refused(f, code, *words):
    try:
        f()
    except vramsim.VramsimError as e:
        assert e.returncode == code and all(w in str(e) for w in words), (e.returncode, str(e), words)
    else:
        raise SystemExit("no error: %r" % (words,))
T = sys.argv[1]
refused(lambda: vramsim.replay("--help"), 1, "./--help")
refused(lambda: vramsim.replay("-"), 2, "give a file")
refused(lambda: vramsim.replay(T, set=["memory.capacity"]), 2, "set item 'memory.capacity'", "key=value")
refused(lambda: vramsim.replay(T, set="memory.capacity=1GiB"), 2, "set=")
refused(lambda: vramsim.replay(T, set={"": "1GiB"}), 2, "set key ''")
refused(lambda: vramsim.replay(T, set={"memory.capacity": [1]}), 2, "memory.capacity")
refused(lambda: vramsim.replay(T, set={"memory.capacity": "24"}), 1, "a size needs a unit")
refused(lambda: vramsim.sweep(T, "a100-80g", vary={"memory.capacity": 5}), 2, "vary memory.capacity")
refused(lambda: vramsim.sweep(T, "a100-80g", jobs="2"), 2, "jobs=")
refused(lambda: vramsim.sweep(T, []), 2, "configs")
refused(lambda: vramsim.replay(T, 42), 2, "not a path")
try:
    import pandas
except ImportError:
    refused(lambda: vramsim.fit(T, "a100-80g", frame=True), 2, "frame=True needs pandas", "pip install pandas")
else:
    assert len(vramsim.fit(T, "a100-80g", frame=True)) == 1
PY
ok $? "failures are VramsimError with the message: ./--help, '-', bad set items, vary, jobs, configs, frame=True without pandas"

"$PY" - "$VRAMSIM" <<'PY'
import importlib.metadata, subprocess, sys, typing, vramsim
v = subprocess.run([sys.argv[1], "--version"], capture_output=True, text=True).stdout.split()
assert v == ["vramsim", vramsim.__version__], (v, vramsim.__version__)
assert importlib.metadata.version("vramsim") == vramsim.__version__
hints = typing.get_type_hints(vramsim.sweep)
assert "trace" in hints and "return" in hints and "configs" in hints, hints
PY
ok $? "__version__ is the C binary's --version and the installed distribution's; the API carries type hints"
grep -q "^__version__ = \"$("$VRAMSIM" --version | cut -d' ' -f2)\"$" "$here/python/vramsim/_version.py" \
  && ! grep -q '^VERSION *:\?= *[0-9]' "$here/Makefile" && ! grep -q '^version *= *"' "$here/python/pyproject.toml"
ok $? "one source of the version: python/vramsim/_version.py (the Makefile reads it, writes none of its own)"

# The README's five-line sweep-and-plot script, as the README prints it.
awk '/^```python$/ { on = 1; next } on && /^```$/ { exit } on' "$here/README.md" > "$tmp/example.py"
[ "$(wc -l < "$tmp/example.py")" -eq 5 ]; ok $? "the README's Python example is five lines"
if "$PY" -c "import matplotlib" 2>/dev/null; then
  ln -s "$here/traces" "$tmp/traces"
  (cd "$tmp" && MPLBACKEND=Agg "$PY" example.py) && [ -s "$tmp/sweep-py.png" ]
  ok $? "the README's sweep-and-plot script runs on the installed package and writes its PNG"
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
    (cd "$tmp" && env -u VRAMSIM PYTHONPATH="$site" PATH=/usr/bin:/bin "$SYS" -c "
import vramsim
assert vramsim.command() == '$tmp/inst/bin/vramsim', vramsim.command()
assert vramsim.__file__.startswith('$site')
assert vramsim.replay('$T', 'rtx3090')['status'] == 'ok'")
    ok $? "make install's package runs the installed vramsim" ;;
esac
exit $(( fails > 0 ))
