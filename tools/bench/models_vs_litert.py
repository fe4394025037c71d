#!/usr/bin/env python3
"""Real models: Kiln default vs LiteRT default vs LiteRT builtin, one run.

For every model of the corpus' converter/ folder (float32, fp16, int8; dyn8
and int16x8 with --all) and misc/mobilenet_like_model.bin, at 1 and 2
threads, in fresh processes, one configuration after another per model:

  kiln-default  `kiln bench MODEL --threads T` (the default xnnpack delegate)
  kiln-cpu      `kiln bench MODEL --delegate none --threads T` (the CPU
                plugin alone; its heavy kernels run on the interpreter's
                pool through kiln.parallel_for/1)
  litert-default  ai_edge_litert Interpreter, OpResolverType.AUTO,
                num_threads=T (LiteRT applies its XNNPACK delegate)
  litert-builtin  OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
                num_threads=T (its builtin kernels)

Each figure is the median over --rounds rounds (default 3); a round
measures the four configurations of one model and thread count one after
another, so slow phases of a shared machine hit every configuration alike
rather than one. Within a round: invoke latency = median wall time of the
longer of two runs (n = --iterations invokes, then max(3n, enough invokes
for --min-time seconds) after --warmup untimed ones on fixed inputs: a
sub-millisecond model gets hundreds of invokes, not 90); CPU ms = the
process CPU time (user + system, all threads) one more invoke adds,
(CPU(long) - CPU(n)) / (long - n), so init and warm-up cancel: on a shared,
loaded machine wall time mostly measures the scheduler, CPU time the work
(at 2 threads it adds both threads' time, spinning included); init = model open + interpreter creation +
tensor allocation (Kiln's `init_ms`; LiteRT: Interpreter(model_path) +
allocate_tensors(), measured in the child); peak RSS = the child process'
ru_maxrss (os.wait4), which for LiteRT includes the Python interpreter and
numpy (~30 MB; reported as is, so LiteRT's figure is an upper bound).

Prints one table and the geometric means of Kiln default / LiteRT default and
Kiln CPU / LiteRT builtin; --out FILE writes everything as JSON. Started by
`compare_with_litert.py --models` or directly. Python is only the driver.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_CORPUS = os.path.abspath(os.path.join(REPO, "..", "shared", "models"))
VARIANTS = ("float32", "fp16", "int8")
MORE_VARIANTS = ("dyn8", "int16x8")
FAMILIES = ("mobilenet_v2", "transformer_block", "unet_small")

LITERT_CHILD = r"""
import json, statistics, sys, time
import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
path, config, threads, warmup, iterations = sys.argv[1:6]
resolver = {"builtin": OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
            "default": OpResolverType.AUTO}[config]
t0 = time.perf_counter()
it = Interpreter(model_path=path, num_threads=int(threads),
                 experimental_op_resolver_type=resolver)
it.allocate_tensors()
init_ms = (time.perf_counter() - t0) * 1e3
rng = np.random.default_rng(1)
for d in it.get_input_details():
    shape, dtype = d["shape"], d["dtype"]
    if np.issubdtype(dtype, np.floating):
        v = rng.uniform(-1, 1, shape).astype(dtype)
    elif dtype == np.int8 or dtype == np.uint8:
        info = np.iinfo(dtype)
        v = rng.integers(info.min, info.max + 1, shape).astype(dtype)
    else:
        v = np.ones(shape, dtype)
    it.set_tensor(d["index"], v)
for _ in range(int(warmup)):
    it.invoke()
times = []
for _ in range(int(iterations)):
    s = time.perf_counter()
    it.invoke()
    times.append((time.perf_counter() - s) * 1e3)
