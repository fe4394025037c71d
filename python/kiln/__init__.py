"""Kiln: run TFLite models with LiteRT's Interpreter API.

    import kiln
    interpreter = kiln.Interpreter(model_path="model.tflite")
    interpreter.allocate_tensors()
    ...

`kiln.Interpreter` is a drop-in for `ai_edge_litert.interpreter.Interpreter`
(also importable as `kiln.interpreter.Interpreter`); see docs/python.md.
Everything runs in libkiln through its application C API; the kernels and
delegates come from plugins, found beside libkiln inside this package.
"""
from kiln._kiln import KilnRuntimeError, KilnValueError
from kiln.interpreter import (Delegate, Interpreter, OpResolverType,
                              SignatureRunner, load_delegate, probe_plugins,
                              version_info)

__version__ = version_info()["runtime_version"]

__all__ = [
    "Delegate",
    "Interpreter",
    "KilnRuntimeError",
    "KilnValueError",
    "OpResolverType",
    "SignatureRunner",
    "load_delegate",
    "probe_plugins",
    "version_info",
]
