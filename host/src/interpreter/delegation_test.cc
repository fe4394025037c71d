// Host-side delegation with the test delegate plugin.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "interpreter/test_util.h"
#include "kiln/kiln_builtin_ops.h"

namespace kiln {
namespace {

using ::testing::AllOf;
using testing::CpuOnlyOptions;
using ::testing::ElementsAre;
using testing::Fill;
using ::testing::HasSubstr;
using testing::LoadBuilt;
using testing::Read;
using testing::WithTestDelegate;

// 0: a = ADD(x, x)      claimed
// 1: b = MUL(a, a)      claimed
// 2: c = SUB(b, x)      not claimed
// 3: d = ADD(c, c)      claimed
// 4: y = MUL(d, b)      claimed; uses b, so {0,1} and {3,4} cannot merge
std::shared_ptr<const Model> DiamondModel(int32_t add_version = 1,
                                          int32_t mul_version = 1) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  auto f32 = [&](const char* name) {
    TensorSpec s;
    s.name = name;
    s.shape = {2, 3};
    return g.AddTensor(s);
  };
  const int32_t x = f32("x"), a = f32("a"), b = f32("b"), c = f32("c"),
                d = f32("d"), y = f32("y");
  g.AddOperator(KILN_OP_ADD, add_version, {x, x}, {a});
  g.AddOperator(KILN_OP_MUL, mul_version, {a, a}, {b});
  g.AddOperator(KILN_OP_SUB, 1, {b, x}, {c});
  g.AddOperator(KILN_OP_ADD, add_version, {c, c}, {d});
  g.AddOperator(KILN_OP_MUL, mul_version, {d, b}, {y});
  g.SetInputs({x});
  g.SetOutputs({y});
  auto model = LoadBuilt(builder);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

const std::vector<float> kInput = {1, -2, 3, 0.5f, -1, 2};

std::vector<float> RunTwice(Interpreter& it) {
  absl::Status s = it.AllocateTensors();
  EXPECT_TRUE(s.ok()) << s;
  if (!s.ok()) return {};
  std::vector<float> last;
  for (int round = 0; round < 2; ++round) {
    Fill(it.input(0), kInput);
    s = it.Invoke();
    EXPECT_TRUE(s.ok()) << s;
    last = Read<float>(it.output(0));
  }
  return last;
}

std::vector<float> CpuReference(const std::shared_ptr<const Model>& model) {
  auto it = Interpreter::Create(model, CpuOnlyOptions());
  EXPECT_TRUE(it.ok()) << it.status();
  return it.ok() ? RunTwice(**it) : std::vector<float>{};
}

TEST(DelegationTest, ClaimedNodesBecomeConnectedPartitions) {
  auto model = DiamondModel();
  ASSERT_NE(model, nullptr);
  auto it = Interpreter::Create(model, WithTestDelegate(""));
  ASSERT_TRUE(it.ok()) << it.status();
  const std::vector<PartitionInfo> parts = (*it)->Partitions(0);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_THAT(parts[0].delegated_nodes, ElementsAre(0, 1));
  EXPECT_THAT(parts[0].inputs, ElementsAre(0));   // x
  EXPECT_THAT(parts[0].outputs, ElementsAre(2));  // b (a stays inside)
  EXPECT_THAT(parts[1].delegated_nodes, ElementsAre(3, 4));
  EXPECT_THAT(parts[1].inputs, ElementsAre(3, 2));  // c, b
  EXPECT_THAT(parts[1].outputs, ElementsAre(5));    // y
  EXPECT_EQ(parts[0].delegate_name, "test_delegate");
  // Plan: partition, SUB, partition.
  const std::vector<int32_t>& plan = (*it)->execution_plan(0);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0], parts[0].node_index);
  EXPECT_EQ(plan[1], 2);
  EXPECT_EQ(plan[2], parts[1].node_index);
  ASSERT_NE((*it)->node(0, parts[0].node_index), nullptr);
  EXPECT_EQ((*it)->node(0, parts[0].node_index)->builtin_code,
            KILN_OP_DELEGATE);
  EXPECT_TRUE((*it)->IsNodeDelegated(0, 0));
  EXPECT_FALSE((*it)->IsNodeDelegated(0, 2));
  const std::vector<NodeInfo> nodes = (*it)->DescribeNodes(0);
  ASSERT_EQ(nodes.size(), 5u);
  EXPECT_TRUE(nodes[4].delegated);
  EXPECT_EQ(nodes[4].partition_node, parts[1].node_index);
  EXPECT_FALSE(nodes[2].delegated);
  EXPECT_THAT(nodes[2].plugin_path, HasSubstr("libkiln_cpu.so"));
  EXPECT_EQ(RunTwice(**it), CpuReference(model));
}

