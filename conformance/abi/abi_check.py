#!/usr/bin/env python3
"""Compares a binary's ABI with a released baseline using libabigail.

Runs `abidiff --leaf-changes-only` between BASELINE (abidw XML of the last
release) and BINARY (the current build) and classifies the result under
docs/abi-policy.md:

  compatible    no change, or only additions: new exported functions or
                variables, and fields appended at the end of a struct (the
                struct grows; every old field keeps its offset and type).
  incompatible  anything else: a removed symbol, a changed function
                signature, a field inserted, removed, moved or retyped, ...

abidiff's exit status is a bit field: 1 tool error, 2 usage error, 4 ABI
change, 8 incompatible change (removed symbols only). Bit 4 alone is not
enough to tell an appended field from a reordered one, so the leaf report is
parsed: every changed type must consist only of a size increase and data
member insertions at offsets at or past the old size.

Exit status: 0 when the verdict equals --expect (default: compatible),
1 when it does not, 2 when abidiff could not run.
"""
import argparse
import re
import subprocess
import sys

SUMMARY_RE = re.compile(r"^(Removed/Changed/Added functions|"
                        r"Removed/Changed/Added variables|"
                        r"Function symbols changes|Variable symbols changes)"
                        r" summary: (.*)$")
TYPE_BLOCK_RE = re.compile(r"^'(.+)' changed:$")
SIZE_RE = re.compile(r"^type size changed from (\d+) to (\d+) \(in bits\)$")
INSERTION_HEADER_RE = re.compile(r"^\d+ data member insertions?:$")
INSERTION_RE = re.compile(r"^'.*', at offset (\d+) \(in bits\)")


def classify(report):
    """Returns (verdict, reasons) for an abidiff --leaf-changes-only report."""
    reasons = []
    current_type = None
    old_size = None
    for raw in report.splitlines():
        line = raw.rstrip()
        summary = SUMMARY_RE.match(line)
        if summary:
            counts = dict((kind, int(n)) for n, kind in
                          re.findall(r"(\d+) (Removed|Changed)", summary.group(2)))
            if counts.get("Removed", 0):
                reasons.append("%s: %d removed" % (summary.group(1),
                                                    counts["Removed"]))
            if counts.get("Changed", 0):
                reasons.append("%s: %d changed" % (summary.group(1),
                                                    counts["Changed"]))
            current_type = None
            continue
        block = TYPE_BLOCK_RE.match(line)
        if block:
            current_type, old_size = block.group(1), None
            continue
        if not line.strip():
            continue
        if current_type is None:
            # Headers, symbol lists ("[A] ...", "[D] ...") and counts.
            if re.match(r"^\s*\[D\]", line):
                reasons.append("removed: " + line.strip())
            continue
        if not raw.startswith(" "):
            current_type = None
            continue
        text = line.strip()
        size = SIZE_RE.match(text)
        if size:
            old_size = int(size.group(1))
            if int(size.group(2)) < old_size:
                reasons.append("%s: size shrank (%s)" % (current_type, text))
            continue
        if INSERTION_HEADER_RE.match(text):
            continue
        insertion = INSERTION_RE.match(text)
        if insertion:
            if old_size is None or int(insertion.group(1)) < old_size:
                reasons.append("%s: field inserted before the old end "
                               "(%s)" % (current_type, text))
            continue
        reasons.append("%s: %s" % (current_type, text))
    return ("incompatible" if reasons else "compatible"), reasons


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--abidiff", default="abidiff")
    parser.add_argument("--baseline", required=True)
    parser.add_argument("--binary", required=True)
    # Filters out changes whose leaf type is declared outside these headers
    # (e.g. a field retyped from uint64_t to uint32_t): not for gating.
    parser.add_argument("--headers-dir")
    parser.add_argument("--suppressions")
    parser.add_argument("--expect", choices=["compatible", "incompatible"],
                        default="compatible")
    parser.add_argument("--label", default="")
    args = parser.parse_args()

    command = [args.abidiff, "--leaf-changes-only", "--no-added-syms",
               "--drop-private-types"]
    if args.suppressions:
        command += ["--suppressions", args.suppressions]
    if args.headers_dir:
        command += ["--headers-dir2", args.headers_dir]
    command += [args.baseline, args.binary]
    try:
        done = subprocess.run(command, capture_output=True, text=True,
                              check=False)
    except OSError as e:
        print("abi_check: cannot run %s: %s (install abigail-tools)" %
              (args.abidiff, e))
        return 2
    label = args.label or args.binary
    print("$ " + " ".join(command))
    print(done.stdout + done.stderr)
    if done.returncode & 3:
        print("abi_check: abidiff failed (exit status %d); is the binary "
              "built with debug info (-g) and the baseline readable?" %
              done.returncode)
        return 2
    if done.returncode == 0:
        verdict, reasons = "compatible", []
    else:
        verdict, reasons = classify(done.stdout)
        if done.returncode & 8 and verdict == "compatible":
            verdict, reasons = "incompatible", ["abidiff reported an "
                                                "incompatible change"]
    print("abi_check: %s: %s with the baseline %s (abidiff exit status %d)" %
          (label, verdict.upper(), args.baseline, done.returncode))
    for reason in reasons:
        print("  - " + reason)
    if verdict != args.expect:
        if args.expect == "compatible":
            print("abi_check: this change breaks the released ABI. Revert "
                  "it, or make it compatible (append fields at the end of a "
                  "struct and move its *_STRUCT_SIZE; add functions instead "
                  "of changing them). See docs/abi-policy.md.")
        else:
            print("abi_check: expected an incompatible change, but the "
                  "check did not see one; the ABI check is not working.")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
