#!/bin/bash
# errors.sh — docs/errors.md as tests: every class of bad input, run through
# vramsim. For each row: exit status 1, the message (a stable part naming
# the file and the line, event or field), and no output file left behind —
# neither the -o/OUT file nor a temporary beside it.
#   tests/errors.sh            TAP
#   tests/errors.sh --table    the Markdown rows of docs/errors.md, with the
#                              messages vramsim prints now
VRAMSIM=$(realpath "${VRAMSIM:-bin/vramsim}")
here=$(cd "$(dirname "$0")/.." && pwd)
export VRAMSIM_CONFIGS="$here/configs"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
table=0
[ "${1:-}" = "--table" ] && table=1

H='{"vramsim_trace": 1, "time_unit": "ns", "capture": {"config": "a100-80g"}}'
A1='{"t": 0, "op": "alloc", "id": 1, "bytes": 1048576, "kind": "device"}'
# trace LINE...: in.jsonl = the header, then LINEs.
trace () { printf '%s\n' "$H" "$@" > in.jsonl; }
raw () { printf "$@" > in.jsonl; }
# A valid binary trace of 8 events, then the file cut or patched.
good_vtrace () {
  trace "$A1" '{"t": 10, "op": "alloc", "id": 2, "bytes": 4096, "kind": "pinned"}' \
    '{"t": 20, "op": "copy", "dir": "h2d", "src": 2, "dst": 1, "bytes": 4096, "stream": 1, "async": true}' \
    '{"t": 30, "op": "kernel", "name": "gemm_kernel_with_a_long_name", "stream": 1, "dur": 5000, "reads": [1], "writes": [1]}' \
    '{"t": 40, "op": "sync", "scope": "device"}' '{"t": 50, "op": "mark", "name": "step"}' \
    '{"t": 60, "op": "free", "id": 2}' '{"t": 70, "op": "free", "id": 1}'
  "$VRAMSIM" convert in.jsonl good.vtrace && rm in.jsonl
}
cfg () { printf '%s\n' "$@" > cfg.json; }

n=0
fails=0
# row CLASS SETUP EXPECT ARGS...: runs SETUP (shell code) in a fresh
# directory, then vramsim ARGS there.
row () {
  local class=$1 setup=$2 expect=$3; shift 3
  n=$((n + 1))
  local d=$tmp/$n
  mkdir -p "$d"
  (cd "$d" && eval "$setup") > /dev/null 2>&1
  ls -A "$d" > "$tmp/before"
  (cd "$d" && timeout 30 "$VRAMSIM" "$@" > "$tmp/stdout" 2> "$tmp/stderr") 2> /dev/null
  local rc=$?
  local msg
  msg=$(head -c 600 "$tmp/stderr" | tr '\n' ' ' | sed 's/ *$//')
  ls -A "$d" > "$tmp/after"
  local left
  left=$(comm -13 "$tmp/before" "$tmp/after" | tr '\n' ' ')
  if [ $table = 1 ]; then
    local cmd="vramsim $*"
    printf '| %s | `%s` | %s | `%s` |\n' "$class" "$cmd" "$rc" "$msg"
    return
  fi
  local t=$(( (n - 1) * 3 ))
  if [ $rc = 1 ]; then echo "ok $((t + 1)) - $class: exit 1"
  else echo "not ok $((t + 1)) - $class: exit $rc, want 1 (vramsim $*)"; fails=$((fails + 1)); fi
  if grep -qF -- "$expect" "$tmp/stderr" && [ "$(wc -l < "$tmp/stderr")" -le 2 ]; then
    echo "ok $((t + 2)) - $class: message"
  else
    echo "not ok $((t + 2)) - $class: message lacks '$expect'"; echo "#   got: $msg"; fails=$((fails + 1))
  fi
  if [ -z "$left" ]; then echo "ok $((t + 3)) - $class: no output left"
  else echo "not ok $((t + 3)) - $class: left behind: $left"; fails=$((fails + 1)); fi
}

