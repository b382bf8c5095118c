#!/usr/bin/env bash
# Integration test of query_tsdb / `mt query` on the case-study workspace: mt-simtrain
# generates the five jobs the acceptance criteria name (real promtool blocks), then
# query_tsdb_checks.py asserts the seed's conclusions with numbers, every bad input, a
# Prometheus killed mid-session, and that nothing is left running afterwards.
# Usage: query_tsdb_test.sh MT MT_SIMTRAIN PYTHON CHECKS_PY
# Env: MT_TSDB_TEST_PORT (first of 20 loopback ports, default 19780).
set -euo pipefail
. "$(dirname "$0")/stop_leftover_prometheus.sh"
mt=$1 sim=$2 py=$3 checks=$4
work=$(mktemp -d /tmp/mt-query-tsdb-it.XXXXXX)
export TMPDIR="$work/tmp"      # the private TSDB copies (and their Prometheus) live here
mkdir -p "$TMPDIR"
base=${MT_TSDB_TEST_PORT:-19780}
export MT_TSDB_PORTS="$base-$((base + 19))"
cleanup() {
  local rc=$?
  stop_leftover_prometheus "$work" || rc=1
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT
start=$(date +%s)
"$sim" --demo-init "$work/ws" --only 7877,8308,8309,8043,7938 > "$work/init.log" 2>&1 || { cat "$work/init.log"; exit 1; }
echo "workspace generated in $(( $(date +%s) - start )) s"
"$py" "$checks" "$mt" "$work/ws" "$work"
echo "PASS tools-query-tsdb"
