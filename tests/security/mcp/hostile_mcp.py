#!/usr/bin/env python3
"""Hostile-client suite for `mt serve` (hardening issue 14), with the shipped configuration
(`tokens: []`, default approvals) and with tokens. Each case reproduces one finding, checks
the specific answer, and probes liveness afterwards.

  hostile_mcp.py MT_BINARY

Exit 0 only if every case passed; one line per case.
"""
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

MT = sys.argv[1]
MODERN = "2026-07-28"
CAPS_FORM = {"elicitation": {}}
results = []


def record(name, ok, detail=""):
    results.append(ok)
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else "  -- " + str(detail)[:600]), flush=True)


def meta(caps=None):
    return {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": caps or {}}


class Server:
    def __init__(self, cfg, extra=()):
        self.log = open(cfg + ".log", "w+")
        self.p = subprocess.Popen([MT, "serve", "--http", "127.0.0.1:0", "--config", cfg, *extra],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log)
        self.port = None
        for _ in range(400):
            self.log.seek(0)
            m = re.search(r"listening on http://[^:]*:(\d+)/mcp", self.log.read())
            if m:
                self.port = int(m.group(1))
                break
            if self.p.poll() is not None:
                break
            time.sleep(0.05)
        if not self.port:
            self.log.seek(0)
            raise SystemExit("server did not start: " + self.log.read())

    def stop(self):
        self.p.terminate()
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()

    def hwm_mb(self):
        with open(f"/proc/{self.p.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return -1

    def headers(self, token=None, method=None, name=None):
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
             "Host": f"127.0.0.1:{self.port}", "MCP-Protocol-Version": MODERN}
        if method:
            h["Mcp-Method"] = method
        if name:
            h["Mcp-Name"] = name
        if token:
            h["Authorization"] = "Bearer " + token
        return h

    def post(self, body, headers, timeout=30, source="127.0.0.1"):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout, source_address=(source, 0))
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        if isinstance(body, str):
            body = body.encode()
        c.request("POST", "/mcp", body=body, headers=headers)
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, data

    def call(self, name, args, token=None, caps=None, extra=None):
        params = {"name": name, "arguments": args, "_meta": meta(caps)}
        params.update(extra or {})
        st, data = self.post({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params},
                             self.headers(token, "tools/call", name))
        try:
            return st, json.loads(data)
        except ValueError:
            return st, {"raw": data[:300]}

    def healthz(self, source="127.0.0.1", timeout=5):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout, source_address=(source, 0))
        c.request("GET", "/healthz", headers={"Host": f"127.0.0.1:{self.port}"})
        r = c.getresponse()
        r.read()
        return r.status

    def alive(self, token=None):
        try:
            st, data = self.post({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"_meta": meta()}},
                                 self.headers(token, "tools/list"), timeout=10)
            return st == 200 and b'"tools"' in data and self.p.poll() is None
        except OSError:
            return False


def read_reply(s):
    """Everything the server sends until it closes (it closes after refusing a request
    whose body it did not read), within the socket's timeout."""
    data = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
    except OSError:
        pass
    s.close()
    return data


def tool_text(reply):
    r = reply.get("result", {})
    return " ".join(c.get("text", "") for c in r.get("content", []))


def structured(reply):
    return reply.get("result", {}).get("structuredContent", {})


def main():
    T = tempfile.mkdtemp(prefix="mt-hostile-")
    os.chmod(T, 0o755)
    ws = os.path.join(T, "ws")
    os.makedirs(ws)
    open(os.path.join(ws, "100-probe.log"), "w").write("0: completed step: 1, seconds: 1.0\n")
    cfg = os.path.join(T, "mt.yaml")
    # The shipped configuration, with a short body deadline so the test need not wait 60 s.
    open(cfg, "w").write(f"workspace: {ws}\ntokens: []\nhttp: {{body_timeout_seconds: 8}}\n")
    approver, agent = "alice-" + os.urandom(8).hex(), "bot-" + os.urandom(8).hex()
    sha = lambda s: __import__("hashlib").sha256(s.encode()).hexdigest()
    cfg_tok = os.path.join(T, "tokens.yaml")
    open(cfg_tok, "w").write(f"workspace: {ws}\ntokens:\n  - {{name: alice, sha256: {sha(approver)}, role: approver}}\n"
                             f"  - {{name: bot, sha256: {sha(agent)}, role: agent}}\n")
    a = Server(cfg)
    b = Server(cfg_tok)
    try:
        run_http_cases(a, b, ws, agent)
        run_stdio_cases(cfg, ws)
    finally:
        a.stop()
        b.stop()
    failed = results.count(False)
    print(f"hostile-mcp: {len(results) - failed} passed, {failed} failed")
    if failed == 0:
        shutil.rmtree(T, ignore_errors=True)
    else:
        print("kept", T)
    return 1 if failed else 0


