#!/usr/bin/env python3
"""gen-nsys-nccl.py OUT.sqlite [--break CASE] [--fuzz SEED]

Writes a GENERATED Nsight Systems SQLite export (not a capture) holding
NCCL NVTX ranges with payloads and the kernels launched inside them, for
tests/nsys-nccl.sh. Nobody ran NCCL to make it.

The tables are the subset of the real schema the nsys importer reads:
StringIds, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_KERNEL and
NVTX_EVENTS with the columns of the real rtx3090-small.sqlite (validation/data/README.md)
(an Nsight Systems export), plus NVTX_EVENTS.binaryData and the payload
schema tables, which that file lacks: their layout (a 32-byte header of u64
domainId, schemaId, payload size, payload offset, then the payload;
NVTX_PAYLOAD_SCHEMA_ENTRIES' domainId, schemaId, idx, name, type, offset) is
taken from github.com/GindaChen/nsys-ai (src/nsys_ai/nccl_communicator.py),
which decodes Nsight Systems 2026.2 exports. The payload structs and schema
entries are NCCL's (src/include/nvtx_payload_schemas.h: NCCL communicator ID
u64, Message size [bytes] size_t, Peer rank / Root int, ...); range names are
the API functions' (NVTX3_FUNC_WITH_PARAMS registers __func__); schema ids
NVTX_PAYLOAD_ENTRY_TYPE_SCHEMA_ID_STATIC_START (1 << 24) + NCCL's NVTX_SID_*.

--break CASE writes one defect the importer must refuse (short-blob,
short-payload, offset, ranks0, msg63, end-before-start); --fuzz SEED flips
bytes of the NCCL payloads and schema offsets.
"""
import os
import random
import sqlite3
import struct
import sys

out = sys.argv[1]
brk = sys.argv[sys.argv.index("--break") + 1] if "--break" in sys.argv else None
seed = int(sys.argv[sys.argv.index("--fuzz") + 1]) if "--fuzz" in sys.argv else None
rng = random.Random(seed)

SCHEMA = """
CREATE TABLE StringIds (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    value                       TEXT      NOT NULL
);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
    start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER,
    correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
    start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
    streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
    shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER,
    registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
    blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
    staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
    localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,
    sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER
);
CREATE TABLE NVTX_EVENTS (
    start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER, category INTEGER,
    color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER,
    uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER,
    floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData BLOB
);
CREATE TABLE NVTX_PAYLOAD_SCHEMAS (domainId INTEGER, schemaId INTEGER, name TEXT, payloadSize INTEGER);
CREATE TABLE NVTX_PAYLOAD_SCHEMA_ENTRIES (
    domainId INTEGER, schemaId INTEGER, idx INTEGER, name TEXT, type INTEGER, offset INTEGER
);
"""

if os.path.exists(out):
    os.remove(out)
db = sqlite3.connect(out)
db.executescript(SCHEMA)
strings = {}


def sid(s):
    if s not in strings:
        strings[s] = len(strings) + 1
        db.execute("INSERT INTO StringIds VALUES (?, ?)", (strings[s], s))
    return strings[s]


