#!/usr/bin/env python3
"""Bad-input suite: malformed and hostile inputs against a running mt MCP server.

Each case sends one hostile input and checks the exact answer (HTTP status and/or
JSON-RPC error code); after every case the server must still answer a valid request.

  bad_input.py --url http://127.0.0.1:PORT/mcp --tool NAME [--token SECRET]
               [--other-token SECRET2] [--task-tool NAME --task-args JSON --quick-task-args JSON]
  bad_input.py --stdio "CMD ARGS..." --tool NAME

Tasks extension: the task methods' errors are checked always; with --task-tool (a tool that
runs as a task: --task-args keep it running until cancelled, --quick-task-args end it at
once) also a flood of creations and cancel-after-completion, and with --other-token (a
second principal) that one caller's task ids are invisible to another.

Exit status 0 only if every case passed. Prints one line per case and a closing
"N passed, M failed" line.
"""
import argparse
import http.client
import json
import socket
import subprocess
import sys
import threading
import time
import urllib.parse

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}}
TASKS = "io.modelcontextprotocol/tasks"
TASK_META = {"io.modelcontextprotocol/protocolVersion": MODERN,
             "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}}

results = []


def record(name, ok, detail=""):
    results.append(ok)
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else "  -- " + detail), flush=True)


class Http:
    def __init__(self, url, token):
        u = urllib.parse.urlparse(url)
        self.host, self.port, self.path = u.hostname, u.port, u.path
        self.token = token

    def base_headers(self):
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
             "Host": f"{self.host}:{self.port}"}
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        return h

    def raw(self, method, body=b"", headers=None, path=None, drop=()):
        h = self.base_headers()
        h.update(headers or {})
        for k in drop:
            h.pop(k, None)
        c = http.client.HTTPConnection(self.host, self.port, timeout=30)
        c.putrequest(method, path or self.path, skip_host=True, skip_accept_encoding=True)
        for k, v in h.items():
            c.putheader(k, v)
        if isinstance(body, str):
            body = body.encode("utf-8", "surrogateescape")
        c.putheader("Content-Length", str(len(body)))
        c.endheaders(body)
        r = c.getresponse()
        data = r.read()
        hdrs = {k.lower(): v for k, v in r.getheaders()}
        c.close()
        return r.status, hdrs, data

    def modern(self, method, params=None, headers=None, rid=1, meta=True, drop=()):
        params = dict(params or {})
        if meta is True:
            params["_meta"] = dict(META)
        elif meta:
            params["_meta"] = dict(meta)
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        h = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
        if method in ("tools/call", "prompts/get"):
            h["Mcp-Name"] = str(params.get("name", ""))
        if method == "resources/read":
            h["Mcp-Name"] = str(params.get("uri", ""))
        if method in ("tasks/get", "tasks/update", "tasks/cancel") and isinstance(params.get("taskId"), str):
            h["Mcp-Name"] = params["taskId"]
        h.update(headers or {})
        return self.raw("POST", body, h, drop=drop)

    def alive(self):
        try:
            s, _, d = self.modern("tools/list", rid=424242)
            return s == 200 and json.loads(d).get("id") == 424242
        except Exception:
            return False


def body_json(data):
    text = data.decode("utf-8", "replace")
    if text.lstrip().startswith("{"):
        return json.loads(text)
    for line in text.splitlines():   # SSE: the last data: line that parses
        if line.startswith("data:"):
            try:
                msg = json.loads(line[5:].strip())
                if "id" in msg and ("result" in msg or "error" in msg):
                    return msg
            except ValueError:
                pass
    return None


def expect(h, name, status, code=None, resp=None, id_check=None):
    s, hdrs, data = resp
    ok = s == status
    detail = f"status {s}, wanted {status}; body {data[:200]!r}"
    if ok and code is not None:
        msg = body_json(data)
        got = msg.get("error", {}).get("code") if msg else None
        ok = got == code
        detail = f"error code {got}, wanted {code}; body {data[:200]!r}"
        if ok and id_check is not None:
            ok = msg.get("id") == id_check
            detail = f"id {msg.get('id')!r}, wanted {id_check!r}"
    if ok and not h.alive():
        ok, detail = False, "server stopped answering after this input"
    record(name, ok, detail)


