#!/bin/bash
# ab.sh — CPU time of two vramsim binaries side by side on make bench's
# replay workloads (plain 1M and 10M, stress 1M, uvm 1M, spill 1M; traces
# as bench/run-bench.sh makes them, in $BENCH_DIR): the two run
# alternately, RUNS times each (default 5), and the least CPU time
# (user + sys) of each counts. On a shared machine, use it beside
# bench/ipe.sh (instructions, which do not depend on the neighbours).
#
#   bench/ab.sh OLD_VRAMSIM NEW_VRAMSIM [GEN_TRACE]
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
OLD=$1 NEW=$2 GEN=${3:-$here/build/bench/gen-trace}
D=${BENCH_DIR:-$here/build/bench}
RUNS=${RUNS:-5}
export VRAMSIM_CONFIGS=$here/configs
mkdir -p "$D"
gen () {   # as run-bench.sh: its stamp, so that both share the traces
  local f=$D/$1 n=$2; shift 2
  [ -s "$f" ] && [ "$(cat "$f.n" 2>/dev/null)" = "v2 $n $*" ] && return 0
  "$GEN" -n "$n" "$@" -o "$f" > /dev/null || exit 1
  echo "v2 $n $*" > "$f.n"
}
gen plain-1m.vtrace 1000000; gen plain-10m.vtrace 10000000; gen stress-1m.vtrace 1000000 --streams 4
gen uvm-1m.vtrace 1000000 --mode uvm; gen spill-1m.vtrace 1000000 --mode spill
cpu () {   # cpu BINARY ARGS...: user + sys seconds of one run
  local TIMEFORMAT='%3U %3S' u s
  read -r u s < <( { time "$@" > /dev/null 2>&1 ; } 2>&1 | tail -n 1)
  echo "$u + $s" | bc -l
}
printf '%-12s %10s %10s %8s\n' workload "old cpu s" "new cpu s" change
for w in plain-1m plain-10m stress-1m uvm-1m spill-1m; do
  pol=; [ $w = spill-1m ] && pol="--set policy.oversubscription=spill"
  bo="" bn=""
  for i in $(seq 1 "$RUNS"); do
    o=$(cpu "$OLD" replay "$D/$w.vtrace" -c a100-80g $pol --format json)
    n=$(cpu "$NEW" replay "$D/$w.vtrace" -c a100-80g $pol --format json)
    { [ -z "$bo" ] || [ "$(echo "$o < $bo" | bc -l)" = 1 ]; } && bo=$o
    { [ -z "$bn" ] || [ "$(echo "$n < $bn" | bc -l)" = 1 ]; } && bn=$n
  done
  printf '%-12s %10.3f %10.3f %+7.1f%%\n' "$w" "$bo" "$bn" "$(echo "($bn - $bo) * 100 / $bo" | bc -l)"
done