PID = 4242
TA, TB = (PID << 24) | 4242, (PID << 24) | 4243      # threads 4242 and 4243
NCCL_DOM, OTHER_DOM = 1, 2
S0 = 1 << 24                                         # ..._SCHEMA_ID_STATIC_START
INT, UINT64, SIZE = 5, 18, 22                        # NVTX_PAYLOAD_ENTRY_TYPE_*
REDOP = S0 + 11                                      # NVTX_PAYLOAD_ENTRY_NCCL_REDOP
COMM, MSG, NRANKS = "NCCL communicator ID", "Message size [bytes]", "No. of ranks"
# schema id -> (name, entries (name, type, offset or None), struct format, size)
SCHEMAS = {
    S0 + 0: ("CommInitRank", [(COMM, UINT64, None), (NRANKS, INT, 8), ("Rank", INT, 12), ("CUDA device", INT, 16)],
             "<Qiii", 24),
    # Offsets left to NVTX's natural alignment (NULL), as the old schemas did.
    S0 + 4: ("AllGather", [(COMM, UINT64, None), (MSG, SIZE, None)], "<QQ", 16),
    S0 + 5: ("AllReduce", [(COMM, UINT64, None), (MSG, SIZE, 8), ("Reduction operation", REDOP, 16)], "<QQi", 24),
    S0 + 6: ("Broadcast", [(COMM, UINT64, None), (MSG, SIZE, 8), ("Root", INT, 16)], "<QQi", 24),
    S0 + 7: ("ReduceScatter", [(COMM, UINT64, None), (MSG, SIZE, 8), ("Reduction operation", REDOP, 16)], "<QQi", 24),
    S0 + 8: ("Reduce", [(COMM, UINT64, None), (MSG, SIZE, 8), ("Root", INT, 16), ("Reduction operation", REDOP, 20)],
             "<QQii", 24),
    S0 + 9: ("Send", [(COMM, UINT64, None), (MSG, SIZE, 8), ("Peer rank", INT, 16)], "<QQi", 24),
    S0 + 10: ("Recv", [(COMM, UINT64, None), (MSG, SIZE, 8), ("Peer rank", INT, 16)], "<QQi", 24),
    # Last, so that the rowids of the entries above stay as the test names them.
    S0 + 1: ("CommSplit", [(COMM, UINT64, None), ("Parent NCCL communicator ID", UINT64, 8), (NRANKS, INT, 16),
                           ("Rank", INT, 20), ("CUDA device", INT, 24), ("Color", INT, 28), ("Key", INT, 32)],
             "<QQiiiii", 40),
}
for sch, (name, entries, fmt, size) in SCHEMAS.items():
    db.execute("INSERT INTO NVTX_PAYLOAD_SCHEMAS VALUES (?, ?, ?, ?)", (NCCL_DOM, sch, name, size))
    for i, (en, ty, off) in enumerate(entries):
        if brk == "offset" and name == "AllReduce" and i == 1:
            off = -8
        db.execute("INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (?, ?, ?, ?, ?, ?)",
                   (NCCL_DOM, sch, i, en, ty, off))
SCHEMA_OF = {"ncclCommInitRank": S0 + 0, "ncclCommSplit": S0 + 1, "ncclAllGather": S0 + 4, "ncclAllReduce": S0 + 5,
             "ncclBroadcast": S0 + 6, "ncclReduceScatter": S0 + 7, "ncclReduce": S0 + 8,
             "ncclSend": S0 + 9, "ncclRecv": S0 + 10}


def blob(sch, *vals, dom=NCCL_DOM):
    fmt, size = SCHEMAS[sch][2], SCHEMAS[sch][3]
    payload = struct.pack(fmt, *vals).ljust(size, b"\0")
    if seed is not None:
        payload = bytearray(payload)
        for _ in range(rng.randint(1, 4)):
            payload[rng.randrange(len(payload))] = rng.randrange(256)
        payload = bytes(payload)
    return struct.pack("<QQQQ", dom, sch, len(payload), 32) + payload


def nvtx(start, end, name, tid=TA, payload=None, dom=NCCL_DOM):
    db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid, domainId, binaryData) "
               "VALUES (?, ?, 59, ?, ?, ?, ?)", (start, end, sid(name), tid, dom, payload))


def op(start, name, *vals, tid=TA, dur=1000, dom=NCCL_DOM):
    nvtx(start, start + dur, name, tid, blob(SCHEMA_OF[name], *vals, dom=dom), dom)


corr = [0]


def launch(start, kernel, stream=7, tid=TA):
    """A cuLaunchKernelEx call [start, start + 100] and its kernel 1000 ns later, 5000 ns long."""
    corr[0] += 1
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, ?, 0, NULL)",
               (start, start + 100, tid, corr[0], sid("cuLaunchKernelEx")))
    k = sid(kernel)
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 1, ?, ?, ?, ?, ?, NULL, 0, 0, "
               "96, 16, 1, 1, 512, 1, 1, 0, 0, 0, 0, ?, NULL, NULL, NULL)",
               (start + 1100, start + 6100, stream, corr[0], PID << 24, k, k, corr[0]))


AR = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096UL>)"
AG = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096UL>)"
RS = "ncclDevKernel_ReduceScatter_Sum_f64_RING_LL(ncclDevKernelArgsStorage<4096UL>)"
BC = "ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096UL>)"
RD = "ncclDevKernel_Reduce_Sum_i64_RING_LL(ncclDevKernelArgsStorage<4096UL>)"
SR = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096UL>)"
A, B, C = 0xA1A1A1A1A1A1A1A1, 0xB2, 0xC3       # communicators (C: never initialised here)
D = 0xD4                                         # split from A: 2 ranks

db.execute("INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (1000, 75, 'NCCL', ?, ?)",
           (TA, NCCL_DOM))
db.execute("INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (1000, 75, 'mylib', ?, ?)",
           (TA, OTHER_DOM))
