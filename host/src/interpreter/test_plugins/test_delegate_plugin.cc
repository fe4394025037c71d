// A delegate plugin for the interpreter's tests (delegate name
// "test_delegate"), written on kiln/sdk/delegate.h. It claims float32 ADD
// and MUL nodes whose op version is at most its supported version and whose
// fused activation is NONE or RELU, and computes them (same shapes, or one
// operand with a single element).
//
// DelegateSettings.options it understands:
//   max_version=N   highest ADD/MUL version it claims (default 1); nodes
//                   above it are refused, as the extension API requires
//   fail_at=STAGE   create | unavailable | partition | init | prepare |
//                   invoke: that callback fails with a reason
//   add_bias=X      adds X to every result (default 0), so tests can tell
//                   delegate results from kernel results
//   ops=LIST        comma-separated subset of "ADD,MUL" to claim
//   fail_node=N     partition_invoke fails for the partition holding node N
//   device_memory=true
//                   partitions write their outputs into the instance's fake
//                   device memory (buffer handles, bound newer than the host
//                   data) and read inputs from handles bound to them; the
//                   host copies through copy_from/copy_to_buffer_handle,
//                   logged for tests (test_delegate_buffers.h)
// Any other key is refused. Its own settings message,
// kiln_test.TestDelegateSettings (test_delegate_settings.proto, embedded as
// a descriptor set), may set add_bias too. DelegateSettings.min_partition_size
// is honoured (the SDK declines smaller groups with a reason). Its manifest
// declares float32 ADD and MUL versions 1..4: with max_version above 4 Supports
// accepts nodes the manifest does not cover, which the SDK then declines.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kTestDelegateSettingsDescriptorSet.h"
#include "kiln/sdk/delegate.h"
#include "kiln/sdk/plugin.h"
#include "kiln/sdk/profiler.h"
#include "test_delegate_buffers.h"

namespace kiln::test_delegate {
namespace {

struct Settings {
  int32_t max_version = 1;
  std::string fail_at;
  float add_bias = 0.f;
  bool claim_add = true;
  bool claim_mul = true;
  int32_t min_partition_size = 1;
  int32_t fail_node = -1;
  bool device_memory = false;
};

// Fake device memory: buffers by handle, and the log of host requests.
class DeviceMemory {
 public:
  KilnBufferHandle Create(uint64_t elements) {
    const KilnBufferHandle handle = next_++;
    buffers_[handle].assign(elements, 0.f);
    return handle;
  }
  float* Data(KilnBufferHandle handle) {
    auto it = buffers_.find(handle);
    return it == buffers_.end() ? nullptr : it->second.data();
  }
  size_t Size(KilnBufferHandle handle) const {
    auto it = buffers_.find(handle);
    return it == buffers_.end() ? 0 : it->second.size();
  }
  std::string log;

 private:
  std::map<KilnBufferHandle, std::vector<float>> buffers_;
  KilnBufferHandle next_ = 1000;
};

// Elements of a tensor of known rank, -1 for an unknown rank.
int64_t Elements(const sdk::Tensor& t) {
  const int32_t rank = t.rank();
  if (rank < 0) return -1;
  int64_t n = 1;
  for (int32_t i = 0; i < rank; ++i) n *= t.dim(i);
  return n;
}

bool IsFloat(const sdk::Tensor& t) {
  return t.present() && t.type() == KILN_TYPE_FLOAT32;
}

class TestPartition : public sdk::PartitionKernel {
 public:
  TestPartition(const Settings& settings, DeviceMemory* memory)
      : settings_(settings), memory_(memory) {}

  KilnStatus Init(sdk::PartitionContext& p) override {
    if (settings_.fail_at == "init") {
      return p.Fail(KILN_STATUS_INTERNAL,
                    "partition_init failed on request (fail_at=init)");
    }
    return KILN_STATUS_OK;
  }

  KilnStatus Prepare(sdk::PartitionContext& p) override {
    if (settings_.fail_at == "prepare") {
      return p.Fail(KILN_STATUS_INTERNAL,
                    "partition_prepare failed on request (fail_at=prepare)");
    }
    for (const sdk::GraphNode& node : p.nodes()) {
      const int64_t a = Elements(node.input(0));
      const int64_t b = Elements(node.input(1));
      const int64_t o = Elements(node.output(0));
      if (!((a == o && (b == o || b == 1)) || (b == o && a == 1))) {
        return p.Fail(
            KILN_STATUS_UNIMPLEMENTED,
            "only same-shape or single-element operands are supported");
      }
    }
    return KILN_STATUS_OK;
  }

