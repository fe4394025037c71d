// Which Kiln runtime release first ran each (op, version).
//
// The table lists every op version any Kiln release supports with its
// in-tree plugins or as a host-intrinsic op, so that a model that cannot be
// resolved can say whether upgrading Kiln would help. It is kept by hand:
// when a release adds an op version, append a row with that release.
// OpSupportTableTest checks the rows against what the CPU plugin registers
// and the host runs, both ways, and prints the rows a new kernel needs.
//
// Thread-safety: the table is immutable; all functions are reentrant.
#ifndef KILN_HOST_INTERPRETER_OP_SUPPORT_TABLE_H_
#define KILN_HOST_INTERPRETER_OP_SUPPORT_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

struct OpSupportEntry {
  int32_t builtin_code;
  const char* custom_name;  // null for builtin ops
  int32_t min_version;      // inclusive range
  int32_t max_version;
  uint32_t first_release;  // KILN_MAKE_VERSION of the Kiln runtime release
};

const std::vector<OpSupportEntry>& OpSupportTable();

// The first Kiln release that runs (op, version), or nullopt when no release
// does. `custom_name` is used only for KILN_OP_CUSTOM.
std::optional<uint32_t> FirstReleaseSupporting(int32_t builtin_code,
                                               const std::string& custom_name,
                                               int32_t version);

// Highest version of the op any release in the table supports (0 if none).
int32_t NewestSupportedVersion(int32_t builtin_code,
                               const std::string& custom_name);

// "0.1.0"
std::string ReleaseString(uint32_t release);

}  // namespace kiln

#endif  // KILN_HOST_INTERPRETER_OP_SUPPORT_TABLE_H_
