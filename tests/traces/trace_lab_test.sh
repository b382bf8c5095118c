#!/usr/bin/env bash
# ctest trace-lab: real torch.profiler traces recorded now (tests/traces/profile_lab.py:
# DDP over gloo on 3 ranks with Debian's torch), read by `mt trace`:
#   1. a run with rank 1 slowed by 200 ms of extra compute a step, against a run with nobody
#      slowed: rank 1 is named the straggler, and on ranks 0 and 2 the exposed-communication
#      share rises by more than 25 points (they wait for rank 1 in the all-reduce);
#   2. the same slow rank made of a sleep (no op at all in its trace): still rank 1;
#   3. bad traces (truncated gzip, wrong types, a directory without traces) fail with exit 1
#      and a message naming the fault.
#   trace_lab_test.sh MT PYTHON
set -uo pipefail
mt=$1 py=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/mt-trace-lab.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

"$py" "$here/profile_lab.py" --out "$work/none" > "$work/none.log" 2>&1 || { cat "$work/none.log"; exit 1; }
"$py" "$here/profile_lab.py" --out "$work/slow1" --slow-rank 1 --slow-ms 200 > "$work/slow1.log" 2>&1 || { cat "$work/slow1.log"; exit 1; }
"$py" "$here/profile_lab.py" --out "$work/sleep1" --slow-rank 1 --slow-ms 200 --slow-kind sleep > "$work/sleep1.log" 2>&1 || { cat "$work/sleep1.log"; exit 1; }

"$mt" trace "$work/slow1" --base "$work/none" --json > "$work/slow1.json" || fail=1
"$mt" trace "$work/sleep1" --json > "$work/sleep1.json" || fail=1
"$mt" trace "$work/slow1" --base "$work/none"      # the human form, for the log
"$py" - "$work/slow1.json" "$work/sleep1.json" <<'PY' || fail=1
import json, sys
slow, sleep = (json.load(open(p)) for p in sys.argv[1:3])
ok = True
def expect(cond, what):
    global ok
    print(("ok   " if cond else "FAIL ") + what)
    ok &= bool(cond)
r = slow["ranks"]
expect(r["verdict"] == "straggler" and r["straggler"] == 1, "compute-slowed run: straggler rank 1 (%s %s: %s)" % (r["verdict"], r["straggler"], r["why"]))

def exposed(analysis):
    """Mean exposed-communication share over the steady steps whose gloo span was recorded: the
    last step's span can race the profiler's stop and be lost (tests/traces/README.md, pitfall
    15), which the trace itself reports in checks.steps_without_comm."""
    lost = set(analysis["checks"]["steps_without_comm"])
    steady = set(analysis["steady"]["steps"])
    vals = [p["shares"]["exposed_comm"] for p in analysis["per_step"] if p["name"] in steady and p["name"] not in lost and p["shares"]]
    return sum(vals) / len(vals) if vals else None

for d in slow["diffs"]:
    if d["rank"] != 1:
        a, b = exposed(slow["base"][d["rank"]]), exposed(slow["traces"][d["rank"]])
        expect(a is not None and b is not None and b > a + 0.25,
               "rank %d exposed-communication share rises %s -> %s (steps with their gloo span)" % (d["rank"], a, b))
    else:
        expect(d["ops"][0]["name"] == "slow_rank_extra_compute", "rank 1's most changed op is the extra compute (%s)" % d["ops"][0]["name"])
s = sleep["ranks"]
expect(s["verdict"] == "straggler" and s["straggler"] == 1, "sleep-slowed run: straggler rank 1 (%s %s: %s)" % (s["verdict"], s["straggler"], s["why"]))
sys.exit(0 if ok else 1)
PY

# Bad input: a specific message and exit 1, never a crash.
head -c 2000 "$work/slow1/rank1.pt.trace.json.gz" > "$work/cut.pt.trace.json.gz"
echo '{"traceEvents": {"ph": "X"}}' > "$work/types.pt.trace.json"
mkdir -p "$work/empty"
for c in "cut.pt.trace.json.gz|gzip data is corrupt or truncated" "types.pt.trace.json|not an array" "empty|holds no profiler trace"; do
  f=${c%%|*} want=${c#*|}
  out=$("$mt" trace "$work/$f" 2>&1); rc=$?
  check "bad input $f: exit 1 and '$want'" '[ $rc = 1 ] && grep -q "$want" <<<"$out"'
done
exit $fail
