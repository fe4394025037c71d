// Op-version coverage of the elementwise kernels, and their behaviour on a
// host capped at extension API 1.0 (no tensor_quantization).
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugin/plugin_loader.h"
#include "runtime/single_node_runner.h"
#include "tests/elementwise_test_util.h"

namespace kiln {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct ExpectedVersions {
  int32_t code;
  const char* name;
  std::vector<int32_t> covered;
  std::vector<int32_t> not_covered;
};

TEST_F(CpuKernelTest, ElementwiseOpVersionCoverage) {
  const std::vector<ExpectedVersions> table = {
      {KILN_OP_ADD, "ADD", {1, 2, 3, 4}, {5, 6}},
      {KILN_OP_SUB, "SUB", {1, 2, 3, 4, 5}, {6}},
      {KILN_OP_MUL, "MUL", {1, 2, 3, 4, 5}, {6, 7}},
      {KILN_OP_DIV, "DIV", {1, 2}, {3}},
      {KILN_OP_SQUARED_DIFFERENCE, "SQUARED_DIFFERENCE", {1, 2}, {3}},
      {KILN_OP_MAXIMUM, "MAXIMUM", {1, 2, 3, 4}, {5}},
      {KILN_OP_MINIMUM, "MINIMUM", {1, 2, 3, 4}, {5}},
      {KILN_OP_POW, "POW", {1}, {2}},
      {KILN_OP_FLOOR_DIV, "FLOOR_DIV", {1, 2, 3}, {4}},
      {KILN_OP_FLOOR_MOD, "FLOOR_MOD", {1, 2}, {3}},
      {KILN_OP_ATAN2, "ATAN2", {1}, {2}},
      {KILN_OP_LESS, "LESS", {1, 2, 3}, {4}},
      {KILN_OP_LESS_EQUAL, "LESS_EQUAL", {1, 2}, {3}},
      {KILN_OP_GREATER, "GREATER", {1, 2}, {3}},
      {KILN_OP_GREATER_EQUAL, "GREATER_EQUAL", {1, 2, 3}, {4}},
      {KILN_OP_EQUAL, "EQUAL", {1, 2, 4}, {3, 5}},
      {KILN_OP_NOT_EQUAL, "NOT_EQUAL", {1, 2}, {3}},
      {KILN_OP_LOGICAL_AND, "LOGICAL_AND", {1}, {2}},
      {KILN_OP_LOGICAL_OR, "LOGICAL_OR", {1}, {2}},
      {KILN_OP_LOGICAL_NOT, "LOGICAL_NOT", {1}, {2}},
      {KILN_OP_SELECT_V2, "SELECT_V2", {1}, {2}},
      {KILN_OP_ABS, "ABS", {1, 2, 3, 4, 5}, {6}},
      {KILN_OP_NEG, "NEG", {1}, {2}},
      {KILN_OP_EXP, "EXP", {1, 2}, {3}},
      {KILN_OP_LOG, "LOG", {1, 2}, {3}},
      {KILN_OP_SQRT, "SQRT", {1}, {2}},
      {KILN_OP_RSQRT, "RSQRT", {1, 2, 3}, {4}},
      {KILN_OP_SQUARE, "SQUARE", {1}, {2}},
      {KILN_OP_SIN, "SIN", {1}, {2}},
      {KILN_OP_COS, "COS", {1}, {2}},
      {KILN_OP_TANH, "TANH", {1, 2}, {3}},
      {KILN_OP_LOGISTIC, "LOGISTIC", {1, 2}, {3}},
      {KILN_OP_RELU, "RELU", {1, 2, 3}, {4}},
      {KILN_OP_RELU6, "RELU6", {1, 2, 3}, {4}},
      {KILN_OP_RELU_N1_TO_1, "RELU_N1_TO_1", {1}, {2}},
      {KILN_OP_RELU_0_TO_1, "RELU_0_TO_1", {1}, {2}},
      {KILN_OP_ELU, "ELU", {1}, {2}},
      {KILN_OP_LEAKY_RELU, "LEAKY_RELU", {1, 2}, {3}},
      {KILN_OP_PRELU, "PRELU", {1}, {2}},
      {KILN_OP_HARD_SWISH, "HARD_SWISH", {1}, {2}},
      {KILN_OP_GELU, "GELU", {1, 2}, {3}},
      {KILN_OP_FLOOR, "FLOOR", {1}, {2}},
      {KILN_OP_CEIL, "CEIL", {1}, {2}},
      {KILN_OP_ROUND, "ROUND", {1}, {2}},
      {KILN_OP_SIGN, "SIGN", {1, 2}, {3}},
      {KILN_OP_CAST, "CAST", {1, 2, 3, 4, 5}, {6, 7}},
      {KILN_OP_QUANTIZE, "QUANTIZE", {1, 2, 3}, {4}},
      {KILN_OP_DEQUANTIZE, "DEQUANTIZE", {1, 2, 3, 5}, {4, 6}},
  };
  for (const ExpectedVersions& op : table) {
    EXPECT_FALSE(Covers(op.code, 0)) << op.name << " v0";
    for (int32_t v : op.covered) {
      EXPECT_TRUE(Covers(op.code, v)) << op.name << " v" << v;
    }
    for (int32_t v : op.not_covered) {
      EXPECT_FALSE(Covers(op.code, v)) << op.name << " v" << v;
    }
  }
}

TEST_F(CpuKernelTest, LoaderContractAddAndMulStartAtVersionOne) {
  bool add = false, mul = false;
  for (const KilnKernel* k : plugin_->kernels()) {
    add |= k->builtin_code == KILN_OP_ADD && k->min_version == 1;
    mul |= k->builtin_code == KILN_OP_MUL && k->min_version == 1;
  }
  EXPECT_TRUE(add);
  EXPECT_TRUE(mul);
}

// The CPU plugin loaded by a host that serves only extension API 1.0. The
// library is a private copy so that its SDK host-table slot does not replace
// the one of the suite's plugin (dlopen shares one instance per file).
class OldHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::filesystem::path dir =
        std::filesystem::path(::testing::TempDir()) /
        ("kiln_cpu_v1_0_" + std::to_string(::getpid()));
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    copy_ = (dir / "libkiln_cpu.so").string();
    std::filesystem::copy_file(
        std::string(KILN_TEST_PLUGIN_DIR) + "/libkiln_cpu.so", copy_,
        std::filesystem::copy_options::overwrite_existing, ec);
    ASSERT_FALSE(ec) << ec.message();
    auto offer = PluginLoader::MakeOffer(KILN_MAKE_VERSION(1, 0, 0));
    ASSERT_TRUE(offer.ok()) << offer.status();
    auto plugin = PluginLoader::Load(copy_, *offer);
    ASSERT_TRUE(plugin.ok()) << plugin.status();
    plugin_ = *plugin;
  }
  void TearDown() override {
    plugin_.reset();
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::path(copy_).parent_path(), ec);
  }

  std::string copy_;
  std::shared_ptr<LoadedPlugin> plugin_;
};

