#!/bin/bash
# outputs.sh — issue 16 items 1, 2, 5, 6: what an output name is decides how
# it is written (base/outfile.h). Devices, FIFOs and "-" are written in
# place, never replaced; a symlink writes its target; an output that is an
# input is refused; temporaries go on SIGINT/SIGTERM/SIGHUP; stdout write
# errors exit 1. Device nodes are private ones made with mknod in a temp
# folder (tests run as root in CI), never the system's /dev.
. "$(dirname "$0")/sweep-lib.sh"
echo 1..31
V=$VRAMSIM
cd "$T" || exit 1
have_nodes=0
mknod null c 1 3 2> /dev/null && mknod full c 1 7 2> /dev/null && have_nodes=1
mkfifo fifo
"$V" convert t.jsonl ref.jsonl   # what convert writes for t.jsonl
chr () { [ $have_nodes = 1 ] && [ -c "$1" ]; }

# 1. devices, FIFOs, symlinks
if [ $have_nodes = 1 ]; then
  "$V" replay t.jsonl -o null; rc=$?
  [ $rc = 0 ] && chr null; ok $? "replay -o NULLDEV: exit 0, still a character device"
  "$V" replay t.jsonl -o full 2> err; rc=$?
  [ $rc = 1 ] && chr full && grep -q "full: write failed: No space left on device" err; ok $? "replay -o FULLDEV: exit 1 naming it, still a device"
  "$V" convert t.jsonl null && chr null; ok $? "convert IN NULLDEV keeps the device"
  "$V" replay t.jsonl --series full 2> err; [ $? = 1 ] && chr full; ok $? "--series FULLDEV: exit 1, still a device"
  "$V" replay t.jsonl --timeline null > /dev/null && chr null; ok $? "--timeline NULLDEV keeps the device"
  "$V" sweep t.jsonl -c a100-80g -o null && chr null; ok $? "sweep -o NULLDEV keeps the device"
else
  for i in 1 2 3 4 5 6; do ok 0 "# skip mknod not permitted"; done
fi
cat fifo > fifo.out & reader=$!
"$V" replay t.jsonl --format json -o fifo; rc=$?
wait $reader
[ $rc = 0 ] && [ -p fifo ] && grep -q '"predicted_ns"' fifo.out; ok $? "replay -o FIFO writes into the FIFO, which stays one"
cat fifo > fifo.out & reader=$!
"$V" convert t.jsonl fifo; rc=$?
wait $reader
[ $rc = 0 ] && [ -p fifo ] && cmp -s fifo.out ref.jsonl; ok $? "convert IN FIFO: the trace through the FIFO"
"$V" convert t.jsonl - > stdout.jsonl && cmp -s stdout.jsonl ref.jsonl; ok $? "convert IN - writes stdout"
"$V" convert t.jsonl /dev/stdout > devstdout.jsonl && cmp -s devstdout.jsonl ref.jsonl && [ -L /dev/stdout -o -c /dev/stdout ]
ok $? "convert IN /dev/stdout writes the shell's file, /dev/stdout stays"
echo old > real; ln -s real link
"$V" replay t.jsonl --format json -o link && [ -L link ] && grep -q predicted_ns real; ok $? "-o SYMLINK writes the target, the link stays"
mkdir sub; ln -s sub/target.csv dangling
"$V" replay t.jsonl --series dangling > /dev/null && [ -L dangling ] && grep -q '^t_ns' sub/target.csv; ok $? "a dangling symlink writes its target"
ls sub > listing; [ "$(cat listing)" = target.csv ] && ! ls | grep -q tmp; ok $? "no temporary left beside the target or the link"
chmod 640 real; "$V" replay t.jsonl -o real; [ "$(stat -c %a real)" = 640 ]; ok $? "an existing file keeps its mode"
umask 022; rm -f new.json; "$V" replay t.jsonl -o new.json; [ "$(stat -c %a new.json)" = 644 ]; ok $? "a new file gets 0666 & ~umask"

