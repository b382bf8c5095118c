#!/usr/bin/env python3
"""Test-side TFEvent writer: appends a scalar Event per step in real time, the way
tensorboardX does (TFRecord framing with masked CRC-32C, `simple_value` scalars). Each
record is written in two pieces with a pause between them, so a reader regularly sees a
partial record at the end of the file. Writes STEPS_JSON (step -> wall_time and values)
for the test to compare against what Prometheus stored.

usage: tfevent_writer.py EVENT_FILE STEPS PERIOD_SECONDS STEPS_JSON
"""
import json
import os
import struct
import sys
import time

_POLY = 0x82F63B78
_TABLE = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ _POLY if c & 1 else c >> 1
    _TABLE.append(c)


def crc32c(data: bytes) -> int:
    c = 0xFFFFFFFF
    for b in data:
        c = (c >> 8) ^ _TABLE[(c ^ b) & 0xFF]
    return c ^ 0xFFFFFFFF


def masked(data: bytes) -> int:
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def varint(v: int) -> bytes:
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field_bytes(num: int, payload: bytes) -> bytes:
    return varint((num << 3) | 2) + varint(len(payload)) + payload


def event(wall: float, step: int, scalars: dict) -> bytes:
    summary = b"".join(
        field_bytes(1, field_bytes(1, tag.encode()) + varint((2 << 3) | 5) + struct.pack("<f", v))
        for tag, v in scalars.items())
    msg = varint((1 << 3) | 1) + struct.pack("<d", wall) + varint(2 << 3) + varint(step)
    if scalars:
        msg += field_bytes(5, summary)
    return msg


def record(data: bytes) -> bytes:
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked(length)) + data + struct.pack("<I", masked(data))


def main() -> int:
    path, steps, period, steps_json = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    written = {}
    with open(path, "ab", buffering=0) as f:
        first = event(time.time(), 0, {})
        f.write(record(first))
        for step in range(1, steps + 1):
            time.sleep(period)
            wall = time.time()
            scalars = {
                "learning/loss": 10.0 - 0.125 * step,
                "perf/step_time_seconds": 1.0 + step / 64.0,
                "perf/per_device_tokens_per_sec": 3000.0 + step,
            }
            rec = record(event(wall, step, scalars))
            f.write(rec[:20])
            time.sleep(min(0.2, period / 4))
            f.write(rec[20:])
            written[step] = {"wall_time": wall, **scalars}
            with open(steps_json + ".tmp", "w") as j:
                json.dump(written, j)
            os.replace(steps_json + ".tmp", steps_json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
