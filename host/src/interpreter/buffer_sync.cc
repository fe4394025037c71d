// Buffer handles in the interpreter: when tensors bound to a delegate's
// buffer handle are copied between the handle and host memory (interpreter.h,
// "Buffer handles"); runtime/buffer_handles.h does the copies.
#include <cstdio>
#include <functional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "interpreter/interpreter.h"
#include "interpreter/subgraph_state.h"
#include "runtime/buffer_handles.h"

namespace kiln {
namespace {

// Calls `fn` on every bound tensor of `tensors` (omitted ones skipped).
template <typename Fn>
void ForBound(SubgraphState& s, const std::vector<int32_t>& tensors, Fn&& fn) {
  for (int32_t i : tensors) {
    if (i < 0) continue;
    TensorState& t = s.tensor(i);
    if (t.buffer.bound()) fn(t);
  }
}

bool Contains(const std::vector<int32_t>& list, int32_t value) {
  for (int32_t v : list) {
    if (v == value) return true;
  }
  return false;
}

}  // namespace

absl::Status Interpreter::SyncInputsToHost(SubgraphState& s,
                                           const NodeDesc& node) {
  absl::Status status;
  ForBound(s, node.inputs, [&](TensorState& t) {
    if (status.ok()) status = SyncToHost(t);
  });
  return status;
}

void Interpreter::MarkOutputsHostWritten(SubgraphState& s,
                                         const NodeDesc& node) {
  ForBound(s, node.outputs, MarkHostWritten);
}

absl::Status Interpreter::SyncForPartition(SubgraphState& s,
                                           const NodeRecord& node,
                                           const DelegateRef& delegate) {
  // A deferred partition's kernels prepare with the input values first.
  const bool host_reads = node.deferred;
  absl::Status status;
  ForBound(s, node.node().inputs, [&](TensorState& t) {
    if (!status.ok()) return;
    if (t.buffer.owner != &delegate || host_reads) {
      status = SyncToHost(t);
    }
    if (status.ok() && t.buffer.owner == &delegate) {
      status = SyncToDevice(t);
    }
  });
  // Written on the host unless the delegate says otherwise during the call.
  ForBound(s, node.node().outputs, [&](TensorState& t) {
    if (t.buffer.owner == &delegate) MarkHostWritten(t);
  });
  return status;
}

void Interpreter::MarkPartitionOutputs(SubgraphState& s, const NodeRecord& node,
                                       const DelegateRef& delegate) {
  ForBound(s, node.node().outputs, [&](TensorState& t) {
    if (t.buffer.owner != &delegate) MarkHostWritten(t);
  });
}

void Interpreter::BeginSubgraphBuffers(SubgraphState& s, bool nested) {
  // Control flow copied the inputs of a nested subgraph on the host.
  if (nested) ForBound(s, s.model().inputs, MarkHostWritten);
}

absl::Status Interpreter::EndSubgraphBuffers(SubgraphState& s, bool nested) {
  absl::Status status;
  ForBound(s, s.model().outputs, [&](TensorState& t) {
    if (!status.ok()) return;
    if (nested) {
      status = SyncToHost(t);  // control flow reads them next
    } else if (t.buffer.by_application) {
      status = SyncToDevice(t);
    }
  });
  return status;
}

void Interpreter::ReleasePartitionBuffers(SubgraphState& s) {
  for (TensorRecord& t : s.tensors()) {
    if (t.buffer.bound() && !t.buffer.by_application) ReleaseBufferHandle(t);
  }
}

void Interpreter::KeepApplicationBuffers(SubgraphState& s) {
  for (TensorRecord& t : s.tensors()) {
    if (!t.buffer.bound()) continue;
    if (t.buffer.bytes == t.bytes) {
      // The host memory is new; the application's buffer keeps the value.
      t.buffer.host_stale = true;
      t.buffer.device_stale = false;
      continue;
    }
    const std::string text = absl::StrCat(
        "the buffer handle the application bound to tensor '", t.desc->name,
        "' of subgraph ", s.index(), " (", t.buffer.owner->Label(),
        ") was released: the tensor now holds ", t.bytes, " bytes instead of ",
        t.buffer.bytes, "; bind a buffer of the new size");
    ReleaseBufferHandle(t);
    warnings_.push_back(text);
    std::fprintf(stderr, "kiln: warning: %s\n", text.c_str());
  }
}

void Interpreter::ReleaseAllBuffers() {
  for (auto& s : subgraphs_) {
    for (TensorRecord& t : s->tensors()) ReleaseBufferHandle(t);
  }
}

void Interpreter::SyncForAccessor(TensorState& t) const {
  const absl::Status synced = SyncToHost(t);
  if (synced.ok()) return;
  const std::string text = absl::StrCat(
      "tensor '", t.desc->name, "' keeps stale host data: ", synced.message());
  warnings_.push_back(text);
  std::fprintf(stderr, "kiln: warning: %s\n", text.c_str());
}

std::pair<int32_t, int32_t> Interpreter::Locate(
    const TensorState* tensor) const {
  for (const auto& s : subgraphs_) {
    for (int32_t i = 0; i < s->NumTensors(); ++i) {
      if (&s->tensor(i) == tensor) return {s->index(), i};
    }
  }
  return {-1, -1};
}

absl::Status Interpreter::SyncTensorToHost(TensorState* tensor) {
  if (tensor == nullptr || Locate(tensor).first < 0) {
    return absl::InvalidArgumentError(
        "SyncTensorToHost: the tensor is not one of this interpreter's");
  }
  return SyncToHost(*tensor);
}

absl::Status Interpreter::SetTensorBufferHandle(TensorState* tensor,
                                                const std::string& delegate,
                                                KilnBufferHandle handle) {
  const auto [subgraph, index] = Locate(tensor);
  if (tensor == nullptr || subgraph < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot bind a buffer handle of delegate '", delegate,
                     "': the tensor is not one of this interpreter's"));
  }
  SubgraphState& s = *subgraphs_[static_cast<size_t>(subgraph)];
  const bool is_input = Contains(s.model().inputs, index);
  if (!is_input && !Contains(s.model().outputs, index)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot bind a buffer handle to tensor ", index, " '",
        tensor->desc->name, "' of subgraph ", subgraph,
        ": only inputs and outputs of a subgraph take application buffers"));
  }
  std::vector<std::string> active;
  for (const auto& d : delegates_) {
    if (d->name != delegate) {
      active.push_back("'" + d->name + "'");
      continue;
    }
    if (!d->buffer_handles) {
      return absl::FailedPreconditionError(absl::StrCat(
          d->Label(),
          " does not implement buffer handles (copy_from_buffer_handle, "
          "copy_to_buffer_handle, free_buffer_handle; extension API 1.2)"));
    }
    // The host keeps the value of a handle released here.
    KILN_RETURN_IF_ERROR(SyncToHost(*tensor));
    // An input's value is in the application's buffer; an output's is
    // written there by the next Invoke.
    BindBufferHandle(*tensor, d.get(), &s, handle, /*host_stale=*/is_input,
                     /*by_application=*/true);
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "cannot bind a buffer handle of delegate '", delegate,
      "': no such delegate is active in this interpreter (active: ",
      active.empty() ? "none" : absl::StrJoin(active, ", "),
      "); request it when creating the interpreter, and check it was not "
      "skipped as unavailable"));
}

absl::StatusOr<std::pair<void*, const KilnExtensionBase*>>
Interpreter::DelegateExtension(const std::string& delegate,
                               const std::string& id) const {
  for (const auto& d : delegates_) {
    if (d->name != delegate) continue;
    std::vector<std::string> offered;
    for (const KilnExtensionBase* e = d->plugin->descriptor()->extensions;
         e != nullptr; e = e->next) {
      if (e->id != nullptr && id == e->id) {
        return std::make_pair(d->instance, e);
      }
      offered.push_back(e->id != nullptr ? e->id : "(null id)");
    }
    return absl::NotFoundError(absl::StrCat(
        d->Label(), " offers no capability '", id, "'; it offers: ",
        offered.empty() ? "none" : absl::StrJoin(offered, ", ")));
  }
  return absl::NotFoundError(absl::StrCat("no delegate named '", delegate,
                                          "' is active in this interpreter"));
}

}  // namespace kiln
