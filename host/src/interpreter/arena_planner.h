// Offsets of activation tensors in one arena, from their lifetimes.
//
// Two tensors may share bytes only when their lifetimes (inclusive ranges of
// execution steps) do not overlap. Tensors are placed greedily, largest
// first; each goes into the smallest gap between already-placed tensors
// whose lifetimes overlap its own (best fit), or after the last of them.
// Every offset is a multiple of kArenaAlignment. Sizes saturate at SIZE_MAX
// instead of wrapping around: a plan whose arena_bytes is SIZE_MAX does not
// fit in memory (the interpreter refuses it against max_arena_bytes).
//
// Thread-safety: pure functions.
#ifndef KILN_HOST_INTERPRETER_ARENA_PLANNER_H_
#define KILN_HOST_INTERPRETER_ARENA_PLANNER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln {

inline constexpr size_t kArenaAlignment = 64;

struct ArenaRequest {
  size_t bytes = 0;
  // Inclusive range of execution steps during which the bytes must stay
  // untouched by other tensors; first_use <= last_use.
  int32_t first_use = 0;
  int32_t last_use = 0;
};

struct ArenaPlan {
  std::vector<size_t> offsets;  // one per request, same order
  size_t arena_bytes = 0;       // a multiple of kArenaAlignment
};

ArenaPlan PlanArena(const std::vector<ArenaRequest>& requests);

// Where one tensor of a subgraph lives in that subgraph's arena.
struct TensorPlacement {
  int32_t tensor = -1;  // tensor index
  size_t offset = 0;    // from the arena's aligned base
  size_t bytes = 0;
};

// The arena layout of one subgraph for one set of shapes: every activation
// placed, and the arena size (a multiple of kArenaAlignment).
struct MemoryPlan {
  std::vector<TensorPlacement> placements;
  size_t arena_bytes = 0;
};

// `bytes` rounded up to a multiple of kArenaAlignment (SIZE_MAX when that
// overflows).
size_t AlignArenaSize(size_t bytes);

}  // namespace kiln

#endif  // KILN_HOST_INTERPRETER_ARENA_PLANNER_H_
