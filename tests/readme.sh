#!/usr/bin/env bash
# readme.sh — the README's own examples print what the README says: the
# `fit` table under its third command (run from the source tree, as the
# README does), the 13B ZeRO-3 table (bench/example-13b.sh's figures,
# rounded as the README rounds them; about 3 s), and every other shown
# output whose command is cheap and deterministic: the rtx3090 replay's
# first lines, the ZeRO-3 `info` block, the worked example's CSV rows, row
# count, prose times and plot, the UVM timeline plot, the 13B single-GPU
# sweep table and `info` comment, the 13B job's network line, fit's
# out-of-memory figure and the preset list; and docs/workloads.md's shown
# output and traces/README.md's UVM slowdown. Plots are compared byte for
# byte with docs/img (skipped without gnuplot). The Python example is run
# by tests/python.sh. TAP output.
set -u
VRAMSIM=${VRAMSIM:-bin/vramsim}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..19"
cd "$here" || exit 1
# The block that starts with "$ bin/vramsim fit ...": its command, then its output.
awk '/^\$ bin\/vramsim fit /{on=1; print; next} on && /^```$/{exit} on' README.md > "$tmp/block"
cmd=$(head -1 "$tmp/block" | sed 's/^\$ bin\/vramsim //')
[ -n "$cmd" ] && grep -q "^bin/vramsim $cmd\$" README.md
[ $? = 0 ] && echo "ok 1 - the README's fit example is its third command" || echo "not ok 1 - the README's fit example is its third command"
# shellcheck disable=SC2086
"$VRAMSIM" $cmd > "$tmp/out" 2>/dev/null
if sed 1d "$tmp/block" | diff - "$tmp/out" >&2; then
  echo "ok 2 - regression (self-output): bin/vramsim $cmd prints the README's table"
else
  echo "not ok 2 - regression (self-output): bin/vramsim $cmd prints the README's table"
fi
# The 13B table: its rows ("| 8 | NVLink + InfiniBand | ...") against the
# script's CSV, seconds to 2 decimals and GiB to 1.
noplot=1; command -v "${VRAMSIM_GNUPLOT:-gnuplot}" > /dev/null && noplot=
VRAMSIM="$VRAMSIM" NOPLOT=$noplot bash bench/example-13b.sh "$tmp/13b" > /dev/null 2>&1
awk -F, 'NR > 1 { printf "| %s | %s | %.2f s | %.2f s | %.2f s | %.1f GiB | %.1f GiB |\n", $1,
                    ($2 == "nvlink-ib" ? "NVLink + InfiniBand" : "PCIe + Ethernet"),
                    $3 / 1e3, $4 / 1e3, $5 / 1e3, $6, $7 }' "$tmp/13b/13b.csv" > "$tmp/13b.rows"
grep -E '^\| (8|64|512) \| (NVLink|PCIe)' README.md > "$tmp/13b.readme"
if [ -s "$tmp/13b.rows" ] && diff "$tmp/13b.readme" "$tmp/13b.rows" >&2; then
  echo "ok 3 - regression (self-output): bench/example-13b.sh prints the README's 13B table"
else
  echo "not ok 3 - regression (self-output): bench/example-13b.sh prints the README's 13B table"
fi

