// Example Kiln delegate plugin "acme_delegate" (delegate name "acme").
//
// It claims float32 ADD and MUL nodes whose two inputs have the same static
// shape, up to the op versions it implements (ADD v1, MUL v1; see
// kMaxOpVersion), and runs each claimed partition as one node. Everything
// else stays on kernel plugins. It shows the KilnDelegateInterface contract:
// create/destroy an instance from serialized kiln.DelegateSettings,
// partition (claim nodes), and the partition kernel (init/prepare/invoke/
// free). It is written against the C structs directly; no C++ exception
// crosses the boundary (every callback catches).
#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/sdk/delegate_settings.h"
#include "kiln/sdk/plugin.h"

namespace acme {
namespace {

using kiln::sdk::Host;

// Newest op version whose semantics this delegate implements, per op.
// Claiming a node with a newer version would run it with the wrong
// semantics, so such nodes are left to kernel plugins.
int32_t MaxOpVersion(int32_t builtin_code) {
  switch (builtin_code) {
    case KILN_OP_ADD:
      return 1;
    case KILN_OP_MUL:
      return 1;
    default:
      return 0;
  }
}

// One delegate instance (KilnDelegateInterface.create). Immutable after
// create, so partitions of different interpreters may share it.
struct DelegateInstance {
  int32_t min_partition_size = 1;
};

// ---- Settings: serialized kiln.DelegateSettings -------------------------
// Read with the SDK's wire-format reader (kiln/sdk/delegate_settings.h), so
// the plugin needs no libprotobuf. This delegate has no options of its own,
// so any key is refused by name; it honours min_partition_size. Unknown
// fields are skipped (newer hosts may add fields).

// Returns "" on success, else the reason the settings are refused.
std::string ParseSettings(const uint8_t* data, uint64_t size,
                          DelegateInstance* out) {
  kiln::sdk::DelegateSettings settings;
  std::string error;
  if (!kiln::sdk::ParseDelegateSettings(data, static_cast<size_t>(size),
                                        &settings, &error)) {
    return error;
  }
  if (!settings.options.empty()) {
    return "unknown option '" + settings.options.begin()->first +
           "': the acme delegate has no options (it honours "
           "min_partition_size only)";
  }
  if (settings.min_partition_size > 0) {
    out->min_partition_size = settings.min_partition_size;
  }
  return "";
}

// ---- Node selection ------------------------------------------------------

bool SameShape(const KilnOpaqueTensor* a, const KilnOpaqueTensor* b) {
  const int32_t rank = Host().tensor_rank(a);
  if (rank < 0 || rank != Host().tensor_rank(b)) return false;
  for (int32_t i = 0; i < rank; ++i) {
    const int32_t d = Host().tensor_dim(a, i);
    if (d < 0 || d != Host().tensor_dim(b, i)) return false;
  }
  return true;
}

bool IsSupportedActivation(int64_t activation) {
  return activation == KILN_ACTIVATION_NONE ||
         activation == KILN_ACTIVATION_RELU ||
         activation == KILN_ACTIVATION_RELU_N1_TO_1 ||
         activation == KILN_ACTIVATION_RELU6;
}

int64_t Activation(const KilnOpaqueNode* node) {
  int64_t activation = KILN_ACTIVATION_NONE;
  Host().node_option_int(node, KILN_OPTION_FUSED_ACTIVATION, &activation);
  return activation;
}

bool CanRun(KilnOpaqueContext* context, const KilnOpaqueNode* node) {
  const int32_t code = Host().node_builtin_code(node);
  const int32_t version = Host().node_op_version(node);
  if (version < 1 || version > MaxOpVersion(code)) return false;
  if (Host().node_num_inputs(node) != 2 || Host().node_num_outputs(node) != 1) {
    return false;
  }
  const KilnOpaqueTensor* a = Host().node_input(context, node, 0);
  const KilnOpaqueTensor* b = Host().node_input(context, node, 1);
  const KilnOpaqueTensor* out = Host().node_output(context, node, 0);
  if (a == nullptr || b == nullptr || out == nullptr) return false;
  for (const KilnOpaqueTensor* t : {a, b, out}) {
    if (Host().tensor_type(t) != KILN_TYPE_FLOAT32) return false;
  }
  return SameShape(a, b) && IsSupportedActivation(Activation(node));
}

// ---- Partition kernel ----------------------------------------------------

struct Step {
  int32_t builtin_code;
  int64_t activation;
  int32_t input0, input1, output;  // tensor indices
};

// Per-partition state, used by one thread at a time.
struct PartitionState {
  std::vector<Step> steps;
  // Tensors produced and consumed inside the partition that the host did
  // not allocate.
  std::map<int32_t, std::vector<float>> scratch;
};

float Activate(int64_t activation, float v) {
  switch (activation) {
    case KILN_ACTIVATION_RELU:
      return v < 0 ? 0 : v;
    case KILN_ACTIVATION_RELU_N1_TO_1:
      return v < -1 ? -1 : (v > 1 ? 1 : v);
    case KILN_ACTIVATION_RELU6:
      return v < 0 ? 0 : (v > 6 ? 6 : v);
    default:
      return v;
  }
}

KilnStatus Fail(KilnOpaqueContext* context, KilnStatus code,
                const std::string& message) {
  Host().report_error(context, code, message.c_str());
  return code;
}

template <typename Body>
KilnStatus Guarded(KilnOpaqueContext* context, const char* where, Body body) {
  try {
    return body();
  } catch (const std::exception& e) {
    return Fail(context, KILN_STATUS_INTERNAL,
                std::string("acme delegate ") + where + ": " + e.what());
  } catch (...) {
    return Fail(context, KILN_STATUS_INTERNAL,
                std::string("acme delegate ") + where + ": unknown exception");
  }
}

KilnStatus Create(void*, KilnOpaqueContext* context, const uint8_t* settings,
                  uint64_t settings_size, void** delegate) {
  return Guarded(context, "create", [&] {
    auto instance = std::make_unique<DelegateInstance>();
    if (settings != nullptr && settings_size > 0) {
      const std::string error =
          ParseSettings(settings, settings_size, instance.get());
      if (!error.empty()) {
        return Fail(context, KILN_STATUS_INVALID_ARGUMENT, error);
      }
    }
    *delegate = instance.release();
    return KILN_STATUS_OK;
  });
}

void Destroy(void*, void* delegate) {
  delete static_cast<DelegateInstance*>(delegate);
}

KilnStatus Partition(void* delegate, KilnOpaqueContext* context) {
  return Guarded(context, "partition", [&] {
    const auto* instance = static_cast<const DelegateInstance*>(delegate);
    const int32_t* plan = nullptr;
    int32_t count = 0;
    const KilnStatus s = Host().context_execution_plan(context, &plan, &count);
    if (s != KILN_STATUS_OK) return s;
    std::vector<int32_t> claimed;
    for (int32_t i = 0; i < count; ++i) {
      const KilnOpaqueNode* node = Host().context_node(context, plan[i]);
      if (node != nullptr && CanRun(context, node)) claimed.push_back(plan[i]);
    }
    if (static_cast<int32_t>(claimed.size()) < instance->min_partition_size) {
      return KILN_STATUS_OK;  // claiming nothing is success
    }
    return Host().context_delegate_nodes(context, claimed.data(),
                                         static_cast<int32_t>(claimed.size()));
  });
}

KilnStatus PartitionInit(void*, KilnOpaqueContext* context,
                         KilnOpaqueNode* partition, void** state) {
  return Guarded(context, "partition_init", [&] {
    const int32_t* nodes = nullptr;
    int32_t count = 0;
    const KilnStatus s = Host().node_delegated_nodes(partition, &nodes, &count);
    if (s != KILN_STATUS_OK) return s;
    auto st = std::make_unique<PartitionState>();
    for (int32_t i = 0; i < count; ++i) {
      const KilnOpaqueNode* node = Host().context_node(context, nodes[i]);
      if (node == nullptr) {
        return Fail(
            context, KILN_STATUS_INTERNAL,
            "delegated node " + std::to_string(nodes[i]) + " does not exist");
      }
      st->steps.push_back(Step{Host().node_builtin_code(node), Activation(node),
                               Host().node_input_index(node, 0),
                               Host().node_input_index(node, 1),
                               Host().node_output_index(node, 0)});
    }
    *state = st.release();
    return KILN_STATUS_OK;
  });
}

void PartitionFree(void*, void* state) {
  delete static_cast<PartitionState*>(state);
}

// Shapes are equal throughout a partition (CanRun); the partition outputs
// take the shape of the first step's first input.
KilnStatus PartitionPrepare(void*, void* state, KilnOpaqueContext* context,
                            KilnOpaqueNode* partition) {
  return Guarded(context, "partition_prepare", [&] {
    auto* st = static_cast<PartitionState*>(state);
    if (st->steps.empty()) return KILN_STATUS_OK;
    const KilnOpaqueTensor* first =
        Host().context_tensor(context, st->steps[0].input0);
    const int32_t rank = Host().tensor_rank(first);
    std::vector<int32_t> dims(static_cast<size_t>(rank < 0 ? 0 : rank));
    for (int32_t i = 0; i < rank; ++i) dims[i] = Host().tensor_dim(first, i);
    for (int32_t i = 0; i < Host().node_num_outputs(partition); ++i) {
      KilnOpaqueTensor* out = Host().node_output(context, partition, i);
      const KilnStatus s = Host().tensor_resize(
          context, out, static_cast<int32_t>(dims.size()), dims.data());
      if (s != KILN_STATUS_OK) return s;
    }
    return KILN_STATUS_OK;
  });
}

KilnStatus PartitionInvoke(void*, void* state, KilnOpaqueContext* context,
                           KilnOpaqueNode*) {
  return Guarded(context, "partition_invoke", [&] {
    auto* st = static_cast<PartitionState*>(state);
    std::map<int32_t, float*> produced;
    auto host_data = [&](int32_t index) -> float* {
      KilnOpaqueTensor* t = Host().context_tensor(context, index);
      return t == nullptr ? nullptr
                          : static_cast<float*>(Host().tensor_data(t));
    };
    for (const Step& step : st->steps) {
      const KilnOpaqueTensor* a = Host().context_tensor(context, step.input0);
      int64_t n = 1;
      for (int32_t i = 0, r = Host().tensor_rank(a); i < r; ++i) {
        n *= Host().tensor_dim(a, i);
      }
      const float* inputs[2] = {nullptr, nullptr};
      const int32_t input_index[2] = {step.input0, step.input1};
      for (int k = 0; k < 2; ++k) {
        auto it = produced.find(input_index[k]);
        inputs[k] =
            it != produced.end() ? it->second : host_data(input_index[k]);
        if (inputs[k] == nullptr) {
          return Fail(context, KILN_STATUS_FAILED_PRECONDITION,
                      "input tensor " + std::to_string(input_index[k]) +
                          " has no data; call AllocateTensors first");
        }
      }
      const float* x = inputs[0];
      const float* y = inputs[1];
      // Intermediate tensors the host did not allocate live in scratch.
      float* out = host_data(step.output);
      if (out == nullptr) {
        std::vector<float>& buffer = st->scratch[step.output];
        buffer.resize(static_cast<size_t>(n));
        out = buffer.data();
      }
      produced[step.output] = out;
      const bool add = step.builtin_code == KILN_OP_ADD;
      for (int64_t i = 0; i < n; ++i) {
        out[i] = Activate(step.activation, add ? x[i] + y[i] : x[i] * y[i]);
      }
    }
    return KILN_STATUS_OK;
  });
}

const KilnDelegateInterface kDelegate = {
    KILN_DELEGATE_INTERFACE_STRUCT_SIZE,
    /*name=*/"acme",
    /*settings_type=*/"kiln.DelegateSettings",
    /*user_data=*/nullptr,
    Create,
    Destroy,
    Partition,
    PartitionInit,
    PartitionFree,
    PartitionPrepare,
    PartitionInvoke,
};

const KilnPluginDescriptor* Describe() {
  static kiln::sdk::PluginDefinition definition =
      kiln::sdk::PluginDefinition("acme_delegate", "1.0.0")
          .MinHostAbiVersion(KILN_MAKE_VERSION(1, 0, 0))
          .Delegate(&kDelegate);
  return definition.descriptor();
}

}  // namespace
}  // namespace acme

KILN_DEFINE_PLUGIN(acme::Describe)
