#!/bin/bash
# sweep-merge.sh — issue 16 items 14-19: a --jobs-file sweep is checked run
# by run against its jobs file. Missing, extra, duplicated and stale
# reports are refused by --merge, named; --status tells done, failed
# (config errors) and missing apart; --resume never rewrites the jobs
# file and trusts reports by content; configs are pinned by path;
# --shard K/N parts merge into the in-process table.
. "$(dirname "$0")/sweep-lib.sh"
require_engine 20
echo 1..20
V=$VRAMSIM
cd "$T" || exit 1
args=(t.jsonl -c a100-80g,rtx3090 --vary memory.capacity=512MiB,1GiB,2GiB --vary policy.oversubscription=oom,spill)
"$V" sweep "${args[@]}" -o inproc.csv
"$V" sweep "${args[@]}" --jobs-file jobs.txt 2> /dev/null
grep -v '^#' jobs.txt | sh
"$V" sweep --merge --jobs-file jobs.txt -o merged.csv && cmp -s merged.csv inproc.csv; ok $? "all 12 reports: merge equals the in-process sweep"

# 14. missing, extra, duplicated
mv jobs-reports/run-00004.json saved.json
"$V" sweep --merge --jobs-file jobs.txt -o m.csv 2> err; rc=$?
[ $rc = 1 ] && [ ! -e m.csv ] && grep -q "1 have no report" err && grep -q "missing .*line [0-9]*: $T/jobs-reports/run-00004.json" err
ok $? "a missing report: exit 1 naming it, nothing written"
mv saved.json jobs-reports/run-00004.json
cp jobs-reports/run-00004.json jobs-reports/run-00099.json
"$V" sweep --merge --jobs-file jobs.txt -o m.csv 2> err
[ $? = 1 ] && grep -q "extra .*run-00099.json" err; ok $? "an extra report in the folder: refused naming it"
rm jobs-reports/run-00099.json
{ cat jobs.txt; grep -v '^#' jobs.txt | tail -1; } > dup.txt
"$V" sweep --merge --jobs-file dup.txt -o m.csv 2> err
[ $? = 1 ] && grep -q "duplicated  line 19 is the run of line 18" err; ok $? "a run listed twice: refused naming both lines"
"$V" sweep --merge jobs-reports/run-00001.json jobs-reports/run-00001.json -o m.csv 2> err
[ $? = 1 ] && grep -q "same run as" err; ok $? "--merge REPORT... with a report twice: refused"

# 15. stale reports: another trace, other values
cp jobs-reports/run-00003.json keep3.json
"$V" replay t.jsonl -c "$T/jobs-reports/config-0-a100-80g.json" --capture-config "$T/jobs-reports/capture-config.json" --set memory.capacity=4GiB --set policy.oversubscription=oom --format json -o jobs-reports/run-00003.json
"$V" sweep --merge --jobs-file jobs.txt -o m.csv 2> err
[ $? = 1 ] && grep -q "stale .*run-00003.json: a run of other --set values" err
ok $? "a report of other values under a run's name: stale, refused"
cp keep3.json jobs-reports/run-00003.json
cp t.jsonl t.orig; echo '{"t": 4000, "op": "mark", "name": "x"}' >> t.jsonl
"$V" sweep --merge --jobs-file jobs.txt -o m.csv 2> err
[ $? = 1 ] && grep -q "12 a stale one" err && grep -q "the trace is not the one the jobs file was written for" err; ok $? "the trace changed since: every report stale"
mv t.orig t.jsonl
"$V" sweep t.jsonl -c a100-80g --vary memory.capacity=4GiB,8GiB --jobs-file other.txt --reports-dir jobs-reports 2> err
[ $? = 1 ] && grep -q "is not empty" err && [ ! -e other.txt ]; ok $? "--jobs-file into a folder of older reports: refused"

# 19. --status
"$V" sweep --status --jobs-file jobs.txt > st; [ $? = 0 ] && grep -q "12 runs: 12 done, 0 failed (config errors), 0 missing, 0 stale" st
ok $? "--status: all done, exit 0"
rm jobs-reports/run-00007.json
bad=$(grep -v '^#' jobs.txt | sed -n 9p | sed 's/--set memory.capacity=[^ ]*/--set memory.reserved=900GiB/')
sh -c "$bad" 2> /dev/null; rc=$?
"$V" sweep --status --jobs-file jobs.txt > st; src=$?
[ $rc = 1 ] && [ $src = 1 ] && grep -q "10 done, 0 failed (config errors), 1 missing, 1 stale" st \
  && grep -q "missing     line 14: .*run-00007.json (no report: not run yet, or killed or crashed" st
