#!/usr/bin/env python3
"""Quantized elementwise and data-movement kernels versus LiteRT, op by op.

Writes single-operator models (litert_single_op.py) for every quantized
flavour of the elementwise and data-movement ops the CPU plugin implements
(int8, uint8, int16), with seeded random scales, zero points, shapes,
broadcasts and fused activations, then runs tools/kiln/tests/
differential_test.py on that folder: LiteRT's reference kernels are the
oracle, inputs cover every code of their type, every output (integer and
float alike) must match bit for bit (--float-tolerance 0) and no refusal is
excused (--no-allow-lists).

  quantized_ops_litert_test.py --kiln PATH/kiln [--kiln-arg ARG ...]
      [--keep DIR] [--only REGEX] [--seed N]

Exit status: the differential test's (0 pass, 1 fail, 77 Skipped when
ai_edge_litert is absent).
"""
import os
import sys

try:
    import numpy as np
    from ai_edge_litert import schema_py_generated as schema
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import litert_single_op as lso
except ImportError as e:  # The oracle's Python packages are missing.
    print(f"SKIPPED: cannot build test models ({e}); pip install "
          "ai-edge-litert numpy flatbuffers")
    sys.exit(77)


QMIN = {"int8": -128, "uint8": 0, "int16": -32768}
QMAX = {"int8": 127, "uint8": 255, "int16": 32767}
ACTIVATIONS = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}


# ---- Quantization parameters ------------------------------------------------

