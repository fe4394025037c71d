"""LiteRT's Interpreter API over libkiln (the native module kiln._kiln).

A script written for `ai_edge_litert.interpreter.Interpreter` runs unchanged
with `kiln.interpreter.Interpreter`: the same constructor arguments, methods,
detail dictionaries and exception types (ValueError for bad arguments,
RuntimeError for failures), with libkiln's messages. Kiln's own additions
are keyword-only arguments (delegates, plugin_paths, plugin_dirs,
use_default_plugins) and methods (plugin_records, inspect, warnings,
arena_bytes). See docs/python.md.
"""
import enum
import sys
import warnings as _warnings

import numpy as np

from kiln import _kiln

# KilnTensorType codes (kiln/kiln_common.h; the numbers of TFLite's
# TensorType) -> (NumPy type, name used in messages).
_TYPES = {
    0: (np.float32, "FLOAT32"),
    1: (np.float16, "FLOAT16"),
    2: (np.int32, "INT32"),
    3: (np.uint8, "UINT8"),
    4: (np.int64, "INT64"),
    5: (np.bytes_, "STRING"),
    6: (np.bool_, "BOOL"),
    7: (np.int16, "INT16"),
    8: (np.complex64, "COMPLEX64"),
    9: (np.int8, "INT8"),
    10: (np.float64, "FLOAT64"),
    11: (np.complex128, "COMPLEX128"),
    12: (np.uint64, "UINT64"),
    15: (np.uint32, "UINT32"),
    16: (np.uint16, "UINT16"),
}
_STRING_TYPE = 5


def _numpy_type(code):
    if code not in _TYPES:
        raise ValueError(f"tensor type {code} has no NumPy equivalent")
    return _TYPES[code][0]


def _type_name(dtype):
    for numpy_type, name in _TYPES.values():
        if np.dtype(numpy_type) == dtype:
            return name
    return str(dtype).upper()


class OpResolverType(enum.Enum):
    """Accepted for compatibility with LiteRT and otherwise ignored: Kiln
    has no op resolver (kernels come from plugins) and applies no delegate
    it was not asked for, so every value behaves like
    BUILTIN_WITHOUT_DEFAULT_DELEGATES."""
    AUTO = 0
    BUILTIN = 1
    BUILTIN_REF = 2
    BUILTIN_WITHOUT_DEFAULT_DELEGATES = 3


class Delegate:
    """A delegate request: the name a plugin registered the delegate under
    (e.g. "opencl") and kiln.DelegateSettings in Protocol Buffers text
    format (e.g. "min_partition_size: 2")."""

    def __init__(self, name, settings="", plugin_path=None):
        if not isinstance(name, str) or not name:
            raise ValueError("a delegate needs the name its plugin registered "
                             "it under, e.g. 'opencl'")
        self.name = name
        self.settings = settings or ""
        self.plugin_path = plugin_path

    def __repr__(self):
        return f"kiln.Delegate({self.name!r}, settings={self.settings!r})"


def _options_to_text(options):
    """LiteRT-style {key: value} options -> kiln.DelegateSettings text, as
    `kiln run --delegate NAME:key=value` does."""
    lines = []
    for key, value in (options or {}).items():
        if key == "min_partition_size":
            lines.append(f"min_partition_size: {int(value)}")
        else:
            k = str(key).replace("\\", "\\\\").replace('"', '\\"')
            v = str(value).replace("\\", "\\\\").replace('"', '\\"')
            lines.append(f'options {{ key: "{k}" value: "{v}" }}')
    return "\n".join(lines)


def load_delegate(library, options=None, plugin_path=None):
    """LiteRT's load_delegate for Kiln: `library` is the delegate's name
    (e.g. "opencl"), `options` a {key: value} dict of its settings
    (min_partition_size, or delegate-specific options such as device).
    A delegate from a plugin outside the default plugin directory needs
    plugin_path (the plugin's .so file)."""
    return Delegate(library, _options_to_text(options), plugin_path)


def _as_delegate(item):
    if isinstance(item, Delegate):
        return item
    if isinstance(item, str):
        name, _, spec = item.partition(":")
        options = dict(kv.split("=", 1) for kv in spec.split(",") if kv)
        return Delegate(name, _options_to_text(options))
    if isinstance(item, (tuple, list)) and len(item) == 2:
        return Delegate(item[0], item[1])
    raise TypeError(
        f"delegate {item!r} is not a kiln delegate: pass kiln.load_delegate("
        "NAME, options), kiln.Delegate(NAME, settings), 'NAME[:key=value,...]'"
        " or (NAME, settings_text); LiteRT delegate objects do not apply")


