"""A script written for LiteRT's Python Interpreter, as users write them.

test_litert_compat.py runs this file unchanged under LiteRT and, with only
the import line below swapped for `from kiln.interpreter import ...`, under
Kiln, then compares what both wrote. Nothing here knows about Kiln.

usage: litert_script.py MODEL OUT_DIR [SEED]
Writes OUT_DIR/details.json (input/output/signature details) and
OUT_DIR/outputs.npz (every output of the main subgraph and of every
signature).
"""
import json
import os
import sys

import numpy as np
from ai_edge_litert.interpreter import Interpreter  # the line swapped


def make_input(detail, rng):
    shape = [int(d) if d > 0 else 1 for d in detail["shape"]]
    dtype = np.dtype(detail["dtype"])
    if np.issubdtype(dtype, np.floating):
        return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -3), min(info.max, 3) + 1,
                        size=shape).astype(dtype)


def describe(detail):
    q = detail["quantization_parameters"]
    return {
        "name": detail["name"],
        "index": int(detail["index"]),
        "shape": [int(d) for d in detail["shape"]],
        "shape_signature": [int(d) for d in detail["shape_signature"]],
        "dtype": np.dtype(detail["dtype"]).name,
        "quantization": [float(detail["quantization"][0]),
                         int(detail["quantization"][1])],
        "scales": [float(s) for s in q["scales"]],
        "zero_points": [int(z) for z in q["zero_points"]],
        "quantized_dimension": int(q["quantized_dimension"]),
        "keys": sorted(detail.keys()),
    }


def main():
    model, out_dir = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(int(sys.argv[3]) if len(sys.argv) > 3 else 7)
    os.makedirs(out_dir, exist_ok=True)
    interpreter = Interpreter(model_path=model)
    interpreter.allocate_tensors()
    inputs = interpreter.get_input_details()
    values = [make_input(d, rng) for d in inputs]
    for detail, value in zip(inputs, values):
        if list(value.shape) != list(detail["shape"]):
            interpreter.resize_tensor_input(detail["index"], value.shape)
    interpreter.allocate_tensors()
    for detail, value in zip(inputs, values):
        interpreter.set_tensor(detail["index"], value)
    interpreter.invoke()
    outputs = {}
    for i, detail in enumerate(interpreter.get_output_details()):
        outputs[f"main/{i}"] = interpreter.get_tensor(detail["index"])
    # Views of the output memory agree with copies.
    for i, detail in enumerate(interpreter.get_output_details()):
        view = interpreter.tensor(detail["index"])()
        assert np.array_equal(view, outputs[f"main/{i}"]), "tensor() view"

    signatures = interpreter.get_signature_list()
    for key in sorted(signatures):
        runner = interpreter.get_signature_runner(key)
        details = runner.get_input_details()
        result = runner(**{name: make_input(d, rng)
                           for name, d in sorted(details.items())})
        for name, value in sorted(result.items()):
            outputs[f"{key}/{name}"] = value

    with open(os.path.join(out_dir, "details.json"), "w") as f:
        json.dump({
            "inputs": [describe(d) for d in inputs],
            "outputs": [describe(d) for d in interpreter.get_output_details()],
            "signatures": signatures,
        }, f, indent=1)
    np.savez(os.path.join(out_dir, "outputs.npz"), **outputs)


if __name__ == "__main__":
    main()
