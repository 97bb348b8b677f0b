#!/usr/bin/env python3
"""to-v3.py IN OUT [VERSION] — a binary trace of version 4 as an older
version (3 by default; 2 for one without collective groups): the same
records, the end record of versions 1-3 (0xFE, the count, "VEND"), its
summary, checksum and offset dropped (docs/trace-format.md). For the
bench's row of a version 3 trace, whose rest --sample-steps frames, and
the tests that read older files."""
import struct
import sys


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: to-v3.py IN OUT [VERSION]")
    version = int(sys.argv[3]) if len(sys.argv) == 4 else 3
    d = open(sys.argv[1], "rb").read()
    if d[:8] != b"VRAMTRC\x1a" or d[8] != 4 or d[-4:] != b"VEND":
        sys.exit("%s: not a version 4 binary trace" % sys.argv[1])
    at = struct.unpack("<Q", d[-12:-4])[0]
    if d[at] != 0xFE:
        sys.exit("%s: no end record at offset %d" % (sys.argv[1], at))
    n = at + 1
    while d[n] & 0x80:   # the count's varint
        n += 1
    out = bytearray(d[:n + 1]) + b"VEND"
    out[8] = version
    open(sys.argv[2], "wb").write(out)


if __name__ == "__main__":
    main()
