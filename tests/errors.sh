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
trow "wrong binary version" 'good_vtrace; { head -c 8 good.vtrace; printf "\005"; tail -c +10 good.vtrace; } > in.vtrace; rm good.vtrace' \
   "in.vtrace: header: binary trace version 5 is newer" in.vtrace
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
T="$here/traces/hand-train-step.jsonl"
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
row "config: capacity below the context" ':' \
    "memory.capacity: 256 MiB is below memory.context (322 MiB), the CUDA context" replay "$T" --set memory.capacity=256MiB -o out.json
row "config: uvm without room beside the context" ':' \
    "memory.capacity: 323 MiB is below memory.context (322 MiB) plus one uvm.evict_unit (2 MiB)" \
    replay "$T" --set memory.capacity=323MiB --set policy.oversubscription=uvm -o out.json
row "config: JSON syntax error" "cfg '{\"extends\": \"a100-80g\",' ' \"memory\": {\"capacity\": 80GiB}}'" \
    "cfg.json:2:" replay "$T" -c cfg.json -o out.json
row "config: extends a missing preset" "cfg '{\"extends\": \"a100-81g\"}'" \
    "cfg.json: extends: unknown preset 'a100-81g'" replay "$T" -c cfg.json -o out.json
row "missing preset (-c)" ':' "unknown preset 'a100-81g'; did you mean 'a100-80g'? (presets: a100-40g," replay "$T" -c a100-81g -o out.json
row "missing file for -c" ':' "nope.json: cannot read: No such file or directory" replay "$T" -c nope.json -o out.json
row "--set: bad unit" ':' "--set 'memory.capacity=24GX': memory.capacity: '24GX': unknown size unit 'GX'" \
    replay "$T" --set memory.capacity=24GX -o out.json
row "--set: unknown key" ':' "--set 'memory.capcity=24GiB': memory.capcity: unknown key" \
    replay "$T" --set memory.capcity=24GiB -o out.json
row "--set: efficiency 1.5" ':' "link.efficiency: must be in (0, 1]" replay "$T" --set link.efficiency=1.5 -o out.json
row "config: network of zero bandwidth" "cfg '{\"extends\": \"a100-80g\", \"network\": {\"intra\": {\"bandwidth\": \"0GB/s\"}}}'" \
   "cfg.json: network.intra.bandwidth: must be greater than 0" replay "$T" -c cfg.json -o out.json
row "--set: network of zero bandwidth" ':' "network.inter.bandwidth: must be greater than 0" \
   replay "$T" --set network.inter.bandwidth=0 -o out.json
row "--set: zero bandwidth" ':' "memory.bandwidth: must be greater than 0" replay "$T" --set memory.bandwidth=0 -o out.json
row "--set: a job past 2^24 ranks" ':' "network.ranks: at most 16777216" replay "$T" --set network.ranks=4294967295 -o out.json
row "--set: an algorithm the hardware lacks" ':' "network.algorithm: nvls needs NVLink SHARP" \
   replay "$T" --set network.algorithm=nvls -o out.json
row "--set: LL128 over PCIe" ':' "network.protocol: LL128 needs NVLink between the node's GPUs" \
   replay "$T" -c l40s --set network.protocol=LL128 -o out.json
row "sweep: bad --vary value" ':' "memory.capacity" sweep "$T" -c a100-80g --vary memory.capacity=8GiB,8QB -o out.csv
# ---- convert --kernel-bytes tables ----
row "kernel-bytes: bad size" "printf 'axpy,1GiB\\nother,lots\\n' > kb.csv" "kb.csv:2: " \
    convert "$T" out.jsonl --kernel-bytes kb.csv
row "kernel-bytes: ncu CSV, unknown unit" "printf '%s\\n' '\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"' '\"k\",\"dram__bytes.sum\",\"furlong\",\"3\"' > kb.csv" \
    "kb.csv:2: unknown unit 'furlong'" convert "$T" out.jsonl --kernel-bytes kb.csv
row "kernel-bytes: unterminated quote" "printf '\"axpy(float,1GiB\\n' > kb.csv" "kb.csv:1: unterminated quote" \
    convert "$T" out.jsonl --kernel-bytes kb.csv
row "kernel-bytes: missing file" ':' "nope.csv" convert "$T" out.jsonl --kernel-bytes nope.csv
# ---- issue 16 (rd16): traces and values that were read wrongly ----
trow "text after the header on line 1" "raw '{\"vramsim_trace\": 1} {\"t\": 0, \"op\": \"mark\", \"name\": \"x\"}\n'" \
   "in.jsonl:1: text after the header object" in.jsonl