TEST(DelegationTest, DelegateReallyComputesThePartitions) {
  auto model = DiamondModel();
  ASSERT_NE(model, nullptr);
  auto it = Interpreter::Create(
      model, WithTestDelegate("options { key: 'add_bias' value: '1' }"));
  ASSERT_TRUE(it.ok()) << it.status();
  EXPECT_NE(RunTwice(**it), CpuReference(model));
  EXPECT_FALSE((*it)->Partitions(0)[0].fell_back);
}

TEST(DelegationTest, MinPartitionSizeKeepsSmallPartitionsOnKernels) {
  auto model = DiamondModel();
  ASSERT_NE(model, nullptr);
  auto two =
      Interpreter::Create(model, WithTestDelegate("min_partition_size: 2"));
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ((*two)->Partitions(0).size(), 2u);
  auto three =
      Interpreter::Create(model, WithTestDelegate("min_partition_size: 3"));
  ASSERT_TRUE(three.ok()) << three.status();
  EXPECT_TRUE((*three)->Partitions(0).empty());
  EXPECT_EQ((*three)->execution_plan(0).size(), 5u);
  for (int n = 0; n < 5; ++n) EXPECT_FALSE((*three)->IsNodeDelegated(0, n));
  EXPECT_EQ(RunTwice(**three), CpuReference(model));
}

class DelegateFallbackTest : public ::testing::TestWithParam<std::string> {};

TEST_P(DelegateFallbackTest, FailureRunsTheOriginalNodesOnKernels) {
  auto model = DiamondModel();
  ASSERT_NE(model, nullptr);
  // add_bias would make any delegate result differ from the kernels'.
  auto it = Interpreter::Create(
      model, WithTestDelegate("options { key: 'fail_at' value: '" + GetParam() +
                              "' } options { key: 'add_bias' value: '100' }"));
  ASSERT_TRUE(it.ok()) << it.status();
  EXPECT_EQ(RunTwice(**it), CpuReference(model));
  for (const PartitionInfo& p : (*it)->Partitions(0)) {
    EXPECT_TRUE(p.fell_back);
    EXPECT_THAT(p.fallback_reason, HasSubstr("fail_at=" + GetParam()));
  }
  EXPECT_FALSE((*it)->IsNodeDelegated(0, 0));
  ASSERT_FALSE((*it)->warnings().empty());
  EXPECT_THAT((*it)->warnings()[0], HasSubstr("test_delegate"));
}

INSTANTIATE_TEST_SUITE_P(Stages, DelegateFallbackTest,
                         ::testing::Values("init", "prepare", "invoke"));

TEST(DelegationTest, DelegateRefusesOpVersionsItDoesNotSupport) {
  // ADD version 4 is beyond the test delegate's max_version 1: the ADD
  // nodes stay on the CPU kernels; the MUL nodes are delegated.
  auto model = DiamondModel(/*add_version=*/4);
  ASSERT_NE(model, nullptr);
  auto it = Interpreter::Create(model, WithTestDelegate(""));
  ASSERT_TRUE(it.ok()) << it.status();
  EXPECT_FALSE((*it)->IsNodeDelegated(0, 0));
  EXPECT_TRUE((*it)->IsNodeDelegated(0, 1));
  EXPECT_FALSE((*it)->IsNodeDelegated(0, 3));
  EXPECT_TRUE((*it)->IsNodeDelegated(0, 4));
  EXPECT_EQ(RunTwice(**it), CpuReference(model));

  auto newer = Interpreter::Create(
      model, WithTestDelegate("options { key: 'max_version' value: '4' }"));
  ASSERT_TRUE(newer.ok()) << newer.status();
  EXPECT_TRUE((*newer)->IsNodeDelegated(0, 0));
}

