#!/usr/bin/env python3
"""The xnnpack delegate as the default CPU delegate, through the kiln CLI.

1. Default on: `kiln run` without --delegate applies the xnnpack delegate
   (its info log says so), which claims the int8 nodes of int8 MobileNetV2
   and leaves float32 nodes to the CPU plugin unless float32=true;
   `--delegate none` runs without it.
2. Declines with reasons: `kiln inspect --delegate xnnpack --json` on the
   transformer block claims its FULLY_CONNECTED nodes and declines ops the
   libXNNPACK subgraph API lacks (BATCH_MATMUL, GELU, ...) with a reason
   naming the op; on the int8 transformer block (the default options) it
   claims every FULLY_CONNECTED (per-channel filters, as 1x1 convolutions)
   and MEAN (rank 3, adjacent axes) and declines int8 SOFTMAX and
   SQUARED_DIFFERENCE saying they are float32 only.
3. Threads: `--threads 1` and `--threads 2` give the same outputs on int8
   and float32 MobileNetV2 (XNNPACK splits work across threads, never one
   sum), with load_aware_threads=false so that two threads run even on a
   busy machine; an unknown option value is refused.
4. Constant folding: on the float16-weight model every DEQUANTIZE is folded
   at creation and the delegate claims the convolutions that read them.
5. Plugin missing: a plugin directory whose libkiln_xnnpack.so cannot load
   makes `kiln run` warn why and still run on the CPU plugin.
6. libXNNPACK missing (KILN_XNNPACK_LIBRARY names a file that is not
   there): the delegate is unavailable, `kiln run` says why and what to
   install, and runs on the CPU plugin.

Exits 77 (CTest SKIP_RETURN_CODE: Skipped) when the model corpus is absent.
The LiteRT comparison of every corpus model is differential.litert.xnnpack.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def kiln(args, cmd, env=None):
    p = subprocess.run([args.kiln] + cmd, capture_output=True, text=True,
                       timeout=600, env=env)
    return p


def run_outputs(args, model, out, extra, env=None):
    p = kiln(args, ["run", model, "--input", "random", "--seed", "3",
                    "--output-dir", out] + extra, env)
    if p.returncode != 0:
        return None, p
    with open(os.path.join(out, "outputs.json")) as f:
        outs = [np.load(os.path.join(out, o["file"]))
                for o in json.load(f)["outputs"]]
    return outs, p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--plugin-dir", required=True)
    args = ap.parse_args()
    conv = os.path.join(args.models, "converter")
    mobilenet = os.path.join(conv, "mobilenet_v2_float32.tflite")
    mobilenet8 = os.path.join(conv, "mobilenet_v2_int8.tflite")
    fp16 = os.path.join(conv, "mobilenet_v2_fp16.tflite")
    transformer = os.path.join(conv, "transformer_block_float32.tflite")
    transformer8 = os.path.join(conv, "transformer_block_int8.tflite")
    for m in (mobilenet, mobilenet8, fp16, transformer):
        if not os.path.exists(m):
            print(f"SKIPPED: {m} is absent (shared model corpus not installed)")
            return 77
    env = dict(os.environ, KILN_LOG_LEVEL="info", KILN_PLUGIN_PATH="")
    plugins = ["--no-default-plugins", "--plugin-dir", args.plugin_dir]
    with tempfile.TemporaryDirectory() as tmp:
        # 1. Default on, and --delegate none.
        outs, p = run_outputs(args, mobilenet8, os.path.join(tmp, "d"),
                              plugins, env)
        check(outs is not None, "kiln run with the default delegate succeeds")
        # All but the int8 SOFTMAX (per-channel FULLY_CONNECTED included).
        check("delegate 'xnnpack' claims 64 of 65 nodes" in p.stderr,
              "the default delegate xnnpack claims int8 MobileNetV2's "
              "convolutions, adds, mean and fully connected")
        outs_none, p = run_outputs(args, mobilenet8, os.path.join(tmp, "n"),
                                   plugins + ["--delegate", "none"], env)
        check(outs_none is not None and
              "delegate 'xnnpack' claims" not in p.stderr,
              "--delegate none runs without the xnnpack delegate")
        p = kiln(args, ["inspect", mobilenet, "--json", "--delegate",
                        "xnnpack"] + plugins)
        if p.returncode == 0:
            nodes = json.loads(p.stdout)["subgraphs"][0]["nodes"]
            check(not any(n["delegate"]["claimed"] for n in nodes) and
                  all("float32=true" in n["delegate"]["reason"]
                      for n in nodes if n["op"] == "CONV_2D"),
                  "float32 nodes are left to the CPU plugin, saying why")
        else:
            check(False, "kiln inspect on the float32 model: " + p.stderr)

        # 2. Declines with reasons.
        p = kiln(args, ["inspect", transformer, "--json", "--delegate",
                        "xnnpack:float32=true"] + plugins)
        check(p.returncode == 0, "kiln inspect --delegate xnnpack succeeds")
        if p.returncode == 0:
            nodes = json.loads(p.stdout)["subgraphs"][0]["nodes"]
            fc = [n for n in nodes if n["op"] == "FULLY_CONNECTED"]
            # Including the two whose input is a RESHAPE to a shape computed
            # at run time: flattened to [-1, channels] as TFLite does.
            check(fc and all(n["delegate"]["claimed"] for n in fc),
                  f"every FULLY_CONNECTED is claimed ({len(fc)})")
            for op in ("BATCH_MATMUL", "GELU"):
                ns = [n for n in nodes if n["op"] == op]
                check(ns and all(not n["delegate"]["claimed"] and
                                 n["delegate"]["reason"].startswith(
                                     "xnnpack: " + op)
                                 for n in ns),
                      f"{op} is declined with a reason naming it")
        p = kiln(args, ["inspect", transformer8, "--json", "--delegate",
                        "xnnpack"] + plugins)
        check(p.returncode == 0, "kiln inspect int8 transformer succeeds")
        if p.returncode == 0:
            nodes = json.loads(p.stdout)["subgraphs"][0]["nodes"]
            for op in ("FULLY_CONNECTED", "MEAN"):
                ns = [n for n in nodes if n["op"] == op]
                check(ns and all(n["delegate"]["claimed"] for n in ns),
                      f"every int8 {op} is claimed ({len(ns)})")
            for op in ("SOFTMAX", "SQUARED_DIFFERENCE"):
                ns = [n for n in nodes if n["op"] == op]
                check(ns and all(not n["delegate"]["claimed"] and
                                 "float32 only" in n["delegate"]["reason"]
                                 for n in ns),
                      f"int8 {op} is declined as float32 only")

        # 3. Threads (load_aware_threads=false: the pool's two threads even
        # on a busy machine, where the delegate would otherwise run on one).
        for model, extra in (
                (mobilenet8, ["--delegate", "xnnpack:load_aware_threads=false"]),
                (mobilenet, ["--delegate",
                             "xnnpack:float32=true,load_aware_threads=false"])):
            one, _ = run_outputs(args, model, os.path.join(tmp, "t1"),
                                 plugins + extra + ["--threads", "1"])
            two, _ = run_outputs(args, model, os.path.join(tmp, "t2"),
                                 plugins + extra + ["--threads", "2"])
            check(one is not None and two is not None and
                  all(np.array_equal(a, b) for a, b in zip(one, two)),
                  f"{os.path.basename(model)}: --threads 1 and --threads 2 "
                  "give the same outputs")

        p = kiln(args, ["run", mobilenet8, "--input", "random", "--output-dir",
                        os.path.join(tmp, "bad"), "--delegate",
                        "xnnpack:load_aware_threads=maybe"] + plugins)
        check(p.returncode != 0 and "load_aware_threads='maybe'" in p.stderr,
              "load_aware_threads=maybe is refused, naming the option")

        # 4. Constant folding of the float16 weights.
        p = kiln(args, ["inspect", fp16, "--json", "--delegate",
                        "xnnpack:float32=true"] + plugins)
        if p.returncode == 0:
            nodes = json.loads(p.stdout)["subgraphs"][0]["nodes"]
            deq = [n for n in nodes if n["op"] == "DEQUANTIZE"]
            convs = [n for n in nodes if n["op"] == "CONV_2D"]
            check(deq and all(n.get("folded") for n in deq),
                  f"all {len(deq)} DEQUANTIZE nodes are folded")
            check(convs and all(n["delegate"]["claimed"] for n in convs),
                  "the convolutions reading folded weights are claimed")
        else:
            check(False, "kiln inspect on the float16 model: " + p.stderr)

        # 5. Plugin present but unloadable.
        broken = os.path.join(tmp, "plugins")
        os.makedirs(broken)
        for f in os.listdir(args.plugin_dir):
            if f.startswith("libkiln_cpu"):
                shutil.copy(os.path.join(args.plugin_dir, f), broken)
        with open(os.path.join(broken, "libkiln_xnnpack.so"), "wb") as f:
            f.write(b"not an ELF file: stands for a plugin whose libXNNPACK "
                    b"is missing")
        outs_b, p = run_outputs(args, mobilenet8, os.path.join(tmp, "b"),
                                ["--no-default-plugins", "--plugin-dir",
                                 broken])
        check(outs_b is not None, "kiln run succeeds on the CPU plugin")
        check("default delegate 'xnnpack' is unavailable" in p.stderr and
              "libkiln_xnnpack.so" in p.stderr,
              "the host says why the default delegate is unavailable")
        # 6. Plugin loaded, libXNNPACK missing (what a machine without
        # libxnnpack0 sees): the delegate is UNAVAILABLE, the host says why.
        missing_env = dict(os.environ, KILN_PLUGIN_PATH="",
                           KILN_XNNPACK_LIBRARY=os.path.join(
                               tmp, "libXNNPACK.so.0"))
        outs_m, p = run_outputs(args, mobilenet8, os.path.join(tmp, "m"),
                                plugins, missing_env)
        check(outs_m is not None, "kiln run without libXNNPACK succeeds")
        check("cannot load" in p.stderr and "libxnnpack0" in p.stderr and
              "Running on kernel plugins instead" in p.stderr,
              "without libXNNPACK the host says why and what to install")
    print(f"{'0 failed' if not failures else str(len(failures)) + ' failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
