#!/usr/bin/env python3
"""Smoke tests for Kiln's benchmarks (CTest label "bench").

  bench_smoke_test.py benchmarks --binary PATH/kiln_benchmarks
      Runs the quick benchmarks once with a tiny minimum time and checks
      that each one ran (or, for the corpus model, was skipped because the
      corpus is absent) and reported its counters.
  bench_smoke_test.py cli --kiln PATH/kiln
      `kiln build-example` then `kiln bench --iterations 3 --json` and checks
      the JSON fields.

No timing is asserted: speed targets are checked by the benchmarks and
tools/bench/compare_with_litert.py, never by tests. Exits 0 on success, 1
with a message naming what is missing otherwise.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

# Benchmark name -> counters it must report.
EXPECTED_BENCHMARKS = {
    "BM_DispatchOverhead/1000": ["ns_per_node", "nodes", "arena_bytes"],
    "BM_InvokeExampleCnn": ["arena_bytes"],
    "BM_InvokeMobilenetLike": ["arena_bytes"],
    "BM_ModelOpen/64/manual_time": ["weight_mib", "file_bytes"],
    "BM_ModelOpenExternal/64/manual_time": ["weight_mib", "file_bytes"],
}
QUICK_FILTER = ("^BM_(DispatchOverhead/1000|InvokeExampleCnn|"
                "InvokeMobilenetLike|ModelOpen/64|ModelOpenExternal/64)")

BENCH_JSON_FIELDS = ["model", "delegates", "open_verify_ms", "create_ms",
                     "allocate_ms", "init_ms", "first_invoke_ms", "iterations",
                     "invoke_ms", "arena_bytes", "warnings"]
INVOKE_STAT_FIELDS = ["mean", "median", "p90", "min", "max"]


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    return 1


def run(command, timeout):
    print("+ " + " ".join(command), flush=True)
    return subprocess.run(command, capture_output=True, text=True,
                          timeout=timeout)


def check_benchmarks(binary):
    with tempfile.TemporaryDirectory(prefix="kiln_bench_smoke_") as tmp:
        result = run([binary, "--kiln_model_dir=" + tmp,
                      "--benchmark_filter=" + QUICK_FILTER,
                      "--benchmark_min_time=0.01",
                      "--benchmark_format=json"], timeout=100)
        if result.returncode != 0:
            return fail("kiln_benchmarks exited with %d\nstderr:\n%s" %
                        (result.returncode, result.stderr))
        try:
            report = json.loads(result.stdout)
        except json.JSONDecodeError as e:
            return fail("kiln_benchmarks did not print JSON (%s):\n%s" %
                        (e, result.stdout[:2000]))
        if report.get("context", {}).get("kiln_model_dir") != tmp:
            return fail("context.kiln_model_dir is not the directory passed "
                        "with --kiln_model_dir (%r)" % report.get("context"))
        by_name = {b["name"]: b for b in report.get("benchmarks", [])}
        corpus_present = os.path.isdir(os.environ.get(
            "KILN_SHARED_MODELS_DIR",
            os.path.join(os.path.dirname(__file__), "..", "..", "..",
                         "shared", "models")))
        for name, counters in EXPECTED_BENCHMARKS.items():
            bench = by_name.get(name)
            if bench is None:
                return fail("benchmark %s missing; reported: %s" %
                            (name, sorted(by_name)))
            if bench.get("error_occurred"):
                message = bench.get("error_message", "")
                if (name == "BM_InvokeMobilenetLike" and not corpus_present
                        and "absent" in message):
                    print("note: %s skipped: %s" % (name, message))
                    continue
                return fail("benchmark %s failed: %s" % (name, message))
            for counter in counters:
                value = bench.get(counter)
                if not isinstance(value, (int, float)) or value <= 0:
                    return fail("benchmark %s: counter %s missing or not "
                                "positive (%r)" % (name, counter, value))
        if by_name["BM_DispatchOverhead/1000"]["nodes"] != 1000:
            return fail("BM_DispatchOverhead/1000 reports nodes=%r" %
                        by_name["BM_DispatchOverhead/1000"]["nodes"])
        for name in ("dispatch_add_1000.tflite", "example_cnn.tflite",
                     "large_64mib.tflite", "large_64mib_external.tflite"):
            if not os.path.isfile(os.path.join(tmp, name)):
                return fail("generated model %s was not written to the "
                            "--kiln_model_dir directory" % name)
    print("OK: %d benchmarks reported their counters" % len(by_name))
    return 0


def check_cli(kiln):
    with tempfile.TemporaryDirectory(prefix="kiln_bench_cli_") as tmp:
        model = os.path.join(tmp, "example_cnn.tflite")
        result = run([kiln, "build-example", model], timeout=60)
        if result.returncode != 0 or not os.path.isfile(model):
            return fail("kiln build-example exited with %d:\n%s" %
                        (result.returncode, result.stderr))
        result = run([kiln, "bench", model, "--iterations", "3", "--json"],
                     timeout=60)
        if result.returncode != 0:
            return fail("kiln bench exited with %d:\n%s" %
                        (result.returncode, result.stderr))
        try:
            report = json.loads(result.stdout)
        except json.JSONDecodeError as e:
            return fail("kiln bench --json did not print JSON (%s):\n%s" %
                        (e, result.stdout[:2000]))
        missing = [f for f in BENCH_JSON_FIELDS if f not in report]
        if missing:
            return fail("kiln bench --json lacks %s; got %s" %
                        (missing, sorted(report)))
        if report["model"] != model:
            return fail("model is %r, expected %r" % (report["model"], model))
        if report["iterations"] != 3:
            return fail("iterations is %r, expected 3" % report["iterations"])
        if report["delegates"] != [] or not isinstance(report["warnings"],
                                                       list):
            return fail("delegates should be [] and warnings a list: %r, %r"
                        % (report["delegates"], report["warnings"]))
        for field in ("open_verify_ms", "create_ms", "allocate_ms", "init_ms",
                      "first_invoke_ms"):
            value = report[field]
            if not isinstance(value, (int, float)) or value < 0:
                return fail("%s is %r, expected a non-negative number" %
                            (field, value))
        stats = report["invoke_ms"]
        missing = [f for f in INVOKE_STAT_FIELDS if f not in stats]
        if missing:
            return fail("invoke_ms lacks %s: %r" % (missing, stats))
        if not (0 <= stats["min"] <= stats["median"] <= stats["max"] and
                stats["min"] <= stats["mean"] <= stats["max"]):
            return fail("invoke_ms statistics are inconsistent: %r" % stats)
        if not isinstance(report["arena_bytes"], int) or \
                report["arena_bytes"] <= 0:
            return fail("arena_bytes is %r, expected a positive integer" %
                        report["arena_bytes"])
    print("OK: kiln bench --json has every field")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    bench = sub.add_parser("benchmarks")
    bench.add_argument("--binary", required=True)
    cli = sub.add_parser("cli")
    cli.add_argument("--kiln", required=True)
    args = parser.parse_args()
    if args.mode == "benchmarks":
        return check_benchmarks(args.binary)
    return check_cli(args.kiln)


if __name__ == "__main__":
    sys.exit(main())
