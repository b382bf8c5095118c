#!/usr/bin/env bash
# A running mt-exporter with real plugins: a hung plugin never delays the native
# collectors, plugin output is merged into the scrape, invalid lines are counted in
# mt_exporter_plugin_errors_total and never reach the exposition, and SIGTERM stops the
# exporter together with the plugin it was running.
EXPORTER=$1
FIXTURES=$2
source "$(dirname "$0")/lib.sh"

mkdir -p "$WORK/plugins"
cat > "$WORK/plugins/a_good_metrics_plugin.sh" <<'SH'
echo "# HELP hw_plugin_demo a plugin gauge"
echo "# TYPE hw_plugin_demo gauge"
echo "hw_plugin_demo{host=\"$1\"} 5"
echo "not a metric line"
SH
cat > "$WORK/plugins/z_hung_metrics_plugin.sh" <<SH
echo \$\$ > "$WORK/hung.pid"
sleep 300
SH

start_exporter plugins --root "$FIXTURES/mi300x" --host node1 --plugin-dir "$WORK/plugins" --interval 60

# The hung plugin is now sleeping (60 s timeout); scrapes must answer at once anyway.
for i in $(seq 50); do [ -s "$WORK/hung.pid" ] && break; sleep 0.1; done
[ -s "$WORK/hung.pid" ] || fail "hung plugin never started"
curl -sf --max-time 3 "http://127.0.0.1:$EXPORTER_PORT/metrics" > "$WORK/s1.prom" || fail "scrape blocked while a plugin hangs"
grep -q '^hw_procs_running{host="node1"} 17$' "$WORK/s1.prom" || fail "native data missing while a plugin hangs"
grep -q '^hw_plugin_demo{host="node1"} 5$' "$WORK/s1.prom" || fail "plugin output missing"
grep -q '^mt_exporter_plugin_errors_total{plugin="a_good",host="node1"} 1$' "$WORK/s1.prom" || fail "invalid line not counted"
! grep -q 'not a metric' "$WORK/s1.prom" || fail "invalid line leaked into the scrape"
out=$(promtool check metrics < "$WORK/s1.prom" 2>&1) || true
echo "$out" | grep -v '^hw_io_pressure_full_total_us ' | grep -q . && fail "promtool: $out"

hung=$(cat "$WORK/hung.pid")
kill -0 "$hung" || fail "hung plugin should still be running"
kill -TERM "${PIDS[0]}"
for i in $(seq 100); do kill -0 "${PIDS[0]}" 2>/dev/null || break; sleep 0.05; done
kill -0 "${PIDS[0]}" 2>/dev/null && fail "exporter did not stop on SIGTERM"
wait "${PIDS[0]}" || fail "exporter exit status $?"
for i in $(seq 100); do
  st=$(awk '{print $3}' "/proc/$hung/stat" 2>/dev/null || echo gone)
  [ "$st" = gone ] || [ "$st" = Z ] && break
  sleep 0.05
done
[ "$st" = gone ] || [ "$st" = Z ] || fail "plugin process group survived the exporter"
echo "plugins_live: ok"
