#!/bin/bash
# sweep-errors.sh — bad input exits 1 with a message naming it, before any
# run and without an output file; bad usage exits 2.
. "$(dirname "$0")/sweep-lib.sh"
require_engine 8
echo 1..8

fails () {   # fails RC PATTERN ARGS...: exits RC, stderr matches PATTERN, no -o file
  local rc=$1 pat=$2; shift 2
  rm -f "$T/out.csv"
  "$VRAMSIM" sweep "$@" 2> "$T/err" > /dev/null
  local got=$?
  [ $got = "$rc" ] && grep -q -- "$pat" "$T/err" && [ ! -e "$T/out.csv" ] || { echo "# rc $got: $(cat "$T/err")"; return 1; }
}
fails 1 "memory.capacitty" "$T/t.jsonl" -c a100-80g --vary memory.capacitty=1GiB,2GiB -o "$T/out.csv"
ok $? "an unknown --vary key: exit 1 naming the key"
fails 1 "nope.jsonl" "$T/nope.jsonl" -c a100-80g --vary memory.capacity=1GiB -o "$T/out.csv"
ok $? "a missing trace: exit 1 naming the file"
fails 1 "bad range '8GiB..1GiB/1GiB'" "$T/t.jsonl" -c a100-80g --vary memory.capacity=8GiB..1GiB/1GiB -o "$T/out.csv"
ok $? "a range that runs backwards: exit 1 naming the range"
fails 1 "bad range '1GiB..8GiB/0B'" "$T/t.jsonl" -c a100-80g --vary memory.capacity=1GiB..8GiB/0B -o "$T/out.csv"
ok $? "a zero step: exit 1 naming the range"
fails 1 "unknown unit 'GiBs'" "$T/t.jsonl" -c a100-80g --vary memory.capacity=1GiBs..8GiBs/x2 -o "$T/out.csv"
ok $? "a bad unit: exit 1 naming it"
fails 1 "no-such-machine" "$T/t.jsonl" -c a100-80g,no-such-machine -o "$T/out.csv"
ok $? "an unknown config: exit 1 naming it"
fails 1 "memory.nope" "$T/t.jsonl" -c a100-80g --set memory.nope=1 -o "$T/out.csv"
ok $? "an unknown --set key: exit 1 naming it"
fails 2 "TRACE" -c a100-80g -o "$T/out.csv"
ok $? "no trace: bad usage, exit 2"
