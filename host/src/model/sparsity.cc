#include "model/sparsity.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/graph.h"

namespace kiln {
namespace {

// Dense dimensions plus block dimensions; more is not a real model.
constexpr int kMaxExpandedRank = 16;
// The loader allocates the dense copy: a bound on what a file can ask for.
constexpr uint64_t kMaxDenseBytes = uint64_t{1} << 30;

absl::Status Invalid(const std::string& message) {
  return absl::InvalidArgumentError(message);
}

// The values of one SparseIndexVector (int32, uint16 or uint8); nullopt
// when the union holds nothing.
std::optional<std::vector<int32_t>> IndexVector(fb::SparseIndexVector type,
                                                const void* table) {
  if (table == nullptr) return std::nullopt;
  const auto copy = [](const auto* values) {
    std::vector<int32_t> out;
    if (values != nullptr) out.assign(values->begin(), values->end());
    return out;
  };
  switch (type) {
    case fb::SparseIndexVector::Int32Vector:
      return copy(static_cast<const fb::Int32Vector*>(table)->values());
    case fb::SparseIndexVector::Uint16Vector:
      return copy(static_cast<const fb::Uint16Vector*>(table)->values());
    case fb::SparseIndexVector::Uint8Vector:
      return copy(static_cast<const fb::Uint8Vector*>(table)->values());
    default:
      return std::nullopt;
  }
}

// Checks traversal_order and block_map and sizes the blocks from the block
// levels' dense_size.
absl::Status ReadOrderAndBlocks(const fb::SparsityParameters& s,
                                SparseLayout* out) {
  const int n = static_cast<int>(out->dense_shape.size());
  if (s.traversal_order() != nullptr) {
    out->traversal_order.assign(s.traversal_order()->begin(),
                                s.traversal_order()->end());
  }
  if (s.block_map() != nullptr) {
    out->block_map.assign(s.block_map()->begin(), s.block_map()->end());
  }
  const int k = static_cast<int>(out->traversal_order.size());
  const int blocks = static_cast<int>(out->block_map.size());
  if (k != n + blocks || k > kMaxExpandedRank) {
    return Invalid(absl::StrCat("traversal_order has ", k,
                                " dimensions; the shape's ", n, " plus ",
                                blocks, " block dimensions make ", n + blocks));
  }
  std::vector<bool> seen(static_cast<size_t>(k), false);
  for (int level = 0; level < k; ++level) {
    const int32_t d = out->traversal_order[static_cast<size_t>(level)];
    // Dense dimensions first, in any order, then the block dimensions in
    // order (the only layouts TFLite densifies consistently).
    const bool ok = level < n ? d >= 0 && d < n && !seen[static_cast<size_t>(d)]
                              : d == level;
    if (!ok) {
      return Invalid(absl::StrCat(
          "traversal_order entry ", level, " is ", d, "; expected ",
          level < n ? absl::StrCat("an unused dimension of 0..", n - 1)
                    : absl::StrCat("block dimension ", level)));
    }
    seen[static_cast<size_t>(d)] = true;
  }
  for (int b = 0; b < blocks; ++b) {
    const int32_t d = out->block_map[static_cast<size_t>(b)];
    if (d < 0 || d >= n || (b > 0 && d <= out->block_map[b - 1])) {
      return Invalid(absl::StrCat(
          "block_map entry ", b, " is ", d,
          "; block_map lists distinct dense dimensions in increasing order"));
    }
    const fb::DimensionMetadata* level = s.dim_metadata()->Get(n + b);
    const int32_t size = level->dense_size();
    if (level->format() != fb::DimensionType::DENSE || size <= 0 ||
        out->dense_shape[static_cast<size_t>(d)] % size != 0) {
      return Invalid(absl::StrCat("block dimension ", n + b,
                                  " must be DENSE with a dense_size that "
                                  "divides dimension ",
                                  d, " (",
                                  out->dense_shape[static_cast<size_t>(d)],
                                  "); it has dense_size ", size));
    }
    out->block_size.push_back(size);
  }
  return absl::OkStatus();
}

// Size of expanded dimension `e`.
int32_t ExpandedSize(const SparseLayout& l, int32_t e) {
  const int n = static_cast<int>(l.dense_shape.size());
  if (e >= n) return l.block_size[static_cast<size_t>(e - n)];
  int32_t size = l.dense_shape[static_cast<size_t>(e)];
  for (size_t b = 0; b < l.block_map.size(); ++b) {
    if (l.block_map[b] == e) size /= l.block_size[b];
  }
  return size;
}

// Checks one CSR level under `parents` positions; the positions below it
// are its indices.
absl::Status ReadCompressedLevel(const fb::DimensionMetadata& m, int level,
                                 uint64_t parents, SparseLayout::Level* out) {
  std::optional<std::vector<int32_t>> segments =
      IndexVector(m.array_segments_type(), m.array_segments());
  std::optional<std::vector<int32_t>> indices =
      IndexVector(m.array_indices_type(), m.array_indices());
  const std::string where = absl::StrCat("level ", level, " (SPARSE_CSR): ");
  if (!segments || !indices) {
    return Invalid(where + "array_segments or array_indices is missing");
  }
  if (segments->size() != parents + 1) {
    return Invalid(absl::StrCat(where, "array_segments has ", segments->size(),
                                " entries; ", parents,
                                " parent positions need ", parents + 1));
  }
  int32_t previous = 0;
  for (size_t i = 0; i < segments->size(); ++i) {
    const int32_t v = (*segments)[i];
    if ((i == 0 && v != 0) || v < previous) {
      return Invalid(absl::StrCat(where, "array_segments entry ", i, " is ", v,
                                  "; segments start at 0 and never "
                                  "decrease"));
    }
    previous = v;
  }
  if (static_cast<size_t>(previous) != indices->size()) {
    return Invalid(absl::StrCat(where, "array_segments ends at ", previous,
                                " but array_indices has ", indices->size(),
                                " entries"));
  }
  for (size_t i = 0; i < indices->size(); ++i) {
    if ((*indices)[i] < 0 || (*indices)[i] >= out->size) {
      return Invalid(absl::StrCat(where, "array_indices entry ", i, " is ",
                                  (*indices)[i], ", outside 0..",
                                  out->size - 1));
    }
  }
  out->segments = std::move(*segments);
  out->indices = std::move(*indices);
  return absl::OkStatus();
}

absl::Status ReadLevels(const fb::SparsityParameters& s, SparseLayout* out) {
  uint64_t positions = 1;  // positions above the current level
  for (size_t level = 0; level < out->traversal_order.size(); ++level) {
    const fb::DimensionMetadata& m = *s.dim_metadata()->Get(level);
    SparseLayout::Level l;
    l.size = ExpandedSize(*out, out->traversal_order[level]);
    l.compressed = m.format() == fb::DimensionType::SPARSE_CSR;
    if (!l.compressed && m.format() != fb::DimensionType::DENSE) {
      return Invalid(absl::StrCat("level ", level, " has unknown format ",
                                  static_cast<int>(m.format())));
    }
    uint64_t next = 0;
    if (l.compressed) {
      KILN_RETURN_IF_ERROR(
          ReadCompressedLevel(m, static_cast<int>(level), positions, &l));
      next = l.indices.size();
    } else {
      if (m.dense_size() != l.size) {
        return Invalid(absl::StrCat("level ", level, " (DENSE) has dense_size ",
                                    m.dense_size(), "; its dimension has ",
                                    l.size));
      }
      const bool overflows =
          l.size != 0 && positions > out->dense_count / l.size;
      next = overflows ? out->dense_count + 1
                       : positions * static_cast<uint64_t>(l.size);
    }
    if (next > out->dense_count) {
      return Invalid(absl::StrCat("level ", level,
                                  " reaches more positions than the dense "
                                  "shape has elements"));
    }
    positions = next;
    out->levels.push_back(std::move(l));
  }
  out->stored_values = positions;
  return absl::OkStatus();
}

// Writes the values below `level` under parent position `parent`; `index`
// holds the expanded indices of the levels above.
struct Densifier {
  const SparseLayout& l;
  size_t element_size;
  const uint8_t* values;
  uint8_t* dense;
  std::vector<int32_t> index;
  uint64_t next_value = 0;

