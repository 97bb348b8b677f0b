#!/bin/bash
# validate-network.sh — `make validate-network` under `make test`: the
# collective cost model against NCCL times others measured
# (bench/validate-network.c on ../shared/reference-data/vidur/network;
# docs/validation.md "Collectives"), then the generator and the replay
# against Megatron-LM's published runs (bench/validate-megatron.sh;
# docs/validation.md "Megatron-LM on Selene": the targets, and the page's
# table is what the script prints now). Prints TAP.
cd "$(dirname "$0")/.." || exit 1
B=${TEST_BUILD:-build}
VRAMSIM=${VRAMSIM:-bin/vramsim}
data=../shared/reference-data/vidur/network
echo "1..4"
megatron () {
  tmp=$(mktemp -d)
  bench/validate-megatron.sh "$VRAMSIM" > "$tmp/out" 2> "$tmp/err"; rc=$?
  line=$(grep '^megatron:' "$tmp/out")
  if [ $rc -eq 0 ]; then echo "ok 3 - Megatron-LM Table 1 within the targets ($line)"
  else echo "not ok 3 - Megatron-LM Table 1: exit $rc ${line:-$(head -3 "$tmp/err")}"; fi
  # The page's table: from its "| model | t |" header to its summary line.
  awk '/^\| model \| t \| p \| v \|/ { on = 1 } on { print } on && /^megatron:/ { exit }' docs/validation.md > "$tmp/doc"
  if [ -s "$tmp/doc" ] && diff "$tmp/doc" "$tmp/out" >&2; then
    echo "ok 4 - docs/validation.md's Megatron table is what validate-megatron prints"
  else
    echo "not ok 4 - docs/validation.md's Megatron table differs from bench/validate-megatron.sh's output (make validate-network; paste it)"
  fi
  rm -rf "$tmp"
}
if [ ! -d "$data" ] || [ ! -x "$B/bench/validate-network" ]; then
  echo "ok 1 # SKIP no $data or $B/bench/validate-network"
  echo "ok 2 # SKIP"
  megatron
  exit 0
fi
out=$("$B/bench/validate-network" "$data"); rc=$?
line=$(grep '^validation points' <<<"$out")
if [ $rc -eq 0 ]; then echo "ok 1 - median |error| >= 1 MiB within 15 % ($line)"; else echo "not ok 1 - $line"; fi
# Every calibration group fits its own data within 25 % (a fit that cannot
# follow the group it was fitted on means the model lost its shape).
bad=$(grep -E 'fit (intra|inter)' <<<"$out" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^med\|err\|/) { v = $(i + 1); sub(/%/, "", v); if (v + 0 > 25) print } }')
if [ -z "$bad" ]; then echo "ok 2 - calibration groups fit within 25 %"; else echo "not ok 2 - $bad"; fi
megatron
