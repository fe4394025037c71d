"""Seeded single-op cases for nn_quantized_litert_test.py.

Each case is one node of an op in kernels/nn with quantized (int8, uint8,
int16x8) or hybrid (float activations, int8 weights) tensors. Quantization
parameters are drawn so that outputs spread over the output type's range
rather than saturate.
"""
import math

import numpy as np
from ai_edge_litert import schema_py_generated as schema

import litert_single_op as lso
from litert_single_op import T

OP = schema.BuiltinOperator
OPT = schema.BuiltinOptions
ACT_NONE, ACT_RELU, ACT_RELU_N1_TO_1, ACT_RELU6, ACT_TANH, ACT_SIGN_BIT = range(6)
SAME, VALID = 0, 1


class Case:
    def __init__(self, name, op, version, inputs, outputs, options_type=0,
                 options=None, rng=None, expect_refusal=False, tolerance=None):
        self.name = name
        self.op = op
        self.version = version
        self.inputs = inputs
        self.outputs = outputs
        self.options_type = options_type
        self.options = options
        self.expect_refusal = expect_refusal
        # Kiln must refuse; LiteRT's answer is not meaningful.
        self.expect_kiln_refusal = False
        # The LiteRT resolver to compare with when its reference kernel is
        # known broken for this case (None: the test's resolver), and the
        # integer difference allowed then (LiteRT's kernels disagree).
        self.oracle = None
        self.int_tolerance = 0
        self._tolerance = tolerance
        self._seed = int(rng.integers(1 << 31)) if rng is not None else 0

    def model(self):
        return lso.build_model(self.op, self.version, self.inputs,
                               self.outputs, self.options_type, self.options)

    def runtime_inputs(self):
        rng = np.random.default_rng(self._seed)
        return [lso.random_values(rng, t.dtype, t.shape) for t in self.inputs
                if t.data is None and not t.omitted]

    def tolerance(self, reference):
        if self._tolerance is None:
            return 0.0
        return self._tolerance(reference)


# ---- quantization parameters -------------------------------------------------

def log_uniform(rng, lo, hi, size=None):
    return np.exp(rng.uniform(math.log(lo), math.log(hi), size=size))


def act_q(rng, dtype):
    """(scale, zero_point) of an activation tensor."""
    scale = float(log_uniform(rng, 0.004, 0.2))
    if dtype == "int8":
        return scale, int(rng.integers(-40, 41))
    if dtype == "uint8":
        return scale, int(rng.integers(90, 167))
    return scale / 256.0, 0  # int16: symmetric


def weights(rng, shape, dtype="int8"):
    if dtype == "float32":
        return rng.uniform(-1, 1, size=shape).astype(np.float32)
    if dtype == "uint8":
        return rng.integers(0, 256, size=shape).astype(np.uint8)
    return rng.integers(-127, 128, size=shape).astype(np.int8)


def bias_for(rng, n, dtype):
    if dtype == "float32":
        return rng.uniform(-1, 1, size=n).astype(np.float32)
    if dtype == "int64":
        return rng.integers(-(1 << 20), 1 << 20, size=n).astype(np.int64)
    return rng.integers(-(1 << 14), 1 << 14, size=n).astype(np.int32)


def output_scale(rng, in_scale, w_scale, depth, in_dtype):
    # |sum w * x| grows like 73 * 73 * sqrt(depth) for full-range int8 data
    # (int16 data spans 256x more codes at 1/256 of the scale).
    spread = 73.0 * 73.0 * math.sqrt(max(depth, 1))
    if in_dtype == "int16":
        spread *= 256.0
    target = 60.0 if in_dtype != "int16" else 60.0 * 256.0
    return float(in_scale * w_scale * spread / target *
                 log_uniform(rng, 0.5, 2.0))


def quant_types(dtype):
    """(activation dtype, weight dtype, bias dtype) of a quantized scheme."""
    return {"int8": ("int8", "int8", "int32"),
            "uint8": ("uint8", "uint8", "int32"),
            "int16": ("int16", "int8", "int64"),
            "hybrid": ("float32", "int8", "float32"),
            "float32": ("float32", "float32", "float32")}[dtype]


def window_out(padding, size, filt, stride, dilation=1):
    eff = (filt - 1) * dilation + 1
    if padding == SAME:
        return (size + stride - 1) // stride
    return (size - eff + stride) // stride


# ---- CONV_2D / DEPTHWISE_CONV_2D -----------------------------------------------

def conv_geometry(rng, depthwise):
    while True:
        g = dict(n=int(rng.integers(1, 3)), h=int(rng.integers(3, 10)),
                 w=int(rng.integers(3, 10)), cin=int(rng.choice([1, 2, 3, 8, 17])),
                 fh=int(rng.integers(1, 4)), fw=int(rng.integers(1, 4)),
                 sh=int(rng.integers(1, 3)), sw=int(rng.integers(1, 3)),
                 dh=int(rng.choice([1, 1, 2])), dw=int(rng.choice([1, 1, 2])),
                 padding=int(rng.choice([SAME, VALID])))
        g["cout"] = (g["cin"] * int(rng.choice([1, 1, 2])) if depthwise
                     else int(rng.choice([1, 4, 7, 16, 21])))
        g["oh"] = window_out(g["padding"], g["h"], g["fh"], g["sh"], g["dh"])
        g["ow"] = window_out(g["padding"], g["w"], g["fw"], g["sw"], g["dw"])
        if g["oh"] > 0 and g["ow"] > 0:
            return g


