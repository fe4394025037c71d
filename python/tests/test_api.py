"""Tests of the kiln Python package as installed (pip install .): Kiln's own
additions, errors, zero-copy views and resizing. Expected values come from
NumPy arithmetic and the model files' documented contents, not from Kiln."""
import os

import numpy as np
import pytest

import kiln

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.environ.get("KILN_SHARED_MODELS_DIR",
                        os.path.join(HERE, "..", "..", "..", "shared",
                                     "models"))
PACKAGE_DIR = os.path.dirname(os.path.abspath(kiln.__file__))
PLUGIN_DIR = os.path.join(PACKAGE_DIR, "lib", "kiln", "plugins")


def model(relative):
    path = os.path.join(MODELS, relative)
    if not os.path.isfile(path):
        pytest.skip(f"corpus model absent: {path}")
    return path


def add_10x10(**kwargs):
    """add_10x10.tflite: out = a + b over [10, 10] float32."""
    interpreter = kiln.Interpreter(model_path=model("misc/add_10x10.tflite"),
                                   **kwargs)
    interpreter.allocate_tensors()
    return interpreter


def test_version_info_and_plugins_found_inside_the_package():
    info = kiln.version_info()
    assert info["c_api_version"].startswith("1.")
    assert info["runtime_version"] == kiln.__version__
    assert info["model_schema_version"] == 3
    # libkiln looked beside itself, inside the installed package.
    assert os.path.realpath(info["default_plugin_dir"]) == \
        os.path.realpath(PLUGIN_DIR)
    assert info["default_plugin_dir_found"].startswith("beside libkiln (")
    assert PACKAGE_DIR in os.path.realpath(
        info["default_plugin_dir_found"].split("(", 1)[1].rstrip(")"))
    records = {r["name"]: r for r in kiln.probe_plugins()}
    assert records["kiln_cpu"]["loaded"]
    assert records["kiln_cpu"]["negotiated_extension_api"].startswith("1.")
    assert records["kiln_cpu"]["path"].startswith(PLUGIN_DIR)
    assert "kiln_opencl" in records


def test_probe_without_defaults_finds_nothing():
    assert kiln.probe_plugins(use_default_plugins=False) == []
    refused = kiln.probe_plugins(plugin_paths=["/nonexistent/libx.so"],
                                 use_default_plugins=False)
    assert len(refused) == 1 and not refused[0]["loaded"]
    assert "/nonexistent/libx.so" in refused[0]["refusal_reason"]


def test_add_runs_from_path_and_from_content():
    a = np.arange(100, dtype=np.float32).reshape(10, 10)
    b = np.full((10, 10), 0.5, dtype=np.float32)
    path = model("misc/add_10x10.tflite")
    with open(path, "rb") as f:
        content = f.read()
    for interpreter in (kiln.Interpreter(model_path=path),
                        kiln.Interpreter(model_content=content)):
        interpreter.allocate_tensors()
        inputs = interpreter.get_input_details()
        interpreter.set_tensor(inputs[0]["index"], a)
        interpreter.set_tensor(inputs[1]["index"], b)
        interpreter.invoke()
        out = interpreter.get_tensor(
            interpreter.get_output_details()[0]["index"])
        np.testing.assert_array_equal(out, a + b)


def test_tensor_views_share_memory_and_get_tensor_copies():
    interpreter = add_10x10()
    in0, in1 = (d["index"] for d in interpreter.get_input_details())
    out = interpreter.get_output_details()[0]["index"]
    view = interpreter.tensor(in0)()
    assert view.shape == (10, 10) and view.dtype == np.float32
    assert np.shares_memory(view, interpreter.tensor(in0)())
    view[...] = 2.0  # written in place, no set_tensor
    interpreter.tensor(in1)()[...] = 3.0
    # As in LiteRT: memory may move while a view is alive, so it is refused.
    part = view[2:]
    del view
    with pytest.raises(RuntimeError, match="reference to internal data"):
        interpreter.invoke()
    del part
    interpreter.invoke()
    result = interpreter.tensor(out)()
    np.testing.assert_array_equal(result, np.full((10, 10), 5.0, np.float32))
    copy = interpreter.get_tensor(out)
    assert not np.shares_memory(copy, result)
    with pytest.raises(RuntimeError, match="reference to internal data"):
        interpreter.allocate_tensors()
    del result
    interpreter.allocate_tensors()


def test_set_tensor_checks_type_and_shape_like_litert():
    interpreter = add_10x10()
    index = interpreter.get_input_details()[0]["index"]
    with pytest.raises(ValueError, match="Got value of type FLOAT64 but "
                       "expected type FLOAT32"):
        interpreter.set_tensor(index, np.zeros((10, 10)))
    with pytest.raises(ValueError, match="Dimension mismatch. Got 9 but "
                       "expected 10 for dimension 0"):
        interpreter.set_tensor(index, np.zeros((9, 10), np.float32))
    with pytest.raises(ValueError, match="Invalid tensor index 99"):
        interpreter.get_tensor(99)


def test_errors_are_python_exceptions_with_kilns_messages(tmp_path):
    with pytest.raises(ValueError, match="exactly one"):
        kiln.Interpreter()
    missing = str(tmp_path / "missing.tflite")
    with pytest.raises((ValueError, RuntimeError)) as error:
        kiln.Interpreter(model_path=missing)
    assert missing in str(error.value)
    assert isinstance(error.value.status, int)
    garbage = tmp_path / "garbage.tflite"
    garbage.write_bytes(b"not a flatbuffer" * 4)
    with pytest.raises((ValueError, RuntimeError)) as error:
        kiln.Interpreter(model_path=str(garbage))
    assert str(garbage) in str(error.value)
    interpreter = kiln.Interpreter(model_path=model("misc/add_10x10.tflite"))
    with pytest.raises(RuntimeError, match="AllocateTensors"):
        interpreter.invoke()
    with pytest.raises((ValueError, RuntimeError),
                       match="no kernel for builtin op 'ADD'"):
        kiln.Interpreter(model_path=model("misc/add_10x10.tflite"),
                         use_default_plugins=False)


