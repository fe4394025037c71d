#!/usr/bin/env python3
"""Differential test: Kiln versus the LiteRT reference interpreter.

For every .tflite/.bin model under --models, the same seeded inputs go through
LiteRT (ai_edge_litert) and through `kiln run`; outputs are compared per dtype
(float32 within 1e-5 relative/absolute unless the model is listed in
LOOSER_BOUNDS with its reason; integers and bools exactly). Prints a table
model -> pass / mismatch / refused by Kiln / refused by LiteRT.

Exit status is non-zero when
  - any model mismatches, or
  - Kiln refuses or fails a model that LiteRT runs, unless Kiln's message
    shows the model needs something outside Kiln's documented scope: an op
    not in SCOPE_OPS (or a custom op other than Sinh), or quantized/unsupported
    tensor types (the CPU plugin is float32-first).
Python is used here only as a test driver; the runtime is C++.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

try:
    from ai_edge_litert.interpreter import Interpreter as LiteRtInterpreter
    from ai_edge_litert.interpreter import OpResolverType
except ImportError:  # pragma: no cover
    print("differential_test: ai_edge_litert is not installed; run "
          "tools/setup/setup-debian.sh", file=sys.stderr)
    sys.exit(2)

# The ops the issue puts in Kiln's scope (CPU plugin + host-intrinsic ops).
SCOPE_OPS = set("""
ADD SUB MUL DIV SQUARED_DIFFERENCE MAXIMUM MINIMUM POW FLOOR_DIV FLOOR_MOD ATAN2
LESS LESS_EQUAL GREATER GREATER_EQUAL EQUAL NOT_EQUAL LOGICAL_AND LOGICAL_OR
LOGICAL_NOT SELECT_V2 ABS NEG EXP LOG SQRT RSQRT SQUARE SIN COS TANH LOGISTIC
RELU RELU6 RELU_N1_TO_1 RELU_0_TO_1 ELU LEAKY_RELU PRELU HARD_SWISH GELU FLOOR
CEIL ROUND SIGN CAST CONV_2D DEPTHWISE_CONV_2D FULLY_CONNECTED BATCH_MATMUL
TRANSPOSE_CONV AVERAGE_POOL_2D MAX_POOL_2D L2_NORMALIZATION SOFTMAX LOG_SOFTMAX
RESIZE_BILINEAR RESIZE_NEAREST_NEIGHBOR MEAN SUM REDUCE_MAX REDUCE_MIN
REDUCE_PROD REDUCE_ANY REDUCE_ALL ARG_MAX ARG_MIN TOPK_V2 RESHAPE SQUEEZE
EXPAND_DIMS TRANSPOSE CONCATENATION SPLIT SPLIT_V SLICE STRIDED_SLICE PACK
UNPACK GATHER GATHER_ND SCATTER_ND TILE BROADCAST_TO PAD PADV2 MIRROR_PAD SHAPE
SPACE_TO_DEPTH DEPTH_TO_SPACE QUANTIZE DEQUANTIZE WHILE IF CALL_ONCE
VAR_HANDLE READ_VARIABLE ASSIGN_VARIABLE STABLEHLO_COMPOSITE
""".split())

# Models whose float outputs need a looser bound, with the reason.
LOOSER_BOUNDS = {
    # Reductions/convolutions over many terms: summation order differs from
    # LiteRT's (optimized kernels block and vectorize differently).
    "conv_huge_im2col.bin": (1e-4, "long conv accumulations, different order"),
}

RTOL = ATOL = 1e-5


def sanitize(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


class NoInputGenerator(Exception):
    pass


def make_input(detail, rng):
    shape = [int(d) if d > 0 else 1 for d in detail["shape"]]
    dtype = np.dtype(detail["dtype"])
    if dtype == np.float32 or dtype == np.float64 or dtype == np.float16:
        return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 3, size=shape).astype(dtype)
    raise NoInputGenerator(f"string/{dtype} inputs are not generated")


def run_litert(path, rng):
    # The reference kernels are the oracle: no delegate (XNNPack) rewrites
    # the graph or changes numerics.
    interp = LiteRtInterpreter(
        model_path=path,
        experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    interp.allocate_tensors()
    inputs = []
    for d in interp.get_input_details():
        value = make_input(d, rng)
        if list(value.shape) != list(d["shape"]):
            interp.resize_tensor_input(d["index"], value.shape)
        inputs.append((d, value))
    interp.allocate_tensors()
    for d, value in inputs:
        interp.set_tensor(d["index"], value)
    interp.invoke()
    outputs = [(d["name"], interp.get_tensor(d["index"]).copy())
               for d in interp.get_output_details()]
    return inputs, outputs


def run_kiln(kiln, path, inputs, workdir, extra_args):
    args = [kiln, "run", path, "--output-dir", os.path.join(workdir, "out")]
    for i, (d, value) in enumerate(inputs):
        f = os.path.join(workdir, f"in{i}.npy")
        np.save(f, value)
        args += ["--input", f"{i}={f}"]  # by index: names may be empty
    args += extra_args
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        return None, (proc.stderr.strip() or proc.stdout.strip()
                      or f"exit code {proc.returncode}")
    with open(os.path.join(workdir, "out", "outputs.json")) as f:
        manifest = json.load(f)
    outs = [(o["name"], np.load(os.path.join(workdir, "out", o["file"])))
            for o in manifest["outputs"]]
    return outs, None


def compare(ref, got, rtol, atol):
    if len(ref) != len(got):
        return f"{len(got)} outputs, LiteRT gave {len(ref)}"
    for (rname, r), (gname, g) in zip(ref, got):
        if r.shape != g.shape:
            return f"output '{rname}': shape {g.shape} vs LiteRT {r.shape}"
        if r.dtype != g.dtype:
            return f"output '{rname}': dtype {g.dtype} vs LiteRT {r.dtype}"
        if np.issubdtype(r.dtype, np.floating):
            if not np.allclose(g, r, rtol=rtol, atol=atol, equal_nan=True):
                err = float(np.max(np.abs(g.astype(np.float64) - r)))
                return f"output '{rname}': max abs error {err:.3g}"
        elif not np.array_equal(g, r):
            return f"output '{rname}': values differ"
    return None


def refusal_in_scope(message):
    """True when Kiln refused for a reason inside its documented scope."""
    out_of_scope_patterns = [
        r"\b(INT8|UINT8|INT16|STRING|INT4|COMPLEX64|FLOAT16)\b",
        r"Flex", r"TensorFlow fallback",
    ]
    for p in out_of_scope_patterns:
        if re.search(p, message):
            return False
    ops = re.findall(r"\b([A-Z][A-Z0-9_]{2,})\b", message)
    for op in ops:
        if op in ("CUSTOM",):
            return "Sinh" in message
    named = [o for o in ops if o in SCOPE_OPS or o.endswith("LSTM")
             or o in ("SVDF", "WHERE", "SEGMENT_SUM", "CONV_3D")]
    if any(o not in SCOPE_OPS for o in named):
        return False
    if re.search(r"CUSTOM '(?!Sinh)", message):
        return False
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--kiln-arg", action="append", default=[])
    args = ap.parse_args()
    if not os.path.isdir(args.models):
        print(f"differential_test: {args.models} is absent; nothing to compare")
        print("0 passed, 0 failed, 1 skipped")
        return 0
    models = []
    for root, _, files in os.walk(args.models):
        for f in sorted(files):
            if f.endswith((".tflite", ".bin")):
                models.append(os.path.join(root, f))
    models.sort()
    rows, failures = [], 0
    counts = {"pass": 0, "mismatch": 0, "refused by Kiln": 0,
              "refused by LiteRT": 0, "not compared": 0}
    workroot = tempfile.mkdtemp(prefix="kiln-diff-")
    try:
        for path in models:
            rel = os.path.relpath(path, args.models)
            rng = np.random.default_rng(args.seed)
            try:
                inputs, ref = run_litert(path, rng)
            except NoInputGenerator as e:
                rows.append((rel, "not compared", str(e)))
                counts["not compared"] += 1
                continue
            except Exception as e:  # LiteRT refuses or fails this model
                msg = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
                rows.append((rel, "refused by LiteRT", msg[:100]))
                counts["refused by LiteRT"] += 1
                continue
            workdir = os.path.join(workroot, sanitize(rel))
            os.makedirs(workdir)
            got, err = run_kiln(args.kiln, path, inputs, workdir, args.kiln_arg)
            if err is not None:
                first = err.splitlines()[0][:160]
                if refusal_in_scope(err):
                    rows.append((rel, "FAIL: refused by Kiln", first))
                    failures += 1
                else:
                    rows.append((rel, "refused by Kiln", first))
                counts["refused by Kiln"] += 1
                continue
            tol, reason = LOOSER_BOUNDS.get(os.path.basename(path), (RTOL, ""))
            problem = compare(ref, got, tol, tol)
            if problem:
                rows.append((rel, "mismatch", problem))
                counts["mismatch"] += 1
                failures += 1
            else:
                rows.append((rel, "pass", reason))
                counts["pass"] += 1
    finally:
        shutil.rmtree(workroot, ignore_errors=True)
    width = max(len(r[0]) for r in rows) if rows else 10
    print(f"{'model':<{width}}  result                 detail")
    for model, result, detail in rows:
        print(f"{model:<{width}}  {result:<22} {detail}")
    print("summary: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    passed = len(rows) - failures
    print(f"{passed} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
