#include "tests/cpu_kernel_test_util.h"

#include <string>

#include "runtime/graph.h"

namespace kiln {

std::shared_ptr<LoadedPlugin> CpuKernelTest::plugin_;

void CpuKernelTest::SetUpTestSuite() {
  auto p =
      LoadPluginForTest(std::string(KILN_TEST_PLUGIN_DIR) + "/libkiln_cpu.so");
  ASSERT_TRUE(p.ok()) << p.status();
  plugin_ = *p;
}

void CpuKernelTest::TearDownTestSuite() { plugin_.reset(); }

const KilnKernel& CpuKernelTest::Kernel(int32_t code, int32_t version,
                                        const std::string& custom) {
  const KilnKernel* k = FindKernel(*plugin_, code, version, custom);
  static const KilnKernel kMissing{};
  EXPECT_NE(k, nullptr) << "no kernel for op " << code << " v" << version;
  return k != nullptr ? *k : kMissing;
}

bool CpuKernelTest::Covers(int32_t code, int32_t version) const {
  return FindKernel(*plugin_, code, version) != nullptr;
}

KilnStatus PrepareOnly(const KilnKernel& kernel, SingleNodeRunner& r,
                       std::string* error) {
  CallContext c;
  c.graph = &r.graph();
  c.node = &r.node();
  void* state = nullptr;
  if (kernel.init != nullptr) {
    KilnStatus s = kernel.init(kernel.user_data, ToOpaque(&c),
                               ToOpaque(&r.node()), &state);
    if (s != KILN_STATUS_OK) return s;
  }
  c.allow_resize = true;
  KilnStatus s = kernel.prepare(kernel.user_data, state, ToOpaque(&c),
                                ToOpaque(&r.node()));
  *error = c.error.message;
  if (kernel.free != nullptr) kernel.free(kernel.user_data, state);
  return s;
}

}  // namespace kiln