def random_quant(rng, dtype, lo_scale=0.004, hi_scale=0.1):
    """A random affine quantization; int16 is symmetric (zero point 0)."""
    scale = float(np.exp(rng.uniform(np.log(lo_scale), np.log(hi_scale))))
    if dtype == "int16":
        return (scale / 128, 0)
    span = QMAX[dtype] - QMIN[dtype]
    zero_point = int(rng.integers(QMIN[dtype] + span // 4,
                                  QMAX[dtype] - span // 4 + 1))
    return (scale, zero_point)


def real_range(dtype, quant):
    scale, zero_point = quant
    return (scale * (QMIN[dtype] - zero_point),
            scale * (QMAX[dtype] - zero_point))


def fit_quant(rng, dtype, lo, hi):
    """Quantization whose range covers [lo, hi] give or take a random
    quarter (so some cases saturate)."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    factor = float(rng.uniform(0.75, 1.25))
    if dtype == "int16":
        return (max(abs(lo), abs(hi), 1e-6) * factor / QMAX[dtype], 0)
    scale = max(hi - lo, 1e-6) * factor / (QMAX[dtype] - QMIN[dtype])
    zero_point = int(np.clip(round(QMIN[dtype] - lo / scale), QMIN[dtype],
                             QMAX[dtype]))
    return (scale, zero_point)


def corners(fn, range_a, range_b):
    values = [fn(a, b) for a in range_a for b in range_b]
    return min(values), max(values)


# ---- Cases -------------------------------------------------------------------

def Tensor(name, dtype, shape, quant=None, data=None):
    """A tensor of a single-op model; `quant` is (scale, zero point) or
    per-channel ([scales], [zero points], axis). Tensor names are assigned
    by the builder; `name` documents the role."""
    del name
    if quant is None:
        return lso.T(dtype, shape, data=data)
    if len(quant) == 3:
        return lso.T(dtype, shape, data=data, scale=list(quant[0]),
                     zero_point=list(quant[1]), axis=quant[2])
    return lso.T(dtype, shape, data=data, scale=quant[0],
                 zero_point=quant[1])


def build_model(op, version, inputs, outputs, options=None):
    """`options`: (builtin options table name, {field: value}) or None."""
    options_type, table = 0, None
    if options is not None:
        name, fields = options
        options_type = getattr(schema.BuiltinOptions, name)
        table = getattr(schema, name + "T")()
        for key, value in fields.items():
            if not hasattr(table, key):
                raise ValueError(f"{name} has no field {key}")
            setattr(table, key, value)
    return lso.build_model(getattr(schema.BuiltinOperator, op), version,
                           inputs, outputs, options_type, table)


class Cases:
    """Collects (file name, model bytes)."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.models = []

    def add(self, name, op, version, inputs, outputs, options=None):
        self.models.append((f"{name}.tflite",
                            build_model(op, version, inputs, outputs, options)))


BINARY_SHAPES = [([2, 3, 4], [2, 3, 4]), ([2, 3, 4], [4]),
                 ([2, 1, 4], [1, 3, 1]), ([3, 1], [1, 1, 2, 1, 5])]

# Rows long enough for the vectorized 8-bit kernels, with tails: same shape,
# a per-row scalar (a transformer's [1, 64, 128] against [1, 64, 1]), a row
# against a column and a whole-tensor scalar on either side.
VECTOR_ROW_SHAPES = [([3, 5, 37], [3, 5, 37]), ([1, 9, 131], [1, 9, 1]),
                     ([1, 7, 1], [1, 1, 69]), ([2, 45], [1]),
                     ([1], [3, 29])]

# op -> (versions by dtype, options table, real function, activations?)
BINARY_OPS = {
    "ADD": ({"uint8": 1, "int8": 2, "int16": 3}, "AddOptions",
            lambda a, b: a + b, True),
    "SUB": ({"uint8": 1, "int8": 2, "int16": 5}, "SubOptions",
            lambda a, b: a - b, True),
    "MUL": ({"uint8": 1, "int8": 2, "int16": 4}, "MulOptions",
            lambda a, b: a * b, True),
    "SQUARED_DIFFERENCE": ({"int8": 2}, None, lambda a, b: (a - b) ** 2,
                           False),
}


def binary_cases(cases, shapes=None, dtypes=None, prefix=""):
    rng = cases.rng
    for op, (versions, options, fn, fused) in BINARY_OPS.items():
        for dtype, version in versions.items():
            if dtypes is not None and dtype not in dtypes:
                continue
            for i, (shape_a, shape_b) in enumerate(shapes or BINARY_SHAPES):
                qa, qb = random_quant(rng, dtype), random_quant(rng, dtype)
                lo, hi = corners(fn, real_range(dtype, qa),
                                 real_range(dtype, qb))
                qo = fit_quant(rng, dtype, lo, hi)
                out_shape = list(np.broadcast_shapes(shape_a, shape_b))
                act = list(ACTIVATIONS)[i % 4] if fused else "NONE"
                fields = {}
                if fused:
                    fields["fusedActivationFunction"] = ACTIVATIONS[act]
                if op in ("ADD", "SUB") and dtype == "int16":
                    fields["potScaleInt16"] = False
                cases.add(f"{op.lower()}_{dtype}_{prefix}{i}_{act.lower()}",
                          op, version,
                          [Tensor("a", dtype, shape_a, qa),
                           Tensor("b", dtype, shape_b, qb)],
                          [Tensor("y", dtype, out_shape, qo)],
                          (options, fields) if options else None)


def vector_row_binary_cases(cases):
    """8-bit ADD, SUB, MUL and SQUARED_DIFFERENCE on rows the vectorized
    kernels take (quantized_binary_avx2.cc), tails included."""
    binary_cases(cases, VECTOR_ROW_SHAPES, ("int8", "uint8"), "rows")


def div_cases(cases):
    """Quantized DIV over constant operands: every 8-bit dividend code
    against every divisor code but the divisor's zero point (a real 0,
    which LiteRT refuses); int16 over a spread of codes. Random scales,
    some far apart, with each clamp activation."""
    rng = cases.rng
    for dtype in ("uint8", "int8", "int16"):
        if dtype == "int16":
            a = np.unique(np.concatenate([
                np.arange(-40, 41), rng.integers(-32768, 32768, 200),
                [-32768, 32767]])).astype(np.int16)
        else:
            a = np.arange(QMIN[dtype], QMAX[dtype] + 1).astype(dtype)
        for i, act in enumerate(ACTIVATIONS):
            qa = random_quant(rng, dtype, 0.001, 1.0)
            qb = random_quant(rng, dtype, 0.001, 1.0)
            b = a[a != qb[1]]
            qo = random_quant(rng, dtype, 0.001, 1.0)
            cases.add(f"div_{dtype}_{i}_{act.lower()}", "DIV", 1,
                      [Tensor("a", dtype, [a.size, 1], qa,
                              data=a.reshape(-1, 1)),
                       Tensor("b", dtype, [1, b.size], qb,
                              data=b.reshape(1, -1))],
                      [Tensor("y", dtype, [a.size, b.size], qo)],
                      ("DivOptions",
                       {"fusedActivationFunction": ACTIVATIONS[act]}))


def pot_int16_cases(cases):
    """int16 ADD/SUB with power-of-two scales and pot_scale_int16 (the
    LSTM-style path: one input shifted to the output's scale)."""
    for op in ("ADD", "SUB"):
        for i, (ea, eb) in enumerate([(-12, -10), (-10, -10), (-10, -13)]):
            eo = max(ea, eb)
            shape_b = [2, 3, 4] if op == "ADD" else [3, 1]  # SUB broadcasts
            cases.add(f"{op.lower()}_int16_pot_{i}", op, 1,
                      [Tensor("a", "int16", [2, 3, 4], (2.0 ** ea, 0)),
                       Tensor("b", "int16", shape_b, (2.0 ** eb, 0))],
                      [Tensor("y", "int16", [2, 3, 4], (2.0 ** eo, 0))],
                      (op[0] + op[1:].lower() + "Options",
                       {"potScaleInt16": True,
                        "fusedActivationFunction": i % 2}))


def declared_output_type_cases(cases):
    """ADD, SUB, DIV and SQUARED_DIFFERENCE whose output the model declares
    with another type (FLOAT32 for quantized inputs, as in
    tflite-testdata/add_quantized.bin; INT32 for float inputs): LiteRT's
    prepare gives the output input 1's type, and so does Kiln."""
    rng = cases.rng
    ops = [("ADD", "uint8", 1, "AddOptions"), ("ADD", "int8", 2, "AddOptions"),
           ("ADD", "int16", 3, "AddOptions"), ("SUB", "int8", 2, "SubOptions"),
           ("DIV", "int8", 1, "DivOptions"),
           ("SQUARED_DIFFERENCE", "int8", 2, None)]
    for op, dtype, version, options in ops:
        qa, qb = random_quant(rng, dtype), random_quant(rng, dtype)
        qo = random_quant(rng, dtype, 0.05, 0.2)
        data = None
        if op == "DIV":  # constant divisor without its zero point
            codes = np.arange(QMIN[dtype], QMAX[dtype] + 1)
            data = rng.choice(codes[codes != qb[1]], 4).astype(dtype)
        fields = {"potScaleInt16": False} if dtype == "int16" else {}
        cases.add(f"{op.lower()}_{dtype}_declared_float32_output", op,
                  version,
                  [Tensor("a", dtype, [2, 3, 4], qa),
                   Tensor("b", dtype, [4], qb, data=data)],
                  [Tensor("y", "float32", [2, 3, 4], qo)],
                  (options, fields) if options else None)
    cases.add("add_float32_declared_int32_output", "ADD", 1,
              [Tensor("a", "float32", [2, 3, 4]),
               Tensor("b", "float32", [4])],
              [Tensor("y", "int32", [2, 3, 4])])


def mul_special_cases(cases):
    """MUL v3 (rescale factor >= 1) and int16 x int16 -> int8 / uint8 (the
    LSTM form: Q0.15 inputs, Q0.7 output)."""
    rng = cases.rng
    for dtype in ("uint8", "int8"):
        qa, qb = random_quant(rng, dtype), random_quant(rng, dtype)
        qo = (qa[0] * qb[0] * float(rng.uniform(0.3, 0.9)),
              random_quant(rng, dtype)[1])
        cases.add(f"mul_{dtype}_factor_above_1", "MUL", 3,
                  [Tensor("a", dtype, [2, 3, 4], qa),
                   Tensor("b", dtype, [4], qb)],
                  [Tensor("y", dtype, [2, 3, 4], qo)])
    for dtype, zero_point in (("int8", 0), ("uint8", 128), ("int8", 5)):
        cases.add(f"mul_int16_to_{dtype}_{zero_point}", "MUL", 4,
                  [Tensor("a", "int16", [2, 3, 4], (2.0 ** -15, 0)),
                   Tensor("b", "int16", [2, 3, 4], (2.0 ** -15, 0))],
                  [Tensor("y", dtype, [2, 3, 4], (2.0 ** -7, zero_point))],
                  ("MulOptions", {"fusedActivationFunction": 1}))


def fused_tanh_sign_bit_cases(cases):
    """LiteRT's arithmetic kernels ignore a fused TANH or SIGN_BIT (float and
    integer outputs alike)."""
    for op in ("ADD", "SUB", "MUL", "DIV"):
        for act in (4, 5):  # TANH, SIGN_BIT
            for dtype in ("float32", "int32"):
                cases.add(f"{op.lower()}_{dtype}_fused_{act}", op, 1,
                          [Tensor("a", dtype, [2, 3]),
                           Tensor("b", dtype, [3],
                                  data=[2, 3, 5] if op == "DIV" else None)],
                          [Tensor("y", dtype, [2, 3])],
                          (op[0] + op[1:].lower() + "Options",
                           {"fusedActivationFunction": act}))


def raw_integer_cases(cases):
    """Ops LiteRT runs on INT8 / INT16 stored values without requantizing:
    NEG, FLOOR_DIV, FLOOR_MOD (the divisor a constant without zeros)."""
    rng = cases.rng
    for dtype in ("int8", "int16"):
        unary(cases, f"neg_{dtype}", "NEG", 1, dtype, None, None)
        divisor = rng.integers(1, 20, size=[4]) * rng.choice([-1, 1], size=4)
        for op, version in (("FLOOR_DIV", 3), ("FLOOR_MOD", 2)):
            cases.add(f"{op.lower()}_{dtype}", op, version,
                      [Tensor("a", dtype, [3, 4]),
                       Tensor("b", dtype, [4], data=divisor)],
                      [Tensor("y", dtype, [3, 4])])


def cast_cases(cases):
    """CAST converts stored values (quantization plays no part): v3 for
    int8, v1 for the other integer types."""
    for src, dst, version in (("int8", "float32", 3), ("int8", "int32", 3),
                              ("uint8", "int8", 3), ("int16", "float32", 1),
                              ("int16", "int32", 1), ("uint8", "float32", 1)):
        cases.add(f"cast_{src}_to_{dst}", "CAST", version,
                  [Tensor("x", src, [4, 8])], [Tensor("y", dst, [4, 8])])


def min_max_cases(cases):
    """MAXIMUM/MINIMUM: inputs and output share one quantization, as the
    converter writes them (LiteRT compares stored values)."""
    for op in ("MAXIMUM", "MINIMUM"):
        for dtype, version in (("uint8", 1), ("int8", 2), ("int16", 4)):
            for i, (shape_a, shape_b) in enumerate(BINARY_SHAPES[:3]):
                q = random_quant(cases.rng, dtype)
                out_shape = list(np.broadcast_shapes(shape_a, shape_b))
                cases.add(f"{op.lower()}_{dtype}_{i}", op, version,
                          [Tensor("a", dtype, shape_a, q),
                           Tensor("b", dtype, shape_b, q)],
                          [Tensor("y", dtype, out_shape, q)])


def comparison_cases(cases):
    """Comparisons of x against a constant holding every code of the type
    (so EQUAL has true and false results), inputs quantized differently."""
    # (op_version.cc gives INT16 NOT_EQUAL, LESS_EQUAL and GREATER no
    # version of their own: v1.)
    versions = {"EQUAL": {"uint8": 1, "int8": 2, "int16": 4},
                "NOT_EQUAL": {"uint8": 1, "int8": 2, "int16": 1},
                "LESS": {"uint8": 1, "int8": 2, "int16": 3},
                "GREATER_EQUAL": {"uint8": 1, "int8": 2, "int16": 3},
                "LESS_EQUAL": {"uint8": 1, "int8": 2, "int16": 1},
                "GREATER": {"uint8": 1, "int8": 2, "int16": 1}}
    for op, by_type in versions.items():
        for dtype, version in by_type.items():
            qa = random_quant(cases.rng, dtype)
            # Overlapping ranges, quantized differently (LiteRT compares
            # by real value except for int16 orderings, which compare the
            # stored codes). Equal scales for EQUAL/NOT_EQUAL but int16 so
            # that equal codes compare equal.
            qb = (qa[0] * float(cases.rng.uniform(0.7, 1.4)),
                  random_quant(cases.rng, dtype)[1])
            if op in ("EQUAL", "NOT_EQUAL") and dtype != "int16":
                qb = qa
            elif op in ("EQUAL", "NOT_EQUAL"):
                qb = (qa[0] * 2, 0)  # every other code has an equal
            codes = np.arange(QMIN[dtype], QMAX[dtype] + 1)
            cases.add(f"{op.lower()}_{dtype}", op, version,
                      [Tensor("a", dtype, [8, 1], qa),
                       Tensor("b", dtype, [1, codes.size], qb, data=codes)],
                      [Tensor("y", "bool", [8, codes.size])])


def unary(cases, name, op, version, dtype, q_in, q_out, shape=(8, 8, 16),
          options=None):
    """One unary node; 1024 full-range inputs reach (almost) every 8-bit
    code, so a table-driven kernel is checked entry by entry."""
    cases.add(name, op, version, [Tensor("x", dtype, list(shape), q_in)],
              [Tensor("y", dtype, list(shape), q_out)], options)


# op -> (versions by dtype, real function applied to the input range).
UNARY_OPS = {
    "RELU": ({"uint8": 1, "int8": 2, "int16": 3}, lambda lo, hi: (0, hi)),
    "RELU6": ({"uint8": 1, "int8": 2, "int16": 3},
              lambda lo, hi: (0, min(hi, 6.0))),
    "RELU_N1_TO_1": ({"uint8": 1, "int8": 1},
                     lambda lo, hi: (max(lo, -1.0), min(hi, 1.0))),
    "RELU_0_TO_1": ({"uint8": 1, "int8": 1},
                    lambda lo, hi: (0, min(hi, 1.0))),
    "ABS": ({"int8": 2, "int16": 3},  # LiteRT refuses UINT8 ABS
            lambda lo, hi: (0, max(-lo, hi))),
    "HARD_SWISH": ({"uint8": 1, "int8": 1}, lambda lo, hi: (-0.375, hi)),
}

# LiteRT's fixed output quantization of LOGISTIC and TANH. (INT16, v3, is
# not implemented by Kiln: see docs/quantization.md.)
FIXED_OUTPUT = {
    "LOGISTIC": {"uint8": (1 / 256, 0), "int8": (1 / 256, -128)},
    "TANH": {"uint8": (1 / 128, 128), "int8": (1 / 128, 0)},
}


def unary_cases(cases):
    rng = cases.rng
    for op, (versions, fn) in UNARY_OPS.items():
        for dtype, version in versions.items():
            for i in range(2):
                q_in = random_quant(rng, dtype, 0.01, 0.2)
                q_out = fit_quant(rng, dtype, *fn(*real_range(dtype, q_in)))
                unary(cases, f"{op.lower()}_{dtype}_{i}", op, version, dtype,
                      q_in, q_out)
    for op, outputs in FIXED_OUTPUT.items():
        for dtype, q_out in outputs.items():
            version = {"uint8": 1, "int8": 2}[dtype]
            for i in range(2):
                q_in = random_quant(rng, dtype, 0.01, 0.1)
                unary(cases, f"{op.lower()}_{dtype}_{i}", op, version, dtype,
                      q_in, q_out)
    for dtype in ("uint8", "int8", "int16"):
        for i, approximate in enumerate((False, True)):
            q_in = random_quant(rng, dtype, 0.01, 0.05)
            lo, hi = real_range(dtype, q_in)
            version = 1 if dtype == "int16" else 2
            unary(cases, f"gelu_{dtype}_{i}", "GELU", version, dtype, q_in,
                  fit_quant(rng, dtype, -0.17, hi),
                  options=("GeluOptions", {"approximate": approximate}))
    for dtype, version in (("uint8", 1), ("int8", 1), ("int16", 2)):
        alpha = float(rng.uniform(0.05, 0.5))
        q_in = random_quant(rng, dtype)
        lo, hi = real_range(dtype, q_in)
        unary(cases, f"leaky_relu_{dtype}", "LEAKY_RELU", version, dtype,
              q_in, fit_quant(rng, dtype, alpha * lo, hi),
              options=("LeakyReluOptions", {"alpha": alpha}))
    q_in = random_quant(rng, "int8", 0.01, 0.05)
    unary(cases, "elu_int8", "ELU", 1, "int8", q_in,
          fit_quant(rng, "int8", -1.0, real_range("int8", q_in)[1]))
    q_in = random_quant(rng, "int8", 0.005, 0.02)
    lo, hi = real_range("int8", q_in)
    unary(cases, "exp_int8", "EXP", 2, "int8", q_in,
          fit_quant(rng, "int8", 0, float(np.exp(hi))))
    q_in = (float(rng.uniform(0.01, 0.05)), -128)  # non-negative inputs
    unary(cases, "log_int8", "LOG", 2, "int8", q_in,
          fit_quant(rng, "int8", float(np.log(q_in[0])),
                    float(np.log(real_range("int8", q_in)[1]))))
    for i in range(2):  # RSQRT of non-negative inputs (zero point = qmin).
        scale = float(rng.uniform(0.01, 0.1))
        q_out = fit_quant(rng, "int8", 0, 1 / np.sqrt(scale))
        unary(cases, f"rsqrt_int8_{i}", "RSQRT", 2, "int8", (scale, -128),
              q_out)
        scale = float(rng.uniform(0.01, 0.1))
        q_out = fit_quant(rng, "int8", 0, np.sqrt(255 * scale))
        unary(cases, f"sqrt_int8_{i}", "SQRT", 1, "int8", (scale, -128),
              q_out)
    int16_math_cases(cases)


def int16_math_cases(cases):
    """INT16 EXP and LOG over random full-range inputs (an EXP that
    overflows float included); RSQRT and SQRT, which fail on negative
    inputs, over a constant input holding every non-negative code."""
    rng = cases.rng
    for i, top in enumerate((4.0, 12.0, 95.0)):  # exp(95) overflows float
        q_in = (top / 32767, 0)
        unary(cases, f"exp_int16_{i}", "EXP", 2, "int16", q_in,
              fit_quant(rng, "int16", 0, min(float(np.exp(top)), 1e37)))
    for i in range(2):
        q_in = random_quant(rng, "int16", 0.05, 1.0)
        hi = real_range("int16", q_in)[1]
        unary(cases, f"log_int16_{i}", "LOG", 2, "int16", q_in,
              fit_quant(rng, "int16", float(np.log(q_in[0])),
                        float(np.log(hi))))
    codes = np.arange(0, 32768, dtype=np.int16).reshape(128, 256)
    for i in range(2):
        scale = float(np.exp(rng.uniform(np.log(1e-4), np.log(1e-2))))
        for op, version, top in (("RSQRT", 3, 1 / np.sqrt(scale)),
                                 ("SQRT", 1, np.sqrt(32767 * scale))):
            cases.add(f"{op.lower()}_int16_{i}", op, version,
                      [Tensor("x", "int16", [128, 256], (scale, 0),
                              data=codes)],
                      [Tensor("y", "int16", [128, 256],
                              fit_quant(rng, "int16", 0, float(top)))])


def prelu_cases(cases):
    rng = cases.rng
    for dtype in ("uint8", "int8", "int16"):
        a_type = "int8" if dtype == "int16" else dtype  # int16x8: int8 alpha
        for i, alpha_shape in enumerate(([4], [1, 1, 4], [3, 1])):
            q_in = random_quant(rng, dtype)
            q_alpha = random_quant(rng, a_type)
            alpha = rng.integers(QMIN[a_type], QMAX[a_type] + 1,
                                 size=alpha_shape)
            lo, hi = real_range(dtype, q_in)
            a_lo, a_hi = real_range(a_type, q_alpha)
            out_lo = min(0, lo * a_hi, lo * a_lo)
            cases.add(f"prelu_{dtype}_{i}", "PRELU", 1,
                      [Tensor("x", dtype, [2, 3, 4], q_in),
                       Tensor("alpha", a_type, alpha_shape, q_alpha,
                              data=alpha)],
                      [Tensor("y", dtype, [2, 3, 4],
                              fit_quant(rng, dtype, out_lo, hi))])


def quantize_cases(cases):
    rng = cases.rng
    shape = [16, 64]
    for dtype, version in (("uint8", 1), ("int8", 1), ("int16", 2)):
        cases.add(f"quantize_float_to_{dtype}", "QUANTIZE", version,
                  [Tensor("x", "float32", shape)],
                  [Tensor("y", dtype, shape, random_quant(rng, dtype))])
        cases.add(f"dequantize_{dtype}", "DEQUANTIZE",
                  {"uint8": 1, "int8": 2, "int16": 3}[dtype],
                  [Tensor("x", dtype, shape, random_quant(rng, dtype))],
                  [Tensor("y", "float32", shape)])
    pairs = [("int8", "int8"), ("uint8", "uint8"), ("int8", "uint8"),
             ("uint8", "int8"), ("int16", "int16"), ("int16", "int8"),
             ("int8", "int16")]
    for src, dst in pairs:
        for i in range(2):
            q_in = random_quant(rng, src)
            q_out = fit_quant(rng, dst, *real_range(src, q_in))
            cases.add(f"requantize_{src}_to_{dst}_{i}", "QUANTIZE",
                      2 if "int16" in (src, dst) else 1,
                      [Tensor("x", src, shape, q_in)],
                      [Tensor("y", dst, shape, q_out)])
    scales = rng.uniform(0.01, 0.1, size=3)
    cases.add("dequantize_int8_per_channel", "DEQUANTIZE", 5,
              [Tensor("x", "int8", [2, 3, 4],
                      (scales, rng.integers(-5, 5, size=3), 1))],
              [Tensor("y", "float32", [2, 3, 4])])
    cases.add("quantize_float_to_int8_per_channel", "QUANTIZE", 3,
              [Tensor("x", "float32", [4, 3, 8])],
              [Tensor("y", "int8", [4, 3, 8],
                      (scales, rng.integers(-5, 5, size=3), 1))])
    # The int16 -> int16 requantizations of unet_small_int16x8.
    for scale_in, scale_out in ((1.3190337085688952e-05, 3.8933547330088913e-05),
                                (2.1215833839960396e-05, 4.988676300854422e-05)):
        cases.add(f"requantize_int16_unet_{scale_in:.3g}", "QUANTIZE", 2,
                  [Tensor("x", "int16", shape, (scale_in, 0))],
                  [Tensor("y", "int16", shape, (scale_out, 0))])


def concatenation_cases(cases):
    rng = cases.rng
    for dtype, version in (("uint8", 1), ("int8", 2), ("int16", 3)):
        for i, axis in enumerate((0, 2, -1)):
            # int8 and int16 inputs must share the output's quantization
            # (LiteRT refuses others); uint8 inputs are requantized.
            q_out = random_quant(rng, dtype)
            shapes = [[2, 3, 2], [2, 3, 4]] if axis != 0 else \
                [[1, 3, 4], [2, 3, 4], [1, 3, 4]]
            inputs = [Tensor(f"x{j}", dtype, s,
                             random_quant(rng, dtype) if dtype == "uint8"
                             else q_out) for j, s in enumerate(shapes)]
            out_shape = list(shapes[-1])
            out_shape[axis] = sum(s[axis] for s in shapes)
            cases.add(f"concatenation_{dtype}_{i}", "CONCATENATION", version,
                      inputs, [Tensor("y", dtype, out_shape, q_out)],
                      ("ConcatenationOptions", {"axis": axis}))


def join_and_pad_rules_cases(cases):
    """What LiteRT accepts and refuses around CONCATENATION and PAD/PADV2:
    INT16 inputs of different scales are concatenated as stored, a fused
    activation on CONCATENATION is refused, INT16 PAD pads with a non-zero
    output zero point, PADV2's pad value must share the output's
    quantization."""
    cases.add("concatenation_int16_scales_differ", "CONCATENATION", 3,
              [Tensor("a", "int16", [2, 3], (0.01, 0)),
               Tensor("b", "int16", [2, 3], (0.02, 0))],
              [Tensor("y", "int16", [4, 3], (0.01, 0))],
              ("ConcatenationOptions", {"axis": 0}))
    cases.add("concatenation_float_relu_refused", "CONCATENATION", 1,
              [Tensor("a", "float32", [2, 3]), Tensor("b", "float32", [2, 3])],
              [Tensor("y", "float32", [4, 3])],
              ("ConcatenationOptions",
               {"axis": 0, "fusedActivationFunction": 1}))
    paddings = i32("paddings", [[1, 0], [0, 2]])
    cases.add("pad_int16_zero_point", "PAD", 3,
              [Tensor("x", "int16", [2, 3], (0.01, 3)), paddings],
              [Tensor("y", "int16", [3, 5], (0.01, 3))])
    cases.add("padv2_int8_value_scale_refused", "PADV2", 2,
              [Tensor("x", "int8", [2, 3], (0.01, 3)), paddings,
               Tensor("v", "int8", [], (0.02, 3), data=7)],
              [Tensor("y", "int8", [3, 5], (0.01, 3))])


def movement(cases, name, op, version, dtype, q, inputs_after, in_shape,
             out_shapes, options=None):
    """A data-movement node: the first input is the data, `inputs_after`
    are (constant) parameter tensors; outputs share the input's
    quantization."""
    inputs = [Tensor("x", dtype, in_shape, q)] + inputs_after
    outputs = [Tensor(f"y{i}", dtype, s, q) for i, s in enumerate(out_shapes)]
    cases.add(name, op, version, inputs, outputs, options)


def i32(name, values):
    values = np.asarray(values, dtype=np.int32)
    return Tensor(name, "int32", list(values.shape), data=values)


MOVEMENT_VERSION = {"uint8": 1, "int8": 2}


def movement_cases(cases):
    for dtype in ("uint8", "int8", "int16"):
        q = random_quant(cases.rng, dtype)
        v = MOVEMENT_VERSION.get(dtype)

        def add(name, op, version, params, in_shape, out_shapes, options=None):
            movement(cases, f"{name}_{dtype}", op, version, dtype, q, params,
                     in_shape, out_shapes, options)

        add("reshape", "RESHAPE", 1, [i32("shape", [6, 4])], [2, 3, 4],
            [[6, 4]])
        add("transpose", "TRANSPOSE", v or 5, [i32("perm", [2, 0, 1])],
            [2, 3, 4], [[4, 2, 3]])
        add("slice", "SLICE", v or 4, [i32("begin", [0, 1, 1]),
                                      i32("size", [2, 2, -1])],
            [2, 3, 4], [[2, 2, 3]])
        add("strided_slice", "STRIDED_SLICE", v or 1,
            [i32("begin", [0, 2, 0]), i32("end", [2, 0, 4]),
             i32("strides", [1, -1, 2])], [2, 3, 4], [[2, 2, 2]],
            ("StridedSliceOptions", {}))
        add("gather", "GATHER", v or 4, [i32("indices", [2, 0, 2, 1])],
            [3, 2, 4], [[4, 2, 4]], ("GatherOptions", {"axis": 0}))
        add("gather_nd", "GATHER_ND", 1 if dtype != "int16" else 3,
            [i32("indices", [[1, 0], [0, 1], [2, 1]])], [3, 2, 4], [[3, 4]])
        add("split_v", "SPLIT_V", 2 if dtype == "int8" else 1,
            [i32("sizes", [1, 4, 1]), i32("axis", [1])], [2, 6],
            [[2, 1], [2, 4], [2, 1]], ("SplitVOptions", {"numSplits": 3}))
        add("squeeze", "SQUEEZE", 1, [], [2, 1, 3], [[2, 3]],
            ("SqueezeOptions", {"squeezeDims": [1]}))
        add("expand_dims", "EXPAND_DIMS", 1, [i32("axis", [1])], [2, 3],
            [[2, 1, 3]])
        add("tile", "TILE", 3 if dtype == "int8" else 1,
            [i32("multiples", [2, 1, 3])], [2, 3, 1], [[4, 3, 3]])
        add("broadcast_to", "BROADCAST_TO", 3 if dtype != "uint8" else 2,
            [i32("shape", [2, 3, 4])], [3, 1], [[2, 3, 4]])
        if dtype != "int16":  # LiteRT refuses INT16 for these two
            add("space_to_depth", "SPACE_TO_DEPTH", v, [], [1, 4, 4, 2],
                [[1, 2, 2, 8]], ("SpaceToDepthOptions", {"blockSize": 2}))
            add("depth_to_space", "DEPTH_TO_SPACE", v, [], [1, 2, 2, 8],
                [[1, 4, 4, 2]], ("DepthToSpaceOptions", {"blockSize": 2}))
        add("mirror_pad", "MIRROR_PAD", v or 3,
            [i32("paddings", [[0, 1], [2, 1], [1, 0]])], [2, 3, 4],
            [[3, 6, 5]], ("MirrorPadOptions", {"mode": 1}))
        add("unpack", "UNPACK", 2 if dtype != "int16" else 4, [], [2, 3, 4],
            [[2, 4]] * 3, ("UnpackOptions", {"num": 3, "axis": 1}))
        add("pad", "PAD", v or 3, [i32("paddings", [[1, 0], [0, 2], [1, 1]])],
            [2, 3, 4], [[3, 5, 6]])
        pad_value = Tensor("value", dtype, [], q,
                           data=int(cases.rng.integers(QMIN[dtype],
                                                       QMAX[dtype] + 1)))
        add("padv2", "PADV2", v or 3,
            [i32("paddings", [[1, 0], [0, 2], [1, 1]]), pad_value],
            [2, 3, 4], [[3, 5, 6]])
        cases.add(f"split_{dtype}", "SPLIT", v or 4,  # axis comes first
                  [i32("axis", [1]), Tensor("x", dtype, [2, 6], q)],
                  [Tensor(f"y{i}", dtype, [2, 3], q) for i in range(2)],
                  ("SplitOptions", {"numSplits": 2}))
        inputs = [Tensor(f"x{j}", dtype, [2, 3], q) for j in range(3)]
        cases.add(f"pack_{dtype}", "PACK", v or 3, inputs,
                  [Tensor("y", dtype, [2, 3, 3], q)],
                  ("PackOptions", {"valuesCount": 3, "axis": 2}))


GENERATORS = [binary_cases, declared_output_type_cases, div_cases,
              pot_int16_cases, mul_special_cases,
              fused_tanh_sign_bit_cases, raw_integer_cases, cast_cases,
              min_max_cases, comparison_cases,
              unary_cases, prelu_cases, quantize_cases, concatenation_cases,
              join_and_pad_rules_cases,
              movement_cases, vector_row_binary_cases]


def make_models(seed):
    cases = Cases(seed)
    for generate in GENERATORS:
        generate(cases)
    return cases.models


def main():
    return lso.differential_main(__doc__.splitlines()[0], make_models,
                                 seed_default=11)


if __name__ == "__main__":
    sys.exit(main())
