"""Kiln's plan cache against LiteRT, the oracle: one kiln.Interpreter (plan
cache on, the default) resizes back and forth between input shapes, and
every run's outputs must match a fresh LiteRT interpreter (builtin kernels)
made for that shape alone."""
import os

import numpy as np
import pytest

import kiln
from test_litert_compat import MODELS, TOLERANCE, litert_available

pytestmark = pytest.mark.skipif(
    not litert_available(), reason="ai_edge_litert (the oracle) is not "
    "installed: pip install ai-edge-litert")


def model(relative):
    path = os.path.join(MODELS, relative)
    if not os.path.isfile(path):
        pytest.skip(f"corpus model absent: {path}")
    return path


def inputs_for(shapes, seed, counts=None):
    """Float inputs of `shapes`; inputs listed in `counts` (index -> value)
    are filled with that value (dynamic_shapes.bin's z: the output's rows)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for i, shape in enumerate(shapes):
        if counts and i in counts:
            arrays.append(np.full(shape, counts[i], np.float32))
        else:
            arrays.append(rng.uniform(-1, 1, shape).astype(np.float32))
    return arrays


def run(interpreter, shapes, arrays):
    for i, shape in enumerate(shapes):
        interpreter.resize_tensor_input(i, shape)
    interpreter.allocate_tensors()
    details = interpreter.get_input_details()
    for detail, array in zip(details, arrays):
        interpreter.set_tensor(detail["index"], array)
    interpreter.invoke()
    return [interpreter.get_tensor(d["index"]).copy()
            for d in interpreter.get_output_details()]


def litert(path):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    return Interpreter(model_path=path, experimental_op_resolver_type=(
        OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES))


CASES = {
    "transformer batch 1, 2": (
        "converter/transformer_block_float32.tflite",
        [[[1, 64, 128]], [[2, 64, 128]]], None),
    "dynamic_shapes y rows 90, 30": (
        "tflite-testdata/dynamic_shapes.bin",
        [[[8, 42, 1024], [1, 90, 1024], [1, 1]],
         [[8, 42, 1024], [1, 30, 1024], [1, 1]]], {2: 3.0}),
    "while over [], [3], [2, 2]": (
        "tflite-testdata/multi_subgraphs_while.bin",
        [[[]], [[3]], [[2, 2]]], None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_alternating_shapes_match_fresh_litert(case):
    relative, shape_sets, counts = CASES[case]
    path = model(relative)
    cached = kiln.Interpreter(model_path=path)
    # A, B, (C,) A, B, ...: every set returns at least once.
    order = list(range(len(shape_sets))) * 2 + [0]
    for step, which in enumerate(order):
        shapes = shape_sets[which]
        arrays = inputs_for(shapes, step, counts)
        got = run(cached, shapes, arrays)
        want = run(litert(path), shapes, arrays)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape, f"step {step}"
            np.testing.assert_allclose(g, w, rtol=TOLERANCE, atol=TOLERANCE,
                                       err_msg=f"{case}, step {step}")
