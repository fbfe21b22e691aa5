#!/usr/bin/env bash
# The smoke pipeline on a real single-node SLURM cluster, started here and stopped at exit:
#   sudo tests/slurm/run.sh        (Debian/Ubuntu, root: installs slurm-wlm and munge with apt)
# 1. installs slurmctld, slurmd, the client commands and munge;
# 2. writes a one-node slurm.conf for this host, without an accounting database;
# 3. starts munged, slurmctld and slurmd;
# 4-6. tests/slurm/check_pipeline.py: the smoke pipeline through `--profile profiles/slurm`,
#      figures compared byte for byte with a local run, one job cancelled mid-run, then resumed;
# 7. stops the daemons it started and removes the slurm.conf it wrote.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
CONF=/etc/slurm/slurm.conf
MARK="# written by tests/slurm/run.sh"
# Ports away from the defaults (6817/6818), so a cluster already on this host is not touched.
CTLD_PORT="${SLURM_TEST_CTLD_PORT:-6917}"
SLURMD_PORT="${SLURM_TEST_SLURMD_PORT:-6918}"

log() { printf '[slurm-test %s] %s\n' "$(date +%T)" "$*"; }

[ "$(id -u)" = 0 ] || { echo "tests/slurm/run.sh installs and starts SLURM daemons: run it as root" >&2; exit 2; }

# One run at a time: the cluster uses fixed ports and /etc/slurm/slurm.conf.
mkdir -p /run/lock
exec 9>/run/lock/replication-slurm-test.lock
flock -w 600 9

# 1. Packages (a no-op when present).
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null \
   || ! command -v munged >/dev/null; then
  log "installing slurm-wlm and munge with apt"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi
log "$(slurmctld -V)"

# 2. A one-node cluster. slurm.conf lives where every SLURM command looks for it: the
#    job-step executor runs srun with SLURM_* variables (SLURM_CONF included) removed.
if [ -e "$CONF" ] && ! grep -qF "$MARK" "$CONF"; then
  echo "$CONF exists and belongs to a real cluster; this test only runs on a machine without one" >&2
  exit 2
fi
STATE="$(mktemp -d /tmp/slurm-test.XXXXXX)"
mkdir -p "$STATE/state" "$STATE/spool" /etc/slurm
HOST="$(hostname -s)"
# The node as slurmd detects it (sockets, cores, RealMemory), but advertising twice its CPUs:
# the smoke DAG's independent jobs then run at once, and the time goes to the jobs rather than to
# waiting for a free slot and the executor's next status check.
NODE="$(slurmd -C | head -n 1)"
CPUS="$(nproc)"
NODE="$(sed -E "s/ CPUs=[0-9]+/ CPUs=$((2 * CPUS))/; s/ Boards=[0-9]+//; s/ SocketsPerBoard=[0-9]+//; s/ CoresPerSocket=[0-9]+//; s/ ThreadsPerCore=[0-9]+//" <<<"$NODE")"
cat >"$CONF" <<EOF
$MARK
ClusterName=replication-test
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/state
SlurmdSpoolDir=$STATE/spool
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
# No cgroups in containers and VMs without systemd: plain process tracking, no task binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
# No slurmdbd: sacct has no history, so the executor polls squeue (MinJobAge keeps it there).
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MinJobAge=600
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdParameters=config_overrides
MpiDefault=none
SwitchType=switch/none
$NODE NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF

DAEMONS=()
stop() {
  local status=$?
  # 7. Stop what was started here, by pid; the SLURM daemons are children of this shell.
  log "stopping the daemons"
  # Jobs left by a failed check first (the cluster is this script's own).
  squeue --noheader --format=%i 2>/dev/null | xargs -r scancel 2>/dev/null || true
  [ "${#DAEMONS[@]}" = 0 ] || kill "${DAEMONS[@]}" 2>/dev/null || true
  [ "${#DAEMONS[@]}" = 0 ] || wait "${DAEMONS[@]}" 2>/dev/null || true
  if [ "$status" != 0 ]; then
    log "failed ($status); daemon logs:"
    tail -n 20 "$STATE"/*.log 2>/dev/null || true
  fi
  grep -qF "$MARK" "$CONF" 2>/dev/null && rm -f "$CONF"
  rm -rf "$STATE"
  exit "$status"
}
trap stop EXIT

# 3. Daemons: munged (unless one already answers), then the controller and the node daemon.
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  install -d -o munge -g munge -m 0755 /run/munge
  [ -s /etc/munge/munge.key ] || { mungekey --create --force && chown munge:munge /etc/munge/munge.key; }
  # As the munge user, in the foreground: a child of this shell, like the SLURM daemons.
  setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged --foreground >>"$STATE/munged.log" 2>&1 &
  DAEMONS+=($!)
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
  munge -n | unmunge >/dev/null
fi
# In the foreground (-D) as children of this shell, which stops and reaps them; they log to stderr.
slurmctld -D -i >>"$STATE/slurmctld.log" 2>&1 &
DAEMONS+=($!)
slurmd -D >>"$STATE/slurmd.log" 2>&1 &
DAEMONS+=($!)
for _ in $(seq 100); do
  sinfo --noheader --states=idle --format=%N 2>/dev/null | grep -q . && break
  sleep 0.2
done
sinfo --noheader --states=idle --format=%N | grep -q . || { log "the node did not come up idle:"; sinfo; exit 1; }
log "cluster up: $(sinfo --noheader --format='partition %P, node %N, %c CPUs, %m MB, %t')"

# 4-6.
"$PYTHON" "$ROOT/tests/slurm/check_pipeline.py"