trow "format version 1e400" "raw '{\"vramsim_trace\": 1e400}\n'" \
   "in.jsonl:1: header field 'vramsim_trace' must be a positive integer" in.jsonl
trow "binary magic, then JSONL" "{ printf 'VRAMTRC\032'; printf '%s\n' '$H' '$A1'; } > in.vtrace" \
   "in.vtrace: header: the binary magic is followed by \"{\"vr\", not a format version" in.vtrace
trow "gzip stream cut short" "printf '%s\n' '$H' '$A1' | gzip | head -c 40 > in.jsonl" \
   "in.jsonl: gzip: truncated (the compressed data ends early)" in.jsonl
trow "gzip of something else" "echo hello | gzip > in.jsonl" "in.jsonl: not a vramsim trace (neither JSON Lines nor the binary format, once gunzipped)" in.jsonl
trow "UTF-16 text" "printf '\377\376{\000}\000' > in.jsonl" "in.jsonl: not a vramsim trace: the file is UTF-16 text" in.jsonl
# Files to import first: what to convert (or export) is in the message.
row "an Nsight Systems SQLite export (replay)" "printf 'SQLite format 3\000rest' > in.sqlite" \
   "in.sqlite: not a vramsim trace: an SQLite database (an Nsight Systems export?) is imported first: vramsim convert in.sqlite OUT.vtrace" \
   replay in.sqlite -c a100-80g -o out.json
row "a PyTorch memory snapshot (info)" "printf '\200\004\225\002' > in.pickle" \
   "in.pickle: not a vramsim trace: a Python pickle (a PyTorch memory snapshot?) is imported first: vramsim convert in.pickle OUT.vtrace" \
   info in.pickle
row "an Nsight Systems report (fit)" "printf 'report' > in.nsys-rep" \
   "in.nsys-rep: not a vramsim trace: an Nsight Systems report is read from its SQLite export: nsys export --type sqlite -o report.sqlite in.nsys-rep" \
   fit in.nsys-rep -c a100-80g
trow "field given twice" "trace '{\"t\": 0, \"op\": \"alloc\", \"id\": 1, \"bytes\": 5, \"bytes\": 6, \"kind\": \"device\"}'" \
   "in.jsonl:2: field 'bytes' appears twice" in.jsonl
trow "header key given twice" "raw '{\"vramsim_trace\": 1, \"capture\": {\"config\": \"a100-80g\", \"config\": \"h100-sxm\"}}\n'" \
   "in.jsonl:1: header field 'capture.config' appears twice" in.jsonl
trow "NUL in a header string" "raw '{\"vramsim_trace\": 1, \"capture\": {\"device\": \"A100\\\\u0000x\"}}\n'" \
   "in.jsonl:1: the header holds a NUL character" in.jsonl
trow "integer that underflows (1e-400)" "trace '{\"t\": 1e-400, \"op\": \"mark\", \"name\": \"x\"}'" \
   "in.jsonl:2: field 't' must be a non-negative integer (1e-400)" in.jsonl
trow "kernel: unknown precision" "trace '{\"t\": 0, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 1, \"precision\": \"fp4\"}'" \
   "in.jsonl:2: field 'precision': unknown value \"fp4\"" in.jsonl
trow "kernel: grid of two" "trace '{\"t\": 0, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 1, \"grid\": [4, 4]}'" \
   "in.jsonl:2: field 'grid' must be three positive integers" in.jsonl
trow "kernel: collective of 0 ranks" "trace '{\"t\": 0, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 1, \"collective\": {\"kind\": \"all_reduce\", \"bytes\": 8, \"ranks\": 0}}'" \
   "in.jsonl:2: field 'collective.ranks' must be at least 1" in.jsonl
trow "kernel: negative flops" "trace '{\"t\": 0, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 1, \"flops\": -5}'" \
   "in.jsonl:2: field 'flops' must not be negative (-5)" in.jsonl
trow "kernel: flops not a number" "trace '{\"t\": 0, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 1, \"flops\": \"many\"}'" \
   "in.jsonl:2: field 'flops' must be a non-negative number" in.jsonl
trow "kernel: block with a 0" "trace '{\"t\": 0, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 1, \"block\": [128, 0, 1]}'" \
   "in.jsonl:2: field 'block' must be three positive integers [x, y, z] (block y is 0)" in.jsonl
