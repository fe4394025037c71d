// Limits for untrusted models (issue 10): tensor sizes against
// max_arena_bytes, allocation failures as errors, WHILE iteration budget,
// invoke timeout and cancellation from another thread.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "interpreter/test_util.h"
#include "kiln/kiln_builtin_ops.h"
#include "model/example_models.h"

namespace kiln {
namespace {

using testing::CpuOnlyOptions;
using ::testing::ElementsAre;
using testing::Fill;
using ::testing::HasSubstr;
using testing::LoadBuilt;
using testing::Read;

std::shared_ptr<const Model> Built(const ModelBuilder& b) {
  auto model = LoadBuilt(b);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

// x -> ADD(x,x)=a -> ADD(a,a)=y, all float32 of `shape`.
std::shared_ptr<const Model> TwoAdds(std::vector<int32_t> shape) {
  ModelBuilder b;
  SubgraphBuilder& g = b.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", shape));
  const int32_t a = g.AddTensor(FloatTensor("a", shape));
  const int32_t y = g.AddTensor(FloatTensor("y", shape));
  g.AddOperator(KILN_OP_ADD, 1, {x, x}, {a});
  g.AddOperator(KILN_OP_ADD, 1, {a, a}, {y});
  g.SetInputs({x});
  g.SetOutputs({y});
  return Built(b);
}

InterpreterOptions WithMaxArenaBytes(uint64_t bytes) {
  InterpreterOptions options = CpuOnlyOptions();
  options.max_arena_bytes = bytes;
  return options;
}

// Issue 10: `kiln run` wrote random values into a constant input, i.e. into
// the read-only model mapping (SIGSEGV).
TEST(LimitsTest, ConstantInputIsRefusedAtCreation) {
  ModelBuilder b;
  SubgraphBuilder& g = b.AddSubgraph("main");
  const int32_t c = g.AddConstantTensor(FloatTensor("c", {4}),
                                        std::vector<float>{1, 2, 3, 4});
  const int32_t y = g.AddTensor(FloatTensor("y", {4}));
  g.AddOperator(KILN_OP_RELU, 1, {c}, {y});
  g.SetInputs({c});
  g.SetOutputs({y});
  auto bytes = b.BuildUnchecked();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto model = testing::LoadBytes(*bytes, "constant_input.tflite");
  ASSERT_TRUE(model.ok()) << model.status();
  auto interp = Interpreter::Create(*model, CpuOnlyOptions());
  ASSERT_FALSE(interp.ok());
  EXPECT_EQ(interp.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(interp.status().message(),
              HasSubstr("model 'constant_input.tflite': subgraph 0 ('main'): "
                        "input 0 is tensor 0 ('c'), a constant"));
}

TEST(LimitsTest, DefaultMaxArenaBytesIs4GiB) {
  EXPECT_EQ(InterpreterOptions().max_arena_bytes, uint64_t{4} << 30);
}

TEST(LimitsTest, DeclaredShapeOverTheLimitIsRefusedAtCreation) {
  auto model = TwoAdds({256, 1024});  // 1 MiB per tensor
  ASSERT_NE(model, nullptr);
  auto interp = Interpreter::Create(model, WithMaxArenaBytes(1 << 19));
  ASSERT_FALSE(interp.ok());
  EXPECT_EQ(interp.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(interp.status().message(),
              HasSubstr("subgraph 0 tensor 0 'x' with shape [256,1024] of "
                        "FLOAT32 needs 1048576 bytes, more than the limit of "
                        "524288 bytes"));
  EXPECT_THAT(interp.status().message(), HasSubstr("--max-arena-bytes"));
  EXPECT_TRUE(Interpreter::Create(model, WithMaxArenaBytes(1 << 20)).ok());
}

// Before: 8 GiB passed ResizeInput and AllocateTensors aborted on
// std::bad_alloc (or allocated it).
TEST(LimitsTest, ResizeOverTheDefaultLimitIsRefused) {
  auto model = TwoAdds({1, 4});
  ASSERT_NE(model, nullptr);
  auto interp = Interpreter::Create(model, CpuOnlyOptions());
  ASSERT_TRUE(interp.ok()) << interp.status();
  const absl::Status s = (*interp)->ResizeInput(0, {1 << 20, 1 << 11});
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(),
              HasSubstr("ResizeInput: input 0 of subgraph 0 'x' with shape "
                        "[1048576,2048] of FLOAT32 needs 8589934592 bytes, "
                        "more than the limit of 4294967296 bytes"));
  // An element count that wraps around int64.
  EXPECT_EQ((*interp)->ResizeInput(0, {65536, 65536, 65536, 65536}).code(),
            absl::StatusCode::kResourceExhausted);
  // The interpreter is unchanged and still runs.
  KILN_ASSERT_OK((*interp)->AllocateTensors());
  Fill((*interp)->input(0), std::vector<float>{1, 2, 3, 4});
  KILN_ASSERT_OK((*interp)->Invoke());
  EXPECT_THAT(Read<float>((*interp)->output(0)), ElementsAre(4, 8, 12, 16));
}

TEST(LimitsTest, ArenaOverTheLimitIsRefusedAtAllocateTensors) {
  // x, a and y are 1 KiB each; x and y live throughout and a overlaps both:
  // the arena needs 3 KiB.
  auto model = TwoAdds({1, 256});
  ASSERT_NE(model, nullptr);
  auto interp = Interpreter::Create(model, WithMaxArenaBytes(2048));
  ASSERT_TRUE(interp.ok()) << interp.status();
  const absl::Status s = (*interp)->AllocateTensors();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("AllocateTensors of subgraph 0 needs an "
                                     "arena of 3072 bytes"));
  EXPECT_THAT(s.message(), HasSubstr("more than the limit of 2048 bytes"));
  EXPECT_EQ((*interp)->Invoke().code(), absl::StatusCode::kFailedPrecondition);
}

// TILE of a [1,1,1,1] tensor by constant multiples: the kernel sizes its
// output from model data.
std::shared_ptr<const Model> TileModel(int32_t multiple) {
  ModelBuilder b;
  SubgraphBuilder& g = b.AddSubgraph("main");
  const int32_t x = g.AddTensor(FloatTensor("x", {1, 1, 1, 1}));
  TensorSpec ms;
  ms.name = "multiples";
  ms.type = KILN_TYPE_INT32;
  ms.shape = {4};
  const int32_t m = g.AddConstantTensor(ms, std::vector<int32_t>(4, multiple));
  const int32_t y = g.AddTensor(FloatTensor("y", {1, 1, 1, 1}));
  g.AddOperator(KILN_OP_TILE, 1, {x, m}, {y});
  g.SetInputs({x});
  g.SetOutputs({y});
  return Built(b);
}

TEST(LimitsTest, KernelOutputOverTheLimitIsRefused) {
  auto model = TileModel(1024);  // 2^40 floats
  ASSERT_NE(model, nullptr);
  auto interp = Interpreter::Create(model, CpuOnlyOptions());
  ASSERT_TRUE(interp.ok()) << interp.status();
  const absl::Status s = (*interp)->AllocateTensors();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  // Refused by the host's tensor_resize, while the kernel sizes it (before:
  // only when the arena was planned, after the kernel's prepare had run on
  // the huge shape).
  EXPECT_THAT(s.message(),
              HasSubstr("tensor_resize: shape [1024,1024,1024,1024] for "
                        "tensor 'y' needs 4398046511104 bytes, more than the "
                        "limit of 4294967296 bytes"));
  EXPECT_THAT(s.message(), HasSubstr("TILE"));
}

TEST(LimitsTest, KernelOutputOverALowLimitIsRefusedByTensorResize) {
  auto model = TileModel(64);  // 2^24 floats, 64 MiB
  ASSERT_NE(model, nullptr);
  auto interp = Interpreter::Create(model, WithMaxArenaBytes(1 << 20));
  ASSERT_TRUE(interp.ok()) << interp.status();
  const absl::Status s = (*interp)->AllocateTensors();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(),
              HasSubstr("tensor_resize: shape [64,64,64,64] for tensor 'y' "
                        "needs 67108864 bytes, more than the limit of "
                        "1048576 bytes"));
  auto roomy = Interpreter::Create(model, WithMaxArenaBytes(1 << 27));
  ASSERT_TRUE(roomy.ok()) << roomy.status();
  KILN_ASSERT_OK((*roomy)->AllocateTensors());
}

// Before: the element count wrapped to 0 and AllocateTensors "succeeded".
TEST(LimitsTest, KernelOutputWhoseSizeOverflowsIsRefused) {
  auto model = TileModel(65536);
  ASSERT_NE(model, nullptr);
  auto interp = Interpreter::Create(model, CpuOnlyOptions());
  ASSERT_TRUE(interp.ok()) << interp.status();
  const absl::Status s = (*interp)->AllocateTensors();
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("tensor_resize: shape "
                                     "[65536,65536,65536,65536] for tensor "
                                     "'y' has more bytes than fit in 64 bits"));
}

// With the limit lifted, memory the system cannot give is an error, not an
// abort (std::bad_alloc / std::length_error caught).
TEST(LimitsTest, AllocationFailureIsAnError) {
  ModelBuilder b;
  SubgraphBuilder& g = b.AddSubgraph("main");
  // 2^58 bytes, passed through: the arena holds it.
  const int32_t x = g.AddTensor(FloatTensor("x", {1 << 30, 1 << 26}));
  g.SetInputs({x});
  g.SetOutputs({x});
  auto model = Built(b);
  ASSERT_NE(model, nullptr);
  auto interp = Interpreter::Create(model, WithMaxArenaBytes(UINT64_MAX));
  ASSERT_TRUE(interp.ok()) << interp.status();
  const absl::Status s = (*interp)->AllocateTensors();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("AllocateTensors ran out of memory"));
}

