// kiln/sdk/delegate.h driven through the C table it fills, against a
// scripted host (fake_host.h), with settings serialized by the protobuf
// library.
#include "kiln/sdk/delegate.h"

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "fake_host.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kiln/delegate_settings.pb.h"
#include "test_instance.h"

namespace kiln::sdk_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// What a test asks the scripted delegate to do, and what it saw.
struct Script {
  std::string throw_at;  // factory|begin|supports|init|prepare|invoke
  bool throw_non_standard = false;
  std::string fail_begin;  // BeginPartitioning fails with this message
  int factory_calls = 0;
  sdk::DelegateSettings settings;  // as the factory received them
  void* instance = nullptr;        // the sdk::Delegate the factory made
  struct SeenNode {
    int32_t index, builtin_code, version, input0, output0;
  };
  std::vector<SeenNode> init_nodes;  // PartitionContext::nodes() in Init
};
Script script;

void MaybeThrow(const char* stage) {
  if (script.throw_at != stage) return;
  if (script.throw_non_standard) throw 42;
  throw std::runtime_error(std::string("boom in ") + stage);
}

// Adds two float32 tensors of one shape, per delegated ADD node.
class ScriptedPartition : public sdk::PartitionKernel {
 public:
  KilnStatus Init(sdk::PartitionContext& p) override {
    MaybeThrow("init");
    for (const sdk::GraphNode& n : p.nodes()) {
      script.init_nodes.push_back({n.index(), n.builtin_code(), n.op_version(),
                                   n.input_index(0), n.output_index(0)});
    }
    return KILN_STATUS_OK;
  }
  KilnStatus Prepare(sdk::PartitionContext& p) override {
    MaybeThrow("prepare");
    return p.Resize(p.output(0), p.input(0).shape());
  }
  KilnStatus Invoke(sdk::PartitionContext& p) override {
    MaybeThrow("invoke");
    for (const sdk::GraphNode& n : p.nodes()) {
      const float* a = n.input(0).data<const float>();
      const float* b = n.input(1).data<const float>();
      float* out = n.output(0).data<float>();
      for (int64_t i = 0; i < n.output(0).num_elements(); ++i) {
        out[i] = a[i] + b[i];
      }
    }
    return KILN_STATUS_OK;
  }
};

// Supports float32 ADD only.
class ScriptedDelegate : public sdk::Delegate {
 public:
  explicit ScriptedDelegate(int32_t min_partition_size)
      : min_partition_size_(min_partition_size) {}

  KilnStatus BeginPartitioning(sdk::DelegateContext& subgraph) override {
    MaybeThrow("begin");
    if (!script.fail_begin.empty()) {
      return subgraph.Fail(KILN_STATUS_FAILED_PRECONDITION, script.fail_begin);
    }
    return KILN_STATUS_OK;
  }
  sdk::NodeSupport Supports(const sdk::GraphNode& node) override {
    MaybeThrow("supports");
    if (node.builtin_code() != KILN_OP_ADD) {
      return sdk::NodeSupport::Unsupported(
          KilnBuiltinOpName(node.builtin_code()), " is not ADD");
    }
    for (int32_t i = 0; i < node.num_inputs(); ++i) {
      if (node.input(i).type() != KILN_TYPE_FLOAT32) {
        return sdk::NodeSupport::Unsupported(
            "input ", i, " has type ", sdk::TypeName(node.input(i).type()));
      }
    }
    return sdk::NodeSupport::Supported();
  }
  int32_t min_partition_size() const override { return min_partition_size_; }
  std::unique_ptr<sdk::PartitionKernel> CreatePartitionKernel() override {
    return std::make_unique<ScriptedPartition>();
  }

 private:
  const int32_t min_partition_size_;
};

KilnStatus CreateScripted(sdk::DelegateContext& context,
                          const sdk::DelegateSettings& settings,
                          std::unique_ptr<sdk::Delegate>* delegate) {
  ++script.factory_calls;
  script.settings = settings;
  MaybeThrow("factory");
  if (settings.options.count("unavailable") != 0) {
    return context.Fail(KILN_STATUS_UNAVAILABLE, "no device (asked for)");
  }
  *delegate = std::make_unique<ScriptedDelegate>(
      settings.min_partition_size > 0 ? settings.min_partition_size : 1);
  script.instance = delegate->get();
  return KILN_STATUS_OK;
}

// A capability of the plugin's own, chained after the SDK's.
const KilnExtensionBase kProbe = {KILN_EXTENSION_BASE_STRUCT_SIZE,
                                  "test.probe/1", nullptr};

