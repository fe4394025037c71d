// Fuzz target: a model file from an untrusted source, through the
// application C API as an embedding application uses it: load
// (KilnModelCreateFromBuffer: FlatBuffers verifier and Kiln's model checks),
// create an interpreter with Kiln's CPU plugin, AllocateTensors, fill the
// inputs with bytes of the input itself, Invoke, read the outputs. Every
// step may refuse the model; none may crash, hang or corrupt memory.
//
// Inputs are bounded so that each runs in well under libFuzzer's timeout
// under ASan: a model whose declared activations (every non-constant
// tensor of every subgraph at its declared shape) exceed
// kMaxDeclaredActivationBytes is created but not allocated or run. (The
// interpreter's own limits are set too, larger: 256 MiB of arena, 10000
// WHILE iterations, 5 s per Invoke; models within them but slow under ASan
// are not bugs.)
//
// KILN_FUZZ_CPU_PLUGIN: path of the CPU plugin of the same build.
#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "c_api/c_api_internal.h"
#include "kiln/kiln_c_api.h"
#include "model/model.h"
#include "runtime/graph.h"

namespace {

constexpr uint64_t kMaxDeclaredActivationBytes = uint64_t{1} << 20;

// Bytes of the model's non-constant tensors at their declared shapes
// (saturating at UINT64_MAX).
uint64_t DeclaredActivationBytes(const kiln::Model& model) {
  uint64_t total = 0;
  for (int sg = 0; sg < model.num_subgraphs(); ++sg) {
    for (const kiln::Tensor& t : model.graph(sg).tensors) {
      if (t.storage == kiln::TensorStorage::kConstant) continue;
      uint64_t bytes = kiln::ElementSize(t.type);
      if (bytes == 0) bytes = 1;
      for (int32_t d : t.shape) {
        if (d > 0 &&
            __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes)) {
          return UINT64_MAX;
        }
      }
      if (__builtin_add_overflow(total, bytes, &total)) return UINT64_MAX;
    }
  }
  return total;
}

// Destroys a KilnError, reading its message first (the message is part of
// what must not crash).
bool Failed(KilnError* error) {
  if (error == nullptr) return false;
  volatile size_t length = std::strlen(KilnErrorMessage(error));
  (void)length;
  KilnErrorDestroy(error);
  return true;
}

const KilnInterpreterOptions* Options() {
  static KilnInterpreterOptions* options = [] {
    // libFuzzer keeps reading the coverage counters of every instrumented
    // library it saw loaded: the CPU plugin must never be unloaded when an
    // interpreter releases it (RTLD_NODELETE pins it for the process).
    dlopen(KILN_FUZZ_CPU_PLUGIN, RTLD_NOW | RTLD_NODELETE);
    KilnInterpreterOptions* o = KilnInterpreterOptionsCreate();
    KilnInterpreterOptionsSetUseDefaultPlugins(o, 0);
    KilnInterpreterOptionsAddPluginPath(o, KILN_FUZZ_CPU_PLUGIN);
    // The interpreter's own limits for untrusted models (docs/security.md),
    // well inside libFuzzer's -malloc_limit_mb and -timeout.
    Failed(KilnInterpreterOptionsSetMaxArenaBytes(o, uint64_t{256} << 20));
    Failed(KilnInterpreterOptionsSetMaxWhileIterations(o, 10000));
    Failed(KilnInterpreterOptionsSetInvokeTimeout(o, 5000));
    return o;
  }();
  return options;
}

// Fills every input of the main subgraph with the bytes of `data`.
void FillInputs(KilnInterpreter* interpreter, const uint8_t* data,
                size_t size) {
  const int32_t inputs = KilnInterpreterInputCount(interpreter);
  for (int32_t i = 0; i < inputs; ++i) {
    KilnTensor* t = KilnInterpreterInput(interpreter, i);
    if (t == nullptr) continue;
    auto* bytes = static_cast<uint8_t*>(KilnTensorData(t));
    const size_t n = KilnTensorByteSize(t);
    if (bytes == nullptr || size == 0) continue;
    for (size_t b = 0; b < n; ++b) bytes[b] = data[(b * 7 + i) % size];
  }
}

// Reads every output byte (ASan checks the buffers are what they claim).
void ReadOutputs(KilnInterpreter* interpreter) {
  const int32_t outputs = KilnInterpreterOutputCount(interpreter);
  uint8_t sum = 0;
  for (int32_t i = 0; i < outputs; ++i) {
    const KilnTensor* t = KilnInterpreterOutput(interpreter, i);
    if (t == nullptr) continue;
    const auto* bytes = static_cast<const uint8_t*>(KilnTensorData(t));
    if (bytes == nullptr) continue;
    for (size_t b = 0, n = KilnTensorByteSize(t); b < n; ++b) sum ^= bytes[b];
  }
  volatile uint8_t sink = sum;
  (void)sink;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  KilnModel* model = nullptr;
  if (Failed(KilnModelCreateFromBuffer(data, size, &model))) return 0;
  KilnInterpreter* interpreter = nullptr;
  if (!Failed(KilnInterpreterCreate(model, Options(), &interpreter))) {
    if (DeclaredActivationBytes(*model->model) <= kMaxDeclaredActivationBytes &&
        !Failed(KilnInterpreterAllocateTensors(interpreter))) {
      FillInputs(interpreter, data, size);
      if (!Failed(KilnInterpreterInvoke(interpreter))) {
        ReadOutputs(interpreter);
      }
    }
    KilnInterpreterDestroy(interpreter);
  }
  KilnModelDestroy(model);
  return 0;
}
