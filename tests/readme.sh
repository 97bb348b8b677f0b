#!/usr/bin/env bash
# readme.sh — the README's own examples print what the README says: the
# `fit` table under its third command (run from the source tree, as the
# README does). The Python example is run by tests/python.sh. TAP output.
set -u
VRAMSIM=${VRAMSIM:-bin/vramsim}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..2"
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
