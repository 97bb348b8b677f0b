#!/bin/bash
# clone.sh — a fresh clone stands alone: the repository (its committed
# HEAD: what a user clones) is cloned into an empty temporary directory
# with nothing beside it, built there, and the tests that read data
# (validation/data and the fixtures made in the repository) run there and
# pass, with no optional data given; only optional-data skips are allowed.
# Also: no tracked file names a path outside the repository (../shared),
# and validation/data stays under 30 MB. About 35 CPU-seconds: the build
# (-O0: the data tests spend their time in zlib and cJSON, not in our
# code) and the data tests only, not the whole suite twice. TAP output.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
case "${VRAMSIM:-}" in
  */build/asan/*) echo "1..0 # SKIP the clone is built and tested by the plain run"; exit 0 ;;
esac
git -C "$here" rev-parse --verify -q HEAD > /dev/null 2>&1 \
  || { echo "1..0 # SKIP not a git checkout: nothing to clone"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0
ok () { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails+1)); fi; }
echo "1..6"

git clone -q --no-hardlinks "$here" "$tmp/vramsim" 2> "$tmp/clone.err" && [ "$(ls -A "$tmp")" = "clone.err
vramsim" ]
ok $? "git clone into an empty directory ($(git -C "$here" rev-parse --short HEAD))"
c=$tmp/vramsim
cd "$c" || exit 1

# What would read outside the clone: a path into ../shared in any tracked
# file (tests, scripts, the Makefile, docs, configs, code).
out=$(git grep -n -e '\.\./shared' -e '/work/shared' -- . ':!tests/clone.sh' ':!tests/docs.sh' 2>/dev/null)
[ -z "$out" ]; ok $? "no tracked file names a path outside the repository${out:+: $(head -3 <<<"$out" | tr '\n' ' ')}"
kb=$(du -sk validation/data | cut -f1)
[ "$kb" -lt 30720 ]; ok $? "validation/data is under 30 MB ($((kb / 1024)) MB)"

# The data tests and what they need, nothing else (plain -O0 build).
bins="build/tests/import/test-import build/tests/import/test-merge-tensor build/tests/mem/test-snapshot-replay build/tests/model/test-kernel-class build/tests/model/validate-across build/bench/validate-network"
nice make -s -j2 CFLAGS='-O0' bin/vramsim $bins > "$tmp/build.log" 2>&1
rc=$?; ok $rc "the clone builds (make bin/vramsim and the data tests' binaries)"
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/build.log" | tail -20

tests="build/tests/import/test-import build/tests/import/test-merge-tensor build/tests/mem/test-snapshot-replay build/tests/model/test-kernel-class tests/validate-across.sh tests/validate-network.sh tests/snapshot-cli.sh"
env -u VRAMSIM_REAL_TRACES -u VRAMSIM_LAMBDA_DATA -u VRAMSIM_DATA VRAMSIM="$c/bin/vramsim" TEST_BUILD="$c/build" \
  VRAMSIM_SKIP_LOG="$tmp/skips.log" prove -j2 --exec tests/tap-run $tests > "$tmp/prove.log" 2>&1
rc=$?; ok $rc "the data tests pass in the clone ($(grep -o 'Files=[0-9]*, Tests=[0-9]*' "$tmp/prove.log"))"
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/prove.log" | tail -30
# Every skip there is optional data (validation/data/README.md), none a
# file the clone should have had.
others=$(grep -v ': ok [0-9]* .*# SKIP optional:\|: ok [0-9]* # SKIP optional:' "$tmp/skips.log" 2>/dev/null)
[ -z "$others" ]; ok $? "the only skips are of optional data ($(wc -l < "$tmp/skips.log" 2>/dev/null || echo 0))${others:+: $(head -2 <<<"$others" | tr '\n' ' ')}"
exit $(( fails > 0 ))
