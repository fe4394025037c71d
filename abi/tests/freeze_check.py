#!/usr/bin/env python3
"""Value-by-value freeze check of a released extension API version.

  freeze_check.py --cc CC --released abi/released/1.1 --current abi/include
                  [--target-flags "-m32 -ffreestanding"]
                  [--mutate FILE OLD NEW ... --expect fail]

Compiles (never runs) one probe against the frozen copy of the release and
the same probe against today's headers, with the same compiler and target
flags, and compares what the compiler computed:

  * every object-like #define of the frozen headers with a value (an integer
    constant expression or a string literal): today's value must be equal.
    Struct sizes (KILN_*_STRUCT_SIZE, the "current" aliases) may only grow;
    the versioned ones (KILN_*_STRUCT_SIZE_1_0) are equal. The version
    numbers of the release itself (minor, patch, strings) are reported, not
    compared; their majors must be equal.
  * function-like macros of the ABI (KILN_MAKE_VERSION, KILN_VERSION_*) on
    sample arguments;
  * every field offset of every struct of the frozen headers: equal; every
    struct size: today's >= frozen (structs only grow at the end).

The values are read from the assembly the compiler writes for constants
(gcc/clang -S), so the check also works for a target that cannot link or run
here, such as -m32 without the 32-bit C library (-ffreestanding: the headers
only need <stddef.h> and <stdint.h>).

It also checks that every struct of the release has a baseline: KILN_CHECK_SIZE
lines in layout.inc and a class-decl in kiln_extension_api.abi.xml.

--mutate applies an edit to a temporary copy of today's headers; with
--expect fail the check passes only if the freeze check detects the edit
(the controls that prove the check can fail). Exit 77 (CTest: Skipped) when
the target flags cannot compile even the frozen copy.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tools"))
from generate_layout import COMMENT_RE, STRUCT_RE, field_names  # noqa: E402

SKIP = 77
DEFINE_RE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)(\(?)((?:[^\n]*\\\n)*[^\n]*)",
                       re.M)
# Values that name the release itself: reported, never compared.
RELEASE_SPECIFIC = re.compile(
    r"^KILN_(RUNTIME_VERSION.*|(C_API|EXT_API)_VERSION_(MINOR|PATCH|STRING))$")
# May only grow (a newer release may append fields / raise the version).
MAY_GROW = re.compile(r"^KILN_(\w+_STRUCT_SIZE|(C_API|EXT_API)_VERSION)$")
# Function-like ABI macros, evaluated on sample arguments.
FUNCTION_PROBES = [
    "KILN_MAKE_VERSION(1, 2, 3)", "KILN_MAKE_VERSION(2, 1023, 4095)",
    "KILN_VERSION_MAJOR(0x12345678u)", "KILN_VERSION_MINOR(0x12345678u)",
    "KILN_VERSION_PATCH(0x12345678u)",
]
DATA_SIZES = {".byte": 1, ".value": 2, ".short": 2, ".2byte": 2, ".long": 4,
              ".4byte": 4, ".int": 4, ".quad": 8, ".8byte": 8}


def headers_of(header_dir):
    return sorted(h for h in os.listdir(os.path.join(header_dir, "kiln"))
                  if h.endswith(".h"))


def scan_release(release):
    """Object-like #defines with a body {name: body}, and (struct, fields)."""
    defines, structs = {}, []
    for header in headers_of(release):
        text = open(os.path.join(release, "kiln", header)).read()
        for m in DEFINE_RE.finditer(COMMENT_RE.sub("", text)):
            name, paren, body = m.group(1), m.group(2), m.group(3)
            body = body.replace("\\\n", " ").strip()
            if paren or not body or name in defines:
                continue
            defines[name] = body
        for m in STRUCT_RE.finditer(text):
            if m.group(1) == m.group(3):
                structs.append((m.group(1), field_names(m.group(2))))
    return defines, structs


INT_BODY_RE = re.compile(r"^[\w\s()+\-*/<>|&~^,?:!=]+$")
STR_BODY_RE = re.compile(r'^"[^"\\]*"$')


def classify(bodies):
    """Integer constant expressions and string literals; the rest (export
    attributes, extern "C" braces) has no value to freeze."""
    kinds = {}
    for name, body in bodies.items():
        if STR_BODY_RE.match(body):
            kinds[name] = "str"
        elif INT_BODY_RE.match(body) and "__" not in body:
            kinds[name] = "int"
    return kinds


