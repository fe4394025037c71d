// A load instance of a test plugin, made the way KILN_DEFINE_PLUGIN's entry
// point makes one (sdk::PluginInstance::Enter), so SDK kernels and delegates
// can be driven through their C tables with a chosen host table. A host
// table of extension API 1.2 or newer gets an instance of its own, shut
// down when this object goes away; an older one gets the instance shared by
// that table (kept until the process ends, as on an old host).
#ifndef KILN_SDK_TESTS_TEST_INSTANCE_H_
#define KILN_SDK_TESTS_TEST_INSTANCE_H_

#include <cstring>

#include "kiln/kiln_plugin.h"
#include "kiln/sdk/plugin.h"

namespace kiln::sdk_test {

class TestInstance {
 public:
  TestInstance(const KilnHostApi* api, const KilnPluginDescriptor* tmpl) {
    std::memset(&info_, 0, sizeof(info_));
    info_.struct_size = KILN_HOST_INFO_STRUCT_SIZE;
    info_.runtime_version = KILN_RUNTIME_VERSION;
    info_.abi_version = api->abi_version;
    info_.min_plugin_abi_version = KILN_MAKE_VERSION(1, 0, 0);
    info_.api = api;
    descriptor_ = sdk::PluginInstance::Enter(&info_, tmpl);
  }
  ~TestInstance() {
    if (info_.abi_version >= KILN_MAKE_VERSION(1, 2, 0)) {
      descriptor_->shutdown(descriptor_);
    }
  }
  TestInstance(const TestInstance&) = delete;
  TestInstance& operator=(const TestInstance&) = delete;

  const KilnPluginDescriptor& descriptor() const { return *descriptor_; }
  const KilnKernel& kernel(uint32_t i) const {
    return *descriptor_->kernels[i];
  }
  const KilnDelegateInterface* delegate() const {
    return descriptor_->delegate;
  }

 private:
  KilnHostInfo info_;
  const KilnPluginDescriptor* descriptor_ = nullptr;
};

}  // namespace kiln::sdk_test

#endif  // KILN_SDK_TESTS_TEST_INSTANCE_H_