def conv_case(rng, dtype, depthwise, per_channel=True, bias=True,
              activation=None, name_extra="", geometry=None):
    g = conv_geometry(rng, depthwise)
    if geometry is not None:
        g.update(geometry)
        g["oh"] = window_out(g["padding"], g["h"], g["fh"], g["sh"], g["dh"])
        g["ow"] = window_out(g["padding"], g["w"], g["fw"], g["sw"], g["dw"])
    act_t, w_t, b_t = quant_types(dtype)
    activation = (int(rng.choice([ACT_NONE, ACT_RELU, ACT_RELU6,
                                  ACT_RELU_N1_TO_1]))
                  if activation is None else activation)
    in_s, in_zp = act_q(rng, act_t)
    cout = g["cout"]
    if depthwise:
        w_shape = [1, g["fh"], g["fw"], cout]
        depth = g["fh"] * g["fw"]
        axis = 3
    else:
        w_shape = [cout, g["fh"], g["fw"], g["cin"]]
        depth = g["fh"] * g["fw"] * g["cin"]
        axis = 0
    channels = cout if per_channel else 1
    w_scales = log_uniform(rng, 0.002, 0.05, size=channels)
    w_zp = int(rng.integers(100, 156)) if w_t == "uint8" else 0
    out_s = output_scale(rng, in_s, float(np.median(w_scales)), depth, act_t)
    out_zp = act_q(rng, act_t)[1]
    inputs = [T(act_t, [g["n"], g["h"], g["w"], g["cin"]], scale=in_s,
                zero_point=in_zp),
              T(w_t, w_shape, data=weights(rng, w_shape, w_t),
                scale=list(w_scales), zero_point=w_zp, axis=axis)]
    if bias:
        inputs.append(T(b_t, [cout], data=bias_for(rng, cout, b_t),
                        scale=list(in_s * w_scales), zero_point=0))
    outputs = [T(act_t, [g["n"], g["oh"], g["ow"], cout], scale=out_s,
                 zero_point=out_zp)]
    if dtype == "float32":
        for t in inputs + outputs:
            t.scale = t.zero_point = None
    if depthwise:
        o = schema.DepthwiseConv2DOptionsT()
        o.depthMultiplier = cout // g["cin"]
        op, opt = OP.DEPTHWISE_CONV_2D, OPT.DepthwiseConv2DOptions
        version = {"int8": 3, "uint8": 2, "int16": 5, "float32": 2}[dtype]
    else:
        o = schema.Conv2DOptionsT()
        op, opt = OP.CONV_2D, OPT.Conv2DOptions
        version = {"int8": 3, "uint8": 1, "int16": 4, "float32": 1}[dtype]
    o.padding, o.strideH, o.strideW = g["padding"], g["sh"], g["sw"]
    o.dilationHFactor, o.dilationWFactor = g["dh"], g["dw"]
    o.fusedActivationFunction = activation
    kind = "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D"
    name = (f"{kind}/{dtype}{'' if per_channel else '/per_tensor'}"
            f"{'' if bias else '/no_bias'}{name_extra}/"
            f"{g['n']}x{g['h']}x{g['w']}x{g['cin']}->{cout} "
            f"f{g['fh']}x{g['fw']} s{g['sh']}{g['sw']} d{g['dh']}{g['dw']} "
            f"p{g['padding']} a{activation}")
    # TFLite refuses quantized CONV_2D without a bias.
    return Case(name, op, version, inputs, outputs, opt, o, rng,
                expect_refusal=not bias and not depthwise and
                dtype != "float32",
                tolerance=float_tolerance if dtype == "float32" else None)


def conv_cases(rng):
    out = []
    for depthwise in (False, True):
        for dtype in ("int8", "uint8", "int16"):
            for i in range(8):
                per_channel = dtype != "uint8" and i % 4 != 3
                out.append(conv_case(rng, dtype, depthwise, per_channel,
                                     bias=i % 5 != 4))
            out.append(conv_case(rng, dtype, depthwise, dtype != "uint8",
                                 activation=ACT_TANH, name_extra="/tanh"))
    # Float geometries wide enough for the CPU plugin's fast paths: CONV_2D's
    # row-tap path (interior rows read in place, >= 8 input channels) and
    # the 3x3 depthwise row (<= 32 channels) and pixel kernels, with masked
    # channel tails, strides, dilation and borders. Their own generator, so
    # the cases after them stay as they were.
    wide_rng = np.random.default_rng(12)
    for depthwise, geometry in (
            (False, dict(n=1, h=12, w=20, cin=16, cout=8, fh=3, fw=3, sh=1,
                         sw=1, dh=1, dw=1, padding=SAME)),
            (False, dict(n=2, h=13, w=23, cin=9, cout=21, fh=3, fw=3, sh=2,
                         sw=2, dh=1, dw=1, padding=SAME)),
            (False, dict(n=1, h=11, w=30, cin=8, cout=16, fh=5, fw=3, sh=1,
                         sw=2, dh=2, dw=1, padding=VALID)),
            (True, dict(n=1, h=9, w=21, cin=20, cout=20, fh=3, fw=3, sh=1,
                        sw=1, dh=1, dw=1, padding=SAME)),
            (True, dict(n=2, h=10, w=19, cin=24, cout=24, fh=3, fw=3, sh=2,
                        sw=2, dh=1, dw=1, padding=SAME)),
            (True, dict(n=1, h=9, w=16, cin=13, cout=13, fh=3, fw=3, sh=1,
                        sw=1, dh=2, dw=2, padding=SAME)),
            (True, dict(n=1, h=7, w=12, cin=45, cout=45, fh=3, fw=3, sh=1,
                        sw=1, dh=1, dw=1, padding=SAME))):
        for act in (ACT_NONE, ACT_RELU6):
            out.append(conv_case(wide_rng, "float32", depthwise,
                                 activation=act, name_extra="/wide",
                                 geometry=geometry))
    # Fused TANH / SIGN_BIT on float convolutions: as LiteRT.
    for depthwise in (False, True):
        for act in (ACT_TANH, ACT_SIGN_BIT):
            out.append(conv_case(rng, "float32", depthwise, activation=act,
                                 name_extra="/float_act"))
    # An int32 bias on int16x8 CONV_2D: LiteRT reads it as int64 (reading
    # past the buffer) unless quantized_bias_type says INT32, an option
    # plugins cannot see; Kiln must refuse it.
    for _ in range(2):
        c = conv_case(rng, "int16", False, name_extra="/int32_bias")
        c.inputs[2].data = c.inputs[2].data.astype(np.int32)
        c.inputs[2].dtype = "int32"
        c.expect_kiln_refusal = True
        out.append(c)
    # Activation bounds that overflow int32 once quantized (6 or 1 / output
    # scale): LiteRT refuses them (mobilenet_v2_int16x8's DEPTHWISE_CONV_2D),
    # so must Kiln; RELU's bound 0 stays fine.
    for depthwise in (False, True):
        for act in (ACT_RELU6, ACT_RELU_N1_TO_1, ACT_RELU):
            c = conv_case(rng, "int16", depthwise, activation=act,
                          name_extra="/tiny_output_scale")
            c.outputs[0].scale = 4e-10
            c.expect_refusal = act != ACT_RELU
            out.append(c)
    return out


# ---- FULLY_CONNECTED -----------------------------------------------------------