// ---- WHILE budget, timeout and cancellation ----

std::shared_ptr<const Model> Loaded(
    const absl::StatusOr<std::vector<uint8_t>>& bytes) {
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  if (!bytes.ok()) return nullptr;
  auto model = testing::LoadBytes(*bytes, "while.tflite");
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

std::shared_ptr<const Model> CountingWhile() {
  return Loaded(BuildCountingWhileModel());
}

// Loops forever for a true input, ends at once for false.
std::shared_ptr<const Model> WhileFlag() {
  return Loaded(BuildWhileLoopModel(/*forever=*/false));
}

TEST(LimitsTest, MaxWhileIterations) {
  auto model = CountingWhile();
  ASSERT_NE(model, nullptr);
  InterpreterOptions options = CpuOnlyOptions();
  options.max_while_iterations = 10;
  auto interp = Interpreter::Create(model, options);
  ASSERT_TRUE(interp.ok()) << interp.status();
  Interpreter& it = **interp;
  KILN_ASSERT_OK(it.AllocateTensors());
  Fill(it.input(0), std::vector<int32_t>{0});
  Fill(it.input(1), std::vector<int32_t>{10});
  KILN_ASSERT_OK(it.Invoke());
  EXPECT_THAT(Read<int32_t>(it.output(0)), ElementsAre(10));
  Fill(it.input(1), std::vector<int32_t>{11});
  const absl::Status s = it.Invoke();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("subgraph 0 ('main') node 0 (WHILE "
                                     "version 1, host-intrinsic) would run "
                                     "more than 10 iterations"));
  // Usable afterwards.
  Fill(it.input(1), std::vector<int32_t>{3});
  KILN_ASSERT_OK(it.Invoke());
  EXPECT_THAT(Read<int32_t>(it.output(0)), ElementsAre(3));
}

