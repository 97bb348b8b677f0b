#!/bin/bash
# sweep-identity.sh — issue 26 item 15: sweep rows know their sweep. Every
# rows output gets OUT.sweep (the trace's identity, the configs' digests,
# --set, --vary); --merge of --shard parts and --resume refuse rows whose
# OUT.sweep is another sweep's, even with the same -c and --vary (the
# columns and run keys alone cannot tell).
. "$(dirname "$0")/sweep-lib.sh"
V=$VRAMSIM
echo 1..5
cd "$T" || exit 1
sed 's/"bytes": 1073741824/"bytes": 2147483648/' t.jsonl > u.jsonl   # another trace, same shape
args=(-c a100-80g --vary memory.capacity=1GiB,2GiB,4GiB,8GiB --format csv)
"$V" sweep t.jsonl "${args[@]}" --shard 1/2 -o a1.csv 2> /dev/null && "$V" sweep t.jsonl "${args[@]}" --shard 2/2 -o a2.csv 2> /dev/null \
  && [ -s a1.csv.sweep ]
ok $? "shards of trace t, each with its .sweep"
"$V" sweep t.jsonl "${args[@]}" --merge a1.csv a2.csv -o ta.csv 2> /dev/null && "$V" sweep t.jsonl "${args[@]}" -o full.csv 2> /dev/null \
  && cmp -s ta.csv full.csv
ok $? "merged as trace t's sweep: equal to the whole sweep"
"$V" sweep u.jsonl "${args[@]}" --merge a1.csv a2.csv -o ua.csv 2> err; rc=$?
[ $rc = 1 ] && [ ! -e ua.csv ] && grep -q "a1.csv: --merge: its rows are of another sweep" err
ok $? "trace t's shards merged as trace u's sweep: refused (rc $rc)"
"$V" sweep t.jsonl -c a100-80g --vary memory.capacity=1GiB,2GiB,4GiB,8GiB --set policy.oversubscription=spill --format csv \
  --merge a1.csv a2.csv -o sa.csv 2> err; [ $? = 1 ] && grep -q "another sweep" err
ok $? "another --set: refused"
head -2 full.csv > cut.csv; cp full.csv.sweep cut.csv.sweep
"$V" sweep u.jsonl "${args[@]}" -o cut.csv --resume 2> err; [ $? = 1 ] && grep -q "cut.csv: --resume: its rows are of another sweep" err \
  && [ "$(wc -l < cut.csv)" = 2 ]
ok $? "--resume of trace t's rows as trace u's sweep: refused, the file kept"
