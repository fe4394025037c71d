#!/usr/bin/env python3
"""The CPU plugin's full-integer LSTM and UNIDIRECTIONAL_SEQUENCE_LSTM
against LiteRT's reference kernels, bit for bit.

Each case runs several invokes in one interpreter on each side (Kiln through
libkiln's C API with ctypes, LiteRT through ai_edge_litert with
OpResolverType.BUILTIN_REF), so the variable output and cell states carry
from one invoke to the next, with inputs over the full int8 range (and past
it, for the float corpus models' QUANTIZE). Every output of every invoke
must be identical.

Cases: the two corpus models (layer norm, projection, 5 intermediates),
lstm_quantized2.bin with its unused tensor 23 given shape [0] so that
LiteRT loads it (peephole, no layer norm, no projection), and seeded
single-op models over the integer cell's optional parts (CIFG, peephole,
layer norm, projection with and without bias, cell and projection clips,
cell-state scales, time-major and batch-major sequences, batch > 1).
Also checks Kiln's refusals and their reasons: an instance capped at
extension API 1.2, which does not pass on node intermediates, and a node
with 12 intermediates (LiteRT's 8x8_8 kernel, not implemented).

Exit status: 0 all agree; 1 a mismatch or refusal; 77 (skip) when
ai_edge_litert or the corpus is missing.
"""
import argparse
import ctypes
import os
import re
import sys
import tempfile
import zlib

import numpy as np

