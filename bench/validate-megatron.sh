#!/bin/bash
# validate-megatron.sh — the transformer-train generator and the replay
# against Megatron-LM's published weak-scaling runs: Narayanan et al.,
# "Efficient Large-Scale Language Model Training on GPU Clusters Using
# Megatron-LM", SC 2021 (arXiv 2104.04473), Table 1; docs/validation.md
# "Megatron-LM on Selene". For each run: `vramsim synth transformer-train`
# writes rank 0's trace on a100-80g (Selene's DGX A100 nodes: NVSwitch,
# 8 x 200 Gb/s HDR InfiniBand a node, the preset's network), `vramsim
# replay` times it, and the achieved TF/s per GPU is the paper's eq. 3
# count over the replay's step time: F = 96·B·s·l·h²·(1 + s/(6h) +
# V/(16·l·h)) / (step · GPUs). Prints the table (markdown) and a summary
# line; exits 1 when the targets are missed (median |error| <= 10 %,
# worst <= 20 %, TF/s rising from the smallest model to the largest).
#
# Usage: bench/validate-megatron.sh [VRAMSIM]   (default bin/vramsim)
set -u
cd "$(dirname "$0")/.." || exit 1
VRAMSIM=${1:-${VRAMSIM:-bin/vramsim}}
command -v python3 >/dev/null || { echo "validate-megatron: needs python3" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Table 1 with each run's micro-batch, schedule and DDP: bench/megatron-table1.txt.
runs=$(grep -v '^#' bench/megatron-table1.txt)

echo "| model | t | p | v | GPUs | batch | micro-batch | published TF/s | predicted TF/s | error | step (s) |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
: > "$tmp/rows"
while read -r name heads hidden layers t p gpus batch mbs v ddp pub; do
  dp=$((gpus / (t * p)))
  m=$((batch / (dp * mbs)))
  extra=""
  [ "$v" -gt 1 ] && extra="--virtual-stages $v"
  # shellcheck disable=SC2086
  if ! "$VRAMSIM" synth transformer-train --layers "$layers" --hidden "$hidden" --heads "$heads" --seq 2048 \
      --batch "$mbs" --vocab 51200 --tp "$t" --pp "$p" --dp "$dp" --grad-accum "$m" $extra --ddp "$ddp" \
      --checkpoint full --steps 2 -c a100-80g -o "$tmp/$name.vtrace" 2> "$tmp/$name.err"; then
    echo "validate-megatron: synth failed for $name:" >&2; cat "$tmp/$name.err" >&2; exit 2
  fi
  if ! "$VRAMSIM" replay "$tmp/$name.vtrace" --format json > "$tmp/$name.json" 2> "$tmp/$name.err"; then
    echo "validate-megatron: replay failed for $name:" >&2; cat "$tmp/$name.err" >&2; exit 2
  fi
  python3 - "$tmp/$name.json" "$name" "$heads" "$hidden" "$layers" "$t" "$p" "$v" "$gpus" "$batch" "$mbs" "$pub" \
      >> "$tmp/rows" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
name = sys.argv[2]
heads, h, l, t, p, v, gpus, B, mbs, pub = (int(x) for x in sys.argv[3:13])
s, V = 2048, 51200
step = r["steady_state"]["step_median_ns"] * 1e-9
flops = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))   # eq. 3
pred = flops / step / gpus / 1e12
print("%s %d %d %d %d %d %d %d %.1f %.3f" % (name, t, p, v, gpus, B, mbs, pub, pred, step))
PY
done <<< "$runs"
python3 - "$tmp/rows" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
errs = []
for name, t, p, v, gpus, B, mbs, pub, pred, step in rows:
    e = float(pred) / float(pub) - 1
    errs.append(abs(e))
    print("| %s | %s | %s | %s | %s | %s | %s | %s | %.0f | %+.1f %% | %.2f |" % (name, t, p, v, gpus, B, mbs, pub, float(pred), 100 * e, float(step)))
errs.sort()
n = len(errs)
med = (errs[n // 2] + errs[(n - 1) // 2]) / 2
worst = errs[-1]
first, last = float(rows[0][8]), float(rows[-1][8])
rise = last > first
ok = med <= 0.10 and worst <= 0.20 and rise
print()
print("megatron: %d runs, median |error| %.1f %%, worst %.1f %%, TF/s %.0f -> %.0f (published 137 -> 163)%s"
      % (n, 100 * med, 100 * worst, first, last, "" if ok else " MISSED (targets: median <= 10 %, worst <= 20 %, rising)"))
sys.exit(0 if ok else 1)
PY
