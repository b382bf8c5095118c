#!/usr/bin/env bash
# Builds mt-exporter (RelWithDebInfo) and runs the comparison against Debian's
# prometheus-node-exporter. Not part of ctest; see docs/benchmarks.md "## mt-exporter".
# usage: tests/bench/exporter/bench.sh [BUILD_DIR] [bench.py args...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=${1:-$root/build}
shift || true
command -v prometheus-node-exporter >/dev/null || { echo "install prometheus-node-exporter (scripts/packages.txt)" >&2; exit 1; }
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2 --target mt-exporter >/dev/null
exec python3 "$root/tests/bench/exporter/bench.py" "$build/exporter/mt-exporter" "$@"
