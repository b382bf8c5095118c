#!/usr/bin/env bash
# ctest xplane-oracle: `mt trace` on the JAX/XLA profiles (<host>.xplane.pb) mt-simtrain writes,
# against tests/traces/xplane_oracle.py (an independent stdlib decoder of the XSpace wire format
# feeding trace_oracle.py's analysis):
#   a. configs/scenarios/8104-llama405b-fp8-healthy.yaml as is: every device's mode, links,
#      per_step, steady, top_kernels, collectives and checks equal the oracle's; verdict balanced;
#   b. the same job as 8105 with profile.slow_gpu 3, slow_pct 30: the same comparison, and
#      GPU 3 is named the straggler.
# Times compare within 2e-3 µs, shares and GB/s within 2e-6 (the oracle rounds to 3 and 6 places).
#   xplane_oracle_test.sh MT SIM PYTHON
set -uo pipefail
mt=$1 sim=$2 py=$3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d /tmp/mt-xplane-oracle.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail=0

scenario=$root/configs/scenarios/8104-llama405b-fp8-healthy.yaml
sed -e 's/^\(  id: \)"8104"/\1"8105"/' \
    -e 's/^profile:$/profile:\n  slow_gpu: 3\n  slow_pct: 30/' "$scenario" > "$work/8105-slow-gpu3.yaml"
if ! grep -q '^  id: "8105"' "$work/8105-slow-gpu3.yaml" || ! grep -q '^  slow_gpu: 3' "$work/8105-slow-gpu3.yaml"; then
  echo "FAIL could not derive the slow-GPU scenario from $scenario"; exit 1
fi

for c in "healthy|$scenario|balanced|" "slow|$work/8105-slow-gpu3.yaml|straggler|3"; do
  IFS='|' read -r tag file verdict straggler <<<"$c"
  mkdir -p "$work/$tag"
  "$sim" --scenario "$file" --workspace "$work/$tag" --no-tsdb > "$work/$tag.sim.log" 2>&1 \
    || { cat "$work/$tag.sim.log"; echo "FAIL $tag: mt-simtrain"; fail=1; continue; }
  mapfile -t pbs < <(find "$work/$tag" -path '*/plugins/profile/*/*.xplane.pb' | sort)
  if [ ${#pbs[@]} = 0 ]; then echo "FAIL $tag: no */plugins/profile/*/*.xplane.pb written"; fail=1; continue; fi
  for pb in "${pbs[@]}"; do
    out=$work/$tag.$(basename "$pb")
    "$mt" trace "$pb" --json > "$out.mt.json" || { echo "FAIL $tag: mt trace $pb"; fail=1; continue; }
    "$py" "$here/xplane_oracle.py" "$pb" --out "$out.oracle.json" || { echo "FAIL $tag: xplane_oracle.py $pb"; fail=1; continue; }
    "$py" - "$tag" "$out.mt.json" "$out.oracle.json" "$verdict" "$straggler" <<'PY' || fail=1
import json, sys
tag, mt_path, or_path, verdict, straggler = sys.argv[1:6]
mt, orc = json.load(open(mt_path)), json.load(open(or_path))
FIELDS = ("mode", "links", "per_step", "steady", "top_kernels", "collectives", "checks")
US_TOL, SHARE_TOL = 2e-3, 2e-6
ok = True

def expect(cond, what):
    global ok
    print(("ok   " if cond else "FAIL ") + what)
    ok &= bool(cond)

def tol_of(path):
    # shares and bandwidths to 6 places, everything else (µs) to 3
    return SHARE_TOL if ("share" in path or "GBps" in path) else US_TOL

def diff(a, b, path, out):
    """Differences between mt's value a and the oracle's b (at most 5 reported)."""
    if isinstance(b, bool) or isinstance(a, bool):
        if a != b:
            out.append("%s: mt %r, oracle %r" % (path, a, b))
    elif isinstance(b, (int, float)) and isinstance(a, (int, float)):
        if abs(a - b) > tol_of(path):
            out.append("%s: mt %r, oracle %r" % (path, a, b))
    elif isinstance(b, dict) and isinstance(a, dict):
        if set(a) != set(b):
            out.append("%s: keys mt-only %s, oracle-only %s" % (path, sorted(set(a) - set(b)), sorted(set(b) - set(a))))
        for k in sorted(set(a) & set(b)):
            diff(a[k], b[k], path + "." + k, out)
    elif isinstance(b, list) and isinstance(a, list):
        if len(a) != len(b):
            out.append("%s: mt %d entries, oracle %d" % (path, len(a), len(b)))
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, "%s[%d]" % (path, i), out)
    elif a != b:
        out.append("%s: mt %r, oracle %r" % (path, a, b))

traces, devices = mt.get("traces", []), orc["devices"]
expect(len(traces) == len(devices) and len(devices) > 0,
       "%s %s: mt reads %d device traces, the oracle %d" % (tag, orc["file"], len(traces), len(devices)))
for t, d in zip(traces, devices):
    a = d["analysis"]
    for field in FIELDS:
        out = []
        diff(t.get(field), a.get(field), field, out)
        expect(not out, "%s %s %s%s" % (tag, d["plane"], field, "" if not out else ": " + "; ".join(out[:5]) +
                                        (" (+%d more)" % (len(out) - 5) if len(out) > 5 else "")))
r = mt.get("ranks") or {}
if straggler:
    expect(r.get("verdict") == verdict and r.get("straggler") == int(straggler),
           "%s: verdict %s, straggler %s (want %s, %s): %s" % (tag, r.get("verdict"), r.get("straggler"), verdict, straggler, r.get("why")))
else:
    expect(r.get("verdict") == verdict, "%s: verdict %s (want %s): %s" % (tag, r.get("verdict"), verdict, r.get("why")))
sys.exit(0 if ok else 1)
PY
  done
done
exit $fail
