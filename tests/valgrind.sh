#!/bin/bash
# valgrind.sh — small runs of vramsim under valgrind memcheck: no invalid
# read or write, no use of uninitialised memory, no definite leak
# (--error-exitcode=1). GLib's caches are not leaks: G_SLICE=always-malloc
# and G_DEBUG=gc-friendly make its memory plain malloc, and only "definitely
# lost" blocks count. Skipped when valgrind is absent or $VRAMSIM is an
# AddressSanitizer build (the two do not run together).
VRAMSIM=$(realpath "${VRAMSIM:-bin/vramsim}")
here=$(cd "$(dirname "$0")/.." && pwd)
export VRAMSIM_CONFIGS="$here/configs" G_SLICE=always-malloc G_DEBUG=gc-friendly
echo "1..5"
skip=
command -v valgrind > /dev/null || skip="valgrind is not installed"
case "$VRAMSIM" in *asan*) skip="an AddressSanitizer build ($VRAMSIM)" ;; esac
if [ -n "$skip" ]; then
  for i in 1 2 3 4 5; do echo "ok $i # SKIP $skip"; done
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
vg () {   # vg DESCRIPTION ARGS...
  local desc=$1; shift
  n=$((n + 1))
  if valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
       --log-file="$tmp/vg.log" "$VRAMSIM" "$@" > "$tmp/out" 2> "$tmp/err"; then
    echo "ok $n - $desc"
  else
    echo "not ok $n - $desc (exit $?)"
    sed -n '1,40s/^/#   /p' "$tmp/vg.log" "$tmp/err"
  fi
}
vg "replay hand-train-step.jsonl with report, series and timeline" \
   replay "$here/traces/hand-train-step.jsonl" -o "$tmp/r.json" --series "$tmp/s.csv" --timeline "$tmp/t.json"
vg "replay hand-uvm-oversub.jsonl (managed memory faulting)" replay "$here/traces/hand-uvm-oversub.jsonl" --format json
vg "replay hand-train-step.jsonl with spill on a small device" \
   replay "$here/traces/hand-train-step.jsonl" --set memory.capacity=512MiB --set policy.oversubscription=spill
vg "convert to binary" convert "$here/traces/hand-train-step.jsonl" "$tmp/t.vtrace"
vg "info on the binary trace" info "$tmp/t.vtrace" --format json
exit 0
