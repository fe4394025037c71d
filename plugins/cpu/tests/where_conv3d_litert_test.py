#!/usr/bin/env python3
"""WHERE and CONV_3D versus LiteRT, on seeded single-operator models.

Writes single-op models (litert_single_op.py) and runs tools/kiln/tests/
differential_test.py on that folder with LiteRT's reference kernels as the
oracle and no refusal excused (--no-allow-lists):

- WHERE (v1 BOOL, v2 FLOAT32 / INT64 / INT32 / INT8 / UINT8 / UINT32): the
  condition as a graph input (the output is sized at invoke) and as a
  constant holding zeros, -0.0 and NaN (sized in prepare), ranks 1 to 4,
  and a model that declares the output INT32 (LiteRT and Kiln make it
  INT64). Integer outputs compare exactly. (An all-false condition gives an
  empty output, which the differential test counts as a failure; the
  interpreter's corpus test covers it.)
- CONV_3D (v1, float32): SAME and VALID padding, strides and dilations per
  dim, with and without bias, each fused activation, a constant or an input
  filter. Kiln sums each output in the reference kernel's order, so floats
  compare bit for bit (--float-tolerance 0).

  where_conv3d_litert_test.py --kiln PATH/kiln [--kiln-arg ARG ...]
      [--keep DIR] [--only REGEX]

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

lso.TYPES.setdefault("uint32", schema.TensorType.UINT32)
OP = schema.BuiltinOperator


def where_cases(rng):
    """(name, model bytes) of the WHERE cases."""
    cases = []

    def add(name, version, cond, out_dtype="int64"):
        rank = len(cond.shape)
        cases.append((f"where_{name}", lso.build_model(
            OP.WHERE, version, [cond], [lso.T(out_dtype, [1, rank])])))

    for dtype, version in (("bool", 1), ("float32", 2), ("int64", 2),
                           ("int32", 2), ("int8", 2), ("uint8", 2)):
        for shape in ([7], [3, 5, 4], [2, 1, 3, 4]):
            add(f"{dtype}_input_rank{len(shape)}", version,
                lso.T(dtype, shape))
    # Constant conditions (sized in prepare) with zeros among the values.
    for dtype, version in (("float32", 2), ("int8", 2), ("uint8", 2),
                           ("int32", 2), ("int64", 2), ("uint32", 2),
                           ("bool", 1)):
        values = rng.integers(0, 3, size=[4, 6]).astype(dtype)
        if dtype == "float32":
            values[0, :3] = [-0.0, np.nan, -np.inf]
        add(f"{dtype}_constant", version, lso.T(dtype, [4, 6], data=values))
    add("declared_int32_output", 1, lso.T("bool", [3, 4]), out_dtype="int32")
    return cases


def conv3d_cases(rng):
    """(name, model bytes) of the CONV_3D cases."""
    cases = []
    specs = [
        # padding, strides (d, h, w), dilations (d, h, w), activation,
        # input [n, d, h, w, c], filter [d, h, w, c, out], bias, constant
        (0, (1, 1, 1), (1, 1, 1), 0, [1, 4, 5, 6, 3], [2, 3, 2, 3, 4], True,
         True),
        (1, (1, 1, 1), (1, 1, 1), 1, [2, 4, 5, 6, 2], [2, 2, 3, 2, 3], False,
         True),
        (0, (2, 1, 3), (1, 2, 1), 3, [1, 7, 6, 8, 2], [3, 2, 2, 2, 5], True,
         True),
        (1, (1, 2, 2), (2, 1, 2), 2, [1, 8, 7, 9, 3], [2, 3, 2, 3, 2], True,
         False),
        (0, (3, 2, 1), (1, 1, 1), 4, [1, 5, 5, 5, 1], [2, 2, 2, 1, 3], True,
         True),  # TANH: LiteRT's conv ignores it
        (1, (2, 2, 2), (1, 1, 1), 0, [1, 3, 3, 3, 4], [3, 3, 3, 4, 1], False,
         False),
    ]
    for i, (pad, strides, dilations, act, in_shape, f_shape, with_bias,
            const_filter) in enumerate(specs):
        filt = rng.uniform(-1, 1, size=f_shape).astype(np.float32)
        inputs = [lso.T("float32", in_shape),
                  lso.T("float32", f_shape,
                        data=filt if const_filter else None)]
        if with_bias:
            inputs.append(lso.T("float32", [f_shape[4]],
                                data=rng.uniform(-1, 1, f_shape[4])))
        else:
            inputs.append(lso.T("float32", [f_shape[4]], omitted=True))
        opts = schema.Conv3DOptionsT()
        opts.padding = pad
        opts.strideD, opts.strideH, opts.strideW = strides
        opts.dilationDFactor, opts.dilationHFactor, opts.dilationWFactor = (
            dilations)
        opts.fusedActivationFunction = act
        out = lso.T("float32", [1, 1, 1, 1, 1])  # LiteRT and Kiln size it
        cases.append((f"conv3d_{i}", lso.build_model(
            OP.CONV_3D, 1, inputs, [out], schema.BuiltinOptions.Conv3DOptions,
            opts)))
    return cases


def make_models(_):
    rng = np.random.default_rng(3)
    return [(name + ".tflite", data)
            for name, data in where_cases(rng) + conv3d_cases(rng)]


def main():
    return lso.differential_main(__doc__.splitlines()[0], make_models)


if __name__ == "__main__":
    sys.exit(main())
