#!/usr/bin/env python3
"""Blockwise-quantized FULLY_CONNECTED weights as ai-edge-quantizer writes
them: what LiteRT does with them, and that Kiln refuses them cleanly.

Test-time tool (never a runtime dependency). It writes a float32
FULLY_CONNECTED model (input [2, 64], weights [16, 64], bias [16]) with
litert_single_op.py and quantizes it with ai-edge-quantizer's
`dynamic_wi4b32_afp32` recipe (4-bit weights in blocks of 32 along the input
dimension, float activations). The quantizer writes:

- the weights as INT4 [16, 64], two values a byte, low nibble first;
- their QuantizationParameters with no scale or zero point, but details
  BlockwiseQuantization {scales: index of a constant FLOAT16 tensor [16, 2]
  (one scale per output row and block, rounded through bfloat16),
  zeroPoints: -1 (symmetric), blockSize: 32};
- FULLY_CONNECTED still at version 1.
(Its 8-bit blockwise recipe leaves FULLY_CONNECTED float.)

LiteRT 2.3 runs the model two ways: its optimized kernel (EvalBlockwise4Bit)
quantizes each input row to int8 asymmetrically, sums int4 x int8 products
per block, scales each block sum by the block's scale, subtracts the input
zero point times the scaled weight sums, multiplies by the row's input
scale and adds the bias (no fused activation is applied). Its reference
kernel ignores the blockwise scales and returns the bias alone. This test
checks both (the first against a NumPy dequantized product within the int8
input quantization's error) and that `kiln run` refuses the model with a
message naming the INT4 weights, which is what Kiln does until it
implements blockwise weights (docs/quantization.md says what that needs).

  blockwise_fc_litert_test.py --kiln PATH/kiln [--kiln-arg ARG ...]
      [--keep DIR]

Exit status: 0 pass, 1 fail, 77 (Skipped) when ai_edge_litert or
ai_edge_quantizer is absent.
"""
import argparse
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from ai_edge_litert import schema_py_generated as schema
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    from ai_edge_quantizer import quantizer, recipe
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import litert_single_op as lso
except ImportError as e:
    print(f"SKIPPED: {e}; pip install ai-edge-litert ai-edge-quantizer "
          "numpy flatbuffers")
    sys.exit(77)


def write_models(folder):
    """Writes fc_float.tflite and fc_wi4b32.tflite; returns their paths."""
    rng = np.random.default_rng(0)
    weights = rng.standard_normal((16, 64)).astype(np.float32)
    bias = rng.standard_normal(16).astype(np.float32)
    float_path = os.path.join(folder, "fc_float.tflite")
    with open(float_path, "wb") as f:
        f.write(lso.build_model(
            schema.BuiltinOperator.FULLY_CONNECTED, 1,
            [lso.T("float32", [2, 64]),
             lso.T("float32", [16, 64], data=weights),
             lso.T("float32", [16], data=bias)],
            [lso.T("float32", [2, 16])],
            schema.BuiltinOptions.FullyConnectedOptions,
            schema.FullyConnectedOptionsT()))
    qt = quantizer.Quantizer(float_path)
    qt.load_quantization_recipe(recipe.dynamic_wi4b32_afp32())
    quant_path = os.path.join(folder, "fc_wi4b32.tflite")
    qt.quantize().export_model(quant_path, overwrite=True)
    return float_path, quant_path


