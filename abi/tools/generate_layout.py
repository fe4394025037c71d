#!/usr/bin/env python3
"""Writes the frozen layout checks (layout.inc) of a released ABI version.

Run once, when a version is released:
  abi/tools/generate_layout.py abi/released/1.1 > abi/released/1.1/layout.inc

Finds every `typedef struct Name { ... } Name;` in the frozen headers of the
release, compiles a probe against those headers that prints the offset of
every field and the size of every struct, and prints KILN_CHECK_OFFSET /
KILN_CHECK_SIZE lines for abi/tests/released_layout_test.c. The lines are for
the pointer width of the compiler used (LP64 here).
"""
import os
import re
import subprocess
import sys
import tempfile

STRUCT_RE = re.compile(r"typedef\s+struct\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;", re.S)
COMMENT_RE = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def field_names(body):
    names = []
    for decl in COMMENT_RE.sub("", body).split(";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        fn = re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)
        if fn:
            names.append(fn.group(1))
            continue
        m = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*$", decl)
        if not m:
            raise SystemExit(f"cannot parse field declaration: {decl!r}")
        names.append(m.group(1))
    return names


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    release = sys.argv[1]
    header_dir = os.path.join(release, "kiln")
    structs = []
    headers = sorted(h for h in os.listdir(header_dir) if h.endswith(".h"))
    for header in headers:
        text = open(os.path.join(header_dir, header)).read()
        for m in STRUCT_RE.finditer(text):
            if m.group(1) != m.group(3):
                continue
            structs.append((m.group(1), field_names(m.group(2))))
    lines = ["#include <stddef.h>", "#include <stdio.h>"]
    lines += [f'#include "kiln/{h}"' for h in headers]
    lines.append("int main(void) {")
    for name, fields in structs:
        for f in fields:
            lines.append(
                f'  printf("KILN_CHECK_OFFSET({name}, {f}, %zu);\\n", '
                f"offsetof({name}, {f}));")
        lines.append(
            f'  printf("KILN_CHECK_SIZE({name}, %zu);\\n", sizeof({name}));')
    lines += ["  return 0;", "}"]
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "probe.c")
        exe = os.path.join(tmp, "probe")
        with open(src, "w") as out:
            out.write("\n".join(lines) + "\n")
        subprocess.run([os.environ.get("CC", "cc"), "-std=c11", "-I", release,
                        "-o", exe, src], check=True)
        probe = subprocess.run([exe], check=True, capture_output=True, text=True)
    version = os.path.basename(os.path.normpath(release))
    print(f"/* Offsets and sizes of every struct in the released {version} "
          "headers on LP64 targets,\n * generated once at release by "
          "abi/tools/generate_layout.py. Never edit. */")
    sys.stdout.write(probe.stdout)


if __name__ == "__main__":
    main()
