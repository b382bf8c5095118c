#!/usr/bin/env python3
"""Write a big, realistic PyTorch/Kineto trace by repeating the steps of a real one.

    make_big_trace.py --out PATH [--size-mib 1024] [--src TRACE] [--gzip] [--gap-us 1000]

The source (default: the real A100 trace trace_diff_control_control, 6 ProfilerSteps, NCCL)
is loaded once; then copy k = 0, 1, 2, ... of its events is written with
  * every `ts` shifted by k x (source span + gap), so copies follow each other in time;
  * `ProfilerStep#N` renumbered N + k x (number range of the source's steps): unique, increasing;
  * `args.correlation`, `args["External id"]` and flow `id` offset by k x (max id + 1), so every
    launch link (correlation, flow, External id) stays unique and points inside its own copy;
  * `M` (metadata) events only in copy 0: a real long trace names its processes once.
Whole copies only: it stops once the uncompressed bytes written reach the target, so the file
is at most one copy (~33 MiB) above it. The other top-level keys (distributedInfo,
deviceProperties, ...) come AFTER traceEvents, as in real traces (a one-pass reader cannot
see them first). Events are copied as the source's own text (Kineto's multi-line layout),
with only the numbers above rewritten, so bytes per event stay what a real trace has.

Prints {copies, events, steps, ...} as JSON and writes the same beside the output, as
PATH.meta.json (bench_trace.py reads it). Deterministic: same source and size, same bytes
(gzip with mtime 0). Stdlib only.
"""
import argparse
import decimal
import gzip
import json
import os
import re
import sys

DEFAULT_SRC = "/work/shared/corpus/traces/kineto/trace_diff_control_control.json.gz"
NUM = r"(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
# The rewritten numbers. A JSON key with an unescaped quote cannot sit inside a string, so
# these match keys only; the counts are checked against the parsed events below anyway.
PAT = re.compile(r'("ts": )' + NUM + r'|("correlation": )' + NUM + r'|("External id": )' + NUM +
                 r'|("id": )' + NUM + r'|(ProfilerStep#)(\d+)')


