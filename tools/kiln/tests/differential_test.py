#!/usr/bin/env python3
"""Differential test: Kiln versus LiteRT over every model in a corpus folder.

For every .tflite/.bin file under --models:

1. The LiteRT oracle runs in a child process (this script with --oracle-child),
   so a LiteRT abort or hang costs one model, not the whole test. The oracle is
   LiteRT's reference kernels (OpResolverType.BUILTIN_REF). Only where the
   reference resolver refuses, aborts or times out on a model is LiteRT's
   optimized builtin resolver without delegates
   (BUILTIN_WITHOUT_DEFAULT_DELEGATES) used instead; the table says which
   oracle produced each row ("REF" or "OPT").
2. The child draws the inputs (see make_input) and saves them with LiteRT's
   outputs; `kiln run` then gets the very same input files.
3. Every output is compared: count, shape, dtype and values. Integer and bool
   outputs must be equal exactly unless INTEGER_TOLERANCE names the model with
   the reason (where LiteRT's own kernels differ); float outputs within
   FLOAT_TOLERANCE unless LOOSER_FLOAT_BOUNDS names the model with the reason:
   |kiln - litert| <= tol * (|litert| + max |litert|), i.e. relative both to
   each element and to the output's scale, so tiny outputs are not compared
   against an absolute bound that would accept anything. An empty output, or
   one whose elements are all equal, proves little: it fails unless
   DEGENERATE_OUTPUTS explains why the model produces it. For the models in
   PROBE_ALL_TENSORS (and every model with --probe-all) every node's output
   is compared, not only the model's, and a mismatch names the first node
   where Kiln and LiteRT part. --float-tolerance 0 asks for bit-exact floats.

Other folders of models (e.g. generated single-op models) are checked the
same way with --no-allow-lists: nothing is excused there.

There are no blanket excuses. A Kiln refusal passes only when the model is in
EXPECTED_KILN_REFUSALS with its reason and Kiln's message matches the entry's
pattern; an allow-listed model that Kiln runs is reported as a stale entry
(and fails, so the list shrinks as kernels land). When LiteRT refuses a model,
Kiln must refuse it cleanly too (an error exit, not a crash), unless
KILN_RUNS_WHAT_LITERT_REFUSES says why Kiln may run it.

Exit status: 0 when every row passes, 1 otherwise, 77 (reported to CTest as
Skipped) when the corpus folder or ai_edge_litert is absent. Python is used
here only as a test driver; the runtime is C++.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:  # Reported as Skipped in main(): the oracle needs numpy.
    np = None

SKIP_EXIT_CODE = 77


# model (path relative to --models) -> (reason, regex Kiln's message must
# match). Kiln refuses these models today; each entry says why. Remove an
# entry when the model starts running (the test reports it as stale).
EXPECTED_KILN_REFUSALS = {}

# model -> reason Kiln may run a model that LiteRT refuses.
KILN_RUNS_WHAT_LITERT_REFUSES = {
    "quantization-testdata/single_conv_no_bias.bin":
        "CONV_2D lists its bias as omitted (tensor -1); LiteRT's conv "
        "insists on a bias tensor when a node has 3 inputs, Kiln treats an "
        "omitted optional input as absent (zero bias), as the schema allows",
    "tflite-testdata/custom_sinh.bin":
        "custom op Sinh: the plugin directory holds Kiln's example vendor "
        "plugin (examples/, libexample_sinh.so), which implements it; "
        "LiteRT has no kernel for it",
}

# model -> reason its LiteRT output is empty or constant by construction.
DEGENERATE_OUTPUTS = {
    "quantization-testdata/mixed16x8.bin":
        "LOG_SOFTMAX over a channel axis of size 1 is 0 by definition",
    "quantization-testdata/quantized_with_gather.bin":
        "the GATHER table holds one value (1.729234) in all 24 entries",
    "tflite-testdata/test_min_runtime.bin":
        "input1 has shape [0] in the model: the sum is empty by definition",
}

# model -> (reason, ops to leave out): every intermediate tensor is
# compared, not only the model's outputs: the derived model (see
# write_probed_model) lists the output of every node of subgraph 0 as a
# model output, for LiteRT and Kiln alike, without the nodes of the listed
# ops.
_SHRINKS = ("random-weight MobileNetV2: the signal fades layer by layer, so "
            "the final output is constant; every layer is compared instead")
_LAYERS = "every layer compared, so a mismatch names the node"
PROBE_ALL_TENSORS = {
    "converter/transformer_block_int8.tflite": (_LAYERS, ()),
    "converter/unet_small_int8.tflite": (_LAYERS, ()),
    "converter/unet_small_int16x8.tflite": (_LAYERS, ()),
    "converter/mobilenet_v2_float32.tflite": (_SHRINKS, ()),
    "converter/mobilenet_v2_fp16.tflite": (_SHRINKS, ()),
    "converter/mobilenet_v2_dyn8.tflite": (_SHRINKS, ()),
    # LiteRT's reference SOFTMAX aborts in prepare on this model
    # (PreprocessSoftmaxScaling: beta * input_scale is below 2^-26), which
    # would leave only its optimized kernels as the oracle; without the last
    # node every other layer is compared with the reference kernels. (That
    # SOFTMAX's input is constant here; the int8 SOFTMAX is covered by
    # plugins/cpu/tests' sweeps.)
    "converter/mobilenet_v2_int8.tflite":
        (_SHRINKS + "; SOFTMAX left out (LiteRT's reference SOFTMAX aborts "
         "on it)", ("SOFTMAX",)),
}

FLOAT_TOLERANCE = 1e-5
# model -> (relative and absolute bound, reason).
LOOSER_FLOAT_BOUNDS = {
    "tflite-testdata/conv_huge_im2col.bin":
        (1e-4, "long conv accumulations summed in a different order"),
    # Measured: nudging the model input by one float ulp moves LiteRT's own
    # (BUILTIN_REF) layer outputs by up to 5.5% of their scale. The hybrid
    # kernels themselves are bit-exact on single ops (plugins/cpu/tests).
    "converter/mobilenet_v2_dyn8.tflite":
        (5e-2, "hybrid layers quantize their float input per batch at run "
               "time, so a last-bit difference from an earlier float layer "
               "(Conv1 is float: the converter leaves weights under 1024 "
               "values unquantized) can move an input code, and the layer's "
               "output by a quantization step; LiteRT moves as much when "
               "its own input changes by one ulp"),
}
# model -> (largest allowed absolute difference, reason).
INTEGER_TOLERANCE = {}
# Quanta an int8/uint8 output may differ by in every model
# (--quantized-tolerance; 0 by default). A delegate that requantizes with
# other rounding (XNNPACK's fixed-point multipliers) differs from LiteRT's
# reference kernels by one quantum, exactly as LiteRT's own XNNPACK path does.
QUANTIZED_TOLERANCE = 0

ORACLE_TIMEOUT_S = 600
KILN_TIMEOUT_S = 300

# Ops whose integer operand at this input position indexes another operand.
INDEX_OPERANDS = {"GATHER": 1, "GATHER_ND": 1}


# --------------------------------------------------------------------------
# Oracle child: runs in its own process, writes oracle.json + .npy files.
# --------------------------------------------------------------------------

class NoInputGenerator(Exception):
    pass


def gather_axes(model_path):
    """Maps each GATHER output tensor index to its (axis, batch_dims)."""
    from ai_edge_litert import schema_py_generated as schema
    with open(model_path, "rb") as f:
        buf = f.read()
    model = schema.Model.GetRootAs(buf, 0)
    if model.SubgraphsLength() == 0:
        return {}
    graph = model.Subgraphs(0)
    axes = {}
    for i in range(graph.OperatorsLength()):
        op = graph.Operators(i)
        code = model.OperatorCodes(op.OpcodeIndex())
        builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        if builtin != schema.BuiltinOperator.GATHER or op.OutputsLength() == 0:
            continue
        axis, batch_dims = 0, 0
        table = op.BuiltinOptions()
        if table is not None:
            options = schema.GatherOptions()
            options.Init(table.Bytes, table.Pos)
            axis, batch_dims = options.Axis(), options.BatchDims()
        axes[int(op.Outputs(0))] = (axis, batch_dims)
    return axes


def index_bound(interp, model_path, tensor_index):
    """Exclusive upper bound for an integer input used as an index, or None."""
    shapes = {t["index"]: list(t["shape"]) for t in interp.get_tensor_details()}
    bounds = []
    for op in interp._get_ops_details():
        position = INDEX_OPERANDS.get(op["op_name"])
        inputs = list(op["inputs"])
        if position is None or len(inputs) <= position:
            continue
        if inputs[position] != tensor_index:
            continue
        params = shapes[inputs[0]]
        if op["op_name"] == "GATHER":
            axis, _ = gather_axes(model_path).get(int(op["outputs"][0]), (0, 0))
            bounds.append(params[axis if axis >= 0 else axis + len(params)])
        else:  # GATHER_ND: each index component indexes a leading dimension.
            depth = shapes[tensor_index][-1] if shapes[tensor_index] else 1
            bounds.append(min(params[:max(depth, 1)]))
    return min(bounds) if bounds else None


def quantize_range(interp, tensor_index):
    """Float range a QUANTIZE consumer maps onto its output type, or None."""
    details = {t["index"]: t for t in interp.get_tensor_details()}
    for op in interp._get_ops_details():
        if op["op_name"] != "QUANTIZE" or list(op["inputs"])[:1] != [tensor_index]:
            continue
        out = details[int(op["outputs"][0])]
        scale, zero_point = out["quantization"]
        if scale == 0:
            continue
        info = np.iinfo(out["dtype"])
        return (scale * (info.min - zero_point), scale * (info.max - zero_point))
    return None


def feeds_only_integer_casts(interp, tensor_index):
    """True when every consumer of the tensor CASTs it to an integer type."""
    details = {t["index"]: t for t in interp.get_tensor_details()}
    consumers = [op for op in interp._get_ops_details()
                 if tensor_index in list(op["inputs"])]
    return bool(consumers) and all(
        op["op_name"] == "CAST" and
        np.issubdtype(details[int(op["outputs"][0])]["dtype"], np.integer)
        for op in consumers)


def make_input(interp, model_path, detail, rng):
    """Seeded input values for one model input.

    - int8/uint8/int16 (quantized activations): every code of the type.
    - int32/int64 used as an index (GATHER, GATHER_ND): valid indices, so the
      output is non-empty and every row reachable.
    - other int32/int64: [-2^15, 2^15), wide, but sums and products of a few
      terms stay in range (signed overflow is undefined in LiteRT's kernels).
    - float feeding a QUANTIZE: the quantized range widened by a quarter on
      each side, so saturation is exercised.
    - float only CAST to an integer type: whole numbers in [1, 8]; such a
      value is a count or an index downstream (truncating [-1, 1) would give
      0 and an empty result).
    - other float: [-1, 1).
    - bool: both values. Strings: not generated (the model is skipped).
    """
    shape = [int(d) for d in detail["shape"]]
    dtype = np.dtype(detail["dtype"])
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype in (np.int8, np.uint8, np.int16, np.uint16):
        info = np.iinfo(dtype)
        return rng.integers(info.min, int(info.max) + 1, size=shape).astype(dtype)
    if dtype in (np.int32, np.int64):
        bound = index_bound(interp, model_path, detail["index"])
        if bound is not None:
            return rng.integers(0, max(bound, 1), size=shape).astype(dtype)
        return rng.integers(-(1 << 15), 1 << 15, size=shape).astype(dtype)
    if np.issubdtype(dtype, np.floating):
        if feeds_only_integer_casts(interp, detail["index"]):
            return rng.integers(1, 9, size=shape).astype(dtype)
        low, high = -1.0, 1.0
        span = quantize_range(interp, detail["index"])
        if span is not None:
            margin = (span[1] - span[0]) / 4
            low, high = span[0] - margin, span[1] + margin
        return rng.uniform(low, high, size=shape).astype(dtype)
    kind = "string" if dtype.kind in "SUO" else str(dtype)
    raise NoInputGenerator(f"input '{detail['name']}' is a {kind} tensor; "
                           "this test generates no values of that type")


def oracle_child(model_path, resolver_name, workdir, seed):
    """Runs LiteRT once; writes workdir/oracle.json and the .npy files."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    result = {"status": "refused", "stage": "load"}
    try:
        interp = Interpreter(
            model_path=model_path,
            experimental_op_resolver_type=getattr(OpResolverType, resolver_name))
        result["stage"] = "allocate_tensors"
        interp.allocate_tensors()
        result["stage"] = "inputs"
        rng = np.random.default_rng(seed)
        inputs = []
        for i, d in enumerate(interp.get_input_details()):
            value = make_input(interp, model_path, d, rng)
            np.save(os.path.join(workdir, f"in{i}.npy"), value)
            interp.set_tensor(d["index"], value)
            inputs.append(d["name"])
        result["stage"] = "invoke"
        interp.invoke()
        outputs = []
        for i, d in enumerate(interp.get_output_details()):
            np.save(os.path.join(workdir, f"ref{i}.npy"),
                    interp.get_tensor(d["index"]))
            outputs.append(d["name"])
        result = {"status": "ok", "inputs": inputs, "outputs": outputs}
    except NoInputGenerator as e:
        result = {"status": "skipped", "message": str(e)}
    except Exception as e:  # LiteRT refused the model at result["stage"].
        lines = [l for l in str(e).strip().splitlines() if l.strip()]
        result["message"] = " ".join(lines[-2:]) if lines else type(e).__name__
    with open(os.path.join(workdir, "oracle.json"), "w") as f:
        json.dump(result, f)
    return 0


def write_probed_model(source, destination, drop_ops=()):
    """Writes a copy of `source` whose subgraph 0 outputs every node's
    outputs in node order (string and resource tensors excepted), so the
    first mismatching output is where Kiln and LiteRT part. Nodes running
    one of `drop_ops` (builtin op names) are removed with their outputs."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as schema
    with open(source, "rb") as f:
        buf = f.read()
    model = schema.ModelT.InitFromPackedBuf(buf, 0)
    graph = model.subgraphs[0]
    dropped = {getattr(schema.BuiltinOperator, name) for name in drop_ops}

    def code_of(op):
        c = model.operatorCodes[op.opcodeIndex]
        return max(c.builtinCode, c.deprecatedBuiltinCode)

    graph.operators = [op for op in graph.operators or []
                       if code_of(op) not in dropped]
    skipped_types = (schema.TensorType.STRING, schema.TensorType.RESOURCE,
                     schema.TensorType.VARIANT)
    outputs = []
    for op in graph.operators:
        for t in (op.outputs if op.outputs is not None else []):
            t = int(t)
            if t >= 0 and t not in outputs and \
                    graph.tensors[t].type not in skipped_types:
                outputs.append(t)
    produced = set(outputs)
    for t in (graph.outputs if graph.outputs is not None else []):
        if int(t) not in produced and not dropped:  # e.g. an input passed on
            outputs.append(int(t))
    graph.outputs = outputs
    builder = flatbuffers.Builder(len(buf) + 4096)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    with open(destination, "wb") as f:
        f.write(builder.Output())


# --------------------------------------------------------------------------
# Parent: drives the oracle child and `kiln run`, compares, tabulates.
# --------------------------------------------------------------------------

def describe_exit(returncode):
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


def run_oracle_once(model_path, resolver, workdir, seed):
    """One oracle attempt: (result dict, None) or (None, failure text)."""
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    cmd = [sys.executable, os.path.abspath(__file__), "--oracle-child",
           model_path, "--resolver", resolver, "--workdir", workdir,
           "--seed", str(seed)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              timeout=ORACLE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {ORACLE_TIMEOUT_S} s"
    manifest = os.path.join(workdir, "oracle.json")
    if proc.returncode != 0 or not os.path.exists(manifest):
        tail = (proc.stderr.strip().splitlines() or [""])[-1][:120]
        return None, f"{describe_exit(proc.returncode)} {tail}".strip()
    with open(manifest) as f:
        return json.load(f), None


def run_oracle(model_path, workdir, seed):
    """Reference kernels first; optimized builtins only where REF fails.

    Returns (result, oracle name, note). result["status"] is "ok",
    "skipped" or "refused"; note records why REF was not used.
    """
    ref, ref_failure = run_oracle_once(model_path, "BUILTIN_REF", workdir, seed)
    if ref is not None and ref["status"] != "refused":
        return ref, "REF", ""
    ref_text = ref_failure or f"refused at {ref['stage']}: {ref['message']}"
    opt, opt_failure = run_oracle_once(
        model_path, "BUILTIN_WITHOUT_DEFAULT_DELEGATES", workdir, seed)
    if opt is not None and opt["status"] != "refused":
        return opt, "OPT", f"REF {ref_text}"
    if opt is None:  # Both resolvers crashed or hung: LiteRT cannot run it.
        return {"status": "refused", "message": f"REF {ref_text}; OPT "
                f"{opt_failure}"}, "REF+OPT", ""
    return {"status": "refused", "message": ref_text}, "REF+OPT", ""


def run_kiln(kiln, model_path, workdir, input_count, extra_args):
    """Returns (outputs, None) or (None, (kind, message)); kind is
    'refused' (error exit), 'crashed' (signal) or 'hung'."""
    out_dir = os.path.join(workdir, "kiln-out")
    args = [kiln, "run", model_path, "--output-dir", out_dir]
    for i in range(input_count):  # by index: names may be empty
        args += ["--input", f"{i}={os.path.join(workdir, f'in{i}.npy')}"]
    if input_count == 0:
        args += ["--input", "random"]
    args += extra_args
    try:
        proc = subprocess.run(args, capture_output=True, text=True,
                              timeout=KILN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, ("hung", f"no result after {KILN_TIMEOUT_S} s")
    message = proc.stderr.strip() or proc.stdout.strip()
    if proc.returncode < 0 or proc.returncode > 128:
        return None, ("crashed", f"{describe_exit(proc.returncode)} {message}")
    if proc.returncode != 0:
        return None, ("refused", message or describe_exit(proc.returncode))
    with open(os.path.join(out_dir, "outputs.json")) as f:
        manifest = json.load(f)
    return [(o["name"], np.load(os.path.join(out_dir, o["file"])))
            for o in manifest["outputs"]], None


def degenerate(name, value):
    """Says how an output proves little (empty or constant), or None."""
    if value.size == 0:
        return f"output '{name}' is empty"
    flat = value.reshape(-1)
    if flat.size > 1 and np.all(flat == flat[0]):
        return f"output '{name}' is constant ({flat[0]!r})"
    return None


def compare_one(name, ref, got, model):
    if ref.shape != got.shape:
        return f"output '{name}': shape {got.shape} vs LiteRT {ref.shape}"
    if ref.dtype != got.dtype:
        return f"output '{name}': dtype {got.dtype} vs LiteRT {ref.dtype}"
    if np.issubdtype(ref.dtype, np.floating):
        tol = LOOSER_FLOAT_BOUNDS.get(model, (FLOAT_TOLERANCE, ""))[0]
        if FLOAT_TOLERANCE > tol:  # raised with --float-tolerance
            tol = FLOAT_TOLERANCE
        if tol == 0:  # bit-exact floats (NaN equals NaN)
            same = np.array_equal(got, ref, equal_nan=True)
            return None if same else (
                f"output '{name}': float values differ bit for bit "
                f"(max abs error {np.nanmax(np.abs(got.astype(np.float64) - ref)):.3g})")
        finite = np.abs(ref[np.isfinite(ref)])
        scale = float(finite.max()) if finite.size else 0.0
        if not np.allclose(got, ref, rtol=tol, atol=tol * max(scale, 1e-30),
                           equal_nan=True):
            err = np.nanmax(np.abs(got.astype(np.float64) - ref))
            return (f"output '{name}': max abs error {err:.3g} (bound {tol:g} "
                    f"relative to each value and to the output's scale "
                    f"{scale:.3g})")
        return None
    tol = INTEGER_TOLERANCE.get(model, (0, ""))[0]
    if ref.dtype in (np.int8, np.uint8):
        tol = max(tol, QUANTIZED_TOLERANCE)
    diff = np.abs(got.astype(np.int64) - ref.astype(np.int64))
    if diff.size and diff.max() > tol:
        count = int(np.count_nonzero(diff > tol))
        return (f"output '{name}': {count}/{diff.size} values differ, "
                f"max {int(diff.max())} (allowed {tol})")
    return None


def compare(ref, got, model):
    """None, or what differs: the first differing output (in output order,
    for probed models the first node where Kiln and LiteRT part) and how
    many differ."""
    if len(ref) != len(got):
        return f"{len(got)} outputs, LiteRT gave {len(ref)}"
    problems = [p for p in (compare_one(name, r, g, model)
                            for (name, r), (_, g) in zip(ref, got)) if p]
    if not problems:
        return None
    more = f" ({len(problems)} of {len(ref)} outputs differ)" \
        if len(problems) > 1 else ""
    return problems[0] + more


class Table:
    """Rows and the honest counts printed at the end."""

    CATEGORIES = [
        ("matched", "compared & matched"),
        ("matched_degenerate", "compared & matched, but output empty/constant "
                               "by construction (DEGENERATE_OUTPUTS)"),
        ("mismatched", "mismatched"),
        ("degenerate", "compared, but output empty/constant (unexplained)"),
        ("litert_refused", "refused by LiteRT (Kiln refused cleanly too)"),
        ("litert_refused_kiln_ran", "refused by LiteRT, Kiln ran it"),
        ("kiln_refused_allowed", "refused by Kiln, allow-listed"),
        ("kiln_refused_unexpected", "refused by Kiln, unexpected"),
        ("kiln_crashed", "Kiln crashed or hung"),
        ("stale", "allow-listed refusal that Kiln now runs (stale entry)"),
        ("skipped", "skipped"),
    ]

    def __init__(self):
        self.rows = []
        self.counts = {key: 0 for key, _ in self.CATEGORIES}
        self.failures = 0

    def add(self, model, category, oracle, detail, failed):
        self.rows.append((model, category, oracle, detail, failed))
        self.counts[category] += 1
        self.failures += 1 if failed else 0

    def print(self):
        width = max([len(r[0]) for r in self.rows] + [5])
        print(f"{'model':<{width}}  {'oracle':<7} {'result':<26} detail")
        for model, category, oracle, detail, failed in self.rows:
            mark = "FAIL " if failed else ""
            # A failing row's detail is printed whole.
            print(f"{model:<{width}}  {oracle:<7} {mark + category:<26} "
                  f"{detail if failed else detail[:200]}")
        print("\nsummary (oracle REF = LiteRT reference kernels, OPT = "
              "LiteRT optimized builtins, used only where REF fails):")
        for key, label in self.CATEGORIES:
            print(f"  {self.counts[key]:4d}  {label}")
        print(f"  {len(self.rows):4d}  models in total; "
              f"{self.failures} failing")


def first_line(text):
    return (text.strip().splitlines() or [""])[0][:200]


def judge_litert_refusal(table, rel, oracle, message, kiln_result):
    outputs, failure = kiln_result
    detail = f"LiteRT: {message}"
    if failure is None:
        reason = KILN_RUNS_WHAT_LITERT_REFUSES.get(rel)
        table.add(rel, "litert_refused_kiln_ran", oracle,
                  f"{reason or 'Kiln should refuse it too'}; {detail}",
                  failed=reason is None)
    elif failure[0] != "refused":
        table.add(rel, "kiln_crashed", oracle,
                  f"Kiln {failure[0]}: {first_line(failure[1])}", failed=True)
    else:
        table.add(rel, "litert_refused", oracle,
                  f"{detail} | Kiln: {first_line(failure[1])}", failed=False)


def judge_kiln_refusal(table, rel, oracle, failure):
    kind, message = failure
    if kind != "refused":
        table.add(rel, "kiln_crashed", oracle,
                  f"Kiln {kind}: {first_line(message)}", failed=True)
        return
    allowed = EXPECTED_KILN_REFUSALS.get(rel)
    if allowed is None:
        table.add(rel, "kiln_refused_unexpected", oracle, first_line(message),
                  failed=True)
    elif not re.search(allowed[1], message):
        table.add(rel, "kiln_refused_unexpected", oracle,
                  f"allow-listed ({allowed[0]}) but message does not match "
                  f"/{allowed[1]}/: {first_line(message)}", failed=True)
    else:
        table.add(rel, "kiln_refused_allowed", oracle,
                  f"{allowed[0]} | Kiln: {first_line(message)}", failed=False)


def judge_comparison(table, rel, oracle, note, ref, got):
    problem = compare(ref, got, rel)
    if problem:
        table.add(rel, "mismatched", oracle, f"{problem} {note}".strip(),
                  failed=True)
        return
    if rel in EXPECTED_KILN_REFUSALS:
        table.add(rel, "stale", oracle, "matches LiteRT: remove it from "
                  "EXPECTED_KILN_REFUSALS", failed=True)
        return
    weak = [w for w in (degenerate(n, v) for n, v in ref) if w]
    reasons = [LOOSER_FLOAT_BOUNDS.get(rel, (0, ""))[1],
               INTEGER_TOLERANCE.get(rel, (0, ""))[1], note]
    if rel in PROBE_ALL_TENSORS:
        informative = len(ref) - len(weak)
        reasons.insert(0, f"{len(ref)} tensors compared, {informative} "
                       f"neither empty nor constant "
                       f"({PROBE_ALL_TENSORS[rel][0]})")
        weak = weak if informative == 0 else []
    detail = "; ".join(r for r in reasons if r)
    if not weak:
        table.add(rel, "matched", oracle, detail, failed=False)
    elif rel in DEGENERATE_OUTPUTS:
        table.add(rel, "matched_degenerate", oracle, DEGENERATE_OUTPUTS[rel],
                  failed=False)
    else:
        table.add(rel, "degenerate", oracle, weak[0], failed=True)


def check_model(table, args, path, workdir):
    rel = os.path.relpath(path, args.models).replace(os.sep, "/")
    if rel in PROBE_ALL_TENSORS or args.probe_all:
        os.makedirs(workdir)
        probed = os.path.join(workdir, "probed.tflite")
        write_probed_model(path, probed,
                           PROBE_ALL_TENSORS.get(rel, ("", ()))[1])
        path = probed
        workdir = os.path.join(workdir, "run")
    result, oracle, note = run_oracle(path, workdir, args.seed)
    if result["status"] == "skipped":
        table.add(rel, "skipped", oracle, result["message"], failed=False)
        return
    if result["status"] == "refused":
        kiln_result = run_kiln(args.kiln, path, workdir, 0, args.kiln_arg)
        judge_litert_refusal(table, rel, oracle, result["message"],
                             kiln_result)
        return
    got, failure = run_kiln(args.kiln, path, workdir, len(result["inputs"]),
                            args.kiln_arg)
    if failure is not None:
        judge_kiln_refusal(table, rel, oracle, failure)
        return
    ref = [(name, np.load(os.path.join(workdir, f"ref{i}.npy")))
           for i, name in enumerate(result["outputs"])]
    judge_comparison(table, rel, oracle, note, ref, got)


def find_models(root):
    models = []
    for folder, _, files in os.walk(root):
        models += [os.path.join(folder, f) for f in files
                   if f.endswith((".tflite", ".bin"))]
    return sorted(models)


def check_allow_lists(models_root):
    """Allow-list entries must name models that exist."""
    missing = [m for table in (EXPECTED_KILN_REFUSALS, DEGENERATE_OUTPUTS,
                               PROBE_ALL_TENSORS,
                               KILN_RUNS_WHAT_LITERT_REFUSES,
                               LOOSER_FLOAT_BOUNDS, INTEGER_TOLERANCE)
               for m in table if not os.path.exists(os.path.join(models_root, m))]
    for m in missing:
        print(f"differential_test: allow-list names {m}, which is not in "
              f"{models_root}")
    return not missing


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln")
    ap.add_argument("--models")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--kiln-arg", action="append", default=[])
    ap.add_argument("--only", help="regex: check only matching models")
    ap.add_argument("--probe-all", action="store_true",
                    help="compare every intermediate tensor of every model")
    ap.add_argument("--float-tolerance", type=float, default=None,
                    help="relative bound for float outputs (0: bit-exact); "
                    f"default {FLOAT_TOLERANCE}")
    ap.add_argument("--quantized-tolerance", type=int, default=0,
                    help="quanta int8/uint8 outputs may differ by (default 0)")
    ap.add_argument("--model-quantized-tolerance", action="append",
                    default=[], metavar="MODEL=N",
                    help="--quantized-tolerance for one model (path "
                    "relative to --models), e.g. where errors compound "
                    "across probed layers")
    ap.add_argument("--no-probe", action="store_true",
                    help="compare only the models' outputs, never "
                    "intermediate tensors (a delegate keeps a partition's "
                    "intermediates to itself)")
    ap.add_argument("--no-allow-lists", action="store_true",
                    help="for a folder other than the shared corpus: no "
                    "refusal, degenerate output or tolerance is excused")
    ap.add_argument("--oracle-child", metavar="MODEL", help=argparse.SUPPRESS)
    ap.add_argument("--resolver", help=argparse.SUPPRESS)
    ap.add_argument("--workdir", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.oracle_child:
        return oracle_child(args.oracle_child, args.resolver, args.workdir,
                            args.seed)
    if not args.kiln or not args.models:
        ap.error("--kiln and --models are required")
    if not os.path.isdir(args.models):
        print(f"differential_test: SKIPPED: model corpus {args.models} is "
              "absent")
        return SKIP_EXIT_CODE
    try:
        import ai_edge_litert.interpreter  # noqa: F401
    except ImportError as e:
        print(f"differential_test: SKIPPED: the LiteRT oracle cannot be "
              f"imported ({e}); pip install ai-edge-litert numpy")
        return SKIP_EXIT_CODE
    if args.float_tolerance is not None:
        globals()["FLOAT_TOLERANCE"] = args.float_tolerance
    globals()["QUANTIZED_TOLERANCE"] = args.quantized_tolerance
    for item in args.model_quantized_tolerance:
        model, _, quanta = item.rpartition("=")
        INTEGER_TOLERANCE[model] = (
            int(quanta), "--model-quantized-tolerance (see the test's "
            "definition for why)")
    if args.no_probe:
        PROBE_ALL_TENSORS.clear()
    if args.no_allow_lists:
        for table in (EXPECTED_KILN_REFUSALS, KILN_RUNS_WHAT_LITERT_REFUSES,
                      DEGENERATE_OUTPUTS, PROBE_ALL_TENSORS,
                      LOOSER_FLOAT_BOUNDS, INTEGER_TOLERANCE):
            table.clear()
    models = [m for m in find_models(args.models) if not args.only or
              re.search(args.only, os.path.relpath(m, args.models))]
    table = Table()
    workroot = tempfile.mkdtemp(prefix="kiln-diff-")
    try:
        for i, path in enumerate(models):
            check_model(table, args, path, os.path.join(workroot, str(i)))
    finally:
        shutil.rmtree(workroot, ignore_errors=True)
    table.print()
    lists_ok = args.only is not None or check_allow_lists(args.models)
    return 1 if table.failures or not lists_ok else 0


if __name__ == "__main__":
    sys.exit(main())
