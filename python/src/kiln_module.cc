// kiln._kiln: the thin native layer of the Python package. It binds the
// application C API of libkiln (kiln/kiln_c_api.h) and nothing else; the
// LiteRT-compatible Interpreter is written in Python on top of it
// (python/kiln/interpreter.py).
//
// Lifetimes: a Tensor or SignatureRunner keeps its Interpreter alive, an
// Interpreter keeps its Model alive, and a Model made from bytes keeps the
// bytes alive (libkiln does not copy them). Tensor.buffer(owner) is a NumPy
// view of the tensor's memory: valid until the next allocate_tensors,
// resize or invoke (dynamic tensors move); kiln.Interpreter refuses those
// while views are alive, as LiteRT does. allocate_tensors and invoke release
// the GIL: other Python threads run meanwhile (each interpreter still serves
// one thread at a time).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/kiln_c_api.h"

namespace nb = nanobind;

namespace {

// A KilnError turned into a C++ exception; translated to a Python
// exception by the module (kiln.KilnValueError / kiln.KilnRuntimeError).
struct KilnException {
  KilnStatus code;
  std::string message;
};

void Check(KilnError* error) {
  if (error == nullptr) return;
  KilnException e{KilnErrorCode(error), KilnErrorMessage(error)};
  KilnErrorDestroy(error);
  throw e;
}

// [get(0), ..., get(n - 1)] as strings.
template <typename Get>
std::vector<std::string> StringList(int32_t n, Get get) {
  std::vector<std::string> out;
  for (int32_t i = 0; i < n; ++i) out.emplace_back(get(i));
  return out;
}

using ByteView = nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>;
using AnyContiguousArray = nb::ndarray<nb::c_contig, nb::device::cpu>;

class Model {
 public:
  static std::shared_ptr<Model> FromFile(const std::string& path) {
    auto m = std::make_shared<Model>();
    Check(KilnModelCreateFromFile(path.c_str(), &m->model_));
    return m;
  }
  static std::shared_ptr<Model> FromBytes(nb::bytes content) {
    auto m = std::make_shared<Model>();
    m->content_ = content;
    Check(
        KilnModelCreateFromBuffer(content.c_str(), content.size(), &m->model_));
    return m;
  }
  ~Model() { KilnModelDestroy(model_); }
  const KilnModel* get() const { return model_; }