sdk::DelegateDefinition& Definition() {
  static sdk::DelegateDefinition definition("scripted", &CreateScripted,
                                            &kProbe);
  return definition;
}

// The template descriptor of a plugin offering the scripted delegate.
const KilnPluginDescriptor* Describe() {
  static sdk::PluginDefinition plugin =
      sdk::PluginDefinition("scripted_plugin", "1.0.0")
          .Delegate(Definition().delegate_interface())
          .Extensions(Definition().extensions());
  return plugin.descriptor();
}

// Drives the C table as a host would.
class SdkDelegateTest : public ::testing::Test {
 protected:
  void SetUp() override { script = Script(); }
  void TearDown() override {
    if (state_ != nullptr) iface()->partition_free(instance_, state_);
    if (instance_ != nullptr) iface()->destroy(iface()->user_data, instance_);
  }

  // The delegate of this test's load instance, on the scripted host.
  const KilnDelegateInterface* iface() { return load_.delegate(); }
  const KilnDelegateDeclineReasonsExtension* decline_reasons() {
    const KilnExtensionBase* e = Definition().extensions();
    if (e == nullptr ||
        std::strcmp(e->id, KILN_DELEGATE_DECLINE_REASONS_EXTENSION_ID) != 0) {
      return nullptr;
    }
    return reinterpret_cast<const KilnDelegateDeclineReasonsExtension*>(e);
  }
  std::string Reason(int32_t node) {
    const char* why = decline_reasons()->decline_reason(instance_, node);
    return why != nullptr ? why : "(null)";
  }

  KilnStatus Create(const std::string& bytes, FakeContext* c) {
    return iface()->create(iface()->user_data, c->opaque(),
                           reinterpret_cast<const uint8_t*>(bytes.data()),
                           bytes.size(), &instance_);
  }
  KilnStatus Create() { return Create(kiln::DelegateSettings()); }
  KilnStatus Create(const kiln::DelegateSettings& settings) {
    FakeContext c(&graph_);
    const KilnStatus s = Create(settings.SerializeAsString(), &c);
    EXPECT_EQ(s, KILN_STATUS_OK) << c.error;
    return s;
  }
  KilnStatus Partition(FakeContext* c) {
    return iface()->partition(instance_, c->opaque());
  }
  // Graph tensor: float32 [2] with `values` (empty: no data).
  int32_t AddTensor(std::vector<float> values = {},
                    KilnTensorType type = KILN_TYPE_FLOAT32) {
    FakeTensor t;
    t.name = "t" + std::to_string(graph_.tensors.size());
    t.type = type;
    t.shape = {2};
    t.data = std::move(values);
    graph_.tensors.push_back(t);
    return static_cast<int32_t>(graph_.tensors.size() - 1);
  }
  int32_t AddNode(int32_t code, std::vector<int32_t> inputs,
                  std::vector<int32_t> outputs, int32_t version = 1) {
    FakeNode n;
    n.builtin_code = code;
    n.version = version;
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    graph_.nodes.push_back(n);
    graph_.execution_plan.push_back(
        static_cast<int32_t>(graph_.nodes.size() - 1));
    return static_cast<int32_t>(graph_.nodes.size() - 1);
  }

  TestInstance load_{FakeHostApi(), Describe()};
  FakeGraph graph_;
  void* instance_ = nullptr;
  void* state_ = nullptr;
};

TEST_F(SdkDelegateTest, TableNamesTheDelegateAndItsSettingsMessage) {
  const KilnDelegateInterface* d = iface();
  EXPECT_EQ(d->struct_size, KILN_DELEGATE_INTERFACE_STRUCT_SIZE);
  EXPECT_STREQ(d->name, "scripted");
  EXPECT_STREQ(d->settings_type, "kiln.DelegateSettings");
  for (const void* f : {reinterpret_cast<const void*>(d->create),
                        reinterpret_cast<const void*>(d->destroy),
                        reinterpret_cast<const void*>(d->partition),
                        reinterpret_cast<const void*>(d->partition_init),
                        reinterpret_cast<const void*>(d->partition_free),
                        reinterpret_cast<const void*>(d->partition_prepare),
                        reinterpret_cast<const void*>(d->partition_invoke)}) {
    EXPECT_NE(f, nullptr);
  }
}

