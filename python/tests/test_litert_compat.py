"""A script written for ai_edge_litert's Interpreter runs unchanged against
kiln.Interpreter: litert_script.py runs once as written (LiteRT, the oracle)
and once with its import line swapped for kiln's, each in its own process;
the detail dictionaries and the outputs must agree."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.environ.get("KILN_SHARED_MODELS_DIR",
                        os.path.join(HERE, "..", "..", "..", "shared",
                                     "models"))
LITERT_IMPORT = "from ai_edge_litert.interpreter import Interpreter"
KILN_IMPORT = "from kiln.interpreter import Interpreter"

# Corpus models whose every op and type Kiln runs (float32, per-tensor and
# per-channel int8, dynamic shapes, signatures, control flow).
MODELS_COMPARED = [
    "misc/add_10x10.tflite",
    "misc/mobilenet_like_model.bin",
    "misc/multi_signature_model.tflite",
    "misc/pc_conv.bin",
    "quantization-testdata/fc_qat.bin",
    "tflite-testdata/multi_subgraphs_while.bin",
    "quantization-testdata/gather_nd.bin",
    "converter/mobilenet_v2_float32.tflite",
]
# Same bound as tools/kiln/tests/differential_test.py for float outputs.
TOLERANCE = 1e-5
# Models whose outputs may differ from LiteRT's by one quantization step,
# with the reason. The script uses LiteRT's default op resolver, whose
# XNNPACK int8 kernels round some values differently from TFLite's
# reference kernels; Kiln matches the reference kernels exactly (the
# differential test compares with BUILTIN_REF).
ONE_STEP = {
    # (bound, reason): the int8 output's scale is 0.0047536.
    "misc/pc_conv.bin": (0.0048, "XNNPACK int8 depthwise conv rounding"),
}


def litert_available():
    try:
        import ai_edge_litert.interpreter  # noqa: F401
        return True
    except ImportError:
        return False


pytestmark = pytest.mark.skipif(
    not litert_available(), reason="ai_edge_litert (the oracle) is not "
    "installed: pip install ai-edge-litert")


def run_script(tmp_path, model, runtime):
    source = open(os.path.join(HERE, "litert_script.py")).read()
    assert LITERT_IMPORT in source
    if runtime == "kiln":
        source = source.replace(LITERT_IMPORT, KILN_IMPORT)
    script = tmp_path / f"script_{runtime}.py"
    script.write_text(source)
    out = tmp_path / runtime
    proc = subprocess.run([sys.executable, str(script), model, str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (
        f"the LiteRT script failed under {runtime} on {model}:\n"
        f"{proc.stdout}\n{proc.stderr}")
    with open(out / "details.json") as f:
        details = json.load(f)
    with np.load(out / "outputs.npz") as npz:
        outputs = {k: npz[k] for k in npz.files}
    return details, outputs


@pytest.mark.parametrize("relative", MODELS_COMPARED)
def test_litert_script_runs_unchanged(tmp_path, relative):
    model = os.path.join(MODELS, relative)
    if not os.path.isfile(model):
        pytest.skip(f"corpus model absent: {model}")
    want_details, want = run_script(tmp_path, model, "litert")
    got_details, got = run_script(tmp_path, model, "kiln")
    assert got_details["signatures"] == want_details["signatures"]
    for kind in ("inputs", "outputs"):
        assert len(got_details[kind]) == len(want_details[kind]), kind
        for g, w in zip(got_details[kind], want_details[kind]):
            assert g.pop("scales") == pytest.approx(w.pop("scales"))
            assert g.pop("quantization") == pytest.approx(
                w.pop("quantization"))
            assert g == w, f"{kind} detail differs"
    assert sorted(got) == sorted(want)
    atol = ONE_STEP.get(relative, (TOLERANCE, ""))[0]
    for name, w in want.items():
        g = got[name]
        assert g.dtype == w.dtype and g.shape == w.shape, name
        if np.issubdtype(w.dtype, np.floating):
            np.testing.assert_allclose(g, w, rtol=TOLERANCE, atol=atol,
                                       err_msg=name)
        else:
            np.testing.assert_array_equal(g, w, err_msg=name)
