"""query_tsdb on a configured remote metrics source (mt.yaml metrics.sources), against real
servers: a real Prometheus behind TLS (a CA made here with openssl) and basic auth (its own
--web.config.file) serving a simulated job's TSDB as a "central store"; then every bad-input
case of issue 21 — wrong credentials (401), a CA that does not sign the server (TLS), an
unreachable port, an endpoint that is not Prometheus, one that never answers (timeout), an
answer over max_samples, a secret whose variable is unset, secrets written inline — each a
specific error within the timeout, and no secret in any output.

  metrics_source_checks.py MT WORKSPACE WORKDIR
"""
import atexit
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

MT, WS, WORK = sys.argv[1], sys.argv[2], sys.argv[3]


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from free_ports import free_port  # noqa: E402  (below the ephemeral range: see there why)


PORT = free_port()   # the TLS Prometheus
PASSWORD = "mt-test-pass-7f3a"   # test-only; the web config holds only its bcrypt hash
BCRYPT = "$2b$04$jKZjmiVZ0dqXiyAF5UlMseF57pUyzqvxbKKH28bU/sGFtLFAr9wi2"
TOKEN = "tok-5b1e9c0d7a"         # a bearer token no server accepts (the 401 case)
failures = []
outputs = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def sh(*cmd):
    subprocess.run(cmd, check=True, capture_output=True, timeout=60)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


# ---- a CA, a server certificate for 127.0.0.1, and a second CA that signs nothing ---------
pki = os.path.join(WORK, "pki")
os.makedirs(pki)
for ca in ("ca", "other-ca"):
    sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN=mt test {ca}",
       "-keyout", f"{pki}/{ca}.key", "-out", f"{pki}/{ca}.pem")
sh("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", f"{pki}/server.key",
   "-out", f"{pki}/server.csr")
write(f"{pki}/san.ext", "subjectAltName=IP:127.0.0.1\n")
sh("openssl", "x509", "-req", "-in", f"{pki}/server.csr", "-CA", f"{pki}/ca.pem", "-CAkey", f"{pki}/ca.key",
   "-CAcreateserial", "-days", "2", "-extfile", f"{pki}/san.ext", "-out", f"{pki}/server.pem")

# ---- the central store: a real Prometheus on a copy of the job's TSDB, TLS + basic auth ----
job_dir = next(os.path.join(WS, d) for d in os.listdir(WS) if d.startswith("7877-") and os.path.isdir(os.path.join(WS, d)))
store = os.path.join(WORK, "store")
shutil.copytree(os.path.join(job_dir, "prometheus"), store)
write(f"{WORK}/web.yml", f"tls_server_config:\n  cert_file: {pki}/server.pem\n  key_file: {pki}/server.key\n"
                         f"basic_auth_users:\n  mt: {BCRYPT}\n")
write(f"{WORK}/prom.yml", "global: {}\n")
prom = subprocess.Popen(["prometheus", f"--config.file={WORK}/prom.yml", f"--storage.tsdb.path={store}",
                         f"--web.listen-address=127.0.0.1:{PORT}", f"--web.config.file={WORK}/web.yml",
                         "--storage.tsdb.retention.time=100y", "--log.level=warn"],
                        stdout=subprocess.DEVNULL, stderr=open(f"{WORK}/prometheus.err", "w"))


def stop_prometheus():
    if prom.poll() is None:
        prom.terminate()
        try:
            prom.wait(timeout=20)
        except subprocess.TimeoutExpired:
            prom.kill()


atexit.register(stop_prometheus)   # also when a step below fails with an exception

# ---- endpoints that are not a working Prometheus -----------------------------------------
html = socket.socket()                       # answers every request with an HTML page
html.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
html.bind(("127.0.0.1", 0))
HTML_PORT = html.getsockname()[1]
html.listen(8)
silent = socket.socket()                     # accepts and never answers
silent.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
silent.bind(("127.0.0.1", 0))
SILENT_PORT = silent.getsockname()[1]
silent.listen(8)
held = []


def serve_html():
    while True:
        try:
            c, _ = html.accept()
        except OSError:
            return
        c.recv(65536)
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n<html><body>Grafana</body></html>")
        c.close()


def hold_silent():
    while True:
        try:
            c, _ = silent.accept()
        except OSError:
            return
        held.append(c)


threading.Thread(target=serve_html, daemon=True).start()
threading.Thread(target=hold_silent, daemon=True).start()
closed = socket.socket()                      # a port with nothing listening
closed.bind(("127.0.0.1", 0))
closed_port = closed.getsockname()[1]
closed.close()

# A job launched without mt: a plain sbatch output in the user's own log format, time-stamped
# inside the store's data; its window on the store comes from these stamps.
with open(os.path.join(WS, "slurm-555.out"), "w") as f:
    for i in range(0, 25):
        f.write(f"2026-02-10 {8 + i // 6:02d}:{(i % 6) * 10:02d}:00,000 INFO trainer: step={i * 10} loss={3.0 - i * 0.05:.3f}\n")
    f.write("2026-02-10 12:00:30,000 INFO trainer: done\n")
