"""Today's plugins on a released host whose CLI has no `kiln conformance`
(release_host_test.py, releases with "driver": "kernels" in releases.json:
0.1.0-ext1.0, the extension API 1.0 host).

That host's libkiln exports the version and plugin-probe functions only
(model loading and the interpreter came after it), so two small drivers,
compiled here against the release's own headers and linked with its own
libraries, stand in for its missing CLI:

- c_api_host_driver.c, through the release's public C API (kiln_c_api.h as
  it was at the commit, libkiln.so): loads today's CPU plugin (and the
  matrix plugin that needs a 1.1 host, when built) through the old loader
  and prints the negotiation. Today's CPU plugin must load at 1.0; the
  plugin with min_host 1.1 must be refused, naming the versions.
- release_kernel_driver.cc, through the release's internal host headers
  and libkiln_core.a: the old loader, negotiation and KilnHostApi table
  (1.0), a Graph filled with each single-op case today's runner generates
  (`kiln conformance --internal-write-cases`), the plugin's kernel run as
  that host's runtime would. Outputs are compared with the LiteRT golden
  references (conformance/references/golden). Verdicts per case: pass
  (matches), fail (differs, or fails other than by needing 1.1), refused as
  required (a quantized case: the plugin needs KilnHostApi.tensor_quantization,
  1.1, and says so), skip (version not declared), no reference.
"""
import json
import os
import re
import struct
import subprocess

# KILN_TYPE_* codes (frozen since 1.0) -> (name, struct format).
TYPES = {0: ("FLOAT32", "f"), 2: ("INT32", "i"), 3: ("UINT8", "B"),
         4: ("INT64", "q"), 6: ("BOOL", "B"), 7: ("INT16", "h"),
         9: ("INT8", "b"), 10: ("FLOAT64", "d"), 15: ("UINT32", "I"),
         16: ("UINT16", "H")}
HERE = os.path.dirname(os.path.abspath(__file__))


def link_libraries(old_build):
    """The old CLI's link line (its libkiln_core.a and Abseil), from the
    old build.ninja, with paths made absolute."""
    for block in open(os.path.join(old_build, "build.ninja")).read().split(
            "\nbuild "):
        if block.startswith("bin/kiln:"):
            for line in block.splitlines():
                if line.strip().startswith("LINK_LIBRARIES ="):
                    libs = line.split("=", 1)[1].split()
                    return [os.path.join(old_build, x)
                            if x.startswith("lib/") else x for x in libs]
    raise RuntimeError(f"no link line for bin/kiln in {old_build}/build.ninja")


def compile_driver(cmd, out, sources):
    """Compiles once; again when a source is newer than the binary."""
    if os.path.exists(out) and all(os.path.getmtime(s) <= os.path.getmtime(out)
                                   for s in sources):
        return ""
    r = subprocess.run(cmd + ["-o", out], capture_output=True, text=True)
    return "" if r.returncode == 0 else f"{' '.join(cmd)}:\n{r.stderr[-3000:]}"


def compare(got, ref):
    """'' when the driver's output equals the reference output, else why."""
    name, fmt = TYPES.get(got["type"], (str(got["type"]), None))
    if name != ref["type"]:
        return f"output type {name}, reference {ref['type']}"
    if list(got["shape"]) != list(ref["shape"]):
        return f"output shape {got['shape']}, reference {ref['shape']}"
    raw = bytes(got["bytes"])
    values = list(struct.unpack(f"<{len(raw) // struct.calcsize(fmt)}{fmt}",
                                raw))
    if len(values) != len(ref["values"]):
        return f"{len(values)} values, reference {len(ref['values'])}"
    tol = ref.get("tolerance", {"abs": 1e-5, "rel": 1e-4})
    for i, (a, b) in enumerate(zip(values, ref["values"])):
        if name in ("FLOAT32", "FLOAT64"):
            if b is None and a != a:
                continue
            ok = b is not None and abs(a - b) <= tol["abs"] + tol["rel"] * abs(b)
        elif "quantized" in ref:
            ok = abs(a - b) <= 1  # one quantization step
        else:
            ok = a == b
        if not ok:
            return f"element {i}: got {a}, reference {b}"
    return ""


