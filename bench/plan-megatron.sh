#!/bin/bash
# plan-megatron.sh — `vramsim plan` on each of the ten runs of Narayanan
# et al., "Efficient Large-Scale Language Model Training on GPU Clusters
# Using Megatron-LM", SC 2021 (arXiv 2104.04473), Table 1: the same model,
# global batch and GPU count on a100-80g, searched under the options of
# 2021 (`--zero 0 --sp off --checkpoint full --even-stages`:
# Megatron-LM then split the layers evenly only). For each run it prints
# where the run's own (t, p) ranks among the (t, p) pairs of the fitting
# layouts, the planner's TF/s for it (its best micro-batch and schedule
# with that pair) beside the published one, and the planner's best layout
# (docs/plan.md, "All ten runs of Table 1"). Markdown on stdout.
#
# Usage: bench/plan-megatron.sh [VRAMSIM]   (default bin/vramsim; -j 2)
set -u
cd "$(dirname "$0")/.." || exit 1
VRAMSIM=${1:-${VRAMSIM:-bin/vramsim}}
command -v python3 >/dev/null || { echo "plan-megatron: needs python3" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Table 1: bench/megatron-table1.txt (the micro-batch, schedule and DDP
# columns are the runs', which the search does not take).
runs=$(grep -v '^#' bench/megatron-table1.txt)

echo "| model | GPUs | Table 1's (t, p) | its rank of the fitting (t, p) | planner's TF/s for it | published TF/s | planner's best (t, p, v, micro-batch) | its TF/s | searched, fit |"
echo "| --- | ---: | --- | --- | ---: | ---: | --- | ---: | --- |"
echo "$runs" | while read -r name heads hidden layers t p gpus batch _ _ _ pub; do
  if ! "$VRAMSIM" plan --layers "$layers" --hidden "$hidden" --heads "$heads" --vocab 51200 --seq 2048 \
      --global-batch "$batch" -c a100-80g --gpus "$gpus" --zero 0 --sp off --checkpoint full --even-stages -j 2 \
      --format json > "$tmp/plan.json" 2> "$tmp/err"; then
    echo "plan-megatron: plan failed for $name:" >&2; cat "$tmp/err" >&2; exit 2
  fi
  python3 - "$tmp/plan.json" "$name" "$gpus" "$t" "$p" "$pub" <<'PY' || exit 2
import json, sys
j = json.load(open(sys.argv[1]))
name, gpus, t, p, pub = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
fit = [x for x in j["layouts"] if x["fits"]]
pairs, first = [], {}
for x in fit:   # best first: the first layout of a pair is its best
    k = (x["tp"], x["pp"])
    if k not in first:
        pairs.append(k)
        first[k] = x
rank = "%d of %d" % (pairs.index((t, p)) + 1, len(pairs)) if (t, p) in first else "does not fit"
its = "%.1f" % first[(t, p)]["tflops_per_gpu"] if (t, p) in first else "-"
b = fit[0] if fit else None
best = "t=%d p=%d v=%d mb %d" % (b["tp"], b["pp"], b.get("virtual_stages") or 1, b["microbatch"]) if b else "none fits"
print("| %s | %s | t=%d p=%d | %s | %s | %s | %s | %s | %d, %d |"
      % (name, gpus, t, p, rank, its, pub, best, "%.1f" % b["tflops_per_gpu"] if b else "-",
         j["searched"], len(fit)))
PY
done