def fc_case(rng, dtype, per_channel=False, bias=True, keep_num_dims=False,
            activation=None, units=None):
    act_t, w_t, b_t = quant_types(dtype)
    activation = (int(rng.choice([ACT_NONE, ACT_RELU, ACT_RELU6,
                                  ACT_RELU_N1_TO_1]))
                  if activation is None else activation)
    batch = [int(rng.integers(1, 4)), int(rng.integers(1, 5))]
    depth = int(rng.choice([1, 5, 16, 33, 100]))
    units = int(rng.choice([1, 3, 16, 19])) if units is None else units
    in_s, in_zp = act_q(rng, act_t)
    channels = units if per_channel else 1
    w_scales = log_uniform(rng, 0.002, 0.05, size=channels)
    w_zp = int(rng.integers(100, 156)) if w_t == "uint8" else 0
    out_s = output_scale(rng, in_s, float(np.median(w_scales)), depth, act_t)
    out_zp = act_q(rng, act_t)[1]
    inputs = [T(act_t, batch + [depth], scale=in_s, zero_point=in_zp),
              T(w_t, [units, depth], data=weights(rng, [units, depth], w_t),
                scale=list(w_scales), zero_point=w_zp, axis=0)]
    if bias:
        inputs.append(T(b_t, [units], data=bias_for(rng, units, b_t),
                        scale=list(in_s * w_scales), zero_point=0))
    out_shape = batch + [units] if keep_num_dims else [batch[0] * batch[1], units]
    outputs = [T(act_t, out_shape, scale=out_s, zero_point=out_zp)]
    if dtype == "float32":
        for t in inputs + outputs:
            t.scale = t.zero_point = None
    o = schema.FullyConnectedOptionsT()
    o.fusedActivationFunction = activation
    o.keepNumDims = keep_num_dims
    version = {"int8": 4, "uint8": 1, "int16": 7, "float32": 1}[dtype]
    if keep_num_dims:
        version = max(version, 5)
    if not bias:
        version = max(version, 6)
    name = (f"FULLY_CONNECTED/{dtype}{'/per_channel' if per_channel else ''}"
            f"{'' if bias else '/no_bias'}{'/keep_dims' if keep_num_dims else ''}"
            f"/{batch}x{depth}->{units} a{activation}")
    # TFLite refuses a fused TANH / SIGN_BIT on FULLY_CONNECTED.
    return Case(name, OP.FULLY_CONNECTED, version, inputs, outputs,
                OPT.FullyConnectedOptions, o, rng,
                expect_refusal=activation in (ACT_TANH, ACT_SIGN_BIT),
                tolerance=float_tolerance if dtype == "float32" else None)


def fc_cases(rng):
    out = []
    for dtype in ("int8", "uint8", "int16"):
        for i in range(6):
            out.append(fc_case(rng, dtype,
                               per_channel=dtype != "uint8" and i % 2 == 1,
                               bias=i % 3 != 2, keep_num_dims=i == 4))
    out += [fc_case(rng, "float32", activation=a)
            for a in (ACT_TANH, ACT_SIGN_BIT)]
    return out


# ---- hybrid (float activations, int8 weights) -----------------------------

def exact(reference):
    """Hybrid results reproduce LiteRT's arithmetic: no tolerance."""
    return 0.0


def tanh_ulps(reference):
    """A fused TANH: LiteRT evaluates Eigen's rational tanh approximation,
    Kiln std::tanh; they differ by a few float ulps."""
    return 4 * np.finfo(np.float32).eps * np.maximum(np.abs(reference), 1e-30)


def hybrid_fc_case(rng, per_channel, asymmetric, bias=True, activation=None,
                   keep_num_dims=False):
    activation = (int(rng.choice([ACT_NONE, ACT_RELU, ACT_RELU6,
                                  ACT_RELU_N1_TO_1, ACT_TANH, ACT_SIGN_BIT]))
                  if activation is None else activation)
    batch = [int(rng.integers(1, 4)), int(rng.integers(1, 5))]
    depth = int(rng.choice([1, 5, 16, 33, 100, 300]))
    units = int(rng.choice([1, 3, 16, 19]))
    channels = units if per_channel else 1
    w_scales = log_uniform(rng, 0.002, 0.05, size=channels)
    inputs = [T("float32", batch + [depth]),
              T("int8", [units, depth], data=weights(rng, [units, depth]),
                scale=list(w_scales), zero_point=0, axis=0)]
    if bias:
        inputs.append(T("float32", [units], data=bias_for(rng, units,
                                                          "float32")))
    out_shape = batch + [units] if keep_num_dims else [batch[0] * batch[1],
                                                      units]
    o = schema.FullyConnectedOptionsT()
    o.fusedActivationFunction = activation
    o.keepNumDims = keep_num_dims
    o.asymmetricQuantizeInputs = asymmetric
    version = 12 if per_channel else (9 if asymmetric else 3)
    return Case(f"FULLY_CONNECTED/hybrid{'/per_channel' if per_channel else ''}"
                f"{'/asymmetric' if asymmetric else ''}"
                f"{'' if bias else '/no_bias'}/{batch}x{depth}->{units} "
                f"a{activation}", OP.FULLY_CONNECTED, version, inputs,
                [T("float32", out_shape)], OPT.FullyConnectedOptions, o, rng,
                tolerance=tanh_ulps if activation == ACT_TANH else exact)


def hybrid_conv_case(rng, depthwise, scales, bias=True, activation=None):
    """scales: "per_tensor", "per_channel" or "equal" (per-channel scales
    that are all equal: LiteRT's CONV_2D takes its per-tensor path then)."""
    g = conv_geometry(rng, depthwise)
    if depthwise and scales == "per_tensor":
        g["cout"] = g["cin"] = 1  # LiteRT reads one scale per channel
    activation = (int(rng.choice([ACT_NONE, ACT_RELU, ACT_RELU6,
                                  ACT_RELU_N1_TO_1, ACT_TANH]))
                  if activation is None else activation)
    cout = g["cout"]
    if depthwise:
        w_shape, axis = [1, g["fh"], g["fw"], cout], 3
    else:
        w_shape, axis = [cout, g["fh"], g["fw"], g["cin"]], 0
    if scales == "per_tensor":
        w_scales = log_uniform(rng, 0.002, 0.05, size=1)
    elif scales == "equal":
        w_scales = np.repeat(log_uniform(rng, 0.002, 0.05, size=1), cout)
    else:
        w_scales = log_uniform(rng, 0.002, 0.05, size=cout)
    inputs = [T("float32", [g["n"], g["h"], g["w"], g["cin"]]),
              T("int8", w_shape, data=weights(rng, w_shape),
                scale=list(w_scales), zero_point=0, axis=axis)]
    if bias:
        inputs.append(T("float32", [cout], data=bias_for(rng, cout,
                                                         "float32")))
    per_channel = scales != "per_tensor"
    if depthwise:
        o = schema.DepthwiseConv2DOptionsT()
        o.depthMultiplier = cout // g["cin"]
        op, opt, version = (OP.DEPTHWISE_CONV_2D, OPT.DepthwiseConv2DOptions,
                            6 if per_channel else 4)
    else:
        o = schema.Conv2DOptionsT()
        op, opt, version = (OP.CONV_2D, OPT.Conv2DOptions,
                            5 if per_channel else 2)
    o.padding, o.strideH, o.strideW = g["padding"], g["sh"], g["sw"]
    o.dilationHFactor, o.dilationWFactor = g["dh"], g["dw"]
    o.fusedActivationFunction = activation
    kind = "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D"
    return Case(f"{kind}/hybrid/{scales}{'' if bias else '/no_bias'}/"
                f"{g['n']}x{g['h']}x{g['w']}x{g['cin']}->{cout} "
                f"f{g['fh']}x{g['fw']} s{g['sh']}{g['sw']} d{g['dh']}{g['dw']} "
                f"p{g['padding']} a{activation}", op, version, inputs,
                [T("float32", [g["n"], g["oh"], g["ow"], cout])], opt, o, rng,
                # LiteRT refuses CONV_2D without a bias.
                expect_refusal=not bias and not depthwise, tolerance=exact)


