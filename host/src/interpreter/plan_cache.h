// The plan cache: prepared plans of one subgraph kept per input signature,
// so that returning to input shapes already prepared costs no kernel or
// delegate prepare and no memory planning (TensorFlow's tf.function keeps
// one traced graph per input signature in the same way).
//
// A plan is what AllocateTensors computed for one signature (the shapes and
// element types of the subgraph's inputs): the shape of every tensor, which
// nodes are deferred to invoke, the prepare-time values (prepare_values.cc)
// and which nodes they replace, the arena layout, and the node and
// partition states of the plugins that allow one state per signature
// (KILN_KERNEL_FLAG_STATE_PER_SHAPE_SIGNATURE,
// KILN_DELEGATE_FLAG_STATE_PER_SHAPE_SIGNATURE; honoured for plugins that
// negotiated extension API 1.2 or later). On a hit those states are switched
// to without calling prepare; every other kernel and partition (1.0/1.1
// plugins, 1.2 plugins without the flag) keeps its single state and is
// prepared again, exactly as without the cache. On a miss every
// per-signature node and partition gets a new state (init + prepare), so a
// cached state is only ever invoked with the shapes it was prepared for.
//
// The cache is bounded: at most max_plans plans per subgraph, least
// recently used evicted first (its plugin states freed). max_plans = 0
// turns it off: one state per node, prepared on every AllocateTensors.
//
// Internal to the interpreter (plan_cache_allocation.cc drives it).
// Thread-safety: as the Interpreter (one thread at a time).
#ifndef KILN_HOST_INTERPRETER_PLAN_CACHE_H_
#define KILN_HOST_INTERPRETER_PLAN_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <optional>
#include <string>
#include <vector>

#include "interpreter/arena_planner.h"
#include "kiln/kiln_extension.h"
#include "plugin/plugin_loader.h"

namespace kiln {

struct PlanCacheOptions {
  // Plans kept per subgraph; 0 disables the cache.
  int32_t max_plans = 4;
  // Retracing warning: printed once per subgraph when, of the last
  // `retrace_window` AllocateTensors calls the application made on it, at
  // least `retrace_threshold` prepared a signature other than the previous
  // call's (a cache miss). 0 disables the warning.
  int32_t retrace_threshold = 5;
  int32_t retrace_window = 10;
};

// Counters of one interpreter's plan caches, summed over its subgraphs.
struct PlanCacheStats {
  int32_t max_plans = 0;       // per subgraph, as configured
  uint64_t hits = 0;           // AllocateTensors restored a cached plan
  uint64_t misses = 0;         // AllocateTensors prepared (always, when off)
  uint64_t evictions = 0;      // plans dropped to stay within max_plans
  uint64_t plans = 0;          // plans held now
  uint64_t bytes = 0;          // host memory of the held plans (see Bytes())
  uint64_t plugin_states = 0;  // node and partition states they hold
};

// The shapes and element types of a subgraph's inputs, in input order.
struct InputSignature {
  std::vector<KilnTensorType> types;
  std::vector<std::vector<int32_t>> shapes;

  bool operator==(const InputSignature& other) const {
    return types == other.types && shapes == other.shapes;
  }
  bool operator!=(const InputSignature& other) const {
    return !(*this == other);
  }
};

// A tensor as prepared.
struct TensorPlan {
  bool has_rank = false;
  bool dynamic = false;
  std::vector<int32_t> shape;
  std::optional<KilnTensorType> type_override;  // set by its writer's prepare
  // A prepare-time value (its writer was evaluated at AllocateTensors) and
  // its bytes: it belongs to this plan's signature.
  bool prepared_value = false;
  std::vector<uint8_t> value;
};

// A node or partition as prepared. holds_state: `state` is the plugin state
// made for this plan (the plan owns it); otherwise the node keeps one state
// for every signature, or none.
struct NodePlan {
  bool deferred = false;
  bool evaluated_at_prepare = false;
  bool holds_state = false;
  void* state = nullptr;
};

struct PreparedPlan {
  uint64_t id = 0;  // unique in its cache, never 0
  InputSignature signature;
  std::vector<TensorPlan> tensors;   // one per tensor of the subgraph
  std::vector<NodePlan> nodes;       // one per node record
  std::vector<NodePlan> partitions;  // one per partition
  MemoryPlan memory;

  // Bytes the host holds for this plan: the structures above and their
  // shapes. Plugin states are opaque; their memory is not included.
  uint64_t Bytes() const;
  // Node and partition states the plan owns.
  uint64_t NumStates() const;
};

// Whether the host may keep one state per input signature for `kernel` of
// `plugin` / for the delegate `iface` of `plugin`: the flag is set, the
// struct is large enough to hold it, and the plugin negotiated 1.2 or later.
bool KernelStatePerSignature(const KilnKernel& kernel,
                             const LoadedPlugin& plugin);
bool DelegateStatePerSignature(const KilnDelegateInterface& iface,
                               const LoadedPlugin& plugin);

// Detects retracing: many different signatures prepared within a few
// application calls.
class RetraceDetector {
 public:
  // Records one AllocateTensors the application made (`prepared`: it missed
  // the cache). True exactly once: when the threshold is first reached.
  bool Record(const InputSignature& signature, bool prepared,
              const PlanCacheOptions& options);
  // The counted calls in the window, and their distinct signatures.
  int32_t counted() const;
  int32_t window_size() const { return static_cast<int32_t>(window_.size()); }
  std::vector<InputSignature> DistinctSignatures() const;

 private:
  struct Call {
    bool counted = false;
    InputSignature signature;
  };
  std::deque<Call> window_;
  InputSignature previous_;
  bool has_previous_ = false;
  bool warned_ = false;
};

// The plans of one subgraph, most recently used first. Plans never move
// while cached (a pointer from Find stays valid until the plan is removed
// or evicted).
class PlanCache {
 public:
  void Configure(const PlanCacheOptions& options) { options_ = options; }
  const PlanCacheOptions& options() const { return options_; }
  bool enabled() const { return options_.max_plans > 0; }

  // The plan for `signature`, now the most recently used; nullptr if none.
  PreparedPlan* Find(const InputSignature& signature);
  // A new plan id (never 0), for the plan about to be inserted.
  uint64_t NewPlanId() { return ++last_plan_id_; }
  // Adds `plan` as the most recently used. Returns the plans evicted to
  // stay within max_plans: their states are the caller's to free.
  std::vector<PreparedPlan> Insert(PreparedPlan plan);
  // Takes `plan` (which must be cached) out of the cache, states and all.
  PreparedPlan Remove(const PreparedPlan* plan);
  // Every plan, for the caller to free their states (the cache is empty).
  std::vector<PreparedPlan> TakeAll();

  void CountAllocation(bool hit) { ++(hit ? hits_ : misses_); }
  // Adds this cache's counters and holdings to `stats`.
  void AddTo(PlanCacheStats* stats) const;
  RetraceDetector& retrace_detector() { return retrace_; }
  const RetraceDetector& retrace_detector() const { return retrace_; }

 private:
  PlanCacheOptions options_;
  std::list<PreparedPlan> plans_;
  uint64_t hits_ = 0, misses_ = 0, evictions_ = 0;
  uint64_t last_plan_id_ = 0;
  RetraceDetector retrace_;
};

// "[1,90,1024], [1,1]"
std::string SignatureString(const InputSignature& signature);

}  // namespace kiln

#endif  // KILN_HOST_INTERPRETER_PLAN_CACHE_H_
