// The one table that maps builtin operator options between the model file
// (BuiltinOptions / BuiltinOptions2 tables) and Node options (KILN_OPTION_*
// keys for plugins, kHostOption* keys for the host). The reader and the
// model builder both go through it, so an op's options are described once.
//
// To support the options of another op: add one OpOptionsLayout entry in
// op_options.cc (and, for a new key, append it to kiln_extension.h).
//
// Thread-safety: the table is immutable; all functions are reentrant.
#ifndef KILN_HOST_MODEL_OP_OPTIONS_H_
#define KILN_HOST_MODEL_OP_OPTIONS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "flatbuffers/flatbuffers.h"
#include "runtime/graph.h"

namespace kiln {

// Wire type of one option field.
enum class OptionFieldType : uint8_t {
  kBool,         // bool, read as OptionValue kInt 0/1
  kInt8,         // byte (enums: padding, activation, tensor type, ...)
  kInt32,        // int
  kFloat,        // float
  kInt32Vector,  // [int]; set only when present in the file
  kString,       // string (host-private keys only); "" when absent
};

struct OptionField {
  uint32_t key;            // KILN_OPTION_* or kHostOption*
  uint16_t vtable_offset;  // the schema's VT_* constant of the field
  OptionFieldType type;
  double default_value;  // the schema default of scalar fields
};

struct OpOptionsLayout {
  int32_t builtin_code;
  // True when the options live in Operator.builtin_options_2.
  bool in_options_2;
  // BuiltinOptions (or BuiltinOptions2) union index of the options table.
  uint8_t union_type;
  const char* table_name;  // for messages, e.g. "Conv2DOptions"
  std::vector<OptionField> fields;
  // Non-zero: a [ubyte] field exposed as the node's custom options
  // (STABLEHLO_COMPOSITE's FlexBuffers composite_attributes).
  uint16_t bytes_as_custom_options = 0;
};

// The layout of `builtin_code`'s options, or null when Kiln maps none.
const OpOptionsLayout* FindOpOptionsLayout(int32_t builtin_code);

// Every layout (for tests and tools).
const std::vector<OpOptionsLayout>& AllOpOptionsLayouts();

// Sets `node`'s options from `table` (already verified as the layout's
// table type; null when the operator has no options table). Scalars absent
// from the file get the schema default; vectors are set only when present.
void ReadOpOptions(const OpOptionsLayout& layout,
                   const flatbuffers::Table* table, NodeDesc* node);

// Writes `options` as the layout's options table. Fails, naming the key, on
// a key the op does not have, a value of the wrong kind, or an integer out
// of the field's range. Keys not given are left at the schema default.
absl::StatusOr<flatbuffers::Offset<void>> WriteOpOptions(
    const OpOptionsLayout& layout,
    const std::vector<std::pair<uint32_t, OptionValue>>& options,
    flatbuffers::FlatBufferBuilder* fbb);

// "KILN_OPTION_STRIDE_W" style name of a key, for messages.
const char* OptionKeyName(uint32_t key);

}  // namespace kiln

#endif  // KILN_HOST_MODEL_OP_OPTIONS_H_
