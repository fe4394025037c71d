#!/usr/bin/env python3
"""Float pooling, resize, softmax, concat, convolutions, GELU, MEAN, SUM.

Versus LiteRT, on seeded single-operator models, on 1 and on 2 threads.

The CPU plugin's vectorised row kernels (float_rows.h) and its splits of
these ops across the thread pool, checked against LiteRT's reference kernels
(tools/kiln/tests/differential_test.py, no refusal excused) with the
differential test's float bound (relative 1e-5: the vector kernels use FMA
and a polynomial exp, not bit-equal to the reference). The shapes hit the
8-channel vector tails (channels 13, 19, 11, 5, 3), odd pair counts, padded
and clipped windows, and are big enough that the kernels split across two
threads (more than 2^17 multiply-adds):

- MAX_POOL_2D / AVERAGE_POOL_2D: SAME and VALID, strides 1 to 3, windows
  2x2 to 3x3, RELU6 / RELU_N1_TO_1 / NONE, batches 1 and 2.
- RESIZE_BILINEAR: default, align_corners and half_pixel_centers, up and
  down scales, 2 batches.
- SOFTMAX: last axis 2 (the pair kernel; 16384 and 111 pairs), 13 and 64,
  beta 1 and 0.7.
- CONCATENATION: along channels (16-byte blocks and odd byte counts), along
  rows, three inputs.
- TRANSPOSE_CONV: 2x2 stride 2 (windows disjoint: split over pixel chunks,
  the output starts from the bias), 2x2 and 2x1 stride 3 (gaps: outputs
  that are the bias alone), 3x3 stride 2 (overlapping: serial col2im), with
  and without bias, RELU and RELU6.
- DEPTHWISE_CONV_2D 3x3 with too few output rows for two threads (rows
  split into pixel ranges; wide row kernel and row kernel), CONV_2D of a
  3-channel first layer and a 49-row 1x1 (see conv_cases).
- GELU: exact and approximate, sizes with and without a vector tail.
- MEAN / SUM over the last axis (eight-lane sums; 128 and 37 values, with
  other axes reduced into the same output too), over other axes, and over
  one middle axis alone (AVX2 row additions).
- ADD, SUB, MUL, DIV, SQUARED_DIFFERENCE, MAXIMUM, MINIMUM (the AVX2 rows of
  binary_float.h): same shapes, a row times a broadcast value ([1, 64, 128]
  by [1, 64, 1] and the other way round), a row times a row ([128]), a
  scalar, mixed broadcasts with vector tails (19 and 37 values), RELU6 and
  RELU fused on ADD / MUL.
- TRANSPOSE as a batched block transpose (block_transpose.h): a
  transformer's head split and merge ([1, 64, 4, 32] <-> [1, 4, 64, 32],
  blocks of 32 floats), its K^T ([0, 2, 3, 1]: 8x8 AVX2 tiles), NCHW <->
  NHWC with edges past a multiple of 8, blocks of 6 floats, 2-D transposes,
  a permutation that is a copy once size-1 dims drop, and one that is no
  block transpose ([2, 1, 0]: the general path).
- BATCH_MATMUL with a computed rhs (packed at invoke, before the product
  tasks): attention's Q K^T and P V shapes, adj_x, adj_y, a broadcast rhs
  batch (shared by several products) and a rank-2 rhs, and a constant rhs.

  float_ops_litert_test.py --kiln PATH/kiln [--kiln-arg ARG ...]
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

OP = schema.BuiltinOperator
OPTS = schema.BuiltinOptions
SAME, VALID = 0, 1
NONE, RELU, RELU_N1_TO_1, RELU6 = 0, 1, 2, 3


def f32(shape, data=None):
    return lso.T("float32", shape, data=data)


def pool_cases():
    cases = []
    specs = [
        # in shape, filter (h, w), stride (h, w), padding, activation
        ([1, 128, 128, 16], (2, 2), (2, 2), VALID, NONE),
        ([1, 66, 70, 19], (3, 3), (2, 2), SAME, RELU6),
        ([2, 64, 50, 13], (3, 3), (1, 1), SAME, RELU_N1_TO_1),
        ([1, 45, 47, 32], (3, 2), (3, 2), SAME, NONE),
    ]
    for op, name in ((OP.MAX_POOL_2D, "max"), (OP.AVERAGE_POOL_2D, "avg")):
        for i, (shape, fil, stride, pad, act) in enumerate(specs):
            o = schema.Pool2DOptionsT()
            o.padding = pad
            o.filterHeight, o.filterWidth = fil
            o.strideH, o.strideW = stride
            o.fusedActivationFunction = act
            cases.append((f"{name}_pool_{i}", lso.build_model(
                op, 1, [f32(shape)], [f32([1])], OPTS.Pool2DOptions, o)))
    return cases


def resize_cases():
    cases = []
    specs = [
        # in shape, out (h, w), align_corners, half_pixel_centers
        ([1, 64, 64, 32], (128, 128), False, True),
        ([2, 40, 36, 19], (80, 72), False, False),
        ([1, 23, 17, 11], (96, 88), True, False),
        ([1, 90, 70, 5], (61, 47), False, True),
    ]
    for i, (shape, size, align, half) in enumerate(specs):
        o = schema.ResizeBilinearOptionsT()
        o.alignCorners, o.halfPixelCenters = align, half
        size_t = lso.T("int32", [2], data=np.array(size, np.int32))
        cases.append((f"resize_bilinear_{i}", lso.build_model(
            OP.RESIZE_BILINEAR, 3, [f32(shape), size_t], [f32([1])],
            OPTS.ResizeBilinearOptions, o)))
    return cases


def softmax_cases():
    cases = []
    for i, (shape, beta) in enumerate((([1, 128, 128, 2], 1.0),
                                       ([2, 3, 37, 2], 0.7),
                                       ([40, 50, 13], 1.0),
                                       ([1, 4, 64, 64], 0.7))):
        o = schema.SoftmaxOptionsT()
        o.beta = beta
        cases.append((f"softmax_{i}", lso.build_model(
            OP.SOFTMAX, 1, [f32(shape)], [f32(shape)], OPTS.SoftmaxOptions,
            o)))
    return cases


def concat_cases():
    cases = []
    specs = [
        ([[1, 64, 64, 32], [1, 64, 64, 32]], 3),
        ([[1, 128, 128, 32], [1, 128, 128, 16]], 3),
        ([[2, 200, 40, 6], [2, 200, 40, 10], [2, 200, 40, 3]], 3),
        ([[2, 30, 40, 60], [2, 50, 40, 60]], 1),
    ]
    for i, (shapes, axis) in enumerate(specs):
        o = schema.ConcatenationOptionsT()
        o.axis = axis
        cases.append((f"concat_{i}", lso.build_model(
            OP.CONCATENATION, 1, [f32(s) for s in shapes], [f32([1])],
            OPTS.ConcatenationOptions, o)))
    return cases


def transpose_conv_cases(rng):
    cases = []
    specs = [
        # in shape, filter [oc, fh, fw, ic], stride, padding, bias, act
        ([1, 32, 32, 64], [32, 2, 2, 64], 2, SAME, True, RELU),
        ([2, 17, 19, 24], [13, 2, 2, 24], 3, VALID, False, NONE),
        ([1, 20, 22, 24], [11, 3, 3, 24], 2, SAME, True, NONE),
        ([1, 15, 13, 8], [9, 2, 1, 8], 3, VALID, True, RELU6),
    ]
    for i, (shape, fshape, stride, pad, bias, act) in enumerate(specs):
        n, h, w, _ = shape
        oc, fh, fw, _ = fshape
        if pad == SAME:
            out = [n, h * stride, w * stride, oc]
        else:
            out = [n, (h - 1) * stride + fh, (w - 1) * stride + fw, oc]
        inputs = [lso.T("int32", [4], data=np.array(out, np.int32)),
                  f32(fshape, rng.uniform(-1, 1, fshape).astype(np.float32)),
                  f32(shape)]
        if bias:
            inputs.append(f32([oc], rng.uniform(-1, 1, oc).astype(np.float32)))
        o = schema.TransposeConvOptionsT()
        o.padding, o.strideH, o.strideW = pad, stride, stride
        o.fusedActivationFunction = act
        cases.append((f"transpose_conv_{i}", lso.build_model(
            OP.TRANSPOSE_CONV, 4 if act != NONE else 3, inputs, [f32(out)],
            OPTS.TransposeConvOptions, o)))
    return cases


def conv_cases(rng):
    """DEPTHWISE_CONV_2D and CONV_2D shapes of the CPU plugin's split paths.

    3x3 depthwise with too few output rows for two threads (each row then
    split into pixel ranges): the wide row kernel (16+ channels, strides 1
    and 2, ragged channel blocks) and the row kernel (12 channels); a first
    layer's CONV_2D (3 channels: rows copied into the im2col scratch) and a
    1x1 CONV_2D of 49 rows (the GEMM split over panels only).
    """
    cases = []
    dw_specs = [
        # in shape, stride, padding, activation
        ([1, 7, 7, 960], 1, SAME, RELU6),
        ([1, 5, 9, 400], 1, SAME, RELU6),
        ([2, 3, 24, 488], 2, SAME, RELU6),
        ([1, 6, 14, 1000], 2, VALID, RELU),
        ([1, 6, 256, 12], 1, SAME, RELU6),
    ]
    for i, (shape, stride, pad, act) in enumerate(dw_specs):
        c = shape[3]
        o = schema.DepthwiseConv2DOptionsT()
        o.padding, o.strideH, o.strideW = pad, stride, stride
        o.depthMultiplier, o.fusedActivationFunction = 1, act
        inputs = [f32(shape),
                  f32([1, 3, 3, c],
                      rng.uniform(-1, 1, [1, 3, 3, c]).astype(np.float32)),
                  f32([c], rng.uniform(-1, 1, c).astype(np.float32))]
        cases.append((f"depthwise_{i}", lso.build_model(
            OP.DEPTHWISE_CONV_2D, 1, inputs, [f32([1])],
            OPTS.DepthwiseConv2DOptions, o)))
    conv_specs = [
        # in shape, filter [oc, fh, fw, ic], stride, padding, activation
        ([1, 64, 66, 3], [32, 3, 3, 3], 2, SAME, RELU6),
        ([1, 7, 7, 160], [960, 1, 1, 160], 1, VALID, RELU6),
    ]
    for i, (shape, fshape, stride, pad, act) in enumerate(conv_specs):
        o = schema.Conv2DOptionsT()
        o.padding, o.strideH, o.strideW = pad, stride, stride
        o.fusedActivationFunction = act
        inputs = [f32(shape),
                  f32(fshape, rng.uniform(-1, 1, fshape).astype(np.float32)),
                  f32([fshape[0]],
                      rng.uniform(-1, 1, fshape[0]).astype(np.float32))]
        cases.append((f"conv_{i}", lso.build_model(
            OP.CONV_2D, 1, inputs, [f32([1])], OPTS.Conv2DOptions, o)))
    return cases


def gelu_cases():
    cases = []
    for approximate in (False, True):
        for shape in ([1, 64, 512], [1000, 37]):
            o = schema.GeluOptionsT()
            o.approximate = approximate
            name = f"gelu_{'tanh' if approximate else 'erf'}_{shape[-1]}"
            cases.append((name, lso.build_model(
                OP.GELU, 1, [f32(shape)], [f32(shape)], OPTS.GeluOptions, o)))
    return cases


def binary_cases():
    cases = []
    shape_pairs = [
        ([1, 64, 128], [1, 64, 128]),
        ([1, 64, 128], [1, 64, 1]),
        ([1, 64, 1], [1, 64, 128]),
        ([1, 64, 128], [128]),
        ([3, 37], [1]),
        ([1], [3, 37]),
        ([5, 1, 19], [1, 7, 19]),
        ([2, 3, 1], [2, 1, 37]),
    ]
    ops = [
        ("add", OP.ADD, OPTS.AddOptions, schema.AddOptionsT),
        ("sub", OP.SUB, OPTS.SubOptions, schema.SubOptionsT),
        ("mul", OP.MUL, OPTS.MulOptions, schema.MulOptionsT),
        ("div", OP.DIV, OPTS.DivOptions, schema.DivOptionsT),
        ("sqdiff", OP.SQUARED_DIFFERENCE, 0, None),
        ("maximum", OP.MAXIMUM, 0, None),
        ("minimum", OP.MINIMUM, 0, None),
    ]
    for name, op, opts_type, opts_cls in ops:
        for i, (a, b) in enumerate(shape_pairs):
            options = None
            if opts_cls is not None:
                options = opts_cls()
                if name in ("add", "mul") and i in (1, 6):
                    options.fusedActivationFunction = RELU6 if i == 1 else RELU
            cases.append((f"{name}_{i}", lso.build_model(
                op, 1, [f32(a), f32(b)], [f32([1])], opts_type, options)))
    return cases


def transpose_cases():
    cases = []
    specs = [
        ([1, 64, 4, 32], [0, 2, 1, 3]),
        ([1, 4, 64, 32], [0, 2, 1, 3]),
        ([1, 64, 4, 32], [0, 2, 3, 1]),
        ([2, 3, 5, 7], [0, 3, 1, 2]),
        ([2, 11, 13, 9], [0, 2, 3, 1]),
        ([4, 8, 8, 6], [0, 2, 1, 3]),
        ([9, 13], [1, 0]),
        ([64, 128], [1, 0]),
        ([1, 1, 5], [2, 0, 1]),
        ([3, 17, 19], [2, 1, 0]),
    ]
    for i, (shape, perm) in enumerate(specs):
        p = lso.T("int32", [len(perm)], data=np.array(perm, np.int32))
        cases.append((f"transpose_{i}", lso.build_model(
            OP.TRANSPOSE, 1, [f32(shape), p], [f32([1])],
            OPTS.TransposeOptions, schema.TransposeOptionsT())))
    return cases


def batch_matmul_cases(rng):
    cases = []
    specs = [
        # lhs, rhs, adj_x, adj_y, constant rhs
        ([1, 4, 64, 32], [1, 4, 32, 64], False, False, False),
        ([1, 4, 64, 64], [1, 4, 64, 32], False, False, False),
        ([2, 3, 17, 19], [2, 3, 23, 19], False, True, False),
        ([3, 19, 17], [3, 19, 21], True, False, False),
        ([2, 4, 16, 8], [1, 4, 8, 12], False, False, False),
        ([5, 16, 8], [8, 37], False, False, False),
        ([4, 20, 24], [4, 24, 40], False, False, True),
    ]
    for i, (lhs, rhs, adj_x, adj_y, const) in enumerate(specs):
        o = schema.BatchMatMulOptionsT()
        o.adjX, o.adjY = adj_x, adj_y
        r = f32(rhs, data=rng.standard_normal(rhs).astype(np.float32)
                if const else None)
        cases.append((f"batch_matmul_{i}", lso.build_model(
            OP.BATCH_MATMUL, 1, [f32(lhs), r], [f32([1])],
            OPTS.BatchMatMulOptions, o)))
    return cases


def reduce_cases():
    cases = []
    specs = [
        # op, in shape, axes, keep_dims
        (OP.MEAN, [1, 64, 128], [2], True),
        (OP.MEAN, [2, 7, 9, 19], [1, 3], False),
        (OP.SUM, [3, 5, 37], [-1], False),
        (OP.SUM, [4, 6, 5], [0, 2], True),
        (OP.MEAN, [1, 64, 128], [1], False),
        (OP.SUM, [3, 37, 19], [-2], True),
        (OP.MEAN, [40, 131], [-1], False),
    ]
    for i, (op, shape, axes, keep) in enumerate(specs):
        o = schema.ReducerOptionsT()
        o.keepDims = keep
        axis = lso.T("int32", [len(axes)], data=np.array(axes, np.int32))
        cases.append((f"reduce_{i}", lso.build_model(
            op, 1, [f32(shape), axis], [f32([1])], OPTS.ReducerOptions, o)))
    return cases


def make_models(_):
    rng = np.random.default_rng(5)
    cases = (pool_cases() + resize_cases() + softmax_cases() + concat_cases()
             + transpose_conv_cases(rng) + conv_cases(rng) + gelu_cases()
             + reduce_cases() + binary_cases() + transpose_cases()
             + batch_matmul_cases(rng))
    return [(name + ".tflite", data) for name, data in cases]


def main():
    return lso.differential_main(__doc__.splitlines()[0], make_models,
                                 float_tolerance=1e-5, threads=(1, 2))


if __name__ == "__main__":
    sys.exit(main())
