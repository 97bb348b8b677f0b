#!/bin/bash
# sweep-resume.sh — an interrupted sweep (rows cut, a half-written last
# line) resumed with --resume ends equal to a full sweep, and keeps the rows
# it found instead of running them again; SIGINT leaves complete rows only.
. "$(dirname "$0")/sweep-lib.sh"
require_engine 7
echo 1..7
args=("$T/t.jsonl" -c a100-80g,rtx3090 --vary memory.capacity=512MiB..4GiB/512MiB --vary policy.oversubscription=oom,spill,direct)

"$VRAMSIM" sweep "${args[@]}" -o "$T/full.csv"; ok $? "the full sweep runs (48 runs)"

# Interrupted: the header, 10 complete rows and half of the 11th.
head -11 "$T/full.csv" > "$T/part.csv"
sed -n 12p "$T/full.csv" | head -c 20 >> "$T/part.csv"
"$VRAMSIM" sweep "${args[@]}" -o "$T/part.csv" --resume && cmp -s "$T/full.csv" "$T/part.csv"
ok $? "--resume after a cut file gives the full sweep's file"

# A row already there is not run again: doctor one and it survives.
head -6 "$T/full.csv" | sed '6s/^\([^,]*,[^,]*,[^,]*,[^,]*\),[0-9]*,/\1,42,/' > "$T/doc.csv"
"$VRAMSIM" sweep "${args[@]}" -o "$T/doc.csv" --resume
[ "$(sed -n 6p "$T/doc.csv" | cut -d, -f5)" = 42 ] && [ "$(wc -l < "$T/doc.csv")" = 49 ]
ok $? "--resume skips runs already in the file"

printf 'config,other\n' > "$T/other.csv"
"$VRAMSIM" sweep "${args[@]}" -o "$T/other.csv" --resume 2> "$T/err"
[ $? = 1 ] && grep -q "other.csv: --resume: its columns" "$T/err"; ok $? "--resume on another sweep's file: exit 1"

# A real interruption: a slow sweep (many runs, one thread) stopped by SIGINT
# once its first rows are out (from 2 GiB: the 1 GiB buffer and the preset's
# CUDA context fit; under ASan on a loaded machine the 90,000 values take
# ~20 s to check before the first row: wait up to 120 s).
"$VRAMSIM" sweep "$T/t.jsonl" -c a100-80g --vary memory.capacity=2GiB..90000GiB/1GiB -j 1 -o "$T/int.csv" 2> "$T/err" &
pid=$!
for i in $(seq 1200); do [ -f "$T/int.csv" ] && [ "$(wc -l < "$T/int.csv")" -gt 2 ] && break; sleep 0.1; done
kill -INT $pid
wait $pid
rc=$?
rows=$(($(wc -l < "$T/int.csv") - 1))
[ $rc = 130 ] && [ $rows -gt 0 ] && [ $rows -lt 90000 ] && [ "$(tail -c 1 "$T/int.csv" | od -An -c | tr -d ' ')" = '\n' ] \
  && grep -q "interrupted" "$T/err"
ok $? "SIGINT: exit 130, complete rows only ($rows written), a message"
awk -F, 'NR > 1 && $3 != "ok" { bad = 1 } END { exit bad }' "$T/int.csv" \
  && [ "$(tail -n +2 "$T/int.csv" | cut -d, -f2 | head -3 | tr '\n' ' ')" = "2GiB 3GiB 4GiB " ]
ok $? "the interrupted file holds the first runs, in order"
# SIGHUP (a closed ssh session) stops a sweep the same way.
"$VRAMSIM" sweep "$T/t.jsonl" -c a100-80g --vary memory.capacity=1GiB..90000GiB/1GiB -j 1 -o "$T/hup.csv" 2> "$T/err" &
pid=$!
for i in $(seq 1200); do [ -f "$T/hup.csv" ] && [ "$(wc -l < "$T/hup.csv")" -gt 2 ] && break; sleep 0.1; done
kill -HUP $pid
wait $pid
rc=$?
rows=$(($(wc -l < "$T/hup.csv") - 1))
[ $rc = 130 ] && [ $rows -gt 0 ] && [ $rows -lt 90000 ] && [ "$(tail -c 1 "$T/hup.csv" | od -An -c | tr -d ' ')" = '\n' ] \
  && grep -q "interrupted" "$T/err"
ok $? "SIGHUP: exit 130, complete rows only ($rows written)"
