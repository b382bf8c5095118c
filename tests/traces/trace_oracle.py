#!/usr/bin/env python3
"""Reference figures ("oracle") of one PyTorch profiler trace, for the C++ trace reader.

Reads a PyTorch / Kineto Chrome trace (.json or .json.gz, gzip detected by its magic bytes,
not by the name) and prints ONE JSON object (sorted keys; --indent N, default 2). It loads the
whole file with json.load: it is a reference, not the product. Stdlib only; any python3.

    trace_oracle.py TRACE [--indent N] [--out FILE]

DEFINITIONS (every figure the C++ must reproduce; times are the trace's µs, as floats,
rounded to 3 decimals on output; shares are rounded to 6 decimals)

Input forms
  * kineto:  a JSON object with "traceEvents" (a list) and optional "distributedInfo",
             "deviceProperties", "displayTimeUnit", "baseTimeNanoseconds", ... . "ts"/"dur"
             are µs whatever "displayTimeUnit" says (it is a viewer hint: "ms" in the corpus).
  * legacy:  a bare JSON array of events, what torch.autograd.profiler writes when torch was
             built without Kineto (Debian's python3-torch 1.13): no "cat" at all, pid the string
             "CPU functions", tid a small thread index, ts relative to the profiler's start,
             "args" empty. Every "X" event of a legacy trace is a CPU op.
  An event counts only if it is a JSON object. "Activity" below means ph "X" events whose ts
  and dur are numbers with dur >= 0; X events with a missing/non-numeric ts or dur, or dur < 0,
  are counted in events.bad_x and take no further part.

Categories (cat compared lower-case)
  GPU activity:  kernel -> kernel; gpu_memcpy or memcpy -> memcpy; gpu_memset or memset -> memset
  launches:      cuda_runtime, cuda_driver, runtime (HIP launches are cat cuda_runtime too)
  CPU ops:       cpu_op, operator (and every X event of a legacy trace)
  annotations:   user_annotation (CPU side), gpu_user_annotation (GPU side)
  communication kernel: a kernel whose name matches /nccl|rccl/i; every other kernel is compute.

events
  by_cat (missing cat -> "(none)"), by_ph (missing -> "(none)"), total, bad_x, format,
  distributedInfo {rank, world_size, backend} (only the keys present; null if absent),
  deviceProperties (the list's length; 0 if absent), displayTimeUnit, has_baseTimeNanoseconds.

steps
  cpu: X events named exactly ProfilerStep#<N> with cat user_annotation or cpu_op (or a legacy
  trace's), sorted by ts; a name seen twice keeps its first occurrence (events.duplicate_steps
  counts the rest). Each: name, ts, dur, end = ts + dur. gpu: the same names with cat
  gpu_user_annotation, listed but not used for the per-step figures.
  checks.cpu_step_overlaps: consecutive cpu steps where the next starts before this one ends.

mode
  "gpu" when the trace has at least one GPU activity event, else "cpu" (cat
  cuda_profiler_range, CUPTI profiler ranges named like kernels, is not GPU activity).

Linking a GPU event to its launch (mode gpu)
  1. args.correlation equal to the args.correlation of a launch event (first such launch kept);
  2. else a flow event (ph s/f/t) at the GPU event's exact (pid, tid, ts): its id is taken as the
     correlation (in every corpus trace flow ids equal correlation ids) and looked up as in 1;
  3. else args["External id"] equal to the args["External id"] of a CPU op or user_annotation
     (newer Kineto puts the launching op's External id on the kernel).
  The launch time is that event's ts. links.share = linked GPU events / GPU events.
  If links.share >= 0.5 the trace "has links": a GPU event belongs to the step whose CPU span
  [ts, end] (inclusive) contains its launch time; unlinked GPU events belong to no step.
  Otherwise (links.method "ts_in_cpu_span", said in notes) a GPU event belongs to the step whose
  CPU span contains the GPU event's own ts.

Per step, mode gpu (over the step's own GPU events, all devices and streams merged)
  window = [min ts, max end] of them; step_time_us = window length (0 events: step_time 0,
           shares null). cpu_dur_us = the CPU span's dur, given beside it.
  compute_us  = |union of compute-kernel intervals|
  comm_us     = |union of communication-kernel intervals|
  exposed_comm_us = |comm union minus compute union|
  memcpy_memset_us = |union of memcpy and memset intervals|
  memcpy_memset_exposed_us = |memcpy/memset union minus (compute union + comm union)|
  busy_us     = |union of all the step's GPU activity|;  idle_us = step_time_us - busy_us
  shares: each of compute, comm, exposed_comm, memcpy_memset_exposed, idle / step_time_us.
  checks.gpu_window_overlaps: consecutive steps whose windows overlap (a step's GPU tail runs
  into the next step's GPU head), compared unrounded.
  checks.steps_without_comm: when some step has communication, the steps that have none; mode
  gpu: comm_us == 0; mode cpu: no backend span (name starting gloo:/nccl:/mpi:/ucc:) starts in
  the step (per_step.backend_comm_ops; comm_ops counts every comm op). In the gloo lab traces
  this catches the last step's all-reduce span lost at the profiler stop.

Per step, mode cpu (CPU-only traces, e.g. gloo)
  training thread = the (pid, tid) holding the cpu ProfilerStep events (most of them); without
  steps, the (pid, tid) with the largest summed CPU-op dur. The rank's CPU threads = every tid
  of the training thread's pid.
  communication = CPU ops or user_annotations (legacy: any X) on the rank's CPU threads whose
  name matches /gloo|nccl|all_reduce|allreduce|broadcast|all_gather|allgather|reduce_scatter|
  barrier|all_to_all|alltoall|send|recv/i -- but not /^aten::/ (aten::broadcast_tensors is no
  collective) and not ProfilerStep#.
  compute = CPU ops (legacy: any X but ProfilerStep#) on the training thread that are at depth 0
  among that thread's CPU ops (no other CPU op of the thread, ProfilerStep# excluded, encloses
  them: ts_a <= ts_b and end_b <= end_a, ties broken by longer first, then file order) and are
  not communication. A comm op nested in a compute op is hidden by it (the CPU is busy there).
  An op belongs to the step whose CPU span contains its ts; its interval is clipped to the span.
  window = the CPU span; step_time_us = its dur; compute/comm/exposed_comm as in mode gpu;
  memcpy_memset = 0; idle_us = step_time_us - |compute union + comm union| (a CPU gap: the
  data loader's sleep, DDP's uninstrumented wait for the all-reduce, Python between ops).

steady
  The steps without the first (warm-up) when there are 3 or more; else all of them (said in
  notes). Then steps with step_time_us 0 (an empty window: no GPU event in mode gpu) are left
  out too (said in notes). mean_* = arithmetic mean over the steady steps of each per-step figure; mean shares
  are means of the per-step shares (steps with step_time 0 excluded from share means).

top_kernels
  mode gpu: kernels (cat kernel) grouped by exact name; mode cpu: CPU ops and user_annotations
  (legacy: every X) but ProfilerStep#, all threads, grouped by name, inclusive durations (a
  nested op is counted in its parent's total too). The 10 largest by total dur (ties: name),
  each {name (first 120 chars), count, total_us, mean_us}.

collectives
  mode gpu: communication kernels; kind = the word after "Kernel_" in the name
  (ncclKernel_AllReduce_RING_LL_Sum_float -> AllReduce, ncclDevKernel_... alike) when it is a
  known kind (a value of CANON_KIND), else args["Collective name"] (RCCL's
  ncclDevKernel_Generic_1 says no kind), else that word, else "Other". Bytes of one kernel:
    a. args "In msg nelems" (AllGather: "Out msg nelems") x size of args.dtype, else
    b. the CPU events on the launch's thread that enclose the launch time and whose name
       starts with nccl:/rccl:/gloo: or is record_param_comms, innermost (shortest) first, the
       first that gives a size: its "In msg nelems" x dtype, or the product of its first
       "Input Dims" entry x size of its first "Input type" (an empty first entry gives none),
    c. else unknown (the kernel counts in count/total_us but not in bytes).
  mode cpu: communication ops, kind from the name with non-letters removed, lower-cased
  (gloo:all_reduce -> allreduce -> AllReduce); the kind's count/total_us come from the backend's
  own spans (names starting gloo:/nccl:/mpi:/ucc:) when the kind has any, else from all its ops;
  by_name lists every name. Bytes as in b. on the op itself.
  group size n = args "Group size" of the kernel/op, else distributedInfo.world_size.
  Per kind: count, total_us, sized_count, bytes (sum over sized ones), sized_us, and when
  bytes > 0: algbw_GBps = bytes / sized_us / 1e3 (GB/s, 1e9 bytes), busbw_GBps = factor x
  algbw with factor (nccl-tests): AllReduce 2(n-1)/n; AllGather, ReduceScatter (n-1)/n;
  Broadcast, Reduce 1; other kinds none. dtype sizes: see DTYPE_BYTES.
"""
import argparse
import gzip
import json
import re
import sys

