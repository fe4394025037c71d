#!/usr/bin/env python3
"""`kiln run MODEL --input random --delegate SPEC` must match the run without
the delegate within a tolerance (issue: OpenCL delegate on mobilenet_like).
Each run uses the same seed; a private PoCL/Kiln cache dir is used.
Exits 77 (CTest SKIP_RETURN_CODE: Skipped) when the model is absent."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def run(kiln, model, out, extra, env):
    cmd = [kiln, "run", model, "--input", "random", "--seed", "7",
           "--output-dir", out] + extra
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    if p.returncode != 0:
        print(f"FAILED: {' '.join(cmd)}\n{p.stdout}{p.stderr}")
        sys.exit(1)
    with open(os.path.join(out, "outputs.json")) as f:
        return [np.load(os.path.join(out, o["file"]))
                for o in json.load(f)["outputs"]], p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--delegate", required=True)
    ap.add_argument("--tolerance", type=float, default=1e-4)
    ap.add_argument("--expect-claimed", action="store_true")
    args = ap.parse_args()
    if not os.path.exists(args.model):
        print(f"SKIPPED: {args.model} is absent (shared model corpus not "
              "installed); nothing to compare")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, POCL_CACHE_DIR=os.path.join(tmp, "pocl"),
                   XDG_CACHE_HOME=os.path.join(tmp, "xdg"))
        cpu, _ = run(args.kiln, args.model, os.path.join(tmp, "cpu"),
                     ["--delegate", "none"], env)
        dlg, err = run(args.kiln, args.model, os.path.join(tmp, "dlg"),
                       ["--delegate", args.delegate], env)
        if "warning" in err.lower():
            print(f"delegate warned (fell back or was skipped):\n{err}")
            if args.expect_claimed:
                return 1
        if args.expect_claimed:
            p = subprocess.run([args.kiln, "inspect", args.model, "--json",
                                "--delegate", args.delegate],
                               capture_output=True, text=True, env=env)
            nodes = json.loads(p.stdout)["subgraphs"][0]["nodes"]
            claimed = sum(n["delegate"]["claimed"] for n in nodes)
            print(f"delegate claimed {claimed} of {len(nodes)} nodes")
            if claimed == 0:
                return 1
        for i, (a, b) in enumerate(zip(cpu, dlg)):
            err = float(np.max(np.abs(a.astype(np.float64) - b))) if a.size else 0.0
            print(f"output {i}: shape {a.shape}, max abs difference {err:.3g}")
            if a.shape != b.shape or not np.allclose(b, a, rtol=args.tolerance,
                                                     atol=args.tolerance):
                print("0 passed, 1 failed")
                return 1
    print("1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
