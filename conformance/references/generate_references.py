#!/usr/bin/env python3
"""Writes the independent reference outputs of `kiln conformance`.

  conformance/references/generate_references.py --kiln build/bin/kiln \\
      [--out conformance/references/golden] [--jobs 2] [--only PREFIX]

1. `kiln conformance --internal-write-cases TMP` writes every model the
   runner builds (single ops, chains, branches, interrupted chains; version 1
   of each op) as TMP/<key>.tflite with its inputs in TMP/<key>.json.
2. Each model runs through LiteRT's *reference* kernels
   (ai_edge_litert, OpResolverType.BUILTIN_REF), one child process per model
   because LiteRT may abort on a model it rejects.
3. The outputs are written to OUT/<key>.json with the hash of the case's
   content (computed by kiln: the runner uses a reference only for exactly
   the content it was computed for), the
   LiteRT version and a tolerance per op and type.

The files are checked in, so vendors running the suite need no Python. A
model LiteRT rejects gets no reference: the runner reports "no reference"
for it, never a pass. Tools only: nothing at runtime imports this.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

# Float tolerances: |got - ref| <= abs + rel * |ref|. Integer and bool
# outputs are compared exactly by the runner.
DEFAULT_TOLERANCE = {"abs": 1e-5, "rel": 1e-4}
# Ops whose float results legitimately differ in the last bits between
# implementations (transcendental approximations, accumulation order).
LOOSE_OPS = {
    "EXP", "LOG", "TANH", "LOGISTIC", "SOFTMAX", "LOG_SOFTMAX", "ELU", "GELU",
    "HARD_SWISH", "POW", "SIN", "COS", "RSQRT", "SQRT", "L2_NORMALIZATION",
    "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "BATCH_MATMUL",
    "TRANSPOSE_CONV", "MEAN", "SUM", "REDUCE_PROD", "AVERAGE_POOL_2D",
    "L2_POOL_2D", "RESIZE_BILINEAR", "SQUARED_DIFFERENCE", "ATAN2",
}
LOOSE_TOLERANCE = {"abs": 1e-4, "rel": 1e-3}

NUMPY_TYPES = {
    "FLOAT32": "float32", "INT32": "int32", "INT64": "int64", "INT16": "int16",
    "INT8": "int8", "UINT8": "uint8", "BOOL": "bool",
    "UINT16": "uint16", "UINT32": "uint32", "FLOAT64": "float64",
}


def type_name(dtype):
    for name, np_name in NUMPY_TYPES.items():
        if str(dtype) == np_name:
            return name
    raise ValueError(f"output type {dtype} is not covered")


def run_one(model_path, inputs_path, out_path, resolver="BUILTIN_REF"):
    """Child process: one model through LiteRT's kernels of `resolver`."""
    import numpy as np
    from ai_edge_litert import interpreter as litert

    meta = json.load(open(inputs_path))
    interp = litert.Interpreter(
        model_path=model_path,
        experimental_op_resolver_type=getattr(litert.OpResolverType,
                                              resolver))
    details = interp.get_input_details()
    if len(details) != len(meta["inputs"]):
        raise SystemExit(f"{model_path}: {len(details)} inputs, "
                         f"{len(meta['inputs'])} given")
    for d, given in zip(details, meta["inputs"]):
        value = np.array(given["values"], dtype=NUMPY_TYPES[given["type"]])
        value = value.reshape(given["shape"])
        if list(d["shape"]) != list(value.shape):
            interp.resize_tensor_input(d["index"], value.shape)
    interp.allocate_tensors()
    for d, given in zip(interp.get_input_details(), meta["inputs"]):
        value = np.array(given["values"], dtype=NUMPY_TYPES[given["type"]])
        interp.set_tensor(d["index"], value.reshape(given["shape"]))
    interp.invoke()
    outputs = []
    for d in interp.get_output_details():
        value = interp.get_tensor(d["index"])
        values = value.reshape(-1).tolist()
        if value.dtype == np.bool_:
            values = [int(v) for v in values]
        out = {"type": type_name(value.dtype), "shape": list(value.shape),
               "values": values}
        scale = d.get("quantization", (0.0, 0))[0]
        if scale:
            # Quantized outputs may differ by one step (rounding of the
            # rescale); the runner allows that much.
            out["quantized"] = {"scale": scale,
                                "zero_point": d["quantization"][1]}
        outputs.append(out)
    json.dump({"outputs": outputs}, open(out_path, "w"))


