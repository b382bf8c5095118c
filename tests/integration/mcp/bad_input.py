#!/usr/bin/env python3
"""Bad-input suite: malformed and hostile inputs against a running mt MCP server.

Each case sends one hostile input and checks the exact answer (HTTP status and/or
JSON-RPC error code); after every case the server must still answer a valid request.

  bad_input.py --url http://127.0.0.1:PORT/mcp --tool NAME [--token SECRET]
  bad_input.py --stdio "CMD ARGS..." --tool NAME

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
        if meta:
            params["_meta"] = dict(META)
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        h = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
        if method in ("tools/call", "prompts/get"):
            h["Mcp-Name"] = str(params.get("name", ""))
        if method == "resources/read":
            h["Mcp-Name"] = str(params.get("uri", ""))
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


def http_cases(h, tool, token):
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
    # 14. Clients that go away mid-request
    truncated_clients(h, tool)
    # 15. Many connections at once
    many_connections(h, 1000)


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
    a = ap.parse_args()
    if a.url:
        h = Http(a.url, a.token)
        if not h.alive():
            print("server not answering at " + a.url)
            return 1
        http_cases(h, a.tool, a.token)
    if a.stdio:
        stdio_cases(a.stdio, a.tool)
    passed = sum(results)
    print(f"bad-input: {passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