trow "kernel: unknown collective kind" "trace '{\"t\": 0, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 1, \"collective\": {\"kind\": \"all_sum\", \"bytes\": 8, \"ranks\": 2}}'" \
   "in.jsonl:2: field 'collective.kind': unknown value \"all_sum\"" in.jsonl
trow "kernel: collective of negative bytes" "trace '{\"t\": 0, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 1, \"collective\": {\"kind\": \"all_reduce\", \"bytes\": -8, \"ranks\": 2}}'" \
   "in.jsonl:2: field 'collective.bytes' must not be negative (-8)" in.jsonl
# A collective's group (communicator): C8 is an all-reduce on 8 ranks.
C8='{"t": 0, "op": "kernel", "name": "k", "dur": 1, "collective": {"kind": "all_reduce", "bytes": 8, "ranks": 8, "group": '
trow "kernel: collective group id negative" "trace '$C8{\"id\": -3}}}'" \
   "in.jsonl:2: field 'collective.group.id' must not be negative (-3)" in.jsonl
trow "kernel: collective group id 0" "trace '$C8{\"id\": 0, \"role\": \"dp\"}}}'" \
   "in.jsonl:2: field 'collective.group.id' must be positive (0 is no communicator)" in.jsonl
trow "kernel: collective group of unknown role" "trace '$C8{\"id\": 3, \"role\": \"zp\"}}}'" \
   "in.jsonl:2: field 'collective.group.role': unknown value \"zp\" (expected dp, tp, pp, ep or cp)" in.jsonl
trow "kernel: collective group id reused with another size" \
   "trace '$C8{\"id\": 3, \"role\": \"dp\"}}}' '{\"t\": 1, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 1, \"collective\": {\"kind\": \"all_reduce\", \"bytes\": 8, \"ranks\": 4, \"group\": {\"id\": 3, \"role\": \"dp\"}}}'" \
   "in.jsonl:3: field 'collective.ranks': group 3 has 4 ranks here but 8 at line 2" in.jsonl
row "replay: collective group larger than the job" "trace '$C8{\"id\": 3, \"role\": \"tp\"}}}'" \
   "in.jsonl:2: field 'collective.ranks': group 3 has 8 ranks, more than the job's 4 (network.ranks)" \
   replay in.jsonl -c a100-80g --set network.ranks=4 -o out.json
row "--set: a role resized beyond the job" ':' "network.dp: 128 is more than the job's 64 GPUs (network.ranks)" \
   replay "$T" --set network.ranks=64 --set network.dp=128 -o out.json
trow "header: unknown allocations" "raw '{\"vramsim_trace\": 1, \"allocations\": \"cuda\"}\n'" \
   "in.jsonl:1: header field 'allocations' must be \"tensor\" or \"driver\"" in.jsonl
trow "header: unknown allocation_sizes" "raw '{\"vramsim_trace\": 1, \"allocation_sizes\": \"tensor\"}\n'" \
   "in.jsonl:1: header field 'allocation_sizes' must be \"block\" or \"request\"" in.jsonl
row "header capture.config is a path (replay)" "raw '{\"vramsim_trace\": 1, \"capture\": {\"config\": \"/dev/stdin\"}}\n'" \
   "in.jsonl: header field 'capture.config' is \"/dev/stdin\", not a preset (presets: a100-40g," replay in.jsonl -c a100-80g -o out.json
row "header capture.config is a path (sweep)" "raw '{\"vramsim_trace\": 1, \"capture\": {\"config\": \"../../../etc/passwd\"}}\n'" \
   "in.jsonl: header field 'capture.config' is \"../../../etc/passwd\", not a preset" sweep in.jsonl -c a100-80g -o out.csv
row "Kineto: NUL in a name" "printf '%s\\n' '{\"schemaVersion\": 1,' '\"traceEvents\": [{\"name\": \"gemm\\u0000x\", \"ph\": \"X\"}]}' > in.json" \
   "in.json:2: a string holds a NUL character (\\u0000): vramsim would cut the name there" convert in.json out.jsonl
# ---- nsys exports' NCCL payloads (a generated export, tests/import/gen-nsys-nccl.py) ----
G="$here/tests/import/gen-nsys-nccl.py"
row "nsys: NCCL payload shorter than its header" "python3 '$G' in.sqlite --break short-blob" \
   "in.sqlite: NVTX_EVENTS rowid 46: NCCL payload (binaryData) shorter than its 32-byte header" convert in.sqlite out.jsonl
