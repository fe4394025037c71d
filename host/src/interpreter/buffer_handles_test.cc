// Buffer handles (interpreter.h, "Buffer handles") with the test delegate's
// fake device memory (device_memory=true): which copies the host asks for,
// counted through the delegate's log, and results against the CPU kernels.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "interpreter/test_plugins/test_delegate_buffers.h"
#include "interpreter/test_util.h"
#include "kiln/kiln_builtin_ops.h"

namespace kiln {
namespace {

using testing::CpuOnlyOptions;
using ::testing::ElementsAre;
using testing::Fill;
using ::testing::HasSubstr;
using testing::LoadBuilt;
using testing::Read;
using testing::WithTestDelegate;

constexpr const char* kDeviceMemory =
    "options { key: 'device_memory' value: 'true' }";

// One ADD/MUL/SUB node: {code, inputs (names), output name}.
struct Op {
  int32_t code;
  std::vector<const char*> inputs;
  const char* output;
};

// A model over [2, 3] float tensors: input "x", output "y", nodes `ops`.
std::shared_ptr<const Model> BuildModel(const std::vector<Op>& ops) {
  ModelBuilder builder;
  SubgraphBuilder& g = builder.AddSubgraph("main");
  std::map<std::string, int32_t> tensors;
  auto tensor = [&](const char* name) {
    auto it = tensors.find(name);
    if (it != tensors.end()) return it->second;
    TensorSpec s;
    s.name = name;
    s.shape = {2, 3};
    return tensors[name] = g.AddTensor(s);
  };
  tensor("x");
  for (const Op& op : ops) {
    std::vector<int32_t> inputs;
    for (const char* name : op.inputs) inputs.push_back(tensor(name));
    g.AddOperator(op.code, 1, inputs, {tensor(op.output)});
  }
  g.SetInputs({tensors["x"]});
  g.SetOutputs({tensors["y"]});
  auto model = LoadBuilt(builder);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

// x -> ADD [partition 1] -> a -> SUB (CPU kernel) -> c -> ADD [partition 2]
std::shared_ptr<const Model> ChainModel() {
  return BuildModel({{KILN_OP_ADD, {"x", "x"}, "a"},
                     {KILN_OP_SUB, {"a", "x"}, "c"},
                     {KILN_OP_ADD, {"c", "c"}, "y"}});
}

// t1 = x + x; t0 = t1 * t1 [partition 1]; t2 = t0 - x (CPU kernel);
// y = t1 + t2 [partition 2]: t1 goes from partition 1 straight to
// partition 2, which the SUB between them forces apart.
std::shared_ptr<const Model> AdjacentModel() {
  return BuildModel({{KILN_OP_ADD, {"x", "x"}, "t1"},
                     {KILN_OP_MUL, {"t1", "t1"}, "t0"},
                     {KILN_OP_SUB, {"t0", "x"}, "t2"},
                     {KILN_OP_ADD, {"t1", "t2"}, "y"}});
}

// y = (x + x) * (x + x), all on the delegate.
std::shared_ptr<const Model> DelegatedModel() {
  return BuildModel(
      {{KILN_OP_ADD, {"x", "x"}, "a"}, {KILN_OP_MUL, {"a", "a"}, "y"}});
}

std::vector<float> Input(int round) {
  return {1.f + round, -2, 3, 0.5f, -1.f * round, 2};
}

// The CPU kernels' output for Input(round): the oracle.
std::vector<float> CpuOutput(const std::shared_ptr<const Model>& model,
                             int round) {
  auto it = Interpreter::Create(model, CpuOnlyOptions());
  EXPECT_TRUE(it.ok()) << it.status();
  if (!it.ok() || !(*it)->AllocateTensors().ok()) return {};
  Fill((*it)->input(0), Input(round));
  EXPECT_TRUE((*it)->Invoke().ok());
  return Read<float>((*it)->output(0));
}

std::unique_ptr<Interpreter> Create(const std::shared_ptr<const Model>& model,
                                    const std::string& settings) {
  auto it = Interpreter::Create(model, WithTestDelegate(settings));
  EXPECT_TRUE(it.ok()) << it.status();
  if (!it.ok()) return nullptr;
  EXPECT_TRUE((*it)->AllocateTensors().ok());
  return *std::move(it);
}

const KilnTestDelegateBuffers* Buffers(const Interpreter& it, void** delegate) {
  auto found =
      it.DelegateExtension("test_delegate", KILN_TEST_DELEGATE_BUFFERS_ID);
  EXPECT_TRUE(found.ok()) << found.status();
  if (!found.ok()) return nullptr;
  *delegate = found->first;
  return reinterpret_cast<const KilnTestDelegateBuffers*>(found->second);
}

// The delegate's log of copies since the last call, then cleared.
std::string TakeLog(const Interpreter& it) {
  void* delegate = nullptr;
  const KilnTestDelegateBuffers* b = Buffers(it, &delegate);
  if (b == nullptr) return "?";
  std::string log = b->copy_log(delegate);
  b->clear_copy_log(delegate);
  return log;
}

TEST(BufferHandlesTest, KernelBetweenPartitionsGetsOneCopyToHost) {
  auto model = ChainModel();
  ASSERT_NE(model, nullptr);
  auto it = Create(model, kDeviceMemory);
  ASSERT_NE(it, nullptr);
  ASSERT_EQ(it->Partitions(0).size(), 2u);
  for (int round = 0; round < 3; ++round) {
    Fill(it->input(0), Input(round));
    KILN_ASSERT_OK(it->Invoke());
    // The SUB kernel reads a; y stays on the device until read.
    EXPECT_EQ(TakeLog(*it), "from a\n") << "round " << round;
    EXPECT_EQ(Read<float>(it->output(0)), CpuOutput(model, round));
    EXPECT_EQ(TakeLog(*it), "from y\n");
    EXPECT_EQ(Read<float>(it->output(0)), CpuOutput(model, round));
    EXPECT_EQ(TakeLog(*it), "") << "the second read copies again";
  }
}

TEST(BufferHandlesTest, AdjacentPartitionsPassTheTensorOnTheDevice) {
  auto model = AdjacentModel();
  ASSERT_NE(model, nullptr);
  auto it = Create(model, kDeviceMemory);
  ASSERT_NE(it, nullptr);
  const std::vector<PartitionInfo> parts = it->Partitions(0);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_THAT(parts[0].delegated_nodes, ElementsAre(0, 1));
  EXPECT_THAT(parts[1].delegated_nodes, ElementsAre(3));
  for (int round = 0; round < 3; ++round) {
    Fill(it->input(0), Input(round));
    KILN_ASSERT_OK(it->Invoke());
    // Only t0, for the SUB kernel: t1 never leaves the device.
    EXPECT_EQ(TakeLog(*it), "from t0\n") << "round " << round;
    EXPECT_EQ(Read<float>(it->output(0)), CpuOutput(model, round));
    EXPECT_EQ(TakeLog(*it), "from y\n");
  }
}

TEST(BufferHandlesTest, PartitionFallingBackReadsTheDeviceValueFirst) {
  auto model = AdjacentModel();
  ASSERT_NE(model, nullptr);
  // Partition 2 (node 3) fails at invoke: its ADD kernel reads t1, which
  // only partition 1's device buffer holds.
  auto it = Create(model, std::string(kDeviceMemory) +
                              " options { key: 'fail_node' value: '3' }");
  ASSERT_NE(it, nullptr);
  for (int round = 0; round < 2; ++round) {
    Fill(it->input(0), Input(round));
    KILN_ASSERT_OK(it->Invoke());
    EXPECT_EQ(Read<float>(it->output(0)), CpuOutput(model, round))
        << "round " << round;
  }
  EXPECT_TRUE(it->Partitions(0)[1].fell_back);
  EXPECT_THAT(TakeLog(*it), HasSubstr("from t1\n"));
}

TEST(BufferHandlesTest, ApplicationBuffersNeedNoHostCopy) {
  auto model = DelegatedModel();
  ASSERT_NE(model, nullptr);
  auto it = Create(model, kDeviceMemory);
  ASSERT_NE(it, nullptr);
  void* delegate = nullptr;
  const KilnTestDelegateBuffers* b = Buffers(*it, &delegate);
  ASSERT_NE(b, nullptr);
  const int64_t in = b->create_buffer(delegate, 6);
  const int64_t out = b->create_buffer(delegate, 6);
  KILN_ASSERT_OK(it->SetTensorBufferHandle(it->input(0), "test_delegate", in));
  KILN_ASSERT_OK(it->SetTensorBufferHandle(
      it->raw_tensor(0, model->graph(0).outputs[0]), "test_delegate", out));
  for (int round = 0; round < 3; ++round) {
    const std::vector<float> x = Input(round);
    std::copy(x.begin(), x.end(), b->buffer_data(delegate, in));
    KILN_ASSERT_OK(it->Invoke());
    EXPECT_EQ(TakeLog(*it), "") << "round " << round;
    const float* y = b->buffer_data(delegate, out);
    EXPECT_EQ(std::vector<float>(y, y + 6), CpuOutput(model, round));
  }
  // Reading through the accessor copies once, then the host data is current.
  EXPECT_EQ(Read<float>(it->output(0)), CpuOutput(model, 2));
  EXPECT_EQ(TakeLog(*it), "from y\n");
}

TEST(BufferHandlesTest, ApplicationOutputIsWrittenEvenWhenThePartitionFails) {
  auto model = DelegatedModel();
  ASSERT_NE(model, nullptr);
  auto it = Create(model, std::string(kDeviceMemory) +
                              " options { key: 'fail_node' value: '0' }");
  ASSERT_NE(it, nullptr);
  void* delegate = nullptr;
  const KilnTestDelegateBuffers* b = Buffers(*it, &delegate);
  ASSERT_NE(b, nullptr);
  const int64_t in = b->create_buffer(delegate, 6);
  const int64_t out = b->create_buffer(delegate, 6);
  KILN_ASSERT_OK(it->SetTensorBufferHandle(it->input(0), "test_delegate", in));
  KILN_ASSERT_OK(it->SetTensorBufferHandle(
      it->raw_tensor(0, model->graph(0).outputs[0]), "test_delegate", out));
  const std::vector<float> x = Input(1);
  std::copy(x.begin(), x.end(), b->buffer_data(delegate, in));
  KILN_ASSERT_OK(it->Invoke());
  // The kernels read x from the application's buffer and the result goes
  // back into the application's buffer.
  EXPECT_EQ(TakeLog(*it), "from x\nto y\n");
  const float* y = b->buffer_data(delegate, out);
  EXPECT_EQ(std::vector<float>(y, y + 6), CpuOutput(model, 1));
}

TEST(BufferHandlesTest, AllocateTensorsReleasesOnlyPartitionHandles) {
  auto model = ChainModel();
  ASSERT_NE(model, nullptr);
  auto it = Create(model, kDeviceMemory);
  ASSERT_NE(it, nullptr);
  void* delegate = nullptr;
  const KilnTestDelegateBuffers* b = Buffers(*it, &delegate);
  ASSERT_NE(b, nullptr);
  const int64_t in = b->create_buffer(delegate, 6);
  KILN_ASSERT_OK(it->SetTensorBufferHandle(it->input(0), "test_delegate", in));
  Fill(it->input(0), Input(0));  // not seen: the buffer holds x
  const std::vector<float> x = Input(1);
  std::copy(x.begin(), x.end(), b->buffer_data(delegate, in));
  KILN_ASSERT_OK(it->Invoke());
  // The SUB kernel reads a and x.
  EXPECT_EQ(TakeLog(*it), "from a\nfrom x\n");
  KILN_ASSERT_OK(it->AllocateTensors());
  // a and y were bound by the partitions; x stays bound.
  EXPECT_EQ(TakeLog(*it), "free\nfree\n");
  // The new host memory of x is refilled from the buffer before SUB.
  KILN_ASSERT_OK(it->Invoke());
  EXPECT_EQ(TakeLog(*it), "from a\nfrom x\n");
  EXPECT_EQ(Read<float>(it->output(0)), CpuOutput(model, 1));
}

TEST(BufferHandlesTest, BindingIsRefusedWithAReason) {
  auto model = ChainModel();
  ASSERT_NE(model, nullptr);
  auto it = Create(model, kDeviceMemory);
  ASSERT_NE(it, nullptr);
  absl::Status s = it->SetTensorBufferHandle(it->input(0), "gpu", 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("active: 'test_delegate'"));
  s = it->SetTensorBufferHandle(it->raw_tensor(0, 1), "test_delegate", 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("only inputs and outputs"));
  TensorState foreign;
  s = it->SetTensorBufferHandle(&foreign, "test_delegate", 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
}

TEST(BufferHandlesTest, HostServingOnly1_1GetsNoBuffersButTheSameResults) {
  auto model = ChainModel();
  ASSERT_NE(model, nullptr);
  InterpreterOptions options = WithTestDelegate(kDeviceMemory);
  options.plugins.max_abi_version = KILN_MAKE_VERSION(1, 1, 0);
  auto it = Interpreter::Create(model, options);
  ASSERT_TRUE(it.ok()) << it.status();
  KILN_ASSERT_OK((*it)->AllocateTensors());
  Fill((*it)->input(0), Input(2));
  KILN_ASSERT_OK((*it)->Invoke());
  EXPECT_EQ(Read<float>((*it)->output(0)), CpuOutput(model, 2));
  const absl::Status s =
      (*it)->SetTensorBufferHandle((*it)->input(0), "test_delegate", 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("does not implement buffer handles"));
}

}  // namespace
}  // namespace kiln