def hybrid_batch_matmul_case(rng, per_channel, asymmetric, const_rhs=True,
                             adj_x=False, adj_y=False):
    m, depth, n = (int(rng.integers(1, 6)), int(rng.choice([1, 7, 32, 65])),
                   int(rng.integers(1, 9)))
    lhs_batch = [int(rng.integers(1, 4))]
    rhs_batch = [1 if rng.integers(2) else lhs_batch[0]]
    lhs_shape = lhs_batch + ([depth, m] if adj_x else [m, depth])
    rhs_shape = rhs_batch + ([n, depth] if adj_y else [depth, n])
    w_scales = log_uniform(rng, 0.002, 0.05, size=n if per_channel else 1)
    rhs = T("int8", rhs_shape, data=weights(rng, rhs_shape) if const_rhs
            else None, scale=list(w_scales), zero_point=0,
            axis=1 if adj_y else 2)
    o = schema.BatchMatMulOptionsT()
    o.adjX, o.adjY, o.asymmetricQuantizeInputs = adj_x, adj_y, asymmetric
    return Case(f"BATCH_MATMUL/hybrid{'/per_channel' if per_channel else ''}"
                f"{'/asymmetric' if asymmetric else ''}"
                f"{'' if const_rhs else '/rhs_input'}/{lhs_shape}x{rhs_shape}"
                f" adj{int(adj_x)}{int(adj_y)}", OP.BATCH_MATMUL,
                4 if asymmetric else 1, [T("float32", lhs_shape), rhs],
                [T("float32", lhs_batch + [m, n])], OPT.BatchMatMulOptions, o,
                rng, tolerance=exact)


def hybrid_cases(rng):
    out = [hybrid_batch_matmul_case(rng, per_channel=i % 2 == 1,
                                    asymmetric=i % 4 >= 2, adj_x=i == 5,
                                    adj_y=i >= 6) for i in range(8)]
    out += [transpose_conv_case(rng, "hybrid", per_channel=i % 2 == 0,
                                bias=i % 3 != 2,
                                activation=[ACT_NONE, ACT_RELU, ACT_RELU6][i % 3])
            for i in range(8)]
    for depthwise in (False, True):
        for scales in ("per_tensor", "per_channel", "equal"):
            for i in range(4):
                out.append(hybrid_conv_case(rng, depthwise, scales,
                                            bias=i != 3))
    for per_channel in (False, True):
        for asymmetric in (False, True):
            for i in range(4):
                out.append(hybrid_fc_case(rng, per_channel, asymmetric,
                                          bias=i != 3, keep_num_dims=i == 2))
    return out


# ---- AVERAGE_POOL_2D / MAX_POOL_2D -------------------------------------------

def pool_case(rng, dtype, op, activation=None):
    activation = (int(rng.choice([ACT_NONE, ACT_RELU, ACT_RELU6,
                                  ACT_RELU_N1_TO_1]))
                  if activation is None else activation)
    n, h, w, c = (int(rng.integers(1, 3)), int(rng.integers(2, 9)),
                  int(rng.integers(2, 9)), int(rng.choice([1, 3, 8, 19])))
    fh, fw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    padding = int(rng.choice([SAME, VALID]))
    if padding == VALID:
        fh, fw = min(fh, h), min(fw, w)
    oh, ow = window_out(padding, h, fh, sh), window_out(padding, w, fw, sw)
    scale, zp = act_q(rng, dtype)
    o = schema.Pool2DOptionsT()
    o.padding, o.strideH, o.strideW = padding, sh, sw
    o.filterHeight, o.filterWidth = fh, fw
    o.fusedActivationFunction = activation
    version = {"int8": 2, "uint8": 1, "int16": 3, "float32": 1}[dtype]
    kind = "MAX_POOL_2D" if op == OP.MAX_POOL_2D else "AVERAGE_POOL_2D"
    q = {} if dtype == "float32" else dict(scale=scale, zero_point=zp)
    return Case(f"{kind}/{dtype}/{n}x{h}x{w}x{c} f{fh}x{fw} s{sh}{sw} "
                f"p{padding} a{activation}", op, version,
                [T(dtype, [n, h, w, c], **q)],
                [T(dtype, [n, oh, ow, c], **q)], OPT.Pool2DOptions, o, rng,
                tolerance=float_tolerance if dtype == "float32" else None)


def float_tolerance(reference):
    return 1e-5 + 1e-5 * np.abs(reference)


def pool_cases(rng):
    out = []
    for op in (OP.AVERAGE_POOL_2D, OP.MAX_POOL_2D):
        for dtype in ("int8", "uint8", "int16"):
            out += [pool_case(rng, dtype, op) for _ in range(4)]
        # Fused TANH / SIGN_BIT: TFLite's pooling kernels ignore them.
        out += [pool_case(rng, t, op, a) for t in ("int8", "float32")
                for a in (ACT_TANH, ACT_SIGN_BIT)]
    return out


# ---- SOFTMAX ----------------------------------------------------------------

def softmax_case(rng, in_t, out_t, beta=1.0, out_q=None, name_extra="",
                 in_scale=None, shape=None):
    if shape is None:
        shape = [int(rng.integers(1, 4)),
                 int(rng.choice([1, 3, 10, 100, 1001]))]
        if rng.integers(2):
            shape = [int(rng.integers(1, 3))] + shape
    in_s, in_zp = act_q(rng, in_t)
    if in_t == "int16":
        in_s = float(log_uniform(rng, 1e-4, 3e-3))
    if in_scale is not None:
        in_s = in_scale
    if out_q is None:
        out_q = {"int8": (1 / 256, -128), "uint8": (1 / 256, 0),
                 "int16": (1 / 32768, 0)}[out_t]
    o = schema.SoftmaxOptionsT()
    o.beta = beta
    version = {"int8": 2, "uint8": 1, "int16": 3}[in_t]
    return Case(f"SOFTMAX/{in_t}->{out_t}{name_extra}/{shape} beta{beta:.3g}",
                OP.SOFTMAX, version,
                [T(in_t, shape, scale=in_s, zero_point=in_zp)],
                [T(out_t, shape, scale=out_q[0], zero_point=out_q[1])],
                OPT.SoftmaxOptions, o, rng)


