#!/bin/bash
# sweep-jobs.sh — --jobs-file writes one self-contained replay command per
# run; running them (sh) and --merge gives the in-process sweep's CSV.
. "$(dirname "$0")/sweep-lib.sh"
require_engine 7
echo 1..7
args=("$T/t.jsonl" -c a100-80g,jetson-agx-orin --set link.copy_engines=2
      --vary memory.capacity=512MiB,2GiB --vary policy.oversubscription=oom,spill)

"$VRAMSIM" sweep "${args[@]}" -o "$T/inproc.csv"; ok $? "the in-process sweep runs"
mkdir "$T/cluster"
(cd "$T/cluster" && "$VRAMSIM" sweep "${args[@]}" --jobs-file jobs.txt 2> err)
ok $? "--jobs-file writes the commands"
[ "$(grep -vc '^#' "$T/cluster/jobs.txt")" = 8 ] && grep -v '^#' "$T/cluster/jobs.txt" | head -1 \
  | grep -q "^/[^ ]*vramsim replay $T/t.jsonl -c $T/cluster/jobs-reports/config-0-a100-80g.json --capture-config $T/cluster/jobs-reports/capture-config.json --set memory.capacity=512MiB --set policy.oversubscription=oom --format json --report-errors -o $T/cluster/jobs-reports/run-00000.json\$"
ok $? "8 commands, absolute paths, configs pinned (fixed --set baked in), reports in FILE-reports/"
(cd / && sh "$T/cluster/jobs.txt"); ok $? "the commands run anywhere (cd /; sh jobs.txt)"
"$VRAMSIM" sweep --merge --jobs-file "$T/cluster/jobs.txt" -o "$T/merged.csv" && cmp "$T/inproc.csv" "$T/merged.csv" >&2
ok $? "--merge --jobs-file of the reports equals the in-process sweep"
rm "$T"/cluster/jobs-reports/run-0000[3-7].json
(cd "$T/cluster" && "$VRAMSIM" sweep "${args[@]}" --jobs-file jobs.txt --resume 2> err)
[ "$(grep -vc '^#' "$T/cluster/jobs.txt.resume-1")" = 5 ] && [ "$(grep -vc '^#' "$T/cluster/jobs.txt")" = 8 ]
ok $? "--jobs-file --resume writes only the runs without a report, to FILE.resume-1; FILE unchanged"
"$VRAMSIM" sweep --merge "$T/t.jsonl" 2> "$T/err"
[ $? = 1 ] && grep -q "t.jsonl: not a vramsim replay report" "$T/err"; ok $? "--merge of a non-report: exit 1 naming it"
