#!/bin/bash
# sweep-lib.sh — shared by tests/sweep-*.sh (sourced, not a test itself:
# prove runs tests/*.sh, so this file prints a plan of its own when run).
VRAMSIM=${VRAMSIM:-bin/vramsim}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0
ok () { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }

# require_engine N: the N tests of a file need a vramsim that runs. If
# `replay --help` fails (no binary, a broken build, VRAMSIM pointing
# nowhere) every one of them fails with the reason: a test that cannot
# run is a failure, never a skip.
require_engine () {
  local why
  if ! why=$("$VRAMSIM" replay --help 2>&1 > /dev/null); then
    why=$(printf '%s' "${why:-it failed, printing nothing}" | head -1 | cut -c1-200)
    echo "1..$1"
    for i in $(seq 1 "$1"); do echo "not ok $i - cannot run $VRAMSIM replay --help: $why"; done
    exit 1
  fi
}

# A trace captured on a100-80g: a 1 GiB device buffer, a 1 ms kernel that
# reads and writes it, a sync. Peak device bytes are 1 GiB (2 MiB aligned),
# so a 512 MiB device runs out of memory under policy oom.
cat > "$T/t.jsonl" <<'JSONL'
{"vramsim_trace": 1, "time_unit": "ns", "capture": {"config": "a100-80g"}}
{"t": 0, "op": "alloc", "id": 1, "bytes": 1073741824, "kind": "device", "tag": "params"}
{"t": 1000, "op": "kernel", "name": "step", "stream": 0, "dur": 1000000, "reads": [1], "writes": [1]}
{"t": 2000, "op": "sync", "scope": "device"}
{"t": 3000, "op": "free", "id": 1}
JSONL

if [ "${BASH_SOURCE[0]}" = "$0" ]; then echo "1..1"; echo "ok 1 - helper only"; fi
