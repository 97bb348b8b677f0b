#!/bin/bash
# sweep-ipr.sh — instructions per sweep run of one or more vramsim
# binaries under callgrind (deterministic, unlike CPU time on a shared
# machine): the marginal cost of one more run of a tiny trace
# (traces/hand-train-step.jsonl, 50 events), where a run's config compile
# weighs as much as its replay. Two sweeps of -j 1, 16 and 80 runs, with
# four keys varied; per run = (Ir(80) - Ir(16)) / 64, and the inclusive
# instructions of config_compile per call.
#
#   bench/sweep-ipr.sh VRAMSIM...
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
export VRAMSIM_CONFIGS=$here/configs
T=$here/traces/hand-train-step.jsonl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# 2 configs x 2 x 2 x 2 = 16 runs; x 5 link bandwidths = 80.
small=(--vary memory.capacity=2GiB,4GiB --vary memory.bandwidth=1TB/s,2TB/s --vary gpu.launch_latency=2us,4us)
big=("${small[@]}" --vary link.bandwidth=8GB/s..128GB/s/x2)
printf '%-40s %14s %14s %12s %16s\n' binary "Ir 16 runs" "Ir 80 runs" "Ir per run" "Ir per compile"
for bin in "$@"; do
  ir () {
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$1" "$bin" sweep "$T" -c a100-80g,rtx3090 "${@:2}" -j 1 \
      -o /dev/null 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
  }
  a=$(ir 16 "${small[@]}")
  b=$(ir 80 "${big[@]}")
  comp=$(callgrind_annotate --inclusive=yes "$tmp/cg.80" 2> /dev/null | awk '/config\.c:config_compile/ { gsub(",", "", $1); print $1; exit }')
  printf '%-40s %14s %14s %12.0f %16.0f\n' "$bin" "$a" "$b" "$(echo "($b - $a) / 64" | bc -l)" "$(echo "${comp:-0} / 80" | bc -l)"
done
