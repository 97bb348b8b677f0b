#!/bin/bash
# trace-cli.sh — `vramsim convert` and `vramsim info` from the command line:
# usage errors, lossless round trips of the samples, bad input leaving no
# output file, and info numbers computed by hand. Prints TAP.
VRAMSIM=${VRAMSIM:-bin/vramsim}
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0
fails=0
ok () { n=$((n + 1)); echo "ok $n - $1"; }
not_ok () { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check () { local what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }
# result DESCRIPTION: ok if the command just before succeeded
result () { if [ $? -eq 0 ]; then ok "$1"; else not_ok "$1"; fi; }
# status CMD... : runs CMD, sets $rc, $out, $err
run () { "$@" >"$tmp/_stdout" 2>"$tmp/_stderr"; rc=$?; out=$(cat "$tmp/_stdout"); err=$(cat "$tmp/_stderr"); }


# ---- usage ----
run "$VRAMSIM" convert --help
{ [ $rc -eq 0 ] && [[ $out == *"IN OUT"* ]]; }; result "convert --help exits 0 and explains"
run "$VRAMSIM" convert onlyone
{ [ $rc -eq 2 ]; }; result "convert with one argument exits 2"
run "$VRAMSIM" convert traces/hand-overlap.jsonl "$tmp/x" --format xml
{ [ $rc -eq 2 ] && [ ! -e "$tmp/x" ]; }; result "convert --format xml exits 2"
run "$VRAMSIM" convert traces/hand-overlap.jsonl - --format binary
{ [ $rc -eq 2 ]; }; result "binary to stdout exits 2"
run "$VRAMSIM" info
{ [ $rc -eq 2 ]; }; result "info without a trace exits 2"
run "$VRAMSIM" info --help
{ [ $rc -eq 0 ] && [[ $out == *"--format"* ]]; }; result "info --help exits 0"
run "$VRAMSIM" info traces/hand-overlap.jsonl --format yaml
{ [ $rc -eq 2 ]; }; result "info --format yaml exits 2"

# ---- round trips of the samples ----
for s in hand-train-step hand-uvm-oversub hand-overlap; do
  "$VRAMSIM" convert "traces/$s.jsonl" "$tmp/$s.vtrace" &&
    "$VRAMSIM" convert "$tmp/$s.vtrace" "$tmp/$s.jsonl"
  { cmp -s "traces/$s.jsonl" "$tmp/$s.jsonl"; }; result "$s: jsonl -> vtrace -> jsonl is byte-identical"
done
head -c 8 "$tmp/hand-overlap.vtrace" > "$tmp/magic"
{ [ "$(od -An -c "$tmp/magic" | tr -d ' ')" = 'VRAMTRC032' ]; }; result ".vtrace output starts with the magic"
"$VRAMSIM" convert traces/hand-overlap.jsonl "$tmp/forced.bin" --format binary
{ cmp -s "$tmp/forced.bin" "$tmp/hand-overlap.vtrace"; }; result "--format binary overrides the extension"
"$VRAMSIM" convert - "$tmp/stdin.jsonl" < traces/hand-overlap.jsonl
{ cmp -s traces/hand-overlap.jsonl "$tmp/stdin.jsonl"; }; result "convert reads standard input"
run "$VRAMSIM" convert "$tmp/hand-overlap.vtrace" -
{ [ $rc -eq 0 ] && [ "$out" = "$(cat traces/hand-overlap.jsonl)" ]; }; result "convert writes JSONL to standard output"

# ---- bad input: exit 1, one message naming file and line, no output ----
cp traces/hand-overlap.jsonl "$tmp/bad.jsonl"
echo '{"t": 99999999999, "op": "free", "id": 77}' >> "$tmp/bad.jsonl"
run "$VRAMSIM" convert "$tmp/bad.jsonl" "$tmp/out.vtrace"
{ [ $rc -eq 1 ]; }; result "bad trace: convert exits 1"
{ [ "$err" = "vramsim: $tmp/bad.jsonl:30: field 'id': allocation 77 is not live" ]; }; result "bad trace: one message naming file, line and field"
{ [ -z "$(ls "$tmp" | grep '^out')" ]; }; result "bad trace: no output file and no temporary left"
echo "existing" > "$tmp/keep.jsonl"
run "$VRAMSIM" convert "$tmp/bad.jsonl" "$tmp/keep.jsonl"
{ [ $rc -eq 1 ] && [ "$(cat "$tmp/keep.jsonl")" = existing ]; }; result "bad trace: an existing output is left as it was"
head -c 300 "$tmp/hand-overlap.vtrace" > "$tmp/cut-header.vtrace"
run "$VRAMSIM" convert "$tmp/cut-header.vtrace" "$tmp/cut-header.jsonl"
{ [ $rc -eq 1 ] && [[ $err == *"cut-header.vtrace: header: truncated"* ]] && [ ! -e "$tmp/cut-header.jsonl" ]; }; result "binary cut in its header: exit 1, named, no output"
head -c $(( $(stat -c %s "$tmp/hand-overlap.vtrace") - 5 )) "$tmp/hand-overlap.vtrace" > "$tmp/cut.vtrace"
run "$VRAMSIM" convert "$tmp/cut.vtrace" "$tmp/cut.jsonl"
{ [ $rc -eq 1 ] && [[ $err == *"cut.vtrace: event "*"truncated"* ]] && [ ! -e "$tmp/cut.jsonl" ]; }; result "binary cut inside its last record: exit 1, event named, no output"
run "$VRAMSIM" convert "$tmp/missing.jsonl" "$tmp/m.jsonl"
{ [ $rc -eq 1 ] && [[ $err == *"missing.jsonl: cannot open"* ]]; }; result "missing input: exit 1"
run "$VRAMSIM" info "$tmp/bad.jsonl"
{ [ $rc -eq 1 ] && [[ $err == *"bad.jsonl:30: "* ]] && [ -z "$out" ]; }; result "info on a bad trace exits 1 naming the line"

# ---- SPEC 3 kernel shape, collective, empty_cache, header allocations ----
cat > "$tmp/kf.jsonl" <<'EOF'
{"vramsim_trace": 1, "time_unit": "ns", "capture": {"config": "h100-sxm"}, "allocations": "tensor", "allocator_settings": {"expandable_segments": true}}
{"t": 0, "op": "alloc", "id": 1, "bytes": 1073741824, "kind": "device"}
{"t": 10, "op": "kernel", "name": "gemm", "stream": 1, "dur": 1000, "reads": [1], "flops": 68719476736, "precision": "bf16", "grid": [132, 2, 1], "block": [256, 1, 1], "regs": 168, "smem": 232448}
{"t": 20, "op": "kernel", "name": "ncclAllReduce", "dur": 5000, "writes": [1], "collective": {"kind": "all_reduce", "bytes": 1073741824, "ranks": 8}}
{"t": 21, "op": "kernel", "name": "ncclAllGather", "dur": 5000, "collective": {"kind": "all_gather", "bytes": 4096, "ranks": 8, "group": {"id": 12, "role": "dp"}}}
{"t": 22, "op": "kernel", "name": "ncclAllReduce", "dur": 5000, "collective": {"kind": "all_reduce", "bytes": 100, "ranks": 2, "group": {"id": 9007199254740991}}}
{"t": 23, "op": "kernel", "name": "ncclAllGather", "dur": 5000, "collective": {"kind": "all_gather", "bytes": 4096, "ranks": 8, "group": {"id": 12, "role": "dp"}}}
{"t": 30, "op": "empty_cache"}
{"t": 31, "op": "empty_cache", "stream": 1}
{"t": 40, "op": "free", "id": 1}
EOF
"$VRAMSIM" convert "$tmp/kf.jsonl" "$tmp/kf.vtrace" && "$VRAMSIM" convert "$tmp/kf.vtrace" "$tmp/kf-back.jsonl"
{ cmp -s "$tmp/kf.jsonl" "$tmp/kf-back.jsonl"; }; result "kernel shape, collective, empty_cache, allocations: jsonl -> vtrace -> jsonl is byte-identical"
{ [ "$(od -An -tu1 -j8 -N4 "$tmp/kf.vtrace" | tr -s ' ')" = " 4 0 0 0" ]; }; result ".vtrace is format version 4"
# Version 4 file $1 as version $2 at $3 (bench/to-v3.py: the same
# records, the end record of versions 1-3).
downgrade () { python3 bench/to-v3.py "$1" "$3" "$2"; }
# An older file (no groups: version 2 says the same bytes) reads as before.
grep -v '"group"' "$tmp/kf.jsonl" > "$tmp/kf2.jsonl" && "$VRAMSIM" convert "$tmp/kf2.jsonl" "$tmp/kf4.vtrace" \
  && downgrade "$tmp/kf4.vtrace" 2 "$tmp/kf2.vtrace" \
  && "$VRAMSIM" convert "$tmp/kf2.vtrace" "$tmp/kf2-back.jsonl" && cmp -s "$tmp/kf2.jsonl" "$tmp/kf2-back.jsonl"
result "a version 2 .vtrace (no groups) still reads, the same events"
downgrade "$tmp/kf.vtrace" 3 "$tmp/kf3.vtrace" && "$VRAMSIM" convert "$tmp/kf3.vtrace" "$tmp/kf3-back.jsonl" \
  && cmp -s "$tmp/kf.jsonl" "$tmp/kf3-back.jsonl"
result "a version 3 .vtrace (groups, no summary) still reads, the same events"
# Version 4's summary: a file whose end record was made again with another
# first_t (and its checksum) is refused by a full read, naming the field;
# one whose checksum alone changed is read by convert, refused by info.
python3 - "$tmp/kf.vtrace" "$tmp/kf-ft.vtrace" "$tmp/kf-ck.vtrace" "$PWD/tests/stub-cuda" <<'PY'
import struct, sys
sys.dont_write_bytecode = True   # nothing left in the source tree
sys.path.insert(0, sys.argv[4])
from vtrace2jsonl import xxh64   # the capture tests' decoder's own XXH64
d = bytearray(open(sys.argv[1], "rb").read())
at = struct.unpack("<Q", d[-12:-4])[0]
i = at + 1
while d[i] & 0x80:
    i += 1
i += 1                       # first_t + 1, one byte here (t = 0)
assert d[i] == 1
c = bytearray(d)
c[-20] ^= 0x10
open(sys.argv[3], "wb").write(c)
d[i] = 2
hl = struct.unpack("<I", d[12:16])[0]
assert xxh64(bytes(c[16 + hl:len(c) - 20])) == struct.unpack("<Q", bytes(d[-20:-12]))[0]   # the checker's own hash agrees
d[-20:-12] = struct.pack("<Q", xxh64(bytes(d[16 + hl:len(d) - 20])))
open(sys.argv[2], "wb").write(d)
PY
run "$VRAMSIM" info "$tmp/kf-ft.vtrace"
{ [ $rc -eq 1 ] && [[ $err == *"kf-ft.vtrace: event 9: the end record's summary gives first_t 1 but the events' earliest t is 0"* ]]; }
result "a summary that disagrees with the events: exit 1, the field named"
run "$VRAMSIM" info "$tmp/kf-ck.vtrace"
{ [ $rc -eq 1 ] && [[ $err == *"kf-ck.vtrace: event 9: the checksum of the records is"*"the file is corrupt, or was changed"* ]] \
  && "$VRAMSIM" convert "$tmp/kf-ck.vtrace" "$tmp/kf-ck.jsonl" && cmp -s "$tmp/kf.jsonl" "$tmp/kf-ck.jsonl"; }
result "a checksum that does not hold: info exits 1 naming it; convert (which does not hash) reads the events"
run "$VRAMSIM" info "$tmp/kf.vtrace"
i4=$out
run "$VRAMSIM" info "$tmp/kf3.vtrace"
i3=$out
run "$VRAMSIM" info --format json "$tmp/kf3.vtrace"
{ [[ $i4 == *$'\nformat     binary, version 4 (the end record\'s summary and checksum hold)\n'* ]] \
  && [[ $i3 == *$'\nformat     binary, version 3 (no end-record summary: --sample-steps frames the rest; vramsim convert writes version 4)\n'* ]] \
  && [[ $out == *$'"format": "binary",\n  "format_version": 3,'* ]]; }
result "info names the format: binary version 4 (summary and checksum hold) or 3 (the rest framed); JSON format and format_version"
run "$VRAMSIM" info "$tmp/kf.jsonl"
{ [ $rc -eq 0 ] && [[ $out == *"collectives 4, 1.00 GiB; 2 groups, some collectives in none"* ]] \
  && [[ $out == *"  group 12               dp        8 ranks        2 collectives  8.00 KiB"* ]] \
  && [[ $out == *"  group 9007199254740991 -         2 ranks        1 collectives  100 B"* ]]; }
result "info lists each group: id, role, size, collectives, bytes"
run "$VRAMSIM" info "$tmp/kf.vtrace" --format json
{ [ $rc -eq 0 ] && grep -qF '"groups": [{"id": 12, "ranks": 8, "role": "dp", "collectives": 2, "bytes": 8192}, {"id": 9007199254740991, "ranks": 2, "role": null, "collectives": 1, "bytes": 100}]' "$tmp/_stdout"; }
result "info --format json: collectives.groups[] exact (ids up to 2^53 - 1)"
sed '7s/"ranks": 8/"ranks": 4/' "$tmp/kf.jsonl" > "$tmp/kf-bad.jsonl"
run "$VRAMSIM" convert "$tmp/kf-bad.jsonl" "$tmp/kf-bad.vtrace"
{ [ $rc -eq 1 ] && [ "$err" = "vramsim: $tmp/kf-bad.jsonl:7: field 'collective.ranks': group 12 has 4 ranks here but 8 at line 5 (a communicator has one size: give another group id to another communicator)" ] && [ ! -e "$tmp/kf-bad.vtrace" ]; }
result "a group id reused with another size: exit 1, both lines named, no output"
sed 's/"role": "dp"/"role": "zp"/' "$tmp/kf.jsonl" > "$tmp/kf-bad.jsonl"
run "$VRAMSIM" replay "$tmp/kf-bad.jsonl" -c h100-sxm -o "$tmp/kf-bad.json"
{ [ $rc -eq 1 ] && [[ $err == "vramsim: $tmp/kf-bad.jsonl:5: field 'collective.group.role': unknown value \"zp\" (expected dp, tp, pp, ep or cp)"* ]] && [ ! -e "$tmp/kf-bad.json" ]; }
result "an unknown role: exit 1, line named, no report"
sed 's/"id": 12/"id": -12/' "$tmp/kf.jsonl" > "$tmp/kf-bad.jsonl"
run "$VRAMSIM" info "$tmp/kf-bad.jsonl"
{ [ $rc -eq 1 ] && [ "$err" = "vramsim: $tmp/kf-bad.jsonl:5: field 'collective.group.id' must not be negative (-12)" ]; }
result "a negative group id: exit 1, line named"
sed 's/"id": 12/"id": 0/' "$tmp/kf.jsonl" > "$tmp/kf-bad.jsonl"
run "$VRAMSIM" info "$tmp/kf-bad.jsonl"
{ [ $rc -eq 1 ] && [ "$err" = "vramsim: $tmp/kf-bad.jsonl:5: field 'collective.group.id' must be positive (0 is no communicator)" ]; }
result "group id 0: exit 1, line named"
run "$VRAMSIM" info "$tmp/kf.vtrace" --format json
{ [ $rc -eq 0 ] && grep -qF '"empty_cache": 2}' "$tmp/_stdout"; }; result "info counts empty_cache from the binary form"
sed 's/"bf16"/"fp4"/' "$tmp/kf.jsonl" > "$tmp/kf-bad.jsonl"
run "$VRAMSIM" convert "$tmp/kf-bad.jsonl" "$tmp/kf-bad.vtrace"
{ [ $rc -eq 1 ] && [[ $err == "vramsim: $tmp/kf-bad.jsonl:3: field 'precision': unknown value \"fp4\""* ]] && [ ! -e "$tmp/kf-bad.vtrace" ]; }; result "unknown precision: exit 1, line and key named, no output"
sed '4s/"ranks": 8/"ranks": 0/' "$tmp/kf.jsonl" > "$tmp/kf-bad.jsonl"
run "$VRAMSIM" info "$tmp/kf-bad.jsonl"
{ [ $rc -eq 1 ] && [ "$err" = "vramsim: $tmp/kf-bad.jsonl:4: field 'collective.ranks' must be at least 1" ]; }; result "collective with ranks 0: exit 1, line and key named"

# ---- line ends, BOM, gzip, -0 (issue 16, items 8 and 13) ----
printf '%s\r' '{"vramsim_trace": 1, "time_unit": "ns"}' '{"t": 0, "op": "alloc", "id": 1, "bytes": 8, "kind": "device"}' \
  '{"t": 5, "op": "free", "id": 1}' > "$tmp/cr.jsonl"
run "$VRAMSIM" info "$tmp/cr.jsonl"
{ [ $rc -eq 0 ] && [[ $out == *"events     2 (alloc 1, free 1)"* ]]; }; result "CR-only line ends: every event is read"
printf '{"vramsim_trace": 1}\r{"t": 0, "op": "mark", "name": "a"}\r\n{"t": 1, "op": "mark", "name": "b"}\n{"t": 2, "op": "mark", "name": "c"}' > "$tmp/mixed.jsonl"
run "$VRAMSIM" info "$tmp/mixed.jsonl"
{ [ $rc -eq 0 ] && [[ $out == *"events     3 (mark 3)"* ]]; }; result "CR, CRLF and LF in one file (CR first): every event is read"
printf '{"vramsim_trace": 1}\r\n{"t": 0, "op": "mark", "name": "a"}\r{"t": 1, "op": "mark", "name": "b"}\n' > "$tmp/mixed.jsonl"
run "$VRAMSIM" info "$tmp/mixed.jsonl"
{ [ $rc -eq 1 ] && [[ $err == *"mixed.jsonl:2: invalid JSON: unexpected text after the object"* ]]; }; result "a lone CR inside an LF file: an error naming the line, not lost events"
printf '\357\273\277' | cat - traces/hand-overlap.jsonl > "$tmp/bom.jsonl"
"$VRAMSIM" convert "$tmp/bom.jsonl" "$tmp/bom-out.jsonl"
{ cmp -s traces/hand-overlap.jsonl "$tmp/bom-out.jsonl"; }; result "a UTF-8 byte order mark is skipped"
gzip -c traces/hand-overlap.jsonl > "$tmp/o.jsonl.gz"
"$VRAMSIM" convert "$tmp/o.jsonl.gz" "$tmp/o.vtrace" && gzip -c "$tmp/o.vtrace" > "$tmp/o.vtrace.gz"
"$VRAMSIM" convert "$tmp/o.vtrace.gz" "$tmp/o-back.jsonl"
{ cmp -s traces/hand-overlap.jsonl "$tmp/o-back.jsonl"; }; result "gzipped JSONL and gzipped binary traces read as the plain ones"
{ head -n 10 traces/hand-overlap.jsonl | gzip; tail -n +11 traces/hand-overlap.jsonl | gzip; } > "$tmp/two.gz"
"$VRAMSIM" convert - "$tmp/two-back.jsonl" < "$tmp/two.gz"
{ cmp -s traces/hand-overlap.jsonl "$tmp/two-back.jsonl"; }; result "two gzip members one after the other, from standard input"
printf '%s\n' '{"vramsim_trace": 1}' '{"t": -0, "op": "alloc", "id": 1, "bytes": -0.0, "kind": "device"}' > "$tmp/negzero.jsonl"
run "$VRAMSIM" convert "$tmp/negzero.jsonl" -
{ [ $rc -eq 0 ] && [[ $out == *'{"t": 0, "op": "alloc", "id": 1, "bytes": 0, "kind": "device"}'* ]]; }; result "-0 is 0"
run "$VRAMSIM" replay traces/hand-overlap.jsonl --series-dt 1 --series "$tmp/s.csv"
{ [ $rc -ne 0 ] && [[ $err == *"--series-dt: '1': a time needs a unit, such as \"1us\""* ]] && [ ! -e "$tmp/s.csv" ]; }; result "--series-dt 1 is refused: a time needs a unit"

printf '%s\n' '{"vramsim_trace": 1, "capture": {"config": "/dev/zero"}}' '{"t": 0, "op": "mark", "name": "x"}' > "$tmp/hdrpath.jsonl"
run "$VRAMSIM" replay "$tmp/hdrpath.jsonl" -c a100-80g --capture-config configs/a100-80g.json -o "$tmp/hdrpath.json"
{ [ $rc -eq 0 ] && [ -s "$tmp/hdrpath.json" ]; }; result "a header capture.config that is a path is not read when --capture-config is given"

# ---- Kineto detection does not depend on key order (issue 14) ----
. tests/data-lib.sh
if real=$(data_file kineto/alexnet-a100.json.gz); then
  python3 - "$real" "$tmp/kmeta.json" <<'EOF'
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
out = {"metadata": {"notes": "x" * 20000, "nested": [{"traceEvents": "not this one"}]}}
out.update(d)
json.dump(out, open(sys.argv[2], "w"))
EOF
  "$VRAMSIM" convert "$real" "$tmp/k-plain.jsonl" && "$VRAMSIM" convert "$tmp/kmeta.json" "$tmp/k-meta.jsonl"
  { cmp -s "$tmp/k-plain.jsonl" "$tmp/k-meta.jsonl"; }; result "a Kineto file whose first 20 KB are a metadata object imports as the plain one"
else
  not_ok "a Kineto file whose first 20 KB are a metadata object imports as the plain one: validation/data/kineto/alexnet-a100.json.gz missing"
fi

# ---- info numbers, by hand ----
cat > "$tmp/small.jsonl" <<'EOF'
{"vramsim_trace": 1, "time_unit": "ns", "capture": {"device": "Test GPU", "config": "a100-80g"}}
{"t": 100, "op": "alloc", "id": 1, "bytes": 1000, "kind": "device", "tag": "params"}
{"t": 200, "op": "alloc", "id": 2, "bytes": 500, "kind": "pinned"}
{"t": 300, "op": "alloc", "id": 3, "bytes": 2000, "kind": "managed", "stream": 2, "tag": "activations"}
{"t": 400, "op": "copy", "dir": "h2d", "src": 2, "dst": 1, "bytes": 500, "stream": 1, "async": true, "dur": 50}
{"t": 450, "op": "kernel", "name": "k", "stream": 2, "dur": 1000, "reads": [1], "writes": [3]}
{"t": 500, "op": "free", "id": 3, "stream": 2}
{"t": 600, "op": "alloc", "id": 4, "bytes": 1500, "kind": "device", "tag": "activations"}
{"t": 700, "op": "kernel", "name": "k", "dur": 300, "touches": [4]}
{"t": 800, "op": "copy", "dir": "d2h", "src": 4, "bytes": 1500, "dur": 200, "host_ns": 250}
{"t": 900, "op": "free", "id": 4}
{"t": 150, "op": "mark", "name": "step", "tid": 1}
{"t": 950, "op": "sync", "scope": "stream", "stream": 3, "tid": 1, "host_ns": 600}
{"t": 1000, "op": "free", "id": 2}
{"t": 1010, "op": "free", "id": 1}
EOF
"$VRAMSIM" convert "$tmp/small.jsonl" "$tmp/small.vtrace"
run "$VRAMSIM" info "$tmp/small.vtrace" --format json
has () { grep -qF -- "$1" "$tmp/_stdout"; }
# 14 events; ends: kernel 450+1000=1450, sync 950+600=1550 (the last), copy 800+max(250,200)=1050;
# duration = 1550 - 100 (first t) = 1450.
{ has '"events": 14,' && has '"ops": {"alloc": 4, "free": 4, "copy": 2, "memset": 0, "kernel": 2, "sync": 1, "event_record": 0, "stream_wait": 0, "prefetch": 0, "mark": 1, "empty_cache": 0},'; }; result "info json: events and ops"
{ has '"duration_ns": 1450,'; }; result "info json: duration = max end - first t = 1550 - 100"
# live: 1000, 1500, 3500 (peak), free 3 -> 1500, +1500 -> 3000, ...
{ has '"peak_live_bytes": 3500,'; }; result "info json: peak live bytes"
# device: 1000 then 1000+1500 = 2500; managed 2000; pinned 500.
{ has '"peak_bytes_by_kind": {"device": 2500, "managed": 2000, "pinned": 500},'; }; result "info json: peak by kind"
# activations: 2000, freed, then 1500: peak 2000, not 3500.
{ has '"peak_bytes_by_tag": {"params": 1000, "untagged": 500, "activations": 2000},'; }; result "info json: peak by tag, each tag on its own"
# streams 0 (second kernel, d2h copy), 1, 2, 3; threads 0 and 1.
{ has '"streams": 4,' && has '"threads": 2,'; }; result "info json: streams and threads"
# both kernels are named "k": nothing in the name says what they do (class other).
{ has '"kernels": {"count": 2, "dur_ns": 1300, "classes": [{"class": "other", "count": 2, "dur_ns": 1300}]},' && has '"copy_bytes": {"h2d": 500, "d2h": 1500, "d2d": 0, "p2p": 0},'; }; result "info json: kernels and copies"
{ has '"capture": {"device": "Test GPU", "config": "a100-80g", "tool": null}'; }; result "info json: capture"
{ has '"start_reserved_bytes": 0,' && has '"allocations": null,'; }; result "info json: no allocator_state, no allocation level"
# The cache a window starts on (header allocator_state): reserved_bytes as
# given; or the segments' sizes summed, 2 MiB + 20 MiB = 23068672 B.
for st in '"reserved_bytes": 12782141440' '"segments": [[4096, 2097152, 0, "small", false], [8388608, 20971520, 0, "large", false]]'; do
  printf '{"vramsim_trace": 1, "allocations": "tensor", "allocator_state": {%s}}\n{"t": 0, "op": "alloc", "id": 1, "bytes": 512, "kind": "device"}\n' "$st" > "$tmp/warm.jsonl"
  "$VRAMSIM" info "$tmp/warm.jsonl" --format json > "$tmp/warm.json" 2>&1; "$VRAMSIM" info "$tmp/warm.jsonl" > "$tmp/warm.txt" 2>&1
  case $st in
    *reserved*) want=12782141440 text="allocator  tensor-level allocations; 11.90 GiB reserved at the start" ;;
    *) want=23068672 text="allocator  tensor-level allocations; 22.00 MiB reserved at the start" ;;
  esac
  { grep -qF "\"start_reserved_bytes\": $want," "$tmp/warm.json" && grep -qF '"allocations": "tensor",' "$tmp/warm.json" \
      && grep -qF "$text" "$tmp/warm.txt"; }; result "info: the cache at the window's start, $want B (json and text)"
