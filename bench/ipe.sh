#!/bin/bash
# ipe.sh — instructions per event of one or more vramsim binaries under
# callgrind (deterministic, unlike CPU time on a shared machine), on the
# 100k-event traces of bench/diff-check.sh (plain, stress, uvm, spill),
# each replayed with -c a100-80g --format json (spill with
# policy.oversubscription=spill), as docs/performance.md reports them.
#
#   bench/ipe.sh VRAMSIM...      (traces from bench/diff-check.sh in $DIFF_DIR)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
T=${DIFF_DIR:-$here/build/diff}/traces
export VRAMSIM_CONFIGS=$here/configs
printf '%-40s' "binary"; for w in plain stress uvm spill; do printf ' %8s' $w; done; echo
for bin in "$@"; do
  printf '%-40s' "$bin"
  for w in plain stress uvm spill; do
    pol=; [ $w = spill ] && pol="--set policy.oversubscription=spill"
    n=$("$bin" info "$T/$w.vtrace" --format json | sed -n 's/^[[:space:]]*"events":[[:space:]]*\([0-9]*\).*/\1/p' | head -n 1)
    ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" replay "$T/$w.vtrace" -c a100-80g $pol \
         --format json -o /dev/null 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
    printf ' %8.1f' "$(echo "$ir / $n" | bc -l)"
  done
  echo
done