def run_cases(kernels, plugin, cases, cases_dir, args, out):
    """Runs the cases through the kernel driver; (process, report, verdicts)."""
    r = subprocess.run([kernels, plugin, out] + cases, capture_output=True,
                       text=True, timeout=600)
    data = json.load(open(out)) if r.returncode == 0 else {}
    verdicts = {"pass": [], "fail": [], "refused_needs_1.1": [], "skip": [],
                "no-reference": []}
    for c in data.get("cases", []):
        key = c.get("key", c["case"])
        if c["status"] == "no-kernel":
            verdicts["skip"].append(f"{key}: {c['message']}")
            continue
        if c["status"] != "ok":
            msg = c.get("message", "")
            if "tensor_quantization" in msg and "1.1" in msg:
                verdicts["refused_needs_1.1"].append(key)
            else:
                verdicts["fail"].append(f"{key}: {msg[:300]}")
            continue
        ref_path = os.path.join(args.references, key + ".json")
        meta = json.load(open(os.path.join(cases_dir, key + ".json")))
        if not os.path.exists(ref_path):
            verdicts["no-reference"].append(key)
            continue
        ref = json.load(open(ref_path))
        if ref.get("model_hash") != meta.get("model_hash"):
            verdicts["no-reference"].append(f"{key} (stale reference)")
            continue
        why = ""
        for got, want in zip(c["outputs"], ref["outputs"]):
            want = dict(want, tolerance=ref.get("tolerance", {}) or
                        {"abs": 1e-5, "rel": 1e-4})
            why = why or compare(got, want)
        if len(c["outputs"]) != len(ref["outputs"]):
            why = f"{len(c['outputs'])} outputs, reference {len(ref['outputs'])}"
        (verdicts["fail"] if why else verdicts["pass"]).append(
            f"{key}: {why}" if why else key)
    return r, data, verdicts


def built_for(probe_line):
    """The extension API a probed plugin was built for ("" if unknown)."""
    m = re.search(r"built_for (\d+\.\d+)", probe_line)
    return m.group(1) if m else ""


