#!/usr/bin/env bash
# Finding 10a (issue #14): plugin children that setsid() left the plugin's process group,
# so killing the group missed them and they outlived the exporter. Now the exporter is a
# child subreaper and kills them: after a plugin that exits normally, after a plugin that
# times out, and when the exporter stops while a plugin runs. Checked for a detached
# `sleep 300`, a detached chain (setsid inside setsid) and a double fork.
EXPORTER=$1
FIXTURES=$2
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../integration/exporter/lib.sh"

# alive PIDFILE: the pid in the file is a live (non-zombie) process.
alive() {
  local pid st
  pid=$(cat "$1" 2>/dev/null) || return 1
  [ -n "$pid" ] || return 1
  st=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || return 1
  [ -n "$st" ] && [ "$st" != Z ]
}
# gone_within SECONDS PIDFILE...: every process is gone within SECONDS.
gone_within() {
  local limit=$1 f i left; shift
  for i in $(seq $((limit * 10))); do
    left=0
    for f in "$@"; do alive "$f" && left=1; done
    [ $left = 0 ] && return 0
    sleep 0.1
  done
  return 1
}
# Whatever a failing run leaves behind is killed by lib.sh's cleanup.
track() { local f; for f in "$@"; do [ -s "$f" ] && PIDS+=("$(cat "$f")"); done; true; }
trap 'track "$WORK"/*.pid; cleanup' EXIT
wait_files() {
  local i f ok
  for i in $(seq 200); do
    ok=1
    for f in "$@"; do [ -s "$f" ] || ok=0; done
    [ $ok = 1 ] && return 0
    sleep 0.05
  done
  fail "plugin did not start its children: $*"
}

W=$WORK
mkdir -p "$W/p1" "$W/p2"
# detach.sh PIDFILE: records its pid and becomes a long sleep.
printf '%s\n' 'echo $$ > "$1"' 'exec sleep 300' > "$W/detach.sh"
# nest.sh PIDFILE: a detached process that detaches another one and waits for it.
printf '%s\n' "setsid bash $W/detach.sh \"\$1\" </dev/null >/dev/null 2>&1 &" 'wait' > "$W/nest.sh"
# Exits normally, leaving detached processes behind: setsid, setsid inside setsid, and
# a double fork that stays in the group.
cat > "$W/p1/a_detach_metrics_plugin.sh" <<SH
[ -e "$W/a.done" ] && { echo "hw_escape_demo 1"; exit 0; }
setsid bash "$W/detach.sh" "$W/a1.pid" </dev/null >/dev/null 2>&1 &
setsid bash "$W/nest.sh" "$W/a2.pid" </dev/null >/dev/null 2>&1 &
( bash "$W/detach.sh" "$W/a3.pid" </dev/null >/dev/null 2>&1 & ) &
for i in \$(seq 100); do [ -s "$W/a1.pid" ] && [ -s "$W/a2.pid" ] && [ -s "$W/a3.pid" ] && break; sleep 0.05; done
touch "$W/a.done"
echo "hw_escape_demo 1"
SH
# Hangs (killed at the 2 s timeout), with a detached child.
cat > "$W/p1/b_hang_metrics_plugin.sh" <<SH
[ -e "$W/b.done" ] && exit 0
setsid bash "$W/detach.sh" "$W/b1.pid" </dev/null >/dev/null 2>&1 &
touch "$W/b.done"
sleep 300
SH

start_exporter escape --root "$FIXTURES/minimal" --host node1 --plugin-dir "$W/p1" --interval 2
wait_files "$W/a1.pid" "$W/a2.pid" "$W/a3.pid"
track "$W/a1.pid" "$W/a2.pid" "$W/a3.pid"
gone_within 10 "$W/a1.pid" "$W/a2.pid" "$W/a3.pid" || fail "processes detached by a plugin that exited outlived its run"
wait_files "$W/b1.pid"
track "$W/b1.pid"
gone_within 15 "$W/b1.pid" || fail "a process detached by a timed-out plugin outlived the timeout"
kill -0 "${PIDS[0]}" || fail "exporter died"
scrape > "$W/s.prom" || fail "scrape"
grep -Eq '^mt_exporter_plugin_escaped_killed_total\{plugin="a_detach",host="node1"\} [1-9]' "$W/s.prom" ||
  fail "killed escapees not counted: $(grep escaped "$W/s.prom")"
grep -q 'a_detach: killed' "$W/escape.log" || fail "no log line for the killed escapees"
kill -TERM "${PIDS[0]}"
wait "${PIDS[0]}" || fail "exporter exit status $?"

# The exporter stops while a plugin runs; its detached child must not survive it.
cat > "$W/p2/c_running_metrics_plugin.sh" <<SH
setsid bash "$W/detach.sh" "$W/c1.pid" </dev/null >/dev/null 2>&1 &
sleep 300
SH
start_exporter stop --root "$FIXTURES/minimal" --host node1 --plugin-dir "$W/p2" --interval 60
EXP2=${PIDS[-1]}
wait_files "$W/c1.pid"
track "$W/c1.pid"
alive "$W/c1.pid" || fail "detached child not running"
kill -TERM "$EXP2"
wait "$EXP2" || fail "exporter exit status $?"
gone_within 5 "$W/c1.pid" || fail "a process detached by a running plugin outlived the exporter"
echo "plugin_escape: ok"