ROUND_US = 3
ROUND_SHARE = 6
GPU_CATS = {"kernel": "kernel", "gpu_memcpy": "memcpy", "memcpy": "memcpy",
            "gpu_memset": "memset", "memset": "memset"}
LAUNCH_CATS = {"cuda_runtime", "cuda_driver", "runtime"}
CPU_OP_CATS = {"cpu_op", "operator"}
FLOW_PH = {"s", "f", "t"}
STEP_RE = re.compile(r"^ProfilerStep#(\d+)$")
COMM_KERNEL_RE = re.compile(r"nccl|rccl", re.I)
COMM_CPU_RE = re.compile(r"gloo|nccl|all_reduce|allreduce|broadcast|all_gather|allgather|"
                         r"reduce_scatter|barrier|all_to_all|alltoall|send|recv", re.I)
KIND_RE = re.compile(r"Kernel_([A-Za-z]+)")
BACKEND_SPAN_RE = re.compile(r"^(gloo|nccl|mpi|ucc):")
COMM_RECORD_RE = re.compile(r"^(nccl|rccl|gloo):|^record_param_comms$")
DTYPE_BYTES = {
    "float": 4, "float32": 4, "double": 8, "float64": 8, "half": 2, "float16": 2,
    "c10::half": 2, "bfloat16": 2, "c10::bfloat16": 2, "int": 4, "int32": 4, "long": 8,
    "long int": 8, "int64": 8, "short": 2, "int16": 2, "char": 1, "signed char": 1, "int8": 1,
    "byte": 1, "unsigned char": 1, "uint8": 1, "bool": 1, "complexfloat": 8,
    "c10::complex<float>": 8, "complexdouble": 16, "c10::complex<double>": 16,
}
CANON_KIND = {"allreduce": "AllReduce", "allgather": "AllGather", "allgatherbase": "AllGather",
              "reducescatter": "ReduceScatter", "reducescatterbase": "ReduceScatter",
              "broadcast": "Broadcast", "reduce": "Reduce", "barrier": "Barrier",
              "alltoall": "AllToAll", "alltoallbase": "AllToAll", "send": "Send", "recv": "Recv",
              "sendrecv": "SendRecv", "collectivepermute": "CollectivePermute",
              "collectivebroadcast": "CollectiveBroadcast"}
