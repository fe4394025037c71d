// The ABI's option keys and enum values against the host's tables and the
// generated model schema, value by value. The defines are read from the
// public headers' text, so a define added without its table entry fails:
//   - every KILN_OPTION_<NAME> N: OptionKeyName(N) is "KILN_OPTION_<NAME>";
//   - every KILN_TYPE_*, KILN_PADDING_*, KILN_ACTIVATION_* equals the
//     schema's TensorType, Padding, ActivationFunctionType member of the
//     same name (the schema's enums are the ones files carry), and the
//     schema has no member the ABI lacks.
// (Op codes and names are checked against the TFLite schema by
// abi/tests/name_tables_test.py.)
#include <cstdint>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "kiln/kiln_extension.h"
#include "model/op_options.h"
#include "schema/kiln_model_generated.h"

namespace kiln {
namespace {

// {NAME: value} of every `#define <prefix><NAME> <int>` in the public
// header `file` (e.g. "kiln_extension.h").
std::map<std::string, int64_t> Defines(const std::string& file,
                                       const std::string& prefix) {
  std::ifstream in(std::string(KILN_ABI_INCLUDE_DIR) + "/kiln/" + file);
  EXPECT_TRUE(in.good()) << "cannot read " << file;
  std::stringstream text;
  text << in.rdbuf();
  const std::string content = text.str();
  const std::regex define("#define[ \\t]+" + prefix + "(\\w+)[ \\t]+(-?\\d+)");
  std::map<std::string, int64_t> found;
  for (auto it = std::sregex_iterator(content.begin(), content.end(), define);
       it != std::sregex_iterator(); ++it) {
    EXPECT_TRUE(found.emplace((*it)[1], std::stoll((*it)[2])).second)
        << prefix << (*it)[1] << " is defined twice";
  }
  return found;
}

// Compares the ABI's defines with a generated schema enum: same members,
// same values.
template <typename Enum, size_t N>
void ExpectSameEnum(const std::string& prefix,
                    const std::map<std::string, int64_t>& abi,
                    const Enum (&values)[N], const char* (*name_of)(Enum)) {
  std::map<std::string, int64_t> schema;
  for (const Enum e : values) schema[name_of(e)] = static_cast<int64_t>(e);
  for (const auto& [name, value] : abi) {
    const auto it = schema.find(name);
    if (it == schema.end()) {
      ADD_FAILURE() << prefix << name << " = " << value
                    << ": the schema has no " << name;
    } else {
      EXPECT_EQ(it->second, value) << prefix << name;
    }
  }
  for (const auto& [name, value] : schema) {
    EXPECT_EQ(abi.count(name), 1u)
        << "the schema has " << name << " = " << value << ", the ABI no "
        << prefix << name;
  }
}

TEST(AbiTablesTest, EveryOptionKeyHasItsName) {
  const auto keys = Defines("kiln_extension.h", "KILN_OPTION_");
  // The parse found the keys (append-only: the first and a late one).
  ASSERT_EQ(keys.count("FUSED_ACTIVATION"), 1u);
  ASSERT_EQ(keys.at("FUSED_ACTIVATION"), KILN_OPTION_FUSED_ACTIVATION);
  ASSERT_EQ(keys.at("POT_SCALE_INT16"), KILN_OPTION_POT_SCALE_INT16);
  std::map<int64_t, std::string> by_value;
  for (const auto& [name, value] : keys) {
    EXPECT_EQ(OptionKeyName(static_cast<uint32_t>(value)),
              "KILN_OPTION_" + name);
    const auto [it, fresh] = by_value.emplace(value, name);
    EXPECT_TRUE(fresh) << "KILN_OPTION_" << name << " and KILN_OPTION_"
                       << it->second << " are both " << value;
  }
}

TEST(AbiTablesTest, EnumValuesEqualTheModelSchema) {
  ExpectSameEnum("KILN_TYPE_", Defines("kiln_common.h", "KILN_TYPE_"),
                 fb::EnumValuesTensorType(), &fb::EnumNameTensorType);
  ExpectSameEnum("KILN_PADDING_", Defines("kiln_extension.h", "KILN_PADDING_"),
                 fb::EnumValuesPadding(), &fb::EnumNamePadding);
  ExpectSameEnum("KILN_ACTIVATION_",
                 Defines("kiln_extension.h", "KILN_ACTIVATION_"),
                 fb::EnumValuesActivationFunctionType(),
                 &fb::EnumNameActivationFunctionType);
}

}  // namespace
}  // namespace kiln