// A delegate's own supported-op table becomes manifest rows, in order.
TEST(SdkDelegateManifestTest, OpsTakesEveryRowOfATable) {
  struct OpRow {
    int32_t builtin_code, min_version, max_version;
    sdk::TypeSet types;
  };
  static const OpRow kTable[] = {
      {KILN_OP_ADD, 1, 2, {KILN_TYPE_FLOAT32}},
      {KILN_OP_CONV_2D, 1, 3, {KILN_TYPE_FLOAT32, KILN_TYPE_INT8}}};
  static sdk::DelegateDefinition definition(
      "table", &CreateScripted, sdk::DelegateManifest().Ops(kTable), nullptr);
  const KilnDelegateInterface* d = definition.delegate_interface();
  ASSERT_EQ(d->num_supported_ops, 2u);
  EXPECT_EQ(d->supported_ops[0]->builtin_code, KILN_OP_ADD);
  EXPECT_EQ(d->supported_ops[0]->max_version, 2);
  EXPECT_EQ(d->supported_ops[0]->num_tensor_types, 1u);
  EXPECT_EQ(d->supported_ops[1]->builtin_code, KILN_OP_CONV_2D);
  EXPECT_EQ(d->supported_ops[1]->min_version, 1);
  EXPECT_EQ(d->supported_ops[1]->max_version, 3);
  EXPECT_EQ(d->supported_ops[1]->num_tensor_types, 2u);
}

TEST_F(SdkDelegateTest, FactoryReceivesTheDecodedSettings) {
  kiln::DelegateSettings s;
  (*s.mutable_options())["colour"] = "blue";
  s.set_min_partition_size(3);
  s.mutable_opencl()->set_device_name_filter("gpu0");
  ASSERT_EQ(Create(s), KILN_STATUS_OK);
  EXPECT_EQ(script.factory_calls, 1);
  EXPECT_EQ(script.settings.options.at("colour"), "blue");
  EXPECT_EQ(script.settings.min_partition_size, 3);
  kiln::OpenClSettings opencl;
  ASSERT_TRUE(opencl.ParseFromString(script.settings.opencl));
  EXPECT_EQ(opencl.device_name_filter(), "gpu0");
}

TEST_F(SdkDelegateTest, NoSettingsAreDefaults) {
  FakeContext c(&graph_);
  ASSERT_EQ(
      iface()->create(iface()->user_data, c.opaque(), nullptr, 0, &instance_),
      KILN_STATUS_OK)
      << c.error;
  EXPECT_TRUE(script.settings.options.empty());
  EXPECT_EQ(script.settings.min_partition_size, 0);
}

