/* Prints the ABI's header-only name tables, one "<table> <value> <name>"
 * line per value, for name_tables_test.py to compare with the TFLite
 * schema: KilnBuiltinOpName over every op code 0..1023 (and -1), and
 * KilnTensorTypeName over every tensor type -1..127. */
#include <stdio.h>

#include "kiln/kiln_builtin_ops.h"
#include "kiln/kiln_common.h"

int main(void) {
  int32_t v;
  for (v = -1; v < 1024; ++v) printf("op %d %s\n", v, KilnBuiltinOpName(v));
  for (v = -1; v < 128; ++v) printf("type %d %s\n", v, KilnTensorTypeName(v));
  return 0;
}
