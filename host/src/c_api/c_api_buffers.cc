// Application C API 1.2: delegate capabilities and delegate buffer handles
// bound to tensors (interpreter.h, "Buffer handles").
#include <string>
#include <utility>

#include "c_api/c_api_internal.h"
#include "interpreter/interpreter.h"
#include "runtime/buffer_handles.h"

namespace {

KilnError* NullArgument(const char* function, const char* argument) {
  return kiln::MakeKilnError(
      KILN_STATUS_INVALID_ARGUMENT,
      std::string(function) + ": " + argument + " is NULL");
}

}  // namespace

extern "C" {

KilnError* KilnInterpreterGetDelegateExtension(
    const KilnInterpreter* interpreter, const char* delegate_name,
    const char* extension_id, void** delegate, const void** extension) {
  constexpr const char* kFunction = "KilnInterpreterGetDelegateExtension";
  if (delegate == nullptr) return NullArgument(kFunction, "delegate");
  if (extension == nullptr) return NullArgument(kFunction, "extension");
  *delegate = nullptr;
  *extension = nullptr;
  if (interpreter == nullptr) return NullArgument(kFunction, "interpreter");
  if (delegate_name == nullptr) return NullArgument(kFunction, "delegate_name");
  if (extension_id == nullptr) return NullArgument(kFunction, "extension_id");
  absl::StatusOr<std::pair<void*, const KilnExtensionBase*>> found =
      interpreter->interpreter->DelegateExtension(delegate_name, extension_id);
  if (!found.ok()) return kiln::ToKilnError(found.status());
  *delegate = found->first;
  *extension = found->second;
  return nullptr;
}

KilnError* KilnInterpreterSetTensorBufferHandle(KilnInterpreter* interpreter,
                                                KilnTensor* tensor,
                                                const char* delegate_name,
                                                int64_t buffer_handle) {
  constexpr const char* kFunction = "KilnInterpreterSetTensorBufferHandle";
  if (interpreter == nullptr) return NullArgument(kFunction, "interpreter");
  if (tensor == nullptr) return NullArgument(kFunction, "tensor");
  if (delegate_name == nullptr) return NullArgument(kFunction, "delegate_name");
  return kiln::ToKilnError(interpreter->interpreter->SetTensorBufferHandle(
      reinterpret_cast<kiln::TensorState*>(tensor), delegate_name,
      static_cast<KilnBufferHandle>(buffer_handle)));
}

KilnError* KilnTensorSyncToHost(const KilnTensor* tensor) {
  if (tensor == nullptr) return NullArgument("KilnTensorSyncToHost", "tensor");
  // The sync changes where the value lives, not the value.
  auto* t =
      reinterpret_cast<kiln::TensorState*>(const_cast<KilnTensor*>(tensor));
  return kiln::ToKilnError(kiln::SyncToHost(*t));
}

}  // extern "C"
