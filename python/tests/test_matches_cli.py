"""kiln.Interpreter runs every corpus model the `kiln` CLI runs, with
identical outputs: the same seeded inputs go through `kiln run` (KILN_CLI)
and through the installed Python package; a model one refuses the other must
refuse too. (Both are Kiln: this checks the binding, not the numerics; the
LiteRT oracle is test_litert_compat.py and the differential test.)"""
import json
import os
import subprocess

import numpy as np
import pytest

import kiln

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.environ.get("KILN_SHARED_MODELS_DIR",
                        os.path.join(HERE, "..", "..", "..", "shared",
                                     "models"))
CLI = os.environ.get("KILN_CLI", "")


def corpus():
    if not os.path.isdir(MODELS):
        return []
    found = []
    for root, _, files in os.walk(MODELS):
        found += [os.path.join(root, f) for f in files
                  if f.endswith((".tflite", ".bin"))]
    return sorted(found)


def make_input(detail, rng):
    dtype = np.dtype(detail["dtype"])
    shape = [int(d) for d in detail["shape"]]
    if np.issubdtype(dtype, np.floating):
        return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 3, size=shape).astype(dtype)
    return None


def run_python(path, rng):
    """(inputs, outputs) or (inputs, error message)."""
    try:
        interpreter = kiln.Interpreter(model_path=path)
        interpreter.allocate_tensors()
        inputs = [make_input(d, rng) for d in interpreter.get_input_details()]
        if any(v is None for v in inputs):
            return None, "string inputs are not generated"
        for d, v in zip(interpreter.get_input_details(), inputs):
            interpreter.set_tensor(d["index"], v)
        interpreter.invoke()
        return inputs, [interpreter.get_tensor(d["index"])
                        for d in interpreter.get_output_details()]
    except (ValueError, RuntimeError) as e:
        return None, str(e)


def run_cli(path, inputs, workdir):
    args = [CLI, "run", path, "--output-dir", str(workdir / "out")]
    for i, value in enumerate(inputs):
        np.save(workdir / f"in{i}.npy", value)
        args += ["--input", f"{i}={workdir / f'in{i}.npy'}"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        return None, proc.stderr.strip() or proc.stdout.strip()
    with open(workdir / "out" / "outputs.json") as f:
        manifest = json.load(f)
    return [np.load(workdir / "out" / o["file"])
            for o in manifest["outputs"]], None


@pytest.mark.skipif(not CLI or not os.path.exists(CLI),
                    reason="KILN_CLI (the kiln executable) is not set")
@pytest.mark.parametrize("path", corpus() or [pytest.param(
    None, marks=pytest.mark.skip(reason=f"corpus absent: {MODELS}"))])
def test_python_matches_cli(tmp_path, path):
    inputs, outputs = run_python(path, np.random.default_rng(11))
    if inputs is None and outputs.startswith("string inputs"):
        pytest.skip(outputs)
    if inputs is None:
        # Refused in Python: the CLI (with random inputs) refuses too.
        proc = subprocess.run([CLI, "run", path, "--input", "random",
                               "--output-dir", str(tmp_path / "out")],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode != 0, (
            f"Python refused {path} ({outputs}) but the CLI ran it")
        return
    got, error = run_cli(path, inputs, tmp_path)
    assert error is None, f"the CLI refused {path}: {error}"
    assert len(got) == len(outputs)
    for g, want in zip(got, outputs):
        assert g.dtype == want.dtype and g.shape == want.shape
        np.testing.assert_array_equal(g, want)
