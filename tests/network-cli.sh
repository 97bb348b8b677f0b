#!/bin/bash
# network-cli.sh — the network from the command line: presets' network
# sections, zero bandwidth exiting 1 with the key named and no report
# written, --set network.ranks sizing a job (and no group), network.dp
# resizing the dp group, the report's network section,
# the generators' parallel options and their usage errors. Prints TAP.
VRAMSIM=${VRAMSIM:-bin/vramsim}
cd "$(dirname "$0")/.." || exit 1
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
ok () { n=$((n + 1)); echo "ok $n - $1"; }
not_ok () { n=$((n + 1)); echo "not ok $n - $1"; }
result () { if [ $? -eq 0 ]; then ok "$1"; else not_ok "$1"; fi; }
run () { "$@" >"$tmp/_stdout" 2>"$tmp/_stderr"; rc=$?; out=$(cat "$tmp/_stdout"); err=$(cat "$tmp/_stderr"); }
json () { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

run "$VRAMSIM" configs --show h100-sxm
[[ $rc -eq 0 && $out == *'"ranks_per_node":	8'* && $out == *'"bandwidth":	"450GB/s"'* ]]; result "h100-sxm shows its network (8 per node, NVLink4 450 GB/s)"

"$VRAMSIM" synth transformer-train --layers 4 --hidden 512 --heads 8 --seq 256 --batch 2 --dp 8 --tp 2 \
  -c a100-80g -o "$tmp/t.jsonl" >/dev/null 2>&1; result "synth with --dp 8 --tp 2"
grep -q '"collective": {"kind": "all_reduce"' "$tmp/t.jsonl"; result "the trace's collectives carry a collective field"

run "$VRAMSIM" replay "$tmp/t.jsonl" -c a100-80g --set network.inter.bandwidth=0 -o "$tmp/r.json" --format json
[[ $rc -eq 1 && $err == *"network.inter.bandwidth"* && $err == *"greater than 0"* && ! -e "$tmp/r.json" ]]
result "zero inter bandwidth: exit 1 naming the key, no report"

run "$VRAMSIM" replay "$tmp/t.jsonl" -c a100-80g --format json -o "$tmp/r8.json"
[[ $rc -eq 0 && $(json "$tmp/r8.json" "d['time']['slowdown'] < 1.01 and d['network']['ranks']") == 8 ]]
result "on its own preset: slowdown 1 (within the DP stream's contention), the job is the trace's 8"
[[ $(json "$tmp/r8.json" "d['network']['collectives'] > 0 and d['network']['exposed_ns'] <= d['network']['busy_ns']") == True ]]
result "network.exposed_ns <= busy_ns"

# Groups set by hand (the generator's own ids differ): its 8-rank
# collectives are the data-parallel group 1, its 2-rank ones the
# tensor-parallel group 2; and the same trace with no group at all, as an
# old trace is.
python3 - "$tmp/t.jsonl" "$tmp/roles.jsonl" "$tmp/noroles.jsonl" <<'PY'
import json, sys
out, bare = open(sys.argv[2], "w"), open(sys.argv[3], "w")
for i, l in enumerate(open(sys.argv[1])):
    e = json.loads(l)
    c = e.get("collective")
    if c:
        c.pop("group", None)
        bare.write(json.dumps(e) + "\n")
        c["group"] = {"id": 1, "role": "dp"} if c["ranks"] == 8 else {"id": 2, "role": "tp"}
    else:
        bare.write(json.dumps(e) + "\n")
    out.write(json.dumps(e) + "\n")
PY
run "$VRAMSIM" replay "$tmp/roles.jsonl" -c a100-80g --format json -o "$tmp/r8.json"
run "$VRAMSIM" replay "$tmp/roles.jsonl" -c a100-80g --set network.ranks=64 --format json -o "$tmp/r64.json"
[[ $rc -eq 0 && $(json "$tmp/r64.json" "d['network']['ranks']") == 64 ]]; result "--set network.ranks=64 sizes the job"
[[ $(python3 -c "import json; a=json.load(open('$tmp/r8.json')); b=json.load(open('$tmp/r64.json')); print(b['network']['busy_ns'] == a['network']['busy_ns'] and b['time'] == a['time'])") == True ]]
result "... and resizes no group: the same times as on 8"
run "$VRAMSIM" replay "$tmp/roles.jsonl" -c a100-80g --set network.dp=64 --format json -o "$tmp/dp64.json"
[[ $(python3 -c "import json; a=json.load(open('$tmp/r8.json')); b=json.load(open('$tmp/dp64.json')); g={x['id']: x['ranks'] for x in b['network']['groups']}; print(b['network']['busy_ns'] > a['network']['busy_ns'] and g == {1: 64, 2: 2})") == True ]]
result "network.dp=64: the dp group on 64 ranks across nodes takes longer than 8 in one; the tp group keeps 2"
run "$VRAMSIM" replay "$tmp/roles.jsonl" -c a100-80g --set network.dp=64
[[ $rc -eq 0 && $out == *"  dp group 1             8 -> 64 ranks"* && $out != *"tp group"* ]]
result "the text report names the resized group"

# convert --group-role: the same groups without their roles (what a
# capture has: NCCL does not know roles). network.dp resizes nothing and
# says so; once group 1 is given the dp role it resizes it, as on the
# trace with roles.
python3 - "$tmp/roles.jsonl" "$tmp/bare.jsonl" <<'PY'
import json, sys
with open(sys.argv[2], "w") as out:
    for l in open(sys.argv[1]):
        e = json.loads(l)
        if e.get("collective", {}).get("group"):
            e["collective"]["group"].pop("role")
        out.write(json.dumps(e) + "\n")
PY
run "$VRAMSIM" replay "$tmp/bare.jsonl" -c a100-80g --set network.dp=64 --format json -o "$tmp/bare64.json"
[[ $rc -eq 0 && $(json "$tmp/bare64.json" "[g['ranks'] for g in d['network']['groups']] == [8, 2] and any('network.dp = 64 resized no collective' in w for w in d['warnings'])") == True ]]
result "groups without roles: network.dp=64 resizes none, and says so"
run "$VRAMSIM" convert "$tmp/bare.jsonl" "$tmp/bare-dp.vtrace" --group-role 1=dp
[[ $rc -eq 0 ]]; result "convert --group-role 1=dp"
run "$VRAMSIM" replay "$tmp/bare-dp.vtrace" -c a100-80g --set network.dp=64 --format json -o "$tmp/baredp64.json"
[[ $rc -eq 0 && $(python3 -c "import json; a=json.load(open('$tmp/dp64.json')); b=json.load(open('$tmp/baredp64.json')); print([(g['id'], g['role'], g['ranks']) for g in b['network']['groups']] == [(1, 'dp', 64), (2, None, 2)] and b['network']['busy_ns'] == a['network']['busy_ns'])") == True ]]
result "... then network.dp=64 resizes group 1 to 64 ranks: the network time of the trace that had its roles"
run "$VRAMSIM" convert "$tmp/bare.jsonl" "$tmp/x.vtrace" --group-role 1=dp,77=tp
[[ $rc -eq 0 && $err == *"--group-role: no collective of $tmp/bare.jsonl names group 77"* ]]
result "--group-role with an id no collective names: a warning naming it"
rm -f "$tmp/x.vtrace"
run "$VRAMSIM" convert "$tmp/bare.jsonl" "$tmp/x.vtrace" --group-role 1=data
[[ $rc -eq 2 && $err == *"'1=data' is not ID=ROLE"* && ! -e "$tmp/x.vtrace" ]]
result "--group-role 1=data: exit 2 naming the item, nothing written"

run "$VRAMSIM" replay "$tmp/t.jsonl" -c a100-80g
[[ $rc -eq 0 && $out == *"network ("*"job of 8 ranks"* ]]; result "the text report has a network section"

# A preset with fewer GPUs a node splits the groups a node held: the
# trace's 8-rank all-reduces ran inside one of a100-80g's 8-GPU nodes; on
# rtx4090 (4 a node) each spans 2 nodes and crosses its inter-node
# fabric. The 2-rank ones stay inside a node. A resized group that grows
# across nodes (network.dp) is the what-if asked for, not warned about.
run "$VRAMSIM" replay "$tmp/t.jsonl" -c rtx4090 --format json -o "$tmp/rtx.json"
python3 - "$tmp/rtx.json" "$tmp/t.jsonl" "$tmp/r8.json" "$tmp/dp64.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ranks = [json.loads(l)["collective"]["ranks"] for l in open(sys.argv[2]) if '"collective"' in l]
n8, n = ranks.count(8), len(ranks)
assert 0 < n8 < n, (n8, n)
w = [x for x in r["warnings"] if "span more nodes" in x]
assert len(w) == 1, r["warnings"]
want = ("%d of %d collectives span more nodes on the target (rtx4090) than on the capture config (a100-80g): "
        "the largest, of 8 ranks, ran in 1 node of a100-80g (8 GPUs a node) and spans 2 here (4 GPUs a node, "
        "network.ranks_per_node), so it crosses rtx4090's inter-node fabric at 312.5 MB/s a GPU" % (n8, n))
assert w[0].startswith(want), (w[0], want)
assert (r["network"]["nodes"], r["network"]["ranks_per_node"]) == (2, 4), r["network"]
for f, nodes in ((sys.argv[3], 1), (sys.argv[4], 8)):
    o = json.load(open(f))
    assert (o["network"]["nodes"], o["network"]["ranks_per_node"]) == (nodes, 8), (f, o["network"])
    assert not [x for x in o["warnings"] if "span more nodes" in x], (f, o["warnings"])
PY
result "rtx4090's 4-GPU nodes split the 8-rank groups: network.nodes 2, a warning with the count and the fabric; none on a100-80g or for network.dp=64 (8 nodes)"
run "$VRAMSIM" replay "$tmp/t.jsonl" -c rtx4090
[[ $rc -eq 0 && $out == *"job of 8 ranks; up to 2 nodes of 4 GPUs)"* && $out == *"span more nodes on the target (rtx4090)"* ]]
result "the text report says the nodes and the warning"
run "$VRAMSIM" replay "$tmp/t.jsonl" -c rtx4090 --set network.ranks_per_node=8 --format json -o "$tmp/rtx8.json"
[[ $rc -eq 0 && $(json "$tmp/rtx8.json" "d['network']['nodes'] == 1 and not [x for x in d['warnings'] if 'span more nodes' in x] and d['network']['busy_ns'] < $(json "$tmp/rtx.json" "d['network']['busy_ns']")") == True ]]
result "network.ranks_per_node=8 on rtx4090: one node, no warning, less network time"

# network.dp in a sweep: each row's dp group is the varied size, with no
# second read of the trace: a sweep of a FIFO (readable once) gives the
# rows of the file, which equal what replay says.
"$VRAMSIM" sweep "$tmp/roles.jsonl" -c a100-80g --vary network.dp=1,16,64 -o "$tmp/file.csv"
mkfifo "$tmp/fifo.jsonl"
cat "$tmp/roles.jsonl" > "$tmp/fifo.jsonl" &
timeout -k 5 60 "$VRAMSIM" sweep "$tmp/fifo.jsonl" -c a100-80g --vary network.dp=1,16,64 -o "$tmp/fifo.csv"; rc=$?
wait
[[ $rc -eq 0 && $(cut -d, -f2- "$tmp/fifo.csv") == "$(cut -d, -f2- "$tmp/file.csv")" ]]
result "sweep --vary network.dp of a FIFO: the file's rows"
[[ $(sed -n 4p "$tmp/file.csv" | cut -d, -f4) == $(json "$tmp/dp64.json" "d['time']['predicted_ns']") ]]
result "its network.dp=64 row's predicted_ns is replay's"

# The same trace from a file and from stdin: the same answer (all but
# trace and run_of, which name the file; the job's
# size once made replay read a file twice, which stdin cannot).
for tr in t roles; do
  for set in network.ranks=64 network.dp=16; do
    "$VRAMSIM" replay "$tmp/$tr.jsonl" -c a100-80g --set $set --format json -o "$tmp/file.json" 2>/dev/null
    "$VRAMSIM" replay - -c a100-80g --set $set --format json -o "$tmp/stdin.json" < "$tmp/$tr.jsonl" 2>/dev/null
    python3 -c "import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); [x.pop(k, None) for x in (a, b) for k in ('trace', 'run_of')]; sys.exit(a != b)" \
      "$tmp/file.json" "$tmp/stdin.json"
    result "$tr.jsonl --set $set: the report from stdin is the file's"
  done
done

# A group larger than the job: exit 1, its line named, no report.
line=$(grep -n '"ranks": 8' "$tmp/roles.jsonl" | head -n 1 | cut -d: -f1)
run "$VRAMSIM" replay "$tmp/roles.jsonl" -c a100-80g --set network.ranks=4 -o "$tmp/x.json"
[[ $rc -eq 1 && $err == "vramsim: $tmp/roles.jsonl:$line: field 'collective.ranks': group 1 has 8 ranks, more than the job's 4 (network.ranks)"* && ! -e "$tmp/x.json" ]]
result "a group of 8 in a job of 4: exit 1 naming line $line, no report"
run "$VRAMSIM" replay "$tmp/roles.jsonl" -c a100-80g --set network.ranks=64 --set network.dp=128 -o "$tmp/x.json"
[[ $rc -eq 1 && $err == *"network.dp: 128 is more than the job's 64 GPUs (network.ranks)"* && ! -e "$tmp/x.json" ]]
result "network.dp larger than network.ranks: exit 1 naming the key"
run "$VRAMSIM" replay "$tmp/noroles.jsonl" -c a100-80g --set network.dp=64 --format json -o "$tmp/x.json"
[[ $rc -eq 0 && $(json "$tmp/x.json" "any('network.dp = 64 resized no collective' in w for w in d['warnings'])") == True ]]
result "network.dp on a trace without roles: a warning says it resized nothing"

for bad in "--tp 3" "--sp" "--pp 9" "--experts 3 --dp 2" "--experts 4 --top-k 5"; do
  run "$VRAMSIM" synth transformer-train --layers 8 --hidden 512 --heads 8 $bad -o "$tmp/x.jsonl"
  [[ $rc -eq 2 && ! -e "$tmp/x.jsonl" ]]; result "synth transformer-train $bad: usage error, no trace"
done
echo "1..$n"
