// CPU plugin kernels, loaded from the built plugin and run through the
// extension API.
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/single_node_runner.h"
#include "tests/cpu_kernel_test_util.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;


TEST_F(CpuKernelTest, AddBroadcastsWithFusedRelu) {
  SingleNodeRunner r;
  int a = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2, 3},
                             {1, -2, 3, -4, 5, -6});
  int b = r.AddTensor<float>(KILN_TYPE_FLOAT32, {3}, {1, 1, 1});
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_ADD, 1, {a, b}, {out});
  r.node().SetInt(KILN_OPTION_FUSED_ACTIVATION, KILN_ACTIVATION_RELU);
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_ADD)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 3));
  EXPECT_THAT(r.Values<float>(out), ElementsAre(2, 0, 4, 0, 6, 0));
}

TEST_F(CpuKernelTest, MulRejectsIncompatibleShapes) {
  SingleNodeRunner r;
  int a = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2}, {1, 2});
  int b = r.AddTensor<float>(KILN_TYPE_FLOAT32, {3}, {1, 2, 3});
  int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
  r.SetOp(KILN_OP_MUL, 1, {a, b}, {out});
  absl::Status s = r.Run(Kernel(KILN_OP_MUL));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("cannot be broadcast"));
}

}  // namespace
}  // namespace kiln
