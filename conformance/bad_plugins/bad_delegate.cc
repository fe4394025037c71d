// Deliberately broken delegates for the conformance runner's tests, one
// variant per build (KILN_BAD_DELEGATE_<VARIANT>=1):
//   CRASH_IN_CREATE      create writes through a null pointer (SIGSEGV)
//   CRASH_IN_PARTITION   partition (Supports) writes through a null pointer
//   CRASH_IN_INVOKE      partition_invoke writes through a null pointer
//   CLAIMS_UNDECLARED    declares ADD v1 only but claims every node of
//                        the plan (bypassing the SDK's manifest check)
//   WRONG_OUTPUTS        computes a + b + 1 for ADD
//   FLOAT_ONLY_CLAIMS_V2 declares ADD v1..2 (v2 added int8 per TFLite) with
//                        every type allowed, but implements float only
// Apart from the defect each is a correct float32 ADD (and MUL) delegate
// for inputs of one static shape, on the SDK's delegate helper.
#include <cstdint>
#include <memory>
#include <vector>

#include "kiln/sdk/delegate.h"
#include "kiln/sdk/plugin.h"

namespace bad_delegate {
namespace {

using kiln::sdk::GraphNode;
using kiln::sdk::NodeSupport;
using kiln::sdk::PartitionContext;
using kiln::sdk::Tensor;

int* volatile g_null_pointer = nullptr;  // volatile: the crash stays

bool SameStaticShape(const Tensor& a, const Tensor& b) {
  if (a.rank() < 0 || a.rank() != b.rank()) return false;
  for (int32_t i = 0; i < a.rank(); ++i) {
    if (a.dim(i) < 0 || a.dim(i) != b.dim(i)) return false;
  }
  return true;
}

class Partition : public kiln::sdk::PartitionKernel {
 public:
  KilnStatus Prepare(PartitionContext& p) override {
    const GraphNode& node = p.nodes().front();
    for (int32_t i = 0; i < p.num_outputs(); ++i) {
      KILN_SDK_RETURN_IF_ERROR(p.Resize(p.output(i), node.input(0).shape()));
    }
    return KILN_STATUS_OK;
  }

  KilnStatus Invoke(PartitionContext& p) override {
#if defined(KILN_BAD_DELEGATE_CRASH_IN_INVOKE)
    *g_null_pointer = 1;
#endif
    if (p.nodes().size() != 1) {
      return p.Fail(KILN_STATUS_UNIMPLEMENTED,
                    "bad_delegate runs one node per partition");
    }
    const GraphNode& node = p.nodes().front();
    const Tensor a = node.input(0), b = node.input(1), out = node.output(0);
    const float* x = a.data<float>();
    const float* y = b.data<float>();
    float* z = out.data<float>();
    if (x == nullptr || y == nullptr || z == nullptr) {
      return p.Fail(KILN_STATUS_FAILED_PRECONDITION, "tensor without data");
    }
    const bool add = node.builtin_code() == KILN_OP_ADD;
    float offset = 0;
#if defined(KILN_BAD_DELEGATE_WRONG_OUTPUTS)
    offset = 1;
#endif
    const int64_t activation =
        node.OptionInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_NONE);
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      float v = add ? x[i] + y[i] + offset : x[i] * y[i];
      if (activation == KILN_ACTIVATION_RELU6) v = v < 0 ? 0 : (v > 6 ? 6 : v);
      if (activation == KILN_ACTIVATION_RELU) v = v < 0 ? 0 : v;
      z[i] = v;
    }
    return KILN_STATUS_OK;
  }
};

class BadDelegate : public kiln::sdk::Delegate {
 public:
#if defined(KILN_BAD_DELEGATE_CLAIMS_UNDECLARED)
  // Claims every node of the plan itself, bypassing the SDK's check of
  // Supports against the manifest.
  KilnStatus BeginPartitioning(kiln::sdk::DelegateContext& subgraph) override {
    const int32_t* plan = nullptr;
    int32_t count = 0;
    const KilnHostApi& host = subgraph.host();
    KilnStatus status =
        host.context_execution_plan(subgraph.raw_context(), &plan, &count);
    if (status != KILN_STATUS_OK) return status;
    const std::vector<int32_t> all(plan, plan + count);
    return host.context_delegate_nodes(subgraph.raw_context(), all.data(),
                                       count);
  }
#endif

  NodeSupport Supports(const GraphNode& node) override {
#if defined(KILN_BAD_DELEGATE_CRASH_IN_PARTITION)
    *g_null_pointer = 1;
#endif
    const int32_t code = node.builtin_code();
    if (code != KILN_OP_ADD && code != KILN_OP_MUL) {
      return NodeSupport::Unsupported("bad_delegate runs ADD and MUL only");
    }
    if (node.op_version() > MaxVersion()) {
      return NodeSupport::Unsupported("version ", node.op_version(),
                                      " is not implemented");
    }
    if (node.num_inputs() != 2 || node.num_outputs() != 1 ||
        !SameStaticShape(node.input(0), node.input(1))) {
      return NodeSupport::Unsupported("needs two inputs of one static shape");
    }
#if !defined(KILN_BAD_DELEGATE_FLOAT_ONLY_CLAIMS_V2)
    if (node.input(0).type() != KILN_TYPE_FLOAT32) {
      return NodeSupport::Unsupported("float32 only");
    }
#endif
    return NodeSupport::Supported();
  }

  static int32_t MaxVersion() {
#if defined(KILN_BAD_DELEGATE_FLOAT_ONLY_CLAIMS_V2)
    return 2;
#else
    return 1;
#endif
  }

  std::unique_ptr<kiln::sdk::PartitionKernel> CreatePartitionKernel() override {
    return std::make_unique<Partition>();
  }
};

KilnStatus Create(kiln::sdk::DelegateContext& /*context*/,
                  const kiln::sdk::DelegateSettings& /*settings*/,
                  std::unique_ptr<kiln::sdk::Delegate>* delegate) {
#if defined(KILN_BAD_DELEGATE_CRASH_IN_CREATE)
  *g_null_pointer = 1;
#endif
  *delegate = std::make_unique<BadDelegate>();
  return KILN_STATUS_OK;
}

kiln::sdk::DelegateManifest Manifest() {
  kiln::sdk::DelegateManifest manifest;
#if defined(KILN_BAD_DELEGATE_FLOAT_ONLY_CLAIMS_V2)
  manifest.Op(KILN_OP_ADD, 1, 2, {});  // any type, as v2 allows int8
#else
  manifest.Op(KILN_OP_ADD, 1, 1, {KILN_TYPE_FLOAT32});
#if !defined(KILN_BAD_DELEGATE_CLAIMS_UNDECLARED)
  manifest.Op(KILN_OP_MUL, 1, 1, {KILN_TYPE_FLOAT32});
#endif
#endif
  return manifest;
}

const KilnPluginDescriptor* Describe() {
  static kiln::sdk::DelegateDefinition delegate(KILN_BAD_DELEGATE_NAME, &Create,
                                                Manifest());
  static kiln::sdk::PluginDefinition definition =
      kiln::sdk::PluginDefinition(KILN_BAD_DELEGATE_NAME, "1.0.0")
          .Delegate(delegate.delegate_interface())
          .Extensions(delegate.extensions());
  return definition.descriptor();
}

}  // namespace
}  // namespace bad_delegate

KILN_DEFINE_PLUGIN(bad_delegate::Describe)
