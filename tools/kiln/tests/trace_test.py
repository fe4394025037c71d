#!/usr/bin/env python3
"""`kiln bench MODEL --trace FILE --profile --json` on the example CNN and,
when present, corpus models (with and without a delegate).

Checks, for each case:
  - the file is Chrome trace-event JSON as Perfetto and chrome://tracing
    read it: an object whose "traceEvents" is a list of events with "name",
    "ph" ("X" complete events, "M" metadata), "pid" and "tid"; complete
    events have "cat", "ts" and "dur" in microseconds (numbers, dur >= 0)
    and an "args" object; node events name node, op, version and plugin;
  - every Invoke (warmup and timed) has exactly one "invoke" event per node
    the plan runs and one "partition_invoke" event per delegate partition.
    Without a delegate, the oracle for the nodes is LiteRT's operator list
    of the model file (Interpreter._get_ops_details()); with one, the nodes
    it claimed are those `kiln inspect --delegate` reports;
  - the --profile table counts the same node events.
Exits 0 when every case passes; 77 (skip) when the example model cannot be
built.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77


def run(cmd, env):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, capture_output=True, text=True, env=env,
                          timeout=600)


def litert_num_ops(model):
    from ai_edge_litert.interpreter import Interpreter
    return len(Interpreter(model_path=model)._get_ops_details())


def check_format(trace):
    """Problems with the trace-event structure, as strings."""
    if not isinstance(trace, dict) or not isinstance(
            trace.get("traceEvents"), list):
        return ["top level is not an object with a traceEvents list"]
    problems = []
    for i, e in enumerate(trace["traceEvents"]):
        where = "event %d (%s)" % (i, e.get("name"))
        for key, kind in (("name", str), ("ph", str), ("pid", int),
                          ("tid", int)):
            if not isinstance(e.get(key), kind):
                problems.append("%s: %s is not %s" % (where, key,
                                                      kind.__name__))
        if e.get("ph") == "M":
            continue
        if e.get("ph") != "X":
            problems.append("%s: ph is %r" % (where, e.get("ph")))
            continue
        if not isinstance(e.get("cat"), str):
            problems.append(where + ": cat is not a string")
        for key in ("ts", "dur"):
            if not isinstance(e.get(key), (int, float)) or e[key] < 0:
                problems.append("%s: %s is %r" % (where, key, e.get(key)))
        args = e.get("args")
        if not isinstance(args, dict):
            problems.append(where + ": args is not an object")
        elif e["cat"] in ("invoke", "partition_invoke"):
            for key, kind in (("node", int), ("op", str), ("version", int),
                              ("run", int)):
                if not isinstance(args.get(key), kind):
                    problems.append("%s: args.%s is %r" %
                                    (where, key, args.get(key)))
            if e["cat"] == "partition_invoke" and "plugin" not in args:
                problems.append(where + ": args.plugin missing")
    return problems[:20]


def node_events(trace):
    """{run: [(cat, node)]} of the node events."""
    runs = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "X" and e["cat"] in ("invoke", "partition_invoke"):
            runs.setdefault(e["args"]["run"], []).append(
                (e["cat"], e["args"]["node"]))
    return runs


def expected_events(kiln, model, delegate, env):
    """(kernel nodes, number of partitions) one Invoke runs."""
    num_ops = litert_num_ops(model)
    if delegate is None:
        return set(range(num_ops)), 0
    p = run([kiln, "inspect", model, "--json", "--delegate", delegate], env)
    if p.returncode != 0:
        raise RuntimeError("kiln inspect failed:\n" + p.stderr)
    nodes = json.loads(p.stdout)["subgraphs"][0]["nodes"]
    if len(nodes) != num_ops:
        raise RuntimeError("kiln inspect lists %d nodes, LiteRT %d" %
                           (len(nodes), num_ops))
    kernels = {n["index"] for n in nodes if not n["delegate"]["claimed"]}
    partitions = {n["delegate"]["partition_node"] for n in nodes
                  if n["delegate"]["claimed"]}
    return kernels, len(partitions)


def check_case(kiln, model, delegate, env, tmp):
    trace_path = os.path.join(tmp, "trace.json")
    cmd = [kiln, "bench", model, "--iterations", "3", "--warmup", "1",
           "--profile", "--trace", trace_path, "--json"]
    # No delegate: the kernel plugins alone (no default delegate either).
    cmd += ["--delegate", delegate if delegate is not None else "none"]
    p = run(cmd, env)
    if p.returncode != 0:
        return ["kiln bench exited with %d:\n%s" % (p.returncode, p.stderr)]
    if delegate is not None and "warning" in p.stderr:
        return ["the delegate warned (skipped or fell back):\n" + p.stderr]
    report = json.loads(p.stdout)
    with open(trace_path) as f:
        trace = json.load(f)
    problems = check_format(trace)
    if problems:
        return problems
    if report["trace"]["events"] != sum(
            1 for e in trace["traceEvents"] if e["ph"] == "X"):
        problems.append("the report's trace event count differs")
    kernels, partitions = expected_events(kiln, model, delegate, env)
    runs = node_events(trace)
    if sorted(runs) != [0, 1, 2, 3]:
        problems.append("node events for runs %s, expected 0..3" %
                        sorted(runs))
    for r, events in sorted(runs.items()):
        kernel_nodes = [n for cat, n in events if cat == "invoke"]
        partition_nodes = [n for cat, n in events if cat == "partition_invoke"]
        if sorted(kernel_nodes) != sorted(kernels):
            problems.append("run %d: kernel node events %s, expected one for "
                            "each of %s" % (r, sorted(kernel_nodes),
                                            sorted(kernels)))
        if len(partition_nodes) != partitions or \
                len(set(partition_nodes)) != partitions:
            problems.append("run %d: partition events %s, expected one for "
                            "each of %d partitions" %
                            (r, partition_nodes, partitions))
    table = report["profile"]
    counted = sum(row["count"] for row in table["ops"]) + sum(
        row["count"] for row in table["partitions"])
    if table["runs"] != 3 or counted != 3 * (len(kernels) + partitions):
        problems.append("profile table: %d runs, %d node events counted" %
                        (table["runs"], counted))
    print("%s%s: %d events, %d kernel nodes and %d partitions per run" %
          (os.path.basename(model),
           "" if delegate is None else " with " + delegate,
           len(trace["traceEvents"]), len(kernels), partitions))
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--xnnpack", action="store_true",
                    help="also trace mobilenet_like with the xnnpack "
                    "delegate")
    ap.add_argument("--opencl", action="store_true",
                    help="also trace mobilenet_like with opencl:device=cpu")
    args = ap.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory(prefix="kiln_trace_test_") as tmp:
        env = dict(os.environ, POCL_CACHE_DIR=os.path.join(tmp, "pocl"),
                   XDG_CACHE_HOME=os.path.join(tmp, "xdg"))
        example = os.path.join(tmp, "example_cnn.tflite")
        p = run([args.kiln, "build-example", example], env)
        if p.returncode != 0:
            print("kiln build-example failed:\n" + p.stderr)
            return SKIP
        cases = [(example, None)]
        corpus = os.path.join(args.models, "misc", "mobilenet_like_model.bin")
        if os.path.isfile(corpus):
            cases.append((corpus, None))
            if args.opencl:
                cases.append((corpus, "opencl:device=cpu"))
            elif args.xnnpack:
                cases.append((corpus, "xnnpack:float32=true"))
        else:
            print("note: %s absent; tracing the example model only" % corpus)
        for model, delegate in cases:
            problems = check_case(args.kiln, model, delegate, env, tmp)
            for problem in problems:
                print("FAIL: " + problem)
            failed += bool(problems)
    print("%d cases, %d failed" % (len(cases), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
