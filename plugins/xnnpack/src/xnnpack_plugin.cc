// Kiln's XNNPACK delegate plugin (delegate name "xnnpack"): runs each
// claimed partition as one XNNPACK subgraph (libXNNPACK's subgraph API),
// with weights packed once per prepare and threads from a pthreadpool of
// DelegateSettings.options["num_threads"] threads (default 1). Float32 nodes
// are claimed only with options["float32"] = "true": on the machines
// measured (docs/benchmarks.md) Debian's libXNNPACK runs float32 slower
// than Kiln's CPU kernels and 8-bit quantized nodes much faster.
//
// What it claims is SupportedOps (ops.cc), checked node by node by
// Supports; `kiln inspect --delegate xnnpack` shows why a node is declined.
// Exports only KilnPluginEntry.
#include <sched.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kiln/sdk/delegate.h"
#include "kiln/sdk/plugin.h"
#include "ops.h"
#include "xnn_api.h"

namespace kiln::xnnpack {
namespace {

using sdk::GraphNode;
using sdk::NodeSupport;
using sdk::PartitionContext;
using sdk::Tensor;

struct SubgraphDeleter {
  void operator()(xnn_subgraph_t s) const { xnn_delete_subgraph(s); }
};
struct RuntimeDeleter {
  void operator()(xnn_runtime_t r) const { xnn_delete_runtime(r); }
};
struct PoolDeleter {
  void operator()(pthreadpool_t p) const { pthreadpool_destroy(p); }
};

// Whether the machine is not oversubscribed: the one-minute load average is
// at most the CPUs this process may run on plus half a CPU. The average
// includes this process's own threads (a benchmark running two threads on
// two CPUs sits near 2), so only other work beyond the machine's CPUs
// counts against the pool. Debian's pthreadpool (2021) spin-waits
// (1,000,000 x PAUSE, then a futex) in the caller for a preempted worker and
// in a worker between operators; on an oversubscribed machine that turns a
// 25 ms int8 MobileNetV2 invoke into 600 ms of mostly spinning
// (docs/benchmarks.md), so a runtime built then runs on the calling thread.
bool IdleCpusFor(size_t threads) {
  if (threads <= 1) return true;
  cpu_set_t set;
  CPU_ZERO(&set);
  long cpus = sched_getaffinity(0, sizeof(set), &set) == 0
                  ? CPU_COUNT(&set)
                  : sysconf(_SC_NPROCESSORS_ONLN);
  double load = 0;
  if (cpus < 1 || getloadavg(&load, 1) != 1) return true;  // unknown: trust
  return load <= static_cast<double>(cpus) + 0.5;
}

// One claimed partition: one XNNPACK runtime, rebuilt when the shapes of
// the partition's inputs change. Used by one thread at a time.
class XnnpackPartition : public sdk::PartitionKernel {
 public:
  // `threads`: the pool's (0: no pool); `load_aware`: use it only while
  // the machine has idle CPUs for them.
  XnnpackPartition(pthreadpool_t pool, size_t threads, bool load_aware)
      : pool_(pool), threads_(threads), load_aware_(load_aware) {}

  KilnStatus Prepare(PartitionContext& p) override {
    std::vector<std::vector<int32_t>> shapes;
    for (int32_t i = 0; i < p.num_inputs(); ++i) {
      const Tensor t = p.input(i);
      shapes.push_back(t.present() ? t.shape() : std::vector<int32_t>());
    }
    if (runtime_ != nullptr && shapes == shapes_) return KILN_STATUS_OK;
    runtime_.reset();
    static_data_.clear();
    bound_.clear();
    externals_.clear();
    KILN_SDK_RETURN_IF_ERROR(Build(p));
    shapes_ = std::move(shapes);
    return KILN_STATUS_OK;
  }

