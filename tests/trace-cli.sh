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
# status CMD... : runs CMD, sets $rc, $out, $err
run () { "$@" >"$tmp/_stdout" 2>"$tmp/_stderr"; rc=$?; out=$(cat "$tmp/_stdout"); err=$(cat "$tmp/_stderr"); }


# ---- usage ----
run "$VRAMSIM" convert --help
check "convert --help exits 0 and explains" [ $rc -eq 0 ] && [[ $out == *"IN OUT"* ]]
run "$VRAMSIM" convert onlyone
check "convert with one argument exits 2" [ $rc -eq 2 ]
run "$VRAMSIM" convert traces/overlap.jsonl "$tmp/x" --format xml
check "convert --format xml exits 2" [ $rc -eq 2 ] && [ ! -e "$tmp/x" ]
run "$VRAMSIM" convert traces/overlap.jsonl - --format binary
check "binary to stdout exits 2" [ $rc -eq 2 ]
run "$VRAMSIM" info
check "info without a trace exits 2" [ $rc -eq 2 ]
run "$VRAMSIM" info --help
check "info --help exits 0" [ $rc -eq 0 ] && [[ $out == *"--format"* ]]
run "$VRAMSIM" info traces/overlap.jsonl --format yaml
check "info --format yaml exits 2" [ $rc -eq 2 ]

# ---- round trips of the samples ----
for s in train-step uvm-oversub overlap; do
  "$VRAMSIM" convert "traces/$s.jsonl" "$tmp/$s.vtrace" &&
    "$VRAMSIM" convert "$tmp/$s.vtrace" "$tmp/$s.jsonl"
  check "$s: jsonl -> vtrace -> jsonl is byte-identical" cmp -s "traces/$s.jsonl" "$tmp/$s.jsonl"
done
head -c 8 "$tmp/overlap.vtrace" > "$tmp/magic"
check ".vtrace output starts with the magic" [ "$(od -An -c "$tmp/magic" | tr -d ' ')" = 'VRAMTRC032' ]
"$VRAMSIM" convert traces/overlap.jsonl "$tmp/forced.bin" --format binary
check "--format binary overrides the extension" cmp -s "$tmp/forced.bin" "$tmp/overlap.vtrace"
"$VRAMSIM" convert - "$tmp/stdin.jsonl" < traces/overlap.jsonl
check "convert reads standard input" cmp -s traces/overlap.jsonl "$tmp/stdin.jsonl"
run "$VRAMSIM" convert "$tmp/overlap.vtrace" -
check "convert writes JSONL to standard output" [ $rc -eq 0 ] && [ "$out" = "$(cat traces/overlap.jsonl)" ]

# ---- bad input: exit 1, one message naming file and line, no output ----
cp traces/overlap.jsonl "$tmp/bad.jsonl"
echo '{"t": 99999999999, "op": "free", "id": 77}' >> "$tmp/bad.jsonl"
run "$VRAMSIM" convert "$tmp/bad.jsonl" "$tmp/out.vtrace"
check "bad trace: convert exits 1" [ $rc -eq 1 ]
check "bad trace: one message naming file, line and field" \
  [ "$err" = "vramsim: $tmp/bad.jsonl:30: field 'id': allocation 77 is not live" ]
check "bad trace: no output file and no temporary left" [ -z "$(ls "$tmp" | grep '^out')" ]
echo "existing" > "$tmp/keep.jsonl"
run "$VRAMSIM" convert "$tmp/bad.jsonl" "$tmp/keep.jsonl"
check "bad trace: an existing output is left as it was" [ $rc -eq 1 ] && [ "$(cat "$tmp/keep.jsonl")" = existing ]
head -c 300 "$tmp/overlap.vtrace" > "$tmp/cut.vtrace"
run "$VRAMSIM" convert "$tmp/cut.vtrace" "$tmp/cut.jsonl"
check "truncated binary: exit 1, named, no output" [ $rc -eq 1 ] && [[ $err == *"cut.vtrace: event "*"truncated"* ]] && [ ! -e "$tmp/cut.jsonl" ]
run "$VRAMSIM" convert "$tmp/missing.jsonl" "$tmp/m.jsonl"
check "missing input: exit 1" [ $rc -eq 1 ] && [[ $err == *"missing.jsonl: cannot open"* ]]
run "$VRAMSIM" info "$tmp/bad.jsonl"
check "info on a bad trace exits 1 naming the line" [ $rc -eq 1 ] && [[ $err == *"bad.jsonl:30: "* ]] && [ -z "$out" ]

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
check "info json: events and ops" has '"events": 14,' && has '"ops": {"alloc": 4, "free": 4, "copy": 2, "memset": 0, "kernel": 2, "sync": 1, "event_record": 0, "stream_wait": 0, "prefetch": 0, "mark": 1},'
check "info json: duration = max end - first t = 1550 - 100" has '"duration_ns": 1450,'
# live: 1000, 1500, 3500 (peak), free 3 -> 1500, +1500 -> 3000, ...
check "info json: peak live bytes" has '"peak_live_bytes": 3500,'
# device: 1000 then 1000+1500 = 2500; managed 2000; pinned 500.
check "info json: peak by kind" has '"peak_bytes_by_kind": {"device": 2500, "managed": 2000, "pinned": 500},'
# activations: 2000, freed, then 1500: peak 2000, not 3500.
check "info json: peak by tag, each tag on its own" has '"peak_bytes_by_tag": {"params": 1000, "untagged": 500, "activations": 2000},'
# streams 0 (second kernel, d2h copy), 1, 2, 3; threads 0 and 1.
check "info json: streams and threads" has '"streams": 4,' && has '"threads": 2,'
check "info json: kernels and copies" has '"kernels": {"count": 2, "dur_ns": 1300},' && has '"copy_bytes": {"h2d": 500, "d2h": 1500, "d2d": 0, "p2p": 0},'
check "info json: capture" has '"capture": {"device": "Test GPU", "config": "a100-80g", "tool": null}'
run "$VRAMSIM" info "$tmp/small.jsonl"
check "info text: a summary for people" [ $rc -eq 0 ] && [[ $out == *"events     14 (alloc 4, free 4, copy 2, kernel 2, sync 1, mark 1)"* ]] && [[ $out == *"1.450 us"* ]]

echo "1..$n"
[ $fails -eq 0 ]
