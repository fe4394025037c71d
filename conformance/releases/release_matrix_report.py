#!/usr/bin/env python3
"""The combined conformance report: today's CPU plugin through today's
`kiln conformance`, with every real released host's matrix merged in
(CTest conformance.release_matrix_report, after the release-host tests).

  release_matrix_report.py --build build --cache build/releases

Writes CACHE/conformance_matrix.html (plus .xml JUnit and .json) through
`kiln conformance ... --release-matrix CACHE`. Exit 77 (CTest: Skipped) when
no release-host test wrote a matrix (e.g. a shallow clone skipped them all);
otherwise kiln conformance's exit status.
"""
import argparse
import glob
import os
import subprocess
import sys

SKIP = 77


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True, help="today's build directory")
    ap.add_argument("--cache", required=True,
                    help="where the release-host tests wrote matrix_*.json")
    args = ap.parse_args()
    matrices = sorted(glob.glob(os.path.join(args.cache, "matrix_*.json")))
    if not matrices:
        print(f"SKIPPED: no matrix_*.json in {args.cache}: the release-host "
              "tests (ctest -L release_hosts) did not run or were skipped")
        return SKIP
    out = os.path.join(args.cache, "conformance_matrix")
    cmd = [os.path.join(args.build, "bin", "kiln"), "conformance",
           os.path.join(args.build, "lib", "kiln", "plugins",
                        "libkiln_cpu.so"),
           "--release-matrix", args.cache, "--html", out + ".html",
           "--junit", out + ".xml", "--report", out + ".json",
           "--timeout", "30", "--cycles", "5", "--threads", "2"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    print("\n".join(r.stdout.splitlines()[-2:]))
    print(r.stderr[-3000:], end="")
    print("merged: " + ", ".join(os.path.basename(m) for m in matrices))
    print(f"wrote {out}.html, {out}.xml, {out}.json")
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
