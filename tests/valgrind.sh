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
echo "1..7"
skip=
command -v valgrind > /dev/null || skip="valgrind is not installed"
case "$VRAMSIM" in *asan*) skip="an AddressSanitizer build ($VRAMSIM)" ;; esac
if [ -n "$skip" ]; then
  for i in 1 2 3 4 5 6 7; do echo "ok $i # SKIP $skip"; done
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
# The nsys importer's NCCL NVTX ranges: a generated export, and a broken
# payload (the error path frees what it read).
if python3 "$here/tests/import/gen-nsys-nccl.py" "$tmp/n.sqlite" 2>/dev/null \
   && python3 "$here/tests/import/gen-nsys-nccl.py" "$tmp/b.sqlite" --break short-payload 2>/dev/null; then
  vg "convert an nsys export with NCCL NVTX ranges" convert "$tmp/n.sqlite" "$tmp/n.vtrace"
  n=$((n + 1))
  if valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
       --log-file="$tmp/vg.log" "$VRAMSIM" convert "$tmp/b.sqlite" "$tmp/b.vtrace" > /dev/null 2>&1; [ $? = 1 ]; then
    echo "ok $n - refuse a broken NCCL payload (exit 1, clean)"
  else
    echo "not ok $n - refuse a broken NCCL payload"
    sed -n '1,40s/^/#   /p' "$tmp/vg.log"
  fi
else
  echo "ok 6 # SKIP no python3 with sqlite3"
  echo "ok 7 # SKIP no python3 with sqlite3"
fi
exit 0