row "nsys: NCCL payload shorter than its size" "python3 '$G' in.sqlite --break short-payload" \
   "in.sqlite: NVTX_EVENTS rowid 46: NCCL payload (binaryData) shorter than its payload size" convert in.sqlite out.jsonl
row "nsys: NCCL payload schema offset" "python3 '$G' in.sqlite --break offset" \
   "in.sqlite: NVTX_PAYLOAD_SCHEMA_ENTRIES rowid 8: offset out of range" convert in.sqlite out.jsonl
row "nsys: NCCL communicator of 0 ranks" "python3 '$G' in.sqlite --break ranks0" \
   "in.sqlite: NVTX_EVENTS rowid 3: NCCL communicator size below 1 or above 2^32 - 1" convert in.sqlite out.jsonl
row "nsys: NCCL message of 2^63 bytes" "python3 '$G' in.sqlite --break msg63" \
   "in.sqlite: NVTX_EVENTS rowid 5: NCCL message size is 2^63 bytes or more" convert in.sqlite out.jsonl
row "nsys: NCCL range ending before it starts" "python3 '$G' in.sqlite --break end-before-start" \
   "in.sqlite: NVTX_EVENTS rowid 46: NCCL range ends before it starts" convert in.sqlite out.jsonl
row "convert: header over 1 MiB to binary" "python3 -c 'print(\"{\\\"vramsim_trace\\\": 1, \\\"note\\\": \\\"\" + \"x\" * 1100000 + \"\\\"}\")' > big.jsonl" \
   "out.vtrace: the header is 1100051 bytes of JSON; the binary format holds at most 1048576" convert big.jsonl out.vtrace
row "convert: name over 1 MiB to binary" "python3 -c 'print(\"{\\\"vramsim_trace\\\": 1}\"); print(\"{\\\"t\\\": 0, \\\"op\\\": \\\"mark\\\", \\\"name\\\": \\\"\" + \"x\" * 1100000 + \"\\\"}\")' > big.jsonl" \
   "out.vtrace: event 0: the name is 1100000 bytes; the binary format holds strings of at most 1048576" convert big.jsonl out.vtrace
row "--set: size without a unit" ':' "memory.capacity: '24': a size needs a unit, such as \"24GiB\" or \"24B\" (units: B KB MB GB TB KiB MiB GiB TiB; only 0 may go without one)" \
    replay "$T" --set memory.capacity=24 -o out.json
row "config: bandwidth without a unit" "cfg '{\"extends\": \"a100-80g\", \"memory\": {\"bandwidth\": 2039000000000}}'" \
    "cfg.json: memory.bandwidth: 2039000000000 has no unit: a bandwidth needs one" replay "$T" -c cfg.json -o out.json
row "config: number that underflows (1e-400)" "cfg '{\"extends\": \"a100-80g\",' ' \"memory\": {\"efficiency\": 1e-400}}'" \
    "cfg.json:2: 1e-400 is too small to represent (it is not 0)" replay "$T" -c cfg.json -o out.json
row "config: NUL in a string" "cfg '{\"extends\": \"a100-80g\",' ' \"memory\": {\"tech\": \"HBM\\u0000x\"}}'" \
    "cfg.json:2: a string holds a NUL character" replay "$T" -c cfg.json -o out.json
row "--set: space after the unit" ':' "memory.capacity: '1GiB ': text after the unit" replay "$T" --set 'memory.capacity=1GiB ' -o out.json
row "--set: size that underflows" ':' "'1e-400B': size too small to represent (it is not 0)" replay "$T" --set memory.reserved=1e-400B -o out.json
row "--set: time of 2^64 - 1 ns" ':' "'18446744073709551615ns': time too large (below 2^63 ns, 292 years)" \
    replay "$T" --set memory.latency=18446744073709551615ns -o out.json
row "--set: efficiency 1e-310" ':' "memory.efficiency: 2039 GB/s x memory.efficiency 1e-310 = 2.039e-298 B/s is too slow to simulate: a 1 GiB transfer would end beyond 2^63 ns" \
    replay "$T" --set memory.efficiency=1e-310 -o out.json
