// Steps of AllocateTensors (allocation.cc) that the plan cache
// (plan_cache_allocation.cc) reuses. Internal to the interpreter.
//
// Thread-safety: as the Interpreter (one thread at a time).
#ifndef KILN_HOST_INTERPRETER_ALLOCATION_H_
#define KILN_HOST_INTERPRETER_ALLOCATION_H_

#include <cstddef>

#include "interpreter/arena_planner.h"
#include "interpreter/subgraph_state.h"

namespace kiln {

// Back to the state before preparation (see interpreter.h): inputs of
// unknown rank become scalars, tensors a model node writes get unknown
// shapes, no activation has data, no tensor is dynamic or holds a
// prepare-time value, no node is deferred or evaluated at prepare;
// variables keep their values.
void ResetTensors(SubgraphState& s);

// Gives `t` heap storage of `n` bytes (zeroed) for a value the host
// computes: an address even when n is 0, since kernels read a null data
// pointer as "no value yet".
void AllocateValue(TensorRecord& t, size_t n);

// The arena layout for the shapes the tensors have now: every activation
// whose size is known (not constant, variable, string or dynamic) placed
// by its lifetime in the execution plan. Reads `s` only.
MemoryPlan PlanMemory(const SubgraphState& s);

// Gives the placed tensors their arena memory (growing the arena when it is
// too small) and sets s.arena_bytes.
void ApplyMemoryPlan(SubgraphState& s, const MemoryPlan& plan);

}  // namespace kiln

#endif  // KILN_HOST_INTERPRETER_ALLOCATION_H_
