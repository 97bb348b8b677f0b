#!/usr/bin/env python3
"""gen-snapshot.py OUT.pickle

Writes a GENERATED PyTorch memory snapshot (not a capture: nobody ran
torch to make it), in the layout torch.cuda.memory._dump_snapshot()
pickles (protocol 4; `segments` at the dump, `device_traces[d]` the ring
buffer of actions before it), so that the snapshot importer and the
pytorch allocator model are tested on a file that may be redistributed.
tests/snapshot-cli.sh and tests/mem/test-snapshot-replay.c use it; the
real snapshots validation/data/README.md lists are optional.

What happens on device 0, as PyTorch's caching allocator
(c10/cuda/CUDACachingAllocator.cpp) would do it, time in us:

    t   action          address        bytes      why
    100 segment_alloc   S1             2 MiB      a request <= 1 MiB: the small pool's 2 MiB segment
    101 alloc           S1             512        (block of 512 B)
    110 segment_alloc   S2             20 MiB     1 MiB < request < 10 MiB: a 20 MiB large segment
    111 alloc           S2             4 MiB
    120 alloc           S2 + 4 MiB     4 MiB      best fit: the split remainder of S2
    130 free_requested  S2             4 MiB
    131 free_completed  S2             4 MiB
    140 segment_alloc   S3             30 MiB     >= 10 MiB: rounded up to 2 MiB, no free block holds it
    141 alloc           S3             30 MiB
    150 free_requested  S1             512
    151 free_completed  S1             512
    160 snapshot                                  (a marker: becomes a mark)

So at the dump: S1 (2 MiB, its one block free), S2 (20 MiB: 4 MiB free,
4 MiB allocated, 12 MiB free), S3 (30 MiB, allocated). Reserved peak and
end: 2 + 20 + 30 = 52 MiB = 54,525,952 B; allocated peak 512 B + 4 MiB +
30 MiB = 35,652,096 B (after t 141). Device 1's list is empty and no
segment is on it (`convert --device 1` imports nothing, and says so).
"""
import pickle
import sys

MiB = 1 << 20
S1, S2, S3 = 0x7F0000000000, 0x7F0000200000, 0x7F0001600000
USER = {"filename": "train.py", "line": 12, "name": "forward"}
TORCH = {"filename": "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py", "line": 116, "name": "forward"}
FRAMES = [TORCH, USER]


def act(t, action, addr=0, size=0):
    a = {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": t}
    a["frames"] = FRAMES if action == "alloc" else []
    return a


trace = [
    act(100, "segment_alloc", S1, 2 * MiB), act(101, "alloc", S1, 512),
    act(110, "segment_alloc", S2, 20 * MiB), act(111, "alloc", S2, 4 * MiB),
    act(120, "alloc", S2 + 4 * MiB, 4 * MiB),
    act(130, "free_requested", S2, 4 * MiB), act(131, "free_completed", S2, 4 * MiB),
    act(140, "segment_alloc", S3, 30 * MiB), act(141, "alloc", S3, 30 * MiB),
    act(150, "free_requested", S1, 512), act(151, "free_completed", S1, 512),
    act(160, "snapshot"),
]


def block(addr, size, state, requested=None):
    return {"address": addr, "size": size, "requested_size": size if requested is None else requested,
            "state": state, "frames": FRAMES if state == "active_allocated" else []}


def segment(addr, size, kind, blocks):
    allocated = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
    return {"device": 0, "address": addr, "total_size": size, "allocated_size": allocated,
            "active_size": allocated, "requested_size": allocated, "stream": 0, "segment_type": kind,
            "segment_pool_id": (0, 0), "is_expandable": False, "frames": [], "blocks": blocks}


segments = [
    segment(S1, 2 * MiB, "small", [block(S1, 2 * MiB, "inactive", 0)]),
    segment(S2, 20 * MiB, "large", [block(S2, 4 * MiB, "inactive", 0),
                                    block(S2 + 4 * MiB, 4 * MiB, "active_allocated"),
                                    block(S2 + 8 * MiB, 12 * MiB, "inactive", 0)]),
    segment(S3, 30 * MiB, "large", [block(S3, 30 * MiB, "active_allocated")]),
]

with open(sys.argv[1], "wb") as f:
    pickle.dump({"segments": segments, "device_traces": [trace, []]}, f, protocol=4)
