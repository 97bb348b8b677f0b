#!/bin/bash
# config-errors.sh — `vramsim configs` end to end: listing, --show, exit
# statuses and error messages for bad configs (docs/config.md).
VRAMSIM=${VRAMSIM:-bin/vramsim}
here=$(cd "$(dirname "$0")/.." && pwd)
export VRAMSIM_CONFIGS="$here/configs"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
fails=0
check () {   # check DESCRIPTION COMMAND... ; a failing command is "not ok"
  local desc=$1; shift
  n=$((n + 1))
  if "$@"; then echo "ok $n - $desc"; else echo "not ok $n - $desc"; fails=$((fails + 1)); fi
}
# run EXPECTED_STATUS ARGS...: runs vramsim, keeps stdout/stderr in $tmp
run () {
  local want=$1; shift
  "$VRAMSIM" "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  [ "$got" = "$want" ] || { echo "# exit $got, want $want: $*" >&2; cat "$tmp/err" >&2; return 1; }
}
has () { grep -qF -- "$2" "$tmp/$1" || { echo "# $1 lacks: $2" >&2; sed 's/^/# /' "$tmp/$1" >&2; return 1; }; }

echo "1..18"
npresets=$(ls "$VRAMSIM_CONFIGS"/*.json | wc -l)
"$VRAMSIM" configs > "$tmp/list"
check "configs lists every preset" [ "$(wc -l < "$tmp/list")" -eq $((npresets + 1)) ]
check "a100-80g line" bash -c "grep -E '^a100-80g +HBM2e +80 GiB +2039 GB/s +PCIe 4.0 x16 ' '$tmp/list' >/dev/null"
check "jetson is unified" bash -c "grep -E '^jetson-orin-nano +LPDDR5 +8 GiB +68 GB/s +unified ' '$tmp/list' >/dev/null"
"$VRAMSIM" configs --format json > "$tmp/list.json"
json_ok () { [ "$(grep -c '"path":' "$tmp/list.json")" -eq "$npresets" ] && grep -q '"capacity":[[:space:]]*85899345920' "$tmp/list.json"; }
check "configs --format json" json_ok
check "configs --help" run 0 configs --help
"$VRAMSIM" configs --show a100-80g-cxl > "$tmp/show.json"
check "--show fills defaults" grep -q '"bandwidth":[[:space:]]*"200GB/s"' "$tmp/show.json"  # host.bandwidth, the schema default
check "--show output loads back" run 0 configs --show "$tmp/show.json"
check "bad format is usage" run 2 configs --format xml
check "stray argument is usage" run 2 configs a100-80g

printf '{\n  "extends": "a100-80g",\n  "memory": {"capcity": "1GiB"}\n}\n' > "$tmp/typo.json"
check "unknown key: exit 1" run 1 configs --show "$tmp/typo.json"
check "unknown key: message names file and field" has err "typo.json: memory.capcity: unknown key"

printf '{\n  "extends": "a100-80g",\n  "memory": {"capacity": 80GiB}\n}\n' > "$tmp/syntax.json"
run 1 configs --show "$tmp/syntax.json"
check "syntax error names the line" has err "syntax.json:3:"

check "bad --set: exit 1" run 1 configs --show a100-80g --set memory.capacity=24GX
check "bad --set: message" has err "--set 'memory.capacity=24GX': memory.capacity: '24GX': unknown size unit 'GX'"

check "unknown preset lists presets" bash -c "'$VRAMSIM' configs --show a100-81g 2>&1 >/dev/null | grep -qF \"unknown preset 'a100-81g'; did you mean 'a100-80g'? (presets: a100-40g, a100-80g,\""
check "--set applies with --show" bash -c "'$VRAMSIM' configs --show a100-80g --set memory.capacity=40GiB | grep -q '\"capacity\":[[:space:]]*\"40GiB\"'"
# The H200 preset holds what its driver reported (the log's nvidia-smi
# line), and its description says why that is not NVIDIA's "141 GB".
check "h200: memory.capacity is the driver's 143771 MiB, as docs/gpu-check-h200-final.log records" bash -c \
  "grep -q '^NVIDIA H200, 143771 MiB,' '$here/docs/gpu-check-h200-final.log' && '$VRAMSIM' configs --show h200 | grep -q '\"capacity\":[[:space:]]*\"143771MiB\"'"
check "h200: its description cites the driver's figure and the log" bash -c \
  "'$VRAMSIM' configs --show h200 | grep -q 'Capacity 143771 MiB (140.4 GiB): what the driver reports on an H200 (nvidia-smi, docs/gpu-check-h200-final.log)'"
exit 0
