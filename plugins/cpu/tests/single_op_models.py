"""Builds single-operator TFLite models for tests (Python, test-only).

A model is described by the tensors its one operator reads and writes:

    model_bytes = build_model(
        "ADD", 2,
        inputs=[Tensor("a", "int8", [2, 3], quant=(0.02, -3)),
                Tensor("b", "int8", [3], quant=(0.01, 5), data=[1, 2, 3])],
        outputs=[Tensor("y", "int8", [2, 3], quant=(0.03, 0))],
        options=("AddOptions", {"fusedActivationFunction": 1}))

Tensors with `data` become constants (a buffer in the model); the others are
the model's inputs. Written with ai_edge_litert's schema bindings
(schema_py_generated), so the file is exactly what LiteRT reads.
"""
import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as schema

_TENSOR_TYPES = {
    "float32": schema.TensorType.FLOAT32,
    "float16": schema.TensorType.FLOAT16,
    "int32": schema.TensorType.INT32,
    "int64": schema.TensorType.INT64,
    "int16": schema.TensorType.INT16,
    "int8": schema.TensorType.INT8,
    "uint8": schema.TensorType.UINT8,
    "bool": schema.TensorType.BOOL,
}


class Tensor:
    """One tensor: name, numpy dtype name, shape, optional affine
    quantization (scale, zero_point) or per-channel ([scales], [zero points],
    axis), optional constant data."""

    def __init__(self, name, dtype, shape, quant=None, data=None):
        self.name = name
        self.dtype = dtype
        self.shape = list(shape)
        self.quant = quant
        self.data = None if data is None else np.asarray(
            data, dtype=np.dtype(dtype)).reshape(self.shape)


def _quantization(quant):
    if quant is None:
        return None
    q = schema.QuantizationParametersT()
    if isinstance(quant[0], (list, tuple, np.ndarray)):
        scales, zero_points, axis = quant
        q.scale = [float(s) for s in scales]
        q.zeroPoint = [int(z) for z in zero_points]
        q.quantizedDimension = int(axis)
    else:
        q.scale = [float(quant[0])]
        q.zeroPoint = [int(quant[1])]
    return q


def _options(options):
    if options is None:
        return 0, None
    name, fields = options
    table = getattr(schema, name + "T")()
    for key, value in fields.items():
        if not hasattr(table, key):
            raise ValueError(f"{name} has no field {key}")
        setattr(table, key, value)
    return getattr(schema.BuiltinOptions, name), table


def build_model(op_name, version, inputs, outputs, options=None):
    """Returns the bytes of a model running `op_name` (a BuiltinOperator
    name) at `version` on `inputs`, producing `outputs`. An input given as
    None is an omitted optional input (index -1)."""
    model = schema.ModelT()
    model.version = 3
    model.description = f"single {op_name} v{version} (kiln test)"
    code = schema.OperatorCodeT()
    code.builtinCode = getattr(schema.BuiltinOperator, op_name)
    code.deprecatedBuiltinCode = min(code.builtinCode, 127)
    code.version = version
    model.operatorCodes = [code]
    model.buffers = [schema.BufferT()]
    graph = schema.SubGraphT()
    graph.tensors, graph.inputs = [], []
    indices = {}
    for t in [t for t in inputs if t is not None] + outputs:
        if t.name in indices:
            continue
        tensor = schema.TensorT()
        tensor.name = t.name
        tensor.type = _TENSOR_TYPES[t.dtype]
        tensor.shape = t.shape
        tensor.quantization = _quantization(t.quant)
        if t.data is not None:
            buffer = schema.BufferT()
            buffer.data = np.frombuffer(t.data.tobytes(), dtype=np.uint8)
            tensor.buffer = len(model.buffers)
            model.buffers.append(buffer)
        elif t not in outputs:
            graph.inputs.append(len(graph.tensors))
        indices[t.name] = len(graph.tensors)
        graph.tensors.append(tensor)
    op = schema.OperatorT()
    op.opcodeIndex = 0
    op.inputs = [-1 if t is None else indices[t.name] for t in inputs]
    op.outputs = [indices[t.name] for t in outputs]
    op.builtinOptionsType, op.builtinOptions = _options(options)
    graph.operators = [op]
    graph.outputs = [indices[t.name] for t in outputs]
    model.subgraphs = [graph]
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())
