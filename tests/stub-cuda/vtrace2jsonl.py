#!/usr/bin/env python3
"""vtrace2jsonl.py — an independent decoder of the binary trace format
(docs/trace-format.md), used by the capture tests to check what the shim
wrote without depending on vramsim's reader. Usage: vtrace2jsonl.py IN.vtrace
prints the header line and one JSON object per event (all fields, defaults
included). Exits 1 on a malformed or truncated file."""
import json, struct, sys

OPS = ["alloc", "free", "copy", "memset", "kernel", "sync", "event_record",
       "stream_wait", "prefetch", "mark"]
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
    if ver not in (1, 2, 3):
        raise ValueError("bad version")
    out = [json.loads(r.raw(hl).decode())]
    strs, t, n = [], 0, 0
    while True:
        op = r.u8()
        if op == 0xF0:
            sid = r.uv(); ln = r.uv()
            if sid != len(strs):
                raise ValueError("string id out of order")
            strs.append(r.raw(ln).decode()); continue
        if op == 0xFE:
            cnt = r.uv()
            if r.raw(4) != b"VEND" or cnt != n:
                raise ValueError("bad end record")
            return out
        ext = op == 0x14          # a kernel with extensions (version 2)
        if ext:
            op = OPS.index("kernel")
        if op >= len(OPS):
            raise ValueError("unknown op %d at event %d" % (op, n))
        t += r.sv()
        e = {"t": t, "op": OPS[op], "tid": r.uv(), "host_ns": r.uv()}
        name = OPS[op]
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
        out.append(e); n += 1


if __name__ == "__main__":
    try:
        with open(sys.argv[1], "rb") as f:
            lines = decode(f.read())
    except (OSError, ValueError, IndexError, UnicodeDecodeError) as ex:
        print("%s: %s" % (sys.argv[1], ex), file=sys.stderr)
        sys.exit(1)
    for l in lines:
        print(json.dumps(l, separators=(",", ":")))