KNOWN_KINDS = set(CANON_KIND.values())
BUS_FACTOR = {"AllReduce": lambda n: 2.0 * (n - 1) / n, "AllGather": lambda n: (n - 1.0) / n,
              "ReduceScatter": lambda n: (n - 1.0) / n, "Broadcast": lambda n: 1.0,
              "Reduce": lambda n: 1.0}


# ---------------------------------------------------------------------------------------------
# intervals
# ---------------------------------------------------------------------------------------------
def union(iv):
    """Merged, sorted list of [a, b] from (a, b) pairs (touching intervals merge)."""
    out = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            if b > out[-1][1]:
                out[-1][1] = b
        else:
            out.append([a, b])
    return out


def length(u):
    return sum(b - a for a, b in u)


def intersect_len(u, v):
    """|u ∩ v| for two merged lists."""
    i = j = 0
    tot = 0.0
    while i < len(u) and j < len(v):
        a = max(u[i][0], v[j][0])
        b = min(u[i][1], v[j][1])
        if b > a:
            tot += b - a
        if u[i][1] < v[j][1]:
            i += 1
        else:
            j += 1
    return tot


def minus_len(u, v):
    """|u minus v| for two merged lists."""
    return length(u) - intersect_len(u, v)


def r_us(x):
    return None if x is None else round(float(x), ROUND_US)


def r_sh(x):
    return None if x is None else round(float(x), ROUND_SHARE)


