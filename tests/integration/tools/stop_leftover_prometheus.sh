# Sourced by the tool integration tests that start Prometheus on private TSDB copies.
# stop_leftover_prometheus DIR: stops, by PID, any Prometheus still serving a TSDB under DIR
# (there should be none: mt stops its own) and returns 1 when it found one.
stop_leftover_prometheus() {
  local dir=$1 found=0 d
  for d in /proc/[0-9]*; do
    if { tr '\0' ' ' < "$d/cmdline"; } 2>/dev/null | grep -q -- "--storage.tsdb.path=$dir"; then
      echo "left running: ${d#/proc/}" >&2
      kill "${d#/proc/}" 2>/dev/null || true
      found=1
    fi
  done
  return $found
}