def softmax_cases(rng):
    out = []
    for in_t, out_t in (("int8", "int8"), ("uint8", "uint8"),
                        ("int16", "int16"), ("int8", "int16")):
        for _ in range(4):
            beta = float(rng.choice([1.0, 1.0, 0.5, 2.7]))
            out.append(softmax_case(rng, in_t, out_t, beta))
    # TFLite refuses other output quantization for int8 / int16 outputs.
    c = softmax_case(rng, "int8", "int8", out_q=(1 / 128, -128),
                     name_extra="/bad_output_scale")
    c.expect_refusal = True
    out.append(c)
    # beta * input scale below 2^-26: LiteRT's reference kernel aborts, its
    # optimized kernel (and Kiln) use a float exp table.
    for in_t, out_t in (("int8", "int8"), ("uint8", "uint8"),
                        ("int8", "int16")):
        for _ in range(2):
            c = softmax_case(rng, in_t, out_t, name_extra="/tiny_scale",
                             in_scale=float(log_uniform(rng, 1e-10, 1.4e-8)))
            c.oracle = "BUILTIN_WITHOUT_DEFAULT_DELEGATES"
            out.append(c)
    return out


# ---- LOG_SOFTMAX / L2_NORMALIZATION ------------------------------------------

def last_axis_case(rng, op, dtype, out_q, activation=ACT_NONE, name_extra=""):
    shape = [int(rng.integers(1, 4)), int(rng.choice([1, 2, 3, 10, 100, 300]))]
    if rng.integers(2):
        shape = [int(rng.integers(1, 3))] + shape
    in_s, in_zp = act_q(rng, dtype)
    if op == OP.LOG_SOFTMAX:
        kind, opt, o = "LOG_SOFTMAX", OPT.LogSoftmaxOptions, \
            schema.LogSoftmaxOptionsT()
    else:
        kind, opt, o = "L2_NORMALIZATION", OPT.L2NormOptions, \
            schema.L2NormOptionsT()
        o.fusedActivationFunction = activation
    q = dict(scale=out_q[0], zero_point=out_q[1]) if dtype != "float32" else {}
    qin = dict(scale=in_s, zero_point=in_zp) if dtype != "float32" else {}
    version = 2 if dtype == "int8" else 1
    return Case(f"{kind}/{dtype}{name_extra}/{shape} a{activation}", op,
                version, [T(dtype, shape, **qin)], [T(dtype, shape, **q)],
                opt, o, rng,
                tolerance=float_tolerance if dtype == "float32" else None)


def last_axis_cases(rng):
    out = []
    for _ in range(4):
        out.append(last_axis_case(rng, OP.LOG_SOFTMAX, "int8", (16 / 256, 127)))
        out.append(last_axis_case(rng, OP.LOG_SOFTMAX, "uint8", (16 / 256, 255)))
        out.append(last_axis_case(rng, OP.L2_NORMALIZATION, "int8",
                                  (1 / 128, 0)))
        out.append(last_axis_case(rng, OP.L2_NORMALIZATION, "uint8",
                                  (1 / 128, 128)))
    # Output quantization other than TFLite's fixed one, and a fused
    # activation on L2_NORMALIZATION: refused by both.
    bad = [last_axis_case(rng, OP.LOG_SOFTMAX, "int8", (1 / 16, 0),
                          name_extra="/bad_output"),
           last_axis_case(rng, OP.L2_NORMALIZATION, "int8", (1 / 64, 0),
                          name_extra="/bad_output"),
           last_axis_case(rng, OP.L2_NORMALIZATION, "float32", None,
                          activation=ACT_RELU, name_extra="/activation")]
    for c in bad:
        c.expect_refusal = True
    return out + bad


# ---- MEAN / SUM / REDUCE_* ----------------------------------------------------

REDUCE_OPS = {"MEAN": OP.MEAN, "SUM": OP.SUM, "REDUCE_MAX": OP.REDUCE_MAX,
              "REDUCE_MIN": OP.REDUCE_MIN, "REDUCE_PROD": OP.REDUCE_PROD}


def reduce_case(rng, kind, dtype, same_quant=False, shape_axes=None):
    if shape_axes is not None:
        shape, axes = shape_axes
        rank = len(shape)
    else:
        rank = int(rng.integers(1, 5))
        shape = [int(rng.integers(1, 6)) for _ in range(rank)]
    if shape_axes is not None:
        pass  # the caller's axes
    elif kind == "MEAN" and rank == 4 and rng.integers(2):
        axes = [1, 2]  # the global-average-pool pattern of converted models
    else:
        n_axes = int(rng.integers(1, rank + 1))
        axes = sorted(rng.choice(rank, size=n_axes, replace=False).tolist())
        axes = [a - rank if rng.integers(2) else a for a in axes]
    keep_dims = bool(rng.integers(2))
    norm = [a % rank for a in axes]
    out_shape = [1 if d in norm else shape[d] for d in range(rank)
                 if keep_dims or d not in norm]
    in_s, in_zp = act_q(rng, dtype)
    if same_quant:
        out_s, out_zp = in_s, in_zp
    else:
        out_s, out_zp = act_q(rng, dtype)
        if kind == "SUM":
            out_s *= float(np.prod([shape[d] for d in norm])) ** 0.5
        if kind == "REDUCE_PROD":
            out_s = float(in_s ** min(len(norm), 2)) * 64
    o = schema.ReducerOptionsT()
    o.keepDims = keep_dims
    version = {"int8": 2, "uint8": 1, "int16": 3 if kind in (
        "MEAN", "REDUCE_MAX", "REDUCE_MIN") else 2}[dtype]
    case = Case(f"{kind}/{dtype}/{shape} axes{axes} keep{int(keep_dims)}",
                REDUCE_OPS[kind], version,
                [T(dtype, shape, scale=in_s, zero_point=in_zp),
                 T("int32", [len(axes)], data=np.array(axes, np.int32))],
                [T(dtype, out_shape, scale=out_s, zero_point=out_zp)],
                OPT.ReducerOptions, o, rng)
    if kind == "SUM" and dtype != "uint8":
        # LiteRT's reference SUM returns garbage for int8 / int16 (its uint8
        # path and MEAN, which share the code, are right); its optimized
        # kernel requantizes in float, a code away from the reference's
        # fixed point at rounding ties.
        case.oracle = "BUILTIN_WITHOUT_DEFAULT_DELEGATES"
        case.int_tolerance = 1
    return case


