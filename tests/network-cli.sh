#!/bin/bash
# network-cli.sh — the network from the command line: presets' network
# sections, zero bandwidth exiting 1 with the key named and no report
# written, --set network.ranks sizing a job, the report's network section,
# the generators' parallel options and their usage errors. Prints TAP.
VRAMSIM=${VRAMSIM:-bin/vramsim}
cd "$(dirname "$0")/.." || exit 1
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
ok () { n=$((n + 1)); echo "ok $n - $1"; }
not_ok () { n=$((n + 1)); echo "not ok $n - $1"; }
result () { if [ $? -eq 0 ]; then ok "$1"; else not_ok "$1"; fi; }
run () { "$@" >"$tmp/_stdout" 2>"$tmp/_stderr"; rc=$?; out=$(cat "$tmp/_stdout"); err=$(cat "$tmp/_stderr"); }
json () { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

run "$VRAMSIM" configs --show h100-sxm
[[ $rc -eq 0 && $out == *'"ranks_per_node":	8'* && $out == *'"bandwidth":	"450GB/s"'* ]]; result "h100-sxm shows its network (8 per node, NVLink4 450 GB/s)"

"$VRAMSIM" synth transformer-train --layers 4 --hidden 512 --heads 8 --seq 256 --batch 2 --dp 8 --tp 2 \
  -c a100-80g -o "$tmp/t.jsonl" >/dev/null 2>&1; result "synth with --dp 8 --tp 2"
grep -q '"collective": {"kind": "all_reduce"' "$tmp/t.jsonl"; result "the trace's collectives carry a collective field"

run "$VRAMSIM" replay "$tmp/t.jsonl" -c a100-80g --set network.inter.bandwidth=0 -o "$tmp/r.json" --format json
[[ $rc -eq 1 && $err == *"network.inter.bandwidth"* && $err == *"greater than 0"* && ! -e "$tmp/r.json" ]]
result "zero inter bandwidth: exit 1 naming the key, no report"

run "$VRAMSIM" replay "$tmp/t.jsonl" -c a100-80g --format json -o "$tmp/r8.json"
[[ $rc -eq 0 && $(json "$tmp/r8.json" "d['time']['slowdown'] < 1.01 and d['network']['ranks']") == 8 ]]
result "on its own preset: slowdown 1 (within the DP stream's contention), the job is the trace's 8"
[[ $(json "$tmp/r8.json" "d['network']['collectives'] > 0 and d['network']['exposed_ns'] <= d['network']['busy_ns']") == True ]]
result "network.exposed_ns <= busy_ns"

run "$VRAMSIM" replay "$tmp/t.jsonl" -c a100-80g --set network.ranks=64 --format json -o "$tmp/r64.json"
[[ $rc -eq 0 && $(json "$tmp/r64.json" "d['network']['ranks']") == 64 ]]; result "--set network.ranks=64 sizes the job"
[[ $(python3 -c "import json; a=json.load(open('$tmp/r8.json')); b=json.load(open('$tmp/r64.json')); print(b['network']['busy_ns'] > a['network']['busy_ns'])") == True ]]
result "64 ranks across nodes take longer than 8 in one"

run "$VRAMSIM" replay "$tmp/t.jsonl" -c a100-80g
[[ $rc -eq 0 && $out == *"network ("*"job of 8 ranks"* ]]; result "the text report has a network section"

# network.ranks in a sweep: the trace's largest group (8, its DP world;
# --tp 2 groups are 2) is found when the sweep loads the trace, not by
# reading the file again per run: a sweep of a FIFO (readable once) gives
# the rows of the file, which equal what replay (its own second pass) says.
"$VRAMSIM" sweep "$tmp/t.jsonl" -c a100-80g --vary network.ranks=1,16,64 -o "$tmp/file.csv"
mkfifo "$tmp/fifo.jsonl"
cat "$tmp/t.jsonl" > "$tmp/fifo.jsonl" &
timeout -k 5 60 "$VRAMSIM" sweep "$tmp/fifo.jsonl" -c a100-80g --vary network.ranks=1,16,64 -o "$tmp/fifo.csv"; rc=$?
wait
[[ $rc -eq 0 && $(cut -d, -f2- "$tmp/fifo.csv") == "$(cut -d, -f2- "$tmp/file.csv")" ]]
result "sweep --vary network.ranks of a FIFO: the file's rows (no second read of the trace)"
"$VRAMSIM" replay "$tmp/t.jsonl" -c a100-80g --set network.ranks=64 --format json -o "$tmp/r64b.json"
[[ $(sed -n 4p "$tmp/file.csv" | cut -d, -f4) == $(json "$tmp/r64b.json" "d['time']['predicted_ns']") ]]
result "its network.ranks=64 row's predicted_ns is replay's"

for bad in "--tp 3" "--sp" "--pp 9" "--experts 3 --dp 2" "--experts 4 --top-k 5"; do
  run "$VRAMSIM" synth transformer-train --layers 8 --hidden 512 --heads 8 $bad -o "$tmp/x.jsonl"
  [[ $rc -eq 2 && ! -e "$tmp/x.jsonl" ]]; result "synth transformer-train $bad: usage error, no trace"
done
echo "1..$n"
