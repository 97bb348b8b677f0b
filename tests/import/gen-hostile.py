#!/usr/bin/env python3
"""gen-hostile.py KIND OUT — small crafted inputs whose cost used to be out of
proportion to their size (issue 26; tests/bounded-readers.sh):

  shared     a ~10 KB snapshot pickle whose segments, blocks and frames are
             memo-shared objects: 1600 references each (1600^3 frame visits
             when each reference is walked)
  seed       a snapshot with 40,960 live 512-byte blocks, every other slot of
             20 small segments (the free fragments grow with every seed)
  parts      OUT.part1 with 12,000 segment_maps of disjoint expandable ranges,
             OUT a later dump sharing no action with it (a gap: the join
             plays part1 forward), and OUT.trace.jsonl / .addrs, a vramcap
             trace of one allocation to merge them with
  sparse     a 9-byte pickle: LONG_BINPUT index 2^24 - 1
"""
import pickle
import sys

kind, out = sys.argv[1], sys.argv[2]
A = 0x7f0000000000
MiB = 1 << 20

if kind == "shared":
    fr = {"filename": "libtorch_cuda.so", "line": 1, "name": "step"}  # no Python frame: every frame looked at
    frames = [fr] * 1600
    blk = {"address": A, "size": 512, "requested_size": 512, "state": "active_allocated", "frames": frames}
    seg = {"device": 0, "address": A, "total_size": 2 * MiB, "stream": 0, "segment_type": "small",
           "blocks": [blk] * 1600}
    open(out, "wb").write(pickle.dumps({"segments": [seg] * 1600, "device_traces": [[]]}, protocol=4))
elif kind == "seed":
    segs = []
    for s in range(20):
        base = A + s * 2 * MiB
        blocks = []
        for i in range(4096):
            blocks.append({"address": base + 512 * i, "size": 512, "requested_size": 512,
                           "state": "active_allocated" if i % 2 == 0 else "inactive", "frames": []})
        segs.append({"device": 0, "address": base, "total_size": 2 * MiB, "stream": 0,
                     "segment_type": "small", "blocks": blocks})
    open(out, "wb").write(pickle.dumps({"segments": segs, "device_traces": [[]]}, protocol=4))
elif kind == "parts":
    n = 12000
    maps = [{"action": "segment_map", "addr": A + 4 * MiB * i, "size": 2 * MiB, "stream": 0,
             "time_us": 1000 + i, "frames": []} for i in range(n)]
    segs = [{"device": 0, "address": A + 4 * MiB * i, "total_size": 2 * MiB, "stream": 0,
             "segment_type": "large", "is_expandable": True, "blocks": []} for i in range(n)]
    open(out + ".part1", "wb").write(pickle.dumps({"segments": segs, "device_traces": [maps]}, protocol=4))
    last = [{"action": "segment_alloc", "addr": A - 20 * MiB, "size": 20 * MiB, "stream": 0,
             "time_us": 9000000, "frames": []}]
    seg2 = segs + [{"device": 0, "address": A - 20 * MiB, "total_size": 20 * MiB, "stream": 0,
                    "segment_type": "large", "blocks": []}]
    open(out, "wb").write(pickle.dumps({"segments": seg2, "device_traces": [last]}, protocol=4))
    with open(out + ".trace.jsonl", "w") as f:
        f.write('{"vramsim_trace": 1, "time_unit": "ns", "capture": {"config": "a100-80g", "tool": "vramcap"}}\n')
        f.write('{"t": 1000, "op": "alloc", "id": 1, "bytes": %d, "kind": "device", "host_ns": 500}\n' % (20 * MiB))
    with open(out + ".trace.jsonl.addrs", "w") as f:
        f.write("vramcap-addrs 1 8999999000000\na 0 %x\n" % (A - 20 * MiB))
elif kind == "sparse":
    open(out, "wb").write(b"\x80\x04N" + b"r\xff\xff\xff\x00" + b".")
else:
    sys.exit("unknown kind " + kind)
