#!/usr/bin/env python3
"""Smoke tests for Kiln's benchmarks (CTest label "bench").

  bench_smoke_test.py benchmarks --binary PATH/kiln_benchmarks [--corpus]
      Runs the quick benchmarks once with a tiny minimum time and checks
      that each one ran and reported its counters. Without --corpus: the
      benchmarks on generated models; with --corpus: the one on the shared
      model corpus, which exits 77 (CTest SKIP_RETURN_CODE: Skipped) when
      the corpus is absent.
  bench_smoke_test.py cli --kiln PATH/kiln
      `kiln build-example` then `kiln bench --iterations 3 --json` and checks
      the JSON fields; then the same alternating two batch sizes (--shapes)
      and checks the plan cache's counters.

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

# Benchmark name -> counters it must report (models Kiln generates).
EXPECTED_BENCHMARKS = {
    "BM_DispatchOverhead/1000": ["ns_per_node", "nodes", "arena_bytes"],
    "BM_InvokeExampleCnn": ["arena_bytes"],
    "BM_ModelOpen/64/manual_time": ["weight_mib", "file_bytes"],
    "BM_ModelOpenExternal/64/manual_time": ["weight_mib", "file_bytes"],
}
QUICK_FILTER = ("^BM_(DispatchOverhead/1000|InvokeExampleCnn|"
                "ModelOpen/64|ModelOpenExternal/64)")
# The same for the benchmarks on the shared model corpus.
EXPECTED_CORPUS_BENCHMARKS = {
    "BM_InvokeMobilenetLike": ["arena_bytes"],
    "BM_AlternateShapesCached/0": ["hits", "plan_cache_bytes"],
}
CORPUS_FILTER = "^BM_(InvokeMobilenetLike|AlternateShapesCached/0)$"
SKIP_EXIT_CODE = 77

BENCH_JSON_FIELDS = ["model", "delegates", "open_verify_ms", "create_ms",
                     "allocate_ms", "init_ms", "first_invoke_ms", "iterations",
                     "invoke_ms", "arena_bytes", "plan_cache", "warnings"]
PLAN_CACHE_FIELDS = ["max_plans", "hits", "misses", "evictions", "plans",
                     "bytes", "plugin_states"]
INVOKE_STAT_FIELDS = ["mean", "median", "p90", "min", "max"]


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    return 1


def run(command, timeout):
    print("+ " + " ".join(command), flush=True)
    return subprocess.run(command, capture_output=True, text=True,
                          timeout=timeout)


def corpus_present():
    return os.path.isdir(os.environ.get(
        "KILN_SHARED_MODELS_DIR",
        os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared",
                     "models")))


def check_corpus_benchmarks(binary):
    if not corpus_present():
        print("SKIPPED: the shared model corpus is absent")
        return SKIP_EXIT_CODE
    with tempfile.TemporaryDirectory(prefix="kiln_bench_smoke_") as tmp:
        by_name, error = run_and_check(binary, tmp, CORPUS_FILTER,
                                       EXPECTED_CORPUS_BENCHMARKS)
        if error:
            return error
    print("OK: %d corpus benchmarks reported their counters" % len(by_name))
    return 0


def run_benchmarks(binary, model_dir, benchmark_filter):
    """Runs the filtered benchmarks: (JSON report, None) or (None, 1)."""
    result = run([binary, "--kiln_model_dir=" + model_dir,
                  "--benchmark_filter=" + benchmark_filter,
                  "--benchmark_min_time=0.01",
                  "--benchmark_format=json"], timeout=100)
    if result.returncode != 0:
        return None, fail("kiln_benchmarks exited with %d\nstderr:\n%s" %
                          (result.returncode, result.stderr))
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError as e:
        return None, fail("kiln_benchmarks did not print JSON (%s):\n%s" %
                          (e, result.stdout[:2000]))
    if report.get("context", {}).get("kiln_model_dir") != model_dir:
        return None, fail("context.kiln_model_dir is not the directory "
                          "passed with --kiln_model_dir (%r)" %
                          report.get("context"))
    return report, None


def check_counters(by_name, expected):
    """1 (after saying why) unless every benchmark reported its counters."""
    for name, counters in expected.items():
        bench = by_name.get(name)
        if bench is None:
            return fail("benchmark %s missing; reported: %s" %
                        (name, sorted(by_name)))
        if bench.get("error_occurred"):
            return fail("benchmark %s failed: %s" %
                        (name, bench.get("error_message", "")))
        for counter in counters:
            value = bench.get(counter)
            if not isinstance(value, (int, float)) or value <= 0:
                return fail("benchmark %s: counter %s missing or not "
                            "positive (%r)" % (name, counter, value))
    return 0


def run_and_check(binary, model_dir, benchmark_filter, expected):
    """(benchmarks by name, 0) or (None, 1) after saying what is wrong."""
    report, error = run_benchmarks(binary, model_dir, benchmark_filter)
    if error:
        return None, error
    by_name = {b["name"]: b for b in report.get("benchmarks", [])}
    return by_name, check_counters(by_name, expected)


def check_benchmarks(binary):
    with tempfile.TemporaryDirectory(prefix="kiln_bench_smoke_") as tmp:
        by_name, error = run_and_check(binary, tmp, QUICK_FILTER,
                                       EXPECTED_BENCHMARKS)
        if error:
            return error
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
        # --delegate none: the CPU plugin alone, so no delegate is applied
        # (by default the xnnpack delegate would be, when built).
        result = run([kiln, "bench", model, "--iterations", "3", "--json",
                      "--delegate", "none"], timeout=60)
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
            return fail("with --delegate none, delegates should be [] and "
                        "warnings a list: %r, %r"
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
        if check_alternating(kiln, model) != 0:
            return 1
    print("OK: kiln bench --json has every field")
    return 0


def check_alternating(kiln, model):
    """kiln bench --shapes with two batch sizes: 1 warm-up + 4 runs after
    the first AllocateTensors (batch 1) are 2 misses and 4 hits."""
    result = run([kiln, "bench", model, "--iterations", "4", "--warmup", "1",
                  "--shapes", "1,16,16,3", "--shapes", "2,16,16,3", "--json"],
                 timeout=60)
    if result.returncode != 0:
        return fail("kiln bench --shapes exited with %d:\n%s" %
                    (result.returncode, result.stderr))
    report = json.loads(result.stdout)
    cache = report.get("plan_cache", {})
    missing = [f for f in PLAN_CACHE_FIELDS if f not in cache]
    if missing or "switch_ms" not in report:
        return fail("kiln bench --shapes lacks switch_ms or plan_cache "
                    "fields %s: %r" % (missing, report))
    expected = {"max_plans": 4, "hits": 4, "misses": 2, "evictions": 0,
                "plans": 2}
    got = {k: cache[k] for k in expected}
    if got != expected or cache["bytes"] <= 0:
        return fail("plan_cache is %r, expected %r and bytes > 0" %
                    (cache, expected))
    if report["shape_sets"] != [[[1, 16, 16, 3]], [[2, 16, 16, 3]]]:
        return fail("shape_sets is %r" % report["shape_sets"])
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    bench = sub.add_parser("benchmarks")
    bench.add_argument("--binary", required=True)
    bench.add_argument("--corpus", action="store_true",
                       help="check the benchmarks on the shared corpus")
    cli = sub.add_parser("cli")
    cli.add_argument("--kiln", required=True)
    args = parser.parse_args()
    if args.mode == "benchmarks" and args.corpus:
        return check_corpus_benchmarks(args.binary)
    if args.mode == "benchmarks":
        return check_benchmarks(args.binary)
    return check_cli(args.kiln)


if __name__ == "__main__":
    sys.exit(main())
