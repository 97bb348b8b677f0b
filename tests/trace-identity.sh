#!/bin/bash
# trace-identity.sh — a report's run_of.trace (path, size, head_hash128:
# MurmurHash3 x64 128 of the first MiB) names the trace it is a run of:
# the same bytes give the same identity, a byte changed in the first MiB
# another; and --merge of a jobs file refuses the reports of a trace
# changed since, as before the SHA-256 it replaced.
. "$(dirname "$0")/sweep-lib.sh"
require_engine 7
echo 1..7
ident () { "$VRAMSIM" replay "$1" -c a100-80g --format json | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["run_of"]["trace"], sort_keys=True))'; }

# The hash of the trace's bytes, by the published algorithm (a Python
# transcription of MurmurHash3_x64_128, seed 0): checks the C one.
mmh3 () { python3 - "$1" <<'PY'
import sys
M = (1 << 64) - 1
def rotl(x, r): return ((x << r) | (x >> (64 - r))) & M
def fmix(k):
    k ^= k >> 33; k = (k * 0xff51afd7ed558ccd) & M; k ^= k >> 33
    k = (k * 0xc4ceb9fe1a85ec53) & M; k ^= k >> 33; return k
d = open(sys.argv[1], 'rb').read(1 << 20)
c1, c2 = 0x87c37b91114253d5, 0x4cf5ad432745937f
h1 = h2 = 0
n = len(d)
for i in range(0, n - n % 16, 16):
    k1 = int.from_bytes(d[i:i + 8], 'little'); k2 = int.from_bytes(d[i + 8:i + 16], 'little')
    k1 = (rotl((k1 * c1) & M, 31) * c2) & M; h1 ^= k1
    h1 = (rotl(h1, 27) + h2) & M; h1 = (h1 * 5 + 0x52dce729) & M
    k2 = (rotl((k2 * c2) & M, 33) * c1) & M; h2 ^= k2
    h2 = (rotl(h2, 31) + h1) & M; h2 = (h2 * 5 + 0x38495ab5) & M
t = d[n - n % 16:]
if len(t) > 8:
    k2 = int.from_bytes(t[8:], 'little'); h2 ^= (rotl((k2 * c2) & M, 33) * c1) & M
if len(t) > 0:
    k1 = int.from_bytes(t[:8], 'little'); h1 ^= (rotl((k1 * c1) & M, 31) * c2) & M
h1 ^= n; h2 ^= n
h1 = (h1 + h2) & M; h2 = (h2 + h1) & M
h1 = fmix(h1); h2 = fmix(h2)
h1 = (h1 + h2) & M; h2 = (h2 + h1) & M
print('%016x%016x' % (h1, h2))
PY
}

a=$(ident "$T/t.jsonl")
[ "$(ident "$T/t.jsonl")" = "$a" ]; ok $? "the same trace, the same identity"
echo "$a" | grep -q "\"head_hash128\": \"$(mmh3 "$T/t.jsonl")\""; ok $? "head_hash128 is MurmurHash3 x64 128 of the trace's bytes ($a)"
cp "$T/t.jsonl" "$T/u.jsonl"
sed -i 's/"name": "step"/"name": "stex"/' "$T/u.jsonl"   # same size
b=$(ident "$T/u.jsonl")
[ "$(echo "$a" | sed 's/t.jsonl/u.jsonl/; s/"head_hash128": "[0-9a-f]*"//')" = "$(echo "$b" | sed 's/"head_hash128": "[0-9a-f]*"//')" ] \
  && [ "$a" != "$(echo "$b" | sed 's/u.jsonl/t.jsonl/')" ]
ok $? "one byte changed, same size: another identity"

# A trace over 1 MiB: the hash covers its first MiB only (and the size the rest).
python3 -c "
import sys
f = open('$T/big.jsonl', 'w')
f.write(open('$T/t.jsonl').readline())
for i in range(30000):
    f.write('{\"t\": %d, \"op\": \"alloc\", \"id\": %d, \"bytes\": 4096, \"kind\": \"device\"}\n' % (10 * i, i + 1))
    f.write('{\"t\": %d, \"op\": \"free\", \"id\": %d}\n' % (10 * i + 5, i + 1))
"
[ "$(stat -c %s "$T/big.jsonl")" -gt 1048576 ] && echo "$(ident "$T/big.jsonl")" | grep -q "\"head_hash128\": \"$(mmh3 "$T/big.jsonl")\""
ok $? "over 1 MiB: the hash of the first MiB"

# The hash is read in 64 KiB pieces: sizes at and around a piece's end
# (whole blocks, a tail of 5 and of 13 bytes, two pieces) hash as the
# whole does. Each trace: whole lines of big.jsonl, then a mark whose
# name pads it to the size.
r=0
for size in 65536 65541 65549 131072; do
  python3 - "$T/big.jsonl" "$T/cut.jsonl" $size <<'PY'
import sys
src, dst, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
out, n = [], 0
for line in open(src):
    if n + len(line) > size - 200:
        break
    out.append(line); n += len(line)
pad = '{"t": 10000000, "op": "mark", "name": "%s"}\n'
fill = size - n - len(pad % '')
open(dst, 'w').write(''.join(out) + pad % ('x' * fill))
PY
  [ "$(stat -c %s "$T/cut.jsonl")" = $size ] || { echo "# cut.jsonl is not $size bytes"; r=1; }
  h=$(ident "$T/cut.jsonl")
  echo "$h" | grep -q "\"head_hash128\": \"$(mmh3 "$T/cut.jsonl")\"" || { echo "# $size bytes: $h"; r=1; }
done
ok $r "64 KiB, +5, +13 bytes and 128 KiB: the published algorithm's hash"

# --merge refuses the reports of a trace changed since the jobs file.
mkdir -p "$T/c" && cp "$T/t.jsonl" "$T/c/t.jsonl"
V=$(realpath "$VRAMSIM")
(cd "$T/c" && "$V" sweep t.jsonl -c a100-80g --vary memory.capacity=2GiB,4GiB --jobs-file jobs.txt 2> err && sh jobs.txt > /dev/null 2>&1)
"$VRAMSIM" sweep --merge --jobs-file "$T/c/jobs.txt" -o "$T/m1.csv"; ok $? "--merge of the jobs' reports"
sed -i 's/"name": "step"/"name": "stex"/' "$T/c/t.jsonl"
"$VRAMSIM" sweep --merge --jobs-file "$T/c/jobs.txt" -o "$T/m2.csv" 2> "$T/err"
[ $? != 0 ] && grep -q "not the one the jobs file was written for" "$T/err"
ok $? "--merge after the trace changed (same size): refused ($(head -c 120 "$T/err"))"
