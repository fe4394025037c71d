"""Single-operator TFLite models and a crash-isolated LiteRT runner.

Test tooling only (the runtime never runs Python). `build_model` writes a
one-node .tflite file from a small description; `LiteRtPool` runs such files
through LiteRT in a child process, so a LiteRT abort (its reference resolver
aborts the whole process on some inputs) is reported for that model instead
of killing the test.
"""
import json
import os
import subprocess
import sys

import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as schema

TYPES = {
    "float32": schema.TensorType.FLOAT32,
    "float16": schema.TensorType.FLOAT16,
    "int32": schema.TensorType.INT32,
    "int64": schema.TensorType.INT64,
    "int16": schema.TensorType.INT16,
    "int8": schema.TensorType.INT8,
    "uint8": schema.TensorType.UINT8,
    "bool": schema.TensorType.BOOL,
}


class T:
    """One tensor of a single-op model.

    dtype: numpy dtype name; shape: list; data: values for a constant tensor
    (None: a graph input, or the output); scale / zero_point: floats / ints
    (scalars or per-channel lists); axis: the quantized dimension.
    """

    def __init__(self, dtype, shape, data=None, scale=None, zero_point=None,
                 axis=0, sparsity=None, blockwise=None, omitted=False):
        self.dtype = dtype
        self.shape = list(shape)
        self.data = None if data is None else np.asarray(data, dtype=dtype)
        self.scale = scale
        self.zero_point = zero_point
        self.axis = axis
        self.sparsity = sparsity  # schema.SparsityParametersT
        self.blockwise = blockwise  # (scales_index, zero_points_index, block)
        self.omitted = omitted  # an optional input given as index -1

    def quantization(self):
        if self.scale is None and self.blockwise is None:
            return None
        q = schema.QuantizationParametersT()
        if self.scale is not None:
            scales = np.atleast_1d(np.asarray(self.scale, np.float32))
            zps = self.zero_point if self.zero_point is not None else 0
            zps = np.atleast_1d(np.asarray(zps, np.int64))
            if zps.size == 1 and scales.size > 1:
                zps = np.repeat(zps, scales.size)
            q.scale = [float(s) for s in scales]
            q.zeroPoint = [int(z) for z in zps]
            q.quantizedDimension = int(self.axis)
        if self.blockwise is not None:
            b = schema.BlockwiseQuantizationT()
            b.scales, b.zeroPoints, b.blockSize = self.blockwise
            q.detailsType = schema.QuantizationDetails.BlockwiseQuantization
            q.details = b
        return q


def build_model(op, version, inputs, outputs, options_type=0, options=None,
                custom_code=None):
    """Returns the bytes of a model with one node `op` (a BuiltinOperator)."""
    model = schema.ModelT()
    model.version = 3
    code = schema.OperatorCodeT()
    code.builtinCode = op
    code.deprecatedBuiltinCode = min(op, 127)
    code.version = version
    if custom_code is not None:
        code.customCode = custom_code
    model.operatorCodes = [code]
    model.buffers = [schema.BufferT()]
    graph = schema.SubGraphT()
    graph.tensors, graph.inputs = [], []

    def add(t, name):
        tensor = schema.TensorT()
        tensor.name = name
        tensor.shape = t.shape
        tensor.type = TYPES[t.dtype]
        tensor.quantization = t.quantization()
        tensor.sparsity = t.sparsity
        tensor.buffer = 0
        if t.data is not None:
            buf = schema.BufferT()
            buf.data = np.frombuffer(t.data.tobytes(), np.uint8)
            model.buffers.append(buf)
            tensor.buffer = len(model.buffers) - 1
        graph.tensors.append(tensor)
        return len(graph.tensors) - 1

    node_inputs = []
    for i, t in enumerate(inputs):
        if t.omitted:
            node_inputs.append(-1)
            continue
        index = add(t, f"in{i}")
        node_inputs.append(index)
        if t.data is None:
            graph.inputs.append(index)
    node_outputs = [add(t, f"out{i}") for i, t in enumerate(outputs)]
    graph.outputs = node_outputs
    node = schema.OperatorT()
    node.opcodeIndex = 0
    node.inputs = node_inputs
    node.outputs = node_outputs
    node.builtinOptionsType = options_type
    node.builtinOptions = options
    graph.operators = [node]
    model.subgraphs = [graph]
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def random_values(rng, dtype, shape):
    """Values over the type's whole range (floats in [-1, 1))."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True,
                            dtype=dtype)
    return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)


# ---- LiteRT in a child process ---------------------------------------------

def _worker(resolver_name):
    """Child: reads job lines on stdin, runs them, answers one line each."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    resolver = getattr(OpResolverType, resolver_name)
    for line in sys.stdin:
        job = json.loads(line)
        try:
            interp = Interpreter(model_path=job["model"],
                                 experimental_op_resolver_type=resolver)
            interp.allocate_tensors()
            data = np.load(job["inputs"])
            for i, d in enumerate(interp.get_input_details()):
                interp.set_tensor(d["index"], data[f"arr_{i}"])
            interp.invoke()
            outs = [interp.get_tensor(d["index"])
                    for d in interp.get_output_details()]
            np.savez(job["outputs"], *outs)
            answer = {"ok": True}
        except Exception as e:  # LiteRT refused the model
            answer = {"ok": False, "error": str(e).strip()[-300:]}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