done
run "$VRAMSIM" info "$tmp/small.jsonl"
{ [ $rc -eq 0 ] && [[ $out == *"events     14 (alloc 4, free 4, copy 2, kernel 2, sync 1, mark 1)"* ]] && [[ $out == *"1.450 us"* ]]; }; result "info text: a summary for people"

# ---- --kernel-bytes: traffic from a NAME,BYTES table and from an ncu CSV ----
cat > "$tmp/kb.jsonl" <<'EOF'
{"vramsim_trace": 1, "time_unit": "ns"}
{"t": 0, "op": "alloc", "id": 1, "bytes": 1073741824, "kind": "device"}
{"t": 10, "op": "kernel", "name": "axpy(float, float const*, float*, unsigned long)", "dur": 1000000, "touches": [1]}
{"t": 20, "op": "kernel", "name": "void at::k<4, float>(int, float*)", "dur": 1000, "touches": [1]}
{"t": 30, "op": "kernel", "name": "other", "dur": 1000, "touches": [1], "bytes": 77}
{"t": 40, "op": "kernel", "name": "unknown_k", "dur": 1000}
EOF
printf '%s\n' '# name,bytes' '"axpy(float, float const*, float*, unsigned long)",3GiB' 'at::k<4, float>,1000' 'other,5' > "$tmp/kb.csv"
kb_bytes () { python3 -c 'import json,sys; print(" ".join(str(e.get("bytes", "-")) for e in map(json.loads, open(sys.argv[1])) if e.get("op") == "kernel"))' "$1"; }
run "$VRAMSIM" convert "$tmp/kb.jsonl" "$tmp/kb-out.jsonl" --kernel-bytes "$tmp/kb.csv"
{ [ $rc -eq 0 ] && [ "$(kb_bytes "$tmp/kb-out.jsonl")" = "3221225472 1000 77 -" ]; }; result "--kernel-bytes NAME,BYTES: exact name 3GiB, base name 1000, given bytes kept, unknown left"
{
  echo '==PROF== Connected to process 4242'
  echo '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'
  echo '"0","4242","p","h","axpy(float, const float *, float *, unsigned long)","1","7","(256, 1, 1)","(2112, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes.sum","Gbyte","3.22"'
  echo '"0","4242","p","h","axpy(float, const float *, float *, unsigned long)","1","7","(256, 1, 1)","(2112, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","usecond","888.00"'
  echo '"1","4242","p","h","axpy(float, const float *, float *, unsigned long)","1","7","(256, 1, 1)","(2112, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes.sum","Gbyte","3.24"'
  echo '"2","4242","p","h","at::k<4, float>","1","7","(256, 1, 1)","(1, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes.sum","Kbyte","1,500.50"'
} > "$tmp/kb-ncu.csv"
run "$VRAMSIM" convert "$tmp/kb.jsonl" "$tmp/kb-ncu.vtrace" --kernel-bytes "$tmp/kb-ncu.csv"
"$VRAMSIM" convert "$tmp/kb-ncu.vtrace" "$tmp/kb-ncu.jsonl" 2>/dev/null
{ [ $rc -eq 0 ] && [ "$(kb_bytes "$tmp/kb-ncu.jsonl")" = "3230000000 1500500 77 -" ]; }; result "--kernel-bytes ncu CSV: mean of dram__bytes.sum per kernel (3.23e9), Kbyte with separators (1500500)"
printf '%s\n' 'axpy,1GiB' 'other,lots' > "$tmp/kb-bad.csv"
run "$VRAMSIM" convert "$tmp/kb.jsonl" "$tmp/kb-bad.jsonl" --kernel-bytes "$tmp/kb-bad.csv"
{ [ $rc -eq 1 ] && [[ $err == *"kb-bad.csv:2:"* ]] && [ ! -e "$tmp/kb-bad.jsonl" ]; }; result "--kernel-bytes with a bad size: exit 1, file and line named, no output"
sed 's/"Gbyte","3.22"/"furlong","3.22"/' "$tmp/kb-ncu.csv" > "$tmp/kb-unit.csv"
run "$VRAMSIM" convert "$tmp/kb.jsonl" "$tmp/kb-unit.jsonl" --kernel-bytes "$tmp/kb-unit.csv"
{ [ $rc -eq 1 ] && [[ $err == *"kb-unit.csv:3:"*"furlong"* ]] && [ ! -e "$tmp/kb-unit.jsonl" ]; }; result "--kernel-bytes ncu CSV with an unknown unit: exit 1, line 3 and the unit named"
run "$VRAMSIM" convert "$tmp/kb.jsonl" "$tmp/kb-none.jsonl" --kernel-bytes "$tmp/nonexistent.csv"
{ [ $rc -eq 1 ] && [[ $err == *nonexistent.csv* ]] && [ ! -e "$tmp/kb-none.jsonl" ]; }; result "--kernel-bytes with a missing file: exit 1, no output"
printf 'nothing_here,1KiB\n' > "$tmp/kb-miss.csv"
run "$VRAMSIM" convert "$tmp/kb.jsonl" "$tmp/kb-miss.jsonl" --kernel-bytes "$tmp/kb-miss.csv"
{ [ $rc -eq 0 ] && [[ $err == *"0 of 4 kernels"* ]]; }; result "--kernel-bytes matching no kernel: converts, says 0 of 4 on stderr"

