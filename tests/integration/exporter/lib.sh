# Shared helpers for the exporter integration tests (sourced). Everything started is
# tracked by PID and killed by the EXIT trap, even on failure.
set -euo pipefail

WORK=$(mktemp -d /tmp/mt-exporter-it.XXXXXX)
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ -n "${MT_TEST_LOG_DIR:-}" ] && [ -d "$MT_TEST_LOG_DIR" ]; then
    cp "$WORK"/*.log "$MT_TEST_LOG_DIR/" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# start_exporter NAME ARGS... : starts mt-exporter on a free loopback port (port 0, read
# back from its log) and sets EXPORTER_PORT.
start_exporter() {
  local name=$1; shift
  local log="$WORK/$name.log"
  "$EXPORTER" --listen 127.0.0.1:0 --log "$log" "$@" &
  PIDS+=($!)
  local i
  for i in $(seq 100); do
    EXPORTER_PORT=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$log" 2>/dev/null | head -1 | sed 's/.*://') || true
    [ -n "${EXPORTER_PORT:-}" ] && return 0
    sleep 0.05
  done
  cat "$log" >&2 || true
  fail "mt-exporter did not start"
}

scrape() { curl -sf --max-time 10 "http://127.0.0.1:$EXPORTER_PORT/metrics"; }
