#!/usr/bin/env python3
"""The kiln CLI's --json outputs, parsed and checked key by key against
independent facts: LiteRT's view of real models (tensors, ops, signatures),
the documented example model, the plugins' own files, and arithmetic
properties (softmax sums to one, percentiles are ordered). Each command's
text output is checked to say the same as its JSON, since both are rendered
from one collected struct.

  cli_json_test.py CHECK --kiln PATH --plugin-dir DIR [--models DIR]
                   [--test-plugin-dir DIR] [--expect-version X.Y.Z]

CHECK: version | inspect | inspect_litert | bench | run | plugin_validate |
       plugin_inspect | usage | default_plugins | plugin_priority
Exit code 0 pass, 1 fail, 77 skipped (nothing to check against).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

SKIP = 77
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def kiln(args, cli, expect_rc=0):
    """Runs the kiln CLI; returns (stdout, stderr)."""
    p = subprocess.run([cli.kiln] + args, capture_output=True, text=True,
                       timeout=300)
    if p.returncode != expect_rc:
        raise SystemExit("kiln %s exited with %d (expected %d)\nstdout:\n%s\n"
                         "stderr:\n%s" % (" ".join(args), p.returncode,
                                          expect_rc, p.stdout, p.stderr))
    return p.stdout, p.stderr


def kiln_json(args, cli, expect_rc=0):
    out, _ = kiln(args + ["--json"], cli, expect_rc)
    try:
        return json.loads(out)
    except json.JSONDecodeError as e:
        raise SystemExit("kiln %s --json printed no JSON (%s):\n%s" %
                         (" ".join(args), e, out))


def plugin_flags(cli):
    return ["--no-default-plugins", "--plugin-dir", cli.plugin_dir]


def in_tree_plugins(cli):
    return sorted(os.path.join(cli.plugin_dir, f)
                  for f in os.listdir(cli.plugin_dir) if f.endswith(".so"))


def build_example(cli, workdir):
    model = os.path.join(workdir, "example.tflite")
    kiln(["build-example", model], cli)
    return model


# ---- version ----------------------------------------------------------------

def check_version(cli):
    j = kiln_json(["version"] + plugin_flags(cli), cli)
    for key in ["runtime_version", "c_api_version", "extension_api_version",
                "model_schema_version", "accepted_extension_api_range",
                "plugin_search_path", "plugins"]:
        check(key in j, "version --json lacks %r" % key)
    if cli.expect_version:
        check(j["runtime_version"] == cli.expect_version,
              "runtime_version %r, the project is %r" %
              (j["runtime_version"], cli.expect_version))
    check(isinstance(j["model_schema_version"], int) and
          j["model_schema_version"] >= 3, "model_schema_version %r" %
          j["model_schema_version"])
    rng = j["accepted_extension_api_range"]
    version_key = lambda v: tuple(int(x) for x in v.split("."))
    check(version_key(rng["min"]) <= version_key(rng["max"]),
          "accepted range %r" % rng)
    check(rng["max"] == j["extension_api_version"],
          "range max %r != extension_api_version %r" %
          (rng["max"], j["extension_api_version"]))
    check(j["plugin_search_path"] == [cli.plugin_dir],
          "plugin_search_path %r, expected only %r (--no-default-plugins)" %
          (j["plugin_search_path"], cli.plugin_dir))
    paths = sorted(p["path"] for p in j["plugins"])
    check(paths == in_tree_plugins(cli),
          "plugins %r, the directory holds %r" % (paths, in_tree_plugins(cli)))
    by_name = {p["name"]: p for p in j["plugins"]}
    cpu = by_name.get("kiln_cpu")
    check(cpu is not None, "kiln_cpu is not listed: %r" % list(by_name))
    if cpu:
        # A plugin without a delegate: "delegate" is null (this used to abort
        # the CLI: a null name turned into a string).
        check(cpu["status"] == "loaded", "kiln_cpu %r" % cpu)
        check("delegate" in cpu and cpu["delegate"] is None,
              "kiln_cpu delegate %r, expected null" % cpu.get("delegate"))
        check(cpu["kernels"] > 50, "kiln_cpu declares %r kernels" %
              cpu["kernels"])
        check(cpu["negotiated_extension_api"] == j["extension_api_version"],
              "kiln_cpu negotiated %r" % cpu["negotiated_extension_api"])
        check("reason" not in cpu, "a loaded plugin has a refusal reason")
    opencl = by_name.get("kiln_opencl")
    if opencl:
        check(opencl["delegate"] == "opencl", "opencl delegate %r" %
              opencl["delegate"])
    text, _ = kiln(["version"] + plugin_flags(cli), cli)
    check("Plugins (%d found)" % len(j["plugins"]) in text,
          "text and JSON disagree on the plugin count:\n" + text)
    check(("Kiln runtime         %s\n" % j["runtime_version"]) in text,
          "text runtime version differs from JSON")
    for p in j["plugins"]:
        check(p["path"] in text, "text does not list %s" % p["path"])
    if cli.test_plugin_dir:
        check_version_refused(cli)


def check_version_refused(cli):
    bad = os.path.join(cli.test_plugin_dir, "libtest_wrong_major.so")
    j = kiln_json(["version", "--no-default-plugins", "--plugin", bad], cli)
    check(len(j["plugins"]) == 1, "one --plugin, %d plugins" %
          len(j["plugins"]))
    p = j["plugins"][0]
    check(p["status"] == "refused", "wrong-major plugin %r" % p)
    check("2.0" in p.get("reason", ""), "refusal does not name 2.0: %r" % p)
    check("delegate" not in p and "kernels" not in p,
          "a refused plugin lists loaded facts: %r" % p)
    check(j["plugin_search_path"] == [], "search path %r" %
          j["plugin_search_path"])


# ---- inspect ----------------------------------------------------------------

def litert(model):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    return Interpreter(
        model_path=model, experimental_op_resolver_type=(
            OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES))


def compare_with_litert(model, j):
    import numpy as np
    ref = litert(model)
    sg = j["subgraphs"][0]
    tensors = ref.get_tensor_details()
    check(len(sg["tensors"]) == len(tensors), "%s: %d tensors, LiteRT %d" %
          (model, len(sg["tensors"]), len(tensors)))
    for t, r in zip(sg["tensors"], tensors):
        where = "%s tensor %d" % (os.path.basename(model), r["index"])
        check(t["index"] == r["index"], where + ": index %r" % t["index"])
        check(t["name"] == r["name"], where + ": name %r, LiteRT %r" %
              (t["name"], r["name"]))
        shape = [int(d) for d in r["shape"]]
        check(t["shape"] == shape, where + ": shape %r, LiteRT %r" %
              (t["shape"], shape))
        check(t["type"] == np.dtype(r["dtype"]).name, where +
              ": type %r, LiteRT %r" % (t["type"], np.dtype(r["dtype"]).name))
        scales = len(r["quantization_parameters"]["scales"])
        got = t.get("quantization", {}).get("scales", 0)
        check(got == scales, where + ": %d scales, LiteRT %d" % (got, scales))
    ops = ref._get_ops_details()
    check(len(sg["nodes"]) == len(ops), "%s: %d nodes, LiteRT %d" %
          (model, len(sg["nodes"]), len(ops)))
    for n, r in zip(sg["nodes"], ops):
        where = "%s node %d" % (os.path.basename(model), r["index"])
        check(n["op"] == r["op_name"], where + ": op %r, LiteRT %r" %
              (n["op"], r["op_name"]))
        ref_in = [int(i) for i in r["inputs"]]
        ref_out = [int(i) for i in r["outputs"]]
        check(n["inputs"] == ref_in and n["outputs"] == ref_out,
              where + ": %r -> %r, LiteRT %r -> %r" %
              (n["inputs"], n["outputs"], ref_in, ref_out))
        check(n["runs_on"] is not None, where + ": cannot run: %r" %
              n.get("unsupported_reason"))
    signatures = ref.get_signature_list()
    check(sorted(s["key"] for s in j["signatures"]) == sorted(signatures),
          "%s: signatures %r, LiteRT %r" %
          (model, [s["key"] for s in j["signatures"]], list(signatures)))
    for s in j["signatures"]:
        want = signatures.get(s["key"], {})
        got_in = sorted(t["name"] for t in s.get("inputs", []))
        got_out = sorted(t["name"] for t in s.get("outputs", []))
        check(got_in == sorted(want.get("inputs", [])) and
              got_out == sorted(want.get("outputs", [])),
              "signature %r: %r -> %r, LiteRT %r" % (s["key"], got_in,
                                                     got_out, want))


def check_inspect_text(model, cli, j):
    text, _ = kiln(["inspect", model] + plugin_flags(cli), cli)
    for sg in j["subgraphs"]:
        header = "Subgraph %d '%s': %d tensors, %d nodes" % (
            sg["index"], sg["name"], len(sg["tensors"]), len(sg["nodes"]))
        check(header in text, "text lacks %r" % header)
        for n in sg["nodes"]:
            line = "  #%d %s v%d  %s -> %s  " % (
                n["index"], n["op"], n["version"],
                json.dumps(n["inputs"]).replace(" ", ""),
                json.dumps(n["outputs"]).replace(" ", ""))
            check(line in text, "text lacks node line %r" % line)
    check(("Model       %s (%d bytes" % (model, j["bytes"])) in text,
          "text lacks the model line")


def check_inspect_example(cli, workdir):
    model = build_example(cli, workdir)
    j = kiln_json(["inspect", model] + plugin_flags(cli), cli)
    for key in ["model", "schema_version", "description", "bytes",
                "min_runtime_version_metadata", "subgraphs", "custom_ops",
                "signatures", "metadata", "min_kiln_release", "plugins"]:
        check(key in j, "inspect --json lacks %r" % key)
    check(j["model"] == model, "model %r" % j["model"])
    check(j["bytes"] == os.path.getsize(model), "bytes %r, the file has %d" %
          (j["bytes"], os.path.getsize(model)))
    sg = j["subgraphs"][0]
    by_index = {t["index"]: t for t in sg["tensors"]}
    image = by_index[sg["inputs"][0]]
    probabilities = by_index[sg["outputs"][0]]
    # The documented example: 'image' [1,16,16,3] -> 'probabilities' [1,10].
    check((image["name"], image["shape"], image["type"]) ==
          ("image", [1, 16, 16, 3], "float32"), "input %r" % image)
    check((probabilities["name"], probabilities["shape"]) ==
          ("probabilities", [1, 10]), "output %r" % probabilities)
    check(all(n["runs_on"] for n in sg["nodes"]),
          "a node of the example cannot run")
    check(re.fullmatch(r"\d+\.\d+\.\d+", j["min_kiln_release"] or ""),
          "min_kiln_release %r" % j["min_kiln_release"])
    check(all("delegate" not in n for n in sg["nodes"]),
          "delegate facts without --delegate")
    check(j["plugins"] and all(p["status"] == "loaded" and p["reason"] == ""
                               for p in j["plugins"]),
          "plugins %r" % j["plugins"])
    check_inspect_text(model, cli, j)


def check_inspect(cli):
    with tempfile.TemporaryDirectory() as workdir:
        check_inspect_example(cli, workdir)


def check_inspect_litert(cli):
    models = [os.path.join(cli.models, m) for m in (
        "misc/mobilenet_like_model.bin", "misc/multi_signature_model.tflite",
        "quantization-testdata/fc_qat.bin")] if cli.models else []
    models = [m for m in models if os.path.exists(m)]
    try:
        import ai_edge_litert.interpreter  # noqa: F401
    except ImportError:
        models = []
    if not models:
        print("shared models or LiteRT absent: nothing to compare with")
        return SKIP
    for model in models:
        j = kiln_json(["inspect", model] + plugin_flags(cli), cli)
        compare_with_litert(model, j)
        check_inspect_text(model, cli, j)
    return None


# ---- bench ------------------------------------------------------------------

def check_bench(cli):
    with tempfile.TemporaryDirectory() as workdir:
        model = build_example(cli, workdir)
        j = kiln_json(["bench", model, "--iterations", "3", "--warmup=1"] +
                      plugin_flags(cli), cli)
        text, _ = kiln(["bench", model, "--iterations=2"] + plugin_flags(cli),
                       cli)
    for key in ["model", "delegates", "open_verify_ms", "create_ms",
                "allocate_ms", "init_ms", "first_invoke_ms", "iterations",
                "invoke_ms", "arena_bytes", "warnings"]:
        check(key in j, "bench --json lacks %r" % key)
    check(j["iterations"] == 3, "iterations %r" % j["iterations"])
    # The default delegate when its plugin is among the in-tree plugins.
    default = (["xnnpack"] if any(p.endswith("libkiln_xnnpack.so")
                                  for p in in_tree_plugins(cli)) else [])
    check(j["delegates"] == default, "delegates %r" % j["delegates"])
    s = j["invoke_ms"]
    check(0 <= s["min"] <= s["median"] <= s["p90"] <= s["max"],
          "invoke_ms not ordered: %r" % s)
    check(s["min"] <= s["mean"] <= s["max"], "mean outside [min, max]: %r" % s)
    parts = j["open_verify_ms"] + j["create_ms"] + j["allocate_ms"]
    check(abs(j["init_ms"] - parts) <= 1e-6 * max(1.0, parts),
          "init_ms %r != open + create + allocate %r" % (j["init_ms"], parts))
    check(j["arena_bytes"] >= 16 * 16 * 3 * 4,
          "arena %r bytes cannot hold the input" % j["arena_bytes"])
    check("invoke (2 runs) mean" in text, "text:\n" + text)
    check(("model            %s\n" % model) in text, "text:\n" + text)


# ---- run --------------------------------------------------------------------

def check_run(cli):
    import numpy as np
    with tempfile.TemporaryDirectory() as workdir:
        model = build_example(cli, workdir)
        out_dir = os.path.join(workdir, "out")
        j = kiln_json(["run", model, "--input", "random", "--seed=3",
                       "--output-dir", out_dir] + plugin_flags(cli), cli)
        with open(os.path.join(out_dir, "outputs.json")) as f:
            manifest = json.load(f)
        check(j == manifest, "--json differs from outputs.json")
        check(j["model"] == model and j["signature"] == "",
              "model/signature %r %r" % (j["model"], j["signature"]))
        check(len(j["outputs"]) == 1, "outputs %r" % j["outputs"])
        o = j["outputs"][0]
        check((o["index"], o["name"], o["file"], o["dtype"], o["shape"]) ==
              (0, "probabilities", "probabilities.npy", "float32", [1, 10]),
              "output %r" % o)
        y = np.load(os.path.join(out_dir, o["file"]))
        check(list(y.shape) == o["shape"] and y.dtype.name == o["dtype"],
              "the .npy holds %s %s" % (y.dtype, y.shape))
        check(abs(float(y.sum()) - 1.0) < 1e-4 and float(y.min()) >= 0,
              "probabilities do not sum to one: %r" % y)
        text, _ = kiln(["run", model, "--input", "random", "--output-dir",
                        out_dir] + plugin_flags(cli), cli)
        check(text == "output 0 'probabilities' float32 [1, 10] -> %s\n" %
              os.path.join(out_dir, "probabilities.npy"), "text %r" % text)


# ---- plugin validate ----------------------------------------------------------

def check_plugin_validate(cli):
    version = kiln_json(["version"] + plugin_flags(cli), cli)
    declared = {p["path"]: p for p in version["plugins"]}
    for plugin in in_tree_plugins(cli):
        j = kiln_json(["plugin", "validate", plugin], cli)
        where = os.path.basename(plugin)
        check(j["path"] == plugin and j["passed"] is True,
              "%s: %r" % (where, {k: j[k] for k in ("path", "passed")}))
        check([c["name"] for c in j["checks"]] ==
              ["elf", "exports", "no_libkiln", "dependencies", "load"],
              "%s: checks %r" % (where, [c["name"] for c in j["checks"]]))
        check(all(c["passed"] and c["detail"] for c in j["checks"]),
              "%s: %r" % (where, j["checks"]))
        p = j["plugin"]
        v = declared.get(plugin, {})
        check(p["name"] == v.get("name") and p["version"] == v.get("version"),
              "%s: name/version %r %r, kiln version says %r %r" %
              (where, p["name"], p["version"], v.get("name"),
               v.get("version")))
        check(p["negotiation"] == "accepted", "%s: %r" % (where, p))
        check(len(p["kernels"]) == v.get("kernels"),
              "%s: %d kernels, kiln version says %r" %
              (where, len(p["kernels"]), v.get("kernels")))
        for k in p["kernels"]:
            check(1 <= k["min_version"] <= k["max_version"],
                  "%s: kernel %r" % (where, k))
        delegate = p["delegate"]["name"] if p["delegate"] else None
        check(delegate == v.get("delegate"), "%s: delegate %r, kiln version "
              "says %r" % (where, delegate, v.get("delegate")))
        text, _ = kiln(["plugin", "validate", plugin], cli)
        check("Result: PASS (5 of 5 checks passed)" in text, text)
        check(re.search(r"kernels +%d\n" % len(p["kernels"]), text),
              "%s: text kernel count differs" % where)
    missing = os.path.join(cli.plugin_dir, "does_not_exist.so")
    j = kiln_json(["plugin", "validate", missing], cli, expect_rc=1)
    check(j["passed"] is False and j["plugin"] is None,
          "missing file: %r" % j)
    check([c["passed"] for c in j["checks"]] == [False] * 5,
          "missing file checks %r" % j["checks"])


def check_plugin_inspect(cli):
    version = kiln_json(["version"] + plugin_flags(cli), cli)
    declared = {p["path"]: p for p in version["plugins"]}
    for plugin in in_tree_plugins(cli):
        j = kiln_json(["plugin", "inspect", plugin], cli)
        where = os.path.basename(plugin)
        p, v = j["plugin"], declared.get(plugin, {})
        check(j["path"] == plugin and p["negotiation"] == "accepted",
              "%s: %r" % (where, {k: p.get(k) for k in ("negotiation",
                                                        "refusal")}))
        check(p["name"] == v.get("name") and p["version"] == v.get("version")
              and len(p["kernels"]) == v.get("kernels"),
              "%s: %r, kiln version says %r" % (where, p["name"], v))
        check(p["negotiated_extension_api"] ==
              v.get("negotiated_extension_api"), "%s: negotiation" % where)
        delegate = p["delegate"]["name"] if p["delegate"] else None
        check(delegate == v.get("delegate"), "%s: delegate %r" % (where,
                                                                   delegate))
    opencl = os.path.join(cli.plugin_dir, "libkiln_opencl.so")
    if os.path.exists(opencl):
        d = kiln_json(["plugin", "inspect", opencl], cli)["plugin"]["delegate"]
        rows = {o["op"]: o for o in d["supported_ops"]}
        check(d["settings_type"] == "kiln.DelegateSettings" and
              d["settings_fields"], "opencl settings %r" % d)
        check(rows.get("ADD", {}).get("max_version") == 2 and
              rows["ADD"]["tensor_types"] == ["FLOAT32"],
              "opencl ADD row %r" % rows.get("ADD"))
        check(rows.get("RESHAPE", {}).get("tensor_types") ==
              ["FLOAT32", "INT32"], "opencl RESHAPE row %r" % rows.get("RESHAPE"))
        text, _ = kiln(["plugin", "inspect", opencl], cli)
        check("      ADD versions 1..2, types FLOAT32\n" in text, text)
    if not cli.test_plugin_dir:
        return None
    good = os.path.join(cli.test_plugin_dir, "libtest_good.so")
    d = kiln_json(["plugin", "inspect", good], cli)["plugin"]["delegate"]
    check(d["supported_ops"] == "undeclared", "test_good: %r" % d)
    text, _ = kiln(["plugin", "inspect", good], cli)
    check("supported ops         undeclared" in text, text)
    probe = os.path.join(cli.test_plugin_dir, "libtest_probe.so")
    capped = kiln_json(["plugin", "inspect", probe, "--max-extension-api",
                        "1.0"], cli)["plugin"]
    check(capped["negotiated_extension_api"] == "1.0.0" and
          capped["host_extension_api_range"]["max"] == "1.0.0",
          "capped probe %r" % capped)
    refuses = os.path.join(cli.test_plugin_dir,
                           "libtest_probe_refuses_initialize.so")
    r = kiln_json(["plugin", "inspect", refuses], cli, expect_rc=1)["plugin"]
    check(r["negotiation"] == "refused" and
          "its initialize returned UNAVAILABLE" in r["refusal"] and
          r["messages"] == ["error: probe refuses: no probe device on this "
                            "machine", "info: probe: shutdown"],
          "refusing probe %r" % r)
    v = kiln_json(["version", "--no-default-plugins", "--plugin", refuses],
                  cli)["plugins"][0]
    check("probe refuses: no probe device" in v["reason"] and
          v["messages"][0].startswith("error: probe refuses"),
          "kiln version on the refusing probe %r" % v)
    return None


# ---- usage errors and help ----------------------------------------------------

def check_usage(cli):
    cases = [
        (["run", "m.tflite", "--seed", "abc"],
         "kiln run: --seed expects an integer, got 'abc'\n"),
        (["run", "m.tflite", "--input", "noequals"],
         "kiln run: --input expects NAME=FILE.npy or 'random', got "
         "'noequals'\n"),
        (["bench", "m.tflite", "--iterations=0"],
         "kiln bench: --iterations expects an integer from 1 to 2147483647, "
         "got '0'\n"),
        (["inspect"], "kiln inspect: missing MODEL\n"),
        (["inspect", "a", "b"], "kiln inspect: unexpected argument 'b'\n"),
        (["version", "--bogus"],
         "kiln version: unknown option '--bogus'; see kiln version --help\n"),
        (["version", "--json=1"],
         "kiln version: --json takes no value, got '--json=1'\n"),
        (["conformance", "p.so", "--timeout", "0"],
         "kiln conformance: --timeout expects a number greater than 0, got "
         "'0'\n"),
        (["build-example"], "kiln build-example: missing OUT.tflite\n"),
        (["inspect", "m", "--delegate-settings", "f"],
         "kiln inspect: --delegate-settings must follow a --delegate\n"),
        (["plugin", "inspect", "p.so", "--max-extension-api", "one"],
         "kiln plugin inspect: --max-extension-api expects a version such as "
         "1.1, got 'one'\n"),
        (["plugin", "inspect"], "kiln plugin inspect: missing PLUGIN.so\n"),
    ]
    for args, want in cases:
        _, err = kiln(args, cli, expect_rc=2)
        check(err == want, "kiln %s: stderr %r, expected %r" %
              (" ".join(args), err, want))
    for command in [["version"], ["run"], ["inspect"], ["bench"],
                    ["build-example"], ["conformance"], ["plugin", "validate"],
                    ["plugin", "inspect"]]:
        out, _ = kiln(command + ["--help"], cli)
        check(out.startswith("usage: kiln %s" % " ".join(command)),
              "%s --help: %r" % (command, out[:80]))
        check("  -h, --help" in out, "%s --help lists no -h" % command)
    _, err = kiln(["inspect", "/nonexistent.tflite"], cli, expect_rc=1)
    check(err.startswith("kiln inspect: ") and "/nonexistent.tflite" in err,
          "a missing model: %r" % err)


# ---- default plugins -----------------------------------------------------------

def check_default_plugins(cli):
    """Every command's --json with no plugin flags: the installed default
    plugin directory (the build tree's here) and $KILN_PLUGIN_PATH, exactly
    what a user gets. Kiln's own CPU plugin has no delegate, which once
    aborted `kiln version --json`."""
    v = kiln_json(["version"], cli)
    check(v["default_plugin_dir"]["searched"] is True,
          "default dir not searched: %r" % v["default_plugin_dir"])
    by_name = {p["name"]: p for p in v["plugins"]}
    cpu = by_name.get("kiln_cpu")
    check(cpu is not None and cpu["status"] == "loaded" and
          cpu["delegate"] is None, "kiln_cpu from the default dir: %r" % cpu)
    if cpu is None:
        return 1
    with tempfile.TemporaryDirectory() as workdir:
        model = build_example(cli, workdir)
        i = kiln_json(["inspect", model], cli)
        for sg in i["subgraphs"]:
            for n in sg["nodes"]:
                check(n["runs_on"] == cpu["path"],
                      "node %r does not run on the default CPU plugin" % n)
        b = kiln_json(["bench", model, "--iterations", "2", "--warmup=0"], cli)
        check(isinstance(b, dict) and b, "bench --json %r" % b)
        r = kiln_json(["run", model, "--input", "random", "--output-dir",
                       os.path.join(workdir, "out")], cli)
        check(len(r["outputs"]) == 1, "run --json %r" % r)
    for command in (["plugin", "inspect"], ["plugin", "validate"]):
        for p in v["plugins"]:
            if p["status"] != "loaded":
                continue
            j = kiln_json(command + [p["path"]], cli)
            check(isinstance(j, dict) and j, "%s %s --json %r" %
                  (" ".join(command), p["path"], j))
    return 0


# ---- plugin priority -----------------------------------------------------------

def check_plugin_priority(cli):
    """Two plugins implementing ADD v1 in one directory: Kiln's CPU plugin
    keeps it however the other file is named; an explicit --plugin comes
    first; kiln inspect lists both candidates."""
    import shutil
    cpu = os.path.join(cli.plugin_dir, "libkiln_cpu.so")
    other = os.path.join(cli.test_plugin_dir, "libtest_good.so")  # ADD v1-2
    if not os.path.exists(other):
        print("SKIP: no --test-plugin-dir with libtest_good.so")
        return SKIP
    model = os.path.join(cli.models, "tflite-testdata", "add.bin")
    if not cli.models or not os.path.exists(model):
        print("SKIP: no %s" % model)
        return SKIP
    with tempfile.TemporaryDirectory() as workdir:
        plugins = os.path.join(workdir, "plugins")
        os.mkdir(plugins, 0o755)
        shutil.copy(cpu, os.path.join(plugins, "libkiln_cpu.so"))
        shutil.copy(other, os.path.join(plugins, "libaaa.so"))
        flags = ["--no-default-plugins", "--plugin-dir", plugins]
        j = kiln_json(["inspect", model] + flags, cli)
        adds = [n for sg in j["subgraphs"] for n in sg["nodes"]
                if n["op"] == "ADD"]
        check(adds, "the add model has no ADD node: %r" % j)
        for n in adds:
            check(n["runs_on"] == os.path.join(plugins, "libkiln_cpu.so"),
                  "libaaa.so took ADD from the CPU plugin: %r" % n)
            check(n.get("candidates") == [
                os.path.join(plugins, "libkiln_cpu.so"),
                os.path.join(plugins, "libaaa.so")],
                  "candidates %r" % n.get("candidates"))
        text, _ = kiln(["inspect", model] + flags, cli)
        check("2 candidates, won by plugin priority; also offered by %s" %
              os.path.join(plugins, "libaaa.so") in text,
              "inspect text does not show the candidates:\n%s" % text)
        # An explicit plugin has the highest priority.
        j = kiln_json(["inspect", model, "--plugin",
                       os.path.join(plugins, "libaaa.so")] + flags, cli)
        for n in (n for sg in j["subgraphs"] for n in sg["nodes"]
                  if n["op"] == "ADD"):
            check(n["runs_on"] == os.path.join(plugins, "libaaa.so"),
                  "an explicit --plugin does not win: %r" % n)
        # A world-writable plugin directory is refused, and accepted again
        # with --allow-insecure-plugins.
        os.chmod(plugins, 0o777)
        v = kiln_json(["version"] + flags, cli)
        check(all(p["status"] == "refused" and
                  "writable by every user" in p["reason"]
                  for p in v["plugins"]) and v["plugins"],
              "plugins in a world-writable directory: %r" % v["plugins"])
        v = kiln_json(["version", "--allow-insecure-plugins"] + flags, cli)
        check(all(p["status"] == "loaded" for p in v["plugins"]),
              "--allow-insecure-plugins: %r" % v["plugins"])
        os.chmod(plugins, 0o755)
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("check", choices=["version", "inspect", "inspect_litert",
                                      "bench", "run", "plugin_validate",
                                      "plugin_inspect", "usage",
                                      "default_plugins", "plugin_priority"])
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--plugin-dir", required=True)
    ap.add_argument("--models", default="")
    ap.add_argument("--test-plugin-dir", default="")
    ap.add_argument("--expect-version", default="")
    cli = ap.parse_args()
    cli.plugin_dir = os.path.abspath(cli.plugin_dir)
    rc = globals()["check_" + cli.check](cli)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    if rc == SKIP:
        return SKIP
    print("OK: kiln %s" % cli.check)
    return 0


if __name__ == "__main__":
    sys.exit(main())
