#!/usr/bin/env bash
# Bring up a throw-away single-node Slurm (slurmctld + slurmd on 127.0.0.1) as root, no systemd, no cgroups.
# Debian 12 packages: slurm-wlm (22.05.8) munge; for SLURM_TEST_ACCT=1 also slurmdbd mariadb-server.
# Usage: slurm-up.sh [WORKDIR]
#   env: SLURM_TEST_AUTH=munge|none (default munge), SLURM_TEST_ACCT=0|1 (1: MariaDB + slurmdbd, so sacct works),
#        SLURM_CTL_PORT/SLURM_D_PORT/SLURM_DBD_PORT/SLURM_DB_PORT, SLURM_SCHED (default sched/backfill),
#        SLURM_OVERSUBSCRIBE (partition OverSubscribe=, default NO; tests use FORCE:8 so jobs share the cores),
#        SLURM_TEST_MEMLIMIT=1 (memory is a consumable resource and Slurm enforces each job's --mem / DefMemPerCPU
#        without cgroups: jobacct_gather/linux polls RSS every second and OverMemoryKill kills the step;
#        SLURM_DEFMEMPERCPU, default 1000 MB)
# Prints "export SLURM_CONF=..." ; PIDs are left in $W/run/*.pid ; tear down with slurm-down.sh WORKDIR.
set -euo pipefail
W=${1:-$(mktemp -d /tmp/slurmtest.XXXXXX)}
AUTH=${SLURM_TEST_AUTH:-munge}
ACCT=${SLURM_TEST_ACCT:-0}
CTLPORT=${SLURM_CTL_PORT:-16817}
DPORT=${SLURM_D_PORT:-16818}
DBDPORT=${SLURM_DBD_PORT:-16819}
DBPORT=${SLURM_DB_PORT:-13306}
NCPU=$(nproc)
mkdir -p "$W"/{state,spool/slurmd,run,log,munge}
chmod 755 "$W"                                   # the munge user must be able to traverse it
export SLURM_CONF="$W/slurm.conf"                # clients, slurmdbd and sacctmgr all find their config via this
# on any failure, stop whatever this script already started, by PID: TERM, up to 5 s, then KILL
# (slurmd ignores TERM while it is still retrying to register with a dead slurmctld)
stop_started() {
  local pids=() f i
  for f in "$W"/run/*.pid; do [ -f "$f" ] && pids+=("$(cat "$f")"); done
  [ ${#pids[@]} -gt 0 ] || return 0
  kill -TERM "${pids[@]}" 2>/dev/null
  for i in $(seq 50); do
    kill -0 "${pids[@]}" 2>/dev/null || return 0     # bash: true while at least one is alive
    sleep 0.1
  done
  kill -KILL "${pids[@]}" 2>/dev/null; return 0
}
trap 'rc=$?; [ $rc -ne 0 ] && stop_started; exit $rc' EXIT

# ---- authentication --------------------------------------------------------------------------
if [ "$AUTH" = munge ]; then
  chown munge:munge "$W/munge"; chmod 755 "$W/munge"   # munged: socket dir needs a+x and no o+w
  runuser -u munge -- mungekey --create --keyfile="$W/munge/munge.key"     # fresh key, munge-owned, 0600
  # setpriv execs (no fork), so $! is munged's own PID
  setpriv --reuid=munge --regid=munge --init-groups munged -F --socket="$W/munge/munge.socket.2" \
      --key-file="$W/munge/munge.key" --pid-file="$W/munge/munged.pid" --log-file="$W/munge/munged.log" \
      --seed-file="$W/munge/munged.seed" > "$W/log/munged.stdout" 2>&1 &
  echo $! > "$W/run/munged.pid"
  for i in $(seq 100); do [ -S "$W/munge/munge.socket.2" ] && break; sleep 0.05; done
  munge -n -S "$W/munge/munge.socket.2" | unmunge -S "$W/munge/munge.socket.2" >/dev/null   # sanity check
  AUTHLINES="AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$W/munge/munge.socket.2"
else                                             # Slurm 22.05 still ships auth/none + cred/none: no munge at all
  AUTHLINES="AuthType=auth/none
CredType=cred/none"
fi

MEMLIMIT=${SLURM_TEST_MEMLIMIT:-0}
SELECTPARAMS=CR_Core
REALMEM=1000
if [ "$MEMLIMIT" = 1 ]; then
  SELECTPARAMS=CR_Core_Memory
  REALMEM=$(awk '/^MemTotal:/ {print int($2 / 1024 * 3 / 4)}' /proc/meminfo)   # bookkeeping only
  GATHERLINES="JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=1
JobAcctGatherParams=OverMemoryKill
DefMemPerCPU=${SLURM_DEFMEMPERCPU:-1000}"
elif [ "$ACCT" = 1 ]; then
  GATHERLINES="JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=5"
else
  GATHERLINES="JobAcctGatherType=jobacct_gather/none"
fi

if [ "$ACCT" = 1 ]; then
  ACCTLINES="$GATHERLINES
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$DBDPORT"
  # the slurmdbd connection does not use AuthInfo: its munge socket is given by AccountingStoragePass
  [ "$AUTH" = munge ] && ACCTLINES="$ACCTLINES
AccountingStoragePass=$W/munge/munge.socket.2"
else
  ACCTLINES="$GATHERLINES
AccountingStorageType=accounting_storage/none"
fi

cat > "$SLURM_CONF" <<CONF
ClusterName=testcluster
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
$AUTHLINES
SlurmctldPort=$CTLPORT
SlurmdPort=$DPORT
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool/slurmd
SlurmctldPidFile=$W/run/slurmctld.pid.conf
SlurmdPidFile=$W/run/slurmd.pid.conf
SlurmctldLogFile=$W/log/slurmctld.log
SlurmdLogFile=$W/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=$SELECTPARAMS
SchedulerType=${SLURM_SCHED:-sched/backfill}
$ACCTLINES
JobCompType=jobcomp/filetxt
JobCompLoc=$W/log/jobcomp.txt
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
Waittime=0
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$NCPU RealMemory=$REALMEM State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=${SLURM_OVERSUBSCRIBE:-NO}
CONF

# ---- optional accounting: MariaDB + slurmdbd -------------------------------------------------
if [ "$ACCT" = 1 ]; then
  mariadb-install-db --no-defaults --datadir="$W/mysql" --user=root --auth-root-authentication-method=normal \
      --skip-test-db > "$W/log/mariadb-install.log" 2>&1
  mariadbd --no-defaults --datadir="$W/mysql" --user=root --bind-address=127.0.0.1 --port="$DBPORT" \
      --socket="$W/run/mysql.sock" --pid-file="$W/run/mariadbd.pid.conf" --log-error="$W/log/mariadbd.log" \
      --innodb-buffer-pool-size=64M --innodb-log-file-size=16M --innodb-lock-wait-timeout=900 \
      --innodb-flush-log-at-trx-commit=0 > /dev/null 2>&1 &
  echo $! > "$W/run/mariadbd.pid"
  for i in $(seq 300); do mariadb-admin --no-defaults -uroot -h127.0.0.1 -P"$DBPORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
  cat > "$W/slurmdbd.conf" <<DBD
$(echo "$AUTHLINES" | grep -v '^CredType')
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBDPORT
SlurmUser=root
LogFile=$W/log/slurmdbd.log
PidFile=$W/run/slurmdbd.pid.conf
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DBPORT
StorageUser=root
StorageLoc=slurm_acct_db
DBD
  chmod 600 "$W/slurmdbd.conf"                   # slurmdbd refuses a group/world-readable conf
  slurmdbd -D > "$W/log/slurmdbd.stdout" 2>&1 &  # reads slurmdbd.conf from the directory of $SLURM_CONF
  echo $! > "$W/run/slurmdbd.pid"
  for i in $(seq 300); do
    kill -0 "$(cat "$W/run/slurmdbd.pid")" 2>/dev/null || { cat "$W/log/slurmdbd.stdout" >&2; exit 1; }
    timeout 5 sacctmgr -n list cluster >/dev/null 2>&1 && break; sleep 0.1
  done
  timeout 10 sacctmgr -i add cluster testcluster >/dev/null
fi

# ---- controller + node daemon (foreground mode, backgrounded here so $! is the daemon) --------
slurmctld -D -i -f "$SLURM_CONF" > "$W/log/slurmctld.stdout" 2>&1 &
echo $! > "$W/run/slurmctld.pid"
slurmd -D -N localhost -f "$SLURM_CONF" > "$W/log/slurmd.stdout" 2>&1 &
echo $! > "$W/run/slurmd.pid"
st=; deadline=$((SECONDS + 60))
while [ $SECONDS -lt $deadline ]; do
  for d in slurmctld slurmd; do
    kill -0 "$(cat "$W/run/$d.pid")" 2>/dev/null || { echo "$d died" >&2; tail -n 20 "$W/log/$d.stdout" >&2; exit 1; }
  done
  st=$(timeout 5 sinfo -h -n localhost -o %T 2>/dev/null || true)
  [ "$st" = idle ] && break
  sleep 0.1
done
[ "$st" = idle ] || { echo "slurm node not idle: '$st'" >&2; tail -n 20 "$W"/log/*.log >&2; exit 1; }
echo "export SLURM_CONF=$SLURM_CONF"
