#!/usr/bin/env python3
"""Kiln's benchmarks beside LiteRT's figures, measured in the same run.

Runs `kiln_benchmarks --benchmark_format=json` (which writes its generated
models to a directory), then measures the same figures with LiteRT
(ai_edge_litert) on the very same model files, and prints one table:

  benchmark | Kiln | LiteRT | ratio (Kiln / LiteRT) | target

LiteRT is measured in two configurations, both with num_threads=1 (Kiln's
CPU kernels are single-threaded):
  builtin   OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES: the plain
            interpreter and its builtin kernels (what the targets compare to);
  default   OpResolverType.AUTO: the default resolver, which applies the
            XNNPack delegate at allocate_tensors (shown for information).

Methodology (see docs/benchmarks.md):
  * dispatch ns/node: marginal cost of one node, (T(1000 ADD nodes) -
    T(1 ADD node)) / 999 per invoke, for both runtimes, so fixed per-invoke
    costs (LiteRT's Python call, Kiln's Invoke entry) cancel out. Kiln's raw
    ns_per_node counter (T(1000)/1000) is shown too.
  * open time: Kiln = Model::FromFile (mmap + verify); LiteRT =
    Interpreter(model_path=...) construction (mmap + verify + interpreter
    build through Python, no tensor allocation). Medians. "Flat in weight
    bytes" means the time added from 64 to 256 MiB of weights is at most 1%
    of what reading those extra 192 MiB once (from the page cache) takes.
  * invoke latency: mean wall time per invoke (LiteRT includes its Python
    call, about 1 us).
  * memory: Kiln = Interpreter::arena_bytes(). LiteRT's Python API exposes no
    arena size, so its figure is the process RSS growth across
    allocate_tensors() in a fresh process (arena plus anything else allocated
    there, e.g. XNNPack's packed weights) - a different quantity, labelled so.

  * plan cache: a dynamic-shape model alternating between two input shapes
    (BM_AlternateShapes*): one A-then-B round with both shapes fixed (two
    interpreters, invoke only) against resize + allocate + invoke of one
    interpreter per shape (Kiln with the plan cache on and off; LiteRT's
    resize_tensor_input + allocate_tensors + invoke). Target: Kiln with the
    cache at most 1.1x its fixed-shape round (CPU time).

Usage:
  compare_with_litert.py [--benchmarks PATH/kiln_benchmarks] [--out FILE]
                         [--model-dir DIR] [--min-time SECONDS]
  compare_with_litert.py --models [--threads 1,2] [--kiln PATH] [--out FILE]
      real models: Kiln default (xnnpack delegate) vs LiteRT default vs
      LiteRT builtin, latency, init and peak RSS (models_vs_litert.py)
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_CORPUS = os.path.abspath(os.path.join(REPO, "..", "shared", "models"))
DISPATCH_NODES = 1000
LARGE_MIB = (64, 128, 256)
# "Open time flat in weight bytes": going from the smallest to the largest
# model may add at most this fraction of what one pass over the extra bytes
# (reading them from the page cache) adds. A loader that copies or checksums
# the weights adds at least a whole pass.
FLAT_ADDED_FRACTION = 0.01


def find_benchmarks_binary():
    for build in ("build-bench", "build"):
        path = os.path.join(REPO, build, "bin", "kiln_benchmarks")
        if os.access(path, os.X_OK):
            return path
    return None


def run_kiln(binary, model_dir, min_time, repetitions):
    command = [binary, "--kiln_model_dir=" + model_dir,
               "--benchmark_format=json",
               "--benchmark_min_time=%g" % min_time,
               "--benchmark_repetitions=%d" % repetitions,
               "--benchmark_report_aggregates_only=true"]
    print("running: " + " ".join(command), file=sys.stderr, flush=True)
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("compare_with_litert: %s exited with %d:\n%s" %
                 (binary, result.returncode, result.stderr))
    report = json.loads(result.stdout)
    medians = {}
    for bench in report["benchmarks"]:
        if bench.get("error_occurred"):
            medians[bench.get("run_name", bench["name"])] = {
                "error": bench.get("error_message", "error")}
            continue
        if bench.get("aggregate_name", "median") != "median":
            continue
        medians[bench.get("run_name", bench["name"])] = bench
    return report.get("context", {}), medians


def to_us(bench, field="real_time"):
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[bench["time_unit"]]
    return bench[field] * scale


# ---- LiteRT measurements (in this process) ----

def litert_interpreter(path, config):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    resolver = {"builtin": OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
                "default": OpResolverType.AUTO}[config]
    return Interpreter(model_path=path, num_threads=1,
                       experimental_op_resolver_type=resolver)


def fill_inputs(interpreter):
    import numpy as np
    for detail in interpreter.get_input_details():
        shape, dtype = detail["shape"], detail["dtype"]
        count = int(np.prod(shape)) if len(shape) else 1
        if np.issubdtype(dtype, np.floating):
            values = (np.arange(count) % 17 / 17.0).astype(dtype)
        else:
            values = np.zeros(count, dtype)
        interpreter.set_tensor(detail["index"], values.reshape(shape))


def litert_invoke_us(path, config, min_time):
    """Mean wall and CPU microseconds per invoke over >= min_time seconds."""
    interpreter = litert_interpreter(path, config)
    interpreter.allocate_tensors()
    fill_inputs(interpreter)
    interpreter.invoke()
    iterations = 1
    while True:
        wall0, cpu0 = time.perf_counter(), time.process_time()
        for _ in range(iterations):
            interpreter.invoke()
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        if wall >= min_time or iterations >= 10**7:
            return wall / iterations * 1e6, cpu / iterations * 1e6
        iterations = max(iterations * 2,
                         int(iterations * min_time / max(wall, 1e-9) * 1.2))


def litert_open_us(path, config, repetitions):
    """Median microseconds of Interpreter(model_path=...) construction."""
    times = []
    for _ in range(repetitions):
        start = time.perf_counter()
        interpreter = litert_interpreter(path, config)
        times.append((time.perf_counter() - start) * 1e6)
        del interpreter
    return statistics.median(times)


def read_file_us(path, repetitions=3):
    """Median microseconds to read the whole file (from the page cache)."""
    times = []
    for _ in range(repetitions):
        start = time.perf_counter()
        with open(path, "rb", buffering=0) as f:
            data = f.read()
        times.append((time.perf_counter() - start) * 1e6)
        del data
    return statistics.median(times)


RSS_PROBE = r"""
import sys, os
sys.path.insert(0, %(here)r)
from compare_with_litert import litert_interpreter
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
it = litert_interpreter(%(path)r, %(config)r)
before = rss()
it.allocate_tensors()
print(rss() - before)
"""


def litert_rss_delta(path, config):
    """RSS growth across allocate_tensors() in a fresh process, in bytes."""
    code = RSS_PROBE % {"here": os.path.dirname(os.path.abspath(__file__)),
                        "path": path, "config": config}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True,
                            text=True)
    if result.returncode != 0:
        return None
    return int(result.stdout.strip().splitlines()[-1])


# ---- Plan cache: a model alternating between two input shapes ----

# Must match ShapeSwitchCaseAt in host/bench/kiln_benchmarks.cc:
# (label, model relative to the corpus, shapes A, shapes B).
SHAPE_SWITCH_CASES = [
    ("transformer_block batch 1<->2",
     "converter/transformer_block_float32.tflite",
     [[1, 64, 128]], [[2, 64, 128]]),
    ("mobilenet_v2 batch 1<->2", "converter/mobilenet_v2_float32.tflite",
     [[1, 224, 224, 3]], [[2, 224, 224, 3]]),
    ("unet_small batch 1<->2", "converter/unet_small_float32.tflite",
     [[1, 128, 128, 3]], [[2, 128, 128, 3]]),
    ("dynamic_shapes.bin y 90<->30 rows", "tflite-testdata/dynamic_shapes.bin",
     [[8, 42, 1024], [1, 90, 1024], [1, 1]],
     [[8, 42, 1024], [1, 30, 1024], [1, 1]]),
]
SHAPE_SWITCH_TARGET = 1.1  # cached switch + invoke <= 1.1x fixed invoke


def shape_switch_inputs(interpreter):
    """Input arrays as kiln_benchmarks writes them (pattern k % 17 / 17;
    single-element inputs 3.0)."""
    import numpy as np
    arrays = []
    for detail in interpreter.get_input_details():
        shape, dtype = detail["shape"], detail["dtype"]
        count = int(np.prod(shape)) if len(shape) else 1
        if count == 1:
            values = np.full(count, 3.0, dtype)
        else:
            values = (np.arange(count) % 17 / 17.0).astype(dtype)
        arrays.append((detail["index"], values.reshape(shape)))
    return arrays


def litert_resized(path, config, shapes):
    interpreter = litert_interpreter(path, config)
    for i, shape in enumerate(shapes):
        interpreter.resize_tensor_input(i, shape)
    interpreter.allocate_tensors()
    return interpreter


def litert_shape_switch_us(path, config, a, b, min_time):
    """Mean wall and CPU microseconds of one A-then-B round, fixed (two
    interpreters, set_tensor + invoke) and switching (one interpreter,
    resize_tensor_input + allocate_tensors + set_tensor + invoke)."""
    fixed = [litert_resized(path, config, a), litert_resized(path, config, b)]
    inputs = [shape_switch_inputs(it) for it in fixed]
    switching = litert_resized(path, config, a)

    def fixed_round():
        for it, arrays in zip(fixed, inputs):
            for index, values in arrays:
                it.set_tensor(index, values)
            it.invoke()

    def switch_round():
        for shapes, arrays in zip((a, b), inputs):
            for i, shape in enumerate(shapes):
                switching.resize_tensor_input(i, shape)
            switching.allocate_tensors()
            for index, values in arrays:
                switching.set_tensor(index, values)
            switching.invoke()

    results = []
    for round_fn in (fixed_round, switch_round):
        round_fn()
        iterations = 1
        while True:
            wall0, cpu0 = time.perf_counter(), time.process_time()
            for _ in range(iterations):
                round_fn()
            wall = time.perf_counter() - wall0
            cpu = time.process_time() - cpu0
            if wall >= min_time or iterations >= 10**6:
                results.append((wall / iterations * 1e6,
                                cpu / iterations * 1e6))
                break
            iterations = max(iterations * 2, int(
                iterations * min_time / max(wall, 1e-9) * 1.2))
    return results  # [(fixed wall, cpu), (switch wall, cpu)]


def add_shape_switch_rows(rows, notes, kiln, corpus, min_time):
    """Rows of the plan cache benchmark (docs/benchmarks.md, "Plan cache")."""
    for case, (label, relative, a, b) in enumerate(SHAPE_SWITCH_CASES):
        path = os.path.join(corpus, relative)
        bench = {v: kiln.get("BM_AlternateShapes%s/%d" % (v, case))
                 for v in ("Fixed", "Cached", "Uncached")}
        if not os.path.isfile(path) or any(
                x is None or "error" in x for x in bench.values()):
            notes.append("%s: skipped (%s)" % (label, next(
                (x["error"] for x in bench.values() if x and "error" in x),
                "%s absent" % path)))
            continue
        litert = {}
        for config in ("builtin", "default"):
            try:
                litert[config] = litert_shape_switch_us(path, config, a, b,
                                                        min_time)
            except Exception as e:  # LiteRT refusing a resize is a result
                notes.append("%s, LiteRT %s: %s" % (
                    label, config, str(e).splitlines()[0][:100]))
        cpu = {v: to_us(x, "cpu_time") for v, x in bench.items()}
        wall = {v: to_us(x) for v, x in bench.items()}
        ratio = cpu["Cached"] / cpu["Fixed"]
        if "builtin" in litert:
            (fixed_wall, fixed_cpu), (switch_wall, switch_cpu) = \
                litert["builtin"]
            add_row(rows, "%s: fixed shapes, invoke, CPU" % label,
                    cpu["Fixed"], fixed_cpu, "us", target="(info)",
                    litert_note="builtin")
            add_row(rows, "%s: resize+allocate+invoke, cache on, CPU" % label,
                    cpu["Cached"], switch_cpu, "us", target="(info)",
                    litert_note="builtin")
            add_row(rows, "%s: resize+allocate+invoke, cache off, CPU" %
                    label, cpu["Uncached"], switch_cpu, "us",
                    target="(info)", litert_note="builtin")
            add_row(rows, "%s: switching / fixed, wall" % label,
                    wall["Cached"] / wall["Fixed"], switch_wall / fixed_wall,
                    "x", target="(info)", litert_note="builtin", ratio=False)
        litert_ratio = {c: r[1][1] / r[0][1] for c, r in litert.items()}
        for config in ("builtin", "default"):
            add_row(rows, "%s: switching / fixed, CPU" % label, ratio,
                    litert_ratio.get(config), "x",
                    target=("Kiln cache on <= %gx" % SHAPE_SWITCH_TARGET
                            if config == "builtin" else "(info)"),
                    met=ratio <= SHAPE_SWITCH_TARGET
                    if config == "builtin" else None,
                    litert_note=config, ratio=False)


# ---- Table ----

def fmt(value, unit):
    if value is None:
        return "n/a"
    if isinstance(value, str):
        return value
    if unit == "B":
        return "%d B" % value
    if unit == "x":
        return "%.2fx" % value
    return ("%.3g %s" % (value, unit)) if value < 100 else \
        ("%.0f %s" % (value, unit))


def add_row(rows, benchmark, kiln, litert, unit, target="", met=None,
            litert_note="", ratio=True):
    rows.append({
        "benchmark": benchmark,
        "kiln": kiln,
        "litert": litert,
        "litert_note": litert_note,
        "unit": unit,
        "ratio": (kiln / litert if ratio and isinstance(kiln, (int, float))
                  and isinstance(litert, (int, float)) and litert else None),
        "target": target,
        "target_met": met,
    })


def print_table(rows):
    header = ["benchmark", "Kiln", "LiteRT", "ratio", "target"]
    lines = []
    for row in rows:
        litert = fmt(row["litert"], row["unit"])
        if row["litert_note"]:
            litert += " (" + row["litert_note"] + ")"
        target = row["target"]
        if row["target_met"] is not None:
            target += " -- " + ("MET" if row["target_met"] else "MISSED")
        lines.append([row["benchmark"], fmt(row["kiln"], row["unit"]), litert,
                      fmt(row["ratio"], "x"), target])
    widths = [max(len(str(c)) for c in col) for col in zip(header, *lines)]
    out = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) +
           " |",
           "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    for line in lines:
        out.append("| " + " | ".join(str(c).ljust(w)
                                     for c, w in zip(line, widths)) + " |")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(
        description="Kiln's benchmarks beside LiteRT's, in the same run.")
    parser.add_argument("--benchmarks", default=find_benchmarks_binary(),
                        help="kiln_benchmarks binary (default: "
                             "build-bench/bin or build/bin in the repo)")
    parser.add_argument("--out", help="write the table as JSON to FILE")
    parser.add_argument("--model-dir",
                        help="where the generated models go (kept); default "
                             "a temporary directory, removed afterwards")
    parser.add_argument("--corpus", default=DEFAULT_CORPUS,
                        help="the shared model corpus (for "
                             "misc/mobilenet_like_model.bin)")
    parser.add_argument("--min-time", type=float, default=0.3,
                        help="seconds per measurement (default 0.3)")
    parser.add_argument("--repetitions", type=int, default=3,
                        help="repetitions of each Kiln benchmark; medians "
                             "are used (default 3)")
    parser.add_argument("--models", action="store_true",
                        help="instead: real models (converter corpus, "
                             "mobilenet_like), Kiln default vs LiteRT "
                             "default vs LiteRT builtin at 1 and 2 threads "
                             "(models_vs_litert.py; its flags follow)")
    args, rest = parser.parse_known_args()
    if args.models:
        import models_vs_litert
        forwarded = rest + ["--corpus", args.corpus]
        if args.out:
            forwarded += ["--out", args.out]
        return models_vs_litert.main(forwarded)
    if rest:
        parser.error("unrecognized arguments: " + " ".join(rest))
    if not args.benchmarks or not os.access(args.benchmarks, os.X_OK):
        sys.exit("compare_with_litert: kiln_benchmarks not found; build it "
                 "(cmake -DKILN_BUILD_BENCHMARKS=ON, target kiln_benchmarks) "
                 "and pass --benchmarks PATH")
    try:
        import ai_edge_litert  # noqa: F401
    except ImportError:
        sys.exit("compare_with_litert: the ai_edge_litert Python package is "
                 "not installed (pip install ai-edge-litert)")

    temporary = None
    model_dir = args.model_dir
    if model_dir is None:
        temporary = tempfile.TemporaryDirectory(prefix="kiln_compare_")
        model_dir = temporary.name
    os.makedirs(model_dir, exist_ok=True)
    started = time.time()
    load_before = os.getloadavg()
    context, kiln = run_kiln(args.benchmarks, model_dir, args.min_time,
                             args.repetitions)

    def model(name):
        return os.path.join(model_dir, name)

    mobilenet = os.path.join(args.corpus, "misc", "mobilenet_like_model.bin")
    configs = ("builtin", "default")
    rows = []
    notes = []

    # Dispatch overhead.
    print("measuring LiteRT dispatch...", file=sys.stderr, flush=True)
    k1 = kiln.get("BM_DispatchOverhead/1")
    k1000 = kiln.get("BM_DispatchOverhead/%d" % DISPATCH_NODES)
    kiln_marginal = kiln_raw = kiln_marginal_cpu = None
    if k1 and k1000 and "error" not in k1 and "error" not in k1000:
        kiln_marginal = (to_us(k1000) - to_us(k1)) * 1e3 / (DISPATCH_NODES - 1)
        kiln_marginal_cpu = (to_us(k1000, "cpu_time") -
                             to_us(k1, "cpu_time")) * 1e3 / (DISPATCH_NODES - 1)
        kiln_raw = k1000["ns_per_node"]
    for config in configs:
        w1, c1 = litert_invoke_us(model("dispatch_add_1.tflite"), config,
                                  args.min_time)
        w1000, c1000 = litert_invoke_us(
            model("dispatch_add_%d.tflite" % DISPATCH_NODES), config,
            args.min_time)
        marginal = (w1000 - w1) * 1e3 / (DISPATCH_NODES - 1)
        marginal_cpu = (c1000 - c1) * 1e3 / (DISPATCH_NODES - 1)
        is_target = config == "builtin"
        add_row(rows, "dispatch ns/node, marginal, wall", kiln_marginal,
                marginal, "ns",
                target="<= LiteRT builtin" if is_target else "(info)",
                met=(kiln_marginal <= marginal
                     if is_target and kiln_marginal is not None else None),
                litert_note=config)
        add_row(rows, "dispatch ns/node, marginal, CPU", kiln_marginal_cpu,
                marginal_cpu, "ns",
                target="<= LiteRT builtin" if is_target else "(info)",
                met=(kiln_marginal_cpu <= marginal_cpu
                     if is_target and kiln_marginal_cpu is not None else None),
                litert_note=config)
        add_row(rows, "dispatch ns/node, T(1000)/1000, wall", kiln_raw,
                w1000 * 1e3 / DISPATCH_NODES, "ns", target="(info)",
                litert_note=config)

    # Open time vs weight bytes.
    print("measuring LiteRT open...", file=sys.stderr, flush=True)
    for external in (False, True):
        suffix = "_external" if external else ""
        label = "open, external data" if external else "open"
        kiln_times, litert_times = {}, {}
        for mib in LARGE_MIB:
            name = "BM_ModelOpen%s/%d/manual_time" % (
                "External" if external else "", mib)
            bench = kiln.get(name)
            kiln_times[mib] = (to_us(bench) if bench and "error" not in bench
                               else None)
            path = model("large_%dmib%s.tflite" % (mib, suffix))
            try:
                litert_times[mib] = litert_open_us(path, "builtin", 9)
            except Exception as e:  # LiteRT refusing the model is a result
                litert_times[mib] = "error: %s" % str(e).splitlines()[0][:60]
            add_row(rows, "%s %d MiB weights" % (label, mib),
                    kiln_times[mib], litert_times[mib], "us",
                    target="(info)",
                    litert_note="builtin, Interpreter() construction")
        lo, hi = LARGE_MIB[0], LARGE_MIB[-1]

        def added(times):
            if isinstance(times.get(lo), float) and \
                    isinstance(times.get(hi), float):
                return times[hi] - times[lo]
            return None

        def growth(times):
            if isinstance(times.get(lo), float) and \
                    isinstance(times.get(hi), float):
                return times[hi] / times[lo]
            return None
        copy_added = (read_file_us(model("large_%dmib%s.tflite" % (hi, suffix)))
                      - read_file_us(model("large_%dmib%s.tflite" %
                                           (lo, suffix))))
        limit = FLAT_ADDED_FRACTION * copy_added
        kiln_added = added(kiln_times)
        add_row(rows, "%s added time %d->%d MiB" % (label, lo, hi),
                kiln_added, added(litert_times), "us",
                target="flat: <= %g%% of what reading the extra bytes adds "
                       "(%.0f us)" % (FLAT_ADDED_FRACTION * 100, copy_added),
                met=(kiln_added <= limit if kiln_added is not None else None),
                ratio=False)
        add_row(rows, "%s time ratio %d->%d MiB" % (label, lo, hi),
                growth(kiln_times), growth(litert_times), "x",
                target="(info; weights x%d, FC layers %d->%d)" %
                (hi // lo, lo // 64, hi // 64), ratio=False)

    # Invoke latency and memory.
    print("measuring LiteRT invoke and memory...", file=sys.stderr,
          flush=True)
    latency_models = [("example CNN", "BM_InvokeExampleCnn",
                       model("example_cnn.tflite")),
                      ("mobilenet_like_model.bin", "BM_InvokeMobilenetLike",
                       mobilenet),
                      ("1000 ADD nodes", "BM_DispatchOverhead/%d" %
                       DISPATCH_NODES,
                       model("dispatch_add_%d.tflite" % DISPATCH_NODES))]
    for label, bench_name, path in latency_models:
        bench = kiln.get(bench_name)
        if bench is None or "error" in bench or not os.path.isfile(path):
            reason = (bench or {}).get("error", "%s absent" % path)
            notes.append("%s: skipped (%s)" % (label, reason))
            continue
        if label != "1000 ADD nodes":
            for config in configs:
                wall, cpu = litert_invoke_us(path, config, args.min_time)
                add_row(rows, "invoke %s, wall" % label, to_us(bench), wall,
                        "us", target="(info)", litert_note=config)
                add_row(rows, "invoke %s, CPU" % label,
                        to_us(bench, "cpu_time"), cpu, "us", target="(info)",
                        litert_note=config)
        for config in configs:
            add_row(rows, "memory %s" % label, int(bench["arena_bytes"]),
                    litert_rss_delta(path, config), "B", target="(info)",
                    litert_note=config + ", RSS delta of allocate_tensors, "
                    "not an arena size", ratio=False)

    # Plan cache: alternating input shapes.
    print("measuring LiteRT resize + allocate + invoke...", file=sys.stderr,
          flush=True)
    add_shape_switch_rows(rows, notes, kiln, args.corpus, args.min_time)

    table = print_table(rows)
    print(table)
    for note in notes:
        print("note: " + note)
    elapsed = time.time() - started
    print("(run took %.0f s; load average before %.2f, after %.2f)" %
          (elapsed, load_before[0], os.getloadavg()[0]), file=sys.stderr)
    if args.out:
        import ai_edge_litert
        result = {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "machine": {"platform": platform.platform(),
                        "cpus": os.cpu_count(),
                        "load_average_before": load_before,
                        "load_average_after": os.getloadavg(),
                        "kiln_benchmarks_context": context},
            "litert_version": getattr(ai_edge_litert, "__version__", None),
            "litert_threads": 1,
            "rows": rows,
            "notes": notes,
            "table": table,
            "elapsed_s": elapsed,
        }
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
    if temporary is not None:
        temporary.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
