#!/usr/bin/env bash
# plot-read.sh — plots a person reads at a glance: identical sweep lines
# are drawn once with a legend naming both, titles say what is compared,
# bar labels rotate when they would collide and become horizontal bars on
# a taller canvas when there are many runs. Checks the --script-only
# prologue (what vramsim decides) and renders each PNG. TAP output.
set -u
VRAMSIM=${VRAMSIM:-bin/vramsim}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0
ok () { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails+1)); fi; }
T=$here/traces/hand-train-step.jsonl
echo "1..10"
cd "$tmp" || exit 1

# a100-80g-cxl never uses its expander at these sizes: its lines are the A100's.
# memory.context=0B: the sizes are the trace's 720 MiB alone (the presets'
# CUDA contexts, 256-322 MiB here, would make every oom run fail).
"$VRAMSIM" sweep "$T" -c a100-80g,a100-80g-cxl,rtx3090 --set memory.context=0B --vary memory.capacity=512MiB,768MiB,1GiB \
  --vary policy.oversubscription=oom,spill -j 1 -o s.csv
"$VRAMSIM" plot sweep s.csv --x memory.capacity -o s.png --script-only
grep -q "^ngroups = 4$" s.gp; ok $? "6 lines of which 2 identical pairs: 4 drawn"
grep -q "'a100-80g = a100-80g-cxl, policy=oom'" s.gp; ok $? "the legend names both members of a merged line"
grep -q "2 identical lines drawn once" s.gp; ok $? "the subtitle says lines were merged"
grep -q "^plot_title = 'Predicted time vs memory.capacity on a100-80g, a100-80g-cxl, rtx3090'$" s.gp; ok $? "the sweep title names the metric, the key and the configs"
"$VRAMSIM" plot sweep s.csv --x memory.capacity -o s.png && [ -s s.png ]; ok $? "it renders"

for c in a100-80g rtx3090 v100-pcie-16g; do "$VRAMSIM" replay "$T" -c $c -o r-$c.json; done
"$VRAMSIM" plot stalls r-*.json -o b.png --script-only
grep -q "^plot_title = 'Stall time per run: hand-train-step.jsonl on a100-80g, rtx3090, v100-pcie-16g (3 runs)'$" b.gp
ok $? "the stalls title names the trace, the configs and the run count"
# 3 labels of 31-43 characters ("v100-pcie-16g, policy=oom (r-v100-pcie-16g)"):
# upright they collide (3 x 45 x 7 px = 945 px > 750), rotated the first
# would need 0.87 x 43 = 37 characters of left margin (> 24): horizontal bars.
grep -q "^rotate = 0$" b.gp && grep -q "^horizontal = 1$" b.gp && grep -q "^label_chars = 43$" b.gp
ok $? "3 labels too long to rotate inside the canvas become horizontal bars"
# 12 runs with config names of up to 16 characters: 12 x 18 x 7 = 1512 px
# upright; rotated (16 <= 24), the left margin 0.87 x 16 + 2 = 15.9 characters.
"$VRAMSIM" sweep "$T" -c a100-40g,a100-80g,a100-80g-cxl,a40,gh200,h100-pcie,h100-sxm,jetson-orin-nano,jetson-agx-orin,rtx3090,seed-lpddr5,v100-sxm2-32g -j 1 -o c12.csv
"$VRAMSIM" plot stalls c12.csv -o c12.png --script-only
grep -q "^rotate = 1$" c12.gp && grep -q "^horizontal = 0$" c12.gp && grep -q "^label_chars = 16$" c12.gp \
  && "$VRAMSIM" plot stalls c12.csv -o c12.png && [ -s c12.png ]
ok $? "12 short labels are rotated, and render"

"$VRAMSIM" sweep "$T" -c a100-80g,rtx3090 --set memory.context=0B --vary memory.capacity=256MiB..1GiB/128MiB --vary policy.oversubscription=oom,spill -j 1 -o big.csv
"$VRAMSIM" plot stalls big.csv -o big.png --script-only
# 28 bars: horizontal, 140 + 16 x 28 = 588 -> the 600 px minimum; 84 would be 1484.
grep -q "^horizontal = 1$" big.gp && grep -q "size 1000,600 " big.gp; ok $? "28 runs: horizontal bars"
"$VRAMSIM" sweep "$T" -c a100-80g,rtx3090,jetson-agx-orin,a100-80g-cxl --set memory.context=0B --vary memory.capacity=256MiB..1GiB/128MiB \
  --vary policy.oversubscription=oom,spill,uvm -j 1 -o b84.csv
"$VRAMSIM" plot stalls b84.csv -o b84.png --script-only
grep -q "size 1000,1484 " b84.gp; ok $? "84 runs: the canvas grows to 140 + 16 x 84 = 1484 px"
exit $(( fails > 0 ))
