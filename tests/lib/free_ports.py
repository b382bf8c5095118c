#!/usr/bin/env python3
"""Free loopback ports for the tests, chosen *below* the kernel's ephemeral range.

Why not bind(0): the kernel hands out ports from net.ipv4.ip_local_port_range both for bind(0)
and for every outgoing connection (a curl, a Prometheus scrape). A port picked that way and
released again can be taken as the source port of another test's connection before our server
binds it — rare, but on a loaded CI with ctest -j2 it happened (an exporter that never came
up). Ports under the range are never given out implicitly, so only another test picking the
same random block can collide, and every port is checked by binding it.

  free_ports.py N [--block]   prints N ports; with --block they are consecutive (P..P+N-1)
  import free_ports; free_ports.free_ports(n, block=False) -> list of ints
"""
import random
import socket
import sys

LOWEST = 10000


def _ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bindable(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def free_ports(n, block=False):
    """n free ports in [LOWEST, ephemeral low); consecutive when block is true."""
    high = _ephemeral_low()
    if high - LOWEST < 10 * n:   # an unusual range setting: fall back to the kernel's choice
        ports = []
        for _ in range(n):
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                ports.append(s.getsockname()[1])
        return ports
    rng = random.SystemRandom()
    for _ in range(500):
        if block:
            start = rng.randrange(LOWEST, high - n)
            candidates = list(range(start, start + n))
        else:
            candidates = rng.sample(range(LOWEST, high), n)
        if all(_bindable(p) for p in candidates):
            return candidates
    raise SystemExit(f"no {n} free loopback ports in {LOWEST}-{high - 1}")


def free_port():
    return free_ports(1)[0]


if __name__ == "__main__":
    args = sys.argv[1:]
    count = int(args[0]) if args and args[0].isdigit() else 1
    print(" ".join(str(p) for p in free_ports(count, block="--block" in args)))
