// TFLite's sparse constant format (Tensor.sparsity), read and checked once
// and densified by the model loader: a sparse constant reaches kernels as
// an ordinary dense constant. Internal to the model loader.
//
// The format: the dense shape's n dimensions, some split into blocks
// (block_map[b] names the dimension block dimension n + b splits), give
// k >= n "expanded" dimensions; traversal_order lists them outermost
// first; dim_metadata describes each traversal level, DENSE (every index,
// dense_size of them) or SPARSE_CSR (array_segments[p]..[p + 1] select the
// array_indices present under parent position p). The constant's data
// holds the values the traversal reaches, in traversal order; every other
// element is zero.
#ifndef KILN_HOST_MODEL_SPARSITY_H_
#define KILN_HOST_MODEL_SPARSITY_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "schema/kiln_model_generated.h"

namespace kiln {

// A sparse constant's layout, every index proven against the dense shape.
struct SparseLayout {
  struct Level {
    bool compressed = false;                 // SPARSE_CSR, else DENSE
    int32_t size = 0;                        // the expanded dimension's size
    std::vector<int32_t> segments, indices;  // SPARSE_CSR only
  };
  std::vector<int32_t> dense_shape;
  std::vector<int32_t> traversal_order;  // expanded dimension per level
  std::vector<int32_t> block_map;        // dense dimension of block b
  std::vector<int32_t> block_size;       // size of block b
  std::vector<Level> levels;
  uint64_t stored_values = 0;  // values the traversal reaches
  uint64_t dense_count = 0;    // elements of the dense shape
};

// Reads `tensor`'s sparsity (which must be present) against its shape and
// type and the `value_bytes` of its constant data. Fails with
// INVALID_ARGUMENT saying what does not hold (a format rule, or a layout
// Kiln does not densify: STRING or INT4 values, block dimensions out of
// order, sparse blocks).
absl::StatusOr<SparseLayout> ReadSparseLayout(const fb::Tensor& tensor,
                                              uint64_t value_bytes);

// Writes the dense tensor to `dense` (layout.dense_count elements of
// `element_size` bytes): zero, then each of the stored `values` at its
// place. `values` holds layout.stored_values elements.
void Densify(const SparseLayout& layout, size_t element_size,
             const uint8_t* values, uint8_t* dense);

}  // namespace kiln

#endif  // KILN_HOST_MODEL_SPARSITY_H_
