#!/usr/bin/env python3
"""rand-trace.py SEED OUT.jsonl: a random but valid vramsim trace for
bench/diff-check.sh (byte-identical checks of the engine; not a workload).

Every op appears; 12-40 ids are reused heavily (an id is allocated again
after its free), as device, managed and pinned memory of 4 KiB to 10 GiB,
some stream-ordered; 1-5 streams, 1-3 host threads, events recorded and
waited on, syncs of every scope. Deterministic for a seed."""
import json, random, sys

seed, out = int(sys.argv[1]), sys.argv[2]
r = random.Random(seed)
n_events = r.randint(2100, 4400)
n_ids = r.randint(12, 40)
n_streams = r.randint(1, 5)
n_threads = r.randint(1, 3)
KiB, GiB = 1024, 1024 ** 3
live = {}            # id -> kind
recorded = []        # event ids recorded so far
t = 0
lines = [json.dumps({"vramsim_trace": 1, "time_unit": "ns",
                     "capture": {"device": "random", "config": "a100-80g", "tool": "rand-trace.py"}})]

def size():
    return r.choice([4 * KiB, 64 * KiB, 2 * 1024 * KiB, 100 * 1024 * KiB, GiB, 3 * GiB, 10 * GiB,
                     r.randint(1, 10 * GiB)])

def ids(kinds=None, k=3):
    c = [i for i, kd in live.items() if kinds is None or kd in kinds]
    return r.sample(c, min(len(c), r.randint(0, k)))

def stream():
    return r.randrange(n_streams)

for _ in range(n_events):
    t += r.choice([0, 1, 500, 3000, 20000, 400000])
    e = {"t": t}
    op = r.choices(["alloc", "free", "copy", "memset", "kernel", "sync", "event_record",
                    "stream_wait", "prefetch", "mark"], [14, 10, 10, 4, 36, 5, 6, 6, 4, 3])[0]
    free_ids = [i for i in range(1, n_ids + 1) if i not in live]
    if op == "alloc" and not free_ids: op = "free"
    if op == "free" and not live: op = "kernel"
    if op == "alloc":
        i = r.choice(free_ids)
        kind = r.choice(["device", "device", "managed", "pinned"])
        e.update(op="alloc", id=i, bytes=size(), kind=kind)
        if kind == "device" and r.random() < 0.2: e["stream"] = stream()
        if r.random() < 0.5: e["tag"] = r.choice(["params", "grads", "act", "io"])
        live[i] = kind
    elif op == "free":
        i = r.choice(list(live))
        e.update(op="free", id=i)
        if live[i] == "device" and r.random() < 0.2: e["stream"] = stream()
        del live[i]
    elif op == "copy":
        d = r.choice(["h2d", "d2h", "d2d", "p2p"])
        src = (ids(None, 1) or [0])[0] if r.random() < 0.8 else 0
        dst = (ids(None, 1) or [0])[0] if r.random() < 0.8 else 0
        e.update(op="copy", dir=d, src=src, dst=dst, bytes=r.randint(1, 2 * GiB), stream=stream(),
                 **{"async": r.random() < 0.7})
        if r.random() < 0.5: e["dur"] = r.randint(1000, 5000000)
        if not e["src"]: del e["src"]
        if not e["dst"]: del e["dst"]
    elif op == "memset":
        c = ids(None, 1)
        if not c: continue
        e.update(op="memset", dst=c[0], bytes=r.randint(1, GiB), stream=stream(), **{"async": r.random() < 0.5})
    elif op == "kernel":
        e.update(op="kernel", name=r.choice(["gemm", "relu", "nccl_allreduce", "adam", "k%d" % r.randint(0, 30)]),
                 stream=stream(), dur=r.randint(1000, 3000000))
        if r.random() < 0.7: e["bytes"] = r.randint(0, 20 * GiB)
        if r.random() < 0.5: e["compute_ns"] = r.randint(0, 2000000)
        for f in ("reads", "writes", "touches"):
            l = ids(None, 3 if f != "touches" else 1)
            if l: e[f] = l
    elif op == "sync":
        sc = r.choice(["device", "stream", "event"] if recorded else ["device", "stream"])
        e.update(op="sync", scope=sc)
        if sc == "stream": e["stream"] = stream()
        if sc == "event": e["event"] = r.choice(recorded)
    elif op == "event_record":
        ev = r.randint(1, 8)
        e.update(op="event_record", event=ev, stream=stream())
        recorded.append(ev)
    elif op == "stream_wait":
        if not recorded: continue
        e.update(op="stream_wait", stream=stream(), event=r.choice(recorded))
    elif op == "prefetch":
        c = ids({"managed"}, 1)
        if not c: continue
        e.update(op="prefetch", id=c[0], bytes=r.randint(1, 4 * GiB), to=r.choice(["device", "host"]), stream=stream())
    else:
        e.update(op="mark", name=r.choice(["step", "fwd", "bwd"]))
    tid = r.randrange(n_threads)
    if tid: e["tid"] = tid
    if r.random() < 0.3: e["host_ns"] = r.randint(0, 100000)
    lines.append(json.dumps(e))

with open(out, "w") as f:
    f.write("\n".join(lines) + "\n")