 private:
  KilnModel* model_ = nullptr;
  nb::object content_;  // the bytes a buffer-backed model reads
};

struct PluginOptions {
  std::vector<std::string> paths, directories;
  bool use_default = true;
  std::vector<std::pair<std::string, std::string>> delegates;  // name, text
  uint32_t max_extension_api = 0;
};

// Owns a KilnInterpreterOptions built from `o`.
std::unique_ptr<KilnInterpreterOptions, void (*)(KilnInterpreterOptions*)>
MakeOptions(const PluginOptions& o) {
  std::unique_ptr<KilnInterpreterOptions, void (*)(KilnInterpreterOptions*)>
      options(KilnInterpreterOptionsCreate(), &KilnInterpreterOptionsDestroy);
  for (const std::string& p : o.paths) {
    KilnInterpreterOptionsAddPluginPath(options.get(), p.c_str());
  }
  for (const std::string& d : o.directories) {
    KilnInterpreterOptionsAddPluginDirectory(options.get(), d.c_str());
  }
  KilnInterpreterOptionsSetUseDefaultPlugins(options.get(),
                                             o.use_default ? 1 : 0);
  Check(KilnInterpreterOptionsSetMaxExtensionApiVersion(options.get(),
                                                        o.max_extension_api));
  for (const auto& [name, text] : o.delegates) {
    KilnInterpreterOptionsAddDelegateTextSettings(options.get(), name.c_str(),
                                                  text.c_str());
  }
  return options;
}

std::string VersionString(uint32_t v) {
  return std::to_string(KILN_VERSION_MAJOR(v)) + "." +
         std::to_string(KILN_VERSION_MINOR(v)) + "." +
         std::to_string(KILN_VERSION_PATCH(v));
}

nb::list ProbeRecords(KilnPluginProbe* probe) {
  nb::list out;
  for (int32_t i = 0; i < KilnPluginProbeCount(probe); ++i) {
    nb::dict r;
    const uint32_t abi = KilnPluginProbeAbiVersion(probe, i);
    const uint32_t negotiated = KilnPluginProbeNegotiatedVersion(probe, i);
    r["path"] = KilnPluginProbePath(probe, i);
    r["name"] = KilnPluginProbeName(probe, i);
    r["version"] = KilnPluginProbePluginVersion(probe, i);
    r["built_for_extension_api"] = abi == 0 ? "" : VersionString(abi);
    r["loaded"] = KilnPluginProbeLoaded(probe, i) != 0;
    r["negotiated_extension_api"] =
        negotiated == 0 ? "" : VersionString(negotiated);
    r["refusal_reason"] = KilnPluginProbeRefusalReason(probe, i);
    out.append(r);
  }
  KilnPluginProbeDestroy(probe);
  return out;
}

std::optional<std::vector<int32_t>> Dims(int32_t rank,
                                         int32_t (*dim)(const KilnTensor*,
                                                        int32_t),
                                         const KilnTensor* t) {
  if (rank < 0) return std::nullopt;
  std::vector<int32_t> dims(static_cast<size_t>(rank));
  for (int32_t a = 0; a < rank; ++a) dims[static_cast<size_t>(a)] = dim(t, a);
  return dims;
}

// A tensor of an interpreter; keeps the interpreter (`owner`) alive.
class Tensor {
 public:
  Tensor(KilnTensor* tensor, nb::object owner)
      : tensor_(tensor), owner_(std::move(owner)) {}

  std::string name() const { return KilnTensorName(tensor_); }
  int type() const { return static_cast<int>(KilnTensorGetType(tensor_)); }
  std::optional<std::vector<int32_t>> shape() const {
    return Dims(KilnTensorNumDims(tensor_), &KilnTensorDim, tensor_);
  }
  std::optional<std::vector<int32_t>> shape_signature() const {
    return Dims(KilnTensorShapeSignatureNumDims(tensor_),
                &KilnTensorShapeSignatureDim, tensor_);
  }
  size_t byte_size() const { return KilnTensorByteSize(tensor_); }
  // (scales, zero_points, quantized_dimension); empty lists when float.
  std::tuple<std::vector<float>, std::vector<int64_t>, int32_t> quantization()
      const {
    KilnTensorQuantizationInfo q;
    q.struct_size = KILN_TENSOR_QUANTIZATION_INFO_STRUCT_SIZE;
    Check(KilnTensorGetQuantizationInfo(tensor_, &q));
    return {
        std::vector<float>(q.scales, q.scales + q.num_scales),
        std::vector<int64_t>(q.zero_points, q.zero_points + q.num_zero_points),
        q.quantized_dimension};
  }
  // Bytes of the tensor as a 1-D uint8 view (no copy) that keeps `owner`
  // alive (the caller counts live views through it); None before
  // allocate_tensors. `owner` must keep the interpreter alive.
  std::optional<ByteView> buffer(nb::object owner) const {
    void* data = KilnTensorData(tensor_);
    if (data == nullptr) return std::nullopt;
    const size_t shape[1] = {KilnTensorByteSize(tensor_)};
    return ByteView(data, 1, shape, owner);
  }
  // Copies the array's bytes in (exactly byte_size() of them).
  void copy_from(AnyContiguousArray array) {
    Check(KilnTensorCopyFromBuffer(tensor_, array.data(), array.nbytes()));
  }

