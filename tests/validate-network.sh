#!/bin/bash
# validate-network.sh — the collective cost model against NCCL times others
# measured (bench/validate-network.c on validation/data/vidur/network, in the
# repository; docs/validation.md "Collectives"). Its data and program must be
# there: a missing one fails, never skips. Prints TAP.
cd "$(dirname "$0")/.." || exit 1
B=${TEST_BUILD:-build}
. tests/data-lib.sh
data=$VRAMSIM_DATA/vidur/network
data_file vidur/network/a100_dgx/all_reduce.csv >/dev/null || { echo "1..1"; echo "not ok 1 - $data missing"; exit 1; }
[ -x "$B/bench/validate-network" ] || { echo "1..1"; echo "not ok 1 - $B/bench/validate-network not built (make tests)"; exit 1; }
echo "1..2"
out=$("$B/bench/validate-network" "$data"); rc=$?
line=$(grep '^validation points' <<<"$out")
if [ $rc -eq 0 ]; then echo "ok 1 - median |error| >= 1 MiB within 15 % ($line)"; else echo "not ok 1 - $line"; fi
# Every calibration group fits its own data within 25 % (a fit that cannot
# follow the group it was fitted on means the model lost its shape).
bad=$(grep -E 'fit (intra|inter)' <<<"$out" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^med\|err\|/) { v = $(i + 1); sub(/%/, "", v); if (v + 0 > 25) print } }')
if [ -z "$bad" ]; then echo "ok 2 - calibration groups fit within 25 %"; else echo "not ok 2 - $bad"; fi
