#!/bin/bash
# cluster.sh — a 200-run sweep through GNU parallel (jobs file) and through
# a real single-node Slurm job array (shards), each with one task killed:
# --merge refuses, the resume runs what is missing, and the result is
# byte-identical to the in-process sweep (issue 16, docs/cluster.md).
#
# Slurm: slurmctld and slurmd are started here on 127.0.0.1 only, with
# auth/none, proctrack/linuxproc, task/none, no cgroups and no accounting,
# state and logs under a temporary folder, on ports picked from this
# process's id, and stopped by PID at the end. They need root (CI runs as
# root). If they cannot start, the test fails saying why; it never skips
# silently. Both tools come from Debian (parallel, slurmctld, slurmd,
# slurm-client), installed by .ci/run.
. "$(dirname "$0")/sweep-lib.sh"
echo 1..12
V=$(realpath "$VRAMSIM")
here=$(cd "$(dirname "$0")/.." && pwd)
export VRAMSIM_CONFIGS=${VRAMSIM_CONFIGS:-$here/configs}
cd "$T" || exit 1
args=("$T/t.jsonl" -c a100-80g,rtx3090 --vary memory.capacity=512MiB..25856MiB/256MiB)   # 2 x 100 = 200 runs (from 512 MiB: both presets hold their CUDA context)
"$V" sweep "${args[@]}" -o inproc.csv
[ "$(grep -vc '^config' inproc.csv)" = 200 ]; ok $? "the in-process sweep: 200 rows"

# ---- GNU parallel over a jobs file ----
if ! command -v parallel > /dev/null; then
  echo "# GNU parallel is not installed (Debian package parallel; .ci/run installs it)"
  for i in 2 3 4 5 6; do ok 1 "GNU parallel missing"; done
else
  mkdir par
  "$V" sweep "${args[@]}" --jobs-file par/jobs.txt 2> /dev/null
  # Task 37 is killed (SIGKILL, as the OOM killer or a node failure would)
  # before its replay runs.
  grep -v '^#' par/jobs.txt | parallel -j 2 --joblog par/joblog \
      'if [ {#} = 37 ]; then kill -KILL $$; fi; eval {}' 2> par/parallel.err
  [ "$(awk 'NR > 1 && $8 == 9' par/joblog | wc -l)" = 1 ]; ok $? "parallel: 200 jobs, one killed by SIGKILL (joblog)"
  "$V" sweep --merge --jobs-file par/jobs.txt -o par/merged.csv 2> err; rc=$?
  [ $rc = 1 ] && [ ! -e par/merged.csv ] && grep -q "1 have no report" err && grep -q "missing .*run-00036.json" err
  ok $? "--merge refuses, naming the killed run's report"
  "$V" sweep --status --jobs-file par/jobs.txt > st; [ $? = 1 ] && grep -q "199 done, 0 failed (config errors), 1 missing" st
  ok $? "--status: 199 done, 1 missing"
  "$V" sweep "${args[@]}" --jobs-file par/jobs.txt --resume 2> /dev/null
  [ "$(grep -vc '^#' par/jobs.txt.resume-1)" = 1 ] && grep -v '^#' par/jobs.txt.resume-1 | parallel -j 2
  ok $? "--resume: one command in jobs.txt.resume-1, run by parallel"
  "$V" sweep --merge --jobs-file par/jobs.txt -o par/merged.csv && cmp par/merged.csv inproc.csv >&2
  ok $? "parallel: the merge is byte-identical to the in-process sweep"
fi

# ---- a Slurm array over shards ----
S=$T/slurm
mkdir -p "$S/state" "$S/spool" "$S/log"
base=$(( 20000 + ($$ % 2000) * 2 ))
host=$(hostname -s)
slurm_why=""
for b in slurmctld slurmd sbatch squeue scancel sinfo; do
  command -v $b > /dev/null || slurm_why="$slurm_why $b is not installed (Debian packages slurmctld slurmd slurm-client);"
