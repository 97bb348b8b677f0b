#!/bin/bash
# diff-check.sh — byte-identical check of two vramsim binaries (a change
# that must not move any output: docs/performance.md, "Differential
# check"). Replays one comparison set with both and compares every JSON
# report, text report, stderr, exit status, --series CSV and --timeline
# file byte for byte.
#
#   bench/diff-check.sh OLD_VRAMSIM [NEW_VRAMSIM] [GEN_TRACE]
#
# OLD_VRAMSIM: the binary of the commit before the change (e.g. built in
# `git worktree add /tmp/base HEAD~1`). NEW defaults to bin/vramsim,
# GEN_TRACE to build/bench/gen-trace (make build/bench/gen-trace).
# Traces are made once under $DIFF_DIR (default build/diff); outputs go
# to $DIFF_DIR/old and $DIFF_DIR/new. Prints the number of outputs
# compared and each that differs; exit 0 when all are identical.
#
# The set: gen-trace's 100k-event plain, stress (--streams 4), uvm, spill
# and --streams 7 --live 500 traces, as .vtrace and JSONL; 24 random
# traces (bench/rand-trace.py: every op, ids reused, device/managed/
# pinned) as JSONL and binary, each under oom, oom --keep-going, spill,
# uvm and direct at 24 GiB and at 80 GiB, with gpu.legacy_default_stream,
# and on a100-80g-cxl with a 5 us launch latency; the repository's
# traces/*.jsonl on two configs; and a config whose name needs escaping.
#
# Also the repository's real traces (validation/data/kineto/*.json.gz,
# converted once), each on a100-80g with --series and --timeline, and
# 20k-event traces of 16 and 64 contending streams (processor sharing).
#
# EXPECT="FILE..." names outputs expected to differ (reported, not
# counted): against commits before r12-engine, quoted.timeline.json,
# whose config name the old timeline wrote unescaped (invalid JSON).
# TOL=1e-9: outputs that differ byte for byte are compared again by
# bench/num-diff.py (numbers within TOL relative, or a last printed
# digit; all else the same) and count as differing only beyond that;
# the largest relative difference is printed.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
OLD=$(realpath "${1:?usage: diff-check.sh OLD_VRAMSIM [NEW_VRAMSIM] [GEN_TRACE]}")
NEW=$(realpath "${2:-$here/bin/vramsim}")
GEN=${3:-$here/build/bench/gen-trace}
D=${DIFF_DIR:-$here/build/diff}
N_RAND=${N_RAND:-24}
export VRAMSIM_CONFIGS=$here/configs
mkdir -p "$D/traces"
T=$D/traces
# Copies: a rebuild while this runs must not change what is compared.
cp "$OLD" "$D/vramsim.old" && cp "$NEW" "$D/vramsim.new" || exit 1
OLD=$D/vramsim.old NEW=$D/vramsim.new

