// Application C API: models, interpreters, tensors and signature runners,
// over kiln::Model and kiln::Interpreter.
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "c_api/c_api_internal.h"
#include "interpreter/interpreter.h"
#include "model/model.h"
#include "runtime/buffer_handles.h"

// KilnTensor and KilnSignatureRunner are the interpreter's own objects:
// KilnTensor* is a kiln::TensorState* (its run state, ->desc its
// description), KilnSignatureRunner* a
// kiln::SignatureRunner*. Both stay valid until the interpreter is destroyed.
// Tensors are looked up without synchronising a delegate buffer handle
// bound to them; the data accessors (KilnTensorData, KilnTensorCopyToBuffer)
// synchronise (runtime/buffer_handles.h).

namespace {

kiln::TensorState* T(KilnTensor* t) {
  return reinterpret_cast<kiln::TensorState*>(t);
}
const kiln::TensorState* T(const KilnTensor* t) {
  return reinterpret_cast<const kiln::TensorState*>(t);
}
KilnTensor* Wrap(kiln::TensorState* t) {
  return reinterpret_cast<KilnTensor*>(t);
}
const KilnTensor* Wrap(const kiln::TensorState* t) {
  return reinterpret_cast<const KilnTensor*>(t);
}
kiln::SignatureRunner* R(KilnSignatureRunner* r) {
  return reinterpret_cast<kiln::SignatureRunner*>(r);
}
const kiln::SignatureRunner* R(const KilnSignatureRunner* r) {
  return reinterpret_cast<const kiln::SignatureRunner*>(r);
}

KilnError* NullArgument(const char* function, const char* argument) {
  return kiln::MakeKilnError(
      KILN_STATUS_INVALID_ARGUMENT,
      std::string(function) + ": " + argument + " is NULL");
}

std::vector<int32_t> Dims(const int32_t* dims, int32_t rank) {
  return rank > 0 ? std::vector<int32_t>(dims, dims + rank)
                  : std::vector<int32_t>();
}

size_t ByteSize(const kiln::TensorState& t) {
  if (t.data != nullptr) return t.bytes;
  return t.RequiredBytes();
}

}  // namespace