def _plugin_options(delegates, plugin_paths, plugin_dirs, use_default_plugins,
                    max_extension_api_version):
    options = _kiln.PluginOptions()
    paths = [str(p) for p in (plugin_paths or [])]
    paths += [d.plugin_path for d in delegates if d.plugin_path]
    options.paths = paths
    options.directories = [str(d) for d in (plugin_dirs or [])]
    options.use_default = bool(use_default_plugins)
    options.delegates = [(d.name, d.settings) for d in delegates]
    options.max_extension_api = int(max_extension_api_version or 0)
    return options


def version_info():
    """Kiln's four version numbers, the default plugin directory and how it
    was found (relative to where libkiln is installed)."""
    info = _kiln.version_info()
    info["native_module"] = _kiln.__file__
    return info


def probe_plugins(plugin_paths=None, plugin_dirs=None,
                  use_default_plugins=True):
    """Loads every plugin the arguments select, as `kiln version` does, and
    returns one record per candidate: path, name, version,
    built_for_extension_api, loaded, negotiated_extension_api,
    refusal_reason."""
    return _kiln.probe_plugins(
        _plugin_options([], plugin_paths, plugin_dirs, use_default_plugins,
                        None))


def _decode_strings(raw, shape):
    """TFLite string tensor bytes (int32 count, int32 offsets[count + 1],
    data) -> array of bytes objects."""
    raw = bytes(raw)
    count = int(np.frombuffer(raw, np.int32, 1)[0]) if len(raw) >= 4 else 0
    offsets = np.frombuffer(raw, np.int32, count + 1, 4) if count else [0]
    items = [raw[offsets[i]:offsets[i + 1]] for i in range(count)]
    return np.array(items, dtype=object).reshape(shape)


def _encode_strings(array):
    items = [x if isinstance(x, bytes) else str(x).encode()
             for x in np.asarray(array, dtype=object).ravel()]
    header = 4 * (len(items) + 2)
    offsets = np.cumsum([header] + [len(x) for x in items]).astype(np.int32)
    return np.frombuffer(
        np.int32(len(items)).tobytes() + offsets.tobytes() + b"".join(items),
        np.uint8)


def _details(tensor, index):
    """LiteRT's tensor detail dictionary."""
    shape = tensor.shape or []
    signature = tensor.shape_signature
    scales, zero_points, dimension = tensor.quantization()
    legacy = ((float(scales[0]), int(zero_points[0]) if zero_points else 0)
              if len(scales) == 1 else (0.0, 0))
    return {
        "name": tensor.name,
        "index": index,
        "shape": np.array(shape, dtype=np.int32),
        "shape_signature": np.array(
            shape if signature is None else signature, dtype=np.int32),
        "dtype": _numpy_type(tensor.type),
        "quantization": legacy,
        "quantization_parameters": {
            "scales": np.array(scales, dtype=np.float32),
            "zero_points": np.array(zero_points, dtype=np.int32),
            "quantized_dimension": dimension,
            "block_size": 0,
        },
        "sparsity_parameters": {},
    }


class _Views:
    """Owner of every NumPy view of an interpreter's tensors: while any view
    (or a slice of one) is alive, this object has more references than its
    interpreter's own. It keeps the native interpreter alive."""
    __slots__ = ("native",)

    def __init__(self, native):
        self.native = native


_UNSAFE = ("There is at least 1 reference to internal data in the interpreter "
           "in the form of a numpy array or slice. Be sure to only hold the "
           "function returned from tensor() if you are using raw data access.")


def _read(tensor, copy, owner):
    """The tensor's values: a view of its memory (copy=False) or a copy."""
    shape = tuple(tensor.shape or [])
    numpy_type = _numpy_type(tensor.type)
    if tensor.byte_size == 0 and tensor.type != _STRING_TYPE:
        return np.zeros(shape, dtype=numpy_type)
    buffer = tensor.buffer(owner)
    if buffer is None:
        raise ValueError("Tensor data is null. Run allocate_tensors() first")
    if tensor.type == _STRING_TYPE:
        return _decode_strings(buffer, shape)
    view = buffer.view(numpy_type).reshape(shape)
    return view.copy() if copy else view


