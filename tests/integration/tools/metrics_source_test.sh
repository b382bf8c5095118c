#!/usr/bin/env bash
# query_tsdb on a configured remote metrics source (a real Prometheus behind TLS and basic
# auth as the central store) and every bad-input case of a remote endpoint: see
# metrics_source_checks.py.
# Usage: metrics_source_test.sh MT MT_SIMTRAIN PYTHON CHECKS_PY
# Loopback ports: chosen by the kernel (bind to port 0), so it runs beside any other test.
set -euo pipefail
. "$(dirname "$0")/stop_leftover_prometheus.sh"
mt=$1 sim=$2 py=$3 checks=$4
work=$(mktemp -d /tmp/mt-metrics-source-it.XXXXXX)
cleanup() {
  local rc=$?
  stop_leftover_prometheus "$work" || rc=1
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT
"$sim" --demo-init "$work/ws" --only 7877 > "$work/init.log" 2>&1 || { cat "$work/init.log"; exit 1; }
"$py" "$checks" "$mt" "$work/ws" "$work"
echo "PASS tools-metrics-source"