def probe_source(headers, items, structs, mark_missing):
    lines = ["#include <stddef.h>", "#include <stdint.h>"]
    lines += [f'#include "kiln/{h}"' for h in headers]
    for i, (kind, expr, guard) in enumerate(items):
        if mark_missing and guard:
            lines.append(f"#ifdef {guard}")
        if kind == "str":
            lines.append(f"const char kiln_freeze_v{i}[] = {expr};")
        else:
            lines.append(
                f"const unsigned long long kiln_freeze_v{i} = "
                f"(unsigned long long)({expr});")
        if mark_missing and guard:
            lines.append("#else")
            lines.append(f'const char kiln_freeze_v{i}[] = "<missing>";')
            lines.append("#endif")
    del structs  # offsets and sizes are items too
    return "\n".join(lines) + "\n"


def parse_assembly(asm, count):
    """Values of kiln_freeze_v<i> from the data directives after each label."""
    values = {}
    current, data, text = None, bytearray(), None

    def flush():
        if current is not None:
            values[current] = text if text is not None else int.from_bytes(
                bytes(data), "little")

    for raw in asm.splitlines():
        line = raw.split("#")[0].strip() if not raw.strip().startswith(
            ".string") and not raw.strip().startswith(".ascii") else raw.strip()
        m = re.match(r"^_?kiln_freeze_v(\d+):$", line)
        if m:
            flush()
            current, data, text = int(m.group(1)), bytearray(), None
            continue
        if current is None:
            continue
        if line.endswith(":") or line.startswith(".size") or line.startswith(
                ".globl") or line.startswith(".section") or line.startswith(
                    ".text") or line.startswith(".ident"):
            flush()
            current = None
            continue
        parts = line.split(None, 1)
        if not parts:
            continue
        op = parts[0]
        if op in DATA_SIZES:
            for v in parts[1].split(","):
                data += (int(v.strip(), 0) & ((1 << (8 * DATA_SIZES[op])) - 1)
                         ).to_bytes(DATA_SIZES[op], "little")
        elif op == ".zero":
            data += bytes(int(parts[1].split(",")[0], 0))
        elif op in (".string", ".asciz", ".ascii"):
            literal = parts[1]
            decoded = bytes(literal[1:-1], "utf-8").decode("unicode_escape")
            text = (text or "") + decoded.rstrip("\0")
    flush()
    missing = [i for i in range(count) if i not in values]
    if missing:
        raise SystemExit(f"freeze_check: could not read kiln_freeze_v{missing[0]} "
                         "from the compiler's assembly")
    return values