def kernel_driver_cells(args, rel, old_build, new_kiln, new_cpu, work):
    """The cells of a release run through the drivers; (cells, failed)."""
    host = f"real host {args.release} ({rel['extension_api']})"
    src = os.path.dirname(old_build)
    cells, failed = [], False
    probe = os.path.join(work, "c_api_host_driver")
    kernels = os.path.join(work, "release_kernel_driver")
    cc = [args.cc, "-std=c99", "-Wall", "-Wextra", "-Werror",
          "-I" + os.path.join(src, "abi", "include"),
          os.path.join(HERE, "c_api_host_driver.c"),
          "-L" + os.path.join(old_build, "lib"), "-lkiln",
          "-Wl,-rpath," + os.path.join(old_build, "lib")]
    cxx = [args.cxx, "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror",
           "-I" + os.path.join(src, "host", "src"),
           "-I" + os.path.join(src, "abi", "include"),
           os.path.join(HERE, "release_kernel_driver.cc")] + \
        link_libraries(old_build)
    for cmd, out, source in ((cc, probe, "c_api_host_driver.c"),
                             (cxx, kernels, "release_kernel_driver.cc")):
        why = compile_driver(cmd, out, [os.path.join(HERE, source)])
        if why:
            print(f"FAIL: cannot build {source} against {args.release}: {why}")
            return cells, True

    # 1. The public C API: negotiation through the old libkiln.
    probes = [(new_cpu, "1.0")]
    needs_11 = os.path.join(args.build, "lib", "kiln", "conformance_matrix",
                            "libkiln_matrix_abi11_needs_quant.so")
    if os.path.exists(needs_11):
        probes.append((needs_11, "refused"))
    for plugin, expected in probes:
        r = subprocess.run([probe, plugin], capture_output=True, text=True)
        line = next((x for x in r.stdout.splitlines()
                     if x.startswith("plugin ")), r.stdout + r.stderr)
        if expected == "refused":
            ok = (r.returncode == 0 and " loaded 0 " in line and
                  "1.1" in line and "1.0" in line)
        else:
            ok = r.returncode == 0 and " loaded 1 " in line and \
                f"negotiated {expected}" in line
        cells.append({
            "host": host, "host_is_real": True, "built_from_history": True,
            "plugin": os.path.basename(plugin) + (
                " (today's)" if plugin == new_cpu else
                " (matrix build with min_host 1.1)"),
            "plugin_row": ("today's libkiln_cpu.so" if plugin == new_cpu else
                           os.path.basename(plugin)),
            "plugin_path": plugin, "required": True,
            "plugin_extension_api": built_for(line),
            "runner": "c_api_host_driver.c through the release's public C "
                      "API (plugin probe)",
            "exit": 0 if ok else 1,
            "summary": ("PASSED: " if ok else "FAILED: ") + line.strip()})
        if not ok:
            failed = True
            print(f"FAIL: probe of {plugin} on the {args.release} host: "
                  f"expected {expected}: {r.stdout}{r.stderr}")

    # 2. Today's CPU plugin's kernels on the old host, against LiteRT.
    cases_dir = os.path.join(work, "cases")
    subprocess.run(["rm", "-rf", cases_dir], check=True)
    subprocess.run([new_kiln, "conformance", "--internal-write-cases",
                    cases_dir], check=True, capture_output=True)
    cases = sorted(os.path.join(cases_dir, f) for f in os.listdir(cases_dir)
                   if f.endswith(".json") and ".single." in f)
    r, data, verdicts = run_cases(kernels, new_cpu, cases, cases_dir, args,
                                  os.path.join(work, "kernel_driver.json"))
    negotiated = data.get("plugin", {}).get("negotiated", "")
    ok = (r.returncode == 0 and negotiated == "1.0" and
          not verdicts["fail"] and len(verdicts["pass"]) > 0)
    counts = ", ".join(f"{len(v)} {k}" for k, v in verdicts.items())
    cells.append({
        "host": host, "host_is_real": True, "built_from_history": True,
        "plugin": f"today's libkiln_cpu.so ({new_cpu})",
        "plugin_row": "today's libkiln_cpu.so", "plugin_path": new_cpu,
        "required": True,
        "runner": "release_kernel_driver.cc on the release's host code "
                  "(loader, negotiation, KilnHostApi 1.0); LiteRT "
                  "references",
        "levels": [negotiated] if negotiated else [],
        "exit": 0 if ok else 1,
        "summary": ("PASSED" if ok else "FAILED") +
                   f" (negotiated {negotiated or 'nothing'}): {counts}",
        "failures": verdicts["fail"][:20],
        "refused_needs_1.1": verdicts["refused_needs_1.1"]})
    if not ok:
        failed = True
        print(f"FAIL: today's CPU plugin's kernels on the {args.release} "
              f"host: {counts}; driver exit {r.returncode}: "
              f"{r.stderr[-2000:]}")
        for f in verdicts["fail"][:20]:
            print(f"  {f}")

    # 3. The comparison can fail: a kernel that adds 0.5 to ADD's result.
    wrong = os.path.join(args.build, "lib", "kiln", "conformance_bad_plugins",
                         "libbad_plugin_wrong_outputs.so")
    add = os.path.join(cases_dir, "ADD.v1.single.s1.json")
    if os.path.exists(wrong):
        r, data, verdicts = run_cases(kernels, wrong, [add], cases_dir, args,
                                      os.path.join(work, "control.json"))
        ok = r.returncode == 0 and len(verdicts["fail"]) == 1
        cells.append({
            "host": host, "host_is_real": True, "built_from_history": True,
            "plugin": "libbad_plugin_wrong_outputs.so (negative control)",
            "plugin_row": "libbad_plugin_wrong_outputs.so (negative control)",
            "plugin_path": wrong, "required": True,
            "runner": "release_kernel_driver.cc; LiteRT references",
            "exit": 0 if ok else 1,
            "summary": ("PASSED: ADD v1 reported wrong: " if ok else
                        "FAILED: the wrong output was not reported: ") +
                       "; ".join(verdicts["fail"] + verdicts["pass"])[:300]})
        if not ok:
            failed = True
            print("FAIL: the negative control passed: "
                  f"{verdicts} {r.stderr[-1000:]}")
    return cells, failed
