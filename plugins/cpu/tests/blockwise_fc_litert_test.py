#!/usr/bin/env python3
"""Blockwise-quantized FULLY_CONNECTED weights as ai-edge-quantizer writes
them: Kiln against LiteRT's optimized kernel, and what LiteRT does with them.

Test-time tool (never a runtime dependency). For each case it writes a
float32 FULLY_CONNECTED model with litert_single_op.py and quantizes it with
ai-edge-quantizer's `dynamic_wi4b32_afp32` (or `dynamic_wi4b64_afp32`)
recipe: 4-bit weights in blocks of 32 (64) along the input dimension, float
activations. The quantizer writes:

- the weights as INT4 [units, depth], two values a byte, low nibble first;
- their QuantizationParameters with no scale or zero point, but details
  BlockwiseQuantization {scales: index of a constant FLOAT16 tensor
  [units, depth / block] (one scale per output row and block, rounded
  through bfloat16), zeroPoints: -1 (symmetric), blockSize: 32 or 64};
- FULLY_CONNECTED still at version 1.
(Its 8-bit blockwise recipe leaves FULLY_CONNECTED float.)

LiteRT 2.3 runs the model two ways: its optimized kernel (EvalBlockwise4Bit,
taken when units >= 4, depth >= 32 and depth is even) quantizes each input
row to int8 asymmetrically, sums int4 x int8 products per block, scales each
block sum by the block's scale, subtracts the input zero point times the
scaled weight sums, multiplies by the row's input scale and adds the bias; it
applies no fused activation. Its reference kernel ignores the blockwise
scales and returns the bias alone.

Checks, per case (batch > 1, several blocks, depth / block not a power of
two, with and without bias, a rank-3 input with keep_num_dims, an all-zero
input row):
- the quantizer's format is as above;
- LiteRT's optimized kernel agrees with a NumPy float product of the
  dequantized weights within the int8 input quantization's error (the second
  oracle), and its reference kernel returns the bias alone;
- `kiln run` agrees with LiteRT's optimized kernel bit for bit: Kiln
  reproduces the integer pipeline (same int8 input quantization, exact int32
  block sums) and the float steps in LiteRT's order (block sums times scales
  accumulated in block order, then the zero-point term, the input scale, the
  bias), so the tolerance is 0; a difference would mean a different rounding
  (e.g. a fused multiply-add in one build), at most a few float32 ulps of
  the terms' magnitude, and is reported with its size;
- with a fused RELU, LiteRT still applies none, and Kiln refuses the node
  naming the activation (it agrees neither with LiteRT nor with the model
  otherwise).

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

# name, input shape, units, block (recipe), bias, keep_num_dims, activation
CASES = [
    ("b2_u16_d64_blk32", [2, 64], 16, 32, True, False, "NONE"),
    ("b5_u24_d128_blk32_zero_row", [5, 128], 24, 32, True, False, "NONE"),
    ("b3_u8_d96_blk32_no_bias", [3, 96], 8, 32, False, False, "NONE"),
    ("b4_u12_d192_blk64", [4, 192], 12, 64, True, False, "NONE"),
    ("rank3_keep_num_dims", [2, 3, 160], 20, 32, True, True, "NONE"),
    ("b1_u64_d256_blk64", [1, 256], 64, 64, True, False, "NONE"),
]
RELU_CASE = ("b2_u16_d64_blk32_relu", [2, 64], 16, 32, True, False, "RELU")
ACTIVATIONS = {"NONE": schema.ActivationFunctionType.NONE,
               "RELU": schema.ActivationFunctionType.RELU}


def write_models(folder, case, seed):
    """Writes <name>_float.tflite and <name>.tflite; returns the latter."""
    name, in_shape, units, block, has_bias, keep, act = case
    depth = in_shape[-1]
    rng = np.random.default_rng(seed)
    weights = rng.standard_normal((units, depth)).astype(np.float32)
    inputs = [lso.T("float32", in_shape),
              lso.T("float32", [units, depth], data=weights)]
    if has_bias:
        inputs.append(lso.T("float32", [units],
                            data=rng.standard_normal(units).astype(
                                np.float32)))
    out_shape = (in_shape[:-1] + [units] if keep else
                 [int(np.prod(in_shape[:-1])), units])
    options = schema.FullyConnectedOptionsT()
    options.keepNumDims = keep
    options.fusedActivationFunction = ACTIVATIONS[act]
    float_path = os.path.join(folder, f"{name}_float.tflite")
    with open(float_path, "wb") as f:
        f.write(lso.build_model(
            schema.BuiltinOperator.FULLY_CONNECTED, 1, inputs,
            [lso.T("float32", out_shape)],
            schema.BuiltinOptions.FullyConnectedOptions, options))
    qt = quantizer.Quantizer(float_path)
    qt.load_quantization_recipe(
        recipe.dynamic_wi4b32_afp32() if block == 32 else
        recipe.dynamic_wi4b64_afp32())
    quant_path = os.path.join(folder, f"{name}.tflite")
    qt.quantize().export_model(quant_path, overwrite=True)
    return quant_path


def blockwise_weights(path):
    """(dequantized weights [units, depth], bias or zeros, schema facts)."""
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
    bias = np.zeros(rows, np.float32)
    if len(node.inputs) > 2 and node.inputs[2] >= 0:
        bias_t = graph.tensors[node.inputs[2]]
        bias = np.frombuffer(bytes(model.buffers[bias_t.buffer].data),
                             np.float32)
    return deq, bias, facts


def run_litert(path, resolver, x):
    it = Interpreter(model_path=path,
                     experimental_op_resolver_type=getattr(OpResolverType,
                                                           resolver))
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return it.get_tensor(it.get_output_details()[0]["index"])


def run_kiln(args, path, x, folder, name):
    x_path = os.path.join(folder, f"{name}_x.npy")
    np.save(x_path, x)
    out_dir = os.path.join(folder, f"{name}_kiln_out")
    proc = subprocess.run(
        [args.kiln, "run", path, "--input", f"0={x_path}", "--output-dir",
         out_dir] + args.kiln_arg, capture_output=True, text=True,
        timeout=120)
    message = (proc.stderr + proc.stdout).strip()
    if proc.returncode != 0:
        return None, proc.returncode, message
    outputs = sorted(f for f in os.listdir(out_dir) if f.endswith(".npy"))
    return np.load(os.path.join(out_dir, outputs[0])), 0, message


def check_litert(case, path, x, failures):
    """LiteRT's two kernels as documented; returns the optimized output."""
    name, in_shape, _, block, _, _, _ = case
    deq, bias, facts = blockwise_weights(path)
    expected_facts = {
        "weights_type": schema.TensorType.INT4,
        "details_type": schema.QuantizationDetails.BlockwiseQuantization,
        "block_size": block, "zero_points": -1, "scale_field": None,
        "fc_version": 1, "scales_type": schema.TensorType.FLOAT16}
    if facts != expected_facts:
        failures.append(f"{name}: the quantizer wrote {facts}, expected "
                        f"{expected_facts} (update this test and "
                        "docs/quantization.md)")
    rows = x.reshape(-1, in_shape[-1])
    exact = rows @ deq.T + bias
    optimized = run_litert(path, "BUILTIN_WITHOUT_DEFAULT_DELEGATES", x)
    # int8 input quantization: each product is off by at most half an input
    # step times |w|; the sum by that times sum |w| per row.
    step = (np.maximum(rows.max(axis=1), 0) -
            np.minimum(rows.min(axis=1), 0)) / 255
    bound = (step[:, None] / 2) * np.abs(deq).sum(axis=1)[None, :] + 1e-5
    flat = optimized.reshape(exact.shape)
    if not np.all(np.abs(flat - exact) <= bound):
        failures.append(f"{name}: LiteRT's optimized kernel no longer "
                        "computes the blockwise product: "
                        f"{flat[0, :4]} vs {exact[0, :4]}")
    reference = run_litert(path, "BUILTIN_REF", x)
    # (with the fused activation, which the reference kernel does apply)
    alone = bias if case[6] == "NONE" else np.maximum(bias, 0)
    if not np.array_equal(reference.reshape(exact.shape),
                          np.broadcast_to(alone, exact.shape)):
        failures.append(f"{name}: LiteRT's reference kernel no longer "
                        "returns the bias alone: revisit "
                        "docs/quantization.md")
    return optimized, exact