# Traces (made once; the random ones from their seed).
for spec in "plain:" "stress:--streams 4" "uvm:--mode uvm" "spill:--mode spill" "live:--streams 7 --live 500"; do
  name=${spec%%:*} args=${spec#*:}
  [ -s "$T/$name.vtrace" ] || "$GEN" -n 100000 $args -o "$T/$name.vtrace" > /dev/null || exit 1
  [ -s "$T/$name.jsonl" ] || "$NEW" convert "$T/$name.vtrace" "$T/$name.jsonl" || exit 1
done
for s in 16 64; do
  [ -s "$T/streams$s.vtrace" ] || "$GEN" -n 20000 --streams $s -o "$T/streams$s.vtrace" > /dev/null || exit 1
done
for f in "$here"/validation/data/kineto/*.json.gz; do
  b=$(basename "$f" .json.gz)
  [ -s "$T/real-$b.vtrace" ] || "$NEW" convert "$f" "$T/real-$b.vtrace" 2> /dev/null || exit 1
done
for i in $(seq 1 "$N_RAND"); do
  [ -s "$T/rand$i.jsonl" ] || python3 "$here/bench/rand-trace.py" "$i" "$T/rand$i.jsonl" || exit 1
  [ -s "$T/rand$i.vtrace" ] || "$NEW" convert "$T/rand$i.jsonl" "$T/rand$i.vtrace" || exit 1
done
cat > "$T/quoted.json" <<'JSON'
{"extends": "a100-80g", "name": "my \"x\" card\\ \t", "description": "a name JSON must escape"}
JSON

# The runs: one line each, "ID|ARGS..." (ARGS split on spaces; the trace
# first). Series and timeline are written where named.
runs=$D/runs.txt
: > "$runs"
add () { echo "$*" >> "$runs"; }
for f in plain stress uvm spill live; do
  for x in vtrace jsonl; do
    pol=; [ $f = spill ] && pol="--set policy.oversubscription=spill"
    add "big-$f-$x|$T/$f.$x -c a100-80g $pol --format json --series @S --timeline @T"
  done
done
for i in $(seq 1 "$N_RAND"); do
  for x in jsonl vtrace; do
    st=; [ "$i" -le 6 ] && st="--series @S --timeline @T"
    for cap in 24GiB 80GiB; do
      for p in oom oom-kg spill uvm direct; do
        case $p in oom-kg) a="--set policy.oversubscription=oom --keep-going" ;; *) a="--set policy.oversubscription=$p" ;; esac
        add "r$i-$x-$cap-$p|$T/rand$i.$x -c a100-80g --set memory.capacity=$cap $a --format json $st"
      done
    done
    add "r$i-$x-legacy|$T/rand$i.$x -c a100-80g --set memory.capacity=24GiB --set gpu.legacy_default_stream=true --keep-going --format json $st"
    add "r$i-$x-cxl|$T/rand$i.$x -c a100-80g-cxl --set gpu.launch_latency=5us --set memory.capacity=24GiB --set policy.oversubscription=spill --format json $st"
  done
done
for f in "$here"/traces/*.jsonl; do
  b=$(basename "$f" .jsonl)
  for c in a100-80g rtx3090; do
    add "repo-$b-$c|$f -c $c --format json --series @S --timeline @T"
    add "repo-$b-$c-text|$f -c $c"
  done
done
for s in 16 64; do
  add "streams$s|$T/streams$s.vtrace -c a100-80g --format json --series @S --timeline @T"
  add "streams$s-text|$T/streams$s.vtrace -c a100-80g"
done
for f in "$T"/real-*.vtrace; do
  b=$(basename "$f" .vtrace)
  add "$b|$f -c a100-80g --format json --series @S --timeline @T"
  add "$b-spill|$f -c a100-80g --set memory.capacity=8GiB --set policy.oversubscription=spill --format json"
done
add "quoted|$here/traces/hand-train-step.jsonl -c $T/quoted.json --format json --timeline @T"

run_all () {   # run_all BINARY OUTDIR
  local bin=$1 o=$2 id args
  rm -rf "$o"; mkdir -p "$o"
  while IFS='|' read -r id args; do
    args=${args//@S/$o/$id.series.csv}
    args=${args//@T/$o/$id.timeline.json}
    # shellcheck disable=SC2086
    "$bin" replay $args > "$o/$id.out" 2> "$o/$id.err"
    echo "$?" > "$o/$id.rc"
  done < "$runs"
}
run_all "$OLD" "$D/old" &
run_all "$NEW" "$D/new"
wait
# tol_ok NAME: with TOL set, whether output NAME is the same within TOL
# (noted in tol.txt: "NAME: within, largest relative difference R ...").
tol_ok () {
  [ -n "${TOL:-}" ] && [ -f "$D/new/$1" ] || return 1
  sed "s#$D/old#DIR#g" "$D/old/$1" > "$D/tol-a"
  sed "s#$D/new#DIR#g" "$D/new/$1" > "$D/tol-b"
  local out
  out=$(python3 "$here/bench/num-diff.py" "$D/tol-a" "$D/tol-b" "$TOL") || { echo "$1: $out" | sed 's#[^ ]*tol-b: ##'; return 1; }
  echo "$1: ${out#*tol-b: }" >> "$D/tol.txt"
}
# Paths inside outputs name their run's folder: make them the same.
n=0 bad=0
: > "$D/tol.txt"
for f in "$D"/old/*; do
  b=$(basename "$f")
  n=$((n + 1))
  if ! cmp -s <(sed "s#$D/old#DIR#g" "$f") <(sed "s#$D/new#DIR#g" "$D/new/$b" 2>/dev/null) && ! tol_ok "$b"; then
    case " ${EXPECT:-} " in
      *" $b "*) echo "differs, as expected: $b" ;;
      *) echo "differs: $b"; bad=$((bad + 1)) ;;
    esac
  fi
done
[ "$(ls "$D/new" | wc -l)" = "$n" ] || { echo "the new binary wrote $(ls "$D/new" | wc -l) files, the old $n"; bad=$((bad + 1)); }
if [ -s "$D/tol.txt" ]; then
  echo "diff-check: $(wc -l < "$D/tol.txt") outputs differ within TOL=$TOL, the largest:"
  awk '{ for (i = 1; i < NF; i++) if ($i == "difference") print $(i + 1), $0 }' "$D/tol.txt" | sort -g | tail -n 3 | cut -d' ' -f2-
fi
echo "diff-check: $n outputs compared, $bad differ ($(wc -l < "$runs") runs)"
[ "$bad" = 0 ]