TEST(LimitsTest, InvokeTimeoutStopsAnEndlessWhile) {
  auto model = WhileFlag();
  ASSERT_NE(model, nullptr);
  InterpreterOptions options = CpuOnlyOptions();
  options.invoke_timeout = std::chrono::milliseconds(50);
  auto interp = Interpreter::Create(model, options);
  ASSERT_TRUE(interp.ok()) << interp.status();
  KILN_ASSERT_OK((*interp)->AllocateTensors());
  Fill((*interp)->input(0), std::vector<uint8_t>{1});
  const auto start = std::chrono::steady_clock::now();
  const absl::Status s = (*interp)->Invoke();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(s.message(), HasSubstr("exceeded its timeout of 0.05 s"));
  EXPECT_THAT(s.message(), HasSubstr("node 0 (WHILE version 1"));
  // A terminating input runs within the timeout.
  Fill((*interp)->input(0), std::vector<uint8_t>{0});
  KILN_ASSERT_OK((*interp)->Invoke());
}

// Cancel() from another thread, repeated until the Invoke returns (a
// Cancel before the Invoke starts does not count).
absl::Status InvokeAndCancel(Interpreter& it) {
  std::atomic<bool> done{false};
  std::thread canceller([&] {
    while (!done.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      it.Cancel();
    }
  });
  const absl::Status s = it.Invoke();
  done.store(true);
  canceller.join();
  return s;
}

TEST(LimitsTest, CancelStopsAnEndlessWhile) {
  auto model = WhileFlag();
  ASSERT_NE(model, nullptr);
  auto interp = Interpreter::Create(model, CpuOnlyOptions());
  ASSERT_TRUE(interp.ok()) << interp.status();
  KILN_ASSERT_OK((*interp)->AllocateTensors());
  Fill((*interp)->input(0), std::vector<uint8_t>{1});
  const absl::Status s = InvokeAndCancel(**interp);
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(s.message(), HasSubstr("Invoke cancelled"));
  EXPECT_THAT(s.message(), HasSubstr("node 0 (WHILE version 1"));
}

TEST(LimitsTest, InterpreterRunsAgainAfterCancel) {
  auto model = CountingWhile();
  ASSERT_NE(model, nullptr);
  auto interp = Interpreter::Create(model, CpuOnlyOptions());
  ASSERT_TRUE(interp.ok()) << interp.status();
  Interpreter& it = **interp;
  KILN_ASSERT_OK(it.AllocateTensors());
  Fill(it.input(0), std::vector<int32_t>{0});
  Fill(it.input(1), std::vector<int32_t>{INT32_MAX});
  EXPECT_EQ(InvokeAndCancel(it).code(), absl::StatusCode::kCancelled);
  // A Cancel while nothing runs does not affect the next Invoke.
  it.Cancel();
  Fill(it.input(1), std::vector<int32_t>{5});
  KILN_ASSERT_OK(it.Invoke());
  EXPECT_THAT(Read<int32_t>(it.output(0)), ElementsAre(5));
}

}  // namespace
}  // namespace kiln