try:
    import flatbuffers
    from ai_edge_litert import schema_py_generated as schema
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
except ImportError:
    print("lstm_integer_vs_litert: ai_edge_litert is not installed; skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import litert_single_op as lso  # noqa: E402
import lstm_vs_litert as lstm_float  # noqa: E402

INVOKES = 5


class Kiln:
    """libkiln's C API, enough to invoke one model repeatedly."""

    def __init__(self, libkiln, cpu_plugin):
        self.lib = ctypes.CDLL(libkiln)
        self.cpu_plugin = cpu_plugin.encode()
        L, vp = self.lib, ctypes.c_void_p
        for name, res, args in [
                ("KilnErrorMessage", ctypes.c_char_p, [vp]),
                ("KilnErrorDestroy", None, [vp]),
                ("KilnModelCreateFromFile", vp,
                 [ctypes.c_char_p, ctypes.POINTER(vp)]),
                ("KilnModelDestroy", None, [vp]),
                ("KilnInterpreterOptionsCreate", vp, []),
                ("KilnInterpreterOptionsDestroy", None, [vp]),
                ("KilnInterpreterOptionsAddPluginPath", None,
                 [vp, ctypes.c_char_p]),
                ("KilnInterpreterOptionsSetUseDefaultPlugins", None,
                 [vp, ctypes.c_int32]),
                ("KilnInterpreterOptionsSetMaxExtensionApiVersion", vp,
                 [vp, ctypes.c_uint32]),
                ("KilnInterpreterCreate", vp, [vp, vp, ctypes.POINTER(vp)]),
                ("KilnInterpreterDestroy", None, [vp]),
                ("KilnInterpreterAllocateTensors", vp, [vp]),
                ("KilnInterpreterInvoke", vp, [vp]),
                ("KilnInterpreterInput", vp, [vp, ctypes.c_int32]),
                ("KilnInterpreterOutput", vp, [vp, ctypes.c_int32]),
                ("KilnTensorByteSize", ctypes.c_size_t, [vp]),
                ("KilnTensorCopyFromBuffer", vp,
                 [vp, ctypes.c_void_p, ctypes.c_size_t]),
                ("KilnTensorCopyToBuffer", vp,
                 [vp, ctypes.c_void_p, ctypes.c_size_t])]:
            f = getattr(L, name)
            f.restype, f.argtypes = res, args

    def _check(self, err):
        if err:
            msg = self.lib.KilnErrorMessage(err).decode()
            self.lib.KilnErrorDestroy(err)
            raise RuntimeError(msg)

    def run(self, path, inputs_per_invoke, out_like, max_abi=0):
        """Invokes once per entry of inputs_per_invoke (a list of input
        lists); returns the outputs of each invoke, or raises with Kiln's
        message."""
        L = self.lib
        model, interp = ctypes.c_void_p(), ctypes.c_void_p()
        opts = L.KilnInterpreterOptionsCreate()
        try:
            L.KilnInterpreterOptionsSetUseDefaultPlugins(opts, 0)
            L.KilnInterpreterOptionsAddPluginPath(opts, self.cpu_plugin)
            if max_abi:
                self._check(L.KilnInterpreterOptionsSetMaxExtensionApiVersion(
                    opts, max_abi))
            self._check(L.KilnModelCreateFromFile(path.encode(),
                                                  ctypes.byref(model)))
            self._check(L.KilnInterpreterCreate(model, opts,
                                                ctypes.byref(interp)))
            self._check(L.KilnInterpreterAllocateTensors(interp))
            results = []
            for inputs in inputs_per_invoke:
                for i, x in enumerate(inputs):
                    x = np.ascontiguousarray(x)
                    t = L.KilnInterpreterInput(interp, i)
                    self._check(L.KilnTensorCopyFromBuffer(
                        t, x.ctypes.data, x.nbytes))
                self._check(L.KilnInterpreterInvoke(interp))
                outs = []
                for i, like in enumerate(out_like):
                    y = np.empty_like(like)
                    t = L.KilnInterpreterOutput(interp, i)
                    self._check(L.KilnTensorCopyToBuffer(
                        t, y.ctypes.data, y.nbytes))
                    outs.append(y)
                results.append(outs)
            return results
        finally:
            if interp:
                L.KilnInterpreterDestroy(interp)
            if model:
                L.KilnModelDestroy(model)
            L.KilnInterpreterOptionsDestroy(opts)


def litert_run(path, inputs_per_invoke):
    it = Interpreter(model_path=path,
                     experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    results = []
    for inputs in inputs_per_invoke:
        for d, x in zip(it.get_input_details(), inputs):
            it.set_tensor(d["index"], x)
        it.invoke()
        results.append([it.get_tensor(d["index"]).copy()
                        for d in it.get_output_details()])
    return results


def full_range_inputs(rng, details):
    """Inputs for each invoke: int8 over all of [-128, 127]; float inputs
    (a QUANTIZE in front) over the int8 range of that QUANTIZE's output
    plus a margin, so it saturates too."""
    out = []
    for _ in range(INVOKES):
        xs = []
        for d in details:
            shape, dtype = d["shape"], d["dtype"]
            if dtype == np.int8:
                xs.append(rng.integers(-128, 128, size=shape, dtype=np.int8))
            else:
                lo, hi = d["range"]
                span = hi - lo
                xs.append(rng.uniform(lo - 0.1 * span, hi + 0.1 * span,
                                      size=shape).astype(dtype))
        out.append(xs)
    return out


# ---- Synthetic single-op integer models ------------------------------------

class Case:
    def __init__(self, name, seq=False, time_major=True, batch=2, steps=1,
                 n_input=3, n_cell=4, n_output=None, cifg=False,
                 peephole=False, layer_norm=True, projection=False,
                 proj_bias=True, cell_clip=0.0, proj_clip=0.0,
                 cell_scale_log2=-11, hidden_zp=3):
        self.name, self.seq, self.time_major = name, seq, time_major
        self.batch, self.steps = batch, steps
        self.n_input, self.n_cell = n_input, n_cell
        self.n_output = n_output if projection else n_cell
        self.cifg, self.peephole, self.layer_norm = cifg, peephole, layer_norm
        self.projection, self.proj_bias = projection, proj_bias
        self.cell_clip, self.proj_clip = cell_clip, proj_clip
        self.cell_scale_log2, self.hidden_zp = cell_scale_log2, hidden_zp

    def input_shape(self):
        return lstm_float.input_shape(self)

    def model(self, rng):
        nc, ni, no = self.n_cell, self.n_input, self.n_output
        in_scale, in_zp = 1 / 100, 7
        state_scale, state_zp = 1 / 120, -5
        w_scale = 0.6 / 127

        def w8(*shape):
            return lso.T("int8", shape,
                         rng.integers(-127, 128, size=shape).astype(np.int8),
                         scale=w_scale, zero_point=0)

        def w16(*shape, lo=-0.5, hi=0.5, scale=1 / 16384):
            v = np.round(rng.uniform(lo, hi, size=shape) / scale)
            return lso.T("int16", shape, v.astype(np.int16), scale=scale,
                         zero_point=0)

        ln_scale = 1 / 16384
        # The bias unit: with layer norm, LiteRT adds it to the normalized
        # value times the coefficient (units ln_scale / 1024); without, to
        # the input product (units in_scale * w_scale).
        bias_unit = (ln_scale / 1024 if self.layer_norm
                     else in_scale * w_scale / 1)

        def bias(n, lo=-0.4, hi=0.4):
            v = np.round(rng.uniform(lo, hi, size=[n]) / bias_unit)
            return lso.T("int32", [n], v.astype(np.int32), scale=bias_unit,
                         zero_point=0)
        omit = lso.T("float32", [0], omitted=True)
        ins = [lso.T("int8", self.input_shape(), scale=in_scale,
                     zero_point=in_zp)]
        ins += [omit if self.cifg else w8(nc, ni)] + [w8(nc, ni)
                                                      for _ in range(3)]
        ins += [omit if self.cifg else w8(nc, no)] + [w8(nc, no)
                                                      for _ in range(3)]
        if self.peephole:
            ins += [omit if self.cifg else w16(nc), w16(nc), w16(nc)]
        else:
            ins += [omit] * 3
        ins += [omit if self.cifg else bias(nc)] + [bias(nc) for _ in range(3)]
        hidden_scale = 1 / 128
        if self.projection:
            proj_bias_unit = w_scale * hidden_scale
            pb = lso.T("int32", [no], np.round(
                rng.uniform(-0.2, 0.2, size=[no]) / proj_bias_unit)
                .astype(np.int32), scale=proj_bias_unit, zero_point=0)
            ins += [w8(no, nc), pb if self.proj_bias else omit]
        else:
            ins += [omit, omit]
        ins += [lso.T("int8", [self.batch, no], scale=state_scale,
                      zero_point=state_zp),
                lso.T("int16", [self.batch, nc],
                      scale=2.0 ** self.cell_scale_log2, zero_point=0)]
        if self.layer_norm:
            ins += [omit if self.cifg else w16(nc, lo=0.5, hi=1.5,
                                               scale=ln_scale)]
            ins += [w16(nc, lo=0.5, hi=1.5, scale=ln_scale)
                    for _ in range(3)]
        else:
            ins += [omit] * 4
        out_shape = self.input_shape()[:-1] + [no]
        out = lso.T("int8", out_shape, scale=state_scale, zero_point=state_zp)

        def add_intermediates(m):
            # Four layer-norm inputs (int16) and the hidden state (int8), as
            # the quantizer writes them.
            g = m.subgraphs[0]
            inter = []
            for i, (dtype, scale, zp) in enumerate(
                    [(schema.TensorType.INT16, 6 / 32768, 0)] * 4 +
                    [(schema.TensorType.INT8, hidden_scale, self.hidden_zp)]):
                t = schema.TensorT()
                t.name = f"intermediate_{i}"
                t.shape = [0]
                t.type = dtype
                t.buffer = 0
                q = schema.QuantizationParametersT()
                q.scale, q.zeroPoint = [float(scale)], [int(zp)]
                t.quantization = q
                g.tensors.append(t)
                inter.append(len(g.tensors) - 1)
            g.operators[0].intermediates = inter
        return lstm_float.build_lstm(self.seq, self.time_major, 2, ins, out,
                                     4, self.cell_clip, self.proj_clip,
                                     edit=add_intermediates)  # 4: TANH


def synthetic_cases():
    c = []
    c.append(Case("lstm_ln"))
    c.append(Case("lstm_ln_proj_clips", projection=True, n_output=3,
                  cell_clip=0.5, proj_clip=0.3, batch=3))
    c.append(Case("lstm_ln_cifg_proj_nobias", cifg=True, projection=True,
                  n_output=2, proj_bias=False))
    c.append(Case("lstm_plain", layer_norm=False, cell_scale_log2=-15))
    c.append(Case("lstm_plain_cifg_peephole", layer_norm=False, cifg=True,
                  peephole=True, cell_scale_log2=-12))
    c.append(Case("lstm_ln_peephole", peephole=True, hidden_zp=-128,
                  cell_scale_log2=-9))
    # The hidden state's zero point, at the int8 extremes, with and
    # without a projection (LiteRT applies it differently; see
    # lstm_integer.cc).
    c.append(Case("lstm_ln_proj_hidden_zp_min", projection=True, n_output=3,
                  hidden_zp=-128))
    c.append(Case("lstm_ln_proj_hidden_zp_high", projection=True, n_output=2,
                  hidden_zp=100, batch=3))
    c.append(Case("lstm_plain_hidden_zp_high", layer_norm=False,
                  hidden_zp=110))
    c.append(Case("useq_time_major_ln_proj", seq=True, steps=3,
                  projection=True, n_output=5, n_cell=6, n_input=4))
    c.append(Case("useq_batch_major_plain", seq=True, time_major=False,
                  steps=4, batch=3, layer_norm=False, cell_clip=0.25))
    return c


def corpus_cases(models):
    q = os.path.join(models, "quantization-testdata")
    yield "lstm_quantized.bin", os.path.join(q, "lstm_quantized.bin")
    yield ("unidirectional_sequence_lstm_quantized.bin",
           os.path.join(q, "unidirectional_sequence_lstm_quantized.bin"))


def patched_quantized2(models, work):
    """lstm_quantized2.bin with the shape of its unused tensor 23 ([-1],
    which LiteRT's loader refuses) set to [0]; None without the file."""
    src = os.path.join(models, "quantization-testdata", "lstm_quantized2.bin")
    if not os.path.exists(src):
        return None
    with open(src, "rb") as f:
        m = schema.ModelT.InitFromPackedBuf(f.read(), 0)
    for t in m.subgraphs[0].tensors:
        if t.shape is not None and any(d < 0 for d in t.shape):
            t.shape = [0]
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    path = os.path.join(work, "lstm_quantized2_shape0.tflite")
    with open(path, "wb") as f:
        f.write(bytes(b.Output()))
    return path


def input_details(path):
    """Shape, dtype and (float inputs) the representable range of the
    QUANTIZE that reads each input."""
    it = Interpreter(model_path=path,
                     experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    details = []
    tensors = {d["index"]: d for d in it.get_tensor_details()}
    ops = it._get_ops_details()
    for d in it.get_input_details():
        entry = {"shape": d["shape"], "dtype": d["dtype"], "range": (-1, 1)}
        for op in ops:
            if op["op_name"] == "QUANTIZE" and d["index"] in op["inputs"]:
                scale, zp = tensors[op["outputs"][0]]["quantization"]
                entry["range"] = (scale * (-128 - zp), scale * (127 - zp))
        details.append(entry)
    return details


def compare_case(kiln, name, path, rng):
    details = input_details(path)
    inputs = full_range_inputs(rng, details)
    ref = litert_run(path, inputs)
    try:
        got = kiln.run(path, inputs, ref[0])
    except RuntimeError as e:
        return f"Kiln refuses: {e}"
    for step, (r, g) in enumerate(zip(ref, got)):
        for i, (a, b) in enumerate(zip(r, g)):
            if a.dtype != b.dtype or a.shape != b.shape or not np.array_equal(
                    a, b):
                return (f"invoke {step} output {i} differs: Kiln "
                        f"{b.ravel()[:8]} LiteRT {a.ravel()[:8]}")
    flat = np.concatenate([o.ravel().astype(np.float64)
                           for r in ref for o in r])
    if np.all(flat == flat[0]):
        return f"every output is {flat[0]} (degenerate case)"
    distinct = len(np.unique(flat))
    return None, distinct


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--libkiln", required=True)
    ap.add_argument("--cpu-plugin", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--seed", type=int, default=20261128)
    ap.add_argument("--filter", default="")
    args = ap.parse_args()
    if not os.path.exists(os.path.join(args.models, "quantization-testdata",
                                       "lstm_quantized.bin")):
        print(f"lstm_integer_vs_litert: no corpus under {args.models}; "
              "skipped")
        return 77
    kiln = Kiln(args.libkiln, args.cpu_plugin)
    failures = 0
    with tempfile.TemporaryDirectory(prefix="kiln-lstm-int-") as work:
        cases = list(corpus_cases(args.models))
        q2 = patched_quantized2(args.models, work)
        if q2:
            cases.append(("lstm_quantized2.bin (tensor 23 shape [0])", q2))
        for case in synthetic_cases():
            path = os.path.join(work, case.name + ".tflite")
            rng = np.random.default_rng([args.seed,
                                         zlib.crc32(case.name.encode())])
            with open(path, "wb") as f:
                f.write(case.model(rng))
            cases.append((case.name, path))
        for name, path in cases:
            if args.filter and not re.search(args.filter, name):
                continue
            rng = np.random.default_rng([args.seed, zlib.crc32(name.encode())])
            result = compare_case(kiln, name, path, rng)
            if isinstance(result, tuple):
                print(f"exact    {name}: {INVOKES} invokes identical "
                      f"({result[1]} distinct output values)")
            else:
                failures += 1
                print(f"FAIL     {name}: {result}")
        # Kiln's refusals, each with its reason: a host capped at 1.2 does
        # not pass on intermediates; 12 intermediates is the 8x8_8 kernel.
        name, path = next(corpus_cases(args.models))
        eight = os.path.join(work, "lstm_12_intermediates.tflite")
        with open(path, "rb") as f:
            m = schema.ModelT.InitFromPackedBuf(f.read(), 0)
        node = next(op for op in m.subgraphs[0].operators
                    if op.intermediates is not None)
        node.intermediates = list(node.intermediates) + [
            int(node.intermediates[4])] * 7
        b = flatbuffers.Builder(1024)
        b.Finish(m.Pack(b), file_identifier=b"TFL3")
        with open(eight, "wb") as f:
            f.write(bytes(b.Output()))
        for what, model, max_abi, expected in [
                (f"{name} at extension API 1.2", path,
                 (1 << 22) | (2 << 12), "node_intermediate"),
                (f"{name} with 12 intermediates", eight, 0, "8x8_8")]:
            try:
                kiln.run(model, [], [], max_abi=max_abi)
                failures += 1
                print(f"FAIL     {what}: ran, expected a refusal")
            except RuntimeError as e:
                if expected in str(e):
                    print(f"refused  {what}: "
                          f"{str(e).splitlines()[-1][:200]}")
                else:
                    failures += 1
                    print(f"FAIL     {what}: {e}")
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
