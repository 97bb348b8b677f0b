#!/bin/bash
# output-rule.sh — issue 26 items 10-14: one output rule for every command
# (base/outfile.h outfile_check_rule, docs/errors.md "Outputs"): no output
# is a file the command reads; `--` ends options everywhere; convert's
# --format and --device apply on every path or are refused; convert
# --tensor-async reads IN once; fit opens no file a trace header names.
. "$(dirname "$0")/sweep-lib.sh"
here=$(cd "$(dirname "$0")/.." && pwd)
V=$VRAMSIM
echo 1..16
cd "$T" || exit 1
cp "$here/tests/import/snapshot-fixture.pickle" s.pickle
cp s.pickle s.keep
printf 'vramcap-addrs 1 1000\n' > t.jsonl.addrs
cp t.jsonl.addrs addrs.keep
echo '{"extends": "a100-80g"}' > c.json
cp c.json c.keep
intact () { cmp -s "$1" "$2"; }

# 10. outputs over inputs
"$V" convert --tensor s.pickle t.jsonl s.pickle 2> err; [ $? = 1 ] && intact s.pickle s.keep \
  && grep -q "OUT s.pickle is the same file as the snapshot (--tensor) s.pickle" err
ok $? "convert --tensor: OUT onto the snapshot refused, the snapshot intact"
"$V" convert --tensor s.pickle t.jsonl t.jsonl.addrs 2> err; [ $? = 1 ] && intact t.jsonl.addrs addrs.keep \
  && grep -q "is the same file as the address sidecar" err
ok $? "convert --tensor: OUT onto the default address sidecar refused"
cp s.pickle s.pickle.part1
"$V" convert --tensor s.pickle t.jsonl s.pickle.part1 2> err; [ $? = 1 ] && intact s.pickle.part1 s.keep \
  && grep -q "same file as a part dump of the snapshot" err
ok $? "convert --tensor: OUT onto a part dump refused"
rm -f s.pickle.part1
ln -s s.pickle link.pickle
"$V" convert s.pickle link.pickle 2> err; [ $? = 1 ] && intact s.pickle s.keep && [ -L link.pickle ]
ok $? "convert IN LINK-TO-IN refused (a symlink to an input)"
"$V" replay t.jsonl -c c.json -o c.json 2> err; [ $? = 1 ] && intact c.json c.keep \
  && grep -q "report c.json is the same file as the config (-c) c.json" err
ok $? "replay -c C -o C refused"
"$V" replay t.jsonl --capture-config c.json -o c.json 2> /dev/null; [ $? = 1 ] && intact c.json c.keep
ok $? "replay --capture-config C -o C refused"
"$V" replay t.jsonl -c c.json --series c.json 2> /dev/null; [ $? = 1 ] && intact c.json c.keep
ok $? "replay -c C --series C refused"
"$V" fit t.jsonl -c c.json -o c.json 2> err; [ $? = 1 ] && intact c.json c.keep \
  && grep -q "output c.json is the same file as the config c.json" err
ok $? "fit -c C -o C refused"

# 11. --tensor-async reads IN once: a FIFO, standard input
mkfifo in.fifo
cat t.jsonl > in.fifo &
timeout 10 "$V" convert --tensor-async x in.fifo a1.jsonl 2> /dev/null; rc=$?
timeout 10 "$V" convert --tensor-async x - a2.jsonl < t.jsonl 2> /dev/null && [ $rc = 0 ] && cmp -s a1.jsonl a2.jsonl \
  && grep -q '"stream_ordered_allocations"' a2.jsonl
ok $? "convert --tensor-async from a FIFO and from - (rc $rc)"

# 12. fit opens no path a trace header names
printf '{"vramsim_trace": 1, "time_unit": "ns", "capture": {"config": "/dev/stdin"}}\n' > dev.jsonl
timeout 5 "$V" fit dev.jsonl -c a100-80g < /dev/null 2> err; [ $? = 1 ] && grep -q "'capture.config' is \"/dev/stdin\", not a preset" err
ok $? "fit: a header's capture.config path is refused, not opened"

# 13. --format and --device on every convert path
K="$here/validation/data/kineto/alexnet-a100.json.gz"
"$V" convert --format jsonl "$K" k.vtrace 2> /dev/null && head -c 16 k.vtrace | grep -q vramsim_trace
ok $? "convert --format jsonl: a Kineto import to OUT.vtrace writes JSONL"
"$V" convert --format binary s.pickle s.out 2> /dev/null && head -c 8 s.out | grep -q VRAMTRC
ok $? "convert --format binary: a snapshot import to OUT writes binary"
"$V" convert --device 1 "$K" k2.jsonl 2> err; [ $? = 2 ] && grep -q "device picks the device of a PyTorch memory snapshot" err && [ ! -e k2.jsonl ]
ok $? "convert --device on a Kineto import: refused"
"$V" convert --device 0 t.jsonl t2.jsonl 2> /dev/null; [ $? = 2 ] && [ ! -e t2.jsonl ]
ok $? "convert --device on a vramsim trace: refused"

# 14. -- ends the options of every command
cp t.jsonl ./-t.jsonl
"$V" info -- -t.jsonl > /dev/null && "$V" replay -c a100-80g -- -t.jsonl > /dev/null \
  && "$V" convert -- -t.jsonl dd.jsonl 2> /dev/null && "$V" fit -c a100-80g -- -t.jsonl > /dev/null \
  && "$V" sweep -c a100-80g -o sw.csv -- -t.jsonl 2> /dev/null
ok $? "info, replay, convert, fit, sweep: -- then a trace named -t.jsonl"
"$V" convert t.jsonl -- -out.jsonl 2> /dev/null && [ -s ./-out.jsonl ]
ok $? "convert IN -- -OUT"