os.environ["MT_TEST_PROM_PASSWORD"] = PASSWORD
os.environ["MT_TEST_PROM_TOKEN"] = TOKEN
write(f"{WORK}/wrong-password", "not-the-password\n")
base = f"https://127.0.0.1:{PORT}"
write(f"{WORK}/mt.yaml", f"""workspace: {WS}
metrics:
  sources:
    - name: central
      url: {base}
      basic_auth: {{user: mt, password: {{env: MT_TEST_PROM_PASSWORD}}}}
      ca_file: {pki}/ca.pem
      timeout_seconds: 10
    - name: wrong-password
      url: {base}
      basic_auth: {{user: mt, password: {{file: {WORK}/wrong-password}}}}
      ca_file: {pki}/ca.pem
    - name: token
      url: {base}
      bearer_token: {{env: MT_TEST_PROM_TOKEN}}
      ca_file: {pki}/ca.pem
    - name: other-ca
      url: {base}
      basic_auth: {{user: mt, password: {{env: MT_TEST_PROM_PASSWORD}}}}
      ca_file: {pki}/other-ca.pem
    - name: unreachable
      url: http://127.0.0.1:{closed_port}
      timeout_seconds: 3
    - name: not-prometheus
      url: http://127.0.0.1:{HTML_PORT}
    - name: silent
      url: http://127.0.0.1:{SILENT_PORT}
      timeout_seconds: 2
    - name: small
      url: {base}
      basic_auth: {{user: mt, password: {{env: MT_TEST_PROM_PASSWORD}}}}
      ca_file: {pki}/ca.pem
      max_samples: 1000
    - name: unset-secret
      url: {base}
      bearer_token: {{env: MT_TEST_NOT_SET}}
""")


JOB = "555"


def mt(*args, expect=0, config=f"{WORK}/mt.yaml"):
    t0 = time.time()
    p = subprocess.run([MT, "query", JOB, *args, "--config", config], capture_output=True, text=True, timeout=120)
    p.wall = time.time() - t0
    outputs.append(p.stdout + p.stderr)
    if p.returncode != expect:
        print(p.stdout[-1500:], p.stderr[-1500:])
    check(p.returncode == expect, f"mt query {JOB} {' '.join(args)} exits {expect} (got {p.returncode}, {p.wall:.1f} s)")
    return p


deadline = time.time() + 60
while time.time() < deadline:
    p = subprocess.run(["curl", "-sk", "-u", f"mt:{PASSWORD}", f"{base}/-/ready"], capture_output=True, text=True)
    if p.returncode == 0 and "Ready" in p.stdout:
        break
    time.sleep(0.5)
check(time.time() < deadline, "the central-store Prometheus (TLS + basic auth) is ready")

