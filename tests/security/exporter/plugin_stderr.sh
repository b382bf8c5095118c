#!/usr/bin/env bash
# Finding 10b (issue #14): plugin stderr went straight into the exporter's log, which
# grew without bound. Now at most --plugin-max-stderr bytes per run are logged (then a
# marker line with the count dropped, also in mt_exporter_plugin_stderr_dropped_bytes_total),
# and the --log file is rotated to FILE.1 at --log-max-bytes, so the two stay bounded.
EXPORTER=$1
FIXTURES=$2
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../integration/exporter/lib.sh"

mkdir -p "$WORK/plugins"
# 4 MiB of stderr per run (lines of 1 KiB), then a metric.
cat > "$WORK/plugins/noisy_metrics_plugin.sh" <<'SH'
head -c 4194304 /dev/zero | tr '\0' 'e' | fold -w 1023 >&2
echo "hw_noisy 1"
SH

# 1) Default limits: after several runs the log holds a few KiB per run, not 4 MiB.
start_exporter noisy --root "$FIXTURES/minimal" --host node1 --plugin-dir "$WORK/plugins" --interval 1
for i in $(seq 300); do
  scrape > "$WORK/s.prom" 2>/dev/null && grep -Eq '^mt_exporter_plugin_runs_total\{plugin="noisy",host="node1"\} ([3-9]|[1-9][0-9])' "$WORK/s.prom" && break
  sleep 0.1
done
runs=$(sed -n 's/^mt_exporter_plugin_runs_total{plugin="noisy",host="node1"} //p' "$WORK/s.prom")
[ "${runs:-0}" -ge 3 ] || fail "plugin ran ${runs:-0} times"
size=$(stat -c %s "$WORK/noisy.log")
echo "log: $size bytes after $runs runs of 4 MiB of stderr each"
[ "$size" -lt $(( (runs + 2) * 16384 )) ] || fail "log grew to $size bytes after $runs runs"
grep -q 'noisy: stderr: eeee' "$WORK/noisy.log" || fail "plugin stderr not logged at all"
grep -q 'noisy: stderr: \[[0-9]* more bytes dropped; at most 4096 bytes per run are logged (--plugin-max-stderr)\]' "$WORK/noisy.log" ||
  fail "no truncation marker"
dropped=$(sed -n 's/^mt_exporter_plugin_stderr_dropped_bytes_total{plugin="noisy",host="node1"} //p' "$WORK/s.prom")
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 4194304 - 4096 else 1)" "${dropped:-0}" ||
  fail "stderr drops not counted: ${dropped:-none}"
grep -q '^hw_noisy 1$' "$WORK/s.prom" || fail "plugin metric missing"
kill -TERM "${PIDS[0]}"
wait "${PIDS[0]}" || fail "exporter exit status $?"

# 2) The log file as a whole: rotated at --log-max-bytes, FILE + FILE.1 stay bounded.
start_exporter rotate --root "$FIXTURES/minimal" --host node1 --plugin-dir "$WORK/plugins" --interval 0.2 \
  --plugin-max-stderr 8192 --log-max-bytes 65536
for i in $(seq 300); do grep -qs 'the previous part is in' "$WORK/rotate.log" && [ -s "$WORK/rotate.log.1" ] && break; sleep 0.1; done
sleep 2
size=$(stat -c %s "$WORK/rotate.log")
old=$(stat -c %s "$WORK/rotate.log.1" 2>/dev/null || echo 0)
echo "rotated log: $size + $old bytes"
grep -q "log reached 65536 bytes (--log-max-bytes); the previous part is in $WORK/rotate.log.1" "$WORK/rotate.log" ||
  fail "no rotation marker"
[ "$size" -le 65536 ] && [ "$old" -le 65536 ] || fail "log not bounded: $size + $old bytes"
scrape > /dev/null || fail "scrape after rotation"
echo "plugin_stderr: ok"
