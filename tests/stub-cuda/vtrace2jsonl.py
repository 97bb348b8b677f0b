#!/usr/bin/env python3
"""vtrace2jsonl.py — an independent decoder of the binary trace format
(docs/trace-format.md), used by the capture tests to check what the shim
wrote without depending on vramsim's reader. Usage: vtrace2jsonl.py IN.vtrace
prints the header line and one JSON object per event (all fields, defaults
included). Exits 1 on a malformed or truncated file, and on a version 4 end
record whose checksum, offset or summary (first t, last captured end, marks
per thread and name) differs from the file and the events decoded."""
import json, struct, sys

OPS = ["alloc", "free", "copy", "memset", "kernel", "sync", "event_record",
       "stream_wait", "prefetch", "mark", "empty_cache"]

M64 = (1 << 64) - 1
P1, P2, P3, P4, P5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                      0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5)


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def _round(acc, lane):
    return (_rotl((acc + lane * P2) & M64, 31) * P1) & M64


def _merge(acc, v):
    return ((acc ^ _round(0, v)) * P1 + P4) & M64


def xxh64(data, seed=0):
    """XXH64 (the checksum of version 4's end record), written from the
    specification independently of sim/base/xxh64.c so that the two check
    each other."""
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + P1 + P2) & M64, (seed + P2) & M64, seed, (seed - P1) & M64]
        lanes = struct.unpack_from("<%dQ" % ((n // 32) * 4), data)
        for k in range(0, len(lanes), 4):
            v = [_round(v[j], lanes[k + j]) for j in range(4)]
        i = (n // 32) * 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & M64
        for x in v:
            h = _merge(h, x)
    else:
        h = (seed + P5) & M64
    h = (h + n) & M64
    while i + 8 <= n:
        h = (_rotl(h ^ _round(0, struct.unpack_from("<Q", data, i)[0]), 27) * P1 + P4) & M64
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ (struct.unpack_from("<I", data, i)[0] * P1 & M64), 23) * P2 + P3) & M64
        i += 4
    while i < n:
        h = (_rotl(h ^ (data[i] * P5 & M64), 11) * P1) & M64
        i += 1
    h = ((h ^ (h >> 33)) * P2) & M64
    h = ((h ^ (h >> 29)) * P3) & M64
    return h ^ (h >> 32)


XXH64_VECTORS = [(b"", 0xEF46DB3751D8E999), (b"a", 0xD24EC4F1A98C6E5B),
                 (b"abc", 0x44BC2CF5AD770999),
                 (b"Nobody inspects the spammish repetition", 0xFBCEA83C8A378BF1)]
KINDS = ["device", "managed", "pinned"]
DIRS = ["h2d", "d2h", "d2d", "p2p"]
SCOPES = ["device", "stream", "event"]
TOS = ["device", "host"]


class R:
    def __init__(self, b):
        self.b, self.i = b, 0

    def u8(self):
        if self.i >= len(self.b):
            raise ValueError("truncated")
        v = self.b[self.i]; self.i += 1
        return v

    def uv(self):
        v, s = 0, 0
        for _ in range(10):
            c = self.u8(); v |= (c & 0x7f) << s; s += 7
            if not c & 0x80:
                return v
        raise ValueError("varint too long")

    def sv(self):
        v = self.uv()
        return (v >> 1) ^ -(v & 1)

    def opt(self):
        v = self.uv()
        return None if v == 0 else v - 1

    def raw(self, n):
        if self.i + n > len(self.b):
            raise ValueError("truncated")
        v = self.b[self.i:self.i + n]; self.i += n
        return v


def decode(b):
    r = R(b)
    if r.raw(8) != b"VRAMTRC\x1a":
        raise ValueError("bad magic")
    ver, hl = struct.unpack("<II", r.raw(8))
    if ver not in (1, 2, 3, 4):
        raise ValueError("bad version %d" % ver)
    out = [json.loads(r.raw(hl).decode())]
    first = r.i               # the first record: where the checksum starts
    strs, t, n = [], 0, 0
    # What version 4's summary must say, from the events themselves.
    first_t, last_end, marks = None, 0, {}
    while True:
        op = r.u8()
        if op == 0xF0:
            sid = r.uv(); ln = r.uv()
            if sid != len(strs):
                raise ValueError("string id out of order")
            strs.append(r.raw(ln).decode()); continue
        if op == 0xFE:
            at = r.i - 1
            cnt = r.uv()
            if cnt != n:
                raise ValueError("bad end record: it counts %d events but the file holds %d" % (cnt, n))
            if ver >= 4:
                end_summary(r, b, first, at, first_t, last_end, marks)
            if r.raw(4) != b"VEND":
                raise ValueError("bad end record: no VEND")
            if r.i != len(b):
                raise ValueError("data after the end record")
            return out
        ext = op == 0x14          # a kernel with extensions (version 2)
        if ext:
            op = OPS.index("kernel")
        if op >= len(OPS):
            raise ValueError("unknown op %d at event %d" % (op, n))
        t += r.sv()
        e = {"t": t, "op": OPS[op], "tid": r.uv(), "host_ns": r.uv()}
        name = OPS[op]
        end = t + e["host_ns"]
        if name == "alloc":
            e["id"] = r.uv(); e["bytes"] = r.uv(); e["kind"] = KINDS[r.u8()]
            s = r.opt(); tag = r.opt()
            if s is not None: e["stream"] = s
            if tag is not None: e["tag"] = strs[tag]
        elif name == "free":
            e["id"] = r.uv(); s = r.opt()
            if s is not None: e["stream"] = s
        elif name == "copy":
            e["dir"] = DIRS[r.u8()]; e["bytes"] = r.uv(); e["src"] = r.uv(); e["dst"] = r.uv()
            e["stream"] = r.uv(); e["async"] = bool(r.u8()); d = r.opt()
            if d is not None: e["dur"] = d
        elif name == "memset":
            e["dst"] = r.uv(); e["bytes"] = r.uv(); e["stream"] = r.uv(); e["async"] = bool(r.u8())
            d = r.opt()
            if d is not None: e["dur"] = d
        elif name == "kernel":
            e["name"] = strs[r.uv()]; e["stream"] = r.uv(); e["dur"] = r.uv()
            by = r.opt(); cn = r.opt()
            if by is not None: e["bytes"] = by
            if cn is not None: e["compute_ns"] = cn
            for f in ("reads", "writes", "touches"):
                e[f] = [r.uv() for _ in range(r.uv())]
            if ext:
                has = r.u8()
                if has & 1:
                    fl = r.opt(); pr = r.u8()
                    if fl is not None: e["flops"] = fl
                    if pr: e["precision"] = pr
                    e["grid"] = [r.uv() for _ in range(3)]; e["block"] = [r.uv() for _ in range(3)]
                    e["regs"] = r.uv(); e["smem"] = r.uv()
                if has & 2:
                    e["collective"] = {"kind": r.u8(), "bytes": r.uv(), "ranks": r.uv()}
                if has & 4:   # the collective's group (version 3)
                    g = {"id": r.uv()}
                    role = r.u8()
                    if role: g["role"] = ["", "dp", "tp", "pp", "ep", "cp"][role]
                    e["collective"]["group"] = g
        elif name == "sync":
            e["scope"] = SCOPES[r.u8()]; v = r.uv()
            if e["scope"] == "stream": e["stream"] = v
            if e["scope"] == "event": e["event"] = v
        elif name == "event_record":
            e["event"] = r.uv(); e["stream"] = r.uv()
        elif name == "stream_wait":
            e["stream"] = r.uv(); e["event"] = r.uv()
        elif name == "prefetch":
            e["id"] = r.uv(); e["bytes"] = r.uv(); e["to"] = TOS[r.u8()]; e["stream"] = r.uv()
        elif name == "mark":
            e["name"] = strs[r.uv()]
            k = (e["tid"], e["name"].encode())
            marks[k] = (marks.get(k, (0, 0))[0] + 1, t)
        elif name == "empty_cache":
            s = r.opt()
            if s is not None: e["stream"] = s
        if name in ("kernel", "copy", "memset") and "dur" in e:
            end = max(end, t + e["dur"])
        first_t = t if first_t is None else min(first_t, t)
        last_end = max(last_end, end)
        out.append(e); n += 1


def end_summary(r, b, first, at, first_t, last_end, marks):
    """Reads version 4's summary, checksum and offset after the count and
    checks each against the file and the events (FIRST: the first record's
    offset, AT: the end record's)."""
    got_first = r.opt()
    if got_first != first_t:
        raise ValueError("the end record's summary gives first_t %s but the events' earliest t is %s"
                         % (got_first, first_t))
    got_end = r.uv()
    if got_end != last_end:
        raise ValueError("the end record's summary gives last_end %d but the events' latest end is %d"
                         % (got_end, last_end))
    got, prev = [], None
    for _ in range(r.uv()):
        tid = r.uv(); name = r.raw(r.uv()); cnt = r.uv(); lt = r.uv()
        if prev is not None and (tid, name) <= prev:
            raise ValueError("the end record's marks are not sorted by tid, then name "
                             "(tid %d %r after tid %d %r)" % (tid, name, prev[0], prev[1]))
        prev = (tid, name)
        got.append((tid, name, cnt, lt))
    want = [(tid, name, c, lt) for (tid, name), (c, lt) in sorted(marks.items())]
    if got != want:
        raise ValueError("the end record's marks %r differ from the events' %r" % (got, want))
    hashed = xxh64(b[first:r.i])
    ck, off = struct.unpack("<QQ", r.raw(16))
    if ck != hashed:
        raise ValueError("the end record's checksum is 0x%016x but the records hash to 0x%016x"
                         % (ck, hashed))
    if off != at:
        raise ValueError("the end record's end_offset is %d but the record is at %d" % (off, at))


if __name__ == "__main__":
    for data, want in XXH64_VECTORS:
        assert xxh64(data) == want, "xxh64(%r) is 0x%016x, not 0x%016x" % (data, xxh64(data), want)
    try:
        with open(sys.argv[1], "rb") as f:
            lines = decode(f.read())
    except (OSError, ValueError, IndexError, UnicodeDecodeError) as ex:
        print("%s: %s" % (sys.argv[1], ex), file=sys.stderr)
        sys.exit(1)
    for l in lines:
        print(json.dumps(l, separators=(",", ":")))