# ---------------------------------------------------------------------------------------------
# loading
# ---------------------------------------------------------------------------------------------
def load(path):
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    if isinstance(doc, list):
        return {}, doc, "legacy"
    if isinstance(doc, dict):
        ev = doc.get("traceEvents")
        return doc, (ev if isinstance(ev, list) else []), "kineto"
    raise SystemExit("not a trace: top-level JSON is neither an object nor an array")


def num(x):
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float)):
        return float(x)
    return None


class Ev(object):
    __slots__ = ("i", "name", "cat", "ph", "pid", "tid", "ts", "dur", "end", "args")

    def __init__(self, i, e, ts, dur):
        self.i = i
        self.name = e.get("name") if isinstance(e.get("name"), str) else ""
        self.cat = e.get("cat").lower() if isinstance(e.get("cat"), str) else None
        self.ph = e.get("ph")
        self.pid = e.get("pid")
        self.tid = e.get("tid")
        self.ts = ts
        self.dur = dur
        self.end = ts + dur
        a = e.get("args")
        self.args = a if isinstance(a, dict) else {}


def hashable(x):
    return json.dumps(x, sort_keys=True) if isinstance(x, (list, dict)) else x


# ---------------------------------------------------------------------------------------------
# analysis
# ---------------------------------------------------------------------------------------------
def analyse(path):
    meta, raw, fmt = load(path)
    return analyse_doc(meta, raw, fmt, path.rsplit("/", 1)[-1])


