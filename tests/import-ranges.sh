#!/bin/bash
# import-ranges.sh — issue 26 item 8: an import that succeeds writes a
# trace every reader accepts, and combining untrusted numbers never wraps:
# the snapshot importer refuses streams, sizes and times outside the
# trace's range; the tensor merge refuses a trace whose ids or thread ids
# leave no room for the tensors, and action times that overflow on the
# trace's clock; each error names the field.
. "$(dirname "$0")/sweep-lib.sh"
V=$VRAMSIM
echo 1..6
cd "$T" || exit 1
A=$((0x7f0000000000))
python3 - "$A" <<'PY'
import pickle, sys
A = int(sys.argv[1]); MiB = 1 << 20
def snap(actions, segs=None):
    return pickle.dumps({"segments": segs or [], "device_traces": [actions]}, protocol=4)
def act(kind, addr, size, t, stream=0):
    return {"action": kind, "addr": addr, "size": size, "stream": stream, "time_us": t, "frames": []}
open("stream.pickle", "wb").write(snap([act("alloc", A, 512, 1, stream=2**64 - 1)]))
open("size.pickle", "wb").write(snap([], [{"device": 0, "address": A, "total_size": 2**64 - 1, "stream": 0, "blocks": []}]))
open("time.pickle", "wb").write(snap([act("alloc", A, 512, 2**63 // 1000 + 1)]))
# two anchors ~9e18 ns apart on the two clocks: the median offset overflows the other
open("anchors.pickle", "wb").write(snap([act("segment_alloc", A, 2 * MiB, 1),
                                         act("segment_alloc", A + 4 * MiB, 2 * MiB, 9200000000000000)]))
open("ok.pickle", "wb").write(snap([act("segment_alloc", A, 2 * MiB, 1), act("alloc", A, 512, 2)]))
H = '{"vramsim_trace": 1, "time_unit": "ns", "capture": {"config": "a100-80g", "tool": "vramcap"}}\n'
def trace(name, lines, side):
    open(name, "w").write(H + "".join(l + "\n" for l in lines))
    open(name + ".addrs", "w").write("vramcap-addrs 1 0\n" + "".join(s + "\n" for s in side))
trace("anchors.jsonl", ['{"t": 1000, "op": "alloc", "id": 1, "bytes": %d, "kind": "device", "host_ns": 1}' % (2 * MiB),
                        '{"t": 9000000000000000000, "op": "alloc", "id": 2, "bytes": %d, "kind": "device", "host_ns": 1}' % (2 * MiB)],
      ["a 0 %x" % (A + 4 * MiB), "a 1 %x" % A])
trace("maxid.jsonl", ['{"t": 1000, "op": "alloc", "id": 9223372036854775807, "bytes": %d, "kind": "device", "host_ns": 1}' % (2 * MiB)],
      ["a 0 %x" % A])
trace("maxtid.jsonl", ['{"t": 1000, "op": "alloc", "id": 1, "bytes": %d, "kind": "device", "host_ns": 1, "tid": 4294967295}' % (2 * MiB)],
      ["a 0 %x" % A])
PY
"$V" convert stream.pickle o.jsonl 2> err; [ $? = 1 ] && grep -q "'stream' 18446744073709551615 is out of range" err && [ ! -e o.jsonl ]
ok $? "snapshot: a stream of 2^64-1 refused, naming the field"
"$V" convert size.pickle o.jsonl 2> err; [ $? = 1 ] && grep -q "segments\[0\]: 'total_size' 18446744073709551615 is out of range" err
ok $? "snapshot: a segment size of 2^64-1 refused, naming the field"
"$V" convert time.pickle o.jsonl 2> err; [ $? = 1 ] && grep -q "'time_us' 9223372036854776 is out of range" err
ok $? "snapshot: a time_us whose ns overflow refused"
"$V" convert --tensor ok.pickle maxid.jsonl o.jsonl 2> err; [ $? = 1 ] && grep -q "field 'id': the trace's largest id 9223372036854775807 leaves no room" err
ok $? "tensor merge: ids past 2^63-1 refused"
"$V" convert --tensor ok.pickle maxtid.jsonl o.jsonl 2> err; [ $? = 1 ] && grep -q "field 'tid': the trace uses thread id 4294967295" err
ok $? "tensor merge: no thread id after 2^32-1, refused (it wrapped to 0)"
"$V" convert --tensor anchors.pickle anchors.jsonl o.jsonl 2> err; [ $? = 1 ] && grep -q "falls outside the trace's range" err && [ ! -e o.jsonl ]
ok $? "tensor merge: action times that overflow on the trace's clock refused"