print(json.dumps({"init_ms": init_ms, "invoke_ms": statistics.median(times)}))
"""


def run_measured(command):
    """Runs `command`: (stdout or None, peak RSS MiB, CPU seconds)."""
    p = subprocess.Popen(command, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    # Read the pipes without reaping, then reap with wait4 for the rusage.
    out = p.stdout.read().decode()
    err = p.stderr.read().decode()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    rss_mib = usage.ru_maxrss / 1024.0
    cpu_s = usage.ru_utime + usage.ru_stime
    if p.returncode != 0:
        print(f"  failed ({p.returncode}): {' '.join(command)}\n"
              f"{err.strip()[-800:]}", file=sys.stderr)
        return None, rss_mib, cpu_s
    return out, rss_mib, cpu_s


def marginal(run, iterations, min_time_s):
    """Runs `run(n)` with n = `iterations` invokes, then with max(3n, enough
    invokes for `min_time_s` at the first run's median): the figures of the
    longer run plus cpu_ms, the process CPU time one more invoke adds
    ((CPU(long) - CPU(n)) / (long - n): init and warm-up cancel), which the
    load of a shared machine disturbs far less than wall time."""
    short, _, cpu_short = run(iterations)
    if short is None:
        return None
    per_invoke_s = max(short["invoke_ms"], 1e-3) / 1e3
    n_long = max(3 * iterations, int(math.ceil(min_time_s / per_invoke_s)))
    long, rss, cpu_long = run(n_long)
    if long is None:
        return None
    long["rss_mib"] = rss
    long["iterations"] = n_long
    long["cpu_ms"] = (cpu_long - cpu_short) * 1e3 / (n_long - iterations)
    return long


def median_of_rounds(rounds):
    """One configuration's figures over rounds (None where a round failed):
    the median of each figure, the largest RSS, and every round's latency."""
    done = [r for r in rounds if r is not None]
    if not done:
        return None
    out = {key: statistics.median(r[key] for r in done)
           for key in ("invoke_ms", "init_ms", "cpu_ms")}
    out["rss_mib"] = max(r["rss_mib"] for r in done)
    out["rounds_invoke_ms"] = [r["invoke_ms"] for r in done]
    out["delegates"] = done[0].get("delegates", [])
    return out


def kiln_figures(kiln, model, threads, delegate_none, warmup, iterations,
                 min_time_s):
    def run(n):
        command = [kiln, "bench", model, "--json", "--warmup", str(warmup),
                   "--iterations", str(n), "--threads", str(threads)]
        if delegate_none:
            command += ["--delegate", "none"]
        out, rss, cpu = run_measured(command)
        if out is None:
            return None, rss, cpu
        j = json.loads(out)
        return ({"invoke_ms": j["invoke_ms"]["median"], "init_ms": j["init_ms"],
                 "delegates": j.get("delegates", [])}, rss, cpu)
    return marginal(run, iterations, min_time_s)


def litert_figures(model, config, threads, warmup, iterations, min_time_s):
    def run(n):
        out, rss, cpu = run_measured([sys.executable, "-c", LITERT_CHILD, model,
                                      config, str(threads), str(warmup),
                                      str(n)])
        if out is None:
            return None, rss, cpu
        return json.loads(out.strip().splitlines()[-1]), rss, cpu
    return marginal(run, iterations, min_time_s)


def geomean(values):
    values = [v for v in values if v and v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def fmt(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def fmt_range(values):
    """'lo-hi' of per-round ratios ('-' when none)."""
    if not values:
        return "-"
    return f"{min(values):.2f}-{max(values):.2f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kiln", default=os.path.join(REPO, "build", "bin", "kiln"))
    ap.add_argument("--corpus", default=DEFAULT_CORPUS)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--min-time", type=float, default=0.3,
                    help="seconds of invokes in each longer run (at least)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="rounds per model and thread count; figures are "
                         "the medians over rounds")
    ap.add_argument("--all", action="store_true",
                    help="also the dyn8 and int16x8 models")
    ap.add_argument("--only", help="substring: only models containing it")
    ap.add_argument("--out", help="write the results as JSON")
    args = ap.parse_args(argv)
    variants = VARIANTS + (MORE_VARIANTS if args.all else ())
    models = [os.path.join(args.corpus, "converter", f"{f}_{v}.tflite")
              for f in FAMILIES for v in variants]
    models.append(os.path.join(args.corpus, "misc", "mobilenet_like_model.bin"))
    models = [m for m in models if os.path.exists(m) and
              (not args.only or args.only in m)]
    if not models:
        sys.exit(f"models_vs_litert: no model found under {args.corpus}")
    threads = [int(t) for t in args.threads.split(",")]
    load_before = os.getloadavg()
    started = time.time()
    results = []
    counts = (args.warmup, args.iterations, args.min_time)
    for model in models:
        name = os.path.relpath(model, args.corpus)
        for t in threads:
            print(f"measuring {name} at {t} thread(s), {args.rounds} "
                  "round(s)...", file=sys.stderr, flush=True)
            rounds = {"kiln_cpu": [], "kiln_default": [],
                      "litert_default": [], "litert_builtin": []}
            for _ in range(args.rounds):
                rounds["kiln_cpu"].append(
                    kiln_figures(args.kiln, model, t, True, *counts))
                rounds["kiln_default"].append(
                    kiln_figures(args.kiln, model, t, False, *counts))
                rounds["litert_default"].append(
                    litert_figures(model, "default", t, *counts))
                rounds["litert_builtin"].append(
                    litert_figures(model, "builtin", t, *counts))
            row = {"model": name, "threads": t}
            row.update({k: median_of_rounds(v) for k, v in rounds.items()})
            kd, ld = rounds["kiln_default"], rounds["litert_default"]
            row["rounds_ratio_default"] = [
                a["invoke_ms"] / b["invoke_ms"] for a, b in zip(kd, ld)
                if a and b and b["invoke_ms"] > 0]
            results.append(row)
    header = ("model", "thr", "kiln def ms", "litert def ms", "ratio",
              "rounds' ratios",
              "CPU ms kiln/litert def", "CPU ratio", "litert builtin ms",
              "kiln cpu ms", "cpu/builtin", "CPU ratio cpu/builtin",
              "init kiln/litert ms", "RSS kiln/litert MiB")
    lines = [header]
    summary = {}
    for t in threads:
        ratios, cpu_ratios, cpu_time_ratios, cpu_time_cpu_ratios = (
            [], [], [], [])
        for r in (r for r in results if r["threads"] == t):
            kd, ld = r["kiln_default"], r["litert_default"]
            lb, kc = r["litert_builtin"], r["kiln_cpu"]
            def div(a, b, key):
                return a[key] / b[key] if a and b and b[key] > 0 else None
            ratio = div(kd, ld, "invoke_ms")
            cpu_ratio = div(kc, lb, "invoke_ms")
            ratio_cpu_time = div(kd, ld, "cpu_ms")
            cpu_ratio_cpu_time = div(kc, lb, "cpu_ms")
            r["ratio_default"] = ratio
            r["ratio_cpu_vs_builtin"] = cpu_ratio
            r["ratio_default_cpu_time"] = ratio_cpu_time
            r["ratio_cpu_vs_builtin_cpu_time"] = cpu_ratio_cpu_time
            ratios.append(ratio)
            cpu_ratios.append(cpu_ratio)
            cpu_time_ratios.append(ratio_cpu_time)
            cpu_time_cpu_ratios.append(cpu_ratio_cpu_time)
            lines.append((
                r["model"], str(t), fmt(kd and kd["invoke_ms"], 3),
                fmt(ld and ld["invoke_ms"], 3), fmt(ratio),
                fmt_range(r["rounds_ratio_default"]),
                f"{fmt(kd and kd['cpu_ms'])}/{fmt(ld and ld['cpu_ms'])}",
                fmt(ratio_cpu_time),
                fmt(lb and lb["invoke_ms"], 3), fmt(kc and kc["invoke_ms"], 3),
                fmt(cpu_ratio), fmt(cpu_ratio_cpu_time),
                f"{fmt(kd and kd['init_ms'], 1)}/{fmt(ld and ld['init_ms'], 1)}",
                f"{fmt(kd and kd['rss_mib'], 0)}/{fmt(ld and ld['rss_mib'], 0)}"))
        present = [x for x in ratios if x]
        present_cpu = [x for x in cpu_time_ratios if x]
        summary[t] = {"geomean_default": geomean(ratios),
                      "max_default": max(present) if present else None,
                      "geomean_cpu_vs_builtin": geomean(cpu_ratios),
                      "geomean_default_cpu_time": geomean(cpu_time_ratios),
                      "max_default_cpu_time":
                          max(present_cpu) if present_cpu else None,
                      "geomean_cpu_vs_builtin_cpu_time":
                          geomean(cpu_time_cpu_ratios)}
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for line in lines:
        print("  ".join(c.ljust(w) for c, w in zip(line, widths)))
    for t, s in summary.items():
        print(f"{t} thread(s): Kiln default / LiteRT default geometric mean "
              f"{fmt(s['geomean_default'])}x wall (max "
              f"{fmt(s['max_default'])}x), "
              f"{fmt(s['geomean_default_cpu_time'])}x CPU time (max "
              f"{fmt(s['max_default_cpu_time'])}x); Kiln CPU plugin / LiteRT "
              f"builtin {fmt(s['geomean_cpu_vs_builtin'])}x wall, "
              f"{fmt(s['geomean_cpu_vs_builtin_cpu_time'])}x CPU time")
    load_after = os.getloadavg()
    print(f"load average before {load_before[0]:.2f}, after "
          f"{load_after[0]:.2f} ({os.cpu_count()} CPUs); "
          f"{time.time() - started:.0f} s")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"results": results, "summary": summary,
                       "load_before": load_before, "load_after": load_after},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