def blockwise_weights(path):
    """(dequantized weights [16, 64], bias, the schema facts) of the model."""
    buf = open(path, "rb").read()
    model = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(buf, 0))
    graph = model.subgraphs[0]
    node = graph.operators[0]
    w = graph.tensors[node.inputs[1]]
    q = w.quantization
    details = q.details
    facts = {
        "weights_type": w.type,
        "details_type": q.detailsType,
        "block_size": details.blockSize,
        "zero_points": details.zeroPoints,
        "scale_field": q.scale,
        "fc_version": model.operatorCodes[node.opcodeIndex].version,
    }
    scales_t = graph.tensors[details.scales]
    facts["scales_type"] = scales_t.type
    scales = np.frombuffer(bytes(model.buffers[scales_t.buffer].data),
                           np.float16).astype(np.float32)
    scales = scales.reshape(list(scales_t.shape))
    packed = np.frombuffer(bytes(model.buffers[w.buffer].data), np.uint8)
    codes = np.empty(packed.size * 2, np.int8)
    codes[0::2] = (packed & 0xF).astype(np.int8)
    codes[1::2] = (packed >> 4).astype(np.int8)
    codes = ((codes ^ 8) - 8).reshape(list(w.shape))
    rows, cols = codes.shape
    block = details.blockSize
    deq = (codes.reshape(rows, cols // block, block) *
           scales[:, :, None]).reshape(rows, cols)
    bias_t = graph.tensors[node.inputs[2]]
    bias = np.frombuffer(bytes(model.buffers[bias_t.buffer].data), np.float32)
    return deq, bias, facts


def run_litert(path, resolver, x):
    it = Interpreter(model_path=path,
                     experimental_op_resolver_type=getattr(OpResolverType,
                                                           resolver))
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return it.get_tensor(it.get_output_details()[0]["index"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--kiln-arg", action="append", default=[])
    ap.add_argument("--keep", help="write the models here and keep them")
    args = ap.parse_args()
    failures = []
    with tempfile.TemporaryDirectory(prefix="kiln-blockwise-") as tmp:
        folder = args.keep or tmp
        os.makedirs(folder, exist_ok=True)
        _, path = write_models(folder)
        deq, bias, facts = blockwise_weights(path)
        expected_facts = {
            "weights_type": schema.TensorType.INT4,
            "details_type": schema.QuantizationDetails.BlockwiseQuantization,
            "block_size": 32, "zero_points": -1, "scale_field": None,
            "fc_version": 1, "scales_type": schema.TensorType.FLOAT16}
        if facts != expected_facts:
            failures.append(f"the quantizer wrote {facts}, expected "
                            f"{expected_facts} (update this test and "
                            "docs/quantization.md)")
        x = np.random.default_rng(1).standard_normal((2, 64)).astype(
            np.float32)
        exact = x @ deq.T + bias
        optimized = run_litert(path, "BUILTIN_WITHOUT_DEFAULT_DELEGATES", x)
        # int8 input quantization: each product is off by at most half an
        # input step times |w|; the sum by that times sum |w| per row.
        step = (x.max(axis=1) - np.minimum(x.min(axis=1), 0)) / 255
        bound = (step[:, None] / 2) * np.abs(deq).sum(axis=1)[None, :] + 1e-5
        if not np.all(np.abs(optimized - exact) <= bound):
            failures.append("LiteRT's optimized kernel no longer computes "
                            "the blockwise product: "
                            f"{optimized[0, :4]} vs {exact[0, :4]}")
        reference = run_litert(path, "BUILTIN_REF", x)
        if not np.array_equal(reference, np.broadcast_to(bias, (2, 16))):
            failures.append("LiteRT's reference kernel no longer returns the "
                            "bias alone: revisit docs/quantization.md")
        np.save(os.path.join(folder, "x.npy"), x)
        proc = subprocess.run(
            [args.kiln, "run", path, "--input", f"0={folder}/x.npy",
             "--output-dir", os.path.join(folder, "kiln_out")] +
            args.kiln_arg, capture_output=True, text=True, timeout=120)
        message = (proc.stderr + proc.stdout).strip()
        if proc.returncode == 0:
            failures.append("Kiln ran the blockwise model: compare it with "
                            "LiteRT's optimized kernel and update this test")
        elif proc.returncode < 0 or "INT4" not in message:
            failures.append(f"Kiln did not refuse cleanly (exit "
                            f"{proc.returncode}): {message[-300:]}")
        else:
            print(f"Kiln refuses it: {message.splitlines()[-1]}")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print("PASS: quantizer format, LiteRT behaviour and Kiln's refusal "
              "as documented")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
