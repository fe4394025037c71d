// Example Kiln delegate plugin "acme_delegate" (delegate name "acme"),
// written on the SDK's delegate helper (kiln/sdk/delegate.h).
//
// It claims float32 ADD and MUL nodes whose two inputs have the same static
// shape, up to the op versions it implements (ADD v1, MUL v1; see
// MaxOpVersion), and runs each claimed partition as one node. Every other
// node stays on kernel plugins, with the reason shown by
// `kiln inspect --delegate acme`. It honours
// DelegateSettings.min_partition_size and refuses any option key by name.
//
// Extension API 1.2: its manifest declares what it may claim (float32 ADD
// and MUL, version 1), which `kiln plugin inspect` shows without a model,
// and its own settings message, acme.AcmeSettings (acme_settings.proto,
// embedded as a descriptor set), which users write as text or binary
// (`--delegate acme --delegate-settings FILE`); the plugin decodes the few
// bytes with the SDK's WireReader and links no libprotobuf.
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kAcmeSettingsDescriptorSet.h"
#include "kiln/sdk/delegate.h"
#include "kiln/sdk/plugin.h"

namespace acme {
namespace {

using kiln::sdk::GraphNode;
using kiln::sdk::NodeSupport;
using kiln::sdk::PartitionContext;
using kiln::sdk::Tensor;

// Newest op version whose semantics this delegate implements, per op (0:
// not implemented). Claiming a node with a newer version would run it with
// the wrong semantics, so such nodes are left to kernel plugins.
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

bool SameStaticShape(const Tensor& a, const Tensor& b) {
  const int32_t rank = a.rank();
  if (rank < 0 || rank != b.rank()) return false;
  for (int32_t i = 0; i < rank; ++i) {
    if (a.dim(i) < 0 || a.dim(i) != b.dim(i)) return false;
  }
  return true;
}

int64_t Activation(const GraphNode& node) {
  return node.OptionInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_NONE);
}

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

// One claimed partition: its nodes as steps over tensor indices. Used by one
// thread at a time.
class AcmePartition : public kiln::sdk::PartitionKernel {
 public:
  KilnStatus Init(PartitionContext& p) override {
    for (const GraphNode& node : p.nodes()) {
      steps_.push_back(Step{node.builtin_code(), Activation(node),
                            node.input_index(0), node.input_index(1),
                            node.output_index(0)});
    }
    return KILN_STATUS_OK;
  }

  // Shapes are equal throughout a partition (Supports); the partition's
  // outputs take the shape of the first step's first input.
  KilnStatus Prepare(PartitionContext& p) override {
    const std::vector<int32_t> shape = p.tensor(steps_[0].input0).shape();
    for (int32_t i = 0; i < p.num_outputs(); ++i) {
      KILN_SDK_RETURN_IF_ERROR(p.Resize(p.output(i), shape));
    }
    return KILN_STATUS_OK;
  }

  KilnStatus Invoke(PartitionContext& p) override {
    std::map<int32_t, float*> produced;  // tensor -> data written so far
    for (const Step& step : steps_) {
      const int64_t n = p.tensor(step.input0).num_elements();
      const float* in[2] = {nullptr, nullptr};
      const int32_t in_index[2] = {step.input0, step.input1};
      for (int k = 0; k < 2; ++k) {
        auto it = produced.find(in_index[k]);
        in[k] = it != produced.end() ? it->second : HostData(p, in_index[k]);
        if (in[k] == nullptr) {
          return p.Fail(KILN_STATUS_FAILED_PRECONDITION, "input tensor ",
                        in_index[k],
                        " has no data; call AllocateTensors first");
        }
      }
      // Intermediate tensors the host did not allocate live in scratch.
      float* out = HostData(p, step.output);
      if (out == nullptr) {
        std::vector<float>& buffer = scratch_[step.output];
        buffer.resize(static_cast<size_t>(n));
        out = buffer.data();
      }
      produced[step.output] = out;
      const bool add = step.builtin_code == KILN_OP_ADD;
      for (int64_t i = 0; i < n; ++i) {
        const float v = add ? in[0][i] + in[1][i] : in[0][i] * in[1][i];
        out[i] = Activate(step.activation, v);
      }
    }
    return KILN_STATUS_OK;
  }

 private:
  struct Step {
    int32_t builtin_code;
    int64_t activation;
    int32_t input0, input1, output;  // tensor indices
  };

  static float* HostData(const PartitionContext& p, int32_t index) {
    const Tensor t = p.tensor(index);
    return t.present() ? t.data<float>() : nullptr;
  }

