#!/bin/bash
# synth-cli.sh — `vramsim synth` from the command line: usage errors, bad
# configs leaving no output file, the ZeRO-3 figure through `vramsim info`,
# and generated traces replaying on their own preset with slowdown 1
# (SPEC 5.4: the generator's timing is what the replay model reproduces).
# Also `vramsim convert` on a real Kineto trace. Prints TAP.
VRAMSIM=${VRAMSIM:-bin/vramsim}
cd "$(dirname "$0")/.." || exit 1
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0
fails=0
ok () { n=$((n + 1)); echo "ok $n - $1"; }
not_ok () { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check () { local what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }
# result DESCRIPTION: ok if the command just before succeeded
result () { if [ $? -eq 0 ]; then ok "$1"; else not_ok "$1"; fi; }
run () { "$@" >"$tmp/_stdout" 2>"$tmp/_stderr"; rc=$?; out=$(cat "$tmp/_stdout"); err=$(cat "$tmp/_stderr"); }
# json FILE EXPR: evaluates a Python expression over the JSON document d
json () { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# ---- usage ----
run "$VRAMSIM" synth --help
{ [ $rc -eq 0 ] && [[ $out == *transformer-train* ]]; }; result "synth --help exits 0 and lists workloads"
run "$VRAMSIM" synth transformer-train --help
{ [ $rc -eq 0 ] && [[ $out == *--zero* ]]; }; result "transformer-train --help exits 0"
run "$VRAMSIM" synth
{ [ $rc -eq 2 ]; }; result "synth without a workload exits 2"
run "$VRAMSIM" synth nope -o "$tmp/x.jsonl"
{ [ $rc -eq 2 ] && [ ! -e "$tmp/x.jsonl" ]; }; result "unknown workload exits 2"
run "$VRAMSIM" synth stream
{ [ $rc -eq 2 ] && [[ $err == *"-o TRACE"* ]]; }; result "missing -o exits 2"
run "$VRAMSIM" synth transformer-train --zero 4 -o "$tmp/x.jsonl"
{ [ $rc -eq 2 ] && [ ! -e "$tmp/x.jsonl" ]; }; result "--zero 4 exits 2"
run "$VRAMSIM" synth transformer-train --checkpoint every=0 -o "$tmp/x.jsonl"
{ [ $rc -eq 2 ]; }; result "--checkpoint every=0 exits 2"
run "$VRAMSIM" synth llm-infer --kv-precision fp12 -o "$tmp/x.jsonl"
{ [ $rc -eq 2 ]; }; result "--kv-precision fp12 exits 2"
run "$VRAMSIM" synth transformer-train --ddp nccl -o "$tmp/x.jsonl"
{ [ $rc -eq 2 ] && [[ $err == *"--ddp: expected torch or local, not 'nccl'"* ]] && [ ! -e "$tmp/x.jsonl" ]; }
result "--ddp nccl exits 2, naming the choices"
run "$VRAMSIM" synth transformer-train --virtual-stages 2 -o "$tmp/x.jsonl"
{ [ $rc -eq 2 ] && [[ $err == *"needs --pp 2 or more"* ]] && [ ! -e "$tmp/x.jsonl" ]; }; result "--virtual-stages without --pp exits 2"
run "$VRAMSIM" synth transformer-train --layers 8 --pp 2 --virtual-stages 2 --grad-accum 3 -o "$tmp/x.jsonl"
{ [ $rc -eq 2 ] && [[ $err == *"a multiple of --pp"* ]] && [ ! -e "$tmp/x.jsonl" ]; }; result "interleaving with --grad-accum not a multiple of --pp exits 2"
# Pipeline stages: a split that is not even is refused with the split that
# would do (Llama 3's 126 layers on 16 stages: 7, 14 x 8, 7), as is a
# stage outside the pipeline or a stage option without one.
run "$VRAMSIM" synth transformer-train --layers 126 --pp 16 --grad-accum 16 -o "$tmp/x.jsonl"
{ [ $rc -eq 2 ] && [[ $err == *"e.g. 7 and 7, 8 on each stage between"* ]] && [ ! -e "$tmp/x.jsonl" ]; }
result "126 layers on 16 stages exit 2, naming --first-stage-layers 7 --last-stage-layers 7"
run "$VRAMSIM" synth transformer-train --layers 24 --pp 4 --stage 4 -o "$tmp/x.jsonl"
{ [ $rc -eq 2 ] && [[ $err == *"--stage 4 is not one of the 4 pipeline stages (0 to 3)"* ]] && [ ! -e "$tmp/x.jsonl" ]; }
result "--stage 4 of --pp 4 exits 2"
run "$VRAMSIM" synth transformer-train --layers 24 --first-stage-layers 3 -o "$tmp/x.jsonl"
{ [ $rc -eq 2 ] && [[ $err == *"need --pp 2 or more"* ]] && [ ! -e "$tmp/x.jsonl" ]; }
result "--first-stage-layers without --pp exits 2"
run "$VRAMSIM" synth transformer-train --layers 24 --pp 4 --first-stage-layers 5 -o "$tmp/x.jsonl"
{ [ $rc -eq 2 ] && [[ $err == *"leave 19 of the 24 layers to the 3 other stages"* ]] && [ ! -e "$tmp/x.jsonl" ]; }
result "--first-stage-layers 5 of 24 on 4 stages exits 2 (19 do not split over 3)"
# --params alone takes GPT-3's shapes; XL's 24 heads of 128 are not 2048
# wide, so it takes 16.
run "$VRAMSIM" synth transformer-train --params 1.3e9 -c a100-80g -o "$tmp/xl.jsonl"
{ [ $rc -eq 0 ] && [[ $err == *"24 layers x 2048 hidden x 16 heads"* ]] && [ -s "$tmp/xl.jsonl" ]; }
result "--params 1.3e9 alone: GPT-3 XL's 24 x 2048 with 16 heads of 128"

run "$VRAMSIM" synth llm-infer --tp 3 -o "$tmp/x.jsonl"
{ [ $rc -eq 2 ] && [[ $err == *"--tp is at least 1 and divides --heads"* ]] && [ ! -e "$tmp/x.jsonl" ]; }
result "llm-infer --tp 3 of 32 heads exits 2"
# Llama 2 70B's shape (--params 70e9: 80 x 8192, 8 key/value heads) in
# fp16: 140 GB of weights (--params spreads them over the layers, no
# embedding) do not fit one a100-80g; two ranks hold half each, 70.0 GB,
# and replay within the device.
run "$VRAMSIM" synth llm-infer --params 70e9 --tp 2 --batch 1 --prompt 128 --gen 4 -c a100-80g -o "$tmp/tp2.jsonl"
"$VRAMSIM" replay "$tmp/tp2.jsonl" --format json > "$tmp/tp2.json" 2>/dev/null
{ [ $rc -eq 0 ] && [ "$(json "$tmp/tp2.json" "d['fits'], [t['peak_bytes'] for t in d['memory']['tags'] if t['tag'] == 'params'] == [70000000000 // 80 // 2 * 80 * 2]")" = "True True" ]; }
result "llm-infer --params 70e9 --tp 2: each rank holds half the weights (70e9 / 80 / 2 a layer, fp16) and fits an a100-80g"

run "$VRAMSIM" synth transformer-train --cp 2 -o "$tmp/x.jsonl"
{ [ $rc -eq 2 ] && [[ $err == *"--cp 2 needs --flash-attn"* ]] && [ ! -e "$tmp/x.jsonl" ]; }
result "--cp 2 without --flash-attn exits 2"
run "$VRAMSIM" synth transformer-train --params 1e9 --mtp 1 -o "$tmp/x.jsonl"
{ [ $rc -eq 2 ] && [[ $err == *"--mtp is 0 to 16, and takes the shape, not --params"* ]] && [ ! -e "$tmp/x.jsonl" ]; }
result "--mtp with --params exits 2"
run "$VRAMSIM" synth transformer-train --mfu 0 -o "$tmp/x.jsonl"
{ [ $rc -eq 2 ] && [[ $err == *"--mfu must be in (0, 1]"* ]]; }; result "--mfu 0 exits 2 (leave it out for the kernel model)"
run "$VRAMSIM" synth stream --size 12parsecs -o "$tmp/x.jsonl"
{ [ $rc -eq 2 ]; }; result "--size with a bad unit exits 2"
run "$VRAMSIM" synth stream -c no-such-preset -o "$tmp/x.jsonl"
{ [ $rc -eq 1 ] && [[ $err == *no-such-preset* ]] && [ ! -e "$tmp/x.jsonl" ]; }; result "unknown preset exits 1, names it, writes nothing"

# ---- ZeRO-3 over 64 ranks: 16Ψ/N = 1.875 GB of model states per GPU ----
run "$VRAMSIM" synth transformer-train --params 7.5e9 --layers 32 --hidden 4096 --heads 32 --seq 64 --batch 1 \
  --zero 3 --dp 64 -o "$tmp/z3.jsonl"
"$VRAMSIM" info "$tmp/z3.jsonl" --format json > "$tmp/z3.json"
states=$(json "$tmp/z3.json" "sum(d['peak_bytes_by_tag'][k] for k in ('params','grads','optimizer'))")
# (each of the 32 layers' shards rounds up to whole bytes: at most 3 × 32 bytes over)
{ [ "$states" -ge 1875000000 ] && [ "$states" -le 1875000096 ]; }; result "ZeRO-3 model states are 1.875e9 bytes ($states)"

slowdown_is_one () {
  "$VRAMSIM" replay "$1" --format json > "$tmp/r.json" || return 1
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); s=d['time']['slowdown']; sys.exit(0 if abs(s-1) < float(sys.argv[2]) else 1)" "$tmp/r.json" "${2:-0.01}"
}

# ---- ZeRO-3 with FSDP's rate limiter (the default) and without ----
# With the limiter the host waits before each all-gather until the layer
# two releases back has run, so the caching allocator (cross-stream rule)
# reuses its block; without it every gather waits in a new one. 8 layers
# of 12·2048² params: a gathered layer is 100,663,296 B.
z3s="--layers 8 --hidden 2048 --heads 16 --seq 512 --batch 1 --zero 3 --dp 8"
run "$VRAMSIM" synth transformer-train $z3s -o "$tmp/lim.jsonl"
run "$VRAMSIM" synth transformer-train $z3s --no-limit-all-gathers -o "$tmp/nolim.jsonl"
{ [ $rc -eq 0 ] && [ -s "$tmp/nolim.jsonl" ]; }; result "--no-limit-all-gathers accepted"
"$VRAMSIM" replay "$tmp/lim.jsonl" --format json > "$tmp/lim.json"
"$VRAMSIM" replay "$tmp/nolim.jsonl" --format json > "$tmp/nolim.json"
lim=$(json "$tmp/lim.json" "d['memory']['allocator']['peak_reserved_bytes']")
nolim=$(json "$tmp/nolim.json" "d['memory']['allocator']['peak_reserved_bytes']")
# unthrottled, at least 8 more gathered layers wait for the compute stream
{ [ $((nolim - lim)) -ge $((8 * 100663296)) ]; }; result "the limiter lowers reserved by 8+ gathered layers ($lim vs $nolim)"
# Within 3 %, not 1 %: the replay charges each all-gather's SM share
# (0.15, docs/model.md "Collectives") against the layer's GEMMs it
# overlaps on the compute stream; the generator's timeline has no
# contention between streams (docs/workloads.md).
{ slowdown_is_one "$tmp/lim.jsonl" 0.03; }; result "the limited ZeRO-3 trace replays with slowdown 1 (within 3 %)"
run "$VRAMSIM" synth transformer-train --layers 2 --hidden 256 --heads 4 --seq 64 --batch 1 --no-limit-all-gathers -o "$tmp/w.jsonl"
{ [ $rc -eq 0 ] && [[ $err == *"--no-limit-all-gathers changes nothing"* ]]; }; result "--no-limit-all-gathers without ZeRO-3 warns"

# ---- generated traces replay on their preset with slowdown 1 ----
run "$VRAMSIM" synth transformer-train --layers 2 --hidden 512 --heads 8 --seq 256 --batch 2 --steps 2 \
  --checkpoint selective --grad-accum 2 -o "$tmp/t.jsonl"
{ [ $rc -eq 0 ] && [ -s "$tmp/t.jsonl" ]; }; result "transformer-train trace written"
{ slowdown_is_one "$tmp/t.jsonl"; }; result "transformer-train replays with slowdown 1"
# A Megatron layout: TP 2, an interleaved pipeline of 2 stages x 2 chunks,
# 2 data-parallel ranks, LocalDDP; its pipeline waits and collectives are
# on the compute stream, so its replay keeps every duration.
run "$VRAMSIM" synth transformer-train --layers 8 --hidden 512 --heads 8 --seq 256 --batch 2 --tp 2 --pp 2 \
  --virtual-stages 2 --dp 2 --grad-accum 4 --ddp local --checkpoint full --steps 2 -o "$tmp/mg.vtrace"
{ [ $rc -eq 0 ] && slowdown_is_one "$tmp/mg.vtrace"; }; result "an interleaved TP x PP x DP trace replays with slowdown 1"
run "$VRAMSIM" synth transformer-train --layers 2 --hidden 512 --heads 8 --seq 256 --batch 2 --offload optimizer \
  -c v100-sxm2-32g -o "$tmp/o.vtrace"
{ slowdown_is_one "$tmp/o.vtrace"; }; result "offload trace (binary) on v100 replays with slowdown 1"
run "$VRAMSIM" synth llm-infer --layers 2 --hidden 512 --heads 8 --kv-heads 2 --batch 2 --prompt 64 --gen 16 \
  --kv-block 0 -o "$tmp/i.jsonl"
{ slowdown_is_one "$tmp/i.jsonl"; }; result "llm-infer (realloc KV) replays with slowdown 1"
# Latent attention's cache, by hand: 2 layers x (64 + 16) x 2 bytes a
# token, 2 sequences of 64 + 16 tokens; the 16th decode step reads each
# layer's 80 cached tokens a sequence, 2 x 80 x 160 bytes, beside its
# weights (GPT's count, 10 x 512^2 + 2 x 512 x 8 x 64, at 2 bytes) and
# its input and output (2 x 2 x 512 x 2).
run "$VRAMSIM" synth llm-infer --layers 2 --hidden 512 --heads 8 --kv-lora-rank 64 --qk-rope-head-dim 16 --batch 2 \
  --prompt 64 --gen 16 --kv-block 1 -o "$tmp/ml.jsonl"
python3 - "$tmp/ml.jsonl" <<'PY'
import json, sys
kv, reads = 0, []
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("op") == "alloc" and e.get("tag") == "kv_cache":
        kv += e["bytes"]
    if e.get("op") == "kernel" and e["name"] == "decode_layer":
        reads.append(e["bytes"])
assert kv == 2 * 80 * 2 * 80 * 2, kv
assert reads[-1] == (10 * 512 ** 2 + 2 * 512 * 8 * 64) * 2 + 2 * 2 * 512 * 2 + 2 * 80 * 160, reads[-1]
PY
result "llm-infer --kv-lora-rank 64 --qk-rope-head-dim 16: the latent cache and what decode reads of it, by hand"
# llm-infer MoE, by hand: a layer of attention 2 x 512^2 + 2 x 512 x 2 x
# 64 and 8 gated experts of 3 x 512 x 1024 (and a router of 512 x 8). A
# decode step over B tokens reads the experts they reach, 8 x (1 - (1 -
# 2/8)^B): 2 at batch 1, 5.46875 at batch 4, at 2 bytes a weight, beside
# the input and output (2 x B x 512 x 2) and the cache of the first step's
# 17 tokens (B x 17 x 512). The params tag holds all 8 experts.
for b in 1 4; do
  "$VRAMSIM" synth llm-infer --layers 1 --hidden 512 --heads 8 --kv-heads 2 --ffn 1024 --gated --experts 8 --top-k 2 \
    --vocab 32000 --batch $b --prompt 16 --gen 2 --kv-block 1 -o "$tmp/mi$b.jsonl" 2>/dev/null
done
"$VRAMSIM" replay "$tmp/mi1.jsonl" --format json > "$tmp/mi1.json" 2>/dev/null
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
attn, expert, router = 2 * 512 ** 2 + 2 * 512 * 2 * 64, 3 * 512 * 1024, 512 * 8
for b, reached in ((1, 2), (4, 5.46875)):
    reads = [e["bytes"] for e in map(json.loads, open("%s/mi%d.jsonl" % (d, b)))
             if e.get("op") == "kernel" and e["name"] == "decode_layer"]
    want = int(attn + reached * expert + router) * 2 + 2 * b * 512 * 2 + b * 17 * 512
    assert reads[0] == want, (b, reads[0], want)
tags = {t["tag"]: t["peak_bytes"] for t in json.load(open(d + "/mi1.json"))["memory"]["tags"]}
assert tags["params"] == 2 * (attn + 8 * expert + router + 32000 * 512), tags
PY
result "llm-infer --experts 8 --top-k 2: a decode step reads the experts its tokens reach (2 of 8 at batch 1, 5.47 at 4), by hand"
run "$VRAMSIM" synth stream --size 16MiB --iters 2 -o "$tmp/s.jsonl"
{ slowdown_is_one "$tmp/s.jsonl"; }; result "stream replays with slowdown 1"

# ---- a real Kineto trace through convert ----
. tests/data-lib.sh
if real=$(data_file kineto/alexnet-a100.json.gz); then
  run "$VRAMSIM" convert "$real" "$tmp/alex.jsonl"
  { [ $rc -eq 0 ] && [ -s "$tmp/alex.jsonl" ]; }; result "convert imports a Kineto trace"
  "$VRAMSIM" info "$tmp/alex.jsonl" --format json > "$tmp/alex.json"
  { [ "$(json "$tmp/alex.json" "d['ops']['kernel'], d['ops']['copy'], d['ops']['memset']")" = "79 16 3" ]; }; result "79 kernels, 16 copies, 3 memsets"
  head -c 20000 "$real" > "$tmp/cut.json.gz"
  run "$VRAMSIM" convert "$tmp/cut.json.gz" "$tmp/cut.jsonl"
  { [ $rc -eq 1 ] && [[ $err == *cut.json.gz* ]] && [ ! -e "$tmp/cut.jsonl" ]; }; result "a truncated .json.gz exits 1, named, no output"
else
  for w in "convert imports a Kineto trace" "79 kernels, 16 copies, 3 memsets" "a truncated .json.gz exits 1"; do
    not_ok "$w: validation/data/kineto/alexnet-a100.json.gz missing"
  done
fi

echo "1..$n"
[ $fails -eq 0 ]
