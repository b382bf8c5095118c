#!/usr/bin/env bash
# query_tsdb on a live TSDB: an observed local run (mt-exporter + the job's own Prometheus)
# is queried while it trains; the answer must come from the job's Prometheus (never a
# second one on the live directory) and its tb_step must track the log.
#   query_live.sh MT_BIN
set -euo pipefail
mt=$(realpath "$1")
work=$(mktemp -d)
job=
cleanup() {
  [ -n "$job" ] && "$mt" cancel "$job" --workspace "$work/ws" >/dev/null 2>&1 || true
  sleep 1
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/ws"
out=$("$mt" submit llama2-70b --backend local --observe --yes --workspace "$work/ws" \
      --prometheus-ports 19880-19889 --exporter-port 19890 --scrape-interval 1 -- steps=400 2>&1)
job=$(echo "$out" | sed -n 's/^Submitted job \([^ ]*\) .*/\1/p')
[ -n "$job" ] || { echo "submit failed: $out"; exit 1; }
# Wait until it has trained a few steps with Prometheus scraping.
for _ in $(seq 120); do
  step=$("$mt" jobs --workspace "$work/ws" --json | python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"]; print(j[0]["last_step"] or 0 if j else 0)')
  [ "${step:-0}" -ge 8 ] && break
  sleep 0.5
done
sleep 3
answer=$("$mt" query "$job" --workspace "$work/ws" --discover --json)
echo "$answer" | python3 -c '
import json, sys
d = json.load(sys.stdin)
t = d["tsdb"]
checks = [
    ("answered from the job'"'"'s own Prometheus", t["source"] == "live" and "own Prometheus" in t["note"]),
    ("the data window is the live head, not empty", t["data_end"] > t["data_start"] > "2000"),
    ("tb_step tracks the log", any(f.get("verdict") == "match" for f in d["findings"])),
    ("hw_ and tb_ metrics present", "hw_" in json.dumps(d) and "tb_" in json.dumps(d)),
]
bad = [n for n, ok in checks if not ok]
for n, ok in checks:
    print(("ok   " if ok else "FAIL ") + n)
if bad:
    print(json.dumps(d, indent=1)[:3000])
print(f"query_tsdb live: {len(checks) - len(bad)} passed, {len(bad)} failed")
sys.exit(1 if bad else 0)
'
# Only the job's Prometheus runs on its TSDB directory.
n=$(pgrep -fc -- "--storage.tsdb.path=$work/ws" || true)
[ "$n" = 1 ] || { echo "FAIL: $n Prometheus processes on the live TSDB"; exit 1; }
