#!/usr/bin/env python3
"""Runs whole converter models through Kiln and through LiteRT and compares.

Test tooling for the quantized nn kernels: for each model (by default the
integer and dynamic-range flavours in shared/models/converter), one seeded
random input is run through `kiln run` and through LiteRT's reference
kernels (BUILTIN_REF, in a child process: it aborts the process on some
models) and its optimized kernels without XNNPACK
(BUILTIN_WITHOUT_DEFAULT_DELEGATES). Integer outputs must match the
reference exactly; float outputs (dynamic-range models) within --tolerance
(relative to the output's largest magnitude). A model LiteRT refuses must be
refused by Kiln too. When the reference kernels abort on a model that the
optimized ones run (mobilenet_v2_int8's SOFTMAX), the model's prefix without
its trailing ops is also compared with the reference, exactly.

Exit code: 0 all agree, 1 a mismatch, 77 when LiteRT or the models are
missing (CTest's skip code).
"""
import argparse
import glob
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    from ai_edge_litert.interpreter import Interpreter
    import litert_single_op as lso
except ImportError:  # pragma: no cover - environment without LiteRT
    print("ai_edge_litert is not installed: skipped")
    sys.exit(77)

FLAVOURS = ("int8", "int16x8", "dyn8")


def model_inputs(path, seed):
    """Seeded values for every input of `path`, over each type's range."""
    interp = Interpreter(model_path=path)
    rng = np.random.default_rng(seed)
    return [lso.random_values(rng, d["dtype"], d["shape"])
            for d in interp.get_input_details()]


def compare(kiln, ref, tolerance):
    """Returns a problem description, or None when the outputs agree."""
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
        else:
            scale = max(float(np.abs(b).max(initial=0)), 1e-30)
            err = float(np.abs(a - b).max(initial=0)) / scale
            if not np.isfinite(err) or err > tolerance:
                return f"output {i}: max relative error {err:.3g}"
    return None


def drop_last_op(path, out_path):
    """Writes `path` without its last operator, whose non-constant inputs
    become the outputs; returns the dropped op's name or None."""
    from ai_edge_litert import schema_py_generated as schema
    model = schema.ModelT.InitFromPackedBuf(open(path, "rb").read(), 0)
    graph = model.subgraphs[0]
    if len(graph.operators) < 2:
        return None
    op = graph.operators.pop()
    code = model.operatorCodes[op.opcodeIndex]
    names = {v: k for k, v in vars(schema.BuiltinOperator).items()
             if not k.startswith("_")}
    graph.outputs = [i for i in op.inputs if i >= 0 and not (
        model.buffers[graph.tensors[i].buffer].data is not None)]
    builder = lso.flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    with open(out_path, "wb") as f:
        f.write(builder.Output())
    return names.get(max(code.builtinCode, code.deprecatedBuiltinCode), "?")


def compare_prefix(path, args, pool, work):
    """The reference refused `path`: compares prefixes without the trailing
    ops (up to three) instead. Returns (text, ok)."""
    dropped = []
    current = path
    for depth in range(3):
        prefix = os.path.join(work, f"prefix{depth}.tflite")
        name = drop_last_op(current, prefix)
        if name is None:
            break
        dropped.append(name)
        current = prefix
        inputs = model_inputs(prefix, args.seed)
        ref, ref_err = pool.run(prefix, inputs, work)
        if ref_err:
            continue
        kiln_out, kiln_err = lso.run_kiln(
            args.kiln, prefix, inputs, work,
            ["--no-default-plugins", "--plugin-dir", args.plugin_dir])
        if kiln_err:
            return f"prefix: Kiln refuses: {kiln_err[-200:]}", False
        problem = compare(kiln_out, ref, args.tolerance)
        label = f"prefix without trailing {'+'.join(reversed(dropped))}"
        return f"{label}: {problem or 'agree'}", problem is None
    return "no prefix that the reference runs", False


def run_model(path, args, pools):
    inputs = model_inputs(path, args.seed)
    with tempfile.TemporaryDirectory() as work:
        kiln_out, kiln_err = lso.run_kiln(
            args.kiln, path, inputs, work,
            ["--no-default-plugins", "--plugin-dir", args.plugin_dir])
        verdicts = []
        for name, pool in pools:
            ref, ref_err = pool.run(os.path.abspath(path), inputs, work)
            if ref_err and kiln_err:
                verdicts.append((name, "both refuse", True))
            elif ref_err and name == "BUILTIN_REF" and "aborted" in ref_err:
                text, ok = compare_prefix(path, args, pool, work)
                verdicts.append((name, f"{ref_err}; {text}", ok))
            elif ref_err:
                verdicts.append((name, f"LiteRT refuses: {ref_err[-160:]}",
                                 False))
            elif kiln_err:
                verdicts.append((name, f"Kiln refuses: {kiln_err[-300:]}",
                                 False))
            else:
                problem = compare(kiln_out, ref, args.tolerance)
                verdicts.append((name, problem or "agree", problem is None))
        return verdicts


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_models = os.path.normpath(
        os.path.join(here, "..", "..", "..", "..", "shared", "models",
                     "converter"))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kiln", required=True)
    p.add_argument("--plugin-dir", required=True)
    p.add_argument("--models", default=default_models)
    p.add_argument("--flavours", default=",".join(FLAVOURS))
    p.add_argument("--filter", default="")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--tolerance", type=float, default=1e-4,
                   help="float outputs: max |kiln - ref| / max |ref|")
    p.add_argument("--resolvers",
                   default="BUILTIN_REF,BUILTIN_WITHOUT_DEFAULT_DELEGATES",
                   help="LiteRT resolvers; the first decides the verdict")
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
            verdicts = run_model(path, args, pools)
            for i, (name, text, ok) in enumerate(verdicts):
                label = os.path.basename(path) if i == 0 else ""
                print(f"{label:34s} {name:34s} {text}")
            failed += not verdicts[0][2]
    finally:
        for _, pool in pools:
            pool.close()
    print(f"{len(paths) - failed} of {len(paths)} models agree with "
          f"{pools[0][0]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