def check_inspect(args, path, failures):
    """`kiln inspect` names the blockwise quantization on the weights' line."""
    proc = subprocess.run([args.kiln, "inspect", path] + args.kiln_arg,
                          capture_output=True, text=True, timeout=120)
    lines = [line for line in proc.stdout.splitlines()
             if "int4 [16,64] const blockwise-quantized (32 blocks of 32)"
             in line]
    if proc.returncode != 0 or not lines:
        failures.append("kiln inspect does not show the weights as "
                        "'int4 [16,64] const blockwise-quantized (32 blocks "
                        "of 32)': "
                        f"{(proc.stdout + proc.stderr)[-400:]}")
    else:
        print(f"kiln inspect: {lines[0].strip()}")


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
        for seed, case in enumerate(CASES):
            name, in_shape = case[0], case[1]
            path = write_models(folder, case, seed)
            x = np.random.default_rng(100 + seed).standard_normal(
                in_shape).astype(np.float32)
            if "zero_row" in name:
                x[1] = 0
            optimized, exact = check_litert(case, path, x, failures)
            got, rc, message = run_kiln(args, path, x, folder, name)
            if got is None:
                failures.append(f"{name}: kiln run failed (exit {rc}): "
                                f"{message[-400:]}")
                continue
            if seed == 0:
                check_inspect(args, path, failures)
            if got.shape != optimized.shape:
                failures.append(f"{name}: Kiln's output has shape "
                                f"{got.shape}, LiteRT's {optimized.shape}")
                continue
            diff = np.abs(got.astype(np.float64) - optimized)
            scale = np.abs(exact).max()
            print(f"{name}: max |Kiln - LiteRT optimized| = {diff.max():.3g} "
                  f"({int((diff > 0).sum())} of {diff.size} differ; "
                  f"outputs up to {scale:.3g}); max |Kiln - NumPy "
                  f"dequantized| = "
                  f"{np.abs(got.reshape(exact.shape) - exact).max():.3g}")
            if diff.max() > 0:
                failures.append(f"{name}: Kiln differs from LiteRT's "
                                f"optimized kernel by up to {diff.max():.3g}")
        # A fused activation: LiteRT ignores it, Kiln refuses the node.
        path = write_models(folder, RELU_CASE, 99)
        x = np.random.default_rng(199).standard_normal(
            RELU_CASE[1]).astype(np.float32)
        optimized, exact = check_litert(RELU_CASE, path, x, failures)
        if not (optimized < 0).any():
            failures.append("LiteRT's blockwise kernel now applies the fused "
                            "RELU: let Kiln run it (blockwise_fully_"
                            "connected.cc) and update this test")
        got, rc, message = run_kiln(args, path, x, folder, RELU_CASE[0])
        if got is not None or "fused activation RELU" not in message:
            failures.append("Kiln did not refuse the blockwise node with a "
                            f"fused RELU by name (exit {rc}): "
                            f"{message[-300:]}")
        else:
            print(f"{RELU_CASE[0]}: Kiln refuses it: "
                  f"{message.splitlines()[-1]}")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"PASS: {len(CASES)} blockwise models bit-identical to LiteRT's "
              "optimized kernel; quantizer format, LiteRT behaviour and the "
              "fused-activation refusal as documented")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
