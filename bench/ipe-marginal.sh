#!/bin/bash
# ipe-marginal.sh — instructions per event of one or more vramsim binaries
# under callgrind, from the difference between a 200k- and a 100k-event
# trace of each workload (plain, stress), so that what a replay spends once
# (start-up, config, the report's run_of, whose SHA-256 of the trace's first
# MiB alone is ~56 M instructions, 560 per event of a 100k-event trace) cancels
# out; bench/ipe.sh's figures include it. Each binary reads the presets
# given after '=' (default: this tree's configs/), since older binaries
# refuse newer preset keys. docs/performance.md reports these figures.
#
#   bench/ipe-marginal.sh VRAMSIM[=CONFIGS_DIR]...
#   GEN=path/to/gen-trace (default build/bench/gen-trace; an older one for
#   binaries that read only version 1 traces), DIFF_DIR (default build/diff)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
GEN=${GEN:-$here/build/bench/gen-trace}
T=${DIFF_DIR:-$here/build/diff}/marginal
mkdir -p "$T"
for spec in "plain:" "stress:--streams 4"; do
  w=${spec%%:*} args=${spec#*:}
  for n in 100000 200000; do
    [ -s "$T/$w-$n.vtrace" ] || "$GEN" -n $n $args -o "$T/$w-$n.vtrace" > /dev/null || exit 1
  done
done
printf '%-40s %10s %10s\n' binary plain stress
for arg in "$@"; do
  bin=${arg%%=*} cfg=$here/configs
  [ "$bin" != "$arg" ] && cfg=${arg#*=}
  printf '%-40s' "$bin"
  for w in plain stress; do
    ir=() ev=()
    for n in 100000 200000; do
      ir+=("$(VRAMSIM_CONFIGS=$cfg valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" replay \
              "$T/$w-$n.vtrace" -c a100-80g --format json -o /dev/null 2>&1 \
              | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')")
      ev+=("$(VRAMSIM_CONFIGS=$cfg "$bin" info "$T/$w-$n.vtrace" --format json \
              | sed -n 's/^[[:space:]]*"events":[[:space:]]*\([0-9]*\).*/\1/p' | head -n 1)")
    done
    printf ' %10.1f' "$(echo "(${ir[1]} - ${ir[0]}) / (${ev[1]} - ${ev[0]})" | bc -l)"
  done
  echo
done
