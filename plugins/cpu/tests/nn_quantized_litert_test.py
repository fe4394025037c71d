#!/usr/bin/env python3
"""The quantized neural-net kernels of the CPU plugin against LiteRT.

Builds seeded single-operator models (int8, uint8, int16x8 and hybrid
variants of the ops in kernels/nn), runs each through LiteRT (the oracle:
its reference kernels by default, `--resolver
BUILTIN_WITHOUT_DEFAULT_DELEGATES` for the optimized ones without XNNPACK) and through `kiln run`, and compares every output: integers exactly,
hybrid float outputs within the bound LiteRT's own hybrid arithmetic
implies. Inputs cover each type's full range.

Exit status: 0 all compared cases agree; 1 a mismatch, or Kiln refused a case
LiteRT runs (or ran one LiteRT refuses); 77 (skip) when the oracle is not
installed.
"""
import argparse
import os
import re
import sys
import tempfile

import numpy as np

try:
    from ai_edge_litert import schema_py_generated as schema  # noqa: F401
except ImportError:
    print("nn_quantized_litert_test: ai_edge_litert is not installed; skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import litert_single_op as lso  # noqa: E402
import nn_quantized_cases as cases  # noqa: E402


def compare(case, ref, got):
    if len(ref) != len(got):
        return f"{len(got)} outputs, LiteRT gave {len(ref)}"
    for i, (r, g) in enumerate(zip(ref, got)):
        if r.shape != g.shape:
            return f"output {i}: shape {g.shape} vs LiteRT {r.shape}"
        if r.dtype != g.dtype:
            return f"output {i}: dtype {g.dtype} vs LiteRT {r.dtype}"
        if np.issubdtype(r.dtype, np.floating):
            tol = case.tolerance(r)
            err = np.abs(g.astype(np.float64) - r.astype(np.float64))
            if not np.all(err <= tol):
                worst = int(np.argmax(err - tol))
                return (f"output {i}: max abs error {float(err.max()):.4g} "
                        f"(bound {float(np.broadcast_to(tol, err.shape).flat[worst]):.4g})")
        elif not np.all(np.abs(r.astype(np.int64) - g.astype(np.int64)) <=
                        case.int_tolerance):
            diff = np.abs(r.astype(np.int64) - g.astype(np.int64))
            return (f"output {i}: {int(np.count_nonzero(diff))} of {diff.size} "
                    f"values differ, max by {int(diff.max())}")
    return None


def first_error_line(message):
    """The line of a `kiln run` failure that says what failed."""
    lines = message.strip().splitlines()
    for line in lines:
        if "failed" in line or "error" in line.lower():
            return line
    return lines[-1] if lines else message


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--plugin-dir", required=True)
    ap.add_argument("--resolver", default="BUILTIN_REF",
                    choices=["BUILTIN_REF", "BUILTIN_WITHOUT_DEFAULT_DELEGATES"])
    ap.add_argument("--filter", default="", help="regex on case names")
    ap.add_argument("--seed", type=int, default=20240611)
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--threads", type=int, default=1,
                    help="kiln run --threads (the kernels that split work "
                         "over the pool must match on any count)")
    args = ap.parse_args()
    pools = {}

    def pool_for(resolver):
        if resolver not in pools:
            pools[resolver] = lso.LiteRtPool(resolver)
        return pools[resolver]
    kiln_args = ["--no-default-plugins", "--plugin-dir", args.plugin_dir,
                 "--threads", str(args.threads)]
    counts = {"agree": 0, "mismatch": 0, "both refuse": 0, "kiln refuses": 0,
              "litert refuses": 0}
    failures = []
    with tempfile.TemporaryDirectory(prefix="kiln-nnq-") as root:
        all_cases = cases.all_cases(np.random.default_rng(args.seed))
        for index, case in enumerate(all_cases):
            if args.filter and not re.search(args.filter, case.name):
                continue
            work = os.path.join(root, f"{index:04d}_" + re.sub(
                r"[^A-Za-z0-9_.-]", "_", case.name))
            os.makedirs(work)
            model = os.path.join(work, "model.tflite")
            with open(model, "wb") as f:
                f.write(case.model())
            inputs = case.runtime_inputs()
            ref, ref_err = pool_for(case.oracle or args.resolver).run(
                model, inputs, work)
            if case.expect_kiln_refusal:
                ref, ref_err = None, "not compared (Kiln must refuse)"
            got, got_err = lso.run_kiln(args.kiln, model, inputs, work,
                                        kiln_args)
            if ref_err and got_err:
                status, detail = "both refuse", first_error_line(got_err)
            elif ref_err:
                status, detail = "litert refuses", ref_err
            elif got_err:
                status, detail = "kiln refuses", first_error_line(got_err)
            else:
                problem = compare(case, ref, got)
                status = "mismatch" if problem else "agree"
                detail = problem or ""
            expected_refusal = (
                (case.expect_refusal and status == "both refuse") or
                (case.expect_kiln_refusal and got_err is not None))
            if case.expect_refusal and status == "agree":
                status, detail = "mismatch", "both run; both must refuse"
            counts[status] += 1
            if status not in ("agree",) and not expected_refusal:
                failures.append((case.name, status, detail))
            if args.verbose or (status != "agree" and not expected_refusal):
                print(f"{case.name:<60} {status:<15} {detail[:200]}")
    for pool in pools.values():
        pool.close()
    print("summary: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    print(f"oracle: LiteRT {args.resolver}")
    if failures:
        print(f"{len(failures)} case(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
