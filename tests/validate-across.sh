#!/bin/bash
# validate-across.sh — `make validate` under `make test`: the kernel model
# across GPUs on measurements others made (tests/model/validate-across.c
# on ../shared/reference-data and ../shared/real-traces; docs/validation.md
# "Across GPUs"). Checks issue 14's targets on the scored cases (median
# |error| <= 10 %, worst <= 25 %) and that the tables docs/validation.md
# shows are the ones the program prints now. Prints TAP.
cd "$(dirname "$0")/.." || exit 1
B=${TEST_BUILD:-build}
data=../shared/reference-data
[ -d "$data" ] && [ -d ../shared/real-traces ] || { echo "1..0 # SKIP no $data or ../shared/real-traces"; exit 0; }
[ -x "$B/tests/model/validate-across" ] || { echo "1..0 # SKIP $B/tests/model/validate-across not built"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..3"
"$B/tests/model/validate-across" "$data" ../shared/real-traces > "$tmp/out"; rc=$?
line=$(grep '^summary:' "$tmp/out")
if [ $rc -eq 0 ] && [ -n "$line" ]; then echo "ok 1 - validate-across runs ($line)"; else echo "not ok 1 - validate-across exit $rc"; fi
# "summary: 31 scored cases, median |error| 4.8 %, worst 11.9 %; ..."
read -r med worst < <(sed -E 's/^summary: [0-9]+ scored cases, median \|error\| ([0-9.]+) %, worst ([0-9.]+) %.*/\1 \2/' <<<"$line")
if awk -v m="$med" -v w="$worst" 'BEGIN { exit !(m != "" && m + 0 <= 10 && w + 0 <= 25) }'; then
  echo "ok 2 - scored cases within the targets (median $med % <= 10 %, worst $worst % <= 25 %)"
else
  echo "not ok 2 - scored cases: median '$med' %, worst '$worst' % (targets 10 %, 25 %)"
fi
# The doc's tables: its "#### vidur" heading to "### What was set on what",
# one heading level up, against the program's from "### vidur".
awk '/^#### vidur/ { on = 1 } /^### What was set on what/ { on = 0 } on' docs/validation.md \
  | sed 's/^####/###/' | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' > "$tmp/doc"
sed -n '/^### vidur/,$p' "$tmp/out" > "$tmp/run"
if [ -s "$tmp/run" ] && diff "$tmp/doc" "$tmp/run" >&2; then
  echo "ok 3 - docs/validation.md's Across GPUs tables are what validate-across prints"
else
  echo "not ok 3 - docs/validation.md's Across GPUs tables differ from validate-across's output (make validate; paste it)"
fi