 private:
  KilnTensor* tensor_;
  nb::object owner_;
};

std::optional<Tensor> WrapTensor(KilnTensor* t, nb::object owner) {
  if (t == nullptr) return std::nullopt;
  return Tensor(t, std::move(owner));
}

class SignatureRunner {
 public:
  SignatureRunner(KilnSignatureRunner* runner, nb::object owner)
      : runner_(runner), owner_(std::move(owner)) {}
  std::vector<std::string> names(bool inputs) const {
    if (inputs) {
      return StringList(KilnSignatureRunnerInputCount(runner_), [&](int32_t i) {
        return KilnSignatureRunnerInputName(runner_, i);
      });
    }
    return StringList(KilnSignatureRunnerOutputCount(runner_), [&](int32_t i) {
      return KilnSignatureRunnerOutputName(runner_, i);
    });
  }
  std::optional<Tensor> input(const std::string& name) {
    return WrapTensor(KilnSignatureRunnerInput(runner_, name.c_str()), owner_);
  }
  std::optional<Tensor> output(const std::string& name) {
    return WrapTensor(const_cast<KilnTensor*>(
                          KilnSignatureRunnerOutput(runner_, name.c_str())),
                      owner_);
  }
  int32_t tensor_index(const std::string& name, bool input) const {
    return input ? KilnSignatureRunnerInputTensorIndex(runner_, name.c_str())
                 : KilnSignatureRunnerOutputTensorIndex(runner_, name.c_str());
  }
  void resize_input(const std::string& name, std::vector<int32_t> dims) {
    Check(KilnSignatureRunnerResizeInput(runner_, name.c_str(), dims.data(),
                                         static_cast<int32_t>(dims.size())));
  }
  void allocate_tensors() {
    Check(KilnSignatureRunnerAllocateTensors(runner_));
  }
  void invoke() { Check(KilnSignatureRunnerInvoke(runner_)); }

 private:
  KilnSignatureRunner* runner_;
  nb::object owner_;
};

class Interpreter {
 public:
  Interpreter(std::shared_ptr<Model> model, const PluginOptions& options)
      : model_(std::move(model)) {
    auto opts = MakeOptions(options);
    Check(KilnInterpreterCreate(model_->get(), opts.get(), &interpreter_));
  }
  ~Interpreter() { KilnInterpreterDestroy(interpreter_); }
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  KilnInterpreter* get() const { return interpreter_; }
  void allocate_tensors() {
    Check(KilnInterpreterAllocateTensors(interpreter_));
  }
  void invoke() { Check(KilnInterpreterInvoke(interpreter_)); }
  void resize_input(int32_t position, std::vector<int32_t> dims) {
    Check(KilnInterpreterResizeInput(interpreter_, position, dims.data(),
                                     static_cast<int32_t>(dims.size())));
  }
  std::vector<int32_t> io_tensor_indices(bool inputs) const {
    std::vector<int32_t> out;
    const int32_t n = inputs ? KilnInterpreterInputCount(interpreter_)
                             : KilnInterpreterOutputCount(interpreter_);
    for (int32_t i = 0; i < n; ++i) {
      out.push_back(inputs ? KilnInterpreterInputTensorIndex(interpreter_, i)
                           : KilnInterpreterOutputTensorIndex(interpreter_, i));
    }
    return out;
  }
  std::vector<std::string> signature_keys() const {
    return StringList(KilnInterpreterSignatureCount(interpreter_),
                      [&](int32_t i) {
                        return KilnInterpreterSignatureKey(interpreter_, i);
                      });
  }
  nb::list plugin_records() const {
    KilnPluginProbe* probe = nullptr;
    Check(KilnInterpreterGetPluginProbe(interpreter_, &probe));
    return ProbeRecords(probe);
  }
  nb::dict node_info(int32_t subgraph, int32_t node) const {
    KilnNodeInfo info;
    info.struct_size = KILN_NODE_INFO_STRUCT_SIZE;
    Check(KilnInterpreterGetNodeInfo(interpreter_, subgraph, node, &info));
    nb::dict d;
    d["index"] = info.index;
    d["op"] = info.op;
    d["version"] = info.version;
    d["runs_on"] = info.host_intrinsic ? "host" : info.plugin_path;
    d["delegated"] = info.delegated != 0;
    d["delegate"] = info.delegate_name;
    d["partition_node"] = info.partition_node;
    d["delegate_decline_reason"] = info.decline_reason;
    return d;
  }
  std::vector<std::string> warnings() const {
    return StringList(
        KilnInterpreterWarningCount(interpreter_),
        [&](int32_t i) { return KilnInterpreterWarning(interpreter_, i); });
  }