def tolerance_for(key):
    ops = key.split(".")
    return LOOSE_TOLERANCE if (ops[0] in LOOSE_OPS or
                               (len(ops) > 4 and ops[3] in LOOSE_OPS)) \
        else DEFAULT_TOLERANCE


def reference_for(model, work, timeout):
    """Parent side: runs one model in a child; the reference or why not."""
    key = os.path.basename(model)[:-len(".tflite")]
    meta_path = model[:-len(".tflite")] + ".json"
    out = os.path.join(work, key + ".out.json")
    # The reference kernels first; an op (version) they do not register
    # (CEIL, ELU, ROUND, ABS v4..5, ...) through LiteRT's builtin kernels,
    # which are still LiteRT's, never Kiln's.
    for resolver, label in (("BUILTIN_REF", "reference kernels (BUILTIN_REF)"),
                            ("BUILTIN", "builtin kernels (BUILTIN; no "
                                        "reference kernel registered)")):
        try:
            r = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--run-one", model,
                 meta_path, out, resolver], capture_output=True, text=True,
                timeout=timeout)
        except subprocess.TimeoutExpired:
            return key, None, "timed out"
        if r.returncode == 0 and os.path.exists(out):
            break
        tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["?"]
        why = f"LiteRT failed (exit {r.returncode}): {tail[0]}"
        if "Registration failed" not in why:
            return key, None, why
    else:
        return key, None, why
    meta = json.load(open(meta_path))
    result = json.load(open(out))
    return key, {
        "key": key,
        "model_hash": meta["model_hash"],
        "family": meta.get("family", ""),
        "source": f"LiteRT {litert_version()} {label}",
        "tolerance": tolerance_for(key),
        "outputs": result["outputs"],
    }, ""


def litert_version():
    try:
        from importlib.metadata import version
        return version("ai-edge-litert")
    except Exception:  # noqa: BLE001 - best effort label
        return "?"


def main():
    if len(sys.argv) in (5, 6) and sys.argv[1] == "--run-one":
        run_one(*sys.argv[2:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kiln", required=True, help="the kiln CLI binary")
    ap.add_argument("--out", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "golden"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--only", default="", help="only keys with this prefix")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        cases = os.path.join(work, "cases")
        subprocess.run([args.kiln, "conformance", "--internal-write-cases",
                        cases], check=True)
        models = sorted(m for m in glob.glob(os.path.join(cases, "*.tflite"))
                        if os.path.basename(m).startswith(args.only))
        os.makedirs(args.out, exist_ok=True)
        if not args.only:
            for old in glob.glob(os.path.join(args.out, "*.json")):
                os.remove(old)
        written, failed = 0, []
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            for key, ref, why in pool.map(
                    lambda m: reference_for(m, work, args.timeout), models):
                if ref is None:
                    failed.append(f"{key}: {why}")
                    continue
                with open(os.path.join(args.out, key + ".json"), "w") as f:
                    json.dump(ref, f, separators=(",", ":"))
                    f.write("\n")
                written += 1
        listing = os.path.join(args.out, "NO_REFERENCE.txt")
        if args.only and os.path.exists(listing):
            # Keep what other prefixes recorded.
            kept = [line.rstrip("\n") for line in open(listing)
                    if not line.startswith("#") and
                    not line.startswith(args.only)]
            failed = sorted(kept + failed)
        with open(listing, "w") as f:
            f.write("# Models LiteRT's reference kernels did not run; the "
                    "runner reports them as 'no reference'.\n")
            f.write("".join(line + "\n" for line in failed))
        shutil.rmtree(cases, ignore_errors=True)
    print(f"{written} references written to {args.out}; "
          f"{len(failed)} models without one (NO_REFERENCE.txt)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
