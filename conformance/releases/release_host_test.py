#!/usr/bin/env python3
"""Today's plugins on a real released host, and the released plugins on
today's host (CTest conformance.release_host.<release>).

  release_host_test.py --release 0.1.0 --cache build/releases \\
      --build build [--report release_matrix.json]

1. conformance/releases/build_release_host.sh builds the release's kiln CLI
   and CPU plugin from git history (cached in --cache).
2. Old host x today's plugins: the released `kiln conformance` (its own
   runner and rules, with the released CPU plugin as its reference) on
   today's libkiln_cpu.so. It must load and negotiate at the old host's
   extension API level and pass.
3. Today's host x the released CPU plugin: today's `kiln conformance` (LiteRT
   references) on the released libkiln_cpu.so. Reported; a failure there is
   a defect of the old release, listed, not a failure of this test.
4. Old host x today's delegate: the released `kiln conformance` on today's
   SDK example delegate (libacme_delegate.so, built in tree), with the
   released CPU plugin for what it leaves. Where the release's runner has
   delegate checks ("delegate_checks" in releases.json: 0.2.0 on), they must
   run (create, partition, prepare, invoke through the old interpreter) and
   pass; an older runner only loads and negotiates it, which must pass too.

A release whose CLI has no `kiln conformance` ("driver": "kernels" in
releases.json: 0.1.0-ext1.0, the extension API 1.0 host) runs through two
drivers built against its own headers and libraries instead
(old_host_drivers.py): the public C API's plugin probe, and today's CPU
plugin's kernels on the old host code, compared with LiteRT references.

Writes a matrix (JSON) whose cells say which host was real (built from the
commit) and which plugin ran. Exit 77 (CTest: Skipped) when the release's
commit is not in this clone (shallow CI clones) or its host does not build
here.
"""
import argparse
import json
import os
import subprocess
import sys

from old_host_drivers import kernel_driver_cells

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))


def run_conformance(kiln, plugin, extra, report):
    cmd = [kiln, "conformance", plugin, "--report", report, "--timeout", "30",
           "--cycles", "5", "--threads", "2"] + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    summary = r.stdout.strip().splitlines()[-1:] or [r.stderr.strip()]
    data = {}
    if os.path.exists(report):
        try:
            data = json.load(open(report))
        except ValueError:
            data = {}
    return r.returncode, summary[0], data


def report_checks(data):
    """The per-check verdicts of a `kiln conformance` JSON report, for the
    matrix cell (kiln conformance --release-matrix shows them per op version
    and level, with why)."""
    keep = ("name", "category", "verdict", "op", "op_version", "abi_level")
    checks = []
    for c in data.get("checks", []):
        e = {k: c[k] for k in keep if k in c}
        e["message"] = c.get("message", "")[:300]
        checks.append(e)
    return checks


def plugin_api(data):
    """The extension API the plugin was built for, as its report says."""
    return data.get("plugin", {}).get("abi_version", "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--release", required=True)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--build", required=True, help="today's build directory")
    ap.add_argument("--report", default="")
    ap.add_argument("--cc", default="cc", help="C compiler (drivers)")
    ap.add_argument("--cxx", default="c++", help="C++ compiler (drivers)")
    ap.add_argument("--references", default=os.path.join(
        HERE, "..", "references", "golden"), help="LiteRT golden references")
    args = ap.parse_args()
    releases = {r["release"]: r for r in
                json.load(open(os.path.join(HERE, "releases.json")))["releases"]}
    rel = releases[args.release]
    if rel.get("tag"):
        # The release's tag, where the clone has it, marks the listed commit.
        tagged = subprocess.run(
            ["git", "-C", HERE, "rev-parse", "-q", "--verify",
             f"refs/tags/{rel['tag']}^{{commit}}"],
            capture_output=True, text=True).stdout.strip()
        if tagged and tagged != rel["commit"]:
            print(f"FAIL: tag {rel['tag']} marks {tagged}, releases.json "
                  f"lists {rel['commit']} for {args.release}")
            return 1
    drivers = rel.get("driver") == "kernels"
    built = subprocess.run(
        [os.path.join(HERE, "build_release_host.sh"), args.release,
         args.cache] + (["kiln", "kiln_plugin_cpu"] if drivers else []),
        capture_output=True, text=True)
    if built.returncode != 0:
        print(built.stderr[-3000:])
        print(f"SKIPPED: could not build the {args.release} host from "
              f"{rel['commit']}")
        return SKIP
    old_build = built.stdout.strip().splitlines()[-1]
    old_kiln = os.path.join(old_build, "bin", "kiln")
    old_cpu = os.path.join(old_build, "lib", "kiln", "plugins",
                           "libkiln_cpu.so")
    new_kiln = os.path.join(args.build, "bin", "kiln")
    new_cpu = os.path.join(args.build, "lib", "kiln", "plugins",
                           "libkiln_cpu.so")
    work = os.path.join(args.cache, args.release, "reports")
    os.makedirs(work, exist_ok=True)
    cells = []
    failed = False
    if drivers:
        cells, failed = kernel_driver_cells(args, rel, old_build, new_kiln,
                                            new_cpu, work)
    else:
        failed = conformance_cells(args, rel, old_kiln, old_cpu, new_cpu,
                                   work, cells)
    released_plugin_cell(args, new_kiln, old_cpu, work, cells)
    return write_matrix(args, rel, cells, failed)