  std::vector<Step> steps_;
  std::map<int32_t, std::vector<float>> scratch_;
};

// acme.AcmeSettings, decoded from its wire format.
struct AcmeSettings {
  std::set<std::string> skip_ops;  // field 1, repeated string
};

bool ParseAcmeSettings(const std::string& bytes, AcmeSettings* settings) {
  kiln::sdk::WireReader in(reinterpret_cast<const uint8_t*>(bytes.data()),
                           bytes.size());
  while (!in.done()) {
    uint32_t field = 0, wire = 0;
    if (!in.ReadTag(&field, &wire)) return false;
    std::string op;
    const bool ok =
        field == 1 && wire == kiln::sdk::WireReader::kLengthDelimited
            ? in.ReadString(&op)
            : in.Skip(wire);
    if (!ok) return false;
    if (!op.empty()) settings->skip_ops.insert(op);
  }
  return true;
}

// One delegate instance. Immutable after creation.
class AcmeDelegate : public kiln::sdk::Delegate {
 public:
  AcmeDelegate(int32_t min_partition_size, AcmeSettings settings)
      : min_partition_size_(min_partition_size),
        settings_(std::move(settings)) {}

  NodeSupport Supports(const GraphNode& node) override {
    const int32_t code = node.builtin_code();
    const char* op = code == KILN_OP_CUSTOM && node.custom_name() != nullptr
                         ? node.custom_name()
                         : KilnBuiltinOpName(code);
    if (MaxOpVersion(code) == 0) {
      return NodeSupport::Unsupported(op, " is not implemented by acme");
    }
    if (settings_.skip_ops.count(op) > 0) {
      return NodeSupport::Unsupported(op, " is in acme.AcmeSettings.skip_ops");
    }
    if (node.op_version() < 1 || node.op_version() > MaxOpVersion(code)) {
      return NodeSupport::Unsupported(op, " version ", node.op_version(),
                                      " is newer than the versions 1..",
                                      MaxOpVersion(code), " acme implements");
    }
    if (node.num_inputs() != 2 || node.num_outputs() != 1) {
      return NodeSupport::Unsupported(op, " needs 2 inputs and 1 output");
    }
    const Tensor a = node.input(0), b = node.input(1), out = node.output(0);
    for (const Tensor& t : {a, b, out}) {
      if (!t.present() || t.type() != KILN_TYPE_FLOAT32) {
        return NodeSupport::Unsupported("acme runs float32 tensors only");
      }
    }
    if (!SameStaticShape(a, b)) {
      return NodeSupport::Unsupported("acme needs inputs of one static shape");
    }
    if (!kiln::sdk::IsClampActivation(Activation(node))) {
      return NodeSupport::Unsupported("fused activation ", Activation(node),
                                      " is not implemented by acme");
    }
    return NodeSupport::Supported();
  }

  int32_t min_partition_size() const override { return min_partition_size_; }

  std::unique_ptr<kiln::sdk::PartitionKernel> CreatePartitionKernel() override {
    return std::make_unique<AcmePartition>();
  }

 private:
  const int32_t min_partition_size_;
  const AcmeSettings settings_;
};

// The settings arrive decoded (kiln::sdk::DelegateSettings); acme's own
// message in settings.vendor_settings. The options map is not used, so any
// key is refused by name.
KilnStatus CreateAcmeDelegate(kiln::sdk::DelegateContext& context,
                              const kiln::sdk::DelegateSettings& settings,
                              std::unique_ptr<kiln::sdk::Delegate>* delegate) {
  if (!settings.options.empty()) {
    return context.Fail(KILN_STATUS_INVALID_ARGUMENT, "unknown option '",
                        settings.options.begin()->first,
                        "': the acme delegate has no options (it honours "
                        "min_partition_size only)");
  }
  AcmeSettings acme;
  if (!ParseAcmeSettings(settings.vendor_settings, &acme)) {
    return context.Fail(KILN_STATUS_INVALID_ARGUMENT,
                        "malformed acme.AcmeSettings");
  }
  *delegate = std::make_unique<AcmeDelegate>(
      settings.min_partition_size > 0 ? settings.min_partition_size : 1,
      std::move(acme));
  return KILN_STATUS_OK;
}

const KilnPluginDescriptor* Describe() {
  // An AcmePartition's steps come from the graph and its scratch is sized
  // per invoke, so the host may keep one per input signature.
  static kiln::sdk::DelegateDefinition delegate(
      "acme", &CreateAcmeDelegate,
      kiln::sdk::DelegateManifest()
          .Op(KILN_OP_ADD, 1, MaxOpVersion(KILN_OP_ADD), {KILN_TYPE_FLOAT32})
          .Op(KILN_OP_MUL, 1, MaxOpVersion(KILN_OP_MUL), {KILN_TYPE_FLOAT32})
          .VendorSettings("acme.AcmeSettings", kAcmeSettingsDescriptorSet,
                          sizeof(kAcmeSettingsDescriptorSet))
          .Flags(KILN_DELEGATE_FLAG_STATE_PER_SHAPE_SIGNATURE));
  static kiln::sdk::PluginDefinition definition =
      kiln::sdk::PluginDefinition("acme_delegate", "1.0.0")
          .MinHostAbiVersion(KILN_MAKE_VERSION(1, 0, 0))
          .Delegate(delegate.delegate_interface())
          .Extensions(delegate.extensions());
  return definition.descriptor();
}

}  // namespace
}  // namespace acme

KILN_DEFINE_PLUGIN(acme::Describe)