def load_text(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return f.read()


def split_events(text):
    """The parsed top level, and each event's (start, end) in the text: the copies reuse the
    source's own bytes, so the layout and size per event are a real trace's."""
    top = json.loads(text)
    if not isinstance(top, dict) or not isinstance(top.get("traceEvents"), list):
        sys.exit("source is not a Kineto trace (an object with traceEvents)")
    m = re.search(r'"traceEvents"\s*:\s*\[', text)
    dec = json.JSONDecoder()
    pos, spans, ws = m.end(), [], re.compile(r"\s*")
    while True:
        pos = ws.match(text, pos).end()
        if text[pos] == "]":
            break
        _, end = dec.raw_decode(text, pos)
        spans.append((pos, end))
        pos = ws.match(text, end).end()
        if text[pos] == ",":
            pos += 1
    if len(spans) != len(top["traceEvents"]):
        sys.exit("could not locate every event in the source text")
    return top, spans


def numeric(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--size-mib", type=float, default=1024)
    ap.add_argument("--src", default=DEFAULT_SRC)
    ap.add_argument("--gzip", action="store_true", help="gzip the output (target = uncompressed bytes)")
    ap.add_argument("--gap-us", type=int, default=1000, help="idle time between two copies")
    a = ap.parse_args()

    text = load_text(a.src)
    top, spans = split_events(text)
    evs = top["traceEvents"]

    # Shifts, from the parsed events.
    tss = [(e["ts"], e.get("dur", 0) if numeric(e.get("dur")) else 0) for e in evs if numeric(e.get("ts"))]
    t0 = min(t for t, _ in tss)
    span = max(t + d for t, d in tss) - t0
    ts_shift = int(-(-span // 1)) + a.gap_us            # integer µs: exact on int and float ts
    ids, want = [], {"ts": 0, "correlation": 0, "External id": 0, "id": 0, "step": 0}
    steps = []
    for e in evs:
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        want["ts"] += "ts" in e
        for k in ("correlation", "External id"):
            if k in args:
                want[k] += 1
                ids.append(args[k])
        if "id" in e:
            want["id"] += 1
            ids.append(e["id"])
        name = e.get("name")
        if isinstance(name, str) and "ProfilerStep#" in name:
            want["step"] += 1
            steps.append(int(re.search(r"ProfilerStep#(\d+)", name).group(1)))
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        sys.exit("non-integer correlation / External id / flow id in the source")
    id_off = max(ids, default=0) + 1
    step_off = (max(steps) - min(steps) + 1) if steps else 0
    # Steps a reader should count: user_annotation / cpu_op ProfilerSteps, first of each name.
    cpu_steps = sorted({int(re.search(r"#(\d+)", e["name"]).group(1)) for e in evs
                        if isinstance(e.get("name"), str) and e["name"].startswith("ProfilerStep#")
                        and str(e.get("cat", "")).lower() in ("user_annotation", "cpu_op")})

    full = ",\n  ".join(text[s:t] for s, t in spans)
    rest_idx = [i for i, e in enumerate(evs) if e.get("ph") != "M"]
    rest = ",\n  ".join(text[spans[i][0]:spans[i][1]] for i in rest_idx)
    got = {"ts": 0, "correlation": 0, "External id": 0, "id": 0, "step": 0}
    for m in PAT.finditer(full):
        got[("ts", "correlation", "External id", "id", "step")[(m.lastindex - 1) // 2]] += 1
    if got != want:
        sys.exit(f"the text's numbers do not match the parsed events: {got} vs {want}")

    # Cut the copy text once into literal pieces and the numbers between them; a copy is then
    # the pieces interleaved with shifted numbers (a regex callback per number is 50x slower).
    pieces, kinds, vals, pos = [], [], [], 0
    for m in PAT.finditer(rest):
        g = m.lastindex                   # the number's group; the key is the group before it
        pieces.append(rest[pos:m.start(g)])
        kinds.append((g - 1) // 2)
        v = m.group(g)
        vals.append(int(v) if v.lstrip("-").isdigit() else decimal.Decimal(v))   # exact
        pos = m.end(g)
    pieces.append(rest[pos:])

    def copy_text(k):
        if k == 0:
            return full
        offs = (k * ts_shift, k * id_off, k * id_off, k * id_off, k * step_off)
        parts = [None] * (2 * len(vals) + 1)
        parts[0::2] = pieces
        parts[1::2] = [str(v + offs[t]) for v, t in zip(vals, kinds)]
        return "".join(parts)

    target = int(a.size_mib * 2**20)
    raw = open(a.out, "wb")
    out = gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0) if a.gzip else raw
    written = copies = events = 0

    def put(s):
        nonlocal written
        b = s.encode("utf-8")
        out.write(b)
        written += len(b)

    put('{\n  "traceEvents": [\n  ')
    while copies == 0 or written < target:
        if copies:
            put(",\n  ")
        put(copy_text(copies))
        events += len(evs) if copies == 0 else len(rest_idx)
        copies += 1
    put("\n  ]")
    for key, val in top.items():
        if key != "traceEvents":
            put(",\n  " + json.dumps(key) + ": " + json.dumps(val, indent=2).replace("\n", "\n  "))
    put("\n}\n")
    out.close()
    if out is not raw:
        raw.close()

    meta = {"source": os.path.basename(a.src), "copies": copies, "events": events,
            "steps": copies * len(cpu_steps),
            "first_step": f"ProfilerStep#{cpu_steps[0]}" if cpu_steps else None,
            "last_step": f"ProfilerStep#{cpu_steps[-1] + (copies - 1) * step_off}" if cpu_steps else None,
            "bytes_uncompressed": written, "bytes_file": os.path.getsize(a.out), "gzip": a.gzip,
            "ts_shift_us": ts_shift, "id_offset": id_off}
    with open(a.out + ".meta.json", "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    print(json.dumps(meta))


if __name__ == "__main__":
    main()
