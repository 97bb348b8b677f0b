#!/bin/bash
# fuzz-regress.sh — every input the fuzzers found (tests/fuzz/regress/TARGET-N,
# tests/fuzz/fuzz.mk) run through vramsim itself, the way the harness drove
# the code: the command must exit 0 or 1, print no sanitizer report, and on
# failure leave no output file. Under `make asan` $VRAMSIM is the
# ASan+UBSan build; otherwise the run has a 2 GiB address-space limit, so an
# input that makes vramsim allocate without bound fails here too.
# Inputs whose defect is not fixed yet are listed in tests/fuzz/regress/KNOWN
# ("NAME reason"): their failures are TAP TODO items, reported, not fatal.
VRAMSIM=$(realpath "${VRAMSIM:-bin/vramsim}")
here=$(cd "$(dirname "$0")/.." && pwd)
export VRAMSIM_CONFIGS="$here/configs"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
limit=
case "$VRAMSIM" in *asan*) ;; *) limit="ulimit -v 2097152;" ;; esac

inputs=("$here"/tests/fuzz/regress/*-[0-9]*)
[ -e "${inputs[0]}" ] || inputs=()
n=0
echo "1..$((${#inputs[@]} > 0 ? ${#inputs[@]} : 1))"
# The inputs are the repository's (tests/fuzz/regress): none is a broken
# clone, a failure, never a skip.
[ ${#inputs[@]} -eq 0 ] && { echo "not ok 1 - no regression inputs in tests/fuzz/regress (the repository's own)"; exit 1; }

# vs ARGS...: runs vramsim in $tmp; fails on a status other than 0/1, on a
# sanitizer or GLib critical report, or on output left behind after status 1.
vs () {
  rm -f "$tmp/out"*
  (cd "$tmp" && eval "$limit" && timeout 60 "$VRAMSIM" "$@" > stdout 2> stderr) 2> /dev/null
  local rc=$?
  if [ $rc -gt 1 ]; then
    echo "# exit $rc: vramsim $*"; sed -n '1,12s/^/#   /p' "$tmp/stderr"; return 1
  fi
  if grep -qE 'Sanitizer|runtime error:|GLib-CRITICAL|GLib-ERROR|\*\*\s*$' "$tmp/stderr"; then
    echo "# sanitizer or GLib report: vramsim $*"; sed -n '1,12s/^/#   /p' "$tmp/stderr"; return 1
  fi
  if [ $rc -eq 1 ] && ls "$tmp"/out* > /dev/null 2>&1; then
    echo "# exit 1 but output left behind: vramsim $*"; return 1
  fi
  return 0
}

for f in "${inputs[@]}"; do
  n=$((n + 1))
  name=$(basename "$f")
  target=${name%-*}
  ok=0
  case $target in
    jsonl|bin)
      cp "$f" "$tmp/in.trace"
      vs info in.trace || ok=1
      vs convert in.trace out.jsonl || ok=1
      vs replay in.trace -c a100-80g -o out.json || ok=1 ;;
    replay)
      cp "$f" "$tmp/in.trace"
      for pol in oom spill direct uvm; do
        kg=; [ $pol = oom ] && kg=--keep-going
        vs replay in.trace -c a100-80g-cxl --set memory.capacity=1GiB \
           --set policy.oversubscription=$pol $kg -o out.json || ok=1
      done ;;
    config)
      # "--set KEY=VALUE" lines, then the config's JSON (fuzz-config.c).
      sets=()
      while IFS= read -r line; do
        case $line in "--set "*) sets+=(--set "${line#--set }") ;; *) break ;; esac
      done < "$f"
      awk 'skip && /^--set / { next } { skip = 0; print }' skip=1 "$f" > "$tmp/in.json"
      vs configs --show in.json "${sets[@]}" || ok=1 ;;
    kineto)
      # An import that succeeds must write a trace vramsim reads back.
      cp "$f" "$tmp/in.json"
      vs convert in.json out.jsonl || ok=1
      if [ -s "$tmp/out.jsonl" ]; then
        mv "$tmp/out.jsonl" "$tmp/imported.jsonl"
        (cd "$tmp" && timeout 60 "$VRAMSIM" info imported.jsonl > /dev/null 2> stderr) 2> /dev/null \
          || { echo "# import succeeded, but its trace does not read back:"; sed 's/^/#   /' "$tmp/stderr"; ok=1; }
        rm -f "$tmp/imported.jsonl"
      fi ;;
    pickle)
      # A PyTorch memory snapshot: an import that succeeds must write a
      # trace vramsim reads back.
      cp "$f" "$tmp/in.pickle"
      vs convert in.pickle out.jsonl || ok=1
      if [ -s "$tmp/out.jsonl" ]; then
        mv "$tmp/out.jsonl" "$tmp/imported.jsonl"
        (cd "$tmp" && timeout 60 "$VRAMSIM" info imported.jsonl > /dev/null 2> stderr) 2> /dev/null \
          || { echo "# import succeeded, but its trace does not read back:"; sed 's/^/#   /' "$tmp/stderr"; ok=1; }
        rm -f "$tmp/imported.jsonl"
      fi ;;
    snapshot|tensor)
      # Sections between "%%VS%%" lines (tests/fuzz/fuzz-sections.h):
      # snapshot: SNAP.part1, ..., SNAP; tensor: snapshot, trace, sidecar.
      python3 - "$f" "$tmp" "$target" <<'PY'
import sys
data = open(sys.argv[1], "rb").read().split(b"\n%%VS%%\n")
d, kind = sys.argv[2], sys.argv[3]
if kind == "snapshot":
    for i, part in enumerate(data[:-1]):
        open("%s/in.pickle.part%d" % (d, i + 1), "wb").write(part)
    open(d + "/in.pickle", "wb").write(data[-1])
else:
    for name, part in zip(("s.pickle", "in.jsonl", "in.jsonl.addrs"), data):
        open(d + "/" + name, "wb").write(part)
PY
      if [ $target = snapshot ]; then
        vs convert in.pickle out.jsonl || ok=1
      else
        vs convert --tensor s.pickle in.jsonl out.jsonl || ok=1
      fi
      rm -f "$tmp"/in.pickle* "$tmp"/s.pickle "$tmp"/in.jsonl* ;;
    nsys)
      # An SQL script (tests/fuzz/fuzz-nsys.c), run into a fresh database.
      rm -f "$tmp/in.sqlite"
      python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[2]); c.executescript(open(sys.argv[1]).read()); c.commit()' \
        "$f" "$tmp/in.sqlite" 2> /dev/null
      vs convert in.sqlite out.jsonl || ok=1 ;;
    *) echo "# unknown target '$target' (name inputs TARGET-N)"; ok=1 ;;
  esac
  todo=$(awk -v n="$name" '$1 == n { $1 = ""; sub(/^ /, ""); print; exit }' "$here/tests/fuzz/regress/KNOWN" 2>/dev/null)
  if [ $ok -eq 0 ]; then
    echo "ok $n - $name${todo:+ # TODO $todo}"
  else
    echo "not ok $n - $name${todo:+ # TODO $todo}"
  fi
done
exit 0