extern "C" {

// ---- Models ----

KilnError* KilnModelCreateFromFile(const char* path, KilnModel** model) {
  if (model == nullptr) return NullArgument("KilnModelCreateFromFile", "model");
  *model = nullptr;
  if (path == nullptr) return NullArgument("KilnModelCreateFromFile", "path");
  absl::StatusOr<std::shared_ptr<const kiln::Model>> m =
      kiln::Model::FromFile(path);
  if (!m.ok()) return kiln::ToKilnError(m.status());
  *model = new KilnModel{*std::move(m)};
  return nullptr;
}

KilnError* KilnModelCreateFromBuffer(const void* data, size_t size,
                                     KilnModel** model) {
  if (model == nullptr) {
    return NullArgument("KilnModelCreateFromBuffer", "model");
  }
  *model = nullptr;
  if (data == nullptr) return NullArgument("KilnModelCreateFromBuffer", "data");
  absl::StatusOr<std::shared_ptr<const kiln::Model>> m =
      kiln::Model::FromBuffer(data, size);
  if (!m.ok()) return kiln::ToKilnError(m.status());
  *model = new KilnModel{*std::move(m)};
  return nullptr;
}

void KilnModelDestroy(KilnModel* model) { delete model; }

// ---- Interpreter ----

KilnError* KilnInterpreterCreate(const KilnModel* model,
                                 const KilnInterpreterOptions* options,
                                 KilnInterpreter** interpreter) {
  if (interpreter == nullptr) {
    return NullArgument("KilnInterpreterCreate", "interpreter");
  }
  *interpreter = nullptr;
  if (model == nullptr) return NullArgument("KilnInterpreterCreate", "model");
  kiln::InterpreterOptions opts;
  if (options != nullptr) {
    opts.plugins = options->plugins;
    opts.profile = options->profile;
    opts.plan_cache = options->plan_cache;
    opts.max_arena_bytes = options->max_arena_bytes;
    opts.max_while_iterations = options->max_while_iterations;
    opts.invoke_timeout = std::chrono::milliseconds(options->invoke_timeout_ms);
    opts.use_default_delegates = options->use_default_delegates;
    opts.num_threads = options->num_threads;
    for (const KilnDelegateRequest& r : options->delegates) {
      kiln::DelegateRequest d;
      d.name = r.name;
      d.settings = r.settings;
      d.text_settings = r.text_settings;
      d.is_text = r.is_text;
      opts.delegates.push_back(std::move(d));
    }
  }
  absl::StatusOr<std::unique_ptr<kiln::Interpreter>> created =
      kiln::Interpreter::Create(model->model, opts);
  if (!created.ok()) return kiln::ToKilnError(created.status());
  *interpreter = new KilnInterpreter();
  (*interpreter)->interpreter = *std::move(created);
  return nullptr;
}

void KilnInterpreterDestroy(KilnInterpreter* interpreter) {
  delete interpreter;
}

KilnError* KilnInterpreterAllocateTensors(KilnInterpreter* interpreter) {
  if (interpreter == nullptr) {
    return NullArgument("KilnInterpreterAllocateTensors", "interpreter");
  }
  return kiln::ToKilnError(interpreter->interpreter->AllocateTensors());
}

KilnError* KilnInterpreterInvoke(KilnInterpreter* interpreter) {
  if (interpreter == nullptr) {
    return NullArgument("KilnInterpreterInvoke", "interpreter");
  }
  return kiln::ToKilnError(interpreter->interpreter->Invoke());
}

int32_t KilnInterpreterInputCount(const KilnInterpreter* interpreter) {
  return interpreter == nullptr ? 0 : interpreter->interpreter->num_inputs();
}

int32_t KilnInterpreterOutputCount(const KilnInterpreter* interpreter) {
  return interpreter == nullptr ? 0 : interpreter->interpreter->num_outputs();
}

KilnTensor* KilnInterpreterInput(KilnInterpreter* interpreter, int32_t index) {
  if (interpreter == nullptr) return nullptr;
  return Wrap(interpreter->interpreter->input(index));
}

const KilnTensor* KilnInterpreterOutput(const KilnInterpreter* interpreter,
                                        int32_t index) {
  if (interpreter == nullptr) return nullptr;
  const kiln::Interpreter& i = *interpreter->interpreter;
  if (index < 0 || index >= i.num_outputs()) return nullptr;
  return Wrap(interpreter->interpreter->raw_tensor(
      0, i.model().graph(0).outputs[static_cast<size_t>(index)]));
}

KilnError* KilnInterpreterResizeInput(KilnInterpreter* interpreter,
                                      int32_t index, const int32_t* dims,
                                      int32_t rank) {
  if (interpreter == nullptr) {
    return NullArgument("KilnInterpreterResizeInput", "interpreter");
  }
  if (rank < 0 || (rank > 0 && dims == nullptr)) {
    return kiln::MakeKilnError(
        KILN_STATUS_INVALID_ARGUMENT,
        "KilnInterpreterResizeInput: rank is negative or dims is NULL");
  }
  return kiln::ToKilnError(
      interpreter->interpreter->ResizeInput(index, Dims(dims, rank)));
}

uint64_t KilnInterpreterArenaBytes(const KilnInterpreter* interpreter) {
  return interpreter == nullptr ? 0 : interpreter->interpreter->arena_bytes();
}

// ---- Tensors ----

KilnTensorType KilnTensorGetType(const KilnTensor* tensor) {
  return tensor == nullptr ? KILN_TYPE_FLOAT32 : T(tensor)->ElementType();
}

int32_t KilnTensorNumDims(const KilnTensor* tensor) {
  if (tensor == nullptr || !T(tensor)->has_rank) return -1;
  return static_cast<int32_t>(T(tensor)->shape.size());
}

int32_t KilnTensorDim(const KilnTensor* tensor, int32_t axis) {
  if (tensor == nullptr || axis < 0 ||
      static_cast<size_t>(axis) >= T(tensor)->shape.size()) {
    return -1;
  }
  return T(tensor)->shape[static_cast<size_t>(axis)];
}

size_t KilnTensorByteSize(const KilnTensor* tensor) {
  return tensor == nullptr ? 0 : ByteSize(*T(tensor));
}

void* KilnTensorData(const KilnTensor* tensor) {
  if (tensor == nullptr) return nullptr;
  kiln::TensorState& t = *const_cast<kiln::TensorState*>(T(tensor));
  return kiln::SyncToHost(t).ok() ? t.data : nullptr;
}

const char* KilnTensorName(const KilnTensor* tensor) {
  return tensor == nullptr ? "" : T(tensor)->desc->name.c_str();
}

int32_t KilnTensorQuantization(const KilnTensor* tensor, float* scale,
                               int64_t* zero_point) {
  if (tensor == nullptr) return 0;
  const kiln::Quantization& q = T(tensor)->desc->quantization;
  if (q.scales.size() != 1) return 0;
  if (scale != nullptr) *scale = q.scales[0];
  if (zero_point != nullptr) {
    *zero_point = q.zero_points.empty() ? 0 : q.zero_points[0];
  }
  return 1;
}

KilnError* KilnTensorCopyFromBuffer(KilnTensor* tensor, const void* data,
                                    size_t size) {
  if (tensor == nullptr)
    return NullArgument("KilnTensorCopyFromBuffer", "tensor");
  kiln::TensorState& t = *T(tensor);
  if (size > 0 && data == nullptr) {
    return NullArgument("KilnTensorCopyFromBuffer", "data");
  }
  if (t.is_constant()) {
    return kiln::MakeKilnError(
        KILN_STATUS_FAILED_PRECONDITION,
        "KilnTensorCopyFromBuffer: tensor '" + t.desc->name +
            "' is a constant of the model and cannot be written");
  }
  if (t.ElementType() == KILN_TYPE_STRING) {
    // String tensors are variable length: the buffer is the whole encoded
    // string tensor (int32 count, int32 offsets[count + 1], bytes).
    t.AllocateOwned(size);
  } else if (t.data == nullptr) {
    return kiln::MakeKilnError(
        KILN_STATUS_FAILED_PRECONDITION,
        "KilnTensorCopyFromBuffer: tensor '" + t.desc->name +
            "' has no memory yet: call KilnInterpreterAllocateTensors first");
  }
  if (size != t.bytes) {
    return kiln::MakeKilnError(KILN_STATUS_INVALID_ARGUMENT,
                               "KilnTensorCopyFromBuffer: tensor '" +
                                   t.desc->name + "' holds " +
                                   std::to_string(t.bytes) + " bytes, but " +
                                   std::to_string(size) + " were given");
  }
  if (size > 0) std::memcpy(t.data, data, size);
  kiln::MarkHostWritten(t);
  return nullptr;
}

KilnError* KilnTensorCopyToBuffer(const KilnTensor* tensor, void* data,
                                  size_t size) {
  if (tensor == nullptr)
    return NullArgument("KilnTensorCopyToBuffer", "tensor");
  kiln::TensorState& t = *const_cast<kiln::TensorState*>(T(tensor));
  if (absl::Status synced = kiln::SyncToHost(t); !synced.ok()) {
    return kiln::ToKilnError(synced);
  }
  if (t.data == nullptr) {
    return kiln::MakeKilnError(
        KILN_STATUS_FAILED_PRECONDITION,
        "KilnTensorCopyToBuffer: tensor '" + t.desc->name +
            "' has no data yet: call KilnInterpreterAllocateTensors (and "
            "KilnInterpreterInvoke for outputs) first");
  }
  if (size != t.bytes) {
    return kiln::MakeKilnError(
        KILN_STATUS_INVALID_ARGUMENT,
        "KilnTensorCopyToBuffer: tensor '" + t.desc->name + "' holds " +
            std::to_string(t.bytes) + " bytes, but the buffer has " +
            std::to_string(size));
  }
  if (size > 0 && data == nullptr) {
    return NullArgument("KilnTensorCopyToBuffer", "data");
  }
  if (size > 0) std::memcpy(data, t.data, size);
  return nullptr;
}

// ---- Signatures ----

int32_t KilnInterpreterSignatureCount(const KilnInterpreter* interpreter) {
  return interpreter == nullptr ? 0
                                : interpreter->interpreter->num_signatures();
}

const char* KilnInterpreterSignatureKey(const KilnInterpreter* interpreter,
                                        int32_t index) {
  if (interpreter == nullptr || index < 0 ||
      index >= interpreter->interpreter->num_signatures()) {
    return nullptr;
  }
  return interpreter->interpreter->signature_key(index).c_str();
}

KilnError* KilnInterpreterGetSignatureRunner(KilnInterpreter* interpreter,
                                             const char* signature_key,
                                             KilnSignatureRunner** runner) {
  if (runner == nullptr) {
    return NullArgument("KilnInterpreterGetSignatureRunner", "runner");
  }
  *runner = nullptr;
  if (interpreter == nullptr) {
    return NullArgument("KilnInterpreterGetSignatureRunner", "interpreter");
  }
  if (signature_key == nullptr) {
    return NullArgument("KilnInterpreterGetSignatureRunner", "signature_key");
  }
  absl::StatusOr<kiln::SignatureRunner*> r =
      interpreter->interpreter->GetSignatureRunner(signature_key);
  if (!r.ok()) return kiln::ToKilnError(r.status());
  *runner = reinterpret_cast<KilnSignatureRunner*>(*r);
  return nullptr;
}

int32_t KilnSignatureRunnerInputCount(const KilnSignatureRunner* runner) {
  return runner == nullptr ? 0 : R(runner)->num_inputs();
}

const char* KilnSignatureRunnerInputName(const KilnSignatureRunner* runner,
                                         int32_t index) {
  if (runner == nullptr || index < 0 || index >= R(runner)->num_inputs()) {
    return nullptr;
  }
  return R(runner)->input_name(index).c_str();
}

int32_t KilnSignatureRunnerOutputCount(const KilnSignatureRunner* runner) {
  return runner == nullptr ? 0 : R(runner)->num_outputs();
}

const char* KilnSignatureRunnerOutputName(const KilnSignatureRunner* runner,
                                          int32_t index) {
  if (runner == nullptr || index < 0 || index >= R(runner)->num_outputs()) {
    return nullptr;
  }
  return R(runner)->output_name(index).c_str();
}

KilnTensor* KilnSignatureRunnerInput(KilnSignatureRunner* runner,
                                     const char* name) {
  if (runner == nullptr || name == nullptr) return nullptr;
  return Wrap(R(runner)->input(name));
}

const KilnTensor* KilnSignatureRunnerOutput(const KilnSignatureRunner* runner,
                                            const char* name) {
  if (runner == nullptr || name == nullptr) return nullptr;
  return Wrap(R(runner)->raw_output(name));
}

KilnError* KilnSignatureRunnerResizeInput(KilnSignatureRunner* runner,
                                          const char* name, const int32_t* dims,
                                          int32_t rank) {
  if (runner == nullptr) {
    return NullArgument("KilnSignatureRunnerResizeInput", "runner");
  }
  if (name == nullptr)
    return NullArgument("KilnSignatureRunnerResizeInput", "name");
  if (rank < 0 || (rank > 0 && dims == nullptr)) {
    return kiln::MakeKilnError(
        KILN_STATUS_INVALID_ARGUMENT,
        "KilnSignatureRunnerResizeInput: rank is negative or dims is NULL");
  }
  return kiln::ToKilnError(R(runner)->ResizeInput(name, Dims(dims, rank)));
}

KilnError* KilnSignatureRunnerAllocateTensors(KilnSignatureRunner* runner) {
  if (runner == nullptr) {
    return NullArgument("KilnSignatureRunnerAllocateTensors", "runner");
  }
  return kiln::ToKilnError(R(runner)->AllocateTensors());
}

KilnError* KilnSignatureRunnerInvoke(KilnSignatureRunner* runner) {
  if (runner == nullptr)
    return NullArgument("KilnSignatureRunnerInvoke", "runner");
  return kiln::ToKilnError(R(runner)->Invoke());
}

}  // extern "C"