TEST(DelegationTest, SdkDeclinesWhatSupportsAcceptsOutsideTheManifest) {
  // max_version=5 makes Supports accept MUL version 5, which the test
  // delegate's manifest (versions 1..4) does not declare: the SDK declines
  // those nodes with the reason, so the host never sees the claim.
  auto model = DiamondModel(/*add_version=*/1, /*mul_version=*/5);
  ASSERT_NE(model, nullptr);
  auto it = Interpreter::Create(
      model, WithTestDelegate("options { key: 'max_version' value: '5' }"));
  ASSERT_TRUE(it.ok()) << it.status();
  EXPECT_TRUE((*it)->IsNodeDelegated(0, 0));
  EXPECT_FALSE((*it)->IsNodeDelegated(0, 1));
  EXPECT_FALSE((*it)->IsNodeDelegated(0, 4));
  EXPECT_EQ((*it)->DelegateDeclineReason(0, 1),
            "test_delegate: Supports() accepted MUL version 5 but the "
            "manifest declares versions 1..4; the delegate's Supports and its "
            "manifest disagree");
  EXPECT_EQ(RunTwice(**it), CpuReference(model));
}

TEST(DelegationTest, UnknownDelegateNameListsTheAvailableOnes) {
  auto model = DiamondModel();
  ASSERT_NE(model, nullptr);
  InterpreterOptions options = WithTestDelegate("");
  options.delegates[0].name = "gpu_magic";
  auto it = Interpreter::Create(model, options);
  ASSERT_FALSE(it.ok());
  EXPECT_EQ(it.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(it.status().message(), HasSubstr("'gpu_magic'"));
  EXPECT_THAT(it.status().message(), HasSubstr("'test_delegate'"));
}

TEST(DelegationTest, TextSettingsErrorsNameTheLine) {
  auto model = DiamondModel();
  ASSERT_NE(model, nullptr);
  auto it = Interpreter::Create(
      model, WithTestDelegate("min_partition_size: 2\nno_such_field: 1"));
  ASSERT_FALSE(it.ok());
  EXPECT_THAT(it.status().message(), HasSubstr("line 2"));
  EXPECT_THAT(it.status().message(), HasSubstr("no_such_field"));
}

TEST(DelegationTest, SerializedSettingsAreChecked) {
  auto model = DiamondModel();
  ASSERT_NE(model, nullptr);
  InterpreterOptions options = WithTestDelegate("");
  options.delegates[0].is_text = false;
  options.delegates[0].settings = std::string("\xff\xff\xff", 3);
  auto it = Interpreter::Create(model, options);
  ASSERT_FALSE(it.ok());
  EXPECT_THAT(it.status().message(), HasSubstr("kiln.DelegateSettings"));
}

TEST(DelegationTest, DelegateCreateFailureFailsCreation) {
  auto model = DiamondModel();
  ASSERT_NE(model, nullptr);
  auto it = Interpreter::Create(
      model, WithTestDelegate("options { key: 'colour' value: 'blue' }"));
  ASSERT_FALSE(it.ok());
  EXPECT_THAT(it.status().message(), HasSubstr("unknown option 'colour'"));
  EXPECT_THAT(it.status().message(), HasSubstr("libtest_delegate.so"));
}

TEST(DelegationTest, UnavailableDelegateIsSkippedWithAWarning) {
  auto model = DiamondModel();
  ASSERT_NE(model, nullptr);
  auto it = Interpreter::Create(
      model,
      WithTestDelegate("options { key: 'fail_at' value: 'unavailable' }"));
  ASSERT_TRUE(it.ok()) << it.status();
  EXPECT_TRUE((*it)->Partitions(0).empty());
  ASSERT_EQ((*it)->warnings().size(), 1u);
  EXPECT_THAT((*it)->warnings()[0], HasSubstr("test device is absent"));
  EXPECT_EQ(RunTwice(**it), CpuReference(model));
}

TEST(DelegationTest, PartitionFailureFailsCreation) {
  auto model = DiamondModel();
  ASSERT_NE(model, nullptr);
  auto it = Interpreter::Create(
      model, WithTestDelegate("options { key: 'fail_at' value: 'partition' }"));
  ASSERT_FALSE(it.ok());
  EXPECT_THAT(it.status().message(), HasSubstr("subgraph 0: partition failed"));
}

// y = x + x over float32 [2, 3] (or `type`), one ADD node.
std::shared_ptr<const Model> SingleAddModel(
    KilnTensorType type = KILN_TYPE_FLOAT32) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  TensorSpec spec = FloatTensor("x", {2, 3});
  spec.type = type;
  const int32_t x = g.AddTensor(spec);
  spec.name = "y";
  const int32_t y = g.AddTensor(spec);
  g.AddOperator(KILN_OP_ADD, 1, {x, x}, {y});
  g.SetInputs({x});
  g.SetOutputs({y});
  auto model = LoadBuilt(builder);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

std::string CTestPlugin(const std::string& variant) {
  return std::string(KILN_TEST_BAD_PLUGIN_DIR) + "/libtest_" + variant + ".so";
}

// The CPU plugin plus the C test plugin `variant` (loader tests' plugin,
// host/src/plugin/test_plugins), whose delegate "test_delegate" claims
// every node.
InterpreterOptions WithClaimingCPlugin(const std::string& variant) {
  InterpreterOptions options = CpuOnlyOptions();
  options.plugins.paths.push_back(CTestPlugin(variant));
  DelegateRequest request;
  request.name = "test_delegate";
  options.delegates.push_back(request);
  return options;
}

TEST(DelegationTest, HostRefusesClaimsOutsideTheDeclaredOps) {
  auto it = Interpreter::Create(DiamondModel(),
                                WithClaimingCPlugin("claims_undeclared"));
  ASSERT_FALSE(it.ok());
  EXPECT_EQ(it.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(
      it.status().message(),
      AllOf(HasSubstr("delegate 'test_delegate' (" +
                      CTestPlugin("claims_undeclared") + ")"),
            HasSubstr("claimed subgraph 0 node 1 (MUL version 1), which its "
                      "declared supported_ops do not cover: no row declares "
                      "MUL")));
}

TEST(DelegationTest, HostRefusesClaimsOfUndeclaredTypes) {
  auto it = Interpreter::Create(SingleAddModel(KILN_TYPE_INT32),
                                WithClaimingCPlugin("claims_undeclared"));
  ASSERT_FALSE(it.ok());
  EXPECT_THAT(it.status().message(),
              HasSubstr("node 0 (ADD version 1), which its declared "
                        "supported_ops do not cover: a tensor of type INT32 "
                        "is outside ADD versions 1..1, types FLOAT32"));
}

TEST(DelegationTest, UndeclaredDelegatesClaimAsBefore) {
  auto it = Interpreter::Create(DiamondModel(),
                                WithClaimingCPlugin("claims_all_undeclared"));
  ASSERT_TRUE(it.ok()) << it.status();
  for (int node = 0; node < 5; ++node) {
    EXPECT_TRUE((*it)->IsNodeDelegated(0, node)) << node;
  }
}

// The test delegate's own settings message, kiln_test.TestDelegateSettings
// {float add_bias = 1}, from a settings file: the host parses it with the
// descriptor set the delegate embeds and hands it over in vendor_settings.
std::vector<float> RunWithSettingsFile(const std::string& name,
                                       const std::string& contents,
                                       absl::Status* created = nullptr) {
  InterpreterOptions options = WithTestDelegate("");
  options.delegates[0].settings_file_name = name;
  options.delegates[0].settings_file = contents;
  auto it = Interpreter::Create(SingleAddModel(), options);
  if (created != nullptr) *created = it.status();
  if (!it.ok()) return {};
  EXPECT_TRUE((*it)->IsNodeDelegated(0, 0));
  return RunTwice(**it);
}

const std::vector<float> kTwiceInputPlus100 = {102, 96, 106, 101, 98, 104};

TEST(DelegationTest, VendorSettingsFromATextFile) {
  EXPECT_EQ(RunWithSettingsFile("bias.txtpb", "add_bias: 100"),
            kTwiceInputPlus100);
  EXPECT_EQ(RunWithSettingsFile("bias", "add_bias: 100\n"), kTwiceInputPlus100);
}

TEST(DelegationTest, VendorSettingsFromABinaryFile) {
  // Field 1, fixed32: 100.0f.
  const std::string bytes("\x0d\x00\x00\xc8\x42", 5);
  EXPECT_EQ(RunWithSettingsFile("bias.binpb", bytes), kTwiceInputPlus100);
  EXPECT_EQ(RunWithSettingsFile("bias", bytes), kTwiceInputPlus100);
}

TEST(DelegationTest, VendorSettingsErrorsNameFileTypeAndForm) {
  absl::Status created;
  RunWithSettingsFile("bias.txtpb", "add_bais: 1", &created);
  EXPECT_EQ(created.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(created.message(),
              AllOf(HasSubstr("delegate 'test_delegate': settings file "
                              "'bias.txtpb' (text, by its extension): not "
                              "valid kiln_test.TestDelegateSettings text "
                              "format: line 1"),
                    HasSubstr("add_bais")));
  RunWithSettingsFile("bias.binpb", "add_bias: 1", &created);
  EXPECT_THAT(created.message(),
              HasSubstr("(binary, by its extension): not a serialized "
                        "kiln_test.TestDelegateSettings"));
}

}  // namespace
}  // namespace kiln
