#!/bin/bash
# validate-network.sh — `make validate-network` under `make test`: the
# collective cost model against the bus bandwidths published in nccl-tests
# threads and against vidur's measured NCCL times (bench/validate-network.c
# on validation/data/vidur/network, in the repository; docs/validation.md
# "Collectives over the network"), then the generator and the replay
# against Megatron-LM's published runs (bench/validate-megatron.sh;
# docs/validation.md "Megatron-LM on Selene"). Its data and programs must be
# there: a missing one fails, never skips. Prints TAP.
cd "$(dirname "$0")/.." || exit 1
B=${TEST_BUILD:-build}
VRAMSIM=${VRAMSIM:-bin/vramsim}
. tests/data-lib.sh
DATA=$VRAMSIM_DATA/vidur/network
echo "1..6"
prog=$B/bench/validate-network
if ! data_file vidur/network/a100_dgx/all_reduce.csv >/dev/null || [ ! -x "$prog" ]; then
  for i in 1 2 3 4 5 6; do echo "not ok $i - $DATA or $prog missing (make tests; validation/data/README.md)"; done
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
VRAMSIM_CONFIGS=$PWD/configs "$prog" "$DATA" --markdown > "$tmp/out" 2> "$tmp/err"; rc=$?
pub=$(grep '^published bus bandwidths:' "$tmp/out")
vid=$(grep '^vidur out-of-sample points' "$tmp/out")

# 1: the verdict. Out-of-sample: nothing in the presets is fitted on these
# figures (targets set before the first run).
if [ $rc -eq 0 ] && [ -n "$pub" ]; then
  echo "ok 1 - published bus bandwidths within 10 % and NCCL's 8xH100 switch points ($pub)"
else
  echo "not ok 1 - exit $rc: ${pub:-no verdict line} $(head -c 300 "$tmp/err")"
fi

# 2: vidur's groups. The 15 % target is not met (docs/validation.md says
# why); this guards the out-of-sample median at 35 %, a bound set after the
# first run (31.7 %), so that the model does not drift further from them.
med=$(sed -nE 's/^vidur out-of-sample points >= 1 MiB: ([0-9]+), median \|error\| ([0-9.]+) %.*/\2/p' <<<"$vid")
pts=$(sed -nE 's/^vidur out-of-sample points >= 1 MiB: ([0-9]+),.*/\1/p' <<<"$vid")
if [ -n "$med" ] && [ "${pts:-0}" -gt 10000 ] && awk -v m="$med" 'BEGIN { exit !(m + 0 <= 35) }'; then
  echo "ok 2 - vidur out-of-sample median |error| $med % over $pts points (guard 35 %; target 15 % not met)"
else
  echo "not ok 2 - vidur out-of-sample: '${vid:-no line}' (guard: median <= 35 % over > 10000 points)"
fi

# 3: every group has figures (a table of nan or no rows would pass test 2
# on a stray line): 14 vidur groups and 7 published rows, none "nan".
rows=$(grep -cE '^\| (send|all_reduce) [0-9]+ ranks' "$tmp/out")
prow=$(grep -cE '^\| [0-9]+ ?x .* \| `' "$tmp/out")
if [ "$rows" -eq 14 ] && [ "$prow" -eq 7 ] && ! grep -qi 'nan' "$tmp/out"; then
  echo "ok 3 - 14 vidur groups and 7 published figures, every one with numbers"
else
  echo "not ok 3 - $rows vidur group rows (want 14), $prow published rows (want 7), or a nan"
fi

# 4: the tables docs/validation.md shows are what the program prints now:
# the text between its two validate-network markers.
awk '/^<!-- validate-network output: begin/ { on = 1; next } /^<!-- validate-network output: end/ { on = 0 } on' \
  docs/validation.md > "$tmp/doc"
if [ -s "$tmp/doc" ] && diff "$tmp/doc" "$tmp/out" >&2; then
  echo "ok 4 - regression (self-output; independent: tests 1-3): docs/validation.md's network tables are what validate-network prints"
else
  echo "not ok 4 - regression (self-output): docs/validation.md's network tables differ from validate-network's output (make validate-network; paste it between the markers)"
fi

megatron () {
  local mt; mt=$(mktemp -d)
  bench/validate-megatron.sh "$VRAMSIM" > "$mt/out" 2> "$mt/err"; rc=$?
  line=$(grep '^megatron:' "$mt/out")
  if [ $rc -eq 0 ]; then echo "ok 5 - Megatron-LM Table 1 within the targets ($line)"
  else echo "not ok 5 - Megatron-LM Table 1: exit $rc ${line:-$(head -3 "$mt/err")}"; fi
  # The page's table: from its "| model | t |" header to its summary line.
  awk '/^\| model \| t \| p \| v \|/ { on = 1 } on { print } on && /^megatron:/ { exit }' docs/validation.md > "$mt/doc"
  if [ -s "$mt/doc" ] && diff "$mt/doc" "$mt/out" >&2; then
    echo "ok 6 - regression (self-output; independent: test 5): docs/validation.md's Megatron table is what validate-megatron prints"
  else
    echo "not ok 6 - regression (self-output): docs/validation.md's Megatron table differs from bench/validate-megatron.sh's output (make validate-network; paste it)"
  fi
  rm -rf "$mt"
}
megatron