  KilnStatus Invoke(sdk::PartitionContext& p) override {
    if (settings_.fail_at == "invoke") {
      // Scribble over the outputs first, as a half-done delegate might.
      for (int32_t i = 0; i < p.num_outputs(); ++i) {
        const sdk::Tensor t = p.output(i);
        void* data = t.data<void>();
        if (data != nullptr) std::memset(data, 0x7F, t.byte_size());
      }
      return p.Fail(KILN_STATUS_INTERNAL,
                    "partition_invoke failed on request (fail_at=invoke)");
    }
    for (int32_t n : p.node_indices()) {
      if (n == settings_.fail_node) {
        return p.Fail(KILN_STATUS_INTERNAL,
                      "partition_invoke failed on request (fail_node=", n, ")");
      }
    }
    sdk::ProfileScope event(p.host(), p.raw_context(), "compute",
                            "test_delegate");
    where_.clear();
    bind_.clear();
    for (const sdk::GraphNode& node : p.nodes()) {
      KILN_SDK_RETURN_IF_ERROR(Compute(p, node));
    }
    for (const auto& [index, handle] : bind_) {
      KILN_SDK_RETURN_IF_ERROR(p.BindBufferHandle(p.tensor(index), handle,
                                                  /*host_data_stale=*/true));
    }
    return KILN_STATUS_OK;
  }

 private:
  // Where tensor `index` is read from in this invoke: what this invoke
  // wrote, a handle of this instance bound to it, else its host data.
  const float* Read(sdk::PartitionContext& p, int32_t index) {
    auto it = where_.find(index);
    if (it != where_.end()) return it->second;
    const sdk::Tensor t = p.tensor(index);
    const KilnBufferHandle handle = p.BufferHandle(t);
    if (handle != KILN_INVALID_BUFFER_HANDLE) return memory_->Data(handle);
    return t.data<const float>();
  }

  // Where output `index` is written: with device memory, a partition
  // output goes to the handle bound to it (or a buffer of its own), bound
  // after the invoke; everything else to host memory.
  float* Write(sdk::PartitionContext& p, int32_t index) {
    const sdk::Tensor t = p.tensor(index);
    float* out = t.data<float>();
    bool partition_output = false;
    for (int32_t i = 0; i < p.num_outputs(); ++i) {
      partition_output = partition_output || p.output_index(i) == index;
    }
    if (settings_.device_memory && partition_output) {
      KilnBufferHandle handle = p.BufferHandle(t);
      if (handle == KILN_INVALID_BUFFER_HANDLE) {
        KilnBufferHandle& own = own_[index];
        if (own == 0) own = memory_->Create(static_cast<uint64_t>(Elements(t)));
        handle = own;
      }
      out = memory_->Data(handle);
      bind_[index] = handle;
    }
    where_[index] = out;
    return out;
  }

  KilnStatus Compute(sdk::PartitionContext& p, const sdk::GraphNode& node) {
    const sdk::Tensor ta = node.input(0), tb = node.input(1);
    const sdk::Tensor to = node.output(0);
    const float* a = Read(p, node.input_index(0));
    const float* b = Read(p, node.input_index(1));
    float* o = Write(p, node.output_index(0));
    const int64_t na = Elements(ta), nb = Elements(tb), no = Elements(to);
    if (a == nullptr || b == nullptr || (o == nullptr && no > 0)) {
      return p.Fail(KILN_STATUS_INTERNAL, "tensor without data");
    }
    const int64_t act =
        node.OptionInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_NONE);
    const bool mul = node.builtin_code() == KILN_OP_MUL;
    for (int64_t k = 0; k < no; ++k) {
      const float x = a[na == 1 ? 0 : k];
      const float y = b[nb == 1 ? 0 : k];
      float r = mul ? x * y : x + y;
      if (act == KILN_ACTIVATION_RELU) r = r < 0.f ? 0.f : r;
      o[k] = r + settings_.add_bias;
    }
    return KILN_STATUS_OK;
  }

