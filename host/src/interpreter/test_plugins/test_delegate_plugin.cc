// A delegate plugin for the interpreter's tests (delegate name
// "test_delegate"). It claims float32 ADD and MUL nodes whose op version is
// at most its supported version and whose fused activation is NONE or RELU,
// and computes them (same shapes, or one operand with a single element).
//
// DelegateSettings.options it understands:
//   max_version=N   highest ADD/MUL version it claims (default 1); nodes
//                   above it are refused, as the extension API requires
//   fail_at=STAGE   create | unavailable | partition | init | prepare |
//                   invoke: that callback fails with a reason
//   add_bias=X      adds X to every result (default 0), so tests can tell
//                   delegate results from kernel results
//   ops=LIST        comma-separated subset of "ADD,MUL" to claim
// Any other key is refused.
//
// The settings are decoded from the protobuf wire format by hand so that the
// plugin does not load a second protobuf runtime into the host (see
// plugins/opencl/src/settings.h for the same choice).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "kiln/sdk/delegate_settings.h"
#include "kiln/sdk/plugin.h"

namespace kiln::test_delegate {
namespace {

using sdk::Host;

struct Settings {
  int32_t max_version = 1;
  std::string fail_at;
  float add_bias = 0.f;
  bool claim_add = true;
  bool claim_mul = true;
  int32_t min_partition_size = 0;
};

// kiln.DelegateSettings: the SDK's wire-format reader (no libprotobuf in
// the plugin, so no second protobuf runtime in the host process).
bool ParseOptions(const uint8_t* data, size_t size,
                  std::map<std::string, std::string>* options,
                  int32_t* min_partition_size) {
  kiln::sdk::DelegateSettings settings;
  std::string error;
  if (!kiln::sdk::ParseDelegateSettings(data, size, &settings, &error)) {
    return false;
  }
  *options = std::move(settings.options);
  if (settings.min_partition_size != 0) {
    *min_partition_size = settings.min_partition_size;
  }
  return true;
}

KilnStatus Fail(KilnOpaqueContext* c, KilnStatus code, const std::string& m) {
  Host().report_error(c, code, m.c_str());
  return code;
}

KilnStatus Create(void*, KilnOpaqueContext* context, const uint8_t* data,
                  uint64_t size, void** delegate) {
  std::map<std::string, std::string> options;
  auto* s = new Settings();
  if (!ParseOptions(data, static_cast<size_t>(size), &options,
                    &s->min_partition_size)) {
    delete s;
    return Fail(context, KILN_STATUS_INVALID_ARGUMENT,
                "settings are not a serialized kiln.DelegateSettings");
  }
  for (const auto& [key, value] : options) {
    if (key == "max_version") {
      s->max_version = std::atoi(value.c_str());
    } else if (key == "fail_at") {
      s->fail_at = value;
    } else if (key == "add_bias") {
      s->add_bias = std::strtof(value.c_str(), nullptr);
    } else if (key == "ops") {
      s->claim_add = value.find("ADD") != std::string::npos;
      s->claim_mul = value.find("MUL") != std::string::npos;
    } else {
      delete s;
      return Fail(context, KILN_STATUS_INVALID_ARGUMENT,
                  "unknown option '" + key +
                      "' (known: max_version, fail_at, add_bias, ops)");
    }
  }
  if (s->fail_at == "create" || s->fail_at == "unavailable") {
    const bool unavailable = s->fail_at == "unavailable";
    delete s;
    return Fail(context,
                unavailable ? KILN_STATUS_UNAVAILABLE : KILN_STATUS_INTERNAL,
                unavailable ? "test device is absent (fail_at=unavailable)"
                            : "create failed on request (fail_at=create)");
  }
  *delegate = s;
  return KILN_STATUS_OK;
}

void Destroy(void*, void* delegate) { delete static_cast<Settings*>(delegate); }

bool IsFloat(KilnOpaqueTensor* t) {
  return t != nullptr && Host().tensor_type(t) == KILN_TYPE_FLOAT32;
}

KilnStatus Partition(void* delegate, KilnOpaqueContext* context) {
  const auto* s = static_cast<const Settings*>(delegate);
  if (s->fail_at == "partition") {
    return Fail(context, KILN_STATUS_INTERNAL,
                "partition failed on request (fail_at=partition)");
  }
  const int32_t* plan = nullptr;
  int32_t count = 0;
  if (Host().context_execution_plan(context, &plan, &count) != KILN_STATUS_OK) {
    return Fail(context, KILN_STATUS_INTERNAL, "no execution plan");
  }
  std::vector<int32_t> claimed;
  for (int32_t i = 0; i < count; ++i) {
    KilnOpaqueNode* node = Host().context_node(context, plan[i]);
    const int32_t code = Host().node_builtin_code(node);
    if (!((code == KILN_OP_ADD && s->claim_add) ||
          (code == KILN_OP_MUL && s->claim_mul))) {
      continue;
    }
    if (Host().node_op_version(node) > s->max_version) continue;
    if (Host().node_num_inputs(node) != 2 ||
        Host().node_num_outputs(node) != 1) {
      continue;
    }
    int64_t act = 0;
    Host().node_option_int(node, KILN_OPTION_FUSED_ACTIVATION, &act);
    if (act != KILN_ACTIVATION_NONE && act != KILN_ACTIVATION_RELU) continue;
    if (!IsFloat(Host().node_input(context, node, 0)) ||
        !IsFloat(Host().node_input(context, node, 1)) ||
        !IsFloat(Host().node_output(context, node, 0))) {
      continue;
    }
    claimed.push_back(plan[i]);
  }
  return Host().context_delegate_nodes(context, claimed.data(),
                                       static_cast<int32_t>(claimed.size()));
}

KilnStatus PartitionInit(void* delegate, KilnOpaqueContext* context,
                         KilnOpaqueNode* partition, void** state) {
  const auto* s = static_cast<const Settings*>(delegate);
  if (s->fail_at == "init") {
    return Fail(context, KILN_STATUS_INTERNAL,
                "partition_init failed on request (fail_at=init)");
  }
  const int32_t* nodes = nullptr;
  int32_t count = 0;
  if (Host().node_delegated_nodes(partition, &nodes, &count) !=
          KILN_STATUS_OK ||
      count <= 0) {
    return Fail(context, KILN_STATUS_INTERNAL, "partition lists no nodes");
  }
  *state = nullptr;
  return KILN_STATUS_OK;
}

int64_t Elements(KilnOpaqueTensor* t) {
  const int32_t rank = Host().tensor_rank(t);
  if (rank < 0) return -1;
  int64_t n = 1;
  for (int32_t i = 0; i < rank; ++i) n *= Host().tensor_dim(t, i);
  return n;
}

KilnStatus PartitionPrepare(void* delegate, void*, KilnOpaqueContext* context,
                            KilnOpaqueNode* partition) {
  const auto* s = static_cast<const Settings*>(delegate);
  if (s->fail_at == "prepare") {
    return Fail(context, KILN_STATUS_INTERNAL,
                "partition_prepare failed on request (fail_at=prepare)");
  }
  const int32_t* nodes = nullptr;
  int32_t count = 0;
  Host().node_delegated_nodes(partition, &nodes, &count);
  for (int32_t i = 0; i < count; ++i) {
    KilnOpaqueNode* node = Host().context_node(context, nodes[i]);
    const int64_t a = Elements(Host().node_input(context, node, 0));
    const int64_t b = Elements(Host().node_input(context, node, 1));
    const int64_t o = Elements(Host().node_output(context, node, 0));
    if (!((a == o && (b == o || b == 1)) || (b == o && a == 1))) {
      return Fail(context, KILN_STATUS_UNIMPLEMENTED,
                  "only same-shape or single-element operands are supported");
    }
  }
  return KILN_STATUS_OK;
}

KilnStatus PartitionInvoke(void* delegate, void*, KilnOpaqueContext* context,
                           KilnOpaqueNode* partition) {
  const auto* s = static_cast<const Settings*>(delegate);
  if (s->fail_at == "invoke") {
    // Scribble over the outputs first, as a half-done delegate might.
    for (int32_t i = 0; i < Host().node_num_outputs(partition); ++i) {
      KilnOpaqueTensor* t = Host().node_output(context, partition, i);
      void* data = Host().tensor_data(t);
      if (data != nullptr) std::memset(data, 0x7F, Host().tensor_byte_size(t));
    }
    return Fail(context, KILN_STATUS_INTERNAL,
                "partition_invoke failed on request (fail_at=invoke)");
  }
  const int32_t* nodes = nullptr;
  int32_t count = 0;
  Host().node_delegated_nodes(partition, &nodes, &count);
  for (int32_t i = 0; i < count; ++i) {
    KilnOpaqueNode* node = Host().context_node(context, nodes[i]);
    KilnOpaqueTensor* ta = Host().node_input(context, node, 0);
    KilnOpaqueTensor* tb = Host().node_input(context, node, 1);
    KilnOpaqueTensor* to = Host().node_output(context, node, 0);
    const auto* a = static_cast<const float*>(Host().tensor_data(ta));
    const auto* b = static_cast<const float*>(Host().tensor_data(tb));
    auto* o = static_cast<float*>(Host().tensor_data(to));
    const int64_t na = Elements(ta), nb = Elements(tb), no = Elements(to);
    if (a == nullptr || b == nullptr || (o == nullptr && no > 0)) {
      return Fail(context, KILN_STATUS_INTERNAL, "tensor without data");
    }
    int64_t act = 0;
    Host().node_option_int(node, KILN_OPTION_FUSED_ACTIVATION, &act);
    const bool mul = Host().node_builtin_code(node) == KILN_OP_MUL;
    for (int64_t k = 0; k < no; ++k) {
      const float x = a[na == 1 ? 0 : k];
      const float y = b[nb == 1 ? 0 : k];
      float r = mul ? x * y : x + y;
      if (act == KILN_ACTIVATION_RELU) r = r < 0.f ? 0.f : r;
      o[k] = r + s->add_bias;
    }
  }
  return KILN_STATUS_OK;
}

const KilnDelegateInterface* Interface() {
  static const KilnDelegateInterface iface = [] {
    KilnDelegateInterface d;
    std::memset(&d, 0, sizeof(d));
    d.struct_size = KILN_DELEGATE_INTERFACE_STRUCT_SIZE;
    d.name = "test_delegate";
    d.settings_type = "kiln.DelegateSettings";
    d.create = Create;
    d.destroy = Destroy;
    d.partition = Partition;
    d.partition_init = PartitionInit;
    d.partition_prepare = PartitionPrepare;
    d.partition_invoke = PartitionInvoke;
    return d;
  }();
  return &iface;
}

const KilnPluginDescriptor* Describe() {
  static sdk::PluginDefinition def = [] {
    sdk::PluginDefinition d("kiln_test_delegate", "1.0.0");
    d.Delegate(Interface());
    return d;
  }();
  return def.descriptor();
}

}  // namespace
}  // namespace kiln::test_delegate

KILN_DEFINE_PLUGIN(kiln::test_delegate::Describe)