ok $? "--status: a missing run and a stale one told apart, exit 1"
cp jobs-reports/run-00008.json /dev/null
# a config error in the job itself: an error report, "failed"
sed -n 1,7p jobs.txt > bad.txt; grep -v '^#' jobs.txt | head -1 | sed 's/memory.capacity=512MiB/memory.capacity=1MiB/; s/--set policy.oversubscription=oom/--set memory.reserved=2MiB/; s|jobs-reports/run-00000|bad-run-00000|' >> bad.txt
grep -v '^#' bad.txt | sh 2> /dev/null
"$V" sweep --status --jobs-file bad.txt > st
grep -q "1 failed (config errors)" st && grep -q "failed .*bad-run-00000.json: .*reserved" st; ok $? "--status: a config error is 'failed', with its message"

# 16. --resume writes FILE.resume-N, reruns missing and stale runs, never touches FILE
sum=$(md5sum < jobs.txt)
"$V" sweep "${args[@]}" --jobs-file jobs.txt --resume 2> err
[ "$(md5sum < jobs.txt)" = "$sum" ] && [ "$(grep -vc '^#' jobs.txt.resume-1)" = 2 ] \
  && grep -q 'run-00007.json$' jobs.txt.resume-1 && grep -q 'run-00008.json$' jobs.txt.resume-1
ok $? "--resume: the missing and the stale run in jobs.txt.resume-1, jobs.txt unchanged"
grep -v '^#' jobs.txt.resume-1 | sh
"$V" sweep "${args[@]}" --jobs-file jobs.txt --resume 2> err; [ ! -e jobs.txt.resume-2 ] && grep -q "nothing to resume" err
ok $? "--resume when every run has its report: nothing written"
"$V" sweep --merge --jobs-file jobs.txt -o merged.csv && cmp -s merged.csv inproc.csv; ok $? "after the resume: merge equals the in-process sweep"
"$V" sweep t.jsonl -c a100-80g --vary memory.capacity=4GiB --jobs-file jobs.txt --resume 2> err
[ $? = 1 ] && grep -q "holds the commands of another sweep" err; ok $? "--resume with another sweep's options: refused"

# 17. configs pinned: a changed preset folder does not change a run
mkdir cfgs; cp -r "${VRAMSIM_CONFIGS:-$(dirname "$V")/../configs}"/* cfgs/ 2> /dev/null
grep -v '^#' jobs.txt | head -1 | grep -q -- "-c $T/jobs-reports/config-0-a100-80g.json " && grep -q '"name":.*"a100-80g"' jobs-reports/config-0-a100-80g.json
ok $? "the commands name pinned copies of the configs by absolute path"
cp jobs-reports/run-00000.json r0.json
echo '{"name": "a100-80g", "memory": {"capacity": "1GiB"}}' > cfgs/a100-80g.json
VRAMSIM_CONFIGS=$T/cfgs sh -c "$(grep -v '^#' jobs.txt | head -1)" && cmp -s r0.json jobs-reports/run-00000.json
ok $? "with VRAMSIM_CONFIGS at a changed preset the run is the same"

# 18. --shard K/N: parts merge to the in-process table; a missing part is refused
for k in 1 2 3 4 5; do "$V" sweep "${args[@]}" --shard $k/5 -o part-$k.csv || break; done
[ "$(cat part-*.csv | grep -vc '^config')" = 12 ]; ok $? "5 shards hold the 12 runs"
"$V" sweep "${args[@]}" --merge part-1.csv part-2.csv part-3.csv part-4.csv part-5.csv -o sh.csv && cmp -s sh.csv inproc.csv
ok $? "--merge of the shard parts equals the in-process sweep"
"$V" sweep "${args[@]}" --merge part-1.csv part-3.csv part-4.csv part-5.csv -o sh2.csv 2> err
[ $? = 1 ] && [ ! -e sh2.csv ] && grep -q "runs are in no part" err; ok $? "a missing shard: refused"