def analyse_doc(meta, raw, fmt, file_name):
    """The figures of one loaded trace: meta (the top-level object, {} for none), raw (the
    event list), fmt ("kineto", "legacy", or another reader's name such as "xplane")."""
    notes = []
    legacy = fmt == "legacy"
    if legacy:
        notes.append("legacy trace (a bare JSON array, no cat): every X event is a CPU op; "
                     "ts is relative to the profiler start")

    by_cat, by_ph = {}, {}
    total = bad_x = 0
    xs = []
    flows = {}
    for i, e in enumerate(raw):
        if not isinstance(e, dict):
            continue
        total += 1
        cat = e.get("cat") if isinstance(e.get("cat"), str) else "(none)"
        ph = e.get("ph") if isinstance(e.get("ph"), str) else "(none)"
        by_cat[cat] = by_cat.get(cat, 0) + 1
        by_ph[ph] = by_ph.get(ph, 0) + 1
        if ph == "X":
            ts, dur = num(e.get("ts")), num(e.get("dur"))
            if ts is None or dur is None or dur < 0:
                bad_x += 1
                continue
            xs.append(Ev(i, e, ts, dur))
        elif ph in FLOW_PH and "id" in e:
            ts = num(e.get("ts"))
            if ts is not None:
                flows.setdefault((hashable(e.get("pid")), hashable(e.get("tid")), ts), e.get("id"))

    dinfo = meta.get("distributedInfo") if isinstance(meta.get("distributedInfo"), dict) else None
    events = {
        "format": fmt, "total": total, "by_cat": by_cat, "by_ph": by_ph, "bad_x": bad_x,
        "distributedInfo": ({k: dinfo[k] for k in ("rank", "world_size", "backend") if k in dinfo}
                            if dinfo is not None else None),
        "deviceProperties": len(meta["deviceProperties"]) if isinstance(meta.get("deviceProperties"), list) else 0,
        "displayTimeUnit": meta.get("displayTimeUnit"),
        "has_baseTimeNanoseconds": "baseTimeNanoseconds" in meta,
    }
    world = dinfo.get("world_size") if dinfo else None

    def is_cpu_op(ev):
        return ev.cat in CPU_OP_CATS if not legacy else True

    def is_cpu_like(ev):  # CPU ops and CPU-side annotations
        return legacy or ev.cat in CPU_OP_CATS or ev.cat == "user_annotation"

    # ---- steps ------------------------------------------------------------------------------
    cpu_steps, gpu_steps, seen = [], [], set()
    dup = 0
    for ev in xs:
        m = STEP_RE.match(ev.name)
        if not m:
            continue
        if ev.cat == "gpu_user_annotation":
            gpu_steps.append(ev)
        elif legacy or ev.cat in ("user_annotation", "cpu_op"):
            if ev.name in seen:
                dup += 1
                continue
            seen.add(ev.name)
            cpu_steps.append(ev)
    cpu_steps.sort(key=lambda e: (e.ts, e.i))
    gpu_steps.sort(key=lambda e: (e.ts, e.i))
    events["duplicate_steps"] = dup
    steps_out = {
        "cpu": [{"name": s.name, "ts": r_us(s.ts), "dur": r_us(s.dur), "end": r_us(s.end)} for s in cpu_steps],
        "gpu": [{"name": s.name, "ts": r_us(s.ts), "dur": r_us(s.dur), "end": r_us(s.end)} for s in gpu_steps],
    }
    checks = {"cpu_step_overlaps": sum(1 for a, b in zip(cpu_steps, cpu_steps[1:]) if b.ts < a.end)}
    if not cpu_steps:
        notes.append("no ProfilerStep#N on the CPU side: no per-step figures")

    def step_of(t):
        for k, s in enumerate(cpu_steps):
            if s.ts <= t <= s.end:
                return k
        return None

    gpu = [ev for ev in xs if ev.cat in GPU_CATS]
    mode = "gpu" if gpu else "cpu"
    if not gpu and by_cat.get("cuda_profiler_range"):
        notes.append("cuda_profiler_range events (CUPTI profiler ranges) are not GPU activity "
                     "here: the trace is analysed as CPU-only")
    per_step = []
    links_out = None
    top_src = []
    coll_src = []  # (event, kind, launch_event_or_None)

    if mode == "gpu":
        launches = {}
        for ev in xs:
            if ev.cat in LAUNCH_CATS and "correlation" in ev.args:
                launches.setdefault(hashable(ev.args["correlation"]), ev)
        cpu_by_ext = {}
        for ev in xs:
            if (ev.cat in CPU_OP_CATS or ev.cat == "user_annotation") and "External id" in ev.args:
                cpu_by_ext.setdefault(hashable(ev.args["External id"]), ev)
        how = {"correlation": 0, "flow": 0, "external_id": 0, "unlinked": 0}
        launch_of = {}
        for ev in gpu:
            l = None
            c = ev.args.get("correlation")
            if c is not None:
                l = launches.get(hashable(c))
                if l is not None:
                    how["correlation"] += 1
            if l is None:
                fid = flows.get((hashable(ev.pid), hashable(ev.tid), ev.ts))
                if fid is not None:
                    l = launches.get(hashable(fid))
                    if l is not None:
                        how["flow"] += 1
            if l is None and "External id" in ev.args:
                l = cpu_by_ext.get(hashable(ev.args["External id"]))
                if l is not None:
                    how["external_id"] += 1
            if l is None:
                how["unlinked"] += 1
            else:
                launch_of[ev.i] = l
        share = (len(gpu) - how["unlinked"]) / float(len(gpu))
        method = "launch_in_cpu_span" if share >= 0.5 else "ts_in_cpu_span"
        if method == "ts_in_cpu_span":
            notes.append("only %.1f%% of GPU events link to a launch: GPU events are assigned to "
                         "a step by their own ts in the step's CPU span" % (100 * share))
        members = [[] for _ in cpu_steps]
        wins = []
        outside = 0
        for ev in gpu:
            if method == "launch_in_cpu_span":
                l = launch_of.get(ev.i)
                k = step_of(l.ts) if l is not None else None
            else:
                k = step_of(ev.ts)
            if k is None:
                outside += 1
            else:
                members[k].append(ev)
        links_out = {"gpu_events": len(gpu), "by": how, "share": r_sh(share), "method": method,
                     "gpu_events_in_no_step": outside}
        for s, mem in zip(cpu_steps, members):
            comp = union((e.ts, e.end) for e in mem if GPU_CATS[e.cat] == "kernel" and not COMM_KERNEL_RE.search(e.name))
            comm = union((e.ts, e.end) for e in mem if GPU_CATS[e.cat] == "kernel" and COMM_KERNEL_RE.search(e.name))
            mm = union((e.ts, e.end) for e in mem if GPU_CATS[e.cat] != "kernel")
            allu = union((e.ts, e.end) for e in mem)
            if mem:
                w0, w1 = min(e.ts for e in mem), max(e.end for e in mem)
            else:
                w0 = w1 = None
            per_step.append(step_figures(s, w0, w1, len(mem), comp, comm, mm, allu))
            if mem:
                wins.append((w0, w1))  # unrounded: a 1 ps overlap counts
        checks["gpu_window_overlaps"] = sum(1 for a, b in zip(wins, wins[1:]) if b[0] < a[1])
        top_src = [ev for ev in gpu if GPU_CATS[ev.cat] == "kernel"]
        for ev in top_src:
            if COMM_KERNEL_RE.search(ev.name):
                m = KIND_RE.search(ev.name)
                kind = canon_kind(m.group(1)) if m else None
                if kind not in KNOWN_KINDS and ev.args.get("Collective name"):
                    kind = canon_kind(ev.args["Collective name"])
                kind = kind or "Other"
                coll_src.append((ev, kind, launch_of.get(ev.i)))
    else:
        # ---- CPU-only ------------------------------------------------------------------------
        if cpu_steps:
            cnt = {}
            for s in cpu_steps:
                key = (hashable(s.pid), hashable(s.tid))
                cnt[key] = cnt.get(key, 0) + 1
            train = max(sorted(cnt, key=str), key=lambda k: cnt[k])
        else:
            tot = {}
            for ev in xs:
                if is_cpu_op(ev) and not STEP_RE.match(ev.name):
                    key = (hashable(ev.pid), hashable(ev.tid))
                    tot[key] = tot.get(key, 0.0) + ev.dur
            train = max(sorted(tot, key=str), key=lambda k: tot[k]) if tot else None
        def is_comm(ev):
            return (is_cpu_like(ev) and not STEP_RE.match(ev.name) and not ev.name.startswith("aten::")
                    and COMM_CPU_RE.search(ev.name) is not None)
        comm_ev = [ev for ev in xs if train is not None and hashable(ev.pid) == train[0] and is_comm(ev)]
        thread_ops = [ev for ev in xs if train is not None and (hashable(ev.pid), hashable(ev.tid)) == train
                      and is_cpu_op(ev) and not STEP_RE.match(ev.name)]
        thread_ops.sort(key=lambda e: (e.ts, -e.dur, e.i))
        depth0 = []
        stack_end = None  # end of the current depth-0 op
        for ev in thread_ops:
            if stack_end is not None and ev.end <= stack_end:
                continue  # enclosed by the current depth-0 op
            depth0.append(ev)
            stack_end = ev.end
        comp_ev = [ev for ev in depth0 if not is_comm(ev)]
        links_out = None
        events["training_thread"] = list(train) if train is not None else None
        for s in cpu_steps:
            def clip(evs):
                return union((max(e.ts, s.ts), min(e.end, s.end)) for e in evs if s.ts <= e.ts <= s.end)
            comp = clip(comp_ev)
            comm = clip(comm_ev)
            allu = union([tuple(x) for x in comp] + [tuple(x) for x in comm])
            f = step_figures(s, s.ts, s.end, None, comp, comm, [], allu)
            f["compute_ops"] = sum(1 for e in comp_ev if s.ts <= e.ts <= s.end)
            f["comm_ops"] = sum(1 for e in comm_ev if s.ts <= e.ts <= s.end)
            f["backend_comm_ops"] = sum(1 for e in comm_ev if s.ts <= e.ts <= s.end
                                        and BACKEND_SPAN_RE.search(e.name))
            per_step.append(f)
        top_src = [ev for ev in xs if is_cpu_like(ev) and not STEP_RE.match(ev.name)]
        for ev in comm_ev:
            coll_src.append((ev, canon_kind(ev.name), ev))

    key = "comm_us" if mode == "gpu" else "backend_comm_ops"
    if any(p[key] for p in per_step):
        checks["steps_without_comm"] = [p["name"] for p in per_step if not p[key]]
    else:
        checks["steps_without_comm"] = []
    # ---- steady ---------------------------------------------------------------------------------
    if len(per_step) >= 3:
        steady = per_step[1:]
        steady_rule = "all steps but the first (warm-up)"
    else:
        steady = per_step
        steady_rule = "all %d step(s): fewer than 3, none dropped" % len(per_step)
        if per_step:
            notes.append("only %d step(s): steady means use all of them" % len(per_step))
    empty = [p["name"] for p in steady if not p["step_time_us"]]
    if empty:
        steady = [p for p in steady if p["step_time_us"]]
        steady_rule += "; empty step(s) left out: " + ", ".join(empty)
        notes.append("step(s) with an empty window left out of the steady means: " + ", ".join(empty))
    keys = ["step_time_us", "cpu_dur_us", "compute_us", "comm_us", "exposed_comm_us",
            "memcpy_memset_us", "memcpy_memset_exposed_us", "idle_us"]
    means = {}
    for k in keys:
        vals = [p[k] for p in steady if p[k] is not None]
        means["mean_" + k] = r_us(sum(vals) / len(vals)) if vals else None
    shares = {}
    for k in ("compute", "comm", "exposed_comm", "memcpy_memset_exposed", "idle"):
        vals = [p["shares"][k] for p in steady if p["shares"] is not None]
        shares[k] = r_sh(sum(vals) / len(vals)) if vals else None
    means["mean_shares"] = shares
    steady_out = {"rule": steady_rule, "steps": [p["name"] for p in steady], "n": len(steady)}
    steady_out.update(means)

    # ---- top kernels / ops ------------------------------------------------------------------
    agg = {}
    for ev in top_src:
        a = agg.setdefault(ev.name, [0, 0.0])
        a[0] += 1
        a[1] += ev.dur
    top = sorted(agg.items(), key=lambda kv: (-kv[1][1], kv[0]))[:10]
    top_out = [{"name": n[:120], "count": c, "total_us": r_us(t), "mean_us": r_us(t / c)}
               for n, (c, t) in top]

    # ---- collectives ------------------------------------------------------------------------
    collectives = collective_figures(coll_src, xs, mode, world)

    return {
        "file": file_name,
        "mode": mode,
        "events": events,
        "steps": steps_out,
        "links": links_out,
        "per_step": per_step,
        "steady": steady_out,
        "top_kernels": top_out,
        "top_kernels_source": "kernels" if mode == "gpu" else "cpu ops and user annotations (inclusive)",
        "collectives": collectives,
        "checks": checks,
        "notes": notes,
    }