def _write(tensor, value, label):
    """Checks `value` against the tensor as LiteRT does, then copies it in
    (no intermediate copy when the array is already C-contiguous)."""
    if tensor.type == _STRING_TYPE:
        tensor.copy_from(_encode_strings(value))
        return
    array = np.asarray(value)
    expected = np.dtype(_numpy_type(tensor.type))
    if array.dtype != expected:
        raise ValueError(
            f"Cannot set tensor: Got value of type {_type_name(array.dtype)} "
            f"but expected type {_type_name(expected)} for {label}, name: "
            f"{tensor.name} ")
    shape = tensor.shape or []
    if array.ndim != len(shape):
        raise ValueError(
            f"Cannot set tensor: Dimension mismatch. Got {array.ndim} but "
            f"expected {len(shape)} for {label}.")
    for axis, (got, want) in enumerate(zip(array.shape, shape)):
        if got != want:
            raise ValueError(
                f"Cannot set tensor: Dimension mismatch. Got {got} but "
                f"expected {want} for dimension {axis} of {label}.")
    tensor.copy_from(np.ascontiguousarray(array))


class Interpreter:
    """Runs a TFLite model with Kiln; LiteRT's Interpreter API."""

    def __init__(self, model_path=None, model_content=None,
                 experimental_delegates=None, num_threads=None,
                 experimental_op_resolver_type=OpResolverType.AUTO,
                 experimental_preserve_all_tensors=False,
                 experimental_disable_delegate_clustering=False,
                 experimental_default_delegate_latest_features=False, *,
                 delegates=None, plugin_paths=None, plugin_dirs=None,
                 use_default_plugins=True, max_extension_api_version=None):
        if (model_path is None) == (model_content is None):
            raise ValueError("`model_path` or `model_content` must be "
                             "specified (exactly one of them).")
        if num_threads is not None:
            if not isinstance(num_threads, int):
                raise ValueError("type of num_threads should be int")
            if num_threads < 1 and num_threads != -1:
                raise ValueError("num_threads should >= 1")
        # Stored; Kiln's CPU kernels run on the calling thread for now.
        self.num_threads = num_threads
        self.op_resolver_type = experimental_op_resolver_type
        if experimental_preserve_all_tensors:
            _warnings.warn("kiln: experimental_preserve_all_tensors has no "
                           "effect: intermediate tensors share arena memory")
        self._delegates = [_as_delegate(d) for d in
                           list(experimental_delegates or []) +
                           list(delegates or [])]
        if model_path is not None:
            self._model_path = str(model_path)
            model = _kiln.Model.from_file(self._model_path)
        else:
            self._model_path = None
            model = _kiln.Model.from_bytes(bytes(model_content))
        self._native = _kiln.Interpreter(
            model, _plugin_options(self._delegates, plugin_paths, plugin_dirs,
                                   use_default_plugins,
                                   max_extension_api_version))
        self._views = _Views(self._native)
        self._inputs = self._native.input_tensor_indices()
        self._outputs = self._native.output_tensor_indices()
        self._runners = {}

    # ---- LiteRT's API ----
    def _ensure_safe(self):
        """Refuses to move tensor memory while NumPy views of it are alive
        (held by their arrays; this reference and getrefcount's own)."""
        if sys.getrefcount(self._views) > 2:
            raise RuntimeError(_UNSAFE)

    def allocate_tensors(self):
        self._ensure_safe()
        self._native.allocate_tensors()

    def invoke(self):
        self._ensure_safe()
        self._native.invoke()

    def _tensor(self, tensor_index):
        tensor = self._native.tensor(int(tensor_index))
        if tensor is None:
            raise ValueError(
                f"Invalid tensor index {tensor_index}: the main subgraph has "
                f"{self._native.tensor_count()} tensors")
        return tensor

    def get_input_details(self):
        return [_details(self._tensor(i), i) for i in self._inputs]

    def get_output_details(self):
        return [_details(self._tensor(i), i) for i in self._outputs]

    def get_tensor_details(self):
        return [_details(self._tensor(i), i)
                for i in range(self._native.tensor_count())]

    def set_tensor(self, tensor_index, value):
        _write(self._tensor(tensor_index), value, f"input {tensor_index}")

    def get_tensor(self, tensor_index, subgraph_index=0):
        if subgraph_index != 0:
            raise ValueError("kiln: get_tensor reads the main subgraph "
                             "(subgraph_index 0) only")
        return _read(self._tensor(tensor_index), True, self._views)

    def tensor(self, tensor_index):
        """A function returning a NumPy view of the tensor's memory (no
        copy). Hold the function, not the array: allocate_tensors, invoke
        and resize_tensor_input raise RuntimeError while a view is alive."""
        tensor = self._tensor(tensor_index)
        return lambda: _read(tensor, False, self._views)

    def resize_tensor_input(self, input_index, tensor_size, strict=False):
        if input_index not in self._inputs:
            raise ValueError(
                f"tensor {input_index} is not an input of the model (inputs "
                f"are tensors {self._inputs})")
        self._ensure_safe()
        dims = [int(d) for d in np.asarray(tensor_size).ravel()]
        if strict:
            signature = _details(self._tensor(input_index),
                                 input_index)["shape_signature"]
            for axis, (want, sig) in enumerate(zip(dims, signature)):
                if sig != -1 and want != sig:
                    raise ValueError(
                        f"ResizeInputTensorStrict only allows mutating "
                        f"unknown dimensions identified by -1: dimension "
                        f"{axis} is {sig}, not {want}")
        self._native.resize_input(self._inputs.index(input_index), dims)

    def get_signature_list(self):
        out = {}
        for key in self._native.signature_keys():
            runner = self._native.signature_runner(key)
            out[key] = {"inputs": sorted(runner.input_names()),
                        "outputs": sorted(runner.output_names())}
        return out

    def get_signature_runner(self, signature_key=None):
        keys = self._native.signature_keys()
        if signature_key is None:
            if len(keys) != 1:
                raise ValueError(
                    f"SignatureDef signature_key is None and model has "
                    f"{len(keys)} Signatures. None is only allowed when the "
                    f"model has 1 SignatureDef")
            signature_key = keys[0]
        if signature_key not in self._runners:
            self._runners[signature_key] = SignatureRunner(self, signature_key)
        return self._runners[signature_key]

    # ---- Kiln's additions ----
    def plugin_records(self):
        """Every plugin candidate this interpreter considered, in load order,
        with its negotiation outcome (as `kiln version` shows them)."""
        return self._native.plugin_records()

    def warnings(self):
        """Warnings so far (a delegate skipped or fallen back to kernels)."""
        return self._native.warnings()

    def arena_bytes(self):
        return self._native.arena_bytes()

    def inspect(self):
        """What `kiln inspect` shows, for this interpreter, as a dict."""
        native = self._native
        return {
            "model": self._model_path,
            "versions": version_info(),
            "num_threads": self.num_threads,
            "plugins": self.plugin_records(),
            "delegates": [{"name": d.name, "settings": d.settings}
                          for d in self._delegates],
            "inputs": list(self._inputs),
            "outputs": list(self._outputs),
            "tensors": [{k: v for k, v in d.items()
                         if k in ("index", "name", "shape", "dtype")}
                        for d in self.get_tensor_details()],
            "signatures": self.get_signature_list(),
            "subgraphs": [
                {"index": s,
                 "nodes": [native.node_info(s, n)
                           for n in range(native.node_count(s))]}
                for s in range(native.subgraph_count())],
            "arena_bytes": native.arena_bytes(),
            "warnings": native.warnings(),
        }