# ---- what convert says it wrote; what the other commands say of files to import ----
# Terminal or not (stderr is a file here): the events written, counted
# from the output for an import (memory-profile-v100: 26,770 [memory]
# events, 19,370 kernels, ... imported as 53,133 events).
if mp=$(data_file kineto/memory-profile-v100.json.gz); then
  run "$VRAMSIM" convert "$mp" "$tmp/mp.jsonl"
  { [ $rc -eq 0 ] && [ "$err" = "vramsim: wrote $tmp/mp.jsonl (53133 events)" ] && [ "$(wc -l < "$tmp/mp.jsonl")" = 53134 ]; }
  result "convert of an import says the events it wrote (53133, the file's lines less the header), terminal or not"
else
  not_ok "convert of an import says the events it wrote: validation/data/kineto/memory-profile-v100.json.gz missing"
fi
run "$VRAMSIM" convert traces/hand-overlap.jsonl "$tmp/ho.vtrace"
{ [ $rc -eq 0 ] && [ "$err" = "vramsim: wrote $tmp/ho.vtrace ($(($(wc -l < traces/hand-overlap.jsonl) - 1)) events)" ]; }
result "convert between encodings says the events it wrote"
printf 'SQLite format 3\000rest' > "$tmp/r.sqlite"
printf '\200\004\225\002' > "$tmp/s.pickle"
printf 'not a report' > "$tmp/r.nsys-rep"
hint_ok=0
for cmd in "replay" "info" "fit" "sweep -c a100-80g" "sweep -c all"; do
  run "$VRAMSIM" $cmd "$tmp/r.sqlite"
  [ $rc -eq 1 ] && [[ $err == *"r.sqlite: not a vramsim trace: an SQLite database (an Nsight Systems export?) is imported first: vramsim convert $tmp/r.sqlite OUT.vtrace"* ]] || { echo "# $cmd r.sqlite: $err" >&2; hint_ok=1; }
  run "$VRAMSIM" $cmd "$tmp/s.pickle"
  [ $rc -eq 1 ] && [[ $err == *"s.pickle: not a vramsim trace: a Python pickle (a PyTorch memory snapshot?) is imported first: vramsim convert $tmp/s.pickle OUT.vtrace"* ]] || { echo "# $cmd s.pickle: $err" >&2; hint_ok=1; }
  run "$VRAMSIM" $cmd "$tmp/r.nsys-rep"
  [ $rc -eq 1 ] && [[ $err == *"nsys export --type sqlite -o report.sqlite $tmp/r.nsys-rep, then vramsim convert report.sqlite OUT.vtrace"* ]] || { echo "# $cmd r.nsys-rep: $err" >&2; hint_ok=1; }
done
[ $hint_ok -eq 0 ]; result "replay, info, fit and sweep given an nsys SQLite export, a snapshot pickle or an .nsys-rep: exit 1 and the convert (or export) to run"
run "$VRAMSIM" convert "$tmp/r.nsys-rep" "$tmp/x.jsonl"
{ [ $rc -eq 1 ] && [ "$(grep -c 'nsys export' <<<"$err")" = 1 ] && [ ! -e "$tmp/x.jsonl" ]; }; result "convert of an .nsys-rep: the export hint, once"

echo "1..$n"
[ $fails -eq 0 ]
