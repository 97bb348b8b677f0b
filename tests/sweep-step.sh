#!/bin/bash
# sweep-step.sh — sweep --metric step (issue 17, steady state): the
# step_median_ns column, what it is on a trace with repeated marks
# (figures by hand), on oom rows, on a trace without repeated marks (empty,
# with a warning), through --jobs-file/--merge, --shard, --resume and
# `plot sweep`. TAP output.
. "$(dirname "$0")/sweep-lib.sh"
require_engine 17
echo 1..17
V=$VRAMSIM
cd "$T" || exit 1

# Three steps of one memory-bound kernel each. With model.kernel=simple,
# compute_ns 0 and memory.efficiency=1 the kernel takes X / B: X = 1e9 B
# over memory.bandwidth B. Each step (mark to mark, on the host) is the
# captured 1000 ns from the mark to the launch, the kernel (the sync
# waits for it) and the captured 9000 ns from the sync's return
# (1,011,000) to the next mark (1,020,000):
#   step = 10,000 + 1e9 / B:  500 GB/s 2,010,000 ns; 1000 GB/s 1,010,000;
#   2000 GB/s 510,000.
# The whole run is the 10,000 ns before the first mark and three steps
# (the last ends at the free, 9000 ns after its sync returns):
#   predicted = 10,000 + 3 x step: 6,040,000; 3,040,000; 1,540,000.
cat > st.jsonl <<'JSONL'
{"vramsim_trace": 1, "time_unit": "ns", "capture": {"config": "a100-80g"}}
{"t": 0, "op": "alloc", "id": 1, "bytes": 1000000000, "kind": "device", "tag": "buf"}
{"t": 10000, "op": "mark", "name": "step"}
{"t": 11000, "op": "kernel", "name": "k", "stream": 1, "dur": 1000000, "bytes": 1000000000, "compute_ns": 0, "reads": [1]}
{"t": 12000, "op": "sync", "scope": "device", "host_ns": 999000}
{"t": 1020000, "op": "mark", "name": "step"}
{"t": 1021000, "op": "kernel", "name": "k", "stream": 1, "dur": 1000000, "bytes": 1000000000, "compute_ns": 0, "reads": [1]}
{"t": 1022000, "op": "sync", "scope": "device", "host_ns": 999000}
{"t": 2030000, "op": "mark", "name": "step"}
{"t": 2031000, "op": "kernel", "name": "k", "stream": 1, "dur": 1000000, "bytes": 1000000000, "compute_ns": 0, "reads": [1]}
{"t": 2032000, "op": "sync", "scope": "device", "host_ns": 999000}
{"t": 3040000, "op": "free", "id": 1}
JSONL
A=(st.jsonl -c a100-80g --set model.kernel=simple --set memory.efficiency=1 --vary memory.bandwidth=500GB/s,1000GB/s,2000GB/s)

"$V" sweep "${A[@]}" --metric step -o step.csv 2> err
[ $? = 0 ] && [ ! -s err ]; ok $? "sweep --metric step on a trace with marks: exit 0, no warning"
head -n 1 step.csv | grep -q '^config,memory.bandwidth,status,predicted_ns,slowdown,step_median_ns,peak_device_bytes,'
ok $? "step_median_ns comes after slowdown"
[ "$(tail -n +2 step.csv | cut -d, -f2,4,6 | tr '\n' ' ')" = "500GB/s,6040000,2010000 1000GB/s,3040000,1010000 2000GB/s,1540000,510000 " ]
ok $? "step = 10,000 + 1e9 B / bandwidth and predicted = 10,000 + 3 steps, by hand"
"$V" replay st.jsonl -c a100-80g --set model.kernel=simple --set memory.efficiency=1 --set memory.bandwidth=500GB/s \
  --format json | grep -q '^[[:space:]]*"step_median_ns":[[:space:]]*2010000,$'
ok $? "the column is the report's steady_state.step_median_ns"

