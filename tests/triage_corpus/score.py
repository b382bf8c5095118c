#!/usr/bin/env python3
"""Score a log-triage command against the HELD-OUT triage cases (tests/triage_corpus/cases/).

This is the scorer of the development set (/work/shared/corpus/triage/score.py) with its default
--cases pointing at the cases directory beside this file. Same answer parsing, same counting.

Usage:
    python3 tests/triage_corpus/score.py 'build/tools/mt triage --json {log} --now {now}'
    python3 tests/triage_corpus/score.py --min 0.9 -v --filter '^(hang|running)' 'mt triage --json {log} --now {now}'
    python3 tests/triage_corpus/score.py --cases /other/cases 'mt triage --json {log} --now {now}'

Template placeholders (substituted per case, shell-quoted when needed):
    {log}   path of the case's .log file
    {now}   the label's "now" (ISO 8601, e.g. 2024-01-11T11:53:00). If a case has
            no "now", the {now} token and an option flag directly before it
            ("--now {now}", "--now={now}") are dropped from the command.
            If the template has no {now}, nothing is passed.
    {id}    the case id
    {json}  path of the case's label file (only for debugging oracles)

The command is run through /bin/sh for every case. It must print a JSON object
on stdout. The object (or, failing that, the last JSON object found in stdout)
is searched for the predicted class, in this order of keys:
    class, classification, failure_class, failure_type, category, cause,
    root_cause, reason, failure, kind, type, label, verdict, diagnosis,
    status, state, outcome, result
(values may be strings, {"name"/"class"/"type": ...} objects, or lists; one level
of nesting such as {"triage": {"class": ...}} is also searched). Synonyms are
mapped onto the label vocabulary (see SYNONYMS below); generic values such as
"failed" or "error" are skipped so that a more specific key can decide. A
predicted "heartbeat" becomes "heartbeat_false_positive" when the object carries
a truthy key whose name contains "false_positive".

"last_step" is read from last_step, last_completed_step, steps_completed,
last_step_completed, max_step or step (top level or one level down).

A non-zero exit status, a timeout, or stdout without a usable JSON object counts
as a wrong answer (for the class and for last_step). Exit status: 0 if class accuracy >= --min (default 0.9),
1 otherwise, 2 on usage errors.

Only the Python 3 standard library is used.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time

CLASSES = ['completed', 'running', 'hang', 'oom', 'host_oom', 'nccl_error', 'heartbeat',
           'heartbeat_false_positive', 'gpu_hw_error', 'time_limit', 'cancelled', 'node_fail',
           'preempted', 'python_exception']

SYNONYMS = {
    'completed': ['completed', 'complete', 'success', 'succeeded', 'successful', 'finished', 'done', 'ok',
                  'passed', 'pass', 'clean_exit', 'exit_0', 'training_complete', 'completed_ok'],
    'running': ['running', 'in_progress', 'inprogress', 'active', 'ongoing', 'healthy', 'alive',
                'progressing', 'still_running', 'pending_completion'],
    'hang': ['hang', 'hung', 'hanging', 'stalled', 'stall', 'stuck', 'no_progress', 'frozen', 'freeze',
             'silent', 'idle', 'stale', 'timeout_no_progress', 'progress_stall', 'possible_hang'],
    'oom': ['oom', 'gpu_oom', 'device_oom', 'hbm_oom', 'xla_oom', 'cuda_oom', 'oom_gpu', 'oom_device',
            'resource_exhausted', 'out_of_memory', 'gpu_out_of_memory', 'device_out_of_memory', 'memory'],
    'host_oom': ['host_oom', 'oom_host', 'oom_kill', 'oom_killed', 'oomkill', 'oomkilled', 'cgroup_oom',
                 'cpu_oom', 'host_memory', 'ram_oom', 'system_oom', 'host_out_of_memory', 'oom_killer',
                 'kernel_oom', 'killed_oom'],
    'nccl_error': ['nccl_error', 'nccl', 'rccl', 'rccl_error', 'nccl_timeout', 'rccl_timeout',
                   'collective_timeout', 'collective_error', 'watchdog', 'watchdog_timeout', 'nccl_failure',
                   'nccl_watchdog', 'comm_error', 'communication_error', 'network_error', 'ib_error',
                   'infiniband', 'nccl_hang'],
    'heartbeat': ['heartbeat', 'heartbeat_timeout', 'heartbeat_failure', 'heartbeat_lost', 'missed_heartbeat',
                  'coordination', 'coordination_service', 'coordination_error', 'coordination_timeout',
                  'jax_coordination', 'jax_distributed', 'distributed_service', 'deadline_exceeded',
                  'barrier_timeout', 'coordinator', 'coordinator_lost', 'task_unhealthy'],
    'heartbeat_false_positive': ['heartbeat_false_positive', 'heartbeat_fp', 'false_positive_heartbeat',
                                 'heartbeat_false_alarm', 'spurious_heartbeat', 'heartbeat_suspect',
                                 'heartbeat_timeout_false_positive'],
    'gpu_hw_error': ['gpu_hw_error', 'gpu_error', 'hardware', 'hardware_error', 'hw_error', 'gpu_hardware',
                     'gpu_hardware_error', 'gpu_fault', 'xid', 'xid_error', 'ecc', 'ecc_error', 'hsa',
                     'hsa_error', 'illegal_memory_access', 'illegal_address', 'memory_access_fault',
                     'rocm_error', 'cuda_error', 'device_error', 'gpu_failure', 'accelerator_error',
                     'gpu_crash', 'hw_fault', 'gpu_hw', 'hw', 'gpu_hw_fault', 'uncorrectable_ecc'],
    'time_limit': ['time_limit', 'timelimit', 'timeout', 'walltime', 'wall_time', 'wallclock',
                   'wall_clock', 'time_limit_exceeded', 'job_timeout', 'slurm_timeout', 'timed_out',
                   'walltime_exceeded'],
    'cancelled': ['cancelled', 'canceled', 'scancel', 'user_cancel', 'user_cancelled', 'user_canceled',
                  'cancel', 'killed_by_user', 'aborted_by_user', 'manual_cancel', 'job_cancelled'],
    'node_fail': ['node_fail', 'node_failure', 'nodefail', 'node_failed', 'node_down', 'node_lost',
                  'node_crash', 'node_error', 'slurm_node_failure'],
    'preempted': ['preempted', 'preemption', 'preempt', 'requeued', 'evicted', 'eviction', 'preempted_requeued'],
    'python_exception': ['python_exception', 'exception', 'python_error', 'traceback', 'python_traceback',
                         'app_error', 'application_error', 'script_error', 'user_error', 'runtime_error',
                         'config_error', 'configuration_error', 'value_error', 'uncaught_exception',
                         'python_crash', 'code_error'],
}
EXACT = {s: c for c, ss in SYNONYMS.items() for s in ss}
GENERIC = {'failed', 'failure', 'fail', 'error', 'errored', 'crash', 'crashed', 'unknown', 'abnormal',
           'terminated', 'killed', 'aborted', 'exited', 'nonzero_exit', 'bad', 'problem', 'issue', 'other',
           'none', 'null', 'n_a', 'na', ''}

# ordered substring rules for short values that are not exact synonyms
SUBSTR = [
    (('false_positive', 'heartbeat'), 'heartbeat_false_positive'),
    (('nccl',), 'nccl_error'), (('rccl',), 'nccl_error'), (('watchdog',), 'nccl_error'),
    (('collective',), 'nccl_error'),
    (('oom_kill',), 'host_oom'), (('host', 'oom'), 'host_oom'), (('host', 'memory'), 'host_oom'),
    (('cgroup',), 'host_oom'),
    (('oom',), 'oom'), (('out_of_memory',), 'oom'), (('resource_exhausted',), 'oom'),
    (('heartbeat',), 'heartbeat'), (('coordinat',), 'heartbeat'), (('deadline_exceeded',), 'heartbeat'),
    (('preempt',), 'preempted'),
    (('node_fail',), 'node_fail'), (('node', 'failure'), 'node_fail'), (('node_down',), 'node_fail'),
    (('time_limit',), 'time_limit'), (('timelimit',), 'time_limit'), (('walltime',), 'time_limit'),
    (('cancel',), 'cancelled'),
    (('hang',), 'hang'), (('hung',), 'hang'), (('stall',), 'hang'), (('stuck',), 'hang'),
    (('xid',), 'gpu_hw_error'), (('ecc',), 'gpu_hw_error'), (('hsa',), 'gpu_hw_error'),
    (('hardware',), 'gpu_hw_error'), (('illegal',), 'gpu_hw_error'), (('gpu', 'fault'), 'gpu_hw_error'),
    (('exception',), 'python_exception'), (('traceback',), 'python_exception'), (('python',), 'python_exception'),
    (('success',), 'completed'), (('complete',), 'completed'), (('finish',), 'completed'),
    (('running',), 'running'), (('progress',), 'running'),
]

CLASS_KEYS = ['class', 'classification', 'failure_class', 'failure_type', 'category', 'cause', 'root_cause',
              'reason', 'failure', 'kind', 'type', 'label', 'verdict', 'diagnosis']
STATUS_KEYS = ['status', 'state', 'outcome', 'result']
INNER_KEYS = ['class', 'name', 'type', 'kind', 'category', 'id', 'value', 'label']
STEP_KEYS = ['last_step', 'last_completed_step', 'steps_completed', 'last_step_completed', 'max_step', 'step']


def norm(v):
    return re.sub(r'[^a-z0-9]+', '_', str(v).strip().lower()).strip('_')


def map_value(v):
    """Map one predicted value to a label class, or None if generic/unknown."""
    if isinstance(v, dict):
        for k in INNER_KEYS:
            if k in v:
                c = map_value(v[k])
                if c:
                    return c
        return None
    if isinstance(v, (list, tuple)):
        for x in v:
            c = map_value(x)
            if c:
                return c
        return None
    if v is None or isinstance(v, bool):
        return None
    n = norm(v)
    if n in GENERIC:
        return None
    if n in EXACT:
        return EXACT[n]
    if len(n) > 40 or n.count('_') > 4:      # free text: too risky to guess from
        return None
    for needles, cls in SUBSTR:
        if all(x in n for x in needles):
            return cls
    return None


def has_fp_flag(obj, depth=0):
    if depth > 3:
        return False
    if isinstance(obj, dict):
        for k, v in obj.items():
            if 'false_positive' in norm(k) and v not in (False, None, 0, '', 'false', 'no', 'False'):
                return True
            if isinstance(v, (dict, list)) and has_fp_flag(v, depth + 1):
                return True
    elif isinstance(obj, list):
        return any(has_fp_flag(x, depth + 1) for x in obj)
    return False


def predicted_class(obj):
    scopes = [obj] + [v for v in obj.values() if isinstance(v, dict)]
    found = None
    for keys in (CLASS_KEYS, STATUS_KEYS):
        for scope in scopes:
            for k in keys:
                if k in scope:
                    c = map_value(scope[k])
                    if c:
                        found = c
                        break
            if found:
                break
        if found:
            break
    if found == 'heartbeat' and has_fp_flag(obj):
        found = 'heartbeat_false_positive'
    return found or 'unknown'


def predicted_step(obj):
    scopes = [obj] + [v for v in obj.values() if isinstance(v, dict)]
    for scope in scopes:
        for k in STEP_KEYS:
            if k in scope:
                v = scope[k]
                if v is None:
                    return None
                if isinstance(v, bool):
                    continue
                if isinstance(v, (int, float)):
                    return int(v)
                if isinstance(v, str) and re.fullmatch(r'\s*-?\d+\s*', v):
                    return int(v)
    return None


def find_json_object(text):
    """The whole stdout if it is a JSON object, else the last JSON object in it."""
    s = text.strip()
    if not s:
        return None
    try:
        v = json.loads(s)
        if isinstance(v, dict):
            return v
        if isinstance(v, list) and v and isinstance(v[-1], dict):
            return v[-1]
    except ValueError:
        pass
    dec = json.JSONDecoder()
    best = None
    i = s.find('{')
    while i != -1:
        try:
            v, end = dec.raw_decode(s, i)
            if isinstance(v, dict):
                best = v
                i = s.find('{', end)
                continue
        except ValueError:
            pass
        i = s.find('{', i + 1)
    return best


def build_command(template, log_path, label, label_path):
    tpl = template
    now = label.get('now')
    if '{now}' in tpl and not now:
        tpl = re.sub(r'\s*(?:-{1,2}[\w-]+(?:\s+|=))?\S*\{now\}\S*', '', tpl)

    def q(v):
        return shlex.quote(str(v))
    return (tpl.replace('{log}', q(log_path))
               .replace('{now}', q(now) if now else '')
               .replace('{id}', q(label['id']))
               .replace('{json}', q(label_path)))


def run_case(template, log_path, label, label_path, timeout):
    cmd = build_command(template, log_path, label, label_path)
    t0 = time.time()
    res = {'id': label['id'], 'cmd': cmd, 'pred': 'unknown', 'pred_step': None, 'error': None}
    try:
        p = subprocess.Popen(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, start_new_session=(os.name == 'posix'))
        try:
            so, se = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                if os.name == 'posix':
                    os.killpg(p.pid, signal.SIGKILL)     # the whole process group the shell started
                else:
                    p.kill()
            except OSError:
                pass
            p.communicate()
            raise
        out = so.decode('utf-8', 'replace')
        if p.returncode != 0:
            res['error'] = f'exit status {p.returncode}: ' + se.decode('utf-8', 'replace').strip()[-200:]
        else:
            obj = find_json_object(out)
            if obj is None:
                res['error'] = 'no JSON object on stdout: ' + out.strip()[:120]
            else:
                res['pred'] = predicted_class(obj)
                res['pred_step'] = predicted_step(obj)
                res['raw'] = obj
    except subprocess.TimeoutExpired:
        res['error'] = f'timeout after {timeout}s'
    except OSError as e:
        res['error'] = f'could not run: {e}'
    res['secs'] = round(time.time() - t0, 2)
    return res


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('template', help="command template, e.g. 'mt triage --json {log}'")
    ap.add_argument('--cases', default=os.path.join(here, 'cases'), help='directory with <id>.log/<id>.json')
    ap.add_argument('--min', type=float, default=0.9, help='minimum class accuracy for exit status 0')
    ap.add_argument('--timeout', type=float, default=120.0, help='seconds per case (default 120)')
    ap.add_argument('--jobs', '-j', type=int, default=1, help='cases run in parallel (default 1)')
    ap.add_argument('--filter', default=None, help='only case ids matching this regular expression')
    ap.add_argument('--results', default=None, help='write per-case results as JSON to this file')
    ap.add_argument('--verbose', '-v', action='store_true', help='print every case, not only the misses')
    args = ap.parse_args()

    if '{log}' not in args.template:
        print('error: the template must contain {log}', file=sys.stderr)
        return 2
    labels = []
    for jp in sorted(glob.glob(os.path.join(args.cases, '*.json'))):
        with open(jp, encoding='utf-8') as fh:
            lab = json.load(fh)
        if args.filter and not re.search(args.filter, lab['id']):
            continue
        lp = jp[:-5] + '.log'
        if not os.path.exists(lp):
            print(f'warning: {lp} missing, case skipped', file=sys.stderr)
            continue
        labels.append((lab, lp, jp))
    if not labels:
        print('error: no cases found in ' + args.cases, file=sys.stderr)
        return 2

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        futs = [ex.submit(run_case, args.template, lp, lab, jp, args.timeout) for lab, lp, jp in labels]
        results = [f.result() for f in futs]

    n = len(results)
    correct = 0
    step_n = step_ok = 0
    tp = {c: 0 for c in CLASSES}
    fp = {c: 0 for c in CLASSES}
    fn = {c: 0 for c in CLASSES}
    support = {c: 0 for c in CLASSES}   # gold counts
    confusions = {}
    rows = []
    for (lab, lp, jp), r in zip(labels, results):
        gold = lab['class']
        accept = [gold] + list(lab.get('also_accept') or [])
        pred = r['pred']
        ok = pred in accept                 # an accepted alternative counts as the gold class
        support[gold] = support.get(gold, 0) + 1
        if ok:
            correct += 1
            tp[gold] = tp.get(gold, 0) + 1
        else:
            fn[gold] = fn.get(gold, 0) + 1
            if pred in fp:
                fp[pred] += 1
            confusions[(gold, pred)] = confusions.get((gold, pred), 0) + 1
        step_txt = ''
        if lab.get('last_step_scored', True):
            step_n += 1
            s_ok = r['error'] is None and r['pred_step'] == lab.get('last_step')
            step_ok += s_ok
            step_txt = f"step {r['pred_step']}/{lab.get('last_step')}{'' if s_ok else ' (wrong)'}"
        r.update(gold=gold, correct=ok, step_scored=lab.get('last_step_scored', True), gold_step=lab.get('last_step'))
        rows.append((ok, lab['id'], gold, pred, step_txt, r['error'], r['secs']))

    print(f"{'':2}{'case':52} {'gold':25} {'predicted':25} last_step")
    for ok, cid, gold, pred, step_txt, err, secs in rows:
        if args.verbose or not ok:
            mark = 'ok' if ok else 'XX'
            extra = f'  [{err}]' if err else ''
            print(f"{mark:2} {cid[:51]:51} {gold:25} {pred:25} {step_txt}{extra}")
    print()
    print(f"{'class':26} {'support':>7} {'precision':>9} {'recall':>7} {'f1':>6}")
    for c in CLASSES:
        if support.get(c, 0) == 0 and fp.get(c, 0) == 0:
            continue
        p = tp[c] / (tp[c] + fp[c]) if (tp[c] + fp[c]) else 0.0
        rc = tp[c] / support[c] if support[c] else 0.0
        f1 = 2 * p * rc / (p + rc) if (p + rc) else 0.0
        print(f"{c:26} {support[c]:>7} {p:>9.3f} {rc:>7.3f} {f1:>6.3f}")
    others = sorted({r['pred'] for r in results if r['pred'] not in CLASSES})
    if others:
        print(f"(predictions outside the label set: {', '.join(others)})")
    if confusions:
        print('\nmost common confusions (gold -> predicted):')
        for (g, p), k in sorted(confusions.items(), key=lambda kv: -kv[1])[:10]:
            print(f'  {g} -> {p}: {k}')
    acc = correct / n
    if step_n:
        print(f'\nlast_step accuracy: {step_ok}/{step_n} = {step_ok / step_n:.4f} (cases with last_step_scored)')
    if args.results:
        with open(args.results, 'w', encoding='utf-8') as fh:
            json.dump(results, fh, indent=1, default=str)
    print(f'class accuracy: {correct}/{n} (min {args.min})')
    print(f'accuracy={acc:.4f} cases={n}')
    return 0 if acc >= args.min else 1


if __name__ == '__main__':
    sys.exit(main())