def run_http_cases(a, b, ws, agent):
    # Finding 1: 150,000 nested arrays in the arguments (a 300 KB body) crashed the server.
    deep = "[" * 150000 + "]" * 150000
    body = ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_jobs","arguments":{"x":' + deep +
            '},"_meta":' + json.dumps(meta()) + '}}')
    st, data = a.post(body, a.headers(None, "tools/call", "list_jobs"))
    record("http: 150,000 nested arrays → 400 parse error, server alive",
           st == 400 and b"nested deeper than 64 levels" in data and a.alive(), (st, data[:200]))

    # Finding 13: duplicate keys — the last one used to win ("list_jobs" shown, submit_job run).
    body = ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_jobs","name":"submit_job",'
            '"arguments":{"model":"llama2-70b","backend":"local"},"_meta":' + json.dumps(meta()) + '}}')
    st, data = a.post(body, a.headers(None, "tools/call", "list_jobs"))
    plans = os.path.join(ws, ".mt", "approvals")
    record("http: duplicate \"name\" keys → 400, no plan recorded",
           st == 400 and b'duplicate object key \\"name\\"' in data and not os.path.isdir(plans) and a.alive(),
           (st, data[:200]))

    # Finding 5: a chunked body bypassed max_body_bytes (300 MiB accepted, 1.28 GB RSS).
    s = socket.create_connection(("127.0.0.1", a.port), timeout=10)
    s.sendall((f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{a.port}\r\nContent-Type: application/json\r\n"
               "Accept: application/json\r\nTransfer-Encoding: chunked\r\n\r\n").encode())
    chunk = b"%x\r\n" % (1 << 20) + b" " * (1 << 20) + b"\r\n"
    sent = 0
    try:
        for _ in range(300):
            s.sendall(chunk)
            sent += 1
    except OSError:
        pass
    reply = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            reply += d
    except OSError:
        pass
    s.close()
    hwm = a.hwm_mb()
    record(f"http: chunked 300 MiB body → 413 after ≤ ~5 MiB read (sent {sent} MiB, server peak RSS {hwm:.0f} MB)",
           (reply.startswith(b"HTTP/1.1 413") or reply == b"") and sent < 300 and hwm < 200 and a.alive(),
           (reply[:200], sent, hwm))

    # Content-Length far over the cap: refused from the header, before any body byte.
    s = socket.create_connection(("127.0.0.1", a.port), timeout=10)
    s.sendall((f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{a.port}\r\nContent-Type: application/json\r\n"
               "Content-Length: 3000000000\r\n\r\n").encode())
    reply = read_reply(s)
    record("http: Content-Length 3 GB → 413 at once, from the header", reply.startswith(b"HTTP/1.1 413") and
           b"Content-Length 3000000000" in reply, reply[:200])

    # Finding 6: headers/bodies read before the token check; bodies read before Host checks.
    s = socket.create_connection(("127.0.0.1", b.port), timeout=10)
    s.sendall((f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{b.port}\r\nContent-Type: application/json\r\n"
               "Content-Length: 1000000\r\n\r\n").encode())
    reply = read_reply(s)
    record("http: no token → 401 before the (unsent) body", reply.startswith(b"HTTP/1.1 401"), reply[:200])
    s = socket.create_connection(("127.0.0.1", a.port), timeout=10)
    s.sendall(b"POST /mcp HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n")
    reply = read_reply(s)
    record("http: rebinding Host → 403 before the (unsent) body", reply.startswith(b"HTTP/1.1 403"), reply[:200])

    # Finding 13: /healthz answered 401 with tokens configured (the docs say `ok`).
    record("http: /healthz answers 200 without a token when tokens are configured", b.healthz() == 200)

    # Finding 6: ~140 slow connections starved the pool; /healthz timed out for everyone.
    slow = []
    stop = threading.Event()
    for i in range(200):
        try:
            c = socket.create_connection(("127.0.0.1", a.port), timeout=5)
            if i % 5 == 0:   # body dribblers: complete headers, then one body byte per second
                c.sendall((f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{a.port}\r\nContent-Type: application/json\r\n"
                           "Content-Length: 4000\r\n\r\n").encode())
            else:            # header dribblers
                c.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{a.port}\r\n".encode())
            slow.append(c)
        except OSError:
            break

    def dribble():
        while not stop.is_set():
            for c in list(slow):
                try:
                    c.send(b"x")
                except OSError:
                    slow.remove(c)
            stop.wait(1.0)
    t = threading.Thread(target=dribble)
    t.start()
    time.sleep(3)
    t0 = time.time()
    try:
        other = a.healthz(source="127.0.0.2", timeout=5)
        same = a.healthz(source="127.0.0.1", timeout=5)
        ok_call = a.alive()
    except OSError as e:
        other, same, ok_call = str(e), None, False
    elapsed = time.time() - t0
    record(f"http: 200 slow clients; /healthz from another and from the same address and a tools/list still "
           f"answered ({elapsed:.1f} s)", other == 200 and same == 200 and ok_call, (other, same, ok_call))
    time.sleep(12)   # past the 10 s header and 8 s body deadlines: the server has dropped the dribblers
    dropped = 0
    for c in list(slow):
        try:
            c.setblocking(False)
            d = c.recv(4096)
            dropped += 1 if d == b"" or d.startswith(b"HTTP/1.1 4") else 0
        except BlockingIOError:
            pass
        except OSError:
            dropped += 1
    stop.set()
    t.join()
    for c in slow:
        c.close()
    record(f"http: slow clients are disconnected by their deadlines ({dropped} of {len(slow)} still-open ones)",
           len(slow) == 0 or dropped >= len(slow) * 0.9, (dropped, len(slow)))

    # Finding 2: an agent approving its own job. Shipped config: no form is ever shown, and a
    # forged approving inputResponses does nothing.
    args = {"model": "llama2-70b", "backend": "local", "passthrough": ["steps=2"]}
    st, r = a.call("submit_job", args, caps=CAPS_FORM)
    s1 = structured(r)
    forged = {"inputResponses": {"approve_plan": {"action": "accept", "content": {"decision": "approve",
                                                                                  "plan": s1.get("plan_id")}}}}
    st2, r2 = a.call("submit_job", args, caps=CAPS_FORM, extra=forged)
    jobs = [d for d in os.listdir(ws) if d.startswith("local_")]
    record("http: agent with a form-answering client → pending_approval, forged approval ignored, nothing runs",
           s1.get("status") == "pending_approval" and r.get("result", {}).get("resultType") != "input_required" and
           structured(r2).get("status") == "pending_approval" and not jobs, (r, r2))

    # The same for cancel_job: a running job the operator started; the agent cannot stop it.
    sub = subprocess.run([MT, "submit", "llama2-70b", "--backend", "local", "--yes", "--json", "--workspace", ws,
                          "--", "steps=100000", "_env_SIM_STEP_SECONDS=1"], capture_output=True, timeout=60)
    job = json.loads(sub.stdout.decode().splitlines()[-1]).get("job_id", "") if sub.returncode == 0 else ""
    st, r = a.call("cancel_job", {"job": job}, caps=CAPS_FORM)
    forged = {"inputResponses": {"approve_plan": {"action": "accept", "content": {"decision": "approve",
                                                                                  "plan": structured(r).get("plan_id")}}}}
    st2, r2 = a.call("cancel_job", {"job": job}, caps=CAPS_FORM, extra=forged)
    time.sleep(1)
    status = subprocess.run([MT, "status", job, "--workspace", ws, "--json"], capture_output=True, timeout=30)
    state = json.loads(status.stdout or b"{}").get("state") if status.returncode == 0 else None
    record("http: agent cancel_job with a form-answering client → pending_approval, the job keeps running",
           job != "" and structured(r).get("status") == "pending_approval" and
           structured(r2).get("status") == "pending_approval" and state == "RUNNING", (sub.stdout[-300:], r, r2, state))
    subprocess.run([MT, "cancel", job, "--workspace", ws], capture_output=True, timeout=60)

    # Finding 4: _env_LD_PRELOAD accepted; a job submitted that way ran the library.
    st, r = a.call("submit_job", {"model": "llama2-70b", "backend": "local",
                                  "passthrough": ["_env_LD_PRELOAD=/tmp/evil.so"]})
    record("http: _env_LD_PRELOAD refused with the reason",
           r.get("result", {}).get("isError") and "loader, interpreter, search-path or plugin variable" in tool_text(r),
           r)

    # Finding 12: nothing limited pending plans per requester (approval fatigue).
    refused_at = None
    for i in range(25):
        st, r = a.call("submit_job", {"model": "llama2-70b", "backend": "local", "passthrough": [f"tag=flood{i}"]})
        if r.get("result", {}).get("isError"):
            refused_at = (i, tool_text(r))
            break
    record("http: the 21st pending plan of one requester is refused (limit 20)",
           refused_at is not None and "already has 20 plans waiting" in refused_at[1], refused_at)

    # Finding 13: time 1e308 overflowed into year −292277022657.
    st, r = a.call("query_tsdb", {"job": "100", "mode": "correlate", "time": 1e308})
    record("http: query_tsdb time 1e308 → specific error",
           r.get("result", {}).get("isError") and "outside 2000-01-01..2100-01-01" in tool_text(r), r)
    record("http: both servers alive at the end", a.alive() and b.alive(agent))


