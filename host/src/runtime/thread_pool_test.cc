// The interpreter's thread pool and kiln.parallel_for/1 as plugins see it:
// every item runs exactly once, thread indices stay in range, nested calls
// run inline instead of deadlocking, errors stop the loop, threads start on
// first use, and hosts below 1.3 do not offer the extension.
#include "runtime/thread_pool.h"

#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/graph.h"
#include "runtime/host_api.h"

namespace kiln {
namespace {

struct Coverage {
  std::vector<std::atomic<int>> hits;
  std::atomic<int32_t> max_index{-1};
  std::atomic<int> calls{0};
  explicit Coverage(int64_t n) : hits(n) {}
};

KilnStatus CountItems(void* data, int64_t begin, int64_t end,
                      int32_t thread_index) {
  auto* c = static_cast<Coverage*>(data);
  for (int64_t i = begin; i < end; ++i) c->hits[i].fetch_add(1);
  int32_t seen = c->max_index.load();
  while (thread_index > seen &&
         !c->max_index.compare_exchange_weak(seen, thread_index)) {
  }
  c->calls.fetch_add(1);
  return KILN_STATUS_OK;
}

TEST(ThreadPoolTest, EveryItemRunsExactlyOnce) {
  for (int32_t threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    for (int64_t count : {1, 2, 7, 100, 1001}) {
      for (int64_t min_range : {0, 1, 3, 64}) {
        SCOPED_TRACE(::testing::Message()
                     << threads << " threads, count " << count << ", min_range "
                     << min_range);
        Coverage c(count);
        ASSERT_EQ(pool.ParallelFor(count, min_range, CountItems, &c),
                  KILN_STATUS_OK);
        for (int64_t i = 0; i < count; ++i) ASSERT_EQ(c.hits[i].load(), 1);
        EXPECT_LT(c.max_index.load(), threads);
        EXPECT_GE(c.max_index.load(), 0);
      }
    }
  }
}

// Back-to-back jobs (as consecutive nodes of one Invoke post them) are
// picked up by spinning workers, by workers that slept in between, and by
// workers that saw a job close before they joined; each item runs once, and
// the pool is destroyed while its workers may still be spinning.
TEST(ThreadPoolTest, BackToBackJobsWithSpinningAndSleepingWorkers) {
  for (int32_t threads : {2, 3}) {
    ThreadPool pool(threads);
    for (int round = 0; round < 2000; ++round) {
      const int64_t count = 1 + round % 37;
      Coverage c(count);
      ASSERT_EQ(pool.ParallelFor(count, 1, CountItems, &c), KILN_STATUS_OK);
      for (int64_t i = 0; i < count; ++i) ASSERT_EQ(c.hits[i].load(), 1);
      // Every 500 rounds, past the spin time: the workers sleep.
      if (round % 500 == 499) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    }
  }
}

TEST(ThreadPoolTest, ThreadsStartOnFirstUseOnly) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.num_threads(), 4);
  EXPECT_EQ(pool.started_threads(), 0);
  Coverage small(3);
  // Not more than min_range items: the calling thread runs them.
  ASSERT_EQ(pool.ParallelFor(3, 8, CountItems, &small), KILN_STATUS_OK);
  EXPECT_EQ(pool.started_threads(), 0);
  EXPECT_EQ(small.calls.load(), 1);
  Coverage big(64);
  ASSERT_EQ(pool.ParallelFor(64, 1, CountItems, &big), KILN_STATUS_OK);
  EXPECT_EQ(pool.started_threads(), 3);
  EXPECT_EQ(ThreadPool(0).num_threads(), 1);
}

TEST(ThreadPoolTest, RangesAreAtLeastMinRange) {
  ThreadPool pool(4);
  struct Ranges {
    std::atomic<int64_t> shortest{1 << 30};
  } r;
  auto task = [](void* data, int64_t begin, int64_t end, int32_t) {
    auto* r = static_cast<Ranges*>(data);
    int64_t s = r->shortest.load();
    while (end - begin < s &&
           !r->shortest.compare_exchange_weak(s, end - begin)) {
    }
    return KILN_STATUS_OK;
  };
  // 100 = 6 ranges of 16 and a last one of 4.
  ASSERT_EQ(pool.ParallelFor(100, 16, task, &r), KILN_STATUS_OK);
  EXPECT_GE(r.shortest.load(), 4);
  ASSERT_EQ(pool.ParallelFor(96, 16, task, &r), KILN_STATUS_OK);
}

// A task that calls ParallelFor again (as a kernel running on a pool thread
// might): the inner loop runs inline on that thread, with its index.
struct Nested {
  ThreadPool* pool;
  std::atomic<int> inner_items{0};
  std::atomic<int> index_mismatches{0};
  std::atomic<int> thread_mismatches{0};
};

thread_local int32_t tls_outer_index = -1;
thread_local std::thread::id tls_outer_thread;