def reduce_cases(rng):
    out = []
    for dtype in ("int8", "uint8", "int16"):
        for _ in range(6):
            out.append(reduce_case(rng, "MEAN", dtype))
        for _ in range(3):
            out.append(reduce_case(rng, "SUM", dtype))
        for kind in ("REDUCE_MAX", "REDUCE_MIN"):
            out += [reduce_case(rng, kind, dtype, same_quant=True)
                    for _ in range(2)]
        if dtype != "uint8":
            out += [reduce_case(rng, "REDUCE_PROD", dtype) for _ in range(3)]
    return out


# ---- RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR --------------------------------

def resize_case(rng, dtype, bilinear, mode):
    n, h, w, c = (int(rng.integers(1, 3)), int(rng.integers(1, 7)),
                  int(rng.integers(1, 7)), int(rng.choice([1, 3, 8])))
    oh, ow = int(rng.integers(1, 15)), int(rng.integers(1, 15))
    scale, zp = act_q(rng, dtype)
    if bilinear:
        o = schema.ResizeBilinearOptionsT()
        op, opt, kind = (OP.RESIZE_BILINEAR, OPT.ResizeBilinearOptions,
                         "RESIZE_BILINEAR")
    else:
        o = schema.ResizeNearestNeighborOptionsT()
        op, opt, kind = (OP.RESIZE_NEAREST_NEIGHBOR,
                         OPT.ResizeNearestNeighborOptions,
                         "RESIZE_NEAREST_NEIGHBOR")
    o.alignCorners = mode == "align"
    o.halfPixelCenters = mode == "half"
    version = {"int8": 2, "uint8": 1, "int16": 4}[dtype]
    if mode != "none":
        version = max(version, 3)
    return Case(f"{kind}/{dtype}/{n}x{h}x{w}x{c}->{oh}x{ow} {mode}", op,
                version,
                [T(dtype, [n, h, w, c], scale=scale, zero_point=zp),
                 T("int32", [2], data=np.array([oh, ow], np.int32))],
                [T(dtype, [n, oh, ow, c], scale=scale, zero_point=zp)],
                opt, o, rng)


def resize_cases(rng):
    return [resize_case(rng, dtype, bilinear, mode)
            for dtype in ("int8", "uint8", "int16")
            for bilinear in (True, False)
            for mode in ("none", "align", "half")]


# ---- TRANSPOSE_CONV --------------------------------------------------------

