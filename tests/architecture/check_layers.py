#!/usr/bin/env python3
"""Fails when a source file includes a header from a layer above its own (or from a folder
it must not know), so the dependency direction of docs/architecture.md holds by test, not by
convention. Prints every violation as FILE:LINE: INCLUDE (FOLDER may not include TARGET).

  check_layers.py SOURCE_ROOT
"""
import os
import re
import sys

BASE = ["base"]
LAUNCH = ["launcher/launch"] + BASE
TOOLS_LOW = ["tools/common", "mcp"] + BASE
# folder → the folders its files may include (its own is always allowed)
RULES = {
    "base": BASE,
    "mcp": BASE,
    "exporter": [],                                   # stays apart: links nothing of mt's
    "launcher/launch": BASE,
    "launcher/approval": LAUNCH,
    "launcher/sim": ["launcher/demo"] + LAUNCH,      # mt_sim holds sim/ and demo/
    "launcher/demo": ["launcher/sim"] + LAUNCH,
    "launcher/job": LAUNCH,
    "tools/common": ["mcp"] + BASE,
    "tools/logs": TOOLS_LOW,
    "tools/tsdb": TOOLS_LOW,
    "tools/shared_store": ["tools/logs", "tools/tsdb"] + TOOLS_LOW,
    "tools/supervise": ["tools/logs"] + TOOLS_LOW,
    "tools/trace": ["mcp"] + BASE,
    "tools/perf": ["tools/logs", "tools/tsdb", "tools/trace"] + TOOLS_LOW,
    "tools/compare": ["tools/perf", "tools/trace", "tools/shared_store", "tools/logs", "tools/tsdb"] + TOOLS_LOW,
    "tools/gate": ["tools/perf", "tools/trace", "tools/logs", "tools/tsdb", "launcher/approval"] + LAUNCH + TOOLS_LOW,
    "tools/catalog": ["tools/gate", "tools/trace", "tools/compare", "tools/shared_store", "tools/supervise", "tools/perf", "tools/logs", "tools/tsdb",
                      "launcher/approval"] + LAUNCH + TOOLS_LOW,
    "tools/cli": ["tools/catalog", "tools/trace", "tools/gate", "tools/compare", "tools/shared_store", "tools/supervise", "tools/perf", "tools/logs", "tools/tsdb",
                  "launcher/approval", "launcher/sim", "launcher/demo"] + LAUNCH + TOOLS_LOW,
}
# Known violations, each to be removed by the issue that lists it (not a place to add more).
KNOWN = {}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def folder_of(rel):
    for f in sorted(RULES, key=len, reverse=True):
        if rel == f or rel.startswith(f + "/"):
            return f
    return None


def main():
    root = sys.argv[1]
    bad, known, files = [], set(), 0
    for folder in RULES:
        for dirpath, _, names in os.walk(os.path.join(root, folder)):
            for name in names:
                if not name.endswith((".h", ".cpp", ".cc")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                if folder_of(rel) != folder:
                    continue   # a subfolder with rules of its own
                files += 1
                for n, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                    m = INCLUDE.match(line)
                    if not m or "/" not in m.group(1):
                        continue
                    target = folder_of(m.group(1))
                    if target is None or target == folder or target in RULES[folder]:
                        continue
                    if (folder, target) in KNOWN:
                        known.add((folder, target))
                        continue
                    bad.append(f"{rel}:{n}: {m.group(1)} ({folder} may not include {target})")
    for v in bad:
        print(v)
    for k in sorted(known):
        print(f"known: {k[0]} → {k[1]}: {KNOWN[k]}")
    print(f"check_layers: {files} files, {len(bad)} violations, {len(known)} known")
    return 1 if bad or files == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
