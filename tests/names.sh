#!/usr/bin/env bash
# names.sh — misspelt and misplaced names get a message that says what was
# meant: "did you mean" for presets, config keys and options; a repeated
# single-valued option and `--set KEY VALUE` are usage errors; convert says
# which export or importer fits a file it refuses; an empty import is an
# error. TAP output.
set -u
VRAMSIM=${VRAMSIM:-bin/vramsim}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0
ok () { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails+1)); echo "# rc=$rc err: $err"; fi; }
run () { "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; out=$(cat "$tmp/out"); err=$(cat "$tmp/err"); }
has () { case "$1" in *"$2"*) return 0;; esac; return 1; }
T=$here/traces/hand-train-step.jsonl
echo "1..17"

run "$VRAMSIM" replay "$T" -c rtx-3090
[ $rc = 1 ] && has "$err" "unknown preset 'rtx-3090'; did you mean 'rtx3090'?"; ok $? "-c rtx-3090: did you mean 'rtx3090'"
run "$VRAMSIM" replay "$T" -c RTX3090
[ $rc = 1 ] && has "$err" "did you mean 'rtx3090'?"; ok $? "-c RTX3090: did you mean 'rtx3090'"
run "$VRAMSIM" fit "$T" -c a100
[ $rc = 1 ] && has "$err" "did you mean 'a100-40g', 'a100-80g' or 'a100-80g-cxl'?"; ok $? "-c a100: the three A100 presets"
run "$VRAMSIM" replay "$T" --set memory.bandwith=1TB/s
[ $rc = 1 ] && has "$err" "did you mean 'memory.bandwidth'?"; ok $? "--set memory.bandwith: did you mean 'memory.bandwidth'"
run "$VRAMSIM" replay "$T" --confg a100-80g
[ $rc = 2 ] && has "$err" "unknown option --confg; did you mean '--config'?"; ok $? "--confg: did you mean '--config' (exit 2)"
run "$VRAMSIM" sweep "$T" -c a100-80g --vray memory.capacity=1GiB
[ $rc = 2 ] && has "$err" "did you mean '--vary'?"; ok $? "sweep --vray: did you mean '--vary'"

run "$VRAMSIM" replay "$T" -c a100-80g -c rtx3090
[ $rc = 2 ] && has "$err" "-c/--config given twice"; ok $? "a repeated -c is a usage error, not the last one silently"
run "$VRAMSIM" replay "$T" --format json --format=text
[ $rc = 2 ] && has "$err" "--format given twice"; ok $? "a repeated --format (either spelling) is a usage error"
run "$VRAMSIM" sweep "$T" -c a100-80g -c rtx3090 -j 1
[ $rc = 0 ]; ok $? "sweep's -c may repeat (its configs add up)"
run "$VRAMSIM" replay "$T" --set memory.capacity 24GiB
[ $rc = 2 ] && has "$err" "--set takes KEY=VALUE as one argument: --set memory.capacity=24GiB"; ok $? "--set KEY VALUE: says to write KEY=VALUE"

printf 'not a trace' > "$tmp/run.nsys-rep"
run "$VRAMSIM" convert "$tmp/run.nsys-rep" "$tmp/o.jsonl"
[ $rc = 1 ] && has "$err" "nsys export --type sqlite"; ok $? "convert .nsys-rep points to nsys export --type sqlite"
# A whole pickle (protocol 4: the int 5) that is not a snapshot: the
# snapshot importer (sim/import/import-snapshot.c) reads pickles now and
# says what this one lacks.
printf '\x80\x04K\x05.' > "$tmp/x.pickle"
run "$VRAMSIM" convert "$tmp/x.pickle" "$tmp/o.jsonl"
[ $rc = 1 ] && has "$err" "not a PyTorch memory snapshot"; ok $? "convert of a pickle that is no snapshot says so"
[ ! -e "$tmp/o.jsonl" ]; ok $? "no output file is left"

echo '{"traceEvents": [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}}]}' > "$tmp/empty.json"
run "$VRAMSIM" convert "$tmp/empty.json" "$tmp/e.jsonl"
[ $rc = 1 ] && has "$err" "0 events imported"; ok $? "an empty Kineto import says 0 events and exits 1"
[ ! -e "$tmp/e.jsonl" ]; ok $? "and writes no trace"

run "$VRAMSIM" sweep --help
has "$out" "jobs.txt -> jobs-reports/"; ok $? "sweep --help says where reports go (jobs.txt -> jobs-reports/)"
"$VRAMSIM" sweep "$T" -c a100-80g --vary memory.capacity=1GiB --jobs-file "$tmp/jobs.txt" >/dev/null 2>&1
grep -q "$tmp/jobs-reports/" "$tmp/jobs.txt"; ok $? "and that is where the commands write them"
exit $(( fails > 0 ))