TEST_F(SdkDelegateTest, MalformedSettingsFailBeforeTheFactory) {
  FakeContext c(&graph_);
  void* untouched = &c;
  instance_ = untouched;
  EXPECT_EQ(Create(std::string("\xff\xff\xff", 3), &c),
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(c.error, HasSubstr("settings of delegate 'scripted'"));
  EXPECT_THAT(c.error, HasSubstr("malformed kiln.DelegateSettings"));
  EXPECT_EQ(script.factory_calls, 0);
  EXPECT_EQ(instance_, untouched);
  instance_ = nullptr;
}

TEST_F(SdkDelegateTest, FactoryFailureKeepsItsCodeAndMessage) {
  kiln::DelegateSettings s;
  (*s.mutable_options())["unavailable"] = "1";
  FakeContext c(&graph_);
  EXPECT_EQ(Create(s.SerializeAsString(), &c), KILN_STATUS_UNAVAILABLE);
  EXPECT_EQ(c.error, "no device (asked for)");
  EXPECT_EQ(instance_, nullptr);
}

TEST_F(SdkDelegateTest, DeclineReasonsReachTheHostThroughTheCapability) {
  const int32_t x = AddTensor(), y = AddTensor(), z = AddTensor();
  const int32_t i = AddTensor({}, KILN_TYPE_INT32),
                j = AddTensor({}, KILN_TYPE_INT32);
  AddNode(KILN_OP_ADD, {x, x}, {y});
  AddNode(KILN_OP_MUL, {y, y}, {z});
  AddNode(KILN_OP_ADD, {i, i}, {j});
  ASSERT_EQ(Create(), KILN_STATUS_OK);
  ASSERT_NE(decline_reasons(), nullptr);
  EXPECT_EQ(decline_reasons()->base.struct_size,
            KILN_DELEGATE_DECLINE_REASONS_EXTENSION_STRUCT_SIZE);
  FakeContext c(&graph_);
  ASSERT_EQ(Partition(&c), KILN_STATUS_OK) << c.error;
  EXPECT_THAT(c.claimed, ElementsAre(0));
  EXPECT_EQ(Reason(0), "(null)");
  EXPECT_EQ(Reason(1), "MUL is not ADD");
  EXPECT_EQ(Reason(2), "input 0 has type INT32");
  EXPECT_EQ(Reason(7), "(null)");  // not in the plan

  // A later partition call replaces the reasons.
  graph_.execution_plan = {0};
  FakeContext again(&graph_);
  ASSERT_EQ(Partition(&again), KILN_STATUS_OK) << again.error;
  EXPECT_EQ(Reason(1), "(null)");
}

TEST_F(SdkDelegateTest, GroupsSmallerThanMinPartitionSizeAreDeclined) {
  const int32_t x = AddTensor(), a = AddTensor(), b = AddTensor();
  const int32_t c_in = AddTensor(), c_out = AddTensor();
  AddNode(KILN_OP_ADD, {x, x}, {a});
  AddNode(KILN_OP_ADD, {a, x}, {b});            // joined to node 0 by `a`
  AddNode(KILN_OP_ADD, {c_in, c_in}, {c_out});  // alone
  kiln::DelegateSettings s;
  s.set_min_partition_size(2);
  ASSERT_EQ(Create(s), KILN_STATUS_OK);
  FakeContext c(&graph_);
  ASSERT_EQ(Partition(&c), KILN_STATUS_OK) << c.error;
  EXPECT_THAT(c.claimed, ElementsAre(0, 1));
  EXPECT_EQ(Reason(2),
            "its connected group of supported nodes has 1 node(s), fewer "
            "than min_partition_size=2");
}

TEST_F(SdkDelegateTest, ClaimingNothingIsSuccess) {
  const int32_t x = AddTensor(), y = AddTensor();
  AddNode(KILN_OP_MUL, {x, x}, {y});
  ASSERT_EQ(Create(), KILN_STATUS_OK);
  FakeContext c(&graph_);
  EXPECT_EQ(Partition(&c), KILN_STATUS_OK) << c.error;
  EXPECT_THAT(c.claimed, IsEmpty());
}

TEST_F(SdkDelegateTest, BeginPartitioningCanFailThePartitionCall) {
  const int32_t x = AddTensor(), y = AddTensor();
  AddNode(KILN_OP_ADD, {x, x}, {y});
  ASSERT_EQ(Create(), KILN_STATUS_OK);
  script.fail_begin = "subgraph has no device memory";
  FakeContext c(&graph_);
  EXPECT_EQ(Partition(&c), KILN_STATUS_FAILED_PRECONDITION);
  EXPECT_EQ(c.error, "subgraph has no device memory");
  EXPECT_THAT(c.claimed, IsEmpty());
}

// Graph 0: y = x + x; 1: z = y + x, delegated as one partition node.
class SdkPartitionTest : public SdkDelegateTest {
 protected:
  void SetUp() override {
    SdkDelegateTest::SetUp();
    x_ = AddTensor({1.5f, -2.f});
    y_ = AddTensor({0.f, 0.f});
    z_ = AddTensor();
    AddNode(KILN_OP_ADD, {x_, x_}, {y_}, /*version=*/1);
    AddNode(KILN_OP_ADD, {y_, x_}, {z_}, /*version=*/2);
    partition_.builtin_code = KILN_OP_DELEGATE;
    partition_.inputs = {x_};
    partition_.outputs = {z_};
    partition_.delegated_nodes = {0, 1};
    ASSERT_EQ(Create(), KILN_STATUS_OK);
  }
  KilnStatus Init(FakeContext* c) {
    return iface()->partition_init(instance_, c->opaque(), Opaque(&partition_),
                                   &state_);
  }
  KilnStatus Prepare(FakeContext* c) {
    return iface()->partition_prepare(instance_, state_, c->opaque(),
                                      Opaque(&partition_));
  }
  KilnStatus Invoke(FakeContext* c) {
    return iface()->partition_invoke(instance_, state_, c->opaque(),
                                     Opaque(&partition_));
  }

  int32_t x_ = -1, y_ = -1, z_ = -1;
  FakeNode partition_;
};

TEST_F(SdkPartitionTest, KernelSeesItsDelegatedNodesAndRuns) {
  FakeContext c(&graph_);
  ASSERT_EQ(Init(&c), KILN_STATUS_OK) << c.error;
  ASSERT_EQ(script.init_nodes.size(), 2u);
  EXPECT_EQ(script.init_nodes[0].index, 0);
  EXPECT_EQ(script.init_nodes[0].builtin_code, KILN_OP_ADD);
  EXPECT_EQ(script.init_nodes[0].version, 1);
  EXPECT_EQ(script.init_nodes[0].input0, x_);
  EXPECT_EQ(script.init_nodes[0].output0, y_);
  EXPECT_EQ(script.init_nodes[1].index, 1);
  EXPECT_EQ(script.init_nodes[1].version, 2);
  EXPECT_EQ(script.init_nodes[1].input0, y_);
  EXPECT_EQ(script.init_nodes[1].output0, z_);
  ASSERT_EQ(Prepare(&c), KILN_STATUS_OK) << c.error;
  EXPECT_THAT(graph_.tensors[z_].shape, ElementsAre(2));
  ASSERT_EQ(Invoke(&c), KILN_STATUS_OK) << c.error;
  // y = x + x = {3, -4}; z = y + x = {4.5, -6}.
  EXPECT_THAT(graph_.tensors[z_].data, ElementsAre(4.5f, -6.f));
}

TEST_F(SdkPartitionTest, PartitionWithoutNodesFailsInit) {
  partition_.delegated_nodes.clear();
  FakeContext c(&graph_);
  EXPECT_EQ(Init(&c), KILN_STATUS_INTERNAL);
  EXPECT_THAT(c.error, HasSubstr("lists no delegated nodes"));
  EXPECT_EQ(state_, nullptr);
}

TEST_F(SdkPartitionTest, PartitionWithAMissingNodeFailsInit) {
  partition_.delegated_nodes = {0, 42};
  FakeContext c(&graph_);
  EXPECT_EQ(Init(&c), KILN_STATUS_INTERNAL);
  EXPECT_THAT(c.error, HasSubstr("delegated node 42 does not exist"));
  EXPECT_EQ(state_, nullptr);
}

// Each stage throws in turn; the host must see INTERNAL with the text.
class SdkDelegateExceptionTest
    : public SdkPartitionTest,
      public ::testing::WithParamInterface<const char*> {};

// The callback whose guard catches an exception thrown at `stage`.
std::string CallbackOf(const std::string& stage) {
  if (stage == "factory") return "create";
  if (stage == "begin" || stage == "supports") return "partition";
  return "partition_" + stage;
}

TEST_P(SdkDelegateExceptionTest, ExceptionBecomesAReportedInternalError) {
  const std::string stage = GetParam();
  script.throw_at = stage;
  FakeContext c(&graph_);
  KilnStatus s = KILN_STATUS_OK;
  void* created = nullptr;
  if (stage == "factory") {
    s = iface()->create(iface()->user_data, c.opaque(), nullptr, 0, &created);
  } else if (stage == "begin" || stage == "supports") {
    s = Partition(&c);
    EXPECT_THAT(c.claimed, IsEmpty());
  } else {
    s = Init(&c);
    if (s == KILN_STATUS_OK) s = Prepare(&c);
    if (s == KILN_STATUS_OK) s = Invoke(&c);
  }
  EXPECT_EQ(s, KILN_STATUS_INTERNAL);
  EXPECT_EQ(c.error, "C++ exception escaped the 'scripted' delegate's " +
                         CallbackOf(stage) + ": boom in " + stage);
  EXPECT_EQ(created, nullptr);
  if (stage == "init") {
    EXPECT_EQ(state_, nullptr);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryCallback, SdkDelegateExceptionTest,
                         ::testing::Values("factory", "begin", "supports",
                                           "init", "prepare", "invoke"));

TEST_F(SdkPartitionTest, ExceptionOfAnyTypeIsCaught) {
  script.throw_at = "prepare";
  script.throw_non_standard = true;
  FakeContext c(&graph_);
  ASSERT_EQ(Init(&c), KILN_STATUS_OK) << c.error;
  EXPECT_EQ(Prepare(&c), KILN_STATUS_INTERNAL);
  EXPECT_EQ(c.error,
            "C++ exception escaped the 'scripted' delegate's "
            "partition_prepare: unknown exception");
}

TEST_F(SdkDelegateTest, PluginCapabilitiesFollowAndFindTheirDelegate) {
  ASSERT_EQ(Create(), KILN_STATUS_OK);
  ASSERT_NE(decline_reasons(), nullptr);
  EXPECT_EQ(decline_reasons()->base.next, &kProbe);
  EXPECT_EQ(sdk::DelegateFromHandle<ScriptedDelegate>(instance_),
            script.instance);
  EXPECT_EQ(sdk::DelegateFromHandle<ScriptedDelegate>(nullptr), nullptr);
  EXPECT_EQ(decline_reasons()->decline_reason(nullptr, 0), nullptr);
}

}  // namespace
}  // namespace kiln::sdk_test