def step_figures(s, w0, w1, n_events, comp, comm, mm, allu):
    st = (w1 - w0) if w0 is not None else 0.0
    compute, comms = length(comp), length(comm)
    exposed = minus_len(comm, comp)
    cc = union([tuple(x) for x in comp] + [tuple(x) for x in comm])
    mm_len = length(mm)
    mm_exp = minus_len(mm, cc)
    busy = length(allu)
    idle = st - busy
    sh = None
    if st > 0:
        sh = {"compute": r_sh(compute / st), "comm": r_sh(comms / st),
              "exposed_comm": r_sh(exposed / st), "memcpy_memset_exposed": r_sh(mm_exp / st),
              "idle": r_sh(idle / st)}
    out = {"name": s.name, "cpu_ts": r_us(s.ts), "cpu_dur_us": r_us(s.dur),
           "window_start": r_us(w0), "window_end": r_us(w1), "step_time_us": r_us(st),
           "compute_us": r_us(compute), "comm_us": r_us(comms), "exposed_comm_us": r_us(exposed),
           "memcpy_memset_us": r_us(mm_len), "memcpy_memset_exposed_us": r_us(mm_exp),
           "busy_us": r_us(busy), "idle_us": r_us(idle), "shares": sh}
    if n_events is not None:
        out["gpu_events"] = n_events
    return out