 private:
  std::shared_ptr<Model> model_;
  KilnInterpreter* interpreter_ = nullptr;
};

nb::dict VersionInfo() {
  KilnVersionInfo info;
  info.struct_size = KILN_VERSION_INFO_STRUCT_SIZE;
  Check(KilnGetVersionInfo(&info));
  nb::dict d;
  d["runtime_version"] = VersionString(info.runtime_version);
  d["c_api_version"] = VersionString(info.c_api_version);
  d["extension_api_version"] = VersionString(info.ext_api_version);
  d["min_extension_api_version"] = VersionString(info.min_ext_api_version);
  d["model_schema_version"] = info.model_schema_version;
  d["default_plugin_dir"] = KilnDefaultPluginDirectory();
  d["default_plugin_dir_found"] = KilnDefaultPluginDirectoryOrigin();
  return d;
}

nb::list ProbePlugins(const PluginOptions& options) {
  auto opts = MakeOptions(options);
  KilnPluginProbe* probe = nullptr;
  Check(KilnPluginProbeCreate(opts.get(), &probe));
  return ProbeRecords(probe);
}

void BindTensor(nb::module_& m) {
  nb::class_<Tensor>(m, "Tensor")
      .def_prop_ro("name", &Tensor::name)
      .def_prop_ro("type", &Tensor::type)
      .def_prop_ro("shape", &Tensor::shape)
      .def_prop_ro("shape_signature", &Tensor::shape_signature)
      .def_prop_ro("byte_size", &Tensor::byte_size)
      .def("quantization", &Tensor::quantization)
      .def("buffer", &Tensor::buffer, nb::arg("owner"))
      .def("copy_from", &Tensor::copy_from, nb::arg("array"));
  nb::class_<SignatureRunner>(m, "SignatureRunner")
      .def("input_names",
           [](const SignatureRunner& r) { return r.names(true); })
      .def("output_names",
           [](const SignatureRunner& r) { return r.names(false); })
      .def("input", &SignatureRunner::input)
      .def("output", &SignatureRunner::output)
      .def("tensor_index", &SignatureRunner::tensor_index, nb::arg("name"),
           nb::arg("input"))
      .def("resize_input", &SignatureRunner::resize_input)
      .def("allocate_tensors", &SignatureRunner::allocate_tensors,
           nb::call_guard<nb::gil_scoped_release>())
      .def("invoke", &SignatureRunner::invoke,
           nb::call_guard<nb::gil_scoped_release>());
}

void BindInterpreter(nb::module_& m) {
  nb::class_<Interpreter>(m, "Interpreter")
      .def(nb::init<std::shared_ptr<Model>, const PluginOptions&>())
      .def("allocate_tensors", &Interpreter::allocate_tensors,
           nb::call_guard<nb::gil_scoped_release>())
      .def("invoke", &Interpreter::invoke,
           nb::call_guard<nb::gil_scoped_release>())
      .def("resize_input", &Interpreter::resize_input)
      .def("input_tensor_indices",
           [](const Interpreter& i) { return i.io_tensor_indices(true); })
      .def("output_tensor_indices",
           [](const Interpreter& i) { return i.io_tensor_indices(false); })
      .def("tensor_count",
           [](const Interpreter& i) {
             return KilnInterpreterTensorCount(i.get());
           })
      .def("tensor",
           [](nb::object self, int32_t index) {
             Interpreter& i = nb::cast<Interpreter&>(self);
             return WrapTensor(KilnInterpreterTensor(i.get(), index), self);
           })
      .def("signature_keys", &Interpreter::signature_keys)
      .def("signature_runner",
           [](nb::object self, const std::string& key) {
             Interpreter& i = nb::cast<Interpreter&>(self);
             KilnSignatureRunner* r = nullptr;
             Check(KilnInterpreterGetSignatureRunner(i.get(), key.c_str(), &r));
             return SignatureRunner(r, self);
           })
      .def("plugin_records", &Interpreter::plugin_records)
      .def("subgraph_count",
           [](const Interpreter& i) {
             return KilnInterpreterSubgraphCount(i.get());
           })
      .def("node_count",
           [](const Interpreter& i, int32_t subgraph) {
             return KilnInterpreterNodeCount(i.get(), subgraph);
           })
      .def("node_info", &Interpreter::node_info)
      .def("warnings", &Interpreter::warnings)
      .def("arena_bytes", [](const Interpreter& i) {
        return KilnInterpreterArenaBytes(i.get());
      });
}

void BindOptions(nb::module_& m) {
  nb::class_<PluginOptions>(m, "PluginOptions")
      .def(nb::init<>())
      .def_rw("paths", &PluginOptions::paths)
      .def_rw("directories", &PluginOptions::directories)
      .def_rw("use_default", &PluginOptions::use_default)
      .def_rw("delegates", &PluginOptions::delegates)
      .def_rw("max_extension_api", &PluginOptions::max_extension_api);
  nb::class_<Model>(m, "Model")
      .def_static("from_file", &Model::FromFile, nb::arg("path"))
      .def_static("from_bytes", &Model::FromBytes, nb::arg("content"));
}

// The exception types of the module (created once; never freed, as Python
// may still raise them during interpreter shutdown).
PyObject* g_value_error = nullptr;
PyObject* g_runtime_error = nullptr;

PyObject* MakeErrorType(const char* name, const char* base) {
  nb::object builtins = nb::module_::import_("builtins");
  nb::dict body;
  body["__module__"] = "kiln";
  body["__doc__"] =
      "Raised with libkiln's message; .status is the KILN_STATUS_* code.";
  return builtins.attr("type")(name, nb::make_tuple(builtins.attr(base)), body)
      .release()
      .ptr();
}

void TranslateKilnException(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const KilnException& e) {
    // Codes that mean "the caller passed something wrong" become ValueError
    // (as LiteRT raises them); the rest RuntimeError.
    const bool caller_error = e.code == KILN_STATUS_INVALID_ARGUMENT ||
                              e.code == KILN_STATUS_NOT_FOUND ||
                              e.code == KILN_STATUS_OUT_OF_RANGE;
    nb::handle type(caller_error ? g_value_error : g_runtime_error);
    nb::object error = type(e.message);
    error.attr("status") = static_cast<int>(e.code);
    PyErr_SetObject(type.ptr(), error.ptr());
  }
}

}  // namespace

NB_MODULE(_kiln, m) {
  m.doc() = "Native layer of the kiln package over libkiln's C API.";
  g_value_error = MakeErrorType("KilnValueError", "ValueError");
  g_runtime_error = MakeErrorType("KilnRuntimeError", "RuntimeError");
  m.attr("KilnValueError") = nb::handle(g_value_error);
  m.attr("KilnRuntimeError") = nb::handle(g_runtime_error);
  nb::register_exception_translator(&TranslateKilnException);
  BindOptions(m);
  BindTensor(m);
  BindInterpreter(m);
  m.def("version_info", &VersionInfo);
  m.def("probe_plugins", &ProbePlugins, nb::arg("options"));
}
