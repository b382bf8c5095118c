#!/usr/bin/env bash
# Finding 10c (issue #14): a plugin printing 16 MiB of unique series drove the exporter
# to ~1.9 GB RSS (the systemd unit's MemoryMax=128M would kill it). Now a plugin that
# prints 20 MiB of unique series leaves the exporter's peak RSS (VmHWM) under 100 MB, the
# first --plugin-max-bytes (1 MiB) / --plugin-max-series (10,000) are served, and the
# scrape and the log say what was dropped. Its `# STATE` last line still round-trips.
EXPORTER=$1
FIXTURES=$2
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../integration/exporter/lib.sh"

mkdir -p "$WORK/plugins"
cat > "$WORK/plugins/big_metrics_plugin.sh" <<SH
echo "state=[\${_PLUGIN_STATE-}]" > "$WORK/state.\$\$"
awk 'BEGIN { for (i = 0; i < 430000; i++) printf "hw_big_series{i=\"%07d\",pad=\"xxxxxxxxxx\"} %d\n", i, i }'
echo "# STATE run-done"
SH
start_exporter limits --root "$FIXTURES/minimal" --host node1 --plugin-dir "$WORK/plugins" --interval 30

# Wait for the first run to be served (generous: awk may share the CPU with a build).
for i in $(seq 600); do
  scrape > "$WORK/s.prom" 2>/dev/null && grep -q '^mt_exporter_plugin_runs_total{plugin="big",host="node1"} 1' "$WORK/s.prom" && break
  sleep 0.1
done
grep -q '^mt_exporter_plugin_runs_total{plugin="big",host="node1"} 1' "$WORK/s.prom" || fail "plugin run never finished"
for i in 1 2 3; do scrape > "$WORK/s.prom" || fail "scrape $i"; done

wrote=$(awk 'BEGIN { n = 0; for (i = 0; i < 430000; i++) n += length(sprintf("hw_big_series{i=\"%07d\",pad=\"xxxxxxxxxx\"} %d\n", i, i)); print n + length("# STATE run-done\n") }')
[ "$wrote" -gt $((20 * 1024 * 1024)) ] || fail "test plugin writes only $wrote bytes"
hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/${PIDS[0]}/status")
echo "VmHWM ${hwm} kB after a ${wrote}-byte plugin output"
[ "$hwm" -lt 102400 ] || fail "exporter peak RSS ${hwm} kB >= 100 MB"

served=$(grep -c '^hw_big_series{' "$WORK/s.prom" || true)
[ "$served" = 10000 ] || fail "served $served series, expected the first 10000"
grep -q '^hw_big_series{i="0000000",pad="xxxxxxxxxx"} 0$' "$WORK/s.prom" || fail "first series missing"
dropped_bytes=$(sed -n 's/^mt_exporter_plugin_dropped_bytes_total{plugin="big",host="node1"} //p' "$WORK/s.prom")
dropped_series=$(sed -n 's/^mt_exporter_plugin_dropped_series_total{plugin="big",host="node1"} //p' "$WORK/s.prom")
echo "dropped: $dropped_bytes bytes, $dropped_series series"
python3 -c "import sys; b, s, w = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]); sys.exit(0 if w - 1048576 <= b < w and s > 0 else 1)" \
  "${dropped_bytes:-0}" "${dropped_series:-0}" "$wrote" || fail "drops not reported (bytes=$dropped_bytes series=$dropped_series)"
grep -q 'big: wrote .* dropped (--plugin-max-bytes' "$WORK/limits.log" || fail "no log line for dropped bytes"
grep -q 'big: .* series dropped (--plugin-max-series)' "$WORK/limits.log" || fail "no log line for dropped series"
out=$(promtool check metrics < "$WORK/s.prom" 2>&1) || true
echo "$out" | grep -v -e '^hw_io_pressure_full_total_us ' -e '^hw_big_series no help text' | grep -q . && fail "promtool: $out"

# The STATE line at the very end of the cut output is still handed to the next run.
kill -HUP "${PIDS[0]}" 2>/dev/null || true
wait "${PIDS[0]}" || true
start_exporter limits2 --root "$FIXTURES/minimal" --host node1 --plugin-dir "$WORK/plugins" --interval 5 \
  --plugin-max-bytes 65536 --plugin-max-series 100
for i in $(seq 600); do grep -qs 'state=\[run-done\]' "$WORK"/state.* && break; sleep 0.1; done
grep -qs 'state=\[run-done\]' "$WORK"/state.* || fail "STATE of a cut output was lost"
scrape > "$WORK/s2.prom" || fail "scrape 2"
served=$(grep -c '^hw_big_series{' "$WORK/s2.prom" || true)
[ "$served" = 100 ] || fail "--plugin-max-series 100: served $served"
echo "plugin_output_limits: ok"