"$V" sweep "${A[@]}" -o time.csv
[ "$(cat time.csv)" = "$(cut -d, -f1-5,7- step.csv)" ] && ! grep -q step_median time.csv
ok $? "without --metric step the table is unchanged, less the column"
"$V" sweep "${A[@]}" --metric time -o time2.csv && cmp -s time.csv time2.csv; ok $? "--metric time is the default"

"$V" sweep "${A[@]}" --metric step --format jsonl -o step.jsonl
grep -q '"slowdown":1.98684,"step_median_ns":2010000,' step.jsonl; ok $? "jsonl: step_median_ns a number"

# An oom run has no step time (as it has no predicted time).
"$V" sweep st.jsonl -c a100-80g --vary memory.capacity=512MiB,4GiB --metric step -o oom.csv
[ "$(sed -n 2p oom.csv | cut -d, -f3-6)" = "oom,,," ] && [ -n "$(sed -n 3p oom.csv | cut -d, -f6)" ]
ok $? "an oom row's step_median_ns is empty, an ok row's is not"

# No repeated mark: the column is empty (not filled with the whole time)
# and stderr says why, once.
"$V" sweep t.jsonl -c a100-80g --vary memory.capacity=2GiB,4GiB --metric step -o none.csv 2> err; rc=$?
[ $rc = 0 ] && [ "$(tail -n +2 none.csv | cut -d, -f6 | tr -d '\n')" = "" ] && [ -n "$(sed -n 2p none.csv | cut -d, -f4)" ]
ok $? "a trace without repeated marks: exit 0, step_median_ns empty, predicted_ns kept"
[ "$(grep -c 'warning: --metric step: t.jsonl repeats no mark, so no run has a steady step' err)" = 1 ]
ok $? "and one warning naming the trace"

# The jobs-file path: the column is the merge's.
"$V" sweep "${A[@]}" --metric step --jobs-file jobs.txt 2> err; [ $? = 2 ] && grep -q "give it to --merge" err
ok $? "--metric step with --jobs-file alone: a usage error (2) pointing to --merge"
"$V" sweep "${A[@]}" --jobs-file jobs.txt 2> /dev/null && grep -v '^#' jobs.txt | sh 2> /dev/null \
  && "$V" sweep --merge --jobs-file jobs.txt --metric step -o merged.csv && cmp -s merged.csv step.csv
ok $? "--merge --jobs-file --metric step: the in-process table"

"$V" sweep "${A[@]}" --metric step --shard 1/2 -o p1.csv && "$V" sweep "${A[@]}" --metric step --shard 2/2 -o p2.csv \
  && "$V" sweep "${A[@]}" --metric step --merge p1.csv p2.csv -o shards.csv && cmp -s shards.csv step.csv
ok $? "--shard parts with --metric step merge to the same table"

head -n 3 step.csv > part.csv
"$V" sweep "${A[@]}" --metric step --resume -o part.csv && cmp -s part.csv step.csv; ok $? "--resume of a --metric step table"
"$V" sweep "${A[@]}" --resume -o part.csv 2> err; [ $? = 1 ] && grep -q "columns are not this sweep's" err
ok $? "--resume without --metric step of a table with the column: refused"

# plot sweep: the step time by default when the CSV has it; runs without
# one are not drawn, and a CSV where none has one says what to plot.
"$V" plot sweep step.csv -o s.png --script-only && grep -q "^ylabel = 'steady step time (ms)'$" s.gp \
  && grep -q "^plot_title = 'Steady step time vs memory.bandwidth on a100-80g'$" s.gp
ok $? "plot sweep of a --metric step CSV: y is the step time, and the title says so"
"$V" plot sweep none.csv -o n.png 2> err; [ $? = 1 ] && grep -q "no run has a step_median_ns (the trace repeats no mark): plot --y predicted_ns" err \
  && "$V" plot sweep none.csv --y predicted_ns -o n.png --script-only
ok $? "a CSV without step times: plot says to use --y predicted_ns, which draws"
