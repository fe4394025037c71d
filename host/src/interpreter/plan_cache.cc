#include "interpreter/plan_cache.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kiln/kiln_version.h"

namespace kiln {
namespace {

constexpr uint32_t kFirstVersionWithStateFlags = KILN_MAKE_VERSION(1, 2, 0);

template <typename T>
uint64_t VectorBytes(const std::vector<T>& v) {
  return static_cast<uint64_t>(v.capacity() * sizeof(T));
}

}  // namespace

uint64_t PreparedPlan::Bytes() const {
  uint64_t bytes = sizeof(PreparedPlan) + VectorBytes(signature.types) +
                   VectorBytes(signature.shapes) + VectorBytes(tensors) +
                   VectorBytes(nodes) + VectorBytes(partitions) +
                   VectorBytes(memory.placements);
  for (const std::vector<int32_t>& shape : signature.shapes) {
    bytes += VectorBytes(shape);
  }
  for (const TensorPlan& t : tensors) {
    bytes += VectorBytes(t.shape) + VectorBytes(t.value);
  }
  return bytes;
}

uint64_t PreparedPlan::NumStates() const {
  uint64_t n = 0;
  for (const auto* list : {&nodes, &partitions}) {
    for (const NodePlan& p : *list) n += p.holds_state ? 1 : 0;
  }
  return n;
}

bool KernelStatePerSignature(const KilnKernel& kernel,
                             const LoadedPlugin& plugin) {
  return plugin.negotiated_version() >= kFirstVersionWithStateFlags &&
         KILN_STRUCT_HAS_FIELD(KilnKernel, kernel.struct_size, flags) &&
         (kernel.flags & KILN_KERNEL_FLAG_STATE_PER_SHAPE_SIGNATURE) != 0;
}

bool DelegateStatePerSignature(const KilnDelegateInterface& iface,
                               const LoadedPlugin& plugin) {
  return plugin.negotiated_version() >= kFirstVersionWithStateFlags &&
         KILN_STRUCT_HAS_FIELD(KilnDelegateInterface, iface.struct_size,
                               flags) &&
         (iface.flags & KILN_DELEGATE_FLAG_STATE_PER_SHAPE_SIGNATURE) != 0;
}

// ---------------------------------------------------------------------------
// RetraceDetector

bool RetraceDetector::Record(const InputSignature& signature, bool prepared,
                             const PlanCacheOptions& options) {
  if (options.retrace_threshold <= 0 || options.retrace_window <= 0) {
    return false;
  }
  Call call;
  call.counted = prepared && (!has_previous_ || signature != previous_);
  call.signature = signature;
  previous_ = signature;
  has_previous_ = true;
  window_.push_back(std::move(call));
  while (window_.size() > static_cast<size_t>(options.retrace_window)) {
    window_.pop_front();
  }
  if (warned_ || counted() < options.retrace_threshold) return false;
  warned_ = true;
  return true;
}

int32_t RetraceDetector::counted() const {
  return static_cast<int32_t>(std::count_if(
      window_.begin(), window_.end(), [](const Call& c) { return c.counted; }));
}

std::vector<InputSignature> RetraceDetector::DistinctSignatures() const {
  std::vector<InputSignature> distinct;
  for (const Call& c : window_) {
    if (!c.counted) continue;
    if (std::find(distinct.begin(), distinct.end(), c.signature) ==
        distinct.end()) {
      distinct.push_back(c.signature);
    }
  }
  return distinct;
}

// ---------------------------------------------------------------------------
// PlanCache

PreparedPlan* PlanCache::Find(const InputSignature& signature) {
  for (auto it = plans_.begin(); it != plans_.end(); ++it) {
    if (it->signature != signature) continue;
    plans_.splice(plans_.begin(), plans_, it);
    return &plans_.front();
  }
  return nullptr;
}

std::vector<PreparedPlan> PlanCache::Insert(PreparedPlan plan) {
  plans_.push_front(std::move(plan));
  std::vector<PreparedPlan> evicted;
  while (plans_.size() > static_cast<size_t>(std::max(options_.max_plans, 1))) {
    evicted.push_back(std::move(plans_.back()));
    plans_.pop_back();
    ++evictions_;
  }
  return evicted;
}

PreparedPlan PlanCache::Remove(const PreparedPlan* plan) {
  for (auto it = plans_.begin(); it != plans_.end(); ++it) {
    if (&*it != plan) continue;
    PreparedPlan taken = std::move(*it);
    plans_.erase(it);
    return taken;
  }
  return PreparedPlan();
}

std::vector<PreparedPlan> PlanCache::TakeAll() {
  std::vector<PreparedPlan> all(std::make_move_iterator(plans_.begin()),
                                std::make_move_iterator(plans_.end()));
  plans_.clear();
  return all;
}

void PlanCache::AddTo(PlanCacheStats* stats) const {
  stats->max_plans = options_.max_plans;
  stats->hits += hits_;
  stats->misses += misses_;
  stats->evictions += evictions_;
  stats->plans += plans_.size();
  for (const PreparedPlan& plan : plans_) {
    stats->bytes += plan.Bytes();
    stats->plugin_states += plan.NumStates();
  }
}

std::string SignatureString(const InputSignature& signature) {
  std::vector<std::string> parts;
  for (const std::vector<int32_t>& shape : signature.shapes) {
    parts.push_back(absl::StrCat("[", absl::StrJoin(shape, ","), "]"));
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace kiln