KilnStatus Inner(void* data, int64_t begin, int64_t end, int32_t index) {
  auto* n = static_cast<Nested*>(data);
  if (index != tls_outer_index) n->index_mismatches.fetch_add(1);
  if (std::this_thread::get_id() != tls_outer_thread) {
    n->thread_mismatches.fetch_add(1);
  }
  n->inner_items.fetch_add(static_cast<int>(end - begin));
  return KILN_STATUS_OK;
}

KilnStatus Outer(void* data, int64_t begin, int64_t end, int32_t index) {
  auto* n = static_cast<Nested*>(data);
  for (int64_t i = begin; i < end; ++i) {
    tls_outer_index = index;
    tls_outer_thread = std::this_thread::get_id();
    const KilnStatus s = n->pool->ParallelFor(10, 1, Inner, n);
    if (s != KILN_STATUS_OK) return s;
  }
  return KILN_STATUS_OK;
}

TEST(ThreadPoolTest, NestedCallsRunInlineWithoutDeadlock) {
  ThreadPool pool(3);
  Nested n;
  n.pool = &pool;
  ASSERT_EQ(pool.ParallelFor(40, 1, Outer, &n), KILN_STATUS_OK);
  EXPECT_EQ(n.inner_items.load(), 400);
  EXPECT_EQ(n.index_mismatches.load(), 0);
  EXPECT_EQ(n.thread_mismatches.load(), 0);
}

TEST(ThreadPoolTest, ConcurrentCallersTakeTurns) {
  ThreadPool pool(3);
  std::vector<std::thread> callers;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&] {
      for (int rep = 0; rep < 50; ++rep) {
        Coverage c(257);
        if (pool.ParallelFor(257, 2, CountItems, &c) != KILN_STATUS_OK) {
          bad.fetch_add(1);
        }
        for (int64_t i = 0; i < 257; ++i) {
          if (c.hits[i].load() != 1) bad.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(ThreadPoolTest, AnErrorStopsTheLoopAndIsReturned) {
  ThreadPool pool(4);
  std::atomic<int64_t> ran{0};
  auto task = [](void* data, int64_t begin, int64_t end, int32_t) {
    auto* ran = static_cast<std::atomic<int64_t>*>(data);
    ran->fetch_add(end - begin);
    return begin == 0 ? KILN_STATUS_RESOURCE_EXHAUSTED : KILN_STATUS_OK;
  };
  EXPECT_EQ(pool.ParallelFor(100000, 1, task, &ran),
            KILN_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_LE(ran.load(), 100000);
  EXPECT_EQ(pool.ParallelFor(5, 1, nullptr, nullptr),
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(pool.ParallelFor(0, 1, task, &ran), KILN_STATUS_OK);
}

const KilnParallelForHostExtension* ExtensionAt(uint32_t minor) {
  const KilnHostApi* api = HostApiForVersion(KILN_MAKE_VERSION(1, minor, 0));
  if (api == nullptr) return nullptr;
  return static_cast<const KilnParallelForHostExtension*>(
      api->get_host_extension(KILN_PARALLEL_FOR_HOST_EXTENSION_ID));
}

TEST(ParallelForHostExtensionTest, OfferedFrom13On) {
  for (uint32_t minor = 0; minor < 3; ++minor) {
    EXPECT_EQ(ExtensionAt(minor), nullptr) << "1." << minor;
  }
  const KilnParallelForHostExtension* ext = ExtensionAt(3);
  ASSERT_NE(ext, nullptr);
  EXPECT_EQ(ext->base.struct_size,
            KILN_PARALLEL_FOR_HOST_EXTENSION_STRUCT_SIZE);
  EXPECT_STREQ(ext->base.id, KILN_PARALLEL_FOR_HOST_EXTENSION_ID);
}

TEST(ParallelForHostExtensionTest, UsesTheCallbacksPoolOrRunsSerially) {
  const KilnParallelForHostExtension* ext = ExtensionAt(3);
  ASSERT_NE(ext, nullptr);
  CallContext without_pool;
  EXPECT_EQ(ext->num_threads(ToOpaque(&without_pool)), 1);
  Coverage serial(50);
  ASSERT_EQ(
      ext->parallel_for(ToOpaque(&without_pool), 50, 1, CountItems, &serial),
      KILN_STATUS_OK);
  EXPECT_EQ(serial.calls.load(), 1);
  EXPECT_EQ(serial.max_index.load(), 0);

  ThreadPool pool(3);
  CallContext with_pool;
  with_pool.thread_pool = &pool;
  EXPECT_EQ(ext->num_threads(ToOpaque(&with_pool)), 3);
  Coverage parallel(50);
  ASSERT_EQ(
      ext->parallel_for(ToOpaque(&with_pool), 50, 1, CountItems, &parallel),
      KILN_STATUS_OK);
  for (int64_t i = 0; i < 50; ++i) EXPECT_EQ(parallel.hits[i].load(), 1);
  EXPECT_GT(parallel.calls.load(), 1);
  EXPECT_EQ(pool.started_threads(), 2);
}

}  // namespace
}  // namespace kiln
