#!/usr/bin/env python3
"""Hostile HTTP clients for mt-exporter (standard library only).

slow_clients.py PORT READY_FILE REPORT_FILE --idle N --dribble M --duration S

Opens N connections that never send anything and M connections that send a valid
request one byte per second, writes READY_FILE once all are open, keeps them for up to
S seconds, and writes REPORT_FILE: for each dribbling connection, how many seconds
after it opened the server closed it (or -1 if it was still open at the end), and the
first bytes the server answered.
"""
import argparse
import json
import socket
import time

p = argparse.ArgumentParser()
p.add_argument("port", type=int)
p.add_argument("ready")
p.add_argument("report")
p.add_argument("--idle", type=int, default=8)
p.add_argument("--dribble", type=int, default=8)
p.add_argument("--duration", type=float, default=20)
a = p.parse_args()

REQUEST = b"GET /metrics HTTP/1.1\r\nHost: x\r\nUser-Agent: a-very-slow-client-that-never-finishes\r\n" * 50

idle = [socket.create_connection(("127.0.0.1", a.port)) for _ in range(a.idle)]
dribblers = []
for _ in range(a.dribble):
    s = socket.create_connection(("127.0.0.1", a.port))
    s.setblocking(False)
    dribblers.append({"sock": s, "opened": time.monotonic(), "closed_after": -1.0, "answer": "", "sent": 0})
with open(a.ready, "w") as f:
    f.write("ready\n")

end = time.monotonic() + a.duration
while time.monotonic() < end and any(d["closed_after"] < 0 for d in dribblers):
    for d in dribblers:
        if d["closed_after"] >= 0:
            continue
        s = d["sock"]
        try:
            data = s.recv(4096)
            if data:
                d["answer"] += data[:64].decode("latin-1")
            else:
                d["closed_after"] = time.monotonic() - d["opened"]
                continue
        except BlockingIOError:
            pass
        except OSError:
            d["closed_after"] = time.monotonic() - d["opened"]
            continue
        try:
            s.send(REQUEST[d["sent"]:d["sent"] + 1])
            d["sent"] += 1
        except BlockingIOError:
            pass
        except OSError:
            d["closed_after"] = time.monotonic() - d["opened"]
    time.sleep(1)

with open(a.report, "w") as f:
    json.dump([{"closed_after": d["closed_after"], "answer": d["answer"], "sent": d["sent"]} for d in dribblers], f)
for s in idle:
    s.close()
