// kiln/sdk/parallel.h against hand-made host tables: a host without
// kiln.parallel_for/1 (1.2 and older, or a too-small struct) runs the loop
// serially as one range on the calling thread; a host with it gets the
// ranges, the thread count and the loop's errors and exceptions as status.
#include "kiln/sdk/parallel.h"

#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace kiln::sdk {
namespace {

using Range = std::pair<int64_t, int64_t>;

// A stub kiln.parallel_for/1: 3 "threads", ranges of min_range items run in
// order on this thread with thread_index = range number % 3.
int32_t StubThreads(KilnOpaqueContext*) { return 3; }
KilnStatus StubParallelFor(KilnOpaqueContext*, int64_t count, int64_t min_range,
                           KilnParallelForTask task, void* data) {
  if (min_range < 1) min_range = 1;
  int32_t index = 0;
  for (int64_t b = 0; b < count; b += min_range, index = (index + 1) % 3) {
    const KilnStatus s = task(data, b, std::min(count, b + min_range), index);
    if (s != KILN_STATUS_OK) return s;
  }
  return KILN_STATUS_OK;
}

KilnParallelForHostExtension g_stub = {
    {KILN_PARALLEL_FOR_HOST_EXTENSION_STRUCT_SIZE,
     KILN_PARALLEL_FOR_HOST_EXTENSION_ID, nullptr},
    StubThreads,
    StubParallelFor};

const void* Offers(const char* id) {
  return std::strcmp(id, KILN_PARALLEL_FOR_HOST_EXTENSION_ID) == 0 ? &g_stub
                                                                   : nullptr;
}
const void* OffersNothing(const char*) { return nullptr; }

KilnHostApi Table(const void* (*get_host_extension)(const char*)) {
  KilnHostApi api;
  std::memset(&api, 0, sizeof(api));
  api.struct_size = KILN_HOST_API_STRUCT_SIZE_1_2;
  api.abi_version = KILN_MAKE_VERSION(1, 2, 0);
  api.get_host_extension = get_host_extension;
  return api;
}

struct Calls {
  KilnStatus status = KILN_STATUS_UNKNOWN;
  std::vector<Range> ranges;
  std::vector<int32_t> indices;
};

// ParallelFor over `count` items, recording each range and thread index.
Calls Record(const KilnHostApi& api, int64_t count, int64_t min_range) {
  Calls c;
  c.status = ParallelFor(api, nullptr, count, min_range,
                         [&](int64_t b, int64_t e, int32_t t) {
                           c.ranges.emplace_back(b, e);
                           c.indices.push_back(t);
                         });
  return c;
}

TEST(SdkParallelTest, HostWithoutTheExtensionRunsOneSerialRange) {
  for (const KilnHostApi& api : {Table(OffersNothing), Table(nullptr)}) {
    EXPECT_EQ(HostParallelFor(api), nullptr);
    EXPECT_EQ(ParallelThreads(api, nullptr), 1);
    const Calls c = Record(api, 10, 3);
    EXPECT_EQ(c.status, KILN_STATUS_OK);
    EXPECT_EQ(c.ranges, (std::vector<Range>{{0, 10}}));
    EXPECT_EQ(c.indices, (std::vector<int32_t>{0}));
    EXPECT_EQ(ParallelFor(api, nullptr, 4, 1,
                          [](int64_t, int64_t, int32_t) {
                            return KILN_STATUS_OUT_OF_RANGE;
                          }),
              KILN_STATUS_OUT_OF_RANGE);
  }
}

TEST(SdkParallelTest, AnExtensionSmallerThanRevision1IsNotUsed) {
  KilnParallelForHostExtension small = g_stub;
  small.base.struct_size = KILN_EXTENSION_BASE_STRUCT_SIZE;
  static KilnParallelForHostExtension* s_small;
  s_small = &small;
  const KilnHostApi api =
      Table([](const char*) -> const void* { return s_small; });
  EXPECT_EQ(HostParallelFor(api), nullptr);
  EXPECT_EQ(ParallelThreads(api, nullptr), 1);
}

TEST(SdkParallelTest, HostWithTheExtensionGetsTheLoop) {
  const KilnHostApi api = Table(Offers);
  ASSERT_EQ(HostParallelFor(api), &g_stub);
  EXPECT_EQ(ParallelThreads(api, nullptr), 3);
  const Calls c = Record(api, 7, 3);
  EXPECT_EQ(c.status, KILN_STATUS_OK);
  EXPECT_EQ(c.ranges, (std::vector<Range>{{0, 3}, {3, 6}, {6, 7}}));
  EXPECT_EQ(c.indices, (std::vector<int32_t>{0, 1, 2}));
  const Calls none = Record(api, 0, 1);
  EXPECT_EQ(none.status, KILN_STATUS_OK);
  EXPECT_TRUE(none.ranges.empty());
  // An exception never crosses the C boundary: it becomes INTERNAL.
  EXPECT_EQ(ParallelFor(api, nullptr, 5, 1,
                        [](int64_t, int64_t, int32_t) {
                          throw std::runtime_error("no");
                        }),
            KILN_STATUS_INTERNAL);
}

}  // namespace
}  // namespace kiln::sdk
