#!/usr/bin/env python3
"""Runs converter models through Kiln and through LiteRT and compares.

Test tooling for the quantized nn kernels, on the integer and dynamic-range
flavours in shared/models/converter, with one seeded random input each:

1. Every node whose op is implemented in kernels/nn, run alone on the very
   input values LiteRT computed for it in the whole model: Kiln's output
   must equal LiteRT's bit for bit when the node is integer or hybrid (float
   activations, int8 weights); float-only nodes within --tolerance. This
   isolates each kernel: in a hybrid model an ulp of difference in a float
   op upstream can move a later activation quantization by one step.
2. The whole model: integer outputs exact, float outputs within --tolerance
   or within the spread between LiteRT's own two kernel sets, whichever is
   larger (on mobilenet_v2_dyn8 the reference and optimized kernels part
   by up to 4% of a layer's range, for the reason above). A model LiteRT
   refuses must be refused by Kiln too. A model Kiln cannot run only for
   want of kernels outside kernels/nn is reported and not compared here
   (tools/kiln/tests/differential_test.py covers whole models).

LiteRT runs in a child process (its reference kernels, BUILTIN_REF, abort
the process on some models); where the reference kernels abort or refuse,
the optimized ones without XNNPACK (BUILTIN_WITHOUT_DEFAULT_DELEGATES) are
the oracle and the line says so. When the reference kernels abort on a whole
model that the optimized ones run (mobilenet_v2_int8's SOFTMAX), the model's
prefix without its trailing ops is also compared with the reference.

Exit code: 0 all agree, 1 a mismatch, 77 when LiteRT or the models are
missing (CTest's skip code).
"""
import argparse
import collections
import glob
import os
import re
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    from ai_edge_litert import schema_py_generated as schema
    from ai_edge_litert.interpreter import Interpreter
    import litert_single_op as lso
except ImportError:  # pragma: no cover - environment without LiteRT
    print("ai_edge_litert is not installed: skipped")
    sys.exit(77)

FLAVOURS = ("int8", "int16x8", "dyn8")

# Builtin ops whose CPU kernels live in plugins/cpu/kernels/nn.
NN_OPS = frozenset((
    "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV",
    "BATCH_MATMUL", "MEAN", "SUM", "REDUCE_PROD", "REDUCE_MAX", "REDUCE_MIN",
    "SOFTMAX", "LOG_SOFTMAX", "MAX_POOL_2D", "AVERAGE_POOL_2D",
    "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", "L2_NORMALIZATION",
    "ARG_MAX", "ARG_MIN"))

OP_NAMES = {v: k for k, v in vars(schema.BuiltinOperator).items()
            if not k.startswith("_")}
TT = schema.TensorType
UNPROBED_TYPES = (TT.STRING, TT.RESOURCE, TT.VARIANT)


def model_inputs(path, seed):
    """Seeded values for every input of `path`, over each type's range."""
    interp = Interpreter(model_path=path)
    rng = np.random.default_rng(seed)
    return [lso.random_values(rng, d["dtype"], d["shape"])
            for d in interp.get_input_details()]


def relative_error(a, b):
    """max |a - b| over max |b| (b the reference)."""
    scale = max(float(np.abs(b).max(initial=0)), 1e-30)
    return float(np.abs(a.astype(np.float64) - b).max(initial=0)) / scale