class LiteRtPool:
    """Runs models through LiteRT (`resolver`: an OpResolverType name such
    as BUILTIN_REF or BUILTIN_WITHOUT_DEFAULT_DELEGATES) in a
    child process that is restarted when LiteRT aborts."""

    def __init__(self, resolver):
        self.resolver = resolver
        self.proc = None

    def _start(self):
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker",
             self.resolver], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True)

    def run(self, model_path, inputs, workdir):
        """Returns (outputs, None) or (None, error message)."""
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        in_path = os.path.join(workdir, "litert_in.npz")
        out_path = os.path.join(workdir, f"litert_{self.resolver}.npz")
        np.savez(in_path, *inputs)
        job = {"model": model_path, "inputs": in_path, "outputs": out_path}
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            code = self.proc.returncode
            self.proc = None
            return None, f"LiteRT ({self.resolver}) aborted (exit {code})"
        answer = json.loads(line)
        if not answer["ok"]:
            return None, answer["error"]
        data = np.load(out_path)
        return [data[f"arr_{i}"] for i in range(len(data.files))], None

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()


def run_kiln(kiln, model_path, inputs, workdir, extra_args=()):
    """Runs `kiln run`; returns (outputs, None) or (None, error message)."""
    out_dir = os.path.join(workdir, "kiln_out")
    args = [kiln, "run", model_path, "--output-dir", out_dir]
    for i, value in enumerate(inputs):
        path = os.path.join(workdir, f"kiln_in{i}.npy")
        np.save(path, value)
        args += ["--input", f"{i}={path}"]
    args += list(extra_args)
    if "--delegate" not in args:
        # These tests test the CPU plugin's kernels: no default delegate.
        args += ["--delegate", "none"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        return None, (proc.stderr.strip() or proc.stdout.strip()
                      or f"exit code {proc.returncode}")
    with open(os.path.join(out_dir, "outputs.json")) as f:
        manifest = json.load(f)
    return [np.load(os.path.join(out_dir, o["file"]))
            for o in manifest["outputs"]], None


# ---- Test drivers ---------------------------------------------------------

DIFFERENTIAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                            "..", "..", "tools", "kiln", "tests",
                            "differential_test.py")


def differential_main(description, make_models, seed_default=None,
                      float_tolerance=0, threads=(None,)):
    """The main() of a single-op test: parses --kiln, --kiln-arg, --keep,
    --only (and --seed when seed_default is given), writes the models
    make_models(seed) returns as (file name, bytes) into a folder and runs
    differential_test.py on it with LiteRT's reference kernels as the oracle,
    without allow-lists, bit for bit (or within relative bound
    float_tolerance), once per entry of threads (Kiln's --threads; None: its
    default). Returns the worst exit status."""
    import argparse
    import tempfile
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--kiln-arg", action="append", default=[])
    ap.add_argument("--keep", help="write the models here and keep them")
    ap.add_argument("--only", help="regex: run only matching models")
    if seed_default is not None:
        ap.add_argument("--seed", type=int, default=seed_default)
    args = ap.parse_args()
    models = make_models(getattr(args, "seed", None))
    with tempfile.TemporaryDirectory(prefix="kiln-single-op-") as tmp:
        folder = args.keep or tmp
        os.makedirs(folder, exist_ok=True)
        for name, data in models:
            with open(os.path.join(folder, name), "wb") as f:
                f.write(data)
        cmd = [sys.executable, DIFFERENTIAL, "--kiln", args.kiln, "--models",
               folder, "--no-allow-lists", "--float-tolerance",
               str(float_tolerance)]
        cmd += [f"--kiln-arg={a}" for a in args.kiln_arg]
        if args.only:
            cmd += ["--only", args.only]
        statuses = []
        for n in threads:
            extra = [] if n is None else ["--kiln-arg=--threads",
                                          f"--kiln-arg={n}"]
            if n is not None:
                print(f"--- Kiln on {n} thread(s)", flush=True)
            statuses.append(subprocess.call(cmd + extra))
        failed = [s for s in statuses if s not in (0, 77)]
        return failed[0] if failed else max(statuses)


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--worker":
    _worker(sys.argv[2])
