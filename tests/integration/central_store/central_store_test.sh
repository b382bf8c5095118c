#!/usr/bin/env bash
# The "central store" pattern with real components: an exposition replayer (dcgm-exporter and
# AMD device-metrics-exporter bytes, one port per virtual host), the real
# prometheus-node-exporter, two agent-mode Prometheus servers scraping them every second and
# remote-writing to a central Prometheus; checks that every host's series and every injected
# fault arrive there, then `mt query --source central`. See central_store_checks.py and README.md.
# Usage: central_store_test.sh MT MT_SIMTRAIN PYTHON [CHECKS_PY]
#   MT / MT_SIMTRAIN may be "-": the mt part is skipped (and says so).
# Env: MT_CENTRAL_TEST_BUDGET (seconds, default 150) bounds the checks; the whole script is
#   bounded by that plus 30 s.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mt=$1 sim=$2 py=$3 checks=${4:-$here/central_store_checks.py}
fixtures=$(cd "$here/../../fixtures/exposition" && pwd)
budget=${MT_CENTRAL_TEST_BUDGET:-150}
for bin in prometheus prometheus-node-exporter; do
  command -v "$bin" > /dev/null || { echo "FAIL: $bin is not installed (scripts/setup installs it)"; exit 1; }
done
work=$(mktemp -d /tmp/mt-central-store-it.XXXXXX)

# Stops, by PID, whatever the checks started and left running (there should be nothing: they
# stop their own). A PID is only signalled while its command line still names this run's
# directory, so a reused PID is never hit.
stop_leftovers() {
  local found=0 pid name
  [[ -f $work/pids ]] || return 0
  while read -r pid name; do
    if [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$work"; then
      echo "left running: $name (pid $pid)" >&2
      kill "$pid" 2>/dev/null || true
      found=1
    fi
  done < "$work/pids"
  if ((found)); then
    sleep 2
    while read -r pid name; do
      if [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$work"; then
        kill -9 "$pid" 2>/dev/null || true
      fi
    done < "$work/pids"
  fi
  return $found
}
cleanup() {
  local rc=$?
  stop_leftovers || rc=1
  if ((rc != 0)) && [[ -z ${MT_CENTRAL_TEST_KEEP:-} ]]; then
    for f in "$work"/*.log; do [[ -s $f ]] && { echo "== $f (tail)"; tail -n 15 "$f"; }; done
  fi
  if [[ -n ${MT_CENTRAL_TEST_KEEP:-} ]]; then echo "kept $work"; else rm -rf "$work"; fi
  exit $rc
}
trap cleanup EXIT

# timeout: SIGTERM first (the checks stop their processes on it), SIGKILL 15 s later. Run in
# the background so that a SIGTERM/SIGINT to this script (bash defers traps while a foreground
# child runs) is passed on at once, and the checks stop what they started.
timeout -k 15 $((budget + 30)) "$py" "$checks" "$mt" "$sim" "$work" "$fixtures" &
checks_pid=$!
trap 'kill -TERM "$checks_pid" 2> /dev/null || true; wait "$checks_pid" || true; exit 143' TERM INT
rc=0
wait "$checks_pid" || rc=$?
((rc == 0)) || exit $rc
echo "PASS central-store"