try:
    # ---- discover and promql through the configured source --------------------------------
    d = mt("--source", "central", "--discover", "--json")
    if d.returncode == 0:
        a = json.loads(d.stdout)
        check(a["tsdb"]["source"] == "remote", "discover: the answer says it came from a remote source")
        check(a["tsdb"].get("window_source") == "job log" and a["window"] == {"start": "2026-02-10T08:00:00Z", "end": "2026-02-10T12:00:30Z"},
              f"discover: the window from the job log's own stamps ({a['window']}, {a['tsdb'].get('window_source')})")
        check("central" in a["tsdb"].get("note", "") and PASSWORD not in d.stdout, "discover: the source is named, no secret")
        fams = {f["prefix"]: f["count"] for f in a.get("families", [])}
        check(any(p.startswith("hw_") for p in fams) and sum(fams.values()) > 20, f"discover: metric families {sorted(fams)[:6]}")
        check(len(a["hosts"]) == 24, f"discover: the 24 hosts of the job ({len(a['hosts'])})")
    p = mt("--source", "central", "--promql", "max by (host) (hw_gpu_power_watts)", "--json")
    if p.returncode == 0:
        a = json.loads(p.stdout)
        check(a.get("series_total") == 24 and a["window"]["start"] == "2026-02-10T12:00:30Z",
              f"promql at the end of the job's window: one series per host ({a.get('series_total')}, {a['window']})")
    p = mt("--source", "central", "--promql", "avg by (host) (hw_gpu_temperature_celsius)", "--start", "2026-02-10T09:00:00Z",
           "--end", "2026-02-10T10:00:00Z", "--json")
    if p.returncode == 0:
        a = json.loads(p.stdout)
        check(a.get("series_total") == 24 and a["tsdb"].get("window_source") == "arguments" and a["series"][0].get("n", 0) > 10,
              f"promql range over the given window: 24 host series of >10 points ({a.get('series_total')}, {a['series'][:1]})")
    p = mt("--source", "central", "--promql", "count(hw_gpu_power_watts)", "--time", "2026-02-10T10:00:00Z", "--json")
    if p.returncode == 0:
        a = json.loads(p.stdout)
        check(a["series"] and a["series"][0]["last"] == 192, f"promql instant: 192 GPUs reporting ({a['series'][:1]})")

    # ---- the same through the MCP tool (mt serve reads metrics.sources from its config) -----
    srv = subprocess.Popen([MT, "serve", "--config", f"{WORK}/mt.yaml"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    reqs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "source-test", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "query_tsdb", "arguments": {"job": JOB, "mode": "discover", "source": "central"}}},
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
             "params": {"name": "query_tsdb", "arguments": {"job": JOB, "mode": "discover", "source": "wrong-password"}}}]
    out, err = srv.communicate("".join(json.dumps(r) + "\n" for r in reqs), timeout=120)
    outputs.append(out + err)
    res = {m.get("id"): m.get("result", {}) for m in map(json.loads, out.splitlines())}
    sc = res.get(2, {}).get("structuredContent", {})
    check(sc.get("tsdb", {}).get("source") == "remote" and len(sc.get("hosts", [])) == 24,
          "MCP query_tsdb with source: discover on the central store (24 hosts)")
    bad = res.get(3, {})
    check(bad.get("isError") is True and "HTTP 401" in json.dumps(bad), "MCP query_tsdb: a refused credential is a tool error naming 401")

    # ---- bad input: each a specific error, within its timeout, no secret ------------------
    p = mt("--source", "wrong-password", "--discover", expect=1)
    check("HTTP 401" in p.stderr and "refused" in p.stderr, f"wrong password: 401 named ({p.stderr.strip()[:160]})")
    p = mt("--source", "token", "--discover", expect=1)
    check("HTTP 401" in p.stderr and TOKEN not in p.stderr, "bearer token refused: 401, the token not shown")
    p = mt("--source", "other-ca", "--discover", expect=1)
    check("TLS with https://127.0.0.1" in p.stderr and "ca_file" in p.stderr, f"untrusted server certificate: TLS error ({p.stderr.strip()[:160]})")
    p = mt("--source", "unreachable", "--discover", expect=1)
    check("cannot reach Prometheus" in p.stderr and p.wall < 15, f"unreachable endpoint: named, {p.wall:.1f} s")
    p = mt("--source", "not-prometheus", "--discover", expect=1)
    check("is it a Prometheus HTTP API" in p.stderr, f"HTML endpoint: not Prometheus ({p.stderr.strip()[:160]})")
    p = mt("--source", "silent", "--discover", expect=1)
    check("did not answer" in p.stderr and p.wall < 12, f"endpoint that never answers: timeout after {p.wall:.1f} s (limit 2 s a request)")
    p = mt("--source", "small", "--promql", "hw_gpu_power_watts", "--step", "60", expect=1)
    check("max_samples (1000)" in p.stderr, f"over max_samples: refused ({p.stderr.strip()[:160]})")
    p = mt("--source", "unset-secret", "--discover", expect=1)
    check("MT_TEST_NOT_SET is not set" in p.stderr, "a secret whose environment variable is unset is named")
    p = mt("--source", "nowhere", "--discover", expect=2)
    check("no metrics source 'nowhere'" in p.stderr and "central" in p.stderr, "an unknown source lists the configured ones")
    # A store with mt's own names (per-job TSDBs gathered centrally) runs every playbook, on the
    # job's hosts, with its steps placed in time by its log.
    p = mt("--source", "central", "--playbook", "hang", "--json")
    if p.returncode == 0:
        a = json.loads(p.stdout)
        check(a.get("playbook") == "hang" and a["tsdb"]["source"] == "remote" and len(a.get("hosts", [])) == 24
              and any(n.startswith("step times: from the step lines") for n in a.get("notes", [])),
              f"playbook hang on a store with mt's names: runs on the job's 24 hosts, steps timed by its log "
              f"({a.get('playbook')}, {len(a.get('hosts', []))} hosts, {[n[:60] for n in a.get('notes', [])]})")

    # ---- configuration errors: refused at load, naming the source and the setting ---------
    for name, body, want in [
        ("inline-secret", "bearer_token: {value: abc}", "is a secret: give it as env or file"),
        ("inline-auth-header", "headers: {Authorization: Bearer abc}", "never inline"),
        ("bad-scheme", "url: ftp://x", "url must start with http"),
        ("both-auth", "bearer_token: {env: A}\n      basic_auth: {user: u, password: {env: B}}", "not both"),
    ]:
        url = "" if "url:" in body else f"\n      url: {base}"
        write(f"{WORK}/{name}.yaml", f"workspace: {WS}\nmetrics:\n  sources:\n    - name: {name}{url}\n      {body}\n")
        p = mt("--source", name, "--discover", expect=1, config=f"{WORK}/{name}.yaml")
        check(want in p.stderr and name in p.stderr, f"config {name}: '{want}'")

    check(not any(PASSWORD in o or TOKEN in o for o in outputs), "no output of any call contains a secret")
finally:
    stop_prometheus()
    html.close()
    silent.close()
    for c in held:
        c.close()

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
