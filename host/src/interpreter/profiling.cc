// Profiling: the events the interpreter records itself (Invoke,
// AllocateTensors, host-intrinsic nodes) and the profile's accessors. The
// events around plugin callbacks come from CallPlugin
// (runtime/plugin_call.h). See interpreter.h.
#include <memory>
#include <utility>

#include "interpreter/interpreter.h"
#include "interpreter/subgraph_state.h"

namespace kiln {

void Interpreter::SetProfiling(bool enabled) {
  if (enabled && profile_ == nullptr) profile_ = std::make_unique<Profiler>();
  profiler_ = enabled ? profile_.get() : nullptr;
}

std::vector<ProfileEvent> Interpreter::ProfileEvents() const {
  return profile_ != nullptr ? profile_->Events() : std::vector<ProfileEvent>();
}

void Interpreter::ClearProfile() {
  if (profile_ != nullptr) profile_->Clear();
  profile_runs_ = 0;
}

absl::Status Interpreter::WriteProfileTrace(const std::string& path) const {
  return WriteChromeTrace(ProfileEvents(), "kiln: " + model_->source(), path);
}

uint64_t Interpreter::BeginHostEvent(const SubgraphState& s, const char* name,
                                     const char* category,
                                     const NodeRecord* node) {
  ProfileEvent e;
  e.name = name;
  e.category = category;
  e.subgraph = s.index();
  if (node != nullptr) {
    e.node = node->node().index;
    e.op = node->node().OpName();
    e.op_version = node->node().version;
  }
  return profiler_->Begin(std::move(e));
}

uint64_t Interpreter::BeginInvokeEvent(const SubgraphState& s, bool top_level) {
  if (top_level) profiler_->set_run(profile_runs_++);
  return BeginHostEvent(s, "Invoke", "run", nullptr);
}

void Interpreter::EndInvokeEvent(uint64_t token, bool top_level) {
  profiler_->End(token);
  if (top_level) profiler_->set_run(-1);
}

absl::Status Interpreter::InvokeIntrinsicProfiled(SubgraphState& s,
                                                  NodeRecord& node) {
  const std::string name = node.node().OpName();
  const uint64_t token = BeginHostEvent(s, name.c_str(), "invoke", &node);
  absl::Status status = InvokeIntrinsic(s, node);
  profiler_->End(token);
  return status;
}

}  // namespace kiln
