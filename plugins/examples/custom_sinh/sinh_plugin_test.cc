// The example 'Sinh' custom-op plugin, loaded from the build tree and run
// through the real extension API.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flatbuffers/flexbuffers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/single_node_runner.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The custom options exactly as stored in tflite-testdata/custom_sinh.bin
// (a FlexBuffers map {"T": 0}).
const std::vector<uint8_t> kModelOptions = {0x54, 0x00, 0x01, 0x03, 0x01, 0x01,
                                            0x01, 0x00, 0x04, 0x02, 0x24, 0x01};

class SinhPluginTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto p = LoadPluginForTest(std::string(KILN_TEST_PLUGIN_DIR) +
                               "/libexample_sinh.so");
    ASSERT_TRUE(p.ok()) << p.status();
    plugin_ = *p;
  }
  static void TearDownTestSuite() { plugin_.reset(); }

  const KilnKernel& Sinh() {
    const KilnKernel* k = FindKernel(*plugin_, KILN_OP_CUSTOM, 1, "Sinh");
    EXPECT_NE(k, nullptr);
    static const KilnKernel kMissing{};
    return k != nullptr ? *k : kMissing;
  }

  static std::shared_ptr<LoadedPlugin> plugin_;
};

std::shared_ptr<LoadedPlugin> SinhPluginTest::plugin_;

std::vector<uint8_t> OptionsWithT(int64_t t) {
  flexbuffers::Builder fbb;
  fbb.Map([&] { fbb.Int("T", t); });
  fbb.Finish();
  return fbb.GetBuffer();
}

absl::Status RunSinh(const KilnKernel& kernel, const std::vector<float>& x,
                     const std::vector<uint8_t>& options, std::vector<float>* y,
                     std::vector<int32_t>* shape) {
  SingleNodeRunner r;
  int in = r.AddTensor<float>(KILN_TYPE_FLOAT32,
                              {2, static_cast<int32_t>(x.size() / 2)}, x);
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_CUSTOM, 1, {in}, {out}, "Sinh");
  r.node().custom_options = options.empty() ? nullptr : options.data();
  r.node().custom_options_size = options.size();
  absl::Status s = r.Run(kernel);
  *y = r.Values<float>(out);
  *shape = r.tensor(out).shape;
  return s;
}

TEST_F(SinhPluginTest, DescribesItself) {
  EXPECT_EQ(plugin_->name(), "example_sinh");
  ASSERT_EQ(plugin_->kernels().size(), 1u);
  EXPECT_EQ(FindKernel(*plugin_, KILN_OP_CUSTOM, 2, "Sinh"), nullptr);
  EXPECT_EQ(FindKernel(*plugin_, KILN_OP_CUSTOM, 1, "Cosh"), nullptr);
}

TEST_F(SinhPluginTest, MatchesStdSinhWithTheModelsOptions) {
  const std::vector<float> x = {-3.f, -1.5f, -0.25f, 0.f, 0.5f, 2.f, 4.f, 9.f};
  std::vector<float> y;
  std::vector<int32_t> shape;
  ASSERT_TRUE(RunSinh(Sinh(), x, kModelOptions, &y, &shape).ok());
  EXPECT_THAT(shape, ElementsAre(2, 4));
  ASSERT_EQ(y.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_FLOAT_EQ(y[i], std::sinh(x[i])) << "x = " << x[i];
  }
}

TEST_F(SinhPluginTest, ModelOptionsDecodeAsTheExpectedMap) {
  // Guards the probe this plugin was written from: {"T": 0 (FLOAT32)}.
  ASSERT_TRUE(
      flexbuffers::VerifyBuffer(kModelOptions.data(), kModelOptions.size()));
  const auto map =
      flexbuffers::GetRoot(kModelOptions.data(), kModelOptions.size()).AsMap();
  ASSERT_EQ(map.size(), 1u);
  EXPECT_EQ(map["T"].AsInt64(), KILN_TYPE_FLOAT32);
}

TEST_F(SinhPluginTest, ToleratesEmptyOptions) {
  std::vector<float> y;
  std::vector<int32_t> shape;
  ASSERT_TRUE(RunSinh(Sinh(), {0.f, 1.f}, {}, &y, &shape).ok());
  EXPECT_FLOAT_EQ(y[1], std::sinh(1.f));
}

TEST_F(SinhPluginTest, RefusesOptionsDeclaringAnotherType) {
  std::vector<float> y;
  std::vector<int32_t> shape;
  absl::Status s =
      RunSinh(Sinh(), {0.f, 1.f}, OptionsWithT(KILN_TYPE_INT32), &y, &shape);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("custom option T = 2 declares element type INT32 but "
                        "input has type FLOAT32"));
}

TEST_F(SinhPluginTest, RefusesMalformedOptions) {
  std::vector<float> y;
  std::vector<int32_t> shape;
  absl::Status s =
      RunSinh(Sinh(), {0.f, 1.f}, {0xff, 0xff, 0x7f, 0x09}, &y, &shape);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("not a valid FlexBuffer"));
}

TEST_F(SinhPluginTest, RefusesNonFloatInput) {
  SingleNodeRunner r;
  int in = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2}, {1, 2});
  int out = r.AddTensor(KILN_TYPE_INT32, {});
  r.SetOp(KILN_OP_CUSTOM, 1, {in}, {out}, "Sinh");
  absl::Status s = r.Run(Sinh());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("Sinh input 0 (tensor 't0') has type INT32; supports "
                        "FLOAT32"));
}

}  // namespace
}  // namespace kiln