VRAMSIM=$(cd "$(dirname "$VRAMSIM")" && pwd)/$(basename "$VRAMSIM")
ok() { if [ "$1" = 0 ]; then echo "ok $2"; else echo "not ok $2"; fi; }
skip() { echo "ok $1 # skip $2"; }
# README as one line, for figures that prose wraps.
flat=$(tr '\n' ' ' < README.md | tr -s ' ')
# The commands of the ```sh block that holds PATTERN, continuation lines
# joined, `bin/vramsim` replaced by $VRAMSIM; run in $tmp/w, beside a link to
# traces/ (the commands name traces/... and write where they run).
block_cmds() {
  awk -v pat="$1" '/^```sh$/ { n = 0; inb = 1; next }
                   inb && /^```$/ { inb = 0; if (hit) { for (i = 0; i < n; i++) print L[i]; exit } next }
                   inb { if (index($0, pat)) hit = 1; L[n++] = $0 }' README.md |
    awk '{ if (sub(/\\$/, "")) { acc = acc $0; next } print acc $0; acc = "" }' |
    sed "s|^bin/vramsim |\"\$VRAMSIM\" |"
}
mkdir -p "$tmp/w/docs/img"
ln -s "$here/traces" "$tmp/w/traces"
run_block() {
  local c
  c=$(block_cmds "$1")
  [ -n "$c" ] && (cd "$tmp/w" && eval "$c") > "$tmp/w/out" 2>/dev/null
}
# The output block after the line "$ CMD" (without its prompt), to the fence.
shown() { awk -v c="\$ $1" '$0 == c { on = 1; next } on && /^```$/ { exit } on' README.md; }

# Tests 2-13, 15 and 16 compare the docs with what the program prints now:
# they catch a change, not a wrong figure (named "regression
# (self-output)"). 17-19 check by hand what the README's info lines and
# fit table give, against the ZeRO paper's accounting and the trace; the replay, sweep and
# network figures are checked by hand in tests/engine, tests/model and
# tests/flow.
# 4: the replay summary's first lines, up to the README's "  ...".
shown "bin/vramsim replay traces/hand-train-step.jsonl -c rtx3090" | sed '/^  \.\.\.$/,$d' > "$tmp/rep.readme"
"$VRAMSIM" replay traces/hand-train-step.jsonl -c rtx3090 2>/dev/null | head -n "$(wc -l < "$tmp/rep.readme")" > "$tmp/rep.out"
[ -s "$tmp/rep.readme" ] && diff "$tmp/rep.readme" "$tmp/rep.out" >&2
ok $? "4 - regression (self-output): the rtx3090 replay prints the README's first lines"

# 5: the ZeRO-3 synth + info block; its output block lists consecutive lines of info.
run_block "--zero 3 --dp 64 --checkpoint full -o zero3.jsonl"
awk '/^bin\/vramsim info zero3.jsonl/ { a = 1; next } a && /^```$/ { b++; next } b == 2 { print } b == 3 { exit }' README.md > "$tmp/z3.readme"
first=$(head -1 "$tmp/z3.readme")
grep -F -x -A "$(($(wc -l < "$tmp/z3.readme") - 1))" -- "$first" "$tmp/w/out" > "$tmp/z3.out"
[ -s "$tmp/z3.readme" ] && diff "$tmp/z3.readme" "$tmp/z3.out" >&2
ok $? "5 - regression (self-output): vramsim info zero3.jsonl prints the README's lines"
cp "$tmp/w/out" "$tmp/z3.info"

# 6-9: the worked example: the sweep and its plot.
run_block "--vary policy.oversubscription=oom,spill,uvm -o sweep.csv"
csv=$tmp/w/sweep.csv
awk '/^config,memory.capacity,policy.oversubscription,/ { on = 1 } on && /^```$/ { exit } on' README.md > "$tmp/sw.readme"
awk -F, -v OFS=, 'NR <= 3 { NF = 7; print $0 ",..." }' "$csv" > "$tmp/sw.out"
[ -s "$tmp/sw.readme" ] && diff "$tmp/sw.readme" "$tmp/sw.out" >&2
ok $? "6 - regression (self-output): the worked example's sweep.csv starts with the README's rows"
rows=$(($(wc -l < "$csv") - 1))
printf '%s' "$flat" | grep -q "one row per run ($rows here"
ok $? "7 - regression (self-output): the README counts the sweep's $rows rows"
# At 768 MiB under oom each machine runs at its own speed: ms to 1 decimal.
t() { awk -F, -v c="$1" '$1 == c && $2 == "768MiB" && $3 == "oom" { printf "%.1f", $5 / 1e6 }' "$csv"; }
want="(A100 $(t a100-80g) ms, RTX 3090 $(t rtx3090) ms, Jetson AGX Orin $(t jetson-agx-orin) ms)"
printf '%s' "$flat" | grep -qF "$want"
ok $? "8 - regression (self-output): the worked example's prose times: $want"
if command -v "${VRAMSIM_GNUPLOT:-gnuplot}" > /dev/null; then
  cmp "$tmp/w/docs/img/sweep-example.png" docs/img/sweep-example.png >&2
  ok $? "9 - regression (self-output): docs/img/sweep-example.png is what the README's plot command draws"
else
  skip 9 "no gnuplot"
fi

# 10: the UVM timeline plot, by the command the Plot section gives.
if command -v "${VRAMSIM_GNUPLOT:-gnuplot}" > /dev/null; then
  title="hand-uvm-oversub.jsonl on a 16 GiB V100: residency and bandwidth"
  printf '%s' "$flat" | grep -qF "vramsim plot timeline uvm.csv --title \"$title\" -o docs/img/timeline-uvm.png" &&
    "$VRAMSIM" replay traces/hand-uvm-oversub.jsonl --series "$tmp/uvm.csv" > /dev/null 2>&1 &&
    "$VRAMSIM" plot timeline "$tmp/uvm.csv" --title "$title" -o "$tmp/uvm.png" 2>/dev/null &&
    cmp "$tmp/uvm.png" docs/img/timeline-uvm.png >&2
  ok $? "10 - regression (self-output): docs/img/timeline-uvm.png is what the README's command draws"
  cmp "$tmp/13b/network-13b.png" docs/img/network-13b.png >&2
  ok $? "11 - regression (self-output): docs/img/network-13b.png is what bench/example-13b.sh draws"
else
  skip 10 "no gnuplot"; skip 11 "no gnuplot"
fi

# 12: the 13B step on one GPU: the sweep's slowdown to 1 decimal, OOM for
# oom, the README's four rows in the sweep's config order; and the info comment.
run_block "--vary policy.oversubscription=oom,spill,direct,uvm -o big.csv"
awk -F, 'NR > 1 { v[$1] = v[$1] " | " ($3 == "oom" ? "OOM" : sprintf("%.1fx", $5)); if (!($1 in seen)) { seen[$1]; o[n++] = $1 } }
         END { for (i = 0; i < n; i++) print substr(v[o[i]], 4) }' "$tmp/w/big.csv" > "$tmp/big.out"
grep -E '^\| (H100 SXM|H200|GH200)' README.md | awk -F' \\| ' '{ print $2 " | " $3 " | " $4 " | " substr($5, 1, length($5) - 2) }' > "$tmp/big.readme"
info=$(awk '/^peak live/ { printf "peak live %.0f GiB:", $3 } $1 ~ /^(params|grads|optimizer|activations)$/ { printf " %s %.0f,", $1, $2 }' "$tmp/w/out" | sed 's/,$//')
[ -s "$tmp/big.out" ] && diff "$tmp/big.readme" "$tmp/big.out" >&2 && grep -qF "# $info" README.md
ok $? "12 - regression (self-output): the 13B sweep prints the README's table ($info)"
cp "$tmp/w/out" "$tmp/big.info"

# 13: the 13B job's network line under its replay command; fit's missing figure.
net=$("$VRAMSIM" replay "$tmp/13b/13b-64.vtrace" -c a100-80g 2>/dev/null | grep '^network')
miss=$("$VRAMSIM" fit traces/hand-train-step.jsonl -c a100-80g --set memory.capacity=512MiB 2>/dev/null | awk '$1 == "a100-80g" { print $(NF-3), $(NF-2), $(NF-1), $NF }')
grep -qF "replay 13b-64.vtrace -c a100-80g        # $net" README.md && printf '%s' "$flat" | grep -qF "a100-80g \`$miss\`"
ok $? "13 - regression (self-output): the README's 13B network line ($net) and fit's '$miss'"

# 14: the Hardware presets list holds the names vramsim configs prints.
"$VRAMSIM" configs 2>/dev/null | awk 'NR > 1 { print $1 }' | sort > "$tmp/names.out"
printf '%s' "$flat" | sed -n 's/.*(\[docs\/config.md\](docs\/config.md)): \([a-z0-9, -]*\)\. .*/\1/p' | tr -d ' ' | tr , '\n' | sort > "$tmp/names.readme"
[ -s "$tmp/names.out" ] && diff "$tmp/names.readme" "$tmp/names.out" >&2
ok $? "14 - the README lists every preset vramsim configs prints"

# 15: docs/workloads.md's block: each "$ bin/vramsim CMD" is followed by lines
# its output holds, in order ("..." skips lines).
awk '/^\$ bin\/vramsim (info|replay) traces\// { f = FILENAME; print; next } /^```$/ { print "END" } !/^\.\.\.$/ && /^ *[a-z]/ { print }' docs/workloads.md |
  awk '/^\$ bin\/vramsim/ { on = 1 } on { print } /^END$/ { on = 0 }' | grep -v '^END$' > "$tmp/wl"
bad=0; n=0
while IFS= read -r line; do
  case $line in
    '$ bin/vramsim '*) cmd=${line#'$ bin/vramsim '}
      # shellcheck disable=SC2086
      "$VRAMSIM" $cmd > "$tmp/wl.out" 2>/dev/null; from=1 ;;
    *) at=$(tail -n +"$from" "$tmp/wl.out" | grep -n -F -x -m1 -- "$line" | cut -d: -f1)
       if [ -z "$at" ]; then echo "# docs/workloads.md: '$line' not in the output of vramsim $cmd (in order)" >&2; bad=1; else from=$((from + at)); n=$((n + 1)); fi ;;
  esac