TEST_F(OldHostTest, QuantizationOpsReportMissingHostFunction) {
  ASSERT_EQ(plugin_->negotiated_version(), KILN_MAKE_VERSION(1, 0, 0));
  const KilnKernel* dequantize = FindKernel(*plugin_, KILN_OP_DEQUANTIZE, 2);
  ASSERT_NE(dequantize, nullptr);
  SingleNodeRunner r;
  const std::vector<int8_t> q = {1, 2};
  const int in = r.AddTensor<int8_t>(KILN_TYPE_INT8, {2}, q);
  r.tensor(in).quantization.scales = {0.5f};
  r.tensor(in).quantization.zero_points = {0};
  const int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_DEQUANTIZE, 2, {in}, {out});
  const absl::Status s = r.Run(*dequantize);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(s.message()),
              AllOf(HasSubstr("prepare failed"),
                    HasSubstr("needs a host serving extension API 1.1 "
                              "(KilnHostApi.tensor_quantization)"),
                    HasSubstr("this host serves 1.0")));

  const KilnKernel* quantize = FindKernel(*plugin_, KILN_OP_QUANTIZE, 1);
  ASSERT_NE(quantize, nullptr);
  SingleNodeRunner rq;
  const int fin = rq.AddTensor<float>(KILN_TYPE_FLOAT32, {1}, {1.f});
  const int qout = rq.AddTensor(KILN_TYPE_INT8, {});
  rq.tensor(qout).quantization.scales = {1.f};
  rq.tensor(qout).quantization.zero_points = {0};
  rq.SetOp(KILN_OP_QUANTIZE, 1, {fin}, {qout});
  const absl::Status sq = rq.Run(*quantize);
  ASSERT_FALSE(sq.ok());
  EXPECT_THAT(std::string(sq.message()),
              HasSubstr("KilnHostApi.tensor_quantization"));
}

TEST_F(OldHostTest, Float16DequantizeAndArithmeticStillRun) {
  const KilnKernel* dequantize = FindKernel(*plugin_, KILN_OP_DEQUANTIZE, 3);
  ASSERT_NE(dequantize, nullptr);
  SingleNodeRunner r;
  const std::vector<uint16_t> half = {0x3C00, 0xC100};
  const int in = r.AddTensor<uint16_t>(KILN_TYPE_FLOAT16, {2}, half, true);
  const int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_DEQUANTIZE, 3, {in}, {out});
  ASSERT_TRUE(r.Run(*dequantize).ok());
  EXPECT_THAT(r.Values<float>(out), ElementsAre(1.f, -2.5f));

  const KilnKernel* add = FindKernel(*plugin_, KILN_OP_ADD, 1);
  ASSERT_NE(add, nullptr);
  SingleNodeRunner ra;
  const int a = ra.AddTensor<float>(KILN_TYPE_FLOAT32, {2}, {1.f, 2.f});
  const int b = ra.AddTensor<float>(KILN_TYPE_FLOAT32, {}, {10.f});
  const int sum = ra.AddTensor(KILN_TYPE_FLOAT32, {});
  ra.SetOp(KILN_OP_ADD, 1, {a, b}, {sum});
  ASSERT_TRUE(ra.Run(*add).ok());
  EXPECT_THAT(ra.Values<float>(sum), ElementsAre(11.f, 12.f));
}

}  // namespace
}  // namespace kiln