def compare(kiln, ref, tolerance):
    """Returns a problem description, or None when the outputs agree.
    Integers must be equal; floats within `tolerance` (0: bit for bit)."""
    if len(kiln) != len(ref):
        return f"{len(kiln)} outputs, LiteRT has {len(ref)}"
    for i, (a, b) in enumerate(zip(kiln, ref)):
        if a.shape != b.shape or a.dtype != b.dtype:
            return (f"output {i}: {a.dtype}{list(a.shape)} vs LiteRT "
                    f"{b.dtype}{list(b.shape)}")
        if np.issubdtype(a.dtype, np.integer):
            diff = np.abs(a.astype(np.int64) - b.astype(np.int64))
            if diff.max(initial=0) != 0:
                return (f"output {i}: {int((diff != 0).sum())} of {a.size} "
                        f"values differ, max by {int(diff.max())}")
        elif tolerance == 0:
            if not np.array_equal(a, b, equal_nan=True):
                return (f"output {i}: {int((a != b).sum())} of {a.size} "
                        f"values differ, max relative error "
                        f"{relative_error(a, b):.3g}")
        else:
            err = relative_error(a, b)
            if not np.isfinite(err) or err > tolerance:
                return f"output {i}: max relative error {err:.3g}"
    return None


# ---- model surgery ---------------------------------------------------------

def load_model(path):
    with open(path, "rb") as f:
        return schema.ModelT.InitFromPackedBuf(f.read(), 0)


def op_name(model, op):
    code = model.operatorCodes[op.opcodeIndex]
    return OP_NAMES.get(max(code.builtinCode, code.deprecatedBuiltinCode), "?")


def is_constant(model, graph, t):
    data = model.buffers[graph.tensors[t].buffer].data
    return data is not None and len(data) > 0


def write_graph(model, operators, inputs, outputs, path):
    """Writes `model` with subgraph 0 cut down to `operators`, `inputs` and
    `outputs` (tensor indices) to `path`; `model` is left as it was."""
    graph = model.subgraphs[0]
    saved = graph.operators, graph.inputs, graph.outputs
    graph.operators, graph.inputs, graph.outputs = operators, inputs, outputs
    try:
        builder = lso.flatbuffers.Builder(1024)
        builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
        with open(path, "wb") as f:
            f.write(builder.Output())
    finally:
        graph.operators, graph.inputs, graph.outputs = saved


def run_litert(pools, path, inputs, work):
    """Tries each resolver in turn; returns (outputs, resolver, errors)."""
    errors = []
    for name, pool in pools:
        out, err = pool.run(path, inputs, work)
        if err is None:
            return out, name, errors
        errors.append(f"{name}: {err[-160:]}")
    return None, None, errors


def run_kiln(args, path, inputs, work):
    return lso.run_kiln(args.kiln, path, inputs, work,
                        ["--no-default-plugins", "--plugin-dir",
                         args.plugin_dir] + args.kiln_arg)


# ---- whole model -------------------------------------------------------------

def compare_prefix(model, args, pool, work):
    """The reference refused the model: compares prefixes without the
    trailing ops (up to three) instead. Returns (text, ok)."""
    graph = model.subgraphs[0]
    ops = list(graph.operators)
    dropped = []
    for _ in range(min(3, len(ops) - 1)):
        op = ops.pop()
        dropped.insert(0, op_name(model, op))
        outputs = [i for i in op.inputs
                   if i >= 0 and not is_constant(model, graph, i)]
        prefix = os.path.join(work, "prefix.tflite")
        write_graph(model, ops, graph.inputs, outputs, prefix)
        inputs = model_inputs(prefix, args.seed)
        ref, ref_err = pool.run(prefix, inputs, work)
        if ref_err:
            continue
        kiln_out, kiln_err = run_kiln(args, prefix, inputs, work)
        if kiln_err:
            return f"prefix: Kiln refuses: {kiln_err[-200:]}", False
        problem = compare(kiln_out, ref, args.tolerance)
        label = f"prefix without trailing {'+'.join(dropped)}"
        return f"{label}: {problem or 'agree'}", problem is None
    return "no prefix that the reference runs", False


def spread(results):
    """Largest relative difference between LiteRT resolvers' float outputs."""
    ran = [out for out, err in results if err is None]
    worst = 0.0
    for other in ran[1:]:
        for a, b in zip(other, ran[0]):
            if np.issubdtype(b.dtype, np.floating) and a.shape == b.shape:
                worst = max(worst, relative_error(a, b))
    return worst


