// Fuzz target: a model file from an untrusted source, through the
// application C API as an embedding application uses it: load
// (KilnModelCreateFromBuffer: FlatBuffers verifier and Kiln's model checks),
// create an interpreter with Kiln's CPU plugin, AllocateTensors, fill the
// inputs with bytes of the input itself, Invoke, read the outputs. Every
// step may refuse the model; none may crash, hang or corrupt memory.
//
// KILN_FUZZ_CPU_PLUGIN: path of the CPU plugin of the same build.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kiln/kiln_c_api.h"

namespace {

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
    KilnInterpreterOptions* o = KilnInterpreterOptionsCreate();
    KilnInterpreterOptionsSetUseDefaultPlugins(o, 0);
    KilnInterpreterOptionsAddPluginPath(o, KILN_FUZZ_CPU_PLUGIN);
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
    if (!Failed(KilnInterpreterAllocateTensors(interpreter))) {
      FillInputs(interpreter, data, size);
      if (!Failed(KilnInterpreterInvoke(interpreter))) {
        ReadOutputs(interpreter);
        // A second run over the same plan.
        if (!Failed(KilnInterpreterInvoke(interpreter))) {
          ReadOutputs(interpreter);
        }
      }
    }
    KilnInterpreterDestroy(interpreter);
  }
  KilnModelDestroy(model);
  return 0;
}
