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

# Table 1 (params in billions, heads, hidden, layers, t, p, GPUs, batch,
# published TF/s per GPU), with the micro-batch size and the interleaved
# schedule's chunks each run used (NVIDIA/Megatron-LM
# examples/sc21/run_table_1.sh: MBS, --num-layers-per-virtual-pipeline-stage,
# DDP=torch for p = 1, local above; full recomputation, seq 2048,
# vocabulary 51,200).
#    name  heads hidden layers t  p   gpus batch mbs v  ddp   published
runs="1.7B   24   2304   24    1  1   32   512   16  1  torch 137
3.6B   32   3072   30    2  1   64   512   16  1  torch 138
7.5B   32   4096   36    4  1   128  512   16  1  torch 142
18B    48   6144   40    8  1   256  1024  8   1  torch 135
39B    64   8192   48    8  2   512  1536  4   1  local 138
76B    80   10240  60    8  4   1024 1792  2   3  local 140
145B   96   12288  80    8  8   1536 2304  2   2  local 148
310B   128  16384  96    8  16  1920 2160  1   2  local 155
530B   128  20480  105   8  35  2520 2520  1   3  local 163
1T     160  25600  128   8  64  3072 3072  1   1  local 163"

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