op(1000, "ncclCommInitRank", A, 0 if brk == "ranks0" else 8, 0, 0)
op(3000, "ncclCommInitRank", B, 4, 0, 0)
op(10000, "ncclAllReduce", A, 2 ** 63 if brk == "msg63" else 4000, 0)   # 1000 f32
launch(10100, AR)
op(20000, "ncclAllGather", A, 512)                 # sendcount 256 bf16
launch(20100, AG)
op(30000, "ncclReduceScatter", A, 800, 0)          # recvcount 100 f64: input 800 x 8 ranks
launch(30100, RS)
launch(40100, "gemm_kernel")                       # not NCCL's
op(50000, "ncclBroadcast", B, 33, 0)
launch(50100, BC, stream=13)
op(60000, "ncclReduce", B, 80, 0, 0)
launch(60100, RD, stream=13)
# ncclSend outside a group runs its own ncclGroupStart/End, inside its range.
op(70000, "ncclSend", A, 128, 1)
nvtx(70100, 70150, "ncclGroupStart")
nvtx(70200, 70900, "ncclGroupEnd")
launch(70300, SR)
# PyTorch's all_to_all: a send and a receive per rank, in a group.
nvtx(80000, 80010, "ncclGroupStart")
for r in range(8):
    op(80100 + 200 * r, "ncclSend", A, 64, r, dur=50)
    op(80200 + 200 * r, "ncclRecv", A, 64, r, dur=50)
nvtx(82000, 83000, "ncclGroupEnd")
launch(82100, SR)
# Nested groups: the outer end launches both all-reduces, coalesced.
nvtx(90000, 90010, "ncclGroupStart")
op(90100, "ncclAllReduce", A, 400, 0, dur=50)
nvtx(90200, 90210, "ncclGroupStart")
op(90300, "ncclAllReduce", A, 200, 0, dur=50)
nvtx(90400, 90450, "ncclGroupEnd")
nvtx(90500, 91000, "ncclGroupEnd")
launch(90600, AR)
# A communicator whose size the export does not hold: no collective.
op(100000, "ncclAllReduce", C, 100, 0)
launch(100100, AR)
# Thread 4243's all-reduce while thread 4242 is inside an all-gather.
op(110000, "ncclAllReduce", A, 2048, 0, tid=TB)
op(110000, "ncclAllGather", A, 999)
launch(110100, AR, tid=TB)
# Another library's range named like NCCL's: not NCCL's domain.
op(120000, "ncclAllReduce", A, 777, 0, dom=OTHER_DOM)
launch(120100, AR)
# Two kernels inside one call: the first takes its collective.
op(130000, "ncclAllReduce", A, 1000, 0)
launch(130100, AR)
launch(130300, AR)
# A pipeline stage's exchange: send 400 to the next, receive 800 from the previous.
nvtx(140000, 140010, "ncclGroupStart")
op(140100, "ncclSend", A, 400, 1, dur=50)
op(140200, "ncclRecv", A, 800, 7, dur=50)
nvtx(140500, 141000, "ncclGroupEnd")
launch(140600, SR)
if brk == "end-before-start":
    nvtx(150000, 149000, "ncclAllReduce", payload=blob(S0 + 5, A, 1, 0))
if brk == "short-blob":
    nvtx(150000, 151000, "ncclAllReduce", payload=b"\1" * 31)
if brk == "short-payload":
    nvtx(150000, 151000, "ncclAllReduce", payload=struct.pack("<QQQQ", NCCL_DOM, S0 + 5, 24, 32) + b"\0" * 23)
# (After the broken rows, whose rowids the test names.) A communicator
# split from A, its all-reduce; a group over A and D: one kernel, no group.
op(4000, "ncclCommSplit", D, A, 2, 0, 0, 1, 0)
op(145000, "ncclAllReduce", D, 256, 0)
launch(145100, AR)
nvtx(147000, 147010, "ncclGroupStart")
op(147100, "ncclAllReduce", A, 100, 0, dur=50)
op(147200, "ncclAllReduce", D, 50, 0, dur=50)
nvtx(147500, 148000, "ncclGroupEnd")
launch(147600, AR)
if seed is not None:
    # Offsets of a few schema entries too (some become errors, most misreads).
    for _ in range(rng.randint(0, 2)):
        db.execute("UPDATE NVTX_PAYLOAD_SCHEMA_ENTRIES SET offset = ? WHERE rowid = ?",
                   (rng.choice([None, 0, 4, 8, 12, 16, 24, 1 << 31, -1]), rng.randint(1, 28)))
db.commit()
db.close()
