#!/usr/bin/env python3
"""Fails when a function in the product code is longer than the limit of
docs/architecture.md (120 lines from its signature to its closing brace), so long builders
are split by test, not by review. Prints each as FILE:LINE: NAME (N lines).

  check_function_length.py SOURCE_ROOT [--limit N] [--all]

A function body is a brace block opened at namespace or class scope after a ')' (a
signature, possibly followed by const/override/noexcept/-> T/an initializer list); lambdas
and nested blocks count towards the function that holds them. Comments, string and
character literals (raw strings included) are skipped so braces inside them do not count.
A table at namespace scope is data, not a function, and is not measured.
"""
import os
import re
import sys

PRODUCT = ["base", "mcp", "tools", "launcher", "exporter"]
SOURCES = (".cpp", ".cc", ".h")


def strip_code(text):
    """The text with comments and literals blanked (newlines kept, so lines still count)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
            continue
        m = re.match(r'(?:u8|u|U|L)?R"([^(\s]{0,16})\(', text[i:i + 24])
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
            continue
        if c in "\"'":
            # a digit separator (1'000) is not a character literal
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j + 1, n) - i))
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


SCOPE = re.compile(r"\b(namespace|class|struct|union|enum)\b[^()]*$|\bextern\s*$")
SIGNATURE = re.compile(r"\)\s*(const|override|final|noexcept|mutable|&|&&|\s)*"
                       r"(->\s*[\w:<>,\s*&]+)?\s*$|\)\s*:\s*[\w:]+\s*[({].*$")
NAME = re.compile(r"([~\w:]+(?:<[^()]*>)?)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*"
                  r"(?:const|override|final|noexcept|mutable|\s|->[^{]*)*(?::[^{]*)?$", re.S)


def functions(path):
    """(name, first line, line count) of every function body in the file."""
    code = strip_code(open(path, encoding="utf-8", errors="replace").read())
    stack = []            # per open brace: "scope", "function" or "block"
    head_start = 0        # offset where the current declaration's text began
    found = []
    line = 1
    starts = {}           # depth of an open function → (name, line)
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c in ";}":
            if c == "}":
                if stack:
                    kind = stack.pop()
                    if kind == "function":
                        name, first = starts.pop(len(stack))
                        found.append((name, first, line - first + 1))
            if not stack or stack[-1] == "scope":
                head_start = i + 1
        elif c == "{":
            if not stack or stack[-1] == "scope":
                head = code[head_start:i]
                flat = " ".join(head.split())
                if SCOPE.search(flat) or flat.endswith("=") or "=" in flat.split("(")[0]:
                    stack.append("scope" if SCOPE.search(flat) else "block")
                elif ")" in flat and SIGNATURE.search(flat.rstrip()):
                    m = NAME.search(flat)
                    name = m.group(1) if m else flat[-60:]
                    first = line - head.rstrip().count("\n") + (len(head) - len(head.lstrip()) and
                                                                head[:len(head) - len(head.lstrip())].count("\n"))
                    starts[len(stack)] = (name, first)
                    stack.append("function")
                else:
                    stack.append("block")
                head_start = i + 1
            else:
                stack.append("block")
    return found


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    root = args[0]
    limit = int(args[args.index("--limit") + 1]) if "--limit" in args else 120
    show_all = "--all" in args
    long_ones = []
    for top in PRODUCT:
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith(SOURCES):
                    p = os.path.join(d, f)
                    for name, first, count in functions(p):
                        if count > limit or show_all:
                            long_ones.append((count, os.path.relpath(p, root), first, name))
    for count, p, first, name in sorted(long_ones, reverse=True):
        print(f"{p}:{first}: {name} ({count} lines)")
    if show_all:
        return 0
    if long_ones:
        print(f"{len(long_ones)} function(s) longer than {limit} lines: split them into "
              "small functions that each do one thing (docs/architecture.md)", file=sys.stderr)
        return 1
    print(f"no function in the product is longer than {limit} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
