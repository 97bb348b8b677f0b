#!/usr/bin/env bash
# readme.sh — the README's own examples print what the README says: the
# `fit` table under its third command (run from the source tree, as the
# README does), and the 13B ZeRO-3 table (bench/example-13b.sh's figures,
# rounded as the README rounds them; about 3 s). The Python example is run
# by tests/python.sh. TAP output.
set -u
VRAMSIM=${VRAMSIM:-bin/vramsim}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..3"
cd "$here" || exit 1
# The block that starts with "$ bin/vramsim fit ...": its command, then its output.
awk '/^\$ bin\/vramsim fit /{on=1; print; next} on && /^```$/{exit} on' README.md > "$tmp/block"
cmd=$(head -1 "$tmp/block" | sed 's/^\$ bin\/vramsim //')
[ -n "$cmd" ] && grep -q "^bin/vramsim $cmd\$" README.md
[ $? = 0 ] && echo "ok 1 - the README's fit example is its third command" || echo "not ok 1 - the README's fit example is its third command"
# shellcheck disable=SC2086
"$VRAMSIM" $cmd > "$tmp/out" 2>/dev/null
if sed 1d "$tmp/block" | diff - "$tmp/out" >&2; then
  echo "ok 2 - bin/vramsim $cmd prints the README's table"
else
  echo "not ok 2 - bin/vramsim $cmd prints the README's table"
fi
# The 13B table: its rows ("| 8 | NVLink + InfiniBand | ...") against the
# script's CSV, seconds to 2 decimals and GiB to 1.
VRAMSIM="$VRAMSIM" NOPLOT=1 bash bench/example-13b.sh "$tmp/13b" > "$tmp/13b.csv" 2>/dev/null
awk -F, 'NR > 1 { printf "| %s | %s | %.2f s | %.2f s | %.2f s | %.1f GiB | %.1f GiB |\n", $1,
                    ($2 == "nvlink-ib" ? "NVLink + InfiniBand" : "PCIe + Ethernet"),
                    $3 / 1e3, $4 / 1e3, $5 / 1e3, $6, $7 }' "$tmp/13b.csv" > "$tmp/13b.rows"
grep -E '^\| (8|64|512) \| (NVLink|PCIe)' README.md > "$tmp/13b.readme"
if [ -s "$tmp/13b.rows" ] && diff "$tmp/13b.readme" "$tmp/13b.rows" >&2; then
  echo "ok 3 - bench/example-13b.sh prints the README's 13B table"
else
  echo "not ok 3 - bench/example-13b.sh prints the README's 13B table"
fi
