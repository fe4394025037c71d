#!/usr/bin/env python3
"""The CPU plugin's float LSTM and UNIDIRECTIONAL_SEQUENCE_LSTM against LiteRT.

Builds seeded single-op models over the cell's optional parts (CIFG,
peephole, projection with and without bias, layer normalization, cell and
projection clipping, the cell activation, time-major and batch-major
sequences, batch > 1), with the two states as variable tensors as converters
write them, runs each through LiteRT (reference kernels by default) and
`kiln run`, and compares the output: |kiln - litert| <= 1e-5 * (|litert| +
max |litert|) (float sums in another order; LiteRT's optimized kernels use
other exp/tanh approximations, hence --resolver).

Cases LiteRT runs but Kiln refuses by design are listed with the reason
Kiln gives (REFUSED); any other refusal, by either side, fails.

Exit status: 0 all cases agree; 1 a mismatch or an unexpected refusal; 77
(skip) when ai_edge_litert is not installed.
"""
import argparse
import os
import re
import sys
import tempfile
import zlib

import flatbuffers
import numpy as np

try:
    from ai_edge_litert import schema_py_generated as schema
except ImportError:
    print("lstm_vs_litert: ai_edge_litert is not installed; skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import litert_single_op as lso  # noqa: E402

TOLERANCE = 1e-5
TANH, RELU, RELU_N1_TO_1, RELU6 = 4, 1, 2, 3


def build_lstm(seq, time_major, version, inputs, output, activation,
               cell_clip, proj_clip, asymmetric=False, edit=None):
    """The bytes of a one-node LSTM (UNIDIRECTIONAL_SEQUENCE_LSTM when
    `seq`) model whose states (inputs 18 and 19) are variable tensors, not
    graph inputs, as converters write them; `edit(model)` may change the
    schema.ModelT before it is packed."""
    if seq:
        opts = schema.UnidirectionalSequenceLSTMOptionsT()
        opts.timeMajor = time_major
        op, opts_type = (
            schema.BuiltinOperator.UNIDIRECTIONAL_SEQUENCE_LSTM,
            schema.BuiltinOptions.UnidirectionalSequenceLSTMOptions)
    else:
        opts = schema.LSTMOptionsT()
        op, opts_type = (schema.BuiltinOperator.LSTM,
                         schema.BuiltinOptions.LSTMOptions)
    opts.fusedActivationFunction = activation
    opts.cellClip = cell_clip
    opts.projClip = proj_clip
    opts.asymmetricQuantizeInputs = asymmetric
    raw = lso.build_model(op, version, inputs, [output], opts_type, opts)
    m = schema.ModelT.InitFromPackedBuf(raw, 0)
    g = m.subgraphs[0]
    states = [g.operators[0].inputs[18], g.operators[0].inputs[19]]
    for s in states:
        g.tensors[s].isVariable = True
    g.inputs = [i for i in g.inputs if i not in states]
    if edit is not None:
        edit(m)
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def input_shape(case):
    """The input shape of an LSTM (`seq` False) or a sequence LSTM case
    (time- or batch-major): any object with seq, time_major, batch, steps
    and n_input."""
    if not case.seq:
        return [case.batch, case.n_input]
    if case.time_major:
        return [case.steps, case.batch, case.n_input]
    return [case.batch, case.steps, case.n_input]


class Case:
    def __init__(self, name, seq=False, time_major=True, batch=2, steps=1,
                 n_input=3, n_cell=4, n_output=None, cifg=False,
                 peephole=False, projection=False, proj_bias=True,
                 layer_norm=False, cell_clip=0.0, clip_projection=False,
                 activation=TANH, hybrid=False, asymmetric=False,
                 refusal=None):
        self.name = name
        self.seq = seq
        self.time_major = time_major
        self.batch, self.steps = batch, steps
        self.n_input, self.n_cell = n_input, n_cell
        self.n_output = n_output if projection else n_cell
        self.cifg, self.peephole = cifg, peephole
        self.projection, self.proj_bias = projection, proj_bias
        self.layer_norm = layer_norm
        self.cell_clip = cell_clip
        # proj_clip: the median |output| of the unclipped model (set in
        # main), so that the clip binds on about half of the outputs.
        self.clip_projection = clip_projection
        self.proj_clip = 0.0
        self.activation = activation
        self.hybrid = hybrid  # int8 weight matrices and peephole weights
        self.asymmetric = asymmetric  # asymmetric_quantize_inputs
        self.refusal = refusal  # regex Kiln's message must match

    def version(self):
        if not self.hybrid:
            return 1
        return (2 if self.seq else 3) + (1 if self.asymmetric else 0)

    def input_shape(self):
        return input_shape(self)

    def model(self, rng):
        def w(*shape, scale=1.0):
            return lso.T("float32", shape,
                         (rng.uniform(-1, 1, size=shape) * scale)
                         .astype(np.float32))
        def q(*shape):  # a weight, int8 with a per-tensor scale if hybrid
            t = w(*shape)
            if not self.hybrid:
                return t
            scale = float(np.abs(t.data).max()) / 127
            return lso.T("int8", shape, np.round(t.data / scale)
                         .astype(np.int8), scale=scale, zero_point=0)
        omit = lso.T("float32", [0], omitted=True)
        nc, ni, no = self.n_cell, self.n_input, self.n_output
        ins = [lso.T("float32", self.input_shape())]
        ins += [omit if self.cifg else q(nc, ni)] + [q(nc, ni) for _ in range(3)]
        ins += [omit if self.cifg else q(nc, no)] + [q(nc, no) for _ in range(3)]
        if self.peephole:
            ins += [omit if self.cifg else q(nc), q(nc), q(nc)]
        else:
            ins += [omit] * 3
        ins += [omit if self.cifg else w(nc)] + [w(nc) for _ in range(3)]
        if self.projection:
            ins += [q(no, nc), w(no) if self.proj_bias else omit]
        else:
            ins += [omit, omit]
        ins += [lso.T("float32", [self.batch, no]),
                lso.T("float32", [self.batch, nc])]
        if self.layer_norm:
            ins += [omit if self.cifg else w(nc)] + [w(nc) for _ in range(3)]
        out_shape = self.input_shape()[:-1] + [no]
        return build_lstm(self.seq, self.time_major, self.version(), ins,
                          lso.T("float32", out_shape), self.activation,
                          self.cell_clip, self.proj_clip, self.asymmetric)


def all_cases():
    c = []
    c.append(Case("lstm_plain"))
    c.append(Case("lstm_batch1_relu", batch=1, activation=RELU))
    c.append(Case("lstm_relu6", activation=RELU6, n_cell=5))
    c.append(Case("lstm_relu_n1_to_1", activation=RELU_N1_TO_1, n_cell=3))
    c.append(Case("lstm_cifg", cifg=True))
    c.append(Case("lstm_peephole", peephole=True))
    c.append(Case("lstm_cifg_peephole_proj_clips", cifg=True, peephole=True,
                  projection=True, n_output=3, cell_clip=0.3,
                  clip_projection=True))
    c.append(Case("lstm_proj_nobias", projection=True, n_output=2,
                  proj_bias=False))
    c.append(Case("lstm_layer_norm", layer_norm=True))
    c.append(Case("lstm_layer_norm_peephole_proj", layer_norm=True,
                  peephole=True, projection=True, n_output=3, cell_clip=0.5))
    c.append(Case("lstm_cifg_layer_norm", cifg=True, layer_norm=True,
                  projection=True, n_output=5))
    c.append(Case("useq_time_major", seq=True, steps=3))
    c.append(Case("useq_batch_major", seq=True, time_major=False, steps=4,
                  batch=3))
    c.append(Case("useq_batch_major_ln_proj", seq=True, time_major=False,
                  steps=3, layer_norm=True, projection=True, n_output=2,
                  clip_projection=True))
    c.append(Case("useq_cifg_peephole_clip", seq=True, steps=5, cifg=True,
                  peephole=True, cell_clip=0.2))
    c.append(Case("useq_time_major_ln_cifg", seq=True, steps=2, cifg=True,
                  layer_norm=True, peephole=True, projection=True,
                  n_output=6, n_cell=7, n_input=5))
    # Hybrid: int8 weights, float activations quantized per row on the fly.
    c.append(Case("lstm_hybrid", hybrid=True))
    c.append(Case("lstm_hybrid_asym_peephole_proj", hybrid=True,
                  asymmetric=True, peephole=True, projection=True,
                  n_output=3, cell_clip=0.4))
    c.append(Case("lstm_hybrid_cifg_ln", hybrid=True, cifg=True,
                  layer_norm=True, peephole=True, projection=True,
                  n_output=5, proj_bias=False))
    c.append(Case("useq_hybrid_batch_major", hybrid=True, seq=True,
                  time_major=False, steps=4, batch=3, n_input=6, n_cell=8))
    c.append(Case("useq_hybrid_asym_ln_proj", hybrid=True, asymmetric=True,
                  seq=True, steps=3, layer_norm=True, projection=True,
                  n_output=3, peephole=True))
    return c


def compare(ref, got):
    if len(ref) != len(got):
        return f"{len(got)} outputs, LiteRT gave {len(ref)}"
    for i, (r, g) in enumerate(zip(ref, got)):
        if r.shape != g.shape or r.dtype != g.dtype:
            return (f"output {i}: {g.dtype}{list(g.shape)} vs LiteRT "
                    f"{r.dtype}{list(r.shape)}")
        r64, g64 = r.astype(np.float64), g.astype(np.float64)
        bound = TOLERANCE * (np.abs(r64) + np.abs(r64).max())
        err = np.abs(g64 - r64)
        if not np.all(err <= bound):
            return f"output {i}: max abs error {float(err.max()):.3g}"
        if r.size > 1 and np.all(r == r.flat[0]):
            return f"output {i}: every element is {r.flat[0]} (degenerate)"
    return None


def clip_problem(case, ref):
    """A projection clip must bind on some outputs and not on all, or the
    case would not show that Kiln clips where LiteRT does."""
    if case.proj_clip <= 0:
        return None
    clipped = np.isclose(np.abs(ref), case.proj_clip, rtol=0, atol=1e-7)
    if clipped.all() or not clipped.any():
        return (f"proj_clip {case.proj_clip} binds on {int(clipped.sum())} "
                f"of {clipped.size} outputs; pick a value that binds on some")
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--plugin-dir", required=True)
    ap.add_argument("--resolver", default="BUILTIN_REF",
                    choices=["BUILTIN_REF", "BUILTIN_WITHOUT_DEFAULT_DELEGATES"])
    ap.add_argument("--filter", default="")
    ap.add_argument("--seed", type=int, default=20261128)
    args = ap.parse_args()
    pool = lso.LiteRtPool(args.resolver)
    kiln_args = ["--no-default-plugins", "--plugin-dir", args.plugin_dir]
    failures = 0
    with tempfile.TemporaryDirectory(prefix="kiln-lstm-") as root:
        for case in all_cases():
            if args.filter and not re.search(args.filter, case.name):
                continue
            work = os.path.join(root, case.name)
            os.makedirs(work)
            path = os.path.join(work, "model.tflite")

            def build():
                # One stream per case: adding a case leaves the others'
                # values; building again gives the same weights and input.
                rng = np.random.default_rng([args.seed, zlib.crc32(
                    case.name.encode())])
                with open(path, "wb") as f:
                    f.write(case.model(rng))
                return rng.uniform(-1, 1, size=case.input_shape()).astype(
                    np.float32)
            x = build()
            ref, ref_err = pool.run(path, [x], work)
            if case.clip_projection and not ref_err:
                case.proj_clip = float(np.median(np.abs(ref[0])))
                x = build()
                ref, ref_err = pool.run(path, [x], work)
            got, got_err = lso.run_kiln(args.kiln, path, [x], work, kiln_args)
            if ref_err:
                status, detail = "FAIL", f"LiteRT refuses: {ref_err}"
            elif got_err:
                if case.refusal and re.search(case.refusal, got_err):
                    status, detail = "REFUSED", got_err.splitlines()[-1]
                else:
                    status, detail = "FAIL", f"Kiln refuses: {got_err}"
            else:
                problem = compare(ref, got) or clip_problem(case, ref[0])
                status = "FAIL" if problem else "agree"
                detail = problem or (
                    f"max abs diff "
                    f"{float(np.abs(got[0] - ref[0]).max()):.2g}")
            failures += status == "FAIL"
            print(f"{status:8s} {case.name}: {detail}")
    pool.close()
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
