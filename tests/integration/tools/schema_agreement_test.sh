#!/usr/bin/env bash
# Every tool's answers on the case-study workspace agree with its published schemas, judged by
# an independent validator (see schema_agreement_checks.py).
# Usage: schema_agreement_test.sh MT MT_SIMTRAIN PYTHON CHECKS_PY
# Env: MT_SCHEMA_TEST_PORT (first of 20 loopback ports for Prometheus, default 19860).
set -euo pipefail
. "$(dirname "$0")/stop_leftover_prometheus.sh"
mt=$1 sim=$2 py=$3 checks=$4
work=$(mktemp -d /tmp/mt-schema-it.XXXXXX)
export TMPDIR="$work/tmp"
mkdir -p "$TMPDIR"
base=${MT_SCHEMA_TEST_PORT:-19860}
export MT_TSDB_PORTS="$base-$((base + 19))"
cleanup() {
  local rc=$?
  stop_leftover_prometheus "$work" || rc=1
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT
"$sim" --demo-init "$work/ws" > "$work/init.log" 2>&1 || { cat "$work/init.log"; exit 1; }
"$py" "$checks" "$mt" "$work/ws"
echo "PASS tools-schema-agreement"
