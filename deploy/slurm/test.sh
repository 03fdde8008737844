#!/usr/bin/env bash
# Runs the Slurm job arrays of deploy/slurm for real, scaled down, on a one-node Slurm
# cluster started on this machine (munge, slurmctld, slurmd; Debian's slurm-wlm and
# munge packages), and compares what they produce with a single process:
#   1. sweep.sbatch as an array of 4 tasks over 400 seeds of exactlyonce/swarm; the
#      shards' merge must be byte-identical to one unsharded sweep's JSON;
#   2. swarm-check.sbatch as an array of 4 swarm members (bitstate searches, seeds 1-4):
#      on a correct model every task is sampled (exit 4, no violation); with a planted
#      bug every task finds the violation and writes a trace that replays; the members'
#      merge equals the same swarm run in one process (check --strategy swarm).
# Needs root (it starts daemons and writes /etc/munge/munge.key if there is none).
# Without root it says so and exits 0, unless CI=true, when it fails; it fails, too,
# when the cluster does not start. .ci/run installs the packages and runs it.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
if [ "$(id -u)" != 0 ]; then
  echo "deploy/slurm/test.sh: not root: a Slurm cluster cannot be started here"
  [ "${CI:-}" = true ] && exit 1
  exit 0
fi
for b in munged slurmctld slurmd sbatch squeue; do
  command -v "$b" >/dev/null || { echo "deploy/slurm/test.sh: $b is missing (apt-get install slurm-wlm munge)"; exit 1; }
done

work=$(mktemp -d /tmp/simrun-slurm-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# simrun on the PATH the jobs see.
mkdir -p "$work/bin" "$work/state" "$work/spool" "$work/run"
go build -o "$work/bin/simrun" ./cmd/simrun
export PATH="$work/bin:$PATH"

# munge: a key, then the daemon on its own socket.
if [ ! -s /etc/munge/munge.key ]; then
  mkdir -p /etc/munge
  dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
  chmod 400 /etc/munge/munge.key
fi
chown -R root /etc/munge
mkdir -p /var/lib/munge /var/log/munge /run/munge
munged --force --socket "$work/run/munge.sock" --pid-file "$work/run/munged.pid" --log-file "$work/munged.log"
pids+=("$(cat "$work/run/munged.pid")")

host=$(hostname -s)
cat >"$work/slurm.conf" <<EOF
ClusterName=simrun-test
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/run/munge.sock
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/run/slurmctld.pid
SlurmdPidFile=$work/run/slurmd.pid
SlurmctldPort=16817
SlurmdPort=16818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
NodeName=$host CPUs=2 RealMemory=4096 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$work/slurm.conf"
slurmctld -D -f "$SLURM_CONF" >"$work/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$work/slurmd.out" 2>&1 &
pids+=($!)
up=""
for _ in $(seq 1 60); do
  if sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then up=1; break; fi
  sleep 1
done
if [ -z "$up" ]; then
  echo "deploy/slurm/test.sh: the Slurm cluster did not start:"
  tail -n 20 "$work/slurmctld.log" "$work/slurmd.log" "$work/slurmctld.out" "$work/slurmd.out" 2>/dev/null || true
  exit 1
fi
echo "slurm: one node ($host, 2 CPUs) up"

# 1. A sweep as a job array of 4 tasks, merged, against one process.
cd "$work"
sbatch --wait --quiet --array=1-4 --cpus-per-task=1 --mem=512M --output="$work/sweep-%a.out" \
  --export=ALL,SIMRUN_SCENARIO=exactlyonce/swarm,SIMRUN_SEEDS=1-400,SIMRUN_RESULTS="$work/results" \
  "$repo/deploy/slurm/sweep.sbatch"
ls "$work"/results/shard-*.json >/dev/null
simrun merge "$work"/results/shard-*.json --json "$work/merged.json" >/dev/null || [ $? -eq 1 ]
simrun sweep exactlyonce/swarm --seeds 1-400 --progress never --json "$work/single.json" >/dev/null || [ $? -eq 1 ]
if ! cmp -s "$work/merged.json" "$work/single.json"; then
  echo "deploy/slurm/test.sh: the 4 shards' merge differs from one process:"
  diff "$work/merged.json" "$work/single.json" | head -20
  exit 1
fi
echo "slurm: sweep.sbatch, 4 array tasks over 400 seeds: the merge equals one process's sweep"

# 2. Swarm verification: 4 bitstate searches, on a correct model and on a broken one.
sbatch --wait --quiet --array=1-4 --cpus-per-task=1 --mem=512M --output="$work/check-%a.out" \
  --export=ALL,SIMRUN_MODEL=twophase,SIMRUN_PARAMS="-p rm=6",SIMRUN_BITSTATE=1MiB,SIMRUN_RESULTS="$work/clean" \
  "$repo/deploy/slurm/swarm-check.sbatch"
for i in 1 2 3 4; do
  grep -q '"outcome": "sampled"' "$work/clean/check-$i.json" || { echo "deploy/slurm/test.sh: clean task $i:"; cat "$work/clean/check-$i.json" "$work/check-$i.out"; exit 1; }
done
# the members' merge is the swarm run in one process (CPU times aside)
strip() { grep -v '"cpu_seconds"'; }
code=0; simrun merge --json - "$work"/clean/check-{1,2,3,4}.json > "$work/clean-merged.json" || code=$?
[ "$code" -eq 4 ] || { echo "deploy/slurm/test.sh: merge of the clean members exited $code"; exit 1; }
code=0; simrun check twophase -p rm=6 --strategy swarm --members 4 --store bitstate:1MiB --progress never --json > "$work/clean-single.json" || code=$?
[ "$code" -eq 4 ] || { echo "deploy/slurm/test.sh: the clean swarm in one process exited $code"; exit 1; }
if ! diff <(strip < "$work/clean-merged.json") <(strip < "$work/clean-single.json") >/dev/null; then
  echo "deploy/slurm/test.sh: the members' merge differs from the swarm in one process:"
  diff <(strip < "$work/clean-merged.json") <(strip < "$work/clean-single.json") | head -20
  exit 1
fi
sbatch --wait --quiet --array=1-4 --cpus-per-task=1 --mem=512M --output="$work/bug-%a.out" \
  --export=ALL,SIMRUN_MODEL=exactlyonce,SIMRUN_PARAMS="-p bug=put-on-prepare",SIMRUN_BITSTATE=16MiB,SIMRUN_RESULTS="$work/bug" \
  "$repo/deploy/slurm/swarm-check.sbatch"
for i in 1 2 3 4; do
  grep -q '"violation": "' "$work/bug/check-$i.json" || { echo "deploy/slurm/test.sh: task $i missed the planted bug:"; cat "$work/bug/check-$i.json" "$work/bug-$i.out"; exit 1; }
  simrun replay "$work/bug/check-$i.jsonl" >/dev/null
done
code=0; simrun merge "$work"/bug/check-{1,2,3,4}.json > "$work/bug-merged.txt" || code=$?
[ "$code" -eq 1 ] && grep -q "4 of 4 members" "$work/bug-merged.txt" || { echo "deploy/slurm/test.sh: merge of the bug's members exited $code:"; cat "$work/bug-merged.txt"; exit 1; }
echo "slurm: swarm-check.sbatch, 4 swarm members: a correct model sampled clean by each, a planted bug found by each (traces replay); their merge equals the swarm in one process"