def run_stdio_cases(cfg, ws):
    deep = "[" * 150000 + "]" * 150000
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
                       "clientInfo": {"name": "hostile", "version": "1"}}}
    lines = [json.dumps(init), json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
             '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_jobs","arguments":{"x":' + deep + '}}}',
             '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_jobs","name":"submit_job","arguments":{}}}',
             json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                         "params": {"name": "submit_job", "arguments": {"model": "llama2-70b", "backend": "local",
                                                                        "passthrough": ["tag=stdio"]}}}),
             json.dumps({"jsonrpc": "2.0", "id": 4, "method": "ping"})]
    p = subprocess.run([MT, "serve", "--config", cfg], input=("\n".join(lines) + "\n").encode(),
                       capture_output=True, timeout=60)
    out = [json.loads(l) for l in p.stdout.decode().splitlines() if l.strip()]
    by_id = {m.get("id"): m for m in out if "id" in m}
    asked = [m for m in out if m.get("method") == "elicitation/create"]
    errs = [m for m in out if m.get("error", {}).get("code") == -32700]
    record("stdio: 150,000 nested arrays → -32700, server alive",
           any("nested deeper than 64" in m["error"]["message"] for m in errs) and 4 in by_id and p.returncode == 0,
           (p.returncode, out[:3], p.stderr[-300:]))
    record("stdio: duplicate keys → -32700 naming the key",
           any("duplicate object key" in m["error"]["message"] for m in errs), errs)
    record("stdio: submit_job from a form-capable agent client → pending_approval, no form sent",
           structured(by_id.get(3, {})).get("status") == "pending_approval" and not asked, (by_id.get(3), asked))

    # Finding 3: `mt serve --config FILE` let whoever starts the server pick stdio_role: ci.
    d = tempfile.mkdtemp(prefix="mt-evil-")
    os.chmod(d, 0o777)
    evil = os.path.join(d, "mt.yaml")
    open(evil, "w").write(f"workspace: {ws}\napprovals: {{stdio_role: ci}}\npolicy: {{ci: {{max_nodes: 4096}}}}\n")
    p = subprocess.run([MT, "serve", "--config", evil], input=b"", capture_output=True, timeout=30)
    err = p.stderr.decode()
    record("stdio: a config in a world-writable directory granting stdio_role: ci is refused",
           p.returncode != 0 and "only an operator-controlled file may set" in err and "approvals.stdio_role: ci" in err,
           (p.returncode, err))
    os.chmod(d, 0o755)
    os.chmod(evil, 0o666)
    p = subprocess.run([MT, "serve", "--config", evil], input=b"", capture_output=True, timeout=30)
    record("stdio: a world-writable config granting stdio_role: ci is refused",
           p.returncode != 0 and "mode 0666" in p.stderr.decode(), p.stderr.decode())
    if os.geteuid() == 0 and shutil.which("setpriv"):
        # As an ordinary user: a file that user owns (so an agent running as it could write it).
        os.chmod(evil, 0o644)
        os.chown(evil, 65534, 65534)
        p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", MT, "serve",
                            "--config", evil], input=b"", capture_output=True, timeout=30)
        record("stdio: as nobody, its own config granting stdio_role: ci is refused",
               p.returncode != 0 and "owned by the server's own user" in p.stderr.decode(), p.stderr.decode())
    shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