def test_plugin_paths_select_plugins_explicitly():
    interpreter = kiln.Interpreter(
        model_path=model("misc/add_10x10.tflite"), use_default_plugins=False,
        plugin_paths=[os.path.join(PLUGIN_DIR, "libkiln_cpu.so")])
    records = interpreter.plugin_records()
    assert [r["name"] for r in records] == ["kiln_cpu"]
    assert records[0]["loaded"] and records[0]["refusal_reason"] == ""


def test_resize_tensor_input_and_strict_mode():
    interpreter = kiln.Interpreter(
        model_path=model("quantization-testdata/gather_nd.bin"))
    detail = interpreter.get_input_details()[0]
    assert list(detail["shape_signature"]) == [-1, 2, 3]
    with pytest.raises(ValueError, match="-1"):
        interpreter.resize_tensor_input(detail["index"], [3, 2, 4],
                                        strict=True)
    interpreter.resize_tensor_input(detail["index"], [3, 2, 3], strict=True)
    interpreter.allocate_tensors()
    detail = interpreter.get_input_details()[0]
    assert list(detail["shape"]) == [3, 2, 3]
    assert list(detail["shape_signature"]) == [-1, 2, 3]
    with pytest.raises(ValueError, match="not an input"):
        interpreter.resize_tensor_input(
            interpreter.get_output_details()[0]["index"], [1])


def test_signature_runners():
    interpreter = kiln.Interpreter(
        model_path=model("misc/multi_signature_model.tflite"))
    signatures = interpreter.get_signature_list()
    assert sorted(signatures) == ["add", "mul", "sub"]
    with pytest.raises(ValueError, match="None is only allowed"):
        interpreter.get_signature_runner()
    with pytest.raises(ValueError, match="add"):
        interpreter.get_signature_runner("nope")
    runner = interpreter.get_signature_runner("add")
    details = runner.get_input_details()
    assert sorted(details) == signatures["add"]["inputs"]
    values = {name: np.full(d["shape"], 1.5, d["dtype"])
              for name, d in details.items()}
    result = runner(**values)
    assert sorted(result) == signatures["add"]["outputs"]
    with pytest.raises(ValueError, match="Invalid number of inputs"):
        runner()


def test_inspect_and_kiln_arguments():
    interpreter = kiln.Interpreter(
        model_path=model("misc/mobilenet_like_model.bin"), num_threads=4)
    assert interpreter.num_threads == 4
    report = interpreter.inspect()
    assert report["num_threads"] == 4
    ops = sorted(n["op"] for n in report["subgraphs"][0]["nodes"])
    assert ops == ["AVERAGE_POOL_2D", "CONV_2D", "CONV_2D",
                   "DEPTHWISE_CONV_2D", "MAX_POOL_2D", "SOFTMAX"]
    cpu = [r["path"] for r in report["plugins"] if r["name"] == "kiln_cpu"]
    assert all(n["runs_on"] == cpu[0] and not n["delegated"]
               for n in report["subgraphs"][0]["nodes"])
    assert report["versions"]["default_plugin_dir"]
    with pytest.raises(ValueError, match="num_threads"):
        kiln.Interpreter(model_path=model("misc/add_10x10.tflite"),
                         num_threads=0)


def test_delegate_arguments():
    delegate = kiln.load_delegate("opencl", {"device": "cpu",
                                             "min_partition_size": 2})
    assert delegate.name == "opencl"
    assert "min_partition_size: 2" in delegate.settings
    assert 'key: "device" value: "cpu"' in delegate.settings
    with pytest.raises(TypeError, match="not a kiln delegate"):
        kiln.Interpreter(model_path=model("misc/add_10x10.tflite"),
                         experimental_delegates=[object()])
    with pytest.raises((ValueError, RuntimeError), match="no_such_delegate"):
        kiln.Interpreter(model_path=model("misc/add_10x10.tflite"),
                         delegates=["no_such_delegate"])


def test_opencl_delegate_through_python():
    path = model("misc/mobilenet_like_model.bin")
    x = np.random.default_rng(3).uniform(-1, 1, (1, 5, 5, 3)).astype(
        np.float32)

    def run(**kwargs):
        interpreter = kiln.Interpreter(model_path=path, **kwargs)
        interpreter.allocate_tensors()
        detail = interpreter.get_input_details()[0]
        interpreter.resize_tensor_input(detail["index"], x.shape)
        interpreter.allocate_tensors()
        interpreter.set_tensor(detail["index"], x)
        interpreter.invoke()
        out = interpreter.get_output_details()[0]["index"]
        return interpreter, interpreter.get_tensor(out)

    interpreter, delegated = run(delegates=["opencl:device=cpu"])
    report = interpreter.inspect()
    if report["warnings"]:
        pytest.skip(f"OpenCL delegate unavailable: {report['warnings']}")
    nodes = report["subgraphs"][0]["nodes"]
    assert all(n["delegated"] and n["delegate"] == "opencl" for n in nodes)
    assert all(n["partition_node"] >= len(nodes) for n in nodes)
    _, on_cpu = run()
    np.testing.assert_allclose(delegated, on_cpu, rtol=1e-4, atol=1e-5)