def transpose_conv_case(rng, dtype, per_channel=True, bias=True,
                        activation=ACT_NONE, geometry=None):
    act_t, w_t, b_t = quant_types(dtype)
    n, h, w = int(rng.integers(1, 3)), int(rng.integers(1, 6)), int(
        rng.integers(1, 6))
    cin, cout = int(rng.choice([1, 3, 8, 17])), int(rng.choice([1, 4, 16]))
    fh, fw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    padding = int(rng.choice([SAME, VALID]))
    if geometry is not None:
        n, h, w, cin, cout, fh, fw, sh, sw, padding = geometry
    if padding == SAME:
        oh, ow = h * sh, w * sw
    else:
        oh, ow = (h - 1) * sh + fh, (w - 1) * sw + fw
    in_s, in_zp = act_q(rng, act_t)
    channels = cout if per_channel else 1
    w_scales = log_uniform(rng, 0.002, 0.05, size=channels)
    w_zp = int(rng.integers(100, 156)) if w_t == "uint8" else 0
    depth = max(1, cin * fh * fw // (sh * sw))
    out_s = output_scale(rng, in_s, float(np.median(w_scales)), depth, act_t)
    out_zp = act_q(rng, act_t)[1]
    inputs = [T("int32", [4], data=np.array([n, oh, ow, cout], np.int32)),
              T(w_t, [cout, fh, fw, cin], data=weights(rng, [cout, fh, fw, cin], w_t),
                scale=list(w_scales), zero_point=w_zp, axis=0),
              T(act_t, [n, h, w, cin], scale=in_s, zero_point=in_zp)]
    if bias:
        inputs.append(T(b_t, [cout], data=bias_for(rng, cout, b_t),
                        scale=list(in_s * w_scales), zero_point=0))
    outputs = [T(act_t, [n, oh, ow, cout], scale=out_s, zero_point=out_zp)]
    # Float tensors carry no quantization (hybrid: all but the filter).
    float_tensors = {"float32": inputs[1:] + outputs,
                     "hybrid": inputs[2:] + outputs}.get(dtype, [])
    for t in float_tensors:
        t.scale = t.zero_point = None
    o = schema.TransposeConvOptionsT()
    o.padding, o.strideH, o.strideW = padding, sh, sw
    o.fusedActivationFunction = activation
    version = 4 if activation else (3 if bias else 2)
    return Case(f"TRANSPOSE_CONV/{dtype}{'' if per_channel else '/per_tensor'}"
                f"{'' if bias else '/no_bias'}/{n}x{h}x{w}x{cin}->{oh}x{ow}x"
                f"{cout} f{fh}x{fw} s{sh}{sw} p{padding} a{activation}",
                OP.TRANSPOSE_CONV, version, inputs, outputs,
                OPT.TransposeConvOptions, o, rng,
                tolerance={"float32": float_tolerance,
                           "hybrid": exact}.get(dtype))


def transpose_conv_cases(rng):
    out = []
    for dtype in ("int8", "uint8", "int16"):
        for i in range(5):
            out.append(transpose_conv_case(
                rng, dtype, per_channel=dtype != "uint8" and i != 3,
                bias=i != 2))
        out += [transpose_conv_case(rng, dtype, per_channel=dtype != "uint8",
                                    activation=a)
                for a in (ACT_RELU, ACT_RELU6)]
    out += [transpose_conv_case(rng, "float32", activation=a)
            for a in (ACT_RELU, ACT_TANH, ACT_SIGN_BIT)]
    # Large enough to split into bands of output rows on the pool: a
    # U-Net's 2x2 stride-2 upsampling (windows that tile the output), windows
    # within the stride leaving gaps, overlapping 3x3 / 4x4 windows, two
    # images, odd sizes.
    for dtype, geometry in (
            ("int8", (1, 16, 16, 16, 8, 2, 2, 2, 2, VALID)),
            ("uint8", (2, 12, 9, 24, 8, 2, 2, 2, 2, SAME)),
            ("int8", (1, 13, 10, 64, 8, 2, 2, 2, 2, VALID)),
            ("int8", (1, 20, 18, 24, 16, 1, 2, 2, 3, SAME)),
            ("int8", (1, 24, 20, 32, 16, 3, 3, 2, 2, SAME)),
            ("int8", (2, 13, 11, 17, 16, 3, 3, 1, 1, VALID)),
            ("uint8", (1, 9, 7, 40, 16, 4, 4, 3, 2, SAME)),
            ("int16", (1, 24, 20, 32, 16, 3, 3, 2, 2, SAME))):
        out.append(transpose_conv_case(rng, dtype,
                                       per_channel=dtype != "uint8",
                                       geometry=geometry))
    return out


# ---- BATCH_MATMUL ------------------------------------------------------------

def batch_matmul_case(rng, dtype, const_rhs=False, adj_x=False, adj_y=False,
                      dims=None):
    if dims is not None:  # (m, depth, n, lhs_batch, rhs_batch)
        m, depth, n, lhs_batch, rhs_batch = dims
    else:
        m, depth, n = (int(rng.integers(1, 6)), int(rng.choice([1, 7, 32])),
                       int(rng.choice([1, 3, 8, 13, 24])))
        lhs_batch = [int(rng.integers(1, 3)), int(rng.integers(1, 4))]
        rhs_batch = [1 if rng.integers(2) else lhs_batch[0], lhs_batch[1]]
    if const_rhs:
        rhs_batch = rhs_batch[1:]
    lhs_shape = lhs_batch + ([depth, m] if adj_x else [m, depth])
    rhs_shape = rhs_batch + ([n, depth] if adj_y else [depth, n])
    l_s, l_zp = act_q(rng, dtype)
    r_s, r_zp = act_q(rng, dtype)
    # Both operands span the whole type (int16: 256x more codes than weights).
    out_s = output_scale(rng, l_s, r_s, depth, dtype) * (
        256.0 if dtype == "int16" else 1.0)
    out_zp = act_q(rng, dtype)[1]
    rhs_data = (lso.random_values(rng, dtype, rhs_shape) if const_rhs
                else None)
    inputs = [T(dtype, lhs_shape, scale=l_s, zero_point=l_zp),
              T(dtype, rhs_shape, data=rhs_data, scale=r_s, zero_point=r_zp)]
    outputs = [T(dtype, lhs_batch + [m, n], scale=out_s, zero_point=out_zp)]
    o = schema.BatchMatMulOptionsT()
    o.adjX, o.adjY = adj_x, adj_y
    version = {"int8": 2, "int16": 3, "uint8": 2}[dtype]
    # TFLite has no uint8 BATCH_MATMUL.
    return Case(f"BATCH_MATMUL/{dtype}{'/const_rhs' if const_rhs else ''}"
                f"/{lhs_shape}x{rhs_shape} adj{int(adj_x)}{int(adj_y)}",
                OP.BATCH_MATMUL, version, inputs, outputs,
                OPT.BatchMatMulOptions, o, rng,
                expect_refusal=dtype == "uint8")


def batch_matmul_cases(rng):
    return [batch_matmul_case(rng, dtype, const_rhs=i % 2 == 1,
                              adj_x=i in (1, 2), adj_y=i >= 2)
            for dtype in ("int8", "int16") for i in range(4)] + [
                batch_matmul_case(rng, "uint8")]


# ---- ARG_MAX / ARG_MIN ---------------------------------------------------------

def arg_case(rng, dtype, arg_max):
    rank = int(rng.integers(1, 5))
    shape = [int(rng.integers(1, 6)) for _ in range(rank)]
    axis = int(rng.integers(-rank, rank))
    out_shape = [d for i, d in enumerate(shape) if i != axis % rank]
    out_type = str(rng.choice(["int32", "int64"]))
    if arg_max:
        op, opt, o, kind = (OP.ARG_MAX, OPT.ArgMaxOptions,
                            schema.ArgMaxOptionsT(), "ARG_MAX")
    else:
        op, opt, o, kind = (OP.ARG_MIN, OPT.ArgMinOptions,
                            schema.ArgMinOptionsT(), "ARG_MIN")
    o.outputType = lso.TYPES[out_type]
    q = {} if dtype == "bool" else dict(zip(("scale", "zero_point"),
                                            act_q(rng, dtype)))
    version = {"uint8": 1, "int8": 2, "bool": 3}[dtype]
    case = Case(f"{kind}/{dtype}/{shape} axis{axis} {out_type}", op, version,
                [T(dtype, shape, **q),
                 T("int32", [1], data=np.array([axis], np.int32))],
                [T(out_type, out_shape)], opt, o, rng)
    if dtype == "bool":
        # LiteRT's reference resolver registers ARG_MAX/ARG_MIN up to v2 only.
        case.oracle = "BUILTIN_WITHOUT_DEFAULT_DELEGATES"
    return case


def arg_cases(rng):
    return [arg_case(rng, dtype, arg_max) for dtype in ("int8", "uint8", "bool")
            for arg_max in (True, False) for _ in range(3)]


# ---- DENSIFY (sparse constants) --------------------------------------------------

def sparse_encode(dense, traversal, block_map, block_size, csr_levels):
    """TFLite sparsity of `dense`: SparsityParametersT and the stored values.

    Block dimension b splits dense dimension block_map[b] into blocks of
    block_size[b]; traversal lists the expanded dimensions (dense ones
    first, then the blocks in order); csr_levels are the traversal levels
    stored as SPARSE_CSR (an index is kept when its subtree holds a
    nonzero), the others DENSE."""
    n = dense.ndim
    split, axes_outer, axes_block = [], [], []
    for d in range(n):
        if d in block_map:
            bs = block_size[block_map.index(d)]
            split += [dense.shape[d] // bs, bs]
            axes_outer.append(len(split) - 2)
            axes_block.append(len(split) - 1)
        else:
            split.append(dense.shape[d])
            axes_outer.append(len(split) - 1)
    expanded = dense.reshape(split).transpose(axes_outer + axes_block)
    ordered = expanded.transpose(traversal)
    levels = len(traversal)
    segments = {lv: [0] for lv in csr_levels}
    indices = {lv: [] for lv in csr_levels}
    values = []

    def visit(level, sub):
        if level == levels:
            values.append(sub)
            return
        for i in range(sub.shape[0]):
            if level in csr_levels:
                if not np.any(sub[i]):
                    continue
                indices[level].append(i)
            visit(level + 1, sub[i])
        if level in csr_levels:
            segments[level].append(len(indices[level]))

    visit(0, ordered)
    sp = schema.SparsityParametersT()
    sp.traversalOrder = list(traversal)
    sp.blockMap = list(block_map)
    sp.dimMetadata = []
    for lv in range(levels):
        m = schema.DimensionMetadataT()
        if lv in csr_levels:
            m.format = schema.DimensionType.SPARSE_CSR
            for attr, vals in (("arraySegments", segments[lv]),
                               ("arrayIndices", indices[lv])):
                v = schema.Int32VectorT()
                v.values = list(vals)
                setattr(m, attr + "Type", schema.SparseIndexVector.Int32Vector)
                setattr(m, attr, v)
        else:
            m.format = schema.DimensionType.DENSE
            m.denseSize = int(ordered.shape[lv])
        sp.dimMetadata.append(m)
    return sp, np.array(values, dense.dtype)


DENSIFY_LAYOUTS = [
    # (dense shape, traversal, block_map, block_size, csr levels)
    ([6, 8], [0, 1], [], [], [1]),
    ([5, 7], [1, 0], [], [], [1]),
    ([4, 8], [0, 1, 2], [1], [4], [1]),  # 1x4 blocks, as sparse FC weights
    ([6, 4], [0, 1, 2, 3], [0, 1], [2, 2], [1]),
    ([3, 4, 5], [2, 0, 1], [], [], [1, 2]),
]


def densify_case(rng, dtype, layout):
    shape, traversal, block_map, block_size, csr = layout
    dense = rng.uniform(-1, 1, size=shape)
    dense[rng.uniform(size=shape) < 0.6] = 0
    if dtype == "int8":
        dense = np.round(dense * 100)
    dense = dense.astype(dtype)
    sparsity, values = sparse_encode(dense, traversal, block_map, block_size,
                                     csr)
    return Case(f"DENSIFY/{dtype}/{shape} order{traversal} blocks{block_map}",
                OP.DENSIFY, 1,
                [T(dtype, shape, data=values, sparsity=sparsity)],
                [T(dtype, shape)], rng=rng)


def sparse_fc_case(rng, dtype, block):
    """FULLY_CONNECTED v8: the weights stored sparse (rows dense, columns
    CSR, in 1 x `block` blocks when block > 1); Kiln's loader densifies
    them. dtype "hybrid": float input, int8 weights."""
    while True:
        case = (hybrid_fc_case(rng, False, False, activation=ACT_NONE)
                if dtype == "hybrid" else fc_case(rng, dtype, bias=True))
        w = case.inputs[1]
        units, depth = w.shape
        if depth % block == 0 and depth >= block:
            break
    dense = w.data.copy().reshape(units, depth // block, block)
    dense[rng.uniform(size=(units, depth // block)) < 0.6] = 0
    dense = dense.reshape(units, depth)
    if block > 1:
        w.sparsity, w.data = sparse_encode(dense, [0, 1, 2], [1], [block], [1])
    else:
        w.sparsity, w.data = sparse_encode(dense, [0, 1], [], [], [1])
    case.version = 8
    case.name = case.name.replace("FULLY_CONNECTED/",
                                  f"FULLY_CONNECTED/sparse1x{block}/", 1)
    return case


def densify_cases(rng):
    cases = [densify_case(rng, dtype, layout)
             for dtype in ("float32", "float16", "int8")
             for layout in DENSIFY_LAYOUTS]
    # Sparse metadata on a graph input instead of a constant: refused by
    # both (LiteRT in prepare, Kiln's loader).
    bad = densify_case(rng, "float32", DENSIFY_LAYOUTS[0])
    bad.name += "/not_constant"
    bad.inputs[0].data = None
    bad.expect_refusal = True
    sparse_fc = [sparse_fc_case(rng, dtype, block)
                 for dtype, block in (("float32", 1), ("float32", 4),
                                      ("int8", 16), ("hybrid", 16))
                 for _ in range(2)]
    return cases + [bad] + sparse_fc


# ---- vectorized paths ------------------------------------------------------

def vector_path_cases(rng):
    """Sizes that run the vectorized integer paths with their tails: the
    FULLY_CONNECTED requantization in double (8 channels a step) on 8, 27
    and 40 units; MEAN and SUM over adjacent axes as contiguous blocks (a
    transformer's last-axis MEAN, leading and middle axes, a unit axis
    between reduced ones); 8-bit SOFTMAX rows."""
    out = []
    for i, units in enumerate((8, 27, 40)):
        for dtype in ("int8", "uint8"):
            out.append(fc_case(rng, dtype, per_channel=dtype == "int8" and
                               i % 2 == 0, bias=i != 1, units=units))
    for shape_axes in (([1, 9, 131], [-1]), ([1, 9, 131], [1]),
                       ([3, 4, 5, 6], [1, 2]), ([3, 4, 1, 6], [1, 3]),
                       ([3, 4, 5, 6], [0, 3]), ([2, 70], [0, 1])):
        for dtype in ("int8", "uint8", "int16"):
            out.append(reduce_case(rng, "MEAN", dtype, shape_axes=shape_axes))
        out.append(reduce_case(rng, "SUM", "uint8", shape_axes=shape_axes))
    # SOFTMAX rows of the AVX2 kernel: 32-wide maximum, 8-wide sums and
    # outputs, tails (a transformer's [1, 4, 64, 64] attention included).
    for shape in ([1, 4, 64, 64], [3, 37], [2, 130], [5, 7], [2, 33]):
        for in_t in ("int8", "uint8"):
            out.append(softmax_case(rng, in_t, in_t,
                                    float(rng.choice([1.0, 0.5, 2.7])),
                                    shape=shape))
    # SOFTMAX over a last axis of 2 (a segmentation net's output) through
    # the pair table, split across the pool at the larger sizes; the tiny
    # scale's float table too.
    for shape in ([1, 400, 330, 2], [3, 7, 2], [1, 1, 2]):
        for in_t, out_t in (("int8", "int8"), ("uint8", "uint8"),
                            ("int8", "int16"), ("uint8", "int16")):
            out.append(softmax_case(rng, in_t, out_t,
                                    float(rng.choice([1.0, 0.5, 2.7])),
                                    shape=shape, name_extra="/pairs"))
    for in_t in ("int8", "uint8"):
        c = softmax_case(rng, in_t, in_t, shape=[1, 96, 200, 2],
                         name_extra="/pairs/tiny_scale",
                         in_scale=float(log_uniform(rng, 1e-10, 1.4e-8)))
        c.oracle = "BUILTIN_WITHOUT_DEFAULT_DELEGATES"
        out.append(c)
    # int8 BATCH_MATMUL split over (batch, rows) tasks: a transformer's
    # attention products, a broadcast rhs batch, odd sizes, adj flags.
    for i, dims in enumerate(((64, 32, 64, [1, 4], [1, 4]),
                              (64, 64, 32, [1, 4], [1, 4]),
                              (17, 33, 20, [2, 3], [1, 3]),
                              (9, 5, 27, [3, 1], [3, 2]))):
        out.append(batch_matmul_case(rng, "int8", adj_x=i == 2,
                                     adj_y=i == 3, dims=dims))
    return out


def all_cases(rng):
    return (conv_cases(rng) + fc_cases(rng) + pool_cases(rng) +
            softmax_cases(rng) + reduce_cases(rng) + resize_cases(rng) +
            transpose_conv_cases(rng) + batch_matmul_cases(rng) +
            hybrid_cases(rng) + last_axis_cases(rng) + arg_cases(rng) +
            densify_cases(rng) + vector_path_cases(rng))
