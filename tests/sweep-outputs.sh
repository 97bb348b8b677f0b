#!/bin/bash
# sweep-outputs.sh — issue 16 items 3, 4, 11, 12, 21 and item 2 for sweeps:
# one writer per -o (locked), complete rows only on a full disk, jobs-file
# paths with line breaks refused, --resume past a row cut inside quotes,
# progress on a terminal, outputs that are inputs refused.
. "$(dirname "$0")/sweep-lib.sh"
require_engine 14
echo 1..14
V=$VRAMSIM
cd "$T" || exit 1

# 3. a second sweep to the same -o while one runs: refused, the first's
# file intact. The first holds its lock while its trace (a FIFO) is read.
"$V" sweep t.jsonl -c a100-80g --vary memory.capacity=512MiB,2GiB -o ref.csv
mkfifo slow.jsonl
{ cat t.jsonl; sleep 2; } > slow.jsonl &
feeder=$!
"$V" sweep slow.jsonl -c a100-80g --vary memory.capacity=512MiB,2GiB -o out.csv 2> first.err &
first=$!
sleep 0.5
"$V" sweep t.jsonl -c a100-80g --vary memory.capacity=512MiB,2GiB -o out.csv 2> err; rc=$?
wait $first; rc1=$?; wait $feeder
[ $rc = 1 ] && grep -q "out.csv: another process is writing it" err; ok $? "a second sweep -o OUT while one runs: exit 1, says so"
[ $rc1 = 0 ] && [ "$(tail -n +2 out.csv | wc -l)" = 2 ] && ! grep -c "^config" out.csv | grep -qv '^1$'
ok $? "the first sweep's file holds its own rows once"

# 4. a full disk: a 64 KiB tmpfs (root), else a private full device.
mkdir small
if mount -t tmpfs -o size=64k tmpfs small 2> /dev/null; then
  "$V" sweep t.jsonl -c a100-80g --vary memory.capacity=400MiB..4400MiB/1MiB -o small/out.csv 2> err; rc=$?
  size=$(stat -c %s small/out.csv)
  rows=$(tail -n +2 small/out.csv | wc -l)
  last=$(tail -c 1 small/out.csv | od -An -c | tr -d ' ')
  bad=$(awk -F, 'NR > 1 && NF != 21' small/out.csv | wc -l)
  umount small
  [ $rc = 1 ] && grep -q "small/out.csv: write failed: No space left on device" err; ok $? "sweep -o on a full disk: exit 1 naming the file"
  [ "$last" = '\n' ] && [ "$rows" -gt 100 ] && [ "$bad" = 0 ]; ok $? "the file holds $rows whole rows ($size bytes), none cut"
elif mknod full c 1 7 2> /dev/null; then
  "$V" sweep t.jsonl -c a100-80g -o full 2> err; rc=$?
  [ $rc = 1 ] && grep -q "No space left on device" err; ok $? "sweep -o FULL: exit 1"
  [ -c full ]; ok $? "the device stays a device"
else
  ok 0 "# skip neither mount nor mknod permitted"; ok 0 "# skip"
fi

# 11. a line break in a path: refused, not a command spanning two lines.
nl_dir="new
line"
mkdir "$nl_dir" && cp t.jsonl "$nl_dir/t.jsonl"
"$V" sweep "$nl_dir/t.jsonl" -c a100-80g --jobs-file jobs.txt 2> err; rc=$?
[ $rc = 1 ] && grep -q "holds a line break" err && [ ! -e jobs.txt ] && [ ! -e jobs-reports ]
ok $? "--jobs-file with a trace path holding a line break: refused, nothing left"
"$V" sweep t.jsonl -c a100-80g --jobs-file jobs.txt --reports-dir "$nl_dir/r" 2> err
[ $? = 1 ] && grep -q "holds a line break" err; ok $? "a reports folder with a line break: refused"
sp_dir="it's a dir"; mkdir "$sp_dir"
"$V" sweep t.jsonl -c a100-80g --vary memory.capacity=512MiB,2GiB --jobs-file "$sp_dir/jobs.txt" 2> err
[ "$(grep -vc '^#' "$sp_dir/jobs.txt")" = 2 ] && grep -q "runs of $T/t.jsonl" "$sp_dir/jobs.txt" \
  && (cd / && grep -v '^#' "$T/$sp_dir/jobs.txt" | sh) && [ -e "$sp_dir/jobs-reports/run-00001.json" ]
ok $? "quotes and spaces in paths: one quoted command per line, and they run"

# 12. --resume after a kill cut the last row inside a quoted field.
cfg='{"extends": "a100-80g", "name": "weird,name"}'
echo "$cfg" > w.json
"$V" sweep t.jsonl -c w.json --vary memory.capacity=512MiB,1GiB,2GiB -o full.csv
head -c $(( $(head -2 full.csv | wc -c) + 7 )) full.csv > cut.csv   # header, row 1, then '"weird,'
tail -c 8 cut.csv | grep -q '"weird' ; ok $? "the cut file ends inside a quoted field"
"$V" sweep t.jsonl -c w.json --vary memory.capacity=512MiB,1GiB,2GiB -o cut.csv --resume 2> err; rc=$?
[ $rc = 0 ] && cmp -s cut.csv full.csv; ok $? "--resume drops the half-written quoted row and ends byte-identical"

# 2. sweep outputs onto inputs
cp t.jsonl keep.jsonl
"$V" sweep t.jsonl -c w.json -o w.json 2> err; [ $? = 1 ] && grep -q "same file as the config" err && grep -q weird w.json
ok $? "sweep -o CONFIG: refused, config intact"
"$V" sweep t.jsonl -c a100-80g -o o.csv --jobs-file o.csv 2> err; [ $? = 1 ]; ok $? "--jobs-file onto -o: refused"

# 21. progress on stderr when it is a terminal (script gives it one), none otherwise.
script -qec "$V sweep $T/t.jsonl -c a100-80g --vary memory.capacity=1MiB..2000MiB/1MiB -o $T/p.csv" /dev/null > tty.out 2>&1
grep -q "sweep \[=*\] 2000/2000" tty.out; ok $? "a terminal gets a progress bar ending 2000/2000"
"$V" sweep t.jsonl -c a100-80g --vary memory.capacity=1MiB..200MiB/1MiB -o p2.csv 2> err
[ ! -s err ]; ok $? "stderr that is not a terminal gets none"
"$V" sweep t.jsonl -c a100-80g --vary memory.capacity=1MiB..200MiB/1MiB -o p3.csv --progress 2> err
tr '\r' '\n' < err | grep -q "sweep \[=*\] 200/200"; ok $? "--progress draws it on a file too (a Slurm log), as replay --progress"