  KilnStatus Invoke(PartitionContext& p) override {
    if (runtime_ == nullptr) {
      return p.Fail(KILN_STATUS_FAILED_PRECONDITION,
                    "the XNNPACK runtime was not built; call AllocateTensors "
                    "first");
    }
    std::vector<xnn_external_value> values;
    values.reserve(externals_.size());
    for (const auto& [index, id] : externals_) {
      void* data = p.tensor(index).data<void>();
      if (data == nullptr && p.tensor(index).byte_size() > 0) {
        return p.Fail(KILN_STATUS_FAILED_PRECONDITION, "tensor '",
                      p.tensor(index).name(),
                      "' has no data at invoke; call AllocateTensors first");
      }
      values.push_back(xnn_external_value{id, data});
    }
    // Setting up recomputes indirection buffers; only when a buffer moved.
    bool same = values.size() == bound_.size();
    for (size_t i = 0; same && i < values.size(); ++i) {
      same = values[i].data == bound_[i];
    }
    if (!same) {
      const xnn_status s =
          xnn_setup_runtime(runtime_.get(), values.size(), values.data());
      if (s != xnn_status_success) {
        bound_.clear();
        return p.Fail(KILN_STATUS_INTERNAL, "xnn_setup_runtime failed (",
                      static_cast<int>(s), ")");
      }
      bound_.clear();
      for (const xnn_external_value& v : values) bound_.push_back(v.data);
    }
    const xnn_status s = xnn_invoke_runtime(runtime_.get());
    if (s != xnn_status_success) {
      return p.Fail(KILN_STATUS_INTERNAL, "xnn_invoke_runtime failed (",
                    static_cast<int>(s), ")");
    }
    return KILN_STATUS_OK;
  }

 private:
  KilnStatus Build(PartitionContext& p) {
    std::map<int32_t, SubgraphBuilder::External> external;
    uint32_t next = 0;
    for (int32_t i = 0; i < p.num_inputs(); ++i) {
      const int32_t index = p.input_index(i);
      if (index < 0 || p.input(i).is_constant() || external.count(index)) {
        continue;
      }
      external[index] = {next++, XNN_VALUE_FLAG_EXTERNAL_INPUT};
    }
    for (int32_t i = 0; i < p.num_outputs(); ++i) {
      const int32_t index = p.output_index(i);
      if (index < 0) continue;
      auto it = external.find(index);
      if (it != external.end()) {
        it->second.flags |= XNN_VALUE_FLAG_EXTERNAL_OUTPUT;
      } else {
        external[index] = {next++, XNN_VALUE_FLAG_EXTERNAL_OUTPUT};
      }
    }
    xnn_subgraph_t raw = nullptr;
    xnn_status s = xnn_create_subgraph(next, 0, &raw);
    if (s != xnn_status_success) {
      return p.Fail(KILN_STATUS_INTERNAL, "xnn_create_subgraph failed (",
                    static_cast<int>(s), ")");
    }
    std::unique_ptr<xnn_subgraph, SubgraphDeleter> subgraph(raw);
    SubgraphBuilder builder(raw, external, &static_data_);
    for (const GraphNode& node : p.nodes()) {
      KILN_SDK_RETURN_IF_ERROR(builder.DefineNode(node, p));
    }
    for (const auto& [index, e] : external) {
      if (builder.Defined(index)) externals_.emplace_back(index, e.id);
    }
    xnn_runtime_t runtime = nullptr;
    // The pool only while the machine has idle CPUs for its threads (see
    // IdleCpusFor; decided again whenever the runtime is rebuilt).
    pthreadpool_t pool = pool_;
    if (pool != nullptr && load_aware_ && !IdleCpusFor(threads_)) {
      pool = nullptr;
    }
    // With a pool, its workers yield to the scheduler after each invoke
    // (PTHREADPOOL_FLAG_YIELD_WORKERS on the runtime's last operator)
    // instead of spinning until the next one.
    s = xnn_create_runtime_v2(
        raw, pool, pool != nullptr ? XNN_FLAG_YIELD_WORKERS : 0, &runtime);
    if (s != xnn_status_success) {
      return p.Fail(
          KILN_STATUS_INTERNAL, "xnn_create_runtime_v2 failed (xnn_status ",
          static_cast<int>(s), ") for a partition of ", p.node_indices().size(),
          " nodes; it runs on kernel plugins instead");
    }
    runtime_.reset(runtime);
    return KILN_STATUS_OK;
  }

  pthreadpool_t pool_;
  const size_t threads_;
  const bool load_aware_;
  std::unique_ptr<xnn_runtime, RuntimeDeleter> runtime_;
  // Copies of the constants the runtime reads (XNNPACK keeps pointers).
  std::deque<std::vector<uint8_t>> static_data_;
  std::vector<std::vector<int32_t>> shapes_;  // inputs the runtime is for
  std::vector<std::pair<int32_t, uint32_t>> externals_;  // tensor, value id
  std::vector<void*> bound_;  // data pointers of the latest setup
};

class XnnpackDelegate : public sdk::Delegate {
 public:
  XnnpackDelegate(int32_t min_partition_size, pthreadpool_t pool,
                  size_t threads, bool float32, bool load_aware)
      : min_partition_size_(min_partition_size),
        pool_(pool),
        threads_(threads),
        float32_(float32),
        load_aware_(load_aware) {}

