#!/usr/bin/env python3
"""The kiln CLI on bad input (issue 10): every case ends with one clear
message on stderr and exit code 1 (or 2 for a wrong command line), never a
crash, an abort, a hang or a stack trace.

  hardening_test.py CHECK --kiln PATH --plugin-dir DIR --models DIR

CHECK: files | npy | flags | limits | json
--models: the directory tools/kiln/tests/hardening_models.cc writes.
Exit code 0 pass, 1 fail, 77 skipped (numpy absent).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def kiln(cli, args, timeout=60):
    """Runs kiln; returns (returncode, stdout, stderr); a hang is a failure
    (returncode None)."""
    try:
        p = subprocess.run([cli.kiln] + args, capture_output=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", "(hung)"
    return (p.returncode, p.stdout.decode("utf-8", "replace"),
            p.stderr.decode("utf-8", "replace"))


def plugins(cli):
    return ["--no-default-plugins", "--plugin-dir", cli.plugin_dir]


def refused(cli, args, expect_in_stderr, rc=1, timeout=60):
    """kiln `args` must exit with `rc` and one clear message containing
    `expect_in_stderr`, without a crash, hang or stack trace."""
    code, out, err = kiln(cli, args, timeout)
    what = "kiln " + " ".join(args)
    check(code is not None, f"{what}: hung for {timeout} s")
    if code is None:
        return
    check(code == rc, f"{what}: exit code {code}, expected {rc}; stderr: "
          f"{err.strip()}")
    check(expect_in_stderr in err,
          f"{what}: stderr lacks {expect_in_stderr!r}: {err.strip()}")
    for bad in ["terminate called", "Traceback", "Aborted", "what():",
                "internal error"]:
        check(bad not in err, f"{what}: stderr shows {bad!r}: {err.strip()}")


def model(cli, name):
    return os.path.join(cli.models, name)


def save(path, array):
    import numpy as np
    np.save(path, array)
    return path


# ---- files --------------------------------------------------------------

def check_files(cli, tmp):
    import numpy as np
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    relu = model(cli, "bad_utf8_name.tflite")  # x [4] -> RELU
    for path in [tmp, fifo, "/dev/zero"]:
        refused(cli, ["run", path, "--input", "random"] + plugins(cli),
                "not a regular file", timeout=20)
        refused(cli, ["inspect", path] + plugins(cli), "not a regular file",
                timeout=20)
        refused(cli, ["run", relu, "--input", f"x={path}"] + plugins(cli),
                "is not a regular file (a directory, FIFO or device)",
                timeout=20)
        refused(cli, ["run", relu, "--input", "random", "--delegate", "x",
                      "--delegate-settings", path] + plugins(cli),
                "not a regular file", rc=2, timeout=20)
    refused(cli, ["run", os.path.join(tmp, "missing.tflite"), "--input",
                  "random"] + plugins(cli), "cannot open")
    # An input given twice, by name and by index.
    x = save(os.path.join(tmp, "x.npy"), np.ones(4, np.float32))
    refused(cli, ["run", relu, "--input", f"x={x}", "--input", f"0={x}"] +
            plugins(cli), "input 'x' is given twice", rc=2)


# ---- npy ----------------------------------------------------------------

def npy_bytes(header, data=b""):
    header = header.encode()
    pad = (64 - (10 + len(header) + 1) % 64) % 64
    header += b" " * pad + b"\n"
    return (b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") +
            header + data)


def check_npy(cli, tmp):
    relu = model(cli, "bad_utf8_name.tflite")  # x [4] float32
    good = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }"
    cases = {
        "garbage_header.npy": (npy_bytes(good + " garbage", b"\0" * 16),
                               "unexpected bytes after the header dict"),
        "extra_key.npy": (npy_bytes(good[:-3] + ", 'x': 1}", b"\0" * 16),
                          "unexpected or repeated key 'x'"),
        "trailing_data.npy": (npy_bytes(good, b"\0" * 20),
                              "(trailing bytes after the data)"),
        "truncated.npy": (npy_bytes(good, b"\0" * 12), "(truncated)"),
        "wrong_shape.npy": (npy_bytes(good.replace("(4,)", "(5,)"),
                                      b"\0" * 20),
                            "input 'x' has shape [4] in the model but"),
    }
    for name, (data, message) in cases.items():
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        refused(cli, ["run", relu, "--input", f"x={path}"] + plugins(cli),
                message)
    # A 3 GB .npy (sparse) for a 16-byte input: refused from its header, in
    # far less time than reading 3 GB takes.
    big = os.path.join(tmp, "big.npy")
    header = npy_bytes("{'descr': '<f4', 'fortran_order': False, "
                       "'shape': (805306368,), }")
    with open(big, "wb") as f:
        f.write(header)
        f.truncate(len(header) + 3 * 2**30)
    refused(cli, ["run", relu, "--input", f"x={big}"] + plugins(cli),
            "holds an array of shape [805306368]", timeout=10)


# ---- flags --------------------------------------------------------------

def check_flags(cli, tmp):
    relu = model(cli, "bad_utf8_name.tflite")
    for args, message in [
            (["--seed", "abc"], "--seed expects an integer, got 'abc'"),
            (["--max-arena-bytes", "lots"],
             "--max-arena-bytes expects a positive number of bytes"),
            (["--max-arena-bytes", "0"],
             "--max-arena-bytes expects a positive number of bytes"),
            (["--max-while-iterations", "-3"],
             "--max-while-iterations expects an integer"),
            (["--timeout", "-1"], "--timeout expects a positive number"),
            (["--timeout", "soon"], "--timeout expects a positive number")]:
        refused(cli, ["run", relu, "--input", "random"] + args + plugins(cli),
                message, rc=2)
    refused(cli, ["bench", relu, "--timeout", "0"] + plugins(cli),
            "--timeout expects a positive number", rc=2)


# ---- limits -------------------------------------------------------------

def check_limits(cli, tmp):
    import numpy as np
    loop = model(cli, "while_forever.tflite")
    true = save(os.path.join(tmp, "true.npy"), np.ones(1, np.bool_))
    refused(cli, ["run", loop, "--input", f"b={true}", "--timeout", "0.2"] +
            plugins(cli), "exceeded its timeout of 0.2 s", timeout=30)
    refused(cli, ["bench", loop, "--timeout", "0.2"] + plugins(cli),
            "exceeded its timeout of 0.2 s", timeout=30)
    refused(cli, ["run", loop, "--input", f"b={true}",
                  "--max-while-iterations", "100"] + plugins(cli),
            "would run more than 100 iterations", timeout=30)
    refused(cli, ["run", model(cli, "big_input.tflite"), "--input", "random",
                  "--max-arena-bytes", "1000"] + plugins(cli),
            "'x' with shape [256,1024] of FLOAT32 needs 1048576 bytes, more "
            "than the limit of 1000 bytes")
    code, _, err = kiln(cli, ["run", model(cli, "big_input.tflite"),
                              "--input", "random", "--output-dir",
                              os.path.join(tmp, "out"),
                              "--max-arena-bytes", str(16 << 20)] +
                        plugins(cli))
    check(code == 0, f"big_input.tflite within the limit: {code} {err}")
    refused(cli, ["run", model(cli, "constant_input.tflite"), "--input",
                  "random"] + plugins(cli),
            "subgraph 0 ('main'): input 0 is tensor 0 ('c'), a constant")
    for command in [["run"], ["inspect"]]:
        refused(cli, command + [model(cli, "overflow_shape.tflite")] +
                (["--input", "random"] if command == ["run"] else []) +
                plugins(cli), "whose size in bytes does not fit in 64 bits")


# ---- json ---------------------------------------------------------------

def check_json(cli, tmp):
    bad = model(cli, "bad_utf8_name.tflite")
    out_dir = os.path.join(tmp, "out")
    code, out, err = kiln(cli, ["run", bad, "--input", "random", "--json",
                                "--output-dir", out_dir] + plugins(cli))
    check(code == 0, f"run --json on an invalid UTF-8 name: {code} {err}")
    if code != 0:
        return
    j = json.loads(out)
    name = j["outputs"][0]["name"]
    check(name.startswith("y\ufffd") and set(name[1:]) == {"\ufffd"},
          f"output name {name!r}, expected 'y' then U+FFFD for the bad bytes")
    with open(os.path.join(out_dir, "outputs.json"), "rb") as f:
        manifest = json.loads(f.read().decode("utf-8"))
    check(manifest == j, "outputs.json differs from run --json")
    code, out, err = kiln(cli, ["inspect", bad, "--json"] + plugins(cli))
    check(code == 0, f"inspect --json on an invalid UTF-8 name: {code} {err}")
    if code == 0:
        json.loads(out)


CHECKS = {"files": check_files, "npy": check_npy, "flags": check_flags,
          "limits": check_limits, "json": check_json}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("check", choices=sorted(CHECKS))
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--plugin-dir", required=True)
    parser.add_argument("--models", required=True)
    cli = parser.parse_args()
    try:
        import numpy  # noqa: F401
    except ImportError:
        print("numpy is absent: skipped")
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        CHECKS[cli.check](cli, tmp)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
