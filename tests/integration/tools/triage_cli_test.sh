#!/usr/bin/env bash
# mt jobs / triage / log on a workspace built from the fixture logs, then the same tools
# through `mt serve` over stdio. Usage: triage_cli_test.sh MT PYTHON FIXTURE_DIR CHECKS_PY
set -euo pipefail
mt=$1 py=$2 fixtures=$3 checks=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$py" "$checks" build-workspace "$fixtures" "$work/ws"
"$py" "$checks" cli "$mt" "$work/ws"
"$py" "$checks" serve "$mt" "$work/ws"
echo "PASS tools-triage-cli-and-serve"