  NodeSupport Supports(const GraphNode& node) override {
    NodeSupport support = xnnpack::Supports(node);
    if (support.supported() && !float32_ &&
        node.output(0).type() == KILN_TYPE_FLOAT32) {
      return NodeSupport::Unsupported(
          sdk::OpName(node),
          " on float32 runs on Kiln's CPU kernels, which are faster than "
          "this libXNNPACK's float32 kernels (docs/benchmarks.md); set the "
          "xnnpack option float32=true to claim float32 nodes");
    }
    return support;
  }
  int32_t min_partition_size() const override { return min_partition_size_; }
  std::unique_ptr<sdk::PartitionKernel> CreatePartitionKernel() override {
    return std::make_unique<XnnpackPartition>(pool_.get(), threads_,
                                              load_aware_);
  }

 private:
  const int32_t min_partition_size_;
  std::unique_ptr<pthreadpool, PoolDeleter> pool_;
  const size_t threads_;
  const bool float32_;
  const bool load_aware_;
};

// A true/false (1/0) option.
KilnStatus ParseBool(sdk::DelegateContext& context, const std::string& key,
                     const std::string& value, bool* out) {
  if (value != "true" && value != "false" && value != "1" && value != "0") {
    return context.Fail(KILN_STATUS_INVALID_ARGUMENT, "option ", key, "='",
                        value, "' is not true/false (1/0)");
  }
  *out = value == "true" || value == "1";
  return KILN_STATUS_OK;
}

KilnStatus CreateDelegate(sdk::DelegateContext& context,
                          const sdk::DelegateSettings& settings,
                          std::unique_ptr<sdk::Delegate>* delegate) {
  int64_t threads = 1;
  bool float32 = false, load_aware = true;
  for (const auto& [key, value] : settings.options) {
    if (key == "float32" || key == "load_aware_threads") {
      KILN_SDK_RETURN_IF_ERROR(ParseBool(
          context, key, value, key == "float32" ? &float32 : &load_aware));
      continue;
    }
    if (key != "num_threads") {
      return context.Fail(KILN_STATUS_INVALID_ARGUMENT, "unknown option '", key,
                          "': the xnnpack delegate's options are num_threads, "
                          "float32 and load_aware_threads");
    }
    char* end = nullptr;
    threads = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || threads < 1 || threads > 1024) {
      return context.Fail(KILN_STATUS_INVALID_ARGUMENT, "option num_threads='",
                          value, "' is not a thread count from 1 to 1024");
    }
  }
  std::string error;
  if (!LoadXnnApi(&error)) {
    return context.Fail(KILN_STATUS_UNAVAILABLE, "the xnnpack delegate ",
                        error);
  }
  const xnn_status s = xnn_initialize(nullptr);
  if (s != xnn_status_success) {
    return context.Fail(
        KILN_STATUS_UNAVAILABLE, "xnn_initialize failed (xnn_status ",
        static_cast<int>(s), "): this CPU lacks what libXNNPACK needs");
  }
  pthreadpool_t pool = nullptr;
  if (threads > 1) {
    pool = pthreadpool_create(static_cast<size_t>(threads));
    if (pool == nullptr) {
      return context.Fail(KILN_STATUS_RESOURCE_EXHAUSTED, "pthreadpool_create(",
                          threads, ") failed");
    }
  }
  *delegate = std::make_unique<XnnpackDelegate>(
      settings.min_partition_size > 0 ? settings.min_partition_size : 1, pool,
      pool != nullptr ? static_cast<size_t>(threads) : 0, float32, load_aware);
  return KILN_STATUS_OK;
}

const KilnPluginDescriptor* Describe() {
  // A partition kernel owns its runtime, packed weights and constant
  // copies (the thread pool is the delegate's, used by one thread at a
  // time), so the host may keep one kernel per input signature: switching
  // back to a prepared shape costs no rebuild.
  static sdk::DelegateDefinition delegate(
      "xnnpack", &CreateDelegate,
      sdk::DelegateManifest()
          .Ops(SupportedOps())
          .Flags(KILN_DELEGATE_FLAG_STATE_PER_SHAPE_SIGNATURE));
  static sdk::PluginDefinition def =
      sdk::PluginDefinition("kiln_xnnpack", KILN_RUNTIME_VERSION_STRING)
          .Delegate(delegate.delegate_interface())
          .Extensions(delegate.extensions());
  return def.descriptor();
}

}  // namespace
}  // namespace kiln::xnnpack

KILN_DEFINE_PLUGIN(kiln::xnnpack::Describe)