def http_cases(h, tool, token, opts):
    P = "POST"
    # 1. Unparsable bodies → 400 / -32700
    for i, body in enumerate(["{", "[", "nul", '{"a":}', "\xff\xfe\x00", "", "   ", "{}}", '{"jsonrpc":"2.0",',
                              "\x00" * 64, '"unterminated', "{'single':'quotes'}"]):
        expect(h, f"parse error #{i}", 400, -32700, h.raw(P, body.encode("latin-1")))
    # 2. Wrong envelope shapes → 400 / -32600
    envelopes = [
        {"id": 1, "method": "tools/list"}, {"jsonrpc": "1.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": 2, "id": 1, "method": "tools/list"}, {"jsonrpc": "2.0", "id": 1, "method": 5},
        {"jsonrpc": "2.0", "id": 1, "method": ""}, {"jsonrpc": "2.0", "id": 1, "method": None},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1, 2]},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": "x"},
        {"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}, {"jsonrpc": "2.0", "id": [1], "method": "tools/list"},
        {"jsonrpc": "2.0", "id": True, "method": "tools/list"}, {"jsonrpc": "2.0", "id": None, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}}, {"jsonrpc": "2.0", "id": 1},
        [], [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}], 42, "string", None,
    ]
    for i, env in enumerate(envelopes):
        expect(h, f"invalid envelope #{i}", 400, -32600, h.raw(P, json.dumps(env)))
    # 3. Ids survive exactly, however large or odd
    for rid in [2**64 - 1, -(2**63), "x" * 10000, "ünïcødé-✓", 0, ""]:
        s, hdrs, data = h.modern("tools/list", rid=rid)
        msg = body_json(data)
        ok = s == 200 and msg is not None and msg.get("id") == rid
        record(f"id preserved {str(rid)[:24]!r}", ok and h.alive(), f"status {s} id {msg and msg.get('id')!r}")
    for rid in [10**300, 1.5, -0.5]:   # not RequestIds: no fractions, nothing beyond 64 bits
        expect(h, f"id {str(rid)[:12]} refused", 400, -32600,
               h.raw(P, json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/list", "params": {"_meta": META}}),
                     {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"}))
    # 4. Unknown and removed methods (modern) → 404 / -32601, id echoed
    for m in ["foo", "tools/lists", "TOOLS/LIST", "initialize", "ping", "logging/setLevel", "resources/subscribe",
              "a" * 5000]:
        expect(h, f"unknown method {m[:20]}", 404, -32601, h.modern(m, rid=77), id_check=77)
    # 5. Bad _meta → 400 / -32602 or -32022
    def with_meta(meta, rid=5):
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/list", "params": {"_meta": meta}})
        return h.raw(P, body, {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"})
    expect(h, "missing _meta", 400, -32602, h.modern("tools/list", meta=False), id_check=1)
    expect(h, "_meta missing clientCapabilities", 400, -32602,
           with_meta({"io.modelcontextprotocol/protocolVersion": MODERN}))
    expect(h, "_meta missing protocolVersion", 400, -32602,
           with_meta({"io.modelcontextprotocol/clientCapabilities": {}}))
    expect(h, "_meta clientCapabilities is an array", 400, -32602,
           with_meta({"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": []}))
    expect(h, "_meta protocolVersion is a number", 400, -32602,
           with_meta({"io.modelcontextprotocol/protocolVersion": 2026, "io.modelcontextprotocol/clientCapabilities": {}}))
    expect(h, "_meta bad logLevel", 400, -32602,
           with_meta(dict(META, **{"io.modelcontextprotocol/logLevel": "loud"})))
    body = json.dumps({"jsonrpc": "2.0", "id": 6, "method": "tools/list",
                       "params": {"_meta": dict(META, **{"io.modelcontextprotocol/protocolVersion": "2099-01-01"})}})
    expect(h, "unsupported version", 400, -32022, h.raw(P, body, {"MCP-Protocol-Version": "2099-01-01", "Mcp-Method": "tools/list"}))
    expect(h, "_meta not an object", 400, -32602,
           h.raw(P, json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": "x"}}),
                 {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"}))
    # 6. Header/body mismatch → 400 / -32020
    expect(h, "Mcp-Method mismatch", 400, -32020, h.modern("tools/list", headers={"Mcp-Method": "prompts/list"}))
    expect(h, "Mcp-Method missing", 400, -32020, h.modern("tools/list", drop=("Mcp-Method",)))
    expect(h, "Mcp-Method case differs", 400, -32020, h.modern("tools/list", headers={"Mcp-Method": "TOOLS/LIST"}))
    expect(h, "Mcp-Name mismatch", 400, -32020,
           h.modern("tools/call", {"name": tool, "arguments": {}}, headers={"Mcp-Name": "other_tool"}))
    expect(h, "MCP-Protocol-Version missing", 400, -32020, h.modern("tools/list", drop=("MCP-Protocol-Version",)))
    expect(h, "MCP-Protocol-Version differs from _meta", 400, -32020,
           h.modern("tools/list", headers={"MCP-Protocol-Version": "2025-11-25"}))
    # 7. tools/call with bad params
    expect(h, "tools/call without name", 400, -32602, h.modern("tools/call", {"arguments": {}}))
    expect(h, "tools/call name is a number", 400, -32602,
           h.raw(P, json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": 5, "_meta": META}}),
                 {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "5"}))
    expect(h, "unknown tool", 400, -32602, h.modern("tools/call", {"name": "no_such_tool", "arguments": {}}))
    for i, args in enumerate([[1], "x", 5]):
        s, _, data = h.modern("tools/call", {"name": tool, "arguments": args})
        msg = body_json(data) or {}
        ok = s == 200 and msg.get("result", {}).get("isError") is True
        record(f"arguments not an object #{i} → isError", ok and h.alive(), f"status {s} body {data[:150]!r}")
    # 8. Other primitives
    expect(h, "resources/read without uri", 400, -32602, h.modern("resources/read", {}))
    expect(h, "resources/read unknown uri", 400, -32602, h.modern("resources/read", {"uri": "nope://x"}))
    expect(h, "resources/read path traversal uri", 400, -32602, h.modern("resources/read", {"uri": "file:///etc/passwd"}))
    expect(h, "prompts/get unknown", 400, -32602, h.modern("prompts/get", {"name": "no_such_prompt"}))
    expect(h, "completion without ref", 400, -32602, h.modern("completion/complete", {"argument": {"name": "a", "value": ""}}))
    expect(h, "completion bad ref type", 400, -32602,
           h.modern("completion/complete", {"ref": {"type": "ref/nothing"}, "argument": {"name": "a", "value": ""}}))
    expect(h, "tools/list bad cursor", 400, -32602, h.modern("tools/list", {"cursor": "!!!"}))
    expect(h, "tools/list cursor past end", 400, -32602, h.modern("tools/list", {"cursor": "bzo5OTk5OTk"}))
    # 9. Multi round-trip state
    expect(h, "requestState garbage", 400, -32602, h.modern("tools/call", {"name": tool, "arguments": {}, "requestState": "garbage"}))
    expect(h, "requestState forged", 400, -32602,
           h.modern("tools/call", {"name": tool, "arguments": {}, "requestState": "eyJ2IjoxfQ.AAAA"}))
    expect(h, "inputResponses is an array", 400, -32602, h.modern("tools/call", {"name": tool, "arguments": {}, "inputResponses": []}))
    expect(h, "inputResponses is null", 400, -32602, h.modern("tools/call", {"name": tool, "arguments": {}, "inputResponses": None}))
    # 10. DNS rebinding: foreign Host or Origin → 403
    for origin in ["http://evil.example.com", "null", "http://localhost.evil.com", "https://127.0.0.1.nip.io", "file://"]:
        expect(h, f"bad Origin {origin}", 403, None, h.modern("tools/list", headers={"Origin": origin}))
    for host in ["evil.example.com", "localhost.evil.com:80", "127.0.0.2:1", "[::2]:80"]:
        expect(h, f"bad Host {host}", 403, None, h.modern("tools/list", headers={"Host": host}))
    # 11. Authentication
    if token:
        expect(h, "no token", 401, None, h.modern("tools/list", drop=("Authorization",)))
        expect(h, "wrong token", 401, None, h.modern("tools/list", headers={"Authorization": "Bearer wrong"}))
        expect(h, "empty bearer", 401, None, h.modern("tools/list", headers={"Authorization": "Bearer "}))
        expect(h, "basic auth", 401, None, h.modern("tools/list", headers={"Authorization": "Basic dXNlcjpwdw=="}))
        expect(h, "token prefix only", 401, None, h.modern("tools/list", headers={"Authorization": "Bearer " + token[:-1]}))
    # 12. Size, media types, HTTP methods
    expect(h, "oversized body", 413, None, h.raw(P, b"{" + b" " * (5 * 1024 * 1024) + b"}"))
    expect(h, "text/plain body", 415, None, h.raw(P, b"{}", {"Content-Type": "text/plain"}))
    expect(h, "no content type", 415, None, h.raw(P, b"{}", drop=("Content-Type",)))
    expect(h, "Accept text/html only", 406, None, h.raw(P, b"{}", {"Accept": "text/html"}))
    expect(h, "PUT", 405, None, h.raw("PUT", b"{}"))
    expect(h, "PATCH", 405, None, h.raw("PATCH", b"{}"))
    expect(h, "GET modern", 405, None, h.raw("GET", b"", {"MCP-Protocol-Version": MODERN}))
    expect(h, "DELETE without session", 405, None, h.raw("DELETE", b""))
    expect(h, "unknown path", 404, None, h.raw(P, b"{}", path="/nope"))
    # 13. Legacy sessions
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bad", "version": "1"}}})
    listreq = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    expect(h, "legacy request without session", 400, -32600, h.raw(P, listreq))
    expect(h, "legacy unknown session", 404, None, h.raw(P, listreq, {"Mcp-Session-Id": "deadbeef"}))
    expect(h, "initialize with a session id", 400, -32600, h.raw(P, init, {"Mcp-Session-Id": "deadbeef"}))
    expect(h, "DELETE unknown session", 404, None, h.raw("DELETE", b"", {"Mcp-Session-Id": "deadbeef"}))
    s, hdrs, _ = h.raw(P, init)
    sid = hdrs.get("mcp-session-id", "")
    # A non-legacy version header marks the request modern, whose _meta is then missing.
    expect(h, "legacy request with unknown version header", 400, -32602,
           h.raw(P, listreq, {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "1999-01-01"}))
    expect(h, "legacy session id with odd bytes", 404, None, h.raw(P, listreq, {"Mcp-Session-Id": "x" * 4000}))
    h.raw("DELETE", b"", {"Mcp-Session-Id": sid})
    # 14. The Tasks extension
    task_cases(h, opts)
    # 15. Custom headers from tool parameters
    custom_header_cases(h, opts)
    # 16. Clients that go away mid-request
    truncated_clients(h, tool)
    # 17. Many connections at once
    many_connections(h, 1000)


def rpc(resp):
    """(HTTP status, JSON-RPC message) of a response."""
    s, _, data = resp
    return s, (body_json(data) or {})


def task_call(h, opts, args_json, headers=None):
    return h.modern("tools/call", {"name": opts.task_tool, "arguments": json.loads(args_json)},
                    headers=headers, meta=TASK_META)


def task_req(h, method, task_id, headers=None, **extra):
    return h.modern(method, dict({"taskId": task_id}, **extra), headers=headers, meta=TASK_META)


def wait_task(h, task_id, statuses, headers=None, timeout=15):
    end = time.time() + timeout
    while time.time() < end:
        _, msg = rpc(task_req(h, "tasks/get", task_id, headers))
        status = msg.get("result", {}).get("status")
        if status in statuses:
            return msg["result"]
        time.sleep(0.05)
    return {}


def task_cases(h, opts):
    unknown = "0123456789abcdef0123456789abcdef"
    # Methods of the extension, whatever tools the server has.
    expect(h, "tasks/get without the tasks extension", 400, -32021,
           h.modern("tasks/get", {"taskId": unknown}), id_check=1)
    expect(h, "tasks/cancel without the tasks extension", 400, -32021, h.modern("tasks/cancel", {"taskId": unknown}))
    expect(h, "tasks/get unknown task id", 400, -32602, task_req(h, "tasks/get", unknown))
    expect(h, "tasks/update unknown task id", 400, -32602, task_req(h, "tasks/update", unknown, inputResponses={}))
    expect(h, "tasks/cancel unknown task id", 400, -32602, task_req(h, "tasks/cancel", unknown))
    expect(h, "tasks/get 4 KB task id", 400, -32602, task_req(h, "tasks/get", "x" * 4_000))
    expect(h, "tasks/get without taskId", 400, -32602, h.modern("tasks/get", {}, meta=TASK_META))
    expect(h, "tasks/get taskId is a number", 400, -32602, h.modern("tasks/get", {"taskId": 7}, meta=TASK_META))
    expect(h, "tasks/update inputResponses is an array", 400, -32602,
           task_req(h, "tasks/update", unknown, inputResponses=[]))
    expect(h, "tasks/get Mcp-Name differs from taskId", 400, -32020,
           task_req(h, "tasks/get", unknown, headers={"Mcp-Name": "another-task"}))
    expect(h, "tasks/get without Mcp-Name", 400, -32020,
           h.modern("tasks/get", {"taskId": unknown}, meta=TASK_META, drop=("Mcp-Name",)))
    for m in ("tasks/result", "tasks/list"):   # removed by the extension
        expect(h, f"{m} is not a method", 404, -32601, task_req(h, m, unknown))
    if not opts.task_tool:
        return
    # Another caller's task id: the same error as an unknown one, and nothing changes.
    if opts.other_token:
        other = {"Authorization": "Bearer " + opts.other_token}
        s, msg = rpc(task_call(h, opts, opts.task_args))
        tid = msg.get("result", {}).get("taskId")
        record("task created (for the other-caller cases)", s == 200 and bool(tid), f"status {s} body {msg}")
        if tid:
            _, ref = rpc(task_req(h, "tasks/get", unknown, other))
            for method, extra in (("tasks/get", {}), ("tasks/cancel", {}), ("tasks/update", {"inputResponses": {}})):
                s, msg = rpc(task_req(h, method, tid, other, **extra))
                ok = s == 400 and msg.get("error") == ref.get("error")
                record(f"{method} of another caller's task = unknown id", ok and h.alive(),
                       f"status {s}: {msg.get('error')} vs {ref.get('error')}")
            s, msg = rpc(task_req(h, "tasks/get", tid))
            record("another caller's cancel did not reach the task", msg.get("result", {}).get("status") == "working",
                   f"status {s}: {msg}")
            rpc(task_req(h, "tasks/cancel", tid))
    # Cancel after completion: the same empty ack, and the result stays.
    s, msg = rpc(task_call(h, opts, opts.quick_task_args))
    tid = msg.get("result", {}).get("taskId")
    done = wait_task(h, tid, ("completed", "failed", "cancelled")) if tid else {}
    s, ack = rpc(task_req(h, "tasks/cancel", tid or unknown))
    after = wait_task(h, tid, ("completed", "failed", "cancelled")) if tid else {}
    ok = (done.get("status") == "completed" and s == 200 and ack.get("result", {}).get("resultType") == "complete"
          and "status" not in ack.get("result", {}) and after.get("status") == "completed" and "result" in after)
    record("cancel after completion: empty ack, still completed with its result", ok and h.alive(),
           f"before {done.get('status')}, ack {s} {ack}, after {after.get('status')}")
    # A flood of creations: refused with 429 / -32010 at the per-caller limit, and the
    # server keeps serving; cancelling frees the slots again (once the handlers stopped: a
    # cancelled task holds its slot until then, so give the ones above a moment).
    time.sleep(0.5)
    created, refusal = [], None
    for _ in range(1000):
        s, msg = rpc(task_call(h, opts, opts.task_args))
        if s == 200 and msg.get("result", {}).get("taskId"):
            created.append(msg["result"]["taskId"])
            continue
        refusal = (s, msg)
        break
    err = (refusal or (0, {}))[1].get("error", {})
    limit = err.get("data", {}).get("limit")
    ok = refusal is not None and refusal[0] == 429 and err.get("code") == -32010 and limit == len(created)
    record(f"flood of task creations refused at the limit ({len(created)})", ok and h.alive(),
           f"after {len(created)} tasks: {refusal}")
    for _ in range(20):   # still refused while they run
        s, msg = rpc(task_call(h, opts, opts.task_args))
        if s != 429 or msg.get("error", {}).get("code") != -32010:
            record("flood: every further creation refused", False, f"status {s}: {msg}")
            break
    else:
        record("flood: every further creation refused", h.alive(), "")
    for tid in created:
        rpc(task_req(h, "tasks/cancel", tid))
    statuses = {wait_task(h, tid, ("cancelled",)).get("status") for tid in created}
    record("flood: every task cancelled", statuses <= {"cancelled"}, f"statuses {statuses}")
    s, msg = (0, {})
    for _ in range(100):   # the cancelled handlers wind down, and their slots free up
        s, msg = rpc(task_call(h, opts, opts.task_args))
        if s == 200:
            break
        time.sleep(0.05)
    tid = msg.get("result", {}).get("taskId")
    record("flood: tasks can be created again after cancelling", s == 200 and bool(tid), f"status {s}: {msg}")
    if tid:
        rpc(task_req(h, "tasks/cancel", tid))


def custom_header_cases(h, opts):
    """Mcp-Param-* headers of a tool whose inputSchema marks a string parameter x-mcp-header."""
    _, msg = rpc(h.modern("tools/list"))
    for t in msg.get("result", {}).get("tools", []):
        props = t.get("inputSchema", {}).get("properties", {})
        marked = [(k, p["x-mcp-header"]) for k, p in props.items()
                  if isinstance(p, dict) and p.get("type") == "string" and isinstance(p.get("x-mcp-header"), str)]
        if marked and not set(t.get("inputSchema", {}).get("required", [])) - {marked[0][0]}:
            break
    else:
        return
    name, (param, header) = t["name"], marked[0]
    call = lambda value, hdrs: h.modern("tools/call", {"name": name, "arguments": {param: value}}, headers=hdrs)
    hn = "Mcp-Param-" + header
    s, msg = rpc(call("us-west1", {hn: "us-west1"}))
    record(f"{hn} matching the body is accepted", s == 200 and "result" in msg, f"status {s}: {msg}")
    expect(h, f"{hn} missing while the body has the value", 400, -32020, call("us-west1", {}))
    expect(h, f"{hn} differs from the body", 400, -32020, call("us-west1", {hn: "eu-west1"}))
    expect(h, f"{hn} Base64 without padding", 400, -32020, call("Hello", {hn: "=?base64?SGVsbG8?="}))
    expect(h, f"{hn} Base64 with foreign characters", 400, -32020, call("Hello", {hn: "=?base64?SGVs!!!bG8=?="}))
    expect(h, f"{hn} Base64 of another value", 400, -32020, call("Hello", {hn: "=?base64?SGVsbG9v?="}))
    expect(h, f"{hn} raw non-ASCII bytes", 400, -32020, call("é", {hn: "é".encode().decode("latin-1")}))


def truncated_clients(h, tool):
    def sock():
        s = socket.create_connection((h.host, h.port), timeout=10)
        return s
    hdr = "".join(f"{k}: {v}\r\n" for k, v in h.base_headers().items())
    # Headers cut off midway, then the socket closes.
    s = sock(); s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le"); s.close()
    record("truncated request headers", h.alive(), "server stopped answering")
    # Body shorter than Content-Length.
    s = sock(); s.sendall(f"POST {h.path} HTTP/1.1\r\n{hdr}Content-Length: 1000\r\n\r\n{{\"jsonrpc\"".encode()); s.close()
    record("truncated request body", h.alive(), "server stopped answering")
    # A streaming response whose client disconnects after the first bytes.
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": tool, "arguments": {}, "_meta": dict(META, progressToken="p")}})
    for i in range(5):
        s = sock()
        s.sendall((f"POST {h.path} HTTP/1.1\r\n{hdr}MCP-Protocol-Version: {MODERN}\r\nMcp-Method: tools/call\r\n"
                   f"Mcp-Name: {tool}\r\nContent-Length: {len(body)}\r\n\r\n{body}").encode())
        s.recv(16)
        s.close()
    record("SSE client disconnects mid-stream (x5)", h.alive(), "server stopped answering")
    # Binary garbage instead of HTTP.
    s = sock(); s.sendall(bytes(range(256)) * 8); s.close()
    record("binary garbage on the socket", h.alive(), "server stopped answering")
    # A slow client that holds its connection without sending must not block others.
    slow = [sock() for _ in range(20)]
    for s in slow:
        s.sendall(b"POST /mcp HTTP/1.1\r\n")
    t0 = time.time()
    alive = h.alive()
    record("20 slow clients do not block a fast one", alive and time.time() - t0 < 5, f"took {time.time() - t0:.1f}s")
    for s in slow:
        s.close()


def many_connections(h, n):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}).encode()
    hdr = "".join(f"{k}: {v}\r\n" for k, v in h.base_headers().items())
    req = (f"POST {h.path} HTTP/1.1\r\n{hdr}MCP-Protocol-Version: {MODERN}\r\nMcp-Method: tools/list\r\n"
           f"Connection: close\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
    socks, statuses, lock = [], [], threading.Lock()
    try:
        for _ in range(n):
            socks.append(socket.create_connection((h.host, h.port), timeout=60))
    except OSError as e:
        record(f"{n} concurrent connections", False, f"could only open {len(socks)}: {e}")
        return

    def run(s):
        try:
            s.sendall(req)
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1") else 0
        except OSError:
            status = -1
        finally:
            s.close()
        with lock:
            statuses.append(status)
    threads = [threading.Thread(target=run, args=(s,)) for s in socks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    good = statuses.count(200)
    record(f"{n} concurrent connections all answered", good == n and h.alive(),
           f"{good}/{n} got 200; others: {sorted(set(statuses) - {200})}")


def stdio_cases(cmd, tool):
    """Hostile lines on stdin: each must get its exact error line; a final ping must work."""
    cases = [
        ("garbage bytes", b"\x00\x01\x02\xff\xfe", -32700),
        ("truncated JSON", b'{"jsonrpc":"2.0","id":1,', -32700),
        ("invalid UTF-8 in a string", b'{"jsonrpc":"2.0","id":1,"method":"\xc3\x28"}', -32700),
        ("batch", b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', -32600),
        ("wrong version", b'{"jsonrpc":"1.0","id":2,"method":"ping"}', -32600),
        ("params array", b'{"jsonrpc":"2.0","id":3,"method":"ping","params":[]}', -32600),
        ("request before initialize", b'{"jsonrpc":"2.0","id":4,"method":"tools/list"}', -32600),
        ("modern unknown method", ('{"jsonrpc":"2.0","id":5,"method":"nope","params":{"_meta":%s}}' % json.dumps(META)).encode(), -32601),
        ("modern missing capabilities", b'{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}', -32602),
        ("modern unknown tool", ('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"zzz","_meta":%s}}' % json.dumps(META)).encode(), -32602),
        ("tasks/get without the tasks extension", ('{"jsonrpc":"2.0","id":71,"method":"tasks/get","params":{"taskId":"t","_meta":%s}}' % json.dumps(META)).encode(), -32021),
        ("tasks/get unknown task id", ('{"jsonrpc":"2.0","id":72,"method":"tasks/get","params":{"taskId":"t","_meta":%s}}' % json.dumps(TASK_META)).encode(), -32602),
        ("tasks/cancel unknown task id", ('{"jsonrpc":"2.0","id":73,"method":"tasks/cancel","params":{"taskId":"t","_meta":%s}}' % json.dumps(TASK_META)).encode(), -32602),
        ("tasks/result is not a method", ('{"jsonrpc":"2.0","id":74,"method":"tasks/result","params":{"taskId":"t","_meta":%s}}' % json.dumps(TASK_META)).encode(), -32601),
        ("10 MB line", b'{"jsonrpc":"2.0","id":8,"method":"nope","params":{"pad":"' + b"x" * (10 << 20) + b'"}}', -32600),
    ]
    payload = b"".join(c[1] + b"\n" for c in cases) + b'{"jsonrpc":"2.0","id":"last","method":"ping"}\n'
    p = subprocess.run(cmd.split(), input=payload, capture_output=True, timeout=120)
    lines = [json.loads(l) for l in p.stdout.decode().splitlines() if l.strip()]
    if p.returncode != 0:
        record("stdio server exits 0 at EOF", False, f"exit {p.returncode}: {p.stderr[-300:]!r}")
    for (name, _, code), msg in zip(cases, lines):
        got = msg.get("error", {}).get("code")
        record(f"stdio {name}", got == code, f"code {got}, wanted {code}: {json.dumps(msg)[:200]}")
    record("stdio still serving after all of it", len(lines) == len(cases) + 1 and lines[-1].get("id") == "last",
           f"{len(lines)} lines for {len(cases) + 1} requests")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url")
    ap.add_argument("--stdio")
    ap.add_argument("--tool", required=True)
    ap.add_argument("--token")
    ap.add_argument("--other-token", help="a second principal's token (task ownership cases)")
    ap.add_argument("--task-tool", help="a tool that runs as a task")
    ap.add_argument("--task-args", default='{"seconds": 60}', help="its arguments for a long run")
    ap.add_argument("--quick-task-args", default='{"seconds": 0}', help="its arguments for a run that ends at once")
    a = ap.parse_args()
    if a.url:
        h = Http(a.url, a.token)
        if not h.alive():
            print("server not answering at " + a.url)
            return 1
        http_cases(h, a.tool, a.token, a)
    if a.stdio:
        stdio_cases(a.stdio, a.tool)
    passed = sum(results)
    print(f"bad-input: {passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