  const Settings& settings_;
  DeviceMemory* memory_;
  std::map<int32_t, float*> where_;           // written in this invoke
  std::map<int32_t, KilnBufferHandle> bind_;  // bound after it
  std::map<int32_t, KilnBufferHandle> own_;   // this partition's buffers
};

class TestDelegate : public sdk::Delegate {
 public:
  explicit TestDelegate(Settings settings) : settings_(std::move(settings)) {}

  KilnStatus BeginPartitioning(sdk::DelegateContext& subgraph) override {
    if (settings_.fail_at == "partition") {
      return subgraph.Fail(KILN_STATUS_INTERNAL,
                           "partition failed on request (fail_at=partition)");
    }
    return KILN_STATUS_OK;
  }

  sdk::NodeSupport Supports(const sdk::GraphNode& node) override {
    const int32_t code = node.builtin_code();
    if (!((code == KILN_OP_ADD && settings_.claim_add) ||
          (code == KILN_OP_MUL && settings_.claim_mul))) {
      return sdk::NodeSupport::Unsupported(KilnBuiltinOpName(code),
                                           " is not among the ops claimed");
    }
    if (node.op_version() > settings_.max_version) {
      return sdk::NodeSupport::Unsupported(
          "version ", node.op_version(),
          " is above max_version=", settings_.max_version);
    }
    if (node.num_inputs() != 2 || node.num_outputs() != 1) {
      return sdk::NodeSupport::Unsupported("needs 2 inputs and 1 output");
    }
    const int64_t act =
        node.OptionInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_NONE);
    if (act != KILN_ACTIVATION_NONE && act != KILN_ACTIVATION_RELU) {
      return sdk::NodeSupport::Unsupported("fused activation ", act,
                                           " is neither NONE nor RELU");
    }
    if (!IsFloat(node.input(0)) || !IsFloat(node.input(1)) ||
        !IsFloat(node.output(0))) {
      return sdk::NodeSupport::Unsupported("a tensor is not float32");
    }
    return sdk::NodeSupport::Supported();
  }

  int32_t min_partition_size() const override {
    return settings_.min_partition_size;
  }

  std::unique_ptr<sdk::PartitionKernel> CreatePartitionKernel() override {
    return std::make_unique<TestPartition>(settings_, &memory_);
  }

  KilnStatus CopyFromBufferHandle(sdk::DelegateContext& context,
                                  KilnBufferHandle handle,
                                  const sdk::Tensor& tensor) override {
    memory_.log += std::string("from ") + tensor.name() + "\n";
    return Copy(context, handle, tensor, /*to_device=*/false);
  }
  KilnStatus CopyToBufferHandle(sdk::DelegateContext& context,
                                KilnBufferHandle handle,
                                const sdk::Tensor& tensor) override {
    memory_.log += std::string("to ") + tensor.name() + "\n";
    return Copy(context, handle, tensor, /*to_device=*/true);
  }
  void FreeBufferHandle(KilnBufferHandle) override { memory_.log += "free\n"; }

  DeviceMemory& memory() { return memory_; }

 private:
  KilnStatus Copy(sdk::DelegateContext& context, KilnBufferHandle handle,
                  const sdk::Tensor& tensor, bool to_device) {
    float* device = memory_.Data(handle);
    float* host = tensor.data<float>();
    const size_t bytes = static_cast<size_t>(tensor.byte_size());
    if (device == nullptr || host == nullptr ||
        memory_.Size(handle) * sizeof(float) < bytes) {
      return context.Fail(KILN_STATUS_INVALID_ARGUMENT, "buffer handle ",
                          handle, " of tensor '", tensor.name(),
                          "' is unknown or too small");
    }
    std::memcpy(to_device ? static_cast<void*>(device) : host,
                to_device ? static_cast<const void*>(host) : device, bytes);
    return KILN_STATUS_OK;
  }

  const Settings settings_;
  DeviceMemory memory_;
};

