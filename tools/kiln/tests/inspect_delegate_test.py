#!/usr/bin/env python3
"""`kiln inspect MODEL --json --delegate SPEC` reports, for every node, either
claimed by the delegate or the reason it was not (from the delegate's
kiln.delegate_decline_reasons/1 capability). Exits 77 (CTest
SKIP_RETURN_CODE: Skipped) when the model is absent."""
import json
import os
import subprocess
import sys
import tempfile

kiln, model, delegate = sys.argv[1], sys.argv[2], sys.argv[3]
if not os.path.exists(model):
    print(f"SKIPPED: {model} is absent (shared model corpus not installed); "
          "nothing to inspect")
    sys.exit(77)
with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ, POCL_CACHE_DIR=os.path.join(tmp, "pocl"),
               XDG_CACHE_HOME=os.path.join(tmp, "xdg"))
    p = subprocess.run([kiln, "inspect", model, "--json", "--delegate", delegate],
                       capture_output=True, text=True, env=env, timeout=300)
if p.returncode != 0:
    print(p.stdout, p.stderr)
    sys.exit(1)
nodes = json.loads(p.stdout)["subgraphs"][0]["nodes"]
failures = 0
claimed = declined = 0
for n in nodes:
    d = n["delegate"]
    if d["claimed"]:
        claimed += 1
    elif d["reason"].startswith(delegate.split(":")[0] + ": "):
        declined += 1
        if "builtin op " in d["reason"]:
            print(f"node {n['index']}: reason does not name the op: {d['reason']}")
            failures += 1
    else:
        print(f"node {n['index']} {n['op']}: no delegate reason: {d['reason']}")
        failures += 1
print(f"{claimed} claimed, {declined} declined with a reason")
if declined == 0:
    print("expected at least one declined node with a reason")
    failures += 1
print(f"{1 if failures == 0 else 0} passed, {1 if failures else 0} failed")
sys.exit(1 if failures else 0)
