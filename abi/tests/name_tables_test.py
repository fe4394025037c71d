#!/usr/bin/env python3
"""The ABI's op codes, tensor types, activations and paddings, and the
header-only name tables over them, checked value by value against the TFLite
schema as LiteRT ships it (ai_edge_litert.schema_py_generated), which the
headers promise to equal:

  - every `#define KILN_OP_<NAME> <N>` is BuiltinOperator.<NAME> == N, and
    every BuiltinOperator member has its KILN_OP_ define;
  - KilnBuiltinOpName(N) is the schema's name for every schema value N and
    "UNKNOWN" for every other value;
  - the same for KILN_TYPE_* / KilnTensorTypeName ("UNKNOWN_TYPE" for other
    values) against TensorType; Kiln may lag behind types newer LiteRT
    releases add: those are listed, not failed;
  - KILN_ACTIVATION_* against ActivationFunctionType, KILN_PADDING_* against
    Padding.

usage: name_tables_test.py ABI_INCLUDE_DIR NAME_TABLES_DUMP_EXECUTABLE
Exit 77 (reported as Skipped) when ai_edge_litert is not installed.
"""
import re
import subprocess
import sys
from pathlib import Path

SKIP = 77


def defines(header: Path, prefix: str) -> dict:
    """{NAME: value} of every `#define <prefix><NAME> <int>` in `header`."""
    pattern = re.compile(r"^#define\s+" + prefix + r"(\w+)\s+(-?\d+)\b", re.M)
    found = {}
    for name, value in pattern.findall(header.read_text()):
        if name in found:
            raise AssertionError(f"{header.name}: {prefix}{name} defined twice")
        found[name] = int(value)
    return found


def schema_enum(cls) -> dict:
    return {k: v for k, v in vars(cls).items()
            if not k.startswith("_") and isinstance(v, int)}


def compare_values(what: str, abi: dict, schema: dict, allow_missing: bool,
                   errors: list) -> None:
    for name, value in sorted(abi.items(), key=lambda kv: kv[1]):
        if name not in schema:
            errors.append(f"{what}{name} = {value}: the schema has no {name}")
        elif schema[name] != value:
            errors.append(f"{what}{name} = {value}: the schema says "
                          f"{schema[name]}")
    values = {}
    for name, value in abi.items():
        if value in values:
            errors.append(f"{what}{name} and {what}{values[value]} are both "
                          f"{value}")
        values[value] = name
    missing = sorted(set(schema) - set(abi), key=lambda n: schema[n])
    if missing and allow_missing:
        print(f"note: the ABI has no {what}* yet for: " +
              ", ".join(f"{n} ({schema[n]})" for n in missing))
    elif missing:
        errors.extend(f"{what}{n} ({schema[n]}) is missing from the ABI"
                      for n in missing)


def compare_names(table: str, function: str, dumped: dict, schema: dict,
                  abi: dict, unknown_name: str, errors: list) -> None:
    """`function` names every value the ABI defines as the schema does (as
    the ABI's define where the schema lacks the value) and every other value
    `unknown_name`."""
    schema_names = {v: n for n, v in schema.items()}
    abi_names = {v: n for n, v in abi.items()}
    for value, name in sorted(dumped.items()):
        expected = unknown_name
        if value in abi_names:
            expected = schema_names.get(value, abi_names[value])
        if name != expected:
            errors.append(f"{function}({value}) is {name!r}, the {table} "
                          f"table says {expected!r}")


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        from ai_edge_litert import schema_py_generated as tflite
    except ImportError as e:
        print(f"SKIPPED: ai_edge_litert is not installed ({e}); "
              "`pip install ai-edge-litert` to run this check")
        return SKIP
    include = Path(sys.argv[1]) / "kiln"
    dump = subprocess.run([sys.argv[2]], check=True, capture_output=True,
                          text=True).stdout
    dumped = {"op": {}, "type": {}}
    for line in dump.splitlines():
        table, value, name = line.split(" ", 2)
        dumped[table][int(value)] = name

    errors = []
    ops = defines(include / "kiln_builtin_ops.h", "KILN_OP_")
    schema_ops = schema_enum(tflite.BuiltinOperator)
    compare_values("KILN_OP_", ops, schema_ops, False, errors)
    compare_names("BuiltinOperator", "KilnBuiltinOpName", dumped["op"],
                  schema_ops, ops, "UNKNOWN", errors)

    types = defines(include / "kiln_common.h", "KILN_TYPE_")
    schema_types = schema_enum(tflite.TensorType)
    compare_values("KILN_TYPE_", types, schema_types, True, errors)
    compare_names("TensorType", "KilnTensorTypeName", dumped["type"],
                  schema_types, types, "UNKNOWN_TYPE", errors)

    extension = include / "kiln_extension.h"
    compare_values("KILN_ACTIVATION_", defines(extension, "KILN_ACTIVATION_"),
                   schema_enum(tflite.ActivationFunctionType), False, errors)
    compare_values("KILN_PADDING_", defines(extension, "KILN_PADDING_"),
                   schema_enum(tflite.Padding), False, errors)

    for e in errors:
        print("MISMATCH:", e)
    print(f"checked {len(ops)} op codes, {len(types)} tensor types and "
          f"{len(dumped['op']) + len(dumped['type'])} names: "
          f"{len(errors)} mismatches")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