done < "$tmp/wl"
[ "$n" -ge 8 ] && [ $bad = 0 ]
ok $? "15 - regression (self-output): docs/workloads.md's info and replay lines ($n) are what vramsim prints"

# 16: traces/README.md's slowdown of the UVM sample, to 2 decimals.
x=$("$VRAMSIM" replay traces/hand-uvm-oversub.jsonl --format json 2>/dev/null | python3 -c 'import json,sys; print("%.2fx" % json.load(sys.stdin)["time"]["slowdown"])')
grep -qF "replays at $x on its own preset (\`vramsim replay traces/hand-uvm-oversub.jsonl\`)" traces/README.md
ok $? "16 - regression (self-output): traces/README.md's hand-uvm-oversub slowdown ($x)"

# info's "  NAME  X UNIT peak" line in bytes.
info_bytes () {
  awk -v t="$2" '$1 == t { u = $3; v = $2; m = (u == "KiB" ? 2^10 : u == "MiB" ? 2^20 : u == "GiB" ? 2^30 : 1); printf "%.0f", v * m }' "$1"
}
# 17: ZeRO-3 over N = 64 with mixed-precision Adam (Rajbhandari et al.,
# 2+2+12 bytes a parameter, each partitioned by N): params and grads
# 2 x 7.5e9 / 64 = 234,375,000 B (223.52 MiB), optimizer 12 x 7.5e9 / 64 =
# 1,406,250,000 B (1.31 GiB); info rounds to 2 decimals (0.005 MiB / GiB).
p=$(info_bytes "$tmp/z3.info" params); g=$(info_bytes "$tmp/z3.info" grads); o=$(info_bytes "$tmp/z3.info" optimizer)
awk -v p="${p:-0}" -v g="${g:-0}" -v o="${o:-0}" 'function near(x, w, tol) { return x >= w - tol && x <= w + tol }
  BEGIN { exit !(near(p, 234375000, 0.005 * 2^20) && near(g, 234375000, 0.005 * 2^20) && near(o, 1406250000, 0.005 * 2^30)) }'
