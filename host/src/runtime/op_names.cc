// Builtin op names come from the ABI header's KilnBuiltinOpName, the one
// table plugins use too.
#include "kiln/kiln_builtin_ops.h"
#include "runtime/graph.h"

namespace kiln {

const char* BuiltinOpName(int32_t builtin_code) {
  return KilnBuiltinOpName(builtin_code);
}

}  // namespace kiln
