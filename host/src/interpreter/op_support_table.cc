#include "interpreter/op_support_table.h"

#include <algorithm>

#include "kiln/kiln_builtin_ops.h"
#include "kiln/kiln_version.h"

namespace kiln {
namespace {

constexpr uint32_t k0_1_0 = KILN_MAKE_VERSION(0, 1, 0);
constexpr uint32_t k0_2_0 = KILN_MAKE_VERSION(0, 2, 0);
// Not released yet: the release main builds toward after 0.2.0.
constexpr uint32_t k0_3_0 = KILN_MAKE_VERSION(0, 3, 0);

}  // namespace

const std::vector<OpSupportEntry>& OpSupportTable() {
  // The host-intrinsic ops, then the in-tree CPU plugin's kernels.
  static const auto* table = new std::vector<OpSupportEntry>{
      // Host-intrinsic.
      {KILN_OP_WHILE, nullptr, 1, 1, k0_1_0},
      {KILN_OP_IF, nullptr, 1, 1, k0_1_0},
      {KILN_OP_CALL_ONCE, nullptr, 1, 1, k0_1_0},
      {KILN_OP_VAR_HANDLE, nullptr, 1, 1, k0_1_0},
      {KILN_OP_READ_VARIABLE, nullptr, 1, 1, k0_1_0},
      {KILN_OP_ASSIGN_VARIABLE, nullptr, 1, 1, k0_1_0},
      {KILN_OP_STABLEHLO_COMPOSITE, nullptr, 1, 1, k0_1_0},
  // CPU plugin (kiln_cpu).
#include "interpreter/op_support_table_cpu.inc"
  };
  return *table;
}

std::optional<uint32_t> FirstReleaseSupporting(int32_t builtin_code,
                                               const std::string& custom_name,
                                               int32_t version) {
  std::optional<uint32_t> best;
  for (const OpSupportEntry& e : OpSupportTable()) {
    if (e.builtin_code != builtin_code) continue;
    if (builtin_code == KILN_OP_CUSTOM &&
        (e.custom_name == nullptr || custom_name != e.custom_name)) {
      continue;
    }
    if (version < e.min_version || version > e.max_version) continue;
    if (!best || e.first_release < *best) best = e.first_release;
  }
  return best;
}

int32_t NewestSupportedVersion(int32_t builtin_code,
                               const std::string& custom_name) {
  int32_t newest = 0;
  for (const OpSupportEntry& e : OpSupportTable()) {
    if (e.builtin_code != builtin_code) continue;
    if (builtin_code == KILN_OP_CUSTOM &&
        (e.custom_name == nullptr || custom_name != e.custom_name)) {
      continue;
    }
    newest = std::max(newest, e.max_version);
  }
  return newest;
}

std::string ReleaseString(uint32_t release) {
  return std::to_string(KILN_VERSION_MAJOR(release)) + "." +
         std::to_string(KILN_VERSION_MINOR(release)) + "." +
         std::to_string(KILN_VERSION_PATCH(release));
}

}  // namespace kiln