def missing_other_ops(kiln_err):
    """The ops Kiln names as lacking a kernel when none of them is an nn op
    (the model then waits for kernels this test does not cover), else
    None."""
    ops = set(re.findall(r"builtin op '(\w+)'", kiln_err or ""))
    return sorted(ops) if ops and not ops & NN_OPS else None


def check_whole_model(path, model, args, pools, work):
    """One verdict (resolver, text, ok) per LiteRT resolver."""
    inputs = model_inputs(path, args.seed)
    kiln_out, kiln_err = run_kiln(args, path, inputs, work)
    others = missing_other_ops(kiln_err)
    if others:
        return [("-", "not compared: Kiln has no kernel yet for "
                 f"{', '.join(others)} (outside kernels/nn)", True)]
    results = [pool.run(os.path.abspath(path), inputs, work)
               for _, pool in pools]
    tolerance = max(args.tolerance, spread(results))
    verdicts = []
    for (name, pool), (ref, ref_err) in zip(pools, results):
        if ref_err and kiln_err:
            verdicts.append((name, "both refuse", True))
        elif ref_err and name == "BUILTIN_REF" and "aborted" in ref_err:
            text, ok = compare_prefix(model, args, pool, work)
            verdicts.append((name, f"{ref_err}; {text}", ok))
        elif ref_err:
            verdicts.append((name, f"LiteRT refuses: {ref_err[-160:]}", False))
        elif kiln_err:
            verdicts.append((name, f"Kiln refuses: {kiln_err[-300:]}", False))
        else:
            problem = compare(kiln_out, ref, tolerance)
            verdicts.append((name, problem or f"agree (float tolerance "
                             f"{tolerance:.3g})", problem is None))
    return verdicts


# ---- node by node ------------------------------------------------------------

def tensor_values(path, model, args, pools, work):
    """LiteRT's value of every tensor of subgraph 0 (model inputs and every
    node's outputs) for the seeded input: (values by tensor index,
    resolver) or (None, why not)."""
    graph = model.subgraphs[0]
    probed = [t for op in graph.operators for t in op.outputs
              if t >= 0 and graph.tensors[t].type not in UNPROBED_TYPES]
    probed_path = os.path.join(work, "probed.tflite")
    write_graph(model, graph.operators, graph.inputs, probed, probed_path)
    inputs = model_inputs(path, args.seed)
    out, resolver, errors = run_litert(pools, probed_path, inputs, work)
    if out is None:
        return None, "; ".join(errors)
    values = dict(zip(graph.inputs, inputs))
    values.update(zip(probed, out))
    return values, resolver


def node_kind(model, graph, op):
    """'integer', 'hybrid' (float output, constant int8 weights), 'float'."""
    if all(graph.tensors[t].type != TT.FLOAT32 for t in op.outputs if t >= 0):
        return "integer"
    if any(t >= 0 and is_constant(model, graph, t) and
           graph.tensors[t].type in (TT.INT8, TT.INT4) for t in op.inputs):
        return "hybrid"
    return "float"


def check_node(model, index, values, args, pools, work):
    """Runs node `index` alone on `values`; returns (kind, oracle, problem
    or None)."""
    graph = model.subgraphs[0]
    op = graph.operators[index]
    kind = node_kind(model, graph, op)
    inputs = list(dict.fromkeys(t for t in op.inputs if t >= 0 and
                                not is_constant(model, graph, t)))
    if any(t not in values for t in inputs):
        return kind, "-", "an input has no LiteRT value"
    path = os.path.join(work, "node.tflite")
    feed = [values[t] for t in inputs]
    # The model may declare a shape that only holds before shapes propagate
    # (a RESHAPE upstream); the node gets the shapes LiteRT ran with.
    saved = [(graph.tensors[t].shape, graph.tensors[t].shapeSignature)
             for t in inputs]
    for t, value in zip(inputs, feed):
        graph.tensors[t].shape = np.array(value.shape, np.int32)
        graph.tensors[t].shapeSignature = None
    try:
        write_graph(model, [op], inputs, list(op.outputs), path)
    finally:
        for t, (shape, signature) in zip(inputs, saved):
            graph.tensors[t].shape = shape
            graph.tensors[t].shapeSignature = signature
    ref, oracle, errors = run_litert(pools, path, feed, work)
    kiln_out, kiln_err = run_kiln(args, path, feed, work)
    if ref is None:
        return kind, "-", (None if kiln_err else
                           "LiteRT refuses, Kiln runs: " + "; ".join(errors))
    if kiln_err:
        return kind, oracle, f"Kiln refuses: {kiln_err[-300:]}"
    tolerance = args.tolerance if kind == "float" else 0.0
    return kind, oracle, compare(kiln_out, ref, tolerance)


