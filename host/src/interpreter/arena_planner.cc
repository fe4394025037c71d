#include "interpreter/arena_planner.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>

namespace kiln {

namespace {

// a + b, SIZE_MAX when it overflows.
size_t SaturatingAdd(size_t a, size_t b) {
  size_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? SIZE_MAX : sum;
}

}  // namespace

size_t AlignArenaSize(size_t bytes) {
  if (bytes > SIZE_MAX - kArenaAlignment) return SIZE_MAX;
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

ArenaPlan PlanArena(const std::vector<ArenaRequest>& requests) {
  ArenaPlan plan;
  plan.offsets.assign(requests.size(), 0);
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Largest first; ties by first use, then by request order (deterministic).
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (requests[a].bytes != requests[b].bytes) {
      return requests[a].bytes > requests[b].bytes;
    }
    return requests[a].first_use < requests[b].first_use;
  });

  struct Placed {
    size_t offset;
    size_t size;  // aligned
    int32_t first_use;
    int32_t last_use;
  };
  std::vector<Placed> placed;
  placed.reserve(requests.size());
  std::vector<const Placed*> overlapping;
  for (size_t index : order) {
    const ArenaRequest& r = requests[index];
    const size_t size = AlignArenaSize(r.bytes);
    overlapping.clear();
    for (const Placed& p : placed) {
      if (p.first_use <= r.last_use && r.first_use <= p.last_use) {
        overlapping.push_back(&p);
      }
    }
    std::sort(
        overlapping.begin(), overlapping.end(),
        [](const Placed* a, const Placed* b) { return a->offset < b->offset; });
    size_t best_offset = 0;
    size_t best_gap = std::numeric_limits<size_t>::max();
    size_t cursor = 0;
    for (const Placed* p : overlapping) {
      if (p->offset >= cursor) {
        const size_t gap = p->offset - cursor;
        if (gap >= size && gap < best_gap) {
          best_gap = gap;
          best_offset = cursor;
        }
      }
      cursor = std::max(cursor, SaturatingAdd(p->offset, p->size));
    }
    if (best_gap == std::numeric_limits<size_t>::max()) best_offset = cursor;
    placed.push_back({best_offset, size, r.first_use, r.last_use});
    plan.offsets[index] = best_offset;
    plan.arena_bytes =
        std::max(plan.arena_bytes, SaturatingAdd(best_offset, size));
  }
  return plan;
}

}  // namespace kiln