def canon_kind(name):
    key = re.sub(r"[^a-z]", "", name.split(":")[-1].lower() if ":" in name else name.lower())
    if key in CANON_KIND:
        return CANON_KIND[key]
    return name if name[:1].isupper() and ":" not in name else (key or "Other")


def dtype_bytes(t):
    if not isinstance(t, str):
        return None
    return DTYPE_BYTES.get(t.strip().lower())


def bytes_from_args(args, kind):
    dt = dtype_bytes(args.get("dtype"))
    key = "Out msg nelems" if kind == "AllGather" else "In msg nelems"
    n = args.get(key)
    if dt and isinstance(n, (int, float)) and not isinstance(n, bool) and n > 0:
        return int(n) * dt
    dims, types = args.get("Input Dims"), args.get("Input type")
    if isinstance(dims, list) and dims and isinstance(dims[0], list) and isinstance(types, list) and types:
        dt = dtype_bytes(types[0])
        if dt and dims[0] and all(isinstance(x, int) for x in dims[0]):
            p = 1
            for x in dims[0]:
                p *= x
            return p * dt
    return None


def collective_figures(src, xs, mode, world):
    enclosing_index = None
    if mode == "gpu":
        # CPU comm records, per (pid, tid), for rule b.
        enclosing_index = {}
        for ev in xs:
            if COMM_RECORD_RE.search(ev.name) and ev.cat in ("cpu_op", "user_annotation", "operator"):
                enclosing_index.setdefault((hashable(ev.pid), hashable(ev.tid)), []).append(ev)
    out = {}
    for ev, kind, launch in src:
        k = out.setdefault(kind, {"count": 0, "total_us": 0.0, "sized_count": 0, "bytes": 0,
                                  "sized_us": 0.0, "group_size": None, "by_name": {},
                                  "_backend": [0, 0.0], "_all": [0, 0.0]})
        nm = ev.name[:120]
        bn = k["by_name"].setdefault(nm, {"count": 0, "total_us": 0.0})
        bn["count"] += 1
        bn["total_us"] += ev.dur
        backend = mode == "cpu" and BACKEND_SPAN_RE.search(ev.name) is not None
        if mode == "cpu":
            bucket = k["_backend"] if backend else k["_all"]
            bucket[0] += 1
            bucket[1] += ev.dur
        b = bytes_from_args(ev.args, kind)
        n = ev.args.get("Group size")
        if b is None and mode == "gpu" and launch is not None:
            cands = [c for c in enclosing_index.get((hashable(launch.pid), hashable(launch.tid)), [])
                     if c.ts <= launch.ts <= c.end]
            for c in sorted(cands, key=lambda c: (c.dur, c.i)):  # innermost first
                b = bytes_from_args(c.args, kind)
                if b is not None:
                    if n is None:
                        n = c.args.get("Group size")
                    break
        if b is not None:
            k["_sized"] = k.get("_sized", []) + [(b, ev.dur, backend)]
        if isinstance(n, int) and n > 0:
            k["group_size"] = n
    for kind, k in out.items():
        if mode == "gpu":
            k["count"] = sum(v["count"] for v in k["by_name"].values())
            k["total_us"] = sum(v["total_us"] for v in k["by_name"].values())
            sized = k.get("_sized", [])
        else:
            use_backend = k["_backend"][0] > 0
            src_b = k["_backend"] if use_backend else k["_all"]
            k["count"], k["total_us"] = src_b[0], src_b[1]
            k["counted_from"] = "backend spans (gloo:/nccl:/mpi:/ucc:)" if use_backend else "all its ops"
            sized = [x for x in k.get("_sized", []) if x[2] == use_backend]
        k["sized_count"] = len(sized)
        k["bytes"] = sum(x[0] for x in sized)
        k["sized_us"] = sum(x[1] for x in sized)
        n = k["group_size"] or (world if isinstance(world, int) else None)
        k["group_size"] = n
        k["algbw_GBps"] = k["busbw_GBps"] = None
        k["busbw_formula"] = None
        if k["bytes"] > 0 and k["sized_us"] > 0:
            alg = k["bytes"] / k["sized_us"] / 1e3
            k["algbw_GBps"] = r_sh(alg)
            if kind in BUS_FACTOR and n:
                k["busbw_GBps"] = r_sh(alg * BUS_FACTOR[kind](n))
                k["busbw_formula"] = {"AllReduce": "2(n-1)/n x bytes/time", "AllGather": "(n-1)/n x bytes/time",
                                      "ReduceScatter": "(n-1)/n x bytes/time"}.get(kind, "bytes/time")
        k["total_us"] = r_us(k["total_us"])
        k["sized_us"] = r_us(k["sized_us"])
        for v in k["by_name"].values():
            v["total_us"] = r_us(v["total_us"])
        for tmp in ("_backend", "_all", "_sized"):
            k.pop(tmp, None)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trace")
    p.add_argument("--indent", type=int, default=2)
    p.add_argument("--out", help="write the JSON here instead of stdout")
    a = p.parse_args()
    res = analyse(a.trace)
    text = json.dumps(res, indent=a.indent, sort_keys=True) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