done
[ "$(id -u)" = 0 ] || slurm_why="$slurm_why the daemons need root (run as root, as CI does);"
cat > "$S/slurm.conf" <<CONF
ClusterName=vramsimtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$(( base + 1 ))
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
MaxArraySize=1001
ReturnToService=2
MpiDefault=none
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$S/slurm.conf
stop_slurm () {
  for f in "$S/slurmd.pid" "$S/slurmctld.pid"; do
    [ -s "$f" ] && kill "$(cat "$f")" 2> /dev/null
  done
  for f in "$S/slurmd.pid" "$S/slurmctld.pid"; do
    for i in $(seq 50); do [ -s "$f" ] && kill -0 "$(cat "$f")" 2> /dev/null || break; sleep 0.1; done
  done
  rm -rf "$T"
}
trap stop_slurm EXIT
if [ -z "$slurm_why" ]; then
  slurmctld -i 2> "$S/log/slurmctld.err" || slurm_why="slurmctld did not start: $(tail -c 300 "$S/log/slurmctld.err" "$S/log/slurmctld.log" 2> /dev/null | tr '\n' ' ')"
fi
if [ -z "$slurm_why" ]; then
  slurmd 2> "$S/log/slurmd.err" || slurm_why="slurmd did not start: $(tail -c 300 "$S/log/slurmd.err" "$S/log/slurmd.log" 2> /dev/null | tr '\n' ' ')"
fi
if [ -z "$slurm_why" ]; then
  for i in $(seq 100); do sinfo -h -o %t 2> /dev/null | grep -q idle && break; sleep 0.2; done
  sinfo -h -o %t 2> /dev/null | grep -q idle \
    || slurm_why="the node never became idle: sinfo says '$(sinfo -h 2>&1 | tr '\n' ' ')'; slurmctld log: $(tail -c 400 "$S/log/slurmctld.log" 2> /dev/null | tr '\n' ' ')"
fi
if [ -n "$slurm_why" ]; then
  echo "# Slurm could not start:$slurm_why"
  for i in 7 8 9 10 11 12; do ok 1 "Slurm did not start:$slurm_why"; done
  exit 0
fi
ok 0 "slurmctld and slurmd up on 127.0.0.1 (ports $base, $(( base + 1 )))"

# wait_array JOBID: until no task of the job is pending or running.
wait_array () {
  for i in $(seq 600); do
    [ -z "$(squeue -h -j "$1" 2> /dev/null)" ] && return 0
    sleep 0.1
  done
  return 1
}
N=10
export VRAMSIM=$V
job=$(sbatch --parsable --mem=100M --array=1-$N -o "$S/log/task-%a.log" "$here/docs/sweep-array.sbatch" $N "$T/parts" "${args[@]}")
# Task 7 is cancelled before it runs (a pending task cancelled, or a node
# lost): its part is never written.
scancel "${job}_7"
wait_array "$job"; ok $? "the array ran (job $job, $N tasks, one cancelled)"
[ "$(ls "$T/parts" | grep -c "\.csv$")" = 9 ] || { echo "# parts: $(ls "$T/parts" 2>&1)"; tail -n 5 "$S"/log/task-*.log "$S/log/slurmd.log" | sed "s/^/# /"; false; }
ok $? "9 of 10 parts written"
"$V" sweep "${args[@]}" --merge "$T"/parts/part-*.csv -o slurm.csv 2> err; rc=$?
[ $rc = 1 ] && [ ! -e slurm.csv ] && grep -q "20 of 200 runs are in no part (the first: run 120" err
ok $? "--merge refuses: 20 runs in no part, the first named"
job2=$(sbatch --parsable --mem=100M --array=7 -o "$S/log/task-%a-again.log" "$here/docs/sweep-array.sbatch" $N "$T/parts" "${args[@]}")
wait_array "$job2"
"$V" sweep "${args[@]}" --merge "$T"/parts/part-*.csv -o slurm.csv && cmp slurm.csv inproc.csv >&2
ok $? "task 7 resubmitted: the merge is byte-identical to the in-process sweep"

# docs/jobs-array.sbatch: a jobs file as an array, CHUNK commands per task.
small=("$T/t.jsonl" -c a100-80g --vary memory.capacity=512MiB..5376MiB/256MiB)   # 20 runs
"$V" sweep "${small[@]}" -o small.csv
mkdir arr
"$V" sweep "${small[@]}" --jobs-file arr/jobs.txt 2> /dev/null
job3=$(sbatch --parsable --mem=100M --array=1-2 --export=ALL,CHUNK=10 -o "$S/log/jobs-%a.log" "$here/docs/jobs-array.sbatch" "$T/arr/jobs.txt")
wait_array "$job3"
"$V" sweep --merge --jobs-file arr/jobs.txt -o arr.csv && cmp arr.csv small.csv >&2
ok $? "docs/jobs-array.sbatch: 20 commands in 2 tasks of 10, merged byte-identical"