# 2. output onto an input
cp t.jsonl keep.jsonl
"$V" replay t.jsonl -o t.jsonl 2> err; [ $? = 1 ] && cmp -s t.jsonl keep.jsonl && grep -q "report t.jsonl is the same file as the trace t.jsonl" err
ok $? "replay -o TRACE: refused naming both, trace intact"
ln -s t.jsonl alias.jsonl
"$V" replay alias.jsonl --series t.jsonl > /dev/null 2> err; [ $? = 1 ] && cmp -s t.jsonl keep.jsonl && grep -q "same file as the trace alias.jsonl" err
ok $? "--series onto the trace through a symlink: refused"
"$V" replay t.jsonl --timeline ./t.jsonl 2> err; [ $? = 1 ] && cmp -s t.jsonl keep.jsonl; ok $? "--timeline onto the trace: refused"
"$V" replay t.jsonl -o r.json --series r.json 2> err; [ $? = 1 ] && grep -q "same file as the report" err; ok $? "--series onto -o: refused"
ln t.jsonl hard.jsonl
"$V" convert t.jsonl hard.jsonl 2> err; [ $? = 1 ] && cmp -s t.jsonl keep.jsonl && grep -q "OUT hard.jsonl is the same file as IN t.jsonl" err
ok $? "convert onto a hard link of IN: refused"
"$V" sweep t.jsonl -c a100-80g -o t.jsonl 2> err; [ $? = 1 ] && cmp -s t.jsonl keep.jsonl && grep -q "same file as the trace" err
ok $? "sweep -o TRACE: refused"
"$V" sweep t.jsonl -c a100-80g --jobs-file t.jsonl 2> err; [ $? = 1 ] && cmp -s t.jsonl keep.jsonl && grep -q "same file as the trace" err
ok $? "sweep --jobs-file TRACE: refused"

# 5. signals remove temporaries. The trace comes through a FIFO held open,
# so the replay waits with its --timeline temporary made. A background
# job of a script ignores SIGINT: perl puts the default action back.
for sig in INT TERM HUP; do
  rm -f tl.json; mkfifo tr-$sig
  { head -2 t.jsonl; sleep 3; } > tr-$sig &
  feeder=$!
  perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV' "$V" replay tr-$sig -c a100-80g --timeline tl.json -o r.json 2> sig.err &
  pid=$!
  for i in $(seq 50); do ls | grep -q '^tl.json.tmp' && break; sleep 0.05; done
  ls | grep -q '^tl.json.tmp'; made=$?
  kill -$sig $pid; wait $pid 2> /dev/null; rc=$?
  kill $feeder 2> /dev/null; wait $feeder 2> /dev/null
  [ $made = 0 ] && ! ls | grep -q 'tmp' && [ ! -e tl.json ] && [ $rc -gt 128 ]; ok $? "SIG$sig during replay --timeline: temporary removed, killed by the signal (rc $rc)"
done

# convert (and synth, which writes through the same trace writer): the
# temporary beside OUT goes on SIGTERM too.
rm -f tr-conv; mkfifo tr-conv
{ head -2 t.jsonl; sleep 3; } > tr-conv &
feeder=$!
"$V" convert tr-conv conv.vtrace 2> /dev/null &
pid=$!
for i in $(seq 50); do ls | grep -q '^conv.vtrace.tmp' && break; sleep 0.05; done
ls | grep -q '^conv.vtrace.tmp'; made=$?
kill -TERM $pid; wait $pid 2> /dev/null; rc=$?
kill $feeder 2> /dev/null; wait $feeder 2> /dev/null
[ $made = 0 ] && ! ls | grep -q 'conv.vtrace' && [ $rc = 143 ]; ok $? "SIGTERM during convert: temporary removed (rc $rc)"

# 6. stdout write errors
if [ $have_nodes = 1 ]; then
  "$V" info t.jsonl > full 2> err; [ $? = 1 ] && grep -q "cannot write to stdout" err; ok $? "info > FULL: exit 1"
  "$V" info --format json t.jsonl > full 2> /dev/null; ok $(( $? != 1 )) "info --format json > FULL: exit 1"
  "$V" configs > full 2> /dev/null; ok $(( $? != 1 )) "configs > FULL: exit 1"
  "$V" configs --show a100-80g > full 2> /dev/null; ok $(( $? != 1 )) "configs --show > FULL: exit 1"
  "$V" replay --help > full 2> /dev/null; ok $(( $? != 1 )) "replay --help > FULL: exit 1"
else
  for i in 1 2 3 4 5; do ok 0 "# skip mknod not permitted"; done
fi