row "--set: bandwidth 1e-290 B/s" ':' "memory.bandwidth: 1e-290 B/s x memory.efficiency 0.86" replay "$T" --set memory.bandwidth=1e-290B/s -o out.json
row "--set: tflops 1e-310" ':' "compute.tflops: 1e-310 is too slow to simulate" replay "$T" --set compute.tflops=1e-310 -o out.json
row "--set: uvm.page 4 B" ':' "uvm.page: 4 B is below 4KiB, the smallest page a GPU or host maps" replay "$T" --set uvm.page=4B -o out.json
row "config: 100,000 tiers" "python3 -c 'import json; json.dump({\"extends\": \"a100-80g\", \"tiers\": [{\"name\": \"t%d\" % i, \"capacity\": \"1GiB\", \"bandwidth\": \"1GB/s\"} for i in range(100000)]}, open(\"cfg.json\", \"w\"))'" \
    "cfg.json: tiers: 100000 tiers; at most 64" replay "$T" -c cfg.json -o out.json
row "config: extends chain of 34 files" "for i in \$(seq 0 32); do echo \"{\\\"extends\\\": \\\"c\$((i + 1)).json\\\"}\" > c\$i.json; done; echo '{\"extends\": \"a100-80g\"}' > c33.json; mv c0.json cfg.json" \
    "cfg.json: extends: chain deeper than 32 files (it reached ./c32.json)" replay "$T" -c cfg.json -o out.json
# ---- outputs ----
row "unwritable report (-o)" ':' "nodir/out.json" replay "$T" -o nodir/out.json
row "unwritable --series" ':' "nodir/out.csv" replay "$T" --series nodir/out.csv
row "unwritable --timeline" ':' "nodir/out.json" replay "$T" --timeline nodir/out.json
row "unwritable convert OUT" ':' "OUT nodir/out.vtrace: cannot write in nodir" convert "$T" nodir/out.vtrace
row "unwritable sweep -o" ':' "nodir/out.csv" sweep "$T" -c a100-80g -o nodir/out.csv
row "empty -o" ':' "report: an empty file name" replay "$T" -o ''
row "--jobs-file a folder" 'mkdir d' "--jobs-file d: is a folder" sweep "$T" -c a100-80g --jobs-file d
# Outputs onto inputs (same device and inode), refused naming both.
row "report onto the trace" 'cp "$T" in.jsonl' "report in.jsonl is the same file as the trace in.jsonl" replay in.jsonl -o in.jsonl
row "--series onto the report" ':' "--series r.json is the same file as the report r.json" replay "$T" -o r.json --series r.json
row "convert OUT onto IN" 'cp "$T" in.jsonl; ln in.jsonl out.jsonl' "OUT out.jsonl is the same file as IN in.jsonl" convert in.jsonl out.jsonl
row "sweep -o onto the trace" 'cp "$T" in.jsonl' "-o in.jsonl is the same file as the trace in.jsonl" sweep in.jsonl -c a100-80g -o in.jsonl
row "sweep --jobs-file onto a config" 'echo "{\"extends\": \"a100-80g\"}" > c.json' "--jobs-file c.json is the same file as the config c.json" \
    sweep "$T" -c c.json --jobs-file c.json
# ---- sweeps across machines ----
row "--jobs-file into a folder of older reports" 'mkdir jobs-reports; echo {} > jobs-reports/run-00000.json' \
    "is not empty (reports of an earlier sweep?): add --resume" sweep "$T" -c a100-80g --jobs-file jobs.txt
row "--merge --jobs-file with a run missing" '"$VRAMSIM" sweep "$T" -c a100-80g --jobs-file jobs.txt 2> /dev/null' \
    "of 1 runs, 1 have no report" sweep --merge --jobs-file jobs.txt -o out.csv
row "--merge --jobs-file of no jobs file" ':' "--jobs-file jobs.txt: no such file" sweep --merge --jobs-file jobs.txt -o out.csv
row "--status --jobs-file of no jobs file" ':' "--jobs-file jobs.txt: no such file" sweep --status --jobs-file jobs.txt
row "--resume with another sweep's jobs file" '"$VRAMSIM" sweep "$T" -c a100-80g --jobs-file jobs.txt 2> /dev/null' \
    "jobs.txt holds the commands of another sweep" sweep "$T" -c rtx3090 --jobs-file jobs.txt --resume
row "--merge of --shard parts, one missing" '"$VRAMSIM" sweep "$T" -c a100-80g,rtx3090 --shard 1/2 -o p1.csv' \
    "1 of 2 runs are in no part (the first: run 1, rtx3090)" sweep "$T" -c a100-80g,rtx3090 --merge p1.csv -o out.csv
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