ok $? "17 - independent: ZeRO-3 info by hand (params $p, grads $g, optimizer $o B; 2Psi/N, 2Psi/N, 12Psi/N)"
# 18: the 13B model unpartitioned: 40 layers of hidden 5120 hold 12 x 40 x
# 5120^2 = 12,582,912,000 weights (Megatron's 12 L h^2), plus embeddings,
# biases and norms, a few percent more: params (fp16, 2 B) within 0-5 % of
# 2 x 12 L h^2 = 23.44 GiB, grads as params, Adam's fp32 master, m and v
# 12 B a parameter: 6 x params.
p=$(info_bytes "$tmp/big.info" params); g=$(info_bytes "$tmp/big.info" grads); o=$(info_bytes "$tmp/big.info" optimizer)
awk -v p="${p:-0}" -v g="${g:-0}" -v o="${o:-0}" 'BEGIN { w = 2 * 12 * 40 * 5120 ^ 2
  exit !(p >= w && p <= 1.05 * w && g >= 0.99 * p && g <= 1.01 * p && o >= 5.95 * p && o <= 6.05 * p) }'
ok $? "18 - independent: the 13B info by hand (params $p B within 5 % above 2 x 12 L h^2, grads = params, optimizer = 6 x params)"
# 19: the fit table's peak device column (the README's, test 2's block) by
# hand: hand-train-step allocates 128 + 128 + 256 + 16 + 192 MiB = 720 MiB
# of device memory (its JSONL), plus each preset's memory.context
# (configs/NAME.json), plus the 16 MiB pinned batch where the preset's
# memory is unified (Jetson: pinned host memory is the same DRAM); at the
# README's precision (4 significant figures, 0.06 %).
python3 - "$tmp/block" <<'PY'
import json, re, sys
mult = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
bad, n = [], 0
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 6 or f[1] != "ok" or f[2] != "yes":
        continue
    c = json.load(open("configs/%s.json" % f[0]))
    m = re.match(r"([0-9.]+)\s*([A-Za-z]+)", c["memory"]["context"])
    want = 720 * 2**20 + float(m.group(1)) * mult[m.group(2)] + (16 * 2**20 if c.get("unified") else 0)
    shown = float(f[3]) * mult[f[4]]
    n += 1
    if abs(shown / want - 1) > 0.0006:
        bad.append("%s: shown %s %s, by hand %.0f B" % (f[0], f[3], f[4], want))
print("# " + ("; ".join(bad) if bad else "%d rows" % n))
sys.exit(1 if bad or n < 4 else 0)
PY
ok $? "19 - independent: the fit table's peak device by hand (720 MiB of the trace's device allocations + each preset's context, + the pinned batch on unified memory)"
