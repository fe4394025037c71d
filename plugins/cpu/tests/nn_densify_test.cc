// CPU plugin DENSIFY: the loader hands it a densified constant (see
// host/src/model/sparsity_test.cc), which it copies; anything but a
// constant input is refused, as by LiteRT. Sparse layouts against LiteRT
// are in nn_quantized_cases.py (densify_cases).
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/graph.h"
#include "runtime/single_node_runner.h"
#include "tests/cpu_kernel_test_util.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST_F(CpuKernelTest, DensifyCopiesItsConstant) {
  SingleNodeRunner r;
  int w =
      r.AddTensor<int8_t>(KILN_TYPE_INT8, {2, 3}, {1, 0, -2, 0, 0, 7}, true);
  int out = r.AddTensor(KILN_TYPE_INT8, {});
  r.SetOp(KILN_OP_DENSIFY, 1, {w}, {out});
  ASSERT_TRUE(r.Run(Kernel(KILN_OP_DENSIFY)).ok());
  EXPECT_THAT(r.tensor(out).shape, ElementsAre(2, 3));
  EXPECT_THAT(r.Values<int8_t>(out), ElementsAre(1, 0, -2, 0, 0, 7));
}

TEST_F(CpuKernelTest, DensifyRefusesNonConstantAndOtherTypes) {
  {
    SingleNodeRunner r;
    int x = r.AddTensor<float>(KILN_TYPE_FLOAT32, {2}, {1.f, 2.f});
    int out = r.AddTensor(KILN_TYPE_FLOAT32, {});
    r.SetOp(KILN_OP_DENSIFY, 1, {x}, {out});
    absl::Status s = r.Run(Kernel(KILN_OP_DENSIFY));
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(std::string(s.message()), HasSubstr("must be a constant"));
  }
  {
    SingleNodeRunner r;
    int x = r.AddTensor<int32_t>(KILN_TYPE_INT32, {2}, {1, 2}, true);
    int out = r.AddTensor(KILN_TYPE_INT32, {});
    r.SetOp(KILN_OP_DENSIFY, 1, {x}, {out});
    absl::Status s = r.Run(Kernel(KILN_OP_DENSIFY));
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(std::string(s.message()), HasSubstr("INT32"));
  }
}

}  // namespace
}  // namespace kiln