def conformance_cells(args, rel, old_kiln, old_cpu, new_cpu, work, cells):
    """The old host's own `kiln conformance` on today's plugins; True when a
    required cell failed."""
    failed = False
    # Today's CPU plugin on the real old host.
    code, summary, data = run_conformance(
        old_kiln, new_cpu, ["--reference", old_cpu],
        os.path.join(work, "old_host_today_cpu.json"))
    levels = data.get("abi_levels_tested", [])
    cells.append({
        "host": f"{args.release} (real host built from {rel['commit'][:12]}, "
                f"extension API {rel['extension_api']})",
        "host_is_real": True, "built_from_history": True,
        "plugin": f"today's libkiln_cpu.so ({new_cpu})",
        "plugin_row": "today's libkiln_cpu.so", "plugin_path": new_cpu,
        "plugin_extension_api": plugin_api(data), "required": True,
        "runner": f"kiln conformance of {args.release}",
        "levels": levels, "exit": code, "summary": summary,
        "checks": report_checks(data)})
    if code != 0:
        failed = True
        print(f"FAIL: today's CPU plugin on the {args.release} host: {summary}")

    # Today's delegate on the real old host.
    delegate = os.path.join(args.build, "lib", "kiln",
                            "conformance_bad_plugins", "libacme_delegate.so")
    if os.path.exists(delegate):
        code, summary, data = run_conformance(
            old_kiln, delegate, ["--reference", old_cpu],
            os.path.join(work, "old_host_today_delegate.json"))
        checks = [c for c in data.get("checks", [])
                  if c.get("name", "").startswith("delegate:")]
        passed = [c for c in checks if c.get("verdict") == "pass"]
        expects_checks = rel.get("delegate_checks", False)
        cells.append({
            "host": f"{args.release} (real host built from "
                    f"{rel['commit'][:12]}, extension API "
                    f"{rel['extension_api']})",
            "host_is_real": True, "built_from_history": True,
            "plugin": f"today's acme delegate ({delegate})",
            "plugin_row": "today's acme delegate (SDK example)",
            "plugin_path": delegate,
            "plugin_extension_api": plugin_api(data), "required": True,
            "runner": f"kiln conformance of {args.release}" +
                      ("" if expects_checks else
                       " (no delegate checks in this release's runner)"),
            "levels": data.get("abi_levels_tested", []), "exit": code,
            "summary": f"{summary}; {len(passed)} of {len(checks)} delegate "
                       "checks passed",
            "delegate_checks": [c["name"] + ": " + c["verdict"]
                                for c in checks],
            "checks": report_checks(data)})
        if code != 0 or (expects_checks and not checks):
            failed = True
            print(f"FAIL: today's delegate on the {args.release} host: "
                  f"{summary}; {len(checks)} delegate checks ran")
            for c in data.get("checks", []):
                if c.get("verdict") not in ("pass", "skip"):
                    print(f"  {c['name']}: {c['verdict']}: "
                          f"{c.get('message', '')[:300]}")
    return failed


def released_plugin_cell(args, new_kiln, old_cpu, work, cells):
    """Reported, not required: the released CPU plugin on today's host."""
    # The released CPU plugin on today's host (LiteRT references).
    code, summary, data = run_conformance(
        new_kiln, old_cpu, [], os.path.join(work, "today_host_old_cpu.json"))
    fails = [c["name"] + ": " + c["message"][:200]
             for c in data.get("checks", []) if c.get("verdict") == "fail"]
    cells.append({
        "host": "today's host (levels " +
                ", ".join(data.get("abi_levels_tested", [])) + ")",
        "host_is_real": True, "built_from_history": False,
        "plugin": f"libkiln_cpu.so of {args.release} ({old_cpu})",
        "plugin_row": f"libkiln_cpu.so of {args.release}",
        "plugin_path": old_cpu, "plugin_extension_api": plugin_api(data),
        # A failure here is a defect of the old release: reported, not
        # required.
        "required": False,
        "runner": "today's kiln conformance (LiteRT references)",
        "levels": data.get("abi_levels_tested", []),
        "exit": code, "summary": summary, "failures": fails[:20],
        "checks": report_checks(data)})


def write_matrix(args, rel, cells, failed):
    matrix = {"release": args.release, "commit": rel["commit"],
              "extension_api": rel["extension_api"], "cells": cells}
    if args.report:
        with open(args.report, "w") as f:
            json.dump(matrix, f, indent=2)
    print("| host | real host? | plugin | runner | result |")
    print("|---|---|---|---|---|")
    for c in cells:
        real = ("real old host, built from history"
                if c.get("built_from_history") else "today's build")
        print(f"| {c['host']} | {real} | {c['plugin']} | {c['runner']} | "
              f"{c['summary']} |")
    for c in cells:
        for f in c.get("failures", []):
            print(f"  {c['plugin']} on {c['host']}: {f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