  void Place() {
    const size_t n = l.dense_shape.size();
    int64_t position[kMaxExpandedRank] = {};
    for (size_t level = 0; level < n; ++level) {
      position[l.traversal_order[level]] = index[level];
    }
    for (size_t b = 0; b < l.block_map.size(); ++b) {
      const int32_t d = l.block_map[b];
      position[d] = position[d] * l.block_size[b] + index[n + b];
    }
    uint64_t flat = 0;
    for (size_t d = 0; d < n; ++d) {
      flat = flat * static_cast<uint64_t>(l.dense_shape[d]) +
             static_cast<uint64_t>(position[d]);
    }
    std::memcpy(dense + flat * element_size, values + next_value * element_size,
                element_size);
    ++next_value;
  }

  void Visit(size_t level, uint64_t parent) {
    if (level == l.levels.size()) {
      Place();
      return;
    }
    const SparseLayout::Level& lv = l.levels[level];
    if (!lv.compressed) {
      for (int32_t i = 0; i < lv.size; ++i) {
        index[level] = i;
        Visit(level + 1, parent * static_cast<uint64_t>(lv.size) +
                             static_cast<uint64_t>(i));
      }
      return;
    }
    for (int32_t i = lv.segments[parent]; i < lv.segments[parent + 1]; ++i) {
      index[level] = lv.indices[static_cast<size_t>(i)];
      Visit(level + 1, static_cast<uint64_t>(i));
    }
  }
};

}  // namespace

absl::StatusOr<SparseLayout> ReadSparseLayout(const fb::Tensor& tensor,
                                              uint64_t value_bytes) {
  const fb::SparsityParameters& s = *tensor.sparsity();
  const KilnTensorType type = static_cast<KilnTensorType>(tensor.type());
  const size_t element_size = ElementSize(type);
  if (type == KILN_TYPE_STRING || type == KILN_TYPE_INT4 || element_size == 0) {
    return Invalid(absl::StrCat("sparse ", TypeName(type),
                                " constants are not supported"));
  }
  SparseLayout out;
  if (tensor.shape() != nullptr) {
    out.dense_shape.assign(tensor.shape()->begin(), tensor.shape()->end());
  }
  out.dense_count = 1;
  for (int32_t d : out.dense_shape) {
    if (d < 0) return Invalid("a sparse constant needs a static shape");
    out.dense_count *= static_cast<uint64_t>(d);
    if (out.dense_count * element_size > kMaxDenseBytes) {
      return Invalid(absl::StrCat("densified it would exceed ",
                                  kMaxDenseBytes >> 20,
                                  " MiB, more than Kiln allocates for one "
                                  "sparse constant"));
    }
  }
  const size_t k = s.traversal_order() ? s.traversal_order()->size() : 0;
  if (s.dim_metadata() == nullptr || s.dim_metadata()->size() != k) {
    return Invalid(absl::StrCat("dim_metadata has ",
                                s.dim_metadata() ? s.dim_metadata()->size() : 0,
                                " entries; traversal_order has ", k));
  }
  KILN_RETURN_IF_ERROR(ReadOrderAndBlocks(s, &out));
  KILN_RETURN_IF_ERROR(ReadLevels(s, &out));
  if (out.stored_values * element_size != value_bytes) {
    return Invalid(absl::StrCat("the layout stores ", out.stored_values,
                                " values (", out.stored_values * element_size,
                                " bytes) but the constant has ", value_bytes,
                                " bytes"));
  }
  return out;
}

void Densify(const SparseLayout& layout, size_t element_size,
             const uint8_t* values, uint8_t* dense) {
  std::memset(dense, 0, layout.dense_count * element_size);
  if (layout.dense_count == 0) return;
  Densifier d{layout, element_size, values, dense,
              std::vector<int32_t>(layout.levels.size(), 0)};
  d.Visit(0, 0);
}

}  // namespace kiln