def check_nodes(path, model, args, pools, work):
    """Lines of text and the number of failing nodes."""
    values, resolver = tensor_values(path, model, args, pools, work)
    if values is None:
        return [f"nodes: LiteRT runs no probed copy ({resolver[:200]})"], 0
    graph = model.subgraphs[0]
    groups = collections.OrderedDict()
    lines, failed = [], 0
    for index, op in enumerate(graph.operators):
        name = op_name(model, op)
        if name not in NN_OPS:
            continue
        kind, oracle, problem = check_node(model, index, values, args, pools,
                                           work)
        version = model.operatorCodes[op.opcodeIndex].version
        key = (name, version, kind, oracle)
        total, agree = groups.get(key, (0, 0))
        groups[key] = (total + 1, agree + (problem is None))
        if problem:
            failed += 1
            lines.append(f"  node {index} {name} v{version} {kind}: {problem}")
    exactness = {"integer": "exact", "hybrid": "bit-exact",
                 "float": f"within {args.tolerance:g}"}
    for (name, version, kind, oracle), (total, agree) in groups.items():
        lines.append(f"  {name} v{version} {kind}: {agree}/{total} "
                     f"{exactness[kind]} vs {oracle}")
    return [f"nodes (inputs from LiteRT {resolver}):"] + lines, failed


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_models = os.path.normpath(
        os.path.join(here, "..", "..", "..", "..", "shared", "models",
                     "converter"))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kiln", required=True)
    p.add_argument("--kiln-arg", action="append", default=[],
                   help="extra `kiln run` argument (repeat), e.g. "
                        "--kiln-arg=--threads --kiln-arg=2")
    p.add_argument("--plugin-dir", required=True)
    p.add_argument("--models", default=default_models)
    p.add_argument("--flavours", default=",".join(FLAVOURS))
    p.add_argument("--filter", default="")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--tolerance", type=float, default=1e-5,
                   help="float outputs: max |kiln - ref| / max |ref|")
    p.add_argument("--resolvers",
                   default="BUILTIN_REF,BUILTIN_WITHOUT_DEFAULT_DELEGATES",
                   help="LiteRT resolvers, in order of preference")
    args = p.parse_args()
    paths = sorted(
        f for flavour in args.flavours.split(",")
        for f in glob.glob(os.path.join(args.models, f"*_{flavour}.tflite"))
        if args.filter in os.path.basename(f))
    if not paths:
        print(f"no models under {args.models}: skipped")
        return 77
    pools = [(r, lso.LiteRtPool(r)) for r in args.resolvers.split(",")]
    failed = 0
    try:
        for path in paths:
            model = load_model(path)
            with tempfile.TemporaryDirectory() as work:
                verdicts = check_whole_model(path, model, args, pools, work)
                lines, bad_nodes = check_nodes(path, model, args, pools, work)
            print(os.path.basename(path))
            for name, text, _ in verdicts:
                print(f"  whole model vs {name}: {text}")
            print("\n".join(lines))
            failed += bad_nodes > 0 or not verdicts[0][2]
    finally:
        for _, pool in pools:
            pool.close()
    print(f"{len(paths) - failed} of {len(paths)} models agree")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
