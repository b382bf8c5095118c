#!/usr/bin/env python3
"""Reference figures ("oracle") of one JAX/XLA profile (<host>.xplane.pb), for the C++ xplane reader.

Decodes a serialized tensorflow.profiler.XSpace by hand (protobuf wire format: varints,
length-delimited fields, fixed64/fixed32; every length bounds-checked against its enclosing
message), turns each device plane into a list of Chrome-trace-like events, and runs
trace_oracle.py's analysis (analyse_doc) on each. Stdlib only; any python3. Prints ONE JSON
object (sorted keys; --indent N, default 2):

    {"file": NAME, "hostnames": [...], "planes": [...],
     "devices": [{"plane": "/device:GPU:0", "ordinal": 0, "analysis": {...trace_oracle output...}}]}

    xplane_oracle.py FILE.xplane.pb [--indent N] [--out FILE]

DEFINITIONS (xplane.proto, package tensorflow.profiler; field numbers in brackets)
  XSpace  planes[1] (XPlane), hostnames[4]; errors[2], warnings[3] ignored.
  XPlane  name[2], lines[3] (XLine), event_metadata[4] and stat_metadata[5]: maps, each entry a
          message {key[1], value[2]}; the value's name[2] is the name (a repeated key: last wins).
  XLine   id[1], name[2], timestamp_ns[3], events[4] (XEvent).
  XEvent  metadata_id[1], offset_ps[2], duration_ps[3], stats[4] (XStat); num_occurrences[5]
          ignored (an event without offset_ps starts at the line's start).
  XStat   metadata_id[1] (-> stat_metadata name); value: double[2], uint64[3], int64[4], str[5],
          bytes[6], ref[7] (the name of stat_metadata[ref]); the last value field wins (oneof).
  int64 fields are two's complement in a 10-byte varint. A wire fault (a varint past its message
  or longer than 64 bits, a length past its message, field number 0, wire type 3/4/6/7) is an
  error naming the byte offset (exit 1). Fields of an unexpected wire type are skipped.
  Strings are UTF-8, invalid bytes replaced.

Stats used: correlation_id (an integer: uint64 or int64 value), step_num (an integer), hlo_op
(str or ref).

Clock: base_ns = the minimum timestamp_ns over every line of every plane; an event's
  ts (µs) = (line.timestamp_ns - base_ns) / 1e3 + offset_ps / 1e6, dur (µs) = duration_ps / 1e6.
  Events with duration_ps < 0 go to the analysis as they are: it counts them in events.bad_x and
  drops them.

Device planes: name /device:GPU:<N> or /device:TPU:<N> (N = the ordinal), in ordinal order.
  Lines named as in DERIVED_LINES are views of the same work and skipped. Every event of every
  other line is GPU activity: cat gpu_memcpy when its name starts with Memcpy/memcpy,
  gpu_memset for Memset/memset, else kernel; pid = the ordinal, tid = the line id;
  args.correlation = its correlation_id stat; args["Collective name"] = the collective word of
  its hlo_op stat: the letters before the first '.', lower-cased, starting with one of
  COLLECTIVE_WORDS (all-reduce-start.12 -> allreduce), that word.
Other planes (host): every event with a step_num stat is a step mark (first per step_num wins,
  in plane, line, event order) -> ProfilerStep#<step_num>, cat user_annotation; otherwise an
  event with a correlation_id stat is a launch -> its own name, cat cuda_runtime,
  args.correlation. Host events are added to every device's event list (after the device's own
  events: launches, then steps).
Without host step marks, a device's steps are its first non-empty "Steps" line's events
  (ProfilerStep#<event name> when the name is all digits, else ProfilerStep#<index in the
  line>), else the events of its first non-empty "XLA Modules" line that belong to the module
  (the event name up to the first '(') with the largest summed duration_ps (ties: the smaller
  name), ProfilerStep#<index among them>.
Each device's list then goes through trace_oracle.analyse_doc (format "xplane", no metadata:
  distributedInfo absent, so collectives have group_size null and no busbw without a Group
  size), file name "<file>:<plane>".
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trace_oracle  # noqa: E402

DERIVED_LINES = {"XLA Ops", "XLA Modules", "Steps", "Framework Name Scope", "Framework Ops",
                 "Source code", "XLA TraceMe", "Launch Stats", "TensorFlow Name Scope",
                 "TensorFlow Ops", "Async XLA Ops"}
COLLECTIVE_WORDS = ("allreduce", "allgather", "reducescatter", "alltoall", "collectivepermute",
                    "collectivebroadcast")
DEVICE_RE = re.compile(r"^/device:(?:GPU|TPU):(\d+)")
DIGITS_RE = re.compile(r"^[0-9]+$")


class WireError(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# wire format
# ---------------------------------------------------------------------------------------------
def varint(buf, pos, end):
    out = 0
    shift = 0
    while True:
        if pos >= end:
            raise WireError("a varint runs past the end of its message at byte %d" % pos)
        b = buf[pos]
        if shift == 63 and b > 1:
            raise WireError("a varint longer than 64 bits at byte %d" % pos)
        pos += 1
        out |= (b & 0x7F) << shift
        if b < 0x80:
            return out, pos
        shift += 7
        if shift >= 70:
            raise WireError("a varint longer than 10 bytes at byte %d" % pos)


def s64(v):
    return v - (1 << 64) if v >= (1 << 63) else v


def fields(buf, pos, end):
    """[(field, wire_type, value)] of the message in buf[pos:end]: value an int for wire types
    0, 1, 5 and a (start, end) pair for 2."""
    out = []
    while pos < end:
        at = pos
        key, pos = varint(buf, pos, end)
        f, wt = key >> 3, key & 7
        if f == 0:
            raise WireError("field number 0 at byte %d" % at)
        if wt == 0:
            v, pos = varint(buf, pos, end)
        elif wt == 1:
            if end - pos < 8:
                raise WireError("a fixed64 runs past the end of its message at byte %d" % pos)
            v = int.from_bytes(buf[pos:pos + 8], "little")
            pos += 8
        elif wt == 5:
            if end - pos < 4:
                raise WireError("a fixed32 runs past the end of its message at byte %d" % pos)
            v = int.from_bytes(buf[pos:pos + 4], "little")
            pos += 4
        elif wt == 2:
            n, pos = varint(buf, pos, end)
            if n > end - pos:
                raise WireError("a field of %d bytes runs past the end of its message at byte %d" % (n, pos))
            v = (pos, pos + n)
            pos += n
        else:
            raise WireError("wire type %d (not used by XSpace) at byte %d" % (wt, at))
        out.append((f, wt, v))
    return out


def text(buf, rng):
    return bytes(buf[rng[0]:rng[1]]).decode("utf-8", errors="replace")


# ---------------------------------------------------------------------------------------------
# XSpace
# ---------------------------------------------------------------------------------------------
class Event(object):
    __slots__ = ("metadata_id", "offset_ps", "duration_ps", "stats")

    def __init__(self):
        self.metadata_id = self.offset_ps = self.duration_ps = 0
        self.stats = {}  # stat name -> value (last wins)


class Line(object):
    __slots__ = ("id", "name", "timestamp_ns", "events")

    def __init__(self):
        self.id = self.timestamp_ns = 0
        self.name = ""
        self.events = []


class Plane(object):
    def __init__(self):
        self.name = ""
        self.lines = []
        self.event_names = {}
        self.stat_names = {}


def metadata_map(buf, rng, names):
    key, name = 0, ""
    for f, wt, v in fields(buf, *rng):
        if f == 1 and wt == 0:
            key = s64(v)
        elif f == 2 and wt == 2:
            for mf, mwt, mv in fields(buf, *v):
                if mf == 2 and mwt == 2:
                    name = text(buf, mv)
    names[key] = name


def read_stat(buf, rng, plane, ev):
    mid, val = 0, None
    for f, wt, v in fields(buf, *rng):
        if f == 1 and wt == 0:
            mid = s64(v)
        elif f == 2 and wt == 1:
            val = ("double", v)
        elif f == 3 and wt == 0:
            val = ("int", v)
        elif f == 4 and wt == 0:
            val = ("int", s64(v))
        elif f == 5 and wt == 2:
            val = ("str", text(buf, v))
        elif f == 6 and wt == 2:
            val = ("bytes", v)
        elif f == 7 and wt == 0:
            val = ("ref", v)
    name = plane.stat_names.get(mid)
    if name is None or val is None:
        return
    if val[0] == "ref":
        val = ("str", plane.stat_names.get(s64(val[1]), ""))
    ev.stats[name] = val


def read_plane(buf, rng):
    p = Plane()
    line_rngs = []
    for f, wt, v in fields(buf, *rng):
        if f == 2 and wt == 2:
            p.name = text(buf, v)
        elif f == 3 and wt == 2:
            line_rngs.append(v)
        elif f == 4 and wt == 2:
            metadata_map(buf, v, p.event_names)
        elif f == 5 and wt == 2:
            metadata_map(buf, v, p.stat_names)
    for lr in line_rngs:
        l = Line()
        for f, wt, v in fields(buf, *lr):
            if f == 1 and wt == 0:
                l.id = s64(v)
            elif f == 2 and wt == 2:
                l.name = text(buf, v)
            elif f == 3 and wt == 0:
                l.timestamp_ns = s64(v)
            elif f == 4 and wt == 2:
                ev = Event()
                for ef, ewt, ev_v in fields(buf, *v):
                    if ef == 1 and ewt == 0:
                        ev.metadata_id = s64(ev_v)
                    elif ef == 2 and ewt == 0:
                        ev.offset_ps = s64(ev_v)
                    elif ef == 3 and ewt == 0:
                        ev.duration_ps = s64(ev_v)
                    elif ef == 4 and ewt == 2:
                        read_stat(buf, ev_v, p, ev)
                l.events.append(ev)
        p.lines.append(l)
    return p


def read_space(buf):
    planes, hostnames = [], []
    for f, wt, v in fields(buf, 0, len(buf)):
        if f == 1 and wt == 2:
            planes.append(read_plane(buf, v))
        elif f == 4 and wt == 2:
            hostnames.append(text(buf, v))
    if not planes:
        raise WireError("no XPlane in %d bytes" % len(buf))
    return planes, hostnames


# ---------------------------------------------------------------------------------------------
# events
# ---------------------------------------------------------------------------------------------
def int_stat(ev, name):
    v = ev.stats.get(name)
    return v[1] if v is not None and v[0] == "int" else None


def collective_word(hlo_op):
    head = hlo_op.split(".", 1)[0].lower()
    letters = "".join(c for c in head if "a" <= c <= "z")
    for w in COLLECTIVE_WORDS:
        if letters.startswith(w):
            return w
    return None


def ordinal_of(plane_name):
    m = DEVICE_RE.match(plane_name)
    return int(m.group(1)) if m else None


def build(planes):
    """[(plane name, ordinal, raw event list)] per device plane, in ordinal order."""
    base_ns = min((l.timestamp_ns for p in planes for l in p.lines), default=0)

    def event(line, ev, name, cat, pid, args):
        return {"ph": "X", "name": name, "cat": cat, "pid": pid, "tid": line.id,
                "ts": (line.timestamp_ns - base_ns) / 1e3 + ev.offset_ps / 1e6,
                "dur": ev.duration_ps / 1e6, "args": args}

    host_steps, launches, seen = [], [], set()
    for p in planes:
        if ordinal_of(p.name) is not None:
            continue
        for l in p.lines:
            for ev in l.events:
                step = int_stat(ev, "step_num")
                corr = int_stat(ev, "correlation_id")
                if step is not None:
                    if step not in seen:
                        seen.add(step)
                        host_steps.append(event(l, ev, "ProfilerStep#%d" % step, "user_annotation",
                                                p.name, {}))
                elif corr is not None:
                    launches.append(event(l, ev, p.event_names.get(ev.metadata_id, ""),
                                          "cuda_runtime", p.name, {"correlation": corr}))

    devices = []
    for p in planes:
        ordinal = ordinal_of(p.name)
        if ordinal is None:
            continue
        raw = []
        for l in p.lines:
            if l.name in DERIVED_LINES:
                continue
            for ev in l.events:
                name = p.event_names.get(ev.metadata_id, "")
                if name.startswith(("Memcpy", "memcpy")):
                    cat = "gpu_memcpy"
                elif name.startswith(("Memset", "memset")):
                    cat = "gpu_memset"
                else:
                    cat = "kernel"
                args = {}
                corr = int_stat(ev, "correlation_id")
                if corr is not None:
                    args["correlation"] = corr
                hlo = ev.stats.get("hlo_op")
                if hlo is not None and hlo[0] == "str":
                    word = collective_word(hlo[1])
                    if word:
                        args["Collective name"] = word
                raw.append(event(l, ev, name, cat, ordinal, args))
        raw.extend(launches)
        if host_steps:
            raw.extend(host_steps)
        else:
            raw.extend(device_steps(p, event))
        devices.append((p.name, ordinal, raw))
    devices.sort(key=lambda d: d[1])
    return devices


def device_steps(p, event):
    steps = next((l for l in p.lines if l.name == "Steps" and l.events), None)
    out = []
    if steps is not None:
        for k, ev in enumerate(steps.events):
            n = p.event_names.get(ev.metadata_id, "")
            out.append(event(steps, ev, "ProfilerStep#" + (n if DIGITS_RE.match(n) else str(k)),
                             "user_annotation", p.name, {}))
        return out
    modules = next((l for l in p.lines if l.name == "XLA Modules" and l.events), None)
    if modules is None:
        return out

    def module(ev):
        return p.event_names.get(ev.metadata_id, "").split("(", 1)[0]
    total = {}
    for ev in modules.events:
        total[module(ev)] = total.get(module(ev), 0) + ev.duration_ps
    best = min(total, key=lambda m: (-total[m], m))
    for k, ev in enumerate(e for e in modules.events if module(e) == best):
        out.append(event(modules, ev, "ProfilerStep#%d" % k, "user_annotation", p.name, {}))
    return out


def analyse(path):
    with open(path, "rb") as f:
        buf = f.read()
    if not buf:
        raise WireError("the file is empty")
    planes, hostnames = read_space(buf)
    base = os.path.basename(path)
    devices = []
    for plane, ordinal, raw in build(planes):
        devices.append({"plane": plane, "ordinal": ordinal,
                        "analysis": trace_oracle.analyse_doc({}, raw, "xplane", "%s:%s" % (base, plane))})
    return {"file": base, "hostnames": hostnames, "planes": [p.name for p in planes],
            "devices": devices}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("xplane")
    ap.add_argument("--indent", type=int, default=2)
    ap.add_argument("--out", help="write the JSON here instead of stdout")
    a = ap.parse_args()
    try:
        res = analyse(a.xplane)
    except WireError as e:
        sys.stderr.write("%s: not a readable XSpace: %s\n" % (a.xplane, e))
        return 1
    out = json.dumps(res, indent=a.indent, sort_keys=True) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(out)
    else:
        sys.stdout.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