rows () {
# ---- traces (each through replay -o and convert) ----
trow () {   # trow CLASS SETUP EXPECT FILE
  row "$1 (replay)" "$2" "$3" replay "$4" -c a100-80g -o out.json
  row "$1 (convert)" "$2" "$3" convert "$4" out.vtrace
}
trow "truncated binary trace" 'good_vtrace; head -c 140 good.vtrace > in.vtrace; rm good.vtrace' \
   "in.vtrace: event 3: truncated: the file ends inside a record" in.vtrace
trow "truncated binary header" 'good_vtrace; head -c 30 good.vtrace > in.vtrace; rm good.vtrace' \
   "in.vtrace: header: truncated binary trace" in.vtrace
trow "binary trace cut inside the magic" 'good_vtrace; head -c 5 good.vtrace > in.vtrace; rm good.vtrace' \
   "in.vtrace: truncated binary trace (5 bytes)" in.vtrace
trow "wrong magic" 'good_vtrace; { printf "VRAMTRX\032"; tail -c +9 good.vtrace; } > in.vtrace; rm good.vtrace' \
   "in.vtrace: not a vramsim trace" in.vtrace
trow "wrong binary version" 'good_vtrace; { head -c 8 good.vtrace; printf "\003"; tail -c +10 good.vtrace; } > in.vtrace; rm good.vtrace' \
   "in.vtrace: header: binary trace version 3 is newer" in.vtrace
trow "wrong JSONL version" "raw '{\"vramsim_trace\": 2, \"time_unit\": \"ns\"}\n'" \
   "in.jsonl:1: trace format version 2 is newer" in.jsonl
trow "no header line" "raw '{\"t\": 0, \"op\": \"mark\", \"name\": \"x\"}\n'" \
   "in.jsonl:1: not a vramsim trace" in.jsonl
trow "time unit other than ns" "raw '{\"vramsim_trace\": 1, \"time_unit\": \"us\"}\n'" \
   "in.jsonl:1: header field 'time_unit'" in.jsonl
trow "empty file" ': > in.jsonl' "in.jsonl: empty file, not a trace" in.jsonl
trow "not a trace at all" "raw 'hello\n'" "in.jsonl: not a vramsim trace" in.jsonl
trow "malformed JSON line" "trace '$A1' '{\"t\": 5, \"op\": \"free\", \"id\": 1'" "in.jsonl:3: invalid JSON" in.jsonl
trow "wrong type (string for integer)" "trace '{\"t\": 0, \"op\": \"alloc\", \"id\": 1, \"bytes\": \"1024\", \"kind\": \"device\"}'" \
   "in.jsonl:2: field 'bytes' must be a non-negative integer" in.jsonl
trow "wrong type (fraction)" "trace '{\"t\": 0, \"op\": \"alloc\", \"id\": 1, \"bytes\": 10.5, \"kind\": \"device\"}'" \
   "in.jsonl:2: field 'bytes' must be a non-negative integer (10.5)" in.jsonl
trow "negative size" "trace '{\"t\": 0, \"op\": \"alloc\", \"id\": 1, \"bytes\": -1024, \"kind\": \"device\"}'" \
   "in.jsonl:2: field 'bytes' must not be negative (-1024)" in.jsonl
trow "absurd size" "trace '{\"t\": 0, \"op\": \"alloc\", \"id\": 1, \"bytes\": 99999999999999999999999, \"kind\": \"device\"}'" \
   "in.jsonl:2: field 'bytes' is out of range" in.jsonl
trow "unknown enum value" "trace '{\"t\": 0, \"op\": \"alloc\", \"id\": 1, \"bytes\": 10, \"kind\": \"texture\"}'" \
   "in.jsonl:2: field 'kind': unknown value \"texture\"" in.jsonl
trow "id 0" "trace '{\"t\": 0, \"op\": \"alloc\", \"id\": 0, \"bytes\": 10, \"kind\": \"device\"}'" \
   "in.jsonl:2: field 'id': an allocation id must be positive" in.jsonl
trow "id allocated twice" "trace '$A1' '$A1'" "in.jsonl:3: field 'id': allocation 1 is already live" in.jsonl
trow "id freed twice" "trace '$A1' '{\"t\": 5, \"op\": \"free\", \"id\": 1}' '{\"t\": 6, \"op\": \"free\", \"id\": 1}'" \
   "in.jsonl:4: field 'id': allocation 1 is not live" in.jsonl
trow "id never allocated" "trace '{\"t\": 5, \"op\": \"free\", \"id\": 7}'" \
   "in.jsonl:2: field 'id': allocation 7 is not live" in.jsonl
trow "kernel reads an id never allocated" "trace '$A1' '{\"t\": 5, \"op\": \"kernel\", \"name\": \"k\", \"stream\": 1, \"dur\": 10, \"reads\": [1, 9]}'" \
   "in.jsonl:3: field 'reads': allocation 9 is not live" in.jsonl
trow "non-monotonic time" "trace '$A1' '{\"t\": 10, \"op\": \"mark\", \"name\": \"a\"}' '{\"t\": 9, \"op\": \"mark\", \"name\": \"b\"}'" \
   "in.jsonl:4: field 't': 9 is earlier than the previous event of thread 0 (t 10)" in.jsonl
trow "unknown op" "trace '{\"t\": 0, \"op\": \"malloc\", \"id\": 1}'" "in.jsonl:2: field 'op': unknown op \"malloc\"" in.jsonl
trow "missing required field" "trace '{\"t\": 0, \"op\": \"kernel\", \"name\": \"k\", \"stream\": 1}'" \
   "in.jsonl:2: missing field 'dur' (required for kernel)" in.jsonl
trow "unreadable input (missing)" ':' "nope.jsonl: cannot open: No such file or directory" nope.jsonl
trow "unreadable input (a directory)" 'mkdir dir.jsonl' "dir.jsonl: is a directory, not a trace" dir.jsonl
row "error late in a long trace (replay)" \
    "{ echo '$H'; for i in \$(seq 1 2000); do echo \"{\\\"t\\\": \$i, \\\"op\\\": \\\"mark\\\", \\\"name\\\": \\\"m\\\"}\"; done; echo '{\"t\": 1, \"op\": \"mark\", \"name\": \"late\"}'; } > in.jsonl" \
    "in.jsonl:2002: field 't'" replay in.jsonl -c a100-80g -o out.json --series out.csv --timeline out.timeline.json
row "error late in a long trace (convert)" \
    "{ echo '$H'; for i in \$(seq 1 2000); do echo \"{\\\"t\\\": \$i, \\\"op\\\": \\\"mark\\\", \\\"name\\\": \\\"m\\\"}\"; done; echo '{\"t\": 1, \"op\": \"mark\", \"name\": \"late\"}'; } > in.jsonl" \
    "in.jsonl:2002: field 't'" convert in.jsonl out.vtrace
# ---- configs ----
T="$here/traces/train-step.jsonl"
row "config: unknown key" "cfg '{\"extends\": \"a100-80g\", \"memory\": {\"capcity\": \"1GiB\"}}'" \
    "cfg.json: memory.capcity: unknown key" replay "$T" -c cfg.json -o out.json
row "config: bad unit" "cfg '{\"extends\": \"a100-80g\", \"memory\": {\"capacity\": \"80GX\"}}'" \
    "cfg.json: memory.capacity: '80GX': unknown size unit 'GX'" replay "$T" -c cfg.json -o out.json
row "config: wrong type" "cfg '{\"extends\": \"a100-80g\", \"memory\": {\"capacity\": true}}'" \
    "cfg.json: memory.capacity: expected a size" replay "$T" -c cfg.json -o out.json
row "config: efficiency 1.5" "cfg '{\"extends\": \"a100-80g\", \"memory\": {\"efficiency\": 1.5}}'" \
    "cfg.json: memory.efficiency: must be in (0, 1]" replay "$T" -c cfg.json -o out.json
row "config: zero bandwidth" "cfg '{\"extends\": \"a100-80g\", \"link\": {\"bandwidth\": \"0GB/s\"}}'" \
    "cfg.json: link.bandwidth: must be greater than 0" replay "$T" -c cfg.json -o out.json
row "config: negative size" "cfg '{\"extends\": \"a100-80g\", \"memory\": {\"capacity\": -5}}'" \
    "cfg.json: memory.capacity: a size cannot be negative" replay "$T" -c cfg.json -o out.json
row "config: reserved >= capacity" "cfg '{\"extends\": \"a100-80g\", \"memory\": {\"capacity\": \"1GiB\", \"reserved\": \"2GiB\"}}'" \
    "cfg.json: memory.reserved:" replay "$T" -c cfg.json -o out.json
row "config: JSON syntax error" "cfg '{\"extends\": \"a100-80g\",' ' \"memory\": {\"capacity\": 80GiB}}'" \
    "cfg.json:2:" replay "$T" -c cfg.json -o out.json
row "config: extends a missing preset" "cfg '{\"extends\": \"a100-81g\"}'" \
    "cfg.json: extends: unknown preset 'a100-81g'" replay "$T" -c cfg.json -o out.json
row "missing preset (-c)" ':' "unknown preset 'a100-81g' (presets: a100-40g," replay "$T" -c a100-81g -o out.json
row "missing file for -c" ':' "nope.json: cannot read: No such file or directory" replay "$T" -c nope.json -o out.json
row "--set: bad unit" ':' "--set 'memory.capacity=24GX': memory.capacity: '24GX': unknown size unit 'GX'" \
    replay "$T" --set memory.capacity=24GX -o out.json
row "--set: unknown key" ':' "--set 'memory.capcity=24GiB': memory.capcity: unknown key" \
    replay "$T" --set memory.capcity=24GiB -o out.json
row "--set: efficiency 1.5" ':' "link.efficiency: must be in (0, 1]" replay "$T" --set link.efficiency=1.5 -o out.json
row "--set: zero bandwidth" ':' "memory.bandwidth: must be greater than 0" replay "$T" --set memory.bandwidth=0 -o out.json
row "sweep: bad --vary value" ':' "memory.capacity" sweep "$T" -c a100-80g --vary memory.capacity=8GiB,8QB -o out.csv
# ---- convert --kernel-bytes tables ----
row "kernel-bytes: bad size" "printf 'axpy,1GiB\\nother,lots\\n' > kb.csv" "kb.csv:2: " \
    convert "$T" out.jsonl --kernel-bytes kb.csv
row "kernel-bytes: ncu CSV, unknown unit" "printf '%s\\n' '\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"' '\"k\",\"dram__bytes.sum\",\"furlong\",\"3\"' > kb.csv" \
    "kb.csv:2: unknown unit 'furlong'" convert "$T" out.jsonl --kernel-bytes kb.csv
row "kernel-bytes: unterminated quote" "printf '\"axpy(float,1GiB\\n' > kb.csv" "kb.csv:1: unterminated quote" \
    convert "$T" out.jsonl --kernel-bytes kb.csv
row "kernel-bytes: missing file" ':' "nope.csv" convert "$T" out.jsonl --kernel-bytes nope.csv
# ---- outputs ----
row "unwritable report (-o)" ':' "nodir/out.json" replay "$T" -o nodir/out.json
row "unwritable --series" ':' "nodir/out.csv" replay "$T" --series nodir/out.csv
row "unwritable --timeline" ':' "nodir/out.json" replay "$T" --timeline nodir/out.json
row "unwritable convert OUT" ':' "nodir/out.vtrace: cannot create" convert "$T" nodir/out.vtrace
row "unwritable sweep -o" ':' "nodir/out.csv" sweep "$T" -c a100-80g -o nodir/out.csv
}

if [ $table = 1 ]; then
  echo "| class | command | exit | message |"
  echo "| --- | --- | --- | --- |"
  rows
  exit 0
fi
# Count the rows first (a dry pass would run them): 3 tests per row.
nrows=$(grep -cE '^(trow|row) "' "$0")
ntr=$(grep -cE '^trow "' "$0")
echo "1..$(( (nrows + ntr) * 3 ))"
rows
exit 0