def evaluate(cc, flags, include_dir, headers, items, workdir, tag,
             mark_missing):
    src = os.path.join(workdir, f"probe_{tag}.c")
    asm = os.path.join(workdir, f"probe_{tag}.s")
    with open(src, "w") as out:
        out.write(probe_source(headers, items, None, mark_missing))
    r = subprocess.run([cc, *flags, "-std=c11", "-O0", "-S", "-fno-common",
                        "-I", include_dir, "-o", asm, src],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr
    return parse_assembly(open(asm).read(), len(items)), ""


def check_baselines(release, structs):
    """Every released struct has layout.inc lines and an abidiff baseline
    (the extension API anchor's, or libkiln.so's for C API structs)."""
    errors = []
    layout = os.path.join(release, "layout.inc")
    layout_text = open(layout).read() if os.path.exists(layout) else ""
    xml_text = ""
    for xml in ("kiln_extension_api.abi.xml", "libkiln.abi.xml"):
        if os.path.exists(os.path.join(release, xml)):
            xml_text += open(os.path.join(release, xml)).read()
    for name, _ in structs:
        if f"KILN_CHECK_SIZE({name}," not in layout_text:
            errors.append(f"{layout}: no KILN_CHECK_SIZE({name}, ...): "
                          "regenerate with abi/tools/generate_layout.py at release")
        if f"name='{name}'" not in xml_text:
            errors.append(
                f"{release}: no abidiff baseline of struct {name} (neither "
                "kiln_extension_api.abi.xml nor libkiln.abi.xml): anchor it in "
                "conformance/abi/extension_api_anchor.c before the release")
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--released", required=True)
    ap.add_argument("--current", required=True)
    ap.add_argument("--target-flags", default="")
    ap.add_argument("--mutate", nargs=3, action="append", default=[],
                    metavar=("FILE", "OLD", "NEW"))
    ap.add_argument("--expect", choices=("pass", "fail"), default="pass")
    args = ap.parse_args()
    flags = shlex.split(args.target_flags)
    release = os.path.normpath(args.released)
    version = os.path.basename(release)
    label = f"{version} {args.target_flags or 'native'}".strip()

    defines, structs = scan_release(release)
    frozen_headers = headers_of(release)
    with tempfile.TemporaryDirectory() as work:
        current = args.current
        if args.mutate:
            current = os.path.join(work, "mutant")
            shutil.copytree(os.path.join(args.current, "kiln"),
                            os.path.join(current, "kiln"))
            for file, old, new in args.mutate:
                old, new = (s.encode().decode("unicode_escape") for s in (old, new))
                path = os.path.join(current, "kiln", file)
                text = open(path).read()
                if old not in text:
                    print(f"freeze_check: mutation does not apply: {old!r} not in "
                          f"{args.current}/kiln/{file}; update the control")
                    return 1
                open(path, "w").write(text.replace(old, new, 1))

        kinds = classify(defines)
        items, what = [], []
        for name in defines:
            if name in kinds:
                items.append((kinds[name], name, name))
                what.append(("define", name))
        for expr in FUNCTION_PROBES:
            items.append(("int", expr, expr.split("(")[0]))
            what.append(("macro", expr))
        for name, fields in structs:
            for f in fields:
                items.append(("int", f"offsetof({name}, {f})", None))
                what.append(("offset", f"{name}.{f}"))
            items.append(("int", f"sizeof({name})", None))
            what.append(("size", name))

        frozen, err = evaluate(args.cc, flags, release, frozen_headers, items,
                               work, "frozen", False)
        if frozen is None:
            if flags:
                print(f"freeze_check: SKIPPED: '{args.cc} {args.target_flags}' "
                      f"cannot compile the frozen {version} probe:\n{err}")
                return SKIP
            print(f"freeze_check: the frozen {version} headers do not compile:\n{err}")
            return 1
        # Today's headers: the release's headers plus any it added since.
        now, err = evaluate(args.cc, flags, current, headers_of(current), items,
                            work, "current", True)

    errors = []
    if now is None:
        errors.append("today's headers do not compile the probe of the frozen "
                      f"{version} names (a struct or field was removed or "
                      f"renamed):\n{err}")
        now = {}
    skipped = []
    for i, (kind, name) in enumerate(what):
        if i not in now:
            continue
        old, new = frozen[i], now[i]
        if new == "<missing>":
            errors.append(f"{name}: #define of the released {version} headers "
                          "is missing from today's headers")
            continue
        if kind == "define" and RELEASE_SPECIFIC.match(name):
            skipped.append(f"{name}: {old!r} -> {new!r}")
            continue
        grow = (kind == "size") or (kind == "define" and MAY_GROW.match(name))
        if grow and isinstance(old, int):
            if new < old:
                errors.append(f"{name}: released {version} value {old}, today "
                              f"{new} (may only grow)")
        elif old != new:
            errors.append(f"{kind} {name}: released {version} value {old!r}, "
                          f"today {new!r}")
    if not flags:
        errors += check_baselines(release, structs)

    n_def = sum(1 for k, _ in what if k == "define")
    n_off = sum(1 for k, _ in what if k in ("offset", "size"))
    detected = bool(errors)
    for e in errors:
        print(f"FREEZE VIOLATION [{label}]: {e}")
    for s in skipped:
        print(f"release-specific, not compared [{label}]: {s}")
    print(f"freeze_check [{label}]: {n_def} #defines, {len(FUNCTION_PROBES)} "
          f"macro probes, {n_off} offsets/sizes of {len(structs)} structs "
          f"compared; {len(errors)} violation(s)")
    if args.expect == "fail":
        if detected:
            print("control: the mutation was detected, as it must be")
            return 0
        print("control FAILED: the freeze check did not detect the mutation")
        return 1
    if detected:
        print(f"Today's headers break the frozen extension API {version}. "
              "Released values, offsets and sizes never change: revert the "
              "edit (append new names and fields instead).")
    return 1 if detected else 0


if __name__ == "__main__":
    sys.exit(main())