class SignatureRunner:
    """Runs one SignatureDef by input/output names (LiteRT's
    SignatureRunner). Get it from Interpreter.get_signature_runner."""

    def __init__(self, interpreter, signature_key):
        self._interpreter = interpreter  # keeps the interpreter alive
        self._native = interpreter._native.signature_runner(signature_key)
        self._key = signature_key
        self._inputs = self._native.input_names()
        self._outputs = self._native.output_names()
        self._allocated = False

    def _input(self, name):
        tensor = self._native.input(name)
        if tensor is None:
            raise ValueError(
                f"Invalid Input name ({name}) for SignatureDef "
                f"'{self._key}'; its inputs are {self._inputs}")
        return tensor

    def get_input_details(self):
        return {name: _details(self._input(name),
                               self._native.tensor_index(name, True))
                for name in self._inputs}

    def get_output_details(self):
        return {name: _details(self._native.output(name),
                               self._native.tensor_index(name, False))
                for name in self._outputs}

    def allocate_tensors(self):
        self._native.allocate_tensors()
        self._allocated = True

    def resize_tensor_input(self, input_name, new_shape):
        self._input(input_name)
        self._native.resize_input(input_name,
                                  [int(d) for d in np.asarray(new_shape)])
        self._allocated = False

    def __call__(self, **kwargs):
        """Runs the signature on the named inputs; returns {name: array}
        copies of every output."""
        if len(kwargs) != len(self._inputs):
            raise ValueError(
                f"Invalid number of inputs provided for running a "
                f"SignatureDef, expected {len(self._inputs)} vs provided "
                f"{len(kwargs)}")
        arrays = {name: np.asarray(value) for name, value in kwargs.items()}
        for name, array in arrays.items():
            tensor = self._input(name)
            if tensor.type != _STRING_TYPE and \
                    list(array.shape) != list(tensor.shape or []):
                self.resize_tensor_input(name, array.shape)
        if not self._allocated:
            self.allocate_tensors()
        for name, array in arrays.items():
            _write(self._input(name), array, f"input '{name}'")
        self._native.invoke()
        views = self._interpreter._views
        return {name: _read(self._native.output(name), True, views)
                for name in self._outputs}