// kiln_test.TestDelegateSettings: field 1, float add_bias.
bool ReadVendorSettings(const std::string& bytes, Settings* s) {
  sdk::WireReader in(reinterpret_cast<const uint8_t*>(bytes.data()),
                     bytes.size());
  while (!in.done()) {
    uint32_t field = 0, wire = 0;
    if (!in.ReadTag(&field, &wire)) return false;
    const bool ok = field == 1 && wire == sdk::WireReader::kFixed32
                        ? in.ReadFloat(&s->add_bias)
                        : in.Skip(wire);
    if (!ok) return false;
  }
  return true;
}

KilnStatus CreateTestDelegate(sdk::DelegateContext& context,
                              const sdk::DelegateSettings& decoded,
                              std::unique_ptr<sdk::Delegate>* delegate) {
  Settings s;
  if (decoded.min_partition_size > 0) {
    s.min_partition_size = decoded.min_partition_size;
  }
  for (const auto& [key, value] : decoded.options) {
    if (key == "max_version") {
      s.max_version = std::atoi(value.c_str());
    } else if (key == "fail_at") {
      s.fail_at = value;
    } else if (key == "add_bias") {
      s.add_bias = std::strtof(value.c_str(), nullptr);
    } else if (key == "ops") {
      s.claim_add = value.find("ADD") != std::string::npos;
      s.claim_mul = value.find("MUL") != std::string::npos;
    } else if (key == "fail_node") {
      s.fail_node = std::atoi(value.c_str());
    } else if (key == "device_memory") {
      s.device_memory = value == "true";
    } else {
      return context.Fail(KILN_STATUS_INVALID_ARGUMENT, "unknown option '", key,
                          "' (known: max_version, fail_at, add_bias, ops, "
                          "fail_node, device_memory)");
    }
  }
  if (!ReadVendorSettings(decoded.vendor_settings, &s)) {
    return context.Fail(KILN_STATUS_INVALID_ARGUMENT,
                        "malformed kiln_test.TestDelegateSettings");
  }
  if (s.fail_at == "unavailable") {
    return context.Fail(KILN_STATUS_UNAVAILABLE,
                        "test device is absent (fail_at=unavailable)");
  }
  if (s.fail_at == "create") {
    return context.Fail(KILN_STATUS_INTERNAL,
                        "create failed on request (fail_at=create)");
  }
  *delegate = std::make_unique<TestDelegate>(std::move(s));
  return KILN_STATUS_OK;
}

DeviceMemory* MemoryOf(void* delegate) {
  TestDelegate* d = sdk::DelegateFromHandle<TestDelegate>(delegate);
  return d == nullptr ? nullptr : &d->memory();
}

const KilnTestDelegateBuffers kBuffers = {
    {sizeof(KilnTestDelegateBuffers), KILN_TEST_DELEGATE_BUFFERS_ID, nullptr},
    [](void* delegate, uint64_t elements) -> int64_t {
      return MemoryOf(delegate)->Create(elements);
    },
    [](void* delegate, int64_t handle) {
      return MemoryOf(delegate)->Data(handle);
    },
    [](void* delegate) { return MemoryOf(delegate)->log.c_str(); },
    [](void* delegate) { MemoryOf(delegate)->log.clear(); }};

const KilnPluginDescriptor* Describe() {
  // Each TestPartition checks and computes the shapes it is invoked with,
  // so one per input signature is correct.
  static sdk::DelegateDefinition delegate(
      "test_delegate", &CreateTestDelegate,
      sdk::DelegateManifest()
          .Op(KILN_OP_ADD, 1, 4, {KILN_TYPE_FLOAT32})
          .Op(KILN_OP_MUL, 1, 4, {KILN_TYPE_FLOAT32})
          .VendorSettings("kiln_test.TestDelegateSettings",
                          kTestDelegateSettingsDescriptorSet,
                          sizeof(kTestDelegateSettingsDescriptorSet))
          .Flags(KILN_DELEGATE_FLAG_STATE_PER_SHAPE_SIGNATURE),
      &kBuffers.base, sdk::BufferHandles::kYes);
  static sdk::PluginDefinition def =
      sdk::PluginDefinition("kiln_test_delegate", "1.0.0")
          .Delegate(delegate.delegate_interface())
          .Extensions(delegate.extensions());
  return def.descriptor();
}

}  // namespace
}  // namespace kiln::test_delegate

KILN_DEFINE_PLUGIN(kiln::test_delegate::Describe)
